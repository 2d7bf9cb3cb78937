//! How the program that owns the node's own resolver takes DNS servers, as the fixes of
//! DNS-HOST-RESOLVER-DOWN and DNS-CLUSTER-SELF-FORWARD say it: the step for the owner
//! dnsfix found ([`super::host_servers`]), with the servers where they are known
//! ([`real_servers`]). Text only, from the facts: it judges nothing.
//!
//! Sources: systemd man/resolved.conf.xml @01a1beb1 (`DNS=` in `[Resolve]`, "system DNS
//! servers", drop-ins in /etc/systemd/resolved.conf.d/*.conf); NetworkManager
//! man/NetworkManager.conf.xml @017b7c2b (`[global-dns]` searches and options, `[global-dns-domain-*]` servers, "A default domain
//! section is mandatory"; the configuration read again at SIGHUP, `systemctl reload`) and
//! nm-settings-nmcli(5) (`ipv4.dns`, `ipv6.dns`); canonical/netplan
//! doc/netplan-yaml.md @01c7597e (`nameservers` (mapping): `addresses:` under an interface,
//! "for manual address configuration"); Kubespray roles/kubernetes/preinstall/tasks/
//! 0063-networkmanager-dns.yml (`[global-dns-domain-*]` servers from `nameserverentries`
//! in /etc/NetworkManager/conf.d/dns.conf); the other writers as
//! [`crate::facts::resolv_writer`] cites them.

use super::Ctx;
use crate::facts::network_manager::{DnsMode, NmDns, links_to_resolved};
use crate::facts::node_facts::{FlavourKind, ResolvFile, UnitState};
use crate::facts::raw::FileState;
use crate::facts::resolv_conf::real_upstreams;
use crate::facts::resolv_writer::{NETCONFIG_RESOLV_CONF, Writer, resolv_writer};

/// The real servers the node is known to use, for a file of its own, and where they come
/// from: the inventory's `upstream_dns_servers`, else its `nameservers`, else
/// systemd-resolved's list of them (its uplink file, while it is in /run), else the
/// kubelet's file for pods. Neither loopback nor the cluster's own DNS; each once.
pub(super) fn real_servers(ctx: &Ctx) -> Option<(String, Vec<String>)> {
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
            // Not the file k3s/RKE2 generate when no host file passes their check: its
            // 8.8.8.8 is their guess, not a server of the node's.
            let kubelet = &ctx.facts.kubelet;
            let file = kubelet.pod_resolv_conf.as_ref();
            from_file(
                file.filter(|_| !kubelet.on_rancher_fallback()),
                "the kubelet's file for pods",
            )
        })
}

/// `servers` joined by `sep`, for a command or a file; `ADDR`, twice, where none is known.
fn joined(servers: &[String], sep: &str) -> String {
    if servers.is_empty() {
        format!("ADDR{sep}ADDR")
    } else {
        servers.join(sep)
    }
}

/// Where systemd-resolved takes servers, for a fix that gives it some: a drop-in of its
/// own (its directory made first: Debian and Ubuntu ship none), and the per-link servers
/// of the program that hands it a link's DNS on this node: NetworkManager where it runs and
/// hands DNS to systemd-resolved (its effective `dns`, [`NmDns`]), systemd-networkd where
/// it runs (netplan's `nameservers` on Ubuntu, where netplan writes its .network files).
pub(super) fn give_resolved(ctx: &Ctx, servers: &[String]) -> String {
    let facts = ctx.facts;
    let mut ways = vec![format!(
        "a drop-in of its own (mkdir -p /etc/systemd/resolved.conf.d; printf '[Resolve]\\nDNS={}\\n' > /etc/systemd/resolved.conf.d/dns.conf; systemctl restart systemd-resolved)",
        joined(servers, " ")
    )];
    let nm = NmDns::read(&facts.files);
    let resolved_link = links_to_resolved(&facts.resolver.etc_resolv_conf);
    if facts.services.network_manager == UnitState::Active
        && nm.mode(resolved_link) == DnsMode::SystemdResolved
    {
        ways.push(format!(
            "NetworkManager's connection, whose servers it hands to systemd-resolved here ({})",
            nm_connection(servers)
        ));
    }
    if facts.services.systemd_networkd == UnitState::Active {
        ways.push(format!(
            "the interface's servers in systemd-networkd, which hands them to systemd-resolved (with netplan, whose files are /run/systemd/network/10-netplan-*: `nameservers: {{addresses: [{}]}}` under the interface in /etc/netplan/, then netplan apply; without it: DNS={} in the [Network] section of the interface's .network file, then networkctl reload)",
            joined(servers, ", "),
            joined(servers, " ")
        ));
    }
    ways.join("; or ")
}

/// The servers of one NetworkManager connection (IPv4 and IPv6 apart), brought up again.
fn nm_connection(servers: &[String]) -> String {
    let (v6, v4): (Vec<String>, Vec<String>) =
        servers.iter().cloned().partition(|s| s.contains(':'));
    let mut set = Vec::new();
    if !v4.is_empty() || v6.is_empty() {
        set.push(format!("ipv4.dns \"{}\"", joined(&v4, " ")));
    }
    if !v6.is_empty() {
        set.push(format!("ipv6.dns \"{}\"", v6.join(" ")));
    }
    format!(
        "nmcli connection modify CON {}, then nmcli connection up CON (nmcli connection show --active names CON)",
        set.join(" ")
    )
}

/// NetworkManager's global DNS for every connection, `servers` in its default domain
/// section, and when it reads it (`then`).
fn nm_global(servers: &[String], then: &str) -> String {
    format!(
        "global DNS, `[global-dns-domain-*]` `servers={}` in a file under /etc/NetworkManager/conf.d/ ({then}; it replaces every connection's servers, search domains and options: keep those in `[global-dns]` `searches=` and `options=`)",
        joined(servers, ",")
    )
}

/// A file of the node's own with `servers`: lines added to a file that has none, else a
/// new file (the directory in its place removed first).
fn own_file(etc: &ResolvFile, servers: &[String]) -> String {
    let printf = format!("printf 'nameserver %s\\n' {}", joined(servers, " "));
    match etc.state {
        FileState::Present => {
            format!(
                "add the real servers to /etc/resolv.conf, its other lines kept: {printf} >> /etc/resolv.conf"
            )
        }
        FileState::Directory => {
            format!(
                "replace the directory with a file that lists the real servers: rm -r /etc/resolv.conf; {printf} > /etc/resolv.conf"
            )
        }
        _ => format!("write /etc/resolv.conf with the real servers: {printf} > /etc/resolv.conf"),
    }
}

/// DNS-HOST-RESOLVER-DOWN's fix where /etc/resolv.conf is not systemd-resolved's (missing,
/// a directory, or a file with no nameserver line), by the program that writes it
/// ([`super::host_servers`]'s `via`): NetworkManager, now or from its next start, from its
/// connections' servers; dhcpcd, openresolv, udhcpc or netconfig from their own settings
/// ([`Writer::fix`]); another program's file it links to; or nothing, where the file is
/// the administrator's. `None` for another owner.
pub(super) fn owner_fix(ctx: &Ctx, servers: &[String]) -> Option<String> {
    let facts = ctx.facts;
    let etc = &facts.resolver.etc_resolv_conf;
    let list = if servers.is_empty() {
        String::new()
    } else {
        format!(" ({})", servers.join(", "))
    };
    let fix = match super::host_servers(facts).via {
        "networkmanager" if etc.state == FileState::Present => format!(
            "NetworkManager writes /etc/resolv.conf here from its connections' servers, and they give none: give it the real servers{list}, on its connection, {}; or {}",
            nm_connection(servers),
            nm_global(servers, "then systemctl reload NetworkManager")
        ),
        "networkmanager" => format!(
            "{}systemctl reload NetworkManager: it writes /etc/resolv.conf here from its connections' servers (where they give none, give it the real servers{list}: {}; or {})",
            if etc.state == FileState::Directory {
                "rm -r /etc/resolv.conf (a directory); "
            } else {
                ""
            },
            nm_connection(servers),
            nm_global(servers, "then systemctl reload NetworkManager")
        ),
        "networkmanager_at_boot" => format!(
            "{}; NetworkManager, stopped now but enabled, writes the file anew at its next start from its connections' servers: give it the real servers for then, {}",
            own_file(etc, servers),
            nm_global(servers, "read at its start")
        ),
        "other" => other_fix(etc, servers, &list),
        "file" => format!(
            "{} (nothing rewrites it here){}",
            own_file(etc, servers),
            dhclient_note(ctx, servers)
        ),
        via => {
            let w = resolv_writer(facts).filter(|w| w.writer.name() == via)?;
            writer_fix(w.writer, servers)
        }
    };
    Some(fix)
}

/// What `writer` does with /etc/resolv.conf and where it takes servers ([`Writer::fix`]),
/// with `servers` in place of its `ADDR ADDR` where they are known.
fn writer_fix(writer: Writer, servers: &[String]) -> String {
    let fix = writer.fix();
    let fix = if servers.is_empty() {
        fix.to_owned()
    } else {
        fix.replace("ADDR ADDR", &servers.join(" "))
    };
    format!(
        "{} writes /etc/resolv.conf here {}: {fix}",
        writer.name(),
        writer.when()
    )
}

/// /etc/resolv.conf links to another program's file: that program's servers (Debian's
/// resolvconf, /run/resolvconf/resolv.conf: resolvconf(8) `base`; netconfig's
/// /run/netconfig/resolv.conf), or a file of the node's own.
fn other_fix(etc: &ResolvFile, servers: &[String], list: &str) -> String {
    let target = etc.symlink_target.as_deref().unwrap_or_default();
    let path = etc.canonical.as_deref().unwrap_or(target);
    let whose = if [target, path].contains(&NETCONFIG_RESOLV_CONF) {
        format!(": {}", writer_fix(Writer::Netconfig, servers))
    } else if [target, path]
        .iter()
        .any(|p| p.contains("/run/resolvconf/"))
    {
        format!(
            " (Debian's resolvconf: `nameserver` lines in /etc/resolvconf/resolv.conf.d/base, then resolvconf -u: printf 'nameserver %s\\n' {} >> /etc/resolvconf/resolv.conf.d/base; resolvconf -u)",
            joined(servers, " ")
        )
    } else {
        String::new()
    };
    format!(
        "/etc/resolv.conf links to {}, another program's file: give that program the real servers{list}{whose}; or make /etc/resolv.conf a file of its own: rm /etc/resolv.conf; printf 'nameserver %s\\n' {} > /etc/resolv.conf",
        crate::text::escape(target),
        joined(servers, " ")
    )
}

/// Where dhclient runs (it writes /etc/resolv.conf anew at every lease, isc-dhcp
/// client/scripts/linux `make_resolv_conf`): the servers go into its dhclient.conf too.
fn dhclient_note(ctx: &Ctx, servers: &[String]) -> String {
    if !ctx.facts.services.dhclient {
        return String::new();
    }
    format!(
        "; dhclient runs here and writes the file anew at every lease: put the servers in its dhclient.conf too (`prepend domain-name-servers {};`)",
        joined(servers, ", ")
    )
}

/// DNS-CLUSTER-SELF-FORWARD's fix where NetworkManager writes the plain /etc/resolv.conf
/// (`via` `networkmanager`, or `networkmanager_at_boot` where it does so from its next
/// start), whose servers are the cluster addresses `cluster`: what host-upstream-dns writes
/// (templates/networkmanager-upstream.conf.j2: global DNS, the cluster addresses and then
/// the upstreams, three at most) and the same by hand. `None` for another owner.
pub(super) fn nm_self_forward_fix(ctx: &Ctx, via: &str, cluster: &[String]) -> Option<String> {
    let (now, then) = match via {
        "networkmanager" => (
            "writes /etc/resolv.conf here from its connections' servers, so servers written into the file go at its next update",
            ", then systemctl reload NetworkManager",
        ),
        "networkmanager_at_boot" => (
            "is stopped but enabled, and writes /etc/resolv.conf anew from its connections' servers at its next start",
            " (read at its next start; the playbook writes /etc/resolv.conf itself for now)",
        ),
        _ => return None,
    };
    let real = real_servers(ctx).map(|(_, s)| s).unwrap_or_default();
    let real = if real.is_empty() {
        vec!["ADDR".to_owned()]
    } else {
        real
    };
    let servers: Vec<String> = cluster.iter().chain(&real).take(3).cloned().collect();
    let kubespray = if ctx.facts.flavour.kind == FlavourKind::Kubespray {
        "; on Kubespray set the inventory's nameservers too: its next run writes `servers=` the cluster address and those into /etc/NetworkManager/conf.d/dns.conf (0063-networkmanager-dns.yml), which a zz- file, read after it, overrides"
    } else {
        ""
    };
    Some(format!(
        "NetworkManager {now}: give it the real servers after the cluster address. dnsfix apply does (playbook host-upstream-dns, with the inventory's upstream_dns_servers, else its nameservers, else the real servers the node lists): NetworkManager's global DNS in /etc/NetworkManager/conf.d/zz-dnsfix-upstream.conf, `[global-dns-domain-*]` `servers=` the cluster address then those servers, three at most, and `[global-dns]` `searches=` and `options=` as /etc/resolv.conf has them (global DNS replaces the connections' own){then}. By hand the same file: `servers={}`{then}{kubespray}",
        servers.join(",")
    ))
}
