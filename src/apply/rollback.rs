//! `dnsfix rollback RUN_ID`: undo what an apply run wrote. On each host where the run
//! wrote something, one exec restores the run's backups from its manifest, newest first,
//! each only while the file (or sysctl) is still exactly what the run left (compare-and-
//! swap again), then the same handlers run with the same health gates.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::{ApplyOptions, HandlerResult, HostOutcome, HostResult, Step, outcome_word, script};
use crate::gather::run_as_root;
use crate::inventory::Host;
use crate::report::{Event, EventSink};
use crate::transport::{Session, Target, Transport};

/// Did `result` write anything on its host?
pub fn wrote(result: &HostResult) -> bool {
    result.steps.iter().any(|s| s.outcome == "ok")
}

/// Rolls back run `run_id` (its apply results in `applied`) on `hosts`.
pub async fn rollback(
    run_id: &str,
    applied: &[HostResult],
    hosts: &HashMap<String, Host>,
    transport: Arc<Transport>,
    options: &ApplyOptions,
    sink: Arc<dyn EventSink>,
) -> Vec<HostResult> {
    let permits = Arc::new(Semaphore::new(options.forks.max(1)));
    let mut tasks = JoinSet::new();
    let mut results: HashMap<String, HostResult> = HashMap::new();
    for (index, result) in applied.iter().enumerate() {
        let mut mine = result.clone();
        mine.steps.clear();
        mine.handlers.clear();
        mine.verified = None;
        mine.error = None;
        mine.stale.clear();
        if !wrote(result) {
            mine.outcome = HostOutcome::NothingPlanned;
            results.insert(result.host.clone(), mine);
            continue;
        }
        let Some(host) = hosts.get(&result.host).cloned() else {
            mine.outcome = HostOutcome::Failed;
            mine.error = Some("the host is not in the inventory".into());
            results.insert(result.host.clone(), mine);
            continue;
        };
        let permits = Arc::clone(&permits);
        let transport = Arc::clone(&transport);
        let sink = Arc::clone(&sink);
        let run_id = run_id.to_string();
        let timeout = options.health_timeout.as_secs();
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await;
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
                    session.close().await;
                }
                Err(e) => {
                    mine.outcome = HostOutcome::Failed;
                    mine.error = Some(format!("{}: {e}", e.kind()));
                }
            }
            sink.event(Event::HostDone {
                host: host.name.clone(),
                message: match &mine.error {
                    Some(error) => format!("rollback {}: {error}", outcome_word(mine.outcome)),
                    None => format!("rollback {}", outcome_word(mine.outcome)),
                },
            });
            (index, mine)
        });
    }
    while let Some(joined) = tasks.join_next().await {
        if let Ok((_, result)) = joined {
            results.insert(result.host.clone(), result);
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
    let boundary = script::boundary();
    let text = script::rollback_script(&boundary, run_id)?;
    let output = run_as_root(session, target, &text)
        .await
        .map_err(|e| format!("rollback: {}: {e}", e.kind()))?;
    let records = script::records(&String::from_utf8_lossy(&output.stdout), &boundary);
    if records.first().map(|r| r.kind.as_str()) != Some("begin") {
        return Err(format!(
            "the rollback script did not run: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let mut finished = false;
    let mut failure = None;
    for record in &records[1..] {
        match record.kind.as_str() {
            "done" => finished = true,
            "failed" => failure = Some(record.body.clone()),
            "locked" => {
                result.outcome = HostOutcome::Locked;
                result.error = Some(format!("another apply is running here: {}", record.args));
                return Ok(());
            }
            kind => result.steps.push(Step {
                kind: if record.args.starts_with('/') {
                    "write"
                } else {
                    "sysctl"
                }
                .into(),
                target: record.args.clone(),
                outcome: kind.to_string(),
                message: record.body.clone(),
            }),
        }
    }
    if !finished {
        let errors: Vec<String> = result
            .steps
            .iter()
            .filter(|s| s.outcome == "error")
            .map(|s| format!("{}: {}", s.target, s.message))
            .collect();
        return Err(match (errors.is_empty(), failure) {
            (false, _) => errors.join("; "),
            (true, Some(why)) if !why.is_empty() => why,
            _ => "the rollback script stopped early".to_string(),
        });
    }
    let restored = result
        .steps
        .iter()
        .any(|s| s.outcome == "restored" || s.outcome == "removed");
    result.outcome = if restored {
        HostOutcome::Applied
    } else {
        HostOutcome::Unchanged
    };
    if !restored {
        return Ok(());
    }
    for handler in result.planned_handlers.clone() {
        let boundary = script::boundary();
        let text = script::handler_script(&boundary, &handler, timeout)?;
        let output = run_as_root(session, target, &text)
            .await
            .map_err(|e| format!("{} {}: {}: {e}", handler.action, handler.unit, e.kind()))?;
        let records = script::records(&String::from_utf8_lossy(&output.stdout), &boundary);
        let healthy = records.iter().any(|r| r.kind == "healthy");
        let message = records
            .iter()
            .find(|r| r.kind == "unhealthy")
            .map(|r| r.body.clone())
            .unwrap_or_default();
        result.handlers.push(HandlerResult {
            unit: handler.unit.clone(),
            action: handler.action.clone(),
            healthy,
            message: message.clone(),
        });
        if !healthy {
            return Err(format!(
                "{} did not come back healthy: {message}",
                handler.unit
            ));
        }
    }
    Ok(())
}
