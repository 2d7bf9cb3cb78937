//! DNS-KUBELET-RESTART-DUE: an apply wrote the kubelet's new settings and was cut off
//! before it restarted the unit, so the running kubelet is still on the old ones while its
//! files look fixed (every other rule reads the files).

use super::{Ctx, RuleOutcome};
use crate::diagnose::finding::Severity;

const ID: &str = "DNS-KUBELET-RESTART-DUE";

pub fn restart_due(ctx: &Ctx) -> RuleOutcome {
    let restarts = &ctx.facts.pending_restarts;
    if restarts.is_empty() {
        return RuleOutcome::Pass;
    }
    let mut due = Vec::new();
    let mut unknown = Vec::new();
    for restart in restarts {
        match restart.due {
            Some(true) => due.push(restart),
            Some(false) => {}
            None => unknown.push(restart),
        }
    }
    if due.is_empty() {
        return match unknown.first() {
            None => RuleOutcome::Pass,
            Some(restart) => ctx.unknown_because(
                ID,
                format!(
                    "apply run {} left {} to be restarted ({}), and whether the kubelet \
                     started since cannot be read",
                    crate::text::escape(&restart.run),
                    crate::text::escape(&restart.unit),
                    restart.path
                ),
                format!(
                    "restart {} (systemctl restart {}), or apply that run's plan again",
                    crate::text::escape(&restart.unit),
                    crate::text::escape(&restart.unit)
                ),
            ),
        };
    }
    let units: Vec<String> = due
        .iter()
        .map(|r| crate::text::escape(&r.unit).into_owned())
        .collect();
    let evidence = due
        .iter()
        .map(|r| {
            format!(
                "{}: apply run {} changed files for {} and was cut off before restarting it; {}",
                r.path,
                crate::text::escape(&r.run),
                crate::text::escape(&r.unit),
                if r.running {
                    "the kubelet running now started before that"
                } else {
                    "no kubelet runs now"
                }
            )
        })
        .collect();
    let finding = ctx.finding(
        ID,
        Severity::High,
        format!(
            "{} still runs on the settings from before an apply that was cut off: its files \
             are fixed, pods still get the old ones",
            units.join(", ")
        ),
        evidence,
        format!(
            "apply that run's plan again (it takes over what the run wrote and restarts), or \
             restart {} by hand (systemctl restart {}); then recreate the node's CoreDNS and \
             nodelocaldns pods",
            units.join(", "),
            units.join(" ")
        ),
    );
    RuleOutcome::Findings(vec![finding])
}
