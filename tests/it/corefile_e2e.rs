//! End to end: the cluster's own change. A Kubespray cluster deployed before
//! `upstream_dns_servers` was set still forwards CoreDNS's and nodelocaldns's root zone to
//! /etc/resolv.conf (the lab's ConfigMaps are Kubespray's templates rendered with that
//! default); with the value set in the inventory:
//! - `plan` shows both Corefile diffs under `cluster`, with their reason;
//! - `apply` replaces the ConfigMaps through kubectl on the control-plane node (a
//!   compare-and-swap on the resourceVersion), records the old ones, and the crash-looping
//!   pod of a stub-loop node comes up on the reload: its cluster DNS answers again;
//! - a second apply changes nothing; `rollback` puts both Corefiles back byte for byte;
//! - another writer between the read and the replace (the API server's 409), a Corefile
//!   edited by hand after the plan, a rollback of a key changed since the run: each
//!   refused and the other change kept; `--limit` without the hosts that asked leaves the
//!   cluster alone.

use std::path::Path;
use std::process::Output;

use crate::common::dnsfix::{Dnsfix, describe};
use crate::common::lab::Lab;
use serde_json::Value;

fn dnsfix(lab: &Lab, inventory: &Path, args: &[&str]) -> Output {
    Dnsfix::new(args)
        .lab(lab, inventory)
        .args(["--connect-timeout", "10"])
        .output()
}

/// The cluster's ConfigMaps as the lab's kubectl keeps them.
fn configmaps(lab: &Lab) -> Value {
    let written = lab.dir.join("configmaps.json");
    let path = if written.exists() {
        written
    } else {
        lab.dir.join("lib/configmaps.json")
    };
    serde_json::from_slice(&std::fs::read(&path).expect("configmaps.json")).expect("JSON")
}

fn configmap<'a>(all: &'a Value, name: &str) -> &'a Value {
    all["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no ConfigMap {name}"))
}

fn corefile(all: &Value, name: &str) -> String {
    configmap(all, name)["data"]["Corefile"]
        .as_str()
        .expect("Corefile")
        .to_owned()
}

/// The outcome of each of the run's ConfigMap updates, by ConfigMap.
fn updates(record: &Value) -> Vec<(String, String)> {
    record["cluster_updates"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|u| {
                    (
                        u["configmap"].as_str().unwrap_or_default().to_owned(),
                        u["outcome"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn pair(a: &str, b: &str) -> (String, String) {
    (a.to_owned(), b.to_owned())
}

#[test]
fn corefile_forward_is_planned_applied_verified_and_rolled_back() {
    // The healthy node is the control plane: its plan has the cluster change alone.
    let lab = Lab::start(&["healthy", "stub-symlink"])
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let inv = lab.kubespray_inventory(
        "upstream_dns_servers:\n  - 192.0.2.53\n  - 198.51.100.53\nenable_nodelocaldns: true\n",
    );
    let original = configmaps(&lab);
    let plan_file = lab.dir.join("corefile-plan.json");
    plan_shows_both_corefile_diffs(&lab, &inv, &plan_file);
    let run_id = apply_writes_them_and_the_loop_ends(&lab, &inv, &plan_file, &original);
    rollback_puts_them_back(&lab, &inv, &plan_file, &original, &run_id);
    races_and_hand_edits_are_never_overwritten(&lab, &inv, &plan_file);
}

fn plan_shows_both_corefile_diffs(lab: &Lab, inv: &Path, plan_file: &Path) {
    let cp = lab.node("healthy").name.clone();
    let stub = lab.node("stub-symlink").name.clone();
    let out = dnsfix(
        lab,
        inv,
        &["plan", "-l", &cp, "-o", plan_file.to_str().expect("utf-8")],
    );
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        format!("== cluster (kubectl on {cp}, before any host)"),
        "  ~ kube-system/configmap/coredns/Corefile: forward . /etc/resolv.conf → 192.0.2.53 \
         198.51.100.53 (the .:53 block, line 13)"
            .to_owned(),
        "      because: corefile-upstream".to_owned(),
        "      -    forward . /etc/resolv.conf {".to_owned(),
        "      +    forward . 192.0.2.53 198.51.100.53 {".to_owned(),
        "  ~ kube-system/configmap/nodelocaldns/Corefile: forward . /etc/resolv.conf → \
         192.0.2.53 198.51.100.53"
            .to_owned(),
        "      +    forward . 192.0.2.53 198.51.100.53\n".to_owned(),
        "; 2 ConfigMap keys in the cluster".to_owned(),
    ] {
        assert!(text.contains(&want), "no {want:?} in\n{}", describe(&out));
    }
    // The cluster forwards, as deployed, to the pod's resolv.conf: the stub node's pod
    // crash-loops on its kubelet's 127.0.0.53.
    let state = lab.exec(&stub, "cat /run/lab-dns/cluster-dns.state");
    assert!(state.starts_with("CrashLoopBackOff"), "{state}");
}

/// apply: both written, the old objects in the run record; returns the run id.
fn apply_writes_them_and_the_loop_ends(
    lab: &Lab,
    inv: &Path,
    plan_file: &Path,
    original: &Value,
) -> String {
    let cp = lab.node("healthy").name.clone();
    let stub = lab.node("stub-symlink").name.clone();
    let (record, code) = apply_json(lab, inv, plan_file, &[]);
    assert_eq!(code, Some(0), "{record:#}");
    assert_eq!(
        updates(&record),
        [pair("coredns", "written"), pair("nodelocaldns", "written")],
        "{record:#}"
    );
    let coredns = &record["cluster_updates"][0];
    assert_eq!(coredns["via"], cp.as_str());
    assert_eq!(coredns["old"]["metadata"]["resourceVersion"], "1201");
    assert_eq!(coredns["resource_version"], "1202");
    assert_eq!(coredns["reasons"][0]["playbook"], "corefile-upstream");
    assert_eq!(
        coredns["reasons"][0]["fixes"][0],
        "DNS-COREFILE-UPSTREAM-DRIFT"
    );
    assert_eq!(coredns["before"], corefile(original, "coredns").as_str());
    let now = configmaps(lab);
    let written = corefile(&now, "coredns");
    assert_eq!(
        written,
        corefile(original, "coredns").replace(
            "forward . /etc/resolv.conf {",
            "forward . 192.0.2.53 198.51.100.53 {"
        )
    );
    // A replace keeps what it did not change: the labels went back as they were read.
    assert_eq!(
        configmap(&now, "coredns")["metadata"]["labels"],
        configmap(original, "coredns")["metadata"]["labels"]
    );
    // The reload: the stub node's pod now forwards where the Corefile says and runs,
    // though its kubelet still hands out 127.0.0.53.
    let mut state = String::new();
    for _ in 0..50 {
        state = lab.exec(&stub, "cat /run/lab-dns/cluster-dns.state");
        if state.starts_with("Running") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert!(
        state.starts_with("Running") && state.contains("the coredns Corefile"),
        "{state}"
    );
    let out = dnsfix(
        lab,
        inv,
        &[
            "verify",
            "-l",
            &stub,
            "--format",
            "json",
            "--dns-timeout",
            "10",
        ],
    );
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", describe(&out)));
    let probes = doc["hosts"][0]["probes"]
        .as_array()
        .expect("probes")
        .clone();
    assert!(
        probes
            .iter()
            .any(|p| p["path"] == "cluster_dns" && p["ok"] == true)
            && probes
                .iter()
                .any(|p| p["path"] == "upstream" && p["ok"] == false),
        "the cluster answers, the kubelet's own file still does not: {doc:#}"
    );
    record["run_id"].as_str().expect("run_id").to_owned()
}

/// Again: nothing to do; then rollback puts both Corefiles back byte for byte.
fn rollback_puts_them_back(
    lab: &Lab,
    inv: &Path,
    plan_file: &Path,
    original: &Value,
    run_id: &str,
) {
    let (again, code) = apply_json(lab, inv, plan_file, &[]);
    assert_eq!(code, Some(0), "{again:#}");
    assert_eq!(
        updates(&again),
        [pair("coredns", "already"), pair("nodelocaldns", "already")]
    );

    let out = dnsfix(lab, inv, &["rollback", run_id, "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("written  kube-system/configmap/coredns/Corefile: restored"),
        "{}",
        describe(&out)
    );
    let back = configmaps(lab);
    for name in ["coredns", "nodelocaldns"] {
        assert_eq!(corefile(&back, name), corefile(original, name), "{name}");
    }
}

/// The lab's ConfigMaps with `name`'s Corefile edited by hand (a new resourceVersion);
/// the edited text.
fn edit_by_hand(lab: &Lab, name: &str) -> String {
    let now = configmaps(lab);
    let edited = format!("# edited by hand\n{}", corefile(&now, name));
    let mut by_hand = now.clone();
    for item in by_hand["items"].as_array_mut().expect("items") {
        if item["metadata"]["name"] == name {
            item["data"]["Corefile"] = Value::String(edited.clone());
            item["metadata"]["resourceVersion"] = Value::String("1300".into());
        }
    }
    std::fs::write(
        lab.dir.join("configmaps.json"),
        serde_json::to_vec(&by_hand).expect("JSON"),
    )
    .expect("write configmaps.json");
    edited
}

fn apply_json(lab: &Lab, inv: &Path, plan_file: &Path, extra: &[&str]) -> (Value, Option<i32>) {
    let plan = plan_file.to_str().expect("utf-8");
    let out = dnsfix(
        lab,
        inv,
        &[&["apply", plan, "--yes", "--format", "json"], extra].concat(),
    );
    let record = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not a run record ({e}):\n{}", describe(&out)));
    (record, out.status.code())
}

/// Another writer between dnsfix's read and its replace: the API server's 409 is stale,
/// the ConfigMap keeps the other writer's version. A rollback of a key changed since the
/// run keeps the change and fails (3). A Corefile edited by hand after the plan is
/// refused and kept. A `--limit` without the hosts that asked leaves the cluster alone.
fn races_and_hand_edits_are_never_overwritten(lab: &Lab, inv: &Path, plan_file: &Path) {
    let stub = lab.node("stub-symlink").name.clone();
    let before = configmaps(lab);
    let (record, code) = apply_json(lab, inv, plan_file, &["--limit", &stub]);
    assert_eq!(code, Some(0), "{record:#}");
    assert!(updates(&record).is_empty(), "{record:#}");
    assert_eq!(configmaps(lab), before);

    std::fs::write(lab.dir.join("replace-races"), "").expect("replace-races");
    let (raced, code) = apply_json(lab, inv, plan_file, &[]);
    assert_eq!(code, Some(4), "{raced:#}");
    assert_eq!(
        updates(&raced),
        [pair("coredns", "stale"), pair("nodelocaldns", "written")],
        "{raced:#}"
    );
    assert!(
        raced["cluster_updates"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("changed while it was being written")
                && m.contains("the object has been modified")),
        "{raced:#}"
    );
    assert_eq!(
        corefile(&configmaps(lab), "coredns"),
        corefile(&before, "coredns")
    );

    let edited = edit_by_hand(lab, "nodelocaldns");
    let run_id = raced["run_id"].as_str().expect("run_id");
    let out = dnsfix(lab, inv, &["rollback", run_id, "--yes"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(
            "stale    kube-system/configmap/nodelocaldns/Corefile: nodelocaldns's Corefile \
             changed since it was read (resourceVersion now 1300): left as it is, not rolled back"
        ),
        "{}",
        describe(&out)
    );
    assert_eq!(corefile(&configmaps(lab), "nodelocaldns"), edited);

    let edited = edit_by_hand(lab, "coredns");
    let (stale, code) = apply_json(lab, inv, plan_file, &[]);
    assert_eq!(code, Some(4), "{stale:#}");
    assert_eq!(
        updates(&stale),
        [pair("coredns", "stale"), pair("nodelocaldns", "stale")],
        "{stale:#}"
    );
    assert!(
        stale["cluster_updates"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("changed since it was read") && m.contains("1300")),
        "{stale:#}"
    );
    assert_eq!(corefile(&configmaps(lab), "coredns"), edited);
}
