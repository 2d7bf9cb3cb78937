//! YAML → [`Vars`] with positions: the serde plumbing shared by the YAML inventory parser and
//! the `group_vars/`/`host_vars/` loader.
//!
//! serde_norway keeps no positions in its `Value`, but it does stamp the line and column of
//! the node being visited on any error a visitor returns. So instead of parsing to a `Value`
//! and validating afterwards (when positions are gone), every shape is checked *inside* a
//! visitor, and our own message travels beside the serde error in an [`Issue`] slot.
//!
//! Values follow YAML 1.2 as serde_norway reads it, with the YAML 1.1 rules that Ansible's
//! PyYAML loader applies and that change meaning: a plain (unquoted) `yes`/`no`/`on`/`off`
//! in any of PyYAML's spellings is a boolean, as `true`/`false` are, while a quoted one stays
//! a string (a playbook's `when: vars.x` must not find the string "no" truthy); and plain
//! numbers are YAML 1.1's (`0644` is 420, `0o644` and `1e3` are strings), as are timestamps
//! (see `yaml11.rs`).
//! A value tagged
//! `!unsafe` keeps its content and is marked literal (see [`Marks`]); an inline `!vault` value reads as
//! [`VAULTED`], a value dnsfix cannot know (it never decrypts vault values), and `<<` merge keys are applied inside variables. Jinja is not evaluated here
//! (bare references are resolved later, see `template.rs`).

use std::cell::RefCell;
use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::path::Path;

use serde::de::{self, DeserializeSeed, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};
use serde_json::{Number, Value};

use super::Vars;
use super::error::InventoryError;
use super::host::VAULTED;
use super::yaml11::{
    MAX_INT_DIGITS, Reading, Source, over_python_digits, yaml11_number, yaml11_timestamp,
};

/// Our own description of what went wrong, set by the visitor that noticed it. The serde
/// error that carries it out only contributes the position.
pub(crate) type Issue = RefCell<Option<String>>;

/// Records `message` (the first one wins: it is the innermost) and returns the serde error
/// that unwinds the parse.
pub(crate) fn fail<E: de::Error>(issue: &Issue, message: String) -> E {
    let mut slot = issue.borrow_mut();
    if slot.is_none() {
        *slot = Some(message);
    }
    E::custom("see the inventory issue slot")
}

/// Turns a serde_norway error on `text` into a located [`InventoryError::Parse`].
pub(crate) fn to_error(
    path: &Path,
    text: &str,
    err: &serde_norway::Error,
    issue: &Issue,
) -> InventoryError {
    let (mut line, mut column) = match err.location() {
        Some(at) => (Some(at.line()), Some(at.column())),
        None => (None, None),
    };
    let message = match issue.borrow_mut().take() {
        Some(message) => message,
        None => {
            let message = err.to_string();
            // libyaml's reader (a NUL, a control character) gives a byte offset, not a
            // mark, and serde_norway then says 1:1: the line and column are the offset's.
            let (message, offset) = reader_offset(&message);
            if let Some((l, c)) = offset.and_then(|offset| line_column(text, offset)) {
                (line, column) = (Some(l), Some(c));
            }
            format!(
                "invalid YAML: {}",
                strip_positions(message, line.zip(column))
            )
        }
    };
    InventoryError::parse(path, line, column, message)
}

/// A reader error's message without its ` at position N`, and N.
fn reader_offset(message: &str) -> (&str, Option<usize>) {
    match message.rsplit_once(" at position ") {
        Some((before, digits)) if digits.bytes().all(|b| b.is_ascii_digit()) => {
            (before, digits.parse().ok())
        }
        _ => (message, None),
    }
}

/// The 1-based line and column (in characters) of byte `offset` of `text`.
fn line_column(text: &str, offset: usize) -> Option<(usize, usize)> {
    let before = text.get(..offset)?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Some((
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    ))
}

/// Parses a `group_vars/`/`host_vars/` file: a mapping of variables, or nothing at all,
/// with the names of those whose value is tagged `!unsafe` (literal, never rendered).
pub(crate) fn parse_vars_file(
    path: &Path,
    text: &str,
) -> Result<(Vars, BTreeSet<String>), InventoryError> {
    let issue = Issue::default();
    let source = source(text);
    let seed = Shape(VarsMap {
        issue: &issue,
        source: &source,
        what: "a mapping of variables (`name: value`)".to_string(),
        path: String::new(),
    });
    let de = serde_norway::Deserializer::from_str(text);
    seed.deserialize(de)
        .map_err(|err| to_error(path, text, &err, &issue))
}

/// The issue a number raises while [`source`] locates numbers.
const LOCATE: &str = "(locating a number)";

/// `text` ready to be parsed: the numbers whose YAML 1.1 reading may differ from serde's
/// located (see `yaml11.rs`), by parsing the whole text as one value until each is.
pub(crate) fn source(text: &str) -> Source<'_> {
    let mut source = Source::new(text);
    while source.to_locate() {
        source.start(true);
        let issue = Issue::default();
        let marks = RefCell::default();
        let seed = ValueSeed {
            issue: &issue,
            source: &source,
            path: String::new(),
            marks: &marks,
            unsafe_content: false,
        };
        let located = match seed.deserialize(serde_norway::Deserializer::from_str(text)) {
            Err(err) if issue.borrow().as_deref() == Some(LOCATE) => err.location(),
            _ => None,
        };
        match located {
            Some(at) => source.located(at.index()),
            None => break,
        }
    }
    source.start(false);
    source
}

/// libyaml messages embed "at line N column M" for the problem, which our
/// `path:line:column` prefix already holds (`at`), so that one is dropped. A context's
/// position ("while scanning a simple key at line 5 column 5") is kept: it is where the
/// mistake is (the key missing its colon), while the problem's is the next line that is
/// not blank or a comment, which may be a screen further down.
fn strip_positions(message: &str, at: Option<(usize, usize)>) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(found) = rest.find(" at line ") {
        out.push_str(&rest[..found]);
        let tail = &rest[found + " at line ".len()..];
        match position(tail) {
            Some((line, column, after)) if Some((line, column)) == at => rest = after,
            _ => {
                out.push_str(" at line ");
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `N column M` at the start of `text`: N, M and what follows.
fn position(text: &str) -> Option<(usize, usize, &str)> {
    let digits = |t: &str| t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let n = digits(text);
    let col = text[n..].strip_prefix(" column ")?;
    let m = digits(col);
    Some((text[..n].parse().ok()?, col[..m].parse().ok()?, &col[m..]))
}

/// What a structural node may be. [`Shape`] turns each unexpected kind of YAML node into
/// "expected <what>, found <kind>" located at that node.
pub(crate) trait Expect<'de>: Sized {
    type Out;
    fn issue(&self) -> &Issue;
    /// Phrase completing "expected ...", e.g. "a mapping of hosts under `kube_node.hosts`".
    fn expected(&self) -> String;
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Out, A::Error>;
    fn null<E: de::Error>(self) -> Result<Self::Out, E>;
    fn string<E: de::Error>(self, _value: &str) -> Result<Self::Out, E> {
        Err(self.found("a string"))
    }
    /// Whether a value tagged `!unsafe` is read here (then as untagged, and given to
    /// [`Self::tagged_unsafe`]); elsewhere the tag is refused.
    fn takes_unsafe(&self) -> bool {
        false
    }
    /// Marks what was read under an `!unsafe` tag as such.
    fn tagged_unsafe(_out: &mut Self::Out) {}
    fn found<E: de::Error>(&self, kind: &str) -> E {
        fail(
            self.issue(),
            format!("expected {}, found {kind}", self.expected()),
        )
    }
}

/// Adapter making any [`Expect`] a serde seed and visitor.
pub(crate) struct Shape<T>(pub(crate) T);

impl<'de, T: Expect<'de>> DeserializeSeed<'de> for Shape<T> {
    type Value = T::Out;
    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<T::Out, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de, T: Expect<'de>> Visitor<'de> for Shape<T> {
    type Value = T::Out;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.expected())
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T::Out, A::Error> {
        self.0.map(map)
    }
    fn visit_unit<E: de::Error>(self) -> Result<T::Out, E> {
        self.0.null()
    }
    fn visit_none<E: de::Error>(self) -> Result<T::Out, E> {
        self.0.null()
    }
    fn visit_some<D: de::Deserializer<'de>>(self, de: D) -> Result<T::Out, D::Error> {
        de.deserialize_any(self)
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<T::Out, E> {
        self.0.string(value)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<T::Out, E> {
        Err(self.0.found("a boolean"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<T::Out, E> {
        Err(self.0.found("a number"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<T::Out, E> {
        Err(self.0.found("a number"))
    }
    fn visit_i128<E: de::Error>(self, _: i128) -> Result<T::Out, E> {
        Err(self.0.found("a number"))
    }
    fn visit_u128<E: de::Error>(self, _: u128) -> Result<T::Out, E> {
        Err(self.0.found("a number"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<T::Out, E> {
        Err(self.0.found("a number"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<T::Out, A::Error> {
        Err(self.0.found("a list"))
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<T::Out, A::Error> {
        let (tag, rest) = data.variant::<String>()?;
        if tag.trim_start_matches('!') == "unsafe" && self.0.takes_unsafe() {
            let mut out = rest.newtype_variant_seed(self)?;
            T::tagged_unsafe(&mut out);
            return Ok(out);
        }
        Err(self.0.found(&format!("a value tagged `!{tag}`")))
    }
}

/// A mapping key: any scalar, as text. Rejects duplicates at the key itself, so the error
/// points at the second occurrence (serde_norway does not check duplicates for us outside
/// its own `Value`).
pub(crate) struct KeySeed<'a> {
    pub(crate) issue: &'a Issue,
    pub(crate) seen: &'a mut HashSet<String>,
    /// Where the mapping is, for messages: "`kube_node.hosts`", or empty for the top level.
    pub(crate) within: &'a str,
    /// When set, the only keys allowed here (checked at the key, for a precise position).
    pub(crate) allowed: Option<&'a [&'a str]>,
}

impl KeySeed<'_> {
    fn accept<E: de::Error>(self, key: String) -> Result<String, E> {
        if let Some(allowed) = self.allowed
            && !allowed.contains(&key.as_str())
        {
            let list: Vec<String> = allowed.iter().map(|k| format!("`{k}`")).collect();
            return Err(fail(
                self.issue,
                format!(
                    "unexpected key `{key}` in `{}`: expected {}",
                    self.within,
                    list.join(", ")
                ),
            ));
        }
        if self.seen.insert(key.clone()) {
            return Ok(key);
        }
        // Ansible (PyYAML, DUPLICATE_YAML_DICT_KEY=warn) keeps the last value with a
        // warning; dnsfix will not guess which one was meant.
        let within = if self.within.is_empty() {
            String::new()
        } else {
            format!(" in `{}`", self.within)
        };
        Err(fail(
            self.issue,
            format!(
                "duplicate key `{key}`{within} (Ansible warns and keeps the last value): remove one"
            ),
        ))
    }
    fn reject<E: de::Error>(&self, kind: &str) -> E {
        fail(
            self.issue,
            format!("expected a scalar mapping key, found {kind}"),
        )
    }
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = String;
    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<String, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a scalar mapping key")
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<String, E> {
        self.accept(value.to_string())
    }
    fn visit_bool<E: de::Error>(self, value: bool) -> Result<String, E> {
        self.accept(value.to_string())
    }
    fn visit_i64<E: de::Error>(self, value: i64) -> Result<String, E> {
        self.accept(value.to_string())
    }
    fn visit_u64<E: de::Error>(self, value: u64) -> Result<String, E> {
        self.accept(value.to_string())
    }
    fn visit_i128<E: de::Error>(self, value: i128) -> Result<String, E> {
        self.accept(value.to_string())
    }
    fn visit_u128<E: de::Error>(self, value: u128) -> Result<String, E> {
        self.accept(value.to_string())
    }
    fn visit_f64<E: de::Error>(self, value: f64) -> Result<String, E> {
        self.accept(value.to_string())
    }
    fn visit_unit<E: de::Error>(self) -> Result<String, E> {
        Err(self.reject("null"))
    }
    fn visit_none<E: de::Error>(self) -> Result<String, E> {
        Err(self.reject("null"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(self.reject("a list"))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(self.reject("a mapping"))
    }
    fn visit_enum<A: EnumAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(self.reject("a tagged value"))
    }
}

/// A mapping of variables (`name: value`), or null for none. `path` names the mapping in
/// messages about duplicate keys nested inside it.
pub(crate) struct VarsMap<'a> {
    pub(crate) issue: &'a Issue,
    /// The whole document being parsed (see [`ValueSeed::source`]).
    pub(crate) source: &'a Source<'a>,
    pub(crate) what: String,
    pub(crate) path: String,
}

impl<'de> Expect<'de> for VarsMap<'_> {
    /// The variables, with the names of those whose value is tagged `!unsafe`.
    type Out = (Vars, BTreeSet<String>);

    fn issue(&self) -> &Issue {
        self.issue
    }
    fn expected(&self) -> String {
        self.what.clone()
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Out, A::Error> {
        read_object(self.issue, self.source, &self.path, map)
    }
    fn null<E: de::Error>(self) -> Result<Self::Out, E> {
        Ok((Vars::new(), BTreeSet::new()))
    }
    /// `vars: !unsafe {...}`, `node1: !unsafe {...}`: Ansible reads the mapping, every
    /// value in it unsafe (ansible-core 2.19 lib/ansible/_internal/_yaml/_constructor.py
    /// `construct_yaml_unsafe`, its `_unsafe_depth` held over the whole construction).
    fn takes_unsafe(&self) -> bool {
        true
    }
    fn tagged_unsafe((vars, literal): &mut Self::Out) {
        literal.extend(vars.keys().cloned());
    }
}

/// Any YAML value as JSON. `path` is the dotted key path of this value, for messages.
pub(crate) struct ValueSeed<'a> {
    pub(crate) issue: &'a Issue,
    /// The whole document being parsed: a scalar borrowed from it shows by the byte before
    /// it whether it was quoted, and a number's YAML 1.1 reading is found there.
    pub(crate) source: &'a Source<'a>,
    pub(crate) path: String,
    /// Where the `!unsafe` tags of this very value are recorded, for whoever reads it.
    pub(crate) marks: &'a RefCell<Marks>,
    /// This value is what an `!unsafe` tag tags: a scalar is resolved as if untagged and
    /// plain, quoted or not, as Ansible resolves it (ansible-core 2.19
    /// lib/ansible/_internal/_yaml/_constructor.py `_resolve_and_construct_object`,
    /// `resolve(ScalarNode, value, (True, False))`): `!unsafe 0644` is 420, `!unsafe yes`
    /// true, `!unsafe "0644"` 420 too.
    pub(crate) unsafe_content: bool,
}

/// The `!unsafe` tags a value read by [`ValueSeed`] carries, kept with that value (never
/// by a path written as text, which a key holding a dot would meet: host `w.prod` is no
/// key `prod` of host `w`). Only whole variables are literal to dnsfix (see
/// [`VarOrigin::literal`](super::origin::VarOrigin::literal)); a mapping's marks say which of its keys hold a
/// tagged value, for its reader and for the `<<` merge keys that take them in.
#[derive(Debug, Default)]
pub(crate) struct Marks {
    /// The value itself is tagged `!unsafe`.
    pub(crate) whole: bool,
    /// For a mapping: its keys whose value is tagged (or merged in tagged).
    pub(crate) keys: BTreeSet<String>,
    /// For a list: each item's marks.
    pub(crate) items: Vec<Marks>,
}

/// PyYAML's YAML 1.1 booleans (`resolver.py`, `tag:yaml.org,2002:bool`) that YAML 1.2 reads
/// as strings.
fn yaml11_bool(value: &str) -> Option<bool> {
    match value {
        "yes" | "Yes" | "YES" | "on" | "On" | "ON" => Some(true),
        "no" | "No" | "NO" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

/// Whether `scalar`, borrowed from `source`, was written plain and untagged: it starts
/// inside `source`, the byte before it is not a quote, and no `!!str`-like tag stands before
/// it on its line (anchors may: `&a !!str yes`). A tagged scalar is what its tag says, in
/// PyYAML as in serde.
fn is_plain_in(source: &str, scalar: &str) -> bool {
    let start = (scalar.as_ptr() as usize).wrapping_sub(source.as_ptr() as usize);
    let Some(before) = source.get(..start) else {
        return false;
    };
    if before.ends_with(['"', '\'']) {
        return false;
    }
    let line = before.rsplit('\n').next().unwrap_or_default();
    let tagged = line
        .split_whitespace()
        .rev()
        .take_while(|word| word.starts_with(['!', '&']))
        .any(|word| word.starts_with('!'));
    !tagged
}

impl ValueSeed<'_> {
    /// A plain, untagged scalar as YAML 1.1 reads it.
    fn plain<E: de::Error>(&self, value: &str) -> Result<Value, E> {
        if let Some(digits) = over_python_digits(value) {
            return Err(fail(
                self.issue,
                format!(
                    "an integer of {digits} digits: Python refuses to read one of more than {MAX_INT_DIGITS} (\"Exceeds the limit ({MAX_INT_DIGITS} digits) for integer string conversion\"), so Ansible refuses this file; quote it if it is text"
                ),
            ));
        }
        // YAML 1.1's null (PyYAML's resolver: `~`, `null`, `Null`, `NULL`, or nothing).
        if matches!(value, "" | "~" | "null" | "Null" | "NULL") {
            return Ok(Value::Null);
        }
        Ok(match (yaml11_bool(value), yaml11_number(value)) {
            (Some(b), _) => Value::Bool(b),
            (None, Some(number)) => number,
            (None, None) => {
                Value::String(yaml11_timestamp(value).unwrap_or_else(|| value.to_string()))
            }
        })
    }

    /// A number as YAML 1.1 reads the scalar it came from.
    fn number<E: de::Error>(&self, value: Value) -> Result<Value, E> {
        match self.source.number(value) {
            Reading::Value(value) => Ok(value),
            Reading::Locate => Err(fail(self.issue, LOCATE.to_owned())),
        }
    }
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }
    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
        self.number(Value::from(value))
    }
    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Value, E> {
        self.number(Value::from(value))
    }
    // An integer wider than 64 bits is a Python int to PyYAML, unused by dnsfix but no
    // reason to refuse the file: its decimal digits, as a string (JSON here holds no wider
    // number; see `yaml11.rs`), as Ansible writes it out.
    fn visit_i128<E: de::Error>(self, value: i128) -> Result<Value, E> {
        match i64::try_from(value) {
            Ok(value) => self.number(Value::from(value)),
            Err(_) => Ok(Value::String(value.to_string())),
        }
    }
    fn visit_u128<E: de::Error>(self, value: u128) -> Result<Value, E> {
        match u64::try_from(value) {
            Ok(value) => self.number(Value::from(value)),
            Err(_) => Ok(Value::String(value.to_string())),
        }
    }
    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        // JSON has no infinities or NaN; keep YAML's spelling so the value is still visible.
        Ok(match Number::from_f64(value) {
            Some(n) => return self.number(Value::Number(n)),
            None if value.is_nan() => Value::String(".nan".into()),
            None if value > 0.0 => Value::String(".inf".into()),
            None => Value::String("-.inf".into()),
        })
    }
    fn visit_borrowed_str<E: de::Error>(self, value: &'de str) -> Result<Value, E> {
        if !self.unsafe_content && !is_plain_in(self.source.text, value) {
            return Ok(Value::String(value.to_string()));
        }
        self.plain(value)
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<Value, E> {
        if self.unsafe_content {
            return self.plain(value);
        }
        Ok(Value::String(value.to_string()))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        let mut marks = Vec::new();
        loop {
            let item_marks = RefCell::default();
            let Some(item) = seq.next_element_seed(ValueSeed {
                issue: self.issue,
                source: self.source,
                path: format!("{}[{}]", self.path, items.len()),
                marks: &item_marks,
                unsafe_content: false,
            })?
            else {
                break;
            };
            items.push(item);
            marks.push(item_marks.into_inner());
        }
        self.marks.borrow_mut().items = marks;
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value, A::Error> {
        let (object, keys) = read_object(self.issue, self.source, &self.path, map)?;
        self.marks.borrow_mut().keys = keys;
        Ok(Value::Object(object))
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        // A custom tag: `!unsafe '...'` keeps its content, marked literal: Ansible never
        // renders it (ansible-core 2.19 lib/ansible/_internal/_yaml/_constructor.py
        // `construct_yaml_unsafe`: no string inside is trusted as a template; before 2.19,
        // lib/ansible/parsing/yaml/constructor.py wraps it with `wrap_var`). A `!vault |`
        // value is not its ciphertext but a value dnsfix cannot know (see [`VAULTED`]; the
        // files that hold one say so, see [`vault_lines`]).
        let (tag, content) = data.variant::<String>()?;
        let marks = self.marks;
        let unsafe_content = tag.trim_start_matches('!') == "unsafe";
        let value = content.newtype_variant_seed(ValueSeed {
            unsafe_content,
            ..self
        })?;
        match tag.trim_start_matches('!') {
            "vault" => Ok(Value::String(VAULTED.to_owned())),
            "unsafe" => {
                marks.borrow_mut().whole = true;
                Ok(value)
            }
            _ => Ok(value),
        }
    }
}

/// The lines of a YAML text holding an inline `!vault` value (`key: !vault |`, `- !vault
/// |`), to warn about each once: what Ansible decrypts there, dnsfix cannot read.
pub(crate) fn vault_lines(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            let line = line.trim_start();
            !line.starts_with('#')
                && (line.starts_with("!vault")
                    || line.contains(": !vault")
                    || line.contains("- !vault"))
        })
        .map(|(i, _)| i + 1)
        .collect()
}

/// The warning for an inline `!vault` value.
pub(crate) const VAULT_WARNING: &str = "an inline `!vault` value: dnsfix does not decrypt it, so what it sets is unknown to the rules and playbooks (never its ciphertext, never Kubespray's default); keep DNS variables in plain text";

/// Reads a mapping into a JSON object, rejecting duplicate keys and applying `<<` merge keys
/// (explicit keys win over merged ones, earlier merged mappings over later ones, as in
/// YAML 1.1 and Ansible), with the keys whose value is tagged `!unsafe` (see [`Marks`]).
fn read_object<'de, A: MapAccess<'de>>(
    issue: &Issue,
    source: &Source<'_>,
    path: &str,
    mut map: A,
) -> Result<(Vars, BTreeSet<String>), A::Error> {
    let mut seen = HashSet::new();
    let mut object = Vars::new();
    let mut literal = BTreeSet::new();
    // Each merged mapping with its marks and whether it is tagged as a whole.
    let mut merged: Vec<(Vars, BTreeSet<String>, bool)> = Vec::new();
    while let Some(key) = map.next_key_seed(KeySeed {
        issue,
        seen: &mut seen,
        within: path,
        allowed: None,
    })? {
        let marks = RefCell::default();
        let value = map.next_value_seed(ValueSeed {
            issue,
            source,
            path: if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            },
            marks: &marks,
            unsafe_content: false,
        })?;
        let marks: Marks = marks.into_inner();
        if key == "<<" {
            match value {
                Value::Object(one) => merged.push((one, marks.keys, marks.whole)),
                Value::Array(many) if many.iter().all(Value::is_object) => {
                    let whole = marks.whole;
                    merged.extend(
                        many.into_iter()
                            .zip(marks.items)
                            .filter_map(|(v, m)| match v {
                                Value::Object(one) => Some((one, m.keys, whole || m.whole)),
                                _ => None,
                            }),
                    );
                }
                _ => {
                    return Err(fail(
                        issue,
                        "expected a mapping or a list of mappings after the `<<` merge key"
                            .to_string(),
                    ));
                }
            }
            continue;
        }
        if marks.whole {
            literal.insert(key.clone());
        }
        object.insert(key, value);
    }
    for (vars, tagged, whole) in merged {
        for (key, value) in vars {
            if object.contains_key(&key) {
                continue;
            }
            // A value merged from an `!unsafe` mapping, or tagged in it, stays literal.
            if whole || tagged.contains(&key) {
                literal.insert(key.clone());
            }
            object.insert(key, value);
        }
    }
    Ok((object, literal))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> Result<Vars, String> {
        parse_vars_file(Path::new("gv.yml"), text)
            .map(|(vars, _)| vars)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn reads_mappings_and_empty_files() {
        assert_eq!(parse("").ok(), Some(Vars::new()));
        assert_eq!(parse("# nothing here\n").ok(), Some(Vars::new()));
        assert_eq!(parse("---\n").ok(), Some(Vars::new()));
        let vars = parse("a: 1\nb: [x, 2]\nc: {d: null}\ne: yes\nf: '{{ x }}'\n").ok();
        assert_eq!(
            vars.map(Value::Object),
            Some(json!({"a": 1, "b": ["x", 2], "c": {"d": null}, "e": true, "f": "{{ x }}"}))
        );
    }

    #[test]
    fn plain_yaml11_booleans_are_booleans_and_quoted_ones_strings() {
        let text = "a: yes\nb: 'yes'\nc: \"no\"\nd: Off\ne: [on, 'on', NO]\nf: {g: no}\nh: yesterday\ni: y\nj: !!str yes\nk: &x !!str on\n";
        assert_eq!(
            parse(text).ok().map(Value::Object),
            Some(json!({
                "a": true, "b": "yes", "c": "no", "d": false,
                "e": [true, "on", false], "f": {"g": false}, "h": "yesterday", "i": "y",
                "j": "yes", "k": "on",
            }))
        );
    }

    /// A decimal integer of more digits than Python reads refuses the file, as Ansible's
    /// "Exceeds the limit (4300 digits)" does, at its line; a wider hexadecimal one (an
    /// int to Python, which it cannot write out) is kept as its text, not computed (a
    /// 300,000-digit one took a minute).
    #[test]
    fn integers_past_pythons_digit_limit() {
        let at_limit = format!("ok: 1\nn: 1{}\n", "2".repeat(MAX_INT_DIGITS - 1));
        assert!(parse(&at_limit).is_ok());
        let over = format!("ok: 1\nn: -1_{}\n", "2".repeat(MAX_INT_DIGITS));
        let err = parse(&over).expect_err("refused");
        assert!(
            err.contains("gv.yml:2:") && err.contains("4301 digits"),
            "{err}"
        );
        let sexagesimal = format!("n: 1{}:30\n", "0".repeat(MAX_INT_DIGITS));
        assert!(parse(&sexagesimal).is_err());
        let hex = format!("0x{}", "f".repeat(300_000));
        let vars = parse(&format!("n: {hex}\n")).expect("reads");
        assert_eq!(vars["n"], Value::String(hex));
    }

    /// The `!unsafe` tag of a variable stays with it: a tag nested in a mapping marks no
    /// top-level variable whose name spells its path (before, `nest: {hv_over: !unsafe zz}`
    /// made the key `nest.hv_over` literal), and merged keys keep theirs.
    #[test]
    fn unsafe_tags_mark_the_variables_that_carry_them() {
        let text = "nest: {hv_over: !unsafe zz}
nest.hv_over: '{{ x }}'
l: [!unsafe a]
d: &d {m: !unsafe '{{ x }}', n: '{{ x }}'}
<<: [*d, !unsafe {o: 1}]
w: !unsafe {p: 1}
";
        let (_, literal) = parse_vars_file(Path::new("gv.yml"), text).expect("parses");
        assert_eq!(
            literal,
            BTreeSet::from(["m".into(), "o".into(), "w".into()])
        );
    }

    /// PyYAML's YAML 1.1 numbers (ansible-core 2.19.14 reads `0o17` as a string and `0644`
    /// as 420): before, dnsfix read `0644` as a string and `0o17` and `1e3` as numbers.
    #[test]
    fn plain_numbers_are_read_as_yaml_1_1_reads_them() {
        let text = "mode: 0644\noct: 0o17\nexp: 1e3\nexp_signed: 1.0e+3\nsexa: 1:30\nunder: 1_000\nneg: -.5\nplain: 15\nhex: 0x1F\nlist: [0o17, 017, 15, &a 0o17, *a]\nquoted: '017'\ntagged: !!str 017\nint_tagged: !!int 0o17\nflow: {x: 1e3}\n";
        assert_eq!(
            parse(text).ok().map(Value::Object),
            Some(json!({
                "mode": 420, "oct": "0o17", "exp": "1e3", "exp_signed": 1000.0, "sexa": 90,
                "under": 1000, "neg": "-.5", "plain": 15, "hex": 31,
                "list": ["0o17", 15, 15, "0o17", "0o17"], "quoted": "017", "tagged": "017",
                "int_tagged": 15, "flow": {"x": "1e3"},
            }))
        );
        // JSON is read as JSON, as Ansible's DataLoader tries json.loads first.
        assert_eq!(
            parse("{\"a\": 1e3, \"b\": 15}").ok().map(Value::Object),
            Some(json!({"a": 1000.0, "b": 15}))
        );
    }

    #[test]
    fn an_inline_vault_value_is_unknown_other_tags_keep_their_content_and_merge_keys_apply() {
        let text = "base: &b {x: 1, y: 2}\nv: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  6162\nu: !unsafe '{{ x }}'\nm:\n  <<: *b\n  y: 3\n";
        assert_eq!(vault_lines(text), [2]);
        assert_eq!(vault_lines("# a: !vault |\nl:\n  - !vault |\n    x\n"), [3]);
        let vars = parse(text).ok().map(Value::Object);
        assert_eq!(
            vars,
            Some(json!({
                "base": {"x": 1, "y": 2},
                "v": VAULTED,
                "u": "{{ x }}",
                "m": {"x": 1, "y": 3},
            }))
        );
    }

    #[test]
    fn rejects_non_mappings_with_their_position() {
        assert_eq!(
            parse("- a\n- b\n").err().as_deref(),
            Some("gv.yml:1:1: expected a mapping of variables (`name: value`), found a list")
        );
        assert_eq!(
            parse("just text\n").err().as_deref(),
            Some("gv.yml:1:1: expected a mapping of variables (`name: value`), found a string")
        );
    }

    #[test]
    fn rejects_duplicate_keys_at_the_duplicate() {
        assert_eq!(
            parse("a: 1\nb:\n  c: 1\n  c: 2\n").err().as_deref(),
            Some(
                "gv.yml:4:3: duplicate key `c` in `b` (Ansible warns and keeps the last value): remove one"
            )
        );
        assert_eq!(
            parse("a: 1\na: 2\n").err().as_deref(),
            Some(
                "gv.yml:2:1: duplicate key `a` (Ansible warns and keeps the last value): remove one"
            )
        );
    }

    #[test]
    fn syntax_errors_are_located_without_repeating_the_position() {
        let err = parse("a: 1\nb: [1, 2\nc: 3\n").err().unwrap_or_default();
        assert!(err.starts_with("gv.yml:"), "{err}");
        assert!(err.contains("invalid YAML: "), "{err}");
        assert!(!err.contains(" at line 3 "), "{err}");
        // Where the unclosed `[` is: the line to fix.
        assert!(
            err.ends_with("while parsing a flow sequence at line 2 column 4"),
            "{err}"
        );
    }

    #[test]
    fn strip_positions_removes_only_the_problems_position() {
        assert_eq!(
            strip_positions(
                "did not find expected key at line 3 column 1, while parsing a block mapping at line 1 column 1",
                Some((3, 1))
            ),
            "did not find expected key, while parsing a block mapping at line 1 column 1"
        );
        assert_eq!(
            strip_positions("look at line numbers", Some((1, 1))),
            "look at line numbers"
        );
        assert_eq!(
            strip_positions("x at line 2 column 10", None),
            "x at line 2 column 10"
        );
    }
}
