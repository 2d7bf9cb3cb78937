//! The local inventory changes that keep node fixes from being reverted by the next
//! Kubespray run (`inventory_set`): which group_vars file to edit, and the edit itself,
//! made with the same in-place YAML editor as the kubelet config.
//!
//! Where a key goes: the group_vars file that already sets it (in `all`, then `k8s_cluster`),
//! else Kubespray's own `group_vars/all/all.yml`, else `group_vars/all.yml`, else a new
//! `group_vars/all/dnsfix.yml`. Only keys every host agrees on are set at group level; hosts
//! that disagree are reported instead.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::model::InventoryChange;
use crate::edit::{YamlValue, yaml_set};
use crate::util::sha256_hex;

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
/// `path\0content\0`, in path order.
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
        all.extend_from_slice(path.display().to_string().as_bytes());
        all.push(0);
        all.extend_from_slice(&std::fs::read(&path).unwrap_or_default());
        all.push(0);
    }
    sha256_hex(&all)
}

/// The file a key belongs in (see the module docs).
fn target_file(base: &Path, key: &str) -> PathBuf {
    let group_vars = base.join("group_vars");
    for group in ["all", "k8s_cluster", "k8s-cluster"] {
        let mut candidates = Vec::new();
        for ext in ["yml", "yaml"] {
            candidates.push(group_vars.join(format!("{group}.{ext}")));
        }
        if let Ok(entries) = std::fs::read_dir(group_vars.join(group)) {
            let mut inside: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
                .collect();
            inside.sort();
            candidates.extend(inside);
        }
        for path in candidates {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let defines = serde_norway::from_str::<serde_norway::Value>(&text)
                .ok()
                .and_then(|v| v.get(key).cloned())
                .is_some();
            if defines {
                return path;
            }
        }
    }
    for path in [group_vars.join("all/all.yml"), group_vars.join("all.yml")] {
        if path.is_file() {
            return path;
        }
    }
    group_vars.join("all/dnsfix.yml")
}

/// A key, its value and the hosts that need it.
type Setting = (String, Json, Vec<String>);

/// Turns the wanted settings into file edits. Returns the changes and, per host, notes for
/// settings that could not be made at group level.
pub fn changes(
    inventory: &Path,
    wanted: &[Wanted],
) -> (Vec<InventoryChange>, BTreeMap<String, Vec<String>>) {
    let base = base_dir(inventory);
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
    for (key, list) in by_key {
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
        let path = target_file(&base, &key);
        let entry = (key, w.value.clone(), w.hosts.clone());
        match by_file.iter_mut().find(|(p, _)| *p == path) {
            Some((_, list)) => list.push(entry),
            None => by_file.push((path, vec![entry])),
        }
    }
    let mut out = Vec::new();
    for (path, settings) in by_file {
        let before = std::fs::read_to_string(&path).ok();
        let mut text = before.clone().unwrap_or_default();
        let mut shown = Vec::new();
        let mut hosts: Vec<String> = Vec::new();
        let mut failed = None;
        for (key, value, needs) in &settings {
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
            match yaml_set::set(&text, key, &yaml) {
                Ok(edit) if edit.changed => {
                    text = edit.text;
                    shown.push(format!("{key}: {}", show(value)));
                    for h in needs {
                        if !hosts.contains(h) {
                            hosts.push(h.clone());
                        }
                    }
                }
                Ok(_) => {}
                Err(e) => failed = Some(format!("{}: {e}", path.display())),
            }
        }
        if let Some(message) = failed {
            for (_, _, needs) in &settings {
                for host in needs {
                    notes.entry(host.clone()).or_default().push(format!(
                        "the inventory cannot be updated automatically ({message}); set it by \
                         hand or Kubespray will undo the fix"
                    ));
                }
            }
            continue;
        }
        if shown.is_empty() {
            continue;
        }
        out.push(InventoryChange {
            path: path.display().to_string(),
            before_sha256: before.as_ref().map(|b| sha256_hex(b.as_bytes())),
            before,
            content: text,
            settings: shown,
            hosts,
        });
    }
    (out, notes)
}

fn show(value: &Json) -> String {
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
