//! A CNI configuration file the container runtime cannot load, sorting first: containerd
//! then gives no new pod a network, CoreDNS's among them (DNS-CNI-CONFIG-INVALID).

use super::{Ctx, NO_KUBELET, RuleOutcome, kube_minor, not_a_node};
use crate::diagnose::finding::Severity;
use crate::facts::cni::dir_of;
use crate::facts::node_facts::{Effective, FlavourKind};

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
