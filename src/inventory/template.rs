//! Variables whose whole value is a reference to another variable, `"{{ cluster_name }}"`,
//! resolved the way Ansible's templar would for that host. Kubespray's sample inventory sets
//! `dns_domain: "{{ cluster_name }}"`, and a rule that saw the template instead of
//! `cluster.local` would guess.
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
//! form.

use std::collections::BTreeMap;

use serde_json::Value;

use super::Vars;
use super::host::{VAULTED, is_template};
use super::origin::VarOrigin;

/// Longer chains than this are a loop (`a: "{{ b }}"`, `b: "{{ a }}"`), left verbatim.
const MAX_DEPTH: usize = 16;

/// The variable named by a bare `{{ name }}` value.
pub(crate) fn reference(value: &Value) -> Option<&str> {
    let text = value.as_str()?.trim();
    let inner = text.strip_prefix("{{")?.strip_suffix("}}")?.trim();
    let mut chars = inner.chars();
    let first = chars.next()?;
    ((first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
    .then_some(inner)
}

/// Resolves every bare reference in `vars` (a host's merged variables) in place, recording
/// the template it came from in the variable's origin. `magic` holds the names Ansible
/// defines for every host (`inventory_hostname`), used when `vars` has no such variable.
pub(crate) fn resolve(vars: &mut Vars, origins: &mut BTreeMap<String, VarOrigin>, magic: &Vars) {
    let mut resolved = Vec::new();
    for (key, value) in vars.iter() {
        let mut current = value;
        let mut depth = 0;
        while let Some(name) = reference(current) {
            let Some(next) = vars.get(name).or_else(|| magic.get(name)) else {
                break;
            };
            depth += 1;
            if depth > MAX_DEPTH {
                break;
            }
            current = next;
        }
        if current != value && (current == VAULTED || !holds_template(current)) {
            resolved.push((key.clone(), current.clone(), value.clone()));
        }
    }
    for (key, value, template) in resolved {
        if let Some(origin) = origins.get_mut(&key) {
            origin.template = template.as_str().map(str::to_owned);
        }
        vars.insert(key, value);
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
        // A value that is, or holds, a template is not taken through: Ansible renders
        // "node1.example" and ["<what corp_dns is>"], dnsfix keeps what is written.
        assert_eq!(v["ip"], json!("{{ ansible_host }}"));
        assert_eq!(v["nameservers"], json!("{{ unrendered }}"));
        assert_eq!(v["password"], json!(VAULTED));
        assert_eq!(
            origins["dns_domain"].template.as_deref(),
            Some("{{ cluster_name }}")
        );
    }
}
