//! Plans: the playbooks run against every host's facts and findings, giving typed per-host
//! changes, the facts they depend on, and the findings predicted to remain. Pure given the
//! gathered facts, except for reading the local inventory files an `inventory_set` edits.

pub mod context;
pub mod digest;
pub mod inventory_change;
pub mod markdown;
pub mod model;
pub mod planner;
pub mod policy;
pub mod predict;
pub mod redact;
pub mod render;
pub mod saved;

use std::collections::{BTreeMap, BTreeSet, HashSet};

pub use model::{Change, HostPlan, HostStatus, Plan};

use crate::diagnose::{self, Finding, FindingStatus, HostDiagnosis, rules};
use crate::facts::NodeFacts;
use crate::gather::HostOutcome;
use crate::inventory::{Host, Inventory};
use crate::playbook::{Batch, Playbook, Playbooks};
use model::{FindingRecord, HostPlanError, InventoryChange, InventoryRef, PlaybookRef, Summary};

/// Builds the plan for `hosts` (the selected hosts, in inventory order) from their gather
/// `outcomes` (same order). Each host's facts are dropped as soon as its plan is made:
/// the fleet-wide judgements (drift, stray search domains) are made before, so at a
/// thousand hosts the plans grow while the facts shrink instead of both being held.
pub fn build(
    inventory: &Inventory,
    limit: Option<&str>,
    hosts: &[&Host],
    outcomes: Vec<HostOutcome>,
    playbooks: &Playbooks,
    cluster: &crate::cluster::Cluster,
) -> Plan {
    let mut outcomes = outcomes;
    settle_kubelet_versions(hosts, &mut outcomes, cluster);
    let diagnoses = {
        let gathered: Vec<(&Host, &NodeFacts)> = hosts
            .iter()
            .zip(&outcomes)
            .filter_map(|(h, o)| o.result.as_ref().ok().map(|f| (*h, f)))
            .collect();
        diagnose::diagnose_in(&gathered, cluster)
    };
    let by_host: BTreeMap<&str, &HostDiagnosis> =
        diagnoses.iter().map(|d| (d.host.as_str(), d)).collect();
    // Which hosts each playbook's `hosts` pattern selects. A pattern naming a group this
    // inventory does not have selects nothing (a shipped playbook may target `kube_node`).
    let selected: Vec<HashSet<String>> = playbooks
        .playbooks
        .iter()
        .map(|p| {
            inventory
                .select(Some(&p.hosts))
                .map(|hs| hs.into_iter().map(|h| h.name.clone()).collect())
                .unwrap_or_default()
        })
        .collect();

    let mut host_plans = Vec::new();
    let mut shared = SharedChanges::default();
    for (host, outcome) in hosts.iter().zip(outcomes) {
        let distro = outcome
            .result
            .as_ref()
            .ok()
            .and_then(context::kubespray_distro_resolv_conf);
        let plan = match outcome.result {
            Ok(facts) => {
                let mut findings = by_host
                    .get(host.name.as_str())
                    .map(|d| d.findings().cloned().collect::<Vec<_>>())
                    .unwrap_or_default();
                // As `check` shows them.
                findings.sort_by(Finding::worst_first);
                let applicable: Vec<&Playbook> = playbooks
                    .playbooks
                    .iter()
                    .zip(&selected)
                    .filter(|(_, hosts)| hosts.contains(&host.name))
                    .map(|(p, _)| p)
                    .collect();
                plan_reachable(
                    host,
                    &facts,
                    &findings,
                    playbooks,
                    &applicable,
                    cluster,
                    &mut shared,
                )
            }
            Err(error) => error_plan(
                &host.name,
                Vec::new(),
                "unreachable",
                format!("{}: {error}", error.kind()),
            ),
        };
        let mut plan = plan;
        // A group's kube_resolv_conf of dnsfix's own file, which a node a later scale.yml
        // adds gets (not where Kubespray's distro vars outrank it, which the node's OS says).
        let notes = inventory_change::group_dnsfix_file_notes(inventory, host, distro);
        plan.notes.extend(notes.into_iter().map(inventory_note));
        host_plans.push(plan);
    }
    let inventory_changes = place_inventory_changes(inventory, &shared.wanted, &mut host_plans);
    drop_if_the_control_plane_disagrees(inventory, &mut shared.configmap_sets, &mut host_plans);
    let cluster_changes = place_cluster_changes(shared.configmap_sets, &mut host_plans);
    name_cluster_playbooks(&mut host_plans, &cluster_changes);

    let summary = summarize(&host_plans, inventory_changes.len(), cluster_changes.len());
    Plan {
        kind: "dnsfix-plan".into(),
        format_version: model::PLAN_FORMAT_VERSION,
        dnsfix_version: env!("CARGO_PKG_VERSION").into(),
        created: crate::util::now_rfc3339(),
        inventory: inventory.path().map(|p| InventoryRef {
            path: p.display().to_string(),
            sha256: inventory_change::digest(p),
        }),
        limit: limit.map(str::to_string),
        groups: hosts
            .iter()
            .map(|h| {
                let groups = h.groups.iter().filter(|g| *g != "all").cloned().collect();
                (h.name.clone(), groups)
            })
            .collect(),
        playbooks: playbooks
            .playbooks
            .iter()
            .map(|p| PlaybookRef {
                name: p.name.clone(),
                source: p.source.clone(),
                sha256: p.sha256.clone(),
            })
            .collect(),
        hosts: host_plans,
        inventory_changes,
        cluster_changes,
        summary,
    }
}

/// The facts of each host read again with the kubelet's version from the cluster or the
/// inventory, where the binary gave none and a drop-in's resolvConf depends on it
/// ([`diagnose::settle`], as `check` reads them): the findings and the playbooks read the
/// same facts, and the diagnosis, finding them settled, reads none again.
fn settle_kubelet_versions(
    hosts: &[&Host],
    outcomes: &mut [HostOutcome],
    cluster: &crate::cluster::Cluster,
) {
    for (host, outcome) in hosts.iter().zip(outcomes) {
        if let Ok(facts) = &mut outcome.result
            && let Some(known) = diagnose::settle(&[(host, facts)], Some(cluster))
                .pop()
                .flatten()
        {
            *facts = known;
        }
    }
}

/// A note of the inventory's.
fn inventory_note(message: String) -> model::Note {
    model::Note {
        playbook: "inventory".into(),
        message,
    }
}

/// The findings as the plan records them, each with the playbook that fixes it: none for a
/// pod crash-looping on its Corefile's loop, which kubelet-resolvconf leaves alone
/// ([`name_cluster_playbooks`] names the one whose ConfigMap change, made, fixes it).
fn finding_records(findings: &[Finding], playbooks: &Playbooks) -> Vec<FindingRecord> {
    findings
        .iter()
        .map(|f| {
            let mut record = FindingRecord::from(f);
            record.playbook = if in_corefile(f) {
                None
            } else {
                playbooks.fixing(f.id).map(|p| p.name.clone())
            };
            record
        })
        .collect()
}

/// A DNS-POD-LOOP that its Corefile's loop explains (DNS-COREFILE-LOOP).
fn in_corefile(f: &Finding) -> bool {
    f.id == diagnose::cluster::POD_LOOP && f.about == Some(diagnose::cluster::POD_LOOP_IN_COREFILE)
}

/// What the hosts' plans change in what they share, gathered host by host: the inventory
/// and the cluster's ConfigMaps. [`build`] places them once every host is planned.
#[derive(Debug, Default)]
struct SharedChanges {
    /// The inventory values the playbooks set, each with the hosts it is set for.
    wanted: Vec<inventory_change::Wanted>,
    /// The ConfigMap keys the plans write, each with the host whose plan writes it.
    configmap_sets: Vec<(String, planner::ConfigMapSet)>,
}

/// The plan for one gathered host: its findings, the changes the `applicable` playbooks
/// (among `playbooks`) make (within policy), and the findings predicted to remain. The
/// inventory values the playbooks set for it and the ConfigMap keys its plan writes are
/// added to `shared`.
fn plan_reachable(
    host: &Host,
    facts: &NodeFacts,
    findings: &[Finding],
    playbooks: &Playbooks,
    applicable: &[&Playbook],
    cluster: &crate::cluster::Cluster,
    shared: &mut SharedChanges,
) -> HostPlan {
    let records = finding_records(findings, playbooks);
    let failing: BTreeSet<String> = findings
        .iter()
        .filter(|f| f.status == FindingStatus::Failed)
        .map(|f| f.id.to_string())
        .collect();
    let kubespray = facts.flavour.kind == crate::facts::node_facts::FlavourKind::Kubespray;
    if let Err(message) = context::check_upstreams(host, kubespray) {
        return error_plan(&host.name, records, "inventory", message);
    }
    let base = base_context(host, facts, findings, cluster);
    let view = cluster.node_view(crate::cluster::node_names(host, facts));
    let corefiles = match cluster {
        crate::cluster::Cluster::Read { config, .. } => config.corefiles.as_slice(),
        crate::cluster::Cluster::Unavailable { .. } => &[],
    };
    let mut run = match planner::plan_host(
        applicable,
        &playbooks.env,
        facts,
        &base,
        &failing,
        (&view, corefiles),
    ) {
        Ok(run) => run,
        Err(error) => return error_plan(&host.name, records, "playbook", error.to_string()),
    };
    // Nothing outside what dnsfix (or the `allow:` of a playbook that asks for a change on
    // this host) may change: the same judgement `apply` makes of a saved plan.
    let asking: Vec<&Playbook> = playbooks
        .playbooks
        .iter()
        .filter(|p| {
            run.changes
                .iter()
                .flat_map(|c| c.reasons())
                .any(|r| r.playbook == p.name)
        })
        .collect();
    let before_of = |path: &str| {
        run.changes.iter().find_map(|c| match c {
            Change::WriteFile {
                path: p, before, ..
            } if p == path => before.as_deref(),
            _ => None,
        })
    };
    if let Err(message) = policy::check_host(
        &policy::Policy::for_node(facts, &asking),
        &run.changes,
        &run.handlers,
        before_of,
    ) {
        return error_plan(&host.name, records, "playbook", message);
    }
    let predicted = predict::predict(facts, &run.changes, &run.handlers);
    // kubeadm: the change the plan makes to the node's kubelet config, and not to kubeadm's
    // ConfigMap, is one the next `kubeadm upgrade node` undoes; the reviewer is told. So
    // is a restart that starts a kubelet binary other than the one judged.
    let notes = [
        diagnose::cluster::kubeadm_note(facts, &predicted, cluster),
        replaced_binary_note(facts, &run.handlers),
    ];
    run.notes
        .extend(notes.into_iter().flatten().map(|message| model::Note {
            playbook: String::new(),
            message,
        }));
    let after = diagnose::diagnose_planned(host, &predicted, cluster);
    let mut still: BTreeSet<String> = after
        .findings()
        .filter(|f| f.status == FindingStatus::Failed)
        .map(|f| f.id.to_string())
        .collect();
    for set in &run.inventory_sets {
        if host.var(&set.key) == Some(&set.value) {
            continue;
        }
        match shared
            .wanted
            .iter_mut()
            .find(|w| w.key == set.key && w.value == set.value)
        {
            Some(w) => w.hosts.push(host.name.clone()),
            None => shared.wanted.push(inventory_change::Wanted {
                key: set.key.clone(),
                value: set.value.clone(),
                hosts: vec![host.name.clone()],
            }),
        }
    }
    let node = PlannedNode {
        facts: &predicted,
        kubelet_file_loops: kubelet_file_loops(&after),
    };
    judge_cluster_after(host, node, cluster, &failing, &mut run, &mut still);
    only_what_it_fixes(&mut run.changes, &mut run.handlers, &still);
    let sets = std::mem::take(&mut run.configmap_sets);
    let mut plan = host_plan(host, facts, records, run, &failing, still);
    fixed_in_the_cluster(&mut plan, &sets);
    shared
        .configmap_sets
        .extend(sets.into_iter().map(|set| (host.name.clone(), set)));
    plan
}

/// Whether the resolv.conf the kubelet hands CoreDNS and nodelocaldns after the plan
/// (`after`: the node's rules on its predicted facts) still loops a pod that reads it, or
/// is missing: a pod recreated on it is not predicted to come up.
fn kubelet_file_loops(after: &HostDiagnosis) -> bool {
    after
        .findings()
        .filter(|f| f.status == FindingStatus::Failed)
        .any(|f| match f.id {
            rules::KUBELET_LOOPBACK | rules::CLUSTER_SELF_FORWARD => {
                f.severity == diagnose::Severity::Critical
            }
            rules::KUBELET_RESOLVCONF_MISSING => true,
            _ => false,
        })
}

/// A node as its plan leaves it, as [`judge_cluster_after`] judges it.
#[derive(Debug, Clone, Copy)]
struct PlannedNode<'a> {
    /// Its facts as the plan predicts them.
    facts: &'a NodeFacts,
    /// The resolv.conf its kubelet hands a recreated pod still loops, or is missing
    /// ([`kubelet_file_loops`]).
    kubelet_file_loops: bool,
}

/// The `cluster`'s rules judged again on the `node` as the plan leaves it
/// ([`diagnose::cluster::rules_planned`]): its predicted facts, the run's ConfigMap changes
/// written, and the node's DNS pods recreated where the run recreates them (on a kubelet
/// whose file still loops, or not). What still fails joins `still`. What those ConfigMap
/// changes alone mend is theirs to fix (their reason's `fixes`): a change dropped later
/// takes it back ([`take_back`]).
fn judge_cluster_after(
    host: &Host,
    node: PlannedNode,
    cluster: &crate::cluster::Cluster,
    failing: &BTreeSet<String>,
    run: &mut planner::HostRun,
    still: &mut BTreeSet<String>,
) {
    // The kubelet's version as the findings took it (the cluster's, where the node did
    // not say): a drop-in's resolvConf depends on it.
    let settled = diagnose::settle(&[(host, node.facts)], Some(cluster))
        .pop()
        .flatten();
    let predicted = settled.as_ref().unwrap_or(node.facts);
    let failed = |edits: &[(&str, &str, &str)]| -> BTreeSet<String> {
        let planned = diagnose::cluster::Planned {
            edits,
            // Its one kind of action: the node's DNS pods recreated.
            recreated: !run.cluster.is_empty(),
            kubelet_file_loops: node.kubelet_file_loops,
        };
        diagnose::cluster::rules_planned(host, predicted, cluster, planned)
            .iter()
            .flat_map(|(_, outcome)| match outcome {
                diagnose::RuleOutcome::Findings(found) => found.as_slice(),
                _ => &[],
            })
            .filter(|f| f.status == FindingStatus::Failed)
            .map(|f| f.id.to_string())
            .collect()
    };
    let edits: Vec<(&str, &str, &str)> = run
        .configmap_sets
        .iter()
        .map(|s| (s.configmap.as_str(), s.key.as_str(), s.after.as_str()))
        .collect();
    let with = failed(&edits);
    // What the plan's failing findings would be with `edits` but for the ones `left_out`
    // selects: those the change mends that `with` leaves fixed.
    let mended_by = |left_out: &dyn Fn(usize) -> bool| -> Vec<String> {
        let kept: Vec<(&str, &str, &str)> = (0..edits.len())
            .filter(|i| !left_out(*i))
            .map(|i| edits[i])
            .collect();
        let without = failed(&kept);
        failing
            .iter()
            .filter(|id| without.contains(*id) && !with.contains(*id))
            .cloned()
            .collect()
    };
    // Each change's: what fails again without it alone, so that dropping one takes back
    // neither what another kept mends alone (DNS-COREFILE-LOOP by coredns's edit, not
    // nodelocaldns's) nor more. What they mend only together, or either of them alone, is
    // every change's: any of them dropped may leave it failing.
    let each: Vec<Vec<String>> = (0..edits.len()).map(|i| mended_by(&|j| j == i)).collect();
    let together: Vec<String> = if edits.len() > 1 {
        mended_by(&|_| true)
            .into_iter()
            .filter(|id| !each.iter().flatten().any(|e| e == id))
            .collect()
    } else {
        Vec::new()
    };
    for (set, mut theirs) in run.configmap_sets.iter_mut().zip(each) {
        theirs.extend(together.iter().cloned());
        theirs.sort();
        set.reason.fixes = theirs;
    }
    still.extend(with);
}

/// A finding no playbook of the node names that a cluster change made for the host fixes
/// there (among its `fixes` once the changes are placed, and among what a reason of one of
/// `changes` naming the host fixes) names that change's playbook, and the note that no
/// playbook fixes it goes: DNS-COREFILE-LOOP mended by corefile-upstream's edit, and a
/// DNS-POD-LOOP on that loop where the plan also recreates the pod. A change dropped, or a
/// pod left to load the mended Corefile at its next start, names none.
fn name_cluster_playbooks(host_plans: &mut [HostPlan], changes: &[model::ConfigMapChange]) {
    for plan in host_plans.iter_mut() {
        let HostPlan {
            host,
            findings,
            fixes,
            unchanged,
            ..
        } = plan;
        let reasons: Vec<&model::Reason> = changes
            .iter()
            .filter(|c| c.hosts.contains(host))
            .flat_map(|c| &c.reasons)
            .collect();
        for record in findings
            .iter_mut()
            .filter(|r| r.playbook.is_none() && fixes.contains(&r.id))
        {
            let Some(reason) = reasons.iter().find(|r| r.fixes.contains(&record.id)) else {
                continue;
            };
            record.playbook = Some(reason.playbook.clone());
            let none = format!("no playbook fixes {} ", record.id);
            unchanged.retain(|n| !n.message.starts_with(&none));
        }
    }
}

/// What the cluster changes (`sets`) fix is fixed for the host that asked for them, one
/// without changes of its own too (unless hosts disagree on them: [`take_back`] then).
fn fixed_in_the_cluster(plan: &mut HostPlan, sets: &[planner::ConfigMapSet]) {
    for id in sets.iter().flat_map(|s| &s.reason.fixes) {
        if !plan.fixes.contains(id) {
            plan.fixes.push(id.clone());
        }
    }
}

/// What a cluster change dropped after all would have fixed (`ids`) still fails on the
/// host of `plan`: out of its fixes and the reasons of its changes and restarts, into what
/// remains.
fn take_back(plan: &mut HostPlan, ids: &[String]) {
    let back: BTreeSet<String> = plan
        .fixes
        .iter()
        .filter(|id| ids.contains(id))
        .cloned()
        .collect();
    if back.is_empty() {
        return;
    }
    plan.fixes.retain(|id| !back.contains(id));
    let remaining: BTreeSet<String> = plan.remaining.drain(..).chain(back.clone()).collect();
    plan.remaining = remaining.into_iter().collect();
    only_what_it_fixes(&mut plan.changes, &mut plan.handlers, &back);
}

/// A change, or a restart, is said to fix only what is fixed once the plan is applied
/// (`still`: what the prediction leaves failing): a playbook fixing several findings may
/// fix some of them on a node and not the others (a kubelet resolv.conf of the uplink file
/// with its stray search domain).
fn only_what_it_fixes(
    changes: &mut [Change],
    handlers: &mut [model::HandlerRun],
    still: &BTreeSet<String>,
) {
    for change in changes.iter_mut() {
        for reason in change.reasons_mut() {
            reason.fixes.retain(|id| !still.contains(id));
        }
    }
    for handler in handlers.iter_mut() {
        for reason in &mut handler.reasons {
            let Some((what, ids)) = reason.split_once(" ← ") else {
                continue;
            };
            let kept: Vec<&str> = ids.split(", ").filter(|id| !still.contains(*id)).collect();
            *reason = if kept.is_empty() {
                what.to_owned()
            } else {
                format!("{what} ← {}", kept.join(", "))
            };
        }
        let mut seen = BTreeSet::new();
        handler.reasons.retain(|r| seen.insert(r.clone()));
    }
}

/// The note for a plan that restarts a kubelet whose binary was replaced on disk since it
/// started (a package upgrade not yet restarted): its findings are the running kubelet's,
/// while its own restart starts the new binary, which may read the same files otherwise (a
/// `--config-dir` drop-in's resolvConf counts from 1.32). Known where the plan asked the
/// kubelet's version; apply holds such a plan to no version.
fn replaced_binary_note(facts: &NodeFacts, handlers: &[model::HandlerRun]) -> Option<String> {
    if !facts.kubelet.binary_replaced {
        return None;
    }
    let unit = &facts.services.kubelet_unit;
    let handler = handlers.iter().find(|h| &h.unit == unit)?;
    let running = match &facts.kubelet.version {
        Some(v) => format!("{v}, "),
        None => String::new(),
    };
    Some(format!(
        "the running kubelet ({running}pid {pid}) was started from a binary since replaced on \
         disk (an upgrade not yet restarted): this plan's {verb} of {unit} starts the new \
         binary, which dnsfix did not ask, while the findings are the running kubelet's; \
         restart {unit} and plan again to judge the kubelet that will run",
        pid = facts.kubelet.pid.map_or("?".to_owned(), |p| p.to_string()),
        verb = handler.action.verb(),
    ))
}

/// The playbooks' context for `host` ([`context::build`]), with the kubelet's version as
/// the rules take it (the cluster's, where the node was not asked).
fn base_context(
    host: &Host,
    facts: &NodeFacts,
    findings: &[Finding],
    cluster: &crate::cluster::Cluster,
) -> minijinja::Value {
    let version = rules::kubelet_version(&rules::Ctx::in_cluster(host, facts, Some(cluster)));
    minijinja::Value::from(minijinja::value::Serde(context::build(
        host,
        facts,
        findings,
        version,
        Some(cluster),
    )))
}

/// Assembles a gathered host's plan from the playbooks' `run`, the findings `failing`
/// now and those `still` failing once the changes are made.
fn host_plan(
    host: &Host,
    facts: &NodeFacts,
    records: Vec<FindingRecord>,
    run: planner::HostRun,
    failing: &BTreeSet<String>,
    still: BTreeSet<String>,
) -> HostPlan {
    let mut unchanged = run.unchanged.clone();
    // As the findings record it: a pod looping on its Corefile names no playbook here
    // ([`name_cluster_playbooks`] names one, and takes this note back, where a cluster
    // change made fixes it).
    let named = |id: &String| records.iter().any(|r| &r.id == id && r.playbook.is_some());
    for id in failing {
        if id != diagnose::drift::DRIFT_ID && !named(id) {
            unchanged.push(model::Note {
                playbook: String::new(),
                message: format!(
                    "no playbook fixes {id} (`dnsfix explain {id}` says how to fix it)"
                ),
            });
        }
    }
    let mut digest = run.digest.clone();
    planner::digest_core(&mut digest, facts);
    // A restart alone is a change: a run cut off before its handler left one due.
    let changing = !run.changes.is_empty() || !run.handlers.is_empty() || !run.cluster.is_empty();
    let status = if changing {
        HostStatus::Changes
    } else if !run.blocked.is_empty() {
        HostStatus::Blocked
    } else {
        HostStatus::Clean
    };
    let mut notes = run.notes;
    // Not "nothing to change" as for a node whose DNS is right: nothing was judged.
    if records.is_empty()
        && !changing
        && matches!(
            facts.kubelet.resolv_conf,
            crate::facts::node_facts::Observed::Absent
        )
    {
        notes.push(model::Note {
            playbook: String::new(),
            message: format!(
                "{}: the kubelet's rules did not apply, so nothing about pods' DNS \
                 was judged and nothing is planned (not a Kubernetes node?)",
                rules::NO_KUBELET
            ),
        });
    }
    HostPlan {
        host: host.name.clone(),
        status,
        error: None,
        findings: records,
        facts: Some(digest),
        changes: run.changes,
        handlers: run.handlers,
        cluster: run.cluster,
        blocked: run.blocked,
        notes,
        unchanged,
        // Fleet drift is judged across hosts, not predicted per host.
        fixes: if changing {
            failing
                .difference(&still)
                .filter(|id| *id != diagnose::drift::DRIFT_ID)
                .cloned()
                .collect()
        } else {
            Vec::new()
        },
        remaining: if changing {
            still.into_iter().collect()
        } else {
            Vec::new()
        },
    }
}

/// Where the inventory values hosts want are kept: the changes to the inventory's files
/// (with a note on each host they concern), or, with no inventory, a note saying why not.
fn place_inventory_changes(
    inventory: &Inventory,
    wanted: &[inventory_change::Wanted],
    host_plans: &mut [HostPlan],
) -> Vec<InventoryChange> {
    if inventory.path().is_none() {
        if !wanted.is_empty() {
            for plan in host_plans.iter_mut() {
                if wanted.iter().any(|w| w.hosts.contains(&plan.host)) {
                    plan.notes.push(model::Note {
                        playbook: "inventory".into(),
                        message: "Kubespray sets these values on its next run; without an \
                                  inventory (-i) dnsfix cannot say where to keep them"
                            .into(),
                    });
                }
            }
        }
        return Vec::new();
    }
    let (changes, notes) = inventory_change::changes(inventory, wanted);
    for plan in host_plans.iter_mut() {
        for message in notes.get(&plan.host).into_iter().flatten() {
            plan.notes.push(model::Note {
                playbook: "inventory".into(),
                message: message.clone(),
            });
        }
    }
    changes
}

/// Kubespray renders the Corefiles with the first control-plane host's
/// `upstream_dns_servers`; with the group split on it, dnsfix does not pick one: the
/// ConfigMap changes are dropped, with a note on each host that asked.
fn drop_if_the_control_plane_disagrees(
    inventory: &Inventory,
    configmap_sets: &mut Vec<(String, planner::ConfigMapSet)>,
    host_plans: &mut [HostPlan],
) {
    let Some(why) = control_plane_disagreement(inventory) else {
        return;
    };
    for (host, set) in configmap_sets.iter() {
        if let Some(plan) = host_plans.iter_mut().find(|p| &p.host == host) {
            take_back(plan, &set.reason.fixes);
            let message = format!("the Corefiles are left as they are: {why}");
            if !plan.notes.iter().any(|n| n.message == message) {
                plan.notes.push(model::Note {
                    playbook: String::new(),
                    message,
                });
            }
        }
    }
    configmap_sets.clear();
}

/// Why the inventory's `kube_control_plane` hosts do not agree on `upstream_dns_servers`
/// (set on some, different on others), if they do not.
fn control_plane_disagreement(inventory: &Inventory) -> Option<String> {
    let members = inventory.group_members("kube_control_plane")?;
    let values: Vec<(&str, Option<Vec<String>>)> = members
        .iter()
        .filter_map(|name| inventory.host(name))
        .map(|h| (h.name.as_str(), h.var_list("upstream_dns_servers")))
        .collect();
    let first = &values.first()?.1;
    if values.iter().all(|(_, v)| v == first) {
        return None;
    }
    let each: Vec<String> = values
        .iter()
        .map(|(name, v)| match v {
            Some(list) => format!("{name}: [{}]", list.join(", ")),
            None => format!("{name}: unset"),
        })
        .collect();
    Some(format!(
        "the kube_control_plane hosts disagree on upstream_dns_servers ({}); Kubespray \
         renders the first one's: set it once for the group",
        each.join("; ")
    ))
}

/// The cluster ConfigMap changes hosts asked for (`corefile_forward`): one per ConfigMap
/// key, with every host that asked for it. Hosts asking for different text for the same
/// key (different `upstream_dns_servers` per host) get none: a note on each says why.
fn place_cluster_changes(
    sets: Vec<(String, planner::ConfigMapSet)>,
    host_plans: &mut [HostPlan],
) -> Vec<model::ConfigMapChange> {
    let mut changes: Vec<model::ConfigMapChange> = Vec::new();
    let mut conflicting: Vec<(String, String)> = Vec::new();
    // What each host's change fixes there, taken back where the change is dropped.
    let asked: Vec<(String, String, String, Vec<String>)> = sets
        .iter()
        .map(|(host, s)| {
            let (m, k) = (s.configmap.clone(), s.key.clone());
            (host.clone(), m, k, s.reason.fixes.clone())
        })
        .collect();
    for (host, set) in sets {
        let same_key =
            |c: &&mut model::ConfigMapChange| c.configmap == set.configmap && c.key == set.key;
        match changes.iter_mut().find(same_key) {
            Some(c) if c.after == set.after => {
                if !c.hosts.contains(&host) {
                    c.hosts.push(host);
                }
                // One task's reason, with what it fixes on each host that asked.
                match c
                    .reasons
                    .iter_mut()
                    .find(|r| r.playbook == set.reason.playbook && r.task == set.reason.task)
                {
                    Some(r) => {
                        for id in set.reason.fixes {
                            if !r.fixes.contains(&id) {
                                r.fixes.push(id);
                            }
                        }
                    }
                    None => c.reasons.push(set.reason),
                }
            }
            Some(c) => {
                let key = (c.configmap.clone(), c.key.clone());
                if !conflicting.contains(&key) {
                    conflicting.push(key);
                }
                c.hosts.push(host);
            }
            None => changes.push(model::ConfigMapChange {
                configmap: set.configmap,
                key: set.key,
                via: set.via,
                before_sha256: crate::util::sha256_hex(set.before.as_bytes()),
                before: set.before,
                after: set.after,
                description: set.description,
                reasons: vec![set.reason],
                hosts: vec![host],
            }),
        }
    }
    for (configmap, key) in &conflicting {
        let dropped =
            |(_, m, k, _): &&(String, String, String, Vec<String>)| m == configmap && k == key;
        let asking: Vec<&String> = asked.iter().filter(dropped).map(|a| &a.0).collect();
        for plan in host_plans.iter_mut().filter(|p| asking.contains(&&p.host)) {
            let unfixed: Vec<String> = asked
                .iter()
                .filter(dropped)
                .filter(|a| a.0 == plan.host)
                .flat_map(|a| a.3.clone())
                .collect();
            take_back(plan, &unfixed);
            plan.notes.push(model::Note {
                playbook: String::new(),
                message: format!(
                    "the {configmap} Corefile ({key}) is left as it is: the hosts asking to \
                     change it want different upstream servers (one upstream_dns_servers for \
                     the whole cluster, as Kubespray reads it on the first control-plane host)"
                ),
            });
        }
    }
    changes.retain(|c| !conflicting.contains(&(c.configmap.clone(), c.key.clone())));
    changes
}

/// `plan` narrowed to the hosts `limit` selects (Ansible patterns over the host names and
/// the groups the plan records), with the inventory edits for those hosts and the summary
/// counted again.
pub fn subset(plan: &Plan, limit: &str) -> Result<Plan, crate::inventory::InventoryError> {
    let none: Vec<String> = Vec::new();
    let inventory = Inventory::from_memberships(plan.hosts.iter().map(|h| {
        let groups = plan.groups.get(&h.host).unwrap_or(&none);
        (h.host.as_str(), groups.as_slice())
    }))?;
    // The hosts and groups are the plan's: an error names it, not an inventory.
    let in_plan = |e: crate::inventory::InventoryError| {
        use crate::inventory::InventoryError::{LimitEmpty, LimitNoMatch};
        let inventory = "the plan".to_owned();
        match e {
            LimitNoMatch { pattern, .. } => LimitNoMatch { pattern, inventory },
            LimitEmpty { limit, .. } => LimitEmpty { limit, inventory },
            other => other,
        }
    };
    let chosen: HashSet<String> = inventory
        .select(Some(limit))
        .map_err(in_plan)?
        .into_iter()
        .map(|h| h.name.clone())
        .collect();
    let mut out = plan.clone();
    out.hosts.retain(|h| chosen.contains(&h.host));
    out.groups.retain(|h, _| chosen.contains(h));
    out.inventory_changes
        .retain(|c| c.hosts.iter().any(|h| chosen.contains(h)));
    out.cluster_changes
        .retain(|c| c.hosts.iter().any(|h| chosen.contains(h)));
    out.limit = Some(match &plan.limit {
        Some(made) => format!("{made} (shown: {limit})"),
        None => limit.to_owned(),
    });
    out.summary = summarize(
        &out.hosts,
        out.inventory_changes.len(),
        out.cluster_changes.len(),
    );
    Ok(out)
}

fn error_plan(host: &str, findings: Vec<FindingRecord>, kind: &str, message: String) -> HostPlan {
    HostPlan {
        error: Some(HostPlanError {
            kind: kind.into(),
            message,
        }),
        findings,
        ..HostPlan::empty(host, HostStatus::Error)
    }
}

fn summarize(hosts: &[HostPlan], inventory_files: usize, configmaps: usize) -> Summary {
    let mut summary = Summary {
        hosts: hosts.len(),
        inventory_files,
        configmaps,
        ..Summary::default()
    };
    for host in hosts {
        match host.status {
            HostStatus::Changes => summary.hosts_changing += 1,
            HostStatus::Blocked => summary.hosts_blocked += 1,
            HostStatus::Error => summary.hosts_failed += 1,
            HostStatus::Clean => {}
        }
        if host.status == HostStatus::Changes && !host.blocked.is_empty() {
            summary.hosts_blocked += 1;
        }
        for change in &host.changes {
            match change {
                Change::WriteFile { .. } => summary.files += 1,
                Change::Sysctl { .. } => summary.sysctls += 1,
                Change::LoadModule { .. } => summary.modules += 1,
            }
        }
        for action in &host.cluster {
            match action {
                model::ClusterAction::RecreateDnsPods { pods, .. } => summary.pods += pods.len(),
            }
        }
        for handler in &host.handlers {
            let verb = handler.action.verb();
            *summary
                .restarts
                .entry(format!("{} {verb}", handler.unit))
                .or_default() += 1;
            summary.serial = Some(match summary.serial {
                None => handler.serial,
                Some(Batch::Count(a)) => match handler.serial {
                    Batch::Count(b) => Batch::Count(a.min(b)),
                    Batch::Percent(_) => Batch::Count(a),
                },
                Some(Batch::Percent(a)) => match handler.serial {
                    Batch::Count(b) => Batch::Count(b),
                    Batch::Percent(b) => Batch::Percent(a.min(b)),
                },
            });
        }
    }
    summary
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(after: &str, task: &str) -> planner::ConfigMapSet {
        planner::ConfigMapSet {
            configmap: "coredns".to_owned(),
            key: "Corefile".to_owned(),
            via: "cp1".to_owned(),
            before: ".:53 {\n    forward . /etc/resolv.conf\n}\n".to_owned(),
            after: after.to_owned(),
            description: "forward".to_owned(),
            reason: model::Reason {
                playbook: "corefile-upstream".to_owned(),
                task: task.to_owned(),
                fixes: vec![diagnose::cluster::COREFILE_UPSTREAM.to_owned()],
            },
        }
    }

    /// A plan that restarts a kubelet whose binary was replaced since it started says so;
    /// one that does not restart it, or a kubelet whose binary is the one it runs, does not.
    #[test]
    fn a_restart_of_a_replaced_kubelet_binary_is_noted() {
        let mut facts = NodeFacts::from_raw("n1", &crate::facts::raw::RawFacts::default());
        facts.services.kubelet_unit = "kubelet.service".into();
        facts.kubelet.pid = Some(2291);
        facts.kubelet.version = Some("v1.31.4".into());
        let restart = |unit: &str| model::HandlerRun {
            name: "restart kubelet".into(),
            unit: unit.into(),
            action: model::HandlerAction::Restarted,
            serial: Batch::Count(1),
            reasons: Vec::new(),
        };
        let kubelet = [restart("kubelet.service")];
        assert_eq!(replaced_binary_note(&facts, &kubelet), None);
        facts.kubelet.binary_replaced = true;
        let note = replaced_binary_note(&facts, &kubelet).expect("a note");
        assert!(
            note.starts_with(
                "the running kubelet (v1.31.4, pid 2291) was started from a binary since replaced"
            ) && note.contains("this plan's restart of kubelet.service starts the new binary"),
            "{note}"
        );
        assert_eq!(
            replaced_binary_note(&facts, &[restart("systemd-resolved.service")]),
            None
        );
    }

    /// Moving a leftover --cluster-dns=10.233.0.3 into kubelet-config.yaml on a Kubespray node
    /// with no nodelocaldns interface: the note names what Kubespray's template renders from
    /// the inventory (kubelet-config.v1beta1.yaml.j2 @46dbdd39: `[nodelocaldns_ip]` whenever
    /// enable_nodelocaldns, which roles/kubespray_defaults turns on), the cache's address
    /// with the default variables, which nothing on this node answers; with dns_mode
    /// coredns_dual and no cache, the two CoreDNS Services', which it offers to keep.
    #[test]
    fn the_cluster_dns_kubespray_renders_is_the_templates() {
        let fixture = "DNS-KUBELET-FLAG-SHADOW/kubespray-coredns-dual-cluster-dns-flag";
        let note = |vars: &str| {
            let plan = plan_fixture(fixture, vars);
            plan.notes
                .iter()
                .find(|n| n.message.contains("Kubespray writes clusterDNS into"))
                .map(|n| n.message.clone())
                .unwrap_or_else(|| panic!("no note: {plan:#?}"))
        };
        let defaults = note("kube_version: v1.29.4");
        assert!(
            defaults.contains("here [169.254.25.10], so the next run gives the kubelet that")
                && defaults
                    .contains("as it stands, [169.254.25.10] would not serve this node's pods"),
            "{defaults}"
        );
        let dual = note(
            "kube_version: v1.29.4\n      enable_nodelocaldns: false\n      dns_mode: coredns_dual",
        );
        assert!(
            dual.contains("here [10.233.0.3, 10.233.0.4]")
                && dual.contains("or, simpler, keep what the inventory renders, which serves this node's pods: put clusterDNS [10.233.0.3, 10.233.0.4] in /etc/kubernetes/kubelet-config.yaml instead and take the flag out"),
            "{dual}"
        );
    }

    /// The content of /etc/dnsfix/resolv.conf that `host`'s plan writes.
    fn dnsfix_resolv_conf(host: &HostPlan) -> String {
        host.changes
            .iter()
            .find_map(|c| match c {
                Change::WriteFile { path, content, .. } if path == "/etc/dnsfix/resolv.conf" => {
                    Some(content.clone())
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("no /etc/dnsfix/resolv.conf: {host:#?}"))
    }

    /// The resolv.conf of dnsfix's own keeps the search domains pods got from the kubelet's
    /// file, but for those the kubelet puts first for every ClusterFirst pod (`svc.<domain>`,
    /// `<domain>`; pkg/kubelet/network/dns/dns.go generateSearchesForDNSClusterFirst). A
    /// default Kubespray node (kubespray@46dbdd39 resolved.conf.j2 `Domains=default.svc.
    /// <dns_domain> svc.<dns_domain>`, which reaches systemd-resolved's uplink file) gives
    /// pods of every namespace `default.svc.cluster.local`: the kubelet adds it only for pods
    /// in `default`, so a pod elsewhere resolving a Service of `default` by its short name
    /// needs it from the file.
    #[test]
    fn dnsfix_s_resolv_conf_keeps_kubespray_s_default_search_domain() {
        let plan = plan_fixture("_upstream/kubespray-head-ubuntu2204-default", "");
        let content = dnsfix_resolv_conf(&plan);
        assert!(
            content.ends_with("nameserver 10.0.0.2\nsearch default.svc.cluster.local\n"),
            "{content}"
        );
    }

    /// With stray search domains to go (`dnsfix_strip_search_domains: true`), dnsfix's file
    /// leaves out the stray ones alone, DNS-STRAY-SEARCH's: Kubespray's
    /// `default.svc.cluster.local` and a domain the inventory declares in `searchdomains`
    /// (Kubespray's docs/advanced/dns-stack.md: search domains for pods) stay, compared as
    /// the rule compares them (case and a trailing dot aside). Before, the file had no
    /// search line at all.
    #[test]
    fn stripping_search_domains_leaves_out_the_stray_ones_alone() {
        let uplink = "nameserver 169.254.25.10\nnameserver 10.0.0.2\n\
                      search default.svc.cluster.local svc.cluster.local Example.Internal. openstacklocal\n";
        let raw = crate::testing::with_files(
            &crate::testing::rules_fixture("_upstream/kubespray-head-ubuntu2204-default"),
            &[("/run/systemd/resolve/resolv.conf", uplink)],
        );
        let unavailable = crate::cluster::Cluster::Unavailable {
            reason: "none".into(),
        };
        let plan = plan_raw(
            &raw,
            "dnsfix_strip_search_domains: true\n      searchdomains: [example.internal]",
            &unavailable,
            "",
        );
        let content = dnsfix_resolv_conf(&plan.hosts[0]);
        assert!(
            content.ends_with(
                "nameserver 10.0.0.2\nsearch default.svc.cluster.local Example.Internal\n"
            ),
            "{content}"
        );
        // The kubelet's file missing: the domains come from the file its servers do, the
        // stray ones left out the same way (before: no search line at all).
        let config_path = "/etc/kubernetes/kubelet-config.yaml";
        let config = raw
            .get(config_path)
            .and_then(crate::facts::raw::RawFile::text)
            .expect("kubelet config")
            .replace(
                "resolvConf: \"/run/systemd/resolve/resolv.conf\"",
                "resolvConf: \"/etc/kubelet-resolv.conf\"",
            );
        let mut raw = crate::testing::with_files(&raw, &[(config_path, &config)]);
        raw.file(
            "/etc/kubelet-resolv.conf",
            crate::facts::raw::FileState::Missing,
            None,
        );
        let plan = plan_raw(
            &raw,
            "dnsfix_strip_search_domains: true\n      searchdomains: [example.internal]",
            &unavailable,
            "",
        );
        let content = dnsfix_resolv_conf(&plan.hosts[0]);
        assert!(
            content.ends_with("search default.svc.cluster.local Example.Internal\n"),
            "{content}"
        );
    }

    /// A --cluster-dns of a drop-in's ExecStart= beside the env file's: the kubelet adds both
    /// up, so the drop-in's already being NodeLocal DNSCache's address leaves the env file's
    /// in clusterDNS. The blocked line says to take that one out too; before it said only to
    /// change the drop-in's to the address it already had, which no edit could satisfy.
    #[test]
    fn a_cluster_dns_flag_in_a_drop_in_and_an_env_file_names_both() {
        let dropin = "[Service]\nExecStart=\nExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS \
                      $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS \
                      --cluster-dns=169.254.20.10\n";
        let cmdline = "/usr/bin/kubelet\0--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf\0\
                       --kubeconfig=/etc/kubernetes/kubelet.conf\0--config=/var/lib/kubelet/config.yaml\0\
                       --container-runtime-endpoint=unix:///var/run/containerd/containerd.sock\0\
                       --pod-infra-container-image=registry.k8s.io/pause:3.9\0\
                       --cluster-dns=10.96.0.53\0--cluster-dns=169.254.20.10\0";
        let raw = crate::testing::with_files(
            &crate::testing::rules_fixture(
                "DNS-NODELOCAL-CLUSTERDNS/kubeadm-etc-default-cluster-dns-flag",
            ),
            &[
                ("/etc/systemd/system/kubelet.service.d/20-dns.conf", dropin),
                ("/proc/2290/cmdline", cmdline),
            ],
        );
        let unavailable = crate::cluster::Cluster::Unavailable {
            reason: "none".into(),
        };
        let plan = plan_raw(&raw, "{}", &unavailable, "");
        let reason = plan.hosts[0]
            .blocked
            .iter()
            .find(|b| b.playbook == "nodelocaldns-clusterdns")
            .map(|b| b.reason.clone())
            .unwrap_or_else(|| panic!("not blocked: {plan:#?}"));
        assert!(
            reason.contains("20-dns.conf:3")
                && reason.contains("change it there to 169.254.20.10 and take --cluster-dns out of /etc/default/kubelet"),
            "{reason}"
        );
    }

    /// On EKS a kubelet resolv.conf of dnsfix's own cannot be left to nodeadm: the blocked
    /// line says that the user data must write the file, with the servers, and where the
    /// per-node NodeConfig goes; with the uplink file, it does not.
    #[test]
    fn an_eks_node_is_told_who_writes_dnsfixs_file() {
        let blocked = |fixture: &str, strip: bool| {
            let vars = format!("dnsfix_strip_search_domains: {strip}");
            let plan = plan_fixture(fixture, &vars);
            plan.blocked
                .iter()
                .find(|b| b.playbook == "kubelet-resolvconf")
                .map(|b| b.reason.clone())
                .unwrap_or_else(|| panic!("not blocked: {plan:#?}"))
        };
        // Stray search domains stripped: a file of dnsfix's own.
        let own = blocked("_upstream/eks-al2023-nodeadm", true);
        assert!(
            own.contains("spec.kubelet.config.resolvConf to /etc/dnsfix/resolv.conf")
                && own.contains("/etc/eks/nodeadm.d/")
                && own.contains("a shell script part of the same user data must write it with only real upstream servers (10.0.0.2, from"),
            "{own}"
        );
        // Its blocked line says it fixes the stray search domain only where the file it
        // names strips it.
        let fixes = |strip: bool| {
            let vars = format!("dnsfix_strip_search_domains: {strip}");
            let plan = plan_fixture("_upstream/eks-al2023-old-stub", &vars);
            plan.blocked
                .iter()
                .find(|b| b.playbook == "kubelet-resolvconf")
                .map(|b| b.fixes.clone())
                .unwrap_or_default()
        };
        assert_eq!(fixes(false), ["DNS-KUBELET-LOOPBACK"]);
        assert_eq!(fixes(true), ["DNS-KUBELET-LOOPBACK", "DNS-STRAY-SEARCH"]);
        // systemd-resolved's uplink file is there on every node.
        let uplink = blocked("_upstream/eks-al2023-old-stub", false);
        assert!(
            uplink.contains("/run/systemd/resolve/resolv.conf") && !uplink.contains("shell script"),
            "{uplink}"
        );
        // A kubelet of unknown version gets the flag, which counts on every version.
        let mut raw = crate::testing::rules_fixture("_upstream/eks-al2023-old-stub");
        raw.commands.remove("kubelet-version");
        let unavailable = crate::cluster::Cluster::Unavailable {
            reason: "none".into(),
        };
        let plan = plan_raw(&raw, "dnsfix_strip_search_domains: false", &unavailable, "");
        let unknown = plan.hosts[0]
            .blocked
            .iter()
            .find(|b| b.playbook == "kubelet-resolvconf")
            .map(|b| b.reason.clone())
            .unwrap_or_default();
        assert!(
            unknown.contains(
                "add --resolv-conf=/run/systemd/resolve/resolv.conf to its spec.kubelet.flags"
            ) && unknown.contains("a kubelet before 1.32 (this one's version is not known)"),
            "{unknown}"
        );
    }

    /// Where systemd did not answer the gather's systemctl, a playbook whose changes need
    /// a restart is blocked, saying why, and nothing of it is planned: the unit to restart
    /// would be a guess (RKE2 installs both its units). Without the cut, the same node
    /// plans the fix and its restart.
    #[test]
    fn a_restart_is_not_planned_while_systemd_does_not_answer() {
        let unavailable = crate::cluster::Cluster::Unavailable {
            reason: "none".into(),
        };
        let mut raw = crate::testing::rules_fixture("_upstream/rke2-stub-loop");
        let answered = plan_raw(&raw, "", &unavailable, "");
        let host = &answered.hosts[0];
        assert!(!host.handlers.is_empty(), "{host:#?}");
        assert!(
            host.changes.iter().any(|c| c
                .reasons()
                .iter()
                .any(|r| r.playbook == "kubelet-resolvconf")),
            "{host:#?}"
        );
        crate::testing::set_command(&mut raw, "units", "", 124);
        crate::testing::set_command(&mut raw, "systemctl-cut", "10\n", 0);
        let cut = plan_raw(&raw, "", &unavailable, "");
        let host = &cut.hosts[0];
        assert!(host.handlers.is_empty(), "{host:#?}");
        assert!(
            host.changes.iter().all(|c| c
                .reasons()
                .iter()
                .all(|r| r.playbook != "kubelet-resolvconf")),
            "{host:#?}"
        );
        let blocked = host
            .blocked
            .iter()
            .find(|b| b.playbook == "kubelet-resolvconf")
            .unwrap_or_else(|| panic!("{host:#?}"));
        assert!(
            blocked.reason.starts_with("its changes need `restart ")
                && blocked.reason.contains(
                    "and systemctl did not answer within 10s (systemd, PID 1, busy or stuck)"
                )
                && blocked
                    .reason
                    .ends_with("plan again once `systemctl is-system-running` answers on the node"),
            "{blocked:#?}"
        );
        assert_eq!(blocked.fixes, ["DNS-KUBELET-LOOPBACK"], "{blocked:#?}");
    }

    /// br_netfilter is loaded before its keys are set: apply runs the changes in plan
    /// order, and /proc/sys/net/bridge exists only once the module is in.
    #[test]
    fn the_module_is_loaded_before_its_sysctls_are_set() {
        let plan = plan_fixture("DNS-BRIDGE-NF-OFF/br-netfilter-not-loaded", "");
        let at = |pick: &dyn Fn(&Change) -> bool| {
            plan.changes
                .iter()
                .position(pick)
                .unwrap_or_else(|| panic!("{:#?}", plan.changes))
        };
        let module =
            at(&|c| matches!(c, Change::LoadModule { name, .. } if name == "br_netfilter"));
        let key =
            at(&|c| matches!(c, Change::Sysctl { name, .. } if name.starts_with("net.bridge.")));
        assert!(module < key, "{:#?}", plan.changes);
    }

    /// A Kubespray node whose inventory turns NodeLocal DNSCache off is told that the next
    /// cluster.yml renders clusterDNS back to the service IP.
    #[test]
    fn kubespray_without_enable_nodelocaldns_is_told_clusterdns_comes_back() {
        let noted = |vars: &str| {
            plan_fixture("DNS-NODELOCAL-CLUSTERDNS/iptables-mode-kubespray", vars)
                .notes
                .iter()
                .any(|n| n.message.contains("enable_nodelocaldns: false"))
        };
        assert!(noted("enable_nodelocaldns: false"));
        assert!(!noted("enable_nodelocaldns: true"));
    }

    /// A cluster read through node1 whose DNS Service, kube-system/kube-dns, is at `ip`.
    fn kube_dns_at(ip: &str) -> crate::cluster::Cluster {
        crate::testing::cluster_with_services("node1", Some(vec![("kube-dns", ip)]))
    }

    /// DNS-KUBELET-NO-CLUSTER-DNS's playbook sets what the finding knows: the Service's
    /// address where the cluster was read (in the config file that lacks it, or in the
    /// environment file whose flag names no address), the inventory's dns_domain; blocked,
    /// saying what is missing, where it knows neither.
    #[test]
    fn a_kubelet_without_cluster_dns_gets_the_services_address() {
        let cluster = kube_dns_at("10.96.0.10");
        let writes = |fixture: &str, vars: &str, cluster: &crate::cluster::Cluster| {
            let plan = plan_in(fixture, vars, cluster, "").hosts.remove(0);
            let writes: Vec<(String, String, String)> = plan
                .changes
                .iter()
                .filter_map(|c| match c {
                    Change::WriteFile {
                        path,
                        description,
                        content,
                        ..
                    } => Some((path.clone(), description.clone(), content.clone())),
                    _ => None,
                })
                .collect();
            (plan, writes)
        };
        let (plan, w) = writes(
            "DNS-KUBELET-NO-CLUSTER-DNS/kubeadm-config-without-cluster-dns",
            "{}",
            &cluster,
        );
        assert_eq!(w.len(), 1, "{plan:#?}");
        assert_eq!(w[0].0, "/var/lib/kubelet/config.yaml");
        assert_eq!(w[0].1, "clusterDNS: unset → [10.96.0.10]");
        assert!(w[0].2.contains("clusterDNS:\n- 10.96.0.10\n"), "{}", w[0].2);
        assert_eq!(plan.fixes, ["DNS-KUBELET-NO-CLUSTER-DNS"], "{plan:#?}");
        assert_eq!(plan.handlers.len(), 1, "{plan:#?}");
        // A --cluster-dns of KUBELET_EXTRA_ARGS that names the Service, not its address.
        let (plan, w) = writes(
            "DNS-KUBELET-NO-CLUSTER-DNS/kubeadm-cluster-dns-flag-by-name",
            "{}",
            &cluster,
        );
        assert_eq!(w.len(), 1, "{plan:#?}");
        assert_eq!(w[0].0, "/etc/default/kubelet");
        assert!(
            w[0].2.contains("--cluster-dns=10.96.0.10") && !w[0].2.contains("kube-dns.kube-system"),
            "{}",
            w[0].2
        );
        // The flag now says what the config file says: it overrides nothing any more.
        assert_eq!(
            plan.fixes,
            ["DNS-KUBELET-FLAG-SHADOW", "DNS-KUBELET-NO-CLUSTER-DNS"],
            "{plan:#?}"
        );
        // The domain, from the inventory only.
        let unread = crate::cluster::Cluster::Unavailable {
            reason: "none".into(),
        };
        let fixture = "DNS-KUBELET-NO-CLUSTER-DNS/kubeadm-config-without-cluster-domain";
        let (plan, w) = writes(fixture, "dns_domain: corp.local", &unread);
        assert_eq!(w.len(), 1, "{plan:#?}");
        assert_eq!(w[0].1, "clusterDomain: unset → corp.local");
        assert_eq!(plan.fixes, ["DNS-KUBELET-NO-CLUSTER-DNS"], "{plan:#?}");
        let (plan, w) = writes(fixture, "{}", &unread);
        assert!(w.is_empty(), "{plan:#?}");
        assert!(
            plan.blocked[0]
                .reason
                .starts_with("The cluster's domain is not known here: set dns_domain"),
            "{plan:#?}"
        );
    }

    /// A MicroK8s node that `microk8s enable dns` did not reach, in a cluster with a DNS
    /// Service: kubelet-cluster-dns sets --cluster-dns (and --cluster-domain where the
    /// inventory says it) in the arguments file kubelite reads, and restarts kubelite.
    #[test]
    fn microk8s_without_cluster_dns_gets_the_services_address_in_its_arguments_file() {
        let fixture = "DNS-KUBELET-NO-CLUSTER-DNS/microk8s-1.32-worker-missed-enable-dns";
        let args = "/var/snap/microk8s/7964/args/kubelet";
        let cluster = kube_dns_at("10.152.183.10");
        let plan = plan_in(fixture, "dns_domain: cluster.local", &cluster, "");
        let text = crate::plan::render::text(&plan, false);
        let host = &plan.hosts[0];
        let written = host.changes.iter().find_map(|c| match c {
            Change::WriteFile { path, content, .. } if path == args => Some(content.clone()),
            _ => None,
        });
        let written = written.unwrap_or_else(|| panic!("{args} is written:\n{text}"));
        assert!(
            written.ends_with("--cluster-dns=10.152.183.10\n--cluster-domain=cluster.local\n")
                || written
                    .ends_with("--cluster-domain=cluster.local\n--cluster-dns=10.152.183.10\n"),
            "{written}"
        );
        assert!(
            host.fixes.iter().any(|f| f == "DNS-KUBELET-NO-CLUSTER-DNS"),
            "{text}"
        );
        assert!(
            text.contains("restart snap.microk8s.daemon-kubelite"),
            "{text}"
        );
        // Without the inventory's dns_domain, --cluster-dns alone: the remaining clusterDomain
        // is still failing, and the plan says so.
        let plan = plan_in(fixture, "{}", &cluster, "");
        let text = crate::plan::render::text(&plan, false);
        assert!(
            text.contains("+--cluster-dns=10.152.183.10")
                && !text.contains("+--cluster-domain")
                && text.contains("still failing: DNS-KUBELET-NO-CLUSTER-DNS"),
            "{text}"
        );
        // Unread, it is info: no --cluster-dns is set (the file still gets the fixture's
        // --resolv-conf fix).
        let unread = crate::cluster::Cluster::Unavailable {
            reason: "none".into(),
        };
        let plan = plan_in(fixture, "dns_domain: cluster.local", &unread, "");
        assert!(
            !plan.hosts[0].changes.iter().any(|c| matches!(
                c,
                Change::WriteFile { path, content, .. } if path == args && content.contains("--cluster-dns")
            )),
            "{plan:#?}"
        );
    }

    /// kubelet-cluster-dns beside the playbooks before it: a shadowing --cluster-dns that
    /// kubelet-flag-shadow moves into the config file is set there (not put back as a
    /// flag); on a node with a NodeLocal DNSCache, nodelocaldns-clusterdns sets its address,
    /// which this finding names too (one write); the cluster's Service beats an address the
    /// inventory would render that is none of its Services'.
    #[test]
    fn kubelet_cluster_dns_agrees_with_the_playbooks_before_it() {
        let cluster = kube_dns_at("10.96.0.10");
        let file = |plan: &HostPlan, wanted: &str| {
            plan.changes.iter().find_map(|c| match c {
                Change::WriteFile { path, content, .. } if path == wanted => Some(content.clone()),
                _ => None,
            })
        };
        // The flag in kubeadm-flags.env, kubeadm's own (not the operator's override).
        let mut raw = crate::testing::rules_fixture(
            "DNS-KUBELET-NO-CLUSTER-DNS/kubeadm-cluster-dns-flag-by-name",
        );
        let flag = "--cluster-dns=kube-dns.kube-system.svc.cluster.local";
        crate::testing::replace_in_file(
            &mut raw,
            "/etc/default/kubelet",
            &format!("KUBELET_EXTRA_ARGS={flag}"),
            "KUBELET_EXTRA_ARGS=",
        );
        crate::testing::replace_in_file(
            &mut raw,
            "/var/lib/kubelet/kubeadm-flags.env",
            "registry.k8s.io/pause:3.9\"",
            &format!("registry.k8s.io/pause:3.9 {flag}\""),
        );
        let plan = plan_raw(&raw, "{}", &cluster, "").hosts.remove(0);
        let flagged = raw;
        let env = file(&plan, "/var/lib/kubelet/kubeadm-flags.env").expect("flag removed");
        assert!(!env.contains("--cluster-dns"), "{env}");
        // The config file keeps (or gets back) the Service's address.
        let config = file(&plan, "/var/lib/kubelet/config.yaml");
        assert!(
            config
                .as_deref()
                .is_none_or(|c| c.contains("clusterDNS:\n- 10.96.0.10\n")),
            "{config:?}"
        );
        assert_eq!(
            plan.fixes,
            ["DNS-KUBELET-FLAG-SHADOW", "DNS-KUBELET-NO-CLUSTER-DNS"],
            "{plan:#?}"
        );
        assert!(plan.remaining.is_empty(), "{plan:#?}");

        // A NodeLocal DNSCache on the node: its address, the same in both playbooks.
        let mut raw = crate::testing::rules_fixture(
            "DNS-KUBELET-NO-CLUSTER-DNS/kubeadm-config-without-cluster-dns",
        );
        raw.files.remove("/sys/class/net/nodelocaldns");
        crate::testing::set_command(
            &mut raw,
            "nodelocaldns-addr",
            "6: nodelocaldns    inet 169.254.20.10/32 scope global nodelocaldns\\       valid_lft forever preferred_lft forever\n",
            0,
        );
        let plan = plan_raw(&raw, "{}", &cluster, "").hosts.remove(0);
        let cached = raw;
        let writes = plan
            .changes
            .iter()
            .filter(|c| matches!(c, Change::WriteFile { .. }))
            .count();
        assert_eq!(writes, 1, "{plan:#?}");
        let config = file(&plan, "/var/lib/kubelet/config.yaml").expect("config");
        assert!(
            config.contains("clusterDNS:\n- 169.254.20.10\n"),
            "{config}"
        );
        assert!(
            !plan
                .remaining
                .contains(&"DNS-KUBELET-NO-CLUSTER-DNS".to_owned()),
            "{plan:#?}"
        );

        // Applied, a second plan changes nothing (the flag case, the cache case).
        for (raw, vars) in [(&flagged, "{}"), (&cached, "{}")] {
            let plan = plan_raw(raw, vars, &cluster, "").hosts.remove(0);
            let facts = crate::facts::NodeFacts::from_raw("node1", raw);
            let after = predict::applied(&facts, &plan.changes, &plan.handlers);
            let again = plan_raw(&after, vars, &cluster, "").hosts.remove(0);
            assert!(again.changes.is_empty(), "{again:#?}");
        }

        // The inventory says dns_mode coredns (Kubespray would render 10.233.0.3): the
        // Service's 10.96.0.10 wins.
        let plan = plan_in(
            "DNS-KUBELET-NO-CLUSTER-DNS/kubeadm-config-without-cluster-dns",
            "dns_mode: coredns",
            &cluster,
            "",
        )
        .hosts
        .remove(0);
        let config = file(&plan, "/var/lib/kubelet/config.yaml").expect("config");
        assert!(config.contains("clusterDNS:\n- 10.96.0.10\n"), "{config}");
    }

    /// The file kubelet-resolvconf writes keeps the options dnsPolicy: Default pods had from
    /// the kubelet's file (its last `options` line, as the kubelet reads it), not the
    /// `edns0 trust-ad` a resolver on the node wrote for itself; applied, a second plan
    /// changes nothing, and no finding stays for the new line.
    #[test]
    fn the_upstream_file_keeps_the_options_default_pods_had() {
        let cluster = crate::cluster::Cluster::Unavailable {
            reason: "none".into(),
        };
        let fixture = "DNS-KUBELET-RESOLVCONF-MISSING/empty-nameserver-line";
        let vars = "searchdomains: [example.internal]";
        let written = |files: &[(&str, &str)], vars: &str| {
            let raw = crate::testing::with_files(&crate::testing::rules_fixture(fixture), files);
            let plan = plan_raw(&raw, vars, &cluster, "").hosts.remove(0);
            let content = plan.changes.iter().find_map(|c| match c {
                Change::WriteFile { path, content, .. } if path == "/etc/dnsfix/resolv.conf" => {
                    Some(content.clone())
                }
                _ => None,
            });
            (raw, plan, content.unwrap_or_default())
        };
        let kubelet_file = "/etc/kubernetes/resolv.conf";
        let (raw, plan, content) = written(
            &[(
                kubelet_file,
                "nameserver 127.0.0.1\nnameserver 10.20.0.53\nsearch example.internal\n\
                 options ndots:3\noptions timeout:1 attempts:2 rotate\n",
            )],
            vars,
        );
        assert!(
            content.ends_with(
                "nameserver 10.20.0.53\nsearch example.internal\noptions timeout:1 attempts:2 rotate\n"
            ),
            "{content}"
        );
        assert!(plan.remaining.is_empty(), "{plan:#?}");
        let facts = NodeFacts::from_raw("node1", &raw);
        let after = predict::applied(&facts, &plan.changes, &plan.handlers);
        let again = plan_raw(&after, vars, &cluster, "").hosts.remove(0);
        assert!(again.changes.is_empty(), "{again:#?}");
        assert!(again.findings.is_empty(), "{again:#?}");

        // Its dnsmasq's options, where the servers come from the inventory (systemd-resolved's
        // file names the cluster's cache: no fix).
        let (_, _, content) = written(
            &[
                (
                    kubelet_file,
                    "nameserver 127.0.0.1\nsearch example.internal\noptions edns0 trust-ad\n",
                ),
                (
                    "/run/systemd/resolve/resolv.conf",
                    "nameserver 169.254.25.10\n",
                ),
            ],
            "{searchdomains: [example.internal], upstream_dns_servers: [10.20.0.53]}",
        );
        assert!(content.contains("nameserver 10.20.0.53\n"), "{content}");
        assert!(!content.contains("options"), "{content}");
    }

    /// A run cut off between its writes and its restart: the plan restarts the kubelet
    /// unit the mark names and nothing else (no file to write), holds to the mark, and
    /// converges; a rollback's mark is restarted the same way; a kubelet restarted since
    /// (by hand) is left alone; a mark of a unit that is not this node's kubelet is not
    /// restarted on a guess.
    #[test]
    fn a_run_cut_off_before_its_restart_is_finished_by_the_restart_alone() {
        use crate::facts::raw::FileState;
        const CASE: &str = "DNS-KUBELET-RESTART-DUE/kubeadm-apply-cut-off";
        const MARK: &str = "/var/lib/dnsfix/restart-due/kubelet/20261130T021500Z-7f3a";
        let none = crate::cluster::Cluster::Unavailable {
            reason: "not asked".into(),
        };
        let raw = crate::testing::rules_fixture(CASE);
        let plan = plan_raw(&raw, "{}", &none, "").hosts.remove(0);
        assert_eq!(plan.status, HostStatus::Changes, "{plan:#?}");
        assert!(plan.changes.is_empty(), "{plan:#?}");
        assert_eq!(plan.handlers.len(), 1, "{plan:#?}");
        let handler = &plan.handlers[0];
        assert_eq!(
            (handler.unit.as_str(), handler.action),
            ("kubelet", model::HandlerAction::Restarted)
        );
        assert!(
            handler.reasons[0].starts_with("apply run 20261130T021500Z-7f3a changed its files"),
            "{handler:?}"
        );
        let digest = plan.facts.as_ref().expect("digest");
        assert!(digest.files.contains_key(MARK), "{:?}", digest.files.keys());
        assert_eq!(plan.fixes, ["DNS-KUBELET-RESTART-DUE"], "{plan:#?}");

        // Restarted (its handler removes the mark), the next plan has nothing to do.
        let facts = crate::facts::NodeFacts::from_raw("node1", &raw);
        let after = predict::applied(&facts, &plan.changes, &plan.handlers);
        let again = plan_raw(&after, "{}", &none, "").hosts.remove(0);
        assert_eq!(again.status, HostStatus::Clean, "{again:#?}");
        assert!(again.handlers.is_empty(), "{again:#?}");

        let by_hand =
            crate::testing::rules_fixture("DNS-KUBELET-RESTART-DUE/kubeadm-restarted-by-hand");
        let plan = plan_raw(&by_hand, "{}", &none, "").hosts.remove(0);
        assert!(plan.handlers.is_empty(), "{plan:#?}");
        assert_eq!(plan.status, HostStatus::Clean, "{plan:#?}");

        let moved = |to: &str| {
            let mut raw = raw.clone();
            let mark = raw.files.remove(MARK).expect("the fixture's mark");
            raw.order.retain(|p| p != MARK);
            raw.file(to, FileState::Present, Some(&mark.content));
            plan_raw(&raw, "{}", &none, "").hosts.remove(0)
        };
        let rollback = moved("/var/lib/dnsfix/restart-due/kubelet/rollback-20261130T021500Z-7f3a");
        assert_eq!(rollback.handlers.len(), 1, "{rollback:#?}");
        assert!(
            rollback.handlers[0].reasons[0]
                .starts_with("the rollback of run 20261130T021500Z-7f3a changed its files"),
            "{rollback:#?}"
        );
        // A mark's run id is node text: its reason shows it escaped.
        let mut hostile = raw.clone();
        let text = String::from_utf8_lossy(&raw.files[MARK].content).replacen(
            "20261130T021500Z-7f3a",
            "r1\u{1b}[2J",
            1,
        );
        hostile.file(MARK, FileState::Present, Some(text.as_bytes()));
        let shown = plan_raw(&hostile, "{}", &none, "").hosts.remove(0);
        assert!(
            shown.handlers[0].reasons[0].starts_with("apply run r1\\u{1b}[2J changed"),
            "{shown:#?}"
        );

        // Beside the kubelet's own mark, another unit's is a note; the kubelet restarts.
        let mut both = raw.clone();
        let mark = both
            .files
            .get(MARK)
            .expect("the fixture's mark")
            .content
            .clone();
        both.file(
            "/var/lib/dnsfix/restart-due/k3s/20261130T021500Z-7f3a",
            FileState::Present,
            Some(&mark),
        );
        let beside = plan_raw(&both, "{}", &none, "").hosts.remove(0);
        assert_eq!(beside.handlers.len(), 1, "{beside:#?}");
        assert!(
            beside
                .notes
                .iter()
                .any(|n| n.message.starts_with("k3s was left to be restarted")),
            "{beside:#?}"
        );
        let other = moved("/var/lib/dnsfix/restart-due/k3s/20261130T021500Z-7f3a");
        assert_eq!(other.status, HostStatus::Blocked, "{other:#?}");
        assert!(other.handlers.is_empty(), "{other:#?}");
        assert!(
            other.blocked[0]
                .reason
                .starts_with("k3s was left to be restarted"),
            "{other:#?}"
        );
    }

    /// kubelet-cluster-dns where the installer owns the setting: blocked, naming every value
    /// the node needs and where it goes (EKS's NodeConfig, k3s's server options, a unit
    /// file's flag that kubelet-flag-shadow cannot remove either); MicroK8s's arguments file
    /// is changed. Each node's clusterDNS here is no Service's, and nothing on it answers.
    #[test]
    fn kubelet_cluster_dns_where_the_installer_owns_it() {
        let plan =
            |fixture: &str, service: &str, edit: &dyn Fn(&mut crate::facts::raw::RawFacts)| {
                let mut raw = crate::testing::rules_fixture(fixture);
                raw.file(
                    crate::facts::sockets::UDP,
                    crate::facts::raw::FileState::Present,
                    Some(b"  sl  local_address rem_address   st\n"),
                );
                edit(&mut raw);
                plan_raw(&raw, "dns_domain: cluster.local", &kube_dns_at(service), "")
                    .hosts
                    .remove(0)
            };
        let blocked = |plan: &HostPlan| {
            plan.blocked
                .iter()
                .find(|b| b.playbook == "kubelet-cluster-dns")
                .map(|b| b.reason.clone())
                .unwrap_or_else(|| panic!("not blocked: {plan:#?}"))
        };
        let eks = plan("_upstream/eks-al2023-nodeadm", "10.100.0.10", &|_| ());
        assert!(
            blocked(&eks).starts_with(
                "nodeadm writes the kubelet's config anew at every boot from the node's NodeConfig: set clusterDNS [10.100.0.10] in its spec.kubelet.config (or --cluster-dns=10.100.0.10 in spec.kubelet.flags)"
            ),
            "{eks:#?}"
        );
        // From a flag of its spec.kubelet.flags, which beats the config: that flag, where
        // it is set (a nodeadm.d file cannot take out the user data's).
        let flagged = plan("_upstream/eks-al2023-nodeadm", "10.100.0.10", &|raw| {
            crate::testing::with_eks_flag(raw, "--cluster-dns=10.100.0.99");
        });
        let why = blocked(&flagged);
        assert!(
            why.contains("a flag of its spec.kubelet.flags sets it now")
                && why.contains("set --cluster-dns=10.100.0.10 there")
                && why.contains("cannot take out a flag of the user data's"),
            "{why}"
        );
        let k3s = plan("_upstream/k3s-auto-uplink", "10.43.0.99", &|_| ());
        assert!(
            blocked(&k3s).contains(
                "set cluster-dns: 10.43.0.99 in the servers' /etc/rancher/k3s/config.yaml"
            ),
            "{k3s:#?}"
        );
        // A unit file's --cluster-dns: kubelet-flag-shadow is blocked on it, and so is this.
        let unit = plan(
            "DNS-KUBELET-FLAG-SHADOW/kubeadm-dropin-execstart-flag",
            "10.96.0.10",
            &|raw| {
                crate::testing::replace_in_file(
                    raw,
                    "/etc/systemd/system/kubelet.service.d/20-dns.conf",
                    "--resolv-conf=/etc/resolv.conf",
                    "--cluster-dns=10.96.0.99",
                );
            },
        );
        assert!(unit.changes.is_empty(), "{unit:#?}");
        assert!(
            blocked(&unit).starts_with(
                "clusterDNS comes from --cluster-dns at /etc/systemd/system/kubelet.service.d/20-dns.conf"
            ),
            "{unit:#?}"
        );
        // MicroK8s: the arguments file's flag.
        let microk8s = plan(
            "_upstream/microk8s-1.32-debian12-joined-worker",
            "10.152.183.99",
            &|_| (),
        );
        let args = "/var/snap/microk8s/7964/args/kubelet";
        let content = microk8s.changes.iter().find_map(|c| match c {
            Change::WriteFile { path, content, .. } if path == args => Some(content.clone()),
            _ => None,
        });
        assert!(
            content.as_deref().is_some_and(
                |c| c.contains("--cluster-dns=10.152.183.99\n") && !c.contains("10.152.183.10")
            ),
            "{microk8s:#?}"
        );
        assert!(
            microk8s
                .fixes
                .contains(&"DNS-KUBELET-NO-CLUSTER-DNS".to_owned()),
            "{microk8s:#?}"
        );
    }

    /// A cluster read through node1 whose coredns and nodelocaldns ConfigMaps both hold
    /// `corefile`.
    fn cluster_with_corefiles(corefile: &str) -> crate::cluster::Cluster {
        let corefile = |name: &str| crate::cluster::Corefile::new(name, "Corefile", corefile);
        crate::cluster::Cluster::Read {
            via: "node1".into(),
            pods: Vec::new(),
            config: Box::new(crate::cluster::DnsConfig {
                corefiles: vec![corefile("coredns"), corefile("nodelocaldns")],
                ..crate::cluster::DnsConfig::default()
            }),
            kubelets: Default::default(),
        }
    }

    /// Kubespray renders nodelocaldns's Corefile whatever dns_mode, CoreDNS's only with
    /// dns_mode coredns or coredns_dual: with dns_mode manual the plan changes
    /// nodelocaldns's forward alone.
    #[test]
    fn with_dns_mode_manual_only_nodelocaldns_corefile_is_changed() {
        let cluster = cluster_with_corefiles(".:53 {\n    forward . /etc/resolv.conf\n}\n");
        let changed = |mode: &str| {
            let vars = format!("upstream_dns_servers: [192.0.2.53]\n      dns_mode: {mode}");
            let plan = plan_in(
                "DNS-NODELOCAL-CLUSTERDNS/iptables-mode-kubespray",
                &vars,
                &cluster,
                "\n  children:\n    kube_control_plane:\n      hosts:\n        node1:",
            );
            let mut names: Vec<String> = plan
                .cluster_changes
                .iter()
                .map(|c| c.configmap.clone())
                .collect();
            names.sort();
            names
        };
        assert_eq!(changed("coredns"), ["coredns", "nodelocaldns"]);
        assert_eq!(changed("manual"), ["nodelocaldns"]);
    }

    /// upstream_dns_servers that lead back into cluster DNS (nodelocaldns's 169.254.25.10,
    /// the node's clusterDNS 10.233.0.3) are never written into a Corefile: the loop plugin
    /// would stop every CoreDNS and nodelocaldns pod that reloads it. Before, the plan wrote
    /// `forward . 169.254.25.10` into both ConfigMaps (a loopback server is an inventory
    /// error already). A real server beside one does not make the line safe (the plugin
    /// picks among them); the drift stays a finding, the playbook is blocked and says why.
    #[test]
    fn upstream_dns_servers_that_loop_back_are_not_written_into_a_corefile() {
        let cluster =
            cluster_with_corefiles(".:53 {\n    forward . /etc/resolv.conf\n    loop\n}\n");
        let planned = |servers: &str| {
            plan_in(
                "DNS-NODELOCAL-CLUSTERDNS/iptables-mode-kubespray",
                &format!("upstream_dns_servers: [{servers}]"),
                &cluster,
                "\n  children:\n    kube_control_plane:\n      hosts:\n        node1:",
            )
        };
        for servers in ["169.254.25.10", "192.0.2.53, 10.233.0.3"] {
            let plan = planned(servers);
            assert!(
                plan.cluster_changes.is_empty(),
                "{servers}: {:#?}",
                plan.cluster_changes
            );
            let blocked = format!("{:?}", plan.hosts[0].blocked);
            assert!(
                blocked.contains("corefile-upstream") && blocked.contains("back into cluster DNS"),
                "{servers}: {blocked}"
            );
            // The host's other changes do not fix the Corefiles' drift: it stays failing.
            let host = &plan.hosts[0];
            let text = crate::plan::render::text(&plan, false);
            assert!(
                host.status == HostStatus::Changes
                    && failed(host).contains(&"DNS-COREFILE-UPSTREAM-DRIFT"),
                "{servers}: {text}"
            );
            assert!(
                !host
                    .fixes
                    .contains(&"DNS-COREFILE-UPSTREAM-DRIFT".to_owned())
                    && host
                        .remaining
                        .contains(&"DNS-COREFILE-UPSTREAM-DRIFT".to_owned()),
                "{servers}: {text}"
            );
        }
        let plan = planned("192.0.2.53");
        assert_eq!(plan.cluster_changes.len(), 2);
        assert!(
            plan.hosts[0]
                .fixes
                .contains(&"DNS-COREFILE-UPSTREAM-DRIFT".to_owned()),
            "{:#?}",
            plan.hosts[0]
        );
    }

    /// upstream_dns_servers as a template dnsfix does not render: DNS-COREFILE-UPSTREAM-DRIFT
    /// is unknown, not failed, so corefile-upstream (which runs only where a finding it fixes
    /// failed) never takes the template for servers; the host's plan is the inventory's
    /// error that asks for the addresses, and the cluster is not changed.
    #[test]
    fn a_templated_upstream_changes_no_corefile() {
        let config = crate::cluster::parse_configmaps(include_bytes!(
            "../../tests/lab/standins/configmaps.json"
        ))
        .expect("configmaps");
        let cluster = crate::cluster::Cluster::Read {
            via: "node1".into(),
            pods: Vec::new(),
            config: Box::new(config),
            kubelets: Default::default(),
        };
        let plan = plan_in(
            "DNS-NODELOCAL-CLUSTERDNS/iptables-mode-kubespray",
            "upstream_dns_servers: [\"{{ corp_dns }}\"]",
            &cluster,
            "\n  children:\n    kube_control_plane:\n      hosts:\n        node1:",
        );
        assert!(
            plan.cluster_changes.is_empty(),
            "{:#?}",
            plan.cluster_changes
        );
        let host = &plan.hosts[0];
        assert!(
            host.error.as_ref().is_some_and(|e| e.kind == "inventory"
                && e.message
                    .contains("\"{{ corp_dns }}\" is a template dnsfix cannot resolve")),
            "{host:#?}"
        );
        assert!(host.blocked.is_empty(), "{:#?}", host.blocked);
        let drift = host
            .findings
            .iter()
            .find(|f| f.id == "DNS-COREFILE-UPSTREAM-DRIFT")
            .expect("the drift rule says something");
        assert_eq!(drift.status, FindingStatus::Unknown, "{drift:#?}");
    }

    /// The prediction after apply judges kube-proxy's masqueradeAll as the cluster says it,
    /// as the findings before it do: a plan changes no ConfigMap of kube-proxy. A macvlan
    /// node whose kubelet also hands pods the resolved stub (a change the plan makes), its
    /// ConfigMap false and the inventory true: DNS-MACVLAN-NO-MASQUERADE is still failing,
    /// not fixed. Its ConfigMap true and the inventory silent (Kubespray's default, false):
    /// it passes before and after. Before, the prediction read the inventory alone.
    #[test]
    fn the_prediction_reads_kube_proxys_configmap_as_the_findings_do() {
        const ID: &str = "DNS-MACVLAN-NO-MASQUERADE";
        let mut raw = crate::testing::rules_fixture(
            "DNS-MACVLAN-NO-MASQUERADE/kubespray-macvlan-service-dns",
        );
        let config = "/etc/kubernetes/kubelet-config.yaml";
        let file = raw.files.get_mut(config).expect("kubelet config");
        let text = String::from_utf8_lossy(&file.content).replace(
            "resolvConf: \"/run/systemd/resolve/resolv.conf\"",
            "resolvConf: \"/etc/resolv.conf\"",
        );
        file.content = text.into_bytes().into();
        let vars = "{kube_network_plugin: macvlan, dns_mode: coredns, enable_nodelocaldns: false, kube_proxy_mode: ipvs}";
        let cluster = |on: bool| {
            let mut cluster = kube_dns_at("10.233.0.3");
            if let crate::cluster::Cluster::Read { config, .. } = &mut cluster {
                config.kube_proxy_configmap = true;
                config.kube_proxy_mode = Some("ipvs".into());
                config.kube_proxy_masquerade_all = Some(crate::cluster::MasqueradeAll::Read {
                    on,
                    key: "iptables.masqueradeAll".into(),
                });
            }
            cluster
        };
        let inventory_true = vars.replace('}', ", kube_proxy_masquerade_all: true}");
        let plan = plan_raw(&raw, &inventory_true, &cluster(false), "");
        let text = crate::plan::render::text(&plan, false);
        let host = &plan.hosts[0];
        assert!(!host.changes.is_empty(), "{text}");
        assert!(host.findings.iter().any(|f| f.id == ID), "{text}");
        assert!(!host.fixes.iter().any(|f| f == ID), "{text}");
        assert!(host.remaining.iter().any(|f| f == ID), "{text}");
        let plan = plan_raw(&raw, vars, &cluster(true), "");
        let text = crate::plan::render::text(&plan, false);
        let host = &plan.hosts[0];
        assert!(!host.changes.is_empty(), "{text}");
        assert!(!host.findings.iter().any(|f| f.id == ID), "{text}");
        assert!(!host.remaining.iter().any(|f| f == ID), "{text}");
    }

    /// The lab's cluster (its ConfigMaps, tests/lab/standins/configmaps.json) with the
    /// coredns Corefile's root forwarding to `forward` where given, and node1's CoreDNS pod
    /// crash-looping on plugin/loop.
    fn coredns_forwarding(forward: Option<&str>) -> crate::cluster::Cluster {
        let mut config = crate::cluster::parse_configmaps(include_bytes!(
            "../../tests/lab/standins/configmaps.json"
        ))
        .expect("configmaps");
        for c in config
            .corefiles
            .iter_mut()
            .filter(|c| c.configmap == "coredns")
        {
            let Some(to) = forward else { continue };
            let text = crate::cluster::corefile::set_root_forward(&c.text, &[to.to_owned()])
                .expect("edit")
                .expect("a change")
                .text;
            *c = crate::cluster::Corefile::new(&c.configmap, &c.key, &text);
        }
        let pod = crate::cluster::DnsPod {
            name: "coredns-5d78c9869d-x7k2p".into(),
            app: "coredns".into(),
            node: "node1".into(),
            phase: "Running".into(),
            ready: false,
            restarts: 12,
            waiting: Some("CrashLoopBackOff".into()),
            running: false,
            terminating: false,
            loop_detected: Some(
                "[FATAL] plugin/loop: Loop (10.233.64.5:41020 -> :53) detected for zone \".\""
                    .into(),
            ),
            logs_read: true,
            logs_unread: None,
            container: None,
            namespace: None,
            selector: None,
            readiness: None,
        };
        crate::cluster::Cluster::Read {
            via: "node1".into(),
            pods: vec![pod],
            config: Box::new(config),
            kubelets: Default::default(),
        }
    }

    /// A healthy Kubespray node whose CoreDNS pod crash-loops because the coredns
    /// Corefile's root forwards to its own kube-dns ClusterIP (the lab's Corefiles,
    /// kubespray@46dbdd39 coredns-config.yml.j2 rendered, that line set to 10.233.0.3):
    /// kubelet-resolvconf neither recreates the pod (the replacement loads the same
    /// Corefile) nor is said to fix DNS-POD-LOOP, and DNS-COREFILE-LOOP stays. Before, the
    /// plan recreated the pod and called DNS-POD-LOOP fixed. With the stock Corefile the
    /// pod is recreated as before.
    #[test]
    fn a_pod_looping_on_its_corefile_is_not_recreated() {
        let planned = |forward: Option<&str>, vars: &str| {
            let cluster = coredns_forwarding(forward);
            plan_in(
                "_healthy/kubespray-ubuntu2204",
                vars,
                &cluster,
                "\n  children:\n    kube_control_plane:\n      hosts:\n        node1:",
            )
            .hosts
            .remove(0)
        };
        let looping = planned(Some("10.233.0.3"), "kube_proxy_mode: ipvs");
        let ids: Vec<&str> = looping.findings.iter().map(|f| f.id.as_str()).collect();
        assert!(
            ids.contains(&"DNS-POD-LOOP") && ids.contains(&"DNS-COREFILE-LOOP"),
            "{ids:?}"
        );
        assert!(looping.cluster.is_empty(), "{:#?}", looping.cluster);
        assert!(looping.fixes.is_empty(), "{:?}", looping.fixes);
        // No playbook mends that Corefile here (no upstream_dns_servers): the finding names
        // none, and the plan says so, as for DNS-COREFILE-LOOP.
        let playbook = |host: &HostPlan, id: &str| {
            host.findings
                .iter()
                .find(|f| f.id == id)
                .map(|f| f.playbook.clone())
                .unwrap_or_else(|| panic!("no {id}: {host:#?}"))
        };
        let noted = |host: &HostPlan, id: &str| {
            host.unchanged
                .iter()
                .any(|n| n.message.starts_with(&format!("no playbook fixes {id} ")))
        };
        assert_eq!(playbook(&looping, "DNS-POD-LOOP"), None, "{looping:#?}");
        assert!(noted(&looping, "DNS-POD-LOOP"), "{:#?}", looping.unchanged);
        assert!(
            looping.remaining.is_empty() && looping.status == HostStatus::Clean,
            "{looping:#?}"
        );
        let stock = planned(None, "kube_proxy_mode: ipvs");
        assert!(!stock.cluster.is_empty(), "{stock:#?}");
        assert_eq!(stock.fixes, ["DNS-POD-LOOP"]);
        assert_eq!(
            playbook(&stock, "DNS-POD-LOOP").as_deref(),
            Some("kubelet-resolvconf")
        );
        // With upstream_dns_servers set, corefile-upstream writes them over the looping
        // line: the loop is mended; the pod loads it at its next restart, not recreated and
        // not said to be fixed by the plan.
        let mended = planned(Some("10.233.0.3"), "upstream_dns_servers: [192.0.2.53]");
        assert!(
            mended.fixes.contains(&"DNS-COREFILE-LOOP".to_owned())
                && !mended.fixes.contains(&"DNS-POD-LOOP".to_owned())
                && mended.cluster.is_empty()
                && !format!("{:?}", mended.unchanged)
                    .contains("no playbook fixes DNS-COREFILE-LOOP"),
            "{mended:#?}"
        );
        // corefile-upstream's edit mends the loop: DNS-COREFILE-LOOP names it. The pod is
        // not recreated, so DNS-POD-LOOP is not among what the plan fixes: it names no
        // playbook, and the plan says so. Before, it named corefile-upstream.
        assert_eq!(
            playbook(&mended, "DNS-COREFILE-LOOP").as_deref(),
            Some("corefile-upstream")
        );
        assert!(
            !noted(&mended, "DNS-COREFILE-LOOP"),
            "{:#?}",
            mended.unchanged
        );
        assert_eq!(playbook(&mended, "DNS-POD-LOOP"), None, "{mended:#?}");
        assert!(noted(&mended, "DNS-POD-LOOP"), "{:#?}", mended.unchanged);
        // With the control-plane hosts split on upstream_dns_servers the edit is dropped:
        // DNS-COREFILE-LOOP is still failing, names no playbook, and the plan says so.
        // Before, it still named corefile-upstream, with no note.
        let split = plan_in(
            "_healthy/kubespray-ubuntu2204",
            "upstream_dns_servers: [192.0.2.53]",
            &coredns_forwarding(Some("10.233.0.3")),
            "\n  children:\n    kube_control_plane:\n      hosts:\n        node1:\n        cp2:\n          upstream_dns_servers: [198.51.100.53]",
        );
        assert!(
            split.cluster_changes.is_empty(),
            "{:#?}",
            split.cluster_changes
        );
        let split = &split.hosts[0];
        assert_eq!(split.host, "node1");
        assert!(
            split.remaining.contains(&"DNS-COREFILE-LOOP".to_owned())
                && !split.fixes.contains(&"DNS-COREFILE-LOOP".to_owned()),
            "{split:#?}"
        );
        for id in ["DNS-POD-LOOP", "DNS-COREFILE-LOOP"] {
            assert_eq!(playbook(split, id), None, "{id}: {split:#?}");
            assert!(noted(split, id), "{id}: {:#?}", split.unchanged);
        }
    }

    /// The coredns Corefile looping (its root forwarding to 10.233.0.3) and both Corefiles
    /// drifting from upstream_dns_servers: corefile-upstream's coredns change mends the
    /// loop and its drift, the nodelocaldns one its drift alone. Dropped where the hosts
    /// asking want other text for it, the nodelocaldns change takes back the drift only:
    /// the loop stays fixed by the coredns change still made. Before, each change was said
    /// to fix what both fixed together, and the drop took the loop back too.
    #[test]
    fn a_dropped_configmap_change_takes_back_only_what_it_fixes() {
        use diagnose::cluster::{COREFILE_LOOP, COREFILE_UPSTREAM};
        let plan = plan_in(
            "_healthy/kubespray-ubuntu2204",
            "upstream_dns_servers: [192.0.2.53]",
            &coredns_forwarding(Some("10.233.0.3")),
            "\n  children:\n    kube_control_plane:\n      hosts:\n        node1:",
        );
        let fixes = |configmap: &str| -> Vec<String> {
            let change = plan
                .cluster_changes
                .iter()
                .find(|c| c.configmap == configmap)
                .unwrap_or_else(|| panic!("no {configmap} change: {:#?}", plan.cluster_changes));
            change
                .reasons
                .iter()
                .flat_map(|r| r.fixes.clone())
                .collect()
        };
        assert_eq!(fixes("coredns"), [COREFILE_LOOP, COREFILE_UPSTREAM]);
        assert_eq!(fixes("nodelocaldns"), [COREFILE_UPSTREAM]);
        let mut hosts = plan.hosts.clone();
        assert_eq!(hosts[0].fixes, [COREFILE_LOOP, COREFILE_UPSTREAM]);
        // node1's changes as it asked for them, and node2's own text for nodelocaldns's,
        // which fixes more there.
        let mut sets: Vec<(String, planner::ConfigMapSet)> = plan
            .cluster_changes
            .iter()
            .map(|c| {
                let set = planner::ConfigMapSet {
                    configmap: c.configmap.clone(),
                    key: c.key.clone(),
                    via: c.via.clone(),
                    before: c.before.clone(),
                    after: c.after.clone(),
                    description: c.description.clone(),
                    reason: c.reasons[0].clone(),
                };
                ("node1".to_owned(), set)
            })
            .collect();
        let mut other = sets
            .iter()
            .find(|(_, s)| s.configmap == "nodelocaldns")
            .expect("nodelocaldns")
            .1
            .clone();
        other.after = other.after.replace("192.0.2.53", "198.51.100.53");
        other.reason.fixes = [COREFILE_LOOP, COREFILE_UPSTREAM]
            .map(str::to_owned)
            .to_vec();
        sets.push(("node2".to_owned(), other));
        hosts.push(host("node2"));
        let changes = place_cluster_changes(sets, &mut hosts);
        let kept: Vec<&str> = changes.iter().map(|c| c.configmap.as_str()).collect();
        assert_eq!(kept, ["coredns"]);
        assert_eq!(hosts[0].fixes, [COREFILE_LOOP], "{:#?}", hosts[0]);
        assert!(
            hosts[0].remaining.contains(&COREFILE_UPSTREAM.to_owned()),
            "{:#?}",
            hosts[0]
        );
    }

    /// A DNS pod on node1, down in CrashLoopBackOff: its last run ended with `looped`
    /// (the loop plugin's fatal line) where given, else for another reason.
    fn down_pod(name: &str, app: &str, looped: Option<&str>) -> crate::cluster::DnsPod {
        crate::cluster::DnsPod {
            name: name.into(),
            app: app.into(),
            node: "node1".into(),
            phase: "Running".into(),
            ready: false,
            restarts: 9,
            waiting: Some("CrashLoopBackOff".into()),
            running: false,
            terminating: false,
            loop_detected: looped.map(str::to_owned),
            logs_read: true,
            logs_unread: None,
            container: None,
            namespace: None,
            selector: None,
            readiness: None,
        }
    }

    /// A cluster read through node1, whose nodes (`kubectl get nodes`) are node1 and node2,
    /// with `pods` and the DNS ConfigMaps `config`.
    fn cluster_of(
        pods: Vec<crate::cluster::DnsPod>,
        config: crate::cluster::DnsConfig,
    ) -> crate::cluster::Cluster {
        crate::cluster::Cluster::Read {
            via: "node1".into(),
            pods,
            config: Box::new(config),
            kubelets: [("node1", "v1.29.4"), ("node2", "v1.29.4")]
                .into_iter()
                .map(|(n, v)| (n.to_owned(), v.to_owned()))
                .collect(),
        }
    }

    /// The healthy node of rules fixture `fixture` with net.ipv4.ip_forward 0 live: the
    /// plan's changes there are bridge-netfilter's (DNS-IP-FORWARD).
    fn forwarding_off(fixture: &str) -> crate::facts::raw::RawFacts {
        let mut raw = crate::testing::rules_fixture(fixture);
        crate::testing::replace_in_file(&mut raw, "/proc/sys/net/ipv4/ip_forward", "1", "0");
        raw
    }

    /// The ids of `host`'s findings that failed.
    fn failed(host: &HostPlan) -> Vec<&str> {
        host.findings
            .iter()
            .filter(|f| f.status == FindingStatus::Failed)
            .map(|f| f.id.as_str())
            .collect()
    }

    /// A host whose plan changes only what bridge-netfilter sets (ip_forward off) while the
    /// cluster says its NodeLocal DNSCache pod is down (DNS-NODELOCAL-DOWN), or, on a
    /// kubeadm node, that kubeadm's kubelet-config ConfigMap names another clusterDNS
    /// (DNS-KUBEADM-CONFIG-DRIFT): the plan mends neither, so neither is among what it
    /// fixes, and both stay failing after it. Before, any change on a host listed every
    /// failing cluster finding as fixed.
    #[test]
    fn a_cluster_finding_the_plan_does_not_mend_stays_failing() {
        let cache = down_pod("nodelocaldns-4xk2p", "nodelocaldns", None);
        let cluster = cluster_of(vec![cache], crate::cluster::DnsConfig::default());
        let raw = forwarding_off("_healthy/kubespray-ubuntu2204");
        let plan = plan_raw(&raw, "kube_proxy_mode: ipvs", &cluster, "");
        let text = crate::plan::render::text(&plan, false);
        let host = &plan.hosts[0];
        assert!(failed(host).contains(&"DNS-NODELOCAL-DOWN"), "{text}");
        assert!(host.fixes.contains(&"DNS-IP-FORWARD".to_owned()), "{text}");
        assert!(
            !host.fixes.contains(&"DNS-NODELOCAL-DOWN".to_owned()),
            "{text}"
        );
        assert!(
            host.remaining.contains(&"DNS-NODELOCAL-DOWN".to_owned()),
            "{text}"
        );
        // As the text and the Markdown show it.
        assert!(
            text.contains(
                "\n  after apply: fixes DNS-IP-FORWARD; still failing: DNS-NODELOCAL-DOWN, DNS-STRAY-SEARCH\n"
            ),
            "{text}"
        );
        let md = crate::plan::markdown::markdown(&plan, "0");
        assert!(
            md.contains(
                "- fixes `DNS-IP-FORWARD`\n- still failing: `DNS-NODELOCAL-DOWN`, `DNS-STRAY-SEARCH`\n"
            ),
            "{md}"
        );

        let config = crate::cluster::DnsConfig {
            kubeadm_kubelet: Some(crate::cluster::KubeadmKubelet {
                configmap: "kubelet-config".into(),
                resolv_conf: Some("/run/systemd/resolve/resolv.conf".into()),
                cluster_dns: vec!["10.96.0.53".into()],
                cluster_domain: Some("cluster.local".into()),
            }),
            ..crate::cluster::DnsConfig::default()
        };
        let raw = forwarding_off("_healthy/kubeadm-ubuntu2204");
        let plan = plan_raw(
            &raw,
            "kube_version: v1.29.4",
            &cluster_of(Vec::new(), config),
            "",
        );
        let text = crate::plan::render::text(&plan, false);
        let host = &plan.hosts[0];
        assert!(failed(host).contains(&"DNS-KUBEADM-CONFIG-DRIFT"), "{text}");
        assert!(host.fixes.contains(&"DNS-IP-FORWARD".to_owned()), "{text}");
        assert!(
            !host.fixes.contains(&"DNS-KUBEADM-CONFIG-DRIFT".to_owned()),
            "{text}"
        );
        assert!(
            host.remaining
                .contains(&"DNS-KUBEADM-CONFIG-DRIFT".to_owned()),
            "{text}"
        );
    }

    /// A kubeadm node whose config.yaml hands pods the stub (/etc/resolv.conf, 127.0.0.53)
    /// where kubeadm's kubelet-config ConfigMap says systemd-resolved's uplink file:
    /// kubelet-resolvconf's change makes the two agree, so DNS-KUBEADM-CONFIG-DRIFT is fixed
    /// by it. With the ConfigMap on /etc/resolv.conf, the same change brings the drift
    /// about: it fails after the plan, and the note says so.
    #[test]
    fn kubeadm_drift_is_fixed_where_the_kubelet_config_comes_to_agree() {
        let config = |resolv: &str| crate::cluster::DnsConfig {
            kubeadm_kubelet: Some(crate::cluster::KubeadmKubelet {
                configmap: "kubelet-config".into(),
                resolv_conf: Some(resolv.into()),
                cluster_dns: vec!["10.96.0.10".into()],
                cluster_domain: Some("cluster.local".into()),
            }),
            ..crate::cluster::DnsConfig::default()
        };
        let planned = |resolv: &str| {
            let cluster = cluster_of(Vec::new(), config(resolv));
            let plan = plan_in(
                "DNS-KUBELET-LOOPBACK/kubeadm-echo-appended-resolvconf",
                "kube_version: v1.29.4",
                &cluster,
                "",
            );
            let text = crate::plan::render::text(&plan, false);
            (plan.hosts[0].clone(), text)
        };
        const DRIFT: &str = "DNS-KUBEADM-CONFIG-DRIFT";
        let (agree, text) = planned("/run/systemd/resolve/resolv.conf");
        assert!(failed(&agree).contains(&DRIFT), "{text}");
        assert_eq!(agree.fixes, [DRIFT, "DNS-KUBELET-LOOPBACK"], "{text}");
        assert_eq!(agree.remaining, ["DNS-STRAY-SEARCH"], "{text}");
        let (differ, text) = planned("/etc/resolv.conf");
        assert!(!failed(&differ).contains(&DRIFT), "{text}");
        assert_eq!(differ.remaining, [DRIFT, "DNS-STRAY-SEARCH"], "{text}");
        assert!(
            differ
                .notes
                .iter()
                .any(|n| n.message.contains("(DNS-KUBEADM-CONFIG-DRIFT)")),
            "{text}"
        );
    }

    /// A CoreDNS pod on node1 crash-looping on the kubelet's resolv.conf (systemd-resolved's
    /// uplink file, listing only the cache's 169.254.25.10), with no real upstream server
    /// known: kubelet-resolvconf is blocked, so the pod is not recreated and the file still
    /// loops; bridge-netfilter's change alone does not fix DNS-POD-LOOP. Before, it was
    /// listed as fixed. Its NodeLocal DNSCache pod down on the same loop
    /// (DNS-NODELOCAL-DOWN) stays down too.
    #[test]
    fn a_pod_loop_is_not_fixed_by_a_plan_that_neither_mends_the_file_nor_recreates_it() {
        let mut raw = forwarding_off("_healthy/kubespray-ubuntu2204");
        crate::testing::replace_in_file(
            &mut raw,
            "/run/systemd/resolve/resolv.conf",
            "nameserver 192.0.2.53\nnameserver 198.51.100.53\n",
            "nameserver 169.254.25.10\n",
        );
        let looped = "[FATAL] plugin/loop: Loop (10.233.64.5:41020 -> :53) detected for zone \".\"";
        let pods = vec![
            down_pod("coredns-5d78c9869d-x7k2p", "coredns", Some(looped)),
            down_pod("nodelocaldns-4xk2p", "nodelocaldns", Some(looped)),
        ];
        let cluster = cluster_of(pods, crate::cluster::DnsConfig::default());
        let plan = plan_raw(&raw, "kube_proxy_mode: ipvs", &cluster, "");
        let text = crate::plan::render::text(&plan, false);
        let host = &plan.hosts[0];
        assert!(
            failed(host).contains(&"DNS-POD-LOOP") && !host.blocked.is_empty(),
            "{text}"
        );
        assert!(host.cluster.is_empty(), "{text}");
        assert!(host.fixes.contains(&"DNS-IP-FORWARD".to_owned()), "{text}");
        for id in ["DNS-POD-LOOP", "DNS-NODELOCAL-DOWN"] {
            assert!(!host.fixes.contains(&id.to_owned()), "{id}: {text}");
            assert!(host.remaining.contains(&id.to_owned()), "{id}: {text}");
        }
        // With an upstream server known, kubelet-resolvconf gives the kubelet a file that
        // does not loop and recreates the node's DNS pods: apply waits for each
        // replacement to be Ready, so both findings are fixed.
        let plan = plan_raw(
            &raw,
            "{kube_proxy_mode: ipvs, upstream_dns_servers: [192.0.2.53]}",
            &cluster,
            "",
        );
        let text = crate::plan::render::text(&plan, false);
        let host = &plan.hosts[0];
        assert!(!host.cluster.is_empty(), "{text}");
        for id in ["DNS-POD-LOOP", "DNS-NODELOCAL-DOWN"] {
            assert!(host.fixes.contains(&id.to_owned()), "{id}: {text}");
            assert!(!host.remaining.contains(&id.to_owned()), "{id}: {text}");
        }
    }

    /// The plan of the node tree of rules fixture `fixture` as `node1`, with `vars` (YAML
    /// mapping lines) as its inventory variables and no cluster.
    fn plan_fixture(fixture: &str, vars: &str) -> HostPlan {
        let cluster = crate::cluster::Cluster::Unavailable {
            reason: "none".into(),
        };
        plan_in(fixture, vars, &cluster, "").hosts.remove(0)
    }

    /// DNS-CLUSTER-SELF-FORWARD's fix names, for doing by hand, the `servers=` that
    /// host-upstream-dns writes into NetworkManager's global DNS, and the two are one list
    /// in one order: on the Rocky 9 node of networkmanager-host-cluster-only with a kubelet
    /// file of its own and no upstreams in the inventory, the servers of the kubelet's file
    /// (those CoreDNS forwarded to) come before those systemd-resolved's uplink file lists,
    /// as the plan's `upstreams` take them. Before, the fix took the uplink file's first.
    #[test]
    fn the_fix_names_the_servers_host_upstream_dns_writes_in_its_order() {
        let cluster = crate::cluster::Cluster::Unavailable {
            reason: "none".into(),
        };
        let mut raw = crate::testing::rules_fixture(
            "DNS-CLUSTER-SELF-FORWARD/networkmanager-host-cluster-only",
        );
        crate::testing::replace_in_file(
            &mut raw,
            "/var/lib/kubelet/config.yaml",
            "kind: KubeletConfiguration\n",
            "kind: KubeletConfiguration\nresolvConf: /etc/dnsfix/resolv.conf\n",
        );
        let raw = crate::testing::with_files(
            &raw,
            &[
                (
                    "/etc/dnsfix/resolv.conf",
                    "nameserver 198.51.100.53\nnameserver 192.0.2.53\n",
                ),
                (
                    "/run/systemd/resolve/resolv.conf",
                    "nameserver 203.0.113.53\nnameserver 192.0.2.53\n",
                ),
            ],
        );
        let facts = NodeFacts::from_raw("node1", &raw);
        let fix = crate::diagnose::diagnose_host(&Host::new("node1"), &facts)
            .findings()
            .find(|f| f.id == rules::CLUSTER_SELF_FORWARD)
            .map(|f| f.remediation.clone())
            .expect("DNS-CLUSTER-SELF-FORWARD");
        let by_hand = fix
            .split("By hand the same file: `")
            .nth(1)
            .and_then(|rest| rest.split('`').next())
            .unwrap_or_else(|| panic!("no servers= by hand: {fix}"));
        let plan = plan_raw(&raw, "{}", &cluster, "").hosts.remove(0);
        let written = plan
            .changes
            .iter()
            .find_map(|c| match c {
                Change::WriteFile { path, content, .. }
                    if path == "/etc/NetworkManager/conf.d/zz-dnsfix-upstream.conf" =>
                {
                    content
                        .lines()
                        .find(|l| l.starts_with("servers="))
                        .map(str::to_owned)
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("no global DNS written: {plan:#?}"));
        assert_eq!(written, "servers=169.254.25.10,198.51.100.53,192.0.2.53");
        assert_eq!(by_hand, written, "{fix}");
    }

    /// kubelet-resolvconf's note on the options pods lose in systemd-resolved's file is
    /// made only where the playbook runs: on EKS (nodeadm writes the kubelet's config) it is
    /// blocked, and a blocked playbook's notes go with its changes (the planner puts the
    /// host back as it was before the playbook), so the plan does not note what it does not
    /// do. The kubelet's file here gives pods `ndots:2 timeout:2`.
    #[test]
    fn a_blocked_kubelet_resolvconf_notes_no_options_pods_would_lose() {
        let cluster = crate::cluster::Cluster::Unavailable {
            reason: "none".into(),
        };
        for fixture in [
            "_upstream/eks-al2023-1.31-nodeconfig-resolvconf",
            "_upstream/eks-al2023-old-stub",
        ] {
            let raw = crate::testing::with_files(
                &crate::testing::rules_fixture(fixture),
                &[(
                    "/etc/resolv.conf",
                    "nameserver 127.0.0.53\noptions edns0 trust-ad ndots:2 timeout:2\nsearch us-west-2.compute.internal\n",
                )],
            );
            let facts = NodeFacts::from_raw("node1", &raw);
            let context = context::build(&Host::new("node1"), &facts, &[], None, None);
            assert_eq!(
                context["kubelet_pod_options"],
                serde_json::json!(["ndots:2", "timeout:2"]),
                "{fixture}"
            );
            let plan = plan_raw(&raw, "{}", &cluster, "").hosts.remove(0);
            assert!(
                plan.blocked
                    .iter()
                    .any(|b| b.playbook == "kubelet-resolvconf"),
                "{fixture}: {plan:#?}"
            );
            assert!(
                !plan.notes.iter().any(|n| n.message.contains("ndots:2")),
                "{fixture}: {:#?}",
                plan.notes
            );
        }
    }

    /// [`plan_fixture`]'s whole plan, with `cluster`, and `groups` after the host in the
    /// inventory's `all`.
    fn plan_in(fixture: &str, vars: &str, cluster: &crate::cluster::Cluster, groups: &str) -> Plan {
        plan_raw(
            &crate::testing::rules_fixture(fixture),
            vars,
            cluster,
            groups,
        )
    }

    /// [`plan_in`] over facts of the test's own making.
    fn plan_raw(
        raw: &crate::facts::raw::RawFacts,
        vars: &str,
        cluster: &crate::cluster::Cluster,
        groups: &str,
    ) -> Plan {
        let dir = std::env::temp_dir().join(format!("dnsfix-plan-{}", crate::util::nonce()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let path = dir.join("hosts.yaml");
        std::fs::write(
            &path,
            format!("all:\n  hosts:\n    node1:\n      {vars}{groups}\n"),
        )
        .expect("inventory");
        let inventory = Inventory::load(&path).expect("loads");
        let _ = std::fs::remove_dir_all(&dir);
        let hosts = inventory.select(None).expect("hosts");
        let outcomes = vec![HostOutcome {
            host: "node1".into(),
            elapsed: std::time::Duration::ZERO,
            result: Ok(NodeFacts::from_raw("node1", raw)),
        }];
        let playbooks = Playbooks::load(None).expect("playbooks");
        build(&inventory, None, &hosts, outcomes, &playbooks, cluster)
    }

    /// `dnsfix plan` on a workstation (the README's first command) said `nothing to
    /// change: localhost`, as for a node whose DNS is right, where no kubelet
    /// configuration was found and nothing about pods' DNS was judged. A node with one
    /// gets no such note.
    #[test]
    fn a_host_without_a_kubelet_says_nothing_was_judged() {
        let cluster = crate::cluster::Cluster::Unavailable {
            reason: "none".into(),
        };
        let bare = plan_raw(
            &crate::facts::raw::RawFacts::default(),
            "x: 1",
            &cluster,
            "",
        );
        let host = &bare.hosts[0];
        assert!(!host.acts(), "{host:#?}");
        assert!(
            host.notes.iter().any(|n| n.message.starts_with(
                "no kubelet configuration on this host: the kubelet's rules did not apply"
            )),
            "{host:#?}"
        );
        let text = render::text(&bare, false);
        assert!(!text.contains("nothing to change: node1"), "{text}");
        let node = plan_fixture(
            "DNS-BRIDGE-NF-NOT-PERSISTENT/k3s-sets-them-at-start",
            "x: 1",
        );
        assert!(
            !node
                .notes
                .iter()
                .any(|n| n.message.contains("no kubelet configuration")),
            "{node:#?}"
        );
    }

    /// On k3s the clusterDNS fix is a `kubelet-arg+` drop-in of dnsfix's own, unless a
    /// kubelet-arg already sets cluster-dns (k3s would pass both, and the kubelet add them
    /// up) or a later drop-in's plain `kubelet-arg:` would throw it away.
    #[test]
    fn k3s_cluster_dns_goes_in_a_drop_in_that_adds_to_kubelet_arg() {
        let fixture = "DNS-NODELOCAL-CLUSTERDNS/k3s-ipvs-service-ip";
        let dropin = "/etc/rancher/k3s/config.yaml.d/zz-dnsfix-cluster-dns.yaml";
        let config = "/etc/rancher/k3s/config.yaml";
        let cluster = crate::cluster::Cluster::Unavailable {
            reason: "none".into(),
        };
        let plan = |files: &[(&str, &str)]| {
            let raw = crate::testing::with_files(&crate::testing::rules_fixture(fixture), files);
            plan_raw(&raw, "{}", &cluster, "").hosts.remove(0)
        };
        let blocked = |p: &HostPlan| {
            p.blocked
                .iter()
                .map(|b| b.reason.clone())
                .collect::<Vec<_>>()
        };

        let fixed = plan(&[]);
        let [Change::WriteFile { path, content, .. }] = fixed.changes.as_slice() else {
            panic!("{:?}", fixed.changes)
        };
        assert_eq!(path, dropin);
        assert!(
            content.ends_with("kubelet-arg+:\n  - cluster-dns=169.254.20.10\n"),
            "{content}"
        );

        // The entry that sets it is changed where it is, by hand.
        let wrong = plan(&[(config, "kubelet-arg:\n  - cluster-dns=10.43.0.10\n")]);
        assert!(wrong.changes.is_empty(), "{:?}", wrong.changes);
        let why = blocked(&wrong);
        assert!(
            why.iter().any(
                |r| r.contains(&format!("kubelet-arg cluster-dns= at {config}:2"))
                    && r.contains("make that cluster-dns=169.254.20.10, in one entry")
            ),
            "{why:?}"
        );

        // A drop-in after dnsfix's own that replaces the list; one that adds to it, or
        // comes before, does not stop it.
        let later = "/etc/rancher/k3s/config.yaml.d/zzz-site.yaml";
        let replaced = plan(&[(later, "kubelet-arg:\n  - max-pods=200\n")]);
        assert!(replaced.changes.is_empty(), "{:?}", replaced.changes);
        assert!(
            blocked(&replaced)
                .iter()
                .any(|r| r.starts_with(&format!("{later} sets kubelet-arg:"))),
            "{:?}",
            blocked(&replaced)
        );
        let added = plan(&[(later, "kubelet-arg+:\n  - max-pods=200\n")]);
        assert_eq!(added.changes.len(), 1, "{:?}", added.blocked);
        let earlier = plan(&[(
            "/etc/rancher/k3s/config.yaml.d/50-site.yaml",
            "kubelet-arg:\n  - max-pods=200\n",
        )]);
        assert_eq!(earlier.changes.len(), 1, "{:?}", earlier.blocked);

        // dnsfix's own drop-in, once written, is its to write again; beside another entry it
        // is one of several, each named.
        let own = plan(&[(dropin, "kubelet-arg+:\n  - cluster-dns=169.254.20.9\n")]);
        let [Change::WriteFile { path, content, .. }] = own.changes.as_slice() else {
            panic!("{:?} {:?}", own.changes, own.blocked)
        };
        assert_eq!(
            (path.as_str(), content.contains("cluster-dns=169.254.20.10")),
            (dropin, true)
        );
        let both = plan(&[
            (dropin, "kubelet-arg+:\n  - cluster-dns=169.254.20.9\n"),
            (config, "kubelet-arg:\n  - cluster-dns=10.43.0.10\n"),
        ]);
        assert!(both.changes.is_empty(), "{:?}", both.changes);
        assert!(
            blocked(&both)
                .iter()
                .any(|r| r.contains(&format!("at {dropin}:2, {config}:2: make that"))),
            "{:?}",
            blocked(&both)
        );
        // clusterDNS from a kubelet config drop-in of the operator's: changed there, by
        // hand; a flag would shadow it.
        let site = "/var/lib/rancher/k3s/agent/etc/kubelet.conf.d/50-site.conf";
        let dropped = plan(&[(site, "clusterDNS:\n- 10.96.0.10\n")]);
        assert!(dropped.changes.is_empty(), "{:?}", dropped.changes);
        assert!(
            blocked(&dropped)
                .iter()
                .any(|r| r.starts_with(&format!("The kubelet takes clusterDNS from {site}:1"))),
            "{:?}",
            blocked(&dropped)
        );
        // k3s reads `.YAML` drop-ins too.
        let upper = plan(&[(
            "/etc/rancher/k3s/config.yaml.d/zzz-site.YAML",
            "kubelet-arg:\n  - max-pods=200\n",
        )]);
        assert!(upper.changes.is_empty(), "{:?}", upper.changes);
    }

    /// Where dhclient is the DHCP client, the plain /etc/resolv.conf host-upstream-dns
    /// writes is dhclient-script's to write again at the next lease: the plan says so.
    #[test]
    fn a_plain_resolv_conf_under_dhclient_is_noted() {
        let mut raw =
            crate::testing::rules_fixture("DNS-CLUSTER-SELF-FORWARD/host-resolver-cluster-only");
        let vars = "{resolvconf_mode: host_resolvconf, disable_host_nameservers: true, upstream_dns_servers: [192.0.2.53, 198.51.100.53]}";
        let cluster = crate::cluster::Cluster::Unavailable {
            reason: "none".into(),
        };
        let noted = |raw: &crate::facts::raw::RawFacts| {
            let host = plan_raw(raw, vars, &cluster, "").hosts.remove(0);
            assert_eq!(host.changes.len(), 1, "{:?}", host.changes);
            host.notes
                .iter()
                .any(|n| n.message.starts_with("dhclient is this node's DHCP client"))
        };
        assert!(!noted(&raw));
        raw.pids.insert("dhclient".to_owned(), 612);
        assert!(noted(&raw));
        // Not where an enter hook its dhclient-script sources (this Debian node's: the names of
        // /etc/dhcp/dhclient-enter-hooks.d run-parts lists) keeps it from writing the file.
        let hook = "/etc/dhcp/dhclient-enter-hooks.d/nodnsupdate";
        raw.file(
            hook,
            crate::facts::raw::FileState::Present,
            Some(b"#!/bin/sh\nmake_resolv_conf(){\n    :\n}\n"),
        );
        assert!(!noted(&raw));
        // A hook it passes over (a dot in its name) counts for nothing: the note is back.
        raw.files.remove(hook);
        raw.file(
            &format!("{hook}.sh"),
            crate::facts::raw::FileState::Present,
            Some(b"make_resolv_conf() { :; }\n"),
        );
        assert!(noted(&raw));
    }

    /// dhclient's note puts each upstream in the option of its family: an IPv4 one in
    /// `domain-name-servers`, an IPv6 one in `dhcp6.name-servers`, which a DHCPv6 dhclient
    /// takes (dhcp-options(5); Debian's dhclient-script writes the file from
    /// `new_dhcp6_name_servers` for a DHCPv6 lease), and reads as a sentence for IPv4
    /// servers alone, IPv6 ones alone and both. Before, the IPv6 line stood after a `;`
    /// inside the IPv4 one's parentheses, and IPv6 servers alone were offered "the
    /// supersede domain-name-servers line", an IPv4 option.
    #[test]
    fn dhclient_s_note_reads_for_each_address_family() {
        let mut raw =
            crate::testing::rules_fixture("DNS-CLUSTER-SELF-FORWARD/host-resolver-cluster-only");
        raw.pids.insert("dhclient".to_owned(), 612);
        let cluster = crate::cluster::Cluster::Unavailable {
            reason: "none".into(),
        };
        const HEAD: &str = "dhclient is this node's DHCP client: it writes /etc/resolv.conf anew at every lease renewal and boot, from the lease's servers or dhclient.conf's, which takes this change away: ";
        for (servers, want) in [
            (
                "[192.0.2.53, 198.51.100.53]",
                "put the IPv4 servers (192.0.2.53, 198.51.100.53) in /etc/dhcp/dhclient.conf too (`prepend domain-name-servers 192.0.2.53, 198.51.100.53;`, or a supersede domain-name-servers line).",
            ),
            (
                "['2001:db8::53']",
                "a DHCPv4 dhclient writes the file from its lease's IPv4 servers alone, so the IPv6 servers (2001:db8::53) stay only where a DHCPv6 dhclient (-6) writes it, with `prepend dhcp6.name-servers 2001:db8::53;` in its dhclient.conf; else give IPv4 servers, or keep dhclient-script from writing the file (an enter hook that redefines make_resolv_conf, dhclient-script(8)).",
            ),
            (
                "[192.0.2.53, '2001:db8::53']",
                "put the IPv4 servers (192.0.2.53) in /etc/dhcp/dhclient.conf too (`prepend domain-name-servers 192.0.2.53;`, or a supersede domain-name-servers line), and the IPv6 ones (2001:db8::53) in `prepend dhcp6.name-servers 2001:db8::53;`, which only a DHCPv6 dhclient (-6) takes.",
            ),
        ] {
            let vars = format!(
                "{{resolvconf_mode: host_resolvconf, disable_host_nameservers: true, upstream_dns_servers: {servers}}}"
            );
            let host = plan_raw(&raw, &vars, &cluster, "").hosts.remove(0);
            let note = host
                .notes
                .iter()
                .find(|n| n.message.starts_with("dhclient is this node's DHCP client"))
                .expect("dhclient's note");
            let rest = note.message.strip_prefix(HEAD).unwrap_or(&note.message);
            let body = rest.split(" Kubespray renders").next().unwrap_or_default();
            assert_eq!(body, want, "{servers}: {}", note.message);
        }
    }

    /// A node whose /etc/resolv.conf lists two cluster addresses (nodelocaldns and CoreDNS's
    /// service) and nothing else: host-upstream-dns keeps the first and then the upstreams,
    /// three in all (glibc uses no more: resolv/resolv_conf.c `update_from_conf` copies the
    /// first `MAXNS`, 3 in resolv/bits/types/res_state.h, glibc-2.42), not both cluster
    /// addresses and a single upstream.
    #[test]
    fn a_resolv_conf_with_two_cluster_addresses_keeps_one_and_the_upstreams() {
        let mut raw =
            crate::testing::rules_fixture("DNS-CLUSTER-SELF-FORWARD/host-resolver-cluster-only");
        crate::testing::replace_in_file(
            &mut raw,
            "/etc/resolv.conf",
            "nameserver 169.254.25.10\n",
            "nameserver 169.254.25.10\nnameserver 10.233.0.3\n",
        );
        let vars = "{resolvconf_mode: host_resolvconf, disable_host_nameservers: true, upstream_dns_servers: [192.0.2.53, 198.51.100.53]}";
        let cluster = crate::cluster::Cluster::Unavailable {
            reason: "none".into(),
        };
        let host = plan_raw(&raw, vars, &cluster, "").hosts.remove(0);
        let content = host.changes.iter().find_map(|c| match c {
            Change::WriteFile { path, content, .. } if path == "/etc/resolv.conf" => Some(content),
            _ => None,
        });
        let want =
            "nameserver 169.254.25.10\nnameserver 192.0.2.53\nnameserver 198.51.100.53\noptions";
        assert!(
            content.is_some_and(|c| c.contains(want)),
            "{:?} {:?}",
            host.changes,
            host.blocked
        );
    }

    /// NodeLocal DNSCache's clusterDNS on MicroK8s goes in kubelite's arguments file; on
    /// k0s, which writes the kubelet's config at every start and takes no clusterDNS from a
    /// worker profile, the plan names the service's --kubelet-extra-args.
    #[test]
    fn nodelocaldns_cluster_dns_on_microk8s_and_k0s() {
        let cluster = crate::cluster::Cluster::Unavailable {
            reason: "none".into(),
        };
        let with_cache = |fixture: &str| {
            let mut raw = crate::testing::rules_fixture(fixture);
            raw.files.remove("/sys/class/net/nodelocaldns");
            crate::testing::set_command(
                &mut raw,
                "nodelocaldns-addr",
                "6: nodelocaldns    inet 169.254.20.10/32 scope global nodelocaldns\\       valid_lft forever preferred_lft forever\n",
                0,
            );
            plan_raw(&raw, "{}", &cluster, "").hosts.remove(0)
        };
        let microk8s = with_cache("_upstream/microk8s-1.32-debian12-joined-worker");
        // Beside the fixture's own resolv-conf fix, in the same file write.
        let args = "/var/snap/microk8s/7964/args/kubelet";
        let content = microk8s.changes.iter().find_map(|c| match c {
            Change::WriteFile { path, content, .. } if path == args => Some(content),
            _ => None,
        });
        assert!(
            content.is_some_and(|c| c.contains("--cluster-dns=169.254.20.10\n")),
            "{:?} {:?}",
            microk8s.changes,
            microk8s.blocked
        );
        let k0s = with_cache("_upstream/k0s-1.34-ubuntu2204-worker-after-reboot");
        assert!(
            k0s.blocked.iter().any(|b| b
                .reason
                .contains("--cluster-dns=169.254.20.10 to the k0s service's")),
            "{:?} {:?} {:?} {:?}",
            k0s.blocked,
            k0s.changes,
            k0s.findings,
            k0s.unchanged
        );
    }

    fn host(name: &str) -> HostPlan {
        let mut plan = error_plan(name, Vec::new(), "test", String::new());
        plan.fixes = vec![diagnose::cluster::COREFILE_UPSTREAM.to_owned()];
        plan
    }

    fn inventory(ini: &str) -> Inventory {
        let dir = std::env::temp_dir().join(format!("dnsfix-cp-{}", crate::util::nonce()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("hosts.ini"), ini).expect("write");
        let inventory = Inventory::load(&dir.join("hosts.ini")).expect("inventory");
        let _ = std::fs::remove_dir_all(&dir);
        inventory
    }

    /// The control-plane hosts must agree on upstream_dns_servers (set on all, or on
    /// none, the same everywhere) for the Corefiles to be changed.
    #[test]
    fn the_control_plane_must_agree_on_the_upstream_servers() {
        let agree = inventory(
            "[kube_control_plane]\ncp1\ncp2\n[kube_node]\nw1 upstream_dns_servers=\"['203.0.113.9']\"\n\
             [kube_control_plane:vars]\nupstream_dns_servers=\"['192.0.2.53']\"\n",
        );
        assert_eq!(control_plane_disagreement(&agree), None);
        let split =
            inventory("[kube_control_plane]\ncp1\ncp2 upstream_dns_servers=\"['192.0.2.53']\"\n");
        let why = control_plane_disagreement(&split).expect("disagree");
        assert!(why.contains("cp1: unset; cp2: [192.0.2.53]"), "{why}");
    }

    /// With the control-plane hosts split on upstream_dns_servers, the ConfigMap changes
    /// they asked for are dropped: what those changes fixed is still failing on each of
    /// them (before, it left `fixes` and was in `remaining` neither), and nothing else moves.
    #[test]
    fn a_change_dropped_for_a_split_control_plane_leaves_its_findings_failing() {
        let split = inventory(
            "[kube_control_plane]\ncp1\ncp2 upstream_dns_servers=\"['192.0.2.53']\"\n[kube_node]\nw1\n",
        );
        let mut plans = vec![host("cp1"), host("cp2"), host("w1")];
        plans[0].fixes.push("DNS-IP-FORWARD".to_owned());
        plans[0].remaining.push("DNS-NAMESERVER-LIMIT".to_owned());
        let mut sets = vec![(
            "cp2".to_owned(),
            set(".:53 {\n    forward . 192.0.2.53\n}\n", "coredns"),
        )];
        sets.push(("cp1".to_owned(), sets[0].1.clone()));
        drop_if_the_control_plane_disagrees(&split, &mut sets, &mut plans);
        assert!(sets.is_empty());
        assert_eq!(plans[0].fixes, ["DNS-IP-FORWARD"]);
        assert_eq!(
            plans[0].remaining,
            ["DNS-COREFILE-UPSTREAM-DRIFT", "DNS-NAMESERVER-LIMIT"]
        );
        assert!(plans[1].fixes.is_empty(), "{:?}", plans[1].fixes);
        assert_eq!(plans[1].remaining, ["DNS-COREFILE-UPSTREAM-DRIFT"]);
        // w1 asked for nothing: its plan is its own.
        assert_eq!(plans[2].fixes, ["DNS-COREFILE-UPSTREAM-DRIFT"]);
        assert!(plans[2].remaining.is_empty());
        assert!(plans[2].notes.is_empty());
    }

    /// Hosts asking for the same text share one change; hosts asking for different text
    /// for the same key get none, and a note each.
    #[test]
    fn cluster_changes_merge_and_conflicts_drop_them() {
        let one = ".:53 {\n    forward . 192.0.2.53\n}\n";
        let mut plans = vec![host("cp1"), host("cp2"), host("cp3")];
        let changes = place_cluster_changes(
            vec![
                ("cp1".into(), set(one, "coredns")),
                ("cp2".into(), set(one, "coredns")),
            ],
            &mut plans,
        );
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].hosts, ["cp1", "cp2"]);
        assert_eq!(changes[0].reasons.len(), 1);
        // What the change fixes on each host that asked, under one reason.
        let mut looped = set(one, "coredns");
        looped
            .reason
            .fixes
            .push(diagnose::cluster::COREFILE_LOOP.to_owned());
        let changes = place_cluster_changes(
            vec![("cp1".into(), set(one, "coredns")), ("cp2".into(), looped)],
            &mut plans,
        );
        assert_eq!(changes[0].reasons.len(), 1);
        assert_eq!(
            changes[0].reasons[0].fixes,
            [
                diagnose::cluster::COREFILE_UPSTREAM,
                diagnose::cluster::COREFILE_LOOP
            ]
        );
        assert_eq!(
            changes[0].before_sha256,
            crate::util::sha256_hex(changes[0].before.as_bytes())
        );
        assert!(plans.iter().all(|p| p.notes.is_empty()));

        let other = ".:53 {\n    forward . 198.51.100.53\n}\n";
        let changes = place_cluster_changes(
            vec![
                ("cp1".into(), set(one, "coredns")),
                ("cp2".into(), set(other, "coredns")),
            ],
            &mut plans,
        );
        assert!(changes.is_empty(), "{changes:?}");
        for (plan, noted) in plans.iter().zip([true, true, false]) {
            // Not fixed after all where the change was dropped: still failing.
            assert_eq!(plan.fixes.is_empty(), noted, "{}", plan.host);
            assert_eq!(
                plan.remaining == [diagnose::cluster::COREFILE_UPSTREAM],
                noted,
                "{}",
                plan.host
            );
            assert_eq!(
                plan.notes
                    .iter()
                    .any(|n| n.message.contains("want different upstream servers")),
                noted,
                "{}",
                plan.host
            );
        }
    }

    /// A --resolv-conf or --cluster-dns flag that kubelet-flag-shadow removes hands the
    /// setting back to the config whose value counts without it: a `--config-dir` drop-in
    /// that sets the key beats the config file (kubernetes cmd/kubelet/app/server.go
    /// `mergeKubeletConfigurations`), so the flag's value is kept there, not in config.yaml,
    /// where the drop-in's own value would win after the restart (here a loopback
    /// resolv.conf and a wrong clusterDNS).
    #[test]
    fn a_shadowing_flags_value_is_kept_in_the_drop_in_that_sets_the_key() {
        use crate::facts::raw::FileState;
        let unavailable = crate::cluster::Cluster::Unavailable {
            reason: "none".into(),
        };
        let flags = "--resolv-conf=/run/systemd/resolve/resolv.conf --cluster-dns=10.96.0.10";
        let shadowed = |fixture: &str, key: &str| {
            let mut raw = crate::testing::rules_fixture(fixture);
            crate::testing::replace_in_file(
                &mut raw,
                "/var/lib/kubelet/kubeadm-flags.env",
                "registry.k8s.io/pause:3.9\"",
                &format!("registry.k8s.io/pause:3.9 {flags}\""),
            );
            let cmdline = raw.files.keys().find(|p| p.ends_with("/cmdline")).cloned();
            let cmdline = cmdline.expect("a running kubelet");
            let argv = crate::testing::text(&raw, &cmdline).replace(
                "pause:3.9\0",
                &format!("pause:3.9\0{}\0", flags.replace(' ', "\0")),
            );
            raw.file(&cmdline, FileState::Present, Some(argv.as_bytes()));
            let dropin = "/etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf";
            let text = crate::testing::text(&raw, dropin);
            raw.file(
                dropin,
                FileState::Present,
                Some(format!("{text}clusterDNS:\n- 10.96.0.99\n").as_bytes()),
            );
            let plan = plan_raw(&raw, "{}", &unavailable, "").hosts.remove(0);
            let written = |wanted: &str| {
                plan.changes.iter().find_map(|c| match c {
                    Change::WriteFile { path, content, .. } if path == wanted => {
                        Some(content.clone())
                    }
                    _ => None,
                })
            };
            let env = written("/var/lib/kubelet/kubeadm-flags.env").expect("flags removed");
            assert!(
                !env.contains("--resolv-conf") && !env.contains("--cluster-dns"),
                "{env}"
            );
            let kept = written(dropin).unwrap_or_else(|| panic!("{fixture}: {plan:#?}"));
            assert!(
                kept.contains(&format!("{key}: /run/systemd/resolve/resolv.conf\n"))
                    && kept.contains("clusterDNS:\n- 10.96.0.10\n"),
                "{fixture}: {kept}"
            );
            // Under resolvConf too, which a kubelet upgraded to 1.32 reads there.
            assert!(
                kept.contains("resolvConf: /run/systemd/resolve/resolv.conf\n"),
                "{fixture}: {kept}"
            );
            assert!(
                written("/var/lib/kubelet/config.yaml").is_none(),
                "{plan:#?}"
            );
            let facts = NodeFacts::from_raw("node1", &raw);
            let diagnosis = crate::diagnose::diagnose_host(&Host::new("node1"), &facts);
            let shadow = diagnosis
                .findings()
                .find(|f| f.id == "DNS-KUBELET-FLAG-SHADOW")
                .expect("the flags shadow the drop-in");
            assert!(
                shadow.remediation.contains(&format!(
                    "keep the value in {dropin} (the --config-dir drop-in that sets it"
                )),
                "{}",
                shadow.remediation
            );
        };
        shadowed(
            "DNS-KUBELET-LOOPBACK/kubeadm-1.33-config-dir-dropin",
            "resolvConf",
        );
        // Kubelet 1.28 to 1.31 read a drop-in's resolvConf under the internal spelling.
        shadowed(
            "DNS-KUBELET-LOOPBACK/kubeadm-1.31-config-dir-resolverconfig",
            "resolverConfig",
        );
    }
}
