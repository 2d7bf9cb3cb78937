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
/// TARGET's directory.
const TARGET_DIR: &str = "/var/lib/node/etc";

/// Runs `steps` (shell, with `$scratch` the scratch directory) in a private mount
/// namespace with a fresh /var/lib.
fn in_temporary_root(scratch: &Path, steps: &str) -> String {
    in_namespaces(scratch, &[], steps)
}

/// [`in_temporary_root`], in the namespaces `unshare` makes with `more` as well.
fn in_namespaces(scratch: &Path, more: &[&str], steps: &str) -> String {
    let script = format!("set -e\nmount -t tmpfs tmpfs /var/lib\n{steps}");
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private"])
        .args(more)
        .args(["--", "sh", "-c"])
        .arg(script)
        .arg("steps")
        .env("scratch", scratch)
        .output()
        .unwrap_or_else(|e| panic!("cannot run unshare (needs root and util-linux): {e}"));
    assert!(
        out.status.success(),
        "the temporary root could not be set up (this test needs root, and socat and \
         iproute2 where a step runs them): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The apply script of run `run` (plan `plan`) for `changes` and `handlers`, saved as
/// `dir/RUN.sh`.
fn save_apply(
    dir: &Path,
    b: &Boundary,
    (run, plan): (&str, &str),
    changes: &[Change],
    handlers: &[dnsfix::plan::model::HandlerRun],
) {
    save_apply_noting(dir, b, (run, plan), changes, handlers, None);
}

/// [`save_apply`] for a plan that recreates the node's DNS pods: the script notes them
/// pending at `pods_pending`.
fn save_apply_noting(
    dir: &Path,
    b: &Boundary,
    (run, plan): (&str, &str),
    changes: &[Change],
    handlers: &[dnsfix::plan::model::HandlerRun],
    pods_pending: Option<&str>,
) {
    let handled = format!("/var/lib/dnsfix/handled/{plan}");
    let script =
        apply_script(b, run, &handled, pods_pending, changes, handlers, 5).expect("apply script");
    std::fs::write(dir.join(format!("{run}.sh")), script).expect("write");
}

/// The rollback script of run `run`, saved as `dir/rollback.sh`.
fn save_rollback(dir: &Path, b: &Boundary, run: &str) {
    let script = rollback_script(b, run, &[], 5).expect("rollback script");
    std::fs::write(dir.join("rollback.sh"), script).expect("write");
}

fn write(before: Option<&str>, content: &str) -> Change {
    write_at(TARGET, before, content)
}

fn write_at(path: &str, before: Option<&str>, content: &str) -> Change {
    Change::WriteFile {
        path: path.into(),
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

/// A handler that restarts `unit` and gates on its health.
fn restart(unit: &str) -> dnsfix::plan::model::HandlerRun {
    dnsfix::plan::model::HandlerRun {
        name: format!("restart {unit}"),
        unit: unit.into(),
        action: dnsfix::plan::model::HandlerAction::Restarted,
        serial: dnsfix::playbook::Batch::Count(1),
        reasons: Vec::new(),
    }
}

/// The health gate's stand-ins in a private network namespace: loopback up, a systemctl
/// over the machine's (a tmpfs on /usr/local/bin, first on the script's PATH) that says
/// active and names /var/lib/mainpid's pid as the unit's, and /var/lib/ok.sh, a healthz
/// that answers "ok". The answer reads the request to its blank line first: a reply sent
/// over unread data ends in a reset, which can reach curl before the reply does ("Empty
/// reply").
const HEALTHZ_STANDINS: &str = r#"ip link set lo up
mount -t tmpfs tmpfs /usr/local/bin
printf '#!/bin/sh\ncase $1 in is-active) echo active ;; show) cat /var/lib/mainpid ;; esac\n' \
  > /usr/local/bin/systemctl
cat > /var/lib/ok.sh <<'OK'
#!/bin/sh
cr=$(printf '\r')
while IFS= read -r line; do
  case $line in '' | "$cr") break ;; esac
done
printf 'HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok'
OK
chmod 755 /usr/local/bin/systemctl /var/lib/ok.sh /var/lib
"#;

/// The seconds a step wrote to `dir/took` (`echo $(( $(date +%s) - start ))`).
fn seconds_taken(dir: &Path) -> u64 {
    std::fs::read_to_string(dir.join("took"))
        .expect("took")
        .trim()
        .parse()
        .expect("seconds")
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
    save_apply(&dir, &b, ("r1", "p1"), &[write(None, content)], &[]);
    save_rollback(&dir, &b, "r1");
    let shown = in_temporary_root(
        &dir,
        &format!(
            "dash \"$scratch/r1.sh\" > \"$scratch/apply.out\" </dev/null\n\
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
    save_apply(
        &dir,
        &b,
        ("r2", "p2"),
        &[write(Some("planned against this\n"), "new\n")],
        &[],
    );
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p {dir}\nprintf 'changed by hand\\n' > {TARGET}\n\
             dash \"$scratch/r2.sh\" > \"$scratch/apply.out\" </dev/null\n\
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

/// A live value is compare-and-swap too: one that moved since the plan to neither its
/// before nor its after stops the host before any file is written, and is left as it is;
/// at the plan's before it is set. `net.ipv4.ip_default_ttl`, in a network namespace of
/// the test's own (64 there).
#[test]
fn apply_refuses_a_sysctl_changed_since_the_plan() {
    let dir = scratch("node-scripts-sysctl-stale");
    let b = Boundary::fresh();
    let ttl = |before: &str| Change::Sysctl {
        name: "net.ipv4.ip_default_ttl".into(),
        before: Some(before.into()),
        after: "65".into(),
        reasons: Vec::new(),
    };
    save_apply(
        &dir,
        &b,
        ("r1", "p1"),
        &[write(None, "new\n"), ttl("64")],
        &[],
    );
    let shown = in_namespaces(
        &dir,
        &["--net"],
        &format!(
            "echo 70 > /proc/sys/net/ipv4/ip_default_ttl\n\
             dash \"$scratch/r1.sh\" > \"$scratch/stale.out\" </dev/null\n\
             cat /proc/sys/net/ipv4/ip_default_ttl; [ -e {TARGET} ] && echo written || echo none\n\
             echo 64 > /proc/sys/net/ipv4/ip_default_ttl\n\
             dash \"$scratch/r1.sh\" > \"$scratch/ok.out\" </dev/null\n\
             cat /proc/sys/net/ipv4/ip_default_ttl\n"
        ),
    );
    let stale = kinds(&dir.join("stale.out"), &b);
    assert!(
        stale.contains(&(RecordKind::Stale, "net.ipv4.ip_default_ttl".to_string())),
        "{stale:?}"
    );
    assert!(
        !stale.iter().any(|(k, _)| *k == RecordKind::Ok),
        "nothing written on a stale host: {stale:?}"
    );
    let said = std::fs::read_to_string(dir.join("stale.out")).expect("output");
    assert!(said.contains("reads 70, the plan saw 64"), "{said}");
    let ok = kinds(&dir.join("ok.out"), &b);
    assert!(
        ok.contains(&(RecordKind::Ok, "net.ipv4.ip_default_ttl".to_string())),
        "{ok:?}"
    );
    assert_eq!(shown, "70\nnone\n65\n");
}

/// Every file is checked before any is written: a host whose second file sits under a
/// symlinked directory, or is a FIFO (whose reader would block for good), gets neither
/// written, and the run ends at once.
#[test]
fn a_symlinked_parent_or_a_fifo_stops_the_host_before_any_write() {
    let dir = scratch("node-scripts-precheck");
    let b = Boundary::fresh();
    let one = "/var/lib/node/a/one.conf";
    let two = "/var/lib/node/b/two.conf";
    save_apply(
        &dir,
        &b,
        ("r3", "p3"),
        &[
            write_at(one, Some("old1\n"), "new1\n"),
            write_at(two, Some("old2\n"), "new2\n"),
        ],
        &[],
    );
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p /var/lib/node/a /var/lib/elsewhere\nprintf 'old1\\n' > {one}\n\
             printf 'old2\\n' > /var/lib/elsewhere/two.conf\n\
             ln -s /var/lib/elsewhere /var/lib/node/b\n\
             timeout 20 dash \"$scratch/r3.sh\" > \"$scratch/linked.out\" </dev/null\n\
             cat {one} /var/lib/elsewhere/two.conf\n\
             rm /var/lib/node/b && mkdir /var/lib/node/b && mkfifo {two}\n\
             timeout 20 dash \"$scratch/r3.sh\" > \"$scratch/fifo.out\" </dev/null\n\
             cat {one}\n"
        ),
    );
    assert_eq!(shown, "old1\nold2\nold1\n", "nothing written");
    for (out, why) in [
        ("linked.out", "symlinked-parent"),
        ("fifo.out", "not-a-regular-file"),
    ] {
        let got = kinds(&dir.join(out), &b);
        assert!(
            got.contains(&(RecordKind::Stale, format!("{two} {why}"))),
            "{out}: {got:?}"
        );
        assert!(
            !got.iter().any(|(k, _)| *k == RecordKind::Ok),
            "{out}: {got:?}"
        );
        assert_eq!(got.last().map(|k| &k.0), Some(&RecordKind::Failed), "{out}");
    }
}

/// A written file keeps the old one's mode and owner, and so does a restored one; a
/// symlink someone put at a temp name the scripts once used points at a file that stays
/// as it was (the temp files' names are unguessable now, and made exclusively).
#[test]
fn written_and_restored_files_keep_mode_and_owner_and_never_write_through_a_planted_link() {
    let dir = scratch("node-scripts-owner");
    let b = Boundary::fresh();
    save_apply(
        &dir,
        &b,
        ("r4", "p4"),
        &[write(Some("old\n"), "new\n")],
        &[],
    );
    save_rollback(&dir, &b, "r4");
    let name = TARGET.rsplit_once('/').expect("name").1;
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p {TARGET_DIR}\nprintf 'old\\n' > {TARGET}\n\
             chown 1234:5678 {TARGET} && chmod 640 {TARGET}\n\
             printf 'SECRET\\n' > /var/lib/victim && chmod 600 /var/lib/victim\n\
             for t in r4 rollback-r4; do ln -s /var/lib/victim {TARGET_DIR}/.{name}.dnsfix-$t; done\n\
             dash \"$scratch/r4.sh\" > \"$scratch/apply.out\" </dev/null\n\
             stat -c '%a %u %g' {TARGET}; cat {TARGET}\n\
             for t in r4 rollback-r4; do ln -sf /var/lib/victim {TARGET_DIR}/.{name}.dnsfix-$t; done\n\
             dash \"$scratch/rollback.sh\" > \"$scratch/rollback.out\" </dev/null\n\
             stat -c '%a %u %g' {TARGET}; cat {TARGET}\n\
             stat -c '%a' /var/lib/victim; cat /var/lib/victim\n\
             [ -L {TARGET} ] && echo link || echo file\n"
        ),
    );
    assert_eq!(
        shown,
        "640 1234 5678\nnew\n640 1234 5678\nold\n600\nSECRET\nfile\n",
        "apply: {:?}\nrollback: {:?}",
        kinds(&dir.join("apply.out"), &b),
        kinds(&dir.join("rollback.out"), &b)
    );
}

/// A file already at the plan's content is taken over only from a run that was
/// interrupted (no result on the node): never from one that finished, whose own
/// rollback undoes it, so rolling back this run leaves that run's change alone.
#[test]
fn only_an_interrupted_runs_write_is_adopted() {
    let dir = scratch("node-scripts-adopt");
    let b = Boundary::fresh();
    let change = [write(Some("old\n"), "new\n")];
    for (run, plan) in [("r5", "p5"), ("r6", "p6"), ("r7", "p7")] {
        save_apply(&dir, &b, (run, plan), &change, &[]);
    }
    save_rollback(&dir, &b, "r6");
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p {TARGET_DIR}\nprintf 'old\\n' > {TARGET}\n\
             dash \"$scratch/r5.sh\" > \"$scratch/r5.out\" </dev/null\n\
             dash \"$scratch/r6.sh\" > \"$scratch/r6.out\" </dev/null\n\
             dash \"$scratch/rollback.sh\" > \"$scratch/rollback.out\" </dev/null\n\
             cat {TARGET}\n\
             rm /var/lib/dnsfix/backups/r5/result\n\
             dash \"$scratch/r7.sh\" > \"$scratch/r7.out\" </dev/null\n"
        ),
    );
    assert_eq!(shown, "new\n", "r5's change stays");
    assert!(
        kinds(&dir.join("r6.out"), &b).contains(&(RecordKind::Already, TARGET.to_string())),
        "{:?}",
        kinds(&dir.join("r6.out"), &b)
    );
    // r5 as if cut off before it finished: its write is taken over.
    assert!(
        kinds(&dir.join("r7.out"), &b).contains(&(RecordKind::Adopted, TARGET.to_string())),
        "{:?}",
        kinds(&dir.join("r7.out"), &b)
    );
}

/// A write taken over once is not taken over again, and never by a plan that found the
/// file elsewhere before: run r5 (old -> new) cut off, r7 takes it over, then a plan from
/// "other" to the same "new" finds the file already so and adopts nothing (rolling it
/// back would put "old" back, which neither it nor r7 saw).
#[test]
fn a_write_is_adopted_once_and_only_over_the_same_before() {
    let dir = scratch("node-scripts-adopt-once");
    let b = Boundary::fresh();
    let second = format!("{}/second.conf", TARGET.rsplit_once('/').expect("dir").0);
    let both = [
        write(Some("old\n"), "new\n"),
        write_at(&second, Some("old2\n"), "new2\n"),
    ];
    save_apply(&dir, &b, ("r5", "p5"), &both, &[]);
    save_apply(&dir, &b, ("r7", "p7"), &both, &[]);
    save_apply(
        &dir,
        &b,
        ("r8", "p8"),
        &[write(Some("other\n"), "new\n")],
        &[],
    );
    save_apply(
        &dir,
        &b,
        ("r9", "p9"),
        &[write(Some("old\n"), "new\n")],
        &[],
    );
    in_temporary_root(
        &dir,
        &format!(
            "mkdir -p {TARGET_DIR}\nprintf 'old\\n' > {TARGET}\nprintf 'old2\\n' > {second}\n\
             dash \"$scratch/r5.sh\" > /dev/null </dev/null\n\
             rm /var/lib/dnsfix/backups/r5/result\n\
             dash \"$scratch/r7.sh\" > \"$scratch/r7.out\" </dev/null\n\
             rm /var/lib/dnsfix/backups/r7/result\n\
             dash \"$scratch/r8.sh\" > \"$scratch/r8.out\" </dev/null\n\
             dash \"$scratch/r9.sh\" > \"$scratch/r9.out\" </dev/null\n"
        ),
    );
    let adopted = (RecordKind::Adopted, TARGET.to_string());
    let already = (RecordKind::Already, TARGET.to_string());
    // Every file of the interrupted run, not the first only.
    let r7 = kinds(&dir.join("r7.out"), &b);
    assert!(r7.contains(&adopted), "{r7:?}");
    assert!(
        r7.contains(&(RecordKind::Adopted, second.clone())),
        "{r7:?}"
    );
    assert!(
        kinds(&dir.join("r8.out"), &b).contains(&already),
        "{:?}",
        kinds(&dir.join("r8.out"), &b)
    );
    // r7 was cut off too (no result), but took r5's over: r9 takes r7's, not r5's again.
    let r9 = std::fs::read_to_string(dir.join("r9.out")).expect("r9");
    assert!(r9.contains("written by the interrupted run r7"), "{r9}");
}

/// A rollback that cannot write its reversed copy of the manifest (a full /var) restores
/// nothing and fails, rather than restoring the newest half and saying done. And the
/// manifest's empty fields stay empty: a sysctl whose old value was unreadable is not
/// taken for one whose old value is its new one.
#[test]
fn a_rollback_on_a_full_disk_restores_nothing_and_fails() {
    let dir = scratch("node-scripts-rollback-full");
    let b = Boundary::fresh();
    save_rollback(&dir, &b, "r1");
    let manifest = "/var/lib/dnsfix/backups/r1/manifest";
    in_temporary_root(
        &dir,
        &format!(
            "mkdir -p /var/lib/dnsfix/backups/r1 /var/lib/full\n\
             printf 'sysctl\\tkernel.randomize_va_space\\t\\t%s\\n' \"$(cat /proc/sys/kernel/randomize_va_space)\" > {manifest}\n\
             dash \"$scratch/rollback.sh\" > \"$scratch/fields.out\" </dev/null\n\
             mount -t tmpfs -o size=256k,mode=0700 tmpfs /var/lib/dnsfix\n\
             mkdir -p /var/lib/dnsfix/backups/r1\n\
             i=0; while [ $i -lt 400 ]; do printf 'file\\t/etc/dnsfix/f%s\\tabsent\\t%064d\\t0644\\n' $i 0; i=$((i + 1)); done > {manifest}\n\
             dd if=/dev/zero of=/var/lib/dnsfix/spacer bs=1k count=8 2>/dev/null\n\
             dd if=/dev/zero of=/var/lib/dnsfix/fill bs=1k count=256 2>/dev/null || true\n\
             rm /var/lib/dnsfix/spacer\n\
             dash \"$scratch/rollback.sh\" > \"$scratch/full.out\" </dev/null\n"
        ),
    );
    let full = kinds(&dir.join("full.out"), &b);
    assert!(
        full.contains(&(RecordKind::Failed, "r1".to_string())),
        "{full:?}"
    );
    let said = std::fs::read_to_string(dir.join("full.out")).expect("output");
    assert!(said.contains("nothing restored"), "{said}");
    // The run set it from an unreadable value to what it is now: nothing to set back, and
    // not "already" (read as from its value to "", it would be).
    let fields = kinds(&dir.join("fields.out"), &b);
    assert!(
        fields.contains(&(RecordKind::Error, "kernel.randomize_va_space".to_string())),
        "{fields:?}"
    );
}

/// A state directory on a read-only filesystem: the apply and the rollback cannot take
/// the node's lock, and say so in a fatal record (dash would end at the failed
/// redirection of `exec`, with nothing but its own message on stderr), writing nothing.
#[test]
fn a_read_only_state_directory_is_a_fatal_record_not_a_silent_end() {
    let dir = scratch("node-scripts-read-only-state");
    let b = Boundary::fresh();
    save_apply(&dir, &b, ("r1", "p1"), &[write(None, "new\n")], &[]);
    save_rollback(&dir, &b, "r1");
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p /var/lib/dnsfix/backups/r1\n\
             printf 'file\\t{TARGET}\\tabsent\\t%064d\\t0644\\n' 0 > /var/lib/dnsfix/backups/r1/manifest\n\
             mount --bind /var/lib/dnsfix /var/lib/dnsfix\n\
             mount -o remount,bind,ro /var/lib/dnsfix\n\
             dash \"$scratch/r1.sh\" > \"$scratch/apply.out\" </dev/null\n\
             dash \"$scratch/rollback.sh\" > \"$scratch/rollback.out\" </dev/null\n\
             [ -e {TARGET} ] && echo written || echo none\n"
        ),
    );
    assert_eq!(shown, "none\n");
    for out in ["apply.out", "rollback.out"] {
        let got = kinds(&dir.join(out), &b);
        let lock = "cannot open /var/lib/dnsfix/lock (full or read-only filesystem?)";
        assert!(
            got.contains(&(RecordKind::Fatal, lock.to_string())),
            "{out}: {got:?}"
        );
    }
}

/// Taking the lock leaves the script's stderr as it was: a shell error later in the run is
/// what dnsfix reports as why the script stopped early.
#[test]
fn the_lock_keeps_the_scripts_stderr() {
    let dir = scratch("node-scripts-lock-stderr");
    let common = include_str!("../../src/apply/common.sh");
    std::fs::write(
        dir.join("lock.sh"),
        format!("{common}\nlock test\necho still-said >&2\n"),
    )
    .expect("write");
    in_temporary_root(
        &dir,
        "dash \"$scratch/lock.sh\" > \"$scratch/out\" 2> \"$scratch/err\" </dev/null\n",
    );
    let err = std::fs::read_to_string(dir.join("err")).expect("stderr");
    assert_eq!(err, "still-said\n");
}

/// The apply script runs nothing unless it arrived whole: cut anywhere, the shell finds
/// the compound command unfinished. And a temp file left by an interrupted run is
/// removed, but not a look-alike of someone else's.
#[test]
fn a_script_cut_short_runs_nothing_and_only_dnsfix_temp_files_go() {
    let dir = scratch("node-scripts-cut");
    let b = Boundary::fresh();
    save_apply(
        &dir,
        &b,
        ("r1", "p1"),
        &[write(Some("old\n"), "new\n")],
        &[],
    );
    let script = std::fs::read_to_string(dir.join("r1.sh")).expect("script");
    let cut = &script[..script.find("precheck").expect("a step")];
    std::fs::write(dir.join("cut.sh"), cut).expect("write");
    let name = TARGET.rsplit_once('/').expect("name").1;
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p {TARGET_DIR}\nprintf 'old\\n' > {TARGET}\n\
             dash \"$scratch/cut.sh\" > \"$scratch/cut.out\" 2>&1 </dev/null || true\n\
             [ -e /var/lib/dnsfix ] && echo state || echo no-state\n\
             touch {TARGET_DIR}/.{name}.dnsfix-before-upgrade {TARGET_DIR}/.{name}.dnsfix-r0-0123456789abcdef\n\
             dash \"$scratch/r1.sh\" > /dev/null </dev/null\n\
             ls -a {TARGET_DIR}\n"
        ),
    );
    assert!(shown.starts_with("no-state\n"), "{shown}");
    assert!(
        shown.contains(&format!(".{name}.dnsfix-before-upgrade")),
        "{shown}"
    );
    assert!(!shown.contains("0123456789abcdef"), "{shown}");
}

/// Where SELinux is on, a replaced file keeps its context (the temp file takes the old
/// one's, chcon --reference, before the rename: made anew it would get its directory's
/// default, etc_t where /etc/resolv.conf is net_conf_t), and a new file gets the policy's
/// (restorecon after the rename). Run with a stand-in /sys/fs/selinux and stand-in chcon
/// and restorecon that log their arguments; without SELinux neither runs.
#[test]
fn written_files_keep_their_selinux_context() {
    let dir = scratch("node-scripts-selinux");
    let b = Boundary::fresh();
    let new_file = format!("{TARGET_DIR}/new.conf");
    let changes = [
        write(Some("old\n"), "new\n"),
        write_at(&new_file, None, "fresh\n"),
    ];
    save_apply(&dir, &b, ("r1", "p1"), &changes, &[]);
    save_apply(
        &dir,
        &b,
        ("r2", "p2"),
        &[write(Some("new\n"), "newer\n")],
        &[],
    );
    let log = "/var/lib/selinux.log";
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p {TARGET_DIR}\nprintf 'new\\n' > {TARGET}\n\
             mount -t tmpfs tmpfs /usr/local/bin\n\
             printf '#!/bin/sh\\necho chcon \"$@\" >> {log}\\n' > /usr/local/bin/chcon\n\
             printf '#!/bin/sh\\necho restorecon \"$@\" >> {log}\\n' > /usr/local/bin/restorecon\n\
             chmod 755 /usr/local/bin/chcon /usr/local/bin/restorecon\n\
             dash \"$scratch/r2.sh\" > /dev/null </dev/null\n\
             cat {TARGET}\n\
             [ -e {log} ] && echo ran-without-selinux || true\n\
             mount -t tmpfs tmpfs /sys/fs\n\
             mkdir /sys/fs/selinux\n\
             echo 1 > /sys/fs/selinux/enforce\n\
             printf 'old\\n' > {TARGET}\n\
             dash \"$scratch/r1.sh\" > \"$scratch/r1.out\" </dev/null\n\
             cp {log} \"$scratch/selinux.log\"\n"
        ),
    );
    assert_eq!(shown, "newer\n", "without SELinux neither runs");
    let out = kinds(&dir.join("r1.out"), &b);
    assert!(
        out.contains(&(RecordKind::Ok, TARGET.to_string())),
        "{out:?}"
    );
    let logged = std::fs::read_to_string(dir.join("selinux.log")).expect("log");
    let lines: Vec<&str> = logged.lines().collect();
    assert_eq!(lines.len(), 2, "{logged}");
    // Both named in the target's directory, the script's working directory there (a
    // parent swapped for a symlink since cannot point them at another file).
    assert!(
        lines[0].starts_with("chcon -h --reference=./dnsfix.conf ./.dnsfix.conf.dnsfix-r1-"),
        "{logged}"
    );
    let new_name = new_file.rsplit_once('/').expect("a path").1;
    assert_eq!(lines[1], format!("restorecon ./{new_name}"), "{logged}");
}

/// The kubelet's health gate takes an "ok" from 127.0.0.1:10248 only from the unit's own
/// processes: the unit's main process or one it started answers, and the restart is
/// healthy; a user's socat that took the port while the kubelet restarted answers the
/// same "ok", and the unit is unhealthy once the gate's time is up. Run in a private
/// network namespace, with a systemctl stand-in over the machine's (a tmpfs on
/// /usr/local/bin, first on the script's PATH).
#[test]
fn only_the_units_own_process_answers_the_health_gate() {
    let dir = scratch("node-scripts-healthz");
    let b = Boundary::fresh();
    let handler = restart("kubelet");
    save_apply(&dir, &b, ("r8", "p8"), &[], &[handler]);
    let steps = "\
        listen='TCP-LISTEN:10248,bind=127.0.0.1,reuseaddr,fork'\n\
        sh -c \"socat $listen EXEC:/var/lib/ok.sh & wait\" & unit=$!\n\
        echo $unit > /var/lib/mainpid\n\
        sleep 0.5\n\
        dash \"$scratch/r8.sh\" > \"$scratch/own.out\" </dev/null\n\
        pkill -P $unit; kill $unit 2>/dev/null || true; sleep 0.3\n\
        rm -f /var/lib/dnsfix/handled/p8\n\
        sleep 60 & sleeper=$!; echo $sleeper > /var/lib/mainpid\n\
        setpriv --reuid=nobody --regid=nogroup --clear-groups socat $listen EXEC:/var/lib/ok.sh & impostor=$!\n\
        sleep 0.5\n\
        dash \"$scratch/r8.sh\" > \"$scratch/impostor.out\" </dev/null\n\
        kill $impostor $sleeper 2>/dev/null; true\n";
    in_namespaces(&dir, &["--net"], &format!("{HEALTHZ_STANDINS}{steps}"));
    let own = kinds(&dir.join("own.out"), &b);
    assert!(
        own.contains(&(RecordKind::Healthy, "kubelet".to_string())),
        "{own:?}"
    );
    let impostor = kinds(&dir.join("impostor.out"), &b);
    assert!(
        impostor.contains(&(RecordKind::Unhealthy, "kubelet".to_string())),
        "{impostor:?}"
    );
    let said = std::fs::read_to_string(dir.join("impostor.out")).expect("output");
    assert!(
        said.contains("answered ok, but from a process that is not kubelet's"),
        "{said}"
    );
}

/// A systemd that stops answering once the kubelet restarted (the restart itself can set
/// off the mount storm of kubernetes/kubernetes#79194; systemctl then waits up to 90 s on
/// it): the gate's `systemctl is-active` is bounded at 5 s, and the unit is unhealthy
/// within the gate's time (5 s here), saying why. Before, each look waited as long as
/// systemctl did, past the gate and up to the command timeout.
#[test]
fn a_systemd_that_stops_answering_fails_the_gate_in_its_time() {
    let dir = scratch("node-scripts-healthz-stuck");
    let b = Boundary::fresh();
    save_apply(&dir, &b, ("r27", "p27"), &[], &[restart("kubelet")]);
    let steps = "\
        ip link set lo up\n\
        mount -t tmpfs tmpfs /usr/local/bin\n\
        printf '#!/bin/sh\\ncase $1 in is-active|show) exec sleep 60 ;; esac\\n' > /usr/local/bin/systemctl\n\
        chmod 755 /usr/local/bin/systemctl /var/lib\n\
        start=$(date +%s)\n\
        dash \"$scratch/r27.sh\" > \"$scratch/out\" </dev/null\n\
        echo $(( $(date +%s) - start )) > \"$scratch/took\"\n";
    in_namespaces(&dir, &["--net"], steps);
    let got = kinds(&dir.join("out"), &b);
    assert!(
        got.contains(&(RecordKind::Unhealthy, "kubelet".to_string())),
        "{got:?}"
    );
    let said = std::fs::read_to_string(dir.join("out")).expect("output");
    assert!(
        said.contains(
            "not healthy 5s after systemctl restart: systemctl is-active did not answer within 5s (systemd busy or stuck)"
        ),
        "{said}"
    );
    let took = seconds_taken(&dir);
    assert!(took < 15, "the gate took {took}s");
}

/// The health gate asks the node's own kubelet, whatever root's environment and its
/// curl and wget settings say. A node behind a proxy often sets `http_proxy` for every
/// login (/etc/environment, which pam_env hands to sshd's and sudo's sessions), and curl
/// and wget send even a request for 127.0.0.1 through it unless `no_proxy` names it
/// (curl/curl@e7cb4a85 docs/cmdline-opts/_ENVIRONMENT.md; GNU wget likewise); a
/// `~/.curlrc` of root's can name a proxy too (curl reads it unless `-q` comes first,
/// curl/curl@feba8574 docs/cmdline-opts/disable.md). Here the proxy answers `ok` for a
/// kubelet that is down: before, the gate took that for the unit's health (the proxy is
/// no listener on the node's port 10248, so no process was held against it); a proxy that
/// fails made a healthy kubelet `unhealthy` and stopped the rollout. Asked with curl,
/// then with wget alone (curl hidden).
#[test]
fn the_health_gate_never_asks_through_a_proxy() {
    let dir = scratch("node-scripts-healthz-proxy");
    let b = Boundary::fresh();
    save_apply(&dir, &b, ("r26", "p26"), &[], &[restart("kubelet")]);
    let steps = "\
        sh -c \"socat TCP-LISTEN:3128,bind=127.0.0.1,reuseaddr,fork EXEC:/var/lib/ok.sh & wait\" & proxy=$!\n\
        sleep 60 & down=$!; echo $down > /var/lib/mainpid\n\
        mkdir -m 700 /var/lib/roothome\n\
        echo 'proxy = \"http://127.0.0.1:3128\"' > /var/lib/roothome/.curlrc\n\
        i=0; until ss -Hltn 'sport = :3128' | grep -q . || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done\n\
        http_proxy=http://127.0.0.1:3128 timeout 60 dash \"$scratch/r26.sh\" > \"$scratch/env.out\" </dev/null || true\n\
        rm -rf /var/lib/dnsfix\n\
        HOME=/var/lib/roothome timeout 60 dash \"$scratch/r26.sh\" > \"$scratch/curlrc.out\" </dev/null || true\n\
        rm -rf /var/lib/dnsfix\n\
        touch /var/lib/noexec; chmod 644 /var/lib/noexec\n\
        p=$(command -v curl) && mount --bind /var/lib/noexec \"$p\"\n\
        http_proxy=http://127.0.0.1:3128 timeout 60 dash \"$scratch/r26.sh\" > \"$scratch/wget.out\" </dev/null || true\n\
        kill $down 2>/dev/null; pkill -P $proxy || true; kill $proxy 2>/dev/null || true\n";
    in_namespaces(&dir, &["--net"], &format!("{HEALTHZ_STANDINS}{steps}"));
    for case in ["env", "curlrc", "wget"] {
        let got = kinds(&dir.join(format!("{case}.out")), &b);
        assert!(
            got.contains(&(RecordKind::Unhealthy, "kubelet".to_string())),
            "{case}: the proxy's ok passed for the kubelet's health: {got:?}"
        );
    }
}

/// The health gate run with a real wget (curl hidden; `setup` puts the one under test
/// first on the script's PATH), each run of `dir/RUN.sh` written to `dir/CASE.out`:
/// - `env`, `rc`: a kubelet that is down (nothing listens on its port), with a proxy that
///   answers `ok` named by root's environment, or by root's rc file (`rc.0`, holding
///   `rc.1` with PROXY for the proxy);
/// - `healthy`: a kubelet that answers, with a proxy that fails named by both, and the
///   names the gate keeps wget's flags under (now and before) set in the environment;
/// - without `timeout` (hidden, as on a node with neither coreutils' nor busybox's), root's
///   rc holding `retry` only: `untimed`, a kubelet that is down (the seconds the run took
///   in `dir/took`), and `v6`, one that answers on ::1 only (k3s and RKE2 on an IPv6 node).
fn gate_through_wget(dir: &Path, run: &str, setup: &str, rc: (&str, &str), retry: &str) {
    let b = Boundary::fresh();
    save_apply(dir, &b, (run, run), &[], &[restart("kubelet")]);
    let (rc_name, rc_text) = rc;
    let rc_ok = rc_text.replace("PROXY", "http://127.0.0.1:3128");
    let rc_fail = rc_text.replace("PROXY", "http://127.0.0.1:3129");
    // What is started in the background writes nowhere the test reads (its output would
    // be held open), and is ended however the steps end.
    let steps = format!(
        "{setup}\n\
         pids=; trap 'st=$?; for p in $pids; do pkill -P $p || true; kill $p 2>/dev/null || true; done; exit $st' EXIT\n\
         serve() {{ sh -c \"socat $1,reuseaddr,fork $2 & wait\" </dev/null >/dev/null 2>&1 & pids=\"$pids $!\"; }}\n\
         up() {{ i=0; until ss -Hltn \"sport = :$1\" | grep -q . || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done; }}\n\
         gate() {{ rm -rf /var/lib/dnsfix; /var/lib/timeout 60 dash \"$scratch/{run}.sh\" > \"$scratch/$1.out\" </dev/null || true; }}\n\
         touch /var/lib/noexec; chmod 644 /var/lib/noexec\n\
         p=$(command -v curl) && mount --bind /var/lib/noexec \"$p\"\n\
         t=$(command -v timeout); cp \"$t\" /var/lib/timeout\n\
         printf 'HTTP/1.0 502 Bad Gateway\\r\\nContent-Length: 5\\r\\n\\r\\nproxy' > /var/lib/fail.txt\n\
         serve TCP-LISTEN:3128,bind=127.0.0.1 EXEC:/var/lib/ok.sh\n\
         serve TCP-LISTEN:3129,bind=127.0.0.1 'SYSTEM:cat /var/lib/fail.txt'\n\
         mkdir -m 700 /var/lib/none /var/lib/ok /var/lib/fail /var/lib/retry\n\
         printf '%s\\n' '{rc_ok}' > /var/lib/ok/{rc_name}\n\
         printf '%s\\n' '{rc_fail}' > /var/lib/fail/{rc_name}\n\
         printf '%s\\n' '{retry}' > /var/lib/retry/{rc_name}\n\
         up 3128; up 3129\n\
         sleep 600 </dev/null >/dev/null 2>&1 & down=$!; pids=\"$pids $down\"\n\
         echo $down > /var/lib/mainpid\n\
         http_proxy=http://127.0.0.1:3128 HOME=/var/lib/none gate env\n\
         HOME=/var/lib/ok gate rc\n\
         serve TCP-LISTEN:10248,bind=127.0.0.1 EXEC:/var/lib/ok.sh; unit=$!\n\
         echo $unit > /var/lib/mainpid; up 10248\n\
         wget_noproxy=--spider hwget=--spider http_proxy=http://127.0.0.1:3129 HOME=/var/lib/fail gate healthy\n\
         pkill -P $unit || true; kill $unit 2>/dev/null || true\n\
         echo $down > /var/lib/mainpid\n\
         mount --bind /var/lib/noexec \"$t\"\n\
         start=$(date +%s)\n\
         HOME=/var/lib/retry gate untimed\n\
         echo $(( $(date +%s) - start )) > \"$scratch/took\"\n\
         serve TCP6-LISTEN:10248,bind=[::1] EXEC:/var/lib/ok.sh; unit=$!\n\
         echo $unit > /var/lib/mainpid; up 10248\n\
         HOME=/var/lib/retry gate v6\n"
    );
    in_namespaces(dir, &["--net"], &format!("{HEALTHZ_STANDINS}{steps}"));
    let took = seconds_taken(dir);
    let expect = [
        ("env", RecordKind::Unhealthy),
        ("rc", RecordKind::Unhealthy),
        ("healthy", RecordKind::Healthy),
        ("untimed", RecordKind::Unhealthy),
        ("v6", RecordKind::Healthy),
    ];
    for (case, kind) in expect {
        let file = dir.join(format!("{case}.out"));
        let got = kinds(&file, &b);
        let said = std::fs::read_to_string(&file).expect("output");
        assert!(
            got.contains(&(kind, "kubelet".to_string())),
            "{case}: {got:?}\n{said}"
        );
    }
    assert!(took < 20, "a kubelet that is down held the run {took}s");
}

/// wget2, Fedora's wget from 40 (its wget2-wget package links /usr/bin/wget to it) and
/// Debian's `wget2`, run for real as the node's wget. It has no `-Y`, and its
/// `--no-proxy` drops only the environment's proxy: a proxy root's `~/.wget2rc` names
/// (`http-proxy = ...`) was asked all the same (rockdaboot/wget2@wget2-1.99.1
/// src/options.c: the rc's `http-proxy` is set whatever `proxy` says), and its `ok` passed
/// a kubelet that was down; a failing one made a healthy kubelet unhealthy. wget2 also
/// retries a refused connection (20 tries): a kubelet that is down held each probe to
/// `timeout 3`, and the run for ever without it; with one try, wget2 1.99.1 exits 0 on a
/// refused connection, so the gate asks ::1 whenever 127.0.0.1 did not say `ok`.
#[test]
fn the_health_gate_asks_through_the_real_wget2_never_its_proxy() {
    let dir = scratch("node-scripts-healthz-wget2");
    let setup = "w=$(command -v wget2) || { echo 'wget2 is not installed (.ci/run installs it)' >&2; exit 1; }\n\
                 ln -s \"$w\" /usr/local/bin/wget\n\
                 wget --version | grep -q Wget2";
    gate_through_wget(&dir, "r45", setup, (".wget2rc", "http-proxy = PROXY"), "");
}

/// GNU wget 1.x as the node's wget, for real: `-Y off` wins over a `~/.wgetrc` whose
/// `use_proxy = on` and `http_proxy` name a proxy as over the environment's, and a wgetrc
/// that retries a refused connection (`retry_connrefused = on`, 20 tries by default) no
/// longer holds each probe of a kubelet that is down, for ever where there is no `timeout`.
#[test]
fn the_health_gate_asks_through_the_real_gnu_wget_never_its_proxy() {
    let dir = scratch("node-scripts-healthz-gnu-wget");
    let setup = "wget --version | grep -q 'GNU Wget 1' || { echo 'GNU wget is not installed (.ci/run installs it)' >&2; exit 1; }";
    let rc = "use_proxy = on\nhttp_proxy = PROXY\nretry_connrefused = on";
    gate_through_wget(
        &dir,
        "r46",
        setup,
        (".wgetrc", rc),
        "retry_connrefused = on",
    );
}

/// A restart that never returns (a Type=notify unit with TimeoutStartSec=0, as k3s's and
/// RKE2's are, that never says it is ready) is cut off at five times the handler's timeout:
/// the unit is reported unhealthy and the run ends, releasing the node's lock.
#[test]
fn a_restart_that_never_returns_is_cut_off() {
    let dir = scratch("node-scripts-hung-restart");
    let b = Boundary::fresh();
    let handler = restart("k3s");
    save_apply(&dir, &b, ("r9", "p9"), &[], &[handler]);
    let steps = "mount -t tmpfs tmpfs /usr/local/bin\n\
        printf '#!/bin/sh\\ncase $1 in restart) exec sleep 300 ;; is-active) echo activating ;; esac\\n' \
          > /usr/local/bin/systemctl\n\
        chmod 755 /usr/local/bin/systemctl\n\
        start=$(date +%s)\n\
        dash \"$scratch/r9.sh\" > \"$scratch/hung.out\" </dev/null\n\
        echo $(( $(date +%s) - start )) > \"$scratch/took\"\n";
    in_temporary_root(&dir, steps);
    let took = seconds_taken(&dir);
    assert!(
        took < 60,
        "the run waited {took}s for a restart that never returns"
    );
    let said = std::fs::read_to_string(dir.join("hung.out")).expect("output");
    assert!(
        said.contains("systemctl restart k3s did not return within 25s"),
        "{said}"
    );
    assert!(
        kinds(&dir.join("hung.out"), &b).contains(&(RecordKind::Unhealthy, "k3s".to_string())),
        "{said}"
    );
}

/// A rollback whose unit did not come back (or that was cut off after restoring) leaves
/// its restart due: the next rollback of the run finds the file already restored and still
/// restarts the unit, where it restarted nothing and called the run rolled back.
#[test]
fn a_rollback_whose_restart_failed_restarts_again_when_run_again() {
    let dir = scratch("node-scripts-rollback-restart-due");
    let b = Boundary::fresh();
    save_apply(&dir, &b, ("r1", "p1"), &[write(None, "new\n")], &[]);
    let unit = "systemd-resolved";
    let script = rollback_script(&b, "r1", &[restart(unit)], 1).expect("rollback script");
    std::fs::write(dir.join("rollback.sh"), script).expect("write");
    let steps = "mount -t tmpfs tmpfs /usr/local/bin\n\
        printf '#!/bin/sh\\ncase $1 in is-active) cat /var/lib/active ;; esac\\n' \
          > /usr/local/bin/systemctl\n\
        chmod 755 /usr/local/bin/systemctl\n\
        dash \"$scratch/r1.sh\" > \"$scratch/apply.out\" </dev/null\n\
        echo failed > /var/lib/active\n\
        dash \"$scratch/rollback.sh\" > \"$scratch/unhealthy.out\" </dev/null\n\
        echo active > /var/lib/active\n\
        dash \"$scratch/rollback.sh\" > \"$scratch/again.out\" </dev/null\n\
        dash \"$scratch/rollback.sh\" > \"$scratch/third.out\" </dev/null\n";
    in_temporary_root(&dir, steps);
    let unhealthy = kinds(&dir.join("unhealthy.out"), &b);
    assert!(
        unhealthy.contains(&(RecordKind::Removed, TARGET.to_string()))
            && unhealthy.contains(&(RecordKind::Unhealthy, unit.to_string())),
        "{unhealthy:?}"
    );
    let again = kinds(&dir.join("again.out"), &b);
    assert!(
        again.contains(&(RecordKind::Already, TARGET.to_string()))
            && again.contains(&(RecordKind::Healthy, unit.to_string()))
            && again.contains(&(RecordKind::Done, "r1".to_string())),
        "{again:?}"
    );
    // Rolled back now: once.
    let third = kinds(&dir.join("third.out"), &b);
    assert!(
        third.iter().any(|(k, _)| *k == RecordKind::Nothing),
        "{third:?}"
    );
}

/// Before its first write, an apply marks its kubelet unit to be restarted (the run, the
/// boot, the uptime); a restart that fails leaves the mark, one that returns removes it. A
/// run whose first change fails takes its mark back; a resolver unit is never marked.
#[test]
fn an_apply_marks_its_restart_due_until_the_unit_restarts() {
    let dir = scratch("node-scripts-restart-due");
    let b = Boundary::fresh();
    let unit = "kubelet";
    let write_new = [write(None, "new\n")];
    save_apply(&dir, &b, ("r1", "p1"), &write_new, &[restart(unit)]);
    save_apply(&dir, &b, ("r2", "p2"), &write_new, &[restart(unit)]);
    let failing = Change::LoadModule {
        name: "dnsfix_no_such_module".into(),
        reasons: Vec::new(),
    };
    let both = [restart(unit), restart("systemd-resolved")];
    save_apply(&dir, &b, ("r3", "p3"), &[failing], &both);
    let mark = format!("/var/lib/dnsfix/restart-due/{unit}/r1");
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mount -t tmpfs tmpfs /usr/local/bin\n\
             printf '#!/bin/sh\\ncase $1 in restart) exit 1 ;; is-active) echo active ;; esac\\n' \
               > /usr/local/bin/systemctl\n\
             chmod 755 /usr/local/bin/systemctl\n\
             dash \"$scratch/r1.sh\" > \"$scratch/failed.out\" </dev/null\n\
             cat {mark}; cat /proc/sys/kernel/random/boot_id\n\
             printf '#!/bin/sh\\ncase $1 in is-active) echo active ;; esac\\n' \
               > /usr/local/bin/systemctl\n\
             rm -rf /var/lib/dnsfix/handled\n\
             dash \"$scratch/r2.sh\" > \"$scratch/again.out\" </dev/null\n\
             [ -e {mark} ] && echo still marked || echo cleared\n\
             dash \"$scratch/r3.sh\" > \"$scratch/failed-change.out\" </dev/null\n\
             ls -A /var/lib/dnsfix/restart-due | wc -l\n"
        ),
    );
    let lines: Vec<&str> = shown.lines().collect();
    let words: Vec<&str> = lines[0].split(' ').collect();
    assert_eq!(words.len(), 3, "{shown}");
    assert_eq!((words[0], words[1]), ("r1", lines[1]), "{shown}");
    assert!(words[2].parse::<f64>().is_ok(), "{shown}");
    assert!(
        kinds(&dir.join("failed.out"), &b).contains(&(RecordKind::Unhealthy, unit.to_string()))
    );
    // The restart returns, and the mark goes (the kubelet's health is not served here).
    let again = kinds(&dir.join("again.out"), &b);
    assert!(
        again.contains(&(RecordKind::Already, TARGET.to_string())),
        "{again:?}"
    );
    assert_eq!(lines[2], "cleared", "{shown}");
    let failed = kinds(&dir.join("failed-change.out"), &b);
    assert!(
        failed.contains(&(RecordKind::Error, "dnsfix_no_such_module".to_string())),
        "{failed:?}"
    );
    assert_eq!(lines[3], "0", "a mark stayed: {shown}");
}

/// A rollback that leaves an entry changed since the run still rolls the run back once: a
/// later rollback says that entry again (the run's change is still in it) and restores
/// nothing, not even a file a later run wrote the same change to again.
#[test]
fn a_rollback_that_kept_an_entry_is_still_done_once() {
    let dir = scratch("node-scripts-rollback-kept-once");
    let b = Boundary::fresh();
    let other = "/var/lib/node/etc/other.conf";
    let both = [write(None, "new\n"), write_at(other, None, "n\n")];
    save_apply(&dir, &b, ("r1", "p1"), &both, &[]);
    save_apply(&dir, &b, ("r2", "p2"), &[write(None, "new\n")], &[]);
    save_rollback(&dir, &b, "r1");
    let shown = in_temporary_root(
        &dir,
        &format!(
            "dash \"$scratch/r1.sh\" > \"$scratch/apply.out\" </dev/null\n\
             printf 'theirs\\n' > {other}\n\
             dash \"$scratch/rollback.sh\" > \"$scratch/first.out\" </dev/null\n\
             dash \"$scratch/r2.sh\" > \"$scratch/r2.out\" </dev/null\n\
             dash \"$scratch/rollback.sh\" > \"$scratch/second.out\" </dev/null\n\
             cat {TARGET} {other}\n"
        ),
    );
    let first = kinds(&dir.join("first.out"), &b);
    assert!(
        first.contains(&(RecordKind::Kept, other.to_string()))
            && first.contains(&(RecordKind::Removed, TARGET.to_string())),
        "{first:?}"
    );
    let second = kinds(&dir.join("second.out"), &b);
    assert!(
        second.contains(&(RecordKind::Kept, other.to_string()))
            && !second.iter().any(|(k, _)| *k == RecordKind::Removed),
        "{second:?}"
    );
    assert_eq!(shown, "new\ntheirs\n", "r2's file and their edit stay");
}

/// A restart mark that cannot be written stops every later restore of the rollback too: it
/// restored the next entry unmarked, and its kubelet was never restarted nor reported.
#[test]
fn a_rollback_whose_restart_mark_fails_restores_nothing_more() {
    let dir = scratch("node-scripts-rollback-mark-fails");
    let b = Boundary::fresh();
    let other = "/var/lib/node/etc/other.conf";
    let both = [write(None, "new\n"), write_at(other, None, "n\n")];
    save_apply(&dir, &b, ("r1", "p1"), &both, &[]);
    let script = rollback_script(&b, "r1", &[restart("kubelet")], 1).expect("rollback script");
    std::fs::write(dir.join("rollback.sh"), script).expect("write");
    let shown = in_temporary_root(
        &dir,
        &format!(
            "dash \"$scratch/r1.sh\" > \"$scratch/apply.out\" </dev/null\n\
             : > /var/lib/dnsfix/restart-due\n\
             dash \"$scratch/rollback.sh\" > \"$scratch/rollback.out\" </dev/null\n\
             cat {TARGET} {other}\n"
        ),
    );
    let got = kinds(&dir.join("rollback.out"), &b);
    assert!(
        !got.iter().any(|(k, _)| *k == RecordKind::Removed)
            && got.contains(&(
                RecordKind::Error,
                "/var/lib/dnsfix/restart-due/kubelet".into()
            )),
        "{got:?}"
    );
    assert_eq!(shown, "new\nn\n", "both files stay as the run wrote them");
}

/// An immutable file (`chattr +i`, a common guard on /etc/resolv.conf) refuses the rename
/// only at its own write: found before any write, the host gets none, where the file
/// before it used to be written and its handlers left undone.
#[test]
fn an_immutable_target_stops_the_host_before_any_write() {
    let dir = scratch("node-scripts-immutable");
    let b = Boundary::fresh();
    let other = "/var/lib/node/etc/other.conf";
    save_apply(
        &dir,
        &b,
        ("r1", "p1"),
        &[
            write_at(other, None, "first\n"),
            write(Some("old\n"), "new\n"),
        ],
        &[],
    );
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p {TARGET_DIR}\nprintf 'old\\n' > {TARGET}\nchattr +i {TARGET}\n\
             dash \"$scratch/r1.sh\" > \"$scratch/apply.out\" </dev/null\n\
             chattr -i {TARGET}\ncat {TARGET}; [ -e {other} ] && echo written || echo none\n"
        ),
    );
    assert_eq!(shown, "old\nnone\n");
    let got = kinds(&dir.join("apply.out"), &b);
    assert!(
        got.contains(&(RecordKind::Error, TARGET.to_string()))
            && got.contains(&(RecordKind::Skipped, other.to_string())),
        "{got:?}"
    );
    let said = std::fs::read_to_string(dir.join("apply.out")).expect("output");
    assert!(said.contains("immutable or append-only"), "{said}");
}

/// A kubelet whose healthz answers on ::1 only (k3s and RKE2 bind it there on a node
/// whose IP is IPv6) is healthy too.
#[test]
fn a_kubelet_answering_on_ipv6_loopback_only_is_healthy() {
    let dir = scratch("node-scripts-healthz-v6");
    let b = Boundary::fresh();
    let handler = restart("k3s");
    save_apply(&dir, &b, ("r10", "p10"), &[], &[handler]);
    let steps = "\
        sh -c \"socat TCP6-LISTEN:10248,bind=[::1],reuseaddr,fork EXEC:/var/lib/ok.sh & wait\" & unit=$!\n\
        echo $unit > /var/lib/mainpid\n\
        i=0; until ss -Hltn 'sport = :10248' | grep -q . || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done\n\
        dash \"$scratch/r10.sh\" > \"$scratch/v6.out\" </dev/null\n\
        pkill -P $unit || true; kill $unit 2>/dev/null || true\n";
    in_namespaces(&dir, &["--net"], &format!("{HEALTHZ_STANDINS}{steps}"));
    let out = kinds(&dir.join("v6.out"), &b);
    assert!(
        out.contains(&(RecordKind::Healthy, "k3s".to_string())),
        "{out:?}\n{}",
        std::fs::read_to_string(dir.join("v6.out")).unwrap_or_default()
    );
}

/// common.sh's own helpers, run with dash: `create` refuses a name that holds a regular
/// file, a symlink to one or a dangling symlink (what it writes goes nowhere else), and
/// `tmp_beside` never names the same file twice.
#[test]
fn temp_files_are_made_new_under_names_no_one_can_guess() {
    let dir = scratch("node-scripts-create");
    let common = include_str!("../../src/apply/common.sh").replace("@BOUNDARY@", "b");
    std::fs::write(dir.join("common.sh"), common).expect("write");
    let shown = in_temporary_root(
        &dir,
        ". \"$scratch/common.sh\"\n\
         set +e\n\
         d=/var/lib/node; mkdir -p $d\n\
         printf 'SECRET\\n' > $d/victim\n\
         printf 'mine\\n' > $d/regular\n\
         ln -s $d/victim $d/link\n\
         ln -s $d/nowhere $d/dangling\n\
         for n in regular link dangling; do\n\
           if create $d/$n 644 echo written; then echo \"$n: written\"; else echo \"$n: refused\"; fi\n\
         done\n\
         cat $d/victim $d/regular; [ -e $d/nowhere ] && echo created || echo nothing\n\
         a=$(tmp_beside $d/x.conf r1); b=$(tmp_beside $d/x.conf r1)\n\
         [ \"$a\" != \"$b\" ] && echo distinct\n\
         case ${a#$d/.x.conf.dnsfix-r1-} in ????????????????) echo 16 ;; *) echo \"$a\" ;; esac\n\
         create $d/new 640 echo fresh && stat -c '%a %s' $d/new\n",
    );
    assert_eq!(
        shown,
        "regular: refused\nlink: refused\ndangling: refused\nSECRET\nmine\nnothing\n\
         distinct\n16\n640 6\n"
    );
}

/// A written file gets exactly the old one's mode and group, also in a setgid directory
/// (whose group new files take) and for a setuid file (whose bit a chown clears).
#[test]
fn a_written_file_keeps_its_mode_and_group_in_a_setgid_directory() {
    let dir = scratch("node-scripts-setgid");
    let b = Boundary::fresh();
    let other = "/var/lib/node/etc/other.conf";
    save_apply(
        &dir,
        &b,
        ("r9", "p9"),
        &[
            write(Some("old\n"), "new\n"),
            write_at(other, Some("old\n"), "new\n"),
        ],
        &[],
    );
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p /var/lib/node/etc\nchgrp 5678 /var/lib/node/etc && chmod 2755 /var/lib/node/etc\n\
             printf 'old\\n' > {TARGET}\nchown 0:0 {TARGET} && chmod 644 {TARGET}\n\
             printf 'old\\n' > {other}\nchown 1234:0 {other} && chmod 4755 {other}\n\
             dash \"$scratch/r9.sh\" > \"$scratch/apply.out\" </dev/null\n\
             stat -c '%a %u %g' {TARGET} {other}\ncat {TARGET} {other}\n"
        ),
    );
    assert_eq!(
        shown,
        "644 0 0\n4755 1234 0\nnew\nnew\n",
        "{:?}",
        kinds(&dir.join("apply.out"), &b)
    );
}

/// A parent directory swapped for a symlink after the script checked it (here: when it
/// asks /dev/urandom for the temp file's name, through an `od` stand-in first on its
/// PATH) cannot send the write elsewhere: the script works in the directory it checked,
/// which the swap moved aside, and the symlink's target gets nothing. The step says the
/// directory moved (stale): nothing new is at the target's path.
#[test]
fn a_parent_swapped_for_a_symlink_mid_write_sends_nothing_elsewhere() {
    let dir = scratch("node-scripts-swapped-parent");
    let b = Boundary::fresh();
    save_apply(
        &dir,
        &b,
        ("r11", "p11"),
        &[write(Some("old\n"), "new\n")],
        &[],
    );
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p {TARGET_DIR} /var/lib/protected\nprintf 'old\\n' > {TARGET}\n\
             mount -t tmpfs tmpfs /usr/local/bin\n\
             cat > /usr/local/bin/od <<'OD'\n\
             #!/bin/sh\n\
             if [ ! -e /var/lib/swapped ]; then\n\
               touch /var/lib/swapped\n\
               mv {TARGET_DIR} {TARGET_DIR}.moved && ln -s /var/lib/protected {TARGET_DIR}\n\
             fi\n\
             exec /usr/bin/od \"$@\"\n\
             OD\n\
             chmod 755 /usr/local/bin/od\n\
             dash \"$scratch/r11.sh\" > \"$scratch/swapped.out\" </dev/null\n\
             ls -A /var/lib/protected; echo --; cat {TARGET_DIR}.moved/dnsfix.conf\n"
        ),
    );
    assert_eq!(shown, "--\nnew\n", "nothing in the symlink's target");
    let got = kinds(&dir.join("swapped.out"), &b);
    assert!(
        got.contains(&(RecordKind::Stale, format!("{TARGET} moved"))),
        "{got:?}"
    );
    let said = std::fs::read_to_string(dir.join("swapped.out")).expect("output");
    assert!(
        said.contains("was moved to /var/lib/node/etc.moved"),
        "{said}"
    );
}

/// A run is rolled back once: rolled back, then applied again by a later run (the same
/// change), rolling the first back again undoes nothing (the later run's change is that
/// run's to roll back, which still can).
#[test]
fn a_run_rolled_back_once_is_not_rolled_back_over_a_later_run() {
    let dir = scratch("node-scripts-rollback-twice");
    let b = Boundary::fresh();
    let change = [write(Some("old\n"), "new\n")];
    save_apply(&dir, &b, ("r12", "p12"), &change, &[]);
    save_apply(&dir, &b, ("r13", "p13"), &change, &[]);
    for run in ["r12", "r13"] {
        let script = rollback_script(&b, run, &[], 5).expect("rollback script");
        std::fs::write(dir.join(format!("rollback-{run}.sh")), script).expect("write");
    }
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p {TARGET_DIR}\nprintf 'old\\n' > {TARGET}\n\
             dash \"$scratch/r12.sh\" > /dev/null </dev/null\n\
             dash \"$scratch/rollback-r12.sh\" > /dev/null </dev/null\n\
             dash \"$scratch/r13.sh\" > /dev/null </dev/null\n\
             dash \"$scratch/rollback-r12.sh\" > \"$scratch/again.out\" </dev/null\n\
             cat {TARGET}\n\
             dash \"$scratch/rollback-r13.sh\" > \"$scratch/r13-back.out\" </dev/null\n\
             cat {TARGET}\n"
        ),
    );
    assert_eq!(
        shown, "new\nold\n",
        "r13's change stays until r13 is rolled back"
    );
    let again = kinds(&dir.join("again.out"), &b);
    assert!(
        again.contains(&(RecordKind::Nothing, "r12".to_string())),
        "{again:?}"
    );
    let said = std::fs::read_to_string(dir.join("again.out")).expect("output");
    assert!(said.contains("run r12 was rolled back "), "{said}");
    let back = kinds(&dir.join("r13-back.out"), &b);
    assert!(
        back.contains(&(RecordKind::Restored, TARGET.to_string())),
        "{back:?}"
    );
}

/// Taking over an interrupted run's write copies its backup, checked as a backup is: on
/// a disk too full for the copy the step fails (nothing is adopted that this run could
/// not roll back), and no cut-off copy is left.
#[test]
fn an_adopted_backup_that_cannot_be_copied_fails_the_step() {
    let dir = scratch("node-scripts-adopt-full");
    let b = Boundary::fresh();
    let old = "x".repeat(100_000);
    let change = [write(Some(&old), "new\n")];
    save_apply(&dir, &b, ("r14", "p14"), &change, &[]);
    save_apply(&dir, &b, ("r15", "p15"), &change, &[]);
    let left = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p {TARGET_DIR}\nhead -c 100000 /dev/zero | tr '\\0' x > {TARGET}\n\
             mkdir -p /var/lib/dnsfix && mount -t tmpfs -o size=400k,mode=0700 tmpfs /var/lib/dnsfix\n\
             dash \"$scratch/r14.sh\" > /dev/null </dev/null\n\
             rm /var/lib/dnsfix/backups/r14/result\n\
             dd if=/dev/zero of=/var/lib/dnsfix/spacer bs=1k count=40 2>/dev/null\n\
             dd if=/dev/zero of=/var/lib/dnsfix/fill bs=1k count=400 2>/dev/null || true\n\
             rm /var/lib/dnsfix/spacer\n\
             dash \"$scratch/r15.sh\" > \"$scratch/r15.out\" </dev/null\n\
             ls -A /var/lib/dnsfix/backups/r15/files{TARGET_DIR} 2>/dev/null; true\n"
        ),
    );
    let got = kinds(&dir.join("r15.out"), &b);
    assert!(
        got.contains(&(RecordKind::Error, TARGET.to_string())),
        "{got:?}"
    );
    assert!(
        !got.iter().any(|(k, _)| *k == RecordKind::Adopted),
        "{got:?}"
    );
    let said = std::fs::read_to_string(dir.join("r15.out")).expect("output");
    assert!(
        said.contains("cannot copy the interrupted run r14's backup"),
        "{said}"
    );
    assert_eq!(left, "", "no cut-off copy left");
}

/// The health gate looks at every process ss names on the port: a listener whose name
/// is "pid=<the unit's main pid>" (ss prints names as they are, before the real pid) is
/// still not the unit's.
#[test]
fn a_listener_named_after_the_unit_s_pid_does_not_pass_the_health_gate() {
    let dir = scratch("node-scripts-healthz-named");
    let b = Boundary::fresh();
    save_apply(&dir, &b, ("r16", "p16"), &[], &[restart("kubelet")]);
    let steps = "\
        listen='TCP-LISTEN:10248,bind=127.0.0.1,reuseaddr,fork'\n\
        sleep 60 & sleeper=$!; echo $sleeper > /var/lib/mainpid\n\
        cp \"$(command -v socat)\" \"/var/lib/pid=$sleeper\"\n\
        setpriv --reuid=nobody --regid=nogroup --clear-groups \"/var/lib/pid=$sleeper\" $listen EXEC:/var/lib/ok.sh & impostor=$!\n\
        i=0; until ss -Hltn 'sport = :10248' | grep -q . || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done\n\
        ss -Hltnp 'sport = :10248' > \"$scratch/ss.out\"\n\
        dash \"$scratch/r16.sh\" > \"$scratch/named.out\" </dev/null\n\
        kill $impostor $sleeper 2>/dev/null; true\n";
    in_namespaces(&dir, &["--net"], &format!("{HEALTHZ_STANDINS}{steps}"));
    let ss = std::fs::read_to_string(dir.join("ss.out")).expect("ss");
    assert!(
        ss.contains("\"pid="),
        "the listener's name as ss prints it: {ss}"
    );
    let got = kinds(&dir.join("named.out"), &b);
    assert!(
        got.contains(&(RecordKind::Unhealthy, "kubelet".to_string())),
        "{got:?}\n{ss}"
    );
}

/// The unit's main process is asked of systemd as every systemd answers it: `systemctl
/// show --value` came in systemd v230, and CentOS 7 and Amazon Linux 2 (EKS's AL2 AMIs)
/// ship v219, whose systemctl refuses the option (lambci/yumda amazon-linux-2/build/
/// specs/amzn2/systemd.spec: Version 219). Before, that refusal read as "the unit's pid
/// is not known", which holds no listener against the unit: a user's process answering
/// ok on port 10248 passed for the kubelet's health there. Here a systemctl that
/// answers as v219's does, and a user's listener.
#[test]
fn the_unit_s_main_process_is_known_on_systemd_219_too() {
    let dir = scratch("node-scripts-healthz-219");
    let b = Boundary::fresh();
    save_apply(&dir, &b, ("r27", "p27"), &[], &[restart("kubelet")]);
    let steps = "\
        cat > /usr/local/bin/systemctl <<'S'\n\
        #!/bin/sh\n\
        for a; do case $a in --value) echo \"systemctl: unrecognized option '--value'\" >&2; exit 1 ;; esac; done\n\
        case $1 in is-active) echo active ;; show) echo \"MainPID=$(cat /var/lib/mainpid)\" ;; esac\n\
        S\n\
        sleep 60 & sleeper=$!; echo $sleeper > /var/lib/mainpid\n\
        setpriv --reuid=nobody --regid=nogroup --clear-groups socat TCP-LISTEN:10248,bind=127.0.0.1,reuseaddr,fork EXEC:/var/lib/ok.sh & impostor=$!\n\
        i=0; until ss -Hltn 'sport = :10248' | grep -q . || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done\n\
        dash \"$scratch/r27.sh\" > \"$scratch/219.out\" </dev/null\n\
        kill $impostor $sleeper 2>/dev/null; true\n";
    in_namespaces(&dir, &["--net"], &format!("{HEALTHZ_STANDINS}{steps}"));
    let got = kinds(&dir.join("219.out"), &b);
    assert!(
        got.contains(&(RecordKind::Unhealthy, "kubelet".to_string())),
        "a user's listener passed for the unit's health: {got:?}"
    );
    let said = std::fs::read_to_string(dir.join("219.out")).expect("output");
    assert!(
        said.contains("from a process that is not kubelet's"),
        "{said}"
    );
}

/// Without curl (whose --max-time bounds the whole answer), a healthz that trickles a
/// header line a second cannot hold the run: each probe is bounded as a whole, and the
/// gate gives up at its timeout, releasing the node's lock.
#[test]
fn a_trickling_healthz_cannot_hold_the_run_without_curl() {
    let dir = scratch("node-scripts-healthz-trickle");
    let b = Boundary::fresh();
    save_apply(&dir, &b, ("r17", "p17"), &[], &[restart("kubelet")]);
    let steps = "\
        touch /var/lib/noexec; chmod 644 /var/lib/noexec\n\
        for c in curl wget; do p=$(command -v $c) && mount --bind /var/lib/noexec \"$p\"; done; true\n\
        cat > /var/lib/trickle.sh <<'T'\n\
        #!/bin/sh\n\
        printf 'HTTP/1.0 200 OK\\r\\n'\n\
        while :; do printf 'X-Slow: 1\\r\\n'; sleep 1; done\n\
        T\n\
        chmod 755 /var/lib/trickle.sh\n\
        sh -c \"socat TCP-LISTEN:10248,bind=127.0.0.1,reuseaddr,fork EXEC:/var/lib/trickle.sh & wait\" & unit=$!\n\
        echo $unit > /var/lib/mainpid\n\
        i=0; until ss -Hltn 'sport = :10248' | grep -q . || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done\n\
        start=$(date +%s)\n\
        timeout 60 dash \"$scratch/r17.sh\" > \"$scratch/trickle.out\" </dev/null || true\n\
        echo $(( $(date +%s) - start )) > \"$scratch/took\"\n\
        pkill -P $unit || true; kill $unit 2>/dev/null || true\n";
    in_namespaces(&dir, &["--net"], &format!("{HEALTHZ_STANDINS}{steps}"));
    let took = seconds_taken(&dir);
    assert!(took < 30, "the run waited {took}s on a trickling healthz");
    let got = kinds(&dir.join("trickle.out"), &b);
    assert!(
        got.contains(&(RecordKind::Unhealthy, "kubelet".to_string())),
        "{got:?}"
    );
}

/// A file that changes between the script's first look and its backup copy (here: a `cp`
/// stand-in that rewrites it first) is stale, as the compare-and-swap would find: not a
/// full disk, and nothing is written.
#[test]
fn a_file_changed_while_it_is_backed_up_is_stale() {
    let dir = scratch("node-scripts-changed-at-backup");
    let b = Boundary::fresh();
    save_apply(
        &dir,
        &b,
        ("r18", "p18"),
        &[write(Some("old\n"), "new\n")],
        &[],
    );
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p {TARGET_DIR}\nprintf 'old\\n' > {TARGET}\n\
             mount -t tmpfs tmpfs /usr/local/bin\n\
             printf '#!/bin/sh\\nprintf \"theirs\\\\n\" > {TARGET}\\nexec /bin/cp \"$@\"\\n' > /usr/local/bin/cp\n\
             chmod 755 /usr/local/bin/cp\n\
             dash \"$scratch/r18.sh\" > \"$scratch/changed.out\" </dev/null\n\
             cat {TARGET}; ls -A /var/lib/dnsfix/backups/r18/files{TARGET_DIR} 2>/dev/null; true\n"
        ),
    );
    assert_eq!(shown, "theirs\n", "their change kept, no backup left");
    let got = kinds(&dir.join("changed.out"), &b);
    assert!(
        got.iter()
            .any(|(k, a)| *k == RecordKind::Stale && a.starts_with(TARGET)),
        "{got:?}"
    );
}

/// A rollback that keeps a file for a symlinked parent does not mark the run rolled back:
/// once the directory is real again, rolling it back again restores the file.
#[test]
fn a_rollback_kept_for_a_symlinked_parent_can_be_run_again() {
    let dir = scratch("node-scripts-rollback-retry");
    let b = Boundary::fresh();
    save_apply(
        &dir,
        &b,
        ("r19", "p19"),
        &[write(Some("old\n"), "new\n")],
        &[],
    );
    save_rollback(&dir, &b, "r19");
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p {TARGET_DIR}\nprintf 'old\\n' > {TARGET}\n\
             dash \"$scratch/r19.sh\" > /dev/null </dev/null\n\
             mv {TARGET_DIR} /var/lib/real && ln -s /var/lib/real {TARGET_DIR}\n\
             dash \"$scratch/rollback.sh\" > \"$scratch/kept.out\" </dev/null\n\
             rm {TARGET_DIR} && mv /var/lib/real {TARGET_DIR}\n\
             dash \"$scratch/rollback.sh\" > \"$scratch/again.out\" </dev/null\n\
             cat {TARGET}\n"
        ),
    );
    assert_eq!(shown, "old\n");
    let kept = kinds(&dir.join("kept.out"), &b);
    assert!(
        kept.contains(&(RecordKind::Kept, TARGET.to_string())),
        "{kept:?}"
    );
    let again = kinds(&dir.join("again.out"), &b);
    assert!(
        again.contains(&(RecordKind::Restored, TARGET.to_string())),
        "{again:?}"
    );
}

/// The target replaced by a symlink to a directory, or by a directory, between the
/// compare-and-swap and the rename (a `mv` stand-in that swaps it first): the rename is
/// over the name itself, never into the directory it leads to.
#[test]
fn a_target_swapped_for_a_directory_before_the_rename_takes_nothing_into_it() {
    let dir = scratch("node-scripts-swapped-target");
    let b = Boundary::fresh();
    save_apply(
        &dir,
        &b,
        ("r20", "p20"),
        &[write(Some("old\n"), "new\n")],
        &[],
    );
    save_rollback(&dir, &b, "r20");
    let name = TARGET.rsplit_once('/').expect("name").1;
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p {TARGET_DIR} /var/lib/protected\nprintf 'old\\n' > {TARGET}\n\
             mount -t tmpfs tmpfs /usr/local/bin\n\
             cat > /usr/local/bin/mv <<'MV'\n\
             #!/bin/sh\n\
             for last; do :; done\n\
             if [ \"$last\" = ./{name} ] && [ -e /var/lib/swap-to ]; then\n\
               rm -f ./{name}; $(cat /var/lib/swap-to)\n\
             fi\n\
             exec /bin/mv \"$@\"\n\
             MV\n\
             chmod 755 /usr/local/bin/mv\n\
             echo 'ln -s /var/lib/protected ./{name}' > /var/lib/swap-to\n\
             dash \"$scratch/r20.sh\" > \"$scratch/apply.out\" </dev/null\n\
             ls -A /var/lib/protected; echo --; [ ! -L {TARGET} ] || echo link; cat {TARGET} || :\n\
             rm -f {TARGET} && printf 'new\\n' > {TARGET}\n\
             echo 'mkdir ./{name}' > /var/lib/swap-to\n\
             dash \"$scratch/rollback.sh\" > \"$scratch/rollback.out\" </dev/null\n\
             ls -A {TARGET} || :; echo --; ls -A {TARGET_DIR}\n"
        ),
    );
    assert_eq!(
        shown,
        format!("--\nnew\n--\n{name}\n"),
        "apply: {:?}\nrollback: {:?}",
        kinds(&dir.join("apply.out"), &b),
        kinds(&dir.join("rollback.out"), &b)
    );
    let back = kinds(&dir.join("rollback.out"), &b);
    assert!(
        back.contains(&(RecordKind::Error, TARGET.to_string())),
        "{back:?}"
    );
}

/// /var/lib/dnsfix made beforehand by someone else (a symlink to their directory, a
/// directory of theirs, one anyone can write): nothing runs, the apply and the rollback
/// say why, and nothing of dnsfix's lands in it.
#[test]
fn a_state_directory_not_private_to_root_stops_the_host() {
    let dir = scratch("node-scripts-state-not-private");
    let b = Boundary::fresh();
    save_apply(
        &dir,
        &b,
        ("r21", "p21"),
        &[write(Some("old\n"), "new\n")],
        &[],
    );
    save_rollback(&dir, &b, "r21");
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p {TARGET_DIR} /var/lib/theirs\nprintf 'old\\n' > {TARGET}\n\
             chown 1000:1000 /var/lib/theirs && chmod 755 /var/lib/theirs\n\
             ln -s /var/lib/theirs /var/lib/dnsfix\n\
             dash \"$scratch/r21.sh\" > \"$scratch/linked.out\" </dev/null\n\
             rm /var/lib/dnsfix && mkdir /var/lib/dnsfix && chown 1000 /var/lib/dnsfix\n\
             dash \"$scratch/r21.sh\" > \"$scratch/owned.out\" </dev/null\n\
             mkdir -p /var/lib/dnsfix/backups/r21\n\
             printf 'file\\t{TARGET}\\told\\tnew\\t0644\\n' > /var/lib/dnsfix/backups/r21/manifest\n\
             chown 0 /var/lib/dnsfix && chmod 1777 /var/lib/dnsfix\n\
             dash \"$scratch/r21.sh\" > \"$scratch/open.out\" </dev/null\n\
             dash \"$scratch/rollback.sh\" > \"$scratch/rollback.out\" </dev/null\n\
             cat {TARGET}; ls -A /var/lib/theirs; echo --; ls -A /var/lib/dnsfix\n"
        ),
    );
    assert_eq!(shown, "old\n--\nbackups\n", "nothing written, nothing kept");
    for (out, why) in [
        ("linked.out", "/var/lib/dnsfix is a symlink: "),
        (
            "owned.out",
            "/var/lib/dnsfix is owned by uid 1000 with mode 755: ",
        ),
        (
            "open.out",
            "/var/lib/dnsfix is owned by uid 0 with mode 1777: ",
        ),
        (
            "rollback.out",
            "/var/lib/dnsfix is owned by uid 0 with mode 1777: ",
        ),
    ] {
        let got = kinds(&dir.join(out), &b);
        assert!(
            got.iter()
                .any(|(k, a)| *k == RecordKind::Fatal && a.starts_with(why)),
            "{out}: {got:?}"
        );
        assert!(
            !got.iter().any(|(k, _)| *k == RecordKind::Ok),
            "{out}: {got:?}"
        );
    }
}

/// A directory a user owns (/etc/dnsfix made beforehand by one), or one any user can write
/// without the sticky bit, gets nothing written in it: they could swap what dnsfix writes
/// for a file of their own afterwards. The host stops before any file is written.
#[test]
fn a_directory_a_user_can_write_stops_the_host_before_any_write() {
    let dir = scratch("node-scripts-user-directory");
    let b = Boundary::fresh();
    let first = "/var/lib/node/first.conf";
    save_apply(
        &dir,
        &b,
        ("r22", "p22"),
        &[write_at(first, None, "first\n"), write(None, "new\n")],
        &[],
    );
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p {TARGET_DIR}\nchown 1000:1000 {TARGET_DIR}\n\
             dash \"$scratch/r22.sh\" > \"$scratch/owned.out\" </dev/null\n\
             chown 0:0 {TARGET_DIR} && chmod 777 {TARGET_DIR}\n\
             dash \"$scratch/r22.sh\" > \"$scratch/open.out\" </dev/null\n\
             ls -A /var/lib/node {TARGET_DIR}\n\
             chmod 1777 {TARGET_DIR}\n\
             dash \"$scratch/r22.sh\" > \"$scratch/sticky.out\" </dev/null\n\
             cat {first} {TARGET}\n"
        ),
    );
    assert_eq!(
        shown, "/var/lib/node:\netc\n\n/var/lib/node/etc:\nfirst\nnew\n",
        "nothing written until the directory is root's"
    );
    for (out, why) in [
        (
            "owned.out",
            "/var/lib/node/etc is owned by uid 1000 with mode 755: ",
        ),
        (
            "open.out",
            "/var/lib/node/etc is owned by uid 0 with mode 777: ",
        ),
    ] {
        let got = kinds(&dir.join(out), &b);
        assert!(
            got.contains(&(RecordKind::Error, TARGET.to_string())),
            "{out}: {got:?}"
        );
        assert!(
            !got.iter().any(|(k, _)| *k == RecordKind::Ok),
            "{out}: {got:?}"
        );
        let said = std::fs::read_to_string(dir.join(out)).expect("output");
        assert!(said.contains(why), "{out}: {said}");
    }
    let sticky = kinds(&dir.join("sticky.out"), &b);
    assert!(
        sticky.contains(&(RecordKind::Ok, TARGET.to_string())),
        "{sticky:?}"
    );
}

/// A file that is there already, in a directory its installer gave a user (Kubespray's
/// /etc/kubernetes, its kube_owner's: kube in the sample inventory, mode 755), is written:
/// that owner could replace it as it is. A new file there is not, nor a write that needs a
/// chmod (which would follow a symlink its owner put in the temp file's place).
#[test]
fn an_existing_file_in_a_directory_its_installer_gave_a_user_is_written() {
    let dir = scratch("node-scripts-kube-owned-directory");
    let b = Boundary::fresh();
    let first = "/var/lib/node/etc/first.conf";
    save_apply(
        &dir,
        &b,
        ("r31", "p31"),
        &[write(Some("old\n"), "new\n")],
        &[],
    );
    save_apply(
        &dir,
        &b,
        ("r32", "p32"),
        &[write_at(first, None, "first\n")],
        &[],
    );
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p {TARGET_DIR}\nprintf 'old\\n' > {TARGET}\nchmod 644 {TARGET}\n\
             chown 998:998 {TARGET_DIR}\n\
             dash \"$scratch/r31.sh\" > \"$scratch/existing.out\" </dev/null\n\
             dash \"$scratch/r32.sh\" > \"$scratch/new.out\" </dev/null\n\
             cat {TARGET}; ls -A {TARGET_DIR}\n\
             printf 'old\\n' > {TARGET}; chmod 4755 {TARGET}\n\
             rm -rf /var/lib/dnsfix/handled /var/lib/dnsfix/done\n\
             dash \"$scratch/r31.sh\" > \"$scratch/chmod.out\" </dev/null\n\
             cat {TARGET}\n"
        ),
    );
    assert_eq!(
        shown, "new\ndnsfix.conf\nold\n",
        "the existing file alone is written"
    );
    let existing = kinds(&dir.join("existing.out"), &b);
    assert!(
        existing.contains(&(RecordKind::Ok, TARGET.to_string())),
        "{existing:?}"
    );
    let new = kinds(&dir.join("new.out"), &b);
    assert!(
        new.contains(&(RecordKind::Error, first.to_string())),
        "{new:?}"
    );
    let said = std::fs::read_to_string(dir.join("new.out")).expect("output");
    assert!(said.contains("is owned by uid 998 with mode 755"), "{said}");
    let chmod = std::fs::read_to_string(dir.join("chmod.out")).expect("output");
    assert!(
        chmod.contains("(owner uid 998, mode 755) is writable by others than root"),
        "{chmod}"
    );
}

/// The temp file swapped for a symlink to another file just before its mode or its
/// SELinux context is set (stand-ins first on the script's PATH that swap it, then do
/// what chmod does, or what chcon does: follow a symlink unless given -h): no other file
/// changes. chmod follows a symlink whatever it is told (before coreutils 9.5), so where
/// anyone but root can write the directory (its group, here) a mode only chmod can give
/// is refused, and chmod is never run.
#[test]
fn a_temp_file_swapped_for_a_symlink_never_passes_its_mode_or_label_on() {
    let dir = scratch("node-scripts-swapped-temp");
    let b = Boundary::fresh();
    save_apply(
        &dir,
        &b,
        ("r23", "p23"),
        &[write(Some("old\n"), "new\n")],
        &[],
    );
    let log = "/var/lib/chcon.log";
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p {TARGET_DIR}\nchgrp 5678 {TARGET_DIR} && chmod 775 {TARGET_DIR}\n\
             printf 'old\\n' > {TARGET} && chmod 755 {TARGET}\n\
             printf 'SECRET\\n' > /var/lib/victim && chmod 600 /var/lib/victim\n\
             mount -t tmpfs tmpfs /usr/local/bin\n\
             cat > /usr/local/bin/swap <<'SWAP'\n\
             #!/bin/sh\n\
             mv \"$1\" \"$1.moved\" && ln -s /var/lib/victim \"$1\"\n\
             SWAP\n\
             cat > /usr/local/bin/chmod <<'CHMOD'\n\
             #!/bin/sh\n\
             for last; do :; done\n\
             case $last in */.dnsfix.conf.dnsfix-*) swap \"$last\" ;; esac\n\
             exec /bin/chmod \"$@\"\n\
             CHMOD\n\
             cat > /usr/local/bin/chcon <<'CHCON'\n\
             #!/bin/sh\n\
             for last; do :; done\n\
             swap \"$last\"\n\
             case \" $* \" in *' -h '*) echo \"$last\" ;; *) readlink -f \"$last\" ;; esac >> {log}\n\
             CHCON\n\
             /bin/chmod 755 /usr/local/bin/swap /usr/local/bin/chmod /usr/local/bin/chcon\n\
             dash \"$scratch/r23.sh\" > \"$scratch/chmod.out\" </dev/null\n\
             stat -c %a /var/lib/victim; cat {TARGET}\n\
             /bin/chmod 755 {TARGET_DIR} && /bin/chmod 644 {TARGET}\n\
             mount -t tmpfs tmpfs /sys/fs && mkdir /sys/fs/selinux && echo 1 > /sys/fs/selinux/enforce\n\
             dash \"$scratch/r23.sh\" > \"$scratch/chcon.out\" </dev/null\n\
             cat {log}; cat {TARGET}\n"
        ),
    );
    let chcon = kinds(&dir.join("chcon.out"), &b);
    assert_eq!(
        shown.lines().take(2).collect::<Vec<_>>(),
        ["600", "old"],
        "{shown}"
    );
    let labelled: Vec<&str> = shown.lines().skip(2).collect();
    assert!(
        labelled.len() == 2
            && labelled[0].starts_with("./.dnsfix.conf.dnsfix-r23-")
            && labelled[1] == "old",
        "{shown}\n{chcon:?}"
    );
    let said = std::fs::read_to_string(dir.join("chmod.out")).expect("output");
    assert!(
        said.contains("is writable by others than root, and mode 755 needs a chmod"),
        "{said}"
    );
    assert!(
        chcon.contains(&(RecordKind::Error, TARGET.to_string())),
        "{chcon:?}"
    );
}

/// A file mounted over the target (as a container runtime bind-mounts /etc/resolv.conf)
/// cannot be renamed over (EBUSY): found with the checks before any write, the host
/// stops with nothing written, not with the files before it written and this one failed.
#[test]
fn a_mounted_over_target_stops_the_host_before_any_write() {
    let dir = scratch("node-scripts-mounted-target");
    let b = Boundary::fresh();
    let first = "/var/lib/node/first.conf";
    save_apply(
        &dir,
        &b,
        ("r24", "p24"),
        &[
            write_at(first, Some("old\n"), "new\n"),
            write(Some("old\n"), "new\n"),
        ],
        &[],
    );
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p {TARGET_DIR}\nprintf 'old\\n' > {first}\n\
             printf 'old\\n' > /var/lib/mounted && touch {TARGET}\n\
             mount --bind /var/lib/mounted {TARGET}\n\
             dash \"$scratch/r24.sh\" > \"$scratch/apply.out\" </dev/null\n\
             cat {first} {TARGET}\n"
        ),
    );
    let got = kinds(&dir.join("apply.out"), &b);
    assert_eq!(shown, "old\nold\n", "nothing written: {got:?}");
    assert!(
        got.contains(&(RecordKind::Error, TARGET.to_string())),
        "{got:?}"
    );
    let said = std::fs::read_to_string(dir.join("apply.out")).expect("output");
    assert!(
        said.contains(&format!("{TARGET} is a mount point")),
        "{said}"
    );
}

/// A file where the target's directory should be (`cp resolv.conf /etc/dnsfix` before
/// the directory was there): found with the checks before any write, not when the
/// directory cannot be made after the files before it were written.
#[test]
fn a_file_in_place_of_the_targets_directory_stops_the_host_before_any_write() {
    let dir = scratch("node-scripts-file-for-directory");
    let b = Boundary::fresh();
    let first = "/var/lib/node/first.conf";
    save_apply(
        &dir,
        &b,
        ("r25", "p25"),
        &[
            write_at(first, Some("old\n"), "new\n"),
            write(None, "new\n"),
        ],
        &[],
    );
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p /var/lib/node\nprintf 'old\\n' > {first}\nprintf 'a file\\n' > {TARGET_DIR}\n\
             dash \"$scratch/r25.sh\" > \"$scratch/apply.out\" </dev/null\n\
             cat {first} {TARGET_DIR}\n"
        ),
    );
    let got = kinds(&dir.join("apply.out"), &b);
    assert_eq!(shown, "old\na file\n", "nothing written: {got:?}");
    assert!(
        got.contains(&(RecordKind::Error, TARGET.to_string())),
        "{got:?}"
    );
    let said = std::fs::read_to_string(dir.join("apply.out")).expect("output");
    assert!(
        said.contains(&format!("{TARGET_DIR} is not a directory")),
        "{said}"
    );
}

/// A rollback checks what apply checks before it writes, as the node is now: since the
/// run, the target's directory was opened to all (a user who owns a directory above, as
/// Kubespray's kube_owner owns /etc/kubernetes, can swap it for one of their own, mode
/// 777), or a file was mounted over the target. Each keeps the file as the run left it
/// (whoever can write the directory could put a file of their own in place of what the
/// rollback restores, for root's daemons to read; the rename would fail on the mount
/// point), and leaves the run to roll back again once that is undone, which restores it.
/// A file the run created is not removed from such a directory either.
#[test]
fn a_rollback_checks_what_apply_checks_before_it_restores() {
    let dir = scratch("node-scripts-rollback-checks");
    let b = Boundary::fresh();
    let first = "/var/lib/node/etc/first.conf";
    save_apply(
        &dir,
        &b,
        ("r41", "p41"),
        &[
            write(Some("old\n"), "new\n"),
            write_at(first, None, "first\n"),
        ],
        &[],
    );
    save_rollback(&dir, &b, "r41");
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mkdir -p {TARGET_DIR}\nprintf 'old\\n' > {TARGET}\n\
             dash \"$scratch/r41.sh\" > \"$scratch/apply.out\" </dev/null\n\
             chmod 777 {TARGET_DIR}\n\
             dash \"$scratch/rollback.sh\" > \"$scratch/open.out\" </dev/null\n\
             cat {TARGET}; cat {first} 2>/dev/null || echo 'no first.conf'\n\
             chmod 755 {TARGET_DIR}\n\
             printf 'new\\n' > /var/lib/mounted && mount --bind /var/lib/mounted {TARGET}\n\
             dash \"$scratch/rollback.sh\" > \"$scratch/mounted.out\" </dev/null\n\
             umount {TARGET}\ncat {TARGET}\n\
             dash \"$scratch/rollback.sh\" > \"$scratch/again.out\" </dev/null\n\
             cat {TARGET}; ls -A {TARGET_DIR}\n"
        ),
    );
    let apply = kinds(&dir.join("apply.out"), &b);
    assert!(
        apply.contains(&(RecordKind::Ok, TARGET.to_string())),
        "{apply:?}"
    );
    assert_eq!(
        shown, "new\nfirst\nnew\nold\ndnsfix.conf\n",
        "restored and removed only once the directory is root's and nothing is mounted"
    );
    for (out, kept, why) in [
        (
            "open.out",
            vec![TARGET, first],
            "/var/lib/node/etc is owned by uid 0 with mode 777: ",
        ),
        ("mounted.out", vec![TARGET], "is a mount point"),
    ] {
        let got = kinds(&dir.join(out), &b);
        for path in kept {
            assert!(
                got.contains(&(RecordKind::Kept, path.to_string())),
                "{out}: {path}: {got:?}"
            );
        }
        assert!(
            !got.iter().any(|(k, p)| *k == RecordKind::Restored
                || (*k == RecordKind::Removed && out == "open.out" && p == first)),
            "{out}: {got:?}"
        );
        let said = std::fs::read_to_string(dir.join(out)).expect("output");
        assert!(said.contains(why), "{out}: {said}");
    }
    let again = kinds(&dir.join("again.out"), &b);
    assert!(
        again.contains(&(RecordKind::Restored, TARGET.to_string())),
        "{again:?}"
    );
}

/// The target swapped, between the checks and its backup copy, for a FIFO (whose open
/// would block the run, and the node's lock, for good) or for a symlink to /dev/zero
/// (which a plain cp follows and reads until /var is full): the directory's owner can do
/// either (Kubespray's kube_owner, /etc/kubernetes). A stand-in cp first on the script's
/// PATH swaps the file, then runs the real one. The copy refuses anything that is not a
/// regular file at the moment of copying: the run ends at once, `stale`, nothing written,
/// no backup kept; /var/lib is a 4 MiB tmpfs here, so a copy of /dev/zero fills it in
/// an instant instead of the machine's memory. Run with dash and busybox sh, whose cp
/// the stand-in then runs.
#[test]
fn a_target_swapped_for_a_fifo_or_dev_zero_before_its_backup_is_never_read() {
    let dir = scratch("node-scripts-swapped-before-backup");
    let b = Boundary::fresh();
    save_apply(
        &dir,
        &b,
        ("r43", "p43"),
        &[write(Some("old\n"), "new\n")],
        &[],
    );
    let name = TARGET.rsplit('/').next().expect("a name");
    let mut steps = format!(
        "mount -o remount,size=4m /var/lib\nmkdir -p {TARGET_DIR}\n\
         mount -t tmpfs tmpfs /usr/local/bin\n\
         cat > /usr/local/bin/cp <<'CP'\n\
         #!/bin/sh\n\
         for a; do\n\
           if [ \"$a\" = ./{name} ]; then\n\
             mv ./{name} ./{name}.moved\n\
             case $(cat /var/lib/swap) in fifo) mkfifo ./{name} ;; *) ln -s /dev/zero ./{name} ;; esac\n\
           fi\n\
         done\n\
         exec $(cat /var/lib/cp) \"$@\"\n\
         CP\n\
         chmod 755 /usr/local/bin/cp\n"
    );
    for (shell, cp) in [("dash", "/bin/cp"), ("busybox sh", "busybox cp")] {
        for swap in ["fifo", "zero"] {
            let out = format!("{}-{swap}.out", shell.replace(' ', "-"));
            steps.push_str(&format!(
                "rm -rf {TARGET_DIR}/* /var/lib/dnsfix\nprintf 'old\\n' > {TARGET}\n\
                 echo {swap} > /var/lib/swap; echo '{cp}' > /var/lib/cp\n\
                 timeout 10 {shell} \"$scratch/r43.sh\" > \"$scratch/{out}\" </dev/null || echo \"exit $?\" > \"$scratch/{out}.rc\"\n\
                 cat {TARGET_DIR}/{name}.moved; ls -A {TARGET_DIR} | tr '\\n' ' '\n\
                 find /var/lib/dnsfix/backups/r43/files ! -type d | tr '\\n' ' '; echo\n"
            ));
        }
    }
    let shown = in_temporary_root(&dir, &steps);
    for (i, out) in [
        "dash-fifo",
        "dash-zero",
        "busybox-sh-fifo",
        "busybox-sh-zero",
    ]
    .iter()
    .enumerate()
    {
        let rc = std::fs::read_to_string(dir.join(format!("{out}.out.rc")));
        assert!(
            rc.is_err(),
            "{out}: the script ended with {rc:?} (10 s: cut off)"
        );
        let got = kinds(&dir.join(format!("{out}.out")), &b);
        let current = if out.ends_with("fifo") {
            "not-a-regular-file"
        } else {
            "symlink"
        };
        assert!(
            got.contains(&(RecordKind::Stale, format!("{TARGET} {current}"))),
            "{out}: {got:?}\n{shown}"
        );
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(
            lines.get(2 * i),
            Some(&"old"),
            "{out}: the file moved aside\n{shown}"
        );
        assert_eq!(
            lines.get(2 * i + 1).map(|l| l.trim_end()),
            Some(format!("{name} {name}.moved").as_str()),
            "{out}: no temp file left, no backup kept\n{shown}"
        );
    }
}

/// A directory swapped in for the target before its backup copy (whoever can write the
/// target's directory can) is stale at once: `cp -R` would copy the whole tree into
/// /var/lib/dnsfix as root.
#[test]
fn a_target_swapped_for_a_directory_before_its_backup_is_never_copied() {
    let dir = scratch("node-scripts-directory-before-backup");
    let b = Boundary::fresh();
    save_apply(
        &dir,
        &b,
        ("r44", "p44"),
        &[write(Some("old\n"), "new\n")],
        &[],
    );
    let name = TARGET.rsplit('/').next().expect("a name");
    // sha256sum of the new temp file (the step just before the copy) swaps the target
    // for a directory; cp logs what it is asked to copy.
    let mut steps = format!(
        "mkdir -p {TARGET_DIR}\nmount -t tmpfs tmpfs /usr/local/bin\n\
         cat > /usr/local/bin/sha256sum <<'SHA'\n\
         #!/bin/sh\n\
         case $1 in\n\
           ./.*) if [ -f ./{name} ]; then mv ./{name} ./{name}.moved; mkdir ./{name}; echo tree > ./{name}/leaf; fi ;;\n\
         esac\n\
         exec /usr/bin/sha256sum \"$@\"\n\
         SHA\n\
         cat > /usr/local/bin/cp <<'CP'\n\
         #!/bin/sh\n\
         echo \"cp $*\" >> /var/lib/cp.log\n\
         exec $(cat /var/lib/cp) \"$@\"\n\
         CP\n\
         chmod 755 /usr/local/bin/sha256sum /usr/local/bin/cp\n"
    );
    for (shell, cp) in [("dash", "/bin/cp"), ("busybox sh", "busybox cp")] {
        let out = shell.replace(' ', "-");
        steps.push_str(&format!(
            "rm -rf {TARGET_DIR}/* /var/lib/dnsfix /var/lib/cp.log\nprintf 'old\\n' > {TARGET}\n\
             echo '{cp}' > /var/lib/cp\n\
             timeout 10 {shell} \"$scratch/r44.sh\" > \"$scratch/{out}.out\" </dev/null || true\n\
             cat /var/lib/cp.log 2>/dev/null | grep -c '{name}' || true\n"
        ));
    }
    let shown = in_temporary_root(&dir, &steps);
    let copies: Vec<&str> = shown.lines().collect();
    for (i, out) in ["dash", "busybox-sh"].iter().enumerate() {
        let got = kinds(&dir.join(format!("{out}.out")), &b);
        assert!(
            got.contains(&(RecordKind::Stale, format!("{TARGET} not-a-regular-file"))),
            "{out}: {got:?}\n{shown}"
        );
        assert_eq!(
            copies.get(i),
            Some(&"0"),
            "{out}: cp was run on it\n{shown}"
        );
    }
}

/// A plan that recreates the node's DNS pods: its run notes them pending (its run id)
/// before the handlers, so a run that dies after its restart leaves the note for the next
/// (`pods_left` in src/apply/mod.rs). Where the note cannot be written (its directory is
/// a file), nothing is written or restarted and the run fails; once it can, the unit restarts with
/// the note in place; the same plan again restarts nothing and leaves the note as the run
/// that restarted wrote it.
#[test]
fn the_pods_are_noted_pending_before_the_restart() {
    let dir = scratch("node-scripts-pods-pending");
    let b = Boundary::fresh();
    let note = "/var/lib/dnsfix/pods-pending/p1";
    let unit = "systemd-resolved";
    let change = [write(None, "new\n")];
    for run in ["r1", "r2", "r3"] {
        save_apply_noting(&dir, &b, (run, "p1"), &change, &[restart(unit)], Some(note));
    }
    let shown = in_temporary_root(
        &dir,
        &format!(
            "mount -t tmpfs tmpfs /usr/local/bin\n\
             printf '#!/bin/sh\\ncase $1 in restart) echo \"restart $(cat {note} 2>/dev/null)\" >> /var/lib/restarts ;; is-active) echo active ;; esac\\n' \
               > /usr/local/bin/systemctl\n\
             chmod 755 /usr/local/bin/systemctl\n\
             mkdir -p /var/lib/dnsfix && : > /var/lib/dnsfix/pods-pending\n\
             dash \"$scratch/r1.sh\" > \"$scratch/r1.out\" </dev/null\n\
             echo \"restarts: $(cat /var/lib/restarts 2>/dev/null)\"\n\
             [ -e {TARGET} ] && echo written || echo not written\n\
             rm /var/lib/dnsfix/pods-pending\n\
             dash \"$scratch/r2.sh\" > \"$scratch/r2.out\" </dev/null\n\
             dash \"$scratch/r3.sh\" > \"$scratch/r3.out\" </dev/null\n\
             cat /var/lib/restarts {note}\n"
        ),
    );
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(
        lines,
        ["restarts: ", "not written", "restart r2", "r2"],
        "{shown}"
    );
    let failed = kinds(&dir.join("r1.out"), &b);
    assert!(
        failed.contains(&(RecordKind::Error, note.to_string()))
            && failed.contains(&(RecordKind::Skipped, unit.to_string()))
            && failed.contains(&(RecordKind::Skipped, TARGET.to_string()))
            && failed.contains(&(RecordKind::Failed, "r1".to_string())),
        "{failed:?}"
    );
    let applied = kinds(&dir.join("r2.out"), &b);
    assert!(
        applied.contains(&(RecordKind::Healthy, unit.to_string())),
        "{applied:?}"
    );
    let again = kinds(&dir.join("r3.out"), &b);
    assert!(
        again.iter().any(|(k, _)| *k == RecordKind::Handled),
        "{again:?}"
    );
}

/// The plan is marked done only while its handled note is there: applied, it is; rolled
/// back in between (the rollback removes the note under the node's lock, as one started
/// while another run recreated the pods would), nothing is written and the script says so
/// by its exit. And it waits for the node's lock, not past its bound.
#[test]
fn a_plan_rolled_back_meanwhile_is_not_marked_done() {
    use dnsfix::apply::script::{ROLLED_BACK_EXIT, plan_done_script};
    let dir = scratch("node-scripts-done-after-rollback");
    let b = Boundary::fresh();
    save_apply(
        &dir,
        &b,
        ("r1", "p1"),
        &[write(None, "nameserver 10.0.0.1\n")],
        &[],
    );
    save_rollback(&dir, &b, "r1");
    let done = "/var/lib/dnsfix/done/p1";
    let mark = plan_done_script("r1", done, "/var/lib/dnsfix/handled/p1", 1).expect("script");
    std::fs::write(dir.join("done.sh"), mark).expect("write");
    // A flock with busybox's options alone (busybox util-linux/flock.c: getopt "^+sxnu";
    // Alpine's busybox has it): the mark must not need another.
    let busybox = dir.join("busybox");
    std::fs::create_dir_all(&busybox).expect("dir");
    std::fs::write(
        busybox.join("flock"),
        "#!/bin/sh\nfor a; do case $a in -[sxnu]) ;; -*) echo \"flock: invalid option $a\" >&2; exit 1 ;; esac; done\nexec /usr/bin/flock \"$@\"\n",
    )
    .expect("write");
    std::fs::set_permissions(
        busybox.join("flock"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");
    let shown = in_temporary_root(
        &dir,
        &format!(
            "dash \"$scratch/r1.sh\" >/dev/null </dev/null\n\
             flock /var/lib/dnsfix/lock sh -c 'touch /var/lib/locked; sleep 3' &\n\
             until [ -e /var/lib/locked ]; do sleep 0.1; done\n\
             dash \"$scratch/done.sh\" 2>\"$scratch/held.err\" && echo held:0 || echo held:$?\n\
             wait\n\
             PATH=\"$scratch/busybox:$PATH\" dash \"$scratch/done.sh\" && echo applied:$(cat {done})\n\
             rm -f {done}\n\
             dash \"$scratch/rollback.sh\" >/dev/null </dev/null\n\
             dash \"$scratch/done.sh\" && echo rolled-back:0 || echo rolled-back:$?\n\
             [ -e {done} ] && echo marked || echo not-marked\n"
        ),
    );
    assert_eq!(
        shown.lines().collect::<Vec<_>>(),
        [
            "held:3",
            "applied:r1",
            &format!("rolled-back:{ROLLED_BACK_EXIT}"),
            "not-marked"
        ],
        "{shown}"
    );
    let held = std::fs::read_to_string(dir.join("held.err")).expect("stderr");
    assert!(
        held.contains("cannot lock /var/lib/dnsfix/lock in 1s (its owner: "),
        "{held}"
    );
}
