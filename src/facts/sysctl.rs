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
        super::node_facts::assignment(key, &self.value, self.key.as_deref())
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
/// setting %s (explicit setting exists)", glob(3) over /proc/sys).
pub fn persisted(
    files: &[(String, &str)],
    aliases: &[(String, String)],
    systemd: bool,
) -> BTreeMap<String, PersistedValue> {
    let mut result = BTreeMap::new();
    // Where each key's option stands in the order the boot applies them, (file, line):
    // what decides between two names of one setting ([`SAME_SETTING`]).
    let mut position: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut globs = Vec::new();
    let mut excluded = std::collections::BTreeSet::new();
    let applied = drop_in_order(files, aliases, &SYSCTL_DIRS, legacy(systemd));
    for (index, (path, content)) in applied.into_iter().enumerate() {
        let file = SysctlFile::parse(content);
        // Under systemd a `-key` line after an assignment of that key (or of that glob, as
        // written) takes its place (systemd-sysctl keeps one option per key, the later
        // line's, and sets none for a `-key`), and an assignment after it sets it again:
        // lines in file order. procps writes every assignment (`-key` only filters globs).
        let cancels: Vec<(usize, String)> = if systemd {
            file.excluded
                .iter()
                .map(|l| (l.line, l.value.clone()))
                .collect()
        } else {
            Vec::new()
        };
        for entry in file.entries {
            let at = (index, entry.line);
            let value = PersistedValue {
                value: entry.value,
                path: path.to_string(),
                line: entry.line,
                key: None,
            };
            match glob_pattern(&entry.key) {
                Some(pattern) => globs.push((entry.key, pattern, value, at)),
                None => {
                    // systemd-sysctl moves an option to the end only where the value
                    // changes ("Overwriting earlier assignment"); the same value again
                    // leaves it where it was. procps applies every line as it comes.
                    let same = systemd
                        && result
                            .get(&entry.key)
                            .is_some_and(|v: &PersistedValue| v.value == value.value);
                    if !same {
                        position.insert(entry.key.clone(), at);
                    }
                    result.insert(entry.key, value);
                }
            }
        }
        let earlier = |v: &PersistedValue, line: usize| v.path != *path || v.line < line;
        for (line, key) in &cancels {
            if result.get(key).is_some_and(|v| earlier(v, *line)) {
                result.remove(key);
                position.remove(key);
            }
            globs.retain(|(glob, _, v, _)| glob != key || !earlier(v, *line));
        }
        excluded.extend(file.excluded.into_iter().map(|l| l.value));
    }
    let others = SAME_SETTING.iter().map(|(_, other)| other);
    for key in SYSCTLS.iter().chain(others) {
        if result.contains_key(*key) || excluded.contains(*key) {
            continue;
        }
        let path = slash_form(key);
        let options = glob::MatchOptions {
            case_sensitive: true,
            require_literal_separator: true,
            require_literal_leading_dot: true,
        };
        if let Some((glob, _, value, at)) = globs
            .iter()
            .rev()
            .find(|(_, pattern, ..)| pattern.matches_with(&path, options))
        {
            let mut value = value.clone();
            // A glob that sets the other name of a setting is named as written.
            if SAME_SETTING.iter().any(|(_, other)| other == key) {
                value.key = Some(glob.clone());
            }
            position.insert((*key).to_owned(), *at);
            result.insert((*key).to_owned(), value);
        }
    }
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
    result
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
        assert_eq!(map.len(), 1);
        assert_eq!(
            map.get("net.ipv4.ip_forward").map(|v| v.path.as_str()),
            Some("/etc/sysctl.d/k8s.conf")
        );
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
