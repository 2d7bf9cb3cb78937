//! Is a host still what its plan was computed from? The plan's facts digest against the
//! facts gathered right before apply, as readable lines: a host with any is refused as
//! stale and nothing is written there.
//!
//! What the plan itself changes does not count: a file already at the plan's new content,
//! a sysctl already at its new value or a module already loaded is an earlier, interrupted
//! apply of the same plan, and applying again converges.

use crate::facts::NodeFacts;
use crate::facts::node_facts::Observed;
use crate::facts::raw::FileState;
use crate::plan::model::{Change, FactDigest, FileDigest, HostPlan};

use super::script::normalize_value;

/// Why `host`'s plan no longer fits the node, one line per fact; empty when it fits.
pub fn reasons(host: &HostPlan, facts: &NodeFacts) -> Vec<String> {
    let Some(digest) = &host.facts else {
        return vec!["the plan has no facts digest for this host".into()];
    };
    let mut out = Vec::new();
    if let Some(planned) = &digest.boot_id
        && facts.boot_id.as_deref() != Some(planned.as_str())
    {
        out.push(format!(
            "node rebooted since the plan (boot_id {} → {})",
            short(planned),
            facts.boot_id.as_deref().map_or("unknown", short)
        ));
    }
    for (path, planned) in &digest.files {
        let now = current(facts, path);
        if &now == planned || written_by_plan(host, path, &now) {
            continue;
        }
        out.push(describe(path, planned, &now));
    }
    for (name, planned) in &digest.sysctls {
        let path = format!("/proc/sys/{}", name.replace('.', "/"));
        let now = match facts.files.get(&path) {
            Some(f) if f.state == FileState::Present => {
                normalize_value(&String::from_utf8_lossy(&f.content))
            }
            Some(f) if f.state == FileState::Missing => "absent".into(),
            _ => "unknown".into(),
        };
        let target = host.changes.iter().find_map(|c| match c {
            Change::Sysctl { name: n, after, .. } if n == name => Some(normalize_value(after)),
            _ => None,
        });
        if normalize_value(planned) != now && target.as_deref() != Some(now.as_str()) {
            out.push(format!("sysctl {name}: {planned} → {now}"));
        }
    }
    for (name, planned) in &digest.modules {
        let now = loaded(facts, name);
        let loads = host
            .changes
            .iter()
            .any(|c| matches!(c, Change::LoadModule { name: n, .. } if n == name));
        if now != Some(*planned) && !(loads && now == Some(true)) {
            out.push(format!(
                "module {name}: {} → {}",
                if *planned { "loaded" } else { "not loaded" },
                match now {
                    Some(true) => "loaded",
                    Some(false) => "not loaded",
                    None => "unknown",
                }
            ));
        }
    }
    out
}

/// Every path whose current state apply must know: the digest's files and the sysctls'
/// /proc files (the gather reads them all).
pub fn paths(digest: &FactDigest) -> Vec<String> {
    let mut paths: Vec<String> = digest.files.keys().cloned().collect();
    paths.extend(
        digest
            .sysctls
            .keys()
            .map(|name| format!("/proc/sys/{}", name.replace('.', "/"))),
    );
    paths
}

fn current(facts: &NodeFacts, path: &str) -> FileDigest {
    match facts.files.get(path) {
        Some(raw) => FileDigest {
            state: match raw.state {
                FileState::Present => "present",
                FileState::Missing => "missing",
                FileState::Directory => "directory",
                FileState::Unreadable => "unreadable",
            }
            .into(),
            sha256: raw.sha256.clone(),
            symlink: raw.symlink_target.clone(),
        },
        None => FileDigest {
            state: "not gathered".into(),
            sha256: None,
            symlink: None,
        },
    }
}

fn written_by_plan(host: &HostPlan, path: &str, now: &FileDigest) -> bool {
    host.changes.iter().any(|c| match c {
        Change::WriteFile {
            path: p,
            after_sha256,
            ..
        } => p == path && now.symlink.is_none() && now.sha256.as_deref() == Some(after_sha256),
        _ => false,
    })
}

fn loaded(facts: &NodeFacts, name: &str) -> Option<bool> {
    if name == "br_netfilter" {
        if facts.br_netfilter.built_in {
            return Some(true);
        }
        return match &facts.br_netfilter.loaded {
            Observed::Known(l) => Some(*l),
            Observed::Absent => Some(false),
            Observed::Unknown(_) => None,
        };
    }
    let modules = facts.files.get("/proc/modules")?.text()?;
    Some(
        modules
            .lines()
            .any(|l| l.split_whitespace().next() == Some(name)),
    )
}

fn describe(path: &str, planned: &FileDigest, now: &FileDigest) -> String {
    if planned.symlink != now.symlink {
        return format!(
            "{path}: symlink {} → {}",
            planned.symlink.as_deref().unwrap_or("(none)"),
            now.symlink.as_deref().unwrap_or("(none)")
        );
    }
    match (planned.state.as_str(), now.state.as_str()) {
        ("missing", "present") => format!("{path}: created since the plan"),
        ("present", "missing") => format!("{path}: deleted since the plan"),
        ("present", "present") => format!(
            "{path}: content changed (sha256 {} → {})",
            planned.sha256.as_deref().map_or("?", short),
            now.sha256.as_deref().map_or("?", short)
        ),
        (a, b) => format!("{path}: {a} → {b}"),
    }
}

fn short(s: &str) -> &str {
    s.get(..12).unwrap_or(s)
}
