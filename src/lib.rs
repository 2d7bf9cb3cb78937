//! dnsfix: find and fix the node-level misconfigurations that break DNS in Kubernetes.
//!
//! The pipeline is inventory → connect → gather → (diagnose → plan → apply). Each stage is
//! a module with one job; only `transport` and the orchestrator in `gather` are async.
//! The library never prints results itself except through [`run`], which renders them.

pub mod apply;
pub mod cli;
pub mod commands;
pub mod config;
pub mod diagnose;
pub mod edit;
pub mod error;
pub mod facts;
pub mod gather;
pub mod inventory;
pub mod plan;
pub mod playbook;
pub mod report;
#[cfg(test)]
mod testing;
pub mod transport;

use std::io::Write;
use std::sync::Arc;

pub use config::{Action, Config, Format};
pub use error::Error;

use inventory::Inventory;
use transport::Transport;

/// Exit codes users and scripts rely on (DESIGN.md).
pub mod exit {
    pub const OK: u8 = 0;
    pub const BAD_INPUT: u8 = 1;
    pub const FINDINGS: u8 = 2;
    pub const UNREACHABLE: u8 = 3;
    pub const STALE: u8 = 4;
}

/// Runs one command and returns its exit code.
pub fn run(config: Config) -> Result<u8, Error> {
    if let Action::Explain { id } = &config.action {
        let text = report::explain::render(id.as_deref());
        std::io::stdout().lock().write_all(text.as_bytes())?;
        return Ok(exit::OK);
    }
    // Playbooks are checked before any host is contacted: a typo is exit 1, not a fleet run.
    // A saved plan is checked against the playbooks loaded now, so apply loads them too.
    let playbooks = match &config.action {
        Action::Plan { playbooks, .. } | Action::Apply { playbooks, .. } => {
            Some(playbook::Playbooks::load(playbooks.as_deref())?)
        }
        Action::Rollback { .. } => Some(playbook::Playbooks::load(None)?),
        _ => None,
    };
    // A saved plan is read before any host is contacted, too.
    let saved_plan = match &config.action {
        Action::Apply {
            plan: Some(path), ..
        } => Some(commands::load_plan(path)?),
        _ => None,
    };
    let inventory = match &config.inventory {
        Some(path) => Inventory::load(path)?,
        None => Inventory::local(),
    };
    let hosts = inventory.select(config.limit.as_deref())?;
    if config.action == Action::Inventory {
        let text = match config.format {
            Format::Json => report::inventory::json(&inventory, &hosts),
            Format::Text | Format::Junit => report::inventory::text(&inventory, &hosts),
        };
        std::io::stdout()
            .lock()
            .write_all(report::terminal_text(&text).as_bytes())?;
        return Ok(exit::OK);
    }
    let transport = Arc::new(Transport::new(config.ssh.clone())?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(Error::Runtime)?;
    let sink: Arc<dyn report::EventSink> =
        Arc::from(report::sink_for(hosts.len(), config.progress));
    for warning in inventory.warnings() {
        sink.event(report::Event::Warning {
            message: warning.to_string(),
        });
    }

    let shipped;
    let loaded = match &playbooks {
        Some(p) => p,
        None => {
            shipped = playbook::Playbooks::load(None)?;
            &shipped
        }
    };
    let apply_run =
        |options: apply::ApplyOptions, update_inventory: bool, plan_file| commands::ApplyRun {
            inventory: &inventory,
            hosts: &hosts,
            transport: Arc::clone(&transport),
            runtime: &runtime,
            options,
            update_inventory,
            format: config.format,
            progress: config.progress,
            plan_file,
            playbooks: loaded,
        };
    let apply_options = |serial, max_fail_percentage, health_timeout| apply::ApplyOptions {
        serial,
        max_fail_percentage,
        health_timeout,
        forks: config.forks,
    };
    match &config.action {
        Action::Rollback {
            run_id,
            yes,
            health_timeout,
        } => {
            let options = commands::rollback_options(config.forks, *health_timeout);
            return commands::rollback_run(&apply_run(options, false, None), run_id, *yes);
        }
        Action::Apply {
            plan: Some(path),
            serial,
            max_fail_percentage,
            health_timeout,
            update_inventory,
            ..
        } => {
            let options = apply_options(*serial, *max_fail_percentage, *health_timeout);
            let run = apply_run(options, *update_inventory, Some(path.as_path()));
            let plan = saved_plan
                .as_ref()
                .ok_or_else(|| Error::Usage("internal: the saved plan was not read".into()))?;
            return commands::apply_plan(&run, plan, false);
        }
        _ => {}
    }

    // What the playbooks may write is read too, so the plan knows what it replaces.
    let extra = playbooks
        .as_ref()
        .map(|p| p.paths_to_gather())
        .unwrap_or_default();
    let outcomes = runtime.block_on(gather::gather(
        &hosts,
        Arc::clone(&transport),
        config.forks,
        Arc::clone(&sink),
        Arc::new(extra),
    ));
    sink.finish();
    let unreachable = outcomes.iter().any(|o| o.result.is_err());
    // `plan` and a fresh `apply` plan the same way.
    let fresh_plan = playbooks.as_ref().map(|playbooks| {
        plan::build(
            &inventory,
            config.limit.as_deref(),
            &hosts,
            &outcomes,
            playbooks,
        )
    });
    let (rendered, code) = match &config.action {
        Action::Facts | Action::Explain { .. } | Action::Inventory => {
            let rendered = match config.format {
                Format::Json => report::facts::json(&outcomes, inventory.path()),
                Format::Text | Format::Junit => report::facts::text(&outcomes),
            };
            (rendered, exit::OK)
        }
        Action::Plan { output, colour, .. } => {
            let plan =
                fresh_plan.ok_or_else(|| Error::Usage("internal: no plan was made".into()))?;
            if let Some(path) = output {
                let text = plan::render::json(&plan);
                save(path, &text)?;
                // The reviewer compares this with what `apply` prints for the file it applies.
                eprintln!(
                    "plan saved to {} (sha256 {})",
                    path.display(),
                    facts::raw::sha256_hex(text.as_bytes())
                );
            }
            let rendered = match config.format {
                Format::Json => plan::render::json(&plan),
                Format::Text | Format::Junit => plan::render::text(&plan, *colour),
            };
            (rendered, plan::exit_code(&plan))
        }
        Action::Apply {
            yes,
            serial,
            max_fail_percentage,
            health_timeout,
            update_inventory,
            colour,
            ..
        } => {
            let plan =
                fresh_plan.ok_or_else(|| Error::Usage("internal: no plan was made".into()))?;
            let code = plan::exit_code(&plan);
            let changing = plan.hosts.iter().filter(|h| !h.changes.is_empty()).count();
            let mut out = std::io::stdout().lock();
            if config.format == Format::Text {
                out.write_all(plan::render::text(&plan, *colour).as_bytes())?;
            }
            if changing == 0 && (plan.inventory_changes.is_empty() || !*update_inventory) {
                writeln!(out, "nothing to apply")?;
                return Ok(if unreachable || code == exit::UNREACHABLE {
                    exit::UNREACHABLE
                } else {
                    exit::OK
                });
            }
            drop(out);
            let question = format!("Apply these changes to {changing} host(s)?");
            if !*yes && !commands::confirm(&question)? {
                eprintln!("nothing applied");
                return Ok(exit::BAD_INPUT);
            }
            let options = apply_options(*serial, *max_fail_percentage, *health_timeout);
            let run = apply_run(options, *update_inventory, None);
            return commands::apply_plan(&run, &plan, unreachable || code == exit::UNREACHABLE);
        }
        Action::Rollback { .. } => unreachable!("handled above"),
        Action::Check { fail_on } => {
            let gathered: Vec<(&inventory::Host, &facts::NodeFacts)> = hosts
                .iter()
                .zip(&outcomes)
                .filter_map(|(h, o)| o.result.as_ref().ok().map(|f| (*h, f)))
                .collect();
            let diagnoses = diagnose::diagnose(&gathered);
            let by_host: std::collections::HashMap<&str, &diagnose::HostDiagnosis> =
                diagnoses.iter().map(|d| (d.host.as_str(), d)).collect();
            let checked: Vec<report::check::Checked> = outcomes
                .iter()
                .filter_map(|o| match &o.result {
                    Ok(_) => by_host
                        .get(o.host.as_str())
                        .map(|d| report::check::Checked::Diagnosed(d)),
                    Err(error) => Some(report::check::Checked::Failed {
                        host: &o.host,
                        error,
                    }),
                })
                .collect();
            let rendered = match config.format {
                Format::Text => report::check::text(&checked),
                Format::Json => report::check::json(&checked, inventory.path()),
                Format::Junit => report::check::junit(&checked),
            };
            let failing = diagnoses
                .iter()
                .flat_map(|d| d.findings())
                .any(|f| f.severity >= *fail_on);
            (rendered, if failing { exit::FINDINGS } else { exit::OK })
        }
    };
    std::io::stdout()
        .lock()
        .write_all(report::terminal_text(&rendered).as_bytes())?;
    // A host that could not be checked takes precedence over findings.
    Ok(if unreachable { exit::UNREACHABLE } else { code })
}

/// Writes the saved plan to `path` atomically (temp file, fsync, rename), so an
/// interrupted run never leaves half a plan for someone to apply.
fn save(path: &std::path::Path, text: &str) -> Result<(), Error> {
    apply::record::write_atomic(path, text.as_bytes()).map_err(|source| Error::SavePlan {
        path: path.to_path_buf(),
        source,
    })
}
