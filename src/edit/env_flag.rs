//! Sets or removes one kubelet flag inside a variable of a systemd `EnvironmentFile=`:
//! Kubespray's `/etc/kubernetes/kubelet.env` (`KUBELET_ARGS="… \` one flag per continued
//! line), kubeadm's `/var/lib/kubelet/kubeadm-flags.env` (`KUBELET_KUBEADM_ARGS="--a=b --c=d"`)
//! and `/etc/default/kubelet` (`KUBELET_EXTRA_ARGS=`, often empty and unquoted).
//!
//! How: the lexer [`crate::facts::kubelet_flags::EnvFile`] reads with
//! ([`crate::facts::env_lexer`]), which keeps the byte position of every value character,
//! so words and flags map back to the text and the edit is a splice. Everything
//! else (other flags, comments, quoting, continuations, other variables, CRLF, a missing final
//! newline) stays byte for byte. The result is proven with the facts parser: re-parsed, its
//! flag list must differ from the original only in the target flag, which must hold exactly
//! the new value (or be gone), and every other assignment must read the same.
//!
//! Rules where there was a choice:
//! - only the assignment systemd uses is edited (the last `VAR=`; `export VAR=` lines are
//!   ignored by systemd and here); a missing one is appended as `VAR="--flag=value"`;
//! - `--flag=value` and `--flag value` are both recognised (the latter when kubelet reads
//!   the next word as the value: the flag is in the facts parser's value-flag table, or the
//!   next word is not a flag, since kubelet rejects stray positional words);
//! - setting replaces the value of the last occurrence in its own form and spelling
//!   (`--resolv_conf value` stays so) and removes the earlier ones: for a scalar flag the last
//!   one wins, and for a list flag such as `--cluster-dns` (occurrences append) only one
//!   occurrence gives exactly the new value. The one exception to "its own form": a
//!   `--flag value` pair whose flag the facts parser does not know to take a value (it knows
//!   `resolv-conf`, `cluster-dns`, `cluster-domain`, `config`, `kubeconfig`) becomes
//!   `--flag=value`, even when the value is already right, because only that form can be
//!   proven;
//! - a new flag goes after the last word: on its own continued line when the value is
//!   written one flag per line, else after a space;
//! - removing a flag alone on a continued line removes that line; the last flag of a
//!   multi-line value takes the preceding ` \` with it; otherwise the flag and the blanks
//!   after it go;
//! - values are quoted for both levels systemd applies: `'…'` (or `"…"` when the value holds
//!   a `'`) for `$VAR` word splitting, then escaped for the surrounding env-file quoting.
//!   Backslashes and control characters in values are refused.
//!
//! Never: write files, touch variables or flags it was not asked to, or return text the
//! facts parser does not read as intended.

use std::ops::Range;

use crate::facts::env_lexer::{Assignment, Char, Quote, is_blank, lex};
use crate::facts::kubelet_flags::{EnvFile, Flag, flags};

use super::{Edit, line_ending, splice};

#[derive(Debug, thiserror::Error)]
pub enum EnvEditError {
    #[error("use `{name}` as a variable name: it must match [A-Za-z_][A-Za-z0-9_]*")]
    InvalidVar { name: String },
    #[error("use `{flag}` as a flag name: {reason}")]
    InvalidFlag { flag: String, reason: &'static str },
    #[error("write {value:?} as the value of --{flag}: {reason}")]
    InvalidValue {
        flag: String,
        value: String,
        reason: &'static str,
    },
    #[error(
        "edit {var} (assigned at line {start}): the {quote} quote at line {line} is never closed"
    )]
    Unterminated {
        var: String,
        start: usize,
        line: usize,
        quote: &'static str,
    },
    #[error("edit --{flag} in {var} at line {line}: {what}; edit this by hand")]
    Unsupported {
        var: String,
        flag: String,
        line: usize,
        what: String,
    },
    #[error("prove the edit of --{flag} in {var} at line {line}: {reason}")]
    Verify {
        var: String,
        flag: String,
        line: usize,
        reason: String,
    },
}

/// Sets `--flag=value` in variable `var` (`flag` without dashes, e.g. `resolv-conf`).
pub fn set_flag(text: &str, var: &str, flag: &str, value: &str) -> Result<Edit, EnvEditError> {
    let target = check_names(var, flag)?;
    check_value(flag, value)?;
    let op = Op {
        var,
        flag,
        target: &target,
    };
    let mut current = text.to_string();
    // Each round removes one surplus occurrence; more rounds than occurrences is a bug.
    for _ in 0..=count_occurrences(text, var, &target) + 1 {
        let assignments = lex(&current);
        let Some(assignment) = op.effective(&current, &assignments)? else {
            current = append_assignment(&current, var, flag, value);
            return op.finish(text, current, Some(value));
        };
        let words = op.words(&current, assignment)?;
        let found = occurrences(&words, &target);
        let next = match found.as_slice() {
            [] => op.insert(&current, assignment, &words, value)?,
            // Already so, in a form the facts parser reads back (see `replace`).
            [only]
                if only.value.as_deref() == Some(value)
                    && (only.form != Form::Separate || takes_value(&target)) =>
            {
                return op.finish(text, current, Some(value));
            }
            [only] => op.replace(&current, assignment, &words, only, value)?,
            [first, ..] => {
                current = op.remove(&current, assignment, &words, first)?;
                continue;
            }
        };
        return op.finish(text, next, Some(value));
    }
    Err(op.verify_error(text, "occurrences did not go away"))
}

/// Removes every occurrence of `--flag` (and its value) from variable `var`.
pub fn remove_flag(text: &str, var: &str, flag: &str) -> Result<Edit, EnvEditError> {
    let target = check_names(var, flag)?;
    let op = Op {
        var,
        flag,
        target: &target,
    };
    let mut current = text.to_string();
    for _ in 0..=count_occurrences(text, var, &target) {
        let assignments = lex(&current);
        let Some(assignment) = op.effective(&current, &assignments)? else {
            return op.finish(text, current, None);
        };
        let words = op.words(&current, assignment)?;
        match occurrences(&words, &target).first() {
            None => return op.finish(text, current, None),
            Some(first) => current = op.remove(&current, assignment, &words, first)?,
        }
    }
    Err(op.verify_error(text, "occurrences did not go away"))
}

fn count_occurrences(text: &str, var: &str, target: &str) -> usize {
    let assignments = lex(text);
    effective_index(&assignments, var).map_or(0, |i| {
        occurrences(&words(&assignments[i].chars), target).len()
    })
}

fn check_names(var: &str, flag: &str) -> Result<String, EnvEditError> {
    let mut chars = var.chars();
    let valid_var = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid_var {
        return Err(EnvEditError::InvalidVar {
            name: var.to_string(),
        });
    }
    let invalid = |reason| EnvEditError::InvalidFlag {
        flag: flag.to_string(),
        reason,
    };
    if flag.is_empty() {
        return Err(invalid("it is empty"));
    }
    if flag.starts_with('-') {
        return Err(invalid("give it without leading dashes"));
    }
    if !flag
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(invalid("only letters, digits, `-` and `_` are allowed"));
    }
    // kubelet normalises `_` to `-` (WordSepNormalizeFunc), so both spellings are one flag.
    Ok(flag.replace('_', "-"))
}

fn check_value(flag: &str, value: &str) -> Result<(), EnvEditError> {
    let invalid = |reason| EnvEditError::InvalidValue {
        flag: flag.to_string(),
        value: value.to_string(),
        reason,
    };
    if value.chars().any(char::is_control) {
        return Err(invalid(
            "control characters (newlines, tabs) cannot be written",
        ));
    }
    if value.contains('\\') {
        // systemd's env-file and word-splitting levels treat backslashes differently
        // inside single quotes; no kubelet path or address needs one.
        return Err(invalid("backslashes are not supported"));
    }
    Ok(())
}

fn effective_index(assignments: &[Assignment], var: &str) -> Option<usize> {
    assignments
        .iter()
        .rposition(|a| a.name == var && !a.exported)
}

/// One word of the value as `$VAR` expansion splits it (facts `split_words`), with the
/// indices of its first and last character and its bytes in the text.
#[derive(Debug, Clone)]
struct Word {
    text: String,
    first: usize,
    last: usize,
    start: usize,
    end: usize,
    /// A quote inside the word that runs to the end of the value (systemd accepts it;
    /// where the author meant it to end is a guess).
    unclosed: Option<Quote>,
}

fn words(chars: &[Char]) -> Vec<Word> {
    let mut out = Vec::new();
    let n = chars.len();
    let mut k = 0;
    loop {
        while k < n && is_blank(chars[k].c) {
            k += 1;
        }
        if k == n {
            return out;
        }
        let first = k;
        let mut text = String::new();
        let mut unclosed = None;
        while k < n && !is_blank(chars[k].c) {
            let c = chars[k].c;
            k += 1;
            match c {
                '\'' => {
                    unclosed = Some(Quote::Single);
                    while k < n {
                        let c = chars[k].c;
                        k += 1;
                        if c == '\'' {
                            unclosed = None;
                            break;
                        }
                        text.push(c);
                    }
                }
                '"' => {
                    unclosed = Some(Quote::Double);
                    while k < n {
                        let c = chars[k].c;
                        k += 1;
                        match c {
                            '"' => {
                                unclosed = None;
                                break;
                            }
                            '\\' => {
                                if k < n {
                                    text.push(chars[k].c);
                                    k += 1;
                                }
                            }
                            _ => text.push(c),
                        }
                    }
                }
                '\\' => {
                    if k < n {
                        if chars[k].c != '\n' {
                            text.push(chars[k].c);
                        }
                        k += 1;
                    }
                }
                _ => text.push(c),
            }
        }
        out.push(Word {
            text,
            first,
            last: k - 1,
            start: chars[first].start,
            end: chars[k - 1].end,
            unclosed,
        });
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Form {
    /// `--flag=value`: the text up to and including `=`.
    Eq(String),
    /// `--flag value`.
    Separate,
    /// `--flag` with no value.
    Bare,
}

#[derive(Debug, Clone)]
struct Occurrence {
    first_word: usize,
    last_word: usize,
    value: Option<String>,
    form: Form,
}

/// Whether the facts parser reads `--name value` as the flag taking that value.
fn takes_value(name: &str) -> bool {
    flags(&format!("--{name} x"), 1)
        .first()
        .is_some_and(|flag| flag.value.as_deref() == Some("x"))
}

fn occurrences(words: &[Word], target: &str) -> Vec<Occurrence> {
    scan_flags(words, target).0
}

/// Occurrences of the (normalised) flag `target`, reading words as pflag and the facts
/// parser do: a bare `--` ends the flags (its index is returned), a value flag without `=`
/// takes the next word.
fn scan_flags(words: &[Word], target: &str) -> (Vec<Occurrence>, Option<usize>) {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = &words[i].text;
        if word == "--" {
            return (out, Some(i));
        }
        let body = match word.strip_prefix("--") {
            Some(body) => body,
            None => match word.strip_prefix('-') {
                Some(body) if !body.is_empty() => body,
                _ => {
                    i += 1;
                    continue;
                }
            },
        };
        if body.starts_with(['-', '=']) {
            i += 1;
            continue;
        }
        let (name, value) = match body.split_once('=') {
            Some((name, value)) => (name.replace('_', "-"), Some(value)),
            None => (body.replace('_', "-"), None),
        };
        if name == target {
            match value {
                Some(value) => out.push(Occurrence {
                    first_word: i,
                    last_word: i,
                    value: Some(value.to_string()),
                    form: Form::Eq(word[..word.len() - value.len()].to_string()),
                }),
                None => match words.get(i + 1) {
                    Some(next) if takes_value(&name) || !next.text.starts_with('-') => {
                        out.push(Occurrence {
                            first_word: i,
                            last_word: i + 1,
                            value: Some(next.text.clone()),
                            form: Form::Separate,
                        });
                        i += 1;
                    }
                    _ => out.push(Occurrence {
                        first_word: i,
                        last_word: i,
                        value: None,
                        form: Form::Bare,
                    }),
                },
            }
        } else if value.is_none() && takes_value(&name) && i + 1 < words.len() {
            i += 1;
        }
        i += 1;
    }
    (out, None)
}

/// Quotes a value for `$VAR` word splitting: as is when it is plainly safe, else in single
/// quotes, or in double quotes when it contains a single quote or sits in a single-quoted
/// variable (where a `'` would end the env-level quoting).
fn word_quote(value: &str, env_quote: Quote) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./:,=@%+".contains(c);
    if !value.is_empty() && value.chars().all(safe) {
        value.to_string()
    } else if !value.contains('\'') && env_quote != Quote::Single {
        format!("'{value}'")
    } else {
        format!("\"{}\"", value.replace('"', "\\\""))
    }
}

/// Escapes a word for the env-file quoting it sits in. `None` when single quotes cannot
/// hold it.
fn env_encode(word: &str, quote: Quote) -> Option<String> {
    match quote {
        Quote::Single => (!word.contains('\'')).then(|| word.to_string()),
        Quote::Double => {
            let mut out = String::with_capacity(word.len());
            for c in word.chars() {
                if matches!(c, '"' | '\\' | '`' | '$') {
                    out.push('\\');
                }
                out.push(c);
            }
            Some(out)
        }
        Quote::None => {
            // Unquoted, a leading quote would open env-level quoting and a backslash
            // escapes: both are written escaped so they reach word splitting as is.
            let mut out = String::with_capacity(word.len());
            for c in word.chars() {
                if matches!(c, '"' | '\'' | '\\') {
                    out.push('\\');
                }
                out.push(c);
            }
            Some(out)
        }
    }
}

fn line_of(text: &str, at: usize) -> usize {
    1 + text[..at.min(text.len())].matches('\n').count()
}

fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |p| p + 1)
}

fn append_assignment(text: &str, var: &str, flag: &str, value: &str) -> String {
    let eol = line_ending(text);
    let word = format!("--{flag}={}", word_quote(value, Quote::Double));
    // Double quotes can hold any word `word_quote` produces.
    let encoded = env_encode(&word, Quote::Double).unwrap_or(word);
    let line = format!("{var}=\"{encoded}\"");
    if text.is_empty() {
        format!("{line}{eol}")
    } else if text.ends_with('\n') {
        format!("{text}{line}{eol}")
    } else {
        format!("{text}{eol}{line}")
    }
}

/// One editor call's names, for edits and errors.
struct Op<'a> {
    var: &'a str,
    flag: &'a str,
    target: &'a str,
}

impl Op<'_> {
    fn unsupported(&self, text: &str, at: usize, what: &str) -> EnvEditError {
        EnvEditError::Unsupported {
            var: self.var.to_string(),
            flag: self.flag.to_string(),
            line: line_of(text, at),
            what: what.to_string(),
        }
    }

    fn verify_error(&self, text: &str, reason: &str) -> EnvEditError {
        let assignments = lex(text);
        let line = effective_index(&assignments, self.var).map_or(1, |i| assignments[i].line);
        EnvEditError::Verify {
            var: self.var.to_string(),
            flag: self.flag.to_string(),
            line,
            reason: reason.to_string(),
        }
    }

    /// The assignment systemd uses, refusing one whose quote never closes (its end is a
    /// guess, so is any edit of it).
    fn effective<'x>(
        &self,
        text: &str,
        assignments: &'x [Assignment],
    ) -> Result<Option<&'x Assignment>, EnvEditError> {
        let Some(index) = effective_index(assignments, self.var) else {
            return Ok(None);
        };
        let assignment = &assignments[index];
        match assignment.unterminated {
            Some(quote) => Err(EnvEditError::Unterminated {
                var: self.var.to_string(),
                start: assignment.line,
                line: assignment
                    .quote_marks
                    .last()
                    .map_or(assignment.line, |at| line_of(text, *at)),
                quote: if quote == Quote::Single {
                    "single"
                } else {
                    "double"
                },
            }),
            None => Ok(Some(assignment)),
        }
    }

    /// The value's words, refusing a word-level quote that never closes.
    fn words(&self, text: &str, assignment: &Assignment) -> Result<Vec<Word>, EnvEditError> {
        let words = words(&assignment.chars);
        match words
            .iter()
            .find_map(|w| w.unclosed.map(|quote| (w.start, quote)))
        {
            Some((at, quote)) => Err(EnvEditError::Unterminated {
                var: self.var.to_string(),
                start: assignment.line,
                line: line_of(text, at),
                quote: if quote == Quote::Single {
                    "single"
                } else {
                    "double"
                },
            }),
            None => Ok(words),
        }
    }

    /// Checks that `range` stays inside one env-level quoting and returns that quoting.
    fn quoting(
        &self,
        text: &str,
        assignment: &Assignment,
        range: &Range<usize>,
        quote: Quote,
    ) -> Result<Quote, EnvEditError> {
        if assignment
            .quote_marks
            .iter()
            .any(|mark| range.contains(mark))
        {
            return Err(self.unsupported(
                text,
                range.start,
                "the flag is written across several quoted sections",
            ));
        }
        Ok(quote)
    }

    fn encode(
        &self,
        text: &str,
        at: usize,
        word: &str,
        quote: Quote,
    ) -> Result<String, EnvEditError> {
        env_encode(word, quote).ok_or_else(|| {
            self.unsupported(
                text,
                at,
                "the value holds a single quote and the variable is single-quoted",
            )
        })
    }

    fn insert(
        &self,
        text: &str,
        assignment: &Assignment,
        words: &[Word],
        value: &str,
    ) -> Result<String, EnvEditError> {
        let word = |quote| format!("--{}={}", self.flag, word_quote(value, quote));
        let terminator = scan_flags(words, self.target).1;
        let (at, insertion) = match (terminator, words.last()) {
            // Words after a bare `--` are not flags: the new flag goes before it.
            (Some(index), _) => {
                let before = &words[index];
                let quote = assignment.chars[before.first].quote;
                let token = self.encode(text, before.start, &word(quote), quote)?;
                (before.start, format!("{token} "))
            }
            (None, None) => {
                let (at, quote) = assignment.empty_at;
                (at, self.encode(text, at, &word(quote), quote)?)
            }
            (None, Some(last)) => {
                let quote = assignment.chars[last.last].quote;
                let token = self.encode(text, last.end, &word(quote), quote)?;
                let one_per_line =
                    words.len() >= 2 && text[words[words.len() - 2].end..last.start].contains('\n');
                // Inside single quotes a backslash is literal, so no continuation there.
                if one_per_line && quote != Quote::Single {
                    let start = line_start(text, last.start);
                    let indent = &text[start..last.start];
                    let indent = if indent.chars().all(|c| c == ' ' || c == '\t') {
                        indent
                    } else {
                        ""
                    };
                    let eol = line_ending(text);
                    (last.end, format!(" \\{eol}{indent}{token}"))
                } else {
                    (last.end, format!(" {token}"))
                }
            }
        };
        splice(text, vec![(at..at, insertion)])
            .ok_or_else(|| self.verify_error(text, "the insertion point is outside the text"))
    }

    fn replace(
        &self,
        text: &str,
        assignment: &Assignment,
        words: &[Word],
        occurrence: &Occurrence,
        value: &str,
    ) -> Result<String, EnvEditError> {
        let first = &words[occurrence.first_word];
        let last = &words[occurrence.last_word];
        // `--flag value` stays so only when the facts parser also reads the next word as
        // the value (otherwise the result could not be proven): then only the value word
        // changes. Any other form is rewritten as one `--flag=value` word, keeping the
        // flag's spelling.
        let (range, char_index, prefix) = match &occurrence.form {
            Form::Separate if takes_value(self.target) => {
                (last.start..last.end, last.first, String::new())
            }
            Form::Eq(prefix) => (first.start..first.end, first.first, prefix.clone()),
            Form::Separate | Form::Bare => (
                first.start..last.end,
                first.first,
                format!("{}=", first.text),
            ),
        };
        let quote = assignment.chars[char_index].quote;
        let quote = self.quoting(text, assignment, &range, quote)?;
        let word = format!("{prefix}{}", word_quote(value, quote));
        let encoded = self.encode(text, range.start, &word, quote)?;
        splice(text, vec![(range, encoded)])
            .ok_or_else(|| self.verify_error(text, "the replaced word is outside the text"))
    }

    /// Removes one occurrence (see the module docs for which blanks and lines go with it).
    fn remove(
        &self,
        text: &str,
        assignment: &Assignment,
        words: &[Word],
        occurrence: &Occurrence,
    ) -> Result<String, EnvEditError> {
        let s = words[occurrence.first_word].start;
        let e = words[occurrence.last_word].end;
        let prev_end = occurrence.first_word.checked_sub(1).map(|k| words[k].end);
        let next_start = words.get(occurrence.last_word + 1).map(|w| w.start);
        let line_begin = line_start(text, s);
        let alone_before = text[line_begin..s].chars().all(|c| c == ' ' || c == '\t');
        let after = &text[e..];
        let rest = after.trim_start_matches([' ', '\t']);
        let continued = ["\\\r\n", "\\\n"]
            .iter()
            .find(|cont| rest.starts_with(**cont))
            .map(|cont| e + (after.len() - rest.len()) + cont.len());
        let range = match (continued, next_start, prev_end) {
            (Some(line_end), next, _) if alone_before && next.is_none_or(|n| n >= line_end) => {
                line_begin..line_end
            }
            (_, Some(next), _) if !text[e..next].contains('\n') => s..next,
            (_, Some(_), Some(prev)) if !text[prev..s].contains('\n') => prev..e,
            (_, Some(next), _) => s..next,
            (_, None, Some(prev)) => prev..e,
            (_, None, None) => s..e,
        };
        let quote = assignment.chars[words[occurrence.first_word].first].quote;
        self.quoting(text, assignment, &range, quote)?;
        splice(text, vec![(range, String::new())])
            .ok_or_else(|| self.verify_error(text, "the removed range is outside the text"))
    }

    /// Proves the edit and wraps it up.
    fn finish(
        &self,
        before: &str,
        after: String,
        expect: Option<&str>,
    ) -> Result<Edit, EnvEditError> {
        // Also when nothing changed: the file must then already say what was asked.
        self.prove(before, &after, expect)
            .map_err(|reason| self.verify_error(before, &reason))?;
        Ok(Edit::between(before, after))
    }

    fn prove(&self, before: &str, after: &str, expect: Option<&str>) -> Result<(), String> {
        let old = EnvFile::parse(before);
        let new = EnvFile::parse(after);
        let old_index = old
            .vars
            .iter()
            .rposition(|v| v.name == self.var && !v.exported);
        let new_index = new
            .vars
            .iter()
            .rposition(|v| v.name == self.var && !v.exported);
        let others = |env: &EnvFile, skip: Option<usize>| -> Vec<(String, String, bool)> {
            env.vars
                .iter()
                .enumerate()
                .filter(|(i, _)| Some(*i) != skip)
                .map(|(_, v)| (v.name.clone(), v.value.clone(), v.exported))
                .collect()
        };
        if others(&old, old_index) != others(&new, new_index) {
            return Err("another assignment would change".to_string());
        }
        let flags_of = |env: &EnvFile, index: Option<usize>| -> Vec<Flag> {
            index.map(|i| env.vars[i].flags()).unwrap_or_default()
        };
        let (old_flags, new_flags) = (flags_of(&old, old_index), flags_of(&new, new_index));
        let rest = |flags: &[Flag]| -> Vec<(String, Option<String>)> {
            flags
                .iter()
                .filter(|f| f.name != self.target)
                .map(|f| (f.name.clone(), f.value.clone()))
                .collect()
        };
        if rest(&old_flags) != rest(&new_flags) {
            return Err("other flags would change".to_string());
        }
        let got: Vec<Option<&str>> = new_flags
            .iter()
            .filter(|f| f.name == self.target)
            .map(|f| f.value.as_deref())
            .collect();
        let wanted: Vec<Option<&str>> = expect.map(Some).into_iter().collect();
        if got != wanted {
            return Err(format!("the flag would read {got:?}, not {wanted:?}"));
        }
        // Words that are not flags (stray positionals) must survive too; the facts parser
        // drops them, so this check uses the lexer's own words.
        if self.plain_words(before) != self.plain_words(after) {
            return Err("other words of the value would change".to_string());
        }
        Ok(())
    }

    fn plain_words(&self, text: &str) -> Vec<String> {
        let assignments = lex(text);
        let Some(index) = effective_index(&assignments, self.var) else {
            return Vec::new();
        };
        let words = words(&assignments[index].chars);
        let skip: Vec<usize> = occurrences(&words, self.target)
            .iter()
            .flat_map(|o| o.first_word..=o.last_word)
            .collect();
        words
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !skip.contains(i))
            .map(|(_, w)| w.text)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::testing::assert_changed;

    #[track_caller]
    fn set_ok(text: &str, var: &str, flag: &str, value: &str) -> String {
        let edit = set_flag(text, var, flag, value).unwrap_or_else(|e| panic!("{e}"));
        assert!(edit.changed, "expected a change");
        let again = set_flag(&edit.text, var, flag, value).expect("second set");
        assert!(!again.changed, "second set changed:\n{}", again.text);
        edit.text
    }

    #[track_caller]
    fn remove_ok(text: &str, var: &str, flag: &str) -> String {
        let edit = remove_flag(text, var, flag).unwrap_or_else(|e| panic!("{e}"));
        assert!(edit.changed, "expected a change");
        assert!(!remove_flag(&edit.text, var, flag).expect("again").changed);
        edit.text
    }

    const KUBESPRAY: &str = r#"KUBE_LOG_LEVEL="--v=2"
KUBELET_ARGS="--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf \
--config=/etc/kubernetes/kubelet-config.yaml \
--kubeconfig=/etc/kubernetes/kubelet.conf \
--runtime-cgroups=/system.slice/containerd.service \
   --resolv-conf=/etc/resolv.conf  "
KUBELET_CLOUDPROVIDER=""
"#;

    #[test]
    fn kubespray_replace_in_place() {
        let out = set_ok(
            KUBESPRAY,
            "KUBELET_ARGS",
            "resolv-conf",
            "/run/systemd/resolve/resolv.conf",
        );
        assert_eq!(
            out,
            KUBESPRAY.replace(
                "--resolv-conf=/etc/resolv.conf",
                "--resolv-conf=/run/systemd/resolve/resolv.conf"
            )
        );
        assert_changed(KUBESPRAY, &out, &[6], &[6]);
        let same =
            set_flag(KUBESPRAY, "KUBELET_ARGS", "resolv-conf", "/etc/resolv.conf").expect("set");
        assert_eq!(same, Edit::unchanged(KUBESPRAY));
    }

    #[test]
    fn kubespray_remove_last_flag_takes_the_continuation() {
        let out = remove_ok(KUBESPRAY, "KUBELET_ARGS", "resolv-conf");
        assert!(
            out.contains(
                "--runtime-cgroups=/system.slice/containerd.service  \"\nKUBELET_CLOUDPROVIDER"
            ),
            "{out}"
        );
        assert_changed(KUBESPRAY, &out, &[5, 6], &[5]);
    }

    #[test]
    fn kubespray_remove_a_middle_line() {
        let out = remove_ok(KUBESPRAY, "KUBELET_ARGS", "kubeconfig");
        assert_eq!(
            out,
            KUBESPRAY.replace("--kubeconfig=/etc/kubernetes/kubelet.conf \\\n", "")
        );
        assert_changed(KUBESPRAY, &out, &[4], &[]);
    }

    #[test]
    fn kubespray_remove_the_first_flag_joins_the_next_line() {
        let out = remove_ok(KUBESPRAY, "KUBELET_ARGS", "bootstrap-kubeconfig");
        assert!(
            out.contains(
                "KUBELET_ARGS=\"--config=/etc/kubernetes/kubelet-config.yaml \\\n--kubeconfig"
            ),
            "{out}"
        );
    }

    #[test]
    fn kubespray_add_on_its_own_line() {
        let text = KUBESPRAY.replace("   --resolv-conf=/etc/resolv.conf  \"", " \"");
        let out = set_ok(
            &text,
            "KUBELET_ARGS",
            "resolv-conf",
            "/run/systemd/resolve/resolv.conf",
        );
        assert!(out.contains("--runtime-cgroups=/system.slice/containerd.service \\\n--resolv-conf=/run/systemd/resolve/resolv.conf \\\n \"\n"), "{out}");
        assert_changed(&text, &out, &[], &[6]);
    }

    #[test]
    fn kubeadm_one_line() {
        let text = "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock --pod-infra-container-image=registry.k8s.io/pause:3.9\"\n";
        let out = set_ok(
            text,
            "KUBELET_KUBEADM_ARGS",
            "resolv-conf",
            "/run/systemd/resolve/resolv.conf",
        );
        assert_eq!(
            out,
            "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock --pod-infra-container-image=registry.k8s.io/pause:3.9 --resolv-conf=/run/systemd/resolve/resolv.conf\"\n"
        );
        assert_eq!(remove_ok(&out, "KUBELET_KUBEADM_ARGS", "resolv-conf"), text);
        let out = remove_ok(text, "KUBELET_KUBEADM_ARGS", "container-runtime-endpoint");
        assert_eq!(
            out,
            "KUBELET_KUBEADM_ARGS=\"--pod-infra-container-image=registry.k8s.io/pause:3.9\"\n"
        );
        let out = remove_ok(&out, "KUBELET_KUBEADM_ARGS", "pod-infra-container-image");
        assert_eq!(out, "KUBELET_KUBEADM_ARGS=\"\"\n");
    }

    #[test]
    fn etc_default_kubelet_empty_unquoted() {
        let text = "KUBELET_EXTRA_ARGS=\n";
        let out = set_ok(
            text,
            "KUBELET_EXTRA_ARGS",
            "resolv-conf",
            "/etc/kubelet/resolv.conf",
        );
        assert_eq!(
            out,
            "KUBELET_EXTRA_ARGS=--resolv-conf=/etc/kubelet/resolv.conf\n"
        );
        let out = set_ok(
            text,
            "KUBELET_EXTRA_ARGS",
            "resolv-conf",
            "/etc/my resolv.conf",
        );
        assert_eq!(
            out,
            "KUBELET_EXTRA_ARGS=--resolv-conf=\\'/etc/my resolv.conf\\'\n"
        );
        let env = EnvFile::parse(&out);
        let flags = env.get("KUBELET_EXTRA_ARGS").expect("var").flags();
        assert_eq!(flags[0].value.as_deref(), Some("/etc/my resolv.conf"));
        assert_eq!(remove_ok(&out, "KUBELET_EXTRA_ARGS", "resolv-conf"), text);
    }

    #[test]
    fn separate_form_keeps_its_form_and_spelling() {
        let text =
            "KUBELET_EXTRA_ARGS=--node-ip=10.0.0.5 --resolv_conf /etc/kubelet-resolv.conf --v=2\n";
        let out = set_ok(text, "KUBELET_EXTRA_ARGS", "resolv-conf", "/run/x");
        assert_eq!(
            out,
            "KUBELET_EXTRA_ARGS=--node-ip=10.0.0.5 --resolv_conf /run/x --v=2\n"
        );
        let out = remove_ok(text, "KUBELET_EXTRA_ARGS", "resolv-conf");
        assert_eq!(out, "KUBELET_EXTRA_ARGS=--node-ip=10.0.0.5 --v=2\n");
        // A flag the facts parser does not know as taking a value, followed by a non-flag.
        let text = "A=\"--node-ip 10.0.0.5 --v=2\"\n";
        assert_eq!(remove_ok(text, "A", "node-ip"), "A=\"--v=2\"\n");
        // …and setting it writes `--node-ip=…`, the form the facts parser can check, even
        // when the value is already right.
        assert_eq!(
            set_ok(text, "A", "node-ip", "10.0.0.5"),
            "A=\"--node-ip=10.0.0.5 --v=2\"\n"
        );
        assert_eq!(
            set_ok(text, "A", "node-ip", "10.0.0.6"),
            "A=\"--node-ip=10.0.0.6 --v=2\"\n"
        );
    }

    #[test]
    fn every_occurrence_is_handled() {
        let text = "A=\"--cluster-dns=10.0.0.10 --v=2 --cluster-dns 169.254.25.10\"\n";
        let out = set_ok(text, "A", "cluster-dns", "169.254.25.10");
        assert_eq!(out, "A=\"--v=2 --cluster-dns 169.254.25.10\"\n");
        let out = remove_ok(text, "A", "cluster-dns");
        assert_eq!(out, "A=\"--v=2\"\n");
        // Duplicates where the last already holds the value: still one edit, not "unchanged".
        let text = "A=\"--resolv-conf=/a --resolv-conf=/b\"\n";
        assert_eq!(
            set_ok(text, "A", "resolv-conf", "/b"),
            "A=\"--resolv-conf=/b\"\n"
        );
    }

    #[test]
    fn quoting_values() {
        let text = "A=\"--v=2\"\n";
        let out = set_ok(text, "A", "resolv-conf", "/etc/my resolv.conf");
        assert_eq!(out, "A=\"--v=2 --resolv-conf='/etc/my resolv.conf'\"\n");
        let out = set_ok(text, "A", "resolv-conf", "/it's $HOME");
        assert_eq!(out, "A=\"--v=2 --resolv-conf=\\\"/it's \\$HOME\\\"\"\n");
        let env = EnvFile::parse(&out);
        let flags = env.get("A").expect("A").flags();
        assert_eq!(flags[1].value.as_deref(), Some("/it's $HOME"));
        let out = set_ok("A='--v=2'\n", "A", "resolv-conf", "/a b");
        assert_eq!(out, "A='--v=2 --resolv-conf=\"/a b\"'\n");
        let err = set_flag("A='--v=2'\n", "A", "resolv-conf", "it's \"x\"").expect_err("quotes");
        assert!(err.to_string().contains("line 1"), "{err}");
        let out = set_ok(text, "A", "cluster-dns", "10.0.0.10,169.254.25.10");
        assert_eq!(out, "A=\"--v=2 --cluster-dns=10.0.0.10,169.254.25.10\"\n");
        let out = set_ok(text, "A", "resolv-conf", "");
        assert_eq!(out, "A=\"--v=2 --resolv-conf=''\"\n");
        // Shell metacharacters mean nothing to systemd, but are quoted all the same.
        let out = set_ok(text, "A", "node-labels", "a=b;c&d|e*`f`");
        assert_eq!(out, "A=\"--v=2 --node-labels='a=b;c&d|e*\\`f\\`'\"\n");
        let env = EnvFile::parse(&out);
        let flags = env.get("A").expect("A").flags();
        assert_eq!(flags[1].value.as_deref(), Some("a=b;c&d|e*`f`"));
    }

    #[test]
    fn missing_variable_is_appended() {
        assert_eq!(
            set_ok("", "A", "resolv-conf", "/x"),
            "A=\"--resolv-conf=/x\"\n"
        );
        assert_eq!(
            set_ok("# c\n", "A", "resolv-conf", "/x"),
            "# c\nA=\"--resolv-conf=/x\"\n"
        );
        assert_eq!(
            set_ok("B=1", "A", "resolv-conf", "/x"),
            "B=1\nA=\"--resolv-conf=/x\""
        );
        assert_eq!(
            set_ok("B=1\r\n", "A", "resolv-conf", "/x"),
            "B=1\r\nA=\"--resolv-conf=/x\"\r\n"
        );
        // systemd ignores `export A=…`, so a real assignment is added.
        let out = set_ok("export A=\"--v=2\"\n", "A", "resolv-conf", "/x");
        assert_eq!(out, "export A=\"--v=2\"\nA=\"--resolv-conf=/x\"\n");
        assert!(
            !remove_flag("B=1\n", "A", "resolv-conf")
                .expect("remove")
                .changed
        );
    }

    #[test]
    fn only_the_effective_assignment_is_edited() {
        let text = "A=\"--resolv-conf=/old\"\nA=\"--resolv-conf=/used\"\n";
        assert_eq!(
            set_ok(text, "A", "resolv-conf", "/new"),
            "A=\"--resolv-conf=/old\"\nA=\"--resolv-conf=/new\"\n"
        );
    }

    #[test]
    fn crlf_and_no_final_newline() {
        let text =
            "# kubelet\r\nA=\"--v=2 \\\r\n--resolv-conf=/etc/resolv.conf \\\r\n--x=1\"\r\nB=2";
        let out = set_ok(text, "A", "resolv-conf", "/r");
        assert_eq!(
            out,
            "# kubelet\r\nA=\"--v=2 \\\r\n--resolv-conf=/r \\\r\n--x=1\"\r\nB=2"
        );
        let out = remove_ok(text, "A", "resolv-conf");
        assert_eq!(out, "# kubelet\r\nA=\"--v=2 \\\r\n--x=1\"\r\nB=2");
        let out = set_ok(text, "A", "cluster-dns", "1.1.1.1");
        assert_eq!(
            out,
            "# kubelet\r\nA=\"--v=2 \\\r\n--resolv-conf=/etc/resolv.conf \\\r\n--x=1 \\\r\n--cluster-dns=1.1.1.1\"\r\nB=2"
        );
        let out = set_ok("A=--v=2", "A", "resolv-conf", "/r");
        assert_eq!(out, "A=--v=2 --resolv-conf=/r");
    }

    #[test]
    fn comments_and_other_variables_survive() {
        let text = "# managed by hand\n; old style comment\nA=\"--v=2\" \nB='--resolv-conf=/b'\nC=x # not a comment\n";
        let out = set_ok(text, "A", "resolv-conf", "/a");
        assert_eq!(
            out,
            "# managed by hand\n; old style comment\nA=\"--v=2 --resolv-conf=/a\" \nB='--resolv-conf=/b'\nC=x # not a comment\n"
        );
        let out = set_ok(text, "B", "resolv-conf", "/c");
        assert_eq!(out, text.replace("/b'", "/c'"));
    }

    #[test]
    fn refuses_unterminated_quotes_with_the_line() {
        let text = "A=1\nKUBELET_ARGS=\"--v=2 \\\n--resolv-conf=/x\n";
        let err = set_flag(text, "KUBELET_ARGS", "resolv-conf", "/y").expect_err("unterminated");
        assert_eq!(
            err.to_string(),
            "edit KUBELET_ARGS (assigned at line 2): the double quote at line 2 is never closed"
        );
        // A word-level quote (inside an unquoted value) that never closes.
        let err = set_flag("\nA=--v=2 '--resolv-conf /x\n", "A", "resolv-conf", "/y")
            .expect_err("unclosed word quote");
        assert!(
            err.to_string()
                .contains("the single quote at line 2 is never closed"),
            "{err}"
        );
        let err = remove_flag("A='--x\n", "A", "x").expect_err("unterminated");
        assert!(err.to_string().contains("line 1"));
    }

    #[test]
    fn refuses_a_flag_across_quotes() {
        let text = "A=\"--v=2 --resolv-conf=\"/x\n";
        let err = set_flag(text, "A", "resolv-conf", "/y").expect_err("across quotes");
        assert!(
            err.to_string().contains("at line 1") && err.to_string().contains("quoted sections"),
            "{err}"
        );
    }

    #[test]
    fn refuses_bad_arguments() {
        assert!(matches!(
            set_flag("", "1A", "x", "y"),
            Err(EnvEditError::InvalidVar { .. })
        ));
        assert!(matches!(
            set_flag("", "A", "--x", "y"),
            Err(EnvEditError::InvalidFlag { .. })
        ));
        assert!(matches!(
            set_flag("", "A", "a b", "y"),
            Err(EnvEditError::InvalidFlag { .. })
        ));
        assert!(matches!(
            set_flag("", "A", "x", "a\nb"),
            Err(EnvEditError::InvalidValue { .. })
        ));
        assert!(matches!(
            set_flag("", "A", "x", "a\\b"),
            Err(EnvEditError::InvalidValue { .. })
        ));
    }

    #[test]
    fn terminator_and_value_words_are_respected() {
        // After `--` nothing is a flag; `--config`'s value is not a flag either.
        let text = "A=\"--config --resolv-conf=/x -- --resolv-conf=/y\"\n";
        let out = set_ok(text, "A", "resolv-conf", "/z");
        assert_eq!(
            out,
            "A=\"--config --resolv-conf=/x --resolv-conf=/z -- --resolv-conf=/y\"\n"
        );
    }

    #[test]
    fn never_panics_on_random_input() {
        let alphabet: &[u8] = b"AB_=\"'\\ \t\r\n#;$`-x=-resolv-conf";
        for bytes in crate::testing::random_inputs(0x2545_f491_4f6c_dd1d, alphabet, 3_000, 80, None)
        {
            let text = String::from_utf8_lossy(&bytes);
            for var in ["A", "B"] {
                if let Ok(edit) = set_flag(&text, var, "resolv-conf", "/a b") {
                    let again = set_flag(&edit.text, var, "resolv-conf", "/a b").expect("again");
                    assert!(!again.changed, "{text:?} → {:?}", edit.text);
                }
                if let Ok(edit) = remove_flag(&text, var, "resolv-conf") {
                    assert!(
                        !remove_flag(&edit.text, var, "resolv-conf")
                            .expect("again")
                            .changed
                    );
                }
            }
        }
    }
}
