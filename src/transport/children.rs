//! The processes the transports start, and ending them on every way dnsfix ends.
//!
//! Every `ssh` (and the local transport's `/bin/sh`) runs in a process group of its own, so
//! that the terminal's Ctrl-C does not cut a node script off mid-write: dnsfix decides
//! (apply lets the hosts in progress finish). The price is that nothing the kernel does
//! when dnsfix ends reaches them: no terminal signal, and the crate forbids the `unsafe`
//! that `PR_SET_PDEATHSIG` would take. `kill_on_drop` covers a child whose future is
//! dropped, but not `std::process::exit` nor a signal's default action, where no
//! destructor runs. So each child's group is listed here from its spawn to its reaping,
//! and [`end_all`] kills every group still listed; [`exit`] does that, then exits.
//! The commands call it on every way out they do not return through (a second Ctrl-C,
//! SIGTERM, SIGHUP, a Ctrl-C before a rollout started), and the binary when `run`
//! returns, whatever it returns.
//!
//! A ControlMaster is not in a group of ours: ControlPersist puts it in a session of its
//! own (OpenSSH ssh.c `control_persist_detach`: `daemon(1, 1)`). The masters that are the
//! run's own (`--ssh-persist 0`, and every master of `apply` and `rollback`) are listed
//! by their control sockets and told to exit (`ssh -O exit`); a persisting master is left
//! to serve the next run, as ControlPersist is meant to, and exits when idle.
//!
//! This module never starts a node command and never ends a process it did not start.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

/// The children of this run: [`spawn`], [`end_all`] and the rest work on this one.
static RUN: Registry = Registry::new();

/// How long [`end_all`] waits for the run's own masters to take `ssh -O exit`.
const MASTER_EXIT_LIMIT: Duration = Duration::from_secs(3);

/// What is alive now: process groups, and the masters that are the run's own.
#[derive(Debug)]
struct Registry {
    /// The process groups of the children alive now (each child leads its own: its pid).
    groups: Mutex<BTreeSet<i32>>,
    /// The control sockets of the masters that are this run's own.
    masters: Mutex<BTreeSet<PathBuf>>,
    /// Held (shared) from a spawn until its group is listed, and (exclusive) by
    /// [`Registry::end_all`]: a child spawned while dnsfix is ending is listed before the
    /// groups are killed, and none is spawned after (the flag inside says so).
    spawning: RwLock<bool>,
}

/// A child's process group, listed until this is dropped. Dropped without [`Group::reaped`]
/// (the child's future given up on: a login or command timeout, a cancelled task), the
/// group is killed: `kill_on_drop` ends the child alone, and what it started (a
/// ProxyCommand, the local script's commands) would outlive it, no longer listed.
#[derive(Debug)]
pub struct Group {
    pgid: i32,
    registry: &'static Registry,
    reaped: bool,
}

impl Group {
    /// The child was waited for: its group number may be another's from now on, so it is
    /// taken off the list and never signalled.
    pub fn reaped(mut self) {
        self.reaped = true;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        lock(&self.registry.groups).remove(&self.pgid);
        // Not reaped: the child (its leader) is alive or a zombie still, so the group is
        // still this one. Gone already (ESRCH) is what was wanted.
        if !self.reaped && self.pgid > 0 {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(self.pgid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Registry {
    const fn new() -> Registry {
        Registry {
            groups: Mutex::new(BTreeSet::new()),
            masters: Mutex::new(BTreeSet::new()),
            spawning: RwLock::new(false),
        }
    }

    fn spawn<C>(
        &'static self,
        spawn: impl FnOnce() -> std::io::Result<C>,
        pid: impl FnOnce(&C) -> Option<u32>,
    ) -> std::io::Result<(C, Group)> {
        let ending = self.spawning.read().unwrap_or_else(PoisonError::into_inner);
        if *ending {
            return Err(std::io::Error::other("dnsfix is ending"));
        }
        let child = spawn()?;
        let pgid = pid(&child).and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
        if pgid > 0 {
            lock(&self.groups).insert(pgid);
        }
        drop(ending);
        Ok((
            child,
            Group {
                pgid,
                registry: self,
                reaped: false,
            },
        ))
    }

    /// Whether [`Registry::end_all`] ran or runs.
    fn ending(&self) -> bool {
        *self.spawning.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Kills the groups and ends the masters; false when another caller did (or does: it
    /// is waited for) already.
    fn end_all(&self) -> bool {
        let mut ending = self
            .spawning
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if std::mem::replace(&mut *ending, true) {
            return false;
        }
        for pgid in std::mem::take(&mut *lock(&self.groups)) {
            // A group already gone (ESRCH) is what was wanted.
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pgid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let masters = std::mem::take(&mut *lock(&self.masters));
        let mut exiting: Vec<std::process::Child> = masters
            .iter()
            .filter(|ctl| ctl.exists())
            .filter_map(|ctl| control_command(ctl, "exit").spawn().ok())
            .collect();
        let started = Instant::now();
        while !exiting.is_empty() && started.elapsed() < MASTER_EXIT_LIMIT {
            exiting.retain_mut(|c| matches!(c.try_wait(), Ok(None)));
            std::thread::sleep(Duration::from_millis(20));
        }
        for mut child in exiting {
            let _ = child.kill();
            let _ = child.wait();
        }
        true
    }
}

/// Spawns with `spawn` (a command set to lead a process group of its own:
/// `process_group(0)`) and lists the child's group; refused once dnsfix is ending.
/// `pid` reads the child's pid.
pub fn spawn<C>(
    spawn: impl FnOnce() -> std::io::Result<C>,
    pid: impl FnOnce(&C) -> Option<u32>,
) -> std::io::Result<(C, Group)> {
    RUN.spawn(spawn, pid)
}

/// Lists a master of the run's own, by its control socket.
pub fn own_master(ctl: &Path) {
    lock(&RUN.masters).insert(ctl.to_path_buf());
}

/// Takes a master off the list: it is being stopped by its last session.
pub fn master_closed(ctl: &Path) {
    lock(&RUN.masters).remove(ctl);
}

/// `ssh -O OP` to the master on `ctl`, reading no ssh_config (nothing is connected), in a
/// process group of its own, out of the terminal's Ctrl-C as every ssh dnsfix starts.
pub fn control_command(ctl: &Path, op: &str) -> std::process::Command {
    let mut ssh = std::process::Command::new("ssh");
    ssh.args(["-F", "/dev/null", "-o", "BatchMode=yes", "-S"])
        .arg(ctl)
        .args(["-O", op, "dnsfix-master"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut ssh, 0);
    ssh
}

/// Kills every listed process group (SIGKILL: an ssh in the middle of a key exchange with
/// a sshd that stalls would not act on a SIGTERM before its next read) and tells the run's
/// own masters to exit, waiting for them up to [`MASTER_EXIT_LIMIT`]. No child is spawned
/// from here on. Where [`exit`] came first (a signal, on another thread), this waits for
/// it to end dnsfix with its code instead of returning: the run it cut off reports
/// nothing more and does not exit with a code of its own.
pub fn end_all() {
    if !RUN.end_all() {
        wait_for_exit();
    }
}

/// Whether dnsfix is ending what it started: from then on it reports no result (the run
/// was cut off; what failed, failed because its ssh was killed).
pub fn ending() -> bool {
    RUN.ending()
}

/// Parks the calling thread for good: [`exit`], on another thread, ends the process.
pub fn wait_for_exit() -> ! {
    loop {
        std::thread::park();
    }
}

/// Ends what dnsfix started ([`end_all`]), then dnsfix itself with `code`. Where another
/// thread ended them first (`run` returned), that thread ends dnsfix: this one waits.
pub fn exit(code: i32) -> ! {
    if RUN.end_all() {
        std::process::exit(code)
    }
    wait_for_exit()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shell leading a group of its own with a child in the background, listed in
    /// `registry` (each test has its own: the run's is shared with every other test).
    fn spawn_sleeper(registry: &'static Registry) -> (std::process::Child, Group) {
        let mut sh = std::process::Command::new("/bin/sh");
        sh.args(["-c", "sleep 60 & sleep 60; wait"]);
        std::os::unix::process::CommandExt::process_group(&mut sh, 0);
        registry
            .spawn(move || sh.spawn(), |c| Some(c.id()))
            .expect("spawn")
    }

    /// Waits (up to 5 s) until no process is left in group `pgid`.
    fn wait_until_gone(pgid: i32) {
        let started = Instant::now();
        while nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), None).is_ok() {
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "group {pgid} still alive"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A listed group is killed with everything in it, a grandchild included (what a
    /// ProxyCommand of ssh's would be), and one taken off the list is not.
    #[test]
    fn a_listed_group_is_killed_whole_and_a_reaped_one_is_forgotten() {
        static TEST: Registry = Registry::new();
        let spawn_sleep = || spawn_sleeper(&TEST);
        let (mut done, group) = spawn_sleep();
        let _ = done.kill();
        let _ = done.wait();
        // (Its background sleep lives on, in a group no longer listed.)
        group.reaped();
        let (mut child, group) = spawn_sleep();
        let pgid = group.pgid;
        assert_eq!(
            *lock(&TEST.groups),
            BTreeSet::from([pgid]),
            "the reaped one is gone"
        );
        std::thread::sleep(Duration::from_millis(100));
        assert!(TEST.end_all());
        assert!(!TEST.end_all(), "once");
        let status = child.wait().expect("wait");
        assert!(status.code().is_none(), "killed by a signal: {status:?}");
        // Its background sleep, in the same group, is gone too.
        wait_until_gone(pgid);
        // Nothing more is spawned once ending.
        let refused = TEST.spawn(
            || std::process::Command::new("true").spawn(),
            |c| Some(c.id()),
        );
        assert!(refused.is_err());
        group.reaped();
    }

    /// A group given up on (its child's future dropped, as a timeout does) is killed
    /// whole when it is dropped: the child's `kill_on_drop` would end the child alone.
    #[test]
    fn a_group_dropped_unreaped_is_killed_with_its_grandchild() {
        static TEST: Registry = Registry::new();
        let (mut child, group) = spawn_sleeper(&TEST);
        let pgid = group.pgid;
        std::thread::sleep(Duration::from_millis(100));
        drop(group);
        assert!(lock(&TEST.groups).is_empty(), "taken off the list");
        let status = child.wait().expect("wait");
        assert!(status.code().is_none(), "killed by a signal: {status:?}");
        wait_until_gone(pgid);
    }
}
