//! known_hosts for the russh transport, read as OpenSSH reads it (sshd(8) "SSH_KNOWN_HOSTS
//! FILE FORMAT", `hostfile.c`, `match.c`):
//! - fields are separated by spaces or tabs; blank lines and `#` lines are skipped;
//! - host patterns are comma-separated, with `*` and `?` wildcards and `!` negation (a
//!   host matching a negated pattern never matches the line); `[host]:port` names a port
//!   other than 22; `|1|salt|hash` is a hashed name (HMAC-SHA1 of the name with the salt);
//! - `@revoked` marks a key never to be accepted; `@cert-authority` marks a CA key, which
//!   this transport does not verify certificates against: such a host is refused with a
//!   message to use `--ssh-backend openssh`, never accepted unchecked;
//! - a line that does not parse is skipped on its own: it never disables checking;
//! - a known host that presents a key of another type has a changed key: the key is
//!   neither accepted nor learned.

use std::path::{Path, PathBuf};

use base64ct::{Base64, Encoding};
use hmac::{Hmac, KeyInit, Mac};
use russh::keys::{Algorithm, PublicKey};
use sha1::Sha1;

/// What the known_hosts files say of a host's key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// A line for the host holds this key.
    Known,
    /// No line names the host.
    Unknown,
    /// Lines name the host, none with this key (`file:line` of the first one).
    Changed(String),
    /// The key is marked `@revoked` for the host (`file:line`).
    Revoked(String),
    /// Only `@cert-authority` lines name the host (`file:line`).
    CertAuthority(String),
}

#[derive(Debug, PartialEq, Eq)]
enum Marker {
    None,
    Revoked,
    CertAuthority,
}

#[derive(Debug)]
struct Line<'a> {
    marker: Marker,
    hosts: &'a str,
    key: PublicKey,
}

/// One known_hosts line; `None` for a blank, comment or unreadable line.
fn parse_line(line: &str) -> Option<Line<'_>> {
    let mut fields = line.split([' ', '\t']).filter(|f| !f.is_empty());
    let first = fields.next()?;
    if first.starts_with('#') {
        return None;
    }
    let (marker, hosts) = match first {
        "@revoked" => (Marker::Revoked, fields.next()?),
        "@cert-authority" => (Marker::CertAuthority, fields.next()?),
        m if m.starts_with('@') => return None,
        hosts => (Marker::None, hosts),
    };
    let kind = fields.next()?;
    let data = fields.next()?;
    let key = PublicKey::from_openssh(&format!("{kind} {data}")).ok()?;
    Some(Line { marker, hosts, key })
}

/// The name OpenSSH looks up: `host` on port 22, else `[host]:port`.
/// The host is lowercased, as ssh does before any lookup (so hashed entries match).
fn lookup_name(host: &str, port: u16) -> String {
    let host = host.to_ascii_lowercase();
    if port == 22 {
        host
    } else {
        format!("[{host}]:{port}")
    }
}

/// `match_pattern` of OpenSSH's match.c: `*` and `?` wildcards, case-insensitive.
/// Consecutive stars are one, so a pattern of many stars stays linear per position.
fn wildcard(pattern: &[u8], name: &[u8]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some((b'*', rest)) => {
            let stars = rest.iter().take_while(|b| **b == b'*').count();
            let rest = &rest[stars..];
            (0..=name.len()).any(|i| wildcard(rest, &name[i..]))
        }
        Some((b'?', rest)) => !name.is_empty() && wildcard(rest, &name[1..]),
        Some((c, rest)) => name
            .split_first()
            .is_some_and(|(n, tail)| n.eq_ignore_ascii_case(c) && wildcard(rest, tail)),
    }
}

/// `|1|salt|hash` against `name`.
fn hashed_match(entry: &str, name: &str) -> bool {
    let Some(rest) = entry.strip_prefix("|1|") else {
        return false;
    };
    let Some((salt, hash)) = rest.split_once('|') else {
        return false;
    };
    let (Ok(salt), Ok(hash)) = (Base64::decode_vec(salt), Base64::decode_vec(hash)) else {
        return false;
    };
    let Ok(mut mac) = <Hmac<Sha1> as KeyInit>::new_from_slice(&salt) else {
        return false;
    };
    mac.update(name.as_bytes());
    mac.verify_slice(&hash).is_ok()
}

/// Whether the line's host field matches `name` (OpenSSH `match_hostname`: any positive
/// pattern matches and no negated one does). Wildcard patterns are too long for pattern
/// matching past 1,024 bytes (as OpenSSH's `match_pattern_list` limit) and never match then.
fn hosts_match(hosts: &str, name: &str) -> bool {
    if hosts.starts_with("|1|") {
        return hashed_match(hosts, name);
    }
    let mut matched = false;
    for pattern in hosts.split(',') {
        if pattern.len() > 1024 {
            continue;
        }
        let (negated, pattern) = match pattern.strip_prefix('!') {
            Some(p) => (true, p),
            None => (false, pattern),
        };
        if wildcard(pattern.as_bytes(), name.as_bytes()) {
            if negated {
                return false;
            }
            matched = true;
        }
    }
    matched
}

/// What `files` say of `key` for `host`:`port`. A file that cannot be read counts as
/// empty (`/dev/null` is "no known hosts").
pub fn check(files: &[PathBuf], host: &str, port: u16, key: &PublicKey) -> Verdict {
    let name = lookup_name(host, port);
    let mut changed: Option<String> = None;
    let mut authority: Option<String> = None;
    let mut known = false;
    for file in files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for (n, raw) in text.lines().enumerate() {
            let Some(line) = parse_line(raw) else {
                continue;
            };
            if !hosts_match(line.hosts, &name) {
                continue;
            }
            let at = format!("{}:{}", file.display(), n + 1);
            let same = line.key.key_data() == key.key_data();
            match line.marker {
                Marker::Revoked if same => return Verdict::Revoked(at),
                Marker::Revoked => {}
                Marker::CertAuthority => {
                    authority.get_or_insert(at);
                }
                Marker::None if same => known = true,
                Marker::None => {
                    changed.get_or_insert(at);
                }
            }
        }
    }
    if known {
        return Verdict::Known;
    }
    if let Some(at) = changed {
        return Verdict::Changed(at);
    }
    if let Some(at) = authority {
        return Verdict::CertAuthority(at);
    }
    Verdict::Unknown
}

/// The types of the keys `files` hold for `host`:`port` (not revoked, not authorities), in
/// the files' order. OpenSSH asks a server for these first; so must dnsfix, or a host known
/// only by its ECDSA key (as OpenSSH before 8.5 recorded it) offers its Ed25519 one and
/// reads as changed.
pub fn known_algorithms(files: &[PathBuf], host: &str, port: u16) -> Vec<Algorithm> {
    let name = lookup_name(host, port);
    let mut found: Vec<Algorithm> = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for line in text.lines().filter_map(parse_line) {
            if line.marker == Marker::None && hosts_match(line.hosts, &name) {
                let algorithm = line.key.algorithm();
                if !found.contains(&algorithm) {
                    found.push(algorithm);
                }
            }
        }
    }
    found
}

/// Appends `key` for `host`:`port` to `file` (created private, with its directory).
pub fn learn(file: &Path, host: &str, port: u16, key: &PublicKey) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let text = key
        .to_openssh()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
    let mut fields = text.split(' ');
    let line = format!(
        "{} {} {}\n",
        lookup_name(host, port),
        fields.next().unwrap_or_default(),
        fields.next().unwrap_or_default()
    );
    if let Some(dir) = file.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir)?;
    }
    let mut out = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(file)?;
    out.write_all(line.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    // Public keys made with ssh-keygen -t ed25519 / -t ecdsa for these tests only.
    const ED: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICnIwMRmINoskmovaV7567bmGwcW3h3I1uMZJ/pKX798";
    const ED2: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAkj2cOxHco48A6Aa97AyNEfRk5YoYMOwU9tjoTqQILc";
    const ECDSA: &str = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBJL1jsS1cOIDYSYn921lMh5wK7IDB4adDE0p29p+sCB/1SoCS3o88Y8A78Un+bgoe9KrYcR6HAPifgRSc9NBQqM=";

    fn key(text: &str) -> PublicKey {
        PublicKey::from_openssh(text).expect("test key")
    }

    fn with_file(text: &str) -> (PathBuf, Vec<PathBuf>) {
        let dir = std::env::temp_dir().join(format!(
            "dnsfix-kh-{}-{}",
            std::process::id(),
            crate::util::sha256_hex(text.as_bytes())
        ));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let file = dir.join("known_hosts");
        std::fs::write(&file, text).expect("write");
        (dir, vec![file])
    }

    fn verdict(text: &str, host: &str, port: u16, k: &str) -> Verdict {
        let (dir, files) = with_file(text);
        let v = check(&files, host, port, &key(k));
        let _ = std::fs::remove_dir_all(dir);
        v
    }

    #[test]
    fn tabs_wildcards_negation_and_ports() {
        let b64 = ED.split(' ').nth(1).unwrap_or_default();
        for line in [
            format!("node1\tssh-ed25519\t{b64}"),
            format!("node*.example.com,node1 ssh-ed25519 {b64}"),
            format!("node? ssh-ed25519 {b64} comment here"),
        ] {
            assert_eq!(verdict(&line, "node1", 22, ED), Verdict::Known, "{line}");
        }
        let line = format!("*,!node1 ssh-ed25519 {b64}");
        assert_eq!(verdict(&line, "node1", 22, ED), Verdict::Unknown);
        assert_eq!(verdict(&line, "node2", 22, ED), Verdict::Known);
        let line = format!("[127.0.0.1]:2222 ssh-ed25519 {b64}");
        assert_eq!(verdict(&line, "127.0.0.1", 2222, ED), Verdict::Known);
        assert_eq!(verdict(&line, "127.0.0.1", 22, ED), Verdict::Unknown);
    }

    /// `ssh-keygen -H` output for "node1" with this salt (computed with OpenSSH's
    /// algorithm: HMAC-SHA1 keyed with the salt).
    #[test]
    fn hashed_names() {
        let salt = [7u8; 20];
        let mut mac = <Hmac<Sha1> as KeyInit>::new_from_slice(&salt).expect("key");
        mac.update(b"node1");
        let hash = mac.finalize().into_bytes();
        let entry = format!(
            "|1|{}|{}",
            Base64::encode_string(&salt),
            Base64::encode_string(&hash)
        );
        let line = format!("{entry} {ED}");
        assert_eq!(verdict(&line, "node1", 22, ED), Verdict::Known);
        assert_eq!(verdict(&line, "Node1", 22, ED), Verdict::Known);
        assert_eq!(verdict(&line, "node2", 22, ED), Verdict::Unknown);
    }

    /// A revoked key listed for many hosts on one long line is still revoked.
    #[test]
    fn long_host_lists_still_count() {
        let hosts: Vec<String> = (0..300).map(|i| format!("host{i}.example.com")).collect();
        let text = format!("@revoked {},node1 {ED}\nnode1 {ED}\n", hosts.join(","));
        assert!(matches!(
            verdict(&text, "node1", 22, ED),
            Verdict::Revoked(_)
        ));
    }

    #[test]
    fn changed_revoked_other_type_and_corrupt_lines() {
        // Another key of the same type.
        assert!(
            matches!(verdict(&format!("node1 {ED2}"), "node1", 22, ED), Verdict::Changed(at) if at.ends_with(":1"))
        );
        // A key of another type for a known host is a changed key, not a new one.
        assert!(matches!(
            verdict(&format!("node1 {ECDSA}"), "node1", 22, ED),
            Verdict::Changed(_)
        ));
        // Revoked wins over a line that accepts the key.
        let text = format!("node1 {ED}\n@revoked * {ED}\n");
        assert!(
            matches!(verdict(&text, "node1", 22, ED), Verdict::Revoked(at) if at.ends_with(":2"))
        );
        // A CA line alone is refused, not accepted unchecked.
        assert!(matches!(
            verdict(
                &format!("@cert-authority *.example.com {ED2}"),
                "a.example.com",
                22,
                ED
            ),
            Verdict::CertAuthority(_)
        ));
        // A corrupt line is skipped; the good one still counts, and so does a changed key.
        let text = format!("node1 ssh-ed25519 not-base64!!\nnode1 {ED}\n");
        assert_eq!(verdict(&text, "node1", 22, ED), Verdict::Known);
        let text = format!("garbage\nnode1 {ED2}\n");
        assert!(matches!(
            verdict(&text, "node1", 22, ED),
            Verdict::Changed(_)
        ));
    }

    #[test]
    fn dev_null_is_no_known_hosts_and_learning_appends() {
        assert_eq!(
            check(&[PathBuf::from("/dev/null")], "node1", 22, &key(ED)),
            Verdict::Unknown
        );
        let (dir, files) = with_file("# learned below\n");
        learn(&files[0], "127.0.0.1", 2222, &key(ED)).expect("learn");
        assert_eq!(check(&files, "127.0.0.1", 2222, &key(ED)), Verdict::Known);
        assert!(learn(Path::new("/dev/null"), "node1", 22, &key(ED)).is_ok());
        let _ = std::fs::remove_dir_all(dir);
    }
}
