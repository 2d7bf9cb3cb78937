//! End to end: `dnsfix plan` against the real-sshd lab, with a Kubespray-shaped inventory
//! (the lab's hosts file plus `group_vars/all/all.yml` naming the real upstream servers).
//!
//! - every scenario plans exactly the reviewed change (an insta snapshot of the whole text
//!   plan, with only the per-run lab path masked), the healthy nodes none, and the exit
//!   code is 2;
//! - planning is read-only: no file on a node changes and nothing is restarted;
//! - a second plan prints the same text, and the saved plan reads back as the same plan,
//!   with digests that match the files on the nodes;
//! - exit 0 when nothing changes, 3 when a node cannot be reached;
//! - docs/plan.md's example is what its lab command prints.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::dnsfix::{Dnsfix, stderr};
use crate::common::lab::{ALL_SCENARIOS, Lab};
use crate::common::masters::{close_masters, logins, private_dir};
use dnsfix::plan::{Change, HostPlan, HostStatus, Plan};

fn plan(inventory: &Path, lab: &Lab, extra: &[&str]) -> Output {
    Dnsfix::new(["plan"])
        .lab(lab, inventory)
        .args(["--connect-timeout", "5", "--color", "never"])
        .args(extra)
        .output()
}

/// The lab's inventory laid out as Kubespray's: `hosts.yaml` and `group_vars/all/all.yml`
/// with the upstream servers (the lab's documentation addresses) and Kubespray's comments.
fn kubespray_inventory(lab: &Lab) -> PathBuf {
    lab.kubespray_inventory(
        "---\n\
         ## Upstream dns servers\n\
         upstream_dns_servers:\n\
         \x20 - 192.0.2.53\n\
         \x20 - 198.51.100.53\n\
         \n\
         ## Set these proxy values in order to update package manager and docker daemon to use proxies\n\
         # http_proxy: \"\"\n\
         loadbalancer_apiserver_localhost: true\n",
    )
}

/// Masks what differs between runs: the lab's directory.
fn masked(text: &str, lab: &Lab) -> String {
    text.replace(&lab.dir.display().to_string(), "<lab>")
}

/// `dnsfix show FILE` and its options.
fn show(file: &Path, extra: &[&str]) -> Output {
    Dnsfix::new([OsStr::new("show"), file.as_os_str()])
        .args(["--color", "never"])
        .args(extra)
        .output()
}

/// A saved plan read offline: `show` prints exactly what `plan` printed; the Markdown of
/// `plan --format markdown` and of `show --format markdown` are the same document, valid
/// Markdown (only dnsfix's own HTML, balanced; one fenced diff per file change; no link),
/// and reviewed as a snapshot; `--limit kube_node` keeps exactly the inventory's
/// kube_node hosts.
fn review_renderings(lab: &Lab, inventory: &Path, saved: &Path, text: &str) {
    let out = show(saved, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        text,
        "show renders the saved plan as plan printed it"
    );
    let sha = dnsfix::util::sha256_hex(&std::fs::read(saved).expect("read plan"));
    assert!(
        stderr(&out).contains(&format!("sha256 {sha}")),
        "{}",
        stderr(&out)
    );

    let saved_md = lab.dir.join("plan-md.json");
    let out = plan(
        inventory,
        lab,
        &[
            "-o",
            saved_md.to_str().expect("utf-8"),
            "--format",
            "markdown",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let markdown = String::from_utf8_lossy(&out.stdout).into_owned();
    let out = show(&saved_md, &["--format", "markdown"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), markdown);
    let doc: Plan =
        serde_json::from_str(&std::fs::read_to_string(&saved_md).expect("read")).expect("plan");
    let sha = dnsfix::util::sha256_hex(&std::fs::read(&saved_md).expect("read"));
    assert!(
        markdown.contains(&sha),
        "the Markdown names the file's sha256"
    );
    check_markdown(&markdown, &doc);
    let masked_md = masked(&markdown, lab)
        .replace(&sha, "<sha256>")
        .replace(&doc.created, "<created>")
        .replace(
            doc.inventory.as_ref().map_or("-", |i| i.sha256.as_str()),
            "<inventory sha256>",
        );
    insta::assert_snapshot!("fleet_plan_markdown", masked_md);

    let out = show(saved, &["--limit", "kube_node", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let part: Plan = serde_json::from_slice(&out.stdout).expect("json");
    let listed = Dnsfix::new([
        "inventory",
        "--format",
        "json",
        "--limit",
        "kube_node",
        "-i",
    ])
    .arg(inventory)
    .output();
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("json");
    let want: Vec<&str> = listed["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .map(|h| h["name"].as_str().expect("name"))
        .collect();
    let got: Vec<&str> = part.hosts.iter().map(|h| h.host.as_str()).collect();
    assert!(!want.is_empty());
    assert_eq!(got, want);
    assert_eq!(part.summary.hosts, want.len());
}

/// What GitHub and GitLab will make of the Markdown, read with a CommonMark parser.
fn check_markdown(markdown: &str, plan: &Plan) {
    use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
    let mut open_details = 0i32;
    let mut fences = 0;
    for event in Parser::new_ext(markdown, Options::ENABLE_TABLES) {
        match event {
            Event::Html(h) | Event::InlineHtml(h) => {
                let h = h.trim();
                if h.starts_with("<details><summary>") {
                    open_details += 1;
                } else if h == "</details>" {
                    open_details -= 1;
                } else {
                    panic!("HTML that dnsfix did not write: {h:?}");
                }
            }
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                assert_eq!(&*info, "diff");
                fences += 1;
            }
            Event::Start(Tag::CodeBlock(CodeBlockKind::Indented)) => {
                panic!("an indented code block: something is not where it belongs")
            }
            Event::Start(Tag::Link { .. } | Tag::Image { .. }) => panic!("a link"),
            Event::End(TagEnd::CodeBlock) => {}
            _ => {}
        }
    }
    assert_eq!(open_details, 0, "unbalanced <details>");
    // Hosts with the same plan share a section: at least one fence per distinct change,
    // at most one per change.
    let files: usize = plan
        .hosts
        .iter()
        .flat_map(|h| &h.changes)
        .filter(|c| matches!(c, Change::WriteFile { .. }))
        .count()
        + plan.inventory_changes.len()
        + plan.cluster_changes.len();
    assert!(
        fences > 0 && fences <= files,
        "{fences} fences, {files} file changes"
    );
}

/// sha256 of every file a plan touches, as the node has it now.
fn node_digests(lab: &Lab, plan: &Plan) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for host in &plan.hosts {
        for change in &host.changes {
            if let Change::WriteFile { path, .. } = change {
                let sum = lab.exec(
                    &host.host,
                    &format!("sha256sum {path} 2>/dev/null || echo missing"),
                );
                out.push((host.host.clone(), path.clone(), sum));
            }
        }
    }
    out
}

#[test]
fn every_scenario_plans_exactly_its_fix() {
    let lab = Lab::start(&[ALL_SCENARIOS, &["healthy"]].concat())
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let inventory = kubespray_inventory(&lab);
    let saved = lab.dir.join("plan.json");

    let out = plan(
        &inventory,
        &lab,
        &["-o", saved.to_str().expect("utf-8 path")],
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "exit 2 with changes; stderr:\n{}",
        stderr(&out)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    insta::assert_snapshot!("fleet_plan", masked(&text, &lab));
    review_renderings(&lab, &inventory, &saved, &text);

    let saved_plan: Plan =
        serde_json::from_str(&std::fs::read_to_string(&saved).expect("plan saved"))
            .expect("the saved plan reads back");
    let by_host = |scenario: &str| {
        let name = &lab.node(scenario).name;
        saved_plan
            .hosts
            .iter()
            .find(|h| &h.host == name)
            .unwrap_or_else(|| panic!("{name} is not in the plan"))
    };
    for clean in ["healthy", "kubeadm", "sudo-user"] {
        let host = by_host(clean);
        assert_eq!(host.status, HostStatus::Clean, "{clean}: {host:#?}");
        assert!(
            host.changes.is_empty() && host.handlers.is_empty(),
            "{clean}: {host:#?}"
        );
    }

    stub_symlink_changes_one_line(by_host("stub-symlink"));
    kubespray_loop_gets_an_upstream_file(by_host("kubespray-loop"));
    brnf_off_sets_and_persists_sysctls(by_host("brnf-off"));
    stray_search_is_a_note(by_host("stray-search"));
    assert_digests_are_the_nodes_files(&lab, &saved_plan);
    assert_a_second_plan_is_read_only(&lab, &inventory, &saved_plan, &text);
}

/// The stub symlink: one line of the kubelet config, and a kubelet restart.
fn stub_symlink_changes_one_line(stub: &HostPlan) {
    let [
        Change::WriteFile {
            path,
            before,
            content,
            ..
        },
    ] = stub.changes.as_slice()
    else {
        panic!("stub-symlink: expected one file change: {stub:#?}");
    };
    assert_eq!(path, "/etc/kubernetes/kubelet-config.yaml");
    let before = before.as_deref().expect("the file exists");
    let changed: Vec<(&str, &str)> = before
        .lines()
        .zip(content.lines())
        .filter(|(a, b)| a != b)
        .collect();
    assert_eq!(
        changed,
        [(
            r#"resolvConf: "/etc/resolv.conf""#,
            r#"resolvConf: "/run/systemd/resolve/resolv.conf""#
        )]
    );
    assert_eq!(before.lines().count(), content.lines().count());
    assert_eq!(stub.handlers.len(), 1);
    assert_eq!(stub.handlers[0].unit, "kubelet");
    assert_eq!(stub.fixes, ["DNS-KUBELET-LOOPBACK", "DNS-POD-LOOP"]);
}

/// The Kubespray loop: a dnsfix-owned upstream file for the kubelet, real servers in the
/// node's own resolv.conf after nodelocaldns.
fn kubespray_loop_gets_an_upstream_file(looped: &HostPlan) {
    let paths: Vec<&str> = looped
        .changes
        .iter()
        .filter_map(|c| match c {
            Change::WriteFile { path, .. } => Some(path.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        paths,
        [
            "/etc/dnsfix/resolv.conf",
            "/etc/kubernetes/kubelet-config.yaml",
            "/etc/resolv.conf"
        ]
    );
    assert_eq!(looped.fixes, ["DNS-CLUSTER-SELF-FORWARD", "DNS-POD-LOOP"]);
    assert!(looped.remaining.is_empty(), "{looped:#?}");
}

/// br_netfilter: live values and their persistence, no restart.
fn brnf_off_sets_and_persists_sysctls(brnf: &HostPlan) {
    let sysctls: Vec<(&str, Option<&str>, &str)> = brnf
        .changes
        .iter()
        .filter_map(|c| match c {
            Change::Sysctl {
                name,
                before,
                after,
                ..
            } => Some((name.as_str(), before.as_deref(), after.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        sysctls,
        [
            ("net.bridge.bridge-nf-call-iptables", Some("0"), "1"),
            ("net.bridge.bridge-nf-call-ip6tables", Some("0"), "1"),
        ]
    );
    assert!(brnf.handlers.is_empty());
}

/// Stray search domains are opt-in: a note, no change.
fn stray_search_is_a_note(stray: &HostPlan) {
    assert!(stray.changes.is_empty(), "{stray:#?}");
    assert!(
        stray
            .notes
            .iter()
            .any(|n| n.message.contains("dnsfix_strip_search_domains"))
    );
}

/// The digests are the nodes' files as they are.
fn assert_digests_are_the_nodes_files(lab: &Lab, saved_plan: &Plan) {
    for host in &saved_plan.hosts {
        let Some(facts) = &host.facts else { continue };
        let node_boot = lab.exec(&host.host, "cat /proc/sys/kernel/random/boot_id");
        assert_eq!(
            facts.boot_id.as_deref(),
            Some(node_boot.trim()),
            "{}",
            host.host
        );
        for (path, digest) in &facts.files {
            if let Some(sha) = &digest.sha256 {
                let sum = lab.exec(&host.host, &format!("sha256sum {path}"));
                assert!(
                    sum.starts_with(sha.as_str()),
                    "{} {path}: {sum} vs {sha}",
                    host.host
                );
            }
        }
    }
}

/// Read-only: a second plan prints the same, nothing changed on the nodes, nothing
/// was restarted.
fn assert_a_second_plan_is_read_only(lab: &Lab, inventory: &Path, saved_plan: &Plan, text: &str) {
    let digests = node_digests(lab, saved_plan);
    let again = plan(inventory, lab, &["--format", "json"]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    let mut json_plan: Plan = serde_json::from_slice(&again.stdout).expect("json plan");
    json_plan.created = saved_plan.created.clone();
    assert_eq!(
        json_plan, *saved_plan,
        "a second plan (as JSON) differs from the saved one"
    );
    let text_again = plan(inventory, lab, &[]);
    assert_eq!(
        String::from_utf8_lossy(&text_again.stdout),
        text,
        "a second text plan differs"
    );
    assert_eq!(
        node_digests(lab, saved_plan),
        digests,
        "plan changed a file on a node"
    );
    for node in &lab.nodes {
        let restarts: Vec<String> = lab
            .systemctl_calls(&node.name)
            .into_iter()
            .filter(|c| c.contains("restart") || c.contains("reload"))
            .collect();
        assert!(
            restarts.is_empty(),
            "{}: plan restarted {restarts:?}",
            node.name
        );
    }
}

#[test]
fn identical_changes_group_and_exit_codes_say_nothing_to_do_and_unreachable() {
    let lab = Lab::start(&["healthy", "healthy", "brnf-off", "brnf-off"])
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    // No ControlPersist master may outlive a run: the stopped node must really be gone.
    let plan = |inventory: &Path, lab: &Lab, extra: &[&str]| {
        plan(inventory, lab, &[&["--ssh-persist", "0"], extra].concat())
    };
    let healthy = lab.nodes[0].name.clone();
    let out = plan(&lab.inventory(), &lab, &["--limit", &healthy]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "nothing to change; stderr:\n{}",
        stderr(&out)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("nothing to change: {healthy}")),
        "{text}"
    );

    // Two nodes with the same change share one block.
    let out = plan(&lab.inventory(), &lab, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let group = format!(
        "== {}, {}: same change",
        lab.nodes[2].name, lab.nodes[3].name
    );
    assert!(text.contains(&group), "no {group:?} in:\n{text}");
    assert!(
        text.ends_with("2 of 4 hosts change: 4 files, 4 sysctls\n"),
        "{text}"
    );

    let brnf = lab.node("brnf-off").name.clone();
    lab.stop(&lab.nodes[1].name);
    let out = plan(&lab.inventory(), &lab, &["--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "a node is down; stderr:\n{}",
        stderr(&out)
    );
    let doc: Plan = serde_json::from_slice(&out.stdout).expect("json plan");
    let down = doc
        .hosts
        .iter()
        .find(|h| h.host == lab.nodes[1].name)
        .expect("down host");
    assert_eq!(down.status, HostStatus::Error);
    let error = down.error.as_ref().expect("error recorded");
    assert_eq!(error.kind, "unreachable");
    assert!(error.message.contains("refused"), "{error:?}");
    // The others are still planned.
    let other = doc
        .hosts
        .iter()
        .find(|h| h.host == brnf)
        .expect("brnf host");
    assert_eq!(other.status, HostStatus::Changes);
}

#[test]
fn a_bad_playbook_stops_before_any_host_is_contacted() {
    let dir = std::env::temp_dir().join(format!("dnsfix-bad-playbook-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("90-site.yml"),
        "name: site\ndescription: x\ntasks:\n  - name: t\n    when: \"failing ==\"\n    note: {msg: x}\n",
    )
    .expect("write");
    let out = Dnsfix::new(["plan", "--no-progress", "--playbooks"])
        .arg(&dir)
        .output();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(1));
    let message = stderr(&out);
    assert!(
        message.contains("90-site.yml:5: task `t`: when"),
        "{message}"
    );
    assert!(!message.contains("facts gathered"), "{message}");
}

/// A site playbook in `lab_dir`: a sysctl (`net.ipv4.conf.all.rp_filter` to `want`) and
/// a file (/etc/dnsfix/site.conf) that notifies a kubelet restart; its directory.
fn site_playbook(lab_dir: &Path, want: &str) -> PathBuf {
    let dir = lab_dir.join("site-playbooks");
    std::fs::create_dir_all(dir.join("templates")).expect("mkdir");
    std::fs::write(
        dir.join("90-site.yml"),
        format!(
            "name: site\n\
             description: site settings\n\
             vars:\n\
             \x20 unit: kubelet\n\
             tasks:\n\
             \x20 - name: loose reverse-path filter\n\
             \x20   sysctl:\n\
             \x20     name: net.ipv4.conf.all.rp_filter\n\
             \x20     value: \"{want}\"\n\
             \x20 - name: site file\n\
             \x20   template:\n\
             \x20     src: site.conf.j2\n\
             \x20     dest: /etc/dnsfix/site.conf\n\
             \x20   notify: restart it\n\
             handlers:\n\
             \x20 - name: restart it\n\
             \x20   service:\n\
             \x20     name: \"{{{{ unit }}}}\"\n"
        ),
    )
    .expect("write playbook");
    // The kubelet's version as the rules take it: from the cluster under plan, which does
    // not run the node's kubelet binary.
    std::fs::write(
        dir.join("templates/site.conf.j2"),
        "new for {{ host }}: kubelet {{ kubelet_version }} ({{ kubelet_version_source }})\n",
    )
    .expect("write");
    dir
}

#[test]
fn site_playbooks_plan_files_and_sysctls_beyond_the_shipped_ones() {
    let lab = Lab::start(&["healthy"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    lab.exec(
        &node,
        "mkdir -p /etc/dnsfix && printf 'old\\n' > /etc/dnsfix/site.conf",
    );
    let live = lab.exec(&node, "cat /proc/sys/net/ipv4/conf/all/rp_filter");
    let want = if live.trim() == "2" { "1" } else { "2" };
    let dir = site_playbook(&lab.dir, want);

    // Without `allow:` the file and the sysctl are outside what dnsfix changes: refused,
    // naming the playbook, the task and the way to allow it.
    let out = plan(
        &lab.inventory(),
        &lab,
        &["--playbooks", dir.to_str().expect("utf-8")],
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(
        text.contains("refused: ")
            && text.contains("net.ipv4.conf.all.rp_filter")
            && text.contains("allow: {sysctls: [net.ipv4.conf.all.rp_filter]}")
            && text.contains("playbook site task \"loose reverse-path filter\""),
        "{text}"
    );

    let playbook = std::fs::read_to_string(dir.join("90-site.yml")).expect("read");
    std::fs::write(
        dir.join("90-site.yml"),
        format!(
            "{playbook}allow:\n\
             \x20 paths: [/etc/dnsfix/site.conf]\n\
             \x20 sysctls: [net.ipv4.conf.all.rp_filter]\n"
        ),
    )
    .expect("write playbook");
    let out = plan(
        &lab.inventory(),
        &lab,
        &[
            "--format",
            "json",
            "--playbooks",
            dir.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let doc: Plan = serde_json::from_slice(&out.stdout).expect("json plan");
    let host = &doc.hosts[0];
    let file = host
        .changes
        .iter()
        .find_map(|c| match c {
            Change::WriteFile {
                path,
                before,
                content,
                before_sha256,
                ..
            } if path == "/etc/dnsfix/site.conf" => {
                Some((before.clone(), content.clone(), before_sha256.clone()))
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("no site.conf change: {host:#?}"));
    assert_eq!(
        file.0.as_deref(),
        Some("old\n"),
        "an existing file is an edit, not a new file"
    );
    assert_eq!(
        file.1,
        format!("new for {node}: kubelet v1.30.2 (node {node}'s status.nodeInfo.kubeletVersion)\n")
    );
    assert!(file.2.is_some());
    let sysctl = host.changes.iter().find_map(|c| match c {
        Change::Sysctl {
            name,
            before,
            after,
            ..
        } if name == "net.ipv4.conf.all.rp_filter" => Some((before.clone(), after.clone())),
        _ => None,
    });
    assert_eq!(
        sysctl,
        Some((Some(live.trim().to_string()), want.to_string()))
    );
    // A handler sees its playbook's vars.
    let units: Vec<&str> = host.handlers.iter().map(|h| h.unit.as_str()).collect();
    assert_eq!(units, ["kubelet"]);
}

/// The cluster is read in one exec on the control-plane node: the DNS pods, the
/// ConfigMaps and the previous logs of the crash-looping pods together, as kubectl prints
/// its answer on a real cluster (the lab's kubectl prints like kubectl:
/// tests/it/kubectl_reference.rs). So the control-plane node runs two commands in all,
/// the gather and the cluster read, and each stub node's loop line is in the plan.
#[test]
fn the_cluster_is_read_in_one_exec_with_the_crash_looping_pods_logs() {
    let lab = Lab::start(&["healthy", "stub-symlink", "stub-symlink"])
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let control_plane = &lab.nodes[0].name;
    let sessions = || {
        std::fs::read_to_string(lab.dir.join("nodes").join(control_plane).join("sshd.log"))
            .expect("sshd log")
            .matches("Starting session: command")
            .count()
    };
    let before = sessions();
    let out = plan(
        &lab.inventory(),
        &lab,
        &["--ssh-backend", "russh", "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(sessions() - before, 2, "the gather and one cluster read");
    let text = String::from_utf8_lossy(&out.stdout);
    for node in &lab.nodes[1..] {
        assert!(
            text.contains(&format!("pod kube-system/coredns-{}-1", node.name)),
            "{text}"
        );
    }
    assert!(
        text.matches("[FATAL] plugin/loop: Loop").count() >= 2,
        "{text}"
    );
}

/// With the openssh backend, a first plan logs in to each node once: the first command
/// makes the connection and leaves its ControlPersist master, and the cluster read on the
/// control-plane node shares that node's connection with its gather. The next command
/// within ControlPersist logs in nowhere. A control-plane node that never answers costs
/// one connect timeout, not one for the gather and another for the cluster read.
#[test]
fn a_first_plan_logs_in_once_per_node_and_the_next_reuses_the_connections() {
    let lab = Lab::start(&["healthy", "stub-symlink"])
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    // A control directory of the test's own, so no master of another run is found and
    // the masters can be closed at the end.
    let xdg = private_dir(&lab, "xdg");
    let run = |extra: &[&str]| {
        Dnsfix::new(["plan", "--ssh-backend", "openssh", "--ssh-persist", "30"])
            .lab(&lab, &lab.inventory())
            .args(["--color", "never"])
            .args(extra)
            .env("XDG_RUNTIME_DIR", &xdg)
            .output()
    };
    let before = logins(&lab);
    let first = run(&["--connect-timeout", "5"]);
    assert_eq!(first.status.code(), Some(2), "{}", stderr(&first));
    assert!(
        String::from_utf8_lossy(&first.stdout).contains("cluster (kubectl on"),
        "the cluster was read:\n{}",
        String::from_utf8_lossy(&first.stdout)
    );
    assert_eq!(logins(&lab) - before, lab.nodes.len(), "one login per node");
    let second = run(&["--connect-timeout", "5"]);
    assert_eq!(second.status.code(), Some(2), "{}", stderr(&second));
    assert_eq!(first.stdout, second.stdout);
    assert_eq!(
        logins(&lab) - before,
        lab.nodes.len(),
        "the second plan reused the first one's connections"
    );
    close_masters(&xdg);

    let control_plane = lab.nodes[0].name.clone();
    lab.freeze(&control_plane);
    let started = std::time::Instant::now();
    let frozen = run(&["--connect-timeout", "6"]);
    let took = started.elapsed();
    assert_eq!(frozen.status.code(), Some(3), "{}", stderr(&frozen));
    assert!(
        stderr(&frozen).contains("timed out after 6s while connecting"),
        "{}",
        stderr(&frozen)
    );
    // ssh gives up after 6 s (8 s at most: dnsfix's bound for a handshake that never
    // ends); the gather and the cluster read one after the other would take 12 s or
    // more. The bound leaves room for a loaded machine.
    assert!(
        took < std::time::Duration::from_millis(11_000),
        "took {took:?}"
    );
    close_masters(&xdg);
}

/// docs/plan.md "Reading a plan" shows what its own lab command prints, byte for byte (the
/// lab's directory aside): the example had drifted from the lab (no DNS-POD-LOOP, another
/// inventory file, a finding the brnf-off nodes no longer have), as a newcomer found.
#[test]
fn the_reading_a_plan_example_is_what_its_lab_prints() {
    let lab = Lab::start(&[
        "stub-symlink:node1",
        "brnf-off:node2",
        "brnf-off:node3",
        "healthy:node4",
    ])
    .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let out = Dnsfix::new(["plan"]).lab(&lab, &lab.inventory()).output();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let docs = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/plan.md"))
        .expect("docs/plan.md");
    let command = "$ dnsfix plan -i /tmp/docslab/inventory.yaml --known-hosts /tmp/docslab/known_hosts --no-progress\n";
    let example = docs
        .split(command)
        .nth(1)
        .and_then(|rest| rest.split("```\n").next())
        .expect("the example in docs/plan.md");
    let printed = String::from_utf8_lossy(&out.stdout)
        .replace(lab.dir.to_str().expect("utf-8"), "/tmp/docslab");
    assert_eq!(printed, example);
    assert!(
        docs.contains("`facts gathered from 4 of 4\nhosts in "),
        "the stderr the docs show"
    );
    assert!(
        stderr(&out).starts_with("facts gathered from 4 of 4 hosts in "),
        "{}",
        stderr(&out)
    );
}
