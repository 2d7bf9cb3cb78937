//! DNS-KUBELET-RESTART-DUE: an apply (or a rollback) changed the kubelet's files and was cut
//! off before it restarted the unit, so the running kubelet is still on the old settings
//! while its files look right (every other rule reads the files).

use super::{Ctx, RuleOutcome};
use crate::diagnose::finding::Severity;
use crate::facts::restart_due::PendingRestart;
use crate::text::escape;

const ID: &str = "DNS-KUBELET-RESTART-DUE";

pub fn restart_due(ctx: &Ctx) -> RuleOutcome {
    let restarts = &ctx.facts.pending_restarts;
    let due: Vec<&PendingRestart> = restarts.iter().filter(|r| r.due == Some(true)).collect();
    // The run under way (holding the lock) has marks of its own, its restart maybe still to
    // come; a mark of another run is cut off all the same.
    let (under_way, due): (Vec<&PendingRestart>, Vec<&PendingRestart>) =
        match &ctx.facts.run_in_progress {
            Some(Some(holder)) => due.into_iter().partition(|r| {
                holder.run.is_none() || holder.run.as_deref() == Some(r.run.as_str())
            }),
            _ => (Vec::new(), due),
        };
    if let (Some(first), [], Some(Some(holder))) = (
        under_way.first(),
        due.as_slice(),
        &ctx.facts.run_in_progress,
    ) {
        return ctx.unknown_because(
            ID,
            format!(
                "a dnsfix run holds the node lock now ({}): {} left {} to be restarted ({}), which it may still do",
                escape(&holder.owner),
                which(first),
                escape(&first.unit),
                escape(&first.path)
            ),
            "check again once that run ended (apply or rollback prints its end)".to_owned(),
        );
    }
    if due.is_empty() {
        // A kubelet stopped since the run was cut off (by its operator, say) is not started
        // here: it reads the files the run left when it starts.
        if let Some(stopped) = restarts.iter().find(|r| !r.running && r.due == Some(false)) {
            return RuleOutcome::NotApplicable(format!(
                "no kubelet runs now: {} left {} to be restarted ({}), and it reads the files \
                 that run left when it is started; recreate the node's CoreDNS and \
                 nodelocaldns pods after that",
                which(stopped),
                escape(&stopped.unit),
                escape(&stopped.path)
            ));
        }
        if let Some(restart) = restarts.iter().find(|r| r.due.is_none()) {
            return ctx.unknown_because(
                ID,
                format!(
                    "{} left {} to be restarted ({}), and whether the kubelet started since \
                     cannot be read",
                    which(restart),
                    escape(&restart.unit),
                    escape(&restart.path)
                ),
                format!("restart {} (systemctl restart {0})", escape(&restart.unit)),
            );
        }
        if ctx.facts.pending_restarts_unread {
            return ctx.unknown_because(
                ID,
                format!(
                    "{}/ could not be looked at (it is root's alone)",
                    crate::facts::restart_due::DIR
                ),
                "check as root (sudo -n) to see whether an apply was cut off before its \
                 restart"
                    .to_owned(),
            );
        }
        return RuleOutcome::Pass;
    }
    let mut units: Vec<String> = due.iter().map(|r| escape(&r.unit).into_owned()).collect();
    units.dedup();
    let evidence = due
        .iter()
        .map(|r| {
            format!(
                "{}: {} changed files for {} and was cut off before restarting it; the \
                 kubelet running now started before that",
                escape(&r.path),
                which(r),
                escape(&r.unit)
            )
        })
        .collect();
    let finding = ctx.finding(
        ID,
        Severity::High,
        format!(
            "{} still runs on the settings from before a run that was cut off: its files are \
             changed, pods still get the old settings",
            units.join(", ")
        ),
        evidence,
        format!(
            "dnsfix apply restarts {} and recreates the node's CoreDNS and nodelocaldns pods \
             (playbook kubelet-restart-due); by hand: systemctl restart {}, then recreate them",
            units.join(", "),
            units.join(" "),
        ),
    );
    RuleOutcome::Findings(vec![finding])
}

/// "apply run RUN" or "the rollback of run RUN".
fn which(restart: &PendingRestart) -> String {
    let run = escape(&restart.run);
    if restart.rollback {
        format!("the rollback of run {run}")
    } else {
        format!("apply run {run}")
    }
}
