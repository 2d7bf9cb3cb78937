//! The `openssh` transport: the system `ssh` with a ControlMaster per host (openssh crate).
//!
//! Going through the user's own ssh binary is what makes `~/.ssh/config`, ProxyJump,
//! agents, certificates and site-specific crypto policy work without dnsfix knowing about
//! them. Errors come back as ssh's own text, which is classified into [`TransportError`].
//!
//! Masters persist for `--ssh-persist` seconds after a run (like Ansible's
//! `ControlPersist=60s`), so `facts`, `check`, `plan` and `apply` in a row pay for one
//! handshake per host, not one per command. A master is only reused for the same address,
//! port, user, key, ssh_config, known_hosts and host key policy it was made with, and
//! never by `apply` or `rollback`: what writes to a node connects afresh, so a host key
//! that changed since the plan is checked (their own masters are left for the next run).

use std::path::PathBuf;

use openssh::{ControlPersist, KnownHosts, SessionBuilder, Stdio};
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use super::{ExecOutput, HostKeyPolicy, SshOptions, Target, TransportError, bounded};

#[derive(Debug)]
pub struct OpenSshTransport {
    builder: SessionBuilder,
    control_dir: PathBuf,
    /// Seconds an idle master outlives the run; 0 closes masters at the end of the run.
    persist: u64,
    /// Resume a master an earlier run left (not for apply and rollback).
    reuse: bool,
    /// What a reusable master must have been made with, beyond the target itself.
    options_digest: String,
    default_user: Option<String>,
    default_key: Option<PathBuf>,
    connect_timeout: std::time::Duration,
    command_timeout: std::time::Duration,
}

impl OpenSshTransport {
    pub fn new(options: &SshOptions) -> Result<OpenSshTransport, TransportError> {
        let control_dir = control_dir()?;
        let mut builder = SessionBuilder::default();
        builder
            .known_hosts_check(match options.host_keys {
                HostKeyPolicy::Strict => KnownHosts::Strict,
                HostKeyPolicy::AcceptNew => KnownHosts::Add,
            })
            .connect_timeout(options.connect_timeout)
            .server_alive_interval(std::time::Duration::from_secs(15))
            // Control sockets live in a short private path: unix socket paths are limited
            // to about 100 bytes and the crate adds a random directory per session.
            .control_directory(&control_dir);
        if let Some(secs) =
            std::num::NonZeroUsize::new(usize::try_from(options.ssh_persist).unwrap_or(usize::MAX))
        {
            builder.control_persist(ControlPersist::IdleFor(secs));
        }
        remove_dead_masters(&control_dir);
        if let Some(path) = &options.known_hosts {
            builder.user_known_hosts_file(path);
        }
        if let Some(path) = &options.ssh_config {
            builder.config_file(path);
        }
        let options_digest = format!(
            "{:?}|{:?}|{:?}|{:?}|{:?}",
            options.host_keys,
            options.known_hosts,
            options.ssh_config,
            options.user,
            options.private_key
        );
        Ok(OpenSshTransport {
            builder,
            control_dir,
            persist: options.ssh_persist,
            reuse: options.reuse_masters,
            options_digest,
            default_user: options.user.clone(),
            default_key: options.private_key.clone(),
            connect_timeout: options.connect_timeout,
            command_timeout: options.command_timeout,
        })
    }

    pub async fn connect(&self, target: &Target) -> Result<OpenSshSession, TransportError> {
        let index = self
            .control_dir
            .join(format!("{}.ctl", self.master_key(target)));
        if self.persist > 0
            && self.reuse
            && let Some(session) = resume(&index).await
        {
            return Ok(self.session(session, target, Some(index)));
        }
        let session = self.launch(target).await?;
        let index = (self.persist > 0).then_some(index);
        Ok(self.session(session, target, index))
    }

    fn session(
        &self,
        session: openssh::Session,
        target: &Target,
        index: Option<PathBuf>,
    ) -> OpenSshSession {
        OpenSshSession {
            session,
            target: target.clone(),
            command_timeout: self.command_timeout,
            index,
        }
    }

    /// Names the master for this target and these options.
    fn master_key(&self, target: &Target) -> String {
        let c = &target.connection;
        let text = format!(
            "{}|{:?}|{:?}|{:?}|{}",
            c.address, c.port, c.user, c.private_key, self.options_digest
        );
        let digest = Sha256::digest(text.as_bytes());
        digest.iter().take(10).map(|b| format!("{b:02x}")).collect()
    }

    async fn launch(&self, target: &Target) -> Result<openssh::Session, TransportError> {
        let c = &target.connection;
        let mut builder = self.builder.clone();
        if let Some(port) = c.port {
            builder.port(port);
        }
        if let Some(user) = c.user.as_ref().or(self.default_user.as_ref()) {
            builder.user(user.clone());
        }
        if let Some(key) = c.private_key.as_ref().or(self.default_key.as_ref()) {
            literal_path(key).map_err(|why| {
                TransportError::Other(format!(
                    "the private key (ansible_ssh_private_key_file) {why}"
                ))
            })?;
            builder.keyfile(key);
        }
        let session = builder.connect(&c.address).await.map_err(|e| {
            match classify(target, &error_text(&e)) {
                TransportError::Timeout { during, .. } => TransportError::Timeout {
                    seconds: self.connect_timeout.as_secs(),
                    during,
                },
                other => other,
            }
        })?;
        Ok(session)
    }
}

#[derive(Debug)]
pub struct OpenSshSession {
    session: openssh::Session,
    target: Target,
    command_timeout: std::time::Duration,
    /// Where to record the master for the next run, when masters persist.
    index: Option<PathBuf>,
}

impl OpenSshSession {
    pub async fn exec(
        &mut self,
        command: &str,
        stdin: &[u8],
    ) -> Result<ExecOutput, TransportError> {
        let target = &self.target;
        bounded(self.command_timeout, async {
            let mut child = self
                .session
                .raw_command(command)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .await
                .map_err(|e| classify(target, &error_text(&e)))?;
            if let Some(mut input) = child.stdin().take() {
                let _ = input.write_all(stdin).await;
                let _ = input.shutdown().await;
            }
            let out = child
                .wait_with_output()
                .await
                .map_err(|e| classify(target, &error_text(&e)))?;
            // ssh exits 255 for its own failures, with the reason on stderr.
            if out.status.code() == Some(255) {
                let text = String::from_utf8_lossy(&out.stderr);
                return Err(classify(target, &text));
            }
            Ok(ExecOutput {
                stdout: out.stdout,
                stderr: out.stderr,
                exit_status: out.status.code().and_then(|c| u32::try_from(c).ok()),
            })
        })
        .await
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
        let dir = tempfile_dir().map_err(|e| TcpFailure::Failed(e.to_string()))?;
        let socket = dir.join("dns");
        let remote = openssh::Socket::from((server, port));
        self.session
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
        let _ = self
            .session
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

    pub async fn close(self) {
        match self.index {
            Some(index) => {
                // Leave the master running (it exits by itself when idle) and note where
                // its socket is; written via rename so a reader never sees half a path.
                let (ctl, _log) = self.session.detach();
                let tmp = index.with_extension(format!("tmp{}", std::process::id()));
                if std::fs::write(&tmp, ctl.to_string_lossy().as_bytes()).is_ok() {
                    let _ = std::fs::rename(&tmp, &index);
                }
            }
            None => {
                let _ = self.session.close().await;
            }
        }
    }
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

/// A live master recorded by an earlier run, if its socket still answers.
async fn resume(index: &std::path::Path) -> Option<openssh::Session> {
    let ctl = std::fs::read_to_string(index).ok()?;
    let ctl = PathBuf::from(ctl.trim());
    if !ctl.exists() {
        return None;
    }
    let log = ctl.with_file_name("log");
    let session = openssh::Session::resume(ctl.into_boxed_path(), Some(log.into_boxed_path()));
    match session.check().await {
        Ok(()) => Some(session),
        Err(_) => None,
    }
}

/// Removes master directories whose socket is gone (the master exited when idle), so the
/// control directory does not fill up over time.
fn remove_dead_masters(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        // A directory without a socket may be a master another dnsfix is starting right
        // now: only directories idle for minutes are dead.
        let idle = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > std::time::Duration::from_secs(600));
        if name.starts_with(".ssh-connection") && idle && !path.join("master").exists() {
            let _ = std::fs::remove_dir_all(&path);
        } else if name.ends_with(".ctl")
            && std::fs::read_to_string(&path)
                .map(|c| !std::path::Path::new(c.trim()).exists())
                .unwrap_or(true)
        {
            let _ = std::fs::remove_file(&path);
        }
    }
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
            seconds: 0,
            during: "connecting",
        };
    }
    if text.contains("Could not resolve") || text.contains("Name or service not known") {
        return TransportError::Resolve { address };
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
fn control_dir() -> Result<PathBuf, TransportError> {
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .unwrap_or_else(std::env::temp_dir);
    control_dir_in(&base, own_uid())
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
        let fresh = base.join(format!("dnsfix-ssh-{uid}-{}", crate::util::nonce()));
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
            },
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("dnsfix-ctl-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        dir
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
    }
}
