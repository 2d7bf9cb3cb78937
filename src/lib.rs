//! dnsfix: find and fix the node-level misconfigurations that break DNS in Kubernetes.
//!
//! The pipeline is inventory → connect → gather → (diagnose → plan → apply). Each stage is
//! a module with one job; only `transport` and the orchestrator in `gather` are async.
//! The library never prints results itself except through [`run`], which renders them.

pub mod cli;
pub mod config;
pub mod error;
pub mod facts;
pub mod gather;
pub mod inventory;
pub mod report;
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

    match config.action {
        Action::Facts => {
            let outcomes = runtime.block_on(gather::gather(
                &hosts,
                transport,
                config.forks,
                Arc::clone(&sink),
            ));
            sink.finish();
            let rendered = match config.format {
                Format::Json => report::facts::json(&outcomes, inventory.path()),
                Format::Text => report::facts::text(&outcomes),
            };
            std::io::stdout().lock().write_all(rendered.as_bytes())?;
            let failed = outcomes.iter().any(|o| o.result.is_err());
            Ok(if failed { exit::UNREACHABLE } else { exit::OK })
        }
    }
}
