//! Where the kubelet really gets its DNS settings, derived from the gathered files: owns the
//! [`Kubelet`] part of [`NodeFacts`](super::NodeFacts). Pure: no I/O.
//!
//! The command line comes from the running process (`/proc/PID/cmdline`) when a kubelet
//! runs, else from the systemd unit that starts it (see [`ServiceUnit`]); only when neither
//! is there does dnsfix fall back to the env files installers are known to write. The config
//! file is the one that command line names with `--config` (kubeadm: `KUBELET_CONFIG_ARGS`
//! in `10-kubeadm.conf`; EKS nodeadm: JSON `/etc/kubernetes/kubelet/config.json`), with the
//! `--config-dir` drop-ins merged over it (every `*.conf` at any depth, in the order the
//! kubelet's `filepath.WalkDir` reaches them, KEP-3983); a command line
//! known to have no `--config` means no config file at all (kubeadm 1.10 and earlier ran on
//! flags alone). A flag beats the config (kubernetes/website kubelet-config-file.md).
//!
//! k3s and RKE2 choose the kubelet's resolv.conf themselves (k3s `pkg/agent/config`): an
//! explicit `--resolv-conf` on the service's command line, else `resolv-conf` (or a
//! `kubelet-arg: resolv-conf=`) in `config.yaml` and `config.yaml.d/*.yaml` (name order,
//! later wins), else `K3S_RESOLV_CONF`/`RKE2_RESOLV_CONF` from the service's environment
//! files, else the first of /etc/resolv.conf and systemd's uplink file whose nameservers are
//! all global unicast (or, from k3s-io/k3s#12692 on, GCP's metadata server), else a
//! generated file with 8.8.8.8 (and, from that change on, 2001:4860:4860::8888).

use super::k0s;
use super::k3s_config::K3sConfig;
use super::kubelet_config::{KubeletConfig, Located};
use super::kubelet_flags::{self, EnvFile, Flag};
use super::microk8s;
use super::node_facts::{
    Effective, FlagFact, Flavour, FlavourKind, KUBELET_ENV_FILES, Kubelet, Observed,
    ResolvConfByVersion, ResolvFile, Shadowed, Source, VersionReading,
};
use super::raw::{FileState, RawFacts, RawFile};
use super::systemd_unit::{At, ServiceUnit};

pub(super) const KUBESPRAY_CONFIG: &str = "/etc/kubernetes/kubelet-config.yaml";
pub(super) const KUBEADM_CONFIG: &str = "/var/lib/kubelet/config.yaml";
pub(super) const K3S_CONFIG: &str = "/etc/rancher/k3s/config.yaml";
pub(super) const RKE2_CONFIG: &str = "/etc/rancher/rke2/config.yaml";
pub(super) const EKS_CONFIG: &str = "/etc/kubernetes/kubelet/config.json";
/// The flags dnsfix cares about.
const DNS_FLAGS: &[&str] = &[
    "resolv-conf",
    "cluster-dns",
    "cluster-domain",
    "config",
    "config-dir",
    // The node's name: which of the cluster's DNS pods run on it (cluster::node_names).
    "hostname-override",
    // The container runtime, which decides what a CNI file it cannot load does (Cni::refused).
    "container-runtime-endpoint",
];

/// The kubelet's command line as declared on disk: the unit's (authoritative: what systemd
/// runs) or, without a unit, the flags of the env files installers write.
struct Declared {
    flags: Vec<FlagFact>,
    /// The whole command line is known, so a flag that is not on it is not set.
    complete: bool,
    unit: Option<ServiceUnit>,
    /// Why the unit's command line cannot be known (an unreadable environment file, ...).
    problem: Option<String>,
}

fn flag_fact(flag: Flag, at: &At, var: Option<&str>) -> FlagFact {
    FlagFact {
        name: flag.name,
        value: flag.value,
        source: Source {
            detail: var.map(str::to_owned),
            ..Source::new("flag", Some(&at.path), Some(at.line))
        },
    }
}

fn declared(raw: &RawFacts) -> Declared {
    if let Some(unit) = ServiceUnit::from_raw(raw, "kubelet.service")
        && !unit.argv.is_empty()
        && unit.problem.is_none()
    {
        let flags = unit
            .flags()
            .into_iter()
            .map(|(flag, at, var)| flag_fact(flag, &at, var.as_deref()))
            .collect();
        return Declared {
            flags,
            complete: true,
            unit: Some(unit),
            problem: None,
        };
    }
    let unit = ServiceUnit::from_raw(raw, "kubelet.service");
    Declared {
        flags: env_flags(raw),
        complete: false,
        problem: unit.as_ref().and_then(|u| u.problem.clone()),
        unit,
    }
}

/// Flags from the env files installers write, in command-line order, with file and line:
/// the fallback when no unit file says how the kubelet is started.
fn env_flags(raw: &RawFacts) -> Vec<FlagFact> {
    let mut out = Vec::new();
    for (path, vars) in KUBELET_ENV_FILES {
        let Some(text) = raw.get(path).and_then(RawFile::text) else {
            continue;
        };
        let env = EnvFile::parse(&text);
        for var in *vars {
            // The last valid assignment is the one systemd uses (`export X=` lines are not).
            let Some(v) = env.get(var) else {
                continue;
            };
            for flag in kubelet_flags::flags(&v.value, v.line) {
                let at = At {
                    path: (*path).to_owned(),
                    line: flag.line,
                };
                out.push(flag_fact(flag, &at, Some(var)));
            }
        }
    }
    out
}

/// Whether the binary the version was asked of, the running kubelet's `/proc/PID/exe`, was
/// replaced on disk since it started: the link reads `PATH (deleted)`. (k3s runs its
/// kubelet from the copy it unpacks into its data directory, which an upgrade leaves in
/// place: there it stays false.)
fn binary_replaced(raw: &RawFacts) -> bool {
    raw.commands
        .get("kubelet-exe")
        .is_some_and(|c| c.stdout.trim_end_matches('\n').ends_with(" (deleted)"))
}

/// The kubelet's version as `kubelet --version` printed it ("Kubernetes v1.29.3"), or as
/// k3s/RKE2 print theirs ("k3s version v1.33.3+k3s1 (236cbf25)").
fn version(raw: &RawFacts) -> Option<String> {
    version_in(raw, "kubelet-version")
}

/// The record [`crate::facts::NodeFacts::with_kubelet_version`] keeps a version the binary
/// did not give in (the cluster's or the inventory's): the gather writes no such record.
pub(crate) const KNOWN_VERSION: &str = "kubelet-version-known";

/// The version that decides how the `--config-dir` drop-ins merge: the binary's, else the
/// one the rules know ([`KNOWN_VERSION`]).
fn config_version(raw: &RawFacts) -> Option<String> {
    version(raw).or_else(|| version_in(raw, KNOWN_VERSION))
}

/// The version of the k3s/RKE2 here, which decides their own choices: the binary's, else
/// one the rules know ([`KNOWN_VERSION`]) that names a k3s or RKE2 build, as their kubelets
/// report it to the cluster ("v1.28.5+k3s1", "v1.30.2+rke2r1"); an inventory's plain
/// kube_version says nothing of the k3s release.
fn rancher_version(raw: &RawFacts) -> Option<String> {
    version(raw).or_else(|| {
        version_in(raw, KNOWN_VERSION).filter(|v| v.contains("+k3s") || v.contains("+rke2"))
    })
}

fn version_in(raw: &RawFacts, record: &str) -> Option<String> {
    let out = &raw.commands.get(record)?.stdout;
    out.split_whitespace()
        .find(|w| {
            w.strip_prefix('v')
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        })
        .map(str::to_owned)
}

pub(super) fn kubelet(raw: &RawFacts, flavour: &Flavour) -> Kubelet {
    let mut kubelet = kubelet_settings(raw, flavour);
    open_relative_resolv_conf(raw, &mut kubelet);
    kubelet
}

/// The file the kubelet opens for a relative `resolvConf`. The config file's is resolved
/// against that file's directory as the kubelet loads it (configfiles.go `Load`:
/// `resolveRelativePaths` over `KubeletConfigurationPathRefs`, `ResolverConfig` among
/// them, with `filepath.Join`, which cleans the result). A flag's (k3s's and RKE2's
/// `resolv-conf` is one) or a drop-in's (merged as JSON, its paths as written) is opened
/// from the kubelet's working directory, which dnsfix does not read; a stopped k0s's worker
/// profile's goes into the config k0s writes at its next start, against whose directory
/// it is resolved then: unknown, never a file of the same name elsewhere.
fn open_relative_resolv_conf(raw: &RawFacts, kubelet: &mut Kubelet) {
    let Observed::Known(e) = &mut kubelet.resolv_conf else {
        return;
    };
    if e.value.is_empty() || e.value.starts_with('/') {
        return;
    }
    let config_dir = kubelet
        .config_path
        .as_deref()
        .filter(|p| p.starts_with('/') && e.source.kind == "config")
        .filter(|p| e.source.path.as_deref() == Some(*p))
        .and_then(|p| p.rsplit_once('/'))
        .map(|(dir, _)| dir);
    match config_dir {
        Some(dir) => {
            let path = super::node_facts::go_clean(&format!("{dir}/{}", e.value));
            let note = format!("a relative path: the kubelet opens {path}");
            e.source.detail = Some(match e.source.detail.take() {
                Some(d) => format!("{note}; {d}"),
                None => note,
            });
            kubelet.pod_resolv_conf = Some(ResolvFile::read(raw, &path));
        }
        None => {
            kubelet.resolv_conf = Observed::Unknown(format!(
                "{} sets resolvConf to the relative path {:?}, which the kubelet opens from a \
                 directory dnsfix does not know (its working directory; for a stopped k0s, that \
                 of the config k0s writes at its next start)",
                e.source.at(),
                e.value
            ));
            kubelet.pod_resolv_conf = None;
        }
    }
}

/// The kubelet's DNS settings as its flags, config files and installer set them.
fn kubelet_settings(raw: &RawFacts, flavour: &Flavour) -> Kubelet {
    if flavour.kind == FlavourKind::MicroK8s {
        return microk8s_kubelet(raw, flavour);
    }
    let pid = raw.pids.get("kubelet").copied();
    let declared = declared(raw);
    // The running process is the truth about flags; the unit (or env files) say what the
    // next start uses. A flag also found, same value, in those files is shown from there.
    // A kubelet that is exiting (a zombie, or one being restarted right now) still has its
    // name but no command line: it says nothing about the flags, so the unit or the env
    // files speak for it as for a stopped kubelet.
    let cmdline = pid.and_then(|p| {
        let path = format!("/proc/{p}/cmdline");
        raw.get(&path)
            .filter(|f| f.state == FileState::Present && !f.content.is_empty())
            .map(|f| (path, f.content.clone()))
    });
    let running = cmdline.is_some();
    // k0s runs no kubelet now: its next start decides.
    if flavour.kind == FlavourKind::K0s
        && !running
        && let Some(installed) = k0s::installed(raw)
    {
        return k0s_next_kubelet(raw, &installed);
    }
    let flags: Vec<FlagFact> = match cmdline {
        Some((path, cmdline)) => running_flags(&path, &cmdline, &declared.flags),
        None => declared.flags.clone(),
    };
    let dns_flags: Vec<FlagFact> = flags
        .iter()
        .filter(|f| DNS_FLAGS.contains(&f.name.as_str()))
        .cloned()
        .collect();
    let unit = declared
        .unit
        .as_ref()
        .and_then(|u| u.files().next().map(str::to_owned));
    let mut kubelet = match flavour.kind {
        FlavourKind::K3s | FlavourKind::Rke2 => rancher_kubelet(raw, flavour, pid, dns_flags),
        _ => plain_kubelet(
            raw,
            flavour,
            pid,
            &flags,
            dns_flags,
            running || declared.complete,
            unit.is_some(),
        ),
    };
    kubelet.unit = unit;
    kubelet.version = version(raw);
    kubelet.binary_replaced = binary_replaced(raw);
    // A stopped kubelet whose unit cannot be read in full: its settings are unknown, not
    // whatever the readable part says.
    if let (false, Some(problem)) = (running, &declared.problem)
        && !matches!(flavour.kind, FlavourKind::K3s | FlavourKind::Rke2)
    {
        settings_unknown(&mut kubelet, problem);
    }
    if !running
        && let Some(why) = alpha_config_dir_refused(&kubelet, &flags, declared.unit.as_ref())
    {
        settings_unknown(&mut kubelet, &why);
    }
    kubelet
}

/// The running kubelet's flags (`cmdline`, read from `path`), each shown from where the
/// unit or the env files write it with the same value: the n-th such flag on the command
/// line from the n-th place that writes it (a flag written twice alike, in an env file and
/// in a unit drop-in, is two flags of two places), else from the last; from `path` where
/// nothing writes it.
fn running_flags(path: &str, cmdline: &[u8], declared: &[FlagFact]) -> Vec<FlagFact> {
    let flags = kubelet_flags::cmdline_flags(cmdline);
    let mut out: Vec<FlagFact> = Vec::with_capacity(flags.len());
    for flag in flags {
        let alike = |e: &&FlagFact| e.name == flag.name && e.value == flag.value;
        let nth = out.iter().filter(alike).count();
        let places: Vec<&FlagFact> = declared.iter().filter(alike).collect();
        let source = places
            .get(nth)
            .or(places.last())
            .map(|e| e.source.clone())
            .unwrap_or_else(|| Source::new("flag", Some(path), None));
        out.push(FlagFact {
            name: flag.name,
            value: flag.value,
            source,
        });
    }
    out
}

/// Why a stopped kubelet 1.28 or 1.29 will not start with its `--config-dir`: there the
/// flag is alpha, and the kubelet refuses it unless its environment has
/// KUBELET_CONFIG_DROPIN_DIR_ALPHA (any value; kubelet-config-file.md, KEP-3983; EKS's
/// nodeadm sets it). Its settings are then those of no running kubelet.
fn alpha_config_dir_refused(
    kubelet: &Kubelet,
    flags: &[FlagFact],
    unit: Option<&ServiceUnit>,
) -> Option<String> {
    let dir = last_valued(flags, "config-dir")?;
    let minor = kubelet.version.as_deref().and_then(version_minor)?;
    let unit = unit?;
    if !(28..=29).contains(&minor)
        || unit
            .environment
            .contains_key("KUBELET_CONFIG_DROPIN_DIR_ALPHA")
    {
        return None;
    }
    Some(format!(
        "{} gives kubelet 1.{minor} --config-dir={}, which it refuses without KUBELET_CONFIG_DROPIN_DIR_ALPHA in its environment (not set by {}): the kubelet does not start",
        dir.source.at(),
        dir.value.as_deref().unwrap_or_default(),
        unit.name
    ))
}

/// The kubelet k0s will start (see [`k0s`]): the service's `--kubelet-extra-args` over
/// the worker profile it last fetched, and k0s's own choice of resolv.conf where neither
/// sets one. Without that profile the settings it could hold are unknown, never guessed;
/// so are they where the extra args hand the kubelet an argument it refuses
/// ([`k0s::Installed::refused`]): it never starts.
fn k0s_next_kubelet(raw: &RawFacts, installed: &k0s::Installed) -> Kubelet {
    let flags: Vec<FlagFact> = installed
        .extra_flags()
        .into_iter()
        .filter(|f| DNS_FLAGS.contains(&f.name.as_str()))
        .collect();
    let profile_path = installed.profile_path();
    // A --config in the extra args replaces the config k0s writes; a --config-dir merges
    // drop-ins over it. Either way what the kubelet reads is not what k0s wrote.
    let replaced = flags
        .iter()
        .find(|f| f.name == "config" || f.name == "config-dir")
        .map(|f| {
            format!(
                "{}: --kubelet-extra-args give the kubelet --{}={} over k0s's own config, which dnsfix does not follow",
                f.source.at(),
                f.name,
                f.value.as_deref().unwrap_or_default()
            )
        });
    let profile = match replaced {
        Some(why) => Err(why),
        None => installed.profile_config(raw),
    };
    let (config, config_error) = match profile {
        Ok((c, line)) => {
            let config = Config {
                resolv_conf: k0s::at_profile(c.resolv_conf, line)
                    .map(|v| (v, profile_path.clone())),
                cluster_dns: k0s::at_profile(c.cluster_dns, line)
                    .map(|v| (v, profile_path.clone())),
                cluster_domain: k0s::at_profile(c.cluster_domain, line)
                    .map(|v| (v, profile_path.clone())),
                container_runtime_endpoint: k0s::at_profile(c.container_runtime_endpoint, line)
                    .map(|v| (v, profile_path.clone())),
                dropins: Vec::new(),
                unread: Vec::new(),
                resolv_conf_key: None,
                undecided: None,
            };
            (Some(config), None)
        }
        Err(e) => (None, Some(e)),
    };
    let settings = Settings {
        flags: &flags,
        config: config.as_ref(),
        config_path: Some(&profile_path),
        config_error: config_error.as_deref(),
        have_kubelet: true,
        settled: config.is_some(),
    };
    let resolv_conf = k0s_resolv_conf(raw, installed, &settings, config.as_ref());
    let pod_resolv_conf = resolv_conf
        .known()
        .filter(|e| !e.value.is_empty())
        .map(|e| ResolvFile::read(raw, &e.value));
    let (mut cluster_dns, mut cluster_domain) = (settings.cluster_dns(), settings.cluster_domain());
    let runtime_endpoint = settings.runtime_endpoint();
    let mut resolv_conf = resolv_conf;
    // k0s fetches the profile again at its start: what the node keeps is the last it had.
    let last_fetched = |source: &mut Source| {
        if source.path.as_deref() == Some(profile_path.as_str()) && source.kind == "config" {
            source.detail = Some(format!(
                "worker profile {:?} as k0s last fetched it",
                installed.profile
            ));
        }
    };
    if let Observed::Known(e) = &mut resolv_conf {
        last_fetched(&mut e.source);
    }
    if let Observed::Known(e) = &mut cluster_dns {
        last_fetched(&mut e.source);
    }
    if let Observed::Known(e) = &mut cluster_domain {
        last_fetched(&mut e.source);
    }
    let mut kubelet = Kubelet {
        pid: None,
        unit: installed.unit.files().next().map(str::to_owned),
        version: None,
        binary_replaced: false,
        config_path: None,
        config_dropins: Vec::new(),
        resolv_conf_key: None,
        config_error: config_error.clone(),
        args_file: None,
        cluster_dns,
        cluster_domain,
        runtime_endpoint,
        flags,
        resolv_conf,
        pod_resolv_conf,
        resolv_conf_by_version: None,
    };
    // A kubelet that refuses its command line never runs: no settings of its count.
    if let Some(why) = installed.refused() {
        settings_unknown(&mut kubelet, &why);
    }
    kubelet
}

/// The resolvConf of the kubelet k0s starts next: a --resolv-conf of the extra args; else
/// the worker profile's where k0s keeps it in the config it writes
/// ([`k0s_profile_resolv_conf`]); else k0s's own choice. Without the profile (and no flag),
/// unknown.
fn k0s_resolv_conf(
    raw: &RawFacts,
    installed: &k0s::Installed,
    settings: &Settings,
    config: Option<&Config>,
) -> Observed<Effective<String>> {
    let profile = from_config(config.and_then(|c| c.resolv_conf.as_ref()));
    let (kept, replaced) = match profile.map(|p| k0s_profile_resolv_conf(raw, installed, p)) {
        Some(Ok(p)) => (Some(p), None),
        Some(Err(ProfileResolv::Replaced(why))) => (None, Some(why)),
        Some(Err(ProfileResolv::Unknown(why))) => {
            // A flag wins whatever the config k0s writes says.
            return match settings.flag_value("resolv-conf") {
                Some((value, source)) => Observed::Known(Effective {
                    value,
                    source,
                    shadowed: vec![],
                }),
                None => Observed::Unknown(why),
            };
        }
        None => (None, None),
    };
    match flag_over_config(settings.flag_value("resolv-conf"), kept, Clone::clone) {
        Some(e) => Observed::Known(e),
        None if config.is_some() => match k0s::auto_resolv_conf(raw) {
            Some(mut e) => {
                if let Some(why) = replaced {
                    let at = e.source.detail.take().unwrap_or_default();
                    e.source.detail = Some(format!("{at}; {why}"));
                }
                Observed::Known(e)
            }
            None => Observed::Unknown("/etc/resolv.conf could not be read".into()),
        },
        // A flag would have won whatever the profile says; without either, unknown.
        None => settings.unset(),
    }
}

/// Why a worker profile's resolvConf is not the one k0s writes into the kubelet's config.
enum ProfileResolv {
    /// This k0s writes its own choice over it.
    Replaced(String),
    /// Whether it does is not known.
    Unknown(String),
}

/// The worker profile's resolvConf `profile` where k0s's next start keeps it. k0s keeps it
/// from 1.33.1 (k0sproject/k0s 2090e9dee8, first in v1.33.1+k0s.0: `if
/// config.ResolverConfig == nil`); before, `writeKubeletConfig` (1.31 and earlier:
/// `prepareLocalKubeletConfig`) sets k0s's own choice over it at every start. Where the
/// version of the k0s its unit starts is not known, the profile's holds only where k0s's
/// own choice is the same file.
fn k0s_profile_resolv_conf(
    raw: &RawFacts,
    installed: &k0s::Installed,
    profile: (String, Source),
) -> Result<(String, Source), ProfileResolv> {
    let version = installed.version(raw);
    match version.as_deref().and_then(version_minor_patch) {
        Some(v) if v >= k0s::PROFILE_RESOLV_CONF_FROM => Ok(profile),
        Some(_) => Err(ProfileResolv::Replaced(format!(
            "k0s {} writes it over the worker profile's resolvConf {} ({}), which k0s keeps only from 1.33.1",
            version.unwrap_or_default(),
            profile.0,
            profile.1.at()
        ))),
        None => match k0s::auto_resolv_conf(raw) {
            Some(auto) if auto.value == profile.0 => Ok(profile),
            auto => Err(ProfileResolv::Unknown(format!(
                "{}: the worker profile sets resolvConf {}, which k0s keeps only from 1.33.1 (before, it writes its own choice over it{}); the version of the k0s {} starts is not known (`k0s version` was not asked, or did not answer)",
                profile.1.at(),
                profile.0,
                auto.map(|a| format!(", {}", a.value)).unwrap_or_default(),
                installed.unit.name
            ))),
        },
    }
}

/// MicroK8s's kubelet: its whole command line is the arguments file (see
/// [`super::microk8s`]); the rest is a plain kubelet's.
fn microk8s_kubelet(raw: &RawFacts, flavour: &Flavour) -> Kubelet {
    let pid = microk8s::kubelite(raw).map(|(pid, _)| pid);
    let args_file = microk8s::args_file(raw);
    let (text, problem) = match &args_file {
        None => (
            None,
            Some("kubelite names no --kubelet-args-file".to_owned()),
        ),
        Some(path) => match raw.get(path) {
            Some(f) if f.state == FileState::Present && f.truncated => {
                (None, Some(format!("{path}: larger than dnsfix reads")))
            }
            Some(f) if f.state == FileState::Present => match f.text() {
                Some(text) => match microk8s::unplaced_word(&text) {
                    Some((line, what)) => (
                        None,
                        Some(format!(
                            "{path}:{line}: {what}: dnsfix cannot tell how the kubelet reads \
                             the file"
                        )),
                    ),
                    None => (Some(text), None),
                },
                None => (None, Some(format!("{path}: could not be read"))),
            },
            Some(f) if f.state == FileState::Missing => {
                (None, Some(format!("{path}: no such file")))
            }
            Some(_) => (None, Some(format!("{path}: could not be read"))),
            None => (None, Some(format!("{path}: was not gathered"))),
        },
    };
    let path = args_file.clone().unwrap_or_default();
    let flags: Vec<FlagFact> = text
        .as_deref()
        .map(|text| microk8s::flags(text, &path))
        .unwrap_or_default()
        .into_iter()
        .map(|flag| {
            let at = At {
                path: path.clone(),
                line: flag.line,
            };
            flag_fact(flag, &at, None)
        })
        .collect();
    let dns_flags: Vec<FlagFact> = flags
        .iter()
        .filter(|f| DNS_FLAGS.contains(&f.name.as_str()))
        .cloned()
        .collect();
    let problem = problem.or_else(|| unknown_variable(&dns_flags));
    let mut kubelet = plain_kubelet(raw, flavour, pid, &flags, dns_flags, true, true);
    kubelet.args_file = args_file;
    kubelet.unit = ServiceUnit::from_raw(raw, &format!("{}.service", microk8s::UNIT))
        .and_then(|u| u.files().next().map(str::to_owned));
    kubelet.version = version(raw);
    kubelet.binary_replaced = binary_replaced(raw);
    if let Some(problem) = problem {
        settings_unknown(&mut kubelet, &problem);
    } else if let Observed::Known(e) = &mut kubelet.resolv_conf
        && e.source.kind == "default"
    {
        // What the wrapper does about it at the next start.
        let mentioned = text.as_deref().and_then(microk8s::resolv_conf_mentioned);
        e.source.detail = Some(match mentioned {
            Some(line) => format!(
                "kubelet default: {path}:{line} mentions --resolv-conf, so MicroK8s does not \
                 choose a file at start"
            ),
            None => "kubelet default (MicroK8s 1.26+ adds --resolv-conf at the next start \
                     when /etc/resolv.conf or systemd-resolved's file lists only \
                     non-loopback servers)"
                .to_owned(),
        });
    }
    kubelet
}

/// The kubelet's DNS settings cannot be known, for `why`.
fn settings_unknown(kubelet: &mut Kubelet, why: &str) {
    kubelet.resolv_conf = Observed::Unknown(why.to_owned());
    kubelet.cluster_dns = Observed::Unknown(why.to_owned());
    kubelet.cluster_domain = Observed::Unknown(why.to_owned());
    kubelet.pod_resolv_conf = None;
}

/// A DNS flag of the arguments file whose value names a variable of kubelite's environment
/// that dnsfix does not know (only the snap's own are expanded).
fn unknown_variable(flags: &[FlagFact]) -> Option<String> {
    flags
        .iter()
        .find(|f| f.value.as_deref().is_some_and(|v| v.contains('$')))
        .map(|f| {
            format!(
                "{}: --{}={} names a variable of kubelite's environment dnsfix does not know",
                f.source.at(),
                f.name,
                f.value.as_deref().unwrap_or_default()
            )
        })
}

/// The effective config: the `--config` file with the `--config-dir` drop-ins over it, each
/// DNS key remembering the file that set it.
#[derive(Default)]
struct Config {
    resolv_conf: Option<(Located<String>, String)>,
    cluster_dns: Option<(Located<Vec<String>>, String)>,
    cluster_domain: Option<(Located<String>, String)>,
    container_runtime_endpoint: Option<(Located<String>, String)>,
    dropins: Vec<String>,
    /// Drop-in settings of resolvConf this kubelet does not read, as evidence.
    unread: Vec<String>,
    /// How the drop-in that sets resolvConf spells it, where that is `resolverConfig`.
    resolv_conf_key: Option<String>,
    /// Why the config's resolvConf is not known: the kubelet's version is not, and the
    /// drop-ins give kubelet 1.28 to 1.31 another file than 1.32 on ([`Undecided`]).
    undecided: Option<Undecided>,
}

/// A config whose resolvConf depends on the kubelet's version, which is not known: the
/// drop-ins merged as 1.32 on merge them give one file, as 1.28 to 1.31 merge them another.
struct Undecided {
    /// Both files, where each is set, and the two ways out ([`version_undecided`]).
    why: String,
    /// The drop-in that decides: the last to set either spelling.
    dropin: String,
    /// The config as kubelet 1.28 to 1.31 merge it.
    older: Box<Config>,
}

fn read_config(raw: &RawFacts, path: &str) -> Result<KubeletConfig, String> {
    read_config_with(raw, path, KubeletConfig::parse)
}

/// The kubelet's `--config` file, read as leniently as the kubelet reads it
/// ([`KubeletConfig::parse_lenient`]); its drop-ins are read strictly ([`read_config`]).
fn read_main_config(raw: &RawFacts, path: &str) -> Result<KubeletConfig, String> {
    read_config_with(raw, path, KubeletConfig::parse_lenient)
}

fn read_config_with(
    raw: &RawFacts,
    path: &str,
    parse: fn(&str) -> Result<KubeletConfig, super::kubelet_config::KubeletConfigError>,
) -> Result<KubeletConfig, String> {
    match raw.get(path) {
        Some(f) if f.state == FileState::Present => {
            parse(&String::from_utf8_lossy(&f.content)).map_err(|e| format!("{path}: {e}"))
        }
        Some(f) if f.state == FileState::Missing => Err(format!("{path}: no such file")),
        Some(_) => Err(format!("{path}: could not be read")),
        None => Err(format!("{path}: was not gathered")),
    }
}

/// A kubelet `--config-dir` as the kubelet walks it (cmd/kubelet/app/server.go
/// `mergeKubeletConfigurations`: `filepath.WalkDir`, every file whose name's extension is
/// `.conf`, at any depth, hidden ones too, symlinked directories not followed).
struct ConfigDir<'r> {
    /// The drop-ins in the order the kubelet merges them: the walk's, by name within each
    /// directory, a subdirectory's files where its name falls.
    files: Vec<&'r str>,
    /// The directory given is a symlink: WalkDir lstat()s its root and does not descend, so
    /// the kubelet merges none of `files` (a trailing `/` would make it follow).
    unfollowed: bool,
    /// Why what the kubelet merges is not known: a `*.conf` that is not a readable file
    /// (the kubelet fails to start on it), or a directory the gather did not walk (deeper
    /// than it goes, or a name with a newline in it).
    unknown: Option<String>,
}

/// The drop-ins gathered under `dir` as the walk reached them (every directory between
/// `dir` and the file walked, none a symlink). An error where the kubelet cannot start on
/// `dir` (it is missing: WalkDir hands the callback its lstat error, which ends the merge),
/// or where `dir` is `/`, which dnsfix does not walk.
fn config_dir<'r>(raw: &'r RawFacts, dir: &str) -> Result<ConfigDir<'r>, String> {
    let root = dir.trim_end_matches('/');
    if root.is_empty() {
        return Err(format!(
            "--config-dir {dir}: the kubelet would merge every *.conf file there is; dnsfix does not walk the whole filesystem"
        ));
    }
    let at_root = raw.get(dir);
    if at_root.is_some_and(|f| f.state == FileState::Missing && f.symlink_target.is_none()) {
        return Err(format!(
            "--config-dir {dir} does not exist: the kubelet fails to start on it (mergeKubeletConfigurations returns filepath.WalkDir's error)"
        ));
    }
    let walked = |p: &str| {
        raw.get(p)
            .is_some_and(|f| f.state == FileState::Directory && f.symlink_target.is_none())
    };
    let mut files = Vec::new();
    let mut unknown = None;
    for (path, file) in raw.files.iter() {
        let Some(rest) = path.strip_prefix(root).and_then(|r| r.strip_prefix('/')) else {
            continue;
        };
        if path.ends_with('/') && file.state == FileState::Unreadable {
            unknown.get_or_insert_with(|| {
                format!("{path}: a directory under --config-dir {dir} deeper than dnsfix walks, or one that holds a name with a newline the kubelet would read")
            });
            continue;
        }
        let name = rest.rsplit('/').next().unwrap_or(rest);
        let reached = rest
            .match_indices('/')
            .all(|(i, _)| walked(&path[..root.len() + 1 + i]));
        if rest.is_empty() || !name.ends_with(".conf") || !reached {
            continue;
        }
        let problem = match file.state {
            FileState::Present => {
                files.push(path.as_str());
                continue;
            }
            FileState::Directory if file.symlink_target.is_none() => continue,
            // Named by something else and not there: not in the directory.
            FileState::Missing if file.symlink_target.is_none() => continue,
            FileState::Directory => {
                "a symlink to a directory, which the kubelet fails to load as a drop-in"
            }
            FileState::Missing => "a symlink to nothing, which the kubelet fails to load",
            FileState::Unreadable => "could not be read",
        };
        unknown.get_or_insert_with(|| format!("{path}: {problem}"));
    }
    files.sort_unstable_by(|a, b| a.split('/').cmp(b.split('/')));
    let unfollowed = !dir.ends_with('/') && at_root.is_some_and(|f| f.symlink_target.is_some());
    Ok(ConfigDir {
        files,
        unfollowed,
        unknown,
    })
}

/// What a drop-in under a symlinked `--config-dir` sets in vain, as evidence; best effort,
/// since the kubelet reads none of them.
fn unfollowed_notes(raw: &RawFacts, dir: &str, files: &[&str]) -> Vec<String> {
    let mut notes = Vec::new();
    for file in files {
        let Ok(c) = read_config(raw, file) else {
            continue;
        };
        let keys = [("resolvConf", c.resolv_conf.as_ref())].into_iter().chain(
            c.resolver_configs
                .iter()
                .map(|(k, l)| (k.as_str(), Some(l))),
        );
        for (key, l) in keys {
            let Some(l) = l else { continue };
            notes.push(format!(
                "{file}:{} sets {key}: {:?}, which the kubelet does not read: --config-dir {dir} is a symlink, and the kubelet's walk of it (filepath.WalkDir) does not follow its root",
                l.line, l.value
            ));
        }
    }
    notes
}

/// The kubelet's config file and its `--config-dir` drop-ins ([`config_dir`]: walk order, a
/// later key winning). A drop-in's `resolvConf` counts from kubelet 1.32 on; 1.28 to 1.31
/// merged the drop-ins in the internal field names ([`dropin_resolver_config`]). The version
/// is the binary's, else the cluster's or the inventory's ([`config_version`]); a kubelet of
/// unknown version is taken for a current one, but where the drop-ins (a `resolvConf` or a
/// `resolverConfig` in one) give an older one another file, its resolvConf is unknown.
fn load_config(
    raw: &RawFacts,
    path: Option<&str>,
    dir: Option<&str>,
) -> Result<Option<Config>, String> {
    let mut files = Vec::new();
    if let Some(path) = path {
        files.push((path, read_main_config(raw, path)?));
    }
    let mut unread = Vec::new();
    let mut dropins = Vec::new();
    if let Some(dir) = dir {
        let walked = config_dir(raw, dir)?;
        if walked.unfollowed {
            unread = unfollowed_notes(raw, dir, &walked.files);
        } else if let Some(why) = walked.unknown {
            return Err(why);
        } else {
            dropins = walked.files;
        }
    }
    for file in &dropins {
        files.push((file, read_config(raw, file)?));
    }
    if files.is_empty() {
        return Ok(None);
    }
    let minor = config_version(raw).as_deref().and_then(version_minor);
    let base = usize::from(path.is_some());
    let dropins: Vec<String> = dropins.iter().map(|f| (*f).to_owned()).collect();
    let mut config = merge_config(&files, base, minor, minor.is_none_or(|m| m >= 32));
    // A kubelet of unknown version is taken for a current one, except where a drop-in
    // (its resolvConf, or its resolverConfig) gives a 1.28 to 1.31 kubelet another file:
    // which one it reads is not known then.
    if minor.is_none() && files.len() > base {
        let old = merge_config(&files, base, minor, false);
        if resolv_conf_value(&old) != resolv_conf_value(&config) {
            let dropin = deciding_dropin(&files[base..]);
            let position = |f: &str| files[base..].iter().position(|(p, _)| *p == f);
            // A spelling that wins over the resolverConfig written there is named too.
            let left = match (&old.resolv_conf, &old.resolv_conf_key) {
                (Some((_, file)), Some(key)) => position(file)
                    .zip(position(&dropin))
                    .filter(|(at, written)| beats_written(key, *at, *written))
                    .map(|_| (key.as_str(), file.as_str())),
                _ => None,
            };
            config.undecided = Some(Undecided {
                why: version_undecided(&dropin, left, &old, &config),
                dropin,
                older: Box::new(old),
            });
        }
    }
    config.dropins = dropins;
    config.unread.splice(0..0, unread);
    Ok(Some(config))
}

/// The resolvConf a merged config gives, the kubelet's default where none sets it.
fn resolv_conf_value(config: &Config) -> &str {
    config
        .resolv_conf
        .as_ref()
        .map_or("/etc/resolv.conf", |(l, _)| l.value.as_str())
}

/// The drop-in whose resolvConf settings decide (the last of `dropins` to set
/// `resolvConf` or a spelling of `resolverConfig`): written with both spellings of the same
/// file, it gives every kubelet version that file.
fn deciding_dropin(dropins: &[(&str, KubeletConfig)]) -> String {
    dropins
        .iter()
        .rev()
        .find(|(_, c)| c.resolv_conf.is_some() || !c.resolver_configs.is_empty())
        .map_or(String::new(), |(file, _)| (*file).to_owned())
}

/// Why the resolvConf of a kubelet of unknown version is not known: the `old` merge (1.28
/// to 1.31) and the `current` one (1.32 on) of the drop-ins over the config file give two
/// files. Says each and where it is set, and the two ways out: the version stated, or
/// both spellings written in the drop-in that `decides` (the last to set either), and
/// where a drop-in spells resolverConfig so that it wins over that (`left`: the spelling and
/// its drop-in, [`beats_written`]), that spelling too.
fn version_undecided(
    decides: &str,
    left: Option<(&str, &str)>,
    old: &Config,
    current: &Config,
) -> String {
    let from = |c: &Config| match &c.resolv_conf {
        Some((l, file)) => format!(
            "{file}:{} {}",
            l.line,
            c.resolv_conf_key.as_deref().unwrap_or("resolvConf")
        ),
        None => "the kubelet's default".to_owned(),
    };
    format!(
        "the kubelet's version is not known (kubelet --version gave none, and neither the cluster nor the inventory's kube_version says), and it decides the resolvConf: kubelet 1.28 to 1.31 read {:?} ({}; they pass a drop-in's resolvConf over, kubernetes#126630), from 1.32 on {:?} ({}; they pass a drop-in's resolverConfig over, #127421). State the kubelet's version (the inventory's kube_version), or set resolvConf and resolverConfig both to the same file in {decides}{}, which every version then reads (as dnsfix's kubelet-resolvconf writes a drop-in where the version is not known)",
        resolv_conf_value(old),
        from(old),
        resolv_conf_value(current),
        from(current),
        left.map_or(String::new(), |(key, file)| format!(
            ", and {key} in {file} to it too (1.28 to 1.31 read that spelling over resolverConfig: it sorts after it in byte order, kubernetes#126630)"
        )),
    )
}

/// The config `files` (the `--config` file first where there is one, `base` of them, then
/// the drop-ins) merged as a kubelet of `minor` merges them: `current` (1.32 on) reads a
/// drop-in's resolvConf, an older one its internal spelling ([`dropin_resolver_config`]).
fn merge_config(
    files: &[(&str, KubeletConfig)],
    base: usize,
    minor: Option<u32>,
    current: bool,
) -> Config {
    let mut config = Config::default();
    for (i, (file, c)) in files.iter().enumerate() {
        let dropin = i >= base;
        if let Some(v) = c.resolv_conf.as_ref().filter(|_| !dropin || current) {
            config.resolv_conf = Some((v.clone(), (*file).to_owned()));
        }
        if let Some(v) = &c.cluster_dns {
            config.cluster_dns = Some((v.clone(), (*file).to_owned()));
        }
        if let Some(v) = &c.cluster_domain {
            config.cluster_domain = Some((v.clone(), (*file).to_owned()));
        }
        if let Some(v) = &c.container_runtime_endpoint {
            config.container_runtime_endpoint = Some((v.clone(), (*file).to_owned()));
        }
    }
    let dropped = &files[base..];
    if current {
        // From 1.32 the drop-ins are v1beta1, where `resolverConfig` is no field.
        for (file, c) in dropped {
            for (key, l) in &c.resolver_configs {
                if c.resolv_conf.as_ref().is_none_or(|r| r.value != l.value) {
                    let why = "only 1.28 to 1.31 took this spelling there; from 1.32 resolvConf, kubernetes#127421";
                    config
                        .unread
                        .push(unread_dropin_key(file, l, key, minor, true, why));
                }
            }
        }
    } else {
        dropin_resolver_config(&mut config, dropped, minor);
    }
    config
}

/// Kubelet 1.28 to 1.31 marshalled the config into JSON in the internal field names
/// (`ResolverConfig`, no json tag), JSON-merge-patched each drop-in over it, and decoded
/// the result back (cmd/kubelet/app/server.go `mergeKubeletConfigurations`). A drop-in's
/// `resolvConf` matched no field and was dropped; a key spelling `ResolverConfig` in any
/// case matched it (encoding/json), the patch keeping each spelling as a key of its own,
/// the same spelling replaced by a later one. The merged object's keys come out sorted
/// bytewise and the decoder lets a later key win, so the greatest spelling holds the value,
/// `ResolverConfig` (the config file's, or the default) unless a drop-in spells it later
/// in byte order. kubernetes#126630; #127421 (1.32) reads the drop-ins as v1beta1.
fn dropin_resolver_config(
    config: &mut Config,
    dropins: &[(&str, KubeletConfig)],
    minor: Option<u32>,
) {
    let winner = resolver_config_winner(dropins);
    if let Some((key, (l, file))) = winner {
        config.resolv_conf = Some((l.clone(), file.to_owned()));
        config.resolv_conf_key = Some(key.to_owned());
    }
    let read = config.resolv_conf.as_ref().map(|(l, _)| l.value.clone());
    for (file, c) in dropins {
        for (key, l) in &c.resolver_configs {
            let why = match winner {
                Some((k, (w, _))) if k == key && std::ptr::eq(w, l) => continue,
                Some((k, _)) if k == key => "a later drop-in sets it again",
                _ => {
                    "another spelling of the key sorts after it in byte order and wins, kubernetes#126630"
                }
            };
            config
                .unread
                .push(unread_dropin_key(file, l, key, minor, false, why));
        }
        if let Some(l) = c
            .resolv_conf
            .as_ref()
            .filter(|l| Some(&l.value) != read.as_ref())
        {
            let why = "kubernetes#126630, read from 1.32 on";
            config
                .unread
                .push(unread_dropin_key(file, l, "resolvConf", minor, false, why));
        }
    }
}

/// The spelling of `resolverConfig` kubelet 1.28 to 1.31 read from the drop-ins, with its
/// setting and file ([`dropin_resolver_config`]): the greatest spelling in byte order, its
/// last setting; none where that is the config file's `ResolverConfig` (no drop-in spells
/// it, or only spellings that sort before it).
fn resolver_config_winner<'a>(
    dropins: &'a [(&'a str, KubeletConfig)],
) -> Option<(&'a str, (&'a Located<String>, &'a str))> {
    use std::collections::BTreeMap;
    // Spelling → its last setting; `ResolverConfig` is the config file's (None).
    let mut spellings: BTreeMap<&str, Option<(&Located<String>, &str)>> = BTreeMap::new();
    spellings.insert("ResolverConfig", None);
    for (file, c) in dropins {
        for (key, l) in &c.resolver_configs {
            spellings.insert(key.as_str(), Some((l, *file)));
        }
    }
    spellings
        .into_iter()
        .next_back()
        .and_then(|(key, set)| Some((key, set?)))
}

/// Whether a drop-in's spelling `key` of resolverConfig, set in the drop-in at `at` (walk
/// order), still wins for kubelet 1.28 to 1.31 once `resolverConfig` is written into the
/// drop-in at `written`: it sorts after `resolverConfig` in byte order (`resolverconfig`:
/// 'c' > 'C'), or it is that spelling in a later drop-in ([`dropin_resolver_config`]).
fn beats_written(key: &str, at: usize, written: usize) -> bool {
    (key, at) > ("resolverConfig", written)
}

/// The spelling of `resolverConfig` and the drop-in that kubelet 1.28 to 1.31 would still
/// read resolvConf from once `key` is written into `file` (a drop-in, or the config file)
/// and, where `also_resolver_config`, `resolverConfig` beside it there: none where the
/// drop-ins spell none that wins, or the one that wins is what is written. A kubelet of
/// 1.32 on reads none of them, so the caller asks only where the version may be older.
pub(crate) fn resolver_config_left(
    facts: &crate::facts::NodeFacts,
    file: &str,
    key: &str,
    also_resolver_config: bool,
) -> Option<(String, String)> {
    let dropins: Vec<(&str, KubeletConfig)> = facts
        .kubelet
        .config_dropins
        .iter()
        .filter_map(|path| {
            let text = facts.files.get(path)?.text()?;
            Some((path.as_str(), KubeletConfig::parse(text.as_ref()).ok()?))
        })
        .collect();
    let (winner, (_, at_file)) = resolver_config_winner(&dropins)?;
    if winner == key && at_file == file {
        return None;
    }
    let position = |f: &str| dropins.iter().position(|(p, _)| *p == f);
    if let (true, Some(written), Some(at)) =
        (also_resolver_config, position(file), position(at_file))
        && !beats_written(winner, at, written)
    {
        return None;
    }
    Some((winner.to_owned(), at_file.to_owned()))
}

/// Whether the kubelet's version, not known here, decides its resolvConf: a `--config-dir`
/// drop-in sets resolvConf in some spelling, and only the version says which one the kubelet
/// reads ([`load_config`]); or the k3s/RKE2 release decides which file they hand it
/// ([`K3S_VERSION_UNKNOWN`]). Plan and check then ask the node's kubelet binary, and where
/// that gives none, take the version the cluster reports.
pub(crate) fn dropin_version_matters(facts: &crate::facts::NodeFacts) -> bool {
    let rancher = matches!(&facts.kubelet.resolv_conf,
        Observed::Unknown(why) if why.contains(K3S_VERSION_UNKNOWN));
    facts.kubelet.version.is_none()
        && (rancher
            || facts.kubelet.config_dropins.iter().any(|path| {
                facts
                    .files
                    .get(path)
                    .and_then(|f| f.text())
                    .and_then(|t| KubeletConfig::parse(t.as_ref()).ok())
                    .is_some_and(|c| c.resolv_conf.is_some() || !c.resolver_configs.is_empty())
            }))
}

/// Evidence for a drop-in's resolvConf setting that the kubelet (of `minor`; of none, the
/// `current` reading, 1.32 on, or 1.28 to 1.31's) does not read, and why.
fn unread_dropin_key(
    file: &str,
    l: &Located<String>,
    key: &str,
    minor: Option<u32>,
    current: bool,
    why: &str,
) -> String {
    // Of no known version, the merge says which reading it is: a kubelet of unknown version
    // is read both ways where they differ ([`Undecided`]).
    let (kubelet, verb) = match minor {
        Some(m) => (format!("kubelet 1.{m}"), "does"),
        None if current => ("kubelet 1.32 or later".to_owned(), "do"),
        None => ("kubelet 1.28 to 1.31".to_owned(), "do"),
    };
    format!(
        "{file}:{} sets {key}: {:?}, which {kubelet} {verb} not read in a --config-dir drop-in ({why})",
        l.line, l.value
    )
}

/// A kubelet run by its own unit (Kubespray, kubeadm, EKS nodeadm, hand-made).
fn plain_kubelet(
    raw: &RawFacts,
    flavour: &Flavour,
    pid: Option<u32>,
    flags: &[FlagFact],
    dns_flags: Vec<FlagFact>,
    complete: bool,
    has_unit: bool,
) -> Kubelet {
    // `--config` names the file. A command line known in full without it runs on flags
    // alone; only when the command line is not known does the installer's default apply.
    let config_path = last_valued(flags, "config")
        .and_then(|f| f.value.clone())
        .or_else(|| {
            if complete {
                return None;
            }
            installer_config_path(raw, flavour)
        });
    let config_dir = last_valued(flags, "config-dir").and_then(|f| f.value.clone());
    let (config, config_error) =
        match load_config(raw, config_path.as_deref(), config_dir.as_deref()) {
            Ok(c) => (c, None),
            Err(e) => (None, Some(e)),
        };
    // An installer's files, a unit, a config (even a broken one), a process or flags: this
    // is a kubelet node, and what cannot be read about its kubelet is unknown, not absent.
    let have_kubelet = config.is_some()
        || config_error.is_some()
        || pid.is_some()
        || has_unit
        || !dns_flags.is_empty()
        || flavour.kind != FlavourKind::Unknown;
    let settings = Settings {
        flags,
        config: config.as_ref(),
        config_path: config_path.as_deref(),
        config_error: config_error.as_deref(),
        have_kubelet,
        // With no config read, the defaults hold only where the whole command line is
        // known: a flag dnsfix did not see could set any of them.
        settled: config.is_some() || (have_kubelet && config_error.is_none() && complete),
    };
    let resolv_conf = settings.resolv_conf();
    let resolv_conf_by_version = settings.resolv_conf_by_version(raw);
    let cluster_dns = settings.cluster_dns();
    let cluster_domain = settings.cluster_domain();
    let runtime_endpoint = settings.runtime_endpoint();

    let pod_resolv_conf = resolv_conf
        .known()
        .filter(|e| !e.value.is_empty())
        .map(|e| ResolvFile::read(raw, &e.value));
    // The spelling matters only where the config's setting is the one in effect, or the one
    // that is once a flag over it goes.
    let from_config = resolv_conf.known().is_some_and(|e| {
        e.source.kind == "config" || e.shadowed.iter().any(|s| s.source.kind == "config")
    });
    let (config_dropins, resolv_conf_key) = config.map_or_else(Default::default, |c| {
        (c.dropins, c.resolv_conf_key.filter(|_| from_config))
    });
    Kubelet {
        pid,
        unit: None,
        version: None,
        binary_replaced: false,
        config_path,
        config_dropins,
        resolv_conf_key,
        config_error,
        args_file: None,
        flags: dns_flags,
        resolv_conf,
        cluster_dns,
        cluster_domain,
        runtime_endpoint,
        pod_resolv_conf,
        resolv_conf_by_version,
    }
}

/// The last occurrence of a flag that has a value.
fn last_valued<'a>(flags: &'a [FlagFact], name: &str) -> Option<&'a FlagFact> {
    flags
        .iter()
        .rev()
        .find(|f| f.name == name && f.value.is_some())
}

/// The config file the node's installer gives its kubelet when no `--config` says; on a
/// node of no known installer, the first of theirs that is present.
fn installer_config_path(raw: &RawFacts, flavour: &Flavour) -> Option<String> {
    match flavour.kind {
        FlavourKind::Kubespray => Some(KUBESPRAY_CONFIG.to_owned()),
        FlavourKind::Kubeadm => Some(KUBEADM_CONFIG.to_owned()),
        FlavourKind::Eks => Some(EKS_CONFIG.to_owned()),
        _ => [KUBESPRAY_CONFIG, KUBEADM_CONFIG, EKS_CONFIG]
            .into_iter()
            .find(|p| present(raw, p))
            .map(str::to_owned),
    }
}

/// Where a plain kubelet's DNS settings come from: its flags (the last of a name wins) over
/// its configuration file, then the kubelet's defaults once its configuration is known.
struct Settings<'a> {
    flags: &'a [FlagFact],
    config: Option<&'a Config>,
    config_path: Option<&'a str>,
    config_error: Option<&'a str>,
    /// This is a kubelet node: what cannot be read about its kubelet is unknown, not absent.
    have_kubelet: bool,
    /// The configuration was read (or there is none to read): an unset value is the default.
    settled: bool,
}

impl Settings<'_> {
    fn resolv_conf(&self) -> Observed<Effective<String>> {
        if self.flag_value("resolv-conf").is_none()
            && let Some(u) = self.config.and_then(|c| c.undecided.as_ref())
        {
            return Observed::Unknown(u.why.clone());
        }
        self.resolv_conf_of(self.config)
    }

    /// Where the resolvConf is unknown because the kubelet's version is ([`Undecided`]):
    /// what kubelet 1.28 to 1.31 read, and what 1.32 on read, with the files read, for the
    /// rules to judge both.
    fn resolv_conf_by_version(&self, raw: &RawFacts) -> Option<ResolvConfByVersion> {
        let undecided = self.config?.undecided.as_ref()?;
        if self.flag_value("resolv-conf").is_some() {
            return None;
        }
        let reading = |versions: &str, config: &Config| {
            let resolv_conf = self.resolv_conf_of(Some(config)).known()?.clone();
            let pod_resolv_conf =
                (!resolv_conf.value.is_empty()).then(|| ResolvFile::read(raw, &resolv_conf.value));
            Some(VersionReading {
                versions: versions.to_owned(),
                resolv_conf,
                pod_resolv_conf,
            })
        };
        Some(ResolvConfByVersion {
            why: undecided.why.clone(),
            dropin: undecided.dropin.clone(),
            readings: vec![
                reading("kubelet 1.28 to 1.31", &undecided.older)?,
                reading("kubelet 1.32 or later", self.config?)?,
            ],
        })
    }

    /// The resolvConf with `config` as the kubelet's merged config.
    fn resolv_conf_of(&self, config: Option<&Config>) -> Observed<Effective<String>> {
        let setting = from_config(config.and_then(|c| c.resolv_conf.as_ref())).map(
            |(v, mut source)| {
                if let Some(key) = config.and_then(|c| c.resolv_conf_key.as_ref()) {
                    source.detail = Some(format!(
                        "spelled {key}, the name kubelet 1.28 to 1.31 read a drop-in's resolvConf by: kubernetes#126630"
                    ));
                }
                (v, source)
            },
        );
        let flag = self.flag_value("resolv-conf");
        let value = flag_over_config(flag, setting, Clone::clone);
        match value.or_else(|| self.default_resolv_conf()) {
            Some(mut v) => {
                // What a drop-in sets in vain is said beside what won.
                let unread = config.map(|c| c.unread.join("; ")).unwrap_or_default();
                if !unread.is_empty() {
                    v.source.detail = Some(match v.source.detail.take() {
                        Some(d) => format!("{d}; {unread}"),
                        None => unread,
                    });
                }
                Observed::Known(v)
            }
            None => self.unset(),
        }
    }

    /// `/etc/resolv.conf`, once the configuration is known.
    fn default_resolv_conf(&self) -> Option<Effective<String>> {
        self.settled.then(|| {
            let (detail, path) = match (self.config, self.config_path) {
                (Some(_), Some(p)) => ("KubeletConfiguration default", Some(p)),
                _ => ("kubelet default", None),
            };
            Effective {
                value: "/etc/resolv.conf".to_owned(),
                source: Source {
                    detail: Some(detail.into()),
                    ..Source::new("default", path, None)
                },
                shadowed: vec![],
            }
        })
    }

    fn cluster_dns(&self) -> Observed<Effective<Vec<String>>> {
        // --cluster-dns is a string slice: repeated flags append rather than replace.
        let dns_flag = last_valued(self.flags, "cluster-dns").map(|f| {
            let values = self
                .flags
                .iter()
                .filter(|f| f.name == "cluster-dns")
                .flat_map(|f| split_list(f.value.as_deref().unwrap_or_default()))
                .collect::<Vec<_>>();
            (values, f.source.clone())
        });
        let config_dns = from_config(self.config.and_then(|c| c.cluster_dns.as_ref()));
        match flag_over_config(dns_flag, config_dns, |v: &Vec<String>| v.join(",")) {
            Some(e) => Observed::Known(e),
            None if self.settled => Observed::Known(Effective {
                value: vec![],
                source: Source {
                    detail: Some("not set: kubelet falls back to dnsPolicy Default".into()),
                    ..Source::new("default", self.config_path, None)
                },
                shadowed: vec![],
            }),
            None => self.unset(),
        }
    }

    fn cluster_domain(&self) -> Observed<Effective<String>> {
        match flag_over_config(
            self.flag_value("cluster-domain"),
            from_config(self.config.and_then(|c| c.cluster_domain.as_ref())),
            Clone::clone,
        ) {
            Some(e) => Observed::Known(e),
            None if self.settled => Observed::Known(Effective {
                value: String::new(),
                source: Source {
                    detail: Some("not set: ClusterFirst pods get no cluster search domains".into()),
                    ..Source::new("default", self.config_path, None)
                },
                shadowed: vec![],
            }),
            None => self.unset(),
        }
    }

    /// The CRI endpoint, where a flag or the config sets it (the kubelet's default, from
    /// 1.27, is containerd's socket).
    fn runtime_endpoint(&self) -> Option<Effective<String>> {
        flag_over_config(
            self.flag_value("container-runtime-endpoint"),
            from_config(
                self.config
                    .and_then(|c| c.container_runtime_endpoint.as_ref()),
            ),
            Clone::clone,
        )
    }

    fn flag_value(&self, name: &str) -> Option<(String, Source)> {
        last_valued(self.flags, name)
            .map(|f| (f.value.clone().unwrap_or_default(), f.source.clone()))
    }

    /// Set by no flag, no config and no default: absent where no kubelet is, else unknown.
    fn unset<T>(&self) -> Observed<T> {
        if !self.have_kubelet {
            return Observed::Absent;
        }
        Observed::Unknown(
            self.config_error
                .unwrap_or("no kubelet configuration found on this node")
                .to_owned(),
        )
    }
}

/// A config file's value with the line and file it is set on.
fn from_config<T: Clone>(setting: Option<&(Located<T>, String)>) -> Option<(T, Source)> {
    setting.map(|(l, file)| {
        (
            l.value.clone(),
            Source::new("config", Some(file.as_str()), Some(l.line)),
        )
    })
}

fn present(raw: &RawFacts, path: &str) -> bool {
    raw.get(path).is_some_and(|f| f.state == FileState::Present)
}

/// A flag beats the same setting in the config file (kubernetes/website
/// kubelet-config-file.md); the config value it overrides is kept as shadowed.
fn flag_over_config<T>(
    flag: Option<(T, Source)>,
    config: Option<(T, Source)>,
    show: impl Fn(&T) -> String,
) -> Option<Effective<T>> {
    match (flag, config) {
        (Some((value, source)), shadow) => Some(Effective {
            value,
            source,
            shadowed: shadow
                .into_iter()
                .map(|(v, s)| Shadowed {
                    value: show(&v),
                    source: s,
                })
                .collect(),
        }),
        (None, Some((value, source))) => Some(Effective {
            value,
            source,
            shadowed: vec![],
        }),
        (None, None) => None,
    }
}

/// One explicit k3s/RKE2 setting and where it was made.
#[derive(Clone)]
struct Setting {
    value: String,
    source: Source,
}

/// The k3s/RKE2 service that runs here: the active one, else the one that failed or is
/// being restarted (`Restart=always`: a crash-looping one is `activating`), else the first
/// with a unit. RKE2's tarball installs both of its units, so on an agent whose rke2-agent
/// does not run, rke2-server.service is there too and is not the node's (the unit derive
/// restarts is chosen the same way).
fn rancher_unit(raw: &RawFacts, flavour: &Flavour) -> Option<ServiceUnit> {
    use super::node_facts::UnitState;
    let names: &[&str] = match flavour.kind {
        FlavourKind::Rke2 => &["rke2-server.service", "rke2-agent.service"],
        _ => &["k3s.service", "k3s-agent.service"],
    };
    let units: Vec<ServiceUnit> = names
        .iter()
        .filter_map(|n| ServiceUnit::from_raw(raw, n))
        .collect();
    let states = super::node_facts::unit_states(raw);
    let state = |u: &ServiceUnit| {
        u.name
            .strip_suffix(".service")
            .and_then(|name| states.get(name).copied())
    };
    let index = units
        .iter()
        .position(|u| state(u) == Some(UnitState::Active))
        .or_else(|| {
            units
                .iter()
                .position(|u| matches!(state(u), Some(UnitState::Failed | UnitState::Activating)))
        })
        .unwrap_or(0);
    units.into_iter().nth(index)
}

/// Whether `systemctl is-active` said `unit` is active.
fn unit_active(raw: &RawFacts, unit: &ServiceUnit) -> bool {
    unit.name
        .strip_suffix(".service")
        .and_then(|name| super::node_facts::unit_states(raw).get(name).copied())
        == Some(super::node_facts::UnitState::Active)
}

/// The explicit resolv.conf settings of a k3s/RKE2 node, each the last of its kind.
/// k3s hands the kubelet its own `--resolv-conf` first and the `kubelet-arg` entries last
/// (`daemonconfig.GetArgs(argsMap, extraArgs)`, pkg/daemons/agent), so any kubelet-arg
/// beats any native setting; on the command line the service's ExecStart comes after
/// config.yaml (`configfilearg` inserts the file's flags first).
/// From v1.32 k3s hands the kubelet its own choice in a config drop-in
/// (`00-k3s-defaults.conf`) instead of a flag, so a drop-in after it (`dropin`: the user's,
/// or k3s's copy of `kubelet-arg: config=`) beats every native setting, and a `kubelet-arg`
/// flag still beats the drop-ins (pkg/daemons/agent `startKubelet`).
/// A `kubelet-arg resolv-conf-=` entry (`prepend_arg`) is the kubelet's flag only where no
/// other entry sets it and k3s passes no `--resolv-conf` of its own: from v1.32
/// ([`KubeletArg::Prepends`](super::k3s_config::KubeletArg)).
#[derive(Default)]
struct RancherSettings {
    exec_arg: Option<Setting>,
    exec_native: Option<Setting>,
    config_arg: Option<Setting>,
    config_native: Option<Setting>,
    dropin: Option<Setting>,
    prepend_arg: Option<Setting>,
    /// The `kubelet-arg` entries for resolv-conf the kubelet refuses, as evidence.
    refused: Vec<String>,
}

impl RancherSettings {
    /// In the order the kubelet takes them, the first winning; `prepend` where the
    /// `resolv-conf-=` entry comes last ([`RancherSettings`]).
    fn chain(self, env: Option<Setting>, prepend: bool) -> Vec<Setting> {
        [
            self.exec_arg,
            self.config_arg,
            self.prepend_arg.filter(|_| prepend),
            self.dropin,
            self.exec_native,
            self.config_native,
            env,
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// The last `--kubelet-arg NAME=VALUE` (or `--kubelet-arg=NAME=VALUE`, `NAME+=VALUE` too:
/// [`super::k3s_config::kubelet_arg_value`]) on a k3s/RKE2 service's command line: its value
/// and where it is written.
fn exec_kubelet_arg<'u>(unit: &'u ServiceUnit, name: &str) -> Option<(String, &'u At)> {
    let words = &unit.argv;
    words.iter().enumerate().rev().find_map(|(i, word)| {
        let text = word.text.trim_start_matches('-');
        let arg = match text.strip_prefix("kubelet-arg=") {
            Some(arg) => arg,
            None if text == "kubelet-arg" => words.get(i + 1)?.text.as_str(),
            None => return None,
        };
        let value = super::k3s_config::kubelet_arg_value(arg, name)?;
        Some((value.to_owned(), &word.at))
    })
}

/// The last `--resolv-conf X` or `--resolv-conf=X` of k3s/RKE2's own on the service's
/// command line, and where.
fn exec_resolv_conf(unit: &ServiceUnit) -> Option<(&str, &At)> {
    let words = &unit.argv;
    let mut last = None;
    for (i, word) in words.iter().enumerate() {
        // The value of a `--kubelet-arg` is the kubelet's, not k3s's own flag.
        if i > 0 && words[i - 1].text.trim_start_matches('-') == "kubelet-arg" {
            continue;
        }
        let text = word.text.trim_start_matches('-');
        let value = match text.strip_prefix("resolv-conf=") {
            Some(v) => Some(v),
            None if text == "resolv-conf" => words.get(i + 1).map(|w| w.text.as_str()),
            None => None,
        };
        if let Some(v) = value {
            last = Some((v, &word.at));
        }
    }
    last
}

/// Where the k3s/RKE2 service's ExecStart sets `--resolv-conf` empty (`path:line`), which
/// asks for their automatic choice over any config file's `resolv-conf` (configfilearg puts
/// the files' values before the command line's): a fix must go there.
pub(crate) fn rancher_exec_resolv_conf_reset(raw: &RawFacts, flavour: &Flavour) -> Option<String> {
    let unit = rancher_unit(raw, flavour)?;
    let (value, at) = exec_resolv_conf(&unit)?;
    value.is_empty().then(|| format!("{}:{}", at.path, at.line))
}

/// `--resolv-conf X`, `--resolv-conf=X` and `--kubelet-arg[=]resolv-conf=X` on the
/// service's command line (k3s and RKE2 hide their argv once running, so the unit is read).
fn exec_start_settings(unit: &ServiceUnit, into: &mut RancherSettings) {
    let source = |at: &At| Source::new("k3s_flag", Some(&at.path), Some(at.line));
    into.exec_native = exec_resolv_conf(unit).map(|(v, at)| Setting {
        value: v.to_owned(),
        source: source(at),
    });
    into.exec_arg = exec_kubelet_arg(unit, "resolv-conf").map(|(value, at)| Setting {
        value,
        source: Source {
            detail: Some("kubelet-arg".into()),
            ..source(at)
        },
    });
}

/// `path` and its `.d/*.yaml` drop-ins in the order k3s's `configfilearg` merges them, each
/// parsed; the first that cannot be read or parsed is the error.
pub(crate) fn config_files(raw: &RawFacts, path: &str) -> Result<Vec<(String, K3sConfig)>, String> {
    let dropin_dir = format!("{path}.d");
    let mut files: Vec<String> = match raw.get(path).map(|f| f.state) {
        Some(FileState::Present) => vec![path.to_owned()],
        Some(FileState::Missing) => vec![],
        _ => return Err(format!("{path}: could not be read")),
    };
    // A drop-in k3s would read that was not read (an error record, a file the batch did
    // not deliver) leaves the merge unknown, as one that does not parse does.
    let mut dropins: Vec<String> = raw
        .files_in(&dropin_dir)
        .filter(|(p, f)| {
            super::k3s_config::is_dropin_name(p)
                && !matches!(f.state, FileState::Missing | FileState::Directory)
        })
        .map(|(p, _)| p.to_owned())
        .collect();
    dropins.sort();
    files.extend(dropins);
    files
        .into_iter()
        .map(|file| {
            let text = raw
                .get(&file)
                .and_then(RawFile::text)
                .ok_or_else(|| format!("{file}: could not be read"))?;
            let config = K3sConfig::parse(&text).map_err(|e| format!("{file}: {e}"))?;
            Ok((file, config))
        })
        .collect()
}

/// `config.yaml` then `config.yaml.d/*.yaml` in name order, k3s's `configfilearg` merge:
/// a later file's `resolv-conf` replaces; `kubelet-arg` is replaced, or appended to with
/// `kubelet-arg+`.
fn config_settings(
    configs: &Result<Vec<(String, K3sConfig)>, String>,
    into: &mut RancherSettings,
) -> Result<(), String> {
    let configs = configs.as_ref().map_err(Clone::clone)?;
    for (file, config) in configs {
        let file = file.as_str();
        let source = |line| Source::new("k3s_config", Some(file), Some(line));
        if let Some(l) = config.resolv_conf.clone() {
            into.config_native = Some(Setting {
                value: l.value,
                source: source(l.line),
            });
        }
    }
    into.config_arg = config_kubelet_arg(configs, "resolv-conf").map(|(file, l)| Setting {
        value: l.value,
        source: Source {
            detail: Some("kubelet-arg".into()),
            ..Source::new("k3s_config", Some(file), Some(l.line))
        },
    });
    Ok(())
}

/// The `kubelet-arg NAME=VALUE` the config files leave in force, and the file it is in: a
/// later file's `kubelet-arg:` replaces the list, `kubelet-arg+:` adds to it, the last
/// occurrence wins.
fn config_kubelet_arg<'c>(
    configs: &'c [(String, K3sConfig)],
    name: &str,
) -> Option<(&'c str, Located<String>)> {
    for (file, c) in configs.iter().rev() {
        if let Some(l) = c.kubelet_arg(name) {
            return Some((file, l));
        }
        if c.sets_kubelet_args && !c.kubelet_args_appended {
            return None;
        }
    }
    None
}

/// The `--cluster-dns` k3s and RKE2 give the kubelet from `kubelet-arg`: the config files'
/// list (a later file's `kubelet-arg:` replaces it, `kubelet-arg+:` adds to it), then the
/// service's command line (k3s `configfilearg` puts the files' values before it). k3s keeps
/// every `cluster-dns=` entry, in order, `cluster-dns-=` before the others (pkg/util
/// `GetArgs`), and the kubelet's string-slice flag adds them up, each a comma-separated
/// list. A kubelet flag beats its config files, k3s's own `00-k3s-defaults.conf` (the
/// clusterDNS k3s chose) included. The source is the entry that comes last. Before v1.32
/// k3s passed its clusterDNS as the flag itself (`initial`, `argsMap["cluster-dns"]`):
/// the first entry replaces it, but `cluster-dns+=` adds to it and `cluster-dns-=` puts
/// itself before it.
fn rancher_cluster_dns_arg(
    configs: &[(String, K3sConfig)],
    unit: Option<&ServiceUnit>,
    initial: Option<&[String]>,
) -> Option<Effective<Vec<String>>> {
    let args = kubelet_arg_entries(configs, unit);
    let mut values: Vec<String> = Vec::new();
    let mut sites: Vec<String> = Vec::new();
    let mut last: Option<Source> = None;
    let mut initial = initial.map(|i| i.join(","));
    for (arg, source) in args {
        use super::k3s_config::{KubeletArg, kubelet_arg_entry};
        // One written with one dash sets nothing: the kubelet refuses it and does not start.
        let (value, prepends) = match kubelet_arg_entry(&arg, "cluster-dns") {
            Some(KubeletArg::Sets(value)) => (value, false),
            Some(KubeletArg::Prepends(value)) => (value, true),
            Some(KubeletArg::Refused) | None => continue,
        };
        let appends = arg.split_once('=').is_some_and(|(k, _)| k.ends_with('+'));
        // GetArgs takes the initial value away at the key's first entry.
        let first = initial.take();
        if prepends {
            values.splice(0..0, [Some(value.to_owned()), first].into_iter().flatten());
        } else {
            values.extend(first.filter(|_| appends));
            values.push(value.to_owned());
        }
        if let Some(earlier) = last.replace(source) {
            sites.push(earlier.at());
        }
    }
    let source = last?;
    let detail = match sites.is_empty() {
        true => KUBELET_ARG.to_owned(),
        false => format!("{KUBELET_ARG}{ADDED_TO}{}", sites.join(", ")),
    };
    Some(Effective {
        value: values.iter().flat_map(|v| split_list(v)).collect(),
        source: Source {
            detail: Some(detail),
            ..source
        },
        shadowed: vec![],
    })
}

/// Every `kubelet-arg` entry k3s/RKE2 hand `GetArgs`, in order, and where it is written: the
/// config files' list (a later file's `kubelet-arg:` replaces it, `kubelet-arg+:` adds to
/// it), then the service's command line (k3s `configfilearg` puts the files' values before
/// it).
fn kubelet_arg_entries(
    configs: &[(String, K3sConfig)],
    unit: Option<&ServiceUnit>,
) -> Vec<(String, Source)> {
    let mut args: Vec<(String, Source)> = Vec::new();
    for (file, config) in configs {
        if config.sets_kubelet_args && !config.kubelet_args_appended {
            args.clear();
        }
        args.extend(config.kubelet_args.iter().map(|a| {
            let source = Source::new("k3s_config", Some(file), Some(a.line));
            (a.value.clone(), source)
        }));
    }
    if let Some(u) = unit {
        for (i, word) in u.argv.iter().enumerate() {
            let text = word.text.trim_start_matches('-');
            let arg = match text.strip_prefix("kubelet-arg=") {
                Some(arg) => arg,
                None if text == "kubelet-arg" => match u.argv.get(i + 1) {
                    Some(next) => next.text.as_str(),
                    None => continue,
                },
                None => continue,
            };
            let source = Source::new("k3s_flag", Some(&word.at.path), Some(word.at.line));
            args.push((arg.to_owned(), source));
        }
    }
    args
}

/// The `kubelet-arg` entries for resolv-conf that only prepend or that the kubelet refuses
/// ([`KubeletArg`](super::k3s_config::KubeletArg)): the first `resolv-conf-=` entry, which
/// comes last where nothing else is there (each later one goes before it), and a note for
/// each refused one.
fn kubelet_arg_odd_entries(args: &[(String, Source)], program: &str, into: &mut RancherSettings) {
    use super::k3s_config::{KubeletArg, kubelet_arg_entry};
    for (arg, source) in args {
        match kubelet_arg_entry(arg, "resolv-conf") {
            Some(KubeletArg::Prepends(value)) if into.prepend_arg.is_none() => {
                into.prepend_arg = Some(Setting {
                    value: value.to_owned(),
                    source: Source {
                        detail: Some(KUBELET_ARG.into()),
                        ..source.clone()
                    },
                });
            }
            Some(KubeletArg::Refused) => {
                let (key, value) = arg
                    .strip_prefix("--")
                    .unwrap_or(arg)
                    .split_once('=')
                    .unwrap_or_default();
                into.refused.push(format!(
                    "kubelet-arg {arg} at {} sets no resolv-conf: {program} takes only a leading -- away and hands the kubelet --{}={value}, which it refuses (bad flag syntax): the kubelet does not start",
                    source.at(),
                    key.trim_end_matches(['-', '+'])
                ));
            }
            _ => {}
        }
    }
}

/// `k3s` or `rke2`, from the default data dir `/var/lib/rancher/<program>`.
fn program_of(data_dir: &str) -> &str {
    data_dir.rsplit('/').next().unwrap_or("k3s")
}

/// The `detail` of a k3s/RKE2 setting from a `kubelet-arg` entry; for `--cluster-dns`,
/// followed by [`ADDED_TO`] and the earlier entries where there are several (k3s passes
/// every one on, and the kubelet adds them up).
pub(crate) const KUBELET_ARG: &str = "kubelet-arg";
pub(crate) const ADDED_TO: &str = "; added to the entries at ";

/// `K3S_RESOLV_CONF` (`RKE2_RESOLV_CONF`, `env_var`) in the service's environment, where it
/// counts: it is only the default of k3s's own --resolv-conf (urfave/cli EnvVars), so the
/// flag set on the command line or in a config file, even to "", leaves it unused.
fn rancher_env_setting(
    unit: Option<&ServiceUnit>,
    env_var: &str,
    settings: &RancherSettings,
) -> Option<Setting> {
    if settings.exec_native.is_some() || settings.config_native.is_some() {
        return None;
    }
    let v = unit?.environment.get(env_var)?;
    Some(Setting {
        value: v.value.clone(),
        source: Source {
            detail: Some(env_var.to_owned()),
            ..Source::new("k3s_env", Some(&v.at.path), Some(v.at.line))
        },
    })
}

/// A k3s service of a kind dnsfix does not read, where the node has it: an OpenRC script
/// (`/etc/init.d/k3s*`) or a unit installed with INSTALL_K3S_NAME (`k3s-NAME.service`).
fn unread_rancher_service(raw: &RawFacts) -> Option<&str> {
    raw.files
        .iter()
        .filter(|(_, f)| f.state == FileState::Present)
        .map(|(path, _)| path.as_str())
        .find(|path| {
            path.starts_with("/etc/init.d/k3s")
                || path
                    .strip_prefix("/etc/systemd/system/k3s-")
                    .is_some_and(|name| name.ends_with(".service") && name != "agent.service")
        })
}

/// Elsewhere than its default data dir, k3s writes the kubelet's own files (its config
/// drop-ins, the fallback resolv.conf) where dnsfix does not read them, and with its config
/// file elsewhere it takes its settings from a file dnsfix does not read: why, where the
/// config file k3s or RKE2 reads (`K3S_CONFIG_FILE`, over `--config`/`-c`) or the
/// `data-dir` it runs with is not the default. The data dir is set by the service's command
/// line (`--data-dir`, `-d`) over the config files (configfilearg puts their values before
/// it; the last file that sets it wins) over `K3S_DATA_DIR` / `RKE2_DATA_DIR` in the unit's
/// environment (cmds.DataDirFlag, `EnvVars`). And where k3s runs as a service dnsfix does
/// not read ([`unread_rancher_service`]), its command line and environment are not known.
fn rancher_files_elsewhere(
    raw: &RawFacts,
    configs: &Result<Vec<(String, K3sConfig)>, String>,
    unit: Option<&ServiceUnit>,
    (default_config, default): (&str, &str),
) -> Option<String> {
    let program = match program_of(default) {
        "rke2" => "RKE2",
        _ => "k3s",
    };
    let upper = program.to_ascii_uppercase();
    if unit.is_none()
        && program == "k3s"
        && let Some(service) = unread_rancher_service(raw)
    {
        return Some(format!(
            "{service}: k3s runs as a service dnsfix does not read (OpenRC, or installed with INSTALL_K3S_NAME), whose command line and environment may set its kubelet's DNS"
        ));
    }
    let from_env = |var: String| {
        let v = unit?.environment.get(&var)?;
        Some((
            v.value.clone(),
            format!("{var} at {}:{}", v.at.path, v.at.line),
        ))
    };
    // Its own config file elsewhere, whose settings dnsfix does not read: `K3S_CONFIG_FILE`
    // where it is not empty, else the first `--config`/`-c` (configfilearg
    // findConfigFileFlag: the variable first, then the first flag on the command line).
    let config = from_env(format!("{upper}_CONFIG_FILE"))
        .filter(|(v, _)| !v.is_empty())
        .or_else(|| {
            let (value, at) = exec_flag_values(unit, &["config", "c"])
                .into_iter()
                .next()?;
            Some((value, format!("{}:{}", at.path, at.line)))
        });
    if let Some((value, at)) = config.filter(|(v, _)| *v != default_config) {
        return Some(format!(
            "{program} reads its config from {value} ({at}): dnsfix reads only {default_config} and its config.yaml.d"
        ));
    }
    let mut found = from_env(format!("{upper}_DATA_DIR"));
    for (file, config) in configs.as_deref().unwrap_or_default() {
        if let Some(l) = &config.data_dir {
            found = Some((l.value.clone(), format!("{file}:{}", l.line)));
        }
    }
    found = exec_flag(unit, &["data-dir", "d"]).or(found);
    let (value, at) = found?;
    let trimmed = value.trim_end_matches('/');
    (!trimmed.is_empty() && trimmed != default).then(|| {
        format!(
            "{program} runs with data-dir {value} ({at}): dnsfix reads the files it writes for the kubelet only under {default}"
        )
    })
}

/// The last value of one of k3s's own flags `names` on its service's command line
/// (`--name X`, `--name=X`, one dash too, as urfave/cli takes them), and where: not the
/// value of a `--kubelet-arg` or another pass-through argument.
fn exec_flag(unit: Option<&ServiceUnit>, names: &[&str]) -> Option<(String, String)> {
    let (value, at) = exec_flag_values(unit, names).pop()?;
    Some((value, format!("{}:{}", at.path, at.line)))
}

/// Every value of [`exec_flag`]'s flags, in command-line order.
fn exec_flag_values(unit: Option<&ServiceUnit>, names: &[&str]) -> Vec<(String, At)> {
    let Some(unit) = unit else {
        return Vec::new();
    };
    let words = &unit.argv;
    let mut found = Vec::new();
    for (i, word) in words.iter().enumerate() {
        if passed_on(words, i) || !word.text.starts_with('-') {
            continue;
        }
        let text = word.text.trim_start_matches('-');
        let (name, inline) = match text.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (text, None),
        };
        if !names.contains(&name) {
            continue;
        }
        let value = inline.or_else(|| words.get(i + 1).map(|w| w.text.as_str()));
        if let Some(v) = value {
            found.push((v.to_owned(), word.at.clone()));
        }
    }
    found
}

/// Whether word `i` of a k3s/RKE2 command line is the value of a pass-through argument
/// (`--kubelet-arg X`, `--kube-proxy-arg X`, ...), not a flag of k3s's own.
fn passed_on(words: &[super::systemd_unit::Word], i: usize) -> bool {
    i > 0 && {
        let prev = &words[i - 1].text;
        prev.starts_with('-') && prev.ends_with("-arg")
    }
}

/// Whether a k3s boolean flag's value is true as urfave/cli reads it (strconv.ParseBool).
fn go_true(value: &str) -> bool {
    matches!(value, "1" | "t" | "T" | "true" | "TRUE" | "True")
}

/// `flag`, with the config setting it beats among what it shadows.
fn flag_over(
    mut flag: Effective<Vec<String>>,
    config: Effective<Vec<String>>,
) -> Effective<Vec<String>> {
    flag.shadowed.push(Shadowed {
        value: config.value.join(","),
        source: config.source,
    });
    flag
}

/// The clusterDNS a k3s/RKE2 kubelet runs with: a kubelet config drop-in after their own,
/// else what they chose (their own drop-in from v1.32, the config's `cluster-dns`, their
/// default); a `kubelet-arg` `--cluster-dns` over either.
fn rancher_cluster_dns_in_effect(
    raw: &RawFacts,
    data_dir: &str,
    from_config: &Result<(), String>,
    dropins: &Result<RancherDropins, String>,
    configs: &Result<Vec<(String, K3sConfig)>, String>,
    unit: Option<&ServiceUnit>,
) -> Observed<Effective<Vec<String>>> {
    match (from_config, dropins, configs.as_deref()) {
        (Err(e), _, _) | (_, _, Err(e)) => Observed::Unknown(e.clone()),
        (Ok(_), dropins, Ok(configs)) => {
            let config = match dropins {
                Ok(RancherDropins {
                    cluster_dns: Some(dns),
                    ..
                }) => dns.clone(),
                _ => match rancher_cluster_dns(configs, unit) {
                    Ok(config) => config,
                    Err(why) => return Observed::Unknown(why),
                },
            };
            // A `--cluster-dns` from kubelet-arg beats them all: the kubelet's flags over
            // its config files. Before v1.32 (no defaults drop-in of its own) k3s passed
            // its own as that flag.
            let own = format!(
                "{data_dir}/agent/etc/kubelet.conf.d/00-{}-defaults.conf",
                program_of(data_dir)
            );
            let flag = raw.get(&own).is_none_or(|f| f.state != FileState::Present);
            let initial = flag.then_some(config.value.as_slice());
            Observed::Known(match rancher_cluster_dns_arg(configs, unit, initial) {
                Some(flag) => flag_over(flag, config),
                None => config,
            })
        }
    }
}

/// Whether the k3s/RKE2 here hands the kubelet its own resolv.conf in its kubelet config
/// drop-in rather than as a `--resolv-conf` flag: from v1.32 (k3s pkg/daemons/agent
/// `defaultKubeletConfig` sets `ResolverConfig`, and `kubeletArgsAndConfig` passes no
/// `resolv-conf`; RKE2 of the same Kubernetes minor runs that agent code, and starts its
/// kubelet with what `GetArgs` gives: rancher/rke2@6ce1a801
/// pkg/executor/staticpod/staticpod.go `Kubelet(ctx, args)`). The version
/// decides (the binary's, else the cluster's or the inventory's), else the drop-in (`own`:
/// k3s writes it only from v1.32); `None` where neither says.
fn rancher_own_in_dropin(raw: &RawFacts, own: bool) -> Option<bool> {
    match rancher_version(raw).as_deref().and_then(version_minor) {
        Some(minor) => Some(minor >= 32),
        None => own.then_some(true),
    }
}

/// The resolv.conf a k3s/RKE2 kubelet gets from `settings` and the environment's `env`
/// ([`RancherSettings::chain`]), else from their automatic choice. An empty native setting
/// or variable means "choose automatically" (k3s issue #5627), and ends the chain there:
/// the settings after it are shadowed (an empty `--resolv-conf=` in ExecStart comes after
/// config.yaml's on k3s's command line, so it wins); an empty kubelet-arg is passed to the
/// kubelet as it is. A `resolv-conf-=` kubelet-arg where the version does not say whether
/// k3s passes its own flag after it: unknown. Refused kubelet-arg entries are named beside
/// what won.
fn rancher_resolv_conf(
    raw: &RawFacts,
    data_dir: &str,
    settings: RancherSettings,
    env: Option<Setting>,
    own: bool,
) -> Observed<Effective<String>> {
    let explicit = |s: &Setting| {
        !s.value.is_empty()
            || s.source.detail.as_deref() == Some(KUBELET_ARG)
            || s.source.kind == RANCHER_DROPIN
    };
    let refused = settings.refused.join("; ");
    let decided = settings.exec_arg.is_some() || settings.config_arg.is_some();
    let prepend = match (&settings.prepend_arg, rancher_own_in_dropin(raw, own)) {
        (Some(p), None) if !decided => {
            return Observed::Unknown(format!(
                "{K3S_VERSION_UNKNOWN}, and it decides the kubelet's resolv.conf: kubelet-arg resolv-conf-={} at {} goes before every other value; k3s/RKE2 before v1.32 pass their own --resolv-conf after it, which the kubelet keeps, and from v1.32 none (their choice is in their kubelet config drop-in), so the kubelet keeps it",
                p.value,
                p.source.at()
            ));
        }
        (_, in_dropin) => in_dropin == Some(true),
    };
    // Before v1.32 k3s's own flag comes after a `resolv-conf-=` entry and wins over it.
    let outranked = settings
        .prepend_arg
        .clone()
        .filter(|_| !prepend && !decided);
    let mut chain = settings.chain(env, prepend).into_iter();
    let first = chain.next();
    let mut out = match first {
        Some(winner) if explicit(&winner) => Observed::Known(Effective {
            value: winner.value,
            source: winner.source,
            shadowed: vec![],
        }),
        _ => k3s_auto_resolv_conf(raw, data_dir, rancher_version(raw).as_deref()),
    };
    if let Observed::Known(e) = &mut out {
        e.shadowed = outranked
            .into_iter()
            .chain(chain)
            .filter(explicit)
            .map(|s| Shadowed {
                value: s.value,
                source: s.source,
            })
            .collect();
        if !refused.is_empty() {
            e.source.detail = Some(match e.source.detail.take() {
                Some(d) => format!("{d}; {refused}"),
                None => refused,
            });
        }
    }
    out
}

/// k3s and RKE2 embed or launch the kubelet and choose its resolv.conf themselves.
fn rancher_kubelet(
    raw: &RawFacts,
    flavour: &Flavour,
    pid: Option<u32>,
    flags: Vec<FlagFact>,
) -> Kubelet {
    let (path, data_dir, env_var) = match flavour.kind {
        FlavourKind::Rke2 => (RKE2_CONFIG, "/var/lib/rancher/rke2", "RKE2_RESOLV_CONF"),
        _ => (K3S_CONFIG, "/var/lib/rancher/k3s", "K3S_RESOLV_CONF"),
    };
    let unit = rancher_unit(raw, flavour);
    let mut settings = RancherSettings::default();
    if let Some(u) = &unit {
        exec_start_settings(u, &mut settings);
    }
    // Read once: the resolv.conf settings and the node's name both come from them.
    let configs = config_files(raw, path);
    let from_config = config_settings(&configs, &mut settings);
    let mut dropins = rancher_dropins(
        raw,
        flavour,
        unit.as_ref(),
        configs.as_deref().unwrap_or_default(),
    );
    let from_config = from_config.and(dropins.as_ref().map(|_| ()).map_err(Clone::clone));
    if let Ok(d) = &mut dropins {
        settings.dropin = d.resolv_conf.take();
    }
    let config_error = from_config.as_ref().err().cloned();
    let env_setting = rancher_env_setting(unit.as_ref(), env_var, &settings);
    kubelet_arg_odd_entries(
        &kubelet_arg_entries(configs.as_deref().unwrap_or_default(), unit.as_ref()),
        program_of(data_dir),
        &mut settings,
    );
    let resolv_conf = match &from_config {
        Err(e) => Observed::Unknown(e.clone()),
        Ok(()) => {
            let own = dropins.as_ref().is_ok_and(|d| d.own);
            rancher_resolv_conf(raw, data_dir, settings, env_setting, own)
        }
    };
    let resolv_conf = chosen_at_last_start(raw, resolv_conf, &dropins, unit.as_ref());
    let cluster_dns = rancher_cluster_dns_in_effect(
        raw,
        data_dir,
        &from_config,
        &dropins,
        &configs,
        unit.as_ref(),
    );
    let cluster_domain = match (&from_config, &dropins, configs.as_deref()) {
        (Err(e), _, _) | (_, _, Err(e)) => Observed::Unknown(e.clone()),
        (Ok(()), dropins, Ok(configs)) => rancher_cluster_domain(dropins, configs, unit.as_ref()),
    };
    let chosen = match rancher_files_elsewhere(raw, &configs, unit.as_ref(), (path, data_dir)) {
        Some(why) => (
            Observed::Unknown(why.clone()),
            Observed::Unknown(why.clone()),
            Observed::Unknown(why),
        ),
        None => (resolv_conf, cluster_dns, cluster_domain),
    };
    let (resolv_conf, cluster_dns, cluster_domain) = live_settings(pid, &flags, chosen);
    let pod_resolv_conf = resolv_conf.known().map(|e| ResolvFile::read(raw, &e.value));
    let mut flags = flags;
    if !flags.iter().any(|f| f.name == "hostname-override")
        && let Some(name) = rancher_node_name(
            raw,
            flavour,
            configs.as_deref().unwrap_or_default(),
            unit.as_ref(),
        )
    {
        flags.push(name);
    }
    Kubelet {
        pid,
        unit: None,
        version: None,
        binary_replaced: false,
        config_path: Some(path.to_owned()),
        config_dropins: Vec::new(),
        resolv_conf_key: None,
        config_error,
        args_file: None,
        runtime_endpoint: rancher_runtime_endpoint(pid, &flags, &configs, unit.as_ref()),
        flags,
        resolv_conf,
        cluster_dns,
        cluster_domain,
        pod_resolv_conf,
        resolv_conf_by_version: None,
    }
}

/// The CRI endpoint of a k3s/RKE2 kubelet, where one is set: RKE2's own kubelet process
/// names it; else a `kubelet-arg` does; k3s's embedded kubelet runs on k3s's containerd
/// unless k3s is told `docker`
/// (its cri-dockerd's socket, pkg/agent/config config_linux.go) or a
/// `container-runtime-endpoint` (pkg/agent/config config.go: Docker first, then the
/// endpoint where not empty): the service's command line over the config files, the last
/// that sets it.
fn rancher_runtime_endpoint(
    pid: Option<u32>,
    flags: &[FlagFact],
    configs: &Result<Vec<(String, K3sConfig)>, String>,
    unit: Option<&ServiceUnit>,
) -> Option<Effective<String>> {
    // The kubelet's own command line, as `live_settings` takes it: only where it runs.
    let name = "container-runtime-endpoint";
    if let Some(flag) = pid.and_then(|_| flags.iter().rev().find(|f| f.name == name)) {
        return Some(flag_setting(flag));
    }
    let configs = configs.as_deref().unwrap_or_default();
    // A kubelet-arg replaces the endpoint k3s gives its kubelet (its extra args go over its
    // own): the command line's over the config files'.
    let kubelet_arg = unit
        .and_then(|u| exec_kubelet_arg(u, name))
        .map(|(value, at)| {
            (
                value,
                Source::new("k3s_flag", Some(&at.path), Some(at.line)),
            )
        })
        .or_else(|| {
            let (file, l) = config_kubelet_arg(configs, name)?;
            Some((l.value, Source::new("k3s_config", Some(file), Some(l.line))))
        });
    if let Some((value, source)) = kubelet_arg {
        return Some(Effective {
            value,
            source: Source {
                detail: Some("kubelet-arg".into()),
                ..source
            },
            shadowed: Vec::new(),
        });
    }
    let in_config = |get: fn(&K3sConfig) -> Option<&Located<String>>| {
        configs.iter().rev().find_map(|(file, c)| {
            let l = get(c)?;
            Some((
                l.value.clone(),
                Source::new("k3s_config", Some(file), Some(l.line)),
            ))
        })
    };
    let docker = exec_bool(unit, "docker").or_else(|| in_config(|c| c.docker.as_ref()));
    let (value, source) = match docker.filter(|(v, _)| go_true(v)) {
        Some((_, source)) => (
            "unix:///run/k3s/cri-dockerd/cri-dockerd.sock".to_owned(),
            Source {
                detail: Some("docker: k3s's cri-dockerd".into()),
                ..source
            },
        ),
        None => exec_flag_values(unit, &["container-runtime-endpoint"])
            .pop()
            .map(|(v, at)| (v, Source::new("k3s_flag", Some(&at.path), Some(at.line))))
            .or_else(|| in_config(|c| c.container_runtime_endpoint.as_ref()))?,
    };
    (!value.is_empty()).then(|| Effective {
        value,
        source,
        shadowed: Vec::new(),
    })
}

/// A boolean flag of k3s's own on its service's command line (`--name`, `--name=true`,
/// `--name=false`), the last, as `"true"`/`"false"` with where.
fn exec_bool(unit: Option<&ServiceUnit>, name: &str) -> Option<(String, Source)> {
    let unit = unit?;
    let words = &unit.argv;
    words.iter().enumerate().rev().find_map(|(i, word)| {
        let text = word.text.strip_prefix('-')?.trim_start_matches('-');
        let value = match text.split_once('=') {
            Some((n, v)) if n == name => v,
            None if text == name => "true",
            _ => return None,
        };
        (!passed_on(words, i)).then(|| {
            (
                value.to_owned(),
                Source::new("k3s_flag", Some(&word.at.path), Some(word.at.line)),
            )
        })
    })
}

/// The settings of a k3s/RKE2 kubelet with what its own process says over them. RKE2 runs
/// the kubelet as a process of its own (k3s embeds it: no such process, `pid` none), and
/// its command line is the truth: a --resolv-conf, --cluster-dns or --cluster-domain there
/// (RKE2 before v1.32 passed its own choices so; a kubelet-arg is one at any version)
/// beats every config file and drop-in.
fn live_settings(
    pid: Option<u32>,
    flags: &[FlagFact],
    (resolv_conf, cluster_dns, cluster_domain): RancherDns,
) -> RancherDns {
    let live = |name: &str| pid.and_then(|_| flags.iter().rev().find(|f| f.name == name));
    let live_dns = live("cluster-dns").map(|last| Effective {
        value: flags
            .iter()
            .filter(|f| f.name == "cluster-dns")
            .filter_map(|f| f.value.as_deref())
            .flat_map(|v| v.split(',').filter(|a| !a.is_empty()).map(str::to_owned))
            .collect(),
        source: last.source.clone(),
        shadowed: vec![],
    });
    (
        explained(live("resolv-conf").map(flag_setting), resolv_conf),
        explained(live_dns, cluster_dns),
        explained(live("cluster-domain").map(flag_setting), cluster_domain),
    )
}

/// The running kubelet's flag as the setting, unless the files say the same: then where
/// they write it (a `kubelet-arg` in config.yaml, which RKE2 passes on as that flag) is
/// the place to change it, not the process's command line.
fn explained<T: PartialEq>(
    live: Option<Effective<T>>,
    chosen: Observed<Effective<T>>,
) -> Observed<Effective<T>> {
    match (live, chosen) {
        (Some(live), Observed::Known(chosen)) if chosen.value == live.value => {
            Observed::Known(chosen)
        }
        (Some(live), _) => Observed::Known(live),
        (None, chosen) => chosen,
    }
}

/// The resolv.conf a running k3s/RKE2 (v1.32 and later) chose itself at its last start,
/// where that was its generated file and the files it reads would now give another: it
/// wrote its choice into its own drop-in then, and its kubelet keeps it until the next
/// start (k3s started before DHCP or systemd-resolved filled /etc/resolv.conf in: 8.8.8.8
/// until a restart). The other way round (a host file then, its generated one at the next
/// start) stays as computed: the file it uses now is the host's, judged as it is, and the
/// fallback of its next start is the finding. An explicit setting, a stopped service, or
/// the same choice: as computed.
fn chosen_at_last_start(
    raw: &RawFacts,
    computed: Observed<Effective<String>>,
    dropins: &Result<RancherDropins, String>,
    unit: Option<&ServiceUnit>,
) -> Observed<Effective<String>> {
    let running = unit.is_some_and(|u| unit_active(raw, u));
    let written = dropins
        .as_ref()
        .ok()
        .and_then(|d| d.own_resolv_conf.as_ref());
    match (computed, written) {
        (Observed::Known(now), Some(then))
            if running
                && now.source.kind == "k3s_auto"
                && now.value != then.value
                && then.value.ends_with("/agent/etc/resolv.conf") =>
        {
            Observed::Known(Effective {
                value: then.value.clone(),
                source: Source {
                    detail: Some(format!(
                        "chosen at its last start (the files it reads now give {}, at its next start)",
                        now.value
                    )),
                    ..then.source.clone()
                },
                shadowed: vec![],
            })
        }
        (computed, _) => computed,
    }
}

/// A k3s/RKE2 kubelet's resolvConf, clusterDNS and clusterDomain.
type RancherDns = (
    Observed<Effective<String>>,
    Observed<Effective<Vec<String>>>,
    Observed<Effective<String>>,
);

/// A scalar flag as the setting in effect.
fn flag_setting(flag: &FlagFact) -> Effective<String> {
    Effective {
        value: flag.value.clone().unwrap_or_default(),
        source: flag.source.clone(),
        shadowed: vec![],
    }
}

/// The clusterDomain a k3s or RKE2 kubelet runs with: a `kubelet-arg` cluster-domain (a
/// kubelet flag: the service's command line over the config files), else from v1.32 a
/// kubelet config drop-in after their own, else their own (written at every start, never
/// empty); before v1.32, when they passed it as a flag, a server's `cluster-domain` (the
/// service's command line over the config files, the last file that sets it), else
/// cluster.local (pkg/cli/cmds/server.go); an agent's is its server's: unknown.
fn rancher_cluster_domain(
    dropins: &Result<RancherDropins, String>,
    configs: &[(String, K3sConfig)],
    unit: Option<&ServiceUnit>,
) -> Observed<Effective<String>> {
    let arg = unit
        .and_then(|u| exec_kubelet_arg(u, "cluster-domain"))
        .map(|(value, at)| Setting {
            value,
            source: Source {
                detail: Some("kubelet-arg".into()),
                ..Source::new("k3s_flag", Some(&at.path), Some(at.line))
            },
        })
        .or_else(|| {
            config_kubelet_arg(configs, "cluster-domain").map(|(file, l)| Setting {
                value: l.value,
                source: Source {
                    detail: Some("kubelet-arg".into()),
                    ..Source::new("k3s_config", Some(file), Some(l.line))
                },
            })
        });
    let chosen = match dropins {
        Err(why) => Err(why.clone()),
        Ok(d) if d.own => d
            .cluster_domain
            .as_ref()
            .map(|s| Setting {
                value: s.value.clone(),
                source: s.source.clone(),
            })
            .ok_or_else(|| "k3s's own kubelet config drop-in names no clusterDomain".to_owned()),
        Ok(_) => rancher_server_domain(configs, unit),
    };
    match (arg, chosen) {
        (Some(arg), under) => Observed::Known(Effective {
            value: arg.value,
            source: arg.source,
            shadowed: under
                .into_iter()
                .map(|s| Shadowed {
                    value: s.value,
                    source: s.source,
                })
                .collect(),
        }),
        (None, Ok(s)) => Observed::Known(Effective {
            value: s.value,
            source: s.source,
            shadowed: vec![],
        }),
        (None, Err(why)) => Observed::Unknown(why),
    }
}

/// Before v1.32: the cluster domain a k3s/RKE2 server hands its kubelet as a flag.
fn rancher_server_domain(
    configs: &[(String, K3sConfig)],
    unit: Option<&ServiceUnit>,
) -> Result<Setting, String> {
    if let Some(u) = unit.filter(|u| rancher_agent(u)) {
        return Err(format!(
            "{} {RANCHER_AGENT}, whose clusterDomain comes from its server (before v1.32 in no file on the node)",
            u.name
        ));
    }
    if let Some((value, at)) = exec_flag_values(unit, &["cluster-domain"]).pop() {
        return Ok(Setting {
            value,
            source: Source::new("k3s_flag", Some(&at.path), Some(at.line)),
        });
    }
    let from_file = configs.iter().rev().find_map(|(file, c)| {
        let l = c.cluster_domain.as_ref()?;
        Some(Setting {
            value: l.value.clone(),
            source: Source::new("k3s_config", Some(file), Some(l.line)),
        })
    });
    Ok(from_file.unwrap_or_else(|| Setting {
        value: "cluster.local".to_owned(),
        source: Source {
            detail: Some("k3s/rke2 default".into()),
            ..Source::new("default", None, None)
        },
    }))
}

/// The `--hostname-override` k3s and RKE2 give the kubelet they run (k3s
/// pkg/daemons/agent: `argsMap["hostname-override"] = cfg.NodeName`, then the `kubelet-arg`
/// entries over it), when it is not the hostname: a `kubelet-arg` hostname-override, else
/// `node-name` (pkg/cli/cmds NodeNameFlag), from the unit's command line over the config
/// files (configfilearg puts them before it) over `K3S_NODE_NAME`/`RKE2_NODE_NAME`.
/// Lowercased, as k3s does (pkg/agent/config getHostnameAndIPs). With `with-node-id` k3s
/// appends "-" and the id kept in /etc/rancher/node/id (pkg/agent/config ensureNodeID,
/// trimmed; RKE2 runs the same agent code) to that name, or to the hostname: without that
/// file (k3s writes it on its first start with the flag) the name is not known.
fn rancher_node_name(
    raw: &RawFacts,
    flavour: &Flavour,
    configs: &[(String, K3sConfig)],
    unit: Option<&ServiceUnit>,
) -> Option<FlagFact> {
    let env_var = match flavour.kind {
        FlavourKind::Rke2 => "RKE2_NODE_NAME",
        _ => "K3S_NODE_NAME",
    };
    let mut override_arg = None;
    let mut node_name = unit.and_then(|u| {
        let v = u.environment.get(env_var)?;
        Some((
            v.value.clone(),
            Source::new("k3s_env", Some(&v.at.path), Some(v.at.line)),
        ))
    });
    let mut with_id = false;
    for (file, config) in configs {
        let source = |line| Source::new("k3s_config", Some(file), Some(line));
        if let Some(l) = config.node_name.clone() {
            node_name = Some((l.value, source(l.line)));
        }
        if let Some(l) = config.kubelet_arg("hostname-override") {
            override_arg = Some((l.value, source(l.line)));
        }
        with_id |= config.with_node_id;
    }
    if let Some(u) = unit {
        let words = &u.argv;
        for (i, word) in words.iter().enumerate() {
            let text = word.text.trim_start_matches('-');
            let next = || words.get(i + 1).map(|w| w.text.clone());
            let source = || Source::new("k3s_flag", Some(&word.at.path), Some(word.at.line));
            let arg = |a: &str| {
                a.trim_start_matches('-')
                    .strip_prefix("hostname-override=")
                    .map(str::to_owned)
            };
            if let Some(v) = text.strip_prefix("node-name=") {
                node_name = Some((v.to_owned(), source()));
            } else if text == "node-name"
                && let Some(v) = next()
            {
                node_name = Some((v, source()));
            } else if let Some(v) = text.strip_prefix("kubelet-arg=").and_then(arg) {
                override_arg = Some((v, source()));
            } else if text == "kubelet-arg"
                && let Some(v) = next().as_deref().and_then(arg)
            {
                override_arg = Some((v, source()));
            } else if text == "with-node-id" || text == "with-node-id=true" {
                with_id = true;
            }
        }
    }
    // An empty node-name (`node-name:` with no value passes `--node-name=`) is the hostname.
    let node_name = node_name.filter(|(value, _)| !value.trim().is_empty());
    let (value, source, detail) = match (override_arg, node_name) {
        (Some((value, source)), _) => (value.trim().to_lowercase(), source, "kubelet-arg"),
        (None, name) if with_id => {
            let id = raw.files.get(NODE_ID)?.text()?.trim().to_owned();
            let base = match name {
                Some((value, _)) => value,
                None => raw
                    .files
                    .get("/proc/sys/kernel/hostname")?
                    .text()?
                    .into_owned(),
            };
            let base = base.trim().to_lowercase();
            if id.is_empty() || base.is_empty() {
                return None;
            }
            let source = Source::new("k3s_node_id", Some(NODE_ID), None);
            (format!("{base}-{id}"), source, "with-node-id")
        }
        (None, Some((value, source))) => (value.trim().to_lowercase(), source, "node-name"),
        (None, None) => return None,
    };
    (!value.is_empty()).then(|| FlagFact {
        name: "hostname-override".to_owned(),
        value: Some(value),
        source: Source {
            detail: Some(detail.into()),
            ..source
        },
    })
}

/// Where k3s and RKE2 keep the id `with-node-id` appends to the node's name.
pub const NODE_ID: &str = "/etc/rancher/node/id";

impl Kubelet {
    /// The kubelet gets the resolv.conf k3s/RKE2 generate themselves when no host file
    /// passes their check (`<data-dir>/agent/etc/resolv.conf`, nameserver 8.8.8.8): their
    /// guess, not a choice of the node's.
    pub fn on_rancher_fallback(&self) -> bool {
        matches!(&self.resolv_conf, Observed::Known(e)
            if e.source.kind == "k3s_auto" && e.value.ends_with("/agent/etc/resolv.conf"))
    }
}

/// `Source::kind` of a setting from a k3s/RKE2 kubelet config drop-in.
pub(crate) const RANCHER_DROPIN: &str = "k3s_kubelet_dropin";

/// A k3s/RKE2 clusterDNS that is the program's own choice, not a kubelet setting of the
/// operator's: what it writes into its own `00-<program>-defaults.conf` at every start (the
/// server's `cluster-dns`, else .10 of the service CIDR), the `cluster-dns` of a config file
/// (before v1.32), its default. `kubelet-arg: cluster-dns=` is how an operator overrides it.
pub(crate) fn rancher_chose_cluster_dns(source: &Source) -> bool {
    let own = |p: &str| {
        ["/var/lib/rancher/k3s", "/var/lib/rancher/rke2"]
            .iter()
            .any(|d| {
                p.strip_prefix(d)
                    .and_then(|rest| rest.strip_prefix("/agent/etc/kubelet.conf.d/00-"))
                    .is_some_and(|name| matches!(name, "k3s-defaults.conf" | "rke2-defaults.conf"))
            })
    };
    match source.kind.as_str() {
        RANCHER_DROPIN => source.path.as_deref().is_some_and(own),
        _ => true,
    }
}

/// How the `detail` of a [`RANCHER_DROPIN`] setting begins where the drop-in is k3s's copy
/// of what a `kubelet-arg` names: the fix goes in the file it copies from.
pub(crate) const COPY_OF: &str = "a copy of ";

/// ... and where it is a copy no `kubelet-arg` makes any more: the fix is to remove it.
pub(crate) const LEFT_OVER: &str = "left by ";

/// What the kubelet config drop-ins after k3s's own set, last one winning.
#[derive(Default)]
struct RancherDropins {
    resolv_conf: Option<Setting>,
    cluster_dns: Option<Effective<Vec<String>>>,
    cluster_domain: Option<Setting>,
    /// k3s's own drop-in is there (v1.32 and later).
    own: bool,
    /// The resolvConf k3s wrote into its own drop-in at its last start: what it chose then.
    own_resolv_conf: Option<Setting>,
}

/// The kubelet config drop-ins of a k3s/RKE2 (v1.32 and later) that come after its own
/// `00-k3s-defaults.conf` (`00-rke2-defaults.conf`), which it writes at every start with
/// the resolv.conf and clusterDNS it chose: the kubelet reads every `*.conf` under
/// `--config-dir` (`<data-dir>/agent/etc/kubelet.conf.d`, walked in name order), so a
/// drop-in there beats k3s's choice. k3s copies `kubelet-arg: config=F` to
/// `10-cli-config.conf` and `config-dir=D` to `20-cli-config-dir/` at every start
/// (pkg/daemons/agent `extractConfigArgs`, `writeKubeletConfig`; docs.k3s.io "Kubelet
/// Configuration Files"). It never removes a copy (no cleanup there, and otiai10/copy
/// merges into the directory), so a copy outlives the `kubelet-arg` that made it. Nothing
/// where k3s's own file is not there: before v1.32 the kubelet gets no config dir. A
/// drop-in that does not parse is an error.
fn rancher_dropins(
    raw: &RawFacts,
    flavour: &Flavour,
    unit: Option<&ServiceUnit>,
    configs: &[(String, K3sConfig)],
) -> Result<RancherDropins, String> {
    let (data_dir, program) = match flavour.kind {
        FlavourKind::Rke2 => ("/var/lib/rancher/rke2", "rke2"),
        _ => ("/var/lib/rancher/k3s", "k3s"),
    };
    let dir = format!("{data_dir}/agent/etc/kubelet.conf.d");
    let own = format!("{dir}/00-{program}-defaults.conf");
    if raw.get(&own).map(|f| f.state) != Some(FileState::Present) {
        return Ok(RancherDropins::default());
    }
    let copied = format!("{dir}/20-cli-config-dir");
    let walked = config_dir(raw, &dir)?;
    if let Some(why) = walked.unknown {
        return Err(why);
    }
    // The kubelet walks the directory in name order: a drop-in named before k3s's own
    // (`00-custom.conf`, a directory `00-k3s-defaults/`) is overridden by it, which always
    // sets resolvConf and clusterDNS.
    let after_own = walked
        .files
        .iter()
        .position(|p| *p == own)
        .map_or(0, |i| i + 1);
    let files = walked.files[after_own..].to_vec();
    // Where k3s's copies come from, for the plan to name: the `kubelet-arg` that wins (the
    // service's command line over the config files, where a later file's `kubelet-arg:`
    // replaces the list and `kubelet-arg+:` adds to it); or none now, and the copy is left
    // over. A value inside the directory is not copied (`strings.HasPrefix(val, path)`).
    let copy_detail = |name: &str, file: &str| {
        let from_configs = || {
            config_kubelet_arg(configs, name)
                .map(|(file, l)| (l.value, format!("{file}:{}", l.line)))
        };
        let named = unit
            .and_then(|u| exec_kubelet_arg(u, name))
            .map(|(value, at)| (value, format!("{}:{}", at.path, at.line)))
            .or_else(from_configs);
        match (named, unit) {
            // Inside the directory: no copy; the argument names the file itself, or the
            // copy is from an earlier value.
            (Some((value, at)), _) if value.starts_with(&dir) => {
                let in_place = file == value || file.starts_with(&format!("{value}/"));
                if in_place {
                    format!(
                        "named in place by kubelet-arg {name}={value} at {at} ({program} copies nothing then)"
                    )
                } else {
                    format!(
                        "{LEFT_OVER}{program} from an earlier kubelet-arg {name}=: it copies there at every start and never removes the copy, and kubelet-arg {name}={value} at {at} makes none"
                    )
                }
            }
            (Some((value, at)), _) => {
                format!(
                    "{COPY_OF}{value}, {program} copies it from kubelet-arg {name}={value} at {at}"
                )
            }
            (None, Some(_)) => format!(
                "{LEFT_OVER}{program} from an earlier kubelet-arg {name}=: it copies there at every start and never removes the copy, and no kubelet-arg {name}= names one now"
            ),
            (None, None) => format!(
                "{COPY_OF}what kubelet-arg {name}= names, which {program} copies at every start (and never removes): no config file names one, and its service's command line could not be read"
            ),
        }
    };
    let mut out = RancherDropins::default();
    for file in files {
        let config = read_config(raw, file)?;
        let detail = if file == format!("{dir}/10-cli-config.conf") {
            copy_detail("config", file)
        } else if file.starts_with(&format!("{copied}/")) {
            copy_detail("config-dir", file)
        } else {
            "a kubelet config drop-in, after k3s's own".to_owned()
        };
        let source = |line| Source {
            detail: Some(detail.clone()),
            ..Source::new(RANCHER_DROPIN, Some(file), Some(line))
        };
        if let Some(l) = config.resolv_conf {
            out.resolv_conf = Some(Setting {
                value: l.value,
                source: source(l.line),
            });
        }
        if let Some(l) = config.cluster_dns {
            out.cluster_dns = Some(Effective {
                value: l.value,
                source: source(l.line),
                shadowed: vec![],
            });
        }
        if let Some(l) = config.cluster_domain {
            out.cluster_domain = Some(Setting {
                value: l.value,
                source: source(l.line),
            });
        }
    }
    out.own = true;
    Ok(with_own_choices(
        out,
        read_config(raw, &own)?,
        (&own, program),
    ))
}

/// `out`, with what k3s's own drop-in `own_config` says where no later drop-in set it.
fn with_own_choices(
    mut out: RancherDropins,
    own_config: KubeletConfig,
    (own, program): (&str, &str),
) -> RancherDropins {
    // k3s writes the clusterDNS it runs with into its own file at every start: the
    // server's cluster-dns, else .10 of each service CIDR, an agent's from its server
    // (pkg/daemons/agent/agent.go, pkg/cli/server/server.go). That, where no later drop-in
    // sets one, not config.yaml's cluster-dns (a server's flag) or k3s's default.
    let written = |line| Source {
        detail: Some(format!("written by {program} at its start")),
        ..Source::new(RANCHER_DROPIN, Some(own), Some(line))
    };
    out.own_resolv_conf = own_config.resolv_conf.map(|l| Setting {
        value: l.value,
        source: Source::new("k3s_auto", Some(own), Some(l.line)),
    });
    if out.cluster_dns.is_none()
        && let Some(l) = own_config.cluster_dns
    {
        out.cluster_dns = Some(Effective {
            value: l.value,
            source: written(l.line),
            shadowed: vec![],
        });
    }
    // And its clusterDomain (defaultKubeletConfig: the agent's ClusterDomain, never empty).
    if out.cluster_domain.is_none()
        && let Some(l) = own_config.cluster_domain
    {
        out.cluster_domain = Some(Setting {
            value: l.value,
            source: written(l.line),
        });
    }
    out
}

/// The clusterDNS a k3s or RKE2 before v1.32 hands its kubelet, as a flag and in no file
/// (from v1.32 it is in their own kubelet config drop-in). A server's `cluster-dns`, else the
/// tenth address of each `service-cidr`, else 10.43.0.10, the tenth of the default service
/// CIDR of a node with an IPv4 address (pkg/cli/server/server.go); each from the config
/// files (the last that sets it) with the service's command line after them (configfilearg
/// puts the files' values first, and these string slices add up). An agent's comes from its
/// server, which this node does not show (pkg/agent/config, and an agent ignores these
/// server keys in its config file): unknown.
fn rancher_cluster_dns(
    configs: &[(String, K3sConfig)],
    unit: Option<&ServiceUnit>,
) -> Result<Effective<Vec<String>>, String> {
    if let Some(u) = unit.filter(|u| rancher_agent(u)) {
        return Err(format!(
            "{} {RANCHER_AGENT}, whose clusterDNS comes from its server (before v1.32 in no file on the node)",
            u.name
        ));
    }
    let setting = |key: fn(&K3sConfig) -> Option<&Located<String>>, flag: &'static str| {
        let mut found: Option<(Vec<String>, Source)> = None;
        for (file, config) in configs {
            if let Some(l) = key(config) {
                let source = Source::new("k3s_config", Some(file), Some(l.line));
                // `cluster-dns+:` in a later file adds to the earlier files' value.
                let mut values = match found.take() {
                    Some((earlier, _)) if config.appended.contains(&flag) => earlier,
                    _ => Vec::new(),
                };
                values.extend(split_list(&l.value));
                found = Some((values, source));
            }
        }
        for (value, at) in exec_flag_values(unit, &[flag]) {
            let mut values = found.take().map(|(v, _)| v).unwrap_or_default();
            values.extend(split_list(&value));
            found = Some((
                values,
                Source::new("k3s_flag", Some(&at.path), Some(at.line)),
            ));
        }
        found
    };
    if let Some((value, source)) = setting(|c| c.cluster_dns.as_ref(), "cluster-dns") {
        return Ok(Effective {
            value,
            source,
            shadowed: vec![],
        });
    }
    if let Some((cidrs, source)) = setting(|c| c.service_cidr.as_ref(), "service-cidr") {
        let tenth: Option<Vec<String>> = cidrs
            .iter()
            .map(|cidr| crate::util::nth_address(cidr, 10).map(|ip| ip.to_string()))
            .collect();
        return match tenth {
            Some(value) if !value.is_empty() => Ok(Effective {
                value,
                source: Source {
                    detail: Some(format!(
                        "the tenth address of service-cidr {}",
                        cidrs.join(",")
                    )),
                    ..source
                },
                shadowed: vec![],
            }),
            _ => Err(format!(
                "service-cidr {} at {} is not a list of address ranges",
                cidrs.join(","),
                source.at()
            )),
        };
    }
    Ok(Effective {
        value: vec!["10.43.0.10".to_owned()],
        source: Source {
            detail: Some("k3s/rke2 default".into()),
            ..Source::new("default", None, None)
        },
        shadowed: vec![],
    })
}

/// Where a k3s/RKE2 setting is unknown because the node runs an agent (its server decides
/// it), the reason says this (the rules leave such a setting to the server's node).
pub(crate) const RANCHER_AGENT: &str = "runs an agent";

/// The k3s/RKE2 service runs an agent: `k3s agent` / `rke2 agent` (install.sh's
/// k3s-agent.service, RKE2's rke2-agent.service).
fn rancher_agent(unit: &ServiceUnit) -> bool {
    unit.name.ends_with("-agent.service") || unit.argv.get(1).is_some_and(|w| w.text == "agent")
}

/// GCP's metadata server, which is also the VM's DNS resolver (cloud.google.com/compute/
/// docs/internal-dns): link-local, but GCP routes it to the VM, so pods reach it too.
const GCP_METADATA_SERVER: std::net::IpAddr =
    std::net::IpAddr::V4(std::net::Ipv4Addr::new(169, 254, 169, 254));

/// The k3s releases with k3s-io/k3s#12692 "Fix fallback DNS for IMDS and IPV6-only"
/// (merged 2025-07-31; backports #12702, #12703, #12704, each validated on its rc1), for
/// messages.
const K3S_DNS_FIX_RELEASES: &str = "v1.31.12, v1.32.8, v1.33.4 and v1.34 on";

/// Says, in an unknown kubelet resolv.conf's reason, that the k3s/RKE2 version decides it.
pub(crate) const K3S_VERSION_UNKNOWN: &str = "the k3s/RKE2 version is not known";

/// Whether the k3s or RKE2 of `version` ("v1.33.4+k3s1", "v1.33.4+rke2r1", "v1.33.4-rc1+k3s1",
/// as `k3s --version` or the kubelet prints it) has k3s-io/k3s#12692: it takes GCP's
/// metadata server 169.254.169.254 as a nameserver (other link-local servers, such as AWS's
/// 169.254.169.253, still disqualify a file) and generates its fallback file with
/// 2001:4860:4860::8888 after 8.8.8.8. In k3s from v1.31.12, v1.32.8 and v1.33.4 (rc1 of
/// each carried it: #12704, #12703, #12702) and in every v1.34; RKE2 runs the same agent
/// code, and its releases of those versions pin those very k3s commits (rancher/rke2
/// go.mod: v1.33.4+rke2r1 k3s 148243c49519, v1.32.8+rke2r1 fe896f7e7cf8, v1.31.12+rke2r1
/// 2b53c7e4c817). `None`: no version, or not a Kubernetes 1.x one.
pub(crate) fn k3s_has_dns_fix(version: Option<&str>) -> Option<bool> {
    let (minor, patch) = version_minor_patch(version?)?;
    Some(match minor {
        31 => patch >= 12,
        32 => patch >= 8,
        33 => patch >= 4,
        m => m >= 34,
    })
}

/// The k3s releases with k3s-io/k3s#9948 "Update valid resolv conf" (a file with no
/// nameserver line no longer passes), for messages.
const K3S_NAMESERVER_RELEASES: &str =
    "v1.27.15, v1.28.11, v1.29.6, v1.30.2 and every later release of their lines, and v1.31 on,";

/// Whether the k3s or RKE2 of `version` has k3s-io/k3s#9948: `isValidResolvConf` passes a
/// file only where it found a nameserver (`foundNameserver`), so a host resolv.conf with no
/// nameserver line makes k3s generate its own file. Before it, such a file passed (no
/// nameserver failed the check) and the kubelet got it: dnsPolicy Default pods, CoreDNS
/// among them, with no server at all (k3s-io/k3s#9874). In the 2024-06 releases: v1.30.2
/// (#9948 itself), and the backports in that cycle's v1.29.6, v1.28.11 (k3s-io/docs
/// docs/release-notes, "Update valid resolv conf") and v1.27.15; every later minor. v1.26
/// and earlier lines had ended. `None`: no version, or not a Kubernetes 1.x one.
pub(crate) fn k3s_requires_nameserver(version: Option<&str>) -> Option<bool> {
    let (minor, patch) = version_minor_patch(version?)?;
    Some(match minor {
        27 => patch >= 15,
        28 => patch >= 11,
        29 => patch >= 6,
        30 => patch >= 2,
        m => m >= 31,
    })
}

/// What the k3s/RKE2 release at hand does in `isValidResolvConf`, where it changed
/// between releases (`None`: the version is not known).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct K3sRelease {
    /// It has k3s-io/k3s#12692 ([`k3s_has_dns_fix`]).
    pub gcp_fix: Option<bool>,
    /// It has k3s-io/k3s#9948 ([`k3s_requires_nameserver`]).
    pub requires_nameserver: Option<bool>,
}

impl K3sRelease {
    /// The release of `version` (as `k3s --version` or the kubelet prints it).
    pub(crate) fn of(version: Option<&str>) -> K3sRelease {
        K3sRelease {
            gcp_fix: k3s_has_dns_fix(version),
            requires_nameserver: k3s_requires_nameserver(version),
        }
    }
}

/// The minor of a Kubernetes 1.x version as kubelets, k3s, RKE2 and k0s print it
/// ("v1.29.3", "v1.33.4+k3s1" → 29, 33); `None` for anything else.
pub(crate) fn version_minor(version: &str) -> Option<u32> {
    let mut parts = version.trim_start_matches('v').split('.');
    (parts.next()? == "1").then_some(())?;
    parts.next()?.parse().ok()
}

/// The minor and patch of a Kubernetes 1.x version ("v1.31.5+k0s", "v1.33.4-rc1+k3s1" →
/// (31, 5), (33, 4)).
pub(crate) fn version_minor_patch(version: &str) -> Option<(u32, u32)> {
    let patch = version.trim_start_matches('v').split('.').nth(2)?;
    let digits: String = patch.chars().take_while(char::is_ascii_digit).collect();
    Some((version_minor(version)?, digits.parse().ok()?))
}

/// The nameservers of the file k3s/RKE2 generate when no host file passes, for messages:
/// 8.8.8.8, and 2001:4860:4860::8888 from k3s-io/k3s#12692 on (`fixed`: whether this
/// version has it, `None` not known).
pub(crate) fn k3s_generated_servers(fixed: Option<bool>) -> String {
    match fixed {
        Some(true) => "nameservers 8.8.8.8 and 2001:4860:4860::8888".into(),
        Some(false) => "nameserver 8.8.8.8".into(),
        None => format!(
            "nameserver 8.8.8.8 (and 2001:4860:4860::8888 in k3s/RKE2 {K3S_DNS_FIX_RELEASES})"
        ),
    }
}

/// What k3s/RKE2's auto-detection (k3s `isValidResolvConf`) makes of a resolv.conf.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum K3sVerdict {
    /// Taken; `true` when GCP's metadata server is among its nameservers.
    Taken(bool),
    /// Passed over, for this reason ("127.0.0.53 is loopback").
    Rejected(String),
    /// Its only flaw is GCP's metadata server, and the version, which decides, is not known:
    /// the reason versions before k3s-io/k3s#12692 pass it over for.
    VersionDecides(String),
    /// It names no nameserver, and the version, which decides, is not known: releases with
    /// k3s-io/k3s#9948 pass it over, earlier ones take it.
    NoNameserverVersionDecides,
}

/// The nameservers of a resolv.conf as k3s's `isValidResolvConf` reads them (k3s-io/k3s
/// pkg/agent/config/config.go): every line (bufio.Scanner's, a final CR dropped) that matches
/// `^nameserver\s+([^\s]*)` (RE2's `\s` is space, tab, LF, FF, CR), with the word after it
/// and that word parsed as Go's `net.ParseIP` parses it (no `%zone`). Not as the kubelet or
/// glibc read the file: an indented line is no nameserver to k3s, a `#` or `;` right after the
/// address is part of the word, and `nameserver` followed by blanks alone names "", which is
/// no address.
pub(crate) fn k3s_nameservers(text: &str) -> Vec<(String, Option<std::net::IpAddr>)> {
    let re2_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\x0c' | '\r');
    text.split('\n')
        .filter_map(|line| {
            let line = line.strip_suffix('\r').unwrap_or(line);
            let rest = line.strip_prefix("nameserver")?;
            rest.starts_with(re2_space).then_some(())?;
            let word = rest.trim_start_matches(re2_space);
            let word = word.split(re2_space).next().unwrap_or_default();
            Some((word.to_owned(), word.parse().ok()))
        })
        .collect()
}

/// k3s `isValidResolvConf` on a file's text ([`k3s_nameservers`]), for the k3s/RKE2
/// `release`: every nameserver an IP address that is global unicast (Go's
/// `IsGlobalUnicast`), or, with k3s-io/k3s#12692, GCP's metadata server; and, with
/// k3s-io/k3s#9948, at least one nameserver. The first nameserver that fails decides, as in
/// k3s.
pub(crate) fn k3s_verdict(text: &str, release: K3sRelease) -> K3sVerdict {
    let fixed = release.gcp_fix;
    let nameservers = k3s_nameservers(text);
    if nameservers.is_empty() {
        return match release.requires_nameserver {
            Some(true) => K3sVerdict::Rejected("no nameserver".into()),
            Some(false) => K3sVerdict::Taken(false),
            None => K3sVerdict::NoNameserverVersionDecides,
        };
    }
    let mut metadata = false;
    for (address, ip) in &nameservers {
        let ip = match *ip {
            None if address.is_empty() => {
                return K3sVerdict::Rejected("a nameserver line names no address".into());
            }
            None => return K3sVerdict::Rejected(format!("{address} is not an IP address")),
            Some(ip) if is_global_unicast(&ip) => continue,
            Some(ip) => ip,
        };
        let why = format!("{address} is {}", address_kind(&ip));
        if ip != GCP_METADATA_SERVER || fixed == Some(false) {
            let why = if ip == GCP_METADATA_SERVER {
                format!(
                    "{why} (GCP's metadata server counts only in k3s/RKE2 {K3S_DNS_FIX_RELEASES}: k3s-io/k3s#12692)"
                )
            } else {
                why
            };
            return K3sVerdict::Rejected(why);
        }
        metadata = true;
    }
    match (metadata, fixed) {
        (true, None) => K3sVerdict::VersionDecides(format!(
            "{GCP_METADATA_SERVER} is link-local (GCP's metadata server)"
        )),
        (metadata, _) => K3sVerdict::Taken(metadata),
    }
}

/// What kind of non-global-unicast address `ip` is, for messages.
pub(crate) fn address_kind(ip: &std::net::IpAddr) -> &'static str {
    match &go_unmapped(*ip) {
        std::net::IpAddr::V4(v4) if v4.is_loopback() => "loopback",
        std::net::IpAddr::V6(v6) if v6.is_loopback() => "loopback",
        std::net::IpAddr::V4(v4) if v4.is_link_local() => "link-local",
        std::net::IpAddr::V6(v6) if (v6.segments()[0] & 0xffc0) == 0xfe80 => "link-local",
        ip if ip.is_multicast() => "multicast",
        ip if ip.is_unspecified() => "unspecified",
        std::net::IpAddr::V4(v4) if v4.is_broadcast() => "broadcast",
        _ => "not global unicast",
    }
}

/// k3s `locateOrGenerateResolvConf`: the first of /etc/resolv.conf and systemd's uplink
/// file that [`k3s_verdict`] takes, else the file it generates under the data dir (8.8.8.8,
/// and 2001:4860:4860::8888 from k3s-io/k3s#12692 on), for the k3s/RKE2 of `version`
/// ([`version`]). Where GCP's metadata server is in a file and the version is not known,
/// the version decides: which file the kubelet gets is unknown.
fn k3s_auto_resolv_conf(
    raw: &RawFacts,
    data_dir: &str,
    version: Option<&str>,
) -> Observed<Effective<String>> {
    k3s_auto_choice(raw, data_dir, K3sRelease::of(version), version)
}

/// [`k3s_auto_resolv_conf`] for the k3s/RKE2 `release` (what its version says it does,
/// where that is known); `version` names it in messages, and says where a generated file
/// that is missing may be instead ([`generated_elsewhere`]).
fn k3s_auto_choice(
    raw: &RawFacts,
    data_dir: &str,
    release: K3sRelease,
    version: Option<&str>,
) -> Observed<Effective<String>> {
    let fixed = release.gcp_fix;
    let mut reasons = Vec::new();
    for candidate in ["/etc/resolv.conf", "/run/systemd/resolve/resolv.conf"] {
        let Some(text) = raw.get(candidate).and_then(RawFile::text) else {
            reasons.push(format!("{candidate}: not there"));
            continue;
        };
        let detail = match k3s_verdict(&text, release) {
            K3sVerdict::Taken(false) if k3s_nameservers(&text).is_empty() => format!(
                "chosen by k3s: it names no nameserver, which k3s/RKE2 {} take (those of {K3S_NAMESERVER_RELEASES} pass it over: k3s-io/k3s#9948)",
                version.unwrap_or("of this version")
            ),
            K3sVerdict::Taken(false) => "chosen by k3s: every nameserver is global unicast".into(),
            K3sVerdict::Taken(true) => format!(
                "chosen by k3s: every nameserver is global unicast or GCP's metadata server \
                 {GCP_METADATA_SERVER}, which k3s-io/k3s#12692 lets {} take",
                version.unwrap_or("this version")
            ),
            K3sVerdict::Rejected(why) => {
                reasons.push(format!("{candidate}: {why}"));
                continue;
            }
            K3sVerdict::VersionDecides(why) => {
                // Where a k3s/RKE2 without the fix goes instead.
                // (Releases without #12692 of the lines that got it are all v1.25 or
                // later: their generated file is in the data dir, missing or not.)
                let generated = format!("{data_dir}/agent/etc/resolv.conf");
                let without = K3sRelease {
                    gcp_fix: Some(false),
                    ..release
                };
                let before = match k3s_auto_choice(raw, data_dir, without, None) {
                    Observed::Known(e) if e.value != generated => e.value,
                    _ => format!("their generated {generated} (nameserver 8.8.8.8)"),
                };
                return Observed::Unknown(format!(
                    "{K3S_VERSION_UNKNOWN}, and it decides the kubelet's resolv.conf: \
                     {candidate}: {why}, which k3s/RKE2 {K3S_DNS_FIX_RELEASES} take \
                     (k3s-io/k3s#12692) and earlier ones pass over for {before}"
                ));
            }
            K3sVerdict::NoNameserverVersionDecides => {
                return Observed::Unknown(no_nameserver_version_decides(
                    raw, data_dir, release, candidate,
                ));
            }
        };
        return Observed::Known(Effective {
            value: candidate.to_owned(),
            source: Source {
                detail: Some(detail),
                ..Source::new("k3s_auto", None, None)
            },
            shadowed: vec![],
        });
    }
    let generated = format!("{data_dir}/agent/etc/resolv.conf");
    if let Some(why) = generated_elsewhere(raw, &generated, version) {
        return Observed::Unknown(why);
    }
    Observed::Known(Effective {
        value: generated,
        source: Source {
            detail: Some(format!(
                "generated by k3s with {}: {}",
                k3s_generated_servers(fixed),
                reasons.join("; ")
            )),
            ..Source::new("k3s_auto", None, None)
        },
        shadowed: vec![],
    })
}

/// Why the kubelet's resolv.conf is unknown where `candidate` names no nameserver and the
/// k3s/RKE2 version, which decides, is not: releases with k3s-io/k3s#9948 go on to the next
/// file, earlier ones give the kubelet this one.
fn no_nameserver_version_decides(
    raw: &RawFacts,
    data_dir: &str,
    release: K3sRelease,
    candidate: &str,
) -> String {
    let generated = format!("{data_dir}/agent/etc/resolv.conf");
    let with = K3sRelease {
        requires_nameserver: Some(true),
        ..release
    };
    // (Releases with #9948 are all v1.25 or later: their generated file is in the data
    // dir, missing or not.)
    let after = match k3s_auto_choice(raw, data_dir, with, None) {
        Observed::Known(e) if e.value != generated => e.value,
        _ => format!(
            "their generated {generated} ({})",
            k3s_generated_servers(release.gcp_fix)
        ),
    };
    format!(
        "{K3S_VERSION_UNKNOWN}, and it decides the kubelet's resolv.conf: {candidate}: no nameserver, which k3s/RKE2 {K3S_NAMESERVER_RELEASES} pass over for {after} (k3s-io/k3s#9948) and earlier ones take, giving dnsPolicy Default pods (CoreDNS among them) no server"
    )
}

/// Why the file k3s/RKE2 generate is perhaps not `generated` though they chose theirs:
/// before k3s-io/k3s#5531 (May 2022: v1.24, and that month's releases of the older lines)
/// they wrote it to /tmp/k3s-resolv.conf (/tmp/rke2-resolv.conf), which dnsfix does not
/// read (anyone can put a file there). Only where `generated` is missing and the version
/// is before v1.25 or not known; from v1.25 a missing one is missing.
fn generated_elsewhere(raw: &RawFacts, generated: &str, version: Option<&str>) -> Option<String> {
    raw.get(generated)
        .is_some_and(|f| f.state == FileState::Missing)
        .then_some(())?;
    let old = format!(
        "/tmp/{}-resolv.conf",
        program_of(generated.trim_end_matches("/agent/etc/resolv.conf"))
    );
    match version.and_then(version_minor) {
        Some(minor) if minor >= 25 => None,
        Some(_) => Some(format!(
            "k3s/RKE2 {} generate the kubelet's resolv.conf, and {generated} is not there: releases before k3s-io/k3s#5531 (May 2022) write it to {old}, which dnsfix does not read",
            version.unwrap_or_default()
        )),
        None => Some(format!(
            "{K3S_VERSION_UNKNOWN}, and it decides where k3s/RKE2 generate the kubelet's resolv.conf: {generated} is not there, and releases before k3s-io/k3s#5531 (May 2022) write it to {old}"
        )),
    }
}

/// Go's `net.IP.IsGlobalUnicast`: not unspecified, loopback, multicast, link-local or
/// broadcast (private ranges count as global unicast), an IPv4-mapped address
/// (`::ffff:127.0.0.53`) judged as the IPv4 address it maps.
pub(crate) fn is_global_unicast(ip: &std::net::IpAddr) -> bool {
    match &go_unmapped(*ip) {
        std::net::IpAddr::V4(v4) => {
            !(v4.is_unspecified()
                || v4.is_loopback()
                || v4.is_multicast()
                || v4.is_link_local()
                || v4.is_broadcast())
        }
        std::net::IpAddr::V6(v6) => {
            !(v6.is_unspecified()
                || v6.is_loopback()
                || v6.is_multicast()
                || (v6.segments()[0] & 0xffc0) == 0xfe80)
        }
    }
}

/// `ip` as Go's `net.IP` methods see it: an IPv4-mapped IPv6 address is its IPv4 address
/// (`To4` is not nil for it, and `IsLoopback`, `IsLinkLocalUnicast` and the others test that).
fn go_unmapped(ip: std::net::IpAddr) -> std::net::IpAddr {
    match ip {
        std::net::IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, std::net::IpAddr::V4),
        v4 => v4,
    }
}

fn split_list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::node_facts::{NodeFacts, UnitState};

    fn facts(files: &[(&str, &str)]) -> NodeFacts {
        let mut raw = crate::testing::raw_from(files);
        for path in [
            "/etc/resolv.conf",
            "/run/systemd/resolve/resolv.conf",
            K3S_CONFIG,
        ] {
            if raw.get(path).is_none() {
                raw.file(path, FileState::Missing, None);
            }
        }
        NodeFacts::from_raw("node1", &raw)
    }

    fn resolv(f: &NodeFacts) -> (String, String) {
        match &f.kubelet.resolv_conf {
            Observed::Known(e) => (e.value.clone(), e.source.at()),
            other => panic!("not known: {other:?}"),
        }
    }

    /// k0s runs the kubelet itself, from its data directory, with the config it writes at
    /// every k0s start: the binary's path or that config gives k0s away (a custom
    /// `--data-dir` moves the binary, not the config under /run/k0s); a kubelet from a
    /// package is not k0s's.
    #[test]
    fn a_kubelet_k0s_runs_is_a_k0s_node() {
        let config = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nresolvConf: /etc/resolv.conf\n";
        let flavour = |cmdline: &str, config_path: &str| {
            let mut raw = crate::testing::raw_from(&[
                (config_path, config),
                ("/etc/resolv.conf", "nameserver 10.0.0.2\n"),
                ("/proc/42/cmdline", cmdline),
            ]);
            raw.pids.insert("kubelet".to_owned(), 42);
            let f = NodeFacts::from_raw("node1", &raw);
            assert_eq!(f.kubelet.config_path.as_deref(), Some(config_path));
            (f.flavour.kind, f.flavour.evidence.unwrap_or_default())
        };
        let k0s = "/var/lib/k0s/bin/kubelet\0--cert-dir=/var/lib/k0s/kubelet/pki\0--config=/run/k0s/kubelet/config.yaml\0--v=1\0";
        let (kind, evidence) = flavour(k0s, "/run/k0s/kubelet/config.yaml");
        assert_eq!(kind, FlavourKind::K0s);
        assert_eq!(evidence, "/proc/42/cmdline: /var/lib/k0s/bin/kubelet");
        let data_dir = "/srv/k0s/bin/kubelet\0--config=/run/k0s/kubelet/config.yaml\0";
        let (kind, evidence) = flavour(data_dir, "/run/k0s/kubelet/config.yaml");
        assert_eq!(kind, FlavourKind::K0s);
        assert_eq!(evidence, "/proc/42/cmdline: /run/k0s/kubelet/config.yaml");
        // Before 1.32.1 the config sat in the data directory, beside its bin/.
        let old = "/srv/k0s/bin/kubelet\0--config=/srv/k0s/kubelet-config.yaml\0";
        let (kind, evidence) = flavour(old, "/srv/k0s/kubelet-config.yaml");
        assert_eq!(kind, FlavourKind::K0s);
        assert_eq!(evidence, "/proc/42/cmdline: /srv/k0s/kubelet-config.yaml");
        let elsewhere = "/srv/k0s/bin/kubelet\0--config=/etc/kubelet-config.yaml\0";
        assert_ne!(
            flavour(elsewhere, "/etc/kubelet-config.yaml").0,
            FlavourKind::K0s
        );
        // A running k0s kubelet outweighs a Kubespray file left on the node.
        let mut raw = crate::testing::raw_from(&[
            ("/etc/kubernetes/kubelet.env", "KUBELET_ARGS=\"--v=2\"\n"),
            ("/run/k0s/kubelet/config.yaml", config),
            ("/proc/42/cmdline", k0s),
        ]);
        raw.pids.insert("kubelet".to_owned(), 42);
        let f = NodeFacts::from_raw("node1", &raw);
        assert_eq!(f.flavour.kind, FlavourKind::K0s);
        let package = "/usr/bin/kubelet\0--config=/var/lib/kubelet/config.yaml\0";
        assert_eq!(flavour(package, KUBEADM_CONFIG).0, FlavourKind::Kubeadm);
    }

    /// kubelite's --kubelet-args-file is the kubelet's whole command line; a stopped
    /// MicroK8s is read from the current revision; with no --resolv-conf the kubelet's
    /// default holds, and a comment naming the flag is called out (it keeps MicroK8s's
    /// wrapper from choosing a file).
    #[test]
    fn a_running_kubelite_takes_the_kubelets_flags_from_its_arguments_file() {
        let args = "/var/snap/microk8s/7964/args/kubelet";
        let cmdline = format!(
            "/snap/microk8s/7964/kubelite\0--proxy-args-file=/var/snap/microk8s/7964/args/kube-proxy\0--kubelet-args-file={args}\0--start-control-plane=false\0"
        );
        let text = "--resolv-conf=/run/systemd/resolve/resolv.conf\n--root-dir=${SNAP_COMMON}/var/lib/kubelet\n--cluster-dns=10.152.183.10\n";
        let mut raw = crate::testing::raw_from(&[
            (args, text),
            ("/etc/kubernetes/kubelet.env", "KUBELET_ARGS=\"--v=2\"\n"),
            (
                "/run/systemd/resolve/resolv.conf",
                "nameserver 192.0.2.53\n",
            ),
            ("/proc/77/cmdline", cmdline.as_str()),
        ]);
        raw.pids.insert("kubelite".to_owned(), 77);
        let f = NodeFacts::from_raw("node1", &raw);
        assert_eq!(f.flavour.kind, FlavourKind::MicroK8s);
        assert_eq!(
            f.flavour.evidence.as_deref(),
            Some(format!("/proc/77/cmdline: --kubelet-args-file={args}").as_str())
        );
        assert_eq!(f.kubelet.pid, Some(77));
        assert_eq!(f.kubelet.args_file.as_deref(), Some(args));
        assert_eq!(
            resolv(&f),
            (
                "/run/systemd/resolve/resolv.conf".to_owned(),
                format!("{args}:1")
            )
        );
        let Observed::Known(dns) = &f.kubelet.cluster_dns else {
            panic!("{:?}", f.kubelet.cluster_dns)
        };
        assert_eq!(dns.value, ["10.152.183.10"]);

        // Stopped, no --resolv-conf, a comment naming it: read from the revision `current`
        // leads to, by its real path.
        let mut raw = crate::testing::raw_from(&[(
            args,
            "# --resolv-conf=/x\n--cluster-dns=10.152.183.10\n",
        )]);
        raw.file(microk8s::CURRENT, FileState::Directory, None);
        if let Some(link) = raw.files.get_mut(microk8s::CURRENT) {
            link.symlink_target = Some("7964".into());
            link.canonical = Some("/var/snap/microk8s/7964".into());
        }
        let f = NodeFacts::from_raw("node1", &raw);
        assert_eq!(f.flavour.kind, FlavourKind::MicroK8s);
        assert_eq!(f.flavour.evidence.as_deref(), Some(args));
        assert_eq!(f.services.kubelet_unit, microk8s::UNIT);
        let current = args;
        let Observed::Known(e) = &f.kubelet.resolv_conf else {
            panic!("{:?}", f.kubelet.resolv_conf)
        };
        assert_eq!(e.value, "/etc/resolv.conf");
        let detail = e.source.detail.as_deref().unwrap_or_default();
        assert!(detail.contains(&format!("{current}:1")), "{detail}");

        // An arguments file that cannot be read: unknown, never the default.
        let mut raw = crate::testing::raw_from(&[("/proc/77/cmdline", cmdline.as_str())]);
        raw.pids.insert("kubelite".to_owned(), 77);
        raw.file(args, FileState::Unreadable, None);
        let f = NodeFacts::from_raw("node1", &raw);
        assert!(
            matches!(&f.kubelet.resolv_conf, Observed::Unknown(why) if why.contains(args)),
            "{:?}",
            f.kubelet.resolv_conf
        );
    }

    /// k3s's unit as its install.sh renders it, and Kubespray's kubelet unit (the
    /// fixtures', whose READMEs name their sources).
    const K3S_UNIT: &str = include_str!(
        "../../tests/fixtures/rules/_upstream/k3s-auto-uplink/root/etc/systemd/system/k3s.service"
    );
    const KUBESPRAY_UNIT: &str = include_str!(
        "../../tests/fixtures/rules/_upstream/kubespray-head-ubuntu2204-default/root/etc/systemd/system/kubelet.service"
    );

    /// A stopped RKE2 whose tarball installed both of its units restarts with the one that
    /// failed (or waits to be restarted), not the first; a stray kubelet.service on a k3s
    /// node is not k3s's unit.
    #[test]
    fn a_stopped_installer_s_unit_is_the_one_that_failed() {
        let state = |units: &[(&str, &str)], files: &[(&str, &str)]| {
            let mut raw = crate::testing::raw_from(files);
            crate::testing::set_units(&mut raw, units);
            let f = NodeFacts::from_raw("node1", &raw);
            (
                f.services.kubelet_unit.clone(),
                f.services.kubelet_unit_state,
            )
        };
        // RKE2's own units (rancher/rke2 bundle/lib/systemd/system, the fixture's).
        let unit = include_str!(
            "../../tests/fixtures/rules/_upstream/rke2-default-resolv-conf/root/usr/local/lib/systemd/system/rke2-server.service"
        );
        let agent = include_str!(
            "../../tests/fixtures/rules/_upstream/rke2-default-resolv-conf/root/usr/local/lib/systemd/system/rke2-agent.service"
        );
        assert_eq!(
            state(
                &[("rke2-agent", "failed")],
                &[
                    ("/usr/local/lib/systemd/system/rke2-server.service", unit),
                    ("/usr/local/lib/systemd/system/rke2-agent.service", agent),
                    (
                        "/etc/rancher/rke2/config.yaml",
                        "server: https://10.0.0.10:9345\n"
                    ),
                ]
            ),
            ("rke2-agent".to_owned(), UnitState::Failed)
        );
        assert_eq!(
            state(
                &[],
                &[
                    ("/etc/systemd/system/kubelet.service", KUBESPRAY_UNIT),
                    ("/etc/systemd/system/k3s.service", K3S_UNIT),
                    (
                        "/etc/rancher/k3s/config.yaml",
                        "write-kubeconfig-mode: \"0644\"\n"
                    ),
                ]
            ),
            ("k3s".to_owned(), UnitState::Inactive)
        );
    }

    /// On an RKE2 agent whose rke2-agent.service failed or crash-loops (`Restart=always`
    /// keeps it `activating`), the tarball's rke2-server.service is there too: the settings
    /// are read from the agent's unit and its environment files, not the server's.
    #[test]
    fn a_stopped_rke2_agent_is_read_from_its_own_unit() {
        let server = include_str!(
            "../../tests/fixtures/rules/_upstream/rke2-default-resolv-conf/root/usr/local/lib/systemd/system/rke2-server.service"
        );
        let agent = include_str!(
            "../../tests/fixtures/rules/_upstream/rke2-default-resolv-conf/root/usr/local/lib/systemd/system/rke2-agent.service"
        );
        for state in ["failed", "activating"] {
            let mut raw = crate::testing::raw_from(&[
                ("/usr/local/lib/systemd/system/rke2-server.service", server),
                ("/usr/local/lib/systemd/system/rke2-agent.service", agent),
                (
                    "/etc/rancher/rke2/config.yaml",
                    "server: https://10.0.0.10:9345\n",
                ),
                (
                    "/etc/default/rke2-agent",
                    "RKE2_RESOLV_CONF=/etc/rancher/rke2/resolv.conf\n",
                ),
                ("/etc/rancher/rke2/resolv.conf", "nameserver 192.0.2.53\n"),
            ]);
            crate::testing::set_units(&mut raw, &[("rke2-agent", state)]);
            let f = NodeFacts::from_raw("node1", &raw);
            let resolv = f.kubelet.resolv_conf.known().expect("known");
            assert_eq!(resolv.value, "/etc/rancher/rke2/resolv.conf", "{state}");
            assert_eq!(
                resolv.source.path.as_deref(),
                Some("/etc/default/rke2-agent"),
                "{state}"
            );
            assert!(
                matches!(&f.kubelet.cluster_dns, Observed::Unknown(why) if why.contains(RANCHER_AGENT)),
                "{state}: {:?}",
                f.kubelet.cluster_dns
            );
        }
    }

    /// k0s's units restart its kubelet: k0sworker, or k0scontroller when the controller
    /// runs a kubelet (--enable-worker); a controller without one has no kubelet unit.
    #[test]
    fn a_k0s_unit_is_the_kubelets_only_where_k0s_runs_one() {
        let k0s = "/var/lib/k0s/bin/kubelet\0--config=/run/k0s/kubelet/config.yaml\0";
        let config = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";
        for (unit, kubelet, want) in [
            ("k0sworker", true, "k0sworker"),
            ("k0scontroller", true, "k0scontroller"),
            ("k0scontroller", false, "kubelet"),
        ] {
            let mut raw = crate::testing::raw_from(&[
                ("/run/k0s/kubelet/config.yaml", config),
                ("/proc/42/cmdline", k0s),
            ]);
            if kubelet {
                raw.pids.insert("kubelet".to_owned(), 42);
            }
            crate::testing::set_units(&mut raw, &[(unit, "active")]);
            let f = NodeFacts::from_raw("node1", &raw);
            assert_eq!(
                f.services.kubelet_unit, want,
                "{unit} active, kubelet {kubelet}"
            );
        }
    }

    /// A flag written alike in a unit drop-in's `ExecStart=` and in the env file it expands
    /// after it is two flags on the running command line, each from its own place: neither
    /// is shown from the env file twice (removing it there would leave the drop-in's).
    #[test]
    fn a_flag_written_alike_in_two_places_is_shown_from_each() {
        let mut raw = crate::testing::raw_from(&[
            (
                "/usr/lib/systemd/system/kubelet.service",
                "[Service]\nExecStart=/usr/bin/kubelet\n",
            ),
            (
                "/etc/systemd/system/kubelet.service.d/20-dns.conf",
                "[Service]\nEnvironmentFile=-/etc/default/kubelet\nExecStart=\nExecStart=/usr/bin/kubelet --resolv-conf=/etc/kubelet-resolv.conf $KUBELET_EXTRA_ARGS\n",
            ),
            (
                "/etc/default/kubelet",
                "KUBELET_EXTRA_ARGS=--resolv-conf=/etc/kubelet-resolv.conf\n",
            ),
            (
                "/proc/42/cmdline",
                "/usr/bin/kubelet\0--resolv-conf=/etc/kubelet-resolv.conf\0--resolv-conf=/etc/kubelet-resolv.conf\0",
            ),
            ("/etc/kubelet-resolv.conf", "nameserver 10.0.0.2\n"),
        ]);
        raw.pids.insert("kubelet".to_owned(), 42);
        let f = NodeFacts::from_raw("node1", &raw);
        let at: Vec<String> = f.kubelet.flags.iter().map(|f| f.source.at()).collect();
        assert_eq!(
            at,
            [
                "/etc/systemd/system/kubelet.service.d/20-dns.conf:4",
                "/etc/default/kubelet:1"
            ]
        );
        assert_eq!(
            resolv(&f),
            (
                "/etc/kubelet-resolv.conf".to_owned(),
                "/etc/default/kubelet:1".to_owned()
            )
        );
    }

    /// A kubelet caught exiting (its /proc/PID/cmdline is empty, as for a zombie) is read as
    /// a stopped one: the installer's config file is still the kubelet's, not "no config".
    #[test]
    fn an_exiting_kubelet_reads_as_a_stopped_one() {
        let config = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nresolvConf: /etc/resolv.conf\n";
        let mut raw = crate::testing::raw_from(&[
            (KUBESPRAY_CONFIG, config),
            ("/etc/resolv.conf", "nameserver 10.0.0.2\n"),
            ("/proc/42/cmdline", ""),
        ]);
        raw.pids.insert("kubelet".to_owned(), 42);
        let f = NodeFacts::from_raw("node1", &raw);
        assert_eq!(f.kubelet.config_path.as_deref(), Some(KUBESPRAY_CONFIG));
        assert_eq!(
            resolv(&f),
            (
                "/etc/resolv.conf".to_owned(),
                format!("{KUBESPRAY_CONFIG}:3")
            )
        );
    }

    /// A stopped kubelet whose unit names no command line, with no config file read: a
    /// flag dnsfix did not see could set anything, so nothing is the kubelet's default.
    #[test]
    fn an_unknown_command_line_without_a_config_leaves_the_settings_unknown() {
        let raw = crate::testing::raw_from(&[(
            "/etc/systemd/system/kubelet.service",
            "[Unit]\nDescription=kubelet\n[Service]\nRestart=always\n",
        )]);
        let f = NodeFacts::from_raw("node1", &raw);
        assert!(
            matches!(f.kubelet.cluster_dns, Observed::Unknown(_)),
            "{:?}",
            f.kubelet.cluster_dns
        );
        assert!(matches!(f.kubelet.resolv_conf, Observed::Unknown(_)));
        // Its whole command line known (here: no flags at all), the defaults hold.
        let raw = crate::testing::raw_from(&[(
            "/etc/systemd/system/kubelet.service",
            "[Service]\nExecStart=/usr/bin/kubelet\n",
        )]);
        let f = NodeFacts::from_raw("node1", &raw);
        assert_eq!(
            f.kubelet.cluster_dns.known().map(|e| e.value.len()),
            Some(0)
        );
    }

    /// k3s's `GetArgs` (k3s-io/k3s pkg/util/args.go) reads `resolv-conf+=` as
    /// `resolv-conf` and appends its value after k3s's own and the earlier entries', so the
    /// kubelet keeps it; `resolv-conf-=` puts its value first, so it is not the one kept.
    #[test]
    fn a_kubelet_arg_with_a_plus_sets_the_flag_too() {
        let unit = "[Service]\nExecStart=/usr/local/bin/k3s server\n";
        let f = facts(&[
            ("/etc/systemd/system/k3s.service", unit),
            (
                K3S_CONFIG,
                "resolv-conf: /a\nkubelet-arg:\n  - resolv-conf+=/b\n  - resolv-conf-=/c\n",
            ),
        ]);
        assert_eq!(resolv(&f), ("/b".into(), format!("{K3S_CONFIG}:3")));
        let unit =
            "[Service]\nExecStart=/usr/local/bin/k3s server '--kubelet-arg=resolv-conf+=/d'\n";
        let f = facts(&[("/etc/systemd/system/k3s.service", unit)]);
        let setting = f.kubelet.resolv_conf.known().expect("known").clone();
        assert_eq!(setting.value, "/d");
        assert_eq!(setting.source.detail.as_deref(), Some("kubelet-arg"));
    }

    /// k3s-io/k3s pkg/daemons/agent: the agent's own --resolv-conf first, `kubelet-arg`
    /// entries last, so a kubelet-arg wins over a native setting, even one on ExecStart.
    #[test]
    fn a_kubelet_arg_beats_any_native_resolv_conf() {
        let unit = "[Service]\nExecStart=/usr/local/bin/k3s server --resolv-conf=/a\n";
        let f = facts(&[
            ("/etc/systemd/system/k3s.service", unit),
            (K3S_CONFIG, "kubelet-arg:\n  - resolv-conf=/b\n"),
        ]);
        assert_eq!(resolv(&f), ("/b".into(), format!("{K3S_CONFIG}:2")));
        // On the command line too, in either form; its value is no flag of k3s's own.
        for arg in [
            "--kubelet-arg=resolv-conf=/d",
            "--kubelet-arg resolv-conf=/d",
        ] {
            let unit = format!("[Service]\nExecStart=/usr/local/bin/k3s server {arg}\n");
            let f = facts(&[("/etc/systemd/system/k3s.service", &unit)]);
            let setting = f.kubelet.resolv_conf.known().expect("known").clone();
            assert_eq!(setting.value, "/d", "{arg}");
            assert_eq!(
                setting.source.detail.as_deref(),
                Some("kubelet-arg"),
                "{arg}"
            );
            assert!(setting.shadowed.is_empty(), "{arg}: {setting:?}");
        }
        // Without it, the ExecStart flag beats config.yaml and the environment.
        let f = facts(&[
            (
                "/etc/systemd/system/k3s.service",
                "[Service]\nEnvironmentFile=-/etc/systemd/system/k3s.service.env\nExecStart=/usr/local/bin/k3s server --resolv-conf=/a\n",
            ),
            (
                "/etc/systemd/system/k3s.service.env",
                "K3S_RESOLV_CONF=/env\n",
            ),
            (K3S_CONFIG, "resolv-conf: /c\n"),
        ]);
        assert_eq!(
            resolv(&f),
            ("/a".into(), "/etc/systemd/system/k3s.service:3".into())
        );
        // config.yaml.d drop-ins apply after config.yaml; then the environment.
        let f = facts(&[
            (
                "/etc/systemd/system/k3s.service",
                "[Service]\nEnvironmentFile=-/etc/systemd/system/k3s.service.env\nExecStart=/usr/local/bin/k3s server\n",
            ),
            (
                "/etc/systemd/system/k3s.service.env",
                "K3S_RESOLV_CONF=/env\n",
            ),
            (K3S_CONFIG, "resolv-conf: /c\n"),
            (
                "/etc/rancher/k3s/config.yaml.d/10-dns.yaml",
                "resolv-conf: /d\n",
            ),
        ]);
        assert_eq!(resolv(&f).0, "/d");
        let f = facts(&[
            (
                "/etc/systemd/system/k3s.service",
                "[Service]\nEnvironmentFile=-/etc/systemd/system/k3s.service.env\nExecStart=/usr/local/bin/k3s server\n",
            ),
            (
                "/etc/systemd/system/k3s.service.env",
                "K3S_RESOLV_CONF=/env\n",
            ),
        ]);
        assert_eq!(
            resolv(&f),
            (
                "/env".into(),
                "/etc/systemd/system/k3s.service.env:1".into()
            )
        );
    }

    /// k3s-io/k3s#12692 is in k3s v1.31.12, v1.32.8, v1.33.4 (rc1 on) and every v1.34;
    /// RKE2's releases of those versions pin the same k3s commits.
    #[test]
    fn the_gcp_dns_fix_is_in_the_backports_and_every_later_minor() {
        for (version, fixed) in [
            ("v1.30.14+k3s2", Some(false)),
            ("v1.31.11+k3s1", Some(false)),
            ("v1.31.12+k3s1", Some(true)),
            ("v1.32.7+k3s1", Some(false)),
            ("v1.32.8+k3s1", Some(true)),
            ("v1.33.3+k3s1", Some(false)),
            ("v1.33.4-rc1+k3s1", Some(true)),
            ("v1.33.4+k3s1", Some(true)),
            ("v1.33.4+rke2r1", Some(true)),
            ("v1.34.0+k3s1", Some(true)),
            ("v1.35.1+k3s1", Some(true)),
            ("Kubernetes", None),
            ("v2.0.0", None),
        ] {
            assert_eq!(k3s_has_dns_fix(Some(version)), fixed, "{version}");
        }
        assert_eq!(k3s_has_dns_fix(None), None);
    }

    /// A GCE node with systemd-resolved: the stub in /etc/resolv.conf, GCP's metadata
    /// server in the uplink file, no resolv-conf anywhere; `flavour_unit` makes it k3s or
    /// RKE2, `version` is what its binary said when asked (`None`: not asked).
    fn on_gce(flavour_unit: &str, version: Option<&str>) -> NodeFacts {
        let stub = "nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch c.ubuntu-foundations.internal google.internal\n";
        let uplink =
            "nameserver 169.254.169.254\nsearch c.ubuntu-foundations.internal google.internal\n";
        let mut raw = crate::testing::raw_from(&[
            (
                flavour_unit,
                "[Service]\nExecStart=/usr/local/bin/k3s server\n",
            ),
            ("/etc/resolv.conf", stub),
            ("/run/systemd/resolve/resolv.conf", uplink),
        ]);
        for path in [K3S_CONFIG, RKE2_CONFIG] {
            raw.file(path, FileState::Missing, None);
        }
        if let Some(v) = version {
            crate::testing::set_command(&mut raw, "kubelet-version", v, 0);
        }
        NodeFacts::from_raw("node1", &raw)
    }

    /// From k3s-io/k3s#12692 on, k3s/RKE2 take GCP's metadata server 169.254.169.254 as a
    /// nameserver, so the uplink file systemd-resolved writes on GCE; before, it is
    /// link-local like any other and k3s generates its 8.8.8.8 file.
    #[test]
    fn k3s_takes_gcps_metadata_server_from_the_dns_fix_on() {
        let k3s = "/etc/systemd/system/k3s.service";
        let f = on_gce(
            k3s,
            Some("k3s version v1.33.4+k3s1 (148243c4)\ngo version go1.24.5\n"),
        );
        assert_eq!(f.flavour.kind, FlavourKind::K3s);
        let Observed::Known(e) = &f.kubelet.resolv_conf else {
            panic!("{:?}", f.kubelet.resolv_conf);
        };
        assert_eq!(e.value, "/run/systemd/resolve/resolv.conf");
        assert_eq!(e.source.kind, "k3s_auto");
        let detail = e.source.detail.as_deref().unwrap_or_default();
        assert!(detail.contains("169.254.169.254"), "{detail}");
        assert!(detail.contains("v1.33.4+k3s1"), "{detail}");

        let f = on_gce(
            k3s,
            Some("k3s version v1.33.3+k3s1 (236cbf25)\ngo version go1.24.4\n"),
        );
        let Observed::Known(e) = &f.kubelet.resolv_conf else {
            panic!("{:?}", f.kubelet.resolv_conf);
        };
        assert_eq!(e.value, "/var/lib/rancher/k3s/agent/etc/resolv.conf");
        let detail = e.source.detail.as_deref().unwrap_or_default();
        assert!(detail.contains("with nameserver 8.8.8.8:"), "{detail}");
        assert!(
            detail.contains("/run/systemd/resolve/resolv.conf: 169.254.169.254 is link-local"),
            "{detail}"
        );
        assert!(!detail.contains("2001:4860:4860::8888 "), "{detail}");

        // RKE2 runs the same agent code; its kubelet prints the version.
        let f = on_gce(
            "/etc/systemd/system/rke2-server.service",
            Some("Kubernetes v1.32.8+rke2r1\n"),
        );
        assert_eq!(f.flavour.kind, FlavourKind::Rke2);
        assert_eq!(resolv(&f).0, "/run/systemd/resolve/resolv.conf");
        let f = on_gce(
            "/etc/systemd/system/rke2-server.service",
            Some("Kubernetes v1.32.7+rke2r1\n"),
        );
        assert_eq!(resolv(&f).0, "/var/lib/rancher/rke2/agent/etc/resolv.conf");
    }

    /// Where GCP's metadata server decides and the version is not known (plan and check
    /// take it from the cluster, not the node), the kubelet's file is unknown, and why
    /// names both outcomes.
    #[test]
    fn with_gcps_metadata_server_an_unknown_k3s_version_leaves_the_file_unknown() {
        let f = on_gce("/etc/systemd/system/k3s.service", None);
        let Observed::Unknown(why) = &f.kubelet.resolv_conf else {
            panic!("{:?}", f.kubelet.resolv_conf);
        };
        assert!(why.contains(K3S_VERSION_UNKNOWN), "{why}");
        assert!(why.contains("/run/systemd/resolve/resolv.conf"), "{why}");
        assert!(
            why.contains("/var/lib/rancher/k3s/agent/etc/resolv.conf"),
            "{why}"
        );
        assert!(why.contains("k3s-io/k3s#12692"), "{why}");
        assert!(f.kubelet.pod_resolv_conf.is_none());

        // Without it there, the version changes nothing but the generated file's servers.
        let aws = |version: Option<&str>| {
            let mut raw = crate::testing::raw_from(&[
                (
                    "/etc/systemd/system/k3s.service",
                    "[Service]\nExecStart=/usr/local/bin/k3s agent\n",
                ),
                ("/etc/resolv.conf", "nameserver 169.254.169.253\n"),
            ]);
            raw.file("/run/systemd/resolve/resolv.conf", FileState::Missing, None);
            raw.file(K3S_CONFIG, FileState::Missing, None);
            if let Some(v) = version {
                crate::testing::set_command(&mut raw, "kubelet-version", v, 0);
            }
            let f = NodeFacts::from_raw("node1", &raw);
            let Observed::Known(e) = f.kubelet.resolv_conf else {
                panic!("{:?}", f.kubelet.resolv_conf);
            };
            assert_eq!(e.value, "/var/lib/rancher/k3s/agent/etc/resolv.conf");
            e.source.detail.unwrap_or_default()
        };
        let detail = aws(Some("k3s version v1.33.4+k3s1 (148243c4)\n"));
        assert!(
            detail.starts_with(
                "generated by k3s with nameservers 8.8.8.8 and 2001:4860:4860::8888: /etc/resolv.conf: 169.254.169.253 is link-local"
            ),
            "{detail}"
        );
        let detail = aws(None);
        assert!(
            detail.starts_with("generated by k3s with nameserver 8.8.8.8 (and 2001:4860:4860::8888 in k3s/RKE2 v1.31.12"),
            "{detail}"
        );
    }

    /// A release that requires a nameserver (k3s-io/k3s#9948) and has k3s-io/k3s#12692
    /// or not (`fixed`).
    fn gcp(fixed: Option<bool>) -> K3sRelease {
        K3sRelease {
            gcp_fix: fixed,
            requires_nameserver: Some(true),
        }
    }

    /// Before k3s-io/k3s#9948 (k3s v1.27.15, v1.28.11, v1.29.6, v1.30.2), k3s's
    /// `isValidResolvConf` returned true for a file with no nameserver line (k3s-io/k3s
    /// pkg/agent/config/config.go at f099bfa5, the commit k3s-io/k3s#9874 links): the
    /// kubelet got /etc/resolv.conf, serverless. From it on, k3s goes on to the next file;
    /// where the version is not known, the file is unknown.
    #[test]
    fn a_file_with_no_nameserver_passes_before_the_nameserver_check() {
        let node = |version: Option<&str>| {
            let mut raw = crate::testing::raw_from(&[
                (
                    "/etc/systemd/system/k3s.service",
                    "[Service]\nExecStart=/usr/local/bin/k3s server\n",
                ),
                ("/etc/resolv.conf", "search example.com\n"),
            ]);
            raw.file("/run/systemd/resolve/resolv.conf", FileState::Missing, None);
            raw.file(K3S_CONFIG, FileState::Missing, None);
            raw.file(
                "/var/lib/rancher/k3s/agent/etc/resolv.conf",
                FileState::Missing,
                None,
            );
            if let Some(v) = version {
                crate::testing::set_command(&mut raw, "kubelet-version", v, 0);
            }
            NodeFacts::from_raw("node1", &raw)
        };
        for version in [
            "v1.28.10+k3s1",
            "v1.29.5+k3s1",
            "v1.30.1+k3s1",
            "v1.26.15+k3s1",
        ] {
            let f = node(Some(&format!("k3s version {version} (aaaaaaaa)\n")));
            let Observed::Known(e) = &f.kubelet.resolv_conf else {
                panic!("{version}: {:?}", f.kubelet.resolv_conf);
            };
            assert_eq!(e.value, "/etc/resolv.conf", "{version}");
            assert_eq!(e.source.kind, "k3s_auto", "{version}");
            let detail = e.source.detail.as_deref().unwrap_or_default();
            assert!(detail.contains("names no nameserver"), "{detail}");
            assert!(detail.contains("k3s-io/k3s#9948"), "{detail}");
        }
        for version in [
            "v1.28.11+k3s1",
            "v1.29.6+k3s1",
            "v1.30.2+k3s1",
            "v1.31.1+k3s1",
        ] {
            let f = node(Some(&format!("k3s version {version} (aaaaaaaa)\n")));
            assert_eq!(
                resolv(&f).0,
                "/var/lib/rancher/k3s/agent/etc/resolv.conf",
                "{version}"
            );
        }
        let f = node(None);
        let Observed::Unknown(why) = &f.kubelet.resolv_conf else {
            panic!("{:?}", f.kubelet.resolv_conf);
        };
        assert!(why.contains(K3S_VERSION_UNKNOWN), "{why}");
        assert!(why.contains("/etc/resolv.conf: no nameserver"), "{why}");
        assert!(
            why.contains(
                "pass over for their generated /var/lib/rancher/k3s/agent/etc/resolv.conf"
            ),
            "{why}"
        );
        assert!(why.contains("k3s-io/k3s#9948"), "{why}");
        assert_eq!(k3s_requires_nameserver(Some("v1.27.14+k3s1")), Some(false));
        assert_eq!(k3s_requires_nameserver(Some("v1.27.15+k3s1")), Some(true));
        assert_eq!(k3s_requires_nameserver(Some("v1.29.6+rke2r1")), Some(true));
        assert_eq!(k3s_requires_nameserver(None), None);
    }

    /// k3s `isValidResolvConf` stops at the first nameserver that fails: GCP's metadata
    /// server excuses nothing else in the same file, whatever the version.
    #[test]
    fn gcps_metadata_server_excuses_no_other_server() {
        let parsed = "nameserver 169.254.169.254\nnameserver 127.0.0.53\n";
        for fixed in [None, Some(true)] {
            assert_eq!(
                k3s_verdict(parsed, gcp(fixed)),
                K3sVerdict::Rejected("127.0.0.53 is loopback".into())
            );
        }
        let parsed = "nameserver 10.128.0.2\nnameserver 169.254.169.254\n";
        assert_eq!(
            k3s_verdict(parsed, gcp(Some(true))),
            K3sVerdict::Taken(true)
        );
        assert!(matches!(
            k3s_verdict(parsed, gcp(None)),
            K3sVerdict::VersionDecides(_)
        ));
        assert!(matches!(
            k3s_verdict(parsed, gcp(Some(false))),
            K3sVerdict::Rejected(why) if why.starts_with("169.254.169.254 is link-local (GCP's")
        ));
        let aws = "nameserver 169.254.169.253\n";
        assert_eq!(
            k3s_verdict(aws, gcp(Some(true))),
            K3sVerdict::Rejected("169.254.169.253 is link-local".into())
        );
    }

    /// k3s reads a resolv.conf's nameservers with the regexp `^nameserver\s+([^\s]*)` and
    /// judges each with Go's `net.ParseIP` and `IsGlobalUnicast` (k3s-io/k3s
    /// pkg/agent/config/config.go `isValidResolvConf`), not as glibc or the kubelet read the
    /// file: an indented loopback line does not disqualify it, a word with a comment glued to
    /// it or a bare `nameserver ` does, and an IPv4-mapped loopback or link-local address is
    /// the IPv4 address it maps.
    #[test]
    fn k3s_reads_nameservers_with_its_own_regexp() {
        let taken = K3sVerdict::Taken(false);
        for (text, verdict) in [
            (
                "nameserver 192.0.2.53\n  nameserver 127.0.0.53\n",
                taken.clone(),
            ),
            (
                "nameserver 192.0.2.53\r\nnameserver\t198.51.100.53 # lan\r\n",
                taken.clone(),
            ),
            (
                "  nameserver 192.0.2.53\n",
                K3sVerdict::Rejected("no nameserver".into()),
            ),
            (
                "nameserver 192.0.2.53#lan\n",
                K3sVerdict::Rejected("192.0.2.53#lan is not an IP address".into()),
            ),
            (
                "nameserver 192.0.2.53\nnameserver \n",
                K3sVerdict::Rejected("a nameserver line names no address".into()),
            ),
            (
                "nameserver ::ffff:127.0.0.53\n",
                K3sVerdict::Rejected("::ffff:127.0.0.53 is loopback".into()),
            ),
            (
                "nameserver ::ffff:169.254.169.253\n",
                K3sVerdict::Rejected("::ffff:169.254.169.253 is link-local".into()),
            ),
            (
                "nameserver fe80::1%eth0\n",
                K3sVerdict::Rejected("fe80::1%eth0 is not an IP address".into()),
            ),
            ("nameserver ::ffff:192.0.2.53\n", taken),
        ] {
            assert_eq!(k3s_verdict(text, gcp(Some(true))), verdict, "{text:?}");
        }
    }

    fn node_name(f: &NodeFacts) -> Option<(String, String)> {
        f.kubelet
            .flags
            .iter()
            .find(|f| f.name == "hostname-override")
            .map(|f| {
                (
                    f.value.clone().unwrap_or_default(),
                    format!(
                        "{}:{}",
                        f.source.path.as_deref().unwrap_or_default(),
                        f.source.line.unwrap_or_default()
                    ),
                )
            })
    }

    /// The name k3s registers the node under reaches its kubelet as --hostname-override
    /// (pkg/daemons/agent): `K3S_NODE_NAME` in the env file install.sh writes from the
    /// installer's K3S_* variables, under config.yaml's `node-name`, under `--node-name` on
    /// ExecStart, all under a kubelet-arg; lowercased. With `with-node-id` it is not known.
    #[test]
    fn k3s_node_names_reach_the_kubelet_as_hostname_override() {
        let unit = "[Service]\nEnvironmentFile=-/etc/systemd/system/k3s.service.env\n\
                    ExecStart=/usr/local/bin/k3s server\n";
        let env = (
            "/etc/systemd/system/k3s.service.env",
            "K3S_NODE_NAME=Edge-1\n",
        );
        let f = facts(&[("/etc/systemd/system/k3s.service", unit), env]);
        assert_eq!(
            node_name(&f),
            Some((
                "edge-1".into(),
                "/etc/systemd/system/k3s.service.env:1".into()
            ))
        );
        let f = facts(&[
            ("/etc/systemd/system/k3s.service", unit),
            env,
            (
                K3S_CONFIG,
                "write-kubeconfig-mode: \"0644\"\nnode-name: edge-2\n",
            ),
        ]);
        assert_eq!(
            node_name(&f),
            Some(("edge-2".into(), format!("{K3S_CONFIG}:2")))
        );
        let on_exec = "[Service]\nEnvironmentFile=-/etc/systemd/system/k3s.service.env\n\
                       ExecStart=/usr/local/bin/k3s server --node-name edge-3\n";
        let f = facts(&[
            ("/etc/systemd/system/k3s.service", on_exec),
            env,
            (K3S_CONFIG, "node-name: edge-2\n"),
        ]);
        assert_eq!(node_name(&f).map(|n| n.0), Some("edge-3".into()));
        let f = facts(&[
            ("/etc/systemd/system/k3s.service", on_exec),
            (
                "/etc/rancher/k3s/config.yaml.d/50-kubelet.yaml",
                "kubelet-arg+:\n  - hostname-override=edge-4\n",
            ),
        ]);
        assert_eq!(node_name(&f).map(|n| n.0), Some("edge-4".into()));
        // with-node-id: the id k3s keeps, appended; unknown until k3s has written it.
        let f = facts(&[
            ("/etc/systemd/system/k3s.service", unit),
            (K3S_CONFIG, "node-name: Edge-2\nwith-node-id: true\n"),
        ]);
        assert_eq!(node_name(&f), None);
        let f = facts(&[
            ("/etc/systemd/system/k3s.service", unit),
            (K3S_CONFIG, "node-name: Edge-2\nwith-node-id: true\n"),
            (NODE_ID, "5d3a8b1c\n"),
        ]);
        assert_eq!(
            node_name(&f),
            Some(("edge-2-5d3a8b1c".into(), format!("{NODE_ID}:0")))
        );
        let with_id = "[Service]\nExecStart=/usr/local/bin/k3s agent --with-node-id\n";
        let f = facts(&[
            ("/etc/systemd/system/k3s-agent.service", with_id),
            ("/proc/sys/kernel/hostname", "Worker-7\n"),
            (NODE_ID, "0a1b2c3d\n"),
        ]);
        assert_eq!(node_name(&f).map(|n| n.0), Some("worker-7-0a1b2c3d".into()));
        // `node-name:` with no value is the hostname (k3s passes `--node-name=`).
        let f = facts(&[
            ("/etc/systemd/system/k3s.service", unit),
            (K3S_CONFIG, "node-name:\nwith-node-id: true\n"),
            ("/proc/sys/kernel/hostname", "Worker-7\n"),
            (NODE_ID, "0a1b2c3d\n"),
        ]);
        assert_eq!(node_name(&f).map(|n| n.0), Some("worker-7-0a1b2c3d".into()));
        // Nothing set: the hostname, which cluster::node_names takes itself.
        let f = facts(&[("/etc/systemd/system/k3s.service", unit)]);
        assert_eq!(node_name(&f), None);
        // RKE2: its own variable and config file.
        let f = facts(&[
            (
                "/usr/local/lib/systemd/system/rke2-server.service",
                "[Service]\nEnvironmentFile=-/usr/local/lib/systemd/system/rke2-server.env\n\
                 ExecStart=/usr/local/bin/rke2 server\n",
            ),
            (
                "/usr/local/lib/systemd/system/rke2-server.env",
                "RKE2_NODE_NAME=cp-1\n",
            ),
        ]);
        assert_eq!(node_name(&f).map(|n| n.0), Some("cp-1".into()));
        let f = facts(&[
            (
                "/usr/local/lib/systemd/system/rke2-server.service",
                "[Service]\nExecStart=/usr/local/bin/rke2 server\n",
            ),
            (RKE2_CONFIG, "node-name: cp-2\n"),
        ]);
        assert_eq!(node_name(&f).map(|n| n.0), Some("cp-2".into()));
    }

    /// k3s copies `kubelet-arg: config=` to 10-cli-config.conf at every start and never
    /// removes the copy: the evidence names the argument that makes it (on the service's
    /// command line, or in a config file), or says the copy is left over.
    #[test]
    fn a_k3s_copy_says_which_kubelet_arg_makes_it_or_that_none_does() {
        let base =
            crate::testing::rules_fixture("DNS-KUBELET-LOOPBACK/k3s-1.33-kubelet-config-file");
        let detail = |raw: &RawFacts| {
            let facts = NodeFacts::from_raw("node1", raw);
            let e = facts.kubelet.resolv_conf.known().expect("known").clone();
            (e.source.at(), e.source.detail.unwrap_or_default())
        };
        let copy = "/var/lib/rancher/k3s/agent/etc/kubelet.conf.d/10-cli-config.conf:3";
        let (at, said) = detail(&base);
        assert_eq!(at, copy);
        assert!(
            said == "a copy of /etc/rancher/k3s/kubelet.conf, k3s copies it from kubelet-arg config=/etc/rancher/k3s/kubelet.conf at /etc/rancher/k3s/config.yaml:2",
            "{said}"
        );

        let mut left = base.clone();
        left.file(
            K3S_CONFIG,
            FileState::Present,
            Some(b"write-kubeconfig-mode: \"0644\"\n"),
        );
        let (at, said) = detail(&left);
        assert_eq!(at, copy);
        assert_eq!(
            said,
            "left by k3s from an earlier kubelet-arg config=: it copies there at every start and never removes the copy, and no kubelet-arg config= names one now"
        );

        // A value inside kubelet.conf.d makes no copy: the file named is the user's own, and
        // 10-cli-config.conf beside it is left over.
        let copy_path = "/var/lib/rancher/k3s/agent/etc/kubelet.conf.d/10-cli-config.conf";
        let mut in_place = base.clone();
        let arg = format!("kubelet-arg:\n  - \"config={copy_path}\"\n");
        in_place.file(K3S_CONFIG, FileState::Present, Some(arg.as_bytes()));
        let (_, said) = detail(&in_place);
        assert_eq!(
            said,
            format!(
                "named in place by kubelet-arg config={copy_path} at /etc/rancher/k3s/config.yaml:2 (k3s copies nothing then)"
            )
        );
        let mut beside = base.clone();
        let arg = "kubelet-arg:\n  - \"config=/var/lib/rancher/k3s/agent/etc/kubelet.conf.d/50-mine.conf\"\n";
        beside.file(K3S_CONFIG, FileState::Present, Some(arg.as_bytes()));
        let (_, said) = detail(&beside);
        assert!(
            said.starts_with("left by k3s")
                && said.ends_with("50-mine.conf at /etc/rancher/k3s/config.yaml:2 makes none"),
            "{said}"
        );

        // A later config.yaml.d file's `kubelet-arg:` replaces the list: config.yaml's
        // `config=` no longer makes the copy.
        let mut replaced = base.clone();
        let dropin = "/etc/rancher/k3s/config.yaml.d/50-args.yaml";
        replaced.file(dropin, FileState::Present, Some(b"kubelet-arg:\n  - v=2\n"));
        let (_, said) = detail(&replaced);
        assert!(said.starts_with("left by k3s"), "{said}");
        let mut added = base.clone();
        added.file(
            dropin,
            FileState::Present,
            Some(b"kubelet-arg+:\n  - v=2\n"),
        );
        let (_, said) = detail(&added);
        assert!(
            said.starts_with("a copy of /etc/rancher/k3s/kubelet.conf, k3s copies it"),
            "{said}"
        );

        // A file named like the copied directory is no copy.
        let mut named_like = base.clone();
        let dir = "/var/lib/rancher/k3s/agent/etc/kubelet.conf.d";
        named_like.file(
            &format!("{dir}/20-cli-config-dir.conf"),
            FileState::Present,
            Some(b"resolvConf: /etc/k3s-resolv.conf\n"),
        );
        let (_, said) = detail(&named_like);
        assert_eq!(said, "a kubelet config drop-in, after k3s's own");

        let unit = "/etc/systemd/system/k3s.service";
        // The service's command line beats the config files, in either form.
        for arg in [
            "--kubelet-arg=config=/srv/kubelet.conf",
            "--kubelet-arg config=/srv/kubelet.conf",
        ] {
            let mut cli = base.clone();
            let text = String::from_utf8_lossy(&cli.files[unit].content)
                .replace("    server \\\n", &format!("    server \\\n    {arg} \\\n"));
            cli.file(unit, FileState::Present, Some(text.as_bytes()));
            let (_, said) = detail(&cli);
            assert!(
                said.starts_with("a copy of /srv/kubelet.conf, k3s copies it from kubelet-arg config=/srv/kubelet.conf at /etc/systemd/system/k3s.service:"),
                "{arg}: {said}"
            );
        }
        let mut flag = left.clone();
        let text = String::from_utf8_lossy(&flag.files[unit].content).replace(
            "    server \\\n",
            "    server \\\n    --kubelet-arg=config=/srv/kubelet.conf \\\n",
        );
        assert!(
            text.contains("--kubelet-arg=config=/srv/kubelet.conf"),
            "{text}"
        );
        flag.file(unit, FileState::Present, Some(text.as_bytes()));
        let (_, said) = detail(&flag);
        assert!(
            said.starts_with("a copy of /srv/kubelet.conf, k3s copies it from kubelet-arg config=/srv/kubelet.conf at /etc/systemd/system/k3s.service:"),
            "{said}"
        );
    }

    /// Elsewhere than /var/lib/rancher/k3s, k3s writes the kubelet's files where dnsfix
    /// does not read them: the kubelet's settings are unknown, not k3s's defaults.
    #[test]
    fn a_k3s_data_dir_elsewhere_leaves_the_kubelet_unknown() {
        let base =
            crate::testing::rules_fixture("DNS-KUBELET-LOOPBACK/k3s-1.33-kubelet-config-file");
        let config = "/etc/rancher/k3s/config.yaml";
        let unit = "/etc/systemd/system/k3s.service";
        let known = |files: &[(&str, &str)]| {
            let raw = crate::testing::with_files(&base, files);
            let facts = NodeFacts::from_raw("node1", &raw);
            match (&facts.kubelet.resolv_conf, &facts.kubelet.cluster_dns) {
                (Observed::Unknown(a), Observed::Unknown(b)) => {
                    assert_eq!(a, b);
                    Err(a.clone())
                }
                (Observed::Known(_), Observed::Known(_)) => Ok(()),
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(known(&[]), Ok(()));
        let why = known(&[(config, "data-dir: /opt/k3s\n")]).expect_err("elsewhere");
        assert_eq!(
            why,
            format!(
                "k3s runs with data-dir /opt/k3s ({config}:1): dnsfix reads the files it writes for the kubelet only under /var/lib/rancher/k3s"
            )
        );
        assert_eq!(
            known(&[(config, "data-dir: /var/lib/rancher/k3s/\n")]),
            Ok(())
        );
        // The command line over the config file, which is over the environment.
        let text = crate::testing::text(&base, unit);
        let flagged = text.replace(
            "    server \\\n",
            "    server \\\n    -d /var/lib/rancher/k3s \\\n",
        );
        assert_eq!(
            known(&[(config, "data-dir: /opt/k3s\n"), (unit, &flagged)]),
            Ok(())
        );
        let single = text.replace(
            "    server \\\n",
            "    server \\\n    -data-dir=/opt/k3s \\\n",
        );
        assert!(known(&[(unit, &single)]).is_err());
        // Its config file elsewhere: its settings are not the ones dnsfix reads.
        let other = text.replace(
            "    server \\\n",
            "    server \\\n    --config /etc/k3s/server.yaml \\\n",
        );
        let why = known(&[(unit, &other)]).expect_err("config elsewhere");
        assert!(
            why.starts_with("k3s reads its config from /etc/k3s/server.yaml ("),
            "{why}"
        );
        // K3S_CONFIG_FILE, where not empty, over the flag; the first flag over a later one
        // (configfilearg findConfigFileFlag).
        let default_flag = text.replace(
            "    server \\\n",
            "    server \\\n    --config /etc/rancher/k3s/config.yaml \\\n",
        );
        let env_file = default_flag.replace(
            "[Service]\n",
            "[Service]\nEnvironment=K3S_CONFIG_FILE=/etc/k3s/prod.yaml\n",
        );
        assert_ne!(env_file, default_flag);
        let why = known(&[(unit, &env_file)]).expect_err("the variable wins");
        assert!(
            why.starts_with("k3s reads its config from /etc/k3s/prod.yaml (K3S_CONFIG_FILE at "),
            "{why}"
        );
        let env_empty = other.replace("[Service]\n", "[Service]\nEnvironment=K3S_CONFIG_FILE=\n");
        assert!(
            known(&[(unit, &env_empty)]).is_err(),
            "the flag, not an empty variable"
        );
        let empty_over_default =
            default_flag.replace("[Service]\n", "[Service]\nEnvironment=K3S_CONFIG_FILE=\n");
        assert_eq!(known(&[(unit, &empty_over_default)]), Ok(()));
        let twice = other.replace(
            "    --config /etc/k3s/server.yaml \\\n",
            "    --config /etc/rancher/k3s/config.yaml \\\n    -c /etc/k3s/server.yaml \\\n",
        );
        assert_ne!(twice, other);
        assert_eq!(known(&[(unit, &twice)]), Ok(()), "the first flag counts");
        // A drop-in that could not be read leaves the merge unknown.
        let mut unread = base.clone();
        unread.file(
            "/etc/rancher/k3s/config.yaml.d/50-x.yaml",
            FileState::Unreadable,
            None,
        );
        let facts = NodeFacts::from_raw("node1", &unread);
        assert!(matches!(facts.kubelet.resolv_conf, Observed::Unknown(_)));
        let env = text.replace(
            "[Service]\n",
            "[Service]\nEnvironment=K3S_DATA_DIR=/srv/k3s\n",
        );
        assert_ne!(env, text);
        assert!(
            known(&[(unit, &env)])
                .expect_err("from the environment")
                .contains("data-dir /srv/k3s (K3S_DATA_DIR at")
        );
    }

    /// A `kubelet-arg: cluster-dns=` reaches the kubelet as its flag, over every config
    /// file: the entries of the config files (merged) then of the service's command line,
    /// every one kept and added up.
    #[test]
    fn k3s_kubelet_arg_cluster_dns_beats_every_config_file() {
        let base =
            crate::testing::rules_fixture("DNS-KUBELET-LOOPBACK/k3s-1.33-kubelet-config-file");
        let config = "/etc/rancher/k3s/config.yaml";
        let dir = "/var/lib/rancher/k3s/agent/etc/kubelet.conf.d";
        let dns = |raw: &RawFacts| {
            let facts = NodeFacts::from_raw("node1", raw);
            let e = facts
                .kubelet
                .cluster_dns
                .known()
                .expect("clusterDNS")
                .clone();
            (e.value.join(","), e.source.at(), e.shadowed)
        };
        let with = |files: &[(&str, &str)]| crate::testing::with_files(&base, files);
        let (value, at, _) = dns(&base);
        assert_eq!(
            (value.as_str(), at),
            ("10.43.0.10", format!("{dir}/00-k3s-defaults.conf:16"))
        );

        // The docs' way to give pods NodeLocal DNSCache: a kubelet flag, over k3s's own file
        // and over a kubelet drop-in after it.
        let arg = "kubelet-arg:\n  - \"config=/etc/rancher/k3s/kubelet.conf\"\n  - cluster-dns=169.254.20.10\n";
        let site = (
            "/var/lib/rancher/k3s/agent/etc/kubelet.conf.d/50-site.conf",
            "clusterDNS:\n- 10.96.0.10\n",
        );
        let (value, at, shadowed) = dns(&with(&[(config, arg), site]));
        assert_eq!(
            (value.as_str(), at),
            ("169.254.20.10", format!("{config}:3"))
        );
        assert_eq!(shadowed[0].value, "10.96.0.10");
        let facts = NodeFacts::from_raw("node1", &with(&[(config, arg)]));
        let e = facts.kubelet.cluster_dns.known().expect("clusterDNS");
        assert_eq!(
            (e.source.kind.as_str(), e.source.detail.as_deref()),
            ("k3s_config", Some("kubelet-arg"))
        );

        // A later file's `kubelet-arg:` replaces the list; `kubelet-arg+:` adds to it, and
        // k3s keeps every cluster-dns entry (`cluster-dns-=` first), comma lists split.
        let replaced = with(&[
            (config, arg),
            (&format!("{config}.d/50-x.yaml"), "kubelet-arg:\n- v=2\n"),
        ]);
        assert_eq!(dns(&replaced).0, "10.43.0.10");
        let added = with(&[
            (config, arg),
            (
                &format!("{config}.d/50-x.yaml"),
                "kubelet-arg+:\n- cluster-dns=169.254.20.11,169.254.20.12\n- cluster-dns-=169.254.20.9\n",
            ),
        ]);
        let (value, at, _) = dns(&added);
        assert_eq!(
            value,
            "169.254.20.9,169.254.20.10,169.254.20.11,169.254.20.12"
        );
        assert_eq!(at, format!("{config}.d/50-x.yaml:3"));

        // Before v1.32, with no defaults drop-in, k3s passed its own as the flag:
        // `cluster-dns+=` adds to it, `cluster-dns-=` goes before it, a plain one replaces it.
        let mut old = base.clone();
        old.file(
            &format!("{dir}/00-k3s-defaults.conf"),
            FileState::Missing,
            None,
        );
        for (entry, want) in [
            ("cluster-dns+=169.254.20.10", "10.43.0.10,169.254.20.10"),
            ("cluster-dns-=169.254.20.10", "169.254.20.10,10.43.0.10"),
            ("cluster-dns=169.254.20.10", "169.254.20.10"),
            // One dash: k3s hands the kubelet `---cluster-dns=...`, which sets nothing.
            ("-cluster-dns=169.254.20.10", "10.43.0.10"),
        ] {
            let mut raw = old.clone();
            let text = format!("kubelet-arg:\n  - {entry}\n");
            raw.file(config, FileState::Present, Some(text.as_bytes()));
            assert_eq!(dns(&raw).0, want, "{entry}");
        }

        // The service's command line comes after the config files.
        let unit = "/etc/systemd/system/k3s.service";
        let text = crate::testing::text(&base, unit);
        let flagged = text.replace(
            "    server \\\n",
            "    server \\\n    --kubelet-arg cluster-dns=169.254.25.10 \\\n",
        );
        assert_ne!(flagged, text);
        let (value, at, _) = dns(&with(&[(config, arg), (unit, &flagged)]));
        assert_eq!(value, "169.254.20.10,169.254.25.10");
        assert!(at.starts_with(&format!("{unit}:")), "{at}");
    }

    /// k3s from v1.32 writes its own choice to 00-k3s-defaults.conf and the kubelet reads
    /// every drop-in after it: k3s's copy of `kubelet-arg: config=` (10-cli-config.conf) and
    /// the user's own, in name order, the last `resolvConf` and `clusterDNS` winning. Without
    /// k3s's own file (before v1.32) the kubelet gets no config dir: nothing there counts.
    #[test]
    fn k3s_kubelet_config_dropins_beat_its_own_choice() {
        let base =
            crate::testing::rules_fixture("DNS-KUBELET-LOOPBACK/k3s-1.33-kubelet-config-file");
        let dir = "/var/lib/rancher/k3s/agent/etc/kubelet.conf.d";
        let resolv = |raw: &RawFacts| {
            let facts = NodeFacts::from_raw("node1", raw);
            facts
                .kubelet
                .resolv_conf
                .known()
                .map(|e| (e.value.clone(), e.source.at()))
        };
        assert_eq!(
            resolv(&base),
            Some((
                "/etc/resolv.conf".into(),
                format!("{dir}/10-cli-config.conf:3")
            ))
        );

        let mut later = base.clone();
        later.file(
            &format!("{dir}/50-site.conf"),
            FileState::Present,
            Some(b"resolvConf: /etc/k3s-resolv.conf\nclusterDNS:\n- 169.254.20.10\n"),
        );
        assert_eq!(
            resolv(&later),
            Some((
                "/etc/k3s-resolv.conf".into(),
                format!("{dir}/50-site.conf:1")
            ))
        );
        let facts = NodeFacts::from_raw("node1", &later);
        assert_eq!(
            facts.kubelet.cluster_dns.known().map(|e| e.value.clone()),
            Some(vec!["169.254.20.10".to_owned()])
        );
        // No later drop-in sets clusterDNS: the one k3s wrote into its own file, which is
        // the server's (an agent's config.yaml names none), not k3s's default.
        let own = format!("{dir}/00-k3s-defaults.conf");
        let text = crate::testing::text(&base, &own);
        let mut custom = base.clone();
        custom.file(
            &own,
            FileState::Present,
            Some(text.replace("- 10.43.0.10", "- 10.96.0.10").as_bytes()),
        );
        let facts = NodeFacts::from_raw("node1", &custom);
        let dns = facts.kubelet.cluster_dns.known().expect("clusterDNS");
        assert_eq!(dns.value, ["10.96.0.10"]);
        assert_eq!(dns.source.path.as_deref(), Some(own.as_str()));

        let mut before_1_32 = base.clone();
        before_1_32.file(
            &format!("{dir}/00-k3s-defaults.conf"),
            FileState::Missing,
            None,
        );
        assert_eq!(
            resolv(&before_1_32).map(|(v, _)| v),
            Some("/run/systemd/resolve/resolv.conf".into()),
            "k3s's own auto choice"
        );

        // Named before k3s's own file: k3s's choice still wins.
        let mut earlier = base.clone();
        earlier.file(
            &format!("{dir}/10-cli-config.conf"),
            FileState::Missing,
            None,
        );
        earlier.file(
            &format!("{dir}/00-custom.conf"),
            FileState::Present,
            Some(b"resolvConf: /etc/k3s-resolv.conf\n"),
        );
        assert_eq!(
            resolv(&earlier).map(|(v, _)| v),
            Some("/run/systemd/resolve/resolv.conf".into()),
            "00-custom.conf comes before 00-k3s-defaults.conf"
        );
        // So does a subdirectory named like k3s's file without its extension.
        let mut walked_first = earlier.clone();
        walked_first.file(&format!("{dir}/00-custom.conf"), FileState::Missing, None);
        walked_first.file(
            &format!("{dir}/00-k3s-defaults"),
            FileState::Directory,
            None,
        );
        walked_first.file(
            &format!("{dir}/00-k3s-defaults/zz.conf"),
            FileState::Present,
            Some(b"resolvConf: /etc/k3s-resolv.conf\n"),
        );
        assert_eq!(
            resolv(&walked_first).map(|(v, _)| v),
            Some("/run/systemd/resolve/resolv.conf".into()),
            "00-k3s-defaults/ is walked before 00-k3s-defaults.conf"
        );

        let mut broken = base;
        broken.file(
            &format!("{dir}/10-cli-config.conf"),
            FileState::Present,
            Some(b"resolvConf: [\n"),
        );
        assert!(matches!(
            NodeFacts::from_raw("node1", &broken).kubelet.resolv_conf,
            Observed::Unknown(_)
        ));
    }

    /// A relative resolvConf in the config file is opened from the file's directory, the
    /// path cleaned as Go's `filepath.Join` cleans it; a drop-in's or a flag's is opened
    /// from the kubelet's working directory, which dnsfix does not read: unknown, and no
    /// file of that name is looked up anywhere.
    #[test]
    fn a_relative_resolv_conf_is_opened_where_the_kubelet_opens_it() {
        const DROPIN: &str = "/etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf";
        let base =
            crate::testing::rules_fixture("DNS-KUBELET-LOOPBACK/kubeadm-1.33-config-dir-dropin");
        let mut raw = base.clone();
        // 1.31 reads the config file's resolvConf, not the drop-in's.
        crate::testing::set_command(&mut raw, "kubelet-version", "Kubernetes v1.31.4\n", 0);
        crate::testing::replace_in_file(
            &mut raw,
            KUBEADM_CONFIG,
            "resolvConf: /run/systemd/resolve/resolv.conf",
            "resolvConf: ./../../../run//systemd/resolve/resolv.conf",
        );
        let f = NodeFacts::from_raw("node1", &raw);
        let e = f.kubelet.resolv_conf.known().expect("known");
        assert_eq!(e.value, "./../../../run//systemd/resolve/resolv.conf");
        assert_eq!(e.source.at(), "/var/lib/kubelet/config.yaml:38");
        let detail = e.source.detail.as_deref().unwrap_or_default();
        assert!(
            detail.starts_with(
                "a relative path: the kubelet opens /run/systemd/resolve/resolv.conf; "
            ) && detail.contains("which kubelet 1.31 does not read"),
            "{detail}"
        );
        let pod = f.kubelet.pod_resolv_conf.as_ref().expect("pod file");
        assert_eq!(
            (pod.path.as_str(), pod.state),
            ("/run/systemd/resolve/resolv.conf", FileState::Present)
        );
        // 1.33 reads the drop-in's, merged as written.
        let mut raw = base.clone();
        crate::testing::replace_in_file(
            &mut raw,
            DROPIN,
            "resolvConf: /etc/resolv.conf",
            "resolvConf: etc/resolv.conf",
        );
        let f = NodeFacts::from_raw("node1", &raw);
        match &f.kubelet.resolv_conf {
            Observed::Unknown(why) => assert_eq!(
                why,
                &format!(
                    "{DROPIN}:3 sets resolvConf to the relative path \"etc/resolv.conf\", which the \
                     kubelet opens from a directory dnsfix does not know (its working directory; \
                     for a stopped k0s, that of the config k0s writes at its next start)"
                )
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(f.kubelet.pod_resolv_conf, None);
        // A flag's, too.
        let mut raw = base;
        crate::testing::replace_in_file(
            &mut raw,
            "/proc/2291/cmdline",
            "--config-dir=/etc/kubernetes/kubelet.conf.d",
            "--resolv-conf=resolv.conf",
        );
        let f = NodeFacts::from_raw("node1", &raw);
        assert!(
            matches!(&f.kubelet.resolv_conf, Observed::Unknown(why)
                if why.starts_with("/proc/2291/cmdline sets resolvConf to the relative path \"resolv.conf\"")),
            "{:?}",
            f.kubelet.resolv_conf
        );
        assert_eq!(
            crate::facts::node_facts::go_clean("/a/b/../../../c/./d/"),
            "/c/d"
        );
        assert_eq!(crate::facts::node_facts::go_clean("/a/.."), "/");
    }

    /// A `--config-dir` drop-in's resolvConf counts from kubelet 1.32 (kubernetes#127421);
    /// 1.28 to 1.31 dropped it (kubernetes#126630), so there the config file's holds. For a
    /// kubelet of unknown version, which of the two it reads is not known.
    #[test]
    fn a_config_dir_dropin_sets_resolv_conf_from_kubelet_1_32() {
        let base =
            crate::testing::rules_fixture("DNS-KUBELET-LOOPBACK/kubeadm-1.33-config-dir-dropin");
        let resolv = |version: Option<&str>| {
            let mut raw = base.clone();
            match version {
                Some(v) => crate::testing::set_command(&mut raw, "kubelet-version", v, 0),
                None => {
                    raw.commands.remove("kubelet-version");
                }
            }
            let facts = NodeFacts::from_raw("node1", &raw);
            facts
                .kubelet
                .resolv_conf
                .known()
                .map(|e| (e.value.clone(), e.source.at()))
        };
        let dropin = Some((
            "/etc/resolv.conf".to_owned(),
            "/etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf:3".to_owned(),
        ));
        assert_eq!(resolv(Some("Kubernetes v1.33.5\n")), dropin);
        assert_eq!(
            resolv(Some("Kubernetes v1.31.4\n")).map(|(v, _)| v),
            Some("/run/systemd/resolve/resolv.conf".to_owned())
        );
        assert_eq!(resolv(None), None);
    }

    const CONFIG_DIR: &str = "/etc/kubernetes/kubelet.conf.d";
    const CONFIG_DIR_DROPIN: &str = "/etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf";

    /// A kubeadm 1.33 node whose `--config-dir` drop-in 99-resolv-conf.conf sets resolvConf.
    fn config_dir_node() -> RawFacts {
        crate::testing::rules_fixture("DNS-KUBELET-LOOPBACK/kubeadm-1.33-config-dir-dropin")
    }

    fn conf(path: &str) -> String {
        format!("resolvConf: {path}\n")
    }

    /// The kubelet's resolvConf (value, where set, detail), or why it is unknown.
    fn resolv_at(raw: &RawFacts) -> Result<(String, String, Option<String>), String> {
        let facts = NodeFacts::from_raw("node1", raw);
        match &facts.kubelet.resolv_conf {
            Observed::Known(e) => Ok((e.value.clone(), e.source.at(), e.source.detail.clone())),
            other => Err(format!("{other:?}")),
        }
    }

    /// `--config-dir DIR` with a space, in `KUBELET_EXTRA_ARGS` and on the running kubelet's
    /// command line: a pflag string flag takes the next word, so the drop-in still wins
    /// (and `--hostname-override NAME` still names the node).
    #[test]
    fn a_config_dir_given_with_a_space_is_still_merged() {
        let mut raw = config_dir_node();
        raw.file(
            "/etc/default/kubelet",
            FileState::Present,
            Some(
                format!(
                    "KUBELET_EXTRA_ARGS=--config-dir {CONFIG_DIR} --hostname-override node-7\n"
                )
                .as_bytes(),
            ),
        );
        let cmdline = format!(
            "/usr/bin/kubelet\0--config=/var/lib/kubelet/config.yaml\0--config-dir\0{CONFIG_DIR}\0--hostname-override\0node-7\0"
        );
        raw.file(
            "/proc/2291/cmdline",
            FileState::Present,
            Some(cmdline.as_bytes()),
        );
        let (value, at, _) = resolv_at(&raw).expect("known");
        assert_eq!(at, format!("{CONFIG_DIR_DROPIN}:3"), "{value}");
        raw.pids.remove("kubelet");
        let (_, at, _) = resolv_at(&raw).expect("known when stopped");
        assert_eq!(at, format!("{CONFIG_DIR_DROPIN}:3"));
        let facts = NodeFacts::from_raw("node1", &raw);
        let name = facts
            .kubelet
            .flags
            .iter()
            .find(|f| f.name == "hostname-override");
        assert_eq!(
            name.and_then(|f| f.value.as_deref()),
            Some("node-7"),
            "{:?}",
            facts.kubelet.flags
        );
    }

    /// A masked kubelet.service (`systemctl mask`: a link to /dev/null, read as an empty
    /// file, over the package's unit): a stopped kubelet does not start, so its settings are
    /// unknown; a running one still has its own.
    #[test]
    fn a_masked_kubelet_unit_does_not_start() {
        let mut raw = crate::testing::rules_fixture("_healthy/kubeadm-ubuntu2204");
        raw.file(
            "/etc/systemd/system/kubelet.service",
            FileState::Present,
            Some(b""),
        );
        assert!(resolv_at(&raw).is_ok(), "running");
        raw.pids.remove("kubelet");
        let why = resolv_at(&raw).expect_err("masked");
        assert!(why.contains("kubelet.service is masked"), "{why}");
    }

    /// Kubelet 1.28 and 1.29 refuse `--config-dir` without KUBELET_CONFIG_DROPIN_DIR_ALPHA in
    /// their environment: a stopped one there will not start, so its settings are unknown;
    /// one that runs, or a later version, or the variable set in an EnvironmentFile, reads
    /// its drop-ins.
    #[test]
    fn an_alpha_config_dir_without_its_variable_keeps_the_kubelet_from_starting() {
        let base = config_dir_node();
        let with = |version: &str, running: bool, env: &str| {
            let mut raw = base.clone();
            crate::testing::set_command(
                &mut raw,
                "kubelet-version",
                &format!("Kubernetes {version}\n"),
                0,
            );
            if !running {
                raw.pids.remove("kubelet");
            }
            let text = format!("KUBELET_EXTRA_ARGS=--config-dir={CONFIG_DIR}\n{env}");
            raw.file(
                "/etc/default/kubelet",
                FileState::Present,
                Some(text.as_bytes()),
            );
            resolv_at(&raw)
        };
        let why = with("v1.29.4", false, "").expect_err("does not start");
        assert!(
            why.contains("KUBELET_CONFIG_DROPIN_DIR_ALPHA") && why.contains("kubelet 1.29"),
            "{why}"
        );
        // (1.29 reads a drop-in's resolvConf only as resolverConfig: config.yaml's counts.)
        assert!(with("v1.29.4", true, "").is_ok());
        assert!(with("v1.29.4", false, "KUBELET_CONFIG_DROPIN_DIR_ALPHA=on\n").is_ok());
        let dropin = format!("{CONFIG_DIR_DROPIN}:3");
        assert_eq!(with("v1.33.1", false, "").map(|r| r.1), Ok(dropin));
    }

    /// The kubelet walks its `--config-dir` (filepath.WalkDir in `mergeKubeletConfigurations`):
    /// subdirectories where their names fall, hidden files too, only what the walk reached.
    #[test]
    fn a_config_dir_is_merged_as_the_kubelets_walk_reads_it() {
        let base = config_dir_node();
        let (dir, dropin) = (CONFIG_DIR, CONFIG_DIR_DROPIN);
        let resolv = resolv_at;
        assert_eq!(resolv(&base).expect("known").1, format!("{dropin}:3"));

        // A directory is walked where its name falls: "99-resolv-conf" before
        // "99-resolv-conf.conf" (a sort of whole paths would put it after: '.' < '/').
        let mut nested = base.clone();
        nested.file(&format!("{dir}/99-resolv-conf"), FileState::Directory, None);
        let inner = format!("{dir}/99-resolv-conf/10-inner.conf");
        nested.file(
            &inner,
            FileState::Present,
            Some(conf("/etc/inner.conf").as_bytes()),
        );
        assert_eq!(resolv(&nested).expect("known").1, format!("{dropin}:3"));
        let mut later = base.clone();
        for sub in ["zz", "zz/more"] {
            later.file(&format!("{dir}/{sub}"), FileState::Directory, None);
        }
        let deep = format!("{dir}/zz/more/10-deep.conf");
        later.file(
            &deep,
            FileState::Present,
            Some(conf("/etc/deep.conf").as_bytes()),
        );
        assert_eq!(
            resolv(&later).expect("known").0,
            "/etc/deep.conf",
            "zz/ comes after 99-resolv-conf.conf"
        );

        // A hidden drop-in counts; a file that is not *.conf does not.
        let mut hidden = base.clone();
        hidden.file(dropin, FileState::Missing, None);
        let dot = format!("{dir}/.override.conf");
        hidden.file(
            &dot,
            FileState::Present,
            Some(conf("/etc/dot.conf").as_bytes()),
        );
        hidden.file(
            &format!("{dir}/.override.conf.bak"),
            FileState::Present,
            Some(conf("/etc/bak.conf").as_bytes()),
        );
        assert_eq!(resolv(&hidden).expect("known").1, format!("{dot}:1"));

        // A real subdirectory named *.conf is walked, not loaded.
        let mut subdir = base.clone();
        subdir.file(&format!("{dir}/zz.conf"), FileState::Directory, None);
        let inside = format!("{dir}/zz.conf/10-inside.conf");
        subdir.file(
            &inside,
            FileState::Present,
            Some(conf("/etc/inside.conf").as_bytes()),
        );
        assert_eq!(resolv(&subdir).expect("known").1, format!("{inside}:1"));
    }

    /// A symlinked --config-dir: the kubelet merges nothing from it (WalkDir lstat()s its
    /// root), and what its drop-ins set in vain is said beside the setting that won.
    #[test]
    fn a_symlinked_config_dir_is_not_read() {
        let base = config_dir_node();
        let (dir, dropin) = (CONFIG_DIR, CONFIG_DIR_DROPIN);
        let resolv = resolv_at;
        let mut linked = base.clone();
        linked.file(dir, FileState::Directory, None);
        linked.files.get_mut(dir).expect("dir").symlink_target = Some("/srv/kubelet.d".into());
        let (value, at, detail) = resolv(&linked).expect("known");
        assert_eq!(value, "/run/systemd/resolve/resolv.conf");
        assert_eq!(at, "/var/lib/kubelet/config.yaml:38");
        assert!(
            detail.unwrap_or_default().contains(&format!(
                "{dropin}:3 sets resolvConf: \"/etc/resolv.conf\", which the kubelet does not read: --config-dir {dir} is a symlink"
            )),
            "{linked:?}"
        );

        // Under a symlinked --config-dir, which the kubelet does not read, a broken drop-in
        // makes nothing unknown.
        let mut broken = linked.clone();
        broken.file(
            &format!("{dir}/00-broken.conf"),
            FileState::Present,
            Some(b"resolvConf: [\n"),
        );
        broken.file(
            &format!("{dir}/a/b/c/d/e/f/g/h/"),
            FileState::Unreadable,
            None,
        );
        assert_eq!(
            resolv(&broken).expect("known").1,
            "/var/lib/kubelet/config.yaml:38"
        );
    }

    /// What the kubelet merges cannot be known where the gather did not see it all, or the
    /// kubelet cannot load it; where it cannot start on the directory, an error says why.
    #[test]
    fn a_config_dir_the_kubelet_cannot_load_is_unknown() {
        let base = config_dir_node();
        let (dir, dropin) = (CONFIG_DIR, CONFIG_DIR_DROPIN);
        let resolv = resolv_at;
        // What the kubelet merges cannot be known: a directory deeper than the gather goes,
        // a *.conf that is a symlink to a directory or to nothing.
        for (path, state, target) in [
            (
                format!("{dir}/a/b/c/d/e/f/g/h/"),
                FileState::Unreadable,
                None,
            ),
            (
                format!("{dir}/50-dir.conf"),
                FileState::Directory,
                Some("/srv"),
            ),
            (
                format!("{dir}/50-gone.conf"),
                FileState::Missing,
                Some("/srv/gone"),
            ),
        ] {
            let mut raw = base.clone();
            raw.file(&path, state, None);
            raw.files.get_mut(&path).expect("path").symlink_target = target.map(String::from);
            let why = resolv(&raw).expect_err("unknown");
            assert!(why.contains(path.trim_end_matches('/')), "{path}: {why}");
        }
        // Only what the walk reached counts: a file under a symlinked subdirectory, read
        // for another reason, is no drop-in.
        let mut beyond = base.clone();
        beyond.file(&format!("{dir}/linked"), FileState::Directory, None);
        beyond
            .files
            .get_mut(&format!("{dir}/linked"))
            .expect("linked")
            .symlink_target = Some("/srv".into());
        let outside = format!("{dir}/linked/zz.conf");
        beyond.file(
            &outside,
            FileState::Present,
            Some(conf("/etc/x.conf").as_bytes()),
        );
        assert_eq!(resolv(&beyond).expect("known").1, format!("{dropin}:3"));

        // A directory the kubelet cannot start on: missing (not a dangling link, which it
        // lstat()s and skips), or the root of the filesystem, which dnsfix does not walk.
        let mut missing = base.clone();
        missing.file(dir, FileState::Missing, None);
        let why = resolv(&missing).expect_err("unknown");
        assert!(
            why.contains("does not exist: the kubelet fails to start"),
            "{why}"
        );
        let mut dangling = missing.clone();
        dangling.files.get_mut(dir).expect("dir").symlink_target = Some("gone".into());
        assert_eq!(
            resolv(&dangling).expect("known").1,
            "/var/lib/kubelet/config.yaml:38"
        );
        let mut root = base.clone();
        let cmdline = "/proc/2291/cmdline";
        let text = String::from_utf8_lossy(&root.files[cmdline].content)
            .replace(&format!("--config-dir={dir}"), "--config-dir=/");
        root.file(cmdline, FileState::Present, Some(text.as_bytes()));
        let why = resolv(&root).expect_err("unknown");
        assert!(
            why.contains("--config-dir /: the kubelet would merge"),
            "{why}"
        );
    }

    /// Where a drop-in's resolvConf is not read, the setting that won says so; and 1.28 to
    /// 1.31 read the internal spelling `resolverConfig` (any case) there instead, which
    /// 1.32 on ignore (kubernetes#126630, #127421).
    #[test]
    fn a_dropin_key_the_kubelet_does_not_read_is_named_beside_the_one_that_won() {
        let base =
            crate::testing::rules_fixture("DNS-KUBELET-LOOPBACK/kubeadm-1.33-config-dir-dropin");
        let dropin = "/etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf";
        let effective = |version: &str, text: &str| {
            let mut raw = base.clone();
            crate::testing::set_command(&mut raw, "kubelet-version", version, 0);
            raw.file(dropin, FileState::Present, Some(text.as_bytes()));
            let facts = NodeFacts::from_raw("node1", &raw);
            let e = facts.kubelet.resolv_conf.known().expect("known").clone();
            (e.value, e.source.at(), e.source.detail.unwrap_or_default())
        };
        let head = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";

        let (value, at, detail) = effective(
            "Kubernetes v1.31.4\n",
            &format!("{head}resolvConf: /etc/resolv.conf\n"),
        );
        assert_eq!(value, "/run/systemd/resolve/resolv.conf");
        assert_eq!(at, "/var/lib/kubelet/config.yaml:38");
        assert!(
            detail.contains(&format!(
                "{dropin}:3 sets resolvConf: \"/etc/resolv.conf\", which kubelet 1.31 does not read"
            )),
            "{detail}"
        );

        let (value, at, detail) = effective(
            "Kubernetes v1.30.2\n",
            &format!("{head}ResolverConfig: /etc/resolv.conf\n"),
        );
        assert_eq!(
            (value.as_str(), at.as_str()),
            ("/etc/resolv.conf", &*format!("{dropin}:3"))
        );
        assert!(
            detail.starts_with("spelled ResolverConfig, the name kubelet 1.28 to 1.31"),
            "{detail}"
        );

        let (value, _, detail) = effective(
            "Kubernetes v1.32.0\n",
            &format!("{head}resolverConfig: /etc/resolv.conf\n"),
        );
        assert_eq!(value, "/run/systemd/resolve/resolv.conf");
        assert!(
            detail.contains(
                "sets resolverConfig: \"/etc/resolv.conf\", which kubelet 1.32 does not read"
            ),
            "{detail}"
        );

        // The merged object's keys sort bytewise and the last one decoded wins: a spelling
        // before the config's own `ResolverConfig` loses to it, a later one beats it.
        let (value, at, detail) = effective(
            "Kubernetes v1.31.4\n",
            &format!("{head}RESOLVERCONFIG: /etc/resolv.conf\n"),
        );
        assert_eq!(
            (value.as_str(), at.as_str()),
            (
                "/run/systemd/resolve/resolv.conf",
                "/var/lib/kubelet/config.yaml:38"
            )
        );
        assert!(detail.contains("sorts after it in byte order"), "{detail}");
        let (value, at, _) = effective(
            "Kubernetes v1.31.4\n",
            &format!("{head}resolverconfig: /a\nresolverConfig: /b\n"),
        );
        assert_eq!(
            (value.as_str(), at.as_str()),
            ("/a", &*format!("{dropin}:3"))
        );
    }

    /// Where two drop-ins spell the key differently, the spelling that sorts last wins,
    /// whichever file it is in; the same spelling, the later file.
    #[test]
    fn between_dropins_the_greatest_spelling_wins_before_1_32() {
        let mut raw =
            crate::testing::rules_fixture("DNS-KUBELET-LOOPBACK/kubeadm-1.33-config-dir-dropin");
        crate::testing::set_command(&mut raw, "kubelet-version", "Kubernetes v1.31.4\n", 0);
        let dir = "/etc/kubernetes/kubelet.conf.d";
        let head = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";
        raw.file(
            &format!("{dir}/10-a.conf"),
            FileState::Present,
            Some(format!("{head}resolverConfig: /a\n").as_bytes()),
        );
        raw.file(
            &format!("{dir}/20-b.conf"),
            FileState::Present,
            Some(format!("{head}ResolverConfig: /b\n").as_bytes()),
        );
        raw.file(
            &format!("{dir}/99-resolv-conf.conf"),
            FileState::Present,
            Some(format!("{head}resolvConf: /c\n").as_bytes()),
        );
        let facts = NodeFacts::from_raw("node1", &raw);
        let e = facts.kubelet.resolv_conf.known().expect("known");
        assert_eq!(e.value, "/a");
        assert_eq!(e.source.at(), format!("{dir}/10-a.conf:3"));
        let detail = e.source.detail.as_deref().unwrap_or_default();
        assert!(
            detail.contains("20-b.conf:3 sets ResolverConfig"),
            "{detail}"
        );
        assert!(
            detail.contains("99-resolv-conf.conf:3 sets resolvConf"),
            "{detail}"
        );
    }

    /// Before v1.32 (no `00-k3s-defaults.conf`) k3s hands the kubelet its clusterDNS as a
    /// flag: a server's cluster-dns, else the tenth address of each service-cidr (config
    /// files, then the command line, added up), else 10.43.0.10; an agent's is its
    /// server's, which this node does not show.
    #[test]
    fn a_k3s_before_1_32_hands_the_kubelet_its_server_s_cluster_dns() {
        let base = crate::testing::rules_fixture("_upstream/k3s-env-resolv-conf");
        let config = "/etc/rancher/k3s/config.yaml";
        let unit = "/etc/systemd/system/k3s.service";
        let text = crate::testing::text(&base, unit);
        let dns = |files: &[(&str, &str)]| {
            let raw = crate::testing::with_files(&base, files);
            match NodeFacts::from_raw("node1", &raw).kubelet.cluster_dns {
                Observed::Known(e) => Ok((e.value.join(","), e.source.at())),
                Observed::Unknown(why) => Err(why),
                Observed::Absent => Err("absent".into()),
            }
        };
        let (value, at) = dns(&[]).expect("known");
        assert_eq!((value.as_str(), at.as_str()), ("10.43.0.10", "default"));
        let cidr = "service-cidr: 10.50.0.0/16,fd00:50::/112\n";
        assert_eq!(
            dns(&[(config, cidr)]),
            Ok(("10.50.0.10,fd00:50::a".into(), format!("{config}:1")))
        );
        let flagged = text.replace(
            "    server \\\n",
            "    server \\\n    --cluster-dns=10.50.0.53 \\\n",
        );
        assert_ne!(flagged, text);
        assert_eq!(
            dns(&[(config, "cluster-dns: 10.50.0.10\n"), (unit, &flagged)]).map(|(v, _)| v),
            Ok("10.50.0.10,10.50.0.53".into()),
            "the files' values first, the command line's added"
        );
        assert_eq!(
            dns(&[(config, &format!("{cidr}cluster-dns: 10.50.0.53\n"))]).map(|(v, _)| v),
            Ok("10.50.0.53".into()),
            "cluster-dns over service-cidr"
        );
        // `key+` in a later file adds to the earlier files' value (configfilearg keeps one
        // value per key across the files); a plain key replaces it.
        let dropin = "/etc/rancher/k3s/config.yaml.d/10-dual-stack.yaml";
        let dir = crate::testing::with_files(&base, &[(config, "service-cidr: 10.43.0.0/16\n")]);
        let mut dual = dir.clone();
        dual.file("/etc/rancher/k3s/config.yaml.d", FileState::Directory, None);
        let dns_of = |raw: &RawFacts, text: &str| {
            let raw = crate::testing::with_files(raw, &[(dropin, text)]);
            NodeFacts::from_raw("node1", &raw)
                .kubelet
                .cluster_dns
                .known()
                .map(|e| e.value.join(","))
        };
        assert_eq!(
            dns_of(&dual, "service-cidr+:\n- fd00:43::/112\n"),
            Some("10.43.0.10,fd00:43::a".into())
        );
        assert_eq!(
            dns_of(&dual, "service-cidr:\n- fd00:43::/112\n"),
            Some("fd00:43::a".into())
        );
        assert_eq!(
            dns_of(
                &dual,
                "service-cidr: fd00:43::/112\nservice-cidr+: fd00:44::/112\n"
            ),
            Some("fd00:43::a,fd00:44::a".into())
        );
        let bad = dns(&[(config, "service-cidr: 10.50.0.0\n")]).expect_err("not a range");
        assert!(bad.contains("not a list of address ranges"), "{bad}");
        // An agent: its server's, unknown here, whatever its config file says.
        let agent = text.replace("    server \\\n", "    agent \\\n");
        assert_ne!(agent, text);
        let why = dns(&[(unit, &agent), (config, cidr)]).expect_err("an agent's");
        assert!(why.contains("runs an agent"), "{why}");
    }

    /// k3s's runtime: its own containerd, unless told `docker` (its cri-dockerd) or a
    /// `container-runtime-endpoint` (the command line over the config files).
    #[test]
    fn k3s_s_runtime_is_its_containerd_unless_told_another() {
        let runtime = |raw: &RawFacts| {
            NodeFacts::from_raw("node1", raw)
                .kubelet
                .runtime_endpoint
                .map(|e| (e.value, e.source.at()))
        };
        let config = "/etc/rancher/k3s/config.yaml";
        let dropin = "/etc/rancher/k3s/config.yaml.d/50-cri.yaml";
        let k3s =
            crate::testing::rules_fixture("DNS-KUBELET-LOOPBACK/k3s-1.33-kubelet-config-file");
        assert_eq!(runtime(&k3s), None);
        // A plain kubelet's leftover flag is no kubelet's that runs here (k3s embeds it).
        let leftover =
            "KUBELET_EXTRA_ARGS=--container-runtime-endpoint=unix:///var/run/crio/crio.sock\n";
        let stale = crate::testing::with_files(&k3s, &[("/etc/default/kubelet", leftover)]);
        assert!(
            NodeFacts::from_raw("node1", &stale)
                .kubelet
                .flags
                .iter()
                .any(|f| f.name == "container-runtime-endpoint"),
            "the leftover is among the declared flags"
        );
        assert_eq!(runtime(&stale), None);
        let crio = "container-runtime-endpoint: unix:///var/run/crio/crio.sock\n";
        let with_crio = crate::testing::with_files(&k3s, &[(config, crio)]);
        assert_eq!(
            runtime(&with_crio),
            Some((
                "unix:///var/run/crio/crio.sock".into(),
                format!("{config}:1")
            ))
        );
        // A later file setting it empty gives k3s its own containerd back.
        let emptied = crate::testing::with_files(
            &with_crio,
            &[(dropin, "container-runtime-endpoint: \"\"\n")],
        );
        assert_eq!(runtime(&emptied), None);
        // `docker` runs k3s's cri-dockerd, whatever endpoint is set; the command line's
        // `--container-runtime-endpoint` beats the config files'.
        let docker = crate::testing::with_files(&with_crio, &[(dropin, "docker: true\n")]);
        assert_eq!(
            runtime(&docker),
            Some((
                "unix:///run/k3s/cri-dockerd/cri-dockerd.sock".into(),
                format!("{dropin}:1")
            ))
        );
        let unit = "/etc/systemd/system/k3s.service";
        let text =
            crate::testing::text(&k3s, unit).replace("    server \\\n", "    server --docker \\\n");
        assert!(text.contains("--docker"), "{text}");
        let with_flag = crate::testing::with_files(&k3s, &[(unit, text.as_str())]);
        assert_eq!(
            runtime(&with_flag).map(|r| r.0),
            Some("unix:///run/k3s/cri-dockerd/cri-dockerd.sock".into())
        );
        let arg = "kubelet-arg:\n- container-runtime-endpoint=unix:///run/kubelet-arg.sock\n";
        let with_arg = crate::testing::with_files(&docker, &[(config, arg)]);
        assert_eq!(
            runtime(&with_arg),
            Some(("unix:///run/kubelet-arg.sock".into(), format!("{config}:2")))
        );
        let text = text.replace("--docker", "--container-runtime-endpoint=/run/other.sock");
        let with_flag = crate::testing::with_files(&with_crio, &[(unit, text.as_str())]);
        assert_eq!(
            runtime(&with_flag),
            Some(("/run/other.sock".into(), format!("{unit}:29")))
        );
    }

    /// k3s's clusterDomain: from v1.32 its own drop-in's (or a later drop-in's), a
    /// kubelet-arg cluster-domain over either; before, a server's cluster-domain (command
    /// line over config files) or cluster.local, and an agent's its server's: unknown.
    #[test]
    fn k3s_s_cluster_domain() {
        let domain = |raw: &RawFacts| match NodeFacts::from_raw("node1", raw).kubelet.cluster_domain
        {
            Observed::Known(e) => Ok((e.value, e.source.at(), e.shadowed.len())),
            Observed::Unknown(why) => Err(why),
            Observed::Absent => Err("absent".into()),
        };
        let with = crate::testing::with_files;
        let config = "/etc/rancher/k3s/config.yaml";
        let dir = "/var/lib/rancher/k3s/agent/etc/kubelet.conf.d";
        let current =
            crate::testing::rules_fixture("DNS-KUBELET-LOOPBACK/k3s-1.33-kubelet-config-file");
        assert_eq!(
            domain(&current),
            Ok((
                "cluster.local".into(),
                format!("{dir}/00-k3s-defaults.conf:18"),
                0
            ))
        );
        let later = with(
            &current,
            &[(
                &format!("{dir}/50-site.conf"),
                "clusterDomain: corp.local\n",
            )],
        );
        assert_eq!(domain(&later).map(|d| d.0), Ok("corp.local".into()));
        let arg = "kubelet-arg:\n- cluster-domain=k8s.example\n";
        assert_eq!(
            domain(&with(&later, &[(config, arg)])),
            Ok(("k8s.example".into(), format!("{config}:2"), 1))
        );

        let old = crate::testing::rules_fixture("_upstream/k3s-env-resolv-conf");
        assert_eq!(
            domain(&old),
            Ok(("cluster.local".into(), "default".into(), 0))
        );
        assert_eq!(
            domain(&with(&old, &[(config, "cluster-domain: prod.local\n")])).map(|d| d.0),
            Ok("prod.local".into())
        );
        let unit = "/etc/systemd/system/k3s.service";
        let text = crate::testing::text(&old, unit);
        let agent = text.replace("    server \\\n", "    agent \\\n");
        let why = domain(&with(&old, &[(unit, &agent)])).expect_err("an agent's");
        assert!(why.contains("runs an agent"), "{why}");
    }

    /// Where k3s/RKE2 generate the kubelet's resolv.conf and it is not in their data dir:
    /// before k3s-io/k3s#5531 (May 2022) they wrote it to /tmp, so a release before v1.25
    /// leaves that unknown (and an unknown version asks for the version), while from v1.25
    /// the file is missing.
    #[test]
    fn a_missing_generated_resolv_conf_is_missing_only_where_k3s_writes_it_there() {
        let base = crate::testing::rules_fixture("_upstream/k3s-aws-link-local-fallback");
        let generated = "/var/lib/rancher/k3s/agent/etc/resolv.conf";
        let resolv = |version: Option<&str>| {
            let mut raw = base.clone();
            raw.file(generated, FileState::Missing, None);
            raw.commands.remove("kubelet-version");
            if let Some(v) = version {
                let said = format!("k3s version {v} (236cbf25)\n");
                crate::testing::set_command(&mut raw, "kubelet-version", &said, 0);
            }
            NodeFacts::from_raw("node1", &raw).kubelet.resolv_conf
        };
        match resolv(Some("v1.33.3+k3s1")) {
            Observed::Known(e) => assert_eq!(e.value, generated),
            other => panic!("{other:?}"),
        }
        match resolv(Some("v1.22.4+k3s1")) {
            Observed::Unknown(why) => assert!(why.contains("/tmp/k3s-resolv.conf"), "{why}"),
            other => panic!("{other:?}"),
        }
        match resolv(None) {
            Observed::Unknown(why) => assert!(why.starts_with(K3S_VERSION_UNKNOWN), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    /// k3s under OpenRC (its /etc/init.d script and env file) or installed with
    /// INSTALL_K3S_NAME (k3s-NAME.service), neither a unit dnsfix reads: its kubelet's DNS
    /// settings are unknown, never what the config files alone would give (its env file may
    /// set K3S_RESOLV_CONF, its command line --resolv-conf).
    #[test]
    fn a_k3s_service_dnsfix_does_not_read_leaves_its_settings_unknown() {
        let base = crate::testing::rules_fixture("DNS-NODELOCAL-CLUSTERDNS/k3s-ipvs-service-ip");
        let unit = "/etc/systemd/system/k3s.service";
        let known = |raw: &RawFacts| NodeFacts::from_raw("node1", raw).kubelet.resolv_conf;
        assert!(known(&base).known().is_some());
        for (path, text) in [
            ("/etc/init.d/k3s-agent", "#!/sbin/openrc-run\n"),
            (
                "/etc/systemd/system/k3s-edge.service",
                "[Service]\nExecStart=/usr/local/bin/k3s agent\n",
            ),
        ] {
            let mut raw = crate::testing::with_files(&base, &[(path, text)]);
            assert!(
                known(&raw).known().is_some(),
                "{path}: the k3s unit is read"
            );
            raw.file(unit, FileState::Missing, None);
            match known(&raw) {
                Observed::Unknown(why) => assert!(why.starts_with(path), "{why}"),
                other => panic!("{path}: {other:?}"),
            }
        }
        // k3s-agent.service is one dnsfix reads.
        let mut raw = crate::testing::with_files(
            &base,
            &[("/etc/systemd/system/k3s-agent.service", "[Service]\n")],
        );
        raw.file(unit, FileState::Missing, None);
        assert!(!matches!(known(&raw), Observed::Unknown(why) if why.contains("does not read")));
    }

    /// A running k3s chose its resolv.conf at its last start (written into its own drop-in):
    /// started before the host's file had servers it takes, it hands the kubelet its
    /// generated file until it restarts, though the files pass now.
    #[test]
    fn a_running_k3s_keeps_what_it_chose_at_its_last_start() {
        let base = crate::testing::rules_fixture("DNS-NODELOCAL-CLUSTERDNS/k3s-ipvs-service-ip");
        let own = "/var/lib/rancher/k3s/agent/etc/kubelet.conf.d/00-k3s-defaults.conf";
        let generated = "/var/lib/rancher/k3s/agent/etc/resolv.conf";
        let text = crate::testing::text(&base, own);
        let then = text.replace(
            "resolvConf: /run/systemd/resolve/resolv.conf",
            &format!("resolvConf: {generated}"),
        );
        assert_ne!(then, text);
        let raw = crate::testing::with_files(
            &base,
            &[(own, then.as_str()), (generated, "nameserver 8.8.8.8\n")],
        );
        let k = NodeFacts::from_raw("node1", &raw).kubelet;
        let e = k.resolv_conf.known().expect("known");
        assert_eq!(
            (e.value.as_str(), e.source.at()),
            (generated, format!("{own}:39"))
        );
        assert!(
            e.source
                .detail
                .as_deref()
                .is_some_and(|d| d.contains("/run/systemd/resolve/resolv.conf, at its next start")),
            "{e:?}"
        );
        assert!(k.on_rancher_fallback());
        // The other way round, a host file then and no host file passing now: what the
        // kubelet uses is that host file as it is now, and the next start falls back.
        let uplink = "/run/systemd/resolve/resolv.conf";
        let later = crate::testing::with_files(&base, &[(uplink, "nameserver 127.0.0.1\n")]);
        let k = NodeFacts::from_raw("node1", &later).kubelet;
        let e = k.resolv_conf.known().expect("known");
        assert_eq!(e.value, generated, "{e:?}");
        assert!(
            e.source
                .detail
                .as_deref()
                .is_none_or(|d| !d.contains("last start")),
            "{e:?}"
        );
        // Stopped: its next start chooses anew.
        let mut stopped = raw.clone();
        let states: Vec<String> = crate::facts::node_facts::units()
            .map(|u| {
                if u == "systemd-resolved" {
                    "active".to_owned()
                } else {
                    "inactive".to_owned()
                }
            })
            .collect();
        crate::testing::set_command(&mut stopped, "units", &(states.join("\n") + "\n"), 3);
        let e = NodeFacts::from_raw("node1", &stopped).kubelet.resolv_conf;
        assert_eq!(
            e.known().expect("known").value,
            "/run/systemd/resolve/resolv.conf"
        );
    }

    /// K3S_RESOLV_CONF is the default of k3s's --resolv-conf, not a setting over it: a
    /// config file's `resolv-conf: ""` (choose automatically) leaves it unused.
    #[test]
    fn an_empty_resolv_conf_setting_leaves_k3s_resolv_conf_unused() {
        let base = crate::testing::rules_fixture("_upstream/k3s-env-resolv-conf");
        let resolv = |config: Option<&str>| {
            let mut raw = base.clone();
            if let Some(text) = config {
                raw.file(
                    "/etc/rancher/k3s/config.yaml",
                    FileState::Present,
                    Some(text.as_bytes()),
                );
            }
            let e = NodeFacts::from_raw("node1", &raw).kubelet.resolv_conf;
            let e = e.known().expect("known").clone();
            (e.value, e.source.kind)
        };
        assert_eq!(
            resolv(None),
            ("/etc/k3s-resolv.conf".into(), "k3s_env".into())
        );
        let (_, kind) = resolv(Some("resolv-conf: \"\"\n"));
        assert_eq!(kind, "k3s_auto");
        // With no value at all: configfilearg still passes `--resolv-conf=` (nil as "").
        let (_, kind) = resolv(Some("resolv-conf:\n"));
        assert_eq!(kind, "k3s_auto");
        // And in a drop-in, over config.yaml's file.
        let mut raw = base.clone();
        for (path, text) in [
            (
                "/etc/rancher/k3s/config.yaml",
                "resolv-conf: /etc/other.conf\n",
            ),
            (
                "/etc/rancher/k3s/config.yaml.d/10-dns.yaml",
                "resolv-conf:\n",
            ),
        ] {
            raw.file(path, FileState::Present, Some(text.as_bytes()));
        }
        raw.file("/etc/rancher/k3s/config.yaml.d", FileState::Directory, None);
        let e = NodeFacts::from_raw("node1", &raw).kubelet.resolv_conf;
        assert_eq!(e.known().expect("known").source.kind, "k3s_auto", "{e:?}");
        assert_eq!(
            resolv(Some("resolv-conf: /etc/other.conf\n")),
            ("/etc/other.conf".into(), "k3s_config".into())
        );
    }

    /// RKE2 runs the kubelet as a process of its own: where its command line sets
    /// --cluster-dns or --cluster-domain (RKE2 before v1.32 passed its own so), that is the
    /// setting, on an agent too, whatever the config files would have chosen.
    #[test]
    fn an_rke2_kubelet_s_own_flags_are_its_settings() {
        let mut raw = crate::testing::rules_fixture("_upstream/rke2-default-resolv-conf");
        let own = "/var/lib/rancher/rke2/agent/etc/kubelet.conf.d/00-rke2-defaults.conf";
        raw.file(own, FileState::Missing, None);
        let cmdline = "/proc/2174/cmdline";
        let mut argv = raw.get(cmdline).expect("cmdline").content.to_vec();
        argv.extend_from_slice(b"--cluster-dns=10.50.0.10\0--cluster-domain=corp.local\0");
        raw.file(cmdline, FileState::Present, Some(&argv));
        let k = NodeFacts::from_raw("node1", &raw).kubelet;
        let dns = k.cluster_dns.known().expect("clusterDNS");
        assert_eq!(dns.value, ["10.50.0.10"]);
        assert_eq!(dns.source.at(), cmdline);
        let domain = k.cluster_domain.known().expect("clusterDomain");
        assert_eq!(domain.value, "corp.local");
    }

    /// k3s's configfilearg puts the config files' values before the command line's, and the
    /// last `--resolv-conf` is k3s's: an empty one in ExecStart asks for the automatic
    /// choice whatever config.yaml says, which it shadows (k3s issue #5627: "" is unset).
    #[test]
    fn an_empty_resolv_conf_in_exec_start_asks_for_the_automatic_choice() {
        let unit = "[Service]\nExecStart=/usr/local/bin/k3s server --resolv-conf=\n";
        let f = facts(&[
            ("/etc/systemd/system/k3s.service", unit),
            ("/etc/resolv.conf", "nameserver 10.0.0.2\n"),
            (K3S_CONFIG, "resolv-conf: /etc/k3s-resolv.conf\n"),
        ]);
        let e = f.kubelet.resolv_conf.known().expect("known").clone();
        assert_eq!(
            (e.value.as_str(), e.source.kind.as_str()),
            ("/etc/resolv.conf", "k3s_auto")
        );
        assert_eq!(
            e.shadowed
                .iter()
                .map(|s| (s.value.as_str(), s.source.at()))
                .collect::<Vec<_>>(),
            [("/etc/k3s-resolv.conf", format!("{K3S_CONFIG}:1"))]
        );
        assert_eq!(
            rancher_exec_resolv_conf_reset(&f.raw, &f.flavour).as_deref(),
            Some("/etc/systemd/system/k3s.service:2")
        );
        // A kubelet-arg still beats it: a kubelet flag after k3s's own choice.
        let f = facts(&[
            ("/etc/systemd/system/k3s.service", unit),
            (K3S_CONFIG, "kubelet-arg: [resolv-conf=/b]\n"),
        ]);
        assert_eq!(resolv(&f), ("/b".into(), format!("{K3S_CONFIG}:1")));
    }

    /// `kubelet-arg: resolv-conf-=/c` goes before every other value of the flag (k3s-io/k3s
    /// pkg/util/args.go `GetArgs`). Before v1.32 k3s passes its own `--resolv-conf` after
    /// it; from v1.32 it passes none (its choice is `ResolverConfig` in its drop-in,
    /// pkg/daemons/agent `defaultKubeletConfig`), so the kubelet keeps `/c`; of several such
    /// entries alone, the first. The version, else k3s's own drop-in, decides.
    #[test]
    fn a_prepending_kubelet_arg_sets_resolv_conf_from_k3s_1_32() {
        let with = |config: &str, version: Option<&str>| {
            let mut raw = crate::testing::raw_from(&[
                (
                    "/etc/systemd/system/k3s.service",
                    "[Service]\nExecStart=/usr/local/bin/k3s server\n",
                ),
                ("/etc/resolv.conf", "nameserver 10.0.0.2\n"),
                (K3S_CONFIG, config),
            ]);
            raw.file("/run/systemd/resolve/resolv.conf", FileState::Missing, None);
            if let Some(v) = version {
                crate::testing::set_command(&mut raw, "kubelet-version", v, 0);
            }
            NodeFacts::from_raw("node1", &raw).kubelet.resolv_conf
        };
        let one = "kubelet-arg: [resolv-conf-=/c]\n";
        let e = with(one, Some("k3s version v1.32.5+k3s1 (8e8f2a47)\n"));
        let e = e.known().expect("known");
        assert_eq!(
            (e.value.as_str(), e.source.at()),
            ("/c", format!("{K3S_CONFIG}:1"))
        );
        assert_eq!(e.source.detail.as_deref(), Some("kubelet-arg"));
        let e = with(one, Some("rke2 version v1.33.1+rke2r1 (9d5a1b4c)\n"));
        assert_eq!(e.known().expect("known").value, "/c");
        let e = with(one, Some("k3s version v1.31.9+k3s1 (1b8a6f2d)\n"));
        let e = e.known().expect("known");
        assert_eq!(
            (e.value.as_str(), e.source.kind.as_str()),
            ("/etc/resolv.conf", "k3s_auto")
        );
        assert_eq!(e.shadowed[0].value, "/c");
        let Observed::Unknown(why) = with(one, None) else {
            panic!("known without a version");
        };
        assert!(
            why.contains("resolv-conf-=/c at /etc/rancher/k3s/config.yaml:1"),
            "{why}"
        );
        let several = "kubelet-arg: [resolv-conf-=/c, resolv-conf-=/d]\n";
        let e = with(several, Some("k3s version v1.33.0+k3s1 (1b8a6f2d)\n"));
        assert_eq!(e.known().expect("known").value, "/c");
        // Any other entry comes after it, at every version.
        let other = "kubelet-arg: [resolv-conf=/b, resolv-conf-=/c]\n";
        assert_eq!(with(other, None).known().expect("known").value, "/b");
    }

    /// k3s's `GetArgs` takes away only a leading `--`: `-resolv-conf=/x` reaches the kubelet
    /// as `---resolv-conf=/x`, which spf13/pflag refuses ("bad flag syntax"): no setting of
    /// resolv-conf, and the evidence says why.
    #[test]
    fn a_kubelet_arg_with_one_dash_sets_no_resolv_conf() {
        let f = facts(&[
            (
                "/etc/systemd/system/k3s.service",
                "[Service]\nExecStart=/usr/local/bin/k3s server '--kubelet-arg=-resolv-conf=/y'\n",
            ),
            (
                K3S_CONFIG,
                "resolv-conf: /a\nkubelet-arg:\n  - -resolv-conf=/x\n",
            ),
        ]);
        let e = f.kubelet.resolv_conf.known().expect("known");
        assert_eq!(
            (e.value.as_str(), e.source.at()),
            ("/a", format!("{K3S_CONFIG}:1"))
        );
        let detail = e.source.detail.as_deref().unwrap_or_default();
        for part in [
            "kubelet-arg -resolv-conf=/x at /etc/rancher/k3s/config.yaml:3 sets no resolv-conf",
            "hands the kubelet ---resolv-conf=/x, which it refuses (bad flag syntax)",
            "kubelet-arg -resolv-conf=/y at /etc/systemd/system/k3s.service:2",
        ] {
            assert!(detail.contains(part), "{part}: {detail}");
        }
    }
}
