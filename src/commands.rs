//! The `apply` and `rollback` commands: what surrounds the executor in [`crate::apply`]
//! (loading or making the plan, asking, recording the run, the local inventory update,
//! the report and the exit code).

use std::collections::HashMap;
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::apply::record::{self, InventoryUpdate, RunRecord};
use crate::apply::{self, ApplyOptions, HostOutcome, HostResult};
use crate::error::Error;
use crate::facts::raw::sha256_hex;
use crate::inventory::{Host, Inventory};
use crate::plan::model::{InventoryChange, PLAN_FORMAT_VERSION, Plan};
use crate::report::{self, EventSink};
use crate::transport::Transport;
use crate::{Format, exit};

/// Everything apply needs besides the plan.
#[derive(Debug)]
pub struct ApplyRun<'a> {
    pub inventory: &'a Inventory,
    pub hosts: &'a [&'a Host],
    pub transport: Arc<Transport>,
    pub runtime: &'a tokio::runtime::Runtime,
    pub options: ApplyOptions,
    pub update_inventory: bool,
    pub format: Format,
    pub progress: bool,
    pub plan_file: Option<&'a Path>,
    /// The playbooks loaded for this run: the shipped ones and `--playbooks DIR`.
    pub playbooks: &'a crate::playbook::Playbooks,
}

/// Reads a saved plan and checks it is one this dnsfix can apply.
pub fn load_plan(path: &Path) -> Result<Plan, Error> {
    let bad = |reason: String| Error::SavedPlan {
        path: path.to_path_buf(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    // What the reviewer approved is this exact file: say which one is applied.
    eprintln!(
        "applying {} (sha256 {})",
        path.display(),
        sha256_hex(text.as_bytes())
    );
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("not a saved plan: {e}")))?;
    if value.get("kind").and_then(|k| k.as_str()) != Some("dnsfix-plan") {
        return Err(bad(
            "not a saved plan (write one with `dnsfix plan -o FILE`)".into(),
        ));
    }
    let version = value.get("format_version").and_then(|v| v.as_u64());
    if version != Some(u64::from(PLAN_FORMAT_VERSION)) {
        return Err(bad(format!(
            "plan format version {}, this dnsfix applies version {PLAN_FORMAT_VERSION}",
            version.map_or("unknown".into(), |v| v.to_string())
        )));
    }
    serde_json::from_value(value).map_err(|e| bad(format!("not a valid saved plan: {e}")))
}

/// The playbooks a plan was made with must be the ones loaded now, byte for byte, and every
/// change must come from one of them: what a change may touch is judged by the loaded
/// playbooks' `allow:`, never by anything in the plan file.
fn verify_playbooks(plan: &Plan, loaded: &crate::playbook::Playbooks) -> Result<(), Error> {
    for recorded in &plan.playbooks {
        match loaded.playbooks.iter().find(|p| p.name == recorded.name) {
            Some(p) if p.sha256 == recorded.sha256 => {}
            Some(p) => {
                return Err(Error::PlanRefused(format!(
                    "the plan was made with playbook {} from {} (sha256 {}), but {} here is different (sha256 {}): plan again, or pass the same --playbooks",
                    recorded.name, recorded.source, recorded.sha256, p.source, p.sha256
                )));
            }
            None => {
                return Err(Error::PlanRefused(format!(
                    "the plan was made with playbook {} from {}, which is not loaded: pass --playbooks with the site playbooks the plan was made with",
                    recorded.name, recorded.source
                )));
            }
        }
    }
    for host in &plan.hosts {
        for reason in host.changes.iter().flat_map(|c| c.reasons()) {
            if !plan.playbooks.iter().any(|p| p.name == reason.playbook) {
                return Err(Error::PlanRefused(format!(
                    "host {}: a change is attributed to playbook {}, which the plan does not list: refused",
                    host.host, reason.playbook
                )));
            }
        }
    }
    Ok(())
}

/// Asks "y/N" on the terminal. Without a terminal nothing is asked and the answer is no.
pub fn confirm(question: &str) -> Result<bool, Error> {
    if !std::io::stdin().is_terminal() {
        return Err(Error::Usage(
            "not applying without confirmation: there is no terminal to ask on; review the \
             plan and pass --yes, or apply a saved plan (`dnsfix plan -o plan.json`, then \
             `dnsfix apply plan.json`)"
                .into(),
        ));
    }
    eprint!("{question} [y/N] ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes"))
}

/// Applies `plan` and prints the report. Returns the exit code.
pub fn apply_plan(run: &ApplyRun, plan: &Plan, planned_unreachable: bool) -> Result<u8, Error> {
    // A host the plan changes must still be in the inventory: dropping it quietly would
    // report success for a change never made.
    let missing: Vec<&str> = plan
        .hosts
        .iter()
        .filter(|h| !h.changes.is_empty() && run.inventory.host(&h.host).is_none())
        .map(|h| h.host.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(Error::PlanRefused(format!(
            "the plan changes host{} {} that {} not in the inventory {}: nothing was applied",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            if missing.len() == 1 { "is" } else { "are" },
            run.inventory
                .path()
                .map_or("(none)".to_owned(), |p| p.display().to_string())
        )));
    }
    verify_playbooks(plan, run.playbooks)?;
    let selected: Vec<&str> = run.hosts.iter().map(|h| h.name.as_str()).collect();
    let mut plan = plan.clone();
    plan.hosts.retain(|h| selected.contains(&h.host.as_str()));
    if let (Some(saved), Some(path)) = (&plan.inventory, run.inventory.path()) {
        let now = crate::plan::inventory_change::digest(path);
        if now != saved.sha256 {
            eprintln!(
                "warning: the inventory changed since the plan was made ({}); hosts are \
                 reached with its current connection settings",
                saved.path
            );
        }
    }
    let hosts: HashMap<String, Host> = run
        .hosts
        .iter()
        .map(|h| (h.name.clone(), (*h).clone()))
        .collect();
    let run_id = record::new_run_id();
    let started = crate::plan::now_rfc3339();
    let changing = plan.hosts.iter().filter(|h| !h.changes.is_empty()).count();
    // Recorded before any node is touched, so an interrupted run can still be rolled back
    // (the nodes' manifests say what it wrote).
    let mut record = RunRecord {
        kind: "dnsfix-run".into(),
        format_version: record::RUN_FORMAT_VERSION,
        dnsfix_version: env!("CARGO_PKG_VERSION").into(),
        run_id: run_id.clone(),
        command: "apply".into(),
        started,
        finished: String::new(),
        inventory: run.inventory.path().map(|p| p.display().to_string()),
        plan_file: run.plan_file.map(|p| p.display().to_string()),
        plan_created: plan.created.clone(),
        rolls_back: None,
        hosts: plan
            .hosts
            .iter()
            .filter(|h| !h.changes.is_empty())
            .map(|h| HostResult::new(h, HostOutcome::Pending))
            .collect(),
        inventory_updates: Vec::new(),
    };
    if let Err(e) = record::save(&record::state_dir(), &record) {
        return Err(Error::RunRecord(format!(
            "cannot record the run in {} before applying: {e} (set DNSFIX_STATE_DIR to a \
             writable directory)",
            record::state_dir().display()
        )));
    }
    let sink: Arc<dyn EventSink> = Arc::from(report::sink_for(changing, run.progress));
    let results = run.runtime.block_on(apply::apply(
        &plan,
        &run_id,
        &hosts,
        Arc::clone(&run.transport),
        &run.options,
        run.playbooks
            .playbooks
            .iter()
            .map(|p| p.allow.clone())
            .collect(),
        Arc::clone(&sink),
    ));
    sink.finish();

    let inventory_updates = if run.update_inventory {
        plan.inventory_changes
            .iter()
            .map(update_inventory)
            .collect()
    } else {
        Vec::new()
    };
    record.finished = crate::plan::now_rfc3339();
    record.hosts = results;
    record.inventory_updates = inventory_updates;
    let saved = save_record(&record);
    let rendered = match run.format {
        Format::Json => report::pretty_json(&record),
        Format::Text | Format::Junit => report::apply::text(
            &record,
            &plan.inventory_changes,
            run.update_inventory,
            saved.as_deref(),
        ),
    };
    std::io::stdout()
        .lock()
        .write_all(crate::report::terminal_text(&rendered).as_bytes())?;
    Ok(exit_code(
        &record.hosts,
        planned_unreachable,
        &record.inventory_updates,
    ))
}

/// Rolls back run `run_id`. Returns the exit code.
pub fn rollback_run(run: &ApplyRun, run_id: &str, yes: bool) -> Result<u8, Error> {
    let dir = record::state_dir();
    let applied = record::load(&dir, run_id).map_err(Error::RunRecord)?;
    if applied.command != "apply" {
        return Err(Error::RunRecord(format!(
            "run {run_id} was a {}, not an apply",
            applied.command
        )));
    }
    let selected: Vec<&str> = run.hosts.iter().map(|h| h.name.as_str()).collect();
    let targets: Vec<HostResult> = applied
        .hosts
        .iter()
        .filter(|h| selected.contains(&h.host.as_str()))
        .cloned()
        .collect();
    let writing = targets
        .iter()
        .filter(|h| apply::rollback::may_have_written(h))
        .count();
    if writing == 0 {
        println!("run {run_id} wrote nothing on the selected hosts: nothing to roll back");
        return Ok(exit::OK);
    }
    if !yes && !confirm(&format!("Roll back run {run_id} on {writing} host(s)?"))? {
        eprintln!("nothing rolled back");
        return Ok(exit::BAD_INPUT);
    }
    let hosts: HashMap<String, Host> = run
        .hosts
        .iter()
        .map(|h| (h.name.clone(), (*h).clone()))
        .collect();
    let rollback_id = record::new_run_id();
    let started = crate::plan::now_rfc3339();
    let sink: Arc<dyn EventSink> = Arc::from(report::sink_for(writing, run.progress));
    let results = run.runtime.block_on(apply::rollback::rollback(
        run_id,
        &targets,
        &hosts,
        Arc::clone(&run.transport),
        &run.options,
        Arc::clone(&sink),
    ));
    sink.finish();
    let record = RunRecord {
        kind: "dnsfix-run".into(),
        format_version: record::RUN_FORMAT_VERSION,
        dnsfix_version: env!("CARGO_PKG_VERSION").into(),
        run_id: rollback_id,
        command: "rollback".into(),
        started,
        finished: crate::plan::now_rfc3339(),
        inventory: run.inventory.path().map(|p| p.display().to_string()),
        plan_file: applied.plan_file.clone(),
        plan_created: applied.plan_created.clone(),
        rolls_back: Some(run_id.to_string()),
        hosts: results,
        inventory_updates: Vec::new(),
    };
    let saved = save_record(&record);
    let rendered = match run.format {
        Format::Json => report::pretty_json(&record),
        Format::Text | Format::Junit => report::apply::text(&record, &[], false, saved.as_deref()),
    };
    std::io::stdout()
        .lock()
        .write_all(crate::report::terminal_text(&rendered).as_bytes())?;
    Ok(exit_code(&record.hosts, false, &[]))
}

fn save_record(record: &RunRecord) -> Option<std::path::PathBuf> {
    match record::save(&record::state_dir(), record) {
        Ok(path) => Some(path),
        Err(e) => {
            eprintln!(
                "warning: cannot record run {} in {}: {e} (the nodes keep their part under \
                 /var/lib/dnsfix/backups/{})",
                record.run_id,
                record::state_dir().display(),
                record.run_id
            );
            None
        }
    }
}

/// 4 if a host was stale, else 3 if a host failed, was locked, left untouched, or could
/// not be planned or reached, else 0.
fn exit_code(results: &[HostResult], unreachable: bool, updates: &[InventoryUpdate]) -> u8 {
    if results.iter().any(|r| r.outcome == HostOutcome::Stale)
        || updates.iter().any(|u| u.outcome == "stale")
    {
        return exit::STALE;
    }
    let failed = results.iter().any(|r| {
        matches!(
            r.outcome,
            HostOutcome::Failed
                | HostOutcome::Locked
                | HostOutcome::Untouched
                | HostOutcome::NotPlanned
        )
    }) || updates.iter().any(|u| u.outcome == "error");
    if failed || unreachable {
        exit::UNREACHABLE
    } else {
        exit::OK
    }
}

/// Makes one local inventory change, compare-and-swap on the file the plan read.
fn update_inventory(change: &InventoryChange) -> InventoryUpdate {
    let path = Path::new(&change.path);
    let now = std::fs::read(path).ok();
    let now_sha = now.as_deref().map(sha256_hex);
    let outcome = |outcome: &str, message: String| InventoryUpdate {
        path: change.path.clone(),
        outcome: outcome.into(),
        message,
    };
    // A saved plan shows secrets redacted: they come back from the file as it is now.
    let content = if crate::plan::redact::is_redacted(&change.content) {
        let source = now
            .as_deref()
            .map(String::from_utf8_lossy)
            .unwrap_or_default();
        match crate::plan::redact::unredact(&change.content, &source) {
            Ok(c) => c,
            Err(e) => return outcome("stale", format!("{}: {e}; plan again", change.path)),
        }
    } else {
        change.content.clone()
    };
    let target_sha = sha256_hex(content.as_bytes());
    if now_sha.as_deref() == Some(target_sha.as_str()) {
        return outcome("already", String::new());
    }
    if now_sha != change.before_sha256 {
        return outcome(
            "stale",
            "the file changed since the plan; plan again".into(),
        );
    }
    if let Some(dir) = path.parent()
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        return outcome("error", format!("{}: {e}", dir.display()));
    }
    // An inventory file is shared with the team and its tools, like its neighbours.
    match record::write_atomic_mode(path, content.as_bytes(), 0o644) {
        Ok(()) => outcome("written", change.settings.join("; ")),
        Err(e) => outcome("error", e.to_string()),
    }
}

/// Default options for rollback (no batches: it undoes what is there).
pub fn rollback_options(forks: usize, health_timeout: Duration) -> ApplyOptions {
    ApplyOptions {
        serial: None,
        max_fail_percentage: 100,
        health_timeout,
        forks,
    }
}
