//! A task's arguments, rendered for one host: literals as written, templates and lone
//! expressions through minijinja, and the checks every module shares (paths, modes,
//! `state: present|absent`).

use minijinja::Value as Ctx;
use serde_json::Value as Json;

use super::Run;
use super::error::PlanErrorKind;
use crate::playbook::Value;

impl Run<'_> {
    pub(super) fn eval(&self, value: &Value, ctx: &Ctx) -> Result<Json, PlanErrorKind> {
        match value {
            Value::Literal(json) => Ok(json.clone()),
            Value::Template(source) => Ok(Json::String(self.env.render_str(source, ctx.clone())?)),
            Value::Expression(expr) => {
                let compiled = self.env.compile_expression(expr)?;
                let result = compiled.eval(ctx.clone())?;
                if result.is_undefined() {
                    return Err(PlanErrorKind::Undefined { expr: expr.clone() });
                }
                serde_json::to_value(&result).map_err(PlanErrorKind::Json)
            }
        }
    }

    pub(super) fn eval_bool(&self, expr: &str, ctx: &Ctx) -> Result<bool, PlanErrorKind> {
        let compiled = self.env.compile_expression(expr)?;
        Ok(compiled.eval(ctx.clone())?.is_true())
    }

    pub(super) fn arg(
        &self,
        value: Option<&Value>,
        ctx: &Ctx,
    ) -> Result<Option<Json>, PlanErrorKind> {
        value.map(|v| self.eval(v, ctx)).transpose()
    }

    /// The argument `key` rendered as a string.
    pub(super) fn string_arg(
        &self,
        value: Option<&Value>,
        key: &'static str,
        ctx: &Ctx,
    ) -> Result<String, PlanErrorKind> {
        match self.arg(value, ctx)? {
            Some(Json::String(s)) if !s.trim().is_empty() => Ok(s),
            Some(Json::Number(n)) => Ok(n.to_string()),
            Some(Json::Bool(b)) => Ok(if b { "1" } else { "0" }.to_string()),
            Some(Json::String(_)) => Err(PlanErrorKind::ArgEmpty { key }),
            Some(got) => Err(PlanErrorKind::ArgNotString { key, got }),
            None => Err(PlanErrorKind::ArgMissing { key }),
        }
    }
}

/// `state:` of yaml_set and env_flag: is the key or flag to go?
pub(super) fn absent(state: Option<Json>) -> Result<bool, PlanErrorKind> {
    match state {
        None => Ok(false),
        Some(Json::String(s)) if s == "present" => Ok(false),
        Some(Json::String(s)) if s == "absent" => Ok(true),
        Some(got) => Err(PlanErrorKind::EditState { got }),
    }
}

pub(super) fn absolute(path: String) -> Result<String, PlanErrorKind> {
    let trimmed = path.trim();
    if !trimmed.starts_with('/') || trimmed.split('/').any(|part| part == "..") {
        return Err(PlanErrorKind::NotAbsolute {
            path: trimmed.to_string(),
        });
    }
    Ok(trimmed.to_string())
}

pub(super) fn mode_string(value: Json) -> Result<String, PlanErrorKind> {
    let text = match value {
        Json::String(s) => s,
        Json::Number(n) => n.to_string(),
        got => return Err(PlanErrorKind::ModeNotText { got }),
    };
    let digits = text.trim_start_matches('0');
    if text.len() > 4 || digits.chars().any(|c| !('0'..='7').contains(&c)) {
        return Err(PlanErrorKind::ModeNotOctal { text });
    }
    Ok(format!("{:0>4}", digits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_are_octal() {
        assert_eq!(
            mode_string(Json::String("644".into())).ok().as_deref(),
            Some("0644")
        );
        assert_eq!(
            mode_string(Json::String("0600".into())).ok().as_deref(),
            Some("0600")
        );
        assert!(mode_string(Json::String("0899".into())).is_err());
        assert_eq!(
            mode_string(Json::Bool(true)).map_err(|e| e.to_string()),
            Err("mode must be an octal string like \"0644\", not true".to_string())
        );
    }

    #[test]
    fn paths_must_be_absolute() {
        assert!(absolute("etc/x".into()).is_err());
        assert_eq!(
            absolute("/etc/../x".into()).map_err(|e| e.to_string()),
            Err("`/etc/../x` must be an absolute path without `..`".to_string())
        );
        assert_eq!(absolute(" /etc/x ".into()).ok().as_deref(), Some("/etc/x"));
    }
}
