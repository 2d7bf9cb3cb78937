//! The real upstream DNS servers known for a node, and where they come from: one choice
//! for the servers the playbooks write (`upstreams` in their context) and those the fix
//! texts name (the resolver owner's `real_servers`), so that a fix done by hand lists
//! the servers a plan would write, in the same order. Read from the inventory and the
//! facts only: it judges nothing.

use std::collections::BTreeSet;
use std::net::IpAddr;

use crate::facts::NodeFacts;
use crate::facts::node_facts::ResolvFile;
use crate::facts::resolv_conf::real_upstreams;
use crate::inventory::Host;

/// NetworkManager's resolv.conf of the servers its connections give (NetworkManager 1.16
/// and later), whatever its resolv.conf names.
pub(crate) const NM_NO_STUB: &str = "/run/NetworkManager/no-stub-resolv.conf";

/// Where [`upstreams`] found the servers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum UpstreamsFrom {
    /// The inventory variable (`upstream_dns_servers` or `nameservers`).
    Inventory(&'static str),
    /// The kubelet's file for pods (each version's, where that decides): their paths, and
    /// each as the evidence says it.
    Kubelet(Vec<(String, String)>),
    /// /etc/resolv.conf.
    EtcResolv(String),
    /// systemd-resolved's uplink file: its path, and where it leads.
    Uplink(String, String),
    /// NetworkManager's list of its connections' servers ([`NM_NO_STUB`]).
    NetworkManager,
}

impl UpstreamsFrom {
    /// As the playbooks' context gives it (`upstreams_source`): `inventory KEY`, or the
    /// files (` and ` between them).
    pub(crate) fn source(&self) -> String {
        match self {
            UpstreamsFrom::Inventory(key) => format!("inventory {key}"),
            UpstreamsFrom::Kubelet(files) => files
                .iter()
                .map(|(path, _)| path.as_str())
                .collect::<Vec<_>>()
                .join(" and "),
            UpstreamsFrom::EtcResolv(path) | UpstreamsFrom::Uplink(path, _) => path.clone(),
            UpstreamsFrom::NetworkManager => NM_NO_STUB.to_owned(),
        }
    }

    /// As a finding's evidence says it, before "names ...".
    pub(crate) fn described(&self) -> String {
        match self {
            UpstreamsFrom::Inventory(key) => format!("the inventory's {key}"),
            UpstreamsFrom::Kubelet(files) => files
                .iter()
                .map(|(_, described)| described.as_str())
                .collect::<Vec<_>>()
                .join(" and "),
            UpstreamsFrom::EtcResolv(path) => path.clone(),
            UpstreamsFrom::Uplink(_, shown) => uplink_described(shown),
            UpstreamsFrom::NetworkManager => {
                format!("{NM_NO_STUB}, NetworkManager's list of its connections' servers,")
            }
        }
    }
}

/// The real servers (no loopback, no cluster address) of the resolv.conf the kubelet hands
/// pods now, where that file is the node's own choice: not k3s's or RKE2's generated
/// fallback, whose 8.8.8.8 is their guess. They are what CoreDNS forwarded to: a fix that
/// gives the kubelet another file keeps them (a `nameserver` line with no address beside
/// them, or a loopback one, is what broke it, not them). Where the kubelet's version is
/// not known and decides which file that is, those of both files, in the order the facts
/// keep them (1.28 to 1.31's first): a fix that gives every version one file keeps them all.
pub(crate) fn kubelet_own_servers(facts: &NodeFacts, cluster: &BTreeSet<IpAddr>) -> Vec<String> {
    kubelet_pod_files(facts)
        .into_iter()
        .flat_map(|file| real_upstreams(nameservers(file), cluster))
        .fold(Vec::new(), |mut all, s| {
            if !all.contains(&s) {
                all.push(s);
            }
            all
        })
}

/// The file the kubelet hands pods, or, where the kubelet's version decides which and is
/// not known, each version's; none on k3s's or RKE2's generated fallback.
pub(crate) fn kubelet_pod_files(facts: &NodeFacts) -> Vec<&ResolvFile> {
    let kubelet = &facts.kubelet;
    if kubelet.on_rancher_fallback() {
        return Vec::new();
    }
    match (&kubelet.pod_resolv_conf, &kubelet.resolv_conf_by_version) {
        (Some(file), _) => vec![file],
        (None, Some(by)) => by
            .readings
            .iter()
            .filter_map(|r| r.pod_resolv_conf.as_ref())
            .collect(),
        (None, None) => Vec::new(),
    }
}

/// The addresses of a resolv.conf's `nameserver` lines, as written.
pub(crate) fn nameservers(file: &ResolvFile) -> Vec<String> {
    file.parsed
        .as_ref()
        .map(|p| p.nameservers.iter().map(|n| n.address.clone()).collect())
        .unwrap_or_default()
}

/// Where `file`'s links lead, else its path.
fn shown(file: &ResolvFile) -> String {
    file.canonical.clone().unwrap_or_else(|| file.path.clone())
}

/// systemd-resolved's uplink file (`shown`: where it leads) as the evidence says it.
fn uplink_described(shown: &str) -> String {
    format!("{shown}, systemd-resolved's list of the real servers,")
}

/// The real upstream servers, in the order they are written: the inventory's
/// `upstream_dns_servers`, else its `nameservers`, else the non-loopback, non-cluster
/// servers the node already lists (the kubelet's file for pods, `kubelet_own`:
/// [`kubelet_own_servers`]; its resolv.conf, then systemd-resolved's uplink file, then
/// NetworkManager's list of its connections' servers). Never a guessed public resolver.
/// `None` where none is known.
pub(crate) fn upstreams(
    host: &Host,
    facts: &NodeFacts,
    cluster: &BTreeSet<IpAddr>,
    kubelet_own: &[String],
) -> Option<(Vec<String>, UpstreamsFrom)> {
    let real = |servers: Vec<String>| real_upstreams(servers, cluster);
    for key in ["upstream_dns_servers", "nameservers"] {
        let servers = real(host.var_list(key).unwrap_or_default());
        if !servers.is_empty() {
            return Some((servers, UpstreamsFrom::Inventory(key)));
        }
    }
    if !kubelet_own.is_empty() {
        // The files that list them.
        // The kubelet's file is often systemd-resolved's list itself: said as that.
        let uplink = shown(&facts.resolver.systemd_uplink);
        let from = kubelet_pod_files(facts)
            .into_iter()
            .filter(|f| !real(nameservers(f)).is_empty())
            .map(|f| {
                let at = shown(f);
                let described = if at == uplink {
                    uplink_described(&at)
                } else {
                    format!("{at}, the kubelet's file for pods,")
                };
                (f.path.clone(), described)
            })
            .collect();
        return Some((kubelet_own.to_vec(), UpstreamsFrom::Kubelet(from)));
    }
    let etc = &facts.resolver.etc_resolv_conf;
    let servers = real(nameservers(etc));
    if !servers.is_empty() {
        return Some((servers, UpstreamsFrom::EtcResolv(etc.path.clone())));
    }
    let uplink = &facts.resolver.systemd_uplink;
    let servers = real(nameservers(uplink));
    if !servers.is_empty() {
        return Some((
            servers,
            UpstreamsFrom::Uplink(uplink.path.clone(), shown(uplink)),
        ));
    }
    // A running NetworkManager lists its connections' servers there in every dns= mode,
    // also where its resolv.conf names only its caching plugin (dnsmasq's 127.0.0.1,
    // resolved's 127.0.0.53): the servers that plugin forwards to (nm-dns-manager.c
    // `update_resolv_conf_no_stub`, written before the 127.0.0.x substitution). Only
    // there: with dns=none or rc-manager=unmanaged /etc/resolv.conf is the administrator's
    // (a local resolver of their own, say), and a stopped NetworkManager leaves the file
    // stale.
    let names_only_plugin = etc.parsed.as_ref().is_some_and(|p| {
        !p.nameservers.is_empty()
            && p.nameservers
                .iter()
                .all(|n| matches!(n.address.as_str(), "127.0.0.1" | "127.0.0.53"))
    });
    if super::network_manager_manages_resolv(facts).is_some()
        && names_only_plugin
        && let Some(text) = facts
            .files
            .get(NM_NO_STUB)
            .filter(|f| f.state == crate::facts::raw::FileState::Present)
            .and_then(|f| f.text())
    {
        let listed = crate::facts::resolv_conf::ResolvConf::parse(&text)
            .nameservers
            .into_iter()
            .map(|n| n.address)
            .collect();
        let servers = real(listed);
        if !servers.is_empty() {
            return Some((servers, UpstreamsFrom::NetworkManager));
        }
    }
    None
}
