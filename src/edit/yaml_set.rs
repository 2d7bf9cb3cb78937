//! Sets or removes one key in a YAML file humans own: the kubelet config (Kubespray's
//! `/etc/kubernetes/kubelet-config.yaml`, kubeadm's `/var/lib/kubelet/config.yaml`) or k3s's
//! `config.yaml`. Only the target key's line(s) change; comments (also a trailing one on the
//! target line), blank lines, key order, indentation, other values' quoting, `---`, CRLF and
//! a missing final newline survive byte for byte.
//!
//! How: a line scanner that knows the block-style YAML these files are written in (block
//! mappings and lists, one-line scalars and flow lists) finds the key, and the edit is
//! spliced into the original text. The scanner is not trusted on its own: every result is
//! parsed again with serde_norway and must equal the original document with exactly that
//! key changed, in the same key order. Anything the scanner does not understand at the
//! target (anchors, aliases, tags, merge keys, flow mappings, block or multi-line scalars,
//! several documents) is refused with the line, never guessed at.
//!
//! Choices where there was no single right answer:
//! - a replaced scalar keeps its quoting style; a plain one becomes double-quoted only when
//!   the new string would not read back as that string, also under YAML 1.1 (`yes`, `0777`),
//!   which is what kubelet's go-yaml uses;
//! - a list replaces a block list item by item (untouched items, their comments and the
//!   comments between items stay; a rewritten item keeps its trailing comment, like a
//!   rewritten scalar), a flow list as a flow list; a new list, also one replacing a scalar
//!   or null, is a block list with the dash at the file's own offset (taken from its first
//!   block list; kubeadm's offset 0 when there is none); an empty list is written `[]`;
//! - an absent key goes right after the last entry of its mapping, before any comment lines
//!   that follow it: a trailing comment block is usually a footer or commented-out options,
//!   not part of the last entry. Into an empty document it goes at the end (before `...`);
//! - keys are dotted paths (`authentication.x509.clientCAFile`), so a key containing `.`
//!   (such as `evictionHard`'s `memory.available`) cannot be addressed; missing mappings on
//!   the path are created, a null one written `key:` is filled in, one written `key: ~` is
//!   refused;
//! - removing a key removes its lines (and comments inside its value), not the comment
//!   above it; removing the only key of a mapping is refused, because the mapping would
//!   become null rather than empty.
//!
//! Never: write files, reorder or reformat anything else, or return text that has not
//! passed the parse-and-compare proof.

use std::ops::Range;

use serde::Deserialize;
use serde_norway::{Mapping, Value};

use super::{Edit, line_ending, splice};

/// The values dnsfix sets: `resolvConf` (a string) and `clusterDNS` (a list of strings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum YamlValue {
    String(String),
    List(Vec<String>),
}

impl YamlValue {
    fn to_value(&self) -> Value {
        match self {
            YamlValue::String(s) => Value::String(s.clone()),
            YamlValue::List(items) => {
                Value::Sequence(items.iter().map(|s| Value::String(s.clone())).collect())
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum YamlEditError {
    #[error("parse the yaml at line {line}, column {column}: {message}")]
    Parse {
        line: usize,
        column: usize,
        message: String,
    },
    #[error(
        "edit a file of several yaml documents (the second starts at line {line}); only \
         single-document files are edited"
    )]
    MultiDocument { line: usize },
    #[error("use `{key}` as a key path: {reason}")]
    InvalidKey { key: String, reason: &'static str },
    #[error("set `{key}`: {what} at line {line} is not a mapping")]
    NotAMapping {
        key: String,
        what: String,
        line: usize,
    },
    #[error("edit `{key}` at line {line}: {what}; edit this by hand")]
    Unsupported {
        key: String,
        line: usize,
        what: String,
    },
    #[error("prove the edit of `{key}` at line {line}: {reason}")]
    Verify {
        key: String,
        line: usize,
        reason: String,
    },
}

/// Sets `key` (a top-level key or a dotted path of block mappings) to `value`. Setting the
/// current value returns the identical text with `changed: false`.
pub fn set(text: &str, key: &str, value: &YamlValue) -> Result<Edit, YamlEditError> {
    edit(text, key, Some(value))
}

/// Removes `key` with its value. An absent key is no change.
pub fn remove(text: &str, key: &str) -> Result<Edit, YamlEditError> {
    edit(text, key, None)
}

/// [`set`], or [`remove`] with `None`, for a file whose reader takes a key written twice as
/// its last value: the kubelet's `--config` file, which the kubelet decodes again leniently
/// where strict decoding fails (an `echo 'resolvConf: …' >>` edit) and starts with. Where the
/// top-level key of `key` is written more than once, its earlier entries go and the last one
/// is edited, so the file decodes strictly again. Where the last one already holds what is
/// wanted, the file stays as it is: the kubelet reads that value now. Any other repeated key
/// is refused as [`set`] refuses it.
pub fn set_last_wins(
    text: &str,
    key: &str,
    value: Option<&YamlValue>,
) -> Result<Edit, YamlEditError> {
    let path = parse_path(key)?;
    let Some(single) = drop_earlier_repeats(text, key, path[0])? else {
        return edit(text, key, value);
    };
    let edited = edit(&single, key, value)?;
    if !edited.changed {
        return Ok(Edit::unchanged(text));
    }
    Ok(Edit::between(text, edited.text))
}

/// `text` without the earlier entries of the top-level key `top` where strict parsing
/// refuses `text` for repeating it, and for nothing else; `None` where it parses. The proof:
/// the result parses strictly to what the lenient reader reads from `text` (the key's
/// place among the others aside).
fn drop_earlier_repeats(text: &str, key: &str, top: &str) -> Result<Option<String>, YamlEditError> {
    let refused = match parse_single(text) {
        Ok(_) => return Ok(None),
        Err(error) if is_repeated_key(&error) => error,
        Err(error) => return Err(error),
    };
    let Some(lenient) = crate::facts::kubelet_config::last_wins(text) else {
        return Err(refused);
    };
    let doc = Doc::scan(text);
    let path = [top];
    let ctx = Ctx {
        doc: &doc,
        key,
        path: &path,
    };
    let Some((range, indent)) = ctx.root()? else {
        return Err(refused);
    };
    let entries = ctx.entries(range, indent)?;
    let repeats: Vec<&Entry> = entries.iter().filter(|e| e.name == top).collect();
    let Some((last, earlier)) = repeats.split_last() else {
        return Err(refused);
    };
    if earlier.is_empty() {
        return Err(refused);
    }
    if let Some(anchored) = earlier.iter().find(|e| e.inline.props) {
        return Err(ctx.unsupported(anchored.line, "an anchor or tag on a repeated key"));
    }
    let cut = earlier
        .iter()
        .map(|e| ctx.delete_lines(e.line, e.last))
        .collect();
    let verify_error = |reason: &str| YamlEditError::Verify {
        key: key.to_string(),
        line: last.line + 1,
        reason: reason.to_string(),
    };
    let single = splice(text, cut).ok_or_else(|| verify_error("the repeated entries overlap"))?;
    let after = match parse_single(&single) {
        Ok(after) => after,
        // Another key is written twice too: name it where it is in `text`.
        Err(YamlEditError::Parse { message, .. }) => {
            let (line, column) = duplicate_at(text, &message).unwrap_or((0, 0));
            return Err(YamlEditError::Parse {
                line,
                column,
                message,
            });
        }
        Err(error) => return Err(error),
    };
    if !same_but_place_of(&lenient, &after, top) {
        return Err(verify_error(
            "without the earlier entries the file does not read as the kubelet reads it now",
        ));
    }
    Ok(Some(single))
}

fn is_repeated_key(error: &YamlEditError) -> bool {
    matches!(error, YamlEditError::Parse { message, .. } if message.contains(REPEATED_KEY))
}

/// Whether two mappings hold the same keys with the same values, in the same order apart
/// from `key`'s place.
fn same_but_place_of(a: &Value, b: &Value, key: &str) -> bool {
    let (Value::Mapping(a), Value::Mapping(b)) = (a, b) else {
        return false;
    };
    let key = Value::String(key.to_string());
    let (mut a_rest, mut b_rest) = (a.clone(), b.clone());
    let a_value = a_rest.shift_remove(&key);
    let b_value = b_rest.shift_remove(&key);
    let same_value = match (&a_value, &b_value) {
        (Some(x), Some(y)) => strict_eq(x, y),
        _ => false,
    };
    same_value && strict_eq(&Value::Mapping(a_rest), &Value::Mapping(b_rest))
}

fn edit(text: &str, key: &str, value: Option<&YamlValue>) -> Result<Edit, YamlEditError> {
    let path = parse_path(key)?;
    let original = parse_single(text)?;
    let wanted = value.map(YamlValue::to_value);
    let current = get_path(&original, &path);
    let same = match (current, &wanted) {
        (Some(a), Some(b)) => strict_eq(a, b),
        (None, None) => true,
        _ => false,
    };
    if same {
        return Ok(Edit::unchanged(text));
    }
    let doc = Doc::scan(text);
    let ctx = Ctx {
        doc: &doc,
        key,
        path: &path,
    };
    let found = ctx.locate()?;
    // The scanner and the parser must agree on whether the key is there before anything is
    // spliced; a disagreement means a layout the scanner misread.
    let (line, in_text) = match &found {
        Found::Entry { entry, .. } => (entry.line + 1, true),
        Found::Missing { at, .. } => (
            match at {
                Insert::After(line) => line + 1,
                Insert::End => doc.lines.len().max(1),
            },
            false,
        ),
    };
    if in_text != current.is_some() {
        return Err(YamlEditError::Verify {
            key: key.to_string(),
            line,
            reason: format!(
                "the text scan and the yaml parser disagree on whether the key exists ({} vs \
                 {})",
                if in_text { "found" } else { "absent" },
                if current.is_some() { "found" } else { "absent" },
            ),
        });
    }
    let edits = match (&found, value) {
        (Found::Entry { entry, .. }, Some(value)) => ctx.set_entry(entry, value, current)?,
        (Found::Entry { entry, siblings }, None) => ctx.remove_entry(entry, *siblings)?,
        (Found::Missing { depth, at, indent }, Some(value)) => {
            vec![ctx.insert_missing(&path[*depth..], value, *at, *indent)]
        }
        (Found::Missing { .. }, None) => return Ok(Edit::unchanged(text)),
    };
    let new_text = splice(text, edits).ok_or_else(|| YamlEditError::Verify {
        key: key.to_string(),
        line,
        reason: "the planned splices overlap".to_string(),
    })?;
    verify(&original, &path, wanted, &new_text).map_err(|reason| YamlEditError::Verify {
        key: key.to_string(),
        line,
        reason,
    })?;
    Ok(Edit::between(text, new_text))
}

fn parse_path(key: &str) -> Result<Vec<&str>, YamlEditError> {
    let invalid = |reason| YamlEditError::InvalidKey {
        key: key.to_string(),
        reason,
    };
    if key.is_empty() {
        return Err(invalid("it is empty"));
    }
    let path: Vec<&str> = key.split('.').collect();
    if path.iter().any(|segment| segment.is_empty()) {
        return Err(invalid("a dotted path must not have empty segments"));
    }
    if path
        .iter()
        .any(|segment| segment.chars().any(char::is_control))
    {
        return Err(invalid("it contains control characters"));
    }
    Ok(path)
}

/// Parses a single-document YAML text. Several documents are refused: which one kubelet
/// would read is not this module's call.
fn parse_single(text: &str) -> Result<Value, YamlEditError> {
    let mut documents = serde_norway::Deserializer::from_str(text);
    let Some(first) = documents.next() else {
        return Ok(Value::Null);
    };
    let value = Value::deserialize(first).map_err(|error| parse_error(text, error))?;
    if let Some(second) = documents.next() {
        if let Err(error) = Value::deserialize(second)
            && error.location().is_some()
        {
            return Err(parse_error(text, error));
        }
        return Err(YamlEditError::MultiDocument {
            line: Doc::scan(text).second_document_line(),
        });
    }
    Ok(value)
}

fn parse_error(text: &str, error: serde_norway::Error) -> YamlEditError {
    let (mut line, mut column) = error
        .location()
        .map_or((0, 0), |at| (at.line(), at.column()));
    // serde_norway places a duplicate key at the start of its mapping; point at the
    // second occurrence instead, which is the line a human has to fix.
    let message = error.to_string();
    if let Some(at) = duplicate_at(text, &message) {
        (line, column) = at;
    }
    YamlEditError::Parse {
        line,
        column,
        message,
    }
}

/// serde_norway's error for a key written twice in one mapping (after the path to the
/// mapping, `authentication: duplicate …`, where it is nested).
const REPEATED_KEY: &str = "duplicate entry with key ";

/// For serde_norway's repeated-key error: the line and column of the key's second entry.
fn duplicate_at(text: &str, message: &str) -> Option<(usize, usize)> {
    let (_, rest) = message.split_once(REPEATED_KEY)?;
    // The quoted key is followed by " at line …"; read just the first JSON string.
    let key = serde_json::Deserializer::from_str(rest)
        .into_iter::<String>()
        .next()?
        .ok()?;
    Doc::scan(text).duplicate_key_line(&key)
}

/// The proof: the edited text parses to the original document with exactly `path` changed.
fn verify(
    original: &Value,
    path: &[&str],
    wanted: Option<Value>,
    new_text: &str,
) -> Result<(), String> {
    let after = parse_single(new_text)
        .map_err(|error| format!("the edited text no longer parses ({error})"))?;
    let mut expected = original.clone();
    apply_change(&mut expected, path, wanted);
    if strict_eq(&expected, &after) {
        Ok(())
    } else {
        Err("the edited document differs from the original in more than that key".to_string())
    }
}

fn get_path<'v>(root: &'v Value, path: &[&str]) -> Option<&'v Value> {
    path.iter().try_fold(root, |node, segment| match node {
        Value::Mapping(map) => map.get(*segment),
        _ => None,
    })
}

/// What the edit must do to the parsed document. New intermediate mappings are created;
/// a null intermediate becomes a mapping, as it does in the text.
fn apply_change(node: &mut Value, path: &[&str], wanted: Option<Value>) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    if node.is_null() && wanted.is_some() {
        *node = Value::Mapping(Mapping::new());
    }
    let Value::Mapping(map) = node else {
        return;
    };
    let key = Value::String((*first).to_string());
    if rest.is_empty() {
        match wanted {
            Some(value) => {
                map.insert(key, value);
            }
            None => {
                map.shift_remove(&key);
            }
        }
    } else if let Some(child) = map.get_mut(&key) {
        apply_change(child, rest, wanted);
    } else if wanted.is_some() {
        let mut child = Value::Null;
        apply_change(&mut child, rest, wanted);
        map.insert(key, child);
    }
}

/// Equality that also requires mapping keys in the same order (`Mapping`'s own `==`
/// ignores order, and an edit must not reorder keys).
fn strict_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Mapping(x), Value::Mapping(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((ka, va), (kb, vb))| strict_eq(ka, kb) && strict_eq(va, vb))
        }
        (Value::Sequence(x), Value::Sequence(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| strict_eq(a, b))
        }
        (Value::Tagged(x), Value::Tagged(y)) => x.tag == y.tag && strict_eq(&x.value, &y.value),
        _ => a == b,
    }
}

// ---------------------------------------------------------------------------------------
// The line scanner.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Blank,
    Comment,
    Content,
    /// Inside a value that started on an earlier line (block scalar, multi-line quoted
    /// scalar or flow collection).
    Continuation,
    DocStart,
    DocEnd,
    Directive,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    Single,
    Double,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    /// Nothing but maybe a comment: the value is on the following lines, or null.
    Empty,
    /// A scalar that ends on this line.
    Scalar(Style),
    /// A quoted scalar that continues on the next line.
    OpenScalar,
    Flow {
        list: bool,
        closed: bool,
    },
    BlockScalar,
    Alias,
}

#[derive(Debug, Clone)]
struct Inline {
    /// The value token's bytes in the text.
    span: Range<usize>,
    token: Token,
    /// An anchor (`&a`) or tag (`!t`) precedes the value.
    props: bool,
}

#[derive(Debug, Clone)]
enum KeyToken {
    Simple {
        name: String,
        colon_end: usize,
    },
    /// `? key` syntax.
    Complex,
}

#[derive(Debug, Clone)]
struct Node {
    /// Number of `- ` sequence indicators before the node.
    dashes: usize,
    key: Option<KeyToken>,
    inline: Inline,
}

#[derive(Debug, Clone)]
struct Line {
    start: usize,
    /// End of the content, before `\r\n` or `\n`.
    end: usize,
    /// Start of the next line; equal to `end` on a last line without a line ending.
    next: usize,
    indent: usize,
    kind: Kind,
    node: Option<Node>,
}

/// A value that spans lines, being followed by the scanner.
#[derive(Debug, Clone, Copy)]
enum Open {
    Double,
    Single,
    Flow { depth: usize, quote: Option<u8> },
    Block { indent: usize },
}

#[derive(Debug)]
struct Doc<'a> {
    text: &'a str,
    lines: Vec<Line>,
    eol: &'static str,
    /// A line with content after `---`, which the scanner does not handle.
    marker_content: Option<usize>,
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_blank(b[i]) {
        i += 1;
    }
    i
}

/// Index just past the closing quote of a double-quoted scalar whose content starts at
/// `from`, or `None` when it does not close before the end of `b`.
fn close_double(b: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

fn close_single(b: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < b.len() {
        if b[i] == b'\'' {
            if b.get(i + 1) == Some(&b'\'') {
                i += 2;
                continue;
            }
            return Some(i + 1);
        }
        i += 1;
    }
    None
}

/// Follows a flow collection through `b` from `from`. Returns the index past the closing
/// bracket, or the state to continue with on the next line.
fn scan_flow(
    b: &[u8],
    from: usize,
    mut depth: usize,
    mut quote: Option<u8>,
) -> Result<usize, (usize, Option<u8>)> {
    let mut i = from;
    while i < b.len() {
        if let Some(q) = quote {
            let closed = if q == b'"' {
                close_double(b, i)
            } else {
                close_single(b, i)
            };
            match closed {
                Some(at) => {
                    quote = None;
                    i = at;
                    continue;
                }
                None => return Err((depth, quote)),
            }
        }
        match b[i] {
            b'"' | b'\'' => quote = Some(b[i]),
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Ok(i + 1);
                }
            }
            // A comment inside a flow collection runs to the end of the line.
            b'#' if i == 0 || is_blank(b[i - 1]) => return Err((depth, None)),
            _ => {}
        }
        i += 1;
    }
    Err((depth, quote))
}

/// Decodes a double-quoted YAML scalar body (between the quotes). `None` for escapes this
/// module does not need to understand; such a key is then simply not matched.
fn decode_double(body: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let escaped = chars.next()?;
        let simple = match escaped {
            '0' => '\0',
            'a' => '\u{7}',
            'b' => '\u{8}',
            't' | '\t' => '\t',
            'n' => '\n',
            'v' => '\u{b}',
            'f' => '\u{c}',
            'r' => '\r',
            'e' => '\u{1b}',
            ' ' => ' ',
            '"' => '"',
            '/' => '/',
            '\\' => '\\',
            'N' => '\u{85}',
            '_' => '\u{a0}',
            'L' => '\u{2028}',
            'P' => '\u{2029}',
            'x' | 'u' | 'U' => {
                let len = match escaped {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex: String = chars.by_ref().take(len).collect();
                if hex.len() != len {
                    return None;
                }
                char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?
            }
            _ => return None,
        };
        out.push(simple);
    }
    Some(out)
}

fn parse_key(b: &[u8], text: &str, i: usize) -> Option<(KeyToken, usize)> {
    let colon_after = |j: usize| -> Option<usize> {
        let j = skip_blanks(b, j);
        (b.get(j) == Some(&b':') && b.get(j + 1).is_none_or(|c| is_blank(*c))).then_some(j + 1)
    };
    match *b.get(i)? {
        b'"' => {
            let close = close_double(b, i + 1)?;
            let colon_end = colon_after(close)?;
            let name = decode_double(text.get(i + 1..close - 1)?)?;
            Some((KeyToken::Simple { name, colon_end }, colon_end))
        }
        b'\'' => {
            let close = close_single(b, i + 1)?;
            let colon_end = colon_after(close)?;
            let name = text.get(i + 1..close - 1)?.replace("''", "'");
            Some((KeyToken::Simple { name, colon_end }, colon_end))
        }
        b'?' if b.get(i + 1).is_none_or(|c| is_blank(*c)) => Some((KeyToken::Complex, b.len())),
        b'[' | b'{' | b'&' | b'*' | b'!' | b'|' | b'>' | b'%' | b'@' | b'`' | b'#' => None,
        _ => {
            let mut j = i;
            while j < b.len() {
                if b[j] == b':' && b.get(j + 1).is_none_or(|c| is_blank(*c)) {
                    let name = text.get(i..j)?.trim_end_matches([' ', '\t']).to_string();
                    return Some((
                        KeyToken::Simple {
                            name,
                            colon_end: j + 1,
                        },
                        j + 1,
                    ));
                }
                if is_blank(b[j]) && b.get(j + 1) == Some(&b'#') {
                    return None;
                }
                j += 1;
            }
            None
        }
    }
}

/// Reads the value part of a line from `from` (just after `key:` or the dashes).
fn parse_inline(b: &[u8], from: usize, node_column: usize) -> (Inline, Option<Open>) {
    let mut i = skip_blanks(b, from);
    let mut props = false;
    while matches!(b.get(i), Some(b'&' | b'!')) {
        props = true;
        while i < b.len() && !is_blank(b[i]) {
            i += 1;
        }
        i = skip_blanks(b, i);
    }
    let inline = |end: usize, token: Token| Inline {
        span: i..end,
        token,
        props,
    };
    match b.get(i) {
        None | Some(b'#') => (inline(i, Token::Empty), None),
        Some(b'"') => match close_double(b, i + 1) {
            Some(end) => (inline(end, Token::Scalar(Style::Double)), None),
            None => (inline(b.len(), Token::OpenScalar), Some(Open::Double)),
        },
        Some(b'\'') => match close_single(b, i + 1) {
            Some(end) => (inline(end, Token::Scalar(Style::Single)), None),
            None => (inline(b.len(), Token::OpenScalar), Some(Open::Single)),
        },
        Some(&open @ (b'[' | b'{')) => {
            let list = open == b'[';
            match scan_flow(b, i, 0, None) {
                Ok(end) => (inline(end, Token::Flow { list, closed: true }), None),
                Err((depth, quote)) => (
                    inline(
                        b.len(),
                        Token::Flow {
                            list,
                            closed: false,
                        },
                    ),
                    Some(Open::Flow { depth, quote }),
                ),
            }
        }
        Some(b'|' | b'>') => (
            inline(b.len(), Token::BlockScalar),
            Some(Open::Block {
                indent: node_column,
            }),
        ),
        Some(b'*') => {
            let mut end = i;
            while end < b.len() && !is_blank(b[end]) {
                end += 1;
            }
            (inline(end, Token::Alias), None)
        }
        Some(_) => {
            let mut end = i;
            while end < b.len() && !(is_blank(b[end]) && b.get(end + 1) == Some(&b'#')) {
                end += 1;
            }
            while end > i && is_blank(b[end - 1]) {
                end -= 1;
            }
            (inline(end, Token::Scalar(Style::Plain)), None)
        }
    }
}

impl<'a> Doc<'a> {
    fn scan(text: &'a str) -> Doc<'a> {
        let mut lines = Vec::new();
        let mut start = if text.starts_with('\u{feff}') { 3 } else { 0 };
        while start < text.len() {
            let (end, next) = match text[start..].find('\n') {
                Some(at) => {
                    let newline = start + at;
                    let end = if text[..newline].ends_with('\r') {
                        newline - 1
                    } else {
                        newline
                    };
                    (end.max(start), newline + 1)
                }
                None => (text.len(), text.len()),
            };
            let indent = text.as_bytes()[start..end]
                .iter()
                .take_while(|b| **b == b' ')
                .count();
            lines.push(Line {
                start,
                end,
                next,
                indent,
                kind: Kind::Blank,
                node: None,
            });
            start = next;
        }
        let mut doc = Doc {
            text,
            lines,
            eol: line_ending(text),
            marker_content: None,
        };
        doc.classify();
        doc
    }

    fn classify(&mut self) {
        let text = self.text;
        let mut open: Option<Open> = None;
        let mut seen_content = false;
        let mut marker_content = None;
        for (index, line) in self.lines.iter_mut().enumerate() {
            let content = &text[line.start..line.end];
            let b = &text.as_bytes()[..line.end];
            let trimmed = content.trim_start_matches([' ', '\t']);
            if let Some(Open::Block { indent }) = open {
                if trimmed.is_empty() || line.indent > indent {
                    line.kind = Kind::Continuation;
                    continue;
                }
                open = None;
            }
            if let Some(state) = open {
                line.kind = Kind::Continuation;
                open = match state {
                    Open::Double => close_double(b, line.start).is_none().then_some(state),
                    Open::Single => close_single(b, line.start).is_none().then_some(state),
                    Open::Flow { depth, quote } => scan_flow(b, line.start, depth, quote)
                        .err()
                        .map(|(depth, quote)| Open::Flow { depth, quote }),
                    Open::Block { .. } => None,
                };
                continue;
            }
            let marker = |m: &str| {
                content.starts_with(m)
                    && content[3..]
                        .bytes()
                        .next()
                        .is_none_or(|c| c == b' ' || c == b'\t')
            };
            line.kind = if trimmed.is_empty() {
                Kind::Blank
            } else if trimmed.starts_with('#') {
                Kind::Comment
            } else if marker("---") {
                let rest = content[3..].trim_start_matches([' ', '\t']);
                if !rest.is_empty() && !rest.starts_with('#') && marker_content.is_none() {
                    marker_content = Some(index);
                }
                Kind::DocStart
            } else if marker("...") {
                Kind::DocEnd
            } else if content.starts_with('%') && !seen_content {
                Kind::Directive
            } else {
                Kind::Content
            };
            if line.kind != Kind::Content {
                continue;
            }
            seen_content = true;
            let mut i = line.start + line.indent;
            let mut dashes = 0;
            while b.get(i) == Some(&b'-') && b.get(i + 1).is_none_or(|c| is_blank(*c)) {
                dashes += 1;
                i = skip_blanks(b, i + 1);
            }
            let node_column = i - line.start;
            let (key, value_from) = match parse_key(b, text, i) {
                Some((key, after)) => (Some(key), after),
                None => (None, i),
            };
            let (inline, opened) = parse_inline(b, value_from, node_column);
            open = opened;
            line.node = Some(Node {
                dashes,
                key,
                inline,
            });
        }
        self.marker_content = marker_content;
    }

    /// 1-based line and column of the second `key:` at the same indentation, for a
    /// duplicate-key error.
    fn duplicate_key_line(&self, key: &str) -> Option<(usize, usize)> {
        let mut seen: Vec<usize> = Vec::new();
        for (index, line) in self.lines.iter().enumerate() {
            let Some(Node {
                key: Some(KeyToken::Simple { name, .. }),
                dashes: 0,
                ..
            }) = &line.node
            else {
                continue;
            };
            if name == key {
                if seen.contains(&line.indent) {
                    return Some((index + 1, line.indent + 1));
                }
                seen.push(line.indent);
            }
        }
        None
    }

    /// 1-based line where a second document begins, for the error message.
    fn second_document_line(&self) -> usize {
        let mut seen = false;
        for (index, line) in self.lines.iter().enumerate() {
            match line.kind {
                Kind::DocStart if seen => return index + 1,
                Kind::DocStart | Kind::Content | Kind::DocEnd => seen = true,
                _ => {}
            }
        }
        1
    }

    /// Mapping indentation step: how far the first nested key is indented under its parent.
    fn step(&self) -> usize {
        self.child_offset(|node| node.dashes == 0 && node.key.is_some(), true)
            .unwrap_or(2)
    }

    /// Where block list dashes sit relative to their key: 0 for kubeadm (`- x` under
    /// `key:`), 2 for Kubespray. Taken from the file's first block list.
    fn sequence_offset(&self) -> usize {
        self.child_offset(|node| node.dashes > 0, false)
            .unwrap_or(0)
    }

    fn child_offset(&self, child: impl Fn(&Node) -> bool, strictly_deeper: bool) -> Option<usize> {
        let content: Vec<usize> = (0..self.lines.len())
            .filter(|&i| self.lines[i].kind == Kind::Content)
            .collect();
        content.windows(2).find_map(|pair| {
            let (parent, next) = (&self.lines[pair[0]], &self.lines[pair[1]]);
            let parent_node = parent.node.as_ref()?;
            let next_node = next.node.as_ref()?;
            let is_parent = parent_node.dashes == 0
                && parent_node.key.is_some()
                && parent_node.inline.token == Token::Empty;
            let deeper = if strictly_deeper {
                next.indent > parent.indent
            } else {
                next.indent >= parent.indent
            };
            (is_parent && deeper && child(next_node)).then(|| next.indent - parent.indent)
        })
    }
}

/// One `key: value` entry of a block mapping.
#[derive(Debug, Clone)]
struct Entry {
    /// Line index (0-based) of the key.
    line: usize,
    name: String,
    colon_end: usize,
    inline: Inline,
    /// Last line index that belongs to the value (trailing blank and comment lines do not).
    last: usize,
}

#[derive(Debug, Clone, Copy)]
enum Insert {
    /// After this line index.
    After(usize),
    /// At the end of the document.
    End,
}

#[derive(Debug)]
enum Found {
    Entry {
        entry: Entry,
        /// How many entries its mapping has, itself included.
        siblings: usize,
    },
    /// `path[depth]` is absent from an existing (or null) mapping.
    Missing {
        depth: usize,
        at: Insert,
        indent: usize,
    },
}

/// The current value of a found key, as far as this module edits it.
#[derive(Debug)]
enum Current {
    Null,
    Scalar { span: Range<usize>, style: Style },
    FlowList { span: Range<usize> },
    BlockList { items: Vec<Item> },
}

#[derive(Debug)]
struct Item {
    line: usize,
    span: Range<usize>,
    style: Style,
}

/// One edit call's view of the scanned document.
struct Ctx<'d, 'a> {
    doc: &'d Doc<'a>,
    key: &'d str,
    path: &'d [&'d str],
}

impl Ctx<'_, '_> {
    fn unsupported(&self, line: usize, what: impl Into<String>) -> YamlEditError {
        YamlEditError::Unsupported {
            key: self.key.to_string(),
            line: line + 1,
            what: what.into(),
        }
    }

    fn not_a_mapping(&self, line: usize, what: impl Into<String>) -> YamlEditError {
        YamlEditError::NotAMapping {
            key: self.key.to_string(),
            what: what.into(),
            line: line + 1,
        }
    }

    fn lines(&self) -> &[Line] {
        &self.doc.lines
    }

    /// The root mapping's lines and indentation; `None` for an empty document.
    fn root(&self) -> Result<Option<(Range<usize>, usize)>, YamlEditError> {
        if let Some(line) = self.doc.marker_content {
            return Err(self.unsupported(line, "content on the `---` line"));
        }
        let Some(first) = self.lines().iter().position(|l| l.kind == Kind::Content) else {
            return Ok(None);
        };
        let line = &self.lines()[first];
        let Some(node) = &line.node else {
            return Ok(None);
        };
        if node.dashes > 0 {
            return Err(self.not_a_mapping(first, "the document root (a list)"));
        }
        match (&node.key, node.inline.token) {
            (Some(KeyToken::Simple { .. }), _) => {
                Ok(Some((first..self.lines().len(), line.indent)))
            }
            (Some(KeyToken::Complex), _) => Err(self.unsupported(first, "a `? key` entry")),
            (None, Token::Flow { list: false, .. }) => {
                Err(self.unsupported(first, "a flow mapping `{…}` as the document root"))
            }
            (None, _) => Err(self.not_a_mapping(first, "the document root")),
        }
    }

    /// The entries of the block mapping at `indent` within `range`.
    fn entries(&self, range: Range<usize>, indent: usize) -> Result<Vec<Entry>, YamlEditError> {
        let mut out: Vec<Entry> = Vec::new();
        for i in range {
            let line = &self.lines()[i];
            match line.kind {
                Kind::Continuation => {
                    if let Some(entry) = out.last_mut() {
                        entry.last = i;
                    }
                    continue;
                }
                Kind::Content => {}
                _ => continue,
            }
            let Some(node) = &line.node else { continue };
            if line.indent > indent {
                match out.last_mut() {
                    Some(entry) => {
                        entry.last = i;
                        continue;
                    }
                    None => return Err(self.unsupported(i, "unexpected indentation")),
                }
            }
            if line.indent < indent {
                return Err(self.unsupported(i, "a line less indented than its mapping"));
            }
            if node.dashes > 0 {
                // kubeadm writes a list at its key's own indentation.
                match out.last_mut() {
                    Some(entry) if entry.inline.token == Token::Empty => {
                        entry.last = i;
                        continue;
                    }
                    _ => {
                        return Err(self.unsupported(i, "a list item where a key was expected"));
                    }
                }
            }
            match &node.key {
                Some(KeyToken::Simple { name, colon_end }) => out.push(Entry {
                    line: i,
                    name: name.clone(),
                    colon_end: *colon_end,
                    inline: node.inline.clone(),
                    last: i,
                }),
                Some(KeyToken::Complex) => return Err(self.unsupported(i, "a `? key` entry")),
                None => {
                    return Err(self.unsupported(i, "a line that is not a `key: value` entry"));
                }
            }
        }
        Ok(out)
    }

    fn locate(&self) -> Result<Found, YamlEditError> {
        let Some((mut range, mut indent)) = self.root()? else {
            return Ok(Found::Missing {
                depth: 0,
                at: Insert::End,
                indent: 0,
            });
        };
        for (depth, segment) in self.path.iter().enumerate() {
            let prefix = self.path[..=depth].join(".");
            let entries = self.entries(range.clone(), indent)?;
            if let Some(merge) = entries.iter().find(|e| e.name == "<<") {
                return Err(self.unsupported(merge.line, "a `<<` merge key in the same mapping"));
            }
            let mut matching = entries.iter().filter(|e| e.name == *segment);
            let Some(entry) = matching.next() else {
                let at = entries
                    .last()
                    .map_or(Insert::End, |e| Insert::After(e.last));
                return Ok(Found::Missing { depth, at, indent });
            };
            if let Some(duplicate) = matching.next() {
                return Err(self.unsupported(duplicate.line, format!("`{prefix}` appears twice")));
            }
            if depth + 1 == self.path.len() {
                return Ok(Found::Entry {
                    entry: entry.clone(),
                    siblings: entries.len(),
                });
            }
            if entry.inline.props {
                return Err(self.unsupported(entry.line, format!("an anchor or tag on `{prefix}`")));
            }
            match entry.inline.token {
                Token::Empty => {
                    let children = entry.line + 1..entry.last + 1;
                    let first = children.clone().find(|&i| {
                        matches!(self.lines()[i].kind, Kind::Content | Kind::Continuation)
                    });
                    let key_indent = self.lines()[entry.line].indent;
                    let Some(first) = first else {
                        return Ok(Found::Missing {
                            depth: depth + 1,
                            at: Insert::After(entry.line),
                            indent: key_indent + self.doc.step(),
                        });
                    };
                    let line = &self.lines()[first];
                    let is_mapping = line.kind == Kind::Content
                        && line.indent > key_indent
                        && line.node.as_ref().is_some_and(|n| n.dashes == 0);
                    if !is_mapping {
                        return Err(self.not_a_mapping(entry.line, format!("`{prefix}`")));
                    }
                    range = children;
                    indent = line.indent;
                }
                Token::Flow { list: false, .. } => {
                    return Err(self
                        .unsupported(entry.line, format!("`{prefix}` is a flow mapping `{{…}}`")));
                }
                Token::Alias => {
                    return Err(self.unsupported(entry.line, format!("`{prefix}` is an alias")));
                }
                _ => return Err(self.not_a_mapping(entry.line, format!("`{prefix}`"))),
            }
        }
        Err(YamlEditError::InvalidKey {
            key: self.key.to_string(),
            reason: "it is empty",
        })
    }

    /// What the found key holds now, or why it is not edited.
    fn current(&self, entry: &Entry) -> Result<Current, YamlEditError> {
        if entry.inline.props {
            return Err(self.unsupported(entry.line, "an anchor or tag on the value"));
        }
        let multi_line = entry.last > entry.line;
        match entry.inline.token {
            Token::Empty => {
                let content: Vec<usize> = (entry.line + 1..=entry.last)
                    .filter(|&i| matches!(self.lines()[i].kind, Kind::Content | Kind::Continuation))
                    .collect();
                let Some(&first) = content.first() else {
                    return Ok(Current::Null);
                };
                let item_indent = self.lines()[first].indent;
                let mut items = Vec::new();
                for &i in &content {
                    let line = &self.lines()[i];
                    let item = line.node.as_ref().filter(|node| {
                        line.kind == Kind::Content
                            && node.dashes == 1
                            && line.indent == item_indent
                            && node.key.is_none()
                            && !node.inline.props
                    });
                    match item.map(|node| (node.inline.token, node.inline.span.clone())) {
                        Some((Token::Scalar(style), span)) => items.push(Item {
                            line: i,
                            span,
                            style,
                        }),
                        _ if items.is_empty() && !self.is_dash_line(first) => {
                            return Err(self.unsupported(
                                entry.line,
                                "the value is a mapping or spans several lines",
                            ));
                        }
                        _ => {
                            return Err(
                                self.unsupported(i, "a list item that is not a one-line scalar")
                            );
                        }
                    }
                }
                Ok(Current::BlockList { items })
            }
            Token::Scalar(style) if !multi_line => Ok(Current::Scalar {
                span: entry.inline.span.clone(),
                style,
            }),
            Token::Flow {
                list: true,
                closed: true,
            } if !multi_line => Ok(Current::FlowList {
                span: entry.inline.span.clone(),
            }),
            Token::Scalar(_) | Token::OpenScalar => {
                Err(self.unsupported(entry.line, "the value spans several lines"))
            }
            Token::Flow { list: true, .. } => {
                Err(self.unsupported(entry.line, "a flow list over several lines"))
            }
            Token::Flow { list: false, .. } => {
                Err(self.unsupported(entry.line, "the value is a flow mapping `{…}`"))
            }
            Token::BlockScalar => {
                Err(self.unsupported(entry.line, "the value is a block scalar (`|` or `>`)"))
            }
            Token::Alias => Err(self.unsupported(entry.line, "the value is an alias")),
        }
    }

    fn is_dash_line(&self, line: usize) -> bool {
        let line = &self.lines()[line];
        line.kind == Kind::Content && line.node.as_ref().is_some_and(|n| n.dashes > 0)
    }

    fn set_entry(
        &self,
        entry: &Entry,
        value: &YamlValue,
        current_value: Option<&Value>,
    ) -> Result<Vec<(Range<usize>, String)>, YamlEditError> {
        let current = self.current(entry)?;
        let after_colon = entry.colon_end..entry.colon_end;
        let key_indent = self.lines()[entry.line].indent;
        let mut edits = Vec::new();
        match (value, current) {
            (YamlValue::String(s), Current::Null) => {
                edits.push((after_colon, format!(" {}", encode(s, Style::Plain, false))));
            }
            (YamlValue::String(s), Current::Scalar { span, style }) => {
                edits.push((span, encode(s, style, false)));
            }
            (YamlValue::String(s), Current::FlowList { span }) => {
                edits.push((span, encode(s, Style::Plain, false)));
            }
            (YamlValue::String(s), Current::BlockList { items }) => {
                edits.push((after_colon, format!(" {}", encode(s, Style::Plain, false))));
                edits.extend(self.delete_item_lines(&items));
            }
            (YamlValue::List(list), Current::Null) if list.is_empty() => {
                edits.push((after_colon, " []".to_string()));
            }
            (YamlValue::List(list), Current::Scalar { span, .. } | Current::FlowList { span })
                if list.is_empty() =>
            {
                edits.push((span, "[]".to_string()));
            }
            (YamlValue::List(list), Current::BlockList { items }) if list.is_empty() => {
                edits.push((after_colon, " []".to_string()));
                edits.extend(self.delete_item_lines(&items));
            }
            (YamlValue::List(list), Current::Null) => {
                edits.push(self.insert_after(entry.line, self.block_items(key_indent, list)));
            }
            (YamlValue::List(list), Current::Scalar { span, .. }) => {
                // The scalar goes, a trailing comment stays on the key line.
                edits.push((entry.colon_end..span.end, String::new()));
                edits.push(self.insert_after(entry.line, self.block_items(key_indent, list)));
            }
            (YamlValue::List(list), Current::FlowList { span }) => {
                let old = old_items(current_value);
                let flow = self.rebuild_flow(&span, &old, list, entry.line)?;
                edits.push((span, flow));
            }
            (YamlValue::List(list), Current::BlockList { items }) => {
                let old = old_items(current_value);
                if old.len() != items.len() {
                    return Err(YamlEditError::Verify {
                        key: self.key.to_string(),
                        line: entry.line + 1,
                        reason: format!(
                            "the text scan found {} list items, the yaml parser {}",
                            items.len(),
                            old.len()
                        ),
                    });
                }
                for (index, item) in items.iter().enumerate() {
                    match list.get(index) {
                        Some(new) if old[index] != Some(new.as_str()) => {
                            edits.push((item.span.clone(), encode(new, item.style, false)));
                        }
                        _ => {}
                    }
                }
                if list.len() > items.len()
                    && let Some(last) = items.last()
                {
                    // New items copy the last item's indentation, dash spacing and quoting.
                    let prefix = &self.doc.text[self.lines()[last.line].start..last.span.start];
                    let lines = list[items.len()..]
                        .iter()
                        .map(|new| format!("{prefix}{}", encode(new, last.style, false)))
                        .collect();
                    edits.push(self.insert_after(last.line, lines));
                }
                if list.len() < items.len() {
                    edits.extend(self.delete_item_lines(&items[list.len()..]));
                }
            }
        }
        Ok(edits)
    }

    fn remove_entry(
        &self,
        entry: &Entry,
        siblings: usize,
    ) -> Result<Vec<(Range<usize>, String)>, YamlEditError> {
        if siblings == 1 {
            return Err(self.unsupported(
                entry.line,
                "it is the only key of its mapping, which would become null rather than empty",
            ));
        }
        if entry.inline.props {
            return Err(self.unsupported(entry.line, "an anchor or tag on the value"));
        }
        Ok(vec![self.delete_lines(entry.line, entry.last)])
    }

    fn insert_missing(
        &self,
        rest: &[&str],
        value: &YamlValue,
        at: Insert,
        indent: usize,
    ) -> (Range<usize>, String) {
        let step = self.doc.step();
        let mut lines = Vec::new();
        for (depth, segment) in rest.iter().enumerate() {
            let pad = " ".repeat(indent + depth * step);
            let key = encode_key(segment);
            if depth + 1 < rest.len() {
                lines.push(format!("{pad}{key}:"));
                continue;
            }
            match value {
                YamlValue::String(s) => {
                    lines.push(format!("{pad}{key}: {}", encode(s, Style::Plain, false)));
                }
                YamlValue::List(list) if list.is_empty() => lines.push(format!("{pad}{key}: []")),
                YamlValue::List(list) => {
                    lines.push(format!("{pad}{key}:"));
                    lines.extend(self.block_items(indent + depth * step, list));
                }
            }
        }
        match at {
            Insert::After(line) => self.insert_after(line, lines),
            Insert::End => self.insert_at_end(lines),
        }
    }

    fn block_items(&self, key_indent: usize, list: &[String]) -> Vec<String> {
        let pad = " ".repeat(key_indent + self.doc.sequence_offset());
        list.iter()
            .map(|item| format!("{pad}- {}", encode(item, Style::Plain, false)))
            .collect()
    }

    /// Rewrites a one-line flow list, keeping items that stay the same as written and the
    /// quoting and bracket padding of the old list.
    fn rebuild_flow(
        &self,
        span: &Range<usize>,
        old: &[Option<&str>],
        list: &[String],
        line: usize,
    ) -> Result<String, YamlEditError> {
        let raw = &self.doc.text[span.clone()];
        let items = flow_items(raw)
            .ok_or_else(|| self.unsupported(line, "a flow list with nested or tagged items"))?;
        if items.len() != old.len() {
            return Err(YamlEditError::Verify {
                key: self.key.to_string(),
                line: line + 1,
                reason: "the text scan and the yaml parser disagree on the flow list".to_string(),
            });
        }
        let padded = raw.len() > 2 && raw[1..].starts_with(' ') && !items.is_empty();
        let separator = if items.len() > 1 && !raw.contains(", ") {
            ","
        } else {
            ", "
        };
        let fallback = items.last().map_or(Style::Plain, |(_, style)| *style);
        let written: Vec<String> = list
            .iter()
            .enumerate()
            .map(|(index, new)| match (items.get(index), old.get(index)) {
                (Some((range, _)), Some(Some(old))) if *old == new.as_str() => {
                    raw[range.clone()].to_string()
                }
                (Some((_, style)), _) => encode(new, *style, true),
                _ => encode(new, fallback, true),
            })
            .collect();
        let inner = written.join(separator);
        Ok(if padded {
            format!("[ {inner} ]")
        } else {
            format!("[{inner}]")
        })
    }

    /// Inserts whole lines after line `line`, keeping a missing final newline missing.
    fn insert_after(&self, line: usize, lines: Vec<String>) -> (Range<usize>, String) {
        let eol = self.doc.eol;
        let after = &self.lines()[line];
        if after.next > after.end {
            let mut text = lines.join(eol);
            text.push_str(eol);
            (after.next..after.next, text)
        } else {
            (after.end..after.end, format!("{eol}{}", lines.join(eol)))
        }
    }

    /// Appends lines at the end of the document: before a `...` end marker if there is one.
    fn insert_at_end(&self, lines: Vec<String>) -> (Range<usize>, String) {
        let eol = self.doc.eol;
        let text = self.doc.text;
        if let Some(end) = self.lines().iter().find(|l| l.kind == Kind::DocEnd) {
            return (end.start..end.start, format!("{}{eol}", lines.join(eol)));
        }
        let block = lines.join(eol);
        if text.is_empty() || text == "\u{feff}" || text.ends_with('\n') {
            (text.len()..text.len(), format!("{block}{eol}"))
        } else {
            (text.len()..text.len(), format!("{eol}{block}"))
        }
    }

    /// Deletes lines `first..=last`. When `last` is the final line without a line ending,
    /// the line ending before `first` goes instead, so the file still ends without one.
    fn delete_lines(&self, first: usize, last: usize) -> (Range<usize>, String) {
        let lines = self.lines();
        let end = &lines[last];
        if end.next == end.end && first > 0 {
            (lines[first - 1].end..end.end, String::new())
        } else {
            (lines[first].start..end.next, String::new())
        }
    }

    /// Deletes item lines, grouping consecutive ones (comments between items stay).
    fn delete_item_lines(&self, items: &[Item]) -> Vec<(Range<usize>, String)> {
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for item in items {
            match runs.last_mut() {
                Some((_, last)) if *last + 1 == item.line => *last = item.line,
                _ => runs.push((item.line, item.line)),
            }
        }
        runs.into_iter()
            .map(|(first, last)| self.delete_lines(first, last))
            .collect()
    }
}

/// The current list items as the parser read them (`None` for a non-string item).
fn old_items(current: Option<&Value>) -> Vec<Option<&str>> {
    match current {
        Some(Value::Sequence(items)) => items.iter().map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Splits a one-line flow list `[a, "b", 'c']` into item ranges (relative to `raw`) with
/// their quoting. `None` for nested collections, anchors, aliases and tags.
fn flow_items(raw: &str) -> Option<Vec<(Range<usize>, Style)>> {
    let b = raw.as_bytes();
    let inner_end = raw.len().checked_sub(1)?;
    let mut items = Vec::new();
    let mut i = 1;
    loop {
        i = skip_blanks(b, i);
        if i >= inner_end {
            break;
        }
        let start = i;
        let style = match b[i] {
            b'"' => {
                i = close_double(&b[..inner_end], i + 1)?;
                Style::Double
            }
            b'\'' => {
                i = close_single(&b[..inner_end], i + 1)?;
                Style::Single
            }
            b'[' | b'{' | b'&' | b'*' | b'!' | b'#' | b',' => return None,
            _ => {
                while i < inner_end && b[i] != b',' {
                    i += 1;
                }
                while i > start && is_blank(b[i - 1]) {
                    i -= 1;
                }
                Style::Plain
            }
        };
        items.push((start..i, style));
        i = skip_blanks(b, i);
        match b.get(i) {
            Some(b',') => i += 1,
            _ if i >= inner_end => break,
            _ => return None,
        }
    }
    Some(items)
}

fn encode_key(key: &str) -> String {
    if plain_ok(key, false) && !key.contains(':') {
        key.to_string()
    } else {
        double_quoted(key)
    }
}

/// Writes `s` as a YAML scalar in `style` when that style can hold it exactly.
fn encode(s: &str, style: Style, flow: bool) -> String {
    match style {
        Style::Plain if plain_ok(s, flow) => s.to_string(),
        Style::Single if !s.chars().any(char::is_control) => format!("'{}'", s.replace('\'', "''")),
        _ => double_quoted(s),
    }
}

/// Whether `s` can be written unquoted and still read back as the string `s`, both for
/// serde_norway (YAML 1.2) and for kubelet's go-yaml (YAML 1.1: `yes`, `on`, `0777`,
/// `1:20`, timestamps). Deliberately narrow: paths, IPs, host names and durations.
fn plain_ok(s: &str, flow: bool) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if !(first.is_ascii_alphanumeric() || matches!(first, '/' | '.' | '_')) {
        return false;
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-_./:@%+=~".contains(c);
    if !s.chars().all(allowed) || s.ends_with(':') || (flow && s.contains(':')) {
        return false;
    }
    const SPECIAL: [&str; 11] = [
        "y", "n", "yes", "no", "true", "false", "on", "off", "null", "~", "nan",
    ];
    if SPECIAL.iter().any(|word| s.eq_ignore_ascii_case(word)) || looks_numeric(s) {
        return false;
    }
    let bytes = s.as_bytes();
    if bytes.len() >= 5 && bytes[..4].iter().all(u8::is_ascii_digit) && bytes[4] == b'-' {
        return false;
    }
    // Final word from the parser that checks the result.
    serde_norway::from_str::<Value>(&format!("k: {s}"))
        .is_ok_and(|value| value.get("k").and_then(Value::as_str) == Some(s))
}

fn looks_numeric(s: &str) -> bool {
    let t: String = s.chars().filter(|c| *c != '_').collect();
    let unsigned = t.trim_start_matches(['+', '-']);
    let lower = unsigned.to_ascii_lowercase();
    t.parse::<f64>().is_ok()
        || t.parse::<i128>().is_ok()
        || matches!(lower.as_str(), ".inf" | ".nan")
        || ["0x", "0o", "0b"]
            .iter()
            .any(|prefix| lower.starts_with(prefix))
        || (unsigned.contains(':')
            && unsigned
                .chars()
                .all(|c| c.is_ascii_digit() || c == ':' || c == '.'))
}

fn double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            '\u{85}' => out.push_str("\\N"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            '\u{feff}' => out.push_str("\\uFEFF"),
            c if c.is_control() => out.push_str(&format!("\\x{:02X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::testing::assert_changed;

    fn s(value: &str) -> YamlValue {
        YamlValue::String(value.to_string())
    }

    fn list(items: &[&str]) -> YamlValue {
        YamlValue::List(items.iter().map(|s| s.to_string()).collect())
    }

    #[track_caller]
    fn set_ok(text: &str, key: &str, value: &YamlValue) -> String {
        let edit = set(text, key, value).unwrap_or_else(|e| panic!("set {key}: {e}"));
        assert!(edit.changed, "expected a change for {key}");
        let again = set(&edit.text, key, value).expect("second set");
        assert!(!again.changed, "second set changed:\n{}", again.text);
        edit.text
    }

    #[track_caller]
    fn set_err(text: &str, key: &str, value: &YamlValue) -> String {
        match set(text, key, value) {
            Ok(edit) => panic!("expected an error, got:\n{}", edit.text),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn keeps_double_quotes_and_trailing_comment() {
        let text = "kind: KubeletConfiguration\nresolvConf: \"/etc/resolv.conf\" # kubespray\nmaxPods: 110\n";
        let out = set_ok(text, "resolvConf", &s("/run/systemd/resolve/resolv.conf"));
        assert_eq!(
            out,
            "kind: KubeletConfiguration\nresolvConf: \"/run/systemd/resolve/resolv.conf\" # kubespray\nmaxPods: 110\n"
        );
        assert_changed(text, &out, &[2], &[2]);
    }

    #[test]
    fn keeps_single_quotes_and_plain() {
        let out = set_ok("resolvConf: '/etc/resolv.conf'\n", "resolvConf", &s("/x/y"));
        assert_eq!(out, "resolvConf: '/x/y'\n");
        let out = set_ok("resolvConf: /etc/resolv.conf\n", "resolvConf", &s("/x/y"));
        assert_eq!(out, "resolvConf: /x/y\n");
    }

    #[test]
    fn plain_gets_quotes_only_when_needed() {
        let cases = [
            ("my resolv.conf", "\"my resolv.conf\""),
            ("yes", "\"yes\""),
            // YAML 1.1 (go-yaml, kubelet) reads a bare `y` as true.
            ("y", "\"y\""),
            ("0777", "\"0777\""),
            ("1:20", "\"1:20\""),
            ("", "\"\""),
            ("#x", "\"#x\""),
            ("a: b", "\"a: b\""),
            ("2024-01-01", "\"2024-01-01\""),
            ("10.96.0.10", "10.96.0.10"),
            ("fd00::10", "fd00::10"),
            ("cluster.local", "cluster.local"),
            ("tab\there", "\"tab\\there\""),
            ("say \"hi\"", "\"say \\\"hi\\\"\""),
        ];
        for (value, written) in cases {
            let out = set_ok("a: x\nk: old\n", "k", &s(value));
            assert_eq!(out, format!("a: x\nk: {written}\n"), "{value:?}");
        }
    }

    #[test]
    fn single_quoted_value_with_a_quote() {
        let out = set_ok("k: 'a'\n", "k", &s("it's"));
        assert_eq!(out, "k: 'it''s'\n");
    }

    #[test]
    fn same_value_is_no_change_whatever_the_quoting() {
        for text in [
            "resolvConf: /etc/resolv.conf\n",
            "resolvConf: \"/etc/resolv.conf\"\n",
            "resolvConf: '/etc/resolv.conf' # c\n",
        ] {
            let edit = set(text, "resolvConf", &s("/etc/resolv.conf")).expect("set");
            assert_eq!(edit, Edit::unchanged(text));
        }
        let edit = set(
            "clusterDNS:\n- 10.96.0.10\n",
            "clusterDNS",
            &list(&["10.96.0.10"]),
        )
        .expect("set");
        assert!(!edit.changed);
    }

    #[test]
    fn kubeadm_block_list_at_key_indent() {
        let text = "clusterDNS:\n- 10.96.0.10\nclusterDomain: cluster.local\n";
        let out = set_ok(text, "clusterDNS", &list(&["169.254.25.10"]));
        assert_eq!(
            out,
            "clusterDNS:\n- 169.254.25.10\nclusterDomain: cluster.local\n"
        );
        let out = set_ok(text, "clusterDNS", &list(&["10.96.0.10", "169.254.25.10"]));
        assert_eq!(
            out,
            "clusterDNS:\n- 10.96.0.10\n- 169.254.25.10\nclusterDomain: cluster.local\n"
        );
        assert_changed(text, &out, &[], &[3]);
    }

    #[test]
    fn kubespray_indented_block_list_shrinks_and_keeps_comments() {
        let text = "clusterDNS:\n  # nodelocaldns first\n  - 169.254.25.10 # local\n  # then coredns\n  - 10.233.0.3\nresolvConf: x\n";
        let out = set_ok(text, "clusterDNS", &list(&["169.254.25.10"]));
        assert_eq!(
            out,
            "clusterDNS:\n  # nodelocaldns first\n  - 169.254.25.10 # local\n  # then coredns\nresolvConf: x\n"
        );
        let out = set_ok(text, "clusterDNS", &list(&["10.233.0.3"]));
        assert_eq!(
            out,
            "clusterDNS:\n  # nodelocaldns first\n  - 10.233.0.3 # local\n  # then coredns\nresolvConf: x\n"
        );
    }

    #[test]
    fn quoted_list_items_keep_their_quotes() {
        let text = "clusterDNS:\n  - \"10.0.0.10\"\n";
        let out = set_ok(text, "clusterDNS", &list(&["10.0.0.11", "10.0.0.12"]));
        assert_eq!(out, "clusterDNS:\n  - \"10.0.0.11\"\n  - \"10.0.0.12\"\n");
    }

    #[test]
    fn flow_list_stays_flow() {
        let text = "clusterDNS: [10.96.0.10] # flow\nx: 1\n";
        let out = set_ok(text, "clusterDNS", &list(&["10.96.0.10", "169.254.25.10"]));
        assert_eq!(
            out,
            "clusterDNS: [10.96.0.10, 169.254.25.10] # flow\nx: 1\n"
        );
        let out = set_ok("k: [ 'a', \"b\" ]\n", "k", &list(&["a", "c", "d"]));
        assert_eq!(out, "k: [ 'a', \"c\", \"d\" ]\n");
        let out = set_ok("k: [a,b]\n", "k", &list(&["a", "x y"]));
        assert_eq!(out, "k: [a,\"x y\"]\n");
        let out = set_ok("k: [a]\n", "k", &list(&[]));
        assert_eq!(out, "k: []\n");
        let out = set_ok("k: []\n", "k", &list(&["fd00::a"]));
        assert_eq!(out, "k: [\"fd00::a\"]\n");
    }

    #[test]
    fn empty_list_and_null() {
        let out = set_ok(
            "clusterDNS:\n- 10.96.0.10\nx: 1\n",
            "clusterDNS",
            &list(&[]),
        );
        assert_eq!(out, "clusterDNS: []\nx: 1\n");
        let out = set_ok(
            "clusterDNS: # none yet\nx: 1\n",
            "clusterDNS",
            &list(&["1.1.1.1"]),
        );
        assert_eq!(out, "clusterDNS: # none yet\n- 1.1.1.1\nx: 1\n");
        let out = set_ok(
            "resolvConf: # unset\nx: 1\n",
            "resolvConf",
            &s("/etc/resolv.conf"),
        );
        assert_eq!(out, "resolvConf: /etc/resolv.conf # unset\nx: 1\n");
        let out = set_ok("resolvConf: ~\n", "resolvConf", &s("/a"));
        assert_eq!(out, "resolvConf: /a\n");
    }

    #[test]
    fn type_changes_between_scalar_and_list() {
        let out = set_ok("k: 10.0.0.1 # c\nz: 1\n", "k", &list(&["a", "b"]));
        assert_eq!(out, "k: # c\n- a\n- b\nz: 1\n");
        let out = set_ok(
            "a:\n  - x\nk:\n  - 1.1.1.1\n  - 2.2.2.2\nz: 1\n",
            "k",
            &s("/p"),
        );
        assert_eq!(out, "a:\n  - x\nk: /p\nz: 1\n");
        let out = set_ok("k: [a, b]\n", "k", &s("c"));
        assert_eq!(out, "k: c\n");
    }

    #[test]
    fn new_list_follows_the_files_dash_offset() {
        let kubespray = "a:\n  - x\nz: 1\n";
        let out = set_ok(kubespray, "clusterDNS", &list(&["1.1.1.1"]));
        assert_eq!(out, "a:\n  - x\nz: 1\nclusterDNS:\n  - 1.1.1.1\n");
        let kubeadm = "a:\n- x\nz: 1\n";
        let out = set_ok(kubeadm, "clusterDNS", &list(&["1.1.1.1"]));
        assert_eq!(out, "a:\n- x\nz: 1\nclusterDNS:\n- 1.1.1.1\n");
    }

    #[test]
    fn absent_key_goes_after_the_last_entry_before_trailing_comments() {
        let text = "# header\nkind: KubeletConfiguration\nmaxPods: 110\n\n# footer\n# cpuManagerPolicy: static\n";
        let out = set_ok(text, "resolvConf", &s("/etc/resolv.conf"));
        assert_eq!(
            out,
            "# header\nkind: KubeletConfiguration\nmaxPods: 110\nresolvConf: /etc/resolv.conf\n\n# footer\n# cpuManagerPolicy: static\n"
        );
        assert_changed(text, &out, &[], &[4]);
    }

    #[test]
    fn absent_key_in_empty_documents() {
        assert_eq!(set_ok("", "k", &s("v")), "k: v\n");
        assert_eq!(set_ok("---\n", "k", &s("v")), "---\nk: v\n");
        assert_eq!(
            set_ok("# only a comment", "k", &s("v")),
            "# only a comment\nk: v"
        );
        assert_eq!(
            set_ok("---\n# c\n...\n", "k", &s("v")),
            "---\n# c\nk: v\n...\n"
        );
    }

    #[test]
    fn nested_paths() {
        let text = "authentication:\n  anonymous:\n    enabled: false\n  x509:\n    clientCAFile: /etc/kubernetes/ssl/ca.crt # ca\nauthorization:\n  mode: Webhook\n";
        let out = set_ok(
            text,
            "authentication.x509.clientCAFile",
            &s("/etc/kubernetes/pki/ca.crt"),
        );
        assert_changed(text, &out, &[5], &[5]);
        assert!(out.contains("    clientCAFile: /etc/kubernetes/pki/ca.crt # ca\n"));
        // A new leaf in an existing nested mapping, and a new nested mapping.
        let out = set_ok(text, "authentication.anonymous.mode", &s("x"));
        assert_eq!(out.lines().nth(3), Some("    mode: x"));
        let out = set_ok(text, "authentication.webhook.cacheTTL", &s("2m0s"));
        assert_changed(text, &out, &[], &[6, 7]);
        assert!(out.contains("  x509:\n    clientCAFile: /etc/kubernetes/ssl/ca.crt # ca\n  webhook:\n    cacheTTL: 2m0s\nauthorization:"));
        let out = set_ok(text, "logging.options.json.infoBufferSize", &s("0"));
        assert!(out.ends_with(
            "  mode: Webhook\nlogging:\n  options:\n    json:\n      infoBufferSize: \"0\"\n"
        ));
    }

    #[test]
    fn nested_under_a_null_parent_uses_the_files_step() {
        let text = "a:\n    b: 1\nfeatureGates:\nz: 1\n";
        let out = set_ok(text, "featureGates.Foo", &s("x"));
        assert_eq!(out, "a:\n    b: 1\nfeatureGates:\n    Foo: x\nz: 1\n");
    }

    #[test]
    fn crlf_and_missing_final_newline_survive() {
        let text = "a: 1\r\nresolvConf: /etc/resolv.conf\r\nclusterDNS:\r\n- 10.96.0.10\r\n";
        let out = set_ok(text, "resolvConf", &s("/run/x"));
        assert_eq!(
            out,
            "a: 1\r\nresolvConf: /run/x\r\nclusterDNS:\r\n- 10.96.0.10\r\n"
        );
        let out = set_ok(text, "clusterDNS", &list(&["10.96.0.10", "1.1.1.1"]));
        assert_eq!(
            out,
            "a: 1\r\nresolvConf: /etc/resolv.conf\r\nclusterDNS:\r\n- 10.96.0.10\r\n- 1.1.1.1\r\n"
        );
        let out = set_ok(text, "new", &s("v"));
        assert!(out.ends_with("- 10.96.0.10\r\nnew: v\r\n"));

        let text = "a: 1\nclusterDNS:\n- 10.96.0.10";
        let out = set_ok(text, "clusterDNS", &list(&["10.96.0.10", "1.1.1.1"]));
        assert_eq!(out, "a: 1\nclusterDNS:\n- 10.96.0.10\n- 1.1.1.1");
        let out = set_ok(text, "clusterDNS", &list(&[]));
        assert_eq!(out, "a: 1\nclusterDNS: []");
        let out = set_ok(text, "b", &s("2"));
        assert_eq!(out, "a: 1\nclusterDNS:\n- 10.96.0.10\nb: \"2\"");
        let edit = remove(text, "clusterDNS").expect("remove");
        assert_eq!(edit.text, "a: 1");
    }

    #[test]
    fn remove_keys() {
        let text = "a: 1\n# about b\nb:\n- x\n  # inside\n- y\n\n# trailing\nc: 3\n";
        let edit = remove(text, "b").expect("remove");
        assert_eq!(edit.text, "a: 1\n# about b\n\n# trailing\nc: 3\n");
        assert_eq!(edit.lines, Some(3..=3));
        assert_eq!(remove(text, "nope").expect("remove"), Edit::unchanged(text));
        assert_eq!(remove(text, "a.b").expect("remove"), Edit::unchanged(text));
        let text =
            "authentication:\n  anonymous:\n    enabled: false\n  webhook:\n    enabled: true\n";
        let edit = remove(text, "authentication.webhook").expect("remove");
        assert_eq!(
            edit.text,
            "authentication:\n  anonymous:\n    enabled: false\n"
        );
        let err = remove(text, "authentication.anonymous.enabled").expect_err("only key");
        assert!(err.to_string().contains("line 3"), "{err}");
    }

    #[test]
    fn document_markers_and_bom() {
        let text = "---\n# kubelet\nresolvConf: /a\n...\n";
        assert_eq!(
            set_ok(text, "resolvConf", &s("/b")),
            "---\n# kubelet\nresolvConf: /b\n...\n"
        );
        assert_eq!(
            set_ok(text, "x", &s("v")),
            "---\n# kubelet\nresolvConf: /a\nx: v\n...\n"
        );
        let text = "\u{feff}resolvConf: /a\n";
        assert_eq!(
            set_ok(text, "resolvConf", &s("/b")),
            "\u{feff}resolvConf: /b\n"
        );
    }

    #[test]
    fn quoted_keys_are_matched() {
        let text = "\"resolvConf\": /a\n'clusterDNS': [x]\n";
        assert_eq!(
            set_ok(text, "resolvConf", &s("/b")),
            "\"resolvConf\": /b\n'clusterDNS': [x]\n"
        );
        assert_eq!(
            set_ok(text, "clusterDNS", &list(&["v"])),
            "\"resolvConf\": /a\n'clusterDNS': [v]\n"
        );
    }

    #[test]
    fn k3s_config_top_level_list_key() {
        let text = "# /etc/rancher/k3s/config.yaml\nwrite-kubeconfig-mode: \"0644\"\nkubelet-arg:\n  - \"resolv-conf=/etc/rancher/k3s/resolv.conf\"\n";
        let out = set_ok(
            text,
            "kubelet-arg",
            &list(&["resolv-conf=/run/systemd/resolve/resolv.conf"]),
        );
        assert_eq!(
            out,
            "# /etc/rancher/k3s/config.yaml\nwrite-kubeconfig-mode: \"0644\"\nkubelet-arg:\n  - \"resolv-conf=/run/systemd/resolve/resolv.conf\"\n"
        );
    }

    #[test]
    fn refuses_broken_yaml_with_the_line() {
        let err = set_err("a: 1\nb: [x\nc: 2\n", "a", &s("2"));
        assert!(err.starts_with("parse the yaml at line 3"), "{err}");
        let err = set_err("a:\n  b: 1\n c: 2\n", "a.b", &s("2"));
        assert!(err.contains("line 3"), "{err}");
        let err = set_err("a: 1\nb: 0\na: 2\n", "a", &s("3"));
        assert!(err.contains("line 3") && err.contains("duplicate"), "{err}");
    }

    /// The kubelet's `--config` file after `echo 'resolvConf: …' >> config.yaml`: the kubelet
    /// reads the last `resolvConf`, so the edit takes out the earlier one and sets the last.
    #[test]
    fn a_key_written_twice_loses_its_earlier_entry_where_the_last_one_counts() {
        let appended = "kind: KubeletConfiguration\nresolvConf: /run/systemd/resolve/resolv.conf\n\
                        rotateCertificates: true\nresolvConf: /etc/resolv.conf\n";
        let wanted = s("/run/systemd/resolve/resolv.conf");
        let edit = set_last_wins(appended, "resolvConf", Some(&wanted)).expect("set");
        assert!(edit.changed);
        assert_eq!(
            edit.text,
            "kind: KubeletConfiguration\nrotateCertificates: true\n\
             resolvConf: /run/systemd/resolve/resolv.conf\n"
        );
        let again = set_last_wins(&edit.text, "resolvConf", Some(&wanted)).expect("again");
        assert!(!again.changed, "{}", again.text);
        // Strict readers (drop-ins, k3s) still refuse it.
        assert!(set_err(appended, "resolvConf", &wanted).contains("duplicate"));

        // The last one already as wanted: the kubelet reads it now, the file stays.
        let edit = set_last_wins(appended, "resolvConf", Some(&s("/etc/resolv.conf")));
        assert!(!edit.expect("unchanged").changed);

        // A block list written first and a flow list after it; removing takes out both.
        let lists = "clusterDNS:\n- 10.96.0.10\n- 10.96.0.11\nkind: KubeletConfiguration\n\
                     clusterDNS: [169.254.25.10]\n";
        let edit = set_last_wins(lists, "clusterDNS", Some(&list(&["10.96.0.10"]))).expect("set");
        assert_eq!(
            edit.text,
            "kind: KubeletConfiguration\nclusterDNS: [10.96.0.10]\n"
        );
        let edit = set_last_wins(lists, "clusterDNS", None).expect("remove");
        assert_eq!(edit.text, "kind: KubeletConfiguration\n");

        // Not written twice: the plain edit.
        let edit = set_last_wins("a: 1\n", "a", Some(&s("b"))).expect("plain");
        assert_eq!(edit.text, "a: b\n");
    }

    #[test]
    fn another_key_written_twice_is_still_refused_with_its_line() {
        let wanted = s("/run/systemd/resolve/resolv.conf");
        let both = "resolvConf: /etc/resolv.conf\nclusterDomain: a\nresolvConf: x\n\
                    clusterDomain: b\n";
        let err = set_last_wins(both, "resolvConf", Some(&wanted))
            .expect_err("clusterDomain is repeated too")
            .to_string();
        assert!(
            err.contains("line 4") && err.contains("\"clusterDomain\""),
            "{err}"
        );
        let other = "clusterDomain: a\nresolvConf: x\nclusterDomain: b\n";
        let err = set_last_wins(other, "resolvConf", Some(&wanted))
            .expect_err("only clusterDomain is repeated")
            .to_string();
        assert!(err.contains("line 3") && err.contains("duplicate"), "{err}");
        let nested = "resolvConf: x\nauthentication:\n  x509: {}\n  x509: {}\nresolvConf: y\n";
        let err = set_last_wins(nested, "resolvConf", Some(&wanted))
            .expect_err("a nested key is repeated")
            .to_string();
        assert!(err.contains("line 4") && err.contains("\"x509\""), "{err}");
    }

    #[test]
    fn refuses_multi_document_files() {
        let err = set_err("a: 1\n---\nb: 2\n", "a", &s("2"));
        assert!(
            err.contains("several yaml documents") && err.contains("line 2"),
            "{err}"
        );
    }

    #[test]
    fn refuses_what_it_cannot_edit_exactly() {
        let cases: [(&str, &str, YamlValue, &str); 12] = [
            (
                "base: &dns /a\nresolvConf: *dns\n",
                "resolvConf",
                s("/b"),
                "alias",
            ),
            (
                "resolvConf: &dns /a\nx: *dns\n",
                "resolvConf",
                s("/b"),
                "anchor",
            ),
            ("resolvConf: !!str /a\n", "resolvConf", s("/b"), "tag"),
            (
                "authentication: {x509: {clientCAFile: /a}}\n",
                "authentication.x509.clientCAFile",
                s("/b"),
                "flow mapping",
            ),
            ("{resolvConf: /a}\n", "resolvConf", s("/b"), "flow mapping"),
            (
                "resolvConf: |\n  /a\n",
                "resolvConf",
                s("/b"),
                "block scalar",
            ),
            (
                "resolvConf: \"/a\n  /b\"\nx: 1\n",
                "resolvConf",
                s("/b"),
                "several lines",
            ),
            (
                "clusterDNS: [a,\n  b]\n",
                "clusterDNS",
                list(&["c"]),
                "several lines",
            ),
            (
                "clusterDNS:\n- a\n- [b]\n",
                "clusterDNS",
                list(&["c"]),
                "not a one-line scalar",
            ),
            ("resolvConf:\n  a: 1\n", "resolvConf", s("/b"), "mapping"),
            (
                "base: &b {x: 1}\nk:\n  <<: *b\n  y: 2\n",
                "k.x",
                s("3"),
                "merge key",
            ),
            ("- a\n- b\n", "resolvConf", s("/b"), "not a mapping"),
        ];
        for (text, key, value, want) in cases {
            let err = set_err(text, key, &value);
            assert!(err.contains(want), "{text:?}: {err}");
            assert!(err.contains("line "), "{text:?}: {err}");
        }
    }

    #[test]
    fn refuses_a_scalar_parent() {
        let err = set_err(
            "authentication: none\n",
            "authentication.x509.clientCAFile",
            &s("/a"),
        );
        assert!(
            err.contains("`authentication` at line 1 is not a mapping"),
            "{err}"
        );
    }

    #[test]
    fn invalid_keys() {
        for key in ["", "a..b", ".a", "a."] {
            assert!(matches!(
                set("a: 1\n", key, &s("x")),
                Err(YamlEditError::InvalidKey { .. })
            ));
        }
    }

    #[test]
    fn anchors_elsewhere_do_not_block_an_edit() {
        let text = "base: &b /x\nother: *b\nresolvConf: /a\n";
        assert_eq!(
            set_ok(text, "resolvConf", &s("/b")),
            "base: &b /x\nother: *b\nresolvConf: /b\n"
        );
    }

    #[test]
    fn keys_inside_multi_line_values_are_not_keys() {
        // The "resolvConf: /fake" line is inside a quoted scalar, not a key.
        let text = "note: \"first line\n  resolvConf: /fake\"\nresolvConf: /real\n";
        let out = set_ok(text, "resolvConf", &s("/new"));
        assert_eq!(
            out,
            "note: \"first line\n  resolvConf: /fake\"\nresolvConf: /new\n"
        );
        let text = "script: |\n  resolvConf: /fake\nz: 1\n";
        let out = set_ok(text, "resolvConf", &s("/new"));
        assert_eq!(
            out,
            "script: |\n  resolvConf: /fake\nz: 1\nresolvConf: /new\n"
        );
    }

    #[test]
    fn verification_catches_a_scanner_mistake() {
        // Fed a wrong splice directly: the proof must reject it.
        let text = "a: 1\nb: 2\n";
        let original = parse_single(text).expect("parses");
        let wrong = "a: 1\nb: 3\nc: 4\n";
        assert!(verify(&original, &["b"], Some(Value::from(3)), wrong).is_err());
        // Reordering keys is caught too.
        let reordered = "b: 3\na: 1\n";
        assert!(verify(&original, &["b"], Some(Value::from(3)), reordered).is_err());
        assert!(verify(&original, &["b"], Some(Value::from(3)), "a: 1\nb: 3\n").is_ok());
    }

    #[test]
    fn never_panics_on_random_input() {
        let alphabet: &[u8] = b"ab:- \n#\"'[]{},&*!|>.\t\r~0123";
        for bytes in crate::testing::random_inputs(0x9e37_79b9_7f4a_7c15, alphabet, 3_000, 60, None)
        {
            let text = String::from_utf8_lossy(&bytes);
            for key in ["a", "b", "a.b"] {
                for value in [s("x y"), list(&["1.1.1.1", "b"]), list(&[])] {
                    if let Ok(edit) = set(&text, key, &value) {
                        let again = set(&edit.text, key, &value).expect("second set");
                        assert!(!again.changed, "{text:?} → {:?}", edit.text);
                    }
                }
                let _ = remove(&text, key);
            }
        }
    }
}
