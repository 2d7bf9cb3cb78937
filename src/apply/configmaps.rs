//! The cluster's part of a plan: its kube-system ConfigMap changes (a Corefile's
//! `forward .`), made once through kubectl before any host, each a compare-and-swap
//! ([`crate::cluster::configmap`]); and their undoing for `rollback`.

use crate::apply::record::ClusterUpdate;
use crate::cluster::configmap::Swapped;
use crate::cluster::{Access, Kubectl};
use crate::plan::model::ConfigMapChange;
use crate::transport::Transport;
use crate::util::sha256_hex;

/// The records of `changes` before anything is done: `pending`, saved before the first
/// write so an interrupted run can still be rolled back.
pub fn pending(changes: &[ConfigMapChange]) -> Vec<ClusterUpdate> {
    changes
        .iter()
        .map(|c| ClusterUpdate {
            configmap: c.configmap.clone(),
            key: c.key.clone(),
            via: c.via.clone(),
            outcome: "pending".into(),
            message: String::new(),
            before: c.before.clone(),
            after: c.after.clone(),
            old: None,
            resource_version: String::new(),
            hosts: c.hosts.clone(),
            reasons: c.reasons.clone(),
        })
        .collect()
}

/// Makes the `pending` changes; one record each, in order.
pub async fn apply(
    transport: &Transport,
    access: &Access,
    pending: Vec<ClusterUpdate>,
) -> Vec<ClusterUpdate> {
    swap_all(transport, access, pending, false).await
}

/// Puts back what the `applied` updates wrote (or may have: `pending` ones of an
/// interrupted run), each only while the key still holds what the run left there.
pub async fn restore(
    transport: &Transport,
    access: &Access,
    applied: &[ClusterUpdate],
) -> Vec<ClusterUpdate> {
    let undo: Vec<ClusterUpdate> = applied
        .iter()
        .filter(|u| may_have_written(u))
        .map(|u| ClusterUpdate {
            outcome: "pending".into(),
            message: String::new(),
            before: u.after.clone(),
            after: u.before.clone(),
            old: None,
            resource_version: String::new(),
            ..u.clone()
        })
        .collect();
    swap_all(transport, access, undo, true).await
}

/// Did the run write (or may it have written: interrupted) this ConfigMap key?
pub fn may_have_written(update: &ClusterUpdate) -> bool {
    update.outcome == "written" || update.outcome == "pending"
}

/// Sets each update's key from its `before` to its `after` through one kubectl
/// connection; without one, every update fails with the reason.
async fn swap_all(
    transport: &Transport,
    access: &Access,
    mut updates: Vec<ClusterUpdate>,
    undoing: bool,
) -> Vec<ClusterUpdate> {
    if updates.is_empty() {
        return updates;
    }
    let mut kubectl = match Kubectl::connect(transport, access).await {
        Ok((kubectl, _)) => kubectl,
        Err(why) => {
            for u in &mut updates {
                u.outcome = "error".into();
                u.message = format!("the cluster could not be reached: {why}");
            }
            return updates;
        }
    };
    for u in &mut updates {
        u.via = kubectl.via().to_owned();
        let expect = sha256_hex(u.before.as_bytes());
        let (outcome, message) = match kubectl
            .swap_configmap_key(&u.configmap, &u.key, &expect, &u.after)
            .await
        {
            Swapped::Written {
                old,
                resource_version,
            } => {
                u.old = Some(old);
                u.resource_version = resource_version;
                let done = if undoing { "restored" } else { "written" };
                (
                    "written",
                    format!("{done}, resourceVersion {}", u.resource_version),
                )
            }
            Swapped::Already => ("already", String::new()),
            Swapped::Stale(why) if undoing => {
                ("stale", format!("{why}: left as it is, not rolled back"))
            }
            Swapped::Stale(why) => ("stale", format!("{why}: plan again")),
            Swapped::Failed(why) => ("error", why),
        };
        u.outcome = outcome.into();
        u.message = message;
    }
    kubectl.close().await;
    updates
}
