//! `dns_pods`: `state: recreated` recreates the node's CoreDNS and nodelocaldns pods
//! through the cluster's API once its handlers ran (a pod reads the kubelet's resolv.conf
//! only when it is created). Without cluster access it names the step to do by hand.

use minijinja::Value as Ctx;

use super::error::PlanErrorKind;
use super::{Outcome, Run, State};
use crate::cluster::NodeView;
use crate::plan::model::{ClusterAction, Note, PodState, Reason};
use crate::playbook::action::DnsPodsArgs;

impl Run<'_> {
    pub(super) fn dns_pods(
        &self,
        args: &DnsPodsArgs,
        ctx: &Ctx,
        state: &mut State,
        reason: &Reason,
    ) -> Result<Outcome, PlanErrorKind> {
        let wanted = self.string_arg(Some(&args.state), "state", ctx)?;
        if wanted != "recreated" {
            return Err(PlanErrorKind::PodState { got: wanted });
        }
        let note = |message: String| Note {
            playbook: reason.playbook.clone(),
            message,
        };
        match self.cluster {
            NodeView::Unavailable { reason: why } => {
                state.notes.push(note(format!(
                    "Recreate the CoreDNS and nodelocaldns pods on this node after the kubelet \
                     restart, so their replacements read the new resolv.conf: kubectl -n \
                     kube-system delete pod -l '{selector}' \
                     --field-selector spec.nodeName=NODE. dnsfix cannot do it: the cluster \
                     could not be read ({why}).",
                    selector = crate::cluster::dns_pod_selector!()
                )));
                Ok(Outcome::Unchanged)
            }
            NodeView::Read { via, names, pods } => {
                // Each pod in its namespace: kube-system's, and CoreDNS's found through the
                // cluster DNS Service elsewhere, which apply lists again there by the
                // Service's selector. A node without a DNS pod now gets the action all the
                // same, its pods none: apply lists the node's pods after the kubelet
                // restart, and a CoreDNS or nodelocaldns pod put there since the plan (a
                // Deployment's rescheduling, a DaemonSet's rollout) read the old file as
                // one seen here would. What apply may delete is not widened: the same
                // labels and confirmed namespaces, on this node only.
                let action = ClusterAction::RecreateDnsPods {
                    node: names.clone(),
                    pods: pods
                        .iter()
                        .map(|p| PodState {
                            name: p.name.clone(),
                            app: p.app.clone(),
                            state: p.state(),
                            namespace: p.namespace.clone().filter(|n| n != "kube-system"),
                            selector: p
                                .selector
                                .clone()
                                .filter(|_| p.namespace() != "kube-system"),
                        })
                        .collect(),
                    via: via.clone(),
                    reasons: vec![reason.clone()],
                };
                // Two playbooks asking for it: one action, both reasons.
                match state.cluster.iter_mut().find(|a| a.same_target(&action)) {
                    Some(ClusterAction::RecreateDnsPods { reasons, .. }) => {
                        if !reasons.contains(reason) {
                            reasons.push(reason.clone());
                        }
                    }
                    None => state.cluster.push(action),
                }
                Ok(Outcome::Unchanged)
            }
        }
    }
}
