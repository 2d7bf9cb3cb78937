//! The per-host rules: pure functions of one node's facts and its inventory variables.
//! Each rule returns a [`RuleOutcome`]; a rule whose facts are unknown says so (an
//! `Unknown` finding), never passes silently. Rules never touch the network.

use std::collections::BTreeSet;
use std::net::IpAddr;

use super::catalog;
use super::finding::{Finding, FindingStatus, Severity};
use crate::facts::NodeFacts;
use crate::facts::cni::PodBridge;
use crate::facts::node_facts::{
    Effective, FlavourKind, Observed, ResolvFile, UnitState, in_resolved_run_dir,
};
use crate::facts::raw::FileState;
use crate::facts::resolv_conf::{Nameserver, ResolvConf, is_loopback, real_upstreams};
use crate::inventory::Host;

/// What one rule concluded for one host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleOutcome {
    Pass,
    /// The rule does not apply (e.g. no kubelet on this host), with why.
    NotApplicable(String),
    Findings(Vec<Finding>),
}

/// Everything a rule may look at for one host.
#[derive(Debug)]
pub struct Ctx<'a> {
    pub host: &'a Host,
    pub facts: &'a NodeFacts,
    /// The cluster's own DNS addresses: clusterDNS, the nodelocaldns IP, the kube-dns
    /// service IP. A resolver that lists only these forwards back into the cluster.
    pub cluster: BTreeSet<IpAddr>,
    /// kube-proxy's mode as its ConfigMap says, when the cluster was read (`""` is its
    /// default, iptables); it replaces the inventory's `kube_proxy_mode`.
    pub kube_proxy_mode: Option<String>,
    /// The node's kubelet version as the cluster has it from the running kubelet
    /// (`status.nodeInfo.kubeletVersion`), with the node's name there, when it was read.
    pub kubelet_version: Option<(String, String)>,
}

impl<'a> Ctx<'a> {
    pub fn new(host: &'a Host, facts: &'a NodeFacts) -> Ctx<'a> {
        Ctx {
            host,
            facts,
            cluster: cluster_addresses(host, facts),
            kube_proxy_mode: None,
            kubelet_version: None,
        }
    }

    /// [`Ctx::new`], with what the cluster says where rules can use it.
    pub fn in_cluster(
        host: &'a Host,
        facts: &'a NodeFacts,
        cluster: Option<&crate::cluster::Cluster>,
    ) -> Ctx<'a> {
        let mut ctx = Ctx::new(host, facts);
        if let Some(crate::cluster::Cluster::Read {
            config, kubelets, ..
        }) = cluster
        {
            ctx.kube_proxy_mode = config.kube_proxy_mode.clone();
            ctx.kubelet_version = crate::cluster::node_names(host, facts)
                .into_iter()
                .find_map(|name| Some((kubelets.get(&name)?.clone(), name)));
        }
        ctx
    }

    pub(super) fn finding(
        &self,
        id: &'static str,
        severity: Severity,
        summary: String,
        evidence: Vec<String>,
        remediation: String,
    ) -> Finding {
        Finding {
            id,
            severity,
            status: FindingStatus::Failed,
            host: self.host.name.clone(),
            summary,
            evidence,
            remediation,
            playbook: catalog::rule(id).and_then(|r| r.playbook),
        }
    }

    fn unknown(&self, id: &'static str, why: String) -> RuleOutcome {
        let severity = catalog::rule(id).map_or(Severity::Warning, |r| r.severity);
        RuleOutcome::Findings(vec![Finding {
            id,
            severity,
            status: FindingStatus::Unknown,
            host: self.host.name.clone(),
            summary: format!("cannot tell: {why}"),
            evidence: vec![why],
            remediation: "make the file readable to dnsfix (root via sudo -n) or fix it so it parses, then check again".into(),
            playbook: None,
        }])
    }
}

type Rule = fn(&Ctx) -> RuleOutcome;

/// Every per-host rule, in catalog order.
pub const RULES: &[(&str, Rule)] = &[
    ("DNS-KUBELET-LOOPBACK", kubelet_loopback),
    ("DNS-CLUSTER-SELF-FORWARD", cluster_self_forward),
    ("DNS-KUBELET-RESOLVCONF-MISSING", resolvconf_missing),
    ("DNS-HOST-RESOLVER-DOWN", host_resolver_down),
    ("DNS-BRIDGE-NF-OFF", bridge_nf_off),
    ("DNS-BRIDGE-NF-NOT-PERSISTENT", bridge_nf_not_persistent),
    ("DNS-IP-FORWARD", ip_forward),
    ("DNS-NAMESERVER-LIMIT", nameserver_limit),
    ("DNS-SEARCH-LIMIT", search_limit),
    ("DNS-STRAY-SEARCH", stray_search),
    ("DNS-NODELOCAL-CLUSTERDNS", nodelocal_clusterdns),
    ("DNS-KUBELET-FLAG-SHADOW", flag_shadow),
    ("DNS-RESOLV-MANAGED-ELSEWHERE", resolv_managed_elsewhere),
    ("DNS-K3S-FALLBACK", k3s_fallback),
];

const NO_KUBELET: &str = "no kubelet configuration on this host";

/// The file kubelet hands to dnsPolicy=Default pods, parsed; or why a rule cannot use it.
pub(super) enum PodResolv<'a> {
    Parsed(&'a Effective<String>, &'a ResolvFile, &'a ResolvConf),
    NoKubelet,
    Unknown(String),
    /// The path is set but the file is not there (or is empty/has no nameserver): the
    /// MISSING rule's business, other rules pass.
    Broken,
}

pub(super) fn pod_resolv<'a>(ctx: &Ctx<'a>) -> PodResolv<'a> {
    let k = &ctx.facts.kubelet;
    match &k.resolv_conf {
        Observed::Absent => PodResolv::NoKubelet,
        Observed::Unknown(why) => PodResolv::Unknown(why.clone()),
        Observed::Known(e) => match &k.pod_resolv_conf {
            None => PodResolv::Broken,
            Some(f) => match (f.state, &f.parsed) {
                (FileState::Present, Some(p)) => PodResolv::Parsed(e, f, p),
                (FileState::Unreadable, _) => {
                    PodResolv::Unknown(format!("{} could not be read", f.path))
                }
                _ => PodResolv::Broken,
            },
        },
    }
}

/// "/etc/kubernetes/kubelet-config.yaml:31 resolvConf: /etc/resolv.conf → symlink to
/// ../run/systemd/resolve/stub-resolv.conf"
pub(super) fn resolv_chain(e: &Effective<String>, f: &ResolvFile) -> String {
    let detail = e.source.detail.as_deref();
    let setting = match e.source.kind.as_str() {
        "flag" | "k3s_flag" => format!("--resolv-conf={}", e.value),
        "k3s_config" => format!("resolv-conf: {}", e.value),
        // The variable's name is the setting; it is not repeated as a detail.
        "k3s_env" => format!("{}={}", detail.unwrap_or("RESOLV_CONF"), e.value),
        "k3s_auto" => format!("chosen by k3s/RKE2: {}", e.value),
        "k0s_auto" => format!("chosen by k0s: {}", e.value),
        _ => format!("resolvConf: {}", e.value),
    };
    let mut s = format!("{} {setting}", e.source.at());
    if let Some(d) = detail.filter(|_| e.source.kind != "k3s_env") {
        s.push_str(&format!(" ({d})"));
    }
    if let Some(t) = &f.symlink_target {
        s.push_str(&format!(" → symlink to {t}"));
    }
    s
}

fn ns_evidence(f: &ResolvFile, ns: &[&Nameserver]) -> String {
    let list: Vec<String> = ns
        .iter()
        .map(|n| format!("nameserver {} (line {})", n.address, n.line))
        .collect();
    format!(
        "{}: {}",
        f.canonical.as_deref().unwrap_or(&f.path),
        list.join(", ")
    )
}

fn persist_hint(ctx: &Ctx) -> &'static str {
    match ctx.facts.flavour.kind {
        FlavourKind::Kubespray => {
            "set resolvConf in /etc/kubernetes/kubelet-config.yaml and make Kubespray agree: kube_resolv_conf in the inventory (on Ubuntu/Fedora Kubespray's distro vars outrank group_vars, so pass -e kube_resolv_conf=...)"
        }
        FlavourKind::Kubeadm => {
            "set resolvConf in /var/lib/kubelet/config.yaml and in ConfigMap kube-system/kubelet-config (or kubeadm upgrade reverts it)"
        }
        FlavourKind::K3s | FlavourKind::Rke2 => "set resolv-conf in /etc/rancher/*/config.yaml",
        FlavourKind::Eks => {
            "nodeadm rewrites /etc/kubernetes/kubelet/config.json at every boot: set spec.kubelet.config.resolvConf in the NodeConfig (user data)"
        }
        FlavourKind::K0s => {
            "k0s rewrites the kubelet config at every k0s start: pass --resolv-conf in the k0s service's --kubelet-extra-args (this node), or set resolvConf in the worker profile (spec.workerProfiles in k0s.yaml: every node of that profile)"
        }
        FlavourKind::MicroK8s => {
            "set --resolv-conf in /var/snap/microk8s/current/args/kubelet (kept across snap refreshes; microk8s join replaces the file with the control plane's)"
        }
        FlavourKind::Unknown => "set resolvConf in the kubelet configuration",
    }
}

/// How the kubelet is restarted to read a new setting: k0s supervises its own.
fn restart_hint(ctx: &Ctx) -> &'static str {
    match ctx.facts.flavour.kind {
        FlavourKind::K0s => "restart k0s on the node (k0s stop; k0s start)",
        FlavourKind::MicroK8s => {
            "restart kubelite, and with it the node's whole Kubernetes (snap restart microk8s.daemon-kubelite)"
        }
        _ => "restart kubelet",
    }
}

/// systemd-resolved runs and its uplink file lists servers, none loopback and none of the
/// cluster's own: a file kubelet can hand to CoreDNS. (A Kubespray uplink file holding
/// 169.254.25.10 is not one: its "upstream" is nodelocaldns itself.)
/// `p` lists servers, none loopback and none the cluster's own.
fn only_real_servers(ctx: &Ctx, p: &ResolvConf) -> bool {
    !p.nameservers.is_empty()
        && p.loopback_nameservers().is_empty()
        && !p
            .nameservers
            .iter()
            .any(|n| n.ip.is_some_and(|ip| ctx.cluster.contains(&ip)))
}

fn resolved_uplink_clean(ctx: &Ctx) -> bool {
    let up = &ctx.facts.resolver.systemd_uplink;
    ctx.facts.services.systemd_resolved == UnitState::Active
        && !ctx.facts.services.resolved_gone_at_boot()
        && up
            .parsed
            .as_ref()
            .is_some_and(|p| only_real_servers(ctx, p))
}

fn kubelet_loopback(ctx: &Ctx) -> RuleOutcome {
    let (e, f, p) = match pod_resolv(ctx) {
        PodResolv::Parsed(e, f, p) => (e, f, p),
        PodResolv::NoKubelet => return RuleOutcome::NotApplicable(NO_KUBELET.into()),
        PodResolv::Unknown(why) => return ctx.unknown("DNS-KUBELET-LOOPBACK", why),
        PodResolv::Broken => return RuleOutcome::Pass,
    };
    let lo = p.loopback_nameservers();
    if lo.is_empty() {
        return RuleOutcome::Pass;
    }
    let addrs: Vec<&str> = lo.iter().map(|n| n.address.as_str()).collect();
    let target = if resolved_uplink_clean(ctx) {
        "point resolvConf at /run/systemd/resolve/resolv.conf (systemd-resolved is active and that file lists real upstreams)".to_owned()
    } else {
        "point resolvConf at a file that lists the real upstream servers (set upstream_dns_servers)"
            .to_owned()
    };
    RuleOutcome::Findings(vec![ctx.finding(
        "DNS-KUBELET-LOOPBACK",
        Severity::Critical,
        format!(
            "kubelet hands CoreDNS/nodelocaldns a resolv.conf with loopback nameserver {}: they forward to themselves and crash with a loop",
            addrs.join(", ")
        ),
        vec![format!("{} → {}", resolv_chain(e, f), ns_evidence(f, &lo))],
        format!("{target}; {}; {}, then recreate the CoreDNS and nodelocaldns pods", persist_hint(ctx), restart_hint(ctx)),
    )])
}

/// The host's own resolver: what the host's processes (and Kubespray's next run) use.
fn host_resolver<'a>(ctx: &Ctx<'a>) -> &'a ResolvFile {
    let r = &ctx.facts.resolver;
    if ctx.facts.services.systemd_resolved == UnitState::Active
        && matches!(r.resolved_mode.as_str(), "stub" | "static")
    {
        &r.systemd_uplink
    } else {
        &r.etc_resolv_conf
    }
}

fn only_cluster<'p>(ctx: &Ctx, p: &'p ResolvConf) -> Option<Vec<&'p Nameserver>> {
    let ns: Vec<&Nameserver> = p.nameservers.iter().collect();
    let all_cluster = !ns.is_empty()
        && ns
            .iter()
            .all(|n| n.ip.is_some_and(|ip| ctx.cluster.contains(&ip)));
    all_cluster.then_some(ns)
}

fn cluster_self_forward(ctx: &Ctx) -> RuleOutcome {
    let mut findings = Vec::new();
    let cluster: Vec<String> = ctx.cluster.iter().map(|ip| ip.to_string()).collect();
    let cluster = cluster.join(", ");
    // With upstream_dns_servers set, Kubespray's CoreDNS and nodelocaldns forward there,
    // not to /etc/resolv.conf, so a cluster address in kubelet's file cannot loop.
    let upstreams: Vec<String> = ctx
        .host
        .var_list("upstream_dns_servers")
        .unwrap_or_default()
        .into_iter()
        .filter(|s| !s.contains("{{"))
        .collect();
    let upstream_note = if upstreams.is_empty() {
        "upstream_dns_servers: not set, so CoreDNS/nodelocaldns forward . to this file".to_owned()
    } else {
        format!("upstream_dns_servers: {}", upstreams.join(", "))
    };
    match pod_resolv(ctx) {
        PodResolv::Parsed(e, f, p) => {
            let hits: Vec<&Nameserver> = p
                .nameservers
                .iter()
                .filter(|n| n.ip.is_some_and(|ip| ctx.cluster.contains(&ip)))
                .collect();
            if !hits.is_empty() && upstreams.is_empty() {
                // CoreDNS's forward plugin picks among the servers, so one cluster
                // address among real ones still sends part of the traffic (and the loop
                // probe) back into the cluster (kubespray#9948).
                let listed: Vec<&str> = hits.iter().map(|n| n.address.as_str()).collect();
                findings.push(ctx.finding(
                    "DNS-CLUSTER-SELF-FORWARD",
                    Severity::Critical,
                    format!(
                        "kubelet hands CoreDNS/nodelocaldns a resolv.conf listing the cluster's own DNS ({}): upstream lookups loop back into the cluster",
                        listed.join(", ")
                    ),
                    vec![
                        format!("{} → {}", resolv_chain(e, f), ns_evidence(f, &hits)),
                        format!("cluster DNS addresses: {cluster}"),
                        upstream_note.clone(),
                    ],
                    "set upstream_dns_servers (CoreDNS and nodelocaldns then forward there instead of /etc/resolv.conf) and keep only real servers in the file kubelet hands to pods; recreate the CoreDNS and nodelocaldns pods".into(),
                ));
            } else if let Some(ns) = only_cluster(ctx, p) {
                findings.push(ctx.finding(
                    "DNS-CLUSTER-SELF-FORWARD",
                    Severity::High,
                    "the resolv.conf kubelet hands to dnsPolicy=Default pods lists only the cluster's DNS: no loop (upstream_dns_servers is set), but those pods and the node have no real upstream while cluster DNS is down".into(),
                    vec![format!("{} → {}", resolv_chain(e, f), ns_evidence(f, &ns)), upstream_note.clone()],
                    "list real upstream servers after the cluster IP on the host (Kubespray: nameservers; systemd-resolved: a resolved.conf.d drop-in)".into(),
                ));
            }
        }
        PodResolv::Unknown(why) => return ctx.unknown("DNS-CLUSTER-SELF-FORWARD", why),
        PodResolv::NoKubelet | PodResolv::Broken => {}
    }
    let host = host_resolver(ctx);
    let pod_path = ctx
        .facts
        .kubelet
        .pod_resolv_conf
        .as_ref()
        .and_then(|f| f.canonical.clone().or(Some(f.path.clone())));
    let host_path = host.canonical.clone().unwrap_or(host.path.clone());
    if findings.is_empty()
        && pod_path.as_deref() != Some(host_path.as_str())
        && let Some(p) = &host.parsed
        && let Some(ns) = only_cluster(ctx, p)
    {
        findings.push(ctx.finding(
            "DNS-CLUSTER-SELF-FORWARD",
            Severity::High,
            "the host's own resolver lists only the cluster's DNS: the node cannot resolve anything while cluster DNS is down (and CoreDNS cannot start without the node)".into(),
            vec![ns_evidence(host, &ns), format!("cluster DNS addresses: {cluster}")],
            "add real upstream servers after the cluster IP (Kubespray: nameservers / upstream_dns_servers; systemd-resolved: FallbackDNS in a resolved.conf.d drop-in)".into(),
        ));
    }
    if findings.is_empty() {
        RuleOutcome::Pass
    } else {
        RuleOutcome::Findings(findings)
    }
}

fn resolvconf_missing(ctx: &Ctx) -> RuleOutcome {
    let k = &ctx.facts.kubelet;
    let e = match &k.resolv_conf {
        Observed::Absent => return RuleOutcome::NotApplicable(NO_KUBELET.into()),
        Observed::Unknown(why) => {
            return ctx.unknown("DNS-KUBELET-RESOLVCONF-MISSING", why.clone());
        }
        Observed::Known(e) => e,
    };
    let id = "DNS-KUBELET-RESOLVCONF-MISSING";
    let fix = format!(
        "point resolvConf at a file with real nameservers; {}; {}",
        persist_hint(ctx),
        restart_hint(ctx)
    );
    if e.value.is_empty() {
        return RuleOutcome::Findings(vec![ctx.finding(
            id,
            Severity::Critical,
            "kubelet resolvConf is empty: dnsPolicy=Default pods get nameserver 127.0.0.1".into(),
            vec![format!("{} resolvConf: \"\"", e.source.at())],
            fix,
        )]);
    }
    let Some(f) = &k.pod_resolv_conf else {
        return RuleOutcome::Pass;
    };
    let chain = resolv_chain(e, f);
    match (f.state, &f.parsed) {
        (FileState::Missing, _) => RuleOutcome::Findings(vec![ctx.finding(
            id,
            Severity::Critical,
            format!("kubelet resolvConf {} does not exist: kubelet cannot start pods with dnsPolicy Default", e.value),
            vec![format!("{chain} → no such file")],
            fix,
        )]),
        (FileState::Directory, _) => RuleOutcome::Findings(vec![ctx.finding(
            id,
            Severity::Critical,
            format!("kubelet resolvConf {} is a directory", e.value),
            vec![format!("{chain} → a directory")],
            fix,
        )]),
        (FileState::Unreadable, _) => ctx.unknown(id, format!("{} could not be read", f.path)),
        (FileState::Present, Some(p)) if p.nameservers.is_empty() => RuleOutcome::Findings(vec![ctx.finding(
            id,
            Severity::Critical,
            format!("kubelet resolvConf {} lists no nameserver", e.value),
            vec![format!("{chain} → no nameserver line")],
            fix,
        )]),
        _ => match ctx.facts.kubelet_resolv_left_by_resolved() {
            Some(path) => RuleOutcome::Findings(vec![left_by_resolved(ctx, e, f, path)]),
            None => RuleOutcome::Pass,
        },
    }
}

/// The kubelet's file is systemd-resolved's, in /run, and systemd-resolved will not write
/// it at the next boot ([`crate::facts::node_facts::Services::resolved_gone_at_boot`]):
/// there now, gone after the next reboot.
fn left_by_resolved(ctx: &Ctx, e: &Effective<String>, f: &ResolvFile, path: &str) -> Finding {
    let mut seen = resolv_chain(e, f);
    if path != f.path {
        seen.push_str(&format!(" → {path}"));
    }
    let resolved = resolved_words(ctx);
    let file = if path == e.value {
        e.value.clone()
    } else {
        format!("{} ({path})", e.value)
    };
    let summary = match ctx.facts.services.resolved_starts_at_boot() {
        Some(false) => format!(
            "kubelet resolvConf {file} is systemd-resolved's file in /run, and systemd-resolved does not start at boot: after the next reboot the file is gone and kubelet cannot start any pod"
        ),
        _ => format!(
            "kubelet resolvConf {file} is what systemd-resolved left in /run when it stopped: /run is emptied at boot, so unless systemd-resolved starts then, kubelet cannot start any pod after the next reboot"
        ),
    };
    let enable = enable_resolved(ctx);
    ctx.finding(
        "DNS-KUBELET-RESOLVCONF-MISSING",
        Severity::High,
        summary,
        vec![format!("{seen}: written by systemd-resolved, which is {resolved}")],
        format!(
            "point resolvConf at a file that outlives a reboot and lists real nameservers, or {enable}; {}; {}",
            persist_hint(ctx),
            restart_hint(ctx)
        ),
    )
}

/// systemd-resolved's stub listeners: 127.0.0.53, and 127.0.0.54 (its proxy stub, systemd
/// 251 and later). Nothing else answers there.
const RESOLVED_STUBS: [IpAddr; 2] = [
    IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 53)),
    IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 54)),
];

/// The node's own resolver, /etc/resolv.conf: what the node itself resolves with (the
/// container runtime pulling images, the kubelet reaching an API server by name), not what
/// pods get. Down now where the file is missing, a directory or without a nameserver line
/// (glibc then asks 127.0.0.1, Go 127.0.0.1 and ::1: a DNS server on the node itself), or
/// lists only systemd-resolved's stub while systemd-resolved does not run; down after the
/// next reboot where it links into systemd-resolved's /run directory and systemd-resolved
/// will not write it then.
fn host_resolver_down(ctx: &Ctx) -> RuleOutcome {
    let id = "DNS-HOST-RESOLVER-DOWN";
    if not_a_node(ctx) {
        return RuleOutcome::NotApplicable(NO_KUBELET.into());
    }
    let etc = &ctx.facts.resolver.etc_resolv_conf;
    let mut seen = etc.path.clone();
    if let Some(t) = &etc.symlink_target {
        seen.push_str(&format!(" → symlink to {t}"));
    }
    const FALLBACK: &str = "the node's own lookups (image pulls, the kubelet's API server name) go to a DNS server on the node itself (glibc: 127.0.0.1; Go: 127.0.0.1 and ::1) and fail unless one runs there";
    let (severity, summary, first) = match (etc.state, &etc.parsed) {
        (FileState::Unreadable, _) => {
            return ctx.unknown(id, format!("{} could not be read", etc.path));
        }
        (FileState::Directory, _) => (
            Severity::High,
            format!(
                "{} is a directory, from which no resolver reads a server: the node's own lookups (image pulls, the kubelet's API server name) fail unless a DNS server runs on the node itself",
                etc.path
            ),
            format!("{seen} → a directory"),
        ),
        (FileState::Missing, _) => {
            let what = if etc.symlink_target.is_some() {
                "is a link to nothing"
            } else {
                "does not exist"
            };
            (
                Severity::High,
                format!("{} {what}: {FALLBACK}", etc.path),
                format!("{seen} → no such file"),
            )
        }
        (FileState::Present, Some(p)) if p.nameservers.is_empty() => (
            Severity::High,
            format!("{} lists no nameserver: {FALLBACK}", etc.path),
            format!("{} → no nameserver line", followed(etc, &seen)),
        ),
        (FileState::Present, Some(p)) if stub_only(p) && resolved_stopped(ctx) => {
            let stubs: Vec<&Nameserver> = p.nameservers.iter().collect();
            (
                Severity::High,
                format!(
                    "{} lists only systemd-resolved's stub address, and systemd-resolved, which answers there, does not run: the node's own lookups (image pulls, the kubelet's API server name) fail",
                    etc.path
                ),
                match etc.symlink_target {
                    Some(_) => format!("{seen} → {}", ns_evidence(etc, &stubs)),
                    None => ns_evidence(etc, &stubs),
                },
            )
        }
        (FileState::Present, _)
            if links_into_resolved(etc) && ctx.facts.services.resolved_gone_at_boot() =>
        {
            (
                Severity::Warning,
                format!(
                    "{} links into systemd-resolved's /run directory, and systemd-resolved {}: after the next reboot the link points at nothing and the node's own lookups (image pulls) fail unless a DNS server runs on the node itself",
                    etc.path,
                    if ctx.facts.services.resolved_starts_at_boot() == Some(false) {
                        "does not start at boot"
                    } else {
                        "does not run, so the next boot writes the file only if it starts systemd-resolved"
                    }
                ),
                followed(etc, &seen),
            )
        }
        _ => return RuleOutcome::Pass,
    };
    let mut evidence = vec![first];
    let resolveds = links_into_resolved(etc) || etc.parsed.as_ref().is_some_and(stub_only);
    if resolveds && ctx.facts.services.systemd_resolved != UnitState::Unknown {
        evidence.push(format!("systemd-resolved is {}", resolved_words(ctx)));
    }
    let servers = match real_servers(ctx) {
        Some((source, real)) => {
            evidence.push(format!("{source} names {}", real.join(", ")));
            real
        }
        None => Vec::new(),
    };
    let fix = host_resolver_fix(ctx, &servers);
    RuleOutcome::Findings(vec![ctx.finding(id, severity, summary, evidence, fix)])
}

/// `seen` (the path and its link), then where the link leads, where that is known.
fn followed(f: &ResolvFile, seen: &str) -> String {
    match (&f.symlink_target, &f.canonical) {
        (Some(_), Some(c)) => format!("{seen} → {c}"),
        _ => seen.to_owned(),
    }
}

/// /etc/resolv.conf is a link into systemd-resolved's /run directory (its stub or uplink
/// file), whether or not the file is there now: where the link leads (`readlink -f`), else
/// its target resolved lexically against /etc.
fn links_into_resolved(etc: &ResolvFile) -> bool {
    let Some(target) = &etc.symlink_target else {
        return false;
    };
    let mut parts: Vec<&str> = Vec::new();
    let base = if target.starts_with('/') { "" } else { "/etc" };
    for part in base.split('/').chain(target.split('/')) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    let path = format!("/{}", parts.join("/"));
    in_resolved_run_dir(etc.canonical.as_deref().unwrap_or(&path))
}

/// Every nameserver of `p` is systemd-resolved's stub (and there is one).
fn stub_only(p: &ResolvConf) -> bool {
    !p.nameservers.is_empty()
        && p.nameservers
            .iter()
            .all(|n| n.ip.is_some_and(|ip| RESOLVED_STUBS.contains(&ip)))
}

/// systemd-resolved is known not to run now (inactive or failed).
fn resolved_stopped(ctx: &Ctx) -> bool {
    matches!(
        ctx.facts.services.systemd_resolved,
        UnitState::Inactive | UnitState::Failed
    )
}

/// systemd-resolved's state as systemctl put it: "active (systemctl is-active) and
/// disabled (systemctl is-enabled)", the second half where is-enabled was asked.
fn resolved_words(ctx: &Ctx) -> String {
    let state = ctx.facts.services.systemd_resolved.as_str();
    match ctx.facts.services.systemd_resolved_enabled.as_deref() {
        Some(word) => format!("{state} (systemctl is-active) and {word} (systemctl is-enabled)"),
        None => format!("{state} (systemctl is-active)"),
    }
}

/// The real servers the node is known to use, for a file of its own, and where they come
/// from: the inventory's `upstream_dns_servers`, else its `nameservers`, else
/// systemd-resolved's list of them (its uplink file, while it is in /run), else the
/// kubelet's file for pods. Neither loopback nor the cluster's own DNS; each once.
fn real_servers(ctx: &Ctx) -> Option<(String, Vec<String>)> {
    let real = |listed: Vec<String>| real_upstreams(listed, &ctx.cluster);
    let from_file = |f: Option<&ResolvFile>, whose: &str| -> Option<(String, Vec<String>)> {
        let f = f.filter(|f| f.state == FileState::Present)?;
        let listed = f.parsed.iter().flat_map(|p| &p.nameservers);
        let servers = real(listed.map(|n| n.address.clone()).collect());
        let path = f.canonical.as_deref().unwrap_or(&f.path);
        (!servers.is_empty()).then(|| (format!("{path}, {whose},"), servers))
    };
    ["upstream_dns_servers", "nameservers"]
        .into_iter()
        .find_map(|key| {
            let servers = real(ctx.host.var_list(key).unwrap_or_default());
            (!servers.is_empty()).then(|| (format!("the inventory's {key}"), servers))
        })
        .or_else(|| {
            let uplink = Some(&ctx.facts.resolver.systemd_uplink);
            from_file(uplink, "systemd-resolved's list of the real servers")
        })
        .or_else(|| {
            from_file(
                ctx.facts.kubelet.pod_resolv_conf.as_ref(),
                "the kubelet's file for pods",
            )
        })
}

/// How to give the node a resolver again. Where /etc/resolv.conf is systemd-resolved's (a
/// link into its /run directory, or its stub address): start it where it is enabled and
/// stopped (the next boot starts it anyway); give it servers where it runs and starts at
/// boot but knows none; else a file of the node's own in place of the link or the stub
/// address (where NetworkManager manages /etc/resolv.conf, its own file), or
/// systemd-resolved back. Elsewhere the file from whatever manages it.
fn host_resolver_fix(ctx: &Ctx, servers: &[String]) -> String {
    let etc = &ctx.facts.resolver.etc_resolv_conf;
    let resolveds = links_into_resolved(etc) || etc.parsed.as_ref().is_some_and(stub_only);
    let list = if servers.is_empty() {
        String::new()
    } else {
        format!(" ({})", servers.join(", "))
    };
    if !resolveds {
        return format!(
            "give the node an /etc/resolv.conf that lists the real servers{list}, through whatever manages it (NetworkManager, resolvconf, the DHCP client) or as a file of its own"
        );
    }
    let starts = ctx.facts.services.resolved_starts_at_boot() == Some(true);
    if starts && resolved_stopped(ctx) {
        return "start systemd-resolved (systemctl start systemd-resolved): it is enabled, so the next boot starts it anyway; to run the node without it, disable it and make /etc/resolv.conf a file of its own that lists the real servers".into();
    }
    if starts && ctx.facts.services.systemd_resolved == UnitState::Active {
        return format!(
            "give systemd-resolved the real servers{list}: it runs and starts at boot but knows none (DNS= in a drop-in under /etc/systemd/resolved.conf.d/, or the network's own settings: netplan, NetworkManager, DHCP)"
        );
    }
    let file = format!("make /etc/resolv.conf a file of its own that lists the real servers{list}");
    let Some(target) = &etc.symlink_target else {
        return format!(
            "{file} instead of systemd-resolved's stub address; or {}",
            enable_resolved(ctx)
        );
    };
    // NetworkManager hands DNS to systemd-resolved while the link points at one of its
    // files (NetworkManager.conf(5), dns=default) and leaves a link alone; reloaded with
    // the link gone, it chooses its mode again and puts its own file in place
    // (rc-manager=symlink). Not where dns=none or rc-manager=unmanaged keep it out.
    let nm = if network_manager_manages_resolv(ctx.facts).is_some() {
        " (NetworkManager manages it here: rm /etc/resolv.conf; systemctl reload NetworkManager, and it writes its own)"
    } else {
        ""
    };
    format!(
        "{file} in place of the link to {target}{nm}; or {}",
        enable_resolved(ctx)
    )
}

/// `systemctl enable --now systemd-resolved`, with `unmask` first where it is masked.
fn enable_resolved(ctx: &Ctx) -> &'static str {
    let masked = ctx
        .facts
        .services
        .systemd_resolved_enabled
        .as_deref()
        .is_some_and(|w| w.starts_with("masked"));
    if masked {
        "unmask and enable systemd-resolved (systemctl unmask systemd-resolved; systemctl enable --now systemd-resolved)"
    } else {
        "enable systemd-resolved (systemctl enable --now systemd-resolved)"
    }
}

fn dual_stack(ctx: &Ctx) -> bool {
    ["enable_dual_stack_networks", "ipv6_stack"]
        .iter()
        .any(|k| ctx.host.var_bool(k) == Some(true))
}

fn sysctl_live<'f>(ctx: &Ctx<'f>, key: &str) -> &'f Observed<String> {
    static UNKNOWN: std::sync::OnceLock<Observed<String>> = std::sync::OnceLock::new();
    ctx.facts
        .sysctls
        .get(key)
        .map(|s| &s.live)
        .unwrap_or_else(|| UNKNOWN.get_or_init(|| Observed::Unknown("not gathered".into())))
}

fn bridge_keys(ctx: &Ctx) -> Vec<&'static str> {
    let mut keys = vec!["net.bridge.bridge-nf-call-iptables"];
    if dual_stack(ctx) {
        keys.push("net.bridge.bridge-nf-call-ip6tables");
    }
    keys
}

/// Bridge netfilter and forwarding are Kubernetes node requirements: on a machine with no
/// kubelet at all they are nobody's business.
fn not_a_node(ctx: &Ctx) -> bool {
    matches!(ctx.facts.kubelet.resolv_conf, Observed::Absent)
        && ctx.facts.flavour.kind == FlavourKind::Unknown
        && ctx.facts.kubelet.pid.is_none()
}

fn bridge_nf_off(ctx: &Ctx) -> RuleOutcome {
    let id = "DNS-BRIDGE-NF-OFF";
    if not_a_node(ctx) {
        return RuleOutcome::NotApplicable(NO_KUBELET.into());
    }
    let b = &ctx.facts.br_netfilter;
    let mut evidence = Vec::new();
    match &b.loaded {
        Observed::Known(false) => {
            evidence.push(format!("br_netfilter is not loaded ({})", b.evidence))
        }
        Observed::Unknown(why) => return ctx.unknown(id, why.clone()),
        _ => {}
    }
    for key in bridge_keys(ctx) {
        match sysctl_live(ctx, key) {
            Observed::Known(v) if v == "1" => {}
            Observed::Known(v) => {
                evidence.push(format!("{}: {v}", crate::facts::raw::sysctl_path(key)));
                // Where the installer set it at its start, this is what turned it off.
                if let Some(who) = installer_setting(ctx, key) {
                    evidence.extend(undone_by_file(ctx, key, who));
                }
            }
            Observed::Absent => {
                if evidence.is_empty() {
                    evidence.push(format!("{key} does not exist (br_netfilter not loaded)"));
                }
            }
            Observed::Unknown(why) => return ctx.unknown(id, why.clone()),
        }
    }
    if evidence.is_empty() {
        return RuleOutcome::Pass;
    }
    // After a reboot, with the installer not started yet (or failing), nothing has turned
    // it on: the installer does, at its next start, before its kubelet. (MicroK8s's
    // wrapper never sets bridge-nf-call-ip6tables, which dual-stack needs.) Where no pod
    // traffic is bridged, that does not matter either way (below).
    if let Some((who, unit)) = stopped_installer(ctx)
        && left_to_installer(ctx).0
    {
        evidence.push(format!(
            "{who} runs no kubelet now ({unit}: {})",
            ctx.facts.services.kubelet_unit_state.as_str()
        ));
        return RuleOutcome::Findings(vec![ctx.finding(
            id,
            Severity::Warning,
            format!("bridge netfilter is off while {who} runs no kubelet: {who} loads br_netfilter and turns it on when it starts, before its kubelet; pods a stopped {who} left running have no working cluster DNS until then"),
            evidence,
            format!("start {who} ({unit}; if it keeps failing, journalctl -u {unit} says why), which sets it"),
        )]);
    }
    if b.loaded == Observed::Known(false) && b.persisted.is_none() {
        evidence.push("nothing loads br_netfilter at boot either (no /etc/modules-load.d/*.conf or /etc/modules lists it)".into());
    }
    // It matters only where pod traffic crosses a Linux bridge.
    match &ctx.facts.cni.pod_bridge {
        PodBridge::Routed(why) => {
            evidence.push(why.clone());
            RuleOutcome::Findings(vec![ctx.finding(
                id,
                Severity::Info,
                "bridge netfilter is off, which does not matter here: the CNI wires pods without a Linux bridge, so no pod traffic is bridged".into(),
                evidence,
                "nothing to do for this CNI; if pods will ever sit on a Linux bridge (bridge, flannel, Weave), modprobe br_netfilter and set net.bridge.bridge-nf-call-iptables=1".into(),
            )])
        }
        other => {
            evidence.push(match other {
                PodBridge::Bridged(why) => why.clone(),
                PodBridge::Unknown(why) => format!("{why}: treated as bridged"),
                PodBridge::Routed(_) => String::new(),
            });
            RuleOutcome::Findings(vec![ctx.finding(
                id,
                Severity::Critical,
                "bridged pod traffic bypasses iptables: DNS replies come from the pod IP, not the service IP (\"reply from unexpected source\")".into(),
                evidence,
                "modprobe br_netfilter and set net.bridge.bridge-nf-call-iptables=1 (and ip6tables on dual-stack), then persist both".into(),
            )])
        }
    }
}

fn bridge_nf_not_persistent(ctx: &Ctx) -> RuleOutcome {
    let id = "DNS-BRIDGE-NF-NOT-PERSISTENT";
    if not_a_node(ctx) {
        return RuleOutcome::NotApplicable(NO_KUBELET.into());
    }
    if let PodBridge::Routed(why) = &ctx.facts.cni.pod_bridge {
        return RuleOutcome::NotApplicable(format!("no pod traffic is bridged ({why})"));
    }
    // "Reverts at the next reboot" is only true of what is on now; what is off is
    // DNS-BRIDGE-NF-OFF's business (its fix persists too).
    let b = &ctx.facts.br_netfilter;
    let mut evidence = Vec::new();
    // k3s, RKE2, k0s and MicroK8s load br_netfilter themselves at every start.
    let installer_loads = installer_loads_br_netfilter(ctx);
    if b.loaded == Observed::Known(true) && b.persisted.is_none() && !b.built_in && !installer_loads
    {
        let unread = crate::facts::sysctl::booted_by_systemd(&ctx.facts.raw)
            && ctx
                .facts
                .files
                .get("/etc/modules")
                .and_then(|f| f.text())
                .is_some_and(|t| {
                    crate::facts::modules_load::ModulesLoad::parse(&t)
                        .modules
                        .iter()
                        .any(|m| {
                            crate::facts::modules_load::normalize_module(&m.value) == "br_netfilter"
                        })
                });
        evidence.push(if unread {
            "br_netfilter is loaded, but only /etc/modules lists it, which systemd-modules-load does not read at boot: no modules-load.d file links to it".to_owned()
        } else {
            "br_netfilter is loaded but in no /etc/modules-load.d/*.conf (nor /etc/modules): not loaded at boot".to_owned()
        });
    }
    // What an installer sets at every start survives a reboot; a sysctl file that sets it
    // to 0 is what undoes it, under the running installer.
    let mut undone = Vec::new();
    for key in bridge_keys(ctx) {
        let Some(s) = ctx.facts.sysctls.get(key) else {
            continue;
        };
        if s.live != Observed::Known("1".to_owned()) {
            continue;
        }
        if let Some(who) = installer_setting(ctx, key) {
            undone.extend(undone_by_file(ctx, key, who));
            continue;
        }
        match &s.persisted {
            Some(p) if p.value == "1" => {}
            Some(p) => evidence.push(format!(
                "{key} is 1 now; {}:{} sets it to {} at boot",
                p.path, p.line, p.value
            )),
            None if sysctl_conf_unread(ctx, key) => {
                evidence.push(format!("{key} is 1 now; {SYSCTL_CONF_UNREAD}"))
            }
            None => evidence.push(format!(
                "{key} is 1 now; no sysctl.d file or /etc/sysctl.conf sets it{}",
                moved_aside(ctx, key)
            )),
        }
    }
    if !evidence.is_empty() {
        evidence.extend(undone);
        return RuleOutcome::Findings(vec![ctx.finding(
            id,
            Severity::High,
            "bridge netfilter is on now but not persisted: it reverts at the next reboot".into(),
            evidence,
            "persist what the evidence names: br_netfilter in /etc/modules-load.d/, each key as 1 in a sysctl.d file that wins".into(),
        )]);
    }
    let Some(who) = installer_name(ctx.facts.flavour.kind).filter(|_| !undone.is_empty()) else {
        return RuleOutcome::Pass;
    };
    RuleOutcome::Findings(vec![ctx.finding(
        id,
        Severity::Warning,
        format!("a sysctl file turns bridge netfilter off, which {who} turns on when it starts: the next `sysctl --system` while {who} runs breaks DNS for bridged pods until {who} restarts"),
        undone,
        "set each key the evidence names to 1 in a sysctl.d file applied after that one, or change that line (for /etc/sysctl.conf, which `sysctl --system` applies last, change the line)".into(),
    )])
}

const SYSCTL_CONF_UNREAD: &str = "only /etc/sysctl.conf sets it, and systemd-sysctl does not read that file at boot: no sysctl.d file links to it";

/// Where `key` went: the /etc/sysctl.conf an upgrade to Debian 13 moved aside (procps
/// 2:4.0.4-9 removes /etc/sysctl.conf, keeping a changed one as .dpkg-bak) set it.
fn moved_aside(ctx: &Ctx, key: &str) -> &'static str {
    if file_sets(ctx, "/etc/sysctl.conf.dpkg-bak", key) {
        " (/etc/sysctl.conf.dpkg-bak sets it: an upgrade to Debian 13 moved the changed /etc/sysctl.conf aside, and the boot no longer reads it)"
    } else {
        ""
    }
}

/// Whether /etc/sysctl.conf sets `key` on a node systemd boots, where nothing persists it:
/// then systemd-sysctl never read the file (no link to it in a sysctl.d directory).
fn sysctl_conf_unread(ctx: &Ctx, key: &str) -> bool {
    crate::facts::sysctl::booted_by_systemd(&ctx.facts.raw)
        && file_sets(ctx, crate::facts::sysctl::SYSCTL_CONF, key)
}

/// Whether the gathered sysctl file at `path` assigns `key`.
fn file_sets(ctx: &Ctx, path: &str, key: &str) -> bool {
    ctx.facts
        .files
        .get(path)
        .and_then(|f| f.text())
        .is_some_and(|t| {
            crate::facts::sysctl::SysctlFile::parse(&t)
                .get(key)
                .is_some()
        })
}

/// The installer that runs the kubelet itself and sets `key` to 1 at every start, before
/// its kubelet: k3s, RKE2 and k0s (the bridge keys and forwarding; see
/// [`installer_sets_at_start`]), MicroK8s (bridge-nf-call-iptables, and forwarding with
/// its CNI manifest: [`microk8s_forwards`]).
fn installer_setting(ctx: &Ctx, key: &str) -> Option<&'static str> {
    let sets = match ctx.facts.flavour.kind {
        FlavourKind::MicroK8s => {
            key == "net.bridge.bridge-nf-call-iptables"
                || (key == "net.ipv4.ip_forward" && microk8s_forwards(ctx))
        }
        // Only `if enableIPv6` (k3s pkg/agent/syssetup).
        FlavourKind::K3s | FlavourKind::Rke2 if key == "net.bridge.bridge-nf-call-ip6tables" => {
            dual_stack(ctx)
        }
        _ => installer_sets_at_start(ctx).is_some(),
    };
    installer_name(ctx.facts.flavour.kind).filter(|_| sets)
}

/// Whether the node's installer loads br_netfilter itself at every start: k3s, RKE2 and
/// MicroK8s do; k0s does from 1.29.14, 1.30.10, 1.31.6 and 1.32.2 on. Before, its
/// `modprobe` built the command and never ran it (k0sproject/k0s#5579, fixed in 76ac8124).
/// A k0s whose version is not known counts as loading it.
fn installer_loads_br_netfilter(ctx: &Ctx) -> bool {
    if ctx.facts.flavour.kind != FlavourKind::K0s {
        return installer_name(ctx.facts.flavour.kind).is_some();
    }
    let version = kubelet_version(ctx).and_then(|(v, _)| minor_patch(&v));
    !version.is_some_and(|(minor, patch)| match minor {
        ..=28 => true,
        29 => patch < 14,
        30 => patch < 10,
        31 => patch < 6,
        32 => patch < 2,
        _ => false,
    })
}

/// The minor and patch of a Kubernetes 1.x version ("v1.31.5+k0s" → (31, 5)).
fn minor_patch(version: &str) -> Option<(u32, u32)> {
    let patch = version.trim_start_matches('v').split('.').nth(2)?;
    let digits: String = patch.chars().take_while(char::is_ascii_digit).collect();
    Some((minor(version)?, digits.parse().ok()?))
}

/// k3s, RKE2, k0s and MicroK8s, which run the kubelet themselves, by name.
fn installer_name(kind: FlavourKind) -> Option<&'static str> {
    match kind {
        FlavourKind::K3s => Some("k3s"),
        FlavourKind::Rke2 => Some("RKE2"),
        FlavourKind::K0s => Some("k0s"),
        FlavourKind::MicroK8s => Some("MicroK8s"),
        _ => None,
    }
}

/// The sysctl file that sets `key` to something other than 1 where `who` sets it to 1 at
/// every start. The boot applies the file before the installer starts, so nothing shows;
/// any later `sysctl --system` or run of systemd-sysctl (by hand, from a package's install
/// script, or from the udev rule sysctl.d(5) suggests for net.bridge when br_netfilter
/// loads) applies it again under the running installer, and it stays so until the
/// installer restarts (k3s-io/k3s#7671).
fn undone_by_file(ctx: &Ctx, key: &str, who: &str) -> Option<String> {
    use crate::facts::sysctl::{SYSCTL_CONF, SYSCTL_DIRS, normalize_value, persisted_files};
    // What systemd-sysctl applies (the boot's value, in the facts), then what procps
    // `sysctl --system` applies: the same files, and /etc/sysctl.conf last where no link
    // to it is among them (a node systemd boots does not read it then, procps does).
    let boot = ctx.facts.sysctls.get(key)?.persisted.as_ref();
    let files = ctx.facts.raw.config_files(&SYSCTL_DIRS, SYSCTL_CONF);
    let procps = persisted_files(&files, false).remove(key);
    let (value, path, line) = match (boot, procps) {
        (Some(p), _) if normalize_value(&p.value) != "1" => {
            (p.value.clone(), p.path.clone(), p.line)
        }
        (_, Some(p)) if normalize_value(&p.value) != "1" => (p.value, p.path, p.line),
        _ => return None,
    };
    Some(format!(
        "{path}:{line} sets {key} = {value}, which a later `sysctl --system` applies over the 1 {who} sets when it starts"
    ))
}

/// What the node's installer does at every start, before any pod runs, that makes boot
/// persistence of br_netfilter, the bridge sysctls and forwarding its business, not the
/// host's: k3s and RKE2 (k3s pkg/agent/syssetup), and k0s (pkg/component/worker/
/// kernelsetup_linux.go: modprobe br_netfilter where the bridge sysctls are missing, then
/// bridge-nf-call-iptables, bridge-nf-call-ip6tables and IPv4/IPv6 forwarding set to 1).
fn installer_sets_at_start(ctx: &Ctx) -> Option<&'static str> {
    match ctx.facts.flavour.kind {
        FlavourKind::K3s | FlavourKind::Rke2 => Some(
            "k3s/RKE2 load br_netfilter and set the bridge and forwarding sysctls themselves at every start",
        ),
        FlavourKind::K0s => Some(
            "k0s loads br_netfilter and sets the bridge and forwarding sysctls itself at every worker start",
        ),
        _ => None,
    }
}

/// The installer that runs the kubelet itself, and its unit, when neither runs now
/// (stopped, failing after a reboot, waiting to be restarted): k3s and RKE2, k0s,
/// MicroK8s. It sets what [`installer_sets_at_start`] and [`microk8s_forwards`] say at its
/// next start, before its kubelet. An active unit runs: RKE2 and k0s restart a crashed
/// kubelet themselves without setting anything again, so something off there stays off.
fn stopped_installer<'f>(ctx: &Ctx<'f>) -> Option<(&'static str, &'f str)> {
    // k3s runs the kubelet inside its own process.
    if ctx.facts.kubelet.pid.is_some() || ctx.facts.raw.pids.contains_key("k3s") {
        return None;
    }
    let kind = ctx.facts.flavour.kind;
    let started = match kind {
        // k0s's unit (no Type=, so simple) reads active while k0s still waits for its
        // worker profile, before its kernel setup. It writes the kubelet's config under
        // /run, which a reboot empties, after that setup (pkg/component/worker/kubelet.go):
        // there, it got that far this boot. (Before 1.32.1 the config sat in the data
        // directory, and a k0s that old counts as stopped until its kubelet runs.)
        FlavourKind::K0s => ctx
            .facts
            .files
            .get(crate::facts::k0s::RUN_CONFIG)
            .is_some_and(|f| f.state == FileState::Present),
        _ => ctx.facts.services.kubelet_unit_state == UnitState::Active,
    };
    if started {
        return None;
    }
    installer_name(kind).map(|who| (who, ctx.facts.services.kubelet_unit.as_str()))
}

/// What a stopped installer sets when it starts, before its kubelet, so that the
/// bridge-netfilter playbook leaves it alone: bridge netfilter (not where MicroK8s, which
/// never sets bridge-nf-call-ip6tables, runs dual-stack, nor where no pod traffic is
/// bridged, which is an info of its own), and forwarding. The rules decide by it too.
pub(crate) fn left_to_installer(ctx: &Ctx) -> (bool, bool) {
    // A k0s that never loads br_netfilter sets nothing where it is not loaded.
    let module =
        installer_loads_br_netfilter(ctx) || ctx.facts.br_netfilter.loaded == Observed::Known(true);
    let bridge = stopped_installer(ctx).is_some()
        && module
        && !(ctx.facts.flavour.kind == FlavourKind::MicroK8s && dual_stack(ctx))
        && !matches!(ctx.facts.cni.pod_bridge, PodBridge::Routed(_));
    (bridge, restores_forwarding(ctx).is_some())
}

/// What the bridge-netfilter playbook leaves alone where k3s, RKE2, k0s or MicroK8s runs
/// the kubelet: loading and persisting br_netfilter, which it loads at every start (when
/// it is loaded now), and each key it sets at start itself, unless the key is off now or a
/// sysctl file undoes it; and bridge-nf-call-ip6tables, which only dual-stack needs, where
/// it does not set it. Elsewhere nothing. `(br_netfilter left to it, [iptables, ip6tables,
/// forwarding] wanted)`.
pub(crate) fn installer_bridge(ctx: &Ctx) -> (bool, [bool; 3]) {
    let installer = installer_name(ctx.facts.flavour.kind).is_some();
    let loaded =
        installer_loads_br_netfilter(ctx) && ctx.facts.br_netfilter.loaded == Observed::Known(true);
    let wanted = |key: &str| match installer_setting(ctx, key) {
        Some(who) => {
            sysctl_live(ctx, key) != &Observed::Known("1".to_owned())
                || undone_by_file(ctx, key, who).is_some()
        }
        None => !installer || key != "net.bridge.bridge-nf-call-ip6tables" || dual_stack(ctx),
    };
    (
        loaded,
        [
            "net.bridge.bridge-nf-call-iptables",
            "net.bridge.bridge-nf-call-ip6tables",
            "net.ipv4.ip_forward",
        ]
        .map(wanted),
    )
}

/// [`stopped_installer`], where its next start turns IPv4 forwarding on.
fn restores_forwarding<'f>(ctx: &Ctx<'f>) -> Option<(&'static str, &'f str)> {
    stopped_installer(ctx).filter(|_| installer_setting(ctx, "net.ipv4.ip_forward").is_some())
}

/// MicroK8s's kubelite wrapper (run-kubelite-with-args) sets IPv4 and IPv6 forwarding to 1
/// at every start when its CNI manifest is there. (It also loads br_netfilter and sets
/// bridge-nf-call-iptables, never bridge-nf-call-ip6tables: see bridge_nf_not_persistent.)
fn microk8s_forwards(ctx: &Ctx) -> bool {
    if ctx.facts.flavour.kind != FlavourKind::MicroK8s {
        return false;
    }
    // The manifest beside the arguments kubelite reads; the gather asks about the one of
    // the snap's current revision, which is the same but in the middle of a refresh.
    let beside = ctx.facts.kubelet.args_file.as_deref().and_then(|f| {
        f.strip_suffix("/kubelet")
            .map(|args| format!("{args}/cni-network/cni.yaml"))
    });
    let current = crate::facts::microk8s::current_revision(&ctx.facts.raw)
        .map(|dir| format!("{dir}/args/cni-network/cni.yaml"));
    [beside, current]
        .into_iter()
        .flatten()
        .find_map(|path| ctx.facts.files.get(&path))
        .is_some_and(|f| f.state == crate::facts::raw::FileState::Present)
}

fn ip_forward(ctx: &Ctx) -> RuleOutcome {
    let id = "DNS-IP-FORWARD";
    if not_a_node(ctx) {
        return RuleOutcome::NotApplicable(NO_KUBELET.into());
    }
    let key = "net.ipv4.ip_forward";
    let Some(s) = ctx.facts.sysctls.get(key) else {
        return ctx.unknown(id, format!("{key} was not gathered"));
    };
    // Where the installer sets it at every start, only a file that sets 0 matters.
    let installer = installer_setting(ctx, key);
    let persisted = match &s.persisted {
        _ if let Some(who) = installer => undone_by_file(ctx, key, who),
        Some(p) if p.value == "1" => None,
        Some(p) => Some(format!("{}:{} sets {key} = {}", p.path, p.line, p.value)),
        None if sysctl_conf_unread(ctx, key) => Some(format!("{key}: {SYSCTL_CONF_UNREAD}")),
        None => Some(format!(
            "{key} is set by no sysctl.d file or /etc/sysctl.conf{}",
            moved_aside(ctx, key)
        )),
    };
    // Off after a reboot, with the installer not started yet: it turns it on itself.
    if let (Observed::Known(v), Some((who, unit))) = (&s.live, restores_forwarding(ctx))
        && v != "1"
    {
        return RuleOutcome::Findings(vec![ctx.finding(
            id,
            Severity::Warning,
            format!("IPv4 forwarding is off while {who} runs no kubelet: {who} turns it on when it starts, before its kubelet; pods a stopped {who} left running are cut off until then"),
            vec![
                format!("/proc/sys/net/ipv4/ip_forward: {v}"),
                format!("{who} runs no kubelet now ({unit}: {})", ctx.facts.services.kubelet_unit_state.as_str()),
            ],
            format!("start {who} ({unit}; if it keeps failing, journalctl -u {unit} says why), which sets it"),
        )]);
    }
    match &s.live {
        Observed::Known(v) if v == "1" => match (persisted, installer) {
            (None, _) => RuleOutcome::Pass,
            (Some(ev), Some(who)) => RuleOutcome::Findings(vec![ctx.finding(
                id,
                Severity::Warning,
                format!("a sysctl file turns IPv4 forwarding off, which {who} turns on when it starts: the next `sysctl --system` while {who} runs cuts pods off until {who} restarts"),
                vec![ev],
                "set net.ipv4.ip_forward=1 in a sysctl.d file applied after that one, or change that line (for /etc/sysctl.conf, which `sysctl --system` applies last, change the line)".into(),
            )]),
            (Some(ev), None) => RuleOutcome::Findings(vec![ctx.finding(
                id,
                Severity::High,
                "IPv4 forwarding is on but not persisted: it reverts at the next reboot".into(),
                vec![ev],
                "persist net.ipv4.ip_forward=1 in a sysctl.d file".into(),
            )]),
        },
        Observed::Known(v) => RuleOutcome::Findings(vec![
            ctx.finding(
                id,
                Severity::Critical,
                "IPv4 forwarding is off: pod traffic (DNS included) is not routed".into(),
                [
                    Some(format!("/proc/sys/net/ipv4/ip_forward: {v}")),
                    persisted,
                ]
                .into_iter()
                .flatten()
                .collect(),
                "set net.ipv4.ip_forward=1 now and persist it in a sysctl.d file".into(),
            ),
        ]),
        Observed::Absent => ctx.unknown(id, "/proc/sys/net/ipv4/ip_forward does not exist".into()),
        Observed::Unknown(why) => ctx.unknown(id, why.clone()),
    }
}

fn nameserver_limit(ctx: &Ctx) -> RuleOutcome {
    let (e, f, p) = match pod_resolv(ctx) {
        PodResolv::Parsed(e, f, p) => (e, f, p),
        PodResolv::NoKubelet => return RuleOutcome::NotApplicable(NO_KUBELET.into()),
        PodResolv::Unknown(why) => return ctx.unknown("DNS-NAMESERVER-LIMIT", why),
        PodResolv::Broken => return RuleOutcome::Pass,
    };
    if p.nameservers.len() <= 3 {
        return RuleOutcome::Pass;
    }
    let all: Vec<&Nameserver> = p.nameservers.iter().collect();
    let dropped: Vec<&str> = p.nameservers[3..]
        .iter()
        .map(|n| n.address.as_str())
        .collect();
    RuleOutcome::Findings(vec![ctx.finding(
        "DNS-NAMESERVER-LIMIT",
        Severity::Warning,
        format!("{} nameservers where kubelet keeps 3: {} are silently dropped for pods", p.nameservers.len(), dropped.join(", ")),
        vec![format!("{} → {}", resolv_chain(e, f), ns_evidence(f, &all))],
        "list at most 3 nameservers in the file kubelet hands to pods (or give kubelet a dedicated resolv.conf)".into(),
    )])
}

/// The kubelet's version, with where it came from: what `kubelet --version` said on the
/// node (`dnsfix facts` and apply ask it; plan and check where the cluster gave none and it
/// matters: [`kubelet_version_wanted`]), else the version the running kubelet reports to
/// the cluster, else the inventory's `kube_version`. The first that names a Kubernetes 1.x
/// minor wins.
pub fn kubelet_version(ctx: &Ctx) -> Option<(String, String)> {
    let cluster = ctx.kubelet_version.as_ref().map(|(v, node)| {
        (
            v.as_str(),
            format!("node {node}'s status.nodeInfo.kubeletVersion"),
        )
    });
    [
        ctx.facts
            .kubelet
            .version
            .as_deref()
            .map(|v| (v, "kubelet --version".to_owned())),
        cluster,
        ctx.host
            .var_str("kube_version")
            .map(|v| (v, "inventory kube_version".to_owned())),
    ]
    .into_iter()
    .flatten()
    .find(|(v, _)| minor(v).is_some())
    .map(|(v, from)| (v.to_owned(), from))
}

/// The minor of a Kubernetes 1.x version ("v1.28.3" → 28).
fn minor(version: &str) -> Option<u32> {
    let v = version.trim_start_matches('v');
    let mut parts = v.split('.');
    (parts.next()? == "1").then_some(())?;
    parts.next()?.parse().ok()
}

/// The kubelet's Kubernetes minor version ([`kubelet_version`]), with where it came from
/// and what it said (`kubelet --version: v1.29.3`).
fn kube_minor(ctx: &Ctx) -> Option<(u32, String)> {
    let (v, from) = kubelet_version(ctx)?;
    Some((minor(&v)?, format!("{from}: {v}")))
}

/// The search list a ClusterFirst pod gets, as kubelet builds it (pkg/kubelet/network/dns
/// `generateSearchesForDNSClusterFirst`): `<ns>.svc.<domain> svc.<domain> <domain>`, then the
/// host's search domains, duplicates removed (`omitDuplicates`, first occurrence kept). The
/// namespace is one the host list does not name, the longest list any pod gets.
fn pod_search<'a>(domain: &str, host: &[&'a str]) -> Vec<std::borrow::Cow<'a, str>> {
    use std::borrow::Cow;
    let mut out: Vec<Cow<'a, str>> = vec![
        Cow::Owned(format!("<ns>.svc.{domain}")),
        Cow::Owned(format!("svc.{domain}")),
        Cow::Owned(domain.to_owned()),
    ];
    for d in host {
        if !out.iter().any(|o| o.as_ref() == *d) {
            out.push(Cow::Borrowed(*d));
        }
    }
    out
}

/// Whether the kubelet's version, unknown for this host (the node was not asked, the
/// cluster has none for it), would change what a rule says about it: then it is worth
/// asking the node's kubelet binary after all.
pub fn kubelet_version_wanted(
    host: &Host,
    facts: &NodeFacts,
    cluster: &crate::cluster::Cluster,
) -> bool {
    let mut ctx = Ctx::in_cluster(host, facts, Some(cluster));
    if facts.kubelet.version.is_some() || ctx.kubelet_version.is_some() {
        return false;
    }
    let mut with = |version: &str| {
        ctx.kubelet_version = Some((version.to_owned(), host.name.clone()));
        search_limit(&ctx)
    };
    with("v1.25.0") != with("v1.26.0")
}

fn search_limit(ctx: &Ctx) -> RuleOutcome {
    let (e, f, p) = match pod_resolv(ctx) {
        PodResolv::Parsed(e, f, p) => (e, f, p),
        PodResolv::NoKubelet => return RuleOutcome::NotApplicable(NO_KUBELET.into()),
        PodResolv::Unknown(why) => return ctx.unknown("DNS-SEARCH-LIMIT", why),
        PodResolv::Broken => return RuleOutcome::Pass,
    };
    let host = p.kubelet_search();
    let problems = search_limit_problems(ctx, &host);
    if problems.problems.is_empty() {
        return RuleOutcome::Pass;
    }
    let line = p.search_line.map(|l| format!(":{l}")).unwrap_or_default();
    RuleOutcome::Findings(vec![ctx.finding(
        "DNS-SEARCH-LIMIT",
        Severity::Warning,
        format!(
            "pods' search list over kubelet's limits ({}): {}",
            problems.label,
            problems.problems.join("; ")
        ),
        vec![
            resolv_chain(e, f),
            format!(
                "{}{line}: search {}",
                f.canonical.as_deref().unwrap_or(&f.path),
                host.join(" ")
            ),
            format!("a pod gets: search {}", problems.composed.join(" ")),
        ],
        "remove search domains from the host (DHCP/netplan/NetworkManager) or give kubelet a dedicated resolv.conf".into(),
    )])
}

struct SearchLimits {
    label: String,
    composed: Vec<String>,
    problems: Vec<String>,
}

/// What kubelet would cut from the search list of a pod on this host.
fn search_limit_problems(ctx: &Ctx, host: &[&str]) -> SearchLimits {
    // ExpandedDNSConfig: beta and on by default from 1.26, GA in 1.28 (kube_features.go).
    let version = kube_minor(ctx);
    let expanded = version.as_ref().is_some_and(|(m, _)| *m >= 26);
    let (max_domains, max_chars) = if expanded { (32, 2048) } else { (6, 256) };
    let label = match &version {
        Some((_, from)) if expanded => format!("32 domains / 2048 chars, expanded since 1.26; {from}"),
        Some((_, from)) => format!("6 domains / 256 chars before 1.26; {from}"),
        None => "6 domains / 256 chars, the limits before 1.26: the kubelet's version is unknown (set kube_version)".to_owned(),
    };
    let domain = dns_domain(ctx);
    let composed: Vec<String> = pod_search(&domain, host)
        .into_iter()
        .map(|c| c.into_owned())
        .collect();
    let mut problems = Vec::new();
    if composed.len() > max_domains {
        problems.push(format!(
            "{} domains after the cluster's own and duplicates removed, at most {max_domains} are kept, so these are dropped: {}",
            composed.len(),
            composed[max_domains..].join(", ")
        ));
    }
    // "<ns>" stands for a namespace name; count it as "default".
    let joined = composed.join(" ").len() - "<ns>".len() + "default".len();
    if joined > max_chars {
        problems.push(format!(
            "the search line is {joined} chars, over {max_chars}"
        ));
    }
    for d in host.iter().filter(|d| d.len() > 253) {
        problems.push(format!(
            "domain {}... is over 253 chars and is dropped",
            &d[..40.min(d.len())]
        ));
    }
    SearchLimits {
        label,
        composed,
        problems,
    }
}

fn dns_domain(ctx: &Ctx) -> String {
    match &ctx.facts.kubelet.cluster_domain {
        Observed::Known(e) => e.value.trim_end_matches('.').to_owned(),
        _ => ctx
            .host
            .var_str("dns_domain")
            .filter(|d| !d.contains("{{"))
            .unwrap_or("cluster.local")
            .to_owned(),
    }
}

/// Search domains that come from somewhere nobody means for pods: DHCP on OpenStack
/// (kubespray#1951), home routers and distribution defaults. `Some((why, true))` for those;
/// a cloud DHCP suffix (AWS `ec2.internal` / `<region>.compute.internal`, GCE
/// `c.<project>.internal` / `google.internal`, Azure `reddog.microsoft.com` /
/// `<id>.internal.cloudapp.net`) is `Some((why, false))`: every node of a region or project
/// has the same one, so it is a warning only where it differs node to node (the fleet
/// check).
pub(crate) fn known_stray(domain: &str) -> Option<(&'static str, bool)> {
    let d = domain.trim_end_matches('.').to_ascii_lowercase();
    match d.as_str() {
        "openstacklocal" => Some(("OpenStack's DHCP default", true)),
        "localdomain" | "local" | "localnet" | "domain" => {
            Some(("a distribution or DHCP default", true))
        }
        "lan" | "home" | "home.arpa" | "fritz.box" => Some(("a home router's domain", true)),
        "ec2.internal" => Some(("AWS DHCP (us-east-1)", false)),
        "google.internal" => Some(("GCE DHCP", false)),
        "reddog.microsoft.com" => Some(("Azure DHCP", false)),
        _ if d.ends_with(".compute.internal") => Some(("AWS DHCP (a region's suffix)", false)),
        _ if d.starts_with("c.") && d.ends_with(".internal") => {
            Some(("GCE DHCP (a project's suffix)", false))
        }
        _ if d.ends_with(".internal.cloudapp.net") => {
            Some(("Azure DHCP (a deployment's suffix)", false))
        }
        _ => None,
    }
}

fn stray_search(ctx: &Ctx) -> RuleOutcome {
    let (e, f, p) = match pod_resolv(ctx) {
        PodResolv::Parsed(e, f, p) => (e, f, p),
        PodResolv::NoKubelet => return RuleOutcome::NotApplicable(NO_KUBELET.into()),
        PodResolv::Unknown(why) => return ctx.unknown("DNS-STRAY-SEARCH", why),
        PodResolv::Broken => return RuleOutcome::Pass,
    };
    let domain = dns_domain(ctx);
    let allowed: BTreeSet<String> = ctx
        .host
        .var_list("searchdomains")
        .unwrap_or_default()
        .into_iter()
        .map(|d| d.trim_end_matches('.').to_lowercase())
        .collect();
    let host = p.kubelet_search();
    let stray: Vec<&str> = host
        .iter()
        .copied()
        .filter(|d| {
            let d = d.trim_end_matches('.').to_lowercase();
            !(d == domain || d.ends_with(&format!(".{domain}")) || allowed.contains(&d))
        })
        .collect();
    if stray.is_empty() {
        return RuleOutcome::Pass;
    }
    let line = p.search_line.map(|l| format!(":{l}")).unwrap_or_default();
    let known: Vec<(String, bool)> = stray
        .iter()
        .filter_map(|d| known_stray(d).map(|(why, warn)| (format!("{d}: {why}"), warn)))
        .collect();
    let over = !search_limit_problems(ctx, &host).problems.is_empty();
    let mut evidence = vec![
        resolv_chain(e, f),
        format!(
            "{}{line}: search {}",
            f.canonical.as_deref().unwrap_or(&f.path),
            p.search.join(" ")
        ),
        format!(
            "declared: {domain} and its subdomains{}",
            if allowed.is_empty() {
                ", no searchdomains in the inventory".to_owned()
            } else {
                format!(
                    ", searchdomains: {}",
                    allowed.iter().cloned().collect::<Vec<_>>().join(" ")
                )
            }
        ),
    ];
    evidence.extend(known.iter().map(|(k, warn)| {
        if *warn {
            format!("known stray source: {k}")
        } else {
            format!("cloud DHCP suffix: {k} (the same on every node of a region is harmless)")
        }
    }));
    let (severity, summary, fix) = if known.iter().any(|(_, warn)| *warn) || over {
        (
            Severity::Warning,
            format!(
                "host search domain {} leaks into every ClusterFirst pod{}: each outside name is tried with it first (ndots:5)",
                stray.join(", "),
                if over {
                    " and pushes the list over kubelet's limits"
                } else {
                    ""
                }
            ),
            "stop DHCP/RA from pushing it (dhclient supersede domain-search, netplan dhcp4-overrides use-domains: false, NetworkManager ipv4.ignore-auto-dns) or list it in searchdomains if it is wanted",
        )
    } else {
        (
            Severity::Info,
            format!(
                "pods inherit the host search domain {}, which the inventory does not declare",
                stray.join(", ")
            ),
            "if pods should resolve short names in it, declare it in searchdomains to silence this; otherwise stop DHCP/netplan/NetworkManager from pushing it",
        )
    };
    RuleOutcome::Findings(vec![ctx.finding(
        "DNS-STRAY-SEARCH",
        severity,
        summary,
        evidence,
        fix.into(),
    )])
}

fn nodelocal_clusterdns(ctx: &Ctx) -> RuleOutcome {
    let Some(addrs) = &ctx.facts.nodelocaldns else {
        return RuleOutcome::NotApplicable("no nodelocaldns interface".into());
    };
    // The cluster's kube-proxy ConfigMap when it was read, else the inventory.
    let (mode, mode_evidence) = match &ctx.kube_proxy_mode {
        Some(m) => (
            Some(m.as_str()),
            format!(
                "ConfigMap kube-system/kube-proxy (config.conf) mode: {}",
                if m.is_empty() { "\"\" (iptables)" } else { m }
            ),
        ),
        None => {
            let m = ctx.host.var_str("kube_proxy_mode");
            (
                m,
                format!(
                    "kube_proxy_mode: {}",
                    m.unwrap_or("ipvs (Kubespray default)")
                ),
            )
        }
    };
    let ipvs = match mode {
        Some(m) => m == "ipvs",
        // Kubespray's default kube_proxy_mode is ipvs.
        None => ctx.facts.flavour.kind == FlavourKind::Kubespray,
    };
    if !ipvs {
        return RuleOutcome::NotApplicable("kube-proxy is not in ipvs mode".into());
    }
    let dns = match &ctx.facts.kubelet.cluster_dns {
        Observed::Known(e) => e,
        Observed::Absent => return RuleOutcome::NotApplicable(NO_KUBELET.into()),
        Observed::Unknown(why) => return ctx.unknown("DNS-NODELOCAL-CLUSTERDNS", why.clone()),
    };
    let local: Vec<&String> = addrs
        .iter()
        .filter(|a| {
            a.parse::<IpAddr>()
                .is_ok_and(|ip| matches!(ip, IpAddr::V4(v) if v.is_link_local()))
        })
        .collect();
    if local.is_empty() || local.iter().any(|a| dns.value.contains(a)) {
        return RuleOutcome::Pass;
    }
    RuleOutcome::Findings(vec![ctx.finding(
        "DNS-NODELOCAL-CLUSTERDNS",
        Severity::High,
        format!("nodelocaldns listens on {} but kubelet clusterDNS is {}: in ipvs mode pods never reach the local cache", local[0], dns.value.join(", ")),
        vec![
            format!("interface nodelocaldns: {}", addrs.join(", ")),
            format!("{} clusterDNS: [{}]", dns.source.at(), dns.value.join(", ")),
            mode_evidence,
        ],
        format!(
            "set clusterDNS to [{}]; {} and recreate pods",
            local[0],
            restart_hint(ctx)
        ),
    )])
}

/// kubeadm 1.11–1.18 wrote exactly this flag into kubeadm-flags.env when systemd-resolved
/// was active (cmd/kubeadm/app/phases/kubelet/flags.go); 1.19 moved it into config.yaml.
const KUBEADM_RESOLV_FLAG: (&str, &str) = (
    "/var/lib/kubelet/kubeadm-flags.env",
    "/run/systemd/resolve/resolv.conf",
);

/// The file kubelet hands pods lists servers, none loopback and none the cluster's own.
fn pod_file_clean(ctx: &Ctx) -> bool {
    match pod_resolv(ctx) {
        PodResolv::Parsed(_, _, p) => only_real_servers(ctx, p),
        _ => false,
    }
}

fn flag_shadow(ctx: &Ctx) -> RuleOutcome {
    let k = &ctx.facts.kubelet;
    let mut evidence = Vec::new();
    let mut kubeadms_own = true;
    let label = |kind: &str| match kind {
        "k3s_config" => "resolv-conf:",
        "k3s_env" => "environment",
        _ => "resolvConf:",
    };
    if let Observed::Known(e) = &k.resolv_conf {
        for s in e.shadowed.iter().filter(|s| s.value != e.value) {
            // Only while the config says what kubeadm's defaulting wrote (/etc/resolv.conf)
            // and the flag's file is a good one: an operator's own resolvConf being ignored
            // is the incident this rule is for.
            kubeadms_own &= e.source.path.as_deref() == Some(KUBEADM_RESOLV_FLAG.0)
                && e.value == KUBEADM_RESOLV_FLAG.1
                && s.value == "/etc/resolv.conf"
                && pod_file_clean(ctx);
            evidence.push(format!(
                "{} --resolv-conf={} overrides {} {} {}",
                e.source.at(),
                e.value,
                s.source.at(),
                label(&s.source.kind),
                s.value
            ));
        }
    }
    if let Observed::Known(e) = &k.cluster_dns {
        let v = e.value.join(",");
        for s in e.shadowed.iter().filter(|s| s.value != v) {
            kubeadms_own = false;
            evidence.push(format!(
                "{} --cluster-dns={v} overrides {} clusterDNS: {}",
                e.source.at(),
                s.source.at(),
                s.value
            ));
        }
    }
    if evidence.is_empty() {
        return match (&k.resolv_conf, &k.cluster_dns) {
            (Observed::Absent, Observed::Absent) => RuleOutcome::NotApplicable(NO_KUBELET.into()),
            _ => RuleOutcome::Pass,
        };
    }
    if kubeadms_own {
        return RuleOutcome::Findings(vec![ctx.finding(
            "DNS-KUBELET-FLAG-SHADOW",
            Severity::Info,
            "kubeadm's own --resolv-conf flag overrides the config file (kubeadm 1.11-1.18 wrote it because systemd-resolved was active): an edit of resolvConf in the config file changes nothing".into(),
            evidence,
            "nothing to do while the flag is right; to change the resolv.conf, change the flag (kubeadm 1.19+ keeps it in config.yaml instead)".into(),
        )]);
    }
    RuleOutcome::Findings(vec![ctx.finding(
        "DNS-KUBELET-FLAG-SHADOW",
        Severity::Warning,
        "a kubelet flag overrides the config file: editing the config file changes nothing".into(),
        evidence,
        format!(
            "remove the flag where it is set and keep the value in the config file; {}",
            restart_hint(ctx)
        ),
    )])
}

fn file_text<'f>(facts: &'f NodeFacts, path: &str) -> Option<std::borrow::Cow<'f, str>> {
    facts.files.get(path).and_then(|f| f.text())
}

/// NetworkManager leaves /etc/resolv.conf alone with dns=none or rc-manager=unmanaged
/// (NetworkManager.conf(5)); otherwise an active NetworkManager rewrites a plain file.
pub(crate) fn network_manager_manages_resolv(facts: &NodeFacts) -> Option<String> {
    if facts.services.network_manager != UnitState::Active {
        return None;
    }
    let configs = facts.files.keys().filter(|p| {
        *p == "/etc/NetworkManager/NetworkManager.conf"
            || p.starts_with("/etc/NetworkManager/conf.d/")
            || p.starts_with("/run/NetworkManager/conf.d/")
    });
    for path in configs {
        let Some(text) = file_text(facts, path) else {
            continue;
        };
        let hands_off = text.lines().any(|line| {
            let l = line.trim().replace(' ', "");
            l == "dns=none" || l == "rc-manager=unmanaged"
        });
        if hands_off {
            return None;
        }
    }
    Some("NetworkManager is active and manages /etc/resolv.conf (no dns=none or rc-manager=unmanaged)".into())
}

fn resolv_managed_elsewhere(ctx: &Ctx) -> RuleOutcome {
    let id = "DNS-RESOLV-MANAGED-ELSEWHERE";
    let facts = ctx.facts;
    let mut findings = Vec::new();
    let etc = &facts.resolver.etc_resolv_conf;
    if etc.state == FileState::Present && etc.symlink_target.is_none() {
        let mut managers = Vec::new();
        if let Some(nm) = network_manager_manages_resolv(facts) {
            managers.push(nm);
        }
        if !managers.is_empty() {
            findings.push(ctx.finding(
                id,
                Severity::Warning,
                "/etc/resolv.conf is a plain file that another program rewrites: a hand fix there will not survive a reboot or DHCP renewal".into(),
                [format!("/etc/resolv.conf is a regular file (sha256 {})", etc.sha256.as_deref().unwrap_or("?"))].into_iter().chain(managers).collect(),
                "make the change where NetworkManager reads it (a conf.d file with [global-dns] servers, or dns=none if the file is to be owned by hand), not in /etc/resolv.conf".into(),
            ));
        }
    }
    for path in ["/etc/dhcp/dhclient.conf", "/etc/dhclient.conf"] {
        let Some(text) = file_text(facts, path) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            let l = line.split('#').next().unwrap_or("").trim();
            let Some(rest) = l.strip_prefix("supersede domain-name-servers") else {
                continue;
            };
            let bad: Vec<String> = rest
                .trim_end_matches(';')
                .split(',')
                .filter_map(|a| a.trim().parse::<IpAddr>().ok())
                .filter(|ip| is_loopback(*ip) || ctx.cluster.contains(ip))
                .map(|ip| ip.to_string())
                .collect();
            if bad.is_empty() {
                continue;
            }
            let fix = "list only real upstream servers in the supersede line (Kubespray: remove 127.0.0.53 from nameservers and set upstream_dns_servers)";
            if facts.services.dhclient {
                findings.push(ctx.finding(
                    id,
                    Severity::High,
                    format!("dhclient writes {} into the host resolver at every lease: after a reboot the loop is back", bad.join(", ")),
                    vec![format!("{path}:{}: {l}", i + 1), "a dhclient process runs: it is this node's DHCP client".into()],
                    fix.into(),
                ));
            } else {
                // Ubuntu's netplan uses systemd-networkd, RHEL 8+ NetworkManager's internal
                // client: the line is latent until dhclient runs again.
                let client = if facts.services.systemd_networkd == UnitState::Active {
                    "systemd-networkd is the DHCP client"
                } else if facts.services.network_manager == UnitState::Active {
                    "NetworkManager is active and no dhclient runs (its internal DHCP client)"
                } else {
                    "no dhclient process runs"
                };
                findings.push(ctx.finding(
                    id,
                    Severity::Info,
                    format!("dhclient.conf would write {} into the host resolver, but dhclient is not the DHCP client here: latent until it is", bad.join(", ")),
                    vec![format!("{path}:{}: {l}", i + 1), client.into()],
                    fix.into(),
                ));
            }
        }
    }
    if findings.is_empty() {
        RuleOutcome::Pass
    } else {
        RuleOutcome::Findings(findings)
    }
}

fn k3s_fallback(ctx: &Ctx) -> RuleOutcome {
    if !matches!(ctx.facts.flavour.kind, FlavourKind::K3s | FlavourKind::Rke2) {
        return RuleOutcome::NotApplicable("not a k3s/RKE2 node".into());
    }
    match &ctx.facts.kubelet.resolv_conf {
        Observed::Known(e)
            if e.source.kind == "k3s_auto" && e.value.ends_with("/agent/etc/resolv.conf") =>
        {
            // k3s/RKE2 accept a host file only if every nameserver is global unicast: a
            // loopback stub fails, and so does a link-local resolver such as AWS's
            // 169.254.169.253.
            let r = &ctx.facts.resolver;
            let mut evidence = vec![format!(
                "{}: no resolv-conf set (nor --resolv-conf, nor {}_RESOLV_CONF)",
                ctx.facts
                    .kubelet
                    .config_path
                    .as_deref()
                    .unwrap_or("config.yaml"),
                if ctx.facts.flavour.kind == FlavourKind::Rke2 {
                    "RKE2"
                } else {
                    "K3S"
                }
            )];
            let mut kinds = BTreeSet::new();
            for f in [&r.etc_resolv_conf, &r.systemd_uplink] {
                let why = match &f.parsed {
                    Some(p) => crate::facts::kubelet::not_global_unicast(p),
                    None => Some("not there".to_owned()),
                };
                if let Some(why) = why {
                    if let Some(kind) = ["loopback", "link-local", "multicast", "unspecified"]
                        .into_iter()
                        .find(|k| why.ends_with(k))
                    {
                        kinds.insert(kind);
                    }
                    evidence.push(format!("{}: {why}", f.path));
                }
            }
            evidence.push(format!(
                "effective: {} (generated, nameserver 8.8.8.8)",
                e.value
            ));
            let kinds: Vec<&str> = kinds.into_iter().collect();
            RuleOutcome::Findings(vec![ctx.finding(
                "DNS-K3S-FALLBACK",
                Severity::Info,
                format!(
                    "k3s/RKE2 found no host resolv.conf with only global unicast nameservers{} and gives pods a generated one with 8.8.8.8",
                    if kinds.is_empty() { String::new() } else { format!(" ({} servers do not count)", kinds.join(", ")) }
                ),
                evidence,
                "set resolv-conf in /etc/rancher/k3s/config.yaml (or rke2) to a file with your real upstreams; restart the k3s/rke2 service".into(),
            )])
        }
        Observed::Unknown(why) => ctx.unknown("DNS-K3S-FALLBACK", why.clone()),
        _ => RuleOutcome::Pass,
    }
}

/// The cluster's own DNS addresses as this host knows them.
pub fn cluster_addresses(host: &Host, facts: &NodeFacts) -> BTreeSet<IpAddr> {
    let mut set = BTreeSet::new();
    if let Observed::Known(e) = &facts.kubelet.cluster_dns {
        set.extend(e.value.iter().filter_map(|a| a.parse::<IpAddr>().ok()));
    }
    if let Some(addrs) = &facts.nodelocaldns {
        set.extend(
            addrs
                .iter()
                .filter_map(|a| a.parse::<IpAddr>().ok())
                .filter(|ip| !matches!(ip, IpAddr::V6(v) if (v.segments()[0] & 0xffc0) == 0xfe80)),
        );
    }
    if host.var_bool("enable_nodelocaldns") != Some(false) {
        let ip = host.var_str("nodelocaldns_ip").unwrap_or("169.254.25.10");
        if let Ok(ip) = ip.parse() {
            set.insert(ip);
        }
    }
    for key in ["skydns_server", "coredns_server"] {
        if let Some(ip) = host.var_str(key).and_then(|v| v.parse().ok()) {
            set.insert(ip);
        }
    }
    // Kubespray: the kube-dns service is the 3rd address of kube_service_addresses.
    let services = host
        .var_str("kube_service_addresses")
        .or((facts.flavour.kind == FlavourKind::Kubespray).then_some("10.233.0.0/18"));
    if let Some(ip) = services.and_then(|cidr| nth_address(cidr, 3)) {
        set.insert(ip);
    }
    set
}

fn nth_address(cidr: &str, n: u32) -> Option<IpAddr> {
    let (net, _) = cidr.split_once('/')?;
    match net.parse::<IpAddr>().ok()? {
        IpAddr::V4(v4) => Some(IpAddr::V4(std::net::Ipv4Addr::from(
            u32::from(v4).checked_add(n)?,
        ))),
        IpAddr::V6(v6) => Some(IpAddr::V6(std::net::Ipv6Addr::from(
            u128::from(v6).checked_add(u128::from(n))?,
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The DNS-SEARCH-LIMIT fixture with five host search domains (over the legacy limits,
    /// within the expanded ones), its kubelet's version left for the cluster to say.
    fn five_domains() -> (Host, NodeFacts) {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/rules/DNS-SEARCH-LIMIT/expanded-five-domains-1.29/root");
        let raw = crate::facts::raw::from_tree(&root).expect("fixture tree");
        let mut facts = NodeFacts::from_raw("node1", &raw);
        facts.kubelet.version = None;
        (Host::new("node1"), facts)
    }

    fn cluster(kubelets: &[(&str, &str)]) -> crate::cluster::Cluster {
        crate::cluster::Cluster::Read {
            via: "cp1".into(),
            pods: Vec::new(),
            config: Default::default(),
            kubelets: kubelets
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
        }
    }

    /// MicroK8s's wrapper turns forwarding on at every start only where its CNI manifest
    /// is, and sets bridge-nf-call-iptables (never -ip6tables) itself: neither needs a
    /// sysctl.d file then, but forwarding does without the manifest.
    #[test]
    fn microk8s_forwarding_persists_only_with_its_cni_manifest() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/rules/_upstream/microk8s-1.32-debian12-joined-worker/root");
        let raw = crate::facts::raw::from_tree(&root).expect("fixture tree");
        let host = Host::new("node1");
        let facts = NodeFacts::from_raw("node1", &raw);
        assert_eq!(facts.flavour.kind, FlavourKind::MicroK8s);
        assert_eq!(
            ip_forward(&Ctx::in_cluster(&host, &facts, None)),
            RuleOutcome::Pass
        );
        assert_eq!(
            bridge_nf_not_persistent(&Ctx::in_cluster(&host, &facts, None)),
            RuleOutcome::Pass
        );
        let mut raw = raw.clone();
        for path in [
            "/var/snap/microk8s/7964/args/cni-network/cni.yaml",
            "/var/snap/microk8s/current/args/cni-network/cni.yaml",
        ] {
            raw.file(path, crate::facts::raw::FileState::Missing, None);
        }
        let facts = NodeFacts::from_raw("node1", &raw);
        let RuleOutcome::Findings(f) = ip_forward(&Ctx::in_cluster(&host, &facts, None)) else {
            panic!("forwarding with no CNI manifest is nobody's at boot");
        };
        assert!(
            f[0].evidence.iter().any(|e| e.contains("no sysctl.d")),
            "{f:?}"
        );
    }

    /// The `kubeadm-resolved-stopped-before-reboot` fixture (the kubelet on resolved's
    /// uplink file in /run) with systemd-resolved `state` now and `enabled` from
    /// `systemctl is-enabled` ("": not asked).
    fn resolved_case(state: &str, enabled: &str) -> crate::facts::raw::RawFacts {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "tests/fixtures/rules/DNS-KUBELET-RESOLVCONF-MISSING/kubeadm-resolved-stopped-before-reboot/root",
        );
        let mut raw = crate::facts::raw::from_tree(&root).expect("fixture tree");
        crate::testing::set_units(
            &mut raw,
            &[("systemd-resolved", state), ("kubelet", "active")],
        );
        raw.commands.remove("resolved-enabled");
        if !enabled.is_empty() {
            raw.commands.insert(
                "resolved-enabled".into(),
                crate::facts::raw::RawCommand {
                    stdout: format!("{enabled}\n"),
                    status: Some(i32::from(enabled != "enabled")),
                },
            );
        }
        raw
    }

    /// DNS-KUBELET-RESOLVCONF-MISSING on `raw`, the kubelet's resolvConf chosen by `auto`
    /// (a source kind: `k3s_auto`, `k0s_auto`) where that is not "".
    fn resolved_outcome(raw: &crate::facts::raw::RawFacts, auto: &str) -> RuleOutcome {
        let host = Host::new("node1");
        let mut facts = NodeFacts::from_raw("node1", raw);
        if !auto.is_empty()
            && let Observed::Known(e) = &mut facts.kubelet.resolv_conf
        {
            e.source.kind = auto.into();
        }
        resolvconf_missing(&Ctx::in_cluster(&host, &facts, None))
    }

    /// A kubelet file systemd-resolved keeps in /run is reported where systemd-resolved
    /// does not start at the next boot (`systemctl is-enabled`, whether it runs now or
    /// not), and, where that is not known, while it is inactive or failed; not where it
    /// starts then, and not where k3s/RKE2 chose the file (they choose again at their next
    /// start). k0s's own choice is its next start's: reported like a setting.
    #[test]
    fn a_file_left_by_a_stopped_systemd_resolved_is_reported_before_the_reboot() {
        // (systemd-resolved now, is-enabled, source kind, reported, "does not start at boot")
        for (state, enabled, auto, reported, not_at_boot) in [
            ("inactive", "disabled", "", true, true),
            ("active", "disabled", "", true, true),
            ("active", "masked", "", true, true),
            ("active", "linked", "", true, true),
            ("inactive", "enabled", "", false, false),
            ("failed", "enabled", "", false, false),
            ("inactive", "static", "", false, false),
            // A reboot changes these themselves (their links are in /run): is-active decides.
            ("active", "enabled-runtime", "", false, false),
            ("inactive", "masked-runtime", "", true, false),
            ("active", "masked-runtime", "", false, false),
            // Not asked, or a word systemctl 252 does not print: is-active decides.
            ("inactive", "", "", true, false),
            ("failed", "", "", true, false),
            ("active", "", "", false, false),
            ("activating", "", "", false, false),
            ("inactive", "frobnicated", "", true, false),
            ("active", "frobnicated", "", false, false),
            ("inactive", "disabled", "k3s_auto", false, false),
            ("inactive", "disabled", "k0s_auto", true, true),
        ] {
            let case = format!("resolved {state}/{enabled:?}, source {auto:?}");
            match resolved_outcome(&resolved_case(state, enabled), auto) {
                RuleOutcome::Findings(f) if reported => {
                    assert_eq!(f[0].severity, Severity::High, "{case}: {f:?}");
                    let word = if enabled.is_empty() {
                        String::new()
                    } else {
                        format!(" and {enabled} (systemctl is-enabled)")
                    };
                    assert!(
                        f[0].evidence[0].ends_with(&format!(
                            "systemd-resolved, which is {state} (systemctl is-active){word}"
                        )),
                        "{case}: {f:?}"
                    );
                    assert_eq!(
                        f[0].summary.contains("does not start at boot"),
                        not_at_boot,
                        "{case}: {f:?}"
                    );
                    assert_eq!(
                        f[0].remediation.contains("systemctl unmask"),
                        enabled.starts_with("masked"),
                        "{case}: {f:?}"
                    );
                }
                RuleOutcome::Pass if !reported => {}
                other => panic!("{case}: {other:?}"),
            }
        }
    }

    /// The node's /etc/resolv.conf made as `kind` says: a link to systemd-resolved's
    /// `stub` or `uplink` file (as Ubuntu links it; `stub+nm`: with NetworkManager running
    /// and managing the file), a `copied-stub`, a file of its `own`, a link to
    /// NetworkManager's (`nm-link`) or resolvconf's file, Debian's `dnsmasq` address, one
    /// with `no-nameserver`, a link to nothing (`dangling`), `absent`, a `directory`, a
    /// link to an uplink file with no server (`uplink-empty`), to the stub file systemd
    /// ships (`usr-lib-link`) or through /var/run (`var-run-link`).
    fn etc_resolv_conf(raw: &mut crate::facts::raw::RawFacts, kind: &str, state: &str) {
        use crate::facts::raw::FileState;
        let etc = "/etc/resolv.conf";
        match kind {
            "stub" | "stub+nm" | "uplink" => {
                let file = if kind == "uplink" {
                    "resolv.conf"
                } else {
                    "stub-resolv.conf"
                };
                let path = format!("/run/systemd/resolve/{file}");
                let body = raw.files[&path]
                    .text()
                    .expect("resolved's file")
                    .into_owned();
                let target = format!("../run/systemd/resolve/{file}");
                raw.link(etc, &target, &path, body.as_bytes());
                if kind == "stub+nm" {
                    let units = [("systemd-resolved", state), ("NetworkManager", "active")];
                    crate::testing::set_units(raw, &units);
                }
            }
            "copied-stub" => {
                let body = b"nameserver 127.0.0.53\noptions edns0 trust-ad\n";
                raw.file(etc, FileState::Present, Some(body));
            }
            "own" => raw.file(etc, FileState::Present, Some(b"nameserver 192.0.2.53\n")),
            // Another manager's file in /run, and Debian's dnsmasq address.
            "nm-link" | "resolvconf-link" => {
                let dir = if kind == "nm-link" {
                    "NetworkManager"
                } else {
                    "resolvconf"
                };
                let path = format!("/run/{dir}/resolv.conf");
                let target = format!("..{path}");
                raw.link(etc, &target, &path, b"nameserver 192.0.2.53\n");
            }
            "dnsmasq" => raw.file(etc, FileState::Present, Some(b"nameserver 127.0.1.1\n")),
            "no-nameserver" => {
                raw.file(etc, FileState::Present, Some(b"search example.internal\n"))
            }
            "directory" => raw.file(etc, FileState::Directory, None),
            // systemd-resolved's uplink file as it writes it knowing no server.
            "uplink-empty" => {
                let path = "/run/systemd/resolve/resolv.conf";
                let body = b"# This is /run/systemd/resolve/resolv.conf managed by man:systemd-resolved(8).\n";
                raw.link(etc, "../run/systemd/resolve/resolv.conf", path, body);
            }
            // The static stub file systemd ships, and an absolute link through /var/run
            // with no canonical path.
            "usr-lib-link" => {
                let body = b"nameserver 127.0.0.53\noptions edns0 trust-ad\n";
                let path = "/usr/lib/systemd/resolv.conf";
                raw.link(etc, "../usr/lib/systemd/resolv.conf", path, body);
            }
            "var-run-link" => {
                let body = b"nameserver 127.0.0.53\n";
                let target = "/var/run/systemd/resolve/stub-resolv.conf";
                raw.link(etc, target, target, body);
                raw.files.get_mut(etc).expect("entry").canonical = None;
            }
            "dangling" | "absent" => {
                raw.file(etc, FileState::Missing, None);
                if kind == "dangling" {
                    raw.files.get_mut(etc).expect("entry").symlink_target =
                        Some("../run/systemd/resolve/stub-resolv.conf".into());
                }
            }
            other => panic!("no such /etc/resolv.conf: {other}"),
        }
    }

    /// The node's own resolver: down now where /etc/resolv.conf is missing, a directory,
    /// without a nameserver, or lists only the stub of a systemd-resolved that does not run
    /// (high); down after the next boot where it links into /run/systemd/resolve and
    /// systemd-resolved will not start then (warning); a file of its own, or a resolved
    /// that runs and starts at boot, passes. The fix fits what the file is.
    #[test]
    fn the_hosts_own_resolver_is_down_now_or_after_the_next_boot() {
        use Severity::{High, Warning};
        // A finding's severity, and what its summary and its fix say.
        type Want = Option<(Severity, &'static str, &'static str)>;
        const LINK: &str = "servers (192.0.2.53) in place of the link to ../run/systemd/resolve/stub-resolv.conf; or enable systemd-resolved (systemctl enable --now systemd-resolved)";
        const UPLINK: &str = "servers (192.0.2.53) in place of the link to ../run/systemd/resolve/resolv.conf; or enable";
        // (/etc/resolv.conf, systemd-resolved now, is-enabled; the finding)
        #[rustfmt::skip]
        let cases: [(&str, &str, &str, Want); 26] = [
            ("stub", "active", "enabled", None),
            ("stub", "inactive", "enabled", Some((High, "which answers there, does not run", "start systemd-resolved (systemctl start"))),
            ("stub", "failed", "", Some((High, "does not run", LINK))),
            ("stub", "inactive", "disabled", Some((High, "does not run", LINK))),
            ("stub", "active", "disabled", Some((Warning, "next reboot", LINK))),
            ("stub", "active", "masked", Some((Warning, "next reboot", "or unmask and enable systemd-resolved (systemctl unmask"))),
            ("stub", "activating", "disabled", Some((Warning, "next reboot", LINK))),
            ("stub+nm", "active", "disabled", Some((Warning, "next reboot", "(NetworkManager manages it here: rm /etc/resolv.conf; systemctl reload NetworkManager"))),
            ("uplink", "inactive", "enabled", None),
            ("uplink", "inactive", "", Some((Warning, "only if it starts systemd-resolved", UPLINK))),
            ("uplink", "active", "disabled", Some((Warning, "does not start at boot", UPLINK))),
            ("uplink-empty", "active", "enabled", Some((High, "lists no nameserver", "give systemd-resolved the real servers"))),
            ("usr-lib-link", "inactive", "disabled", Some((High, "does not run", "in place of the link to ../usr/lib/systemd/resolv.conf; or enable"))),
            ("usr-lib-link", "active", "enabled", None),
            ("var-run-link", "active", "disabled", Some((Warning, "does not start at boot", "in place of the link to /var/run/systemd/resolve/stub-resolv.conf"))),
            ("copied-stub", "inactive", "", Some((High, "does not run", "servers (192.0.2.53) instead of systemd-resolved's stub address; or enable"))),
            ("copied-stub", "active", "enabled", None),
            ("own", "inactive", "disabled", None),
            ("nm-link", "inactive", "disabled", None),
            ("resolvconf-link", "inactive", "", None),
            ("dnsmasq", "inactive", "", None),
            ("no-nameserver", "active", "enabled", Some((High, "lists no nameserver: the node's own lookups", "through whatever manages it"))),
            ("directory", "active", "enabled", Some((High, "is a directory", "through whatever manages it"))),
            ("dangling", "inactive", "", Some((High, "is a link to nothing: the node's own lookups", LINK))),
            ("absent", "inactive", "disabled", Some((High, "does not exist", "give the node an /etc/resolv.conf that lists the real servers (192.0.2.53)"))),
            ("absent", "unknown", "", Some((High, "does not exist", "through whatever manages it"))),
        ];
        for (kind, state, enabled, want) in cases {
            let case = format!("{kind}, {state}, {enabled}");
            let mut raw = resolved_case(state, enabled);
            etc_resolv_conf(&mut raw, kind, state);
            let host = Host::new("node1");
            let facts = NodeFacts::from_raw("node1", &raw);
            match (
                host_resolver_down(&Ctx::in_cluster(&host, &facts, None)),
                want,
            ) {
                (RuleOutcome::Pass, None) => {}
                (RuleOutcome::Findings(f), Some((severity, summary, fix))) => {
                    assert_eq!(f.len(), 1, "{case}: {f:?}");
                    assert_eq!(f[0].severity, severity, "{case}: {f:?}");
                    assert!(f[0].summary.contains(summary), "{case}: {f:?}");
                    assert!(f[0].remediation.contains(fix), "{case}: {f:?}");
                    // NetworkManager is named only where it manages the file.
                    assert_eq!(
                        f[0].remediation.contains("NetworkManager manages"),
                        kind == "stub+nm",
                        "{case}: {f:?}"
                    );
                }
                (other, _) => panic!("{case}: {other:?}"),
            }
        }
    }

    /// Where the kubelet's file is resolved's, by a link from /etc/resolv.conf or through
    /// /var/run; and not where the kubelet has a file of its own.
    #[test]
    fn a_disabled_resolveds_file_is_found_through_links_and_var_run() {
        // /etc/resolv.conf linked to resolved's stub.
        let mut linked = resolved_case("active", "disabled");
        let stub = linked.files["/run/systemd/resolve/stub-resolv.conf"]
            .text()
            .expect("stub text")
            .into_owned();
        linked.files.remove("/etc/resolv.conf");
        linked.link(
            "/etc/resolv.conf",
            "../run/systemd/resolve/stub-resolv.conf",
            "/run/systemd/resolve/stub-resolv.conf",
            stub.as_bytes(),
        );
        // The kubelet's file is reported; the host's link is DNS-HOST-RESOLVER-DOWN's.
        let RuleOutcome::Findings(f) = resolved_outcome(&linked, "") else {
            panic!("a disabled resolved's uplink file is gone at the next boot");
        };
        assert!(!f[0].remediation.contains("/etc/resolv.conf"), "{f:?}");
        // Through /var/run, a link to /run: the gather gives no canonical path there.
        let config = "/var/lib/kubelet/config.yaml";
        let with_resolv_conf = |raw: &mut crate::facts::raw::RawFacts, value: &str| {
            let text = raw.files[config].text().expect("config text").replace(
                "resolvConf: /run/systemd/resolve/resolv.conf",
                &format!("resolvConf: {value}"),
            );
            raw.file(
                config,
                crate::facts::raw::FileState::Present,
                Some(text.as_bytes()),
            );
        };
        let mut var_run = resolved_case("active", "disabled");
        let uplink = var_run.files["/run/systemd/resolve/resolv.conf"].clone();
        var_run
            .files
            .insert("/var/run/systemd/resolve/resolv.conf".into(), uplink);
        with_resolv_conf(&mut var_run, "/var/run/systemd/resolve/resolv.conf");
        assert!(matches!(
            resolved_outcome(&var_run, ""),
            RuleOutcome::Findings(_)
        ));
        // The same disabled resolved, with the kubelet on a file of its own: nothing to say.
        let mut own = resolved_case("inactive", "disabled");
        with_resolv_conf(&mut own, "/etc/resolv.conf");
        assert_eq!(resolved_outcome(&own, ""), RuleOutcome::Pass);
    }

    /// The severities of DNS-BRIDGE-NF-OFF and DNS-IP-FORWARD on a node of flavour `kind`.
    fn bridge_and_forwarding(
        raw: &crate::facts::raw::RawFacts,
        kind: FlavourKind,
    ) -> [Severity; 2] {
        let facts = NodeFacts::from_raw("node1", raw);
        assert_eq!(facts.flavour.kind, kind);
        let host = Host::new("node1");
        let ctx = Ctx::in_cluster(&host, &facts, None);
        [bridge_nf_off(&ctx), ip_forward(&ctx)].map(|o| match o {
            RuleOutcome::Findings(f) => f[0].severity,
            other => panic!("{other:?}"),
        })
    }

    /// On Debian 13 nothing reads /etc/sysctl.conf at boot: a setting only there is not
    /// persisted, and one an upgrade moved to /etc/sysctl.conf.dpkg-bak is named.
    #[test]
    fn debian_13_does_not_read_etc_sysctl_conf_at_boot() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/rules/DNS-IP-FORWARD/debian13-sysctl-conf-not-read/root");
        let raw = crate::facts::raw::from_tree(&root).expect("fixture tree");
        let evidence = |raw: &crate::facts::raw::RawFacts| {
            let facts = NodeFacts::from_raw("node1", raw);
            let host = Host::new("node1");
            match ip_forward(&Ctx::in_cluster(&host, &facts, None)) {
                RuleOutcome::Findings(f) => {
                    assert_eq!(f[0].severity, Severity::High);
                    f[0].evidence.join(" | ")
                }
                other => panic!("{other:?}"),
            }
        };
        assert!(evidence(&raw).contains("only /etc/sysctl.conf sets it"));
        let mut upgraded = raw.clone();
        upgraded.file(
            "/etc/sysctl.conf",
            crate::facts::raw::FileState::Missing,
            None,
        );
        upgraded.file(
            "/etc/sysctl.conf.dpkg-bak",
            crate::facts::raw::FileState::Present,
            Some(b"net.ipv4.ip_forward=1\n"),
        );
        let said = evidence(&upgraded);
        assert!(
            said.contains("is set by no sysctl.d file") && said.contains(".dpkg-bak sets it"),
            "{said}"
        );
        // The same for /etc/modules: listed there only, br_netfilter is not loaded at boot.
        let mut modules = raw.clone();
        modules.file(
            "/etc/modules-load.d/k8s.conf",
            crate::facts::raw::FileState::Missing,
            None,
        );
        modules.file(
            "/etc/modules",
            crate::facts::raw::FileState::Present,
            Some(b"br_netfilter\n"),
        );
        let facts = NodeFacts::from_raw("node1", &modules);
        let host = Host::new("node1");
        match bridge_nf_not_persistent(&Ctx::in_cluster(&host, &facts, None)) {
            RuleOutcome::Findings(f) => assert!(
                f[0].evidence[0].contains("only /etc/modules lists it"),
                "{:?}",
                f[0].evidence
            ),
            other => panic!("{other:?}"),
        }
        // Where something boots it that is not systemd, /etc/sysctl.conf comes last.
        let mut openrc = raw.clone();
        openrc.file(
            "/run/systemd/system",
            crate::facts::raw::FileState::Missing,
            None,
        );
        let facts = NodeFacts::from_raw("node1", &openrc);
        let host = Host::new("node1");
        assert_eq!(
            ip_forward(&Ctx::in_cluster(&host, &facts, None)),
            RuleOutcome::Pass
        );
    }

    /// k0s before 1.29.14, 1.30.10, 1.31.6 and 1.32.2 never ran its modprobe: there a
    /// br_netfilter that is loaded now but not persisted is gone after a reboot, and a
    /// stopped k0s does not turn bridge netfilter on where the module is missing.
    #[test]
    fn an_old_k0s_does_not_load_br_netfilter() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/rules/_upstream/k0s-1.34-ubuntu2204-worker-after-reboot/root");
        let raw = crate::facts::raw::from_tree(&root).expect("fixture tree");
        let host = Host::new("node1");
        let with_version = |raw: &crate::facts::raw::RawFacts, version: &str| {
            let facts = NodeFacts::from_raw("node1", raw);
            let mut ctx = Ctx::in_cluster(&host, &facts, None);
            ctx.kubelet_version = Some((version.to_owned(), "node1".to_owned()));
            (
                bridge_nf_not_persistent(&ctx),
                bridge_nf_off(&ctx),
                installer_bridge(&ctx).0,
            )
        };
        // Running, br_netfilter loaded by hand and the bridge keys on, nothing persisted.
        let mut running = raw.clone();
        running.file(
            "/proc/77/cmdline",
            crate::facts::raw::FileState::Present,
            Some(b"/srv/k0s/bin/kubelet\0--config=/run/k0s/kubelet/config.yaml\0"),
        );
        running.pids.insert("kubelet".to_owned(), 77);
        running.file(
            "/proc/modules",
            crate::facts::raw::FileState::Present,
            Some(b"br_netfilter 32768 0 - Live 0x0000000000000000\nbridge 311296 1 br_netfilter, Live 0x0000000000000000\n"),
        );
        running.file(
            "/proc/sys/net/bridge",
            crate::facts::raw::FileState::Directory,
            None,
        );
        running.file(
            "/proc/sys/net/bridge/bridge-nf-call-iptables",
            crate::facts::raw::FileState::Present,
            Some(b"1\n"),
        );
        let (old, _, left) = with_version(&running, "v1.31.5+k0s");
        match old {
            RuleOutcome::Findings(f) => {
                assert_eq!(f[0].severity, Severity::High);
                assert!(
                    f[0].evidence[0].contains("not loaded at boot"),
                    "{:?}",
                    f[0].evidence
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(!left, "the playbook must load and persist it");
        let (new, _, left) = with_version(&running, "v1.31.6+k0s");
        assert_eq!(new, RuleOutcome::Pass);
        assert!(left);
        // Stopped, after a reboot, with br_netfilter not loaded: an old k0s sets nothing.
        let severity = |version: &str| match with_version(&raw, version).1 {
            RuleOutcome::Findings(f) => f[0].severity,
            other => panic!("{other:?}"),
        };
        assert_eq!(severity("v1.32.1+k0s"), Severity::Critical);
        assert_eq!(severity("v1.32.2+k0s"), Severity::Warning);
        assert_eq!(minor_patch("v1.29.14+k0s"), Some((29, 14)));
    }

    /// Bridge netfilter and forwarding off on a k0s node whose k0s runs no kubelet (after
    /// a reboot) are warnings: k0s sets both at its next start, before its kubelet. Off while
    /// a kubelet runs, they are critical: something reset them after k0s's start.
    #[test]
    fn off_is_critical_only_while_the_installer_runs_its_kubelet() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/rules/_upstream/k0s-1.34-ubuntu2204-worker-after-reboot/root");
        let raw = crate::facts::raw::from_tree(&root).expect("fixture tree");
        assert_eq!(
            bridge_and_forwarding(&raw, FlavourKind::K0s),
            [Severity::Warning, Severity::Warning]
        );
        // k0s's unit reads active while k0s waits for its worker profile: still before its
        // kernel setup, until it writes the kubelet's config under /run.
        let mut waiting = raw.clone();
        crate::testing::set_units(&mut waiting, &[("k0sworker", "active")]);
        assert_eq!(
            bridge_and_forwarding(&waiting, FlavourKind::K0s),
            [Severity::Warning, Severity::Warning]
        );
        // Past it (the kubelet crashed, k0s restarts it without setting anything again).
        waiting.file(
            "/run/k0s/kubelet/config.yaml",
            crate::facts::raw::FileState::Present,
            None,
        );
        assert_eq!(
            bridge_and_forwarding(&waiting, FlavourKind::K0s),
            [Severity::Critical, Severity::Critical]
        );
        // The same node with k0s's kubelet running.
        let mut running = raw.clone();
        running.file(
            "/proc/77/cmdline",
            crate::facts::raw::FileState::Present,
            Some(b"/srv/k0s/bin/kubelet\0--config=/run/k0s/kubelet/config.yaml\0"),
        );
        running.file(
            "/run/k0s/kubelet/config.yaml",
            crate::facts::raw::FileState::Present,
            Some(b"kind: KubeletConfiguration\nresolvConf: /run/systemd/resolve/resolv.conf\n"),
        );
        running.pids.insert("kubelet".to_owned(), 77);
        assert_eq!(
            bridge_and_forwarding(&running, FlavourKind::K0s),
            [Severity::Critical, Severity::Critical]
        );
    }

    /// k3s runs the kubelet inside its own process: a running k3s (its pid, or its unit
    /// active) keeps bridge netfilter and forwarding off critical; with k3s stopped they are
    /// warnings (k3s sets them when it starts).
    #[test]
    fn a_stopped_k3s_leaves_bridge_netfilter_and_forwarding_to_its_next_start() {
        let mut raw = crate::testing::raw_from(&[
            (
                "/etc/systemd/system/k3s.service",
                // As k3s's install.sh renders it (the fixture's README says how).
                include_str!(
                    "../../tests/fixtures/rules/_upstream/k3s-auto-uplink/root/etc/systemd/system/k3s.service"
                ),
            ),
            (
                "/proc/modules",
                "overlay 151552 0 - Live 0x0000000000000000\n",
            ),
            ("/proc/sys/net/ipv4/ip_forward", "0\n"),
        ]);
        for path in [
            "/proc/sys/net/bridge",
            "/proc/sys/net/bridge/bridge-nf-call-iptables",
            "/etc/rancher/k3s/config.yaml",
        ] {
            raw.file(path, crate::facts::raw::FileState::Missing, None);
        }
        assert_eq!(
            bridge_and_forwarding(&raw, FlavourKind::K3s),
            [Severity::Warning, Severity::Warning]
        );
        let mut running = raw.clone();
        running.pids.insert("k3s".to_owned(), 812);
        assert_eq!(
            bridge_and_forwarding(&running, FlavourKind::K3s),
            [Severity::Critical, Severity::Critical]
        );
        // An active unit runs, whatever process dnsfix saw: RKE2 and k0s restart a crashed
        // kubelet without setting anything again.
        crate::testing::set_units(&mut raw, &[("k3s", "active")]);
        assert_eq!(
            bridge_and_forwarding(&raw, FlavourKind::K3s),
            [Severity::Critical, Severity::Critical]
        );
        // Where no pod traffic is bridged, a stopped k3s changes nothing: info, as always.
        let mut routed = running.clone();
        routed.pids.clear();
        routed.file(
            "/etc/cni/net.d/10-calico.conflist",
            crate::facts::raw::FileState::Present,
            Some(br#"{"name": "k8s-pod-network", "cniVersion": "0.3.1", "plugins": [{"type": "calico"}]}"#),
        );
        assert_eq!(
            bridge_and_forwarding(&routed, FlavourKind::K3s)[0],
            Severity::Info
        );
    }

    /// Where k3s sets bridge netfilter and forwarding at every start, only a sysctl file
    /// that sets one to 0 matters: the next `sysctl --system` applies it under the running
    /// k3s. CentOS 7's initscripts ship such a file for the bridge keys; a CIS-style
    /// baseline sets forwarding to 0.
    #[test]
    fn a_sysctl_file_that_undoes_what_the_installer_sets_is_a_warning() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/rules/_upstream/k3s-centos7-initscripts-bridge-0/root");
        let raw = crate::facts::raw::from_tree(&root).expect("fixture tree");
        let outcomes = |raw: &crate::facts::raw::RawFacts| {
            let facts = NodeFacts::from_raw("node1", raw);
            assert_eq!(facts.flavour.kind, FlavourKind::K3s);
            let host = Host::new("node1");
            let ctx = Ctx::in_cluster(&host, &facts, None);
            [
                bridge_nf_not_persistent(&ctx),
                ip_forward(&ctx),
                bridge_nf_off(&ctx),
            ]
            .map(|o| match o {
                RuleOutcome::Findings(f) => Some((f[0].severity, f[0].evidence.join(" | "))),
                RuleOutcome::Pass => None,
                other => panic!("{other:?}"),
            })
        };
        let [bridge, forward, off] = outcomes(&raw);
        let (severity, evidence) = bridge.expect("a finding");
        assert_eq!(severity, Severity::Warning);
        assert!(
            evidence.contains("/usr/lib/sysctl.d/00-system.conf:8"),
            "{evidence}"
        );
        assert_eq!((forward, off), (None, None));

        // A hardening file that turns forwarding off: a warning while it is on, and what
        // the critical names once a `sysctl --system` applied it.
        let mut hardened = raw.clone();
        hardened.file(
            "/etc/sysctl.d/99-zz-hardening.conf",
            crate::facts::raw::FileState::Present,
            Some(b"# CIS 3.1.1\nnet.ipv4.ip_forward = 0\n"),
        );
        let [_, forward, _] = outcomes(&hardened);
        let (severity, evidence) = forward.expect("a finding");
        assert_eq!(severity, Severity::Warning);
        assert!(
            evidence.contains("/etc/sysctl.d/99-zz-hardening.conf:2"),
            "{evidence}"
        );
        for key in ["ipv4/ip_forward", "bridge/bridge-nf-call-iptables"] {
            hardened.file(
                &format!("/proc/sys/net/{key}"),
                crate::facts::raw::FileState::Present,
                Some(b"0\n"),
            );
        }
        let [bridge, forward, off] = outcomes(&hardened);
        assert_eq!(bridge, None, "off is DNS-BRIDGE-NF-OFF's business");
        for (finding, file) in [
            (forward, "/etc/sysctl.d/99-zz-hardening.conf:2"),
            (off, "/usr/lib/sysctl.d/00-system.conf:8"),
        ] {
            let (severity, evidence) = finding.expect("a finding");
            assert_eq!(severity, Severity::Critical);
            assert!(evidence.contains(file), "{evidence}");
        }

        // On a node systemd boots, an /etc/sysctl.conf no link leads to is not read at
        // boot, but a `sysctl --system` by hand applies it last: it undoes k3s's 1 too.
        let mut trixie = raw.clone();
        trixie.file(
            "/usr/lib/sysctl.d/00-system.conf",
            crate::facts::raw::FileState::Missing,
            None,
        );
        crate::testing::systemd_booted_with_sysctl_conf(
            &mut trixie,
            "net.bridge.bridge-nf-call-iptables = 0\n",
        );
        let [bridge, _, _] = outcomes(&trixie);
        let (severity, evidence) = bridge.expect("a finding");
        assert_eq!(severity, Severity::Warning);
        assert!(evidence.contains("/etc/sysctl.conf:1"), "{evidence}");

        // Without the initscripts file nothing undoes what k3s sets.
        let mut plain = raw.clone();
        plain.file(
            "/usr/lib/sysctl.d/00-system.conf",
            crate::facts::raw::FileState::Missing,
            None,
        );
        assert_eq!(outcomes(&plain), [None, None, None]);
    }

    /// The version playbooks get is the first of `kubelet --version`, the cluster's and
    /// the inventory's that names a 1.x minor, with where it came from.
    #[test]
    fn the_kubelet_version_is_the_first_that_names_a_minor() {
        let (mut host, mut facts) = five_domains();
        host.vars
            .insert("kube_version".into(), serde_json::json!("v1.28.3"));
        let version = |facts: &NodeFacts, cluster: &crate::cluster::Cluster| {
            kubelet_version(&Ctx::in_cluster(&host, facts, Some(cluster)))
        };
        let said = |v: &str, from: &str| Some((v.to_owned(), from.to_owned()));
        assert_eq!(
            version(&facts, &cluster(&[])),
            said("v1.28.3", "inventory kube_version")
        );
        let read = cluster(&[("node1", "v1.30.2")]);
        assert_eq!(
            version(&facts, &read),
            said("v1.30.2", "node node1's status.nodeInfo.kubeletVersion")
        );
        facts.kubelet.version = Some("v1.31.0".into());
        assert_eq!(version(&facts, &read), said("v1.31.0", "kubelet --version"));
        // One that names no 1.x minor is passed over.
        facts.kubelet.version = Some("v2.0".into());
        assert_eq!(
            version(&facts, &cluster(&[("node1", "garbage")])),
            said("v1.28.3", "inventory kube_version")
        );
    }

    /// Without `kubelet --version` the running kubelet's version comes from the cluster,
    /// by the node's name there, before the inventory's kube_version; with neither the
    /// legacy limits are assumed, and said to be.
    #[test]
    fn the_kubelet_version_comes_from_the_cluster_when_the_node_was_not_asked() {
        let (host, facts) = five_domains();
        let outcome = |cluster: Option<&crate::cluster::Cluster>| {
            search_limit(&Ctx::in_cluster(&host, &facts, cluster))
        };
        let RuleOutcome::Findings(f) = outcome(None) else {
            panic!("five domains under the legacy limits: {:?}", outcome(None));
        };
        assert!(f[0].summary.contains("version is unknown"), "{f:?}");

        let read = cluster(&[("node1", "v1.29.4"), ("node2", "v1.25.0")]);
        assert_eq!(outcome(Some(&read)), RuleOutcome::Pass);
        let ctx = Ctx::in_cluster(&host, &facts, Some(&read));
        assert_eq!(
            kube_minor(&ctx).map(|(_, from)| from),
            Some("node node1's status.nodeInfo.kubeletVersion: v1.29.4".to_owned())
        );

        // Another node's version is not this one's.
        let read = cluster(&[("node2", "v1.29.4")]);
        assert!(matches!(outcome(Some(&read)), RuleOutcome::Findings(_)));
        // The cluster's word over the inventory's (an upgrade the inventory has not seen).
        let mut old = host.clone();
        old.vars.insert("kube_version".into(), "v1.25.3".into());
        let read = cluster(&[("node1", "v1.29.4")]);
        let ctx = Ctx::in_cluster(&old, &facts, Some(&read));
        assert_eq!(kube_minor(&ctx).map(|(m, _)| m), Some(29));
    }

    /// The node's kubelet binary is worth asking only when the cluster gave no version for
    /// it and the version changes a finding: five domains pass or fail on it; three never.
    #[test]
    fn the_kubelet_binary_is_asked_only_when_its_version_decides() {
        let (host, facts) = five_domains();
        assert!(kubelet_version_wanted(&host, &facts, &cluster(&[])));
        assert!(kubelet_version_wanted(
            &host,
            &facts,
            &cluster(&[("node2", "v1.29.4")])
        ));
        assert!(!kubelet_version_wanted(
            &host,
            &facts,
            &cluster(&[("node1", "v1.29.4")])
        ));
        let mut asked = facts.clone();
        asked.kubelet.version = Some("v1.29.4".into());
        assert!(!kubelet_version_wanted(&host, &asked, &cluster(&[])));

        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/rules/DNS-SEARCH-LIMIT/legacy-exactly-three/root");
        let raw = crate::facts::raw::from_tree(&root).expect("fixture tree");
        let mut three = NodeFacts::from_raw("node1", &raw);
        three.kubelet.version = None;
        assert!(!kubelet_version_wanted(&host, &three, &cluster(&[])));
    }
}
