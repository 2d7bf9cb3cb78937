//! [`Host`]: one inventory host with its groups and its fully merged variables, plus typed
//! accessors that read variables the way Ansible would coerce them. Values are never
//! templated: a `"{{ ... }}"` value is returned verbatim.

use std::collections::BTreeMap;

use serde_json::Value;

use super::Vars;
use super::origin::VarOrigin;

/// One host, as every later stage sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Host {
    pub name: String,
    /// Every group the host belongs to, directly or through a parent, including `all`, in
    /// Ansible's merge order: by depth (most general first), then `ansible_group_priority`,
    /// then name. A variable from a later group beats the same variable from an earlier one.
    pub groups: Vec<String>,
    /// Fully merged variables, precedence applied. Like Ansible, this includes
    /// `inventory_file` and `inventory_dir` (absolute paths) for hosts read from a file.
    pub vars: Vars,
    /// Where each variable's winning value was set (empty for hosts made in code).
    pub origins: BTreeMap<String, VarOrigin>,
}

/// What an inline `!vault` value (`password: !vault |` and its ciphertext) reads as: not its
/// ciphertext, which Ansible never uses as the value, but a template, which every rule,
/// playbook and check treats as a value dnsfix cannot know ([`is_template`]).
pub const VAULTED: &str = "{{ !vault (encrypted: dnsfix does not decrypt it) }}";

/// Whether a value is a Jinja template dnsfix does not render (`"{{ corp_dns }}"`, a `{% %}`
/// block, a `{# #}` comment, a `#jinja2:` header): Ansible makes something of it that is not
/// known here ([`crate::text::jinja_syntax`], what the inventory writer refuses too).
pub fn is_template(value: &str) -> bool {
    crate::text::jinja_syntax(value)
}

impl Host {
    /// A host with no groups and no variables; mostly for tests and for the implicit
    /// localhost.
    pub fn new(name: impl Into<String>) -> Host {
        Host {
            name: name.into(),
            groups: Vec::new(),
            vars: Vars::new(),
            origins: BTreeMap::new(),
        }
    }

    /// The raw merged value of a variable.
    pub fn var(&self, key: &str) -> Option<&Value> {
        self.vars.get(key)
    }

    /// A string variable; `None` when absent or not a string (numbers are not converted, so a
    /// caller never mistakes `8053` for a host name).
    pub fn var_str(&self, key: &str) -> Option<&str> {
        self.var(key).and_then(Value::as_str)
    }

    /// A boolean variable, coerced like Ansible's `bool` filter: YAML booleans, the numbers
    /// 1 and 0, and the strings `yes/no`, `true/false`, `on/off`, `y/n`, `t/f`, `1/0` in any
    /// case. `None` when absent or when the value is none of those (e.g. a template).
    pub fn var_bool(&self, key: &str) -> Option<bool> {
        truthy(self.var(key)?)
    }

    /// A string variable that says something dnsfix can use: set, not empty, and not a
    /// template it cannot render (`"{{ cluster_name }}"` left over).
    pub fn var_set(&self, key: &str) -> Option<&str> {
        self.var_str(key)
            .filter(|v| !v.is_empty() && !is_template(v))
    }

    /// A string variable where it is set, else `default` where it is absent: `None` where
    /// it is set to something dnsfix cannot use (a template it does not render, an empty
    /// string, null, not a string), which Kubespray renders into something else than its
    /// default.
    pub fn var_or_default<'a>(&'a self, key: &str, default: Option<&'a str>) -> Option<&'a str> {
        match self.var(key) {
            None => default,
            Some(_) => self.var_set(key),
        }
    }

    /// A variable as a bare Jinja test reads it (`{% if enable_nodelocaldns %}`, and a
    /// `when:` without `| bool` up to ansible-core 2.18, which Kubespray pins): a boolean
    /// as it is, a number other than 0, and any non-empty string, `"false"` included
    /// (an INI inventory's `enable_nodelocaldns=false` is that string: Kubespray deploys
    /// NodeLocal DNSCache with it); a list or a mapping when not empty. `None` when absent,
    /// or an unrendered template.
    pub fn var_truthy(&self, key: &str) -> Option<bool> {
        match self.var(key)? {
            Value::Bool(b) => Some(*b),
            Value::Number(n) => Some(n.as_f64() != Some(0.0)),
            Value::String(s) if is_template(s) => None,
            Value::String(s) => Some(!s.is_empty()),
            Value::Array(a) => Some(!a.is_empty()),
            Value::Object(o) => Some(!o.is_empty()),
            Value::Null => Some(false),
        }
    }

    /// A list of scalars as strings. Accepts a YAML/JSON list of strings, numbers or booleans,
    /// or a single string separated by commas and/or whitespace (how such lists are often
    /// written in INI inventories and on command lines), with optional surrounding `[...]`
    /// and quotes. A templated string is returned whole as one element rather than split
    /// into meaningless pieces. `None` when absent, null, or not a list of scalars.
    pub fn var_list(&self, key: &str) -> Option<Vec<String>> {
        match self.var(key)? {
            Value::Array(items) => items.iter().map(scalar_string).collect(),
            Value::String(text) => Some(split_list(text)),
            _ => None,
        }
    }
}

/// Ansible's `boolean()` tables (`module_utils/parsing/convert_bool.py`).
pub(crate) fn truthy(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_f64() {
            Some(1.0) => Some(true),
            Some(0.0) => Some(false),
            _ => None,
        },
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" | "on" | "1" | "true" | "t" => Some(true),
            "n" | "no" | "off" | "0" | "false" | "f" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// A scalar as text; `None` for null, lists and mappings.
pub(crate) fn scalar_string(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn split_list(text: &str) -> Vec<String> {
    if is_template(text) {
        return vec![text.to_string()];
    }
    let trimmed = text.trim();
    let inner = trimmed
        .strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or(trimmed);
    inner
        .split(|c: char| c == ',' || c.is_whitespace())
        .map(|item| item.trim_matches(|c| c == '"' || c == '\''))
        .filter(|item| !item.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn host(vars: Value) -> Host {
        let mut host = Host::new("node1");
        if let Value::Object(map) = vars {
            host.vars = map;
        }
        host
    }

    #[test]
    fn var_bool_accepts_ansible_truthiness() {
        let h = host(json!({
            "a": true, "b": false, "c": "yes", "d": "No", "e": "TRUE", "f": "false",
            "g": 1, "h": 0, "i": "1", "j": "0", "k": "on", "l": "Off",
            "m": "maybe", "n": "{{ enable }}", "o": 2, "p": [true], "q": null,
        }));
        let expect = [
            ("a", Some(true)),
            ("b", Some(false)),
            ("c", Some(true)),
            ("d", Some(false)),
            ("e", Some(true)),
            ("f", Some(false)),
            ("g", Some(true)),
            ("h", Some(false)),
            ("i", Some(true)),
            ("j", Some(false)),
            ("k", Some(true)),
            ("l", Some(false)),
            ("m", None),
            ("n", None),
            ("o", None),
            ("p", None),
            ("q", None),
            ("absent", None),
        ];
        for (key, want) in expect {
            assert_eq!(h.var_bool(key), want, "{key}");
        }
    }

    #[test]
    fn var_str_is_strings_only() {
        let h = host(json!({"s": "x", "n": 53, "b": true}));
        assert_eq!(h.var_str("s"), Some("x"));
        assert_eq!(h.var_str("n"), None);
        assert_eq!(h.var_str("b"), None);
        assert_eq!(h.var_str("absent"), None);
    }

    #[test]
    fn var_list_accepts_lists_and_separated_strings() {
        let h = host(json!({
            "list": ["198.51.100.53", "198.51.100.54"],
            "mixed": ["a", 1, true],
            "nested": ["a", ["b"]],
            "comma": "198.51.100.53, 198.51.100.54",
            "space": "a  b\tc",
            "bracketed": "['a', \"b\"]",
            "empty": "",
            "template": "{{ upstream | default([]) }}",
            "null": null,
            "map": {"a": 1},
        }));
        assert_eq!(
            h.var_list("list"),
            Some(vec!["198.51.100.53".into(), "198.51.100.54".into()])
        );
        assert_eq!(
            h.var_list("mixed"),
            Some(vec!["a".into(), "1".into(), "true".into()])
        );
        assert_eq!(h.var_list("nested"), None);
        assert_eq!(
            h.var_list("comma"),
            Some(vec!["198.51.100.53".into(), "198.51.100.54".into()])
        );
        assert_eq!(
            h.var_list("space"),
            Some(vec!["a".into(), "b".into(), "c".into()])
        );
        assert_eq!(h.var_list("bracketed"), Some(vec!["a".into(), "b".into()]));
        assert_eq!(h.var_list("empty"), Some(vec![]));
        assert_eq!(
            h.var_list("template"),
            Some(vec!["{{ upstream | default([]) }}".into()])
        );
        assert_eq!(h.var_list("null"), None);
        assert_eq!(h.var_list("map"), None);
        assert_eq!(h.var_list("absent"), None);
    }
}
