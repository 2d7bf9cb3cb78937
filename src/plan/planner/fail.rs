//! `fail`: blocks the playbook on this host, saying why; the host loop then drops what
//! the playbook changed there.

use minijinja::Value as Ctx;

use super::error::PlanErrorKind;
use super::{Outcome, Run};
use crate::playbook::action::MessageArgs;

impl Run<'_> {
    pub(super) fn fail(&self, args: &MessageArgs, ctx: &Ctx) -> Result<Outcome, PlanErrorKind> {
        Ok(Outcome::Failed(
            self.string_arg(Some(&args.msg), "msg", ctx)?
                .trim()
                .to_string(),
        ))
    }
}
