//! `env_flag`: one kubelet flag in a systemd EnvironmentFile humans own
//! (`/var/lib/kubelet/kubeadm-flags.env`, `/etc/default/kubelet`), edited in place by
//! `edit::env_flag`; and what it shares with `args_flag` (MicroK8s's arguments file).

use minijinja::Value as Ctx;

use super::args::{absent, absolute};
use super::error::PlanErrorKind;
use super::{Outcome, Run, State, outcome};
use crate::edit::{Edit, env_flag};
use crate::plan::model::Reason;
use crate::playbook::Value;
use crate::playbook::action::EnvFlagArgs;

/// A flag task's own arguments, as written.
pub(super) struct FlagTask<'a> {
    pub path: &'a Value,
    pub flag: &'a Value,
    pub value: Option<&'a Value>,
    pub state: Option<&'a Value>,
}

impl Run<'_> {
    pub(super) fn env_flag(
        &mut self,
        args: &EnvFlagArgs,
        ctx: &Ctx,
        state: &mut State,
        reason: &Reason,
    ) -> Result<Outcome, PlanErrorKind> {
        let var = self.string_arg(Some(&args.var), "var", ctx)?;
        let task = FlagTask {
            path: &args.path,
            flag: &args.flag,
            value: args.value.as_ref(),
            state: args.state.as_ref(),
        };
        let label = format!("{var}: ");
        self.flag_task(
            &task,
            &label,
            ctx,
            state,
            reason,
            |path, text, flag, value| {
                match value {
                    Some(value) => env_flag::set_flag(text, &var, flag, value),
                    None => env_flag::remove_flag(text, &var, flag),
                }
                .map_err(|error| PlanErrorKind::EnvEdit {
                    path: path.to_owned(),
                    error,
                })
            },
        )
    }

    /// Sets (`value`) or removes (`None`) one flag in an existing file with `edit`
    /// (path, text, flag, value), and writes the result; `label` goes before the flag in
    /// what the plan says.
    pub(super) fn flag_task(
        &mut self,
        task: &FlagTask<'_>,
        label: &str,
        ctx: &Ctx,
        state: &mut State,
        reason: &Reason,
        edit: impl FnOnce(&str, &str, &str, Option<&str>) -> Result<Edit, PlanErrorKind>,
    ) -> Result<Outcome, PlanErrorKind> {
        let path = absolute(self.string_arg(Some(task.path), "path", ctx)?)?;
        let flag = self.string_arg(Some(task.flag), "flag", ctx)?;
        let flag = flag.trim_start_matches('-').to_string();
        let value = if absent(self.arg(task.state, ctx)?)? {
            None
        } else {
            Some(self.string_arg(task.value, "value", ctx)?)
        };
        let Some(text) = self.read(state, &path)? else {
            return Err(PlanErrorKind::NoSuchFile { path });
        };
        let description = match &value {
            Some(value) => format!("{label}--{flag}={value}"),
            None => format!("{label}--{flag} removed"),
        };
        let edit = edit(&path, &text, &flag, value.as_deref())?;
        let already = format!("{path}: already {description}");
        if !edit.changed {
            return Ok(Outcome::Already(already));
        }
        self.write(state, &path, edit.text, None, description, reason)
            .map(|changed| outcome(changed, &path, format!("{path} --{flag} changed"), already))
    }
}
