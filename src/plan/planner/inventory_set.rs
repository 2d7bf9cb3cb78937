//! `inventory_set`: asks for a value in the local inventory (a Kubespray group_vars key).
//! Nothing on the node changes; `plan::inventory_change` decides which file it goes into.

use minijinja::Value as Ctx;

use super::error::PlanErrorKind;
use super::state::InventorySet;
use super::{Outcome, Run, State};
use crate::plan::model::Reason;
use crate::playbook::action::InventorySetArgs;

impl Run<'_> {
    pub(super) fn inventory_set(
        &self,
        args: &InventorySetArgs,
        ctx: &Ctx,
        state: &mut State,
        reason: &Reason,
    ) -> Result<Outcome, PlanErrorKind> {
        let key = self.string_arg(Some(&args.key), "key", ctx)?;
        // What a saved plan's inventory edit is checked by (plan::saved): a variable of the
        // file's top level, never how Ansible connects.
        let name = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !name || key.starts_with("ansible_") {
            return Err(PlanErrorKind::InventoryKey { key });
        }
        let value = self.eval(&args.value, ctx)?;
        // What yaml_set writes, and Kubespray's DNS variables are: `false` written as a
        // string would read as true in a `when:`.
        let strings = match &value {
            serde_json::Value::String(_) => true,
            serde_json::Value::Array(items) => items.iter().all(serde_json::Value::is_string),
            _ => false,
        };
        if !strings {
            return Err(PlanErrorKind::YamlValue { got: value });
        }
        // Ansible renders every string of the inventory as a Jinja template at its next run,
        // on the controller: a value from a node (a kubelet flag's path) holding template
        // syntax would run there, `{{ lookup('pipe', ...) }}` a command (or a `#jinja2:`
        // header with delimiters of its own). Such a value is never written; the playbook
        // stops here and says why.
        let texts: Vec<&str> = match &value {
            serde_json::Value::String(s) => vec![s.as_str()],
            serde_json::Value::Array(items) => {
                items.iter().filter_map(serde_json::Value::as_str).collect()
            }
            _ => Vec::new(),
        };
        if let Some(t) = texts
            .iter()
            .find(|t| crate::text::ansible_template_syntax(t))
        {
            return Ok(Outcome::Failed(format!(
                "the value for {key} in the inventory, {}, holds Jinja template syntax, which \
                 Ansible would run on the controller at its next run: dnsfix writes no such value \
                 into the inventory",
                crate::text::escape(t)
            )));
        }
        let set = InventorySet {
            key,
            value,
            playbook: reason.playbook.clone(),
        };
        if !state.inventory_sets.contains(&set) {
            state.inventory_sets.push(set);
        }
        Ok(Outcome::Unchanged)
    }
}
