//! The per-host rules: pure functions of one node's facts and its inventory variables.
//! Each rule returns a [`RuleOutcome`]; a rule whose facts are unknown says so (an
//! `Unknown` finding), never passes silently. Rules never touch the network.

use std::collections::BTreeSet;
use std::net::IpAddr;

use super::catalog;
use super::finding::{Finding, FindingStatus, Severity};
use crate::facts::NodeFacts;
use crate::facts::kubelet::version_minor;
use crate::facts::node_facts::{Effective, FlavourKind, Observed, ResolvFile, UnitState};
use crate::facts::raw::FileState;
use crate::facts::resolv_conf::{Nameserver, ResolvConf};
use crate::inventory::Host;
use crate::util::nth_address;

mod cni;
mod dhclient_run;
mod dhclient_script;
mod firewalld;
mod host_servers;
mod k3s_fallback;
mod kernel;
mod kubelet_file;
mod kubelet_flags;
mod macvlan;
mod new_interfaces;
mod node_resolver;
mod resolver_owner;
mod restart_due;
mod search;
mod upstreams;

pub(super) use kubelet_flags::{kubespray_nodelocaldns, link_local};
#[cfg(test)]
mod tests;

pub(crate) use dhclient_script::resolv_conf_written as dhclient_writes_resolv_conf;
pub(crate) use host_servers::{HostServers, Via, host_servers};
pub(crate) use kernel::{Family, forwarding_keys, installer_bridge, left_to_installer};
pub(crate) use kubelet_file::{CLUSTER_SELF_FORWARD, KUBELET_LOOPBACK, KUBELET_RESOLVCONF_MISSING};
pub(crate) use kubelet_flags::{
    CLUSTER_DNS, CLUSTER_DOMAIN, NO_CLUSTER_DNS, kubespray_cluster_dns,
    kubespray_cluster_dns_serves,
};
pub(crate) use new_interfaces::notes as forwarding_notes;
pub(crate) use search::strays;
#[cfg(test)]
pub(crate) use upstreams::NM_NO_STUB;
pub(crate) use upstreams::{kubelet_own_servers, nameservers, upstreams};

/// What one rule concluded for one host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleOutcome {
    Pass,
    /// The rule does not apply (e.g. no kubelet on this host), with why.
    NotApplicable(String),
    Findings(Vec<Finding>),
}

/// Everything a rule may look at for one host.
#[derive(Debug, Clone)]
pub struct Ctx<'a> {
    pub host: &'a Host,
    pub facts: &'a NodeFacts,
    /// The cluster's own DNS addresses: clusterDNS, the nodelocaldns IP, the kube-dns
    /// service IP (the inventory's, and the cluster DNS Services' where the cluster was
    /// read: [`cluster_addresses`]). A resolver that lists only these forwards back into
    /// the cluster.
    pub cluster: BTreeSet<IpAddr>,
    /// kube-proxy's mode as its ConfigMap says, when the cluster was read (`""` is its
    /// default, iptables), and the ConfigMap and key it was read from; it replaces the
    /// inventory's `kube_proxy_mode`.
    pub kube_proxy_mode: Option<(String, String)>,
    /// The cluster's ConfigMaps were read and kube-proxy has none: where kube-proxy is a
    /// DaemonSet with its ConfigMap (kubeadm, Kubespray, EKS), it is not deployed (Cilium's
    /// or Calico's eBPF replacing it, Kubespray's kube_proxy_remove).
    pub kube_proxy_absent: bool,
    /// kube-proxy's masqueradeAll as its ConfigMap says, when the cluster was read: its
    /// value with the ConfigMap and key it was read from (`ConfigMap kube-system/kube-proxy
    /// (config.conf) iptables.masqueradeAll: false`), or why that ConfigMap does not tell
    /// it, naming it. Either replaces the inventory's `kube_proxy_masquerade_all`.
    pub kube_proxy_masquerade_all: Option<Result<(bool, String), String>>,
    /// Where the cluster's CoreDNS pods run, when the cluster was read.
    pub coredns_placement: Option<CorednsPlacement>,
    /// The node's kubelet version as the cluster has it from the running kubelet
    /// (`status.nodeInfo.kubeletVersion`), with the node's name there, when it was read.
    pub kubelet_version: Option<(String, String)>,
    /// Whether CoreDNS forwards `.` to the resolv.conf kubelet hands it, as its Corefile
    /// read from the cluster says ([`corefile_forwards`]); `None` where that is not known.
    pub coredns_forwards_to_file: Option<bool>,
    /// The same for CoreDNS or NodeLocal DNSCache: `Some(false)` only where neither does
    /// (nodelocaldns not deployed, or its Corefile read too).
    pub corefile_forwards_to_file: Option<bool>,
    /// The cluster DNS Services (kube-system, `k8s-app` kube-dns, kube-dns-secondary or
    /// coredns: [`GET_DNS_SERVICES`](crate::cluster::GET_DNS_SERVICES)), with the host
    /// kubectl read them on, when they were read.
    pub dns_services: Option<(String, Vec<crate::cluster::DnsService>)>,
    /// CoreDNS's Services outside kube-system as kubectl read them
    /// ([`crate::cluster::DnsConfig::services_elsewhere`]), kept here even where kube-system
    /// has a DNS Service of its own (a leftover kube-dns).
    pub dns_services_elsewhere: Vec<crate::cluster::DnsService>,
    /// CoreDNS's ConfigMap as read from the cluster, and the Helm release that owns it:
    /// where its `forward .` is changed ([`coredns_forward_knob`]).
    pub coredns_configmap: Option<(String, Option<String>)>,
    /// Who writes that ConfigMap back over an edit, where its metadata says
    /// ([`crate::cluster::Corefile::owner`]).
    pub coredns_owner: Option<String>,
    /// That ConfigMap's namespace and its Helm release's
    /// ([`crate::cluster::Corefile::helm_namespace`]), where it was read.
    pub coredns_namespaces: Option<(String, String)>,
    /// That ConfigMap's `helm.sh/chart` label ([`crate::cluster::Corefile::helm_chart`]).
    pub coredns_helm_chart: Option<String>,
}

impl<'a> Ctx<'a> {
    pub fn new(host: &'a Host, facts: &'a NodeFacts) -> Ctx<'a> {
        Ctx {
            host,
            facts,
            cluster: cluster_addresses(host, facts, None),
            kube_proxy_mode: None,
            kube_proxy_absent: false,
            kube_proxy_masquerade_all: None,
            coredns_placement: None,
            kubelet_version: None,
            coredns_forwards_to_file: None,
            corefile_forwards_to_file: None,
            dns_services: None,
            dns_services_elsewhere: Vec::new(),
            coredns_configmap: None,
            coredns_owner: None,
            coredns_namespaces: None,
            coredns_helm_chart: None,
        }
    }

    /// [`Ctx::new`], with what the cluster says where rules can use it.
    pub fn in_cluster(
        host: &'a Host,
        facts: &'a NodeFacts,
        cluster: Option<&crate::cluster::Cluster>,
    ) -> Ctx<'a> {
        let mut ctx = Ctx::new(host, facts);
        ctx.cluster = cluster_addresses(host, facts, cluster);
        if let Some(crate::cluster::Cluster::Read {
            via,
            config,
            kubelets,
            pods,
        }) = cluster
        {
            ctx.dns_services = config.services.clone().map(|s| (via.clone(), s));
            ctx.dns_services_elsewhere = config.services_elsewhere.clone();
            ctx.kube_proxy_mode = config.kube_proxy_mode.clone().map(|m| {
                let from = config.kube_proxy_from.as_deref();
                (m, from.unwrap_or("kube-proxy (config.conf)").to_owned())
            });
            ctx.kube_proxy_masquerade_all = config.kube_proxy_masquerade_all.as_ref().map(|m| {
                let from = config.kube_proxy_from.as_deref();
                let from = from.unwrap_or("kube-proxy (config.conf)");
                match m {
                    crate::cluster::MasqueradeAll::Read { on, key } => {
                        Ok((*on, format!("ConfigMap kube-system/{from} {key}: {on}")))
                    }
                    crate::cluster::MasqueradeAll::Unread(why) => {
                        Err(format!("ConfigMap kube-system/{from}: {why}"))
                    }
                }
            });
            let names = crate::cluster::node_names(host, facts);
            ctx.coredns_placement = Some(CorednsPlacement {
                via: via.clone(),
                named: names.iter().any(|n| kubelets.contains_key(n)),
                nodes_read: !kubelets.is_empty(),
                names,
                pods: pods
                    .iter()
                    .filter(|p| !p.is_node_local())
                    .cloned()
                    .collect(),
            });
            ctx.kube_proxy_absent = !config.kube_proxy_configmap
                && config.kube_proxy_mode.is_none()
                && config.error.is_none();
            let coredns = corefile_forwards(config, false);
            let nodelocal = match corefile_forwards(config, true) {
                // Not read: it matters only where NodeLocal DNSCache runs.
                None if !pods.iter().any(crate::cluster::DnsPod::is_node_local) => Some(false),
                other => other,
            };
            ctx.coredns_forwards_to_file = coredns;
            ctx.coredns_configmap = config
                .corefiles
                .iter()
                .find(|c| c.is_corednss())
                .map(|c| (c.configmap.clone(), c.helm_release.clone()));
            ctx.coredns_owner = config
                .corefiles
                .iter()
                .find(|c| c.is_corednss())
                .and_then(|c| c.owner.clone());
            ctx.coredns_namespaces = config
                .corefiles
                .iter()
                .find(|c| c.is_corednss())
                .map(|c| (c.namespace().to_owned(), c.helm_namespace().to_owned()));
            ctx.coredns_helm_chart = config
                .corefiles
                .iter()
                .find(|c| c.is_corednss())
                .and_then(|c| c.helm_chart.clone());
            ctx.corefile_forwards_to_file = match (coredns, nodelocal) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            };
            ctx.kubelet_version = crate::cluster::node_names(host, facts)
                .into_iter()
                .find_map(|name| Some((kubelets.get(&name)?.clone(), name)));
        }
        ctx
    }

    /// This context with `facts` for the node's: what the cluster says is the same.
    pub(in crate::diagnose) fn with_facts<'b>(&self, facts: &'b NodeFacts) -> Ctx<'b>
    where
        'a: 'b,
    {
        // Everything else is the same: a field added to Ctx needs no line here.
        let same: Ctx<'b> = self.clone();
        Ctx { facts, ..same }
    }

    pub(super) fn finding(
        &self,
        id: &'static str,
        severity: Severity,
        summary: String,
        evidence: Vec<String>,
        remediation: String,
    ) -> Finding {
        Finding {
            id,
            severity,
            status: FindingStatus::Failed,
            host: self.host.name.clone(),
            summary,
            evidence,
            remediation,
            playbook: catalog::rule(id).and_then(|r| r.playbook),
            wanted: Default::default(),
            about: None,
        }
    }

    fn unknown(&self, id: &'static str, why: String) -> RuleOutcome {
        self.unknown_because(
            id,
            why,
            "make the file readable to dnsfix (root via sudo -n) or fix it so it parses, then check again".into(),
        )
    }

    /// [`Ctx::unknown`] for a fact other than a file, with what to do about it.
    pub(in crate::diagnose) fn unknown_because(
        &self,
        id: &'static str,
        why: String,
        remediation: String,
    ) -> RuleOutcome {
        let severity = catalog::rule(id).map_or(Severity::Warning, |r| r.severity);
        RuleOutcome::Findings(vec![Finding {
            id,
            severity,
            status: FindingStatus::Unknown,
            host: self.host.name.clone(),
            summary: format!("cannot tell: {why}"),
            evidence: vec![why],
            remediation,
            playbook: None,
            wanted: Default::default(),
            about: None,
        }])
    }
}

/// Where the cluster's CoreDNS pods run, as kubectl listed them.
#[derive(Debug, Clone)]
pub struct CorednsPlacement {
    /// The host kubectl ran on.
    pub via: String,
    /// This node's names in the cluster ([`crate::cluster::node_names`]).
    pub names: Vec<String>,
    /// The cluster lists this node under one of them (its kubelet version was read by
    /// name): "no pod here" means that, not a name dnsfix does not know.
    pub named: bool,
    /// The cluster's nodes were read (kubectl listed some): where not, "not named" says
    /// nothing of the node's name.
    pub nodes_read: bool,
    /// The CoreDNS pods (`coredns`, `coredns-secondary`), every node's.
    pub pods: Vec<crate::cluster::DnsPod>,
}

type Rule = fn(&Ctx) -> RuleOutcome;

/// Every per-host rule, in catalog order.
pub const RULES: &[(&str, Rule)] = &[
    (KUBELET_LOOPBACK, kubelet_file::kubelet_loopback),
    (CLUSTER_SELF_FORWARD, kubelet_file::cluster_self_forward),
    (KUBELET_RESOLVCONF_MISSING, kubelet_file::resolvconf_missing),
    ("DNS-HOST-RESOLVER-DOWN", node_resolver::host_resolver_down),
    ("DNS-BRIDGE-NF-OFF", kernel::bridge_nf_off),
    (
        "DNS-BRIDGE-NF-NOT-PERSISTENT",
        kernel::bridge_nf_not_persistent,
    ),
    ("DNS-IP-FORWARD", kernel::ip_forward),
    ("DNS-NAMESERVER-LIMIT", kubelet_file::nameserver_limit),
    ("DNS-SEARCH-LIMIT", search::search_limit),
    ("DNS-STRAY-SEARCH", search::stray_search),
    (
        "DNS-NODELOCAL-CLUSTERDNS",
        kubelet_flags::nodelocal_clusterdns,
    ),
    ("DNS-KUBELET-FLAG-SHADOW", kubelet_flags::flag_shadow),
    (
        "DNS-RESOLV-MANAGED-ELSEWHERE",
        node_resolver::resolv_managed_elsewhere,
    ),
    ("DNS-K3S-FALLBACK", k3s_fallback::k3s_fallback),
    ("DNS-KUBELET-NO-CLUSTER-DNS", kubelet_flags::no_cluster_dns),
    ("DNS-CNI-CONFIG-INVALID", cni::cni_config_invalid),
    ("DNS-CNI-CONFIG-LEFTOVER", cni::cni_config_leftover),
    ("DNS-KUBELET-RESTART-DUE", restart_due::restart_due),
    (
        "DNS-FIREWALLD-PODS-UNTRUSTED",
        firewalld::firewalld_pods_untrusted,
    ),
    ("DNS-MACVLAN-NO-MASQUERADE", macvlan::macvlan_no_masquerade),
];

pub(crate) const NO_KUBELET: &str = "no kubelet configuration on this host";

/// The file kubelet hands to dnsPolicy=Default pods, parsed; or why a rule cannot use it.
pub(super) enum PodResolv<'a> {
    Parsed(&'a Effective<String>, &'a ResolvFile, &'a ResolvConf),
    NoKubelet,
    Unknown(String),
    /// The path is set but the file is not there (or is empty/has no nameserver): the
    /// MISSING rule's business, other rules pass.
    Broken,
}

pub(super) fn pod_resolv<'a>(ctx: &Ctx<'a>) -> PodResolv<'a> {
    let k = &ctx.facts.kubelet;
    match &k.resolv_conf {
        Observed::Absent => PodResolv::NoKubelet,
        Observed::Unknown(why) => PodResolv::Unknown(why.clone()),
        Observed::Known(e) => match &k.pod_resolv_conf {
            None => PodResolv::Broken,
            Some(f) => match (f.state, &f.parsed) {
                (FileState::Present, Some(p)) => PodResolv::Parsed(e, f, p),
                (FileState::Unreadable, _) => {
                    PodResolv::Unknown(format!("{} could not be read", f.path))
                }
                _ => PodResolv::Broken,
            },
        },
    }
}

/// The file kubelet hands Default pods, parsed, for rule `id`; or what the rule says
/// without it: not applicable (no kubelet), unknown, or a pass where the file is missing or
/// empty (DNS-KUBELET-RESOLVCONF-MISSING's business).
pub(super) fn parsed_pod_resolv<'a>(
    ctx: &Ctx<'a>,
    id: &'static str,
) -> Result<(&'a Effective<String>, &'a ResolvFile, &'a ResolvConf), RuleOutcome> {
    match pod_resolv(ctx) {
        PodResolv::Parsed(e, f, p) => Ok((e, f, p)),
        PodResolv::NoKubelet => Err(RuleOutcome::NotApplicable(NO_KUBELET.into())),
        PodResolv::Unknown(why) => Err(ctx.unknown(id, why)),
        PodResolv::Broken => Err(RuleOutcome::Pass),
    }
}

/// "/etc/kubernetes/kubelet-config.yaml:31 resolvConf: /etc/resolv.conf → symlink to
/// ../run/systemd/resolve/stub-resolv.conf"
pub(super) fn resolv_chain(e: &Effective<String>, f: &ResolvFile) -> String {
    let detail = e.source.detail.as_deref();
    let setting = match e.source.kind.as_str() {
        "flag" | "k3s_flag" => format!("--resolv-conf={}", e.value),
        "k3s_config" => format!("resolv-conf: {}", e.value),
        // The variable's name is the setting; it is not repeated as a detail.
        "k3s_env" => format!("{}={}", detail.unwrap_or("RESOLV_CONF"), e.value),
        "k3s_auto" => format!("chosen by k3s/RKE2: {}", e.value),
        "k0s_auto" => format!("chosen by k0s: {}", e.value),
        _ => format!("resolvConf: {}", e.value),
    };
    // k3s's and k0s's own choice is no file's setting: nothing to name before it.
    let mut s = match (&e.source.path, e.source.kind.as_str()) {
        (None, "k3s_auto" | "k0s_auto") => setting,
        _ => format!("{} {setting}", e.source.at()),
    };
    if let Some(d) = detail.filter(|_| e.source.kind != "k3s_env") {
        s.push_str(&format!(" ({d})"));
    }
    if let Some(t) = &f.symlink_target {
        s.push_str(&format!(" → symlink to {t}"));
    }
    s
}

fn ns_evidence(f: &ResolvFile, ns: &[&Nameserver]) -> String {
    let list: Vec<String> = ns
        .iter()
        .map(|n| format!("nameserver {} (line {})", n.address, n.line))
        .collect();
    format!(
        "{}: {}",
        f.canonical.as_deref().unwrap_or(&f.path),
        list.join(", ")
    )
}

/// On EKS, the line of /run/systemd/resolved.conf.d/40-eks.conf that nodeadm writes at
/// every boot from the NodeConfig's spec.instance.network (`key`: `DNS=` from its
/// `nameservers`, `Domains=` from its `domains`: amazon-eks-ami nodeadm/internal/system/
/// resolve.go, resolve.conf.tpl) where one of its words is `wanted`: the evidence line
/// that names where to change it.
pub(super) fn nodeadm_resolved(
    ctx: &Ctx,
    (key, field): (&str, &str),
    wanted: impl Fn(&str) -> bool,
) -> Option<String> {
    const PATH: &str = "/run/systemd/resolved.conf.d/40-eks.conf";
    if ctx.facts.flavour.kind != FlavourKind::Eks {
        return None;
    }
    let text = file_text(ctx.facts, PATH)?;
    text.lines().enumerate().find_map(|(i, line)| {
        let value = line.trim().strip_prefix(key)?;
        value.split_whitespace().any(&wanted).then(|| {
            format!(
                "{PATH}:{}: {} (the NodeConfig's spec.instance.network.{field}, written by nodeadm at every boot: change it there)",
                i + 1,
                line.trim()
            )
        })
    })
}

/// On a Kubespray node, the `DNS=` line of /etc/systemd/resolved.conf that names a word
/// `wanted` takes: Kubespray before v2.24 templated that file itself
/// (roles/kubernetes/preinstall/tasks/0061-systemd-resolved.yml @v2.23.3, `DNS=` the
/// nodelocaldns or CoreDNS address outside its early run); from v2.24 (#10732, c3315ac7) it
/// writes /etc/systemd/resolved.conf.d/kubespray.conf and never takes the old line out
/// (@46dbdd39 not even reset.yml deletes it), so on a cluster deployed before then no
/// inventory setting removes it. None where a drop-in resets the list with an empty `DNS=`
/// (resolved.conf(5): it drops the servers assigned before it).
pub(super) fn kubespray_legacy_resolved(
    ctx: &Ctx,
    wanted: impl Fn(&str) -> bool,
) -> Option<String> {
    use crate::facts::resolved_conf::{ETC_MAIN, ResolvedConf};
    if ctx.facts.flavour.kind != FlavourKind::Kubespray {
        return None;
    }
    let conf = ResolvedConf::read(&ctx.facts.raw);
    if !conf.dns_resets_after("").is_empty() {
        return None;
    }
    conf.of("DNS")
        .find(|s| s.path == ETC_MAIN && s.value.split_whitespace().any(&wanted))
        .map(|s| {
            format!(
                "{}: {} (written by Kubespray before v2.24, which templated this file; its later runs write /etc/systemd/resolved.conf.d/kubespray.conf and leave this line, which no inventory setting removes: delete it by hand)",
                s.location(),
                crate::text::escape(&s.text)
            )
        })
}

/// The kubelet's resolvConf comes from a command-line flag.
fn resolv_conf_from_flag(ctx: &Ctx) -> bool {
    matches!(&ctx.facts.kubelet.resolv_conf, Observed::Known(e) if e.source.kind == "flag")
}

/// Where to make the kubelet's resolvConf change last: where it is set now when that is not
/// the config file ([`resolv_conf_site`]), else where the node's installer keeps it.
fn persist_hint(ctx: &Ctx) -> String {
    resolv_conf_site(ctx).unwrap_or_else(|| installer_resolv_conf(ctx).to_owned())
}

/// Whether the resolv.conf at `path`, as gathered, would serve pods: read, with a nameserver
/// and none on loopback (which a pod's network namespace does not reach). Not where it was
/// not read.
fn serves_pods(ctx: &Ctx, path: &str) -> bool {
    crate::facts::node_facts::ResolvFile::read(&ctx.facts.raw, path)
        .parsed
        .is_some_and(|p| !p.nameservers.is_empty() && p.loopback_nameservers().is_empty())
}

/// On a Kubespray, kubeadm or hand-made kubelet, the place that sets its resolvConf where
/// that is not its config file, and which an edit of the config file (or of kubeadm's
/// kubelet-config ConfigMap, which `kubeadm upgrade` writes back into it) cannot change: a
/// `--resolv-conf` flag, which beats every config file, or a `--config-dir` drop-in, merged
/// over the config file in name order (kubernetes cmd/kubelet/app/server.go
/// `mergeKubeletConfigurations`: a JSON merge patch per file, a later key winning). The
/// facts name a drop-in only where this kubelet reads the key there (from 1.32
/// `resolvConf`, from 1.28 to 1.31 a spelling of `resolverConfig`).
fn resolv_conf_site(ctx: &Ctx) -> Option<String> {
    let kubelet = &ctx.facts.kubelet;
    if !matches!(
        ctx.facts.flavour.kind,
        FlavourKind::Kubespray | FlavourKind::Kubeadm | FlavourKind::Unknown
    ) {
        return None;
    }
    // A kubelet of unknown version, whose drop-ins give 1.28 to 1.31 one file and 1.32 on
    // another: the drop-in that decides, with both spellings, gives every version one.
    if let Some(by) = &kubelet.resolv_conf_by_version {
        return Some(format!(
            "set resolvConf and resolverConfig both in {}: the kubelet's version is not known, and in that --config-dir drop-in kubelet 1.28 to 1.31 read resolverConfig (kubernetes#126630), 1.32 and later resolvConf (#127421), so that every version reads the file",
            by.dropin
        ));
    }
    let Observed::Known(e) = &kubelet.resolv_conf else {
        return None;
    };
    let path = e.source.path.as_deref()?;
    match e.source.kind.as_str() {
        "flag" => {
            // Kubespray renders KUBELET_ARGS from the inventory at every cluster.yml run.
            let (there, it) = if path == crate::facts::node_facts::KUBESPRAY_ENV {
                (
                    " there and in the inventory's kubelet_custom_flags (from which Kubespray writes kubelet.env at every cluster.yml run)",
                    " from both",
                )
            } else {
                (" there", "")
            };
            // A unit file or drop-in is read again only after a daemon-reload.
            let reload = if in_unit_file(path) {
                ", then systemctl daemon-reload"
            } else {
                ""
            };
            // Taken out, the flag leaves the config's value, under the key that sets it (a
            // drop-in's `resolverConfig` for kubelet 1.28 to 1.31): a fix only where that
            // file serves pods ([`serves_pods`]); with none there, the kubelet's default
            // /etc/resolv.conf, no fix to offer.
            let key = kubelet.resolv_conf_key.as_deref().unwrap_or("resolvConf");
            let remove = e
                .shadowed
                .first()
                .filter(|s| serves_pods(ctx, &s.value))
                .map(|s| {
                    format!(
                        ", or remove it{it} (without it, {} {key}: {} counts)",
                        s.source.at(),
                        s.value
                    )
                })
                .unwrap_or_default();
            Some(format!(
                "--resolv-conf at {} sets it, and a flag beats the config file: change the flag{there}{remove}{reload}",
                e.source.at()
            ))
        }
        "config" if kubelet.config_dropins.iter().any(|d| d == path) => {
            let key = kubelet.resolv_conf_key.as_deref().unwrap_or("resolvConf");
            // A kubelet not known to be 1.32 or later may read the drop-in's setting only as
            // resolverConfig (1.28 to 1.31, kubernetes#126630), which later ones pass over.
            let beside = if key != "resolvConf" {
                " (the spelling kubelet 1.28 to 1.31 read in a drop-in), and resolvConf beside it for kubelet 1.32 or later"
            } else if kube_minor(ctx).is_none_or(|(m, _)| m < 32) {
                ", and resolverConfig beside it (the spelling kubelet 1.28 to 1.31 read in a drop-in; this kubelet's version is not known to be 1.32 or later)"
            } else {
                ""
            };
            Some(format!(
                "set {key} in {}{beside}: that --config-dir drop-in sets it, and it beats {}",
                e.source.at(),
                kubelet.config_path.as_deref().unwrap_or("the config file")
            ))
        }
        _ => None,
    }
}

/// Whether `path` is a systemd unit file or drop-in, which systemd reads again only after
/// `systemctl daemon-reload`.
pub(super) fn in_unit_file(path: &str) -> bool {
    crate::facts::systemd_unit::UNIT_DIRS
        .iter()
        .any(|d| path.starts_with(&format!("{d}/")))
}

/// Where the node's installer keeps the kubelet's resolvConf.
fn installer_resolv_conf(ctx: &Ctx) -> &'static str {
    match ctx.facts.flavour.kind {
        // kubelet-config.v1beta1.yaml.j2 (@46dbdd39) renders kubelet_config_extra_args after
        // `resolvConf: "{{ kube_resolv_conf }}"`: a resolvConf there comes last and wins.
        FlavourKind::Kubespray
            if ctx
                .host
                .var("kubelet_config_extra_args")
                .is_some_and(|v| v.get("resolvConf").is_some()) =>
        {
            "set resolvConf in /etc/kubernetes/kubelet-config.yaml and make Kubespray agree: resolvConf in the inventory's kubelet_config_extra_args, which Kubespray writes after the one it renders from kube_resolv_conf, so the kubelet takes it"
        }
        FlavourKind::Kubespray => {
            "set resolvConf in /etc/kubernetes/kubelet-config.yaml and make Kubespray agree: kube_resolv_conf in the inventory (on Ubuntu/Fedora Kubespray's distro vars outrank group_vars, so pass -e kube_resolv_conf=...)"
        }
        FlavourKind::Kubeadm => {
            "set resolvConf in /var/lib/kubelet/config.yaml and in ConfigMap kube-system/kubelet-config (or kubeadm upgrade reverts it)"
        }
        FlavourKind::K3s | FlavourKind::Rke2 => "set resolv-conf in /etc/rancher/*/config.yaml",
        // nodeadm writes spec.kubelet.config to a --config-dir drop-in (40-nodeadm.conf):
        // for every kubelet since amazon-eks-ami b1e7d354, from 1.29 before it; kubelets
        // before 1.32 drop a drop-in's resolvConf (kubernetes#126630). Its
        // spec.kubelet.flags come last on the kubelet's command line (environment.go):
        // the flag counts on every version, so it is the way where the version is not 1.32+.
        // A --resolv-conf in spec.kubelet.flags beats spec.kubelet.config on every version.
        // Taken out, the flag leaves such a kubelet the default /etc/resolv.conf, whatever
        // spec.kubelet.config says.
        FlavourKind::Eks
            if resolv_conf_from_flag(ctx) && kube_minor(ctx).is_none_or(|(m, _)| m < 32) =>
        {
            "nodeadm writes the kubelet's flags anew at every boot from the NodeConfig: change --resolv-conf in its spec.kubelet.flags, in the launch template's user data, or in a NodeConfig file in /etc/eks/nodeadm.d/ for this node alone (the flag is the way: spec.kubelet.config.resolvConf goes to a --config-dir drop-in, which kubelets before 1.32 do not read it from, kubernetes#126630)"
        }
        FlavourKind::Eks if resolv_conf_from_flag(ctx) => {
            "nodeadm writes the kubelet's flags anew at every boot from the NodeConfig: change --resolv-conf in its spec.kubelet.flags, or take it out (the flag beats spec.kubelet.config.resolvConf), in the launch template's user data, or in a NodeConfig file in /etc/eks/nodeadm.d/ for this node alone"
        }
        FlavourKind::Eks if kube_minor(ctx).is_none_or(|(m, _)| m < 32) => {
            "nodeadm rewrites /etc/kubernetes/kubelet/config.json at every boot: add --resolv-conf to spec.kubelet.flags in the NodeConfig (the launch template's user data, or a NodeConfig file in /etc/eks/nodeadm.d/ for this node alone); spec.kubelet.config.resolvConf goes to a --config-dir drop-in, which kubelets before 1.32 do not read it from (kubernetes#126630)"
        }
        FlavourKind::Eks => {
            "nodeadm rewrites /etc/kubernetes/kubelet/config.json at every boot: set spec.kubelet.config.resolvConf in the NodeConfig (the launch template's user data, or a NodeConfig file in /etc/eks/nodeadm.d/ for this node alone)"
        }
        FlavourKind::K0s => {
            "k0s rewrites the kubelet config at every k0s start: pass --resolv-conf in the k0s service's --kubelet-extra-args (this node), or, from k0s 1.33.1 (earlier ones overwrite it), set resolvConf in the worker profile (spec.workerProfiles in k0s.yaml, or the ClusterConfig with dynamic config: every node of that profile)"
        }
        FlavourKind::MicroK8s => {
            "set --resolv-conf in /var/snap/microk8s/current/args/kubelet (kept across snap refreshes; microk8s join replaces the file with the control plane's, microk8s leave with the snap's default)"
        }
        FlavourKind::Unknown => "set resolvConf in the kubelet configuration",
    }
}

/// How a NodeConfig change reaches an EKS node: nodeadm writes the kubelet's config only
/// at boot (nodeadm-config.service, `nodeadm init` from the instance's user data, which a
/// reboot keeps; nodeadm-run.service merges /etc/eks/nodeadm.d/ on AMIs that pass it).
pub(super) const EKS_APPLY: &str = "replace the node (nodeadm writes the kubelet's config only at boot, from the user data the instance keeps: a kubelet restart or a reboot changes nothing), or, with a NodeConfig file in /etc/eks/nodeadm.d/, reboot it";

/// [`EKS_APPLY`] for a kubelet flag of the NodeConfig's spec.kubelet.flags: a NodeConfig
/// file in /etc/eks/nodeadm.d/ can change a flag only where it sets it itself, as nodeadm
/// appends its flags to the user data's (nodeadm internal/api/merge.go `mergeKubeletFlags`),
/// and --cluster-dns values add up.
pub(super) const EKS_FLAG_APPLY: &str = "where the user data sets it, change it there and replace the node (nodeadm writes the kubelet's flags only at boot, from the user data the instance keeps; a NodeConfig file in /etc/eks/nodeadm.d/ cannot take out a flag of the user data's: nodeadm appends its flags after them, and --cluster-dns values add up); where a file in /etc/eks/nodeadm.d/ sets it, change that file and reboot the node";

/// How the kubelet is restarted to read a new setting: k0s supervises its own; k3s and
/// RKE2 run it inside their service, which reads its config files when it starts; on EKS
/// nodeadm writes its settings only at boot.
fn restart_hint(ctx: &Ctx) -> String {
    match ctx.facts.flavour.kind {
        FlavourKind::K0s => "restart k0s on the node (k0s stop; k0s start)".into(),
        FlavourKind::MicroK8s => {
            "restart kubelite, and with it the node's whole Kubernetes (snap restart microk8s.daemon-kubelite)".into()
        }
        FlavourKind::K3s if ctx.facts.services.kubelet_unit != "kubelet" => format!(
            "restart {} (systemctl restart {0}: the kubelet runs inside it)",
            ctx.facts.services.kubelet_unit
        ),
        FlavourKind::Rke2 if ctx.facts.services.kubelet_unit != "kubelet" => format!(
            "restart {} (systemctl restart {0}, which restarts the kubelet it runs)",
            ctx.facts.services.kubelet_unit
        ),
        FlavourKind::K3s => "restart k3s (or k3s-agent: the kubelet runs inside it)".into(),
        FlavourKind::Rke2 => {
            "restart rke2-server (or rke2-agent, which restarts the kubelet it runs)".into()
        }
        FlavourKind::Eks => EKS_APPLY.into(),
        _ => "restart kubelet".into(),
    }
}

fn dual_stack(ctx: &Ctx) -> bool {
    ["enable_dual_stack_networks", "ipv6_stack"]
        .iter()
        .any(|k| ctx.host.var_bool(k) == Some(true))
}

/// Bridge netfilter and forwarding are Kubernetes node requirements: on a machine with no
/// kubelet at all they are nobody's business.
fn not_a_node(ctx: &Ctx) -> bool {
    matches!(ctx.facts.kubelet.resolv_conf, Observed::Absent)
        && ctx.facts.flavour.kind == FlavourKind::Unknown
        && ctx.facts.kubelet.pid.is_none()
}

/// Why CoreDNS and nodelocaldns do not forward `.` to the resolv.conf kubelet hands them,
/// where they do not: the Corefiles read from the cluster say so, or, where none was read,
/// the inventory sets `upstream_dns_servers`, which Kubespray renders as their `forward .`
/// (coredns-config.yml.j2; nodelocaldns's upstreamForwardTarget). `None`: they forward to it.
pub(super) fn forwards_elsewhere(ctx: &Ctx, read: Option<bool>) -> Option<String> {
    forwards_elsewhere_than(ctx, read, "this file")
}

/// [`forwards_elsewhere`], naming the kubelet's file as `file`.
pub(super) fn forwards_elsewhere_than(ctx: &Ctx, read: Option<bool>, file: &str) -> Option<String> {
    match read {
        Some(true) => None,
        Some(false) => Some(format!(
            "the cluster's Corefiles forward . elsewhere than {file} (their lines follow)"
        )),
        // Kubespray renders upstream_dns_servers into the CoreDNS it deploys, and into
        // nodelocaldns where it deploys that: a CoreDNS it does not deploy (dns_mode
        // manual or none, deploy_coredns false) may forward anywhere.
        None if kubespray_deploys_coredns(ctx.host) => {
            let upstreams = upstream_dns_servers(ctx);
            (!upstreams.is_empty()).then(|| {
                format!(
                    "upstream_dns_servers: {}: {} forward there, not to {file} (the Corefiles were not read)",
                    upstreams.join(", "),
                    if ctx.host.var_truthy("enable_nodelocaldns") == Some(false) {
                        "CoreDNS (as Kubespray deploys it) does"
                    } else {
                        "CoreDNS and nodelocaldns (as Kubespray deploys them)"
                    }
                )
            })
        }
        None => None,
    }
}

/// Where CoreDNS's `forward .` is changed on a cluster Kubespray does not render it for,
/// so that the change lasts: its owner's knob, not the ConfigMap where an owner writes it
/// back.
/// - RKE2: the rke2-coredns chart's `servers` value (its `forward` plugin), through a
///   HelmChartConfig `rke2-coredns` in kube-system, which RKE2's helm controller passes to
///   the chart (rancher/rke2-docs docs/add-ons/helm.md at 9477b7b1, "Customizing Packaged
///   Components with HelmChartConfig"; the chart's values: rancher/rke2-charts
///   packages/rke2-coredns at 262e21a4 over coredns/helm charts/coredns).
/// - A Helm release (the ConfigMap's `meta.helm.sh/release-name`): the CoreDNS Helm chart's
///   `servers` value (coredns/helm charts/coredns values.yaml at caac0316, rendered into
///   the Corefile by templates/configmap.yaml), asked of the release's namespace (its
///   `meta.helm.sh/release-namespace`), which need not be kube-system: `helm get values`
///   and `helm upgrade` without `-n` look in the kubeconfig's namespace.
/// - Either way the whole `servers` list: Helm merges maps of values but replaces a list
///   whole (helm/helm#3486, where its maintainers keep it so), so a values file whose
///   `servers` holds only a forward entry renders a Corefile without kubernetes, cache or
///   loop: cluster DNS gone.
/// - k3s writes its packaged ConfigMap `coredns` anew at every server start (k3s-io/k3s
///   #4397, which added `coredns-custom` for that reason), and its Corefile forwards to
///   /etc/resolv.conf, the file the kubelet hands CoreDNS: the node's `resolv-conf`; or,
///   since k3s imports `coredns-custom`'s `*.override` before its `forward .` (k3s#12979),
///   a `forward .` there.
/// - Otherwise (kubeadm, a hand-made CoreDNS) the ConfigMap itself.
pub(crate) fn coredns_forward_knob(ctx: &Ctx) -> String {
    let configmap = ctx.coredns_configmap.as_ref();
    let release = configmap.and_then(|(_, r)| r.as_deref());
    let name = configmap.map_or("coredns", |(n, _)| n.as_str());
    if release == Some("rke2-coredns")
        || name == crate::cluster::RKE2_COREDNS
        || (configmap.is_none() && ctx.facts.flavour.kind == FlavourKind::Rke2)
    {
        return format!(
            "copy the rke2-coredns chart's whole `servers` list (helm get values --all rke2-coredns -n kube-system -o yaml) into a HelmChartConfig named rke2-coredns in kube-system (valuesContent; a file in /var/lib/rancher/rke2/server/manifests) and change only the `forward` entry's parameters there: Helm replaces a list value whole, so a `servers` with the forward entry alone drops kubernetes, cache and loop from the Corefile; the chart owns ConfigMap kube-system/{}, and its next deploy undoes an edit there",
            crate::cluster::RKE2_COREDNS
        );
    }
    let (namespace, release_namespace) = ctx
        .coredns_namespaces
        .as_ref()
        .map_or(("kube-system", "kube-system"), |(c, r)| {
            (c.as_str(), r.as_str())
        });
    if let Some(release) = release {
        let upgrade = crate::cluster::helm_upgrade(
            release,
            ctx.coredns_helm_chart.as_deref(),
            release_namespace,
            "values.yaml",
        );
        return format!(
            "copy the whole `servers` list of Helm release {release} (helm get values --all {release} -n {release_namespace} -o yaml > values.yaml), change only the `forward` entry's parameters there, and {upgrade}: Helm replaces a list value whole, so a `servers` with the forward entry alone drops kubernetes, cache and loop from the Corefile; the release owns ConfigMap {namespace}/{name}, and its next upgrade undoes an edit there"
        );
    }
    if ctx.facts.flavour.kind != FlavourKind::K3s
        && let Some(owner) = &ctx.coredns_owner
    {
        return format!(
            "set `forward .` where {owner} takes ConfigMap {namespace}/{name} from: it owns that ConfigMap and writes it back over an edit there"
        );
    }
    if ctx.facts.flavour.kind == FlavourKind::K3s && name == "coredns" {
        return "give k3s a resolv-conf of real servers (resolv-conf: in /etc/rancher/k3s/config.yaml): its Corefile forwards . to that file, and k3s writes ConfigMap kube-system/coredns anew at every start, undoing an edit there; where the Corefile imports coredns-custom's `.override` files before its `forward .` (k3s since the fix of k3s-io/k3s#12979), a `forward .` in one of them (a key NAME.override of ConfigMap kube-system/coredns-custom) comes first".to_owned();
    }
    format!(
        "set `forward .` in the `.:53` block of ConfigMap {namespace}/{name} to real servers (kubectl -n {namespace} edit configmap {name})"
    )
}

/// CoreDNS is not one Kubespray renders from the inventory: the node is another
/// installer's (kubeadm, k3s, RKE2, EKS, k0s, MicroK8s), or another owner (a Helm release,
/// k3s's deploy controller, the addon manager) writes CoreDNS's ConfigMap. A node whose
/// installer is not known keeps Kubespray's advice.
pub(crate) fn coredns_not_kubesprays(ctx: &Ctx) -> bool {
    let owned = ctx.coredns_owner.is_some()
        || ctx
            .coredns_configmap
            .as_ref()
            .is_some_and(|(_, release)| release.is_some());
    owned
        || !matches!(
            ctx.facts.flavour.kind,
            FlavourKind::Kubespray | FlavourKind::Unknown
        )
}

/// Kubespray deploys CoreDNS, with the Corefile it renders from the inventory
/// (roles/kubernetes-apps/ansible/tasks/main.yml @46dbdd39): dns_mode coredns (its
/// default) or coredns_dual, and deploy_coredns not false.
pub(crate) fn kubespray_deploys_coredns(host: &Host) -> bool {
    let dns_mode = host.var_str("dns_mode").unwrap_or("coredns");
    ["coredns", "coredns_dual"].contains(&dns_mode)
        && host.var_truthy("deploy_coredns") != Some(false)
}

/// Kubespray's next run makes systemd-resolved's uplink file loop: its last play (cluster.yml,
/// scale.yml, upgrade-cluster.yml) runs kubernetes/preinstall with dns_late, whose
/// 0061-systemd-resolved.yml writes resolved.conf.j2's `DNS=` nodelocaldns_ip (or the
/// CoreDNS address) into /etc/systemd/resolved.conf.d/kubespray.conf (@46dbdd39), and with
/// no upstream_dns_servers CoreDNS and nodelocaldns forward to the file the kubelet hands
/// them. Its earlier plays write the same drop-in without that line, so where it is there
/// (Kubespray v2.24 or later manages systemd-resolved on the node: the file with the
/// `FallbackDNS=` line its template always renders) a clean uplink file is one a run left
/// before its last play: clean only until the next complete one. Also needs
/// resolvconf_mode host_resolvconf and dns_mode other than none (their defaults; a value
/// dnsfix cannot read may be either).
///
/// Not where the drop-in has its `DNS=` already (a complete run wrote it, and something
/// else keeps the uplink file clean, which the next run changes nothing of): a later
/// drop-in whose empty `DNS=` resets the list (systemd's config parser: an empty
/// assignment clears what came before, drop-ins merged in name order across /etc and
/// /run) keeps it clean after the next run too. Nor where the inventory sets any
/// upstream_dns_servers, a template among them (Kubespray forwards to what Ansible
/// renders, not to the kubelet's file). Nor where Kubespray deploys neither CoreDNS nor
/// nodelocaldns (dns_mode manual or none, deploy_coredns false, and no nodelocaldns):
/// nothing of its own forwards to that file.
pub(crate) fn kubespray_resolved_will_loop(host: &Host, facts: &NodeFacts) -> bool {
    const NAME: &str = "kubespray.conf";
    let path = format!("/etc/systemd/resolved.conf.d/{NAME}");
    let conf = crate::facts::resolved_conf::ResolvedConf::read(&facts.raw);
    let ours: Vec<_> = conf.settings.iter().filter(|s| s.path == path).collect();
    facts.flavour.kind == FlavourKind::Kubespray
        && facts.services.systemd_resolved == UnitState::Active
        && ours.iter().any(|s| s.key == "FallbackDNS")
        && !ours.iter().any(|s| s.key == "DNS" && !s.value.is_empty())
        && conf.dns_resets_after(NAME).is_empty()
        && host
            .var_or_default("resolvconf_mode", Some("host_resolvconf"))
            .is_none_or(|m| m == "host_resolvconf")
        && host
            .var_or_default("dns_mode", Some("coredns"))
            .is_none_or(|m| m != "none")
        && host
            .var_list("upstream_dns_servers")
            .unwrap_or_default()
            .is_empty()
        // Something forwards to the kubelet's file: the CoreDNS or nodelocaldns Kubespray
        // deploys (coredns-config.yml.j2, nodelocaldns-config.yml.j2).
        && (kubespray_deploys_coredns(host) || host.var_truthy("enable_nodelocaldns") != Some(false))
}

/// The first of the inventory's `upstream_dns_servers` that is a template dnsfix does not
/// render (`"{{ corp_dns }}"`): Kubespray forwards to what Ansible makes of it.
pub(super) fn unrendered_upstream_dns_server(ctx: &Ctx) -> Option<String> {
    ctx.host
        .var_list("upstream_dns_servers")
        .unwrap_or_default()
        .into_iter()
        .find(|s| crate::inventory::is_template(s))
}

/// The inventory's `upstream_dns_servers` (Kubespray), unrendered templates left out.
pub(super) fn upstream_dns_servers(ctx: &Ctx) -> Vec<String> {
    ctx.host
        .var_list("upstream_dns_servers")
        .unwrap_or_default()
        .into_iter()
        .filter(|s| !crate::inventory::is_template(s))
        .collect()
}

/// The kubelet's version, with where it came from: what `kubelet --version` said on the
/// node (`dnsfix facts` and apply ask it; plan and check where the cluster gave none and it
/// matters: [`kubelet_version_wanted`]), else the version the running kubelet reports to
/// the cluster, else the inventory's `kube_version`. The first that names a Kubernetes 1.x
/// minor wins.
pub fn kubelet_version(ctx: &Ctx) -> Option<(String, String)> {
    let cluster = ctx.kubelet_version.as_ref().map(|(v, node)| {
        (
            v.as_str(),
            format!("node {node}'s status.nodeInfo.kubeletVersion"),
        )
    });
    [
        ctx.facts
            .kubelet
            .version
            .as_deref()
            .map(|v| (v, "kubelet --version".to_owned())),
        cluster,
        ctx.host
            .var_str("kube_version")
            .map(|v| (v, "inventory kube_version".to_owned())),
    ]
    .into_iter()
    .flatten()
    .find(|(v, _)| version_minor(v).is_some())
    .map(|(v, from)| (v.to_owned(), from))
}

/// `facts` read again with the kubelet version the rules know ([`kubelet_version`]: the
/// cluster's node status or the inventory's kube_version) where `kubelet --version` gave
/// none and the version decides which spelling of a drop-in's resolvConf the kubelet reads
/// ([`crate::facts::kubelet::dropin_version_matters`]); `None` where nothing changes.
pub fn with_known_version(
    host: &Host,
    facts: &NodeFacts,
    cluster: Option<&crate::cluster::Cluster>,
) -> Option<NodeFacts> {
    if facts
        .raw
        .commands
        .contains_key(crate::facts::kubelet::KNOWN_VERSION)
        || !crate::facts::kubelet::dropin_version_matters(facts)
    {
        return None;
    }
    let (version, _) = kubelet_version(&Ctx::in_cluster(host, facts, cluster))?;
    Some(facts.with_kubelet_version(&version))
}

/// The kubelet's Kubernetes minor version ([`kubelet_version`]), with where it came from
/// and what it said (`kubelet --version: v1.29.3`).
fn kube_minor(ctx: &Ctx) -> Option<(u32, String)> {
    let (v, from) = kubelet_version(ctx)?;
    Some((version_minor(&v)?, format!("{from}: {v}")))
}

/// Whether the kubelet's version, unknown for this host (the node was not asked, the
/// cluster has none for it, or has it while the node's facts need their own), would change
/// what dnsfix says about it: then it is worth asking the node's kubelet (or k3s) binary
/// after all. The facts need it where k3s/RKE2 chose the kubelet's resolv.conf and GCP's
/// metadata server is the decider, which only some k3s versions take
/// ([`crate::facts::kubelet::K3S_VERSION_UNKNOWN`]), and where a kubelet config drop-in sets
/// resolvConf ([`crate::facts::kubelet::dropin_version_matters`]), and where a CNI file
/// containerd cannot load sorts first and no runtime endpoint is set (the kubelet's default
/// runtime changed with 1.24 and 1.27).
pub fn kubelet_version_wanted(
    host: &Host,
    facts: &NodeFacts,
    cluster: &crate::cluster::Cluster,
) -> bool {
    if facts.kubelet.version.is_some() {
        return false;
    }
    if let Observed::Unknown(why) = &facts.kubelet.resolv_conf
        && why.contains(crate::facts::kubelet::K3S_VERSION_UNKNOWN)
    {
        return true;
    }
    if crate::facts::kubelet::dropin_version_matters(facts) {
        return true;
    }
    let mut ctx = Ctx::in_cluster(host, facts, Some(cluster));
    if ctx.kubelet_version.is_some() {
        return false;
    }
    let mut with = |version: &str| {
        ctx.kubelet_version = Some((version.to_owned(), host.name.clone()));
        // DNS-CNI-CONFIG-INVALID by what it concludes (its texts name the version).
        let cni = match cni::cni_config_invalid(&ctx) {
            RuleOutcome::Findings(f) => f.iter().map(|f| (f.severity, f.status)).collect(),
            _ => Vec::new(),
        };
        (search::search_limit(&ctx), cni)
    };
    let (v25, v26) = (with("v1.25.0"), with("v1.26.0"));
    v25.0 != v26.0
        || [with("v1.23.0").1, v26.1, with("v1.30.0").1]
            .windows(2)
            .any(|w| w[0] != w[1])
}

/// Whether the Corefiles of CoreDNS (those its listed pods load through `-conf`; where
/// none was listed any ConfigMap's but NodeLocal DNSCache's: `coredns`, RKE2's) or, with `node_local`, of NodeLocal
/// DNSCache (nodelocaldns or node-local-dns) forward `.` to the pod's
/// resolv.conf: `Some(true)` where a root block forwards to /etc/resolv.conf or to node-cache's
/// `__PILLAR__UPSTREAM__SERVERS__`, which it fills from /etc/resolv.conf unless kube-dns's
/// ConfigMap names upstreamNameservers (cmd/node-cache updateCorefile); `Some(false)` where
/// every one has a root block that forwards to servers only; `None` where none was read, or
/// one's root block forwards nowhere this can see (`proxy`, a file it imports, a Corefile
/// dnsfix could not read, a file other than /etc/resolv.conf, mounted into the pod).
pub(crate) fn corefile_forwards(
    config: &crate::cluster::DnsConfig,
    node_local: bool,
) -> Option<bool> {
    // Only the Corefiles CoreDNS's pods load ([`crate::cluster::Corefile::is_corednss`]);
    // one a pod loads that was not read leaves the answer open.
    let unread = (!node_local && config.coredns_unread.is_some()).then_some(None);
    let forwards: Vec<Option<bool>> = config
        .corefiles
        .iter()
        .filter(|c| {
            if node_local {
                c.is_node_local()
            } else {
                c.is_corednss()
            }
        })
        .map(|c| {
            let crate::cluster::corefile::RootForward::Forward(_, forward) = c.root_forward()
            else {
                return None;
            };
            let to_file = forward.to_resolv_conf()
                || (config.kube_dns_upstreams.is_empty()
                    && forward
                        .to
                        .iter()
                        .any(|t| t == "__PILLAR__UPSTREAM__SERVERS__"));
            // Another file (one mounted into the pod) may list anything.
            (to_file || !forward.to_other_file()).then_some(to_file)
        })
        .chain(unread)
        .collect();
    if forwards.contains(&Some(true)) {
        return Some(true);
    }
    (!forwards.is_empty() && forwards.iter().all(|f| *f == Some(false))).then_some(false)
}

/// Whether kube-proxy runs in IPVS mode, and what says so: the cluster's kube-proxy
/// ConfigMap when it was read, else the inventory's `kube_proxy_mode` (Kubespray's default
/// is ipvs). No ConfigMap means no kube-proxy only where it runs from one: k3s, RKE2 and
/// MicroK8s run it from their own arguments (in-process, a static pod), and k0s from its
/// own manifests. `None` where nothing says the mode: callers that need it known (rather
/// than taking iptables for want of knowing) can tell.
fn kube_proxy_ipvs(ctx: &Ctx) -> (Option<bool>, String) {
    let from_configmap = !matches!(
        ctx.facts.flavour.kind,
        FlavourKind::K3s | FlavourKind::Rke2 | FlavourKind::MicroK8s | FlavourKind::K0s
    );
    if ctx.kube_proxy_absent && from_configmap {
        return (
            Some(false),
            "no kube-proxy ConfigMap in kube-system (kube-proxy, or EKS's kube-proxy-config): kube-proxy is not deployed".to_owned(),
        );
    }
    if ctx.host.var_bool("kube_proxy_remove") == Some(true) {
        return (Some(false), "kube_proxy_remove: true".to_owned());
    }
    match &ctx.kube_proxy_mode {
        Some((m, from)) => (
            Some(m == "ipvs"),
            format!(
                "ConfigMap kube-system/{from} mode: {}",
                if m.is_empty() { "\"\" (iptables)" } else { m }
            ),
        ),
        None => match ctx.host.var_str("kube_proxy_mode") {
            Some(m) => (Some(m == "ipvs"), format!("kube_proxy_mode: {m}")),
            None if ctx.facts.flavour.kind == FlavourKind::Kubespray => {
                (Some(true), "kube_proxy_mode: ipvs (Kubespray default)".to_owned())
            }
            None => (
                None,
                "kube-proxy's mode not known (its ConfigMap not read, no kube_proxy_mode in the inventory)".to_owned(),
            ),
        },
    }
}

fn dns_domain(ctx: &Ctx) -> String {
    match &ctx.facts.kubelet.cluster_domain {
        Observed::Known(e) if !e.value.trim_end_matches('.').is_empty() => {
            e.value.trim_end_matches('.').to_owned()
        }
        _ => declared_domain(ctx).unwrap_or("cluster.local").to_owned(),
    }
}

/// The inventory's dns_domain, where it names one: the cluster's domain for sure
/// (cluster.local, the usual one, is a guess).
pub(super) fn declared_domain<'a>(ctx: &Ctx<'a>) -> Option<&'a str> {
    inventory_domain(ctx.host, ctx.facts.flavour.kind == FlavourKind::Kubespray)
}

/// The cluster domain the inventory declares: `dns_domain`, and on a Kubespray node
/// (`kubespray`) its default, `"{{ cluster_name }}"` (kubespray_defaults @46dbdd39), where
/// only cluster_name is set. A template dnsfix cannot render names none.
pub(crate) fn inventory_domain(host: &Host, kubespray: bool) -> Option<&str> {
    match host.var("dns_domain") {
        Some(_) => host.var_set("dns_domain"),
        None if kubespray => host.var_set("cluster_name"),
        None => None,
    }
}

pub(super) fn file_text<'f>(facts: &'f NodeFacts, path: &str) -> Option<std::borrow::Cow<'f, str>> {
    facts.files.get(path).and_then(|f| f.text())
}

/// An active NetworkManager writes /etc/resolv.conf, itself or through resolvconf or
/// netconfig, in the mode its configuration and the file as it is now give
/// ([`NmDns`](crate::facts::network_manager::NmDns)): not with dns=none or
/// rc-manager=unmanaged, and not where it hands DNS to systemd-resolved (dns=systemd-resolved,
/// as Ubuntu's /usr/lib/NetworkManager/conf.d/10-dns-resolved.conf sets it, or dns unset
/// while /etc/resolv.conf links to systemd-resolved's files) with rc-manager auto, its
/// default since 1.28 (nm-dns-manager.c `init_resolv_conf_mode`); nor where the file is
/// immutable or append-only (`chattr +i`: [`resolv_conf_locked`]), which it never replaces.
///
/// [`resolv_conf_locked`]: crate::facts::network_manager::resolv_conf_locked
pub(crate) fn network_manager_manages_resolv(facts: &NodeFacts) -> Option<String> {
    (facts.services.network_manager == UnitState::Active && network_manager_writes(facts)).then(
        || {
            format!(
                "NetworkManager is active and manages /etc/resolv.conf (no dns=none or rc-manager=unmanaged){}",
                network_manager_version_note(facts)
            )
        },
    )
}

/// NetworkManager writes /etc/resolv.conf ([`network_manager_writes`]) while it hands DNS
/// to systemd-resolved, so what it writes is that service's stub, `nameserver 127.0.0.53`
/// (rc-manager symlink or file, and the default symlink before 1.28: nm-dns-manager.c
/// `update_dns` @1.22.0 puts a caching plugin's local address in place of the servers).
pub(crate) fn network_manager_writes_resolved_stub(facts: &NodeFacts) -> bool {
    use crate::facts::network_manager::{DnsMode, NmDns, links_to_resolved};
    let nm = NmDns::read(&facts.files);
    nm.mode(links_to_resolved(&facts.resolver.etc_resolv_conf)) == DnsMode::SystemdResolved
        && network_manager_writes(facts)
}

/// Where NetworkManager is older than 1.28 and its `rc-manager` is its build's default:
/// what that default is then, as a note for the evidence ("" elsewhere).
fn network_manager_version_note(facts: &NodeFacts) -> String {
    use crate::facts::network_manager::{NmDns, RcManager};
    let nm = NmDns::read(&facts.files);
    match (
        &nm.version,
        nm.default_rc_manager()
            .filter(|_| nm.rc_manager_defaulted()),
    ) {
        (Some(version), Some((default, why))) => format!(
            "; NetworkManager {} is {why}, where an unset rc-manager is {}, not auto: it writes a regular /etc/resolv.conf in every dns mode",
            crate::text::escape(version),
            match default {
                RcManager::File => "file",
                _ => "symlink",
            }
        ),
        _ => String::new(),
    }
}

/// NetworkManager does not run now (inactive or failed) but starts at boot (its unit is
/// enabled, [`Services::network_manager_starts_at_boot`]), and then writes /etc/resolv.conf
/// as [`network_manager_manages_resolv`] tells it for a running one: an edit of the file
/// lasts until the next boot. (A `systemctl stop NetworkManager` to keep it off the file
/// leaves it enabled.)
///
/// [`Services::network_manager_starts_at_boot`]: crate::facts::node_facts::Services::network_manager_starts_at_boot
pub(crate) fn network_manager_manages_resolv_at_boot(facts: &NodeFacts) -> Option<String> {
    let services = &facts.services;
    let stopped = matches!(
        services.network_manager,
        UnitState::Inactive | UnitState::Failed
    );
    (stopped && services.network_manager_starts_at_boot() == Some(true) && network_manager_writes(facts))
        .then(|| {
            format!(
                "NetworkManager is {} (systemctl is-active) but enabled ({}): it starts at the next boot and manages /etc/resolv.conf then (no dns=none or rc-manager=unmanaged){}",
                services.network_manager.as_str(),
                crate::facts::raw::NM_UNIT_LINKS[0],
                network_manager_version_note(facts)
            )
        })
}

/// NetworkManager's configuration has it write /etc/resolv.conf as the file is now (see
/// [`network_manager_manages_resolv`]), and the file is not locked against it.
fn network_manager_writes(facts: &NodeFacts) -> bool {
    use crate::facts::network_manager::{NmDns, links_to_resolved, resolv_conf_locked};
    if resolv_conf_locked(&facts.raw).is_some() {
        return false;
    }
    let nm = NmDns::read(&facts.files);
    let mode = nm.mode(links_to_resolved(&facts.resolver.etc_resolv_conf));
    nm.writes_resolv_conf(mode)
}

/// The cluster's own DNS addresses as this host knows them: its clusterDNS, the addresses
/// of its nodelocaldns interface, NodeLocal DNSCache's and the CoreDNS Service's as the
/// inventory gives them, and, where the `cluster` was read, the ClusterIPs of its DNS
/// Services ([`GET_DNS_SERVICES`](crate::cluster::GET_DNS_SERVICES)): with a node-local
/// cache in IPVS mode clusterDNS is the cache's link-local address alone, and off Kubespray
/// the inventory names no Service address, while a resolv.conf that lists the Service's
/// still forwards back into the cluster. The rules ([`Ctx`]) and the playbooks' context
/// take the same set.
pub fn cluster_addresses(
    host: &Host,
    facts: &NodeFacts,
    cluster: Option<&crate::cluster::Cluster>,
) -> BTreeSet<IpAddr> {
    let mut set = BTreeSet::new();
    if let Some(crate::cluster::Cluster::Read { config, .. }) = cluster {
        set.extend(
            config
                .services
                .iter()
                .flatten()
                .flat_map(|s| &s.cluster_ips)
                .filter_map(|ip| ip.parse::<IpAddr>().ok()),
        );
    }
    if let Observed::Known(e) = &facts.kubelet.cluster_dns {
        set.extend(e.value.iter().filter_map(|a| a.parse::<IpAddr>().ok()));
    }
    if let Some(addrs) = &facts.nodelocaldns {
        set.extend(
            addrs
                .iter()
                .filter_map(|a| a.parse::<IpAddr>().ok())
                .filter(|ip| !matches!(ip, IpAddr::V6(v) if (v.segments()[0] & 0xffc0) == 0xfe80)),
        );
    }
    if host.var_truthy("enable_nodelocaldns") != Some(false) {
        let ip = host.var_str("nodelocaldns_ip").unwrap_or("169.254.25.10");
        if let Ok(ip) = ip.parse() {
            set.insert(ip);
        }
    }
    if let Some(ip) = host.var_str("coredns_server").and_then(|v| v.parse().ok()) {
        set.insert(ip);
    }
    let kubespray = facts.flavour.kind == FlavourKind::Kubespray;
    if let Some(ip) = kubespray_dns_server(host, kubespray) {
        set.insert(ip);
    }
    set
}

/// Kubespray's skydns_server: the inventory's where it is an address; its default (unset,
/// or the sample inventory's copy of the default's expression, `... | ipaddr(3) ...`,
/// which is no address until Ansible renders it), the third address of the first service
/// range; any other template or value, not known here.
pub(crate) fn kubespray_dns_server(host: &Host, kubespray: bool) -> Option<IpAddr> {
    kubespray_service_address(host, kubespray, "skydns_server", 3)
}

/// Kubespray's skydns_server_secondary, the second CoreDNS Service's address with dns_mode
/// coredns_dual, as [`kubespray_dns_server`] reads skydns_server: its default (and the
/// sample's copy of it, `... | ipaddr(4) ...`) is the fourth address of the service range.
pub(crate) fn kubespray_secondary_dns_server(host: &Host, kubespray: bool) -> Option<IpAddr> {
    kubespray_service_address(host, kubespray, "skydns_server_secondary", 4)
}

/// `key` as Kubespray renders it, where its default is the `nth` address of the service
/// range: the inventory's address, else that default where `key` is unset or written as
/// the default's own expression; `None` for any other template or value.
fn kubespray_service_address(host: &Host, kubespray: bool, key: &str, nth: u32) -> Option<IpAddr> {
    match host.var_str(key).map(str::trim) {
        Some(v) if v.parse::<IpAddr>().is_ok() => v.parse().ok(),
        Some(v) if !is_kubespray_service_address_default(v, nth) => None,
        _ => nth_address(kubespray_service_range(host, kubespray)?, nth),
    }
}

/// skydns_server as Kubespray's defaults and sample inventory write it (@46dbdd39:
/// `{{ kube_service_subnets.split(',') | first | ansible.utils.ipaddr('net') |
/// ansible.utils.ipaddr(3) | ansible.utils.ipaddr('address') }}`; older ones from
/// kube_service_addresses): the third address of the service range.
pub(crate) fn is_kubespray_dns_default(value: &str) -> bool {
    is_kubespray_service_address_default(value, 3)
}

/// A value written as Kubespray's expression for the `nth` address of the service range
/// (skydns_server's `ipaddr(3)`, skydns_server_secondary's `ipaddr(4)`).
fn is_kubespray_service_address_default(value: &str, nth: u32) -> bool {
    value.contains("{{")
        && value.contains(&format!("ipaddr({nth})"))
        && (value.contains("kube_service_subnets") || value.contains("kube_service_addresses"))
}

/// The service range Kubespray takes its DNS addresses from (@46dbdd39: skydns_server is
/// the third address of `kube_service_subnets.split(',') | first`, and kube_service_subnets
/// starts with kube_service_addresses unless `ipv4_stack: false`, an IPv6-only cluster,
/// where it is kube_service_addresses_ipv6). Its defaults where `kubespray` (a Kubespray
/// node), else only what the inventory sets.
pub(crate) fn kubespray_service_range(host: &Host, kubespray: bool) -> Option<&str> {
    // kube_service_subnets tests ipv4_stack bare (`{%- if ipv4_stack and ipv6_stack -%}`).
    // A range written as a template is what Ansible renders, not the default: not known.
    if host.var_truthy("ipv4_stack") == Some(false) {
        host.var_or_default(
            "kube_service_addresses_ipv6",
            kubespray.then_some("fd85:ee78:d8a6:8607::1000/116"),
        )
    } else {
        host.var_or_default(
            "kube_service_addresses",
            kubespray.then_some("10.233.0.0/18"),
        )
    }
}
