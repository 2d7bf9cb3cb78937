//! Restarts a run left due: owns [`PendingRestart`], read from the marks the apply and
//! rollback scripts write before their first change
//! (`/var/lib/dnsfix/restart-due/UNIT/NAME`: the run, the boot id and the seconds since boot
//! then; NAME is the run, or `rollback-RUN`) and remove once they restarted the unit. A mark
//! left behind is a run cut off between its changes and its handlers: the files hold the new
//! settings, and the running kubelet was started before them, so it still runs on the old
//! ones until it restarts. Only kubelet units are marked. Never decides what to do about it
//! (that is the rules').

use serde::Serialize;

use super::raw::{FileState, RawFacts};

/// Where the scripts leave their marks: a directory per unit, a file per run.
pub const DIR: &str = "/var/lib/dnsfix/restart-due";

/// The kernel's clock ticks per second in `/proc/PID/stat` (USER_HZ, 100 on every Linux
/// architecture a node runs: the value is part of the user-space ABI).
const USER_HZ: f64 = 100.0;

/// One kubelet unit a run changed files for and did not restart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PendingRestart {
    pub unit: String,
    /// The run that left it (its id, for `dnsfix rollback` and the run record).
    pub run: String,
    /// Left by a rollback of that run, not by the apply.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rollback: bool,
    /// Whether the kubelet still runs on the settings from before that run: it started
    /// before the mark, and the node has not rebooted since. Not where no kubelet runs: one
    /// stopped since (an operator's `systemctl stop`, say) reads the run's files when it
    /// starts, and starting it is nobody's to decide but its operator's. `None` where that
    /// cannot be told (the mark or the process start unreadable).
    pub due: Option<bool>,
    /// Whether a kubelet process runs at all.
    pub running: bool,
    /// The mark's path, as evidence.
    pub path: String,
}

/// The marks under [`DIR`], judged against the running kubelet process `pid` (the process
/// that runs the kubelet: kubelet, k3s or kubelite) and this boot.
pub fn pending_restarts(
    raw: &RawFacts,
    boot_id: Option<&str>,
    pid: Option<u32>,
) -> Vec<PendingRestart> {
    let started = pid.and_then(|pid| {
        let stat = raw.get(&format!("/proc/{pid}/stat"))?.text()?;
        process_start(&stat)
    });
    let prefix = format!("{DIR}/");
    raw.files
        .iter()
        .filter(|(_, file)| file.state == FileState::Present)
        .filter_map(|(path, file)| {
            let (unit, name) = path.strip_prefix(&prefix)?.split_once('/')?;
            if name.contains('/') {
                return None;
            }
            let text = file.text()?;
            let mut words = text.split_whitespace();
            let run = words.next()?.to_owned();
            let boot = words.next();
            let marked: Option<f64> = words.next().and_then(|w| w.parse().ok());
            let due = match (boot, boot_id, marked) {
                // Rebooted since: every unit started after the mark.
                (Some(then), Some(now), _) if then != now => Some(false),
                (Some(_), Some(_), Some(marked)) => match (pid, started) {
                    (None, _) => Some(false),
                    (Some(_), Some(started)) => Some(started <= marked),
                    (Some(_), None) => None,
                },
                _ => None,
            };
            Some(PendingRestart {
                unit: unit.to_owned(),
                run,
                rollback: name.starts_with("rollback-"),
                due,
                running: pid.is_some(),
                path: path.clone(),
            })
        })
        .collect()
}

/// A dnsfix run holding the node lock now: an apply or rollback under way, whose marks are
/// its own, its restart maybe still to come.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LockHolder {
    /// The run, from `/var/lib/dnsfix/owner` ("run RUN (pid N)", "rollback of run RUN (pid
    /// N)"), where it says.
    pub run: Option<String>,
    /// That file's line, as evidence.
    pub owner: String,
}

/// Who holds the node lock (`/var/lib/dnsfix/lock`) now, where the gather looked (only
/// where there is a mark): `Some(None)` for nobody, `None` where not known. Held is a
/// FLOCK line of /proc/locks (fs/locks.c lock_get_status: "1: FLOCK  ADVISORY  WRITE 1234
/// fd:01:5678 0 EOF"; a waiter's has "->" after its number) for the lock file's inode. The
/// inode alone: on btrfs, stat's device is the subvolume's and /proc/locks prints the
/// superblock's; and its pid is flock(1)'s, which took the lock for its shell and exited,
/// so the run is read from the owner file instead.
pub fn lock_holder(raw: &RawFacts) -> Option<Option<LockHolder>> {
    let file = raw.commands.get("lock-file")?;
    let inode: u64 = file.stdout.split_whitespace().nth(1)?.parse().ok()?;
    let locks = raw.get("/proc/locks")?.text()?;
    let held = locks.lines().any(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        fields.get(1) == Some(&"FLOCK")
            && fields
                .get(5)
                .and_then(|id| id.rsplit(':').next())
                .and_then(|ino| ino.parse::<u64>().ok())
                == Some(inode)
    });
    if !held {
        return Some(None);
    }
    let owner = raw
        .get("/var/lib/dnsfix/owner")
        .and_then(|f| f.text())
        .map(|t| t.trim().to_owned())
        .unwrap_or_default();
    let run = owner
        .strip_prefix("run ")
        .or_else(|| owner.strip_prefix("rollback of run "))
        .and_then(|rest| rest.split_whitespace().next())
        .map(str::to_owned);
    Some(Some(LockHolder { run, owner }))
}

/// Whether the marks could not be looked at: the gather reports the directory unread where
/// it runs without root (dnsfix's state directory is root's alone).
pub fn marks_unread(raw: &RawFacts) -> bool {
    raw.get(&format!("{DIR}/"))
        .is_some_and(|f| f.state == FileState::Unreadable)
}

/// A process's start, in seconds since boot, from its `/proc/PID/stat` (field 22,
/// `starttime`, in clock ticks; the fields are counted after the command name, which is in
/// parentheses and may hold spaces and parentheses itself).
fn process_start(stat: &str) -> Option<f64> {
    let (_, rest) = stat.rsplit_once(')')?;
    let ticks: u64 = rest.split_whitespace().nth(19)?.parse().ok()?;
    #[expect(clippy::cast_precision_loss, reason = "ticks since boot fit an f64")]
    let seconds = ticks as f64 / USER_HZ;
    Some(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kubelet's stat line as Linux `fs/proc/array.c` `do_task_stat` prints one (52
    /// fields; values made up), with starttime (field 22) 123456 ticks: 1234.56 s after boot.
    const STAT: &str = "4242 (kubelet) S 1 4242 4242 0 -1 4194560 83061 0 3 0 2181 1310 0 0 \
                        20 0 18 0 123456 2124529664 24530 18446744073709551615 1 1 0 0 0 0 0 0 \
                        2143420159 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

    fn raw(mark: &str) -> RawFacts {
        let mut raw = RawFacts::default();
        let present = FileState::Present;
        let at = format!("{DIR}/kubelet/20261130T020304Z-ab12");
        raw.file(&at, present, Some(mark.as_bytes()));
        raw.file("/proc/4242/stat", present, Some(STAT.as_bytes()));
        raw
    }

    /// The node lock's holder: a FLOCK line of /proc/locks for the lock file's inode
    /// (whatever device it names: btrfs), the run from the owner file; a waiter's line and
    /// another file's lock are not it.
    #[test]
    fn the_lock_holder_is_read_from_the_kernels_locks() {
        let mut raw = raw("r1 b1 10\n");
        crate::testing::set_command(&mut raw, "lock-file", "65024 10010698\n", 0);
        raw.file(
            "/var/lib/dnsfix/owner",
            FileState::Present,
            Some(b"run 20261130T020304Z-ab12 (pid 4711)\n"),
        );
        let locks = |text: &str| {
            let mut raw = raw.clone();
            raw.file("/proc/locks", FileState::Present, Some(text.as_bytes()));
            lock_holder(&raw)
        };
        let held = locks(
            "1: FLOCK  ADVISORY  WRITE 17714 fe:00:10305539 0 EOF\n2: FLOCK  ADVISORY  WRITE 17727 00:2f:10010698 0 EOF\n",
        );
        assert_eq!(
            held,
            Some(Some(LockHolder {
                run: Some("20261130T020304Z-ab12".into()),
                owner: "run 20261130T020304Z-ab12 (pid 4711)".into(),
            }))
        );
        assert_eq!(
            locks(
                "1: FLOCK  ADVISORY  WRITE 17714 fe:00:10305539 0 EOF\n1: -> FLOCK  ADVISORY  WRITE 17800 fe:00:10010698 0 EOF\n"
            ),
            Some(None)
        );
        assert_eq!(locks(""), Some(None));
        assert_eq!(lock_holder(&raw), None, "no /proc/locks read");
    }

    #[test]
    fn a_mark_after_the_kubelet_started_is_due_and_one_before_is_not() {
        let due = |mark: &str, pid: Option<u32>| {
            let restarts = pending_restarts(&raw(mark), Some("b1"), pid);
            assert_eq!(restarts.len(), 1);
            assert_eq!(restarts[0].unit, "kubelet");
            assert_eq!(restarts[0].run, "20261130T020304Z-ab12");
            restarts[0].due
        };
        // Marked at 2000 s, the kubelet started at 1234.56 s: still the old one.
        assert_eq!(
            due("20261130T020304Z-ab12 b1 2000.15\n", Some(4242)),
            Some(true)
        );
        // Marked at 1000 s, before it started: restarted since (by hand, say).
        assert_eq!(
            due("20261130T020304Z-ab12 b1 1000.00\n", Some(4242)),
            Some(false)
        );
        // Another boot: everything started after the mark.
        assert_eq!(
            due("20261130T020304Z-ab12 b0 2000.15\n", Some(4242)),
            Some(false)
        );
        // No kubelet runs (stopped since, say): nothing runs on the old settings, and the
        // next start reads the run's files; starting it is its operator's call.
        assert_eq!(due("20261130T020304Z-ab12 b1 2000.15\n", None), Some(false));
        // A kubelet whose start cannot be read, a mark without a time: cannot be told.
        assert_eq!(due("20261130T020304Z-ab12 b1 2000.15\n", Some(7)), None);
        assert_eq!(due("20261130T020304Z-ab12\n", Some(4242)), None);
    }

    /// A rollback's mark is named `rollback-RUN`; a gather without root reports the marks'
    /// directory unread (its error record, `DIR/`).
    #[test]
    fn rollback_marks_and_unread_marks_are_told_apart() {
        let mut raw = raw("20261130T020304Z-ab12 b1 2000.15\n");
        let at = format!("{DIR}/k3s/rollback-20261130T020304Z-ab12");
        raw.file(
            &at,
            FileState::Present,
            Some(b"20261130T020304Z-ab12 b1 2100\n"),
        );
        let restarts = pending_restarts(&raw, Some("b1"), Some(4242));
        let rollback: Vec<(&str, bool)> = restarts
            .iter()
            .map(|r| (r.unit.as_str(), r.rollback))
            .collect();
        assert_eq!(rollback, [("k3s", true), ("kubelet", false)]);
        assert!(!marks_unread(&raw));
        let mut unread = RawFacts::default();
        unread.file(&format!("{DIR}/"), FileState::Unreadable, None);
        assert!(marks_unread(&unread));
        assert!(pending_restarts(&unread, Some("b1"), None).is_empty());
    }

    #[test]
    fn the_command_name_may_hold_spaces_and_parentheses() {
        let odd = STAT.replacen("(kubelet)", "(a) b (c)", 1);
        assert_eq!(process_start(&odd), Some(1234.56));
        assert_eq!(process_start("garbage"), None);
    }
}
