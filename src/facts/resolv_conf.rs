//! `resolv.conf(5)` as kubelet reads it: owns [`ResolvConf`] and the loopback test used by the
//! kubelet-loopback and stub-symlink rules (R1, R4). Pure: it never touches the network or the
//! filesystem; [`ResolvConf::parse`] takes the file's text (possibly produced by
//! `String::from_utf8_lossy`, so binary garbage is expected and tolerated).
//!
//! Semantics follow kubelet `pkg/kubelet/network/dns/dns.go` `parseResolvConf`, which is what
//! decides the nameservers of every `dnsPolicy: Default` pod (and the search list of every
//! `ClusterFirst` pod):
//! - `nameserver` lines accumulate, in file order; only the first word after the keyword counts;
//! - the LAST `search` line wins (an empty `search` line resets the list);
//! - the LAST `options` line wins (kubelet does not merge option lines, unlike glibc);
//! - keywords are case-sensitive and must be the first word of the line.
//!
//! Deliberate differences from kubelet, both in the direction of what glibc `res_init` does:
//! - a comment starts at the first `#` or `;` anywhere on the line, not only at its start
//!   (kubelet would pass `nameserver 1.1.1.1 # lan` through verbatim, but no address or domain
//!   can contain those characters, so dropping the tail only removes noise);
//! - `domain` is recorded (kubelet ignores it; glibc treats it as a one-entry search list).

use std::net::IpAddr;

use serde::Serialize;

/// The parsed view of one resolv.conf file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub struct ResolvConf {
    /// Every `nameserver` line, in file order. Kubelet hands at most three of them to a pod
    /// (`MaxDNSNameservers`), but all are kept here so the excess can be reported.
    pub nameservers: Vec<Nameserver>,
    /// Domains of the last `search` line, as written (trailing dots kept; see
    /// [`ResolvConf::kubelet_search`] for kubelet's normalised form).
    pub search: Vec<String>,
    /// 1-based line of the `search` line that won, if any.
    pub search_line: Option<usize>,
    /// Words of the last `options` line, e.g. `["ndots:2", "timeout:2"]`.
    pub options: Vec<String>,
    /// 1-based line of the `options` line that won, if any.
    pub options_line: Option<usize>,
    /// Value of the last `domain` line.
    pub domain: Option<String>,
    /// 1-based line of that `domain` line.
    pub domain_line: Option<usize>,
    /// `nameserver` lines with no address as kubelet reads them (pkg/kubelet/network/dns
    /// parseResolvConf: only a line whose first non-blank character is `#` is a comment to
    /// it, and `nameserver # x` names the server `#`). Kubelet 1.13 and later fail with
    /// "nameserver list is empty" for such a file, for every pod.
    pub empty_nameserver_lines: Vec<usize>,
}

/// One `nameserver` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub struct Nameserver {
    /// The address exactly as written, e.g. `fe80::1%eth0`.
    pub address: String,
    /// The parsed address (any `%zone` suffix removed first); `None` when it is not an IP.
    pub ip: Option<IpAddr>,
    /// 1-based line number.
    pub line: usize,
}

impl ResolvConf {
    /// Parses resolv.conf text. Never fails and never panics: unknown keywords and junk lines
    /// are skipped, exactly as kubelet and glibc skip them.
    pub fn parse(text: &str) -> ResolvConf {
        let mut conf = ResolvConf::default();
        // Split on '\n' only; a CR left by CRLF files is whitespace and vanishes in
        // split_whitespace, as Go's strings.Fields drops it in kubelet.
        for (index, raw) in text.split('\n').enumerate() {
            let line = index + 1;
            let trimmed = raw.trim();
            if !trimmed.starts_with('#') && trimmed.split_whitespace().eq(["nameserver"]) {
                conf.empty_nameserver_lines.push(line);
            }
            let mut words = strip_comment(raw).split_whitespace();
            let Some(keyword) = words.next() else {
                continue;
            };
            match keyword {
                "nameserver" => {
                    if let Some(address) = words.next() {
                        conf.nameservers.push(Nameserver {
                            address: address.to_string(),
                            ip: parse_ip(address),
                            line,
                        });
                    }
                }
                "search" => {
                    conf.search = words.map(str::to_string).collect();
                    conf.search_line = Some(line);
                }
                "options" => {
                    conf.options = words.map(str::to_string).collect();
                    conf.options_line = Some(line);
                }
                "domain" => {
                    // glibc ignores a bare `domain` line, so it does not clear an earlier one.
                    if let Some(domain) = words.next() {
                        conf.domain = Some(domain.to_string());
                        conf.domain_line = Some(line);
                    }
                }
                _ => {}
            }
        }
        conf
    }

    /// Nameservers in 127.0.0.0/8 or `::1` (see [`is_loopback`]), in file order. A pod that
    /// inherits one of these talks to its own network namespace, not to the node's resolver.
    pub fn loopback_nameservers(&self) -> Vec<&Nameserver> {
        self.nameservers
            .iter()
            .filter(|ns| ns.ip.is_some_and(is_loopback))
            .collect()
    }

    /// Nameservers whose address is not an IP address (kubelet copies them to pods verbatim;
    /// resolvers then skip them).
    pub fn unparseable_nameservers(&self) -> Vec<&Nameserver> {
        self.nameservers
            .iter()
            .filter(|ns| ns.ip.is_none())
            .collect()
    }

    /// The search list as kubelet forms it from this file: a trailing dot is removed and a lone
    /// `.` is dropped, "so the same domain with and without trailing dot will only count once"
    /// (kubelet dns.go `parseResolvConf`). Use this for the search-limit checks (R10).
    pub fn kubelet_search(&self) -> Vec<&str> {
        self.search
            .iter()
            .filter(|domain| domain.as_str() != ".")
            .map(|domain| domain.strip_suffix('.').unwrap_or(domain))
            .collect()
    }
}

/// True for 127.0.0.0/8 and `::1`, and for the IPv4-mapped form `::ffff:127.x.y.z`, which
/// reaches the same loopback listener (systemd-resolved's stub 127.0.0.53, dnsmasq's 127.0.1.1).
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// The address of a resolv.conf `nameserver` value: an IPv4 or IPv6 address, an IPv6
/// link-local one with its zone (`fe80::1%eth0`, which glibc accepts).
pub fn server_address(text: &str) -> Option<IpAddr> {
    match text.split_once('%') {
        Some((addr, zone)) => {
            let ip: std::net::Ipv6Addr = addr.parse().ok()?;
            let zone_ok = !zone.is_empty()
                && zone.len() <= 15
                && zone
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-@".contains(c));
            (ip.is_unicast_link_local() && zone_ok).then_some(IpAddr::V6(ip))
        }
        None => text.parse().ok(),
    }
}

/// The servers of `listed` a resolver can forward to ([`is_real_upstream`]), trimmed,
/// each once, in their order.
pub fn real_upstreams(
    listed: impl IntoIterator<Item = String>,
    cluster: &std::collections::BTreeSet<IpAddr>,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in listed {
        let s = s.trim();
        let real = server_address(s).is_some_and(|ip| is_real_upstream(ip, cluster));
        if real && !out.iter().any(|o| o == s) {
            out.push(s.to_owned());
        }
    }
    out
}

/// A server a resolver can forward to: not loopback, not one of `cluster` (the cluster's
/// own DNS addresses, which would forward back into it), not unspecified, multicast or the
/// broadcast address.
pub fn is_real_upstream(ip: IpAddr, cluster: &std::collections::BTreeSet<IpAddr>) -> bool {
    !is_loopback(ip)
        && !cluster.contains(&ip)
        && !ip.is_unspecified()
        && !ip.is_multicast()
        && ip != IpAddr::V4(std::net::Ipv4Addr::BROADCAST)
}

/// Cuts a line at its first `#` or `;` (glibc resolv.conf(5): "a semicolon (;) or hash
/// character (#) in the first column … comment"; see the module doc for why anywhere).
fn strip_comment(line: &str) -> &str {
    match line.find(['#', ';']) {
        Some(at) => &line[..at],
        None => line,
    }
}

/// Parses a nameserver address, dropping a `%zone` suffix (`fe80::1%eth0`), which glibc
/// accepts for link-local IPv6 but `IpAddr` does not.
fn parse_ip(address: &str) -> Option<IpAddr> {
    let bare = address.split_once('%').map_or(address, |(ip, _zone)| ip);
    bare.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    fn v4(a: u8, b: u8, c: u8, d: u8) -> Option<IpAddr> {
        Some(IpAddr::V4(Ipv4Addr::new(a, b, c, d)))
    }

    #[test]
    fn systemd_resolved_stub_file() {
        // /run/systemd/resolve/stub-resolv.conf as systemd 255 writes it (comment trimmed).
        let text = "# This is /run/systemd/resolve/stub-resolv.conf managed by man:systemd-resolved(8).\n\
                    # Do not edit.\n\
                    #\n\
                    # Run \"resolvectl status\" to see details about the uplink DNS servers\n\
                    # currently in use.\n\
                    \n\
                    nameserver 127.0.0.53\n\
                    options edns0 trust-ad\n\
                    search eu-west-1.compute.internal\n";
        let conf = ResolvConf::parse(text);
        assert_eq!(
            conf.nameservers,
            vec![Nameserver {
                address: "127.0.0.53".into(),
                ip: v4(127, 0, 0, 53),
                line: 7
            }]
        );
        assert_eq!(conf.options, vec!["edns0", "trust-ad"]);
        assert_eq!(conf.options_line, Some(8));
        assert_eq!(conf.search, vec!["eu-west-1.compute.internal"]);
        assert_eq!(conf.search_line, Some(9));
        assert_eq!(conf.loopback_nameservers().len(), 1);
    }

    #[test]
    fn uplink_file_with_nodelocaldns_first() {
        // /run/systemd/resolve/resolv.conf after kubespray's late stage wrote DNS=169.254.25.10
        // into a resolved drop-in (research A2/A6): the cluster IP comes first.
        let text = "nameserver 169.254.25.10\nnameserver 10.0.0.2\nnameserver 1.1.1.1\n\
                    nameserver 8.8.8.8\nsearch default.svc.cluster.local svc.cluster.local\n";
        let conf = ResolvConf::parse(text);
        let addresses: Vec<_> = conf
            .nameservers
            .iter()
            .map(|n| n.address.as_str())
            .collect();
        assert_eq!(
            addresses,
            ["169.254.25.10", "10.0.0.2", "1.1.1.1", "8.8.8.8"]
        );
        assert_eq!(conf.nameservers[3].line, 4);
        assert!(conf.loopback_nameservers().is_empty());
    }

    #[test]
    fn last_search_and_options_win_nameservers_accumulate() {
        let text = "search a.example b.example\noptions ndots:5\nnameserver 10.0.0.1\n\
                    search c.example\nnameserver 10.0.0.2\noptions timeout:1 attempts:3\n";
        let conf = ResolvConf::parse(text);
        assert_eq!(conf.search, vec!["c.example"]);
        assert_eq!(conf.search_line, Some(4));
        assert_eq!(conf.options, vec!["timeout:1", "attempts:3"]);
        assert_eq!(conf.options_line, Some(6));
        assert_eq!(conf.nameservers.len(), 2);
    }

    #[test]
    fn empty_search_line_resets_the_list() {
        let conf = ResolvConf::parse("search openstacklocal\nsearch\n");
        assert!(conf.search.is_empty());
        assert_eq!(conf.search_line, Some(2));
    }

    #[test]
    fn comments_whole_line_and_trailing() {
        let text = "; old style comment\n# nameserver 9.9.9.9\n\
                    nameserver 10.0.0.1 # office\nnameserver 10.0.0.2;backup\n\
                    search corp.example # dhcp\n   # indented comment\n";
        let conf = ResolvConf::parse(text);
        let addresses: Vec<_> = conf
            .nameservers
            .iter()
            .map(|n| n.address.as_str())
            .collect();
        assert_eq!(addresses, ["10.0.0.1", "10.0.0.2"]);
        assert_eq!(conf.nameservers[1].ip, v4(10, 0, 0, 2));
        assert_eq!(conf.search, vec!["corp.example"]);
    }

    #[test]
    fn crlf_tabs_and_no_trailing_newline() {
        let conf = ResolvConf::parse("nameserver\t127.0.1.1\r\nsearch\tlan\r\noptions ndots:1");
        assert_eq!(conf.nameservers[0].address, "127.0.1.1");
        assert_eq!(conf.nameservers[0].ip, v4(127, 0, 1, 1));
        assert_eq!(conf.search, vec!["lan"]);
        assert_eq!(conf.options, vec!["ndots:1"]);
        assert_eq!(conf.options_line, Some(3));
    }

    #[test]
    fn ipv6_zone_and_garbage_addresses() {
        let text = "nameserver fe80::1%eth0\nnameserver ::1\nnameserver dns.example\n\
                    nameserver 10.0.0.1 10.0.0.2\nnameserver 010.0.0.1\n";
        let conf = ResolvConf::parse(text);
        assert_eq!(conf.nameservers[0].address, "fe80::1%eth0");
        assert_eq!(
            conf.nameservers[0].ip,
            Some(IpAddr::V6(Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 1)))
        );
        assert_eq!(
            conf.nameservers[1].ip,
            Some(IpAddr::V6(Ipv6Addr::LOCALHOST))
        );
        assert_eq!(conf.nameservers[2].ip, None);
        // Only the first word after the keyword counts (kubelet takes fields[1]).
        assert_eq!(conf.nameservers[3].address, "10.0.0.1");
        // Leading zeros are rejected, as Go's net.ParseIP (CoreDNS, kubelet) rejects them.
        assert_eq!(conf.nameservers[4].ip, None);
        let unparseable: Vec<_> = conf
            .unparseable_nameservers()
            .iter()
            .map(|n| n.line)
            .collect();
        assert_eq!(unparseable, [3, 5]);
        let loopback: Vec<_> = conf.loopback_nameservers().iter().map(|n| n.line).collect();
        assert_eq!(loopback, [2]);
    }

    /// A `nameserver` line with no address, as kubelet reads it: only a line starting with
    /// `#` is a comment to it; `nameserver # x` names the server `#`, and `;` is no comment.
    #[test]
    fn an_empty_nameserver_line_is_one_kubelet_finds_empty() {
        let conf = ResolvConf::parse(
            "nameserver # from dhcp\n  # nameserver\nnameserver ;x\n\tnameserver \r\nnameserver 192.0.2.53\n",
        );
        assert_eq!(conf.empty_nameserver_lines, vec![4]);
    }

    #[test]
    fn keywords_are_exact_and_case_sensitive() {
        let conf = ResolvConf::parse("Nameserver 1.1.1.1\nnameservers 1.0.0.1\nnameserver\n");
        assert!(conf.nameservers.is_empty());
        assert_eq!(conf.empty_nameserver_lines, vec![3]);
    }

    #[test]
    fn domain_line() {
        let conf = ResolvConf::parse("domain corp.example\nnameserver 10.1.1.1\ndomain\n");
        assert_eq!(conf.domain.as_deref(), Some("corp.example"));
        assert_eq!(conf.domain_line, Some(1));
    }

    #[test]
    fn kubelet_search_normalisation() {
        let conf = ResolvConf::parse("search svc.cluster.local. . cluster.local example.com\n");
        assert_eq!(
            conf.kubelet_search(),
            ["svc.cluster.local", "cluster.local", "example.com"]
        );
        assert_eq!(conf.search.len(), 4);
    }

    #[test]
    fn loopback_classification() {
        let loopbacks = [
            "127.0.0.53",
            "127.0.0.1",
            "127.255.255.254",
            "::1",
            "::ffff:127.0.0.53",
        ];
        for ip in loopbacks {
            assert!(is_loopback(ip.parse().expect("test ip")), "{ip}");
        }
        let others = [
            "169.254.25.10",
            "10.96.0.10",
            "128.0.0.1",
            "::",
            "fe80::1",
            "::ffff:10.0.0.1",
        ];
        for ip in others {
            assert!(!is_loopback(ip.parse().expect("test ip")), "{ip}");
        }
    }

    #[test]
    fn empty_and_whitespace_only() {
        assert_eq!(ResolvConf::parse(""), ResolvConf::default());
        assert_eq!(ResolvConf::parse("\n\n  \t\r\n"), ResolvConf::default());
    }

    #[test]
    fn huge_line_and_binary_bytes() {
        let long = format!(
            "search {}\nnameserver 10.0.0.1\n",
            "a.example ".repeat(100_000)
        );
        let conf = ResolvConf::parse(&long);
        assert_eq!(conf.search.len(), 100_000);
        assert_eq!(conf.nameservers[0].line, 2);

        let bytes =
            b"nameserver \xff\xfe127.0.0.1\n\x00\x01nameserver 10.0.0.9\nnameserver 10.0.0.8\x00\n";
        let conf = ResolvConf::parse(&String::from_utf8_lossy(bytes));
        assert_eq!(conf.nameservers.len(), 2);
        assert_eq!(conf.nameservers[0].ip, None);
        assert_eq!(conf.nameservers[1].ip, None); // NUL glued to the address
        assert_eq!(conf.nameservers[1].line, 3);
    }

    #[test]
    fn never_panics_on_random_input() {
        // Deterministic xorshift so failures reproduce; the alphabet is biased towards the
        // characters the parser reacts to.
        let alphabet: &[u8] = b"nameserver search options domain 127.0.0.1 ::1 %#;\t\r\n\x00\xff.:";
        for bytes in
            crate::testing::random_inputs(0x9e37_79b9_7f4a_7c15, alphabet, 2_000, 200, Some(4))
        {
            let text = String::from_utf8_lossy(&bytes);
            let conf = ResolvConf::parse(&text);
            let lines = text.split('\n').count();
            assert!(
                conf.nameservers
                    .iter()
                    .all(|n| n.line >= 1 && n.line <= lines)
            );
            let _ = conf.loopback_nameservers();
            let _ = conf.kubelet_search();
        }
    }
}
