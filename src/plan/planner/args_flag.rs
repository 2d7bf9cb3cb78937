//! `args_flag`: one kubelet flag in MicroK8s's arguments file
//! (`/var/snap/microk8s/<revision>/args/kubelet`), edited in place by `edit::args_flag`.

use minijinja::Value as Ctx;

use super::env_flag::FlagTask;
use super::error::PlanErrorKind;
use super::{Outcome, Run, State};
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
        let task = FlagTask {
            path: &args.path,
            flag: &args.flag,
            value: args.value.as_ref(),
            state: args.state.as_ref(),
        };
        self.flag_task(&task, "", ctx, state, reason, |path, text, flag, value| {
            match value {
                Some(value) => args_flag::set_flag(text, flag, value),
                None => args_flag::remove_flag(text, flag),
            }
            .map_err(|error| PlanErrorKind::ArgsEdit {
                path: path.to_owned(),
                error,
            })
        })
    }
}
