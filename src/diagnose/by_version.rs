//! A kubelet of unknown version whose `--config-dir` drop-ins give kubelet 1.28 to 1.31 one
//! resolv.conf and 1.32 on another (kubernetes#126630, #127421): the facts leave its
//! resolvConf unknown and keep both readings ([`ResolvConfByVersion`]). A rule that goes
//! unknown for that alone is asked again with each reading as the kubelet's file: where
//! either fails, the finding fails (the kubelet may be of that version), its evidence
//! saying which version reads which file; where both pass, it passes; else it stays
//! unknown, saying which reading could not be judged.

use super::finding::{Finding, FindingStatus};
use super::rules::{Ctx, RuleOutcome};
use crate::facts::NodeFacts;
use crate::facts::node_facts::{Observed, ResolvConfByVersion, VersionReading};

/// The node's facts once with each reading as the kubelet's resolv.conf, where the facts
/// keep readings by version; none otherwise.
pub(super) fn reading_facts(facts: &NodeFacts) -> Vec<(&VersionReading, NodeFacts)> {
    let Some(by) = &facts.kubelet.resolv_conf_by_version else {
        return Vec::new();
    };
    by.readings
        .iter()
        .map(|r| {
            let mut f = facts.clone();
            f.kubelet.resolv_conf = Observed::Known(r.resolv_conf.clone());
            f.kubelet.pod_resolv_conf = r.pod_resolv_conf.clone();
            (r, f)
        })
        .collect()
}

/// `outcome` of `rule` on `ctx`, judged by both readings ([`reading_facts`]: `readings`)
/// where it is unknown for the version alone.
pub(super) fn judge(
    ctx: &Ctx,
    readings: &[(&VersionReading, NodeFacts)],
    rule: fn(&Ctx) -> RuleOutcome,
    outcome: RuleOutcome,
) -> RuleOutcome {
    let Some(by) = &ctx.facts.kubelet.resolv_conf_by_version else {
        return outcome;
    };
    if readings.is_empty() || !unknown_for(&outcome, &by.why) {
        return outcome;
    }
    let judged: Vec<(&VersionReading, RuleOutcome)> = readings
        .iter()
        .map(|(r, facts)| (*r, rule(&ctx.with_facts(facts))))
        .collect();
    let with = |status: FindingStatus| -> Vec<(&VersionReading, Vec<Finding>)> {
        judged
            .iter()
            .filter_map(|(r, o)| {
                let RuleOutcome::Findings(found) = o else {
                    return None;
                };
                let found: Vec<Finding> = found
                    .iter()
                    .filter(|f| f.status == status)
                    .cloned()
                    .collect();
                (!found.is_empty()).then_some((*r, found))
            })
            .collect()
    };
    let failed = with(FindingStatus::Failed);
    if !failed.is_empty() {
        return RuleOutcome::Findings(labelled(by, failed, &judged));
    }
    let unknown = with(FindingStatus::Unknown);
    if !unknown.is_empty() {
        return RuleOutcome::Findings(labelled(by, unknown, &judged));
    }
    if judged.iter().all(|(_, o)| matches!(o, RuleOutcome::Pass)) {
        return RuleOutcome::Pass;
    }
    outcome
}

/// The outcome is unknown, and for `why` (the kubelet's version) alone.
fn unknown_for(outcome: &RuleOutcome, why: &str) -> bool {
    matches!(outcome, RuleOutcome::Findings(found)
    if !found.is_empty()
        && found.iter().all(|f| {
            f.status == FindingStatus::Unknown && f.evidence.iter().any(|e| e.contains(why))
        }))
}

/// The findings of the first reading in `found`, said of the versions that read that file:
/// the summary names them, the evidence starts with both readings and the ways out
/// ([`ResolvConfByVersion::why`]), then what each reading found, named by its versions,
/// then what a reading not in `found` could not judge (`judged`: every reading's outcome).
/// Where every reading found it but said it differently (each its own file), the summary
/// says what each found, not the first one's for both.
fn labelled(
    by: &ResolvConfByVersion,
    found: Vec<(&VersionReading, Vec<Finding>)>,
    judged: &[(&VersionReading, RuleOutcome)],
) -> Vec<Finding> {
    let versions: Vec<&str> = found.iter().map(|(r, _)| r.versions.as_str()).collect();
    let worst = found.iter().flat_map(|(_, f)| f).map(|f| f.severity).max();
    let mut evidence = vec![by.why.clone()];
    for (r, findings) in &found {
        for f in findings {
            evidence.extend(f.evidence.iter().map(|e| format!("{}: {e}", r.versions)));
        }
    }
    for (r, outcome) in judged {
        let RuleOutcome::Findings(others) = outcome else {
            continue;
        };
        if found.iter().any(|(f, _)| f.versions == r.versions) {
            continue;
        }
        for f in others.iter().filter(|f| f.status == FindingStatus::Unknown) {
            evidence.push(format!("{}: not judged: {}", r.versions, f.summary));
        }
    }
    // Where only some readings find it, it is so only if the kubelet is of those versions.
    let some = found.len() < by.readings.len();
    // What each reading says of its i-th finding (its last, where it has fewer).
    let said = |i: usize| -> Vec<(&str, &str)> {
        found
            .iter()
            .filter_map(|(r, f)| {
                f.get(i)
                    .or(f.last())
                    .map(|f| (r.versions.as_str(), f.summary.as_str()))
            })
            .collect()
    };
    let mut first = found.first().map(|(_, f)| f.clone()).unwrap_or_default();
    for (i, f) in first.iter_mut().enumerate() {
        let said = said(i);
        f.summary = if some {
            let of: Vec<&str> = versions
                .iter()
                .map(|v| v.trim_start_matches("kubelet "))
                .collect();
            format!(
                "this kubelet may be {} (its version is not known), and then: {}",
                of.join(" or "),
                f.summary
            )
        } else if said.iter().all(|(_, s)| *s == f.summary) {
            format!(
                "{} (this kubelet's version is not known): {}",
                versions.join(" and "),
                f.summary
            )
        } else {
            let each: Vec<String> = said.iter().map(|(v, s)| format!("{v}: {s}")).collect();
            format!(
                "whatever this kubelet's version (it is not known): {}",
                each.join("; ")
            )
        };
        f.severity = worst.unwrap_or(f.severity);
        f.evidence = evidence.clone();
    }
    first
}
