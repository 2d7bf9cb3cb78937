//! firewalld's permanent configuration, read as firewalld loads it at its start and at every
//! `firewall-cmd --reload`: owns [`Firewalld`]. Pure: the parsers take text, and
//! [`Firewalld::from_raw`] reads only what the gather brought back. A file that could not
//! be read, or that firewalld would not load, makes the configuration unknown, never
//! harmless.
//!
//! What firewalld does with it (firewalld/firewalld, src/firewall):
//! - `/etc/firewalld/firewalld.conf` (config/__init__.py.in `FIREWALLD_CONF`): `KEY=VALUE`
//!   lines, stripped; `#` and `;` start comments; a line that does not split into exactly
//!   two parts at `=`, an empty value or a key seen before is skipped (the first definition
//!   wins: core/io/firewalld_conf.py `read`). `DefaultZone` falls back to `public`
//!   (`FALLBACK_ZONE`), `FirewallBackend` to `nftables` (`FALLBACK_FIREWALL_BACKEND`).
//! - zones: every `*.xml` of `/usr/lib/firewalld/zones`, then of `/etc/firewalld/zones`,
//!   in name order; a file of `/etc` replaces the shipped zone of its name (core/fw.py
//!   `_loader_zones`). The zone's name is the file's name without `.xml`.
//! - a zone (doc/xml/firewalld.zone.xml): `<zone target="ACCEPT|%%REJECT%%|DROP">`, with
//!   `<interface name=""/>` and `<source address=""|mac=""|ipset=""/>` binding traffic to
//!   it. Unspecified, the target is the default: "ICMP will be accepted and everything else
//!   will be rejected"; `ACCEPT` "is special: packets which are not addressed to the host
//!   will be forwarded to their destination regardless of the zone's setting". Traffic from
//!   an interface or source bound to no zone is the default zone's.

use serde::Serialize;

use super::raw::{FileState, RawFacts};

/// firewalld.conf (config/__init__.py.in `FIREWALLD_CONF`).
pub const CONF: &str = "/etc/firewalld/firewalld.conf";
/// The zones firewalld ships, then those of /etc, in the order it loads them.
pub const ZONE_DIRS: [&str; 2] = ["/usr/lib/firewalld/zones", "/etc/firewalld/zones"];
/// The policies an administrator added (firewalld 0.9 and later): they may accept
/// forwarded traffic between zones.
pub const POLICY_DIR: &str = "/etc/firewalld/policies";
/// Direct rules (`firewall-cmd --direct`): iptables rules of their own, which may accept
/// forwarded traffic.
pub const DIRECT: &str = "/etc/firewalld/direct.xml";
/// The directories the gather lists (a `dir` or `missing` record each).
pub const DIRS: [&str; 3] = [ZONE_DIRS[0], ZONE_DIRS[1], POLICY_DIR];
/// flannel's subnet file: the pod network it carries (`FLANNEL_NETWORK`), written by flanneld
/// and by k3s's and RKE2's embedded flannel (Canal's too).
pub const FLANNEL_SUBNET: &str = "/run/flannel/subnet.env";

/// firewalld's own fallback default zone (`FALLBACK_ZONE`).
pub const FALLBACK_ZONE: &str = "public";
/// firewalld's own fallback backend (`FALLBACK_FIREWALL_BACKEND`).
pub const FALLBACK_BACKEND: &str = "nftables";

/// A value and where it was set: `path:line`, or what firewalld falls back to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Setting {
    pub value: String,
    pub from: String,
}

/// The keys of firewalld.conf dnsfix reads, each with its line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FirewalldConf {
    pub default_zone: Option<(String, usize)>,
    pub backend: Option<(String, usize)>,
}

impl FirewalldConf {
    /// firewalld.conf as core/io/firewalld_conf.py `read` takes it.
    pub fn parse(text: &str) -> FirewalldConf {
        let mut conf = FirewalldConf::default();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            let pair: Vec<&str> = line.split('=').map(str::trim).collect();
            let [key, value] = pair[..] else { continue };
            if value.is_empty() {
                continue;
            }
            let slot = match key {
                "DefaultZone" => &mut conf.default_zone,
                "FirewallBackend" => &mut conf.backend,
                _ => continue,
            };
            // A duplicate is an error firewalld logs and skips: the first one counts.
            if slot.is_none() {
                *slot = Some((value.to_owned(), n + 1));
            }
        }
        conf
    }
}

/// What binds traffic to a zone by its source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum ZoneSource {
    /// `address="10.42.0.0/16"`.
    Address(String),
    /// `mac=` or `ipset=`: addresses dnsfix does not see.
    Other(String),
}

/// One zone of the permanent configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Zone {
    pub name: String,
    /// The file it was loaded from (the one of /etc where it replaces a shipped one).
    pub path: String,
    /// `target=` as written; `None` is the default target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub interfaces: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<ZoneSource>,
    /// `<forward/>`: intra-zone forwarding (firewalld 1.0 and later; its shipped zones have
    /// it), between the interfaces and sources bound to the zone by name, whatever its
    /// target (firewalld.zone(5)).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub forward: bool,
}

impl Zone {
    /// A zone file as firewalld's zone reader takes it: the root element `zone`, its
    /// `target`, and the `interface` and `source` elements directly inside it (a rich
    /// rule's own `<source>` binds nothing). `Err` with why for a file that is not
    /// well-formed enough to tell, which firewalld refuses too.
    pub fn parse(name: &str, path: &str, text: &str) -> Result<Zone, String> {
        // roxmltree says where (`… at 3:14`), or that the file ends too soon.
        let doc = roxmltree::Document::parse(text).map_err(|e| e.to_string())?;
        let root = doc.root_element();
        if root.tag_name().name() != "zone" {
            return Err(format!(
                "<{}> where the root <zone> belongs",
                root.tag_name().name()
            ));
        }
        let mut zone = Zone {
            name: name.to_owned(),
            path: path.to_owned(),
            target: root.attribute("target").map(str::to_owned),
            interfaces: Vec::new(),
            sources: Vec::new(),
            forward: false,
        };
        for el in root.children().filter(roxmltree::Node::is_element) {
            let attr = |name: &str| el.attribute(name).map(str::to_owned);
            match el.tag_name().name() {
                "interface" => zone
                    .interfaces
                    .push(attr("name").ok_or("an <interface> without a name")?),
                "forward" => zone.forward = true,
                "source" => zone.sources.push(match attr("address") {
                    Some(a) => ZoneSource::Address(a),
                    None => ZoneSource::Other(
                        attr("ipset")
                            .map(|s| format!("ipset {s}"))
                            .or_else(|| attr("mac").map(|m| format!("mac {m}")))
                            .ok_or("a <source> without an address, mac or ipset")?,
                    ),
                }),
                _ => {}
            }
        }
        Ok(zone)
    }

    /// Its target accepts every packet no rule of it matched, forwarded ones included.
    pub fn accepts(&self) -> bool {
        self.target.as_deref() == Some("ACCEPT")
    }

    /// `name (path)`, and the target where it is not the default.
    pub fn describe(&self) -> String {
        match &self.target {
            Some(t) => format!("zone {} ({}, target {t})", self.name, self.path),
            None => format!("zone {} ({}, default target)", self.name, self.path),
        }
    }
}

/// firewalld's permanent configuration on one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Firewalld {
    /// Its zone directory or firewalld.conf is there.
    pub installed: bool,
    pub default_zone: Setting,
    pub backend: Setting,
    /// The zones firewalld loads, by name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<Zone>,
    /// Files of it that could not be read, or that firewalld would not load, with why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<String>,
    /// `/etc/firewalld/direct.xml` where it holds rules or passthroughs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direct_rules: Option<String>,
    /// The policies of /etc/firewalld/policies.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub policies: Vec<String>,
}

impl Firewalld {
    pub fn from_raw(raw: &RawFacts) -> Firewalld {
        let present = |p: &str| raw.get(p).is_some_and(|f| f.state != FileState::Missing);
        let mut unread = Vec::new();
        let conf = match raw.get(CONF) {
            Some(f) if f.state == FileState::Present && !f.truncated => {
                FirewalldConf::parse(&String::from_utf8_lossy(&f.content))
            }
            Some(f) if f.state == FileState::Missing => FirewalldConf::default(),
            Some(_) => {
                unread.push(format!("{CONF} could not be read"));
                FirewalldConf::default()
            }
            None => FirewalldConf::default(),
        };
        let setting = |v: Option<(String, usize)>, fallback: &str| match v {
            Some((value, line)) => Setting {
                value,
                from: format!("{CONF}:{line}"),
            },
            None => Setting {
                value: fallback.to_owned(),
                from: "firewalld's default".into(),
            },
        };
        let mut zones: Vec<Zone> = Vec::new();
        for dir in ZONE_DIRS {
            if raw
                .get(dir)
                .is_some_and(|f| f.state == FileState::Unreadable)
            {
                unread.push(format!("{dir}/ could not be listed"));
            }
            for (path, f) in raw.files_in(dir) {
                let Some(name) = path.rsplit('/').next().and_then(|n| n.strip_suffix(".xml"))
                else {
                    continue;
                };
                let text = match (f.state, f.truncated) {
                    (FileState::Present, false) => String::from_utf8_lossy(&f.content),
                    (FileState::Missing, _) => continue,
                    _ => {
                        unread.push(format!("{path} could not be read"));
                        continue;
                    }
                };
                match Zone::parse(name, path, &text) {
                    Ok(zone) => {
                        zones.retain(|z| z.name != zone.name);
                        zones.push(zone);
                    }
                    Err(why) => unread.push(format!("{path} does not load: {why}")),
                }
            }
        }
        zones.sort_by(|a, b| a.name.cmp(&b.name));
        let direct_rules = raw.get(DIRECT).and_then(|f| match f.state {
            FileState::Present => {
                let text = String::from_utf8_lossy(&f.content);
                (text.contains("<rule") || text.contains("<passthrough")).then(|| DIRECT.to_owned())
            }
            FileState::Unreadable => {
                unread.push(format!("{DIRECT} could not be read"));
                None
            }
            _ => None,
        });
        let policies = raw
            .files_in(POLICY_DIR)
            .filter(|(p, f)| p.ends_with(".xml") && f.state != FileState::Missing)
            .map(|(p, _)| p.to_owned())
            .collect();
        Firewalld {
            installed: present(CONF) || ZONE_DIRS.iter().any(|d| present(d)),
            default_zone: setting(conf.default_zone, FALLBACK_ZONE),
            backend: setting(conf.backend, FALLBACK_BACKEND),
            zones,
            unread,
            direct_rules,
            policies,
        }
    }

    pub fn zone(&self, name: &str) -> Option<&Zone> {
        self.zones.iter().find(|z| z.name == name)
    }
}

/// `FLANNEL_NETWORK` of flannel's subnet.env, with its line: the whole pod network.
pub fn flannel_network(text: &str) -> Option<(String, usize)> {
    text.lines().enumerate().find_map(|(n, l)| {
        let v = l.trim().strip_prefix("FLANNEL_NETWORK=")?.trim();
        (!v.is_empty()).then(|| (v.to_owned(), n + 1))
    })
}

/// Whether the network `outer` (`address/prefix`, an IPv4 prefix also as a netmask, as
/// firewalld takes it; a bare address is one host) holds all of the network `inner`.
/// `None` where either is no network.
pub fn covers(outer: &str, inner: &str) -> Option<bool> {
    let (oa, op) = network(outer)?;
    let (ia, ip) = network(inner)?;
    let bits = |a: std::net::IpAddr| match a {
        std::net::IpAddr::V4(v) => (u128::from(u32::from(v)) << 96, 32u32),
        std::net::IpAddr::V6(v) => (u128::from(v), 128u32),
    };
    let ((ob, of), (ib, ifam)) = (bits(oa), bits(ia));
    if of != ifam {
        return Some(false);
    }
    if op > ip {
        return Some(false);
    }
    // Both are kept in the top bits of a u128: the prefix masks from the top.
    let shift = 128 - op;
    let mask = if shift >= 128 { 0 } else { u128::MAX << shift };
    Some(ob & mask == ib & mask)
}

/// An address and its prefix length.
pub fn network(text: &str) -> Option<(std::net::IpAddr, u32)> {
    let (addr, prefix) = match text.trim().split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (text.trim(), None),
    };
    let addr: std::net::IpAddr = addr.parse().ok()?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    let prefix = match prefix {
        None => max,
        Some(p) => match p.parse::<u32>() {
            Ok(n) => n,
            // An IPv4 netmask (255.255.0.0): its leading ones.
            Err(_) => {
                let mask: std::net::Ipv4Addr = p.parse().ok()?;
                let m = u32::from(mask);
                (m.leading_ones() + m.trailing_zeros() == 32 && addr.is_ipv4())
                    .then_some(m.leading_ones())?
            }
        },
    };
    (prefix <= max).then_some((addr, prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// config/zones/public.xml and trusted.xml as firewalld v2.3.0 ships them.
    const PUBLIC: &str = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<zone>\n  <short>Public</short>\n  <description>For use in public areas. You do not trust the other computers on networks to not harm your computer. Only selected incoming connections are accepted.</description>\n  <service name=\"ssh\"/>\n  <service name=\"dhcpv6-client\"/>\n  <forward/>\n</zone>\n";
    const TRUSTED: &str = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<zone target=\"ACCEPT\">\n  <short>Trusted</short>\n  <description>All network connections are accepted.</description>\n  <forward/>\n</zone>\n";

    #[test]
    fn shipped_zones_parse_with_their_targets() {
        let public = Zone::parse("public", "/usr/lib/firewalld/zones/public.xml", PUBLIC)
            .expect("public loads");
        assert_eq!(public.target, None);
        assert!(!public.accepts());
        assert!(public.interfaces.is_empty() && public.sources.is_empty());
        let trusted = Zone::parse("trusted", "/usr/lib/firewalld/zones/trusted.xml", TRUSTED)
            .expect("trusted loads");
        assert!(trusted.accepts());
    }

    /// What `firewall-cmd --permanent --zone=trusted --add-source=10.42.0.0/16` (k3s's
    /// requirements page) and `--add-interface=cni0` write; a rich rule's own source binds
    /// nothing, nor does a commented-out one.
    #[test]
    fn sources_and_interfaces_directly_in_the_zone_bind() {
        let text = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<zone target='ACCEPT'>\n  <short>Trusted</short>\n  <interface name=\"cni0\"/>\n  <source address=\"10.42.0.0/16\"/>\n  <source ipset=\"pods\"/>\n  <!-- <source address=\"10.43.0.0/16\"/> -->\n  <rule family=\"ipv4\">\n    <source address=\"192.0.2.0/24\"/>\n    <accept/>\n  </rule>\n  <forward/>\n</zone>\n";
        let zone = Zone::parse("trusted", "/etc/firewalld/zones/trusted.xml", text).expect("loads");
        assert_eq!(zone.interfaces, ["cni0"]);
        assert_eq!(
            zone.sources,
            [
                ZoneSource::Address("10.42.0.0/16".into()),
                ZoneSource::Other("ipset pods".into())
            ]
        );
        assert!(zone.accepts());
    }

    #[test]
    fn a_zone_file_firewalld_would_not_load_is_an_error() {
        for bad in [
            "",
            "<zone>\n<interface name=\"eth0\"/>\n",
            "<zone><source/></zone>",
            "<zone target=ACCEPT></zone>",
            "<zone></zone><zone></zone>",
            "<zone><interface name=\"eth0></zone>",
            "<policy></policy>",
            "</zone>",
        ] {
            assert!(Zone::parse("z", "/z.xml", bad).is_err(), "{bad:?} parsed");
        }
        let z = Zone::parse("z", "/z.xml", "<zone><interface name=\"a&amp;b\"/></zone>")
            .expect("loads");
        assert_eq!(z.interfaces, ["a&b"]);
    }

    /// config/firewalld.conf as firewalld v2.3.0 ships it, shortened: comments, then its
    /// keys.
    #[test]
    fn firewalld_conf_keys_with_their_lines() {
        let text = "# firewalld config file\n\n# default zone\n# Default: public\nDefaultZone=public\n\nCleanupOnExit=yes\n# Default: nftables\nFirewallBackend=nftables\n";
        let conf = FirewalldConf::parse(text);
        assert_eq!(conf.default_zone, Some(("public".into(), 5)));
        assert_eq!(conf.backend, Some(("nftables".into(), 9)));
    }

    /// firewalld_conf.py: spaces around `=` go, `;` comments too, a second definition, an
    /// empty value and a line with two `=` are skipped.
    #[test]
    fn firewalld_conf_is_read_as_firewalld_reads_it() {
        let text = "; comment\n  DefaultZone = trusted \nDefaultZone=public\nFirewallBackend=\nFirewallBackend=iptables=x\n";
        let conf = FirewalldConf::parse(text);
        assert_eq!(conf.default_zone, Some(("trusted".into(), 2)));
        assert_eq!(conf.backend, None);
        assert_eq!(FirewalldConf::parse(""), FirewalldConf::default());
    }

    #[test]
    fn networks_cover_networks() {
        assert_eq!(covers("10.42.0.0/16", "10.42.0.0/16"), Some(true));
        assert_eq!(covers("10.0.0.0/8", "10.42.0.0/16"), Some(true));
        assert_eq!(covers("10.42.0.0/255.255.0.0", "10.42.0.0/16"), Some(true));
        assert_eq!(covers("10.42.0.0/24", "10.42.0.0/16"), Some(false));
        assert_eq!(covers("10.43.0.0/16", "10.42.0.0/16"), Some(false));
        assert_eq!(covers("10.42.1.7", "10.42.0.0/16"), Some(false));
        assert_eq!(covers("fd00::/8", "fd00:42::/56"), Some(true));
        assert_eq!(covers("fd00::/8", "10.42.0.0/16"), Some(false));
        assert_eq!(covers("0.0.0.0/0", "10.42.0.0/16"), Some(true));
        assert_eq!(covers("0.0.0.0/0", "192.168.0.0/16"), Some(true));
        assert_eq!(covers("not-a-net", "10.42.0.0/16"), None);
        assert_eq!(covers("10.0.0.0/33", "10.42.0.0/16"), None);
    }

    #[test]
    fn flannel_network_from_its_subnet_file() {
        let text = "FLANNEL_NETWORK=10.42.0.0/16\nFLANNEL_SUBNET=10.42.0.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n";
        assert_eq!(flannel_network(text), Some(("10.42.0.0/16".into(), 1)));
        assert_eq!(flannel_network("FLANNEL_SUBNET=10.42.0.1/24\n"), None);
    }

    /// A zone of /etc replaces the shipped one of its name; an unreadable zone file is
    /// said, never skipped.
    #[test]
    fn zones_of_etc_replace_the_shipped_ones() {
        let mut raw = RawFacts::default();
        raw.file(CONF, FileState::Present, Some(b"DefaultZone=public\n"));
        raw.file(ZONE_DIRS[0], FileState::Directory, None);
        raw.file(
            "/usr/lib/firewalld/zones/public.xml",
            FileState::Present,
            Some(PUBLIC.as_bytes()),
        );
        raw.file(
            "/usr/lib/firewalld/zones/trusted.xml",
            FileState::Present,
            Some(TRUSTED.as_bytes()),
        );
        raw.file(ZONE_DIRS[1], FileState::Directory, None);
        raw.file(
            "/etc/firewalld/zones/trusted.xml",
            FileState::Present,
            Some(b"<zone target=\"ACCEPT\"><source address=\"10.42.0.0/16\"/></zone>"),
        );
        raw.file("/etc/firewalld/zones/work.xml", FileState::Unreadable, None);
        let fw = Firewalld::from_raw(&raw);
        assert!(fw.installed);
        assert_eq!(fw.default_zone.from, format!("{CONF}:1"));
        assert_eq!(fw.backend.value, "nftables");
        let trusted = fw.zone("trusted").expect("trusted");
        assert_eq!(trusted.path, "/etc/firewalld/zones/trusted.xml");
        assert_eq!(trusted.sources.len(), 1);
        assert_eq!(fw.zones.len(), 2);
        assert_eq!(
            fw.unread,
            ["/etc/firewalld/zones/work.xml could not be read"]
        );
        assert!(!Firewalld::from_raw(&RawFacts::default()).installed);
    }
}
