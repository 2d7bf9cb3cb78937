//! A running dhclient's command line (/proc/PID/cmdline), as ISC dhclient reads its
//! arguments: a pure parser, no I/O. It says which configuration file the process reads
//! and which interfaces it serves; it never guesses either where the line does not tell.
//!
//! isc-projects/dhcp @572032cb client/dhclient.c `main` (lines 358-596): every argument
//! that starts with `-` is an option, those below take the next argument as their value
//! (`-cf FILE` sets `path_dhclient_conf`, the last one winning), an unknown option ends
//! dhclient (`usage`), and every other argument is an interface it serves (and then only
//! those: `interfaces_requested`); with none named it serves every interface it finds up.
//!
//! Distributions patch in options of their own (Red Hat's below), so a running dhclient
//! with an option not known here is no error: it still reads the file its last `-cf`
//! names (the gather's awk picks the same one, passing over such options), and only the
//! interfaces it serves are then unknown (the option may take the next word as its value).

/// The options of dhclient that take the next argument as their value
/// (client/dhclient.c @572032cb, each `if (++i == argc) usage(...)`), then Red Hat's
/// (Fedora and CentOS rpms/dhcp: dhcp-dhclient-options.patch for 4.3, `-C`, `-H`, `-F`,
/// `-V` and `-timeout`; 0002-additional-dhclient-options.patch for 4.4, with `--timeout`
/// and `--request-options`; as mirrored in VersatusHPC/rpms-dhcp @8173a686 and
/// @7c097287). Red Hat's network-scripts add `-H host` or `-F fqdn`
/// (fedora-sysv/initscripts network-scripts/network-functions `set_hostname_options`).
/// Its `-R` list never counts: upstream's `-R` (a DHCPv6 flag) comes first.
const WITH_VALUE: [&str; 22] = [
    "-4o6",
    "-p",
    "-pf",
    "-cf",
    "-df",
    "-lf",
    "-sf",
    "-s",
    "-g",
    "-e",
    "--dad-wait-time",
    "--prefix-len-hint",
    "--address-prefix-len",
    "--decline-wait-time",
    "-D",
    "-C",
    "-H",
    "-F",
    "-V",
    "-timeout",
    "--timeout",
    "--request-options",
];

/// The options of dhclient that take no value (client/dhclient.c @572032cb; -S, -N, -T,
/// -P and -R select DHCPv6 modes), then Red Hat's `-B` (the patches above; NetworkManager
/// passes it where a connection asks for the broadcast flag) and `-nc`, keep capabilities
/// (dhcp-capability.patch, VersatusHPC/rpms-dhcp @8173a686).
const FLAGS: [&str; 22] = [
    "-r",
    "-4",
    "-6",
    "-x",
    "-d",
    "--no-pid",
    "-1",
    "-q",
    "-nw",
    "-n",
    "-w",
    "-S",
    "-N",
    "-T",
    "-P",
    "-R",
    "-i",
    "-I",
    "-v",
    "--version",
    "-B",
    "-nc",
];

/// The flags that make dhclient a DHCPv6 client (`local_family = AF_INET6` in `main`,
/// client/dhclient.c @572032cb lines 369-374 and 458-502).
const V6_FLAGS: [&str; 6] = ["-6", "-S", "-N", "-T", "-P", "-R"];

/// What a dhclient's command line says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DhclientCommand {
    /// The file `-cf` names (the last one), `None` where there is none: then dhclient reads
    /// its built-in path (or `PATH_DHCLIENT_CONF` from its environment).
    pub conf: Option<String>,
    /// The script `-sf` names (the last one), `None` where there is none: then dhclient
    /// runs its built-in dhclient-script. NetworkManager passes its `nm-dhcp-helper`
    /// (src/core/dhcp/nm-dhcp-dhclient.c `dhclient_start` @1.40.0 5d4802f7, line 461): it
    /// then takes the lease itself, and no dhclient-script writes /etc/resolv.conf.
    pub script: Option<String>,
    /// The interfaces it was told to serve, in order; empty where none is named (it serves
    /// every interface it finds up).
    pub interfaces: Vec<String>,
    /// `-n`: it starts no interface at all.
    pub none: bool,
    /// A DHCPv6 client: `-6`, or a DHCPv6 mode (`-S`, `-N`, `-T`, `-P`, `-R`), each of
    /// which sets `local_family` to `AF_INET6` in `main` (client/dhclient.c @572032cb);
    /// without one it is a DHCPv4 client (`-4`, `local_family`'s default `AF_INET`,
    /// common/discover.c). Its dhclient-script writes /etc/resolv.conf from the lease's
    /// `dhcp6.name-servers`, a DHCPv4 one from its `domain-name-servers`.
    pub v6: bool,
    /// The first option not known here, escaped: it may take the next word as its value,
    /// so which of the words are interfaces is not known (the `-cf` file still is).
    pub unknown: Option<String>,
    /// Each `-e NAME=VALUE`, in order: dhclient puts them in its script's environment
    /// (client/dhclient.c @572032cb `main`: `client_env`, `script_go`), before the script
    /// sources anything.
    pub env: Vec<String>,
}

impl DhclientCommand {
    /// Parses the NUL-separated arguments of /proc/PID/cmdline. `Err` says why the line is
    /// not one dhclient runs with (an option without its value, an empty line): what it
    /// reads and serves is then not known. An option not known here is no error
    /// ([`DhclientCommand::unknown`]).
    pub fn parse(cmdline: &[u8]) -> Result<DhclientCommand, String> {
        let bytes = cmdline.strip_suffix(b"\0").unwrap_or(cmdline);
        if bytes.is_empty() {
            return Err("the command line is empty".into());
        }
        let args: Vec<String> = bytes
            .split(|&b| b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let mut out = DhclientCommand {
            conf: None,
            script: None,
            interfaces: Vec::new(),
            none: false,
            v6: false,
            unknown: None,
            env: Vec::new(),
        };
        let mut v4 = false;
        let mut rest = args.iter().skip(1);
        while let Some(arg) = rest.next() {
            if WITH_VALUE.contains(&arg.as_str()) {
                let value = rest
                    .next()
                    .ok_or_else(|| format!("{} has no value", crate::text::escape(arg)))?;
                if arg == "-cf" {
                    out.conf = Some(value.clone());
                } else if arg == "-sf" {
                    out.script = Some(value.clone());
                } else if arg == "-e" {
                    out.env.push(value.clone());
                }
            } else if FLAGS.contains(&arg.as_str()) {
                out.none |= arg == "-n";
                v4 |= arg == "-4";
                out.v6 |= V6_FLAGS.contains(&arg.as_str());
            } else if arg.starts_with('-') {
                // Taken as a flag, as the gather's awk takes it: a `-cf` after it counts.
                if out.unknown.is_none() {
                    out.unknown = Some(crate::text::escape(arg).into_owned());
                }
            } else {
                out.interfaces.push(arg.clone());
            }
        }
        if v4 && out.v6 {
            // `log_fatal("Client can only do v4 or v6, not both.")`, or `usage` for a
            // DHCPv6 mode after -4 (client/dhclient.c @572032cb `main`).
            return Err("it asks for both DHCPv4 (-4) and DHCPv6, which dhclient refuses".into());
        }
        Ok(out)
    }

    /// NetworkManager runs this dhclient: its `-sf` is NetworkManager's `nm-dhcp-helper`
    /// ([`DhclientCommand::script`]), which hands each lease to NetworkManager.
    pub fn run_by_network_manager(&self) -> bool {
        self.script
            .as_deref()
            .is_some_and(|s| s.rsplit('/').next() == Some("nm-dhcp-helper"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One dhclient per interface, with its own pid and lease files (-pf, -lf: options
    /// that take a value, client/dhclient.c @572032cb) and the default dhclient.conf: the
    /// command Debian's ifupdown runs for `iface ens5 inet dhcp` with `metric 100` (its
    /// inet.defn `dhcp` method, as generated into inet.c: `/sbin/dhclient -4 -v -pf
    /// /run/dhclient.%iface%.pid -lf /var/lib/dhcp/dhclient.%iface%.leases -I -df
    /// /var/lib/dhcp/dhclient6.%iface%.leases %iface% [[-e IF_METRIC=%metric%]]`), an
    /// option after the interface among them.
    #[test]
    fn a_dhclient_for_one_interface_serves_it_with_the_default_file() {
        let line = b"/sbin/dhclient\0-4\0-v\0-pf\0/run/dhclient.ens5.pid\0-lf\0/var/lib/dhcp/dhclient.ens5.leases\0-I\0-df\0/var/lib/dhcp/dhclient6.ens5.leases\0ens5\0-e\0IF_METRIC=100\0";
        assert_eq!(
            DhclientCommand::parse(line),
            Ok(DhclientCommand {
                conf: None,
                script: None,
                interfaces: vec!["ens5".into()],
                none: false,
                v6: false,
                unknown: None,
                env: vec!["IF_METRIC=100".into()],
            })
        );
    }

    /// Debian's ifupdown runs a DHCPv6 dhclient for `iface ens5 inet6 dhcp`, and a
    /// stateless one (`-S`) for `inet6 auto` with `dhcp 1` (pexip/os-ifupdown @0b51fb82
    /// inet6.defn, linux `dhcp` and `auto` methods); the `inet dhcp` one above is DHCPv4.
    #[test]
    fn ifupdown_s_inet6_dhclients_are_dhcpv6_ones() {
        let dhcp = b"/sbin/dhclient\0-6\0-pf\0/run/dhclient6.ens5.pid\0-lf\0/var/lib/dhcp/dhclient6.ens5.leases\0-I\0-df\0/var/lib/dhcp/dhclient.ens5.leases\0ens5\0";
        let auto = b"/sbin/dhclient\0-6\0-S\0-pf\0/run/dhclient6.ens5.pid\0-lf\0/var/lib/dhcp/dhclient6.ens5.leases\0-I\0-df\0/var/lib/dhcp/dhclient.ens5.leases\0ens5\0";
        for line in [&dhcp[..], &auto[..]] {
            let parsed = DhclientCommand::parse(line).expect("parses");
            assert!(parsed.v6, "{parsed:?}");
            assert_eq!(parsed.interfaces, ["ens5"]);
        }
        // A DHCPv6 mode alone makes it one too; no flag, or -4, a DHCPv4 one.
        let stateless = DhclientCommand::parse(b"dhclient\0-S\0eth0").expect("parses");
        assert!(stateless.v6);
        for v4 in [&b"dhclient\0eth0"[..], b"dhclient\0-4\0eth0"] {
            assert!(!DhclientCommand::parse(v4).expect("parses").v6);
        }
        // Both: dhclient exits ("Client can only do v4 or v6, not both.").
        assert!(DhclientCommand::parse(b"dhclient\0-4\0-6\0eth0").is_err());
        assert!(DhclientCommand::parse(b"dhclient\0-4\0-S\0eth0").is_err());
    }

    #[test]
    fn the_last_cf_names_the_file_and_option_values_are_no_interfaces() {
        let line = b"dhclient\0-cf\0/etc/a.conf\0-sf\0eth9\0-cf\0/etc/dhcp/b.conf\0eth0\0eth1";
        let parsed = DhclientCommand::parse(line).expect("parses");
        assert_eq!(parsed.conf.as_deref(), Some("/etc/dhcp/b.conf"));
        assert_eq!(parsed.interfaces, ["eth0", "eth1"]);
    }

    /// What Red Hat's ifup-eth runs (fedora-sysv/initscripts network-scripts/ifup-eth
    /// `/sbin/dhclient ${DHCLIENTARGS} ${DEVICE}`, network-functions
    /// `generate_config_file_name` and `set_hostname_options`): `-H` takes a value.
    #[test]
    fn red_hats_ifup_line_names_its_file_and_interface() {
        let line = b"/sbin/dhclient\0-1\0-q\0-cf\0/etc/dhcp/dhclient-ens5.conf\0-lf\0/var/lib/dhclient/dhclient-ens5.leases\0-pf\0/run/dhclient-ens5.pid\0-H\0node1\0ens5\0";
        let parsed = DhclientCommand::parse(line).expect("parses");
        assert_eq!(parsed.conf.as_deref(), Some("/etc/dhcp/dhclient-ens5.conf"));
        assert_eq!(parsed.interfaces, ["ens5"]);
        assert_eq!(parsed.unknown, None);
        // NetworkManager's argv (nm-dhcp-dhclient.c `dhclient_start` @1.40.0 5d4802f7, lines
        // 425-488): -d -q [-B] -sf HELPER -pf -lf -cf IFACE; never -F or -H.
        let nm = b"/sbin/dhclient\0-d\0-q\0-B\0-sf\0/usr/libexec/nm-dhcp-helper\0-pf\0/run/NetworkManager/dhclient-eth0.pid\0-lf\0/var/lib/NetworkManager/dhclient-eth0.lease\0-cf\0/var/lib/NetworkManager/dhclient-eth0.conf\0eth0";
        let parsed = DhclientCommand::parse(nm).expect("parses");
        assert_eq!(parsed.interfaces, ["eth0"]);
        assert_eq!(parsed.unknown, None);
    }

    /// Red Hat's `-nc` (keep capabilities, dhcp-capability.patch in VersatusHPC/rpms-dhcp
    /// @8173a686) takes no value: the interfaces after it are known.
    #[test]
    fn red_hats_nc_flag_is_known() {
        let parsed =
            DhclientCommand::parse(b"/sbin/dhclient\0-nc\0-cf\0/etc/c.conf\0eth0").expect("parses");
        assert_eq!(parsed.unknown, None);
        assert_eq!(parsed.interfaces, ["eth0"]);
    }

    /// An option not known here keeps the last `-cf` (which the gather read) and leaves
    /// only the interfaces unknown.
    #[test]
    fn an_unknown_option_keeps_the_file_and_not_the_interfaces() {
        let parsed = DhclientCommand::parse(b"dhclient\0--bogus\0x\0-cf\0/etc/c.conf\0eth0")
            .expect("parses");
        assert_eq!(parsed.conf.as_deref(), Some("/etc/c.conf"));
        assert_eq!(parsed.unknown.as_deref(), Some("--bogus"));
    }

    #[test]
    fn a_line_dhclient_would_refuse_is_not_understood() {
        assert!(DhclientCommand::parse(b"dhclient\0-cf").is_err());
        assert!(DhclientCommand::parse(b"dhclient\0-H").is_err());
        assert!(DhclientCommand::parse(b"").is_err());
        assert_eq!(
            DhclientCommand::parse(b"dhclient\0").map(|c| c.interfaces.len()),
            Ok(0)
        );
    }

    #[test]
    fn any_bytes_parse_without_panicking() {
        for bytes in crate::testing::random_inputs(13, b"\0-cfn e", 200, 40, None) {
            let _ = DhclientCommand::parse(&bytes);
        }
    }
}
