//! The local record of a run: what was applied where, so a run can be reviewed later and
//! undone with `dnsfix rollback RUN_ID`. One JSON file per run under the state directory
//! (`$DNSFIX_STATE_DIR`, else `$XDG_STATE_HOME/dnsfix`, else `~/.local/state/dnsfix`),
//! written atomically. The nodes keep their own part under /var/lib/dnsfix/backups/RUN/.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::HostResult;

pub const RUN_FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Always `dnsfix-run`.
    pub kind: String,
    pub format_version: u32,
    pub dnsfix_version: String,
    pub run_id: String,
    /// `apply` or `rollback`.
    pub command: String,
    pub started: String,
    pub finished: String,
    pub inventory: Option<String>,
    /// The saved plan applied, if one was given.
    pub plan_file: Option<String>,
    pub plan_created: String,
    /// For a rollback: the run it undid.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rolls_back: Option<String>,
    pub hosts: Vec<HostResult>,
    /// Local inventory files updated (`--update-inventory`).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub inventory_updates: Vec<InventoryUpdate>,
    /// kube-system ConfigMap keys changed (or, for a rollback, restored) through kubectl.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub cluster_updates: Vec<ClusterUpdate>,
}

/// One kube-system ConfigMap key a run set, with what `rollback` needs to put it back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterUpdate {
    pub configmap: String,
    pub key: String,
    /// Where kubectl ran.
    pub via: String,
    /// `written`, `already`, `stale` (it changed since the plan), `error`, or `pending`
    /// (recorded before the write).
    pub outcome: String,
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub message: String,
    /// The key's text before and after the run.
    pub before: String,
    pub after: String,
    /// The whole ConfigMap as it was read just before the write.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub old: Option<serde_json::Value>,
    /// Its resourceVersion once written.
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub resource_version: String,
    /// The hosts whose playbooks asked for it.
    pub hosts: Vec<String>,
    /// Why: the playbooks, tasks and findings.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub reasons: Vec<crate::plan::model::Reason>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InventoryUpdate {
    pub path: String,
    /// `written`, `already`, `stale` (the file changed since the plan), `held` (it names
    /// dnsfix's own file, which a host it is for has not got in this run), `error`; in a
    /// rollback's record `kept` (a host's `kube_resolv_conf` still names a file the rollback
    /// removed: to undo by hand) or `unused` (it does, but Kubespray's vars for the node's OS
    /// set kube_resolv_conf over it: no failure).
    pub outcome: String,
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub message: String,
    /// The hosts whose fixes the edit is for (the plan's). Records written before it have
    /// none.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub hosts: Vec<String>,
}

/// The directory run records live in.
pub fn state_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("DNSFIX_STATE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("dnsfix");
    }
    match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        Some(home) => PathBuf::from(home).join(".local/state/dnsfix"),
        // No HOME (a bare cron job, some CI): root's state lives with the system's, anyone
        // else must say where (a relative or "/" path would scatter run records).
        None if own_uid() == 0 => PathBuf::from("/var/lib/dnsfix"),
        None => PathBuf::from(".dnsfix-state-needs-HOME"),
    }
}

fn own_uid() -> u32 {
    std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        .unwrap_or(u32::MAX)
}

pub fn path(dir: &Path, run_id: &str) -> PathBuf {
    dir.join("runs").join(format!("{run_id}.json"))
}

/// A new run id: UTC time and 8 random hex digits, e.g. `20261122T170509Z-3fa9c2d1`.
pub fn new_run_id() -> String {
    let time = crate::util::now_rfc3339().replace(['-', ':'], "");
    let nonce = crate::util::nonce();
    format!("{time}-{}", &nonce[..8.min(nonce.len())])
}

/// Held by an apply for as long as its process lives: an exclusive `flock` on
/// `runs/RUN.lock`, which the kernel releases when the process ends, however it ends (a
/// second Ctrl-C, SIGHUP, the OOM killer). Another run of the same plan asks
/// [`running`] before it takes over what this one left on a node.
#[derive(Debug)]
pub struct RunLock {
    path: PathBuf,
    _file: std::fs::File,
}

impl Drop for RunLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn lock_path(dir: &Path, run_id: &str) -> PathBuf {
    dir.join("runs").join(format!("{run_id}.lock"))
}

/// Takes `run_id`'s lock for this process ([`RunLock`]).
pub fn hold(dir: &Path, run_id: &str) -> std::io::Result<RunLock> {
    let runs = dir.join("runs");
    create_private_dir(&runs)?;
    let path = lock_path(dir, run_id);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)?;
    if let Err(e) = file.try_lock() {
        // Left, an unlocked file would read as a run of this directory that cannot be
        // tested, not as one that is over. Not one another process holds.
        if matches!(e, std::fs::TryLockError::Error(_)) {
            let _ = std::fs::remove_file(&path);
        }
        return Err(std::io::Error::other(e));
    }
    Ok(RunLock { path, _file: file })
}

/// Whether a run is still running, as this state directory can tell ([`liveness`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// Its process holds its [`RunLock`].
    Running,
    /// It ran from this state directory and holds no lock now (ended, killed), or the name
    /// is no run id.
    Gone,
    /// Not a run of this state directory (another machine, another user's or HOME's state
    /// directory), or the lock cannot be tested: nothing here says it is over.
    Unknown,
}

/// Whether the run `run_id` is still running, by its lock in `dir` ([`Liveness`]). Only a
/// run this state directory recorded can be known to be gone: another dnsfix, run with
/// another `DNSFIX_STATE_DIR` or HOME (`sudo` sets root's) or on another machine, leaves
/// no lock here while it runs.
pub fn liveness(dir: &Path, run_id: &str) -> Liveness {
    if run_id.is_empty()
        || !run_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-')
    {
        return Liveness::Gone;
    }
    if !path(dir, run_id).is_file() {
        return Liveness::Unknown;
    }
    let file = match std::fs::File::open(lock_path(dir, run_id)) {
        Ok(file) => file,
        // The lock goes with its run ([`RunLock`]'s drop), or was never taken (killed
        // between its record and its lock, before any node was touched).
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Liveness::Gone,
        Err(_) => return Liveness::Unknown,
    };
    match file.try_lock_shared() {
        Ok(()) => Liveness::Gone,
        Err(std::fs::TryLockError::WouldBlock) => Liveness::Running,
        Err(std::fs::TryLockError::Error(_)) => Liveness::Unknown,
    }
}

/// [`liveness`] of `run_id` as far as `host` goes: a run still running that is done with
/// `host` ([`note_ended`]: it failed the host and went on with others under
/// `--max-fail-percentage`, or the rest of its batch keeps it running) will not touch it
/// again, so what it left there is as a gone run's.
pub fn liveness_for(dir: &Path, run_id: &str, host: &str) -> Liveness {
    match liveness(dir, run_id) {
        Liveness::Running if ended(dir, run_id, host) => Liveness::Gone,
        other => other,
    }
}

/// Notes in `run_id`'s lock file (held by this process, [`hold`]) that the run is done
/// with `host`: one line, the name as a JSON string (any inventory name stays one line),
/// in one append.
pub fn note_ended(dir: &Path, run_id: &str, host: &str) -> std::io::Result<()> {
    use std::io::Write;
    let line = format!("{}\n", serde_json::Value::from(host));
    std::fs::OpenOptions::new()
        .append(true)
        .open(lock_path(dir, run_id))?
        .write_all(line.as_bytes())
}

/// Whether `run_id` noted that it is done with `host` ([`note_ended`]).
fn ended(dir: &Path, run_id: &str, host: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(lock_path(dir, run_id)) else {
        return false;
    };
    text.lines()
        .any(|line| serde_json::from_str::<String>(line).is_ok_and(|name| name == host))
}

/// Saves `record` atomically (temp file, fsync, rename).
pub fn save(dir: &Path, record: &RunRecord) -> std::io::Result<PathBuf> {
    if dir.ends_with(".dnsfix-state-needs-HOME") {
        return Err(std::io::Error::other(
            "HOME is not set: set HOME, XDG_STATE_HOME or DNSFIX_STATE_DIR",
        ));
    }
    let path = path(dir, &record.run_id);
    let runs = dir.join("runs");
    create_private_dir(&runs)?;
    let text = crate::text::pretty_json(record);
    crate::util::write_atomic(&path, text.as_bytes())?;
    Ok(path)
}

pub fn load(dir: &Path, run_id: &str) -> Result<RunRecord, String> {
    let path = path(dir, run_id);
    let text = std::fs::read_to_string(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => not_recorded(dir, run_id),
        _ => format!(
            "cannot read the record of run {}, {}: {e}",
            crate::text::escape(run_id),
            path.display()
        ),
    })?;
    let record: RunRecord =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if record.kind != "dnsfix-run" {
        return Err(format!("{}: not a dnsfix run record", path.display()));
    }
    Ok(record)
}

/// Why rollback has no record of `run_id`: where runs are recorded, what is there (the
/// latest run id), and where else the run may be.
fn not_recorded(dir: &Path, run_id: &str) -> String {
    let runs = dir.join("runs");
    let mut recorded: Vec<String> = std::fs::read_dir(&runs)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            name.strip_suffix(".json").map(str::to_owned)
        })
        .collect();
    // Run ids begin with their UTC time: the greatest is the latest.
    recorded.sort();
    let there = match recorded.last() {
        None => "and no run at all".to_owned(),
        Some(latest) => format!(
            "{} {}, the latest {}",
            crate::text::count(recorded.len(), "run"),
            if recorded.len() == 1 { "is" } else { "are" },
            crate::text::escape(latest)
        ),
    };
    format!(
        "no run {id} is recorded in {runs} (no {id}.json there{sep}{there}): give the run id \
         `dnsfix apply` printed; a run made with another DNSFIX_STATE_DIR, XDG_STATE_HOME or \
         HOME (`sudo` gives root's) is recorded in that one's runs/",
        id = crate::text::escape(run_id),
        runs = runs.display(),
        sep = if recorded.is_empty() { ", " } else { "; " },
    )
}

/// Creates `dir` and its missing parents with mode 0700: run records can hold what a node's
/// files hold.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run is running while its lock is held, and not once it is let go (as the kernel
    /// lets it go when the process dies); a run without a lock here (another machine's,
    /// or no run id at all) is not.
    #[test]
    fn a_run_is_running_while_its_lock_is_held() {
        let dir = std::env::temp_dir().join(format!("dnsfix-runlock-{}", crate::util::nonce()));
        let id = "20261201T010000Z-0123abcd";
        // Not recorded here: another state directory's or machine's run, not known over.
        assert_eq!(liveness(&dir, id), Liveness::Unknown);
        let lock = hold(&dir, id).expect("hold");
        assert_eq!(liveness(&dir, id), Liveness::Unknown);
        std::fs::write(path(&dir, id), "{}").expect("record");
        assert_eq!(liveness(&dir, id), Liveness::Running);
        assert!(hold(&dir, id).is_err(), "held once");
        assert_eq!(liveness(&dir, "../runs/x"), Liveness::Gone);
        drop(lock);
        assert_eq!(liveness(&dir, id), Liveness::Gone);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A running run that noted it is done with a host is, for that host alone, as a gone
    /// run: a `--limit` retry of the host takes over what it left there.
    #[test]
    fn a_running_run_done_with_a_host_is_gone_for_that_host() {
        let dir = std::env::temp_dir().join(format!("dnsfix-runended-{}", crate::util::nonce()));
        let id = "20261201T010000Z-0123abcd";
        let lock = hold(&dir, id).expect("hold");
        std::fs::write(path(&dir, id), "{}").expect("record");
        assert_eq!(liveness_for(&dir, id, "node1"), Liveness::Running);
        note_ended(&dir, id, "node1").expect("noted");
        note_ended(&dir, id, "odd\nname").expect("noted");
        assert_eq!(liveness_for(&dir, id, "node1"), Liveness::Gone);
        assert_eq!(liveness_for(&dir, id, "odd\nname"), Liveness::Gone);
        // Neither another host nor a part of a name that was noted.
        assert_eq!(liveness_for(&dir, id, "node2"), Liveness::Running);
        assert_eq!(liveness_for(&dir, id, "odd"), Liveness::Running);
        drop(lock);
        assert_eq!(liveness_for(&dir, id, "node2"), Liveness::Gone);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
