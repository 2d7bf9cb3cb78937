//! [`InventoryError`]: everything that can make an inventory unusable, from a missing file to a
//! `--limit` that selects nothing. Parse errors always carry the file and the 1-based line (and
//! column when the parser knows it) plus what was expected there, because the user has to go
//! and fix that exact spot.

use std::fmt;
use std::path::{Path, PathBuf};

/// The largest inventory or vars file dnsfix reads: Kubespray's largest group_vars file
/// is tens of kilobytes.
pub const MAX_FILE: u64 = 16 << 20;

/// Why an inventory could not be loaded, or why a `--limit` could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum InventoryError {
    /// The `-i` path (or a file it names) is not there.
    #[error("inventory {} does not exist", .path.display())]
    NotFound { path: PathBuf },

    /// The file exists but cannot be read (permissions, a directory where a file
    /// was expected, ...).
    #[error("read {}", .path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The content does not parse, or parses into something that is not an inventory.
    #[error("{}: {message}", Location { path, line: *line, column: *column })]
    Parse {
        path: PathBuf,
        /// 1-based; `None` only when the problem is not tied to one line (e.g. a YAML stream
        /// with several documents).
        line: Option<usize>,
        /// 1-based; `None` when the parser does not report columns (INI).
        column: Option<usize>,
        /// What was wrong, phrased as what was expected there.
        message: String,
    },

    /// One element of a `--limit` pattern matches neither a host nor a group. dnsfix refuses
    /// instead of ignoring it (Ansible only warns) because a mistyped `!exclusion` would
    /// otherwise silently widen a fleet-wide change.
    #[error("--limit `{pattern}` matches no host or group in {inventory}")]
    LimitNoMatch { pattern: String, inventory: String },

    /// The inventory defines no host at all (an empty file, groups without hosts): a run
    /// over it would check nothing and report a clean fleet.
    #[error("{} defines no host: nothing to check", .path.display())]
    NoHosts { path: PathBuf },

    /// Every element matched something, but together they select no host (e.g. an empty
    /// intersection).
    #[error("--limit `{limit}` selects no host in {inventory}")]
    LimitEmpty { limit: String, inventory: String },

    /// A `--limit` that selects only Kubespray bastions, which are not nodes.
    #[error(
        "--limit `{limit}` selects only the Kubespray bastion in {inventory}, which no DNS task of Kubespray's runs on; dnsfix never runs there"
    )]
    LimitBastion { limit: String, inventory: String },

    /// A `--limit` element that dnsfix cannot evaluate (bad subscript, `~regex`, ...).
    #[error("--limit `{pattern}`: {reason}")]
    LimitInvalid { pattern: String, reason: String },

    /// A `--limit @file` that cannot be read.
    #[error("read --limit file {}", .path.display())]
    LimitFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl InventoryError {
    /// Whether the fault is the `--limit` pattern's, not the inventory's.
    pub fn is_limit(&self) -> bool {
        matches!(
            self,
            InventoryError::LimitNoMatch { .. }
                | InventoryError::LimitEmpty { .. }
                | InventoryError::LimitBastion { .. }
                | InventoryError::LimitInvalid { .. }
                | InventoryError::LimitFile { .. }
        )
    }

    pub(crate) fn parse(
        path: &Path,
        line: Option<usize>,
        column: Option<usize>,
        message: impl Into<String>,
    ) -> Self {
        InventoryError::Parse {
            path: path.to_path_buf(),
            line,
            column,
            message: message.into(),
        }
    }

    /// Maps an I/O error on `path` to [`InventoryError::NotFound`] or [`InventoryError::Read`].
    /// The text of inventory file `path`, refusing one over [`MAX_FILE`] bytes before
    /// reading it whole (a 158 MB group_vars file took 1.3 GB to parse).
    pub(crate) fn read_text(path: &Path) -> Result<String, InventoryError> {
        use std::io::Read;
        let file = std::fs::File::open(path).map_err(|e| InventoryError::io(path, e))?;
        let mut bytes = Vec::new();
        file.take(MAX_FILE + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| InventoryError::io(path, e))?;
        if bytes.len() as u64 > MAX_FILE {
            return Err(InventoryError::Parse {
                path: path.to_path_buf(),
                line: None,
                column: None,
                message: format!(
                    "the file is larger than {} MiB; an inventory or vars file is far smaller (is this the right file?)",
                    MAX_FILE >> 20
                ),
            });
        }
        String::from_utf8(bytes).map_err(|e| not_utf8(path, e.as_bytes(), e.utf8_error()))
    }

    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        if source.kind() == std::io::ErrorKind::NotFound {
            InventoryError::NotFound {
                path: path.to_path_buf(),
            }
        } else {
            InventoryError::Read {
                path: path.to_path_buf(),
                source,
            }
        }
    }
}

/// A file that is not UTF-8, at the line and column of its first bad byte (the column in
/// characters, as an editor counts them), naming that byte.
fn not_utf8(path: &Path, bytes: &[u8], error: std::str::Utf8Error) -> InventoryError {
    let good = &bytes[..error.valid_up_to()];
    let line_start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let column = std::str::from_utf8(&good[line_start..]).map_or(0, |l| l.chars().count());
    let bad = bytes.get(error.valid_up_to()).copied().unwrap_or_default();
    InventoryError::parse(
        path,
        Some(good.iter().filter(|&&b| b == b'\n').count() + 1),
        Some(column + 1),
        format!(
            "not UTF-8 text: byte 0x{bad:02x} is no UTF-8 character here (is this the right file, saved as UTF-8?)"
        ),
    )
}

/// `path:line:column`, leaving out what is unknown; the form editors and terminals recognise.
pub(crate) struct Location<'a> {
    pub(crate) path: &'a Path,
    pub(crate) line: Option<usize>,
    pub(crate) column: Option<usize>,
}

impl fmt::Display for Location<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        Ok(())
    }
}
