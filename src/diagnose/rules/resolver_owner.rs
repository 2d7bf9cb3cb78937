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

use super::dhclient_run::DhclientRun;
use super::dhclient_script::Writes;
use super::{Ctx, Via};
use crate::facts::network_manager::{DnsMode, NmDns, links_to_resolved};
use crate::facts::node_facts::{FlavourKind, ResolvFile, UnitState};
use crate::facts::raw::FileState;
use crate::facts::resolv_writer::{NETCONFIG_RESOLV_CONF, Writer};

/// The real servers the node is known to use, for a file of its own, and where they come
/// from, as the evidence says it: the servers host-upstream-dns writes, in its order
/// ([`super::upstreams`], the playbooks' `upstreams`): the inventory's
/// `upstream_dns_servers`, else its `nameservers`, else those of the kubelet's file for
/// pods, of /etc/resolv.conf, of systemd-resolved's list of them (its uplink file), of
/// NetworkManager's. Neither loopback nor the cluster's own DNS; each once.
pub(super) fn real_servers(ctx: &Ctx) -> Option<(String, Vec<String>)> {
    let own = super::kubelet_own_servers(ctx.facts, &ctx.cluster);
    super::upstreams(ctx.host, ctx.facts, &ctx.cluster, &own)
        .map(|(servers, from)| (from.described(), servers))
}

/// `servers` joined by `sep`, for a command or a file; `<ADDR>`, twice, where none is known:
/// unquoted, a syntax error to the shell (`> <ADDR`), so a line pasted as it is runs none
/// of its commands.
fn joined(servers: &[String], sep: &str) -> String {
    if servers.is_empty() {
        format!("<ADDR>{sep}<ADDR>")
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
        "a drop-in of its own (mkdir -p /etc/systemd/resolved.conf.d; printf '[Resolve]\\nDNS=%s\\n' {} > /etc/systemd/resolved.conf.d/zz-dnsfix-upstream.conf; systemctl restart systemd-resolved)",
        if servers.is_empty() {
            joined(servers, " ")
        } else {
            format!("'{}'", servers.join(" "))
        }
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

/// The servers of one NetworkManager connection (IPv4 and IPv6 apart), applied to its device
/// with `nmcli device reapply`. NetworkManager/NetworkManager src/core/devices/nm-device.c
/// (1.40.0 @5d4802f7, and 355bc902): `check_and_reapply_connection` diffs the profile
/// against the applied connection and asks `can_reapply_change` of each changed setting,
/// which takes every change to `ipv4` and `ipv6` (`ipv4.dns`, `ipv6.dns` among them), and
/// refuses a device that is not activated ("Device is not activated") and a change to most
/// other settings ("Can't reapply any changes to '%s' setting"); the device stays
/// activated and its IP configuration is applied again. From 1.36
/// (`activate_stage3_ip_config`: `_cleanup_ip_pre(..., CLEANUP_TYPE_DECONFIGURE, TRUE)`,
/// whose `_dev_ipdhcpx_cleanup` stops the DHCP client) to 1.40 that restarts DHCP on a
/// DHCP connection, its address removed until the new lease comes (commit 61e1027c
/// "device: preserve the DHCP lease during reapply", first in 1.42; 1.40.18 has it not);
/// up to 1.34 `nm_device_reactivate_ip_config` restarted it only where the method changed.
/// nmcli's `device reapply` passes no connection, so the profile as modified is applied
/// (src/nmcli/devices.c `do_device_reapply`, `nm_device_reapply_async(device, NULL, 0, 0,
/// ...)`; nmcli(1): "Attempt to update device with changes to the currently active
/// connection made since it was last applied"). `GENERAL.DEVICES` is a field of an active connection's
/// `connection show` (src/nmcli/connections.c `metagen_con_active_general`, "DEVICES").
/// `connection up` on the active connection deactivates the device first: at
/// DISCONNECTED `nm_device_cleanup` with `CLEANUP_TYPE_DECONFIGURE` takes out "any entries
/// in the routing table and any IP address the device had", and activation takes DHCP
/// anew, so a node reached over that link may be lost: it is only the fallback.
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
        "nmcli connection modify CON {}, then nmcli device reapply IFACE (nmcli connection show --active names CON, nmcli -g GENERAL.DEVICES connection show CON its IFACE), which applies them without deactivating the device (NetworkManager 1.36 to 1.40 restart DHCP on a DHCP connection and remove its address until the new lease comes: from a console there); only where reapply refuses (a device not activated, or other changes to the connection it cannot apply: \"Can't reapply any changes to 'SETTING' setting\"), nmcli connection up CON, which deactivates the device, removing its addresses and routes, and activates it again (DHCP anew: a node reached over it may be lost)",
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

/// A command that ends `file` with a newline where its last line has none, so that lines
/// appended after it start lines of their own (`$(tail -c1 FILE)` is empty for a file that
/// ends with one, or is empty).
pub(super) fn newline_at_end(file: &str) -> String {
    format!("[ -z \"$(tail -c1 {file})\" ] || echo >> {file}; ")
}

/// Removing the directory in the place of /etc/resolv.conf: looked at first (a bind mount,
/// files in it), then `rmdir`, which refuses one that is not empty or is mounted.
const RMDIR: &str = "look at it first (findmnt /etc/resolv.conf; ls -la /etc/resolv.conf), then rmdir /etc/resolv.conf (it refuses a directory that is not empty or is a mount point)";

/// A file of the node's own with `servers`: lines added to a file that has none, else a
/// new file (the directory in its place removed first).
fn own_file(etc: &ResolvFile, servers: &[String]) -> String {
    let printf = format!("printf 'nameserver %s\\n' {}", joined(servers, " "));
    match etc.state {
        FileState::Present => {
            format!(
                "add the real servers to /etc/resolv.conf, its other lines kept: {}{printf} >> /etc/resolv.conf",
                newline_at_end("/etc/resolv.conf")
            )
        }
        FileState::Directory => {
            format!(
                "replace the directory with a file that lists the real servers: {RMDIR}; {printf} > /etc/resolv.conf"
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
        Via::NetworkManager if etc.state == FileState::Present => format!(
            "NetworkManager writes /etc/resolv.conf here from its connections' servers, and they give none: give it the real servers{list}, on its connection, {}; or {}",
            nm_connection(servers),
            nm_global(servers, "then systemctl reload NetworkManager")
        ),
        Via::NetworkManager => format!(
            "{}systemctl reload NetworkManager: it writes /etc/resolv.conf here from its connections' servers (where they give none, give it the real servers{list}: {}; or {})",
            if etc.state == FileState::Directory {
                format!("/etc/resolv.conf is a directory: {RMDIR}; ")
            } else {
                String::new()
            },
            nm_connection(servers),
            nm_global(servers, "then systemctl reload NetworkManager")
        ),
        Via::NetworkManagerAtBoot => format!(
            "{}; NetworkManager, stopped now but enabled, writes the file anew at its next start from its connections' servers: give it the real servers for then, {}",
            own_file(etc, servers),
            nm_global(servers, "read at its start")
        ),
        Via::Other => other_fix(etc, servers, &list),
        Via::File => {
            let unlock = match crate::facts::network_manager::resolv_conf_locked(&facts.raw) {
                Some(flags) => format!(
                    "it is locked (lsattr: {}): chattr -i -a /etc/resolv.conf first, and set the flag it had again after (chattr +i, or +a); ",
                    crate::text::escape(&flags)
                ),
                None => String::new(),
            };
            match dhclient_note(ctx, servers) {
                Some(note) => format!("{unlock}{}; {note}", own_file(etc, servers)),
                None => format!(
                    "{unlock}{} (nothing rewrites it here)",
                    own_file(etc, servers)
                ),
            }
        }
        Via::Writer(writer) => writer_fix(writer, servers),
        Via::Resolved | Via::NetworkManagerStub => return None,
    };
    Some(fix)
}

/// What `writer` does with /etc/resolv.conf and where it takes servers ([`Writer::fix`]),
/// with `servers` in place of its `ADDR ADDR` (`<ADDR> <ADDR>` where none is known).
fn writer_fix(writer: Writer, servers: &[String]) -> String {
    let fix = writer.fix().replace("ADDR ADDR", &joined(servers, " "));
    format!(
        "{} writes /etc/resolv.conf here {}: {fix}",
        writer.name(),
        writer.when()
    )
}

/// Debian resolvconf's file of lines it puts into every resolv.conf it writes (resolvconf(8)).
const BASE: &str = "/etc/resolvconf/resolv.conf.d/base";

/// /etc/resolv.conf links to another program's file: that program's servers (Debian's
/// resolvconf, /run/resolvconf/resolv.conf, or netconfig's /run/netconfig/resolv.conf), or
/// a file of the node's own.
///
/// Debian resolvconf 1.91+nmu1 (salsa.debian.org debian/resolvconf, as mirrored in
/// pexip/os-resolvconf @593d7f18): etc/resolvconf/update.d/libc writes
/// /run/resolvconf/resolv.conf from the interfaces' records and then `base`
/// (`RSLVCNFFILES`), keeping three nameservers at most (`uniquify_nameserver_list`, none
/// after a loopback one). bin/resolvconf runs it at `-u` only where
/// /run/resolvconf/enable-updates exists; otherwise `-u` only touches
/// /run/resolvconf/postponed-update, and `--enable-updates` runs the update where that
/// flag is there. debian/resolvconf.service has `ExecStart=/sbin/resolvconf
/// --enable-updates` and `ExecStop=/sbin/resolvconf --disable-updates`, which removes the
/// postponed flag: a restart writes nothing (so in 1.87 and 1.91+nmu1, as read; 1.76.1's
/// unit touched the flag in an `ExecStartPre`; debian/resolvconf.tmpfiles now creates both
/// flags at boot). Its `uniquify_nameserver_list` also stops after a loopback server
/// (`127.*` or `::1`) where `TRUNCATE_NAMESERVER_LIST_AFTER_LOOPBACK_ADDRESS` is on, its
/// default (`y` where unset; /etc/default/resolvconf, which update.d/libc sources, may set
/// it to `no`; resolvconf(8)): base's servers, read after the interfaces' records, never
/// appear after an interface's 127.0.0.53 or 127.0.0.1.
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
            " (Debian's resolvconf: `nameserver` lines in /etc/resolvconf/resolv.conf.d/base, then resolvconf -u, which writes the file again where its updates are enabled, as its unit's start enables them (resolvconf --updates-are-enabled; where they are not, it only marks the update postponed, made at resolvconf --enable-updates); not systemctl restart resolvconf, whose stop drops a pending update, so that its start writes nothing (resolvconf 1.87 and later); it keeps three servers at most, the interfaces' before base's, and none after a loopback one (127.*, ::1) unless /etc/default/resolvconf sets TRUNCATE_NAMESERVER_LIST_AFTER_LOOPBACK_ADDRESS=no (it is on by default){}: {}printf 'nameserver %s\\n' {} >> {BASE}; resolvconf -u)",
            loopback_listed(etc),
            newline_at_end(BASE),
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

/// Where Debian resolvconf's file (`etc`, read through the link) lists a loopback server,
/// as its update.d/libc matches one (`127.*|::1`): it cuts the list after the first such
/// server, wherever it stands (`uniquify_nameserver_list`), so where the file's last server
/// is one and it lists fewer than three (which it keeps at most), base's servers, read
/// after the interfaces', were cut; with the line that turns that off. Not where servers
/// follow a loopback one (the cut is off) nor where three are listed (the limit keeps
/// base's out whatever is set).
fn loopback_listed(etc: &ResolvFile) -> String {
    const DEFAULTS: &str = "/etc/default/resolvconf";
    let servers = etc
        .parsed
        .as_ref()
        .map(|p| &p.nameservers[..])
        .unwrap_or(&[]);
    let last = servers
        .last()
        .filter(|n| n.address.starts_with("127.") || n.address == "::1");
    match last {
        Some(n) if servers.len() < 3 => format!(
            "; its file lists {} last, after which it lists no server, so base's servers would not appear there until that is set ({}echo TRUNCATE_NAMESERVER_LIST_AFTER_LOOPBACK_ADDRESS=no >> {DEFAULTS})",
            crate::text::escape(&n.address),
            newline_at_end(DEFAULTS)
        ),
        _ => String::new(),
    }
}

/// Where a dhclient of its own runs (its dhclient-script writes /etc/resolv.conf anew at
/// every lease): the servers go into the dhclient.conf it reads too (its `-cf`, else the
/// default), then the unit that runs it is restarted (dhclient reads its configuration
/// only at its start). Not where every dhclient is NetworkManager's (`-sf
/// nm-dhcp-helper`): no dhclient-script runs, NetworkManager takes the lease. `None`
/// where no dhclient of its own runs.
///
/// isc-projects/dhcp @572032cb (v4.4.3-18): client/dhclient.c `main` (`-cf` sets
/// `path_dhclient_conf`, read by `read_client_conf` at its start); dhclient.conf(5)
/// (`prepend`: "use a value you supply, and then use the values supplied by the server";
/// `supersede`: always the local value instead); dhcp-options(5) (`domain-name-servers
/// ip-address [, ...]`, IPv4; `dhcp6.name-servers ip6-address [, ...]`, DHCPv6's), both
/// applied to the lease (`on_receipt`: client/dhclient.c, and client/dhc6.c for a DHCPv6
/// lease). Debian's dhclient-script (isc-dhcp debian/dhclient-script.linux, as mirrored in
/// pexip/os-isc-dhcp @29a44578, 4.4.3-P1) `make_resolv_conf` writes the file from
/// `new_domain_name_servers` for a DHCPv4 lease and from `new_dhcp6_name_servers` for a
/// DHCPv6 one (keeping the file's nameserver lines where the lease has none), as
/// client/scripts/linux does: a DHCPv4 dhclient writes IPv4 servers alone, so IPv6 ones go
/// in `prepend dhcp6.name-servers`, which only a DHCPv6 dhclient (`-6`) takes. Where every
/// dhclient's command line was read ([`DhclientCommand::v6`](crate::facts::dhclient_cmdline::DhclientCommand)),
/// a family none of them serves gets no line that would change nothing: IPv4 servers
/// instead, or an enter hook that redefines `make_resolv_conf` (client/dhclient-script.8
/// HOOKS; Debian's script sources /etc/dhcp/dhclient-enter-hooks.d/*, ISC's
/// client/scripts/linux /etc/dhclient-enter-hooks). Where such a hook is there already, or
/// Red Hat's PEERDNS=no holds ([`super::dhclient_script::writes`]), dhclient-script writes
/// nothing: the note says so, naming the line, and asks for no dhclient.conf line; where a
/// hook leaves that unknown, the note says the file may be written, and why.
fn dhclient_note(ctx: &Ctx, servers: &[String]) -> Option<String> {
    if !ctx.facts.services.dhclient {
        return None;
    }
    let runs = DhclientRun::all(ctx.facts);
    let own: Vec<_> = runs
        .iter()
        .filter(|r| !r.command.as_ref().is_ok_and(|c| c.run_by_network_manager()))
        .collect();
    if !runs.is_empty() && own.is_empty() {
        return None;
    }
    let mut head = "dhclient runs here and writes the file anew at every lease".to_owned();
    match super::dhclient_script::writes(ctx.facts, &own) {
        Writes::No(why) | Writes::Resolved(why) => {
            return Some(format!(
                "dhclient runs here, but its dhclient-script does not write /etc/resolv.conf ({}), so nothing rewrites it",
                why.join("; ")
            ));
        }
        Writes::Unknown(why) => {
            head = format!(
                "dhclient runs here and may write the file anew at every lease ({})",
                why.join("; ")
            );
        }
        Writes::Yes(_) => {}
    }
    let pids: Vec<String> = own.iter().map(|r| r.pid.to_string()).collect();
    let status = if pids.is_empty() {
        "systemctl status $(pidof dhclient) names it".to_owned()
    } else {
        format!("systemctl status {} names it", pids.join(" "))
    };
    let (v4, v6): (Vec<String>, Vec<String>) = servers
        .iter()
        .cloned()
        .partition(|s| s.parse::<std::net::Ipv4Addr>().is_ok());
    // Each dhclient's family, where every one's command line was read: -6 (or a DHCPv6
    // mode) or not, -4 being dhclient's default.
    let known = !own.is_empty() && own.iter().all(|r| r.command.is_ok());
    let is_v6 = |r: &&DhclientRun| r.command.as_ref().is_ok_and(|c| c.v6);
    let (v6_runs, v4_runs): (Vec<&DhclientRun>, Vec<&DhclientRun>) =
        own.iter().copied().partition(is_v6);
    let mut put = Vec::new();
    let mut none = None;
    if !v4.is_empty() || (v6.is_empty() && !(known && v4_runs.is_empty())) {
        if known && v4_runs.is_empty() {
            none = Some(no_line(IPV4, &v4, &own));
        } else {
            put.push(format!(
                "put the IPv4 servers in {} (`prepend domain-name-servers {};`)",
                conf_files(&v4_runs),
                joined(&v4, ", ")
            ));
        }
    }
    let v6_line = format!("`prepend dhcp6.name-servers {};`", joined(&v6, ", "));
    if !v6.is_empty() || (known && v4_runs.is_empty() && v4.is_empty()) {
        if !v6_runs.is_empty() {
            let which: Vec<String> = v6_runs.iter().map(|r| r.pid.to_string()).collect();
            put.push(format!(
                "{}put the IPv6 servers in {} ({v6_line}), which the DHCPv6 dhclient here (pid {}: -6, or a DHCPv6 mode) takes",
                if put.is_empty() { "" } else { "and " },
                conf_files(&v6_runs),
                which.join(", ")
            ));
        } else if known {
            none = Some(no_line(IPV6, &v6, &own));
        } else if put.is_empty() {
            put.push(format!(
                "put the IPv6 servers in {} ({v6_line}), which only a DHCPv6 dhclient (-6) takes: a DHCPv4 one writes the file from its lease's IPv4 servers (`domain-name-servers`) alone",
                conf_files(&own)
            ));
        } else {
            put.push(format!(
                "and, for a DHCPv6 dhclient (-6), the IPv6 ones ({v6_line})"
            ));
        }
    }
    let mut said = Vec::new();
    if !put.is_empty() {
        said.push(format!(
            "{}: dhclient reads that file only at its start, and restarting the unit that runs it ({status}: networking, ifup@IFACE or network) takes the interface down and releases its lease, so do that from a console or in a maintenance window, or let the next boot do it",
            put.join(" ")
        ));
    }
    said.extend(none);
    // A DHCPv4 one known as such: its command line read.
    if v4_runs.iter().any(|r| r.command.is_ok()) && !v6_runs.is_empty() {
        // Debian's dhclient-script `make_resolv_conf` writes the whole file from one
        // family's lease (pexip/os-isc-dhcp @29a44578 debian/dhclient-script.linux): the
        // other family's servers go at each write.
        said.push(format!(
            "a DHCPv4 and a DHCPv6 dhclient both run here, and each writes the whole file from its own lease, so it holds the last lease's family alone; to keep servers of both, keep dhclient from writing it ({NO_WRITE} on Debian and Ubuntu) and make /etc/resolv.conf a file of your own"
        ));
    }
    Some(format!("{head}: {}", said.join("; ")))
}

/// The enter hook that keeps Debian's and Ubuntu's dhclient-script from writing
/// /etc/resolv.conf: a `make_resolv_conf` that does nothing, in a file its `run_hookdir`
/// sources (run-parts' names: no dot), dhclient-script(8) HOOKS.
const NO_WRITE: &str =
    "printf 'make_resolv_conf() { :; }\\n' > /etc/dhcp/dhclient-enter-hooks.d/zz-dnsfix";

/// An address family as dhclient takes its servers: its name, the dhclient.conf option
/// that gives them, and the flag of a dhclient of that family.
struct Family {
    name: &'static str,
    option: &'static str,
    client: &'static str,
    other: &'static str,
    other_client: &'static str,
    other_option: &'static str,
}

const IPV4: Family = Family {
    name: "IPv4",
    option: "domain-name-servers",
    client: "a DHCPv4 client (without -6: -4 is its default)",
    other: "IPv6",
    other_client: "DHCPv6",
    other_option: "dhcp6.name-servers",
};

const IPV6: Family = Family {
    name: "IPv6",
    option: "dhcp6.name-servers",
    client: "a DHCPv6 client (-6)",
    other: "IPv4",
    other_client: "DHCPv4",
    other_option: "domain-name-servers",
};

/// Where every dhclient of the node's own (`runs`) is of the other family than `family`:
/// no dhclient.conf line gives it `family`'s servers, since each writes the file from its
/// lease's servers of its own family alone; what to do instead.
fn no_line(family: Family, servers: &[String], runs: &[&DhclientRun]) -> String {
    let pids: Vec<String> = runs.iter().map(|r| r.pid.to_string()).collect();
    let Family {
        name,
        option,
        client,
        other,
        other_client,
        other_option,
    } = family;
    format!(
        "no dhclient.conf line gives the file the {name} servers ({}): no dhclient here (pid {}) is {client}, and a {other_client} one writes the file from its lease's {other} servers (`{other_option}`) alone, so `prepend {option}` changes nothing; give {other} servers instead, or make /etc/resolv.conf a file nothing rewrites: an enter hook that redefines make_resolv_conf to do nothing (dhclient-script(8), HOOKS: {NO_WRITE} on Debian and Ubuntu; /etc/dhclient-enter-hooks with ISC's own script), then the servers above stay",
        joined(servers, ", "),
        pids.join(", ")
    )
}

/// The dhclient.conf files `runs` read (each `-cf`, else the default), each once; the
/// default where none is known.
fn conf_files(runs: &[&DhclientRun]) -> String {
    const DEFAULT: &str =
        "its dhclient.conf (/etc/dhcp/dhclient.conf on Debian and Ubuntu, else /etc/dhclient.conf)";
    let mut files: Vec<String> = Vec::new();
    for run in runs {
        let file = match &run.command {
            Ok(c) if let Some(conf) = &c.conf => crate::text::escape(conf).into_owned(),
            _ => DEFAULT.to_owned(),
        };
        if !files.contains(&file) {
            files.push(file);
        }
    }
    if files.is_empty() {
        DEFAULT.to_owned()
    } else {
        files.join(" and ")
    }
}

/// DNS-CLUSTER-SELF-FORWARD's fix where NetworkManager writes the plain /etc/resolv.conf
/// (`via` `networkmanager`, or `networkmanager_at_boot` where it does so from its next
/// start), whose servers are the cluster addresses `cluster`: what host-upstream-dns writes
/// (templates/networkmanager-upstream.conf.j2: global DNS, the cluster addresses and then
/// the upstreams, three at most) and the same by hand. `None` for another owner.
pub(super) fn nm_self_forward_fix(ctx: &Ctx, via: Via, cluster: &[String]) -> Option<String> {
    let (now, then) = match via {
        Via::NetworkManager => (
            "writes /etc/resolv.conf here from its connections' servers, so servers written into the file go at its next update",
            ", then systemctl reload NetworkManager",
        ),
        Via::NetworkManagerAtBoot => (
            "is stopped but enabled, and writes /etc/resolv.conf anew from its connections' servers at its next start",
            " (read at its next start; the playbook writes /etc/resolv.conf itself for now)",
        ),
        _ => return None,
    };
    let real = real_servers(ctx).map(|(_, s)| s).unwrap_or_default();
    let real = if real.is_empty() {
        vec!["<ADDR>".to_owned()]
    } else {
        real
    };
    let servers = cluster_then(cluster, &real);
    // Stopped now: the file stays as it is until then, so it is fixed by hand too (as the
    // playbook does with host-resolv.conf.j2), its nameserver lines replaced.
    let now_too = if via == Via::NetworkManagerAtBoot {
        format!(
            "; and /etc/resolv.conf for now, its other lines kept: sed -i '/^[[:space:]]*nameserver[[:space:]]/d' /etc/resolv.conf; {}printf 'nameserver %s\\n' {} >> /etc/resolv.conf",
            newline_at_end("/etc/resolv.conf"),
            servers.join(" ")
        )
    } else {
        String::new()
    };
    let kubespray = if ctx.facts.flavour.kind == FlavourKind::Kubespray {
        "; on Kubespray set the inventory's nameservers too: its next run writes `servers=` the cluster address and those into /etc/NetworkManager/conf.d/dns.conf (0063-networkmanager-dns.yml), which a zz- file, read after it, overrides"
    } else {
        ""
    };
    Some(format!(
        "NetworkManager {now}: give it the real servers after the cluster address. dnsfix apply does (playbook host-upstream-dns, with the inventory's upstream_dns_servers, else its nameservers, else the real servers the node lists): NetworkManager's global DNS in /etc/NetworkManager/conf.d/zz-dnsfix-upstream.conf, `[global-dns-domain-*]` `servers=` the first cluster address then those servers, three at most (glibc reads no more than three: MAXNS), and `[global-dns]` `searches=` and `options=` as /etc/resolv.conf has them (global DNS replaces the connections' own){then}. By hand the same file: `servers={}`{then}{now_too}{kubespray}",
        servers.join(",")
    ))
}

/// The servers for a node whose resolver lists only the cluster addresses `cluster`: the
/// first of them (the node still resolves cluster names), then the real servers `real`,
/// three at most. NetworkManager writes every global DNS server into /etc/resolv.conf
/// (NetworkManager src/core/dns/nm-dns-manager.c `create_resolv_conf` @5d4802f7 (1.40.0),
/// whose note before the fourth says "the libc resolver may not support more than 3
/// nameservers"), and glibc uses the first three and ignores the rest without a word
/// (bminor/glibc glibc-2.42 @d2097651: `MAXNS` is 3 in resolv/bits/types/res_state.h,
/// which resolv.h includes; resolv/res_init.c `res_vinit_1` reads every `nameserver` line
/// into its list, and resolv/resolv_conf.c `update_from_conf` copies only the first
/// `MAXNS` into the resolver state that res_send asks; musl too reads three,
/// src/network/resolvconf.c `if (nns >= MAXNS) continue;` with `MAXNS` 3 in
/// src/network/lookup.h, bminor/musl @86373b49): with all the cluster addresses first, a
/// node with three of them would have no upstream at all.
/// templates/networkmanager-upstream.conf.j2 and host-resolv.conf.j2 take the same.
fn cluster_then(cluster: &[String], real: &[String]) -> Vec<String> {
    cluster
        .iter()
        .take(1)
        .chain(real)
        .take(3)
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::resolv_conf::ResolvConf;

    /// /etc/resolv.conf linked to Debian resolvconf's file with `text`.
    fn resolvconf_link(text: &str) -> ResolvFile {
        ResolvFile {
            path: "/etc/resolv.conf".into(),
            state: FileState::Present,
            symlink_target: Some("../run/resolvconf/resolv.conf".into()),
            canonical: Some("/run/resolvconf/resolv.conf".into()),
            sha256: None,
            parsed: Some(ResolvConf::parse(text)),
        }
    }

    /// Debian resolvconf's update.d/libc lists no server after a loopback one while
    /// TRUNCATE_NAMESERVER_LIST_AFTER_LOOPBACK_ADDRESS is on, its default (pexip/os-resolvconf
    /// @593d7f18 `uniquify_nameserver_list`), wherever that one stands: where its file lists
    /// systemd-resolved's 127.0.0.53, or a 127.0.0.1 after another server, last and fewer
    /// than three, base's servers were cut, and the fix says so with the line that turns it
    /// off; it names the variable and /etc/default/resolvconf always.
    #[test]
    fn resolvconf_s_fix_says_a_loopback_server_ends_its_list() {
        let servers = ["192.0.2.53".to_owned()];
        for (text, loopback) in [
            ("nameserver 127.0.0.53\n", "127.0.0.53"),
            ("nameserver 192.0.2.1\nnameserver 127.0.0.1\n", "127.0.0.1"),
        ] {
            let fix = other_fix(&resolvconf_link(text), &servers, " (192.0.2.53)");
            assert!(
                fix.contains(&format!("unless /etc/default/resolvconf sets TRUNCATE_NAMESERVER_LIST_AFTER_LOOPBACK_ADDRESS=no (it is on by default); its file lists {loopback} last, after which it lists no server, so base's servers would not appear there until that is set ([ -z \"$(tail -c1 /etc/default/resolvconf)\" ] || echo >> /etc/default/resolvconf; echo TRUNCATE_NAMESERVER_LIST_AFTER_LOOPBACK_ADDRESS=no >> /etc/default/resolvconf): ")),
                "{fix}"
            );
        }
        // Servers after the loopback one (the cut is off), three listed (the limit keeps
        // base's out whatever is set), none: no such note.
        for text in [
            "nameserver 192.0.2.1\n",
            "search example.internal\n",
            "nameserver 127.0.0.1\nnameserver 192.0.2.1\n",
            "nameserver 192.0.2.1\nnameserver 192.0.2.2\nnameserver 127.0.0.1\n",
        ] {
            let fix = other_fix(&resolvconf_link(text), &servers, " (192.0.2.53)");
            assert!(
                fix.contains(
                    "TRUNCATE_NAMESERVER_LIST_AFTER_LOOPBACK_ADDRESS=no (it is on by default): "
                ),
                "{fix}"
            );
            assert!(!fix.contains("after which it lists no server"), "{fix}");
        }
    }
}
