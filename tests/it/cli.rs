//! The real binary, as a user runs it: help, local facts, bad input and exit codes.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::dnsfix::{Dnsfix, stderr};

fn dnsfix(args: &[&str]) -> Output {
    Dnsfix::new(args).output()
}

#[test]
fn help_lists_only_commands_that_work() {
    let out = dnsfix(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!("help", String::from_utf8_lossy(&out.stdout));
    let out = dnsfix(&["facts", "--help"]);
    insta::assert_snapshot!("facts_help", String::from_utf8_lossy(&out.stdout));
    // The inventory edits go to host_vars too (a node's own kube_resolv_conf).
    let out = dnsfix(&["apply", "--help"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("(Kubespray group_vars and host_vars)"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn local_facts_without_inventory() {
    let out = dnsfix(&["facts", "--format", "json", "--no-progress"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(doc["format_version"], 1);
    assert_eq!(doc["hosts"][0]["host"], "localhost");
    assert_eq!(doc["hosts"][0]["status"], "ok");
    assert!(doc["hosts"][0]["facts"]["files"]["/etc/resolv.conf"].is_object());
    // Progress goes to stderr, results to stdout.
    assert!(stderr(&out).contains("facts gathered from 1 of 1 host in "));
}

/// A --known-hosts path ssh would split on its space (also trusting ./dir/known_hosts)
/// is refused before any host is contacted, naming the flag.
#[test]
fn a_known_hosts_path_ssh_would_split_is_refused() {
    let dir = tempdir("known hosts");
    let path = dir.join("my known_hosts");
    std::fs::write(&path, "").expect("write");
    let out = dnsfix(&["facts", "--known-hosts", path.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--known-hosts ") && stderr(&out).contains("ssh would split"),
        "{}",
        stderr(&out)
    );
    // russh reads the file itself: the same path is fine there.
    let out = dnsfix(&[
        "facts",
        "--known-hosts",
        path.to_str().expect("utf-8"),
        "--ssh-backend",
        "russh",
        "--format",
        "json",
        "--no-progress",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn missing_inventory_is_bad_input_naming_the_file() {
    let out = dnsfix(&["facts", "-i", "/nonexistent/hosts.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("/nonexistent/hosts.yaml"),
        "{}",
        stderr(&out)
    );
    assert!(out.stdout.is_empty());
}

/// A newcomer's walk: with DNSFIX_INVENTORY=/x, "inventory /x does not exist" left them
/// looking for the -i they never gave.
#[test]
fn a_missing_inventory_from_dnsfix_inventory_names_the_variable() {
    let out = Dnsfix::new(["facts"])
        .env("DNSFIX_INVENTORY", "/nonexistent/hosts.yaml")
        .output();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(
            "inventory /nonexistent/hosts.yaml does not exist (DNSFIX_INVENTORY names it: "
        ),
        "{}",
        stderr(&out)
    );
}

/// `--known-hosts NEW --accept-new-host-keys` (a first run that is to record the keys): the
/// file must exist, and the message says how to make it.
#[test]
fn a_known_hosts_file_to_record_keys_in_must_exist_and_the_message_says_so() {
    let dir = tempdir("new known_hosts");
    let path = dir.join("known_hosts");
    let path = path.to_str().expect("utf-8");
    let out = dnsfix(&["facts", "--known-hosts", path, "--accept-new-host-keys"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "--known-hosts {path}: no such file (--accept-new-host-keys records new keys in it, but it must exist: create it empty first, `touch '{path}'`)"
        )),
        "{}",
        stderr(&out)
    );
    let out = dnsfix(&["facts", "--known-hosts", path]);
    assert!(
        stderr(&out).contains(&format!("--known-hosts {path}: no such file\n")),
        "{}",
        stderr(&out)
    );
}

#[test]
fn malformed_inventory_names_file_and_line() {
    let dir = tempdir("malformed");
    let path = dir.join("hosts.yaml");
    std::fs::write(
        &path,
        "all:\n  hosts:\n    node1:\n      ansible_host: [unclosed\n",
    )
    .expect("write");
    let out = dnsfix(&["facts", "-i", path.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains(&format!("{}:", path.display())), "{err}");
    assert!(
        err.lines()
            .next()
            .is_some_and(|l| l.starts_with("dnsfix: error:")),
        "{err}"
    );

    let ini = dir.join("hosts.ini");
    std::fs::write(
        &ini,
        "[kube_node]\nnode1 ansible_host=192.0.2.1\n[kube_node:bogus]\n",
    )
    .expect("write");
    let out = dnsfix(&["facts", "-i", ini.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!("{}:3", ini.display())),
        "{}",
        stderr(&out)
    );
}

/// An inventory without a host (an empty file, groups with no hosts) is bad input, not
/// a clean fleet: a CI job over a generated inventory that came out empty must not pass.
#[test]
fn an_inventory_without_hosts_is_refused() {
    let dir = tempdir("no-hosts");
    for (name, text) in [
        ("empty.yaml", ""),
        ("groups.yaml", "all:\n  children:\n    kube_node: {}\n"),
        ("empty.ini", "[kube_node]\n"),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write");
        for command in ["check", "plan"] {
            let out = dnsfix(&[command, "-i", path.to_str().expect("utf-8")]);
            assert_eq!(
                out.status.code(),
                Some(1),
                "{command} {name}: {}",
                stderr(&out)
            );
            assert!(
                stderr(&out).contains(&format!("{} defines no host", path.display())),
                "{command} {name}: {}",
                stderr(&out)
            );
        }
    }
}

#[test]
fn limit_that_matches_nothing_is_refused() {
    let out = dnsfix(&["facts", "--limit", "kube_node"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("dnsfix: error: --limit `kube_node` matches no host"),
        "{}",
        stderr(&out)
    );
    // A bad inventory still says so.
    let out = dnsfix(&["facts", "-i", "/nonexistent/hosts.yaml"]);
    assert!(
        stderr(&out).contains(
            "dnsfix: error: bad inventory: inventory /nonexistent/hosts.yaml does not exist"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn unreachable_host_exits_3_and_others_still_report() {
    // A local host and an SSH host on a loopback port nothing listens on.
    let dir = tempdir("unreachable");
    let path = dir.join("hosts.ini");
    let port = free_port();
    std::fs::write(
        &path,
        format!(
            "[kube_node]\nme ansible_connection=local\ngone ansible_host=127.0.0.1 ansible_port={port} ansible_user=root\n"
        ),
    )
    .expect("write");
    for (backend, out, doc) in facts_on_both_backends(&path) {
        assert_eq!(
            doc["hosts"][1]["error"]["kind"], "refused",
            "{backend}: {doc:#}"
        );
        // One word for the host on both streams: stderr as the report on stdout says it.
        assert!(
            stderr(&out).contains("gone: UNREACHABLE (refused): connection refused"),
            "{}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("facts gathered from 1 of 2 hosts in ")
                && stderr(&out).contains("; 1 unreachable\n"),
            "{}",
            stderr(&out)
        );
    }
}

/// A host whose ansible_host is a template dnsfix does not render fails with a message
/// naming host, variable and file:line (before, ssh was given the template's text); the
/// other hosts still report.
#[test]
fn a_templated_connection_variable_refuses_only_that_host() {
    let dir = tempdir("templated");
    let path = dir.join("hosts.ini");
    std::fs::write(
        &path,
        "[kube_node]\nme ansible_connection=local\nodd ansible_host=\"{{ hostvars['x'].ip }}\"\n",
    )
    .expect("write");
    for (backend, _, doc) in facts_on_both_backends(&path) {
        let message = doc["hosts"][1]["error"]["message"]
            .as_str()
            .unwrap_or_default();
        for want in ["odd", "`ansible_host`", "hosts.ini:3", "template"] {
            assert!(message.contains(want), "{backend}: {want} in {message}");
        }
    }
}

/// A plan made from one inventory applied with another (staging's plan, production's
/// inventory) warned that "the inventory changed since the plan was made", naming only the
/// plan's: the other file was not named, and nothing said the hosts are matched by name.
#[test]
fn applying_a_plan_with_another_inventory_names_both() {
    let dir = tempdir("other-inventory");
    let (made, other) = (dir.join("staging.ini"), dir.join("prod.ini"));
    std::fs::write(&made, "[kube_node]\nme ansible_connection=local\n").expect("write");
    std::fs::write(
        &other,
        "[kube_node]\nme ansible_connection=local\n[kube_node:vars]\ny=1\n",
    )
    .expect("write");
    let plan = dir.join("plan.json");
    let out = Dnsfix::new(["plan", "--no-progress", "-o"])
        .arg(&plan)
        .arg("-i")
        .arg(&made)
        .output();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let apply = |inventory: &Path| {
        Dnsfix::new(["apply", "--no-progress"])
            .arg(&plan)
            .arg("-i")
            .arg(inventory)
            .env("DNSFIX_STATE_DIR", dir.join("state"))
            .stdin(std::process::Stdio::null())
            .output()
    };
    let out = apply(&other);
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "warning: the plan was made from inventory {}; this run reads {}, whose contents \
             differ: the plan's hosts are matched by name",
            made.display(),
            other.display()
        )),
        "{err}"
    );
    // The same file spelled another way, from another working directory: no warning.
    let out = Dnsfix::new(["apply", "--no-progress"])
        .arg(&plan)
        .args(["-i", "./staging.ini"])
        .env("DNSFIX_STATE_DIR", dir.join("state"))
        .stdin(std::process::Stdio::null())
        .command()
        .current_dir(&dir)
        .output()
        .expect("dnsfix runs");
    assert!(!stderr(&out).contains("warning: the"), "{}", stderr(&out));
    // The same file, edited since: as before.
    std::fs::write(&made, "[kube_node]\nme ansible_connection=local\n\n").expect("write");
    let err = stderr(&apply(&made));
    assert!(
        err.contains(&format!(
            "warning: the inventory changed since the plan was made ({})",
            made.display()
        )),
        "{err}"
    );
}

/// `dnsfix facts --format json -i PATH` with each SSH backend, for an inventory whose
/// first host (local) reports and whose second fails: exit 3, with the output and its
/// JSON.
fn facts_on_both_backends(
    path: &std::path::Path,
) -> Vec<(&'static str, std::process::Output, serde_json::Value)> {
    ["openssh", "russh"]
        .into_iter()
        .map(|backend| {
            let out = dnsfix(&[
                "facts",
                "--no-progress",
                "--format",
                "json",
                "--ssh-backend",
                backend,
                "-i",
                path.to_str().expect("utf-8"),
            ]);
            assert_eq!(out.status.code(), Some(3), "{backend}: {}", stderr(&out));
            let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
            assert_eq!(doc["hosts"][0]["status"], "ok");
            (backend, out, doc)
        })
        .collect()
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

fn tempdir(name: &str) -> std::path::PathBuf {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tempdir");
    dir
}

#[test]
fn explain_lists_every_id_and_explains_one() {
    let out = dnsfix(&["explain"]);
    assert_eq!(out.status.code(), Some(0));
    let list = String::from_utf8_lossy(&out.stdout);
    for rule in dnsfix::diagnose::catalog::RULES {
        assert!(list.contains(rule.id), "{} missing from:\n{list}", rule.id);
    }
    let out = dnsfix(&["explain", "dns-kubelet-loopback"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for heading in [
        "WHAT YOU SEE",
        "WHY IT HAPPENS",
        "THE FIX",
        "WHAT MUST RESTART",
        "HOW TO VERIFY",
    ] {
        assert!(text.contains(heading), "{heading}:\n{text}");
    }
    assert!(text.contains("plugin/loop"), "{text}");
    let out = dnsfix(&["explain", "DNS-NO-SUCH-THING"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("DNS-NO-SUCH-THING"));
}

/// The formats each command prints, and the ones it does not: its `--help` lists only
/// the former (a newcomer read "junit (check only)" under `verify`, whose JUnit works, and
/// junit and markdown under facts, inventory, apply and rollback, which refused them), and
/// another is refused (exit 1) naming the ones there are.
const FORMATS: &[(&str, &[&str])] = &[
    ("facts", &["text", "json"]),
    ("check", &["text", "json", "junit"]),
    ("plan", &["text", "json", "markdown"]),
    ("apply", &["text", "json"]),
    ("rollback", &["text", "json"]),
    ("verify", &["text", "json", "junit"]),
    ("inventory", &["text", "json"]),
];

/// The values `dnsfix COMMAND --help` lists under `--format`.
fn listed_formats(command: &str) -> Vec<String> {
    let out = dnsfix(&[command, "--help"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    let block = help
        .split("\n      --format <FORMAT>\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{command} --help has no --format:\n{help}"));
    let block = block.split("\n\n  -").next().unwrap_or(block);
    match block.split_once("[possible values: ") {
        Some((_, rest)) => rest
            .split(']')
            .next()
            .unwrap_or("")
            .split(", ")
            .map(str::to_owned)
            .collect(),
        None => block
            .lines()
            .filter_map(|l| l.trim().strip_prefix("- "))
            .map(|v| v.split(':').next().unwrap_or(v).to_owned())
            .collect(),
    }
}

#[test]
fn each_command_lists_and_takes_only_its_own_formats() {
    for (command, formats) in FORMATS {
        assert_eq!(listed_formats(command), *formats, "{command} --help");
        for other in ["junit", "markdown"]
            .iter()
            .filter(|f| !formats.contains(f))
        {
            let out = dnsfix(&[command, "--format", other, "-i", "/nonexistent"]);
            assert_eq!(out.status.code(), Some(1), "{command} --format {other}");
            let err = stderr(&out);
            assert!(
                err.contains(&format!("invalid value '{other}' for '--format <FORMAT>'"))
                    && err.contains(&format!("[possible values: {}]", formats.join(", "))),
                "{command} --format {other}: {err}"
            );
        }
    }
}

/// `dnsfix inventory` reads files and contacts no host: it has no connection options.
#[test]
fn inventory_takes_no_connection_options() {
    let out = dnsfix(&["inventory", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--forks",
        "--kubeconfig",
        "--ssh-backend",
        "--known-hosts",
        "--user",
    ] {
        assert!(!help.contains(flag), "{flag}:\n{help}");
    }
    assert!(help.contains("-i, --inventory <FILE|DIR>"), "{help}");
    let out = dnsfix(&["inventory", "--forks", "3"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

#[test]
fn inventory_shows_groups_connections_and_where_each_variable_came_from() {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/inventory/kubespray-sample-head/inventory.ini");
    let sample = sample.to_str().expect("utf-8");
    let out = dnsfix(&["inventory", "-i", sample, "--limit", "node4"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "added as Kubespray does at run time (roles/dynamic_groups, which playbooks/boilerplate.yml runs first): k8s_cluster"
        ),
        "{text}"
    );
    assert!(text.contains("node4  ssh 95.54.0.15\n"), "{text}");
    assert!(
        text.contains("  groups: k8s_cluster*, kube_node\n"),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.starts_with("  dns_domain ")
            && l.contains(" cluster.local ")
            && l.ends_with("group_vars/k8s_cluster/k8s-cluster.yml:231 (from {{ cluster_name }})")),
        "{text}"
    );
    assert!(text.contains("not set: upstream_dns_servers"), "{text}");
    // The pod network DNS-FIREWALLD-PODS-UNTRUSTED judges zones against.
    assert!(
        text.lines().any(|l| l.starts_with("  kube_pods_subnet ")
            && l.contains(" 10.233.64.0/18 ")
            && l.ends_with("group_vars/k8s_cluster/k8s-cluster.yml:94")),
        "{text}"
    );

    let out = dnsfix(&["inventory", "-i", sample, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(doc["dynamic_groups"], serde_json::json!(["k8s_cluster"]));
    // Hosts come in Ansible's order: node4-6 (kube_node, under `all`) before the control
    // plane (under `etcd`).
    assert_eq!(doc["hosts"][0]["name"], "node4");
    let node1 = doc["hosts"]
        .as_array()
        .and_then(|h| h.iter().find(|h| h["name"] == "node1"))
        .expect("node1 listed");
    assert_eq!(node1["connection"]["address"], "95.54.0.12");
    let proxy = node1["vars"]
        .as_array()
        .and_then(|v| v.iter().find(|v| v["name"] == "kube_proxy_mode"))
        .expect("kube_proxy_mode listed");
    assert_eq!(proxy["value"], "ipvs");
    assert_eq!(proxy["origin"]["line"], 136);
    assert_eq!(proxy["origin"]["scope"]["kind"], "group_vars");
    assert_eq!(proxy["origin"]["scope"]["name"], "k8s_cluster");
}

/// `show` reads a plan offline: the local machine's plan renders as `plan` printed it, as
/// Markdown and as JSON; a file that is not a plan is exit 1 naming what is wrong.
#[test]
fn show_renders_a_saved_plan_and_names_what_is_wrong_with_a_bad_one() {
    let dir = tempdir("show");
    let saved = dir.join("plan.json");
    let saved_str = saved.to_str().expect("utf-8");
    let planned = dnsfix(&["plan", "--no-progress", "--color", "never", "-o", saved_str]);
    assert!(
        planned.status.code().is_some_and(|c| c == 0 || c == 2),
        "{}",
        stderr(&planned)
    );
    let shown = dnsfix(&["show", saved_str, "--color", "never"]);
    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
    assert_eq!(shown.stdout, planned.stdout);
    assert!(stderr(&shown).contains("sha256 "), "{}", stderr(&shown));
    let md = dnsfix(&["show", saved_str, "--format", "markdown"]);
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.starts_with("# dnsfix plan\n"), "{md}");
    let json = dnsfix(&[
        "show",
        saved_str,
        "--format",
        "json",
        "--limit",
        "localhost",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    assert_eq!(doc["hosts"][0]["host"], "localhost");
    let none = dnsfix(&["show", saved_str, "--limit", "nosuchhost"]);
    assert_eq!(none.status.code(), Some(1));
    // The plan's hosts, not an inventory: no "bad inventory" (a newcomer's walk).
    assert!(
        stderr(&none)
            .contains("dnsfix: error: --limit `nosuchhost` matches no host or group in the plan"),
        "{}",
        stderr(&none)
    );

    let good = std::fs::read_to_string(&saved).expect("read");
    let without_hosts = {
        let mut v: serde_json::Value = serde_json::from_str(&good).expect("json");
        v.as_object_mut().expect("object").remove("hosts");
        v.to_string()
    };
    for (text, says) in [
        ("{ not json".to_owned(), "not a saved plan"),
        ("{\"kind\": \"other\"}".to_owned(), "dnsfix plan -o FILE"),
        (
            good.replace("\"format_version\": 1", "\"format_version\": 9"),
            "made by a newer dnsfix",
        ),
        (without_hosts, "missing field `hosts`"),
    ] {
        let bad = dir.join("bad.json");
        std::fs::write(&bad, &text).expect("write");
        let out = dnsfix(&["show", bad.to_str().expect("utf-8")]);
        assert_eq!(out.status.code(), Some(1), "{says}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(says) && stderr(&out).contains("bad.json"),
            "{says}: {}",
            stderr(&out)
        );
    }
    assert_eq!(
        dnsfix(&["show", "/nonexistent/plan.json"]).status.code(),
        Some(1)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The commands `dnsfix --help` lists, clap's own `help` aside.
fn listed_commands() -> Vec<String> {
    let out = dnsfix(&["--help"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// What bash offers after `dnsfix WORDS…`, with the completion script sourced.
fn bash_completes(script: &Path, words: &[&str]) -> Vec<String> {
    let line = format!("dnsfix {}", words.join(" "));
    let program = format!(
        "source {script}\nCOMP_WORDS=(dnsfix {words})\nCOMP_CWORD={cword}\n\
         COMP_LINE='{line}'\nCOMP_POINT={point}\n_dnsfix dnsfix '{current}' '{previous}'\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script = script.display(),
        words = words
            .iter()
            .map(|w| format!("'{w}'"))
            .collect::<Vec<_>>()
            .join(" "),
        cword = words.len(),
        point = line.len(),
        current = words.last().copied().unwrap_or(""),
        previous = if words.len() >= 2 {
            words[words.len() - 2]
        } else {
            "dnsfix"
        },
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .expect("bash runs");
    assert!(out.status.success(), "{}", stderr(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn completions_offer_every_command_in_each_shell() {
    let commands = listed_commands();
    assert!(
        commands.iter().any(|c| c == "completions") && commands.len() >= 9,
        "{commands:?}"
    );
    let dir = tempdir("completions");

    let out = dnsfix(&["completions", "bash"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let script = dir.join("dnsfix.bash");
    std::fs::write(&script, &out.stdout).expect("write");
    let syntax = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .expect("bash runs");
    assert!(syntax.status.success(), "bash -n: {}", stderr(&syntax));
    // Sourced into bash, the script completes as a user would see it.
    let offered = bash_completes(&script, &[""]);
    for command in &commands {
        assert!(
            offered.contains(command),
            "{command} not offered: {offered:?}"
        );
    }
    let mut shells = bash_completes(&script, &["completions", ""]);
    shells.retain(|s| !s.starts_with('-'));
    assert_eq!(shells, ["bash", "zsh", "fish", "elvish", "powershell"]);
    let flags = bash_completes(&script, &["plan", "--for"]);
    assert!(
        flags.iter().any(|f| f == "--format") && flags.iter().any(|f| f == "--forks"),
        "{flags:?}"
    );
    // Each command completes the formats it takes, and inventory no connection option.
    for (command, formats) in FORMATS {
        assert_eq!(
            bash_completes(&script, &[command, "--format", ""]),
            *formats,
            "{command}"
        );
    }
    assert_eq!(
        bash_completes(&script, &["inventory", "--fo"]),
        ["--format"]
    );

    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = dnsfix(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(script.contains("dnsfix"), "{shell}:\n{script}");
        for command in &commands {
            assert!(script.contains(command.as_str()), "{shell}: {command}");
        }
    }

    let out = dnsfix(&["completions", "tcsh"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("bash"), "{}", stderr(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn man_pages_cover_every_command_and_render() {
    let commands = listed_commands();
    let out = dnsfix(&["man"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = String::from_utf8(out.stdout).expect("utf-8");
    assert!(page.contains("\n.TH DNSFIX 1 "), "{page}");
    for command in &commands {
        assert!(
            page.contains(&format!("dnsfix\\-{command}(1)")),
            "{command}:\n{page}"
        );
    }
    assert!(
        !page.contains("dnsfix\\-help(1)"),
        "clap's `help` is no command"
    );

    // --dir: the page printed above, and one per command it refers to.
    let dir = tempdir("man");
    let out = dnsfix(&["man", "--dir", dir.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut written: Vec<String> = std::fs::read_dir(&dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    let mut expected: Vec<String> = commands.iter().map(|c| format!("dnsfix-{c}.1")).collect();
    expected.push("dnsfix.1".into());
    expected.sort();
    assert_eq!(written, expected);
    assert_eq!(
        std::fs::read_to_string(dir.join("dnsfix.1")).expect("read"),
        page
    );
    let plan = std::fs::read_to_string(dir.join("dnsfix-plan.1")).expect("read");
    assert!(plan.contains("\n.TH DNSFIX-PLAN 1 "), "{plan}");
    assert!(plan.contains("DNSFIX_INVENTORY"), "{plan}");
    // The pages list each command's own formats, as its --help does.
    for (command, formats) in FORMATS {
        let page = std::fs::read_to_string(dir.join(format!("dnsfix-{command}.1"))).expect("read");
        for format in ["junit", "markdown"] {
            assert_eq!(
                page.contains(format),
                formats.contains(&format),
                "{command} {format}:\n{page}"
            );
        }
    }
    let inventory = std::fs::read_to_string(dir.join("dnsfix-inventory.1")).expect("read");
    assert!(!inventory.contains("forks"), "{inventory}");

    // groff (installed by .ci/run) typesets every page without a warning.
    for name in &expected {
        let out = Command::new("groff")
            .args(["-man", "-Tutf8", "-P-cbou", "-ww", "-rLL=100n"])
            .arg(dir.join(name))
            .output()
            .expect("groff runs (Debian: apt-get install groff-base)");
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "{name}: {}",
            stderr(&out)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS"] {
            assert!(text.contains(section), "{name} has no {section}:\n{text}");
        }
    }

    let out = dnsfix(&["man", "--dir", "/nonexistent/man1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("/nonexistent/man1"),
        "{}",
        stderr(&out)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A bad flag or a missing argument is bad input (exit 1, DESIGN.md), never 2, which means
/// findings; help and version are 0.
#[test]
fn bad_arguments_are_exit_1_and_help_is_0() {
    for args in [
        &["plan", "--no-such-flag"][..],
        &["show"][..],
        &["verify", "--dns-timeout", "soon"][..],
        &["nosuchcommand"][..],
        &[][..],
    ] {
        let out = dnsfix(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).is_empty(), "{args:?}");
    }
    for args in [&["--help"][..], &["--version"][..], &["plan", "--help"][..]] {
        let out = dnsfix(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(!out.stdout.is_empty(), "{args:?}");
    }
}

/// `inventory` says which become method dnsfix uses where the inventory asks for another.
#[test]
fn inventory_names_a_become_method_dnsfix_does_not_use() {
    let dir = tempdir("become-method");
    let path = dir.join("hosts.ini");
    std::fs::write(
        &path,
        "[kube_node]\nn1 ansible_host=10.0.0.1 ansible_become=true ansible_become_method=su\nn2 ansible_host=10.0.0.2 ansible_become=true\n",
    )
    .expect("write inventory");
    let out = dnsfix(&["inventory", "-i", path.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().any(|l| l.starts_with("n1  ssh 10.0.0.1  become (sudo -n, not the inventory's method: `ansible_become_method` (")
            && l.ends_with(") is \"su\")")),
        "{text}"
    );
    assert!(
        text.contains("n2  ssh 10.0.0.2  become (sudo -n)\n"),
        "{text}"
    );
}

/// A timeout of 0 was refused as "timeouts must be at least 1 second", naming no flag; one
/// too large for a Duration panicked. Each is refused naming the flag and the range.
#[test]
fn a_timeout_out_of_range_is_refused_naming_the_flag_and_the_range() {
    for (args, flag, value) in [
        (
            &["check", "--connect-timeout", "0"][..],
            "--connect-timeout",
            "0",
        ),
        (
            &["facts", "--command-timeout", "18446744073709551615"][..],
            "--command-timeout",
            "18446744073709551615",
        ),
        (&["verify", "--dns-timeout", "0"][..], "--dns-timeout", "0"),
        (
            &["apply", "--yes", "--health-timeout", "86401"][..],
            "--health-timeout",
            "86401",
        ),
        (
            &["rollback", "--yes", "--health-timeout", "0", "NOPE"][..],
            "--health-timeout",
            "0",
        ),
    ] {
        let out = dnsfix(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!("dnsfix: error: {flag} {value}: expected 1 to 86400 seconds\n"),
            "{args:?}"
        );
    }
}

/// `dnsfix explain` with a mistyped id names the nearest ids.
#[test]
fn explain_suggests_the_nearest_ids() {
    for (typed, says) in [
        ("DNS-KUBELET-LOOPBAK", "did you mean DNS-KUBELET-LOOPBACK?"),
        ("KUBELET-LOOPBACK", "did you mean DNS-KUBELET-LOOPBACK?"),
        (
            "dns-bridge",
            "did you mean DNS-BRIDGE-NF-OFF or DNS-BRIDGE-NF-NOT-PERSISTENT?",
        ),
        ("DNS-TYPO", "none is close; the nearest: DNS-POD-LOOP"),
    ] {
        let out = dnsfix(&["explain", typed]);
        assert_eq!(out.status.code(), Some(1), "{typed}");
        assert!(
            stderr(&out).starts_with(&format!("dnsfix: error: unknown finding id `{typed}`: ")),
            "{typed}: {}",
            stderr(&out)
        );
        assert!(stderr(&out).contains(says), "{typed}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("`dnsfix explain` lists them all"),
            "{}",
            stderr(&out)
        );
    }
}

/// A run id with no record said "…/runs/NOPE.json: No such file or directory (os error 2)":
/// now what was looked for, where, and what to give instead.
#[test]
fn a_missing_run_names_the_run_and_where_runs_are_kept() {
    let dir = tempdir("missing-run");
    let state = dir.join("state");
    let rollback = || {
        Dnsfix::new(["rollback", "--yes", "NOPE"])
            .env("DNSFIX_STATE_DIR", &state)
            .stdin(std::process::Stdio::null())
            .output()
    };
    let out = rollback();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let runs = state.join("runs");
    assert_eq!(
        stderr(&out),
        format!(
            "dnsfix: error: no run NOPE is recorded in {} (no NOPE.json there, and no run at \
             all): give the run id `dnsfix apply` printed; a run made with another \
             DNSFIX_STATE_DIR, XDG_STATE_HOME or HOME (`sudo` gives root's) is recorded in that \
             one's runs/\n",
            runs.display()
        )
    );
    std::fs::create_dir_all(&runs).expect("runs");
    for id in ["20261130T100000Z-deadbeef", "20261201T100000Z-0badcafe"] {
        std::fs::write(runs.join(format!("{id}.json")), "{}").expect("record");
    }
    let err = stderr(&rollback());
    assert!(
        err.contains(&format!(
            "no run NOPE is recorded in {} (no NOPE.json there; 2 runs are, the latest \
             20261201T100000Z-0badcafe)",
            runs.display()
        )),
        "{err}"
    );
    assert!(!err.contains("os error"), "{err}");
}

/// A run id names a file in the runs directory: one that could name a path elsewhere is
/// refused before any file is read. Before, `rollback ../x` read `STATE/x.json` and
/// `rollback /tmp/y` read `/tmp/y.json`.
#[test]
fn a_run_id_that_is_a_path_is_refused() {
    let dir = tempdir("run-id-path");
    let state = dir.join("state");
    std::fs::create_dir_all(state.join("runs")).expect("runs");
    std::fs::write(state.join("x.json"), "{}").expect("record outside runs/");
    for id in ["../x", "/tmp/x", ""] {
        let out = Dnsfix::new(["rollback", "--yes", id])
            .env("DNSFIX_STATE_DIR", &state)
            .stdin(std::process::Stdio::null())
            .output();
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("expected letters, digits and '-' only"),
            "{id}: {}",
            stderr(&out)
        );
    }
}

/// A plan file that is not there, or not readable: its path, what it should be, and no raw
/// OS error, for `apply` and `show` alike.
#[test]
fn a_missing_plan_file_names_it_and_what_to_give() {
    let dir = tempdir("missing-plan");
    let missing = dir.join("nope.json");
    for command in ["apply", "show"] {
        let out = Dnsfix::new([command])
            .arg(&missing)
            .env("DNSFIX_STATE_DIR", dir.join("state"))
            .stdin(std::process::Stdio::null())
            .output();
        assert_eq!(out.status.code(), Some(1), "{command}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!(
                "dnsfix: error: {}: no such file: give a plan saved with `dnsfix plan -o FILE`\n",
                missing.display()
            ),
            "{command}"
        );
    }
    let out = Dnsfix::new(["show"]).arg(&dir).output();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "dnsfix: error: {}: a directory, not a plan file: give a plan saved with `dnsfix plan -o FILE`\n",
            dir.display()
        )
    );
}

/// `apply PLAN --limit HOST` without `-i`: the pattern was matched against this machine's
/// implicit inventory and refused with no word of the plan's own inventory (an SRE reading
/// "--limit selects the plan's hosts" took it for a filter over the plan). It now says that
/// `--limit` selects from the inventory given with `-i`, and names the one to give.
#[test]
fn a_saved_plans_limit_without_an_inventory_names_the_plans_inventory() {
    let dir = tempdir("apply-limit");
    let inventory = dir.join("two.ini");
    std::fs::write(
        &inventory,
        "[kube_node]\nme ansible_connection=local\nyou ansible_connection=local\n",
    )
    .expect("write");
    let plan = dir.join("plan.json");
    let out = Dnsfix::new(["plan", "--no-progress", "-o"])
        .arg(&plan)
        .arg("-i")
        .arg(&inventory)
        .output();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let apply = |args: &[&str]| {
        Dnsfix::new(["apply", "--no-progress"])
            .arg(&plan)
            .args(args)
            .env("DNSFIX_STATE_DIR", dir.join("state"))
            .stdin(std::process::Stdio::null())
            .output()
    };
    // A name of the plan, and one of this machine's implicit inventory: both refused, the
    // latter rather than "nothing to do on 0 hosts".
    for limit in ["me", "localhost"] {
        let out = apply(&["--limit", limit]);
        assert_eq!(out.status.code(), Some(1), "{limit}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!(
                "dnsfix: error: --limit selects the plan's hosts from the inventory given with \
                 -i, and none was given: the plan was made from inventory {0}: dnsfix apply -i \
                 '{0}' '{1}' --limit '{limit}'",
                inventory.display(),
                plan.display()
            )),
            "{limit}: {}",
            stderr(&out)
        );
    }
    // With the inventory, the part of the plan for the hosts it selects.
    let out = apply(&["--limit", "me", "-i", inventory.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("nothing planned: me\n") && !text.contains("you"),
        "{text}"
    );
}

/// Ctrl-C while `check` waits on a node that never answers: dnsfix exits 130 as before, and
/// now says what it stopped, naming the hosts still pending (one at a time, `--forks 1`:
/// one in progress, one not started). The node is a listener that takes the connection
/// and never sends the SSH banner.
#[test]
fn ctrl_c_during_check_names_the_hosts_still_pending() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let dir = tempdir("interrupt-check");
    let inventory = dir.join("hosts.ini");
    std::fs::write(
        &inventory,
        format!(
            "[kube_node]\nhang1 ansible_host=127.0.0.1 ansible_port={port}\n\
             hang2 ansible_host=127.0.0.1 ansible_port={port}\n"
        ),
    )
    .expect("write");
    let runtime = dir.join("xdg");
    std::fs::create_dir_all(&runtime).expect("xdg");
    let child = Dnsfix::new([
        "check",
        "--no-progress",
        "--forks",
        "1",
        "--connect-timeout",
        "60",
        "--ssh-persist",
        "0",
        "-i",
    ])
    .arg(&inventory)
    .env("XDG_RUNTIME_DIR", &runtime)
    .stdin(std::process::Stdio::null())
    .command()
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .expect("dnsfix runs");
    // hang1's ssh is connected and waits for the banner.
    let (_held, _) = listener.accept().expect("accept");
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "dnsfix: interrupted: check stopped with 2 of 2 hosts pending (in progress: hang1; \
         not started: hang2); no report was printed\n"
    );
    assert!(out.stdout.is_empty());
}

/// An inventory of one host, `gone`, on a loopback port nothing listens on.
fn unreachable_inventory(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("hosts.ini");
    std::fs::write(
        &path,
        format!(
            "[kube_node]\ngone ansible_host=127.0.0.1 ansible_port={} ansible_user=root\n",
            free_port()
        ),
    )
    .expect("write");
    path
}

/// The JSON of `dnsfix ARGS`, which must exit 3 (a host unreachable).
fn json_exit_3(dir: &Path, args: &[&str]) -> serde_json::Value {
    let out = Dnsfix::new(args)
        .args(["--no-progress", "--format", "json", "--ssh-persist", "0"])
        .env("DNSFIX_STATE_DIR", dir.join("state"))
        .env("XDG_RUNTIME_DIR", dir)
        .stdin(std::process::Stdio::null())
        .output();
    assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// Every command's JSON for a host that could not be reached, as README's table says it
/// (each document keeps the word it has had from format_version 1): `failed` (facts,
/// check), `unreachable` (verify), `error` of kind `unreachable` (plan), and in apply's and
/// rollback's run record `not_planned`/`failed` with the error in the plan's words,
/// `unreachable: refused: ...`. Apply's `not_planned` host had no error at all, so the
/// record did not say why; a rollback's said `refused: ...`.
#[test]
fn every_json_document_names_an_unreachable_host_as_documented() {
    let dir = tempdir("json-unreachable");
    let inventory = unreachable_inventory(&dir);
    let inv = inventory.to_str().expect("utf-8");
    for command in ["facts", "check"] {
        let doc = json_exit_3(&dir, &[command, "-i", inv]);
        let host = &doc["hosts"][0];
        assert_eq!(host["host"], "gone", "{command}: {doc:#}");
        assert_eq!(host["status"], "failed", "{command}: {doc:#}");
        assert_eq!(host["error"]["kind"], "refused", "{command}: {doc:#}");
    }
    let doc = json_exit_3(&dir, &["verify", "-i", inv]);
    assert_eq!(doc["hosts"][0]["status"], "unreachable", "{doc:#}");
    assert_eq!(doc["hosts"][0]["error"]["kind"], "refused", "{doc:#}");
    let plan = dir.join("plan.json");
    let doc = json_exit_3(
        &dir,
        &["plan", "-i", inv, "-o", plan.to_str().expect("utf-8")],
    );
    let host = &doc["hosts"][0];
    assert_eq!(host["status"], "error", "{doc:#}");
    assert_eq!(host["error"]["kind"], "unreachable", "{doc:#}");
    let message = host["error"]["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("refused: "), "{doc:#}");

    // The saved plan applied: nothing to do anywhere, the host not planned, and why.
    let doc = json_exit_3(&dir, &["apply", "-i", inv, plan.to_str().expect("utf-8")]);
    assert_eq!(doc["kind"], "dnsfix-run", "{doc:#}");
    let host = &doc["hosts"][0];
    assert_eq!(host["outcome"], "not_planned", "{doc:#}");
    assert_eq!(
        host["error"].as_str().unwrap_or_default(),
        format!("unreachable: {message}"),
        "{doc:#}"
    );

    // A run that changed a sysctl there, rolled back: the run cannot reach it.
    let run = "20261130T100000Z-0badf00d";
    let runs = dir.join("state/runs");
    std::fs::create_dir_all(&runs).expect("state dir");
    let record = serde_json::json!({
        "kind": "dnsfix-run", "format_version": 1, "dnsfix_version": "0.1.0",
        "run_id": run, "command": "apply", "started": "2026-11-30T10:00:00Z",
        "finished": "2026-11-30T10:01:00Z", "inventory": inv, "plan_file": null,
        "plan_created": "2026-11-30T09:59:00Z",
        "hosts": [{"host": "gone", "outcome": "pending", "planned": [{
            "type": "sysctl", "name": "net.ipv4.ip_forward", "before": "0", "after": "1",
            "reasons": [{"playbook": "bridge-netfilter", "task": "t", "fixes": ["DNS-IP-FORWARD"]}]
        }]}]
    });
    std::fs::write(runs.join(format!("{run}.json")), record.to_string()).expect("record");
    let doc = json_exit_3(&dir, &["rollback", "--yes", "-i", inv, run]);
    let host = &doc["hosts"][0];
    assert_eq!(host["outcome"], "failed", "{doc:#}");
    let error = host["error"].as_str().unwrap_or_default();
    assert!(error.starts_with("unreachable: refused: "), "{doc:#}");
}

/// `apply PLAN` whose selection takes none of the plan's hosts (`--limit` names a host of
/// the inventory the plan has not): the report said "nothing to do on 0 hosts". It now
/// says no host of the plan was selected, and stderr says which pattern chose none of
/// which hosts.
#[test]
fn a_saved_plan_none_of_whose_hosts_is_selected_says_so() {
    let dir = tempdir("apply-none-selected");
    let two = dir.join("two.ini");
    std::fs::write(&two, "[kube_node]\nme ansible_connection=local\n").expect("write");
    let plan = dir.join("plan.json");
    let out = Dnsfix::new(["plan", "--no-progress", "-o"])
        .arg(&plan)
        .arg("-i")
        .arg(&two)
        .output();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let three = dir.join("three.ini");
    std::fs::write(
        &three,
        "[kube_node]\nme ansible_connection=local\nthem ansible_connection=local\n",
    )
    .expect("write");
    let out = Dnsfix::new(["apply", "--no-progress"])
        .arg(&plan)
        .arg("-i")
        .arg(&three)
        .args(["--limit", "them"])
        .env("DNSFIX_STATE_DIR", dir.join("state"))
        .stdin(std::process::Stdio::null())
        .output();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(": no host of the plan was selected, nothing done\n")
            && !text.contains("0 hosts"),
        "{text}"
    );
    assert!(
        stderr(&out).contains(&format!(
            "warning: --limit `them` selects none of the plan's hosts (me) in the inventory {}: \
             nothing is applied\n",
            three.display()
        )),
        "{}",
        stderr(&out)
    );
}

/// A refusal is the first thing `apply PLAN` and `rollback` print: `apply PLAN --limit`
/// without `-i` printed the plan's sha256 line first, and a refused plan (made with a
/// playbook that differs now) and a refused rollback (a run it has no record of) came after
/// the inventory's warnings. Each now prints its refusal alone.
#[test]
fn apply_and_rollback_refuse_before_printing_anything_else() {
    let dir = tempdir("refuse-first");
    // An inventory with a warning of its own (a port that is no port).
    let inventory = dir.join("hosts.ini");
    std::fs::write(
        &inventory,
        "[kube_node]\nme ansible_connection=local ansible_port=none\n",
    )
    .expect("write");
    let plan = dir.join("plan.json");
    let out = Dnsfix::new(["plan", "--no-progress", "-o"])
        .arg(&plan)
        .arg("-i")
        .arg(&inventory)
        .output();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("not a TCP port"), "{}", stderr(&out));
    let refused = |args: &[&str], refusal: &str| {
        let out = Dnsfix::new(args)
            .arg("--no-progress")
            .env("DNSFIX_STATE_DIR", dir.join("state"))
            .stdin(std::process::Stdio::null())
            .output();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        let first = stderr(&out).lines().next().unwrap_or_default().to_owned();
        assert!(
            first.starts_with(&format!("dnsfix: error: {refusal}")),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(
            !stderr(&out).contains("applying ") && !stderr(&out).contains("warning:"),
            "{args:?}: {}",
            stderr(&out)
        );
    };
    let plan_arg = plan.to_str().expect("utf-8");
    let inv = inventory.to_str().expect("utf-8");
    refused(
        &["apply", plan_arg, "--limit", "me"],
        "--limit selects the plan's hosts from the inventory given with -i",
    );
    // The plan's playbook kubelet-resolvconf, differing now (--playbooks takes it over).
    let site = dir.join("playbooks");
    std::fs::create_dir_all(&site).expect("playbooks");
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("playbooks");
    let file = std::fs::read_dir(&shipped)
        .expect("playbooks")
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            std::fs::read_to_string(p).is_ok_and(|t| t.contains("name: kubelet-resolvconf\n"))
        })
        .expect("the shipped kubelet-resolvconf playbook");
    let text = std::fs::read_to_string(&file).expect("read");
    std::fs::write(
        site.join(file.file_name().expect("a name")),
        format!("# edited since the plan\n{text}"),
    )
    .expect("write");
    let site_arg = site.to_str().expect("utf-8");
    refused(
        &["apply", "-i", inv, plan_arg, "--playbooks", site_arg],
        "the plan was made with playbook kubelet-resolvconf",
    );
    refused(
        &["rollback", "-i", inv, "--yes", "20261130T100000Z-0badf00d"],
        "",
    );
}
