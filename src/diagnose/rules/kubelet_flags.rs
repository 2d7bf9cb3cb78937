//! The kubelet's DNS settings themselves: clusterDNS past a NodeLocal DNSCache that does
//! not listen there (DNS-NODELOCAL-CLUSTERDNS), a flag that shadows the config file
//! (DNS-KUBELET-FLAG-SHADOW), no clusterDNS or clusterDomain at all
//! (DNS-KUBELET-NO-CLUSTER-DNS).

use std::net::IpAddr;

use super::kubelet_file::only_real_servers;
use super::{Ctx, NO_KUBELET, PodResolv, RuleOutcome, declared_domain, pod_resolv, restart_hint};
use crate::diagnose::finding::{Finding, Severity};
use crate::facts::kubelet::{ADDED_TO, KUBELET_ARG};
use crate::facts::node_facts::{Effective, FlavourKind, Observed, Shadowed, Source};
use crate::facts::sockets;

pub(super) fn nodelocal_clusterdns(ctx: &Ctx) -> RuleOutcome {
    let id = "DNS-NODELOCAL-CLUSTERDNS";
    let dns = match &ctx.facts.kubelet.cluster_dns {
        Observed::Known(e) => e,
        Observed::Absent => return RuleOutcome::NotApplicable(NO_KUBELET.into()),
        Observed::Unknown(why) if ctx.facts.nodelocaldns.is_none() => {
            return RuleOutcome::NotApplicable(format!("no nodelocaldns interface ({why})"));
        }
        Observed::Unknown(why) => return ctx.unknown(id, why.clone()),
    };
    if let Some(outcome) = clusterdns_unanswered(ctx, dns) {
        return outcome;
    }
    let Some(addrs) = &ctx.facts.nodelocaldns else {
        return RuleOutcome::NotApplicable("no nodelocaldns interface".into());
    };
    // node-cache answers, and its NOTRACK rules intercept, only the addresses it was given
    // (-localip), all of which it puts on its interface: the upstream manifest gives it the
    // link-local address and the kube-dns service IP (cluster/addons/dns/nodelocaldns,
    // `-localip __PILLAR__LOCAL__DNS__,__PILLAR__DNS__SERVER__`), so in iptables mode a
    // clusterDNS of the service IP reaches it; the same manifest in IPVS mode (where
    // kube-ipvs0 holds the service IP) and Kubespray's in every mode
    // (nodelocaldns-daemonset.yml.j2 @46dbdd39: `-localip {{ nodelocaldns_ip }}`) give it the
    // link-local one only.
    // Pods ask clusterDNS's servers in order: the cache serves them where it holds the
    // first (a later one is asked only after a timeout), as a second --cluster-dns on EKS
    // gives (nodeadm appends a nodeadm.d file's flags to the user data's).
    let local = link_local(addrs.iter());
    if local.is_empty() || dns.value.first().is_some_and(|first| addrs.contains(first)) {
        return RuleOutcome::Pass;
    }
    // DNS works, through the kube-dns service to CoreDNS, without the cache.
    let (_, mode_evidence) = super::kube_proxy_ipvs(ctx);
    let summary = if dns.value.iter().any(|a| addrs.contains(a)) {
        format!(
            "nodelocaldns listens on {} but kubelet clusterDNS is {}, {} first, an address it does not hold: pods ask that address (the kube-dns Service, where it is that), and the local cache only where it does not answer",
            local[0],
            dns.value.join(", "),
            dns.value[0]
        )
    } else {
        format!(
            "nodelocaldns listens on {} but kubelet clusterDNS is {}, an address it does not hold: pods ask that address (the kube-dns Service, where it is that) and never the local cache",
            local[0],
            dns.value.join(", ")
        )
    };
    RuleOutcome::Findings(vec![ctx.finding(
        id,
        Severity::Warning,
        summary,
        vec![
            format!("interface nodelocaldns: {}", addrs.join(", ")),
            format!("{} clusterDNS: [{}]", dns.source.at(), dns.value.join(", ")),
            mode_evidence,
        ],
        format!("{} and recreate pods", set_cluster_dns(ctx, dns, local[0])),
    )])
}

/// How to give the kubelet clusterDNS `[addr]` on this node, and restart it: on EKS in the
/// NodeConfig, as nodeadm writes config.json anew at every boot (its spec.kubelet.config
/// goes to a --config-dir drop-in, where clusterDNS counts in every kubelet that reads
/// one).
/// On k3s and RKE2 as the kubelet's `--cluster-dns` from `kubelet-arg`: they write their
/// own clusterDNS into a kubelet config drop-in at every start, and the flag beats it.
fn set_cluster_dns(ctx: &Ctx, dns: &Effective<Vec<String>>, addr: &str) -> String {
    // A --cluster-dns flag beats every config file and drop-in (on EKS nodeadm puts the
    // NodeConfig's spec.kubelet.flags last on the command line: environment.go).
    if dns.source.kind == "flag" {
        return flag_fix(ctx, dns, &addr.replace(", ", ","));
    }
    let restart = restart_hint(ctx);
    match ctx.facts.flavour.kind {
        FlavourKind::Eks => format!(
            "set spec.kubelet.config.clusterDNS to [{addr}] in the node's NodeConfig (nodeadm writes config.json anew at every boot); {restart}"
        ),
        FlavourKind::K3s | FlavourKind::Rke2 => {
            let program = match ctx.facts.flavour.kind {
                FlavourKind::Rke2 => "RKE2",
                _ => "k3s",
            };
            let reload = match dns.source.kind.as_str() {
                "k3s_flag" => "systemctl daemon-reload, then ",
                _ => "",
            };
            match dns
                .source
                .detail
                .as_deref()
                .and_then(|d| d.strip_prefix(KUBELET_ARG))
            {
                Some("") => format!(
                    "change the kubelet-arg cluster-dns= at {} to {addr}; {reload}{restart}",
                    dns.source.at()
                ),
                Some(earlier) => format!(
                    "leave one kubelet-arg cluster-dns= entry, cluster-dns={addr}: {program} passes every one on and the kubelet adds them up (at {}{}); {reload}{restart}",
                    dns.source.at(),
                    earlier
                        .strip_prefix(ADDED_TO)
                        .map(|e| format!(", {e}"))
                        .unwrap_or_default()
                ),
                None if dns.source.kind == crate::facts::kubelet::RANCHER_DROPIN
                    && !crate::facts::kubelet::rancher_chose_cluster_dns(&dns.source) =>
                {
                    format!(
                        "set clusterDNS to [{addr}] in {}, a kubelet config drop-in after {program}'s own (where it is {program}'s copy, in the file it copies); {restart}",
                        dns.source.at()
                    )
                }
                None => format!(
                    "give the kubelet --cluster-dns={addr}: `kubelet-arg+: [cluster-dns={addr}]` in a drop-in in {}.d/ named after the others (a kubelet flag beats the clusterDNS {program} writes into the kubelet's config at every start; kubelet-arg+ keeps the other kubelet-args, which a later file's plain kubelet-arg: replaces); {restart}",
                    ctx.facts
                        .kubelet
                        .config_path
                        .as_deref()
                        .unwrap_or("config.yaml"),
                ),
            }
        }
        // k0s writes the kubelet's config anew at every start, and a worker profile may not
        // set clusterDNS (k0s workerprofile.go).
        FlavourKind::K0s => format!(
            "add --cluster-dns={addr} to the k0s service's --kubelet-extra-args (k0s install worker or controller with --force; systemctl daemon-reload); {restart}"
        ),
        FlavourKind::MicroK8s => format!(
            "set --cluster-dns={addr}{} in {} (kept across snap refreshes; microk8s join and leave replace it); {restart}",
            microk8s_domain_too(ctx),
            microk8s_args_file(ctx)
        ),
        _ => format!("set clusterDNS to [{addr}]; {restart}"),
    }
}

/// The IPv4 link-local addresses among `addrs`, cloud metadata and DNS endpoints left out
/// (169.254.169.253 and .254 are the hypervisor's, not an address of the node).
pub(in crate::diagnose) fn link_local<'a>(
    addrs: impl Iterator<Item = &'a String>,
) -> Vec<&'a String> {
    addrs
        .filter(|a| crate::facts::node_facts::is_node_local_address(a))
        .collect()
}

/// clusterDNS names a link-local address, NodeLocal DNSCache's kind, that nothing on the
/// node holds: not the nodelocaldns interface, which holds other addresses; or, on a
/// Kubespray node whose clusterDNS is its nodelocaldns_ip, no such interface at all
/// (node-cache takes it down when SIGTERM stops it, cmd/node-cache TeardownNetworking,
/// unless -skipteardown; a cache that crashed leaves it, DNS-NODELOCAL-DOWN). Elsewhere a
/// link-local clusterDNS may be another node-local resolver's (AKS LocalDNS on its
/// `localdns` interface) or redirected by Cilium's Local Redirect Policy with no interface
/// at all: nothing is said there, and with Cilium as the CNI the missing interface is
/// unknown. Every ClusterFirst lookup then times out, or, where
/// clusterDNS lists a server after it, waits out that timeout first.
fn clusterdns_unanswered(ctx: &Ctx, dns: &Effective<Vec<String>>) -> Option<RuleOutcome> {
    let id = "DNS-NODELOCAL-CLUSTERDNS";
    let wanted = link_local(dns.value.iter());
    let first = *wanted.first()?;
    let restart = restart_hint(ctx);
    let (what, on_node, fix) = match &ctx.facts.nodelocaldns {
        // Its first link-local server, the one pods ask before any later one.
        Some(addrs) if addrs.contains(first) => return None,
        Some(addrs) => (
            format!(
                "kubelet clusterDNS {first} is not on the nodelocaldns interface, which holds {}",
                addrs.join(", ")
            ),
            format!("interface nodelocaldns: {}", addrs.join(", ")),
            match link_local(addrs.iter()).first() {
                Some(local) => format!(
                    "{} and recreate pods; or give node-cache -localip {first}",
                    set_cluster_dns(ctx, dns, local)
                ),
                None => {
                    format!("set clusterDNS to the cache's address; {restart} and recreate pods")
                }
            },
        ),
        None if ctx.facts.nodelocaldns_absent() && kubespray_nodelocaldns(ctx, first) => {
            if ctx.facts.cni.plugins.iter().any(|p| p == "cilium-cni") {
                return Some(ctx.unknown(
                    id,
                    format!("kubelet clusterDNS {first} is Kubespray's nodelocaldns_ip and there is no nodelocaldns interface, but Cilium's Local Redirect Policy can serve the address without one{}", crate::facts::cni::cilium_caveat(&ctx.facts.cni)),
                ));
            }
            (
                format!(
                    "kubelet clusterDNS {first} is Kubespray's nodelocaldns_ip, but this node has no nodelocaldns interface"
                ),
                "no nodelocaldns interface (/sys/class/net/nodelocaldns does not exist)".to_owned(),
                format!(
                    "get the node-local-dns pod running on this node (kubectl -n kube-system get pods -l k8s-app=node-local-dns -o wide; it takes its interface down when it is stopped), listening on {first}; or, without NodeLocal DNSCache (enable_nodelocaldns: false), set clusterDNS to the kube-dns service IP, {restart} and recreate pods"
                ),
            )
        }
        None => return None,
    };
    let fallback: Vec<&String> = dns.value.iter().filter(|a| !wanted.contains(a)).collect();
    let (severity, summary) = if fallback.is_empty() {
        (
            Severity::Critical,
            format!(
                "{what}: nothing on this node answers it, so every lookup of its ClusterFirst pods times out"
            ),
        )
    } else {
        (
            Severity::High,
            format!(
                "{what}: nothing on this node answers it, so every lookup of its ClusterFirst pods waits out its timeout before {} answers",
                fallback[0]
            ),
        )
    };
    Some(RuleOutcome::Findings(vec![ctx.finding(
        id,
        severity,
        summary,
        vec![
            format!("{} clusterDNS: [{}]", dns.source.at(), dns.value.join(", ")),
            on_node,
        ],
        fix,
    )]))
}

/// A Kubespray node whose clusterDNS `addr` is its NodeLocal DNSCache address: the
/// inventory's nodelocaldns_ip, else Kubespray's default 169.254.25.10, with
/// enable_nodelocaldns not turned off (Kubespray's default is on).
pub(in crate::diagnose) fn kubespray_nodelocaldns(ctx: &Ctx, addr: &str) -> bool {
    ctx.facts.flavour.kind == FlavourKind::Kubespray
        && ctx.host.var_truthy("enable_nodelocaldns") != Some(false)
        && ctx
            .host
            .var_str("nodelocaldns_ip")
            .unwrap_or(crate::facts::node_facts::KUBESPRAY_NODELOCALDNS_IP)
            == addr
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

pub(super) fn flag_shadow(ctx: &Ctx) -> RuleOutcome {
    let k = &ctx.facts.kubelet;
    let mut evidence = Vec::new();
    let mut kubeadms_own = true;
    // Where each flag that overrides a different config value is set, and that value.
    let mut overriding: Vec<&Source> = Vec::new();
    let mut overridden: Vec<&Source> = Vec::new();
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
            overriding.push(&e.source);
            overridden.push(&s.source);
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
        // On k3s and RKE2 a kubelet-arg is the way to override the clusterDNS they choose
        // themselves (written into their own drop-in at every start); it shadows only a
        // kubelet config drop-in of the operator's.
        let rancher = matches!(ctx.facts.flavour.kind, FlavourKind::K3s | FlavourKind::Rke2);
        let chosen =
            |s: &&Shadowed| rancher && crate::facts::kubelet::rancher_chose_cluster_dns(&s.source);
        for s in e.shadowed.iter().filter(|s| s.value != v && !chosen(s)) {
            kubeadms_own = false;
            overriding.push(&e.source);
            overridden.push(&s.source);
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
    // nodeadm writes both anew at every boot from the NodeConfig, its spec.kubelet.flags
    // after its own (amazon-eks-ami nodeadm/internal/kubelet/environment.go): the flag is
    // how the NodeConfig says it, the only one for resolvConf on kubelet 1.29-1.31
    // (kubernetes#126630), and config.json is nobody's to edit.
    let all_in = |paths: &[&str]| {
        overriding
            .iter()
            .all(|s| s.path.as_deref().is_some_and(|p| paths.contains(&p)))
    };
    if ctx.facts.flavour.kind == FlavourKind::Eks && all_in(&[crate::facts::node_facts::EKS_ENV]) {
        return RuleOutcome::Findings(vec![ctx.finding(
            "DNS-KUBELET-FLAG-SHADOW",
            Severity::Info,
            "a kubelet flag from the NodeConfig's spec.kubelet.flags overrides nodeadm's kubelet config at every boot".into(),
            evidence,
            "nothing to do while the flag's value is right; to change it, change spec.kubelet.flags in the NodeConfig (the launch template's user data, or a NodeConfig file in /etc/eks/nodeadm.d/), not config.json, which nodeadm rewrites at every boot".into(),
        )]);
    }
    // kubeadm: KUBELET_EXTRA_ARGS in /etc/default/kubelet or /etc/sysconfig/kubelet is the
    // operator's own per-node override, which the packages keep (%config(noreplace)) and
    // `kubeadm upgrade` leaves alone while it rewrites config.yaml: the way to keep a
    // node's own value, as DNS-KUBEADM-CONFIG-DRIFT advises.
    if ctx.facts.flavour.kind == FlavourKind::Kubeadm
        && all_in(&["/etc/default/kubelet", "/etc/sysconfig/kubelet"])
    {
        return RuleOutcome::Findings(vec![ctx.finding(
            "DNS-KUBELET-FLAG-SHADOW",
            Severity::Info,
            "a kubelet flag from the operator's KUBELET_EXTRA_ARGS overrides the config file, which `kubeadm upgrade` rewrites: the flag is kubeadm's per-node override".into(),
            evidence,
            "nothing to do while the flag's value is right; to change it, change the flag there (an edit of config.yaml changes nothing)".into(),
        )]);
    }
    let fix = shadow_fix(ctx, &overriding, &overridden);
    RuleOutcome::Findings(vec![ctx.finding(
        "DNS-KUBELET-FLAG-SHADOW",
        Severity::Warning,
        "a kubelet flag overrides the config file: editing the config file changes nothing".into(),
        evidence,
        fix,
    )])
}

/// The drop-in nodeadm writes the NodeConfig's spec.kubelet.config to (amazon-eks-ami
/// 81fec2e8 nodeadm/internal/kubelet/config.go: kubeletConfigRoot, kubeletConfigDir,
/// "40-nodeadm.conf").
const EKS_NODEADM_DROPIN: &str = "/etc/kubernetes/kubelet/config.json.d/40-nodeadm.conf";

/// How to take out the flags set at `overriding` that shadow the settings at `overridden`.
fn shadow_fix(ctx: &Ctx, overriding: &[&Source], overridden: &[&Source]) -> String {
    let k = &ctx.facts.kubelet;
    // A flag in a unit file or drop-in is gone only after a daemon-reload.
    let reload = if overriding
        .iter()
        .any(|s| s.path.as_deref().is_some_and(super::in_unit_file))
    {
        "systemctl daemon-reload, then "
    } else {
        ""
    };
    // On EKS nodeadm writes the kubelet's config anew at every boot: config.json from its
    // own defaults, and the NodeConfig's spec.kubelet.config into the --config-dir drop-in
    // config.json.d/40-nodeadm.conf (amazon-eks-ami 81fec2e8
    // nodeadm/internal/kubelet/config.go writeKubeletConfig): the value is kept in
    // the NodeConfig, and counts from the boot after.
    // Not resolvConf for a kubelet not known to be 1.32 or later: 1.28 to 1.31 pass over a
    // drop-in's resolvConf (kubernetes#126630), and nodeadm's config.json sets none
    // (writeKubeletConfig, generateKubeletConfig), so the kubelet would fall back to
    // /etc/resolv.conf; --resolv-conf in spec.kubelet.flags counts on every version
    // (nodeadm environment.go appends them last to NODEADM_KUBELET_ARGS).
    let resolv_flag = matches!(&k.resolv_conf, Observed::Known(e)
        if e.source.kind == "flag" && overriding.contains(&&e.source));
    if ctx.facts.flavour.kind == FlavourKind::Eks
        && resolv_flag
        && super::kube_minor(ctx).is_none_or(|(m, _)| m < 32)
    {
        let kubelet = super::kube_minor(ctx).map_or(
            "a kubelet of 1.28 to 1.31 (this one's version is not known)".to_owned(),
            |(_, from)| format!("this kubelet ({from})"),
        );
        format!(
            "remove the flag where it is set (and from whatever puts it there: the AMI or the user data), and keep --resolv-conf as a flag, in the NodeConfig's spec.kubelet.flags (nodeadm passes them on the kubelet's command line at every boot), any other value in its spec.kubelet.config: that goes to {EKS_NODEADM_DROPIN}, a --config-dir drop-in, which {kubelet} does not read resolvConf from (kubernetes#126630); {reload}restart kubelet, and where the NodeConfig changed, {}",
            super::EKS_APPLY
        )
    } else if ctx.facts.flavour.kind == FlavourKind::Eks {
        format!(
            "remove the flag where it is set (and from whatever puts it there: the AMI or the user data), and keep the value in the NodeConfig's spec.kubelet.config (nodeadm writes it to {EKS_NODEADM_DROPIN}, a --config-dir drop-in over config.json, at every boot); {reload}restart kubelet, and where the NodeConfig changed, {}",
            super::EKS_APPLY
        )
    } else {
        format!(
            "remove the flag where it is set and keep the value in {}; {reload}{}",
            kept_in(ctx, overridden, resolv_flag),
            restart_hint(ctx)
        )
    }
}

/// Where a shadowing flag's value is kept once the flag goes: in the `--config-dir` drop-in
/// that sets the key where one does (it beats the config file, so its value is the one that
/// counts then), else in the config file. A `--resolv-conf` kept in a drop-in is read there
/// only from kubelet 1.32 (kubernetes#127421): 1.28 to 1.31 read a drop-in's resolvConf under
/// the spelling `resolverConfig` (kubernetes#126630), so for a kubelet not known to be 1.32
/// or later the key to write is said (`resolv` is whether `--resolv-conf` is among the flags).
fn kept_in(ctx: &Ctx, overridden: &[&Source], resolv: bool) -> String {
    let k = &ctx.facts.kubelet;
    let mut dropins: Vec<&str> = overridden
        .iter()
        .filter(|s| s.kind == "config")
        .filter_map(|s| s.path.as_deref())
        .filter(|p| k.config_dropins.iter().any(|d| d == p))
        .collect();
    dropins.dedup();
    if dropins.is_empty() {
        return "the config file".to_owned();
    }
    let spelling = match super::kube_minor(ctx) {
        _ if !resolv => String::new(),
        Some((minor, _)) if minor >= 32 => String::new(),
        Some((_, from)) => format!(
            " (resolv.conf's file under the key resolverConfig there: kubelet 1.28 to 1.31, this one by {from}, pass over a drop-in's resolvConf, kubernetes#126630)"
        ),
        None => " (resolv.conf's file under both resolvConf and resolverConfig there: kubelet 1.28 to 1.31 read a drop-in's only as resolverConfig, kubernetes#126630, 1.32 and later only as resolvConf, and this kubelet's version is not known)".to_owned(),
    };
    format!(
        "{} (the --config-dir drop-in that sets it, which beats the config file){spelling}",
        dropins.join(", ")
    )
}

/// The kubelet has no clusterDNS address it can use, or no clusterDomain. It parses each
/// clusterDNS entry as an IP address and drops, with a log line only, every one it cannot
/// (kubelet.go NewMainKubelet: `netutils.ParseIPSloppy`; the config's validation does not
/// look at them). With none left, every ClusterFirst pod falls back to dnsPolicy Default,
/// the node's resolvConf, with a MissingClusterDNS event (pkg/kubelet/network/dns/dns.go
/// GetPodDNS); with no clusterDomain, ClusterFirst pods get the cluster's server but none
/// of its search domains (`generateSearchesForDNSClusterFirst` returns the host's).
pub(super) fn no_cluster_dns(ctx: &Ctx) -> RuleOutcome {
    let id = NO_CLUSTER_DNS;
    let k = &ctx.facts.kubelet;
    let dns = match &k.cluster_dns {
        Observed::Known(e) => e,
        Observed::Absent => return RuleOutcome::NotApplicable(NO_KUBELET.into()),
        // Before v1.32 a k3s or RKE2 agent's clusterDNS is its server's, which always has
        // one (its cluster-dns, else the tenth address of its service-cidr) and gives the
        // same to the CoreDNS Service it deploys: the server's node is where to judge it.
        Observed::Unknown(why) if why.contains(crate::facts::kubelet::RANCHER_AGENT) => {
            return RuleOutcome::NotApplicable(format!(
                "{why}: judged on the server's node (its cluster-dns, else the tenth address of its service-cidr)"
            ));
        }
        Observed::Unknown(why) => return ctx.unknown(id, why.clone()),
    };
    let restart = restart_hint(ctx);
    let said = if dns.value.is_empty() {
        "clusterDNS: not set".to_owned()
    } else {
        format!("clusterDNS: [{}]", dns.value.join(", "))
    };
    let evidence = vec![format!("{} {said}", dns.source.at())];
    if !dns.value.iter().any(|a| kubelet_parses_ip(a)) {
        let what = if dns.value.is_empty() {
            "kubelet has no clusterDNS".to_owned()
        } else {
            let entries: Vec<String> = dns.value.iter().map(|v| format!("{v:?}")).collect();
            format!(
                "kubelet's clusterDNS [{}] holds no IP address (kubelet drops every entry it cannot parse as one)",
                entries.join(", ")
            )
        };
        if let Some(info) = empty_by_choice(ctx, dns, &what, &evidence) {
            return info;
        }
        let wanted = no_address_wanted(ctx);
        let fix = match (&wanted, dns.source.kind == "flag") {
            (Some(w), _) => set_cluster_dns(ctx, dns, &w.join(", ")),
            (None, true) => set_cluster_dns(ctx, dns, "the cluster DNS address"),
            (None, false) => format!(
                "{} (the cluster DNS Service's clusterIP: kubectl -n kube-system get svc -l 'k8s-app in (kube-dns,kube-dns-secondary,coredns)' -o jsonpath='{{.items[*].spec.clusterIP}}'; NodeLocal DNSCache's address where it runs)",
                set_cluster_dns(ctx, dns, "KUBE_DNS_IP")
            ),
        };
        let file = match &k.resolv_conf {
            Observed::Known(e) if !e.value.is_empty() => format!("the servers of {}", e.value),
            Observed::Known(_) => "127.0.0.1 (resolvConf \"\")".to_owned(),
            _ => "the kubelet's resolvConf".to_owned(),
        };
        let (evidence, fix) = match ctx.facts.flavour.kind {
            FlavourKind::MicroK8s => microk8s_missed(ctx, evidence, fix),
            _ => (evidence, fix),
        };
        let finding = ctx.finding(
            id,
            Severity::Critical,
            format!(
                "{what}: every ClusterFirst pod on this node falls back to dnsPolicy Default ({file}) and resolves no Service name (MissingClusterDNS events)"
            ),
            evidence,
            format!("{fix}; then recreate the pods created without it"),
        );
        let finding = match wanted {
            Some(w) => finding.wanting(CLUSTER_DNS, w),
            None => finding,
        };
        return RuleOutcome::Findings(vec![also_domain(ctx, finding)]);
    }
    if let Some(outcome) = not_the_cluster_dns(ctx, dns) {
        return outcome;
    }
    match &k.cluster_domain {
        Observed::Known(d) if d.value.is_empty() => {
            let declared = declared_domain(ctx);
            let domain = declared.unwrap_or("cluster.local");
            let finding = ctx.finding(
                id,
                Severity::High,
                "kubelet has no clusterDomain: ClusterFirst pods get the cluster's DNS server but none of its search domains, so short Service names (my-svc, my-svc.my-namespace) do not resolve; only full names do".into(),
                vec![
                    match d.source.kind.as_str() {
                        "default" => format!("{} clusterDomain: not set", d.source.at()),
                        _ => format!("{} clusterDomain: \"\"", d.source.at()),
                    },
                    format!("{} {said}", dns.source.at()),
                ],
                if ctx.facts.flavour.kind == FlavourKind::Eks && d.source.kind == "flag" {
                    // A flag of spec.kubelet.flags beats spec.kubelet.config.
                    format!(
                        "change --cluster-domain to {domain} (the zone of CoreDNS's kubernetes plugin) in the node's NodeConfig's spec.kubelet.flags where it is set, or take it out ({}); {}, then recreate the pods created without it",
                        d.source.at(),
                        super::EKS_FLAG_APPLY
                    )
                } else if ctx.facts.flavour.kind == FlavourKind::Eks {
                    // nodeadm writes config.json and its drop-in anew at every boot.
                    format!(
                        "set spec.kubelet.config.clusterDomain: {domain} (the zone of CoreDNS's kubernetes plugin) in the node's NodeConfig, or take clusterDomain out of it where it says \"\" ({}); {}, then recreate the pods created without it",
                        d.source.at(),
                        super::EKS_APPLY
                    )
                } else {
                    format!(
                        "set clusterDomain: {domain} (the zone of CoreDNS's kubernetes plugin) where the kubelet's clusterDNS is set ({}); {restart}, then recreate the pods created without it",
                        dns.source.at()
                    )
                },
            );
            RuleOutcome::Findings(vec![also_domain(ctx, finding).about(CLUSTER_DOMAIN)])
        }
        Observed::Unknown(why) => ctx.unknown(id, why.clone()),
        _ => RuleOutcome::Pass,
    }
}

/// An address the kubelet takes: k8s.io/utils/net `ParseIPSloppy`, Go 1.16's
/// net.ParseIP, which reads IPv4 octets with any number of leading zeros as decimal
/// (`010.096.000.010`), in an IPv6 address's dotted tail too.
pub(super) fn kubelet_parses_ip(s: &str) -> bool {
    kubelet_ip(s).is_some()
}

/// The address the kubelet reads `s` as ([`kubelet_parses_ip`]), if any.
fn kubelet_ip(s: &str) -> Option<IpAddr> {
    let v4 = |t: &str| {
        let octets: Vec<&str> = t.split('.').collect();
        octets.len() == 4
            && octets.iter().all(|o| {
                let digits = o.trim_start_matches('0');
                !o.is_empty()
                    && o.bytes().all(|b| b.is_ascii_digit())
                    && digits.len() <= 3
                    && digits
                        .parse::<u16>()
                        .map_or(digits.is_empty(), |v| v <= 255)
            })
    };
    let canonical = |t: &str| {
        t.split('.')
            .map(|o| {
                o.trim_start_matches('0')
                    .parse::<u16>()
                    .unwrap_or(0)
                    .to_string()
            })
            .collect::<Vec<_>>()
            .join(".")
    };
    if let Ok(ip) = s.parse::<IpAddr>() {
        // ::ffff:10.96.0.10 is 10.96.0.10 to the kubelet and the kernel.
        return Some(ip.to_canonical());
    }
    if v4(s) {
        return canonical(s).parse().ok();
    }
    // IPv6 with a dotted IPv4 tail: that tail read the same way.
    match s.rsplit_once(':') {
        Some((head, tail)) if (s.contains("::") || head.contains(':')) && v4(tail) => {
            format!("{head}:{}", canonical(tail))
                .parse::<IpAddr>()
                .ok()
                .map(|ip| ip.to_canonical())
        }
        _ => None,
    }
}

/// The rule of a kubelet without a usable clusterDNS or clusterDomain.
pub(crate) const NO_CLUSTER_DNS: &str = "DNS-KUBELET-NO-CLUSTER-DNS";
/// The `wanted` key of DNS-KUBELET-NO-CLUSTER-DNS's clusterDNS addresses.
pub(crate) const CLUSTER_DNS: &str = "clusterDNS";
/// The `wanted` key of its clusterDomain.
pub(crate) const CLUSTER_DOMAIN: &str = "clusterDomain";

/// The clusterDNS a kubelet with none it can use should have, where it is known: the
/// node's NodeLocal DNSCache address ([`node_cache`]); else, where kubectl read the
/// cluster DNS Services, the address Kubespray renders from the inventory if it is one of
/// theirs, else the first IPv4 clusterIP of theirs (else their first); else the address
/// Kubespray renders, but not a NodeLocal DNSCache address on a node without the cache's
/// interface (nothing would answer it there): its service address instead.
fn no_address_wanted(ctx: &Ctx) -> Option<Vec<String>> {
    if let Some(cache) = node_cache(ctx) {
        return Some(vec![cache.to_owned()]);
    }
    let rendered = kube_dns_address(ctx);
    let Some(addresses) = service_addresses(ctx) else {
        return rendered;
    };
    let theirs = |w: &Vec<String>| {
        w.first()
            .and_then(|a| kubelet_ip(a))
            .is_some_and(|ip| addresses.contains(&ip))
    };
    if let Some(rendered) = rendered.filter(theirs) {
        return Some(rendered);
    }
    let first = addresses
        .iter()
        .find(|a| a.is_ipv4())
        .or(addresses.first())?;
    Some(vec![first.to_string()])
}

/// The NodeLocal DNSCache address on this node (a link-local IPv4 address on its
/// nodelocaldns interface: the cache runs there), unless the inventory turns Kubespray's
/// off: the clusterDNS the node's pods should have, as nodelocaldns-clusterdns sets it.
fn node_cache<'a>(ctx: &Ctx<'a>) -> Option<&'a str> {
    if ctx.host.var_truthy("enable_nodelocaldns") == Some(false) {
        return None;
    }
    link_local(ctx.facts.nodelocaldns.iter().flatten())
        .first()
        .map(|a| a.as_str())
}

/// The addresses of the cluster DNS Services, where kubectl read them.
fn service_addresses(ctx: &Ctx) -> Option<Vec<IpAddr>> {
    let (_, services) = ctx.dns_services.as_ref()?;
    Some(
        services
            .iter()
            .flat_map(|s| s.cluster_ips.iter().filter_map(|ip| kubelet_ip(ip)))
            .collect(),
    )
}

/// `finding`, with the inventory's dns_domain as its clusterDomain where the kubelet has
/// none too: the playbook sets both at once.
fn also_domain(ctx: &Ctx, finding: Finding) -> Finding {
    match (&ctx.facts.kubelet.cluster_domain, declared_domain(ctx)) {
        (Observed::Known(d), Some(domain)) if d.value.is_empty() => {
            finding.wanting(CLUSTER_DOMAIN, vec![domain.to_owned()])
        }
        _ => finding,
    }
}

/// An empty clusterDNS an installer leaves on purpose, as info: MicroK8s without its dns
/// addon (or not compared with the cluster: [`microk8s_without_dns`]), Kubespray's dns_mode
/// none without NodeLocal DNSCache.
fn empty_by_choice(
    ctx: &Ctx,
    dns: &Effective<Vec<String>>,
    what: &str,
    evidence: &[String],
) -> Option<RuleOutcome> {
    let id = NO_CLUSTER_DNS;
    if ctx.facts.flavour.kind == FlavourKind::MicroK8s && dns.value.is_empty() {
        return microk8s_without_dns(ctx, what, evidence);
    }
    // Kubespray's dns_mode none renders an empty clusterDNS on purpose, without
    // NodeLocal DNSCache: "a non functional cluster" (docs/advanced/dns-stack.md). With
    // enable_nodelocaldns (its default) it renders [nodelocaldns_ip] whatever dns_mode
    // (kubelet-config.v1beta1.yaml.j2 tests it first): then empty is not its doing.
    if ctx.host.var_str("dns_mode") == Some("none")
        && ctx.host.var_truthy("enable_nodelocaldns") == Some(false)
    {
        return Some(RuleOutcome::Findings(vec![ctx.finding(
            id,
            Severity::Info,
            format!(
                "{what}, as Kubespray's dns_mode: none renders it: no pod on this node resolves a Service name unless it sets dnsPolicy: None with its own dnsConfig"
            ),
            [evidence.to_vec(), vec!["dns_mode: none".to_owned()]].concat(),
            "nothing to do if no cluster DNS is intended; otherwise set dns_mode: coredns (Kubespray's default) and run cluster.yml".into(),
        )]));
    }
    None
}

/// A MicroK8s kubelet with no --cluster-dns: as info where that is MicroK8s without its dns
/// addon, which the cluster's Services say, or where they were not read; `None` where the
/// cluster has a cluster DNS Service, which this node's pods cannot reach by name.
///
/// MicroK8s's own kubelet arguments set neither flag: its dns addon (on by default from
/// 1.27: microk8s-resources/microk8s.default.yaml) adds --cluster-dns and --cluster-domain
/// (microk8s-core-addons addons/dns/enable, `refresh_opt_in_config`), and `microk8s disable
/// dns` takes them out again. On the other nodes it sets them through their cluster agents
/// (scripts/wrappers/distributed_op.py `do_configure_op`), one after another, and stops at
/// the first it cannot reach (`raise SystemExit`): the nodes after it keep none.
fn microk8s_without_dns(ctx: &Ctx, what: &str, evidence: &[String]) -> Option<RuleOutcome> {
    let (summary, remediation) = match (&ctx.dns_services, service_addresses(ctx)) {
        (Some(_), Some(addresses)) if !addresses.is_empty() => return None,
        (Some((via, _)), _) => (
            format!(
                "{what}: the cluster has no DNS Service (kubectl on {via}: none labelled k8s-app kube-dns, kube-dns-secondary or coredns in kube-system), so MicroK8s's dns addon is not enabled and no pod on this node resolves a Service name"
            ),
            "nothing to do if no cluster DNS is intended; otherwise `microk8s enable dns` (it deploys CoreDNS and sets both flags on every node)".to_owned(),
        ),
        (None, _) => (
            format!(
                "{what}, as MicroK8s has it without its dns addon (which sets --cluster-dns and --cluster-domain); the cluster was not read to compare: where the addon is enabled (the default from MicroK8s 1.27), this node missed its flags and no pod on it resolves a Service name"
            ),
            format!(
                "let dnsfix read the cluster (kubectl on the first kube_control_plane host, or --kubeconfig) to tell; where `microk8s status` on a control-plane node lists dns as enabled, set --cluster-dns to the kube-dns Service's clusterIP (microk8s kubectl -n kube-system get svc kube-dns -o jsonpath='{{.spec.clusterIP}}') and --cluster-domain (cluster.local unless `microk8s enable dns` was given another) in {}, then {}; otherwise nothing to do if no cluster DNS is intended, or `microk8s enable dns`",
                microk8s_args_file(ctx),
                restart_hint(ctx)
            ),
        ),
    };
    Some(RuleOutcome::Findings(vec![ctx.finding(
        NO_CLUSTER_DNS,
        Severity::Info,
        summary,
        [evidence, &[no_flag_line(ctx)]].concat(),
        remediation,
    )]))
}

/// The evidence that MicroK8s's arguments file has no --cluster-dns.
fn no_flag_line(ctx: &Ctx) -> String {
    format!("{}: no --cluster-dns", microk8s_args_file(ctx))
}

/// A MicroK8s node without --cluster-dns in a cluster with a DNS Service: the Services as
/// evidence, and why the node may be the only one without it.
fn microk8s_missed(ctx: &Ctx, mut evidence: Vec<String>, fix: String) -> (Vec<String>, String) {
    evidence.push(no_flag_line(ctx));
    evidence.extend(services_evidence(ctx));
    let fix = format!(
        "{fix}; `microk8s enable dns` sets both flags on the other nodes one after another and stops at the first it cannot reach, so nodes after that one miss them too"
    );
    (evidence, fix)
}

/// Where a MicroK8s kubelet has no --cluster-domain either and the inventory names none
/// (which the fix would set), the flag to set beside --cluster-dns.
fn microk8s_domain_too(ctx: &Ctx) -> &'static str {
    match &ctx.facts.kubelet.cluster_domain {
        Observed::Known(d) if d.value.is_empty() && declared_domain(ctx).is_none() => {
            " and --cluster-domain (cluster.local unless `microk8s enable dns` was given another)"
        }
        _ => "",
    }
}

/// The cluster DNS Services kubectl read, as evidence.
fn services_evidence(ctx: &Ctx) -> Option<String> {
    let (via, services) = ctx.dns_services.as_ref()?;
    Some(format!(
        "kubectl on {via}: {} (Services labelled k8s-app kube-dns, kube-dns-secondary or coredns)",
        listed_services(services).join("; ")
    ))
}

/// Each Service as `NAMESPACE/NAME ADDRESSES`.
fn listed_services(services: &[crate::cluster::DnsService]) -> Vec<String> {
    services
        .iter()
        .map(|s| format!("{}/{} {}", s.namespace(), s.name, s.cluster_ips.join(", ")))
        .collect()
}

/// The MicroK8s kubelet's arguments file, as found, else where it is.
fn microk8s_args_file<'a>(ctx: &Ctx<'a>) -> &'a str {
    ctx.facts
        .kubelet
        .args_file
        .as_deref()
        .unwrap_or("/var/snap/microk8s/current/args/kubelet")
}

/// The clusterDNS the node's pods should get from Kubespray's inventory: what
/// [`kubespray_cluster_dns`] renders, but where the node has no nodelocaldns interface
/// (nothing would answer the cache's address), the address it renders without NodeLocal
/// DNSCache.
pub(crate) fn kube_dns_address(ctx: &Ctx) -> Option<Vec<String>> {
    rendered_cluster_dns(ctx, !ctx.facts.nodelocaldns_absent())
}

/// The clusterDNS Kubespray's kubelet-config.v1beta1.yaml.j2 (@46dbdd39) renders from the
/// inventory into kubelet-config.yaml at every cluster.yml run, whatever the node holds:
/// `[nodelocaldns_ip]` where enable_nodelocaldns, else by dns_mode `[skydns_server]`,
/// `[skydns_server, skydns_server_secondary]`, `[manual_dns_server]` or none, with
/// roles/kubespray_defaults' defaults (enable_nodelocaldns true, nodelocaldns_ip
/// 169.254.25.10, dns_mode coredns, skydns_server the third address of the first service
/// range, skydns_server_secondary the fourth). On a Kubespray node or where the inventory
/// says dns_mode; `None` where not known (a template among them, a service range that is
/// not a plain one).
pub(crate) fn kubespray_cluster_dns(ctx: &Ctx) -> Option<Vec<String>> {
    rendered_cluster_dns(ctx, true)
}

/// [`kubespray_cluster_dns`], the cache's branch taken only where `cache_possible`.
fn rendered_cluster_dns(ctx: &Ctx, cache_possible: bool) -> Option<Vec<String>> {
    let h = ctx.host;
    let kubespray = ctx.facts.flavour.kind == FlavourKind::Kubespray;
    let mode = h.var_str("dns_mode").or(kubespray.then_some("coredns"))?;
    // Written as a template, the switch is what Ansible renders it to: not known here.
    let cache = cache_possible
        && match h.var("enable_nodelocaldns") {
            None => kubespray,
            Some(_) => h.var_truthy("enable_nodelocaldns")?,
        };
    if cache {
        let default = crate::facts::node_facts::KUBESPRAY_NODELOCALDNS_IP;
        return Some(vec![
            h.var_or_default("nodelocaldns_ip", Some(default))?
                .to_owned(),
        ]);
    }
    let primary = || super::kubespray_dns_server(h, true).map(|ip| ip.to_string());
    match mode {
        "coredns" => Some(vec![primary()?]),
        "coredns_dual" => Some(vec![
            primary()?,
            super::kubespray_secondary_dns_server(h, true)?.to_string(),
        ]),
        "manual" => Some(vec![h.var_set("manual_dns_server")?.to_owned()]),
        _ => None,
    }
}

/// Whether the clusterDNS Kubespray renders ([`kubespray_cluster_dns`]) would serve this
/// node's pods: the cache's address only where the node's nodelocaldns interface holds it;
/// another only where it is a cluster DNS Service's, where the cluster was read (else its
/// addresses are taken as the Services the inventory deploys). `false` where not known.
pub(crate) fn kubespray_cluster_dns_serves(ctx: &Ctx) -> bool {
    let Some(rendered) = kubespray_cluster_dns(ctx) else {
        return false;
    };
    let services = service_addresses(ctx);
    !rendered.is_empty()
        && rendered.iter().all(|a| {
            let Some(ip) = kubelet_ip(a) else {
                return false;
            };
            match ip {
                IpAddr::V4(v4) if v4.is_link_local() => ctx
                    .facts
                    .nodelocaldns
                    .iter()
                    .flatten()
                    .any(|held| held == a),
                _ => services.as_ref().is_none_or(|s| s.contains(&ip)),
            }
        })
}

/// How to change a --cluster-dns flag to `to`: where it is set (on EKS in the NodeConfig's
/// spec.kubelet.flags, as nodeadm writes the environment file anew at every boot), with the
/// config file's value under it named, which counts once the flag goes.
fn flag_fix(ctx: &Ctx, dns: &Effective<Vec<String>>, to: &str) -> String {
    // Taken out, the flag leaves the config's clusterDNS: a fix only where that is `to`
    // itself (with none there, none at all; another, as wrong as the flag's, fixes nothing).
    // Where the address wanted is not known (`to` says so in words), the value is named for
    // the reader to judge.
    let known = to.split(',').all(|a| a.parse::<std::net::IpAddr>().is_ok());
    let without = |remove: &str| {
        dns.shadowed
            .first()
            .filter(|s| !known || s.value.replace(' ', "") == to)
            .map(|s| {
                format!(
                    ", or {remove} (without it, {} clusterDNS: {} counts)",
                    s.source.at(),
                    s.value
                )
            })
            .unwrap_or_default()
    };
    if ctx.facts.flavour.kind == FlavourKind::Eks {
        return format!(
            "change --cluster-dns to {to} in the NodeConfig's spec.kubelet.flags where it is set{} (nodeadm writes {} anew at every boot); {}",
            without("take it out"),
            dns.source.at(),
            super::EKS_FLAG_APPLY
        );
    }
    format!(
        "change --cluster-dns at {} to {to}{}; {}",
        dns.source.at(),
        without("remove it"),
        restart_hint(ctx)
    )
}

/// clusterDNS is an address, but not one the cluster's DNS answers on: not a cluster DNS
/// Service's (kube-system, `k8s-app` kube-dns, kube-dns-secondary or coredns, as kubectl read
/// them), not a node-local cache's (an IPv4 link-local address, which
/// DNS-NODELOCAL-CLUSTERDNS judges, or one on the nodelocaldns interface), and no DNS server
/// on the node is bound to it. ClusterFirst pods ask it first: every lookup times out, or
/// waits out its timeout before a later server that answers. Typical: nodeadm's `.10` of a
/// wrong spec.cluster.cidr, a Kubespray kube_service_addresses changed after the Service was
/// made (a Service's address never changes), a node joined with another cluster's settings.
/// Not judged where kubectl found no such Service, with Kubespray's dns_mode manual (a
/// server of the operator's choosing), or where a DNS server on the node listens on every
/// address (the address may be the node's own, which the gather does not list); unknown
/// where the socket tables were not read whole.
fn not_the_cluster_dns(ctx: &Ctx, dns: &Effective<Vec<String>>) -> Option<RuleOutcome> {
    let id = NO_CLUSTER_DNS;
    let (via, services) = ctx.dns_services.as_ref()?;
    let addresses = service_addresses(ctx)?;
    if addresses.is_empty() || ctx.host.var_str("dns_mode") == Some("manual") {
        return None;
    }
    let servers: Vec<IpAddr> = dns.value.iter().filter_map(|a| kubelet_ip(a)).collect();
    let on_node: Vec<IpAddr> = ctx
        .facts
        .nodelocaldns
        .iter()
        .flatten()
        .filter_map(|a| kubelet_ip(a.split('/').next().unwrap_or(a)))
        .collect();
    let elsewhere = |ip: &IpAddr| {
        addresses.contains(ip)
            || on_node.contains(ip)
            || matches!(ip, IpAddr::V4(v4) if v4.is_link_local())
            || matches!(ip, IpAddr::V6(v6) if (v6.segments()[0] & 0xffc0) == 0xfe80)
    };
    let first = *servers.first()?;
    if elsewhere(&first) {
        return None;
    }
    // A DNS server on the node bound to the address answers there; one bound to every
    // address does too if the address is the node's own, which is not known. Without
    // /proc/net/udp whole that is unknown; an IPv6 table not read whole (or not there:
    // IPv6 off) counts as no IPv6 socket.
    let (Some(udp), udp6) = (
        ctx.facts.whole_text(sockets::UDP),
        ctx.facts.whole_text(sockets::UDP6),
    ) else {
        return Some(ctx.unknown_because(
            id,
            format!(
                "kubelet clusterDNS {first} is no cluster DNS Service's, and {} was not read whole: whether a DNS server on this node answers there is not known",
                sockets::UDP
            ),
            "check that a DNS server answers at that address on the node (ss -lun 'sport = :53'), then check again".into(),
        ));
    };
    let bound = |ip: &IpAddr| match ip {
        IpAddr::V4(v4) => sockets::bound_53_to(&udp, *v4),
        IpAddr::V6(v6) => udp6
            .as_deref()
            .is_some_and(|t| sockets::bound_53_to6(t, *v6)),
    };
    if bound(&first)
        || sockets::bound_53_to(&udp, std::net::Ipv4Addr::UNSPECIFIED)
        || udp6.as_deref().is_some_and(sockets::bound_53_any6)
    {
        return None;
    }
    let listed = listed_services(services);
    let (severity, outcome) = match servers.iter().find(|ip| elsewhere(ip) || bound(ip)) {
        Some(later) => (
            Severity::High,
            format!("every ClusterFirst lookup waits out its timeout before {later} answers"),
        ),
        None => (
            Severity::Critical,
            "every ClusterFirst lookup goes there first and times out unless something outside the node answers at it"
                .to_owned(),
        ),
    };
    let (fix, wanted) = service_fix(ctx, dns, &addresses, first);
    let finding = ctx.finding(
        id,
        severity,
        format!(
            "kubelet clusterDNS {first} is not the address of the cluster's DNS Service ({}) nor of a DNS server on this node: {outcome}",
            listed.join("; ")
        ),
        vec![
            format!("{} clusterDNS: [{}]", dns.source.at(), dns.value.join(", ")),
            format!(
                "kubectl on {via}: {} (Services labelled k8s-app kube-dns, kube-dns-secondary or coredns)",
                listed.join("; ")
            ),
        ],
        format!("{fix}; then recreate the pods created with it"),
    ).wanting(CLUSTER_DNS, wanted);
    Some(RuleOutcome::Findings(vec![also_domain(ctx, finding)]))
}

/// How to give the kubelet the cluster DNS Service's address of `first`'s family in place of
/// `first` (the other addresses kept), where its clusterDNS is set, and what else holds it;
/// with the addresses it is given.
fn service_fix(
    ctx: &Ctx,
    dns: &Effective<Vec<String>>,
    addresses: &[IpAddr],
    first: IpAddr,
) -> (String, Vec<String>) {
    // The first address replaced by the node's NodeLocal DNSCache's, as
    // nodelocaldns-clusterdns sets it, else by the Service's of its family; the others
    // kept (where the new one is among them already, it is not listed twice).
    let service_ip = addresses
        .iter()
        .find(|a| a.is_ipv4() == first.is_ipv4())
        .unwrap_or(&addresses[0]);
    let new = node_cache(ctx).and_then(kubelet_ip).unwrap_or(*service_ip);
    let wanted: Vec<String> = std::iter::once(new.to_string())
        .chain(
            dns.value
                .iter()
                .filter(|a| kubelet_ip(a).is_some())
                .skip(1)
                .filter(|a| kubelet_ip(a) != Some(new))
                .cloned(),
        )
        .collect();
    let fix = set_cluster_dns(ctx, dns, &wanted.join(","));
    let also = match ctx.facts.flavour.kind {
        FlavourKind::Kubespray => {
            "; Kubespray renders clusterDNS from kube_service_addresses (nodelocaldns_ip with NodeLocal DNSCache): make the inventory agree, or the next cluster.yml writes the old address back"
        }
        FlavourKind::Kubeadm => {
            "; also in kubeadm's kubelet-config ConfigMap where it says the same, which kubeadm upgrade node writes back"
        }
        FlavourKind::Eks if dns.source.kind != "flag" => {
            "; nodeadm derives clusterDNS from the NodeConfig's spec.cluster.cidr (the .10 of an IPv4 one, its prefix and a of an IPv6 one): check that it is the cluster's Service CIDR"
        }
        _ => "",
    };
    (format!("{fix}{also}"), wanted)
}
