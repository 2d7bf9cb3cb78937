//! End to end against a lab node with real systemd (the lab's systemd flavour,
//! `tests/lab/README.md`): a Debian bookworm booted by `systemd-nspawn`, where
//! `systemctl restart kubelet` restarts a real `kubelet.service` (Kubespray's unit, running
//! the lab's kubelet stand-in), `systemctl is-active` is systemd's answer, and
//! systemd-resolved writes its own stub and upstream files. A reboot is real too
//! (`lab.sh reboot`): the node's systemd boots again from the same disk, and
//! systemd-sysctl applies the node's sysctl files to kernel defaults.
//!
//! The flavour needs `systemd-nspawn` (systemd-container) and the cached rootfs
//! (`tests/lab/lab.sh rootfs --build`; `.ci/run` does both). Without them the test fails
//! and says so: it never skips.

use std::process::Output;
use std::time::Instant;

use crate::common::dnsfix::{Dnsfix, describe, host_result, run_record};
use crate::common::lab::Lab;
use dnsfix::apply::HostOutcome;
use dnsfix::apply::record::RunRecord;
use dnsfix::plan::model::HandlerAction;
use dnsfix::plan::{Change, HostStatus, Plan};
use serde_json::Value;

const SCENARIO: &str = "systemd-stub-symlink";
const HARDENED: &str = "systemd-hardened-forwarding";
const KUBELET_CONFIG: &str = "/etc/kubernetes/kubelet-config.yaml";
const HARDENING: &str = "/etc/sysctl.d/99-hardening.conf";

fn start_lab() -> Lab {
    start(SCENARIO)
}

fn start(scenario: &str) -> Lab {
    Lab::start(&[scenario]).unwrap_or_else(|e| {
        panic!(
            "the systemd lab could not start: {e}\n\
             It needs root, systemd-nspawn (apt-get install systemd-container) and the cached \
             rootfs (tests/lab/lab.sh rootfs --build, about a minute with deb.debian.org \
             reachable); .ci/run installs and builds both."
        )
    })
}

fn dnsfix(lab: &Lab, args: &[&str]) -> Output {
    Dnsfix::new(args)
        .lab_apply(lab, &lab.inventory())
        .args(["--connect-timeout", "5"])
        .output()
}

/// `systemctl show -p PROP --value UNIT` on the node (real systemd).
fn unit_prop(lab: &Lab, node: &str, unit: &str, prop: &str) -> String {
    lab.exec(node, &format!("systemctl show -p {prop} --value {unit}"))
        .trim()
        .to_owned()
}

/// `dnsfix check --format json`: its exit code and the node's findings.
fn check(lab: &Lab, node: &str) -> (Option<i32>, Vec<Value>) {
    let out = dnsfix(lab, &["check", "--format", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("check did not print JSON ({e}):\n{}", describe(&out)));
    let host = doc["hosts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|h| h["host"] == node)
        .unwrap_or_else(|| panic!("{node} is not in the report: {doc:#}"));
    let findings = host["findings"].as_array().cloned().unwrap_or_default();
    (out.status.code(), findings)
}

/// The finding `id` of `findings`: its severity and evidence.
fn finding(findings: &[Value], id: &str) -> (String, Vec<String>) {
    let f = findings
        .iter()
        .find(|f| f["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {findings:#?}"));
    let evidence = f["evidence"].as_array().into_iter().flatten();
    (
        f["severity"].as_str().unwrap_or_default().to_owned(),
        evidence
            .filter_map(|e| e.as_str().map(str::to_owned))
            .collect(),
    )
}

fn forwarding(lab: &Lab, node: &str) -> String {
    lab.exec(node, "cat /proc/sys/net/ipv4/ip_forward")
        .trim()
        .to_owned()
}

/// How often systemd started the kubelet in this boot, from its journal.
fn kubelet_starts(lab: &Lab, node: &str) -> usize {
    lab.exec(node, "journalctl -b -u kubelet.service -o cat --no-pager")
        .lines()
        .filter(|l| l.starts_with("Started kubelet.service"))
        .count()
}

/// The file's bytes, base64 (the node's files, byte for byte).
fn node_bytes(lab: &Lab, node: &str, path: &str) -> String {
    lab.exec(node, &format!("base64 -w0 {path}"))
}

fn node_sha(lab: &Lab, node: &str, path: &str) -> String {
    lab.exec(node, &format!("sha256sum {path} | cut -d' ' -f1"))
        .trim()
        .to_owned()
}

#[test]
fn apply_restarts_the_real_kubelet_unit_and_rollback_restores_the_bytes() {
    let t0 = Instant::now();
    let lab = start_lab();
    let node = lab.node(SCENARIO).name.clone();
    eprintln!(
        "systemd lab up in {} ms (lab.sh's own count: {:?} ms)",
        t0.elapsed().as_millis(),
        lab.startup_ms()
    );

    assert_real_systemd_node(&lab, &node);
    let original = node_bytes(&lab, &node, KUBELET_CONFIG);
    let original_sha = node_sha(&lab, &node, KUBELET_CONFIG);
    let boot_invocation = unit_prop(&lab, &node, "kubelet", "InvocationID");
    let boot_pid = unit_prop(&lab, &node, "kubelet", "MainPID");
    assert_eq!(kubelet_starts(&lab, &node), 1);

    // Plan: the kubelet reads the stub (R4); the fix points it at resolved's upstream file.
    let plan_path = lab.dir.join("plan.json");
    let plan_path = plan_path.to_str().expect("UTF-8 lab path");
    let out = dnsfix(&lab, &["plan", "-o", plan_path]);
    assert_eq!(out.status.code(), Some(2), "plan\n{}", describe(&out));
    let (before_sha, after_sha) = planned_kubelet_shas(plan_path, &node);
    assert_eq!(before_sha.as_deref(), Some(original_sha.as_str()));

    // Apply: a real `systemctl restart kubelet`, then systemd's is-active and the healthz.
    let t = Instant::now();
    let out = dnsfix(&lab, &["apply", plan_path, "--format", "json"]);
    eprintln!("apply took {} ms", t.elapsed().as_millis());
    assert_eq!(out.status.code(), Some(0), "apply\n{}", describe(&out));
    let record = run_record(&out);
    assert_applied_restarted_and_verified(&record, &node);
    assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), after_sha);
    assert!(
        lab.exec(&node, &format!("grep '^resolvConf:' {KUBELET_CONFIG}"))
            .contains("/run/systemd/resolve/resolv.conf"),
        "{}",
        lab.exec(&node, &format!("cat {KUBELET_CONFIG}"))
    );
    let applied_invocation = unit_prop(&lab, &node, "kubelet", "InvocationID");
    assert_ne!(
        applied_invocation, boot_invocation,
        "systemd did not start a new kubelet.service invocation"
    );
    assert_ne!(unit_prop(&lab, &node, "kubelet", "MainPID"), boot_pid);
    assert_eq!(unit_prop(&lab, &node, "kubelet", "ActiveState"), "active");
    assert_eq!(kubelet_starts(&lab, &node), 2, "one restart by apply");
    assert_eq!(
        lab.exec(&node, "curl -fsS http://127.0.0.1:10248/healthz"),
        "ok"
    );

    // Rollback: the original bytes, and another real restart.
    let run = record.run_id.clone();
    let t = Instant::now();
    let out = dnsfix(&lab, &["rollback", &run, "--yes", "--format", "json"]);
    eprintln!("rollback took {} ms", t.elapsed().as_millis());
    assert_eq!(out.status.code(), Some(0), "rollback\n{}", describe(&out));
    let record = run_record(&out);
    assert_eq!(record.rolls_back.as_deref(), Some(run.as_str()));
    assert_eq!(
        host_result(&record, &node).outcome,
        HostOutcome::Applied,
        "{record:#?}"
    );
    assert_eq!(
        node_bytes(&lab, &node, KUBELET_CONFIG),
        original,
        "rollback did not restore the original bytes"
    );
    let rolled_back_invocation = unit_prop(&lab, &node, "kubelet", "InvocationID");
    assert_ne!(rolled_back_invocation, applied_invocation);
    assert_eq!(unit_prop(&lab, &node, "kubelet", "ActiveState"), "active");
    assert_eq!(kubelet_starts(&lab, &node), 3, "one restart by rollback");
    // The kubelet runs with the original config again (the stand-in checks it at start).
    assert_eq!(
        lab.exec(&node, "curl -fsS http://127.0.0.1:10248/healthz"),
        "ok"
    );
    eprintln!("whole test {} ms", t0.elapsed().as_millis());
}

/// A kubelet that does not come back after apply's restart: the host fails, and its last
/// lines in the node's journal (real journald) come with the reason, saying why.
#[test]
fn an_unhealthy_kubelet_comes_with_its_journal_lines() {
    let lab = start_lab();
    let node = lab.node(SCENARIO).name.clone();
    let plan_path = lab.dir.join("plan.json");
    let plan_path = plan_path.to_str().expect("UTF-8 lab path");
    let out = dnsfix(&lab, &["plan", "-o", plan_path]);
    assert_eq!(out.status.code(), Some(2), "plan\n{}", describe(&out));
    // The kubelet binary now fails at once, saying why on stderr, which the journal keeps.
    lab.exec(
        &node,
        "rm -f /usr/local/bin/kubelet && \
         printf '#!/bin/sh\\necho \"E1129 stand-in: failed to load Kubelet config file\" >&2\\nexit 1\\n' \
           > /usr/local/bin/kubelet && chmod +x /usr/local/bin/kubelet",
    );
    let out = dnsfix(
        &lab,
        &[
            "apply",
            plan_path,
            "--health-timeout",
            "5",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(3), "apply\n{}", describe(&out));
    let record = run_record(&out);
    let host = host_result(&record, &node);
    assert_eq!(host.outcome, HostOutcome::Failed, "{host:#?}");
    let handler = &host.handlers[0];
    assert!(!handler.healthy, "{handler:?}");
    let mut lines = handler.message.lines();
    assert!(
        lines
            .next()
            .is_some_and(|l| l.starts_with("not healthy 5s after systemctl restart: unit is")),
        "{handler:?}"
    );
    assert!(
        lines.any(|l| l.contains("E1129 stand-in: failed to load Kubelet config file")),
        "no journal line: {handler:?}"
    );
    // The report: the reason on the handler's line, the journal's lines beneath it.
    let report = dnsfix::report::apply::text(&record, &[], false, None);
    assert!(
        report.lines().any(|l| l.starts_with("              | ")
            && l.contains("E1129 stand-in: failed to load Kubelet config file")),
        "{report}"
    );
    let error = host.error.as_deref().unwrap_or_default();
    assert!(
        error.starts_with("kubelet did not come back healthy: not healthy 5s")
            && !error.contains('\n'),
        "{error}"
    );
}

// The node really runs systemd, resolved and the kubelet unit.
fn assert_real_systemd_node(lab: &Lab, node: &str) {
    let init = lab.exec(node, "readlink /proc/1/exe");
    assert!(init.trim().ends_with("/systemd"), "PID 1 is {init}");
    assert_eq!(
        lab.exec(node, "systemctl is-system-running").trim(),
        "running"
    );
    assert_eq!(
        lab.exec(node, "systemctl is-active systemd-resolved kubelet ssh")
            .split_whitespace()
            .collect::<Vec<_>>(),
        ["active", "active", "active"]
    );
    let stub = lab.exec(node, "cat /etc/resolv.conf");
    assert!(
        stub.contains("managed by man:systemd-resolved") && stub.contains("nameserver 127.0.0.53"),
        "/etc/resolv.conf is not resolved's stub:\n{stub}"
    );
    let upstreams = lab.exec(node, "cat /run/systemd/resolve/resolv.conf");
    assert!(
        upstreams.contains("nameserver 192.0.2.53")
            && upstreams.contains("nameserver 198.51.100.53"),
        "{upstreams}"
    );
    assert_eq!(
        unit_prop(lab, node, "kubelet", "FragmentPath"),
        "/etc/systemd/system/kubelet.service"
    );
}

/// The kubelet config's sha256 before and after, as the saved plan at `plan_path` has them
/// for `node`.
fn planned_kubelet_shas(plan_path: &str, node: &str) -> (Option<String>, String) {
    let plan: Plan = serde_json::from_str(&std::fs::read_to_string(plan_path).expect("plan saved"))
        .expect("the saved plan reads back");
    let host = plan
        .hosts
        .iter()
        .find(|h| h.host == node)
        .expect("the node is planned");
    assert_eq!(host.status, HostStatus::Changes, "{host:#?}");
    host.changes
        .iter()
        .find_map(|c| match c {
            Change::WriteFile {
                path,
                before_sha256,
                after_sha256,
                ..
            } if path == KUBELET_CONFIG => Some((before_sha256.clone(), after_sha256.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("the plan writes no {KUBELET_CONFIG}: {host:#?}"))
}

/// Apply's record for `node`: applied, the kubelet restarted healthy, and the fix proven.
fn assert_applied_restarted_and_verified(record: &RunRecord, node: &str) {
    let result = host_result(record, node);
    assert_eq!(result.outcome, HostOutcome::Applied, "{result:#?}");
    let verified = result.verified.as_ref().expect("verified");
    assert!(verified.remaining.is_empty(), "{result:#?}");
    // The new file is proven by real queries: the node's own systemd-resolved uplink file
    // lists the upstream resolvers, and each answers from the node (dnsmasq, a real unit).
    let upstream: Vec<(&str, bool)> = verified
        .dns
        .iter()
        .filter(|p| p.probe.path == dnsfix::verify::Path::Upstream)
        .map(|p| (p.probe.server.as_str(), p.ok))
        .collect();
    assert_eq!(
        upstream,
        [("192.0.2.53", true), ("198.51.100.53", true)],
        "{result:#?}"
    );
    assert!(
        result
            .handlers
            .iter()
            .any(|h| h.unit == "kubelet" && h.action == HandlerAction::Restarted && h.healthy),
        "no healthy kubelet restart in {result:#?}"
    );
}

/// What a post-reboot runbook relies on, against real boots. The node's image turns
/// forwarding off at boot (`/etc/sysctl.d/99-hardening.conf`), and it was turned on by
/// hand only. dnsfix says it reverts at the next reboot and names that line; a real reboot
/// (systemd-sysctl applying the node's files) turns it off. apply persists it, changing
/// the hardening line too, and after a second real reboot it is on and the node is clean.
#[test]
fn forwarding_set_by_hand_reverts_at_a_real_reboot_and_the_applied_fix_survives_the_next() {
    let lab = start(HARDENED);
    let node = lab.node(HARDENED).name.clone();
    assert_real_systemd_node(&lab, &node);
    // The boot applied the image's hardening (and undid the lab's ip_forward=1).
    assert_eq!(forwarding(&lab, &node), "0");
    let first_boot = lab.exec(&node, "cat /proc/sys/kernel/random/boot_id");

    // On by hand, as an administrator does after kubeadm's preflight error.
    lab.exec(&node, "echo 1 > /proc/sys/net/ipv4/ip_forward");
    let (code, findings) = check(&lab, &node);
    assert_eq!(code, Some(2), "{findings:#?}");
    // The node's image carries Calico's conflist, whose felix turns forwarding on again
    // at every start on a real node: the boot's 0 would not last there, and dnsfix says a
    // later `sysctl --system` is what turns it off (a warning). This lab runs no felix.
    let (severity, evidence) = finding(&findings, "DNS-IP-FORWARD");
    assert_eq!(severity, "warning", "{evidence:?}");
    assert!(
        evidence
            .iter()
            .any(|e| e == &format!("{HARDENING}:1 sets net.ipv4.ip_forward = 0")),
        "{evidence:?}"
    );

    // A real reboot does what dnsfix said it would.
    lab.reboot(&node);
    assert_ne!(
        lab.exec(&node, "cat /proc/sys/kernel/random/boot_id"),
        first_boot
    );
    assert_eq!(forwarding(&lab, &node), "0", "the boot kept forwarding on");
    let (code, findings) = check(&lab, &node);
    assert_eq!(code, Some(2), "{findings:#?}");
    assert_eq!(finding(&findings, "DNS-IP-FORWARD").0, "critical");

    // The fix: persisted, the hardening line set to 1, the kubelet off the stub.
    let hardening = lab.exec(&node, &format!("cat {HARDENING}"));
    assert_applied_restarted_and_verified(&plan_and_apply(&lab), &node);
    assert_eq!(forwarding(&lab, &node), "1");
    assert_eq!(
        lab.exec(&node, &format!("cat {HARDENING}")),
        hardening.replacen("net.ipv4.ip_forward = 0", "net.ipv4.ip_forward = 1", 1),
        "only the one value changes"
    );
    assert!(
        lab.exec(&node, "cat /etc/sysctl.d/99-dnsfix.conf")
            .lines()
            .any(|l| l == "net.ipv4.ip_forward = 1")
    );

    // A second real reboot, from forwarding off: only the boot can turn it on.
    lab.exec(&node, "echo 0 > /proc/sys/net/ipv4/ip_forward");
    lab.reboot(&node);
    assert_eq!(
        forwarding(&lab, &node),
        "1",
        "the boot did not apply the fix"
    );
    assert_kubelet_up_and_node_clean(&lab, &node);
}

/// The same node hardened with the DISA RHEL 8/9 STIG's line instead,
/// `net.ipv4.conf.all.forwarding = 0` (RHEL-08-040259, whose check shows it in
/// 99-sysctl.conf): the kernel's other name for `net.ipv4.ip_forward`. A real boot turns
/// forwarding off by it; dnsfix names that line, and apply turns it on there, since a
/// `net.ipv4.ip_forward = 1` in 99-dnsfix.conf, applied before it, would be undone by it at
/// the next real reboot.
#[test]
fn the_stig_s_other_name_for_ip_forward_is_turned_on_and_survives_a_real_reboot() {
    let lab = start(HARDENED);
    let node = lab.node(HARDENED).name.clone();
    assert_real_systemd_node(&lab, &node);
    let stig = "net.ipv4.conf.all.forwarding = 0";
    lab.exec(
        &node,
        &format!("sed -i '1s/.*/{stig}/' {HARDENING} && echo 1 > /proc/sys/net/ipv4/ip_forward"),
    );
    assert_eq!(
        lab.exec(&node, &format!("head -1 {HARDENING}")).trim(),
        stig
    );

    // A real reboot applies it: forwarding off.
    lab.reboot(&node);
    assert_eq!(forwarding(&lab, &node), "0", "the boot kept forwarding on");
    let (code, findings) = check(&lab, &node);
    assert_eq!(code, Some(2), "{findings:#?}");
    let (severity, evidence) = finding(&findings, "DNS-IP-FORWARD");
    assert_eq!(severity, "critical", "{evidence:?}");
    assert!(
        evidence.iter().any(|e| e
            == &format!(
                "{HARDENING}:1 sets {stig} (the same kernel setting as net.ipv4.ip_forward)"
            )),
        "{evidence:?}"
    );

    let hardening = lab.exec(&node, &format!("cat {HARDENING}"));
    assert_applied_restarted_and_verified(&plan_and_apply(&lab), &node);
    assert_eq!(forwarding(&lab, &node), "1");
    assert_eq!(
        lab.exec(&node, &format!("cat {HARDENING}")),
        hardening.replacen(stig, "net.ipv4.conf.all.forwarding = 1", 1),
        "only the one value changes"
    );

    // A second real reboot, from forwarding off: only the boot can turn it on.
    lab.exec(&node, "echo 0 > /proc/sys/net/ipv4/ip_forward");
    lab.reboot(&node);
    assert_eq!(
        forwarding(&lab, &node),
        "1",
        "the boot did not apply the fix"
    );
    assert_kubelet_up_and_node_clean(&lab, &node);
}

/// `plan -o` (changes: exit 2), then `apply` of that plan (exit 0): its run record.
fn plan_and_apply(lab: &Lab) -> RunRecord {
    let plan_path = lab.dir.join("plan.json");
    let plan_path = plan_path.to_str().expect("UTF-8 lab path");
    let out = dnsfix(lab, &["plan", "-o", plan_path]);
    assert_eq!(out.status.code(), Some(2), "plan\n{}", describe(&out));
    let out = dnsfix(lab, &["apply", plan_path, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "apply\n{}", describe(&out));
    run_record(&out)
}

/// After a boot: the kubelet unit is active and serves its healthz, and `check` finds
/// nothing.
fn assert_kubelet_up_and_node_clean(lab: &Lab, node: &str) {
    assert_eq!(unit_prop(lab, node, "kubelet", "ActiveState"), "active");
    assert_eq!(
        lab.exec(node, "curl -fsS http://127.0.0.1:10248/healthz"),
        "ok"
    );
    let (code, findings) = check(lab, node);
    assert_eq!(code, Some(0), "{findings:#?}");
    assert!(findings.is_empty(), "{findings:#?}");
}

/// Whether the node resolves through its own /etc/resolv.conf: `getent -s dns` asks the
/// servers that file lists, and only them (systemd-resolved's stub answers `localhost`
/// itself; nothing else in the lab answers at all).
fn host_resolves_localhost(lab: &Lab, node: &str) -> bool {
    lab.exec_output(node, "getent -s dns hosts localhost")
        .status
        .success()
}

/// The kubelet on systemd-resolved's uplink file, which lists the lab's real servers: the
/// node as kubeadm or Kubespray leave a systemd-resolved node, clean.
fn kubelet_on_resolveds_uplink(lab: &Lab, node: &str) {
    lab.exec(
        node,
        &format!(
            "sed -i 's|^resolvConf:.*|resolvConf: \"/run/systemd/resolve/resolv.conf\"|' {KUBELET_CONFIG} && \
             systemctl restart kubelet"
        ),
    );
    assert!(host_resolves_localhost(lab, node));
    let (code, findings) = check(lab, node);
    assert_eq!(code, Some(0), "{findings:#?}");
}

/// `systemctl disable systemd-resolved` (without --now: it runs on until the reboot),
/// /etc/resolv.conf left as its link to the stub: the kubelet's resolvConf,
/// systemd-resolved's uplink file, and the host's resolver are there until the next reboot
/// and gone after it. check says so before the reboot (high for the kubelet, a warning for
/// the host); a real reboot bears it out (the file is gone, critical; the link points at
/// nothing, high; the lab's kubelet stand-in, stricter than a real kubelet, which runs on
/// and fails every pod sandbox, does not even start), and the node names no real server
/// any more, so the plan asks for one. With /etc/resolv.conf made a file as its finding
/// says, apply moves the kubelet to a file of its own under /etc, and the next real reboot
/// keeps both.
#[test]
fn a_kubelet_file_of_a_disabled_systemd_resolved_is_reported_before_a_real_reboot_takes_it() {
    let lab = start_lab();
    let node = lab.node(SCENARIO).name.clone();
    const UPLINK: &str = "/run/systemd/resolve/resolv.conf";
    const DANGLING: &str =
        "/etc/resolv.conf → symlink to ../run/systemd/resolve/stub-resolv.conf → no such file";
    // The node after an earlier fix (the kubelet on resolved's uplink file); then its
    // operators turn systemd-resolved off from the next boot.
    kubelet_on_resolveds_uplink(&lab, &node);
    lab.exec(&node, "systemctl disable systemd-resolved");
    assert_eq!(
        unit_prop(&lab, &node, "systemd-resolved", "ActiveState"),
        "active"
    );
    lab.exec(&node, &format!("test -s {UPLINK}"));
    let (code, findings) = check(&lab, &node);
    assert_eq!(code, Some(2), "{findings:#?}");
    let (severity, evidence) = finding(&findings, "DNS-KUBELET-RESOLVCONF-MISSING");
    assert_eq!(severity, "high", "{evidence:?}");
    assert!(
        evidence[0].contains(UPLINK)
            && evidence[0].contains(
                "systemd-resolved, which is active (systemctl is-active) and disabled (systemctl is-enabled)"
            ),
        "{evidence:?}"
    );
    let (severity, evidence) = finding(&findings, "DNS-HOST-RESOLVER-DOWN");
    assert_eq!(severity, "warning", "{evidence:?}");
    assert_eq!(
        evidence[1],
        "systemd-resolved is active (systemctl is-active) and disabled (systemctl is-enabled)"
    );

    // The plan, before the reboot: not resolved's uplink file, though resolved runs and the
    // file lists real servers (the next boot takes it), but a file of the kubelet's own.
    let out = dnsfix(&lab, &["plan"]);
    assert_eq!(out.status.code(), Some(2), "plan\n{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains(&format!("resolvConf: {UPLINK} → /etc/dnsfix/resolv.conf")),
        "plan\n{}",
        describe(&out)
    );

    // A real reboot takes the file, and with it the kubelet and the host's resolver.
    lab.reboot_units_may_fail(&node);
    assert_eq!(
        lab.exec_output(&node, &format!("test -e {UPLINK}"))
            .status
            .code(),
        Some(1),
        "{UPLINK} outlived the reboot"
    );
    assert_ne!(unit_prop(&lab, &node, "kubelet", "ActiveState"), "active");
    assert!(!host_resolves_localhost(&lab, &node));
    let (code, findings) = check(&lab, &node);
    assert_eq!(code, Some(2), "{findings:#?}");
    let (severity, evidence) = finding(&findings, "DNS-KUBELET-RESOLVCONF-MISSING");
    assert_eq!(severity, "critical", "{evidence:?}");
    let (severity, evidence) = finding(&findings, "DNS-HOST-RESOLVER-DOWN");
    assert_eq!(
        (severity.as_str(), evidence[0].as_str()),
        ("high", DANGLING)
    );

    assert_eq!(
        evidence.len(),
        2,
        "no server is known any more: {evidence:?}"
    );

    // With both files gone the node names no real server: the plan asks for one rather
    // than guess.
    let out = dnsfix(&lab, &["plan"]);
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("No real upstream DNS server is known for this node"),
        "plan\n{}",
        describe(&out)
    );

    // The host's fix as its finding gives it, a file of the node's own; then the plan takes
    // the servers from there and gives the kubelet a file of its own.
    lab.exec(
        &node,
        "rm /etc/resolv.conf && printf 'nameserver %s\\n' 192.0.2.53 198.51.100.53 > /etc/resolv.conf",
    );
    assert_eq!(
        finding(&check(&lab, &node).1, "DNS-KUBELET-RESOLVCONF-MISSING").0,
        "critical"
    );
    plan_and_apply(&lab);
    assert_eq!(unit_prop(&lab, &node, "kubelet", "ActiveState"), "active");
    assert!(
        lab.exec(&node, &format!("grep '^resolvConf:' {KUBELET_CONFIG}"))
            .contains("/etc/dnsfix/resolv.conf")
    );

    // The next real reboot keeps both: the kubelet starts and the node is clean.
    lab.reboot(&node);
    assert_kubelet_up_and_node_clean(&lab, &node);
}

/// `systemctl stop systemd-resolved` leaves /etc/resolv.conf, Ubuntu's link to its stub,
/// resolving to 127.0.0.53, where nothing answers now: the node's own lookups fail while
/// the kubelet's file, still in /run, looks fine. check says so (high) and names the fix,
/// which is to start it again: it is enabled.
#[test]
fn a_stopped_systemd_resolved_leaves_the_node_without_a_resolver_until_it_starts() {
    let lab = start_lab();
    let node = lab.node(SCENARIO).name.clone();
    kubelet_on_resolveds_uplink(&lab, &node);

    lab.exec(&node, "systemctl stop systemd-resolved");
    assert!(
        !host_resolves_localhost(&lab, &node),
        "a stub nobody answers resolved"
    );
    let (code, findings) = check(&lab, &node);
    assert_eq!(code, Some(2), "{findings:#?}");
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let (severity, evidence) = finding(&findings, "DNS-HOST-RESOLVER-DOWN");
    assert_eq!(severity, "high", "{evidence:?}");
    assert_eq!(
        evidence,
        [
            "/etc/resolv.conf → symlink to ../run/systemd/resolve/stub-resolv.conf → \
             /run/systemd/resolve/stub-resolv.conf: nameserver 127.0.0.53 (line 21); \
             /proc/net/udp, /proc/net/udp6: no UDP socket on port 53 there or on every address",
            "systemd-resolved is inactive (systemctl is-active) and enabled (systemctl is-enabled)",
            "/run/systemd/resolve/resolv.conf, systemd-resolved's list of the real servers, \
             names 192.0.2.53, 198.51.100.53",
        ]
    );
    assert!(
        findings[0]["remediation"]
            .as_str()
            .is_some_and(|r| r.starts_with("start systemd-resolved")),
        "{findings:#?}"
    );

    // The fix as the finding gives it.
    lab.exec(&node, "systemctl start systemd-resolved");
    assert!(host_resolves_localhost(&lab, &node));
    let (code, findings) = check(&lab, &node);
    assert_eq!(code, Some(0), "{findings:#?}");
}

/// `DNSStubListener=no` (Kubespray's systemd_resolved_disable_stub_listener, its default on
/// Flatcar): real systemd-resolved (Debian bookworm's 252) stops answering on 127.0.0.53
/// and, since systemd 246, links its stub file to its uplink file, so a node on the usual
/// link to the stub keeps resolving and is clean. A node whose /etc/resolv.conf is the
/// static stub, /usr/lib/systemd/resolv.conf, still asks 127.0.0.53, where nothing answers
/// now: high, read from the kernel's socket table, with the uplink file as the fix.
#[test]
fn systemd_resolved_without_its_stub_listener_is_judged_by_what_listens() {
    let lab = start_lab();
    let node = lab.node(SCENARIO).name.clone();
    kubelet_on_resolveds_uplink(&lab, &node);

    lab.exec(
        &node,
        "mkdir -p /etc/systemd/resolved.conf.d && \
         printf '[Resolve]\\nDNSStubListener=no\\n' > /etc/systemd/resolved.conf.d/kubespray.conf && \
         systemctl restart systemd-resolved",
    );
    assert_eq!(
        lab.exec(&node, "readlink /run/systemd/resolve/stub-resolv.conf")
            .trim(),
        "resolv.conf",
        "systemd-resolved links its stub file to its uplink file"
    );
    assert!(
        host_resolves_localhost(&lab, &node),
        "the uplink servers answer"
    );
    let (code, findings) = check(&lab, &node);
    assert_eq!(code, Some(0), "{findings:#?}");

    lab.exec(
        &node,
        "ln -sfn ../usr/lib/systemd/resolv.conf /etc/resolv.conf",
    );
    assert!(
        !host_resolves_localhost(&lab, &node),
        "the static stub resolved with the stub listener off"
    );
    let (code, findings) = check(&lab, &node);
    assert_eq!(code, Some(2), "{findings:#?}");
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let (severity, evidence) = finding(&findings, "DNS-HOST-RESOLVER-DOWN");
    assert_eq!(severity, "high", "{evidence:?}");
    assert!(
        evidence[0].ends_with(
            "/proc/net/udp, /proc/net/udp6: no UDP socket on port 53 there or on every address"
        ),
        "{evidence:?}"
    );
    assert!(
        findings[0]["summary"]
            .as_str()
            .is_some_and(|s| s.contains("systemd-resolved runs but does not listen there")),
        "{findings:#?}"
    );
    assert!(
        findings[0]["remediation"].as_str().is_some_and(|r| r
            .starts_with("link /etc/resolv.conf to systemd-resolved's list of the real servers")),
        "{findings:#?}"
    );

    // The fix as the finding gives it.
    lab.exec(
        &node,
        "ln -sfn ../run/systemd/resolve/resolv.conf /etc/resolv.conf",
    );
    let (code, findings) = check(&lab, &node);
    assert_eq!(code, Some(0), "{findings:#?}");
}

/// Whether the node resolves `name` through its own /etc/resolv.conf (`getent -s dns`):
/// systemd-resolved answers a name of the outside world only from a server it asks (the
/// lab's upstreams answer every name).
fn host_resolves(lab: &Lab, node: &str, name: &str) -> bool {
    lab.exec_output(node, &format!("getent -s dns hosts {name}"))
        .status
        .success()
}

/// systemd-resolved with no server to ask (netplan without `nameservers`, DHCP DNS
/// ignored): it still answers on its stub, and fails every lookup, so the node's own
/// resolver is down though something listens there. Its uplink file says so ("# No DNS
/// servers known.", no FallbackDNS= in Debian's build): check reports it (high) beside the
/// kubelet's file without a server, and the fix as the finding gives it, a DNS= drop-in
/// and a restart, makes the node clean again.
#[test]
fn a_systemd_resolved_without_servers_leaves_the_node_without_a_resolver() {
    const DROPIN: &str = "/etc/systemd/resolved.conf.d/upstreams.conf";
    let lab = start_lab();
    let node = lab.node(SCENARIO).name.clone();
    kubelet_on_resolveds_uplink(&lab, &node);
    assert!(host_resolves(&lab, &node, "registry.example"));

    lab.exec(
        &node,
        &format!("mv {DROPIN} /root/upstreams.conf && systemctl restart systemd-resolved"),
    );
    assert!(
        lab.exec(&node, "cat /run/systemd/resolve/resolv.conf")
            .contains("# No DNS servers known."),
        "systemd-resolved knows no server"
    );
    assert!(
        !host_resolves(&lab, &node, "registry.example"),
        "systemd-resolved answers on its stub, with a failure"
    );
    let (code, findings) = check(&lab, &node);
    assert_eq!(code, Some(2), "{findings:#?}");
    let (severity, evidence) = finding(&findings, "DNS-HOST-RESOLVER-DOWN");
    assert_eq!(severity, "high", "{evidence:?}");
    assert!(
        evidence[0].ends_with(
            "/run/systemd/resolve/resolv.conf, systemd-resolved's list of the servers it asks: no nameserver line, and `# No DNS servers known.`"
        ),
        "{evidence:?}"
    );
    let down = findings
        .iter()
        .find(|f| f["id"] == "DNS-HOST-RESOLVER-DOWN")
        .expect("the finding");
    assert!(
        down["remediation"]
            .as_str()
            .is_some_and(|r| r.starts_with("give systemd-resolved the real servers")),
        "{down:#}"
    );
    let (severity, _) = finding(&findings, "DNS-KUBELET-RESOLVCONF-MISSING");
    assert_eq!(severity, "critical", "{findings:#?}");

    // The fix as the finding gives it.
    lab.exec(
        &node,
        &format!("mv /root/upstreams.conf {DROPIN} && systemctl restart systemd-resolved"),
    );
    assert!(host_resolves(&lab, &node, "registry.example"));
    let (code, findings) = check(&lab, &node);
    assert_eq!(code, Some(0), "{findings:#?}");
}

/// What dnsfix says of systemd-resolved's start at boot is what real systemd's
/// `systemctl is-enabled` says, in every state an operator leaves it in; where its links
/// make it `enabled`, gather.sh tells it from them and starts no systemctl for it (a
/// wrapper on the node's PATH notes every systemctl the gather starts), and asks systemctl
/// everywhere else.
#[test]
fn systemd_resolveds_start_at_boot_is_what_systemctl_is_enabled_says() {
    let lab = start_lab();
    let node = lab.node(SCENARIO).name.clone();
    const CALLS: &str = "/run/dnsfix-test-systemctl.calls";
    lab.exec(
        &node,
        &format!(
            "printf '#!/bin/sh\\nprintf \"%%s\\\\n\" \"$*\" >> {CALLS}\\nexec /usr/bin/systemctl \"$@\"\\n' \
             > /usr/local/sbin/systemctl && chmod +x /usr/local/sbin/systemctl"
        ),
    );
    let steps = enablement_steps();
    let mut seen = Vec::new();
    for (name, change, linked) in steps {
        lab.exec(&node, &change);
        let reference = lab
            .exec_output(&node, "/usr/bin/systemctl is-enabled systemd-resolved")
            .stdout;
        let reference = String::from_utf8_lossy(&reference).trim().to_owned();
        lab.exec(&node, &format!(": > {CALLS}"));
        let out = dnsfix(&lab, &["facts", "--format", "json"]);
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("facts did not print JSON ({e}):\n{}", describe(&out)));
        let said = doc["hosts"][0]["facts"]["services"]["systemd_resolved_enabled"].clone();
        assert_eq!(
            said.as_str(),
            Some(reference.as_str()),
            "{name}: dnsfix says {said}, systemctl is-enabled {reference:?}"
        );
        let calls = lab.exec(&node, &format!("cat {CALLS}"));
        assert_eq!(
            calls.lines().any(|l| l == "is-enabled systemd-resolved"),
            !linked,
            "{name}: the gather's systemctl calls: {calls:?}"
        );
        seen.push(reference);
    }
    lab.exec(
        &node,
        "rm /usr/local/sbin/systemctl && systemctl unmask systemd-resolved && \
         systemctl enable systemd-resolved",
    );
    // The steps went through these states of systemctl's own.
    for state in [
        "enabled",
        "disabled",
        "enabled-runtime",
        "masked-runtime",
        "masked",
    ] {
        assert!(
            seen.iter().any(|s| s == state),
            "{state} not seen: {seen:?}"
        );
    }
}

/// The states systemd_resolveds_start_at_boot_is_what_systemctl_is_enabled_says takes the
/// node through: each step changes the node from the one before; the last word is whether
/// the links alone tell.
fn enablement_steps() -> Vec<(&'static str, String, bool)> {
    let wants = "/etc/systemd/system/sysinit.target.wants/systemd-resolved.service";
    let other = "/etc/systemd/system/multi-user.target.wants/systemd-resolved.service";
    let null = "/etc/systemd/system/dnsfix-test.target.wants/systemd-resolved.service";
    let dropins = "/etc/systemd/system/systemd-resolved.service.d";
    vec![
        ("as the package leaves it", "true".into(), true),
        (
            "disabled",
            "systemctl disable systemd-resolved".into(),
            false,
        ),
        (
            "enabled until the next boot",
            "systemctl enable --runtime systemd-resolved".into(),
            false,
        ),
        (
            "masked until the next boot",
            "systemctl disable --runtime systemd-resolved && \
             systemctl mask --runtime systemd-resolved"
                .into(),
            false,
        ),
        (
            "enabled again",
            "systemctl unmask --runtime systemd-resolved && systemctl enable systemd-resolved"
                .into(),
            true,
        ),
        (
            "a drop-in of its own",
            format!("mkdir -p {dropins} && printf '[Service]\\n' > {dropins}/10-test.conf"),
            false,
        ),
        (
            "its wants link made by hand in another target",
            format!(
                "rm -r {dropins} && rm {wants} && mkdir -p {} && \
                 ln -s /lib/systemd/system/systemd-resolved.service {other}",
                dirname(other)
            ),
            true,
        ),
        (
            "a wants link of its name that leads to /dev/null",
            format!(
                "rm {other} && mkdir -p {} && ln -s /dev/null {null}",
                dirname(null)
            ),
            true,
        ),
        (
            "a copy of the unit file in /etc",
            format!(
                "rm -r {} && systemctl enable systemd-resolved && \
                 cp /lib/systemd/system/systemd-resolved.service /etc/systemd/system/ && \
                 systemctl daemon-reload",
                dirname(null)
            ),
            false,
        ),
        (
            "masked",
            "rm /etc/systemd/system/systemd-resolved.service && systemctl daemon-reload && \
             systemctl mask systemd-resolved"
                .into(),
            false,
        ),
    ]
}

/// The directory part of an absolute path.
fn dirname(path: &str) -> &str {
    path.rsplit_once('/').map_or("/", |(d, _)| d)
}

/// The node's systemd (PID 1) stopped with SIGSTOP for as long as this lives: systemctl's
/// connection waits on it as on a PID 1 too busy to answer (sd-bus's auth timeout, 90 s).
/// Dropped (also when the test fails), it gets SIGCONT.
struct StoppedPid1(i32);

impl StoppedPid1 {
    fn new(lab: &Lab, node: &str) -> StoppedPid1 {
        let file = lab.dir.join("nodes").join(node).join("init.pid");
        let pid: i32 = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
            .trim()
            .parse()
            .expect("init.pid holds a pid");
        assert_eq!(
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .map(|c| c.trim().to_owned())
                .ok(),
            Some("systemd".to_owned()),
            "{}: pid {pid} is not the node's systemd",
            file.display()
        );
        signal(pid, "STOP");
        StoppedPid1(pid)
    }
}

impl Drop for StoppedPid1 {
    fn drop(&mut self) {
        signal(self.0, "CONT");
    }
}

fn signal(pid: i32, name: &str) {
    let status = std::process::Command::new("kill")
        .args([format!("-{name}"), pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{name} {pid}: {status}");
}

/// A node whose systemd does not answer (a reboot with hundreds of kubelet mounts to make
/// holds PID 1 for minutes: kubernetes/kubernetes#79194): the real systemctl waits 90 s on
/// it. The gather stops it after a sixth of the command timeout and keeps every other fact
/// (before, the whole gather ran into the command timeout and the node read as
/// unreachable, with no facts); the units' states are unknown and say why; apply writes
/// nothing where the plan needs a restart. Once systemd runs again, all is as before.
#[test]
fn a_node_whose_systemd_does_not_answer_keeps_its_facts_and_apply_writes_nothing() {
    let lab = start_lab();
    let node = lab.node(SCENARIO).name.clone();
    let plan_path = lab.dir.join("plan.json");
    let plan_path = plan_path.to_str().expect("UTF-8 lab path");
    let out = dnsfix(&lab, &["plan", "-o", plan_path]);
    assert_eq!(out.status.code(), Some(2), "plan\n{}", describe(&out));
    let original_sha = node_sha(&lab, &node, KUBELET_CONFIG);

    let stopped = StoppedPid1::new(&lab, &node);
    let t = Instant::now();
    let out = dnsfix(
        &lab,
        &["facts", "--format", "json", "--command-timeout", "20"],
    );
    let took = t.elapsed();
    assert_eq!(out.status.code(), Some(0), "facts\n{}", describe(&out));
    assert!(took.as_secs() < 15, "facts took {took:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!(
            "warning: {node}: systemctl did not answer within 3s (systemd, PID 1, busy or \
             stuck): its units' states are unknown, and no restart is planned or applied there"
        )),
        "{}",
        describe(&out)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("facts JSON");
    let facts = &doc["hosts"][0]["facts"];
    let services = &facts["services"];
    assert_eq!(services["systemctl_cut"], 3, "20 s / 6: {services:#}");
    assert_eq!(services["systemd_resolved"], "unknown", "{services:#}");
    assert_eq!(services["kubelet_unit_state"], "unknown", "{services:#}");
    // What the systemctl calls do not give is all there: the kubelet's config and process.
    assert_eq!(
        facts["kubelet"]["resolv_conf"]["value"]["value"], "/etc/resolv.conf",
        "{:#}",
        facts["kubelet"]
    );
    assert!(facts["kubelet"]["pid"].is_u64(), "{:#}", facts["kubelet"]);

    // check still finds the kubelet on the stub, from the files.
    let (code, findings) = check(&lab, &node);
    assert_eq!(code, Some(2), "{findings:#?}");
    let (severity, _) = finding(&findings, "DNS-KUBELET-LOOPBACK");
    assert_eq!(severity, "critical");

    // A plan made now blocks the fix that needs the restart, saying why: which unit runs
    // the kubelet is not known while systemd does not answer.
    let stalled = lab.dir.join("stalled-plan.json");
    let stalled = stalled.to_str().expect("UTF-8 lab path");
    let out = dnsfix(&lab, &["plan", "-o", stalled, "--command-timeout", "20"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("kubelet-resolvconf: its changes need `restart kubelet`, and systemctl did not answer within 3s")
            && !text.contains("\n  handlers:"),
        "{}",
        describe(&out)
    );

    // apply: the plan restarts the kubelet, which systemd cannot do now: nothing written.
    let out = dnsfix(
        &lab,
        &[
            "apply",
            plan_path,
            "--format",
            "json",
            "--command-timeout",
            "20",
        ],
    );
    assert_eq!(out.status.code(), Some(3), "apply\n{}", describe(&out));
    let record = run_record(&out);
    let host = host_result(&record, &node);
    assert_eq!(host.outcome, HostOutcome::Failed, "{record:#?}");
    let error = host.error.clone().unwrap_or_default();
    assert!(
        error.contains("`systemctl restart kubelet`")
            && error.contains("did not answer within 3s")
            && error.contains("nothing was written"),
        "{error}"
    );
    assert_eq!(node_sha(&lab, &node, KUBELET_CONFIG), original_sha);

    // systemd runs again: its answers are back, and the plan applies.
    drop(stopped);
    let out = dnsfix(&lab, &["facts", "--format", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("facts JSON");
    let services = &doc["hosts"][0]["facts"]["services"];
    assert!(services.get("systemctl_cut").is_none(), "{services:#}");
    assert_eq!(services["systemd_resolved"], "active", "{services:#}");
    let out = dnsfix(&lab, &["apply", plan_path, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "apply\n{}", describe(&out));
    assert_applied_restarted_and_verified(&run_record(&out), &node);
}
