//! [`NodeFacts`]: the typed, derived view of one node, built from [`RawFacts`] by the pure
//! functions in derive.rs. Every value keeps its provenance (path, line, symlink target,
//! sha256), and a value that could not be read is `unknown`, never a healthy default.
//!
//! The JSON shape of this type is the stable output of `dnsfix facts --format json`
//! (documented in docs/facts.md): rename nothing without a format version bump.

use std::collections::BTreeMap;

use serde::Serialize;

use super::cni::Cni;
use super::raw::{FileState, RawFacts, RawFile};
use super::resolv_conf::ResolvConf;

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
    /// firewalld's permanent configuration (whether it runs is in `services`).
    pub firewalld: super::firewalld::Firewalld,
    /// Kubelet units a run changed files for and was cut off before restarting.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pending_restarts: Vec<super::restart_due::PendingRestart>,
    /// Those marks could not be looked at (a gather without root).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pending_restarts_unread: bool,
    /// The dnsfix run holding the node lock now (an apply or rollback under way), where the
    /// gather looked (where there is a mark): `Some(None)` for nobody.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_in_progress: Option<Option<super::restart_due::LockHolder>>,
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
pub struct Files(pub(super) std::sync::Arc<RawFacts>);

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

impl UnitState {
    /// As `systemctl is-active` says it (`unknown` for anything else).
    pub fn as_str(self) -> &'static str {
        match self {
            UnitState::Active => "active",
            UnitState::Inactive => "inactive",
            UnitState::Failed => "failed",
            UnitState::Activating => "activating",
            UnitState::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Services {
    pub systemd_resolved: UnitState,
    /// `systemctl is-enabled systemd-resolved` (`enabled`, `disabled`, `masked`, ...),
    /// asked where /run/systemd/resolve exists; `None` where it was not asked or said
    /// nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub systemd_resolved_enabled: Option<String>,
    pub network_manager: UnitState,
    /// Whether NetworkManager starts at boot, in `systemctl is-enabled`'s words, from its
    /// unit's links (no systemctl asked): `masked` (its name in /etc/systemd/system
    /// links to /dev/null), `enabled` (its link in
    /// /etc/systemd/system/multi-user.target.wants, where `systemctl enable` puts it:
    /// data/NetworkManager.service.in `WantedBy=multi-user.target`), `enabled-runtime` and
    /// `masked-runtime` (the link or the mask only in /run, where `--runtime` puts them: gone
    /// at the next boot), `not-found` (the link leads nowhere and no unit file of the name
    /// is on the unit path), else `disabled`.
    /// Looked at only where /etc/NetworkManager is there; `None` elsewhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network_manager_enabled: Option<String>,
    /// systemd-networkd (netplan on Ubuntu, Debian cloud images): the DHCP client there.
    pub systemd_networkd: UnitState,
    /// firewalld: its zones decide what it does with the pods' forwarded traffic.
    pub firewalld: UnitState,
    /// `systemctl is-enabled firewalld`, asked where its unit file is installed: one
    /// stopped now and enabled starts again at the next boot. `None` where it was not
    /// asked or said nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub firewalld_enabled: Option<String>,
    /// A dhclient process runs: it is the DHCP client (and applies dhclient.conf).
    pub dhclient: bool,
    pub kubelet: UnitState,
    pub k3s: UnitState,
    pub rke2: UnitState,
    /// The unit whose restart restarts the kubelet: the active one of kubelet, k3s,
    /// k3s-agent, rke2-server, rke2-agent, snap.microk8s.daemon-kubelite, k0sworker,
    /// k0scontroller (k3s, RKE2 and MicroK8s run the kubelet inside their own process, k0s
    /// as its child); `kubelet` when none is active.
    pub kubelet_unit: String,
    /// That unit's state (`unknown` where `systemctl is-active` did not say).
    pub kubelet_unit_state: UnitState,
    /// Where a `systemctl` call did not answer: the seconds the gather waited for it before
    /// stopping it (systemd, PID 1, busy or stuck). systemctl was not asked again, and
    /// every unit's state here is `unknown` ([`Services::forget_states`]); an `is-enabled`
    /// answered before the cut stands. `None` where every call answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub systemctl_cut: Option<u64>,
}

impl Services {
    /// Every unit state unknown: where a systemctl call was stopped unanswered
    /// ([`Services::systemctl_cut`]), a state `is-active` told while systemd still
    /// answered is not judged beside an `is-enabled` it did not answer (a stopped unit
    /// would read as one that stays stopped). The unit chosen to run the kubelet stays.
    pub(crate) fn forget_states(&mut self) {
        for state in [
            &mut self.systemd_resolved,
            &mut self.network_manager,
            &mut self.systemd_networkd,
            &mut self.firewalld,
            &mut self.kubelet,
            &mut self.k3s,
            &mut self.rke2,
            &mut self.kubelet_unit_state,
        ] {
            *state = UnitState::Unknown;
        }
    }

    /// Why systemctl did not say how a unit is, for a rule's words: the gather stopped it
    /// ([`Services::systemctl_cut`]), or there was none to ask or it printed nothing.
    pub fn systemctl_silence(&self) -> String {
        match self.systemctl_cut {
            Some(secs) => format!(
                "systemctl did not answer within {secs}s and was stopped: systemd (PID 1) is \
                 busy or stuck"
            ),
            None => "no systemctl on the node, or it printed nothing: a node not booted with \
                     systemd?"
                .into(),
        }
    }

    /// Whether systemd-resolved starts at the next boot, from `systemctl is-enabled`
    /// (systemctl(1)'s states); `None` where that was not asked, or for the states a
    /// reboot itself changes (`enabled-runtime`, `masked-runtime`, `transient`: their links
    /// live in /run) or a word systemctl 252 does not print.
    pub fn resolved_starts_at_boot(&self) -> Option<bool> {
        starts_at_boot(self.systemd_resolved_enabled.as_deref()?)
    }

    /// Whether firewalld starts at the next boot, as [`Services::resolved_starts_at_boot`]
    /// tells it for systemd-resolved.
    pub fn firewalld_starts_at_boot(&self) -> Option<bool> {
        starts_at_boot(self.firewalld_enabled.as_deref()?)
    }

    /// Whether NetworkManager starts at the next boot, as [`Services::resolved_starts_at_boot`]
    /// tells it for systemd-resolved.
    pub fn network_manager_starts_at_boot(&self) -> Option<bool> {
        starts_at_boot(self.network_manager_enabled.as_deref()?)
    }

    /// systemd-resolved will not write its /run files at the next boot: it does not start
    /// then ([`Services::resolved_starts_at_boot`]), or, where that is not known, it is not
    /// running now (inactive or failed: its unit restarts it when it stops on its own).
    pub fn resolved_gone_at_boot(&self) -> bool {
        match self.resolved_starts_at_boot() {
            Some(starts) => !starts,
            None => matches!(
                self.systemd_resolved,
                UnitState::Inactive | UnitState::Failed
            ),
        }
    }
}

/// What `systemctl is-enabled` printed says of the next boot (systemctl(1)'s states).
fn starts_at_boot(state: &str) -> Option<bool> {
    match state {
        "enabled" | "static" | "alias" | "indirect" | "generated" => Some(true),
        "disabled" | "masked" | "linked" | "linked-runtime" | "bad" | "not-found" => Some(false),
        _ => None,
    }
}

/// Go's `filepath.Clean` of an absolute path, lexically (no link followed): one slash
/// between names, no `.` names, a `..` taking the name before it away (and none above
/// `/`), no trailing slash.
pub fn go_clean(path: &str) -> String {
    let mut names: Vec<&str> = Vec::new();
    for name in path.split('/') {
        match name {
            "" | "." => {}
            ".." => {
                names.pop();
            }
            _ => names.push(name),
        }
    }
    format!("/{}", names.join("/"))
}

/// A path in systemd-resolved's runtime directory, also spelled through /var/run (a link
/// to /run, so the gather gives no canonical path for files below it).
pub fn in_resolved_run_dir(path: &str) -> bool {
    path.starts_with("/run/systemd/resolve/") || path.starts_with("/var/run/systemd/resolve/")
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
    /// k0s: `k0s worker` (or `k0s controller --enable-worker`) runs the kubelet as its
    /// child, with a config file it writes anew at every k0s start.
    K0s,
    /// MicroK8s: the snap's kubelite runs the kubelet, with flags from an arguments file.
    #[serde(rename = "microk8s")]
    MicroK8s,
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
    /// The running kubelet's binary was replaced on disk since it started: its
    /// `/proc/PID/exe` reads `... (deleted)`, so `version` is the running one and its next
    /// start runs another. Known only where the version was asked.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub binary_replaced: bool,
    /// The KubeletConfiguration file in use (`--config`, else the flavour's default when the
    /// command line is not known).
    pub config_path: Option<String>,
    /// `--config-dir` drop-ins merged over it, in the order they apply.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub config_dropins: Vec<String>,
    /// How the drop-in whose setting is the effective resolvConf (or the one a flag beats)
    /// spells the key, where that is not `resolvConf`: a spelling of `ResolverConfig`, which kubelet 1.28 to 1.31 read
    /// there (kubernetes#126630). An edit of the setting goes to that key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolv_conf_key: Option<String>,
    /// Why the config file could not be used, when it could not.
    pub config_error: Option<String>,
    /// MicroK8s: the arguments file kubelite takes the kubelet's flags from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args_file: Option<String>,
    /// DNS-relevant flags from the running process or, when none runs, the env files.
    pub flags: Vec<FlagFact>,
    /// The resolv.conf kubelet hands to dnsPolicy=Default pods (CoreDNS, nodelocaldns).
    pub resolv_conf: Observed<Effective<String>>,
    pub cluster_dns: Observed<Effective<Vec<String>>>,
    pub cluster_domain: Observed<Effective<String>>,
    /// The CRI endpoint the kubelet talks to (`--container-runtime-endpoint`,
    /// `containerRuntimeEndpoint`; a k3s config's `container-runtime-endpoint`), where one is
    /// set: none is containerd (the kubelet's default from 1.27; k3s's and RKE2's embedded
    /// one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime_endpoint: Option<Effective<String>>,
    /// That file, read from the node (symlinks followed).
    pub pod_resolv_conf: Option<ResolvFile>,
    /// Where `resolv_conf` is unknown because the kubelet's version is not known and its
    /// `--config-dir` drop-ins give kubelet 1.28 to 1.31 and 1.32 on different files: the
    /// file each reads, so that rules can judge both.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolv_conf_by_version: Option<ResolvConfByVersion>,
}

/// The resolv.conf a kubelet of unknown version reads, by version: kubelet 1.28 to 1.31
/// merge the `--config-dir` drop-ins in the internal field names, passing a drop-in's
/// `resolvConf` over and reading `resolverConfig` (kubernetes#126630); 1.32 on the other
/// way round (#127421).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResolvConfByVersion {
    /// Why `resolv_conf` is unknown: both files, where each is set, and the ways out.
    pub why: String,
    /// The drop-in that decides (the last to set `resolvConf` or a spelling of
    /// `resolverConfig`): with both spellings set to the same file there, every version
    /// reads that file.
    pub dropin: String,
    /// What each range of versions reads: 1.28 to 1.31 first, then 1.32 on.
    pub readings: Vec<VersionReading>,
}

/// The resolv.conf one range of kubelet versions reads.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VersionReading {
    /// `kubelet 1.28 to 1.31`, `kubelet 1.32 or later`.
    pub versions: String,
    pub resolv_conf: Effective<String>,
    /// That file, read from the node (symlinks followed); none where the setting is empty.
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
    /// The key the line assigns, where it is another name of the same setting
    /// (`net.ipv4.conf.all.forwarding` for `net.ipv4.ip_forward`, or a glob of it), or a
    /// key whose write sets it too (`net.ipv4.ip_forward` for
    /// `net.ipv4.conf.default.forwarding`: sysctl::SET_BY).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BrNetfilter {
    /// Loaded now (a module in /proc/modules, or built in: /proc/sys/net/bridge exists).
    pub loaded: Observed<bool>,
    /// Built into the kernel: the bridge sysctls exist while /proc/modules is absent (no
    /// module support) or does not list it. A built-in needs no modules-load.d entry.
    pub built_in: bool,
    pub evidence: String,
    /// Where boot loads it (`modules_load=` on the kernel command line, modules-load.d,
    /// /etc/modules), if anywhere.
    pub persisted: Option<Persisted>,
    /// What stops the boot loading it all the same (a modprobe.d deny-list, the kernel
    /// command line): empty where nothing does, and for a built-in one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub denied_at_boot: Vec<Deny>,
    /// What makes a plain `modprobe br_netfilter`, dnsfix's fix, fail or load nothing now:
    /// an `install` line, or the kernel's `module_blacklist=`, for it or a module it needs
    /// that is not loaded.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub denied_now: Vec<Deny>,
    /// The modprobe.d files that could not be read: whether they deny it is not known.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deny_unread: Vec<String>,
}

/// How a deny-list stops a module (see facts/modprobe_d.rs for kmod's rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DenyKind {
    /// `blacklist NAME` in a modprobe.d file: only where the blacklist is applied.
    Blacklist,
    /// `modprobe.blacklist=NAME` on the kernel command line: the same.
    CmdlineBlacklist,
    /// The kernel's `module_blacklist=NAME`: every load fails.
    KernelBlacklist,
    /// `install NAME` with a command that fails (`/bin/false`): every probe fails.
    InstallFails,
    /// `install NAME` with a command that succeeds without loading (`/bin/true`).
    InstallNoop,
}

/// A line that stops `module` loading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Deny {
    /// The module it names: br_netfilter, or a module it needs.
    pub module: String,
    pub kind: DenyKind,
    /// The file and line, or `/proc/cmdline`.
    pub path: String,
    pub line: usize,
    pub text: String,
}

impl Deny {
    /// `path:line` (`/proc/cmdline` alone) and the line.
    pub fn site(&self) -> String {
        if self.path == "/proc/cmdline" {
            format!("{} `{}`", self.path, self.text)
        } else {
            format!("{}:{} `{}`", self.path, self.line, self.text)
        }
    }

    /// What the line does to a load of `wanted` (the module asked for), in a few words.
    pub fn effect(&self, wanted: &str) -> String {
        let of = if self.module == wanted {
            self.module.clone()
        } else {
            format!("{}, which {wanted} needs", self.module)
        };
        match self.kind {
            DenyKind::Blacklist | DenyKind::CmdlineBlacklist => format!(
                "systemd-modules-load applies kmod's blacklist and skips {of} (\"Module '{}' is deny-listed (by kmod)\")",
                self.module
            ),
            DenyKind::KernelBlacklist => {
                format!("the kernel refuses to load {of} (Operation not permitted)")
            }
            DenyKind::InstallFails => {
                format!("kmod runs that command instead of loading {of}, and the load fails")
            }
            DenyKind::InstallNoop => format!(
                "kmod runs that command instead of loading {of}: the load reports success and loads nothing"
            ),
        }
    }

    /// [`Deny::site`] and [`Deny::effect`] as one line.
    pub fn describe(&self, wanted: &str) -> String {
        format!("{}: {}", self.site(), self.effect(wanted))
    }
}

/// The sysctls dnsfix looks at.
pub const SYSCTLS: &[&str] = &[
    "net.bridge.bridge-nf-call-iptables",
    "net.bridge.bridge-nf-call-ip6tables",
    "net.bridge.bridge-nf-call-arptables",
    "net.ipv4.ip_forward",
    // What an interface made after the boot starts with (sysctl::DEFAULT_FORWARDING).
    "net.ipv4.conf.default.forwarding",
    "net.ipv6.conf.all.forwarding",
];

/// Kubespray's `nodelocaldns_ip` default (roles/kubespray-defaults/defaults/main.yml).
pub const KUBESPRAY_NODELOCALDNS_IP: &str = "169.254.25.10";

/// Where the kernel shows the `nodelocaldns` interface.
pub const NODELOCALDNS_SYSFS: &str = "/sys/class/net/nodelocaldns";

/// An address of NodeLocal DNSCache's kind: IPv4 link-local, the cloud's metadata and DNS
/// endpoints (169.254.169.x: the hypervisor's, never an address of the node) left out.
/// node-cache may also hold the kube-dns Service's address on its interface
/// (`-localip LINK_LOCAL,SERVICE_IP`), which is not the cache's own.
pub fn is_node_local_address(address: &str) -> bool {
    address
        .parse::<std::net::Ipv4Addr>()
        .is_ok_and(|ip| ip.is_link_local() && ip.octets()[2] != 169)
}

pub(crate) const KUBESPRAY_ENV: &str = "/etc/kubernetes/kubelet.env";
pub(super) const KUBEADM_FLAGS: &str = "/var/lib/kubelet/kubeadm-flags.env";
/// nodeadm's kubelet flags (awslabs/amazon-eks-ami nodeadm internal/kubelet/environment.go).
pub(crate) const EKS_ENV: &str = "/etc/eks/kubelet/environment";
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
    /// Where the kubelet's resolv.conf is a file systemd-resolved keeps in
    /// `/run/systemd/resolve/` and systemd-resolved will not write it at the next boot
    /// ([`Services::resolved_gone_at_boot`]): `/run` is a tmpfs, emptied at every boot,
    /// so the file is there now and gone after the next reboot. The file's path (after its
    /// links). `None` where k3s/RKE2 chose the file
    /// themselves: they choose again at their next start, a file of their own when the
    /// systemd-resolved one is gone (DNS-K3S-FALLBACK says which). k0s's own choice
    /// already is its next start's.
    pub fn kubelet_resolv_left_by_resolved(&self) -> Option<&str> {
        if !self.services.resolved_gone_at_boot() {
            return None;
        }
        let Observed::Known(e) = &self.kubelet.resolv_conf else {
            return None;
        };
        if e.source.kind == "k3s_auto" {
            return None;
        }
        let f = self.kubelet.pod_resolv_conf.as_ref()?;
        let path = f.canonical.as_deref().unwrap_or(&f.path);
        (f.state == FileState::Present && in_resolved_run_dir(path)).then_some(path)
    }

    /// There is no `nodelocaldns` interface (NodeLocal DNSCache's dummy device): the gather
    /// looked and found none. Not where it was not asked.
    pub fn nodelocaldns_absent(&self) -> bool {
        self.nodelocaldns.is_none()
            && self
                .files
                .get(NODELOCALDNS_SYSFS)
                .is_some_and(|f| f.state == super::raw::FileState::Missing)
    }

    /// The gathered /proc/sys file of sysctl `name` (dot form); `None` when the gather did
    /// not read it.
    pub fn sysctl_live(&self, name: &str) -> Option<&RawFile> {
        self.files.get(&super::raw::sysctl_path(name))
    }

    /// Whether a DNS server answers UDP on port 53 of one of `addrs` in the node's network
    /// namespace: a socket bound there or to 0.0.0.0 (/proc/net/udp), or to `::`
    /// (/proc/net/udp6, which takes IPv4 too unless the socket is IPv6-only, which the
    /// table does not show: counted as answering). `None` where there is no address, or a
    /// table that could tell was not read whole; a missing /proc/net/udp6 (IPv6 off) has
    /// no sockets.
    pub fn dns_answers_on(
        &self,
        addrs: impl IntoIterator<Item = std::net::Ipv4Addr>,
    ) -> Option<bool> {
        use super::sockets;
        let whole = |path: &str| self.whole_text(path);
        let addrs: Vec<std::net::Ipv4Addr> = addrs.into_iter().collect();
        if addrs.is_empty() {
            return None;
        }
        let v4 = whole(sockets::UDP)?;
        if addrs.iter().any(|a| sockets::bound_53_v4(&v4, *a)) {
            return Some(true);
        }
        match self.files.get(sockets::UDP6) {
            Some(f) if f.state == super::raw::FileState::Missing => Some(false),
            _ => Some(sockets::bound_53_any6(&whole(sockets::UDP6)?)),
        }
    }

    /// The text of gathered file `path`, only where it was read whole (not cut at the
    /// gather's cap).
    pub fn whole_text(&self, path: &str) -> Option<std::borrow::Cow<'_, str>> {
        self.files
            .get(path)
            .filter(|f| !f.truncated)
            .and_then(|f| f.text())
    }

    /// Whether /proc/modules lists module `name`; `None` when it could not be read.
    pub fn module_loaded(&self, name: &str) -> Option<bool> {
        let modules = self.files.get("/proc/modules")?.text()?;
        Some(super::raw::modules_list(&modules, name))
    }
}

/// The gather's record of a systemctl call it stopped unanswered (body: the seconds it
/// waited): [`Services::systemctl_cut`].
pub(crate) const SYSTEMCTL_CUT: &str = "systemctl-cut";

/// The units `systemctl is-active` is asked about, in the order it answers: the resolvers,
/// the units that run a kubelet ([`KUBELET_UNITS`](crate::node_script::KUBELET_UNITS),
/// which gather.sh names), then systemd-networkd and firewalld.
pub(crate) fn units() -> impl Iterator<Item = &'static str> {
    ["systemd-resolved", "NetworkManager"]
        .into_iter()
        .chain(crate::node_script::KUBELET_UNITS.iter().copied())
        .chain(["systemd-networkd", "firewalld"])
}

/// Each unit's state, as `systemctl is-active` answered for [`units`] (one line per unit,
/// in order); none when it was not asked, or did not answer (stopped: what it printed
/// before is no answer). Where a later call was stopped, these answers still say which
/// unit runs the kubelet; the states the rules judge are then unknown
/// ([`Services::forget_states`]).
pub(crate) fn unit_states(raw: &RawFacts) -> BTreeMap<&'static str, UnitState> {
    let Some(cmd) = raw.commands.get("units") else {
        return BTreeMap::new();
    };
    if matches!(cmd.status, None | Some(124 | 137 | 143)) {
        return BTreeMap::new();
    }
    units()
        .zip(cmd.stdout.lines().chain(std::iter::repeat("")))
        .map(|(unit, state)| {
            let state = match state.trim() {
                "active" | "reloading" => UnitState::Active,
                "inactive" => UnitState::Inactive,
                "failed" => UnitState::Failed,
                "activating" | "deactivating" => UnitState::Activating,
                _ => UnitState::Unknown,
            };
            (unit, state)
        })
        .collect()
}
