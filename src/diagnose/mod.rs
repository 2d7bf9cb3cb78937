//! Diagnosis: findings from facts. Per-host rules (`rules`) and fleet drift (`drift`) are
//! pure functions of the gathered facts and the inventory; nothing here does I/O. The
//! stable ids and their explanations live in `catalog`.

mod by_version;
pub mod catalog;
pub mod cluster;
mod corefile_loop;
pub mod drift;
pub mod finding;
pub mod rules;

pub use finding::{Finding, FindingStatus, Severity};
pub use rules::RuleOutcome;

use crate::facts::NodeFacts;
use crate::inventory::Host;

/// Every rule's outcome for one host.
#[derive(Debug, Clone)]
pub struct HostDiagnosis {
    pub host: String,
    /// (rule id, outcome) for every per-host rule, then DNS-FLEET-DRIFT.
    pub outcomes: Vec<(&'static str, RuleOutcome)>,
}

impl HostDiagnosis {
    pub fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.outcomes.iter().flat_map(|(_, o)| match o {
            RuleOutcome::Findings(f) => f.as_slice(),
            _ => &[],
        })
    }

    /// The worst severity among the findings that failed; an unknown (a rule that could
    /// not tell) never makes a host look critical.
    pub fn worst(&self) -> Option<Severity> {
        self.findings()
            .filter(|f| f.status == FindingStatus::Failed)
            .map(|f| f.severity)
            .max()
    }

    /// Rules that could not tell.
    pub fn unknowns(&self) -> usize {
        self.findings()
            .filter(|f| f.status == FindingStatus::Unknown)
            .count()
    }

    /// No kubelet configuration was found on the host, so the kubelet's rules (most of
    /// them) did not apply: no finding there says nothing about pods' DNS, and the host is
    /// not "clean" (a workstation, an etcd-only or bastion host, a node dnsfix cannot read
    /// as one).
    pub fn no_kubelet(&self) -> bool {
        self.outcomes.iter().any(|(id, o)| {
            *id == rules::KUBELET_LOOPBACK
                && matches!(o, RuleOutcome::NotApplicable(why) if why == rules::NO_KUBELET)
        })
    }
}

/// An undeclared search domain every peer node has too is a site's own (a corporate
/// domain: info); one that some peers lack comes from each node's own DHCP (a cloud region
/// or project suffix: warning), because pods then resolve differently node to node. Peers
/// are the gathered hosts that share an inventory group with the host (other than `all`
/// and `ungrouped`), else every gathered host; domains are compared one by one.
fn stray_search_across_fleet(gathered: &[(&Host, &NodeFacts)], out: &mut [HostDiagnosis]) {
    use std::collections::BTreeSet;
    let domains = |f: &NodeFacts| -> Option<BTreeSet<String>> {
        let p = f.kubelet.pod_resolv_conf.as_ref()?.parsed.as_ref()?;
        Some(
            p.kubelet_search()
                .into_iter()
                .map(|d| d.trim_end_matches('.').to_ascii_lowercase())
                .collect(),
        )
    };
    let groups = |h: &Host| -> BTreeSet<String> {
        h.groups
            .iter()
            .filter(|g| !matches!(g.as_str(), "all" | "ungrouped"))
            .cloned()
            .collect()
    };
    let hosts: Vec<(&Host, BTreeSet<String>)> = gathered
        .iter()
        .filter_map(|(h, f)| Some((*h, domains(f)?)))
        .collect();
    for d in out.iter_mut() {
        let Some((me, mine)) = hosts.iter().find(|(h, _)| h.name == d.host) else {
            continue;
        };
        let my_groups = groups(me);
        let mut peers: Vec<&(&Host, BTreeSet<String>)> = hosts
            .iter()
            .filter(|(h, _)| h.name != me.name && !groups(h).is_disjoint(&my_groups))
            .collect();
        if peers.is_empty() {
            peers = hosts.iter().filter(|(h, _)| h.name != me.name).collect();
        }
        // My domains that some peer lacks.
        let node_specific: Vec<(String, Vec<&str>)> = mine
            .iter()
            .filter_map(|domain| {
                let lacking: Vec<&str> = peers
                    .iter()
                    .filter(|(_, theirs)| !theirs.contains(domain))
                    .map(|(h, _)| h.name.as_str())
                    .collect();
                (!lacking.is_empty()).then(|| (domain.clone(), lacking))
            })
            .collect();
        if node_specific.is_empty() {
            continue;
        }
        for (id, outcome) in &mut d.outcomes {
            if *id != "DNS-STRAY-SEARCH" {
                continue;
            }
            let RuleOutcome::Findings(found) = outcome else {
                continue;
            };
            for f in found
                .iter_mut()
                .filter(|f| f.severity == Severity::Info && f.status == FindingStatus::Failed)
            {
                // Only the stray domains of this finding (the summary names them).
                let mine: Vec<&(String, Vec<&str>)> = node_specific
                    .iter()
                    .filter(|(dom, _)| f.summary.contains(dom.as_str()))
                    .collect();
                if mine.is_empty() {
                    continue;
                }
                f.severity = Severity::Warning;
                f.summary = format!(
                    "{}; it is not on every node of the group, so it comes from this node's own DHCP and pods resolve differently node to node",
                    f.summary
                );
                for (dom, lacking) in mine {
                    let shown: Vec<&str> = lacking.iter().take(3).copied().collect();
                    f.evidence.push(format!(
                        "{dom} is not in the search list of {}{}",
                        shown.join(", "),
                        if lacking.len() > 3 {
                            format!(" and {} more", lacking.len() - 3)
                        } else {
                            String::new()
                        }
                    ));
                }
            }
        }
    }
}

/// Runs every per-host rule on one host.
pub fn diagnose_host(host: &Host, facts: &NodeFacts) -> HostDiagnosis {
    let known = settle(&[(host, facts)], None).pop().flatten();
    let facts = known.as_ref().unwrap_or(facts);
    run_rules(host, &rules::Ctx::in_cluster(host, facts, None))
}

/// [`diagnose_host`] of a node as a plan leaves it (its predicted facts), judged against
/// what the cluster says that no change to a node alters: its DNS Services and their
/// addresses, kube-proxy's ConfigMap (its mode, masqueradeAll, or that there is none),
/// where the CoreDNS pods run, the running kubelet's version. What a plan may change in
/// the cluster, the Corefiles (a `forward .` it sets) and so what they forward to, is left
/// out: the node's rules do not predict a plan's changes to the cluster (the cluster's
/// rules do, [`cluster::rules_planned`]).
pub fn diagnose_planned(
    host: &Host,
    facts: &NodeFacts,
    cluster: &crate::cluster::Cluster,
) -> HostDiagnosis {
    // Every field is named, so that one added to the context must be sorted here: carried
    // from the cluster, or left as the node alone gives it.
    let rules::Ctx {
        host: _,
        facts: _,
        cluster: addresses,
        kube_proxy_mode,
        kube_proxy_absent,
        kube_proxy_masquerade_all,
        coredns_placement,
        kubelet_version,
        dns_services,
        dns_services_elsewhere,
        coredns_forwards_to_file: _,
        corefile_forwards_to_file: _,
        coredns_configmap: _,
        coredns_owner: _,
        coredns_namespaces: _,
        coredns_helm_chart: _,
    } = rules::Ctx::in_cluster(host, facts, Some(cluster));
    let ctx = rules::Ctx {
        cluster: addresses,
        kube_proxy_mode,
        kube_proxy_absent,
        kube_proxy_masquerade_all,
        coredns_placement,
        kubelet_version,
        dns_services,
        dns_services_elsewhere,
        ..rules::Ctx::new(host, facts)
    };
    run_rules(host, &ctx)
}

fn run_rules(host: &Host, ctx: &rules::Ctx) -> HostDiagnosis {
    // A kubelet of unknown version that reads one file or another by its version: rules
    // judge both ([`by_version`]).
    let readings = by_version::reading_facts(ctx.facts);
    let outcomes = rules::RULES
        .iter()
        .map(|(id, rule)| (*id, by_version::judge(ctx, &readings, *rule, rule(ctx))))
        .collect();
    HostDiagnosis {
        host: host.name.clone(),
        outcomes,
    }
}

/// [`diagnose`], then what the cluster says about each host: its DNS pods and the
/// ConfigMaps (their rules come after DNS-FLEET-DRIFT), and the Corefiles' `forward`
/// lines as evidence where the harm of a node's resolv.conf depends on them.
pub fn diagnose_in(
    gathered: &[(&Host, &NodeFacts)],
    cluster: &crate::cluster::Cluster,
) -> Vec<HostDiagnosis> {
    let known = settle(gathered, Some(cluster));
    let gathered = &settled(gathered, &known);
    let mut out = diagnose_settled(gathered, Some(cluster));
    let corefiles = match cluster {
        crate::cluster::Cluster::Read { config, .. } => cluster::corefile_evidence(config),
        crate::cluster::Cluster::Unavailable { .. } => Vec::new(),
    };
    for (d, (host, facts)) in out.iter_mut().zip(gathered) {
        for (id, outcome) in &mut d.outcomes {
            if !matches!(*id, rules::KUBELET_LOOPBACK | rules::CLUSTER_SELF_FORWARD) {
                continue;
            }
            if let RuleOutcome::Findings(found) = outcome {
                for f in found
                    .iter_mut()
                    .filter(|f| f.status == FindingStatus::Failed)
                {
                    f.evidence.extend(corefiles.iter().cloned());
                }
            }
        }
        d.outcomes.extend(cluster::rules(host, facts, cluster));
    }
    out
}

/// Diagnoses every gathered host and adds fleet drift.
pub fn diagnose(gathered: &[(&Host, &NodeFacts)]) -> Vec<HostDiagnosis> {
    let known = settle(gathered, None);
    diagnose_settled(&settled(gathered, &known), None)
}

/// Each host's facts read again with the kubelet's version from the cluster or the
/// inventory, where the binary gave none and a drop-in's resolvConf depends on it
/// ([`rules::with_known_version`]); `None` where nothing changes (facts settled before
/// are left alone). `check` and `plan` settle every host once, before any rule: the
/// per-host rules, the fleet's drift and stray search domains and the cluster's rules
/// then judge the same facts, and the same as the plan's playbooks.
pub fn settle(
    gathered: &[(&Host, &NodeFacts)],
    cluster: Option<&crate::cluster::Cluster>,
) -> Vec<Option<NodeFacts>> {
    gathered
        .iter()
        .map(|(host, facts)| rules::with_known_version(host, facts, cluster))
        .collect()
}

/// `gathered` with the facts [`settle`] read again in place of the ones gathered.
fn settled<'a>(
    gathered: &[(&'a Host, &'a NodeFacts)],
    known: &'a [Option<NodeFacts>],
) -> Vec<(&'a Host, &'a NodeFacts)> {
    gathered
        .iter()
        .zip(known)
        .map(|((host, facts), known)| (*host, known.as_ref().unwrap_or(facts)))
        .collect()
}

/// [`diagnose`] of facts already settled ([`settle`]).
fn diagnose_settled(
    gathered: &[(&Host, &NodeFacts)],
    cluster: Option<&crate::cluster::Cluster>,
) -> Vec<HostDiagnosis> {
    let mut out: Vec<HostDiagnosis> = gathered
        .iter()
        .map(|(h, f)| run_rules(h, &rules::Ctx::in_cluster(h, f, cluster)))
        .collect();
    stray_search_across_fleet(gathered, &mut out);
    let drift = drift::drift(gathered);
    for d in &mut out {
        let mine: Vec<Finding> = drift.iter().filter(|f| f.host == d.host).cloned().collect();
        let outcome = if mine.is_empty() {
            RuleOutcome::Pass
        } else {
            RuleOutcome::Findings(mine)
        };
        d.outcomes.push(("DNS-FLEET-DRIFT", outcome));
    }
    out
}
