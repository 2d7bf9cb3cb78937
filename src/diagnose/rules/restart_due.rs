//! DNS-KUBELET-RESTART-DUE: an apply (or a rollback) changed the kubelet's files and was cut
//! off before it restarted the unit, so the running kubelet is still on the old settings
//! while its files look right (every other rule reads the files).

use super::{Ctx, RuleOutcome};
use crate::diagnose::finding::Severity;
use crate::facts::node_facts::UnitState;
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
        // No kubelet process since a cut-off run: one its operator stopped (the unit
        // inactive) reads the run's files when it is started, and starting it is not dnsfix's
        // call; one whose unit is failing or being restarted by systemd (a crash loop) may
        // have been broken by the run's own changes.
        if let Some(stopped) = restarts.iter().find(|r| !r.running && r.due == Some(false)) {
            return not_running(ctx, stopped);
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

/// The outcome where no kubelet process runs since `stopped`'s run was cut off, by the state
/// of the mark's unit (as `systemctl is-active` said it): not applicable where it is
/// inactive (stopped by its operator); a high finding where it is failed, activating (systemd
/// restarting it: `deactivating` reads the same) or its state is not known, as the run's
/// changes may be what keeps it from staying up; unknown where the unit is active yet no
/// kubelet process was seen.
fn not_running(ctx: &Ctx, stopped: &PendingRestart) -> RuleOutcome {
    let state = crate::facts::node_facts::unit_states(&ctx.facts.raw)
        .get(stopped.unit.as_str())
        .copied()
        .unwrap_or(UnitState::Unknown);
    let unit = escape(&stopped.unit);
    match state {
        UnitState::Inactive => RuleOutcome::NotApplicable(format!(
            "no kubelet runs now: {} left {unit} to be restarted ({}), {unit} is inactive \
             (stopped), and it reads the files that run left when it is started; recreate \
             the node's CoreDNS and nodelocaldns pods after that",
            which(stopped),
            escape(&stopped.path)
        )),
        UnitState::Active => ctx.unknown_because(
            ID,
            format!(
                "{} left {unit} to be restarted ({}); {unit} is active, yet no kubelet \
                 process was seen",
                which(stopped),
                escape(&stopped.path)
            ),
            format!("check again; systemctl status {unit} shows its process"),
        ),
        UnitState::Failed | UnitState::Activating | UnitState::Unknown => {
            let run = escape(&stopped.run);
            let undo = if stopped.rollback {
                String::new()
            } else {
                format!(
                    "; where the run's changes broke it, dnsfix rollback {run} puts the files back"
                )
            };
            RuleOutcome::Findings(vec![ctx.finding(
                ID,
                Severity::High,
                format!(
                    "{unit} has not stayed up since {} changed its files: no kubelet runs, \
                     and pods on this node are not started or kept",
                    which(stopped)
                ),
                vec![
                    format!(
                        "{}: {} changed files for {unit} and was cut off before restarting it",
                        escape(&stopped.path),
                        which(stopped)
                    ),
                    match ctx.facts.services.systemctl_cut {
                        Some(_) if state == UnitState::Unknown => format!(
                            "{unit}: unknown ({}), and no kubelet process runs",
                            ctx.facts.services.systemctl_silence()
                        ),
                        _ => format!(
                            "{unit}: {} (systemctl is-active), and no kubelet process runs",
                            state.as_str()
                        ),
                    },
                ],
                match ctx.facts.services.systemctl_cut {
                    // systemd may not have got to its start job yet.
                    Some(_) if state == UnitState::Unknown => format!(
                        "check again once `systemctl is-system-running` answers on the node: \
                         systemd may not have started {unit} yet; if it still does not run \
                         then, journalctl -u {unit} says why{undo}"
                    ),
                    _ => format!("journalctl -u {unit} says why it does not stay up{undo}"),
                },
            )])
        }
    }
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
