//! Differential tests against Ansible itself: every inventory under
//! `tests/fixtures/inventory/differential/<case>/` is read by dnsfix and by ansible-core, and
//! both must agree on the hosts, each host's groups and each host's variables.
//!
//! Ansible's view is taken two ways:
//! - `ansible-inventory --list`: the hosts and the raw (untemplated) variables;
//! - `ansible-playbook probe.yml`: every group's hosts in Ansible's order (`groups`), then
//!   Kubespray's own dynamic-groups task (copied verbatim from kubespray
//!   playbooks/boilerplate.yml), then every host writes its `group_names` and the templated
//!   value of each variable dnsfix resolved. That is what Kubespray's roles see.
//!
//! ansible-core comes from PyPI; `.ci/run` installs it into a venv under `target/`. The test
//! finds it through `DNSFIX_ANSIBLE_BIN` (a directory), that venv, or `PATH`, and fails, with
//! the command that installs it, when there is none: it never passes by skipping.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use dnsfix::inventory::{Inventory, VarScope};
use serde_json::{Value, json};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn ansible_bin(tool: &str) -> PathBuf {
    crate::common::reference::find(
        tool,
        "DNSFIX_ANSIBLE_BIN",
        "ansible-venv",
        "python3 -m venv target/ansible-venv && target/ansible-venv/bin/pip install ansible-core",
        |_| true,
    )
}

/// Runs an Ansible tool with a private, predictable environment.
fn ansible(tool: &str, args: &[&str], home: &Path) -> String {
    let output = Command::new(ansible_bin(tool))
        .args(args)
        .env("HOME", home)
        .env("ANSIBLE_LOCAL_TEMP", home.join("tmp"))
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_INVENTORY_UNPARSED_WARNING", "0")
        .env("ANSIBLE_LOCALHOST_WARNING", "0")
        .env("ANSIBLE_PYTHON_INTERPRETER", "auto_silent")
        .env_remove("ANSIBLE_CONFIG")
        .current_dir(home)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{tool} {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The `-i` argument of a case: `source` in case.json, else the case directory itself.
fn source(case: &Path) -> PathBuf {
    let spec: Value = std::fs::read_to_string(case.join("case.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    match spec["source"].as_str() {
        Some(s) => case.join(s),
        None => case.to_path_buf(),
    }
}

fn cases() -> Vec<PathBuf> {
    let dir = root().join("tests/fixtures/inventory/differential");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    cases
}

/// What Ansible (through Kubespray's grouping) sees for each host.
struct AnsibleView {
    hosts: Vec<String>,
    /// Members of `ungrouped` (which `group_names` never lists).
    ungrouped: Vec<String>,
    /// Raw variables per host, from `ansible-inventory --list`.
    raw: BTreeMap<String, Value>,
    /// `group_names` and templated probe variables per host, from the probe playbook.
    probed: BTreeMap<String, Value>,
    /// Each group's hosts in Ansible's order (`groups`, before Kubespray's dynamic groups),
    /// for the groups whose order Ansible defines (see [`order_defined`]).
    ordered: BTreeMap<String, Vec<String>>,
}

fn ansible_view(case: &Path, inventory: &Inventory, scratch: &Path) -> AnsibleView {
    let src = source(case);
    let src = src.to_str().expect("utf-8 path");
    let list: Value = serde_json::from_str(&ansible(
        "ansible-inventory",
        &["-i", src, "--list"],
        scratch,
    ))
    .expect("ansible-inventory prints JSON");
    let raw: BTreeMap<String, Value> = list["_meta"]["hostvars"]
        .as_object()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .collect();
    let mut hosts: Vec<String> = Vec::new();
    collect_hosts(&list, "all", &mut hosts);
    hosts.sort();
    hosts.dedup();
    let mut ungrouped = Vec::new();
    collect_hosts(&list, "ungrouped", &mut ungrouped);
    ungrouped.sort();

    // Probe every variable dnsfix holds as a plain value (templates dnsfix keeps verbatim
    // would need Kubespray's role defaults to render; they are compared raw instead).
    let mut probe_vars: Vec<String> = inventory
        .hosts()
        .iter()
        .flat_map(|h| h.vars.iter())
        .filter(|(k, v)| {
            !matches!(k.as_str(), "inventory_file" | "inventory_dir")
                && !v.to_string().contains("{{")
        })
        .map(|(k, _)| k.clone())
        .collect();
    // And every plain variable the vars files beside the inventory set, so a variable dnsfix
    // fails to load (a group it does not form, a file it does not read) is missed by nobody.
    probe_vars.extend(vars_file_keys(&vars_base(case)));
    probe_vars.sort();
    probe_vars.dedup();
    let out = scratch.join("out");
    std::fs::create_dir_all(&out).expect("mkdir out");
    let extra = json!({ "probe_out": out, "probe_vars": probe_vars }).to_string();
    let probe = root().join("tests/fixtures/inventory/differential/probe.yml");
    ansible(
        "ansible-playbook",
        &["-i", src, probe.to_str().expect("utf-8"), "-e", &extra],
        scratch,
    );
    let mut probed = BTreeMap::new();
    for host in &hosts {
        let path = out.join(format!("{host}.json"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("the probe wrote nothing for {host}: {e}"));
        probed.insert(
            host.clone(),
            serde_json::from_str(&text).expect("probe JSON"),
        );
    }
    let groups: BTreeMap<String, Vec<String>> = serde_json::from_str(
        &std::fs::read_to_string(out.join("groups.json")).expect("the probe wrote the groups"),
    )
    .expect("groups JSON");
    let ordered = groups
        .into_iter()
        .filter(|(group, _)| order_defined(&list, group))
        .collect();
    AnsibleView {
        hosts,
        ungrouped,
        raw,
        probed,
        ordered,
    }
}

/// Whether Ansible's order of a group's hosts is defined. `Group._walk_relationship` takes
/// the group's children in order, but the groups of each further level from a set: where
/// two groups of one level add children not met before, the children's order (and so their
/// hosts') is whatever the set gives.
fn order_defined(list: &Value, group: &str) -> bool {
    let children = |g: &str| -> Vec<String> {
        list[g]["children"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    };
    let mut level = children(group);
    let mut seen: HashSet<String> = level.iter().cloned().collect();
    seen.insert(group.to_owned());
    while !level.is_empty() {
        let mut next = Vec::new();
        let mut adding = 0;
        for g in &level {
            let new: Vec<String> = children(g)
                .into_iter()
                .filter(|c| !seen.contains(c))
                .collect();
            adding += usize::from(!new.is_empty());
            for c in new {
                if !next.contains(&c) {
                    next.push(c);
                }
            }
        }
        if adding > 1 {
            return false;
        }
        seen.extend(next.iter().cloned());
        level = next;
    }
    true
}

/// The directory holding group_vars/ and host_vars/ for a case's source.
fn vars_base(case: &Path) -> PathBuf {
    let src = source(case);
    if src.is_dir() {
        src
    } else {
        src.parent().map(Path::to_path_buf).unwrap_or(src)
    }
}

/// Top-level keys with plain (untemplated) values in every YAML file under group_vars/
/// and host_vars/ of `base`.
fn vars_file_keys(base: &Path) -> Vec<String> {
    let mut keys = Vec::new();
    let mut stack: Vec<PathBuf> = ["group_vars", "host_vars"]
        .iter()
        .map(|d| base.join(d))
        .collect();
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&path) {
                stack.extend(entries.flatten().map(|e| e.path()));
            }
            continue;
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with('.')
            || !(name.ends_with(".yml") || name.ends_with(".yaml") || !name.contains('.'))
        {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Ok(serde_norway::Value::Mapping(map)) = serde_norway::from_str(&text) else {
            continue;
        };
        for (k, v) in map {
            let plain = serde_json::to_string(&v).is_ok_and(|t| !t.contains("{{"));
            if let (Some(k), true) = (k.as_str(), plain) {
                keys.push(k.to_owned());
            }
        }
    }
    keys
}

fn collect_hosts(list: &Value, group: &str, out: &mut Vec<String>) {
    if let Some(hosts) = list[group]["hosts"].as_array() {
        out.extend(hosts.iter().filter_map(Value::as_str).map(str::to_owned));
    }
    if let Some(children) = list[group]["children"].as_array() {
        for child in children.iter().filter_map(Value::as_str) {
            collect_hosts(list, child, out);
        }
    }
}

#[test]
fn dnsfix_reads_inventories_as_ansible_and_kubespray_do() {
    let cases = cases();
    assert!(cases.len() >= 6, "differential cases are missing");
    let scratch_root = std::env::temp_dir().join(format!("dnsfix-ansible-{}", std::process::id()));
    let failures: Vec<String> = std::thread::scope(|scope| {
        let runs: Vec<_> = cases
            .iter()
            .map(|case| {
                let scratch = scratch_root.join(case.file_name().expect("name"));
                scope.spawn(move || compare(case, &scratch))
            })
            .collect();
        runs.into_iter()
            .flat_map(|r| r.join().unwrap_or_else(|_| vec!["a case panicked".into()]))
            .collect()
    });
    let _ = std::fs::remove_dir_all(&scratch_root);
    assert!(
        failures.is_empty(),
        "dnsfix and Ansible disagree:\n{}",
        failures.join("\n")
    );
}

/// Hosts in the order a play over `all` runs them, each group's in Ansible's order.
fn compare_order(inventory: &Inventory, view: &AnsibleView) -> Vec<String> {
    let order: Vec<&str> = inventory.hosts().iter().map(|h| h.name.as_str()).collect();
    let mut failures = Vec::new();
    for (group, theirs) in &view.ordered {
        let ours = if group == "all" {
            Some(order.clone())
        } else {
            inventory.group_members(group)
        };
        // Hosts Kubespray's dynamic groups add come after; Ansible's `groups` is from before.
        let ours: Vec<&str> = ours
            .unwrap_or_default()
            .into_iter()
            .filter(|h| theirs.iter().any(|t| t == h))
            .collect();
        if ours != *theirs {
            failures.push(format!(
                "order of {group}: dnsfix {ours:?}, Ansible {theirs:?}"
            ));
        }
    }
    failures
}

fn compare(case: &Path, scratch: &Path) -> Vec<String> {
    let name = case
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("?")
        .to_owned();
    std::fs::create_dir_all(scratch.join("tmp")).expect("scratch");
    let inventory = Inventory::load(&source(case))
        .unwrap_or_else(|e| panic!("{name}: dnsfix cannot load it: {e}"));
    let view = ansible_view(case, &inventory, scratch);
    let mut failures = Vec::new();
    let mut fail = |m: String| failures.push(format!("{name}: {m}"));
    let dynamic = inventory.dynamic_groups();

    let mut ours: Vec<String> = inventory.hosts().iter().map(|h| h.name.clone()).collect();
    ours.sort();
    if ours != view.hosts {
        fail(format!("hosts: dnsfix {ours:?}, Ansible {:?}", view.hosts));
    }
    failures.extend(
        compare_order(&inventory, &view)
            .into_iter()
            .map(|m| format!("{name}: {m}")),
    );
    let mut fail = |m: String| failures.push(format!("{name}: {m}"));

    let mut ungrouped: Vec<String> = inventory
        .group_members("ungrouped")
        .unwrap_or_default()
        .into_iter()
        .map(str::to_owned)
        .collect();
    ungrouped.sort();
    if ungrouped != view.ungrouped {
        fail(format!(
            "ungrouped: dnsfix {ungrouped:?}, Ansible {:?}",
            view.ungrouped
        ));
    }
    for host in inventory.hosts() {
        let Some(probed) = view.probed.get(&host.name) else {
            continue;
        };
        let mut theirs: Vec<String> = probed["groups"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|g| !matches!(*g, "_all" | "ungrouped"))
            .map(str::to_owned)
            .collect();
        theirs.sort();
        let mut groups: Vec<String> = host
            .groups
            .iter()
            .filter(|g| !matches!(g.as_str(), "all" | "ungrouped"))
            .cloned()
            .collect();
        groups.sort();
        if groups != theirs {
            fail(format!(
                "{}: groups: dnsfix {groups:?}, Kubespray {theirs:?}",
                host.name
            ));
        }
        let raw = view.raw.get(&host.name).cloned().unwrap_or(Value::Null);
        for (key, value) in &host.vars {
            if matches!(key.as_str(), "inventory_file" | "inventory_dir") {
                continue;
            }
            let expected = if value.to_string().contains("{{") {
                // Kept verbatim by dnsfix: must be exactly what the inventory says. A group
                // only Kubespray's dynamic grouping forms is unknown to ansible-inventory,
                // and Ansible would template the value; such a variable must come from that
                // group's group_vars.
                let from_dynamic = host.origins.get(key).is_some_and(
                    |o| matches!(&o.scope, VarScope::GroupVars(g) if dynamic.contains(&g.as_str())),
                );
                if raw.get(key).is_none() && from_dynamic {
                    continue;
                }
                raw.get(key).cloned()
            } else {
                probed["vars"].get(key).cloned()
            };
            if expected.as_ref() != Some(value) {
                fail(format!(
                    "{}: {key}: dnsfix {value}, Ansible {}",
                    host.name,
                    expected.map_or("(unset)".to_string(), |v| v.to_string())
                ));
            }
        }
        // Nothing Kubespray's view sets may be missing from dnsfix.
        if let Some(probed_vars) = probed["vars"].as_object() {
            for key in probed_vars.keys() {
                if !host.vars.contains_key(key) {
                    fail(format!(
                        "{}: {key} is set for Kubespray, not for dnsfix",
                        host.name
                    ));
                }
            }
        }
        // Nothing Ansible sets may be missing from dnsfix.
        if let Some(raw) = raw.as_object() {
            for key in raw.keys() {
                if !host.vars.contains_key(key) {
                    fail(format!(
                        "{}: {key} is set for Ansible, not for dnsfix",
                        host.name
                    ));
                }
            }
        }
    }
    failures
}

/// The inventory changes a plan makes take effect as Ansible reads them, and where they
/// cannot (a host's own value outranks the file), the note says so: the changes written
/// into a copy of an inventory with group_vars both as a file and a directory, a
/// k8s_cluster value over all's, host_vars as a directory and as a file, and an inline
/// host variable; then `ansible-inventory --list` asked what each host gets.
#[test]
fn inventory_changes_take_effect_as_ansible_reads_them() {
    use dnsfix::plan::inventory_change::{Wanted, changes};
    let dir = std::env::temp_dir().join(format!("dnsfix-invchange-ansible-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let files = [
        (
            "hosts.yaml",
            "all:\n  hosts:\n    node1:\n    node2:\n    node3:\n    node4:\n      upstream_dns_servers: [192.0.2.44]\n  children:\n    kube_node:\n      hosts:\n        node1:\n        node2:\n        node3:\n        node4:\n    k8s_cluster:\n      children:\n        kube_node:\n",
        ),
        ("group_vars/all.yml", "searchdomains: [ignored.example]\n"),
        ("group_vars/all/all.yml", "upstream_dns_servers: []\n"),
        (
            "group_vars/k8s_cluster/k8s-cluster.yml",
            "upstream_dns_servers: [192.0.2.1]\n",
        ),
        (
            "host_vars/node2/main.yml",
            "kube_resolv_conf: /etc/resolv.conf\n",
        ),
        (
            "host_vars/node3.yml",
            "upstream_dns_servers: [192.0.2.33]\n",
        ),
    ];
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    let inventory = Inventory::load(&dir.join("hosts.yaml")).expect("loads");
    let hosts = |names: &[&str]| names.iter().map(|h| (*h).to_owned()).collect::<Vec<_>>();
    let wanted = [
        Wanted {
            key: "kube_resolv_conf".into(),
            value: json!("/etc/dnsfix/resolv.conf"),
            hosts: hosts(&["node1", "node2"]),
        },
        Wanted {
            key: "upstream_dns_servers".into(),
            value: json!(["192.0.2.53"]),
            hosts: hosts(&["node1", "node2", "node3", "node4"]),
        },
        // Set only in group_vars/all.yml, which Ansible does not read beside all/.
        Wanted {
            key: "searchdomains".into(),
            value: json!(["corp.example"]),
            hosts: hosts(&["node1", "node2", "node3", "node4"]),
        },
    ];
    let (edits, notes) = changes(&inventory, &wanted);
    for edit in &edits {
        let path = Path::new(&edit.path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, &edit.content).expect("write the change");
    }
    let home = dir.join("home");
    std::fs::create_dir_all(home.join("tmp")).expect("home");
    let src = dir.join("hosts.yaml");
    let list: Value = serde_json::from_str(&ansible(
        "ansible-inventory",
        &["-i", src.to_str().expect("utf-8"), "--list"],
        &home,
    ))
    .expect("ansible-inventory prints JSON");
    let mut disagree = Vec::new();
    for w in &wanted {
        for host in &w.hosts {
            let got = &list["_meta"]["hostvars"][host][&w.key];
            let noted = notes
                .get(host)
                .is_some_and(|n| n.iter().any(|m| m.starts_with(&format!("{} stays", w.key))));
            // Ansible gives the host the value, or dnsfix said it would not.
            if (got == &w.value) == noted {
                disagree.push(format!(
                    "{host} {}: Ansible {got}, dnsfix noted: {noted}",
                    w.key
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        disagree.is_empty(),
        "{disagree:#?}\nchanges: {edits:#?}\nnotes: {notes:#?}"
    );
    // Only node3 (host_vars) and node4 (inline) keep their own value, upstream servers:
    // every other setting reaches its hosts as Ansible reads the files.
    let noted: Vec<(&String, &String)> = notes
        .iter()
        .flat_map(|(h, n)| n.iter().map(move |m| (h, m)))
        .collect();
    assert_eq!(noted.len(), 2, "{notes:#?}");
    assert!(
        noted
            .iter()
            .all(|(h, m)| ["node3", "node4"].contains(&h.as_str())
                && m.starts_with("upstream_dns_servers stays")),
        "{notes:#?}"
    );
}

/// `-i link/../hosts.ini` where `link` is a symlink to a directory elsewhere: Ansible takes
/// the source as `unfrackpath(opt, follow=False)` (lib/ansible/cli/__init__.py), the
/// `os.path.normpath` of its text, so it reads the `hosts.ini` beside `link` and that
/// directory's group_vars, never the one the kernel's walk through the link reaches. dnsfix
/// reads the same file and vars.
#[test]
fn a_source_through_a_symlinked_directory_and_dot_dot_is_read_by_its_text() {
    let dir = std::env::temp_dir().join(format!("dnsfix-inv-dotdot-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let files = [
        ("inv/hosts.ini", "[kube_node]\nbeside-the-link\n"),
        (
            "inv/group_vars/all.yml",
            "upstream_dns_servers: [192.0.2.1]\n",
        ),
        ("elsewhere/hosts.ini", "[kube_node]\nthrough-the-link\n"),
        (
            "elsewhere/group_vars/all.yml",
            "upstream_dns_servers: [192.0.2.2]\n",
        ),
        ("elsewhere/deep/.keep", ""),
    ];
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    std::os::unix::fs::symlink(dir.join("elsewhere/deep"), dir.join("inv/link")).expect("link");
    let home = dir.join("home");
    std::fs::create_dir_all(home.join("tmp")).expect("home");
    // Relative, from the inventory's directory, as a user types it.
    let src = "../inv/link/../hosts.ini";
    let list: Value = serde_json::from_str(&ansible(
        "ansible-inventory",
        &["-i", &format!("{}/{src}", home.display()), "--list"],
        &home,
    ))
    .expect("ansible-inventory prints JSON");
    let theirs: Vec<String> = list["_meta"]["hostvars"]
        .as_object()
        .expect("hostvars")
        .iter()
        .map(|(h, v)| format!("{h} {}", v["upstream_dns_servers"]))
        .collect();
    assert_eq!(theirs, ["beside-the-link [\"192.0.2.1\"]"]);
    let inventory = Inventory::load(&home.join(src)).expect("loads");
    let ours: Vec<String> = inventory
        .hosts()
        .iter()
        .map(|h| format!("{} {}", h.name, h.vars["upstream_dns_servers"]))
        .collect();
    assert_eq!(ours, theirs);
    let _ = std::fs::remove_dir_all(&dir);
}

/// What `ansible -i INVENTORY HOST -m debug -a var=[NAMES]` prints: each variable as
/// Ansible templates it for that host, in the order asked.
fn debug_vars(inventory: &Path, host: &str, names: &[&str], home: &Path) -> Vec<Value> {
    let var = format!("var=[{}]", names.join(","));
    let src = inventory.to_str().expect("utf-8 path");
    let out = ansible(
        "ansible",
        &["-i", src, host, "-m", "debug", "-a", &var],
        home,
    );
    let json = out
        .split_once("=>")
        .unwrap_or_else(|| panic!("debug output: {out}"))
        .1;
    let printed: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {out}"));
    printed[var.trim_start_matches("var=")]
        .as_array()
        .unwrap_or_else(|| panic!("debug output: {out}"))
        .clone()
}

/// A value tagged `!unsafe` is literal text to Ansible, and a reference to one yields that
/// text, `{{ }}` and all (ansible-core 2.19 lib/ansible/_internal/_yaml/_constructor.py
/// `construct_yaml_unsafe`). Before, dnsfix rendered both (`ansible_host: !unsafe
/// "{{ base }}.11"` read as 10.0.0.11, where Ansible connects to the literal text). An INI
/// inventory has no tags: `"!unsafe {{ base }}"` there is rendered, by both.
#[test]
fn values_tagged_unsafe_stay_literal_as_ansible_keeps_them() {
    let dir = root().join("tests/fixtures/inventory/unsafe");
    let home = std::env::temp_dir().join(format!("dnsfix-inv-unsafe-{}", std::process::id()));
    std::fs::create_dir_all(home.join("tmp")).expect("home");
    let cases: [(&str, &str, &[&str]); 5] = [
        (
            "hosts.yml",
            "node1",
            &[
                "ansible_host",
                "group_literal",
                "host_literal",
                "host_literal_list",
                "reference",
                "reference_chain",
                "text_around",
                "mixed",
                "list_reference",
                "plain",
                "tagged_exponent",
                "tagged_octal_o",
                "tagged_octal",
                "tagged_bool",
                "tagged_quoted",
                "tagged_list",
                "tagged_float",
                "tagged_empty",
                "tagged_null",
                "file_literal",
                "file_reference",
                "anchored",
                "aliased",
                "merged_literal",
                "merged_plain",
                "host_file_literal",
                "host_file_reference",
            ],
        ),
        ("hosts.yml", "n1", &["twice", "host_twice"]),
        ("hosts.yml", "w.prod", &["ansible_host"]),
        ("hosts.yml", "n3", &["whole_group", "whole_host"]),
        ("hosts.ini", "node2", &["not_a_tag", "plain"]),
    ];
    let mut failures = Vec::new();
    for (file, name, vars) in cases {
        let inventory = Inventory::load(&dir.join(file)).expect("loads");
        let host = inventory
            .hosts()
            .iter()
            .find(|h| h.name == name)
            .expect("host");
        let theirs = debug_vars(&dir.join(file), name, vars, &home);
        for (var, theirs) in vars.iter().zip(theirs) {
            let ours = host.var(var).cloned().unwrap_or(Value::Null);
            if ours != theirs {
                failures.push(format!("{file} {var}: dnsfix {ours}, Ansible {theirs}"));
            }
        }
        if name == "node1" {
            // Over ssh, the literal address is refused, saying why.
            let mut over_ssh = host.clone();
            over_ssh.vars.remove("ansible_connection");
            let why = over_ssh.connection().refused.unwrap_or_default();
            if !why.contains("`!unsafe`") || !why.contains("{{ base }}.11") {
                failures.push(format!("node1 over ssh: refused with {why:?}"));
            }
        }
        if name == "w.prod" {
            // Its own address is untagged: usable over ssh.
            let mut over_ssh = host.clone();
            over_ssh.vars.remove("ansible_connection");
            if let Some(why) = over_ssh.connection().refused {
                failures.push(format!("w.prod over ssh: refused with {why:?}"));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&home);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Integers at and past the 64-bit edge, which PyYAML and `ast.literal_eval` read as Python
/// ints of any width. Before, `-9223372036854775808` read as a string in YAML, an integer
/// past 64 bits within 128 refused the whole YAML file (`invalid type: integer ... as
/// i128`), and an INI list holding one was kept as its text. Ansible's view is asked as
/// `[x|type_debug, x|string]`, which keeps every digit (its JSON would not reach the
/// test whole): an `int` must be a JSON number where it fits in 64 bits, and otherwise its
/// decimal digits, a string, which is all JSON here can hold of it.
#[test]
fn integers_past_64_bits_read_as_ansible_reads_them() {
    let dir = root().join("tests/fixtures/inventory/wide-integers");
    let home = std::env::temp_dir().join(format!("dnsfix-inv-wide-{}", std::process::id()));
    std::fs::create_dir_all(home.join("tmp")).expect("home");
    let cases: [(&str, &str, &[&str]); 2] = [
        (
            "hosts.yml",
            "node1",
            &[
                "i64_min",
                "below_i64",
                "u64_max",
                "above_u64",
                "above_u128",
                "wide_hex",
                "wide_octal",
                "wide_underscores",
                "quoted",
                "file_i64_min",
                "file_above_u128",
            ],
        ),
        (
            "hosts.ini",
            "node2",
            &[
                "i64_min",
                "below_i64",
                "above_u64",
                "above_u128",
                "wide_hex",
                "wide_list[0]",
                "wide_list[1]",
            ],
        ),
    ];
    let mut failures = Vec::new();
    for (file, name, vars) in cases {
        let inventory = Inventory::load(&dir.join(file))
            .unwrap_or_else(|e| panic!("{file}: dnsfix cannot load it: {e}"));
        let host = inventory
            .hosts()
            .iter()
            .find(|h| h.name == name)
            .expect("host");
        if name == "node1" {
            // A port past 64 bits is no TCP port: warned about where it is set.
            let warned: Vec<String> = inventory
                .warnings()
                .iter()
                .map(ToString::to_string)
                .collect();
            if !warned.iter().any(|w| {
                w.contains("group_vars/all.yml:5")
                    && w.contains("`ansible_port` is \"99999999999999999999999\", not a TCP port")
            }) {
                failures.push(format!("{file}: the port's warning: {warned:?}"));
            }
        }
        let asked: Vec<String> = vars
            .iter()
            .flat_map(|v| [format!("{v}|type_debug"), format!("{v}|string")])
            .collect();
        let asked: Vec<&str> = asked.iter().map(String::as_str).collect();
        let theirs = debug_vars(&dir.join(file), name, &asked, &home);
        for (var, theirs) in vars.iter().zip(theirs.chunks(2)) {
            let ours = match var.split_once('[') {
                Some((list, index)) => {
                    let index: usize = index.trim_end_matches(']').parse().expect("index");
                    host.var(list).and_then(|l| l.get(index)).cloned()
                }
                None => host.var(var).cloned(),
            }
            .unwrap_or(Value::Null);
            let (kind, text) = (theirs[0].as_str(), theirs[1].as_str());
            let agrees = match (kind, &ours) {
                (Some("int"), Value::Number(n)) => Some(n.to_string().as_str()) == text,
                // Past 64 bits: its digits, which no JSON number here could hold.
                (Some("int"), Value::String(digits)) => {
                    Some(digits.as_str()) == text
                        && digits.parse::<i64>().is_err()
                        && digits.parse::<u64>().is_err()
                }
                (Some("str"), Value::String(s)) => Some(s.as_str()) == text,
                _ => false,
            };
            if !agrees {
                failures.push(format!(
                    "{file} {var}: dnsfix {ours}, Ansible {} {}",
                    theirs[0], theirs[1]
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&home);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A decimal integer of more digits than Python converts (4,300) refuses the YAML file in
/// Ansible ("Exceeds the limit (4300 digits) for integer string conversion") and in dnsfix,
/// which says where; one of 4,300 digits is read by both. Before, dnsfix read any length,
/// in time quadratic in it (a 300,000-digit integer took a minute).
#[test]
fn integers_past_pythons_digit_limit_refuse_the_file_as_in_ansible() {
    let dir = std::env::temp_dir().join(format!("dnsfix-inv-digits-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("tmp")).expect("home");
    for (digits, refused) in [(4300, false), (4301, true)] {
        let path = dir.join(format!("hosts-{digits}.yml"));
        let text = format!(
            "all:\n  hosts:\n    n1:\n      ansible_connection: local\n      wide: 1{}\n",
            "2".repeat(digits - 1)
        );
        std::fs::write(&path, text).expect("write");
        let output = Command::new(ansible_bin("ansible-inventory"))
            .args(["-i", path.to_str().expect("utf-8"), "--list"])
            .env("HOME", &dir)
            .env("ANSIBLE_LOCAL_TEMP", dir.join("tmp"))
            .env("ANSIBLE_INVENTORY_ENABLED", "yaml")
            .env("ANSIBLE_INVENTORY_UNPARSED_FAILED", "true")
            .env_remove("ANSIBLE_CONFIG")
            .current_dir(&dir)
            .output()
            .expect("runs ansible-inventory");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(!output.status.success(), refused, "{digits}: {stderr}");
        assert_eq!(stderr.contains("Exceeds the limit (4300 digits)"), refused);
        match Inventory::load(&path) {
            Ok(_) => assert!(!refused, "{digits} digits: read by dnsfix"),
            Err(err) => {
                let err = err.to_string();
                assert!(refused, "{digits} digits: {err}");
                let at = format!("hosts-{digits}.yml:5:");
                assert!(err.contains(&at) && err.contains("4301 digits"), "{err}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// INI values nested past Python's 200 brackets (`ast.literal_eval` raises "too many nested
/// parentheses") stay their text in Ansible and in dnsfix, on a host line and in
/// `[all:vars]`; 100 read as the list. Before, dnsfix read any depth, and 30,000 brackets
/// overflowed its stack (SIGABRT, naming neither file nor line). Ansible's view is asked as
/// `[x|type_debug, x|string]`: Python prints a list of lists of ints as compact JSON does.
/// (From about 162 to 200 levels, ansible-core 2.19 on Python 3.11 fails the whole file
/// with "maximum recursion depth exceeded", a limit of its own call stack that dnsfix,
/// which reads such a value as the list, does not model; 200 is not asked here.)
#[test]
fn ini_values_nested_past_pythons_limit_stay_text_as_in_ansible() {
    let dir = std::env::temp_dir().join(format!("dnsfix-inv-nested-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("tmp")).expect("home");
    let nested = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
    let path = dir.join("hosts.ini");
    let text = format!(
        "[all:vars]\ng100={}\ng201={}\n\n[nodes]\nn1 ansible_connection=local h100={} h201={} h30000={}\n",
        nested(100),
        nested(201),
        nested(100),
        nested(201),
        nested(30_000),
    );
    std::fs::write(&path, text).expect("write");
    let inventory = Inventory::load(&path).unwrap_or_else(|e| panic!("dnsfix: {e}"));
    let host = inventory
        .hosts()
        .iter()
        .find(|h| h.name == "n1")
        .expect("host");
    let vars = ["g100", "g201", "h100", "h201", "h30000"];
    let asked: Vec<String> = vars
        .iter()
        .flat_map(|v| [format!("{v}|type_debug"), format!("{v}|string")])
        .collect();
    let asked: Vec<&str> = asked.iter().map(String::as_str).collect();
    let theirs = debug_vars(&path, "n1", &asked, &dir);
    let mut failures = Vec::new();
    for (var, theirs) in vars.iter().zip(theirs.chunks(2)) {
        let ours = host.var(var).cloned().unwrap_or(Value::Null);
        let (kind, text) = (theirs[0].as_str(), theirs[1].as_str());
        let agrees = match &ours {
            Value::Array(_) => kind == Some("list") && text == Some(ours.to_string().as_str()),
            Value::String(s) => kind == Some("str") && text == Some(s.as_str()),
            _ => false,
        };
        if !agrees || (var.ends_with("100") != ours.is_array()) {
            failures.push(format!(
                "{var}: dnsfix {ours:.60}, Ansible {kind:?} {text:.60?}"
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
