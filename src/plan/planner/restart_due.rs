//! `restart_due`: changed where a run left the kubelet unit due its restart (an apply or a
//! rollback that changed its files and was cut off before restarting it, and no start of
//! the unit since), so the task's `notify` restarts it. Writes nothing.

use minijinja::Value as Ctx;

use super::error::PlanErrorKind;
use super::{Outcome, Run};
use crate::playbook::action::RestartDueArgs;

impl Run<'_> {
    pub(super) fn restart_due(
        &mut self,
        args: &RestartDueArgs,
        ctx: &Ctx,
    ) -> Result<Outcome, PlanErrorKind> {
        let unit = self.string_arg(Some(&args.unit), "unit", ctx)?;
        // The scripts mark a unit by its name without `.service`.
        let name = unit.strip_suffix(".service").unwrap_or(&unit);
        let due: Vec<_> = self
            .facts
            .pending_restarts
            .iter()
            .filter(|r| r.unit == name && r.due == Some(true))
            .collect();
        if due.is_empty() {
            return Ok(Outcome::Already(format!(
                "{unit} started after every run that changed its files"
            )));
        }
        // The plan holds to the marks it restarts for: one gone by apply (a restart since,
        // by hand or by another run's handler) makes the host stale rather than restart the
        // unit again. Each mark is one run's own, so no other plan's digest names it.
        for restart in &due {
            if let Some(raw) = self.facts.files.get(&restart.path) {
                self.digest
                    .files
                    .insert(restart.path.clone(), super::file_digest(raw));
            }
        }
        let runs: Vec<String> = due
            .iter()
            .map(|r| {
                // The run id is the mark's text, node text: shown escaped.
                let run = crate::text::escape(&r.run);
                if r.rollback {
                    format!("the rollback of run {run}")
                } else {
                    format!("apply run {run}")
                }
            })
            .collect();
        Ok(Outcome::Changed {
            what: format!(
                "{} changed its files and was cut off before restarting it",
                runs.join(" and ")
            ),
            file: None,
        })
    }
}
