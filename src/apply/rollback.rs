//! `dnsfix rollback RUN_ID`: undo what an apply run wrote. On each host where the run
//! wrote something, one exec restores the run's backups from its manifest, newest first,
//! each only while the file (or sysctl) is still exactly what the run left (compare-and-
//! swap again), then the same handlers run with the same health gates. Where it removed a
//! file the inventory still gives the host as kube_resolv_conf, a gather over the same
//! session reads the node's OS, whose Kubespray vars may set their own ([`DistroVars`]).

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::{
    ApplyOptions, HostOutcome, HostResult, NodeScript, ScriptEnd, Step, StepOutcome, outcome_word,
    run_node_script, script,
};
use crate::events::{Event, EventSink};
use crate::inventory::Host;
use crate::transport::{Session, Target, Transport};

/// The steps of `result` that wrote on its host (or took over what an interrupted run
/// wrote).
pub fn written(result: &HostResult) -> impl Iterator<Item = &Step> {
    result
        .steps
        .iter()
        .filter(|s| matches!(s.outcome, StepOutcome::Ok | StepOutcome::Adopted))
}

/// The word for a host's rollback outcome, as the report and the run's last line print it
/// ("2 hosts in 3.10s: 1 rolled back, 1 nothing to roll back").
pub fn rollback_word(outcome: HostOutcome) -> &'static str {
    match outcome {
        HostOutcome::Applied => "rolled back",
        HostOutcome::Unchanged => "nothing to roll back",
        other => outcome_word(other),
    }
}

/// Did `result` write anything on its host?
pub fn wrote(result: &HostResult) -> bool {
    written(result).next().is_some()
}

/// May the run have written on this host? Also true for a run that was interrupted
/// before it recorded results: the node's manifest then says what was written.
pub fn may_have_written(result: &HostResult) -> bool {
    wrote(result)
        || (result.outcome == HostOutcome::Pending && !result.planned.is_empty())
        || (result.outcome == HostOutcome::Failed && !result.planned.is_empty())
}

/// The file in dnsfix's own directory (`/etc/dnsfix/resolv.conf`) that this rollback
/// (`result`) removed from `host` and that its inventory still gives it as kube_resolv_conf:
/// the next Kubespray run hands the kubelet a resolvConf that is not there, unless
/// Kubespray's vars for the node's OS set their own ([`DistroVars`]).
pub fn removed_kube_resolv_conf<'h>(host: &'h Host, result: &HostResult) -> Option<&'h str> {
    let value = host.var_str("kube_resolv_conf")?;
    let removed = value.starts_with("/etc/dnsfix/")
        && result
            .steps
            .iter()
            .any(|s| s.target == value && s.outcome == StepOutcome::Removed);
    removed.then_some(value)
}

/// What Kubespray's vars for a host's OS make of the kube_resolv_conf its inventory gives,
/// where that names a file the rollback removed ([`removed_kube_resolv_conf`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DistroVars {
    /// Not read: the inventory names no file the rollback removed.
    NotRead,
    /// The node's facts could not be gathered after the rollback: why.
    Unknown(String),
    /// From the node's facts gathered after the rollback: the vars file that sets
    /// kube_resolv_conf over the inventory's, or none (another OS, not a Kubespray node),
    /// by the plan's own rule ([`crate::plan::context::kubespray_distro_vars`]).
    Read(Option<crate::plan::context::KubesprayDistroVars>),
}

/// One host's rollback: its result, and what its OS's Kubespray vars make of its inventory.
#[derive(Debug, Clone)]
pub struct RolledBack {
    pub result: HostResult,
    pub distro_vars: DistroVars,
}

/// Reads [`DistroVars`] from the node's facts, gathered over `session` after its rollback:
/// one exec more, on a host whose inventory names a file the rollback removed.
async fn read_distro_vars(session: &mut Session, target: &Target) -> DistroVars {
    match crate::gather::gather_session(session, target, &[]).await {
        Ok(facts) => DistroVars::Read(crate::plan::context::kubespray_distro_vars(&facts)),
        Err(e) => DistroVars::Unknown(format!("{}: {e}", e.kind())),
    }
}

/// Rolls back run `run_id` (its apply results in `applied`) on `hosts`.
pub async fn rollback(
    run_id: &str,
    applied: &[HostResult],
    hosts: &HashMap<String, Host>,
    transport: Arc<Transport>,
    options: &ApplyOptions,
    sink: Arc<dyn EventSink>,
) -> Vec<RolledBack> {
    let permits = Arc::new(Semaphore::new(options.forks.max(1)));
    let mut tasks = JoinSet::new();
    let mut results: HashMap<String, RolledBack> = HashMap::new();
    let done = |result: HostResult| RolledBack {
        result,
        distro_vars: DistroVars::NotRead,
    };
    for (index, result) in applied.iter().enumerate() {
        let mut mine = result.clone();
        mine.steps.clear();
        mine.handlers.clear();
        mine.verified = None;
        mine.error = None;
        mine.stale.clear();
        // What the plan could not make there is the run's to say, not its rollback's.
        mine.blocked.clear();
        // The DNS pods the run recreated are not put back: the report must not show them
        // again as this rollback's.
        mine.pods.clear();
        mine.notes.clear();
        mine.pods_kept = false;
        if !may_have_written(result) {
            mine.outcome = HostOutcome::NothingPlanned;
            results.insert(result.host.clone(), done(mine));
            continue;
        }
        let Some(host) = hosts.get(&result.host).cloned() else {
            mine.outcome = HostOutcome::Failed;
            mine.error = Some("the host is not in the inventory".into());
            results.insert(result.host.clone(), done(mine));
            continue;
        };
        let permits = Arc::clone(&permits);
        let transport = Arc::clone(&transport);
        let sink = Arc::clone(&sink);
        let run_id = run_id.to_string();
        let timeout = options.health_timeout.as_secs();
        let stop = options.stop.clone();
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await;
            let mut distro_vars = DistroVars::NotRead;
            if stop.requested() {
                mine.outcome = HostOutcome::Untouched;
                mine.error = Some(super::STOPPED.into());
                return (index, mine, distro_vars);
            }
            let target = Target {
                host: host.name.clone(),
                connection: host.connection(),
            };
            match transport.connect(&target).await {
                Ok(mut session) => {
                    if let Err(e) = undo(&mut session, &target, &run_id, timeout, &mut mine).await {
                        mine.outcome = HostOutcome::Failed;
                        mine.error = Some(e);
                    }
                    // A stopped rollback ends as soon as it can: the OS is then not known.
                    if removed_kube_resolv_conf(&host, &mine).is_some() && !stop.requested() {
                        distro_vars = read_distro_vars(&mut session, &target).await;
                    }
                    session.close().await;
                }
                Err(e) => {
                    mine.outcome = HostOutcome::Failed;
                    mine.error = Some(super::unreachable(&e));
                }
            }
            sink.event(Event::HostDone {
                host: host.name.clone(),
                message: match &mine.error {
                    Some(error) => format!("{}: {error}", rollback_word(mine.outcome)),
                    None => rollback_word(mine.outcome).to_owned(),
                },
            });
            (index, mine, distro_vars)
        });
    }
    while let Some(joined) = tasks.join_next().await {
        if let Ok((_, result, distro_vars)) = joined {
            results.insert(
                result.host.clone(),
                RolledBack {
                    result,
                    distro_vars,
                },
            );
        }
    }
    applied
        .iter()
        .filter_map(|r| results.remove(&r.host))
        .collect()
}

async fn undo(
    session: &mut Session,
    target: &Target,
    run_id: &str,
    timeout: u64,
    result: &mut HostResult,
) -> Result<(), String> {
    let boundary = crate::node_script::Boundary::fresh();
    let text = script::rollback_script(&boundary, run_id, &result.planned_handlers, timeout)?;
    let handlers = result.planned_handlers.clone();
    let modules: Vec<String> = result
        .planned
        .iter()
        .filter_map(|change| match change {
            crate::plan::Change::LoadModule { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect();
    let node_script = NodeScript {
        text,
        boundary,
        what: "rollback",
        health_timeout: timeout,
    };
    let end = run_node_script(
        session,
        target,
        &node_script,
        &handlers,
        result,
        |outcome, record| Step {
            kind: if record.args.starts_with('/') {
                "write"
            } else if modules.contains(&record.args) {
                "module"
            } else {
                "sysctl"
            }
            .into(),
            target: record.args.clone(),
            outcome,
            message: record.text(),
        },
    )
    .await
    .map_err(|e| format!("{e}; roll back again"))?;
    match end {
        ScriptEnd::Locked | ScriptEnd::Nothing => return Ok(()),
        ScriptEnd::Failed(why) => return Err(why),
        ScriptEnd::Done => {}
    }
    // Handlers that ran over files already restored finish an earlier, cut-off rollback.
    let restored = !result.handlers.is_empty()
        || result
            .steps
            .iter()
            .any(|s| matches!(s.outcome, StepOutcome::Restored | StepOutcome::Removed));
    result.outcome = if restored {
        HostOutcome::Applied
    } else {
        HostOutcome::Unchanged
    };
    // A file or sysctl changed since the run keeps the run's change too: not rolled back,
    // whatever else was (a module dnsfix loaded stays loaded by design).
    let kept = result
        .steps
        .iter()
        .filter(|s| s.outcome == StepOutcome::Kept && s.kind != "module")
        .count();
    if kept > 0 {
        return Err(format!(
            "{kept} of run {run_id}'s changes left in place (below): one changed since the \
             run is undone by hand (from the node's /var/lib/dnsfix/backups/{run_id}/files); \
             one refused where it is (a symlinked directory, a directory others can write, a \
             file mounted over it, an immutable flag: its line says which) by rolling back \
             again once that is undone"
        ));
    }
    Ok(())
}
