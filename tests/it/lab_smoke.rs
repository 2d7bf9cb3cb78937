//! The lab itself, checked with plain OpenSSH (not dnsfix): every scenario node is a real
//! sshd behind 127.0.0.1:PORT, nodes are isolated from each other and from the host, the
//! stand-ins behave, stop/rekey break SSH the way tests expect, and nothing is left
//! behind. The lab never skips: if it cannot start, the test fails with the reason.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Instant;

use crate::common::lab::{ALL_SCENARIOS as ALL, Lab, Node};

const STUB: &str = "../run/systemd/resolve/stub-resolv.conf";

fn start(scenarios: &[&str]) -> Lab {
    Lab::start(scenarios).unwrap_or_else(|e| panic!("lab could not start: {e}"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: exit {:?}\nstderr:\n{}\nstdout:\n{}",
        out.status.code(),
        text(&out.stderr),
        text(&out.stdout)
    );
    text(&out.stdout)
}

fn netns_list() -> String {
    let out = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip netns list runs");
    text(&out.stdout)
}

/// What a node looks like from an SSH session, as key=value lines.
const PROBE: &str = r#"
echo "user=$(id -un)"
echo "host=$(hostname)"
echo "link=$(readlink /etc/resolv.conf)"
echo "brnf=$(cat /proc/sys/net/bridge/bridge-nf-call-iptables)"
echo "fwd=$(cat /proc/sys/net/ipv4/ip_forward)"
echo "kubelet=$(systemctl is-active kubelet)"
echo "resolved=$(systemctl is-active systemd-resolved)"
n=0
for p in /proc/[0-9]*; do
  if [ "$(cat $p/comm 2>/dev/null)" = kubelet ]; then
    n=$((n+1)); echo "cmdline=$(tr '\0' ' ' < $p/cmdline)"
  fi
done
echo "kubelets=$n"
echo "nodelocaldns=$(ip -o -4 addr show dev nodelocaldns 2>/dev/null | awk '{print $4}')"
"#;

fn probe(lab: &Lab, node: &str) -> HashMap<String, String> {
    let out = lab.ssh(node, PROBE);
    ok(&out, &format!("ssh {node}"))
        .lines()
        .filter_map(|l| {
            l.split_once('=')
                .map(|(k, v)| (k.to_owned(), v.trim().to_owned()))
        })
        .collect()
}

const HEALTHZ: &str = r#"bash -c 'exec 3<>/dev/tcp/127.0.0.1/10248 && printf "GET /healthz HTTP/1.0\r\nHost: localhost\r\n\r\n" >&3 && cat <&3'"#;

#[test]
fn every_scenario_is_a_real_isolated_node() {
    let host_resolv = host_resolv_conf();
    let host_brnf = std::fs::read_to_string("/proc/sys/net/bridge/bridge-nf-call-iptables").ok();

    let t0 = Instant::now();
    let lab = start(ALL);
    eprintln!(
        "lab with {} nodes up in {:?} (lab.sh: {:?} ms)",
        ALL.len(),
        t0.elapsed(),
        lab.startup_ms()
    );
    let dir = lab.dir.clone();
    let namespaces: Vec<String> = lab.nodes.iter().map(|n| n.netns.clone()).collect();
    assert_eq!(lab.nodes.len(), ALL.len());

    // Each node, over real SSH, in parallel: what the scenario says, and only its own
    // processes (one kubelet per PID namespace, though the host runs seven).
    let probes = probe_all(&lab);
    for node in &lab.nodes {
        check_probe(&lab, node, &probes[&node.scenario]);
    }

    // The kubelet stand-in answers healthz inside the node only.
    let healthz = lab.exec("healthy", HEALTHZ);
    assert!(
        healthz.starts_with("HTTP/1.1 200 OK") && healthz.ends_with("\r\n\r\nok"),
        "{healthz:?}"
    );

    changes_stay_inside_one_node(&lab);
    check_generated_files(&lab);

    // Independent checks on different nodes, in parallel (each SSH login costs ~0.5 s on a
    // slow machine).
    std::thread::scope(|s| {
        s.spawn(|| kubelet_validates_its_config_on_restart(&lab));
        s.spawn(|| sudo_needs_no_password_for_the_deploy_user(&lab));
        s.spawn(|| sudo_asks_dnsfixpw_for_a_password(&lab));
        s.spawn(|| stop_refuses_and_resume_brings_back(&lab));
        s.spawn(|| rekey_is_refused(&lab));
    });

    drop(lab);
    assert!(!dir.exists(), "{} left behind", dir.display());
    let after = netns_list();
    for ns in &namespaces {
        assert!(!after.contains(ns.as_str()), "{ns} left behind: {after}");
    }
    let host_after = host_resolv_conf();
    assert_eq!(
        host_resolv, host_after,
        "the host's /etc/resolv.conf changed"
    );
    assert_eq!(
        host_brnf,
        std::fs::read_to_string("/proc/sys/net/bridge/bridge-nf-call-iptables").ok()
    );
}

/// Whether the host's /etc/resolv.conf is a symlink, and its bytes.
fn host_resolv_conf() -> (Option<bool>, Option<Vec<u8>>) {
    (
        std::fs::symlink_metadata("/etc/resolv.conf")
            .map(|m| m.file_type().is_symlink())
            .ok(),
        std::fs::read("/etc/resolv.conf").ok(),
    )
}

/// Every node's probe, by scenario, over real SSH in parallel.
fn probe_all(lab: &Lab) -> HashMap<String, HashMap<String, String>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = lab
            .nodes
            .iter()
            .map(|n| (n.scenario.clone(), s.spawn(|| probe(lab, &n.name))))
            .collect();
        handles
            .into_iter()
            .map(|(sc, h)| (sc, h.join().expect("probe thread")))
            .collect()
    })
}

/// One node's probe says what its scenario says.
fn check_probe(lab: &Lab, node: &Node, p: &HashMap<String, String>) {
    let sc = node.scenario.as_str();
    let ctx = format!("{sc}: {p:?}");
    assert_eq!(p["host"], node.name, "{ctx}");
    assert_eq!(
        p["user"],
        if sc == "sudo-user" {
            "dnsfixlab"
        } else {
            "root"
        },
        "{ctx}"
    );
    assert_eq!(node.user, p["user"], "{ctx}");
    let plain_resolv = matches!(sc, "kubespray-loop" | "kubespray-loop-resolved");
    assert_eq!(p["link"], if plain_resolv { "" } else { STUB }, "{ctx}");
    assert_eq!(p["brnf"], if sc == "brnf-off" { "0" } else { "1" }, "{ctx}");
    assert_eq!(p["fwd"], "1", "{ctx}");
    assert_eq!(
        p["resolved"],
        if sc == "kubespray-loop" {
            "inactive"
        } else {
            "active"
        },
        "{ctx}"
    );
    if sc == "kubeadm-stopped" {
        // Installed, configured, not running.
        assert_eq!(p["kubelet"], "inactive", "{ctx}");
        assert_eq!(p["kubelets"], "0", "{ctx}");
        return;
    }
    assert_eq!(p["kubelet"], "active", "{ctx}");
    assert_eq!(p["kubelets"], "1", "{ctx}");
    let config = if sc == "kubeadm" {
        "/usr/bin/kubelet --bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf --config=/var/lib/kubelet/config.yaml "
    } else {
        "--config=/etc/kubernetes/kubelet-config.yaml "
    };
    assert!(p["cmdline"].contains(config), "{ctx}");
    if sc != "kubeadm" {
        assert!(
            p["cmdline"].starts_with("/usr/local/bin/kubelet --v=2 "),
            "{ctx}"
        );
        assert!(
            p["cmdline"].contains(&format!("--hostname-override={} ", node.name)),
            "{ctx}"
        );
        assert_eq!(p["nodelocaldns"], "169.254.25.10/32", "{ctx}");
    }
    if sc == "minimal-no-curl" {
        let tools = lab.exec(&node.name, "command -v curl wget || true");
        assert_eq!(tools, "", "{ctx}: curl/wget still there");
    }
}

/// A sysctl and a file changed on one node are not changed on another, nor on the host.
fn changes_stay_inside_one_node(lab: &Lab) {
    lab.exec("healthy", "echo 0 > /proc/sys/net/bridge/bridge-nf-call-iptables && echo probe > /etc/kubernetes/lab-probe");
    assert_eq!(
        lab.exec(
            "healthy",
            "cat /proc/sys/net/bridge/bridge-nf-call-iptables"
        )
        .trim(),
        "0"
    );
    assert_eq!(
        lab.exec(
            "stub-symlink",
            "cat /proc/sys/net/bridge/bridge-nf-call-iptables"
        )
        .trim(),
        "1"
    );
    assert!(
        lab.exec("stub-symlink", "ls /etc/kubernetes/lab-probe 2>&1 || true")
            .contains("No such file")
    );
    assert!(!Path::new("/etc/kubernetes/lab-probe").exists());
    lab.exec(
        "healthy",
        "echo 1 > /proc/sys/net/bridge/bridge-nf-call-iptables && rm /etc/kubernetes/lab-probe",
    );
}

/// The lab's inventory and known_hosts list every node.
fn check_generated_files(lab: &Lab) {
    let inventory = std::fs::read_to_string(lab.inventory()).expect("inventory.yaml");
    for n in &lab.nodes {
        assert!(inventory.contains(&format!(
            "    {}:\n      ansible_host: 127.0.0.1\n      ansible_port: {}\n",
            n.name, n.port
        )));
    }
    assert!(inventory.contains("nodelocaldns_ip: 169.254.25.10"));
    let known_hosts = std::fs::read_to_string(lab.known_hosts()).expect("known_hosts");
    assert_eq!(known_hosts.lines().count(), ALL.len());
}

/// The kubelet stand-in validates its config on restart; systemctl records calls.
fn kubelet_validates_its_config_on_restart(lab: &Lab) {
    let broken = lab.exec(
        "healthy",
        "sed -i 's#^resolvConf:.*#resolvConf: /nonexistent#' /etc/kubernetes/kubelet-config.yaml \
         && systemctl restart kubelet; systemctl is-active kubelet || true",
    );
    assert_eq!(broken.trim(), "failed");
    assert!(
        lab.exec_output("healthy", HEALTHZ).stdout.is_empty(),
        "healthz must be down"
    );
    let log = lab.exec("healthy", "cat /run/lab-systemd/kubelet.log");
    assert!(log.contains("resolvConf \\\"/nonexistent\\\""), "{log}");
    let fixed = lab.ssh(
        "healthy",
        "sed -i 's#^resolvConf:.*#resolvConf: \"/run/systemd/resolve/resolv.conf\"#' \
         /etc/kubernetes/kubelet-config.yaml && systemctl restart kubelet && systemctl is-active kubelet",
    );
    assert_eq!(ok(&fixed, "restart kubelet").trim(), "active");
    let calls = lab.systemctl_calls("healthy");
    let restarts = calls
        .iter()
        .filter(|c| c.ends_with("\troot\trestart kubelet"))
        .count();
    assert_eq!(restarts, 2, "{calls:?}");
}

/// The deploy user (dnsfixlab) has passwordless sudo.
fn sudo_needs_no_password_for_the_deploy_user(lab: &Lab) {
    let sudo = lab.ssh("sudo-user", "sudo -n id -u");
    assert_eq!(ok(&sudo, "sudo -n as dnsfixlab").trim(), "0");
}

/// dnsfixpw needs a password for sudo, so `sudo -n` fails.
fn sudo_asks_dnsfixpw_for_a_password(lab: &Lab) {
    let node = lab.node("sudo-user").name.clone();
    let pw = Command::new("ssh")
        .arg("-F")
        .arg(lab.ssh_config())
        .args(["-l", "dnsfixpw", &node, "sudo -n true"])
        .env_remove("SSH_AUTH_SOCK")
        .output()
        .expect("ssh runs");
    assert!(!pw.status.success());
    assert!(
        text(&pw.stderr).contains("a password is required"),
        "{}",
        text(&pw.stderr)
    );
}

/// A stopped node refuses connections; resumed, it answers again.
fn stop_refuses_and_resume_brings_back(lab: &Lab) {
    lab.stop("brnf-off");
    let down = lab.ssh("brnf-off", "true");
    assert!(!down.status.success());
    let err = text(&down.stderr);
    assert!(
        err.contains("Connection refused") || err.contains("closed"),
        "{err}"
    );
    lab.resume("brnf-off");
    assert_eq!(
        ok(&lab.ssh("brnf-off", "echo back"), "ssh after resume").trim(),
        "back"
    );
}

/// A node with a new host key is refused by strict host key checking.
fn rekey_is_refused(lab: &Lab) {
    lab.rekey("stray-search");
    let changed = lab.ssh("stray-search", "true");
    assert!(!changed.status.success());
    let err = text(&changed.stderr);
    assert!(
        err.contains("REMOTE HOST IDENTIFICATION HAS CHANGED"),
        "{err}"
    );
}

#[test]
fn two_labs_side_by_side_do_not_collide() {
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| start(&["healthy"]));
        let b = s.spawn(|| start(&["healthy"]));
        (a.join().expect("lab a"), b.join().expect("lab b"))
    });
    let (na, nb) = (a.node("healthy").clone(), b.node("healthy").clone());
    assert_eq!(na.name, nb.name, "same default names in both labs");
    assert_ne!(na.port, nb.port);
    assert_ne!(na.netns, nb.netns);
    assert_ne!(a.dir, b.dir);
    a.exec(
        "healthy",
        "echo 0 > /proc/sys/net/bridge/bridge-nf-call-iptables",
    );
    assert_eq!(
        b.exec(
            "healthy",
            "cat /proc/sys/net/bridge/bridge-nf-call-iptables"
        )
        .trim(),
        "1"
    );
    drop(a);
    assert!(!netns_list().contains(&na.netns));
    assert_eq!(ok(&b.ssh("healthy", "hostname"), "ssh b").trim(), nb.name);
}

/// bench/gather-cpu.sh renders the gather script as dnsfix does (it fails where
/// raw::script_for gains a placeholder it does not fill in) and checks that the script runs
/// to its end record on the node before it times anything.
#[test]
fn the_gather_cpu_bench_runs_the_gather_on_a_lab_node() {
    let lab = start(&["healthy"]);
    let node = lab.node("healthy").name.clone();
    let out = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/gather-cpu.sh"))
        .arg(&lab.dir)
        .arg(&node)
        .args(["2", "1"])
        .output()
        .expect("run bench/gather-cpu.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A row: its name, padded with spaces, then the median.
    let ms = |row: &str| -> f64 {
        stdout
            .lines()
            .filter_map(|l| l.trim().split_once("  "))
            .find(|(name, _)| *name == row)
            .and_then(|(_, rest)| rest.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("no row {row:?} with a number: {stdout}"))
    };
    // A whole gather (some 20 ms here) costs more than a sh that runs nothing.
    assert!(ms("gather") > ms("sh -s < /dev/null"), "{stdout}");
    assert!(ms("systemctl is-active (the units)") > 0.0, "{stdout}");
}
