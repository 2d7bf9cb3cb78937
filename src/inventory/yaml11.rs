//! [`Source`]: a YAML text being parsed, and the YAML 1.1 reading of its plain scalars that
//! Ansible gives them and serde_norway (YAML 1.2) does not.
//!
//! Ansible reads inventories and vars files with PyYAML, whose resolver is YAML 1.1's
//! (PyYAML 6.0 `resolver.py`, `constructor.py`; ansible-core 2.19.14 reads `0o17` as a
//! string and `017` as 15). For numbers the two disagree both ways:
//! - 1.1 numbers that 1.2 reads as strings: octal with a leading zero (`0644` is 420),
//!   `_` between digits (`1_000`), base 60 (`1:30` is 90, `1:30.5` 90.5). These arrive as
//!   plain strings and are read again here ([`yaml11_number`]).
//! - 1.2 numbers that 1.1 reads as strings: `0o17`, and floats without a dot or without a
//!   sign in the exponent (`1e3`, `1.5e3`) or with a sign before the dot (`-.5`). serde hands
//!   these over as numbers, without their text. So where the text holds such a token, each
//!   number it could have come from is first located (`yaml_vars::source` parses again
//!   until the position of each is known: serde_norway stamps an error with the position
//!   of the node that raised it, see [`Reading::Locate`]), and the real parse reads the
//!   text there. Where every token with that value reads one way, and no tag may stand
//!   before one, that reading is taken without locating any (each locating parse reads the
//!   whole text again: thousands of them took minutes).
//!
//! And a plain timestamp with a time of day is PyYAML's `datetime`, which Ansible writes out
//! as `isoformat()` ([`yaml11_timestamp`]); serde keeps the text.
//!
//! A text that is JSON is read as JSON, as Ansible does (`DataLoader` tries `json.loads`
//! first): none of this applies to it.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};

use serde::de::IgnoredAny;
use serde_json::{Number, Value};

/// More numbers than this in one file that YAML 1.1 might read otherwise are not looked
/// for one by one: the rest keep YAML 1.2's reading.
pub(crate) const MAX_LOCATED: usize = 4096;

/// What a number serde read is, for [`Source::number`].
pub(crate) enum Reading {
    Value(Value),
    /// Its position is wanted: the parse is to stop here, with an error serde_norway
    /// stamps with the node's position, to be given to [`Source::located`].
    Locate,
}

/// A YAML text being parsed.
#[derive(Debug)]
pub(crate) struct Source<'a> {
    pub(crate) text: &'a str,
    /// YAML 1.2 values of the tokens in the text that YAML 1.1 reads otherwise, where
    /// the text alone does not say how (see [`settled`]): each such number is located.
    /// (Each value by its JSON text: a lookup per number, however many there are.)
    candidates: HashSet<String>,
    /// YAML 1.2 values the text reads one way in YAML 1.1 wherever they stand, with that
    /// reading: no number with them needs locating.
    settled: HashMap<String, Value>,
    /// Byte offset of each number with such a value, in the order the parse meets them.
    offsets: Vec<usize>,
    /// How many such numbers this parse has met.
    met: Cell<usize>,
    locating: bool,
}

impl<'a> Source<'a> {
    /// `text`, with the numbers YAML 1.1 may read otherwise not located yet.
    pub(crate) fn new(text: &'a str) -> Source<'a> {
        // JSON is read as JSON: Ansible's DataLoader tries json.loads first.
        let json = serde_json::from_str::<IgnoredAny>(text).is_ok();
        let (candidates, settled) = if json {
            (Vec::new(), Vec::new())
        } else {
            candidates(text)
        };
        Source {
            text,
            candidates: candidates.iter().map(Value::to_string).collect(),
            settled: settled
                .into_iter()
                .map(|(value, reading)| (value.to_string(), reading))
                .collect(),
            offsets: Vec::new(),
            met: Cell::new(0),
            locating: false,
        }
    }

    /// Whether numbers are still to be located before the real parse.
    pub(crate) fn to_locate(&self) -> bool {
        !self.candidates.is_empty() && self.offsets.len() < MAX_LOCATED
    }

    /// Starts a locating parse (`true`) or the real one (`false`).
    pub(crate) fn start(&mut self, locating: bool) {
        self.locating = locating;
        self.met.set(0);
    }

    /// The byte position of the number a locating parse stopped at.
    pub(crate) fn located(&mut self, at: usize) {
        self.offsets.push(at);
    }

    /// A number serde read from a scalar, as YAML 1.1 reads that scalar.
    pub(crate) fn number(&self, value: Value) -> Reading {
        let key = value.to_string();
        if let Some(reading) = self.settled.get(&key) {
            return Reading::Value(reading.clone());
        }
        if !self.candidates.contains(&key) {
            return Reading::Value(value);
        }
        let index = self.met.get();
        self.met.set(index + 1);
        match self.offsets.get(index) {
            Some(&at) => Reading::Value(reread(self.text, at, value)),
            None if self.locating => Reading::Locate,
            None => Reading::Value(value),
        }
    }
}

/// The scalar at byte `at` of `text` (after its anchor), as YAML 1.1 reads it, if it is
/// the token serde read as `value`; else `value`. A tagged scalar (`!!int 0o17`) keeps its
/// value: PyYAML constructs it as the tag says, as serde does. But `!unsafe` is no type:
/// Ansible resolves what it tags as an untagged scalar (ansible-core 2.19
/// lib/ansible/_internal/_yaml/_constructor.py `_resolve_and_construct_object`), so
/// `!unsafe 1e3` is the string "1e3" there.
fn reread(text: &str, at: usize, value: Value) -> Value {
    let mut rest = text.get(at..).unwrap_or_default();
    loop {
        let property = match rest.strip_prefix('&') {
            Some(anchor) => anchor,
            None => match rest.strip_prefix("!unsafe") {
                Some(after) if after.starts_with(char::is_whitespace) => after,
                _ => break,
            },
        };
        let end = property.find(char::is_whitespace).unwrap_or(property.len());
        rest = property[end..].trim_start();
    }
    if rest.starts_with('!') {
        return value;
    }
    let end = rest
        .find(|c: char| c.is_whitespace() || matches!(c, ',' | ']' | '}'))
        .unwrap_or(rest.len());
    let token = &rest[..end];
    if yaml12_number(token).as_ref() != Some(&value) {
        return value;
    }
    yaml11_number(token).unwrap_or_else(|| Value::String(token.to_owned()))
}

/// The numbers of `text` that YAML 1.2 and YAML 1.1 read differently, as YAML 1.2 reads
/// them: every run of characters a number can hold is tried (also in comments and quoted
/// strings; those only cost a look). Split in two: those to locate one by one, and those
/// [`settled`] by the text. A token may have a tag before it (which PyYAML, and serde, then
/// construct as the tag says) where a `!` stands before it on its line or anywhere on the
/// last line before that holds more than blanks and a comment (`key: !!float` above an
/// indented `1e3`, blank and comment lines between them or not): one pass over the lines
/// says which, however many tokens a line holds.
fn candidates(text: &str) -> (Vec<Value>, Vec<(Value, Value)>) {
    // Each YAML 1.2 number in the text, with every YAML 1.1 reading of a token that
    // YAML 1.2 reads as it (`None`: one a tag may stand before).
    let mut readings: Vec<(Value, Vec<Option<Value>>)> = Vec::new();
    // Where each value is in `readings`, by its JSON text; and each token's YAML 1.2
    // value: a file of thousands of numbers costs a lookup per token, not a scan.
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut yaml12: HashMap<&str, Option<Value>> = HashMap::new();
    let number_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '+' | '-');
    // Whether the last line so far that holds more than blanks and a comment has a `!`.
    let mut tag_above = false;
    for line in text.split('\n') {
        let first_bang = line.find('!');
        for token in line.split(|c: char| !number_char(c)) {
            if !token.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '.' | '+' | '-'))
                || !token.contains(|c: char| c.is_ascii_digit())
            {
                continue;
            }
            let Some(value) = yaml12
                .entry(token)
                .or_insert_with(|| yaml12_number(token))
                .clone()
            else {
                continue;
            };
            let start = token.as_ptr() as usize - line.as_ptr() as usize;
            let tagged = tag_above || first_bang.is_some_and(|bang| bang < start);
            let reading = (!tagged)
                .then(|| yaml11_number(token).unwrap_or_else(|| Value::String(token.to_owned())));
            match index.get(&value.to_string()) {
                Some(&at) => {
                    let seen = &mut readings[at].1;
                    if !seen.contains(&reading) {
                        seen.push(reading);
                    }
                }
                None => {
                    index.insert(value.to_string(), readings.len());
                    readings.push((value, vec![reading]));
                }
            }
        }
        let significant = line.trim();
        if !significant.is_empty() && !significant.starts_with('#') {
            tag_above = first_bang.is_some();
        }
    }
    let (mut located, mut settled) = (Vec::new(), Vec::new());
    for (value, seen) in readings {
        if seen.iter().all(|r| r.as_ref() == Some(&value)) {
            continue;
        }
        match seen.as_slice() {
            // Every token with this value reads one way: so does every number with it.
            [Some(reading)] => settled.push((value, reading.clone())),
            _ => located.push(value),
        }
    }
    (located, settled)
}

/// A plain scalar's value as serde_norway (YAML 1.2) reads it, if that is a number.
fn yaml12_number(token: &str) -> Option<Value> {
    match serde_norway::from_str::<Value>(token) {
        Ok(value @ Value::Number(_)) => Some(value),
        _ => None,
    }
}

/// A plain scalar's value as PyYAML reads it, if that is a number: its implicit resolvers
/// for `tag:yaml.org,2002:int` and `float`, then `construct_yaml_int` / `_float`. Infinite
/// and NaN floats, which JSON cannot hold, keep YAML's spelling (`.inf`), as elsewhere in
/// dnsfix; an integer wider than 64 bits (Python has no limit) is its decimal digits, a
/// string ([`Wide::value`]).
pub(crate) fn yaml11_number(token: &str) -> Option<Value> {
    if let Some(int) = yaml11_int(token) {
        return Some(int);
    }
    let float = yaml11_float(token)?;
    Some(match Number::from_f64(float) {
        Some(n) => Value::Number(n),
        None if float.is_nan() => Value::String(".nan".into()),
        None if float > 0.0 => Value::String(".inf".into()),
        None => Value::String("-.inf".into()),
    })
}

/// The integer a plain scalar is to PyYAML, if it is one.
fn yaml11_int(token: &str) -> Option<Value> {
    let (negative, body) = split_sign(token);
    let digits_of = |text: &str, radix: u32| {
        text.chars().any(|c| c.is_digit(radix))
            && text.chars().all(|c| c == '_' || c.is_digit(radix))
    };
    // `None` past what Python writes out: kept as its text, never computed (see `too_wide`).
    let in_radix = |text: &str, radix: u32| {
        let digits: Vec<u32> = text.chars().filter_map(|c| c.to_digit(radix)).collect();
        if too_wide(digits.len(), radix) {
            return None;
        }
        let mut magnitude = Wide::default();
        for digit in digits {
            magnitude.mul_add(radix, digit);
        }
        Some(magnitude)
    };
    let magnitude = if let Some(bin) = body.strip_prefix("0b") {
        digits_of(bin, 2).then(|| in_radix(bin, 2))?
    } else if let Some(hex) = body.strip_prefix("0x") {
        digits_of(hex, 16).then(|| in_radix(hex, 16))?
    } else if body == "0" {
        Some(Wide::default())
    } else if let Some(octal) = body.strip_prefix('0') {
        // `[-+]?0[0-7_]+`: `0_` is `0` once its `_`s are gone, and 0 (`construct_yaml_int`).
        octal
            .chars()
            .all(|c| c == '_' || c.is_digit(8))
            .then(|| in_radix(octal, 8))?
    } else if body.starts_with(|c: char| c.is_ascii_digit()) && digits_of(body, 10) {
        in_radix(body, 10)
    } else {
        sexagesimal_int(&sexagesimal(body)?)
    };
    Some(match magnitude {
        Some(magnitude) => magnitude.value(negative),
        None => Value::String(token.to_owned()),
    })
}

/// A base 60 integer's magnitude from its [`sexagesimal`] parts; `None` past what Python
/// writes out. PyYAML computes any width (`construct_yaml_int`: `value += digit*base`,
/// `base *= 60`), but Ansible then cannot write it (ansible-inventory --list, ansible-core
/// 2.19.14 on Python 3.11: 2,000 parts `1:59:...` print, 2,500 fail "Exceeds the limit
/// (4300 digits) for integer string conversion"): kept as its text, as [`too_wide`] keeps
/// a wide hex, and never computed past a bound (that is quadratic in the parts).
fn sexagesimal_int(parts: &[String]) -> Option<Wide> {
    let bound = parts[0].len() as f64 + (parts.len() - 1) as f64 * 60f64.log10();
    if bound > MAX_INT_DIGITS as f64 + 1.0 {
        return None;
    }
    let mut magnitude = Wide::default();
    for digit in parts[0].chars().filter_map(|c| c.to_digit(10)) {
        magnitude.mul_add(10, digit);
    }
    for part in &parts[1..] {
        magnitude.mul_add(60, part.parse().ok()?);
    }
    (magnitude.digits() <= MAX_INT_DIGITS).then_some(magnitude)
}

/// Python (3.11 on, `sys.int_info.default_max_str_digits`) turns no decimal text of more
/// digits than this into an int, nor such an int into text: "Exceeds the limit (4300
/// digits) for integer string conversion".
pub(crate) const MAX_INT_DIGITS: usize = 4300;

/// Whether an integer of `digits` digits in `radix` may have more decimal digits than
/// Python reads or writes: it is not computed here (that is quadratic in its length).
fn too_wide(digits: usize, radix: u32) -> bool {
    digits as f64 * f64::from(radix).log10() > MAX_INT_DIGITS as f64
}

/// The number of decimal digits of a plain scalar PyYAML reads as a decimal (or base 60)
/// integer whose (first) digits Python refuses to convert, refusing the whole file
/// (`construct_yaml_int` calls `int()` on them): more than [`MAX_INT_DIGITS`].
pub(crate) fn over_python_digits(token: &str) -> Option<usize> {
    let (_, body) = split_sign(token);
    let first = body.split(':').next().unwrap_or_default();
    let decimal = first.starts_with(|c: char| ('1'..='9').contains(&c))
        && first.chars().all(|c| c == '_' || c.is_ascii_digit());
    if !decimal || (body.contains(':') && sexagesimal(body).is_none()) {
        return None;
    }
    let digits = first.chars().filter(char::is_ascii_digit).count();
    (digits > MAX_INT_DIGITS).then_some(digits)
}

/// The non-negative integer `digits` (without `_`) in `radix` writes, as [`Wide::value`]
/// gives it; `None` if a character is not such a digit. For the INI reading of Python
/// literals too (`literal.rs`).
pub(crate) fn wide_integer(digits: &str, radix: u32) -> Option<Value> {
    // Past Python's limit, `ast.literal_eval` raises (decimal) or gives an int Python
    // cannot write out: kept as text, as Ansible keeps an INI value it cannot evaluate.
    if too_wide(digits.len(), radix) {
        return None;
    }
    let mut magnitude = Wide::default();
    for c in digits.chars() {
        magnitude.mul_add(radix, c.to_digit(radix)?);
    }
    (!digits.is_empty()).then(|| magnitude.value(false))
}

/// A non-negative integer of any width, as PyYAML's (Python's) are: base 10^9 limbs, the
/// least significant first.
#[derive(Default)]
struct Wide(Vec<u32>);

impl Wide {
    const LIMB: u64 = 1_000_000_000;

    /// `self * by + add` (`add` below 10^9).
    fn mul_add(&mut self, by: u32, add: u32) {
        let mut carry = u64::from(add);
        for limb in &mut self.0 {
            let next = u64::from(*limb) * u64::from(by) + carry;
            *limb = (next % Self::LIMB) as u32;
            carry = next / Self::LIMB;
        }
        while carry > 0 {
            self.0.push((carry % Self::LIMB) as u32);
            carry /= Self::LIMB;
        }
    }

    /// How many decimal digits the integer has (0 has one).
    fn digits(&self) -> usize {
        match self.0.last() {
            Some(top) => (self.0.len() - 1) * 9 + top.to_string().len(),
            None => 1,
        }
    }

    /// The integer, negated where `negative`: a JSON number where it fits in 64 bits
    /// (`-9223372036854775808` included), else its decimal digits as a string, which is
    /// how Ansible writes it out (Python's `str(int)`); JSON here holds no wider number.
    fn value(&self, negative: bool) -> Value {
        let mut digits = String::new();
        for (i, limb) in self.0.iter().rev().enumerate() {
            if i == 0 {
                digits.push_str(&limb.to_string());
            } else {
                digits.push_str(&format!("{limb:09}"));
            }
        }
        if digits.is_empty() {
            digits.push('0');
        }
        if negative && digits != "0" {
            digits.insert(0, '-');
            return digits
                .parse::<i64>()
                .map_or(Value::String(digits), Value::from);
        }
        digits
            .parse::<u64>()
            .map_or(Value::String(digits), Value::from)
    }
}

fn yaml11_float(token: &str) -> Option<f64> {
    let (negative, body) = split_sign(token);
    let sign = if negative { -1.0 } else { 1.0 };
    if matches!(body, ".inf" | ".Inf" | ".INF") {
        return Some(sign * f64::INFINITY);
    }
    if matches!(token, ".nan" | ".NaN" | ".NAN") {
        return Some(f64::NAN);
    }
    let digits = |text: &str| text.chars().all(|c| c == '_' || c.is_ascii_digit());
    if let Some((whole, fraction)) = body.split_once('.')
        && let Some(parts) = sexagesimal(whole)
        && digits(fraction)
    {
        // `[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*`
        let whole = parts.iter().try_fold(0f64, |sum, part| {
            Some(sum * 60.0 + part.parse::<f64>().ok()?)
        })?;
        let fraction: f64 = format!("0.{}", fraction.replace('_', "")).parse().ok()?;
        return Some(sign * (whole + fraction));
    }
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(e) => (&body[..e], Some(&body[e + 1..])),
        None => (body, None),
    };
    let (whole, fraction) = mantissa.split_once('.')?;
    // `[-+]?[0-9][0-9_]*\.[0-9_]*` or, without a sign, `\.[0-9][0-9_]*`; then
    // `(?:[eE][-+][0-9]+)?`.
    let whole_ok = if whole.is_empty() {
        !token.starts_with(['-', '+']) && fraction.starts_with(|c: char| c.is_ascii_digit())
    } else {
        whole.starts_with(|c: char| c.is_ascii_digit())
    };
    let exponent_ok = exponent.is_none_or(|e| {
        e.strip_prefix(['-', '+'])
            .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
    });
    if !(whole_ok && digits(whole) && digits(fraction) && exponent_ok) {
        return None;
    }
    let text = format!("{}.{}", whole.replace('_', ""), fraction.replace('_', ""));
    let text = match exponent {
        Some(e) => format!("{text}e{e}"),
        None => text,
    };
    // Rust reads `1.` and `.5` as Python's float() does.
    text.parse::<f64>().ok().map(|f| sign * f)
}

/// A plain scalar that PyYAML reads as a timestamp with a time of day (`resolver.py`
/// `tag:yaml.org,2002:timestamp`, `construct_yaml_timestamp`: a `datetime`), as Ansible
/// writes that value out: `datetime.isoformat()` (`AnsibleJSONEncoder`), e.g.
/// `2001-12-14 21:59:43.10 -5` is `2001-12-14T21:59:43.100000-05:00`. A date alone
/// (`2024-01-02`) is written as it reads and needs nothing. `None` for anything else, and
/// for a date or time Python's datetime refuses (Ansible fails to load such a file).
pub(crate) fn yaml11_timestamp(token: &str) -> Option<String> {
    fn digits(text: &str, min: usize, max: usize) -> Option<u32> {
        (text.len() >= min && text.len() <= max && text.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse().ok())?
    }
    // [0-9]{4}-[0-9]{1,2}-[0-9]{1,2}
    let mut date = token.splitn(3, '-');
    let year = digits(date.next()?, 4, 4)?;
    let month = digits(date.next()?, 1, 2)?;
    let rest = date.next()?;
    let day_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    let day = digits(&rest[..day_len], 1, 2)?;
    // ([Tt]|[ \t]+)
    let rest = &rest[day_len..];
    let rest = match rest.strip_prefix(['T', 't']) {
        Some(rest) => rest,
        None if rest.starts_with([' ', '\t']) => rest.trim_start_matches([' ', '\t']),
        None => return None,
    };
    // [0-9]{1,2}:[0-9]{2}:[0-9]{2}(\.[0-9]*)?
    let mut time = rest.splitn(3, ':');
    let hour = digits(time.next()?, 1, 2)?;
    let minute = digits(time.next()?, 2, 2)?;
    let rest = time.next()?;
    let second = digits(rest.get(..2)?, 2, 2)?;
    let mut rest = &rest[2..];
    let mut micros = 0;
    if let Some(fraction) = rest.strip_prefix('.') {
        let len = fraction.bytes().take_while(u8::is_ascii_digit).count();
        let six: String = fraction[..len]
            .chars()
            .chain("000000".chars())
            .take(6)
            .collect();
        micros = six.parse().ok()?;
        rest = &fraction[len..];
    }
    // ([ \t]*(Z|[-+][0-9]{1,2}(:[0-9]{2})?))?
    let zone = rest.trim_start_matches([' ', '\t']);
    let offset = match zone.as_bytes().first() {
        None if rest.is_empty() => None,
        Some(b'Z') if zone.len() == 1 => Some("+00:00".to_owned()),
        Some(&sign @ (b'-' | b'+')) => {
            let (hours, minutes) = match zone[1..].split_once(':') {
                Some((h, m)) => (digits(h, 1, 2)?, digits(m, 2, 2)?),
                None => (digits(&zone[1..], 1, 2)?, 0),
            };
            // Python's timezone wants less than a day.
            if hours * 60 + minutes >= 24 * 60 {
                return None;
            }
            let negative = sign == b'-' && hours * 60 + minutes > 0;
            Some(format!(
                "{}{hours:02}:{minutes:02}",
                if negative { '-' } else { '+' }
            ))
        }
        _ => return None,
    };
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => return None,
    };
    if year == 0 || day == 0 || day > days_in_month || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let mut out = format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}");
    if micros > 0 {
        out.push_str(&format!(".{micros:06}"));
    }
    out.push_str(offset.as_deref().unwrap_or_default());
    Some(out)
}

fn split_sign(token: &str) -> (bool, &str) {
    match token.as_bytes().first() {
        Some(b'-') => (true, &token[1..]),
        Some(b'+') => (false, &token[1..]),
        _ => (false, token),
    }
}

/// The parts of `[1-9][0-9_]*(?::[0-5]?[0-9])+` (without `_`), or `None`. (The float form
/// allows a leading `0` in the first part; the integer form does not.)
fn sexagesimal(body: &str) -> Option<Vec<String>> {
    let mut parts = body.split(':');
    let first = parts.next()?;
    let rest: Vec<&str> = parts.collect();
    if rest.is_empty()
        || !first.starts_with(|c: char| c.is_ascii_digit())
        || !first.chars().all(|c| c == '_' || c.is_ascii_digit())
    {
        return None;
    }
    let sixty = |p: &&str| match p.as_bytes() {
        [d] => d.is_ascii_digit(),
        [t, d] => (b'0'..=b'5').contains(t) && d.is_ascii_digit(),
        _ => false,
    };
    if !rest.iter().all(sixty) {
        return None;
    }
    let mut out = vec![first.replace('_', "")];
    out.extend(rest.iter().map(|p| (*p).to_owned()));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_as_pyyaml_reads_them() {
        let cases = [
            ("017", json!(15)),
            ("-017", json!(-15)),
            ("0_17", json!(15)),
            ("0644", json!(420)),
            ("1_000", json!(1000)),
            ("1:30", json!(90)),
            ("-1:30", json!(-90)),
            ("1:30.5", json!(90.5)),
            ("0x1F", json!(31)),
            ("0b101", json!(5)),
            ("+12", json!(12)),
            ("0", json!(0)),
            ("0_", json!(0)),
            ("-0_", json!(0)),
            ("0__", json!(0)),
            ("1.", json!(1.0)),
            (".5", json!(0.5)),
            ("1.0e+3", json!(1000.0)),
            ("1_0.5", json!(10.5)),
            (".inf", json!(".inf")),
            ("-.Inf", json!("-.inf")),
            (".NaN", json!(".nan")),
            // Python ints have no width: past 64 bits, their decimal digits.
            ("-9223372036854775808", json!(i64::MIN)),
            ("18446744073709551616", json!("18446744073709551616")),
            ("0x10000000000000000", json!("18446744073709551616")),
            (
                "-1_000_000_000_000_000_000_000",
                json!("-1000000000000000000000"),
            ),
            ("0x00", json!(0)),
        ];
        for (token, want) in cases {
            assert_eq!(yaml11_number(token), Some(want), "{token}");
        }
        for token in [
            "0o17", "089", "1e3", "1.5e3", "1.0e3", "-.5", "+.5", "1:60", "0:30", "1.2.3", "08",
            "0x", "_1", "1_", "inf", "nan",
        ] {
            let got = yaml11_number(token);
            assert!(
                got.is_none() || token == "1_",
                "{token} is a string to PyYAML, got {got:?}"
            );
        }
        // `1_` is `[1-9][0-9_]*`: 1.
        assert_eq!(yaml11_number("1_"), Some(json!(1)));
    }

    #[test]
    fn timestamps_as_ansible_writes_pyyamls_datetimes() {
        let cases = [
            (
                "2001-12-14 21:59:43.10 -5",
                "2001-12-14T21:59:43.100000-05:00",
            ),
            (
                "2001-12-14t21:59:43.10-05:00",
                "2001-12-14T21:59:43.100000-05:00",
            ),
            ("2001-12-15T02:59:43.1Z", "2001-12-15T02:59:43.100000+00:00"),
            ("2002-12-14 1:02:03", "2002-12-14T01:02:03"),
            ("2024-2-29 00:00:00 +05:30", "2024-02-29T00:00:00+05:30"),
            ("2024-01-02 10:00:00 -0", "2024-01-02T10:00:00+00:00"),
        ];
        for (token, want) in cases {
            assert_eq!(yaml11_timestamp(token).as_deref(), Some(want), "{token}");
        }
        for token in [
            "2024-01-02",
            "2023-02-29 00:00:00",
            "2024-01-02 24:00:00",
            "2024-01-02 10:00",
            "2024-01-02 10:00:00 x",
            "v2024-01-02 10:00:00",
        ] {
            assert_eq!(yaml11_timestamp(token), None, "{token}");
        }
    }

    /// A base 60 integer is Python's up to the 4,300 decimal digits Python writes out
    /// (2,419 parts `1:59:...`: ansible-inventory --list prints it; 2,420: "Exceeds the
    /// limit"), and its text past that, never computed: 100,000 parts took 12 s before.
    #[test]
    fn base_60_integers_past_pythons_digit_limit_keep_the_text() {
        let parts = |n: usize| format!("1{}", ":59".repeat(n - 1));
        let at_limit = yaml11_number(&parts(2419));
        let digits = at_limit
            .as_ref()
            .and_then(Value::as_str)
            .unwrap_or_default();
        assert!(digits.len() == 4300 && digits.starts_with("74259739826247"));
        for n in [2420, 100_000] {
            let token = parts(n);
            assert_eq!(yaml11_number(&token), Some(Value::String(token.clone())));
            assert_eq!(
                yaml11_number(&format!("-{token}")),
                Some(json!(format!("-{token}")))
            );
        }
    }

    /// Whether a tag may stand before a token is read in one pass over the lines: before,
    /// every token scanned its line up to it and back over the comment and blank lines
    /// above it, and every value was looked for among all the values met so far.
    #[test]
    fn many_numbers_on_a_line_under_comments_or_apart_are_read_in_one_pass() {
        let started = crate::testing::thread_cpu_time();
        let line = format!("a: [{}]\n", vec!["1e3"; 60_000].join(", "));
        assert_eq!(
            candidates(&line),
            (vec![], vec![(json!(1000.0), json!("1e3"))])
        );
        let comments = format!("a: 1\n{}", "# 1e3\n".repeat(60_000));
        assert_eq!(candidates(&comments).1.len(), 1);
        let tagged = format!("a: !!float\n{}  1e3\nb: 1e3\n", "\n#\n".repeat(60_000));
        assert_eq!(candidates(&tagged), (vec![json!(1000.0)], vec![]));
        let apart: String = (1..20_000).map(|i| format!("k{i}: {i}e3\n")).collect();
        assert_eq!(candidates(&apart).1.len(), 19_999);
        let took = crate::testing::thread_cpu_time() - started;
        assert!(took.as_secs() < 5, "took {took:?}");
    }

    #[test]
    fn only_numbers_the_two_read_otherwise_are_candidates() {
        // 15 is also `c`'s 15, so each is located; 1000.0 and -0.5 come from one token each.
        let (located, settled) = candidates("a: 0o17\nb: 1e3\nc: 15\nd: [-.5, 017]\n");
        assert_eq!(located, [json!(15)]);
        assert_eq!(
            settled,
            [(json!(1000.0), json!("1e3")), (json!(-0.5), json!("-.5"))]
        );
        assert_eq!(candidates("a: 15\nb: 1.5\nc: 0x1F\n"), (vec![], vec![]));
        // A tag may stand before one: located.
        let (located, settled) = candidates("a: 1e3\nb: !!float 1e3\n");
        assert_eq!((located, settled), (vec![json!(1000.0)], vec![]));
        // A blank or comment-only line between the tag and its token.
        let (located, settled) = candidates("a: 1e3\nb: !!float\n\n  # c\n  1e3\n");
        assert_eq!((located, settled), (vec![json!(1000.0)], vec![]));
    }
}
