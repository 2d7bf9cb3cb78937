//! The apply and rollback scripts, run for real with dash against a temporary root: a
//! private mount namespace where /var/lib (dnsfix's state and the files written) is an
//! empty tmpfs, so nothing of the machine is touched and no lab is needed. What comes back
//! is read with the same protocol module dnsfix reads a node's output with. Needs root,
//! like `gather_tree`.

use std::path::Path;
use std::process::Command;

use dnsfix::apply::script::{apply_script, rollback_script};
use dnsfix::node_script::{Boundary, RecordKind, records};
use dnsfix::plan::model::Change;
use dnsfix::util::sha256_hex;

const TARGET: &str = "/var/lib/node/etc/dnsfix.conf";

/// Runs `steps` (shell, with `$scratch` the scratch directory) in a private mount
/// namespace with a fresh /var/lib.
fn in_temporary_root(scratch: &Path, steps: &str) -> String {
    let script = format!("set -e\nmount -t tmpfs tmpfs /var/lib\n{steps}");
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "--", "sh", "-c"])
        .arg(script)
        .arg("steps")
        .env("scratch", scratch)
        .output()
        .unwrap_or_else(|e| panic!("cannot run unshare (needs root and util-linux): {e}"));
    assert!(
        out.status.success(),
        "the temporary root could not be set up (this test needs root): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn write(before: Option<&str>, content: &str) -> Change {
    Change::WriteFile {
        path: TARGET.into(),
        description: String::new(),
        before_sha256: before.map(|b| sha256_hex(b.as_bytes())),
        before: before.map(str::to_owned),
        after_sha256: sha256_hex(content.as_bytes()),
        content: content.into(),
        mode: None,
        reasons: Vec::new(),
    }
}

/// The kinds and args of the records in `file`.
fn kinds(file: &Path, boundary: &Boundary) -> Vec<(RecordKind, String)> {
    let mut out = b"\n".to_vec();
    out.extend(std::fs::read(file).expect("script output"));
    records(&out, boundary, false)
        .expect("frames")
        .into_iter()
        .map(|r| (r.kind, r.args))
        .collect()
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    dir
}

#[test]
fn apply_writes_a_new_file_and_rollback_removes_it() {
    let dir = scratch("node-scripts-apply-rollback");
    let b = Boundary::fresh();
    let content = "# dnsfix\nnameserver 10.0.0.1\n";
    let apply = apply_script(
        &b,
        "r1",
        "/var/lib/dnsfix/handled/p1",
        &[write(None, content)],
        &[],
        5,
    )
    .expect("apply script");
    let rollback = rollback_script(&b, "r1", &[], 5).expect("rollback script");
    std::fs::write(dir.join("apply.sh"), apply).expect("write");
    std::fs::write(dir.join("rollback.sh"), rollback).expect("write");
    let shown = in_temporary_root(
        &dir,
        &format!(
            "dash \"$scratch/apply.sh\" > \"$scratch/apply.out\" </dev/null\n\
             cat {TARGET} > \"$scratch/written\"\n\
             dash \"$scratch/rollback.sh\" > \"$scratch/rollback.out\" </dev/null\n\
             [ -e {TARGET} ] && echo still there || echo gone\n"
        ),
    );
    assert_eq!(
        kinds(&dir.join("apply.out"), &b),
        [
            (RecordKind::Begin, "dnsfix-apply-1".to_string()),
            (RecordKind::Ok, TARGET.to_string()),
            (RecordKind::Done, "r1".to_string()),
        ]
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("written")).expect("read"),
        content
    );
    assert_eq!(
        kinds(&dir.join("rollback.out"), &b),
        [
            (RecordKind::Begin, "dnsfix-rollback-1".to_string()),
            (RecordKind::Removed, TARGET.to_string()),
            (RecordKind::Done, "r1".to_string()),
        ]
    );
    assert_eq!(shown.trim(), "gone");
}

#[test]
fn apply_refuses_a_file_changed_since_the_plan() {
    let dir = scratch("node-scripts-stale");
    let b = Boundary::fresh();
    let apply = apply_script(
        &b,
        "r2",
        "/var/lib/dnsfix/handled/p2",
        &[write(Some("planned against this\n"), "new\n")],
        &[],
        5,
    )
    .expect("apply script");
    std::fs::write(dir.join("apply.sh"), apply).expect("write");
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p {dir}\nprintf 'changed by hand\\n' > {TARGET}\n\
             dash \"$scratch/apply.sh\" > \"$scratch/apply.out\" </dev/null\n\
             cat {TARGET}\n",
            dir = TARGET.rsplit_once('/').expect("dir").0
        ),
    );
    let got = kinds(&dir.join("apply.out"), &b);
    assert_eq!(got.first().map(|k| &k.0), Some(&RecordKind::Begin));
    assert!(
        got.iter()
            .any(|(k, args)| *k == RecordKind::Stale && args.starts_with(TARGET)),
        "{got:?}"
    );
    assert!(got.iter().any(|(k, _)| *k == RecordKind::Failed), "{got:?}");
    assert_eq!(shown, "changed by hand\n");
}
