//! The openssh backend's masters against the lab's real sshd. A session's first command
//! makes the connection (`ssh -o ControlMaster=auto`); what that must keep: a node
//! command's exit 255 is the command's, a slow login is not cut short by the connect
//! timeout (the command timeout still bounds the command), a master of a run with
//! `--ssh-persist 0` does not outlive dnsfix, even a killed one, nor a session dropped
//! unclosed, and a master is named after the files it was made with, not after how they
//! were spelt; and a signal that ends dnsfix ends every ssh it started.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use dnsfix::transport::{Phase, SshOptions, Transport, TransportError};

use crate::common::dnsfix::{Dnsfix, describe};
use crate::common::lab::Lab;
use crate::common::masters::{close_masters, logins, private_dir, ssh_processes, wait_for};

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
    let target = lab.target(&node);
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

/// A login that takes longer than the connect timeout after the banner (sshd waiting on a
/// broken resolver: the lab's slow-login, 2 x 3 s) still logs in: the connect timeout
/// bounds the TCP connect and the banner, the login has a limit of its own. The command
/// timeout still bounds each command, the first one included, from when the login is
/// done. A node whose sshd never sends a banner fails after the connect timeout.
#[test]
fn a_slow_login_is_not_cut_short_by_the_connect_timeout_and_commands_keep_theirs() {
    let lab = start(&["healthy", "healthy"]);
    let (slow, frozen) = (lab.nodes[0].name.clone(), lab.nodes[1].name.clone());
    lab.slow_login(&slow, 3);
    lab.freeze(&frozen);
    let transport = Transport::new(SshOptions {
        connect_timeout: Duration::from_secs(2),
        command_timeout: Duration::from_secs(3),
        ..options(&lab)
    })
    .expect("transport");
    runtime().block_on(async {
        let started = Instant::now();
        let mut session = connect(&transport, &lab, &slow).await;
        let out = session
            .exec("sleep 2; echo in", b"")
            .await
            .unwrap_or_else(|e| panic!("after {:?}: {e}", started.elapsed()));
        assert_eq!(out.stdout, b"in\n");
        assert!(started.elapsed() >= Duration::from_secs(6), "a slow login");
        let started = Instant::now();
        let late = session.exec("sleep 30", b"").await.expect_err("bounded");
        assert_timeout(&late, 3, Phase::Command);
        // Bounds with room for a loaded machine (CI runs the lab's tests side by side),
        // far below what an unbounded command or login would take.
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "{:?}",
            started.elapsed()
        );
        session.close().await;

        // The first command of a session: its login is not counted against it.
        let (late, took) = first_command_fails(&transport, &lab, &slow, "sleep 30").await;
        assert_timeout(&late, 3, Phase::Command);
        assert!(
            took >= Duration::from_secs(9) && took < Duration::from_secs(25),
            "{took:?}"
        );

        // The login's own limit: the connect timeout and the login timeout.
        let impatient = Transport::new(SshOptions {
            connect_timeout: Duration::from_secs(2),
            login_timeout: Duration::from_secs(2),
            ..options(&lab)
        })
        .expect("transport");
        // A login of 6 s.
        let (cut, took) = first_command_fails(&impatient, &lab, &slow, "true").await;
        assert_timeout(&cut, 4, Phase::LoggingIn);
        assert!(took < Duration::from_secs(9), "{took:?}");

        // No banner.
        let (never, took) = first_command_fails(&transport, &lab, &frozen, "true").await;
        assert_timeout(&never, 2, Phase::Connecting);
        assert!(took < Duration::from_secs(8), "{took:?}");
    });
}

/// A session to `node` (opening it does not log in yet with openssh).
async fn connect(transport: &Transport, lab: &Lab, node: &str) -> dnsfix::transport::Session {
    transport.connect(&lab.target(node)).await.expect("connect")
}

/// A new session's first command, which must fail: the error, and how long it took.
async fn first_command_fails(
    transport: &Transport,
    lab: &Lab,
    node: &str,
    command: &str,
) -> (TransportError, Duration) {
    let started = Instant::now();
    let mut session = connect(transport, lab, node).await;
    let error = session.exec(command, b"").await.expect_err(command);
    let took = started.elapsed();
    session.close().await;
    (error, took)
}

/// `error` is a timeout after `seconds` while `during`, naming the node's address and port.
fn assert_timeout(error: &TransportError, seconds: u64, during: Phase) {
    match error {
        TransportError::Timeout {
            address,
            seconds: s,
            during: d,
        } => {
            assert_eq!((*s, *d), (seconds, during), "{error}");
            assert!(address.contains("@127.0.0.1:"), "{error}");
        }
        other => panic!("not a timeout: {other:?}"),
    }
}

/// `dnsfix facts` over the lab with `--ssh-persist 0`, its control sockets below `xdg`.
fn facts_closing(lab: &Lab, xdg: &Path) -> Command {
    Dnsfix::new(["facts", "--ssh-persist", "0", "--format", "json"])
        .lab(lab, &lab.inventory())
        .env("XDG_RUNTIME_DIR", xdg)
        .stdin(Stdio::null())
        .command()
}

/// Kills what is left below `dir` (the processes this test's dnsfix started) and says
/// what it was.
fn left_behind(dir: &Path) -> String {
    let left = ssh_processes(dir);
    for (pid, _) in &left {
        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
    }
    format!("{left:#?}")
}

/// With `--ssh-persist 0` nothing dnsfix started outlives the run: every master ends with
/// its last session, and when dnsfix is killed (SIGKILL, so no cleanup of its own runs) in
/// the middle of a command, the master exits by itself once the node's command is done
/// and it has been idle for its few seconds, instead of living on for good.
#[test]
fn with_persist_0_no_master_outlives_dnsfix_even_a_killed_one() {
    let lab = start(&["healthy", "healthy"]);
    let xdg = private_dir(&lab, "xdg");
    let out: Output = facts_closing(&lab, &xdg).output().expect("dnsfix runs");
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(
        wait_for(Duration::from_secs(5), || ssh_processes(&xdg).is_empty()),
        "left after a run: {}",
        left_behind(&xdg)
    );

    // The gather now spends 3 s in systemctl on every node, its master open meanwhile.
    for node in &lab.nodes {
        lab.exec(
            &node.name,
            "mkdir -p /usr/local/sbin && printf '#!/bin/sh\\nsleep 3\\nexec /usr/local/bin/systemctl \"$@\"\\n' \
             >/usr/local/sbin/systemctl && chmod 755 /usr/local/sbin/systemctl",
        );
    }
    let mut dnsfix = facts_closing(&lab, &xdg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("dnsfix runs");
    let master = wait_for(Duration::from_secs(10), || {
        ssh_processes(&xdg).iter().any(|(_, c)| c.contains("[mux]"))
    });
    dnsfix.kill().expect("SIGKILL");
    let _ = dnsfix.wait();
    assert!(master, "no master came up: {}", left_behind(&xdg));
    // The node's command ends within 3 s, then the master is idle; 10 s is its idle time
    // with --ssh-persist 0, the rest a margin for a loaded machine.
    let started = Instant::now();
    let gone = wait_for(Duration::from_secs(20), || ssh_processes(&xdg).is_empty());
    assert!(gone, "still running: {}", left_behind(&xdg));
    eprintln!(
        "the master ended {:?} after dnsfix was killed",
        started.elapsed()
    );
}

/// A signal that ends dnsfix ends every ssh it started, though they are in process groups
/// of their own (out of the terminal's Ctrl-C): Ctrl-C (SIGINT) to a `plan`, SIGTERM to a
/// `facts`, each waiting on one node whose sshd never sends a banner (an ssh there waits
/// its whole 60 s connect timeout) and on one whose gather is in the middle of a command
/// (a master of the run's own, `--ssh-persist 0`, and its client). dnsfix exits as the
/// signal would have ended it (130, 143), and within a few seconds no ssh of the run is
/// left: not the one logging in, not the client, not the master.
#[test]
fn a_signal_ends_dnsfix_and_every_ssh_it_started() {
    let lab = start(&["healthy", "healthy"]);
    let (busy, frozen) = (lab.nodes[0].name.clone(), lab.nodes[1].name.clone());
    lab.freeze(&frozen);
    // The gather now spends 30 s in systemctl there, its ssh and master open meanwhile.
    lab.exec(
        &busy,
        "mkdir -p /usr/local/sbin && printf '#!/bin/sh\\nsleep 30\\nexec /usr/local/bin/systemctl \"$@\"\\n' \
         >/usr/local/sbin/systemctl && chmod 755 /usr/local/sbin/systemctl",
    );
    let xdg = private_dir(&lab, "xdg");
    for (command, signal, code) in [("plan", "-INT", 130), ("facts", "-TERM", 143)] {
        let mut dnsfix = Dnsfix::new([command, "--ssh-persist", "0", "--connect-timeout", "60"])
            .lab(&lab, &lab.inventory())
            .env("XDG_RUNTIME_DIR", &xdg)
            .stdin(Stdio::null())
            .command()
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("dnsfix runs");
        // Both nodes' ssh started, and the busy node's master is up.
        let under_way = wait_for(Duration::from_secs(20), || {
            let ssh = ssh_processes(&xdg);
            ssh.len() >= 3 && ssh.iter().any(|(_, c)| c.contains("[mux]"))
        });
        assert!(under_way, "{command}: {:?}", ssh_processes(&xdg));
        let sent = Command::new("kill")
            .args([signal, &dnsfix.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success());
        let ended = wait_for(Duration::from_secs(10), || {
            matches!(dnsfix.try_wait(), Ok(Some(_)))
        });
        assert!(ended, "{command}: dnsfix still runs after {signal}");
        let status = dnsfix.wait().expect("wait");
        let gone = wait_for(Duration::from_secs(5), || ssh_processes(&xdg).is_empty());
        assert!(
            gone,
            "{command}: left after {signal}: {}",
            left_behind(&xdg)
        );
        assert_eq!(status.code(), Some(code), "{command} after {signal}");
    }
}

/// Where stderr is gone (the terminal closed, or `2>&1 | tee log` with tee killed by the
/// same Ctrl-C), the first Ctrl-C's report cannot be written: the signal thread lives on,
/// and the second Ctrl-C still ends dnsfix (130) and its ssh.
#[test]
fn a_second_ctrl_c_ends_a_rollback_whose_stderr_is_gone() {
    let lab = start(&["healthy"]);
    let node = lab.nodes[0].name.clone();
    lab.freeze(&node);
    let xdg = private_dir(&lab, "xdg");
    // The record of an apply that changed a sysctl on the node: the rollback connects.
    let run = "20261130T100000Z-deadbeef";
    let runs = lab.dir.join("state/runs");
    std::fs::create_dir_all(&runs).expect("state dir");
    let record = serde_json::json!({
        "kind": "dnsfix-run", "format_version": 1, "dnsfix_version": "0.1.0",
        "run_id": run, "command": "apply", "started": "2026-11-30T10:00:00Z",
        "finished": "", "inventory": lab.inventory(), "plan_file": null,
        "plan_created": "2026-11-30T09:59:00Z",
        "hosts": [{"host": node, "outcome": "pending", "planned": [{
            "type": "sysctl", "name": "net.ipv4.ip_forward", "before": "0", "after": "1",
            "reasons": [{"playbook": "bridge-netfilter", "task": "t", "fixes": ["DNS-IP-FORWARD"]}]
        }]}]
    });
    std::fs::write(runs.join(format!("{run}.json")), record.to_string()).expect("record");
    let mut dnsfix = Dnsfix::new(["rollback", "--yes", "--connect-timeout", "60", run])
        .lab_apply(&lab, &lab.inventory())
        .env("XDG_RUNTIME_DIR", &xdg)
        .command()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("dnsfix runs");
    let started = wait_for(Duration::from_secs(20), || !ssh_processes(&xdg).is_empty());
    assert!(started, "no ssh started");
    // The reader goes: every write to stderr fails from now on (EPIPE).
    drop(dnsfix.stderr.take());
    drop(dnsfix.stdout.take());
    for _ in 0..2 {
        let sent = Command::new("kill")
            .args(["-INT", &dnsfix.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success());
        std::thread::sleep(Duration::from_millis(500));
    }
    let ended = wait_for(Duration::from_secs(10), || {
        matches!(dnsfix.try_wait(), Ok(Some(_)))
    });
    if !ended {
        let _ = dnsfix.kill();
    }
    assert!(ended, "dnsfix still runs after the second Ctrl-C");
    let status = dnsfix.wait().expect("wait");
    assert_eq!(status.code(), Some(130));
    let gone = wait_for(Duration::from_secs(5), || ssh_processes(&xdg).is_empty());
    assert!(gone, "left after the second Ctrl-C: {}", left_behind(&xdg));
}

/// A panic on the main thread (here `apply --format json` saying "nothing to apply" on a
/// stderr that is gone: `eprint!` panics on EPIPE) skips `main`'s `end_all`, but not the
/// unwinding: every session dropped ends its master, so no ssh dnsfix started is left, not
/// even for the run's masters' idle time.
#[test]
fn a_panic_on_the_main_thread_still_ends_every_ssh() {
    let lab = start(&["healthy"]);
    let xdg = private_dir(&lab, "xdg");
    let mut dnsfix = Dnsfix::new([
        "apply",
        "--yes",
        "--format",
        "json",
        "--connect-timeout",
        "60",
    ])
    .lab_apply(&lab, &lab.inventory())
    .env("XDG_RUNTIME_DIR", &xdg)
    .command()
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .expect("dnsfix runs");
    // The reader goes before dnsfix writes anything: every write to stderr fails (EPIPE).
    drop(dnsfix.stderr.take());
    let ended = wait_for(Duration::from_secs(60), || {
        matches!(dnsfix.try_wait(), Ok(Some(_)))
    });
    if !ended {
        let _ = dnsfix.kill();
    }
    assert!(ended, "dnsfix still runs");
    let status = dnsfix.wait().expect("wait");
    assert_eq!(status.code(), Some(101), "a panic's exit status");
    // Right away: a master left to its idle time would still be there.
    let left = ssh_processes(&xdg);
    assert!(
        left.is_empty(),
        "left after the panic: {}",
        left_behind(&xdg)
    );
}

/// A session dropped unclosed (its task panicked or was cancelled) still ends the run's own
/// master: the node sees the connection closed at once, not after the master's idle time.
#[test]
fn a_session_dropped_unclosed_still_ends_its_master() {
    let lab = start(&["healthy"]);
    let node = lab.nodes[0].name.clone();
    // Inside the node, every SSH connection is one from the lab's forwarder to sshd.
    let connections = || {
        let count = lab.exec(&node, "ss -Htn state established '( sport = :22 )' | wc -l");
        count.trim().parse::<usize>().expect("a count")
    };
    let transport = Transport::new(options(&lab)).expect("transport");
    runtime().block_on(async {
        let mut session = connect(&transport, &lab, &node).await;
        session.exec("true", b"").await.expect("true");
        assert_eq!(connections(), 1, "the master's connection");
        drop(session);
    });
    assert!(
        wait_for(Duration::from_secs(6), || connections() == 0),
        "the master lives on"
    );
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

/// A master of the run's own is stopped, not killed, when its last session closes: a
/// session to the same host that enters just then (apply's kubectl session beside the
/// control-plane node's own) and rides the master still finishes its command, and one that
/// comes after logs in afresh. With `ssh -O exit` its command ended with a silent 255,
/// taken for a lost connection.
#[test]
fn closing_the_last_session_never_ends_a_command_another_session_runs_there() {
    let lab = start(&["healthy"]);
    let node = lab.nodes[0].name.clone();
    let transport = Transport::new(options(&lab)).expect("transport");
    let target = lab.target(&node);
    runtime().block_on(async {
        for round in 0..20 {
            let mut first = transport.connect(&target).await.expect("connect");
            first.exec("true", b"").await.expect("true");
            // `first` leaves (the master's last session) before `second` enters, and its
            // control command races `second`'s command to the master.
            let second = async {
                let mut second = transport.connect(&target).await.expect("connect");
                let out = second.exec("sleep 1; echo done", b"").await;
                second.close().await;
                out
            };
            let ((), out) = tokio::join!(first.close(), second);
            let out = out.unwrap_or_else(|e| panic!("round {round}: {e}"));
            assert_eq!(out.stdout, b"done\n", "round {round}");
            assert_eq!(out.exit_status, Some(0), "round {round}");
        }
    });
}

/// A session may wait long between two commands (apply waits for the other nodes' DNS
/// pods, up to the health timeout each): the run's own master, idle for 10 s at most
/// otherwise, stays up while the session holds it, so the next command needs no new login
/// on a node whose resolver may have just changed.
#[test]
fn a_session_waiting_between_commands_keeps_its_master() {
    let lab = start(&["healthy"]);
    let node = lab.nodes[0].name.clone();
    let transport = Transport::new(options(&lab)).expect("transport");
    runtime().block_on(async {
        let mut session = connect(&transport, &lab, &node).await;
        session.exec("true", b"").await.expect("true");
        let before = logins(&lab);
        tokio::time::sleep(Duration::from_secs(15)).await;
        let out = session.exec("echo again", b"").await.expect("again");
        assert_eq!(out.stdout, b"again\n");
        assert_eq!(logins(&lab), before, "a new login after the wait");
        session.close().await;
    });
}

/// The connection lost under a command (its sshd session killed: `kill -9 $PPID` ends
/// that connection alone) is a lost connection, not the command's exit 255, even when the
/// master's socket is still there as its client ends.
#[test]
fn a_connection_lost_under_a_command_is_not_the_commands_exit_255() {
    let lab = start(&["healthy"]);
    let node = lab.nodes[0].name.clone();
    let transport = Transport::new(options(&lab)).expect("transport");
    runtime().block_on(async {
        for round in 0..4 {
            let mut session = connect(&transport, &lab, &node).await;
            session.exec("true", b"").await.expect("true");
            let lost = session.exec("kill -9 $PPID; sleep 5", b"").await;
            assert!(
                matches!(lost, Err(TransportError::Disconnected { .. })),
                "round {round}: {lost:?}"
            );
            session.close().await;
        }
    });
}

/// A command given up on (its timeout) may still run on the node, and sshd keeps its
/// channel open meanwhile: a master only stopped would wait for it, unreachable, as long
/// as it runs. Its last session ends it outright.
#[test]
fn a_master_whose_command_was_given_up_on_ends_with_its_session() {
    let lab = start(&["healthy"]);
    let node = lab.nodes[0].name.clone();
    let connections = || {
        let count = lab.exec(&node, "ss -Htn state established '( sport = :22 )' | wc -l");
        count.trim().parse::<usize>().expect("a count")
    };
    let transport = Transport::new(SshOptions {
        command_timeout: Duration::from_secs(2),
        ..options(&lab)
    })
    .expect("transport");
    runtime().block_on(async {
        let mut session = connect(&transport, &lab, &node).await;
        session.exec("true", b"").await.expect("true");
        let slow = session.exec("sleep 600", b"").await;
        assert!(
            matches!(slow, Err(TransportError::Timeout { .. })),
            "{slow:?}"
        );
        session.close().await;
    });
    assert!(
        wait_for(Duration::from_secs(8), || connections() == 0),
        "the master lives on while the command it gave up on runs"
    );
}
