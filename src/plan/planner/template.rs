//! `template`: a file dnsfix owns, rendered whole from a minijinja template.

use minijinja::Value as Ctx;

use super::args::{absolute, mode_string};
use super::error::PlanErrorKind;
use super::{Outcome, Run, State, outcome};
use crate::plan::model::Reason;
use crate::playbook::action::TemplateArgs;

impl Run<'_> {
    pub(super) fn template(
        &mut self,
        args: &TemplateArgs,
        ctx: &Ctx,
        state: &mut State,
        reason: &Reason,
    ) -> Result<Outcome, PlanErrorKind> {
        let src = self.string_arg(Some(&args.src), "src", ctx)?;
        let dest = absolute(self.string_arg(Some(&args.dest), "dest", ctx)?)?;
        let mode = self
            .arg(args.mode.as_ref(), ctx)?
            .map(mode_string)
            .transpose()?;
        let template = self.env.get_template(&src)?;
        let content = template.render(ctx.clone())?;
        let description = format!("rendered from {src}");
        let already = format!("{dest} already as rendered from {src}");
        self.write(state, &dest, content, mode, description, reason)
            .map(|changed| outcome(changed, &dest, format!("{dest} changed"), already))
    }
}
