//! Persisted kernel parameters: owns [`SysctlFile`] (one `sysctl.d(5)` file) and the
//! precedence rules that turn every file on a node into the value each key gets at boot
//! ([`persisted`]), which rules R7 (bridge-nf-call not persistent) and R8 (ip_forward) need.
//! Also owns the drop-in directory resolution ([`drop_in_order`]) that `modules_load` reuses.
//! Pure: it never touches the network or the filesystem; the caller passes file contents and
//! symlink targets it read on the node.
//!
//! File format (sysctl.d(5), systemd `src/sysctl/sysctl.c`):
//! - empty lines and lines whose first non-blank character is `#` or `;` are ignored; there are
//!   no trailing comments (`net.ipv4.ip_forward = 1 # on` sets the value `1 # on`, which the
//!   kernel rejects);
//! - `key = value`, blanks around key and value ignored; a leading `-` means "ignore a failure
//!   to set this" (typical for `net.bridge.*`, absent until `br_netfilter` is loaded);
//! - "either `/` or `.` may be used as separators … If the first separator is a slash,
//!   remaining slashes and dots are left intact. If the first separator is a dot, dots and
//!   slashes are interchanged": keys here are normalised to the dot form that `sysctl -a`
//!   prints, so `net/ipv4/conf/eth0.100/rp_filter` becomes `net.ipv4.conf.eth0/100.rp_filter`;
//! - `-key` without `=` excludes that key from a glob (`net.ipv4.conf.*.rp_filter`); a glob
//!   key is expanded against the keys dnsfix looks at ([`persisted`]), not the kernel's list.

use std::collections::BTreeMap;

use serde::Serialize;

use super::kubelet_config::Located;
use super::node_facts::SYSCTLS;

/// Directories searched for `*.conf`, highest precedence first (sysctl.d(5) "CONFIGURATION
/// DIRECTORIES AND PRECEDENCE"; `/lib` is read on split-usr systems and by procps).
pub const SYSCTL_DIRS: [&str; 5] = [
    "/etc/sysctl.d",
    "/run/sysctl.d",
    "/usr/local/lib/sysctl.d",
    "/usr/lib/sysctl.d",
    "/lib/sysctl.d",
];

/// The legacy single file, applied after all drop-ins by procps `sysctl --system`.
pub const SYSCTL_CONF: &str = "/etc/sysctl.conf";

/// Symlink target that masks a drop-in ("a symlink to /dev/null in the configuration
/// directory in /etc/, with the same filename as the vendor configuration file").
pub const MASK_TARGET: &str = "/dev/null";

/// One parsed sysctl file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub struct SysctlFile {
    /// Assignments in file order (a key may repeat; the later line wins).
    pub entries: Vec<SysctlEntry>,
    /// `-key` lines without `=`: glob exclusions, normalised like keys.
    pub excluded: Vec<Located<String>>,
    /// `(line, trimmed text)` of lines that are neither blank, comments, assignments nor
    /// exclusions (no `=`, or an empty key). systemd logs and skips them; so does this parser.
    pub invalid: Vec<(usize, String)>,
}

/// One `key = value` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub struct SysctlEntry {
    /// Dot-form key, e.g. `net.bridge.bridge-nf-call-iptables`.
    pub key: String,
    /// The value with surrounding blanks removed, otherwise as written.
    pub value: String,
    /// 1-based line number.
    pub line: usize,
    /// The line started with `-`: systemd-sysctl does not fail if the key cannot be set.
    pub ignore_failure: bool,
}

/// Where the boot-time value of one key comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub struct PersistedValue {
    pub value: String,
    /// The path that was read, e.g. `/etc/sysctl.d/99-sysctl.conf` even when that is a link
    /// to `/etc/sysctl.conf`.
    pub path: String,
    /// 1-based line in that file.
    pub line: usize,
    /// The key that line assigns, where it is another name of the same kernel setting
    /// ([`SAME_SETTING`]: `net.ipv4.conf.all.forwarding` for `net.ipv4.ip_forward`), or a
    /// glob that matched that name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// Keys that are one kernel setting under two names: `(the name dnsfix reads, the other)`.
/// `net.ipv4.ip_forward` is the `all` devconf's forwarding value, the one
/// `net.ipv4.conf.all.forwarding` shows (torvalds/linux net/ipv4/devinet.c
/// `devinet_init_net`: `tbl[0].data = &all->data[IPV4_DEVCONF_FORWARDING - 1]`), and a
/// write to either runs `inet_forward_change`. So whichever of the two the boot applies
/// last decides: the DISA RHEL 8 and 9 STIGs (RHEL-08-040259, RHEL-09-253075) set
/// `net.ipv4.conf.all.forwarding = 0`, and a glob such as `net.ipv4.conf.*.forwarding`
/// sets it too.
pub const SAME_SETTING: &[(&str, &str)] =
    &[("net.ipv4.ip_forward", "net.ipv4.conf.all.forwarding")];

impl PersistedValue {
    /// The assignment as the file says it: `KEY = VALUE`, naming the key the line
    /// assigns where it is another name of `key` (and saying so).
    pub fn assignment(&self, key: &str) -> String {
        assignment(key, &self.value, self.key.as_deref())
    }
}

impl super::node_facts::Persisted {
    /// The assignment as the file says it ([`assignment`]).
    pub fn assignment(&self, key: &str) -> String {
        assignment(key, &self.value, self.key.as_deref())
    }
}

/// `KEY = VALUE` as a sysctl file assigns `key`: under `other`, where that is another name
/// of it (or a glob that matches it), or a key whose write sets it too ([`SET_BY`]), saying
/// so; a glob with the versions that expand it ([`GLOB_SINCE`]).
pub fn assignment(key: &str, value: &str, other: Option<&str>) -> String {
    let sets_too = |other: &str| {
        SET_BY
            .iter()
            .any(|(k, by)| *k == key && by.contains(&other))
    };
    let glob = |other: &str| {
        if is_glob(other) {
            format!("; {GLOB_SINCE}")
        } else {
            String::new()
        }
    };
    match other {
        Some(other) if sets_too(other) => format!(
            "{other} = {value} (which sets {key} to {value} too: the kernel copies a change of it there)"
        ),
        Some(other) if is_glob(other) => {
            let named = SAME_SETTING
                .iter()
                .find(|(mine, _)| *mine == key)
                .map_or_else(
                    || key.to_owned(),
                    |(_, theirs)| format!("{theirs}, the same kernel setting as {key}"),
                );
            format!(
                "{other} = {value} (a glob that matches {named}{})",
                glob(other)
            )
        }
        Some(other) => format!("{other} = {value} (the same kernel setting as {key})"),
        None => format!("{key} = {value}"),
    }
}

impl SysctlFile {
    /// Parses one sysctl.d / sysctl.conf file. Never fails: bad lines land in `invalid`.
    pub fn parse(text: &str) -> SysctlFile {
        let mut file = SysctlFile::default();
        for (index, raw) in text.split('\n').enumerate() {
            let line = index + 1;
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
                continue;
            }
            let (ignore_failure, body) = match trimmed.strip_prefix('-') {
                Some(rest) => (true, rest.trim_start()),
                None => (false, trimmed),
            };
            match body.split_once('=') {
                Some((key, value)) if !key.trim().is_empty() => {
                    file.entries.push(SysctlEntry {
                        key: normalize_key(key.trim()),
                        value: value.trim().to_string(),
                        line,
                        ignore_failure,
                    });
                }
                None if ignore_failure && !body.is_empty() => {
                    file.excluded.push(Located::new(normalize_key(body), line));
                }
                _ => file.invalid.push((line, trimmed.to_string())),
            }
        }
        file
    }

    /// The last assignment of `key` (given in either separator form) in this file.
    pub fn get(&self, key: &str) -> Option<&SysctlEntry> {
        let key = normalize_key(key);
        self.entries.iter().rev().find(|entry| entry.key == key)
    }
}

/// Dot form of a sysctl key (see the module doc): when the first separator is `/`, dots and
/// slashes are swapped; when it is `.`, the key is already in dot form. A leading `/` is
/// dropped first (`/net/ipv4/ip_forward`).
pub fn normalize_key(key: &str) -> String {
    let key = key.trim_start_matches('/');
    match key.find(['.', '/']) {
        Some(at) if key[at..].starts_with('/') => key
            .chars()
            .map(|c| match c {
                '/' => '.',
                '.' => '/',
                other => other,
            })
            .collect(),
        _ => key.to_string(),
    }
}

/// The value every key gets when the node boots, with its provenance.
///
/// `files` are `(path, content)` pairs for every regular file or symlink the caller found in
/// [`SYSCTL_DIRS`] plus [`SYSCTL_CONF`]; other paths are ignored. `aliases` are
/// `(path, canonical target)` pairs for those that are symlinks. Rules (sysctl.d(5)
/// "CONFIGURATION DIRECTORIES AND PRECEDENCE", procps `sysctl --system`):
/// 1. only `*.conf` files directly in the directories count, hidden files excepted;
/// 2. a file name in an earlier directory masks the same name in later ones, whatever its
///    content; a link to `/dev/null` masks and contributes nothing;
/// 3. surviving files are applied in lexicographic order of file NAME (not path), and a later
///    assignment overrides an earlier one;
/// 4. `/etc/sysctl.conf` is applied last, unless a surviving drop-in already is it (Debian 12,
///    Ubuntu and RHEL ship `/etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf`): it is not
///    counted twice, and the provenance is the path that was read in the drop-in pass. Not
///    on a node systemd boots (`systemd`): systemd-sysctl reads it only through such a link.
///
/// Rules 1-3 are systemd's: tests/it/sysctl_reference.rs compares the order with
/// `systemd-analyze cat-config sysctl.d` on every fixture tree. Rule 4 is procps's.
///
/// A glob key (`net.bridge.*`) sets each of the keys dnsfix looks at ([`SYSCTLS`]) that it
/// matches and that no file names, neither in an assignment nor in a `-key` exclusion; of
/// several globs, the last applied wins (systemd `src/sysctl/sysctl.c` `apply_all`: "Not
/// setting %s (explicit setting exists)", glob(3) over /proc/sys). systemd-sysctl keeps one
/// option per glob as written, as for a key: the same glob again with the same value stays
/// where it first was. Globs are expanded by systemd-sysctl from systemd 245 and by procps
/// `sysctl --system` from procps-ng 4.0.0 ([`GLOB_SINCE`]); an older one writes nothing for
/// them, which the files do not say: a value a glob gives is that of those versions.
///
/// `net.ipv4.conf.default.forwarding` is the value the kernel's `default` devconf holds
/// after the boot's writes ([`DEFAULT_FORWARDING`]), not merely its last line.
pub fn persisted(
    files: &[(String, &str)],
    aliases: &[(String, String)],
    systemd: bool,
) -> BTreeMap<String, PersistedValue> {
    let others = SAME_SETTING.iter().map(|(_, other)| *other);
    let keys: Vec<&str> = SYSCTLS.iter().copied().chain(others).collect();
    persisted_keys(files, aliases, systemd, &keys)
}

/// When systemd-sysctl and procps `sysctl --system` started expanding a glob key: before,
/// it names no file under /proc/sys, and nothing is written for it (systemd/systemd#14589,
/// released in 245, the version Cilium's docs name for its rp_filter glob; procps-ng
/// 6389deca, released in 4.0.0). RHEL 8 ships systemd 239 (redhat-plumbers/systemd-rhel8
/// sysctl.c writes each key as it is) and procps-ng 3.3.15; Debian 12 systemd 252 and
/// procps-ng 4.0.2.
pub const GLOB_SINCE: &str = "systemd-sysctl expands a glob from systemd 245, procps `sysctl --system` from procps-ng 4.0.0; an older one (RHEL 8's systemd 239 and procps-ng 3.3.15) sets nothing for it";

/// Whether a sysctl key, as a file writes it, is a glob.
pub fn is_glob(key: &str) -> bool {
    key.contains(['*', '?', '['])
}

/// `net.ipv4.conf.default.forwarding`: what an IPv4 interface created later starts with
/// (torvalds/linux net/ipv4/devinet.c `inetdev_init` copies the `default` devconf). A
/// write to `net.ipv4.ip_forward` or `net.ipv4.conf.all.forwarding` that changes it sets
/// `default` and every interface there is to the same value (`devinet_sysctl_forward` runs
/// `inet_forward_change` only where `*valp != val`); a write of `default` sets it alone.
/// So after `ip_forward = 1`, a later `default.forwarding = 0` leaves every interface made
/// after the boot (a CNI's cni0, the pods' veths) with forwarding off, and writing
/// `ip_forward = 1` again changes nothing.
pub const DEFAULT_FORWARDING: &str = "net.ipv4.conf.default.forwarding";

/// Keys another key's write sets too: `(key, the keys whose change of value sets it)`
/// ([`DEFAULT_FORWARDING`]).
pub const SET_BY: &[(&str, &[&str])] = &[(
    DEFAULT_FORWARDING,
    &["net.ipv4.ip_forward", "net.ipv4.conf.all.forwarding"],
)];

/// The forwarding keys of one family's `all` devconf, which a change of value also writes
/// to `default` ([`DEFAULT_FORWARDING`]).
fn sets_default(key: &str) -> bool {
    SET_BY.iter().any(|(_, by)| by.contains(&key))
}

/// One write of a forwarding key in the order the boot makes them: where, which key (as
/// the kernel names it), and the line.
type Write = ((usize, usize), String, PersistedValue);

/// Whether `key` is one of the forwarding keys whose writes decide [`DEFAULT_FORWARDING`].
fn forwarding_key(key: &str) -> bool {
    key == DEFAULT_FORWARDING || sets_default(key)
}

/// A glob line as the boot keeps it: as written, its pattern, the line, where it stands.
type GlobOption = (String, glob::Pattern, PersistedValue, (usize, usize));

/// The options the boot applies, read from the files in order ([`persisted`]).
#[derive(Default)]
struct Options {
    /// Each key a file names and the line that sets it.
    result: BTreeMap<String, PersistedValue>,
    /// Where each key's option stands in the order the boot applies them, (file, line):
    /// what decides between two names of one setting ([`SAME_SETTING`]).
    position: BTreeMap<String, (usize, usize)>,
    /// The writes of the forwarding keys, in the order they come ([`DEFAULT_FORWARDING`]).
    writes: Vec<Write>,
    globs: Vec<GlobOption>,
    /// `-key` lines: keys no glob sets.
    excluded: std::collections::BTreeSet<String>,
}

impl Options {
    fn read(files: &[(String, &str)], aliases: &[(String, String)], systemd: bool) -> Options {
        let mut options = Options::default();
        let applied = drop_in_order(files, aliases, &SYSCTL_DIRS, legacy(systemd));
        for (index, (path, content)) in applied.into_iter().enumerate() {
            options.file(index, path, content, systemd);
        }
        options
    }

    /// The lines of one file, the `index`th the boot applies.
    fn file(&mut self, index: usize, path: &str, content: &str, systemd: bool) {
        let file = SysctlFile::parse(content);
        for entry in file.entries {
            let at = (index, entry.line);
            let value = PersistedValue {
                value: entry.value,
                path: path.to_string(),
                line: entry.line,
                key: None,
            };
            match glob_pattern(&entry.key) {
                Some(pattern) => self.glob(entry.key, pattern, value, at, systemd),
                None => self.assign(entry.key, value, at, systemd),
            }
        }
        // Under systemd a `-key` line after an assignment of that key (or of that glob, as
        // written) takes its place (systemd-sysctl keeps one option per key, the later
        // line's, and sets none for a `-key`), and an assignment after it sets it again:
        // lines in file order. procps writes every assignment (`-key` only filters globs).
        if systemd {
            let earlier = |v: &PersistedValue, line: usize| v.path != *path || v.line < line;
            for excluded in &file.excluded {
                let (line, key) = (excluded.line, &excluded.value);
                if self.result.get(key).is_some_and(|v| earlier(v, line)) {
                    self.result.remove(key);
                    self.position.remove(key);
                    self.writes
                        .retain(|(_, k, v)| k != key || !earlier(v, line));
                }
                self.globs
                    .retain(|(glob, _, v, _)| glob != key || !earlier(v, line));
            }
        }
        self.excluded
            .extend(file.excluded.into_iter().map(|l| l.value));
    }

    /// A glob line. systemd-sysctl keeps a glob's first place for the same value, and moves
    /// it for another, as it does a key's; procps applies each line.
    fn glob(
        &mut self,
        key: String,
        pattern: glob::Pattern,
        value: PersistedValue,
        at: (usize, usize),
        systemd: bool,
    ) {
        if systemd {
            match self.globs.iter().position(|(g, ..)| *g == key) {
                Some(i) if self.globs[i].2.value == value.value => return,
                Some(i) => {
                    self.globs.remove(i);
                }
                None => {}
            }
        }
        self.globs.push((key, pattern, value, at));
    }

    /// A line of one key. systemd-sysctl moves an option to the end only where the value
    /// changes ("Overwriting earlier assignment"); the same value again leaves it where it
    /// was. procps applies every line as it comes.
    fn assign(&mut self, key: String, value: PersistedValue, at: (usize, usize), systemd: bool) {
        let same = systemd
            && self
                .result
                .get(&key)
                .is_some_and(|v: &PersistedValue| v.value == value.value);
        if !same {
            self.position.insert(key.clone(), at);
            if forwarding_key(&key) {
                if systemd {
                    self.writes.retain(|(_, k, _)| *k != key);
                }
                self.writes.push((at, key.clone(), value.clone()));
            }
        }
        self.result.insert(key, value);
    }

    /// The globs that set `key`, one no file names, in the order they apply (the last
    /// decides); the writes of a forwarding key among them.
    fn expand(&mut self, key: &str, keep: bool) {
        if self.result.contains_key(key) || self.excluded.contains(key) {
            return;
        }
        let path = slash_form(key);
        let options = glob::MatchOptions {
            case_sensitive: true,
            require_literal_separator: true,
            require_literal_leading_dot: true,
        };
        let matching: Vec<GlobOption> = self
            .globs
            .iter()
            .filter(|(_, pattern, ..)| pattern.matches_with(&path, options))
            .cloned()
            .collect();
        if forwarding_key(key) {
            for (glob, _, value, at) in &matching {
                let value = PersistedValue {
                    key: Some(glob.clone()),
                    ..value.clone()
                };
                self.writes.push((*at, key.to_owned(), value));
            }
        }
        if !keep {
            return;
        }
        if let Some((glob, _, value, at)) = matching.last() {
            let mut value = value.clone();
            // A glob that sets the other name of a setting, or a key dnsfix does not
            // gather (an interface's), is named as written.
            let named = SAME_SETTING.iter().any(|(_, other)| *other == key)
                || key == DEFAULT_FORWARDING
                || !SYSCTLS.contains(&key);
            if named {
                value.key = Some(glob.clone());
            }
            self.position.insert(key.to_owned(), *at);
            self.result.insert(key.to_owned(), value);
        }
    }
}

/// [`persisted`] for `keys`: the keys a glob is expanded for (any key a file names is
/// there whatever `keys` says).
fn persisted_keys(
    files: &[(String, &str)],
    aliases: &[(String, String)],
    systemd: bool,
    keys: &[&str],
) -> BTreeMap<String, PersistedValue> {
    let mut options = Options::read(files, aliases, systemd);
    let trio = std::iter::once(DEFAULT_FORWARDING)
        .chain(SET_BY.iter().flat_map(|(_, by)| by.iter().copied()));
    for key in keys.iter().copied() {
        options.expand(key, true);
    }
    for key in trio.filter(|k| !keys.contains(k)) {
        options.expand(key, false);
    }
    let Options {
        mut result,
        position,
        writes,
        ..
    } = options;
    for (key, other) in SAME_SETTING {
        let later = match (position.get(*key), position.get(*other)) {
            (Some(mine), Some(theirs)) => theirs > mine,
            (None, Some(_)) => true,
            _ => false,
        };
        if let Some(value) = result.get(*other).filter(|_| later) {
            let key_as_assigned = value.key.clone().unwrap_or_else(|| (*other).to_owned());
            let value = PersistedValue {
                key: Some(key_as_assigned),
                ..value.clone()
            };
            result.insert((*key).to_owned(), value);
        }
    }
    if keys.contains(&DEFAULT_FORWARDING) {
        match default_forwarding(writes) {
            Some(value) => result.insert(DEFAULT_FORWARDING.to_owned(), value),
            None => result.remove(DEFAULT_FORWARDING),
        };
    }
    result
}

/// The write that leaves [`DEFAULT_FORWARDING`] as the boot ends, from the kernel's values
/// at boot (forwarding off: `ipv4_devconf` and `ipv4_devconf_dflt` hold 0): the last write
/// of `default` itself, or the last write of the `all` devconf's forwarding that changed
/// it (named as the key it assigns). `None` where nothing writes it.
fn default_forwarding(mut writes: Vec<Write>) -> Option<PersistedValue> {
    writes.sort_by_key(|(at, ..)| *at);
    let mut all = "0".to_owned();
    let mut decided: Option<PersistedValue> = None;
    for (_, key, value) in writes {
        let v = normalize_value(&value.value);
        if key == DEFAULT_FORWARDING {
            decided = Some(value);
        } else if v != all {
            all = v;
            let assigned = value.key.clone().unwrap_or(key);
            decided = Some(PersistedValue {
                key: Some(assigned),
                ..value
            });
        }
    }
    decided
}

/// What systemd's udev rule gives `key`, a setting of one network interface, when the
/// interface appears (99-systemd.rules: `ACTION=="add", SUBSYSTEM=="net", KERNEL!="lo",
/// RUN+="systemd-sysctl --prefix=/net/ipv4/conf/$name ..."`): the files' line for that
/// key, else the last glob that matches it, wherever either stands in the boot's order
/// (`--prefix` keeps only the keys under it, and every glob: sysctl.c `parse_line`,
/// `apply_glob_option_with_prefix`). `None` where no line sets it: the interface keeps what
/// it started with ([`DEFAULT_FORWARDING`]). A glob counts from systemd 245 ([`GLOB_SINCE`]).
pub fn on_new_interface(
    files: &[(String, String, Option<String>)],
    key: &str,
) -> Option<PersistedValue> {
    let (inputs, aliases) = split(files);
    persisted_keys(&inputs, &aliases, true, &[key]).remove(key)
}

/// The /proc/sys path pattern of a key with glob characters, as systemd-sysctl matches it.
fn glob_pattern(key: &str) -> Option<glob::Pattern> {
    if !key.contains(['*', '?', '[']) {
        return None;
    }
    glob::Pattern::new(&slash_form(key)).ok()
}

/// A dot-form key as the path under /proc/sys (dots and slashes swapped back).
fn slash_form(key: &str) -> String {
    key.chars()
        .map(|c| match c {
            '.' => '/',
            '/' => '.',
            other => other,
        })
        .collect()
}

/// [`persisted`] over `(path, content, symlink canonical target)` triples, the shape the
/// gathered (or planned) sysctl files come in.
pub fn persisted_files(
    files: &[(String, String, Option<String>)],
    systemd: bool,
) -> BTreeMap<String, PersistedValue> {
    let (inputs, aliases) = split(files);
    persisted(&inputs, &aliases, systemd)
}

/// `(path, content)` of each file.
type Contents<'a> = Vec<(String, &'a str)>;
/// `(link, canonical target)` of each symlink.
type Aliases = Vec<(String, String)>;

/// `(path, content, canonical target of a link)` triples as [`drop_in_order`] takes them:
/// `(path, content)` pairs and `(link, target)` aliases.
fn split(files: &[(String, String, Option<String>)]) -> (Contents<'_>, Aliases) {
    let inputs = files
        .iter()
        .map(|(p, t, _)| (p.clone(), t.as_str()))
        .collect();
    let aliases = files
        .iter()
        .filter_map(|(p, _, c)| c.clone().map(|c| (p.clone(), c)))
        .collect();
    (inputs, aliases)
}

/// Whether the node booted with systemd: `/run/systemd/system` is a directory (what
/// sd_booted(3) checks). Then systemd-sysctl applies the files at boot, and it reads
/// /etc/sysctl.conf only through a link in a sysctl.d directory: Debian 12, Ubuntu and
/// RHEL ship `/etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf`; Debian 13 ships neither the
/// file nor the link (procps 2:4.0.4-9 removes /etc/sysctl.conf on upgrade). Otherwise
/// (OpenRC's sysctl service, procps `sysctl --system`, or not known) /etc/sysctl.conf is
/// applied last.
pub fn booted_by_systemd(raw: &super::raw::RawFacts) -> bool {
    raw.get("/run/systemd/system")
        .is_some_and(|f| f.state == super::raw::FileState::Directory)
}

/// The legacy file applied after the drop-ins: none where systemd boots the node.
fn legacy(systemd: bool) -> Option<&'static str> {
    (!systemd).then_some(SYSCTL_CONF)
}

/// A node's sysctl files in the order its boot applies them, `(path, content)`: what
/// [`persisted`] reads (tests/it/sysctl_reference.rs compares it with systemd's own).
pub fn applied_files(raw: &super::raw::RawFacts) -> Vec<(String, String)> {
    let files = raw.config_files(&SYSCTL_DIRS, SYSCTL_CONF);
    let (inputs, aliases) = split(&files);
    drop_in_order(
        &inputs,
        &aliases,
        &SYSCTL_DIRS,
        legacy(booted_by_systemd(raw)),
    )
    .into_iter()
    .map(|(path, content)| (path.to_owned(), content.to_owned()))
    .collect()
}

/// The `*.conf` drop-ins of `dirs` (earliest first) a systemd `conf_files_list` scan reads, in
/// its order, `(path, content)`: a name in an earlier directory hides the same name in later
/// ones, a link to /dev/null masks it ([`drop_in_order`]). systemd's config parser reads
/// every `*.conf.d` (resolved.conf.d, ...) so (conf-parser.c `config_parse_many`).
pub fn conf_d_files(raw: &super::raw::RawFacts, dirs: &[&str]) -> Vec<(String, String)> {
    let files = raw.config_files(dirs, "");
    let (inputs, aliases) = split(&files);
    drop_in_order(&inputs, &aliases, dirs, None)
        .into_iter()
        .map(|(path, content)| (path.to_owned(), content.to_owned()))
        .collect()
}

/// The files a systemd `conf_files_list` scan of `dirs` would apply, in order, followed by
/// `legacy` (a single file read after the drop-ins, e.g. `/etc/sysctl.conf`; none as systemd
/// reads them) unless one of the applied drop-ins is a link to it. Returns `(path,
/// content)`; see [`persisted`] for the rules and the meaning of `aliases`. A path listed in `aliases` but absent from `files` borrows the
/// content of its target, so a caller that only read regular files still gets the link's
/// position in the order right.
pub fn drop_in_order<'a>(
    files: &'a [(String, &'a str)],
    aliases: &'a [(String, String)],
    dirs: &[&str],
    legacy: Option<&str>,
) -> Vec<(&'a str, &'a str)> {
    let target_of = |path: &str| -> Option<&'a str> {
        aliases
            .iter()
            .find(|(alias, _)| alias == path)
            .map(|(_, target)| target.as_str())
    };
    let content_of = |path: &str| -> Option<&'a str> {
        files
            .iter()
            .find(|(file, _)| file == path)
            .map(|(_, content)| *content)
    };

    // Every known path with its content; a link without a readable target is skipped.
    let mut candidates: Vec<(&'a str, &'a str)> = Vec::new();
    let known = files
        .iter()
        .map(|(path, content)| (path.as_str(), Some(*content)))
        .chain(aliases.iter().map(|(path, target)| {
            let content = if target == MASK_TARGET {
                Some("")
            } else {
                content_of(target)
            };
            (path.as_str(), content)
        }));
    for (path, content) in known {
        if let Some(content) = content
            && !candidates.iter().any(|(seen, _)| *seen == path)
        {
            candidates.push((path, content));
        }
    }

    // Rule 2: per file name, the candidate from the earliest directory wins. A name is its
    // bytes (one not UTF-8 is escaped in the path).
    let mut winners: BTreeMap<std::borrow::Cow<'a, [u8]>, (usize, &'a str, &'a str)> =
        BTreeMap::new();
    for (path, content) in &candidates {
        let Some((dir, name)) = path.rsplit_once('/') else {
            continue;
        };
        let dir = dir.trim_end_matches('/');
        let Some(rank) = dirs.iter().position(|d| *d == dir) else {
            continue;
        };
        if !name.ends_with(".conf") || name.starts_with('.') {
            continue;
        }
        let name = crate::node_script::name_bytes(name);
        let better = winners.get(&name).is_none_or(|(best, _, _)| rank < *best);
        if better {
            winners.insert(name, (rank, path, content));
        }
    }

    // Rule 3: BTreeMap iterates names in byte order, which is systemd's strcmp order.
    let mut ordered: Vec<(&'a str, &'a str)> = Vec::new();
    let mut legacy_seen = false;
    for (_, path, content) in winners.into_values() {
        match target_of(path) {
            Some(MASK_TARGET) => continue,
            Some(target) if Some(target) == legacy => legacy_seen = true,
            _ => {}
        }
        ordered.push((path, content));
    }
    if !legacy_seen
        && let Some(legacy) = legacy
        && let Some((path, content)) = candidates.iter().find(|(path, _)| *path == legacy)
        && target_of(path) != Some(MASK_TARGET)
    {
        ordered.push((path, content));
    }
    ordered
}

/// sysctl values compare by their words (`1` and ` 1`, `4096 87380` and `4096\t87380`),
/// as the kernel reads them and the apply script compares them.
pub fn normalize_value(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name that is not UTF-8 sorts by its bytes, as systemd's strcmp does:
    /// `99-\xfe.conf` (escaped in the path) after `99-zz.conf`, so its value wins, and
    /// beside `99-\xff.conf`, not in its place.
    #[test]
    fn a_name_that_is_not_utf8_sorts_by_its_bytes() {
        let files = [
            file("/etc/sysctl.d/99-\\xfe.conf", "net.ipv4.ip_forward = 0\n"),
            file("/etc/sysctl.d/99-\\xff.conf", "kernel.sysrq = 0\n"),
            file("/etc/sysctl.d/99-zz.conf", "net.ipv4.ip_forward = 1\n"),
            file(
                "/usr/lib/sysctl.d/99-\\xfe.conf",
                "net.ipv4.ip_forward = 1\n",
            ),
        ];
        let order: Vec<_> = drop_in_order(&files, &[], &SYSCTL_DIRS, None)
            .into_iter()
            .map(|(path, _)| path)
            .collect();
        assert_eq!(
            order,
            [
                "/etc/sysctl.d/99-zz.conf",
                "/etc/sysctl.d/99-\\xfe.conf",
                "/etc/sysctl.d/99-\\xff.conf"
            ]
        );
        let map = persisted(&files, &[], true);
        let forward = map.get("net.ipv4.ip_forward").expect("persisted");
        assert_eq!(
            (forward.value.as_str(), forward.path.as_str()),
            ("0", "/etc/sysctl.d/99-\\xfe.conf")
        );
    }

    fn file(path: &str, content: &'static str) -> (String, &'static str) {
        (path.to_string(), content)
    }

    fn alias(path: &str, target: &str) -> (String, String) {
        (path.to_string(), target.to_string())
    }

    /// What Kubespray writes to `sysctl_file_path` (research A4), here /etc/sysctl.conf.
    const KUBESPRAY_SYSCTL: &str = "\
# /etc/sysctl.conf - Configuration file for setting system variables
#net.ipv4.ip_forward=1
net.ipv4.ip_forward=1
fs.inotify.max_user_instances=8192
net.bridge.bridge-nf-call-iptables=1
net.bridge.bridge-nf-call-arptables=1
net.bridge.bridge-nf-call-ip6tables=1
";

    #[test]
    fn parse_kubernetes_docs_file() {
        // /etc/sysctl.d/k8s.conf from the kubernetes.io container-runtimes page.
        let text = "# sysctl params required by setup, params persist across reboots\n\
                    net.bridge.bridge-nf-call-iptables  = 1\n\
                    net.bridge.bridge-nf-call-ip6tables = 1\n\
                    net.ipv4.ip_forward                 = 1\n";
        let parsed = SysctlFile::parse(text);
        assert_eq!(parsed.entries.len(), 3);
        assert_eq!(
            parsed.entries[0],
            SysctlEntry {
                key: "net.bridge.bridge-nf-call-iptables".into(),
                value: "1".into(),
                line: 2,
                ignore_failure: false
            }
        );
        assert!(parsed.invalid.is_empty());
        assert_eq!(parsed.get("net/ipv4/ip_forward").map(|e| e.line), Some(4));
    }

    #[test]
    fn separators_are_normalised_to_dot_form() {
        assert_eq!(normalize_key("net/ipv4/ip_forward"), "net.ipv4.ip_forward");
        assert_eq!(
            normalize_key("net/ipv4/conf/enp3s0.200/forwarding"),
            "net.ipv4.conf.enp3s0/200.forwarding"
        );
        assert_eq!(
            normalize_key("net.ipv4.conf.enp3s0/200.forwarding"),
            "net.ipv4.conf.enp3s0/200.forwarding"
        );
        assert_eq!(normalize_key("/net/ipv4/ip_forward"), "net.ipv4.ip_forward");
        assert_eq!(normalize_key("kernel"), "kernel");
    }

    #[test]
    fn ignore_failure_exclusions_comments_and_invalid_lines() {
        let text = "; comment\n  # indented comment\n\
                    -net.bridge.bridge-nf-call-iptables = 1\n\
                    - net/bridge/bridge-nf-call-ip6tables=1\n\
                    net.ipv4.conf.*.rp_filter = 2\n\
                    -net.ipv4.conf.all.rp_filter\n\
                    net.ipv4.ip_forward = 1 # trailing text is part of the value\n\
                    this line has no equals sign\n\
                    = 5\n\
                    -\n\
                    kernel.domainname=\n";
        let parsed = SysctlFile::parse(text);
        let entries: Vec<_> = parsed
            .entries
            .iter()
            .map(|e| (e.key.as_str(), e.value.as_str(), e.line, e.ignore_failure))
            .collect();
        assert_eq!(
            entries,
            [
                ("net.bridge.bridge-nf-call-iptables", "1", 3, true),
                ("net.bridge.bridge-nf-call-ip6tables", "1", 4, true),
                ("net.ipv4.conf.*.rp_filter", "2", 5, false),
                (
                    "net.ipv4.ip_forward",
                    "1 # trailing text is part of the value",
                    7,
                    false
                ),
                ("kernel.domainname", "", 11, false),
            ]
        );
        assert_eq!(
            parsed.excluded,
            vec![Located::new("net.ipv4.conf.all.rp_filter".to_string(), 6)]
        );
        let invalid: Vec<_> = parsed.invalid.iter().map(|(line, _)| *line).collect();
        assert_eq!(invalid, [8, 9, 10]);
    }

    #[test]
    fn duplicate_keys_last_wins_crlf_and_no_trailing_newline() {
        let parsed = SysctlFile::parse("net.ipv4.ip_forward=0\r\nnet.ipv4.ip_forward = 1");
        assert_eq!(parsed.entries.len(), 2);
        assert_eq!(
            parsed.get("net.ipv4.ip_forward").map(|e| e.value.as_str()),
            Some("1")
        );
        assert_eq!(parsed.entries[0].value, "0");
    }

    #[test]
    fn empty_file() {
        assert_eq!(SysctlFile::parse(""), SysctlFile::default());
    }

    #[test]
    fn huge_line_is_kept() {
        let long = format!("kernel.x = {}\n", "9".repeat(1_000_000));
        assert_eq!(SysctlFile::parse(&long).entries[0].value.len(), 1_000_000);
    }

    #[test]
    fn debian_symlink_is_not_counted_twice() {
        // Debian: /etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf; Ubuntu also ships
        // /usr/lib/sysctl.d/50-default.conf and /etc/sysctl.d/10-network-security.conf.
        let files = [
            file(SYSCTL_CONF, KUBESPRAY_SYSCTL),
            file("/etc/sysctl.d/99-sysctl.conf", KUBESPRAY_SYSCTL),
            file(
                "/etc/sysctl.d/10-network-security.conf",
                "net.ipv4.conf.default.rp_filter=2\n",
            ),
            file(
                "/usr/lib/sysctl.d/50-default.conf",
                "net.ipv4.ip_forward = 0\n",
            ),
        ];
        let aliases = [alias("/etc/sysctl.d/99-sysctl.conf", SYSCTL_CONF)];
        let order: Vec<_> = drop_in_order(&files, &aliases, &SYSCTL_DIRS, Some(SYSCTL_CONF))
            .into_iter()
            .map(|(path, _)| path)
            .collect();
        assert_eq!(
            order,
            [
                "/etc/sysctl.d/10-network-security.conf",
                "/usr/lib/sysctl.d/50-default.conf",
                "/etc/sysctl.d/99-sysctl.conf"
            ]
        );
        let map = persisted(&files, &aliases, false);
        assert_eq!(
            map.get("net.ipv4.ip_forward"),
            Some(&PersistedValue {
                value: "1".into(),
                path: "/etc/sysctl.d/99-sysctl.conf".into(),
                line: 3,
                key: None
            })
        );
        assert_eq!(
            map.get("net.ipv4.conf.default.rp_filter")
                .map(|v| v.path.as_str()),
            Some("/etc/sysctl.d/10-network-security.conf")
        );
    }

    /// `net.ipv4.conf.all.forwarding` is `net.ipv4.ip_forward` under another name: the
    /// one of the two the boot applies last decides. The DISA RHEL 8 STIG's line
    /// (CMSgov/redhat-enterprise-linux-8-stig-baseline controls/SV-250317.rb) in
    /// 99-sysctl.conf, after the older container-runtimes page's 99-kubernetes-cri.conf.
    #[test]
    fn the_other_name_of_ip_forward_applied_last_decides() {
        let stig = "net.ipv4.conf.all.forwarding = 0\n";
        let cri =
            "net.bridge.bridge-nf-call-iptables  = 1\nnet.ipv4.ip_forward                 = 1\n";
        let files = [
            file("/etc/sysctl.d/99-kubernetes-cri.conf", cri),
            file("/etc/sysctl.d/99-sysctl.conf", stig),
        ];
        for systemd in [true, false] {
            let map = persisted(&files, &[], systemd);
            let v = map.get("net.ipv4.ip_forward").expect("set");
            assert_eq!(
                (v.value.as_str(), v.path.as_str(), v.line),
                ("0", "/etc/sysctl.d/99-sysctl.conf", 1)
            );
            assert_eq!(
                v.assignment("net.ipv4.ip_forward"),
                "net.ipv4.conf.all.forwarding = 0 (the same kernel setting as net.ipv4.ip_forward)"
            );
        }
        // Applied first, it is undone by ip_forward after it (kubeadm's k8s.conf sorts
        // after every 99-*.conf).
        let files = [
            file("/etc/sysctl.d/99-sysctl.conf", stig),
            file("/etc/sysctl.d/k8s.conf", "net.ipv4.ip_forward = 1\n"),
        ];
        let map = persisted(&files, &[], true);
        let v = map.get("net.ipv4.ip_forward").expect("set");
        assert_eq!((v.value.as_str(), v.key.as_deref()), ("1", None));
        // A glob that matches it counts as it, and is named as written.
        let files = [
            file("/etc/sysctl.d/50-k8s.conf", "net.ipv4.ip_forward = 1\n"),
            file(
                "/etc/sysctl.d/90-router-off.conf",
                "net.ipv4.conf.*.forwarding = 0\n",
            ),
        ];
        let map = persisted(&files, &[], true);
        let v = map.get("net.ipv4.ip_forward").expect("set");
        assert_eq!(
            (v.value.as_str(), v.key.as_deref()),
            ("0", Some("net.ipv4.conf.*.forwarding"))
        );
        // systemd-sysctl leaves an option where it was when a later line sets the same
        // value again ("Overwriting earlier assignment" only for another value): the
        // second ip_forward = 1 does not move it after the STIG line, so 0 wins; procps
        // applies every line in order, so 1 does.
        let files = [
            file("/etc/sysctl.d/10-forward.conf", "net.ipv4.ip_forward = 1\n"),
            file("/etc/sysctl.d/50-stig.conf", stig),
            file("/etc/sysctl.d/90-forward.conf", "net.ipv4.ip_forward = 1\n"),
        ];
        let at = |systemd| {
            let map = persisted(&files, &[], systemd);
            map.get("net.ipv4.ip_forward").map(|v| v.value.clone())
        };
        assert_eq!(at(true).as_deref(), Some("0"));
        assert_eq!(at(false).as_deref(), Some("1"));
    }

    #[test]
    fn alias_without_content_borrows_its_target() {
        let files = [
            file(SYSCTL_CONF, "net.ipv4.ip_forward=1\n"),
            file("/usr/lib/sysctl.d/99-zz.conf", "net.ipv4.ip_forward=0\n"),
        ];
        let aliases = [alias("/etc/sysctl.d/99-sysctl.conf", SYSCTL_CONF)];
        // 99-sysctl.conf sorts before 99-zz.conf, so the vendor file wins.
        let map = persisted(&files, &aliases, false);
        assert_eq!(
            map.get("net.ipv4.ip_forward"),
            Some(&PersistedValue {
                value: "0".into(),
                path: "/usr/lib/sysctl.d/99-zz.conf".into(),
                line: 1,
                key: None
            })
        );
    }

    #[test]
    fn sysctl_conf_applies_last_without_the_link() {
        let files = [
            file(SYSCTL_CONF, "net.ipv4.ip_forward=1\n"),
            file("/etc/sysctl.d/zz-late.conf", "net.ipv4.ip_forward=0\n"),
        ];
        let map = persisted(&files, &[], false);
        assert_eq!(
            map.get("net.ipv4.ip_forward")
                .map(|v| (v.value.as_str(), v.path.as_str())),
            Some(("1", SYSCTL_CONF))
        );
    }

    #[test]
    fn earlier_directory_masks_same_name_and_order_is_by_name() {
        let files = [
            file(
                "/usr/lib/sysctl.d/50-k8s.conf",
                "net.ipv4.ip_forward=1\nvm.x=1\n",
            ),
            file("/etc/sysctl.d/50-k8s.conf", "vm.y=2\n"),
            file(
                "/run/sysctl.d/40-early.conf",
                "net.ipv4.ip_forward=0\nvm.x=0\n",
            ),
            file("/usr/lib/sysctl.d/60-later.conf", "vm.x=3\n"),
        ];
        let map = persisted(&files, &[], false);
        // The /usr/lib 50-k8s.conf is masked by /etc's, so ip_forward stays 0 from 40-early.
        assert_eq!(
            map.get("net.ipv4.ip_forward").map(|v| v.path.as_str()),
            Some("/run/sysctl.d/40-early.conf")
        );
        assert_eq!(
            map.get("vm.x").map(|v| (v.value.as_str(), v.path.as_str())),
            Some(("3", "/usr/lib/sysctl.d/60-later.conf"))
        );
        assert_eq!(map.get("vm.y").map(|v| v.line), Some(1));
    }

    /// systemd-sysctl keeps one option per glob as written, as per key: the same glob again
    /// with the same value stays in its first place (sysctl.c `parse_line`: `if
    /// (streq_ptr(value, existing->value)) ... return 0`), so ip_forward = 1 after it
    /// decides; procps applies each line, the last glob too. tests/it/sysctl_reference.rs
    /// runs systemd-sysctl on this.
    #[test]
    fn a_glob_again_with_the_same_value_keeps_its_first_place() {
        let glob = "net.ipv4.conf.*.forwarding = 0\n";
        let files = [
            file("/etc/sysctl.d/10-router-off.conf", glob),
            file("/etc/sysctl.d/50-k8s.conf", "net.ipv4.ip_forward = 1\n"),
            file("/etc/sysctl.d/90-router-off.conf", glob),
        ];
        let at = |systemd| {
            let map = persisted(&files, &[], systemd);
            map.get("net.ipv4.ip_forward")
                .map(|v| (v.value.clone(), v.path.clone()))
        };
        assert_eq!(
            at(true),
            Some(("1".into(), "/etc/sysctl.d/50-k8s.conf".into()))
        );
        assert_eq!(
            at(false),
            Some(("0".into(), "/etc/sysctl.d/90-router-off.conf".into()))
        );
        // Another value moves it to its last line, under systemd too.
        let files = [
            file("/etc/sysctl.d/10-router-off.conf", glob),
            file("/etc/sysctl.d/50-k8s.conf", "net.ipv4.ip_forward = 1\n"),
            file(
                "/etc/sysctl.d/90-router-off.conf",
                "net.ipv4.conf.*.forwarding = 2\nnet.ipv4.conf.*.forwarding = 0\n",
            ),
        ];
        let map = persisted(&files, &[], true);
        let v = map.get("net.ipv4.ip_forward").expect("set");
        assert_eq!((v.value.as_str(), v.line), ("0", 2));
    }

    /// `net.ipv4.conf.default.forwarding` is what the kernel holds after the boot's writes:
    /// a change of `ip_forward` (or `all.forwarding`) sets it too, a write of the same value
    /// changes nothing (devinet.c `devinet_sysctl_forward`). tests/it/sysctl_reference.rs
    /// runs systemd-sysctl on these in a network namespace of its own.
    #[test]
    fn default_forwarding_is_what_the_kernel_holds_after_the_boot() {
        let default = |files: &[(String, &'static str)], systemd| {
            persisted(files, &[], systemd)
                .get(DEFAULT_FORWARDING)
                .map(|v| (v.value.clone(), v.path.clone(), v.key.clone()))
        };
        let k8s = file("/etc/sysctl.d/k8s.conf", "net.ipv4.ip_forward = 1\n");
        let off = "net.ipv4.conf.default.forwarding = 0\n";
        // After the line that turns forwarding on, it stays off.
        let files = [k8s.clone(), file("/etc/sysctl.d/zz-hardening.conf", off)];
        for systemd in [true, false] {
            assert_eq!(
                default(&files, systemd),
                Some(("0".into(), "/etc/sysctl.d/zz-hardening.conf".into(), None))
            );
        }
        // Before it, ip_forward's change sets it to 1, and is named.
        let files = [file("/etc/sysctl.d/10-hardening.conf", off), k8s.clone()];
        let v = persisted(&files, &[], true);
        let v = v.get(DEFAULT_FORWARDING).expect("set");
        assert_eq!(
            (v.value.as_str(), v.path.as_str(), v.key.as_deref()),
            ("1", "/etc/sysctl.d/k8s.conf", Some("net.ipv4.ip_forward"))
        );
        assert_eq!(
            v.assignment(DEFAULT_FORWARDING),
            "net.ipv4.ip_forward = 1 (which sets net.ipv4.conf.default.forwarding to 1 too: the kernel copies a change of it there)"
        );
        // A second ip_forward = 1 after it changes nothing: procps writes it, the kernel
        // does not copy an unchanged value; systemd keeps ip_forward in its first place.
        // all.forwarding = 1 after it is the same unchanged value.
        for last in [
            "net.ipv4.ip_forward = 1\n",
            "net.ipv4.conf.all.forwarding = 1\n",
        ] {
            let files = [
                file("/etc/sysctl.d/10-k8s.conf", "net.ipv4.ip_forward = 1\n"),
                file("/etc/sysctl.d/50-hardening.conf", off),
                file("/etc/sysctl.d/90-forward.conf", last),
            ];
            for systemd in [true, false] {
                assert_eq!(
                    default(&files, systemd).map(|(v, p, _)| (v, p)),
                    Some(("0".into(), "/etc/sysctl.d/50-hardening.conf".into())),
                    "{last} systemd: {systemd}"
                );
            }
        }
        // A glob of every interface's forwarding after ip_forward = 1 sets it, named.
        let files = [
            k8s.clone(),
            file(
                "/etc/sysctl.d/zz-router-off.conf",
                "net.ipv4.conf.*.forwarding = 0\n",
            ),
        ];
        assert_eq!(
            default(&files, true),
            Some((
                "0".into(),
                "/etc/sysctl.d/zz-router-off.conf".into(),
                Some("net.ipv4.conf.*.forwarding".into())
            ))
        );
        // No line of any of them: not persisted (the kernel's 0, until something turns
        // forwarding on).
        let files = [file("/etc/sysctl.d/50-x.conf", "vm.swappiness = 1\n")];
        assert_eq!(default(&files, true), None);
    }

    /// systemd's udev rule runs `systemd-sysctl --prefix=/net/ipv4/conf/$name` for each
    /// interface that appears: a glob that matches it sets it wherever the glob stands
    /// (before ip_forward = 1 too), an interface's own line wins over the glob, a `-key`
    /// leaves it be.
    #[test]
    fn udev_applies_a_glob_to_each_new_interface_wherever_it_stands() {
        let cni0 = "net.ipv4.conf.cni0.forwarding";
        let glob = file(
            "/etc/sysctl.d/10-router-off.conf",
            "net.ipv4.conf.*.forwarding = 0\n",
        );
        let k8s = file("/etc/sysctl.d/k8s.conf", "net.ipv4.ip_forward = 1\n");
        let owned = |files: &[(String, &str)]| -> Vec<(String, String, Option<String>)> {
            files
                .iter()
                .map(|(p, t)| (p.clone(), (*t).to_owned(), None))
                .collect()
        };
        let files = [glob.clone(), k8s.clone()];
        let v = on_new_interface(&owned(&files), cni0).expect("set");
        assert_eq!(
            (v.value.as_str(), v.line, v.key.as_deref()),
            ("0", 1, Some("net.ipv4.conf.*.forwarding"))
        );
        // The boot itself leaves default on: ip_forward's change comes after the glob.
        assert_eq!(
            persisted(&files, &[], true)
                .get(DEFAULT_FORWARDING)
                .map(|v| v.value.as_str()),
            Some("1")
        );
        let files = [
            glob.clone(),
            k8s.clone(),
            file(
                "/etc/sysctl.d/00-cni.conf",
                "net.ipv4.conf.cni0.forwarding = 1\n",
            ),
        ];
        let v = on_new_interface(&owned(&files), cni0).expect("set");
        assert_eq!((v.value.as_str(), v.key.as_deref()), ("1", None));
        let files = [
            glob,
            k8s,
            file(
                "/etc/sysctl.d/00-cni.conf",
                "-net.ipv4.conf.cni0.forwarding\n",
            ),
        ];
        assert_eq!(on_new_interface(&owned(&files), cni0), None);
    }

    /// A glob sets every key dnsfix looks at that it matches and that no file names
    /// (systemd-sysctl: an explicit setting, or a `-key` exclusion, wins over any glob,
    /// wherever it is); `*` does not cross a separator.
    #[test]
    fn a_glob_sets_the_matching_keys_no_file_names() {
        let files = [
            file(
                "/usr/lib/sysctl.d/50-bridge.conf",
                "net.bridge.bridge-nf-call-iptables = 1
",
            ),
            file(
                "/etc/sysctl.d/90-hardening.conf",
                "net.bridge.bridge-nf-call-* = 0
-net.bridge.bridge-nf-call-arptables
net.* = 7
",
            ),
        ];
        let map = persisted(&files, &[], true);
        let at = |key: &str| map.get(key).map(|v| (v.value.as_str(), v.line));
        assert_eq!(at("net.bridge.bridge-nf-call-iptables"), Some(("1", 1)));
        assert_eq!(at("net.bridge.bridge-nf-call-ip6tables"), Some(("0", 1)));
        assert_eq!(at("net.bridge.bridge-nf-call-arptables"), None);
        assert_eq!(at("net.ipv4.ip_forward"), None);
        assert!(!map.contains_key("net.bridge.bridge-nf-call-*"));
    }

    /// A `-key` line after an assignment of the key takes its place (systemd-sysctl keeps
    /// the later option, and sets nothing for a `-key`); an assignment after it sets the key
    /// again.
    #[test]
    fn a_later_exclusion_cancels_an_assignment() {
        let files = [
            file("/etc/sysctl.d/k8s.conf", "net.ipv4.ip_forward = 1\n"),
            file("/etc/sysctl.d/zz-hardening.conf", "-net.ipv4.ip_forward\n"),
        ];
        let map = persisted(&files, &[], true);
        assert_eq!(map.get("net.ipv4.ip_forward"), None);
        let files = [file(
            "/etc/sysctl.d/k8s.conf",
            "-net.ipv4.ip_forward\nnet.ipv4.ip_forward = 1\nnet.bridge.bridge-nf-call-iptables = 1\n-net.bridge.bridge-nf-call-iptables\n",
        )];
        let map = persisted(&files, &[], true);
        assert_eq!(map.get("net.ipv4.ip_forward").map(|v| v.line), Some(2));
        assert_eq!(map.get("net.bridge.bridge-nf-call-iptables"), None);
        // A glob as written, too.
        let files = [
            file(
                "/etc/sysctl.d/10-k8s.conf",
                "net.bridge.bridge-nf-call-* = 1\n",
            ),
            file("/etc/sysctl.d/99-zz.conf", "-net.bridge.bridge-nf-call-*\n"),
        ];
        let map = persisted(&files, &[], true);
        assert_eq!(map.get("net.bridge.bridge-nf-call-iptables"), None);
        // procps (`sysctl --system`, no systemd) writes every assignment.
        let files = [
            file(
                "/etc/sysctl.d/50-hardening.conf",
                "net.bridge.bridge-nf-call-iptables = 0\n",
            ),
            file(
                "/etc/sysctl.d/90-x.conf",
                "-net.bridge.bridge-nf-call-iptables\n",
            ),
        ];
        let map = persisted(&files, &[], false);
        assert_eq!(
            map.get("net.bridge.bridge-nf-call-iptables")
                .map(|v| v.value.as_str()),
            Some("0")
        );
    }

    #[test]
    fn dev_null_link_masks_vendor_file() {
        let files = [file(
            "/usr/lib/sysctl.d/50-bridge.conf",
            "net.bridge.bridge-nf-call-iptables=0\n",
        )];
        let aliases = [alias("/etc/sysctl.d/50-bridge.conf", MASK_TARGET)];
        assert!(persisted(&files, &aliases, false).is_empty());
        assert!(drop_in_order(&files, &aliases, &SYSCTL_DIRS, Some(SYSCTL_CONF)).is_empty());
    }

    #[test]
    fn non_conf_hidden_and_foreign_paths_are_ignored() {
        let files = [
            file("/etc/sysctl.d/README", "net.ipv4.ip_forward=0\n"),
            file("/etc/sysctl.d/k8s.conf.bak", "net.ipv4.ip_forward=0\n"),
            file("/etc/sysctl.d/.hidden.conf", "net.ipv4.ip_forward=0\n"),
            file("/etc/sysctl.d/sub/x.conf", "net.ipv4.ip_forward=0\n"),
            file("/tmp/k8s.conf", "net.ipv4.ip_forward=0\n"),
            file("/etc/sysctl.d/k8s.conf", "net.ipv4.ip_forward=1\n"),
        ];
        let map = persisted(&files, &[], false);
        // ip_forward, and the default it sets too ([`DEFAULT_FORWARDING`]).
        assert_eq!(map.len(), 2);
        for key in ["net.ipv4.ip_forward", DEFAULT_FORWARDING] {
            assert_eq!(
                map.get(key).map(|v| v.path.as_str()),
                Some("/etc/sysctl.d/k8s.conf")
            );
        }
    }

    #[test]
    fn nothing_in_nothing_out() {
        assert!(persisted(&[], &[], false).is_empty());
    }

    #[test]
    fn never_panics_on_random_input() {
        let alphabet: &[u8] = b"net.ipv4/_=- #;\t\r\n\x00\xff";
        for bytes in
            crate::testing::random_inputs(0x1234_5678_9abc_def1, alphabet, 1_000, 100, None)
        {
            let text = String::from_utf8_lossy(&bytes);
            let parsed = SysctlFile::parse(&text);
            let lines = text.split('\n').count();
            assert!(
                parsed
                    .entries
                    .iter()
                    .all(|e| e.line >= 1 && e.line <= lines)
            );
        }
    }
}
