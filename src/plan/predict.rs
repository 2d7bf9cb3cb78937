//! The facts a host will have after apply: the same gather output with the planned files,
//! sysctls and modules swapped in, and the kubelet's command line dropped when it restarts
//! (its flags are then read from the env files, as the restarted process will be). Running
//! the rules on that says which findings the plan fixes and which remain.
//!
//! Two things are modelled rather than copied, because a service writes them: on restart
//! systemd-resolved rewrites its uplink file from `DNS=`, so servers a planned drop-in adds
//! join its global servers there, before its links' ones; on reload or restart
//! NetworkManager rewrites a plain /etc/resolv.conf, so a planned
//! `[global-dns-domain-*] servers=` replaces its nameserver lines.

use crate::facts::NodeFacts;
use crate::facts::raw::{FileState, RawFacts, RawFile};
use crate::facts::resolved_conf::ResolvedConf;
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

/// A restarted systemd-resolved writes its uplink file anew: first its global servers, the
/// `DNS=` of its main file and then of its drop-ins in the order it reads them (an empty
/// `DNS=` dropping those before it), the planned drop-ins' among them, then the servers of
/// its links (those the file lists now that are no global server of the old configuration),
/// each server once (systemd src/resolve/resolved-manager.c `manager_compile_dns_servers`,
/// v252 to v256: "First add the system-wide servers", "Then, add the per-link servers", into
/// an OrderedSet, `dns_server_hash_func`: each address once here, as dnsfix writes neither a
/// port nor a name; resolved-resolv-conf.c
/// `write_uplink_resolv_conf_contents` writes them in that order, where `# No DNS servers
/// known.` stood, before the `search` line). Where it has neither a global server (on any
/// port: one on another port is among them, though not written) nor a link's, it takes its
/// fallback ones ("If we found nothing, add the fallback servers"; systemd 258 also a
/// delegate's, from `dns-delegate.d`), and where it has none of those either, it writes
/// `# No DNS servers known.` ([`uplink_listing`]). Nothing changes where the drop-ins add
/// none.
fn add_resolved_servers(raw: &mut RawFacts, facts: &NodeFacts, servers: &[String]) {
    if servers.is_empty() {
        return;
    }
    let uplink = facts.resolver.systemd_uplink.path.clone();
    let text = raw
        .files
        .get(&uplink)
        .and_then(RawFile::text)
        .map(|t| t.into_owned())
        .unwrap_or_default();
    let old = ResolvedConf::read(&facts.raw);
    let old_global = resolved_config_servers(&old, "DNS");
    // The planned drop-in's among them, unless a drop-in read after it empties `DNS=`.
    let new = ResolvedConf::read(raw);
    let mut ordered = resolved_config_servers(&new, "DNS");
    let is_server = |l: &str| l.split_whitespace().next() == Some("nameserver");
    let listed: Vec<&str> = text
        .lines()
        .filter(|l| is_server(l))
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    // Where it knew no server of its own and lists its fallback ones, those are its
    // fallback ("If we found nothing, add the fallback servers", all of them at once): gone
    // once it has one. Not where the list is not the whole fallback list: a link's server
    // that is also a fallback one is a link's.
    let fallback = fallback_servers(&old, &facts.raw)
        .map(|(written, _)| written)
        .unwrap_or_default();
    // A global server on another port counts too: it is one of its own, though not
    // written, so what the file lists is no fallback list.
    let only_fallback = !resolved_config_any(&old, "DNS")
        && !ordered.is_empty()
        && !listed.is_empty()
        && listed.iter().all(|s| fallback.iter().any(|f| f == s))
        && fallback.iter().all(|f| listed.contains(&f.as_str()));
    let links: Vec<&str> = listed
        .iter()
        .copied()
        .filter(|s| !only_fallback && !old_global.iter().any(|g| g == s))
        .collect();
    for link in &links {
        if !ordered.iter().any(|s| s == link) {
            ordered.push((*link).to_owned());
        }
    }
    let has_global = resolved_config_any(&new, "DNS");
    let ordered = if has_global || !links.is_empty() {
        Some(ordered)
    } else {
        let none_before = text.lines().any(|l| l.trim() == NONE_KNOWN);
        uplink_listing(none_before, !listed.is_empty(), fallback_servers(&new, raw))
    };
    let mut out = String::new();
    let mut placed = false;
    let mut place = |out: &mut String| {
        if std::mem::replace(&mut placed, true) {
            return;
        }
        let Some(ordered) = &ordered else {
            out.push_str(NONE_KNOWN);
            out.push('\n');
            return;
        };
        for (n, server) in ordered.iter().enumerate() {
            if n == MAXNS {
                out.push_str(TOO_MANY);
                out.push('\n');
            }
            out.push_str(&format!("nameserver {server}\n"));
        }
    };
    for line in text.lines() {
        let trimmed = line.trim();
        if is_server(line) || trimmed == NONE_KNOWN || trimmed == TOO_MANY {
            place(&mut out);
            continue;
        }
        if trimmed.split_whitespace().next() == Some("search") {
            place(&mut out);
        }
        out.push_str(line);
        out.push('\n');
    }
    place(&mut out);
    put(raw, &uplink, out.into_bytes(), FileState::Present);
}

/// The servers a restarted systemd-resolved that has neither a global server nor a link's
/// writes: its fallback ones (those on port 53, `fallback` as [`fallback_servers`] gives
/// them), or none, `None`, where it has none at all: then it writes [`NONE_KNOWN`]
/// (resolved-manager.c `manager_compile_dns_servers`, the same from v249 to v258;
/// resolved-resolv-conf.c `write_uplink_resolv_conf_contents`: `if
/// (ordered_set_isempty(dns))`). Where its file said [`NONE_KNOWN`] before, it had no link's
/// server then, nor a fallback one: it has none now but those its configuration gives (none
/// where their list is not known, as before). Where the file listed no server and did not
/// say so (`listed` false), it had servers it
/// leaves out of the file (on another port, or a link's that is no default route), so what
/// it writes is not known; so it is where its fallback list is not: neither line then, which
/// the rules read as unknown. A link's server left out of the file is not seen here where
/// the file listed others.
fn uplink_listing(
    none_before: bool,
    listed: bool,
    fallback: Option<(Vec<String>, bool)>,
) -> Option<Vec<String>> {
    match fallback {
        Some((written, true)) if listed || none_before => Some(written),
        Some((_, false)) if listed => None,
        _ if none_before => None,
        _ => Some(Vec::new()),
    }
}

/// What systemd-resolved writes in its uplink file where it knows no server
/// (resolved-resolv-conf.c `write_uplink_resolv_conf_contents`).
const NONE_KNOWN: &str = "# No DNS servers known.";

/// What it writes before the fourth server it writes, in systemd v249 to v257 alike
/// (resolved-resolv-conf.c `write_resolv_conf_server`: `if (*count == MAXNS)`, glibc's 3
/// from its resolv.h, counting the servers it writes, not those it leaves out for their
/// port; the same in RHEL 9's systemd-252, redhat-plumbers/systemd-rhel9 77567a88, and in
/// systemd 258's, ChenPi11/systemd 9c09d7ef).
const TOO_MANY: &str = "# Too many DNS servers configured, the following entries may be ignored.";

/// glibc's MAXNS (resolv/bits/types/res_state.h): the servers a resolver reads.
const MAXNS: usize = 3;

/// systemd-resolved's global servers (`key` `DNS`), or its fallback ones (`FallbackDNS`), as
/// its configuration in `raw` gives them, in order: the `key=` words of its main file
/// ([`crate::facts::resolved_conf::MainFile`]), then of its drop-ins in the order it reads them, an empty
/// `key=` dropping those before it, each once, as its uplink file writes them (the address
/// alone: not a `#name`, nor a port 53; none on another port, which it leaves out, and not
/// its own stub addresses or 0.0.0.0, which it skips: `manager_add_dns_server_by_string`).
fn resolved_config_servers(conf: &ResolvedConf, key: &str) -> Vec<String> {
    let mut servers: Vec<String> = Vec::new();
    for setting in conf.of(key) {
        if setting.value.is_empty() {
            servers.clear();
        }
        for address in setting.value.split_whitespace().filter_map(uplink_address) {
            if !servers.contains(&address) {
                servers.push(address);
            }
        }
    }
    servers
}

/// systemd-resolved's fallback servers as its uplink file writes them: those of its
/// `FallbackDNS=` settings where there is one (an empty one too) or where its parser stopped
/// ([`ResolvedConf::stopped_at`]), else its compiled-in list
/// as its shipped resolved.conf shows it ([`shipped_fallback`]); none where neither is
/// there, or where what it reads is not known in full ([`ResolvedConf::unsettled`]), as the
/// list is then not known (its `resolvectl status` is not gathered): the
/// servers the uplink file lists are then taken for its links' ones, kept after a restart.
///
/// [`shipped_fallback`]: crate::facts::resolved_conf::shipped_fallback
/// [`ResolvedConf::stopped_at`]: crate::facts::resolved_conf::ResolvedConf::stopped_at
/// [`ResolvedConf::unsettled`]: crate::facts::resolved_conf::ResolvedConf::unsettled
///
/// With them, whether it has any at all (one on another port is one, though not written).
fn fallback_servers(conf: &ResolvedConf, raw: &RawFacts) -> Option<(Vec<String>, bool)> {
    if conf.unsettled.is_some() {
        return None;
    }
    // Where its parser stops, it sets up no compiled-in fallback servers: only those of the
    // settings read before.
    if conf.stopped_at.is_some() || conf.of("FallbackDNS").next().is_some() {
        return Some((
            resolved_config_servers(conf, "FallbackDNS"),
            resolved_config_any(conf, "FallbackDNS"),
        ));
    }
    let shipped = crate::facts::resolved_conf::shipped_fallback(raw)?;
    let words = || shipped.split_whitespace();
    Some((
        words().filter_map(uplink_address).collect(),
        words().any(|w| config_server(w).is_some()),
    ))
}

/// Whether systemd-resolved has any `key` server (`DNS`, `FallbackDNS`) after its
/// configuration, on any port: an empty `key=` drops those before it.
fn resolved_config_any(conf: &ResolvedConf, key: &str) -> bool {
    conf.of(key).fold(false, |any, setting| {
        (any && !setting.value.is_empty())
            || setting
                .value
                .split_whitespace()
                .any(|w| config_server(w).is_some())
    })
}

/// The address a resolved.conf `DNS=` word is written as in the uplink file; none for one
/// on a port other than 53 (left out there), for its stub addresses and 0.0.0.0 (skipped),
/// or for a word that is no address.
fn uplink_address(word: &str) -> Option<String> {
    config_server(word).and_then(|(address, written)| written.then_some(address))
}

/// The server a resolved.conf `DNS=` word gives systemd-resolved: its address, and whether
/// its uplink file writes it (its port is 53); none for its stub addresses and 0.0.0.0,
/// which it skips (`manager_add_dns_server_by_string`), or for a word that is no address.
fn config_server(word: &str) -> Option<(String, bool)> {
    let word = word.split('#').next().unwrap_or(word);
    let (address, port) = match word.strip_prefix('[') {
        Some(v6) => {
            let (address, rest) = v6.split_once(']')?;
            (address, rest.strip_prefix(':'))
        }
        None => match word.split_once(':') {
            Some((v4, port)) if !port.contains(':') => (v4, Some(port)),
            _ => (word, None),
        },
    };
    let ip = crate::facts::resolv_conf::server_address(address)?;
    let skipped = ["127.0.0.53", "127.0.0.54", "0.0.0.0"];
    (!skipped.contains(&ip.to_string().as_str()))
        .then(|| (address.to_owned(), port.is_none_or(|p| p == "53")))
}

/// A reloaded NetworkManager replaces a plain /etc/resolv.conf's nameserver lines with its
/// global servers, where the first nameserver line was: every one of them, its note before
/// the fourth ([`NM_TOO_MANY`]).
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
    let mut place = |out: &mut String| {
        if !std::mem::replace(&mut placed, true) {
            for (i, server) in servers.iter().enumerate() {
                if i == 3 {
                    out.push_str(NM_TOO_MANY);
                }
                out.push_str(&format!("nameserver {server}\n"));
            }
        }
    };
    let old_note: Vec<&str> = NM_TOO_MANY.lines().collect();
    for line in text.lines() {
        let first = line.split_whitespace().next();
        if first == Some("nameserver") || old_note.contains(&line.trim()) {
            place(&mut out);
            continue;
        }
        // A file with no nameserver line gets them where NetworkManager writes them:
        // before its options (`create_resolv_conf`: search, nameservers, options).
        if first == Some("options") {
            place(&mut out);
        }
        out.push_str(line);
        out.push('\n');
    }
    place(&mut out);
    put(raw, &etc_resolv.path, out.into_bytes(), FileState::Present);
}

/// What NetworkManager writes before a fourth nameserver, which glibc does not read
/// (NetworkManager/NetworkManager src/core/dns/nm-dns-manager.c `create_resolv_conf`,
/// 1.40.0 @5d4802f7 and 355bc902: every server is written, this note at `i == 3`).
const NM_TOO_MANY: &str = "# NOTE: the libc resolver may not support more than 3 nameservers.\n# The nameservers listed below may not be recognized.\n";

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::Reason;

    const UPLINK: &str = "/run/systemd/resolve/resolv.conf";
    const HEAD: &str = "# This file is managed by man:systemd-resolved(8). Do not edit.\n#\n";

    /// What a restart of systemd-resolved, after dnsfix's drop-in `dns` is written, leaves in
    /// its uplink file, on a node whose file says `uplink` and whose kubespray.conf drop-in
    /// says `DNS=169.254.25.10`.
    fn uplink_after(uplink: &str, dns: &str) -> String {
        let raw = crate::testing::raw_from(&[
            (UPLINK, uplink),
            ("/etc/systemd/resolved.conf", "[Resolve]\n#DNS=\n"),
            (
                "/etc/systemd/resolved.conf.d/kubespray.conf",
                "[Resolve]\nDNS=169.254.25.10\nFallbackDNS=192.0.2.99\n",
            ),
        ]);
        restarted_with(raw, dns)
    }

    /// What `raw` gives after the file `path` is written with `content` and `unit` has
    /// `action` done.
    fn after_writing(
        raw: &RawFacts,
        (path, content): (&str, String),
        unit: &str,
        action: HandlerAction,
    ) -> RawFacts {
        let facts = NodeFacts::from_raw("node1", raw);
        let change = Change::WriteFile {
            path: path.into(),
            description: String::new(),
            before_sha256: None,
            before: None,
            after_sha256: sha256_hex(content.as_bytes()),
            content,
            mode: Some("0644".into()),
            reasons: Vec::<Reason>::new(),
        };
        let handler = HandlerRun {
            name: format!("{action:?} {unit}"),
            unit: unit.into(),
            action,
            serial: crate::playbook::Batch::Count(1),
            reasons: Vec::new(),
        };
        applied(&facts, &[change], &[handler])
    }

    /// The uplink file of `raw` after dnsfix's drop-in `DNS=dns` and a restart.
    fn restarted_with(raw: RawFacts, dns: &str) -> String {
        let dropin = "/etc/systemd/resolved.conf.d/zz-dnsfix-upstream.conf";
        let content = format!("[Resolve]\nDNS={dns}\n");
        let after = after_writing(
            &raw,
            (dropin, content),
            "systemd-resolved",
            HandlerAction::Restarted,
        );
        crate::testing::text(&after, UPLINK)
    }

    /// /etc/resolv.conf as `text` after dnsfix's NetworkManager global DNS `servers` and a
    /// reload.
    fn reloaded_with(text: &str, servers: &str) -> String {
        let raw = crate::testing::raw_from(&[("/etc/resolv.conf", text)]);
        let conf = "/etc/NetworkManager/conf.d/zz-dnsfix-upstream.conf";
        let content = format!("[global-dns-domain-*]\nservers={servers}\n");
        let after = after_writing(
            &raw,
            (conf, content),
            "NetworkManager",
            HandlerAction::Reloaded,
        );
        crate::testing::text(&after, "/etc/resolv.conf")
    }

    /// A reloaded NetworkManager writes every global DNS server into the plain
    /// /etc/resolv.conf, with its note before the fourth (nm-dns-manager.c
    /// `create_resolv_conf`); glibc then reads the first three. Before, the prediction kept
    /// three and dropped the rest, which NetworkManager does not do. The note of its last
    /// write goes with the servers it stood among: before, it was kept, so a file of two
    /// servers had it too, and one of five had it twice. A file with no nameserver line
    /// gets them before its options, where NetworkManager writes them: before, none.
    #[test]
    fn networkmanager_writes_every_global_server_with_its_note_before_the_fourth() {
        let head = "# Generated by NetworkManager\nsearch example.internal\n";
        let note = NM_TOO_MANY;
        assert_eq!(
            reloaded_with(
                &format!("{head}nameserver 169.254.25.10\n"),
                "169.254.25.10,192.0.2.53,198.51.100.53,203.0.113.53"
            ),
            format!(
                "{head}nameserver 169.254.25.10\nnameserver 192.0.2.53\nnameserver 198.51.100.53\n{note}nameserver 203.0.113.53\n"
            )
        );
        let four = format!(
            "{head}nameserver 10.0.0.1\nnameserver 10.0.0.2\nnameserver 10.0.0.3\n{note}nameserver 10.0.0.4\noptions edns0\n"
        );
        assert_eq!(
            reloaded_with(&four, "169.254.25.10,192.0.2.53"),
            format!("{head}nameserver 169.254.25.10\nnameserver 192.0.2.53\noptions edns0\n")
        );
        assert_eq!(
            reloaded_with(&format!("{head}options ndots:2\n"), "192.0.2.53"),
            format!("{head}nameserver 192.0.2.53\noptions ndots:2\n")
        );
    }

    /// The servers a drop-in adds are global ones: systemd-resolved writes them after the
    /// other global servers and before those of its links (resolved-manager.c
    /// `manager_compile_dns_servers`), each once, above the `search` line. Before, they were
    /// put after every line, the link servers' and `search` too, so a kubelet that reads
    /// the file took the link servers among its first three and left them out.
    #[test]
    fn servers_a_drop_in_adds_come_before_the_links_ones() {
        let uplink = format!(
            "{HEAD}\nnameserver 169.254.25.10\nnameserver 10.0.0.2\nnameserver 10.0.0.3\nsearch example.internal\n"
        );
        assert_eq!(
            uplink_after(&uplink, "192.0.2.53 10.0.0.3 169.254.25.10:53"),
            format!(
                "{HEAD}\nnameserver 169.254.25.10\nnameserver 192.0.2.53\nnameserver 10.0.0.3\n{TOO_MANY}\nnameserver 10.0.0.2\nsearch example.internal\n"
            )
        );
        // A server on another port is left out: the file stays as it was.
        assert_eq!(uplink_after(&uplink, "192.0.2.53:5353"), uplink);
    }

    /// A drop-in read after dnsfix's (`zzz-` sorts after `zz-`) that empties `DNS=` drops
    /// dnsfix's servers: they are not predicted, and what they were to fix stays failing.
    #[test]
    fn a_later_drop_in_that_empties_dns_drops_dnsfix_s_servers() {
        let raw = crate::testing::raw_from(&[
            (UPLINK, &format!("{HEAD}\nnameserver 10.9.9.9\nsearch .\n")),
            (
                "/etc/systemd/resolved.conf.d/zzz-site.conf",
                "[Resolve]\nDNS=\nDNS=10.9.9.9\n",
            ),
        ]);
        assert_eq!(
            restarted_with(raw, "192.0.2.53"),
            format!("{HEAD}\nnameserver 10.9.9.9\nsearch .\n")
        );
    }

    /// Where it knew no server of its own, it listed its FallbackDNS= ones: they go once a
    /// drop-in gives it one (resolved-manager.c: "If we found nothing, add the fallback
    /// servers").
    #[test]
    fn fallback_servers_go_once_a_drop_in_gives_servers() {
        let raw = crate::testing::raw_from(&[
            (
                UPLINK,
                &format!("{HEAD}\nnameserver 192.0.2.99\nsearch example.internal\n"),
            ),
            (
                "/etc/systemd/resolved.conf",
                "[Resolve]\nFallbackDNS=192.0.2.98\nFallbackDNS=\nFallbackDNS=192.0.2.99\n",
            ),
        ]);
        assert_eq!(
            restarted_with(raw, "192.0.2.53"),
            format!("{HEAD}\nnameserver 192.0.2.53\nsearch example.internal\n")
        );
    }

    /// A global server on another port is one of its own, though its uplink file does not
    /// write it: with it, systemd-resolved took no fallback server, so a listed server
    /// that matches the fallback list is a link's, kept after a drop-in's. Before, only
    /// global servers on port 53 were counted, and the link's server was dropped.
    #[test]
    fn a_global_server_on_another_port_means_the_listed_ones_are_no_fallback() {
        let raw = crate::testing::raw_from(&[
            (
                UPLINK,
                &format!("{HEAD}\nnameserver 192.0.2.99\nsearch example.internal\n"),
            ),
            (
                "/etc/systemd/resolved.conf",
                "[Resolve]\nDNS=192.0.2.77:5353\nFallbackDNS=192.0.2.99\n",
            ),
        ]);
        assert_eq!(
            restarted_with(raw, "192.0.2.53"),
            format!(
                "{HEAD}\nnameserver 192.0.2.53\nnameserver 192.0.2.99\nsearch example.internal\n"
            )
        );
    }

    /// The head systemd v252 (RHEL 9's systemd-252) writes into its uplink file
    /// (redhat-plumbers/systemd-rhel9 77567a88, src/resolve/resolved-resolv-conf.c
    /// `write_uplink_resolv_conf_contents`).
    const V252_HEAD: &str =
        "# This is /run/systemd/resolve/resolv.conf managed by man:systemd-resolved(8).
# Do not edit.
#
# This file might be symlinked as /etc/resolv.conf. If you're looking at
# /etc/resolv.conf and seeing this text, you have followed the symlink.
#
# This is a dynamic resolv.conf file for connecting local clients directly to
# all known uplink DNS servers. This file lists all configured search domains.
#
# Third party programs should typically not access this file directly, but only
# through the symlink at /etc/resolv.conf. To manage man:resolv.conf(5) in a
# different way, replace this symlink by a static file or a different symlink.
#
# See man:systemd-resolved.service(8) for details about the supported modes of
# operation for /etc/resolv.conf.

";

    /// Past three servers, systemd-resolved writes `# Too many DNS servers configured, the
    /// following entries may be ignored.` before the fourth it writes (resolved-resolv-conf.c
    /// `write_resolv_conf_server`: `if (*count == MAXNS)`, the count being of the servers it
    /// writes, not of those it leaves out for their port), in systemd v249 to v257 alike.
    /// Before, the prediction dropped that line and never wrote it again.
    #[test]
    fn a_fourth_server_comes_after_the_too_many_servers_line() {
        let marker = "# Too many DNS servers configured, the following entries may be ignored.\n";
        let uplink = format!(
            "{V252_HEAD}nameserver 169.254.25.10\nnameserver 10.0.0.2\nnameserver 10.0.0.3\n{marker}nameserver 10.0.0.4\nsearch example.internal\n"
        );
        assert_eq!(
            uplink_after(&uplink, "192.0.2.53 192.0.2.54:5353"),
            format!(
                "{V252_HEAD}nameserver 169.254.25.10\nnameserver 192.0.2.53\nnameserver 10.0.0.2\n{marker}nameserver 10.0.0.3\nnameserver 10.0.0.4\nsearch example.internal\n"
            )
        );
        // Three servers before, four after: the line comes where there was none.
        let three = format!(
            "{V252_HEAD}nameserver 169.254.25.10\nnameserver 10.0.0.2\nnameserver 10.0.0.3\nsearch .\n"
        );
        assert_eq!(
            uplink_after(&three, "192.0.2.53"),
            format!(
                "{V252_HEAD}nameserver 169.254.25.10\nnameserver 192.0.2.53\nnameserver 10.0.0.2\n{marker}nameserver 10.0.0.3\nsearch .\n"
            )
        );
    }

    /// Where no `FallbackDNS=` line is written, systemd-resolved uses its compiled-in list
    /// (`need_builtin_fallbacks`, meson's `dns-servers`), which the resolved.conf it ships
    /// shows as `#FallbackDNS=` (src/resolve/resolved.conf.in `#FallbackDNS={{DNS_SERVERS}}`;
    /// here meson_options.txt's default, redhat-plumbers/systemd-rhel9 77567a88): an uplink
    /// file that lists only those servers listed its fallback, gone once a drop-in gives it
    /// one. Before, they were taken for its links' servers and kept.
    #[test]
    fn compiled_in_fallback_servers_go_once_a_drop_in_gives_servers() {
        let shipped = "[Resolve]\n#DNS=\n#FallbackDNS=1.1.1.1#cloudflare-dns.com 8.8.8.8#dns.google 1.0.0.1#cloudflare-dns.com 8.8.4.4#dns.google 2606:4700:4700::1111#cloudflare-dns.com 2001:4860:4860::8888#dns.google 2606:4700:4700::1001#cloudflare-dns.com 2001:4860:4860::8844#dns.google\n#Domains=\n";
        let marker = "# Too many DNS servers configured, the following entries may be ignored.\n";
        let uplink = format!(
            "{V252_HEAD}nameserver 1.1.1.1\nnameserver 8.8.8.8\nnameserver 1.0.0.1\n{marker}nameserver 8.8.4.4\nnameserver 2606:4700:4700::1111\nnameserver 2001:4860:4860::8888\nnameserver 2606:4700:4700::1001\nnameserver 2001:4860:4860::8844\nsearch .\n"
        );
        let node = |conf: &str| {
            crate::testing::raw_from(&[(UPLINK, &uplink), ("/etc/systemd/resolved.conf", conf)])
        };
        assert_eq!(
            restarted_with(node(shipped), "192.0.2.53"),
            format!("{V252_HEAD}nameserver 192.0.2.53\nsearch .\n")
        );
        // Where resolved.conf does not show the compiled-in list, which servers were the
        // fallback ones is not known: they are kept, after the new one.
        let kept = format!(
            "{V252_HEAD}nameserver 192.0.2.53\nnameserver 1.1.1.1\nnameserver 8.8.8.8\n{marker}nameserver 1.0.0.1\nnameserver 8.8.4.4\nnameserver 2606:4700:4700::1111\nnameserver 2001:4860:4860::8888\nnameserver 2606:4700:4700::1001\nnameserver 2001:4860:4860::8844\nsearch .\n"
        );
        assert_eq!(
            restarted_with(node("[Resolve]\n#DNS=\n"), "192.0.2.53"),
            kept
        );
        // A link's server that is also a fallback one is a link's where the file does not
        // list the whole fallback list, which systemd writes at once: kept.
        assert_eq!(
            restarted_with(
                crate::testing::raw_from(&[
                    (
                        UPLINK,
                        &format!("{V252_HEAD}nameserver 8.8.8.8\nsearch .\n")
                    ),
                    ("/etc/systemd/resolved.conf", shipped),
                ]),
                "192.0.2.53"
            ),
            format!("{V252_HEAD}nameserver 192.0.2.53\nnameserver 8.8.8.8\nsearch .\n")
        );
        // Where its parser stops (here at a drop-in read after dnsfix's), it sets up no
        // compiled-in fallback servers: those the file lists are not its fallback ones.
        let mut stopped = node(shipped);
        stopped.file(
            "/etc/systemd/resolved.conf.d/zzz-site.conf",
            FileState::Present,
            Some(b"[Resolve # site\n"),
        );
        assert_eq!(restarted_with(stopped, "192.0.2.53"), kept);
        // A FallbackDNS= line, an empty one too, replaces the compiled-in list.
        assert_eq!(
            restarted_with(node(&format!("{shipped}FallbackDNS=\n")), "192.0.2.53"),
            kept
        );
    }

    /// Where it knew no server, the line that said so goes: the servers take its place.
    #[test]
    fn servers_take_the_place_of_no_dns_servers_known() {
        let raw = crate::testing::raw_from(&[(
            UPLINK,
            &format!("{HEAD}\n# No DNS servers known.\nsearch .\n"),
        )]);
        assert_eq!(
            restarted_with(raw, "192.0.2.53 192.0.2.54"),
            format!("{HEAD}\nnameserver 192.0.2.53\nnameserver 192.0.2.54\nsearch .\n")
        );
    }

    /// Where the configuration leaves it no server at all, no global one (a drop-in read
    /// after dnsfix's empties `DNS=`), no link's and no fallback one (`FallbackDNS=` empty),
    /// a restarted systemd-resolved writes `# No DNS servers known.` (resolved-manager.c
    /// `manager_compile_dns_servers`, resolved-resolv-conf.c
    /// `write_uplink_resolv_conf_contents`, v249 to v258). Before, the prediction took that
    /// line out and wrote nothing in its place.
    #[test]
    fn no_server_at_all_leaves_no_dns_servers_known() {
        let site = "/etc/systemd/resolved.conf.d/zzz-site.conf";
        let none = format!("{HEAD}\n# No DNS servers known.\nsearch .\n");
        let node =
            |uplink: &str, conf: &str| crate::testing::raw_from(&[(UPLINK, uplink), (site, conf)]);
        let empty = "[Resolve]\nDNS=\nFallbackDNS=\n";
        assert_eq!(restarted_with(node(&none, empty), "192.0.2.53"), none);
        // Its own stub address is no server (it skips it): none known still.
        let stub = "[Resolve]\nDNS=\nDNS=127.0.0.53\nFallbackDNS=127.0.0.53\n";
        assert_eq!(restarted_with(node(&none, stub), "192.0.2.53"), none);
        // A fallback server on another port is one: it writes neither line.
        let other_port = "[Resolve]\nDNS=\nFallbackDNS=192.0.2.99:5353\n";
        assert_eq!(
            restarted_with(node(&none, other_port), "192.0.2.53"),
            format!("{HEAD}\nsearch .\n")
        );
        // A file that named no server and did not say so had servers it leaves out: what it
        // writes is not known, and neither line is written.
        let hidden = format!("{HEAD}\nsearch .\n");
        assert_eq!(restarted_with(node(&hidden, empty), "192.0.2.53"), hidden);
    }
}
