//! The kernel settings pod DNS needs: bridge netfilter on (DNS-BRIDGE-NF-OFF) and kept
//! over a reboot (DNS-BRIDGE-NF-NOT-PERSISTENT), forwarding on and kept (DNS-IP-FORWARD);
//! and which installers set them at every start, so that no file needs to.

use super::{Ctx, NO_KUBELET, RuleOutcome, dual_stack, kubelet_version, not_a_node};
use crate::diagnose::finding::Severity;
use crate::facts::cni::PodBridge;
use crate::facts::kubelet::version_minor_patch;
use crate::facts::node_facts::{FlavourKind, Observed, UnitState};
use crate::facts::raw::FileState;
use crate::facts::sysctl::normalize_value;

fn sysctl_live<'f>(ctx: &Ctx<'f>, key: &str) -> &'f Observed<String> {
    static UNKNOWN: std::sync::OnceLock<Observed<String>> = std::sync::OnceLock::new();
    ctx.facts
        .sysctls
        .get(key)
        .map(|s| &s.live)
        .unwrap_or_else(|| UNKNOWN.get_or_init(|| Observed::Unknown("not gathered".into())))
}

/// Whether pod DNS needs bridged IPv6 through ip6tables: the kubelet's clusterDNS is IPv6
/// ([`forwarding_families`]), or the inventory says the cluster is dual-stack. k3s and RKE2
/// set bridge-nf-call-ip6tables at start only with IPv6 (`enableIPv6`); MicroK8s never.
fn ipv6_bridged(ctx: &Ctx) -> bool {
    dual_stack(ctx) || forwarding_families(ctx).contains(&Family::V6)
}

/// The bridge keys pod DNS needs: those of the families it goes by ([`forwarding_families`]:
/// the kubelet's clusterDNS, so an IPv6-only cluster's query is bridged past ip6tables,
/// not iptables; flannel, kube-router and k3s set the ip6tables key on IPv6 nodes for
/// that), and the ip6tables key too where the inventory says the cluster is dual-stack.
fn bridge_keys(ctx: &Ctx) -> Vec<&'static str> {
    let families = forwarding_families(ctx);
    let mut keys = Vec::new();
    if families.contains(&Family::V4) {
        keys.push("net.bridge.bridge-nf-call-iptables");
    }
    if ipv6_bridged(ctx) {
        keys.push("net.bridge.bridge-nf-call-ip6tables");
    }
    keys
}

pub(super) fn bridge_nf_off(ctx: &Ctx) -> RuleOutcome {
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
    let deny_now = b.loaded == Observed::Known(false) && !b.denied_now.is_empty();
    if b.loaded == Observed::Known(false) {
        evidence.extend(off_denials(b));
    }
    // It matters only where pod traffic crosses a Linux bridge.
    match &ctx.facts.cni.pod_bridge {
        PodBridge::Routed(why) => {
            evidence.push(why.clone());
            RuleOutcome::Findings(vec![ctx.finding(
                id,
                Severity::Info,
                "bridge netfilter is off, which does not matter here: the CNI wires pods without a Linux bridge (routed, on Open vSwitch, on macvlan or ipvlan devices, or on a device of their own), and bridge netfilter sees only frames that cross one".into(),
                evidence,
                "nothing to do for this CNI; if pods will ever sit on a Linux bridge (bridge, flannel, Weave), modprobe br_netfilter and set net.bridge.bridge-nf-call-iptables=1".into(),
            )])
        }
        other => {
            evidence.push(match other {
                PodBridge::Bridged(why) => why.clone(),
                PodBridge::Unknown(why) if unknown_plugin(ctx).is_some() => why.clone(),
                PodBridge::Unknown(why) => format!("{why}: treated as bridged"),
                PodBridge::Routed(_) => String::new(),
            });
            if flannel_needs_module(ctx) && b.loaded == Observed::Known(false) {
                evidence.push("flannel v0.26 and later exit at start without br_netfilter (its iptables mode): kube-flannel crash-loops, and no pod on this node gets a network once its lease file is gone (after a reboot)".into());
            }
            bridged_off(ctx, evidence, deny_now)
        }
    }
}

/// What dnsfix does not know of the network plugin in effect, where its file was read and
/// dnsfix cannot tell whether it puts pods on a Linux bridge: a plugin of none of its lists
/// (a vendor's, a mode it has no ground truth for). Then nothing says bridge netfilter
/// matters, nor that it does not: a warning that says so, not the critical of a bridged
/// network. No file at all, one not read, or Multus whose cluster network dnsfix did not
/// read (a file unreadable or cut short, a name Multus looks up as a
/// NetworkAttachmentDefinition or in its own confDir: multus-cni pkg/k8sclient/k8sclient.go
/// `getNetDelegate`) is still taken as bridged: no plugin was seen at all, and the common
/// ones bridge. So is a CRI-O node whose settings may pick another network than the file's
/// ([`crate::facts::cni::Cni::runtime_unknown`]): its plugin is known, the network is not.
fn unknown_plugin(ctx: &Ctx) -> Option<String> {
    let cni = &ctx.facts.cni;
    if !matches!(cni.pod_bridge, PodBridge::Unknown(_))
        || cni.config.is_none()
        || cni.runtime_unknown.is_some()
    {
        return None;
    }
    crate::facts::cni::main_plugin(&cni.plugins).map(|main| {
        format!(
            "the network plugin {} is one dnsfix does not know",
            crate::text::escape(main)
        )
    })
}

/// Whether the network plugin is a flannel that will not start without br_netfilter:
/// flannel from v0.26 checks the key at start and exits where it does not exist
/// (flannel-io/flannel cdf76059 main.go, "Failed to check br_netfilter", unless its
/// nftables mode is on), and no pod on the node gets a network then. Not k3s's, which runs
/// flannel inside itself (and loads br_netfilter at its start).
fn flannel_needs_module(ctx: &Ctx) -> bool {
    ctx.facts.flavour.kind != FlavourKind::K3s
        && ctx
            .facts
            .cni
            .plugins
            .iter()
            .any(|p| p.starts_with("flannel"))
}

/// Whether the network plugin may not start without br_netfilter: flannel
/// ([`flannel_needs_module`]), or a plugin dnsfix does not know, which may be one.
fn plugin_may_need_module(ctx: &Ctx) -> bool {
    flannel_needs_module(ctx) || matches!(ctx.facts.cni.pod_bridge, PodBridge::Unknown(_))
}

/// DNS-BRIDGE-NF-OFF where pods may sit on a Linux bridge: critical, but a warning where
/// pods ask a NodeLocal DNSCache on the node ([`answered_on_node`]) and the network plugin
/// does not, or may not, stop for want of br_netfilter ([`plugin_may_need_module`]).
fn bridged_off(ctx: &Ctx, mut evidence: Vec<String>, deny_now: bool) -> RuleOutcome {
    // Without the module, flannel stops, and a network plugin dnsfix does not know may be
    // a flannel.
    let module_gone = ctx.facts.br_netfilter.loaded == Observed::Known(false);
    let local_cache =
        answered_on_node(ctx).filter(|_| !(module_gone && plugin_may_need_module(ctx)));
    let (severity, summary) = match (local_cache, unknown_plugin(ctx)) {
        (Some(why), _) => {
            evidence.push(why);
            (
                Severity::Warning,
                "bridge netfilter is off, which pod DNS on this node does not go through: pods ask the NodeLocal DNSCache on the node itself, not a CoreDNS pod across the bridge; other Services do, and a ClusterIP is unreachable from pods on this node that run one of its backends (as is the kube-dns Service, should pods fall back to it)".to_owned(),
            )
        }
        (None, Some(unknown)) => (
            Severity::Warning,
            format!("bridge netfilter is off, and {unknown}: if it puts pods on a Linux bridge (`ip -d link show type bridge` lists one, and `bridge link` the pods' veths on it), bridged pod traffic bypasses iptables and DNS replies come from the pod IP, not the service IP (\"reply from unexpected source\"); if it does not, this does not matter"),
        ),
        (None, None) => (
            Severity::Critical,
            "bridged pod traffic bypasses iptables: DNS replies come from the pod IP, not the service IP (\"reply from unexpected source\")".to_owned(),
        ),
    };
    RuleOutcome::Findings(vec![ctx.finding(
        "DNS-BRIDGE-NF-OFF",
        severity,
        summary,
        evidence,
        format!(
            "{}modprobe br_netfilter and set {}, then persist {}",
            if deny_now {
                "remove the deny-list line the evidence names (dnsfix leaves deny-lists to their owner), then "
            } else {
                ""
            },
            bridge_keys(ctx)
                .iter()
                .map(|k| format!("{k}=1"))
                .collect::<Vec<_>>()
                .join(" and "),
            if bridge_keys(ctx).len() > 1 { "both" } else { "it" }
        ),
    )])
}

/// Why pod DNS on this node does not cross the bridge between two pods, where it does
/// not: every clusterDNS address the kubelet hands pods is on the nodelocaldns interface,
/// so NodeLocal DNSCache on the node answers them (Kubespray's clusterDNS of
/// nodelocaldns_ip; the upstream manifest's kube-dns IP in iptables mode, which node-cache
/// also holds). A pod's query goes to its gateway, the bridge's own address, and up the
/// node's IP stack, whose reply is routed back; node-cache's own queries to CoreDNS leave
/// from the node, and CoreDNS's replies come back to it, not bridged to another pod.
/// Bridge netfilter matters to the bridged reply of a pod to a pod on the same bridge
/// alone: a Service's backend answering its client beside it. Not the kube-dns Service's
/// IP on the cache's interface under IPVS kube-proxy: IPVS takes a packet for a virtual
/// service at local input, local address or not, and sends it on to CoreDNS (so the
/// upstream nodelocaldns docs give node-cache the link-local address alone in IPVS mode).
fn answered_on_node(ctx: &Ctx) -> Option<String> {
    cache_on_node(ctx).map(|why| format!("{why}, not across the bridge"))
}

/// Why pods on this node ask NodeLocal DNSCache on the node itself, where they do: every
/// clusterDNS address is on the nodelocaldns interface ([`answered_on_node`]). Their
/// queries go to their gateway, an address of the node, and up its IP stack.
pub(super) fn cache_on_node(ctx: &Ctx) -> Option<String> {
    let Observed::Known(dns) = &ctx.facts.kubelet.cluster_dns else {
        return None;
    };
    let addrs = ctx.facts.nodelocaldns.as_ref()?;
    // The Service's IP counts only where kube-proxy is known not to be in IPVS mode.
    let not_ipvs = super::kube_proxy_ipvs(ctx).0 == Some(false);
    let cached = |a: &String| {
        addrs.contains(a) && (crate::facts::node_facts::is_node_local_address(a) || not_ipvs)
    };
    if dns.value.is_empty() || !dns.value.iter().all(cached) {
        return None;
    }
    // (Not the interface's other addresses: its IPv6 link-local one differs from node to
    // node, and would keep nodes with the same change apart in the plan.)
    Some(format!(
        "{} clusterDNS [{}] is on the nodelocaldns interface: pods ask NodeLocal DNSCache on the node itself, which answers them over the node's IP stack",
        dns.source.at(),
        dns.value.join(", "),
    ))
}

/// Where the boot loads br_netfilter from: a file and line, or the kernel command line.
fn listed_at(p: &crate::facts::node_facts::Persisted) -> String {
    if p.path == crate::facts::kernel_cmdline::PROC_CMDLINE {
        "modules_load= on the kernel command line".to_owned()
    } else {
        format!("{}:{}", p.path, p.line)
    }
}

/// DNS-BRIDGE-NF-OFF's evidence of a deny-list, for a br_netfilter not loaded: what makes
/// `modprobe br_netfilter` (the fix) fail or load nothing now, and what stops the boot
/// loading it where a file lists it.
fn off_denials(b: &crate::facts::node_facts::BrNetfilter) -> Vec<String> {
    let mut out: Vec<String> = b
        .denied_now
        .iter()
        .map(|d| {
            format!(
                "`modprobe br_netfilter` cannot load it: {}",
                d.describe("br_netfilter")
            )
        })
        .collect();
    // What stops the boot stops the fix's modules-load.d line as much as one there now.
    if let Some(p) = &b.persisted
        && !b.denied_at_boot.is_empty()
    {
        out.push(format!(
            "{} lists it for boot, and a deny-list stops it there",
            listed_at(p)
        ));
    }
    out.extend(
        b.denied_at_boot
            .iter()
            .filter(|d| !b.denied_now.contains(d))
            .map(|d| d.describe("br_netfilter")),
    );
    out
}

/// DNS-BRIDGE-NF-NOT-PERSISTENT's evidence for a br_netfilter loaded now that the node
/// does not load itself: nothing loads it at boot (only /etc/modules lists it, which
/// systemd does not read), or a deny-list stops the boot loading it all the same (where a
/// file lists it, or where the fix will).
fn module_not_persisted(ctx: &Ctx) -> Vec<String> {
    let b = &ctx.facts.br_netfilter;
    let mut evidence = Vec::new();
    if b.persisted.is_none() {
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
    if !b.denied_at_boot.is_empty() {
        if let Some(p) = &b.persisted {
            evidence.push(format!(
                "br_netfilter is loaded, and {} loads it at boot, but a deny-list stops it there",
                listed_at(p)
            ));
        }
        evidence.extend(b.denied_at_boot.iter().map(|d| d.describe("br_netfilter")));
    }
    evidence
}

/// DNS-BRIDGE-NF-NOT-PERSISTENT. The first CNI file's agent (Weave, kube-router: see
/// [`crate::facts::cni::BridgeNfAgent`]) loads br_netfilter and sets bridge netfilter at
/// every start where it is the pods' network. Where CRI-O may give pods another network of
/// the directory ([`crate::facts::cni::Cni::runtime_unknown`]), the file may be a former
/// plugin's left behind, whose agent no longer runs: it is not counted then, and where
/// counting it would have changed the outcome ([`same_call`]: more than its evidence), the
/// finding is unknown, saying why.
pub(super) fn bridge_nf_not_persistent(ctx: &Ctx) -> RuleOutcome {
    let cni = &ctx.facts.cni;
    let agent = cni.bridge_nf_agent.as_ref();
    let (Some(a), Some(why)) = (agent, &cni.runtime_unknown) else {
        return not_persistent(ctx, agent);
    };
    let without = not_persistent(ctx, None);
    if same_call(&without, &not_persistent(ctx, agent)) {
        return without;
    }
    let RuleOutcome::Findings(found) = &without else {
        return without;
    };
    let Some(f) = found.first() else {
        return without;
    };
    let file = cni.config.as_deref().map_or_else(
        || "its file".into(),
        |c| crate::text::escape(c).into_owned(),
    );
    ctx.unknown_because(
        "DNS-BRIDGE-NF-NOT-PERSISTENT",
        format!(
            "{} ({}); not so where {} is the network CRI-O gives pods ({}), which is not known ({why}; {file} is only the first CNI file by name)",
            f.summary,
            f.evidence.join("; "),
            a.name,
            a.why
        ),
        format!(
            "make CRI-O's network setting one dnsfix reads (cni_default_network under [crio.network]), then check again; where {} does not run on this node: {}",
            a.name, f.remediation
        ),
    )
}

/// Whether two outcomes of a rule tell the user the same: the same findings but for their
/// evidence (severity, status, summary, fix and playbook), or the same pass or
/// not-applicable. Where only the evidence differs, the user's call and action do not.
fn same_call(a: &RuleOutcome, b: &RuleOutcome) -> bool {
    match (a, b) {
        (RuleOutcome::Findings(a), RuleOutcome::Findings(b)) => {
            a.len() == b.len()
                && a.iter().zip(b).all(|(a, b)| {
                    a.id == b.id
                        && a.severity == b.severity
                        && a.status == b.status
                        && a.summary == b.summary
                        && a.remediation == b.remediation
                        && a.playbook == b.playbook
                        && a.wanted == b.wanted
                        && a.about == b.about
                })
        }
        _ => a == b,
    }
}

/// [`bridge_nf_not_persistent`] with `agent` as the network agent that sets bridge
/// netfilter at every start, where there is one.
fn not_persistent(ctx: &Ctx, agent: Option<&crate::facts::cni::BridgeNfAgent>) -> RuleOutcome {
    let id = "DNS-BRIDGE-NF-NOT-PERSISTENT";
    if not_a_node(ctx) {
        return RuleOutcome::NotApplicable(NO_KUBELET.into());
    }
    if let PodBridge::Routed(why) = &ctx.facts.cni.pod_bridge {
        return RuleOutcome::NotApplicable(format!(
            "no pod traffic crosses a Linux bridge ({why})"
        ));
    }
    // "Reverts at the next reboot" is only true of what is on now; what is off is
    // DNS-BRIDGE-NF-OFF's business (its fix persists too).
    let b = &ctx.facts.br_netfilter;
    let mut evidence = Vec::new();
    // k3s, RKE2, k0s and MicroK8s load br_netfilter themselves at every start, and so do
    // Weave and kube-router (see BridgeNfAgent).
    let agent_sets = |key: &str| agent.filter(|a| a.keys.contains(&key)).map(|a| a.name);
    // Weave loads it only with its network policy controller (init.sh: `if EXPECT_NPC !=
    // 0`, the default; a Weave deployed without the controller sets EXPECT_NPC=0): its
    // running weave-npc is the sign (xt_set is not: kube-proxy's IPVS mode loads it too).
    let agent_loads =
        agent.is_some_and(|a| a.name != "Weave" || ctx.facts.raw.pids.contains_key("weave-npc"));
    let installer_loads = installer_loads_br_netfilter(ctx) || agent_loads;
    // A module the node loads itself (built in, or by the installer or agent at its start)
    // needs no boot to load it.
    let boot_must_load = b.loaded == Observed::Known(true) && !b.built_in && !installer_loads;
    if boot_must_load {
        evidence.extend(module_not_persisted(ctx));
    }
    // What an installer sets at every start survives a reboot; a sysctl file that sets it
    // to 0 is what undoes it, under the running installer.
    let mut undone = Vec::new();
    // A key on now, which only a file the boot applies could turn off.
    let mut on = false;
    for key in bridge_keys(ctx) {
        let Some(s) = ctx.facts.sysctls.get(key) else {
            continue;
        };
        if s.live != Observed::Known("1".to_owned()) {
            continue;
        }
        on = true;
        if let Some(who) = installer_setting(ctx, key).or_else(|| agent_sets(key)) {
            undone.extend(undone_by_file(ctx, key, who));
            continue;
        }
        // Where no file sets the key, it is what br_netfilter sets it to when it loads: 1
        // (br_netfilter_sysctl_default, net/bridge/br_netfilter_hooks.c). A module loaded at
        // boot is then enough, and one that is not is the evidence above.
        match &s.persisted {
            Some(p) if normalize_value(&p.value) != "1" => evidence.push(format!(
                "{key} is 1 now; {}:{} sets it to {} at boot",
                p.path, p.line, p.value
            )),
            Some(_) | None => {}
        }
    }
    // A sysctl file the boot applies that could not be read may set a key that is on now
    // to anything.
    let unread = unread_sysctl_files(ctx);
    if evidence.is_empty() && undone.is_empty() && on && !unread.is_empty() {
        return ctx.unknown(id, unread);
    }
    // A modprobe.d file not read may deny the module the boot loads.
    if evidence.is_empty() && boot_must_load && b.persisted.is_some() && !b.deny_unread.is_empty() {
        return ctx.unknown(id, format!(
            "{} could not be read: whether a deny-list there stops br_netfilter at boot is not known",
            b.deny_unread.join(", ")
        ));
    }
    if !evidence.is_empty() {
        evidence.extend(undone);
        if !unread.is_empty() {
            evidence.push(unread);
        }
        let deny = boot_must_load && !b.denied_at_boot.is_empty();
        // Off after the reboot is DNS-BRIDGE-NF-OFF's warning where pods ask NodeLocal
        // DNSCache on the node, unless flannel then stops for want of the module.
        let module_gone = boot_must_load && (deny || b.persisted.is_none());
        let cache = answered_on_node(ctx).filter(|_| !(module_gone && plugin_may_need_module(ctx)));
        let unknown = unknown_plugin(ctx);
        let summary = not_persisted_summary(deny, cache.is_some(), unknown.as_deref());
        if let Some(why) = &cache {
            evidence.push(why.clone());
        }
        return RuleOutcome::Findings(vec![ctx.finding(
            id,
            if cache.is_some() || unknown.is_some() {
                Severity::Warning
            } else {
                Severity::High
            },
            summary,
            evidence,
            if deny {
                "remove the deny-list line the evidence names (or take br_netfilter off it: dnsfix leaves deny-lists to their owner), then persist br_netfilter in /etc/modules-load.d/ and each key as 1 in a sysctl.d file that wins".into()
            } else {
                "persist what the evidence names: br_netfilter in /etc/modules-load.d/, each key as 1 in a sysctl.d file that wins".into()
            },
        )]);
    }
    let who = installer_name(ctx.facts.flavour.kind).or(agent.map(|a| a.name));
    let Some(who) = who.filter(|_| !undone.is_empty()) else {
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

/// DNS-BRIDGE-NF-NOT-PERSISTENT's summary: what reverts at the reboot, and why it may not
/// matter (pods asking NodeLocal DNSCache on the node, a network plugin dnsfix does not
/// know).
fn not_persisted_summary(deny: bool, cache: bool, unknown: Option<&str>) -> String {
    let mut summary = if deny {
        "bridge netfilter is on now but a deny-list stops br_netfilter at boot: it reverts at the next reboot".to_owned()
    } else {
        "bridge netfilter is on now but not persisted: it reverts at the next reboot".to_owned()
    };
    if cache {
        summary.push_str(", which pod DNS here does not go through (pods ask NodeLocal DNSCache on the node), but a Service whose backend runs beside its client on this node does");
    } else if let Some(plugin) = unknown {
        summary.push_str(&format!(
            ", which matters only if pods sit on a Linux bridge, and {plugin}"
        ));
    }
    summary
}

/// The sysctl files the boot (or `sysctl --system`) applies that could not be read here,
/// said as one line; empty when every one was read.
fn unread_sysctl_files(ctx: &Ctx) -> String {
    use crate::facts::sysctl::{SYSCTL_CONF, SYSCTL_DIRS};
    let raw = &ctx.facts.raw;
    let mut paths: Vec<&str> = SYSCTL_DIRS
        .iter()
        .flat_map(|dir| raw.files_in(dir))
        .chain(raw.get(SYSCTL_CONF).map(|f| (SYSCTL_CONF, f)))
        .filter(|(p, f)| p.ends_with(".conf") && f.state == FileState::Unreadable)
        .map(|(p, _)| p)
        .collect();
    paths.dedup();
    if paths.is_empty() {
        return String::new();
    }
    format!(
        "{} could not be read: what it sets at boot is not known",
        paths.join(", ")
    )
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
                || (Family::of_key(key).is_some() && microk8s_forwards(ctx))
        }
        // Only `if enableIPv6` (k3s pkg/agent/syssetup).
        FlavourKind::K3s | FlavourKind::Rke2 if key == "net.bridge.bridge-nf-call-ip6tables" => {
            ipv6_bridged(ctx)
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
    let version = kubelet_version(ctx).and_then(|(v, _)| version_minor_patch(&v));
    !version.is_some_and(|(minor, patch)| match minor {
        ..=28 => true,
        29 => patch < 14,
        30 => patch < 10,
        31 => patch < 6,
        32 => patch < 2,
        _ => false,
    })
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
    use crate::facts::sysctl::{SYSCTL_CONF, SYSCTL_DIRS, persisted_files};
    // What systemd-sysctl applies (the boot's value, in the facts), then what procps
    // `sysctl --system` applies: the same files, and /etc/sysctl.conf last where no link
    // to it is among them (a node systemd boots does not read it then, procps does).
    let boot = ctx.facts.sysctls.get(key)?.persisted.as_ref();
    let files = ctx.facts.raw.config_files(&SYSCTL_DIRS, SYSCTL_CONF);
    let procps = persisted_files(&files, false).remove(key);
    let (path, line, assignment) = match (boot, procps) {
        (Some(p), _) if normalize_value(&p.value) != "1" => {
            (p.path.clone(), p.line, p.assignment(key))
        }
        (_, Some(p)) if normalize_value(&p.value) != "1" => {
            (p.path.clone(), p.line, p.assignment(key))
        }
        _ => return None,
    };
    Some(format!(
        "{path}:{line} sets {assignment}, which a later `sysctl --system` applies over the 1 {who} sets when it starts"
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
        && !(ctx.facts.flavour.kind == FlavourKind::MicroK8s && ipv6_bridged(ctx))
        && !matches!(ctx.facts.cni.pod_bridge, PodBridge::Routed(_));
    (bridge, restores_forwarding(ctx, Family::V4).is_some())
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
        Some(who) => installer_leaves_to_playbook(ctx, key, who),
        None => !installer || key != "net.bridge.bridge-nf-call-ip6tables" || ipv6_bridged(ctx),
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

/// Whether the bridge-netfilter playbook must set `key` although installer `who` sets it
/// at every start: it is off now, or a sysctl file undoes it under the running installer.
fn installer_leaves_to_playbook(ctx: &Ctx, key: &str, who: &str) -> bool {
    sysctl_live(ctx, key) != &Observed::Known("1".to_owned())
        || undone_by_file(ctx, key, who).is_some()
}

/// The forwarding sysctls the bridge-netfilter playbook sets to 1 and persists: those of
/// the [`forwarding_families`] DNS-IP-FORWARD checks, but not one a stopped installer turns
/// on when it starts, nor one a running installer, kube-proxy or the network plugin sets at
/// every start that is on now with no sysctl file setting it to 0 (or, for those two, at
/// all).
pub(crate) fn forwarding_keys(ctx: &Ctx) -> Vec<&'static str> {
    let mut keys = forwarding_keys_of_families(ctx);
    // What an interface made after the boot starts with, where the boot (or a sysctl run
    // since) leaves it off while forwarding is on.
    if forwarding_families(ctx).contains(&Family::V4)
        && super::new_interfaces::default_forwarding_wanted(ctx)
    {
        keys.push(crate::facts::sysctl::DEFAULT_FORWARDING);
    }
    keys
}

/// [`forwarding_keys`] of the families' own keys.
fn forwarding_keys_of_families(ctx: &Ctx) -> Vec<&'static str> {
    forwarding_families(ctx)
        .into_iter()
        .filter(|family| restores_forwarding(ctx, *family).is_none())
        .filter(|family| {
            let key = family.key();
            let live = sysctl_live(ctx, key);
            let on = live == &Observed::Known("1".to_owned());
            // A key the kernel does not have (IPv6 disabled) cannot be set.
            if live == &Observed::Absent {
                return false;
            }
            // As the rule: the installer's case first.
            match installer_setting(ctx, key) {
                Some(who) => installer_leaves_to_playbook(ctx, key, who),
                None => {
                    let unset = ctx
                        .facts
                        .sysctls
                        .get(key)
                        .is_some_and(|s| s.persisted.is_none());
                    !(on && unset && set_at_start(ctx, *family).is_some())
                }
            }
        })
        .map(Family::key)
        .collect()
}

/// [`stopped_installer`], where its next start turns forwarding of `family` on.
fn restores_forwarding<'f>(ctx: &Ctx<'f>, family: Family) -> Option<(&'static str, &'f str)> {
    stopped_installer(ctx).filter(|_| installer_setting(ctx, family.key()).is_some())
}

/// An address family whose forwarding pod DNS needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    V4,
    V6,
}

impl Family {
    /// The sysctl that turns forwarding of the family on for the node.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Family::V4 => "net.ipv4.ip_forward",
            Family::V6 => "net.ipv6.conf.all.forwarding",
        }
    }

    fn of_key(key: &str) -> Option<Family> {
        [Family::V4, Family::V6]
            .into_iter()
            .find(|f| f.key() == key)
    }

    fn name(self) -> &'static str {
        match self {
            Family::V4 => "IPv4",
            Family::V6 => "IPv6",
        }
    }

    fn proc_path(self) -> String {
        crate::facts::raw::sysctl_path(self.key())
    }
}

/// The families whose forwarding pod DNS needs, the kubelet's first clusterDNS server's
/// first: pods send their queries to it (kubelet hands them clusterDNS in order), and a
/// dual-stack cluster's kube-dns Service has the family of its first service range
/// (kubeadm GetDNSIP, Kubespray skydns_server). IPv4 too unless the cluster is IPv6 only:
/// clusterDNS lists only IPv6 servers, or the Kubespray inventory says `ipv4_stack: false`
/// (whose preinstall then sets no net.ipv4.ip_forward). With no clusterDNS known, IPv4.
pub(crate) fn forwarding_families(ctx: &Ctx) -> Vec<Family> {
    let servers: Vec<std::net::IpAddr> = match &ctx.facts.kubelet.cluster_dns {
        Observed::Known(e) => e.value.iter().filter_map(|a| a.parse().ok()).collect(),
        _ => Vec::new(),
    };
    let ipv4_stack = ctx.host.var_bool("ipv4_stack") != Some(false);
    let mut families = Vec::new();
    if servers.first().is_some_and(std::net::IpAddr::is_ipv6) || !ipv4_stack {
        families.push(Family::V6);
    }
    if ipv4_stack && (servers.is_empty() || servers.iter().any(std::net::IpAddr::is_ipv4)) {
        families.push(Family::V4);
    }
    families
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

pub(super) fn ip_forward(ctx: &Ctx) -> RuleOutcome {
    if not_a_node(ctx) {
        return RuleOutcome::NotApplicable(NO_KUBELET.into());
    }
    let mut findings: Vec<crate::diagnose::Finding> = Vec::new();
    for family in forwarding_families(ctx) {
        if let RuleOutcome::Findings(found) = forwarding(ctx, family) {
            for f in found {
                // An unread sysctl file is one "cannot tell" for both families.
                if !findings
                    .iter()
                    .any(|g| g.status == f.status && g.summary == f.summary)
                {
                    findings.push(f);
                }
            }
        }
        // The interfaces made after the boot, which start with the default's forwarding.
        if family == Family::V4
            && let Some(f) = super::new_interfaces::new_interfaces(ctx)
        {
            findings.push(f);
        }
    }
    if findings.is_empty() {
        RuleOutcome::Pass
    } else {
        RuleOutcome::Findings(findings)
    }
}

/// Who, other than a sysctl file, turns forwarding of `family` on whenever it starts, so
/// that a reboot does not leave it off, with the network plugin's reason: kube-proxy in
/// IPVS mode (IPv4 only: pkg/proxy/ipvs proxier, "Set the ip_forward sysctl we need for"),
/// and the network plugin ([`crate::facts::cni::Cni::forwards`]: the bridge plugin as the
/// pods' gateway for every pod it adds, the agents of Calico, Cilium, Antrea and Kube-OVN
/// at start).
fn set_at_start(ctx: &Ctx, family: Family) -> Option<(&'static str, Option<String>)> {
    if family == Family::V4 && super::kube_proxy_ipvs(ctx).0 == Some(true) {
        return Some(("kube-proxy (ipvs mode)", None));
    }
    // The files' plugin may not be the network CRI-O gives pods: see plugin_unsure.
    if ctx.facts.cni.runtime_unknown.is_some() {
        return None;
    }
    Some(("the network plugin", Some(plugin_forwards(ctx, family)?)))
}

/// The files' network plugin that turns forwarding of `family` on
/// ([`crate::facts::cni::Cni::forwards`]).
fn plugin_forwards(ctx: &Ctx, family: Family) -> Option<String> {
    let cni = &ctx.facts.cni;
    match family {
        Family::V6 => cni.forwards.clone().or_else(|| cni.forwards_ipv6.clone()),
        Family::V4 => cni.forwards.clone(),
    }
}

/// Why forwarding of `family` may or may not be set at every start, where only the files'
/// network plugin sets it and CRI-O may give pods another network of the same directory
/// ([`crate::facts::cni::Cni::runtime_unknown`]): [`set_at_start`] does not count it then.
fn plugin_unsure(ctx: &Ctx, family: Family) -> Option<String> {
    let why = ctx.facts.cni.runtime_unknown.as_ref()?;
    if family == Family::V4 && super::kube_proxy_ipvs(ctx).0 == Some(true) {
        return None;
    }
    let plugin = plugin_forwards(ctx, family)?;
    Some(format!(
        "{plugin}, where that is the network CRI-O gives pods; {why}"
    ))
}

/// DNS-IP-FORWARD for one family.
fn forwarding(ctx: &Ctx, family: Family) -> RuleOutcome {
    let id = "DNS-IP-FORWARD";
    let (key, name, proc) = (family.key(), family.name(), family.proc_path());
    let Some(s) = ctx.facts.sysctls.get(key) else {
        return ctx.unknown(id, format!("{key} was not gathered"));
    };
    // Where the installer sets it at every start, only a file that sets 0 matters.
    let installer = installer_setting(ctx, key);
    let persisted = match &s.persisted {
        _ if let Some(who) = installer => undone_by_file(ctx, key, who),
        Some(p) if p.value == "1" => None,
        Some(p) => Some(format!("{}:{} sets {}", p.path, p.line, p.assignment(key))),
        None if sysctl_conf_unread(ctx, key) => Some(format!("{key}: {SYSCTL_CONF_UNREAD}")),
        None => Some(format!(
            "{key} is set by no sysctl.d file or /etc/sysctl.conf{}",
            moved_aside(ctx, key)
        )),
    };
    // Off after a reboot, with the installer not started yet: it turns it on itself.
    if let (Observed::Known(v), Some((who, unit))) = (&s.live, restores_forwarding(ctx, family))
        && v != "1"
    {
        return RuleOutcome::Findings(vec![ctx.finding(
            id,
            Severity::Warning,
            format!("{name} forwarding is off while {who} runs no kubelet: {who} turns it on when it starts, before its kubelet; pods a stopped {who} left running are cut off until then"),
            vec![
                format!("{proc}: {v}"),
                format!("{who} runs no kubelet now ({unit}: {})", ctx.facts.services.kubelet_unit_state.as_str()),
            ],
            format!("start {who} ({unit}; if it keeps failing, journalctl -u {unit} says why), which sets it"),
        )]);
    }
    // Turning IPv6 forwarding on makes the kernel ignore router advertisements on every
    // interface whose accept_ra is not 2 (Documentation/networking/ip-sysctl.rst).
    let ra = match family {
        Family::V6 => {
            "; where the node takes its IPv6 address or default route from router advertisements (SLAAC), set net.ipv6.conf.<uplink>.accept_ra=2 first, or forwarding makes the kernel ignore them"
        }
        Family::V4 => "",
    };
    let unread = unread_sysctl_files(ctx);
    match &s.live {
        Observed::Known(v) if v == "1" && !unread.is_empty() => ctx.unknown(id, unread),
        Observed::Known(v) if v == "1" => match (persisted, installer) {
            (None, _) => RuleOutcome::Pass,
            // Set at every start only if CRI-O's network is the files' plugin's.
            (Some(ev), None) if s.persisted.is_none() && let Some(why) = plugin_unsure(ctx, family) => {
                ctx.unknown(id, format!("{ev}; it is set at every start by {why}"))
            }
            // Antrea's agent sets it only from 1.15 (antrea-io/antrea 0204fbc3): an older
            // one leaves it to the node, and which one runs is not known here.
            (Some(ev), None)
                if s.persisted.is_none()
                    && set_at_start(ctx, family).is_some_and(|(_, why)| {
                        why.is_some_and(|w| w.contains("the Antrea agent"))
                    }) =>
            {
                RuleOutcome::Findings(vec![ctx.finding(
                    id,
                    Severity::Info,
                    format!("{name} forwarding is on but not persisted: the Antrea agent turns it on at every start from Antrea 1.15; an older agent does not, and then it reverts at the next reboot"),
                    vec![ev, ctx.facts.cni.forwards.clone().unwrap_or_default()],
                    format!("nothing to do with Antrea 1.15 or later (kubectl -n kube-system get ds antrea-agent -o jsonpath='{{..image}}' says which runs); with an older one persist {key}=1 in a sysctl.d file"),
                )])
            }
            // Set at every start by something else: no file needs to.
            (Some(_), None) if s.persisted.is_none() && set_at_start(ctx, family).is_some() => {
                RuleOutcome::Pass
            }
            // A file sets 0, which the boot applies before kube-proxy or the network plugin
            // turns forwarding on again: only a later `sysctl --system` leaves it off.
            (Some(ev), None) if let Some((who, why)) = set_at_start(ctx, family) => {
                RuleOutcome::Findings(vec![ctx.finding(
                    id,
                    Severity::Warning,
                    format!("a sysctl file turns {name} forwarding off, which {who} turns on again: the next `sysctl --system` cuts pods off until {who} sets it again"),
                    std::iter::once(ev).chain(why).collect(),
                    format!("set {key}=1 in a sysctl.d file applied after that one, or change that line (for /etc/sysctl.conf, which `sysctl --system` applies last, change the line)"),
                )])
            }
            (Some(ev), Some(who)) => RuleOutcome::Findings(vec![ctx.finding(
                id,
                Severity::Warning,
                format!("a sysctl file turns {name} forwarding off, which {who} turns on when it starts: the next `sysctl --system` while {who} runs cuts pods off until {who} restarts"),
                vec![ev],
                format!("set {key}=1 in a sysctl.d file applied after that one, or change that line (for /etc/sysctl.conf, which `sysctl --system` applies last, change the line)"),
            )]),
            (Some(ev), None) => RuleOutcome::Findings(vec![ctx.finding(
                id,
                Severity::High,
                format!("{name} forwarding is on but not persisted: it reverts at the next reboot"),
                vec![ev],
                format!("persist {key}=1 in a sysctl.d file"),
            )]),
        },
        Observed::Known(v) => RuleOutcome::Findings(vec![ctx.finding(
            id,
            Severity::Critical,
            format!("{name} forwarding is off: pod traffic (DNS included) is not routed"),
            [Some(format!("{proc}: {v}")), persisted]
                .into_iter()
                .flatten()
                .collect(),
            format!("set {key}=1 now and persist it in a sysctl.d file{ra}"),
        )]),
        Observed::Absent => ctx.unknown(id, format!("{proc} does not exist")),
        Observed::Unknown(why) => ctx.unknown(id, why.clone()),
    }
}
