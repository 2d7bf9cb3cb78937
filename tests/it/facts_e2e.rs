//! End to end: `dnsfix facts` against real OpenSSH servers in the lab, with both SSH
//! backends. The lab never skips: if it cannot start, the test fails with the reason.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::dnsfix::{Dnsfix, describe};
use crate::common::lab::{ALL_SCENARIOS as SCENARIOS, Lab, Node};
use serde_json::Value;

fn start(scenarios: &[&str]) -> Lab {
    Lab::start(scenarios).unwrap_or_else(|e| panic!("lab could not start: {e}"))
}

fn dnsfix(lab: &Lab, backend: &str, extra: &[&str]) -> Output {
    Dnsfix::new(["facts"])
        .lab(lab, &lab.inventory())
        .args(["--ssh-backend", backend, "--connect-timeout", "5"])
        .args(extra)
        .env_remove("SSH_AUTH_SOCK")
        .output()
}

/// `dnsfix facts --format json` over `backend` under `unshare` (its namespaces set up by the
/// caller's arguments), checking host keys against `known_hosts`, no master kept.
fn facts_unshared(
    mut unshare: Command,
    inventory: &Path,
    known_hosts: &Path,
    backend: &str,
) -> Output {
    unshare
        .arg(env!("CARGO_BIN_EXE_dnsfix"))
        .args(["facts", "-i"])
        .arg(inventory)
        .arg("--known-hosts")
        .arg(known_hosts)
        .args(["--no-progress", "--format", "json", "--ssh-persist", "0"])
        .args(["--ssh-backend", backend, "--connect-timeout", "5"])
        .env_remove("DNSFIX_INVENTORY")
        .env_remove("DNSFIX_PLAYBOOKS")
        .env_remove("SSH_AUTH_SOCK")
        .output()
        .expect("unshare runs (needs root and util-linux)")
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}); stdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn host<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["hosts"]
        .as_array()
        .and_then(|hs| hs.iter().find(|h| h["host"] == name))
        .unwrap_or_else(|| panic!("host {name} not in output: {doc:#}"))
}

fn facts<'a>(doc: &'a Value, name: &str) -> &'a Value {
    let h = host(doc, name);
    assert_eq!(h["status"], "ok", "{name} failed: {h:#}");
    &h["facts"]
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn pod_nameservers(f: &Value) -> Vec<String> {
    f["kubelet"]["pod_resolv_conf"]["parsed"]["nameservers"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|n| n["address"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn check_scenarios(lab: &Lab, doc: &Value) {
    let node = |scenario: &str| facts(doc, &lab.node(scenario).name);
    let healthy = node("healthy");
    check_healthy(healthy);
    check_stub_symlink(node("stub-symlink"));
    check_kubespray_loop(node("kubespray-loop"));
    check_brnf_off(node("brnf-off"));
    check_stray_search(node("stray-search"));
    check_kubeadm(node("kubeadm"));
    // Calico routes pod traffic (flannel on the kubeadm node bridges it).
    assert_eq!(healthy["cni"]["pod_bridge"]["kind"], "routed", "calico");
    check_kubeadm_stopped(node("kubeadm-stopped"));
    check_kubespray_loop_resolved(node("kubespray-loop-resolved"));
    check_sudo_user(node("sudo-user"));
}

fn check_healthy(healthy: &Value) {
    assert_eq!(healthy["flavour"]["kind"], "kubespray");
    assert_eq!(healthy["uid"], 0);
    let rc = &healthy["kubelet"]["resolv_conf"];
    assert_eq!(rc["state"], "known");
    assert_eq!(rc["value"]["value"], "/run/systemd/resolve/resolv.conf");
    assert_eq!(rc["value"]["source"]["kind"], "config");
    assert_eq!(
        rc["value"]["source"]["path"],
        "/etc/kubernetes/kubelet-config.yaml"
    );
    assert!(
        rc["value"]["source"]["line"]
            .as_u64()
            .is_some_and(|l| l > 0)
    );
    assert_eq!(pod_nameservers(healthy), ["192.0.2.53", "198.51.100.53"]);
    assert_eq!(
        strings(&healthy["kubelet"]["cluster_dns"]["value"]["value"]),
        ["169.254.25.10"]
    );
    assert!(
        healthy["kubelet"]["pid"].as_u64().is_some(),
        "kubelet stand-in runs: {healthy:#}"
    );
    assert_eq!(healthy["resolver"]["resolved_mode"], "stub");
    assert_eq!(
        healthy["resolver"]["etc_resolv_conf"]["symlink_target"],
        "../run/systemd/resolve/stub-resolv.conf"
    );
    assert_eq!(healthy["services"]["systemd_resolved"], "active");
    let brnf = &healthy["sysctls"]["net.bridge.bridge-nf-call-iptables"];
    assert_eq!(brnf["live"]["value"], "1");
    assert_eq!(brnf["persisted"]["value"], "1");
    assert!(
        healthy["br_netfilter"]["persisted"]["path"]
            .as_str()
            .is_some_and(|p| p.starts_with("/etc/modules-load.d/"))
    );
    assert_eq!(healthy["br_netfilter"]["loaded"]["value"], true);
    assert_eq!(
        healthy["sysctls"]["net.ipv4.ip_forward"]["live"]["value"],
        "1"
    );
    assert!(strings(&healthy["nodelocaldns"]).contains(&"169.254.25.10".to_owned()));
    assert!(healthy["boot_id"].as_str().is_some_and(|b| !b.is_empty()));
    assert!(
        healthy["files"]["/etc/kubernetes/kubelet-config.yaml"]["sha256"]
            .as_str()
            .is_some_and(|s| s.len() == 64)
    );
}

fn check_stub_symlink(stub: &Value) {
    assert_eq!(
        stub["kubelet"]["resolv_conf"]["value"]["value"],
        "/etc/resolv.conf"
    );
    assert_eq!(pod_nameservers(stub), ["127.0.0.53"]);
    assert!(
        stub["kubelet"]["pod_resolv_conf"]["canonical"]
            .as_str()
            .is_some_and(|c| c.ends_with("stub-resolv.conf"))
    );
}

fn check_kubespray_loop(kloop: &Value) {
    assert_eq!(kloop["resolver"]["resolved_mode"], "foreign");
    assert_eq!(pod_nameservers(kloop), ["169.254.25.10"]);
    assert_eq!(kloop["services"]["systemd_resolved"], "inactive");
}

fn check_brnf_off(off: &Value) {
    for key in [
        "net.bridge.bridge-nf-call-iptables",
        "net.bridge.bridge-nf-call-ip6tables",
    ] {
        assert_eq!(off["sysctls"][key]["live"]["value"], "0", "{key}");
        assert!(
            off["sysctls"][key]["persisted"].is_null(),
            "{key} persisted: {off:#}"
        );
    }
    assert!(off["br_netfilter"]["persisted"].is_null());
}

fn check_stray_search(stray: &Value) {
    assert!(
        strings(&stray["kubelet"]["pod_resolv_conf"]["parsed"]["search"])
            .contains(&"openstacklocal".to_owned())
    );
}

fn check_kubeadm(kubeadm: &Value) {
    assert_eq!(kubeadm["flavour"]["kind"], "kubeadm");
    assert_eq!(
        kubeadm["kubelet"]["config_path"],
        "/var/lib/kubelet/config.yaml"
    );
    assert_eq!(
        strings(&kubeadm["kubelet"]["cluster_dns"]["value"]["value"]),
        ["10.96.0.10"]
    );
    assert_eq!(
        kubeadm["kubelet"]["resolv_conf"]["value"]["value"],
        "/run/systemd/resolve/resolv.conf"
    );

    // What the kubelet binary says, asked on the node.
    assert_eq!(kubeadm["kubelet"]["version"], "v1.30.2", "{kubeadm:#}");
    assert_eq!(
        kubeadm["cni"]["pod_bridge"]["kind"], "bridged",
        "flannel: {kubeadm:#}"
    );
}

/// A stopped kubelet is still a kubelet: the unit says how it starts, and the config it
/// names is read. Nothing runs, so its flags come from the unit files.
fn check_kubeadm_stopped(stopped: &Value) {
    assert_eq!(stopped["flavour"]["kind"], "kubeadm");
    assert!(stopped["kubelet"]["pid"].is_null(), "{stopped:#}");
    assert_eq!(stopped["services"]["kubelet"], "inactive");
    assert_eq!(
        stopped["kubelet"]["unit"],
        "/usr/lib/systemd/system/kubelet.service"
    );
    let rc = &stopped["kubelet"]["resolv_conf"];
    assert_eq!(rc["state"], "known", "{stopped:#}");
    assert_eq!(rc["value"]["value"], "/etc/kubelet-resolv.conf");
    assert_eq!(rc["value"]["source"]["path"], "/etc/default/kubelet");
    assert_eq!(rc["value"]["source"]["detail"], "KUBELET_EXTRA_ARGS");
    // Reached only through the unit's EnvironmentFile= and the flag in it.
    assert_eq!(pod_nameservers(stopped), ["192.0.2.53", "198.51.100.53"]);
    let config_flag = stopped["kubelet"]["flags"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["name"] == "config"))
        .unwrap_or_else(|| panic!("no --config from the unit: {stopped:#}"));
    assert_eq!(
        config_flag["source"]["path"],
        "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf"
    );
    assert_eq!(config_flag["source"]["detail"], "KUBELET_CONFIG_ARGS");
}

/// kubespray-loop-resolved: resolved runs, yet /etc/resolv.conf is a plain file.
fn check_kubespray_loop_resolved(foreign: &Value) {
    assert_eq!(foreign["resolver"]["resolved_mode"], "foreign");
    assert_eq!(foreign["services"]["systemd_resolved"], "active");
}

/// The non-root user became root through sudo -n: uid 0 and root-only files read.
fn check_sudo_user(sudo: &Value) {
    assert_eq!(sudo["uid"], 0);
    assert_eq!(pod_nameservers(sudo), ["192.0.2.53", "198.51.100.53"]);
}

#[test]
fn facts_for_every_scenario_with_both_backends() {
    let lab = start(SCENARIOS);
    for backend in ["openssh", "russh"] {
        let out = dnsfix(&lab, backend, &["--format", "json"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{backend}: stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc = json(&out);
        assert_eq!(doc["hosts"].as_array().map(Vec::len), Some(SCENARIOS.len()));
        check_scenarios(&lab, &doc);
    }
    // The human summary names each node and its effective resolvConf.
    let out = dnsfix(&lab, "openssh", &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&lab.node("stub-symlink").name), "{text}");
    assert!(text.contains("127.0.0.53"), "{text}");
    assert!(
        text.contains(&format!(
            "{} hosts: {} gathered, 0 unreachable",
            SCENARIOS.len(),
            SCENARIOS.len()
        )),
        "{text}"
    );
}

/// The system's known_hosts (`/etc/ssh/ssh_known_hosts`) counts whatever `--known-hosts`
/// names, over either backend, as OpenSSH's GlobalKnownHostsFile does beside its
/// UserKnownHostsFile: a node known there alone is known, and a key it marks `@revoked` is
/// refused though the given file knows it. /etc/ssh is another directory for the run alone
/// (a private mount namespace), holding that file and an empty ssh_config: nothing of the
/// machine's own configuration counts.
#[test]
fn the_systems_known_hosts_counts_whatever_file_is_given() {
    let lab = start(&["healthy"]);
    let node = lab.nodes[0].name.clone();
    let line = std::fs::read_to_string(lab.dir.join("nodes").join(&node).join("known_hosts_line"))
        .expect("the node's known_hosts line");
    let etc = lab.dir.join("etc-ssh");
    std::fs::create_dir(&etc).expect("etc-ssh");
    std::fs::write(etc.join("ssh_config"), "").expect("an empty ssh_config");
    let empty = lab.dir.join("known_hosts.empty");
    std::fs::write(&empty, "").expect("an empty known_hosts");
    let cases = [
        (
            "revoked there",
            lab.known_hosts(),
            format!("@revoked {line}"),
            Some("host_key_refused"),
        ),
        ("known there alone", empty, line.clone(), None),
    ];
    for (case, given, system, failure) in cases {
        std::fs::write(etc.join("ssh_known_hosts"), &system).expect("ssh_known_hosts");
        for backend in ["openssh", "russh"] {
            let mut unshare = Command::new("unshare");
            unshare
                .args(["--mount", "--propagation", "private", "sh", "-c"])
                .arg(r#"mount --bind "$1" /etc/ssh && shift && exec "$@""#)
                .arg("sh")
                .arg(&etc);
            let out = facts_unshared(unshare, &lab.inventory(), &given, backend);
            let doc = json(&out);
            let h = host(&doc, &node);
            match failure {
                None => assert_eq!(h["status"], "ok", "{backend}, {case}: {h:#}"),
                Some(kind) => {
                    assert_eq!(h["status"], "failed", "{backend}, {case}: {h:#}");
                    assert_eq!(h["error"]["kind"], kind, "{backend}, {case}: {h:#}");
                }
            }
        }
    }
}

/// A node whose sshd cannot start the login user's shell (the user at its process limit:
/// sshd logs `fork: Resource temporarily unavailable` and answers the exec request with a
/// failure) fails at once over either backend, saying nothing ran: russh is told so
/// (`exec_refused`, where it used to wait out the command timeout), openssh's ssh only
/// exits 255 with nothing said, which the gather reports as such.
#[test]
fn a_node_whose_sshd_cannot_start_the_shell_fails_at_once_saying_so() {
    let lab = start(&["sudo-user"]);
    let node = lab.nodes[0].name.clone();
    lab.exec(
        &node,
        &format!(
            "prlimit --pid \"$(cat {}/nodes/{node}/sshd.pid)\" --nproc=1:1",
            lab.dir.display()
        ),
    );
    for (backend, kind, says) in [
        (
            "russh",
            "exec_refused",
            "refused to start the command, so nothing ran there",
        ),
        (
            "openssh",
            "script_failed",
            "status 255: it printed nothing at all",
        ),
    ] {
        let started = std::time::Instant::now();
        let out = dnsfix(
            &lab,
            backend,
            &[
                "--format",
                "json",
                "--ssh-persist",
                "0",
                "--command-timeout",
                "30",
            ],
        );
        let took = started.elapsed();
        assert!(
            took < std::time::Duration::from_secs(20),
            "{backend}: {took:?}"
        );
        let doc = json(&out);
        let h = host(&doc, &node);
        assert_eq!(h["status"], "failed", "{backend}: {h:#}");
        assert_eq!(h["error"]["kind"], kind, "{backend}: {h:#}");
        assert!(
            h["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains(says)),
            "{backend}: {h:#}"
        );
    }
}

/// A node the network has no route to (here: a network namespace of its own with no
/// interface up, so the kernel says `Network is unreachable` at once) is unreachable over
/// either backend, named so, not "lost" or an ssh failure of no kind.
#[test]
fn a_node_with_no_route_to_it_is_unreachable_over_either_backend() {
    let dir = tempfile::tempdir().expect("tempdir");
    let inventory = dir.path().join("hosts.yaml");
    std::fs::write(
        &inventory,
        "all:\n  hosts:\n    far:\n      ansible_host: 10.255.255.1\n      ansible_user: root\n",
    )
    .expect("inventory");
    for backend in ["openssh", "russh"] {
        let mut unshare = Command::new("unshare");
        unshare.arg("--net");
        let out = facts_unshared(unshare, &inventory, Path::new("/dev/null"), backend);
        let doc = json(&out);
        let h = host(&doc, "far");
        assert_eq!(h["status"], "failed", "{backend}: {h:#}");
        assert_eq!(h["error"]["kind"], "unreachable", "{backend}: {h:#}");
        assert!(
            h["error"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("cannot reach root@10.255.255.1")
                    && m.contains("unreachable")),
            "{backend}: {h:#}"
        );
    }
}

/// An encrypted private key (dnsfix never asks for a passphrase) logs in over russh where
/// the ssh agent holds it, as ssh signs with the agent; without an agent the host fails
/// saying the key is encrypted. The public half comes from the key file itself.
#[test]
fn an_encrypted_key_the_agent_holds_logs_in_over_russh() {
    let lab = start(&["healthy"]);
    let node = lab.nodes[0].name.clone();
    let encrypted = lab.dir.join("id_encrypted");
    std::fs::copy(lab.key(), &encrypted).expect("copy the key");
    let locked = Command::new("ssh-keygen")
        .args([
            "-p",
            "-q",
            "-P",
            "",
            "-N",
            "a passphrase dnsfix never asks for",
            "-f",
        ])
        .arg(&encrypted)
        .status()
        .expect("ssh-keygen runs");
    assert!(locked.success(), "ssh-keygen -p");
    let socket = lab.dir.join("agent.sock");
    let mut agent = Command::new("ssh-agent")
        .arg("-D")
        .arg("-a")
        .arg(&socket)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("ssh-agent runs");
    for _ in 0..100 {
        if socket.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let added = Command::new("ssh-add")
        .arg("-q")
        .arg(lab.key())
        .env("SSH_AUTH_SOCK", &socket)
        .output()
        .expect("ssh-add runs");
    let inventory = lab.dir.join("inventory-encrypted.yaml");
    let text = std::fs::read_to_string(lab.inventory()).expect("inventory");
    let key = lab.key().display().to_string();
    assert!(text.contains(&key), "the lab's inventory names its key");
    std::fs::write(
        &inventory,
        text.replace(&key, &encrypted.display().to_string()),
    )
    .expect("inventory with the encrypted key");
    let run = |agent: Option<&std::path::Path>| {
        let mut cmd = Dnsfix::new(["facts"])
            .lab(&lab, &inventory)
            .args(["--ssh-backend", "russh", "--format", "json"])
            .env_remove("SSH_AUTH_SOCK")
            .command();
        if let Some(socket) = agent {
            cmd.env("SSH_AUTH_SOCK", socket);
        }
        json(&cmd.output().expect("dnsfix runs"))
    };
    let with_agent = run(Some(&socket));
    let without = run(None);
    let _ = agent.kill();
    let _ = agent.wait();
    assert!(added.status.success(), "ssh-add: {}", describe(&added));
    facts(&with_agent, &node);
    let h = host(&without, &node);
    assert_eq!(h["error"]["kind"], "auth", "{h:#}");
    assert!(
        h["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("id_encrypted") && m.contains("The key is encrypted")),
        "{h:#}"
    );
}

#[test]
fn failures_are_per_host_with_the_reason() {
    let lab = start(&["healthy", "healthy", "healthy", "sudo-user"]);
    let stopped = lab.nodes[1].name.clone();
    let rekeyed = lab.nodes[2].name.clone();
    lab.stop(&stopped);
    lab.rekey(&rekeyed);
    for backend in ["openssh", "russh"] {
        let out = dnsfix(&lab, backend, &["--format", "json"]);
        assert_eq!(
            out.status.code(),
            Some(3),
            "{backend}: exit 3 when a host fails"
        );
        let doc = json(&out);
        facts(&doc, &lab.nodes[0].name);
        let down = host(&doc, &stopped);
        assert_eq!(down["status"], "failed");
        assert!(
            ["refused", "disconnected"]
                .contains(&down["error"]["kind"].as_str().unwrap_or_default()),
            "{backend}: {down:#}"
        );
        let changed = host(&doc, &rekeyed);
        assert_eq!(
            changed["error"]["kind"], "host_key_changed",
            "{backend}: {changed:#}"
        );
        assert!(
            changed["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("CHANGED"))
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&stopped) && stderr.contains(&rekeyed),
            "stderr names the failed hosts:\n{stderr}"
        );
    }

    // A user whose sudo wants a password gets a clear error, never a prompt.
    let node = lab.node("sudo-user");
    let inventory = lab.dir.join("pw.ini");
    std::fs::write(
        &inventory,
        format!(
            "[kube_node]\npw ansible_host=127.0.0.1 ansible_port={port} ansible_user=dnsfixpw ansible_ssh_private_key_file={key}\npwsu ansible_host=127.0.0.1 ansible_port={port} ansible_user=dnsfixpw ansible_ssh_private_key_file={key} ansible_become_method=su\n",
            port = node.port,
            key = lab.key().display()
        ),
    )
    .expect("write inventory");
    for backend in ["openssh", "russh"] {
        let out = Dnsfix::new([
            "facts",
            "--format",
            "json",
            "--no-progress",
            "--ssh-backend",
            backend,
            "-i",
        ])
        .arg(&inventory)
        .arg("--known-hosts")
        .arg(lab.known_hosts())
        .output();
        assert_eq!(out.status.code(), Some(3));
        let doc = json(&out);
        assert_eq!(
            host(&doc, "pw")["error"]["kind"],
            "sudo_password",
            "{backend}: {doc:#}"
        );
        // Where the inventory asks for su, the error says dnsfix did not use it.
        let su = host(&doc, "pwsu");
        assert_eq!(su["error"]["kind"], "sudo_password", "{backend}: {su:#}");
        let message = su["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("the inventory's `ansible_become_method` (")
                && message.contains("is \"su\": dnsfix does not use that method"),
            "{backend}: {message}"
        );
    }
}

#[test]
fn unknown_host_keys_are_refused_unless_accepted() {
    let lab = start(&["healthy"]);
    for backend in ["openssh", "russh"] {
        let known = lab.dir.join(format!("known_hosts.{backend}"));
        std::fs::write(&known, "").expect("write");
        let run = |extra: &[&str]| {
            Dnsfix::new([
                "facts",
                "--format",
                "json",
                "--no-progress",
                "--ssh-persist",
                "0",
                "--ssh-backend",
                backend,
                "-i",
            ])
            .arg(lab.inventory())
            .arg("--known-hosts")
            .arg(&known)
            .args(extra)
            .output()
        };
        let out = run(&[]);
        assert_eq!(out.status.code(), Some(3), "{backend}: strict by default");
        let doc = json(&out);
        assert_eq!(
            doc["hosts"][0]["error"]["kind"], "host_key_unknown",
            "{backend}: {doc:#}"
        );
        assert!(
            doc["hosts"][0]["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("--accept-new-host-keys"))
        );

        let out = run(&["--accept-new-host-keys"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{backend}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let learned = std::fs::read_to_string(&known).expect("read");
        assert!(
            learned.contains("ssh-ed25519"),
            "{backend}: key recorded: {learned:?}"
        );
        // Now known: strict checking passes.
        assert_eq!(run(&[]).status.code(), Some(0), "{backend}");
    }
}

/// The russh transport reads known_hosts as OpenSSH does: each variant of the file is tried
/// with both backends, OpenSSH being the reference, and they must agree (accepted, or
/// refused as changed, revoked or unknown). Tabs, wildcards, negation, hashed names, a
/// corrupt line before the good one, `@revoked`, a key of another type, `/dev/null`.
#[test]
fn russh_reads_known_hosts_as_openssh_does() {
    let lab = start(&["healthy"]);
    let node = &lab.nodes[0];
    let line = node_file(&lab, node, "known_hosts_line");
    let ecdsa_line = node_file(&lab, node, "known_hosts_line_ecdsa");
    let mut fields = line.split_whitespace();
    let (name, kind, key) = (
        fields.next().expect("name"),
        fields.next().expect("type"),
        fields.next().expect("key"),
    );
    let ecdsa = other_ecdsa_key(&lab);
    let ecdsa: Vec<&str> = ecdsa.split_whitespace().take(2).collect();
    let hashed = hashed_line(&lab, &format!("{name} {kind} {key}\n"));
    let port = node.port;
    let cases: Vec<(&str, String, &[&str], &str)> = vec![
        ("tabs", format!("{name}\t{kind}\t{key}\n"), &[], "ok"),
        (
            "wildcard port",
            format!("[127.0.0.1]:* {kind} {key}\n"),
            &[],
            "ok",
        ),
        (
            "negated",
            format!("[127.0.0.1]:*,![127.0.0.1]:{port} {kind} {key}\n"),
            &[],
            "host_key_unknown",
        ),
        ("hashed", hashed, &[], "ok"),
        (
            "corrupt line first",
            format!("{name} {kind} AAAA-not-base64\n{name} {kind} {key}\n"),
            &[],
            "ok",
        ),
        (
            "revoked",
            format!("{name} {kind} {key}\n@revoked * {kind} {key}\n"),
            &[],
            "revoked",
        ),
        (
            "other key type",
            format!("{name} {} {}\n", ecdsa[0], ecdsa[1]),
            &["--accept-new-host-keys"],
            "changed",
        ),
        // Known by its ECDSA key alone (as OpenSSH before 8.5 recorded it): the server also
        // has an Ed25519 key, and the client must ask for the type it knows.
        ("known by its ECDSA key", ecdsa_line.clone(), &[], "ok"),
        ("empty", String::new(), &[], "host_key_unknown"),
    ];
    for (what, text, extra, want) in cases {
        let file = lab.dir.join("kh");
        std::fs::write(&file, &text).expect("write known_hosts");
        let mut outcomes = Vec::new();
        for backend in ["openssh", "russh"] {
            std::fs::write(&file, &text).expect("reset known_hosts");
            let out = facts_with(&lab, backend, &file, extra);
            let got = connection_outcome(host(&json(&out), &node.name));
            assert!(
                got.contains(want),
                "{what} with {backend}: want {want}, got {got}"
            );
            outcomes.push(got.split(' ').next().unwrap_or_default().to_string());
            let after = std::fs::read_to_string(&file).unwrap_or_default();
            assert!(
                !after.contains(&ecdsa[1][..20]) || after == text,
                "{what}: {backend} learned a key"
            );
            if want != "ok" {
                assert_eq!(after, text, "{what}: {backend} changed known_hosts");
            }
        }
        eprintln!("{what}: openssh {} / russh {}", outcomes[0], outcomes[1]);
    }
    // /dev/null means "no known hosts", for both.
    for backend in ["openssh", "russh"] {
        let out = facts_with(&lab, backend, std::path::Path::new("/dev/null"), &[]);
        let doc = json(&out);
        assert_eq!(
            host(&doc, &node.name)["error"]["kind"],
            "host_key_unknown",
            "{backend}"
        );
    }
}

/// A file the lab wrote for `node` (its known_hosts lines).
fn node_file(lab: &Lab, node: &Node, file: &str) -> String {
    std::fs::read_to_string(lab.dir.join("nodes").join(&node.name).join(file)).expect(file)
}

/// The public key line of a new ECDSA key, one no node has.
fn other_ecdsa_key(lab: &Lab) -> String {
    let other = lab.dir.join("other_ecdsa");
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ecdsa", "-N", "", "-f"])
        .arg(&other)
        .status()
        .expect("ssh-keygen");
    assert!(status.success());
    std::fs::read_to_string(other.with_extension("pub")).expect("pub")
}

/// `line` with its host name hashed, as `ssh-keygen -H` writes it.
fn hashed_line(lab: &Lab, line: &str) -> String {
    let file = lab.dir.join("hashed");
    std::fs::write(&file, line).expect("write");
    let out = Command::new("ssh-keygen")
        .arg("-H")
        .arg("-f")
        .arg(&file)
        .output()
        .expect("ssh-keygen -H");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(&file).expect("hashed")
}

/// `dnsfix facts` as JSON against the lab with `known_hosts`. No shared connection: each
/// call is a fresh handshake.
fn facts_with(lab: &Lab, backend: &str, known_hosts: &std::path::Path, extra: &[&str]) -> Output {
    Dnsfix::new([
        "facts",
        "--ssh-persist",
        "0",
        "--format",
        "json",
        "--no-progress",
    ])
    .args(["--connect-timeout", "5", "--ssh-backend", backend, "-i"])
    .arg(lab.inventory())
    .arg("--known-hosts")
    .arg(known_hosts)
    .args(extra)
    .env_remove("SSH_AUTH_SOCK")
    .output()
}

/// `ok`, or the host's error kind and message.
fn connection_outcome(h: &Value) -> String {
    if h["status"] == "ok" {
        "ok".to_string()
    } else {
        format!(
            "{} {}",
            h["error"]["kind"].as_str().unwrap_or("?"),
            h["error"]["message"].as_str().unwrap_or("")
        )
    }
}

/// This machine's own facts (no inventory) while a lab node runs beside them. The node's
/// kubelet is a root process named kubelet that this machine's /proc shows, but of
/// another mount namespace, as a kind or k3d node's kubelet is: its command line names
/// files of another filesystem, and its binary is not this machine's to run. It is not
/// this machine's kubelet.
#[test]
fn a_kubelet_of_another_mount_namespace_is_not_this_machines() {
    let lab = start(&["healthy"]);
    let node_kubelet = lab
        .exec(&lab.nodes[0].name, "pgrep -x kubelet | head -n 1")
        .trim()
        .to_owned();
    assert!(!node_kubelet.is_empty(), "the lab node runs no kubelet");
    // Seen from here: every root process called kubelet, and its mount namespace.
    let here = std::fs::read_link("/proc/self/ns/mnt").expect("own mount namespace");
    let kubelets: Vec<(String, bool)> = std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter(|e| {
            std::fs::read_to_string(e.path().join("comm")).is_ok_and(|c| c.trim() == "kubelet")
        })
        .map(|e| {
            let ns = std::fs::read_link(e.path().join("ns/mnt")).ok();
            (
                e.file_name().to_string_lossy().into_owned(),
                ns.as_ref() == Some(&here),
            )
        })
        .collect();
    assert!(
        !kubelets.is_empty() && kubelets.iter().all(|(_, same)| !same),
        "the test needs the lab's kubelets visible here and no kubelet of this machine: {kubelets:?}"
    );
    let out = Dnsfix::new(["facts", "--format", "json"]).output();
    let doc = json(&out);
    let kubelet = &doc["hosts"][0]["facts"]["kubelet"];
    assert_eq!(kubelet["pid"], Value::Null, "{kubelet:#}");
    assert_eq!(kubelet["version"], Value::Null, "{kubelet:#}");
}

/// Kubespray's documented bastion (`[bastion]`, `bastion ansible_host=X ansible_user=Y`):
/// every other host connects through it with Kubespray's default ProxyCommand. The node
/// behind it is at 127.0.0.1:22 as the bastion sees it (the bastion's own sshd, in its
/// namespace); from this machine, 127.0.0.1:22 is not the lab node (its known_hosts entry
/// names 127.0.0.1 with port 22, only the node's host key answers to it), so facts come back
/// only if ssh went through the bastion. The bastion itself is not a node. russh cannot run
/// a ProxyCommand and refuses the host, saying what to use.
#[test]
fn a_kubespray_bastion_carries_the_connection_with_openssh() {
    let lab = start(&["healthy"]);
    let node = &lab.nodes[0];
    let inventory = lab.dir.join("bastion.ini");
    std::fs::write(
        &inventory,
        format!(
            "[bastion]\nbastion ansible_host=127.0.0.1 ansible_port={port} ansible_user={user}\n\n\
             [kube_node]\nbehind ansible_host=127.0.0.1 ansible_port=22 ansible_user={user} ansible_ssh_private_key_file={key}\n",
            port = node.port,
            user = node.user,
            key = lab.key().display(),
        ),
    )
    .expect("write inventory");
    // The node's host key, recorded for 127.0.0.1 on port 22 (how ssh looks the proxied
    // host up).
    let prefix = format!("[127.0.0.1]:{} ", node.port);
    let known: String = std::fs::read_to_string(lab.known_hosts())
        .expect("known_hosts")
        .lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .map(|key| format!("127.0.0.1 {key}\n"))
        .collect();
    assert!(!known.is_empty(), "the node's host key");
    let known_hosts = lab.dir.join("known_hosts.behind");
    std::fs::write(&known_hosts, known).expect("write known_hosts");
    let run = |backend: &str| {
        Dnsfix::new(["facts", "--format", "json", "--no-progress"])
            .args(["--ssh-persist", "0", "--connect-timeout", "5"])
            .args(["--ssh-backend", backend, "-i"])
            .arg(&inventory)
            .arg("--known-hosts")
            .arg(&known_hosts)
            .env_remove("SSH_AUTH_SOCK")
            .output()
    };
    let out = run("openssh");
    let doc = json(&out);
    assert_eq!(out.status.code(), Some(0), "{doc:#}");
    assert_eq!(doc["hosts"].as_array().map(Vec::len), Some(1), "{doc:#}");
    assert_eq!(facts(&doc, "behind")["hostname"], node.name.as_str());

    let out = run("russh");
    assert_eq!(out.status.code(), Some(3));
    let doc = json(&out);
    let message = host(&doc, "behind")["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    for want in ["behind", "ansible_ssh_common_args", "--ssh-backend openssh"] {
        assert!(message.contains(want), "{want} in {message}");
    }
}
