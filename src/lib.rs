//! dnsfix: find and fix the node-level misconfigurations that break DNS in Kubernetes.
//!
//! The pipeline is inventory → connect → gather → (diagnose → plan → apply). Each stage is
//! a module with one job. Only `transport` and the orchestrators that fan out over hosts,
//! in `gather` and `apply` (apply and rollback), are async; the commands drive them on
//! one tokio runtime with `block_on`. Parsing, diagnosis, planning and editing are pure
//! functions of their inputs (planning also reads the local inventory files it edits).
//!
//! [`run`] dispatches to one module per command under [`commands`]; only that layer
//! prints results, asks questions and decides exit codes. The engine reports progress
//! as events (`report::Event`) and never prints.

pub mod apply;
pub mod cli;
pub mod cluster;
pub mod commands;
pub mod config;
pub mod diagnose;
pub mod edit;
pub mod error;
pub mod events;
pub mod facts;
pub mod gather;
pub mod inventory;
pub mod node_script;
pub mod plan;
pub mod playbook;
pub mod report;
#[cfg(test)]
mod testing;
pub mod text;
pub mod transport;
pub mod util;
pub mod verify;

pub use commands::exit;
pub use config::{Action, Config, Format};
pub use error::Error;

/// Runs one command and returns its exit code: what each command does, and in what
/// order, is in its own module under [`commands`].
pub fn run(config: Config) -> Result<u8, Error> {
    use commands::{
        apply, check, completions, explain, facts, inventory, man, plan, rollback, show, verify,
    };
    match &config.action {
        Action::Explain { id } => explain::run(id.as_deref()),
        Action::Completions { shell } => completions::run(*shell),
        Action::Man { dir } => man::run(dir.as_deref()),
        Action::Inventory => inventory::run(&config),
        Action::Facts => facts::run(&config),
        Action::Check { fail_on } => check::run(&config, *fail_on),
        Action::Plan(args) => plan::run(&config, args),
        Action::Show(args) => show::run(&config, args),
        Action::Apply(args) => apply::run(&config, args),
        Action::Rollback(args) => rollback::run(&config, args),
        Action::Verify(args) => verify::run(&config, args),
    }
}
