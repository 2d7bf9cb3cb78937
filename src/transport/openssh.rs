//! The `openssh` transport: the system `ssh` with a ControlMaster per host.
//!
//! Going through the user's own ssh binary is what makes `~/.ssh/config`, ProxyJump,
//! agents, certificates and site-specific crypto policy work without dnsfix knowing about
//! them. Errors come back as ssh's own text, which is classified into [`TransportError`].
//!
//! Every command is one `ssh -o ControlMaster=auto` that, where no master answers on the
//! host's control socket, becomes the master (ControlPersist moves the master to the
//! background and this ssh carries on as its client), and is a client of the master where
//! one answers. A first contact costs one ssh process and one handshake, as a plain
//! `ssh host cmd` does, not a master started with `-M -N -f`, waited for, then a second
//! ssh for the command. ssh's own messages go to a log per command (`-E`): a command's
//! stderr is the node's, and an exit 255 is ssh's failure only when that log says so.
//! The connect timeout bounds the TCP connect and the banner (ssh's ConnectTimeout); a
//! login gets [`super::LOGIN_TIMEOUT`] more; the command timeout starts when the login is
//! done.
//!
//! Masters persist for `--ssh-persist` seconds after a run (like Ansible's
//! `ControlPersist=60s`), so `facts`, `check`, `plan` and `apply` in a row pay for one
//! handshake per host, not one per command. A master is only reused for the same address,
//! port, user, key, ssh_config, known_hosts and host key policy it was made with (its
//! socket is named after them, files by their canonical paths), and never by `apply` or
//! `rollback`: what writes to a node connects afresh, so a host key that changed since the
//! plan is checked. Their masters, and all masters with `--ssh-persist 0`, are the run's
//! own: stopped when their last session closes (or is dropped), kept from idling out
//! while a session holds them, however long it waits between two commands, told to exit
//! when dnsfix ends without closing its sessions (a signal, [`super::children`]), and never
//! idle for more than [`RUN_MASTER_IDLE`] should dnsfix die without a word (SIGKILL).
//! This module never leaves a master without an idle limit.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::{ExecOutput, HostKeyPolicy, Phase, SshOptions, Target, TransportError, bounded};
use crate::inventory::{shell_in_host, shell_in_user};

/// How long a master that is not left for the next run (`--ssh-persist 0`, and every
/// master of `apply` and `rollback`) waits idle before it exits by itself. It is stopped
/// with `ssh -O stop` when its last session closes, or when a session is dropped unclosed
/// (a panic, a cancelled task); this bound is for when dnsfix itself dies (SIGKILL,
/// Ctrl-C: ControlPersist puts the master in a session of its own, out of reach of the
/// terminal's signals). A session may wait long between two commands (apply waits for the
/// other nodes' DNS pods, a minute each at most): while a session holds the master, it
/// checks it every [`KEEP_ALIVE`], which starts the idle count again; once dnsfix is gone
/// the checks stop and the master exits within this bound. A master lives on while a node
/// command it carries still runs, whatever this bound.
const RUN_MASTER_IDLE: Duration = Duration::from_secs(10);

/// How often a session holding a master of the run's own checks it (`ssh -O check`), to
/// keep it from idling out: well within [`RUN_MASTER_IDLE`].
const KEEP_ALIVE: Duration = Duration::from_secs(3);

/// How often a running first command looks whether its master answers yet.
const LOGIN_POLL: Duration = Duration::from_millis(50);

/// One gate per control socket (see [`Masters`]): held by the session that may start the
/// master, it keeps why that session could not connect, if it could not.
type Gate = Arc<tokio::sync::Mutex<Option<TransportError>>>;

/// The control sockets this run's sessions use, each with its gate and how many sessions
/// hold it. The gate makes a second session to the same host in this run (plan's cluster
/// read beside the gather) wait for the first one's master instead of logging in a
/// second time, and fail as the first did when that one could not connect (a host that
/// does not answer costs one connect timeout, not one per session). The count tells the
/// last session to close a master of the run's own, which ends it; whether a command
/// was given up on there says how (see [`control_command`]).
#[derive(Debug, Default)]
struct Masters(std::sync::Mutex<HashMap<PathBuf, Master>>);

#[derive(Debug, Default)]
struct Master {
    gate: Gate,
    sessions: usize,
    /// A command through it was given up on (timed out, or cancelled): it may still run
    /// on the node, holding its channel open.
    abandoned: bool,
}

impl Masters {
    fn enter(&self, ctl: &Path) -> Gate {
        let mut masters = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let master = masters.entry(ctl.to_path_buf()).or_default();
        master.sessions += 1;
        Arc::clone(&master.gate)
    }

    fn abandon(&self, ctl: &Path) {
        let mut masters = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(master) = masters.get_mut(ctl) {
            master.abandoned = true;
        }
    }

    /// When the session leaving was the last one on `ctl`: whether a command through it
    /// was given up on.
    fn leave(&self, ctl: &Path) -> Option<bool> {
        let mut masters = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(master) = masters.get_mut(ctl) else {
            return Some(false);
        };
        master.sessions = master.sessions.saturating_sub(1);
        if master.sessions > 0 {
            return None;
        }
        masters.remove(ctl).map(|m| m.abandoned)
    }
}

/// Marks the master of a command given up on (see [`Master::abandoned`]) unless the
/// command came to an end: dropped with the command's future, or kept on a timeout.
struct Pending<'a> {
    masters: &'a Masters,
    ctl: &'a Path,
    done: bool,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.masters.abandon(self.ctl);
        }
    }
}

#[derive(Debug)]
pub struct OpenSshTransport {
    control_dir: PathBuf,
    /// Seconds an idle master outlives the run; 0 closes masters at the end of the run.
    persist: u64,
    /// Resume a master an earlier run left (not for apply and rollback).
    reuse: bool,
    /// Mixed into the names of the masters that are this run's own.
    run: String,
    /// What a reusable master must have been made with, beyond the target itself, its
    /// files named by their canonical paths.
    options_digest: String,
    /// The ssh options every connection of the run shares: batch mode, host key policy,
    /// timeouts, known_hosts, ssh_config.
    common: Vec<OsString>,
    default_user: Option<String>,
    default_key: Option<PathBuf>,
    connect_timeout: Duration,
    login_timeout: Duration,
    command_timeout: Duration,
    masters: Arc<Masters>,
}

impl OpenSshTransport {
    pub fn new(options: &SshOptions) -> Result<OpenSshTransport, TransportError> {
        let control_dir = control_dir()?;
        remove_dead_masters(&control_dir);
        Ok(OpenSshTransport::with_control_dir(options, control_dir))
    }

    fn with_control_dir(options: &SshOptions, control_dir: PathBuf) -> OpenSshTransport {
        let host_keys = match options.host_keys {
            HostKeyPolicy::Strict => "StrictHostKeyChecking=yes",
            HostKeyPolicy::AcceptNew => "StrictHostKeyChecking=accept-new",
        };
        let mut common: Vec<OsString> = [
            "-o",
            "BatchMode=yes",
            "-o",
            host_keys,
            "-o",
            &format!("ConnectTimeout={}", options.connect_timeout.as_secs()),
            "-o",
            "ServerAliveInterval=15",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        if let Some(path) = &options.known_hosts {
            let mut option = OsString::from("UserKnownHostsFile=");
            option.push(path);
            common.extend(["-o".into(), option]);
        }
        if let Some(path) = &options.ssh_config {
            common.extend(["-F".into(), path.into()]);
        }
        let canonical = |path: &Option<PathBuf>| path.as_deref().map(canonical);
        let options_digest = format!(
            "{:?}|{:?}|{:?}|{:?}|{:?}",
            options.host_keys,
            canonical(&options.known_hosts),
            canonical(&options.ssh_config),
            options.user,
            canonical(&options.private_key),
        );
        OpenSshTransport {
            control_dir,
            persist: options.ssh_persist,
            reuse: options.reuse_masters,
            run: crate::util::nonce(),
            options_digest,
            common,
            default_user: options.user.clone(),
            default_key: options.private_key.clone(),
            connect_timeout: options.connect_timeout,
            login_timeout: options.login_timeout,
            command_timeout: options.command_timeout,
            masters: Arc::default(),
        }
    }

    /// A session to `target`. Nothing runs yet: the first command connects, through the
    /// master an earlier run left when there is one.
    pub async fn connect(&self, target: &Target) -> Result<OpenSshSession, TransportError> {
        self.session(target)
    }

    fn session(&self, target: &Target) -> Result<OpenSshSession, TransportError> {
        let args = self.target_args(target)?;
        // A persisting master is found by later runs through its name. One that is closed
        // at the end of the run has a name of this run's own: closing it never ends a
        // master another dnsfix is using, and apply and rollback, which never use a master
        // an earlier run left, never find one.
        let shared = self.persist > 0 && self.reuse;
        let (name, persist) = if shared {
            (self.master_key(target, ""), self.persist)
        } else {
            (
                self.master_key(target, &self.run),
                RUN_MASTER_IDLE.as_secs(),
            )
        };
        let ctl = self.control_dir.join(name);
        let gate = self.masters.enter(&ctl);
        if !shared {
            // Told to exit should dnsfix end without closing its sessions.
            super::children::own_master(&ctl);
        }
        Ok(OpenSshSession {
            target: target.clone(),
            ctl,
            args,
            persist: format!("ControlPersist={persist}s"),
            own: !shared,
            masters: Arc::clone(&self.masters),
            left: false,
            gate,
            connected: false,
            keeper: None,
            connect_timeout: self.connect_timeout,
            login_timeout: self.login_timeout,
            command_timeout: self.command_timeout,
            output_cap: super::OutputCap::default(),
        })
    }

    /// Names the master for this target and these options (and `run`, for a master of this
    /// run's own): 20 hex digits, short enough for a unix socket path (see [`fits`]).
    fn master_key(&self, target: &Target, run: &str) -> String {
        let c = &target.connection;
        let key = c.private_key.as_deref().map(canonical);
        let text = format!(
            "{}|{:?}|{:?}|{:?}|{:?}|{}|{run}",
            c.address, c.port, c.user, key, c.ssh_args, self.options_digest
        );
        let digest = Sha256::digest(text.as_bytes());
        digest.iter().take(10).map(|b| format!("{b:02x}")).collect()
    }

    /// The options that reach `target`, ending with `--` and its address (so that no
    /// address is ever read as an option).
    fn target_args(&self, target: &Target) -> Result<Vec<OsString>, TransportError> {
        let c = &target.connection;
        let user = c.user.as_ref().or(self.default_user.as_ref());
        for (what, text) in [("user", user), ("address", Some(&c.address))] {
            if let Some(text) =
                text.filter(|t| t.chars().any(|c| c.is_whitespace() || c.is_control()))
            {
                return Err(TransportError::Other(format!(
                    "{}: the ssh {what} {:?} holds whitespace or a control character, \
                     which ssh could pass on unquoted to a ProxyCommand (%r, %h); refused",
                    target.host, text
                )));
            }
        }
        let shell = [
            ("user", user, shell_in_user(user.map_or("", String::as_str))),
            ("address", Some(&c.address), shell_in_host(&c.address)),
        ];
        for (what, text, held) in shell {
            if let (Some(text), Some(held)) = (text, held) {
                return Err(TransportError::Other(format!(
                    "{}: the ssh {what} {text:?} holds {held}, which ssh before OpenSSH 9.6 \
                     hands a ProxyCommand or Match exec (%h, %r, %u) for the shell to run \
                     (OpenSSH 9.6 refuses it too); refused",
                    target.host
                )));
            }
        }
        let mut args = self.common.clone();
        if let Some(port) = c.port {
            args.extend(["-p".into(), port.to_string().into()]);
        }
        if let Some(user) = user {
            args.extend(["-l".into(), user.into()]);
        }
        if let Some(key) = c.private_key.as_ref().or(self.default_key.as_ref()) {
            literal_path(key).map_err(|why| {
                TransportError::Other(format!(
                    "the private key (ansible_ssh_private_key_file) {why}"
                ))
            })?;
            // A key given is the only key offered.
            args.extend(["-o".into(), "IdentitiesOnly=yes".into()]);
            args.extend(["-i".into(), key.into()]);
        }
        // The inventory's own options (ansible_ssh_args, _common_args, _extra_args)
        // come last before the destination, as Ansible puts them after its own: for an
        // `-o` option ssh keeps the first value, so dnsfix's batch mode, host key policy and
        // master stay whatever they say; a ProxyCommand or ProxyJump of theirs carries the
        // master's connection like any other.
        args.extend(c.ssh_args.iter().map(OsString::from));
        args.extend(["--".into(), (&c.address).into()]);
        Ok(args)
    }
}

/// The file `path` names, for naming a master: `known_hosts` run from two directories is two
/// files, and `./kh`, `../x/kh` and a symlink to it are one. Canonical where the file
/// exists, else absolute (ssh will say what is wrong with it).
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// ssh's log of one command (`-E`), removed when dropped: also when the command is
/// cancelled (its future dropped, a timeout around it), not only when it ends.
struct LogFile(PathBuf);

impl Drop for LogFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[derive(Debug)]
pub struct OpenSshSession {
    target: Target,
    /// The master's control socket.
    ctl: PathBuf,
    /// ssh's options for this target, ending with `--` and the address.
    args: Vec<OsString>,
    /// `ControlPersist=...` for a master this session starts.
    persist: String,
    /// Whether the master is this run's own, ended when its last session closes.
    own: bool,
    masters: Arc<Masters>,
    /// Whether this session has left `masters` (closed, or dropped).
    left: bool,
    gate: Gate,
    /// Whether a master answered for this session: its commands no longer take the gate.
    connected: bool,
    /// Keeps a master of the run's own from idling out while this session holds it.
    keeper: Option<tokio::task::AbortHandle>,
    connect_timeout: Duration,
    login_timeout: Duration,
    pub(super) command_timeout: Duration,
    pub(super) output_cap: super::OutputCap,
}

impl OpenSshSession {
    /// Runs `command` as `ssh -o ControlMaster=auto`: a client of the master answering on
    /// the control socket, or, where none answers (the session's first command, or a
    /// master that idled out), the new master itself (in the background, for
    /// ControlPersist), running the command through it. ssh's own messages go to a log of
    /// this command, so its stderr is the node's alone.
    pub async fn exec(
        &mut self,
        command: &str,
        stdin: &[u8],
    ) -> Result<ExecOutput, TransportError> {
        let mut gate = if self.connected {
            None
        } else {
            self.take_gate().await?
        };
        let log = LogFile(self.log_path());
        let mut ssh = tokio::process::Command::new("ssh");
        ssh.arg("-E")
            .arg(&log.0)
            .arg("-S")
            .arg(&self.ctl)
            .args(["-o", "ControlMaster=auto", "-o", &self.persist])
            // Only what goes wrong, whatever the ssh_config says: a word in the log is ssh's
            // own failure (or a warning), never its chatter.
            .args(["-o", "LogLevel=ERROR", "-T"])
            .args(&self.args)
            .arg(command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // A process group of its own: the terminal's Ctrl-C is dnsfix's to handle (it
            // lets the node scripts in progress finish), not a signal that cuts them off.
            .process_group(0)
            .kill_on_drop(true);
        let mut pending = Pending {
            masters: &self.masters,
            ctl: &self.ctl,
            done: false,
        };
        let result = self.run(ssh, stdin, &log.0).await;
        // A command timed out or ended past its output cap may still run on the node.
        pending.done = !matches!(
            result,
            Err(TransportError::Timeout { .. } | TransportError::OutputTooLarge { .. })
        );
        drop(pending);
        let text = read_log(&log.0);
        drop(log);
        // A silent 255 is the command's exit only if the master still answers: one that
        // lost its connection may close its clients before it removes its socket.
        let silent_255 =
            matches!(&result, Ok(out) if out.status.code() == Some(255)) && !said_something(&text);
        let master = if silent_255 {
            answers(&self.ctl).await
        } else {
            listening(&self.ctl)
        };
        let result = result.and_then(|out| self.outcome(out, &text, master));
        self.connected |= master;
        if self.connected && self.own && self.keeper.is_none() {
            self.keeper = Some(keep_alive(self.ctl.clone()));
        }
        if let (Some(gate), Err(e), false) = (gate.as_mut(), &result, master)
            && unreachable(e)
        {
            **gate = Some(e.clone());
        }
        result
    }

    /// What one ssh run comes to. ssh exits 255 for its own failures and passes on the
    /// command's exit status, 255 included: which one it was is read from ssh's log, never
    /// from the command's stderr (the node's, which may say anything). A 255 with nothing
    /// in the log is the command's, unless the master went away meanwhile (a master lost
    /// under its client is logged at a debug level only).
    fn outcome(
        &self,
        out: std::process::Output,
        log: &str,
        master: bool,
    ) -> Result<ExecOutput, TransportError> {
        if out.status.code() == Some(255) {
            if said_something(log) {
                return Err(match classify(&self.target, log) {
                    TransportError::Timeout {
                        address, during, ..
                    } if !master => TransportError::Timeout {
                        address,
                        seconds: self.connect_timeout.as_secs(),
                        during,
                    },
                    TransportError::HostKeyUnknown { address, hint } if hint.is_empty() => {
                        TransportError::HostKeyUnknown {
                            address,
                            hint: known_hosts_named(&self.args),
                        }
                    }
                    other => other,
                });
            }
            if !master {
                return Err(TransportError::Disconnected {
                    address: self.target.describe(),
                    detail: "ssh exited 255 with no message and no master left".into(),
                });
            }
        }
        Ok(ExecOutput {
            stdout: out.stdout,
            stderr: out.stderr,
            exit_status: out.status.code().and_then(|c| u32::try_from(c).ok()),
        })
    }

    /// Runs `ssh` with `stdin` to its end. Until the master answers on the control socket
    /// ssh is logging in: its own ConnectTimeout bounds the TCP connect and the banner,
    /// dnsfix the whole login at the connect timeout plus the login timeout (a sshd that
    /// waits on a broken resolver takes long after the banner). From then on the command
    /// timeout bounds the command. A client of a master that answers already is past the
    /// login at once.
    async fn run(
        &self,
        ssh: tokio::process::Command,
        stdin: &[u8],
        log: &Path,
    ) -> Result<std::process::Output, TransportError> {
        let (mut child, group) = spawn(ssh)
            .await
            .map_err(|e| TransportError::Other(format!("cannot run ssh: {e}")))?;
        let address = self.target.describe();
        let kept = super::output::Kept::new(self.output_cap);
        let run = async move {
            // Past the output cap, `child` and `group` are dropped unreaped: ssh is killed,
            // and with it its channel.
            let (kept, status) =
                super::output::exchange(&mut child, stdin, kept, &address, "ssh").await?;
            group.reaped();
            let out = kept.into_output(None);
            Ok(std::process::Output {
                status,
                stdout: out.stdout,
                stderr: out.stderr,
            })
        };
        tokio::pin!(run);
        let login = self.connect_timeout + self.login_timeout;
        let started = tokio::time::Instant::now();
        while !listening(&self.ctl) && !unshared(log) {
            if started.elapsed() >= login {
                // Dropping `run` kills the ssh that was logging in.
                return Err(TransportError::Timeout {
                    address: self.target.describe(),
                    seconds: login.as_secs(),
                    during: Phase::LoggingIn,
                });
            }
            if let Ok(out) = tokio::time::timeout(LOGIN_POLL, &mut run).await {
                return out;
            }
        }
        bounded(self.command_timeout, &self.target.describe(), run).await
    }

    /// The gate of this session's control socket; or none, once another session's master
    /// answers there (its first command may still be running); or why another session
    /// of this run could not connect.
    async fn take_gate(
        &self,
    ) -> Result<Option<tokio::sync::OwnedMutexGuard<Option<TransportError>>>, TransportError> {
        loop {
            if let Ok(guard) = Arc::clone(&self.gate).try_lock_owned() {
                return match guard.as_ref() {
                    Some(e) => Err(e.clone()),
                    None => Ok(Some(guard)),
                };
            }
            if listening(&self.ctl) {
                return Ok(None);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// A log file of one ssh run, beside the control socket.
    fn log_path(&self) -> PathBuf {
        let mut name = self.ctl.clone().into_os_string();
        name.push(format!(".{}.log", &crate::util::nonce()[..16]));
        PathBuf::from(name)
    }

    /// DNS over TCP through the master: a local forward from a socket of ours (in a private
    /// directory) to `server`:`port` as the node reaches it, used once and closed.
    pub async fn dns_tcp(
        &mut self,
        server: std::net::IpAddr,
        port: u16,
        query: &[u8],
        timeout: std::time::Duration,
    ) -> Result<Vec<u8>, super::TcpFailure> {
        use super::TcpFailure;
        // Every caller runs a command first; one that did not gets its master from `true`.
        if !listening(&self.ctl) {
            self.exec("true", b"")
                .await
                .map_err(|e| TcpFailure::Failed(e.to_string()))?;
        }
        let master = openssh::Session::resume(self.ctl.clone().into_boxed_path(), None);
        let dir = tempfile_dir().map_err(|e| TcpFailure::Failed(e.to_string()))?;
        let socket = dir.join("dns");
        let remote = openssh::Socket::from((server, port));
        master
            .request_port_forward(
                openssh::ForwardType::Local,
                socket.as_path(),
                remote.clone(),
            )
            .await
            .map_err(|e| TcpFailure::Forbidden(error_text(&e)))?;
        let exchange = async {
            match tokio::net::UnixStream::connect(&socket).await {
                Ok(stream) => super::dns_exchange(stream, query).await,
                Err(e) => Err(TcpFailure::Failed(e.to_string())),
            }
        };
        let result = super::within(timeout, exchange).await;
        let _ = master
            .close_port_forward(openssh::ForwardType::Local, socket.as_path(), remote)
            .await;
        let _ = std::fs::remove_dir_all(&dir);
        // ssh closes the local end when the node refuses the channel: forbidden and
        // refused look alike here, so the caller may try another way.
        // Whether the node refused the channel (closed, reset, a broken pipe: depending on
        // when ssh drops the local end) or the server refused the connection, the
        // caller may ask again from the node itself, which tells them apart.
        result.map_err(|e| match e {
            TcpFailure::Failed(_) => TcpFailure::Forbidden(
                "ssh could not open the channel (forwarding refused, or nothing listens)"
                    .to_owned(),
            ),
            other => other,
        })
    }

    /// Leaves the session. A persisting master stays: it serves the next run and exits by
    /// itself when idle. A master of the run's own is stopped with its last session.
    pub async fn close(mut self) {
        if let Some((ctl, op)) = self.leave() {
            control(&ctl, op, CONTROL_LIMIT).await;
        }
    }

    /// Leaves `masters` (once); the control socket of a master to end now, if any, and
    /// how: `stop`, or `exit` when a command through it was given up on.
    fn leave(&mut self) -> Option<(PathBuf, &'static str)> {
        if std::mem::replace(&mut self.left, true) {
            return None;
        }
        if let Some(keeper) = self.keeper.take() {
            keeper.abort();
        }
        let abandoned = self.masters.leave(&self.ctl)?;
        super::children::master_closed(&self.ctl);
        let op = if abandoned { "exit" } else { "stop" };
        (self.own && listening(&self.ctl)).then(|| (self.ctl.clone(), op))
    }
}

impl Drop for OpenSshSession {
    /// A session dropped unclosed (a panic, a cancelled task, dnsfix ending early) still
    /// stops the master it was the last one on, if that is the run's own. A drop cannot
    /// wait (the runtime may have one thread): `ssh -O stop` is started and a thread of
    /// its own reaps it.
    fn drop(&mut self) {
        if let Some((ctl, op)) = self.leave() {
            end_detached(&ctl, op);
        }
    }
}

/// Starts `ssh` on a thread of the runtime's blocking pool. A spawn is a vfork: the thread
/// that spawns waits until the child has exec'd ssh, and on a machine busy with fifty key
/// exchanges at once a child waits milliseconds for a CPU first. From the runtime's one
/// thread, each host's ssh would start only after every earlier host's had (the last of 50
/// two seconds late, in the lab); from the pool they start side by side.
///
/// The child's process group is listed (see [`super::children`]) until the returned
/// [`super::children::Group`] is dropped: keep it as long as the child.
async fn spawn(
    mut ssh: tokio::process::Command,
) -> std::io::Result<(tokio::process::Child, super::children::Group)> {
    tokio::task::spawn_blocking(move || {
        super::children::spawn(move || ssh.spawn(), tokio::process::Child::id)
    })
    .await
    .map_err(std::io::Error::other)?
}

/// How long a control command (`ssh -O check`, `ssh -O stop`) may take before it is
/// killed: it only talks to a local socket, but a master may hang.
const CONTROL_LIMIT: Duration = Duration::from_secs(3);

/// How long a master that may have lost its connection gets to answer `ssh -O check`.
const CHECK_LIMIT: Duration = Duration::from_secs(1);

/// `ssh -O <op>` for the master on `ctl` ([`super::children::control_command`]). Not
/// listed in [`super::children`]: it only talks to a local socket, ends by itself, and
/// killing a `stop` under way when dnsfix ends would leave the master it was stopping.
///
/// A master is ended with `stop`: `exit` ends it at once, with the command of any session
/// that came to it meanwhile (a session of the same host entering just as the last one
/// leaves); `stop` removes the socket at once, so a newcomer logs in afresh, lets the
/// commands it carries finish, and then the master exits. Except after a command given
/// up on: sshd keeps its channel open while the command runs on the node, so a stopped
/// master would live, unreachable, as long as it does (a hung node: for ever); `exit`.
fn control_command(ctl: &Path, op: &str) -> std::process::Command {
    super::children::control_command(ctl, op)
}

/// Runs `ssh -O <op>` on `ctl` for at most `limit` (then kills it); whether it succeeded.
async fn control(ctl: &Path, op: &str, limit: Duration) -> bool {
    let mut ssh = tokio::process::Command::from(control_command(ctl, op));
    ssh.kill_on_drop(true);
    let Ok(mut child) = ssh.spawn() else {
        return false;
    };
    match tokio::time::timeout(limit, child.wait()).await {
        Ok(status) => status.is_ok_and(|s| s.success()),
        Err(_) => {
            let _ = child.kill().await;
            false
        }
    }
}

/// `ssh -O <op>` on `ctl` without waiting for it: a thread reaps it (killing it after
/// [`CONTROL_LIMIT`]), so that no zombie is left in a long run. A thread the system
/// refuses is no reason to panic in a drop: the process is then reaped at exit.
fn end_detached(ctl: &Path, op: &str) {
    let Ok(mut child) = control_command(ctl, op).spawn() else {
        return;
    };
    let _ = std::thread::Builder::new().spawn(move || {
        let started = std::time::Instant::now();
        while let Ok(None) = child.try_wait() {
            if started.elapsed() >= CONTROL_LIMIT {
                let _ = child.kill();
                let _ = child.wait();
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
}

/// Whether a master listens on `ctl`. A socket file alone is not one: a master that
/// crashed or was killed leaves its socket, on which a connect is refused; that socket is
/// removed (as ssh itself does with one it finds), so the next ssh makes a new master.
/// The connect never waits: a blocking one would wait for a master that listens but no
/// longer accepts (stopped, hung) once its backlog is full, and with it every host of the
/// run. A full backlog is a master that listens.
fn listening(ctl: &Path) -> bool {
    let connect = || -> std::io::Result<()> {
        let socket = socket2::Socket::new(socket2::Domain::UNIX, socket2::Type::STREAM, None)?;
        socket.set_nonblocking(true)?;
        socket.connect(&socket2::SockAddr::unix(ctl)?)
    };
    match connect() {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => true,
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            let _ = std::fs::remove_file(ctl);
            false
        }
        Err(_) => false,
    }
}

/// Whether the master on `ctl` answers `ssh -O check` within [`CHECK_LIMIT`]: a master
/// whose connection was just lost may still listen while it closes its clients.
async fn answers(ctl: &Path) -> bool {
    listening(ctl) && control(ctl, "check", CHECK_LIMIT).await
}

/// Checks the master on `ctl` every [`KEEP_ALIVE`] until aborted: each check is a client
/// of the master, which starts its idle count (ControlPersist) again.
fn keep_alive(ctl: PathBuf) -> tokio::task::AbortHandle {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(KEEP_ALIVE).await;
            control(&ctl, "check", CONTROL_LIMIT).await;
        }
    })
    .abort_handle()
}

/// Whether `e` says the host cannot be reached or logged in to: what every other session
/// to that host would meet too, so it is kept in the gate and they fail at once. A command
/// that timed out, a connection lost, anything else is this session's alone.
fn unreachable(e: &TransportError) -> bool {
    match e {
        TransportError::Refused { .. }
        | TransportError::Auth { .. }
        | TransportError::HostKeyUnknown { .. }
        | TransportError::HostKeyChanged { .. }
        | TransportError::HostKeyRefused { .. }
        | TransportError::Unreachable { .. }
        | TransportError::Resolve { .. } => true,
        TransportError::Timeout { during, .. } => {
            matches!(during, Phase::Connecting | Phase::LoggingIn)
        }
        TransportError::SudoPassword { .. }
        | TransportError::SudoMissing { .. }
        | TransportError::Disconnected { .. }
        | TransportError::ExecRefused { .. }
        | TransportError::OutputTooLarge { .. }
        | TransportError::Other(_) => false,
    }
}

/// Whether ssh's log says anything beyond what it may say on a run that worked (a warning,
/// a control socket it could not make): that is, whether ssh failed.
fn said_something(log: &str) -> bool {
    log.lines().map(str::trim).any(|line| {
        !line.is_empty()
            && !line.starts_with("Warning:")
            && !line.contains("disabling multiplexing")
    })
}

/// A path ssh takes as written: its option parser splits `UserKnownHostsFile=` on
/// whitespace and expands `%` tokens, `${VAR}` and quotes in it and in `-i` key paths, so a
/// path with any of those could name other files than the one given (`/my dir/kh` is also
/// `./dir/kh`). Such a path is refused, never passed on.
pub fn literal_path(path: &std::path::Path) -> Result<(), String> {
    let text = path
        .to_str()
        .ok_or_else(|| format!("{}: not UTF-8", path.display()))?;
    if text
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || "%$\"'\\#".contains(c))
    {
        return Err(format!(
            "{}: ssh would split or expand this path (it holds whitespace or one of % $ \" ' \\ #); \
             use a path without them (or --ssh-backend russh)",
            crate::text::escape(text)
        ));
    }
    Ok(())
}

/// Whether ssh said it runs without a master (the control socket could not be made):
/// connected, but every command connects again.
fn unshared(log: &Path) -> bool {
    // A login that goes well logs nothing (LogLevel=ERROR): most looks read no file.
    std::fs::metadata(log).is_ok_and(|m| m.len() > 0)
        && read_log(log).contains("disabling multiplexing")
}

/// The most of one ssh run's log that is read. At `LogLevel=ERROR` ssh writes a few lines
/// there, some of them the server's words (a disconnect's reason, bounded by its packet),
/// none that a node could repeat without end; a longer log is still cut here.
const LOG_CAP: u64 = 64 * 1024;

/// The first [`LOG_CAP`] bytes of ssh's log `path` (nothing where it cannot be read).
fn read_log(path: &Path) -> String {
    use std::io::Read;
    let mut bytes = Vec::new();
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.take(LOG_CAP).read_to_end(&mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Removes what dead masters left in the control directory, so it does not fill up over
/// time: the sockets of masters that crashed or were killed (a connect to them is
/// refused), logs of ssh runs killed with dnsfix, and the
/// directories and index files of earlier releases, which named a master's socket in a
/// `.ctl` file beside it.
fn remove_dead_masters(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        // A directory without a socket, or a log, may belong to an ssh another dnsfix is
        // starting right now: only what has been idle for minutes is dead.
        let idle = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > Duration::from_secs(600));
        let socket = entry
            .file_type()
            .is_ok_and(|t| std::os::unix::fs::FileTypeExt::is_socket(&t));
        if socket && is_master_name(&name) {
            // A master that died left it (a live one answers: `listening` keeps it). Only
            // dnsfix's own names: ssh binds a master's socket under a temporary name and
            // links it into place once it listens; a probe between the two would remove
            // it from under another run's ssh.
            listening(&path);
        } else if name.starts_with(".ssh-connection") && idle && !path.join("master").exists() {
            let _ = std::fs::remove_dir_all(&path);
        } else if (name.ends_with(".log") && idle)
            || (name.ends_with(".ctl")
                && std::fs::read_to_string(&path)
                    .map(|c| !Path::new(c.trim()).exists())
                    .unwrap_or(true))
        {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// A master's socket name as [`OpenSshTransport::master_key`] makes it: 20 hex digits.
fn is_master_name(name: &str) -> bool {
    name.len() == 20
        && name
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The whole message of an openssh error, sources included: the interesting part (ssh's
/// own stderr) is usually in the source.
fn error_text(e: &openssh::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The known_hosts file ssh checked, for a host key it did not find: ssh's message ("No
/// ED25519 host key is known for [10.0.0.5]:22 and you have requested strict checking")
/// names none. `--known-hosts` is passed as UserKnownHostsFile; without it ssh reads its
/// own, ~/.ssh/known_hosts and ~/.ssh/known_hosts2 unless ssh_config says otherwise
/// (ssh_config(5) UserKnownHostsFile, openssh-portable @a9b90859 ssh_config.5).
fn known_hosts_named(args: &[OsString]) -> String {
    match args.iter().find_map(|a| {
        a.to_str()?
            .strip_prefix("UserKnownHostsFile=")
            .map(str::to_owned)
    }) {
        Some(file) => format!(" ({file})"),
        None => {
            " (ssh's own: ~/.ssh/known_hosts, or the UserKnownHostsFile ssh_config sets)".to_owned()
        }
    }
}

/// Turns ssh's stderr into the reason a user acts on.
pub(crate) fn classify(target: &Target, text: &str) -> TransportError {
    let address = target.describe();
    let detail = last_meaningful_line(text);
    if text.contains("REMOTE HOST IDENTIFICATION HAS CHANGED") {
        let offending = text
            .lines()
            .find(|l| l.contains("Offending"))
            .map(|l| format!(" ({})", l.trim()));
        return TransportError::HostKeyChanged {
            address,
            detail: offending.unwrap_or_default(),
        };
    }
    if text.contains("REVOKED HOST KEY DETECTED") {
        let line = text
            .lines()
            .find(|l| l.contains("is marked as revoked"))
            .map(|l| l.trim().to_owned())
            .unwrap_or_else(|| "it is marked @revoked in known_hosts".into());
        return TransportError::HostKeyRefused {
            address,
            reason: line,
        };
    }
    if text.contains("Host key verification failed") || text.contains("host key is known for") {
        return TransportError::HostKeyUnknown {
            address,
            hint: String::new(),
        };
    }
    if text.contains("Permission denied") || text.contains("Too many authentication failures") {
        return TransportError::Auth { address, detail };
    }
    if text.contains("Connection refused") {
        return TransportError::Refused { address };
    }
    if text.contains("timed out") || text.contains("Timeout") {
        return TransportError::Timeout {
            address,
            seconds: 0,
            during: Phase::Connecting,
        };
    }
    if text.contains("Could not resolve") || text.contains("Name or service not known") {
        return TransportError::Resolve { address };
    }
    if text.contains("No route to host") || text.contains("Network is unreachable") {
        return TransportError::Unreachable { address, detail };
    }
    if text.contains("closed by remote host")
        || text.contains("Connection closed")
        || text.contains("Connection reset")
        || text.contains("kex_exchange_identification")
    {
        return TransportError::Disconnected { address, detail };
    }
    TransportError::Other(format!("ssh to {address} failed: {detail}"))
}

fn last_meaningful_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && !l.starts_with("Warning: Permanently added"))
        .unwrap_or("no message from ssh")
        .to_owned()
}

/// The directory for ControlMaster sockets: `$XDG_RUNTIME_DIR/dnsfix-ssh-UID` (private by
/// construction), else `$TMPDIR/dnsfix-ssh-UID`. Whoever controls the sockets there gets the
/// root scripts dnsfix sends, so the directory is used only if dnsfix creates it now (mode
/// 0700) or it is already a real directory (not a symlink) owned by this user with no
/// access for anyone else. Anything else there, in a shared /tmp perhaps planted by another
/// user, is left alone (never chmodded) and a fresh private directory is made instead.
///
/// A base so deep that a socket path below it would not fit (ssh refuses the connection
/// then) is passed over for the next one, `/tmp` last.
fn control_dir() -> Result<PathBuf, TransportError> {
    let uid = own_uid();
    let base = [
        std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from),
        Some(std::env::temp_dir()),
    ]
    .into_iter()
    .flatten()
    .find(|p| p.is_dir() && fits(p, uid))
    .unwrap_or_else(|| PathBuf::from("/tmp"));
    control_dir_in(&base, uid)
}

/// Whether a control socket below `base` fits in a unix socket path (107 bytes and a NUL):
/// `/dnsfix-ssh-UID-NONCE8/`, a 20-digit name, and the 17 bytes ssh adds to it while it
/// binds the socket.
fn fits(base: &Path, uid: u32) -> bool {
    let dir = format!("/dnsfix-ssh-{uid}-12345678/");
    base.as_os_str().len() + dir.len() + 20 + 17 <= 107
}

/// The effective uid, as the owner of this process's /proc entry.
fn own_uid() -> u32 {
    std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        .unwrap_or(0)
}

fn control_dir_in(base: &std::path::Path, uid: u32) -> Result<PathBuf, TransportError> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let cannot = |dir: &std::path::Path, e: std::io::Error| {
        TransportError::Other(format!(
            "cannot create ssh control directory {}: {e}",
            dir.display()
        ))
    };
    let dir = base.join(format!("dnsfix-ssh-{uid}"));
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => return Ok(dir),
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(cannot(&dir, e)),
        Err(_) => {}
    }
    let safe = std::fs::symlink_metadata(&dir)
        .is_ok_and(|m| m.file_type().is_dir() && m.uid() == uid && m.mode() & 0o077 == 0);
    if safe {
        return Ok(dir);
    }
    // Not ours, not private, or not a directory: a fresh one, private from its creation.
    for _ in 0..16 {
        let fresh = base.join(format!("dnsfix-ssh-{uid}-{}", &crate::util::nonce()[..8]));
        match std::fs::DirBuilder::new().mode(0o700).create(&fresh) {
            Ok(()) => return Ok(fresh),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(cannot(&fresh, e)),
        }
    }
    Err(TransportError::Other(format!(
        "cannot create a private ssh control directory in {}",
        base.display()
    )))
}

/// A fresh private directory (0700) for one forwarded socket.
fn tempfile_dir() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::temp_dir();
    for attempt in 0..16u32 {
        let dir = base.join(format!(
            "dnsfix-fwd-{}-{}-{attempt}",
            std::process::id(),
            crate::util::nonce()
        ));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(
        "cannot create a private directory for a forward",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only dnsfix's own master names are probed and removed when stale: never the
    /// temporary name ssh binds a master's socket under before it listens.
    #[test]
    fn only_dnsfix_master_names_are_cleaned_up() {
        assert!(is_master_name("4b3aea31c50d2e5df760"));
        for name in [
            "4b3aea31c50d2e5df760.Xy3kLm9Qw2Er5Ty7",
            "4B3AEA31C50D2E5DF760",
            "master",
            "",
        ] {
            assert!(!is_master_name(name), "{name}");
        }
    }
    use crate::inventory::{Connection, ConnectionKind};

    /// Paths ssh would split or expand are refused; ordinary ones pass.
    #[test]
    fn only_literal_paths_reach_ssh() {
        for ok in [
            "/home/ops/.ssh/known_hosts",
            "/srv/lab-1/id_ed25519",
            "keys/k.pem",
        ] {
            assert!(literal_path(std::path::Path::new(ok)).is_ok(), "{ok}");
        }
        for bad in [
            "/home/ops/my dir/known_hosts",
            "/tmp/%h/kh",
            "/tmp/${HOME}/kh",
            "/tmp/\"q\"",
            "/tmp/a\tb",
            "/tmp/a#b",
        ] {
            let why = literal_path(std::path::Path::new(bad)).expect_err(bad);
            assert!(why.contains("ssh would split or expand"), "{why}");
        }
    }

    fn target() -> Target {
        Target {
            host: "node1".into(),
            connection: Connection {
                kind: ConnectionKind::Ssh,
                address: "127.0.0.1".into(),
                port: Some(2222),
                user: Some("root".into()),
                private_key: None,
                become_root: false,
                become_method: None,
                ssh_args: Vec::new(),
                ssh_args_from: Vec::new(),
                refused: None,
            },
        }
    }

    fn scratch(name: &str) -> crate::testing::Scratch {
        crate::testing::Scratch::new(&format!("ctl-{name}"))
    }

    fn mode(path: &std::path::Path) -> u32 {
        use std::os::unix::fs::MetadataExt;
        std::fs::symlink_metadata(path).expect("stat").mode() & 0o7777
    }

    #[test]
    fn the_control_directory_is_made_private_or_a_fresh_one_is_used() {
        use std::os::unix::fs::PermissionsExt;
        let uid = own_uid();
        // Created now: 0700.
        let base = scratch("new");
        let dir = control_dir_in(&base, uid).expect("created");
        assert_eq!(dir, base.join(format!("dnsfix-ssh-{uid}")));
        assert_eq!(mode(&dir), 0o700);
        // Reused when it is ours and private.
        assert_eq!(control_dir_in(&base, uid).expect("reused"), dir);

        // World-writable (planted, or loosened): left as it is, a fresh one used.
        let base = scratch("open");
        let planted = base.join(format!("dnsfix-ssh-{uid}"));
        std::fs::create_dir(&planted).expect("mkdir");
        std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let dir = control_dir_in(&base, uid).expect("fresh");
        assert_ne!(dir, planted);
        assert_eq!(
            mode(&planted),
            0o777,
            "never chmod a directory dnsfix did not create"
        );
        assert_eq!(mode(&dir), 0o700);

        // A symlink to somewhere else: not followed.
        let base = scratch("link");
        let elsewhere = scratch("link-target");
        std::os::unix::fs::symlink(&elsewhere, base.join(format!("dnsfix-ssh-{uid}"))).expect("ln");
        let dir = control_dir_in(&base, uid).expect("fresh");
        assert!(!dir.starts_with(&elsewhere) && dir.starts_with(&base));
        assert!(std::fs::read_dir(&elsewhere).expect("ls").next().is_none());

        // Owned by another user (only root can make one): not used.
        if uid == 0 {
            let base = scratch("other");
            let theirs = base.join("dnsfix-ssh-0");
            std::fs::create_dir(&theirs).expect("mkdir");
            std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700))
                .expect("chmod");
            std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).expect("chown");
            let dir = control_dir_in(&base, 0).expect("fresh");
            assert_ne!(dir, theirs);
        }
    }

    fn args_of(session: &OpenSshSession) -> Vec<String> {
        session
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    /// ansible_ssh_common_args (Kubespray's bastion ProxyCommand) reach ssh as separate
    /// arguments after dnsfix's own options, before `--` and the destination, never
    /// through a shell; and a master made through a proxy is not one for a direct login.
    #[test]
    fn inventory_ssh_args_come_before_the_destination_and_name_the_master() {
        let dir = scratch("proxy");
        let transport =
            OpenSshTransport::with_control_dir(&SshOptions::default(), dir.to_path_buf());
        let mut proxied = target();
        let proxy = "ProxyCommand=ssh -W %h:%p -p 22 ops@192.0.2.1 ";
        proxied.connection.ssh_args = vec!["-o".into(), proxy.into(), "-C".into()];
        let session = transport.session(&proxied).expect("session");
        let args = args_of(&session);
        let n = args.len();
        assert_eq!(args[n - 5..], ["-o", proxy, "-C", "--", "127.0.0.1"]);
        let batch = args
            .iter()
            .position(|a| a == "BatchMode=yes")
            .expect("batch mode");
        assert!(
            batch < n - 5,
            "dnsfix's options first (ssh keeps the first -o): {args:?}"
        );
        assert_ne!(
            transport.master_key(&proxied, ""),
            transport.master_key(&target(), ""),
        );
    }

    #[test]
    fn the_first_command_connects_with_the_runs_options_and_no_address_is_an_option() {
        let dir = scratch("args");
        let options = SshOptions {
            known_hosts: Some("/lab/known_hosts".into()),
            ssh_config: Some("/lab/ssh_config".into()),
            private_key: Some("/lab/id_ed25519".into()),
            ..SshOptions::default()
        };
        let transport = OpenSshTransport::with_control_dir(&options, dir.to_path_buf());
        let mut odd = target();
        odd.connection.address = "-oProxyCommand=x".into();
        let session = transport.session(&odd).expect("session");
        let args = args_of(&session);
        for want in [
            "BatchMode=yes",
            "StrictHostKeyChecking=yes",
            "ConnectTimeout=10",
            "UserKnownHostsFile=/lab/known_hosts",
            "IdentitiesOnly=yes",
            "/lab/id_ed25519",
            "/lab/ssh_config",
        ] {
            assert!(args.iter().any(|a| a == want), "{want} in {args:?}");
        }
        assert_eq!(args[args.len() - 2..], ["--", "-oProxyCommand=x"]);
        assert_eq!(session.persist, "ControlPersist=60s");

        let accept = SshOptions {
            host_keys: HostKeyPolicy::AcceptNew,
            ..SshOptions::default()
        };
        let dir = scratch("args-accept");
        let transport = OpenSshTransport::with_control_dir(&accept, dir.to_path_buf());
        let args = args_of(&transport.session(&target()).expect("session"));
        assert!(args.iter().any(|a| a == "StrictHostKeyChecking=accept-new"));
        assert!(!args.iter().any(|a| a == "IdentitiesOnly=yes" || a == "-F"));
    }

    #[test]
    fn a_persisting_master_is_found_by_name_and_one_closed_at_the_end_is_the_runs_own() {
        let dir = scratch("names");
        let transport =
            OpenSshTransport::with_control_dir(&SshOptions::default(), dir.to_path_buf());
        let first = transport.session(&target()).expect("session");
        let second = transport.session(&target()).expect("session");
        assert_eq!(first.ctl, second.ctl, "a later session finds the master");
        assert!(Arc::ptr_eq(&first.gate, &second.gate), "and waits for it");
        assert!(first.ctl.starts_with(&dir) && !first.own);
        assert_eq!(first.persist, "ControlPersist=60s");
        let next_run =
            OpenSshTransport::with_control_dir(&SshOptions::default(), dir.to_path_buf());
        let next = next_run.session(&target()).expect("session");
        assert_eq!(next.ctl, first.ctl, "so does a later run");
        // Other options, another master.
        let strict = SshOptions {
            known_hosts: Some("/other/known_hosts".into()),
            ..SshOptions::default()
        };
        let other = OpenSshTransport::with_control_dir(&strict, dir.to_path_buf());
        assert_ne!(other.session(&target()).expect("session").ctl, first.ctl);

        // apply and rollback never find a master an earlier run left, whatever the
        // persist: theirs is the run's own (one per host), idle for seconds at most.
        let writing = SshOptions {
            reuse_masters: false,
            ..SshOptions::default()
        };
        let apply = OpenSshTransport::with_control_dir(&writing, dir.to_path_buf());
        let (one, two) = (
            apply.session(&target()).expect("session"),
            apply.session(&target()).expect("session"),
        );
        assert_ne!(one.ctl, first.ctl);
        assert_eq!(one.ctl, two.ctl, "one master per host in the run");
        assert!(one.own);
        assert_eq!(one.persist, "ControlPersist=10s");
        let again = OpenSshTransport::with_control_dir(&writing, dir.to_path_buf());
        assert_ne!(again.session(&target()).expect("session").ctl, one.ctl);

        let closing = SshOptions {
            ssh_persist: 0,
            ..SshOptions::default()
        };
        let transport = OpenSshTransport::with_control_dir(&closing, dir.to_path_buf());
        let first = transport.session(&target()).expect("session");
        assert!(first.own && first.ctl != one.ctl);
        assert_eq!(first.persist, "ControlPersist=10s", "never without a limit");
    }

    #[test]
    fn the_last_session_on_a_master_is_the_one_to_end_it() {
        let masters = Masters::default();
        let ctl = Path::new("/run/ctl");
        let gate = masters.enter(ctl);
        assert!(Arc::ptr_eq(&gate, &masters.enter(ctl)));
        assert_eq!(masters.leave(ctl), None);
        assert_eq!(masters.leave(ctl), Some(false));
        assert!(
            !Arc::ptr_eq(&gate, &masters.enter(ctl)),
            "a fresh gate after"
        );
        // A command given up on there: the last session ends it outright.
        masters.enter(ctl);
        masters.abandon(ctl);
        assert_eq!(masters.leave(ctl), None);
        assert_eq!(masters.leave(ctl), Some(true));
    }

    /// `--known-hosts known_hosts` from two directories is two files, two masters; one file
    /// spelt two ways is one.
    #[test]
    fn masters_are_named_after_files_not_spellings() {
        let dir = scratch("canonical");
        for sub in ["a", "b"] {
            std::fs::create_dir(dir.join(sub)).expect("mkdir");
            std::fs::write(dir.join(sub).join("kh"), sub).expect("write");
        }
        std::os::unix::fs::symlink(dir.join("a"), dir.join("link")).expect("ln");
        let named = |known_hosts: PathBuf, key: Option<PathBuf>| {
            let options = SshOptions {
                known_hosts: Some(known_hosts),
                ..SshOptions::default()
            };
            let mut target = target();
            target.connection.private_key = key;
            let transport = OpenSshTransport::with_control_dir(&options, dir.to_path_buf());
            transport.session(&target).expect("session").ctl.clone()
        };
        let a = named(dir.join("a/kh"), None);
        assert_eq!(a, named(dir.join("b/../a/kh"), None));
        assert_eq!(a, named(dir.join("link/kh"), None));
        assert_ne!(a, named(dir.join("b/kh"), None));
        let keyed = named(dir.join("a/kh"), Some(dir.join("a/kh")));
        assert_eq!(keyed, named(dir.join("a/kh"), Some(dir.join("link/kh"))));
        assert_ne!(keyed, named(dir.join("a/kh"), Some(dir.join("b/kh"))));
        // A file that is not there: its absolute path.
        let cwd = std::env::current_dir().expect("cwd");
        assert_eq!(canonical(Path::new("no-such-kh")), cwd.join("no-such-kh"));
    }

    #[test]
    fn an_exit_255_is_sshs_failure_only_when_its_log_says_so() {
        use std::os::unix::process::ExitStatusExt;
        let dir = scratch("255");
        let transport =
            OpenSshTransport::with_control_dir(&SshOptions::default(), dir.to_path_buf());
        let session = transport.session(&target()).expect("session");
        let run = |code: i32, stderr: &str| std::process::Output {
            status: std::process::ExitStatus::from_raw(code << 8),
            stdout: b"out".to_vec(),
            stderr: stderr.as_bytes().to_vec(),
        };
        let denied = "root@127.0.0.1: Permission denied (publickey).\n";
        // The node's command said it and exited 255: that is the command's exit.
        for log in [
            "",
            "Warning: Permanently added '[127.0.0.1]:2222' (ED25519) to the list of known hosts.\n",
        ] {
            let out = session
                .outcome(run(255, denied), log, true)
                .expect("the command's");
            assert_eq!(out.exit_status, Some(255));
            assert_eq!(out.stderr, denied.as_bytes());
        }
        // ssh said it: a login refused, whatever the stderr.
        let refused = session.outcome(run(255, "all fine"), denied, false);
        assert!(
            matches!(refused, Err(TransportError::Auth { .. })),
            "{refused:?}"
        );
        let banner = "Connection timed out during banner exchange\n";
        let timeout = session.outcome(run(255, ""), banner, false);
        assert!(
            matches!(
                timeout,
                Err(TransportError::Timeout {
                    seconds: 10,
                    during: Phase::Connecting,
                    ..
                })
            ),
            "{timeout:?}"
        );
        // ssh does not name the known_hosts file a key is missing from: the message does.
        let unknown = "No ED25519 host key is known for [127.0.0.1]:2222 and you have requested strict checking.\r\nHost key verification failed.\n";
        let message = |session: &OpenSshSession| {
            session
                .outcome(run(255, ""), unknown, false)
                .expect_err("unknown")
                .to_string()
        };
        assert!(
            message(&session).starts_with(
                "host key for root@127.0.0.1:2222 is not in known_hosts (ssh's own: ~/.ssh/known_hosts, or the UserKnownHostsFile ssh_config sets); "
            ),
            "{}",
            message(&session)
        );
        let named = SshOptions {
            known_hosts: Some("/lab/known_hosts".into()),
            ..SshOptions::default()
        };
        let dir = scratch("255-kh");
        let transport = OpenSshTransport::with_control_dir(&named, dir.to_path_buf());
        let with_file = transport.session(&target()).expect("session");
        assert!(
            message(&with_file).starts_with(
                "host key for root@127.0.0.1:2222 is not in known_hosts (/lab/known_hosts); "
            ),
            "{}",
            message(&with_file)
        );
        // ssh said nothing and the master is gone: the connection went away under it.
        let lost = session.outcome(run(255, denied), "", false);
        assert!(
            matches!(lost, Err(TransportError::Disconnected { .. })),
            "{lost:?}"
        );
        // Any other exit is the command's.
        let out = session
            .outcome(run(1, denied), denied, true)
            .expect("exit 1");
        assert_eq!(out.exit_status, Some(1));
    }

    /// A command's log goes with it, however its future ends.
    #[test]
    fn a_commands_log_is_removed_even_when_the_command_is_cancelled() {
        let dir = scratch("log");
        let path = dir.join("ctl.0123.log");
        std::fs::write(&path, "x").expect("write");
        let log = LogFile(path.clone());
        let cancelled = async move {
            let _log = log;
            std::future::pending::<()>().await;
        };
        let timed_out = crate::testing::runtime()
            .block_on(async { tokio::time::timeout(Duration::from_millis(10), cancelled).await });
        assert!(timed_out.is_err());
        assert!(!path.exists());
    }

    /// A socket file is not a master: one whose master crashed refuses the connect and is
    /// removed (by a session's look, and by the clean-up of a new run); one that something
    /// listens on but that does not answer `ssh -O check` (a master closing after its
    /// connection was lost) is no master for a silent exit 255 either.
    #[test]
    fn a_master_is_one_that_listens_and_answers_not_a_socket_file() {
        let dir = scratch("stale");
        let stale = dir.join("stale");
        drop(std::os::unix::net::UnixListener::bind(&stale).expect("bind"));
        assert!(stale.exists());
        assert!(!listening(&stale), "nothing listens");
        assert!(!stale.exists(), "and the socket is removed");

        // Named as dnsfix names masters; another name is never probed (ssh's temporary
        // one, bound before it listens).
        let dead = dir.join("0123456789abcdef0123");
        drop(std::os::unix::net::UnixListener::bind(&dead).expect("bind"));
        let binding = dir.join("0123456789abcdef0123.Xy3kLm9Qw2Er5Ty7");
        drop(std::os::unix::net::UnixListener::bind(&binding).expect("bind"));
        let mute = dir.join("fedcba9876543210fedc");
        let _listener = std::os::unix::net::UnixListener::bind(&mute).expect("bind");
        remove_dead_masters(&dir);
        assert!(!dead.exists(), "a new run removes a dead master's socket");
        assert!(binding.exists(), "not one under another name");
        assert!(mute.exists(), "and keeps one something listens on");

        assert!(listening(&mute));
        // A master that listens but no longer accepts: once its backlog is full, a look
        // must not wait for it (it would hold up every host of the run).
        let mut queued = Vec::new();
        let full = loop {
            let socket = socket2::Socket::new(socket2::Domain::UNIX, socket2::Type::STREAM, None)
                .expect("socket");
            socket.set_nonblocking(true).expect("nonblocking");
            match socket.connect(&socket2::SockAddr::unix(&mute).expect("address")) {
                Ok(()) => queued.push(socket),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break true,
                Err(e) => panic!("{e}"),
            }
            if queued.len() > 100_000 {
                break false;
            }
        };
        assert!(full, "the backlog never filled");
        assert!(listening(&mute), "a full backlog is a master that listens");
        let started = std::time::Instant::now();
        assert!(
            !crate::testing::runtime().block_on(answers(&mute)),
            "it never answers"
        );
        assert!(started.elapsed() < CHECK_LIMIT + Duration::from_secs(1));
        assert!(!crate::testing::runtime().block_on(answers(&dir.join("none"))));
    }

    /// Only a failure every session to the host would meet is kept for them: a command
    /// that timed out or a connection lost is one session's.
    #[test]
    fn the_gate_keeps_only_why_the_host_cannot_be_reached() {
        let address = || "root@127.0.0.1:2222".to_owned();
        for kept in [
            TransportError::Refused { address: address() },
            TransportError::Auth {
                address: address(),
                detail: String::new(),
            },
            TransportError::HostKeyChanged {
                address: address(),
                detail: String::new(),
            },
            TransportError::Resolve { address: address() },
            TransportError::Unreachable {
                address: address(),
                detail: "No route to host".into(),
            },
            TransportError::Timeout {
                address: address(),
                seconds: 10,
                during: Phase::Connecting,
            },
            TransportError::Timeout {
                address: address(),
                seconds: 70,
                during: Phase::LoggingIn,
            },
        ] {
            assert!(unreachable(&kept), "{kept:?}");
        }
        for not in [
            TransportError::Timeout {
                address: address(),
                seconds: 60,
                during: Phase::Command,
            },
            TransportError::Disconnected {
                address: address(),
                detail: "ssh exited 255 with no message and no master left".into(),
            },
            TransportError::Other("ssh failed".into()),
            // Another session to the host may find a process free.
            TransportError::ExecRefused { address: address() },
        ] {
            assert!(!unreachable(&not), "{not:?}");
        }
    }

    /// CVE-2025-61984: before OpenSSH 10.1 a control character in the user or the host
    /// reaches a ProxyCommand's `%r`/`%h` unquoted. Whitespace and control characters are
    /// refused, naming the host.
    #[test]
    fn a_user_or_address_with_whitespace_or_control_characters_is_refused() {
        let dir = scratch("cc");
        let transport =
            OpenSshTransport::with_control_dir(&SshOptions::default(), dir.to_path_buf());
        for (user, address) in [
            ("root\n$(touch /tmp/x)", "127.0.0.1"),
            ("ro ot", "127.0.0.1"),
            ("root", "127.0.0.1\r"),
            ("root", "node 1"),
            ("root", "a\u{7f}b"),
        ] {
            let mut odd = target();
            odd.connection.user = Some(user.into());
            odd.connection.address = address.into();
            let refused = transport.session(&odd).expect_err(address);
            let text = refused.to_string();
            assert!(text.starts_with("node1: the ssh "), "{text}");
            assert!(text.contains("whitespace or a control character"), "{text}");
        }
        let default_user = SshOptions {
            user: Some("ops\tadmin".into()),
            ..SshOptions::default()
        };
        let dir = scratch("cc-user");
        let transport = OpenSshTransport::with_control_dir(&default_user, dir.to_path_buf());
        let mut plain = target();
        plain.connection.user = None;
        assert!(transport.session(&plain).is_err(), "the --user too");
        assert!(transport.session(&target()).is_ok(), "a user of its own");
    }

    /// CVE-2023-51385: before OpenSSH 9.6 ssh hands a user or host name to a ProxyCommand's
    /// `%r`/`%h` (and a `Match exec`'s `%u`) as it is, and the shell runs what it holds:
    /// with `ProxyCommand ssh -W %h:%p bastion` in ~/.ssh/config, an inventory's
    /// `ansible_host: x;touch${IFS}/tmp/p` runs `touch` on this machine. The characters
    /// OpenSSH 9.6 itself refuses on the command line (openssh-portable@7ef3787c8 ssh.c
    /// valid_hostname, valid_ruser; readconf.c ssh_valid_hostname and ssh_valid_ruser at
    /// 0ef0f5a83) are refused here, for every ssh, naming the host; what it allows stays
    /// (a `$` or a `\` in a user: `HOST$`, `DOMAIN\user`).
    #[test]
    fn a_user_or_address_with_shell_characters_is_refused() {
        let dir = scratch("shell");
        let transport =
            OpenSshTransport::with_control_dir(&SshOptions::default(), dir.to_path_buf());
        for (user, address) in [
            ("root", "x;touch${IFS}/tmp/p"),
            ("root", "$(touch${IFS}/tmp/p)"),
            ("root", "`id`"),
            ("root", "a|b"),
            ("root", "a,b"),
            ("root", "a\\b"),
            ("root$(id)", "127.0.0.1"),
            ("r`id`", "127.0.0.1"),
            ("r;id", "127.0.0.1"),
            ("r'x'", "127.0.0.1"),
            ("root\\", "127.0.0.1"),
            ("-oProxyCommand=x", "127.0.0.1"),
        ] {
            let mut odd = target();
            odd.connection.user = Some(user.into());
            odd.connection.address = address.into();
            let refused = transport.session(&odd).expect_err(address);
            let text = refused.to_string();
            assert!(text.starts_with("node1: the ssh "), "{text}");
            assert!(text.contains("OpenSSH 9.6"), "{text}");
        }
        for (user, address) in [
            ("HOST$", "node1.example.com"),
            ("CORP\\ops", "fe80::1%eth0"),
            ("ops-admin_1.x@corp", "[2001:db8::1]"),
        ] {
            let mut fine = target();
            fine.connection.user = Some(user.into());
            fine.connection.address = address.into();
            transport.session(&fine).expect(user);
        }
    }

    #[test]
    fn classifies_ssh_failures() {
        let changed = "@@@@@@@@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\nOffending ED25519 key in /tmp/kh:3\nHost key verification failed.";
        assert!(matches!(
            classify(&target(), changed),
            TransportError::HostKeyChanged { .. }
        ));
        let unknown = "No ED25519 host key is known for [127.0.0.1]:2222 and you have requested strict checking.\r\nHost key verification failed.";
        assert!(matches!(
            classify(&target(), unknown),
            TransportError::HostKeyUnknown { .. }
        ));
        let refused = "ssh: connect to host 127.0.0.1 port 2222: Connection refused";
        assert_eq!(
            classify(&target(), refused),
            TransportError::Refused {
                address: "root@127.0.0.1:2222".into()
            }
        );
        let auth = "root@127.0.0.1: Permission denied (publickey).";
        assert!(matches!(
            classify(&target(), auth),
            TransportError::Auth { .. }
        ));
        for no_route in [
            "ssh: connect to host 10.0.0.9 port 22: No route to host",
            "ssh: connect to host 10.0.0.9 port 22: Network is unreachable",
        ] {
            assert_eq!(
                classify(&target(), no_route),
                TransportError::Unreachable {
                    address: "root@127.0.0.1:2222".into(),
                    detail: no_route.into()
                }
            );
        }
    }
}
