//! The file the kubelet hands `dnsPolicy: Default` pods (CoreDNS, nodelocaldns): a
//! loopback server in it (DNS-KUBELET-LOOPBACK), only the cluster's own DNS
//! (DNS-CLUSTER-SELF-FORWARD), the file missing now or after the next boot
//! (DNS-KUBELET-RESOLVCONF-MISSING), more servers than pods get (DNS-NAMESERVER-LIMIT).

use super::node_resolver::{enable_resolved, resolved_words};
use super::{
    Ctx, NO_KUBELET, PodResolv, RuleOutcome, forwards_elsewhere, kubespray_deploys_coredns,
    ns_evidence, parsed_pod_resolv, persist_hint, pod_resolv, resolv_chain, restart_hint,
    unrendered_upstream_dns_server, upstream_dns_servers,
};
use crate::diagnose::finding::{Finding, Severity};
use crate::facts::node_facts::{Effective, FlavourKind, Observed, ResolvFile, UnitState};
use crate::facts::raw::FileState;
use crate::facts::resolv_conf::{Nameserver, ResolvConf, is_loopback};

/// The rule of a kubelet that hands CoreDNS a loopback nameserver.
pub(crate) const KUBELET_LOOPBACK: &str = "DNS-KUBELET-LOOPBACK";
/// The rule of a kubelet whose file sends CoreDNS back to the cluster's own DNS.
pub(crate) const CLUSTER_SELF_FORWARD: &str = "DNS-CLUSTER-SELF-FORWARD";
/// The rule of a kubelet whose resolvConf is missing, unusable or gone at the next boot.
pub(crate) const KUBELET_RESOLVCONF_MISSING: &str = "DNS-KUBELET-RESOLVCONF-MISSING";

/// systemd-resolved runs and its uplink file lists servers, none loopback and none of the
/// cluster's own: a file kubelet can hand to CoreDNS. (A Kubespray uplink file holding
/// 169.254.25.10 is not one: its "upstream" is nodelocaldns itself.)
/// `p` lists servers, none loopback and none the cluster's own.
pub(super) fn only_real_servers(ctx: &Ctx, p: &ResolvConf) -> bool {
    !p.nameservers.is_empty()
        && p.loopback_nameservers().is_empty()
        && !p
            .nameservers
            .iter()
            .any(|n| n.ip.is_some_and(|ip| ctx.cluster.contains(&ip)))
}

/// The uplink file is a fix for the kubelet: clean now, and still one after the next boot
/// and the next Kubespray run.
fn resolved_uplink_clean(ctx: &Ctx) -> bool {
    let up = &ctx.facts.resolver.systemd_uplink;
    ctx.facts.services.systemd_resolved == UnitState::Active
        && !ctx.facts.services.resolved_gone_at_boot()
        && !super::kubespray_resolved_will_loop(ctx.host, ctx.facts)
        && up
            .parsed
            .as_ref()
            .is_some_and(|p| only_real_servers(ctx, p))
}

pub(super) fn kubelet_loopback(ctx: &Ctx) -> RuleOutcome {
    let (e, f, p) = match parsed_pod_resolv(ctx, KUBELET_LOOPBACK) {
        Ok(parsed) => parsed,
        Err(outcome) => return outcome,
    };
    // Pods get the first three servers only (kubelet formDNSNameserversFitsLimits).
    let lo: Vec<&Nameserver> = p
        .nameservers
        .iter()
        .take(MAX_POD_NAMESERVERS)
        .filter(|n| n.ip.is_some_and(is_loopback))
        .collect();
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
    let mut evidence = vec![format!("{} → {}", resolv_chain(e, f), ns_evidence(f, &lo))];
    // Where CoreDNS and nodelocaldns forward elsewhere than this file, nothing loops; other
    // dnsPolicy: Default pods still get a server in their own network namespace.
    // Only CoreDNS loops on a loopback server: NodeLocal DNSCache runs in the host's
    // network namespace, where the loopback is the host's own resolver.
    let elsewhere = forwards_elsewhere(ctx, ctx.coredns_forwards_to_file);
    let (severity, summary) = match (elsewhere, microk8s_forward_unknown(ctx)) {
        (None, Some(why)) => {
            evidence.push(why);
            (
                Severity::Warning,
                format!(
                    "kubelet hands dnsPolicy: Default pods a resolv.conf with loopback nameserver {}: such pods off the host network ask their own network namespace, where nothing answers; whether CoreDNS loops on it is not known: its Corefile was not read, and MicroK8s's dns addon forwards . to the kubelet's file only in some setups (else to 8.8.8.8 and 8.8.4.4)",
                    addrs.join(", ")
                ),
            )
        }
        (None, None) => (
            Severity::Critical,
            format!(
                "kubelet hands CoreDNS/nodelocaldns a resolv.conf with loopback nameserver {}: they forward to themselves and crash with a loop",
                addrs.join(", ")
            ),
        ),
        (Some(why), _) => {
            evidence.push(why);
            (
                Severity::Warning,
                format!(
                    "kubelet hands dnsPolicy: Default pods a resolv.conf with loopback nameserver {}: CoreDNS does not loop (it forwards elsewhere), but other such pods off the host network ask their own network namespace, where nothing answers",
                    addrs.join(", ")
                ),
            )
        }
    };
    RuleOutcome::Findings(vec![ctx.finding(
        KUBELET_LOOPBACK,
        severity,
        summary,
        evidence,
        format!(
            "{target}; {}; {}, then recreate the CoreDNS and nodelocaldns pods",
            persist_hint(ctx),
            restart_hint(ctx)
        ),
    )])
}

/// On MicroK8s, where CoreDNS's Corefile was not read, why its `forward .` is not known.
/// MicroK8s's dns addon (microk8s-core-addons addons/dns/enable, since fd59748, MicroK8s
/// 1.26) writes `forward . /etc/resolv.conf`, CoreDNS's own file (the one the kubelet hands
/// it), only where the kubelet's arguments file named a --resolv-conf when it was enabled,
/// or where scripts/find-resolv-conf.py found a file with no loopback server (which it then
/// gives the kubelet too); otherwise `forward . 8.8.8.8 8.8.4.4`. Before (1.25 and
/// earlier) it forwarded to 8.8.8.8 and 8.8.4.4 unless enabled as `dns:/etc/resolv.conf`.
/// Either way `microk8s enable dns:SERVERS` forwards to those.
fn microk8s_forward_unknown(ctx: &Ctx) -> Option<String> {
    (ctx.facts.flavour.kind == FlavourKind::MicroK8s && ctx.coredns_forwards_to_file.is_none())
        .then(|| {
            "CoreDNS's Corefile (kube-system/coredns) was not read: MicroK8s's dns addon writes `forward . /etc/resolv.conf` (this file, in CoreDNS's pod) only where, when it was enabled, the kubelet's arguments file named a --resolv-conf or (1.26 and later) a resolv.conf without loopback servers was found on the node; otherwise `forward . 8.8.8.8 8.8.4.4` (1.25 and earlier: unless enabled as dns:/etc/resolv.conf), or the servers `microk8s enable dns:SERVERS` was given".to_owned()
        })
}

/// How many nameservers kubelet hands a pod: the first three of its file
/// (validation.MaxDNSNameservers).
const MAX_POD_NAMESERVERS: usize = 3;

fn only_cluster<'p>(ctx: &Ctx, p: &'p ResolvConf) -> Option<Vec<&'p Nameserver>> {
    let ns: Vec<&Nameserver> = p.nameservers.iter().collect();
    let all_cluster = !ns.is_empty()
        && ns
            .iter()
            .all(|n| n.ip.is_some_and(|ip| ctx.cluster.contains(&ip)));
    all_cluster.then_some(ns)
}

pub(super) fn cluster_self_forward(ctx: &Ctx) -> RuleOutcome {
    let mut findings = Vec::new();
    let cluster: Vec<String> = ctx.cluster.iter().map(|ip| ip.to_string()).collect();
    let cluster = cluster.join(", ");
    // Where CoreDNS and nodelocaldns forward elsewhere (upstream_dns_servers, or what the
    // cluster's Corefiles say), a cluster address in kubelet's file cannot loop.
    let elsewhere = forwards_elsewhere(ctx, ctx.corefile_forwards_to_file);
    let upstream_note = match (&elsewhere, ctx.corefile_forwards_to_file) {
        (Some(why), _) => why.clone(),
        (None, Some(true)) => {
            "the cluster's Corefiles forward . to this file (their lines follow)".to_owned()
        }
        (None, _) => {
            "upstream_dns_servers: not set, so CoreDNS/nodelocaldns forward . to this file"
                .to_owned()
        }
    };
    match pod_resolv(ctx) {
        PodResolv::Parsed(e, f, p) => {
            let hits: Vec<&Nameserver> = p
                .nameservers
                .iter()
                .take(MAX_POD_NAMESERVERS)
                .filter(|n| n.ip.is_some_and(|ip| ctx.cluster.contains(&ip)))
                .collect();
            if !hits.is_empty()
                && elsewhere.is_none()
                && ctx.corefile_forwards_to_file.is_none()
                && kubespray_deploys_coredns(ctx.host)
                && let Some(template) = unrendered_upstream_dns_server(ctx)
            {
                // Kubespray forwards to what Ansible renders: maybe real servers.
                return ctx.unknown_because(
                    CLUSTER_SELF_FORWARD,
                    format!(
                        "kubelet hands CoreDNS/nodelocaldns a resolv.conf listing the cluster's own DNS ({}), and upstream_dns_servers holds {}, a template dnsfix does not render: whether CoreDNS forwards there or to this file is not known",
                        hits.iter().map(|n| n.address.as_str()).collect::<Vec<_>>().join(", "),
                        crate::text::escape(&template)
                    ),
                    "run dnsfix where it can read the cluster's Corefiles (kubectl on a kube_control_plane host), or write upstream_dns_servers as addresses in the inventory".into(),
                );
            }
            if !hits.is_empty() && elsewhere.is_none() {
                // CoreDNS's forward plugin picks among the servers, so one cluster
                // address among real ones still sends part of the traffic (and the loop
                // probe) back into the cluster (kubespray#9948).
                let listed: Vec<&str> = hits.iter().map(|n| n.address.as_str()).collect();
                findings.push(ctx.finding(
                    CLUSTER_SELF_FORWARD,
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
                    if super::coredns_not_kubesprays(ctx) {
                        // upstream_dns_servers renders nothing into this CoreDNS.
                        format!(
                            "{}; and keep only real servers in the file kubelet hands to pods; recreate the CoreDNS and nodelocaldns pods",
                            super::coredns_forward_knob(ctx)
                        )
                    } else if upstream_dns_servers(ctx).is_empty() {
                        "set upstream_dns_servers (CoreDNS and nodelocaldns then forward there instead of /etc/resolv.conf) and keep only real servers in the file kubelet hands to pods; recreate the CoreDNS and nodelocaldns pods".into()
                    } else {
                        "forward . in the coredns and nodelocaldns Corefiles to upstream_dns_servers, as Kubespray renders them once it is set (DNS-COREFILE-UPSTREAM-DRIFT), and keep only real servers in the file kubelet hands to pods; recreate the CoreDNS and nodelocaldns pods".into()
                    },
                ));
            } else if let Some(latent) = kubespray_loop_to_come(ctx, e, f, hits.is_empty()) {
                findings.push(latent);
            } else if let Some(ns) = only_cluster(ctx, p) {
                // Where the kubelet's file is the host's own resolver, the fix is the host's.
                let host = super::host_servers(ctx.facts);
                // The parsed addresses, never the line's word: it reaches a command to paste.
                let listed: Vec<String> = ns
                    .iter()
                    .filter_map(|n| n.ip)
                    .map(|ip| ip.to_string())
                    .collect();
                let fix = same_file(f, host.file)
                    .then(|| super::resolver_owner::nm_self_forward_fix(ctx, host.via, &listed))
                    .flatten()
                    .unwrap_or_else(|| "list real upstream servers after the cluster IP on the host (Kubespray: nameservers; systemd-resolved: a resolved.conf.d drop-in)".into());
                findings.push(ctx.finding(
                    CLUSTER_SELF_FORWARD,
                    Severity::High,
                    "the resolv.conf kubelet hands to dnsPolicy=Default pods lists only the cluster's DNS: no loop (CoreDNS forwards elsewhere), but those pods and the node have no real upstream while cluster DNS is down".into(),
                    vec![format!("{} → {}", resolv_chain(e, f), ns_evidence(f, &ns)), upstream_note.clone()],
                    fix,
                ));
            }
        }
        PodResolv::Unknown(why) => return ctx.unknown(CLUSTER_SELF_FORWARD, why),
        PodResolv::NoKubelet | PodResolv::Broken => {}
    }
    if findings.is_empty()
        && let Some(finding) = host_self_forward(ctx, &cluster)
    {
        findings.push(finding);
    }
    name_resolver_sources(ctx, &mut findings);
    if findings.is_empty() {
        RuleOutcome::Pass
    } else {
        RuleOutcome::Findings(findings)
    }
}

/// The host's own resolver, what the host's processes (and Kubespray's next run) use, where
/// it is not the kubelet's file, lists only the cluster's DNS (`cluster`: its addresses, for
/// the evidence). It is the file host-upstream-dns changes ([`super::host_servers`]): where
/// /etc/resolv.conf names only systemd-resolved's stub and systemd-resolved runs, the servers
/// it asks, its uplink file, through its stub link or the static file, and through any other
/// file that lists only the stub (a copy of it, NetworkManager's, resolvconf's on Ubuntu
/// 18.04), whoever writes that file.
fn host_self_forward(ctx: &Ctx, cluster: &str) -> Option<Finding> {
    let servers = super::host_servers(ctx.facts);
    let host = servers.file;
    let pod = ctx.facts.kubelet.pod_resolv_conf.as_ref();
    if pod.is_some_and(|pod| same_file(pod, host)) {
        return None;
    }
    let ns = only_cluster(ctx, host.parsed.as_ref()?)?;
    let mut evidence = vec![
        ns_evidence(host, &ns),
        format!("cluster DNS addresses: {cluster}"),
    ];
    let etc = &ctx.facts.resolver.etc_resolv_conf;
    if servers.through_stub {
        // A file of another kind that names only the stub: say how the node gets there.
        evidence.insert(0, format!("{} names only systemd-resolved's stub, and systemd-resolved runs: the node asks the servers it lists in {}", etc.path, host.path));
    }
    // The parsed addresses, never the line's word (`169.254.25.10%$(cmd)` parses as the
    // address before its `%`): they reach a command to paste as root.
    let listed: Vec<String> = ns
        .iter()
        .filter_map(|n| n.ip)
        .map(|ip| ip.to_string())
        .collect();
    let mut fix = super::resolver_owner::nm_self_forward_fix(ctx, servers.via, &listed)
        .unwrap_or_else(|| "add real upstream servers after the cluster IP: with systemd-resolved, DNS= in a resolved.conf.d drop-in (FallbackDNS, where Kubespray puts upstream_dns_servers and nameservers, is used only while no DNS= server is known at all: Kubespray's DNS= names the cluster address); in a plain /etc/resolv.conf Kubespray writes, its nameservers".to_owned());
    // A plain file another program writes anew: servers written into it go at its next
    // write (DNS-RESOLV-MANAGED-ELSEWHERE says what shows it).
    if host.path == etc.path
        && let Some(w) = crate::facts::resolv_writer::resolv_writer(ctx.facts)
    {
        fix.push_str(&format!(
            "; {} writes this /etc/resolv.conf anew, so give it the servers there instead: {}",
            w.writer.name(),
            w.writer.fix()
        ));
    }
    Some(ctx.finding(
        CLUSTER_SELF_FORWARD,
        Severity::High,
        "the host's own resolver lists only the cluster's DNS: the node cannot resolve anything while cluster DNS is down (and CoreDNS cannot start without the node)".into(),
        evidence,
        fix,
    ))
}

/// `a` and `b` are one file: the same path where the links lead (`readlink -f`), else as
/// named.
fn same_file(a: &ResolvFile, b: &ResolvFile) -> bool {
    a.canonical.as_ref().unwrap_or(&a.path) == b.canonical.as_ref().unwrap_or(&b.path)
}

/// The loop Kubespray's next run makes of the kubelet's file: systemd-resolved's uplink
/// file, clean now, where Kubespray's last play will put its cluster address
/// ([`super::kubespray_resolved_will_loop`]: a run stopped before that play, no
/// upstream_dns_servers) and render the Corefiles it deploys to forward to it
/// (coredns-config.yml.j2, nodelocaldns-config.yml.j2 @46dbdd39), whatever they say now.
fn kubespray_loop_to_come(
    ctx: &Ctx,
    e: &Effective<String>,
    f: &ResolvFile,
    clean: bool,
) -> Option<Finding> {
    const UPLINK: &str = "/run/systemd/resolve/resolv.conf";
    let uplink = f.canonical.as_deref().unwrap_or(&f.path) == UPLINK;
    (clean && uplink && super::kubespray_resolved_will_loop(ctx.host, ctx.facts)).then(|| {
        ctx.finding(
            CLUSTER_SELF_FORWARD,
            Severity::Warning,
            "Kubespray's next run puts the cluster's own DNS address into the resolv.conf kubelet hands CoreDNS/nodelocaldns, which forward to it: upstream lookups will loop (kubespray#9948)".into(),
            vec![
                format!("{} (no cluster address yet)", resolv_chain(e, f)),
                "/etc/systemd/resolved.conf.d/kubespray.conf: Kubespray's last play writes DNS= nodelocaldns_ip (or the CoreDNS address) there (host_resolvconf), so the last run ended before it (stopped, or one that runs no such play: cluster.yml --tags, upgrade-only-k8s.yml)".into(),
                "upstream_dns_servers: not set, so Kubespray renders the CoreDNS and nodelocaldns Corefiles to forward . to this file".into(),
            ],
            "set upstream_dns_servers in the inventory before the next Kubespray run (the Corefiles then forward there), or give the kubelet a file of real servers only (kube_resolv_conf)".into(),
        )
    })
}

/// The lines of systemd-resolved's configuration that put a cluster address among the
/// node's servers where no inventory setting takes it out, added to the evidence: on EKS
/// the NodeConfig's, which nodeadm writes at every boot; on Kubespray, one a version before
/// v2.24 left in resolved.conf itself.
fn name_resolver_sources(ctx: &Ctx, findings: &mut [crate::diagnose::Finding]) {
    let cluster = |w: &str| {
        w.parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ctx.cluster.contains(&ip))
    };
    // On EKS the cluster address may come from the NodeConfig, which nodeadm writes into
    // systemd-resolved's configuration at every boot: it comes back on every new node.
    if let Some(line) = super::nodeadm_resolved(ctx, ("DNS=", "nameservers"), cluster) {
        for finding in findings.iter_mut() {
            finding.evidence.push(line.clone());
        }
    }
    // Said where the finding's file is one systemd-resolved writes.
    if let Some(line) = super::kubespray_legacy_resolved(ctx, cluster) {
        for finding in findings.iter_mut() {
            if finding
                .evidence
                .iter()
                .any(|e| e.contains("/run/systemd/resolve/"))
            {
                finding.evidence.push(line.clone());
            }
        }
    }
}

pub(super) fn resolvconf_missing(ctx: &Ctx) -> RuleOutcome {
    let k = &ctx.facts.kubelet;
    let e = match &k.resolv_conf {
        Observed::Absent => return RuleOutcome::NotApplicable(NO_KUBELET.into()),
        Observed::Unknown(why) => {
            return ctx.unknown(KUBELET_RESOLVCONF_MISSING, why.clone());
        }
        Observed::Known(e) => e,
    };
    let id = KUBELET_RESOLVCONF_MISSING;
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
            format!("kubelet resolvConf {} does not exist: kubelet reads it for every pod, so no new pod can start on this node", f.path),
            vec![format!("{chain} → no such file")],
            fix,
        )]),
        (FileState::Directory, _) => RuleOutcome::Findings(vec![ctx.finding(
            id,
            Severity::Critical,
            format!("kubelet resolvConf {} is a directory", f.path),
            vec![format!("{chain} → a directory")],
            fix,
        )]),
        (FileState::Unreadable, _) => ctx.unknown(id, format!("{} could not be read", f.path)),
        // kubelet dns.go parseResolvConf: "nameserver list is empty", and GetPodDNS returns
        // the error for every pod before it looks at the pod's dnsPolicy.
        (FileState::Present, Some(p))
            if !p.empty_nameserver_lines.is_empty()
                // 1.12 and before skipped the line (the error came with 1.13).
                && super::kube_minor(ctx).is_none_or(|(m, _)| m >= 13) =>
        {
            RuleOutcome::Findings(vec![ctx.finding(
            id,
            Severity::Critical,
            format!("kubelet resolvConf {} has a nameserver line with no address: kubelet rejects the file (\"nameserver list is empty\") for every pod, so no new pod can start on this node", f.path),
            vec![format!(
                "{chain} → `nameserver` with no address on line {}",
                p.empty_nameserver_lines.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
            )],
            "give the line its address or remove it, in whatever writes the file (kubelet reads it again for the next pod); or point resolvConf at a file with real nameservers".into(),
        )])
        }
        (FileState::Present, Some(p)) if p.nameservers.is_empty() => RuleOutcome::Findings(vec![ctx.finding(
            id,
            Severity::Critical,
            format!("kubelet resolvConf {} lists no nameserver", f.path),
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
    let file = if path == f.path {
        f.path.clone()
    } else {
        format!("{} ({path})", f.path)
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
        KUBELET_RESOLVCONF_MISSING,
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

pub(super) fn nameserver_limit(ctx: &Ctx) -> RuleOutcome {
    let (e, f, p) = match parsed_pod_resolv(ctx, "DNS-NAMESERVER-LIMIT") {
        Ok(parsed) => parsed,
        Err(outcome) => return outcome,
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
        format!(
            "{} nameservers where kubelet keeps 3: {} {} left out of pods' resolv.conf (the kubelet's DNSConfigForming events say so)",
            p.nameservers.len(),
            dropped.join(", "),
            if dropped.len() == 1 { "is" } else { "are" }
        ),
        vec![format!("{} → {}", resolv_chain(e, f), ns_evidence(f, &all))],
        "list at most 3 nameservers in the file kubelet hands to pods (or give kubelet a dedicated resolv.conf)".into(),
    )])
}
