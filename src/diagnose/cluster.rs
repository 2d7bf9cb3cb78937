//! Findings from what the cluster says about a node (kubectl on a control-plane host,
//! [`crate::cluster`]): its CoreDNS and nodelocaldns pods, and kube-system's DNS
//! ConfigMaps. Pure, like the per-host rules.

use super::corefile_loop::{self, Loop};
use super::finding::Severity;
use super::rules::{
    Ctx, PodResolv, RuleOutcome, kubespray_nodelocaldns, link_local, pod_resolv, resolv_chain,
};
use crate::cluster::{Cluster, DnsConfig, DnsPod, KubeadmKubelet};
use crate::facts::NodeFacts;
use crate::facts::node_facts::FlavourKind;
use crate::facts::node_facts::{Observed, UnitState};
use crate::inventory::Host;

pub const POD_LOOP: &str = "DNS-POD-LOOP";
pub const KUBEADM_DRIFT: &str = "DNS-KUBEADM-CONFIG-DRIFT";
pub const COREFILE_UPSTREAM: &str = "DNS-COREFILE-UPSTREAM-DRIFT";
pub const NODELOCAL_DOWN: &str = "DNS-NODELOCAL-DOWN";
pub const COREFILE_LOOP: &str = "DNS-COREFILE-LOOP";
/// The `about` of a DNS-POD-LOOP finding that a Corefile's loop explains
/// (DNS-COREFILE-LOOP): kubelet-resolvconf leaves its pods alone, and the plan does not
/// call it fixed.
pub const POD_LOOP_IN_COREFILE: &str = "corefile";

/// The cluster rules' outcomes for one host.
pub fn rules(
    host: &Host,
    facts: &NodeFacts,
    cluster: &Cluster,
) -> Vec<(&'static str, RuleOutcome)> {
    let ctx = Ctx::new(host, facts);
    match cluster {
        Cluster::Unavailable { reason } => {
            let why = format!("the cluster was not read: {reason}");
            vec![
                (POD_LOOP, RuleOutcome::NotApplicable(why.clone())),
                (NODELOCAL_DOWN, RuleOutcome::NotApplicable(why.clone())),
                (KUBEADM_DRIFT, RuleOutcome::NotApplicable(why.clone())),
                (COREFILE_UPSTREAM, RuleOutcome::NotApplicable(why.clone())),
                (COREFILE_LOOP, RuleOutcome::NotApplicable(why)),
            ]
        }
        Cluster::Read {
            via,
            pods,
            config,
            kubelets,
        } => judge(&ctx, via, DnsPods::listed(pods), config, kubelets),
    }
}

/// The cluster's DNS pods as the cluster rules judge them: as kubectl listed them, or with
/// the replacements a plan predicts in place of the node's crash-looping ones.
#[derive(Debug, Clone, Copy)]
struct DnsPods<'a> {
    /// Every node's CoreDNS and NodeLocal DNSCache pods.
    all: &'a [DnsPod],
    /// The node's caches among `all` are replacements a plan predicts, which the node's
    /// socket table, read before them, does not show.
    caches_replaced: bool,
}

impl<'a> DnsPods<'a> {
    /// The pods as kubectl listed them.
    fn listed(all: &'a [DnsPod]) -> Self {
        DnsPods {
            all,
            caches_replaced: false,
        }
    }
}

/// The cluster rules' outcomes for the node of `ctx` in a cluster read through `via`, with
/// its DNS `pods`.
fn judge(
    ctx: &Ctx,
    via: &str,
    pods: DnsPods,
    config: &DnsConfig,
    kubelets: &crate::cluster::Kubelets,
) -> Vec<(&'static str, RuleOutcome)> {
    let names = crate::cluster::node_names(ctx.host, ctx.facts);
    let mine: Vec<&DnsPod> = pods
        .all
        .iter()
        .filter(|p| names.contains(&p.node))
        .collect();
    let addresses = loop_addresses(ctx.host, ctx.facts, config);
    let loops = corefile_loop::loops(config, &addresses);
    vec![
        (POD_LOOP, pod_loop(ctx, via, &mine, &loops)),
        (
            NODELOCAL_DOWN,
            nodelocal_down(ctx, via, &names, pods, kubelets),
        ),
        (KUBEADM_DRIFT, kubeadm_drift(ctx, config)),
        (COREFILE_UPSTREAM, corefile_upstream(ctx, via, config)),
        (COREFILE_LOOP, corefile_loops(ctx, via, config, &loops)),
    ]
}

/// What a plan does that the cluster rules see, beside the node's files
/// ([`rules_planned`]).
#[derive(Debug, Clone, Copy)]
pub struct Planned<'a> {
    /// The ConfigMap keys the plan writes: (configmap, key, the new Corefile).
    pub edits: &'a [(&'a str, &'a str, &'a str)],
    /// The plan recreates this node's DNS pods once its kubelet restarted.
    pub recreated: bool,
    /// The resolv.conf the kubelet hands a recreated pod still loops, or is missing (the
    /// node's rules on its predicted facts say so).
    pub kubelet_file_loops: bool,
}

/// [`rules`] of the node as a plan leaves it: `facts` its predicted facts, the Corefiles
/// with the plan's `edits` written, and, where the plan recreates the node's DNS pods, each
/// that crash-looped replaced as `replacement` predicts. The rest is the cluster as read.
pub fn rules_planned(
    host: &Host,
    facts: &NodeFacts,
    cluster: &Cluster,
    planned: Planned,
) -> Vec<(&'static str, RuleOutcome)> {
    use std::borrow::Cow;
    let Cluster::Read {
        via,
        pods,
        config,
        kubelets,
    } = cluster
    else {
        return rules(host, facts, cluster);
    };
    let config = if planned.edits.is_empty() {
        Cow::Borrowed(&**config)
    } else {
        Cow::Owned(edited(config, planned.edits))
    };
    let names = crate::cluster::node_names(host, facts);
    let replaced: Vec<(usize, DnsPod)> = if planned.recreated {
        let addresses = loop_addresses(host, facts, &config);
        let loops = corefile_loop::loops(&config, &addresses);
        pods.iter()
            .enumerate()
            .filter(|(_, p)| names.contains(&p.node))
            .filter_map(|(i, p)| Some((i, replacement(p, &loops, planned.kubelet_file_loops)?)))
            .collect()
    } else {
        Vec::new()
    };
    let ctx = Ctx::new(host, facts);
    if replaced.is_empty() {
        return judge(&ctx, via, DnsPods::listed(pods), &config, kubelets);
    }
    // A cache that serves again listens where the socket table read before the plan had
    // nothing: the pods say it.
    let caches_replaced = replaced.iter().any(|(_, p)| p.is_node_local());
    let mut pods = pods.clone();
    for (i, pod) in replaced {
        pods[i] = pod;
    }
    let pods = DnsPods {
        all: &pods,
        caches_replaced,
    };
    judge(&ctx, via, pods, &config, kubelets)
}

/// What replaces `pod`, recreated by the plan, where that changes anything: one that
/// crash-looped on plugin/loop comes up Ready (apply waits for that, or fails the host)
/// unless the root `forward .` of its Corefile still loops (`loops`, as the plan leaves
/// them) or the kubelet still hands it a file that loops (`file_loops`). A pod down for
/// another reason is not predicted to come up.
fn replacement(pod: &DnsPod, loops: &[Loop], file_loops: bool) -> Option<DnsPod> {
    pod.loop_detected.as_ref()?;
    if file_loops || loops.iter().any(|l| l.server == server_of(pod)) {
        return None;
    }
    Some(DnsPod {
        phase: "Running".into(),
        ready: true,
        restarts: 0,
        waiting: None,
        running: true,
        terminating: false,
        loop_detected: None,
        ..pod.clone()
    })
}

/// `config` with the ConfigMap keys `edits` (configmap, key, new Corefile) written.
fn edited(config: &DnsConfig, edits: &[(&str, &str, &str)]) -> DnsConfig {
    let mut config = config.clone();
    for c in &mut config.corefiles {
        if let Some((_, _, text)) = edits
            .iter()
            .find(|(m, k, _)| *m == c.configmap && *k == c.key)
        {
            let edited = crate::cluster::Corefile::new(&c.configmap, &c.key, text);
            c.blocks = edited.blocks;
            c.imports = edited.imports;
            c.unreadable = edited.unreadable;
            c.text = edited.text;
        }
    }
    config
}

/// [`POD_LOOP`] unknown where one of the pods `down` restarted and its previous log was not
/// read: past the [`crate::cluster`] budget, or kubectl could not read it (why, pod by pod,
/// those with one reason together).
fn unread_logs(ctx: &Ctx, down: &[&crate::cluster::DnsPod]) -> Option<crate::diagnose::Finding> {
    let mut unread: Vec<(&str, Vec<&str>)> = Vec::new();
    for p in down.iter().filter(|p| p.restarts > 0 && !p.logs_read) {
        let why = p
            .logs_unread
            .as_deref()
            .unwrap_or("more restarting DNS pods than dnsfix reads logs of");
        match unread.iter_mut().find(|(w, _)| *w == why) {
            Some((_, names)) => names.push(&p.name),
            None => unread.push((why, vec![&p.name])),
        }
    }
    if unread.is_empty() {
        return None;
    }
    let evidence: Vec<String> = unread
        .iter()
        .map(|(why, names)| match names.as_slice() {
            [one] => format!("the previous log of {one} was not read ({why})"),
            many => format!(
                "the previous logs of {} were not read ({why})",
                many.join(", ")
            ),
        })
        .collect();
    Some(crate::diagnose::Finding {
        id: POD_LOOP,
        severity: Severity::Critical,
        status: crate::diagnose::FindingStatus::Unknown,
        host: ctx.host.name.clone(),
        summary: format!("cannot tell: {}", evidence.join("; ")),
        evidence,
        remediation:
            "kubectl -n kube-system logs POD --previous shows whether it died on plugin/loop".into(),
        playbook: None,
        wanted: Default::default(),
        about: None,
    })
}

/// A CoreDNS or nodelocaldns pod on this node crash-looping on the loop plugin: it keeps
/// the resolv.conf it was created with, so it needs the kubelet's file fixed and then to
/// be recreated.
fn pod_loop(ctx: &Ctx, via: &str, pods: &[&crate::cluster::DnsPod], loops: &[Loop]) -> RuleOutcome {
    // Down now (a pod that recovered is not this finding), and its last run died on the
    // loop plugin.
    let down = |p: &&&crate::cluster::DnsPod| !p.ready || p.waiting.is_some();
    let looping: Vec<&&crate::cluster::DnsPod> = pods
        .iter()
        .filter(down)
        .filter(|p| p.loop_detected.is_some())
        .collect();
    if looping.is_empty() {
        // A pod down whose last log was not read cannot be called clean.
        let down: Vec<&crate::cluster::DnsPod> = pods.iter().filter(down).copied().collect();
        return unread_logs(ctx, &down)
            .map_or(RuleOutcome::Pass, |f| RuleOutcome::Findings(vec![f]));
    }
    let resolv = match pod_resolv(ctx) {
        PodResolv::Parsed(e, f, p) => {
            let servers: Vec<&str> = p.nameservers.iter().map(|n| n.address.as_str()).collect();
            format!(
                "kubelet hands it {}: nameserver {}",
                resolv_chain(e, f),
                servers.join(", ")
            )
        }
        PodResolv::NoKubelet => "no kubelet runs here now".to_owned(),
        PodResolv::Unknown(why) => format!("the kubelet's resolv.conf: {why}"),
        PodResolv::Broken => "the kubelet's resolv.conf is missing or lists no server".to_owned(),
    };
    let mut evidence = Vec::new();
    for pod in &looping {
        evidence.push(pod.seen(via));
        if let Some(line) = &pod.loop_detected {
            evidence.push(format!("its last run ended: {line}"));
        }
    }
    // A Corefile whose root `forward .` loops explains the crash; the kubelet's file counts
    // only where a looping pod's root forwards to it too.
    let corefile: Vec<&Loop> = loops
        .iter()
        .filter(|l| looping.iter().any(|p| server_of(p) == l.server))
        .collect();
    let explained = looping
        .iter()
        .all(|p| corefile.iter().any(|l| l.server == server_of(p)))
        && !corefile.iter().any(|l| l.forward.to_resolv_conf());
    for l in &corefile {
        evidence.push(format!(
            "{} line {}: forward . {}, which loops (DNS-COREFILE-LOOP)",
            loop_at(l),
            l.forward.line,
            escaped(&l.forward.to)
        ));
    }
    if !explained {
        evidence.push(resolv);
    }
    let names: Vec<&str> = looping.iter().map(|p| p.name.as_str()).collect();
    let mut finding = ctx.finding(
        POD_LOOP,
        Severity::Critical,
        format!(
            "{} crash-loops on a forwarding loop (plugin/loop): {}",
            names.join(", "),
            if explained {
                "its Corefile's root `forward .` sends names outside the cluster back to the cluster's DNS"
            } else {
                "it keeps the resolv.conf it was created with until it is recreated"
            }
        ),
        evidence,
        pod_loop_fix(),
    );
    if explained {
        // Neither the kubelet's file nor a new pod helps: the loop is the ConfigMap's.
        finding.remediation = "fix the Corefile's root `forward .` first (DNS-COREFILE-LOOP names the ConfigMap, the line and what to forward to): the kubelet's resolv.conf is not what loops, and a recreated pod loads the same Corefile; once the ConfigMap is fixed the pod loads it at its next restart".into();
        finding.playbook = None;
        finding.about = Some(POD_LOOP_IN_COREFILE);
    } else if !corefile.is_empty() {
        finding.remediation = format!(
            "fix the Corefile's root `forward .` (DNS-COREFILE-LOOP), and {}",
            pod_loop_fix()
        );
    }
    RuleOutcome::Findings(vec![finding])
}

/// The DNS server a pod runs.
fn server_of(pod: &DnsPod) -> corefile_loop::Server {
    if pod.is_node_local() {
        corefile_loop::Server::NodeLocal
    } else {
        corefile_loop::Server::Coredns
    }
}

/// The ConfigMap and key of a loop's Corefile (`kube-system/configmap/coredns Corefile`).
fn loop_at(l: &Loop) -> String {
    format!(
        "{}/configmap/{} {}",
        l.corefile.namespace(),
        l.corefile.configmap,
        l.corefile.key
    )
}

/// Corefile words, escaped for a message and joined.
fn escaped(words: &[String]) -> String {
    words
        .iter()
        .map(|w| crate::text::escape(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// DNS-POD-LOOP's remediation: dnsfix apply restarts the kubelet and recreates the node's
/// DNS pods, kube-system's and those of CoreDNS found through a cluster DNS Service
/// outside kube-system alike, each in its namespace (the evidence names it).
fn pod_loop_fix() -> String {
    "give the kubelet a resolv.conf with only real upstream servers, restart it, then delete the pod so its replacement reads the new file (dnsfix apply does both: playbook kubelet-resolvconf)".to_owned()
}

/// kubelet's clusterDNS is an address NodeLocal DNSCache serves on this node, and nothing
/// answers there: no UDP socket on it in the node's socket table, or, where that was not
/// read, no cache pod on the node serving (the primary Ready, the secondary running).
/// node-cache takes its interface down when it is stopped (SIGTERM), and a Kubespray node
/// without the interface is DNS-NODELOCAL-CLUSTERDNS's, from the node alone. One that
/// crashed (a fatal error, plugin/loop's among them, exits without its exit hook), was
/// SIGKILLed (the OOM killer, the secondary's preStop `kill -9 1`) or runs with
/// `-skipteardown` (Kubespray's two DaemonSets with `enable_nodelocaldns_secondary`) leaves
/// the interface and its addresses behind (the upstream manifest's in iptables mode: the
/// kube-dns service IP too), and the node's files alone look healthy. Elsewhere (kubeadm
/// with the upstream manifest) a link-local clusterDNS with neither interface nor cache is
/// as dead. Judged only where the cluster lists NodeLocal DNSCache pods by their labels: a
/// cache deployed otherwise (AKS LocalDNS) is not one dnsfix can see. Where the node's
/// caches among `pods` are the replacements a plan predicts (`caches_replaced`), a socket
/// table read before them that shows nothing listening says nothing of them: the pods
/// decide.
fn nodelocal_down(
    ctx: &Ctx,
    via: &str,
    names: &[String],
    pods: DnsPods,
    kubelets: &crate::cluster::Kubelets,
) -> RuleOutcome {
    let dns = match &ctx.facts.kubelet.cluster_dns {
        Observed::Known(e) => e,
        _ => return RuleOutcome::NotApplicable("kubelet's clusterDNS is not known".into()),
    };
    let served = match cache_addresses(ctx, dns) {
        Ok(served) => served,
        Err(why) => return RuleOutcome::NotApplicable(why),
    };
    let caches: Vec<&DnsPod> = pods.all.iter().filter(|p| p.is_node_local()).collect();
    // A cache deployed under other labels is not one dnsfix can see.
    if caches.is_empty() {
        return RuleOutcome::NotApplicable(format!(
            "the cluster lists no NodeLocal DNSCache pod (k8s-app node-local-dns or node-local-dns-second; kubectl on {via})"
        ));
    }
    // What listens on the node decides where the kernel's socket table was read; the pods
    // then say why nothing does. Where it was not, the pods decide.
    let listening = ctx
        .facts
        .dns_answers_on(served.iter().filter_map(|a| a.parse().ok()))
        .filter(|answers| *answers || !pods.caches_replaced);
    if listening == Some(true) {
        return RuleOutcome::Pass;
    }
    let here: Vec<&DnsPod> = caches
        .iter()
        .copied()
        .filter(|p| names.contains(&p.node))
        .collect();
    let node = names.first().map_or("?", String::as_str);
    // A node the cluster lists under a name dnsfix knows: "no pod here" means that.
    let named = names.iter().any(|n| kubelets.contains_key(n));
    if listening.is_none() {
        if here.iter().any(|p| p.serving()) {
            return RuleOutcome::Pass;
        }
        // No pod here may only mean that the cluster calls this node otherwise (an FQDN,
        // k3s's node-name).
        if here.is_empty() && !named {
            let nodes = if kubelets.is_empty() {
                format!("the cluster's nodes were not read (kubectl get nodes on {via})")
            } else {
                format!(
                    "the cluster's nodes (kubectl get nodes on {via}) do not include it under that name"
                )
            };
            return RuleOutcome::NotApplicable(format!(
                "no NodeLocal DNSCache pod lists node {} and {nodes}",
                names.join(" or ")
            ));
        }
    }
    let first = served[0];
    let mut evidence = vec![format!(
        "{} clusterDNS: [{}]",
        dns.source.at(),
        dns.value.join(", ")
    )];
    let (on_node, effect) = match &ctx.facts.nodelocaldns {
        Some(addrs) => {
            evidence.push(format!("interface nodelocaldns: {}", addrs.join(", ")));
            (
                format!(
                    "but the nodelocaldns interface still holds kubelet clusterDNS {first} (node-cache crashed, was killed or runs with -skipteardown): nothing serves it"
                ),
                "fails",
            )
        }
        None => {
            evidence.push(
                "no nodelocaldns interface (/sys/class/net/nodelocaldns does not exist)".into(),
            );
            (
                format!(
                    "and no nodelocaldns interface holds kubelet clusterDNS {first}: nothing on this node answers it"
                ),
                "times out",
            )
        }
    };
    if listening == Some(false) {
        evidence.push(format!(
            "{}, {}: no UDP socket on port 53 of {first} or of every address",
            crate::facts::sockets::UDP,
            crate::facts::sockets::UDP6
        ));
    }
    let what = down_pods(via, names, named, &caches, &here, &mut evidence);
    let (severity, effect) = match dns.value.iter().find(|a| !served.contains(a)) {
        None => (
            Severity::Critical,
            format!("every lookup of its ClusterFirst pods {effect}"),
        ),
        Some(next) => (
            Severity::High,
            format!(
                "lookups of its ClusterFirst pods reach {next} only after an error or a timeout"
            ),
        ),
    };
    let fix = down_fix(node, &here);
    RuleOutcome::Findings(vec![ctx.finding(
        NODELOCAL_DOWN,
        severity,
        format!("{what}, {on_node}, so {effect}"),
        evidence,
        fix,
    )])
}

/// The clusterDNS addresses a NodeLocal DNSCache on this node would answer: those its
/// nodelocaldns interface holds; with no such interface, the link-local ones, except on
/// a Kubespray node (DNS-NODELOCAL-CLUSTERDNS says it from the node) or with Cilium (a
/// Local Redirect Policy needs no interface). `Err`: why the rule does not apply.
fn cache_addresses<'a>(
    ctx: &Ctx,
    dns: &'a crate::facts::node_facts::Effective<Vec<String>>,
) -> Result<Vec<&'a String>, String> {
    let served: Vec<&String> = match &ctx.facts.nodelocaldns {
        Some(addrs) => dns.value.iter().filter(|a| addrs.contains(a)).collect(),
        None if ctx.facts.nodelocaldns_absent() => {
            let local = link_local(dns.value.iter());
            if local
                .first()
                .is_some_and(|a| kubespray_nodelocaldns(ctx, a))
            {
                return Err(
                    "no nodelocaldns interface on this Kubespray node: DNS-NODELOCAL-CLUSTERDNS"
                        .into(),
                );
            }
            if ctx.facts.cni.plugins.iter().any(|p| p == "cilium-cni") {
                return Err(format!(
                    "no nodelocaldns interface, and with Cilium a Local Redirect Policy can serve the address without one{}",
                    crate::facts::cni::cilium_caveat(&ctx.facts.cni)
                ));
            }
            local
        }
        None => return Err("whether this node has a nodelocaldns interface is not known".into()),
    };
    if served.is_empty() {
        return Err(match ctx.facts.nodelocaldns {
            Some(_) => "kubelet's clusterDNS is not an address of the nodelocaldns interface",
            None => {
                "no nodelocaldns interface, and kubelet's clusterDNS is not a link-local address"
            }
        }
        .into());
    }
    Ok(served)
}

/// What the cluster says of this node's NodeLocal DNSCache pods (`here`; `caches`, every
/// one in the cluster), as the finding's subject, with its evidence.
fn down_pods(
    via: &str,
    names: &[String],
    named: bool,
    caches: &[&DnsPod],
    here: &[&DnsPod],
    evidence: &mut Vec<String>,
) -> String {
    let node = names.first().map_or("?", String::as_str);
    if here.is_empty() && !named {
        evidence.push(format!(
            "no NodeLocal DNSCache pod lists node {} (kubectl on {via})",
            names.join(" or ")
        ));
        format!("no NodeLocal DNSCache pod is listed under node {node}'s names")
    } else if here.is_empty() {
        evidence.push(format!(
            "no NodeLocal DNSCache pod on node {node}; {} on other nodes, e.g. kube-system/{} on {} (kubectl on {via})",
            caches.len(),
            caches[0].name,
            caches[0].node
        ));
        format!("no NodeLocal DNSCache pod runs on node {node}")
    } else {
        for p in here {
            evidence.push(p.seen(via));
        }
        let names: Vec<&str> = here.iter().map(|p| p.name.as_str()).collect();
        let verb = if names.len() == 1 { "is" } else { "are" };
        let state = if here.iter().any(|p| p.serving()) {
            "running yet not listening"
        } else {
            "not ready"
        };
        format!("{} {verb} {state}", names.join(" and "))
    }
}

/// How to get a cache serving on `node` again.
fn down_fix(node: &str, here: &[&DnsPod]) -> String {
    if here.iter().any(|p| p.loop_detected.is_some()) {
        format!(
            "get a NodeLocal DNSCache pod ready on node {node}; it crash-loops on a forwarding loop: fix that first (DNS-POD-LOOP), then its replacement serves"
        )
    } else {
        format!(
            "get a NodeLocal DNSCache pod ready on node {node}; kubectl -n kube-system describe pod and logs --previous say why (OOMKilled: raise nodelocaldns_memory_limit; a taint: the DaemonSet's tolerations)"
        )
    }
}

/// With `upstream_dns_servers` set in the inventory, Kubespray renders those servers into
/// the root `forward .` of the coredns and nodelocaldns Corefiles; a Corefile that
/// forwards elsewhere (a cluster deployed before the value was set) is judged on the
/// control-plane hosts, where Kubespray renders it.
fn corefile_upstream(ctx: &Ctx, via: &str, config: &DnsConfig) -> RuleOutcome {
    if !ctx.host.groups.iter().any(|g| g == "kube_control_plane") {
        return RuleOutcome::NotApplicable(
            "the Corefiles are judged on the kube_control_plane hosts".into(),
        );
    }
    let servers: Vec<String> = match ctx.host.var_list("upstream_dns_servers") {
        Some(list) if !list.is_empty() => list,
        _ => {
            return RuleOutcome::NotApplicable(
                "upstream_dns_servers is not set in the inventory".into(),
            );
        }
    };
    // What Kubespray renders at all (roles/kubernetes-apps/ansible/tasks/main.yml
    // @46dbdd39): CoreDNS with dns_mode coredns or coredns_dual and deploy_coredns,
    // nodelocaldns with enable_nodelocaldns, whatever dns_mode (manual included).
    let dns_mode = ctx.host.var_str("dns_mode").unwrap_or("coredns");
    let coredns = super::rules::kubespray_deploys_coredns(ctx.host);
    let nodelocaldns = ctx.host.var_truthy("enable_nodelocaldns") != Some(false);
    if !coredns && !nodelocaldns {
        return RuleOutcome::NotApplicable(format!(
            "Kubespray renders no Corefile: dns_mode is {dns_mode}{}, and enable_nodelocaldns is false",
            if ctx.host.var_truthy("deploy_coredns") == Some(false) {
                ", deploy_coredns false"
            } else {
                ""
            }
        ));
    }
    if config.corefiles.is_empty() {
        return RuleOutcome::NotApplicable(match &config.error {
            Some(e) => format!("the Corefiles could not be read: {e}"),
            None => "the cluster has no coredns or nodelocaldns Corefile".into(),
        });
    }
    // Kubespray renders a server written as a template (`"{{ corp_dns }}"`) with Ansible:
    // what the Corefiles should forward to is not known here, and never the template's text.
    if let Some(template) = super::rules::unrendered_upstream_dns_server(ctx) {
        return ctx.unknown_because(
            COREFILE_UPSTREAM,
            format!(
                "inventory upstream_dns_servers holds {}, a template dnsfix does not render: whether the Corefiles forward where Kubespray renders it is not known",
                crate::text::escape(&template)
            ),
            "write upstream_dns_servers as addresses in the inventory, or compare `forward .` in the `.:53` block of the coredns and nodelocaldns Corefiles with what Ansible renders".into(),
        );
    }
    let (mut off, mut evidence, mut unknown, mut nowhere) =
        (Vec::new(), Vec::new(), Vec::new(), false);
    for c in &config.corefiles {
        // A CoreDNS Kubespray does not render (a Helm release's, found through the pods'
        // volumes) is not held to upstream_dns_servers: the playbook edits `coredns` only.
        // Nor one whose ConfigMap another owner writes back (k3s's deploy controller, the
        // addon manager): the playbook's edit would not last.
        // Nor one outside kube-system, where Kubespray renders none.
        let kubesprays_coredns =
            c.configmap == "coredns" && c.helm_release.is_none() && c.namespace() == "kube-system";
        if (c.configmap == "nodelocaldns" && !nodelocaldns)
            || (c.configmap == "coredns" && !coredns)
            || (!c.is_node_local() && !kubesprays_coredns)
            || c.unloaded
            || c.owner.is_some()
        {
            continue;
        }
        let at = format!("{}/configmap/{} {}", c.namespace(), c.configmap, c.key);
        match upstream_of(c, &servers) {
            Upstream::Same => {}
            Upstream::Off(what, forwards) => {
                off.push(c.configmap.clone());
                nowhere |= !forwards;
                evidence.push(format!("{at} {what} (kubectl on {via})"));
            }
            Upstream::Unknown(why) => unknown.push(format!("{at}: {why} (kubectl on {via})")),
        }
    }
    if off.is_empty() && !unknown.is_empty() {
        return ctx.unknown_because(
            COREFILE_UPSTREAM,
            unknown.join("; "),
            "compare `forward .` in the `.:53` block of the coredns and nodelocaldns Corefiles with upstream_dns_servers by hand (kubectl -n kube-system get configmap coredns nodelocaldns -o yaml)".into(),
        );
    }
    if off.is_empty() {
        return RuleOutcome::Pass;
    }
    evidence.extend(unknown);
    drift(ctx, &servers, off, evidence, nowhere)
}

/// The DNS-COREFILE-UPSTREAM-DRIFT finding: the ConfigMaps `off` upstream_dns_servers
/// (`servers`), with their `evidence`; `nowhere` where one forwards those names nowhere.
fn drift(
    ctx: &Ctx,
    servers: &[String],
    mut off: Vec<String>,
    mut evidence: Vec<String>,
    nowhere: bool,
) -> RuleOutcome {
    evidence.push(format!(
        "inventory upstream_dns_servers: {} (Kubespray renders `forward . {0}` there)",
        servers.join(" ")
    ));
    // The cluster's own DNS among them: the line Kubespray renders is a loop, so the fix is
    // the inventory's, and corefile-upstream does not write it.
    let own: Vec<&str> = servers
        .iter()
        .filter(|s| {
            crate::cluster::corefile::target_address(s).is_some_and(|ip| ctx.cluster.contains(&ip))
        })
        .map(String::as_str)
        .collect();
    if !own.is_empty() {
        evidence.push(format!(
            "upstream_dns_servers lists the cluster's own DNS ({}): forwarding there loops",
            own.join(", ")
        ));
    }
    off.dedup();
    let (s, verb) = if off.len() == 1 { ("", "s") } else { ("s", "") };
    let summary = if nowhere {
        format!(
            "the {} Corefile{s} do{} not forward names outside the cluster to upstream_dns_servers",
            off.join(" and "),
            if off.len() == 1 { "es" } else { "" }
        )
    } else {
        format!(
            "the {} Corefile{s} forward{verb} names outside the cluster elsewhere than upstream_dns_servers",
            off.join(" and ")
        )
    };
    RuleOutcome::Findings(vec![ctx.finding(
        COREFILE_UPSTREAM,
        Severity::Warning,
        summary,
        evidence,
        if !own.is_empty() {
            format!(
                "list real upstream servers in upstream_dns_servers, without {}: Kubespray would render a forwarding loop into the Corefiles, and the loop plugin stops every CoreDNS and nodelocaldns pod on it (dnsfix's corefile-upstream does not write it); then set `forward .` in the `.:53` block to them",
                own.join(", ")
            )
        } else if nowhere {
            // The edit replaces a root `forward .`'s servers; it adds no line or block.
            "add `forward . ` and upstream_dns_servers to the `.:53` block by hand (kubectl -n kube-system edit configmap), the line Kubespray renders, or re-run Kubespray's cluster.yml: dnsfix's corefile-upstream changes an existing `forward .` only".into()
        } else {
            "set `forward .` in the `.:53` block to upstream_dns_servers, the line Kubespray renders (dnsfix apply: playbook corefile-upstream), or re-run Kubespray's cluster.yml".into()
        },
    )])
}

/// How a Corefile's root `forward .` stands to the inventory's upstream_dns_servers.
enum Upstream {
    /// It forwards there.
    Same,
    /// It does not: what it does instead, and whether it forwards names outside the
    /// cluster anywhere at all.
    Off(String, bool),
    /// Not known: why.
    Unknown(String),
}

/// What the Corefile `c` does with names outside the cluster, next to `servers`, where
/// Kubespray renders `forward . SERVERS` in the `.:53` block. A Corefile with no root block,
/// or a root block without a `forward .`, forwards them nowhere: not what Kubespray renders
/// either. One dnsfix could not read, or whose root forward may come from a file it
/// imports, is unknown, never clean.
fn upstream_of(c: &crate::cluster::Corefile, servers: &[String]) -> Upstream {
    use crate::cluster::corefile::RootForward;
    match c.root_forward() {
        RootForward::Forward(_, f) if f.to == servers => Upstream::Same,
        RootForward::Forward(_, f) => Upstream::Off(
            format!("line {}: forward . {}", f.line, f.to.join(" ")),
            true,
        ),
        RootForward::NoForward(block) => Upstream::Off(
            format!(
                "line {}: the {} block has no `forward .`, so names outside the cluster are forwarded nowhere",
                block.line,
                block.zones.join(" ")
            ),
            false,
        ),
        RootForward::NoRoot => Upstream::Off(
            "has no block for the root zone (`.:53`), so names outside the cluster are forwarded nowhere".into(),
            false,
        ),
        RootForward::Unknown(why) => Upstream::Unknown(format!("where it forwards is not known: {why}")),
    }
}

/// The cluster's own DNS addresses, split by the server answering them
/// ([`corefile_loop::Addresses`]): NodeLocal DNSCache's, the node's nodelocaldns interface
/// and Kubespray's nodelocaldns_ip (169.254.25.10 by default) where enable_nodelocaldns is
/// not false; CoreDNS's, its Services' ClusterIPs and Kubespray's skydns_server (and
/// skydns_server_secondary with dns_mode coredns_dual).
///
/// The kubelet's clusterDNS counts as CoreDNS's only where no DNS Service was listed: it
/// may name another resolver (a host dnsmasq, a cache on the node) that CoreDNS rightly
/// forwards to, and a loop called on it would be a false critical.
fn loop_addresses(host: &Host, facts: &NodeFacts, config: &DnsConfig) -> corefile_loop::Addresses {
    use std::net::IpAddr;
    let mut cache: std::collections::BTreeSet<IpAddr> = facts
        .nodelocaldns
        .iter()
        .flatten()
        .filter_map(|a| a.parse().ok())
        .collect();
    if host.var_truthy("enable_nodelocaldns") != Some(false) {
        let ip = host.var_str("nodelocaldns_ip").unwrap_or("169.254.25.10");
        cache.extend(ip.parse::<IpAddr>().ok());
    }
    let listed = config
        .services
        .iter()
        .flatten()
        .chain(&config.services_elsewhere);
    let mut coredns: std::collections::BTreeSet<IpAddr> = listed
        .flat_map(|s| &s.cluster_ips)
        .filter_map(|ip| ip.parse().ok())
        .collect();
    if let (true, Observed::Known(e)) = (coredns.is_empty(), &facts.kubelet.cluster_dns) {
        coredns.extend(e.value.iter().filter_map(|a| a.parse::<IpAddr>().ok()));
    }
    let kubespray = facts.flavour.kind == FlavourKind::Kubespray;
    coredns.extend(super::rules::kubespray_dns_server(host, kubespray));
    if host.var_str("dns_mode") == Some("coredns_dual") {
        coredns.extend(super::rules::kubespray_secondary_dns_server(
            host, kubespray,
        ));
    }
    corefile_loop::Addresses::new(&coredns, &cache, config)
}

/// A root `forward .` of the coredns or nodelocaldns Corefile that sends names outside the
/// cluster back into the cluster's DNS ([`corefile_loop`]): critical where every target
/// comes back (the loop plugin stops the pods), high where some do. Judged on the
/// control-plane hosts, like the drift rule: the Corefiles are the cluster's.
fn corefile_loops(ctx: &Ctx, via: &str, config: &DnsConfig, loops: &[Loop]) -> RuleOutcome {
    if !ctx.host.groups.iter().any(|g| g == "kube_control_plane") {
        return RuleOutcome::NotApplicable(
            "the Corefiles are judged on the kube_control_plane hosts".into(),
        );
    }
    if config.corefiles.is_empty() {
        return RuleOutcome::NotApplicable(match &config.error {
            Some(e) => format!("the Corefiles could not be read: {e}"),
            None => "the cluster has no coredns or nodelocaldns Corefile".into(),
        });
    }
    if loops.is_empty() {
        return RuleOutcome::Pass;
    }
    let mut evidence = Vec::new();
    for l in loops {
        evidence.push(format!(
            "{} line {}: forward . {} (kubectl on {via})",
            loop_at(l),
            l.forward.line,
            escaped(&l.forward.to)
        ));
        for (target, why) in &l.looping {
            evidence.push(format!("{} is {why}", crate::text::escape(target)));
        }
    }
    let every = loops.iter().any(|l| l.every);
    let names: Vec<&str> = loops
        .iter()
        .map(|l| l.corefile.configmap.as_str())
        .collect();
    let mut names = names;
    names.dedup();
    let summary = if every {
        format!(
            "the {} Corefile's root `forward .` sends names outside the cluster back to the cluster's DNS: the loop plugin stops its pods, and those names fail",
            names.join(" and ")
        )
    } else {
        format!(
            "the {} Corefile's root `forward .` sends part of the names outside the cluster back to the cluster's DNS: those loop until they time out",
            names.join(" and ")
        )
    };
    let fix: Vec<String> = loops.iter().map(|l| loop_fix(ctx, l)).collect();
    RuleOutcome::Findings(vec![ctx.finding(
        COREFILE_LOOP,
        if every {
            Severity::Critical
        } else {
            Severity::High
        },
        summary,
        evidence,
        fix.join("; "),
    )])
}

/// How to mend one looping root `forward .`: the line, and what to forward to instead
/// (the inventory's upstream_dns_servers that do not loop, else `/etc/resolv.conf`); the
/// inventory first where its upstream_dns_servers rendered the loop (Kubespray renders
/// them into both Corefiles again at its next run). A template among them is neither
/// offered as a server nor compared with the line: what Ansible renders is not known here.
fn loop_fix(ctx: &Ctx, l: &Loop) -> String {
    let servers = super::rules::upstream_dns_servers(ctx);
    let unrendered = super::rules::unrendered_upstream_dns_server(ctx);
    let loops_back = |s: &String| {
        crate::cluster::corefile::target_address(s).is_some_and(|ip| {
            ctx.cluster.contains(&ip)
                || l.looping.iter().any(|(t, _)| t == s)
                || crate::facts::resolv_conf::is_loopback(ip)
        })
    };
    let good: Vec<&str> = servers
        .iter()
        .filter(|s| !loops_back(s))
        .map(String::as_str)
        .collect();
    let (to, file) = if good.is_empty() {
        (
            "/etc/resolv.conf".to_owned(),
            ", the resolv.conf the kubelet hands each pod (DNS-CLUSTER-SELF-FORWARD says where that loops)",
        )
    } else {
        (good.join(" "), "")
    };
    let c = l.corefile;
    let mut fix = format!(
        "set line {} of {} to `forward . {to}`{file} (kubectl -n {} edit configmap {})",
        l.forward.line,
        loop_at(l),
        c.namespace(),
        c.configmap
    );
    let kubesprays = matches!(c.configmap.as_str(), "coredns" | "nodelocaldns")
        && c.namespace() == "kube-system"
        && c.helm_release.is_none()
        && c.owner.is_none();
    let bad: Vec<&str> = servers
        .iter()
        .filter(|s| loops_back(s))
        .map(String::as_str)
        .collect();
    if let Some(template) = unrendered.filter(|_| kubesprays) {
        // Kubespray forwards to what Ansible makes of it, and corefile-upstream does not
        // run (DNS-COREFILE-UPSTREAM-DRIFT is not known).
        fix.push_str(&format!(
            " (inventory upstream_dns_servers holds {}, a template dnsfix does not render: where Kubespray rendered this line from it, correct it there first, or Kubespray's next run renders the loop again)",
            crate::text::escape(&template)
        ));
    } else if kubesprays && !servers.is_empty() && l.forward.to == servers && !bad.is_empty() {
        fix = format!(
            "first remove {} from upstream_dns_servers in the inventory (Kubespray rendered the line from it and renders it again at its next run), then {fix}",
            bad.join(", ")
        );
    } else if kubesprays && !servers.is_empty() && bad.is_empty() {
        // corefile-upstream writes upstream_dns_servers there (DNS-COREFILE-UPSTREAM-DRIFT).
        fix.push_str(": dnsfix apply makes that edit (playbook corefile-upstream)");
    }
    if let Some(owner) = &c.owner {
        fix.push_str(&format!(
            " ({} writes that ConfigMap back: make the change there)",
            crate::text::escape(owner)
        ));
    }
    fix
}

/// A kubeadm node whose kubelet config file disagrees with kubeadm's `kubelet-config`
/// ConfigMap on a DNS setting the file decides: `kubeadm upgrade node` writes the
/// ConfigMap's value back into the file.
fn kubeadm_drift(ctx: &Ctx, config: &DnsConfig) -> RuleOutcome {
    if ctx.facts.flavour.kind != FlavourKind::Kubeadm {
        return RuleOutcome::NotApplicable("not a kubeadm node".into());
    }
    let Some(wanted) = &config.kubeadm_kubelet else {
        let versioned = config
            .kubeadm_version
            .as_deref()
            .and_then(crate::cluster::kubelet_configmap);
        return RuleOutcome::NotApplicable(match (&config.error, &config.kubelet_config_error) {
            (Some(e), _) | (None, Some(e)) => {
                format!("kubeadm's kubelet-config ConfigMap could not be read: {e}")
            }
            (None, None) => match versioned {
                Some(name) => format!("the cluster has neither kubelet-config nor {name}"),
                None => "the cluster has no kubelet-config ConfigMap".into(),
            },
        });
    };
    let differences = differences(ctx.facts, wanted);
    if differences.is_empty() {
        return RuleOutcome::Pass;
    }
    let mut evidence = Vec::new();
    let mut settings = Vec::new();
    for d in &differences {
        settings.push(d.key);
        evidence.push(format!("{} {}: {}", d.node_at, d.key, d.node));
        evidence.push(d.map_says.clone());
    }
    // Where the ConfigMap sets no resolvConf, kubeadm chooses per node: the ConfigMap is
    // no place for one node's file.
    let per_node = differences
        .iter()
        .any(|d| d.key == "resolvConf" && wanted.resolv_conf.is_none());
    let edit_map = format!(
        "make the ConfigMap say what the node should use (kubectl -n kube-system edit configmap {}), as kubeadm documents for reconfiguring kubelets; the node files then survive upgrades",
        wanted.configmap
    );
    let fix = if per_node {
        let others = differences.iter().any(|d| d.key != "resolvConf");
        format!(
            "kubeadm chooses resolvConf per node when `kubeadm upgrade node` writes the file (systemd-resolved's where it runs, else the kubelet's default). If kubeadm's choice is the right file, `kubeadm upgrade node phase kubelet-config` writes it now; if this node's is, keep it {}; set resolvConf in the ConfigMap only if every node should use the same file{}",
            keep_per_node(config.kubeadm_version.as_deref()),
            if others {
                format!(". For the other settings: {edit_map}")
            } else {
                String::new()
            }
        )
    } else {
        edit_map
    };
    RuleOutcome::Findings(vec![ctx.finding(
        KUBEADM_DRIFT,
        Severity::Warning,
        format!(
            "kubeadm's {} ConfigMap disagrees with this node's kubelet config on {}: the next `kubeadm upgrade node` writes kubeadm's value back",
            wanted.configmap,
            settings.join(", ")
        ),
        evidence,
        fix,
    )])
}

/// How to keep one node's resolvConf over `kubeadm upgrade node`, for the kubeadm of
/// `version` (the cluster's, kubeadm-config's `kubernetesVersion`; the upgrade runs one at
/// least as new): a kubeletconfiguration patch from 1.25 (kubernetes#110405; 1.24 ignores
/// that target), else the kubelet's --resolv-conf flag in KUBELET_EXTRA_ARGS, which beats
/// the file kubeadm writes.
fn keep_per_node(version: Option<&str>) -> &'static str {
    const PATCH: &str = "with a kubeletconfiguration patch that `kubeadm upgrade node --patches DIR` applies (kubeadm 1.25 and later; kubeadm's \"Customizing components with the kubeadm API\")";
    const FLAG: &str = "with --resolv-conf in KUBELET_EXTRA_ARGS (/etc/default/kubelet, /etc/sysconfig/kubelet on RPM systems), which beats the file kubeadm writes (kubeadm before 1.25 takes no kubeletconfiguration patch)";
    match version.and_then(crate::facts::kubelet::version_minor) {
        Some(m) if m < 25 => FLAG,
        _ => PATCH,
    }
}

/// What the reviewer of a plan must know when the plan changes a kubeadm node's kubelet
/// DNS settings (`facts` before, `predicted` after) so that they disagree with kubeadm's
/// `kubelet-config` ConfigMap: dnsfix does not edit that ConfigMap (it is every node's).
pub fn kubeadm_note(facts: &NodeFacts, predicted: &NodeFacts, cluster: &Cluster) -> Option<String> {
    if facts.flavour.kind != FlavourKind::Kubeadm {
        return None;
    }
    // The ConfigMap not read: a change to config.yaml may be one the next upgrade undoes,
    // and the reviewer is told to compare.
    let unread = || {
        changes_config_file(facts, predicted).then(|| {
            "This change is to the node's kubelet config file, which the next `kubeadm \
             upgrade node` writes anew from kubeadm's ConfigMap kube-system/kubelet-config \
             (kubelet-config-1.NN before 1.24); it was not read to compare: make the same \
             change there, or keep the node's own value in KUBELET_EXTRA_ARGS \
             (/etc/default/kubelet, /etc/sysconfig/kubelet), which the upgrade leaves alone"
                .to_owned()
        })
    };
    let Cluster::Read { config, .. } = cluster else {
        return unread();
    };
    let Some(wanted) = config.kubeadm_kubelet.as_ref() else {
        return if config.error.is_some() || config.kubelet_config_error.is_some() {
            unread()
        } else {
            None
        };
    };
    let after = differences(predicted, wanted);
    // Where the file sets a value may move with an unrelated edit: compare the values.
    let values = |d: &[Difference]| -> Vec<(&'static str, String, String)> {
        d.iter()
            .map(|d| (d.key, d.node.clone(), d.map.clone()))
            .collect()
    };
    if after.is_empty() || values(&after) == values(&differences(facts, wanted)) {
        return None;
    }
    let settings: Vec<String> = after
        .iter()
        .map(|d| match wanted.resolv_conf {
            None if d.key == "resolvConf" => format!(
                "{} {} here, {} from kubeadm, which the ConfigMap leaves to choose per node",
                d.key, d.node, d.map
            ),
            _ => format!("{} {} here, {} in the ConfigMap", d.key, d.node, d.map),
        })
        .collect();
    Some(format!(
        "After this change the node disagrees with kubeadm's {name} ConfigMap ({}): \
         the next `kubeadm upgrade node` writes kubeadm's values back \
         (DNS-KUBEADM-CONFIG-DRIFT). Make the same change there (kubectl -n kube-system edit \
         configmap {name}), or keep a file of this node's own {keep}; dnsfix edits \
         neither, since every node takes its kubelet settings from the ConfigMap.",
        settings.join("; "),
        name = wanted.configmap,
        keep = keep_per_node(config.kubeadm_version.as_deref()),
    ))
}

/// Whether `predicted` (the node with the plan's files in place) has another kubelet config
/// file than `facts`: the `--config` one, which `kubeadm upgrade node` rewrites.
fn changes_config_file(facts: &NodeFacts, predicted: &NodeFacts) -> bool {
    let Some(path) = facts.kubelet.config_path.as_deref() else {
        return false;
    };
    let content = |f: &NodeFacts| f.raw.get(path).map(|r| r.content.clone());
    content(facts) != content(predicted)
}

/// One DNS setting the node's kubelet config file decides and kubeadm would write
/// otherwise at the next `kubeadm upgrade node`.
#[derive(Debug)]
struct Difference {
    key: &'static str,
    /// The node's value, and where its file sets it.
    node: String,
    node_at: String,
    /// kubeadm's value, and the evidence that says where it comes from.
    map: String,
    map_says: String,
}

/// Where kubeadm writes resolvConf when its ConfigMap sets none: systemd-resolved's file
/// on a node where systemd-resolved runs, else nothing (the kubelet's default,
/// /etc/resolv.conf). kubeadm decides it per node when it writes
/// /var/lib/kubelet/config.yaml (`kubeadm join`, `kubeadm upgrade node`): kubernetes
/// cmd/kubeadm/app/componentconfigs `mutateResolverConfig` (kubelet_unix.go, since 1.30;
/// before that the same test in the kubelet component config's `Default`, which
/// `FetchInitConfigurationFromCluster` applies to the ConfigMap it reads). None while
/// systemctl did not say whether systemd-resolved runs.
fn kubeadm_resolv_conf(facts: &NodeFacts) -> Option<(&'static str, &'static str)> {
    match facts.services.systemd_resolved {
        UnitState::Active => Some((
            "/run/systemd/resolve/resolv.conf",
            "systemd-resolved runs here (systemctl is-active), so kubeadm writes its file",
        )),
        UnitState::Inactive | UnitState::Failed => Some((
            "/etc/resolv.conf",
            "systemd-resolved does not run here (systemctl is-active), so kubeadm writes none and the kubelet takes its default",
        )),
        _ => None,
    }
}

/// Each DNS setting the node's config file decides and kubeadm gives otherwise.
fn differences(facts: &NodeFacts, wanted: &KubeadmKubelet) -> Vec<Difference> {
    let mut out = Vec::new();
    // What `kubeadm upgrade node` rewrites: the kubelet's --config file (or, where that
    // sets nothing, the kubelet's default in its place); not a --config-dir drop-in, which
    // beats that file and which kubeadm leaves alone.
    let config_path = facts.kubelet.config_path.as_deref();
    let from_file = |s: &crate::facts::node_facts::Source| match s.kind.as_str() {
        "config" => s.path.is_none() || s.path.as_deref() == config_path,
        "default" => true,
        _ => false,
    };
    let at = |s: &crate::facts::node_facts::Source| match (&s.path, s.line) {
        (Some(p), Some(l)) => format!("{p}:{l}"),
        (Some(p), None) => p.clone(),
        _ => "kubelet's default".to_owned(),
    };
    let in_map = |key: &str, value: &str| {
        format!(
            "ConfigMap kube-system/{} (data.kubelet) {key}: {value}",
            wanted.configmap
        )
    };
    let mut push = |key,
                    node: &crate::facts::node_facts::Source,
                    value: String,
                    map: String,
                    map_says: String| {
        out.push(Difference {
            key,
            node_at: at(node),
            node: value,
            map,
            map_says,
        });
    };
    if let Observed::Known(e) = &facts.kubelet.resolv_conf
        && from_file(&e.source)
    {
        let map = match &wanted.resolv_conf {
            Some(map) => Some((map.clone(), in_map("resolvConf", map))),
            None => kubeadm_resolv_conf(facts).map(|(path, why)| {
                let says = format!(
                    "ConfigMap kube-system/{} (data.kubelet) sets no resolvConf, and {why}: {path}",
                    wanted.configmap
                );
                (path.to_owned(), says)
            }),
        };
        if let Some((map, says)) = map
            && map != e.value
        {
            push("resolvConf", &e.source, e.value.clone(), map, says);
        }
    }
    // A node with none is DNS-KUBELET-NO-CLUSTER-DNS's: there the ConfigMap is right.
    if let Observed::Known(e) = &facts.kubelet.cluster_dns
        && from_file(&e.source)
        && !e.value.is_empty()
        && e.value != wanted.cluster_dns
    {
        let map = format!("[{}]", wanted.cluster_dns.join(", "));
        let says = in_map("clusterDNS", &map);
        push(
            "clusterDNS",
            &e.source,
            format!("[{}]", e.value.join(", ")),
            map,
            says,
        );
    }
    if let Observed::Known(e) = &facts.kubelet.cluster_domain
        && from_file(&e.source)
        && !e.value.is_empty()
        && let Some(map) = &wanted.cluster_domain
        && *map != e.value
    {
        let says = in_map("clusterDomain", map);
        push(
            "clusterDomain",
            &e.source,
            e.value.clone(),
            map.clone(),
            says,
        );
    }
    out
}

/// Evidence from the Corefiles for the findings whose harm depends on where CoreDNS and
/// nodelocaldns forward: the `forward .` line of each root server block, as the cluster
/// has it (the rules alone can only read `upstream_dns_servers` from the inventory), or
/// why that is not known, CoreDNS's Corefile not found included ([`no_coredns_corefile`]).
pub fn corefile_evidence(config: &DnsConfig) -> Vec<String> {
    use crate::cluster::corefile::RootForward;
    let missing = no_coredns_corefile(config);
    let lines = config.corefiles.iter().filter_map(|c| {
        let (block, forward) = match c.root_forward() {
            RootForward::Forward(block, forward) => (block, forward),
            RootForward::Unknown(why) => {
                return Some(format!(
                    "ConfigMap {}/{} ({}): where it forwards is not known: {why}",
                    c.namespace(),
                    c.configmap,
                    c.key
                ));
            }
            RootForward::NoForward(_) | RootForward::NoRoot => return None,
        };
        Some(format!(
            "ConfigMap {}/{} ({}:{}{}, {}): forward {} {}{}",
            c.namespace(),
            c.configmap,
            c.key,
            forward.line,
            forward
                .file
                .as_ref()
                .map(|f| format!(", imported from {}", crate::text::escape(f)))
                .unwrap_or_default(),
            block.zones.join(" "),
            forward.from,
            forward.to.join(" "),
            if forward.to_resolv_conf() && block.loop_plugin {
                " (the pod's resolv.conf; loop plugin on)"
            } else if forward.to_resolv_conf() {
                " (the pod's resolv.conf)"
            } else {
                ""
            }
        ))
    });
    missing.into_iter().chain(lines).collect()
}

/// Why CoreDNS's Corefile is not among those read, where it is not: the ConfigMaps were
/// not read, or none that the CoreDNS pods mount (nor `coredns`, nor RKE2's) holds one
/// (CoreDNS in another namespace or under another label, a chart's ConfigMap gone), or,
/// where no pod was listed, RKE2's asked for by name could not be read.
/// Where CoreDNS forwards is then not known, and the evidence says so rather than nothing.
fn no_coredns_corefile(config: &DnsConfig) -> Option<String> {
    let unknown = "where CoreDNS forwards is not known";
    if let Some(e) = &config.error {
        return Some(format!(
            "kube-system's ConfigMaps could not be read ({e}): {unknown}"
        ));
    }
    if let (Some(why), None) = (&config.coredns_unread, &config.coredns_mounts_error) {
        return Some(format!(
            "CoreDNS's Corefile was not read ({why}): {unknown}"
        ));
    }
    if config.coredns_unread.is_none() && config.corefiles.iter().any(|c| c.is_corednss()) {
        return None;
    }
    let mounts = config.coredns_mounts.join(", ");
    Some(match &config.coredns_mounts_error {
        // No pod led to it: RKE2's ConfigMap was asked for by name, and refused.
        Some(e) if mounts.is_empty() => format!(
            "no CoreDNS Corefile in kube-system: no ConfigMap coredns, no CoreDNS pod there (k8s-app kube-dns or coredns) that mounts one, and RKE2's {} could not be read ({e}): {unknown}",
            crate::cluster::RKE2_COREDNS
        ),
        Some(e) => format!(
            "CoreDNS's pods mount ConfigMap {mounts}, not all of which could be read ({e}): {unknown}"
        ),
        None if mounts.is_empty() => format!(
            "no CoreDNS Corefile in kube-system: no ConfigMap coredns, and no CoreDNS pod there (k8s-app kube-dns or coredns) that mounts one (with none listed, nor RKE2's {}, asked for by name): {unknown}",
            crate::cluster::RKE2_COREDNS
        ),
        None => format!(
            "no CoreDNS Corefile in kube-system: its pods mount ConfigMap {mounts}, and none there has a Corefile key: {unknown}"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{DnsPod, KubeadmKubelet};

    /// Facts from a rules fixture's tree (tests/fixtures/rules, each README names its
    /// source).
    fn fixture(case: &str) -> NodeFacts {
        NodeFacts::from_raw("node1", &crate::testing::rules_fixture(case))
    }

    fn read(pods: Vec<DnsPod>, config: DnsConfig) -> Cluster {
        Cluster::Read {
            via: "cp1".to_owned(),
            pods,
            config: Box::new(config),
            kubelets: Default::default(),
        }
    }

    /// [`read`] of a cluster whose nodes (`kubectl get nodes`) are node1 and node2.
    fn read_nodes(pods: Vec<DnsPod>) -> Cluster {
        let mut cluster = read(pods, DnsConfig::default());
        if let Cluster::Read { kubelets, .. } = &mut cluster {
            for node in ["node1", "node2"] {
                kubelets.insert(node.to_owned(), "v1.32.5".to_owned());
            }
        }
        cluster
    }

    /// Kubespray's secondary nodelocaldns on node1, running and not ready: its probes ask
    /// the primary's health port, down.
    fn running_secondary() -> DnsPod {
        let mut second = cache(
            "nodelocaldns-second-7tq8d",
            "nodelocaldns-secondary",
            "node1",
            true,
        );
        second.ready = false;
        second
    }

    /// The node's DNS-NODELOCAL-DOWN finding, which must be critical.
    fn critical_down<'a>(rules: &'a [(&'static str, RuleOutcome)]) -> &'a crate::diagnose::Finding {
        let f = &findings(outcome(rules, NODELOCAL_DOWN))[0];
        assert_eq!(f.severity, Severity::Critical, "{f:?}");
        f
    }

    fn looping(node: &str) -> DnsPod {
        DnsPod {
            name: "coredns-5d78c9869d-x7k2p".to_owned(),
            app: "coredns".to_owned(),
            node: node.to_owned(),
            phase: "Running".to_owned(),
            ready: false,
            restarts: 12,
            waiting: Some("CrashLoopBackOff".to_owned()),
            running: false,
            terminating: false,
            loop_detected: Some(
                "[FATAL] plugin/loop: Loop (127.0.0.1:38718 -> :53) detected for zone \".\""
                    .to_owned(),
            ),
            logs_read: true,
            logs_unread: None,
            container: None,
            namespace: None,
            selector: None,
            readiness: None,
        }
    }

    fn outcome<'a>(rules: &'a [(&'static str, RuleOutcome)], id: &str) -> &'a RuleOutcome {
        &rules.iter().find(|(i, _)| *i == id).expect("rule ran").1
    }

    fn findings(outcome: &RuleOutcome) -> &[crate::diagnose::Finding] {
        match outcome {
            RuleOutcome::Findings(f) => f,
            other => panic!("no findings: {other:?}"),
        }
    }

    /// The lab's coredns and nodelocaldns Corefiles (Kubespray's templates rendered with
    /// upstream_dns_servers unset: both forward `.` to /etc/resolv.conf).
    fn kubespray_corefiles() -> DnsConfig {
        crate::cluster::parse_configmaps(include_bytes!("../../tests/lab/standins/configmaps.json"))
            .expect("configmaps")
    }

    fn control_plane(vars: serde_json::Value) -> crate::inventory::Host {
        let mut host = crate::inventory::Host::new("cp1");
        host.groups = vec!["all".into(), "kube_control_plane".into()];
        for (k, v) in vars.as_object().expect("vars") {
            host.vars.insert(k.clone(), v.clone());
        }
        host
    }

    /// With upstream_dns_servers set, a Corefile forwarding elsewhere is a warning on the
    /// control-plane hosts, naming each ConfigMap and line; not judged on workers, nor
    /// where Kubespray renders no Corefile (dns_mode and deploy_coredns for CoreDNS's,
    /// enable_nodelocaldns for nodelocaldns's); clean once the Corefiles forward there.
    #[test]
    fn corefiles_forwarding_elsewhere_than_upstream_dns_servers_drift() {
        let facts = fixture("DNS-KUBELET-LOOPBACK/kubespray-3979-ubuntu1804-stub");
        let cluster = read(Vec::new(), kubespray_corefiles());
        let servers = serde_json::json!({ "upstream_dns_servers": ["192.0.2.53"] });
        let rules = rules(&control_plane(servers.clone()), &facts, &cluster);
        let f = &findings(outcome(&rules, COREFILE_UPSTREAM))[0];
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.playbook, Some("corefile-upstream"));
        assert_eq!(
            f.evidence,
            [
                "kube-system/configmap/coredns Corefile line 13: forward . /etc/resolv.conf (kubectl on cp1)",
                "kube-system/configmap/nodelocaldns Corefile line 44: forward . /etc/resolv.conf (kubectl on cp1)",
                "inventory upstream_dns_servers: 192.0.2.53 (Kubespray renders `forward . 192.0.2.53` there)",
            ]
        );

        let mut worker = control_plane(servers.clone());
        worker.groups = vec!["all".into(), "kube_node".into()];
        let not = |host: &crate::inventory::Host| {
            matches!(
                outcome(&rules_of(host, &facts, &cluster), COREFILE_UPSTREAM),
                RuleOutcome::NotApplicable(_)
            )
        };
        assert!(not(&worker));
        assert!(not(&control_plane(serde_json::json!({}))));
        assert!(not(&control_plane(serde_json::json!({
            "upstream_dns_servers": ["192.0.2.53"], "dns_mode": "manual", "enable_nodelocaldns": false
        }))));
        assert!(not(&control_plane(serde_json::json!({
            "upstream_dns_servers": ["192.0.2.53"], "deploy_coredns": false, "enable_nodelocaldns": false
        }))));
        // Kubespray tests deploy_coredns bare (`when: deploy_coredns`, ansible-core 2.18):
        // the string "false", as an INI inventory gives it, is true there.
        assert!(!not(&control_plane(serde_json::json!({
            "upstream_dns_servers": ["192.0.2.53"], "deploy_coredns": "false", "enable_nodelocaldns": "false"
        }))));
        // nodelocaldns is rendered whatever dns_mode (roles/kubernetes-apps/ansible/tasks/
        // main.yml): with dns_mode manual, or deploy_coredns false, only it counts.
        for vars in [
            serde_json::json!({ "upstream_dns_servers": ["192.0.2.53"], "dns_mode": "manual" }),
            serde_json::json!({ "upstream_dns_servers": ["192.0.2.53"], "deploy_coredns": false }),
        ] {
            let rules = rules_of(&control_plane(vars), &facts, &cluster);
            let evidence = &findings(outcome(&rules, COREFILE_UPSTREAM))[0].evidence;
            assert_eq!(evidence.len(), 2, "{evidence:?}");
            assert!(
                evidence[0].starts_with("kube-system/configmap/nodelocaldns"),
                "{evidence:?}"
            );
        }
        // upstream_dns_servers naming the cluster's own DNS (nodelocaldns's default
        // 169.254.25.10, the fixture's clusterDNS 10.233.0.3): Kubespray's line would loop,
        // so the fix is the inventory's. Before, the remediation offered corefile-upstream,
        // which wrote the loop into both ConfigMaps.
        let looping =
            serde_json::json!({ "upstream_dns_servers": ["192.0.2.53", "169.254.25.10"] });
        let rules = rules_of(&control_plane(looping), &facts, &cluster);
        let f = &findings(outcome(&rules, COREFILE_UPSTREAM))[0];
        assert_eq!(
            f.evidence.last().map(String::as_str),
            Some(
                "upstream_dns_servers lists the cluster's own DNS (169.254.25.10): forwarding there loops"
            )
        );
        assert!(
            f.remediation.starts_with(
                "list real upstream servers in upstream_dns_servers, without 169.254.25.10"
            ),
            "{}",
            f.remediation
        );
        // Without nodelocaldns only coredns counts.
        let rules = rules_of(
            &control_plane(serde_json::json!({
                "upstream_dns_servers": ["192.0.2.53"], "enable_nodelocaldns": false
            })),
            &facts,
            &cluster,
        );
        assert_eq!(
            findings(outcome(&rules, COREFILE_UPSTREAM))[0]
                .evidence
                .len(),
            2
        );

        // Forwarding there already: clean.
        let mut config = kubespray_corefiles();
        for c in &mut config.corefiles {
            let edit = crate::cluster::corefile::set_root_forward(&c.text, &["192.0.2.53".into()])
                .expect("edit")
                .expect("a change");
            *c = crate::cluster::Corefile::new(&c.configmap, &c.key, &edit.text);
        }
        let rules = rules_of(
            &control_plane(servers.clone()),
            &facts,
            &read(Vec::new(), config.clone()),
        );
        assert!(matches!(
            outcome(&rules, COREFILE_UPSTREAM),
            RuleOutcome::Pass
        ));
        // A CoreDNS of a Helm release beside them (its ConfigMap found through its pods'
        // volumes) is not Kubespray's to render: still clean, where judging it gave a drift
        // the playbook, which edits `coredns` only, could not mend.
        let mounted = crate::cluster::mounted_corefiles(
            include_bytes!("../../tests/fixtures/kubectl/helm-coredns-configmaps.json"),
            &["dns-coredns".to_owned()],
        )
        .expect("configmaps");
        config.corefiles.extend(mounted);
        let rules = rules_of(&control_plane(servers), &facts, &read(Vec::new(), config));
        assert!(matches!(
            outcome(&rules, COREFILE_UPSTREAM),
            RuleOutcome::Pass
        ));
    }

    /// The lab's Corefiles (kubespray@46dbdd39 roles/kubernetes-apps/ansible/templates/
    /// coredns-config.yml.j2 and nodelocaldns-config.yml.j2 rendered with
    /// upstream_dns_servers unset), the root `forward .` of `coredns` and `nodelocaldns` set
    /// to `coredns` and `nodelocal` as Kubespray renders upstream_dns_servers there
    /// (`upstreamForwardTarget`); `None` keeps `/etc/resolv.conf`.
    fn looping_corefiles(coredns: Option<&[&str]>, nodelocal: Option<&[&str]>) -> DnsConfig {
        let mut config = kubespray_corefiles();
        for c in &mut config.corefiles {
            let to = if c.configmap == "coredns" {
                coredns
            } else {
                nodelocal
            };
            let Some(to) = to else { continue };
            let to: Vec<String> = to.iter().map(|s| (*s).to_owned()).collect();
            let text = crate::cluster::corefile::set_root_forward(&c.text, &to)
                .expect("edit")
                .expect("a change")
                .text;
            *c = crate::cluster::Corefile::new(&c.configmap, &c.key, &text);
        }
        config
    }

    /// A root `forward .` back to the cluster's own DNS: CoreDNS's to its kube-dns ClusterIP
    /// (the fixture's clusterDNS, Kubespray's skydns_server 10.233.0.3), or Kubespray having
    /// rendered upstream_dns_servers [169.254.25.10] (nodelocaldns_ip) into both Corefiles.
    /// Before, no rule said so: the pods crash-looped on plugin/loop and DNS-POD-LOOP sent
    /// the user to the kubelet's resolv.conf and recreated the pods, which cannot help.
    #[test]
    fn a_corefile_forwarding_its_root_back_to_the_clusters_dns_loops() {
        let facts = fixture("DNS-KUBELET-LOOPBACK/kubespray-3979-ubuntu1804-stub");
        let judge = |vars: serde_json::Value, config: DnsConfig| {
            let rules = rules_of(&control_plane(vars), &facts, &read(Vec::new(), config));
            outcome(&rules, COREFILE_LOOP).clone()
        };
        let none = serde_json::json!({});

        // CoreDNS to its own Service: every target loops.
        let own = judge(none.clone(), looping_corefiles(Some(&["10.233.0.3"]), None));
        let f = &findings(&own)[0];
        assert_eq!(f.severity, Severity::Critical, "{f:?}");
        assert_eq!(f.playbook, None);
        assert_eq!(
            f.evidence,
            [
                "kube-system/configmap/coredns Corefile line 13: forward . 10.233.0.3 (kubectl on cp1)",
                "10.233.0.3 is CoreDNS's own address",
            ]
        );
        assert_eq!(
            f.remediation,
            "set line 13 of kube-system/configmap/coredns Corefile to `forward . /etc/resolv.conf`, the resolv.conf the kubelet hands each pod (DNS-CLUSTER-SELF-FORWARD says where that loops) (kubectl -n kube-system edit configmap coredns)"
        );

        // Real upstream_dns_servers: forward there, the line corefile-upstream writes.
        let real = judge(
            serde_json::json!({ "upstream_dns_servers": ["192.0.2.53"] }),
            looping_corefiles(Some(&["10.233.0.3"]), None),
        );
        assert!(
            findings(&real)[0].remediation.starts_with(
                "set line 13 of kube-system/configmap/coredns Corefile to `forward . 192.0.2.53` (kubectl -n kube-system edit configmap coredns): dnsfix apply makes that edit (playbook corefile-upstream)"
            ),
            "{real:?}"
        );

        // Kubespray's render of upstream_dns_servers [169.254.25.10]: nodelocaldns to
        // itself, CoreDNS to nodelocaldns, which comes back. The inventory goes first.
        let listed = serde_json::json!({ "upstream_dns_servers": ["169.254.25.10"] });
        let both = judge(
            listed,
            looping_corefiles(Some(&["169.254.25.10"]), Some(&["169.254.25.10"])),
        );
        let f = &findings(&both)[0];
        assert_eq!(f.severity, Severity::Critical, "{f:?}");
        assert!(
            f.summary
                .starts_with("the coredns and nodelocaldns Corefile"),
            "{f:?}"
        );
        assert!(
            f.evidence.contains(
                &"169.254.25.10 is NodeLocal DNSCache, which forwards names outside the cluster back (its root `forward .`)".to_owned()
            ) && f
                .evidence
                .contains(&"169.254.25.10 is NodeLocal DNSCache's own address".to_owned()),
            "{f:?}"
        );
        assert!(
            f.remediation.starts_with(
                "first remove 169.254.25.10 from upstream_dns_servers in the inventory (Kubespray rendered the line from it"
            ),
            "{f:?}"
        );

        // A mixed line under forward's random policy: part of the names loop (high), and
        // the fix keeps the real server.
        let mixed = serde_json::json!({ "upstream_dns_servers": ["192.0.2.53", "169.254.25.10"] });
        let part = judge(
            mixed,
            looping_corefiles(
                Some(&["192.0.2.53", "169.254.25.10"]),
                Some(&["192.0.2.53", "169.254.25.10"]),
            ),
        );
        let f = &findings(&part)[0];
        assert_eq!(f.severity, Severity::High, "{f:?}");
        assert!(f.remediation.contains("`forward . 192.0.2.53`"), "{f:?}");

        // CoreDNS to nodelocaldns, whose root forwards to the host's resolv.conf or a real
        // server: no loop. The stock render (both to /etc/resolv.conf): none either; nor
        // nodelocaldns's cluster.local block to CoreDNS.
        for nodelocal in [None, Some(&["192.0.2.53"][..])] {
            let config = looping_corefiles(Some(&["169.254.25.10"]), nodelocal);
            assert_eq!(judge(none.clone(), config), RuleOutcome::Pass);
        }
        assert_eq!(
            judge(none.clone(), kubespray_corefiles()),
            RuleOutcome::Pass
        );

        // Judged on the control-plane hosts only.
        let mut worker = control_plane(none);
        worker.groups = vec!["all".into(), "kube_node".into()];
        let cluster = read(Vec::new(), looping_corefiles(Some(&["10.233.0.3"]), None));
        assert!(matches!(
            outcome(&rules_of(&worker, &facts, &cluster), COREFILE_LOOP),
            RuleOutcome::NotApplicable(_)
        ));
    }

    /// A kubelet clusterDNS that is not CoreDNS (here 192.0.2.53, a resolver on the node
    /// network) is no address of CoreDNS's where its Services were listed: CoreDNS
    /// forwarding there leaves the cluster. Before, clusterDNS always counted as CoreDNS's
    /// and this was a critical loop. With no DNS Service listed it is still the best
    /// guess of CoreDNS's address.
    #[test]
    fn a_cluster_dns_that_is_not_coredns_is_no_loop_where_its_services_are_known() {
        let mut facts = fixture("DNS-KUBELET-LOOPBACK/kubespray-3979-ubuntu1804-stub");
        let Observed::Known(e) = &mut facts.kubelet.cluster_dns else {
            panic!("the fixture's clusterDNS")
        };
        e.value = vec!["192.0.2.53".to_owned()];
        let judge = |config: DnsConfig| {
            let rules = rules_of(
                &control_plane(serde_json::json!({})),
                &facts,
                &read(Vec::new(), config),
            );
            outcome(&rules, COREFILE_LOOP).clone()
        };
        let mut listed = looping_corefiles(Some(&["192.0.2.53"]), None);
        listed.services = Some(vec![crate::cluster::DnsService {
            name: "coredns".into(),
            cluster_ips: vec!["10.233.0.3".into()],
            namespace: None,
            selector: None,
        }]);
        assert_eq!(judge(listed.clone()), RuleOutcome::Pass);

        // Its own Service is still a loop.
        let mut own = looping_corefiles(Some(&["10.233.0.3"]), None);
        own.services = listed.services.clone();
        assert_eq!(findings(&judge(own))[0].severity, Severity::Critical);

        // No Service listed: clusterDNS counts.
        listed.services = None;
        let unlisted = judge(listed);
        let f = &findings(&unlisted)[0];
        assert_eq!(f.severity, Severity::Critical, "{f:?}");
        assert!(
            f.evidence
                .contains(&"192.0.2.53 is CoreDNS's own address".to_owned()),
            "{f:?}"
        );
    }

    /// upstream_dns_servers written as a template Kubespray renders: the loop's fix does not
    /// offer the template as the line to write, nor claim that dnsfix apply makes the edit
    /// (corefile-upstream does not run on a template), and says why. Before, it offered
    /// `forward . {{ corp_dns }}` and claimed the edit.
    #[test]
    fn a_corefile_loops_fix_offers_no_unrendered_upstream_dns_server() {
        let facts = fixture("DNS-KUBELET-LOOPBACK/kubespray-3979-ubuntu1804-stub");
        let vars = serde_json::json!({ "upstream_dns_servers": ["{{ corp_dns }}"] });
        let config = looping_corefiles(Some(&["10.233.0.3"]), None);
        let rules = rules_of(&control_plane(vars), &facts, &read(Vec::new(), config));
        let f = &findings(outcome(&rules, COREFILE_LOOP))[0];
        assert_eq!(
            f.remediation,
            "set line 13 of kube-system/configmap/coredns Corefile to `forward . /etc/resolv.conf`, the resolv.conf the kubelet hands each pod (DNS-CLUSTER-SELF-FORWARD says where that loops) (kubectl -n kube-system edit configmap coredns) (inventory upstream_dns_servers holds {{ corp_dns }}, a template dnsfix does not render: where Kubespray rendered this line from it, correct it there first, or Kubespray's next run renders the loop again)"
        );

        // With a real server beside it, that server is offered, and no edit claimed.
        let vars = serde_json::json!({ "upstream_dns_servers": ["192.0.2.53", "{{ corp_dns }}"] });
        let config = looping_corefiles(Some(&["10.233.0.3"]), None);
        let rules = rules_of(&control_plane(vars), &facts, &read(Vec::new(), config));
        let f = &findings(outcome(&rules, COREFILE_LOOP))[0];
        assert!(f.remediation.contains("`forward . 192.0.2.53`"), "{f:?}");
        assert!(
            !f.remediation.contains("dnsfix apply makes that edit"),
            "{f:?}"
        );
    }

    /// A CoreDNS pod crash-looping where its Corefile's root forwards back to the cluster's
    /// DNS: DNS-POD-LOOP names the Corefile and neither blames the kubelet's resolv.conf nor
    /// offers kubelet-resolvconf (whose pod recreation loads the same Corefile). Before, it
    /// did both.
    #[test]
    fn a_pod_looping_on_its_corefile_is_not_sent_to_the_kubelet() {
        let facts = fixture("DNS-KUBELET-LOOPBACK/kubespray-3979-ubuntu1804-stub");
        let host = crate::inventory::Host::new("node1");
        let config = looping_corefiles(Some(&["10.233.0.3"]), None);
        let rules = rules_of(&host, &facts, &read(vec![looping("node1")], config));
        let f = &findings(outcome(&rules, POD_LOOP))[0];
        assert_eq!(f.playbook, None, "{f:?}");
        assert_eq!(
            f.evidence[2],
            "kube-system/configmap/coredns Corefile line 13: forward . 10.233.0.3, which loops (DNS-COREFILE-LOOP)"
        );
        assert!(
            !f.evidence.iter().any(|e| e.starts_with("kubelet hands it")),
            "{f:?}"
        );
        assert!(
            f.remediation
                .starts_with("fix the Corefile's root `forward .` first"),
            "{f:?}"
        );
        // A nodelocaldns loop does not explain a CoreDNS pod's crash.
        let config = looping_corefiles(None, Some(&["169.254.25.10"]));
        let rules = rules_of(&host, &facts, &read(vec![looping("node1")], config));
        let f = &findings(outcome(&rules, POD_LOOP))[0];
        assert_eq!(f.playbook, Some("kubelet-resolvconf"));
    }

    /// A `coredns` ConfigMap another owner writes back is no drift to mend: k3s's packaged
    /// one (its deploy controller's `objectset.rio.cattle.io` annotations,
    /// tests/fixtures/kubectl/k3s-coredns-configmaps.json), or one the addon manager
    /// reconciles. Before, only a Helm release's was left alone, and corefile-upstream
    /// edited the ConfigMap k3s applies again at its next start.
    #[test]
    fn a_coredns_configmap_another_owner_writes_is_no_drift() {
        let facts = fixture("DNS-KUBELET-LOOPBACK/kubespray-3979-ubuntu1804-stub");
        let servers = serde_json::json!({
            "upstream_dns_servers": ["192.0.2.53"], "enable_nodelocaldns": false
        });
        let k3s = crate::cluster::parse_configmaps(include_bytes!(
            "../../tests/fixtures/kubectl/k3s-coredns-configmaps.json"
        ))
        .expect("configmaps");
        assert!(
            k3s.corefiles[0]
                .owner
                .as_deref()
                .is_some_and(|o| o.contains("k3s"))
        );
        let reconciled = serde_json::json!({"kind": "List", "items": [{"kind": "ConfigMap",
            "metadata": {"name": "coredns",
                "labels": {"addonmanager.kubernetes.io/mode": "Reconcile"}},
            "data": {"Corefile": crate::testing::KUBEADM_COREFILE}}]});
        let reconciled =
            crate::cluster::parse_configmaps(&serde_json::to_vec(&reconciled).expect("json"))
                .expect("configmaps");
        for config in [k3s, reconciled] {
            let rules = rules_of(
                &control_plane(servers.clone()),
                &facts,
                &read(Vec::new(), config),
            );
            let got = outcome(&rules, COREFILE_UPSTREAM);
            assert!(matches!(got, RuleOutcome::Pass), "{got:?}");
        }
    }

    /// The drift rule reads the Corefiles as CoreDNS does (coredns/caddy's parser): the
    /// coredns Corefile Kubespray renders (the lab's, 46dbdd39), hand-edited so its `.:53`
    /// block's `{` is on the next line, is judged rather than skipped as if it had no root
    /// block; forwarding to upstream_dns_servers with its options on one line is clean, not
    /// a drift to `192.0.2.53 { max_concurrent 1000 }`; a root block without `forward .`
    /// forwards nowhere, which is not what Kubespray renders; one CoreDNS would not load is
    /// unknown, never clean.
    #[test]
    fn the_drift_rule_reads_the_corefiles_as_coredns_does() {
        let facts = fixture("DNS-KUBELET-LOOPBACK/kubespray-3979-ubuntu1804-stub");
        let host = control_plane(serde_json::json!({
            "upstream_dns_servers": ["192.0.2.53"], "enable_nodelocaldns": false
        }));
        let base = kubespray_corefiles()
            .corefiles
            .into_iter()
            .find(|c| c.configmap == "coredns")
            .expect("coredns")
            .text;
        let judge = |text: String| {
            assert_ne!(text, base, "the test changes the Corefile");
            let config = DnsConfig {
                corefiles: vec![crate::cluster::Corefile::new("coredns", "Corefile", &text)],
                ..DnsConfig::default()
            };
            let rules = rules_of(&host, &facts, &read(Vec::new(), config));
            outcome(&rules, COREFILE_UPSTREAM).clone()
        };
        let next_line = judge(base.replace(".:53 {\n", ".:53\n{\n"));
        let f = &findings(&next_line)[0];
        assert_eq!(f.status, crate::diagnose::FindingStatus::Failed, "{f:?}");
        assert!(
            f.evidence[0].contains("line 14: forward . /etc/resolv.conf"),
            "{f:?}"
        );
        let forward =
            "forward . /etc/resolv.conf {\n      prefer_udp\n      max_concurrent 1000\n    }";
        let one_line = judge(base.replace(forward, "forward . 192.0.2.53 { max_concurrent 1000 }"));
        assert_eq!(one_line, RuleOutcome::Pass);
        let nowhere = judge(base.replace(forward, "whoami"));
        let f = &findings(&nowhere)[0];
        assert!(
            f.summary
                .contains("does not forward names outside the cluster")
                && f.evidence[0].contains("has no `forward .`")
                && f.remediation.contains("by hand"),
            "{f:?}"
        );
        let refused = judge(base.replace("    loop\n", "    loop }\n"));
        let f = &findings(&refused)[0];
        assert_eq!(f.status, crate::diagnose::FindingStatus::Unknown, "{f:?}");
        assert!(f.evidence[0].contains("closes nothing"), "{f:?}");
    }

    /// upstream_dns_servers written as a template dnsfix does not render (README's
    /// `["{{ corp_dns }}"]`): Kubespray forwards to what Ansible makes of it, so whether the
    /// Corefiles drift is unknown, never a comparison with the template's text.
    #[test]
    fn templated_upstream_dns_servers_leave_the_corefile_drift_unknown() {
        let facts = fixture("DNS-KUBELET-LOOPBACK/kubespray-3979-ubuntu1804-stub");
        let cluster = read(Vec::new(), kubespray_corefiles());
        for servers in [
            serde_json::json!(["{{ corp_dns }}"]),
            serde_json::json!(["192.0.2.53", "{{ corp_dns | first }}"]),
            serde_json::json!("{{ corp_dns_list }}"),
        ] {
            let host = control_plane(serde_json::json!({ "upstream_dns_servers": servers }));
            let rules = rules(&host, &facts, &cluster);
            let f = &findings(outcome(&rules, COREFILE_UPSTREAM))[0];
            assert_eq!(
                (f.status, f.severity, f.playbook),
                (
                    crate::diagnose::FindingStatus::Unknown,
                    Severity::Warning,
                    None
                ),
                "{f:?}"
            );
            assert!(
                f.evidence[0].starts_with("inventory upstream_dns_servers holds {{ corp_dns")
                    && f.evidence[0].contains("a template dnsfix does not render"),
                "{f:?}"
            );
        }
    }

    /// Kubespray #3979's node (stub resolv.conf) with its CoreDNS pod crash-looping on the
    /// loop: the finding names the pod, its last line and the file behind it. A pod on
    /// another node, or one restarting for another reason, is not this node's finding.
    #[test]
    fn a_pod_looping_on_this_node_is_a_critical_finding_with_the_file_behind_it() {
        let facts = fixture("DNS-KUBELET-LOOPBACK/kubespray-3979-ubuntu1804-stub");
        let host = crate::inventory::Host::new("node1");
        let cluster = read(vec![looping("node1")], DnsConfig::default());
        let rules = rules(&host, &facts, &cluster);
        let f = &findings(outcome(&rules, POD_LOOP))[0];
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.playbook, Some("kubelet-resolvconf"));
        assert_eq!(
            f.evidence[0],
            "pod kube-system/coredns-5d78c9869d-x7k2p (coredns) on node node1: CrashLoopBackOff, 12 restarts, loop detected (kubectl on cp1)"
        );
        assert!(f.evidence[1].contains("plugin/loop: Loop"), "{f:?}");
        assert!(
            f.evidence[2].starts_with("kubelet hands it ")
                && f.evidence[2].ends_with("nameserver 127.0.0.53"),
            "{f:?}"
        );

        assert!(
            f.remediation
                .ends_with("(dnsfix apply does both: playbook kubelet-resolvconf)"),
            "{f:?}"
        );
        // CoreDNS found through a cluster DNS Service outside kube-system: apply recreates
        // it in its namespace too, which the evidence names (before, the remediation named
        // a `kubectl -n coredns delete pod` to run by hand).
        let mut outside = looping("node1");
        outside.namespace = Some("coredns".to_owned());
        let outside = read(vec![outside], DnsConfig::default());
        let rules_outside = rules_of(&host, &facts, &outside);
        let f = &findings(outcome(&rules_outside, POD_LOOP))[0];
        assert!(
            f.remediation
                .ends_with("(dnsfix apply does both: playbook kubelet-resolvconf)"),
            "{f:?}"
        );
        assert!(
            f.evidence[0].starts_with("pod coredns/coredns-5d78c9869d-x7k2p (coredns)"),
            "{f:?}"
        );

        let elsewhere = read(vec![looping("node2")], DnsConfig::default());
        assert_eq!(
            *outcome(&rules_of(&host, &facts, &elsewhere), POD_LOOP),
            RuleOutcome::Pass
        );
        let mut other = looping("node1");
        other.loop_detected = None;
        let other = read(vec![other], DnsConfig::default());
        assert_eq!(
            *outcome(&rules_of(&host, &facts, &other), POD_LOOP),
            RuleOutcome::Pass
        );
        let none = Cluster::Unavailable {
            reason: "cp1: connection refused".to_owned(),
        };
        assert_eq!(
            *outcome(&rules_of(&host, &facts, &none), POD_LOOP),
            RuleOutcome::NotApplicable(
                "the cluster was not read: cp1: connection refused".to_owned()
            )
        );
    }

    /// A pod that recovered (Ready now) is not looping, whatever its last crash said; a pod
    /// down whose log was not read cannot be called clean.
    #[test]
    fn a_recovered_pod_passes_and_an_unread_one_is_unknown() {
        let facts = fixture("DNS-KUBELET-LOOPBACK/kubespray-3979-ubuntu1804-stub");
        let host = crate::inventory::Host::new("node1");
        let mut recovered = looping("node1");
        recovered.ready = true;
        recovered.waiting = None;
        let cluster = read(vec![recovered], DnsConfig::default());
        assert_eq!(
            *outcome(&rules_of(&host, &facts, &cluster), POD_LOOP),
            RuleOutcome::Pass
        );
        let mut unread = looping("node1");
        unread.loop_detected = None;
        unread.logs_read = false;
        let cluster = read(vec![unread.clone()], DnsConfig::default());
        let rules = rules_of(&host, &facts, &cluster);
        let f = &findings(outcome(&rules, POD_LOOP))[0];
        assert_eq!(f.status, crate::diagnose::FindingStatus::Unknown, "{f:?}");
        assert!(f.summary.contains("coredns-5d78c9869d-x7k2p"), "{f:?}");
        assert!(f.summary.contains("more restarting DNS pods"), "{f:?}");
        // Asked for and not read: why, pod by pod, those with one reason together.
        let mut timed_out = unread.clone();
        timed_out.logs_unread = Some("kubectl logs did not answer in time".into());
        let mut second = timed_out.clone();
        second.name = "coredns-5d78c9869d-q2w3e".into();
        let mut refused = timed_out.clone();
        refused.name = "coredns-5d78c9869d-r4t5y".into();
        refused.logs_unread = Some("kubectl logs exited 1: Error from server".into());
        let cluster = read(vec![timed_out, second, refused], DnsConfig::default());
        let rules = rules_of(&host, &facts, &cluster);
        let f = &findings(outcome(&rules, POD_LOOP))[0];
        assert_eq!(f.status, crate::diagnose::FindingStatus::Unknown, "{f:?}");
        assert_eq!(
            f.evidence,
            [
                "the previous logs of coredns-5d78c9869d-x7k2p, coredns-5d78c9869d-q2w3e were \
                 not read (kubectl logs did not answer in time)",
                "the previous log of coredns-5d78c9869d-r4t5y was not read (kubectl logs \
                 exited 1: Error from server)"
            ],
            "{f:?}"
        );
    }

    fn cache(name: &str, app: &str, node: &str, ready: bool) -> DnsPod {
        DnsPod {
            name: name.to_owned(),
            app: app.to_owned(),
            node: node.to_owned(),
            phase: "Running".to_owned(),
            ready,
            restarts: if ready { 0 } else { 9 },
            waiting: (!ready).then(|| "CrashLoopBackOff".to_owned()),
            running: ready,
            terminating: false,
            loop_detected: None,
            logs_read: true,
            logs_unread: None,
            container: None,
            namespace: None,
            selector: None,
            readiness: None,
        }
    }

    /// Kubespray's healthy worker (clusterDNS 169.254.25.10 on its nodelocaldns interface)
    /// while its cache pods are down: the interface outlives them (-skipteardown, a crash),
    /// so only the cluster shows that nothing answers. One ready cache of the two
    /// (enable_nodelocaldns_secondary) serves the address; none on the node, while the
    /// DaemonSet runs elsewhere, is as bad as a crashed one.
    #[test]
    fn a_nodelocaldns_interface_with_no_ready_cache_behind_it_is_critical() {
        let facts = fixture("_healthy/kubespray-ubuntu2204");
        let host = crate::inventory::Host::new("node1");
        let primary = cache("nodelocaldns-4xk2p", "nodelocaldns", "node1", false);
        let elsewhere = cache("nodelocaldns-9wqzb", "nodelocaldns", "node2", true);
        let cluster = read_nodes(vec![primary.clone(), elsewhere.clone()]);
        let rules = rules_of(&host, &facts, &cluster);
        let f = critical_down(&rules);
        assert_eq!(f.playbook, None);
        assert!(
            f.summary.starts_with("nodelocaldns-4xk2p is not ready, but the nodelocaldns interface still holds kubelet clusterDNS 169.254.25.10"),
            "{f:?}"
        );
        assert_eq!(
            f.evidence,
            [
                "/etc/kubernetes/kubelet-config.yaml:28 clusterDNS: [169.254.25.10]",
                "interface nodelocaldns: 169.254.25.10",
                "pod kube-system/nodelocaldns-4xk2p (nodelocaldns) on node node1: CrashLoopBackOff, 9 restarts (kubectl on cp1)",
            ]
        );
        assert!(f.remediation.contains("OOMKilled"), "{f:?}");

        // Kubespray's secondary DaemonSet answers on the same address. Its probes ask the
        // primary's health port, so with the primary down it is running but not ready,
        // and still serves.
        let second = running_secondary();
        let served = read_nodes(vec![primary.clone(), second.clone(), elsewhere.clone()]);
        assert_eq!(
            *outcome(&rules_of(&host, &facts, &served), NODELOCAL_DOWN),
            RuleOutcome::Pass
        );
        let mut second_down = second;
        second_down.running = false;
        second_down.waiting = Some("CrashLoopBackOff".to_owned());
        second_down.loop_detected = Some("[FATAL] plugin/loop: Loop detected".to_owned());
        let both = read_nodes(vec![primary, second_down, elsewhere.clone()]);
        let rules = rules_of(&host, &facts, &both);
        let f = &findings(outcome(&rules, NODELOCAL_DOWN))[0];
        assert!(
            f.summary
                .starts_with("nodelocaldns-4xk2p and nodelocaldns-second-7tq8d are not ready"),
            "{f:?}"
        );
        assert!(f.remediation.contains("DNS-POD-LOOP"), "{f:?}");

        // No cache pod on this node at all (a nodeSelector or taint leaves it out).
        let missing = read_nodes(vec![elsewhere]);
        let rules = rules_of(&host, &facts, &missing);
        let f = critical_down(&rules);
        assert!(
            f.summary
                .starts_with("no NodeLocal DNSCache pod runs on node node1"),
            "{f:?}"
        );
        assert_eq!(
            f.evidence[2],
            "no NodeLocal DNSCache pod on node node1; 1 on other nodes, e.g. kube-system/nodelocaldns-9wqzb on node2 (kubectl on cp1)"
        );
        // ... but only of a node the cluster lists by a name dnsfix knows: another name
        // (an FQDN) would look the same. Nor where the nodes were not read.
        let mut fqdn = facts.clone();
        for flag in &mut fqdn.kubelet.flags {
            if flag.name == "hostname-override" {
                flag.value = Some("node1.example.com".to_owned());
            }
        }
        assert_eq!(
            crate::cluster::node_names(&host, &fqdn),
            ["node1.example.com"]
        );
        assert!(matches!(
            outcome(&rules_of(&host, &fqdn, &missing), NODELOCAL_DOWN),
            RuleOutcome::NotApplicable(why) if why.contains("do not include it")
        ));
        let unread = read(
            vec![cache("nodelocaldns-9wqzb", "nodelocaldns", "node2", true)],
            DnsConfig::default(),
        );
        assert!(matches!(
            outcome(&rules_of(&host, &facts, &unread), NODELOCAL_DOWN),
            RuleOutcome::NotApplicable(why) if why.contains("and the cluster's nodes were not read (kubectl get nodes on")
        ));
        // A pod not yet started (Pending, no container status) does not serve.
        let mut pending = cache("nodelocaldns-4xk2p", "nodelocaldns", "node1", false);
        (pending.phase, pending.waiting, pending.restarts) = ("Pending".to_owned(), None, 0);
        let rules = rules_of(&host, &facts, &read_nodes(vec![pending]));
        let f = &findings(outcome(&rules, NODELOCAL_DOWN))[0];
        assert!(
            f.evidence[2].ends_with("on node node1: Pending, not ready (kubectl on cp1)"),
            "{f:?}"
        );
    }

    /// With no nodelocaldns interface, Cilium keeps the rule out (a Local Redirect Policy can
    /// serve the address). On DNS-BRIDGE-NF-OFF/crio-default-network-bridge with a leftover
    /// Cilium file sorting first, CRI-O's network is its bridge; with a drop-in naming the
    /// network in a form dnsfix does not read, Cilium's file is only the first by name, and
    /// the reason says so.
    #[test]
    fn cilium_first_by_name_on_crio_is_named_as_such() {
        use crate::facts::node_facts::NODELOCALDNS_SYSFS;
        use crate::facts::raw::FileState;
        let mut raw =
            crate::testing::rules_fixture("DNS-BRIDGE-NF-OFF/crio-default-network-bridge");
        raw.commands.remove("nodelocaldns-addr");
        raw.file(NODELOCALDNS_SYSFS, FileState::Missing, None);
        raw.file(
            "/etc/cni/net.d/05-cilium.conflist",
            FileState::Present,
            Some(br#"{"cniVersion":"0.3.1","name":"cilium","plugins":[{"type":"cilium-cni"}]}"#),
        );
        let host = crate::inventory::Host::new("node1");
        let why = |raw: &crate::facts::raw::RawFacts| {
            let facts = NodeFacts::from_raw("node1", raw);
            let ctx = Ctx::new(&host, &facts);
            let Observed::Known(dns) = &facts.kubelet.cluster_dns else {
                panic!("clusterDNS: {:?}", facts.kubelet.cluster_dns);
            };
            cache_addresses(&ctx, dns).expect_err("not applicable")
        };
        // CRI-O's network read: the bridge, Cilium's file is no exception.
        assert_eq!(
            why(&raw),
            "no nodelocaldns interface, and kubelet's clusterDNS is not a link-local address"
        );
        raw.file(
            "/etc/crio/crio.conf.d/20-network.conf",
            FileState::Present,
            Some(b"[crio]\nnetwork.cni_default_network = \"crio\"\n"),
        );
        let why = why(&raw);
        assert!(
            why.contains("if Cilium's is the network CRI-O gives pods, which is not known (/etc/crio/crio.conf.d/20-network.conf:2 sets cni_default_network in a form dnsfix does not read; /etc/cni/net.d/05-cilium.conflist is only the first CNI file by name)"),
            "{why}"
        );
    }

    /// Where dnsfix cannot tell whose the address is, or the node itself already says it,
    /// the rule stays out: no NodeLocal DNSCache pod in the cluster at all (a cache deployed
    /// under other labels), no interface (DNS-NODELOCAL-CLUSTERDNS), clusterDNS not on it.
    /// A server after the cache's address makes it high, not critical.
    #[test]
    fn a_down_cache_is_judged_only_where_clusterdns_is_its_address() {
        let facts = fixture("_healthy/kubespray-ubuntu2204");
        let host = crate::inventory::Host::new("node1");
        let down = cache("nodelocaldns-4xk2p", "nodelocaldns", "node1", false);
        let no_caches = read_nodes(vec![cache(
            "coredns-5d78c9869d-x7k2p",
            "coredns",
            "node1",
            true,
        )]);
        assert!(matches!(
            outcome(&rules_of(&host, &facts, &no_caches), NODELOCAL_DOWN),
            RuleOutcome::NotApplicable(why) if why.contains("lists no NodeLocal DNSCache pod")
        ));
        let cluster = read_nodes(vec![down]);
        // The interface not read (unknown), or gone on this Kubespray node (its own rule's).
        let mut unread = facts.clone();
        unread.nodelocaldns = None;
        assert!(matches!(
            outcome(&rules_of(&host, &unread, &cluster), NODELOCAL_DOWN),
            RuleOutcome::NotApplicable(why) if why.contains("not known")
        ));
        let gone = fixture("DNS-NODELOCAL-CLUSTERDNS/nodelocaldns-pod-gone");
        assert!(matches!(
            outcome(&rules_of(&host, &gone, &cluster), NODELOCAL_DOWN),
            RuleOutcome::NotApplicable(why) if why.contains("DNS-NODELOCAL-CLUSTERDNS")
        ));
        let mut other_address = facts.clone();
        other_address.nodelocaldns = Some(vec!["169.254.20.10".to_owned()]);
        assert!(matches!(
            outcome(&rules_of(&host, &other_address, &cluster), NODELOCAL_DOWN),
            RuleOutcome::NotApplicable(why) if why.contains("not an address of the nodelocaldns interface")
        ));
        let mut fallback = facts.clone();
        if let Observed::Known(dns) = &mut fallback.kubelet.cluster_dns {
            dns.value.push("10.233.0.3".to_owned());
        }
        let rules = rules_of(&host, &fallback, &cluster);
        let f = &findings(outcome(&rules, NODELOCAL_DOWN))[0];
        assert_eq!(f.severity, Severity::High);
        assert!(
            f.summary
                .ends_with("reach 10.233.0.3 only after an error or a timeout"),
            "{f:?}"
        );
    }

    /// Where the node's socket table was read it decides: a server on the cache's address
    /// passes whatever the pods say (a restart the pod list has not caught up with); none
    /// is the finding even while a secondary is listed as running, with the table as
    /// evidence.
    #[test]
    fn the_socket_table_says_whether_the_cache_answers() {
        const HEADER: &str = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n";
        // 169.254.25.10:53, as a little-endian kernel prints it.
        const CACHE: &str = " 2412: 0A19FEA9:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 6220938 2 00000000fed30b06 0\n";
        let with_udp = |rows: &str| {
            let mut raw = crate::testing::rules_fixture("_healthy/kubespray-ubuntu2204");
            let mut udp = raw.files["/etc/os-release"].clone();
            udp.content = format!("{HEADER}{rows}").into_bytes().into();
            udp.sha256 = None;
            let mut udp6 = udp.clone();
            udp6.content = b"  sl  local_address remote_address st\n".as_slice().into();
            raw.files.insert(crate::facts::sockets::UDP.to_owned(), udp);
            raw.files
                .insert(crate::facts::sockets::UDP6.to_owned(), udp6);
            NodeFacts::from_raw("node1", &raw)
        };
        let host = crate::inventory::Host::new("node1");
        let down = read_nodes(vec![cache(
            "nodelocaldns-4xk2p",
            "nodelocaldns",
            "node1",
            false,
        )]);
        assert_eq!(
            *outcome(&rules_of(&host, &with_udp(CACHE), &down), NODELOCAL_DOWN),
            RuleOutcome::Pass
        );
        let second = running_secondary();
        let cluster = read_nodes(vec![second]);
        let rules = rules_of(&host, &with_udp(""), &cluster);
        let f = critical_down(&rules);
        assert!(
            f.summary
                .starts_with("nodelocaldns-second-7tq8d is running yet not listening"),
            "{f:?}"
        );
        assert!(
            f.evidence.contains(
                &"/proc/net/udp, /proc/net/udp6: no UDP socket on port 53 of 169.254.25.10 or of every address".to_owned()
            ),
            "{f:?}"
        );
    }

    /// The upstream manifest (kubernetes cluster/addons/dns/nodelocaldns) on a kubeadm
    /// cluster: in iptables mode node-cache also holds the kube-dns service IP, which stays
    /// clusterDNS, so a crashed cache leaves that address dead too; in ipvs mode clusterDNS
    /// is its link-local address, and a node with neither interface nor cache (never
    /// scheduled there) times out. A Kubespray node without the interface is
    /// DNS-NODELOCAL-CLUSTERDNS's, from the node alone.
    #[test]
    fn a_down_cache_of_the_upstream_manifest_is_judged_too() {
        let set_dns = |facts: &mut NodeFacts, servers: &[&str]| {
            if let Observed::Known(dns) = &mut facts.kubelet.cluster_dns {
                dns.value = servers.iter().map(|s| (*s).to_owned()).collect();
            }
        };
        let host = crate::inventory::Host::new("node1");
        let cluster = read_nodes(vec![cache(
            "node-local-dns-8mzvx",
            "nodelocaldns",
            "node2",
            true,
        )]);
        let mut iptables = fixture("_healthy/kubespray-ubuntu2204");
        iptables.flavour.kind = FlavourKind::Kubeadm;
        iptables.nodelocaldns = Some(vec!["169.254.20.10".into(), "10.96.0.10".into()]);
        set_dns(&mut iptables, &["10.96.0.10"]);
        let rules = rules_of(&host, &iptables, &cluster);
        let f = critical_down(&rules);
        assert!(
            f.summary.starts_with("no NodeLocal DNSCache pod runs on node node1, but the nodelocaldns interface still holds kubelet clusterDNS 10.96.0.10"),
            "{f:?}"
        );

        // The same node without its interface (the fixture's Kubespray worker whose cache
        // is gone), its clusterDNS the upstream manifest's link-local address.
        let mut ipvs = fixture("DNS-NODELOCAL-CLUSTERDNS/nodelocaldns-pod-gone");
        assert!(ipvs.nodelocaldns_absent());
        ipvs.flavour.kind = FlavourKind::Kubeadm;
        set_dns(&mut ipvs, &["169.254.20.10"]);
        let rules = rules_of(&host, &ipvs, &cluster);
        let f = critical_down(&rules);
        assert!(
            f.summary.ends_with("and no nodelocaldns interface holds kubelet clusterDNS 169.254.20.10: nothing on this node answers it, so every lookup of its ClusterFirst pods times out"),
            "{f:?}"
        );
        // Ready on the node: node-cache with -setupinterface=false answers without one.
        let served = read_nodes(vec![cache(
            "node-local-dns-q2n4k",
            "nodelocaldns",
            "node1",
            true,
        )]);
        assert_eq!(
            *outcome(&rules_of(&host, &ipvs, &served), NODELOCAL_DOWN),
            RuleOutcome::Pass
        );
        let kubespray = fixture("DNS-NODELOCAL-CLUSTERDNS/nodelocaldns-pod-gone");
        assert!(matches!(
            outcome(&rules_of(&host, &kubespray, &cluster), NODELOCAL_DOWN),
            RuleOutcome::NotApplicable(why) if why.contains("DNS-NODELOCAL-CLUSTERDNS")
        ));
    }

    /// With --hostname-override the kubelet's node is that name alone; without it, the
    /// machine's hostname, and the inventory name only where that is unread or an in-tree
    /// cloud provider names the node: an inventory entry pointing at another machine does
    /// not claim its pods.
    #[test]
    fn node_names_follow_hostname_override() {
        let mut facts = fixture("DNS-KUBELET-LOOPBACK/kubespray-3979-ubuntu1804-stub");
        let host = crate::inventory::Host::new("Node1");
        facts.hostname = Some("worker-7".to_owned());
        facts
            .kubelet
            .flags
            .retain(|f| f.name != "hostname-override");
        assert_eq!(crate::cluster::node_names(&host, &facts), ["worker-7"]);
        let mut unread = facts.clone();
        unread.hostname = None;
        assert_eq!(crate::cluster::node_names(&host, &unread), ["node1"]);
        // An in-tree cloud provider names the node itself (EC2's private DNS name, which
        // Kubespray's AWS docs have the inventory name match): both; `external` does not.
        let flag = |name: &str, value: &str| crate::facts::node_facts::FlagFact {
            name: name.to_owned(),
            value: Some(value.to_owned()),
            source: crate::facts::node_facts::Source::new("flag", None, None),
        };
        let mut aws = facts.clone();
        aws.kubelet.flags.push(flag("cloud-provider", "aws"));
        assert_eq!(
            crate::cluster::node_names(&host, &aws),
            ["worker-7", "node1"]
        );
        let mut external = facts.clone();
        external
            .kubelet
            .flags
            .push(flag("cloud-provider", "external"));
        assert_eq!(crate::cluster::node_names(&host, &external), ["worker-7"]);
        facts
            .kubelet
            .flags
            .push(crate::facts::node_facts::FlagFact {
                name: "hostname-override".to_owned(),
                value: Some("Worker-7.Example".to_owned()),
                source: crate::facts::node_facts::Source::new("flag", None, None),
            });
        assert_eq!(
            crate::cluster::node_names(&host, &facts),
            ["worker-7.example"]
        );
    }

    /// An inventory entry named node2 whose address reaches node1's machine (hostname
    /// node1): its view of the cluster holds node1's pods, not node2's, which apply would
    /// otherwise recreate with node1's.
    #[test]
    fn an_inventory_name_is_no_node_name_once_the_hostname_is_read() {
        let mut facts = fixture("DNS-KUBELET-LOOPBACK/kubespray-3979-ubuntu1804-stub");
        facts
            .kubelet
            .flags
            .retain(|f| f.name != "hostname-override");
        facts.hostname = Some("node1".to_owned());
        let host = crate::inventory::Host::new("node2");
        let cluster = read(
            vec![
                cache("nodelocaldns-aaaaa", "nodelocaldns", "node1", true),
                cache("nodelocaldns-bbbbb", "nodelocaldns", "node2", true),
            ],
            DnsConfig::default(),
        );
        let crate::cluster::NodeView::Read { pods, .. } =
            cluster.node_view(crate::cluster::node_names(&host, &facts))
        else {
            panic!("read");
        };
        let pods: Vec<&str> = pods.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(pods, ["nodelocaldns-aaaaa"]);
    }

    fn rules_of(
        host: &Host,
        facts: &NodeFacts,
        cluster: &Cluster,
    ) -> Vec<(&'static str, RuleOutcome)> {
        rules(host, facts, cluster)
    }

    /// A healthy kubeadm node (resolvConf /run/systemd/resolve/resolv.conf, clusterDNS
    /// 10.96.0.10) against kubeadm's ConfigMap: the same values pass; a ConfigMap with the
    /// stub file and another clusterDNS is drift on both, with both sides as evidence.
    #[test]
    fn kubeadm_configmap_drift_names_both_sides() {
        let facts = fixture("_healthy/kubeadm-ubuntu2204");
        let host = crate::inventory::Host::new("node1");
        let config = |resolv: &str, dns: &str| DnsConfig {
            kubeadm_kubelet: Some(KubeadmKubelet {
                configmap: "kubelet-config".into(),
                resolv_conf: Some(resolv.to_owned()),
                cluster_dns: vec![dns.to_owned()],
                cluster_domain: Some("cluster.local".to_owned()),
            }),
            ..DnsConfig::default()
        };
        let same = read(
            Vec::new(),
            config("/run/systemd/resolve/resolv.conf", "10.96.0.10"),
        );
        assert_eq!(
            *outcome(&rules(&host, &facts, &same), KUBEADM_DRIFT),
            RuleOutcome::Pass
        );
        let differ = read(Vec::new(), config("/etc/resolv.conf", "10.96.0.53"));
        let rules = rules(&host, &facts, &differ);
        let f = &findings(outcome(&rules, KUBEADM_DRIFT))[0];
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.summary.contains("on resolvConf, clusterDNS"), "{f:?}");
        assert!(
            f.evidence
                .iter()
                .any(|e| e.starts_with("/var/lib/kubelet/config.yaml:")
                    && e.ends_with("resolvConf: /run/systemd/resolve/resolv.conf")),
            "{f:?}"
        );
        assert!(
            f.evidence.contains(
                &"ConfigMap kube-system/kubelet-config (data.kubelet) clusterDNS: [10.96.0.53]"
                    .to_owned()
            ),
            "{f:?}"
        );
        // A --config-dir drop-in decides resolvConf: kubeadm leaves it alone, so only
        // clusterDNS (from config.yaml) can drift.
        let dropin = fixture("DNS-KUBELET-LOOPBACK/kubeadm-1.33-config-dir-dropin");
        let resolved = read(
            Vec::new(),
            config("/run/systemd/resolve/resolv.conf", "10.96.0.53"),
        );
        let dropin_rules = rules_of(&host, &dropin, &resolved);
        let f = &findings(outcome(&dropin_rules, KUBEADM_DRIFT))[0];
        assert!(
            f.summary.contains("on clusterDNS") && !f.summary.contains("resolvConf"),
            "{f:?}"
        );
        // Not kubeadm: not this rule's business.
        let kubespray = fixture("DNS-KUBELET-LOOPBACK/kubespray-3979-ubuntu1804-stub");
        assert!(matches!(
            outcome(&rules_of(&host, &kubespray, &differ), KUBEADM_DRIFT),
            RuleOutcome::NotApplicable(_)
        ));
    }

    /// A ConfigMap that sets no resolvConf (kubeadm 1.30 and later never store one) leaves
    /// kubeadm to choose per node at `kubeadm upgrade node`: systemd-resolved's upstream
    /// file where it runs, else the kubelet's default. The healthy Ubuntu node keeps its
    /// file; with systemd-resolved stopped the upgrade would take it away, which is drift
    /// whose fix is no ConfigMap edit; with systemctl silent, resolvConf is not compared.
    #[test]
    fn an_unset_configmap_resolv_conf_is_kubeadms_choice_per_node() {
        let mut facts = fixture("_healthy/kubeadm-ubuntu2204");
        let host = crate::inventory::Host::new("node1");
        let unset = read(
            Vec::new(),
            DnsConfig {
                kubeadm_kubelet: Some(KubeadmKubelet {
                    configmap: "kubelet-config".into(),
                    resolv_conf: None,
                    cluster_dns: vec!["10.96.0.10".to_owned()],
                    cluster_domain: Some("cluster.local".to_owned()),
                }),
                ..DnsConfig::default()
            },
        );
        assert_eq!(facts.services.systemd_resolved, UnitState::Active);
        assert_eq!(
            *outcome(&rules(&host, &facts, &unset), KUBEADM_DRIFT),
            RuleOutcome::Pass
        );

        facts.services.systemd_resolved = UnitState::Inactive;
        let rules_now = rules(&host, &facts, &unset);
        let f = &findings(outcome(&rules_now, KUBEADM_DRIFT))[0];
        assert!(f.summary.contains("on resolvConf:"), "{f:?}");
        assert!(
            f.evidence.contains(
                &"ConfigMap kube-system/kubelet-config (data.kubelet) sets no resolvConf, and systemd-resolved does not run here (systemctl is-active), so kubeadm writes none and the kubelet takes its default: /etc/resolv.conf"
                    .to_owned()
            ),
            "{f:?}"
        );
        assert!(
            f.remediation
                .starts_with("kubeadm chooses resolvConf per node")
                && f.remediation.contains("--patches")
                && !f.remediation.contains("For the other settings"),
            "{f:?}"
        );
        assert_eq!(
            keep_per_node(Some("v1.24.17")),
            keep_per_node(Some("v1.23.17"))
        );
        assert_ne!(
            keep_per_node(Some("v1.25.0")),
            keep_per_node(Some("v1.24.17"))
        );

        facts.services.systemd_resolved = UnitState::Unknown;
        assert_eq!(
            *outcome(&rules(&host, &facts, &unset), KUBEADM_DRIFT),
            RuleOutcome::Pass
        );

        // A node with no clusterDNS or clusterDomain is DNS-KUBELET-NO-CLUSTER-DNS's: the
        // ConfigMap that has them is no drift to keep (the next upgrade mends the node).
        facts.services.systemd_resolved = UnitState::Active;
        if let Observed::Known(e) = &mut facts.kubelet.cluster_dns {
            e.value.clear();
            e.source.kind = "default".into();
        }
        if let Observed::Known(e) = &mut facts.kubelet.cluster_domain {
            e.value.clear();
            e.source.kind = "default".into();
        }
        assert_eq!(
            *outcome(&rules(&host, &facts, &unset), KUBEADM_DRIFT),
            RuleOutcome::Pass
        );
    }

    /// kube-proxy's ConfigMap replaces the inventory's guess in the evidence: the same node
    /// (nodelocaldns up on its link-local address only, clusterDNS the service IP, the
    /// inventory saying ipvs) is the finding whatever the mode, with the ConfigMap's mode,
    /// EKS's kube-proxy-config, or the inventory where no mode was read.
    #[test]
    fn kube_proxy_mode_comes_from_its_configmap() {
        let facts = fixture("DNS-NODELOCAL-CLUSTERDNS/ipvs-clusterdns-service-ip");
        let mut host = crate::inventory::Host::new("node1");
        host.vars
            .insert("kube_proxy_mode".into(), serde_json::json!("ipvs"));
        let gathered = [(&host, &facts)];
        let with_mode = |mode: &str| {
            read(
                Vec::new(),
                DnsConfig {
                    kube_proxy_mode: Some(mode.to_owned()),
                    kube_proxy_configmap: true,
                    ..DnsConfig::default()
                },
            )
        };
        let outcome_of = |cluster: &Cluster| {
            super::super::diagnose_in(&gathered, cluster)[0]
                .outcomes
                .iter()
                .find(|(id, _)| *id == "DNS-NODELOCAL-CLUSTERDNS")
                .map(|(_, o)| o.clone())
                .expect("rule ran")
        };
        let ipvs = outcome_of(&with_mode("ipvs"));
        assert!(
            findings(&ipvs)[0]
                .evidence
                .contains(&"ConfigMap kube-system/kube-proxy (config.conf) mode: ipvs".to_owned()),
            "{ipvs:?}"
        );
        // In iptables mode too: Kubespray's node-cache holds only its link-local address.
        let iptables = outcome_of(&with_mode(""));
        assert!(
            findings(&iptables)[0].evidence.contains(
                &"ConfigMap kube-system/kube-proxy (config.conf) mode: \"\" (iptables)".to_owned()
            ),
            "{iptables:?}"
        );
        // EKS's kube-proxy add-on keeps its configuration in kube-proxy-config, and its
        // kube-proxy ConfigMap only the kubeconfig: kube-proxy runs there.
        let eks = |from: Option<&str>, mode: Option<&str>| {
            read(
                Vec::new(),
                DnsConfig {
                    kube_proxy_mode: mode.map(str::to_owned),
                    kube_proxy_from: from.map(str::to_owned),
                    kube_proxy_configmap: true,
                    ..DnsConfig::default()
                },
            )
        };
        let ipvs = outcome_of(&eks(Some("kube-proxy-config (config)"), Some("ipvs")));
        assert!(
            findings(&ipvs)[0].evidence.contains(
                &"ConfigMap kube-system/kube-proxy-config (config) mode: ipvs".to_owned()
            ),
            "{ipvs:?}"
        );
        let unread = outcome_of(&eks(None, None));
        assert!(
            findings(&unread)[0]
                .evidence
                .contains(&"kube_proxy_mode: ipvs".to_owned()),
            "{unread:?}"
        );
        // No kube-proxy ConfigMap at all: not deployed.
        let none = outcome_of(&read(Vec::new(), DnsConfig::default()));
        assert!(
            findings(&none)[0].evidence.contains(
                &"no kube-proxy ConfigMap in kube-system (kube-proxy, or EKS's kube-proxy-config): kube-proxy is not deployed".to_owned()
            ),
            "{none:?}"
        );
    }

    /// A plan that moves a kubeadm node's resolvConf away from what kubeadm's ConfigMap
    /// says gets a note naming both values; one that keeps them together, none; without
    /// the ConfigMap, a note that the change is one the upgrade rewrites.
    #[test]
    fn a_plan_that_moves_a_kubeadm_node_off_its_configmap_says_so() {
        use crate::plan::model::{Change, HandlerAction, HandlerRun};
        let facts = fixture("_healthy/kubeadm-ubuntu2204");
        let path = "/var/lib/kubelet/config.yaml";
        let before = facts.files[path].text().expect("config.yaml").into_owned();
        let content = before.replace(
            "resolvConf: /run/systemd/resolve/resolv.conf",
            "resolvConf: /etc/dnsfix/resolv.conf",
        );
        let change = Change::WriteFile {
            path: path.to_owned(),
            description: String::new(),
            before_sha256: None,
            before: None,
            after_sha256: String::new(),
            content,
            mode: None,
            reasons: Vec::new(),
        };
        let restart = HandlerRun {
            name: "restart kubelet".to_owned(),
            unit: "kubelet".to_owned(),
            action: HandlerAction::Restarted,
            serial: crate::playbook::Batch::Count(1),
            reasons: Vec::new(),
        };
        let predicted = crate::plan::predict::predict(&facts, &[change], &[restart]);
        let cluster = read(
            Vec::new(),
            DnsConfig {
                kubeadm_kubelet: Some(KubeadmKubelet {
                    configmap: "kubelet-config".into(),
                    resolv_conf: Some("/run/systemd/resolve/resolv.conf".to_owned()),
                    cluster_dns: vec!["10.96.0.10".to_owned()],
                    cluster_domain: Some("cluster.local".to_owned()),
                }),
                ..DnsConfig::default()
            },
        );
        let note = kubeadm_note(&facts, &predicted, &cluster).expect("a note");
        assert!(
            note.contains(
                "resolvConf /etc/dnsfix/resolv.conf here, /run/systemd/resolve/resolv.conf in the ConfigMap"
            ),
            "{note}"
        );
        assert_eq!(kubeadm_note(&facts, &facts, &cluster), None);
        // The cluster not read: the change to config.yaml is one the next upgrade rewrites,
        // and the reviewer is told to compare; no change to it, no note.
        let unread = Cluster::Unavailable {
            reason: "no".to_owned(),
        };
        let note = kubeadm_note(&facts, &predicted, &unread).expect("a note");
        assert!(note.contains("it was not read to compare"), "{note}");
        assert_eq!(kubeadm_note(&facts, &facts, &unread), None);
    }

    #[test]
    fn corefile_forward_lines_become_evidence() {
        let config = crate::cluster::parse_configmaps(include_bytes!(
            "../../tests/lab/standins/configmaps.json"
        ))
        .expect("configmaps");
        assert_eq!(
            corefile_evidence(&config),
            [
                "ConfigMap kube-system/coredns (Corefile:13, .:53): forward . /etc/resolv.conf (the pod's resolv.conf; loop plugin on)",
                "ConfigMap kube-system/nodelocaldns (Corefile:44, .:53): forward . /etc/resolv.conf (the pod's resolv.conf; loop plugin on)",
            ]
        );
    }

    /// A `forward .` that comes from a file the Corefile imports (k3s's coredns-custom
    /// `.override`, tests/fixtures/kubectl/README.md) is named with that file, on the
    /// import's line.
    #[test]
    fn a_forward_from_an_imported_file_names_the_file() {
        let doc: serde_json::Value = serde_json::from_slice(include_bytes!(
            "../../tests/fixtures/kubectl/k3s-coredns-configmaps.json"
        ))
        .expect("fixture");
        let text = doc["items"][0]["data"]["Corefile"]
            .as_str()
            .expect("Corefile");
        let custom = std::collections::BTreeMap::from([(
            "forward.override".to_owned(),
            "forward . 192.0.2.53 198.51.100.53\n".to_owned(),
        )]);
        let files = crate::cluster::corefile::Files {
            base: "/etc/coredns".into(),
            dirs: vec![("/etc/coredns/custom".into(), Some(custom))],
        };
        let config = DnsConfig {
            corefiles: vec![crate::cluster::Corefile::with_files(
                "coredns", "Corefile", text, &files,
            )],
            ..DnsConfig::default()
        };
        assert_eq!(
            corefile_evidence(&config),
            [
                "ConfigMap kube-system/coredns (Corefile:19, imported from /etc/coredns/custom/forward.override, .:53): forward . 192.0.2.53 198.51.100.53"
            ]
        );
    }

    /// A Corefile read outside kube-system (CoreDNS found through its Service there: the
    /// CoreDNS Helm chart installed with `-n coredns`) is named with its namespace; before,
    /// every ConfigMap was said to be kube-system's.
    #[test]
    fn a_corefile_elsewhere_is_named_with_its_namespace() {
        let json = include_bytes!("../../tests/fixtures/kubectl/helm-coredns-ns-configmaps.json");
        let config = DnsConfig {
            corefiles: crate::cluster::mounted_corefiles(json, &["dns-coredns".to_owned()])
                .expect("configmaps"),
            ..DnsConfig::default()
        };
        assert_eq!(
            corefile_evidence(&config),
            [
                "ConfigMap coredns/dns-coredns (Corefile:13, .:53): forward . /etc/resolv.conf (the pod's resolv.conf; loop plugin on)"
            ]
        );
    }

    /// Where CoreDNS's Corefile was not read, the evidence says so and why, rather than
    /// leaving the Corefiles out as if there were nothing to say: before, a cluster whose
    /// CoreDNS ConfigMap has another name (the Helm chart's `<release>-coredns`) showed
    /// nodelocaldns's line alone, or nothing.
    #[test]
    fn a_coredns_corefile_not_found_is_said() {
        let mut config = kubespray_corefiles();
        config.corefiles.retain(|c| c.is_node_local());
        config.coredns_mounts = vec!["dns-coredns".into()];
        let evidence = corefile_evidence(&config);
        assert_eq!(
            evidence[0],
            "no CoreDNS Corefile in kube-system: its pods mount ConfigMap dns-coredns, and none there has a Corefile key: where CoreDNS forwards is not known"
        );
        assert!(evidence[1].starts_with("ConfigMap kube-system/nodelocaldns"));
        config.coredns_mounts_error = Some("dns-coredns: Error from server (Forbidden)".into());
        assert_eq!(
            corefile_evidence(&config)[0],
            "CoreDNS's pods mount ConfigMap dns-coredns, not all of which could be read (dns-coredns: Error from server (Forbidden)): where CoreDNS forwards is not known"
        );
        assert_eq!(
            corefile_evidence(&DnsConfig::default()),
            [
                "no CoreDNS Corefile in kube-system: no ConfigMap coredns, and no CoreDNS pod there (k8s-app kube-dns or coredns) that mounts one (with none listed, nor RKE2's rke2-coredns-rke2-coredns, asked for by name): where CoreDNS forwards is not known"
            ]
        );
        // No CoreDNS pod listed, and RKE2's ConfigMap, asked for by name, refused.
        let refused = DnsConfig {
            coredns_mounts_error: Some(
                "rke2-coredns-rke2-coredns: Error from server (Forbidden)".into(),
            ),
            ..DnsConfig::default()
        };
        assert_eq!(
            corefile_evidence(&refused),
            [
                "no CoreDNS Corefile in kube-system: no ConfigMap coredns, no CoreDNS pod there (k8s-app kube-dns or coredns) that mounts one, and RKE2's rke2-coredns-rke2-coredns could not be read (rke2-coredns-rke2-coredns: Error from server (Forbidden)): where CoreDNS forwards is not known"
            ]
        );
        let unread = DnsConfig {
            error: Some("Error from server (Forbidden)".into()),
            ..DnsConfig::default()
        };
        assert_eq!(
            corefile_evidence(&unread),
            [
                "kube-system's ConfigMaps could not be read (Error from server (Forbidden)): where CoreDNS forwards is not known"
            ]
        );
    }
}
