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

    pub fn worst(&self) -> Option<Severity> {
        self.findings().map(|f| f.severity).max()
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
