//! What the openssh backend leaves on this machine and on the nodes, for the tests of its
//! masters: logins in the lab's sshd logs, the ssh processes a control directory names,
//! and a private control directory per test (`XDG_RUNTIME_DIR`), so that no master of
//! another run is found and every master can be closed at the end.

use std::path::{Path, PathBuf};

use super::lab::Lab;

/// Logins in the lab's sshd logs so far.
pub fn logins(lab: &Lab) -> usize {
    lab.nodes
        .iter()
        .map(|node| {
            let log = lab.dir.join("nodes").join(&node.name).join("sshd.log");
            std::fs::read_to_string(&log)
                .unwrap_or_else(|e| panic!("{}: {e}", log.display()))
                .matches("Accepted publickey")
                .count()
        })
        .sum()
}

/// The private directory `name` of the lab (mode 0700) for `XDG_RUNTIME_DIR`, where dnsfix
/// keeps its control sockets: made on the first call, the same path on every later one.
/// It is `lab.dir/name` where a control socket below it fits in a unix socket path. Where
/// it would not (a long `CARGO_TARGET_DIR`), dnsfix would pass over it for `/tmp`, where
/// the test neither finds nor closes its masters and may find another run's: the directory
/// is then a short one in the system temp dir, `lab.dir/name` a link to it, removed with
/// the lab ([`remove_linked_dirs`]).
pub fn private_dir(lab: &Lab, name: &str) -> PathBuf {
    let dir = lab.dir.join(name);
    if let Ok(target) = std::fs::read_link(&dir) {
        return target;
    }
    if dir.is_dir() {
        return dir;
    }
    if socket_fits(&dir) {
        std::fs::create_dir(&dir).expect("mkdir");
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .expect("chmod");
        return dir;
    }
    let short = tempfile::Builder::new()
        .prefix(LINKED_PREFIX)
        .tempdir()
        .expect("mkdir in the temp dir")
        .keep();
    assert!(socket_fits(&short), "{} is too long too", short.display());
    std::os::unix::fs::symlink(&short, &dir).expect("ln -s");
    short
}

/// The name of the short directories [`private_dir`] makes in the system temp dir starts so.
const LINKED_PREFIX: &str = "dnsfix-it-xdg-";

/// Whether dnsfix takes `base` for its control directory: the bound of the openssh
/// backend's `fits` (src/transport/openssh.rs), `/dnsfix-ssh-UID-NONCE8/`, a 20-digit socket
/// name and the 17 bytes ssh adds while it binds, in 107 bytes.
fn socket_fits(base: &Path) -> bool {
    let uid = std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        .expect("stat /proc/self");
    let dir = format!("/dnsfix-ssh-{uid}-12345678/");
    base.as_os_str().len() + dir.len() + 20 + 17 <= 107
}

/// Removes the short directories the links in `lab_dir` lead to ([`private_dir`]); the
/// lab's teardown removes the links.
pub fn remove_linked_dirs(lab_dir: &Path) {
    for entry in std::fs::read_dir(lab_dir).into_iter().flatten().flatten() {
        let Ok(target) = std::fs::read_link(entry.path()) else {
            continue;
        };
        let ours = target.starts_with(std::env::temp_dir())
            && target
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(LINKED_PREFIX));
        if ours {
            let _ = std::fs::remove_dir_all(&target);
        }
    }
}

/// The control sockets below `dir`.
pub fn sockets(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                dirs.push(entry.path());
            } else if std::os::unix::fs::FileTypeExt::is_socket(&kind) {
                found.push(entry.path());
            }
        }
    }
    found
}

/// Ends every master with a socket below `dir`.
pub fn close_masters(dir: &Path) {
    for socket in sockets(dir) {
        let _ = std::process::Command::new("ssh")
            .args(["-F", "/dev/null", "-o", "BatchMode=yes", "-S"])
            .arg(&socket)
            .args(["-O", "exit", "lab"])
            .output();
    }
}

/// The processes whose command line names `dir` (pid, command line): the ssh clients and
/// masters of the control sockets below it (a master's title is `ssh: SOCKET [mux]`).
pub fn ssh_processes(dir: &Path) -> Vec<(u32, String)> {
    let needle = dir.as_os_str().as_encoded_bytes();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if cmdline.windows(needle.len()).any(|w| w == needle) {
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            found.push((pid, text.trim().to_owned()));
        }
    }
    found
}

/// Waits up to `limit` for `done`, checking every 100 ms; whether it came.
pub fn wait_for(limit: std::time::Duration, mut done: impl FnMut() -> bool) -> bool {
    let started = std::time::Instant::now();
    loop {
        if done() {
            return true;
        }
        if started.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
