//! The `openssh` transport: the system `ssh` with a ControlMaster per host (openssh crate).
//!
//! Going through the user's own ssh binary is what makes `~/.ssh/config`, ProxyJump,
//! agents, certificates and site-specific crypto policy work without dnsfix knowing about
//! them. Errors come back as ssh's own text, which is classified into [`TransportError`].

use std::path::PathBuf;


use openssh::{KnownHosts, SessionBuilder, Stdio};
use tokio::io::AsyncWriteExt;

use super::{ExecOutput, HostKeyPolicy, SshOptions, Target, TransportError, bounded};

#[derive(Debug)]
pub struct OpenSshTransport {
    builder: SessionBuilder,
    default_user: Option<String>,
    default_key: Option<PathBuf>,
    command_timeout: std::time::Duration,
}

impl OpenSshTransport {
    pub fn new(options: &SshOptions) -> Result<OpenSshTransport, TransportError> {
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
            .control_directory(control_dir()?);
        if let Some(path) = &options.known_hosts {
            builder.user_known_hosts_file(path);
        }
        if let Some(path) = &options.ssh_config {
            builder.config_file(path);
        }
        Ok(OpenSshTransport {
            builder,
            default_user: options.user.clone(),
            default_key: options.private_key.clone(),
            command_timeout: options.command_timeout,
        })
    }

    pub async fn connect(&self, target: &Target) -> Result<OpenSshSession, TransportError> {
        let c = &target.connection;
        let mut builder = self.builder.clone();
        if let Some(port) = c.port {
            builder.port(port);
        }
        if let Some(user) = c.user.as_ref().or(self.default_user.as_ref()) {
            builder.user(user.clone());
        }
        if let Some(key) = c.private_key.as_ref().or(self.default_key.as_ref()) {
            builder.keyfile(key);
        }
        let session = builder
            .connect(&c.address)
            .await
            .map_err(|e| classify(target, &error_text(&e)))?;
        Ok(OpenSshSession { session, target: target.clone(), command_timeout: self.command_timeout })
    }
}

#[derive(Debug)]
pub struct OpenSshSession {
    session: openssh::Session,
    target: Target,
    command_timeout: std::time::Duration,
}

impl OpenSshSession {
    pub async fn exec(&mut self, command: &str, stdin: &[u8]) -> Result<ExecOutput, TransportError> {
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
            let out = child.wait_with_output().await.map_err(|e| classify(target, &error_text(&e)))?;
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

    pub async fn close(self) {
        let _ = self.session.close().await;
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
        let offending =
            text.lines().find(|l| l.contains("Offending")).map(|l| format!(" ({})", l.trim()));
        return TransportError::HostKeyChanged { address, detail: offending.unwrap_or_default() };
    }
    if text.contains("Host key verification failed") || text.contains("host key is known for") {
        return TransportError::HostKeyUnknown { address, hint: String::new() };
    }
    if text.contains("Permission denied") || text.contains("Too many authentication failures") {
        return TransportError::Auth { address, detail };
    }
    if text.contains("Connection refused") {
        return TransportError::Refused { address };
    }
    if text.contains("timed out") || text.contains("Timeout") {
        return TransportError::Timeout { seconds: 0, during: "connecting" };
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

fn control_dir() -> Result<PathBuf, TransportError> {
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .unwrap_or_else(std::env::temp_dir);
    let dir = base.join("dnsfix-ssh");
    std::fs::create_dir_all(&dir)
        .and_then(|()| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
        })
        .map_err(|e| {
            TransportError::Other(format!("cannot create ssh control directory {}: {e}", dir.display()))
        })?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::{Connection, ConnectionKind};

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

    #[test]
    fn classifies_ssh_failures() {
        let changed = "@@@@@@@@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\nOffending ED25519 key in /tmp/kh:3\nHost key verification failed.";
        assert!(matches!(classify(&target(), changed), TransportError::HostKeyChanged { .. }));
        let unknown = "No ED25519 host key is known for [127.0.0.1]:2222 and you have requested strict checking.\r\nHost key verification failed.";
        assert!(matches!(classify(&target(), unknown), TransportError::HostKeyUnknown { .. }));
        let refused = "ssh: connect to host 127.0.0.1 port 2222: Connection refused";
        assert_eq!(
            classify(&target(), refused),
            TransportError::Refused { address: "root@127.0.0.1:2222".into() }
        );
        let auth = "root@127.0.0.1: Permission denied (publickey).";
        assert!(matches!(classify(&target(), auth), TransportError::Auth { .. }));
    }
}
