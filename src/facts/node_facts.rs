//! [`NodeFacts`]: the typed, derived view of one node, built from [`RawFacts`] by pure
//! functions. Every value keeps its provenance (path, line, symlink target, sha256), and a
//! value that could not be read is `unknown`, never a healthy default.
//!
//! The JSON shape of this type is the stable output of `dnsfix facts --format json`
//! (documented in docs/facts.md): rename nothing without a format version bump.

use std::collections::BTreeMap;

use serde::Serialize;

use super::cni::Cni;
use super::kubelet::{EKS_CONFIG, K3S_CONFIG, KUBEADM_CONFIG, RKE2_CONFIG};
use super::modules_load;
use super::raw::{FileState, RawFacts, RawFile};
use super::resolv_conf::ResolvConf;
use super::sysctl;
use crate::node_script::KUBELET_UNITS;

/// Something observed on the node: a value, known to be absent, or unknown (with why).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "state", content = "value", rename_all = "snake_case")]
pub enum Observed<T> {
    Known(T),
    Absent,
    Unknown(String),
}

impl<T> Observed<T> {
    pub fn known(&self) -> Option<&T> {
        match self {
            Observed::Known(v) => Some(v),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeFacts {
    /// Inventory name.
    pub host: String,
    pub hostname: Option<String>,
    pub os: Option<OsRelease>,
    pub boot_id: Option<String>,
    /// The uid the gather script ran as (0 unless `local` as a normal user).
    pub uid: Option<u32>,
    pub services: Services,
    pub flavour: Flavour,
    pub resolver: HostResolver,
    pub kubelet: Kubelet,
    /// Live and persisted values of the DNS-relevant sysctls, by key.
    pub sysctls: BTreeMap<String, SysctlFact>,
    pub br_netfilter: BrNetfilter,
    /// Addresses on the `nodelocaldns` interface (NodeLocal DNSCache), when it exists.
    pub nodelocaldns: Option<Vec<String>>,
    /// The CNI configuration in effect, and whether pods sit on a Linux bridge.
    pub cni: Cni,
    /// Every path the gather looked at: state, symlink target and sha256.
    pub files: Files,
    /// The raw gather output these facts were read from, so a plan can predict the facts
    /// after its changes by interpreting the same output with its files swapped in.
    #[serde(skip)]
    pub raw: std::sync::Arc<RawFacts>,
}

/// [`NodeFacts::files`]: the gathered files, read through the raw facts they came from
/// (a map of every path, shared rather than copied: at a thousand hosts a second copy of
/// every host's file index is most of the memory a plan uses). Reads as the map.
#[derive(Debug, Clone, PartialEq)]
pub struct Files(std::sync::Arc<RawFacts>);

impl std::ops::Deref for Files {
    type Target = BTreeMap<String, RawFile>;
    fn deref(&self) -> &Self::Target {
        &self.0.files
    }
}

impl<'a> IntoIterator for &'a Files {
    type Item = (&'a String, &'a RawFile);
    type IntoIter = std::collections::btree_map::Iter<'a, String, RawFile>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.files.iter()
    }
}

impl Serialize for Files {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.files.serialize(serializer)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OsRelease {
    pub id: Option<String>,
    pub version_id: Option<String>,
    pub pretty_name: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitState {
    Active,
    Inactive,
    Failed,
    Activating,
    /// systemctl missing or said something else.
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Services {
    pub systemd_resolved: UnitState,
    pub network_manager: UnitState,
    /// systemd-networkd (netplan on Ubuntu, Debian cloud images): the DHCP client there.
    pub systemd_networkd: UnitState,
    /// A dhclient process runs: it is the DHCP client (and applies dhclient.conf).
    pub dhclient: bool,
    pub kubelet: UnitState,
    pub k3s: UnitState,
    pub rke2: UnitState,
    /// The unit whose restart restarts the kubelet: the active one of kubelet, k3s,
    /// k3s-agent, rke2-server, rke2-agent (k3s and RKE2 run the kubelet inside their own
    /// process); `kubelet` when none is active.
    pub kubelet_unit: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlavourKind {
    Kubespray,
    Kubeadm,
    K3s,
    Rke2,
    /// Amazon EKS AL2023 nodes, set up by nodeadm.
    Eks,
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flavour {
    pub kind: FlavourKind,
    /// The file (or unit) that gave it away.
    pub evidence: Option<String>,
}

/// A resolv.conf-format file as read from the node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResolvFile {
    pub path: String,
    pub state: FileState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symlink_target: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canonical: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Parsed content (kubelet's reading rules); absent unless the file was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parsed: Option<ResolvConf>,
}

impl ResolvFile {
    pub(crate) fn read(raw: &RawFacts, path: &str) -> ResolvFile {
        match raw.get(path) {
            Some(f) => ResolvFile {
                path: path.to_owned(),
                state: f.state,
                symlink_target: f.symlink_target.clone(),
                canonical: f.canonical.clone(),
                sha256: f.sha256.clone(),
                parsed: f.text().map(|t| ResolvConf::parse(&t)),
            },
            // The script did not look at it: that is not "missing", it is unknown.
            None => ResolvFile {
                path: path.to_owned(),
                state: FileState::Unreadable,
                symlink_target: None,
                canonical: None,
                sha256: None,
                parsed: None,
            },
        }
    }
}

/// The host's own resolver configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostResolver {
    /// `/etc/resolv.conf`, with its symlink target.
    pub etc_resolv_conf: ResolvFile,
    /// systemd-resolved's mode, from where `/etc/resolv.conf` points: stub, static, uplink,
    /// foreign (a regular file) or missing.
    pub resolved_mode: String,
    /// `/run/systemd/resolve/resolv.conf`: every upstream systemd-resolved knows.
    pub systemd_uplink: ResolvFile,
}

/// Where an effective kubelet setting came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Source {
    /// `flag` (command line or env file), `config` (KubeletConfiguration), `k3s_config`,
    /// `k3s_auto` (k3s/rke2's own choice) or `default` (kubelet's built-in default).
    pub kind: String,
    /// The file that set it (`/proc/PID/cmdline` for the running process).
    pub path: Option<String>,
    pub line: Option<usize>,
    pub detail: Option<String>,
}

impl Source {
    pub(crate) fn new(kind: &str, path: Option<&str>, line: Option<usize>) -> Source {
        Source {
            kind: kind.to_owned(),
            path: path.map(str::to_owned),
            line,
            detail: None,
        }
    }

    /// `path:line` for evidence.
    pub fn at(&self) -> String {
        match (&self.path, self.line) {
            (Some(p), Some(l)) if l > 0 => format!("{p}:{l}"),
            (Some(p), _) => p.clone(),
            (None, _) => self.kind.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Effective<T> {
    pub value: T,
    /// The setting that won.
    pub source: Source,
    /// Settings of the same thing that lost to it (e.g. a config value shadowed by a flag).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shadowed: Vec<Shadowed>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shadowed {
    pub value: String,
    pub source: Source,
}

/// A kubelet flag and where it was set.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlagFact {
    pub name: String,
    pub value: Option<String>,
    pub source: Source,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Kubelet {
    /// The running kubelet's pid, if one runs.
    pub pid: Option<u32>,
    /// The systemd unit file (or first drop-in) that starts it, when there is one.
    pub unit: Option<String>,
    /// `kubelet --version` (`v1.29.3`), when it could be asked.
    pub version: Option<String>,
    /// The KubeletConfiguration file in use (`--config`, else the flavour's default when the
    /// command line is not known).
    pub config_path: Option<String>,
    /// `--config-dir` drop-ins merged over it, in the order they apply.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub config_dropins: Vec<String>,
    /// Why the config file could not be used, when it could not.
    pub config_error: Option<String>,
    /// DNS-relevant flags from the running process or, when none runs, the env files.
    pub flags: Vec<FlagFact>,
    /// The resolv.conf kubelet hands to dnsPolicy=Default pods (CoreDNS, nodelocaldns).
    pub resolv_conf: Observed<Effective<String>>,
    pub cluster_dns: Observed<Effective<Vec<String>>>,
    pub cluster_domain: Observed<Effective<String>>,
    /// That file, read from the node (symlinks followed).
    pub pod_resolv_conf: Option<ResolvFile>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SysctlFact {
    /// The value in /proc/sys now (absent: the key does not exist, e.g. br_netfilter is
    /// not loaded).
    pub live: Observed<String>,
    /// What boot will set, from the winning sysctl.d/sysctl.conf assignment.
    pub persisted: Option<Persisted>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Persisted {
    pub value: String,
    pub path: String,
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BrNetfilter {
    /// Loaded now (a module in /proc/modules, or built in: /proc/sys/net/bridge exists).
    pub loaded: Observed<bool>,
    /// Built into the kernel: the bridge sysctls exist while /proc/modules is absent (no
    /// module support) or does not list it. A built-in needs no modules-load.d entry.
    pub built_in: bool,
    pub evidence: String,
    /// Where boot loads it (modules-load.d / /etc/modules), if anywhere.
    pub persisted: Option<Persisted>,
}

/// The sysctls dnsfix looks at.
pub const SYSCTLS: &[&str] = &[
    "net.bridge.bridge-nf-call-iptables",
    "net.bridge.bridge-nf-call-ip6tables",
    "net.bridge.bridge-nf-call-arptables",
    "net.ipv4.ip_forward",
    "net.ipv6.conf.all.forwarding",
];

const KUBESPRAY_ENV: &str = "/etc/kubernetes/kubelet.env";
const KUBEADM_FLAGS: &str = "/var/lib/kubelet/kubeadm-flags.env";
/// nodeadm's kubelet flags (awslabs/amazon-eks-ami nodeadm internal/kubelet/environment.go).
const EKS_ENV: &str = "/etc/eks/kubelet/environment";
/// Env files and the variables kubelet's units expand, in the order they appear on the
/// command line (a later occurrence of a flag wins). Kubespray's kubelet.service.j2
/// ExecStart expands exactly these, in this order (KUBELET_EXTRA_ARGS is not among them);
/// kubeadm's 10-kubeadm.conf runs `$KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS`.
pub const KUBELET_ENV_FILES: &[(&str, &[&str])] = &[
    (
        KUBESPRAY_ENV,
        &[
            "KUBE_LOGTOSTDERR",
            "KUBE_LOG_LEVEL",
            "KUBELET_API_SERVER",
            "KUBELET_ADDRESS",
            "KUBELET_PORT",
            "KUBELET_HOSTNAME",
            "KUBELET_ARGS",
            "DOCKER_SOCKET",
            "KUBELET_NETWORK_PLUGIN",
            "KUBELET_VOLUME_PLUGIN",
            "KUBELET_CLOUDPROVIDER",
        ],
    ),
    (KUBEADM_FLAGS, &["KUBELET_KUBEADM_ARGS"]),
    ("/etc/default/kubelet", &["KUBELET_EXTRA_ARGS"]),
    ("/etc/sysconfig/kubelet", &["KUBELET_EXTRA_ARGS"]),
];

impl NodeFacts {
    /// The gathered /proc/sys file of sysctl `name` (dot form); `None` when the gather did
    /// not read it.
    pub fn sysctl_live(&self, name: &str) -> Option<&RawFile> {
        self.files.get(&super::raw::sysctl_path(name))
    }

    /// Whether /proc/modules lists module `name`; `None` when it could not be read.
    pub fn module_loaded(&self, name: &str) -> Option<bool> {
        let modules = self.files.get("/proc/modules")?.text()?;
        Some(super::raw::modules_list(&modules, name))
    }

    /// Interprets one node's raw gather output. Pure: no I/O.
    pub fn from_raw(host: &str, raw: &RawFacts) -> NodeFacts {
        NodeFacts::from_owned(host, raw.clone())
    }

    /// [`NodeFacts::from_raw`] that keeps `raw` itself rather than a copy (the gather
    /// hands over what it parsed: at a thousand hosts a second copy of every host's
    /// files is most of the memory a plan uses).
    pub fn from_owned(host: &str, raw: RawFacts) -> NodeFacts {
        let shared = std::sync::Arc::new(raw);
        let raw: &RawFacts = &shared;
        let text = |path: &str| {
            raw.get(path)
                .and_then(RawFile::text)
                .map(|t| t.into_owned())
        };
        let services = services(raw);
        let flavour = flavour(raw, &services);
        let resolver = host_resolver(raw);
        let kubelet = super::kubelet::kubelet(raw, &flavour);
        let mut services = services;
        // No kubelet-running unit is active (a stopped k3s or RKE2 node): the unit to
        // restart is the one installed, not a "kubelet" that does not exist there.
        if services.kubelet_unit == "kubelet" && kubelet.unit.is_none() {
            let installed = KUBELET_UNITS
                .iter()
                .copied()
                .filter(|u| *u != "kubelet")
                .find(|u| {
                    super::systemd_unit::ServiceUnit::from_raw(raw, &format!("{u}.service"))
                        .is_some()
                });
            if let Some(unit) = installed {
                services.kubelet_unit = unit.to_owned();
            }
        }
        NodeFacts {
            host: host.to_owned(),
            hostname: text("/proc/sys/kernel/hostname").map(|t| t.trim().to_owned()),
            os: text("/etc/os-release").map(|t| os_release(&t)),
            boot_id: text("/proc/sys/kernel/random/boot_id").map(|t| t.trim().to_owned()),
            uid: raw
                .commands
                .get("uid")
                .and_then(|c| c.stdout.trim().parse().ok()),
            services,
            flavour,
            resolver,
            kubelet,
            sysctls: sysctls(raw),
            br_netfilter: br_netfilter(raw),
            nodelocaldns: raw
                .commands
                .get("nodelocaldns-addr")
                .map(|c| interface_addresses(&c.stdout)),
            cni: Cni::from_raw(raw),
            files: Files(std::sync::Arc::clone(&shared)),
            raw: shared,
        }
    }
}

fn os_release(text: &str) -> OsRelease {
    let mut os = OsRelease {
        id: None,
        version_id: None,
        pretty_name: None,
    };
    for line in text.lines() {
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let v = v.trim().trim_matches('"').trim_matches('\'').to_owned();
        match k.trim() {
            "ID" => os.id = Some(v),
            "VERSION_ID" => os.version_id = Some(v),
            "PRETTY_NAME" => os.pretty_name = Some(v),
            _ => {}
        }
    }
    os
}

/// The units `systemctl is-active` is asked about, in the order it answers (gather.sh
/// names the kubelet ones from `KUBELET_UNITS`; a test keeps the two in step).
pub(crate) const UNITS: &[&str] = &[
    "systemd-resolved",
    "NetworkManager",
    "kubelet",
    "k3s",
    "k3s-agent",
    "rke2-server",
    "rke2-agent",
    "systemd-networkd",
];

fn services(raw: &RawFacts) -> Services {
    // `systemctl is-active A B C` prints one state per unit, in order.
    let states: BTreeMap<&str, UnitState> = match raw.commands.get("units") {
        Some(cmd) => UNITS
            .iter()
            .zip(cmd.stdout.lines().chain(std::iter::repeat("")))
            .map(|(unit, state)| {
                let state = match state.trim() {
                    "active" | "reloading" => UnitState::Active,
                    "inactive" => UnitState::Inactive,
                    "failed" => UnitState::Failed,
                    "activating" | "deactivating" => UnitState::Activating,
                    _ => UnitState::Unknown,
                };
                (*unit, state)
            })
            .collect(),
        None => BTreeMap::new(),
    };
    let get = |u: &str| states.get(u).copied().unwrap_or(UnitState::Unknown);
    let either = |a: UnitState, b: UnitState| if b == UnitState::Active { b } else { a };
    Services {
        systemd_resolved: get("systemd-resolved"),
        network_manager: get("NetworkManager"),
        systemd_networkd: get("systemd-networkd"),
        dhclient: raw.pids.contains_key("dhclient"),
        kubelet: get("kubelet"),
        k3s: either(get("k3s"), get("k3s-agent")),
        rke2: either(get("rke2-server"), get("rke2-agent")),
        kubelet_unit: KUBELET_UNITS
            .iter()
            .copied()
            .find(|unit| get(unit) == UnitState::Active)
            .unwrap_or("kubelet")
            .to_string(),
    }
}

fn present(raw: &RawFacts, path: &str) -> bool {
    raw.get(path).is_some_and(|f| f.state == FileState::Present)
}

fn flavour(raw: &RawFacts, services: &Services) -> Flavour {
    let found = |kind, evidence: &str| Flavour {
        kind,
        evidence: Some(evidence.to_owned()),
    };
    // Kubespray also runs kubeadm, so its own env file is checked first.
    if present(raw, KUBESPRAY_ENV) {
        return found(FlavourKind::Kubespray, KUBESPRAY_ENV);
    }
    if present(raw, RKE2_CONFIG) || services.rke2 == UnitState::Active {
        return found(
            FlavourKind::Rke2,
            if present(raw, RKE2_CONFIG) {
                RKE2_CONFIG
            } else {
                "rke2 unit"
            },
        );
    }
    if present(raw, K3S_CONFIG) || services.k3s == UnitState::Active {
        return found(
            FlavourKind::K3s,
            if present(raw, K3S_CONFIG) {
                K3S_CONFIG
            } else {
                "k3s unit"
            },
        );
    }
    // An installed but stopped k3s/RKE2 still has its unit.
    for (unit, kind) in [
        ("rke2-server.service", FlavourKind::Rke2),
        ("rke2-agent.service", FlavourKind::Rke2),
        ("k3s.service", FlavourKind::K3s),
        ("k3s-agent.service", FlavourKind::K3s),
    ] {
        if let Some(u) = super::systemd_unit::ServiceUnit::from_raw(raw, unit) {
            return found(kind, u.files().next().unwrap_or(unit));
        }
    }
    for path in [EKS_ENV, EKS_CONFIG] {
        if present(raw, path) {
            return found(FlavourKind::Eks, path);
        }
    }
    if present(raw, KUBEADM_FLAGS) {
        return found(FlavourKind::Kubeadm, KUBEADM_FLAGS);
    }
    if present(raw, KUBEADM_CONFIG) {
        return found(FlavourKind::Kubeadm, KUBEADM_CONFIG);
    }
    // kubeadm's drop-in (every release since 1.6 names it 10-kubeadm.conf, under /etc or
    // /usr/lib depending on the package), even before `kubeadm init` wrote anything.
    for dir in super::systemd_unit::UNIT_DIRS {
        let path = format!("{dir}/kubelet.service.d/10-kubeadm.conf");
        if present(raw, &path) {
            return Flavour {
                kind: FlavourKind::Kubeadm,
                evidence: Some(path),
            };
        }
    }
    Flavour {
        kind: FlavourKind::Unknown,
        evidence: None,
    }
}

fn host_resolver(raw: &RawFacts) -> HostResolver {
    let etc = ResolvFile::read(raw, "/etc/resolv.conf");
    let resolved_mode = match (&etc.state, etc.canonical.as_deref()) {
        (FileState::Missing, _) => "missing",
        (FileState::Unreadable, _) => "unknown",
        (_, Some("/run/systemd/resolve/stub-resolv.conf")) => "stub",
        (_, Some("/usr/lib/systemd/resolv.conf" | "/lib/systemd/resolv.conf")) => "static",
        (_, Some("/run/systemd/resolve/resolv.conf")) => "uplink",
        _ => "foreign",
    }
    .to_owned();
    HostResolver {
        etc_resolv_conf: etc,
        resolved_mode,
        systemd_uplink: ResolvFile::read(raw, "/run/systemd/resolve/resolv.conf"),
    }
}

fn sysctls(raw: &RawFacts) -> BTreeMap<String, SysctlFact> {
    let files = config_files(
        raw,
        &[
            "/etc/sysctl.d",
            "/run/sysctl.d",
            "/usr/local/lib/sysctl.d",
            "/usr/lib/sysctl.d",
            "/lib/sysctl.d",
        ],
        "/etc/sysctl.conf",
    );
    let persisted = sysctl::persisted_files(&files);
    SYSCTLS
        .iter()
        .map(|key| {
            let proc_path = super::raw::sysctl_path(key);
            let live = match raw.get(&proc_path) {
                Some(f) if f.state == FileState::Present => {
                    Observed::Known(String::from_utf8_lossy(&f.content).trim().to_owned())
                }
                Some(f) if f.state == FileState::Missing => Observed::Absent,
                Some(_) => Observed::Unknown(format!("{proc_path} could not be read")),
                None => Observed::Unknown(format!("{proc_path} was not gathered")),
            };
            let persisted = persisted.get(*key).map(|p| Persisted {
                value: p.value.clone(),
                path: p.path.clone(),
                line: p.line,
            });
            ((*key).to_owned(), SysctlFact { live, persisted })
        })
        .collect()
}

/// The `*.conf` files the script read from `dirs` (in directory order), then `extra`;
/// each with its text and, for symlinks, the canonical target.
fn config_files(
    raw: &RawFacts,
    dirs: &[&str],
    extra: &str,
) -> Vec<(String, String, Option<String>)> {
    let mut out = Vec::new();
    for dir in dirs {
        for (path, f) in raw.files_in(dir) {
            let text = f.text().map(|t| t.into_owned()).unwrap_or_default();
            let canonical = f.canonical.clone().or_else(|| {
                (f.state == FileState::Missing && f.symlink_target.is_some())
                    .then(|| "/dev/null".to_owned())
            });
            out.push((path.to_owned(), text, canonical));
        }
    }
    if let Some(f) = raw.get(extra).filter(|f| f.state == FileState::Present) {
        out.push((
            extra.to_owned(),
            f.text().map(|t| t.into_owned()).unwrap_or_default(),
            f.canonical.clone(),
        ));
    }
    out
}

fn br_netfilter(raw: &RawFacts) -> BrNetfilter {
    let modules = raw.get("/proc/modules");
    let bridge_dir = raw.get("/proc/sys/net/bridge").map(|f| f.state);
    let (loaded, evidence) = match (modules.and_then(RawFile::text), bridge_dir) {
        (Some(m), _) if super::raw::modules_list(&m, "br_netfilter") => (
            Observed::Known(true),
            "/proc/modules lists br_netfilter".to_owned(),
        ),
        (_, Some(FileState::Directory)) => (
            Observed::Known(true),
            "/proc/sys/net/bridge exists".to_owned(),
        ),
        (_, Some(FileState::Missing)) => (
            Observed::Known(false),
            "/proc/sys/net/bridge does not exist".to_owned(),
        ),
        _ => (
            Observed::Unknown(
                "neither /proc/modules nor /proc/sys/net/bridge could be read".into(),
            ),
            String::new(),
        ),
    };
    // The net.bridge.bridge-nf-* sysctls are registered by br_netfilter itself, so they
    // existing while no module is listed means it is built in.
    let listed = modules.and_then(RawFile::text).is_some_and(|m| {
        m.lines()
            .any(|l| l.split_whitespace().next() == Some("br_netfilter"))
    });
    let modules_readable_or_absent =
        modules.is_none_or(|f| matches!(f.state, FileState::Present | FileState::Missing));
    let built_in =
        bridge_dir == Some(FileState::Directory) && !listed && modules_readable_or_absent;
    let evidence = if built_in {
        match modules.map(|f| f.state) {
            Some(FileState::Present) => "/proc/sys/net/bridge exists and /proc/modules does not list br_netfilter: built into the kernel".to_owned(),
            _ => "/proc/sys/net/bridge exists and the kernel has no loadable modules: built in".to_owned(),
        }
    } else {
        evidence
    };
    let files = config_files(
        raw,
        &[
            "/etc/modules-load.d",
            "/run/modules-load.d",
            "/usr/local/lib/modules-load.d",
            "/usr/lib/modules-load.d",
            "/lib/modules-load.d",
        ],
        "/etc/modules",
    );
    let inputs: Vec<(String, &str)> = files
        .iter()
        .map(|(p, t, _)| (p.clone(), t.as_str()))
        .collect();
    let persisted = modules_load::persisted_modules(&inputs)
        .get("br_netfilter")
        .map(|(path, line)| Persisted {
            value: "br_netfilter".into(),
            path: path.clone(),
            line: *line,
        });
    BrNetfilter {
        loaded,
        built_in,
        evidence,
        persisted,
    }
}

fn interface_addresses(ip_output: &str) -> Vec<String> {
    // `ip -o addr show dev X`: "5: nodelocaldns    inet 169.254.25.10/32 scope global ..."
    ip_output
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            words.find(|w| *w == "inet" || *w == "inet6")?;
            let addr = words.next()?;
            Some(addr.split('/').next().unwrap_or(addr).to_owned())
        })
        .collect()
}
