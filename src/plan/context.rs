//! What playbook expressions and templates see for one host (docs/playbooks.md lists it):
//! the inventory vars, the facts, the findings, and a few values derived from them so that
//! playbooks stay declarative (`upstreams`, `resolved_uplink_clean`, `flag_sites`, ...).

use std::collections::BTreeSet;
use std::net::IpAddr;

use serde_json::{Value, json};

use crate::diagnose::rules::{
    self, cluster_addresses, kubelet_own_servers, nameservers, network_manager_manages_resolv,
};
use crate::diagnose::{Finding, FindingStatus};
use crate::facts::NodeFacts;
use crate::facts::cni::PodBridge;
use crate::facts::node_facts::{Effective, FlavourKind, Observed, ResolvFile, UnitState};
use crate::facts::resolv_conf::{is_loopback, server_address};
use crate::inventory::Host;

/// Flags whose value decides what pods resolve through.
const DNS_FLAGS: [&str; 3] = ["resolv-conf", "cluster-dns", "cluster-domain"];

/// The ids of the findings that failed (not those unknown).
fn failing_ids(findings: &[Finding]) -> Vec<&'static str> {
    findings
        .iter()
        .filter(|f| f.status == FindingStatus::Failed)
        .map(|f| f.id)
        .collect()
}

/// The context for `host`, as JSON (converted to a minijinja value by the caller), with
/// what the `cluster` says where it was read (its DNS Services' addresses are the
/// cluster's own, as the rules take them).
pub fn build(
    host: &Host,
    facts: &NodeFacts,
    findings: &[Finding],
    kubelet_version: Option<(String, String)>,
    cluster: Option<&crate::cluster::Cluster>,
) -> Value {
    let cluster = cluster_addresses(host, facts, cluster);
    let own = kubelet_own_servers(facts, &cluster);
    let (upstreams, upstreams_source) = upstreams(host, facts, &cluster, &own);
    let uplink = &facts.resolver.systemd_uplink;
    let resolved_active = facts.services.systemd_resolved == UnitState::Active;
    let kubelet = &facts.kubelet;
    let (resolv_value, resolv_source) = value_and_source(&kubelet.resolv_conf);
    let (dns_value, dns_source) = value_and_source(&kubelet.cluster_dns);
    let rancher_config = rancher_config(facts.flavour.kind);
    let rancher = rancher_resolv(facts, rancher_config);
    let rules_ctx = crate::diagnose::rules::Ctx::new(host, facts);
    let (bridge_left, forwarding_left) = crate::diagnose::rules::left_to_installer(&rules_ctx);
    let (module_left, [iptables, ip6tables, forwarding]) =
        crate::diagnose::rules::installer_bridge(&rules_ctx);
    let failing = failing_ids(findings);
    let resolved_stops = resolved_stops_before_ours(facts);
    let mut context = json!({
        "host": host.name,
        "groups": host.groups,
        "vars": host.vars,
        "facts": facts,
        "findings": findings_json(findings),
        "failing": failing,
        "fixes": [],
        "flavour": flavour_name(facts.flavour.kind),
        "kubelet_version": kubelet_version.as_ref().map(|(v, _)| v),
        "kubelet_version_source": kubelet_version.as_ref().map_or("", |(_, from)| from),

        "os_id": facts.os.as_ref().and_then(|o| o.id.clone()).unwrap_or_default(),
        "os_version_id": facts.os.as_ref().and_then(|o| o.version_id.clone()).unwrap_or_default(),
        "pod_upstreams": pod_reachable(&upstreams),
        "upstreams": upstreams,
        "upstreams_source": upstreams_source,
        "cluster_addresses": cluster.iter().map(IpAddr::to_string).collect::<Vec<_>>(),
        "resolved_active": resolved_active,
        "resolved_uplink_clean": resolved_uplink_clean(host, facts, &cluster),
        "resolved_dns_resets_after": resolved_dns_resets_after(facts),
        "resolved_stops_before_ours": resolved_stops.0,
        "resolved_may_stop_before_ours": resolved_stops.1,
        "network_manager_manages": network_manager_manages_resolv(facts).is_some(),
        "dhclient_writes_resolv_conf": rules::dhclient_writes_resolv_conf(facts),
        "etc_resolv": resolv_json(&facts.resolver.etc_resolv_conf, &cluster),
        "host_resolver": host_resolver(facts, &cluster),
        "uplink": resolv_json(uplink, &cluster),
        "kubelet_config": kubelet.config_path,
        "kubelet_args_file": kubelet.args_file,
        "kubelet_resolv_conf": resolv_value,
        "kubelet_resolv_conf_source": resolv_source,
        // systemd-resolved's file in /run is clean only until the next boot where that
        // boot does not write it again.
        // A `nameserver` line with no address makes the kubelet reject the whole file
        // (where DNS-KUBELET-RESOLVCONF-MISSING says so: from kubelet 1.13).
        "kubelet_resolv_clean": kubelet_resolv_clean(kubelet, |f| {
            clean(f, &cluster)
                && !(failing.contains(&rules::KUBELET_RESOLVCONF_MISSING)
                    && f.parsed.as_ref().is_some_and(|p| !p.empty_nameserver_lines.is_empty()))
        }) && facts.kubelet_resolv_left_by_resolved().is_none(),
        "kubelet_cluster_dns": dns_value,
        "kubelet_cluster_dns_source": dns_source,
        "kubelet_unit": facts.services.kubelet_unit,
        "rancher_config": rancher_config,
        "nodelocaldns_ip": nodelocaldns_ipv4(facts),
        "severity": worst_severities(findings),
        "cni_routed": matches!(facts.cni.pod_bridge, PodBridge::Routed(_)),
        "rancher_resolv_target": rancher.target,
        "rancher_resolv_elsewhere": rancher.elsewhere,
        "files": small_text_files(facts),
    });
    search_context(&mut context, host, facts, &upstreams_source);
    flag_sites_context(&mut context, facts);
    // The kubelet config file that sets each, a --config-dir drop-in where one does (under a
    // flag too): an edit elsewhere loses to it (resolvConf's: [`config_key_context`]).
    context["kubelet_resolv_conf_key"] =
        json!(kubelet.resolv_conf_key.as_deref().unwrap_or("resolvConf"));
    context["kubespray_distro_resolv_conf"] = json!(kubespray_distro_resolv_conf(facts));
    context["kubelet_minor"] = json!(
        kubelet_version
            .as_ref()
            .and_then(|(v, _)| crate::facts::kubelet::version_minor(v))
    );
    context["kubelet_cluster_dns_file"] =
        json!(config_file_of(&kubelet.cluster_dns).or(kubelet.config_path.as_deref()));
    config_key_context(&mut context, &rules_ctx);
    advice_context(&mut context);
    cluster_domain_context(&mut context, facts, findings);
    rancher_context(&mut context, facts, rancher_config, &rancher);
    // Pods keep the real servers the kubelet's file lists: the uplink file is no fix that
    // drops them.
    let uplink_servers = nameservers(uplink);
    context["uplink_has_kubelet_servers"] = json!(own.iter().all(|s| uplink_servers.contains(s)));
    context["kubelet_own_servers"] = json!(own);
    // What a stopped installer sets itself when it starts (bridge-netfilter leaves it).
    context["bridge_left_to_installer"] = json!(bridge_left);
    context["forwarding_left_to_installer"] = json!(forwarding_left);
    // What a running one takes care of itself, or does not need (ip6tables, single-stack).
    context["br_netfilter_left_to_installer"] = json!(module_left);
    context["iptables_wanted"] = json!(iptables);
    context["ip6tables_wanted"] = json!(ip6tables);
    context["forwarding_wanted"] = json!(forwarding);
    forwarding_context(&mut context, facts, &rules_ctx);
    context
}

/// The forwarding keys to set and persist (those of the families pod DNS goes by), whether
/// IPv6 forwarding turns on by them, and what the playbook names and does not do: a line
/// systemd's udev rule applies to the pods' interface as it appears, the pods' bridge off
/// now.
fn forwarding_context(
    context: &mut Value,
    facts: &NodeFacts,
    rules_ctx: &crate::diagnose::rules::Ctx,
) {
    let forwarding_keys = crate::diagnose::rules::forwarding_keys(rules_ctx);
    let v6 = crate::diagnose::rules::Family::V6.key();
    context["ipv6_forwarding_turns_on"] = json!(
        forwarding_keys.contains(&v6)
            && facts
                .sysctls
                .get(v6)
                .is_none_or(|s| s.live != Observed::Known("1".to_owned()))
    );
    context["forwarding_keys"] = json!(forwarding_keys);
    context["forwarding_notes"] = json!(crate::diagnose::rules::forwarding_notes(rules_ctx));
}

/// systemd-resolved's uplink file lists only real servers and stays so: not where the next
/// boot takes it, nor where Kubespray's next run puts its cluster address there while
/// CoreDNS forwards to the kubelet's file.
fn resolved_uplink_clean(host: &Host, facts: &NodeFacts, cluster: &BTreeSet<IpAddr>) -> bool {
    facts.services.systemd_resolved == UnitState::Active
        && !facts.services.resolved_gone_at_boot()
        && !rules::kubespray_resolved_will_loop(host, facts)
        && clean(&facts.resolver.systemd_uplink, cluster)
}

/// Kubespray's vars file for a node's OS that sets its kube_resolv_conf, and the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubesprayDistroVars {
    /// As Kubespray names it: `roles/kubernetes/node/vars/ubuntu-22.yml`.
    pub file: String,
    pub kube_resolv_conf: &'static str,
    /// The first Kubespray release with the file (and its kube_resolv_conf): an older
    /// Kubespray hands the kubelet the inventory's value.
    pub since: &'static str,
    /// The file's name in the releases from `since` until it was renamed, and the release
    /// that renamed it: Fedora 33's and 34's were `fedora-33.yml` and `fedora-34.yml` up to
    /// v2.18.0, which made them one `fedora.yml`.
    pub formerly: Option<(&'static str, &'static str)>,
}

/// The kube_resolv_conf Kubespray's distro vars give a Kubespray node, and their file; they
/// outrank its group_vars and host_vars (include_vars: only `-e` beats them). Kubespray
/// includes the first of roles/kubernetes/node/vars/<distro>-<version>.yml, -<release>.yml,
/// -<major>.yml, <distro>.yml, <os family>.yml (tasks/facts.yml); at 46dbdd39 those are
/// fedora.yml and ubuntu-18/20/22/24.yml, each with /run/systemd/resolve/resolv.conf. An
/// Ubuntu without its file (16.04, 26.04) and every other distribution take the inventory's.
/// The one rule for the plan and for rollback, which judges the inventory's value by it.
pub fn kubespray_distro_vars(facts: &NodeFacts) -> Option<KubesprayDistroVars> {
    if facts.flavour.kind != FlavourKind::Kubespray {
        return None;
    }
    let os = facts.os.as_ref()?;
    let major = os.version_id.as_deref()?.split('.').next()?;
    // Each file's first release, by the commit that added it (git log --diff-filter=A,
    // git tag --contains): ubuntu-18.yml 482857611, ubuntu-20.yml c6588856c,
    // ubuntu-22.yml 323a11136, ubuntu-24.yml f85111f6d, fedora.yml a5f88e14d (renamed from
    // fedora-33.yml, 81b4ffa6b, v2.15.0; fedora-34.yml came in 7896bc783, v2.17.0): each set
    // kube_resolv_conf from the start, and Kubespray takes fedora-<major>.yml first.
    let (file, since, formerly) = match (os.id.as_deref()?, major) {
        ("fedora", "33") => ("fedora.yml", "v2.15.0", Some(("fedora-33.yml", "v2.18.0"))),
        ("fedora", "34") => ("fedora.yml", "v2.17.0", Some(("fedora-34.yml", "v2.18.0"))),
        ("fedora", _) => ("fedora.yml", "v2.18.0", None),
        ("ubuntu", "18") => ("ubuntu-18.yml", "v2.7.0", None),
        ("ubuntu", "20") => ("ubuntu-20.yml", "v2.14.0", None),
        ("ubuntu", "22") => ("ubuntu-22.yml", "v2.19.0", None),
        ("ubuntu", "24") => ("ubuntu-24.yml", "v2.25.0", None),
        _ => return None,
    };
    Some(KubesprayDistroVars {
        file: format!("roles/kubernetes/node/vars/{file}"),
        kube_resolv_conf: RESOLVED_UPLINK,
        since,
        formerly,
    })
}

/// The kube_resolv_conf of [`kubespray_distro_vars`], where they set one.
pub(super) fn kubespray_distro_resolv_conf(facts: &NodeFacts) -> Option<&'static str> {
    kubespray_distro_vars(facts).map(|v| v.kube_resolv_conf)
}

/// systemd-resolved's file of the real upstream servers.
const RESOLVED_UPLINK: &str = "/run/systemd/resolve/resolv.conf";

/// The kubelet's clusterDomain as `kubelet_cluster_dns*` says its clusterDNS, and what
/// DNS-KUBELET-NO-CLUSTER-DNS's fix gives the kubelet, where dnsfix knows it.
fn cluster_domain_context(context: &mut Value, facts: &NodeFacts, findings: &[Finding]) {
    let kubelet = &facts.kubelet;
    context["kubelet_cluster_domain_file"] =
        json!(config_file_of(&kubelet.cluster_domain).or(kubelet.config_path.as_deref()));
    let (domain_value, domain_source) = value_and_source(&kubelet.cluster_domain);
    context["kubelet_cluster_domain"] = domain_value;
    context["kubelet_cluster_domain_source"] = domain_source;
    let wanted = |key: &str| {
        findings
            .iter()
            .filter(|f| f.id == rules::NO_CLUSTER_DNS && f.status == FindingStatus::Failed)
            .find_map(|f| f.wanted.get(key))
    };
    context["cluster_dns_wanted"] = json!(wanted(rules::CLUSTER_DNS));
    context["cluster_domain_wanted"] = json!(wanted(rules::CLUSTER_DOMAIN).and_then(|v| v.first()));
}

/// The kubelet config file whose setting counts: the one that sets it now, or, under a flag
/// that beats it, the one whose setting counts once the flag goes (a `--config-dir` drop-in
/// over the config file where one sets it). A value written into another file loses to it.
fn config_file_of<T>(setting: &Observed<Effective<T>>) -> Option<&str> {
    match setting {
        Observed::Known(e) if e.source.kind == "config" => e.source.path.as_deref(),
        Observed::Known(e) if e.source.kind == "flag" => e
            .shadowed
            .iter()
            .find(|s| s.source.kind == "config")
            .and_then(|s| s.source.path.as_deref()),
        _ => None,
    }
}

/// Where the kubelet's config file keys go: the file that sets resolvConf (where the
/// kubelet's version decides it, the drop-in that does: [`undecided_dropin`]), whether it
/// is a drop-in ([`resolv_conf_in_dropin`]), and the clusterDNS Kubespray renders into
/// kubelet-config.yaml at its next run, where the inventory says
/// (kubelet-config.v1beta1.yaml.j2 @46dbdd39; null where not known).
fn config_key_context(context: &mut Value, ctx: &rules::Ctx) {
    let kubelet = &ctx.facts.kubelet;
    context["kubelet_resolv_conf_file"] = json!(
        config_file_of(&kubelet.resolv_conf)
            .or(undecided_dropin(kubelet))
            .or(kubelet.config_path.as_deref())
    );
    context["kubelet_resolv_conf_in_dropin"] = json!(resolv_conf_in_dropin(&ctx.facts.kubelet));
    context["kubelet_resolver_config_left"] = resolver_config_left(context, ctx.facts);
    context["kubespray_cluster_dns"] = json!(rules::kubespray_cluster_dns(ctx));
    context["kubespray_cluster_dns_serves"] = json!(rules::kubespray_cluster_dns_serves(ctx));
}

/// The spelling of resolverConfig and the drop-in that kubelet 1.28 to 1.31 would still read
/// resolvConf from once kubelet-resolvconf has written `kubelet_resolv_conf_key` (and, in a
/// drop-in of a kubelet not known to be 1.32 or later, `resolverConfig` beside it) into
/// `kubelet_resolv_conf_file`: the greatest spelling in byte order wins there, so a drop-in's
/// `resolverconfig` ('c' > 'C') beats the `resolverConfig` written (kubernetes#126630), and
/// the playbook sets it too. `{key, file}`, or null where the kubelet is 1.32 or later or
/// nothing is left ([`crate::facts::kubelet::resolver_config_left`]).
fn resolver_config_left(context: &Value, facts: &crate::facts::NodeFacts) -> Value {
    let minor = context["kubelet_minor"].as_u64();
    let (Some(file), Some(key), false) = (
        context["kubelet_resolv_conf_file"].as_str(),
        context["kubelet_resolv_conf_key"].as_str(),
        minor.is_some_and(|m| m >= 32),
    ) else {
        return Value::Null;
    };
    let also = key == "resolvConf" && context["kubelet_resolv_conf_in_dropin"] == json!(true);
    match crate::facts::kubelet::resolver_config_left(facts, file, key, also) {
        Some((key, file)) => json!({ "key": key, "file": file }),
        None => Value::Null,
    }
}

/// Whether the file that sets the kubelet's resolvConf (under a flag too) is a
/// `--config-dir` drop-in, where kubelet 1.28 to 1.31 read it only under the internal
/// spelling resolverConfig (kubernetes#126630) and 1.32 on only as resolvConf (#127421):
/// where the version is not known, the playbooks write both.
fn resolv_conf_in_dropin(kubelet: &crate::facts::node_facts::Kubelet) -> bool {
    config_file_of(&kubelet.resolv_conf)
        .or(undecided_dropin(kubelet))
        .is_some_and(|f| kubelet.config_dropins.iter().any(|d| d == f))
}

/// Where the kubelet's version is not known and decides its resolvConf (its drop-ins give
/// kubelet 1.28 to 1.31 one file, 1.32 on another), the drop-in that decides: with
/// resolvConf and resolverConfig both set there, every version reads the same file.
fn undecided_dropin(kubelet: &crate::facts::node_facts::Kubelet) -> Option<&str> {
    kubelet
        .resolv_conf_by_version
        .as_ref()
        .map(|by| by.dropin.as_str())
}

/// Whether the file the kubelet hands Default pods is `clean`; where the kubelet's version
/// is not known and decides which file that is, whether every version's file is.
fn kubelet_resolv_clean(
    kubelet: &crate::facts::node_facts::Kubelet,
    clean: impl Fn(&ResolvFile) -> bool,
) -> bool {
    match (&kubelet.pod_resolv_conf, &kubelet.resolv_conf_by_version) {
        (Some(f), _) => clean(f),
        (None, Some(by)) => by
            .readings
            .iter()
            .all(|r| r.pod_resolv_conf.as_ref().is_some_and(&clean)),
        (None, None) => false,
    }
}

/// A known setting's value and where it comes from; null and null when not known.
/// What advice may repeat of node text (an inventory value, an -e on a command line): only
/// a plain path, as node scripts take one (`kubelet_resolv_conf_plain`: absolute, no `..`,
/// letters, digits and `._/+@:-`).
fn advice_context(context: &mut Value) {
    context["kubelet_resolv_conf_plain"] = json!(
        context["kubelet_resolv_conf"]
            .as_str()
            .is_some_and(crate::node_script::safe_path)
    );
}

fn value_and_source<T: serde::Serialize>(setting: &Observed<Effective<T>>) -> (Value, Value) {
    match setting {
        Observed::Known(e) => (json!(e.value), json!(e.source)),
        _ => (Value::Null, Value::Null),
    }
}

fn flavour_name(kind: FlavourKind) -> &'static str {
    match kind {
        FlavourKind::Kubespray => "kubespray",
        FlavourKind::Kubeadm => "kubeadm",
        FlavourKind::K3s => "k3s",
        FlavourKind::Rke2 => "rke2",
        FlavourKind::Eks => "eks",
        FlavourKind::K0s => "k0s",
        FlavourKind::MicroK8s => "microk8s",
        FlavourKind::Unknown => "unknown",
    }
}

/// The config file of a k3s or RKE2 node.
fn rancher_config(kind: FlavourKind) -> &'static str {
    match kind {
        FlavourKind::Rke2 => "/etc/rancher/rke2/config.yaml",
        _ => "/etc/rancher/k3s/config.yaml",
    }
}

/// k3s/RKE2: how the resolv.conf setting is fixed, the kubelet-arg that sets
/// `--cluster-dns` now, and where dnsfix would add one.
fn rancher_context(context: &mut Value, facts: &NodeFacts, config: &str, rancher: &RancherResolv) {
    context["rancher_resolv_fix"] = json!(rancher.fix);
    context["rancher_owns_target"] = json!(rancher.owned);
    let (dropin, undone) = rancher_dns_dropin(facts, config);
    context["rancher_dns_dropin"] = json!(dropin);
    context["rancher_dns_dropin_undone"] = json!(undone);
    // A kubelet config drop-in of the operator's (or k3s's copy of one) that sets it: a
    // flag would shadow it (DNS-KUBELET-FLAG-SHADOW would say so).
    context["rancher_cluster_dns_dropin"] =
        json!(facts.kubelet.cluster_dns.known().and_then(|e| {
            (e.source.kind == crate::facts::kubelet::RANCHER_DROPIN
                && !crate::facts::kubelet::rancher_chose_cluster_dns(&e.source))
            .then(|| match &e.source.detail {
                Some(d) => format!("{} ({d})", e.source.at()),
                None => e.source.at(),
            })
        }));
    // dnsfix's own drop-in, where it alone sets it, is dnsfix's to write again.
    context["rancher_cluster_dns_arg"] = json!(facts.kubelet.cluster_dns.known().and_then(|e| {
        use crate::facts::kubelet::{ADDED_TO, KUBELET_ARG};
        let earlier = e.source.detail.as_deref()?.strip_prefix(KUBELET_ARG)?;
        if earlier.is_empty() && e.source.path.as_deref() == Some(dropin.as_str()) {
            return None;
        }
        let earlier = earlier.strip_prefix(ADDED_TO).map(|a| format!(", {a}"));
        Some(format!(
            "kubelet-arg cluster-dns= at {}{}",
            e.source.at(),
            earlier.unwrap_or_default()
        ))
    }));
}

/// Where dnsfix gives a k3s/RKE2 kubelet its `--cluster-dns`: a `config.yaml.d` drop-in of
/// its own that adds to `kubelet-arg` (`kubelet-arg+:`), named to come after the others (k3s
/// merges the drop-ins in name order); and the drop-in after it whose plain `kubelet-arg:`
/// would replace the list, its entry with it, if there is one.
fn rancher_dns_dropin(facts: &NodeFacts, config: &str) -> (String, Option<String>) {
    let dir = format!("{config}.d");
    let dropin = format!("{dir}/zz-dnsfix-cluster-dns.yaml");
    let mut later: Vec<(&str, &crate::facts::raw::RawFile)> = facts
        .raw
        .files_in(&dir)
        .filter(|(p, _)| crate::facts::k3s_config::is_dropin_name(p) && *p > dropin.as_str())
        .collect();
    later.sort_by_key(|(p, _)| *p);
    // One that could not be read or parsed may replace it too.
    let undone = later.into_iter().find_map(|(path, file)| {
        let parsed = file
            .text()
            .and_then(|t| crate::facts::k3s_config::K3sConfig::parse(&t).ok());
        match parsed {
            Some(c) => (c.sets_kubelet_args && !c.kubelet_args_appended).then(|| path.to_owned()),
            None => Some(format!("{path} (which could not be read)")),
        }
    });
    (dropin, undone)
}

/// The worst severity of each failing finding: a playbook may leave an info alone.
fn worst_severities(findings: &[Finding]) -> serde_json::Map<String, Value> {
    let mut worst: std::collections::BTreeMap<&str, crate::diagnose::Severity> =
        std::collections::BTreeMap::new();
    for f in findings
        .iter()
        .filter(|f| f.status == FindingStatus::Failed)
    {
        let entry = worst.entry(f.id).or_insert(f.severity);
        *entry = (*entry).max(f.severity);
    }
    worst
        .into_iter()
        .map(|(id, s)| (id.to_owned(), json!(s.as_str())))
        .collect()
}

/// The address nodelocaldns listens on as the cache: its first of NodeLocal DNSCache's kind
/// (the rules' choice too), else its first IPv4 address (a cache on an address of another
/// kind), not the kube-dns Service address node-cache may hold beside it.
fn nodelocaldns_ipv4(facts: &NodeFacts) -> Option<String> {
    let addrs = facts.nodelocaldns.as_deref()?;
    let node_local = || {
        addrs
            .iter()
            .find(|a| crate::facts::node_facts::is_node_local_address(a))
    };
    node_local()
        .or_else(|| {
            addrs
                .iter()
                .find(|a| a.parse::<std::net::Ipv4Addr>().is_ok())
        })
        .cloned()
}

fn findings_json(findings: &[Finding]) -> Vec<Value> {
    findings
        .iter()
        .map(|f| {
            json!({
                "id": f.id,
                "severity": f.severity,
                "status": f.status,
                "summary": f.summary,
                "evidence": f.evidence,
                "about": f.about,
            })
        })
        .collect()
}

/// The search domains pods get from the node (`kubelet_pod_search`), the stray ones among
/// them (`stray_search_domains`, as DNS-STRAY-SEARCH judges them), the cluster's domain
/// (`cluster_domain`) and the options pods get from the node (`kubelet_pod_options`;
/// `kubelet_pod_options_from_kubelet`: whether the kubelet's own file gave them, not the
/// file the servers come from where that one is not there); `source`: the file
/// `upstreams` come from.
fn search_context(context: &mut Value, host: &Host, facts: &NodeFacts, source: &str) {
    let search = pod_search(host, facts, source);
    let domain = cluster_domain(host, facts);
    let names: Vec<&str> = search.iter().map(String::as_str).collect();
    context["stray_search_domains"] = json!(crate::diagnose::rules::strays(&names, &domain, host));
    context["kubelet_pod_search"] = json!(search);
    context["cluster_domain"] = json!(domain);
    context["kubelet_pod_options"] = json!(pod_options(facts, source));
    context["kubelet_pod_options_from_kubelet"] = json!(matches!(
        pod_settings_file(facts, source),
        Some(PodSettings::Kubelet(_) | PodSettings::Versions(_))
    ));
}

/// The resolv.conf whose search domains and options pods get from the node.
enum PodSettings<'a> {
    /// The one the kubelet gives them.
    Kubelet(&'a ResolvFile),
    /// Where the kubelet's version is not known and decides which file it gives them
    /// ([`ResolvConfByVersion`](crate::facts::node_facts::ResolvConfByVersion)), each
    /// version's: none for one whose setting is empty or whose file is not there, so pods
    /// of that version get nothing of it.
    Versions(Vec<Option<&'a ResolvFile>>),
    /// Where that file is not there to read, the file the upstream servers come from, which
    /// a file of dnsfix's takes its servers from too.
    Source(&'a ResolvFile),
}

impl<'a> PodSettings<'a> {
    /// What `read` gives of each file: where the version decides, only what every
    /// version's file gives, in the order of the first (an option or a search domain pods
    /// may not have had is not written for them, and the plan cannot tell which they had).
    fn agreed(&self, read: impl Fn(&ResolvFile) -> Vec<String>) -> Vec<String> {
        match self {
            PodSettings::Kubelet(f) | PodSettings::Source(f) => read(f),
            PodSettings::Versions(files) => {
                let mut each = files.iter().map(|f| f.map(&read).unwrap_or_default());
                let first = each.next().unwrap_or_default();
                let rest: Vec<Vec<String>> = each.collect();
                first
                    .into_iter()
                    .filter(|word| rest.iter().all(|r| r.contains(word)))
                    .collect()
            }
        }
    }
}

/// The [`PodSettings`] of the node, `source` naming the file the upstream servers come from
/// (where it is one of the node's resolver files).
fn pod_settings_file<'a>(facts: &'a NodeFacts, source: &str) -> Option<PodSettings<'a>> {
    let there = |f: &&ResolvFile| f.state != crate::facts::raw::FileState::Missing;
    if let Some(f) = facts.kubelet.pod_resolv_conf.as_ref().filter(there) {
        return Some(PodSettings::Kubelet(f));
    }
    if let Some(by) = &facts.kubelet.resolv_conf_by_version {
        let files: Vec<Option<&ResolvFile>> = by
            .readings
            .iter()
            .map(|r| r.pod_resolv_conf.as_ref().filter(there))
            .collect();
        if files.iter().any(Option::is_some) {
            return Some(PodSettings::Versions(files));
        }
    }
    [
        &facts.resolver.etc_resolv_conf,
        &facts.resolver.systemd_uplink,
    ]
    .into_iter()
    .find(|f| f.path == source)
    .map(PodSettings::Source)
}

/// The options `dnsPolicy: Default` pods get from the node (those of [`pod_settings_file`];
/// where the kubelet's version decides the file and is not known, those every version's
/// file gives: the plan cannot tell which file the pods had), as the kubelet reads them: the words of the last `options` line (dns.go
/// `parseResolvConf`, "last one wins"), which `GetPodDNS` hands those pods as they are, and
/// host-network ClusterFirst pods, but other ClusterFirst pods and ClusterFirstWithHostNet
/// ones never (it replaces them with `ndots:5`: `getPodDNSType`). Only words that are a resolver option, a name or a name:number
/// (resolv.conf(5)): not the control characters a hostile file may hold, which the kubelet
/// would pass on and the resolver ignores. Not `edns0` and `trust-ad`
/// where every server of that file is a loopback one: they are about that resolver on the
/// node, not about the real servers behind it, which pods ask over the network, where an AD
/// bit is not to be trusted (resolv.conf(5), trust-ad). systemd-resolved writes `options
/// edns0 trust-ad` into its stub files (`options edns0` before systemd 246, a742f982
/// "enable RES_TRUSTAD towards the 127.0.0.53 stub resolver") and no options into its file
/// of the real servers, the one kubelet-resolvconf prefers (resolved-resolv-conf.c
/// `write_stub_resolv_conf_contents`, `write_uplink_resolv_conf_contents`); NetworkManager
/// adds both where it names its dnsmasq or systemd-resolved (nm-dns-manager.c `update_dns`,
/// `need_edns0`, `need_trust`).
fn pod_options(facts: &NodeFacts, source: &str) -> Vec<String> {
    pod_settings_file(facts, source)
        .map(|s| s.agreed(file_options))
        .unwrap_or_default()
}

/// The options the kubelet hands `dnsPolicy: Default` pods from `file` ([`pod_options`]).
fn file_options(file: &ResolvFile) -> Vec<String> {
    let Some(parsed) = file.parsed.as_ref() else {
        return Vec::new();
    };
    let local = !parsed.nameservers.is_empty()
        && parsed
            .nameservers
            .iter()
            .all(|n| n.ip.is_some_and(is_loopback));
    parsed
        .options
        .iter()
        .filter(|o| is_resolver_option(o))
        .filter(|o| !(local && matches!(o.as_str(), "edns0" | "trust-ad")))
        .cloned()
        .collect()
}

/// Whether `word` has the form of a resolver option: a name of lower-case letters, digits,
/// `-` and `_` (`rotate`, `single-request-reopen`, glibc's `no_tld_query`), with a number
/// after a `:` where it takes one (`ndots:2`, `timeout:1`; glibc's `atoi` reads none as 0).
fn is_resolver_option(word: &str) -> bool {
    let (name, number) = word.split_once(':').unwrap_or((word, ""));
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        && number.bytes().all(|b| b.is_ascii_digit())
}

/// The search domains of the resolv.conf the kubelet gives pods (where its version decides
/// that file and is not known, those every version's file gives); where that file is not
/// there to read, those of the file the upstream servers come from ([`pod_settings_file`]),
/// without the stray ones where the inventory asks for those to go (DNS-STRAY-SEARCH cannot
/// judge a file that is not there, so kubelet-resolvconf would not strip them itself).
fn pod_search(host: &Host, facts: &NodeFacts, source: &str) -> Vec<String> {
    // As the kubelet reads them: no `.`, no trailing dot.
    let search = |f: &ResolvFile| -> Vec<String> {
        f.parsed
            .as_ref()
            .map(|p| p.kubelet_search().into_iter().map(str::to_owned).collect())
            .unwrap_or_default()
    };
    match pod_settings_file(facts, source) {
        Some(s @ (PodSettings::Kubelet(_) | PodSettings::Versions(_))) => s.agreed(search),
        other => {
            let domains: Vec<String> = other.map(|s| s.agreed(search)).unwrap_or_default();
            if host.var_bool("dnsfix_strip_search_domains") != Some(true) {
                return domains;
            }
            let names: Vec<&str> = domains.iter().map(String::as_str).collect();
            let strays = crate::diagnose::rules::strays(&names, &cluster_domain(host, facts), host);
            domains
                .iter()
                .filter(|d| !strays.contains(&d.as_str()))
                .cloned()
                .collect()
        }
    }
}

/// The kubelet's cluster domain; when it is not known or not set, the one the inventory
/// declares (`dns_domain`), else cluster.local.
fn cluster_domain(host: &Host, facts: &NodeFacts) -> String {
    match &facts.kubelet.cluster_domain {
        Observed::Known(e) if !e.value.is_empty() => e.value.clone(),
        _ => {
            let kubespray = facts.flavour.kind == crate::facts::node_facts::FlavourKind::Kubespray;
            crate::diagnose::rules::inventory_domain(host, kubespray)
                .unwrap_or("cluster.local")
                .to_string()
        }
    }
}

/// The gathered text files up to 64 KiB, by path.
fn small_text_files(facts: &NodeFacts) -> serde_json::Map<String, Value> {
    facts
        .files
        .iter()
        .filter(|(_, f)| f.content.len() <= 64 * 1024 && !f.truncated)
        .filter_map(|(path, f)| f.text().map(|t| (path.clone(), json!(t))))
        .collect()
}

/// Where a k3s/RKE2 resolv.conf fix must be written to win: the file that sets the winning
/// `resolv-conf:` key (a config.yaml.d drop-in beats config.yaml), or that sets it empty
/// where k3s/RKE2 choose, else config.yaml (which beats K3S_RESOLV_CONF/RKE2_RESOLV_CONF and
/// the automatic choice). A setting that beats
/// any config file (a `--resolv-conf` in the unit's ExecStart, a `kubelet-arg`, a kubelet
/// config drop-in after k3s's own) is `elsewhere`: dnsfix does not edit it, the plan says
/// where it is.
struct RancherResolv {
    target: String,
    elsewhere: Option<String>,
    /// Where `elsewhere` is a kubelet config drop-in: `copy` (k3s's copy of what a
    /// `kubelet-arg` names: the fix goes in the file it copies from), `left_over` (a copy no
    /// `kubelet-arg` makes any more), else empty.
    fix: &'static str,
    /// `target` is Rancher's: rancher-system-agent writes config.yaml.d/50-rancher.yaml anew
    /// from the cluster's spec at every plan it applies (rancher/rancher pkg/capr/planner,
    /// ConfigYamlFileName, json.MarshalIndent of the machine's config).
    owned: bool,
}

fn rancher_resolv(facts: &NodeFacts, config: &str) -> RancherResolv {
    let mut out = RancherResolv {
        target: config.to_owned(),
        elsewhere: None,
        fix: "",
        owned: false,
    };
    if let Observed::Known(e) = &facts.kubelet.resolv_conf {
        match (e.source.kind.as_str(), e.source.detail.as_deref()) {
            ("k3s_flag", _) => {
                out.elsewhere = Some(format!(
                    "--resolv-conf in the service's ExecStart at {}",
                    e.source.at()
                ))
            }
            (crate::facts::kubelet::RANCHER_DROPIN, detail) => {
                let detail_starts = |prefix| detail.is_some_and(|d| d.starts_with(prefix));
                out.fix = if detail_starts(crate::facts::kubelet::COPY_OF) {
                    "copy"
                } else if detail_starts(crate::facts::kubelet::LEFT_OVER) {
                    "left_over"
                } else {
                    ""
                };
                out.elsewhere = Some(format!(
                    "resolvConf at {} ({}; the kubelet reads its config drop-ins after k3s's own)",
                    e.source.at(),
                    detail.unwrap_or("a kubelet config drop-in")
                ))
            }
            ("k3s_config", Some("kubelet-arg")) => {
                out.elsewhere = Some(format!("kubelet-arg resolv-conf at {}", e.source.at()))
            }
            ("k3s_config", _) => {
                if let Some(path) = &e.source.path {
                    out.target = path.clone();
                    out.owned = path.ends_with("/config.yaml.d/50-rancher.yaml");
                }
            }
            // Their own choice, or the environment's: where the service's ExecStart sets
            // --resolv-conf empty (the automatic choice), it comes after every config file
            // and no file's value counts. Where a config file sets it empty, a value written
            // in an earlier file is replaced by it (configfilearg merges the files in
            // order), so it goes in that file.
            _ => {
                if let Some(at) = crate::facts::kubelet::rancher_exec_resolv_conf_reset(
                    &facts.raw,
                    &facts.flavour,
                ) {
                    out.elsewhere = Some(format!(
                        "--resolv-conf= (empty: their automatic choice) in the service's ExecStart at {at}"
                    ));
                } else if let Some(path) = rancher_resolv_reset(facts, config) {
                    out.owned = path.ends_with("/config.yaml.d/50-rancher.yaml");
                    out.target = path;
                }
            }
        }
    }
    out
}

/// The last of a k3s/RKE2 node's config files (`config` and its `.d` drop-ins, in the order
/// k3s merges them) that sets `resolv-conf`, where one does.
fn rancher_resolv_reset(facts: &NodeFacts, config: &str) -> Option<String> {
    let files = crate::facts::kubelet::config_files(&facts.raw, config).ok()?;
    let (path, _) = files
        .into_iter()
        .rev()
        .find(|(_, c)| c.resolv_conf.is_some())?;
    Some(path)
}

/// A resolv.conf kubelet may hand to pods: it lists servers, none loopback or cluster-own.
fn clean(file: &ResolvFile, cluster: &BTreeSet<IpAddr>) -> bool {
    let Some(parsed) = &file.parsed else {
        return false;
    };
    let servers: Vec<IpAddr> = parsed
        .nameservers
        .iter()
        .filter_map(|n| n.address.parse().ok())
        .collect();
    !servers.is_empty()
        && servers.len() == parsed.nameservers.len()
        && servers
            .iter()
            .all(|ip| !is_loopback(*ip) && !cluster.contains(ip))
}

fn resolv_json(file: &ResolvFile, cluster: &BTreeSet<IpAddr>) -> Value {
    let parsed = file.parsed.as_ref();
    let nameservers: Vec<&str> = parsed
        .map(|p| p.nameservers.iter().map(|n| n.address.as_str()).collect())
        .unwrap_or_default();
    let cluster_servers: Vec<&str> = nameservers
        .iter()
        .copied()
        .filter(|n| n.parse::<IpAddr>().is_ok_and(|ip| cluster.contains(&ip)))
        .collect();
    json!({
        "path": file.path,
        "state": file.state,
        "symlink_target": file.symlink_target,
        "canonical": file.canonical,
        "nameservers": nameservers,
        "cluster_nameservers": cluster_servers,
        "only_cluster": !nameservers.is_empty() && cluster_servers.len() == nameservers.len(),
        "search": parsed.map(|p| p.search.clone()).unwrap_or_default(),
        "options": parsed.map(|p| p.options.clone()).unwrap_or_default(),
    })
}

/// The `DNS=` lines with no value, as `PATH:LINE`, of the systemd-resolved drop-ins read
/// after host-upstream-dns's `zz-dnsfix-upstream.conf`
/// ([`crate::facts::resolved_conf::ResolvedConf::dns_resets_after`]): an empty `DNS=` drops the servers set
/// before it (resolved.conf(5)), dnsfix's among them.
fn resolved_dns_resets_after(facts: &NodeFacts) -> Vec<String> {
    crate::facts::resolved_conf::ResolvedConf::read(&facts.raw)
        .dns_resets_after("zz-dnsfix-upstream.conf")
        .into_iter()
        .map(crate::facts::resolved_conf::Setting::location)
        .collect()
}

/// Where systemd-resolved's parser stops before it reaches host-upstream-dns's
/// `zz-dnsfix-upstream.conf`, as `PATH:LINE: LINE` (escaped), else empty: a section header
/// without its closing `]`, or with a quote, control character or backslash in its name, or a
/// line that is not valid UTF-8, in its main file (the one it reads:
/// [`crate::facts::resolved_conf::MainFile`]) or a drop-in read before that one, after which
/// it reads nothing ([`crate::facts::resolved_conf::ResolvedConf::stopped_at`]). A broken
/// `zz-dnsfix-upstream.conf` is not: the playbook writes it whole. Then where it may stop
/// there, and why that is not known, as `PATH:LINE: LINE (WHY)`: in a main file it may or
/// may not read (its version is not known: [`crate::facts::resolved_conf::MainFile::Unknown`]),
/// or at a line that is not valid UTF-8 where its version is not known (it stops there from
/// 239 on).
fn resolved_stops_before_ours(facts: &NodeFacts) -> (String, String) {
    let conf = crate::facts::resolved_conf::ResolvedConf::read(&facts.raw);
    let stops = match conf.stopped_at {
        Some((at, line)) if before_ours(&at) => format!("{at}: {line}"),
        _ => String::new(),
    };
    let may_stop = match conf.maybe_stopped_at {
        Some((at, line, why)) if before_ours(&at) => format!("{at}: {line} ({why})"),
        _ => String::new(),
    };
    (stops, may_stop)
}

/// Whether `PATH:LINE` is in systemd-resolved's main file or a drop-in it reads before
/// host-upstream-dns's `zz-dnsfix-upstream.conf`.
fn before_ours(at: &str) -> bool {
    let path = at.rsplit_once(':').map_or(at, |(path, _)| path);
    let name = path.rsplit('/').next().unwrap_or(path);
    crate::facts::resolved_conf::is_main_path(path) || name < "zz-dnsfix-upstream.conf"
}

/// The node's own resolver and who writes it, as DNS-CLUSTER-SELF-FORWARD judges it
/// ([`rules::host_servers`]): the file whose servers the node's own lookups reach
/// (systemd-resolved's uplink file where /etc/resolv.conf links into it or names only its
/// stub while it runs, whoever writes it; else /etc/resolv.conf), and `via`: `resolved`
/// when /etc/resolv.conf points into systemd-resolved (stub, static or uplink: the servers
/// live in resolved's config, and its uplink file shows them), or is another file that
/// names only its stub while it runs and NetworkManager does not write it (or writes the
/// stub again, with rc-manager=symlink, where systemd-resolved starts at boot),
/// `networkmanager` when an active NetworkManager rewrites a plain /etc/resolv.conf,
/// `networkmanager_stub` when it writes systemd-resolved's stub address there
/// (dns=systemd-resolved with rc-manager symlink, the default before 1.28),
/// `networkmanager_at_boot` when a stopped one that starts at boot rewrites it then (the
/// file now and NetworkManager's configuration for the next boot, nothing reloaded: a
/// reload fails on a stopped unit, and a start would undo the operator's stop), `dhcpcd`,
/// `openresolv`, `udhcpc` or `netconfig` when that program writes the plain file anew, or
/// netconfig the /run/netconfig/resolv.conf it links to ([`resolv_writer`]: the playbook
/// blocks, naming where it takes servers;
/// `writer_evidence` says what shows it), `other` when /etc/resolv.conf links to another
/// tool's file (resolvconf(8), ...), else `file`: a plain file nothing rewrites
/// (NetworkManager's too where the file is immutable: it writes none then). A plain
/// /etc/resolv.conf is not systemd-resolved's just because resolved runs. `locked`: the
/// `lsattr` flags of a plain /etc/resolv.conf that is immutable or append-only, else null.
/// `through_stub`: /etc/resolv.conf is no link into systemd-resolved's files but names only
/// its stub now, so the mapping is its uplink file (for `networkmanager_stub`: NetworkManager
/// has written the stub already). `resolved_at_boot`: systemd-resolved starts at boot (null
/// where not known);
/// `nm_active`: NetworkManager runs now (else it writes the file at its next start).
///
/// [`resolv_writer`]: crate::facts::resolv_writer::resolv_writer
fn host_resolver(facts: &NodeFacts, cluster: &BTreeSet<IpAddr>) -> Value {
    let rules::HostServers {
        via,
        file,
        through_stub,
    } = rules::host_servers(facts);
    let writer = crate::facts::resolv_writer::resolv_writer(facts);
    let mut json = resolv_json(file, cluster);
    if let Some(map) = json.as_object_mut() {
        map.insert("via".into(), json!(via.name()));
        // The file names only systemd-resolved's stub now (NetworkManager's, a copy): the
        // servers are its uplink file's, and the networkmanager_stub stop says so.
        map.insert("through_stub".into(), json!(through_stub));
        // A plain /etc/resolv.conf locked with `chattr +i` or `+a`: apply replaces no such
        // file (it renames a new one over it), so the playbook blocks at plan time.
        let locked = crate::facts::network_manager::resolv_conf_locked(&facts.raw);
        map.insert("locked".into(), json!(locked));
        // Where NetworkManager writes systemd-resolved's stub, the fix depends on whether
        // anything answers there after a reboot, and the stop says when it writes.
        map.insert(
            "resolved_at_boot".into(),
            json!(facts.services.resolved_starts_at_boot()),
        );
        map.insert(
            "nm_active".into(),
            json!(facts.services.network_manager == UnitState::Active),
        );
        // What shows that program writes the file, for the playbook's message.
        map.insert(
            "writer_evidence".into(),
            json!(
                writer
                    .filter(|w| via == rules::Via::Writer(w.writer))
                    .map(|w| w.evidence)
                    .unwrap_or_default()
            ),
        );
    }
    json
}

/// Why the inventory's upstream servers (`upstream_dns_servers`, else Kubespray's
/// `nameservers`) cannot be written as resolv.conf nameservers, naming where each was set.
/// Unset or an empty list is fine (the node's own servers are used); a host name, a
/// loopback, multicast, broadcast or unspecified address, or a value with more than one
/// word in a list item, is not; nor, on a Kubespray node (`kubespray`), a string where
/// Kubespray takes a list.
pub fn check_upstreams(host: &Host, kubespray: bool) -> Result<(), String> {
    for key in ["upstream_dns_servers", "nameservers"] {
        let Some(value) = host.var(key) else {
            continue;
        };
        let at = host
            .origins
            .get(key)
            .map(|o| format!(" (set in {o})"))
            .unwrap_or_default();
        // Kubespray iterates it as a list: a string goes character by character into
        // the Corefiles (coredns-config.yml.j2 `upstream_dns_servers | join(' ')`), and
        // resolved.conf.j2 adds it to lists, which a string cannot be (@46dbdd39). An INI
        // `upstream_dns_servers=192.0.2.53` is such a string.
        if let Value::String(text) = value
            && kubespray
            && !text.trim().is_empty()
            && !crate::inventory::is_template(text)
        {
            let shown = crate::text::escape(text);
            return Err(format!(
                "{key}{at} is the string {shown:?}, which Kubespray takes as a list of its characters (its Corefile would forward to each); write a list: {key}: [{}] in YAML, {key}=['{}'] in an INI file",
                host.var_list(key).unwrap_or_default().join(", "),
                host.var_list(key).unwrap_or_default().join("', '")
            ));
        }
        let items: Vec<String> = match value {
            Value::Null => continue,
            Value::Array(items) => {
                let mut out = Vec::new();
                for item in items {
                    match item {
                        Value::String(s) => out.push(s.clone()),
                        Value::Number(n) => out.push(n.to_string()),
                        other => {
                            return Err(format!("{key}{at}: {other} is not an address"));
                        }
                    }
                }
                out
            }
            Value::String(_) => host.var_list(key).unwrap_or_default(),
            other => return Err(format!("{key}{at}: {other} is not a list of addresses")),
        };
        // An empty list is Kubespray's default (kubespray_defaults: `upstream_dns_servers:
        // []`): the node's own servers are used, as when it is unset.
        for item in &items {
            let shown = crate::text::escape(item);
            let text = item.trim();
            if text == crate::inventory::VAULTED {
                return Err(format!(
                    "{key}{at} is an inline `!vault` value, which dnsfix does not decrypt; write the addresses in plain text"
                ));
            }
            if crate::inventory::is_template(text) {
                return Err(format!(
                    "{key}{at}: {shown:?} is a template dnsfix cannot resolve; write the addresses"
                ));
            }
            if text.chars().any(char::is_whitespace) {
                return Err(format!(
                    "{key}{at}: {shown:?} is more than one word; write one address per list item"
                ));
            }
            let Some(ip) = server_address(text) else {
                return Err(if text.parse::<IpAddr>().is_err() && !text.contains(':') {
                    format!(
                        "{key}{at}: {shown:?} is not an IP address; resolv.conf takes addresses, not host names"
                    )
                } else {
                    format!("{key}{at}: {shown:?} is not an IP address")
                });
            };
            let why = if is_loopback(ip) {
                Some("a loopback address: pods with dnsPolicy Default would ask themselves")
            } else if ip.is_unspecified() {
                Some("the unspecified address")
            } else if ip.is_multicast() {
                Some("a multicast address")
            } else if ip == IpAddr::V4(std::net::Ipv4Addr::BROADCAST) {
                Some("the broadcast address")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(format!(
                    "{key}{at}: {text} is {why}, not an upstream DNS server"
                ));
            }
        }
        // upstream_dns_servers is set and good: `nameservers` is not used.
        if !items.is_empty() {
            return Ok(());
        }
    }
    Ok(())
}

/// The servers of `upstreams` a pod can reach: all but IPv6 link-local ones. A pod has its
/// own network namespace, where `fe80::1%eth0` names the pod's own link, so such a server
/// (fine for the host's resolver) must not go into the resolv.conf kubelet hands to pods.
fn pod_reachable(upstreams: &[String]) -> Vec<String> {
    upstreams
        .iter()
        .filter(|s| {
            !matches!(server_address(s.trim()), Some(IpAddr::V6(ip)) if ip.is_unicast_link_local())
        })
        .cloned()
        .collect()
}

/// The real upstream servers and where they come from, as the playbooks' context gives
/// them (`upstreams`, `upstreams_source`): [`rules::upstreams`], which the fix texts name
/// too; none, and an empty source, where none is known.
fn upstreams(
    host: &Host,
    facts: &NodeFacts,
    cluster: &BTreeSet<IpAddr>,
    kubelet_own: &[String],
) -> (Vec<String>, String) {
    rules::upstreams(host, facts, cluster, kubelet_own)
        .map(|(servers, from)| (servers, from.source()))
        .unwrap_or_default()
}

/// `flag_sites`, `flag_sites_elsewhere`, `flags_elsewhere` and `flags_decided_elsewhere`
/// ([`FlagSites`]).
fn flag_sites_context(context: &mut Value, facts: &NodeFacts) {
    let sites = flag_sites(facts);
    let at: Vec<Value> = sites.elsewhere.iter().map(|e| e["at"].clone()).collect();
    context["flag_sites"] = json!(sites.sites);
    context["flag_sites_elsewhere"] = json!(at);
    context["flags_elsewhere"] = json!(sites.elsewhere);
    context["flags_decided_elsewhere"] = json!(sites.decided_elsewhere);
}

/// Where the DNS flags the kubelet uses are set ([`flag_sites`]).
struct FlagSites {
    /// `{path, var, flag, value, line}` for each one written in an environment file (which
    /// `env_flag` can edit), in command-line order.
    sites: Vec<Value>,
    /// `{flag, at}` (`path:line`) for each one written in a unit file or drop-in
    /// (`Environment=`, `ExecStart=`), or only seen on the running command line.
    elsewhere: Vec<Value>,
    /// The flags whose value in effect one of `elsewhere` decides, so that an edit of the
    /// environment files alone changes nothing: `--resolv-conf` and `--cluster-domain` where
    /// the last on the command line is there (pflag keeps the last value of a string flag),
    /// `--cluster-dns` where any is (a string slice: the kubelet adds every one up).
    decided_elsewhere: Vec<String>,
}

/// Where the DNS flags the kubelet uses are set, in command-line order ([`FlagSites`]).
fn flag_sites(facts: &NodeFacts) -> FlagSites {
    let mut out = FlagSites {
        sites: Vec::new(),
        elsewhere: Vec::new(),
        decided_elsewhere: Vec::new(),
    };
    // Per flag, whether its last occurrence (any, for cluster-dns) is not an env file's.
    let mut decided: Vec<(&str, bool)> = Vec::new();
    for flag in &facts.kubelet.flags {
        if !DNS_FLAGS.contains(&flag.name.as_str()) || flag.source.kind != "flag" {
            continue;
        }
        let path = flag.source.path.as_deref().unwrap_or_default();
        let in_unit = crate::facts::systemd_unit::UNIT_DIRS
            .iter()
            .any(|d| path.starts_with(&format!("{d}/")));
        let in_env = match (&flag.source.detail, flag.source.line) {
            (Some(var), Some(line)) if !in_unit && !path.starts_with("/proc/") => {
                out.sites.push(json!({
                    "path": path,
                    "var": var,
                    "flag": flag.name,
                    "value": flag.value,
                    "line": line,
                }));
                true
            }
            _ => {
                out.elsewhere
                    .push(json!({ "flag": flag.name, "at": flag.source.at() }));
                false
            }
        };
        let adds_up = flag.name == "cluster-dns";
        match decided.iter_mut().find(|(name, _)| *name == flag.name) {
            Some((_, elsewhere)) => *elsewhere = !in_env || (adds_up && *elsewhere),
            None => decided.push((flag.name.as_str(), !in_env)),
        }
    }
    out.decided_elsewhere = decided
        .into_iter()
        .filter(|(_, elsewhere)| *elsewhere)
        .map(|(name, _)| name.to_owned())
        .collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::{VarOrigin, VarScope};

    fn host(key: &str, value: Value) -> Host {
        let mut host = Host::new("node1");
        host.vars.insert(key.into(), value);
        host.origins.insert(
            key.into(),
            VarOrigin {
                path: "inventory/mycluster/group_vars/all/all.yml".into(),
                line: Some(12),
                scope: VarScope::GroupVars("all".into()),
                template: None,
                literal: false,
            },
        );
        host
    }

    #[test]
    fn bad_upstream_servers_each_get_their_own_error_naming_the_file() {
        for (value, says) in [
            (json!(["1.2.3.4\nnameserver 6.6.6.6"]), "more than one word"),
            (
                json!("1.2.3.4\nnameserver 6.6.6.6"),
                "\"nameserver\" is not an IP address; resolv.conf takes addresses, not host names",
            ),
            (
                json!(["dns.example.com"]),
                "not an IP address; resolv.conf takes addresses, not host names",
            ),
            (json!(["127.0.0.53"]), "127.0.0.53 is a loopback address"),
            (json!(["::1"]), "::1 is a loopback address"),
            (json!(["224.0.0.251"]), "224.0.0.251 is a multicast address"),
            (json!(["ff02::fb"]), "ff02::fb is a multicast address"),
            (json!(["255.255.255.255"]), "the broadcast address"),
            (json!(["0.0.0.0"]), "the unspecified address"),
            (json!(["{{ dns_server }}"]), "a template"),
            (json!(["10.0.0.1%eth0"]), "not an IP address"),
            (json!({"a": 1}), "not a list of addresses"),
        ] {
            let err = check_upstreams(&host("upstream_dns_servers", value.clone()), false)
                .expect_err(&value.to_string());
            assert!(
                err.starts_with(
                    "upstream_dns_servers (set in inventory/mycluster/group_vars/all/all.yml:12)"
                ),
                "{err}"
            );
            assert!(err.contains(says), "{value}: {err}");
            assert!(!err.contains('\n'), "{err}");
        }
    }

    /// An inline `!vault` upstream_dns_servers in group_vars: before, its ciphertext was
    /// the value ("is the string \"$ANSIBLE_VAULT;...\", which Kubespray takes as a list
    /// of its characters"); it is a value dnsfix cannot know, with a warning at its line.
    #[test]
    fn a_vaulted_upstream_list_is_unknown_not_its_ciphertext() {
        let dir = std::env::temp_dir().join(format!("dnsfix-vaulted-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("group_vars")).expect("mkdir");
        std::fs::write(dir.join("hosts.ini"), "[kube_node]\nnode1\n").expect("write");
        std::fs::write(
            dir.join("group_vars/all.yml"),
            "dns_domain: cluster.local\nupstream_dns_servers: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  6162636465\n",
        )
        .expect("write");
        let inventory = crate::inventory::Inventory::load(&dir).expect("loads");
        let host = inventory.host("node1").expect("node1");
        let err = check_upstreams(host, true).expect_err("unknown");
        assert!(
            err.contains("`!vault`") && err.contains("all.yml:2"),
            "{err}"
        );
        assert!(!err.contains("ANSIBLE_VAULT"), "{err}");
        assert_eq!(
            host.var_list("upstream_dns_servers"),
            Some(vec![crate::inventory::VAULTED.to_owned()])
        );
        assert_eq!(host.var_set("upstream_dns_servers"), None);
        assert_eq!(host.var_truthy("upstream_dns_servers"), None);
        let warnings: Vec<String> = inventory
            .warnings()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("all.yml:2") && warnings[0].contains("!vault"),
            "{warnings:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn good_upstream_servers_pass_and_are_used() {
        for value in [
            json!(["192.0.2.53", "2001:db8::53", "fe80::1%eth0"]),
            json!("192.0.2.53, 198.51.100.53"),
            json!(["192.0.2.53"]),
            json!([]),
        ] {
            let good = host("upstream_dns_servers", value.clone());
            assert_eq!(check_upstreams(&good, false), Ok(()), "{value}");
        }
        let zoned = host(
            "upstream_dns_servers",
            json!(["fe80::1%eth0", "192.0.2.53"]),
        );
        let facts = crate::testing::facts_from(&[]);
        let (servers, source) = upstreams(&zoned, &facts, &BTreeSet::new(), &[]);
        assert_eq!(servers, ["fe80::1%eth0", "192.0.2.53"]);
        assert_eq!(source, "inventory upstream_dns_servers");
        // The host's resolver may use the link-local server; pods may not.
        assert_eq!(pod_reachable(&servers), ["192.0.2.53"]);
        assert_eq!(check_upstreams(&Host::new("plain"), true), Ok(()));
        // A bad `nameservers` does not matter while upstream_dns_servers is what is used.
        let mut both = host("upstream_dns_servers", json!(["192.0.2.53"]));
        both.vars
            .insert("nameservers".into(), json!(["dns.example.com"]));
        assert_eq!(check_upstreams(&both, false), Ok(()));
        both.vars.insert("upstream_dns_servers".into(), json!([]));
        assert!(check_upstreams(&both, false).is_err());
        // On a Kubespray node a string is refused: Kubespray iterates its characters.
        let string = host("upstream_dns_servers", json!("192.0.2.53,198.51.100.53"));
        let err = check_upstreams(&string, true).expect_err("a string");
        assert!(
            err.contains("write a list: upstream_dns_servers: [192.0.2.53, 198.51.100.53] in YAML"),
            "{err}"
        );
        assert_eq!(check_upstreams(&string, false), Ok(()));
        assert_eq!(
            check_upstreams(&host("upstream_dns_servers", json!([])), true),
            Ok(())
        );
    }

    /// Where NetworkManager runs a caching plugin, /etc/resolv.conf names only the plugin
    /// (dnsmasq's 127.0.0.1) and systemd-resolved does not run: NetworkManager's
    /// no-stub-resolv.conf still lists its connections' servers (nm-dns-manager.c, the file
    /// of tests/fixtures/rules/_upstream/k0s-1.34-rhel9-nm-dnsmasq). A stopped
    /// NetworkManager leaves it stale in /run: not used then.
    #[test]
    fn network_managers_own_list_gives_the_upstreams_behind_its_plugin() {
        let no_stub = "# Generated by NetworkManager\nsearch example.internal\nnameserver 192.0.2.53\nnameserver 198.51.100.53\n";
        let read = |nm: &str| {
            let mut raw = crate::testing::raw_from(&[
                (
                    "/etc/resolv.conf",
                    "# Generated by NetworkManager\nsearch example.internal\nnameserver 127.0.0.1\noptions edns0 trust-ad\n",
                ),
                ("/run/NetworkManager/no-stub-resolv.conf", no_stub),
            ]);
            crate::testing::set_units(&mut raw, &[("NetworkManager", nm)]);
            let facts = NodeFacts::from_raw("node1", &raw);
            upstreams(&Host::new("node1"), &facts, &BTreeSet::new(), &[])
        };
        assert_eq!(
            read("active"),
            (
                vec!["192.0.2.53".to_owned(), "198.51.100.53".to_owned()],
                rules::NM_NO_STUB.to_owned()
            )
        );
        assert_eq!(read("inactive"), (Vec::new(), String::new()));
    }

    /// Where NetworkManager writes systemd-resolved's stub address over a plain
    /// /etc/resolv.conf (dns=systemd-resolved, rc-manager unset on 1.22: symlink), neither
    /// the file nor NetworkManager's global DNS carries servers to it: `networkmanager_stub`,
    /// which the playbook stops at. From 1.28 (auto) it leaves the file alone: `file`.
    #[test]
    fn a_network_manager_writing_resolveds_stub_over_the_file_is_its_own_via() {
        // (version, NetworkManager's state, its wants link; via)
        let wants = crate::facts::raw::NM_UNIT_LINKS[0];
        for (version, state, enabled, via) in [
            ("1.22.10", "active", false, "networkmanager_stub"),
            ("1.36.6", "active", false, "file"),
            // Stopped and enabled, it writes the stub at the next boot.
            ("1.22.10", "inactive", true, "networkmanager_stub"),
            ("1.22.10", "inactive", false, "file"),
        ] {
            let mut raw = crate::testing::raw_from(&[
                (
                    "/usr/lib/NetworkManager/conf.d/10-dns-resolved.conf",
                    "[main]\ndns=systemd-resolved\n",
                ),
                ("/etc/resolv.conf", "nameserver 169.254.25.10\n"),
            ]);
            raw.file(
                &format!("/usr/lib/x86_64-linux-gnu/NetworkManager/{version}"),
                crate::facts::raw::FileState::Directory,
                None,
            );
            if enabled {
                raw.file(wants, crate::facts::raw::FileState::Present, None);
            }
            crate::testing::set_units(&mut raw, &[("NetworkManager", state)]);
            let facts = NodeFacts::from_raw("node1", &raw);
            let json = host_resolver(&facts, &BTreeSet::new());
            assert_eq!(json["via"], via, "{version} {state} {enabled}");
        }
    }

    /// `host_resolver.via` is the only place the owner of /etc/resolv.conf reaches as a
    /// string: every name is another, and every name host-upstream-dns compares it with
    /// (`via == 'x'`, `via in ['x', ...]`) is one of them, so a misspelt name in the YAML
    /// fails here rather than leaving a task that never runs.
    #[test]
    fn the_playbook_compares_via_with_names_the_plan_gives() {
        use crate::diagnose::rules::Via;
        for (i, via) in Via::ALL.iter().enumerate() {
            assert_eq!(via.index(), i, "{via:?} is not at its place in Via::ALL");
        }
        let names: Vec<&str> = Via::ALL.iter().map(|v| v.name()).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        let yaml = include_str!("../../playbooks/30-host-upstream-dns.yml");
        let mut compared = Vec::new();
        for (at, _) in yaml.match_indices("via ") {
            let rest = &yaml[at + 4..];
            let list = if let Some(one) = rest.strip_prefix("== '") {
                one.split('\'').take(1).collect::<Vec<_>>()
            } else if let Some(many) = rest.strip_prefix("in [") {
                let inside = many.split(']').next().unwrap_or_default();
                inside
                    .split(',')
                    .map(|w| w.trim().trim_matches('\''))
                    .collect()
            } else {
                continue;
            };
            compared.extend(list);
        }
        assert!(compared.len() > 10, "{compared:?}");
        for name in compared {
            assert!(
                names.contains(&name),
                "via == {name:?}: not one of {names:?}"
            );
        }
    }

    /// A plain /etc/resolv.conf that dhcpcd, openresolv, udhcpc or netconfig writes anew is
    /// theirs (the playbook blocks, naming where each takes servers), with what shows it;
    /// the same file with nothing shown to write it is `file`.
    #[test]
    fn a_program_writing_the_plain_file_is_its_via() {
        let base = crate::testing::rules_fixture(
            "DNS-RESOLV-MANAGED-ELSEWHERE/dhcpcd-9.4-writes-resolv-conf",
        );
        let via = |raw: &crate::facts::raw::RawFacts| {
            let json = host_resolver(&NodeFacts::from_raw("node1", raw), &BTreeSet::new());
            (json["via"].clone(), json["writer_evidence"].clone())
        };
        let (dhcpcd, evidence) = via(&base);
        assert_eq!(dhcpcd, "dhcpcd");
        assert_eq!(
            evidence[0], "/etc/resolv.conf:1: # Generated by dhcpcd from ens5.dhcp",
            "{evidence}"
        );
        let mut stopped = base.clone();
        stopped.pids.remove("dhcpcd");
        stopped.all_pids.remove("dhcpcd");
        assert_eq!(via(&stopped).0, "file");
        let mut openresolv = crate::testing::with_files(
            &stopped,
            &[(
                "/etc/resolv.conf",
                "# Generated by resolvconf\nnameserver 192.0.2.53\n",
            )],
        );
        crate::testing::set_command(&mut openresolv, "resolvconf-bin", "/sbin/resolvconf\n", 0);
        assert_eq!(via(&openresolv).0, "openresolv");
        let netconfig = crate::testing::with_files(
            &stopped,
            &[
                (
                    "/etc/resolv.conf",
                    "### /etc/resolv.conf file autogenerated by netconfig!\nnameserver 192.0.2.53\n",
                ),
                (
                    "/etc/sysconfig/network/config",
                    "NETCONFIG_DNS_POLICY=\"auto\"\n",
                ),
            ],
        );
        assert_eq!(via(&netconfig).0, "netconfig");
        // Since sysconfig 0.85 /etc/resolv.conf links to the file netconfig writes: its
        // (functions.netconfig `netconfig_check_and_link`), not another tool's.
        let mut linked = netconfig.clone();
        let file = linked.files.get_mut("/etc/resolv.conf").expect("file");
        file.symlink_target = Some("/run/netconfig/resolv.conf".into());
        file.canonical = Some("/run/netconfig/resolv.conf".into());
        let (netconfig_s, evidence) = via(&linked);
        assert_eq!(netconfig_s, "netconfig");
        assert_eq!(
            evidence[0], "/etc/resolv.conf links to /run/netconfig/resolv.conf (netconfig's link)",
            "{evidence}"
        );
        let mut udhcpc = stopped.clone();
        udhcpc.pids.insert("udhcpc".into(), 2401);
        udhcpc.all_pids.insert("udhcpc".into(), vec![2401]);
        udhcpc.file(
            "/proc/2401/cmdline",
            crate::facts::raw::FileState::Present,
            Some(b"/sbin/udhcpc\0-b\0-R\0-i\0eth0\0"),
        );
        assert_eq!(via(&udhcpc).0, "udhcpc");
    }

    /// Where NetworkManager has written systemd-resolved's stub over the file already, the
    /// servers the node asks are systemd-resolved's: `resolved` (its drop-in) where it starts
    /// at boot, else `networkmanager_stub` judged by its uplink file (which the playbook
    /// stops at); a file of the cluster address NetworkManager has not written over yet
    /// stays `networkmanager_stub` judged by itself.
    #[test]
    fn a_stub_network_manager_wrote_is_judged_by_systemd_resolveds_servers() {
        // (/etc/resolv.conf, systemd-resolved's is-enabled; via, only_cluster)
        for (etc, enabled, via, only_cluster) in [
            ("nameserver 127.0.0.53\n", "enabled", "resolved", true),
            (
                "nameserver 127.0.0.53\n",
                "disabled",
                "networkmanager_stub",
                true,
            ),
            (
                "nameserver 169.254.25.10\n",
                "enabled",
                "networkmanager_stub",
                true,
            ),
        ] {
            let mut raw = crate::testing::raw_from(&[
                (
                    "/usr/lib/NetworkManager/conf.d/10-dns-resolved.conf",
                    "[main]\ndns=systemd-resolved\n",
                ),
                ("/etc/resolv.conf", etc),
                (
                    "/run/systemd/resolve/resolv.conf",
                    "nameserver 169.254.25.10\n",
                ),
            ]);
            raw.file(
                "/usr/lib/x86_64-linux-gnu/NetworkManager/1.22.10",
                crate::facts::raw::FileState::Directory,
                None,
            );
            let units = [("NetworkManager", "active"), ("systemd-resolved", "active")];
            crate::testing::set_units(&mut raw, &units);
            crate::testing::set_command(&mut raw, "resolved-enabled", &format!("{enabled}\n"), 0);
            let facts = NodeFacts::from_raw("node1", &raw);
            let cluster = BTreeSet::from(["169.254.25.10".parse().expect("ip")]);
            let json = host_resolver(&facts, &cluster);
            assert_eq!(json["via"], via, "{etc} {enabled}");
            assert_eq!(json["only_cluster"], only_cluster, "{etc} {enabled}");
        }
    }

    /// A copy of systemd-resolved's stub over a plain /etc/resolv.conf that NetworkManager
    /// (dns=default) writes, running or at its next boot: the node asks systemd-resolved,
    /// whose uplink file lists only the cluster address. DNS-CLUSTER-SELF-FORWARD judges
    /// that file (high), and the plan must judge the same one: it judged the stub copy
    /// (127.0.0.53, no cluster address) and ran nothing under the high finding.
    #[test]
    fn the_plan_judges_the_host_resolver_the_rule_judges_under_network_manager() {
        // (NetworkManager's state, a link enabling it; the via that writes /etc/resolv.conf)
        for (nm, enabled, via) in [
            ("active", false, "networkmanager"),
            ("inactive", true, "networkmanager_at_boot"),
        ] {
            let mut files = vec![
                (
                    "/etc/NetworkManager/NetworkManager.conf",
                    "[main]\ndns=default\n",
                ),
                ("/etc/resolv.conf", "nameserver 127.0.0.53\n"),
                (
                    "/run/systemd/resolve/resolv.conf",
                    "nameserver 169.254.25.10\n",
                ),
            ];
            if enabled {
                files.push((crate::facts::raw::NM_UNIT_LINKS[0], "[Unit]\n"));
            }
            let mut raw = crate::testing::raw_from(&files);
            let units = [("NetworkManager", nm), ("systemd-resolved", "active")];
            crate::testing::set_units(&mut raw, &units);
            let facts = NodeFacts::from_raw("node1", &raw);
            let cluster = BTreeSet::from(["169.254.25.10".parse().expect("ip")]);
            let json = host_resolver(&facts, &cluster);
            assert_eq!(json["via"], via, "{nm}");
            assert_eq!(json["only_cluster"], true, "{nm}");
            assert_eq!(
                json["cluster_nameservers"],
                json!(["169.254.25.10"]),
                "{nm}"
            );
            let host = Host::new("node1");
            let diagnosis = crate::diagnose::diagnose_host(&host, &facts);
            let finding = diagnosis
                .findings()
                .find(|f| f.id == "DNS-CLUSTER-SELF-FORWARD")
                .expect("DNS-CLUSTER-SELF-FORWARD");
            assert_eq!(finding.severity, crate::diagnose::Severity::High, "{nm}");
        }
    }

    /// systemd-resolved runs without its stub listener (DNSStubListener=no: nothing on port
    /// 53 of 127.0.0.53 or of every address in the socket tables) while /etc/resolv.conf
    /// still names the stub (a copy of it, or the link to its stub file of a systemd older
    /// than 246): the node asks no server at all, DNS-HOST-RESOLVER-DOWN's case. Neither the
    /// rule nor the plan judges systemd-resolved's uplink file then: a resolved drop-in
    /// claimed to fix DNS-CLUSTER-SELF-FORWARD while the node still asked a dead stub. With
    /// the socket tables unread the stub is taken to answer, as before.
    #[test]
    fn a_stub_nothing_answers_is_not_judged_by_systemd_resolveds_servers() {
        const UDP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n 7976: 3600007F:14E9 00000000:0000 07 00000000:00000000 00:00000000 00000000   997        0 5755981 2 00000000fe1cd024 0\n";
        const UDP6: &str = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n";
        const STUB: &str = "nameserver 127.0.0.53\noptions edns0 trust-ad\n";
        // (/etc/resolv.conf a link to the stub file, the socket tables read; via, only_cluster)
        for (link, tables, via, only_cluster) in [
            (false, true, "file", false),
            (true, true, "resolved", false),
            (false, false, "resolved", true),
            (true, false, "resolved", true),
        ] {
            let mut files = vec![(
                "/run/systemd/resolve/resolv.conf",
                "nameserver 169.254.25.10\n",
            )];
            if !link {
                files.push(("/etc/resolv.conf", STUB));
            }
            if tables {
                files.extend([("/proc/net/udp", UDP), ("/proc/net/udp6", UDP6)]);
            }
            let mut raw = crate::testing::raw_from(&files);
            if link {
                let stub = "/run/systemd/resolve/stub-resolv.conf";
                raw.link("/etc/resolv.conf", stub, stub, STUB.as_bytes());
            }
            crate::testing::set_units(&mut raw, &[("systemd-resolved", "active")]);
            crate::testing::set_command(&mut raw, "resolved-enabled", "enabled\n", 0);
            let facts = NodeFacts::from_raw("node1", &raw);
            let cluster = BTreeSet::from(["169.254.25.10".parse().expect("ip")]);
            let json = host_resolver(&facts, &cluster);
            assert_eq!(json["via"], via, "link {link}, tables {tables}");
            assert_eq!(
                json["only_cluster"], only_cluster,
                "link {link}, tables {tables}"
            );
            let host = Host::new("node1");
            let diagnosis = crate::diagnose::diagnose_host(&host, &facts);
            let self_forward = diagnosis
                .findings()
                .any(|f| f.id == "DNS-CLUSTER-SELF-FORWARD");
            assert_eq!(self_forward, only_cluster, "link {link}, tables {tables}");
        }
    }

    /// With dns=none (or rc-manager=unmanaged) /etc/resolv.conf is the administrator's,
    /// whose loopback server is a resolver of their own: NetworkManager's list of its
    /// connections' servers does not stand in for it.
    #[test]
    fn network_managers_list_is_not_used_where_it_leaves_resolv_conf_alone() {
        for (conf, etc, used) in [
            ("[main]\ndns=dnsmasq\n", "nameserver 127.0.0.1\n", true),
            ("[main]\ndns=none\n", "nameserver 127.0.0.1\n", false),
            (
                "[main]\nrc-manager=unmanaged\n",
                "nameserver 127.0.0.1\n",
                false,
            ),
            // A loopback server that is no plugin of NetworkManager's.
            ("[main]\n", "nameserver 127.0.0.2\n", false),
        ] {
            let mut raw = crate::testing::raw_from(&[
                ("/etc/NetworkManager/NetworkManager.conf", conf),
                ("/etc/resolv.conf", etc),
                (
                    "/run/NetworkManager/no-stub-resolv.conf",
                    "# Generated by NetworkManager\nnameserver 192.0.2.1\n",
                ),
            ]);
            crate::testing::set_units(&mut raw, &[("NetworkManager", "active")]);
            let facts = NodeFacts::from_raw("node1", &raw);
            let (servers, _) = upstreams(&Host::new("node1"), &facts, &BTreeSet::new(), &[]);
            assert_eq!(!servers.is_empty(), used, "{conf:?} {etc:?}");
        }
    }

    /// The real servers of the kubelet's own file stay the pods' upstreams: the plan does
    /// not trade them for systemd-resolved's; k3s's generated fallback (its guess) is no
    /// such choice, nor a loopback or cluster address.
    #[test]
    fn the_kubelets_own_servers_are_kept() {
        let context = |fixture: &str| {
            let facts = NodeFacts::from_raw("node1", &crate::testing::rules_fixture(fixture));
            build(&Host::new("node1"), &facts, &[], None, None)
        };
        let empty_line = context("DNS-KUBELET-RESOLVCONF-MISSING/empty-nameserver-line");
        assert_eq!(empty_line["kubelet_own_servers"], json!(["10.20.0.53"]));
        assert_eq!(empty_line["uplink_has_kubelet_servers"], json!(false));
        assert_eq!(empty_line["upstreams"], json!(["10.20.0.53"]));
        assert_eq!(
            empty_line["upstreams_source"],
            "/etc/kubernetes/resolv.conf"
        );

        let healthy = context("_healthy/kubespray-ubuntu2204");
        assert_eq!(healthy["uplink_has_kubelet_servers"], json!(true));
        let stub = context("DNS-KUBELET-LOOPBACK/kubeadm-1.33-config-dir-dropin");
        assert_eq!(stub["kubelet_own_servers"], json!([]));
        assert_eq!(stub["uplink_has_kubelet_servers"], json!(true));
        let k3s = context("DNS-K3S-FALLBACK/k3s-auto-fallback");
        assert_eq!(k3s["kubelet_own_servers"], json!([]));
    }

    /// The options dnsPolicy: Default pods get from the kubelet's file are those of its last
    /// `options` line (dns.go parseResolvConf), an admin's kept; `edns0` and `trust-ad` go
    /// only where that file named a resolver on the node alone (systemd-resolved's stub,
    /// NetworkManager's dnsmasq), which wrote them for itself.
    #[test]
    fn pods_keep_the_options_of_the_kubelets_file_but_not_a_local_resolvers() {
        let fixture = "DNS-KUBELET-RESOLVCONF-MISSING/empty-nameserver-line";
        let options = |text: &str| {
            let raw = crate::testing::with_files(
                &crate::testing::rules_fixture(fixture),
                &[("/etc/kubernetes/resolv.conf", text)],
            );
            let facts = NodeFacts::from_raw("node1", &raw);
            build(&Host::new("node1"), &facts, &[], None, None)["kubelet_pod_options"].clone()
        };
        assert_eq!(
            options(
                "nameserver 10.20.0.53\noptions ndots:2\noptions timeout:1 attempts:2 rotate\n"
            ),
            json!(["timeout:1", "attempts:2", "rotate"])
        );
        assert_eq!(
            options("nameserver 127.0.0.53\noptions edns0 trust-ad timeout:1\n"),
            json!(["timeout:1"])
        );
        assert_eq!(
            options("nameserver 127.0.0.1\noptions edns0 trust-ad\n"),
            json!([])
        );
        // Beside a real server, they were the admin's for it too.
        assert_eq!(
            options("nameserver 127.0.0.1\nnameserver 10.20.0.53\noptions edns0 trust-ad\n"),
            json!(["edns0", "trust-ad"])
        );
        assert_eq!(options("nameserver 10.20.0.53\n"), json!([]));
        // Words no resolver takes, control characters among them, are not written.
        assert_eq!(
            options(
                "nameserver 10.20.0.53\noptions rotate \x1b[2J ndots:x a\x07b no_tld_query ndots: timeout:1\n"
            ),
            json!(["rotate", "no_tld_query", "ndots:", "timeout:1"])
        );

        // Where the kubelet's file is missing, they are those of the file the servers come
        // from, which pods never had: the plan does not say pods lose them.
        let missing = crate::testing::with_files(
            &crate::testing::rules_fixture(
                "DNS-KUBELET-RESOLVCONF-MISSING/kubeadm-relative-resolv-conf",
            ),
            &[(
                "/etc/resolv.conf",
                "nameserver 192.0.2.53\noptions rotate timeout:1\n",
            )],
        );
        let missing = build(
            &Host::new("node1"),
            &NodeFacts::from_raw("node1", &missing),
            &[],
            None,
            None,
        );
        assert_eq!(missing["kubelet_pod_options_from_kubelet"], json!(false));
        let kubelets = crate::testing::with_files(
            &crate::testing::rules_fixture(fixture),
            &[(
                "/etc/kubernetes/resolv.conf",
                "nameserver 10.20.0.53\noptions rotate\n",
            )],
        );
        let kubelets = build(
            &Host::new("node1"),
            &NodeFacts::from_raw("node1", &kubelets),
            &[],
            None,
            None,
        );
        assert_eq!(kubelets["kubelet_pod_options_from_kubelet"], json!(true));

        let stub = NodeFacts::from_raw(
            "node1",
            &crate::testing::rules_fixture("DNS-KUBELET-LOOPBACK/kubeadm-1.33-config-dir-dropin"),
        );
        let context = build(&Host::new("node1"), &stub, &[], None, None);
        assert_eq!(context["kubelet_pod_options"], json!([]));
    }

    /// The kubeadm node of a kubelet of unknown version whose `--config-dir` drop-in decides
    /// its file by version, with /etc/kubernetes/resolv.conf (not written here) in its config
    /// file, the 1.28 to 1.31 reading.
    fn version_unknown_kubelet() -> crate::facts::raw::RawFacts {
        let mut raw = crate::testing::rules_fixture(
            "DNS-KUBELET-LOOPBACK/kubeadm-config-dir-dropin-version-unknown",
        );
        crate::testing::replace_in_file(
            &mut raw,
            "/var/lib/kubelet/config.yaml",
            "resolvConf: /run/systemd/resolve/resolv.conf",
            "resolvConf: /etc/kubernetes/resolv.conf",
        );
        raw
    }

    /// A kubelet of unknown version whose drop-in gives kubelet 1.28 to 1.31 and 1.32 on
    /// different files: Default pods get the options of one file or of the other, so those
    /// the plan keeps are the ones both files give, and they are the kubelet's. Before, the
    /// options came from the file the upstream servers come from (here the 1.28 to 1.31
    /// reading's, its `ndots:2` too, which a 1.32 kubelet never gave pods), said not to be
    /// the kubelet's.
    #[test]
    fn a_kubelet_of_unknown_version_keeps_the_options_both_readings_give() {
        let mut raw = version_unknown_kubelet();
        crate::testing::replace_in_file(
            &mut raw,
            "/etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf",
            "resolvConf: /etc/resolv.conf",
            "resolvConf: /etc/kubernetes/resolv-1.32.conf",
        );
        let raw = crate::testing::with_files(
            &raw,
            &[
                (
                    "/etc/kubernetes/resolv.conf",
                    "nameserver 10.20.0.53\nsearch example.internal corp.example\noptions ndots:2 timeout:1 rotate\n",
                ),
                (
                    "/etc/kubernetes/resolv-1.32.conf",
                    "nameserver 10.20.0.54\nsearch corp.example\noptions rotate attempts:3 timeout:1\n",
                ),
            ],
        );
        let facts = NodeFacts::from_raw("node1", &raw);
        assert!(facts.kubelet.resolv_conf_by_version.is_some());
        assert!(facts.kubelet.pod_resolv_conf.is_none());
        let context = build(&Host::new("node1"), &facts, &[], None, None);
        assert_eq!(
            context["kubelet_pod_options"],
            json!(["timeout:1", "rotate"])
        );
        assert_eq!(context["kubelet_pod_options_from_kubelet"], json!(true));
        assert_eq!(context["kubelet_pod_search"], json!(["corp.example"]));

        // Where one reading names no file there to read, pods of that version get none of
        // its options: none are sure.
        let mut one = raw.clone();
        one.file(
            "/etc/kubernetes/resolv-1.32.conf",
            crate::facts::raw::FileState::Missing,
            None,
        );
        let context = build(
            &Host::new("node1"),
            &NodeFacts::from_raw("node1", &one),
            &[],
            None,
            None,
        );
        assert_eq!(context["kubelet_pod_options"], json!([]));
        assert_eq!(context["kubelet_pod_options_from_kubelet"], json!(true));
    }

    /// A kubelet of unknown version whose drop-in gives kubelet 1.28 to 1.31 and 1.32 on
    /// different files: the real servers of either are its own, and the fix keeps them (here
    /// the 1.28 to 1.31 file's 10.20.0.53, which systemd-resolved's uplink file lacks, over the
    /// 1.32 reading's stub). The file to edit is the drop-in that decides, with both
    /// spellings.
    #[test]
    fn a_kubelet_of_unknown_version_keeps_the_servers_of_either_reading() {
        let raw = version_unknown_kubelet();
        let raw = crate::testing::with_files(
            &raw,
            &[("/etc/kubernetes/resolv.conf", "nameserver 10.20.0.53\n")],
        );
        let facts = NodeFacts::from_raw("node1", &raw);
        assert!(facts.kubelet.resolv_conf_by_version.is_some());
        let context = build(&Host::new("node1"), &facts, &[], None, None);
        assert_eq!(context["kubelet_own_servers"], json!(["10.20.0.53"]));
        assert_eq!(context["uplink_has_kubelet_servers"], json!(false));
        assert_eq!(context["upstreams"], json!(["10.20.0.53"]));
        assert_eq!(context["upstreams_source"], "/etc/kubernetes/resolv.conf");
        assert_eq!(context["kubelet_resolv_clean"], json!(false));
        assert_eq!(
            context["kubelet_resolv_conf_file"],
            "/etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf"
        );
        assert_eq!(context["kubelet_resolv_conf_in_dropin"], json!(true));
    }

    /// A drop-in's lowercase `resolverconfig` sorts after the `resolverConfig` the plan writes
    /// into the deciding drop-in ('c' > 'C') and wins for kubelet 1.28 to 1.31
    /// (kubernetes#126630): the context names it and its file for the playbook to set too,
    /// and the advice of the unknown reading names it. A kubelet known to be 1.32 or later
    /// reads none of them.
    #[test]
    fn a_spelling_of_resolver_config_that_beats_the_written_one_is_named() {
        let dropin = "/etc/kubernetes/kubelet.conf.d/10-old.conf";
        let raw = crate::testing::with_files(
            &crate::testing::rules_fixture(
                "DNS-KUBELET-LOOPBACK/kubeadm-config-dir-dropin-version-unknown",
            ),
            &[
                (
                    dropin,
                    "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nresolverconfig: /etc/kubernetes/old.conf\n",
                ),
                ("/etc/kubernetes/old.conf", "nameserver 10.20.0.53\n"),
            ],
        );
        let facts = NodeFacts::from_raw("node1", &raw);
        let by = facts
            .kubelet
            .resolv_conf_by_version
            .as_ref()
            .expect("undecided");
        assert!(
            by.why.contains(&format!(
                "in /etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf, and resolverconfig in {dropin} to it too"
            )),
            "{}",
            by.why
        );
        let context = build(&Host::new("node1"), &facts, &[], None, None);
        assert_eq!(
            context["kubelet_resolver_config_left"],
            json!({"key": "resolverconfig", "file": dropin})
        );
        for (version, left) in [("v1.31.4", true), ("v1.32.0", false)] {
            let known = Some((version.to_owned(), "kubelet --version".to_owned()));
            let context = build(&Host::new("node1"), &facts, &[], known, None);
            assert_eq!(
                context["kubelet_resolver_config_left"].is_object(),
                left,
                "{version}"
            );
        }
    }

    /// The cluster DNS Services read from the cluster are the cluster's own addresses for
    /// the playbooks too: a kubelet file listing the kube-dns Service is no clean file, and
    /// the Service is no upstream ([`crate::testing::kubeadm_ipvs_nodelocal_with_service_in_file`]).
    #[test]
    fn the_clusters_dns_services_are_no_upstreams() {
        let (facts, cluster) = crate::testing::kubeadm_ipvs_nodelocal_with_service_in_file();
        let host = Host::new("node1");
        let context = build(&host, &facts, &[], None, Some(&cluster));
        assert_eq!(context["kubelet_resolv_clean"], json!(false));
        assert_eq!(context["resolved_uplink_clean"], json!(false));
        assert_eq!(context["kubelet_own_servers"], json!(["192.0.2.53"]));
        assert_eq!(context["upstreams"], json!(["192.0.2.53"]));
        assert!(
            context["cluster_addresses"]
                .as_array()
                .is_some_and(|a| a.contains(&json!("10.96.0.10"))),
            "{}",
            context["cluster_addresses"]
        );
        // The rules take the same set.
        let ctx = crate::diagnose::rules::Ctx::in_cluster(&host, &facts, Some(&cluster));
        let same: Vec<String> = ctx.cluster.iter().map(ToString::to_string).collect();
        assert_eq!(context["cluster_addresses"], json!(same));
    }

    /// Kubespray's last play writes its cluster address into systemd-resolved (DNS= in
    /// resolved.conf.d/kubespray.conf, with host_resolvconf and a dns_mode other than
    /// none), its earlier plays the same drop-in without it. So where a run stopped before
    /// that play left the uplink file clean, it is no file for the kubelet while CoreDNS
    /// forwards to it (no upstream_dns_servers): kubelet-resolvconf must not point the
    /// kubelet there (kubespray#9948 after the next cluster.yml). The Kubespray HEAD
    /// Ubuntu 22.04 node, with the drop-in of the first play (resolved.conf.j2 with
    /// dns_late false: no DNS= line) and the uplink file it gives.
    #[test]
    fn the_uplink_file_is_no_fix_where_kubesprays_next_run_makes_it_loop() {
        const DROP_IN: &str = "/etc/systemd/resolved.conf.d/kubespray.conf";
        let mut raw = crate::testing::rules_fixture("_upstream/kubespray-head-ubuntu2204-default");
        crate::testing::replace_in_file(&mut raw, DROP_IN, "DNS=169.254.25.10\n", "");
        crate::testing::replace_in_file(
            &mut raw,
            "/run/systemd/resolve/resolv.conf",
            "nameserver 169.254.25.10\n",
            "",
        );
        let clean = |raw: &crate::facts::raw::RawFacts, host: &Host| {
            let facts = NodeFacts::from_raw("node1", raw);
            build(host, &facts, &[], None, None)["resolved_uplink_clean"].clone()
        };
        assert_eq!(
            clean(&raw, &Host::new("node1")),
            json!(false),
            "Kubespray's defaults"
        );
        for (key, value) in [
            ("resolvconf_mode", json!("none")),
            ("dns_mode", json!("none")),
            ("upstream_dns_servers", json!(["192.0.2.53"])),
        ] {
            assert_eq!(
                clean(&raw, &host(key, value.clone())),
                json!(true),
                "{key}: {value}"
            );
        }
        assert_eq!(
            clean(&raw, &host("resolvconf_mode", json!("{{ my_mode }}"))),
            json!(false),
            "a mode dnsfix cannot read may be host_resolvconf"
        );
        // Nothing Kubespray deploys forwards to the kubelet's file: no CoreDNS of its own
        // (dns_mode manual), no nodelocaldns.
        let mut manual = Host::new("node1");
        manual.vars.insert("dns_mode".into(), json!("manual"));
        manual
            .vars
            .insert("enable_nodelocaldns".into(), json!(false));
        assert_eq!(clean(&raw, &manual), json!(true), "dns_mode manual");
        // An upstream_dns_servers Ansible renders is one too: CoreDNS forwards there.
        assert_eq!(
            clean(
                &raw,
                &host("upstream_dns_servers", json!(["{{ corp_dns }}"]))
            ),
            json!(true),
            "a templated upstream_dns_servers"
        );
        // A complete run wrote DNS= and a later drop-in resets the list: the next run
        // writes the same, and the reset keeps the uplink file clean after it too.
        let mut complete = raw.clone();
        crate::testing::replace_in_file(
            &mut complete,
            DROP_IN,
            "[Resolve]\n",
            "[Resolve]\nDNS=169.254.25.10\n",
        );
        complete.file(
            "/etc/systemd/resolved.conf.d/zz-local.conf",
            crate::facts::raw::FileState::Present,
            Some(b"[Resolve]\nDNS=\nDNS=192.0.2.53\n"),
        );
        assert_eq!(
            clean(&complete, &Host::new("node1")),
            json!(true),
            "a complete run, its DNS= reset by a later drop-in"
        );
        // Without Kubespray's drop-in the node's resolved is not Kubespray's to write.
        raw.files.remove(DROP_IN);
        assert_eq!(clean(&raw, &Host::new("node1")), json!(true), "no drop-in");
    }

    /// node-cache may hold the kube-dns Service's address beside its own (`-localip
    /// LINK_LOCAL,SERVICE_IP`): the playbooks' nodelocaldns_ip is the cache's own, in
    /// whatever order the interface lists them, as the rules name it.
    #[test]
    fn nodelocaldns_ip_is_the_cache_s_own_address() {
        let mut facts = crate::testing::facts_from(&[]);
        facts.nodelocaldns = Some(vec!["10.96.0.10".into(), "169.254.20.10".into()]);
        assert_eq!(nodelocaldns_ipv4(&facts).as_deref(), Some("169.254.20.10"));
        facts.nodelocaldns = Some(vec!["fd00::a".into(), "10.0.0.10".into()]);
        assert_eq!(nodelocaldns_ipv4(&facts).as_deref(), Some("10.0.0.10"));
    }

    /// A stopped kubelet of a unit whose drop-in writes DNS flags into `ExecStart=` around
    /// `$KUBELET_EXTRA_ARGS`, which /etc/default/kubelet sets (10-kubeadm.conf's layout).
    fn flags_around_extra_args(exec: &str) -> FlagSites {
        let facts = crate::testing::facts_from(&[
            (
                "/usr/lib/systemd/system/kubelet.service",
                "[Service]\nExecStart=/usr/bin/kubelet\n",
            ),
            (
                "/etc/systemd/system/kubelet.service.d/20-dns.conf",
                &format!(
                    "[Service]\nEnvironmentFile=-/etc/default/kubelet\nExecStart=\nExecStart={exec}\n"
                ),
            ),
            (
                "/etc/default/kubelet",
                "KUBELET_EXTRA_ARGS=--cluster-dns=169.254.25.10 --resolv-conf=/etc/kubelet-resolv.conf\n",
            ),
        ]);
        flag_sites(&facts)
    }

    /// An env file's flag decides only where no unit file or drop-in overrides it: pflag
    /// keeps the last --resolv-conf, and adds every --cluster-dns up, so a drop-in's
    /// --cluster-dns stays in clusterDNS wherever it is.
    #[test]
    fn a_flag_of_a_unit_file_decides_over_the_env_file_where_it_counts() {
        let before = flags_around_extra_args(
            "/usr/bin/kubelet --cluster-dns=10.96.0.10 --resolv-conf=/a $KUBELET_EXTRA_ARGS",
        );
        assert_eq!(before.sites.len(), 2, "{:?}", before.sites);
        assert_eq!(
            before.elsewhere,
            vec![
                json!({"flag": "cluster-dns", "at": "/etc/systemd/system/kubelet.service.d/20-dns.conf:4"}),
                json!({"flag": "resolv-conf", "at": "/etc/systemd/system/kubelet.service.d/20-dns.conf:4"}),
            ]
        );
        assert_eq!(before.decided_elsewhere, vec!["cluster-dns".to_owned()]);

        let after = flags_around_extra_args(
            "/usr/bin/kubelet $KUBELET_EXTRA_ARGS --resolv-conf=/a --cluster-dns=10.96.0.10",
        );
        assert_eq!(
            after.decided_elsewhere,
            vec!["cluster-dns".to_owned(), "resolv-conf".to_owned()]
        );

        let env_only = flags_around_extra_args("/usr/bin/kubelet $KUBELET_EXTRA_ARGS");
        assert_eq!(env_only.sites.len(), 2);
        assert!(env_only.elsewhere.is_empty());
        assert!(env_only.decided_elsewhere.is_empty());
    }

    /// An empty `--resolv-conf=` in k3s's ExecStart comes after config.yaml's on k3s's
    /// command line (configfilearg puts the files' values first) and asks for the automatic
    /// choice: an edit of config.yaml changes nothing, so the playbook names the unit line.
    #[test]
    fn an_empty_resolv_conf_in_exec_start_is_set_elsewhere() {
        let mut raw = crate::testing::rules_fixture("DNS-K3S-FALLBACK/k3s-auto-fallback");
        let context = |raw: &crate::facts::raw::RawFacts| {
            let facts = NodeFacts::from_raw("node1", raw);
            build(&Host::new("node1"), &facts, &[], None, None)
        };
        assert_eq!(context(&raw)["rancher_resolv_elsewhere"], Value::Null);
        raw.file(
            "/etc/systemd/system/k3s.service",
            crate::facts::raw::FileState::Present,
            Some(b"[Service]\nType=notify\nExecStart=/usr/local/bin/k3s server --resolv-conf=\n"),
        );
        crate::testing::replace_in_file(
            &mut raw,
            "/etc/rancher/k3s/config.yaml",
            "kubelet-arg:",
            "resolv-conf: /etc/k3s-resolv.conf\nkubelet-arg:",
        );
        let context = context(&raw);
        assert_eq!(
            context["rancher_resolv_elsewhere"],
            "--resolv-conf= (empty: their automatic choice) in the service's ExecStart at /etc/systemd/system/k3s.service:3"
        );
        assert_eq!(
            context["kubelet_resolv_conf"],
            "/var/lib/rancher/k3s/agent/etc/resolv.conf"
        );
    }
}
