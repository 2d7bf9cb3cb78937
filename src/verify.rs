//! `dnsfix verify`: real DNS queries from each node's own network vantage point, proving
//! what the files only suggest.
//!
//! Per node, after gathering its facts:
//! - every nameserver in the resolv.conf the kubelet hands to `dnsPolicy: Default` pods
//!   (CoreDNS and nodelocaldns forward there) must answer an outside name
//!   (`--probe-name`, else `dnsfix_probe_name`, else [`DEFAULT_PROBE_NAME`]); a loopback
//!   address there fails without asking, since from a pod it is the pod itself;
//! - the cluster DNS addresses (the kubelet's `clusterDNS`, the nodelocaldns address and
//!   the CoreDNS service address when the inventory names them) must answer
//!   `kubernetes.default.svc.<cluster domain>` and the outside name: CoreDNS answers the
//!   first itself and forwards only the second, so only that proves its forward;
//! - the nameservers glibc uses from the node's own /etc/resolv.conf (the first three
//!   addresses) must answer the outside name: the node's own lookups (image pulls), asked
//!   on the node, so a loopback stub is its own.
//!
//! Each query is one DNS message (built and read with hickory-proto) over TCP through the
//! SSH connection itself (a direct-tcpip channel: nothing runs on the node). Where the SSH
//! server does not forward, the same bytes go through bash's `/dev/tcp` on the node; where
//! TCP gets no reply at all, the question goes over UDP from the node (bash's `/dev/udp`).

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hickory_proto::op::{Message, MessageType, OpCode, Query, ResponseCode};
use hickory_proto::rr::{DNSClass, Name, RData, RecordType};
use serde::{Deserialize, Serialize};

use crate::events::{Event, EventSink};
use crate::facts::NodeFacts;
use crate::gather::HostError;
use crate::inventory::Host;
use crate::transport::{Session, Target, TcpFailure, Transport};

/// The outside name asked when neither the inventory nor the command line names one.
pub const DEFAULT_PROBE_NAME: &str = "kubernetes.io";
use crate::facts::node_facts::KUBESPRAY_NODELOCALDNS_IP as NODELOCALDNS_IP;

/// Which resolver a probe asks, and why it must answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Path {
    /// A nameserver of the kubelet's resolv.conf for Default pods: CoreDNS's upstream.
    Upstream,
    /// An address of the kubelet's `clusterDNS`: what every ClusterFirst pod asks.
    ClusterDns,
    /// The nodelocaldns address (Kubespray's `enable_nodelocaldns`).
    NodeLocalDns,
    /// The CoreDNS service address (Kubespray's `skydns_server`).
    CoreDnsService,
    /// A nameserver of the node's own /etc/resolv.conf: what the node itself resolves with
    /// (the container runtime pulling images, the kubelet reaching its API server by name).
    Host,
}

impl Path {
    pub fn word(self) -> &'static str {
        match self {
            Path::Upstream => "upstream",
            Path::ClusterDns => "cluster DNS",
            Path::NodeLocalDns => "nodelocaldns",
            Path::CoreDnsService => "CoreDNS service",
            Path::Host => "host resolver",
        }
    }

    /// A path to the cluster's DNS (asked for `kubernetes.default.svc`).
    pub fn is_cluster(self) -> bool {
        matches!(
            self,
            Path::ClusterDns | Path::NodeLocalDns | Path::CoreDnsService
        )
    }
}

/// One query to make from a node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Probe {
    pub path: Path,
    /// The server as written where it was found (`fe80::1%eth0` keeps its zone).
    pub server: String,
    pub name: String,
    /// Where the server comes from: `FILE:LINE`, `clusterDNS (FILE:LINE)`, an inventory
    /// variable.
    pub source: String,
}

/// What one probe found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeResult {
    #[serde(flatten)]
    pub probe: Probe,
    pub ok: bool,
    /// `NOERROR`, `NXDOMAIN`, `SERVFAIL`, ...; absent when no reply came.
    pub rcode: Option<String>,
    /// The answer records, as text.
    pub answers: Vec<String>,
    pub latency_ms: u64,
    /// `ssh` (a direct-tcpip channel), `node` (bash /dev/tcp on the node), `local`,
    /// `node-udp` or `local-udp` (over UDP, where TCP brought no reply), or `none` (not
    /// asked). Where no way brought a reply: how it was last asked.
    pub via: String,
    /// Why it failed, when it did.
    pub reason: Option<String>,
}

/// One node's verification.
#[derive(Debug)]
pub struct HostVerify {
    pub host: String,
    pub result: Result<Checked, HostError>,
}

#[derive(Debug, Default)]
pub struct Checked {
    pub probes: Vec<ProbeResult>,
    /// Paths that could not be probed, and why (e.g. the kubelet's resolv.conf is unknown).
    pub notes: Vec<String>,
    /// The CoreDNS and nodelocaldns pods on this node, as the cluster reports them.
    pub pods: Vec<crate::cluster::DnsPod>,
    /// No kubelet here: not a Kubernetes node, nothing to verify.
    pub not_a_node: bool,
}

impl Checked {
    /// A path failed, or a node's paths could not even be found: none from its kubelet
    /// (the node's own resolver alone proves nothing about pods).
    pub fn failed(&self) -> bool {
        self.probes.iter().any(|p| !p.ok)
            || (!self.not_a_node && self.probes.iter().all(|p| p.probe.path == Path::Host))
    }
}

/// The probes for one node, from its facts and inventory variables, and notes on what
/// cannot be probed. The outside name is `probe_name` (`--probe-name`) over the host's
/// `dnsfix_probe_name`, as Ansible's extra vars win over host vars.
pub fn probes(
    host: &Host,
    facts: &NodeFacts,
    probe_name: Option<&str>,
) -> (Vec<Probe>, Vec<String>) {
    let outside = probe_name
        .or(host.var_str("dnsfix_probe_name"))
        .unwrap_or(DEFAULT_PROBE_NAME)
        .to_owned();
    let mut probes = Vec::new();
    let mut notes = Vec::new();
    let k = &facts.kubelet;
    match (&k.pod_resolv_conf, k.resolv_conf.known()) {
        (Some(file), Some(_)) => match &file.parsed {
            Some(parsed) if !parsed.nameservers.is_empty() => {
                let servers = parsed.nameservers.iter().take(3);
                probes.extend(nameserver_probes(
                    Path::Upstream,
                    &file.path,
                    servers,
                    &outside,
                ));
            }
            Some(_) => notes.push(format!(
                "{} lists no nameserver: Default pods (CoreDNS, nodelocaldns) have no upstream",
                file.path
            )),
            None => notes.push(format!("{} could not be read", file.path)),
        },
        _ => notes
            .push("the resolv.conf the kubelet gives Default pods is not known here".to_owned()),
    }

    let domain = k
        .cluster_domain
        .known()
        .map(|e| e.value.trim_end_matches('.').to_owned())
        .filter(|d| !d.is_empty())
        .or_else(|| {
            let kubespray = facts.flavour.kind == crate::facts::node_facts::FlavourKind::Kubespray;
            crate::diagnose::rules::inventory_domain(host, kubespray).map(str::to_owned)
        })
        .unwrap_or_else(|| "cluster.local".to_owned());
    let cluster_name = format!("kubernetes.default.svc.{domain}");
    // Each cluster address is asked the cluster's own name and the outside one: CoreDNS
    // answers the first from its kubernetes plugin and forwards only the second, so a
    // forward that loops or leads nowhere shows in the outside name alone.
    let mut cluster = |path: Path, server: &str, source: String| {
        if !probes
            .iter()
            .any(|p| p.path.is_cluster() && p.server == server)
        {
            for name in [&cluster_name, &outside] {
                probes.push(Probe {
                    path,
                    server: server.to_owned(),
                    name: name.clone(),
                    source: source.clone(),
                });
            }
        }
    };
    if let Some(dns) = k.cluster_dns.known() {
        // Pods get at most three nameservers (the kubelet's limit), cluster ones first.
        for server in dns.value.iter().take(3) {
            cluster(
                Path::ClusterDns,
                server,
                format!("clusterDNS ({})", dns.source.at()),
            );
        }
    }
    // Kubespray's own variables say what runs on the nodes it installed, not elsewhere.
    let kubespray = facts.flavour.kind == crate::facts::node_facts::FlavourKind::Kubespray;
    // NodeLocal DNSCache: where the inventory enables it, or leaves it at Kubespray's
    // default (on) and the node has its interface.
    let nodelocal = match host.var_truthy("enable_nodelocaldns") {
        Some(on) => on,
        None => facts.nodelocaldns.is_some(),
    };
    if kubespray && nodelocal {
        let ip = host.var_str("nodelocaldns_ip").unwrap_or(NODELOCALDNS_IP);
        cluster(
            Path::NodeLocalDns,
            ip,
            "inventory nodelocaldns_ip".to_owned(),
        );
    }
    // skydns_server where the inventory sets it: its address, or the sample inventory's
    // expression rendered as Kubespray does from the service range the inventory sets (not
    // from Kubespray's defaults, which a cluster may not have kept), where Kubespray
    // deploys the CoreDNS Service on it (not with dns_mode manual or none, nor
    // deploy_coredns false).
    let service = kubespray
        && host.var("skydns_server").is_some()
        && crate::diagnose::rules::kubespray_deploys_coredns(host);
    if let Some(ip) = service
        .then(|| crate::diagnose::rules::kubespray_dns_server(host, false))
        .flatten()
    {
        let source = match host.var_str("skydns_server") {
            Some(v) if crate::diagnose::rules::is_kubespray_dns_default(v) => {
                "inventory skydns_server (the third address of the service range)"
            }
            _ => "inventory skydns_server",
        };
        cluster(Path::CoreDnsService, &ip.to_string(), source.to_owned());
    }
    if !probes.iter().any(|p| p.path.is_cluster()) {
        notes.push(match &k.cluster_dns {
            crate::facts::node_facts::Observed::Unknown(why) => {
                format!("no cluster DNS address is known: {why}")
            }
            _ => "no cluster DNS address is known (clusterDNS unset)".to_owned(),
        });
    }
    host_probes(facts, &outside, &mut probes, &mut notes);
    (probes, notes)
}

/// A probe on `path` asking `name` of each of `servers`, nameservers of the file at `file`.
fn nameserver_probes<'a>(
    path: Path,
    file: &str,
    servers: impl Iterator<Item = &'a crate::facts::resolv_conf::Nameserver>,
    name: &str,
) -> Vec<Probe> {
    servers
        .map(|ns| Probe {
            path,
            server: ns.address.clone(),
            name: name.to_owned(),
            source: format!("{file}:{}", ns.line),
        })
        .collect()
}

/// The node's own resolver: the nameservers glibc uses from /etc/resolv.conf (the first
/// three that are addresses: it skips the others) must answer the outside name, asked on
/// the node itself, so its loopback stub (systemd-resolved's 127.0.0.53) is the node's. A
/// link-local address with a zone (`fe80::1%eth0`) is left out with a note: the query
/// goes to an address, and without its interface that one cannot be reached.
fn host_probes(facts: &NodeFacts, outside: &str, probes: &mut Vec<Probe>, notes: &mut Vec<String>) {
    let etc = &facts.resolver.etc_resolv_conf;
    let used: Vec<&crate::facts::resolv_conf::Nameserver> = match (&etc.state, &etc.parsed) {
        (crate::facts::raw::FileState::Present, Some(parsed)) => parsed
            .nameservers
            .iter()
            .filter(|ns| ns.ip.is_some())
            .take(3)
            .collect(),
        _ => Vec::new(),
    };
    if used.is_empty() {
        notes.push(format!(
            "{} lists no nameserver that can be asked (dnsfix check: DNS-HOST-RESOLVER-DOWN)",
            etc.path
        ));
    }
    let (zoned, asked): (Vec<_>, Vec<_>) =
        used.into_iter().partition(|ns| ns.address.contains('%'));
    for ns in zoned {
        notes.push(format!(
            "{}:{} nameserver {} not asked: a link-local address is reached through its interface, which a query over SSH cannot name",
            etc.path, ns.line, ns.address
        ));
    }
    probes.extend(nameserver_probes(
        Path::Host,
        &etc.path,
        asked.into_iter(),
        outside,
    ));
}

/// Verifies every host, in parallel, in the order given.
pub async fn verify(
    hosts: &[&Host],
    transport: Arc<Transport>,
    forks: usize,
    sink: Arc<dyn EventSink>,
    probe_name: Option<String>,
    timeout: Duration,
    cluster: Arc<crate::cluster::Cluster>,
) -> Vec<HostVerify> {
    let out = crate::gather::fan_out(hosts, forks, &sink, |host| {
        let transport = Arc::clone(&transport);
        let sink = Arc::clone(&sink);
        let probe_name = probe_name.clone();
        let cluster = Arc::clone(&cluster);
        async move {
            sink.event(Event::HostStarted {
                host: host.name.clone(),
            });
            let result =
                verify_host(&host, &transport, probe_name.as_deref(), timeout, &cluster).await;
            sink.event(match &result {
                Ok(checked) => Event::HostDone {
                    host: host.name.clone(),
                    message: done_message(checked),
                },
                Err(e) => Event::HostFailed {
                    host: host.name.clone(),
                    kind: e.kind(),
                    error: e.to_string(),
                },
            });
            HostVerify {
                host: host.name.clone(),
                result,
            }
        }
    })
    .await;
    out.into_iter()
        .zip(hosts)
        .map(|(v, h)| {
            v.unwrap_or_else(|| HostVerify {
                host: h.name.clone(),
                result: Err(HostError::Transport(
                    crate::transport::TransportError::Other("internal error".into()),
                )),
            })
        })
        .collect()
}

/// "passed", or "failed: " and the paths that failed (or why there were none to ask): the
/// word the run's last line counts hosts by ("3 hosts in 1.20s: 2 passed, 1 failed").
fn done_message(checked: &Checked) -> String {
    if !checked.failed() {
        return "passed".to_owned();
    }
    // A cluster address is asked two names: it is named once.
    let mut failed: Vec<String> = Vec::new();
    for probe in checked.probes.iter().filter(|p| !p.ok) {
        let path = format!("{} {}", probe.probe.path.word(), probe.probe.server);
        if !failed.contains(&path) {
            failed.push(path);
        }
    }
    // None failed: the kubelet's paths could not be found, and the notes say why.
    if failed.is_empty() {
        return format!("failed: {}", checked.notes.join("; "));
    }
    format!("failed: {}", failed.join(", "))
}

async fn verify_host(
    host: &Host,
    transport: &Transport,
    probe_name: Option<&str>,
    timeout: Duration,
    cluster: &crate::cluster::Cluster,
) -> Result<Checked, HostError> {
    let target = Target {
        host: host.name.clone(),
        connection: host.connection(),
    };
    let mut session = transport.connect(&target).await?;
    let result = match crate::gather::gather_session(&mut session, &target, &[]).await {
        Ok(facts) => {
            let all = match cluster {
                crate::cluster::Cluster::Read { pods, .. } => Some(pods.as_slice()),
                _ => None,
            };
            let mut checked = check_node(
                &mut session,
                &target,
                host,
                &facts,
                (probe_name, timeout),
                all,
            )
            .await;
            if let crate::cluster::Cluster::Read { pods, .. } = cluster {
                let names = crate::cluster::node_names(host, &facts);
                checked.pods = pods
                    .iter()
                    .filter(|p| names.contains(&p.node))
                    .cloned()
                    .collect();
            }
            Ok(checked)
        }
        Err(e) => Err(e),
    };
    session.close().await;
    result
}

/// The probes of one node over an open session (also `apply`'s last step).
pub async fn check_node(
    session: &mut Session,
    target: &Target,
    host: &Host,
    facts: &NodeFacts,
    (probe_name, timeout): (Option<&str>, Duration),
    cluster_pods: Option<&[crate::cluster::DnsPod]>,
) -> Checked {
    let not_a_node = matches!(
        facts.kubelet.resolv_conf,
        crate::facts::node_facts::Observed::Absent
    );
    if not_a_node {
        return Checked {
            probes: Vec::new(),
            notes: vec!["no kubelet here: not a Kubernetes node, nothing to verify".to_owned()],
            not_a_node,
            pods: Vec::new(),
        };
    }
    let (probes, notes) = probes(host, facts, probe_name);
    let mut checked = Checked {
        probes: Vec::new(),
        notes,
        not_a_node,
        pods: Vec::new(),
    };
    for (n, probe) in probes.into_iter().enumerate() {
        let id = query_id(&target.host, n);
        checked
            .probes
            .push(ask(session, target, probe, id, timeout).await);
    }
    if cluster_dns_down(&checked.probes) {
        checked.notes.push(cluster_down_note(facts, cluster_pods));
    }
    checked
}

/// What to look at where cluster DNS gives no answer or SERVFAIL from this node, by what
/// is known: no kubelet runs here (the pods and Service rules its pods use come with it);
/// the cluster's DNS pods as kubectl lists them (`pods`: all of them, on every node;
/// `None` where the cluster was not read), some crash-looping (recreate them once the
/// kubelet's file is right: they keep the resolv.conf they started with) or none (then the
/// pods are not the cause: what carries the query to them is).
fn cluster_down_note(facts: &NodeFacts, pods: Option<&[crate::cluster::DnsPod]>) -> String {
    use crate::facts::node_facts::UnitState;
    const DOWN: &str = "cluster DNS gives no answer or SERVFAIL";
    const RECREATE: &str = "CoreDNS and nodelocaldns pods forward to the resolv.conf the \
        kubelet gave them when they started, and crash-loop (plugin/loop) when it points back \
        at them; once the kubelet's file is right, recreate those pods (`kubectl -n \
        kube-system delete pod -l 'k8s-app in (kube-dns,kube-dns-secondary,coredns)'`, and \
        nodelocaldns's)";
    let services = &facts.services;
    if facts.kubelet.pid.is_none()
        && matches!(
            services.kubelet_unit_state,
            UnitState::Inactive | UnitState::Failed
        )
    {
        return format!(
            "{DOWN}, and no kubelet runs on this node ({}: {}): start it first; the DNS \
             pods and Service rules this node's pods use come with it",
            services.kubelet_unit,
            services.kubelet_unit_state.as_str()
        );
    }
    let Some(pods) = pods else {
        return format!("{DOWN}: {RECREATE}");
    };
    let looping: Vec<&str> = pods
        .iter()
        .filter(|p| p.loop_detected.is_some() || p.waiting.as_deref() == Some("CrashLoopBackOff"))
        .map(|p| p.name.as_str())
        .collect();
    match (looping.as_slice(), pods.len()) {
        ([], 0) => format!(
            "{DOWN}, and kubectl lists no CoreDNS or nodelocaldns pod in the cluster: \
             `kubectl -n kube-system get deploy,ds -l 'k8s-app in (kube-dns,coredns,node-local-dns)'` \
             shows what should run them"
        ),
        ([], n) => format!(
            "{DOWN}, yet none of the cluster's {n} CoreDNS and nodelocaldns pods crash-loops \
             (kubectl): look at what carries the query to them from this node: the kube-dns \
             Service's endpoints (`kubectl -n kube-system get endpointslices -l \
             kubernetes.io/service-name=kube-dns`), kube-proxy and the pod network here"
        ),
        (names, _) => {
            let shown: Vec<&str> = names.iter().take(3).copied().collect();
            let more = names.len().saturating_sub(shown.len());
            format!(
                "{DOWN}, and {} crash-loop{} ({}{}): {RECREATE}",
                names.len(),
                if names.len() == 1 { "s" } else { "" },
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            )
        }
    }
}

/// A cluster address gave no reply, or SERVFAIL (its `forward` leads nowhere): what pods
/// that forward to a resolv.conf pointing back at them, or at nothing, give. An NXDOMAIN,
/// REFUSED or empty answer comes from a server that is up and forwards: recreating it
/// changes nothing.
fn cluster_dns_down(probes: &[ProbeResult]) -> bool {
    probes.iter().any(|p| {
        !p.ok && p.probe.path.is_cluster() && matches!(p.rcode.as_deref(), None | Some("SERVFAIL"))
    })
}

async fn ask(
    session: &mut Session,
    target: &Target,
    probe: Probe,
    id: u16,
    timeout: Duration,
) -> ProbeResult {
    let not_asked = |probe: Probe, reason: String| ProbeResult {
        probe,
        ok: false,
        rcode: None,
        answers: Vec::new(),
        latency_ms: 0,
        via: "none".to_owned(),
        reason: Some(reason),
    };
    let Some(ip) = address(&probe.server) else {
        let why = format!("{} is not an IP address", probe.server);
        return not_asked(probe, why);
    };
    // The IPv4-mapped form reaches the same loopback listener, and the unspecified address
    // (0.0.0.0, ::) is the local host on Linux: from a pod, the pod.
    if probe.path == Path::Upstream
        && (crate::facts::resolv_conf::is_loopback(ip) || ip.is_unspecified())
    {
        let what = if ip.is_unspecified() {
            "the unspecified address, the local host"
        } else {
            "a loopback address"
        };
        let why = format!(
            "{ip} is {what}: from a pod it is the pod itself (CoreDNS would forward to itself)"
        );
        return not_asked(probe, why);
    }
    let started = Instant::now();
    // An A question; an IPv6-only name (NOERROR, no A record) is asked again for AAAA, the
    // way the A question was answered.
    let mut outcome = exchange(
        session,
        (ip, 53),
        &probe.name,
        id,
        RecordType::A,
        timeout,
        false,
    )
    .await;
    let mut before = Duration::ZERO;
    if let Ok(a) = &outcome
        && a.judged.nodata
    {
        before = a.took;
        let udp = a.udp;
        outcome = exchange(
            session,
            (ip, 53),
            &probe.name,
            id ^ 1,
            RecordType::AAAA,
            timeout,
            udp,
        )
        .await;
    }
    let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let _ = target;
    match outcome {
        Err((reason, via)) => ProbeResult {
            latency_ms: millis(started.elapsed()),
            via: via.to_owned(),
            ..not_asked(probe, reason)
        },
        // The time of the attempts that answered: not a TCP attempt that got nothing.
        Ok(answered) => ProbeResult {
            probe,
            ok: answered.judged.ok,
            rcode: answered.judged.rcode,
            answers: answered.judged.answers,
            latency_ms: millis(before + answered.took),
            via: answered.via.to_owned(),
            reason: answered.judged.reason,
        },
    }
}

/// A reply, how it came (`ssh`, `node`, `local`, `node-udp`, `local-udp`), and how long the
/// attempt that brought it took.
struct Exchanged {
    judged: Judged,
    via: &'static str,
    /// It came over UDP.
    udp: bool,
    took: Duration,
}

/// One question to `ip` through the session (or, where it does not forward, from the
/// node), over UDP where TCP brings no reply (or straight away with `udp_only`), and what
/// the reply says; or why there was none, and how it was asked.
async fn exchange(
    session: &mut Session,
    (ip, port): (IpAddr, u16),
    name: &str,
    id: u16,
    rtype: RecordType,
    timeout: Duration,
    udp_only: bool,
) -> Result<Exchanged, (String, &'static str)> {
    let query = build_query(name, id, rtype)
        .map_err(|e| (format!("{name} is not a DNS name: {e}"), "none"))?;
    let mut tcp = None;
    if !udp_only {
        let started = Instant::now();
        let direct = session.dns_tcp(ip, port, &query, timeout).await;
        let (reply, via) = match direct {
            Err(TcpFailure::Forbidden(why)) if !matches!(session, Session::Local(_)) => {
                match node_tool(session, (ip, port), &query, timeout).await {
                    Ok(reply) => (Ok(reply), "node"),
                    Err(tool) => (Err(format!("{why}; on the node: {tool}")), "node"),
                }
            }
            Err(e) => (Err(e.to_string()), via_of(session)),
            Ok(reply) => (Ok(reply), via_of(session)),
        };
        match reply {
            Ok(bytes) => {
                let over_tcp = Exchanged {
                    judged: judge(&bytes, id, name, rtype),
                    via,
                    udp: false,
                    took: started.elapsed(),
                };
                // SERVFAIL over TCP may be the server's TCP forward alone failing (CoreDNS
                // forwards in the protocol the query came in, and TCP/53 upstream may be
                // filtered): pods ask over UDP, so UDP's reply is the one that counts.
                if over_tcp.judged.rcode.as_deref() != Some("SERVFAIL") {
                    return Ok(over_tcp);
                }
                // A truncated UDP reply sends a resolver back to TCP: the SERVFAIL stands.
                let over_udp = udp_exchange(session, (ip, port), &query, timeout)
                    .await
                    .map(|(bytes, via)| (judge(&bytes, id, name, rtype), via))
                    .and_then(|(judged, via)| {
                        if judged.truncated {
                            Err("the reply is truncated (TC)".to_owned())
                        } else {
                            Ok((judged, via))
                        }
                    });
                return Ok(match over_udp {
                    Ok((judged, via)) => Exchanged {
                        judged,
                        via,
                        udp: true,
                        took: started.elapsed(),
                    },
                    Err(udp) => {
                        let mut over_tcp = over_tcp;
                        if let Some(reason) = &mut over_tcp.judged.reason {
                            reason.push_str(&format!(" over TCP; over UDP, {udp}"));
                        }
                        over_tcp
                    }
                });
            }
            Err(why) => tcp = Some((why, via)),
        }
    }
    // DNS is UDP first (RFC 1035 4.2), and CoreDNS's and nodelocaldns's `forward` asks
    // upstream in the protocol the query came in (UDP, from pods) unless told `force_tcp`
    // (Kubespray's nodelocaldns: only towards cluster DNS): a resolver that gets no TCP
    // through (TCP/53 filtered, or a server without it) still serves pods.
    let started = Instant::now();
    match udp_exchange(session, (ip, port), &query, timeout).await {
        Ok((bytes, via)) => {
            let mut judged = judge(&bytes, id, name, rtype);
            // Cut short over UDP: what TCP, where a resolver goes next, did.
            if judged.truncated
                && let (Some(reason), Some((tcp, _))) = (&mut judged.reason, &tcp)
            {
                reason.push_str(&format!("; over TCP, {tcp}"));
            }
            Ok(Exchanged {
                judged,
                via,
                udp: true,
                took: started.elapsed(),
            })
        }
        Err(udp) => Err(match tcp {
            Some((tcp, via)) => (
                format!("no reply from {ip}: over TCP, {tcp}; over UDP, {udp}"),
                via,
            ),
            None => (
                format!("no reply from {ip} over UDP: {udp}"),
                udp_via(session),
            ),
        }),
    }
}

fn udp_via(session: &Session) -> &'static str {
    match session {
        Session::Local(_) => "local-udp",
        _ => "node-udp",
    }
}

/// The question over UDP: from this machine where the session is local, else from the
/// node (bash's `/dev/udp`: one datagram out, the first one back).
async fn udp_exchange(
    session: &mut Session,
    (ip, port): (IpAddr, u16),
    query: &[u8],
    timeout: Duration,
) -> Result<(Vec<u8>, &'static str), String> {
    if let Session::Local(_) = session {
        return local_udp((ip, port).into(), query, timeout)
            .await
            .map(|r| (r, udp_via(session)));
    }
    use base64ct::{Base64, Encoding};
    // One write of the whole query (base64 -d flushes once), one read of one datagram.
    let script = format!(
        "command -v bash >/dev/null 2>&1 || {{ echo 'bash is not installed' >&2; exit 3; }}\n\
         exec timeout {secs} bash -c '\
           exec 3<>/dev/udp/{ip}/{port} || exit 4; \
           printf %s {query} | base64 -d >&3 || exit 4; \
           r=$(dd bs=65535 count=1 <&3 2>/dev/null | base64 -w0); \
           [ -n \"$r\" ] || exit 5; \
           printf %s \"$r\"'\n",
        secs = timeout.as_secs().max(1),
        query = Base64::encode_string(query),
    );
    let out = session
        .exec("/bin/sh -s", script.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    node_reply(&out, ip, timeout, "refused, or nothing came back").map(|r| (r, udp_via(session)))
}

/// One datagram to `server` from this machine, and the first one back from it.
async fn local_udp(
    server: std::net::SocketAddr,
    query: &[u8],
    timeout: Duration,
) -> Result<Vec<u8>, String> {
    let exchange = async {
        let any: std::net::SocketAddr = if server.is_ipv4() {
            (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
        } else {
            (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
        };
        let socket = tokio::net::UdpSocket::bind(any).await?;
        socket.connect(server).await?;
        socket.send(query).await?;
        let mut buf = vec![0u8; 65535];
        let n = socket.recv(&mut buf).await?;
        buf.truncate(n);
        Ok::<_, std::io::Error>(buf)
    };
    match tokio::time::timeout(timeout, exchange).await {
        Ok(reply) => reply.map_err(|e| e.to_string()),
        Err(_) => Err(format!("no reply within {:.1}s", timeout.as_secs_f64())),
    }
}

fn via_of(session: &Session) -> &'static str {
    match session {
        Session::Local(_) => "local",
        _ => "ssh",
    }
}

/// `text` as an address to connect to (a link-local `%zone` is dropped: the node picks).
fn address(text: &str) -> Option<IpAddr> {
    text.split('%').next().and_then(|a| a.parse().ok())
}

/// A query id that differs per host and probe, so a stray reply cannot pass for another.
fn query_id(host: &str, n: usize) -> u16 {
    let digest = crate::util::sha256_hex(format!("{host}/{n}/{}", crate::util::nonce()).as_bytes());
    u16::from_str_radix(&digest[..4], 16).unwrap_or(0x1d5f)
}

/// A recursive query for `name`'s `rtype` records.
pub fn build_query(name: &str, id: u16, rtype: RecordType) -> Result<Vec<u8>, String> {
    let mut fqdn = Name::from_ascii(name).map_err(|e| e.to_string())?;
    fqdn.set_fqdn(true);
    let mut message = Message::new(id, MessageType::Query, OpCode::Query);
    message.metadata.recursion_desired = true;
    message.add_query(Query::query(fqdn, rtype));
    message.to_vec().map_err(|e| e.to_string())
}

/// What a reply says.
#[derive(Debug, PartialEq)]
pub struct Judged {
    pub ok: bool,
    pub rcode: Option<String>,
    pub answers: Vec<String>,
    pub reason: Option<String>,
    /// A whole NOERROR answer to the question with no record of the type asked (the name
    /// has none: an IPv6-only name asked for A).
    pub nodata: bool,
    /// The reply came with TC set: cut short, so a resolver drops it and asks over TCP.
    pub truncated: bool,
}

/// A reply passes when it answers the question sent, as a stub resolver takes it: a
/// response with the same id and the same question (glibc's `res_queriesmatch`,
/// resolv/res-queriesmatch.c in glibc 2.34, ignores any other; RFC 5452 9.1), not
/// truncated (RFC 1035 4.1.1: TC; glibc asks again over TCP), NOERROR, and at least one
/// record of the type asked at the name or at an alias its CNAMEs lead to (what glibc's
/// getanswer keeps).
pub fn judge(reply: &[u8], id: u16, name: &str, rtype: RecordType) -> Judged {
    let broken = |reason: String| Judged {
        ok: false,
        rcode: None,
        answers: Vec::new(),
        reason: Some(reason),
        nodata: false,
        truncated: false,
    };
    let message = match Message::from_vec(reply) {
        Ok(m) => m,
        Err(e) => return broken(format!("the reply is not a DNS message: {e}")),
    };
    let rcode = message.metadata.response_code;
    let answers: Vec<String> = message
        .answers
        .iter()
        .map(|r| format!("{} {}", r.record_type(), r.data))
        .collect();
    let asked = Name::from_ascii(name).map(|mut n| {
        n.set_fqdn(true);
        n
    });
    // An error without the question (some servers leave it out of FORMERR or REFUSED) is
    // still told apart by its code.
    let question = match (&asked, message.queries.as_slice()) {
        (Ok(asked), [q]) => {
            q.name() == asked && q.query_type() == rtype && q.query_class() == DNSClass::IN
        }
        (_, []) => rcode != ResponseCode::NoError,
        _ => false,
    };
    let ours = message.metadata.id == id
        && message.metadata.message_type == MessageType::Response
        && question;
    let truncated = ours && message.metadata.truncation;
    let found = asked
        .as_ref()
        .map_or(0, |asked| records_for(&message, asked, rtype));
    let reason = if !ours {
        Some("the reply is not an answer to the query sent".to_owned())
    } else if truncated {
        Some(format!(
            "{name}: the reply is truncated (TC): a resolver drops it and asks again over TCP"
        ))
    } else if rcode != ResponseCode::NoError {
        Some(format!("{name}: {}", rcode_text(rcode)))
    } else if found == 0 && answers.is_empty() {
        Some(format!("{name}: no records in the answer"))
    } else if found == 0 {
        Some(format!("{name}: no {rtype} record for it in the answer"))
    } else {
        None
    };
    Judged {
        ok: reason.is_none(),
        nodata: ours && !truncated && rcode == ResponseCode::NoError && found == 0,
        truncated,
        rcode: Some(rcode_text(rcode)),
        answers,
        reason,
    }
}

/// How many `rtype` records `message` answers for `name`: at the name itself or at an
/// alias its CNAME records lead to, in any order.
fn records_for(message: &Message, name: &Name, rtype: RecordType) -> usize {
    let mut names = vec![name.clone()];
    loop {
        let more: Vec<Name> = message
            .answers
            .iter()
            .filter(|r| names.contains(&r.name))
            .filter_map(|r| match &r.data {
                RData::CNAME(target) => Some(target.0.clone()),
                _ => None,
            })
            .filter(|target| !names.contains(target))
            .collect();
        if more.is_empty() {
            break;
        }
        for target in more {
            if !names.contains(&target) {
                names.push(target);
            }
        }
    }
    message
        .answers
        .iter()
        .filter(|r| r.record_type() == rtype && names.contains(&r.name))
        .count()
}

/// The response code as `dig` shows it: `NOERROR`, `NXDOMAIN`, `SERVFAIL`, `REFUSED`.
fn rcode_text(rcode: ResponseCode) -> String {
    match rcode {
        ResponseCode::NoError => "NOERROR".to_owned(),
        ResponseCode::FormErr => "FORMERR".to_owned(),
        ResponseCode::ServFail => "SERVFAIL".to_owned(),
        ResponseCode::NXDomain => "NXDOMAIN".to_owned(),
        ResponseCode::NotImp => "NOTIMP".to_owned(),
        ResponseCode::Refused => "REFUSED".to_owned(),
        other => format!("RCODE{}", u16::from(other)),
    }
}

/// The same exchange from the node itself, where the SSH server does not forward: bash's
/// `/dev/tcp`, the query and the reply base64-encoded, the reply read byte-exact with dd.
async fn node_tool(
    session: &mut Session,
    (ip, port): (IpAddr, u16),
    query: &[u8],
    timeout: Duration,
) -> Result<Vec<u8>, String> {
    use base64ct::{Base64, Encoding};
    let len = u16::try_from(query.len()).map_err(|_| "the query is too long".to_owned())?;
    let mut framed = len.to_be_bytes().to_vec();
    framed.extend_from_slice(query);
    // Every interpolated value is an IP address or base64: no quoting can break.
    let script = format!(
        "command -v bash >/dev/null 2>&1 || {{ echo 'bash is not installed' >&2; exit 3; }}\n\
         exec timeout {secs} bash -c '\
           exec 3<>/dev/tcp/{ip}/{port} || exit 4; \
           printf %s {query} | base64 -d >&3; \
           set -- $(dd bs=1 count=2 <&3 2>/dev/null | od -An -tu1); \
           [ $# -eq 2 ] || exit 5; \
           dd bs=1 count=$(( $1 * 256 + $2 )) <&3 2>/dev/null | base64 -w0'\n",
        secs = timeout.as_secs().max(1),
        query = Base64::encode_string(&framed),
    );
    let out = session
        .exec("/bin/sh -s", script.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    node_reply(&out, ip, timeout, "the connection closed before a reply")
}

/// The reply a node probe printed (base64), or why there is none: its exit status 3 (no
/// bash), 4 (no socket to `ip`), 5 (`no_reply`), 124 (`timeout` ended it).
fn node_reply(
    out: &crate::transport::ExecOutput,
    ip: IpAddr,
    timeout: Duration,
    no_reply: &str,
) -> Result<Vec<u8>, String> {
    use base64ct::{Base64, Encoding};
    match out.exit_status {
        Some(0) => Base64::decode_vec(&String::from_utf8_lossy(out.stdout.trim_ascii()))
            .map_err(|e| format!("the reply did not come back whole: {e}")),
        Some(3) => Err("bash is not installed on the node".to_owned()),
        Some(4) => Err(format!("cannot connect to {ip}:53")),
        Some(5) => Err(no_reply.to_owned()),
        Some(124) => Err(format!(
            "no reply within {:.1}s",
            timeout.as_secs().max(1) as f64
        )),
        status => Err(format!(
            "the probe failed ({status:?}): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hickory_proto::rr::{RData, Record, rdata::A};

    /// Where cluster DNS does not answer, the note says what is known: no kubelet runs here;
    /// the cluster's DNS pods crash-loop (recreate them) or none does (look at what carries
    /// the query); the cluster not read (the recreate advice, as before). Before, every
    /// node got the recreate advice, a stopped kubelet's and a cluster's with no looping
    /// pod too.
    #[test]
    fn a_silent_cluster_dns_is_explained_by_what_is_known() {
        let pod = |name: &str, waiting: Option<&str>| -> crate::cluster::DnsPod {
            serde_json::from_value(serde_json::json!({
                "name": name, "app": "coredns", "node": "node2", "phase": "Running",
                "ready": waiting.is_none(), "restarts": if waiting.is_some() { 5 } else { 0 },
                "waiting": waiting,
            }))
            .expect("a pod")
        };
        let mut raw = crate::testing::rules_fixture("_healthy/kubespray-ubuntu2204");
        crate::testing::set_units(&mut raw, &[("kubelet", "active")]);
        let up = NodeFacts::from_raw("node1", &raw);
        raw.pids.remove("kubelet");
        crate::testing::set_units(&mut raw, &[("kubelet", "inactive")]);
        let stopped = NodeFacts::from_raw("node1", &raw);
        assert_eq!(stopped.kubelet.pid, None);

        let note = cluster_down_note(&stopped, None);
        assert!(
            note.starts_with("cluster DNS gives no answer or SERVFAIL, and no kubelet runs on this node (kubelet: inactive): start it first"),
            "{note}"
        );
        let note = cluster_down_note(&up, None);
        assert!(
            note.contains(": CoreDNS and nodelocaldns pods forward"),
            "{note}"
        );
        let quiet = [pod("coredns-a", None), pod("coredns-b", None)];
        let note = cluster_down_note(&up, Some(&quiet));
        assert!(
            note.contains("yet none of the cluster's 2 CoreDNS and nodelocaldns pods crash-loops")
                && note.contains("kubernetes.io/service-name=kube-dns")
                && !note.contains("recreate"),
            "{note}"
        );
        let looping = [
            pod("coredns-a", Some("CrashLoopBackOff")),
            pod("coredns-b", None),
        ];
        let note = cluster_down_note(&up, Some(&looping));
        assert!(
            note.contains(", and 1 crash-loops (coredns-a): CoreDNS and nodelocaldns pods forward"),
            "{note}"
        );
        let note = cluster_down_note(&up, Some(&[]));
        assert!(
            note.contains("kubectl lists no CoreDNS or nodelocaldns pod"),
            "{note}"
        );
    }

    fn reply(id: u16, rcode: ResponseCode, answer: bool) -> Vec<u8> {
        let name = Name::from_ascii("probe.example.").expect("name");
        let mut m = Message::new(id, MessageType::Response, OpCode::Query);
        m.metadata.response_code = rcode;
        m.add_query(Query::query(name.clone(), RecordType::A));
        if answer {
            m.add_answer(Record::from_rdata(
                name,
                60,
                RData::A(A::new(192, 0, 2, 80)),
            ));
        }
        m.to_vec().expect("encode")
    }

    #[test]
    fn a_reply_passes_only_when_it_answers_the_query() {
        let q = build_query("probe.example", 7, RecordType::A).expect("query");
        let parsed = Message::from_vec(&q).expect("decode");
        assert_eq!(parsed.metadata.id, 7);
        assert!(parsed.metadata.recursion_desired);
        assert_eq!(parsed.queries[0].name().to_ascii(), "probe.example.");

        let a = RecordType::A;
        let good = judge(
            &reply(7, ResponseCode::NoError, true),
            7,
            "probe.example",
            a,
        );
        assert!(good.ok, "{good:?}");
        assert_eq!(good.answers, ["A 192.0.2.80"]);
        let other_id = judge(
            &reply(8, ResponseCode::NoError, true),
            7,
            "probe.example",
            a,
        );
        assert!(!other_id.ok);
        let nx = judge(
            &reply(7, ResponseCode::NXDomain, false),
            7,
            "probe.example",
            a,
        );
        assert_eq!((nx.ok, nx.rcode.as_deref()), (false, Some("NXDOMAIN")));
        let empty = judge(
            &reply(7, ResponseCode::NoError, false),
            7,
            "probe.example",
            a,
        );
        assert!(!empty.ok && empty.reason.is_some_and(|r| r.contains("no records")));
        assert!(empty.nodata);
        assert!(!judge(b"\x00\x01garbage", 7, "x", a).ok);
    }

    /// A reply built by hand: `question` (name, type), TC or not, and `answers`.
    fn crafted(
        id: u16,
        question: (&str, RecordType),
        truncated: bool,
        answers: Vec<Record>,
    ) -> Vec<u8> {
        let mut m = Message::new(id, MessageType::Response, OpCode::Query);
        m.metadata.truncation = truncated;
        m.add_query(Query::query(
            Name::from_ascii(question.0).expect("name"),
            question.1,
        ));
        for r in answers {
            m.add_answer(r);
        }
        m.to_vec().expect("encode")
    }

    fn a_record(owner: &str) -> Record {
        let name = Name::from_ascii(owner).expect("name");
        Record::from_rdata(name, 60, RData::A(A::new(192, 0, 2, 80)))
    }

    /// A reply counts only as an answer to the question sent, as glibc's resolver takes it
    /// (res_queriesmatch; getanswer): the same question (its name in any case), not cut
    /// short (TC), with a record of the type asked at the name or at an alias its CNAME
    /// leads to. A record of another type, or at a name the question does not lead to, is
    /// no answer: a whole NOERROR without one is "no data", which sends an A question on
    /// to AAAA.
    #[test]
    fn a_reply_must_answer_the_question_asked() {
        use hickory_proto::rr::rdata::{CNAME, TXT};
        let (a, name) = (RecordType::A, "probe.example.");
        let judged = |reply: Vec<u8>| judge(&reply, 7, "probe.example", a);

        let other_question = judged(crafted(
            7,
            ("other.example.", a),
            false,
            vec![a_record("other.example.")],
        ));
        assert!(!other_question.ok, "{other_question:?}");
        let other_type = judged(crafted(
            7,
            (name, RecordType::AAAA),
            false,
            vec![a_record(name)],
        ));
        assert!(!other_type.ok, "{other_type:?}");
        assert!(
            judged(crafted(
                7,
                ("PROBE.Example.", a),
                false,
                vec![a_record(name)]
            ))
            .ok
        );

        let cut = judged(crafted(7, (name, a), true, vec![a_record(name)]));
        assert!(!cut.ok && cut.truncated && !cut.nodata, "{cut:?}");
        assert!(cut.reason.is_some_and(|r| r.contains("truncated (TC)")));

        let txt = Record::from_rdata(
            Name::from_ascii(name).expect("name"),
            60,
            RData::TXT(TXT::new(vec!["\u{1b}[2J".to_owned()])),
        );
        let only_txt = judged(crafted(7, (name, a), false, vec![txt]));
        assert!(!only_txt.ok && only_txt.nodata, "{only_txt:?}");
        assert!(only_txt.reason.is_some_and(|r| r.contains("no A record")));
        let elsewhere = judged(crafted(
            7,
            (name, a),
            false,
            vec![a_record("other.example.")],
        ));
        assert!(!elsewhere.ok, "{elsewhere:?}");

        let alias = |owner: &str, target: &str| {
            Record::from_rdata(
                Name::from_ascii(owner).expect("owner"),
                60,
                RData::CNAME(CNAME(Name::from_ascii(target).expect("target"))),
            )
        };
        // The A record first, the CNAMEs leading to it after: order does not matter.
        let chained = judged(crafted(
            7,
            (name, a),
            false,
            vec![
                a_record("edge.cdn.example."),
                alias("www.cdn.example.", "edge.cdn.example."),
                alias(name, "www.cdn.example."),
            ],
        ));
        assert!(chained.ok, "{chained:?}");
        let dangling = judged(crafted(
            7,
            (name, a),
            false,
            vec![alias(name, "gone.example.")],
        ));
        assert!(!dangling.ok && dangling.nodata, "{dangling:?}");
    }

    /// An upstream that is the pod itself from inside a pod fails without being asked: a
    /// loopback address in any form, and the unspecified one.
    #[tokio::test]
    async fn an_upstream_that_is_the_pod_itself_is_not_asked() {
        let options = crate::transport::SshOptions::default();
        let mut session = Session::Local(crate::transport::LocalTransport::connect(&options));
        let target = Target {
            host: "node1".into(),
            connection: Host::new("node1").connection(),
        };
        for server in ["127.0.0.53", "::ffff:127.0.0.53", "0.0.0.0", "::"] {
            let probe = Probe {
                path: Path::Upstream,
                server: server.into(),
                name: "probe.example".into(),
                source: "/run/systemd/resolve/resolv.conf:1".into(),
            };
            let result = ask(&mut session, &target, probe, 7, Duration::from_millis(300)).await;
            assert!(!result.ok && result.via == "none", "{server}: {result:?}");
            assert!(
                result.reason.is_some_and(|r| r.contains("the pod itself")),
                "{server}"
            );
        }
    }

    /// Over UDP where TCP brings no reply, a reply cut short (TC) is no answer: a resolver
    /// asks again over TCP, which failed; the reason says both.
    #[tokio::test]
    async fn a_truncated_udp_reply_fails_when_tcp_brings_none() {
        let udp = tokio::net::UdpSocket::bind("127.0.0.1:0")
            .await
            .expect("bind udp");
        let port = udp.local_addr().expect("addr").port();
        tokio::spawn(async move {
            let mut buf = [0u8; 512];
            let (n, peer) = udp.recv_from(&mut buf).await.expect("query");
            let id = Message::from_vec(&buf[..n]).expect("a query").metadata.id;
            let cut = crafted(
                id,
                ("probe.example.", RecordType::A),
                true,
                vec![a_record("probe.example.")],
            );
            udp.send_to(&cut, peer).await.expect("reply");
        });
        let options = crate::transport::SshOptions::default();
        let mut session = Session::Local(crate::transport::LocalTransport::connect(&options));
        let server = (IpAddr::from([127, 0, 0, 1]), port);
        let timeout = Duration::from_millis(500);
        let answered = exchange(
            &mut session,
            server,
            "probe.example",
            13,
            RecordType::A,
            timeout,
            false,
        )
        .await
        .expect("the UDP reply");
        assert!(!answered.judged.ok && answered.udp, "{:?}", answered.judged);
        let reason = answered.judged.reason.unwrap_or_default();
        assert!(
            reason.contains("truncated (TC)") && reason.contains("over TCP"),
            "{reason}"
        );
    }

    /// A server whose TCP forward fails (SERVFAIL over TCP: CoreDNS forwards in the
    /// protocol the query came in, and TCP/53 upstream may be filtered) while UDP, which pods
    /// use, answers: the UDP reply is the one judged. Where UDP is silent too, the TCP
    /// reply stands, saying both.
    #[tokio::test]
    async fn servfail_over_tcp_is_asked_again_over_udp() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let tcp = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind tcp");
        let port = tcp.local_addr().expect("addr").port();
        let udp = tokio::net::UdpSocket::bind(("127.0.0.1", port))
            .await
            .expect("bind udp on the same port");
        tokio::spawn(async move {
            loop {
                let (mut stream, _) = tcp.accept().await.expect("accept");
                let mut len = [0u8; 2];
                stream.read_exact(&mut len).await.expect("length");
                let mut query = vec![0u8; usize::from(u16::from_be_bytes(len))];
                stream.read_exact(&mut query).await.expect("query");
                let id = Message::from_vec(&query).expect("a query").metadata.id;
                let answer = reply(id, ResponseCode::ServFail, false);
                let mut framed = u16::try_from(answer.len())
                    .expect("short")
                    .to_be_bytes()
                    .to_vec();
                framed.extend_from_slice(&answer);
                stream.write_all(&framed).await.expect("reply");
            }
        });
        tokio::spawn(async move {
            let mut buf = [0u8; 512];
            let (n, peer) = udp.recv_from(&mut buf).await.expect("query");
            let id = Message::from_vec(&buf[..n]).expect("a query").metadata.id;
            let answer = reply(id, ResponseCode::NoError, true);
            udp.send_to(&answer, peer).await.expect("reply");
            // Silent from now on.
            std::future::pending::<()>().await;
        });
        let options = crate::transport::SshOptions::default();
        let mut session = Session::Local(crate::transport::LocalTransport::connect(&options));
        let server = (IpAddr::from([127, 0, 0, 1]), port);
        let timeout = Duration::from_millis(500);
        let a = RecordType::A;
        let answered = exchange(&mut session, server, "probe.example", 11, a, timeout, false)
            .await
            .expect("a reply");
        assert!(answered.judged.ok && answered.udp, "{:?}", answered.judged);
        let silent = exchange(&mut session, server, "probe.example", 12, a, timeout, false)
            .await
            .expect("the TCP reply");
        assert!(!silent.judged.ok && !silent.udp);
        let reason = silent.judged.reason.unwrap_or_default();
        assert!(
            reason.contains("SERVFAIL") && reason.contains("over UDP"),
            "{reason}"
        );
    }

    /// Over UDP from this machine: the first datagram back is the reply; a port with
    /// nothing on it is refused (ICMP), one that never answers runs into the timeout.
    #[tokio::test]
    async fn a_udp_exchange_returns_the_reply_datagram() {
        let server = tokio::net::UdpSocket::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let at = server.local_addr().expect("addr");
        tokio::spawn(async move {
            let mut buf = [0u8; 512];
            let (n, peer) = server.recv_from(&mut buf).await.expect("query");
            let query = Message::from_vec(&buf[..n]).expect("a DNS query");
            let reply = reply(query.metadata.id, ResponseCode::NoError, true);
            server.send_to(&reply, peer).await.expect("reply");
            // Silent from now on: the next exchange waits out its timeout.
            let _ = server.recv_from(&mut buf).await;
            std::future::pending::<()>().await;
        });
        let q = build_query("probe.example", 9, RecordType::A).expect("query");
        let bytes = local_udp(at, &q, Duration::from_secs(5))
            .await
            .expect("a reply");
        assert!(judge(&bytes, 9, "probe.example", RecordType::A).ok);
        let silent = local_udp(at, &q, Duration::from_millis(300)).await;
        assert_eq!(silent, Err("no reply within 0.3s".to_owned()));

        let closed = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
        let nobody = closed.local_addr().expect("addr");
        drop(closed);
        let refused = local_udp(nobody, &q, Duration::from_secs(5)).await;
        assert!(refused.is_err_and(|e| e.contains("refused")), "refused");
    }

    /// The note that sends the user to recreate the DNS pods comes where a cluster address
    /// gave no reply or SERVFAIL, not where it answered NXDOMAIN or REFUSED (it is up and
    /// answering: a wrong cluster domain, a probe name that does not exist), nor for the
    /// node's own resolver.
    #[test]
    fn only_a_silent_or_servfailing_cluster_address_is_down() {
        let probe = |path: Path, rcode: Option<&str>| ProbeResult {
            probe: Probe {
                path,
                server: "169.254.25.10".into(),
                name: "kubernetes.default.svc.cluster.local".into(),
                source: "clusterDNS".into(),
            },
            ok: false,
            rcode: rcode.map(str::to_owned),
            answers: Vec::new(),
            latency_ms: 1,
            via: "ssh".into(),
            reason: Some("failed".into()),
        };
        for (rcode, down) in [
            (None, true),
            (Some("SERVFAIL"), true),
            (Some("NXDOMAIN"), false),
            (Some("REFUSED"), false),
            (Some("NOERROR"), false),
        ] {
            assert_eq!(
                cluster_dns_down(&[probe(Path::NodeLocalDns, rcode)]),
                down,
                "{rcode:?}"
            );
        }
        assert!(!cluster_dns_down(&[probe(Path::Host, None)]));
    }

    /// Kubespray's sample inventory sets skydns_server to the expression of its default:
    /// the probe asks the address Kubespray renders from it (the third of the first service
    /// range: the IPv6 one where `ipv4_stack: false`), never the expression; an inventory
    /// without skydns_server, or with neither an address nor a service range, adds no
    /// CoreDNS-service probe.
    #[test]
    fn the_sample_inventory_s_skydns_expression_is_probed_as_kubespray_renders_it() {
        let facts = NodeFacts::from_raw(
            "node1",
            &crate::testing::rules_fixture("_healthy/kubespray-ubuntu2204"),
        );
        let service = |vars: &[(&str, serde_json::Value)]| {
            let mut host = Host::new("node1");
            for (k, v) in vars {
                host.vars.insert((*k).to_owned(), v.clone());
            }
            let (probes, _) = probes(&host, &facts, None);
            probes
                .into_iter()
                .find(|p| p.path == Path::CoreDnsService)
                .map(|p| (p.server, p.source))
        };
        let expression = "{{ kube_service_subnets.split(',') | first | ansible.utils.ipaddr('net') | ansible.utils.ipaddr(3) | ansible.utils.ipaddr('address') }}";
        let sample = [
            ("skydns_server", expression.into()),
            ("kube_service_addresses", "10.233.0.0/18".into()),
            (
                "kube_service_addresses_ipv6",
                "fd85:ee78:d8a6:8607::1000/116".into(),
            ),
        ];
        let (server, source) = service(&sample).expect("a CoreDNS service probe");
        assert_eq!(server, "10.233.0.3");
        assert!(source.contains("third address"), "{source}");
        let mut ipv6_only = sample.to_vec();
        ipv6_only.push(("ipv4_stack", false.into()));
        assert_eq!(
            service(&ipv6_only).map(|(server, _)| server).as_deref(),
            Some("fd85:ee78:d8a6:8607::1003")
        );
        let literal = [("skydns_server", "10.96.0.10".into())];
        assert_eq!(
            service(&literal),
            Some((
                "10.96.0.10".to_owned(),
                "inventory skydns_server".to_owned()
            ))
        );
        assert_eq!(service(&[("skydns_server", expression.into())]), None);
        // No skydns_server at all: the inventory does not name the Service, no probe.
        assert_eq!(service(&sample[1..]), None);
        // Nor where Kubespray deploys no CoreDNS Service there.
        for (key, value) in [
            ("dns_mode", "manual".into()),
            ("dns_mode", "none".into()),
            ("deploy_coredns", false.into()),
        ] {
            let mut vars = sample.to_vec();
            vars.push((key, value));
            assert_eq!(service(&vars), None, "{key}");
        }
    }

    /// Every cluster address is asked the cluster's name (which CoreDNS answers itself) and
    /// the outside name (which only its forward answers): a Kubespray node's nodelocaldns
    /// and clusterDNS both, each once per name.
    #[test]
    fn cluster_addresses_are_asked_the_outside_name_too() {
        let facts = NodeFacts::from_raw(
            "node1",
            &crate::testing::rules_fixture("_healthy/kubespray-ubuntu2204"),
        );
        let mut host = Host::new("node1");
        host.vars
            .insert("dnsfix_probe_name".into(), "probe.example".into());
        let (probes, _) = probes(&host, &facts, None);
        let cluster: Vec<(&str, &str)> = probes
            .iter()
            .filter(|p| p.path.is_cluster())
            .map(|p| (p.server.as_str(), p.name.as_str()))
            .collect();
        assert!(!cluster.is_empty());
        for (server, _) in &cluster {
            for name in ["kubernetes.default.svc.cluster.local", "probe.example"] {
                assert_eq!(
                    cluster.iter().filter(|p| **p == (*server, name)).count(),
                    1,
                    "{server} {name}: {cluster:?}"
                );
            }
        }
    }

    /// `--probe-name` wins over the inventory's `dnsfix_probe_name`, which wins over the
    /// default. Before, the inventory's name was asked whatever the command line said.
    #[test]
    fn the_command_line_s_probe_name_wins_over_the_inventory_s() {
        let facts = NodeFacts::from_raw(
            "node1",
            &crate::testing::rules_fixture("_healthy/kubespray-ubuntu2204"),
        );
        let mut host = Host::new("node1");
        let asked = |host: &Host, flag: Option<&str>| -> Vec<String> {
            let (probes, _) = probes(host, &facts, flag);
            let mut names: Vec<String> = probes
                .into_iter()
                .filter(|p| p.path == Path::Upstream)
                .map(|p| p.name)
                .collect();
            names.dedup();
            names
        };
        assert_eq!(asked(&host, None), [DEFAULT_PROBE_NAME]);
        host.vars
            .insert("dnsfix_probe_name".into(), "probe.example".into());
        assert_eq!(asked(&host, None), ["probe.example"]);
        assert_eq!(asked(&host, Some("kubernetes.io")), ["kubernetes.io"]);
    }

    /// The node's own resolver is asked too: systemd-resolved's stub on a Kubespray node
    /// (from the node, its loopback is its own), after the kubelet's and the cluster's
    /// paths; a node whose /etc/resolv.conf lists none gets a note instead.
    #[test]
    fn the_node_s_own_resolver_is_a_path_of_its_own() {
        let facts = NodeFacts::from_raw(
            "node1",
            &crate::testing::rules_fixture("_healthy/kubespray-ubuntu2204"),
        );
        let host = Host::new("node1");
        let (probes, notes) = probes(&host, &facts, None);
        let last = probes.last().expect("probes");
        assert_eq!(
            (last.path, last.server.as_str(), last.name.as_str()),
            (Path::Host, "127.0.0.53", DEFAULT_PROBE_NAME)
        );
        assert!(last.source.starts_with("/etc/resolv.conf:"), "{last:?}");
        assert!(!last.path.is_cluster() && notes.is_empty(), "{notes:?}");
        assert_eq!(probes.iter().filter(|p| p.path == Path::Host).count(), 1);

        // A node whose kubelet paths cannot be found fails, whatever its own resolver says.
        let answered = |probe: Probe| ProbeResult {
            probe,
            ok: true,
            rcode: Some("NOERROR".into()),
            answers: vec!["A 192.0.2.80".into()],
            latency_ms: 1,
            via: "ssh".into(),
            reason: None,
        };
        let mut checked = Checked {
            probes: vec![answered(last.clone())],
            notes: Vec::new(),
            pods: Vec::new(),
            not_a_node: false,
        };
        assert!(checked.failed());
        checked.probes = probes.iter().cloned().map(answered).collect();
        assert!(!checked.failed());
        checked.probes.last_mut().expect("host").ok = false;
        assert!(checked.failed());

        // glibc skips a line that is not an address and reads no more than three; a
        // link-local address with a zone is noted, not asked.
        let mut raw = crate::testing::rules_fixture("_healthy/kubespray-ubuntu2204");
        let etc = raw
            .files
            .get_mut("/etc/resolv.conf")
            .expect("the node's resolv.conf");
        etc.content = b"nameserver resolver.example\nnameserver fe80::1%eth0\nnameserver 192.0.2.53\nnameserver 198.51.100.53\nnameserver 203.0.113.53\n".as_slice().into();
        let (probes, notes) = super::probes(&host, &NodeFacts::from_raw("node1", &raw), None);
        let asked: Vec<&str> = probes
            .iter()
            .filter(|p| p.path == Path::Host)
            .map(|p| p.server.as_str())
            .collect();
        assert_eq!(asked, ["192.0.2.53", "198.51.100.53"]);
        assert!(
            notes.iter().any(|n| n.contains("fe80::1%eth0 not asked")),
            "{notes:?}"
        );

        let gone = NodeFacts::from_raw(
            "node1",
            &crate::testing::rules_fixture(
                "DNS-HOST-RESOLVER-DOWN/kubeadm-resolved-disabled-after-reboot",
            ),
        );
        let (probes, notes) = super::probes(&host, &gone, None);
        assert!(probes.iter().all(|p| p.path != Path::Host), "{probes:?}");
        assert!(
            notes.iter().any(|n| n.contains("DNS-HOST-RESOLVER-DOWN")),
            "{notes:?}"
        );
    }
}

#[cfg(test)]
mod done_tests {
    use super::*;

    /// The word the run's last line counts a host by: "1 host in 0.52s: 1 passed", not
    /// "1 passes" (a newcomer's walk).
    #[test]
    fn a_host_is_counted_as_passed_or_failed() {
        let passed = Checked {
            not_a_node: true,
            ..Checked::default()
        };
        assert_eq!(done_message(&passed), "passed");
        let failed = Checked {
            notes: vec!["no kubelet resolv.conf".into()],
            ..Checked::default()
        };
        assert_eq!(done_message(&failed), "failed: no kubelet resolv.conf");
    }
}
