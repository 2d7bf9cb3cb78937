//! A CNI configuration file the container runtime cannot load, sorting first: containerd
//! then gives no new pod a network, CoreDNS's among them (DNS-CNI-CONFIG-INVALID).

use super::{Ctx, NO_KUBELET, RuleOutcome, kube_minor, not_a_node};
use crate::diagnose::finding::Severity;
use crate::facts::cni::{LaterConfig, dir_of, main_plugin};
use crate::facts::node_facts::{Effective, FlavourKind};
use crate::text::escape;

const ID: &str = "DNS-CNI-CONFIG-INVALID";

/// The runtime the kubelet hands pods to, as far as what it does with a file libcni
/// refuses goes.
enum Runtime {
    /// containerd's CRI plugin: stops at the file and keeps no network.
    Containerd(String),
    /// CRI-O, cri-dockerd, the dockershim: log the file and take the next.
    Skips(String),
    /// An endpoint dnsfix does not know, or no way to tell.
    Unknown(String),
}

pub(super) fn cni_config_invalid(ctx: &Ctx) -> RuleOutcome {
    let cni = &ctx.facts.cni;
    if not_a_node(ctx) {
        return RuleOutcome::NotApplicable(NO_KUBELET.into());
    }
    let Some(first) = cni.refused.first() else {
        return match &cni.unread {
            Some(path) => ctx.unknown(ID, format!("{path} could not be read")),
            None => RuleOutcome::Pass,
        };
    };
    // The file in effect, where it is in the same directory: the one the runtime reads.
    let accepted = cni.config.as_deref().filter(|c| dir_of(c) == first.dir());
    let mut evidence: Vec<String> = cni.refused.iter().map(ToString::to_string).collect();
    let runtime = runtime(ctx);
    // No file of the directory loads: no runtime has a network to give.
    let Some(config) = accepted else {
        evidence.push(match runtime {
            Runtime::Containerd(why) => format!("runtime: containerd ({why})"),
            Runtime::Skips(who) => format!("runtime: {who}, which skips each and finds no other"),
            Runtime::Unknown(why) => format!("runtime: not known ({why}); none has a file to load"),
        });
        return RuleOutcome::Findings(vec![ctx.finding(
            ID,
            Severity::Critical,
            format!(
                "the runtime loads no pod network: no CNI file in {} loads; {NO_NETWORK}",
                first.dir()
            ),
            evidence,
            remedy(&first.path),
        )]);
    };
    let why = match runtime {
        Runtime::Containerd(why) => why,
        Runtime::Skips(_) => return RuleOutcome::Pass,
        Runtime::Unknown(why) => {
            return ctx.unknown_because(
                ID,
                format!("{first}, and {why}"),
                format!(
                    "containerd stops at that file and gives no pod a network; CRI-O and cri-dockerd skip it. Fix or move the file either way: {}",
                    remedy(&first.path)
                ),
            );
        }
    };
    evidence.push(format!("runtime: containerd ({why})"));
    evidence.push(format!(
        "{config} is the first file libcni accepts: the network the node is meant to have, which containerd never reaches"
    ));
    RuleOutcome::Findings(vec![ctx.finding(
        ID,
        Severity::Critical,
        format!(
            "containerd loads no pod network: {}, the first CNI file by name, does not load (it never reaches {config}); {NO_NETWORK}",
            first.path
        ),
        evidence,
        remedy(&first.path),
    )])
}

/// What a runtime with no network means for the node, from its next load of the directory.
const NO_NETWORK: &str = "from the runtime's next load of the directory (a file there written, renamed or removed, or its restart) no new pod on this node gets a network, CoreDNS's included, and the node goes NotReady";

/// What to do about the first refused file.
fn remedy(path: &str) -> String {
    format!(
        "move {path} out of its directory (or rename it to end in .bak), or repair it so libcni loads it; containerd loads the directory again when a file in it is written, renamed or removed (no restart), and `crictl info` then shows lastCNILoadStatus OK. If a network plugin's installer left it so (a full disk while it wrote the file), free the space and restart that plugin's pod on the node so it writes the file again"
    )
}

/// The runtime: the endpoint the kubelet is given (flag, config; k3s's own setting), else
/// the default: k3s's, RKE2's, MicroK8s's and k0s's embedded containerd; the kubelet's own
/// from 1.27 (kubelet config v1beta1 defaults.go), none in 1.24 to 1.26 (it does not start
/// without one), the dockershim before 1.24.
fn runtime(ctx: &Ctx) -> Runtime {
    if let Some(Effective { value, source, .. }) = &ctx.facts.kubelet.runtime_endpoint {
        let at = format!("{value} ({})", source.at());
        return if value.contains("containerd") {
            Runtime::Containerd(at)
        } else if ["crio", "cri-dockerd", "dockershim"]
            .iter()
            .any(|r| value.contains(r))
        {
            Runtime::Skips(at)
        } else {
            Runtime::Unknown(format!(
                "the kubelet's runtime endpoint is {at}, which dnsfix does not know"
            ))
        };
    }
    let embedded = match ctx.facts.flavour.kind {
        FlavourKind::K3s => Some("k3s"),
        FlavourKind::Rke2 => Some("RKE2"),
        FlavourKind::MicroK8s => Some("MicroK8s"),
        FlavourKind::K0s => Some("k0s"),
        _ => None,
    };
    if let Some(who) = embedded {
        return Runtime::Containerd(format!("{who}'s own; no other runtime endpoint is set"));
    }
    match kube_minor(ctx) {
        Some((minor, from)) if minor < 24 => {
            Runtime::Skips(format!("the dockershim, the default before 1.24 ({from})"))
        }
        Some((minor, from)) if minor < 27 => Runtime::Unknown(format!(
            "the kubelet is given no runtime endpoint dnsfix found, which it needs before 1.27 ({from})"
        )),
        Some((_, from)) => Runtime::Containerd(format!(
            "no runtime endpoint set: the kubelet's default, unix:///run/containerd/containerd.sock ({from})"
        )),
        None => Runtime::Containerd(
            "no runtime endpoint set: the kubelet's default from 1.27, unix:///run/containerd/containerd.sock".into(),
        ),
    }
}

const LEFTOVER_ID: &str = "DNS-CNI-CONFIG-LEFTOVER";

/// Network plugins whose node agent dnsfix tells by its process name: (the main plugin's
/// type in its CNI file, the agent's process, the plugin's name). The Cilium chart's agent
/// container runs `cilium-agent` (install/kubernetes/cilium/templates/cilium-agent/
/// daemonset.yaml); calico/node's runit services `exec calico-node -felix`
/// (node/filesystem/etc/service/available/felix/run); kube-flannel `/opt/bin/flanneld`
/// (Documentation/kube-flannel.yml, Kubespray's cni-flannel.yml.j2).
/// And Kubespray's `kube_network_plugin` for it.
const AGENTS: &[(&str, &str, &str, &str)] = &[
    ("cilium-cni", "cilium-agent", "Cilium", "cilium"),
    ("calico", "calico-node", "Calico", "calico"),
    ("flannel", "flanneld", "flannel", "flannel"),
];

/// DNS-CNI-CONFIG-LEFTOVER where CRI-O names its network in a way dnsfix does not read
/// ([`crate::facts::cni::Cni::runtime_unknown`], `why`) and the agent of `config`'s plugin
/// (`name`) does not run: the first file by name may not be the one CRI-O loads, and the
/// files after it are not listed. Unknown.
fn crio_unread(ctx: &Ctx, config: &str, name: &str, why: &str) -> RuleOutcome {
    ctx.unknown(
        LEFTOVER_ID,
        format!(
            "{} is the first CNI file by name and {name}'s agent does not run on this node, but which CNI network CRI-O gives pods is not known: {why}",
            escape(config)
        ),
    )
}

/// DNS-CNI-CONFIG-LEFTOVER: the runtime loads the first CNI file by name, and that is a
/// network plugin's whose agent does not run on the node, while the agent of a plugin whose
/// file sorts after it does: a former plugin's file left behind (Cilium's 05-cilium.conflist
/// after a move to Calico's 10-calico.conflist), or the first plugin's agent down. Either
/// way every new pod, CoreDNS's included, is handed to a plugin that cannot wire it; which
/// of the two it is, Kubespray's `kube_network_plugin` says where the inventory sets it.
pub(super) fn cni_config_leftover(ctx: &Ctx) -> RuleOutcome {
    if not_a_node(ctx) {
        return RuleOutcome::NotApplicable(NO_KUBELET.into());
    }
    let cni = &ctx.facts.cni;
    let (Some(config), Some(main)) = (&cni.config, main_plugin(&cni.plugins)) else {
        return RuleOutcome::NotApplicable("no CNI configuration in effect".into());
    };
    // Behind Multus, its cluster network decides, and moving Multus's own file away would
    // take its other networks with it: not judged here.
    if cni.plugins.first().is_some_and(|p| p == "multus") {
        return RuleOutcome::NotApplicable(format!(
            "{} is Multus's: its cluster network decides",
            escape(config)
        ));
    }
    let Some(&(_, agent, name, _)) = AGENTS.iter().find(|(plugin, ..)| *plugin == main) else {
        return RuleOutcome::NotApplicable(format!(
            "{} is a {} configuration, whose agent dnsfix does not tell by its process",
            escape(config),
            escape(main)
        ));
    };
    if agent_runs(ctx, main, agent) {
        return RuleOutcome::Pass;
    }
    if let Some(why) = &cni.runtime_unknown {
        return crio_unread(ctx, config, name, why);
    }
    let known = |later: &LaterConfig| -> Option<(&'static str, &'static str, &'static str)> {
        let plugin = later.plugin.as_deref()?;
        AGENTS
            .iter()
            .find(|(p, ..)| *p == plugin)
            .map(|&(plugin, agent, name, _)| (plugin, agent, name))
    };
    let Some(at) = cni.later.iter().position(|later| {
        known(later).is_some_and(|(plugin, agent, _)| agent_runs(ctx, plugin, agent))
    }) else {
        return RuleOutcome::Pass;
    };
    let meant = &cni.later[at];
    let (_, meant_agent, meant_name) = known(meant).unwrap_or_default();
    // Files between the two that the runtime would take next once the first is gone.
    let between = &cni.later[..at];
    let mut evidence = vec![
        format!(
            "{}: the first CNI file by name that loads, a {name} configuration ({main}): the one the runtime uses",
            escape(config)
        ),
        format!("no {agent} process of root's runs on the node"),
    ];
    evidence.extend(between.iter().map(|later| {
        format!(
            "{}: a {} configuration, next in line after it",
            escape(&later.path),
            escape(later.plugin.as_deref().unwrap_or("plugin-less"))
        )
    }));
    evidence.push(format!(
        "{}: a {meant_name} configuration, which sorts after it; {meant_agent} runs (pid {})",
        escape(&meant.path),
        ctx.facts.raw.pids.get(meant_agent).map_or(0, |p| *p)
    ));
    let leftovers: Vec<String> = std::iter::once(config.as_str())
        .chain(between.iter().map(|l| l.path.as_str()))
        .map(|p| escape(p).into_owned())
        .collect();
    let move_away = format!(
        "move {} out of {} (keep {}, or rename {} to end in .bak); the runtime loads the directory again when a file in it is renamed or removed, and then uses {}. Delete the pods stuck in ContainerCreating on the node so they are created again",
        leftovers.join(" and "),
        escape(dir_of(config)),
        if leftovers.len() == 1 {
            "it elsewhere"
        } else {
            "them elsewhere"
        },
        if leftovers.len() == 1 { "it" } else { "them" },
        escape(&meant.path)
    );
    let start_agent = format!(
        "start {name}'s agent on the node ({agent}: its pod; kubectl -n kube-system get pods -o wide --field-selector spec.nodeName=NODE) and leave the file"
    );
    let meant_by_inventory = ctx.host.var_str("kube_network_plugin");
    let remedy = match meant_by_inventory {
        Some(p) if Some(p) == kubespray_name(meant.plugin.as_deref()) => {
            evidence.push(format!(
                "the inventory's kube_network_plugin: {}",
                escape(p)
            ));
            move_away
        }
        Some(p) if Some(p) == kubespray_name(Some(main)) => {
            evidence.push(format!(
                "the inventory's kube_network_plugin: {}",
                escape(p)
            ));
            start_agent
        }
        _ => format!(
            "if {name} is no longer this cluster's network plugin (its file left behind by a move to {meant_name}), {move_away}; if it is (a move to it under way, its agent restarting), {start_agent}"
        ),
    };
    RuleOutcome::Findings(vec![ctx.finding(
        LEFTOVER_ID,
        Severity::Critical,
        format!(
            "the runtime hands new pods to {name} ({}), whose {agent} does not run here, not to {meant_name}, whose {meant_agent} runs: no new pod on this node gets a working network, CoreDNS's included",
            escape(config)
        ),
        evidence,
        remedy,
    )])
}

/// The name Kubespray's `kube_network_plugin` gives a plugin type of [`AGENTS`].
fn kubespray_name(plugin: Option<&str>) -> Option<&'static str> {
    AGENTS
        .iter()
        .find(|(p, ..)| Some(*p) == plugin)
        .map(|&(.., kubespray)| kubespray)
}

/// Whether `plugin`'s agent runs on the node: its process, root's (the gather counts only
/// those); k3s's own flannel runs inside k3s.
fn agent_runs(ctx: &Ctx, plugin: &str, agent: &str) -> bool {
    ctx.facts.raw.pids.contains_key(agent)
        || (plugin == "flannel"
            && ctx.facts.flavour.kind == FlavourKind::K3s
            && ctx.facts.raw.pids.contains_key("k3s"))
}
