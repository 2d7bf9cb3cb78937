//! `corefile_forward`: the root block's `forward .` of a cluster Corefile (kube-system's
//! `coredns` or `nodelocaldns` ConfigMap) sent to the given servers, as Kubespray renders
//! `upstream_dns_servers` there. The change is the cluster's, not the node's: each host
//! that asks adds itself to it, and `plan` keeps one change per ConfigMap key
//! (`super::super::place_cluster_changes`). Without cluster access it names the step to
//! do by hand.

use std::net::IpAddr;

use minijinja::Value as Ctx;
use serde_json::Value as Json;

use super::error::PlanErrorKind;
use super::state::ConfigMapSet;
use super::{Outcome, Run, State};
use crate::cluster::{NodeView, corefile};
use crate::plan::model::{Note, Reason};
use crate::playbook::action::CorefileForwardArgs;

impl Run<'_> {
    pub(super) fn corefile_forward(
        &self,
        args: &CorefileForwardArgs,
        ctx: &Ctx,
        state: &mut State,
        reason: &Reason,
    ) -> Result<Outcome, PlanErrorKind> {
        let configmap = self.string_arg(Some(&args.configmap), "configmap", ctx)?;
        if !["coredns", "nodelocaldns"].contains(&configmap.as_str()) {
            return Err(PlanErrorKind::ConfigMapName { got: configmap });
        }
        let servers = self.servers(args, ctx)?;
        if let Some(why) = loops_back(&servers, &cluster_addresses(ctx)) {
            return Ok(Outcome::Failed(format!(
                "the {configmap} Corefile is left as it is: {why}"
            )));
        }
        let via = match self.cluster {
            NodeView::Unavailable { reason: why } => {
                state.notes.push(Note {
                    playbook: reason.playbook.clone(),
                    message: format!(
                        "Set `forward .` in the `.:53` block of the {configmap} Corefile to {} \
                         (kubectl -n kube-system edit configmap {configmap}). dnsfix cannot do \
                         it: the cluster could not be read ({why}).",
                        servers.join(" ")
                    ),
                });
                return Ok(Outcome::Unchanged);
            }
            NodeView::Read { via, .. } => via,
        };
        let all: Vec<&crate::cluster::Corefile> = self
            .corefiles
            .iter()
            .filter(|c| c.configmap == configmap)
            .collect();
        if all.is_empty() {
            return Ok(Outcome::Already(format!(
                "the cluster has no {configmap} ConfigMap with a Corefile"
            )));
        }
        // Only a Corefile a pod loads: CoreDNS's pods were listed and none loads this one (a
        // stale `coredns` beside a Helm release's, a second `Corefile*` key), so an edit
        // changes nothing, and DNS-COREFILE-UPSTREAM-DRIFT does not judge it either.
        let mine: Vec<&crate::cluster::Corefile> =
            all.iter().copied().filter(|c| !c.unloaded).collect();
        if mine.is_empty() {
            return Ok(Outcome::Already(format!(
                "no DNS pod loads the {configmap} ConfigMap's Corefile ({}): left as it is",
                all.iter()
                    .map(|c| c.key.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let mut already = Vec::new();
        for c in mine {
            if let Some(refusal) = left_to_owner(&configmap, c, &servers) {
                return Ok(Outcome::Failed(refusal));
            }
            // A Corefile not as Kubespray renders it (no root `forward .`), or servers
            // CoreDNS would not load: the playbook stops here and says why, the host's
            // other fixes go on.
            let edit = match corefile::set_root_forward(&c.text, &servers) {
                Ok(edit) => edit,
                Err(message) => {
                    return Ok(Outcome::Failed(format!(
                        "the {configmap} Corefile ({}) is left as it is: {message}",
                        c.key
                    )));
                }
            };
            let Some(edit) = edit else {
                already.push(format!(
                    "the {configmap} Corefile ({}) already forwards . to {}",
                    c.key,
                    servers.join(" ")
                ));
                continue;
            };
            let set = ConfigMapSet {
                configmap: configmap.clone(),
                key: c.key.clone(),
                via: via.clone(),
                before: c.text.clone(),
                after: edit.text,
                description: format!(
                    "forward {} {} → {} (the {} block, line {})",
                    crate::text::escape(&edit.from),
                    edit.was.join(" "),
                    servers.join(" "),
                    crate::text::escape(&edit.block),
                    edit.line
                ),
                reason: reason.clone(),
            };
            if !state.configmap_sets.contains(&set) {
                state.configmap_sets.push(set);
            }
        }
        if state
            .configmap_sets
            .iter()
            .any(|s| s.configmap == configmap)
        {
            Ok(Outcome::Unchanged)
        } else {
            Ok(Outcome::Already(already.join("; ")))
        }
    }
}

impl Run<'_> {
    /// The task's `servers`: a list of strings, not empty.
    fn servers(&self, args: &CorefileForwardArgs, ctx: &Ctx) -> Result<Vec<String>, PlanErrorKind> {
        let servers = match self.eval(&args.servers, ctx)? {
            Json::Array(items) => items
                .into_iter()
                .map(|v| match v {
                    Json::String(s) => Ok(s),
                    got => Err(PlanErrorKind::ListItem { got }),
                })
                .collect::<Result<Vec<String>, _>>()?,
            got => return Err(PlanErrorKind::NotAList { got }),
        };
        if servers.is_empty() {
            return Err(PlanErrorKind::ArgEmpty { key: "servers" });
        }
        Ok(servers)
    }
}

/// Why a Corefile another owner writes back is left as it is, naming where the change
/// belongs: a Helm release's ConfigMap (RKE2's chart, the CoreDNS Helm chart installed as
/// `coredns`), whose next upgrade or deploy writes the chart's Corefile back, or another
/// owner's (k3s's deploy controller, the addon manager); or one outside kube-system
/// (CoreDNS found through its Service elsewhere), which apply does not write. None for one
/// dnsfix may edit.
fn left_to_owner(
    configmap: &str,
    c: &crate::cluster::Corefile,
    servers: &[String],
) -> Option<String> {
    if let Some(release) = &c.helm_release {
        return Some(format!(
            "the {configmap} Corefile ({}) is left as it is: Helm release {release} owns ConfigMap {}/{configmap} and its next upgrade would undo the edit; instead copy the release's whole `servers` list (helm get values --all {release} -n {} -o yaml > values.yaml), set only the `forward` entry's parameters to . {} there and {} (Helm replaces a list value whole: a `servers` with the forward entry alone drops kubernetes, cache and loop)",
            c.key,
            c.namespace(),
            c.helm_namespace(),
            servers.join(" "),
            crate::cluster::helm_upgrade(
                release,
                c.helm_chart.as_deref(),
                c.helm_namespace(),
                "values.yaml"
            )
        ));
    }
    if let Some(owner) = &c.owner {
        return Some(format!(
            "the {configmap} Corefile ({}) is left as it is: {owner} owns ConfigMap {}/{configmap} and writes it back over an edit; set `forward .` to {} where that owner takes it from instead",
            c.key,
            c.namespace(),
            servers.join(" ")
        ));
    }
    // Found through a cluster DNS Service elsewhere: apply changes kube-system's
    // ConfigMaps only.
    (c.namespace() != "kube-system").then(|| {
        format!(
            "the {configmap} Corefile ({}) is left as it is: ConfigMap {}/{configmap} is outside kube-system, where dnsfix changes ConfigMaps; set `forward .` in its `.:53` block to {} by hand (kubectl -n {} edit configmap {configmap})",
            c.key,
            c.namespace(),
            servers.join(" "),
            c.namespace()
        )
    })
}

/// The cluster's own DNS addresses the playbook context holds (`cluster_addresses`:
/// clusterDNS, nodelocaldns's, the CoreDNS Service's).
fn cluster_addresses(ctx: &Ctx) -> Vec<IpAddr> {
    ctx.get_attr("cluster_addresses")
        .ok()
        .and_then(|list| list.try_iter().ok())
        .map(|items| {
            items
                .filter_map(|v| v.as_str().and_then(|s| s.parse().ok()))
                .collect()
        })
        .unwrap_or_default()
}

/// Why forwarding CoreDNS's and nodelocaldns's root zone to `servers` sends their questions
/// back to themselves, where it does: a loopback or unspecified address is, in CoreDNS's
/// pod, the pod itself, and one of the cluster's own DNS addresses (`cluster`) is CoreDNS
/// or nodelocaldns again. Either is a forwarding loop: the loop plugin halts the server at
/// start, a reload's too (plugin/loop README at coredns 4b26cced: `Loop ... detected`, a
/// fatal error), so every pod that reloads the edit crash-loops, and without the plugin the
/// questions circle until memory runs out. Cluster DNS gone, where the finding was a
/// warning: Kubespray would render the same line, but dnsfix does not write it.
fn loops_back(servers: &[String], cluster: &[IpAddr]) -> Option<String> {
    let looping: Vec<String> = servers
        .iter()
        .filter_map(|s| {
            let ip = corefile::target_address(s)?;
            let what = if crate::facts::resolv_conf::is_loopback(ip) || ip.is_unspecified() {
                "a loopback or unspecified address: in CoreDNS's pod, the pod itself"
            } else if cluster.contains(&ip) {
                "the cluster's own DNS"
            } else {
                return None;
            };
            Some(format!("{} is {what}", crate::text::escape(s)))
        })
        .collect();
    (!looping.is_empty()).then(|| {
        format!(
            "upstream_dns_servers would forward names outside the cluster back into cluster DNS ({}): a loop CoreDNS's loop plugin stops every pod on; list real upstream servers in upstream_dns_servers",
            looping.join("; ")
        )
    })
}
