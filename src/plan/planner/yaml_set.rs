//! `yaml_set`: one key of a YAML file humans own (a kubelet config, a k3s/RKE2
//! `config.yaml`), edited in place by `edit::yaml_set` so every other line stays.

use minijinja::Value as Ctx;
use serde_json::Value as Json;

use super::args::{absent, absolute, mode_string};
use super::error::PlanErrorKind;
use super::{Outcome, Run, State, outcome};
use crate::edit::{YamlValue, yaml_set};
use crate::plan::model::Reason;
use crate::playbook::action::YamlSetArgs;

impl Run<'_> {
    pub(super) fn yaml_set(
        &mut self,
        args: &YamlSetArgs,
        ctx: &Ctx,
        state: &mut State,
        reason: &Reason,
    ) -> Result<Outcome, PlanErrorKind> {
        let path = absolute(self.string_arg(Some(&args.path), "path", ctx)?)?;
        let key = self.string_arg(Some(&args.key), "key", ctx)?;
        let absent = absent(self.arg(args.state.as_ref(), ctx)?)?;
        let create = matches!(self.arg(args.create.as_ref(), ctx)?, Some(Json::Bool(true)));
        let mode = self
            .arg(args.mode.as_ref(), ctx)?
            .map(mode_string)
            .transpose()?;
        let current = self.read(state, &path)?;
        let text = match (current, create) {
            (Some(text), _) => text,
            (None, true) => String::new(),
            (None, false) => return Err(PlanErrorKind::NoSuchFile { path }),
        };
        let old = yaml_value_at(&text, &key);
        let value = if absent {
            None
        } else {
            Some(yaml_value(self.arg(args.value.as_ref(), ctx)?)?)
        };
        let new = value.as_ref().map(show_yaml);
        // The kubelet's --config file is decoded leniently where strict decoding fails: a
        // key written twice there has its last value (its drop-ins are strict). So are k3s's
        // and RKE2's config.yaml and config.yaml.d files (go-yaml v2 into a yaml.MapSlice,
        // the later entry replacing the earlier: k3s pkg/configfilearg/parser.go).
        let edit = if self.facts.kubelet.config_path.as_deref() == Some(path.as_str())
            || rancher_config_dropin(self.facts, &path)
        {
            yaml_set::set_last_wins(&text, &key, value.as_ref())
        } else {
            match &value {
                Some(value) => yaml_set::set(&text, &key, value),
                None => yaml_set::remove(&text, &key),
            }
        };
        let edit = edit.map_err(|error| PlanErrorKind::YamlEdit {
            path: path.clone(),
            error,
        })?;
        if !edit.changed {
            return Ok(Outcome::Already(match &new {
                Some(value) => format!("{path}: {key} already {value}"),
                None => format!("{path}: {key} already unset"),
            }));
        }
        let description = match new {
            Some(new) => {
                format!("{key}: {} → {new}", old.unwrap_or_else(|| "unset".into()))
            }
            None => format!("{key} removed"),
        };
        let already = format!("{path}: {key} already as wanted");
        self.write(state, &path, edit.text, mode, description, reason)
            .map(|changed| outcome(changed, &path, format!("{path} {key} changed"), already))
    }
}

/// A `config.yaml.d` drop-in of the k3s/RKE2 config file this node's kubelet settings come
/// from: a file k3s reads as it reads config.yaml.
fn rancher_config_dropin(facts: &crate::facts::NodeFacts, path: &str) -> bool {
    use crate::facts::node_facts::FlavourKind;
    matches!(facts.flavour.kind, FlavourKind::K3s | FlavourKind::Rke2)
        && facts.kubelet.config_path.as_deref().is_some_and(|config| {
            path.strip_prefix(config)
                .and_then(|rest| rest.strip_prefix(".d/"))
                .is_some_and(|name| !name.contains('/'))
        })
}

fn yaml_value(value: Option<Json>) -> Result<YamlValue, PlanErrorKind> {
    match value {
        Some(Json::String(s)) => Ok(YamlValue::String(s)),
        Some(Json::Array(items)) => items
            .into_iter()
            .map(|item| match item {
                Json::String(s) => Ok(s),
                Json::Number(n) => Ok(n.to_string()),
                got => Err(PlanErrorKind::ListItem { got }),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(YamlValue::List),
        Some(Json::Number(n)) => Ok(YamlValue::String(n.to_string())),
        Some(got) => Err(PlanErrorKind::YamlValue { got }),
        None => Err(PlanErrorKind::ArgMissing { key: "value" }),
    }
}

fn show_yaml(value: &YamlValue) -> String {
    match value {
        YamlValue::String(s) => s.clone(),
        YamlValue::List(items) => format!("[{}]", items.join(", ")),
    }
}

/// The value at a dotted key, shown like [`show_yaml`]; `None` when unset or unparseable.
/// A key written twice shows its last value, the one the kubelet reads from its `--config`.
fn yaml_value_at(text: &str, key: &str) -> Option<String> {
    let mut value = serde_norway::from_str(text)
        .ok()
        .or_else(|| crate::facts::kubelet_config::last_wins(text))?;
    for part in key.split('.') {
        value = value.get(part)?.clone();
    }
    Some(match value {
        serde_norway::Value::String(s) if s.is_empty() => "\"\"".to_string(),
        serde_norway::Value::String(s) => s,
        serde_norway::Value::Sequence(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|i| match i {
                    serde_norway::Value::String(s) => s.clone(),
                    other => serde_norway::to_string(other)
                        .unwrap_or_default()
                        .trim()
                        .to_string(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
        serde_norway::Value::Null => return None,
        other => serde_norway::to_string(&other).ok()?.trim().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_values_read_back_for_descriptions() {
        let text = "a:\n  b: x\nlist:\n- 1.2.3.4\n";
        assert_eq!(yaml_value_at(text, "a.b").as_deref(), Some("x"));
        assert_eq!(yaml_value_at(text, "list").as_deref(), Some("[1.2.3.4]"));
        assert_eq!(yaml_value_at(text, "missing"), None);
    }
}
