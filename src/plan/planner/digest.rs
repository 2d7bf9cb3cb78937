//! The facts a plan depends on, as it records them: apply refuses a host whose facts
//! moved since the plan was made.

use crate::facts::NodeFacts;
use crate::facts::raw::sha256_hex;
use crate::plan::model::{FactDigest, FileDigest};

/// The digest of one gathered file, as plans record it.
pub fn file_digest(raw: &crate::facts::raw::RawFile) -> FileDigest {
    FileDigest {
        state: raw.state.into(),
        sha256: raw.sha256.clone(),
        symlink: raw.symlink_target.clone(),
    }
}

/// Adds the facts every plan depends on to `digest`: every configuration file the gather
/// read (all of it outside /proc and /sys: a `when`, a template or a rule may have used
/// any of them), besides the /proc values the tasks read. Volatile kernel state such as
/// /proc/modules or the kubelet's pid is left out, so only a real change makes a plan
/// stale.
pub fn digest_core(digest: &mut FactDigest, facts: &NodeFacts) {
    for (path, raw) in &facts.files {
        if path.starts_with("/proc/") || path.starts_with("/sys/") {
            continue;
        }
        digest
            .files
            .entry(path.clone())
            .or_insert_with(|| file_digest(raw));
    }
    let mut canonical = digest.clone();
    canonical.sha256 = String::new();
    digest.sha256 = sha256_hex(
        serde_json::to_string(&canonical)
            .unwrap_or_default()
            .as_bytes(),
    );
}
