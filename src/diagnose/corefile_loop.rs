//! Forwarding loops written into the Corefiles themselves: a root `forward .` (the `.:53`
//! block) of CoreDNS or NodeLocal DNSCache whose targets lead back to where the question
//! started. Pure: the Corefiles as read from the cluster and the cluster's own addresses
//! in, the loops out.
//!
//! The path a name outside the cluster takes: CoreDNS's root to one of its own Service
//! ClusterIPs (or a loopback address, in its pod the pod itself) comes back to CoreDNS;
//! NodeLocal DNSCache's root to its own listen address (its root block's `bind`,
//! Kubespray's `nodelocaldns_ip`, the node's nodelocaldns interface) comes back to the
//! cache. One to the other comes back only where the other's root in turn goes back: the
//! cache's `cluster.local:53`, `in-addr.arpa:53` and `ip6.arpa:53` blocks send their zones
//! to CoreDNS by design (Kubespray's nodelocaldns-config.yml.j2 `forwardTarget` at
//! 46dbdd39), and only the root blocks carry names outside the cluster. A file
//! (`/etc/resolv.conf`) or any other server leaves the cluster: whether the pod's
//! resolv.conf loops is DNS-CLUSTER-SELF-FORWARD's question, per node.
//!
//! The loop plugin (coredns plugin/loop/README.md) sends one probe through the root block
//! at start-up and stops the server where it comes back: every target looping, the pods
//! crash-loop; some, under forward's default `random` policy, the probe may pass and that
//! share of the traffic loops until it times out.

use std::collections::BTreeSet;
use std::net::IpAddr;

use crate::cluster::corefile::{Forward, RootForward};
use crate::cluster::{Corefile, DnsConfig};

/// The two DNS servers of the cluster whose Corefiles dnsfix reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    Coredns,
    NodeLocal,
}

/// Where a root `forward .` target sends a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hop {
    To(Server),
    /// Out of the cluster: a file, another server.
    Out,
}

/// The cluster's own DNS addresses, by the server that answers them.
#[derive(Debug, Clone, Default)]
pub struct Addresses {
    /// CoreDNS's: its Services' ClusterIPs (kube-dns, its secondary, the inventory's
    /// skydns_server), those the cache does not hold.
    pub coredns: BTreeSet<IpAddr>,
    /// NodeLocal DNSCache's: its root blocks' `bind`, nodelocaldns_ip, the node's
    /// nodelocaldns interface.
    pub node_local: BTreeSet<IpAddr>,
}

impl Addresses {
    /// `coredns`, the addresses of CoreDNS's Services, and `node_local`, those NodeLocal
    /// DNSCache listens on, with the `bind` addresses of its Corefiles' root blocks in
    /// `config` added; an address the cache holds is the cache's (in iptables mode it binds
    /// the kube-dns ClusterIP too).
    pub fn new(
        coredns: &BTreeSet<IpAddr>,
        node_local: &BTreeSet<IpAddr>,
        config: &DnsConfig,
    ) -> Self {
        let mut cache: BTreeSet<IpAddr> = node_local.clone();
        cache.extend(
            config
                .corefiles
                .iter()
                .filter(|c| c.is_node_local())
                .filter_map(Corefile::root)
                .flat_map(|b| &b.bind)
                .filter_map(|a| a.parse::<IpAddr>().ok()),
        );
        Addresses {
            coredns: coredns.difference(&cache).copied().collect(),
            node_local: cache,
        }
    }

    /// Where `target`, a root `forward .` target of `from`'s Corefile, sends a name.
    fn hop(&self, from: Server, target: &str) -> Hop {
        // node-cache fills __PILLAR__CLUSTER__DNS__ with the ClusterIP of kube-dns-upstream,
        // a Service in front of CoreDNS that bypasses the cache (kubernetes/website
        // content/en/docs/tasks/administer-cluster/nodelocaldns.md), and
        // __PILLAR__UPSTREAM__SERVERS__ with /etc/resolv.conf's servers.
        if target == "__PILLAR__CLUSTER__DNS__" {
            return Hop::To(Server::Coredns);
        }
        let Some(ip) = address_on_53(target) else {
            return Hop::Out;
        };
        if from == Server::Coredns
            && (crate::facts::resolv_conf::is_loopback(ip) || ip.is_unspecified())
        {
            Hop::To(Server::Coredns)
        } else if self.node_local.contains(&ip) {
            Hop::To(Server::NodeLocal)
        } else if self.coredns.contains(&ip) {
            Hop::To(Server::Coredns)
        } else {
            Hop::Out
        }
    }
}

/// The address of a `forward` target on port 53 (the port the cluster's DNS answers);
/// `None` for a file, a name or another port.
fn address_on_53(target: &str) -> Option<IpAddr> {
    let t = target.strip_prefix("dns://").unwrap_or(target);
    t.parse::<IpAddr>().ok().or_else(|| {
        t.parse::<std::net::SocketAddr>()
            .ok()
            .filter(|a| a.port() == 53)
            .map(|a| a.ip())
    })
}

/// A root `forward .` some of whose targets come back.
#[derive(Debug, Clone)]
pub struct Loop<'a> {
    pub server: Server,
    pub corefile: &'a Corefile,
    pub forward: &'a Forward,
    /// Each target that comes back, with the way it does.
    pub looping: Vec<(String, String)>,
    /// Every target always does: the probe always comes back, and the pods stop.
    pub every: bool,
}

/// The root `forward .` lines of the Corefiles the cluster's DNS pods load that loop, given
/// the cluster's `addresses`. A Corefile whose root forward is not known is left out (the
/// drift rule says so), and counts as leaving the cluster where another's path reaches it.
pub fn loops<'a>(config: &'a DnsConfig, addresses: &Addresses) -> Vec<Loop<'a>> {
    let roots: Vec<(Server, &Corefile, &Forward)> = config
        .corefiles
        .iter()
        .filter(|c| c.is_node_local() || c.is_corednss())
        .filter_map(|c| match c.root_forward() {
            RootForward::Forward(_, f) => Some((server_of(c), c, f)),
            _ => None,
        })
        .collect();
    // Where each server sends names outside the cluster, over all its roots.
    let hops = |server: Server| -> Vec<Hop> {
        roots
            .iter()
            .filter(|(s, _, _)| *s == server)
            .flat_map(|(s, _, f)| f.to.iter().map(|t| addresses.hop(*s, t)))
            .collect()
    };
    let mut found = Vec::new();
    for &(server, corefile, forward) in &roots {
        let back: Vec<(String, String, bool)> = forward
            .to
            .iter()
            .filter_map(|t| {
                let (why, always) = comes_back(server, addresses.hop(server, t), &hops)?;
                Some((t.clone(), why, always))
            })
            .collect();
        if back.is_empty() {
            continue;
        }
        let every = back.len() == forward.to.len() && back.iter().all(|b| b.2);
        let looping = back.into_iter().map(|(t, why, _)| (t, why)).collect();
        found.push(Loop {
            server,
            corefile,
            forward,
            every,
            looping,
        });
    }
    found
}

fn server_of(c: &Corefile) -> Server {
    if c.is_node_local() {
        Server::NodeLocal
    } else {
        Server::Coredns
    }
}

/// Why a name that `from`'s root sends on to `hop` comes back, where it does, and whether
/// always: to `from` itself at once, or to the other server whose root sends it (or a share
/// of them, beside servers outside the cluster) on to one of the two.
fn comes_back(from: Server, hop: Hop, hops: &dyn Fn(Server) -> Vec<Hop>) -> Option<(String, bool)> {
    let Hop::To(to) = hop else {
        return None;
    };
    if to == from {
        return Some((format!("{}'s own address", name(from)), true));
    }
    let next = hops(to);
    let back = next.iter().filter(|h| matches!(h, Hop::To(_))).count();
    if back == 0 {
        return None;
    }
    let share = if back == next.len() {
        "which forwards"
    } else {
        "which forwards part of them"
    };
    Some((
        format!(
            "{}, {share} names outside the cluster back (its root `forward .`)",
            name(to)
        ),
        back == next.len(),
    ))
}

/// The server in words.
pub fn name(server: Server) -> &'static str {
    match server {
        Server::Coredns => "CoreDNS",
        Server::NodeLocal => "NodeLocal DNSCache",
    }
}
