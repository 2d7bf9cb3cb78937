//! Variables whose whole value is a reference to another variable, `"{{ cluster_name }}"`,
//! resolved the way Ansible's templar would for that host. Kubespray's sample inventory sets
//! `dns_domain: "{{ cluster_name }}"`, and a rule that saw the template instead of
//! `cluster.local` would guess. Text with such references in it (`"{{ base_ip }}.11"`) is
//! rendered too, as a string (as Ansible does, even `"{{ a }}{{ b }}"` or `" {{ a }}"`),
//! where each reference is to a string or an integer.
//!
//! Only bare references are resolved: anything with a filter, an expression or a lookup is
//! kept verbatim, because dnsfix does not evaluate Jinja and a wrong guess is worse than a
//! visible template. A reference to a variable the inventory does not define (a role
//! default, a fact) is kept verbatim too, and so is one to a value that is, or holds, a
//! template dnsfix does not render (`ip: "{{ ansible_host }}"` with `ansible_host:
//! "{{ inventory_hostname }}.example"`): Ansible renders the whole chain, and half of it
//! would be neither what is written nor what Ansible makes of it. An inline `!vault`
//! value ([`VAULTED`]) is taken through, so that what uses it says it is vaulted. As in
//! Ansible, a reference to a list or a mapping yields that list or mapping, not its string
//! form. A value tagged `!unsafe` ([`VarOrigin::literal`]) is never rendered: Ansible keeps
//! its text, `{{ }}` and all, and a reference to it yields that text, which is not
//! rendered again.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::Vars;
use super::host::{VAULTED, is_template};
use super::origin::VarOrigin;

/// Longer chains than this are a loop (`a: "{{ b }}"`, `b: "{{ a }}"`), left verbatim.
const MAX_DEPTH: usize = 16;

/// The variable named by a bare `{{ name }}` value. Text around it, even a space
/// (`" {{ a }}"`), makes it a string template, which Ansible renders as a string.
pub(crate) fn reference(value: &Value) -> Option<&str> {
    let inner = value.as_str()?.strip_prefix("{{")?.strip_suffix("}}")?;
    identifier(inner)
}

/// `inner` (what stands between `{{` and `}}`) when it names a variable and nothing else.
fn identifier(inner: &str) -> Option<&str> {
    let inner = inner.trim();
    let mut chars = inner.chars();
    let first = chars.next()?;
    ((first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
    .then_some(inner)
}

/// A host's variables as [`resolve`] reads them: each value, and which are literal.
struct Scope<'v> {
    vars: &'v Vars,
    /// The names Ansible defines for every host (`inventory_hostname`).
    magic: &'v Vars,
    /// The variables whose value is literal text (see [`VarOrigin::literal`]).
    literal: &'v BTreeSet<String>,
}

impl<'v> Scope<'v> {
    /// The value a variable's bare references lead to, if that is free of templates (or an
    /// inline `!vault` value), or literal text (tagged `!unsafe`: Ansible takes it through
    /// as it is, `{{ }}` and all); with whether it is literal.
    fn lookup(&self, name: &str) -> Option<(&'v Value, bool)> {
        let mut name = name;
        for _ in 0..MAX_DEPTH {
            let current = self.vars.get(name).or_else(|| self.magic.get(name))?;
            if self.literal.contains(name) {
                return Some((current, true));
            }
            match reference(current) {
                Some(next) => name = next,
                None => {
                    return (current == VAULTED || !holds_template(current))
                        .then_some((current, false));
                }
            }
        }
        None
    }
}

/// A text with bare references in it (`"{{ base_ip }}.1"`, `"node-{{ idx }}"`), rendered
/// as Ansible renders it: a string, each reference replaced by its value's text. Only
/// references to strings free of templates and to integers are rendered (a float, a
/// boolean or a list would need Python's spelling of it); anything else in `{{ }}`, or a
/// `{% %}` or `{# #}`, leaves the text a template. A literal string (`!unsafe`) goes in as
/// it is, and makes the result literal too (returned with it): Ansible renders
/// `"{{ lit }}x"` to `"{{ base }}x"` where `lit: !unsafe "{{ base }}"`, and no further.
fn interpolate(text: &str, scope: &Scope<'_>) -> Option<(String, bool)> {
    if text.contains("{%") || text.contains("{#") {
        return None;
    }
    let mut out = String::new();
    let mut rest = text;
    let mut literal = false;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find("}}")?;
        let (value, piece_literal) = scope.lookup(identifier(&after[..end])?)?;
        match value {
            Value::String(s) if piece_literal || !is_template(s) => out.push_str(s),
            Value::Number(n) if n.is_i64() || n.is_u64() => out.push_str(&n.to_string()),
            _ => return None,
        }
        literal |= piece_literal;
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    // Ansible renders a text once: pieces that come together as template syntax
    // (`"{{ lb }}{{ rb }}"` with `lb: "{"`, `rb: "{ other }}"`) are its result, not a
    // template to render again, as the next round would. Kept as written, unless it holds
    // literal text, which is never rendered again.
    (literal || !is_template(&out)).then_some((out, literal))
}

/// Resolves every bare reference in `vars` (a host's merged variables) in place, recording
/// the template it came from in the variable's origin. `magic` holds the names Ansible
/// defines for every host (`inventory_hostname`), used when `vars` has no such variable.
///
/// A literal value (tagged `!unsafe`, [`VarOrigin::literal`]) is never rendered, and what
/// a reference to one renders to is literal in turn.
pub(crate) fn resolve(vars: &mut Vars, origins: &mut BTreeMap<String, VarOrigin>, magic: &Vars) {
    let mut literal: BTreeSet<String> = origins
        .iter()
        .filter(|(_, origin)| origin.literal)
        .map(|(key, _)| key.clone())
        .collect();
    // Until nothing more renders: a value rendered in one round may complete another's
    // (`ip: "{{ ansible_host }}"`, `ansible_host: "{{ inventory_hostname }}.example"`).
    for _ in 0..MAX_DEPTH {
        let scope = Scope {
            vars,
            magic,
            literal: &literal,
        };
        let mut resolved = Vec::new();
        for (key, value) in vars.iter().filter(|(key, _)| !literal.contains(*key)) {
            let rendered = match reference(value) {
                Some(name) => scope.lookup(name).map(|(v, lit)| (v.clone(), lit)),
                None => value
                    .as_str()
                    .filter(|text| text.contains("{{"))
                    .and_then(|text| interpolate(text, &scope))
                    .map(|(text, lit)| (Value::String(text), lit)),
            };
            if let Some((rendered, lit)) = rendered.filter(|(r, _)| r != value) {
                resolved.push((key.clone(), rendered, lit, value.clone()));
            }
        }
        if resolved.is_empty() {
            break;
        }
        for (key, value, lit, template) in resolved {
            if let Some(origin) = origins.get_mut(&key) {
                if origin.template.is_none() {
                    origin.template = template.as_str().map(str::to_owned);
                }
                origin.literal |= lit;
            }
            if lit {
                literal.insert(key.clone());
            }
            vars.insert(key, value);
        }
    }
}

/// Whether `value` is, or holds anywhere inside, a template.
fn holds_template(value: &Value) -> bool {
    match value {
        Value::String(text) => is_template(text),
        Value::Array(items) => items.iter().any(holds_template),
        Value::Object(map) => map.values().any(holds_template),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::origin::VarScope;
    use serde_json::json;

    fn vars(value: Value) -> Vars {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn bare_references_resolve_through_chains_keeping_types() {
        let mut v = vars(json!({
            "cluster_name": "cluster.local",
            "dns_domain": "{{ cluster_name }}",
            "alias": "{{dns_domain}}",
            "servers": ["192.0.2.53"],
            "upstream_dns_servers": "{{ servers }}",
            "filtered": "{{ cluster_name | upper }}",
            "unknown": "{{ kube_version }}",
            "loop_a": "{{ loop_b }}",
            "loop_b": "{{ loop_a }}",
            "me": "{{ inventory_hostname }}",
            "ansible_host": "{{ inventory_hostname }}.example",
            "ip": "{{ ansible_host }}",
            "unrendered": ["{{ corp_dns }}"],
            "nameservers": "{{ unrendered }}",
            "secret": VAULTED,
            "password": "{{ secret }}",
        }));
        let mut origins = BTreeMap::new();
        origins.insert(
            "dns_domain".to_string(),
            VarOrigin::new(
                std::path::Path::new("gv.yml"),
                Some(3),
                VarScope::GroupVars("k8s_cluster".into()),
            ),
        );
        resolve(
            &mut v,
            &mut origins,
            &vars(json!({"inventory_hostname": "node1"})),
        );
        assert_eq!(v["dns_domain"], json!("cluster.local"));
        assert_eq!(v["alias"], json!("cluster.local"));
        assert_eq!(v["upstream_dns_servers"], json!(["192.0.2.53"]));
        assert_eq!(v["filtered"], json!("{{ cluster_name | upper }}"));
        assert_eq!(v["unknown"], json!("{{ kube_version }}"));
        assert_eq!(v["loop_a"], json!("{{ loop_b }}"));
        assert_eq!(v["me"], json!("node1"));
        // A value that is, or holds, a template dnsfix does not render is not taken
        // through: Ansible renders ["<what corp_dns is>"], dnsfix keeps what is written.
        // One it renders is: ansible_host is "node1.example", and so ip.
        assert_eq!(v["ansible_host"], json!("node1.example"));
        assert_eq!(v["ip"], json!("node1.example"));
        assert_eq!(
            origins
                .get("dns_domain")
                .and_then(|o| o.template.as_deref()),
            Some("{{ cluster_name }}")
        );
        assert_eq!(v["nameservers"], json!("{{ unrendered }}"));
        assert_eq!(v["password"], json!(VAULTED));
        // Pieces that render to template syntax are not rendered again (Ansible renders a
        // text once): kept as written, not taken to `other`'s value.
        let mut joined = vars(json!({
            "lb": "{",
            "rb": "{ other }}",
            "other": "evil.example",
            "ansible_host": "{{ lb }}{{ rb }}",
        }));
        resolve(&mut joined, &mut BTreeMap::new(), &Vars::new());
        assert_eq!(joined["ansible_host"], json!("{{ lb }}{{ rb }}"));
        assert_eq!(
            origins["dns_domain"].template.as_deref(),
            Some("{{ cluster_name }}")
        );
    }

    /// What ansible-core 2.19.14 renders (a probe's `type_debug` says `str` for each):
    /// before, `" {{ a }}"` read as the integer 1 and the others stayed templates.
    #[test]
    fn text_with_references_renders_as_a_string() {
        let mut v = vars(json!({
            "base_ip": "10.0.0",
            "idx": 7,
            "a": 1,
            "b": 2,
            "flt": 1.5,
            "list": [1],
            "sub": "{{ base_ip }}",
            "t1": "{{ base_ip }}.1",
            "t2": "node-{{ idx }}",
            "t3": "{{ a }}{{ b }}",
            "t4": "{{sub}}.{{idx}}",
            "t5": " {{ a }}",
            "t6": "{{ inventory_hostname }}.corp",
            "t7": "x{{ flt }}",
            "t8": "x{{ list }}",
            "t9": "{{ base_ip | upper }}.1",
            "t10": "{{ a }}{% if b %}x{% endif %}",
            "t11": "{{ undefined }}.1",
        }));
        resolve(
            &mut v,
            &mut BTreeMap::new(),
            &vars(json!({"inventory_hostname": "node1"})),
        );
        for (key, want) in [
            ("t1", "10.0.0.1"),
            ("t2", "node-7"),
            ("t3", "12"),
            ("t4", "10.0.0.7"),
            ("t5", " 1"),
            ("t6", "node1.corp"),
            // Python's spelling of a float or a list is not guessed: kept as written.
            ("t7", "x{{ flt }}"),
            ("t8", "x{{ list }}"),
            ("t9", "{{ base_ip | upper }}.1"),
            ("t10", "{{ a }}{% if b %}x{% endif %}"),
            ("t11", "{{ undefined }}.1"),
        ] {
            assert_eq!(v[key], json!(want), "{key}");
        }
    }
}
