//! Who answers DNS in the node's network namespace: the UDP sockets bound to port 53, from
//! the kernel's socket tables /proc/net/udp and /proc/net/udp6 (net/ipv4/udp.c
//! `udp4_format_sock`, net/ipv6/datagram.c `__ip6_dgram_sock_seq_show`). A row's second
//! column is the local address, `ADDR:PORT` in hex: the port in host order (`0035` is 53),
//! the IPv4 address its network-order bytes printed as one native integer (127.0.0.53 is
//! `3500007F` on a little-endian machine, `7F000035` on a big-endian one), the IPv6 address
//! as four such words.

use std::net::Ipv4Addr;

/// The kernel's table of IPv4 UDP sockets, in the reader's network namespace.
pub const UDP: &str = "/proc/net/udp";
/// The same for IPv6 sockets; one bound to `::` takes IPv4 too unless it is IPv6-only.
pub const UDP6: &str = "/proc/net/udp6";

/// The local addresses of a socket table's unconnected sockets (state `07`, the kernel's
/// TCP_CLOSE, which UDP uses for a socket with no peer: a server's), as `(address, port)`
/// hex strings. A connected one with local port 53 is a client's.
fn local_addresses(table: &str) -> impl Iterator<Item = (&str, &str)> {
    table
        .lines()
        .filter_map(|line| {
            let mut columns = line.split_whitespace().skip(1);
            let (local, state) = (columns.next()?, columns.nth(1)?);
            (state == "07").then_some(local)
        })
        .filter_map(|local| local.split_once(':'))
}

/// A socket of the IPv4 table is bound to port 53 on `addr`, or on every address
/// (0.0.0.0). The address is matched in either byte order, since which one the node uses
/// does not show. The other spelling is another address (10.96.0.10 reads as 10.0.96.10),
/// so a server there counts too: never a stub's, and rare for a link-local or service
/// address.
pub fn bound_53_v4(table: &str, addr: Ipv4Addr) -> bool {
    bound_53_to(table, addr) || bound_53_to(table, Ipv4Addr::UNSPECIFIED)
}

/// A socket of the IPv4 table is bound to port 53 of `addr` itself (not to every address:
/// one on 0.0.0.0 answers at `addr` only where `addr` is the node's own, which the table
/// does not say).
pub fn bound_53_to(table: &str, addr: Ipv4Addr) -> bool {
    let octets = addr.octets();
    let spellings = [
        format!("{:08X}", u32::from_le_bytes(octets)),
        format!("{:08X}", u32::from_be_bytes(octets)),
    ];
    local_addresses(table)
        .any(|(a, port)| port == "0035" && spellings.iter().any(|s| s.eq_ignore_ascii_case(a)))
}

/// A socket of the IPv6 table is bound to port 53 of `addr` itself: the table writes an
/// address as four 32-bit words, each in the kernel's byte order.
pub fn bound_53_to6(table: &str, addr: std::net::Ipv6Addr) -> bool {
    let o = addr.octets();
    let words = |le: bool| -> String {
        o.chunks(4)
            .map(|w| {
                let w = [w[0], w[1], w[2], w[3]];
                format!(
                    "{:08X}",
                    if le {
                        u32::from_le_bytes(w)
                    } else {
                        u32::from_be_bytes(w)
                    }
                )
            })
            .collect()
    };
    let spellings = [words(true), words(false)];
    local_addresses(table)
        .any(|(a, port)| port == "0035" && spellings.iter().any(|s| s.eq_ignore_ascii_case(a)))
}

/// A socket of the IPv6 table is bound to port 53 on every address (`::`).
pub fn bound_53_any6(table: &str) -> bool {
    local_addresses(table).any(|(a, port)| port == "0035" && a.bytes().all(|b| b == b'0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read from a network namespace of Linux 6.18 (this repository's build machine): a
    /// dnsmasq bound to 127.0.0.53 (`--bind-interfaces --listen-address=127.0.0.53`).
    const STUB: &str = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops            \n 2412: 3500007F:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 6220938 2 00000000fed30b06 0       \n";

    /// The same kernel, another namespace: a socket on 127.0.0.1:5353, a client connected to
    /// 127.0.0.53:53, one on an ephemeral port of every address; and in udp6 a server
    /// bound to [::]:53.
    const CLIENTS: &str = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops            \n 2414: 0100007F:14E9 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 6228322 2 00000000e6ade3b9 0       \n 4809: 0100007F:9E44 3500007F:0035 01 00000000:00000000 00:00000000 00000000     0        0 6228323 2 00000000173df4fd 0       \n15846: 00000000:C961 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 6228324 2 00000000795caec1 0       \n";
    const ANY6: &str = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n13498: 00000000000000000000000000000000:0035 00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 6228321 2 00000000c16c9da5 0\n";

    #[test]
    fn a_server_on_the_stub_or_every_address_answers_there() {
        let stub = Ipv4Addr::new(127, 0, 0, 53);
        assert!(bound_53_v4(STUB, stub));
        assert!(!bound_53_v4(STUB, Ipv4Addr::new(127, 0, 0, 54)));
        // A client talking to the stub is not a server there; port 53 elsewhere neither.
        assert!(!bound_53_v4(CLIENTS, stub));
        assert!(!bound_53_any6(CLIENTS));
        assert!(bound_53_any6(ANY6));
        // 0.0.0.0:53 answers on every address; a big-endian node spells 127.0.0.53 the
        // other way round.
        let any = STUB.replace("3500007F:0035", "00000000:0035");
        assert!(bound_53_v4(&any, Ipv4Addr::new(127, 0, 0, 54)));
        let big_endian = STUB.replace("3500007F", "7F000035");
        assert!(bound_53_v4(&big_endian, stub));
        assert!(!bound_53_v4("", stub));
        // Bound to the address itself, not every address.
        assert!(bound_53_to(STUB, stub));
        assert!(!bound_53_to(&any, stub));
        // IPv6: four words, each in the kernel's byte order (fd00::10 on little-endian).
        let cache6: std::net::Ipv6Addr = "fd00::10".parse().expect("address");
        let bound6 = ANY6.replace(
            "00000000000000000000000000000000:0035",
            "000000FD000000000000000010000000:0035",
        );
        assert!(bound_53_to6(&bound6, cache6));
        assert!(!bound_53_to6(ANY6, cache6));
        assert!(!bound_53_any6(&bound6));
        // A socket connected from port 53 (state 01) is no server.
        let connected = STUB.replace(" 07 00000000", " 01 00000000");
        assert!(!bound_53_v4(&connected, stub));
    }

    /// [`NodeFacts::dns_answers_on`](crate::facts::NodeFacts::dns_answers_on) on the node of
    /// the fixture with the stub listener off: each table decides in its own right; a table
    /// not read whole (cut short) cannot say no, a missing udp6 (IPv6 off) has no sockets.
    #[test]
    fn either_table_can_say_yes_and_only_whole_ones_say_no() {
        use crate::facts::NodeFacts;
        use crate::facts::raw::{FileState, RawFacts, RawFile};
        let stub = Ipv4Addr::new(127, 0, 0, 53);
        let base = crate::testing::rules_fixture(
            "DNS-HOST-RESOLVER-DOWN/kubeadm-static-stub-listener-off",
        );
        let facts = |raw: &RawFacts| NodeFacts::from_raw("node1", raw);
        let with = |path: &str, edit: &dyn Fn(&mut RawFile)| {
            let mut raw = base.clone();
            edit(raw.files.get_mut(path).expect("gathered"));
            raw
        };
        let set = |text: &'static str| move |f: &mut RawFile| f.content = text.as_bytes().into();
        assert_eq!(facts(&base).dns_answers_on([stub]), Some(false));
        assert_eq!(
            facts(&with(UDP6, &set(ANY6))).dns_answers_on([stub]),
            Some(true)
        );
        assert_eq!(
            facts(&with(UDP, &set(STUB))).dns_answers_on([stub]),
            Some(true)
        );
        let cut = |f: &mut RawFile| f.truncated = true;
        assert_eq!(facts(&with(UDP, &cut)).dns_answers_on([stub]), None);
        assert_eq!(facts(&with(UDP6, &cut)).dns_answers_on([stub]), None);
        let gone = |f: &mut RawFile| f.state = FileState::Missing;
        assert_eq!(
            facts(&with(UDP6, &gone)).dns_answers_on([stub]),
            Some(false)
        );
        assert_eq!(facts(&with(UDP, &gone)).dns_answers_on([stub]), None);
    }
}
