//! [`NodeFacts::from_raw`]: derives the typed view of one node from its gathered files,
//! with the kubelet part from kubelet.rs. Pure: no I/O.
//!
//! The types live in node_facts.rs, below both this module and kubelet.rs, so the kubelet
//! derivation can build them without depending on the derivation that calls it.

use std::collections::BTreeMap;

use super::cni::Cni;
use super::kubelet::{EKS_CONFIG, K3S_CONFIG, KUBEADM_CONFIG, RKE2_CONFIG};
use super::kubelet_flags;
use super::modules_load;
use super::node_facts::{
    BrNetfilter, EKS_ENV, Files, Flavour, FlavourKind, HostResolver, KUBEADM_FLAGS, KUBESPRAY_ENV,
    NodeFacts, Observed, OsRelease, Persisted, ResolvFile, SYSCTLS, Services, SysctlFact,
    UnitState, unit_states,
};
use super::raw::{FileState, RawFacts, RawFile};
use super::sysctl;
use crate::node_script::KUBELET_UNITS;

impl NodeFacts {
    /// Interprets one node's raw gather output. Pure: no I/O.
    pub fn from_raw(host: &str, raw: &RawFacts) -> NodeFacts {
        NodeFacts::from_owned(host, raw.clone())
    }

    /// These facts again with the kubelet's `version` known from elsewhere (the cluster's
    /// node status, the inventory's kube_version) where the binary gave none: it decides
    /// how the `--config-dir` drop-ins merge (a drop-in's resolvConf spelling). The
    /// kubelet's own `version` stays `None`, as `kubelet --version` said nothing. Read
    /// only where it matters (the rules ask where a drop-in depends on it): the raw
    /// facts are copied.
    pub fn with_kubelet_version(&self, version: &str) -> NodeFacts {
        let mut raw = (*self.raw).clone();
        raw.commands.insert(
            super::kubelet::KNOWN_VERSION.to_owned(),
            super::raw::RawCommand {
                stdout: version.to_owned(),
                status: Some(0),
            },
        );
        // The record stays in the copy: a plan's prediction re-reads it.
        NodeFacts::from_owned(&self.host, raw)
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
        let states = unit_states(raw);
        let services = services(raw, &states);
        let flavour = flavour(raw, &services);
        let resolver = host_resolver(raw);
        let kubelet = super::kubelet::kubelet(raw, &flavour);
        // CRI-O, where the kubelet hands it pods, picks its network by name where its
        // configuration sets one.
        let on_crio = (kubelet.runtime_endpoint.as_ref()).is_some_and(|e| e.value.contains("crio"));
        let cni = if on_crio {
            crio_cni(raw)
        } else {
            Cni::from_raw(raw)
        };
        let mut services = services;
        // No kubelet-running unit is active (a stopped k3s or RKE2 node): the unit to
        // restart is the one installed, not a "kubelet" that does not exist there (nor a
        // stray one on a k3s or RKE2 node). RKE2's tarball installs both of its units: the
        // one that failed or is being restarted is this node's, else the first.
        let own: &[&str] = match flavour.kind {
            FlavourKind::K3s => &["k3s", "k3s-agent"],
            FlavourKind::Rke2 => &["rke2-server", "rke2-agent"],
            _ => &[],
        };
        if services.kubelet_unit == "kubelet" && (kubelet.unit.is_none() || !own.is_empty()) {
            let installed: Vec<&str> = KUBELET_UNITS
                .iter()
                .copied()
                .filter(|u| *u != "kubelet" && (own.is_empty() || own.contains(u)))
                .filter(|u| {
                    super::systemd_unit::ServiceUnit::from_raw(raw, &format!("{u}.service"))
                        .is_some()
                })
                .collect();
            let trying = installed.iter().find(|u| {
                matches!(
                    states.get(**u),
                    Some(UnitState::Failed | UnitState::Activating)
                )
            });
            if let Some(unit) = trying.or(installed.first()) {
                services.kubelet_unit = (*unit).to_owned();
            }
        }
        // A k0s that runs no kubelet now: the unit to restart is the one that starts k0s.
        if flavour.kind == FlavourKind::K0s
            && services.kubelet_unit == "kubelet"
            && let Some(k0s) = super::k0s::installed(raw)
        {
            services.kubelet_unit = k0s.unit.name.trim_end_matches(".service").to_owned();
        }
        // MicroK8s's kubelet is kubelite's, whatever state its unit is in (failed,
        // restarting): there is no "kubelet" unit to restart on such a node.
        if flavour.kind == FlavourKind::MicroK8s && services.kubelet_unit == "kubelet" {
            services.kubelet_unit = super::microk8s::UNIT.to_owned();
        }
        // A k0s controller runs a kubelet only with --enable-worker, and then dnsfix sees a
        // k0s node: without one, its unit is no kubelet's (restarting it would restart the
        // control plane, and no kubelet would answer the health gate).
        if services.kubelet_unit == "k0scontroller" && flavour.kind != FlavourKind::K0s {
            services.kubelet_unit = "kubelet".to_owned();
        }
        services.kubelet_unit_state = states
            .get(services.kubelet_unit.as_str())
            .copied()
            .unwrap_or(UnitState::Unknown);
        if services.systemctl_cut.is_some() {
            services.forget_states();
        }
        let boot_id = text("/proc/sys/kernel/random/boot_id").map(|t| t.trim().to_owned());
        NodeFacts {
            host: host.to_owned(),
            hostname: text("/proc/sys/kernel/hostname").map(|t| t.trim().to_owned()),
            os: text("/etc/os-release").map(|t| os_release(&t)),
            pending_restarts: super::restart_due::pending_restarts(
                raw,
                boot_id.as_deref(),
                // The process that runs the kubelet, which the unit's restart replaces.
                ["kubelet", "k3s", "kubelite"]
                    .iter()
                    .find_map(|name| raw.pids.get(*name).copied()),
            ),
            boot_id,
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
            cni,
            firewalld: super::firewalld::Firewalld::from_raw(raw),
            pending_restarts_unread: super::restart_due::marks_unread(raw),
            run_in_progress: super::restart_due::lock_holder(raw),
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

fn services(raw: &RawFacts, states: &BTreeMap<&'static str, UnitState>) -> Services {
    let get = |u: &str| states.get(u).copied().unwrap_or(UnitState::Unknown);
    let either = |a: UnitState, b: UnitState| if b == UnitState::Active { b } else { a };
    Services {
        systemd_resolved: get("systemd-resolved"),
        systemd_resolved_enabled: first_line(raw, "resolved-enabled"),
        network_manager: get("NetworkManager"),
        network_manager_enabled: network_manager_enabled(raw),
        systemd_networkd: get("systemd-networkd"),
        firewalld: get("firewalld"),
        firewalld_enabled: first_line(raw, "firewalld-enabled"),
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
        kubelet_unit_state: UnitState::Unknown,
        systemctl_cut: first_line(raw, super::node_facts::SYSTEMCTL_CUT)
            .and_then(|s| s.trim().parse().ok()),
    }
}

/// The wants link `systemctl enable NetworkManager` makes (its `[Install]` section:
/// `WantedBy=multi-user.target`, data/NetworkManager.service.in @355bc902, the same at 1.22.0).
pub const NM_WANTS: &str = super::raw::NM_UNIT_LINKS[0];

/// Whether NetworkManager starts at boot, from the links gather.sh looked at where
/// /etc/NetworkManager is there ([`Services::network_manager_enabled`]). A mask (a link to
/// /dev/null in /etc or /run) beats the wants links (`systemctl enable`'s in /etc,
/// `--runtime`'s in /run). systemd pulls the unit in by the link's name and loads it from
/// its unit path, so a wants link to nothing counts where a unit file of that name is
/// there (/etc, /run, /usr/lib, /lib), and is `not-found` where none is (a removed
/// package's leftover link).
fn network_manager_enabled(raw: &RawFacts) -> Option<String> {
    use super::raw::NM_UNIT_LINKS as L;
    raw.files.get(NM_WANTS)?;
    let get = |paths: &[&str]| -> Vec<&super::raw::RawFile> {
        paths.iter().filter_map(|p| raw.files.get(*p)).collect()
    };
    let is_mask = |f: &super::raw::RawFile| f.symlink_target.as_deref() == Some("/dev/null");
    let is_link =
        |f: &&super::raw::RawFile| f.state != FileState::Missing || f.symlink_target.is_some();
    let wants = get(&[L[0], L[3]]);
    // What lives in /run is gone after a reboot: systemctl says `masked-runtime` and
    // `enabled-runtime` for a mask or a wants link there alone.
    let lasting = raw.files.get(L[0]).is_some_and(|f| is_link(&f));
    let linked = wants.iter().any(is_link);
    let unit = wants.iter().any(|f| f.state == FileState::Present)
        || get(&[L[1], L[2], L[4], L[5]])
            .into_iter()
            .any(|f| f.state == FileState::Present && !is_mask(f));
    let state = if get(&[L[1]]).into_iter().any(is_mask) {
        "masked"
    } else if get(&[L[2]]).into_iter().any(is_mask) {
        "masked-runtime"
    } else {
        match (linked, unit, lasting) {
            (true, true, true) => "enabled",
            (true, true, false) => "enabled-runtime",
            (true, false, _) => "not-found",
            (false, _, _) => "disabled",
        }
    };
    Some(state.to_owned())
}

/// The first line a command record printed, where it printed one.
fn first_line(raw: &RawFacts, name: &str) -> Option<String> {
    raw.commands
        .get(name)
        .and_then(|c| c.stdout.lines().next())
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
}

fn present(raw: &RawFacts, path: &str) -> bool {
    raw.get(path).is_some_and(|f| f.state == FileState::Present)
}

fn flavour(raw: &RawFacts, services: &Services) -> Flavour {
    let found = |kind, evidence: &str| Flavour {
        kind,
        evidence: Some(evidence.to_owned()),
    };
    // A kubelet k0s runs now outweighs any installer's file or unit left on the node.
    if let Some(evidence) = k0s_kubelet(raw) {
        return found(FlavourKind::K0s, &evidence);
    }
    // So does a running kubelite (MicroK8s).
    if let Some((pid, file)) = super::microk8s::kubelite(raw) {
        let shown = file.map_or_else(String::new, |f| format!(": --kubelet-args-file={f}"));
        return found(
            FlavourKind::MicroK8s,
            &format!("/proc/{pid}/cmdline{shown}"),
        );
    }
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
    // So does k0s's: a unit that starts a k0s worker (k0s supervises the kubelet itself),
    // where no kubelet runs (a kubelet that runs here and is not k0s's is another's).
    if !raw.pids.contains_key("kubelet")
        && let Some(k0s) = super::k0s::installed(raw)
    {
        return found(FlavourKind::K0s, &k0s.evidence());
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
    // A stopped MicroK8s: the arguments file of the snap's current revision.
    if let Some(file) = super::microk8s::args_file(raw) {
        return found(FlavourKind::MicroK8s, &file);
    }
    Flavour {
        kind: FlavourKind::Unknown,
        evidence: None,
    }
}

/// The running kubelet, when k0s runs it: k0s starts it as `<data dir>/bin/kubelet`
/// (`/var/lib/k0s` unless `--data-dir` says otherwise) with `--config=` the file it writes
/// at every k0s start: `/run/k0s/kubelet/config.yaml` (as root) since 1.32.1, and
/// `<data dir>/kubelet-config.yaml` before (k0s pkg/component/worker/kubelet.go,
/// pkg/config/cfgvars.go, commit 213969007b). What gives it away, as evidence.
fn k0s_kubelet(raw: &RawFacts) -> Option<String> {
    const DEFAULT_BINARY: &str = "/var/lib/k0s/bin/kubelet";
    let path = format!("/proc/{}/cmdline", raw.pids.get("kubelet")?);
    let cmdline = &raw
        .get(&path)
        .filter(|f| f.state == FileState::Present)?
        .content;
    let binary = String::from_utf8_lossy(cmdline.split(|byte| *byte == 0).next()?);
    let flags = kubelet_flags::cmdline_flags(cmdline);
    let config = kubelet_flags::last_flag(&flags, "config").and_then(|f| f.value.clone());
    // Before 1.32.1 the config sat in the data directory, beside its bin/.
    let beside = |config: &str| {
        let data_dir = binary.strip_suffix("/bin/kubelet");
        data_dir.is_some_and(|d| config == format!("{d}/kubelet-config.yaml"))
    };
    let shown = match config {
        _ if binary == DEFAULT_BINARY => binary.into_owned(),
        Some(c) if c.starts_with("/run/k0s/") || beside(&c) => c,
        _ => return None,
    };
    Some(format!("{path}: {shown}"))
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
    let files = raw.config_files(&sysctl::SYSCTL_DIRS, sysctl::SYSCTL_CONF);
    let persisted = sysctl::persisted_files(&files, sysctl::booted_by_systemd(raw));
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
                key: p.key.clone(),
            });
            ((*key).to_owned(), SysctlFact { live, persisted })
        })
        .collect()
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
    let files = raw.config_files(
        &super::modules_load::MODULES_LOAD_DIRS,
        super::modules_load::ETC_MODULES,
    );
    let inputs: Vec<(String, &str)> = files
        .iter()
        .map(|(p, t, _)| (p.clone(), t.as_str()))
        .collect();
    let systemd = sysctl::booted_by_systemd(raw);
    let cmdline = super::kernel_cmdline::KernelCmdline::from_raw(raw);
    // systemd-modules-load loads what the command line names before any file's.
    let on_cmdline = systemd
        .then(|| cmdline.modules_load("br_netfilter"))
        .flatten()
        .map(|_| Persisted {
            value: "br_netfilter".into(),
            path: super::kernel_cmdline::PROC_CMDLINE.into(),
            line: 1,
            key: None,
        });
    let persisted = on_cmdline.or_else(|| {
        modules_load::persisted_modules(&inputs, systemd)
            .get("br_netfilter")
            .map(|(path, line)| Persisted {
                value: "br_netfilter".into(),
                path: path.clone(),
                line: *line,
                key: None,
            })
    });
    let (denied_at_boot, denied_now, deny_unread) = if built_in {
        Default::default()
    } else {
        br_netfilter_denials(raw)
    };
    BrNetfilter {
        loaded,
        built_in,
        evidence,
        persisted,
        denied_at_boot,
        denied_now,
        deny_unread,
    }
}

/// What stops br_netfilter, or a module it needs (they load first), loading at boot and
/// now ([`super::modprobe_d::module_denials`]), a module in /proc/modules being loaded.
fn br_netfilter_denials(raw: &RawFacts) -> super::modprobe_d::Denials {
    use super::modprobe_d::BR_NETFILTER_DEPS;
    let chain: Vec<&str> = std::iter::once("br_netfilter")
        .chain(BR_NETFILTER_DEPS)
        .collect();
    let modules = raw.get("/proc/modules").and_then(RawFile::text);
    let loaded = |m: &str| {
        modules
            .as_deref()
            .is_some_and(|text| super::raw::modules_list(text, m))
    };
    super::modprobe_d::module_denials(raw, &chain, &loaded)
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

/// The network of a CRI-O node. Where its settings leave only the name uncertain, the
/// network of the files stands, its bridge not known; where they may move the directory
/// CRI-O reads, nothing of /etc/cni/net.d does. A configuration file not read whole
/// ([`super::crio_config::CrioFiles::from_raw`]'s error) may set either, so it leaves the
/// directory unknown whatever the unit says. CRI-O's unit overrides the files (internal/criocli/
/// criocli.go @f954a17e `mergeConfig`: the files, then each flag that is set): where it sets
/// `cni-default-network`, that names the network over the files' setting, "" taking the
/// first file by name; where it sets `cni-config-dir` to /etc/cni/net.d, the files'
/// `network_dir` counts for nothing ([`super::crio_config::unit_options`]); a flag of its
/// command line that dnsfix does not know is said.
fn crio_cni(raw: &RawFacts) -> Cni {
    use super::crio_config::{CrioFiles, CrioNetwork, CrioUnknown, unit_options};
    let files = CrioFiles::from_raw(raw);
    let unit = unit_options(raw);
    let options = unit.as_ref().ok();
    let set = options.and_then(|u| u.network.as_ref());
    let named: Result<Option<&CrioNetwork>, CrioUnknown> = match &files {
        Err(why) => Err(CrioUnknown::Directory(why.clone())),
        Ok(files) => match (&files.directory, set, &files.network) {
            (Err(why), ..) if options.is_none_or(|u| u.network_dir.is_none()) => {
                Err(CrioUnknown::Directory(why.clone()))
            }
            (_, Some(set), _) => Ok(Some(set).filter(|n| !n.default_network.is_empty())),
            (_, None, Ok(named)) => Ok(named.as_ref()),
            (_, None, Err(why)) => Err(CrioUnknown::Name(why.clone())),
        },
    };
    let mut cni = Cni::for_runtime(raw, named.as_ref().ok().copied().flatten());
    if let (Some(set), Some(_)) = (set, &cni.config)
        && set.default_network.is_empty()
    {
        cni.pod_bridge = cni.pod_bridge.because(&format!(
            "the first file by name: {} to \"\", which CRI-O takes over its files' cni_default_network",
            set.at
        ));
    }
    if let Ok(options) = &unit
        && !options.unknown_flags.is_empty()
    {
        cni.pod_bridge = cni.pod_bridge.because(&format!(
            "CRI-O's command line has flags dnsfix does not know, taken as flags with a value: {}",
            options.unknown_flags.join(", ")
        ));
    }
    // The directory's uncertainty, the unit's included, before the name's.
    let unknown = match (named.err(), unit.err()) {
        (Some(CrioUnknown::Name(_)) | None, Some(directory)) => Some(directory),
        (named, _) => named,
    };
    match unknown {
        Some(CrioUnknown::Name(why)) => cni.crio_unknown(why),
        Some(CrioUnknown::Directory(why)) => Cni::crio_elsewhere(why),
        None => cni,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cut after `is-active` answered still reads the kubelet of the unit that runs: on
    /// an RKE2 agent (both units installed), rke2-agent's settings, not rke2-server's, which
    /// the first installed unit would have given.
    #[test]
    fn a_cut_after_is_active_keeps_the_unit_that_runs_the_kubelet() {
        let mut raw = crate::testing::rules_fixture("_upstream/rke2-stub-loop");
        crate::testing::set_units(&mut raw, &[("rke2-agent", "active")]);
        crate::testing::replace_in_file(
            &mut raw,
            "/usr/local/lib/systemd/system/rke2-agent.service",
            "ExecStart=/usr/local/bin/rke2 agent",
            "ExecStart=/usr/local/bin/rke2 agent --resolv-conf=/run/systemd/resolve/resolv.conf",
        );
        let told = NodeFacts::from_raw("node1", &raw);
        crate::testing::set_command(&mut raw, "firewalld-enabled", "", 124);
        crate::testing::set_command(&mut raw, "systemctl-cut", "10\n", 0);
        let cut = NodeFacts::from_raw("node1", &raw);
        assert_eq!(told.services.kubelet_unit, "rke2-agent");
        assert_eq!(cut.services.kubelet_unit, "rke2-agent");
        assert_eq!(cut.services.kubelet_unit_state, UnitState::Unknown);
        assert_eq!(
            format!("{:?}", cut.kubelet.resolv_conf),
            format!("{:?}", told.kubelet.resolv_conf)
        );
        assert!(
            format!("{:?}", cut.kubelet.resolv_conf).contains("/run/systemd/resolve/resolv.conf"),
            "{:?}",
            cut.kubelet.resolv_conf
        );
    }

    /// Where a systemctl call was stopped unanswered, every unit's state is unknown, even
    /// those `is-active` told before the cut (a stopped unit beside an `is-enabled` systemd
    /// did not answer would read as one that stays stopped); an `is-enabled` answered before
    /// it stands, and the seconds waited are kept.
    #[test]
    fn a_cut_systemctl_leaves_every_state_unknown() {
        let mut raw = crate::testing::raw_from(&[]);
        let states: String = super::super::node_facts::units()
            .map(|u| {
                if u == "systemd-resolved" {
                    "inactive\n"
                } else {
                    "active\n"
                }
            })
            .collect();
        crate::testing::set_command(&mut raw, "units", &states, 3);
        crate::testing::set_command(&mut raw, "resolved-enabled", "enabled\n", 0);
        let told = NodeFacts::from_raw("node1", &raw);
        assert_eq!(told.services.systemd_resolved, UnitState::Inactive);
        assert_eq!(told.services.kubelet, UnitState::Active);
        assert_eq!(told.services.systemctl_cut, None);
        crate::testing::set_command(&mut raw, "firewalld-enabled", "", 124);
        crate::testing::set_command(&mut raw, "systemctl-cut", "10\n", 0);
        let cut = NodeFacts::from_raw("node1", &raw);
        assert_eq!(cut.services.systemd_resolved, UnitState::Unknown);
        assert_eq!(cut.services.kubelet, UnitState::Unknown);
        assert_eq!(cut.services.kubelet_unit_state, UnitState::Unknown);
        assert_eq!(
            cut.services.systemd_resolved_enabled.as_deref(),
            Some("enabled")
        );
        assert_eq!(cut.services.firewalld_enabled, None);
        assert_eq!(cut.services.systemctl_cut, Some(10));
    }

    /// The wants link `systemctl enable` makes counts whatever it leads to where a unit file
    /// of the name is on the unit path (systemd pulls the unit in by the link's name), and
    /// is not-found where none is; `--runtime`'s in /run alone is enabled-runtime, gone at
    /// the next boot; a mask in /etc beats it, one in /run alone is masked-runtime; nothing
    /// looked at (no /etc/NetworkManager) says nothing.
    #[test]
    fn network_manager_starts_at_boot_as_its_unit_links_say() {
        use super::super::raw::NM_UNIT_LINKS as L;
        let [wants, etc, run, runtime, vendor] = [L[0], L[1], L[2], L[3], L[4]];
        let mut raw = RawFacts::default();
        assert_eq!(network_manager_enabled(&raw), None);
        raw.file(wants, FileState::Missing, None);
        assert_eq!(network_manager_enabled(&raw).as_deref(), Some("disabled"));
        // `systemctl enable --runtime`: a link in /run to the vendor's unit file, gone after
        // a reboot.
        raw.file(runtime, FileState::Present, None);
        assert_eq!(
            network_manager_enabled(&raw).as_deref(),
            Some("enabled-runtime")
        );
        raw.file(runtime, FileState::Missing, None);
        raw.files.get_mut(wants).expect("file").symlink_target =
            Some("/usr/lib/systemd/system/gone.service".into());
        // A link to nothing, and no unit file of the name: nothing starts.
        assert_eq!(network_manager_enabled(&raw).as_deref(), Some("not-found"));
        raw.file(vendor, FileState::Present, Some(b"[Unit]\n"));
        assert_eq!(network_manager_enabled(&raw).as_deref(), Some("enabled"));
        raw.file(wants, FileState::Present, None);
        assert_eq!(network_manager_enabled(&raw).as_deref(), Some("enabled"));
        // A unit file of the admin's own in /etc is no mask.
        raw.file(etc, FileState::Present, Some(b"[Service]\n"));
        assert_eq!(network_manager_enabled(&raw).as_deref(), Some("enabled"));
        raw.file(run, FileState::Present, Some(b""));
        raw.files.get_mut(run).expect("file").symlink_target = Some("/dev/null".into());
        assert_eq!(
            network_manager_enabled(&raw).as_deref(),
            Some("masked-runtime")
        );
        raw.file(etc, FileState::Present, Some(b""));
        raw.files.get_mut(etc).expect("file").symlink_target = Some("/dev/null".into());
        assert_eq!(network_manager_enabled(&raw).as_deref(), Some("masked"));
    }
}
