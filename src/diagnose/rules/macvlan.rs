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

use super::kernel::cache_on_node;
use super::{Ctx, NO_KUBELET, RuleOutcome, not_a_node};
use crate::diagnose::finding::Severity;
use crate::facts::node_facts::FlavourKind;

const ID: &str = "DNS-MACVLAN-NO-MASQUERADE";

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
    if ctx.kube_proxy_absent || ctx.host.var_bool("kube_proxy_remove") == Some(true) {
        return RuleOutcome::NotApplicable(
            "kube-proxy is not deployed: masqueradeAll is its setting".into(),
        );
    }
    let (on, why) = match masquerade_all(ctx) {
        Ok(known) => known,
        Err(why) => {
            return ctx.unknown_because(
                ID,
                format!("pods sit on macvlan devices ({path}), and {why}"),
                "set kube_proxy_masquerade_all in the inventory (Kubespray), or let dnsfix read the cluster (kube-system/kube-proxy's config.conf), then check again".into(),
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
    let (severity, summary) = match cache_on_node(ctx) {
        Some(cache) => {
            evidence.push(cache);
            (
                Severity::Warning,
                "kube-proxy does not masquerade all Service traffic on macvlan, which pod DNS on this node does not go through: pods ask the NodeLocal DNSCache on the node itself; other Services do, and a ClusterIP answers a pod on this node from its backend's own address (\"reply from unexpected source\") where that backend runs here (as would the kube-dns Service, should pods fall back to it)".to_owned(),
            )
        }
        None => (
            Severity::Critical,
            "kube-proxy does not masquerade all Service traffic on macvlan: a pod's query to the kube-dns Service that kube-proxy sends to a CoreDNS pod on this node is answered from that pod's own address (\"reply from unexpected source\"), which the resolver drops".to_owned(),
        ),
    };
    RuleOutcome::Findings(vec![ctx.finding(
        ID,
        severity,
        summary,
        evidence,
        "set kube_proxy_masquerade_all: true in the inventory (group_vars/all/all.yml, Kubespray's docs/CNI/macvlan.md) and write it to kube-proxy's ConfigMap with ansible-playbook upgrade-cluster.yml (or cluster.yml -e upgrade_cluster_setup=true: only then does Kubespray run `kubeadm init phase addon kube-proxy`), then kubectl -n kube-system rollout restart daemonset kube-proxy; by hand, iptables.masqueradeAll: true in kube-system/kube-proxy's config.conf (nftables.masqueradeAll in nftables mode)".into(),
    )])
}

/// kube-proxy's masqueradeAll and where that comes from: its ConfigMap where the cluster
/// was read, else the inventory's `kube_proxy_masquerade_all`, else, on a Kubespray node,
/// Kubespray's default (false). In nftables mode Kubespray's variable is not rendered where
/// kube-proxy reads it (see the module's comment). Err: why it is not known.
fn masquerade_all(ctx: &Ctx) -> Result<(bool, String), String> {
    if let Some((on, from)) = &ctx.kube_proxy_masquerade_all {
        return Ok((
            *on,
            format!("ConfigMap kube-system/{from} masqueradeAll: {on}"),
        ));
    }
    let nftables = match &ctx.kube_proxy_mode {
        Some((mode, _)) => mode == "nftables",
        None => ctx.host.var_str("kube_proxy_mode") == Some("nftables"),
    };
    let kubespray = ctx.facts.flavour.kind == FlavourKind::Kubespray;
    match ctx.host.var("kube_proxy_masquerade_all") {
        Some(v) => match ctx.host.var_bool("kube_proxy_masquerade_all") {
            Some(true) if nftables => Ok((
                false,
                "kube_proxy_masquerade_all: true, which Kubespray renders as iptables.masqueradeAll alone, and kube-proxy in nftables mode reads nftables.masqueradeAll".to_owned(),
            )),
            Some(on) => Ok((on, format!("kube_proxy_masquerade_all: {on}"))),
            None => Err(format!(
                "kube_proxy_masquerade_all is {}, not a boolean",
                crate::text::escape(&v.to_string())
            )),
        },
        None if kubespray => Ok((
            false,
            "kube_proxy_masquerade_all is not set: false, Kubespray's default".to_owned(),
        )),
        None => Err(
            "kube-proxy's masqueradeAll is not known (its ConfigMap not read, no kube_proxy_masquerade_all in the inventory)".to_owned(),
        ),
    }
}
