//! DNS-FIREWALLD-PODS-UNTRUSTED: firewalld runs on the node and its permanent configuration
//! binds the pod network to no zone that accepts it, so what the pods send through the node
//! falls into the default zone, whose default target rejects it (flannel-io/flannel#2055:
//! `filter_FWD_public_REJECT: IN=flannel.1 OUT=cni0`, DNS failing until firewalld was
//! stopped). k3s's requirements page asks for the pod and service networks in the trusted
//! zone where firewalld stays on; RKE2's known issues say to disable it.
//!
//! The rule reads firewalld's files, never its runtime state (`firewall-cmd` is a Python
//! program: a process per node the gather does not spend): a source added without
//! `--permanent` is gone at the next reload or boot, and the finding says what those bring.

use super::{Ctx, NO_KUBELET, RuleOutcome, not_a_node};
use crate::diagnose::finding::Severity;
use crate::facts::firewalld::{self, ZoneSource};
use crate::facts::node_facts::{FlavourKind, UnitState};
use crate::text::escape;

const ID: &str = "DNS-FIREWALLD-PODS-UNTRUSTED";

/// The pod network, where dnsfix knows it: the range and where it was read.
struct PodNetwork {
    cidr: String,
    from: String,
    /// Read from the node or the inventory, not an installer's default.
    certain: bool,
}

/// When firewalld applies its zones: now, or from the next boot (stopped now, enabled).
#[derive(Clone, Copy, PartialEq, Eq)]
enum When {
    Now,
    AtBoot,
}

impl When {
    /// "firewalld runs" / "firewalld starts at the next boot", as a summary begins.
    fn runs(self) -> &'static str {
        match self {
            When::Now => "firewalld runs",
            When::AtBoot => "firewalld, stopped now, starts at the next boot",
        }
    }
}

pub(super) fn firewalld_pods_untrusted(ctx: &Ctx) -> RuleOutcome {
    let when = match running(ctx) {
        Ok(when) => when,
        Err(outcome) => return outcome,
    };
    let fw = &ctx.facts.firewalld;
    if let Some(why) = fw.unread.first() {
        return ctx.unknown(ID, format!("{} and {}", when.runs(), escape(why)));
    }
    let Some(default) = fw.zone(&fw.default_zone.value) else {
        return ctx.unknown(
            ID,
            format!(
                "{} and its default zone {} ({}) is in no zone file read",
                when.runs(),
                escape(&fw.default_zone.value),
                fw.default_zone.from
            ),
        );
    };
    if default.accepts() {
        return RuleOutcome::Pass;
    }
    let pods = pod_network(ctx);
    let accepting: Vec<&firewalld::Zone> = fw.zones.iter().filter(|z| z.accepts()).collect();
    if let Some(p) = pods.as_ref().filter(|p| p.certain) {
        let covered = accepting.iter().any(|z| {
            z.sources.iter().any(|s| match s {
                ZoneSource::Address(a) => firewalld::covers(a, &p.cidr) == Some(true),
                ZoneSource::Other(_) => false,
            })
        });
        if covered {
            return RuleOutcome::Pass;
        }
    }
    let evidence = evidence(ctx, default, pods.as_ref(), &accepting);
    let open = undecided(ctx, pods.as_ref(), &accepting);
    if !open.is_empty() {
        return ctx.unknown_because(
            ID,
            format!(
                "{}, and whether {} accepts the pods' forwarded traffic dnsfix does not judge ({})",
                when.runs(),
                open.join(", "),
                evidence.join("; ")
            ),
            remedy(ctx, pods.as_ref(), when),
        );
    }
    RuleOutcome::Findings(vec![ctx.finding(
        ID,
        Severity::Warning,
        format!(
            "{} and no zone accepts the pod network: pod traffic this node forwards that was not DNAT'd here (a DNS query reaching a CoreDNS pod on this node from a pod on another) falls into zone {}, whose target rejects it{}",
            when.runs(),
            escape(&default.name),
            match when {
                When::Now => "",
                When::AtBoot => ", from that boot on",
            }
        ),
        evidence,
        remedy(ctx, pods.as_ref(), when),
    )])
}

/// When firewalld applies its zones on a Kubernetes node: now, or from the next boot where
/// it is stopped and enabled (`systemctl stop` without `disable`: the node reboots into
/// it). Else what the rule says: not applicable (no kubelet, firewalld stopped and not
/// started at boot, or not installed) or unknown (systemctl did not say).
fn running(ctx: &Ctx) -> Result<When, RuleOutcome> {
    if not_a_node(ctx) {
        return Err(RuleOutcome::NotApplicable(NO_KUBELET.into()));
    }
    let services = &ctx.facts.services;
    match services.firewalld {
        UnitState::Active | UnitState::Activating => Ok(When::Now),
        UnitState::Inactive | UnitState::Failed if services.firewalld_starts_at_boot() == Some(true) => {
            Ok(When::AtBoot)
        }
        state @ (UnitState::Inactive | UnitState::Failed) => Err(RuleOutcome::NotApplicable(
            match services.firewalld_enabled.as_deref() {
                Some(enabled) => format!(
                    "firewalld is not running ({}) and not started at boot ({})",
                    state.as_str(),
                    escape(enabled)
                ),
                None => format!("firewalld is not running ({})", state.as_str()),
            },
        )),
        UnitState::Unknown if !ctx.facts.firewalld.installed => Err(
            RuleOutcome::NotApplicable("firewalld is not installed".into()),
        ),
        UnitState::Unknown => Err(ctx.unknown_because(
            ID,
            match services.systemctl_cut {
                Some(_) => format!(
                    "firewalld is installed and systemctl did not say whether it runs ({})",
                    services.systemctl_silence()
                ),
                None => "firewalld is installed and systemctl did not say whether it runs".into(),
            },
            match services.systemctl_cut {
                Some(_) => "check again once `systemctl is-system-running` answers on the node; where firewalld runs, see `dnsfix explain DNS-FIREWALLD-PODS-UNTRUSTED`".into(),
                None => "check `systemctl is-active firewalld` on the node; where it runs, see `dnsfix explain DNS-FIREWALLD-PODS-UNTRUSTED`".into(),
            },
        )),
    }
}

/// What was seen: firewalld's state and backend, the default zone, the pod network and
/// the zones that accept.
fn evidence(
    ctx: &Ctx,
    default: &firewalld::Zone,
    pods: Option<&PodNetwork>,
    accepting: &[&firewalld::Zone],
) -> Vec<String> {
    let fw = &ctx.facts.firewalld;
    let target = default
        .target
        .as_deref()
        .map_or("the default target".to_owned(), |t| {
            format!("target {}", escape(t))
        });
    vec![
        format!(
            "firewalld is {} (systemctl is-active){}; backend {} ({})",
            ctx.facts.services.firewalld.as_str(),
            ctx.facts
                .services
                .firewalld_enabled
                .as_deref()
                .map_or(String::new(), |e| format!(
                    ", {} (systemctl is-enabled)",
                    escape(e)
                )),
            escape(&fw.backend.value),
            fw.backend.from
        ),
        format!(
            "default zone {} ({}) from {}, {target}: traffic from interfaces and sources bound to no zone is its, and its target rejects what it forwards",
            escape(&default.name),
            fw.default_zone.from,
            escape(&default.path),
        ),
        match pods {
            Some(p) => format!("pod network {} ({})", escape(&p.cidr), p.from),
            None => {
                "pod network: not known to dnsfix (no /run/flannel/subnet.env, no kube_pods_subnet)"
                    .into()
            }
        },
        accepting_zones(accepting),
    ]
}

/// What may accept the pods' traffic and dnsfix does not judge: an accepting zone's pod
/// interfaces, or sources it cannot match with the pod network; a zone of another target
/// with intra-zone forwarding (`<forward/>`) and the pod network or a pod interface bound
/// to it, which passes what goes between those (pod to pod) but not out of the zone (a
/// CoreDNS pod's query to its upstream); direct rules; policies.
fn undecided(ctx: &Ctx, pods: Option<&PodNetwork>, accepting: &[&firewalld::Zone]) -> Vec<String> {
    let fw = &ctx.facts.firewalld;
    let certain = pods.is_some_and(|p| p.certain);
    // Every shipped zone has <forward/> since firewalld 1.0: a zone counts where the pod
    // network or part of it (a node's own pod range) or a pod interface is bound to it.
    // Against a pod network not known for certain (k3s's default; a server may set
    // another), or none, any range may be it: only a single host is not.
    let overlaps = |a: &str, p: &PodNetwork| {
        firewalld::covers(a, &p.cidr) != Some(false) || firewalld::covers(&p.cidr, a) != Some(false)
    };
    let forwarding = fw.zones.iter().filter(|z| {
        z.forward
            && !z.accepts()
            && (z.interfaces.iter().any(|i| pod_interface(i))
                || z.sources.iter().any(|s| match (s, pods) {
                    (ZoneSource::Address(a), Some(p)) if p.certain => overlaps(a, p),
                    (ZoneSource::Address(a), Some(p)) => overlaps(a, p) || !single_host(a),
                    (ZoneSource::Address(a), None) => !single_host(a),
                    (ZoneSource::Other(_), _) => true,
                }))
    });
    accepting
        .iter()
        .copied()
        .filter(|z| {
            z.interfaces.iter().any(|i| pod_interface(i))
                || z.sources
                    .iter()
                    .any(|s| matches!(s, ZoneSource::Other(_)) || !certain)
        })
        .map(|z| escape(&z.describe()).into_owned())
        .chain(forwarding.map(|z| {
            format!(
                "{} with intra-zone forwarding (<forward/>), between the pods bound to it but not out of it",
                escape(&z.describe())
            )
        }))
        .chain(
            fw.direct_rules
                .iter()
                .map(|d| format!("direct rules in {d}")),
        )
        .chain(fw.policies.iter().map(|p| format!("policy {}", escape(p))))
        .collect()
}

/// A source that is one address (`192.0.2.5`, `/32`, `/128`, a netmask of all ones): no
/// pod network.
fn single_host(source: &str) -> bool {
    firewalld::network(source).is_some_and(|(a, p)| p == if a.is_ipv4() { 32 } else { 128 })
}

/// The names network plugins give the interfaces pods' traffic enters the node by (the
/// bridge plugin's default cni0 and flannel's cni0 and flannel.N, Calico's cali*, tunl0 and
/// vxlan.calico, Cilium's cilium_* and lxc*, Weave's weave, kube-router's kube-bridge,
/// Antrea's antrea-*), as written in a zone (`+` is firewalld's wildcard).
fn pod_interface(name: &str) -> bool {
    const PREFIXES: [&str; 10] = [
        "cni",
        "flannel",
        "cali",
        "tunl",
        "vxlan.calico",
        "cilium",
        "lxc",
        "weave",
        "kube-bridge",
        "antrea",
    ];
    let stem = name.trim_end_matches('+');
    PREFIXES
        .iter()
        .any(|p| stem.starts_with(p) || (name.ends_with('+') && p.starts_with(stem)))
}

/// "zones with target ACCEPT: trusted (/usr/lib/firewalld/zones/trusted.xml): no source, no
/// interface".
fn accepting_zones(zones: &[&firewalld::Zone]) -> String {
    if zones.is_empty() {
        return "no zone has target ACCEPT".into();
    }
    let each: Vec<String> = zones
        .iter()
        .map(|z| {
            let sources: Vec<String> = z
                .sources
                .iter()
                .map(|s| match s {
                    ZoneSource::Address(a) | ZoneSource::Other(a) => escape(a).into_owned(),
                })
                .collect();
            format!(
                "{} ({}): sources [{}], interfaces [{}]",
                escape(&z.name),
                escape(&z.path),
                sources.join(", "),
                escape(&z.interfaces.join(", "))
            )
        })
        .collect();
    format!("zones with target ACCEPT: {}", each.join("; "))
}

/// The pod network: flannel's subnet file (the node's own), the inventory's
/// kube_pods_subnet, else k3s's and RKE2's default cluster-cidr (a server may set another).
fn pod_network(ctx: &Ctx) -> Option<PodNetwork> {
    if let Some((cidr, line)) = ctx
        .facts
        .whole_text(firewalld::FLANNEL_SUBNET)
        .and_then(|t| firewalld::flannel_network(&t))
    {
        return Some(PodNetwork {
            cidr,
            from: format!("{}:{line} FLANNEL_NETWORK", firewalld::FLANNEL_SUBNET),
            certain: true,
        });
    }
    if let Some(cidr) = ctx.host.var_set("kube_pods_subnet") {
        return Some(PodNetwork {
            cidr: cidr.to_owned(),
            from: "the inventory's kube_pods_subnet".into(),
            certain: true,
        });
    }
    rancher(ctx).then(|| PodNetwork {
        cidr: "10.42.0.0/16".into(),
        from: "k3s's and RKE2's default cluster-cidr; a server's cluster-cidr may differ".into(),
        certain: false,
    })
}

fn rancher(ctx: &Ctx) -> bool {
    matches!(ctx.facts.flavour.kind, FlavourKind::K3s | FlavourKind::Rke2)
}

/// What to do: k3s's documented rules with the node's networks where known, or firewalld
/// off; and what a reload or stop does to the other rules with the iptables backend.
fn remedy(ctx: &Ctx, pods: Option<&PodNetwork>, when: When) -> String {
    let pod = pods.map_or("POD_CIDR".to_owned(), |p| escape(&p.cidr).into_owned());
    let service = match ctx.host.var_set("kube_service_addresses") {
        Some(s) => escape(s).into_owned(),
        None if rancher(ctx) => "10.43.0.0/16".to_owned(),
        None => "SERVICE_CIDR".to_owned(),
    };
    let mut out = match when {
        When::Now => format!(
            "stop firewalld, as k3s's requirements recommend and RKE2's known issues ask (systemctl disable --now firewalld), or put the pod and service networks in the trusted zone, k3s's rules for a node that keeps it: firewall-cmd --permanent --zone=trusted --add-source={pod}; firewall-cmd --permanent --zone=trusted --add-source={service}; firewall-cmd --reload (and open what the nodes use between them, 8472/udp for flannel's VXLAN, 10250/tcp)"
        ),
        // firewall-cmd talks to the running daemon; firewall-offline-cmd edits its files.
        When::AtBoot => format!(
            "keep it from starting at boot, as k3s's requirements recommend and RKE2's known issues ask (systemctl disable firewalld), or put the pod and service networks in the trusted zone before the next boot, k3s's rules for a node that keeps it, written while it is stopped: firewall-offline-cmd --zone=trusted --add-source={pod}; firewall-offline-cmd --zone=trusted --add-source={service} (and open what the nodes use between them, 8472/udp for flannel's VXLAN, 10250/tcp)"
        ),
    };
    // (Stopped already, it flushes nothing more: disabling it or editing its files offline
    // reloads nothing.)
    if when == When::Now && ctx.facts.firewalld.backend.value == "iptables" {
        let unit = escape(&ctx.facts.services.kubelet_unit);
        out.push_str(&format!(
            "; with FirewallBackend=iptables, firewalld's reload and stop flush every iptables table, kube-proxy's and the network plugin's rules with them: restart {unit} (or kube-proxy and the network plugin's pod on the node) afterwards"
        ));
    }
    out
}
