//! The programs besides NetworkManager and dhclient that write a plain /etc/resolv.conf
//! anew, each known by what it leaves in the file or by its running process: dhcpcd (its
//! header, and a dhcpcd process), openresolv (its header, and its `resolvconf` program),
//! busybox udhcpc (a udhcpc process running its default script; it writes no header) and
//! SUSE's netconfig (its header, and its configuration). A program merely installed is
//! none of these: each needs the evidence that it wrote the file and writes it again.
//! Read from the gathered files only; pure.
//!
//! Sources: dhcpcd hooks/20-resolv.conf and hooks/dhcpcd-run-hooks.in, src/if-options.c
//! and src/common.c `get_line` (NetworkConfiguration/dhcpcd @8b312918, v10.3.2-90);
//! openresolv libc.in and resolvconf.in (NetworkConfiguration/openresolv @fc721631,
//! v3.17.4-4); busybox networking/udhcp/dhcpc.c and examples/udhcp/simple.script
//! (mirror/busybox @371fe9f7, 1_36_0-229) and Alpine's main/busybox/default.script and
//! udhcpc.conf (alpinelinux/aports); openSUSE/sysconfig scripts/netconfig.d/dns-resolver.in
//! and scripts/functions.netconfig (@9d5ff1f8, version-0.90.5; @37ac6c07^ before it wrote
//! /run/netconfig/resolv.conf).

use super::NodeFacts;
use super::raw::{FileState, RawFacts};

/// dhcpcd's configuration file (dhcpcd.8 `-f`, its default `CONFIG`).
pub const DHCPCD_CONF: &str = "/etc/dhcpcd.conf";
/// openresolv's configuration file, a shell script it sources (resolvconf.conf(5)).
pub const RESOLVCONF_CONF: &str = "/etc/resolvconf.conf";
/// Alpine's udhcpc script sources this file (main/busybox/default.script `UDHCPC_CONF`).
pub const UDHCPC_CONF: &str = "/etc/udhcpc/udhcpc.conf";
/// ifupdown's interfaces, whose `peer-dns no` reaches udhcpc's script as IF_PEER_DNS.
pub const INTERFACES: &str = "/etc/network/interfaces";
/// netconfig's settings, sourced by its dns-resolver module.
pub const NETCONFIG_CONF: &str = "/etc/sysconfig/network/config";
/// The file netconfig's dns-resolver module writes since sysconfig 0.85, which
/// /etc/resolv.conf links to (dns-resolver.in `DESTFILE`, functions.netconfig
/// `netconfig_check_and_link`).
pub const NETCONFIG_RESOLV_CONF: &str = "/run/netconfig/resolv.conf";
/// busybox's `CONFIG_UDHCPC_DEFAULT_SCRIPT` (networking/udhcp/Config.src), where Alpine
/// installs its default.script (main/busybox/APKBUILD).
const UDHCPC_SCRIPT: &str = "/usr/share/udhcpc/default.script";
/// busybox's `CONFIG_UDHCPC_DEFAULT_INTERFACE`, served where no `-i` is given.
const UDHCPC_INTERFACE: &str = "eth0";

/// Which program writes the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer {
    Dhcpcd,
    Openresolv,
    Udhcpc,
    Netconfig,
}

impl Writer {
    /// The name users know it by, also `host_resolver.via` in the playbooks.
    pub fn name(self) -> &'static str {
        match self {
            Writer::Dhcpcd => "dhcpcd",
            Writer::Openresolv => "openresolv",
            Writer::Udhcpc => "udhcpc",
            Writer::Netconfig => "netconfig",
        }
    }

    /// When it writes the file again.
    pub fn when(self) -> &'static str {
        match self {
            // 20-resolv.conf runs on every reason with the interface up (BOUND, RENEW,
            // REBIND, REBOOT, ROUTERADVERT, ...) and rebuilds the file when it went down.
            Writer::Dhcpcd => "at every lease and renewal, and when an interface goes up or down",
            Writer::Openresolv => {
                "whenever a program hands it servers (resolvconf -a: a DHCP client, ifupdown, a VPN) and at every resolvconf -u"
            }
            Writer::Udhcpc => "at every lease and renewal that brings DNS servers",
            Writer::Netconfig => {
                "at every netconfig update (from wicked or NetworkManager, at each DHCP lease)"
            }
        }
    }

    /// Where a change lasts instead of in /etc/resolv.conf itself.
    pub fn fix(self) -> &'static str {
        match self {
            Writer::Dhcpcd => {
                "give dhcpcd the servers in /etc/dhcpcd.conf (`static domain_name_servers=ADDR ADDR`, in an `interface NAME` block for one interface), or keep it from writing the file with `nohook resolv.conf` there (the file is then yours to write); then `dhcpcd -n` (or a reboot) applies it"
            }
            Writer::Openresolv => {
                "give openresolv the servers in /etc/resolvconf.conf (`name_servers=\"ADDR ADDR\"` puts them before the ones it is handed, `name_servers_append=` after), or keep it from writing the file with `resolv_conf=/dev/null` there (the file is then yours to write); then `resolvconf -u`"
            }
            Writer::Udhcpc => {
                "give udhcpc's script the servers in /etc/udhcpc/udhcpc.conf (`dns=\"ADDR ADDR\"`: the script reads the file after udhcpc hands it the lease's, so they take their place, for every interface it serves), or keep it from writing the file with `RESOLV_CONF=\"no\"` there (`NO_DNS=\"IFACE\"` for one interface; `peer-dns no` in the interface's /etc/network/interfaces stanza does the same; the file is then yours to write); the next lease or renewal applies it"
            }
            Writer::Netconfig => {
                "give netconfig the servers in /etc/sysconfig/network/config (`NETCONFIG_DNS_STATIC_SERVERS=\"ADDR ADDR\"`, with STATIC in NETCONFIG_DNS_POLICY: its default `auto` is `STATIC *` under wicked, and `STATIC_FALLBACK NetworkManager` under NetworkManager, where they count only while NetworkManager gives none), or keep it from writing the file with `NETCONFIG_DNS_POLICY=''`; then `netconfig update -f`"
            }
        }
    }
}

/// A program that writes /etc/resolv.conf anew, with what shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvWriter {
    pub writer: Writer,
    /// What shows it: the header it wrote, its process, the configuration read.
    pub evidence: Vec<String>,
    /// The file was changed since the program wrote it, and what shows it (its header is
    /// not the first line: every one of them writes it first; a line udhcpc never
    /// writes). `None` where nothing shows an edit (not that there was none).
    pub edited: Option<String>,
    /// Where /etc/resolv.conf links to the file the program writes (netconfig's
    /// /run/netconfig/resolv.conf), as the link says; `None` for a plain file.
    pub linked: Option<String>,
}

/// The program that writes a plain /etc/resolv.conf anew, where the gathered files show
/// one: the first of openresolv, dhcpcd, netconfig (by the header they write) and udhcpc
/// (by its process); and netconfig where /etc/resolv.conf links to its
/// /run/netconfig/resolv.conf. `None` for another link (the owner of its target keeps
/// it), a file locked with `chattr +i` or `+a` (none of them can replace it: dhcpcd and
/// openresolv truncate it, udhcpc and netconfig rename over it), and where none of them
/// is shown to write it.
pub fn resolv_writer(facts: &NodeFacts) -> Option<ResolvWriter> {
    let etc = &facts.resolver.etc_resolv_conf;
    if etc.state != FileState::Present
        || super::network_manager::resolv_conf_locked(&facts.raw).is_some()
    {
        return None;
    }
    let text = facts.raw.get(&etc.path)?.text()?.into_owned();
    if let Some(target) = &etc.symlink_target {
        let netconfig_s = [Some(target.as_str()), etc.canonical.as_deref()]
            .into_iter()
            .flatten()
            .any(|p| p == NETCONFIG_RESOLV_CONF);
        return netconfig_s
            .then(|| netconfig(&facts.raw, &text, Some(target)))
            .flatten();
    }
    openresolv(&facts.raw, &text)
        .or_else(|| dhcpcd(&facts.raw, &text))
        .or_else(|| netconfig(&facts.raw, &text, None))
        .or_else(|| udhcpc(&facts.raw, &text))
}

/// The lines at the top of /etc/resolv.conf the gather looks for a header in (it reads
/// them in the shell, a byte a call): the header is written first, and Kubespray's block
/// above it is a few lines.
pub const HEADER_LINES: usize = 64;

/// The 1-based line of `text` that `is_header` takes for the header, with the line (read
/// as the gather reads it to pick the files that go with it: a line ends at `\n` alone,
/// and only the first [`HEADER_LINES`]).
fn header(text: &str, is_header: impl Fn(&str) -> bool) -> Option<(usize, &str)> {
    text.split('\n')
        .take(HEADER_LINES)
        .enumerate()
        .find(|(_, l)| is_header(l))
        .map(|(i, l)| (i + 1, l))
}

/// The header's evidence line, and the edit a header below the first line shows.
fn header_evidence(
    writer: Writer,
    (line, text): (usize, &str),
    evidence: &mut Vec<String>,
) -> Option<String> {
    evidence.push(format!(
        "/etc/resolv.conf:{line}: {}",
        crate::text::escape(text)
    ));
    (line > 1).then(|| {
        format!(
            "{}'s header is on line {line}, and it writes it first: the lines above it were added since",
            writer.name()
        )
    })
}

/// openresolv's libc subscriber writes `# Generated by resolvconf` first (libc.in
/// `signature`), then what it is handed. It writes /etc/resolv.conf unless its
/// configuration turns it off: `resolvconf` not yes (resolvconf.in runs no subscriber),
/// `libc` not yes (the libc subscriber is skipped), or `resolv_conf` naming another file or
/// /dev/null. From 3.17.0 it leaves a file whose first line is not its header alone, but
/// for `resolvconf -u` (libc.in "signature mismatch").
fn openresolv(raw: &RawFacts, text: &str) -> Option<ResolvWriter> {
    let head = header(text, |l| l == "# Generated by resolvconf")?;
    let program = raw.commands.get("resolvconf-bin")?.stdout.trim().to_owned();
    if program.is_empty() {
        return None;
    }
    let mut evidence = Vec::new();
    let edited = header_evidence(Writer::Openresolv, head, &mut evidence);
    evidence.push(format!(
        "resolvconf is installed: {}",
        crate::text::escape(&program)
    ));
    match raw.get(RESOLVCONF_CONF).map(|f| (f.state, f.text())) {
        Some((FileState::Present, Some(conf))) => {
            let vars = shell_assignments(&conf);
            for key in ["resolvconf", "libc"] {
                if last_assignment(&vars, key).is_some_and(|a| !yes(&a.value)) {
                    return None;
                }
            }
            match last_assignment(&vars, "resolv_conf") {
                Some(a) if a.value != "/etc/resolv.conf" => return None,
                Some(a) => evidence.push(format!(
                    "{RESOLVCONF_CONF}:{}: resolv_conf=/etc/resolv.conf",
                    a.line
                )),
                None => evidence.push(format!(
                    "{RESOLVCONF_CONF} sets no resolv_conf: openresolv writes /etc/resolv.conf"
                )),
            }
            for key in ["name_servers", "name_servers_append"] {
                if let Some(a) = last_assignment(&vars, key) {
                    evidence.push(format!(
                        "{RESOLVCONF_CONF}:{}: {key}={}",
                        a.line,
                        crate::text::escape(&a.value)
                    ));
                }
            }
        }
        Some((FileState::Unreadable, _)) => {
            evidence.push(format!("{RESOLVCONF_CONF} could not be read"));
        }
        _ => evidence.push(format!(
            "no {RESOLVCONF_CONF}: openresolv writes /etc/resolv.conf"
        )),
    }
    let edited = edited.map(|e| {
        format!("{e} (openresolv 3.17 and later replace such a file only at resolvconf -u, earlier ones at their next update)")
    });
    Some(ResolvWriter {
        writer: Writer::Openresolv,
        evidence,
        edited,
        linked: None,
    })
}

/// openresolv's and the shell's yes: YES, TRUE, ON or 1 in any case (resolvconf.in).
fn yes(value: &str) -> bool {
    ["yes", "true", "on", "1"].contains(&value.to_ascii_lowercase().as_str())
}

/// dhcpcd's 20-resolv.conf hook writes `# Generated by dhcpcd`, then ` from ` and the
/// `IFACE.PROTOCOL` names whose servers it holds, first (`build_resolv_conf`; with a
/// resolvconf program it hands them to that instead, whose header the file then has). It
/// runs unless dhcpcd.conf says `nohook resolv.conf` ([`names_resolv_hook`]): at the top
/// for every interface, in any `interface PATTERN` block for those the pattern matches
/// (fnmatch; dhcpcd applies every matching block, not the last alone), in an `ssid` or
/// `profile` block only where that one is chosen.
fn dhcpcd(raw: &RawFacts, text: &str) -> Option<ResolvWriter> {
    let head = header(text, |l| {
        l == "# Generated by dhcpcd" || l.starts_with("# Generated by dhcpcd from ")
    })?;
    let pids = pids(raw, "dhcpcd");
    if pids.is_empty() {
        return None;
    }
    let interfaces: Vec<String> = head
        .1
        .strip_prefix("# Generated by dhcpcd from ")
        .map(|names| {
            names
                .split(", ")
                .map(|n| n.rsplit_once('.').map_or(n, |(i, _)| i).to_owned())
                .collect()
        })
        .unwrap_or_default();
    let mut evidence = Vec::new();
    let edited = header_evidence(Writer::Dhcpcd, head, &mut evidence);
    evidence.push(format!("dhcpcd runs (pid {})", pids.join(", ")));
    let config = dhcpcd_commands(raw, &pids, &mut evidence)?;
    match raw.get(&config).map(|f| (f.state, f.text())) {
        Some((FileState::Present, Some(conf))) => {
            let conf = DhcpcdConf::parse(&conf);
            if conf.global_nohook.is_some() {
                return None;
            }
            // dhcpcd applies every block whose pattern matches, and each `nohook` adds its
            // names to the hooks skipped (`read_config`, `add_environ` appending).
            let off = |iface: &str| {
                conf.blocks.iter().any(|b| {
                    b.nohook.is_some() && crate::facts::modprobe_d::fnmatch(&b.pattern, iface)
                })
            };
            if !interfaces.is_empty() && interfaces.iter().all(|i| off(i)) {
                return None;
            }
            let shown = crate::text::escape(&config);
            evidence.push(if interfaces.is_empty() {
                format!("{shown}: no `nohook resolv.conf` (its resolv.conf hook runs)")
            } else {
                format!(
                    "{shown}: no `nohook resolv.conf` for {} (its resolv.conf hook runs)",
                    crate::text::escape(&interfaces.join(", "))
                )
            });
            if let Some((line, value)) = &conf.static_servers {
                evidence.push(format!(
                    "{shown}:{line}: static domain_name_servers={}",
                    crate::text::escape(value)
                ));
            }
        }
        Some((FileState::Unreadable, _)) => {
            evidence.push(format!(
                "{} could not be read",
                crate::text::escape(&config)
            ));
        }
        None if config != DHCPCD_CONF => evidence.push(format!(
            "{} (its -f) was not read: whether it turns the resolv.conf hook off is not known",
            crate::text::escape(&config)
        )),
        _ => evidence.push(format!(
            "no {}: dhcpcd runs every hook",
            crate::text::escape(&config)
        )),
    }
    Some(ResolvWriter {
        writer: Writer::Dhcpcd,
        evidence,
        edited,
        linked: None,
    })
}

/// What dhcpcd's command lines say (`/proc/PID/cmdline`, each pid's): `None` where every
/// one turns the resolv.conf hook off (`-C`/`--nohook`, which dhcpcd adds to every
/// interface's skipped hooks: src/if-options.c `parse_option` 'C', dhcpcd.c
/// `add_options`), else the configuration file it reads (the last `-f`/`--config`, else
/// /etc/dhcpcd.conf). dhcpcd 9 and later write a title over their command line
/// (src/dhcpcd.c `setproctitle`, compat/setproctitle.c: `dhcpcd: [manager] [ip4] [ip6]`),
/// so what it was started with is not known there: the evidence says so.
fn dhcpcd_commands(raw: &RawFacts, pids: &[String], evidence: &mut Vec<String>) -> Option<String> {
    let mut config = None;
    let mut writing = false;
    for pid in pids {
        let Some(cmdline) = raw
            .get(&format!("/proc/{pid}/cmdline"))
            .filter(|f| f.state == FileState::Present)
        else {
            writing = true;
            continue;
        };
        match DhcpcdCommand::parse(&cmdline.content) {
            DhcpcdCommand::Title(title) => {
                writing = true;
                evidence.push(format!(
                    "dhcpcd's command line (pid {pid}) is its title, {}: dhcpcd 9 and later write it over the options it started with, so a `--nohook resolv.conf` or `-f` given there is not known",
                    crate::text::escape(&title)
                ));
            }
            DhcpcdCommand::Options { nohook, config: f } => {
                writing |= !nohook;
                if f.is_some() {
                    config = f;
                }
            }
        }
    }
    writing.then(|| config.unwrap_or_else(|| DHCPCD_CONF.to_owned()))
}

/// A dhcpcd command line, read as getopt_long reads it (src/if-options.h `IF_OPTS`,
/// src/if-options.c `cf_options`; a long name abbreviated is not followed), or the title
/// dhcpcd 9 and later write over it.
#[derive(Debug, PartialEq, Eq)]
enum DhcpcdCommand {
    Title(String),
    Options {
        /// `-C`/`--nohook` names the resolv.conf hook.
        nohook: bool,
        /// The last `-f`/`--config`.
        config: Option<String>,
    },
}

impl DhcpcdCommand {
    fn parse(cmdline: &[u8]) -> DhcpcdCommand {
        // IF_OPTS's letters that take a value.
        const WITH_VALUE: &str = "cefhijlmorstuvyzCFIOQSWXZ";
        // cf_options's names with required_argument (optional ones take `=VALUE` only).
        const LONG_WITH_VALUE: [&str; 48] = [
            "script",
            "env",
            "config",
            "logfile",
            "leasetime",
            "metric",
            "option",
            "timeout",
            "userclass",
            "msuserclass",
            "vsio",
            "vsio6",
            "vendor",
            "allowinterfaces",
            "reboot",
            "nohook",
            "nooption",
            "require",
            "static",
            "whitelist",
            "blacklist",
            "denyinterfaces",
            "arping",
            "destination",
            "fallback",
            "iaid",
            "dev",
            "define",
            "definend",
            "define6",
            "embed",
            "encap",
            "vendopt",
            "vendclass",
            "authprotocol",
            "authtoken",
            "controlgroup",
            "slaac",
            "reject",
            "mudurl",
            "link_rcvbuf",
            "request_time",
            "fallback_time",
            "ipv4ll_time",
            "initial_interval",
            "backoff_cutoff",
            "backoff_jitter",
            "allow",
        ];
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        // setproctitle's `PROGNAME: TITLE`, one argument.
        if let [title] = args.as_slice()
            && title.contains(": ")
        {
            return DhcpcdCommand::Title(title.clone());
        }
        let (mut nohook, mut config) = (false, None);
        let options = args.get(1..).unwrap_or_default();
        command_options(
            options,
            WITH_VALUE,
            "",
            &LONG_WITH_VALUE,
            |opt, value| match (opt, value) {
                ("C" | "nohook", Some(value)) => {
                    nohook |= names_resolv_hook(&value.replace(',', " "));
                }
                ("f" | "config", Some(value)) => config = Some(value.to_owned()),
                _ => {}
            },
        );
        DhcpcdCommand::Options { nohook, config }
    }
}

/// What of dhcpcd.conf decides whether its resolv.conf hook runs.
#[derive(Debug, Default, PartialEq, Eq)]
struct DhcpcdConf {
    /// The line of a `nohook resolv.conf` before the first block.
    global_nohook: Option<usize>,
    /// `interface PATTERN` blocks, in order.
    blocks: Vec<DhcpcdBlock>,
    /// The last top-level `static domain_name_servers=`: line and value.
    static_servers: Option<(usize, String)>,
}

#[derive(Debug, PartialEq, Eq)]
struct DhcpcdBlock {
    pattern: String,
    /// The line of a `nohook resolv.conf` in it.
    nohook: Option<usize>,
}

impl DhcpcdConf {
    /// As dhcpcd reads it (src/common.c `get_line`, src/if-options.c `read_config`): blank
    /// lines and those starting `#` or `;` skipped, a `#` outside double quotes ending the
    /// line, the option up to the first blank. An `ssid` or `profile` block applies only
    /// where chosen: its lines count for nothing here.
    fn parse(text: &str) -> DhcpcdConf {
        let mut conf = DhcpcdConf::default();
        // None: top level; Some(None): an ssid or profile block; Some(Some(i)): blocks[i].
        let mut block: Option<Option<usize>> = None;
        for (i, line) in text.lines().enumerate() {
            let line = strip_dhcpcd_comment(line.trim_start_matches([' ', '\t']));
            if line.is_empty() || line.starts_with(';') {
                continue;
            }
            let (option, value) = line
                .split_once([' ', '\t'])
                .map_or((line, ""), |(o, v)| (o, v.trim_matches([' ', '\t'])));
            match option {
                "interface" => {
                    conf.blocks.push(DhcpcdBlock {
                        pattern: value.to_owned(),
                        nohook: None,
                    });
                    block = Some(Some(conf.blocks.len() - 1));
                }
                "ssid" | "profile" => block = Some(None),
                "nohook" if names_resolv_hook(value) => match block {
                    None => conf.global_nohook = conf.global_nohook.or(Some(i + 1)),
                    Some(Some(b)) => conf.blocks[b].nohook = Some(i + 1),
                    Some(None) => {}
                },
                "static" if block.is_none() => {
                    if let Some(servers) = value.strip_prefix("domain_name_servers=") {
                        conf.static_servers = Some((i + 1, servers.to_owned()));
                    }
                }
                _ => {}
            }
        }
        conf
    }
}

/// A line of dhcpcd.conf up to a `#` outside double quotes and not escaped.
fn strip_dhcpcd_comment(line: &str) -> &str {
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => quoted = !quoted,
            '#' if !quoted => return line[..i].trim_end_matches([' ', '\t']),
            _ => {}
        }
    }
    line.trim_end_matches([' ', '\t'])
}

/// A `nohook` value that names the resolv.conf hook, several names split at commas and
/// blanks: dhcpcd-run-hooks skips a hook file that is the name, or the name after two
/// digits and a dash (with or without `.sh`), so the hook's file, `20-resolv.conf`, for
/// `resolv.conf` or `20-resolv.conf`.
fn names_resolv_hook(value: &str) -> bool {
    value
        .split([',', ' ', '\t'])
        .any(|name| name == "resolv.conf" || name == "20-resolv.conf")
}

/// netconfig's dns-resolver module writes a header of `###` lines first: before
/// sysconfig 0.85 (@37ac6c07) into /etc/resolv.conf itself, `### /etc/resolv.conf file
/// autogenerated by netconfig!`; since, into /run/netconfig/resolv.conf, which
/// /etc/resolv.conf links to, `### /etc/resolv.conf is a symlink to
/// /run/netconfig/resolv.conf` (a plain file with that header is a copy of it). It writes
/// nothing where NETCONFIG_DNS_POLICY is empty. A plain file changed since it wrote it
/// (its checksum, `netconfig_check_md5_and_move`) it leaves alone, but for `netconfig
/// update -f`; the file /etc/resolv.conf links to (`linked`: that link) it writes anew at
/// every update that changes what it holds (`write_resolv_conf`: no checksum), and /run
/// starts empty at each boot. The link is what shows it there: its header is not needed.
fn netconfig(raw: &RawFacts, text: &str, linked: Option<&str>) -> Option<ResolvWriter> {
    let head = header(text, |l| {
        l.starts_with("### /etc/resolv.conf ") && l.contains("netconfig")
    });
    if head.is_none() && linked.is_none() {
        return None;
    }
    let conf = raw.get(NETCONFIG_CONF)?;
    if conf.state != FileState::Present {
        return None;
    }
    let vars = shell_assignments(&conf.text()?);
    let policy = last_assignment(&vars, "NETCONFIG_DNS_POLICY");
    if policy.is_some_and(|a| a.value.trim().is_empty()) {
        return None;
    }
    let mut evidence = Vec::new();
    if let Some(target) = linked {
        evidence.push(format!(
            "/etc/resolv.conf links to {} (netconfig's link)",
            crate::text::escape(target)
        ));
    }
    // A change to a plain file leaves netconfig's checksum behind: it stops writing the
    // file (until a forced update), so the header's line says nothing more there. The
    // file the link leads to it writes anew all the same.
    let edited = head
        .and_then(|head| header_evidence(Writer::Netconfig, head, &mut evidence))
        .filter(|_| linked.is_some());
    evidence.push(match policy {
        Some(a) => format!(
            "{NETCONFIG_CONF}:{}: NETCONFIG_DNS_POLICY=\"{}\"",
            a.line,
            crate::text::escape(&a.value)
        ),
        None => format!("{NETCONFIG_CONF} leaves NETCONFIG_DNS_POLICY to its default, auto"),
    });
    if let Some(a) = last_assignment(&vars, "NETCONFIG_DNS_STATIC_SERVERS")
        .filter(|a| !a.value.trim().is_empty())
    {
        evidence.push(format!(
            "{NETCONFIG_CONF}:{}: NETCONFIG_DNS_STATIC_SERVERS=\"{}\"",
            a.line,
            crate::text::escape(&a.value)
        ));
    }
    Some(ResolvWriter {
        writer: Writer::Netconfig,
        evidence,
        edited,
        linked: linked.map(str::to_owned),
    })
}

/// udhcpc runs its script (`-s`, else busybox's default /usr/share/udhcpc/default.script)
/// at every lease and renewal. Alpine's default.script writes `search` and `nameserver`
/// lines and nothing else, renaming its file over /etc/resolv.conf (the servers of the
/// lease, or of a `dns=` in udhcpc.conf, which it sources after udhcpc set the lease's),
/// unless /etc/udhcpc/udhcpc.conf sets RESOLV_CONF to `no`, `NO`, empty or another file,
/// NO_DNS names the interface, or ifupdown passes IF_PEER_DNS other than `yes`
/// (`peer-dns` in the interface's stanza); busybox's simple.script writes the same lines
/// always. A udhcpc running another script writes what that script writes, which dnsfix
/// does not read: not counted.
fn udhcpc(raw: &RawFacts, text: &str) -> Option<ResolvWriter> {
    let mut writing = Vec::new();
    for pid in pids(raw, "udhcpc") {
        let Some(cmdline) = raw
            .get(&format!("/proc/{pid}/cmdline"))
            .filter(|f| f.state == FileState::Present)
        else {
            continue;
        };
        let run = UdhcpcCommand::parse(&cmdline.content);
        if run.script.as_deref().is_some_and(|s| s != UDHCPC_SCRIPT) {
            continue;
        }
        writing.push((pid, run.interface));
    }
    if writing.is_empty() {
        return None;
    }
    let mut evidence = Vec::new();
    if let Some(conf) = raw
        .get(UDHCPC_CONF)
        .filter(|f| f.state == FileState::Present)
    {
        let vars = shell_assignments(&conf.text().unwrap_or_default());
        if let Some(a) = last_assignment(&vars, "RESOLV_CONF") {
            if a.value != "/etc/resolv.conf" {
                return None;
            }
            evidence.push(format!(
                "{UDHCPC_CONF}:{}: RESOLV_CONF=\"{}\"",
                a.line, a.value
            ));
        }
        if let Some(a) = last_assignment(&vars, "dns") {
            evidence.push(format!(
                "{UDHCPC_CONF}:{}: dns=\"{}\"",
                a.line,
                crate::text::escape(&a.value)
            ));
        }
        if let Some(a) = last_assignment(&vars, "NO_DNS") {
            let off: Vec<&str> = a.value.split_whitespace().collect();
            writing.retain(|(_, i)| !off.contains(&i.as_str()));
        }
    }
    if let Some(interfaces) = raw.get(INTERFACES).and_then(|f| f.text()) {
        writing.retain(|(_, i)| peer_dns(&interfaces, i).is_none_or(|v| v == "yes"));
    }
    let (pids, served): (Vec<String>, Vec<String>) = writing
        .iter()
        .map(|(p, i)| (p.to_string(), crate::text::escape(i).into_owned()))
        .unzip();
    if pids.is_empty() {
        return None;
    }
    evidence.insert(
        0,
        format!(
            "udhcpc runs (pid {}, for {}) with its default script, {UDHCPC_SCRIPT}",
            pids.join(", "),
            served.join(", ")
        ),
    );
    // What it writes: `search` and `nameserver` lines only.
    let edited = text
        .lines()
        .enumerate()
        .find(|(_, l)| {
            let l = l.trim();
            !l.is_empty() && !l.starts_with("search ") && !l.starts_with("nameserver ")
        })
        .map(|(i, l)| {
            format!(
                "/etc/resolv.conf:{}: {} is a line udhcpc's script does not write: it was added since",
                i + 1,
                crate::text::escape(l.trim())
            )
        });
    Some(ResolvWriter {
        writer: Writer::Udhcpc,
        evidence,
        edited,
        linked: None,
    })
}

/// The `peer-dns` value of `iface`'s stanza in /etc/network/interfaces (ifupdown,
/// ifupdown-ng: an `iface NAME` line opens it, the next `iface`, `auto`, `allow-*`,
/// `mapping`, `source` or `source-directory` line ends it).
fn peer_dns(interfaces: &str, iface: &str) -> Option<String> {
    let mut inside = false;
    let mut value = None;
    for line in interfaces.lines() {
        let mut words = line.split_whitespace();
        let Some(first) = words.next().filter(|w| !w.starts_with('#')) else {
            continue;
        };
        match first {
            "iface" => inside = words.next() == Some(iface),
            "auto" | "mapping" | "source" | "source-directory" => inside = false,
            w if w.starts_with("allow-") => inside = false,
            "peer-dns" if inside => value = words.next().map(str::to_owned),
            _ => {}
        }
    }
    value
}

/// What a udhcpc command line says: the script it runs and the interface it serves, read
/// as busybox's getopt32 reads it (networking/udhcp/dhcpc.c `udhcpc_main`: the options
/// `CV:F:i:np:qRr:s:T:+t:+SA:+O:*ox:*fBba::P:v`, and their long names).
#[derive(Debug, PartialEq, Eq)]
struct UdhcpcCommand {
    script: Option<String>,
    interface: String,
}

impl UdhcpcCommand {
    fn parse(cmdline: &[u8]) -> UdhcpcCommand {
        const WITH_VALUE: &str = "VFiprsTtAOxP";
        const LONG_WITH_VALUE: [&str; 11] = [
            "vendorclass",
            "fqdn",
            "interface",
            "pidfile",
            "request",
            "script",
            "timeout",
            "retries",
            "tryagain",
            "request-option",
            "client-port",
        ];
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .skip(1)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let mut out = UdhcpcCommand {
            script: None,
            interface: UDHCPC_INTERFACE.to_owned(),
        };
        command_options(&args, WITH_VALUE, "a", &LONG_WITH_VALUE, |opt, value| {
            let value = value.unwrap_or_default().to_owned();
            match opt {
                "s" | "script" => out.script = Some(value),
                "i" | "interface" => out.interface = value,
                _ => {}
            }
        });
        out
    }
}

/// The options of a command line (`args`, after the program's name) that take a value, as
/// getopt_long reads them, each handed to `set` with its value (None: the line ended before
/// it): a short one of `with_value` takes the rest of its word, else the next argument; one
/// of `attached_only` takes only the rest of its word (an optional value: busybox's `a::`);
/// a long one takes `--name=value`, or the next argument where it is in
/// `long_with_value`. `--` ends the options; other words are skipped.
fn command_options(
    args: &[String],
    with_value: &str,
    attached_only: &str,
    long_with_value: &[&str],
    mut set: impl FnMut(&str, Option<&str>),
) {
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--" {
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            match long.split_once('=') {
                Some((name, value)) => set(name, Some(value)),
                None if long_with_value.contains(&long) => {
                    set(long, args.get(i).map(String::as_str));
                    i += 1;
                }
                None => {}
            }
            continue;
        }
        let Some(flags) = arg.strip_prefix('-').filter(|f| !f.is_empty()) else {
            continue;
        };
        for (at, c) in flags.char_indices() {
            if with_value.contains(c) {
                let rest = &flags[at + c.len_utf8()..];
                if rest.is_empty() {
                    set(&c.to_string(), args.get(i).map(String::as_str));
                    i += 1;
                } else {
                    set(&c.to_string(), Some(rest));
                }
                break;
            }
            if attached_only.contains(c) {
                break;
            }
        }
    }
}

/// The pids of `name` the gather recorded, as text.
fn pids(raw: &RawFacts, name: &str) -> Vec<String> {
    match raw.all_pids.get(name) {
        Some(all) if !all.is_empty() => all.iter().map(u32::to_string).collect(),
        _ => raw.pids.get(name).map(u32::to_string).into_iter().collect(),
    }
}

/// A `NAME=value` line of a file sh sources.
#[derive(Debug, PartialEq, Eq)]
struct Assignment {
    name: String,
    value: String,
    line: usize,
}

/// The assignment of `name` in effect once sh has sourced the file of `vars`: its last.
fn last_assignment<'a>(vars: &'a [Assignment], name: &str) -> Option<&'a Assignment> {
    vars.iter().rev().find(|a| a.name == name)
}

/// The plain assignments of a file sh sources (udhcpc.conf, resolvconf.conf, sysconfig),
/// one a line, in order: `NAME=value`, `NAME="value"` or `NAME='value'`, `export` before
/// it or not, a `#` word after it a comment. Lines of other shell (conditions, functions)
/// are passed over: their assignments are not known to run.
///
/// Not [`super::env_lexer`], which reads a systemd `EnvironmentFile=` (the kubelet's) as
/// systemd does (systemd src/basic/env-file.c `parse_env_file_internal`, @0002453b, v254+):
/// these files are sh's, and where the two part, one reader would misread either. A `#`
/// that starts a word begins a comment in sh (POSIX.1-2017 XCU 2.3 Token Recognition,
/// rule 9), so `RESOLV_CONF=no # mine` sets `no`; systemd takes `#` and `;` as comments
/// only at the start of a line and keeps `no # mine`. `export NAME=value` assigns in sh;
/// systemd drops the line (the lexer's `Assignment::exported`). `NAME = value` is a command
/// in sh, no assignment (XCU 2.10.2 rule 7: an ASSIGNMENT_WORD is a name right before its
/// `=`); systemd trims the blanks and assigns. An unquoted value ends at a blank in sh,
/// while systemd keeps the blanks inside it.
fn shell_assignments(text: &str) -> Vec<Assignment> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
        let Some((name, rest)) = line.split_once('=') else {
            continue;
        };
        if name.is_empty()
            || name.starts_with(|c: char| c.is_ascii_digit())
            || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            continue;
        }
        let value = match rest.chars().next() {
            Some(q @ ('"' | '\'')) => match rest[1..].find(q) {
                Some(end) => rest[1..1 + end].to_owned(),
                None => continue,
            },
            _ => rest
                .split(|c: char| c.is_whitespace() || c == ';')
                .next()
                .unwrap_or_default()
                .to_owned(),
        };
        out.push(Assignment {
            name: name.to_owned(),
            value,
            line: i + 1,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dhcpcd_conf_nohook_at_the_top_and_in_blocks() {
        let conf = DhcpcdConf::parse(
            "# nohook resolv.conf\nhostname\nnohook wpa_supplicant,20-resolv.conf # keep mine\nstatic domain_name_servers=192.0.2.53 198.51.100.53\ninterface eth1\nnohook resolv.conf\nssid home\nnohook resolv.conf\n",
        );
        assert_eq!(conf.global_nohook, Some(3));
        assert_eq!(
            conf.static_servers,
            Some((4, "192.0.2.53 198.51.100.53".into()))
        );
        assert_eq!(
            conf.blocks,
            vec![DhcpcdBlock {
                pattern: "eth1".into(),
                nohook: Some(6)
            }]
        );
        // A hook of another name, a commented one, one in an ssid block: none at the top.
        let conf = DhcpcdConf::parse(
            "nohook 50-ntp.conf\n#nohook resolv.conf\n;nohook resolv.conf\nnohook ntp.conf # resolv.conf\nssid home\nnohook resolv.conf\n",
        );
        assert_eq!(conf.global_nohook, None);
        assert!(conf.blocks.is_empty());
    }

    #[test]
    fn the_names_dhcpcd_run_hooks_skips_for_the_resolv_conf_hook() {
        for value in [
            "resolv.conf",
            "20-resolv.conf",
            "wpa_supplicant, resolv.conf",
            "wpa_supplicant,resolv.conf",
        ] {
            assert!(names_resolv_hook(value), "{value}");
        }
        // The hook's file is 20-resolv.conf: `20-resolv.conf.sh` matches no file.
        for value in [
            "resolv",
            "20-resolv.conf.sh",
            "21-resolv.conf",
            "resolv.conf.bak",
        ] {
            assert!(!names_resolv_hook(value), "{value}");
        }
    }

    /// The gather looks for a header on the first 64 lines only (gather.sh), and so does
    /// this: a header further down was not seen with the files that go with it.
    #[test]
    fn a_header_is_looked_for_on_the_first_64_lines() {
        let is = |l: &str| l == "# Generated by resolvconf";
        let at = |line: usize| format!("{}# Generated by resolvconf\n", "#\n".repeat(line - 1));
        assert_eq!(header(&at(64), is).map(|h| h.0), Some(64));
        assert_eq!(header(&at(65), is), None);
    }

    #[test]
    fn dhcpcd_command_lines() {
        let run = DhcpcdCommand::parse(b"/usr/sbin/dhcpcd\0-q\0-C\0resolv.conf\0eth0\0");
        assert_eq!(
            run,
            DhcpcdCommand::Options {
                nohook: true,
                config: None
            }
        );
        let run = DhcpcdCommand::parse(
            b"dhcpcd\0--nohook=wpa_supplicant,20-resolv.conf\0-bf/etc/dhcpcd-eth0.conf\0",
        );
        assert_eq!(
            run,
            DhcpcdCommand::Options {
                nohook: true,
                config: Some("/etc/dhcpcd-eth0.conf".into())
            }
        );
        // A value that looks like an option is the value; another hook is not resolv.conf.
        let run =
            DhcpcdCommand::parse(b"dhcpcd\0-e\0-C\0--config\0/etc/d.conf\0--nohook\0ntp.conf\0");
        assert_eq!(
            run,
            DhcpcdCommand::Options {
                nohook: false,
                config: Some("/etc/d.conf".into())
            }
        );
        // dhcpcd 9 and later: compat/setproctitle.c writes `PROGNAME: TITLE` over argv.
        assert_eq!(
            DhcpcdCommand::parse(b"dhcpcd: [manager] [ip4] [ip6]\0\0\0\0"),
            DhcpcdCommand::Title("dhcpcd: [manager] [ip4] [ip6]".into())
        );
    }

    #[test]
    fn udhcpc_command_lines() {
        // ifupdown-ng's dhcp executor (executor-scripts/linux/dhcp).
        let run =
            UdhcpcCommand::parse(b"/sbin/udhcpc\0-b\0-R\0-p\0/var/run/udhcpc.eth1.pid\0-i\0eth1\0");
        assert_eq!(run.interface, "eth1");
        assert_eq!(run.script, None);
        let run = UdhcpcCommand::parse(b"udhcpc\0-fqs/etc/my.script\0--interface=wlan0\0");
        assert_eq!(run.script.as_deref(), Some("/etc/my.script"));
        assert_eq!(run.interface, "wlan0");
        let run = UdhcpcCommand::parse(b"udhcpc\0--script\0/x\0-x\0hostname:n\0");
        assert_eq!(run.script.as_deref(), Some("/x"));
        assert_eq!(run.interface, "eth0");
    }

    #[test]
    fn assignments_of_a_sourced_file() {
        let vars = shell_assignments(
            "# Do not overwrite /etc/resolv.conf\n#RESOLV_CONF=\"no\"\nRESOLV_CONF=\"no\"\nexport NO_DNS='eth1 wlan1' # per interface\nname_servers=192.0.2.53\nif [ -x x ]; then a=1; fi\n",
        );
        let got: Vec<(&str, &str, usize)> = vars
            .iter()
            .map(|a| (a.name.as_str(), a.value.as_str(), a.line))
            .collect();
        assert_eq!(
            got,
            vec![
                ("RESOLV_CONF", "no", 3),
                ("NO_DNS", "eth1 wlan1", 4),
                ("name_servers", "192.0.2.53", 5)
            ]
        );
    }

    #[test]
    fn peer_dns_of_a_stanza() {
        let interfaces =
            "auto eth0\niface eth0 inet dhcp\n\tpeer-dns no\n\nauto eth1\niface eth1 inet dhcp\n";
        assert_eq!(peer_dns(interfaces, "eth0").as_deref(), Some("no"));
        assert_eq!(peer_dns(interfaces, "eth1"), None);
    }
}
