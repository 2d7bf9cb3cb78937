//! The node's own resolver, /etc/resolv.conf: down now or after the next boot
//! (DNS-HOST-RESOLVER-DOWN), or edited where something else rewrites it
//! (DNS-RESOLV-MANAGED-ELSEWHERE).

use std::net::IpAddr;

use super::dhclient_run::{DHCLIENT_DEFAULTS, DhclientRun};
use super::dhclient_script::Writes;
use super::host_servers::{stub_answered, stub_only};
use super::resolver_owner::{give_resolved, owner_fix, real_servers};
use super::{
    Ctx, NO_KUBELET, RuleOutcome, file_text, network_manager_manages_resolv, not_a_node,
    ns_evidence, upstream_dns_servers,
};
use crate::diagnose::finding::Severity;
use crate::facts::dhclient_cmdline::DhclientCommand;
use crate::facts::network_manager::{DnsMode, NmDns, RcManager, links_to_resolved};
use crate::facts::node_facts::{
    Effective, FlavourKind, ResolvFile, Services, UnitState, in_resolved_run_dir,
};
use crate::facts::raw::FileState;
use crate::facts::resolv_conf::{Nameserver, ResolvConf, is_loopback};

/// Which case of [`host_resolver_down`] a finding is: the fix depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Down {
    Directory,
    Missing,
    NoNameserver,
    Stub,
    /// systemd-resolved runs, but nothing listens on its stub address.
    StubListenerOff,
    NextBoot,
}

/// What to do where systemctl did not say how systemd-resolved is: ask by hand, or, where
/// systemd did not answer the gather's systemctl, wait for it.
fn ask_systemctl(services: &Services) -> String {
    let why = services.systemctl_silence();
    if services.systemctl_cut.is_some() {
        format!(
            "systemctl did not answer for systemd-resolved ({why}; a node rebooted with hundreds of kubelet mounts to make can hold it for minutes): check again once `systemctl is-system-running` answers; meanwhile `pgrep -x systemd-resolve` says whether systemd-resolved runs"
        )
    } else {
        format!(
            "systemctl did not answer for systemd-resolved ({why}): see by hand whether systemd-resolved runs and starts at boot (systemctl is-active systemd-resolved; systemctl is-enabled systemd-resolved; or whether a systemd-resolve process runs), then check again"
        )
    }
}

/// The node's own resolver, /etc/resolv.conf: what the node itself resolves with (the
/// container runtime pulling images, the kubelet reaching an API server by name), not what
/// pods get. Down now where the file is missing or without a nameserver line (glibc then
/// asks 127.0.0.1, Go 127.0.0.1 and ::1: a DNS server on the node itself), a directory
/// (glibc fails every lookup on the read error, Go asks 127.0.0.1 and ::1), or lists only
/// systemd-resolved's stub while nothing listens there (the kernel's socket table; where it
/// was not read, while systemd-resolved does not run; not while it is activating, a
/// restart caught half-way) or while systemd-resolved, answering there, knows no server to
/// ask ([`resolved_knows_no_server`]: netplan without `nameservers`, DHCP DNS ignored;
/// unknown where its uplink file names none without saying it knows none,
/// [`resolved_servers_unnamed`]); down after the next reboot where it links into
/// systemd-resolved's /run directory and systemd-resolved will not write it then. Where
/// that turns on systemd-resolved and systemctl did not say how it is: unknown.
pub(super) fn host_resolver_down(ctx: &Ctx) -> RuleOutcome {
    let id = "DNS-HOST-RESOLVER-DOWN";
    if not_a_node(ctx) {
        return RuleOutcome::NotApplicable(NO_KUBELET.into());
    }
    let etc = &ctx.facts.resolver.etc_resolv_conf;
    let services = &ctx.facts.services;
    let unknown_state = services.systemd_resolved == UnitState::Unknown;
    let mut seen = etc.path.clone();
    if let Some(t) = &etc.symlink_target {
        seen.push_str(&format!(" → symlink to {t}"));
    }
    const FALLBACK: &str = "the node's own lookups (image pulls, the kubelet's API server name) go to a DNS server on the node itself (glibc: 127.0.0.1; Go: 127.0.0.1 and ::1) and fail unless one runs there";
    let (down, severity, summary, first) = match (etc.state, &etc.parsed) {
        (FileState::Unreadable, _) => {
            return ctx.unknown(id, format!("{} could not be read", etc.path));
        }
        (FileState::Directory, _) => (
            Down::Directory,
            Severity::High,
            format!(
                "{} is a directory: glibc fails every lookup on the read error (resolv/res_init.c), and Go (containerd, the kubelet) asks 127.0.0.1 and ::1 instead: the node's own lookups (image pulls, the kubelet's API server name) fail, Go's too unless a DNS server runs on the node itself",
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
                Down::Missing,
                Severity::High,
                format!("{} {what}: {FALLBACK}", etc.path),
                format!("{seen} → no such file"),
            )
        }
        (FileState::Present, Some(p)) if p.nameservers.is_empty() => (
            Down::NoNameserver,
            Severity::High,
            format!("{} lists no nameserver: {FALLBACK}", etc.path),
            format!("{} → no nameserver line", followed(etc, &seen)),
        ),
        (FileState::Present, Some(p)) if stub_only(p) && stub_down(ctx, p) => {
            stub_unanswered(ctx, etc, &seen, p)
        }
        (FileState::Present, Some(p)) if stub_only(p) && resolved_servers_unnamed(ctx, p) => {
            return servers_unnamed(ctx);
        }
        (FileState::Present, Some(p))
            if stub_only(p) && unknown_state && stub_answered(ctx.facts, p).is_none() =>
        {
            return ctx.unknown_because(
                id,
                format!(
                    "{} lists only systemd-resolved's stub address, and systemctl did not say whether systemd-resolved runs",
                    etc.path
                ),
                ask_systemctl(services),
            );
        }
        (FileState::Present, _)
            if links_into_resolved(etc)
                && services.resolved_starts_at_boot().is_none()
                && unknown_state =>
        {
            return ctx.unknown_because(
                id,
                format!(
                    "{} links into systemd-resolved's /run directory, and systemctl did not say whether systemd-resolved runs or starts at boot, which writes the file there",
                    etc.path
                ),
                ask_systemctl(services),
            );
        }
        (FileState::Present, _) if links_into_resolved(etc) && services.resolved_gone_at_boot() => {
            (
                Down::NextBoot,
                Severity::Warning,
                format!(
                    "{} links into systemd-resolved's /run directory, and systemd-resolved {}: after the next reboot the link points at nothing and the node's own lookups (image pulls) fail unless a DNS server runs on the node itself",
                    etc.path,
                    if services.resolved_starts_at_boot() == Some(false) {
                        "does not start at boot"
                    } else {
                        "does not run, so the next boot writes the file only if it starts systemd-resolved"
                    }
                ),
                followed(etc, &seen),
            )
        }
        // The static stub link (/usr/lib/systemd/resolv.conf) or a copy of the stub: the file
        // stays, but nothing answers there once systemd-resolved does not start.
        // Not where another server answers there now (systemd-resolved does not run): it
        // may well start at boot too.
        (FileState::Present, Some(p))
            if stub_only(p)
                && services.resolved_starts_at_boot() == Some(false)
                && !(resolved_stopped(ctx) && stub_answered(ctx.facts, p) == Some(true)) =>
        {
            (
                Down::NextBoot,
                Severity::Warning,
                format!(
                    "{} lists only systemd-resolved's stub address, and systemd-resolved does not start at boot: after the next reboot nothing answers there and the node's own lookups (image pulls) fail unless another DNS server listens on port 53 on all addresses",
                    etc.path
                ),
                stub_evidence(etc, &seen, p),
            )
        }
        _ => return RuleOutcome::Pass,
    };
    down_finding(ctx, (down, severity, summary), first)
}

/// The finding for a resolver [`host_resolver_down`] found down, with `first` (what
/// /etc/resolv.conf is) as its first evidence, then systemd-resolved's and
/// NetworkManager's state where they own the file, and the real servers the node knows.
fn down_finding(
    ctx: &Ctx,
    (down, severity, summary): (Down, Severity, String),
    first: String,
) -> RuleOutcome {
    let id = "DNS-HOST-RESOLVER-DOWN";
    let etc = &ctx.facts.resolver.etc_resolv_conf;
    let services = &ctx.facts.services;
    let unknown_state = services.systemd_resolved == UnitState::Unknown;
    let mut evidence = vec![first];
    let resolveds = resolveds(etc);
    if resolveds && (!unknown_state || services.systemd_resolved_enabled.is_some()) {
        evidence.push(format!("systemd-resolved is {}", resolved_words(ctx)));
    }
    if resolveds && services.network_manager == UnitState::Active {
        let nm = NmDns::read(&ctx.facts.files);
        evidence.push(format!(
            "NetworkManager is active, with {} and {}",
            setting(&nm.dns, "dns"),
            setting(&nm.rc_manager, "rc-manager")
        ));
    }
    let servers = match real_servers(ctx) {
        Some((source, real)) => {
            evidence.push(format!("{source} names {}", real.join(", ")));
            real
        }
        None => Vec::new(),
    };
    let fix = host_resolver_fix(ctx, down, resolveds, &servers);
    RuleOutcome::Findings(vec![ctx.finding(id, severity, summary, evidence, fix)])
}

/// The stub addresses a file lists, after `seen` (the path and its link) where it is a link.
fn stub_evidence(etc: &ResolvFile, seen: &str, p: &ResolvConf) -> String {
    let stubs: Vec<&Nameserver> = p.nameservers.iter().collect();
    match etc.symlink_target {
        Some(_) => format!("{seen} → {}", ns_evidence(etc, &stubs)),
        None => ns_evidence(etc, &stubs),
    }
}

/// `seen` (the path and its link), then where the link leads, where that is known.
fn followed(f: &ResolvFile, seen: &str) -> String {
    match (&f.symlink_target, &f.canonical) {
        (Some(_), Some(c)) => format!("{seen} → {c}"),
        _ => seen.to_owned(),
    }
}

/// /etc/resolv.conf is systemd-resolved's: a link into its /run directory, or a file that
/// lists only its stub address.
fn resolveds(etc: &ResolvFile) -> bool {
    links_into_resolved(etc) || etc.parsed.as_ref().is_some_and(stub_only)
}

/// /etc/resolv.conf is a link into systemd-resolved's /run directory (its stub or uplink
/// file), whether or not the file is there now: where the link leads (`readlink -f`), else
/// its target resolved lexically against /etc.
fn links_into_resolved(etc: &ResolvFile) -> bool {
    let Some(target) = &etc.symlink_target else {
        return false;
    };
    let base = if target.starts_with('/') { "" } else { "/etc" };
    let path = crate::facts::node_facts::go_clean(&format!("{base}/{target}"));
    in_resolved_run_dir(etc.canonical.as_deref().unwrap_or(&path))
}

/// Nothing answers at the stub addresses `p` lists (the socket table; where it was not
/// read, systemd-resolved does not run; not while it is activating, a restart caught
/// half-way), or systemd-resolved does and fails every lookup
/// ([`resolved_knows_no_server`]).
fn stub_down(ctx: &Ctx, p: &ResolvConf) -> bool {
    let unanswered = match stub_answered(ctx.facts, p) {
        Some(answered) => !answered,
        None => resolved_stopped(ctx),
    };
    (ctx.facts.services.systemd_resolved != UnitState::Activating && unanswered)
        || resolved_knows_no_server(ctx, p)
}

/// /etc/resolv.conf lists only systemd-resolved's stub addresses and nothing listens
/// there (/proc/net/udp), or systemd-resolved does but knows no server to ask (it comes
/// first: [`stub_down`]): systemd-resolved does not run, or runs without its stub
/// listener (`DNSStubListener=no`; from systemd 246 it then links its own stub file to its
/// uplink file, resolved-resolv-conf.c, so this is the static /usr/lib/systemd/resolv.conf,
/// a copy of the stub, or an older systemd). Where the socket table was not read:
/// systemd-resolved does not run, and another server on every address is not ruled out.
fn stub_unanswered(
    ctx: &Ctx,
    etc: &ResolvFile,
    seen: &str,
    p: &ResolvConf,
) -> (Down, Severity, String, String) {
    if resolved_knows_no_server(ctx, p) {
        // Where the socket table was not read, that it answers there is taken, not seen.
        let answers = match stub_answered(ctx.facts, p) {
            Some(_) => "which answers there",
            None => {
                "which runs (whether it answers there is not known: the socket table was not read)"
            }
        };
        return (
            Down::NoNameserver,
            Severity::High,
            format!(
                "{} lists only systemd-resolved's stub address, and systemd-resolved, {answers}, knows no DNS server to ask (none configured, none from the network, no FallbackDNS=): every lookup of the node's own fails (image pulls, the kubelet's API server name)",
                etc.path
            ),
            format!(
                "{}; {}, systemd-resolved's list of the servers it asks: no nameserver line, and `{NONE_KNOWN}`",
                stub_evidence(etc, seen, p),
                ctx.facts.resolver.systemd_uplink.path
            ),
        );
    }
    if stub_answered(ctx.facts, p).is_none() {
        return (
            Down::Stub,
            Severity::High,
            format!(
                "{} lists only systemd-resolved's stub address, and systemd-resolved, which answers there, does not run: the node's own lookups (image pulls, the kubelet's API server name) fail unless another DNS server listens on port 53 on all addresses",
                etc.path
            ),
            stub_evidence(etc, seen, p),
        );
    }
    let why = match ctx.facts.services.systemd_resolved {
        UnitState::Active => {
            "systemd-resolved runs but does not listen there (DNSStubListener=no: from systemd 246 its own stub file then links to its uplink file, but a copy of the stub or the static /usr/lib/systemd/resolv.conf still lists the stub)"
        }
        UnitState::Inactive | UnitState::Failed => {
            "systemd-resolved, which answers there, does not run, and no other DNS server listens on port 53 there or on every address"
        }
        _ => "nothing listens there",
    };
    // Its uplink file is the fix only where it also starts at the next boot.
    let services = &ctx.facts.services;
    let down = if services.systemd_resolved == UnitState::Active
        && services.resolved_starts_at_boot() != Some(false)
    {
        Down::StubListenerOff
    } else {
        Down::Stub
    };
    (
        down,
        Severity::High,
        format!(
            "{} lists only systemd-resolved's stub address, and {why}: the node's own lookups (image pulls, the kubelet's API server name) fail",
            etc.path
        ),
        format!(
            "{}; {}, {}: no UDP socket on port 53 there or on every address",
            stub_evidence(etc, seen, p),
            crate::facts::sockets::UDP,
            crate::facts::sockets::UDP6
        ),
    )
}

/// The line systemd-resolved writes into its uplink file in place of the servers where it
/// knows none (resolved-resolv-conf.c `write_uplink_resolv_conf_contents`, and
/// `write_resolv_conf_contents` before it, systemd 232 to 258: `if
/// (ordered_set_isempty(dns)) fputs("# No DNS servers known.\n", f);`).
const NONE_KNOWN: &str = "# No DNS servers known.";

/// What systemd-resolved's uplink file says of the servers it asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UplinkServers {
    /// It names some (or was not read).
    Named,
    /// No nameserver line, and [`NONE_KNOWN`]: it knows none, FallbackDNS= included.
    NoneKnown,
    /// No nameserver line, and no [`NONE_KNOWN`]: it knows servers it leaves out, those on a
    /// port other than 53 (systemd 246 and later) and those of a link that is not a default
    /// route (`write_resolv_conf_server`), or the file is not its own.
    Unnamed,
}

/// What systemd-resolved's uplink file, read whole, says of its servers ([`UplinkServers`]).
fn uplink_servers(ctx: &Ctx) -> UplinkServers {
    let uplink = &ctx.facts.resolver.systemd_uplink;
    let empty = uplink.state == FileState::Present
        && uplink
            .parsed
            .as_ref()
            .is_some_and(|u| u.nameservers.is_empty());
    let Some(text) = ctx.facts.whole_text(&uplink.path).filter(|_| empty) else {
        return UplinkServers::Named;
    };
    if text.lines().any(|l| l.trim() == NONE_KNOWN) {
        UplinkServers::NoneKnown
    } else {
        UplinkServers::Unnamed
    }
}

/// systemd-resolved listens at the stub addresses `p` lists: a socket is bound to one of
/// them itself (one on every address is another server's); `None` where the socket table
/// was not read.
fn resolved_listens(ctx: &Ctx, p: &ResolvConf) -> Option<bool> {
    let table = ctx.facts.whole_text(crate::facts::sockets::UDP)?;
    Some(p.nameservers.iter().any(|n| match n.ip {
        Some(IpAddr::V4(v4)) => crate::facts::sockets::bound_53_to(&table, v4),
        _ => false,
    }))
}

/// systemd-resolved answers at the stub addresses `p` lists and knows no DNS server to
/// ask, so it fails every lookup: it runs, it listens there ([`resolved_listens`]; where
/// the socket table was not read, that it runs is taken for it), and its uplink file says
/// it knows none ([`UplinkServers::NoneKnown`]). That file lists every server it asks, the
/// FallbackDNS= ones where it knows no other (systemd src/resolve/resolved-manager.c
/// `manager_compile_dns_servers`: "If we found nothing, add the fallback servers"), but not
/// one it leaves out ([`UplinkServers::Unnamed`]: [`resolved_servers_unnamed`]).
fn resolved_knows_no_server(ctx: &Ctx, p: &ResolvConf) -> bool {
    ctx.facts.services.systemd_resolved == UnitState::Active
        && resolved_listens(ctx, p) != Some(false)
        && uplink_servers(ctx) == UplinkServers::NoneKnown
}

/// systemd-resolved runs and listens at the stub addresses `p` lists, and its uplink file
/// names no server without saying it knows none ([`UplinkServers::Unnamed`]): whether it
/// asks one is not known, unless its configuration names one on a port other than 53
/// ([`resolved_names_other_port`]), which it asks.
fn resolved_servers_unnamed(ctx: &Ctx, p: &ResolvConf) -> bool {
    ctx.facts.services.systemd_resolved == UnitState::Active
        && resolved_listens(ctx, p) != Some(false)
        && uplink_servers(ctx) == UplinkServers::Unnamed
        && !resolved_names_other_port(ctx)
}

/// Whether systemd-resolved, answering at the stub /etc/resolv.conf lists, knows a server
/// to ask is not known ([`resolved_servers_unnamed`]): the unknown finding that says so.
fn servers_unnamed(ctx: &Ctx) -> RuleOutcome {
    ctx.unknown_because(
        "DNS-HOST-RESOLVER-DOWN",
        format!(
            "{} lists only systemd-resolved's stub address, and {}, systemd-resolved's list of the servers it asks, names none without saying `{NONE_KNOWN}`: it leaves out servers on a port other than 53 and those of a link that is not a default route, so whether it knows one to ask is not known",
            ctx.facts.resolver.etc_resolv_conf.path, ctx.facts.resolver.systemd_uplink.path
        ),
        format!(
            "see which servers systemd-resolved asks (resolvectl status, or resolvectl dns): where it names none, give it the real servers, with {}",
            give_resolved(ctx, &real_servers(ctx).map(|(_, s)| s).unwrap_or_default())
        ),
    )
}

/// systemd-resolved's configuration (resolved.conf and its drop-ins) names a `DNS=` or
/// `FallbackDNS=` server on a port other than 53 (`192.0.2.53:5353`, `[2001:db8::53]:5353`,
/// either with a `#name` after it: resolved.conf(5)), which its uplink file leaves out.
fn resolved_names_other_port(ctx: &Ctx) -> bool {
    crate::facts::resolved_conf::ResolvedConf::read(&ctx.facts.raw)
        .settings
        .iter()
        .filter(|s| s.key == "DNS" || s.key == "FallbackDNS")
        .any(|s| s.value.split_whitespace().any(other_port))
}

/// A resolved.conf server word with a port other than 53.
fn other_port(word: &str) -> bool {
    let address = word.split('#').next().unwrap_or(word);
    let port = match address.strip_prefix('[') {
        Some(v6) => v6.split_once("]:").map(|(_, port)| port),
        None => address
            .split_once(':')
            .filter(|(_, port)| !port.contains(':'))
            .map(|(_, port)| port),
    };
    port.is_some_and(|port| port != "53")
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

/// How to give the node a resolver again. Where /etc/resolv.conf is systemd-resolved's
/// (`resolveds`: a link into its /run directory, or its stub address): start it where it
/// is enabled and stopped (the next boot starts it anyway); where it runs and starts at
/// boot, give it servers where its file lists none, else link the file to its stub again
/// (where it runs without its stub listener: to its uplink file);
/// else a file of the node's own in place of the link or the stub address (with what
/// NetworkManager does with that file: [`network_manager_note`]), or systemd-resolved back.
/// Elsewhere the file from whatever manages it.
fn host_resolver_fix(ctx: &Ctx, down: Down, resolveds: bool, servers: &[String]) -> String {
    let etc = &ctx.facts.resolver.etc_resolv_conf;
    let list = if servers.is_empty() {
        String::new()
    } else {
        format!(" ({})", servers.join(", "))
    };
    if !resolveds {
        // What writes the file takes the servers; the generic route where that is no
        // program a step can be named for.
        return owner_fix(ctx, servers).unwrap_or_else(|| format!(
            "give the node an /etc/resolv.conf that lists the real servers{list}, through whatever manages it (NetworkManager, resolvconf, the DHCP client) or as a file of its own"
        ));
    }
    let starts = ctx.facts.services.resolved_starts_at_boot() == Some(true);
    if starts && resolved_stopped(ctx) {
        return "start systemd-resolved (systemctl start systemd-resolved): it is enabled, so the next boot starts it anyway; to run the node without it, disable it and make /etc/resolv.conf a file of its own that lists the real servers".into();
    }
    if down == Down::StubListenerOff {
        return format!(
            "link /etc/resolv.conf to systemd-resolved's list of the real servers (ln -sfn ../run/systemd/resolve/resolv.conf /etc/resolv.conf), as systemd 246 and later do with its stub file when the stub listener is off; or turn the stub listener on again (take out the DNSStubListener=no of resolved.conf or its drop-ins, which `systemd-analyze cat-config systemd/resolved.conf` shows from systemd 239 on, or put a drop-in read after it, such as /etc/systemd/resolved.conf.d/zz-dnsfix.conf, with the lines [Resolve] and DNSStubListener=yes; then systemctl restart systemd-resolved); or make /etc/resolv.conf a file of its own that lists the real servers{list}"
        );
    }
    let active = ctx.facts.services.systemd_resolved == UnitState::Active;
    // Where whether it starts at boot is not known, it runs now: its servers are the fix.
    // Where its uplink file does not say it knows none, it may ask servers it leaves out.
    let knows = if uplink_servers(ctx) == UplinkServers::NoneKnown {
        "knows none".to_owned()
    } else {
        format!(
            "its list of them, {}, names none (it leaves out servers on a port other than 53 and those of a link that is not a default route: resolvectl status shows them)",
            ctx.facts.resolver.systemd_uplink.path
        )
    };
    if down == Down::NoNameserver
        && active
        && ctx.facts.services.resolved_starts_at_boot() != Some(false)
    {
        let boots = if starts { " and starts at boot" } else { "" };
        return format!(
            "give systemd-resolved the real servers{list}: it runs{boots} but {knows}; with {}",
            give_resolved(ctx, servers)
        );
    }
    if starts
        && active
        && let Some(target) = &etc.symlink_target
    {
        return format!(
            "link /etc/resolv.conf to systemd-resolved's stub file again (ln -sfn ../run/systemd/resolve/stub-resolv.conf /etc/resolv.conf): systemd-resolved runs and starts at boot, but the link to {target} reads no file; or make /etc/resolv.conf a file of its own that lists the real servers{list}"
        );
    }
    let file = format!("make /etc/resolv.conf a file of its own that lists the real servers{list}");
    let nm = network_manager_note(ctx);
    // Enabled, a systemd-resolved that knows no server still answers nothing.
    let keep = if down == Down::NoNameserver && active {
        format!(
            "{} and give it the real servers{list}, as it runs but {knows}: with {}",
            enable_resolved(ctx),
            give_resolved(ctx, servers)
        )
    } else {
        enable_resolved(ctx).to_owned()
    };
    match &etc.symlink_target {
        None => format!("{file} instead of systemd-resolved's stub address{nm}; or {keep}"),
        Some(target) => format!("{file} in place of the link to {target}{nm}; or {keep}"),
    }
}

/// A NetworkManager setting as evidence: `dns=systemd-resolved at
/// /usr/lib/NetworkManager/conf.d/10-dns-resolved.conf:2`, or `dns unset`.
fn setting(e: &Option<Effective<String>>, key: &str) -> String {
    match e {
        Some(e) => format!("{key}={} at {}", e.value, e.source.at()),
        None => format!("{key} unset"),
    }
}

/// What an active NetworkManager does once /etc/resolv.conf is a file of the node's own (or
/// gone), from its effective `[main] dns` and `rc-manager` ([`NmDns`]; nm-dns-manager.c
/// `init_resolv_conf_mode`, which `systemctl reload NetworkManager` runs again), as a
/// parenthesis for the fix; "" where it is not active or leaves the file alone (dns=none,
/// rc-manager=unmanaged).
/// - dns=systemd-resolved (Ubuntu's /usr/lib/NetworkManager/conf.d/10-dns-resolved.conf) or
///   dnsconfd, rc-manager auto: it hands DNS there and leaves /etc/resolv.conf alone, so a
///   file of its own stays (1.28 and later; with `symlink`, the default before 1.28 and so
///   on Ubuntu 20.04, it writes its local address, 127.0.0.53, over a plain file);
/// - rc-manager resolvconf or netconfig: it hands its servers to that program;
/// - otherwise (dns unset, for which no link decides then, default, dnsmasq, unbound): it
///   writes the file itself, so removing the file and reloading it gives the node its
///   connections' servers.
fn network_manager_note(ctx: &Ctx) -> String {
    let facts = ctx.facts;
    // Stopped but enabled, it does the same from its start at the next boot.
    let active = facts.services.network_manager == UnitState::Active;
    let at_boot = matches!(
        facts.services.network_manager,
        UnitState::Inactive | UnitState::Failed
    ) && facts.services.network_manager_starts_at_boot() == Some(true);
    if !active && !at_boot {
        return String::new();
    }
    let when = if active {
        ""
    } else {
        " from its start at the next boot (stopped now, enabled)"
    };
    let nm = NmDns::read(&facts.files);
    let unread = if nm.unread.is_empty() {
        String::new()
    } else {
        format!(
            "; not read here, so not taken into account: {}",
            nm.unread.join(", ")
        )
    };
    // Once /etc/resolv.conf is a file of its own, no link to systemd-resolved's files
    // chooses NetworkManager's mode.
    let mode = nm.mode(false);
    let rc = nm.rc_manager();
    let note = match (mode, rc) {
        (DnsMode::None, _) | (_, RcManager::Unmanaged) => return String::new(),
        (DnsMode::SystemdResolved | DnsMode::Dnsconfd, RcManager::Auto) => format!(
            "NetworkManager hands DNS to {} here{when} ({}) and leaves /etc/resolv.conf alone, so a file of its own stays (NetworkManager 1.28 and later; an older one, such as Ubuntu 20.04's 1.22, writes nameserver 127.0.0.53 over it: there set dns=none in /etc/NetworkManager/conf.d/)",
            mode.as_str(),
            setting(&nm.dns, "dns")
        ),
        (DnsMode::SystemdResolved | DnsMode::Dnsconfd, _) => format!(
            "NetworkManager hands DNS to {} here{when} ({}) and writes its local address over /etc/resolv.conf ({}{}): set dns=none in /etc/NetworkManager/conf.d/ so that a file of its own stays",
            mode.as_str(),
            setting(&nm.dns, "dns"),
            setting(&nm.rc_manager, "rc-manager"),
            match (
                &nm.version,
                nm.default_rc_manager()
                    .filter(|_| nm.rc_manager_defaulted())
            ) {
                (Some(v), Some((RcManager::File, why))) => format!(
                    ": file, the default of NetworkManager {} ({why})",
                    crate::text::escape(v)
                ),
                (Some(v), Some((_, "older than 1.28"))) => format!(
                    ": symlink, the default of NetworkManager {} (before 1.28)",
                    crate::text::escape(v)
                ),
                (Some(v), Some((_, why))) => format!(
                    ": symlink, the default of NetworkManager {} ({why})",
                    crate::text::escape(v)
                ),
                _ => String::new(),
            }
        ),
        (_, RcManager::Resolvconf | RcManager::Netconfig) => format!(
            "NetworkManager hands its servers to {} here ({}), not to /etc/resolv.conf",
            if rc == RcManager::Resolvconf {
                "resolvconf"
            } else {
                "netconfig"
            },
            setting(&nm.rc_manager, "rc-manager")
        ),
        _ => {
            let resolvconf = facts
                .raw
                .commands
                .get("resolvconf-bin")
                .is_some_and(|c| !c.stdout.trim().is_empty());
            let caveat = if rc == RcManager::Auto && resolvconf {
                "; resolvconf is installed here, and a NetworkManager built with resolvconf support hands the servers to it instead: see that the file is back"
            } else {
                ""
            };
            let link = if nm.dns.is_none() && links_to_resolved(&facts.resolver.etc_resolv_conf) {
                " (with dns unset it hands DNS to systemd-resolved only while /etc/resolv.conf links to its files)"
            } else {
                ""
            };
            let how = if active {
                "rm /etc/resolv.conf; systemctl reload NetworkManager, and it writes its own"
            } else {
                "it writes its own over the file at its start at the next boot (stopped now, enabled)"
            };
            let through = nm_dangling_note(facts, &nm, rc);
            format!(
                "NetworkManager manages it here, with {} and {}: {how}{through}{link}{caveat}",
                setting(&nm.dns, "dns"),
                setting(&nm.rc_manager, "rc-manager")
            )
        }
    };
    format!(" ({note}{unread})")
}

/// Where /etc/resolv.conf is a link to nothing and NetworkManager's rc-manager is `file`,
/// it writes through the link as it is: `realpath` fails, so it writes to the link's
/// target made absolute (nm-dns-manager.c `update_resolv_conf` @355bc902:
/// `nm_utils_read_link_absolute`, then `g_file_set_contents`, which needs the target's
/// directory), and with `dns` unset a link to systemd-resolved's file puts it in that
/// mode ([`links_to_resolved`]), where what it writes is its local address. So the link
/// goes first. "" elsewhere.
fn nm_dangling_note(facts: &crate::facts::NodeFacts, nm: &NmDns, rc: RcManager) -> String {
    let etc = &facts.resolver.etc_resolv_conf;
    let (FileState::Missing, Some(target), RcManager::File) = (etc.state, &etc.symlink_target, rc)
    else {
        return String::new();
    };
    let absolute = if target.starts_with('/') {
        target.clone()
    } else {
        format!("/etc/{target}")
    };
    let what = match nm.mode(links_to_resolved(etc)) {
        DnsMode::SystemdResolved => {
            "systemd-resolved's stub address (nameserver 127.0.0.53), which nothing answers while systemd-resolved does not run,"
        }
        DnsMode::Dnsconfd => "its local address for dnsconfd",
        _ => "its connections' servers",
    };
    format!(
        " (left as it is, the link to nothing is written through: rc-manager=file writes {what} into {} where that directory exists, so the rm comes first)",
        crate::text::escape(&absolute)
    )
}

/// `systemctl enable --now systemd-resolved`, with `unmask` first where it is masked, and
/// an install first where systemctl knows no such unit (Debian 12 and later ship it in a
/// package of its own, systemd-resolved).
pub(super) fn enable_resolved(ctx: &Ctx) -> &'static str {
    match ctx.facts.services.systemd_resolved_enabled.as_deref() {
        Some(w) if w.starts_with("masked") => {
            "unmask and enable systemd-resolved (systemctl unmask systemd-resolved; systemctl enable --now systemd-resolved)"
        }
        Some("not-found") => {
            "install systemd-resolved, which is not on the node (systemctl is-enabled: not-found), and enable it (systemctl enable --now systemd-resolved)"
        }
        _ => "enable systemd-resolved (systemctl enable --now systemd-resolved)",
    }
}

/// A dhclient `request` or `require` list as the statements leave it
/// ([`DhclientServers::option_list`]).
enum OptionList {
    /// The built-in one: `request`'s has domain-name-servers (client/clparse.c
    /// `read_client_conf`), `require`'s is empty.
    Default,
    /// None (`request;`): dhclient sends no parameter request list, and the server sends
    /// what it would by default. With the `(1-based line, statement)` that left none.
    Unset((usize, String)),
    /// The list a statement set, `(1-based line, statement)`, and whether it has
    /// domain-name-servers. The statement is the one that replaced the default list (a
    /// `request` with options, or the `request;` an `also` line then added to), not an
    /// `also` line that added to it.
    Set((usize, String), bool),
}

/// What the cluster or loopback servers `bad` that dhclient writes into the host resolver
/// at every lease do once there, as the rules judge them in the kubelet's file: where
/// CoreDNS and nodelocaldns forward elsewhere (the Corefiles read, or Kubespray's
/// upstream_dns_servers), a cluster address cannot loop (Kubespray's host_resolvconf puts
/// it first on purpose) and a loopback one fails only other dnsPolicy: Default pods
/// (DNS-CLUSTER-SELF-FORWARD, DNS-KUBELET-LOOPBACK), unless the line holds no `real`
/// server: then the node itself has none.
fn dhclient_harm(
    ctx: &Ctx,
    bad: &[String],
    real: bool,
    evidence: &mut Vec<String>,
) -> (Severity, String) {
    let pods_file = "the resolv.conf the kubelet hands them";
    let elsewhere = super::forwards_elsewhere_than(ctx, ctx.corefile_forwards_to_file, pods_file);
    let alone = if real {
        ""
    } else {
        ", and no real server is left for the node itself"
    };
    let Some(why) = elsewhere else {
        return (
            Severity::High,
            format!(
                "dhclient writes {} into the host resolver at every lease: after a reboot the loop is back{alone}",
                bad.join(", ")
            ),
        );
    };
    evidence.push(why);
    // Nothing else in the line: after a lease the node itself resolves nothing until the
    // cluster's DNS answers (its own image pulls included).
    if !real {
        return (
            Severity::High,
            format!(
                "dhclient writes only {} into the host resolver at every lease: CoreDNS forwards elsewhere, but after a reboot the node itself resolves nothing until cluster DNS answers",
                bad.join(", ")
            ),
        );
    }
    let loopback: Vec<&String> = bad
        .iter()
        .filter(|a| a.parse::<IpAddr>().is_ok_and(is_loopback))
        .collect();
    if loopback.is_empty() {
        return (
            Severity::Info,
            format!(
                "dhclient writes the cluster's {} into the host resolver at every lease, ahead of the real servers: CoreDNS and nodelocaldns forward elsewhere, so nothing loops",
                bad.join(", ")
            ),
        );
    }
    (
        Severity::Warning,
        format!(
            "dhclient writes loopback {} into the host resolver at every lease: CoreDNS forwards elsewhere and does not loop, but dnsPolicy: Default pods off the host network that get it ask their own network namespace, where nothing answers",
            loopback
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
}

/// How to stop dhclient writing those servers: where Kubespray wrote the line (its
/// `# Ansible entries` block, roles/kubernetes/preinstall 0100-dhclient-hooks.yml), from
/// what it renders it: the cluster address, then `nameservers`, `cloud_resolver` and the
/// servers /etc/resolv.conf listed when it ran (`nameserverentries`, vars/main.yml
/// @46dbdd39).
/// Kubespray writes that block only with dns_mode other than none and resolvconf_mode
/// host_resolvconf (its default), removes it with another resolvconf_mode, and leaves it be
/// with dns_mode none (roles/kubernetes/preinstall/tasks/main.yml @46dbdd39, 0100 and 0110).
fn dhclient_fix(ctx: &Ctx, text: &str) -> String {
    if !kubespray_block(ctx, text) {
        return "list only real upstream servers in the domain-name-servers lines named (a supersede line replaces the lease's servers, a prepend or append line adds to them, a default line stands in where the lease brings none: drop its loopback and cluster addresses, or the line)".into();
    }
    let host = ctx.host;
    if host.var_or_default("dns_mode", Some("coredns")) == Some("none") {
        return "the `# Ansible entries` block is Kubespray's, from a run with another dns_mode: with dns_mode: none Kubespray neither rewrites nor removes it, so delete the block (dhclient reads the file again at the next lease)".into();
    }
    if let Some(mode) = host
        .var_or_default("resolvconf_mode", Some("host_resolvconf"))
        .filter(|m| *m != "host_resolvconf")
    {
        return format!(
            "the `# Ansible entries` block is Kubespray's, from a run with resolvconf_mode: host_resolvconf: with resolvconf_mode: {} its next run removes it (0110-dhclient-hooks-undo.yml): run cluster.yml --tags resolvconf, or delete the block",
            crate::text::escape(mode)
        );
    }
    let upstream = if upstream_dns_servers(ctx).is_empty() {
        "set upstream_dns_servers, so CoreDNS and nodelocaldns forward there and not to the resolv.conf pods get; "
    } else {
        ""
    };
    format!(
        "Kubespray writes this line at every run (host_resolvconf): {upstream}a loopback server in it comes from nameservers or from the servers /etc/resolv.conf listed when Kubespray ran (disable_host_nameservers: true leaves those out), not from the cluster address, which it puts first on purpose"
    )
}

/// A Kubespray node's dhclient.conf `text` holds Kubespray's `# Ansible entries` block:
/// [`dhclient_fix`] then gives Kubespray's own text.
fn kubespray_block(ctx: &Ctx, text: &str) -> bool {
    ctx.facts.flavour.kind == FlavourKind::Kubespray && text.contains("# Ansible entries BEGIN")
}

/// Where NetworkManager writes the servers its connections give (dns=default), the
/// nameservers of /etc/resolv.conf against those of its own no-stub-resolv.conf, which it
/// writes in the same update (the same list where no caching plugin runs): the same, why
/// they differ, or not known (another DNS mode, whose caching plugin or resolvconf(8)
/// writes other servers, or no file to compare with). `at_boot`: NetworkManager
/// is stopped and writes the file at its next start, from its configuration as it is
/// then: its `[global-dns-domain-*] servers` where conf.d sets them (what it last wrote,
/// no-stub-resolv.conf, may be older than them).
fn nm_hand_edit(facts: &crate::facts::NodeFacts, at_boot: bool) -> NmEdit {
    use crate::facts::network_manager::{DnsMode, NmDns, RcManager, links_to_resolved};
    let nm = NmDns::read(&facts.files);
    if nm.mode(links_to_resolved(&facts.resolver.etc_resolv_conf)) != DnsMode::Default {
        return NmEdit::Unknown;
    }
    // Only where NetworkManager writes the file itself: resolvconf(8) and netconfig merge
    // other sources into it, and `auto` hands it to resolvconf where that is installed
    // (nm-dns-manager.c).
    let resolvconf = facts
        .raw
        .commands
        .get("resolvconf-bin")
        .is_some_and(|c| !c.stdout.trim().is_empty());
    match nm.rc_manager() {
        RcManager::Symlink | RcManager::File => {}
        RcManager::Auto if !resolvconf => {}
        _ => return NmEdit::Unknown,
    }
    let servers = |path: &str| -> Option<Vec<String>> {
        let text = file_text(facts, path)?;
        let parsed = crate::facts::resolv_conf::ResolvConf::parse(&text);
        Some(
            parsed
                .nameservers
                .iter()
                .map(|n| n.address.clone())
                .collect(),
        )
    };
    let own = "/run/NetworkManager/no-stub-resolv.conf";
    let Some(etc) = servers("/etc/resolv.conf") else {
        return NmEdit::Unknown;
    };
    if let (true, Some(global), Some(set)) = (at_boot, nm.global_server_list(), &nm.global_servers)
    {
        if etc == global {
            return NmEdit::Same;
        }
        return NmEdit::Differs(format!(
            "its nameservers ({}) are not NetworkManager's global DNS servers, which it writes at its start ([global-dns-domain-*] servers at {}: {})",
            etc.join(", "),
            set.source.at(),
            crate::text::escape(&global.join(", "))
        ));
    }
    let Some(generated) = servers(own) else {
        return NmEdit::Unknown;
    };
    if etc == generated {
        return NmEdit::Same;
    }
    NmEdit::Differs(format!(
        "its nameservers ({}) are not those NetworkManager generated in {own} ({})",
        etc.join(", "),
        generated.join(", ")
    ))
}

/// What [`nm_hand_edit`] tells of /etc/resolv.conf against what NetworkManager writes.
enum NmEdit {
    /// The same servers.
    Same,
    /// Other servers, with why.
    Differs(String),
    /// Not known: NetworkManager's mode or manager writes what dnsfix does not model, or
    /// a file to compare was not read.
    Unknown,
}

/// NetworkManager writes systemd-resolved's stub address into /etc/resolv.conf
/// ([`super::network_manager_writes_resolved_stub`]), where the file lists other servers now.
fn nm_writes_stub(facts: &crate::facts::NodeFacts) -> bool {
    super::network_manager_writes_resolved_stub(facts)
        && facts
            .resolver
            .etc_resolv_conf
            .parsed
            .as_ref()
            .is_some_and(|p| p.nameservers.iter().any(|n| n.address != "127.0.0.53"))
}

/// The `domain-name-servers` dhclient hands its script at every lease, from the statements
/// of dhclient.conf that set them: dhclient runs them in order over the lease's options
/// (isc-dhcp common/options.c `set_option` @572032cb): `supersede` replaces what is there
/// (the lease's servers too), `prepend` puts its servers before it and `append` after it.
/// So a `supersede` takes away the statements before it, and a `prepend` after it adds to
/// it. The file's top-level statements run for every interface, an `interface` block's
/// after them for that interface ([`dhclient_conf`](crate::facts::dhclient_conf)).
#[derive(Debug, Default, PartialEq)]
struct DhclientServers {
    /// The interface whose block adds statements; `None` for the top level alone.
    interface: Option<String>,
    /// The statements that still count, as `(1-based line, statement)`.
    lines: Vec<(usize, String)>,
    /// Their addresses, in the order dhclient passes them on.
    addresses: Vec<IpAddr>,
    /// The lease's own servers are passed on too (no `supersede` counts, and dhclient asks
    /// for them: see `unrequested`).
    lease: bool,
    /// The statement that replaced dhclient's default request list with one that leaves
    /// out domain-name-servers (a `request` line, or the `request;` an `also request` then
    /// added to), as `(1-based line, statement)`, where one did and no
    /// `supersede` takes the lease's servers away anyway ([`DhclientServers::unrequested`]).
    unrequested: Option<(usize, String)>,
    /// A `default` line's servers, which stand in the lease's place where the lease brings
    /// none (common/options.c `set_option` @572032cb, `default_option_statement`: saved
    /// only where no value is there yet); empty where no `default` counts.
    fallback: Vec<IpAddr>,
}

impl DhclientServers {
    /// What the top level gives an interface without a block of its own, then what each
    /// interface block gives its interface; empty where no statement sets the servers
    /// (dhclient passes the lease's on). An interface's request and require lists are
    /// those of the top-level statements before its block opens, then of the block's own:
    /// isc-dhcp @572032cb client/clparse.c `parse_interface_declaration` gives the
    /// interface a copy of the top level's settings as they are there (`make_client_config`,
    /// a `memcpy` of the config, lists included), which a later top-level `request` does
    /// not change (it sets a new list on the top level's, lines 661-665); its `on_receipt`
    /// statements (the servers) run after all the top level's. So an interface gets a
    /// finding of its own where its block sets servers, or where its lists ask for
    /// domain-name-servers where the top level's do not, or the other way round.
    fn parse(text: &str) -> Vec<DhclientServers> {
        use crate::facts::dhclient_conf::{Scope, statements};
        let all = statements(text);
        let top: Vec<_> = all.iter().filter(|s| s.scope == Scope::Top).collect();
        let top_unrequested = Self::unrequested(&top);
        let mut interfaces: Vec<&str> = Vec::new();
        for s in &all {
            if let Scope::Interface(name) = &s.scope
                && !interfaces.contains(&name.as_str())
            {
                interfaces.push(name);
            }
        }
        let mut out: Vec<DhclientServers> = Self::apply(None, top.iter().copied(), &top)
            .into_iter()
            .collect();
        for name in interfaces {
            let block = Scope::Interface(name.to_owned());
            let in_block = |s: &crate::facts::dhclient_conf::Statement| s.scope == block;
            let own = all.iter().filter(|s| in_block(s));
            // The top-level statements before the block's first (for a name given several
            // blocks, the config the first made).
            let opened = all.iter().position(in_block).unwrap_or(all.len());
            let lists: Vec<_> = all[..opened]
                .iter()
                .filter(|s| s.scope == Scope::Top)
                .chain(own.clone())
                .collect();
            if own
                .clone()
                .any(|s| Self::servers_statement(&s.text).is_some())
                || Self::unrequested(&lists) != top_unrequested
            {
                out.extend(Self::apply(
                    Some(name),
                    top.iter().copied().chain(own),
                    &lists,
                ));
            }
        }
        out
    }

    /// The statements in the order dhclient runs them, over the lease's servers, with
    /// the request and require lists `lists` leave; `None` where none sets them.
    fn apply<'a>(
        interface: Option<&str>,
        statements: impl Iterator<Item = &'a crate::facts::dhclient_conf::Statement>,
        lists: &[&crate::facts::dhclient_conf::Statement],
    ) -> Option<DhclientServers> {
        let unrequested = Self::unrequested(lists);
        let mut out = DhclientServers {
            interface: interface.map(str::to_owned),
            lease: unrequested.is_none(),
            ..DhclientServers::default()
        };
        let mut any = false;
        let mut superseded = false;
        for s in statements {
            let Some((verb, listed)) = Self::servers_statement(&s.text) else {
                continue;
            };
            match verb {
                // Only where nothing is there yet: the lease's servers (when it brings
                // any) or another statement's come first.
                "default" if !out.addresses.is_empty() || !out.fallback.is_empty() => continue,
                "default" if out.lease => out.fallback = listed,
                "default" => out.addresses = listed,
                "supersede" => {
                    superseded = true;
                    out.lines.clear();
                    out.addresses = listed;
                    out.fallback.clear();
                    out.lease = false;
                }
                "prepend" => {
                    let mut all = listed;
                    all.append(&mut out.addresses);
                    out.addresses = all;
                }
                _ => out.addresses.extend(listed),
            }
            any = true;
            out.lines.push((s.line, s.text.clone()));
        }
        if !superseded && let Some(request) = unrequested {
            let at = out.lines.partition_point(|(n, _)| *n < request.0);
            out.lines.insert(at, request.clone());
            out.unrequested = Some(request);
        }
        any.then_some(out)
    }

    /// The statement that leaves domain-name-servers out of what dhclient asks the DHCP
    /// server for, where one does; `None` where dhclient asks for them. isc-dhcp @572032cb:
    /// the default list has them (client/clparse.c `read_client_conf`,
    /// `DHO_DOMAIN_NAME_SERVERS`); `request` replaces it, and `request;` with no options
    /// leaves none (`parse_option_list` sets the list to NULL); `also request` appends to
    /// it, or sets it where there is none (`TOKEN_ALSO`). dhclient sends the list as the
    /// parameter request list (client/dhclient.c `make_client_options`), and none at all
    /// where it is NULL, when a server sends what it would by default (ISC dhcpd's
    /// default list has domain-name-servers, common/options.c `cons_options`). With a
    /// list, ISC dhcpd sends only its options (and a few of its own: the message type,
    /// server identifier, lease times, subnet-mask), so a lease brings no servers, and
    /// dhclient keeps what the server sent (`packet_to_lease`): the DHCP server alone
    /// decides. Not where the `require` list has them: dhclient ignores an offer without
    /// them (client/dhclient.c `dhcpoffer`, `required_options`), so a lease it takes
    /// brings them. A `request` in an interface block counts for that interface, after
    /// the top level's before the block ([`DhclientServers::parse`]).
    fn unrequested(
        statements: &[&crate::facts::dhclient_conf::Statement],
    ) -> Option<(usize, String)> {
        let required = matches!(
            Self::option_list(statements, "require"),
            OptionList::Set(_, true)
        );
        match Self::option_list(statements, "request") {
            OptionList::Set(at, false) if !required => Some(at),
            _ => None,
        }
    }

    /// The `request` or `require` list (`keyword`) in effect after `statements`
    /// (client/clparse.c `parse_client_statement`, `REQUEST`, `REQUIRE`, `TOKEN_ALSO`).
    fn option_list(
        statements: &[&crate::facts::dhclient_conf::Statement],
        keyword: &str,
    ) -> OptionList {
        let mut list = OptionList::Default;
        for s in statements {
            let Some((also, rest)) = s
                .text
                .strip_prefix(keyword)
                .map(|rest| (false, rest))
                .or_else(|| {
                    let rest = s.text.strip_prefix("also ")?.strip_prefix(keyword)?;
                    Some((true, rest))
                })
                .filter(|(_, rest)| rest.starts_with([' ', ';']))
            else {
                continue;
            };
            let names: Vec<&str> = rest
                .trim_end_matches(';')
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .collect();
            let has = names
                .iter()
                .any(|n| matches!(*n, "domain-name-servers" | "dhcp.domain-name-servers"));
            let at = (s.line, s.text.clone());
            // The statement that replaced the default list (or left none) stays the one
            // named: an `also` line after it adds to its list, it does not make it.
            list = match (also, list) {
                (true, OptionList::Unset(reset)) if names.is_empty() => OptionList::Unset(reset),
                (false, _) if names.is_empty() => OptionList::Unset(at),
                (false, _) => OptionList::Set(at, has),
                (true, OptionList::Unset(reset)) => OptionList::Set(reset, has),
                // Appended to the default list: `request`'s has them, `require`'s is empty.
                (true, OptionList::Default) if keyword == "request" => OptionList::Default,
                (true, OptionList::Default) => OptionList::Set(at, has),
                (true, OptionList::Set(first, had)) => OptionList::Set(first, had || has),
            };
        }
        list
    }

    /// `default`, `supersede`, `prepend` or `append` of `domain-name-servers`, with its
    /// addresses.
    fn servers_statement(text: &str) -> Option<(&str, Vec<IpAddr>)> {
        let (verb, rest) = text.split_once(' ')?;
        if !matches!(verb, "default" | "supersede" | "prepend" | "append") {
            return None;
        }
        let list = rest.strip_prefix("domain-name-servers")?;
        if !list.is_empty() && !list.starts_with([' ', ';']) {
            return None;
        }
        let listed = list
            .trim()
            .trim_end_matches(';')
            .split(',')
            .filter_map(|a| a.trim().parse().ok())
            .collect();
        Some((verb, listed))
    }
}

/// The dhclient.conf files to judge: the default ones and every file a running dhclient's
/// `-cf` names.
fn dhclient_confs(runs: &[DhclientRun]) -> Vec<String> {
    let mut out: Vec<String> = DHCLIENT_DEFAULTS.iter().map(|p| (*p).to_owned()).collect();
    for run in runs {
        if let Ok(DhclientCommand { conf: Some(c), .. }) = &run.command
            && !out.contains(c)
        {
            out.push(c.clone());
        }
    }
    out
}

/// What the dhclients that read one file serve: the interfaces all of them name, or why
/// that is not known.
fn served(readers: &[&DhclientRun]) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for run in readers {
        for name in run.serves()? {
            if !out.contains(name) {
                out.push(name.clone());
            }
        }
    }
    Ok(out)
}

/// The text of a dhclient.conf, `None` where it was not read, or where a running dhclient
/// reads it (`read`) and it was read only in part (over the gather's cap): judging its
/// first part would miss the lines after it.
fn dhclient_text<'f>(
    facts: &'f crate::facts::NodeFacts,
    path: &str,
    read: bool,
) -> Option<std::borrow::Cow<'f, str>> {
    let cut = read && facts.files.get(path).is_some_and(|f| f.truncated);
    file_text(facts, path).filter(|_| !cut)
}

/// The file NetworkManager merged a dhclient `-cf` file from, where it made that file:
/// it writes it again at every DHCP start, as `NMSTATEDIR "/dhclient%s-%s.conf"`
/// (`/var/lib/NetworkManager/dhclient-IF.conf`, `dhclient6-IF.conf` for DHCPv6), from the
/// first of its own or the distribution's dhclient.conf it finds, headed
/// `_("# Created by NetworkManager\n")` then `_("# Merged from %s\n\n")` (NetworkManager
/// src/core/dhcp/nm-dhcp-dhclient-utils.c `nm_dhcp_dhclient_create_config` @b92182f1, the
/// last commit with dhclient support; src/dhcp/ at 1.18.0, lines 302 and 313). Both lines
/// are translated (po/de.po: "# Erstellt von NetworkManager"), so in another language the
/// header is two comment lines, the second naming an absolute path: only a file at
/// NetworkManager's own path is taken for one it made. Edits to the made file are undone
/// at the next DHCP start: PATH is the one to edit.
pub(super) fn nm_merged_from<'t>(path: &str, text: &'t str) -> Option<&'t str> {
    let name = path.strip_prefix("/var/lib/NetworkManager/")?;
    if !(name.starts_with("dhclient-") || name.starts_with("dhclient6-"))
        || !name.ends_with(".conf")
    {
        return None;
    }
    let mut lines = text.lines();
    let created = lines.next()?;
    let merged = lines.next()?;
    if created == "# Created by NetworkManager" {
        return merged
            .strip_prefix("# Merged from ")
            .map(str::trim_end)
            .filter(|p| p.starts_with('/'));
    }
    // Translated: the first word of the second comment line that is an absolute path.
    if !created.starts_with("# ") || !created.contains("NetworkManager") {
        return None;
    }
    merged
        .strip_prefix("# ")?
        .split_whitespace()
        .find(|w| w.starts_with('/'))
}

/// Where `text` (the file at `path`, shown escaped) is one NetworkManager made
/// ([`nm_merged_from`]): the evidence line that says so, and `fix` then names the file it
/// was merged from as the one to edit (where `fix` is not Kubespray's own text,
/// `kubespray`, which names its block there already), and that NetworkManager makes the
/// file again only at the next DHCP start: `nmcli connection up` or a reboot.
fn nm_source_note(text: &str, path: &str, kubespray: bool, fix: &mut String) -> Option<String> {
    let from = crate::text::escape(nm_merged_from(path, text)?).into_owned();
    if !kubespray {
        *fix = format!("edit {from}, not {path}: {fix}");
    }
    fix.push_str(&format!(
        "; then `nmcli connection up <connection>` for the interface's connection (or reboot), so NetworkManager writes {path} again from {from}"
    ));
    Some(format!(
        "{path} is NetworkManager's, made again from {from} at every DHCP start (# Merged from {from}): {from} is the file to edit"
    ))
}

/// The file NetworkManager made from `path` ([`nm_merged_from`]) that a running dhclient
/// reads, where there is one, and whether it is current: whether its statements that set
/// domain-name-servers ([`DhclientServers::servers_statement`]) are, in order, those
/// NetworkManager would copy from `path` (`text`) for its interface now
/// ([`nm_merged_lines`]), with that interface. Where several are made from `path`, the
/// first that is not current, else the first. A line changed in `path` since
/// NetworkManager made the file counts only from its next DHCP start.
fn merged_into_read(
    facts: &crate::facts::NodeFacts,
    runs: &[DhclientRun],
    path: &str,
    text: &str,
) -> Option<(String, bool, String)> {
    let servers = |text: &str| -> Vec<(crate::facts::dhclient_conf::Scope, String)> {
        crate::facts::dhclient_conf::statements(text)
            .into_iter()
            .filter(|s| DhclientServers::servers_statement(&s.text).is_some())
            .map(|s| (s.scope, s.text))
            .collect()
    };
    let made: Vec<(String, bool, String)> = runs
        .iter()
        .filter_map(|run| match &run.command {
            Ok(DhclientCommand { conf: Some(c), .. }) => {
                let made = file_text(facts, c)?;
                if nm_merged_from(c, &made) != Some(path) {
                    return None;
                }
                let interface = nm_made_interface(c);
                let current = servers(&made) == servers(&nm_merged_lines(text, interface));
                Some((c.clone(), current, interface.to_owned()))
            }
            _ => None,
        })
        .collect();
    let first = made
        .iter()
        .find(|(_, current, _)| !current)
        .or(made.first());
    first.cloned()
}

/// The interface NetworkManager made the dhclient file at `path` for: the IF of
/// `dhclient-IF.conf` or `dhclient6-IF.conf` ([`nm_merged_from`]).
fn nm_made_interface(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.strip_prefix("dhclient6-")
        .or_else(|| name.strip_prefix("dhclient-"))
        .and_then(|n| n.strip_suffix(".conf"))
        .unwrap_or_default()
}

/// Where the request list that leaves out domain-name-servers is set by the `request;`
/// (`at`) NetworkManager writes into the file it made (`path`, `text`): the `request`
/// line of the file it merged from that made it write it, which is the one to change
/// ([`nm_merged_parts`]). NetworkManager's own `also request` lines after it add no
/// domain-name-servers for IPv4.
fn nm_request_source(
    facts: &crate::facts::NodeFacts,
    path: &str,
    text: &str,
    at: &(usize, String),
) -> Option<String> {
    if at.1 != "request;" {
        return None;
    }
    let from = nm_merged_from(path, text)?;
    let shown = crate::text::escape(from);
    // Where the file it merged from has no `request` line, the `request;` was copied from
    // it (REQ_TAG is "request ", with its space), not written by NetworkManager.
    let source = match file_text(facts, from) {
        Some(t) => {
            let (n, l) = nm_merged_parts(&t, nm_made_interface(path)).1?;
            format!("{shown}:{n}: {}", crate::text::escape(l))
        }
        None => format!("a `request` line of {shown}"),
    };
    Some(format!(
        "{path}:{}: request; is NetworkManager's, written for {source}: it merges that list into its own, without domain-name-servers; that line is the one to change",
        at.0
    ))
}

/// The lines of a dhclient.conf (`text`) that NetworkManager copies into the file it makes
/// for `interface`, as `nm_dhcp_dhclient_create_config` picks them (NetworkManager
/// src/core/dhcp/nm-dhcp-dhclient-utils.c @b92182f1): each line stripped; the lines of
/// `lease`, `alias` and `pseudo` blocks and of `interface` blocks for another interface
/// left out, those of the block for `interface` copied without the block's own lines (the
/// first `interface` opened names it; the `}` that closes any of these blocks forgets it);
/// `request` and `also request` lists (to the `;` that ends them) merged into its own
/// request lines, not copied; lines that start `timeout `, `retry ` or `script ` dropped
/// whole (lines 395-431: a statement after one on the same line is not copied either);
/// lines that start `send fqdn.` copied after all the others (its `fqdn_opts`, line 509).
/// The lines it drops by the connection's settings (`send dhcp-client-identifier` where the
/// connection sets a client id or sends none, `send host-name` and `send fqdn.fqdn` where
/// it sets a host name) are kept: those settings are not gathered.
pub(super) fn nm_merged_lines(text: &str, interface: &str) -> String {
    let mut out = String::new();
    for (_, line) in nm_merged(text, interface) {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The lines [`nm_merged_lines`] gives, each with the 1-based line of `text` it is.
fn nm_merged<'t>(text: &'t str, interface: &str) -> Vec<(usize, &'t str)> {
    nm_merged_parts(text, interface).0
}

/// A line of a dhclient.conf with its 1-based line number.
type SourceLine<'t> = (usize, &'t str);

/// [`nm_merged`], and the last `request` line NetworkManager merges (its first line, with
/// its 1-based line), where there is one: each empties the list it gathers, and any makes
/// it write `request; # override dhclient defaults` before its own `also request` lines
/// (nm-dhcp-dhclient-utils.c @b92182f1 lines 431-437, 502-506).
fn nm_merged_parts<'t>(
    text: &'t str,
    interface: &str,
) -> (Vec<SourceLine<'t>>, Option<SourceLine<'t>>) {
    let mut out = Vec::new();
    let mut request = None;
    let mut fqdn = Vec::new();
    let mut blocks: Vec<bool> = Vec::new();
    let mut skip = 0usize;
    let mut intf = String::new();
    let (mut in_req, mut in_also) = (false, false);
    // grab_request_options: the list ends at a word that starts with `;`, or that starts
    // with a letter or digit and ends with `;`.
    let ends = |list: &str| {
        list.split(['\t', ' ', ','])
            .filter(|w| !w.is_empty())
            .any(|w| {
                w.starts_with(';')
                    || (w.starts_with(|c: char| c.is_ascii_alphanumeric()) && w.ends_with(';'))
            })
    };
    // nm_strsplit_set(orig_contents, "\n\r"): a `\r` splits a line as `\n` does, but
    // only `\n` counts for the line number dhclient and the evidence give.
    let pieces = text
        .split('\n')
        .enumerate()
        .flat_map(|(n, l)| l.split('\r').map(move |piece| (n + 1, piece)));
    for (number, line) in pieces {
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        if in_req {
            // A request list's later lines open and close no block.
        } else if line.contains('{') {
            if ["lease", "alias", "interface", "pseudo"]
                .iter()
                .any(|b| line.starts_with(b))
            {
                skip += 1;
                blocks.push(true);
                if intf.is_empty()
                    && line.starts_with("interface")
                    && let Some(name) = nm_read_interface(line)
                {
                    intf = name;
                    continue;
                }
            } else if !line.contains('}') {
                blocks.push(false);
            }
        } else if line.contains('}')
            && let Some(block) = blocks.pop()
            && block
        {
            skip -= 1;
            intf.clear();
            continue;
        }
        if (skip > 0 && intf.is_empty()) || (!intf.is_empty() && intf != interface) {
            continue;
        }
        if ["timeout ", "retry ", "script "]
            .iter()
            .any(|t| line.starts_with(t))
        {
            continue;
        }
        if line.starts_with("send fqdn.") {
            fqdn.push((number, line));
            continue;
        }
        if let Some(list) = line.strip_prefix("request ") {
            in_req = !ends(list);
            request = Some((number, line));
            continue;
        }
        if in_req {
            in_req = !ends(line);
            continue;
        }
        if let Some(list) = line.strip_prefix("also request ") {
            in_also = !ends(list);
            continue;
        }
        if in_also {
            in_also = !ends(line);
            continue;
        }
        out.push((number, line));
    }
    out.append(&mut fqdn);
    (out, request)
}

/// [`DhclientServers::parse`] of the lines NetworkManager copies from `text` for
/// `interface` ([`nm_merged`]): all at the top level, as in the file it makes, so an
/// interface block's statements run after the top level's before them and another
/// interface's block counts not at all; numbered by the lines of `text` they are on.
fn nm_merged_servers(text: &str, interface: &str) -> Vec<DhclientServers> {
    let merged = nm_merged(text, interface);
    let joined: String = merged.iter().map(|(_, l)| format!("{l}\n")).collect();
    let mut parsed = DhclientServers::parse(&joined);
    for (n, _) in parsed.iter_mut().flat_map(|s| s.lines.iter_mut()) {
        *n = merged.get(*n - 1).map_or(*n, |(source, _)| *source);
    }
    parsed
}

/// The interface an `interface` line opens a block for (nm-dhcp-dhclient-utils.c
/// `read_interface` @b92182f1): the quoted name, else what comes before the first space,
/// or before `{` where there is none.
fn nm_read_interface(line: &str) -> Option<String> {
    let rest = line["interface".len()..].trim_start();
    let name = match rest.strip_prefix('"') {
        Some(quoted) => quoted.split_once('"')?.0,
        None => &rest[..rest.find(' ').or_else(|| rest.find('{'))?],
    };
    (!name.is_empty() && name.len() < 16).then(|| name.to_owned())
}

/// DNS-RESOLV-MANAGED-ELSEWHERE for a dhclient.conf at `path` whose statements make dhclient
/// hand loopback or cluster servers on at every lease ([`DhclientServers`]): judged as the
/// kubelet's file would be where a running dhclient reads it (its `-cf`, else the default
/// files), latent (info) where none does.
fn dhclient_finding(
    ctx: &Ctx,
    path: &str,
    runs: &[DhclientRun],
) -> Option<crate::diagnose::finding::Finding> {
    let id = "DNS-RESOLV-MANAGED-ELSEWHERE";
    let facts = ctx.facts;
    let readers: Vec<&DhclientRun> = runs.iter().filter(|r| r.reads(path)).collect();
    let Some(text) = dhclient_text(facts, path, !readers.is_empty()) else {
        return dhclient_unread(ctx, path, &readers);
    };
    // A file NetworkManager made from this one is judged in its place, while it is current;
    // where it is not, what NetworkManager copies into it at its next DHCP start is.
    let mut pending = None;
    if readers.is_empty() {
        match merged_into_read(facts, runs, path, &text) {
            Some((_, true, _)) => return None,
            Some((made, false, interface)) => pending = Some((made, interface)),
            None => {}
        }
    }
    let parsed = match &pending {
        Some((_, interface)) => nm_merged_servers(&text, interface),
        None => DhclientServers::parse(&text),
    };
    // A -cf path comes from a command line: shown escaped from here on.
    let shown = crate::text::escape(path);
    let path: &str = &shown;
    let harmful = |ip: &IpAddr| is_loopback(*ip) || ctx.cluster.contains(ip);
    let bad_of = |servers: &DhclientServers| -> Vec<String> {
        servers
            .addresses
            .iter()
            .chain(&servers.fallback)
            .filter(|ip| harmful(ip))
            .map(|ip| ip.to_string())
            .collect()
    };
    let (servers, unblocked, serving) =
        dhclient_pick(&parsed, &readers, path, |s| !bad_of(s).is_empty())?;
    let bad = bad_of(servers);
    let mut fix = dhclient_fix(ctx, &text);
    let source = nm_source_note(&text, path, kubespray_block(ctx, &text), &mut fix);
    let asked =
        (servers.unrequested.as_ref()).and_then(|at| nm_request_source(facts, path, &text, at));
    let scope = servers.interface.as_ref().map(|name| {
        format!(
            "for interface {} (its block in {path} runs after the file's top-level statements)",
            crate::text::escape(name)
        )
    });
    let lines: Vec<String> = servers
        .lines
        .iter()
        .map(|(n, l)| format!("{path}:{n}: {}", crate::text::escape(l)))
        .chain(scope)
        .chain(source)
        .chain(asked)
        .chain(serving)
        .chain(unblocked.clone())
        .collect();
    if !readers.is_empty() {
        let judged = Judged {
            servers,
            bad: &bad,
            lines,
            unblocked: unblocked.is_some(),
            fix,
        };
        return Some(dhclient_read_finding(ctx, &readers, judged));
    }
    let client = dhclient_elsewhere(facts, runs, path);
    if let Some((made, interface)) = pending {
        // NetworkManager copies this file into the one its dhclient reads at the next DHCP
        // start (a reboot, `nmcli connection up`): these lines are not there yet.
        let made = crate::text::escape(&made);
        let copied = format!(
            "NetworkManager copies these lines of {path} into {made} for interface {}, where dhclient runs them in this order (an interface block's without the block)",
            crate::text::escape(&interface)
        );
        return Some(ctx.finding(
            id,
            Severity::Warning,
            format!(
                "dhclient.conf would write {} into the host resolver from NetworkManager's next DHCP start, which makes {made} from it again (the running dhclient reads {made}, whose servers lines are not yet these)",
                bad.join(", ")
            ),
            lines.into_iter().chain([copied, client]).collect(),
            fix,
        ));
    }
    let summary = match runs {
        [] => "dhclient is not the DHCP client here: latent until it is",
        _ => "no running dhclient reads this file: latent until one does",
    };
    Some(ctx.finding(
        id,
        Severity::Info,
        format!(
            "dhclient.conf would write {} into the host resolver, but {summary}",
            bad.join(", ")
        ),
        lines.into_iter().chain([client]).collect(),
        fix,
    ))
}

/// What [`dhclient_finding`] found in a file a running dhclient reads.
struct Judged<'a> {
    servers: &'a DhclientServers,
    /// The loopback and cluster servers it hands on.
    bad: &'a [String],
    /// The evidence so far: the lines, and why they count.
    lines: Vec<String>,
    /// Which interfaces dhclient serves is not known (the finding is unknown).
    unblocked: bool,
    fix: String,
}

/// Where the lease's servers go when NetworkManager runs dhclient ([`nm_lease`]).
enum NmLease {
    /// NetworkManager writes them into /etc/resolv.conf (dns=default: itself, or through
    /// resolvconf or netconfig).
    Writes,
    /// It hands them to a resolver of its own choosing (systemd-resolved, dnsconfd, its
    /// dnsmasq), not to /etc/resolv.conf: the summary that says so.
    Elsewhere(String),
    /// It writes no resolv.conf (dns=none, rc-manager=unmanaged): the setting that says so.
    NotWritten(String),
}

/// Where every dhclient in `readers` is NetworkManager's
/// ([`DhclientCommand::run_by_network_manager`]), no dhclient-script runs: NetworkManager
/// takes the lease and puts its servers (superseded ones included) where its `[main] dns`
/// and `rc-manager` say ([`NmDns`]; nm-dns-manager.c `update_dns` @1.40.0 5d4802f7): into
/// /etc/resolv.conf with dns=default, to systemd-resolved per link, to dnsconfd or to its
/// dnsmasq, or nowhere with dns=none or rc-manager=unmanaged. `None` where some dhclient
/// runs with another script (or its command line is not understood).
fn nm_lease(facts: &crate::facts::NodeFacts, readers: &[&DhclientRun]) -> Option<NmLease> {
    let all_nm = readers
        .iter()
        .all(|r| r.command.as_ref().is_ok_and(|c| c.run_by_network_manager()));
    if readers.is_empty() || !all_nm {
        return None;
    }
    let nm = NmDns::read(&facts.files);
    let mode = nm.mode(links_to_resolved(&facts.resolver.etc_resolv_conf));
    let to = match mode {
        DnsMode::SystemdResolved => {
            "systemd-resolved, as DNS servers of the interface's link: what asks systemd-resolved (127.0.0.53) may be sent to them"
        }
        DnsMode::Dnsconfd => "dnsconfd, not into /etc/resolv.conf",
        DnsMode::Dnsmasq => {
            "its own dnsmasq as upstream servers (127.0.0.1 in /etc/resolv.conf): what asks that dnsmasq may be sent to them"
        }
        DnsMode::None => {
            return Some(NmLease::NotWritten(format!(
                "NetworkManager does not write resolv.conf here: {}",
                setting(&nm.dns, "dns")
            )));
        }
        DnsMode::Default if nm.rc_manager() == RcManager::Unmanaged => {
            return Some(NmLease::NotWritten(format!(
                "NetworkManager does not write resolv.conf here: {}",
                setting(&nm.rc_manager, "rc-manager")
            )));
        }
        DnsMode::Default => return Some(NmLease::Writes),
    };
    Some(NmLease::Elsewhere(format!(
        "NetworkManager runs dhclient and hands the lease's servers, with the loopback or cluster ones dhclient.conf gives, to {to} ({})",
        setting(&nm.dns, "dns")
    )))
}

/// DNS-RESOLV-MANAGED-ELSEWHERE for a dhclient.conf the running dhclients `readers` read,
/// whose statements hand on the loopback or cluster servers of `judged`: latent where
/// /etc/resolv.conf is locked or only a `default` line gives them, else as the kubelet's
/// file would be judged ([`dhclient_harm`]). Where NetworkManager runs those dhclients
/// ([`nm_lease`]) it, not dhclient-script, writes the lease's servers, as its own settings say.
fn dhclient_read_finding(
    ctx: &Ctx,
    readers: &[&DhclientRun],
    judged: Judged,
) -> crate::diagnose::finding::Finding {
    let id = "DNS-RESOLV-MANAGED-ELSEWHERE";
    let facts = ctx.facts;
    let Judged {
        servers,
        bad,
        mut lines,
        unblocked,
        mut fix,
    } = judged;
    let harmful = |ip: &IpAddr| is_loopback(*ip) || ctx.cluster.contains(ip);
    let nm = nm_lease(facts, readers);
    let client = match &nm {
        Some(_) => {
            "a dhclient process runs, started by NetworkManager (-sf nm-dhcp-helper): NetworkManager, not dhclient-script, takes each lease and writes its servers as its dns= and rc-manager= say"
        }
        None => "a dhclient process runs: it is this node's DHCP client",
    };
    lines.push(client.to_owned());
    if let Some(NmLease::NotWritten(why)) = &nm {
        lines.push(why.clone());
        return ctx.finding(
            id,
            Severity::Info,
            format!(
                "dhclient hands {} to NetworkManager at every lease, but NetworkManager does not write resolv.conf here: latent until it does",
                bad.join(", ")
            ),
            lines,
            fix,
        );
    }
    // dhclient-script replaces /etc/resolv.conf with a rename (isc-dhcp client/scripts/
    // linux make_resolv_conf: `mv -f`), which an immutable or append-only file refuses:
    // `chattr +i` is the usual guard against it. Latent until the flag is lifted.
    // Not where a hook hands the servers to systemd-resolved instead: its own files take
    // them. (What the dhclient-script writes: its enter hooks, Red Hat's PEERDNS.)
    let writes = nm
        .is_none()
        .then(|| super::dhclient_script::writes(ctx.facts, readers));
    let via_resolved = matches!(writes, Some(Writes::Resolved(_)));
    let locked =
        crate::facts::network_manager::resolv_conf_locked(&facts.raw).filter(|_| !via_resolved);
    if let (Some(flags), None | Some(NmLease::Writes)) = (&locked, &nm) {
        let writer = match nm {
            Some(_) => "NetworkManager's write of it",
            None => "dhclient-script's rename over it",
        };
        lines.push(format!(
            "/etc/resolv.conf is immutable or append-only (lsattr: {flags}): {writer} fails"
        ));
        return ctx.finding(
            id,
            Severity::Info,
            format!(
                "dhclient.conf would write {} into the host resolver, but /etc/resolv.conf is locked against it: latent until the lock is lifted",
                bad.join(", ")
            ),
            lines,
            fix,
        );
    }
    let mut script_unknown = false;
    if let Some(writes) = writes
        && let Some(latent) = script_latent(ctx, writes, bad, &mut lines, &fix, &mut script_unknown)
    {
        return latent;
    }
    if !servers.addresses.iter().any(harmful) {
        // Only a `default` line gives them: written where the lease brings no servers.
        let summary = format!(
            "dhclient writes {} into the host resolver only after a lease that brings no domain-name-servers (a default line stands in for the lease's): latent while the DHCP server sends servers of its own",
            bad.join(", ")
        );
        return ctx.finding(
            id,
            Severity::Info,
            said_of_the_writer(None, via_resolved, Severity::Info, summary).1,
            lines,
            fix,
        );
    }
    let mut evidence = lines;
    if servers.lease {
        evidence.push("no supersede line: the lease's own servers are passed on too".into());
    } else if let Some((line, _)) = &servers.unrequested {
        evidence.push(format!(
            "no supersede line, but the request list (line {line}) leaves out domain-name-servers: a DHCP server that keeps to the list it is sent (ISC dhcpd does) sends none, and the lease brings no servers of its own"
        ));
        fix.push_str(
            "; where the node should also have the DHCP server's servers, put domain-name-servers back in the request list",
        );
    }
    // The lease brings servers of its own where no supersede takes them away.
    let real = servers.lease
        || servers
            .addresses
            .iter()
            .any(|ip| !is_loopback(*ip) && !ctx.cluster.contains(ip));
    let (severity, summary) = dhclient_harm(ctx, bad, real, &mut evidence);
    let (severity, summary) = said_of_the_writer(nm, via_resolved, severity, summary);
    let mut finding = ctx.finding(id, severity, summary, evidence, fix);
    if unblocked || script_unknown {
        finding.status = crate::diagnose::FindingStatus::Unknown;
    }
    finding
}

/// The summary [`dhclient_harm`] gave, said of what writes the servers where that is not
/// dhclient-script: NetworkManager (at most a warning where it hands them to a resolver
/// of its own choosing, as its settings say), or the hooks that hand them to
/// systemd-resolved (`via_resolved`).
fn said_of_the_writer(
    nm: Option<NmLease>,
    via_resolved: bool,
    severity: Severity,
    summary: String,
) -> (Severity, String) {
    match nm {
        Some(NmLease::Elsewhere(why)) => (severity.min(Severity::Warning), why),
        Some(_) => (
            severity,
            summary
                .replacen("dhclient writes", "NetworkManager writes dhclient's", 1)
                .replacen("at every lease", "at every lease it brings", 1),
        ),
        None if via_resolved => (
            severity,
            summary
                .replacen("dhclient writes", "dhclient-script's hooks hand", 1)
                .replacen("into the host resolver", "to systemd-resolved", 1),
        ),
        None => (severity, summary),
    }
}

/// DNS-RESOLV-MANAGED-ELSEWHERE where the dhclient-script the dhclients run does not write
/// /etc/resolv.conf (`writes`, [`super::dhclient_script::writes`]: an enter hook, Red Hat's
/// PEERDNS=no): latent, the lines that say so after `lines`. Where that is not known, its
/// why joins `lines` and `unknown` is set; where it writes, the notes join `lines`.
fn script_latent(
    ctx: &Ctx,
    writes: Writes,
    bad: &[String],
    lines: &mut Vec<String>,
    fix: &str,
    unknown: &mut bool,
) -> Option<crate::diagnose::finding::Finding> {
    match writes {
        Writes::No(why) => {
            lines.extend(why);
            Some(ctx.finding(
                "DNS-RESOLV-MANAGED-ELSEWHERE",
                Severity::Info,
                format!(
                    "dhclient.conf would write {} into the host resolver, but dhclient-script does not write /etc/resolv.conf here: latent until it does",
                    bad.join(", ")
                ),
                std::mem::take(lines),
                fix.to_owned(),
            ))
        }
        Writes::Unknown(why) => {
            lines.extend(why);
            *unknown = true;
            None
        }
        Writes::Yes(notes) => {
            lines.extend(notes);
            None
        }
        Writes::Resolved(notes) => {
            lines.extend(notes);
            // The kubelet's file not known: taken as going through it.
            let through = resolveds(&ctx.facts.resolver.etc_resolv_conf)
                || ctx.facts.kubelet.pod_resolv_conf.as_ref().is_none_or(|f| {
                    crate::facts::node_facts::in_resolved_run_dir(
                        f.canonical.as_deref().unwrap_or(&f.path),
                    )
                });
            if through {
                return None;
            }
            lines.push(
                "neither /etc/resolv.conf nor the kubelet's resolv.conf goes through systemd-resolved"
                    .to_owned(),
            );
            Some(ctx.finding(
                "DNS-RESOLV-MANAGED-ELSEWHERE",
                Severity::Info,
                format!(
                    "dhclient.conf would hand {} to systemd-resolved, which neither the host resolver nor the kubelet's file goes through here: latent until one does",
                    bad.join(", ")
                ),
                std::mem::take(lines),
                fix.to_owned(),
            ))
        }
    }
}

/// Who hands out the leases where no dhclient reads `path`: a dhclient that reads another
/// file, systemd-networkd, NetworkManager's internal client, or nobody.
fn dhclient_elsewhere(facts: &crate::facts::NodeFacts, runs: &[DhclientRun], path: &str) -> String {
    // Ubuntu's netplan uses systemd-networkd, RHEL 8+ NetworkManager's internal client: the
    // line is latent until dhclient runs again.
    if !runs.is_empty() {
        // dhclient runs, but each reads another file: its -cf.
        let reads: Vec<String> = runs
            .iter()
            .map(|run| {
                let conf = match &run.command {
                    Ok(c) => c.conf.as_deref().unwrap_or("?"),
                    Err(_) => "?",
                };
                format!("pid {} reads {}", run.pid, crate::text::escape(conf))
            })
            .collect();
        return format!(
            "dhclient runs, but not with {path}: {} (-cf on its command line)",
            reads.join(", ")
        );
    }
    if facts.services.systemd_networkd == UnitState::Active {
        "systemd-networkd is the DHCP client"
    } else if facts.services.network_manager == UnitState::Active {
        "NetworkManager is active and no dhclient runs (its internal DHCP client)"
    } else {
        "no dhclient process runs"
    }
    .into()
}

/// The [`DhclientServers`] of `parsed` that hands a server on that `bad` refuses, with two
/// notes: why the top level's is picked though interface blocks set servers of their own
/// (the finding is then unknown: which interfaces dhclient serves is not known), and which
/// interfaces the `readers` serve, where their command lines say (then only those count:
/// an interface's block where it has one, else the top level; client/dhclient.c
/// @572032cb `main`, `interfaces_requested`). `None` where nothing served gets one.
fn dhclient_pick<'a>(
    parsed: &'a [DhclientServers],
    readers: &[&DhclientRun],
    path: &str,
    bad: impl Fn(&DhclientServers) -> bool,
) -> Option<(&'a DhclientServers, Option<String>, Option<String>)> {
    let blocks: Vec<String> = parsed
        .iter()
        .filter_map(|s| s.interface.as_deref())
        .map(|name| crate::text::escape(name).into_owned())
        .collect();
    let top = parsed.iter().find(|s| s.interface.is_none());
    let why = match served(readers) {
        Ok(names) if !readers.is_empty() => {
            let servers = names.iter().find_map(|name| {
                parsed
                    .iter()
                    .find(|s| s.interface.as_ref() == Some(name))
                    .or(top)
                    .filter(|s| bad(s))
            })?;
            let pids: Vec<String> = readers.iter().map(|r| r.pid.to_string()).collect();
            let serving = format!(
                "dhclient (pid {}) serves {} (its command line)",
                pids.join(", "),
                names
                    .iter()
                    .map(|n| crate::text::escape(n).into_owned())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            return Some((servers, None, Some(serving)));
        }
        Ok(_) => "no dhclient that reads it runs to say which it serves".to_owned(),
        Err(why) => why,
    };
    // The first interface block's that hands such a server on, else the top level's. A
    // block's statements run after the top level's for its interface, so where blocks set
    // servers of their own the top level's count only for an interface dhclient serves
    // without one: unknown, not a certain harm.
    let servers = parsed
        .iter()
        .filter(|s| s.interface.is_some())
        .chain(top)
        .find(|s| bad(s))?;
    let unblocked = (servers.interface.is_none() && !blocks.is_empty()).then(|| {
        format!(
            "interface blocks in {path} give {} servers of their own: the top-level lines count only for an interface dhclient serves without a block, and {why}",
            blocks.join(", ")
        )
    });
    Some((servers, unblocked, None))
}

/// DNS-RESOLV-MANAGED-ELSEWHERE where a running dhclient reads a file (its `-cf`) that the
/// gather did not read (busybox awk sees a command line only to its first NUL, a path with
/// a space is cut at it), or read only in part (over [`FILE_CAP`]), or a relative path:
/// what it writes is unknown. A missing file is no finding: dhclient then runs on its
/// built-in defaults (client/clparse.c `read_client_conf_file` @572032cb), nor is
/// /dev/null, which gives it no statement. A relative path is the directory dhclient was
/// started in joined to it: `main` reads the file (`read_client_conf`, client/dhclient.c
/// line 761 @572032cb) before `detach` changes to / (line 4715).
///
/// [`FILE_CAP`]: crate::facts::raw::FILE_CAP
fn dhclient_unread(
    ctx: &Ctx,
    path: &str,
    readers: &[&DhclientRun],
) -> Option<crate::diagnose::finding::Finding> {
    let file = ctx.facts.files.get(path);
    let state = file.map(|f| f.state);
    let how = if readers.is_empty() || path == "/dev/null" {
        return None;
    } else if file.is_some_and(|f| f.truncated) {
        format!(
            "which is larger than dnsfix reads (its first {} bytes)",
            crate::facts::raw::FILE_CAP
        )
    } else if !path.starts_with('/') {
        "a path relative to the directory dhclient was started in (it reads the file before it changes to /), which dnsfix cannot tell".to_owned()
    } else if DHCLIENT_DEFAULTS.contains(&path) || state == Some(FileState::Missing) {
        return None;
    } else {
        "which was not read".to_owned()
    };
    let pids: Vec<String> = readers.iter().map(|r| r.pid.to_string()).collect();
    let mut finding = ctx.finding(
        "DNS-RESOLV-MANAGED-ELSEWHERE",
        Severity::Warning,
        format!(
            "dhclient reads {} (-cf on its command line), {how}: whether it writes loopback or cluster servers into the host resolver at every lease is not known",
            crate::text::escape(path)
        ),
        vec![format!(
            "dhclient (pid {}) runs with -cf {}",
            pids.join(", "),
            crate::text::escape(path)
        )],
        format!(
            "see which domain-name-servers lines {} has (grep -n domain-name-servers), then check again",
            crate::text::escape(path)
        ),
    );
    finding.status = crate::diagnose::FindingStatus::Unknown;
    Some(finding)
}

/// DNS-RESOLV-MANAGED-ELSEWHERE for a regular /etc/resolv.conf NetworkManager writes: now
/// (it runs) or from its start at the next boot (stopped, enabled). Where it writes
/// systemd-resolved's stub there ([`nm_writes_stub`]) a conf.d global DNS is no fix: its
/// servers go to systemd-resolved and the file still gets 127.0.0.53 (nm-dns-manager.c
/// `update_dns` @1.22.0), so the fix names rc-manager=unmanaged or dns=default instead.
fn nm_resolv_finding(ctx: &Ctx) -> Option<crate::diagnose::finding::Finding> {
    let id = "DNS-RESOLV-MANAGED-ELSEWHERE";
    let facts = ctx.facts;
    let etc = &facts.resolver.etc_resolv_conf;
    let running = network_manager_manages_resolv(facts);
    let at_boot = running.is_none();
    let manager = running.or_else(|| super::network_manager_manages_resolv_at_boot(facts))?;
    let mut evidence = vec![
        format!(
            "/etc/resolv.conf is a regular file (sha256 {})",
            etc.sha256.as_deref().unwrap_or("?")
        ),
        manager,
    ];
    let when = if at_boot {
        "at its start at the next boot (stopped now, enabled)"
    } else {
        "at its next update"
    };
    let not_only = if at_boot {
        ", or keep NetworkManager off at boot too (systemctl disable NetworkManager), not only in /etc/resolv.conf"
    } else {
        ", not in /etc/resolv.conf"
    };
    if nm_writes_stub(facts) {
        // The node itself then asks systemd-resolved; pods that get the file ask their own
        // network namespace's 127.0.0.53, where nothing answers.
        let kubelet_reads = matches!(
            &facts.kubelet.resolv_conf,
            crate::facts::node_facts::Observed::Known(e) if e.value == "/etc/resolv.conf"
        );
        if kubelet_reads {
            evidence.push(
                "the kubelet hands /etc/resolv.conf to dnsPolicy: Default pods (its resolvConf)"
                    .into(),
            );
        }
        return Some(ctx.finding(
            id,
            if kubelet_reads {
                Severity::Warning
            } else {
                Severity::Info
            },
            format!("NetworkManager hands DNS to systemd-resolved and writes its local address, nameserver 127.0.0.53, over /etc/resolv.conf {when}: the servers the file lists now do not last"),
            evidence,
            format!("set rc-manager=unmanaged in the [main] section of a file in /etc/NetworkManager/conf.d/ to keep /etc/resolv.conf as written (or dns=default, and NetworkManager writes its connections' or [global-dns] servers there itself): [global-dns] servers alone go to systemd-resolved, and the file still gets 127.0.0.53{not_only}"),
        ));
    }
    let fix = format!(
        "make the change where NetworkManager reads it (a conf.d file with [global-dns] servers, or dns=none if the file is to be owned by hand){not_only}"
    );
    if at_boot {
        // At its start it writes its [global-dns] servers where conf.d sets them, else its
        // connections'. A file that already lists them stays as it is (info, as for a
        // running NetworkManager), which dnsfix's own fix (conf.d and the file) makes so.
        // Where what it writes then cannot be told (dns=dnsmasq writes 127.0.0.1), the
        // warning stands: only a confirmed match is info.
        let (severity, summary) = match nm_hand_edit(facts, true) {
            NmEdit::Differs(why) => {
                evidence.push(why);
                (
                    Severity::Warning,
                    "NetworkManager is stopped but starts at the next boot, and writes /etc/resolv.conf then with other servers than the file's: a change made in the file itself lasts only until the next reboot",
                )
            }
            NmEdit::Unknown => (
                Severity::Warning,
                "NetworkManager is stopped but starts at the next boot, and writes /etc/resolv.conf then: a change made in the file itself lasts only until the next reboot",
            ),
            NmEdit::Same => (
                Severity::Info,
                "NetworkManager is stopped but starts at the next boot, and writes /etc/resolv.conf then: a change made in the file itself lasts only until the next reboot",
            ),
        };
        return Some(ctx.finding(id, severity, summary.into(), evidence, fix));
    }
    // NetworkManager's default: it writes the file itself (rc-manager auto, then symlink,
    // writes a regular file: nm-dns-manager.c), so on its own that is how the node is meant
    // to be. A file whose servers are not the ones it generated (no-stub-resolv.conf,
    // written in the same update) was edited since, and the edit goes at its next update.
    let (severity, summary) = match nm_hand_edit(facts, false) {
        NmEdit::Differs(why) => {
            evidence.push(why);
            (
                Severity::Warning,
                "/etc/resolv.conf was edited after NetworkManager wrote it: the edit goes the next time NetworkManager writes it (at its start, or when its DNS settings change)",
            )
        }
        NmEdit::Same | NmEdit::Unknown => (
            Severity::Info,
            "NetworkManager writes /etc/resolv.conf: a change made in the file itself does not last",
        ),
    };
    Some(ctx.finding(id, severity, summary.into(), evidence, fix))
}

/// DNS-RESOLV-MANAGED-ELSEWHERE, unknown, for a regular /etc/resolv.conf where
/// NetworkManager (active, or stopped but enabled) hands DNS to systemd-resolved or dnsconfd
/// with `rc-manager` left to its build's default, and no plugin directory names its
/// version ([`NmDns::rc_manager_default_unknown`]): from 1.28 (`auto`, and RHEL 9's build)
/// it leaves the file alone, before 1.28 (`symlink`) and in RHEL 8's build it writes its
/// plugin's local address over it (nm-dns-manager.c `update_dns` @1.22.0). Which one is not
/// known, so neither is taken.
fn nm_version_unknown_finding(ctx: &Ctx) -> Option<crate::diagnose::finding::Finding> {
    use crate::facts::network_manager::resolv_conf_locked;
    let facts = ctx.facts;
    let etc = &facts.resolver.etc_resolv_conf;
    let nm = NmDns::read(&facts.files);
    let mode = nm.mode(links_to_resolved(etc));
    if !matches!(mode, DnsMode::SystemdResolved | DnsMode::Dnsconfd)
        || !nm.rc_manager_default_unknown()
        || resolv_conf_locked(&facts.raw).is_some()
    {
        return None;
    }
    let services = &facts.services;
    let runs = if services.network_manager == UnitState::Active {
        "NetworkManager is active".to_owned()
    } else if matches!(
        services.network_manager,
        UnitState::Inactive | UnitState::Failed
    ) && services.network_manager_starts_at_boot() == Some(true)
    {
        format!(
            "NetworkManager is {} (systemctl is-active) but enabled: it starts at the next boot",
            services.network_manager.as_str()
        )
    } else {
        return None;
    };
    let dns = nm.dns.as_ref().map_or_else(
        || "dns unset".to_owned(),
        |d| format!("dns={} at {}", crate::text::escape(&d.value), d.source.at()),
    );
    let mut finding = ctx.finding(
        "DNS-RESOLV-MANAGED-ELSEWHERE",
        Severity::Warning,
        format!(
            "NetworkManager hands DNS to {} with rc-manager left to its build's default, and its version was not found: from 1.28 it leaves /etc/resolv.conf alone, before 1.28 (and in RHEL 8's build) it writes nameserver {} over it",
            mode.as_str(),
            if mode == DnsMode::SystemdResolved { "127.0.0.53" } else { "its plugin's local address" }
        ),
        vec![
            format!(
                "/etc/resolv.conf is a regular file (sha256 {})",
                etc.sha256.as_deref().unwrap_or("?")
            ),
            runs,
            format!("{dns}; no rc-manager set (or a word NetworkManager does not know)"),
            "no plugin directory names NetworkManager's version (libdir/NetworkManager/VERSION)".into(),
        ],
        "see NetworkManager's version (NetworkManager --version) and check again, or set rc-manager in the [main] section of a file in /etc/NetworkManager/conf.d/ (unmanaged keeps /etc/resolv.conf as written)".into(),
    );
    finding.status = crate::diagnose::FindingStatus::Unknown;
    Some(finding)
}

/// DNS-RESOLV-MANAGED-ELSEWHERE for a plain /etc/resolv.conf that dhcpcd, openresolv,
/// udhcpc or SUSE's netconfig writes anew ([`resolv_writer`]): how such a node is meant to
/// be, info; a warning where the file shows it was changed since (the program's header
/// below the first line, a line udhcpc never writes), which goes at its next write.
/// netconfig leaves a plain file changed since alone (its checksum), so there the change
/// lasts but the node stops getting the servers netconfig is given: info, saying so; the
/// file a link leads to it writes anew like the others.
///
/// [`resolv_writer`]: crate::facts::resolv_writer::resolv_writer
fn writer_finding(ctx: &Ctx) -> Option<crate::diagnose::finding::Finding> {
    use crate::facts::resolv_writer::{Writer, resolv_writer};
    let found = resolv_writer(ctx.facts)?;
    let (name, when) = (found.writer.name(), found.writer.when());
    let sha = ctx.facts.resolver.etc_resolv_conf.sha256.as_deref();
    let mut evidence = Vec::new();
    if found.linked.is_none() {
        evidence.push(format!(
            "/etc/resolv.conf is a regular file (sha256 {})",
            sha.unwrap_or("?")
        ));
    }
    evidence.extend(found.evidence);
    let (severity, summary) = match (found.writer, found.edited) {
        (Writer::Netconfig, _) if found.linked.is_none() => (
            Severity::Info,
            "netconfig wrote /etc/resolv.conf: a file changed since it leaves alone (and stops giving it the servers it is handed) until `netconfig update -f` writes its own over the change".to_owned(),
        ),
        (_, Some(why)) => {
            evidence.push(why);
            (
                Severity::Warning,
                format!("/etc/resolv.conf was edited after {name} wrote it: the edit goes the next time {name} writes it ({when})"),
            )
        }
        (_, None) => (
            Severity::Info,
            format!("{name} writes /etc/resolv.conf {when}: a change made in the file itself does not last"),
        ),
    };
    Some(ctx.finding(
        "DNS-RESOLV-MANAGED-ELSEWHERE",
        severity,
        summary,
        evidence,
        format!("{}, not in /etc/resolv.conf", found.writer.fix()),
    ))
}

pub(super) fn resolv_managed_elsewhere(ctx: &Ctx) -> RuleOutcome {
    let facts = ctx.facts;
    let mut findings = Vec::new();
    let etc = &facts.resolver.etc_resolv_conf;
    if etc.state == FileState::Present
        && etc.symlink_target.is_none()
        && let Some(finding) = nm_resolv_finding(ctx).or_else(|| nm_version_unknown_finding(ctx))
    {
        findings.push(finding);
    }
    findings.extend(writer_finding(ctx));
    let runs = DhclientRun::all(facts);
    for path in dhclient_confs(&runs) {
        if let Some(finding) = dhclient_finding(ctx, &path, &runs) {
            findings.push(finding);
        }
    }
    if findings.is_empty() {
        RuleOutcome::Pass
    } else {
        RuleOutcome::Findings(findings)
    }
}
