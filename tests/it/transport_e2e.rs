//! Both SSH backends against the lab's real sshd: what a node sends back is bounded. A
//! node command that floods stdout is ended as it passes the session's output cap, at
//! once (not at the command timeout), failing with a message that names the node's
//! address and the cap; a flood on stderr is cut and the command still answers; stdin is
//! sent while the output is read. A connection outlives a command silent for longer than
//! russh's inactivity bound, and one lost under a command is a lost connection.

use std::time::{Duration, Instant};

use dnsfix::transport::{HostKeyPolicy, SshBackend, SshOptions, Target, Transport, TransportError};

use crate::common::lab::Lab;

/// A lab of one healthy node: the lab, the node's name and target, and a runtime to drive
/// the transport with.
fn one_node() -> (Lab, String, Target, tokio::runtime::Runtime) {
    let lab = Lab::start(&["healthy"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
    let node = lab.nodes[0].name.clone();
    let target = lab.target(&node);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    (lab, node, target, runtime)
}

/// russh to `lab`'s nodes: its known_hosts and key, 5 s to connect, 30 s a command.
fn russh_options(lab: &Lab) -> SshOptions {
    SshOptions {
        backend: SshBackend::Russh,
        known_hosts: Some(lab.known_hosts()),
        private_key: Some(lab.key()),
        connect_timeout: Duration::from_secs(5),
        command_timeout: Duration::from_secs(30),
        ..SshOptions::default()
    }
}

#[test]
fn a_node_flooding_stdout_is_cut_off_at_the_cap_over_either_backend() {
    let (lab, node, target, runtime) = one_node();
    for backend in [SshBackend::OpenSsh, SshBackend::Russh] {
        let transport = Transport::new(SshOptions {
            backend,
            known_hosts: Some(lab.known_hosts()),
            private_key: Some(lab.key()),
            connect_timeout: Duration::from_secs(5),
            command_timeout: Duration::from_secs(120),
            ssh_persist: 0,
            ..SshOptions::default()
        })
        .expect("transport");
        runtime.block_on(async {
            let mut session = transport.connect(&target).await.expect("connect");
            session.exec("true", b"").await.expect("logged in");
            for flood in ["head -c 40000000 /dev/zero", "yes"] {
                let started = Instant::now();
                let err = match session.exec(flood, b"").await {
                    // Not the bytes themselves: a panic message of 40 MB.
                    Ok(out) => panic!("{backend:?} {flood}: all {} bytes kept", out.stdout.len()),
                    Err(e) => e,
                };
                let took = started.elapsed();
                assert!(took < Duration::from_secs(60), "{backend:?} {flood}: {took:?}");
                assert_eq!(err.kind(), "output_too_large", "{backend:?} {flood}: {err}");
                assert_eq!(
                    err.to_string(),
                    format!(
                        "the command's output on {}@127.0.0.1:{} passed 16 MiB, the most dnsfix reads of one command; nothing of it was used",
                        lab.node(&node).user,
                        lab.node(&node).port
                    ),
                    "{backend:?}"
                );
            }
            // stderr is cut, not failed: the command's answer and status are whole.
            let out = session
                .exec("head -c 3000000 /dev/zero >&2; echo answer", b"")
                .await
                .unwrap_or_else(|e| panic!("{backend:?}: {e}"));
            assert_eq!(out.stdout, b"answer\n", "{backend:?}");
            assert_eq!(out.exit_status, Some(0), "{backend:?}");
            assert!(
                out.stderr
                    .ends_with(b"[dnsfix kept the first 1 MiB of this stderr and dropped the rest]\n"),
                "{backend:?}"
            );
            // stdin flows while the output is read: a command that prints 8 MB before it
            // reads its 8 MB of stdin answers at once (russh sent all of stdin first, and
            // the session stalled until the command timeout).
            let started = Instant::now();
            let out = session
                .exec("head -c 8000000 /dev/zero; wc -c", &vec![b'x'; 8 * 1024 * 1024])
                .await
                .unwrap_or_else(|e| panic!("{backend:?}: {e}"));
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{backend:?}: {:?}",
                started.elapsed()
            );
            assert_eq!(out.stdout.len(), 8_000_000 + "8388608\n".len(), "{backend:?}");
            assert!(out.stdout.ends_with(b"8388608\n"), "{backend:?}");
            // The session still works after a command cut off.
            let out = session.exec("echo still", b"").await.expect("still there");
            assert_eq!(out.stdout, b"still\n", "{backend:?}");
            session.close().await;
        });
    }
}

/// apply's node script runs silent for longer than a read may (its handlers wait for a
/// restarted kubelet to answer): with the session's bound raised, the connection outlives
/// the silence. russh's inactivity bound (the larger of the command and login timeouts,
/// plus the connect timeout: 6 s here) is kept from closing it by keepalives the server
/// answers, on a host known_hosts knows as well as on one it does not.
#[test]
fn a_command_silent_past_the_inactivity_bound_keeps_its_connection_over_either_backend() {
    let (lab, _, target, runtime) = one_node();
    let empty = lab.dir.join("known_hosts.empty");
    std::fs::write(&empty, "").expect("empty known_hosts");
    let cases = [
        (SshBackend::Russh, lab.known_hosts(), HostKeyPolicy::Strict),
        (SshBackend::Russh, empty, HostKeyPolicy::AcceptNew),
        (
            SshBackend::OpenSsh,
            lab.known_hosts(),
            HostKeyPolicy::Strict,
        ),
    ];
    for (backend, known_hosts, host_keys) in cases {
        let transport = Transport::new(SshOptions {
            backend,
            known_hosts: Some(known_hosts.clone()),
            host_keys,
            private_key: Some(lab.key()),
            connect_timeout: Duration::from_secs(5),
            login_timeout: Duration::from_secs(1),
            command_timeout: Duration::from_secs(1),
            ssh_persist: 0,
            ..SshOptions::default()
        })
        .expect("transport");
        let case = format!("{backend:?} with {}", known_hosts.display());
        runtime.block_on(async {
            let mut session = transport.connect(&target).await.expect("connect");
            session.set_command_timeout(Duration::from_secs(30));
            let started = Instant::now();
            let out = session
                .exec("sleep 7; echo answered", b"")
                .await
                .unwrap_or_else(|e| panic!("{case}: {e}"));
            assert_eq!(out.stdout, b"answered\n", "{case}");
            assert!(started.elapsed() >= Duration::from_secs(7), "{case}");
            session.close().await;
        });
    }
}

/// The connection lost under a command (its sshd session killed: `kill -9 $PPID` ends that
/// connection alone) is a lost connection over russh too, as over openssh
/// (openssh_e2e::a_connection_lost_under_a_command_is_not_the_commands_exit_255): never a
/// command that answered nothing and ended without a status; nor, lost after the command's
/// exit status but before the channel's close, a command whose output came whole.
#[test]
fn a_connection_lost_under_a_command_is_a_lost_connection_over_russh() {
    let (lab, _, target, runtime) = one_node();
    let transport = Transport::new(russh_options(&lab)).expect("transport");
    runtime.block_on(async {
        for round in 0..4 {
            let mut session = transport.connect(&target).await.expect("connect");
            session.exec("true", b"").await.expect("logged in");
            let lost = session.exec("kill -9 $PPID; sleep 5", b"").await;
            assert!(
                matches!(lost, Err(TransportError::Disconnected { .. })),
                "round {round}: {lost:?}"
            );
            session.close().await;
            // Lost after the exit status (the shell has exited, a child of its still
            // holds the output open): whether the output came whole is not known.
            let mut session = transport.connect(&target).await.expect("connect");
            let lost = session
                .exec("p=$PPID; (echo part; sleep 2; kill -9 $p) & exit 0", b"")
                .await;
            assert!(
                matches!(&lost, Err(TransportError::Disconnected { detail, .. }) if detail.contains("after the command's exit status")),
                "round {round}: {lost:?}"
            );
            session.close().await;
        }
    });
}

/// `--accept-new-host-keys` trusts a new key by recording it: where the known_hosts file
/// cannot be written (here its directory is a regular file), russh refuses the key and
/// says why, never "unknown: pass --accept-new-host-keys" to a user who did.
#[test]
fn a_new_key_that_cannot_be_recorded_is_refused_over_russh() {
    let (lab, _, target, runtime) = one_node();
    let file = lab.dir.join("not-a-directory");
    std::fs::write(&file, "").expect("a regular file");
    let transport = Transport::new(SshOptions {
        known_hosts: Some(file.join("known_hosts")),
        host_keys: HostKeyPolicy::AcceptNew,
        ..russh_options(&lab)
    })
    .expect("transport");
    let err = match runtime.block_on(transport.connect(&target)) {
        Ok(_) => panic!("connected with a key it could not record"),
        Err(e) => e,
    };
    assert_eq!(err.kind(), "host_key_refused", "{err}");
    let message = err.to_string();
    assert!(
        message.contains("--accept-new-host-keys could not record it in")
            && message.contains("not-a-directory/known_hosts"),
        "{message}"
    );
}

/// Over russh as over openssh (openssh_e2e::a_slow_login_is_not_cut_short_by_the_connect_timeout_and_commands_keep_theirs),
/// a sshd slow to let one in (each key check waits 6 s here, as reverse DNS on a node whose
/// DNS is broken makes it wait) has the connect timeout and the login timeout from the
/// connect, not the connect timeout alone; a login past them fails as one.
#[test]
fn a_slow_login_over_russh_gets_the_login_timeout() {
    let (lab, node, target, runtime) = one_node();
    lab.slow_login(&node, 6);
    let options = |login: u64| SshOptions {
        login_timeout: Duration::from_secs(login),
        command_timeout: Duration::from_secs(5),
        ..russh_options(&lab)
    };
    runtime.block_on(async {
        let transport = Transport::new(options(60)).expect("transport");
        let started = Instant::now();
        let mut session = transport
            .connect(&target)
            .await
            .unwrap_or_else(|e| panic!("after {:?}: {e}", started.elapsed()));
        assert!(started.elapsed() >= Duration::from_secs(6), "a slow login");
        let out = session.exec("echo in", b"").await.expect("in");
        assert_eq!(out.stdout, b"in\n");
        session.close().await;

        let impatient = Transport::new(options(1)).expect("transport");
        let started = Instant::now();
        let err = match impatient.connect(&target).await {
            Ok(_) => panic!("logged in within 6 s of a 6 s key check"),
            Err(e) => e,
        };
        assert!(
            started.elapsed() < Duration::from_secs(12),
            "{:?}",
            started.elapsed()
        );
        assert!(
            err.to_string()
                .starts_with("timed out after 6s while logging in to "),
            "{err}"
        );
        assert!(err.unreached(), "{err}");
    });
}
