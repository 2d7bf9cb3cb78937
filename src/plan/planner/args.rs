//! A task's arguments, rendered for one host: literals as written, templates and lone
//! expressions through minijinja, and the checks every module shares (paths, modes,
//! `state: present|absent`).

use minijinja::Value as Ctx;
use serde_json::Value as Json;

use super::Run;
use crate::playbook::Value;

impl Run<'_> {
    pub(super) fn eval(&self, value: &Value, ctx: &Ctx) -> Result<Json, String> {
        match value {
            Value::Literal(json) => Ok(json.clone()),
            Value::Template(source) => self
                .env
                .render_str(source, ctx.clone())
                .map(Json::String)
                .map_err(|e| describe(&e)),
            Value::Expression(expr) => {
                let compiled = self
                    .env
                    .compile_expression(expr)
                    .map_err(|e| describe(&e))?;
                let result = compiled.eval(ctx.clone()).map_err(|e| describe(&e))?;
                if result.is_undefined() {
                    return Err(format!("`{expr}` is undefined"));
                }
                serde_json::to_value(&result).map_err(|e| e.to_string())
            }
        }
    }

    pub(super) fn eval_bool(&self, expr: &str, ctx: &Ctx) -> Result<bool, String> {
        let compiled = self
            .env
            .compile_expression(expr)
            .map_err(|e| describe(&e))?;
        let result = compiled.eval(ctx.clone()).map_err(|e| describe(&e))?;
        Ok(result.is_true())
    }

    pub(super) fn arg(&self, value: Option<&Value>, ctx: &Ctx) -> Result<Option<Json>, String> {
        value.map(|v| self.eval(v, ctx)).transpose()
    }

    /// The argument `key` rendered as a string.
    pub(super) fn string_arg(
        &self,
        value: Option<&Value>,
        key: &str,
        ctx: &Ctx,
    ) -> Result<String, String> {
        match self.arg(value, ctx)? {
            Some(Json::String(s)) if !s.trim().is_empty() => Ok(s),
            Some(Json::Number(n)) => Ok(n.to_string()),
            Some(Json::Bool(b)) => Ok(if b { "1" } else { "0" }.to_string()),
            Some(Json::String(_)) => Err(format!("`{key}` is empty")),
            Some(other) => Err(format!("`{key}` must be a string, got {other}")),
            None => Err(format!("`{key}` is missing")),
        }
    }
}

/// `state:` of yaml_set and env_flag: is the key or flag to go?
pub(super) fn absent(state: Option<Json>) -> Result<bool, String> {
    match state {
        None => Ok(false),
        Some(Json::String(s)) if s == "present" => Ok(false),
        Some(Json::String(s)) if s == "absent" => Ok(true),
        Some(other) => Err(format!("state must be present or absent, not {other}")),
    }
}

pub(super) fn describe(error: &minijinja::Error) -> String {
    let mut message = match error.detail() {
        Some(detail) => format!("{}: {detail}", error.kind()),
        None => error.to_string(),
    };
    if let Some(name) = error.name()
        && let Some(line) = error.line()
    {
        message.push_str(&format!(" (in {name} line {line})"));
    }
    message
}

pub(super) fn absolute(path: String) -> Result<String, String> {
    let trimmed = path.trim();
    if !trimmed.starts_with('/') || trimmed.split('/').any(|part| part == "..") {
        return Err(format!("`{trimmed}` must be an absolute path without `..`"));
    }
    Ok(trimmed.to_string())
}

pub(super) fn mode_string(value: Json) -> Result<String, String> {
    let text = match value {
        Json::String(s) => s,
        Json::Number(n) => n.to_string(),
        other => {
            return Err(format!(
                "mode must be an octal string like \"0644\", not {other}"
            ));
        }
    };
    let digits = text.trim_start_matches('0');
    if text.len() > 4 || digits.chars().any(|c| !('0'..='7').contains(&c)) {
        return Err(format!(
            "mode must be an octal string like \"0644\", not {text:?}"
        ));
    }
    Ok(format!("{:0>4}", digits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_are_octal() {
        assert_eq!(mode_string(Json::String("644".into())), Ok("0644".into()));
        assert_eq!(mode_string(Json::String("0600".into())), Ok("0600".into()));
        assert!(mode_string(Json::String("0899".into())).is_err());
        assert!(mode_string(Json::Bool(true)).is_err());
    }

    #[test]
    fn paths_must_be_absolute() {
        assert!(absolute("etc/x".into()).is_err());
        assert!(absolute("/etc/../x".into()).is_err());
        assert_eq!(absolute(" /etc/x ".into()), Ok("/etc/x".into()));
    }
}
