//! INI inventory values, read like Ansible's `ast.literal_eval` on them: Python literals
//! (numbers, quoted strings, `True`/`False`/`None`, lists, tuples, dicts, sets) become typed
//! values, and anything that is not a literal stays the exact text it was. So
//! `ansible_port=2222` is the number 2222, `ip=192.0.2.11` the string `192.0.2.11`,
//! `upstream_dns_servers=['198.51.100.53']` a list, and `x="{{ y }}"` the raw template.
//!
//! Exactly as Ansible: a bare lowercase `true` is not a Python literal, so it stays the
//! string `"true"` (tests/it/inventory_ansible.rs compares with ansible-inventory); every
//! consumer reads booleans through [`Host::var_bool`](super::Host::var_bool), which
//! understands it.

use serde_json::{Map, Number, Value};

use super::yaml11::wide_integer;

/// Parses one INI value. Never fails: a non-literal is returned as a string, verbatim.
pub(crate) fn parse_value(raw: &str) -> Value {
    let mut parser = Parser {
        chars: raw.chars().collect(),
        pos: 0,
        depth: 0,
    };
    parser
        .top()
        .unwrap_or_else(|| Value::String(raw.to_string()))
}

/// How deep brackets (`(`, `[`, `{`, all counted together) may nest: Python's tokenizer
/// refuses a 201st open bracket with "too many nested parentheses" (cpython
/// @0190eed6 Parser/tokenizer.h: `#define MAXLEVEL 200`; Python 3.11.7: 200 levels
/// read, 201 raise SyntaxError), and Ansible then keeps the text. It also bounds this
/// parser's recursion, so a value of thousands of brackets cannot overflow the stack.
/// (ansible-core 2.19 on Python 3.11 already fails the whole file from about 162 levels,
/// "maximum recursion depth exceeded" in its own call stack: not modelled here.)
const MAX_NESTING: usize = 200;

struct Parser {
    chars: Vec<char>,
    pos: usize,
    /// Brackets open around the current position.
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    /// Whitespace and `#` comments, as Python's tokenizer skips them.
    fn skip_blank(&mut self) {
        while let Some(c) = self.peek() {
            if c == '#' {
                self.pos = self.chars.len();
            } else if c.is_whitespace() {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    fn eat(&mut self, want: char) -> bool {
        self.skip_blank();
        if self.peek() == Some(want) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// A whole value: an expression or a bare tuple (`1, 2`), then nothing but blanks.
    fn top(&mut self) -> Option<Value> {
        let first = self.expr()?;
        let value = if self.eat(',') {
            let mut items = vec![first];
            self.skip_blank();
            while self.peek().is_some() {
                items.push(self.expr()?);
                if !self.eat(',') {
                    break;
                }
                self.skip_blank();
            }
            Value::Array(items)
        } else {
            first
        };
        self.skip_blank();
        self.peek().is_none().then_some(value)
    }

    fn expr(&mut self) -> Option<Value> {
        self.skip_blank();
        match self.peek()? {
            open @ ('[' | '(' | '{') => {
                if self.depth == MAX_NESTING {
                    return None;
                }
                self.pos += 1;
                self.depth += 1;
                let value = match open {
                    '[' => self.sequence(']').map(Value::Array),
                    '(' => self.paren(),
                    _ => self.braces(),
                };
                self.depth -= 1;
                value
            }
            '+' | '-' => {
                let negative = self.peek() == Some('-');
                self.pos += 1;
                self.skip_blank();
                let number = self.number()?;
                if negative {
                    negate(number)
                } else {
                    Some(number)
                }
            }
            c if c.is_ascii_digit()
                || (c == '.' && self.peek_at(1).is_some_and(|d| d.is_ascii_digit())) =>
            {
                self.number()
            }
            c if c.is_alphabetic() || c == '_' || c == '"' || c == '\'' => self.word_or_string(),
            _ => None,
        }
    }

    /// Items up to `close`, comma separated, trailing comma allowed.
    fn sequence(&mut self, close: char) -> Option<Vec<Value>> {
        let mut items = Vec::new();
        loop {
            if self.eat(close) {
                return Some(items);
            }
            items.push(self.expr()?);
            if !self.eat(',') {
                return self.eat(close).then_some(items);
            }
        }
    }

    /// `()` is an empty tuple, `(x)` is `x`, `(x,)` and `(x, y)` are tuples.
    fn paren(&mut self) -> Option<Value> {
        if self.eat(')') {
            return Some(Value::Array(Vec::new()));
        }
        let first = self.expr()?;
        if self.eat(')') {
            return Some(first);
        }
        if !self.eat(',') {
            return None;
        }
        let mut rest = self.sequence(')')?;
        rest.insert(0, first);
        Some(Value::Array(rest))
    }

    /// `{}` is a dict; `{k: v, ...}` a dict; `{a, b}` a set (kept as a list).
    fn braces(&mut self) -> Option<Value> {
        if self.eat('}') {
            return Some(Value::Object(Map::new()));
        }
        let first = self.expr()?;
        if !self.eat(':') {
            if self.eat('}') {
                return Some(Value::Array(vec![first]));
            }
            if !self.eat(',') {
                return None;
            }
            let mut rest = self.sequence('}')?;
            rest.insert(0, first);
            return Some(Value::Array(rest));
        }
        let mut map = Map::new();
        let mut key = first;
        loop {
            let value = self.expr()?;
            map.insert(key_text(&key)?, value);
            if !self.eat(',') {
                return self.eat('}').then_some(Value::Object(map));
            }
            if self.eat('}') {
                return Some(Value::Object(map));
            }
            key = self.expr()?;
            if !self.eat(':') {
                return None;
            }
        }
    }

    /// `True`/`False`/`None`, or one or more adjacent string literals (concatenated, as
    /// Python does), each with an optional `r`/`u`/`b` prefix.
    fn word_or_string(&mut self) -> Option<Value> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            self.pos += 1;
        }
        let word: String = self.chars[start..self.pos].iter().collect();
        if !matches!(self.peek(), Some('"' | '\'')) {
            return match word.as_str() {
                "True" => Some(Value::Bool(true)),
                "False" => Some(Value::Bool(false)),
                "None" => Some(Value::Null),
                _ => None,
            };
        }
        let mut text = String::new();
        let mut prefix = word;
        loop {
            let lower = prefix.to_ascii_lowercase();
            let raw = match lower.as_str() {
                "" | "u" | "b" => false,
                "r" | "br" | "rb" => true,
                _ => return None, // f-strings and unknown prefixes are not literals
            };
            text.push_str(&self.string(raw)?);
            self.skip_blank();
            let next = self.pos;
            while self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some('"' | '\'')) {
                self.pos = next;
                return Some(Value::String(text));
            }
            prefix = self.chars[next..self.pos].iter().collect();
        }
    }

    /// One quoted string starting at the quote, single or triple quoted.
    fn string(&mut self, raw: bool) -> Option<String> {
        let quote = self.peek()?;
        let triple = self.peek_at(1) == Some(quote) && self.peek_at(2) == Some(quote);
        self.pos += if triple { 3 } else { 1 };
        let mut out = String::new();
        loop {
            let c = self.peek()?;
            if c == quote {
                if !triple {
                    self.pos += 1;
                    return Some(out);
                }
                if self.peek_at(1) == Some(quote) && self.peek_at(2) == Some(quote) {
                    self.pos += 3;
                    return Some(out);
                }
            }
            if c == '\n' && !triple {
                return None;
            }
            self.pos += 1;
            if c != '\\' {
                out.push(c);
                continue;
            }
            let escaped = self.peek()?;
            self.pos += 1;
            if raw {
                out.push('\\');
                out.push(escaped);
                continue;
            }
            match escaped {
                '\n' => {}
                '\\' | '\'' | '"' => out.push(escaped),
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                'a' => out.push('\u{7}'),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'v' => out.push('\u{b}'),
                'x' => out.push(self.hex_escape(2)?),
                'u' => out.push(self.hex_escape(4)?),
                'U' => out.push(self.hex_escape(8)?),
                '0'..='7' => {
                    let mut value = escaped.to_digit(8)?;
                    for _ in 0..2 {
                        match self.peek().and_then(|d| d.to_digit(8)) {
                            Some(d) => {
                                value = value * 8 + d;
                                self.pos += 1;
                            }
                            None => break,
                        }
                    }
                    out.push(char::from_u32(value)?);
                }
                // Python keeps unknown escapes as written.
                other => {
                    out.push('\\');
                    out.push(other);
                }
            }
        }
    }

    fn hex_escape(&mut self, digits: usize) -> Option<char> {
        let text: String = self
            .chars
            .get(self.pos..self.pos + digits)?
            .iter()
            .collect();
        self.pos += digits;
        char::from_u32(u32::from_str_radix(&text, 16).ok()?)
    }

    /// A Python number literal: decimal, `0x`/`0o`/`0b` integers with `_` separators, and
    /// floats. Imaginary numbers and leading-zero decimals (`010`) are not accepted.
    fn number(&mut self) -> Option<Value> {
        let start = self.pos;
        // Whether an `x` was met (a hex `e` is a digit), kept as it goes: a token of many
        // `e+` is read in one pass.
        let mut hex = false;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            hex |= matches!(self.peek(), Some('x' | 'X'));
            // An exponent sign belongs to the number: 1e-3.
            self.pos += 1;
            if matches!(self.chars.get(self.pos - 1), Some('e' | 'E'))
                && matches!(self.peek(), Some('+' | '-'))
                && !hex
            {
                self.pos += 1;
            }
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        number_value(&text)
    }
}

fn number_value(text: &str) -> Option<Value> {
    if text.starts_with('_') || text.ends_with('_') || text.contains("__") {
        return None;
    }
    let lower = text.to_ascii_lowercase();
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(digits) = lower.strip_prefix(prefix) {
            let digits = digits.strip_prefix('_').unwrap_or(digits);
            let clean = digits.replace('_', "");
            if clean.is_empty() {
                return None;
            }
            return wide_integer(&clean, radix);
        }
    }
    // Underscores may only separate digits.
    let bytes = lower.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'_' {
            let before = i.checked_sub(1).and_then(|j| bytes.get(j));
            let after = bytes.get(i + 1);
            if !before.is_some_and(u8::is_ascii_digit) || !after.is_some_and(u8::is_ascii_digit) {
                return None;
            }
        }
    }
    let clean = lower.replace('_', "");
    if clean.bytes().all(|b| b.is_ascii_digit()) {
        if clean.len() > 1 && clean.starts_with('0') && clean.bytes().any(|b| b != b'0') {
            return None;
        }
        return wide_integer(&clean, 10);
    }
    // Floats: digits with one '.', and/or an exponent. Rust's parser accepts the same shapes
    // once `inf`/`nan` words (not Python literals) are excluded.
    if !clean
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'+' | b'-'))
    {
        return None;
    }
    let float = clean.parse::<f64>().ok().filter(|f| f.is_finite())?;
    Number::from_f64(float).map(Value::Number)
}

/// `-value`, for a value [`Parser::number`] read: an integer too wide for a JSON number is
/// its decimal digits (see `yaml11::wide_integer`), and so is its negation.
fn negate(value: Value) -> Option<Value> {
    match value {
        Value::String(digits) => Some(Value::String(format!("-{digits}"))),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.checked_neg().map(Value::from)
            } else if let Some(u) = n.as_u64() {
                // Only -(2^63) fits; anything wider is its digits.
                Some(if u == 1u64 << 63 {
                    Value::from(i64::MIN)
                } else {
                    Value::String(format!("-{u}"))
                })
            } else {
                n.as_f64()
                    .and_then(|f| Number::from_f64(-f))
                    .map(Value::Number)
            }
        }
        _ => None,
    }
}

/// Dict keys become JSON object keys: strings as is, other scalars as their text.
fn key_text(key: &Value) -> Option<String> {
    match key {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(if *b { "True" } else { "False" }.to_string()),
        Value::Null => Some("None".to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Python's `ast.literal_eval` refuses a decimal integer of more than 4,300 digits
    /// (SyntaxError "Exceeds the limit"), and Ansible keeps such an INI value as its text.
    #[test]
    fn integers_past_pythons_digit_limit_keep_the_text() {
        let at_limit = format!("[{}]", "1".repeat(4300));
        assert_eq!(parse_value(&at_limit), json!(["1".repeat(4300)]));
        let over = format!("[{}]", "1".repeat(4301));
        assert_eq!(parse_value(&over), Value::String(over.clone()));
    }

    /// Python's tokenizer reads 200 nested brackets of any kind and refuses 201 ("too many
    /// nested parentheses"); Ansible keeps the text. 30,000 used to overflow the stack.
    #[test]
    fn brackets_past_pythons_nesting_limit_keep_the_text() {
        let nested =
            |open: &str, close: &str, n: usize| format!("{}1{}", open.repeat(n), close.repeat(n));
        let mut want = json!(1);
        for _ in 0..200 {
            want = json!([want]);
        }
        assert_eq!(parse_value(&nested("[", "]", 200)), want);
        assert_eq!(parse_value(&nested("(", ")", 200)), json!(1));
        for raw in [
            nested("[", "]", 201),
            nested("(", ")", 201),
            nested("{1: (", ")}", 101),
            nested("[", "]", 30_000),
            format!("{}{}", "[".repeat(30_000), "]".repeat(30_000)),
        ] {
            assert_eq!(parse_value(&raw), Value::String(raw.clone()));
        }
        assert_eq!(
            parse_value(&format!(
                "[{}, {}]",
                nested("[", "]", 199),
                nested("(", ")", 199)
            )),
            json!([want[0].clone(), 1])
        );
    }

    /// A number token of many `e+` (not a number: kept as text) is read in one pass;
    /// before, each `e+` looked back over the whole token (60,000 of them: 16 s).
    #[test]
    fn a_long_token_of_exponent_signs_is_read_in_one_pass() {
        let started = crate::testing::thread_cpu_time();
        let raw = format!("1{}", "e+".repeat(60_000));
        assert_eq!(parse_value(&raw), Value::String(raw.clone()));
        assert_eq!(parse_value("0x1e+1"), Value::String("0x1e+1".into()));
        assert_eq!(parse_value("1e+1"), json!(10.0));
        let took = crate::testing::thread_cpu_time() - started;
        assert!(took.as_secs() < 5, "took {took:?}");
    }

    #[test]
    fn literals_become_typed_values() {
        for (raw, want) in [
            ("2222", json!(2222)),
            ("-9223372036854775808", json!(i64::MIN)),
            ("0xFFFFFFFFFFFFFFFF", json!(u64::MAX)),
            // Past 64 bits: the decimal digits (Python ints have no width).
            (
                "[1, -99999999999999999999]",
                json!([1, "-99999999999999999999"]),
            ),
            ("0x1_0000_0000_0000_0000", json!("18446744073709551616")),
            ("-1", json!(-1)),
            ("1_000", json!(1000)),
            ("0x1F", json!(31)),
            ("0o17", json!(15)),
            ("0b101", json!(5)),
            ("1.5", json!(1.5)),
            ("1e3", json!(1000.0)),
            (".5", json!(0.5)),
            ("True", json!(true)),
            ("False", json!(false)),
            ("True", json!(true)),
            ("False", json!(false)),
            ("None", json!(null)),
            ("'quoted'", json!("quoted")),
            ("\"a\\tb\"", json!("a\tb")),
            ("r'a\\tb'", json!("a\\tb")),
            ("'a' \"b\"", json!("ab")),
            ("'0123'", json!("0123")),
            (
                "['198.51.100.53', \"198.51.100.54\"]",
                json!(["198.51.100.53", "198.51.100.54"]),
            ),
            ("('a',)", json!(["a"])),
            ("(1)", json!(1)),
            ("[]", json!([])),
            (
                "{'a': 1, 'b': [True, None],}",
                json!({"a": 1, "b": [true, null]}),
            ),
            ("{1: 'x'}", json!({"1": "x"})),
            ("{'a', 'b'}", json!(["a", "b"])),
            ("80,443", json!([80, 443])),
            ("10 # port", json!(10)),
        ] {
            assert_eq!(parse_value(raw), want, "{raw}");
        }
    }

    #[test]
    fn non_literals_stay_verbatim() {
        for raw in [
            "true",
            "false",
            "192.0.2.11",
            "10.233.0.0/18",
            "etcd1",
            "yes",
            "TRUE",
            "010",
            "1_",
            "1__0",
            "0x",
            "1j",
            "inf",
            "nan",
            "",
            "'unterminated",
            "[1, 2",
            "{{ upstream_dns_servers }}",
            "ubuntu # the default user",
            "8.8.8.8,1.1.1.1",
            "f'x'",
            "a=b",
            "/run/systemd/resolve/resolv.conf",
            "-x",
            "1e999",
        ] {
            assert_eq!(parse_value(raw), json!(raw), "{raw}");
        }
    }
}
