//! The node's own resolver, /etc/resolv.conf: down now or after the next boot
//! (DNS-HOST-RESOLVER-DOWN), or edited where something else rewrites it
//! (DNS-RESOLV-MANAGED-ELSEWHERE).

use std::net::IpAddr;

use super::{
    Ctx, NO_KUBELET, RuleOutcome, file_text, network_manager_manages_resolv, not_a_node,
    ns_evidence,
};
use crate::diagnose::finding::Severity;
use crate::facts::node_facts::{ResolvFile, UnitState, in_resolved_run_dir};
use crate::facts::raw::FileState;
use crate::facts::resolv_conf::{Nameserver, ResolvConf, is_loopback, real_upstreams};

/// systemd-resolved's stub listeners: 127.0.0.53, and 127.0.0.54 (its proxy stub, systemd
/// 251 and later). Nothing else answers there.
const RESOLVED_STUBS: [IpAddr; 2] = [
    IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 53)),
    IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 54)),
];

/// The node's own resolver, /etc/resolv.conf: what the node itself resolves with (the
/// container runtime pulling images, the kubelet reaching an API server by name), not what
/// pods get. Down now where the file is missing, a directory or without a nameserver line
/// (glibc then asks 127.0.0.1, Go 127.0.0.1 and ::1: a DNS server on the node itself), or
/// lists only systemd-resolved's stub while systemd-resolved does not run; down after the
/// next reboot where it links into systemd-resolved's /run directory and systemd-resolved
/// will not write it then.
pub(super) fn host_resolver_down(ctx: &Ctx) -> RuleOutcome {
    let id = "DNS-HOST-RESOLVER-DOWN";
    if not_a_node(ctx) {
        return RuleOutcome::NotApplicable(NO_KUBELET.into());
    }
    let etc = &ctx.facts.resolver.etc_resolv_conf;
    let mut seen = etc.path.clone();
    if let Some(t) = &etc.symlink_target {
        seen.push_str(&format!(" → symlink to {t}"));
    }
    const FALLBACK: &str = "the node's own lookups (image pulls, the kubelet's API server name) go to a DNS server on the node itself (glibc: 127.0.0.1; Go: 127.0.0.1 and ::1) and fail unless one runs there";
    let (severity, summary, first) = match (etc.state, &etc.parsed) {
        (FileState::Unreadable, _) => {
            return ctx.unknown(id, format!("{} could not be read", etc.path));
        }
        (FileState::Directory, _) => (
            Severity::High,
            format!(
                "{} is a directory, from which no resolver reads a server: the node's own lookups (image pulls, the kubelet's API server name) fail unless a DNS server runs on the node itself",
                etc.path
            ),
            format!("{seen} → a directory"),
        ),
        (FileState::Missing, _) => {
            let what = if etc.symlink_target.is_some() {
                "is a link to nothing"
            } else {
                "does not exist"
            };
            (
                Severity::High,
                format!("{} {what}: {FALLBACK}", etc.path),
                format!("{seen} → no such file"),
            )
        }
        (FileState::Present, Some(p)) if p.nameservers.is_empty() => (
            Severity::High,
            format!("{} lists no nameserver: {FALLBACK}", etc.path),
            format!("{} → no nameserver line", followed(etc, &seen)),
        ),
        (FileState::Present, Some(p)) if stub_only(p) && resolved_stopped(ctx) => {
            let stubs: Vec<&Nameserver> = p.nameservers.iter().collect();
            (
                Severity::High,
                format!(
                    "{} lists only systemd-resolved's stub address, and systemd-resolved, which answers there, does not run: the node's own lookups (image pulls, the kubelet's API server name) fail",
                    etc.path
                ),
                match etc.symlink_target {
                    Some(_) => format!("{seen} → {}", ns_evidence(etc, &stubs)),
                    None => ns_evidence(etc, &stubs),
                },
            )
        }
        (FileState::Present, _)
            if links_into_resolved(etc) && ctx.facts.services.resolved_gone_at_boot() =>
        {
            (
                Severity::Warning,
                format!(
                    "{} links into systemd-resolved's /run directory, and systemd-resolved {}: after the next reboot the link points at nothing and the node's own lookups (image pulls) fail unless a DNS server runs on the node itself",
                    etc.path,
                    if ctx.facts.services.resolved_starts_at_boot() == Some(false) {
                        "does not start at boot"
                    } else {
                        "does not run, so the next boot writes the file only if it starts systemd-resolved"
                    }
                ),
                followed(etc, &seen),
            )
        }
        _ => return RuleOutcome::Pass,
    };
    let mut evidence = vec![first];
    let resolveds = links_into_resolved(etc) || etc.parsed.as_ref().is_some_and(stub_only);
    if resolveds && ctx.facts.services.systemd_resolved != UnitState::Unknown {
        evidence.push(format!("systemd-resolved is {}", resolved_words(ctx)));
    }
    let servers = match real_servers(ctx) {
        Some((source, real)) => {
            evidence.push(format!("{source} names {}", real.join(", ")));
            real
        }
        None => Vec::new(),
    };
    let fix = host_resolver_fix(ctx, &servers);
    RuleOutcome::Findings(vec![ctx.finding(id, severity, summary, evidence, fix)])
}

/// `seen` (the path and its link), then where the link leads, where that is known.
fn followed(f: &ResolvFile, seen: &str) -> String {
    match (&f.symlink_target, &f.canonical) {
        (Some(_), Some(c)) => format!("{seen} → {c}"),
        _ => seen.to_owned(),
    }
}

/// /etc/resolv.conf is a link into systemd-resolved's /run directory (its stub or uplink
/// file), whether or not the file is there now: where the link leads (`readlink -f`), else
/// its target resolved lexically against /etc.
fn links_into_resolved(etc: &ResolvFile) -> bool {
    let Some(target) = &etc.symlink_target else {
        return false;
    };
    let mut parts: Vec<&str> = Vec::new();
    let base = if target.starts_with('/') { "" } else { "/etc" };
    for part in base.split('/').chain(target.split('/')) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    let path = format!("/{}", parts.join("/"));
    in_resolved_run_dir(etc.canonical.as_deref().unwrap_or(&path))
}

/// Every nameserver of `p` is systemd-resolved's stub (and there is one).
fn stub_only(p: &ResolvConf) -> bool {
    !p.nameservers.is_empty()
        && p.nameservers
            .iter()
            .all(|n| n.ip.is_some_and(|ip| RESOLVED_STUBS.contains(&ip)))
}

/// systemd-resolved is known not to run now (inactive or failed).
fn resolved_stopped(ctx: &Ctx) -> bool {
    matches!(
        ctx.facts.services.systemd_resolved,
        UnitState::Inactive | UnitState::Failed
    )
}

/// systemd-resolved's state as systemctl put it: "active (systemctl is-active) and
/// disabled (systemctl is-enabled)", the second half where is-enabled was asked.
pub(super) fn resolved_words(ctx: &Ctx) -> String {
    let state = ctx.facts.services.systemd_resolved.as_str();
    match ctx.facts.services.systemd_resolved_enabled.as_deref() {
        Some(word) => format!("{state} (systemctl is-active) and {word} (systemctl is-enabled)"),
        None => format!("{state} (systemctl is-active)"),
    }
}

/// The real servers the node is known to use, for a file of its own, and where they come
/// from: the inventory's `upstream_dns_servers`, else its `nameservers`, else
/// systemd-resolved's list of them (its uplink file, while it is in /run), else the
/// kubelet's file for pods. Neither loopback nor the cluster's own DNS; each once.
fn real_servers(ctx: &Ctx) -> Option<(String, Vec<String>)> {
    let real = |listed: Vec<String>| real_upstreams(listed, &ctx.cluster);
    let from_file = |f: Option<&ResolvFile>, whose: &str| -> Option<(String, Vec<String>)> {
        let f = f.filter(|f| f.state == FileState::Present)?;
        let listed = f.parsed.iter().flat_map(|p| &p.nameservers);
        let servers = real(listed.map(|n| n.address.clone()).collect());
        let path = f.canonical.as_deref().unwrap_or(&f.path);
        (!servers.is_empty()).then(|| (format!("{path}, {whose},"), servers))
    };
    ["upstream_dns_servers", "nameservers"]
        .into_iter()
        .find_map(|key| {
            let servers = real(ctx.host.var_list(key).unwrap_or_default());
            (!servers.is_empty()).then(|| (format!("the inventory's {key}"), servers))
        })
        .or_else(|| {
            let uplink = Some(&ctx.facts.resolver.systemd_uplink);
            from_file(uplink, "systemd-resolved's list of the real servers")
        })
        .or_else(|| {
            from_file(
                ctx.facts.kubelet.pod_resolv_conf.as_ref(),
                "the kubelet's file for pods",
            )
        })
}

/// How to give the node a resolver again. Where /etc/resolv.conf is systemd-resolved's (a
/// link into its /run directory, or its stub address): start it where it is enabled and
/// stopped (the next boot starts it anyway); give it servers where it runs and starts at
/// boot but knows none; else a file of the node's own in place of the link or the stub
/// address (where NetworkManager manages /etc/resolv.conf, its own file), or
/// systemd-resolved back. Elsewhere the file from whatever manages it.
fn host_resolver_fix(ctx: &Ctx, servers: &[String]) -> String {
    let etc = &ctx.facts.resolver.etc_resolv_conf;
    let resolveds = links_into_resolved(etc) || etc.parsed.as_ref().is_some_and(stub_only);
    let list = if servers.is_empty() {
        String::new()
    } else {
        format!(" ({})", servers.join(", "))
    };
    if !resolveds {
        return format!(
            "give the node an /etc/resolv.conf that lists the real servers{list}, through whatever manages it (NetworkManager, resolvconf, the DHCP client) or as a file of its own"
        );
    }
    let starts = ctx.facts.services.resolved_starts_at_boot() == Some(true);
    if starts && resolved_stopped(ctx) {
        return "start systemd-resolved (systemctl start systemd-resolved): it is enabled, so the next boot starts it anyway; to run the node without it, disable it and make /etc/resolv.conf a file of its own that lists the real servers".into();
    }
    if starts && ctx.facts.services.systemd_resolved == UnitState::Active {
        return format!(
            "give systemd-resolved the real servers{list}: it runs and starts at boot but knows none (DNS= in a drop-in under /etc/systemd/resolved.conf.d/, or the network's own settings: netplan, NetworkManager, DHCP)"
        );
    }
    let file = format!("make /etc/resolv.conf a file of its own that lists the real servers{list}");
    let Some(target) = &etc.symlink_target else {
        return format!(
            "{file} instead of systemd-resolved's stub address; or {}",
            enable_resolved(ctx)
        );
    };
    // NetworkManager hands DNS to systemd-resolved while the link points at one of its
    // files (NetworkManager.conf(5), dns=default) and leaves a link alone; reloaded with
    // the link gone, it chooses its mode again and puts its own file in place
    // (rc-manager=symlink). Not where dns=none or rc-manager=unmanaged keep it out.
    let nm = if network_manager_manages_resolv(ctx.facts).is_some() {
        " (NetworkManager manages it here: rm /etc/resolv.conf; systemctl reload NetworkManager, and it writes its own)"
    } else {
        ""
    };
    format!(
        "{file} in place of the link to {target}{nm}; or {}",
        enable_resolved(ctx)
    )
}

/// `systemctl enable --now systemd-resolved`, with `unmask` first where it is masked.
pub(super) fn enable_resolved(ctx: &Ctx) -> &'static str {
    let masked = ctx
        .facts
        .services
        .systemd_resolved_enabled
        .as_deref()
        .is_some_and(|w| w.starts_with("masked"));
    if masked {
        "unmask and enable systemd-resolved (systemctl unmask systemd-resolved; systemctl enable --now systemd-resolved)"
    } else {
        "enable systemd-resolved (systemctl enable --now systemd-resolved)"
    }
}

pub(super) fn resolv_managed_elsewhere(ctx: &Ctx) -> RuleOutcome {
    let id = "DNS-RESOLV-MANAGED-ELSEWHERE";
    let facts = ctx.facts;
    let mut findings = Vec::new();
    let etc = &facts.resolver.etc_resolv_conf;
    if etc.state == FileState::Present && etc.symlink_target.is_none() {
        let mut managers = Vec::new();
        if let Some(nm) = network_manager_manages_resolv(facts) {
            managers.push(nm);
        }
        if !managers.is_empty() {
            findings.push(ctx.finding(
                id,
                Severity::Warning,
                "/etc/resolv.conf is a plain file that another program rewrites: a hand fix there will not survive a reboot or DHCP renewal".into(),
                [format!("/etc/resolv.conf is a regular file (sha256 {})", etc.sha256.as_deref().unwrap_or("?"))].into_iter().chain(managers).collect(),
                "make the change where NetworkManager reads it (a conf.d file with [global-dns] servers, or dns=none if the file is to be owned by hand), not in /etc/resolv.conf".into(),
            ));
        }
    }
    for path in ["/etc/dhcp/dhclient.conf", "/etc/dhclient.conf"] {
        let Some(text) = file_text(facts, path) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            let l = line.split('#').next().unwrap_or("").trim();
            let Some(rest) = l.strip_prefix("supersede domain-name-servers") else {
                continue;
            };
            let bad: Vec<String> = rest
                .trim_end_matches(';')
                .split(',')
                .filter_map(|a| a.trim().parse::<IpAddr>().ok())
                .filter(|ip| is_loopback(*ip) || ctx.cluster.contains(ip))
                .map(|ip| ip.to_string())
                .collect();
            if bad.is_empty() {
                continue;
            }
            let fix = "list only real upstream servers in the supersede line (Kubespray: remove 127.0.0.53 from nameservers and set upstream_dns_servers)";
            if facts.services.dhclient {
                findings.push(ctx.finding(
                    id,
                    Severity::High,
                    format!("dhclient writes {} into the host resolver at every lease: after a reboot the loop is back", bad.join(", ")),
                    vec![format!("{path}:{}: {l}", i + 1), "a dhclient process runs: it is this node's DHCP client".into()],
                    fix.into(),
                ));
            } else {
                // Ubuntu's netplan uses systemd-networkd, RHEL 8+ NetworkManager's internal
                // client: the line is latent until dhclient runs again.
                let client = if facts.services.systemd_networkd == UnitState::Active {
                    "systemd-networkd is the DHCP client"
                } else if facts.services.network_manager == UnitState::Active {
                    "NetworkManager is active and no dhclient runs (its internal DHCP client)"
                } else {
                    "no dhclient process runs"
                };
                findings.push(ctx.finding(
                    id,
                    Severity::Info,
                    format!("dhclient.conf would write {} into the host resolver, but dhclient is not the DHCP client here: latent until it is", bad.join(", ")),
                    vec![format!("{path}:{}: {l}", i + 1), client.into()],
                    fix.into(),
                ));
            }
        }
    }
    if findings.is_empty() {
        RuleOutcome::Pass
    } else {
        RuleOutcome::Findings(findings)
    }
}
