//! The node's own resolver as one answer: which program writes /etc/resolv.conf and which
//! file lists the servers the node's own lookups reach. DNS-CLUSTER-SELF-FORWARD judges the
//! host's resolver by that file and host-upstream-dns (`host_resolver` in the playbooks'
//! context) changes it through that program, so both take it from here and never judge
//! two different files. Also whether a file names only systemd-resolved's stub and
//! something answers there ([`stub_only`], [`stub_answered`]), which DNS-HOST-RESOLVER-DOWN
//! asks too. Read from the facts only.

use std::net::IpAddr;

use crate::facts::NodeFacts;
use crate::facts::node_facts::{ResolvFile, UnitState};
use crate::facts::resolv_conf::ResolvConf;
use crate::facts::resolv_writer::Writer;

/// Who writes /etc/resolv.conf ([`HostServers::via`]), each by the name the playbooks
/// compare `host_resolver.via` with ([`Via::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    /// The file points into systemd-resolved, or another file names only its stub while it
    /// answers there and NetworkManager does not write it, or writes the stub again where
    /// systemd-resolved starts at boot.
    Resolved,
    /// NetworkManager hands DNS to systemd-resolved and writes its stub over a plain file.
    NetworkManagerStub,
    /// A running NetworkManager writes the plain file from its connections' servers.
    NetworkManager,
    /// NetworkManager, stopped now but enabled, writes it at its next start.
    NetworkManagerAtBoot,
    /// dhcpcd, openresolv, udhcpc or netconfig writes it anew.
    Writer(Writer),
    /// A link to another tool's file.
    Other,
    /// A plain file nothing rewrites.
    File,
}

impl Via {
    /// Every owner, a [`Writer`] for each program.
    #[cfg(test)]
    pub(crate) const ALL: [Via; 10] = [
        Via::Resolved,
        Via::NetworkManagerStub,
        Via::NetworkManager,
        Via::NetworkManagerAtBoot,
        Via::Writer(Writer::Dhcpcd),
        Via::Writer(Writer::Openresolv),
        Via::Writer(Writer::Udhcpc),
        Via::Writer(Writer::Netconfig),
        Via::Other,
        Via::File,
    ];

    /// Its place in [`Via::ALL`]: a variant added to the enum does not compile here until
    /// it is given one, which says to list it there too (the test of `ALL` checks that each
    /// owner listed is at its place, not that every owner is listed).
    #[cfg(test)]
    pub(crate) const fn index(self) -> usize {
        match self {
            Via::Resolved => 0,
            Via::NetworkManagerStub => 1,
            Via::NetworkManager => 2,
            Via::NetworkManagerAtBoot => 3,
            Via::Writer(Writer::Dhcpcd) => 4,
            Via::Writer(Writer::Openresolv) => 5,
            Via::Writer(Writer::Udhcpc) => 6,
            Via::Writer(Writer::Netconfig) => 7,
            Via::Other => 8,
            Via::File => 9,
        }
    }

    /// The name the playbooks and the plan's context know it by (`host_resolver.via`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Via::Resolved => "resolved",
            Via::NetworkManagerStub => "networkmanager_stub",
            Via::NetworkManager => "networkmanager",
            Via::NetworkManagerAtBoot => "networkmanager_at_boot",
            Via::Writer(w) => w.name(),
            Via::Other => "other",
            Via::File => "file",
        }
    }
}

/// Which program writes /etc/resolv.conf, and the file whose servers the node asks.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HostServers<'a> {
    /// Who writes /etc/resolv.conf ([`Via`]).
    pub via: Via,
    /// The file listing the servers the node's own lookups reach: systemd-resolved's uplink
    /// file where /etc/resolv.conf links to it or names only its stub and systemd-resolved
    /// runs, unless the socket tables show nothing answering at the stub; /etc/resolv.conf
    /// itself elsewhere.
    pub file: &'a ResolvFile,
    /// /etc/resolv.conf is no link into systemd-resolved's files but names only its stub
    /// (a copy of it, NetworkManager's, resolvconf's): `file` is the uplink file because of
    /// it.
    pub through_stub: bool,
}

/// The node's own resolver ([`HostServers`]). A plain /etc/resolv.conf is not
/// systemd-resolved's just because it runs; one that names only its stub is, whoever wrote
/// it, as long as something may answer there: where the socket tables show nothing on port
/// 53 of the stub address or of every address (`DNSStubListener=no`), the node's lookups
/// reach no server (DNS-HOST-RESOLVER-DOWN) and the file judged is /etc/resolv.conf.
pub(crate) fn host_servers(facts: &NodeFacts) -> HostServers<'_> {
    let r = &facts.resolver;
    let etc = &r.etc_resolv_conf;
    let active = facts.services.systemd_resolved == UnitState::Active;
    let link_mode = matches!(r.resolved_mode.as_str(), "stub" | "static");
    let names_stub = link_mode || etc.parsed.as_ref().is_some_and(stub_only);
    // Not where the socket tables show nothing answering there (DNSStubListener=no): the
    // node's lookups reach no server then.
    let answered = etc.parsed.as_ref().and_then(|p| stub_answered(facts, p));
    let reaches_resolved =
        active && ((names_stub && answered != Some(false)) || r.resolved_mode == "uplink");
    let (file, through_stub) = if reaches_resolved {
        let linked = link_mode || r.resolved_mode == "uplink";
        (&r.systemd_uplink, !linked)
    } else {
        (etc, false)
    };
    HostServers {
        via: writer_of(facts, reaches_resolved),
        file,
        through_stub,
    }
}

/// Who writes /etc/resolv.conf (see [`HostServers::via`]); `reaches_resolved`: the node's
/// lookups reach systemd-resolved's servers now.
fn writer_of(facts: &NodeFacts, reaches_resolved: bool) -> Via {
    let r = &facts.resolver;
    let etc = &r.etc_resolv_conf;
    let plain = etc.symlink_target.is_none();
    let nm_now = super::network_manager_manages_resolv(facts).is_some();
    let nm_at_boot = super::network_manager_manages_resolv_at_boot(facts).is_some();
    let nm_link = etc
        .canonical
        .as_deref()
        .is_some_and(|c| c.starts_with("/run/NetworkManager/"));
    if facts.services.systemd_resolved == UnitState::Active
        && matches!(r.resolved_mode.as_str(), "stub" | "static" | "uplink")
    {
        Via::Resolved
    } else if (nm_now || nm_at_boot) && plain && super::network_manager_writes_resolved_stub(facts)
    {
        // Where it wrote the stub already and systemd-resolved starts at boot, a drop-in
        // gives the node its servers for good: NetworkManager writes the stub again.
        match (reaches_resolved, facts.services.resolved_starts_at_boot()) {
            (true, Some(true)) => Via::Resolved,
            _ => Via::NetworkManagerStub,
        }
    } else if nm_now && (plain || nm_link) {
        Via::NetworkManager
    } else if nm_at_boot && plain {
        Via::NetworkManagerAtBoot
    } else if reaches_resolved {
        // A file of another kind that names only the stub (a copy of it, resolvconf's on
        // Ubuntu 18.04): the node asks systemd-resolved all the same.
        Via::Resolved
    } else if let Some(w) = crate::facts::resolv_writer::resolv_writer(facts) {
        // dhcpcd, openresolv, udhcpc or netconfig writes the plain file anew.
        Via::Writer(w.writer)
    } else if !plain {
        Via::Other
    } else {
        Via::File
    }
}

/// systemd-resolved's stub listeners: 127.0.0.53, and 127.0.0.54 (its proxy stub, systemd
/// 251 and later). On Linux a DNS server bound to port 53 on all addresses (0.0.0.0:53)
/// answers there too.
const RESOLVED_STUBS: [IpAddr; 2] = [
    IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 53)),
    IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 54)),
];

/// Every nameserver of `p` is systemd-resolved's stub (and there is one).
pub(super) fn stub_only(p: &ResolvConf) -> bool {
    !p.nameservers.is_empty()
        && p.nameservers
            .iter()
            .all(|n| n.ip.is_some_and(|ip| RESOLVED_STUBS.contains(&ip)))
}

/// Whether anything answers on the stub addresses `p` lists (/proc/net/udp: a server on
/// one of them, or on every address, [`NodeFacts::dns_answers_on`]); `None` where the
/// socket tables were not read.
///
/// [`NodeFacts::dns_answers_on`]: crate::facts::NodeFacts::dns_answers_on
pub(super) fn stub_answered(facts: &NodeFacts, p: &ResolvConf) -> Option<bool> {
    facts.dns_answers_on(p.nameservers.iter().filter_map(|n| match n.ip {
        Some(IpAddr::V4(v4)) => Some(v4),
        _ => None,
    }))
}
