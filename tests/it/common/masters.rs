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

/// A fresh directory `name` in the lab's directory, mode 0700, for `XDG_RUNTIME_DIR`: dnsfix
/// keeps its control sockets below it.
pub fn private_dir(lab: &Lab, name: &str) -> PathBuf {
    let dir = lab.dir.join(name);
    std::fs::create_dir(&dir).expect("mkdir");
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .expect("chmod");
    dir
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
