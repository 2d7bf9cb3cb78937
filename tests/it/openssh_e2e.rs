//! The openssh backend's masters against the lab's real sshd. A session's first command
//! makes the connection (`ssh -o ControlMaster=auto`), through the master an earlier run
//! left when there is one: a master is named after the files it was made with, not after
//! how they were spelt.

use std::path::Path;
use std::process::Stdio;

use crate::common::dnsfix::{Dnsfix, describe};
use crate::common::lab::Lab;
use crate::common::masters::{close_masters, logins, private_dir};

fn start(scenarios: &[&str]) -> Lab {
    Lab::start(scenarios).unwrap_or_else(|e| panic!("lab could not start: {e}"))
}

/// A master is named after the files it was made with: `--known-hosts known_hosts` run in
/// two directories names two files, and a run where that file trusts no key must not ride
/// the master the other run made (it fails on the host key); the same file spelt another
/// way is the same master (no new login).
#[test]
fn a_relative_known_hosts_names_its_file_not_its_spelling() {
    let lab = start(&["healthy"]);
    let xdg = private_dir(&lab, "xdg");
    let (trusting, empty) = (lab.dir.join("trusting"), lab.dir.join("empty"));
    for dir in [&trusting, &empty] {
        std::fs::create_dir(dir).expect("mkdir");
    }
    std::fs::copy(lab.known_hosts(), trusting.join("known_hosts")).expect("cp");
    std::fs::write(empty.join("known_hosts"), "").expect("write");
    let run = |cwd: &Path, known_hosts: &str| {
        Dnsfix::new(["facts", "--ssh-persist", "30", "--no-progress", "-i"])
            .arg(lab.inventory())
            .args(["--known-hosts", known_hosts, "--format", "json"])
            .env("XDG_RUNTIME_DIR", &xdg)
            .stdin(Stdio::null())
            .command()
            .current_dir(cwd)
            .output()
            .expect("dnsfix runs")
    };
    let before = logins(&lab);
    let out = run(&trusting, "known_hosts");
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(logins(&lab), before + 1);
    let out = run(&empty, "../trusting/known_hosts");
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(logins(&lab), before + 1, "the same file, the same master");
    let out = run(&empty, "known_hosts");
    close_masters(&xdg);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    assert!(
        describe(&out).contains("not in known_hosts"),
        "{}",
        describe(&out)
    );
}
