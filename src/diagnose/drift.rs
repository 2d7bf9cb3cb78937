//! Fleet drift: a node whose DNS-relevant settings differ from the majority of its
//! inventory group. The incidents began with one node that differed after a reboot, so a
//! minority value is a finding even when each value alone passes every rule.

use std::collections::BTreeMap;

use super::catalog;
use super::finding::{Finding, FindingStatus, Severity};
use crate::facts::NodeFacts;
use crate::facts::node_facts::Observed;
use crate::inventory::Host;

/// A group is compared only when at least this many of its hosts were gathered: with two,
/// there is no majority to speak of.
const MIN_GROUP: usize = 3;

/// The settings compared across a group, as (name, value) for one host.
/// The id of the fleet drift finding.
pub const DRIFT_ID: &str = "DNS-FLEET-DRIFT";

pub fn settings(facts: &NodeFacts) -> Vec<(&'static str, String)> {
    let k = &facts.kubelet;
    let observed = |o: Option<String>| o.unwrap_or_else(|| "unknown".to_owned());
    let resolv = match &k.resolv_conf {
        Observed::Known(e) => Some(e.value.clone()),
        Observed::Absent => Some("(no kubelet)".into()),
        Observed::Unknown(_) => None,
    };
    let dns = match &k.cluster_dns {
        Observed::Known(e) => Some(e.value.join(",")),
        Observed::Absent => Some("(no kubelet)".into()),
        Observed::Unknown(_) => None,
    };
    let upstreams = k
        .pod_resolv_conf
        .as_ref()
        .and_then(|f| f.parsed.as_ref())
        .map(|p| {
            p.nameservers
                .iter()
                .map(|n| n.address.as_str())
                .collect::<Vec<_>>()
                .join(",")
        });
    let bridge = facts
        .sysctls
        .get("net.bridge.bridge-nf-call-iptables")
        .map(|s| match &s.live {
            Observed::Known(v) => v.clone(),
            Observed::Absent => "absent".into(),
            Observed::Unknown(_) => "unknown".into(),
        });
    vec![
        ("kubelet resolvConf", observed(resolv)),
        ("kubelet clusterDNS", observed(dns)),
        ("upstream servers", observed(upstreams)),
        ("net.bridge.bridge-nf-call-iptables", observed(bridge)),
        (
            "flavour",
            format!("{:?}", facts.flavour.kind).to_lowercase(),
        ),
    ]
}

/// Drift findings for every gathered host, most specific group first: a host is reported
/// once per setting, against the smallest group in which it is in the minority.
pub fn drift(gathered: &[(&Host, &NodeFacts)]) -> Vec<Finding> {
    let by_host: BTreeMap<&str, Vec<(&'static str, String)>> = gathered
        .iter()
        .map(|(h, f)| (h.name.as_str(), settings(f)))
        .collect();
    let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (host, _) in gathered {
        for g in &host.groups {
            groups
                .entry(g.as_str())
                .or_default()
                .push(host.name.as_str());
        }
    }
    // Smallest (most specific) groups first, then by name for a stable order.
    let mut ordered: Vec<(&str, Vec<&str>)> = groups
        .into_iter()
        .filter(|(_, m)| m.len() >= MIN_GROUP)
        .collect();
    // "all" last among groups of the same size: a named group says more.
    ordered.sort_by(|a, b| {
        a.1.len()
            .cmp(&b.1.len())
            .then((a.0 == "all").cmp(&(b.0 == "all")))
            .then(a.0.cmp(b.0))
    });

    let mut reported: BTreeMap<(&str, &str), ()> = BTreeMap::new();
    let mut findings = Vec::new();
    for (group, members) in &ordered {
        let keys: Vec<&'static str> = by_host
            .get(members[0])
            .map(|s| s.iter().map(|(k, _)| *k).collect())
            .unwrap_or_default();
        for key in keys {
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for m in members {
                if let Some(v) = value(&by_host, m, key) {
                    *counts.entry(v).or_default() += 1;
                }
            }
            let Some((majority, count)) = counts
                .iter()
                .max_by_key(|(_, c)| **c)
                .map(|(v, c)| (*v, *c))
            else {
                continue;
            };
            if count * 2 <= members.len() || majority == "unknown" {
                continue;
            }
            for m in members {
                let Some(v) = value(&by_host, m, key) else {
                    continue;
                };
                if v == majority || v == "unknown" || reported.contains_key(&(*m, key)) {
                    continue;
                }
                reported.insert((m, key), ());
                findings.push(Finding {
                    id: DRIFT_ID,
                    severity: Severity::Warning,
                    status: FindingStatus::Failed,
                    host: (*m).to_owned(),
                    summary: format!("{key} is {v} here but {majority} on {count} of {} hosts in group {group}", members.len()),
                    evidence: vec![format!("{key}: {v} here; {count} of {} hosts in {group} have {majority}", members.len())],
                    remediation: "find out why this node differs (a reboot, a manual edit, a partial playbook run) and bring it in line, or move it to its own group if the difference is intended".into(),
                    playbook: catalog::rule(DRIFT_ID).and_then(|r| r.playbook),
                    wanted: Default::default(),
                    about: None,
                });
            }
        }
    }
    findings
}

fn value<'a>(
    by_host: &'a BTreeMap<&str, Vec<(&'static str, String)>>,
    host: &str,
    key: &str,
) -> Option<&'a str> {
    by_host
        .get(host)?
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.as_str())
}
