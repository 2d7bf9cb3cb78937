//! Plans over every node tree in tests/fixtures/rules: facts in, the exact plan out.
//!
//! For each `tests/fixtures/rules/<ID>/<case>/` (a node tree under `root/`, the host's
//! inventory variables in `vars.json`), the shipped playbooks plan the node as `node1` of a
//! Kubespray-shaped inventory, and the text plan must equal the insta snapshot `plan.snap`
//! beside it (reviewed: the exact diffs, or the stated reason nothing changes). New or
//! changed ones: `cargo insta test --review -- plan_fixtures::` (or `INSTA_UPDATE=always
//! cargo test --test it plan_fixtures::` and read the diff) before committing.
//!
//! Every case also checks what a reviewer relies on:
//! - the saved plan (JSON) reads back to the same plan;
//! - planning twice gives the same text (deterministic order);
//! - applying the planned changes to the tree (`plan::predict::applied`, the model `plan`
//!   itself predicts with) and planning again changes nothing (idempotent), and the
//!   findings the plan says it fixes are gone.

use std::path::{Path, PathBuf};
use std::time::Duration;

use dnsfix::diagnose::{FindingStatus, diagnose_host};
use dnsfix::facts::NodeFacts;
use dnsfix::facts::raw::{self, RawFacts};
use dnsfix::gather::HostOutcome;
use dnsfix::inventory::Inventory;
use dnsfix::plan::{self, HostStatus, Plan};
use dnsfix::playbook::Playbooks;

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rules");
    let mut out = Vec::new();
    for rule in std::fs::read_dir(&dir).expect("rules fixtures dir") {
        let rule = rule.expect("entry").path();
        for case in std::fs::read_dir(&rule).into_iter().flatten() {
            let case = case.expect("entry").path();
            if case.join("root").is_dir() {
                out.push(case);
            }
        }
    }
    out.sort();
    out
}

/// A one-host Kubespray-shaped inventory in a fresh directory, with `vars` as host vars.
fn inventory(dir: &Path, vars: &serde_json::Value) -> PathBuf {
    std::fs::create_dir_all(dir).expect("mkdir");
    let doc = serde_json::json!({
        "all": {
            "hosts": { "node1": vars },
            "children": {
                "kube_node": { "hosts": { "node1": null } },
                "k8s_cluster": { "children": { "kube_node": null } },
            }
        }
    });
    let path = dir.join("hosts.yaml");
    std::fs::write(&path, serde_json::to_string_pretty(&doc).expect("json")).expect("write");
    path
}

/// A rules fixture's vars, a copy of its tree (`cp -a` keeps its links) and an inventory
/// of node1 with those vars, in a scratch directory: for tests that change the node's files.
struct FixtureCopy {
    vars: serde_json::Value,
    dir: PathBuf,
    inventory: PathBuf,
    tree: PathBuf,
}

fn fixture_copy(case: &str, name: &str) -> FixtureCopy {
    let case = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/rules")
        .join(case);
    let vars: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(case.join("vars.json")).expect("vars"))
            .expect("vars.json");
    let dir = std::env::temp_dir().join(format!("dnsfix-{name}-{}", std::process::id()));
    let inventory = inventory(&dir, &vars);
    let tree = dir.join("root");
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(case.join("root"))
        .arg(&tree)
        .status()
        .expect("cp");
    assert!(status.success(), "cp -a failed");
    FixtureCopy {
        vars,
        dir,
        inventory,
        tree,
    }
}

fn plan_for(inventory_path: &Path, raw: &RawFacts, playbooks: &Playbooks) -> Plan {
    let inventory = Inventory::load(inventory_path).expect("inventory loads");
    let hosts = inventory.select(None).expect("hosts");
    let outcomes = vec![HostOutcome {
        host: "node1".into(),
        elapsed: Duration::ZERO,
        result: Ok(NodeFacts::from_raw("node1", raw)),
    }];
    // Fixture hosts have no cluster to read: the plan says so where it matters.
    let cluster = dnsfix::cluster::Cluster::Unavailable {
        reason: "a fixture has no cluster".to_owned(),
    };
    plan::build(&inventory, None, &hosts, outcomes, playbooks, &cluster)
}

#[test]
fn plan_fixtures() {
    let playbooks = Playbooks::load(None).expect("shipped playbooks load");
    let scratch = std::env::temp_dir().join(format!("dnsfix-plan-fixtures-{}", std::process::id()));
    let mut failures = Vec::new();
    let mut changed_cases = 0;
    let all = cases();
    assert!(all.len() >= 40, "only {} plan fixture cases", all.len());
    for (index, case) in all.iter().enumerate() {
        let name = case
            .strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")))
            .unwrap_or(case)
            .display()
            .to_string();
        let vars: serde_json::Value = std::fs::read_to_string(case.join("vars.json"))
            .map(|t| serde_json::from_str(&t).unwrap_or_else(|e| panic!("{name}: vars.json: {e}")))
            .unwrap_or_else(|_| serde_json::json!({}));
        let dir = scratch.join(index.to_string());
        let inventory_path = inventory(&dir, &vars);
        let raw = raw::from_tree(&case.join("root")).unwrap_or_else(|e| panic!("{name}: {e}"));

        let plan = plan_for(&inventory_path, &raw, &playbooks);
        let text =
            plan::render::text(&plan, false).replace(&dir.display().to_string(), "<inventory>");

        // The reviewed plan, a snapshot in the case's folder.
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(case);
        settings.set_prepend_module_to_snapshot(false);
        settings.set_omit_expression(true);
        settings.set_description(name.as_str());
        settings.bind(|| insta::assert_snapshot!("plan", text));

        // The saved plan reads back as the same plan.
        let json = plan::render::json(&plan);
        match serde_json::from_str::<Plan>(&json) {
            Ok(back) if back == plan => {}
            Ok(_) => failures.push(format!("{name}: the saved plan reads back differently")),
            Err(e) => failures.push(format!("{name}: the saved plan does not read back: {e}")),
        }

        // Deterministic.
        let again = plan::render::text(&plan_for(&inventory_path, &raw, &playbooks), false)
            .replace(&dir.display().to_string(), "<inventory>");
        if again != text {
            failures.push(format!("{name}: a second plan renders differently"));
        }

        // Idempotent, and the fixes it claims are real.
        let host = &plan.hosts[0];
        if host.status == HostStatus::Changes {
            changed_cases += 1;
            let before = NodeFacts::from_raw("node1", &raw);
            let after = plan::predict::applied(&before, &host.changes, &host.handlers);
            let replan = plan_for(&inventory_path, &after, &playbooks);
            if !replan.hosts[0].changes.is_empty() {
                failures.push(format!(
                    "{name}: planning again after apply still changes:\n{}",
                    plan::render::text(&replan, false)
                ));
            }
            let facts = NodeFacts::from_raw("node1", &after);
            let inventory = Inventory::load(&inventory_path).expect("inventory");
            let node = inventory.host("node1").expect("node1");
            let still: Vec<&str> = diagnose_host(node, &facts)
                .findings()
                .filter(|f| f.status == FindingStatus::Failed)
                .map(|f| f.id)
                .collect();
            for id in &host.fixes {
                if still.contains(&id.as_str()) {
                    failures.push(format!(
                        "{name}: the plan claims to fix {id}, but it remains after apply"
                    ));
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(
        changed_cases >= 15,
        "only {changed_cases} fixture cases plan a change"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// MicroK8s with an arguments file dnsfix cannot read as the kubelet does (`--node-ip
/// 10.0.0.5`: whether the next word is its value depends on the kubelet's flag table):
/// even when the cluster says the node's CoreDNS loops, the plan edits nothing there,
/// restarts nothing, and says why.
#[test]
fn an_unplaceable_microk8s_arguments_file_is_never_edited() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/rules/_upstream/microk8s-1.32-debian12-joined-worker");
    let dir = std::env::temp_dir().join(format!("dnsfix-mk8s-unplaced-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(case.join("root"))
        .arg(dir.join("root"))
        .status()
        .is_ok_and(|s| s.success());
    assert!(copied, "copy the fixture tree");
    let args = dir.join("root/var/snap/microk8s/7964/args/kubelet");
    let text = std::fs::read_to_string(&args).expect("arguments");
    std::fs::write(
        &args,
        text.replace("--read-only-port=0", "--node-ip 10.0.0.5"),
    )
    .expect("edit");
    let raw = raw::from_tree(&dir.join("root")).expect("tree");
    let facts = NodeFacts::from_raw("node1", &raw);
    assert!(
        matches!(&facts.kubelet.resolv_conf, dnsfix::facts::node_facts::Observed::Unknown(why) if why.contains("--node-ip without `=`")),
        "{:?}",
        facts.kubelet.resolv_conf
    );
    let inventory_path = inventory(&dir, &serde_json::json!({}));
    let inventory = Inventory::load(&inventory_path).expect("inventory loads");
    let hosts = inventory.select(None).expect("hosts");
    let outcomes = vec![HostOutcome {
        host: "node1".into(),
        elapsed: Duration::ZERO,
        result: Ok(facts),
    }];
    let looping = dnsfix::cluster::DnsPod {
        name: "coredns-7d8f8c9b5-x2x7q".into(),
        app: "coredns".into(),
        node: "mk8s-worker-1".into(),
        phase: "Running".into(),
        ready: false,
        restarts: 9,
        waiting: Some("CrashLoopBackOff".into()),
        running: false,
        terminating: false,
        loop_detected: Some("[FATAL] plugin/loop: Loop (127.0.0.1:53 -> :53) detected".into()),
        logs_read: true,
        logs_unread: None,
        container: None,
        namespace: None,
        selector: None,
        readiness: None,
    };
    let cluster = dnsfix::cluster::Cluster::Read {
        via: "cp1".into(),
        pods: vec![looping],
        config: Box::default(),
        kubelets: Default::default(),
    };
    let playbooks = Playbooks::load(None).expect("shipped playbooks load");
    let plan = plan::build(&inventory, None, &hosts, outcomes, &playbooks, &cluster);
    let text = plan::render::text(&plan, false);
    let host = &plan.hosts[0];
    assert!(
        host.changes.is_empty() && host.handlers.is_empty(),
        "{text}"
    );
    assert!(
        text.contains("kubelet-resolvconf: The kubelet's settings on this node are unknown")
            && text.contains("DNS-POD-LOOP"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A kubeadm node whose kubelet hands pods systemd-resolved's stub, its CoreDNS the CoreDNS
/// Helm chart's in `coredns` (the pod as tests/fixtures/kubectl/helm-coredns-ns-pods.json
/// lists it, found through its Service there): the plan recreates it in its namespace
/// after the kubelet restart, the text and the Markdown name that namespace, and the
/// saved plan carries it with the Service's selector. Before, the pod was left out of the
/// cluster action and a note named `kubectl -n coredns delete pod` to run by hand.
#[test]
fn coredns_outside_kube_system_is_recreated_in_its_namespace() {
    // The fixture's machine is cp1 (its /proc/sys/kernel/hostname): the node the
    // kubelet registers, whatever the inventory calls the host.
    let (plan, text, dir) = coredns_outside_kube_system_plan("cp1");
    insta::assert_snapshot!("coredns_outside_kube_system_plan", text);
    let markdown = plan::markdown::markdown(&plan, "SHA256");
    assert!(
        markdown.contains(
            "(now: coredns (namespace coredns, selector app.kubernetes.io/instance=dns,\
             app.kubernetes.io/name=coredns,k8s-app=coredns) ready)"
        ),
        "{markdown}"
    );
    assert!(!text.contains("kubectl -n coredns delete pod"), "{text}");
    let json = plan::render::json(&plan);
    assert!(
        json.contains("\"namespace\": \"coredns\"")
            && json.contains("\"selector\": \"app.kubernetes.io/instance=dns,"),
        "{json}"
    );
    let back: Plan = serde_json::from_str(&json).expect("the saved plan reads back");
    assert_eq!(back, plan);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same node where the cluster's CoreDNS pod runs on another node (node2) and none on
/// it: the plan still has its cluster action, its pods none, and says that apply lists
/// the node's pods again after the kubelet restart, so a CoreDNS or nodelocaldns pod put
/// there between plan and apply is recreated with the new upstream. Before, the plan had
/// no cluster action there ("none to recreate") and such a pod kept the old upstream.
#[test]
fn a_node_without_dns_pods_is_looked_at_again_at_apply_time() {
    let (plan, text, dir) = coredns_outside_kube_system_plan("node2");
    insta::assert_snapshot!("a_node_without_dns_pods_plan", text);
    assert!(!text.contains("none to recreate"), "{text}");
    let host = plan
        .hosts
        .iter()
        .find(|h| h.host == "node1")
        .expect("node1");
    let [dnsfix::plan::model::ClusterAction::RecreateDnsPods { node, pods, .. }] =
        host.cluster.as_slice()
    else {
        panic!("one action: {host:#?}");
    };
    assert!(node == &["cp1"] && pods.is_empty(), "{host:#?}");
    assert_eq!(plan.summary.pods, 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The plan of node1 (DNS-KUBELET-LOOPBACK's kubeadm-echo-appended-resolvconf) in the
/// cluster of the helm-coredns-ns kubectl fixtures, its one CoreDNS pod on `pod_node`:
/// the plan, its text, and the inventory's directory.
fn coredns_outside_kube_system_plan(pod_node: &str) -> (Plan, String, PathBuf) {
    let case = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/rules/DNS-KUBELET-LOOPBACK/kubeadm-echo-appended-resolvconf");
    let dir = std::env::temp_dir().join(format!(
        "dnsfix-coredns-ns-{pod_node}-{}",
        std::process::id()
    ));
    let vars: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(case.join("vars.json")).expect("vars"))
            .expect("vars.json");
    let inventory_path = inventory(&dir, &vars);
    let raw = raw::from_tree(&case.join("root")).expect("tree");
    let inventory = Inventory::load(&inventory_path).expect("inventory loads");
    let hosts = inventory.select(None).expect("hosts");
    let outcomes = vec![HostOutcome {
        host: "node1".into(),
        elapsed: Duration::ZERO,
        result: Ok(NodeFacts::from_raw("node1", &raw)),
    }];
    // The cluster as dnsfix reads it from the helm-coredns-ns kubectl fixtures (a unit
    // test in src/cluster keeps the file so), through kubectl on cp1.
    let mut cluster: dnsfix::cluster::Cluster = serde_json::from_str(include_str!(
        "../fixtures/kubectl/helm-coredns-ns-cluster.json"
    ))
    .expect("the cluster");
    if let dnsfix::cluster::Cluster::Read { via, pods, .. } = &mut cluster {
        *via = "cp1".into();
        for pod in pods {
            pod.node = pod_node.into();
        }
    }
    let playbooks = Playbooks::load(None).expect("shipped playbooks load");
    let plan = plan::build(&inventory, None, &hosts, outcomes, &playbooks, &cluster);
    let text = plan::render::text(&plan, false).replace(&dir.display().to_string(), "<inventory>");
    (plan, text, dir)
}

/// Kubespray includes roles/kubernetes/node/vars/ubuntu-<major>.yml where there is one
/// (18, 20, 22 and 24 at 46dbdd39; tasks/facts.yml `with_first_found`), and that file's
/// kube_resolv_conf outranks group_vars: the plan says so on those releases only, and
/// writes no kube_resolv_conf into the inventory there (it would change nothing). Ubuntu
/// 26.04 has no such file, so the inventory's kube_resolv_conf holds there.
#[test]
fn the_kubespray_distro_vars_note_follows_the_files_kubespray_has() {
    // The fixture's tree with another VERSION_ID.
    let FixtureCopy {
        dir,
        inventory: inventory_path,
        tree,
        ..
    } = fixture_copy(
        "DNS-CLUSTER-SELF-FORWARD/cluster-ip-first-then-real-upstream",
        "distro-vars",
    );
    let playbooks = Playbooks::load(None).expect("shipped playbooks load");
    let os_release = std::fs::read_to_string(tree.join("etc/os-release")).expect("os-release");
    for (version, noted) in [
        ("18.04", true),
        ("24.04", true),
        ("26.04", false),
        ("16.04", false),
    ] {
        let text = os_release.replace("VERSION_ID=\"22.04\"", &format!("VERSION_ID=\"{version}\""));
        assert_ne!(text, os_release, "the fixture says 22.04");
        std::fs::write(tree.join("etc/os-release"), text).expect("write os-release");
        let raw = raw::from_tree(&tree).expect("fixture tree");
        let plan = plan_for(&inventory_path, &raw, &playbooks);
        let text = plan::render::text(&plan, false);
        assert_eq!(
            text.contains(&format!(
                "Kubespray's roles/kubernetes/node/vars for ubuntu {version} set kube_resolv_conf"
            )),
            noted,
            "Ubuntu {version}:\n{text}"
        );
        assert_eq!(
            text.contains("kube_resolv_conf: /etc/dnsfix/resolv.conf"),
            !noted,
            "Ubuntu {version}:\n{text}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// kubelet-flag-shadow moves a Kubespray kubelet_custom_flags `--resolv-conf` into
/// kubelet-config.yaml, whose resolvConf Kubespray renders from kube_resolv_conf at every
/// run (kubelet-config.v1beta1.yaml.j2 @46dbdd39): once the flag leaves
/// kubelet_custom_flags, the next cluster.yml gives the kubelet that value instead. So the
/// plan asks for the flag's value as kube_resolv_conf on Rocky (no distro vars file), and
/// where Kubespray's distro vars outrank the inventory (fedora.yml) says to pass it with -e.
#[test]
fn a_kubespray_resolv_conf_flag_keeps_its_value_at_the_next_run() {
    let FixtureCopy {
        vars,
        dir,
        inventory: inventory_path,
        tree,
    } = fixture_copy(
        "DNS-KUBELET-FLAG-SHADOW/kubespray-rocky9-resolv-conf-custom-flag",
        "flag-distro",
    );
    let playbooks = Playbooks::load(None).expect("shipped playbooks load");
    let os_release = std::fs::read_to_string(tree.join("etc/os-release")).expect("os-release");
    let asked = "sets: kube_resolv_conf: /etc/kubernetes/resolv-upstream.conf";
    let noted = "-e kube_resolv_conf=/etc/kubernetes/resolv-upstream.conf";
    for (id, distro_vars) in [("rocky", false), ("fedora", true)] {
        let text = os_release.replace("ID=\"rocky\"", &format!("ID=\"{id}\""));
        std::fs::write(tree.join("etc/os-release"), text).expect("write os-release");
        let raw = raw::from_tree(&tree).expect("fixture tree");
        let text = plan::render::text(&plan_for(&inventory_path, &raw, &playbooks), false);
        assert!(text.contains("--resolv-conf removed"), "{id}:\n{text}");
        assert_eq!(text.contains(asked), !distro_vars, "{id}:\n{text}");
        assert_eq!(text.contains(noted), distro_vars, "{id}:\n{text}");
    }
    // A resolvConf in kubelet_config_extra_args, which Kubespray renders after
    // kube_resolv_conf: that is what must say the flag's file, and kube_resolv_conf is not
    // asked for.
    let mut extra = vars.clone();
    extra["kubelet_config_extra_args"] = serde_json::json!({"resolvConf": "/etc/resolv.conf"});
    let extra_inventory = inventory(&dir.join("extra"), &extra);
    let raw = raw::from_tree(&tree).expect("fixture tree");
    let text = plan::render::text(&plan_for(&extra_inventory, &raw, &playbooks), false);
    assert!(!text.contains(asked), "{text}");
    assert!(!text.contains(noted), "{text}");
    assert!(
        text.contains("set resolvConf to /etc/kubernetes/resolv-upstream.conf there"),
        "{text}"
    );
    // A flag naming a file whose path Ansible would render as a template (node text): the
    // evidence shows it (escaped), but no advice repeats it, the playbook is blocked.
    let evil = "/etc/kubernetes/{{lookup(dict(pipe=1)|first,dict(id=1)|first)}}.conf";
    // The flag in kubelet.env and on the running kubelet's command line.
    let path = "/etc/kubernetes/resolv-upstream.conf";
    for name in ["etc/kubernetes/kubelet.env", "proc/3120/cmdline"] {
        let file = tree.join(name);
        let bytes = std::fs::read(&file).expect(name);
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains(path), "{name}: {text}");
        std::fs::write(&file, text.replace(path, evil)).expect("write");
    }
    std::fs::copy(tree.join(&path[1..]), tree.join(&evil[1..])).expect("copy");
    for inventory_path in [&inventory_path, &extra_inventory] {
        let raw = raw::from_tree(&tree).expect("fixture tree");
        let text = plan::render::text(&plan_for(inventory_path, &raw, &playbooks), false);
        for advice in [
            "kube_resolv_conf: /etc/kubernetes/{{",
            "kube_resolv_conf=/etc/kubernetes/{{",
            "resolvConf to /etc/kubernetes/{{",
        ] {
            assert!(!text.contains(advice), "{advice}:\n{text}");
        }
        assert!(text.contains("dnsfix does not repeat it"), "{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Kubespray renders the inventory's kubelet_config_extra_args after the clusterDNS and
/// clusterDomain it renders itself (kubelet-config.v1beta1.yaml.j2 @46dbdd39), so a
/// clusterDNS there is what the next cluster.yml gives the kubelet: nodelocaldns-clusterdns
/// and kubelet-cluster-dns name it, not the inventory values it overrides.
#[test]
fn a_cluster_dns_in_kubelet_config_extra_args_is_named_where_kubespray_keeps_it() {
    let playbooks = Playbooks::load(None).expect("shipped playbooks load");
    let dir = std::env::temp_dir().join(format!("dnsfix-extra-cluster-dns-{}", std::process::id()));
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rules");
    for (case, fixed) in [
        (
            "DNS-NODELOCAL-CLUSTERDNS/iptables-mode-kubespray",
            "sets clusterDNS ([10.233.0.3]), which Kubespray writes into kubelet-config.yaml after the clusterDNS it renders itself, at every run, and the kubelet takes the last one: set clusterDNS to [169.254.25.10] there",
        ),
        (
            "DNS-KUBELET-NO-CLUSTER-DNS/kubespray-ipv6-only-without-cluster-dns",
            "kubelet_config_extra_args sets clusterDNS, which Kubespray writes into /etc/kubernetes/kubelet-config.yaml after the values it renders itself, at every cluster.yml run, and the kubelet takes the last ones: set clusterDNS [fd85:ee78:d8a6:8607::1003] there, or the next run writes clusterDNS [10.233.0.3] back",
        ),
    ] {
        let vars: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(base.join(case).join("vars.json")).expect("vars"),
        )
        .expect("vars.json");
        let raw = raw::from_tree(&base.join(case).join("root")).expect("fixture tree");
        let text = |extra: serde_json::Value| {
            let mut vars = vars.clone();
            vars["kubelet_config_extra_args"] = extra;
            let path = inventory(&dir, &vars);
            plan::render::text(&plan_for(&path, &raw, &playbooks), false)
        };
        let named = text(serde_json::json!({"clusterDNS": ["10.233.0.3"], "maxPods": 200}));
        assert!(named.contains(fixed), "{case}:\n{named}");
        let other = text(serde_json::json!({"maxPods": 200}));
        assert!(
            !other.contains("kubelet_config_extra_args"),
            "{case}:\n{other}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// An older dnsfix set kube_resolv_conf: /etc/dnsfix/resolv.conf for a group: Kubespray
/// gives it to a node a later scale.yml adds, which has no such file. The plan says so on
/// every host of the group, healthy or not, in words for Ubuntu 22.04, whose distro vars
/// Kubespray loads over it; a host_vars value is each node's own.
#[test]
fn a_group_kube_resolv_conf_of_dnsfix_s_own_file_is_noted() {
    let playbooks = Playbooks::load(None).expect("shipped playbooks load");
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rules");
    let case = base.join("_healthy/kubespray-ubuntu2204");
    let vars: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(case.join("vars.json")).expect("vars"))
            .expect("vars.json");
    let raw = raw::from_tree(&case.join("root")).expect("fixture tree");
    let dir = std::env::temp_dir().join(format!("dnsfix-group-dnsfix-file-{}", std::process::id()));
    let path = inventory(&dir, &vars);
    let noted =
        "the inventory sets kube_resolv_conf: /etc/dnsfix/resolv.conf for group k8s_cluster";
    let text = plan::render::text(&plan_for(&path, &raw, &playbooks), false);
    assert!(!text.contains(noted), "{text}");
    for (file, grouped) in [
        ("group_vars/k8s_cluster/dnsfix.yml", true),
        ("host_vars/node1.yml", false),
    ] {
        let file = dir.join(file);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, "kube_resolv_conf: /etc/dnsfix/resolv.conf\n").expect("write");
        let text = plan::render::text(&plan_for(&path, &raw, &playbooks), false);
        assert_eq!(text.contains(noted), grouped, "{text}");
        // Ubuntu 22.04: Kubespray's distro vars outrank the group's value on this node.
        assert_eq!(
            text.contains("so it reaches no such node, but a node of another OS"),
            grouped,
            "{text}"
        );
        std::fs::remove_file(&file).expect("rm");
    }
    // The one host overrides it in host_vars: the group's value is still there for the next
    // node, and noted.
    for (file, value) in [
        (
            "group_vars/k8s_cluster/dnsfix.yml",
            "/etc/dnsfix/resolv.conf",
        ),
        ("host_vars/node1.yml", "/run/systemd/resolve/resolv.conf"),
    ] {
        let file = dir.join(file);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, format!("kube_resolv_conf: {value}\n")).expect("write");
    }
    let text = plan::render::text(&plan_for(&path, &raw, &playbooks), false);
    assert!(text.contains(noted), "{text}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A copy of the Ubuntu 20.04 node with NetworkManager 1.22 whose plain /etc/resolv.conf
/// lists only the cluster's (nodelocaldns) address.
fn nm122_cluster_only(name: &str) -> FixtureCopy {
    let copy = fixture_copy(
        "DNS-RESOLV-MANAGED-ELSEWHERE/ubuntu2004-networkmanager-1.22-plain-file",
        name,
    );
    std::fs::write(
        copy.tree.join("etc/resolv.conf"),
        "nameserver 169.254.25.10\nsearch example.internal\n",
    )
    .expect("resolv.conf");
    copy
}

/// The text plan of `copy` with `upstream_dns_servers: [192.0.2.53]` in its inventory.
fn plan_with_upstream(copy: &FixtureCopy) -> String {
    let mut vars = copy.vars.clone();
    vars["upstream_dns_servers"] = serde_json::json!(["192.0.2.53"]);
    let inventory_path = inventory(&copy.dir, &vars);
    let raw = raw::from_tree(&copy.tree).expect("tree");
    let playbooks = Playbooks::load(None).expect("shipped playbooks load");
    plan::render::text(&plan_for(&inventory_path, &raw, &playbooks), false)
}

/// NetworkManager 1.22 with Ubuntu's dns=systemd-resolved writes nameserver 127.0.0.53 over
/// a plain /etc/resolv.conf (rc-manager unset: symlink before 1.28): where that file lists
/// only the cluster address, host-upstream-dns stops and says where the servers go, rather
/// than writing them into the file or NetworkManager's global DNS, neither of which lasts.
#[test]
fn host_upstream_dns_stops_where_network_manager_writes_resolveds_stub() {
    let copy = nm122_cluster_only("nm122-stub");
    let text = plan_with_upstream(&copy);
    assert!(
        text.contains("writes nameserver 127.0.0.53 over the plain /etc/resolv.conf")
            && text.contains("(192.0.2.53)"),
        "{text}"
    );
    assert!(
        !text.contains("zz-dnsfix-upstream.conf") && !text.contains("~ /etc/resolv.conf"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&copy.dir);
}

/// The stop names when NetworkManager writes the stub (a stopped, enabled one: at its next
/// start) and, where systemd-resolved does not start at boot, no resolved drop-in: nothing
/// answers at 127.0.0.53 after a reboot there, and rc-manager=unmanaged is the fix.
#[test]
fn host_upstream_dns_stop_fits_a_stopped_network_manager_and_a_disabled_resolved() {
    let copy = nm122_cluster_only("nm122-stub-boot");
    // systemd-resolved inactive and disabled, NetworkManager inactive but enabled.
    let units = copy.tree.join(".dnsfix/cmd/units");
    let states = std::fs::read_to_string(&units).expect("units");
    let mut lines: Vec<&str> = states.lines().collect();
    lines[0] = "inactive";
    lines[1] = "inactive";
    std::fs::write(&units, lines.join("\n") + "\n").expect("units");
    std::fs::write(copy.tree.join(".dnsfix/cmd/resolved-enabled"), "disabled\n")
        .expect("resolved-enabled");
    let wants = copy.tree.join("etc/systemd/system/multi-user.target.wants");
    std::fs::create_dir_all(&wants).expect("wants");
    std::fs::write(wants.join("NetworkManager.service"), "[Unit]\n").expect("link");
    let text = plan_with_upstream(&copy);
    assert!(
        text.contains(
            "over the plain /etc/resolv.conf at its start at the next boot (stopped now, enabled)"
        ) && text.contains("systemd-resolved does not start at boot here")
            && text.contains("set rc-manager=unmanaged"),
        "{text}"
    );
    assert!(!text.contains("resolved.conf.d"), "{text}");
    let _ = std::fs::remove_dir_all(&copy.dir);
}

/// Where NetworkManager 1.22 has written systemd-resolved's stub over the file already
/// (`nameserver 127.0.0.53`, NetworkManager's own header) and systemd-resolved, which runs,
/// lists only the cluster address but is disabled, the stop says NetworkManager has written
/// it (not that it will at its next update), and that a file kept from NetworkManager must
/// list the real servers: kept as written, it names a stub nothing answers after a reboot.
#[test]
fn host_upstream_dns_stop_says_network_manager_has_written_the_stub() {
    let copy = nm122_cluster_only("nm122-stub-written");
    std::fs::write(
        copy.tree.join("etc/resolv.conf"),
        "# Generated by NetworkManager\nsearch example.internal\nnameserver 127.0.0.53\n",
    )
    .expect("resolv.conf");
    std::fs::write(
        copy.tree.join("run/systemd/resolve/resolv.conf"),
        "nameserver 169.254.25.10\nsearch example.internal\n",
    )
    .expect("uplink");
    std::fs::write(copy.tree.join(".dnsfix/cmd/resolved-enabled"), "disabled\n")
        .expect("resolved-enabled");
    let text = plan_with_upstream(&copy);
    assert!(
        text.contains("has written nameserver 127.0.0.53 over the plain /etc/resolv.conf, as it does again at every update")
            && text.contains("systemd-resolved, whose servers (169.254.25.10) are cluster addresses only")
            && text.contains("make /etc/resolv.conf a file of the node's own that lists the real servers (192.0.2.53)"),
        "{text}"
    );
    assert!(
        !text.contains("at its next update") && !text.contains("to keep the file as written"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&copy.dir);
}

/// A systemd-resolved drop-in read after dnsfix's (`zzz-` sorts after `zz-`) whose empty
/// `DNS=` would drop the servers dnsfix adds: host-upstream-dns stops and names its line,
/// rather than writing a file and restarting systemd-resolved for nothing.
#[test]
fn host_upstream_dns_stops_where_a_later_resolved_drop_in_empties_dns() {
    let copy = fixture_copy(
        "DNS-CLUSTER-SELF-FORWARD/nodelocal-only-with-upstream-dns-servers",
        "resolved-reset-after",
    );
    std::fs::write(
        copy.tree.join("etc/systemd/resolved.conf.d/zzz-site.conf"),
        "[Resolve]\nDNS=\nDNS=169.254.25.10\n",
    )
    .expect("drop-in");
    let text = plan_with_upstream(&copy);
    assert!(
        text.contains("/etc/systemd/resolved.conf.d/zzz-site.conf:2: an empty DNS=")
            && !text.contains("+ /etc/systemd/resolved.conf.d/zz-dnsfix-upstream.conf"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&copy.dir);
}

/// A section header without its closing `]` in a drop-in read before dnsfix's stops
/// systemd-resolved's parser there (conf-parser.c `parse_line`, "Invalid section header"):
/// it would never read `zz-dnsfix-upstream.conf`, so host-upstream-dns stops naming that
/// line instead of writing a drop-in that changes nothing. One read after dnsfix's does not
/// stop it.
#[test]
fn host_upstream_dns_stops_where_resolved_stops_reading_before_its_drop_in() {
    let copy = fixture_copy(
        "DNS-CLUSTER-SELF-FORWARD/nodelocal-only-with-upstream-dns-servers",
        "resolved-broken-header",
    );
    let site = copy.tree.join("etc/systemd/resolved.conf.d/50-site.conf");
    std::fs::write(&site, "[Resolve] # site\nDomains=example.internal\n").expect("drop-in");
    let text = plan_with_upstream(&copy);
    assert!(
        text.contains("/etc/systemd/resolved.conf.d/50-site.conf:1: [Resolve] # site: systemd-resolved stops reading")
            && !text.contains("+ /etc/systemd/resolved.conf.d/zz-dnsfix-upstream.conf"),
        "{text}"
    );
    std::fs::remove_file(&site).expect("drop-in");
    std::fs::write(
        copy.tree.join("etc/systemd/resolved.conf.d/zzz-site.conf"),
        "[Resolve] # site\n",
    )
    .expect("drop-in");
    let text = plan_with_upstream(&copy);
    assert!(
        !text.contains("stops reading")
            && text.contains("+ /etc/systemd/resolved.conf.d/zz-dnsfix-upstream.conf"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&copy.dir);
}

/// A main file outside /etc (/usr/lib/systemd/resolved.conf, where openSUSE and Fedora ship
/// it) is read from systemd 256 on, and a line that is not valid UTF-8 stops the parser from
/// 239 on: with no libsystemd-shared-*.so to tell the version, whether the parser stops
/// there is not known. Where it may, host-upstream-dns stops too, naming the line and why:
/// written, its drop-in may change nothing. Where the version is known, it stops (a stop it
/// knows) or writes the drop-in.
#[test]
fn host_upstream_dns_stops_where_resolved_may_stop_before_its_drop_in() {
    let copy = fixture_copy(
        "DNS-CLUSTER-SELF-FORWARD/nodelocal-only-with-upstream-dns-servers",
        "resolved-may-stop",
    );
    let may_stop = "systemd-resolved may stop reading its configuration at this line";
    let written = "+ /etc/systemd/resolved.conf.d/zz-dnsfix-upstream.conf";
    let main = copy.tree.join("etc/systemd/resolved.conf");
    let kept = std::fs::read(&main).expect("main file");
    std::fs::remove_file(&main).expect("main file");
    let usr = copy.tree.join("usr/lib/systemd");
    std::fs::create_dir_all(&usr).expect("mkdir");
    std::fs::write(usr.join("resolved.conf"), "[Resolve\nDNS=192.0.2.53\n").expect("main file");
    let text = plan_with_upstream(&copy);
    assert!(
        text.contains(&format!(
            "/usr/lib/systemd/resolved.conf:1: [Resolve (systemd reads /usr/lib/systemd/resolved.conf from 256 on, and its version is not known (no libsystemd-shared-*.so found)): {may_stop}"
        )) && !text.contains(written),
        "{text}"
    );
    let lib = usr.join("libsystemd-shared-252.so");
    std::fs::write(&lib, "").expect("library");
    let text = plan_with_upstream(&copy);
    assert!(!text.contains(may_stop) && text.contains(written), "{text}");
    // A drop-in line that is not valid UTF-8, read before dnsfix's.
    std::fs::remove_file(usr.join("resolved.conf")).expect("main file");
    std::fs::write(&main, kept).expect("main file");
    std::fs::write(
        copy.tree.join("etc/systemd/resolved.conf.d/50-site.conf"),
        b"[Resolve]\nDomains=m\xfcller.example\n",
    )
    .expect("drop-in");
    let text = plan_with_upstream(&copy);
    assert!(
        text.contains("/etc/systemd/resolved.conf.d/50-site.conf:2: Domains=m")
            && text.contains("systemd-resolved stops reading")
            && !text.contains(written),
        "{text}"
    );
    std::fs::remove_file(&lib).expect("library");
    let text = plan_with_upstream(&copy);
    assert!(
        text.contains("from 239 on, and its version is not known")
            && text.contains(may_stop)
            && !text.contains(written),
        "{text}"
    );
    std::fs::write(usr.join("libsystemd-shared-237.so"), "").expect("library");
    let text = plan_with_upstream(&copy);
    assert!(
        !text.contains(may_stop) && !text.contains("stops reading") && text.contains(written),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&copy.dir);
}

/// A kubelet of unknown version whose `--config-dir` drop-in gives kubelet 1.28 to 1.31 one
/// file and 1.32 on another, one of them the stub: the plan writes resolvConf and
/// resolverConfig both into the drop-in, after which every version reads the same healthy
/// file. Facts after the planned change, with no version known and with versions on either
/// side of 1.32 (1.28 and 1.29 take --config-dir only with KUBELET_CONFIG_DROPIN_DIR_ALPHA,
/// which this unit does not set), give that file, and no finding is left.
#[test]
fn both_spellings_in_the_deciding_dropin_converge_for_every_kubelet_version() {
    let playbooks = Playbooks::load(None).expect("shipped playbooks load");
    let dropin = "/etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf";
    let head = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";
    let old = "/etc/kubernetes/kubelet.conf.d/10-old.conf";
    // A lowercase resolverconfig sorts after resolverConfig ('c' > 'C') and wins for 1.28 to
    // 1.31 over the one the plan writes (kubernetes#126630): in the deciding drop-in, or in
    // an earlier one. The plan sets it too, in its own file.
    let same = format!("{head}resolvConf: /etc/resolv.conf\nresolverconfig: /etc/resolv.conf\n");
    let earlier = format!("{head}resolverconfig: /etc/resolv.conf\n");
    // Fixture, variant, and a drop-in written over its copy.
    type Case<'a> = (&'a str, &'a str, Option<(&'a str, &'a str)>);
    let cases: [Case; 4] = [
        ("kubeadm-config-dir-dropin-version-unknown", "", None),
        (
            "kubeadm-config-dir-healthy-dropin-version-unknown",
            "",
            None,
        ),
        (
            "kubeadm-config-dir-dropin-version-unknown",
            "-lowercase-in-the-dropin",
            Some((dropin, &same)),
        ),
        (
            "kubeadm-config-dir-dropin-version-unknown",
            "-lowercase-in-an-earlier-dropin",
            Some((old, &earlier)),
        ),
    ];
    for (fixture, variant, extra) in cases {
        let case = format!("{fixture}{variant}");
        let copy = fixture_copy(&format!("DNS-KUBELET-LOOPBACK/{fixture}"), &case);
        if let Some((path, text)) = extra {
            std::fs::write(copy.tree.join(path.trim_start_matches('/')), text).expect("drop-in");
        }
        let raw = raw::from_tree(&copy.tree).expect("tree");
        let plan = plan_for(&copy.inventory, &raw, &playbooks);
        let host = &plan.hosts[0];
        assert_eq!(host.status, HostStatus::Changes, "{case}");
        let before = NodeFacts::from_raw("node1", &raw);
        let after = plan::predict::applied(&before, &host.changes, &host.handlers);
        let text = after
            .get(dropin)
            .and_then(|f| f.text())
            .map(|t| t.into_owned())
            .unwrap_or_default();
        for line in [
            "resolvConf: /run/systemd/resolve/resolv.conf",
            "resolverConfig: /run/systemd/resolve/resolv.conf",
        ] {
            assert!(text.lines().any(|l| l == line), "{case}: {line}: {text}");
        }
        if let Some((path, _)) = extra {
            let text = after
                .get(path)
                .and_then(|f| f.text())
                .map(|t| t.into_owned())
                .unwrap_or_default();
            let line = "resolverconfig: /run/systemd/resolve/resolv.conf";
            assert!(text.lines().any(|l| l == line), "{case}: {path}: {text}");
        }
        let inventory = Inventory::load(&copy.inventory).expect("inventory");
        let node = inventory.host("node1").expect("node1");
        for version in [
            None,
            Some("v1.30.4"),
            Some("v1.31.4"),
            Some("v1.32.0"),
            Some("v1.33.5"),
        ] {
            let mut raw = after.clone();
            if let Some(v) = version {
                raw.commands.insert(
                    "kubelet-version".to_owned(),
                    raw::RawCommand {
                        stdout: format!("Kubernetes {v}\n"),
                        status: Some(0),
                    },
                );
            }
            let facts = NodeFacts::from_raw("node1", &raw);
            let resolv = facts.kubelet.resolv_conf.known().map(|e| e.value.as_str());
            assert_eq!(
                resolv,
                Some("/run/systemd/resolve/resolv.conf"),
                "{case} {version:?}: {:?}",
                facts.kubelet.resolv_conf
            );
            let left: Vec<String> = diagnose_host(node, &facts)
                .findings()
                .map(|f| format!("{} {:?}: {}", f.id, f.status, f.summary))
                .collect();
            assert!(left.is_empty(), "{case} {version:?}: {left:#?}");
        }
        let _ = std::fs::remove_dir_all(&copy.dir);
    }
}
