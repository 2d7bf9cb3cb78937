//! The top-level error: what `main` renders and maps to an exit code. Errors about one
//! host are not here: they are data in the report, and never stop the other hosts.
//!
//! Every variant exits 1 (DESIGN.md: bad input or internal errors), but each says what
//! kind of problem it is: [`Error::Usage`] is only for flags and arguments that must
//! change, not for files that could not be read or a plan that no longer fits.

use std::path::PathBuf;

use crate::inventory::InventoryError;
use crate::playbook::PlaybookError;
use crate::transport::TransportError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad flags or arguments, found before any work starts; or a question the run must
    /// ask and cannot (no terminal, no `--yes`).
    #[error("{0}")]
    Usage(String),
    /// An inventory that cannot be read, or a `--limit` that selects nothing in it (or in
    /// a saved plan's hosts, for `show`): the latter is no fault of the inventory.
    #[error("{what}{inner}", what = if .0.is_limit() { "" } else { "bad inventory: " }, inner = .0)]
    Inventory(#[from] InventoryError),
    #[error("bad playbook: {0}")]
    Playbook(#[from] PlaybookError),
    /// A saved plan that cannot be read, or is not one this dnsfix applies.
    #[error("{path}: {reason}")]
    SavedPlan { path: PathBuf, reason: String },
    /// A plan refused whole, before any host is touched: it no longer fits the inventory
    /// or the playbooks loaded now.
    #[error("{0}")]
    PlanRefused(String),
    /// A run record that cannot be read (rollback) or written before applying.
    #[error("{0}")]
    RunRecord(String),
    #[error("cannot write the plan to {path}: {source}")]
    SavePlan {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write the man page {path}: {source}")]
    ManPage {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot set up the transport: {0}")]
    Transport(#[from] TransportError),
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
}
