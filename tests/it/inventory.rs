//! The inventory through its public API, against the shipped `inventory.example/` and the
//! fixture inventories in `tests/fixtures/inventory/`.

use std::path::{Path, PathBuf};

use dnsfix::inventory::{ConnectionKind, Host, Inventory, InventoryError, Vars};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(relative: &str) -> PathBuf {
    root().join("tests/fixtures/inventory").join(relative)
}

fn load(path: &Path) -> Inventory {
    match Inventory::load(path) {
        Ok(inventory) => inventory,
        Err(err) => panic!("{} should load: {err}", path.display()),
    }
}

fn names<'a>(hosts: impl IntoIterator<Item = &'a Host>) -> Vec<&'a str> {
    hosts.into_iter().map(|h| h.name.as_str()).collect()
}

fn selected(inventory: &Inventory, limit: &str) -> Vec<String> {
    match inventory.select(Some(limit)) {
        Ok(hosts) => hosts.into_iter().map(|h| h.name.clone()).collect(),
        Err(err) => panic!("--limit {limit} should select hosts: {err}"),
    }
}

fn host<'a>(inventory: &'a Inventory, name: &str) -> &'a Host {
    match inventory.host(name) {
        Some(host) => host,
        None => panic!("no host {name}"),
    }
}

/// Variables without the two that name the file a host came from.
fn portable(vars: &Vars) -> Vars {
    let mut vars = vars.clone();
    vars.remove("inventory_file");
    vars.remove("inventory_dir");
    vars
}

#[test]
fn the_shipped_example_loads_with_every_dns_variable() {
    let inventory = load(&root().join("inventory.example/hosts.yaml"));
    assert!(
        inventory.warnings().is_empty(),
        "{:?}",
        inventory.warnings()
    );
    assert_eq!(
        names(inventory.hosts()),
        ["cp1", "cp2", "cp3", "worker1", "worker2", "worker3"]
    );
    assert_eq!(
        inventory.group_members("etcd"),
        Some(vec!["cp1", "cp2", "cp3"])
    );
    assert_eq!(inventory.group_members("calico_rr"), Some(vec![]));
    for host in inventory.hosts() {
        assert!(
            host.groups.iter().any(|g| g == "k8s_cluster"),
            "{}",
            host.name
        );
        assert_eq!(
            host.var_list("upstream_dns_servers"),
            Some(vec![
                "198.51.100.53".to_string(),
                "198.51.100.54".to_string()
            ])
        );
        assert_eq!(
            host.var_list("nameservers"),
            Some(vec!["198.51.100.53".to_string()])
        );
        assert_eq!(host.var_str("resolvconf_mode"), Some("host_resolvconf"));
        assert_eq!(host.var_bool("enable_nodelocaldns"), Some(true));
        assert_eq!(host.var_str("nodelocaldns_ip"), Some("169.254.25.10"));
        assert_eq!(host.var_str("dns_domain"), Some("cluster.local"));
        assert_eq!(
            host.var_str("kube_service_addresses"),
            Some("10.233.0.0/18")
        );
        assert_eq!(
            host.var_str("kube_resolv_conf"),
            Some("/run/systemd/resolve/resolv.conf")
        );
        assert_eq!(host.var_str("kube_proxy_mode"), Some("ipvs"));
        assert_eq!(
            host.var_list("searchdomains"),
            Some(vec!["corp.example".to_string()])
        );
        let connection = host.connection();
        assert_eq!(connection.kind, ConnectionKind::Ssh);
        assert_eq!(connection.user.as_deref(), Some("ubuntu"));
        assert!(connection.become_root);
        assert!(connection.address.starts_with("192.0.2."));
    }
    assert_eq!(host(&inventory, "worker3").connection().port, Some(2222));
    assert_eq!(host(&inventory, "worker1").connection().port, None);
}

#[test]
fn kubespray_ini_and_yaml_forms_are_the_same_inventory() {
    let ini = load(&fixture("kubespray/inventory.ini"));
    let yaml = load(&fixture("kubespray/hosts.yaml"));
    assert_eq!(
        names(ini.hosts()),
        ["node1", "node2", "node3", "node4", "node5"]
    );
    assert_eq!(names(ini.hosts()), names(yaml.hosts()));
    for (a, b) in ini.hosts().iter().zip(yaml.hosts()) {
        assert_eq!(a.groups, b.groups, "{}", a.name);
        assert_eq!(portable(&a.vars), portable(&b.vars), "{}", a.name);
    }
    for group in [
        "kube_control_plane",
        "etcd",
        "kube_node",
        "calico_rr",
        "k8s_cluster",
        "ungrouped",
    ] {
        assert_eq!(
            ini.group_members(group),
            yaml.group_members(group),
            "{group}"
        );
    }
    assert_eq!(
        ini.group_members("k8s_cluster"),
        Some(vec!["node1", "node2", "node3", "node4", "node5"])
    );
    assert_eq!(ini.group_members("nope"), None);

    let node3 = host(&ini, "node3");
    assert_eq!(node3.groups, ["all", "etcd", "k8s_cluster", "kube_node"]);
    // group_vars/all/ is a directory: all.yml, then zz-overrides.yml.
    assert_eq!(node3.var_str("ansible_user"), Some("kube-admin"));
    assert_eq!(node3.var_str("etcd_deployment_type"), Some("host"));
    // A bare reference resolves as Ansible's templar would; anything else stays verbatim.
    assert_eq!(node3.var_str("dns_domain"), Some("cluster.local"));
    assert_eq!(
        node3
            .origins
            .get("dns_domain")
            .and_then(|o| o.template.as_deref()),
        Some("{{ cluster_name }}")
    );
    assert_eq!(node3.var_str("kube_resolv_conf"), None);
    assert_eq!(
        host(&ini, "node5").var_str("kube_resolv_conf"),
        Some("/run/systemd/resolve/resolv.conf")
    );
    let inventory_dir = fixture("kubespray");
    assert_eq!(
        node3.var_str("inventory_dir").map(Path::new),
        Some(inventory_dir.as_path())
    );
}

#[test]
fn an_inventory_directory_reads_its_files_and_vars() {
    let dir = load(&fixture("kubespray"));
    let yaml = load(&fixture("kubespray/hosts.yaml"));
    assert_eq!(dir.path(), Some(fixture("kubespray").as_path()));
    assert_eq!(names(dir.hosts()), names(yaml.hosts()));
    for (a, b) in dir.hosts().iter().zip(yaml.hosts()) {
        assert_eq!(a.groups, b.groups);
        assert_eq!(portable(&a.vars), portable(&b.vars));
    }
}

#[test]
fn variable_precedence_follows_ansible() {
    let inventory = load(&fixture("precedence/hosts.yaml"));
    let node1 = host(&inventory, "node1");
    let node2 = host(&inventory, "node2");
    let node3 = host(&inventory, "node3");

    // all < parent < child, inline.
    assert_eq!(node1.var_str("from_all"), Some("all-inline"));
    assert_eq!(node1.var_str("by_depth"), Some("k8s_cluster-inline"));
    assert_eq!(node2.var_str("by_depth"), Some("kube_node-inline"));
    // Same depth: later name wins (k8s_cluster over etcd) ...
    assert_eq!(node1.var_str("same_depth"), Some("k8s_cluster-inline"));
    assert_eq!(node2.var_str("same_depth"), Some("k8s_cluster-inline"));
    // ... unless ansible_group_priority says otherwise; the priority is not a variable.
    assert_eq!(node2.var_str("by_priority"), Some("prioritised-inline"));
    assert_eq!(node3.var_str("by_priority"), Some("k8s_cluster-inline"));
    assert_eq!(node2.var("ansible_group_priority"), None);
    assert_eq!(
        node2.groups,
        ["all", "etcd", "k8s_cluster", "prioritised", "kube_node"]
    );
    // Host beats group.
    assert_eq!(node2.var_str("host_beats_group"), Some("node2-inline"));
    assert_eq!(node3.var_str("host_beats_group"), Some("kube_node-inline"));

    // group_vars/ files beat inventory-file group vars, even group_vars/all over a child
    // group's inline value (Ansible's order, and what Kubespray really deploys).
    assert_eq!(node2.var_str("file_beats_inline"), Some("all-file"));
    assert_eq!(node1.var_str("from_all_file"), Some("all-file"));
    // Among group_vars files: deeper group wins.
    assert_eq!(node1.var_str("file_by_depth"), Some("k8s_cluster-file"));
    assert_eq!(node2.var_str("file_by_depth"), Some("kube_node-file"));
    // A group_vars directory: files merged in name order; hidden, backup and .retry skipped.
    assert_eq!(node1.var_str("dir_merge"), Some("second"));
    assert_eq!(node1.var_str("only_in_first"), Some("kept"));
    // host_vars/ beats the host's inline vars; host_vars/<host>/ directories work too.
    assert_eq!(node2.var_str("host_inline_vs_file"), Some("host-file"));
    // A plain YAML 1.1 `yes` is a boolean, as PyYAML reads it.
    assert_eq!(node3.var("from_host_dir"), Some(&serde_json::json!(true)));
}

#[test]
fn connections_come_from_the_connection_variables() {
    let inventory = load(&fixture("precedence/hosts.yaml"));
    let node1 = host(&inventory, "node1").connection();
    assert_eq!(node1.kind, ConnectionKind::Ssh);
    assert_eq!(node1.address, "192.0.2.11");
    assert_eq!(node1.port, Some(2222));
    assert_eq!(node1.user.as_deref(), Some("ops"));
    assert!(node1.become_root, "ansible_become: \"yes\"");
    // A relative key is opened in the current directory, as Ansible's ssh opens it.
    assert_eq!(
        node1.private_key,
        Some(
            std::env::current_dir()
                .expect("cwd")
                .join("keys/id_ed25519")
        )
    );

    let node2 = host(&inventory, "node2").connection();
    assert_eq!(node2.port, None);
    assert_eq!(node2.user, None);
    assert_eq!(node2.private_key, None);
    assert!(!node2.become_root);

    let node3 = host(&inventory, "node3").connection();
    assert_eq!(node3.kind, ConnectionKind::Local);
    assert_eq!(node3.address, "node3");
}

#[test]
fn limit_patterns_select_like_ansible() {
    let inventory = load(&fixture("kubespray/inventory.ini"));
    let all = ["node1", "node2", "node3", "node4", "node5"];
    assert_eq!(names(inventory.select(None).unwrap_or_default()), all);
    for (limit, want) in [
        ("all", &all[..]),
        ("*", &all[..]),
        ("node3", &["node3"][..]),
        ("kube_node", &["node3", "node4", "node5"][..]),
        ("k8s_cluster", &all[..]),
        ("node[!123]", &["node4", "node5"][..]),
        ("node*", &all[..]),
        ("kube_*", &all[..]),
        ("kube_control_*", &["node1", "node2"][..]),
        ("node5,node1", &["node1", "node5"][..]),
        ("node5:node1", &["node1", "node5"][..]),
        ("kube_control_plane:kube_node", &all[..]),
        ("kube_node:!node4", &["node3", "node5"][..]),
        ("!node4:kube_node", &["node3", "node5"][..]),
        ("!kube_node", &["node1", "node2"][..]),
        ("etcd:&kube_node", &["node3"][..]),
        ("k8s_cluster:&etcd:!kube_control_plane", &["node3"][..]),
        ("kube_node[0]", &["node3"][..]),
        ("kube_node[-1]", &["node5"][..]),
        ("kube_node[1:]", &["node4", "node5"][..]),
        ("calico_rr,node2", &["node2"][..]),
    ] {
        assert_eq!(selected(&inventory, limit), want, "--limit {limit}");
    }
}

#[test]
fn limit_errors_name_the_pattern_and_the_inventory() {
    let path = fixture("kubespray/inventory.ini");
    let inventory = load(&path);
    let message = |limit: &str| match inventory.select(Some(limit)) {
        Ok(hosts) => panic!("--limit {limit} selected {:?}", names(hosts)),
        Err(err) => err.to_string(),
    };
    assert_eq!(
        message("foo"),
        format!(
            "--limit `foo` matches no host or group in {}",
            path.display()
        )
    );
    // A mistyped exclusion must not silently select more than intended.
    assert_eq!(
        message("kube_node:!node44"),
        format!(
            "--limit `!node44` matches no host or group in {}",
            path.display()
        )
    );
    assert_eq!(
        message("web*"),
        format!(
            "--limit `web*` matches no host or group in {}",
            path.display()
        )
    );
    assert_eq!(
        message("kube_control_plane:&kube_node:!etcd"),
        format!(
            "--limit `kube_control_plane:&kube_node:!etcd` selects no host in {}",
            path.display()
        )
    );
    assert_eq!(
        message("calico_rr"),
        format!("--limit `calico_rr` selects no host in {}", path.display())
    );
    assert!(message("kube_node[7]").contains("out of range"));
    assert!(message("~node.*").contains("not supported"));
    assert!(message(",").contains("names no host or group"));
    assert!(matches!(
        inventory.select(Some("nothing")),
        Err(InventoryError::LimitNoMatch { .. })
    ));
}

#[test]
fn limit_reads_host_names_from_a_file() {
    let inventory = load(&fixture("kubespray/inventory.ini"));
    let retry = fixture("limit.retry");
    assert_eq!(
        selected(&inventory, &format!("@{}", retry.display())),
        ["node1", "node4"]
    );
    let missing = fixture("missing.retry");
    let err = inventory
        .select(Some(&format!("@{}", missing.display())))
        .map(names)
        .expect_err("missing limit file");
    assert!(matches!(err, InventoryError::LimitFile { .. }), "{err}");
}

#[test]
fn malformed_yaml_is_reported_at_its_line() {
    let path = fixture("broken-yaml/hosts.yaml");
    let err = Inventory::load(&path).map(|_| ()).expect_err("broken");
    assert_eq!(
        err.to_string(),
        format!(
            "{}:5:9: expected a mapping of hosts under `kube_node.hosts`, found a list",
            path.display()
        )
    );
    assert!(matches!(
        err,
        InventoryError::Parse {
            line: Some(5),
            column: Some(9),
            ..
        }
    ));
}

#[test]
fn malformed_ini_is_reported_at_its_line() {
    let path = fixture("broken-ini/inventory.ini");
    let err = Inventory::load(&path).map(|_| ()).expect_err("broken");
    assert_eq!(
        err.to_string(),
        format!(
            "{}:4: unknown section type `:hosts_and_vars` in `[kube_node:hosts_and_vars]`: expected [kube_node], [kube_node:vars] or [kube_node:children]",
            path.display()
        )
    );
}

#[test]
fn a_group_vars_file_that_is_not_a_mapping_is_reported_at_its_line() {
    let err = Inventory::load(&fixture("broken-group-vars/hosts.yaml"))
        .map(|_| ())
        .expect_err("broken group_vars");
    let file = fixture("broken-group-vars/group_vars/all.yml");
    assert_eq!(
        err.to_string(),
        format!(
            "{}:3:1: expected a mapping of variables (`name: value`), found a list",
            file.display()
        )
    );
}

#[test]
fn a_missing_inventory_names_its_path() {
    let path = fixture("no-such-inventory.yaml");
    let err = Inventory::load(&path).map(|_| ()).expect_err("missing");
    assert_eq!(
        err.to_string(),
        format!("inventory {} does not exist", path.display())
    );
}

#[test]
fn the_implicit_inventory_is_localhost() {
    let inventory = Inventory::local();
    assert_eq!(inventory.path(), None);
    assert_eq!(names(inventory.hosts()), ["localhost"]);
    let localhost = &inventory.hosts()[0];
    assert_eq!(localhost.groups, ["all"]);
    assert_eq!(localhost.var_str("ansible_connection"), Some("local"));
    let connection = localhost.connection();
    assert_eq!(connection.kind, ConnectionKind::Local);
    assert_eq!(connection.address, "localhost");
    assert!(!connection.become_root);
    assert_eq!(inventory.group_members("all"), Some(vec!["localhost"]));
    assert_eq!(
        names(inventory.select(Some("all")).unwrap_or_default()),
        ["localhost"]
    );
    assert_eq!(
        names(inventory.select(Some("localhost")).unwrap_or_default()),
        ["localhost"]
    );
    let err = inventory
        .select(Some("node1"))
        .map(names)
        .expect_err("no node1");
    assert_eq!(
        err.to_string(),
        "--limit `node1` matches no host or group in the implicit localhost inventory"
    );
}

/// Kubespray's current sample layout (tests/fixtures/inventory/kubespray-sample-head, from
/// kubespray master 46dbdd39): no `k8s_cluster` in inventory.ini, so its group_vars apply
/// only through Kubespray's dynamic groups.
#[test]
fn kubesprays_current_sample_sees_its_k8s_cluster_group_vars() {
    let inventory = load(&fixture("kubespray-sample-head/inventory.ini"));
    assert_eq!(inventory.dynamic_groups(), ["k8s_cluster"]);
    // In Ansible's order: `kube_node` hangs from `all`, `kube_control_plane` from `etcd`.
    let all = ["node4", "node5", "node6", "node1", "node2", "node3"];
    assert_eq!(inventory.group_members("k8s_cluster"), Some(all.to_vec()));
    assert_eq!(selected(&inventory, "k8s_cluster"), all);
    assert_eq!(
        selected(&inventory, "k8s_cluster:!kube_control_plane"),
        ["node4", "node5", "node6"]
    );
    let node4 = host(&inventory, "node4");
    let origin = |key: &str| {
        let o = node4
            .origins
            .get(key)
            .unwrap_or_else(|| panic!("{key} has no origin"));
        format!(
            "{}:{}",
            o.path
                .strip_prefix(fixture("kubespray-sample-head"))
                .unwrap_or(&o.path)
                .display(),
            o.line.unwrap_or(0)
        )
    };
    assert_eq!(node4.var_str("kube_proxy_mode"), Some("ipvs"));
    assert_eq!(
        origin("kube_proxy_mode"),
        "group_vars/k8s_cluster/k8s-cluster.yml:136"
    );
    assert_eq!(node4.var_bool("enable_nodelocaldns"), Some(true));
    assert_eq!(node4.var_str("nodelocaldns_ip"), Some("169.254.25.10"));
    assert_eq!(
        node4.var_str("kube_service_addresses"),
        Some("10.233.0.0/18")
    );
    assert_eq!(node4.var_str("dns_domain"), Some("cluster.local"));
    assert_eq!(
        origin("dns_domain"),
        "group_vars/k8s_cluster/k8s-cluster.yml:231"
    );
    // Commented out in the sample: not set.
    assert_eq!(node4.var("upstream_dns_servers"), None);
    assert_eq!(node4.connection().address, "95.54.0.15");
}

/// A huge group_vars file (a log or a dump put there by mistake) is refused by size,
/// naming it, before it is read whole or parsed.
#[test]
fn an_oversized_vars_file_is_refused_by_name() {
    let dir = std::env::temp_dir().join(format!("dnsfix-big-vars-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("group_vars")).expect("mkdir");
    std::fs::write(dir.join("hosts.ini"), "[kube_node]\nnode1\n").expect("write");
    let big = dir.join("group_vars/all.yml");
    std::fs::File::create(&big)
        .and_then(|f| f.set_len(dnsfix::inventory::MAX_FILE + 1))
        .expect("sparse file");
    let start = std::time::Instant::now();
    let err = Inventory::load(&dir.join("hosts.ini")).expect_err("refused");
    let message = err.to_string();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        message.contains("group_vars/all.yml") && message.contains("larger than 16 MiB"),
        "{message}"
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(2));
}

/// A host name with a control character (here a CR LF, which would print as lines of
/// their own in every report) is refused where it is written, shown escaped.
#[test]
fn a_host_name_with_control_characters_is_refused_at_its_line() {
    let dir = std::env::temp_dir().join(format!("dnsfix-inv-ctl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let yaml = dir.join("hosts.yaml");
    std::fs::write(
        &yaml,
        "all:\n  hosts:\n    node1: {}\n    \"node2\\r\\n## injected\": {}\n",
    )
    .expect("write");
    let err = Inventory::load(&yaml).map(|_| ()).expect_err("refused");
    let message = err.to_string();
    assert!(
        message.starts_with(&format!("{}:3:5:", yaml.display()))
            && message.contains(
                "invalid host pattern `node2\\r\\n## injected` in `all.hosts`: a host name cannot hold control characters"
            ),
        "{message}"
    );
    let ini = dir.join("inventory.ini");
    std::fs::write(&ini, "[kube_node]\nnode1\nnode\x1b[2J2\n").expect("write");
    let err = Inventory::load(&ini).map(|_| ()).expect_err("refused");
    assert_eq!(
        err.to_string(),
        format!(
            "{}:3: invalid host pattern `node\\u{{1b}}[2J2`: a host name cannot hold control characters",
            ini.display()
        )
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A vars file of thousands of variables, each a number YAML 1.1 reads otherwise than
/// YAML 1.2 (`1e3` is a string to PyYAML), is read in no time, with each line and value,
/// where every token of such a value reads one way (here every `1e3`). Before, each such
/// number was located by parsing the whole file again, and each key's line by scanning it
/// again: 4,000 of them took 2.5 minutes on a debug build. Where tokens of one value read
/// two ways (`1e3` beside `1000.0`, or one a tag may stand before), each number with it is
/// still located so, up to `MAX_LOCATED` of them (see `yaml11.rs`): that is not one go.
#[test]
fn thousands_of_yaml11_numbers_in_a_vars_file_are_read_in_one_go() {
    let dir = std::env::temp_dir().join(format!("dnsfix-inv-many-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("group_vars")).expect("mkdir");
    std::fs::write(dir.join("hosts.ini"), "n1\n").expect("write");
    let text: String = (0..4000).map(|i| format!("k{i}: 1e3\n")).collect();
    std::fs::write(dir.join("group_vars/all.yml"), text).expect("write");
    let started = std::time::Instant::now();
    let inventory = load(&dir.join("hosts.ini"));
    let took = started.elapsed();
    let n1 = host(&inventory, "n1");
    assert_eq!(n1.var("k3999"), Some(&serde_json::json!("1e3")));
    assert_eq!(n1.origins["k3999"].line, Some(4000));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(took.as_secs() < 20, "took {took:?}");
}

/// Where a vars file's keys are is read only as far as a key can reach on each line: a
/// minified JSON file of 16,000 keys on one line and a 200 KB value of many colons
/// (`x 1:5 1:5 ...`) are read in no time. Before, every text before every colon was kept
/// as a possible key: 6 s and 3 GB for the JSON file, 5 GB for the value (debug build).
#[test]
fn long_lines_of_many_colons_in_a_vars_file_are_read_in_no_time() {
    let dir = std::env::temp_dir().join(format!("dnsfix-inv-colons-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("group_vars/all")).expect("mkdir");
    std::fs::write(dir.join("hosts.ini"), "n1\n").expect("write");
    let keys: Vec<String> = (0..16_000).map(|i| format!("\"k{i}\": {i}")).collect();
    let json = format!("{{{}}}\n", keys.join(", "));
    std::fs::write(dir.join("group_vars/all/s.json"), json).expect("write");
    let value = "x 1:5".repeat(40_000);
    std::fs::write(
        dir.join("group_vars/all/t.yml"),
        format!("# colons\nv: {value}\n\"w\" : 1\n"),
    )
    .expect("write");
    let started = std::time::Instant::now();
    let inventory = load(&dir.join("hosts.ini"));
    let took = started.elapsed();
    let n1 = host(&inventory, "n1");
    assert_eq!(n1.var("k15999"), Some(&serde_json::json!(15999)));
    assert_eq!(n1.origins["k15999"].line, None);
    assert_eq!(n1.var("v"), Some(&serde_json::json!(value)));
    assert_eq!(n1.origins["v"].line, Some(2));
    assert_eq!(n1.origins["w"].line, Some(3));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(took.as_secs() < 15, "took {took:?}");
}

/// A NUL or other control character in a YAML file, and a byte that is no UTF-8 in any
/// file, are refused at their line and column. Before, the first said 1:1 and a byte
/// offset ("at position 19"), the second only a byte index ("from index 14").
#[test]
fn control_characters_and_bytes_not_utf8_are_refused_at_their_line() {
    let dir = std::env::temp_dir().join(format!("dnsfix-inv-bytes-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("group_vars")).expect("mkdir");
    let refused = |name: &str, bytes: &[u8], inventory: &str| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).expect("write");
        let err = Inventory::load(&dir.join(inventory))
            .map(|_| ())
            .expect_err("refused");
        let shown = path.display().to_string();
        err.to_string()
            .strip_prefix(&shown)
            .unwrap_or_default()
            .to_owned()
    };
    std::fs::write(dir.join("hosts.ini"), "n1\n").expect("write");
    assert_eq!(
        refused(
            "group_vars/all.yml",
            b"a: 1\nb: 2\nc: 3\nd: x\0y\n",
            "hosts.ini"
        ),
        ":4:5: invalid YAML: control characters are not allowed"
    );
    std::fs::remove_file(dir.join("group_vars/all.yml")).expect("rm");
    assert_eq!(
        refused(
            "hosts.yml",
            "all:\n  hosts:\n    n1:\n      x: \"é\u{1}\"\n".as_bytes(),
            "hosts.yml"
        ),
        ":4:12: invalid YAML: control characters are not allowed"
    );
    assert_eq!(
        refused("bad.ini", b"[all]\nn1\nn2 a=\xff\n", "bad.ini"),
        ":3:6: not UTF-8 text: byte 0xff is no UTF-8 character here (is this the right file, saved as UTF-8?)"
    );
    std::fs::remove_dir_all(&dir).ok();
}
