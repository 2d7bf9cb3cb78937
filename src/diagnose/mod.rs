//! Diagnosis: findings from facts. Per-host rules (`rules`) and fleet drift (`drift`) are
//! pure functions of the gathered facts and the inventory; nothing here does I/O. The
//! stable ids and their explanations live in `catalog`.

pub mod catalog;
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
}

/// An undeclared search domain every node shares is a site's own (a corporate domain:
/// info); one that differs node to node comes from each node's DHCP (a cloud region or
/// project suffix: warning), because pods then resolve differently on each node.
fn stray_search_across_fleet(gathered: &[(&Host, &NodeFacts)], out: &mut [HostDiagnosis]) {
    let search = |f: &NodeFacts| -> Option<Vec<String>> {
        let p = f.kubelet.pod_resolv_conf.as_ref()?.parsed.as_ref()?;
        Some(p.kubelet_search().into_iter().map(str::to_owned).collect())
    };
    let lists: Vec<(&str, Vec<String>)> = gathered
        .iter()
        .filter_map(|(h, f)| Some((h.name.as_str(), search(f)?)))
        .collect();
    for d in out.iter_mut() {
        let Some((_, mine)) = lists.iter().find(|(h, _)| *h == d.host) else {
            continue;
        };
        let differing: Vec<String> = lists
            .iter()
            .filter(|(h, theirs)| *h != d.host && theirs != mine)
            .map(|(h, theirs)| format!("{h}: search {}", theirs.join(" ")))
            .collect();
        if differing.is_empty() {
            continue;
        }
        for (id, outcome) in &mut d.outcomes {
            if *id != "DNS-STRAY-SEARCH" {
                continue;
            }
            if let RuleOutcome::Findings(found) = outcome {
                for f in found
                    .iter_mut()
                    .filter(|f| f.severity == Severity::Info && f.status == FindingStatus::Failed)
                {
                    f.severity = Severity::Warning;
                    f.summary = format!(
                        "{}, and other nodes have other search domains: each node's DHCP pushes its own, so pods resolve differently node to node",
                        f.summary
                    );
                    f.evidence.extend(differing.iter().take(3).cloned());
                    if differing.len() > 3 {
                        f.evidence
                            .push(format!("... and {} more", differing.len() - 3));
                    }
                }
            }
        }
    }
}

/// Runs every per-host rule on one host.
pub fn diagnose_host(host: &Host, facts: &NodeFacts) -> HostDiagnosis {
    let ctx = rules::Ctx::new(host, facts);
    let outcomes = rules::RULES
        .iter()
        .map(|(id, rule)| (*id, rule(&ctx)))
        .collect();
    HostDiagnosis {
        host: host.name.clone(),
        outcomes,
    }
}

/// Diagnoses every gathered host and adds fleet drift.
pub fn diagnose(gathered: &[(&Host, &NodeFacts)]) -> Vec<HostDiagnosis> {
    let mut out: Vec<HostDiagnosis> = gathered.iter().map(|(h, f)| diagnose_host(h, f)).collect();
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
