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

/// The 1-based line of each of `keys` in a YAML/JSON variables file: the last line that
/// starts with it at column 0 (`key:`, `"key":`, `'key':`, blanks before the colon
/// allowed), as a duplicate-free mapping has one. A key not written that way (flow style,
/// a merge key) is not there.
///
/// One pass over the text, reading each line only as far as one of `keys` can reach: the
/// keys are sorted and narrowed byte by byte, so a line is never copied and a long line of
/// many colons (minified JSON, a value `x 1:5 1:5 ...`) costs what its first bytes cost.
pub(crate) fn top_level_lines<'k>(
    text: &str,
    keys: impl IntoIterator<Item = &'k str>,
) -> BTreeMap<&'k str, usize> {
    let mut sorted: Vec<&str> = keys.into_iter().collect();
    sorted.sort_unstable();
    sorted.dedup();
    let mut lines = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.as_bytes();
        prefix_keys(&sorted, line, None, |key| {
            lines.insert(key, i + 1);
        });
        if let Some(&quote @ (b'"' | b'\'')) = line.first() {
            prefix_keys(&sorted, &line[1..], Some(quote), |key| {
                lines.insert(key, i + 1);
            });
        }
    }
    lines
}

/// Calls `found` with each of `sorted` (sorted, without duplicates) that `line` starts
/// with and that is followed by `quote` (when given), blanks, then `:`.
fn prefix_keys<'k>(
    sorted: &[&'k str],
    line: &[u8],
    quote: Option<u8>,
    mut found: impl FnMut(&'k str),
) {
    // `sorted[lo..hi]` are the keys that start with `line[..depth]`; the shortest, which
    // sorts first, is `line[..depth]` itself if any is.
    let (mut lo, mut hi) = (0, sorted.len());
    // `line[blank_from..blank_to]` is known to be blanks followed by a non-blank.
    let (mut blank_from, mut blank_to) = (0, 0);
    for depth in 0..=line.len() {
        if lo == hi {
            return;
        }
        if sorted[lo].len() == depth {
            let after = match quote {
                None => Some(depth),
                Some(q) => (line.get(depth) == Some(&q)).then_some(depth + 1),
            };
            if let Some(after) = after {
                if !(blank_from..blank_to).contains(&after) {
                    blank_from = after;
                    blank_to = after
                        + line[after..]
                            .iter()
                            .take_while(|b| matches!(b, b' ' | b'\t'))
                            .count();
                }
                if line.get(blank_to) == Some(&b':') {
                    found(sorted[lo]);
                }
            }
        }
        let Some(&byte) = line.get(depth) else {
            return;
        };
        let range = &sorted[lo..hi];
        let below = |key: &&str, inclusive: bool| {
            key.as_bytes()
                .get(depth)
                .is_none_or(|&b| b < byte || (inclusive && b == byte))
        };
        hi = lo + range.partition_point(|k| below(k, true));
        lo += range.partition_point(|k| below(k, false));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_level_keys_are_found_in_every_quoting() {
        let text = "# x: 1\nx: 1\n  y: 2\n\"z\" : 3\n'w': 4\nxx: 5\nx: 6\n";
        let lines = top_level_lines(text, ["x", "y", "z", "w", "xx", "q"]);
        assert_eq!(lines.get("x"), Some(&7));
        assert_eq!(lines.get("y"), None);
        assert_eq!(lines.get("z"), Some(&4));
        assert_eq!(lines.get("w"), Some(&5));
        assert_eq!(lines.get("xx"), Some(&6));
        assert_eq!(lines.get("q"), None);
    }
}
