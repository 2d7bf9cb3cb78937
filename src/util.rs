//! Small helpers every layer shares: sha256 in hex, nonces, the time as RFC 3339 and
//! atomic file writes. A leaf: it imports nothing from the crate, so any module may use it
//! without making a cycle.

use std::path::Path;

use sha2::{Digest, Sha256};

/// The sha256 of `bytes`, in lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The sha256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// `bytes` in lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// A fresh nonce: unpredictable enough that no file on a node can contain the boundary
/// by accident or design (128 bits from the OS-seeded hasher keys, time and a counter).
pub fn nonce() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut out = String::new();
    for _ in 0..2 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default(),
        );
        out.push_str(&format!("{:016x}", h.finish()));
    }
    out
}

/// The current time as RFC 3339 UTC, e.g. `2026-11-22T17:05:09Z`.
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(secs)
}

fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Writes `bytes` to `path` atomically (temp file, fsync, rename). A new file is private
/// (0600): saved plans and run records can hold what a node's files hold. An existing file
/// keeps its permissions.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_mode(path, bytes, 0o600)
}

/// As [`write_atomic`], with `mode` for a new file.
pub fn write_atomic_mode(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("not a file name"))?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(".{}.tmp", std::process::id()));
    let temp = path.with_file_name(temp_name);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&temp)
        .and_then(|mut file| {
            // An existing file keeps its permissions.
            if let Ok(meta) = std::fs::metadata(path) {
                file.set_permissions(meta.permissions())?;
            }
            file.write_all(bytes)?;
            file.sync_all()
        });
    if let Err(e) = written.and_then(|()| std::fs::rename(&temp, path)) {
        let _ = std::fs::remove_file(&temp);
        return Err(e);
    }
    Ok(())
}

/// The `n`th address of a range (`10.43.0.0/16`, 10: `10.43.0.10`), counted from the
/// network's first address whatever host bits the range was written with, as Ansible's
/// `ipaddr('net') | ipaddr(n)` and Kubernetes's `GetIndexedIP` count; `None` for what is
/// not a range or an address outside the range.
pub fn nth_address(cidr: &str, n: u32) -> Option<std::net::IpAddr> {
    let (net, len) = cidr.trim().split_once('/')?;
    let len: u32 = len.parse().ok()?;
    let net = net.parse::<std::net::IpAddr>().ok()?;
    let bits: u32 = if net.is_ipv4() { 32 } else { 128 };
    let host_bits = bits.checked_sub(len)?;
    if host_bits < 32 && n >> host_bits != 0 {
        return None;
    }
    match net {
        std::net::IpAddr::V4(v4) if len <= 32 => {
            let first = u32::from(v4) & u32::MAX.checked_shl(32 - len).unwrap_or(0);
            Some(std::net::IpAddr::V4(first.checked_add(n)?.into()))
        }
        std::net::IpAddr::V6(v6) if len <= 128 => {
            let first = u128::from(v6) & u128::MAX.checked_shl(128 - len).unwrap_or(0);
            Some(std::net::IpAddr::V6(
                first.checked_add(u128::from(n))?.into(),
            ))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_795_359_909), "2026-11-22T15:05:09Z");
    }

    #[test]
    fn the_nth_address_of_a_range() {
        let at = |cidr, n| nth_address(cidr, n).map(|ip| ip.to_string());
        assert_eq!(at("10.233.0.0/18", 3).as_deref(), Some("10.233.0.3"));
        assert_eq!(at("10.233.7.9/18", 3).as_deref(), Some("10.233.0.3"));
        assert_eq!(at("10.96.0.1/12", 10).as_deref(), Some("10.96.0.10"));
        assert_eq!(
            at("fd85:ee78:d8a6:8607::1234/116", 3).as_deref(),
            Some("fd85:ee78:d8a6:8607::1003")
        );
        assert_eq!(at("fd00:43::/112", 10).as_deref(), Some("fd00:43::a"));
        assert_eq!(at("0.0.0.0/0", 3).as_deref(), Some("0.0.0.3"));
        assert_eq!(at("192.0.2.0/29", 7).as_deref(), Some("192.0.2.7"));
        for bad in [
            "10.233.0.0",
            "10.233.0.0/33",
            "10.233.0.0/x",
            "::/129",
            "x/8",
        ] {
            assert_eq!(at(bad, 3), None, "{bad}");
        }
        // Past the range's end: GetIndexedIP refuses, ipaddr(n) gives false.
        assert_eq!(at("192.0.2.0/29", 8), None);
        assert_eq!(at("192.0.2.8/32", 3), None);
    }
}
