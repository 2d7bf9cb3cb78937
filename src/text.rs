//! Text helpers every layer uses: showing node text safely (one line, or a terminal's
//! worth), pretty JSON, and the natural order of host names. No dependency on the rest of
//! the crate, so the engine and the reports can both use them without a cycle.

use serde::Serialize;

/// Host names in the order people count them: runs of digits compare as numbers, so
/// `node2` comes before `node10` (and `node02` next to `node2`).
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> impl Iterator<Item = &str> {
        let mut rest = s;
        std::iter::from_fn(move || {
            let first = rest.chars().next()?;
            let digit = first.is_ascii_digit();
            let end = rest
                .find(|c: char| c.is_ascii_digit() != digit)
                .unwrap_or(rest.len());
            let (chunk, tail) = rest.split_at(end);
            rest = tail;
            Some(chunk)
        })
    }
    let mut x = chunks(a);
    let mut y = chunks(b);
    loop {
        match (x.next(), y.next()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return std::cmp::Ordering::Less,
            (Some(_), None) => return std::cmp::Ordering::Greater,
            (Some(p), Some(q)) => {
                let numeric = p.starts_with(|c: char| c.is_ascii_digit())
                    && q.starts_with(|c: char| c.is_ascii_digit());
                let order = if numeric {
                    let (p, q) = (p.trim_start_matches('0'), q.trim_start_matches('0'));
                    p.len().cmp(&q.len()).then_with(|| p.cmp(q))
                } else {
                    p.cmp(q)
                };
                if order.is_ne() {
                    return order;
                }
            }
        }
    }
}

/// Pretty JSON with a final newline. Serializing these plain documents cannot fail; if
/// it ever did, the output still is JSON and says why. It is safe for a terminal as it is
/// ([`terminal_text`] finds nothing to change): serde_json escapes C0 controls in strings
/// but leaves DEL, the C1 controls and bidirectional overrides raw, which this writes as
/// JSON `\uXXXX` escapes (they occur only inside strings: JSON's own syntax is ASCII).
pub fn pretty_json(doc: &impl Serialize) -> String {
    let text = serde_json::to_string_pretty(doc)
        .unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }).to_string());
    let unsafe_char = |c: char| (c.is_control() && c != '\n') || invisible_reorder(c);
    let mut out = String::with_capacity(text.len() + 1);
    for c in text.chars() {
        if unsafe_char(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out.push('\n');
    out
}

/// Text from a node or an input file, safe to print on a terminal: control characters
/// (escape sequences, carriage returns, tabs, newlines inside a value) are shown as Rust
/// escapes, so no file can move the cursor, rewrite other lines or set the clipboard.
pub fn escape(text: &str) -> std::borrow::Cow<'_, str> {
    escaped(text, |c| c.is_control() || invisible_reorder(c))
}

/// `text` with every character `unsafe_char` picks shown as a Rust escape.
fn escaped(text: &str, unsafe_char: impl Fn(char) -> bool) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(&unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Characters that reorder text on a terminal without showing (bidirectional overrides
/// and isolates): a node file with them can make a diff line read as something else.
fn invisible_reorder(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}')
}

/// A whole text report, safe to print on a terminal: like [`escape`], but newlines and
/// tabs stay (they are the report's own layout), and bidirectional overrides are escaped
/// too. dnsfix's reports pass through here on their way out, so no text from a node or an
/// input file reaches the terminal raw, whichever renderer it went through.
pub fn terminal_text(text: &str) -> std::borrow::Cow<'_, str> {
    escaped(text, |c| {
        (c.is_control() && c != '\n' && c != '\t') || invisible_reorder(c)
    })
}
