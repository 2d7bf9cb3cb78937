//! Text helpers every layer uses: showing node text safely (one line, or a terminal's
//! worth), pretty JSON, and the natural order of host names. No dependency on the rest of
//! the crate, so the engine and the reports can both use them without a cycle.

use serde::Serialize;

/// `n` and `noun`, plural unless `n` is 1: "1 host", "0 hosts", "3 DNS pods".
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `items` as prose: "a", "a or b", "a, b or c".
pub fn or_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

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
/// but leaves DEL, the C1 controls and invisible format characters raw, which this writes
/// as JSON `\uXXXX` escapes (they occur only inside strings: JSON's own syntax is ASCII).
pub fn pretty_json(doc: &impl Serialize) -> String {
    let text = serde_json::to_string_pretty(doc)
        .unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }).to_string());
    let unsafe_char = |c: char| (c.is_control() && c != '\n') || invisible(c);
    let mut out = String::with_capacity(text.len() + 1);
    for c in text.chars() {
        if unsafe_char(c) {
            // Beyond the BMP (the tag characters) as a UTF-16 surrogate pair, as JSON has it.
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
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
/// Whether Ansible would take `text`, as an inventory value, for a template it renders on
/// the controller (`{{`, `{%`, `{#`, or a `#jinja2:` header that changes the delimiters:
/// ansible-core's `is_possibly_template`), or it holds a control character (a newline
/// starts such a header). A value from a node must not reach the inventory so.
pub fn ansible_template_syntax(text: &str) -> bool {
    jinja_syntax(text) || text.chars().any(char::is_control)
}

/// Whether Ansible may take `text` for a template: it holds `{{`, `{%` or `{#`, or a
/// `#jinja2:` header (ansible-core's `is_possibly_template`).
pub fn jinja_syntax(text: &str) -> bool {
    ["{{", "{%", "{#", "#jinja2:"]
        .iter()
        .any(|d| text.contains(d))
}

pub fn escape(text: &str) -> std::borrow::Cow<'_, str> {
    escaped(text, |c| c.is_control() || invisible(c))
}

/// `text` over several lines: each line [`escape`]d, the newlines between them kept.
pub fn escape_lines(text: &str) -> String {
    text.split('\n').map(escape).collect::<Vec<_>>().join("\n")
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

/// Characters that change how text reads on a terminal or a web page without showing:
/// every format character (general category Cf) of Unicode 16.0's
/// DerivedGeneralCategory.txt, which holds every Bidi_Control of PropList.txt (bidirectional
/// marks, embeddings, overrides and isolates, U+061C ARABIC LETTER MARK), the zero-width
/// characters (U+200B..U+200D, U+2060 WORD JOINER, U+FEFF), the soft hyphen, the invisible
/// operators and the tag characters. A node file with them can make a diff line or a host
/// name read as something else, or hide text inside a word.
fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00ad}'
            | '\u{0600}'..='\u{0605}'
            | '\u{061c}'
            | '\u{06dd}'
            | '\u{070f}'
            | '\u{0890}'..='\u{0891}'
            | '\u{08e2}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206f}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{110bd}'
            | '\u{110cd}'
            | '\u{13430}'..='\u{1343f}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0001}'
            | '\u{e0020}'..='\u{e007f}'
    )
}

/// A whole text report, safe to print on a terminal: like [`escape`], but newlines and
/// tabs stay (they are the report's own layout); invisible characters are escaped too.
/// dnsfix's reports pass through here on their way out, so no text from a node or an input
/// file reaches the terminal raw, whichever renderer it went through.
pub fn terminal_text(text: &str) -> std::borrow::Cow<'_, str> {
    escaped(text, |c| {
        (c.is_control() && c != '\n' && c != '\t') || invisible(c)
    })
}

#[cfg(test)]
mod tests {
    /// One of each range of format characters (Cf), every Bidi_Control among them: shown
    /// escaped on a line, in a report and in JSON. U+061C, the zero-width characters, the
    /// soft hyphen and the tags once reached a terminal and a merge request raw.
    const INVISIBLE: &str = "\
         \u{ad}\u{600}\u{605}\u{61c}\u{6dd}\u{70f}\u{890}\u{8e2}\u{180e}\u{200b}\u{200c}\
         \u{200d}\u{200e}\u{200f}\u{202a}\u{202e}\u{2060}\u{2064}\u{2066}\u{2069}\u{206a}\
         \u{206f}\u{feff}\u{fff9}\u{fffb}\u{110bd}\u{110cd}\u{13430}\u{1343f}\u{1bca0}\u{1bca3}\
         \u{1d173}\u{1d17a}\u{e0001}\u{e0020}\u{e007f}";

    #[test]
    fn format_characters_are_shown_escaped() {
        for c in INVISIBLE.chars() {
            let text = format!("node{c}1");
            let shown = format!("node{}1", c.escape_default());
            assert_eq!(super::escape(&text), shown, "U+{:04X}", u32::from(c));
            assert_eq!(super::terminal_text(&text), shown, "U+{:04X}", u32::from(c));
            let json = super::pretty_json(&serde_json::json!({ "host": text }));
            assert!(json.is_ascii(), "U+{:04X}: {json}", u32::from(c));
            let back: serde_json::Value = serde_json::from_str(&json).expect("still JSON");
            assert_eq!(back["host"], text.as_str());
        }
        // Their neighbours are visible and stay.
        for c in [
            '\u{ac}', '\u{ae}', '\u{200a}', '\u{2010}', '\u{2065}', '\u{2070}',
        ] {
            assert!(!super::invisible(c), "U+{:04X}", u32::from(c));
        }
    }
}
