//! DNS-MACVLAN-NO-MASQUERADE: pods on Kubespray's macvlan network plugin reach a Service
//! backend beside them only where kube-proxy masquerades all Service traffic.
//!
//! The mechanism, from Kubespray's own files (kubernetes-sigs/kubespray @46dbdd39):
//! - Each pod gets a macvlan device of `macvlan_interface` in the plugin's default mode,
//!   bridge (roles/network_plugin/macvlan/templates/10-macvlan.conf.j2:4-5, no `mode`;
//!   containernetworking/plugins @3d27709f plugins/main/macvlan/macvlan.go:174, `"",
//!   "bridge"`), an address of the node's pod CIDR, and a default route to its first
//!   address (10-macvlan.conf.j2:9-13).
//! - That first address is the node's own `mac0`, a macvlan device of the same interface in
//!   bridge mode (debian-network-macvlan.cfg.j2:1-7; centos-network-macvlan.cfg.j2:1-11;
//!   coreos-device-macvlan.cfg.j2 and coreos-network-macvlan.cfg.j2:5). So a pod's packet to
//!   a Service IP goes to mac0 and through the node's netfilter, where kube-proxy DNATs it
//!   to a backend: for the kube-dns Service, a CoreDNS pod.
//! - Where that CoreDNS pod is on the same node, it is on the client's own subnet (the
//!   node's pod CIDR, on-link for both), and the macvlan driver switches frames between
//!   devices of one parent in bridge mode itself: the reply goes from pod to pod and never
//!   reaches the node, whose conntrack would have put the Service IP back as its source.
//!   The client sees a reply from the CoreDNS pod's address to a query it sent to the
//!   Service IP: "reply from unexpected source" (Kubespray docs/CNI/macvlan.md:27-31), and
//!   a resolver drops it and times out. (Other nodes' pod CIDRs are routed via their
//!   access_ip, debian-network-macvlan.cfg.j2:8-14: a CoreDNS pod elsewhere answers through
//!   its own node and this node's conntrack, and that works.)
//! - kube-proxy's masqueradeAll marks every packet to a Service IP for masquerade
//!   (kubernetes/kubernetes pkg/proxy/iptables/proxier.go syncProxyRules: `if
//!   proxier.masqueradeAll` jumps every cluster IP to KUBE-MARK-MASQ; pkg/proxy/ipvs/
//!   proxier.go: the KUBE-CLUSTER-IP set, `dst,dst`, to KUBE-MARK-MASQ). Without it only
//!   sources outside clusterCIDR are (Kubespray renders clusterCIDR as kube_pods_subnets,
//!   kubeadm-config.v1beta4.yaml.j2:529-531), which pods are not. Masqueraded, the query
//!   leaves mac0 from mac0's address, the CoreDNS pod answers mac0, and the node's
//!   conntrack undoes both translations. Kubespray renders `kube_proxy_masquerade_all` as
//!   `iptables.masqueradeAll` (kubeadm-config.v1beta4.yaml.j2:541-542), false by default
//!   (roles/kubernetes/control-plane/defaults/main/kube-proxy.yml:51-53); its macvlan CI
//!   sets it true (tests/files/debian11-macvlan.yml:8). It renders no `nftables` section,
//!   and kube-proxy in nftables mode reads nftables.masqueradeAll alone
//!   (pkg/proxy/apis/config/v1alpha1/conversion.go @91118b59): there the variable does
//!   nothing.
//!
//! This was also reproduced in network namespaces on Linux 6.18: a client and a "CoreDNS"
//! macvlan of one veth parent, the node's mac0 as their gateway, an iptables DNAT of the
//! Service IP: the answer came from the backend's address; with the Service traffic
//! marked and masqueraded it came from the Service IP.
//!
//! So the effect follows where CoreDNS runs. Where the cluster was read: critical where a
//! ready CoreDNS pod runs on this node (kube-proxy picks an endpoint per new flow, so its
//! pods lose that pod's share of their queries, all of them where every ready endpoint is
//! here), where one is scheduled here and not ready (a rollout's ContainerCreating, a crash
//! loop in and out of the endpoints: the same each time it turns ready), and where none is
//! ready anywhere (the first to turn ready here breaks the node); high where the cluster
//! lists the node, ready CoreDNS pods elsewhere and none here (pods resolve now, and lose
//! DNS when one is scheduled here, with no change to the node); high too where the only
//! ready CoreDNS pods here are Kubespray's secondary (dns_mode coredns_dual) behind
//! clusterDNS's second server, the primary ready elsewhere (pods lose their fallback, not
//! their DNS: [`secondary_only`]); critical where that is not known. Only pods asking the
//! kube-dns Service go through this: a clusterDNS that is no cluster DNS Service's address
//! (Kubespray's dns_mode manual, `manual_dns_server`) is asked directly, and the finding is
//! a warning (other Services still break for a client beside a backend).
//!
//! NodeLocal DNSCache: Kubespray's doc also says its address is not reachable on macvlan
//! (docs/CNI/macvlan.md:33-41). Its files do not bear that out, and dnsfix does not report
//! it: node-cache holds nodelocaldns_ip (169.254.25.10, kubespray_defaults main.yml:144) on
//! a dummy interface of the node (nodelocaldns-daemonset.yml.j2:26 hostNetwork, 42-44
//! `-localip`; kubernetes/dns @9aa70b8f cmd/node-cache/app/cache_app.go:112-147 NOTRACK and
//! ACCEPT for it), a pod's query to it goes to its gateway, mac0, a local delivery on the
//! node, and the reply is routed back over mac0 (the namespace reproduction above answered
//! from 169.254.25.10). node-cache's own queries to CoreDNS leave from the node and come
//! back to it. So where every clusterDNS address is on the nodelocaldns interface, pod DNS
//! does not cross the Service from pod to pod, and the finding is a warning: other
//! Services still break for a client beside a backend.

use std::net::IpAddr;

use super::kernel::cache_on_node;
use super::{Ctx, NO_KUBELET, RuleOutcome, not_a_node};
use crate::cluster::DnsPod;
use crate::diagnose::finding::Severity;
use crate::facts::node_facts::{FlavourKind, Observed};

const ID: &str = "DNS-MACVLAN-NO-MASQUERADE";

/// The summary where CoreDNS may run on this node and where it runs is not known.
const MAY_RUN_HERE: &str = "kube-proxy does not masquerade all Service traffic on macvlan: a pod's query to the kube-dns Service that kube-proxy sends to a CoreDNS pod on this node is answered from that pod's own address (\"reply from unexpected source\"), which the resolver drops";

pub(super) fn macvlan_no_masquerade(ctx: &Ctx) -> RuleOutcome {
    if not_a_node(ctx) {
        return RuleOutcome::NotApplicable(NO_KUBELET.into());
    }
    let cni = &ctx.facts.cni;
    let path = match (
        cni.config.as_deref(),
        crate::facts::cni::main_plugin(&cni.plugins),
    ) {
        (Some(path), Some("macvlan")) => path,
        _ => {
            return RuleOutcome::NotApplicable(
                "the pod network in effect is not macvlan (or no CNI configuration was read)"
                    .into(),
            );
        }
    };
    // CRI-O's settings may give pods another network than this first file (a
    // cni_default_network dnsfix cannot read): the plugin of the file is known, the pods'
    // network is not.
    if let Some(why) = &cni.runtime_unknown {
        return ctx.unknown_because(
            ID,
            format!("the first CNI file, {path}, is macvlan's, but CRI-O may give pods another network: {why}"),
            "make CRI-O's network setting one dnsfix reads (cni_default_network under [crio.network]), then check again".into(),
        );
    }
    if ctx.kube_proxy_absent || ctx.host.var_bool("kube_proxy_remove") == Some(true) {
        return RuleOutcome::NotApplicable(
            "kube-proxy is not deployed: masqueradeAll is its setting".into(),
        );
    }
    let (on, why) = match masquerade_all(ctx) {
        Ok(known) => known,
        Err((why, remediation)) => {
            return ctx.unknown_because(
                ID,
                format!("pods sit on macvlan devices ({path}), and {why}"),
                remediation.into(),
            );
        }
    };
    if on {
        return RuleOutcome::Pass;
    }
    let mut evidence = vec![
        format!(
            "{path}: plugin macvlan: pods sit on macvlan devices in bridge mode, which the macvlan driver switches between itself: a Service backend's reply to a client pod on this node goes straight to it, past the node's conntrack"
        ),
        why,
    ];
    let (severity, summary) = match (cache_on_node(ctx), service_dns(ctx)) {
        (Some(cache), _) => {
            evidence.push(cache);
            (
                Severity::Warning,
                "kube-proxy does not masquerade all Service traffic on macvlan, which pod DNS on this node does not go through: pods ask the NodeLocal DNSCache on the node itself; other Services do, and a ClusterIP answers a pod on this node from its backend's own address (\"reply from unexpected source\") where that backend runs here (as would the kube-dns Service, should pods fall back to it)".to_owned(),
            )
        }
        (None, Some(Err(other))) => {
            evidence.push(other);
            (
                Severity::Warning,
                "kube-proxy does not masquerade all Service traffic on macvlan, which pod DNS on this node does not go through: clusterDNS is not a cluster DNS Service's address, and pods ask that server directly; other Services do, and a ClusterIP answers a pod on this node from its backend's own address (\"reply from unexpected source\") where that backend runs here".to_owned(),
            )
        }
        (None, service) => {
            evidence.extend(service.and_then(Result::ok));
            placement(ctx, &mut evidence)
        }
    };
    RuleOutcome::Findings(vec![ctx.finding(
        ID,
        severity,
        summary,
        evidence,
        remediation(nftables_mode(ctx)),
    )])
}

/// Whether kube-proxy runs in nftables mode: its ConfigMap's mode where the cluster was
/// read, else the inventory's kube_proxy_mode.
fn nftables_mode(ctx: &Ctx) -> bool {
    match &ctx.kube_proxy_mode {
        Some((mode, _)) => mode == "nftables",
        None => ctx.host.var_str("kube_proxy_mode") == Some("nftables"),
    }
}

/// How to turn masqueradeAll on. Kubespray writes kube-proxy's ConfigMap only through
/// `kubeadm init phase addon kube-proxy` (roles/kubernetes/control-plane/tasks/
/// kubeadm-upgrade.yml:37 @46dbdd39), which kubeadm-setup.yml:259-263 runs only with
/// upgrade_cluster_setup (false by default, control-plane defaults/main/main.yml:3);
/// upgrade_cluster.yml sets it (playbooks/upgrade_cluster.yml:58) but also drains every
/// node (roles/upgrade/pre-upgrade defaults/main.yml:5 drain_nodes: true, tasks/main.yml:64).
/// Kubespray renders its variable as iptables.masqueradeAll alone: in nftables mode the
/// ConfigMap edit is the fix, and a re-run of that phase writes it back.
fn remediation(nftables: bool) -> String {
    const RESTART: &str = "kubectl -n kube-system rollout restart daemonset kube-proxy";
    if nftables {
        return format!(
            "kube-proxy runs in nftables mode, which reads nftables.masqueradeAll: kubectl -n kube-system edit configmap kube-proxy, set nftables.masqueradeAll: true in config.conf, then {RESTART}; Kubespray's kube_proxy_masquerade_all is rendered as iptables.masqueradeAll alone, and a Kubespray re-run of the kube-proxy addon (cluster.yml -e upgrade_cluster_setup=true, upgrade-cluster.yml) writes the ConfigMap back without it: repeat the edit after one"
        );
    }
    format!(
        "set kube_proxy_masquerade_all: true in the inventory (group_vars/all/all.yml, Kubespray's docs/CNI/macvlan.md) and write it to kube-proxy's ConfigMap with ansible-playbook cluster.yml -e upgrade_cluster_setup=true (only then does Kubespray run `kubeadm init phase addon kube-proxy`; upgrade-cluster.yml does too, but drains every node on the way, drain_nodes: true), then {RESTART}; by hand, iptables.masqueradeAll: true in kube-system/kube-proxy's config.conf, then the same restart"
    )
}

/// Whether the kubelet's clusterDNS holds a cluster DNS Service's address: Ok with why
/// where it does, Err with why where it is some other server (Kubespray's dns_mode manual,
/// a resolver of the operator's), which pods ask directly, not through kube-proxy. The
/// Services as kubectl read them, else, where the cluster was not read, the address
/// Kubespray gives the kube-dns Service (skydns_server). `None` where not known.
fn service_dns(ctx: &Ctx) -> Option<Result<String, String>> {
    let Observed::Known(dns) = &ctx.facts.kubelet.cluster_dns else {
        return None;
    };
    let servers: Vec<IpAddr> = dns.value.iter().filter_map(|a| a.parse().ok()).collect();
    if servers.is_empty() {
        return None;
    }
    let at = format!("{} clusterDNS [{}]", dns.source.at(), dns.value.join(", "));
    let holds = |ip: &String| ip.parse().is_ok_and(|ip| servers.contains(&ip));
    if let Some((via, services)) = &ctx.dns_services {
        // CoreDNS's Services outside kube-system too: the kubelets may name one of them
        // while a leftover kube-system/kube-dns Service stays.
        let services: Vec<&crate::cluster::DnsService> =
            services.iter().chain(&ctx.dns_services_elsewhere).collect();
        if let Some(s) = services.iter().find(|s| s.cluster_ips.iter().any(holds)) {
            return Some(Ok(format!(
                "{at} holds Service {}/{}'s address: pods ask CoreDNS through kube-proxy (kubectl on {via})",
                s.namespace(),
                s.name
            )));
        }
        let listed: Vec<String> = services
            .iter()
            .filter(|s| !s.cluster_ips.is_empty())
            .map(|s| format!("{}/{} {}", s.namespace(), s.name, s.cluster_ips.join(", ")))
            .collect();
        if !listed.is_empty() {
            return Some(Err(format!(
                "{at} is no cluster DNS Service's address ({}; kubectl on {via}): pods ask that server directly, not through a Service",
                listed.join("; ")
            )));
        }
        return None;
    }
    let kubespray = ctx.facts.flavour.kind == FlavourKind::Kubespray;
    let skydns = super::kubespray_dns_server(ctx.host, kubespray)?;
    if servers.contains(&skydns) {
        return Some(Ok(format!(
            "{at} holds skydns_server {skydns}, the kube-dns Service's address as Kubespray deploys it: pods ask CoreDNS through kube-proxy"
        )));
    }
    let manual = match ctx.host.var_str("dns_mode") {
        Some("manual") => " (dns_mode: manual)",
        _ => "",
    };
    Some(Err(format!(
        "{at} is not skydns_server {skydns}, the kube-dns Service's address as Kubespray deploys it{manual}: pods ask that server directly, not through a Service"
    )))
}

/// The name of the one cluster DNS Service whose address the kubelet's clusterDNS holds,
/// as kubectl read them; `None` where none or more than one does.
fn held_service<'a>(ctx: &'a Ctx) -> Option<&'a str> {
    let Observed::Known(dns) = &ctx.facts.kubelet.cluster_dns else {
        return None;
    };
    let servers: Vec<IpAddr> = dns.value.iter().filter_map(|a| a.parse().ok()).collect();
    let (_, services) = ctx.dns_services.as_ref()?;
    let held: Vec<&str> = services
        .iter()
        .chain(&ctx.dns_services_elsewhere)
        .filter(|s| {
            s.cluster_ips
                .iter()
                .any(|ip| ip.parse().is_ok_and(|ip| servers.contains(&ip)))
        })
        .map(|s| s.name.as_str())
        .collect();
    match held.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

/// Severity and summary by where CoreDNS runs: critical where a ready CoreDNS pod runs on
/// this node (kube-proxy sends it its share of the node's queries), or one is scheduled
/// here not ready (it takes that share each time it turns ready), or none is ready
/// anywhere (the first to turn ready here breaks this node); high where the cluster lists
/// CoreDNS pods, the node under its name, and none here (pods resolve through CoreDNS
/// elsewhere, until one is scheduled here), or where only Kubespray's secondary CoreDNS runs
/// here behind clusterDNS's second server ([`secondary_only`]); critical where that is not
/// known.
fn placement(ctx: &Ctx, evidence: &mut Vec<String>) -> (Severity, String) {
    let mut unknown = |why: String| {
        evidence.push(why);
        (Severity::Critical, MAY_RUN_HERE.to_owned())
    };
    let Some(placed) = &ctx.coredns_placement else {
        return unknown("where CoreDNS pods run is not known: the cluster was not read".into());
    };
    let via = &placed.via;
    if placed.pods.is_empty() {
        return unknown(format!(
            "where CoreDNS pods run is not known: the cluster lists none (k8s-app kube-dns, kube-dns-secondary or coredns; kubectl on {via})"
        ));
    }
    let mine = |p: &&DnsPod| placed.names.contains(&p.node);
    let ready: Vec<&DnsPod> = placed.pods.iter().filter(|p| p.serving()).collect();
    let here: Vec<&DnsPod> = ready.iter().copied().filter(mine).collect();
    if !here.is_empty() {
        if let Some(graded) = secondary_only(ctx, placed, &ready, &here, evidence) {
            return graded;
        }
        return on_this_node(via, held_service(ctx), &ready, &here, evidence);
    }
    let listed: Vec<&DnsPod> = placed.pods.iter().filter(mine).collect();
    if !listed.is_empty() {
        return scheduled_here(via, &listed, evidence);
    }
    let node = placed.names.first().map_or("?", String::as_str);
    if !placed.named {
        let nodes = if placed.nodes_read {
            format!("the cluster's nodes (kubectl on {via}) do not include it under that name")
        } else {
            format!("the cluster's nodes were not read (kubectl on {via})")
        };
        return unknown(format!(
            "no CoreDNS pod lists node {} and {nodes}: whether one runs here is not known",
            placed.names.join(" or ")
        ));
    }
    let shown = if ready.is_empty() {
        placed.pods.iter().collect()
    } else {
        ready.clone()
    };
    let mut elsewhere: Vec<String> = shown
        .iter()
        .take(3)
        .map(|p| {
            if ready.is_empty() {
                format!("{} on {}: {}", p.name, p.node, p.state())
            } else {
                format!("{} on {}", p.name, p.node)
            }
        })
        .collect();
    if shown.len() > 3 {
        elsewhere.push(format!("{} more", shown.len() - 3));
    }
    let elsewhere = elsewhere.join(", ");
    if ready.is_empty() {
        evidence.push(format!(
            "no CoreDNS pod is ready, none on node {node}; {elsewhere} (kubectl on {via})"
        ));
        return (
            Severity::Critical,
            format!(
                "kube-proxy does not masquerade all Service traffic on macvlan, and no CoreDNS endpoint is ready ({elsewhere}): the first CoreDNS pod ready on this node (a rollout, a restart scheduling one here) answers pods here from its own address (\"reply from unexpected source\"), which the resolver drops"
            ),
        );
    }
    evidence.push(format!(
        "no CoreDNS pod on node {node}; {elsewhere} (kubectl on {via})"
    ));
    (
        Severity::High,
        format!(
            "kube-proxy does not masquerade all Service traffic on macvlan: pods on this node resolve now only because no CoreDNS pod runs here ({elsewhere}); one scheduled here (a rollout, a drain, a failure elsewhere) breaks their DNS with no change to this node"
        ),
    )
}

/// The finding where CoreDNS pods are scheduled on this node and none of them is ready (a
/// rollout's ContainerCreating, a crash loop in and out of the Service's endpoints): each
/// time one turns ready, kube-proxy sends it its share of the node's queries.
fn scheduled_here(via: &str, listed: &[&DnsPod], evidence: &mut Vec<String>) -> (Severity, String) {
    for p in listed {
        evidence.push(format!(
            "pod {}/{} ({}) on node {}: {}, not an endpoint now (kubectl on {via})",
            p.namespace(),
            p.name,
            p.app,
            p.node,
            p.state()
        ));
    }
    let names: Vec<String> = listed
        .iter()
        .map(|p| format!("{} ({})", p.name, p.state()))
        .collect();
    let verb = if names.len() == 1 { "is" } else { "are" };
    (
        Severity::Critical,
        format!(
            "kube-proxy does not masquerade all Service traffic on macvlan, and CoreDNS {} {verb} scheduled on this node, not ready: each time it turns ready, pods here lose the share of their queries kube-proxy sends to it, answered from its own address (\"reply from unexpected source\"), which the resolver drops",
            names.join(" and ")
        ),
    )
}

/// The app of Kubespray's second CoreDNS Deployment (dns_mode coredns_dual, k8s-app
/// kube-dns-secondary), behind the kubelet's second clusterDNS server.
const SECONDARY: &str = "coredns-secondary";

/// The finding where the ready CoreDNS pods on this node are all of Kubespray's secondary
/// Deployment, the kubelet's clusterDNS asks the primary's Service first, ready primary
/// pods run elsewhere and none is scheduled here; `None` otherwise (graded as any CoreDNS
/// pod here). With dns_mode coredns_dual Kubespray renders clusterDNS as
/// `[skydns_server, skydns_server_secondary]` (kubernetes-sigs/kubespray @46dbdd39
/// roles/kubernetes/node/templates/kubelet-config.v1beta1.yaml.j2:55-56), the secondary
/// Deployment and Service being coredns-deployment.yml.j2 and coredns-svc.yml.j2 with
/// coredns_ordinal_suffix "-secondary" and clusterIP skydns_server_secondary
/// (roles/kubernetes-apps/ansible/tasks/main.yml:29-43). Only queries sent to the second
/// server reach the secondary pod here:
/// - glibc asks the servers in order, the next only where one gives no answer (a timeout,
///   SERVFAIL, REFUSED) and without `options rotate`, which the kubelet does not write
///   (bminor/glibc @04130e53 resolv/res_send.c, "Send request, RETRY times": `for (ns =
///   0; ns < MAXNS; ns++)`, `goto next_ns`): such pods lose their fallback, not their DNS;
/// - musl sends every query to all servers at once and keeps the first reply from an
///   address it sent to (bminor/musl @01dc3f4f src/network/res_msend.c: "Query all
///   configured namservers in parallel", "Ignore replies from addresses we didn't send
///   to"): the pod's reply from its own address is ignored and the primary's answer kept.
///
/// So high, not critical: pods resolve through the primary, and lose DNS where it fails
/// (its answers the fallback, broken here, would have covered) or a primary pod is
/// scheduled here. A primary pod scheduled here and not ready is critical, naming it.
fn secondary_only(
    ctx: &Ctx,
    placed: &super::CorednsPlacement,
    ready: &[&DnsPod],
    here: &[&DnsPod],
    evidence: &mut Vec<String>,
) -> Option<(Severity, String)> {
    if here.iter().any(|p| p.app != SECONDARY) {
        return None;
    }
    let first = primary_first(ctx)?;
    let primary = |p: &&DnsPod| p.app != SECONDARY;
    let primary_ready: Vec<&DnsPod> = ready.iter().copied().filter(primary).collect();
    if primary_ready.is_empty() {
        return None;
    }
    let via = &placed.via;
    for p in here {
        evidence.push(p.seen(via));
    }
    evidence.push(first);
    let primary_here: Vec<&DnsPod> = placed
        .pods
        .iter()
        .filter(primary)
        .filter(|p| placed.names.contains(&p.node))
        .collect();
    if !primary_here.is_empty() {
        return Some(scheduled_here(via, &primary_here, evidence));
    }
    let mut elsewhere: Vec<String> = primary_ready
        .iter()
        .take(3)
        .map(|p| format!("{} on {}", p.name, p.node))
        .collect();
    if primary_ready.len() > 3 {
        elsewhere.push(format!("{} more", primary_ready.len() - 3));
    }
    let elsewhere = elsewhere.join(", ");
    evidence.push(format!(
        "no primary CoreDNS pod on this node; {elsewhere} (kubectl on {via})"
    ));
    let names: Vec<&str> = here.iter().map(|p| p.name.as_str()).collect();
    let verb = if names.len() == 1 { "runs" } else { "run" };
    let share = format!(
        "{} of {} ready coredns-secondary endpoints",
        here.len(),
        ready.iter().filter(|p| p.app == SECONDARY).count()
    );
    Some((
        Severity::High,
        format!(
            "kube-proxy does not masquerade all Service traffic on macvlan, and only the secondary CoreDNS {} {verb} on this node ({share}; the primary on {elsewhere}): pods here ask the primary first and resolve through it, but lose their fallback, as the secondary's answers to them come from its own address (\"reply from unexpected source\") and are dropped (glibc asks the second nameserver only where the first fails; musl asks both and keeps the primary's answer); where the primary fails, or one of its pods is scheduled here, their DNS breaks",
            names.join(" and ")
        ),
    ))
}

/// Where the kubelet's clusterDNS lists more than one server and its first is the primary
/// CoreDNS's Service, not Kubespray's secondary: that, as evidence. The Services as kubectl
/// read them, else, where the cluster's Services were not read, Kubespray's skydns_server.
fn primary_first(ctx: &Ctx) -> Option<String> {
    let Observed::Known(dns) = &ctx.facts.kubelet.cluster_dns else {
        return None;
    };
    let [first, _, ..] = dns.value.as_slice() else {
        return None;
    };
    let ip: IpAddr = first.parse().ok()?;
    let at = format!("{} clusterDNS [{}]", dns.source.at(), dns.value.join(", "));
    if let Some((via, services)) = &ctx.dns_services {
        let s = services
            .iter()
            .chain(&ctx.dns_services_elsewhere)
            .find(|s| s.cluster_ips.iter().any(|a| a.parse() == Ok(ip)))?;
        let secondary = match &s.selector {
            Some(sel) => sel
                .split(',')
                .any(|l| l.trim() == "k8s-app=kube-dns-secondary"),
            None => s.name.ends_with("-secondary"),
        };
        return (!secondary).then(|| {
            format!(
                "{at}: pods ask {first}, Service {}/{}'s address, first (kubectl on {via})",
                s.namespace(),
                s.name
            )
        });
    }
    let kubespray = ctx.facts.flavour.kind == FlavourKind::Kubespray;
    let skydns = super::kubespray_dns_server(ctx.host, kubespray)?;
    (skydns == ip).then(|| {
        format!(
            "{at}: pods ask {first}, skydns_server (the primary CoreDNS's Service as Kubespray deploys it), first"
        )
    })
}

/// The finding where ready CoreDNS pods run on this node: each pod, and the share of the
/// Service's ready endpoints they are (kube-proxy picks one per new flow).
fn on_this_node(
    via: &str,
    held: Option<&str>,
    ready: &[&DnsPod],
    here: &[&DnsPod],
    evidence: &mut Vec<String>,
) -> (Severity, String) {
    for p in here {
        evidence.push(p.seen(via));
    }
    let mut apps: Vec<&str> = here.iter().map(|p| p.app.as_str()).collect();
    apps.sort_unstable();
    apps.dedup();
    let shares: Vec<String> = apps
        .iter()
        .map(|app| {
            let of = |pods: &[&DnsPod]| pods.iter().filter(|p| p.app == *app).count();
            // The Service clusterDNS holds where the pods are of one Deployment; else
            // Kubespray's Service of that Deployment, named as it is (`coredns`,
            // `coredns-secondary`: coredns_svc_name and coredns_ordinal_suffix,
            // kubernetes-sigs/kubespray @46dbdd39
            // roles/kubernetes-apps/ansible/templates/coredns-svc.yml.j2:5,
            // roles/kubernetes-apps/ansible/defaults/main.yml:14-15).
            let service = match held {
                Some(name) if apps.len() == 1 => name,
                _ => app,
            };
            format!("{} of {} ready {service} endpoints", of(here), of(ready))
        })
        .collect();
    let names: Vec<&str> = here.iter().map(|p| p.name.as_str()).collect();
    let verb = if names.len() == 1 { "runs" } else { "run" };
    (
        Severity::Critical,
        format!(
            "kube-proxy does not masquerade all Service traffic on macvlan, and CoreDNS {} {verb} on this node: pods here lose the share of their queries kube-proxy sends to it ({}), answered from its own address (\"reply from unexpected source\"), which the resolver drops",
            names.join(" and "),
            shares.join(", ")
        ),
    )
}

/// kube-proxy's masqueradeAll and where that comes from: its ConfigMap where the cluster
/// was read, else the inventory's `kube_proxy_masquerade_all`, else, on a Kubespray node,
/// Kubespray's default (false). A ConfigMap read and not understood (another apiVersion) is
/// not known, never the inventory's. In nftables mode Kubespray's variable is not rendered
/// where kube-proxy reads it (see the module's comment). Err: why it is not known, and
/// what to do.
fn masquerade_all(ctx: &Ctx) -> Result<(bool, String), (String, &'static str)> {
    match &ctx.kube_proxy_masquerade_all {
        Some(Ok(known)) => return Ok(known.clone()),
        Some(Err(why)) => {
            return Err((
                why.clone(),
                "read masqueradeAll in kube-system/kube-proxy's config.conf by hand (kubectl -n kube-system get configmap kube-proxy -o yaml); where it is not true, set it and kubectl -n kube-system rollout restart daemonset kube-proxy",
            ));
        }
        None => {}
    }
    let nftables = nftables_mode(ctx);
    let kubespray = ctx.facts.flavour.kind == FlavourKind::Kubespray;
    match ctx.host.var("kube_proxy_masquerade_all") {
        Some(v) => match ctx.host.var_bool("kube_proxy_masquerade_all") {
            Some(true) if nftables => Ok((
                false,
                "kube_proxy_masquerade_all: true, which Kubespray renders as iptables.masqueradeAll alone, and kube-proxy in nftables mode reads nftables.masqueradeAll".to_owned(),
            )),
            Some(on) => Ok((on, format!("kube_proxy_masquerade_all: {on}"))),
            None => Err((
                format!(
                    "kube_proxy_masquerade_all is {}, not a boolean",
                    crate::text::escape(&v.to_string())
                ),
                UNKNOWN_FIX,
            )),
        },
        None if kubespray => Ok((
            false,
            "kube_proxy_masquerade_all is not set: false, Kubespray's default".to_owned(),
        )),
        None => Err((
            "kube-proxy's masqueradeAll is not known (its ConfigMap not read, no kube_proxy_masquerade_all in the inventory)".to_owned(),
            UNKNOWN_FIX,
        )),
    }
}

/// What to do where neither the ConfigMap nor the inventory says masqueradeAll.
const UNKNOWN_FIX: &str = "set kube_proxy_masquerade_all in the inventory (Kubespray), or let dnsfix read the cluster (kube-system/kube-proxy's config.conf), then check again";
