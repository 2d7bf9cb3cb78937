//! `service` handlers: after every playbook has run, one restart or reload per unit for
//! the changes that notified it.

use std::collections::BTreeSet;

use serde_json::Value as Json;

use super::error::{PlanError, PlanErrorKind, Site};
use super::{Ran, Run, State};
use crate::plan::model::{HandlerAction, HandlerRun};
use crate::playbook::Batch;

impl Run<'_> {
    /// One run per (unit, action), with the reasons of every change that notified it; a
    /// restart makes a reload of the same unit pointless. A file a later task put back as
    /// it was is no reason (kubelet-flag-shadow's config edit that nodelocaldns-clusterdns
    /// undoes): no change, no restart for it.
    pub(super) fn handlers(
        &self,
        state: &State,
        ran: &Ran<'_>,
    ) -> Result<Vec<HandlerRun>, PlanError> {
        let mut handlers: Vec<HandlerRun> = Vec::new();
        for (handler_name, playbook_name, what, file) in &state.notified {
            let unchanged = file.as_ref().is_some_and(|path| {
                state
                    .files
                    .get(path)
                    .is_some_and(|f| f.current.as_deref() == f.before.as_deref())
            });
            if unchanged {
                continue;
            }
            let Some((playbook, handler)) = ran
                .handlers
                .get(&(playbook_name.clone(), handler_name.clone()))
            else {
                continue;
            };
            // A handler sees its playbook's vars, as its tasks did.
            let scope = ran.scopes.get(playbook_name).cloned().unwrap_or_default();
            let base_ctx = self.ctx(&scope);
            let at = |site: fn(String) -> Site| {
                move |kind| PlanError::new(playbook, site(handler.name.clone()), kind)
            };
            let unit = self
                .string_arg(Some(&handler.service.name), "name", &base_ctx)
                .map_err(at(|handler| Site::Handler { handler }))?;
            let action = match &handler.service.state {
                Some(v) => match self
                    .eval(v, &base_ctx)
                    .map_err(at(|handler| Site::HandlerState { handler }))?
                {
                    Json::String(got) => HandlerAction::parse(&got).ok_or_else(|| {
                        at(|handler| Site::Handler { handler })(PlanErrorKind::HandlerState { got })
                    })?,
                    _ => HandlerAction::Restarted,
                },
                None => HandlerAction::Restarted,
            };
            match handlers
                .iter_mut()
                .find(|h| h.unit == unit && h.action == action)
            {
                Some(existing) => {
                    if !existing.reasons.contains(what) {
                        existing.reasons.push(what.clone());
                    }
                    existing.serial = smaller(existing.serial, playbook.serial);
                }
                None => handlers.push(HandlerRun {
                    name: handler.name.clone(),
                    unit,
                    action,
                    serial: playbook.serial,
                    reasons: vec![what.clone()],
                }),
            }
        }
        let restarted: BTreeSet<String> = handlers
            .iter()
            .filter(|h| h.action == HandlerAction::Restarted)
            .map(|h| h.unit.clone())
            .collect();
        handlers.retain(|h| h.action == HandlerAction::Restarted || !restarted.contains(&h.unit));
        Ok(handlers)
    }
}

fn smaller(a: Batch, b: Batch) -> Batch {
    match (a, b) {
        (Batch::Count(x), Batch::Count(y)) => Batch::Count(x.min(y)),
        (Batch::Percent(x), Batch::Percent(y)) => Batch::Percent(x.min(y)),
        // A fixed count is the cautious choice against a percentage of an unknown fleet.
        (Batch::Count(x), Batch::Percent(_)) | (Batch::Percent(_), Batch::Count(x)) => {
            Batch::Count(x)
        }
    }
}
