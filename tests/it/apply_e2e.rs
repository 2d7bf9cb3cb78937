//! End to end: `dnsfix apply` and `dnsfix rollback` against the real-sshd lab.
//!
//! - a whole mixed fleet applies its saved plan, checks clean, and a second apply of the
//!   same plan writes and restarts nothing;
//! - a host whose facts moved since the plan (a file, a new file in a directory the rules
//!   read, the kubelet binary's version) is
//!   refused (exit 4), the others go on;
//! - a connection lost mid-write leaves the old or the new file, never a mix, and a
//!   re-run converges (and can be rolled back); a script killed mid-write keeps the old
//!   file, and its dead lock is taken over;
//! - a full or read-only filesystem fails the host cleanly: no temp file, the original
//!   kept, nothing restarted;
//! - a kubelet that does not come back healthy stops the next batches;
//! - a live node lock refuses a second apply, a dead owner's lock is taken over;
//! - rollback restores the original bytes and mode, and a second rollback is a no-op;
//! - without a terminal, a fresh plan is not applied without `--yes`;
//! - the Kubespray inventory is edited only with `--update-inventory`, and only if the
//!   file is still what the plan read.
//!
//! - and the fault suite: a tampered plan, a full state directory at each bookkeeping
//!   write, ten concurrent applies, a symlinked parent, a changed host key, a reboot
//!   between plan and apply (`tests/FAULTS.md` states what each leaves on the node).
//!
//! Run records go to a state directory inside each lab, never to the real home.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::dnsfix::{Dnsfix, describe, host_result, run_record};
use crate::common::lab::{ALL_SCENARIOS, Lab};
use dnsfix::apply::record::RunRecord;
use dnsfix::apply::{HostOutcome, StepOutcome};
use dnsfix::plan::{Change, HostPlan, HostStatus, Plan};
use dnsfix::util::sha256_hex;
use serde_json::Value;

const KUBELET_CONFIG: &str = "/etc/kubernetes/kubelet-config.yaml";
/// The temp files apply writes beside it.
const KUBELET_TEMPS: &str = "/etc/kubernetes/.kubelet-config.yaml.dnsfix-*";

/// `dnsfix ARGS... -i INVENTORY` with the lab's connection settings and run records kept
/// inside the lab. stdin is never a terminal.
fn dnsfix_cmd(lab: &Lab, inventory: &Path, args: &[&str]) -> Command {
    Dnsfix::new(args)
        .lab_apply(lab, inventory)
        .args(["--connect-timeout", "5"])
        .command()
}

fn dnsfix_in(lab: &Lab, inventory: &Path, args: &[&str]) -> Output {
    dnsfix_cmd(lab, inventory, args)
        .output()
        .expect("dnsfix runs")
}

fn dnsfix(lab: &Lab, args: &[&str]) -> Output {
    dnsfix_in(lab, &lab.inventory(), args)
}

/// The run id in apply's hint `to undo it: dnsfix rollback -i 'INVENTORY' RUN_ID`, which
/// names the inventory the run used (the lab's).
fn undo_hint(lab: &Lab, out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let hint = stdout
        .lines()
        .find_map(|l| l.strip_prefix("to undo it: dnsfix rollback "))
        .unwrap_or_else(|| panic!("no way to undo the run is offered\n{}", describe(out)));
    let (inventory, run) = hint.trim().rsplit_once(' ').expect("-i INVENTORY RUN_ID");
    assert_eq!(
        inventory,
        format!("-i '{}'", lab.inventory().display()),
        "{}",
        describe(out)
    );
    run.to_owned()
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("lab paths are UTF-8")
}

fn host_plan<'a>(plan: &'a Plan, name: &str) -> &'a HostPlan {
    plan.hosts
        .iter()
        .find(|h| h.host == name)
        .unwrap_or_else(|| panic!("{name} is not in the plan"))
}

/// `dnsfix plan -o LAB/plan.json`: the saved plan, and its path. Expects changes (exit 2).
fn save_plan(lab: &Lab, inventory: &Path) -> (PathBuf, Plan) {
    let path = lab.dir.join("plan.json");
    let out = dnsfix_in(lab, inventory, &["plan", "-o", path_str(&path)]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "plan: exit 2 with changes\n{}",
        describe(&out)
    );
    let text = std::fs::read_to_string(&path).expect("plan saved");
    let plan: Plan = serde_json::from_str(&text).expect("the saved plan reads back");
    (path, plan)
}

/// The plan's (before, after) sha256 of the file it writes at `path` on `host`.
fn planned_shas(plan: &Plan, host: &str, path: &str) -> (String, String) {
    host_plan(plan, host)
        .changes
        .iter()
        .find_map(|c| match c {
            Change::WriteFile {
                path: p,
                before_sha256,
                after_sha256,
                ..
            } if p == path => Some((
                before_sha256.clone().unwrap_or_else(|| "absent".into()),
                after_sha256.clone(),
            )),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{host}: the plan writes no {path}"))
}

/// sha256 of `path` on the node, or `absent`.
fn node_sha(lab: &Lab, node: &str, path: &str) -> String {
    lab.exec(
        node,
        &format!("if [ -e {path} ]; then sha256sum {path} | cut -d' ' -f1; else echo absent; fi"),
    )
    .trim()
    .to_string()
}

/// The node's restart and reload calls so far.
fn restarts(lab: &Lab, node: &str) -> Vec<String> {
    lab.systemctl_calls(node)
        .into_iter()
        .filter(|c| c.contains("restart") || c.contains("reload"))
        .collect()
}

/// Polls `done` every 100 ms; panics with `what` after `timeout`.
fn wait_until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < timeout,
            "timed out after {timeout:?}: {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Kubespray's layout, with the upstream servers the lab's documentation addresses
/// stand for, and stray search domains opted in.
fn kubespray_inventory(lab: &Lab) -> PathBuf {
    lab.kubespray_inventory(
        "---\n\
         ## Upstream dns servers\n\
         upstream_dns_servers:\n\
         \x20 - 192.0.2.53\n\
         \x20 - 198.51.100.53\n\
         \n\
         dnsfix_strip_search_domains: true\n\
         loadbalancer_apiserver_localhost: true\n",
    )
}

/// `(host, finding id)` for every finding `dnsfix check` reports except fleet drift.
fn non_drift_findings(lab: &Lab, inventory: &Path) -> Vec<(String, String)> {
    let out = dnsfix_in(lab, inventory, &["check", "--format", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("check printed no JSON: {e}\n{}", describe(&out)));
    let hosts = doc["hosts"]
        .as_array()
        .unwrap_or_else(|| panic!("no hosts in check's JSON: {doc:#}"));
    let mut found = Vec::new();
    for host in hosts {
        let name = host["host"].as_str().unwrap_or("?");
        assert_eq!(
            host["status"], "ok",
            "check could not check {name}: {host:#}"
        );
        for finding in host["findings"].as_array().into_iter().flatten() {
            let id = finding["id"].as_str().unwrap_or("?");
            if id != "DNS-FLEET-DRIFT" {
                found.push((name.to_string(), id.to_string()));
            }
        }
    }
    found
}

#[test]
fn every_scenario_plan_apply_check_clean_then_nothing() {
    let lab = Lab::start(ALL_SCENARIOS).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let inventory = kubespray_inventory(&lab);
    let (plan_path, plan) = save_plan(&lab, &inventory);
    assert_every_broken_scenario_changes(&lab, &plan);

    let out = dnsfix_in(
        &lab,
        &inventory,
        &["apply", path_str(&plan_path), "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(0), "apply\n{}", describe(&out));
    let record = run_record(&out);
    assert_eq!(record.command, "apply");
    assert_applied_and_fixed(&plan, &record);
    assert_dns_pods_recreated(&lab, &plan, &record);
    // And DNS answers from every node: each upstream the kubelet hands out, the cluster
    // DNS addresses (real queries, `dnsfix verify`).
    let out = dnsfix_in(
        &lab,
        &inventory,
        &["verify", "--format", "json", "--dns-timeout", "10"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "verify after apply\n{}",
        describe(&out)
    );

    // Clean: only fleet drift is left (the fixed nodes now differ from the others).
    assert_eq!(non_drift_findings(&lab, &inventory), []);

    assert_the_same_plan_again_does_nothing(&lab, &inventory, &plan_path);

    // A fresh plan has nothing left to do.
    let out = dnsfix_in(&lab, &inventory, &["apply", "--yes"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "apply --yes\n{}",
        describe(&out)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("nothing to apply"),
        "{}",
        describe(&out)
    );

    // Rolled back, the run's pods are not this rollback's: it recreates none and shows none
    // (before, its report repeated the apply's `recreated pod` lines).
    let out = dnsfix_in(
        &lab,
        &inventory,
        &["rollback", &record.run_id, "--yes", "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(0), "rollback\n{}", describe(&out));
    let rolled = run_record(&out);
    assert!(
        rolled
            .hosts
            .iter()
            .all(|h| h.pods.is_empty() && h.notes.is_empty()),
        "{rolled:#?}"
    );
}

/// Every scenario with something to fix has changes planned.
fn assert_every_broken_scenario_changes(lab: &Lab, plan: &Plan) {
    let changing: Vec<&str> = plan
        .hosts
        .iter()
        .filter(|h| h.status == HostStatus::Changes)
        .map(|h| h.host.as_str())
        .collect();
    for scenario in [
        "stub-symlink",
        "kubespray-loop",
        "kubespray-loop-resolved",
        "brnf-off",
        "stray-search",
        "minimal-no-curl",
    ] {
        assert!(
            changing.contains(&lab.node(scenario).name.as_str()),
            "{scenario} has nothing planned: {changing:?}"
        );
    }
}

/// Each host with changes was applied and verified, with exactly the planned fixes made;
/// the others had nothing planned.
fn assert_applied_and_fixed(plan: &Plan, record: &RunRecord) {
    for host in &plan.hosts {
        let result = host_result(record, &host.host);
        if host.status == HostStatus::Changes {
            assert_eq!(result.outcome, HostOutcome::Applied, "{result:#?}");
            let verified = result
                .verified
                .as_ref()
                .unwrap_or_else(|| panic!("{}: not verified: {result:#?}", host.host));
            assert!(verified.remaining.is_empty(), "{result:#?}");
            // Nothing changed on the lab's nodes but the plan's own changes: no finding
            // the cluster-less verify judges is new (one the plan judged with the cluster
            // would be, were the verify's rules harsher without it).
            assert!(verified.new.is_empty(), "{}: {result:#?}", host.host);
            let mut fixed = verified.fixed.clone();
            let mut fixes = host.fixes.clone();
            fixed.sort();
            fixes.sort();
            assert_eq!(fixed, fixes, "{}: {result:#?}", host.host);
        } else {
            assert_eq!(result.outcome, HostOutcome::NothingPlanned, "{result:#?}");
        }
    }
}

/// Every node whose kubelet got a new resolv.conf had its DNS pods recreated through
/// kubectl on the control-plane node, one at a time, each replacement Ready.
fn assert_dns_pods_recreated(lab: &Lab, plan: &Plan, record: &RunRecord) {
    let recreating: Vec<&HostPlan> = plan
        .hosts
        .iter()
        .filter(|h| !h.cluster.is_empty())
        .collect();
    for scenario in ["stub-symlink", "kubespray-loop", "kubespray-loop-resolved"] {
        let name = &lab.node(scenario).name;
        assert!(
            recreating.iter().any(|h| h.host == *name),
            "{scenario}: no DNS pod recreation planned"
        );
    }
    for host in recreating {
        let result = host_result(record, &host.host);
        assert!(pods_recreated(result), "{result:#?}");
    }
}

/// The host's DNS pods were deleted and each has a Ready replacement of another name.
fn pods_recreated(result: &dnsfix::apply::HostResult) -> bool {
    !result.pods.is_empty()
        && result
            .pods
            .iter()
            .all(|p| p.ok && p.replacement.as_ref().is_some_and(|r| *r != p.pod))
}

/// The same plan again: everything in place, nothing written or restarted.
fn assert_the_same_plan_again_does_nothing(lab: &Lab, inventory: &Path, plan_path: &Path) {
    let before: Vec<Vec<String>> = lab.nodes.iter().map(|n| restarts(lab, &n.name)).collect();
    let record = apply_record(lab, inventory, plan_path, 0);
    for result in &record.hosts {
        assert!(
            matches!(
                result.outcome,
                HostOutcome::Unchanged | HostOutcome::NothingPlanned
            ),
            "a second apply of the same plan did something: {result:#?}"
        );
        assert!(
            !result.steps.iter().any(|s| s.outcome == StepOutcome::Ok),
            "{result:#?}"
        );
    }
    let after: Vec<Vec<String>> = lab.nodes.iter().map(|n| restarts(lab, &n.name)).collect();
    assert_eq!(
        after, before,
        "a second apply of the same plan restarted or reloaded something"
    );
}

/// A reviewed plan edited afterwards, by each route an attacker with write access to the
/// plan file has: a new file (a cron job, /etc/shadow) with a before-state made up to
/// match, the kubelet change carrying one more setting (with its sha256 fixed up), and a
/// change whose before-state was dropped. Each is refused with nothing written and nothing
/// restarted; the untouched plan then applies.
#[test]
fn a_tampered_plan_is_refused_and_nothing_is_written() {
    let lab = Lab::start(&["stub-symlink"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let (plan_path, plan) = save_plan(&lab, &lab.inventory());
    let (old, new) = planned_shas(&plan, &node, KUBELET_CONFIG);
    let shadow = node_sha(&lab, &node, "/etc/shadow");
    let original: Value =
        serde_json::from_str(&std::fs::read_to_string(&plan_path).expect("read plan"))
            .expect("json");
    for (what, tamper, says) in tampered_plans(&shadow) {
        let mut doc = original.clone();
        let host = doc["hosts"]
            .as_array_mut()
            .expect("hosts")
            .iter_mut()
            .find(|h| h["host"] == node.as_str())
            .expect("the node's plan");
        tamper(host);
        let path = lab.dir.join("tampered.json");
        std::fs::write(&path, serde_json::to_string_pretty(&doc).expect("json")).expect("write");
        let out = dnsfix(&lab, &["apply", path_str(&path), "--format", "json"]);
        assert_eq!(out.status.code(), Some(3), "{what}\n{}", describe(&out));
        let record = run_record(&out);
        let result = host_result(&record, &node);
        assert_eq!(result.outcome, HostOutcome::Failed, "{what}: {result:#?}");
        let error = result.error.clone().unwrap_or_default();
        assert!(
            error.contains("refused") && error.contains(says),
            "{what}: {error}"
        );
        assert!(result.steps.is_empty(), "{what}: {result:#?}");
        assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), old, "{what}");
        assert_eq!(node_sha(&lab, &node, "/etc/shadow"), shadow, "{what}");
        assert_eq!(
            node_sha(&lab, &node, "/etc/cron.d/dnsfix"),
            "absent",
            "{what}"
        );
        assert_eq!(restarts(&lab, &node), Vec::<String>::new(), "{what}");
    }
    // Edits that leave the file at odds with itself: refused whole (1) before any host, by
    // `show` as by `apply`. New content without its digest; and one more setting changed on
    // both sides of the kubelet change, its digest fixed up, which the diff `show` draws
    // from the old text would hide as context.
    let whole: [(&str, Edit, &str); 2] = [
        (
            "new content without its digest",
            |change| {
                let content = change["content"].as_str().expect("content").to_owned();
                change["content"] = Value::String(format!("{content}# edited\n"));
            },
            "the new content does not hash to the plan's after_sha256",
        ),
        (
            "a setting changed on both sides",
            |change| {
                for side in ["before", "content"] {
                    let text = change[side].as_str().expect("text").to_owned();
                    assert!(text.contains("clusterDomain: cluster.local"), "{text}");
                    change[side] = Value::String(text.replace(
                        "clusterDomain: cluster.local",
                        "clusterDomain: evil.example",
                    ));
                }
                let content = change["content"].as_str().expect("content").to_owned();
                change["after_sha256"] = sha256_hex(content.as_bytes()).into();
            },
            "the old text shown does not hash to the plan's before_sha256",
        ),
    ];
    let path = lab.dir.join("tampered.json");
    for (what, edit, says) in whole {
        let mut doc = original.clone();
        doc["hosts"]
            .as_array_mut()
            .expect("hosts")
            .iter_mut()
            .flat_map(|h| h["changes"].as_array_mut().expect("changes"))
            .filter(|c| c["path"] == KUBELET_CONFIG)
            .for_each(edit);
        std::fs::write(&path, serde_json::to_string_pretty(&doc).expect("json")).expect("write");
        for command in ["show", "apply"] {
            let out = if command == "show" {
                Dnsfix::new(["show", path_str(&path)])
                    .command()
                    .output()
                    .expect("dnsfix runs")
            } else {
                dnsfix(&lab, &["apply", path_str(&path)])
            };
            assert_eq!(
                out.status.code(),
                Some(1),
                "{what}: {command}\n{}",
                describe(&out)
            );
            assert!(
                String::from_utf8_lossy(&out.stderr)
                    .contains(&format!("host {node}: {KUBELET_CONFIG}: {says}")),
                "{what}: {command}\n{}",
                describe(&out)
            );
        }
    }
    assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), old);
    let out = dnsfix(&lab, &["apply", path_str(&plan_path)]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "the untouched plan\n{}",
        describe(&out)
    );
    assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), new);
}

type Tamper = Box<dyn Fn(&mut Value)>;

/// An edit of one change of a saved plan.
type Edit = fn(&mut Value);

/// Each edit of the plan, with what apply's refusal must say.
fn tampered_plans(shadow: &str) -> Vec<(&'static str, Tamper, &'static str)> {
    let evil = "* * * * * root sh -c 'id > /tmp/owned'\n";
    let mut plans: Vec<(&'static str, Tamper, &'static str)> = vec![
        (
            "cron job",
            Box::new(move |host: &mut Value| {
                host["facts"]["files"]["/etc/cron.d/dnsfix"] =
                    serde_json::json!({"state": "missing"});
                host["changes"]
                    .as_array_mut()
                    .expect("changes")
                    .push(write_file("/etc/cron.d/dnsfix", None, evil));
            }),
            "the plan's facts name /etc/cron.d/dnsfix, which dnsfix does not read on this node",
        ),
        (
            "/etc/shadow",
            Box::new({
                let shadow = shadow.to_owned();
                move |host: &mut Value| {
                    host["facts"]["files"]["/etc/shadow"] =
                        serde_json::json!({"state": "present", "sha256": shadow});
                    let redacted = "root:<redacted sha256:0123456789abcdef>:0:0:99999:7:::\n";
                    let mut change = write_file(
                        "/etc/shadow",
                        Some(&shadow),
                        // A redacted value: refused for the path before anything of
                        // /etc/shadow is read to restore it (no guess-confirming oracle).
                        redacted,
                    );
                    // An old text to draw the diff from (a write without one is refused
                    // whole), redacted too: checked only where it is restored.
                    change["before"] = redacted.into();
                    host["changes"]
                        .as_array_mut()
                        .expect("changes")
                        .push(change);
                }
            }),
            // Refused before its hash is compared with anything (no oracle).
            "the plan's facts name /etc/shadow, which dnsfix does not read on this node",
        ),
        (
            "a new unit file",
            Box::new(move |host: &mut Value| {
                host["facts"]["files"]["/etc/systemd/system/evil.service"] =
                    serde_json::json!({"state": "missing"});
                host["changes"]
                    .as_array_mut()
                    .expect("changes")
                    .push(write_file(
                        "/etc/systemd/system/evil.service",
                        None,
                        "[Service]\nExecStart=/bin/sh -c 'id > /tmp/owned'\n",
                    ));
            }),
            "/etc/systemd/system/evil.service is not a file dnsfix writes",
        ),
    ];
    plans.extend(tampered_settings());
    plans
}

/// More edits: a sysctl switched off, a guessed hash, another kubelet setting, a change
/// no playbook asked for, a before-state dropped.
fn tampered_settings() -> Vec<(&'static str, Tamper, &'static str)> {
    vec![
        (
            "forwarding switched off",
            Box::new(|host: &mut Value| {
                // Its value as the node has it, so only the new value can be refused.
                host["facts"]["sysctls"]["net.ipv4.ip_forward"] = "1".into();
                host["changes"]
                    .as_array_mut()
                    .expect("changes")
                    .push(serde_json::json!({
                        "type": "sysctl",
                        "name": "net.ipv4.ip_forward",
                        "before": "1",
                        "after": "0",
                        "reasons": [{"playbook": "bridge-netfilter", "task": "forward packets", "fixes": []}],
                    }));
            }),
            "sysctl net.ipv4.ip_forward = 0 is not a value dnsfix sets",
        ),
        (
            "a new file any user could write",
            Box::new(|host: &mut Value| {
                let path = "/etc/sysctl.d/98-dnsfix-tampered.conf";
                host["facts"]["files"][path] = serde_json::json!({"state": "missing"});
                let mut change = write_file(path, None, "net.bridge.bridge-nf-call-iptables = 1\n");
                change["mode"] = "0666".into();
                host["changes"]
                    .as_array_mut()
                    .expect("changes")
                    .push(change);
            }),
            "mode 0666 is wider than 0644",
        ),
        (
            "a guess at /etc/shadow's hash in the facts alone",
            Box::new(|host: &mut Value| {
                host["facts"]["files"]["/etc/shadow"] = serde_json::json!({
                    "state": "present",
                    "sha256": "0000000000000000000000000000000000000000000000000000000000000000"
                });
            }),
            "the plan's facts name /etc/shadow, which dnsfix does not read on this node",
        ),
        (
            "one more kubelet setting",
            Box::new(|host: &mut Value| {
                let change = kubelet_change(host);
                let content: String = change["content"]
                    .as_str()
                    .expect("content")
                    .lines()
                    .map(|l| {
                        if l.starts_with("staticPodPath:") {
                            "staticPodPath: /tmp/pods\n".to_string()
                        } else {
                            format!("{l}\n")
                        }
                    })
                    .collect();
                assert!(content.contains("staticPodPath: /tmp/pods"));
                change["after_sha256"] = sha256_hex(content.as_bytes()).into();
                change["content"] = content.into();
            }),
            "staticPodPath changes, not only DNS settings",
        ),
        (
            "no playbook asked for it",
            Box::new(|host: &mut Value| {
                let change = kubelet_change(host);
                change["reasons"] = serde_json::json!([]);
            }),
            "is asked for by no playbook",
        ),
        (
            "before-state dropped",
            Box::new(|host: &mut Value| {
                host["facts"]["files"]
                    .as_object_mut()
                    .expect("files")
                    .remove(KUBELET_CONFIG);
            }),
            "records nothing of what was there",
        ),
    ]
}

/// A `write_file` change as a plan file holds it, said to come from kubelet-resolvconf.
fn write_file(path: &str, before: Option<&str>, content: &str) -> Value {
    serde_json::json!({
        "type": "write_file",
        "path": path,
        "description": "innocent",
        "before_sha256": before,
        "after_sha256": sha256_hex(content.as_bytes()),
        "content": content,
        "mode": "0644",
        "reasons": [{"playbook": "kubelet-resolvconf", "task": "write the upstream resolv.conf", "fixes": []}],
    })
}

/// The change of a host's plan that writes the kubelet's config.
fn kubelet_change(host: &mut Value) -> &mut Value {
    host["changes"]
        .as_array_mut()
        .expect("changes")
        .iter_mut()
        .find(|c| c["path"] == KUBELET_CONFIG)
        .expect("the kubelet change")
}

/// `dnsfix apply PLAN --format json`, which must exit `code`: its run record.
fn apply_record(lab: &Lab, inventory: &Path, plan_path: &Path, code: i32) -> RunRecord {
    let out = dnsfix_in(
        lab,
        inventory,
        &["apply", path_str(plan_path), "--format", "json"],
    );
    assert_eq!(
        out.status.code(),
        Some(code),
        "apply: exit {code}\n{}",
        describe(&out)
    );
    run_record(&out)
}

/// `dnsfix apply PLAN` that must exit 4 with `host` stale: the run record and its result.
fn apply_stale(
    lab: &Lab,
    inventory: &Path,
    plan_path: &Path,
    host: &str,
) -> (RunRecord, dnsfix::apply::HostResult) {
    let record = apply_record(lab, inventory, plan_path, 4);
    let stale = host_result(&record, host).clone();
    assert_eq!(stale.outcome, HostOutcome::Stale, "{stale:#?}");
    (record, stale)
}

#[test]
fn a_stale_host_is_refused_and_the_others_applied() {
    let lab = Lab::start(&["stub-symlink", "stub-symlink", "brnf-off"])
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let (plan_path, plan) = save_plan(&lab, &lab.inventory());
    let edited = lab.nodes[0].name.clone();
    let other = lab.nodes[1].name.clone();
    let brnf = lab.nodes[2].name.clone();
    lab.exec(
        &edited,
        &format!("echo '# tuned by hand after the plan' >> {KUBELET_CONFIG}"),
    );
    let edited_sha = node_sha(&lab, &edited, KUBELET_CONFIG);

    let (record, stale) = apply_stale(&lab, &lab.inventory(), &plan_path, &edited);
    assert!(
        stale.stale.iter().any(|l| l.contains(KUBELET_CONFIG)),
        "no stale reason names {KUBELET_CONFIG}: {stale:#?}"
    );
    assert!(
        stale.steps.is_empty() && stale.handlers.is_empty(),
        "{stale:#?}"
    );
    assert_eq!(
        node_sha(&lab, &edited, KUBELET_CONFIG),
        edited_sha,
        "the stale host's file was written"
    );
    assert_eq!(restarts(&lab, &edited), Vec::<String>::new());

    for name in [&other, &brnf] {
        let result = host_result(&record, name);
        assert_eq!(result.outcome, HostOutcome::Applied, "{result:#?}");
    }
    let (_, after) = planned_shas(&plan, &other, KUBELET_CONFIG);
    assert_eq!(node_sha(&lab, &other, KUBELET_CONFIG), after);
    assert_eq!(
        restarts(&lab, &other).len(),
        1,
        "{:?}",
        restarts(&lab, &other)
    );
}

/// The kubelet binary's version is part of a plan that asked it (no control plane in the
/// inventory: each node's `kubelet --version`): a node whose kubelet binary was replaced
/// since the plan is stale, before the kubelet's restart (the running binary reads
/// `(deleted)`) and after it (another version); the other node is applied.
#[test]
fn a_kubelet_upgraded_since_the_plan_is_refused() {
    let lab = Lab::start(&["stub-symlink", "stub-symlink"])
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let inventory = lab.dir.join("no-control-plane.yaml");
    let text = std::fs::read_to_string(lab.inventory()).expect("inventory");
    let renamed = text.replace("kube_control_plane:", "dnsfix_no_control_plane:");
    assert_ne!(renamed, text);
    std::fs::write(&inventory, renamed).expect("write inventory");
    let (plan_path, plan) = save_plan(&lab, &inventory);
    let upgraded = lab.nodes[0].name.clone();
    let other = lab.nodes[1].name.clone();
    for node in [&upgraded, &other] {
        let digest = host_plan(&plan, node).facts.as_ref().expect("digest");
        assert_eq!(digest.kubelet_version.as_deref(), Some("v1.30.2"), "{node}");
    }

    // The node's kubelet package upgraded, the kubelet restarted on the new binary.
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lab/standins/kubelet.c");
    let binary = lab.dir.join("lib/kubelet-v1.32.1");
    let cc = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&binary)
        .arg("-DLAB_KUBELET_VERSION=\"v1.32.1\"")
        .arg(&source)
        .output()
        .expect("cc");
    assert!(cc.status.success(), "{}", describe(&cc));
    // First only on disk: the kubelet runs v1.30.2 still, but apply's restart would start
    // the new binary.
    lab.exec(
        &upgraded,
        &format!(
            "cp {} /usr/local/bin/.kubelet.new && mv /usr/local/bin/.kubelet.new /usr/local/bin/kubelet",
            binary.display()
        ),
    );
    let config_sha = node_sha(&lab, &upgraded, KUBELET_CONFIG);
    let (record, stale) = apply_stale(&lab, &inventory, &plan_path, &upgraded);
    assert!(stale.steps.is_empty(), "{stale:#?}");
    assert_eq!(
        stale.stale,
        [
            "kubelet binary replaced on disk since the plan: the kubelet runs v1.30.2, its restart would start a binary the plan did not ask"
        ]
    );
    assert_eq!(
        host_result(&record, &other).outcome,
        HostOutcome::Applied,
        "{record:#?}"
    );

    // A plan made now says that its restart starts a binary it did not ask.
    let replanned = dnsfix_in(&lab, &inventory, &["plan", "--limit", &upgraded]);
    let stdout = String::from_utf8_lossy(&replanned.stdout);
    assert!(
        stdout.contains("the running kubelet (v1.30.2, pid ")
            && stdout.contains("this plan's restart of kubelet starts the new binary"),
        "{}",
        describe(&replanned)
    );

    // Then restarted on it.
    lab.exec(&upgraded, "systemctl restart kubelet");
    let (_, stale) = apply_stale(&lab, &inventory, &plan_path, &upgraded);
    assert_eq!(
        stale.stale,
        ["kubelet version v1.30.2 → v1.32.1 (kubelet --version)"]
    );
    assert_eq!(node_sha(&lab, &upgraded, KUBELET_CONFIG), config_sha);
}

/// Starts `dnsfix apply PLAN` (with `extra` arguments) on a lab whose `node` has a `sync`
/// that hangs (the apply script syncs its temp file right before the rename), and returns
/// the running dnsfix once the temp file is there and the script waits for the sync: the
/// write is in flight.
fn apply_hung_mid_write(lab: &Lab, node: &str, plan_path: &Path, extra: &[&str]) -> Child {
    lab.exec(
        node,
        "printf '#!/bin/sh\\nsleep 37\\n' > /usr/local/sbin/sync && chmod +x /usr/local/sbin/sync",
    );
    let mut child = dnsfix_cmd(
        lab,
        &lab.inventory(),
        &[&["apply", path_str(plan_path)], extra].concat(),
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("dnsfix starts");
    wait_until(
        "the apply script never wrote its temp file",
        Duration::from_secs(10),
        || {
            let exited = child.try_wait().expect("try_wait");
            assert!(
                exited.is_none(),
                "dnsfix exited before the write hung: {exited:?}"
            );
            // The temp file is written and the script waits in the hanging sync.
            lab.exec_output(
                node,
                &format!("ls -d {KUBELET_TEMPS} && pgrep -x -f 'sleep 37'"),
            )
            .status
            .success()
        },
    );
    child
}

/// Waits until no live process holds the node lock (a lock left by a dead one is fine).
fn wait_for_lock_release(lab: &Lab, node: &str) {
    wait_until(
        "the interrupted apply still holds the node lock",
        Duration::from_secs(10),
        || {
            lab.exec_output(node, "flock -n /var/lib/dnsfix/lock true")
                .status
                .success()
        },
    );
}

/// The connection to the node dies mid-write (every sshd of the node is killed) and so
/// does dnsfix; the script on the node is orphaned and let go on. Returns once nothing
/// holds the node lock any more, with the sync stand-in removed.
fn interrupt_mid_write(lab: &Lab, node: &str, plan_path: &Path, old: &str, new: &str) {
    let mut child = apply_hung_mid_write(lab, node, plan_path, &[]);
    lab.exec(node, "pkill -9 -x sshd");
    let _ = child.kill();
    let killed = child.wait_with_output().expect("wait for dnsfix");
    let now = node_sha(lab, node, KUBELET_CONFIG);
    assert!(
        now == old || now == new,
        "{KUBELET_CONFIG} is neither the old nor the new content (sha256 {now})\n{}",
        describe(&killed)
    );
    lab.resume(node);
    lab.exec(
        node,
        "rm -f /usr/local/sbin/sync; pkill -x -f 'sleep 37' || true",
    );
    // The orphaned script (its session is gone) finishes or dies.
    wait_for_lock_release(lab, node);
    let now = node_sha(lab, node, KUBELET_CONFIG);
    assert!(
        now == old || now == new,
        "after the interrupted run ended, {KUBELET_CONFIG} is neither old nor new ({now})"
    );
    let lock = lab
        .exec(node, "cat /var/lib/dnsfix/owner 2>/dev/null || true")
        .trim()
        .to_string();
    eprintln!(
        "after the interruption: {KUBELET_CONFIG} has the {} content; last lock owner: {lock:?}",
        if now == new { "new" } else { "old" }
    );
}

#[test]
fn sshd_killed_mid_apply_leaves_old_or_new_and_a_rerun_converges() {
    let lab = Lab::start(&["stub-symlink"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let (plan_path, plan) = save_plan(&lab, &lab.inventory());
    let (old, new) = planned_shas(&plan, &node, KUBELET_CONFIG);
    assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), old);

    interrupt_mid_write(&lab, &node, &plan_path, &old, &new);
    let restarts_before = restarts(&lab, &node).len();

    let out = dnsfix(&lab, &["apply", path_str(&plan_path), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "re-run\n{}", describe(&out));
    let record = run_record(&out);
    let result = host_result(&record, &node);
    assert_eq!(result.outcome, HostOutcome::Applied, "{result:#?}");
    assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), new);
    // The interrupted run never restarted the kubelet: the re-run must.
    assert_eq!(
        restarts(&lab, &node).len(),
        restarts_before + 1,
        "the kubelet still runs with the config it read before the fix"
    );
    let findings = non_drift_findings(&lab, &lab.inventory());
    assert!(
        !findings.iter().any(|(_, id)| id == "DNS-KUBELET-LOOPBACK"),
        "{findings:?}"
    );
}

/// sshd dies (taking the session with it) at each step of an apply: taking the lock, the
/// backup copy, the temp file's fsync, the kubelet restart, the health wait. Each step is
/// held by a stand-in for the command it runs (`flock`, `cp`, `sync`, `systemctl restart`,
/// `curl`) that sleeps first. Whatever the orphaned script then does, the file is old or
/// new (never a mix, no temp file), a re-run of the same plan converges with the kubelet
/// restarted for the new file, and rolling back restores the original bytes.
#[test]
fn sshd_killed_at_each_step_then_a_rerun_converges_and_rolls_back() {
    let steps = [
        ("taking the lock", "flock", ""),
        ("copying the backup", "cp", ""),
        ("syncing the temp file", "sync", ""),
        ("restarting the kubelet", "systemctl", "restart"),
        ("waiting for kubelet health", "curl", ""),
    ];
    for (step, command, when) in steps {
        let lab =
            Lab::start(&["stub-symlink"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
        let node = lab.nodes[0].name.clone();
        let (plan_path, plan) = save_plan(&lab, &lab.inventory());
        let (old, new) = planned_shas(&plan, &node, KUBELET_CONFIG);
        let real = lab
            .exec(&node, &format!("command -v {command}"))
            .trim()
            .to_string();
        lab.exec(
            &node,
            &format!(
                "printf '#!/bin/sh\\ncase \"$*\" in *{when}*) sleep 37 ;; esac\\nexec {real} \"$@\"\\n' \
                 > /usr/local/sbin/{command} && chmod +x /usr/local/sbin/{command}"
            ),
        );
        let mut child = dnsfix_cmd(&lab, &lab.inventory(), &["apply", path_str(&plan_path)])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("dnsfix starts");
        wait_until(
            &format!("{step}: the apply never reached it"),
            Duration::from_secs(15),
            || {
                let exited = child.try_wait().expect("try_wait");
                assert!(exited.is_none(), "{step}: dnsfix exited first: {exited:?}");
                lab.exec_output(&node, "pgrep -x -f 'sleep 37'")
                    .status
                    .success()
            },
        );
        lab.exec(&node, "pkill -9 -x sshd");
        let _ = child.kill();
        let killed = child.wait_with_output().expect("wait for dnsfix");
        lab.resume(&node);
        lab.exec(
            &node,
            &format!("rm -f /usr/local/sbin/{command}; pkill -x -f 'sleep 37' || true"),
        );
        wait_for_lock_release(&lab, &node);
        let now = node_sha(&lab, &node, KUBELET_CONFIG);
        assert!(
            now == old || now == new,
            "{step}: {KUBELET_CONFIG} is neither old nor new\n{}",
            describe(&killed)
        );
        assert_eq!(temp_files(&lab, &node), "", "{step}: a temp file is left");
        let left = if now == new { "new" } else { "old" };

        let out = dnsfix(&lab, &["apply", path_str(&plan_path), "--format", "json"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{step}: re-run\n{}",
            describe(&out)
        );
        let record = run_record(&out);
        let result = host_result(&record, &node);
        assert!(
            matches!(
                result.outcome,
                HostOutcome::Applied | HostOutcome::Unchanged
            ),
            "{step}: {result:#?}"
        );
        assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), new, "{step}");
        // The kubelet was restarted for the new file: by the orphaned script or the re-run
        // (twice at most: the orphan restarted it but died before recording that).
        let restarted = restarts(&lab, &node).len();
        assert!(
            (1..=2).contains(&restarted),
            "{step}: {restarted} kubelet restarts"
        );
        eprintln!(
            "sshd killed while {step}: file {left} after the orphan ended; re-run {:?}; {restarted} restart(s)",
            result.outcome
        );

        // Undo: the run that wrote the file (the re-run, or the interrupted one whose
        // orphan finished) is the one to roll back.
        let run = if result.outcome == HostOutcome::Applied {
            record.run_id.clone()
        } else {
            lab.exec(&node, "ls /var/lib/dnsfix/backups")
                .trim()
                .to_string()
        };
        let out = dnsfix(&lab, &["rollback", &run, "--yes"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{step}: rollback\n{}",
            describe(&out)
        );
        assert_eq!(
            node_sha(&lab, &node, KUBELET_CONFIG),
            old,
            "{step}: rollback"
        );
    }
}

/// The script itself dies mid-write (killed on the node): the target keeps its old
/// content, the host fails, and the lock its dead owner left is taken over by the re-run.
#[test]
fn a_killed_apply_script_keeps_the_old_file_and_its_lock_is_taken_over() {
    let lab = Lab::start(&["stub-symlink"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let (plan_path, plan) = save_plan(&lab, &lab.inventory());
    let (old, new) = planned_shas(&plan, &node, KUBELET_CONFIG);

    let child = apply_hung_mid_write(&lab, &node, &plan_path, &["--format", "json"]);
    kill_the_script(&lab, &node, "sync");
    let out = child.wait_with_output().expect("wait for dnsfix");
    assert_eq!(
        out.status.code(),
        Some(3),
        "a failed host: exit 3\n{}",
        describe(&out)
    );
    let record = run_record(&out);
    let result = host_result(&record, &node);
    assert_eq!(result.outcome, HostOutcome::Failed, "{result:#?}");
    assert!(result.handlers.is_empty(), "{result:#?}");
    assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), old);
    assert_eq!(restarts(&lab, &node), Vec::<String>::new());
    assert!(
        lab.exec_output(&node, "flock -n /var/lib/dnsfix/lock true")
            .status
            .success(),
        "the dead run's lock is still held"
    );

    let out = dnsfix(&lab, &["apply", path_str(&plan_path), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "re-run\n{}", describe(&out));
    let record = run_record(&out);
    let result = host_result(&record, &node);
    assert_eq!(result.outcome, HostOutcome::Applied, "{result:#?}");
    assert!(
        result
            .steps
            .iter()
            .any(|s| s.target == KUBELET_CONFIG && s.outcome == StepOutcome::Ok),
        "{result:#?}"
    );
    assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), new);
    assert_eq!(restarts(&lab, &node).len(), 1);
    assert!(
        lab.exec_output(&node, "flock -n /var/lib/dnsfix/lock true")
            .status
            .success(),
        "the re-run did not release the lock"
    );
}

/// Kills the script that holds the node lock (its owner file says "run RUN (pid PID)"),
/// then removes the stand-in for `command` that held it and ends the stand-in's sleep.
fn kill_the_script(lab: &Lab, node: &str, command: &str) {
    let owner = lab.exec(node, "cat /var/lib/dnsfix/owner");
    let pid = owner
        .rsplit("(pid ")
        .next()
        .and_then(|p| p.split(')').next())
        .unwrap_or("none")
        .to_string();
    lab.exec(
        node,
        &format!("kill -9 {pid} && rm -f /usr/local/sbin/{command} && pkill -x -f 'sleep 37'"),
    );
}

/// dnsfix dies after the node wrote the file, and a re-run completes the apply (it finds
/// the file written, restarts the kubelet): the re-run takes over the interrupted run's
/// backup ("adopted"), so rolling the re-run back restores the original. (Before, neither
/// run could be rolled back.)
#[test]
fn an_interrupted_then_completed_apply_can_be_rolled_back() {
    let lab = Lab::start(&["stub-symlink"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let (plan_path, plan) = save_plan(&lab, &lab.inventory());
    let (old, new) = planned_shas(&plan, &node, KUBELET_CONFIG);
    interrupt_mid_write(&lab, &node, &plan_path, &old, &new);

    let out = dnsfix(&lab, &["apply", path_str(&plan_path)]);
    assert_eq!(out.status.code(), Some(0), "re-run\n{}", describe(&out));
    assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), new);
    let run = undo_hint(&lab, &out);
    let out = dnsfix(&lab, &["rollback", &run, "--yes"]);
    assert_eq!(out.status.code(), Some(0), "rollback\n{}", describe(&out));
    assert_eq!(
        node_sha(&lab, &node, KUBELET_CONFIG),
        old,
        "rollback did not restore the original\n{}",
        describe(&out)
    );
}

/// The apply script dies between its write and the kubelet restart (killed on the node
/// while `systemctl restart` hangs): the file is new, the kubelet still the old one. A new
/// plan has nothing to write and restarts the kubelet alone (DNS-KUBELET-RESTART-DUE, from
/// the mark the dead run left); applied, the kubelet restarts once, the mark is gone, check
/// is clean, and the same plan again restarts nothing.
#[test]
fn a_run_killed_before_its_restart_is_finished_by_a_plan_that_restarts_alone() {
    let lab = Lab::start(&["stub-symlink"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let (plan_path, plan) = save_plan(&lab, &lab.inventory());
    let (_, new) = planned_shas(&plan, &node, KUBELET_CONFIG);
    let real = lab.exec(&node, "command -v systemctl").trim().to_string();
    lab.exec(
        &node,
        &format!(
            "printf '#!/bin/sh\\ncase \"$*\" in *restart*) sleep 37 ;; esac\\nexec {real} \"$@\"\\n' \
             > /usr/local/sbin/systemctl && chmod +x /usr/local/sbin/systemctl"
        ),
    );
    let child = dnsfix_cmd(&lab, &lab.inventory(), &["apply", path_str(&plan_path)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("dnsfix starts");
    wait_until(
        "the apply never reached the restart",
        Duration::from_secs(15),
        || {
            lab.exec_output(&node, "pgrep -x -f 'sleep 37'")
                .status
                .success()
        },
    );
    // Killed before the restart returns.
    kill_the_script(&lab, &node, "systemctl");
    let out = child.wait_with_output().expect("wait for dnsfix");
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    wait_for_lock_release(&lab, &node);
    assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), new);
    assert_eq!(restarts(&lab, &node), Vec::<String>::new());

    let (again_path, again) = save_plan(&lab, &lab.inventory());
    let host = host_plan(&again, &node);
    assert!(host.changes.is_empty(), "{host:#?}");
    assert_eq!(host.handlers.len(), 1, "{host:#?}");
    assert!(
        host.findings
            .iter()
            .any(|f| f.id == "DNS-KUBELET-RESTART-DUE"),
        "{host:#?}"
    );
    // (With the CoreDNS pod the old resolv.conf made loop, which the pods' recreation fixes.)
    assert!(
        host.fixes.contains(&"DNS-KUBELET-RESTART-DUE".to_owned()),
        "{host:#?}"
    );
    let out = dnsfix(&lab, &["apply", path_str(&again_path), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let result = host_result(&run_record(&out), &node).clone();
    assert_eq!(result.outcome, HostOutcome::Applied, "{result:#?}");
    assert_eq!(restarts(&lab, &node).len(), 1, "{result:#?}");
    assert_eq!(
        lab.exec(
            &node,
            "ls -A /var/lib/dnsfix/restart-due 2>/dev/null | wc -l"
        )
        .trim(),
        "0"
    );
    let findings = non_drift_findings(&lab, &lab.inventory());
    assert!(findings.is_empty(), "{findings:?}");

    let out = dnsfix(&lab, &["apply", path_str(&again_path), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(
        restarts(&lab, &node).len(),
        1,
        "the same plan restarted again"
    );
}

#[test]
fn a_full_filesystem_fails_cleanly_and_keeps_the_original() {
    let lab = Lab::start(&["brnf-off"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    lab.exec(
        &node,
        "set -e; mkdir -p /root/modules-load.d; cp -a /etc/modules-load.d/. /root/modules-load.d/; \
         mount -t tmpfs -o size=64k tmpfs /etc/modules-load.d; \
         cp -a /root/modules-load.d/. /etc/modules-load.d/; \
         dd if=/dev/zero of=/etc/modules-load.d/filler.bin bs=4k 2>/dev/null || true",
    );
    let files = || {
        lab.exec(
            &node,
            // A symlink (Debian's modules.conf -> ../modules, dangling where there is no
            // /etc/modules) is compared by its target.
            "cd /etc/modules-load.d && ls -A | sort | while read -r f; do \
             if [ -L \"$f\" ]; then echo \"$f -> $(readlink \"$f\")\"; else sha256sum \"$f\"; fi; done",
        )
    };
    let before = files();
    let bridge = || {
        lab.exec(&node, "cat /proc/sys/net/bridge/bridge-nf-call-iptables")
            .trim()
            .to_string()
    };
    assert_eq!(bridge(), "0");

    let (plan_path, _) = save_plan(&lab, &lab.inventory());
    let out = dnsfix(&lab, &["apply", path_str(&plan_path), "--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "a failed host: exit 3\n{}",
        describe(&out)
    );
    let record = run_record(&out);
    let result = host_result(&record, &node);
    assert_eq!(result.outcome, HostOutcome::Failed, "{result:#?}");
    let error = result.error.as_deref().unwrap_or("");
    assert!(
        error.contains("/etc/modules-load.d/dnsfix.conf"),
        "the error does not name the file: {result:#?}"
    );
    assert_eq!(
        node_sha(&lab, &node, "/etc/modules-load.d/dnsfix.conf"),
        "absent"
    );
    let temps = lab.exec(&node, "ls -A /etc/modules-load.d | grep dnsfix || true");
    assert_eq!(temps.trim(), "", "a temp file was left behind");
    assert_eq!(files(), before, "the other files changed");
    // Nothing after the failed write was done either.
    assert_eq!(
        node_sha(&lab, &node, "/etc/sysctl.d/99-dnsfix.conf"),
        "absent"
    );
    assert_eq!(bridge(), "0", "a sysctl was set after a write failed");

    lab.exec(&node, "umount /etc/modules-load.d");
}

#[test]
fn a_read_only_target_fails_cleanly() {
    let lab = Lab::start(&["stub-symlink"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    lab.exec(
        &node,
        "mount --bind /etc/kubernetes /etc/kubernetes && \
         mount -o remount,ro,bind /etc/kubernetes /etc/kubernetes",
    );
    let (plan_path, plan) = save_plan(&lab, &lab.inventory());
    let (old, _) = planned_shas(&plan, &node, KUBELET_CONFIG);

    let out = dnsfix(&lab, &["apply", path_str(&plan_path), "--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "a failed host: exit 3\n{}",
        describe(&out)
    );
    let record = run_record(&out);
    let result = host_result(&record, &node);
    assert_eq!(result.outcome, HostOutcome::Failed, "{result:#?}");
    assert!(
        result
            .error
            .as_deref()
            .unwrap_or("")
            .contains(KUBELET_CONFIG),
        "{result:#?}"
    );
    assert!(result.handlers.is_empty(), "{result:#?}");
    assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), old);
    assert_eq!(restarts(&lab, &node), Vec::<String>::new());
    lab.exec(&node, "umount /etc/kubernetes");
}

/// The saved plan of a lab of three hosts that all change, and their names in the order
/// apply takes them.
fn plan_three(lab: &Lab) -> (PathBuf, Plan, Vec<String>) {
    let (plan_path, plan) = save_plan(lab, &lab.inventory());
    let order: Vec<String> = plan
        .hosts
        .iter()
        .filter(|h| h.status == HostStatus::Changes)
        .map(|h| h.host.clone())
        .collect();
    assert_eq!(order.len(), 3, "{order:?}");
    (plan_path, plan, order)
}

/// `dnsfix ARGS` in a process group of its own (as a shell starts a job: the terminal's
/// Ctrl-C goes to all of it), once `node`'s `systemctl restart` is held by a stand-in that
/// sleeps first (`sleep 37`); returns when that restart has begun, with the group's id.
fn apply_held_at_restart(lab: &Lab, node: &str, args: &[&str]) -> (Child, u32, KillGroupOnDrop) {
    use std::os::unix::process::CommandExt;
    let real = lab.exec(node, "command -v systemctl").trim().to_string();
    lab.exec(
        node,
        &format!(
            "printf '#!/bin/sh\\ncase \"$*\" in *restart*) sleep 37 ;; esac\\nexec {real} \"$@\"\\n' \
             > /usr/local/sbin/systemctl && chmod +x /usr/local/sbin/systemctl"
        ),
    );
    let mut cmd = dnsfix_cmd(lab, &lab.inventory(), args);
    cmd.process_group(0).env("XDG_RUNTIME_DIR", held_xdg(lab));
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("dnsfix starts");
    let group = child.id();
    let job = KillGroupOnDrop(Some(group));
    wait_until(
        &format!("{node} never restarted"),
        Duration::from_secs(20),
        || {
            lab.exec_output(node, "pgrep -x -f 'sleep 37'")
                .status
                .success()
        },
    );
    (child, group, job)
}

/// The control directory of [`apply_held_at_restart`]'s runs (`XDG_RUNTIME_DIR`): what
/// ssh processes they leave is read there.
fn held_xdg(lab: &Lab) -> PathBuf {
    crate::common::masters::private_dir(lab, "xdg-held")
}

/// Kills process group `.0` (a dnsfix job) when dropped before [`KillGroupOnDrop::disarm`]:
/// a test that fails before its job ends leaves no dnsfix behind, waiting at a question or
/// on a node. Disarmed once the job is reaped, so that a later group with the same number
/// is never hit.
struct KillGroupOnDrop(Option<u32>);

impl KillGroupOnDrop {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for KillGroupOnDrop {
    fn drop(&mut self) {
        if let Some(group) = self.0 {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{group}")])
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// SIGINT to process group `group`, as the terminal's Ctrl-C.
fn interrupt(group: u32) {
    let sent = Command::new("kill")
        .args(["-INT", "--", &format!("-{group}")])
        .status()
        .expect("kill runs");
    assert!(sent.success(), "SIGINT to process group {group}");
}

/// The held restart goes on, the stand-in gone.
fn release_restart(lab: &Lab, node: &str) {
    lab.exec(
        node,
        "rm -f /usr/local/sbin/systemctl; pkill -x -f 'sleep 37' || true",
    );
}

/// Ctrl-C on the terminal (SIGINT to dnsfix's whole process group, ssh clients included)
/// while the first of three hosts restarts its kubelet: that host finishes (restart, health
/// gate, verify: applied, no restart left due), the other two are not started (untouched,
/// nothing written), the run is recorded, exit 3. A second Ctrl-C ends dnsfix at once
/// (exit 130).
#[test]
fn ctrl_c_lets_the_host_in_progress_finish_and_starts_no_other() {
    let lab = Lab::start(&["stub-symlink", "stub-symlink", "stub-symlink"])
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let (plan_path, plan, order) = plan_three(&lab);
    let first = &order[0];
    let args = [
        "apply",
        path_str(&plan_path),
        "--serial",
        "1",
        "--format",
        "json",
    ];
    let (child, group, job) = apply_held_at_restart(&lab, first, &args);
    interrupt(group);
    // The restart goes on once dnsfix has taken the interrupt.
    std::thread::sleep(Duration::from_millis(500));
    release_restart(&lab, first);
    let out = child.wait_with_output().expect("wait for dnsfix");
    job.disarm();
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("interrupted: the hosts in progress finish"),
        "{}",
        describe(&out)
    );
    let record = run_record(&out);
    let done = host_result(&record, first);
    assert_eq!(done.outcome, HostOutcome::Applied, "{done:#?}");
    assert_eq!(restarts(&lab, first).len(), 1, "{done:#?}");
    for name in &order[1..] {
        let result = host_result(&record, name);
        assert_eq!(result.outcome, HostOutcome::Untouched, "{result:#?}");
        assert!(
            result.error.as_deref().unwrap_or("").contains("Ctrl-C"),
            "{result:#?}"
        );
        let (old, _) = planned_shas(&plan, name, KUBELET_CONFIG);
        assert_eq!(node_sha(&lab, name, KUBELET_CONFIG), old, "{name}");
        assert_eq!(restarts(&lab, name), Vec::<String>::new(), "{name}");
    }
    let findings = non_drift_findings(&lab, &lab.inventory());
    assert!(
        !findings
            .iter()
            .any(|(h, id)| h == first || id == "DNS-KUBELET-RESTART-DUE"),
        "{findings:?}"
    );

    // Twice: dnsfix ends at once, and its ssh processes (the one running the held host's
    // script, its master) with it; the run's record is the one saved before the first
    // host, the host in progress `pending` (interrupted), not failed for its lost ssh.
    let second = &order[1];
    let (child, group, job) = apply_held_at_restart(&lab, second, &["apply", path_str(&plan_path)]);
    interrupt(group);
    std::thread::sleep(Duration::from_millis(300));
    interrupt(group);
    let out = child.wait_with_output().expect("wait for dnsfix");
    job.disarm();
    let xdg = held_xdg(&lab);
    let gone = crate::common::masters::wait_for(Duration::from_secs(5), || {
        crate::common::masters::ssh_processes(&xdg).is_empty()
    });
    let left = crate::common::masters::ssh_processes(&xdg);
    release_restart(&lab, second);
    assert_eq!(out.status.code(), Some(130), "{}", describe(&out));
    assert!(gone, "left after the second Ctrl-C: {left:#?}");
    // (The run's lock, runs/RUN_ID.lock, is left beside it: the kernel let it go.)
    let newest = std::fs::read_dir(lab.dir.join("state/runs"))
        .expect("runs")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())
        .expect("a run record");
    let record: RunRecord =
        serde_json::from_slice(&std::fs::read(newest.path()).expect("read")).expect("record");
    let held = host_result(&record, second);
    assert_eq!(held.outcome, HostOutcome::Pending, "{held:#?}");
}

/// A saved plan applied to a node that stopped taking connections since (its sshd and
/// forwarder gone): the host fails, exit 3, and the run record says it as the plan says a
/// host it could not reach, `unreachable: refused: ...` (README's table). With the OpenSSH
/// backend, which connects at the first command, it said "gather before apply: refused:
/// ...". The node is not changed.
#[test]
fn a_node_apply_cannot_reach_is_unreachable_in_the_run_record() {
    let lab = Lab::start(&["stub-symlink"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let (plan_path, _) = save_plan(&lab, &lab.inventory());
    let before = node_sha(&lab, &node, KUBELET_CONFIG);
    lab.stop(&node);
    let out = dnsfix(&lab, &["apply", path_str(&plan_path), "--format", "json"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let record = run_record(&out);
    let result = host_result(&record, &node);
    assert_eq!(result.outcome, HostOutcome::Failed, "{result:#?}");
    let error = result.error.as_deref().unwrap_or_default();
    assert!(error.starts_with("unreachable: refused: "), "{result:#?}");
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains(&format!("{node}: failed: unreachable: refused: ")),
        "{}",
        describe(&out)
    );
    assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), before);
}

/// What a Ctrl-C before the rollout must leave: `nodes`' kubelet config as it was
/// (`before`), no restart or reload, no dnsfix state on the node (its lock, backups and
/// manifests live in /var/lib/dnsfix, which only a run that writes makes), no run record
/// or run lock on this machine, and no ssh process of the run (`xdg`).
fn nothing_left_after_ctrl_c(lab: &Lab, before: &[(String, String)], xdg: &Path, out: &Output) {
    for (node, sha) in before {
        assert_eq!(
            &node_sha(lab, node, KUBELET_CONFIG),
            sha,
            "{node}: {}",
            describe(out)
        );
        assert_eq!(restarts(lab, node), Vec::<String>::new(), "{node}");
        let state = lab.exec(node, "ls -A /var/lib/dnsfix 2>/dev/null; true");
        assert_eq!(state.trim(), "", "{node}: dnsfix state left: {state}");
    }
    let runs: Vec<PathBuf> = std::fs::read_dir(lab.dir.join("state/runs"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(runs, Vec::<PathBuf>::new(), "{}", describe(out));
    let gone = crate::common::masters::wait_for(Duration::from_secs(5), || {
        crate::common::masters::ssh_processes(xdg).is_empty()
    });
    assert!(
        gone,
        "left after Ctrl-C: {:?}",
        crate::common::masters::ssh_processes(xdg)
    );
}

/// `dnsfix apply` (planning first) in a process group of its own, as a shell starts a job,
/// with its ssh control sockets in `xdg`; stdout and stderr piped.
fn apply_job(lab: &Lab, xdg: &Path, stdin: Stdio, args: &[&str]) -> Child {
    use std::os::unix::process::CommandExt;
    let mut cmd = Dnsfix::new(["apply", "--connect-timeout", "60"])
        .args(args)
        .lab_apply(lab, &lab.inventory())
        .env("XDG_RUNTIME_DIR", xdg)
        .stdin(stdin)
        .command();
    cmd.process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("dnsfix starts")
}

/// Ctrl-C (SIGINT to the job's process group, as the terminal sends it) while `apply`
/// plans: one node has answered, the other's sshd never sends its banner (`--forks 1`, so
/// it is the one in progress). dnsfix ends at once, exit 130 (docs/apply.md), names the host
/// it stopped on and prints no plan; nothing was written or restarted on either node,
/// nothing locked, no run recorded, no ssh left.
#[test]
fn ctrl_c_while_apply_plans_ends_it_with_nothing_changed() {
    let lab = Lab::start(&["stub-symlink", "stub-symlink"])
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let (answers, hangs) = (&lab.nodes[0], &lab.nodes[1]);
    let before: Vec<(String, String)> = lab
        .nodes
        .iter()
        .map(|n| (n.name.clone(), node_sha(&lab, &n.name, KUBELET_CONFIG)))
        .collect();
    lab.freeze(&hangs.name);
    let xdg = crate::common::masters::private_dir(&lab, "xdg-planning");
    let child = apply_job(&lab, &xdg, Stdio::null(), &["--forks", "1"]);
    let group = child.id();
    let job = KillGroupOnDrop(Some(group));
    // The first node is done once the second one's ssh waits for its banner.
    let port = format!("-p {}", hangs.port);
    let waiting = crate::common::masters::wait_for(Duration::from_secs(30), || {
        crate::common::masters::ssh_processes(&xdg)
            .iter()
            .any(|(_, c)| c.contains(&port))
    });
    assert!(
        waiting,
        "no ssh to {}: {:?}",
        hangs.name,
        crate::common::masters::ssh_processes(&xdg)
    );
    interrupt(group);
    let out = child.wait_with_output().expect("wait for dnsfix");
    job.disarm();
    assert_eq!(out.status.code(), Some(130), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.lines().last(),
        Some(
            format!(
                "dnsfix: interrupted: apply stopped with 1 of 2 hosts pending (in progress: {}); \
                 no report was printed",
                hangs.name
            )
            .as_str()
        ),
        "{}",
        describe(&out)
    );
    assert!(!stderr.contains(&answers.name), "{}", describe(&out));
    assert!(out.stdout.is_empty(), "{}", describe(&out));
    nothing_left_after_ctrl_c(&lab, &before, &xdg, &out);
}

/// Ctrl-C at apply's y/N question (stdin a terminal: a pseudo-terminal here), once the plan
/// is shown: dnsfix ends at once, exit 130, names no host (every host has answered), and
/// says nothing was applied, as the answer no does; nothing was written, restarted or
/// locked on the node, no run recorded, no ssh left.
#[test]
fn ctrl_c_at_the_apply_question_applies_nothing() {
    let lab = Lab::start(&["stub-symlink"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let before = vec![(node.clone(), node_sha(&lab, &node, KUBELET_CONFIG))];
    let xdg = crate::common::masters::private_dir(&lab, "xdg-question");
    let terminal = nix::pty::openpty(None, None).expect("a pseudo-terminal");
    let mut child = apply_job(&lab, &xdg, Stdio::from(terminal.slave), &[]);
    let group = child.id();
    let job = KillGroupOnDrop(Some(group));
    // stderr, read as it comes, until the question is asked.
    let mut stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        loop {
            match std::io::Read::read(&mut stderr, &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let mut seen = Vec::new();
    let asked = Instant::now();
    while !String::from_utf8_lossy(&seen).ends_with("[y/N] ") {
        assert!(
            asked.elapsed() < Duration::from_secs(60),
            "never asked: {}",
            String::from_utf8_lossy(&seen)
        );
        if let Ok(chunk) = rx.recv_timeout(Duration::from_millis(100)) {
            seen.extend(chunk);
        }
    }
    interrupt(group);
    let out = child.wait_with_output().expect("wait for dnsfix");
    job.disarm();
    reader.join().expect("the stderr reader");
    seen.extend(rx.try_iter().flatten());
    drop(terminal.master);
    let stderr = String::from_utf8_lossy(&seen);
    let out = Output {
        stderr: seen.clone(),
        ..out
    };
    assert_eq!(out.status.code(), Some(130), "{}", describe(&out));
    assert!(
        stderr.ends_with("Apply these changes to 1 host(s)? [y/N] \nnothing applied\n"),
        "{}",
        describe(&out)
    );
    assert!(!stderr.contains("interrupted"), "{}", describe(&out));
    // The plan was shown, and no report of a run follows it.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(KUBELET_CONFIG) && !stdout.contains("run recorded"),
        "{}",
        describe(&out)
    );
    nothing_left_after_ctrl_c(&lab, &before, &xdg, &out);
}

#[test]
fn a_failing_health_gate_stops_the_next_batches() {
    let lab = Lab::start(&["stub-symlink", "stub-symlink", "stub-symlink"])
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let (plan_path, plan, order) = plan_three(&lab);
    let first = &order[0];
    // The kubelet binary the unit runs now exits at once: it cannot come back.
    lab.exec(
        first,
        "rm -f /usr/local/bin/kubelet && printf '#!/bin/sh\\nexit 1\\n' > /usr/local/bin/kubelet \
         && chmod +x /usr/local/bin/kubelet",
    );

    let started = Instant::now();
    let out = dnsfix(
        &lab,
        &[
            "apply",
            path_str(&plan_path),
            "--serial",
            "1",
            "--max-fail-percentage",
            "0",
            "--health-timeout",
            "5",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(3), "exit 3\n{}", describe(&out));
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the health gate took {:?}",
        started.elapsed()
    );
    let record = run_record(&out);
    let failed = host_result(&record, first);
    assert_eq!(failed.outcome, HostOutcome::Failed, "{failed:#?}");
    assert!(
        failed
            .handlers
            .iter()
            .any(|h| h.unit == "kubelet" && !h.healthy),
        "no unhealthy kubelet handler: {failed:#?}"
    );
    for name in &order[1..] {
        let result = host_result(&record, name);
        assert_eq!(result.outcome, HostOutcome::Untouched, "{result:#?}");
        assert!(
            result
                .error
                .as_deref()
                .unwrap_or("")
                .contains("--max-fail-percentage"),
            "{result:#?}"
        );
        let (old, _) = planned_shas(&plan, name, KUBELET_CONFIG);
        assert_eq!(
            node_sha(&lab, name, KUBELET_CONFIG),
            old,
            "{name} was written"
        );
        assert_eq!(restarts(&lab, name), Vec::<String>::new(), "{name}");
    }
}

#[test]
fn a_concurrent_apply_is_refused() {
    let lab = Lab::start(&["stub-symlink"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let (plan_path, plan) = save_plan(&lab, &lab.inventory());
    let (old, new) = planned_shas(&plan, &node, KUBELET_CONFIG);

    // Another apply holds the node lock (flock on /var/lib/dnsfix/lock, as apply takes it).
    lab.exec(
        &node,
        "mkdir -p /var/lib/dnsfix && echo 'run other-run (pid 1)' > /var/lib/dnsfix/owner",
    );
    let holder = lab
        .exec(
            &node,
            "flock -o -x /var/lib/dnsfix/lock sleep 301 </dev/null >/dev/null 2>&1 & echo $!",
        )
        .trim()
        .to_string();
    wait_until(
        "the lock holder did not start",
        Duration::from_secs(5),
        || {
            lab.exec_output(&node, "flock -n /var/lib/dnsfix/lock true")
                .status
                .code()
                == Some(1)
        },
    );

    let out = dnsfix(&lab, &["apply", path_str(&plan_path), "--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "a locked host: exit 3\n{}",
        describe(&out)
    );
    let record = run_record(&out);
    let result = host_result(&record, &node);
    assert_eq!(result.outcome, HostOutcome::Locked, "{result:#?}");
    assert!(
        result
            .error
            .as_deref()
            .is_some_and(|e| e.contains("run other-run (pid 1)")),
        "{result:#?}"
    );
    assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), old);
    assert_eq!(restarts(&lab, &node), Vec::<String>::new());
    assert_eq!(
        lab.exec_output(&node, "flock -n /var/lib/dnsfix/lock true")
            .status
            .code(),
        Some(1),
        "the refused apply released a lock it did not hold"
    );

    // The holder ends: the kernel releases its lock, and the next apply runs.
    lab.exec(&node, &format!("kill {holder}"));
    wait_until("the lock was not released", Duration::from_secs(5), || {
        lab.exec_output(&node, "flock -n /var/lib/dnsfix/lock true")
            .status
            .success()
    });
    let out = dnsfix(&lab, &["apply", path_str(&plan_path), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "lock free\n{}", describe(&out));
    let record = run_record(&out);
    assert_eq!(
        host_result(&record, &node).outcome,
        HostOutcome::Applied,
        "{record:#?}"
    );
    assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), new);
    assert!(
        lab.exec_output(&node, "flock -n /var/lib/dnsfix/lock true")
            .status
            .success(),
        "the apply left its lock held"
    );
}

#[test]
fn rollback_restores_original_bytes_and_mode() {
    let lab = Lab::start(&["stub-symlink", "brnf-off"])
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let stub = lab.nodes[0].name.clone();
    let brnf = lab.nodes[1].name.clone();
    lab.exec(&stub, &format!("chmod 600 {KUBELET_CONFIG}"));
    let mode = || {
        lab.exec(&stub, &format!("stat -c %a {KUBELET_CONFIG}"))
            .trim()
            .to_string()
    };
    let original_sha = node_sha(&lab, &stub, KUBELET_CONFIG);
    assert_eq!(mode(), "600");
    let bridge = || {
        lab.exec(&brnf, "cat /proc/sys/net/bridge/bridge-nf-call-iptables")
            .trim()
            .to_string()
    };
    assert_eq!(bridge(), "0");

    let (plan_path, plan) = save_plan(&lab, &lab.inventory());
    let (_, new) = planned_shas(&plan, &stub, KUBELET_CONFIG);
    // Without the plan's inventory its hosts are not there: refused (1), naming the
    // inventory to apply it with, nothing touched.
    let lost = Dnsfix::new(["apply", path_str(&plan_path)])
        .env("DNSFIX_STATE_DIR", lab.dir.join("state"))
        .stdin(Stdio::null())
        .output();
    assert_eq!(lost.status.code(), Some(1), "{}", describe(&lost));
    assert!(
        String::from_utf8_lossy(&lost.stderr).contains(&format!(
            "not in the implicit localhost inventory (no -i): apply it with the plan's \
             inventory: dnsfix apply -i '{}' '{}'",
            lab.inventory().display(),
            plan_path.display()
        )),
        "{}",
        describe(&lost)
    );
    assert_eq!(node_sha(&lab, &stub, KUBELET_CONFIG), original_sha);

    let out = dnsfix(&lab, &["apply", path_str(&plan_path)]);
    assert_eq!(out.status.code(), Some(0), "apply\n{}", describe(&out));
    assert_eq!(node_sha(&lab, &stub, KUBELET_CONFIG), new);
    assert_eq!(mode(), "600", "apply changed the file's mode");
    assert_eq!(bridge(), "1");
    let run = undo_hint(&lab, &out);
    let restarts_after_apply = restarts(&lab, &stub).len();

    // Without the run's inventory the hosts it changed are not there: refused (1), naming
    // them and the inventory to use, and nothing is touched.
    let lost = Dnsfix::new(["rollback", &run, "--yes"])
        .env("DNSFIX_STATE_DIR", lab.dir.join("state"))
        .stdin(Stdio::null())
        .output();
    assert_eq!(lost.status.code(), Some(1), "{}", describe(&lost));
    let said = String::from_utf8_lossy(&lost.stderr);
    let mut names = [stub.as_str(), brnf.as_str()];
    names.sort_by(|a, b| dnsfix::text::natural_cmp(a, b));
    assert!(
        said.contains(&format!(
            "changed hosts {} that are not in the implicit localhost inventory (no -i): \
             roll it back with the run's inventory: dnsfix rollback -i '{}' {run}",
            names.join(", "),
            lab.inventory().display()
        )),
        "{said}"
    );
    assert_eq!(node_sha(&lab, &stub, KUBELET_CONFIG), new);

    let out = dnsfix(&lab, &["rollback", &run, "--yes", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "rollback\n{}", describe(&out));
    let record = run_record(&out);
    assert_eq!(record.command, "rollback");
    assert_eq!(record.rolls_back.as_deref(), Some(run.as_str()));
    for name in [&stub, &brnf] {
        assert_eq!(
            host_result(&record, name).outcome,
            HostOutcome::Applied,
            "{record:#?}"
        );
    }
    assert_eq!(node_sha(&lab, &stub, KUBELET_CONFIG), original_sha);
    assert_eq!(mode(), "600", "rollback changed the file's mode");
    assert_eq!(
        restarts(&lab, &stub).len(),
        restarts_after_apply + 1,
        "rollback did not restart the kubelet"
    );
    for path in [
        "/etc/sysctl.d/99-dnsfix.conf",
        "/etc/modules-load.d/dnsfix.conf",
    ] {
        assert_eq!(node_sha(&lab, &brnf, path), "absent", "{path}");
    }
    assert_eq!(bridge(), "0");

    // Again: the run was rolled back once, and is not rolled back twice.
    let out = dnsfix(&lab, &["rollback", &run, "--yes", "--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "second rollback\n{}",
        describe(&out)
    );
    let record = run_record(&out);
    for result in &record.hosts {
        assert_eq!(result.outcome, HostOutcome::NothingPlanned, "{result:#?}");
    }
    assert_eq!(node_sha(&lab, &stub, KUBELET_CONFIG), original_sha);
    assert_eq!(mode(), "600");
    assert_eq!(restarts(&lab, &stub).len(), restarts_after_apply + 1);
    assert_eq!(bridge(), "0");
}

/// A file changed since the run keeps the run's change: the rollback leaves it alone and
/// says so as a failure (3), naming the file, not "nothing to roll back" with 0.
#[test]
fn a_rollback_that_leaves_a_changed_file_alone_fails_and_says_so() {
    let lab = Lab::start(&["stub-symlink"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let (plan_path, _) = save_plan(&lab, &lab.inventory());
    let out = dnsfix(&lab, &["apply", path_str(&plan_path)]);
    assert_eq!(out.status.code(), Some(0), "apply\n{}", describe(&out));
    let run = undo_hint(&lab, &out);
    // Another tool's edit after the run.
    lab.exec(&node, &format!("echo 'maxPods: 120' >> {KUBELET_CONFIG}"));
    let edited = node_sha(&lab, &node, KUBELET_CONFIG);

    // The first rollback, and again: not marked rolled back, it fails the same (a runbook
    // that retries until exit 0 does not pass), and their edit stays.
    for attempt in ["rollback", "again"] {
        let out = dnsfix(&lab, &["rollback", &run, "--yes", "--format", "json"]);
        assert_eq!(out.status.code(), Some(3), "{attempt}\n{}", describe(&out));
        let result = host_result(&run_record(&out), &node).clone();
        assert_eq!(result.outcome, HostOutcome::Failed, "{result:#?}");
        let error = result.error.as_deref().unwrap_or_default();
        assert!(
            error.contains("left in place") && error.contains(&run),
            "{error}"
        );
        assert!(
            result
                .steps
                .iter()
                .any(|s| s.outcome == StepOutcome::Kept && s.target == KUBELET_CONFIG),
            "{result:#?}"
        );
        assert_eq!(
            node_sha(&lab, &node, KUBELET_CONFIG),
            edited,
            "their edit stays"
        );
    }
}

/// A sysctl file the boot applies after dnsfix's and that sets 0: Debian's
/// /etc/sysctl.conf, read through the /etc/sysctl.d/99-sysctl.conf link. apply changes
/// that line in /etc/sysctl.conf itself (the link stays a link, the other lines stay), the
/// next check finds bridge netfilter on and persisted, and rollback restores the bytes.
#[test]
fn a_later_sysctl_file_that_sets_0_is_edited_through_its_link_and_rolled_back() {
    let lab = Lab::start(&["brnf-off"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    lab.exec(
        &node,
        "printf '# Disable netfilter on bridges.\\nnet.bridge.bridge-nf-call-iptables = 0\\n' >> /etc/sysctl.conf",
    );
    let conf = "/etc/sysctl.conf";
    let original = lab.exec(&node, &format!("cat {conf}"));
    let original_sha = node_sha(&lab, &node, conf);
    let link = || {
        lab.exec(&node, "readlink /etc/sysctl.d/99-sysctl.conf")
            .trim()
            .to_owned()
    };
    assert_eq!(link(), "../sysctl.conf");

    let (plan_path, plan) = save_plan(&lab, &lab.inventory());
    let (before, _) = planned_shas(&plan, &node, conf);
    assert_eq!(before, original_sha);
    let out = dnsfix(&lab, &["apply", path_str(&plan_path)]);
    assert_eq!(out.status.code(), Some(0), "apply\n{}", describe(&out));
    let run = undo_hint(&lab, &out);

    let now = lab.exec(&node, &format!("cat {conf}"));
    let changed: Vec<(&str, &str)> = original
        .lines()
        .zip(now.lines())
        .filter(|(a, b)| a != b)
        .collect();
    assert_eq!(
        changed,
        [(
            "net.bridge.bridge-nf-call-iptables = 0",
            "net.bridge.bridge-nf-call-iptables = 1"
        )],
        "{now}"
    );
    assert_eq!(original.lines().count(), now.lines().count());
    assert_eq!(link(), "../sysctl.conf", "the link was replaced");
    let left = non_drift_findings(&lab, &lab.inventory());
    assert!(
        !left.iter().any(|(_, id)| id.starts_with("DNS-BRIDGE-NF")),
        "{left:?}"
    );

    let out = dnsfix(&lab, &["rollback", &run, "--yes"]);
    assert_eq!(out.status.code(), Some(0), "rollback\n{}", describe(&out));
    assert_eq!(node_sha(&lab, &node, conf), original_sha);
    assert_eq!(link(), "../sysctl.conf");
}

/// A newcomer's walk: `plan -o` on a node with bridge netfilter off, then a sysctl.d file
/// that sorts after the one the plan writes and sets it back to 0 (it wins at boot), then
/// `apply`: it said "fixed DNS-BRIDGE-NF-OFF" and exited 0, and the next check found the
/// setting not persistent. The file is new in a directory the rules read: the host is stale
/// (exit 4), refused before anything is written.
#[test]
fn a_new_sysctl_file_since_the_plan_is_stale_and_nothing_is_written() {
    let lab = Lab::start(&["brnf-off"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let (plan_path, plan) = save_plan(&lab, &lab.inventory());
    let written: Vec<String> = host_plan(&plan, &node)
        .changes
        .iter()
        .filter_map(|c| match c {
            Change::WriteFile { path, .. } => Some(path.clone()),
            _ => None,
        })
        .collect();
    assert!(!written.is_empty(), "the plan writes no file");
    let before: Vec<String> = written.iter().map(|p| node_sha(&lab, &node, p)).collect();
    let added = "/etc/sysctl.d/999-zz-hardening.conf";
    lab.exec(
        &node,
        &format!("echo 'net.bridge.bridge-nf-call-iptables = 0' > {added}"),
    );

    let (_, stale) = apply_stale(&lab, &lab.inventory(), &plan_path, &node);
    assert_eq!(
        stale.stale,
        [format!("{added}: created since the plan")],
        "{stale:#?}"
    );
    assert!(
        stale.steps.is_empty() && stale.handlers.is_empty(),
        "{stale:#?}"
    );
    let after: Vec<String> = written.iter().map(|p| node_sha(&lab, &node, p)).collect();
    assert_eq!(
        after, before,
        "the stale host's files were written: {written:?}"
    );
    assert_eq!(
        lab.exec(&node, "cat /proc/sys/net/bridge/bridge-nf-call-iptables")
            .trim(),
        "0"
    );
}

#[test]
fn apply_without_a_terminal_asks_for_yes() {
    let lab = Lab::start(&["stub-symlink"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let before = node_sha(&lab, &node, KUBELET_CONFIG);
    let out = dnsfix(&lab, &["apply"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--yes"),
        "{}",
        describe(&out)
    );
    assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), before);
    assert_eq!(restarts(&lab, &node), Vec::<String>::new());
}

#[test]
fn the_kubespray_inventory_is_updated_only_on_request_and_only_if_unchanged() {
    let lab = Lab::start(&["stub-symlink"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let original = "---\n## Upstream dns servers\n# upstream_dns_servers:\n#   - 8.8.8.8\n\nloadbalancer_apiserver_localhost: true\n";
    let inventory = lab.kubespray_inventory(original);
    let all_yml = lab.dir.join("inventory/group_vars/all/all.yml");
    let plan_path = lab.dir.join("plan.json");
    let out = dnsfix_in(&lab, &inventory, &["plan", "-o", path_str(&plan_path)]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let plan: Plan =
        serde_json::from_str(&std::fs::read_to_string(&plan_path).expect("saved")).expect("plan");
    assert_eq!(
        plan.inventory_changes.len(),
        1,
        "{:#?}",
        plan.inventory_changes
    );
    assert_eq!(plan.inventory_changes[0].path, path_str(&all_yml));

    // A stale inventory file is not overwritten: exit 4, the node is still applied.
    let edited = format!("{original}# a colleague's edit\n");
    std::fs::write(&all_yml, &edited).expect("edit all.yml");
    let out = apply_updating(&lab, &inventory, &plan_path);
    assert_eq!(out.status.code(), Some(4), "{}", describe(&out));
    let record = run_record(&out);
    assert_eq!(host_result(&record, &node).outcome, HostOutcome::Applied);
    assert_eq!(record.inventory_updates[0].outcome, "stale", "{record:#?}");
    assert_eq!(std::fs::read_to_string(&all_yml).expect("read"), edited);

    // Without --update-inventory nothing local changes, and the report says what that means.
    std::fs::write(&all_yml, original).expect("restore all.yml");
    let out = dnsfix_in(&lab, &inventory, &["apply", path_str(&plan_path)]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("without --update-inventory"),
        "{}",
        describe(&out)
    );
    assert_eq!(std::fs::read_to_string(&all_yml).expect("read"), original);

    // With it, the file gets exactly the planned content, comments kept; again: already.
    let out = apply_updating(&lab, &inventory, &plan_path);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(run_record(&out).inventory_updates[0].outcome, "written");
    let updated = std::fs::read_to_string(&all_yml).expect("read");
    assert_eq!(updated, plan.inventory_changes[0].content);
    assert!(updated.starts_with(original), "{updated}");
    assert!(
        updated.ends_with("kube_resolv_conf: /run/systemd/resolve/resolv.conf\n"),
        "{updated}"
    );
    let out = apply_updating(&lab, &inventory, &plan_path);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(run_record(&out).inventory_updates[0].outcome, "already");
}

/// An inventory edit naming dnsfix's own file (`kube_resolv_conf: /etc/dnsfix/resolv.conf`,
/// per host) is held while its host has not got that file: `--limit` left it out. The next
/// Kubespray run would give that node a resolvConf that is not there. Held is no failure
/// (exit 0); applying the plan to that node writes it. Other edits are the fix as Kubespray
/// makes it and are written under any `--limit`. Before, the limited run wrote both.
#[test]
fn an_inventory_edit_naming_dnsfix_s_file_waits_for_its_host() {
    let lab = Lab::start(&["kubespray-loop", "stub-symlink"])
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let (looping, stub) = (lab.nodes[0].name.clone(), lab.nodes[1].name.clone());
    let inventory = kubespray_inventory(&lab);
    let host_vars = |host: &str| lab.dir.join(format!("inventory/host_vars/{host}.yml"));
    let plan_path = lab.dir.join("plan.json");
    let out = dnsfix_in(&lab, &inventory, &["plan", "-o", path_str(&plan_path)]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let plan: Plan =
        serde_json::from_str(&std::fs::read_to_string(&plan_path).expect("saved")).expect("plan");
    let edit_of = |host: &str| {
        plan.inventory_changes
            .iter()
            .find(|c| c.path == path_str(&host_vars(host)))
            .unwrap_or_else(|| panic!("no edit of {host}: {:#?}", plan.inventory_changes))
    };
    assert!(
        edit_of(&looping)
            .settings
            .iter()
            .any(|s| s.contains("/etc/dnsfix/resolv.conf")),
        "{:#?}",
        plan.inventory_changes
    );

    let apply = |extra: &[&str]| {
        let mut args = vec![
            "apply",
            path_str(&plan_path),
            "--update-inventory",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        dnsfix_in(&lab, &inventory, &args)
    };
    let outcome_of = |record: &RunRecord, host: &str| {
        record
            .inventory_updates
            .iter()
            .find(|u| u.path == path_str(&host_vars(host)))
            .map(|u| (u.outcome.clone(), u.message.clone()))
            .unwrap_or_else(|| panic!("no update of {host}: {record:#?}"))
    };
    let out = apply(&["--limit", &stub]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let record = run_record(&out);
    assert_eq!(host_result(&record, &stub).outcome, HostOutcome::Applied);
    let (outcome, message) = outcome_of(&record, &looping);
    assert_eq!(outcome, "held", "{record:#?}");
    assert!(
        message.contains(&format!("{looping} (not in this run)")),
        "{message}"
    );
    assert!(!host_vars(&looping).exists());
    assert_eq!(outcome_of(&record, &stub).0, "written", "{record:#?}");

    let out = apply(&["--limit", &looping]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let record = run_record(&out);
    assert_eq!(outcome_of(&record, &looping).0, "written", "{record:#?}");
    let written = edit_of(&looping).content.clone();
    assert_eq!(
        std::fs::read_to_string(host_vars(&looping)).expect("read"),
        written
    );
    let all_yml = host_vars(&looping);

    // Rolling that run back leaves the inventory file, and says so: exit 3, as for a
    // node file kept, on an OS whose Kubespray vars set no kube_resolv_conf. Before, the
    // report did not mention it and exited 0.
    let out = dnsfix_in(&lab, &inventory, &["rollback", &record.run_id]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not rolling back without confirmation"),
        "{}",
        describe(&out)
    );
    let out = dnsfix_in(&lab, &inventory, &["rollback", &record.run_id, "--yes"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("kept     ")
            && stdout.contains(&format!(
                "the inventory gives {looping} kube_resolv_conf: /etc/dnsfix/resolv.conf, a file this rollback removed"
            ))
            // The node's OS (the lab host's, Debian) read after the rollback: no "unless".
            && !stdout.contains("unless Kubespray's vars"),
        "{}",
        describe(&out)
    );
    assert_eq!(std::fs::read_to_string(&all_yml).expect("read"), written);
}

/// On Ubuntu 22.04 Kubespray's roles/kubernetes/node/vars/ubuntu-22.yml (@46dbdd39) sets
/// kube_resolv_conf over group and host vars: an inventory that still gives the node
/// dnsfix's file (set by hand, or by a run on the node's former OS) hands it to no kubelet
/// once a rollback removed that file. The plan writes no kube_resolv_conf there, and the
/// rollback reads the node's OS and says the inventory's value is unused, naming that
/// file: exit 0. Before, it was kept "unless" the OS set it, and the rollback exited 3.
#[test]
fn a_rollback_on_ubuntu_leaves_the_inventory_s_kube_resolv_conf_to_its_distro_vars() {
    let lab = Lab::start(&["kubespray-loop-ubuntu"])
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let inventory = kubespray_inventory(&lab);
    let host_vars = lab.dir.join(format!("inventory/host_vars/{node}.yml"));
    std::fs::create_dir_all(host_vars.parent().expect("dir")).expect("mkdir host_vars");
    let by_hand = "kube_resolv_conf: /etc/dnsfix/resolv.conf\n";
    std::fs::write(&host_vars, by_hand).expect("write host_vars");
    let plan_path = lab.dir.join("plan.json");
    let out = dnsfix_in(&lab, &inventory, &["plan", "-o", path_str(&plan_path)]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let plan: Plan =
        serde_json::from_str(&std::fs::read_to_string(&plan_path).expect("saved")).expect("plan");
    assert!(
        plan.inventory_changes
            .iter()
            .all(|c| c.settings.iter().all(|s| !s.contains("kube_resolv_conf"))),
        "{:#?}",
        plan.inventory_changes
    );
    let out = apply_updating(&lab, &inventory, &plan_path);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let record = run_record(&out);
    assert!(
        host_result(&record, &node)
            .steps
            .iter()
            .any(|s| s.target == "/etc/dnsfix/resolv.conf"),
        "{record:#?}"
    );

    let out = dnsfix_in(&lab, &inventory, &["rollback", &record.run_id, "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "unused   {}: the inventory gives {node} kube_resolv_conf: /etc/dnsfix/resolv.conf, \
             a file this rollback removed, but Kubespray's \
             roles/kubernetes/node/vars/ubuntu-22.yml for the node's OS sets kube_resolv_conf: \
             /run/systemd/resolve/resolv.conf over group and host vars",
            host_vars.display()
        )),
        "{}",
        describe(&out)
    );
    assert!(!stdout.contains("kept     "), "{}", describe(&out));
    assert_eq!(std::fs::read_to_string(&host_vars).expect("read"), by_hand);
}

/// `dnsfix apply PLAN --update-inventory --format json`.
fn apply_updating(lab: &Lab, inventory: &Path, plan: &Path) -> Output {
    dnsfix_in(
        lab,
        inventory,
        &[
            "apply",
            path_str(plan),
            "--update-inventory",
            "--format",
            "json",
        ],
    )
}

/// No temp file of any run anywhere the plan writes.
fn temp_files(lab: &Lab, node: &str) -> String {
    lab.exec(
        node,
        "find /etc /var/lib/kubelet -name '.*.dnsfix-*' 2>/dev/null || true",
    )
    .trim()
    .to_string()
}

/// Ten applies of one plan start at once on one node: exactly one applies, every other one
/// is refused as locked or finds the plan done; one kubelet restart, no temp file, and
/// rolling back the run that applied restores the original bytes.
#[test]
fn ten_concurrent_applies_on_one_node_apply_once() {
    let lab = Lab::start(&["stub-symlink"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let (plan_path, plan) = save_plan(&lab, &lab.inventory());
    let (old, new) = planned_shas(&plan, &node, KUBELET_CONFIG);
    let children: Vec<Child> = (0..10)
        .map(|_| {
            dnsfix_cmd(
                &lab,
                &lab.inventory(),
                &["apply", path_str(&plan_path), "--format", "json"],
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("dnsfix starts")
        })
        .collect();
    let mut outcomes = Vec::new();
    let mut applied_run = None;
    for child in children {
        let out = child.wait_with_output().expect("wait");
        let record = run_record(&out);
        let result = host_result(&record, &node);
        if result.outcome == HostOutcome::Applied {
            applied_run = Some(record.run_id.clone());
        }
        if !matches!(
            result.outcome,
            HostOutcome::Applied | HostOutcome::Locked | HostOutcome::Unchanged
        ) {
            panic!("a concurrent apply ended {:?}: {result:#?}", result.outcome);
        }
        outcomes.push(result.outcome);
    }
    let applied = outcomes
        .iter()
        .filter(|o| **o == HostOutcome::Applied)
        .count();
    let locked = outcomes
        .iter()
        .filter(|o| **o == HostOutcome::Locked)
        .count();
    let unchanged = outcomes
        .iter()
        .filter(|o| **o == HostOutcome::Unchanged)
        .count();
    eprintln!("10 concurrent applies: {applied} applied, {locked} locked, {unchanged} unchanged");
    assert_eq!(applied, 1, "{outcomes:?}");
    assert_eq!(applied + locked + unchanged, 10, "{outcomes:?}");
    assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), new);
    assert_eq!(restarts(&lab, &node).len(), 1);
    assert_eq!(temp_files(&lab, &node), "");
    let run = applied_run.expect("the run that applied");
    let out = dnsfix(&lab, &["rollback", &run, "--yes"]);
    assert_eq!(out.status.code(), Some(0), "rollback\n{}", describe(&out));
    assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), old);
}

/// /var/lib/dnsfix is full at each bookkeeping write: the lock owner (no page left), the
/// note that the node's DNS pods are pending (one page: the owner takes it), the backup
/// copy (two pages), the manifest line (three pages). Each fails
/// the host with the file unchanged, nothing restarted, no temp file and a message naming
/// what could not be written; with space again the same plan applies and rolls back.
#[test]
fn a_full_state_directory_fails_at_each_bookkeeping_write_before_the_file_is_touched() {
    let lab = Lab::start(&["stub-symlink"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let (plan_path, plan) = save_plan(&lab, &lab.inventory());
    let (old, new) = planned_shas(&plan, &node, KUBELET_CONFIG);
    for (free_pages, says) in [
        (0, "owner"),
        (1, "cannot note that the DNS pods are still to be recreated"),
        (2, "cannot back up"),
        (3, "manifest"),
    ] {
        lab.exec(
            &node,
            &format!(
                "set -e; umount /var/lib/dnsfix 2>/dev/null || true; rm -rf /var/lib/dnsfix; \
                 mkdir -p /var/lib/dnsfix; mount -t tmpfs -o size=64k,mode=0700 tmpfs /var/lib/dnsfix; \
                 i=0; while dd if=/dev/zero of=/var/lib/dnsfix/fill.$i bs=4096 count=1 2>/dev/null; do i=$((i+1)); done; \
                 rm -f /var/lib/dnsfix/fill.$i; n=0; while [ $n -lt {free_pages} ]; do rm -f /var/lib/dnsfix/fill.$n; n=$((n+1)); done"
            ),
        );
        let out = dnsfix(&lab, &["apply", path_str(&plan_path), "--format", "json"]);
        assert_eq!(
            out.status.code(),
            Some(3),
            "{free_pages} free pages\n{}",
            describe(&out)
        );
        let record = run_record(&out);
        let result = host_result(&record, &node);
        let said = format!("{:?} {:?}", result.error, result.failures());
        assert!(
            said.contains(says),
            "{free_pages} free pages: {said}\n{result:#?}"
        );
        assert_eq!(
            node_sha(&lab, &node, KUBELET_CONFIG),
            old,
            "{free_pages} free pages"
        );
        assert_eq!(restarts(&lab, &node), Vec::<String>::new());
        assert_eq!(temp_files(&lab, &node), "");
        eprintln!("/var/lib/dnsfix full with {free_pages} free pages: {said}");
    }
    lab.exec(&node, "umount /var/lib/dnsfix");
    let out = dnsfix(&lab, &["apply", path_str(&plan_path)]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), new);
    let run = undo_hint(&lab, &out);
    let out = dnsfix(&lab, &["rollback", &run, "--yes"]);
    assert_eq!(out.status.code(), Some(0), "rollback\n{}", describe(&out));
    assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), old);
}

/// A host whose fix is blocked (Kubespray's resolver loops, and the inventory gives no
/// upstream_dns_servers to fix it with) still loops after apply: the run is not a success
/// (3), though there was nothing else to apply, so a post-reboot runbook does not go green.
#[test]
fn a_blocked_fix_is_not_a_successful_apply() {
    let lab =
        Lab::start(&["kubespray-loop"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    apply_is_blocked(&lab, &node, &["  blocked:\n"]);
    // With JSON, no run record (no run took place): the plan, which says what is blocked.
    let out = dnsfix(&lab, &["apply", "--yes", "--format", "json"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", describe(&out)));
    assert_eq!(doc["kind"], "dnsfix-plan", "{doc:#}");
    assert_eq!(doc["summary"]["hosts_blocked"], 1, "{doc:#}");
    // A saved plan with the same blocked host: the same.
    let (plan_path, plan) = save_plan(&lab, &lab.inventory());
    assert!(!host_plan(&plan, &node).blocked.is_empty(), "{plan:#?}");
    let out = dnsfix(&lab, &["apply", path_str(&plan_path)]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
}

/// Beside a host apply fixes, one whose fix is blocked: the run applies the first and fails
/// (3) for the second, whose result in the run record says what is blocked and why (before,
/// it was "nothing planned" like a healthy host, and nothing said why the run failed).
#[test]
fn a_run_with_a_blocked_host_says_what_is_blocked_there() {
    let lab = Lab::start(&["kubespray-loop", "stub-symlink"])
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let (looping, stub) = (lab.nodes[0].name.clone(), lab.nodes[1].name.clone());
    let out = dnsfix(&lab, &["apply", "--yes", "--format", "json"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let record = run_record(&out);
    assert_eq!(host_result(&record, &stub).outcome, HostOutcome::Applied);
    assert!(host_result(&record, &stub).blocked.is_empty());
    let blocked = host_result(&record, &looping);
    assert_eq!(blocked.outcome, HostOutcome::NothingPlanned);
    assert!(
        blocked.blocked.iter().any(|b| b
            .starts_with("kubelet-resolvconf: No real upstream DNS server is known for this node")
            && b.ends_with("(fixes DNS-CLUSTER-SELF-FORWARD, DNS-POD-LOOP)")),
        "{blocked:#?}"
    );
    assert_eq!(restarts(&lab, &looping), Vec::<String>::new());
    // Its rollback has nothing to do there, and says so in one line with the others.
    let out = dnsfix(&lab, &["rollback", &record.run_id, "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("nothing to roll back: {looping}"))
            && !text.contains(&format!("== {looping}"))
            && !text.contains("BLOCKED"),
        "{}",
        describe(&out)
    );
}

/// `apply --yes` on `lab` is blocked: no success (3), its output says each of `says` and
/// "nothing to apply", and no unit on `node` was restarted.
fn apply_is_blocked(lab: &Lab, node: &str, says: &[&str]) {
    let out = dnsfix(lab, &["apply", "--yes"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for said in says.iter().chain(&["nothing to apply"]) {
        assert!(stdout.contains(said), "{said:?}\n{}", describe(&out));
    }
    assert_eq!(restarts(lab, node), Vec::<String>::new());
}

/// Lab scenario `scenario`'s copies of `files` are byte for byte those of the upstream
/// fixture `fixture`, whose README names their sources.
fn scenario_files_are_the_fixtures(scenario: &str, fixture: &str, files: &[&str]) {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    for file in files {
        let read = |dir: &str| {
            std::fs::read(base.join(dir).join(file)).unwrap_or_else(|e| panic!("{dir}/{file}: {e}"))
        };
        assert_eq!(
            read(&format!("lab/scenarios/{scenario}/root")),
            read(&format!("fixtures/rules/_upstream/{fixture}/root")),
            "{file}"
        );
    }
}

/// A k0s worker whose kubelet k0s hands a loopback resolver: dnsfix reads the kubelet k0s
/// runs (no kubelet unit; the config k0s writes under /run/k0s), and its fix is blocked,
/// with where the setting belongs: k0s writes that config anew at every k0s start, so an
/// edit there would be undone by the restart meant to apply it. Nothing is written or
/// restarted, and apply is no success (3). br_netfilter and the sysctls, which k0s sets at
/// every worker start and no file on the node persists, are not reported as reverting at
/// the next reboot.
#[test]
fn a_k0s_node_is_diagnosed_and_its_kubelet_config_left_to_k0s() {
    // The scenario's node files are the fixture's, whose README names their sources.
    scenario_files_are_the_fixtures(
        "k0s",
        "k0s-1.34-rhel9-nm-dnsmasq",
        &[
            "etc/resolv.conf",
            "etc/cni/net.d/10-kuberouter.conflist",
            "run/k0s/kubelet/config.yaml",
            "run/NetworkManager/no-stub-resolv.conf",
        ],
    );
    let lab = Lab::start(&["k0s"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let config = "/run/k0s/kubelet/config.yaml";
    let before = node_sha(&lab, &node, config);
    let out = dnsfix(&lab, &["facts", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let facts: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", describe(&out)));
    let host = &facts["hosts"][0]["facts"];
    assert_eq!(host["flavour"]["kind"], "k0s", "{facts:#}");
    assert_eq!(host["kubelet"]["config_path"], config, "{facts:#}");
    assert_eq!(host["services"]["kubelet_unit"], "k0sworker", "{facts:#}");
    let out = dnsfix(&lab, &["check"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("DNS-KUBELET-LOOPBACK")
            && stdout.contains(config)
            && stdout.contains("resolvConf: /etc/resolv.conf")
            && !stdout.contains("DNS-BRIDGE-NF-NOT-PERSISTENT")
            && !stdout.contains("DNS-IP-FORWARD"),
        "{}",
        describe(&out)
    );
    apply_is_blocked(
        &lab,
        &node,
        &[
            &format!("kubelet-resolvconf: k0s writes {config} anew at every k0s start"),
            "after writing /etc/dnsfix/resolv.conf with only real upstream servers (192.0.2.53, 198.51.100.53, from /run/NetworkManager/no-stub-resolv.conf)",
        ],
    );
    assert_eq!(node_sha(&lab, &node, config), before);
    assert_eq!(node_sha(&lab, &node, "/etc/dnsfix/resolv.conf"), "absent");
}

/// A k0s worker whose k0s runs no kubelet, as after a reboot: dnsfix reads what k0s's next
/// start hands the kubelet, from k0s's unit (its `--kubelet-extra-args`, a space written
/// `\x20`, name a resolv.conf that was never written; the gather follows it there) and the
/// worker profile k0s keeps. The missing file is critical, at the unit's `ExecStart=`;
/// forwarding and bridge netfilter, off until k0s starts, are warnings. The fix is
/// blocked: the flag belongs to k0s's service, which dnsfix does not rewrite. Nothing is
/// written or restarted.
#[test]
fn a_stopped_k0s_is_read_for_its_next_start_and_left_to_k0s() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let read = |p: &str| std::fs::read(base.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
    assert_eq!(
        read("lab/scenarios/k0s-stopped/root/var/lib/k0s/worker-profile.yaml"),
        read(
            "fixtures/rules/_upstream/k0s-1.34-ubuntu2204-worker-after-reboot/root/srv/k0s/worker-profile.yaml"
        ),
    );
    for file in ["etc/resolv.conf", "etc/cni/net.d/10-kuberouter.conflist"] {
        assert_eq!(
            read(&format!("lab/scenarios/k0s-stopped/root/{file}")),
            read(&format!("lab/scenarios/k0s/root/{file}")),
            "{file}"
        );
    }
    let lab = Lab::start(&["k0s-stopped"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let unit = "/etc/systemd/system/k0sworker.service";
    let out = dnsfix(&lab, &["facts", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let facts: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", describe(&out)));
    let host = &facts["hosts"][0]["facts"];
    assert_eq!(host["flavour"]["kind"], "k0s", "{facts:#}");
    assert_eq!(host["services"]["kubelet_unit"], "k0sworker", "{facts:#}");
    assert_eq!(host["kubelet"]["pid"], Value::Null, "{facts:#}");
    let resolv = &host["kubelet"]["resolv_conf"]["value"];
    assert_eq!(resolv["value"], "/etc/k0s/resolv.conf", "{facts:#}");
    // The gather followed the extra args there: the file is missing, not unknown.
    assert_eq!(
        host["kubelet"]["pod_resolv_conf"]["state"], "missing",
        "{facts:#}"
    );
    assert_eq!(resolv["source"]["path"], unit, "{facts:#}");
    assert_eq!(
        resolv["source"]["detail"], "--kubelet-extra-args",
        "{facts:#}"
    );
    let dns = &host["kubelet"]["cluster_dns"]["value"];
    assert_eq!(dns["value"], serde_json::json!(["10.96.0.10"]), "{facts:#}");
    assert_eq!(
        dns["source"]["path"], "/var/lib/k0s/worker-profile.yaml",
        "{facts:#}"
    );
    let out = dnsfix(&lab, &["check", "--format", "json"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", describe(&out)));
    let findings = report["hosts"][0]["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("no findings: {report:#}"));
    let severity = |id: &str| {
        findings
            .iter()
            .find(|f| f["id"] == id && f["status"] == "failed")
            .map(|f| f["severity"].as_str().unwrap_or_default().to_owned())
    };
    assert_eq!(
        severity("DNS-KUBELET-RESOLVCONF-MISSING").as_deref(),
        Some("critical"),
        "{report:#}"
    );
    assert_eq!(
        severity("DNS-IP-FORWARD").as_deref(),
        Some("warning"),
        "{report:#}"
    );
    assert_eq!(
        severity("DNS-BRIDGE-NF-OFF").as_deref(),
        Some("warning"),
        "{report:#}"
    );
    let out = dnsfix(&lab, &["check"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("{unit}:12 --resolv-conf=/etc/k0s/resolv.conf")),
        "{}",
        describe(&out)
    );
    apply_is_blocked(
        &lab,
        &node,
        &[
            "kubelet-resolvconf: kubelet takes --resolv-conf=/etc/k0s/resolv.conf from its command line, where k0s puts its service's --kubelet-extra-args",
        ],
    );
    assert_eq!(node_sha(&lab, &node, "/etc/dnsfix/resolv.conf"), "absent");
    assert_eq!(
        node_sha(&lab, &node, "/etc/sysctl.d/99-dnsfix.conf"),
        "absent"
    );
}

/// A MicroK8s worker joined from a control plane whose kubelet arguments name
/// systemd-resolved's file, which this node lacks: dnsfix reads the kubelet's flags from
/// the arguments file the running kubelite names, reports the missing file at its line,
/// sets `--resolv-conf` there (the rest of the file byte for byte), restarts
/// `snap.microk8s.daemon-kubelite`, and a second plan has nothing left to do. br_netfilter
/// and the sysctls, which MicroK8s's wrapper sets at every start, are not reported as
/// reverting at the next reboot.
#[test]
fn a_microk8s_node_gets_its_resolv_conf_in_the_kubelite_arguments_file() {
    // The scenario's node files are the fixture's, whose README names their sources.
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let args = "/var/snap/microk8s/7964/args/kubelet";
    scenario_files_are_the_fixtures(
        "microk8s",
        "microk8s-1.32-debian12-joined-worker",
        &[
            &args[1..],
            "var/snap/microk8s/7964/args/cni-network/cni.yaml",
        ],
    );
    let lab = Lab::start(&["microk8s"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let before = lab.exec(&node, &format!("cat {args}"));

    // Stopped (no kubelite, its unit failed): the revision's file by its real path, never
    // through the `current` link, and kubelite's unit to restart.
    lab.exec(
        &node,
        "pkill -x kubelite; systemctl __lab_declare snap.microk8s.daemon-kubelite failed enabled",
    );
    let out = dnsfix(&lab, &["plan"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("~ {args}: --resolv-conf=/etc/dnsfix/resolv.conf"))
            && stdout.contains("restart snap.microk8s.daemon-kubelite")
            && !stdout.contains("/current/"),
        "{}",
        describe(&out)
    );
    // Started again as the scenario starts it (the node does not see this checkout).
    let setup =
        std::fs::read_to_string(base.join("lab/scenarios/microk8s/setup.sh")).expect("setup.sh");
    lab.exec(
        &node,
        &format!(
            "bash -eu <<'SETUP'\n{setup}\nSETUP\n\
             systemctl __lab_declare snap.microk8s.daemon-kubelite active enabled"
        ),
    );
    let out = dnsfix(&lab, &["facts", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let facts: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", describe(&out)));
    let host = &facts["hosts"][0]["facts"];
    assert_eq!(host["flavour"]["kind"], "microk8s", "{facts:#}");
    assert_eq!(host["kubelet"]["args_file"], args, "{facts:#}");
    assert_eq!(
        host["services"]["kubelet_unit"], "snap.microk8s.daemon-kubelite",
        "{facts:#}"
    );
    let out = dnsfix(&lab, &["check"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("DNS-KUBELET-RESOLVCONF-MISSING")
            && stdout.contains(&format!(
                "{args}:1 --resolv-conf=/run/systemd/resolve/resolv.conf"
            ))
            && !stdout.contains("DNS-BRIDGE-NF-NOT-PERSISTENT")
            && !stdout.contains("DNS-IP-FORWARD"),
        "{}",
        describe(&out)
    );
    let out = dnsfix(&lab, &["apply", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let after = lab.exec(&node, &format!("cat {args}"));
    assert_eq!(
        after,
        before.replacen(
            "--resolv-conf=/run/systemd/resolve/resolv.conf\n",
            "--resolv-conf=/etc/dnsfix/resolv.conf\n",
            1
        )
    );
    let written = lab.exec(&node, "cat /etc/dnsfix/resolv.conf");
    assert!(
        written.contains("nameserver 192.0.2.53\nnameserver 198.51.100.53\n"),
        "{written}"
    );
    let calls = restarts(&lab, &node);
    assert!(
        calls.len() == 1 && calls[0].ends_with("restart snap.microk8s.daemon-kubelite"),
        "{calls:?}"
    );
    // Converged: nothing left to fix or to change.
    let out = dnsfix(&lab, &["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let out = dnsfix(&lab, &["plan"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("no changes on 1 host"),
        "{}",
        describe(&out)
    );
}

/// The plan was made with /etc/dnsfix absent; then /etc/dnsfix became a symlink to
/// /etc/cron.d. Apply refuses the host as stale and writes nothing through the link.
#[test]
fn a_parent_swapped_for_a_symlink_is_stale_and_never_written_through() {
    let lab =
        Lab::start(&["kubespray-loop"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let inventory = kubespray_inventory(&lab);
    let (plan_path, plan) = save_plan(&lab, &inventory);
    let writes_dnsfix = host_plan(&plan, &node)
        .changes
        .iter()
        .any(|c| matches!(c, Change::WriteFile { path, .. } if path == "/etc/dnsfix/resolv.conf"));
    assert!(writes_dnsfix, "the plan writes no /etc/dnsfix/resolv.conf");
    lab.exec(
        &node,
        "rm -rf /etc/dnsfix && mkdir -p /etc/cron.d && ln -s /etc/cron.d /etc/dnsfix",
    );
    let out = dnsfix_in(
        &lab,
        &inventory,
        &["apply", path_str(&plan_path), "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(4), "{}", describe(&out));
    let record = run_record(&out);
    let result = host_result(&record, &node);
    assert_eq!(result.outcome, HostOutcome::Stale, "{result:#?}");
    assert_eq!(node_sha(&lab, &node, "/etc/cron.d/resolv.conf"), "absent");
    assert_eq!(restarts(&lab, &node), Vec::<String>::new());
    assert_eq!(temp_files(&lab, &node), "");
    eprintln!("symlinked parent: {:?}", result.stale);
}

/// The node's host key changed between plan and apply: both transports refuse to connect,
/// nothing is written, known_hosts is left as it was.
#[test]
fn a_host_key_changed_between_plan_and_apply_is_refused() {
    let lab = Lab::start(&["stub-symlink"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let (plan_path, plan) = save_plan(&lab, &lab.inventory());
    let (old, _) = planned_shas(&plan, &node, KUBELET_CONFIG);
    let known = std::fs::read_to_string(lab.known_hosts()).expect("known_hosts");
    lab.rekey(&node);
    for backend in ["openssh", "russh"] {
        let out = dnsfix(
            &lab,
            &[
                "apply",
                path_str(&plan_path),
                "--format",
                "json",
                "--ssh-backend",
                backend,
                "--accept-new-host-keys",
            ],
        );
        assert_eq!(out.status.code(), Some(3), "{backend}\n{}", describe(&out));
        let text = describe(&out);
        assert!(text.contains("CHANGED"), "{backend}: {text}");
        assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), old);
        assert_eq!(
            std::fs::read_to_string(lab.known_hosts()).expect("known_hosts"),
            known
        );
    }
}

/// The same with the default settings, as a user runs them: `plan` leaves its OpenSSH
/// master for the next command (`--ssh-persist 60`), the node's host key changes, and
/// `apply` with the very same flags still checks the key: it connects afresh rather than
/// through the master the plan left, and refuses the host.
#[test]
fn apply_checks_the_host_key_again_even_with_the_plans_master_alive() {
    let lab = Lab::start(&["stub-symlink"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let inventory = lab.inventory();
    let run = |args: &[&str]| {
        Dnsfix::new(args)
            .lab(&lab, &inventory)
            .args(["--connect-timeout", "5", "--ssh-persist", "60"])
            .env("DNSFIX_STATE_DIR", lab.dir.join("state"))
            .stdin(std::process::Stdio::null())
            .output()
    };
    let plan_path = lab.dir.join("persist-plan.json");
    let out = run(&["plan", "-o", path_str(&plan_path)]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let before = node_sha(&lab, &node, KUBELET_CONFIG);
    lab.rekey(&node);
    // A read may go through the master the plan left (that is what it is for)...
    let facts = run(&["facts", "--format", "json"]);
    assert_eq!(facts.status.code(), Some(0), "{}", describe(&facts));
    // ...a write may not.
    let out = run(&["apply", path_str(&plan_path), "--yes", "--format", "json"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    assert!(describe(&out).contains("CHANGED"), "{}", describe(&out));
    assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), before);
}

/// A reboot between plan and apply (a new boot id, the live sysctls reset, the kubelet
/// restarted): the plan is refused as stale, naming the reboot; a new plan applies.
#[test]
fn a_reboot_between_plan_and_apply_makes_the_plan_stale() {
    let lab = Lab::start(&["brnf-off"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let (plan_path, _) = save_plan(&lab, &lab.inventory());
    // The node's own boot id (its mount namespace only) and what a boot resets.
    lab.exec(
        &node,
        "cat /proc/sys/kernel/random/uuid > /run/boot_id && \
         mount --bind /run/boot_id /proc/sys/kernel/random/boot_id && \
         LAB_SYSTEMCTL_NOLOG=1 systemctl restart kubelet",
    );
    let out = dnsfix(&lab, &["apply", path_str(&plan_path), "--format", "json"]);
    assert_eq!(out.status.code(), Some(4), "{}", describe(&out));
    let record = run_record(&out);
    let result = host_result(&record, &node);
    assert_eq!(result.outcome, HostOutcome::Stale, "{result:#?}");
    assert!(
        result
            .stale
            .iter()
            .any(|s| s.contains("node rebooted since the plan")),
        "{result:#?}"
    );
    assert!(result.steps.is_empty(), "{result:#?}");
    assert_eq!(temp_files(&lab, &node), "");
    let (fresh, _) = save_plan(&lab, &lab.inventory());
    let out = dnsfix(&lab, &["apply", path_str(&fresh)]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
}

/// The nodes' DNS pods cannot be recreated (no admin kubeconfig on the control plane at
/// apply time). Apply fails the hosts and leaves a note on each node, so that a re-run,
/// which finds the changes made, recreates the pods anyway. Where that note cannot be
/// written (its directory is a file), the error says so and names the pods to recreate by
/// hand; a re-run recreates them all the same, by the pods-pending note the apply script
/// wrote before the kubelet's restart.
#[test]
fn pods_that_could_not_be_recreated_are_recreated_by_a_rerun_or_left_to_the_user() {
    let lab = Lab::start(&["stub-symlink", "stub-symlink"])
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let control_plane = lab.nodes[0].name.clone();
    let (noted, unnoted) = (lab.nodes[0].name.clone(), lab.nodes[1].name.clone());
    let (plan_path, plan) = save_plan(&lab, &lab.inventory());
    for node in [&noted, &unnoted] {
        let host = plan
            .hosts
            .iter()
            .find(|h| h.host == **node)
            .expect("planned");
        assert!(
            !host.cluster.is_empty(),
            "no pod recreation planned: {host:#?}"
        );
    }
    lab.exec(
        &control_plane,
        "mv /etc/kubernetes/admin.conf /etc/kubernetes/admin.conf.away",
    );
    lab.exec(
        &unnoted,
        "mkdir -p /var/lib/dnsfix && : > /var/lib/dnsfix/pods-failed",
    );
    let out = dnsfix(
        &lab,
        &[
            "apply",
            path_str(&plan_path),
            "--format",
            "json",
            "--max-fail-percentage",
            "100",
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let record = run_record(&out);
    let error = |node: &str| host_result(&record, node).error.clone().unwrap_or_default();
    assert!(
        error(&unnoted).contains("could not be written")
            && error(&unnoted).contains("recreate this node's DNS pods by hand"),
        "{}",
        error(&unnoted)
    );
    assert!(
        !error(&noted).is_empty() && !error(&noted).contains("by hand"),
        "{}",
        error(&noted)
    );
    let note = "ls /var/lib/dnsfix/pods-failed 2>/dev/null";
    assert_ne!(lab.exec(&noted, note).trim(), "", "no note on {noted}");

    lab.exec(
        &control_plane,
        "mv /etc/kubernetes/admin.conf.away /etc/kubernetes/admin.conf",
    );
    let out = dnsfix(&lab, &["apply", path_str(&plan_path), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let record = run_record(&out);
    let noted_result = host_result(&record, &noted);
    assert!(pods_recreated(noted_result), "{noted_result:#?}");
    assert_eq!(
        lab.exec(&noted, note).trim(),
        "",
        "the note is left on {noted}"
    );
    // Without its pods-failed note the other node's re-run still finds the pods-pending
    // note the apply script wrote before the kubelet's restart, of a run that is gone:
    // its pods are recreated too. (Before, they stayed: `unchanged`, no pods.)
    let unnoted_result = host_result(&record, &unnoted);
    assert!(pods_recreated(unnoted_result), "{unnoted_result:#?}");
    for node in [&noted, &unnoted] {
        let pending = lab.exec(node, "ls /var/lib/dnsfix/pods-pending 2>/dev/null");
        assert_eq!(
            pending.trim(),
            "",
            "the pods-pending note is left on {node}"
        );
    }
}

/// The same plan applied from another state directory (`sudo`'s root HOME, another
/// machine) while a run recreates the node's pods: that run is not known over there, so
/// its pods are left to it, and the host fails saying so (its pods may still be on the old
/// file). Before, such a run took them over while the first was deleting them.
fn assert_left_to_a_run_recorded_elsewhere(lab: &Lab, plan_path: &Path, node: &str) {
    let elsewhere = dnsfix_cmd(
        lab,
        &lab.inventory(),
        &["apply", path_str(plan_path), "--format", "json"],
    )
    .env("DNSFIX_STATE_DIR", lab.dir.join("state-elsewhere"))
    .output()
    .expect("dnsfix runs");
    assert_eq!(elsewhere.status.code(), Some(3), "{}", describe(&elsewhere));
    let record = run_record(&elsewhere);
    let other = host_result(&record, node);
    assert_eq!(other.outcome, HostOutcome::Failed, "{other:#?}");
    assert!(other.pods.is_empty(), "{other:#?}");
    assert!(
        other
            .error
            .as_deref()
            .is_some_and(|e| e.contains("which this state directory")),
        "{other:#?}"
    );
}

/// dnsfix killed (SIGKILL to its process group, as the OOM killer or a dropped link ends
/// it) while it deletes the node's DNS pod, after the kubelet's restart: the node is left
/// handled, its pod on the old file, nothing marked done, and the apply script's
/// pods-pending note naming the dead run (a run of the same plan while it was held left
/// the pod to it: `unchanged`). The same plan again recreates the pod (the
/// dead run's lock is free), verifies, clears the note and marks the plan done, with no
/// second kubelet restart; a third run has nothing to do. Before, the re-run found the
/// plan handled and stopped there, `unchanged` with no pod recreated, and so did every
/// later one.
#[test]
fn a_run_killed_while_it_recreates_the_pods_is_finished_by_a_rerun() {
    use std::os::unix::process::CommandExt;
    let lab = Lab::start(&["stub-symlink"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let (plan_path, plan) = save_plan(&lab, &lab.inventory());
    let digest = plan.hosts[0].facts.as_ref().expect("digest").sha256.clone();
    assert!(
        !plan.hosts[0].cluster.is_empty(),
        "no pod recreation planned"
    );
    // The delete is held (the node is its own control plane); killed, it deletes nothing.
    let real = lab.exec(&node, "command -v kubectl").trim().to_string();
    lab.exec(
        &node,
        &format!(
            "printf '#!/bin/sh\\ncase \"$*\" in *\" delete pod \"*) sleep 39 || exit 1 ;; esac\\nexec {real} \"$@\"\\n' \
             > /usr/local/sbin/kubectl && chmod +x /usr/local/sbin/kubectl"
        ),
    );
    let mut cmd = dnsfix_cmd(
        &lab,
        &lab.inventory(),
        &["apply", path_str(&plan_path), "--format", "json"],
    );
    cmd.process_group(0);
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("dnsfix starts");
    let group = child.id();
    let job = KillGroupOnDrop(Some(group));
    wait_until(
        &format!("{node}'s pod was never deleted"),
        Duration::from_secs(60),
        || {
            lab.exec_output(&node, "pgrep -x -f 'sleep 39'")
                .status
                .success()
        },
    );
    let state = |what: &str| {
        lab.exec(
            &node,
            &format!("cat /var/lib/dnsfix/{what}/{digest} 2>/dev/null || true"),
        )
        .trim()
        .to_string()
    };
    let held = state("pods-pending");
    assert!(
        !held.is_empty() && held == state("handled"),
        "no note of the run held at the delete: {held:?}"
    );
    // Meanwhile the same plan again: the pods are the running run's business.
    let record = apply_record(&lab, &lab.inventory(), &plan_path, 0);
    let concurrent = host_result(&record, &node);
    assert_eq!(
        concurrent.outcome,
        HostOutcome::Unchanged,
        "{concurrent:#?}"
    );
    assert!(concurrent.pods.is_empty(), "{concurrent:#?}");
    assert_left_to_a_run_recorded_elsewhere(&lab, &plan_path, &node);
    let sent = Command::new("kill")
        .args(["-KILL", "--", &format!("-{group}")])
        .status()
        .expect("kill runs");
    assert!(sent.success(), "SIGKILL to process group {group}");
    let killed = child.wait_with_output().expect("wait for dnsfix");
    job.disarm();
    lab.exec(
        &node,
        "rm -f /usr/local/sbin/kubectl; pkill -x -f 'sleep 39' || true",
    );
    assert_ne!(state("handled"), "", "not handled\n{}", describe(&killed));
    assert_eq!(state("done"), "", "marked done\n{}", describe(&killed));
    assert_eq!(
        state("pods-pending"),
        held,
        "the note is not the killed run's"
    );
    assert_eq!(restarts(&lab, &node).len(), 1);

    let record = apply_record(&lab, &lab.inventory(), &plan_path, 0);
    let result = host_result(&record, &node);
    assert_eq!(result.outcome, HostOutcome::Applied, "{result:#?}");
    assert!(pods_recreated(result), "{result:#?}");
    let verified = result.verified.as_ref().expect("verified");
    assert!(!verified.dns.is_empty(), "{result:#?}");
    assert!(
        result
            .steps
            .iter()
            .all(|s| s.outcome == StepOutcome::Already),
        "{result:#?}"
    );
    assert_eq!(
        restarts(&lab, &node).len(),
        1,
        "the kubelet restarted again"
    );
    assert_eq!(state("pods-pending"), "", "the note is left");
    assert_eq!(state("done"), record.run_id, "not marked done");

    let record = apply_record(&lab, &lab.inventory(), &plan_path, 0);
    let result = host_result(&record, &node);
    assert_eq!(result.outcome, HostOutcome::Unchanged, "{result:#?}");
    assert!(result.pods.is_empty(), "{result:#?}");
}

/// The last Ready CoreDNS replica is kept, and the rollout goes on: two nodes whose
/// CoreDNS pods loop, the first's made Ready after the plan (the lab's pod file edited), so
/// deleting it would leave the cluster no Ready CoreDNS. With `--max-fail-percentage 0`
/// (the default) the first node fails, its pod kept, and the second is still applied, its
/// pod recreated and Ready (exit 3); the same plan again recreates the first's, now that
/// another replica is Ready (exit 0). Before, the first node's failure stopped the
/// rollout, the second was `untouched`, and no replica could become Ready.
#[test]
fn the_last_ready_coredns_replica_is_kept_and_the_rollout_goes_on() {
    let lab = Lab::start(&["stub-symlink", "stub-symlink"])
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let (first, second) = (lab.nodes[0].name.clone(), lab.nodes[1].name.clone());
    let (plan_path, plan) = save_plan(&lab, &lab.inventory());
    assert_eq!(
        plan.hosts
            .iter()
            .map(|h| h.host.as_str())
            .collect::<Vec<_>>(),
        [first.as_str(), second.as_str()]
    );
    let pod_file = lab.dir.join("nodes").join(&first).join("dns-pod.json");
    let mut pod: Value =
        serde_json::from_slice(&std::fs::read(&pod_file).expect("pod")).expect("pod JSON");
    pod["status"]["containerStatuses"][0]["ready"] = true.into();
    pod["status"]["containerStatuses"][0]["state"] = serde_json::json!({"running": {}});
    std::fs::write(&pod_file, pod.to_string()).expect("pod made Ready");

    let out = dnsfix(&lab, &["apply", path_str(&plan_path), "--format", "json"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let record = run_record(&out);
    let kept = host_result(&record, &first);
    assert_eq!(kept.outcome, HostOutcome::Failed, "{kept:#?}");
    assert!(kept.pods_kept, "{kept:#?}");
    assert!(
        kept.pods.iter().any(|p| p.kept && !p.ok),
        "{:#?}",
        kept.pods
    );
    // The pod kept is Ready: the node's pod loop is not what is left.
    let remaining = kept.verified.as_ref().map(|v| v.remaining.clone());
    assert!(
        !remaining.iter().flatten().any(|id| id == "DNS-POD-LOOP"),
        "{kept:#?}"
    );
    let applied = host_result(&record, &second);
    assert_eq!(applied.outcome, HostOutcome::Applied, "{applied:#?}");
    assert!(pods_recreated(applied), "{applied:#?}");

    let out = dnsfix(&lab, &["apply", path_str(&plan_path), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let record = run_record(&out);
    let again = host_result(&record, &first);
    assert!(pods_recreated(again), "{again:#?}");
}

/// CoreDNS installed outside kube-system (the CoreDNS Helm chart with `helm install -n
/// coredns`): the lab's nodes' DNS pods are in `coredns` (DIR/nodes-namespace), behind a
/// Service there at the address kubeadm's kubelet-config gives as clusterDNS (10.96.0.10),
/// and kube-system has neither a DNS pod nor a DNS Service. The plan recreates the node's
/// pod in its namespace; apply lists it there by the Service's selector, deletes it there
/// (the lab's kubectl deletes a node's pod only in its namespace) and waits there for the
/// Ready replacement. Before, the plan only named `kubectl -n coredns delete pod` in a
/// note, and apply left the pod as it was. A CoreDNS pod put on the node after the plan,
/// in that namespace, is listed there again at apply time and recreated too.
#[test]
fn coredns_outside_kube_system_is_recreated_in_its_namespace() {
    let lab = Lab::start(&["stub-symlink"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let services = coredns_in_its_own_namespace(&lab);
    let (plan_path, plan) = save_plan(&lab, &lab.inventory());
    let host = plan.hosts.iter().find(|h| h.host == node).expect("planned");
    let pods: Vec<(String, Option<String>)> = host
        .cluster
        .iter()
        .flat_map(|dnsfix::plan::model::ClusterAction::RecreateDnsPods { pods, .. }| pods)
        .map(|p| (p.namespace().to_owned(), p.selector.clone()))
        .collect();
    assert_eq!(
        pods,
        [("coredns".to_owned(), Some("k8s-app=kube-dns".to_owned()))],
        "{host:#?}"
    );
    assert!(
        !host.notes.iter().any(|n| n.message.contains("delete pod")),
        "{host:#?}"
    );
    // The Service moved on since the plan (a new release selecting other labels): the plan
    // is stale, and refused before the node is touched, not after its kubelet restart.
    let moved = services.to_string().replace(
        r#""selector":{"k8s-app":"kube-dns"}"#,
        r#""selector":{"k8s-app":"coredns-v2"}"#,
    );
    assert_ne!(moved, services.to_string());
    std::fs::write(lab.dir.join("services.json"), &moved).expect("services");
    let before = node_sha(&lab, &node, KUBELET_CONFIG);
    let out = dnsfix(&lab, &["apply", path_str(&plan_path), "--format", "json"]);
    assert_eq!(out.status.code(), Some(4), "{}", describe(&out));
    let record = run_record(&out);
    let result = host_result(&record, &node);
    assert_eq!(result.outcome, HostOutcome::Stale, "{result:#?}");
    assert!(
        result.steps.is_empty() && result.handlers.is_empty() && result.pods.is_empty(),
        "{result:#?}"
    );
    assert!(
        result
            .error
            .as_deref()
            .is_some_and(|e| e.contains("the plan is stale")
                && e.contains("nothing on this node was touched")),
        "{result:#?}"
    );
    assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), before);
    // The Service as the plan found it: applied, the pod recreated in its namespace.
    std::fs::write(lab.dir.join("services.json"), services.to_string()).expect("services");
    // And a CoreDNS pod the Deployment put on the node after the plan, in the Service's
    // namespace: listed there again at apply time and recreated too, its replacement
    // (played here, as the Deployment's controller) on another node.
    let landed = landed_coredns_pod(&lab, &node);
    let controller = replace_once_gone(&lab, "landed.json", "coredns-6d4f8b7c9b-q8wzt");
    let out = dnsfix(&lab, &["apply", path_str(&plan_path), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(
        controller.join().expect("controller"),
        "{landed} not deleted"
    );
    let record = run_record(&out);
    let result = host_result(&record, &node);
    assert!(pods_recreated(result), "{result:#?}");
    assert!(
        result
            .pods
            .iter()
            .any(|p| p.shown() == format!("coredns/{landed}")
                && p.ok
                && p.replacement.as_deref() == Some("coredns-6d4f8b7c9b-q8wzt")),
        "{result:#?}"
    );
    assert!(
        result
            .pods
            .iter()
            .all(|p| p.namespace.as_deref() == Some("coredns")),
        "{result:#?}"
    );
}

/// A Ready CoreDNS pod of the Deployment behind the `coredns/dns-coredns` Service (its
/// selector `k8s-app=kube-dns`) on `node`, put into the lab's cluster (DIR/pods/landed.json)
/// after the plan was made: its name.
/// The lab's nodes' DNS pods in `coredns` (DIR/nodes-namespace), behind the Helm chart's
/// Service there at kubeadm's clusterDNS (10.96.0.10), as `helm install -n coredns` leaves
/// them; that Service's List.
fn coredns_in_its_own_namespace(lab: &Lab) -> Value {
    std::fs::write(lab.dir.join("nodes-namespace"), "coredns\n").expect("nodes-namespace");
    let services = serde_json::json!({"apiVersion": "v1", "kind": "List",
        "metadata": {"resourceVersion": ""},
        "items": [{"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "dns-coredns", "namespace": "coredns",
                "labels": {"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true"}},
            "spec": {"clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
                "ports": [{"name": "udp-53", "port": 53, "protocol": "UDP", "targetPort": 53}],
                "selector": {"k8s-app": "kube-dns"}, "type": "ClusterIP"}}]});
    std::fs::write(lab.dir.join("services.json"), services.to_string()).expect("services");
    services
}

fn landed_coredns_pod(lab: &Lab, node: &str) -> String {
    let own: Value = serde_json::from_slice(
        &std::fs::read(lab.dir.join("nodes").join(node).join("dns-pod.json")).expect("node pod"),
    )
    .expect("node pod JSON");
    let name = "coredns-6d4f8b7c9b-x2k9p";
    let mut pod = own.clone();
    pod["metadata"]["name"] = name.into();
    pod["metadata"]["namespace"] = "coredns".into();
    pod["status"]["containerStatuses"][0]["ready"] = true.into();
    pod["status"]["containerStatuses"][0]["restartCount"] = 0.into();
    pod["status"]["containerStatuses"][0]["state"] = serde_json::json!({"running": {}});
    let pods = lab.dir.join("pods");
    std::fs::create_dir_all(&pods).expect("pods dir");
    std::fs::write(pods.join("landed.json"), pod.to_string()).expect("landed pod");
    name.to_owned()
}

/// The controller of a test's own pod in the lab (DIR/pods/`file`, which the lab's kubectl
/// removes when it deletes it): once it is gone, a Ready replacement named `replacement`
/// on another node; true when that happened within 120 s.
fn replace_once_gone(lab: &Lab, file: &str, replacement: &str) -> std::thread::JoinHandle<bool> {
    let pods = lab.dir.join("pods");
    let gone = pods.join(file);
    let mut pod: Value =
        serde_json::from_slice(&std::fs::read(&gone).expect("pod")).expect("pod JSON");
    pod["metadata"]["name"] = replacement.into();
    pod["spec"]["nodeName"] = "node-elsewhere".into();
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            if !gone.exists() {
                std::fs::write(pods.join("replacement.json"), pod.to_string())
                    .expect("replacement");
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    })
}

/// The plan of a lab whose CoreDNS is in `coredns` (two nodes), saved as it is where
/// `landed` ran only the pods `planned` (as a plan's cluster action names them) when it
/// was made: its CoreDNS pod is the one the Deployment put there since. The plan's path,
/// and that pod's name.
fn coredns_landed_after_the_plan(lab: &Lab, landed: &str, planned: &Value) -> (PathBuf, String) {
    coredns_in_its_own_namespace(lab);
    let (plan_path, plan) = save_plan(lab, &lab.inventory());
    let pod_of = |node: &str| -> String {
        let host = host_plan(&plan, node);
        let dnsfix::plan::model::ClusterAction::RecreateDnsPods { pods, .. } = &host.cluster[0];
        assert_eq!(pods.len(), 1, "{host:#?}");
        assert_eq!(pods[0].namespace(), "coredns", "{host:#?}");
        pods[0].name.clone()
    };
    for node in &lab.nodes {
        pod_of(&node.name);
    }
    let later = pod_of(landed);
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&plan_path).expect("plan")).expect("json");
    let host = doc["hosts"]
        .as_array_mut()
        .expect("hosts")
        .iter_mut()
        .find(|h| h["host"] == landed)
        .expect("planned");
    host["cluster"][0]["pods"] = planned.clone();
    std::fs::write(
        &plan_path,
        serde_json::to_string_pretty(&doc).expect("json"),
    )
    .expect("write");
    (plan_path, later)
}

/// The same plan (CoreDNS in `coredns`, the landed node's pod put there after the plan),
/// applied with `--limit` to that node where the Services cannot be listed at the cluster
/// scope (a list that times out): the namespace, only the plan's other node's, is not
/// confirmed before any node is touched, so it is not listed there, and the node's own
/// pods go on. Its pods are listed (only read) to see what that left: the landed CoreDNS
/// pod is on the node and still runs with the old upstream, so the host fails (exit 3),
/// naming the delete to run by hand, and the pod is not deleted. Before, the namespace was
/// not looked at on the node and nothing said so: the host failed here only because the
/// lab's pod answers nothing until recreated (DNS from the node), and where the cluster's
/// other replicas answer, it exited 0, a runbook taking the node's DNS for fixed.
#[test]
fn coredns_left_out_where_the_cluster_did_not_confirm_it_fails_the_host() {
    let lab = Lab::start(&["stub-symlink", "stub-symlink"])
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let landed = lab.nodes[1].name.clone();
    let planned = serde_json::json!([
        {"name": "nodelocaldns-7h2kq", "app": "nodelocaldns", "state": "ready"}
    ]);
    let (plan_path, later) = coredns_landed_after_the_plan(&lab, &landed, &planned);
    std::fs::write(lab.dir.join("cluster-scope-times-out"), "").expect("write");
    let args = [
        "apply",
        path_str(&plan_path),
        "--format",
        "json",
        "--limit",
        landed.as_str(),
    ];
    let out = dnsfix(&lab, &args);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let record = run_record(&out);
    let result = host_result(&record, &landed);
    assert_eq!(result.outcome, HostOutcome::Failed, "{result:#?}");
    assert!(result.pods.is_empty(), "{result:#?}");
    let error = result.error.as_deref().unwrap_or_default();
    assert!(
        error.contains("CoreDNS in coredns (by k8s-app=kube-dns), which the plan recreates on other nodes, is not confirmed")
            && error.contains("could not be listed")
            && error.ends_with(&format!(
                "still run with the old upstream: recreate them by hand (kubectl -n coredns delete pod {later})"
            )),
        "{result:#?}"
    );
    let pod = std::fs::read_to_string(lab.dir.join("nodes").join(&landed).join("dns-pod.json"))
        .expect("pod");
    assert!(pod.contains(&later), "deleted: {pod}");
}

/// A node for which the plan recreates only kube-system's nodelocaldns pod, in a cluster
/// whose CoreDNS is outside kube-system (`coredns`, behind the cluster DNS Service there),
/// with a CoreDNS pod of that namespace on the node at apply time (the Deployment put it
/// there after the plan): apply lists `coredns` on that node too, by the selector the plan
/// confirmed for its other node, and recreates it. Before, only the namespaces of the
/// node's own planned pods were listed there, and the pod kept the old upstream servers.
/// With `--limit` to that node alone too: the namespace is the whole saved plan's, not
/// only the selected hosts' (before, `--limit` took it out with the other node). And where
/// the plan saw no DNS pod at all on the node (its action's pods none, as a plan now has
/// it there): listed and recreated all the same.
#[test]
fn coredns_of_another_nodes_namespace_that_landed_after_the_plan_is_recreated() {
    let nodelocaldns = serde_json::json!([
        {"name": "nodelocaldns-7h2kq", "app": "nodelocaldns", "state": "ready"}
    ]);
    for limit in [false, true] {
        another_nodes_namespace_is_listed(limit, &nodelocaldns);
    }
    another_nodes_namespace_is_listed(false, &serde_json::json!([]));
}

fn another_nodes_namespace_is_listed(limit: bool, planned: &Value) {
    let lab = Lab::start(&["stub-symlink", "stub-symlink"])
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let landed = lab.nodes[1].name.clone();
    let (plan_path, later) = coredns_landed_after_the_plan(&lab, &landed, planned);
    let mut args = vec!["apply", path_str(&plan_path), "--format", "json"];
    if limit {
        args.extend(["--limit", landed.as_str()]);
    }
    let out = dnsfix(&lab, &args);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let record = run_record(&out);
    let result = host_result(&record, &landed);
    assert!(
        result
            .pods
            .iter()
            .any(|p| p.shown() == format!("coredns/{later}") && p.ok),
        "limit {limit}, planned {planned}: {result:#?}"
    );
}

/// A node whose plan saw no DNS pod on it (its action's pods none) is looked at for one put
/// there since, before it waits for the one-node-at-a-time lock. Where the cluster cannot
/// be read then (no admin kubeconfig on the control plane at apply time), the host fails,
/// saying plainly that it cannot tell whether a pod was put there since and how to look.
/// Before, such a node listed under the lock, and its error was the generic "cannot
/// recreate the DNS pods".
#[test]
fn a_node_the_plan_saw_no_dns_pod_on_says_it_cannot_tell_where_the_cluster_is_unread() {
    let lab = Lab::start(&["stub-symlink"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let (plan_path, plan) = save_plan(&lab, &lab.inventory());
    assert!(!host_plan(&plan, &node).cluster.is_empty(), "{plan:#?}");
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&plan_path).expect("plan")).expect("json");
    let host = doc["hosts"]
        .as_array_mut()
        .expect("hosts")
        .iter_mut()
        .find(|h| h["host"] == node.as_str())
        .expect("planned");
    host["cluster"][0]["pods"] = serde_json::json!([]);
    std::fs::write(
        &plan_path,
        serde_json::to_string_pretty(&doc).expect("json"),
    )
    .expect("write");
    lab.exec(
        &node,
        "mv /etc/kubernetes/admin.conf /etc/kubernetes/admin.conf.away",
    );
    let out = dnsfix(&lab, &["apply", path_str(&plan_path), "--format", "json"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let record = run_record(&out);
    let error = host_result(&record, &node)
        .error
        .clone()
        .unwrap_or_default();
    assert!(
        error.contains(
            "cannot tell whether a CoreDNS or nodelocaldns pod was put on this node since the \
             plan (which saw none here): the cluster could not be read"
        ),
        "{error}"
    );
    assert!(
        error.contains(&format!(
            "kubectl get pods -A -o wide --field-selector spec.nodeName={}",
            node.to_lowercase()
        )),
        "{error}"
    );
}
