//! `env_flag`: one kubelet flag in a systemd EnvironmentFile humans own
//! (`/var/lib/kubelet/kubeadm-flags.env`, `/etc/default/kubelet`), edited in place by
//! `edit::env_flag`.

use minijinja::Value as Ctx;

use super::args::{absent, absolute};
use super::error::PlanErrorKind;
use super::{Outcome, Run, State, outcome};
use crate::edit::env_flag;
use crate::plan::model::Reason;
use crate::playbook::action::EnvFlagArgs;

impl Run<'_> {
    pub(super) fn env_flag(
        &mut self,
        args: &EnvFlagArgs,
        ctx: &Ctx,
        state: &mut State,
        reason: &Reason,
    ) -> Result<Outcome, PlanErrorKind> {
        let path = absolute(self.string_arg(Some(&args.path), "path", ctx)?)?;
        let var = self.string_arg(Some(&args.var), "var", ctx)?;
        let flag = self.string_arg(Some(&args.flag), "flag", ctx)?;
        let flag = flag.trim_start_matches('-').to_string();
        let absent = absent(self.arg(args.state.as_ref(), ctx)?)?;
        let Some(text) = self.read(state, &path)? else {
            return Err(PlanErrorKind::NoSuchFile { path });
        };
        let (edit, description) = if absent {
            (
                env_flag::remove_flag(&text, &var, &flag),
                format!("{var}: --{flag} removed"),
            )
        } else {
            let value = self.string_arg(args.value.as_ref(), "value", ctx)?;
            let description = format!("{var}: --{flag}={value}");
            (env_flag::set_flag(&text, &var, &flag, &value), description)
        };
        let edit = edit.map_err(|error| PlanErrorKind::EnvEdit {
            path: path.clone(),
            error,
        })?;
        if !edit.changed {
            return Ok(Outcome::Already(format!("{path}: already {description}")));
        }
        let already = format!("{path}: already {description}");
        self.write(state, &path, edit.text, None, description, reason)
            .map(|changed| outcome(changed, format!("{path} --{flag} changed"), already))
    }
}
