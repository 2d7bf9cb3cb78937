//! `args_flag`: one kubelet flag in MicroK8s's arguments file
//! (`/var/snap/microk8s/<revision>/args/kubelet`), edited in place by `edit::args_flag`.

use minijinja::Value as Ctx;

use super::args::{absent, absolute};
use super::error::PlanErrorKind;
use super::{Outcome, Run, State, outcome};
use crate::edit::args_flag;
use crate::plan::model::Reason;
use crate::playbook::action::ArgsFlagArgs;

impl Run<'_> {
    pub(super) fn args_flag(
        &mut self,
        args: &ArgsFlagArgs,
        ctx: &Ctx,
        state: &mut State,
        reason: &Reason,
    ) -> Result<Outcome, PlanErrorKind> {
        let path = absolute(self.string_arg(Some(&args.path), "path", ctx)?)?;
        let flag = self.string_arg(Some(&args.flag), "flag", ctx)?;
        let flag = flag.trim_start_matches('-').to_string();
        let absent = absent(self.arg(args.state.as_ref(), ctx)?)?;
        let Some(text) = self.read(state, &path)? else {
            return Err(PlanErrorKind::NoSuchFile { path });
        };
        let (edit, description) = if absent {
            (
                args_flag::remove_flag(&text, &flag),
                format!("--{flag} removed"),
            )
        } else {
            let value = self.string_arg(args.value.as_ref(), "value", ctx)?;
            let description = format!("--{flag}={value}");
            (args_flag::set_flag(&text, &flag, &value), description)
        };
        let edit = edit.map_err(|error| PlanErrorKind::ArgsEdit {
            path: path.clone(),
            error,
        })?;
        let already = format!("{path}: already {description}");
        if !edit.changed {
            return Ok(Outcome::Already(already));
        }
        self.write(state, &path, edit.text, None, description, reason)
            .map(|changed| outcome(changed, format!("{path} --{flag} changed"), already))
    }
}
