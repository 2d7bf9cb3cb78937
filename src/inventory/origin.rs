//! [`VarOrigin`]: where a host's variable got its value, so `dnsfix inventory` can show the
//! file (and line, when known) that won, the way a user would look for it with `grep`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// The place that set a variable's winning value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VarOrigin {
    pub path: PathBuf,
    /// 1-based; `None` where the parser does not track lines (variables inside a YAML
    /// inventory file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    pub scope: VarScope,
    /// The value as written when dnsfix resolved it: a reference such as
    /// `"{{ cluster_name }}"` (see template.rs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// The value is text Ansible never renders: tagged `!unsafe` in YAML, or the result of
    /// a reference to such a value (see template.rs). A `{{ }}` in it is its literal text.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub literal: bool,
}

/// Which precedence step set a variable (builder.rs lists the steps).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "snake_case")]
pub enum VarScope {
    /// A group's `vars:` (YAML) or `[group:vars]` (INI) in an inventory file.
    Group(String),
    /// A host line or `hosts:` entry in an inventory file (`host:port` included).
    Host,
    /// A file under `group_vars/<group>`.
    GroupVars(String),
    /// A file under `host_vars/<host>`.
    HostVars,
    /// Set by Ansible itself (`inventory_file`, `inventory_dir`).
    Implicit,
    /// A Kubespray role default dnsfix applies as Kubespray does (the bastion's
    /// `ansible_ssh_common_args`): the path is the role's file, in Kubespray's tree.
    KubesprayDefault,
}

impl VarOrigin {
    pub(crate) fn new(path: &Path, line: Option<usize>, scope: VarScope) -> VarOrigin {
        VarOrigin {
            path: path.to_path_buf(),
            line,
            scope,
            template: None,
            literal: false,
        }
    }

    /// The same origin, marked [`VarOrigin::literal`] where `literal` is true.
    pub(crate) fn with_literal(mut self, literal: bool) -> VarOrigin {
        self.literal = literal;
        self
    }
}

impl fmt::Display for VarOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        match &self.scope {
            VarScope::Group(g) => write!(f, " (group {g})")?,
            VarScope::Host => write!(f, " (host)")?,
            VarScope::GroupVars(_) | VarScope::HostVars | VarScope::Implicit => {}
            VarScope::KubesprayDefault => write!(f, " (Kubespray role default)")?,
        }
        if let Some(t) = &self.template {
            write!(f, " from {t}")?;
        }
        Ok(())
    }
}

/// The 1-based line of each top-level key in a YAML/JSON variables file: the last line
/// that starts with it at column 0 (`key:`, `"key":`, `'key':`), as a duplicate-free
/// mapping has one. A key not written that way (flow style, a merge key) is not there.
/// One pass over the text: a file of thousands of variables is read in no time.
pub(crate) fn top_level_lines(text: &str) -> BTreeMap<String, usize> {
    let mut lines = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        for (colon, _) in line.match_indices(':') {
            let key = line[..colon].trim_end();
            if key.is_empty() {
                continue;
            }
            lines.insert(key.to_owned(), i + 1);
            for quote in ['"', '\''] {
                if let Some(inner) = key.strip_prefix(quote).and_then(|k| k.strip_suffix(quote)) {
                    lines.insert(inner.to_owned(), i + 1);
                }
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_level_keys_are_found_in_every_quoting() {
        let text = "# x: 1\nx: 1\n  y: 2\n\"z\" : 3\n'w': 4\nxx: 5\nx: 6\n";
        let lines = top_level_lines(text);
        assert_eq!(lines.get("x"), Some(&7));
        assert_eq!(lines.get("y"), None);
        assert_eq!(lines.get("z"), Some(&4));
        assert_eq!(lines.get("w"), Some(&5));
        assert_eq!(lines.get("xx"), Some(&6));
        assert_eq!(lines.get("q"), None);
    }
}
