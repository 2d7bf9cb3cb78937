//! Transports: how dnsfix reaches a node and runs one command there.
//!
//! Three backends sit behind [`Transport`]: the system OpenSSH client through a
//! ControlMaster (`openssh`, the default, so `~/.ssh/config`, ProxyJump, agents and
//! certificates work), a pure-Rust client (`russh`, no child processes, for wide fan-out)
//! and `local`. A transport knows nothing about facts: it opens a session, runs a command
//! with bytes on stdin and hands back what came out. Becoming root is the caller's
//! business ([`BECOME_ROOT_SH`]), so every backend behaves the same way. [`children`]
//! lists the processes the backends start, so that none outlives dnsfix, however it ends.

pub mod children;
mod known_hosts;
mod local;
mod openssh;
mod output;
mod russh;

use std::path::PathBuf;
use std::time::Duration;

pub use self::local::LocalTransport;
pub use self::openssh::{OpenSshTransport, literal_path};
pub use self::output::OutputCap;
pub use self::russh::RusshTransport;
use crate::inventory::{Connection, ConnectionKind};

/// The remote command that runs the script on stdin as root: directly when the login user
/// is root, through `sudo -n` otherwise (never prompting: a sudo that wants a password is
/// reported as [`TransportError::SudoPassword`]). The effective uid is read from the login
/// shell's own `/proc/self/status` (as gather.sh does), so on Linux this starts no `id`
/// process on every node for every command; `id -u` remains the fallback elsewhere. The
/// loop reads only that file: the script still waiting on stdin is left alone.
pub const BECOME_ROOT_SH: &str = concat!(
    "u=; { while read -r k _ e _; do [ \"$k\" = Uid: ] && { u=$e; break; }; done ",
    "</proc/self/status; } 2>/dev/null; [ -n \"$u\" ] || u=$(id -u); ",
    "if [ \"$u\" -eq 0 ]; then exec /bin/sh -s; else exec sudo -n /bin/sh -s; fi"
);

/// How much longer than the connect timeout either backend gives a login. sshd looks
/// up the client's name with `UseDNS yes` (and GSSAPI or PAM may): on a node whose DNS is
/// broken each lookup waits for the resolver's timeouts (glibc: 5 s, 2 attempts, up to 3
/// servers: 30 s), and sshd asks twice (the name, then its address back). sshd itself
/// gives a login 120 s (LoginGraceTime).
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(60);

/// Which SSH implementation carries `ansible_connection: ssh` hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SshBackend {
    #[default]
    OpenSsh,
    Russh,
}

/// How host keys are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HostKeyPolicy {
    /// The key must already be in known_hosts (OpenSSH `StrictHostKeyChecking=yes`).
    #[default]
    Strict,
    /// Trust on first use: unknown keys are learned; a changed key is still refused.
    AcceptNew,
}

/// Settings shared by every connection of a run (validated from the command line).
#[derive(Debug, Clone)]
pub struct SshOptions {
    pub backend: SshBackend,
    pub host_keys: HostKeyPolicy,
    /// Overrides the default known_hosts file(s).
    pub known_hosts: Option<PathBuf>,
    /// An ssh_config file for the openssh backend (`ssh -F`).
    pub ssh_config: Option<PathBuf>,
    /// Defaults for hosts whose inventory does not set them.
    pub user: Option<String>,
    pub private_key: Option<PathBuf>,
    /// The TCP connect and the server's banner (ssh's ConnectTimeout).
    pub connect_timeout: Duration,
    /// How much longer than the connect timeout a login may take (openssh: the key
    /// exchange and authentication; russh: authentication, its deadline counted from the
    /// connect): a sshd that does reverse DNS on a node whose DNS is broken can take many
    /// seconds to accept a login.
    pub login_timeout: Duration,
    pub command_timeout: Duration,
    /// Key exchange algorithms for the russh backend, most preferred first.
    pub russh_kex: Vec<String>,
    /// Seconds an idle OpenSSH master outlives the run (0: close at the end of the run).
    pub ssh_persist: u64,
    /// Use a master an earlier run left (false for apply and rollback: what writes to a
    /// node connects afresh, so a host key that changed since the plan is seen).
    pub reuse_masters: bool,
}

impl Default for SshOptions {
    fn default() -> Self {
        SshOptions {
            backend: SshBackend::OpenSsh,
            host_keys: HostKeyPolicy::Strict,
            known_hosts: None,
            ssh_config: None,
            user: None,
            private_key: None,
            connect_timeout: Duration::from_secs(10),
            login_timeout: LOGIN_TIMEOUT,
            command_timeout: Duration::from_secs(60),
            russh_kex: russh::DEFAULT_KEX.iter().map(|s| (*s).to_owned()).collect(),
            ssh_persist: 60,
            reuse_masters: true,
        }
    }
}

/// One node as a transport sees it: the inventory name (for messages) and how to reach it.
#[derive(Debug, Clone)]
pub struct Target {
    pub host: String,
    pub connection: Connection,
}

impl Target {
    /// `user@address:port` as far as the inventory says, for messages.
    pub fn describe(&self) -> String {
        let c = &self.connection;
        let mut s = String::new();
        if let Some(user) = &c.user {
            s.push_str(user);
            s.push('@');
        }
        s.push_str(&c.address);
        if let Some(port) = c.port {
            s.push_str(&format!(":{port}"));
        }
        s
    }
}

/// What a remote command produced.
#[derive(Debug, Clone, Default)]
pub struct ExecOutput {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// `None` when the command was killed by a signal or the channel closed without a status.
    pub exit_status: Option<u32>,
}

/// Why a host could not be reached or a command could not run. The variants are the
/// reasons a user acts on differently, so they are kept apart.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum TransportError {
    #[error("connection refused by {address}")]
    Refused { address: String },
    #[error("timed out after {seconds}s {during} {address}")]
    Timeout {
        address: String,
        seconds: u64,
        during: Phase,
    },
    #[error("authentication failed for {address}: {detail}")]
    Auth { address: String, detail: String },
    #[error(
        "host key for {address} is not in known_hosts{hint}; verify it and add it, or pass --accept-new-host-keys to trust it on first use"
    )]
    HostKeyUnknown { address: String, hint: String },
    #[error(
        "host key for {address} has CHANGED since it was recorded{detail}; refusing to connect (possible man-in-the-middle, or the node was rebuilt: remove the old key with `ssh-keygen -R` once verified)"
    )]
    HostKeyChanged { address: String, detail: String },
    #[error("host key for {address} is refused: {reason}")]
    HostKeyRefused { address: String, reason: String },
    #[error(
        "sudo on {address} wants a password; dnsfix runs `sudo -n` and never prompts: grant NOPASSWD or connect as root{hint}"
    )]
    SudoPassword { address: String, hint: String },
    #[error(
        "sudo is not installed on {address} (or not on the login user's PATH); dnsfix becomes root only through `sudo -n`: install sudo with NOPASSWD for this user, or connect as root{hint}"
    )]
    SudoMissing { address: String, hint: String },
    #[error("cannot resolve {address}")]
    Resolve { address: String },
    /// No route to the node's address: the network says so (`No route to host`, `Network
    /// is unreachable`), without the connect timeout.
    #[error("cannot reach {address}: {detail}")]
    Unreachable { address: String, detail: String },
    #[error("connection to {address} lost: {detail}")]
    Disconnected { address: String, detail: String },
    /// sshd answered the exec request with a failure: it could not start the command
    /// (most likely a node at its process limit), so nothing ran.
    #[error(
        "sshd on {address} refused to start the command, so nothing ran there (most likely it could not start the login shell: a node at its process limit logs `fork: Resource temporarily unavailable`)"
    )]
    ExecRefused { address: String },
    /// A command's stdout passed the session's [`OutputCap`]: the command was ended there.
    #[error(
        "the command's output on {address} passed {cap}, the most dnsfix reads of one command; nothing of it was used"
    )]
    OutputTooLarge { address: String, cap: String },
    #[error("{0}")]
    Other(String),
}

/// What a connection was doing when its time ran out, as a message says it before the
/// address: "timed out after 10s while connecting to root@10.0.0.5:22".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The TCP connect (and, with OpenSSH, the banner).
    Connecting,
    /// russh's key exchange and host key check.
    Handshake,
    /// The login: OpenSSH's up to its master answering, russh's authentication.
    LoggingIn,
    Command,
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Phase::Connecting => "while connecting to",
            Phase::Handshake => "in the SSH handshake with",
            Phase::LoggingIn => "while logging in to",
            Phase::Command => "while running the command on",
        })
    }
}

impl TransportError {
    /// Whether nothing ran on the node: no connection, no login, no trusted host key, or
    /// a sshd that would not start the command. Reports call such a host `unreachable`
    /// whichever step asked first (the OpenSSH backend connects at its first command,
    /// russh at connect).
    pub fn unreached(&self) -> bool {
        match self {
            TransportError::Refused { .. }
            | TransportError::Resolve { .. }
            | TransportError::Auth { .. }
            | TransportError::HostKeyUnknown { .. }
            | TransportError::HostKeyChanged { .. }
            | TransportError::HostKeyRefused { .. }
            | TransportError::Unreachable { .. }
            | TransportError::ExecRefused { .. } => true,
            TransportError::Timeout { during, .. } => *during != Phase::Command,
            TransportError::SudoPassword { .. }
            | TransportError::SudoMissing { .. }
            | TransportError::Disconnected { .. }
            | TransportError::OutputTooLarge { .. }
            | TransportError::Other(_) => false,
        }
    }

    /// A short stable word for reports and JSON (`refused`, `timeout`, `auth`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            TransportError::Refused { .. } => "refused",
            TransportError::Timeout { .. } => "timeout",
            TransportError::Auth { .. } => "auth",
            TransportError::HostKeyUnknown { .. } => "host_key_unknown",
            TransportError::HostKeyChanged { .. } => "host_key_changed",
            TransportError::HostKeyRefused { .. } => "host_key_refused",
            TransportError::SudoPassword { .. } => "sudo_password",
            TransportError::SudoMissing { .. } => "sudo_missing",
            TransportError::Resolve { .. } => "resolve",
            TransportError::Unreachable { .. } => "unreachable",
            TransportError::Disconnected { .. } => "disconnected",
            TransportError::ExecRefused { .. } => "exec_refused",
            TransportError::OutputTooLarge { .. } => "output_too_large",
            TransportError::Other(_) => "error",
        }
    }
}

/// Checks a finished command's stderr for the failures every backend shares: sudo refusing
/// to run without a password, and no sudo to run. Where the inventory asks for another
/// become method (`su`, `doas`), the error says that dnsfix does not use it.
pub fn check_sudo(target: &Target, output: &ExecOutput) -> Result<(), TransportError> {
    if output.exit_status == Some(0) {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let hint = || match &target.connection.become_method {
        Some(method) => {
            format!(" (the inventory's {method}: dnsfix does not use that method, only `sudo -n`)")
        }
        None => String::new(),
    };
    if stderr.contains("a password is required") || stderr.contains("a terminal is required") {
        return Err(TransportError::SudoPassword {
            address: target.describe(),
            hint: hint(),
        });
    }
    // `exec sudo` in BECOME_ROOT_SH with no sudo: the shell's own message (dash "exec: sudo:
    // not found", bash "exec: sudo: not found", busybox ash "sudo: not found") and 127.
    if output.exit_status == Some(127)
        && stderr
            .lines()
            .any(|line| line.contains("sudo: not found") || line.contains("sudo: No such file"))
    {
        return Err(TransportError::SudoMissing {
            address: target.describe(),
            hint: hint(),
        });
    }
    Ok(())
}

/// A connected session to one node; more than one command may run over it.
#[derive(Debug)]
pub enum Session {
    OpenSsh(Box<self::openssh::OpenSshSession>),
    Russh(self::russh::RusshSession),
    Local(self::local::LocalSession),
}

impl Session {
    /// The bound on each later command.
    pub fn command_timeout(&self) -> Duration {
        match self {
            Session::OpenSsh(s) => s.command_timeout,
            Session::Russh(s) => s.command_timeout,
            Session::Local(s) => s.command_timeout,
        }
    }

    /// Bounds later commands by `timeout` (a script that restarts units and waits for them
    /// to answer needs longer than a read).
    pub fn set_command_timeout(&mut self, timeout: Duration) {
        match self {
            Session::OpenSsh(s) => s.command_timeout = timeout,
            Session::Russh(s) => s.command_timeout = timeout,
            Session::Local(s) => s.command_timeout = timeout,
        }
    }

    /// How much of each later command's output is kept ([`OutputCap`]).
    pub fn output_cap(&self) -> OutputCap {
        match self {
            Session::OpenSsh(s) => s.output_cap,
            Session::Russh(s) => s.output_cap,
            Session::Local(s) => s.output_cap,
        }
    }

    /// Keeps at most `cap` of each later command's output (kubectl's answers about a whole
    /// cluster are larger than any node's: [`OutputCap::KUBECTL`]).
    pub fn set_output_cap(&mut self, cap: OutputCap) {
        match self {
            Session::OpenSsh(s) => s.output_cap = cap,
            Session::Russh(s) => s.output_cap = cap,
            Session::Local(s) => s.output_cap = cap,
        }
    }

    /// Runs `command` (a shell command line) with `stdin`, bounded by the command timeout
    /// and the output cap: a stdout past it ends the command and fails it
    /// ([`TransportError::OutputTooLarge`]).
    pub async fn exec(
        &mut self,
        command: &str,
        stdin: &[u8],
    ) -> Result<ExecOutput, TransportError> {
        match self {
            Session::OpenSsh(s) => s.exec(command, stdin).await,
            Session::Russh(s) => s.exec(command, stdin).await,
            Session::Local(s) => s.exec(command, stdin).await,
        }
    }

    /// One DNS message over TCP to `server`:`port` from the node's side of the connection
    /// (an SSH direct-tcpip channel; on `local`, this machine's own socket), bounded by
    /// `timeout`: `query` goes out with its two-byte length, one length-prefixed reply
    /// comes back. Nothing runs on the node.
    pub async fn dns_tcp(
        &mut self,
        server: std::net::IpAddr,
        port: u16,
        query: &[u8],
        timeout: Duration,
    ) -> Result<Vec<u8>, TcpFailure> {
        match self {
            // The OpenSSH forward is set up and torn down around the bounded exchange, so a
            // server that never answers leaves no forward behind.
            Session::OpenSsh(s) => s.dns_tcp(server, port, query, timeout).await,
            Session::Russh(s) => within(timeout, s.dns_tcp(server, port, query)).await,
            Session::Local(_) => {
                within(timeout, async {
                    let stream = tokio::net::TcpStream::connect((server, port))
                        .await
                        .map_err(|e| TcpFailure::Failed(e.to_string()))?;
                    dns_exchange(stream, query).await
                })
                .await
            }
        }
    }

    /// Closes the session; errors on close are not interesting once the work is done.
    pub async fn close(self) {
        match self {
            Session::OpenSsh(s) => s.close().await,
            Session::Russh(s) => s.close().await,
            Session::Local(_) => {}
        }
    }
}

/// Why a DNS-over-TCP exchange through the connection gave no reply.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TcpFailure {
    /// The SSH server refuses to forward (`AllowTcpForwarding no`): another way may work.
    #[error("the SSH server does not forward TCP: {0}")]
    Forbidden(String),
    /// The forwarding worked but the server did not answer: refused, reset, closed.
    #[error("{0}")]
    Failed(String),
    #[error("no reply within {0:.1}s")]
    Timeout(f64),
}

/// `exchange`, or a timeout after `timeout`.
pub(crate) async fn within(
    timeout: Duration,
    exchange: impl std::future::Future<Output = Result<Vec<u8>, TcpFailure>>,
) -> Result<Vec<u8>, TcpFailure> {
    tokio::time::timeout(timeout, exchange)
        .await
        .unwrap_or(Err(TcpFailure::Timeout(timeout.as_secs_f64())))
}

/// Writes `query` with its two-byte length (RFC 1035 4.2.2) and reads one reply.
pub(crate) async fn dns_exchange<S>(mut stream: S, query: &[u8]) -> Result<Vec<u8>, TcpFailure>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let failed = |what: &str, e: std::io::Error| {
        TcpFailure::Failed(match e.kind() {
            std::io::ErrorKind::UnexpectedEof => format!("the connection closed {what}"),
            _ => format!("{what}: {e}"),
        })
    };
    let len = u16::try_from(query.len())
        .map_err(|_| TcpFailure::Failed("the query is too long".into()))?;
    let mut message = len.to_be_bytes().to_vec();
    message.extend_from_slice(query);
    stream
        .write_all(&message)
        .await
        .map_err(|e| failed("sending the query", e))?;
    stream
        .flush()
        .await
        .map_err(|e| failed("sending the query", e))?;
    let mut len = [0u8; 2];
    stream
        .read_exact(&mut len)
        .await
        .map_err(|e| failed("before a reply", e))?;
    let mut reply = vec![0u8; usize::from(u16::from_be_bytes(len))];
    stream
        .read_exact(&mut reply)
        .await
        .map_err(|e| failed("in the middle of the reply", e))?;
    Ok(reply)
}

/// Opens sessions to targets with the run's [`SshOptions`].
#[derive(Debug)]
pub struct Transport {
    options: SshOptions,
    openssh: OpenSshTransport,
    russh: RusshTransport,
}

impl Transport {
    pub fn new(options: SshOptions) -> Result<Transport, TransportError> {
        Ok(Transport {
            openssh: OpenSshTransport::new(&options)?,
            russh: RusshTransport::new(&options)?,
            options,
        })
    }

    pub fn options(&self) -> &SshOptions {
        &self.options
    }

    /// A session to `target`. With russh this connects and logs in, bounded by the
    /// connect timeout; with openssh nothing runs yet: the session's first command
    /// connects, under its own connect and login timeouts.
    pub async fn connect(&self, target: &Target) -> Result<Session, TransportError> {
        if target.connection.kind == ConnectionKind::Local {
            return Ok(Session::Local(LocalTransport::connect(&self.options)));
        }
        let c = &target.connection;
        if let Some(why) = &c.refused {
            return Err(TransportError::Other(why.clone()));
        }
        if self.options.backend == SshBackend::Russh && !c.ssh_args.is_empty() {
            return Err(TransportError::Other(format!(
                "host `{}`: {} sets options for the system ssh ({}), which russh cannot follow (it runs no ProxyCommand): use --ssh-backend openssh",
                target.host,
                c.ssh_args_from.join(" and "),
                c.ssh_args.join(" "),
            )));
        }
        // Each backend bounds its steps itself (russh: the TCP connect and the handshake
        // each by the connect timeout, the login by the connect and login timeouts from
        // the start); this outer bound is the last resort, 2 s above their sum.
        let steps = match self.options.backend {
            SshBackend::OpenSsh => self.options.connect_timeout,
            SshBackend::Russh => self.options.connect_timeout * 2 + self.options.login_timeout,
        };
        let seconds = steps.as_secs();
        let bound = steps + Duration::from_secs(2);
        let connecting = async {
            match self.options.backend {
                SshBackend::OpenSsh => self
                    .openssh
                    .connect(target)
                    .await
                    .map(|s| Session::OpenSsh(Box::new(s))),
                SshBackend::Russh => self.russh.connect(target).await.map(Session::Russh),
            }
        };
        tokio::time::timeout(bound, connecting)
            .await
            .map_err(|_| TransportError::Timeout {
                address: target.describe(),
                seconds,
                during: Phase::Connecting,
            })?
    }
}

/// Runs `fut` under the command timeout, naming what was running and where.
pub(crate) async fn bounded<T>(
    timeout: Duration,
    address: &str,
    fut: impl std::future::Future<Output = Result<T, TransportError>>,
) -> Result<T, TransportError> {
    tokio::time::timeout(timeout, fut)
        .await
        .map_err(|_| TransportError::Timeout {
            address: address.to_owned(),
            seconds: timeout.as_secs(),
            during: Phase::Command,
        })?
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A newcomer's walk: russh said "timed out after 3s while the SSH handshake", OpenSSH
    /// "timed out after 10s while connecting", neither where to.
    #[test]
    fn a_timeout_says_what_it_was_doing_and_where() {
        let timeout = |during| {
            TransportError::Timeout {
                address: "root@10.0.0.5:2222".into(),
                seconds: 3,
                during,
            }
            .to_string()
        };
        assert_eq!(
            timeout(Phase::Handshake),
            "timed out after 3s in the SSH handshake with root@10.0.0.5:2222"
        );
        assert_eq!(
            timeout(Phase::Connecting),
            "timed out after 3s while connecting to root@10.0.0.5:2222"
        );
        assert_eq!(
            timeout(Phase::LoggingIn),
            "timed out after 3s while logging in to root@10.0.0.5:2222"
        );
        assert_eq!(
            timeout(Phase::Command),
            "timed out after 3s while running the command on root@10.0.0.5:2222"
        );
    }

    fn sudo_target(method: Option<&str>) -> Target {
        let mut connection = crate::inventory::Host::new("n1").connection();
        connection.become_method = method.map(str::to_owned);
        Target {
            host: "n1".into(),
            connection,
        }
    }

    fn failed(status: u32, stderr: &str) -> ExecOutput {
        ExecOutput {
            stdout: Vec::new(),
            stderr: stderr.as_bytes().to_vec(),
            exit_status: Some(status),
        }
    }

    #[test]
    fn sudo_without_a_password_or_without_sudo_is_named() {
        let plain = sudo_target(None);
        let err = check_sudo(&plain, &failed(1, "sudo: a password is required\n"))
            .expect_err("sudo failed");
        assert_eq!(err.kind(), "sudo_password");
        assert!(!err.to_string().contains("method"), "{err}");
        // The shells' own words for `exec sudo` with no sudo (dash, bash, busybox ash).
        for stderr in [
            "/bin/dash: 1: exec: sudo: not found",
            "/bin/bash: line 1: exec: sudo: not found",
            "sh: exec: line 0: sudo: not found",
        ] {
            let err = check_sudo(&plain, &failed(127, stderr)).expect_err("sudo failed");
            assert_eq!(err.kind(), "sudo_missing", "{stderr}");
        }
        // A script that fails for its own reasons is not sudo's failure.
        assert!(check_sudo(&plain, &failed(127, "sh: 3: ip: not found")).is_ok());
        assert!(check_sudo(&plain, &failed(0, "sudo: a password is required")).is_ok());
        let su = sudo_target(Some(
            "`ansible_become_method` (group_vars/all.yml) is \"su\"",
        ));
        for (status, stderr) in [
            (1, "sudo: a password is required"),
            (127, "sh: 1: exec: sudo: not found"),
        ] {
            let err = check_sudo(&su, &failed(status, stderr)).expect_err("sudo failed");
            let expected = "the inventory's `ansible_become_method` (group_vars/all.yml) is \"su\": dnsfix does not use that method";
            assert!(err.to_string().contains(expected), "{err}");
        }
    }
}
