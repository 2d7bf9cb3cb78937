//! The facts a host will have after apply: the same gather output with the planned files,
//! sysctls and modules swapped in, and the kubelet's command line dropped when it restarts
//! (its flags are then read from the env files, as the restarted process will be). Running
//! the rules on that says which findings the plan fixes and which remain.
//!
//! Two things are modelled rather than copied, because a service writes them: on restart
//! systemd-resolved rewrites its uplink file from `DNS=`, so servers a planned drop-in adds
//! are appended to it; on reload or restart NetworkManager rewrites a plain /etc/resolv.conf,
//! so a planned `[global-dns-domain-*] servers=` replaces its nameserver lines.

use crate::facts::NodeFacts;
use crate::facts::raw::{FileState, RawFacts, RawFile};
use crate::util::sha256_hex;

use super::model::{Change, HandlerAction, HandlerRun};

/// The facts after `changes` and `handlers` ran on the node `facts` describe.
pub fn predict(facts: &NodeFacts, changes: &[Change], handlers: &[HandlerRun]) -> NodeFacts {
    NodeFacts::from_raw(&facts.host, &applied(facts, changes, handlers))
}

/// The gather output the node would give after `changes` and `handlers`.
pub fn applied(facts: &NodeFacts, changes: &[Change], handlers: &[HandlerRun]) -> RawFacts {
    let mut raw = (*facts.raw).clone();
    for change in changes {
        apply_change(&mut raw, change);
    }
    let restarted = |unit: &str| {
        handlers
            .iter()
            .any(|h| h.unit == unit && h.action == HandlerAction::Restarted)
    };
    let reloaded = |unit: &str| handlers.iter().any(|h| h.unit == unit);
    if restarted("systemd-resolved") {
        add_resolved_servers(&mut raw, facts, &resolved_servers(changes));
    }
    if let Some(servers) = nm_global_servers(changes).filter(|_| reloaded("NetworkManager")) {
        rewrite_nm_resolv_conf(&mut raw, facts, &servers);
    }
    if restarted(&facts.services.kubelet_unit) {
        drop_kubelet_cmdline(&mut raw);
        drop_restart_marks(&mut raw, &facts.services.kubelet_unit);
    }
    raw
}

/// Swaps in what one change writes: a file's content, a sysctl's value, a loaded module.
fn apply_change(raw: &mut RawFacts, change: &Change) {
    match change {
        Change::WriteFile { path, content, .. } => {
            put(raw, path, content.clone().into_bytes(), FileState::Present);
            // A link to the file reads what it now holds (Debian's
            // /etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf).
            for link in raw.files.values_mut().filter(|f| {
                f.symlink_target.is_some() && f.canonical.as_deref() == Some(path.as_str())
            }) {
                link.sha256 = Some(sha256_hex(content.as_bytes()));
                link.content = content.clone().into_bytes().into();
            }
        }
        Change::Sysctl { name, after, .. } => {
            let path = crate::facts::raw::sysctl_path(name);
            put(
                raw,
                &path,
                format!("{after}\n").into_bytes(),
                FileState::Present,
            );
        }
        Change::LoadModule { name, .. } => {
            let mut modules = raw
                .files
                .get("/proc/modules")
                .map(|f| f.content.to_vec())
                .unwrap_or_default();
            modules.extend_from_slice(format!("{name} 0 0 - Live 0x0000000000000000\n").as_bytes());
            put(raw, "/proc/modules", modules, FileState::Present);
            if name == "br_netfilter" {
                put(
                    raw,
                    "/proc/sys/net/bridge",
                    Vec::new(),
                    FileState::Directory,
                );
            }
        }
    }
}

/// The `DNS=` servers the planned systemd-resolved drop-ins add.
fn resolved_servers(changes: &[Change]) -> Vec<String> {
    written(changes, "/etc/systemd/resolved.conf.d/")
        .flat_map(str::lines)
        .filter_map(|line| line.trim().strip_prefix("DNS="))
        .flat_map(str::split_whitespace)
        .map(str::to_string)
        .collect()
}

/// The last `[global-dns-domain-*] servers=` the planned NetworkManager files set.
fn nm_global_servers(changes: &[Change]) -> Option<Vec<String>> {
    let mut servers = None;
    for content in written(changes, "/etc/NetworkManager/conf.d/") {
        let mut in_global = false;
        for line in content.lines().map(str::trim) {
            if line.starts_with('[') {
                in_global = line == "[global-dns-domain-*]";
            } else if in_global
                && let Some((key, value)) = line.split_once('=')
                && key.trim() == "servers"
            {
                servers = Some(
                    value
                        .split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect(),
                );
            }
        }
    }
    servers
}

/// The contents the changes write under `dir`, in plan order.
fn written<'a>(changes: &'a [Change], dir: &'a str) -> impl Iterator<Item = &'a str> {
    changes.iter().filter_map(move |change| match change {
        Change::WriteFile { path, content, .. } if path.starts_with(dir) => Some(content.as_str()),
        _ => None,
    })
}

/// A restarted systemd-resolved appends the servers its drop-ins add to its uplink file.
fn add_resolved_servers(raw: &mut RawFacts, facts: &NodeFacts, servers: &[String]) {
    if servers.is_empty() {
        return;
    }
    let uplink = facts.resolver.systemd_uplink.path.clone();
    let mut text = raw
        .files
        .get(&uplink)
        .and_then(RawFile::text)
        .map(|t| t.into_owned())
        .unwrap_or_default();
    for server in servers {
        let listed = text
            .lines()
            .any(|l| l.split_whitespace().eq(["nameserver", server.as_str()]));
        if !listed {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!("nameserver {server}\n"));
        }
    }
    put(raw, &uplink, text.into_bytes(), FileState::Present);
}

/// A reloaded NetworkManager replaces a plain /etc/resolv.conf's nameserver lines with its
/// global servers (at most three, where the first nameserver line was).
fn rewrite_nm_resolv_conf(raw: &mut RawFacts, facts: &NodeFacts, servers: &[String]) {
    let etc_resolv = &facts.resolver.etc_resolv_conf;
    if etc_resolv.symlink_target.is_some() {
        return;
    }
    let Some(text) = raw.files.get(&etc_resolv.path).and_then(RawFile::text) else {
        return;
    };
    let mut out = String::new();
    let mut placed = false;
    for line in text.lines() {
        if line.trim_start().starts_with("nameserver") {
            if !placed {
                for server in servers.iter().take(3) {
                    out.push_str(&format!("nameserver {server}\n"));
                }
                placed = true;
            }
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    put(raw, &etc_resolv.path, out.into_bytes(), FileState::Present);
}

/// A restarted kubelet is read from its env files: its old command line is gone.
fn drop_kubelet_cmdline(raw: &mut RawFacts) {
    if let Some(pid) = raw.pids.remove("kubelet") {
        let cmdline = format!("/proc/{pid}/cmdline");
        raw.files.remove(&cmdline);
        raw.order.retain(|p| *p != cmdline);
    }
}

/// The handler that restarts a kubelet unit removes the marks of runs that left it due
/// (apply's common.sh `handler`).
fn drop_restart_marks(raw: &mut RawFacts, unit: &str) {
    let dir = format!(
        "{}/{}/",
        crate::facts::restart_due::DIR,
        unit.strip_suffix(".service").unwrap_or(unit)
    );
    raw.files.retain(|path, _| !path.starts_with(&dir));
    raw.order.retain(|path| !path.starts_with(&dir));
}

fn put(raw: &mut RawFacts, path: &str, content: Vec<u8>, state: FileState) {
    let file = RawFile {
        state,
        symlink_target: None,
        canonical: None,
        sha256: (state == FileState::Present).then(|| sha256_hex(&content)),
        content: content.into(),
        truncated: false,
    };
    if !raw.files.contains_key(path) {
        raw.order.push(path.to_string());
    }
    raw.files.insert(path.to_string(), file);
}
