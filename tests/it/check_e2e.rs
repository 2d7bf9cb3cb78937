//! End to end: `dnsfix check` against the real-sshd lab. Each scenario node yields
//! exactly its expected findings, the healthy nodes none, and the mixed fleet reports the
//! drifted node.

use std::collections::BTreeMap;
use std::process::Output;

use crate::common::dnsfix::{Dnsfix, describe};
use crate::common::lab::{ALL_SCENARIOS, Lab};
use serde_json::Value;

/// Every scenario once, plus a second healthy node so the healthy majority is clear.
fn scenarios() -> Vec<&'static str> {
    [ALL_SCENARIOS, &["healthy"]].concat()
}

fn check(lab: &Lab, extra: &[&str]) -> Output {
    Dnsfix::new(["check"])
        .lab(lab, &lab.inventory())
        .args(["--connect-timeout", "5"])
        .args(extra)
        .output()
}

/// The hosts of `check --format json`'s answer.
fn json_hosts(out: &Output) -> Vec<Value> {
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    doc["hosts"].as_array().expect("hosts").clone()
}

fn ids(host: &Value, drift: bool) -> Vec<String> {
    let mut v: Vec<String> = host["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["id"].as_str())
        .filter(|id| (*id == "DNS-FLEET-DRIFT") == drift)
        .map(str::to_owned)
        .collect();
    v.sort();
    v.dedup();
    v
}

/// --fail-on critical still fails (criticals present); JUnit has a testcase per rule x
/// host.
fn junit_has_a_testcase_per_rule_and_host(lab: &Lab, hosts: usize) {
    let out = check(lab, &["--format", "junit", "--fail-on", "critical"]);
    assert_eq!(out.status.code(), Some(2));
    let xml = String::from_utf8_lossy(&out.stdout);
    assert!(xml.starts_with("<?xml"), "{xml}");
    // The per-host rules, fleet drift and the five cluster rules.
    let rules = dnsfix::diagnose::rules::RULES.len() + 6;
    assert_eq!(xml.matches("<testcase ").count(), rules * hosts, "{xml}");
    assert!(
        xml.contains("name=\"DNS-KUBELET-LOOPBACK\">\n      <failure type=\"critical\""),
        "{xml}"
    );
}

#[test]
fn every_scenario_yields_exactly_its_findings() {
    let scenarios = scenarios();
    let lab = Lab::start(&scenarios).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let out = check(&lab, &["--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "exit 2 with findings; stderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let hosts: BTreeMap<String, &Value> = doc["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .map(|h| (h["host"].as_str().unwrap_or_default().to_owned(), h))
        .collect();
    // The nodes whose kubelet file loops also have their DNS pod crash-looping on the
    // loop plugin (the lab's kubectl answers from each node's pod): DNS-POD-LOOP.
    let expected: &[(&str, &[&str])] = &[
        ("healthy", &[]),
        ("stub-symlink", &["DNS-KUBELET-LOOPBACK", "DNS-POD-LOOP"]),
        (
            "kubespray-loop",
            &["DNS-CLUSTER-SELF-FORWARD", "DNS-POD-LOOP"],
        ),
        // Off now: DNS-BRIDGE-NF-OFF (whose fix persists too), not "reverts at reboot".
        ("brnf-off", &["DNS-BRIDGE-NF-OFF"]),
        ("stray-search", &["DNS-STRAY-SEARCH"]),
        ("kubeadm", &[]),
        ("sudo-user", &[]),
        (
            "kubespray-loop-resolved",
            &["DNS-CLUSTER-SELF-FORWARD", "DNS-POD-LOOP"],
        ),
        // A stopped kubelet is still a kubelet: its unit names its config, which is fine.
        ("kubeadm-stopped", &[]),
        ("minimal-no-curl", &["DNS-KUBELET-LOOPBACK", "DNS-POD-LOOP"]),
    ];
    for (scenario, want) in expected {
        for node in lab.nodes.iter().filter(|n| n.scenario == *scenario) {
            let h = hosts
                .get(&node.name)
                .unwrap_or_else(|| panic!("{} missing: {doc:#}", node.name));
            assert_eq!(h["status"], "ok", "{h:#}");
            assert_eq!(ids(h, false), *want, "{}: {h:#}", node.name);
        }
    }
    // Evidence names the file and line, and follows the symlink to the stub.
    let stub = hosts[&lab.node("stub-symlink").name];
    let evidence = stub["findings"][0]["evidence"][0]
        .as_str()
        .unwrap_or_default();
    assert!(
        evidence.contains("/etc/kubernetes/kubelet-config.yaml:"),
        "{evidence}"
    );
    assert!(
        evidence.contains("stub-resolv.conf") && evidence.contains("127.0.0.53"),
        "{evidence}"
    );

    // Fleet drift: the one node with bridge-nf-call-iptables=0 stands out; the healthy
    // nodes do not drift.
    let brnf = hosts[&lab.node("brnf-off").name];
    let drift: Vec<&str> = brnf["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["id"] == "DNS-FLEET-DRIFT")
        .filter_map(|f| f["summary"].as_str())
        .collect();
    assert!(
        drift
            .iter()
            .any(|s| s.contains("net.bridge.bridge-nf-call-iptables is 0 here")),
        "{drift:?}"
    );
    for node in lab.nodes.iter().filter(|n| n.scenario == "healthy") {
        assert!(
            ids(hosts[&node.name], true).is_empty(),
            "{} drifts: {:#}",
            node.name,
            hosts[&node.name]
        );
    }

    // Worst first: the critical hosts come before the clean ones.
    let order: Vec<&str> = doc["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .filter_map(|h| h["worst"].as_str())
        .collect();
    assert_eq!(order.first(), Some(&"critical"), "{order:?}");

    junit_has_a_testcase_per_rule_and_host(&lab, scenarios.len());

    // A clean subset exits 0; the text report says so.
    let clean: Vec<&str> = lab
        .nodes
        .iter()
        .filter(|n| n.scenario == "healthy")
        .map(|n| n.name.as_str())
        .collect();
    let out = check(&lab, &["--limit", &clean.join(",")]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("2 hosts: 2 clean; 0 findings"));
}

#[test]
fn an_unreachable_host_takes_precedence() {
    let lab = Lab::start(&["stub-symlink", "healthy"])
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let healthy = lab.node("healthy").name.clone();
    lab.stop(&healthy);
    let out = check(&lab, &["--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "exit 3 even with findings elsewhere"
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        doc["hosts"][0]["host"],
        healthy.as_str(),
        "unreachable hosts come first"
    );
    assert_eq!(doc["hosts"][0]["status"], "failed");
    assert_eq!(doc["hosts"][1]["worst"], "critical");
}

/// Five host search domains: over the limits before Kubernetes 1.26, within the expanded
/// ones. The inventory names no kube_version and check does not run the nodes' kubelet
/// binaries: the running kubelets' version comes from the cluster (kubectl on the control
/// plane; the lab's kubelets report v1.30.2), so the list is within the limits. A list over
/// even the expanded limits says where the version came from: the cluster, or, with no
/// control plane in the inventory or a cluster that refuses to list its nodes, each
/// node's `kubelet --version`.
#[test]
fn the_search_limits_follow_the_kubelet_version_the_cluster_reports() {
    let lab =
        Lab::start(&["healthy", "healthy"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[1].name.clone();
    let set_search = |domains: &str| {
        lab.exec(
            &node,
            &format!("sed -i 's/^search .*/search {domains}/' /run/systemd/resolve/resolv.conf"),
        );
    };
    let search = |inventory: &std::path::Path| -> Vec<String> {
        let out = Dnsfix::new(["check"])
            .lab(&lab, inventory)
            .args(["--connect-timeout", "5", "--format", "json"])
            .output();
        let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(doc["hosts"].as_array().map(Vec::len), Some(2), "{doc:#}");
        doc["hosts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|h| h["host"] == node.as_str())
            .flat_map(|h| h["findings"].as_array().cloned().unwrap_or_default())
            .filter(|f| f["id"] == "DNS-SEARCH-LIMIT")
            .map(|f| f["summary"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    set_search("a.example b.example c.example d.example e.example");
    assert_eq!(search(&lab.inventory()), Vec::<String>::new());

    // Ten domains of 230 characters: over 2048 characters whatever the version.
    let label = "x".repeat(56);
    let long: Vec<String> = (0..10)
        .map(|i| format!("d{i}.{label}.{label}.{label}.{label}.example"))
        .collect();
    set_search(&long.join(" "));
    let found = search(&lab.inventory());
    assert!(
        found.len() == 1 && found[0].contains("status.nodeInfo.kubeletVersion: v1.30.2"),
        "{found:?}"
    );

    // No kube_control_plane group: no cluster to read, so each node is asked.
    let inventory = lab.dir.join("no-control-plane.yaml");
    let text = std::fs::read_to_string(lab.inventory()).expect("inventory");
    let renamed = text.replace("kube_control_plane:", "dnsfix_no_control_plane:");
    assert_ne!(renamed, text);
    std::fs::write(&inventory, renamed).expect("write inventory");
    let found = search(&inventory);
    assert!(
        found.len() == 1 && found[0].contains("kubelet --version: v1.30.2"),
        "{found:?}"
    );

    // A cluster that will not list its nodes (RBAC): the hosts whose findings depend on
    // the version are gathered again, their kubelet binary asked.
    std::fs::write(lab.dir.join("get-nodes-forbidden"), "").expect("refuse get nodes");
    let found = search(&lab.inventory());
    assert!(
        found.len() == 1 && found[0].contains("kubelet --version: v1.30.2"),
        "{found:?}"
    );
    set_search("a.example b.example c.example d.example e.example");
    assert_eq!(search(&lab.inventory()), Vec::<String>::new());
}

/// The lab's ConfigMaps with kubeadm's as a 1.23 cluster keeps them (`kubeadm-config` and
/// `kubelet-config-1.23`, tests/fixtures/kubectl/README.md), its version set to `version`.
fn kubeadm_1_23_configmaps(lab: &Lab, version: &str) {
    let read = |path: &std::path::Path| -> Value {
        serde_json::from_slice(&std::fs::read(path).expect("read")).expect("JSON")
    };
    let mut lab_cms = read(&lab.dir.join("lib/configmaps.json"));
    let old = read(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/kubectl/kubeadm-1.23-configmaps.json"),
    );
    let items = lab_cms["items"].as_array_mut().expect("items");
    items.retain(|i| {
        !["kubelet-config", "kubeadm-config"]
            .contains(&i["metadata"]["name"].as_str().unwrap_or_default())
    });
    for item in old["items"].as_array().expect("items") {
        let mut item = item.clone();
        if item["metadata"]["name"] == "kubeadm-config" {
            let cc = item["data"]["ClusterConfiguration"]
                .as_str()
                .expect("ClusterConfiguration");
            item["data"]["ClusterConfiguration"] = Value::String(cc.replace(
                "kubernetesVersion: v1.23.17",
                &format!("kubernetesVersion: {version}"),
            ));
        }
        items.push(item);
    }
    std::fs::write(
        lab.dir.join("configmaps.json"),
        serde_json::to_vec(&lab_cms).expect("JSON"),
    )
    .expect("write configmaps.json");
}

/// Before 1.24 kubeadm keeps the kubelets' settings in `kubelet-config-1.NN`, NN the
/// cluster's minor version: a kubeadm node is compared with the one its next `kubeadm
/// upgrade node` reads. Here kubeadm ran `init` without systemd-resolved, so the ConfigMap
/// sets no resolvConf and kubeadm chooses per node when it writes the node's file: where
/// systemd-resolved runs, its upstream file, which the node has, so nothing differs; where
/// it does not, nothing (the kubelet's default, /etc/resolv.conf), which the node's
/// systemd-resolved file is not. A ConfigMap for another version is not this cluster's:
/// nothing to compare.
#[test]
fn a_kubeadm_cluster_before_1_24_is_compared_with_its_versioned_kubelet_config() {
    let lab = Lab::start(&["kubeadm"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.node("kubeadm").name.clone();
    let host_of = |out: &Output| -> Value {
        let hosts = json_hosts(out);
        hosts
            .iter()
            .find(|h| h["host"] == node.as_str())
            .cloned()
            .unwrap_or_else(|| panic!("{node} missing: {hosts:#?}"))
    };
    // The host's finding (or not-applicable entry) of the drift rule.
    let drift = |host: &Value, list: &str| -> Option<Value> {
        host[list]
            .as_array()
            .into_iter()
            .flatten()
            .find(|n| n["id"] == "DNS-KUBEADM-CONFIG-DRIFT")
            .cloned()
    };

    kubeadm_1_23_configmaps(&lab, "v1.23.17");
    // systemd-resolved runs: kubeadm would write the file the node has.
    let out = check(&lab, &["--format", "json"]);
    let host = host_of(&out);
    assert_eq!(ids(&host, false), Vec::<String>::new(), "{host:#}");
    assert!(
        drift(&host, "not_applicable").is_none(),
        "compared, and nothing differs: {host:#}"
    );

    lab.exec("kubeadm", "systemctl stop systemd-resolved");
    let out = check(&lab, &["--format", "json"]);
    let host = host_of(&out);
    let finding = drift(&host, "findings").unwrap_or_else(|| panic!("{host:#}"));
    let evidence: Vec<&str> = finding["evidence"]
        .as_array()
        .expect("evidence")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        evidence
            .iter()
            .any(|e| e.starts_with("/var/lib/kubelet/config.yaml:")
                && e.ends_with(" resolvConf: /run/systemd/resolve/resolv.conf")),
        "{host:#}"
    );
    assert!(
        evidence.contains(
            &"ConfigMap kube-system/kubelet-config-1.23 (data.kubelet) sets no resolvConf, and systemd-resolved does not run here (systemctl is-active), so kubeadm writes none and the kubelet takes its default: /etc/resolv.conf"
        ),
        "{host:#}"
    );
    let fix = finding["remediation"].as_str().unwrap_or_default();
    // A 1.23 cluster's next upgrade runs kubeadm 1.24, which takes no kubeletconfiguration
    // patch: the kubelet's flag keeps the node's file.
    assert!(
        fix.contains("kubeadm upgrade node phase kubelet-config")
            && fix.contains("--resolv-conf in KUBELET_EXTRA_ARGS")
            && !fix.contains("--patches"),
        "{host:#}"
    );
    lab.exec("kubeadm", "systemctl start systemd-resolved");

    // kubeadm-config says 1.22: kubelet-config-1.23 is not what its upgrade reads.
    kubeadm_1_23_configmaps(&lab, "v1.22.17");
    let out = check(&lab, &["--format", "json"]);
    let host = host_of(&out);
    assert_eq!(ids(&host, false), Vec::<String>::new(), "{host:#}");
    let reason = drift(&host, "not_applicable").unwrap_or_else(|| panic!("{host:#}"));
    assert_eq!(
        reason["reason"], "the cluster has neither kubelet-config nor kubelet-config-1.22",
        "{host:#}"
    );
}

/// A NodeLocal DNSCache pod of the cluster (from tests/fixtures/kubectl/dns-pods.json, as
/// kubectl prints it) moved onto `node`: `index` picks the fixture's pod, `ready` its state.
fn cache_pod(index: usize, node: &str, ready: bool) -> Value {
    let fixture: Value = serde_json::from_slice(
        &std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/kubectl/dns-pods.json"),
        )
        .expect("fixture"),
    )
    .expect("JSON");
    let mut pod = fixture["items"][index].clone();
    let name = format!(
        "{}{node}",
        pod["metadata"]["generateName"].as_str().expect("name")
    );
    pod["metadata"]["name"] = Value::String(name);
    pod["spec"]["nodeName"] = Value::String(node.to_owned());
    let status = &mut pod["status"]["containerStatuses"][0];
    status["ready"] = Value::Bool(ready);
    if !ready {
        status["restartCount"] = 9.into();
        status["state"] = serde_json::json!({"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s restarting failed container"}});
    }
    pod
}

/// Kubespray's nodes hold NodeLocal DNSCache's address on their nodelocaldns interface
/// whether or not a cache answers there (-skipteardown, a crash): a node whose cache pods
/// are down and where nothing listens on that address (its socket table) is critical,
/// while its files look healthy. The lab's DNS "pod" (dnsmasq) plays the cache: stopped,
/// nothing listens; started again, it answers, whatever the pod list says.
#[test]
fn a_node_whose_nodelocaldns_pods_are_down_is_critical() {
    let lab =
        Lab::start(&["healthy", "healthy"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let (down, up) = (lab.nodes[0].name.clone(), lab.nodes[1].name.clone());
    lab.exec(
        &down,
        "p=$(cat /run/lab-dns/cluster-dns.pid) && kill $p && while kill -0 $p 2>/dev/null; do sleep 0.01; done",
    );
    let pods = lab.dir.join("pods");
    std::fs::create_dir_all(&pods).expect("pods dir");
    let put = |file: &str, pod: Value| {
        std::fs::write(pods.join(file), pod.to_string()).expect("write pod");
    };
    // The fixture's pods: 3 the primary DaemonSet's, 4 the secondary's.
    put("primary-down.json", cache_pod(3, &down, false));
    put("primary-up.json", cache_pod(3, &up, true));
    let findings = |host: &str| -> Vec<Value> {
        let out = check(&lab, &["--format", "json"]);
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
        doc["hosts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|h| h["host"] == host)
            .flat_map(|h| h["findings"].as_array().cloned().unwrap_or_default())
            .collect()
    };
    let f = findings(&down);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0]["id"], "DNS-NODELOCAL-DOWN");
    assert_eq!(f[0]["severity"], "critical");
    let summary = f[0]["summary"].as_str().unwrap_or_default();
    assert!(
        summary.starts_with(&format!("nodelocaldns-{down} is not ready, but the nodelocaldns interface still holds kubelet clusterDNS 169.254.25.10")),
        "{summary}"
    );
    let evidence: Vec<&str> = f[0]["evidence"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        evidence.iter().any(|e| e.contains("CrashLoopBackOff, 9 restarts"))
            && evidence.contains(
                &"/proc/net/udp, /proc/net/udp6: no UDP socket on port 53 of 169.254.25.10 or of every address"
            ),
        "{f:#?}"
    );
    assert_eq!(findings(&up), Vec::<Value>::new());

    // A secondary listed as running does not make a dead address answer.
    put("secondary-up.json", cache_pod(4, &down, true));
    assert_eq!(findings(&down).len(), 1);
    // The cache listening again (the lab's pod restarted) is what counts.
    lab.exec(&down, "/run/lab-dns/recreate-pod");
    assert_eq!(findings(&down), Vec::<Value>::new());
}

/// The cluster's DNS Service is read with the DNS pods: a kubelet whose clusterDNS is an
/// address no such Service has, and no DNS server on its node is bound to, is critical
/// (the kubeadm node's 10.96.0.10 in a cluster whose CoreDNS Service is Kubespray's
/// 10.233.0.3, tests/fixtures/kubectl/dns-services.json); NodeLocal DNSCache's link-local
/// address on the Kubespray node is not this rule's. Without the Service (the lab's
/// default) nothing is judged.
#[test]
fn a_kubelet_whose_cluster_dns_no_service_holds_is_critical() {
    let lab =
        Lab::start(&["healthy", "kubeadm"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let findings = |lab: &Lab| -> BTreeMap<String, Vec<Value>> {
        json_hosts(&check(lab, &["--format", "json"]))
            .iter()
            .map(|h| {
                let found = h["findings"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|f| f["id"] == "DNS-KUBELET-NO-CLUSTER-DNS")
                    .cloned()
                    .collect();
                (h["host"].as_str().unwrap_or_default().to_owned(), found)
            })
            .collect()
    };
    let kubeadm = lab.node("kubeadm").name.clone();
    let healthy = lab.node("healthy").name.clone();
    let none = findings(&lab);
    assert!(
        none[&kubeadm].is_empty() && none[&healthy].is_empty(),
        "{none:#?}"
    );

    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/kubectl/dns-services.json"),
        lab.dir.join("services.json"),
    )
    .expect("copy services.json");
    // The lab's DNS "pod" on the kubeadm node listens on its clusterDNS address itself
    // (kube-ipvs0, as IPVS holds a Service's address): a DNS server bound there answers,
    // and nothing is said.
    let bound = findings(&lab);
    assert!(bound[&kubeadm].is_empty(), "{bound:#?}");
    // Without it, nothing on the node answers at 10.96.0.10, as where no Service has it.
    lab.exec("kubeadm", "kill $(cat /run/lab-dns/cluster-dns.pid)");
    let read = findings(&lab);
    assert!(read[&healthy].is_empty(), "{read:#?}");
    let f = read[&kubeadm]
        .first()
        .unwrap_or_else(|| panic!("{read:#?}"));
    assert_eq!(f["severity"], "critical", "{f:#}");
    assert!(
        f["summary"]
            .as_str()
            .unwrap_or_default()
            .starts_with("kubelet clusterDNS 10.96.0.10 is not the address of the cluster's DNS Service (kube-system/coredns 10.233.0.3)"),
        "{f:#}"
    );
    assert!(
        f["evidence"]
            .as_array()
            .expect("evidence")
            .iter()
            .any(|e| e.as_str().is_some_and(|e| e.starts_with("kubectl on "))),
        "{f:#}"
    );
    assert_eq!(
        f["wanted"]["clusterDNS"],
        serde_json::json!(["10.233.0.3"]),
        "{f:#}"
    );

    // kubelet-cluster-dns gives the kubelet the Service's address, in the config file:
    // applied, the finding is gone.
    let apply = Dnsfix::new(["apply", "--yes", "--limit", kubeadm.as_str()])
        .lab_apply(&lab, &lab.inventory())
        .args(["--connect-timeout", "5"])
        .output();
    assert_eq!(apply.status.code(), Some(0), "{}", describe(&apply));
    let config = lab.exec("kubeadm", "cat /var/lib/kubelet/config.yaml");
    assert!(
        config.contains("clusterDNS:\n- 10.233.0.3\n") && !config.contains("10.96.0.10"),
        "{config}"
    );
    let fixed = findings(&lab);
    assert!(fixed[&kubeadm].is_empty(), "{fixed:#?}");
}

/// A CNI file containerd cannot load, first in /etc/cni/net.d of a real lab node (what a
/// full disk leaves when Calico's install-cni rewrites its conflist): critical, naming the
/// file; once it is moved out of the directory, nothing.
#[test]
fn a_cni_file_containerd_cannot_load_is_found_on_the_node() {
    let lab = Lab::start(&["healthy"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let calico = r#"{"name":"k8s-pod-network","cniVersion":"1.0.0","plugins":[{"type":"calico"}]}"#;
    lab.exec(
        &node,
        &format!(
            "mkdir -p /etc/cni/net.d && printf '%s' '{calico}' > /etc/cni/net.d/10-calico.conflist && : > /etc/cni/net.d/05-cilium.conflist"
        ),
    );
    let findings = || -> Vec<Value> {
        let out = check(&lab, &["--format", "json"]);
        json_hosts(&out)[0]["findings"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|f| f["id"] == "DNS-CNI-CONFIG-INVALID")
            .collect()
    };
    let found = findings();
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0]["severity"], "critical", "{found:#?}");
    let evidence = found[0]["evidence"].to_string();
    assert!(
        evidence.contains("/etc/cni/net.d/05-cilium.conflist: not JSON")
            && evidence.contains("runtime: containerd")
            && evidence
                .contains("/etc/cni/net.d/10-calico.conflist is the first file libcni accepts"),
        "{evidence}"
    );
    lab.exec(&node, "mv /etc/cni/net.d/05-cilium.conflist /root/");
    assert_eq!(findings(), Vec::<Value>::new());
    // A link to nothing is listed too (libcni ConfFiles), and fails to load.
    lab.exec(&node, "ln -s /nowhere /etc/cni/net.d/01-gone.conf");
    let found = findings();
    assert!(
        found.len() == 1
            && found[0]["evidence"]
                .to_string()
                .contains("/etc/cni/net.d/01-gone.conf: a symlink to nothing"),
        "{found:#?}"
    );
    lab.exec(&node, "rm /etc/cni/net.d/01-gone.conf");
    assert_eq!(findings(), Vec::<Value>::new());
}

/// The DNS pods' previous logs are read eight at a time within the command timeout: a pod
/// whose node does not answer (the API server proxies `logs` to its kubelet; the lab's
/// kubectl hangs) costs its own call, and one the API server refuses says why. The text
/// is the kubelet's for a container with no previous run (kubernetes
/// pkg/kubelet/kubelet_pods.go, validateContainerLogStatus: "previous terminated container
/// %q in pod %q not found"), as kubectl prints the API server's BadRequest. Both pods
/// are unknown, not clean, and the third, read, is found looping. Before, the hung call
/// held the whole first listing past the 20 s command timeout and the cluster was not read
/// at all; a refused one counted as read with no loop.
#[test]
fn a_dns_pod_whose_log_cannot_be_read_is_unknown_and_the_others_are_still_read() {
    let lab = Lab::start(&["stub-symlink", "stub-symlink", "stub-symlink"])
        .unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let [hung, refused, read] = [0, 1, 2].map(|i| lab.nodes[i].name.clone());
    let beside_pod = |node: &str, file: &str| lab.dir.join("nodes").join(node).join(file);
    std::fs::write(beside_pod(&hung, "dns-pod.log-hang"), "").expect("hang");
    std::fs::write(
        beside_pod(&refused, "dns-pod.log-error"),
        format!(
            "Error from server (BadRequest): previous terminated container \"coredns\" in pod \"coredns-{refused}-1\" not found\n"
        ),
    )
    .expect("error");
    let started = std::time::Instant::now();
    let out = check(&lab, &["--format", "json", "--command-timeout", "20"]);
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    // The hung call's bound (5 s asked of the API server, TERM 2 s later), once or, where
    // the listing had no time left to start it, twice; not the sleeping stand-in's 600 s.
    assert!(took < std::time::Duration::from_secs(30), "{took:?}");
    let pod_loop = |host: &str| -> Value {
        json_hosts(&out)
            .into_iter()
            .filter(|h| h["host"] == host)
            .flat_map(|h| h["findings"].as_array().cloned().unwrap_or_default())
            .find(|f| f["id"] == "DNS-POD-LOOP")
            .unwrap_or_else(|| panic!("{host}: no DNS-POD-LOOP: {}", describe(&out)))
    };
    let f = pod_loop(&hung);
    assert_eq!(f["status"], "unknown", "{f:#}");
    assert_eq!(
        f["evidence"][0],
        format!(
            "the previous log of coredns-{hung}-1 was not read (kubectl logs did not answer in time)"
        ),
        "{f:#}"
    );
    let f = pod_loop(&refused);
    assert_eq!(f["status"], "unknown", "{f:#}");
    assert_eq!(
        f["evidence"][0],
        format!(
            "the previous log of coredns-{refused}-1 was not read (kubectl logs exited 1: Error from server \
             (BadRequest): previous terminated container \"coredns\" in pod \"coredns-{refused}-1\" not found)"
        ),
        "{f:#}"
    );
    let f = pod_loop(&read);
    assert_eq!(f["status"], "failed", "{f:#}");
    assert!(
        f["evidence"][1]
            .as_str()
            .is_some_and(|e| e.contains("plugin/loop: Loop")),
        "{f:#}"
    );
}
