//! [`InventoryWarning`]: something in the inventory that Ansible accepts and dnsfix accepts too,
//! but that probably does not mean what its author thinks (a shadowed `group_vars` file, an
//! INI `:vars` value that swallowed a trailing comment, ...). The inventory never prints them;
//! callers decide whether to show them.

use std::fmt;
use std::path::PathBuf;

use super::error::Location;

/// One warning, located like a parse error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InventoryWarning {
    pub path: PathBuf,
    /// 1-based, when the warning is about one line.
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for InventoryWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let location = Location {
            path: &self.path,
            line: self.line,
            column: None,
        };
        write!(f, "{location}: {}", self.message)
    }
}
