//! In-place editors for the files humans own on a node: the kubelet config YAML
//! ([`yaml_set`]), systemd `EnvironmentFile=` files that carry kubelet flags
//! ([`env_flag`]) and MicroK8s's kubelet arguments file ([`args_flag`]). Each editor is a pure function from the file's text to an [`Edit`]: it
//! changes only the target key or flag and proves it by parsing the file before and after.
//!
//! What this module must never do: touch the filesystem or the network, reformat or
//! reorder anything it was not asked to change, or hand back text it has not verified.
//! A file it cannot edit exactly is refused with an error naming the line, so `plan` can
//! show the reason instead of a guess.

pub mod args_flag;
pub mod env_flag;
pub mod yaml_set;

use std::ops::{Range, RangeInclusive};

pub use env_flag::EnvEditError;
pub use yaml_set::{YamlEditError, YamlValue};

/// The result of one editor call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// The whole new file (identical to the input when `changed` is false).
    pub text: String,
    pub changed: bool,
    /// 1-based lines of the new text that differ from the old one, for messages; `None` when
    /// nothing changed. A pure deletion names the line that now sits where the removed
    /// lines were (the last line when they were at the end).
    pub lines: Option<RangeInclusive<usize>>,
}

impl Edit {
    pub(crate) fn unchanged(text: &str) -> Edit {
        Edit {
            text: text.to_string(),
            changed: false,
            lines: None,
        }
    }

    pub(crate) fn between(before: &str, after: String) -> Edit {
        if before == after {
            return Edit::unchanged(before);
        }
        let lines = touched_lines(before, &after);
        Edit {
            text: after,
            changed: true,
            lines,
        }
    }
}

/// The lines of `after` that differ from `before`: everything between the longest common
/// run of leading lines and the longest common run of trailing lines. Lines are compared
/// with their terminators, so a line that only gained a line ending counts as touched.
fn touched_lines(before: &str, after: &str) -> Option<RangeInclusive<usize>> {
    if before == after {
        return None;
    }
    let old: Vec<&str> = before.split_inclusive('\n').collect();
    let new: Vec<&str> = after.split_inclusive('\n').collect();
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let first = prefix + 1;
    let last = new.len() - suffix;
    if last >= first {
        Some(first..=last)
    } else {
        let line = first.min(new.len()).max(1);
        Some(line..=line)
    }
}

/// The line ending a new line should use: the file's own, judged by its first line.
pub(crate) fn line_ending(text: &str) -> &'static str {
    match text.find('\n') {
        Some(at) if text[..at].ends_with('\r') => "\r\n",
        _ => "\n",
    }
}

/// Replaces byte ranges of `text`. The ranges must not overlap; an overlap is a bug in the
/// caller, reported as `None` rather than producing mangled text.
pub(crate) fn splice(text: &str, mut edits: Vec<(Range<usize>, String)>) -> Option<String> {
    edits.sort_by_key(|(range, _)| (range.start, range.end));
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for (range, replacement) in edits {
        if range.start < at || range.end < range.start || range.end > text.len() {
            return None;
        }
        out.push_str(text.get(at..range.start)?);
        out.push_str(&replacement);
        at = range.end;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

#[cfg(test)]
pub(crate) mod testing {
    //! Test helpers shared by the editors' unit tests and the fixture tests.

    use std::collections::BTreeSet;

    /// A line diff (longest common subsequence over lines, terminators included): the
    /// 1-based numbers of old lines that were removed and of new lines that were added.
    /// A modified line shows up in both sets.
    pub fn changed_lines(before: &str, after: &str) -> (BTreeSet<usize>, BTreeSet<usize>) {
        let old: Vec<&str> = before.split_inclusive('\n').collect();
        let new: Vec<&str> = after.split_inclusive('\n').collect();
        let (n, m) = (old.len(), new.len());
        let mut lcs = vec![vec![0usize; m + 1]; n + 1];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i][j] = if old[i] == new[j] {
                    lcs[i + 1][j + 1] + 1
                } else {
                    lcs[i + 1][j].max(lcs[i][j + 1])
                };
            }
        }
        let (mut removed, mut added) = (BTreeSet::new(), BTreeSet::new());
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && old[i] == new[j] {
                i += 1;
                j += 1;
            } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
                added.insert(j + 1);
                j += 1;
            } else {
                removed.insert(i + 1);
                i += 1;
            }
        }
        (removed, added)
    }

    /// Asserts that exactly the given old lines were removed and new lines added.
    #[track_caller]
    pub fn assert_changed(before: &str, after: &str, removed: &[usize], added: &[usize]) {
        let (r, a) = changed_lines(before, after);
        let want_r: BTreeSet<usize> = removed.iter().copied().collect();
        let want_a: BTreeSet<usize> = added.iter().copied().collect();
        assert_eq!(
            (r, a),
            (want_r, want_a),
            "(removed old lines, added new lines)\n--- before\n{before}\n--- after\n{after}"
        );
    }
}

#[cfg(test)]
mod tests {
    //! Fixture tests as data: every `tests/fixtures/edit/<editor>/<case>/` holds one real
    //! file as an installer renders it (with comments humans added) and `case.json`, the
    //! edits to run against it and what each must do. A new file layout is a new folder.

    use std::path::{Path, PathBuf};

    use serde::Deserialize;

    use super::testing::changed_lines;
    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Case {
        /// The input file inside the case folder.
        file: String,
        /// Where the file comes from and why it is here.
        #[serde(rename = "about")]
        _about: String,
        ops: Vec<Op>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Op {
        /// `set`, `remove` (yaml_set) or `set_flag`, `remove_flag` (env_flag).
        op: String,
        /// YAML key path, or the env flag name.
        key: String,
        /// The env variable, for `set_flag` / `remove_flag`.
        var: Option<String>,
        /// A string, or a list of strings (YAML only).
        value: Option<serde_json::Value>,
        /// The call must leave the text byte-identical.
        #[serde(default)]
        unchanged: bool,
        /// Old lines removed and new lines added by the edit (1-based).
        #[serde(default)]
        removed: Vec<usize>,
        #[serde(default)]
        added: Vec<usize>,
        /// A file in the case folder the result must equal byte for byte.
        expected: Option<String>,
        /// The call must fail with a message containing this.
        error: Option<String>,
        /// Another input file in the case folder to run this op on instead of `file`.
        input: Option<String>,
    }

    fn fixture_dirs(editor: &str) -> Vec<PathBuf> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/edit")
            .join(editor);
        let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.expect("dir entry").path())
            .filter(|path| path.join("case.json").is_file())
            .collect();
        cases.sort();
        cases
    }

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn run_op(op: &Op, text: &str) -> Result<Edit, String> {
        let value_str = || -> String {
            match &op.value {
                Some(serde_json::Value::String(s)) => s.clone(),
                other => panic!("op {op:?}: value must be a string, got {other:?}"),
            }
        };
        let var = || op.var.clone().expect("env ops need `var`");
        match op.op.as_str() {
            "set" => {
                let value = match &op.value {
                    Some(serde_json::Value::Array(items)) => YamlValue::List(
                        items
                            .iter()
                            .map(|item| item.as_str().expect("list items are strings").to_string())
                            .collect(),
                    ),
                    _ => YamlValue::String(value_str()),
                };
                yaml_set::set(text, &op.key, &value).map_err(|e| e.to_string())
            }
            "remove" => yaml_set::remove(text, &op.key).map_err(|e| e.to_string()),
            "set_flag" => {
                env_flag::set_flag(text, &var(), &op.key, &value_str()).map_err(|e| e.to_string())
            }
            "remove_flag" => {
                env_flag::remove_flag(text, &var(), &op.key).map_err(|e| e.to_string())
            }
            other => panic!("unknown op {other}"),
        }
    }

    fn run_cases(editor: &str) -> usize {
        let mut failures = Vec::new();
        let mut count = 0;
        for dir in fixture_dirs(editor) {
            let name = dir
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("?")
                .to_string();
            let case: Case = serde_json::from_str(&read(&dir.join("case.json")))
                .unwrap_or_else(|e| panic!("{name}/case.json: {e}"));
            for (index, op) in case.ops.iter().enumerate() {
                count += 1;
                let input = read(&dir.join(op.input.as_deref().unwrap_or(&case.file)));
                let at = format!("{name} op #{index} ({} {})", op.op, op.key);
                if let Err(message) = check_op(op, &input, &dir) {
                    failures.push(format!("{at}: {message}"));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n\n"));
        count
    }

    fn check_op(op: &Op, input: &str, dir: &Path) -> Result<(), String> {
        let result = run_op(op, input);
        if let Some(want) = &op.error {
            return match result {
                Err(message) if message.contains(want.as_str()) => Ok(()),
                Err(message) => Err(format!("error {message:?} does not contain {want:?}")),
                Ok(edit) => Err(format!("expected an error, got:\n{}", edit.text)),
            };
        }
        let edit = result.map_err(|e| format!("unexpected error: {e}"))?;
        if op.unchanged {
            if edit.changed || edit.text != input || edit.lines.is_some() {
                return Err(format!("expected no change, got:\n{}", edit.text));
            }
            return Ok(());
        }
        if !edit.changed {
            return Err("expected a change, got none".to_string());
        }
        let (removed, added) = changed_lines(input, &edit.text);
        let removed: Vec<usize> = removed.into_iter().collect();
        let added: Vec<usize> = added.into_iter().collect();
        if (removed.as_slice(), added.as_slice()) != (op.removed.as_slice(), op.added.as_slice()) {
            return Err(format!(
                "changed lines: removed {removed:?} added {added:?}, expected removed {:?} \
                 added {:?}\n--- result\n{}",
                op.removed, op.added, edit.text
            ));
        }
        let lines = edit.lines.clone().ok_or("a change without a line range")?;
        if let (Some(first), Some(last)) = (added.first(), added.last())
            && !(lines.contains(first) && lines.contains(last))
        {
            return Err(format!("line range {lines:?} misses added lines {added:?}"));
        }
        if let Some(expected) = &op.expected {
            let path = dir.join(expected);
            if !path.exists() {
                // A new case: write the result for review with DNSFIX_BLESS_EDIT=1.
                if std::env::var_os("DNSFIX_BLESS_EDIT").is_some() {
                    std::fs::write(&path, &edit.text).map_err(|e| e.to_string())?;
                } else {
                    return Err(format!(
                        "{expected} is missing; run with DNSFIX_BLESS_EDIT=1 and review it"
                    ));
                }
            }
            let want = read(&path);
            if edit.text != want {
                return Err(format!(
                    "result differs from {expected}\n--- got\n{}\n--- want\n{want}",
                    edit.text
                ));
            }
        }
        // A second run of the same edit changes nothing: apply is idempotent.
        let again = run_op(op, &edit.text).map_err(|e| format!("second run failed: {e}"))?;
        if again.changed {
            return Err(format!(
                "second run changed the text again:\n{}",
                again.text
            ));
        }
        Ok(())
    }

    #[test]
    fn yaml_fixtures() {
        let count = run_cases("yaml");
        assert!(count >= 20, "only {count} yaml fixture ops");
    }

    #[test]
    fn env_fixtures() {
        let count = run_cases("env");
        assert!(count >= 20, "only {count} env fixture ops");
    }

    #[test]
    fn touched_lines_cover_the_change() {
        assert_eq!(touched_lines("a\nb\nc\n", "a\nB\nc\n"), Some(2..=2));
        assert_eq!(touched_lines("a\nb\nc\n", "a\nb\nx\ny\nc\n"), Some(3..=4));
        // Pure deletion: the line now where the removed one was.
        assert_eq!(touched_lines("a\nb\nc\n", "a\nc\n"), Some(2..=2));
        assert_eq!(touched_lines("a\nb\n", "a\n"), Some(1..=1));
        // Gaining a line ending touches that line.
        assert_eq!(touched_lines("a\nb", "a\nb\nc"), Some(2..=3));
        assert_eq!(touched_lines("a\n", "a\n"), None);
    }

    #[test]
    fn line_ending_follows_the_first_line() {
        assert_eq!(line_ending("a: 1\r\nb: 2\r\n"), "\r\n");
        assert_eq!(line_ending("a: 1\nb: 2\r\n"), "\n");
        assert_eq!(line_ending("a: 1"), "\n");
    }

    #[test]
    fn splice_refuses_overlaps() {
        assert_eq!(
            splice("abcdef", vec![(4..5, "X".into()), (0..1, "Y".into())]).as_deref(),
            Some("YbcdXf")
        );
        assert_eq!(
            splice("abcdef", vec![(0..3, String::new()), (2..4, String::new())]),
            None
        );
        assert_eq!(splice("abc", vec![(2..9, String::new())]), None);
    }

    #[test]
    fn changed_lines_helper() {
        let (removed, added) = changed_lines("a\nb\nc\n", "a\nB\nc\nd\n");
        assert_eq!(removed.into_iter().collect::<Vec<_>>(), [2]);
        assert_eq!(added.into_iter().collect::<Vec<_>>(), [2, 4]);
    }
}
