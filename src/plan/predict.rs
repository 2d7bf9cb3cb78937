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
    let restarted = |unit: &str| {
        handlers
            .iter()
            .any(|h| h.unit == unit && h.action == HandlerAction::Restarted)
    };
    let reloaded = |unit: &str| handlers.iter().any(|h| h.unit == unit);
    let mut resolved_servers: Vec<String> = Vec::new();
    let mut nm_servers: Option<Vec<String>> = None;
    for change in changes {
        match change {
            Change::WriteFile { path, content, .. } => {
                put(
                    &mut raw,
                    path,
                    content.clone().into_bytes(),
                    FileState::Present,
                );
                if path.starts_with("/etc/NetworkManager/conf.d/") {
                    let mut in_global = false;
                    for line in content.lines().map(str::trim) {
                        if line.starts_with('[') {
                            in_global = line == "[global-dns-domain-*]";
                        } else if in_global
                            && let Some((key, value)) = line.split_once('=')
                            && key.trim() == "servers"
                        {
                            nm_servers = Some(
                                value
                                    .split(',')
                                    .map(|s| s.trim().to_string())
                                    .filter(|s| !s.is_empty())
                                    .collect(),
                            );
                        }
                    }
                }
                if path.starts_with("/etc/systemd/resolved.conf.d/") {
                    resolved_servers.extend(
                        content
                            .lines()
                            .filter_map(|line| line.trim().strip_prefix("DNS="))
                            .flat_map(str::split_whitespace)
                            .map(str::to_string),
                    );
                }
            }
            Change::Sysctl { name, after, .. } => {
                let path = crate::facts::raw::sysctl_path(name);
                put(
                    &mut raw,
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
                modules.extend_from_slice(
                    format!("{name} 0 0 - Live 0x0000000000000000\n").as_bytes(),
                );
                put(&mut raw, "/proc/modules", modules, FileState::Present);
                if name == "br_netfilter" {
                    put(
                        &mut raw,
                        "/proc/sys/net/bridge",
                        Vec::new(),
                        FileState::Directory,
                    );
                }
            }
        }
    }
    if restarted("systemd-resolved") && !resolved_servers.is_empty() {
        let uplink = facts.resolver.systemd_uplink.path.clone();
        let mut text = raw
            .files
            .get(&uplink)
            .and_then(RawFile::text)
            .map(|t| t.into_owned())
            .unwrap_or_default();
        for server in &resolved_servers {
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
        put(&mut raw, &uplink, text.into_bytes(), FileState::Present);
    }
    let etc_resolv = &facts.resolver.etc_resolv_conf;
    if let Some(servers) = nm_servers.filter(|_| reloaded("NetworkManager"))
        && etc_resolv.symlink_target.is_none()
        && let Some(text) = raw.files.get(&etc_resolv.path).and_then(RawFile::text)
    {
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
        let path = etc_resolv.path.clone();
        put(&mut raw, &path, out.into_bytes(), FileState::Present);
    }
    if restarted(&facts.services.kubelet_unit)
        && let Some(pid) = raw.pids.remove("kubelet")
    {
        let cmdline = format!("/proc/{pid}/cmdline");
        raw.files.remove(&cmdline);
        raw.order.retain(|p| *p != cmdline);
    }
    raw
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
