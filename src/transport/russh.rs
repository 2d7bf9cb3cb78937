//! The `russh` transport: a pure-Rust SSH client, no child processes per host.
//!
//! It does not read `~/.ssh/config`; it takes the address, port, user and key from the
//! inventory and the command line. Host keys are checked against known_hosts with the same
//! policy as OpenSSH's `StrictHostKeyChecking=yes` (or `accept-new`). The key exchange
//! order is explicit ([`DEFAULT_KEX`]) because it dominates connection time.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use russh::client::{self, AuthResult, Handle};
use russh::keys::{PrivateKeyWithHashAlg, PublicKeyOrCertificate};

use super::known_hosts::Verdict as KnownHosts;
use russh::keys::Algorithm;
use russh::{ChannelMsg, Disconnect, kex};

use super::output::Kept;
use super::{ExecOutput, HostKeyPolicy, SshOptions, Target, TransportError, bounded};

/// Key exchange, most preferred first. Classical curve25519 comes first: it is several
/// times cheaper than the hybrid post-quantum mlkem768x25519 that OpenSSH 10 prefers, and
/// for a read-mostly fan-out over hundreds of nodes the handshake is most of the cost.
/// Sites that want the post-quantum exchange first say so with `--russh-kex`.
pub const DEFAULT_KEX: &[&str] = &[
    "curve25519-sha256",
    "curve25519-sha256@libssh.org",
    "mlkem768x25519-sha256",
    "ecdh-sha2-nistp256",
    "diffie-hellman-group14-sha256",
];

/// Every connection's client config, whatever host key types it asks for first: one
/// constructor, so no connection goes without the keepalives. `inactivity` bounds a
/// connection the server says nothing on.
fn client_config(inactivity: Duration, preferred: russh::Preferred) -> client::Config {
    client::Config {
        preferred,
        inactivity_timeout: Some(inactivity),
        // A command may run silent for longer than that (apply's handlers wait for a
        // restarted kubelet): the server's answers to keepalives keep the connection,
        // and a server that stops answering three is gone.
        keepalive_interval: Some((inactivity / 2).min(Duration::from_secs(15))),
        keepalive_max: 3,
        nodelay: true,
        ..Default::default()
    }
}

/// The known_hosts files a host key is checked against, as OpenSSH reads them: the user's
/// (`--known-hosts`, else `~/.ssh/known_hosts` and `~/.ssh/known_hosts2`: ssh_config(5)
/// UserKnownHostsFile), then the system's (`/etc/ssh/ssh_known_hosts` and
/// `ssh_known_hosts2`: GlobalKnownHostsFile), which `--known-hosts` does not replace, as
/// UserKnownHostsFile does not: a key the system's files mark `@revoked` is refused
/// whatever file is given. A key learned goes to the first of the user's.
fn known_hosts_files(given: Option<&Path>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    match given {
        Some(path) => files.push(path.to_path_buf()),
        None => {
            if let Some(home) = std::env::home_dir() {
                files.push(home.join(".ssh/known_hosts"));
                files.push(home.join(".ssh/known_hosts2"));
            }
        }
    }
    files.push(PathBuf::from("/etc/ssh/ssh_known_hosts"));
    files.push(PathBuf::from("/etc/ssh/ssh_known_hosts2"));
    files
}

/// Where a key trusted on first use is recorded: the first of `files` where it is the
/// user's, never a system file.
fn user_file(files: &[PathBuf]) -> Option<PathBuf> {
    files
        .first()
        .filter(|f| !f.starts_with("/etc/ssh"))
        .cloned()
}

#[derive(Debug)]
pub struct RusshTransport {
    config: Arc<client::Config>,
    /// How long a connection the server says nothing on is kept ([`client_config`]).
    inactivity: Duration,
    host_keys: HostKeyPolicy,
    known_hosts: Vec<PathBuf>,
    /// Where `--accept-new-host-keys` records a key: the user's file, never the system's.
    learn_into: Option<PathBuf>,
    default_user: Option<String>,
    default_key: Option<PathBuf>,
    connect_timeout: std::time::Duration,
    /// How much longer than the connect timeout a login may take, counted from the
    /// connect: as the openssh backend gives one.
    login_timeout: std::time::Duration,
    command_timeout: std::time::Duration,
}

impl RusshTransport {
    pub fn new(options: &SshOptions) -> Result<RusshTransport, TransportError> {
        let mut kexes = Vec::new();
        for name in &options.russh_kex {
            let name = kex::Name::try_from(name.as_str()).map_err(|_| {
                TransportError::Other(format!("unknown key exchange `{name}` in --russh-kex"))
            })?;
            kexes.push(name);
        }
        // Protocol extensions, always advertised: ext-info (rsa-sha2 signatures) and
        // OpenSSH's strict key exchange (the Terrapin fix).
        kexes.push(kex::EXTENSION_SUPPORT_AS_CLIENT);
        kexes.push(kex::EXTENSION_OPENSSH_STRICT_KEX_AS_CLIENT);
        let preferred = russh::Preferred {
            kex: kexes.into(),
            ..Default::default()
        };
        // russh's inactivity bound runs from the handshake on, and its keepalives only
        // once logged in: a login that waits on a sshd's reverse DNS must fit under it.
        let inactivity =
            options.command_timeout.max(options.login_timeout) + options.connect_timeout;
        let config = client_config(inactivity, preferred);
        let known_hosts = known_hosts_files(options.known_hosts.as_deref());
        let learn_into = user_file(&known_hosts);
        Ok(RusshTransport {
            config: Arc::new(config),
            inactivity,
            host_keys: options.host_keys,
            known_hosts,
            learn_into,
            default_user: options.user.clone(),
            default_key: options.private_key.clone(),
            connect_timeout: options.connect_timeout,
            login_timeout: options.login_timeout,
            command_timeout: options.command_timeout,
        })
    }

    /// The client config with the host key types in `known` asked for first, as OpenSSH
    /// orders them for a host it knows (an RSA key: its SHA-2 signatures first).
    fn config_preferring(&self, known: &[Algorithm]) -> client::Config {
        let family = |a: &Algorithm| match a {
            Algorithm::Rsa { .. } => Algorithm::Rsa { hash: None },
            other => other.clone(),
        };
        let rank = |a: &Algorithm| {
            known
                .iter()
                .position(|k| family(k) == family(a))
                .unwrap_or(known.len())
        };
        let mut order = self.config.preferred.key.to_vec();
        order.sort_by_key(rank);
        client_config(
            self.inactivity,
            russh::Preferred {
                key: order.into(),
                ..self.config.preferred.clone()
            },
        )
    }

    pub async fn connect(&self, target: &Target) -> Result<RusshSession, TransportError> {
        let started = tokio::time::Instant::now();
        let c = &target.connection;
        let address = target.describe();
        let port = c.port.unwrap_or(22);
        let seconds = self.connect_timeout.as_secs();
        let stream = tokio::time::timeout(
            self.connect_timeout,
            tokio::net::TcpStream::connect((c.address.as_str(), port)),
        )
        .await
        .map_err(|_| TransportError::Timeout {
            address: address.clone(),
            seconds,
            during: super::Phase::Connecting,
        })?
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::ConnectionRefused => TransportError::Refused {
                address: address.clone(),
            },
            _ if e.to_string().contains("failed to lookup") => TransportError::Resolve {
                address: address.clone(),
            },
            std::io::ErrorKind::HostUnreachable | std::io::ErrorKind::NetworkUnreachable => {
                TransportError::Unreachable {
                    address: address.clone(),
                    detail: e.to_string(),
                }
            }
            _ => TransportError::Disconnected {
                address: address.clone(),
                detail: e.to_string(),
            },
        })?;
        let _ = stream.set_nodelay(true);

        let verdict = Arc::new(Mutex::new(None));
        let handler = HostKeyCheck {
            host: c.address.clone(),
            port,
            policy: self.host_keys,
            files: self.known_hosts.clone(),
            learn_into: self.learn_into.clone(),
            verdict: Arc::clone(&verdict),
        };
        let known = super::known_hosts::known_algorithms(&self.known_hosts, &c.address, port);
        let config = if known.is_empty() {
            Arc::clone(&self.config)
        } else {
            Arc::new(self.config_preferring(&known))
        };
        let handshake = client::connect_stream(config, stream, handler);
        let mut handle = match tokio::time::timeout(self.connect_timeout, handshake).await {
            Err(_) => {
                return Err(TransportError::Timeout {
                    address,
                    seconds,
                    during: super::Phase::Handshake,
                });
            }
            Ok(Ok(handle)) => handle,
            Ok(Err(e)) => {
                let verdict = verdict.lock().ok().and_then(|mut v| v.take());
                return Err(match verdict {
                    Some(Verdict::Changed(detail)) => {
                        TransportError::HostKeyChanged { address, detail }
                    }
                    Some(Verdict::Unknown(hint)) => {
                        TransportError::HostKeyUnknown { address, hint }
                    }
                    Some(Verdict::Refused(reason)) => {
                        TransportError::HostKeyRefused { address, reason }
                    }
                    None => TransportError::Disconnected {
                        address,
                        detail: e.to_string(),
                    },
                });
            }
        };

        self.log_in(&mut handle, target, started, &address).await?;
        Ok(RusshSession {
            handle,
            address,
            command_timeout: self.command_timeout,
            output_cap: super::OutputCap::default(),
        })
    }

    /// Authenticates as the target's user (the inventory's, `--user`, `$USER`, or root).
    /// A sshd slow to let one in (reverse DNS on a node whose DNS is broken, PAM) has until
    /// the connect timeout and the login timeout from `started`, as over openssh.
    async fn log_in(
        &self,
        handle: &mut Handle<HostKeyCheck>,
        target: &Target,
        started: tokio::time::Instant,
        address: &str,
    ) -> Result<(), TransportError> {
        let c = &target.connection;
        let user = c
            .user
            .clone()
            .or_else(|| self.default_user.clone())
            .or_else(|| std::env::var("USER").ok())
            .unwrap_or_else(|| "root".to_owned());
        let key = c.private_key.as_ref().or(self.default_key.as_ref());
        let login = self.connect_timeout + self.login_timeout;
        match tokio::time::timeout_at(started + login, authenticate(handle, &user, key, address))
            .await
        {
            // A login the server ended (russh then reads as a key refused) is no refusal.
            Ok(Err(TransportError::Auth { .. })) if handle.is_closed() => {
                Err(TransportError::Disconnected {
                    address: address.to_owned(),
                    detail: "the connection closed during the login".into(),
                })
            }
            Ok(done) => done,
            Err(_) => Err(TransportError::Timeout {
                address: address.to_owned(),
                seconds: login.as_secs(),
                during: super::Phase::LoggingIn,
            }),
        }
    }
}

/// Tries the given key, or else the SSH agent and the default key files, like `ssh` does.
async fn authenticate(
    handle: &mut Handle<HostKeyCheck>,
    user: &str,
    key: Option<&PathBuf>,
    address: &str,
) -> Result<(), TransportError> {
    let auth_error = |detail: String| TransportError::Auth {
        address: address.to_owned(),
        detail,
    };
    let hash = handle
        .best_supported_rsa_hash()
        .await
        .ok()
        .flatten()
        .flatten();
    if let Some(path) = key {
        let key = match load_key(path) {
            Ok(key) => key,
            // An encrypted key (dnsfix never asks for a passphrase): the agent may hold it
            // unlocked, and ssh then signs with the agent.
            Err(why) => {
                return match agent_signs(handle, user, path, hash).await {
                    Some(true) => Ok(()),
                    Some(false) => Err(auth_error(format!(
                        "key {} (from the ssh agent) was not accepted for user {user}",
                        path.display()
                    ))),
                    None => Err(auth_error(why)),
                };
            }
        };
        return match handle
            .authenticate_publickey(user, PrivateKeyWithHashAlg::new(key, hash))
            .await
        {
            Ok(r) if r.success() => Ok(()),
            Ok(_) => Err(auth_error(format!(
                "key {} was not accepted for user {user}",
                path.display()
            ))),
            Err(e) => Err(auth_error(e.to_string())),
        };
    }

    let mut tried = Vec::new();
    if std::env::var_os("SSH_AUTH_SOCK").is_some()
        && let Ok(mut agent) = russh::keys::agent::client::AgentClient::connect_env().await
        && let Ok(identities) = agent.request_identities().await
    {
        for identity in identities {
            let public = identity.public_key().into_owned();
            if let Ok(AuthResult::Success) = handle
                .authenticate_publickey_with(user, public, hash, &mut agent)
                .await
            {
                return Ok(());
            }
        }
        tried.push("the ssh agent".to_owned());
    }
    if let Some(home) = std::env::home_dir() {
        for name in ["id_ed25519", "id_ecdsa", "id_rsa"] {
            let path = home.join(".ssh").join(name);
            let Ok(key) = load_key(&path) else { continue };
            if let Ok(r) = handle
                .authenticate_publickey(user, PrivateKeyWithHashAlg::new(key, hash))
                .await
                && r.success()
            {
                return Ok(());
            }
            tried.push(path.display().to_string());
        }
    }
    Err(auth_error(if tried.is_empty() {
        "no key to offer: set ansible_ssh_private_key_file or --private-key, or load a key into the agent"
            .to_owned()
    } else {
        format!("user {user} was refused with {}", tried.join(", "))
    }))
}

/// Logs in with the ssh agent's signature for the key at `path`, whose private half dnsfix
/// cannot read (encrypted): its public half from the file itself (an OpenSSH key keeps it
/// in the clear) or from `PATH.pub`. None where the agent does not hold that key (or there
/// is no agent); else whether the server accepted it.
async fn agent_signs(
    handle: &mut Handle<HostKeyCheck>,
    user: &str,
    path: &Path,
    hash: Option<russh::keys::HashAlg>,
) -> Option<bool> {
    let public = russh::keys::PrivateKey::read_openssh_file(path)
        .map(|k| k.public_key().clone())
        .ok()
        .or_else(|| {
            let mut pub_path = path.as_os_str().to_owned();
            pub_path.push(".pub");
            russh::keys::load_public_key(PathBuf::from(pub_path)).ok()
        })?;
    std::env::var_os("SSH_AUTH_SOCK")?;
    let mut agent = russh::keys::agent::client::AgentClient::connect_env()
        .await
        .ok()?;
    let held = agent.request_identities().await.ok()?;
    if !held
        .iter()
        .any(|i| i.public_key().key_data() == public.key_data())
    {
        return None;
    }
    Some(matches!(
        handle
            .authenticate_publickey_with(user, public, hash, &mut agent)
            .await,
        Ok(AuthResult::Success)
    ))
}

fn load_key(path: &Path) -> Result<Arc<russh::keys::PrivateKey>, String> {
    russh::keys::load_secret_key(path, None)
        .map(Arc::new)
        .map_err(|e| format!("cannot load private key {}: {e}", path.display()))
}

#[derive(Debug)]
enum Verdict {
    Unknown(String),
    Changed(String),
    Refused(String),
}

/// The russh handler: only the host key check, the rest is defaults.
#[derive(Debug)]
struct HostKeyCheck {
    host: String,
    port: u16,
    policy: HostKeyPolicy,
    files: Vec<PathBuf>,
    learn_into: Option<PathBuf>,
    verdict: Arc<Mutex<Option<Verdict>>>,
}

impl HostKeyCheck {
    fn record(&self, verdict: Verdict) {
        if let Ok(mut v) = self.verdict.lock() {
            *v = Some(verdict);
        }
    }
}

impl client::Handler for HostKeyCheck {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        server: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        let key = match server {
            PublicKeyOrCertificate::PublicKey { key, .. } => key.clone(),
            PublicKeyOrCertificate::Certificate(cert) => cert.public_key().clone().into(),
        };
        match super::known_hosts::check(&self.files, &self.host, self.port, &key) {
            KnownHosts::Known => return Ok(true),
            KnownHosts::Changed(at) => {
                self.record(Verdict::Changed(format!(" (recorded key at {at})")));
                return Ok(false);
            }
            KnownHosts::Revoked(at) => {
                self.record(Verdict::Refused(format!("it is marked @revoked at {at}")));
                return Ok(false);
            }
            KnownHosts::CertAuthority(at) => {
                self.record(Verdict::Refused(format!(
                    "{at} trusts a certificate authority for it, and the russh transport does not check host certificates: use --ssh-backend openssh"
                )));
                return Ok(false);
            }
            KnownHosts::Unknown => {}
        }
        if self.policy == HostKeyPolicy::AcceptNew {
            let Some(file) = &self.learn_into else {
                self.record(Verdict::Refused(
                    "it is new, and --accept-new-host-keys has no known_hosts of the user's to \
                     record it in (--known-hosts names a system file, or there is no home \
                     directory)"
                        .into(),
                ));
                return Ok(false);
            };
            // A key trusted on first use is one recorded: where it cannot be, the next run
            // would trust whatever key it meets again.
            return match super::known_hosts::learn(file, &self.host, self.port, &key) {
                Ok(()) => Ok(true),
                Err(e) => {
                    self.record(Verdict::Refused(format!(
                        "it is new, and --accept-new-host-keys could not record it in {}: {e}",
                        crate::text::escape(&file.display().to_string())
                    )));
                    Ok(false)
                }
            };
        }
        let files: Vec<String> = self.files.iter().map(|f| f.display().to_string()).collect();
        self.record(Verdict::Unknown(format!(" ({})", files.join(", "))));
        Ok(false)
    }
}

pub struct RusshSession {
    handle: Handle<HostKeyCheck>,
    address: String,
    pub(super) command_timeout: std::time::Duration,
    pub(super) output_cap: super::OutputCap,
}

impl std::fmt::Debug for RusshSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RusshSession")
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

impl RusshSession {
    pub async fn exec(
        &mut self,
        command: &str,
        stdin: &[u8],
    ) -> Result<ExecOutput, TransportError> {
        let address = self.address.clone();
        let lost = move |e: russh::Error| TransportError::Disconnected {
            address: address.clone(),
            detail: e.to_string(),
        };
        let handle = &self.handle;
        let cap = self.output_cap;
        let shown = &self.address;
        bounded(self.command_timeout, &self.address, async move {
            let channel = handle.channel_open_session().await.map_err(&lost)?;
            channel.exec(true, command).await.map_err(&lost)?;
            // stdin is sent while the output is read, as the openssh and local backends do:
            // a command that prints before it reads all of its stdin must not stall the
            // session (russh's channel buffer full, the node's window never refilled).
            let (mut read, write) = channel.split();
            let send = async {
                write.data(stdin).await?;
                write.eof().await
            };
            tokio::pin!(send);
            let mut sending = true;
            let mut unsent = None;
            let mut kept = Kept::new(cap);
            let mut exit_status = None;
            // The server closed the channel (russh passes its CHANNEL_CLOSE on before the
            // channel ends): without that, the connection went under the command.
            let mut closed = false;
            loop {
                tokio::select! {
                    sent = &mut send, if sending => {
                        sending = false;
                        // A command that ended without reading all of it: its answer
                        // still counts, if it comes.
                        unsent = sent.err();
                    }
                    msg = read.wait() => match msg {
                        None => break,
                        Some(ChannelMsg::Data { data }) => {
                            // Past the cap nothing more is read: the channel is closed,
                            // which ends the command on the node (its next write fails), as
                            // a lost connection does.
                            if !kept.stdout(&data) {
                                let _ = write.close().await;
                                return Err(kept.too_large(shown));
                            }
                        }
                        Some(ChannelMsg::ExtendedData { data, ext: 1 }) => kept.stderr(&data),
                        Some(ChannelMsg::ExitStatus { exit_status: s }) => exit_status = Some(s),
                        Some(ChannelMsg::Close) => closed = true,
                        // The answer to the exec request (sent wanting one): sshd could not
                        // start the command, and may leave the channel open for ever.
                        Some(ChannelMsg::Failure) => {
                            let _ = write.close().await;
                            return Err(TransportError::ExecRefused {
                                address: shown.clone(),
                            });
                        }
                        Some(_) => {}
                    },
                }
            }
            match (exit_status, unsent) {
                (None, Some(e)) => Err(lost(e)),
                // No close: the connection ended, not the channel (a signal's end is
                // closed too). Without a status the command's end is unknown; with one,
                // whether its output came whole (sshd sends the status when the command
                // exits, and what it left in the pipe after).
                (None, None) if !closed => Err(TransportError::Disconnected {
                    address: shown.clone(),
                    detail: "the connection closed before the command ended".into(),
                }),
                (Some(_), _) if !closed => Err(TransportError::Disconnected {
                    address: shown.clone(),
                    detail: "the connection closed after the command's exit status, before \
                             its output was known to be whole"
                        .into(),
                }),
                _ => Ok(kept.into_output(exit_status)),
            }
        })
        .await
    }

    /// DNS over TCP through a direct-tcpip channel opened from the node to `server`.
    pub async fn dns_tcp(
        &mut self,
        server: std::net::IpAddr,
        port: u16,
        query: &[u8],
    ) -> Result<Vec<u8>, super::TcpFailure> {
        let channel = self
            .handle
            .channel_open_direct_tcpip(server.to_string(), u32::from(port), "127.0.0.1", 0)
            .await
            .map_err(|e| match e {
                russh::Error::ChannelOpenFailure(
                    russh::ChannelOpenFailure::AdministrativelyProhibited,
                ) => super::TcpFailure::Forbidden("administratively prohibited".into()),
                russh::Error::ChannelOpenFailure(russh::ChannelOpenFailure::ConnectFailed) => {
                    super::TcpFailure::Failed(format!(
                        "the node cannot connect to {server}:{port} (refused or unreachable)"
                    ))
                }
                russh::Error::ChannelOpenFailure(reason) => {
                    super::TcpFailure::Failed(format!("the channel was refused: {reason:?}"))
                }
                other => super::TcpFailure::Failed(other.to_string()),
            })?;
        super::dns_exchange(channel.into_stream(), query).await
    }

    pub async fn close(self) {
        let _ = self
            .handle
            .disconnect(Disconnect::ByApplication, "", "en")
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As OpenSSH reads them: the given file in the place of the user's two, the system's
    /// two after either; a key is learned into the user's file only.
    #[test]
    fn known_hosts_are_the_users_then_the_systems() {
        let system = [
            PathBuf::from("/etc/ssh/ssh_known_hosts"),
            PathBuf::from("/etc/ssh/ssh_known_hosts2"),
        ];
        let given = known_hosts_files(Some(Path::new("/lab/known_hosts")));
        assert_eq!(given[0], PathBuf::from("/lab/known_hosts"));
        assert_eq!(given[1..], system);
        assert_eq!(user_file(&given), Some(PathBuf::from("/lab/known_hosts")));
        let system_given = known_hosts_files(Some(Path::new("/etc/ssh/ssh_known_hosts")));
        assert_eq!(user_file(&system_given), None);
        let default = known_hosts_files(None);
        if let Some(home) = std::env::home_dir() {
            assert_eq!(default[0], home.join(".ssh/known_hosts"));
            assert_eq!(default[1], home.join(".ssh/known_hosts2"));
            assert_eq!(user_file(&default), Some(home.join(".ssh/known_hosts")));
        }
        assert_eq!(default[default.len() - 2..], system);
    }
}
