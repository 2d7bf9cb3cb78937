//! dnsfix: find and fix the node-level misconfigurations that break DNS in Kubernetes.
//!
//! The pipeline is inventory → connect → gather → (diagnose → plan → apply). Each stage is
//! a module with one job; only `transport` and the orchestrator in `gather` are async.
//! The library never prints results itself except through [`run`], which renders them.

pub mod cli;
pub mod config;
pub mod diagnose;
pub mod edit;
pub mod error;
pub mod facts;
pub mod gather;
pub mod inventory;
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
}

/// Runs one command and returns its exit code.
pub fn run(config: Config) -> Result<u8, Error> {
    if let Action::Explain { id } = &config.action {
        let text = report::explain::render(id.as_deref());
        std::io::stdout().lock().write_all(text.as_bytes())?;
        return Ok(exit::OK);
    }
    let inventory = match &config.inventory {
        Some(path) => Inventory::load(path)?,
        None => Inventory::local(),
    };
    let hosts = inventory.select(config.limit.as_deref())?;
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

    let outcomes = runtime.block_on(gather::gather(
        &hosts,
        transport,
        config.forks,
        Arc::clone(&sink),
    ));
    sink.finish();
    let unreachable = outcomes.iter().any(|o| o.result.is_err());
    let (rendered, code) = match config.action {
        Action::Facts | Action::Explain { .. } => {
            let rendered = match config.format {
                Format::Json => report::facts::json(&outcomes, inventory.path()),
                Format::Text | Format::Junit => report::facts::text(&outcomes),
            };
            (rendered, exit::OK)
        }
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
                .any(|f| f.severity >= fail_on);
            (rendered, if failing { exit::FINDINGS } else { exit::OK })
        }
    };
    std::io::stdout().lock().write_all(rendered.as_bytes())?;
    // A host that could not be checked takes precedence over findings.
    Ok(if unreachable { exit::UNREACHABLE } else { code })
}
