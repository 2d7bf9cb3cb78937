//! INI inventories, read like Ansible's `ini` inventory plugin: `[group]` host lines with
//! inline `key=value` variables, `[group:vars]`, `[group:children]`, host ranges, hosts before
//! any section in `ungrouped`, whole-line `#` and `;` comments.
//!
//! Values go through [`literal::parse_value`](super::literal::parse_value) in both host lines
//! and `:vars` sections. That is what current Ansible's code does (its documentation still
//! says `:vars` values are strings), so numbers, booleans and lists come out typed either way.
//! Two Ansible quirks are kept on purpose, because dnsfix must read what Ansible deploys:
//! host lines are split like a shell (`shlex`), so a `#` anywhere outside quotes starts a
//! comment; `:vars` lines are split at the first `=` only, so a trailing `# comment` there
//! is part of the value unless the value is a Python literal (dnsfix warns when that happens).

use std::collections::HashSet;
use std::path::Path;

use super::builder::{Builder, UNGROUPED};
use super::error::InventoryError;
use super::host_range::{expand_host_pattern, split_port};
use super::literal::parse_value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Hosts,
    Vars,
    Children,
}

/// A group used before any `[g]` or `[g:children]` section defines it. Ansible allows the
/// definition to come later in the file and fails at the end if it never does.
#[derive(Debug)]
struct Pending {
    name: String,
    line: usize,
    /// `None` for a `[g:vars]` section, `Some(parent)` for a `[parent:children]` entry.
    parent: Option<String>,
}

/// Reads the INI inventory `text` (from `path`) into `builder`.
pub(crate) fn parse(path: &Path, text: &str, builder: &mut Builder) -> Result<(), InventoryError> {
    let error =
        |line: usize, message: String| InventoryError::parse(path, Some(line), None, message);
    // Groups other sources of the same inventory (an inventory directory) already made count
    // as declared, as Ansible checks `self.inventory.groups`, not this file.
    let mut declared: HashSet<String> = builder.group_names().map(str::to_owned).collect();
    let mut pending: Vec<Pending> = Vec::new();
    let mut group = UNGROUPED;
    let mut state = State::Hosts;

    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }

        if let Some((name, kind)) = section(line) {
            state = section_state(name, kind).map_err(|message| error(number, message))?;
            group = builder.group(name);
            if state == State::Vars {
                if !declared.contains(name) {
                    pending.push(Pending {
                        name: name.to_string(),
                        line: number,
                        parent: None,
                    });
                }
            } else {
                declared.insert(name.to_string());
            }
            continue;
        }
        if line.starts_with('[') && line.ends_with(']') {
            return Err(error(
                number,
                format!(
                    "invalid section header `{line}`: expected [group], [group:vars] or [group:children], with no spaces in the name"
                ),
            ));
        }

        match state {
            State::Hosts => host_line(path, number, line, group, builder),
            State::Vars => vars_line(path, number, line, group, builder),
            State::Children => children_line(number, line, group, builder, &declared, &mut pending),
        }
        .map_err(|message| error(number, message))?;
    }

    if let Some(undefined) = pending.iter().find(|p| !declared.contains(&p.name)) {
        return Err(error(undefined.line, undefined_group(undefined)));
    }
    Ok(())
}

/// What the lines of section `[name:kind]` are.
fn section_state(name: &str, kind: Option<&str>) -> Result<State, String> {
    match kind {
        None | Some("hosts") => Ok(State::Hosts),
        Some("vars") => Ok(State::Vars),
        Some("children") => Ok(State::Children),
        Some(other) => Err(format!(
            "unknown section type `:{other}` in `[{name}:{other}]`: expected [{name}], [{name}:vars] or [{name}:children]"
        )),
    }
}

/// A `key=value` line of a `[group:vars]` section.
fn vars_line(
    path: &Path,
    number: usize,
    line: &str,
    group: usize,
    builder: &mut Builder,
) -> Result<(), String> {
    let group_name = builder.group_name(group).to_string();
    let Some((key, value)) = line.split_once('=') else {
        return Err(format!(
            "expected `key=value` in [{group_name}:vars], found `{line}`"
        ));
    };
    let (key, value) = (key.trim(), value.trim());
    if key.is_empty() {
        return Err(format!(
            "expected `key=value` in [{group_name}:vars], found `{line}`"
        ));
    }
    let parsed = parse_value(value);
    if parsed.is_string() && has_trailing_comment(value) {
        builder.warn(
            path,
            Some(number),
            format!(
                "the value of `{key}` is `{value}`: in [group:vars] sections Ansible keeps a trailing `#` comment as part of the value; put the comment on its own line"
            ),
        );
    }
    builder.set_group_var(group, key.to_string(), parsed, path, Some(number), false)
}

/// A group name line of a `[parent:children]` section; a child no section has declared
/// yet is pending until the end of the file.
fn children_line(
    number: usize,
    line: &str,
    group: usize,
    builder: &mut Builder,
    declared: &HashSet<String>,
    pending: &mut Vec<Pending>,
) -> Result<(), String> {
    let parent_name = builder.group_name(group).to_string();
    let Some(child_name) = group_name_line(line) else {
        return Err(format!(
            "expected a group name in [{parent_name}:children], found `{line}`"
        ));
    };
    if !declared.contains(child_name) {
        pending.push(Pending {
            name: child_name.to_string(),
            line: number,
            parent: Some(parent_name),
        });
    }
    let child = builder.group(child_name);
    builder.add_child(group, child)
}

/// Why a group used by `[g:vars]` or `[parent:children]` but never defined is an error.
fn undefined_group(undefined: &Pending) -> String {
    let name = &undefined.name;
    match &undefined.parent {
        None => format!(
            "[{name}:vars] sets variables of group `{name}`, but no [{name}] or [{name}:children] section defines it"
        ),
        Some(parent) => format!(
            "[{parent}:children] includes group `{name}`, but no [{name}] or [{name}:children] section defines it"
        ),
    }
}

/// `[name]` or `[name:kind]`, optionally followed by a `#` comment. `name` has no spaces,
/// `:` or `]`; `kind` is a word. (Ansible's section regex.)
fn section(line: &str) -> Option<(&str, Option<&str>)> {
    let inner_and_rest = line.strip_prefix('[')?;
    let close = inner_and_rest.find(']')?;
    let (inner, rest) = (
        &inner_and_rest[..close],
        inner_and_rest[close + 1..].trim_start(),
    );
    if !(rest.is_empty() || rest.starts_with('#')) {
        return None;
    }
    let (name, kind) = match inner.split_once(':') {
        Some((name, kind)) => (name, Some(kind)),
        None => (inner, None),
    };
    let name_ok = !name.is_empty() && !name.contains(char::is_whitespace);
    let kind_ok =
        kind.is_none_or(|k| !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_'));
    (name_ok && kind_ok).then_some((name, kind))
}

/// A `[g:children]` entry: one group name, optionally followed by a `#` comment.
fn group_name_line(line: &str) -> Option<&str> {
    let end = line
        .find(|c: char| c == ':' || c == ']' || c.is_whitespace())
        .unwrap_or(line.len());
    let (name, rest) = line.split_at(end);
    let rest = rest.trim_start();
    (!name.is_empty() && (rest.is_empty() || rest.starts_with('#'))).then_some(name)
}

/// ` #` in a value that is not a literal: Ansible keeps it, the author probably did not mean to.
fn has_trailing_comment(value: &str) -> bool {
    value
        .char_indices()
        .any(|(i, c)| c == '#' && value[..i].ends_with(char::is_whitespace))
}

fn host_line(
    path: &Path,
    number: usize,
    line: &str,
    group: usize,
    builder: &mut Builder,
) -> Result<(), String> {
    let tokens =
        super::shlex::split(line, true).map_err(|e| format!("cannot split host line: {e}"))?;
    let Some((pattern, assignments)) = tokens.split_first() else {
        return Ok(()); // only a comment after all
    };
    if pattern.trim() == "---" {
        return Err(
            "found `---`, which starts a YAML document: name YAML inventories *.yaml or *.yml"
                .to_string(),
        );
    }
    if pattern.ends_with(':') && split_port(pattern).1.is_none() {
        return Err(format!(
            "invalid host `{pattern}`: a trailing `:` must be followed by a port number"
        ));
    }
    let (names, port) = expand_host_pattern(pattern).map_err(|e| {
        format!(
            "invalid host pattern `{}`: {e}",
            crate::text::escape(pattern)
        )
    })?;
    let mut vars = Vec::with_capacity(assignments.len());
    for token in assignments {
        match token.split_once('=') {
            Some((key, value)) if !key.is_empty() => {
                vars.push((key.to_string(), parse_value(value)));
            }
            _ => {
                return Err(format!(
                    "expected `key=value` host variables after `{pattern}`, found `{token}`"
                ));
            }
        }
    }
    for name in names {
        let host = builder.add_host(&name, group, path, port);
        for (key, value) in &vars {
            // INI has no tags: no value is `!unsafe` (Ansible renders `x="!unsafe {{ y }}"`).
            builder.set_host_var(host, key.clone(), value.clone(), path, Some(number), false);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::Inventory;
    use serde_json::json;

    fn load(text: &str) -> Result<Inventory, String> {
        let path = Path::new("inventory.ini");
        let mut builder = Builder::new();
        parse(path, text, &mut builder).map_err(|e| e.to_string())?;
        builder
            .finish(Some(path.to_path_buf()), None)
            .map_err(|e| e.to_string())
    }

    fn names(inventory: &Inventory) -> Vec<&str> {
        inventory.hosts().iter().map(|h| h.name.as_str()).collect()
    }

    /// Kubespray's `inventory/sample/inventory.ini` layout (with the hosts uncommented).
    const KUBESPRAY: &str = "\
# ## Configure 'ip' variable to bind kubernetes services on a
# ## different ip than the default iface
[all]
node1 ansible_host=192.0.2.11  ip=192.0.2.11 etcd_member_name=etcd1
node2 ansible_host=192.0.2.12  ip=192.0.2.12 etcd_member_name=etcd2
node3 ansible_host=192.0.2.13  # ip=10.3.0.3 etcd_member_name=etcd3
; bastion ansible_host=x.x.x.x ansible_user=some_user

[kube_control_plane]
node1

[etcd]
node1
node2

[kube_node]
node2
node3

[calico_rr]

[k8s_cluster:children]
kube_control_plane
kube_node
calico_rr
";

    #[test]
    fn reads_the_kubespray_sample() {
        let inv = load(KUBESPRAY).expect("loads");
        assert_eq!(names(&inv), ["node1", "node2", "node3"]);
        assert_eq!(
            inv.group_members("k8s_cluster"),
            Some(vec!["node1", "node2", "node3"])
        );
        assert_eq!(inv.group_members("etcd"), Some(vec!["node1", "node2"]));
        assert_eq!(inv.group_members("calico_rr"), Some(vec![]));
        assert_eq!(inv.group_members("ungrouped"), Some(vec![]));
        let node3 = &inv.hosts()[2];
        assert_eq!(node3.groups, ["all", "k8s_cluster", "kube_node"]);
        assert_eq!(node3.var_str("ansible_host"), Some("192.0.2.13"));
        assert_eq!(node3.var("ip"), None, "shlex drops the inline comment");
        assert_eq!(inv.hosts()[0].var_str("etcd_member_name"), Some("etcd1"));
    }

    #[test]
    fn reads_the_newer_sample_with_etcd_children() {
        let inv = load(
            "[kube_control_plane]\nnode1 ansible_host=192.0.2.11\n\n[etcd:children]\nkube_control_plane\n\n[kube_node]\nnode4 ansible_host=192.0.2.14\n",
        )
        .expect("loads");
        assert_eq!(inv.group_members("etcd"), Some(vec!["node1"]));
        // k8s_cluster is not written: Kubespray's dynamic grouping adds it.
        assert_eq!(
            inv.host("node1").map(|h| h.groups.clone()),
            Some(vec![
                "all".to_owned(),
                "etcd".into(),
                "k8s_cluster".into(),
                "kube_control_plane".into()
            ])
        );
        // In Ansible's order: `kube_node` is a child of `all`, `kube_control_plane` is one
        // level further down, under `etcd`.
        assert_eq!(names(&inv), ["node4", "node1"]);
        assert_eq!(
            inv.group_members("k8s_cluster"),
            Some(vec!["node4", "node1"])
        );
    }

    #[test]
    fn ranges_ports_ungrouped_and_typed_values() {
        let inv = load(
            "jump ansible_port=2200\n[kube_node]\nnode[01:03] ansible_become=true\nnode[a:b]:2222 ansible_user='ops user'\n[kube_node:vars]\nupstream_dns_servers=['198.51.100.53', '198.51.100.54']\nenable_nodelocaldns=False\nndots = 2\nkube_proxy_mode=ipvs\n",
        )
        .expect("loads");
        assert_eq!(
            names(&inv),
            ["jump", "node01", "node02", "node03", "nodea", "nodeb"]
        );
        assert_eq!(inv.group_members("ungrouped"), Some(vec!["jump"]));
        assert_eq!(inv.hosts()[0].groups, ["all", "ungrouped"]);
        let node01 = &inv.hosts()[1];
        // Not a Python literal: a string, as in Ansible; var_bool reads it as true.
        assert_eq!(node01.var("ansible_become"), Some(&json!("true")));
        assert_eq!(node01.var_bool("ansible_become"), Some(true));
        assert_eq!(
            node01.var("upstream_dns_servers"),
            Some(&json!(["198.51.100.53", "198.51.100.54"]))
        );
        assert_eq!(node01.var("enable_nodelocaldns"), Some(&json!(false)));
        assert_eq!(node01.var("ndots"), Some(&json!(2)));
        assert_eq!(node01.var_str("kube_proxy_mode"), Some("ipvs"));
        let nodeb = &inv.hosts()[5];
        assert_eq!(nodeb.var("ansible_port"), Some(&json!(2222)));
        assert_eq!(nodeb.var_str("ansible_user"), Some("ops user"));
        assert_eq!(inv.hosts()[0].var("ansible_port"), Some(&json!(2200)));
    }

    #[test]
    fn a_host_in_ungrouped_and_a_group_is_not_ungrouped() {
        let inv = load("n1\n[g]\nn1\n").expect("loads");
        assert_eq!(inv.group_members("ungrouped"), Some(vec![]));
        assert_eq!(inv.hosts()[0].groups, ["all", "g"]);
    }

    #[test]
    fn a_group_may_be_defined_after_it_is_used() {
        let inv =
            load("[k8s_cluster:children]\nkube_node\n[k8s_cluster:vars]\na=1\n[kube_node]\nn1\n")
                .expect("loads");
        assert_eq!(inv.hosts()[0].var("a"), Some(&json!(1)));
    }

    #[test]
    fn vars_values_keep_trailing_comments_like_ansible_and_warn() {
        let inv = load("[all:vars]\nansible_user=ubuntu # default\nport=22 # ssh\n[g]\nn1\n")
            .expect("loads");
        let n1 = &inv.hosts()[0];
        assert_eq!(n1.var_str("ansible_user"), Some("ubuntu # default"));
        assert_eq!(n1.var("port"), Some(&json!(22)));
        assert_eq!(inv.warnings().len(), 1);
        assert!(
            inv.warnings()[0]
                .to_string()
                .starts_with("inventory.ini:2: the value of `ansible_user`")
        );
    }

    #[test]
    fn malformed_files_name_file_and_line() {
        let cases = [
            (
                "[kube_node]\nn1\n[kube_node:hostz]\n",
                "inventory.ini:3: unknown section type `:hostz` in `[kube_node:hostz]`: expected [kube_node], [kube_node:vars] or [kube_node:children]",
            ),
            (
                "# header\n[kube node]\n",
                "inventory.ini:2: invalid section header `[kube node]`: expected [group], [group:vars] or [group:children], with no spaces in the name",
            ),
            (
                "[k8s_cluster:children]\nkube_node\ncalico_rr\n[kube_node]\nn1\n",
                "inventory.ini:3: [k8s_cluster:children] includes group `calico_rr`, but no [calico_rr] or [calico_rr:children] section defines it",
            ),
            (
                "[g]\nn1\n[k8s_cluster:vars]\na=1\n",
                "inventory.ini:3: [k8s_cluster:vars] sets variables of group `k8s_cluster`, but no [k8s_cluster] or [k8s_cluster:children] section defines it",
            ),
            (
                "[all:vars]\nupstream_dns_servers\n",
                "inventory.ini:2: expected `key=value` in [all:vars], found `upstream_dns_servers`",
            ),
            (
                "[g]\nn1 ansible_host 192.0.2.1\n",
                "inventory.ini:2: expected `key=value` host variables after `n1`, found `ansible_host`",
            ),
            (
                "[g]\nn1 a='unterminated\n",
                "inventory.ini:2: cannot split host line: no closing quotation",
            ),
            (
                "[g]\nnode[1:x]\n",
                "inventory.ini:2: invalid host pattern `node[1:x]`: host range `[1:x]` bounds must be numbers or single letters",
            ),
            (
                "[g]\nn1:\n",
                "inventory.ini:2: invalid host `n1:`: a trailing `:` must be followed by a port number",
            ),
            (
                "[g:children]\ng\n",
                "inventory.ini:2: making `g` a child of `g` creates a loop: `g` is already inside `g`",
            ),
            (
                "[g:children]\na b\n",
                "inventory.ini:2: expected a group name in [g:children], found `a b`",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(load(text).expect_err(text), want, "{text}");
        }
    }

    #[test]
    fn section_headers() {
        assert_eq!(section("[kube_node]"), Some(("kube_node", None)));
        assert_eq!(
            section("[k8s_cluster:children] # comment"),
            Some(("k8s_cluster", Some("children")))
        );
        assert_eq!(section("[all:vars]"), Some(("all", Some("vars"))));
        assert_eq!(section("[kube node]"), None);
        assert_eq!(section("[2001:db8::1]:22"), None);
        assert_eq!(section("[a:b-c]"), None);
    }

    #[test]
    fn trailing_comments_in_vars_values() {
        assert!(has_trailing_comment("ubuntu # default user"));
        assert!(!has_trailing_comment("a#b"));
        assert!(!has_trailing_comment("plain"));
    }
}
