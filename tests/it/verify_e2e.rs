//! End to end: `dnsfix verify` against the real-sshd lab, whose nodes run real DNS servers
//! (dnsmasq): the site's upstream resolvers at 192.0.2.53 and 198.51.100.53, and a cluster
//! DNS "pod" on the nodelocaldns and clusterDNS addresses that forwards to the kubelet's
//! resolv.conf as it was when the pod started, and crash-loops when that file points back
//! at it (tests/lab/node-init.sh).
//!
//! - a stub-loop node fails (a loopback upstream; cluster DNS down), a healthy Kubespray node
//!   and a kubeadm node pass, over both SSH backends, as text, JSON and JUnit;
//! - the plan shows the cluster action; `apply` fixes the kubelet's file, recreates the
//!   node's DNS pod through kubectl on the control-plane node, and every path passes;
//! - without cluster access the plan names the manual step and verify keeps failing; with
//!   `--kubeconfig` (kubectl on this machine), check finds the pod still looping
//!   (DNS-POD-LOOP) and apply recreates it alone;
//! - with TCP forwarding off in sshd, the same queries go through bash on the node;
//! - a resolver that answers only over UDP is asked over UDP from the node;
//! - an unreachable node is exit 3.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::dnsfix::{Dnsfix, describe};
use crate::common::lab::Lab;
use serde_json::Value;

fn inventory(lab: &Lab) -> PathBuf {
    lab.kubespray_inventory(
        "upstream_dns_servers:\n  - 192.0.2.53\n  - 198.51.100.53\n\
         enable_nodelocaldns: true\n\
         dnsfix_probe_name: probe.dnsfix.example\n",
    )
}

fn dnsfix(lab: &Lab, inventory: &Path, args: &[&str]) -> Output {
    Dnsfix::new(args)
        .lab(lab, inventory)
        .args(["--connect-timeout", "10"])
        .output()
}

/// `verify --format json`: the document and the exit code.
fn verify_json(lab: &Lab, inventory: &Path, extra: &[&str]) -> (Value, Option<i32>) {
    // Generous bounds: a loaded CI machine must not turn a slow answer into a failure.
    let out = dnsfix(
        lab,
        inventory,
        &[
            &["verify", "--format", "json", "--dns-timeout", "10"],
            extra,
        ]
        .concat(),
    );
    let doc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", describe(&out)));
    (doc, out.status.code())
}

fn host<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .find(|h| h["host"] == name)
        .unwrap_or_else(|| panic!("{name} not in {doc:#}"))
}

/// (path, server, ok, via) of every probe of a host. A cluster address is asked twice: the
/// cluster's name and the outside one.
fn paths(doc: &Value, name: &str) -> Vec<(String, String, bool, String)> {
    host(doc, name)["probes"]
        .as_array()
        .expect("probes")
        .iter()
        .map(|p| {
            (
                p["path"].as_str().unwrap_or_default().to_owned(),
                p["server"].as_str().unwrap_or_default().to_owned(),
                p["ok"].as_bool().unwrap_or_default(),
                p["via"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn path(kind: &str, server: &str, ok: bool, via: &str) -> (String, String, bool, String) {
    (kind.into(), server.into(), ok, via.into())
}

/// The stub-loop node fails (a loopback upstream, its cluster DNS pod crash-looping on the
/// loop), the healthy Kubespray node and the kubeadm node pass, over `backend`.
fn stub_fails_healthy_and_kubeadm_pass(lab: &Lab, inv: &Path, backend: &str) {
    let stub = lab.node("stub-symlink").name.clone();
    let healthy = lab.node("healthy").name.clone();
    let kubeadm = lab.node("kubeadm").name.clone();

    let (doc, code) = verify_json(lab, inv, &["--ssh-backend", backend]);
    assert_eq!(code, Some(2), "{backend}: {doc:#}");
    assert_eq!(host(&doc, &stub)["status"], "fail", "{backend}");
    assert_eq!(
        paths(&doc, &stub),
        [
            path("upstream", "127.0.0.53", false, "none"),
            path("cluster_dns", "169.254.25.10", false, "ssh"),
            path("cluster_dns", "169.254.25.10", false, "ssh"),
            // The node itself resolves through systemd-resolved's stub: from the node,
            // 127.0.0.53 is the node's own.
            path("host", "127.0.0.53", true, "ssh"),
        ]
        .iter()
        .map(|(p, s, ok, via)| {
            // A refused channel on openssh is retried from the node itself.
            let via = if backend == "openssh" && !ok && via == "ssh" {
                "node"
            } else {
                via
            };
            (p.clone(), s.clone(), *ok, via.to_owned())
        })
        .collect::<Vec<_>>(),
        "{backend}: {doc:#}"
    );
    assert_eq!(
        paths(&doc, &healthy),
        [
            path("upstream", "192.0.2.53", true, "ssh"),
            path("upstream", "198.51.100.53", true, "ssh"),
            path("cluster_dns", "169.254.25.10", true, "ssh"),
            path("cluster_dns", "169.254.25.10", true, "ssh"),
            path("host", "127.0.0.53", true, "ssh"),
        ],
        "{backend}: {doc:#}"
    );
    // kubeadm: its own clusterDNS; Kubespray's nodelocaldns is not asked of it.
    assert_eq!(
        paths(&doc, &kubeadm),
        [
            path("upstream", "192.0.2.53", true, "ssh"),
            path("upstream", "198.51.100.53", true, "ssh"),
            path("cluster_dns", "10.96.0.10", true, "ssh"),
            path("cluster_dns", "10.96.0.10", true, "ssh"),
            path("host", "127.0.0.53", true, "ssh"),
        ],
        "{backend}: {doc:#}"
    );
    let answer = &host(&doc, &healthy)["probes"][0];
    assert_eq!(answer["rcode"], "NOERROR");
    assert_eq!(answer["answers"][0], "A 192.0.2.80");
    // The cluster's side, read with kubectl on the control-plane node: the stub node's
    // DNS pod crash-loops on the loop plugin, the healthy one's is ready.
    assert_eq!(doc["cluster"]["access"], "read", "{backend}: {doc:#}");
    let pod = &host(&doc, &stub)["pods"][0];
    assert_eq!(pod["waiting"], "CrashLoopBackOff", "{doc:#}");
    assert!(
        pod["loop_detected"]
            .as_str()
            .is_some_and(|l| l.contains("plugin/loop: Loop")),
        "{doc:#}"
    );
    assert_eq!(host(&doc, &healthy)["pods"][0]["ready"], true);
}

#[test]
fn verify_fails_a_stub_loop_then_passes_once_fixed_and_its_pod_recreated() {
    let lab = Lab::start(&["stub-symlink", "healthy", "kubeadm"])
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let inv = inventory(&lab);
    let stub = lab.node("stub-symlink").name.clone();

    for backend in ["russh", "openssh"] {
        stub_fails_healthy_and_kubeadm_pass(&lab, &inv, backend);
    }
    let text = dnsfix(&lab, &inv, &["verify"]);
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains("127.0.0.53 is a loopback address")
            && stdout.contains(&format!(
                "cluster DNS gives no answer or SERVFAIL, and 1 crash-loops (coredns-{stub}-1): "
            ))
            && stdout.contains("recreate those pods")
            && stdout.contains("2 of 3 hosts passed; 1 failed (3 of 14 paths)"),
        "{}",
        describe(&text)
    );
    let junit = dnsfix(&lab, &inv, &["verify", "--format", "junit"]);
    let xml = String::from_utf8_lossy(&junit.stdout);
    assert!(
        xml.contains(
            "<testsuites name=\"dnsfix verify\" tests=\"14\" failures=\"3\" errors=\"0\">"
        ),
        "{xml}"
    );

    // The plan: the kubelet's file, its restart, and then, through kubectl on the
    // control-plane node (the stub node itself here), the node's DNS pod recreated.
    let shown = dnsfix(&lab, &inv, &["plan", "-l", &stub]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        text.contains(&format!("  cluster (kubectl on {stub}):"))
            && text.contains(
                "recreate this node's DNS pods after the restart, one at a time, each waiting \
                 for a Ready replacement (now: coredns CrashLoopBackOff, 5 restarts, loop \
                 detected)"
            )
            && text.contains("1 DNS pod recreated"),
        "{}",
        describe(&shown)
    );

    // apply: the kubelet hands out the real upstreams, the crash-looping pod is deleted and
    // its replacement (which reads the fixed file) is Ready, every path answers.
    let out = dnsfix(
        &lab,
        &inv,
        &["apply", "--yes", "-l", &stub, "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(0), "apply\n{}", describe(&out));
    let record: Value = serde_json::from_slice(&out.stdout).expect("the run record");
    let result = &record["hosts"][0];
    assert_eq!(result["host"], stub.as_str());
    // The record says why the pods were recreated.
    let planned = &result["planned_cluster"][0];
    assert_eq!(planned["type"], "recreate_dns_pods", "{result:#}");
    assert_eq!(planned["reasons"][0]["playbook"], "kubelet-resolvconf");
    let pod = &result["pods"][0];
    assert_eq!(pod["pod"], format!("coredns-{stub}-1"), "{result:#}");
    assert_eq!(
        pod["replacement"],
        format!("coredns-{stub}-2"),
        "{result:#}"
    );
    assert_eq!(pod["ok"], true, "{result:#}");
    assert!(
        result["verified"]["dns"]
            .as_array()
            .is_some_and(|d| d.len() == 5 && d.iter().all(|p| p["ok"] == true)),
        "{result:#}"
    );
    let state = lab.exec(&stub, "cat /run/lab-dns/cluster-dns.state");
    assert!(state.starts_with("Running"), "{state}");
    let (doc, code) = verify_json(&lab, &inv, &[]);
    assert_eq!(code, Some(0), "{doc:#}");
    assert!(
        paths(&doc, &stub).iter().all(|(_, _, ok, _)| *ok),
        "{doc:#}"
    );
    assert_eq!(host(&doc, &stub)["pods"][0]["ready"], true, "{doc:#}");

    // systemd-resolved stopped on the healthy node: its pods' paths still answer, the node's
    // own resolver (its stub, 127.0.0.53) does not, and the node fails on that path alone.
    let healthy = lab.node("healthy").name.clone();
    lab.exec(&healthy, "systemctl stop systemd-resolved");
    let (doc, code) = verify_json(&lab, &inv, &[]);
    assert_eq!(code, Some(2), "{doc:#}");
    assert_eq!(host(&doc, &healthy)["status"], "fail", "{doc:#}");
    let failing: Vec<(String, String)> = paths(&doc, &healthy)
        .into_iter()
        .filter(|(_, _, ok, _)| !ok)
        .map(|(path, server, _, _)| (path, server))
        .collect();
    assert_eq!(
        failing,
        [("host".to_owned(), "127.0.0.53".to_owned())],
        "{doc:#}"
    );
    lab.exec(&healthy, "systemctl start systemd-resolved");
    let (doc, code) = verify_json(&lab, &inv, &[]);
    assert_eq!(code, Some(0), "{doc:#}");
}

#[test]
fn without_tcp_forwarding_the_queries_go_through_the_node_and_unreachable_is_exit_3() {
    let lab =
        Lab::start(&["healthy", "healthy"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let inv = inventory(&lab);
    let node = lab.nodes[0].name.clone();
    let config = lab.dir.join("nodes").join(&node).join("sshd_config");
    let mut text = std::fs::read_to_string(&config).expect("sshd_config");
    text.push_str("AllowTcpForwarding no\n");
    std::fs::write(&config, text).expect("write sshd_config");
    lab.stop(&node);
    lab.resume(&node);
    for backend in ["russh", "openssh"] {
        let (doc, code) = verify_json(&lab, &inv, &["--ssh-backend", backend, "-l", &node]);
        assert_eq!(code, Some(0), "{backend}: {doc:#}");
        assert!(
            paths(&doc, &node)
                .iter()
                .all(|(_, _, ok, via)| *ok && via == "node"),
            "{backend}: {doc:#}"
        );
    }
    let other = lab.nodes[1].name.clone();
    lab.stop(&other);
    let (doc, code) = verify_json(&lab, &inv, &[]);
    assert_eq!(code, Some(3), "{doc:#}");
    assert_eq!(host(&doc, &other)["status"], "unreachable");
    assert_eq!(host(&doc, &node)["status"], "pass");
    // No control-plane host to ask: said so, and the node paths are still verified.
    let (doc, _) = verify_json(&lab, &inv, &["-l", &other]);
    assert_eq!(doc["cluster"]["access"], "read", "{doc:#}");
    lab.stop(&node);
    lab.resume(&other);
    // russh: a persisted OpenSSH master would still reach the stopped node.
    let (doc, code) = verify_json(&lab, &inv, &["-l", &other, "--ssh-backend", "russh"]);
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(doc["cluster"]["access"], "unavailable", "{doc:#}");
    assert!(
        doc["cluster"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains(&node)),
        "{doc:#}"
    );
}

/// A site resolver reachable only over UDP (nothing answers on TCP/53, the connection is
/// refused) still serves pods: verify asks it again over UDP from the node, and the path
/// passes over both SSH backends; with nothing on UDP either, it fails and gives both
/// reasons.
#[test]
fn a_resolver_reachable_only_over_udp_is_asked_over_udp() {
    let lab = Lab::start(&["healthy"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let inv = inventory(&lab);
    let node = lab.nodes[0].name.clone();
    // The site's resolvers (dnsmasq) move to 127.0.0.1:5300; socat relays the datagrams
    // sent to their addresses there. Nothing listens on TCP/53 of those addresses.
    lab.exec(
        &node,
        "set -e; pid=$(cat /run/lab-dns/upstream.pid); kill \"$pid\"; \
         while kill -0 \"$pid\" 2>/dev/null; do sleep 0.05; done; \
         dnsmasq --conf-file=/dev/null --user=root --group=root --no-resolv --no-hosts \
           --bind-interfaces --listen-address=127.0.0.1 --port=5300 \
           --address=/#/192.0.2.80 --pid-file=/run/lab-dns/udp-only.pid; \
         for a in 192.0.2.53 198.51.100.53; do \
           setsid socat -T5 UDP4-RECVFROM:53,bind=$a,fork UDP4-SENDTO:127.0.0.1:5300 \
             </dev/null >/dev/null 2>&1 & \
         done; \
         for i in $(seq 100); do \
           [ \"$(ss -Hlun 'sport = :53' | grep -c -e 192.0.2.53: -e 198.51.100.53:)\" = 2 ] && exit 0; \
           sleep 0.05; \
         done; \
         echo 'the UDP relays did not bind' >&2; exit 1",
    );
    for backend in ["russh", "openssh"] {
        let (doc, code) = verify_json(&lab, &inv, &["--ssh-backend", backend]);
        assert_eq!(code, Some(0), "{backend}: {doc:#}");
        assert_eq!(
            paths(&doc, &node)[..2],
            [
                path("upstream", "192.0.2.53", true, "node-udp"),
                path("upstream", "198.51.100.53", true, "node-udp"),
            ],
            "{backend}: {doc:#}"
        );
        assert_eq!(host(&doc, &node)["probes"][0]["answers"][0], "A 192.0.2.80");
    }

    // Nothing on UDP either: the path fails, and says what each protocol got.
    lab.exec(&node, "pkill -f 'UDP4-RECVFRO[M]:53'; sleep 0.2");
    let (doc, code) = verify_json(&lab, &inv, &["--ssh-backend", "russh"]);
    assert_eq!(code, Some(2), "{doc:#}");
    let probe = &host(&doc, &node)["probes"][0];
    assert_eq!(probe["ok"], false, "{doc:#}");
    let reason = probe["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("no reply from 192.0.2.53: over TCP, ")
            && reason.contains("; over UDP, refused, or nothing came back"),
        "{reason}"
    );
}

/// Without cluster access (the control-plane node is down) nothing is skipped silently:
/// the plan names the manual step instead of a cluster action, apply fixes the node's
/// files alone, and verify still says cluster DNS fails and why the cluster was not read.
#[test]
fn without_cluster_access_the_plan_names_the_manual_step_and_verify_still_fails() {
    let lab = Lab::start(&["healthy", "stub-symlink"])
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let inv = inventory(&lab);
    let control_plane = lab.nodes[0].name.clone();
    let stub = lab.node("stub-symlink").name.clone();
    lab.stop(&control_plane);
    // russh: a persisted OpenSSH master would still reach the stopped node.
    let russh = ["--ssh-backend", "russh", "-l", stub.as_str()];

    let shown = dnsfix(&lab, &inv, &[&["plan"][..], &russh].concat());
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        text.contains("Recreate the CoreDNS and nodelocaldns pods on this node")
            && text.contains("dnsfix cannot do it: the cluster could not be read")
            && text.contains(&control_plane)
            && !text.contains("cluster (kubectl on"),
        "{}",
        describe(&shown)
    );

    let out = dnsfix(
        &lab,
        &inv,
        &[&["apply", "--yes", "--format", "json"][..], &russh].concat(),
    );
    assert_eq!(out.status.code(), Some(0), "apply\n{}", describe(&out));
    let record: Value = serde_json::from_slice(&out.stdout).expect("the run record");
    assert_eq!(record["hosts"][0]["outcome"], "applied", "{record:#}");
    assert!(record["hosts"][0].get("pods").is_none(), "{record:#}");

    let (doc, code) = verify_json(&lab, &inv, &russh);
    assert_eq!(code, Some(2), "{doc:#}");
    assert_eq!(
        paths(&doc, &stub),
        [
            path("upstream", "192.0.2.53", true, "ssh"),
            path("upstream", "198.51.100.53", true, "ssh"),
            path("cluster_dns", "169.254.25.10", false, "ssh"),
            path("cluster_dns", "169.254.25.10", false, "ssh"),
            path("host", "127.0.0.53", true, "ssh"),
        ],
        "{doc:#}"
    );
    assert_eq!(doc["cluster"]["access"], "unavailable", "{doc:#}");

    // With a kubeconfig that works here, the pod left looping is recreated alone.
    recreate_through_a_local_kubeconfig(&lab, &inv, &stub);
}

/// `--kubeconfig`: kubectl runs on this machine (the lab's kubectl stand-in first in
/// PATH). check sees the stub node's pod still crash-looping on the loop with a clean
/// kubelet file (DNS-POD-LOOP), the plan is the cluster action alone, and apply recreates
/// the pod: every path answers.
fn recreate_through_a_local_kubeconfig(lab: &Lab, inv: &Path, stub: &str) {
    let kubeconfig = lab.dir.join("kubeconfig");
    std::fs::write(&kubeconfig, "apiVersion: v1\nkind: Config\n").expect("kubeconfig");
    let standins = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lab/standins");
    let path = std::env::join_paths(std::iter::once(standins).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let here = |args: &[&str]| {
        Dnsfix::new(args)
            .lab(lab, inv)
            .args([
                "--connect-timeout",
                "10",
                "--ssh-backend",
                "russh",
                "-l",
                stub,
            ])
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .env("PATH", &path)
            .env("DNSFIX_LAB_DIR", &lab.dir)
            .output()
    };
    let shown = here(&["plan"]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        text.contains(&format!(
            "cluster (kubectl on this machine (--kubeconfig {})):",
            kubeconfig.display()
        )) && !text.contains("\n  changes:"),
        "{}",
        describe(&shown)
    );
    let out = here(&["check", "--format", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("check's JSON");
    let findings = host(&doc, stub)["findings"].to_string();
    assert!(
        findings.contains("DNS-POD-LOOP")
            && findings.contains(&format!(
                "pod kube-system/coredns-{stub}-1 (coredns) on node {stub}"
            ))
            && findings.contains("[FATAL] plugin/loop: Loop")
            && !findings.contains("DNS-KUBELET-LOOPBACK"),
        "{doc:#}"
    );
    // A replacement that does not come up fails the host, saying how it is.
    let fails = lab.dir.join("nodes").join(stub).join("pod-fails");
    std::fs::write(&fails, "").expect("pod-fails");
    let out = here(&[
        "apply",
        "--yes",
        "--format",
        "json",
        "--health-timeout",
        "3",
    ]);
    assert_eq!(out.status.code(), Some(3), "apply\n{}", describe(&out));
    let record: Value = serde_json::from_slice(&out.stdout).expect("the run record");
    let result = &record["hosts"][0];
    assert_eq!(result["outcome"], "failed", "{record:#}");
    assert_eq!(result["pods"][0]["ok"], false, "{result:#}");
    let error = result["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(&format!(
            "its replacement coredns-{stub}-2 on {stub} is not Ready after 3s: CrashLoopBackOff"
        )) && error.contains("(10.233.64.7:40112 -> :53)"),
        "{result:#}"
    );
    let refused = replacement_log_refused(lab, stub, &here);
    // (And the failed replacement's log is readable again, as the plan must read it.)
    for file in [
        refused,
        fails,
        lab.dir.join("nodes").join(stub).join("dns-pod.log-error"),
    ] {
        std::fs::remove_file(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    }

    // The same plan again: the failed replacement is recreated, and this one comes up.
    let out = here(&["apply", "--yes", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "apply\n{}", describe(&out));
    let record: Value = serde_json::from_slice(&out.stdout).expect("the run record");
    let result = &record["hosts"][0];
    assert_eq!(result["outcome"], "applied", "{record:#}");
    assert!(
        result.get("steps").is_none() && result.get("handlers").is_none(),
        "{result:#}"
    );
    assert_eq!(
        result["pods"][0]["replacement"],
        format!("coredns-{stub}-4"),
        "{result:#}"
    );
    let (doc, code) = verify_json(lab, inv, &["--ssh-backend", "russh", "-l", stub]);
    assert_eq!(code, Some(0), "{doc:#}");
}

/// The next replacement fails too, and the API server refuses its previous log (what it
/// says where the container has no previous run, or its node does not answer): the
/// failure says its log could not be read, and why. The lab's `pod-fails.log-error`,
/// returned for the caller to remove.
fn replacement_log_refused(
    lab: &Lab,
    stub: &str,
    here: &dyn Fn(&[&str]) -> std::process::Output,
) -> std::path::PathBuf {
    let refused = lab.dir.join("nodes").join(stub).join("pod-fails.log-error");
    std::fs::write(
        &refused,
        "Error from server (BadRequest): previous terminated container \"coredns\" in pod \"x\" not found\n",
    )
    .expect("log-error");
    let out = here(&[
        "apply",
        "--yes",
        "--format",
        "json",
        "--health-timeout",
        "3",
    ]);
    assert_eq!(out.status.code(), Some(3), "apply\n{}", describe(&out));
    let record: Value = serde_json::from_slice(&out.stdout).expect("the run record");
    let error = record["hosts"][0]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(&format!(
            "its replacement coredns-{stub}-3 on {stub} is not Ready after 3s: CrashLoopBackOff \
             (its previous log not read: "
        )) && error.contains("Error from server (BadRequest): previous terminated container"),
        "{record:#}"
    );
    refused
}
