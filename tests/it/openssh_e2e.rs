//! The openssh backend's masters against the lab's real sshd. A session's first command
//! makes the connection (`ssh -o ControlMaster=auto`); what that must keep: a node
//! command's exit 255 is the command's, and a master is named after the files it was made
//! with, not after how they were spelt.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use dnsfix::inventory::{Connection, ConnectionKind};
use dnsfix::transport::{SshOptions, Target, Transport, TransportError};

use crate::common::dnsfix::{Dnsfix, describe};
use crate::common::lab::Lab;
use crate::common::masters::{close_masters, logins, private_dir};

/// The lab's key and known_hosts; masters closed with their session.
fn options(lab: &Lab) -> SshOptions {
    SshOptions {
        known_hosts: Some(lab.known_hosts()),
        private_key: Some(lab.key()),
        connect_timeout: Duration::from_secs(5),
        ssh_persist: 0,
        ..SshOptions::default()
    }
}

fn target(lab: &Lab, node: &str) -> Target {
    let node = lab.node(node);
    Target {
        host: node.name.clone(),
        connection: Connection {
            kind: ConnectionKind::Ssh,
            address: "127.0.0.1".into(),
            port: Some(node.port),
            user: Some(node.user.clone()),
            private_key: None,
            become_root: false,
        },
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn start(scenarios: &[&str]) -> Lab {
    Lab::start(scenarios).unwrap_or_else(|e| panic!("lab could not start: {e}"))
}

/// ssh exits 255 for its own failures and passes the command's exit status on, 255
/// included. A node command that says on stderr what ssh says when a login is refused and
/// exits 255 is still the node's command, from a session's first command (the one that
/// logs in) as from a later one; what ssh itself says (a login refused for real) is still
/// an authentication failure.
#[test]
fn a_command_exiting_255_with_ssh_like_stderr_is_the_commands_exit_not_a_failed_login() {
    let lab = start(&["healthy"]);
    let node = lab.nodes[0].name.clone();
    let transport = Transport::new(options(&lab)).expect("transport");
    let target = target(&lab, &node);
    let fake = "echo 'root@127.0.0.1: Permission denied (publickey).' >&2; exit 255";
    runtime().block_on(async {
        let mut session = transport.connect(&target).await.expect("connect");
        for which in ["first", "later"] {
            let out = session
                .exec(fake, b"")
                .await
                .unwrap_or_else(|e| panic!("the {which} command: {e}"));
            assert_eq!(out.exit_status, Some(255), "the {which} command");
            assert_eq!(
                String::from_utf8_lossy(&out.stderr),
                "root@127.0.0.1: Permission denied (publickey).\n",
                "the {which} command"
            );
        }
        let out = session.exec("echo still", b"").await.expect("still there");
        assert_eq!(out.stdout, b"still\n");
        session.close().await;

        let mut stranger = target.clone();
        stranger.connection.user = Some("dnsfix-no-such-user".into());
        let mut session = transport.connect(&stranger).await.expect("connect");
        let refused = session.exec("true", b"").await.expect_err("no such user");
        assert!(
            matches!(refused, TransportError::Auth { .. }),
            "{refused:?}"
        );
        session.close().await;
    });
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
