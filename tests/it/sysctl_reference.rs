//! The order the boot applies sysctl files in, compared with systemd's own reading of the
//! same tree: `systemd-analyze cat-config sysctl.d --root=TREE` lists the files
//! systemd-sysctl applies, in its order, with the content it reads. dnsfix's order
//! (`facts::sysctl::applied_files`, what every persisted value comes from) must be that
//! list; on a node systemd does not boot (no /run/systemd/system), plus `/etc/sysctl.conf`
//! last where no applied file is a link to it (procps `sysctl --system` applies it then).
//!
//! The trees: every fixture and lab scenario that has sysctl files, and cases built here
//! for the rules sysctl.d(5) states: same names across the directories, a mask, hidden and
//! non-`.conf` files, byte order of names, links to /etc/sysctl.conf and into /usr/lib.
//! (Absolute links other than to /dev/null are left out: systemd-analyze 252 follows them
//! on the host, not in the tree.)
//!
//! Then what the boot leaves of forwarding, compared with systemd-sysctl itself applying
//! the files systemd-analyze lists, in that order, in a network namespace of its own
//! (`unshare --net`: the net.* settings it writes are that namespace's, the host's stay as
//! they are; `--prefix` keeps it to forwarding): `net.ipv4.ip_forward`, the kernel's
//! `net.ipv4.conf.default.forwarding` after those writes, and what an interface made after
//! the boot has once systemd's udev rule has run `systemd-sysctl --prefix=/net/ipv4/conf/IF`
//! for it (99-systemd.rules).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use dnsfix::facts::raw::from_tree;
use dnsfix::facts::sysctl::{
    DEFAULT_FORWARDING, SYSCTL_CONF, SYSCTL_DIRS, SysctlFile, applied_files, on_new_interface,
    persisted_files,
};

use crate::common::reference;

fn systemd_analyze() -> PathBuf {
    reference::find(
        "systemd-analyze",
        "DNSFIX_SYSTEMD_ANALYZE_DIR",
        "no-venv",
        "apt-get install systemd",
        |_| true,
    )
}

/// `(node path, content)` of each file systemd applies for the tree at `root`, in order.
fn systemd_order(analyze: &Path, root: &Path) -> Vec<(String, String)> {
    let out = Command::new(analyze)
        .args(["cat-config", "sysctl.d", "--no-pager"])
        .arg(format!("--root={}", root.display()))
        .output()
        .expect("systemd-analyze runs");
    assert!(
        out.status.success(),
        "systemd-analyze cat-config on {}: {}",
        root.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let header = format!("# {}/", root.display());
    let mut files: Vec<(String, String)> = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).split_inclusive('\n') {
        if let Some(path) = line.strip_prefix(&header) {
            files.push((format!("/{}", path.trim_end_matches('\n')), String::new()));
        } else if let Some((_, content)) = files.last_mut() {
            content.push_str(line);
        }
    }
    files
}

/// The assignments of a file as `(key, value)`, in order.
fn assignments(content: &str) -> Vec<(String, String)> {
    SysctlFile::parse(content)
        .entries
        .into_iter()
        .map(|e| (e.key, e.value))
        .collect()
}

fn compare(analyze: &Path, root: &Path) -> Result<(), String> {
    let systemd = systemd_order(analyze, root);
    // Headers that stopped matching would leave systemd's list empty: a tree with a
    // drop-in always has one.
    let any_drop_in = ["etc", "run", "usr/local/lib", "usr/lib", "lib"]
        .iter()
        .any(|dir| {
            std::fs::read_dir(root.join(dir).join("sysctl.d"))
                .into_iter()
                .flatten()
                .flatten()
                .any(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.ends_with(".conf") && !name.starts_with('.')
                })
        });
    if any_drop_in && systemd.is_empty() {
        return Err(format!(
            "{}: systemd-analyze listed no file",
            root.display()
        ));
    }
    let raw = from_tree(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let ours = applied_files(&raw);
    // procps's last step: /etc/sysctl.conf, where no applied file is a link to it.
    let conf = root.join("etc/sysctl.conf");
    let linked = systemd.iter().any(|(path, _)| {
        let on_disk = root.join(path.trim_start_matches('/'));
        conf.is_file() && on_disk.canonicalize().ok() == conf.canonicalize().ok()
    });
    // systemd lists a file masked by a link to /dev/null, with nothing in it; dnsfix
    // leaves it out. Both apply nothing for it.
    let masked = |path: &str| {
        std::fs::read_link(root.join(path.trim_start_matches('/')))
            .is_ok_and(|target| target == Path::new("/dev/null"))
    };
    let mut expected: Vec<(String, Vec<(String, String)>)> = systemd
        .iter()
        .filter(|(path, _)| !masked(path))
        .map(|(path, content)| (path.clone(), assignments(content)))
        .collect();
    // A node systemd boots (/run/systemd/system) has no procps step: systemd's list is all.
    let systemd_boot = root.join("run/systemd/system").is_dir();
    if conf.is_file() && !linked && !systemd_boot {
        let text = std::fs::read_to_string(&conf).unwrap_or_default();
        expected.push(("/etc/sysctl.conf".to_owned(), assignments(&text)));
    }
    let got: Vec<(String, Vec<(String, String)>)> = ours
        .iter()
        .map(|(path, content)| (path.clone(), assignments(content)))
        .collect();
    if got == expected {
        Ok(())
    } else {
        Err(format!(
            "{}:\n  systemd (+ procps's /etc/sysctl.conf): {expected:?}\n  dnsfix: {got:?}",
            root.display()
        ))
    }
}

/// Every fixture and lab scenario tree with a sysctl file.
fn fixture_trees() -> Vec<PathBuf> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut roots = Vec::new();
    let mut stack = vec![base.join("fixtures"), base.join("lab/scenarios")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            if entry.file_name() == "root" {
                let has = [
                    "etc/sysctl.d",
                    "usr/lib/sysctl.d",
                    "run/sysctl.d",
                    "etc/sysctl.conf",
                ]
                .iter()
                .any(|p| path.join(p).exists());
                if has {
                    roots.push(path);
                }
            } else {
                stack.push(path);
            }
        }
    }
    roots.sort();
    roots
}

/// A tree from `(node path, content)` files and `(node path, link target)` links.
fn tree(dir: &Path, files: &[(&str, &str)], links: &[(&str, &str)]) -> PathBuf {
    for (path, content) in files {
        let at = dir.join(path.trim_start_matches('/'));
        std::fs::create_dir_all(at.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&at, content).expect("write");
    }
    for (path, target) in links {
        let at = dir.join(path.trim_start_matches('/'));
        std::fs::create_dir_all(at.parent().expect("a parent")).expect("mkdir");
        std::os::unix::fs::symlink(target, &at).expect("symlink");
    }
    dir.to_path_buf()
}

/// The built cases, under `scratch`: same names, masks and ignored files, byte order,
/// Debian's link, no link (on a node systemd does not boot, and on one it does).
fn built_cases(scratch: &Path) -> [PathBuf; 6] {
    let fwd = "net.ipv4.ip_forward";
    let case = |name: &str, files: &[(&str, &str)], links: &[(&str, &str)]| {
        tree(&scratch.join(name), files, links)
    };
    [
        // The same name in each directory: /etc, then /run, then /usr/local/lib, then
        // /usr/lib, then /lib wins, whatever the content.
        case(
            "same-names",
            &[
                ("/etc/sysctl.d/50-a.conf", &format!("{fwd} = 1\n")),
                ("/run/sysctl.d/50-a.conf", &format!("{fwd} = 0\n")),
                (
                    "/run/sysctl.d/60-b.conf",
                    "net.bridge.bridge-nf-call-iptables = 0\n",
                ),
                (
                    "/usr/lib/sysctl.d/60-b.conf",
                    "net.bridge.bridge-nf-call-iptables = 1\n",
                ),
                (
                    "/usr/local/lib/sysctl.d/70-c.conf",
                    "net.ipv6.conf.all.forwarding = 1\n",
                ),
                (
                    "/usr/lib/sysctl.d/70-c.conf",
                    "net.ipv6.conf.all.forwarding = 0\n",
                ),
                (
                    "/lib/sysctl.d/80-d.conf",
                    "net.bridge.bridge-nf-call-ip6tables = 0\n",
                ),
                (
                    "/usr/lib/sysctl.d/80-d.conf",
                    "net.bridge.bridge-nf-call-ip6tables = 1\n",
                ),
                ("/lib/sysctl.d/90-only-lib.conf", &format!("{fwd} = 0\n")),
            ],
            &[],
        ),
        // Masked by a link to /dev/null; hidden and non-.conf files are not read.
        case(
            "masks-and-ignored",
            &[
                (
                    "/usr/lib/sysctl.d/99-router-off.conf",
                    &format!("{fwd} = 0\n"),
                ),
                ("/etc/sysctl.d/k8s.conf", &format!("{fwd} = 1\n")),
                ("/etc/sysctl.d/.zz-hidden.conf", &format!("{fwd} = 0\n")),
                ("/etc/sysctl.d/zz-notes.txt", &format!("{fwd} = 0\n")),
                ("/etc/sysctl.d/zz-old.conf.bak", &format!("{fwd} = 0\n")),
            ],
            &[("/etc/sysctl.d/99-router-off.conf", "/dev/null")],
        ),
        // Names in byte order: digits, upper case, `_`, lower case; `10-` before `9-`.
        case(
            "byte-order",
            &[
                ("/etc/sysctl.d/9-b.conf", &format!("{fwd} = 9\n")),
                ("/etc/sysctl.d/10-a.conf", &format!("{fwd} = 10\n")),
                ("/usr/lib/sysctl.d/Z.conf", &format!("{fwd} = Z\n")),
                ("/run/sysctl.d/_x.conf", &format!("{fwd} = _\n")),
                ("/etc/sysctl.d/a.conf", &format!("{fwd} = a\n")),
                ("/etc/sysctl.d/99-dnsfix.conf", &format!("{fwd} = 1\n")),
            ],
            &[],
        ),
        // Debian's link to /etc/sysctl.conf, and a file sorting after it.
        case(
            "debian-link",
            &[
                ("/etc/sysctl.conf", &format!("# tuning\n{fwd} = 0\n")),
                ("/etc/sysctl.d/99-dnsfix.conf", &format!("{fwd} = 1\n")),
                (
                    "/etc/sysctl.d/zz-last.conf",
                    "net.bridge.bridge-nf-call-iptables = 1\n",
                ),
            ],
            &[("/etc/sysctl.d/99-sysctl.conf", "../sysctl.conf")],
        ),
        // /etc/sysctl.conf with no link to it, and a link from /etc into /usr/lib.
        case(
            "no-link",
            &[
                ("/etc/sysctl.conf", &format!("{fwd} = 0\n")),
                ("/usr/lib/sysctl.d/50-vendor.conf", &format!("{fwd} = 1\n")),
            ],
            &[(
                "/etc/sysctl.d/60-vendor.conf",
                "../../usr/lib/sysctl.d/50-vendor.conf",
            )],
        ),
        // The same on a node systemd boots (Debian 13: no link): /etc/sysctl.conf unread.
        case(
            "no-link-systemd",
            &[
                ("/etc/sysctl.conf", &format!("{fwd} = 1\n")),
                ("/usr/lib/sysctl.d/50-vendor.conf", &format!("{fwd} = 0\n")),
                ("/run/systemd/system/.keep", ""),
            ],
            &[],
        ),
    ]
}

#[test]
fn the_boot_order_of_sysctl_files_is_systemds() {
    let analyze = systemd_analyze();
    let scratch = std::env::temp_dir().join(format!("dnsfix-sysctl-order-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let built = built_cases(&scratch);
    let fwd = "net.ipv4.ip_forward";
    let fixtures = fixture_trees();
    assert!(
        fixtures.len() > 50,
        "only {} fixture trees found",
        fixtures.len()
    );
    let failures: Vec<String> = built
        .iter()
        .chain(&fixtures)
        .filter_map(|root| compare(&analyze, root).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // The cases say what they are for: systemd's order gives these values.
    let winners = |root: &Path| -> BTreeMap<String, String> {
        let mut values = BTreeMap::new();
        for (_, content) in systemd_order(&analyze, root) {
            values.extend(assignments(&content));
        }
        values
    };
    let same = winners(&built[0]);
    assert_eq!(same[fwd], "0", "/lib's 90-only-lib.conf applies last");
    assert_eq!(
        same["net.bridge.bridge-nf-call-iptables"], "0",
        "/run beats /usr/lib"
    );
    assert_eq!(
        same["net.ipv6.conf.all.forwarding"], "1",
        "/usr/local/lib beats /usr/lib"
    );
    assert_eq!(
        winners(&built[1])[fwd],
        "1",
        "masked, hidden and .txt files do not apply"
    );
    assert_eq!(winners(&built[2])[fwd], "a", "byte order of names");
    assert_eq!(
        winners(&built[3])[fwd],
        "0",
        "99-sysctl.conf sorts after 99-dnsfix.conf"
    );
    assert_eq!(
        winners(&built[5])[fwd],
        "0",
        "systemd does not read /etc/sysctl.conf"
    );
    let raw = from_tree(&built[5]).expect("the tree reads");
    let facts = dnsfix::facts::NodeFacts::from_raw("node1", &raw);
    let persisted = facts.sysctls[fwd].persisted.as_ref().expect("persisted");
    assert_eq!(
        (persisted.path.as_str(), persisted.value.as_str()),
        ("/usr/lib/sysctl.d/50-vendor.conf", "0")
    );
    let _ = std::fs::remove_dir_all(&scratch);
}

/// systemd-sysctl, where systemd installs it (not on PATH).
fn systemd_sysctl() -> PathBuf {
    ["/usr/lib/systemd/systemd-sysctl", "/lib/systemd/systemd-sysctl"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .expect(
            "systemd-sysctl not found: these tests compare dnsfix with it. Install it with `apt-get install systemd`",
        )
}

/// The forwarding systemd-sysctl leaves when it applies `files` (in order) in a network
/// namespace of its own: `(ip_forward, default, an interface made after it, that interface
/// after systemd's udev rule ran for it)`. The namespace starts with forwarding off, as a
/// booting kernel has it.
fn systemd_forwarding(sysctl: &Path, scratch: &Path, files: &[(String, String)]) -> [String; 4] {
    std::fs::create_dir_all(scratch).expect("mkdir");
    let mut args = String::new();
    for (index, (_, content)) in files.iter().enumerate() {
        let path = scratch.join(format!("{index:03}.conf"));
        std::fs::write(&path, content).expect("write");
        args.push_str(&format!(" '{}'", path.display()));
    }
    let sys = sysctl.display();
    let script = format!(
        "set -e
cd /proc/sys/net/ipv4
echo 0 > ip_forward; echo 0 > conf/default/forwarding
{sys} --prefix=/net/ipv4/ip_forward --prefix=/net/ipv4/conf {args} 2>/dev/null || true
cat ip_forward conf/default/forwarding
ip link add v0 type veth peer name v1
cat conf/v0/forwarding
{sys} --prefix=/net/ipv4/conf/v0 {args} 2>/dev/null || true
cat conf/v0/forwarding"
    );
    let out = Command::new("unshare")
        .args(["--net", "sh", "-c", &script])
        .output()
        .expect("unshare runs (as root)");
    assert!(
        out.status.success(),
        "unshare --net: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let values: Vec<String> = text.lines().map(str::to_owned).collect();
    values
        .try_into()
        .unwrap_or_else(|v| panic!("four values, not {v:?}"))
}

/// The same as dnsfix says it for the tree at `root`, read as a node systemd boots.
fn dnsfix_forwarding(root: &Path) -> [String; 4] {
    let raw = from_tree(root).expect("the tree reads");
    let files = raw.config_files(&SYSCTL_DIRS, SYSCTL_CONF);
    let persisted = persisted_files(&files, true);
    let value = |key: &str| {
        persisted
            .get(key)
            .map_or_else(|| "0".to_owned(), |v| v.value.clone())
    };
    let default = value(DEFAULT_FORWARDING);
    let udev = on_new_interface(&files, "net.ipv4.conf.v0.forwarding")
        .map_or_else(|| default.clone(), |v| v.value);
    [value("net.ipv4.ip_forward"), default.clone(), default, udev]
}

/// The cases of forwarding's boot order, under `scratch`, each with what systemd leaves
/// `[ip_forward, default, a new interface, it after udev]`.
fn forwarding_cases(scratch: &Path) -> Vec<(PathBuf, [&'static str; 4])> {
    let fwd = "net.ipv4.ip_forward = 1\n";
    let off = "net.ipv4.conf.default.forwarding = 0\n";
    let glob = "net.ipv4.conf.*.forwarding = 0\n";
    let keep = ("/run/systemd/system/.keep", "");
    let case = |name: &str, files: &[(&str, &str)]| {
        let mut files = files.to_vec();
        files.push(keep);
        tree(&scratch.join(name), &files, &[])
    };
    vec![
        // A glob again with the same value keeps its first place: ip_forward after it
        // decides, but udev applies the glob to the new interface.
        (
            case(
                "glob-twice",
                &[
                    ("/etc/sysctl.d/10-router-off.conf", glob),
                    ("/etc/sysctl.d/50-k8s.conf", fwd),
                    ("/etc/sysctl.d/90-router-off.conf", glob),
                ],
            ),
            ["1", "1", "1", "0"],
        ),
        // The default off after forwarding on: every interface made later is off.
        (
            case(
                "default-after",
                &[
                    ("/etc/sysctl.d/k8s.conf", fwd),
                    ("/etc/sysctl.d/zz-hardening.conf", off),
                ],
            ),
            ["1", "0", "0", "0"],
        ),
        // Before it: ip_forward's change sets it on again.
        (
            case(
                "default-before",
                &[
                    ("/etc/sysctl.d/10-hardening.conf", off),
                    ("/etc/sysctl.d/k8s.conf", fwd),
                ],
            ),
            ["1", "1", "1", "1"],
        ),
        // ip_forward = 1 again after it changes nothing, nor does all.forwarding = 1.
        (
            case(
                "forward-twice",
                &[
                    ("/etc/sysctl.d/10-k8s.conf", fwd),
                    ("/etc/sysctl.d/50-hardening.conf", off),
                    ("/etc/sysctl.d/90-k8s.conf", fwd),
                ],
            ),
            ["1", "0", "0", "0"],
        ),
        (
            case(
                "all-forwarding-after",
                &[
                    ("/etc/sysctl.d/10-k8s.conf", fwd),
                    ("/etc/sysctl.d/50-hardening.conf", off),
                    (
                        "/etc/sysctl.d/90-all.conf",
                        "net.ipv4.conf.all.forwarding = 1\n",
                    ),
                ],
            ),
            ["1", "0", "0", "0"],
        ),
        // The interface's own line wins over the glob; a `-key` leaves it as it was made.
        (
            case(
                "own-line",
                &[
                    ("/etc/sysctl.d/10-router-off.conf", glob),
                    (
                        "/etc/sysctl.d/20-v0.conf",
                        "net.ipv4.conf.v0.forwarding = 1\n",
                    ),
                    ("/etc/sysctl.d/k8s.conf", fwd),
                ],
            ),
            ["1", "1", "1", "1"],
        ),
        (
            case(
                "excluded",
                &[
                    ("/etc/sysctl.d/10-router-off.conf", glob),
                    ("/etc/sysctl.d/20-v0.conf", "-net.ipv4.conf.v0.forwarding\n"),
                    ("/etc/sysctl.d/k8s.conf", fwd),
                ],
            ),
            ["1", "1", "1", "1"],
        ),
    ]
}

#[test]
fn systemd_sysctl_leaves_forwarding_as_dnsfix_says() {
    let analyze = systemd_analyze();
    let sysctl = systemd_sysctl();
    let scratch =
        std::env::temp_dir().join(format!("dnsfix-sysctl-forwarding-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let cases = forwarding_cases(&scratch.join("cases"));
    let roots: Vec<&PathBuf> = cases.iter().map(|(root, _)| root).collect();
    let fixtures = fixture_trees();
    let mut failures = Vec::new();
    for (index, root) in roots.into_iter().chain(&fixtures).enumerate() {
        let files = systemd_order(&analyze, root);
        let theirs = systemd_forwarding(&sysctl, &scratch.join(format!("run{index}")), &files);
        let ours = dnsfix_forwarding(root);
        if theirs != ours {
            failures.push(format!(
                "{}: systemd-sysctl leaves {theirs:?}, dnsfix says {ours:?}",
                root.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The cases say what they are for.
    for (root, want) in &cases {
        let files = systemd_order(&analyze, root);
        let theirs = systemd_forwarding(&sysctl, &scratch.join("check"), &files);
        assert_eq!(theirs, *want, "{}", root.display());
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
