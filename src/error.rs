//! The top-level error: what `main` renders and maps to an exit code. Errors about one
//! host are not here: they are data in the report, and never stop the other hosts.

use crate::inventory::InventoryError;
use crate::playbook::PlaybookError;
use crate::transport::TransportError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Usage(String),
    #[error("bad inventory: {0}")]
    Inventory(#[from] InventoryError),
    #[error("bad playbook: {0}")]
    Playbook(#[from] PlaybookError),
    #[error("cannot write the plan to {path}: {source}")]
    SavePlan {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("cannot set up the transport: {0}")]
    Transport(#[from] TransportError),
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
}
