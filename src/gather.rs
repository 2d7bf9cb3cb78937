//! The gather orchestrator: one session and one remote exec per host, hosts concurrently
//! up to `--forks`. A host that fails is a [`HostOutcome`] with an error; it never stops
//! the others. The orchestrator never prints: it emits [`Event`]s.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::task::JoinSet;

use crate::events::{Event, EventSink};
use crate::facts::NodeFacts;
use crate::facts::raw::{self, FrameError, RawFacts, SharedContents};
use crate::inventory::{ConnectionKind, Host};
use crate::transport::{BECOME_ROOT_SH, Session, Target, Transport, TransportError, check_sudo};

/// Why one host has no facts.
#[derive(Debug, Clone, thiserror::Error)]
pub enum HostError {
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error("the gather script failed with status {status}: {stderr}")]
    Script { status: String, stderr: String },
}

impl HostError {
    pub fn kind(&self) -> &'static str {
        match self {
            HostError::Transport(e) => e.kind(),
            HostError::Frame(_) => "bad_output",
            HostError::Script { .. } => "script_failed",
        }
    }
}

/// What a gather reads beside the script's own files.
#[derive(Debug, Clone, Default)]
pub struct Reads {
    /// More paths (what the playbooks in use may write).
    pub extra: Vec<String>,
    /// Ask the kubelet's binary for its version (`kubelet --version`). A plan that reads
    /// the cluster has every running kubelet's version from it, and spares each node a
    /// run of the kubelet's Go binary.
    pub kubelet_version: bool,
}

/// One host's result.
#[derive(Debug)]
pub struct HostOutcome {
    pub host: String,
    pub elapsed: Duration,
    pub result: Result<NodeFacts, HostError>,
}

/// Runs `work` for every host, at most `forks` at once, and returns the results in the
/// order the hosts were given; a host whose task panicked gets `None` (and a warning).
pub async fn fan_out<T, F, Fut>(
    hosts: &[&Host],
    forks: usize,
    sink: &Arc<dyn EventSink>,
    work: F,
) -> Vec<Option<T>>
where
    T: Send + 'static,
    F: Fn(Host) -> Fut,
    Fut: std::future::Future<Output = T> + Send + 'static,
{
    // A host's task is spawned when a fork is free, in host order: spawned all at once,
    // a thousand waiting tasks each held its future and a copy of its host.
    let mut tasks = JoinSet::new();
    let mut waiting = hosts.iter().enumerate();
    let mut out: Vec<Option<T>> = (0..hosts.len()).map(|_| None).collect();
    loop {
        while tasks.len() < forks.max(1) {
            let Some((index, host)) = waiting.next() else {
                break;
            };
            let job = work((*host).clone());
            tasks.spawn(async move { (index, job.await) });
        }
        let Some(joined) = tasks.join_next().await else {
            break;
        };
        match joined {
            Ok((index, result)) => out[index] = Some(result),
            // A panicking host task is a bug; the caller reports it as that host's failure.
            Err(e) => sink.event(Event::Warning {
                message: format!("internal error in a host task: {e}"),
            }),
        }
    }
    out
}

/// Gathers facts from every host, in parallel, and returns the outcomes in the order the
/// hosts were given.
pub async fn gather(
    hosts: &[&Host],
    transport: Arc<Transport>,
    forks: usize,
    sink: Arc<dyn EventSink>,
    reads: Arc<Reads>,
) -> Vec<HostOutcome> {
    // Identical file bodies are kept once across the hosts (see SharedContents).
    let shared = Arc::new(std::sync::Mutex::new(SharedContents::default()));
    let outcomes = fan_out(hosts, forks, &sink, |host| {
        let transport = Arc::clone(&transport);
        let sink = Arc::clone(&sink);
        let reads = Arc::clone(&reads);
        let shared = Arc::clone(&shared);
        async move {
            let started = Instant::now();
            sink.event(Event::HostStarted {
                host: host.name.clone(),
            });
            let result = gather_one(&host, &transport, sink.as_ref(), &reads, &shared).await;
            let elapsed = started.elapsed();
            match &result {
                Ok(facts) => {
                    // Gathered, but without what systemd would have said: worth a line.
                    if let Some(secs) = facts.services.systemctl_cut {
                        sink.event(Event::Warning {
                            message: format!(
                                "{}: systemctl did not answer within {secs}s (systemd, PID 1, \
                                 busy or stuck): its units' states are unknown, and no restart \
                                 is planned or applied there",
                                host.name
                            ),
                        });
                    }
                    sink.event(Event::FactsGathered {
                        host: host.name.clone(),
                        elapsed,
                    });
                }
                Err(e) => sink.event(Event::HostFailed {
                    host: host.name.clone(),
                    kind: e.kind(),
                    error: e.to_string(),
                }),
            }
            HostOutcome {
                host: host.name.clone(),
                elapsed,
                result,
            }
        }
    })
    .await;
    outcomes
        .into_iter()
        .zip(hosts)
        .map(|(o, h)| {
            o.unwrap_or_else(|| HostOutcome {
                host: h.name.clone(),
                elapsed: Duration::ZERO,
                result: Err(HostError::Transport(TransportError::Other(
                    "internal error".into(),
                ))),
            })
        })
        .collect()
}

async fn gather_one(
    host: &Host,
    transport: &Transport,
    sink: &dyn EventSink,
    reads: &Reads,
    shared: &std::sync::Mutex<SharedContents>,
) -> Result<NodeFacts, HostError> {
    let target = Target {
        host: host.name.clone(),
        connection: host.connection(),
    };
    let mut session = transport.connect(&target).await?;
    sink.event(Event::HostConnected {
        host: host.name.clone(),
    });
    let result = run_script(&mut session, &target, reads, shared).await;
    session.close().await;
    let raw = result?;
    Ok(NodeFacts::from_owned(&host.name, raw))
}

/// Runs a POSIX sh script (given on stdin) as root on the node: through `sudo -n` for a
/// non-root login, as is for `local` (on this machine dnsfix runs as the user it runs as:
/// `local` never escalates, and a file it cannot read is reported as unknown).
pub async fn run_as_root(
    session: &mut Session,
    target: &Target,
    script: &str,
) -> Result<crate::transport::ExecOutput, HostError> {
    let command = if target.connection.kind == ConnectionKind::Local {
        "/bin/sh -s"
    } else {
        BECOME_ROOT_SH
    };
    let output = session.exec(command, script.as_bytes()).await?;
    check_sudo(target, &output)?;
    Ok(output)
}

/// Gathers one host's facts over an open session (one exec), without asking the
/// kubelet's binary for its version.
pub async fn gather_session(
    session: &mut Session,
    target: &Target,
    extra: &[String],
) -> Result<NodeFacts, HostError> {
    let reads = Reads {
        extra: extra.to_vec(),
        kubelet_version: false,
    };
    gather_session_with(session, target, &reads).await
}

/// Gathers one host's facts over an open session (one exec), reading what `reads` says.
pub async fn gather_session_with(
    session: &mut Session,
    target: &Target,
    reads: &Reads,
) -> Result<NodeFacts, HostError> {
    let shared = std::sync::Mutex::new(SharedContents::default());
    let raw = run_script(session, target, reads, &shared).await?;
    Ok(NodeFacts::from_owned(&target.host, raw))
}

async fn run_script(
    session: &mut Session,
    target: &Target,
    reads: &Reads,
    shared: &std::sync::Mutex<SharedContents>,
) -> Result<RawFacts, HostError> {
    let nonce = crate::util::nonce();
    let script = raw::script_for(
        &nonce,
        &reads.extra,
        reads.kubelet_version,
        raw::systemctl_wait(session.command_timeout()),
    );
    let output = run_as_root(session, target, &script).await?;
    // A poisoned lock only means another host's task panicked: the map is still whole.
    let parsed = RawFacts::parse_shared(
        &output.stdout,
        &nonce,
        &mut shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    match parsed {
        Ok(raw) => Ok(raw),
        Err(frame) => {
            // The node's words: escaped, so they cannot pass for lines of the report.
            let stderr =
                crate::text::escape(String::from_utf8_lossy(&output.stderr).trim()).into_owned();
            let status = output
                .exit_status
                .map_or("unknown".to_owned(), |s| s.to_string());
            if output.exit_status != Some(0) && !stderr.is_empty() {
                Err(HostError::Script { status, stderr })
            } else if output.exit_status == Some(255) && output.stdout.is_empty() {
                // Over openssh an exec sshd refuses is a silent 255 (the master's mux
                // client says nothing at LogLevel ERROR); russh is told (ExecRefused).
                // (dnsfix's words here, in the place of the node's stderr.)
                Err(HostError::Script {
                    status,
                    stderr: "it printed nothing at all (sshd may have refused to start it: a \
                             node at its process limit logs `fork: Resource temporarily \
                             unavailable`)"
                        .into(),
                })
            } else {
                Err(HostError::Frame(frame))
            }
        }
    }
}
