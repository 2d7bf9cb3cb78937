//! `note`: tells the reviewer something; changes nothing.

use minijinja::Value as Ctx;

use super::error::PlanErrorKind;
use super::{Outcome, Run, State};
use crate::plan::model::{Note, Reason};
use crate::playbook::action::MessageArgs;

impl Run<'_> {
    pub(super) fn note(
        &self,
        args: &MessageArgs,
        ctx: &Ctx,
        state: &mut State,
        reason: &Reason,
    ) -> Result<Outcome, PlanErrorKind> {
        state.notes.push(Note {
            playbook: reason.playbook.clone(),
            message: self
                .string_arg(Some(&args.msg), "msg", ctx)?
                .trim()
                .to_string(),
        });
        Ok(Outcome::Unchanged)
    }
}
