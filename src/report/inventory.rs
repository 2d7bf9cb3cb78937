//! `dnsfix inventory`: what dnsfix understood of the inventory, per host: groups (those
//! Kubespray adds at run time marked), how it connects, and every DNS-relevant variable
//! with the file and line it came from. Meant to be read beside `ansible-inventory --list`.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::{Header, escape, pretty_json};
use crate::inventory::{ConnectionKind, Host, Inventory, VarOrigin};

/// The inventory variables dnsfix's rules, playbooks and templates read (DESIGN.md's list,
/// and what Kubespray derives them from), plus every `dnsfix_*` variable.
pub const DNS_VARIABLES: &[&str] = &[
    "upstream_dns_servers",
    "nameservers",
    "searchdomains",
    "remove_default_searchdomains",
    "resolvconf_mode",
    "dns_mode",
    "enable_nodelocaldns",
    "nodelocaldns_ip",
    "dns_domain",
    "cluster_name",
    "kube_service_addresses",
    "kube_pods_subnet",
    "skydns_server",
    "coredns_server",
    "kube_resolv_conf",
    "kube_proxy_mode",
    "kube_proxy_masquerade_all",
    "kube_version",
    "kube_network_plugin",
    "enable_dual_stack_networks",
    "ipv6_stack",
];

fn dns_relevant(key: &str) -> bool {
    DNS_VARIABLES.contains(&key) || key.starts_with("dnsfix_")
}

#[derive(Debug, Serialize)]
struct Document<'a> {
    #[serde(flatten)]
    header: Header,
    /// Groups Kubespray adds at run time that the inventory does not define.
    dynamic_groups: Vec<&'a str>,
    hosts: Vec<HostEntry<'a>>,
    warnings: Vec<String>,
}

#[derive(Debug, Serialize)]
struct HostEntry<'a> {
    name: &'a str,
    groups: Vec<&'a str>,
    connection: ConnectionEntry,
    /// DNS-relevant variables; `null` value and no origin when unset.
    vars: Vec<VarEntry<'a>>,
}

#[derive(Debug, Serialize)]
struct ConnectionEntry {
    kind: &'static str,
    address: String,
    port: Option<u16>,
    user: Option<String>,
    #[serde(rename = "become")]
    become_root: bool,
    /// `ansible_become_method` where it is not sudo, which dnsfix does not use.
    #[serde(skip_serializing_if = "Option::is_none")]
    become_method: Option<String>,
    private_key: Option<String>,
    /// Options for the system ssh (`ansible_ssh_common_args`, `ansible_ssh_extra_args`, or
    /// Kubespray's bastion default), as split.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ssh_args: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ssh_args_from: Vec<String>,
    /// Why dnsfix will not connect to this host.
    #[serde(skip_serializing_if = "Option::is_none")]
    refused: Option<String>,
}

#[derive(Debug, Serialize)]
struct VarEntry<'a> {
    name: &'a str,
    value: Option<&'a Value>,
    origin: Option<&'a VarOrigin>,
}

fn host_entry<'a>(host: &'a Host) -> HostEntry<'a> {
    let connection = host.connection();
    let mut names: Vec<&str> = DNS_VARIABLES.to_vec();
    names.extend(
        host.vars
            .keys()
            .map(String::as_str)
            .filter(|k| dns_relevant(k) && !DNS_VARIABLES.contains(k)),
    );
    HostEntry {
        name: &host.name,
        groups: host
            .groups
            .iter()
            .map(String::as_str)
            .filter(|g| *g != "all")
            .collect(),
        connection: ConnectionEntry {
            kind: match connection.kind {
                ConnectionKind::Ssh => "ssh",
                ConnectionKind::Local => "local",
            },
            address: connection.address,
            port: connection.port,
            user: connection.user,
            become_root: connection.become_root,
            become_method: connection.become_method,
            private_key: connection.private_key.map(|p| p.display().to_string()),
            ssh_args: connection.ssh_args,
            ssh_args_from: connection.ssh_args_from,
            refused: connection.refused,
        },
        vars: names
            .into_iter()
            .map(|name| VarEntry {
                name,
                value: host.var(name),
                origin: host.origins.get(name),
            })
            .collect(),
    }
}

pub fn json(inventory: &Inventory, hosts: &[&Host]) -> String {
    pretty_json(&Document {
        header: Header::new(inventory.path()),
        dynamic_groups: inventory.dynamic_groups(),
        hosts: hosts.iter().map(|h| host_entry(h)).collect(),
        warnings: inventory
            .warnings()
            .iter()
            .map(ToString::to_string)
            .collect(),
    })
}

/// `ssh user@address:port`, or `local`.
fn describe_target(c: &ConnectionEntry) -> String {
    match c.kind {
        "local" => "local".to_owned(),
        _ => format!(
            "ssh {}{}{}",
            c.user
                .as_deref()
                .map(|u| format!("{u}@"))
                .unwrap_or_default(),
            c.address,
            c.port.map(|p| format!(":{p}")).unwrap_or_default()
        ),
    }
}

/// A path as the user would type it: relative to the inventory's directory when inside it.
fn shown(path: &Path, base: Option<&Path>) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let relative = base.and_then(|b| absolute.strip_prefix(b).ok());
    escape(&relative.unwrap_or(path).display().to_string()).into_owned()
}

pub fn text(inventory: &Inventory, hosts: &[&Host]) -> String {
    let base = inventory.path().map(|p| {
        if p.is_dir() {
            p.to_path_buf()
        } else {
            p.parent().unwrap_or(Path::new("")).to_path_buf()
        }
    });
    let base = base.as_deref().and_then(|b| std::path::absolute(b).ok());
    let mut out = String::new();
    match inventory.path() {
        Some(p) => out.push_str(&format!("inventory {}\n", escape(&p.display().to_string()))),
        None => out.push_str("no inventory: this machine only (ansible_connection=local)\n"),
    }
    let dynamic = inventory.dynamic_groups();
    if !dynamic.is_empty() {
        out.push_str(&format!(
            "added as Kubespray does at run time (roles/dynamic_groups, which playbooks/boilerplate.yml runs first): {} (marked *)\n",
            dynamic.join(", ")
        ));
    }
    if let Some(bastion) = inventory.bastion() {
        out.push_str(&format!(
            "Kubespray bastion: {} ({}), not a node: dnsfix does not run on it; hosts that set no ansible_ssh_common_args connect through it (Kubespray's default ProxyCommand, roles/kubespray_defaults)\n",
            escape(&bastion.name),
            escape(&describe_target(&host_entry(bastion).connection)),
        ));
    }
    for warning in inventory.warnings() {
        out.push_str(&format!("warning: {}\n", escape(&warning.to_string())));
    }
    for host in hosts {
        let entry = host_entry(host);
        let c = &entry.connection;
        let target = describe_target(c);
        let escalation = match (&c.become_method, c.become_root) {
            (Some(method), _) => {
                format!("  become (sudo -n, not the inventory's method: {method})")
            }
            (None, true) => "  become (sudo -n)".to_owned(),
            (None, false) => String::new(),
        };
        out.push_str(&format!(
            "\n{}  {}{}\n",
            escape(entry.name),
            escape(&target),
            escape(&escalation)
        ));
        let groups: Vec<String> = entry
            .groups
            .iter()
            .map(|g| {
                if dynamic.contains(g) {
                    format!("{g}*")
                } else {
                    (*g).to_owned()
                }
            })
            .collect();
        out.push_str(&format!("  groups: {}\n", escape(&groups.join(", "))));
        if !c.ssh_args.is_empty() {
            out.push_str(&format!(
                "  ssh options: {}  from {}\n",
                escape(&c.ssh_args.join(" ")),
                escape(&c.ssh_args_from.join(", "))
            ));
        }
        if let Some(why) = &c.refused {
            out.push_str(&format!("  refused: {}\n", escape(why)));
        }
        let set: Vec<&VarEntry> = entry.vars.iter().filter(|v| v.value.is_some()).collect();
        let width = set.iter().map(|v| v.name.len()).max().unwrap_or(0);
        let value_of = |v: &VarEntry| match v.value {
            Some(Value::String(s)) => escape(s).into_owned(),
            Some(other) => escape(&other.to_string()).into_owned(),
            None => String::new(),
        };
        let value_width = set
            .iter()
            .map(|v| value_of(v).chars().count())
            .max()
            .unwrap_or(0)
            .min(40);
        for var in &set {
            let value = value_of(var);
            let origin = var
                .origin
                .map(|o| {
                    let mut s = shown(&o.path, base.as_deref());
                    if let Some(l) = o.line {
                        s.push_str(&format!(":{l}"));
                    }
                    if let Some(t) = &o.template {
                        s.push_str(&format!(" (from {t})"));
                    }
                    s
                })
                .unwrap_or_default();
            out.push_str(&format!(
                "  {:width$}  {value:value_width$}  {}\n",
                var.name,
                escape(&origin)
            ));
        }
        let unset: Vec<&str> = entry
            .vars
            .iter()
            .filter(|v| v.value.is_none())
            .map(|v| v.name)
            .collect();
        if !unset.is_empty() {
            out.push_str(&format!("  not set: {}\n", unset.join(", ")));
        }
    }
    out
}
