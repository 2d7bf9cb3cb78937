//! Runs the playbooks against one host's facts and findings, on a virtual copy of the
//! node's files, and records what apply would change. Pure: no I/O.
//!
//! Semantics (docs/playbooks.md):
//! - a playbook runs on a host when the host matches `hosts`, one of its `fixes` failed
//!   there (when it lists any), and its `when` is true;
//! - tasks run in order on the files as earlier tasks (and playbooks) left them, so two
//!   tasks editing one file give one change with the final content;
//! - `fail` blocks the playbook on that host: its changes there are dropped and the reason
//!   is shown instead;
//! - handlers fire once per host, after every playbook, if a task that notifies them
//!   changed something; the same unit restarted by several playbooks restarts once.

use std::collections::{BTreeMap, BTreeSet};

use minijinja::Environment;
use serde_json::Value as Json;

use super::model::{Blocked, Change, FactDigest, FileDigest, HandlerRun, Note, Reason};
use crate::edit::{YamlValue, env_flag, yaml_set};
use crate::facts::NodeFacts;
use crate::facts::modules_load::{
    ETC_MODULES, MODULES_LOAD_DIRS, normalize_module, persisted_modules,
};
use crate::facts::raw::{FileState, sha256_hex};
use crate::facts::sysctl::{SYSCTL_CONF, SYSCTL_DIRS, SysctlFile, normalize_key, persisted_files};
use crate::playbook::{Batch, Handler, Module, Playbook, Task, Value};

pub const SYSCTL_FILE: &str = "/etc/sysctl.d/99-dnsfix.conf";
pub const MODULES_FILE: &str = "/etc/modules-load.d/dnsfix.conf";

/// A change to the local inventory a playbook asked for (`inventory_set`).
#[derive(Debug, Clone, PartialEq)]
pub struct InventorySet {
    pub key: String,
    pub value: Json,
    pub playbook: String,
}

/// What planning one host produced.
#[derive(Debug, Default)]
pub struct HostRun {
    pub changes: Vec<Change>,
    pub handlers: Vec<HandlerRun>,
    pub blocked: Vec<Blocked>,
    pub notes: Vec<Note>,
    /// The stated no-op reasons: tasks that found their target as wanted, playbooks whose
    /// `when` was false.
    pub unchanged: Vec<Note>,
    pub inventory_sets: Vec<InventorySet>,
    pub digest: FactDigest,
}

/// A file as the plan sees it: what is on the node and what the plan will put there.
#[derive(Debug, Clone)]
struct VFile {
    before: Option<String>,
    before_sha256: Option<String>,
    current: Option<String>,
    mode: Option<String>,
    descriptions: Vec<String>,
    reasons: Vec<Reason>,
}

/// The per-host state the tasks work on.
#[derive(Debug, Clone, Default)]
struct State {
    files: BTreeMap<String, VFile>,
    /// Paths in the order they were first changed.
    order: Vec<String>,
    sysctls: BTreeMap<String, (Option<String>, String, Vec<Reason>)>,
    sysctl_order: Vec<String>,
    modules: BTreeMap<String, Vec<Reason>>,
    /// (handler name, playbook) → reasons.
    notified: Vec<(String, String, String)>,
    notes: Vec<Note>,
    /// Why tasks changed nothing ("resolvConf already …"), and playbooks whose `when` was
    /// false.
    unchanged: Vec<Note>,
    inventory_sets: Vec<InventorySet>,
}

struct Run<'a> {
    env: &'a Environment<'static>,
    facts: &'a NodeFacts,
    digest: FactDigest,
}

/// Plans one host. `base` is the context from [`super::context::build`]; `selected` says
/// whether the host matches each playbook's `hosts` pattern.
pub fn plan_host(
    playbooks: &[&Playbook],
    env: &Environment<'static>,
    facts: &NodeFacts,
    base: &minijinja::Value,
    failing: &BTreeSet<String>,
) -> Result<HostRun, String> {
    let mut run = Run {
        env,
        facts,
        digest: FactDigest {
            boot_id: facts.boot_id.clone(),
            ..FactDigest::default()
        },
    };
    let mut state = State::default();
    let mut blocked = Vec::new();
    let mut handler_defs: BTreeMap<(String, String), (&Playbook, &Handler)> = BTreeMap::new();
    let mut scopes: BTreeMap<String, serde_json::Map<String, Json>> = BTreeMap::new();

    for playbook in playbooks {
        let fixing: Vec<String> = playbook
            .fixes
            .iter()
            .filter(|id| failing.contains(*id))
            .cloned()
            .collect();
        if !playbook.fixes.is_empty() && fixing.is_empty() {
            continue;
        }
        let mut scope = serde_json::Map::new();
        scope.insert("fixes".into(), serde_json::json!(playbook.fixes));
        scope.insert("playbook".into(), serde_json::json!(playbook.name));
        let at = |what: &str| format!("playbook {} ({}): {what}", playbook.name, playbook.source);
        let ctx = |scope: &serde_json::Map<String, Json>| {
            minijinja::value::merge_maps([
                minijinja::Value::from(minijinja::value::Serde(scope)),
                base.clone(),
            ])
        };
        for (name, value) in &playbook.vars {
            let value = run
                .eval(value, &ctx(&scope))
                .map_err(|e| at(&format!("vars.{name}: {e}")))?;
            scope.insert(name.clone(), value);
        }
        if let Some(when) = &playbook.when
            && !run
                .eval_bool(when, &ctx(&scope))
                .map_err(|e| at(&format!("when: {e}")))?
        {
            let when = when.split_whitespace().collect::<Vec<_>>().join(" ");
            state.unchanged.push(Note {
                playbook: playbook.name.clone(),
                message: format!("not needed here (`when: {when}` is false)"),
            });
            continue;
        }

        let saved = state.clone();
        let mut failed = None;
        'tasks: for task in &playbook.tasks {
            let items: Vec<Option<Json>> = match &task.loop_over {
                Some(expr) => {
                    let list = run
                        .eval(&Value::Expression(expr.clone()), &ctx(&scope))
                        .map_err(|e| at(&format!("task `{}` loop: {e}", task.name)))?;
                    match list {
                        Json::Array(items) => items.into_iter().map(Some).collect(),
                        Json::Null => Vec::new(),
                        other => {
                            return Err(at(&format!(
                                "task `{}` loop: expected a list, got {other}",
                                task.name
                            )));
                        }
                    }
                }
                None => vec![None],
            };
            for item in items {
                let mut task_scope = scope.clone();
                if let Some(item) = item {
                    task_scope.insert("item".into(), item);
                }
                let task_ctx = ctx(&task_scope);
                if let Some(when) = &task.when
                    && !run
                        .eval_bool(when, &task_ctx)
                        .map_err(|e| at(&format!("task `{}` when: {e}", task.name)))?
                {
                    continue;
                }
                let reason = Reason {
                    playbook: playbook.name.clone(),
                    task: task.name.clone(),
                    fixes: fixing.clone(),
                };
                let outcome = run
                    .task(task, &task_ctx, &mut state, &reason)
                    .map_err(|e| at(&format!("task `{}` (line {}): {e}", task.name, task.line)))?;
                match outcome {
                    Outcome::Failed(message) => {
                        failed = Some((task.name.clone(), message));
                        break 'tasks;
                    }
                    Outcome::Changed(what) => {
                        for handler in &task.notify {
                            state.notified.push((
                                handler.clone(),
                                playbook.name.clone(),
                                what.clone(),
                            ));
                        }
                    }
                    Outcome::Already(why) => state.unchanged.push(Note {
                        playbook: playbook.name.clone(),
                        message: why,
                    }),
                    Outcome::Unchanged => {}
                }
            }
        }
        if let Some((task, reason)) = failed {
            state = saved;
            blocked.push(Blocked {
                playbook: playbook.name.clone(),
                task,
                reason,
                fixes: fixing.clone(),
            });
            continue;
        }
        for handler in &playbook.handlers {
            handler_defs.insert(
                (playbook.name.clone(), handler.name.clone()),
                (playbook, handler),
            );
        }
        scopes.insert(playbook.name.clone(), scope.clone());
        // Remember which findings each playbook's handler reasons point at.
        for entry in state
            .notified
            .iter_mut()
            .filter(|(_, p, _)| *p == playbook.name)
        {
            if !entry.2.contains(" ← ") && !fixing.is_empty() {
                entry.2 = format!("{} ← {}", entry.2, fixing.join(", "));
            }
        }
    }

    // Handlers: one run per (unit, action), reasons from every notifying change.
    let mut handlers: Vec<HandlerRun> = Vec::new();
    for (handler_name, playbook_name, what) in &state.notified {
        let Some((playbook, handler)) =
            handler_defs.get(&(playbook_name.clone(), handler_name.clone()))
        else {
            continue;
        };
        // A handler sees its playbook's vars, as its tasks did.
        let scope = scopes.get(playbook_name).cloned().unwrap_or_default();
        let base_ctx = minijinja::value::merge_maps([
            minijinja::Value::from(minijinja::value::Serde(scope)),
            base.clone(),
        ]);
        let unit = run
            .string_arg(&handler.args, "name", &base_ctx)
            .map_err(|e| format!("playbook {} handler `{}`: {e}", playbook.name, handler.name))?;
        let action = match handler.args.get("state") {
            Some(v) => run
                .eval(v, &base_ctx)?
                .as_str()
                .unwrap_or("restarted")
                .to_string(),
            None => "restarted".to_string(),
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
    // A restart makes a reload of the same unit pointless.
    let restarted: BTreeSet<String> = handlers
        .iter()
        .filter(|h| h.action == "restarted")
        .map(|h| h.unit.clone())
        .collect();
    handlers.retain(|h| h.action == "restarted" || !restarted.contains(&h.unit));

    let mut out = HostRun {
        handlers,
        blocked,
        notes: state.notes.clone(),
        unchanged: state.unchanged.clone(),
        inventory_sets: state.inventory_sets.clone(),
        ..HostRun::default()
    };
    for path in &state.order {
        let Some(file) = state.files.get(path) else {
            continue;
        };
        let Some(content) = &file.current else {
            continue;
        };
        if file.before.as_deref() == Some(content.as_str()) {
            continue;
        }
        out.changes.push(Change::WriteFile {
            path: path.clone(),
            description: dedup(&file.descriptions).join("; "),
            before_sha256: file.before_sha256.clone(),
            before: file.before.clone(),
            after_sha256: sha256_hex(content.as_bytes()),
            content: content.clone(),
            mode: if file.before.is_none() {
                Some(file.mode.clone().unwrap_or_else(|| "0644".into()))
            } else {
                None
            },
            reasons: dedup_reasons(&file.reasons),
        });
    }
    for name in &state.sysctl_order {
        if let Some((before, after, reasons)) = state.sysctls.get(name) {
            out.changes.push(Change::Sysctl {
                name: name.clone(),
                before: before.clone(),
                after: after.clone(),
                reasons: dedup_reasons(reasons),
            });
        }
    }
    for (name, reasons) in &state.modules {
        out.changes.push(Change::LoadModule {
            name: name.clone(),
            reasons: dedup_reasons(reasons),
        });
    }
    out.digest = run.digest;
    Ok(out)
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

fn dedup(items: &[String]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    items.iter().filter(|i| seen.insert(*i)).cloned().collect()
}

fn dedup_reasons(reasons: &[Reason]) -> Vec<Reason> {
    let mut out: Vec<Reason> = Vec::new();
    for reason in reasons {
        if !out.contains(reason) {
            out.push(reason.clone());
        }
    }
    out
}

enum Outcome {
    /// Nothing to record (a note, an inventory request).
    Unchanged,
    /// The target is already as the task wants it: the stated no-op reason.
    Already(String),
    /// Something changed; the text says what, for handler reasons.
    Changed(String),
    /// `fail` ran: the playbook is blocked on this host.
    Failed(String),
}

impl Run<'_> {
    fn eval(&self, value: &Value, ctx: &minijinja::Value) -> Result<Json, String> {
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

    fn eval_bool(&self, expr: &str, ctx: &minijinja::Value) -> Result<bool, String> {
        let compiled = self
            .env
            .compile_expression(expr)
            .map_err(|e| describe(&e))?;
        let result = compiled.eval(ctx.clone()).map_err(|e| describe(&e))?;
        Ok(result.is_true())
    }

    fn arg(
        &self,
        args: &BTreeMap<String, Value>,
        key: &str,
        ctx: &minijinja::Value,
    ) -> Result<Option<Json>, String> {
        args.get(key).map(|v| self.eval(v, ctx)).transpose()
    }

    fn string_arg(
        &self,
        args: &BTreeMap<String, Value>,
        key: &str,
        ctx: &minijinja::Value,
    ) -> Result<String, String> {
        match self.arg(args, key, ctx)? {
            Some(Json::String(s)) if !s.trim().is_empty() => Ok(s),
            Some(Json::Number(n)) => Ok(n.to_string()),
            Some(Json::Bool(b)) => Ok(if b { "1" } else { "0" }.to_string()),
            Some(Json::String(_)) => Err(format!("`{key}` is empty")),
            Some(other) => Err(format!("`{key}` must be a string, got {other}")),
            None => Err(format!("`{key}` is missing")),
        }
    }

    fn task(
        &mut self,
        task: &Task,
        ctx: &minijinja::Value,
        state: &mut State,
        reason: &Reason,
    ) -> Result<Outcome, String> {
        let args = &task.args;
        match task.module {
            Module::Fail => Ok(Outcome::Failed(
                self.string_arg(args, "msg", ctx)?.trim().to_string(),
            )),
            Module::Note => {
                state.notes.push(Note {
                    playbook: reason.playbook.clone(),
                    message: self.string_arg(args, "msg", ctx)?.trim().to_string(),
                });
                Ok(Outcome::Unchanged)
            }
            Module::InventorySet => {
                let key = self.string_arg(args, "key", ctx)?;
                let value = self.arg(args, "value", ctx)?.unwrap_or(Json::Null);
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
            Module::Template => {
                let src = self.string_arg(args, "src", ctx)?;
                let dest = absolute(self.string_arg(args, "dest", ctx)?)?;
                let mode = self.arg(args, "mode", ctx)?.map(mode_string).transpose()?;
                let template = self.env.get_template(&src).map_err(|e| describe(&e))?;
                let content = template.render(ctx.clone()).map_err(|e| describe(&e))?;
                let description = format!("rendered from {src}");
                let already = format!("{dest} already as rendered from {src}");
                self.write(state, &dest, content, mode, description, reason)
                    .map(|changed| outcome(changed, format!("{dest} changed"), already))
            }
            Module::YamlSet => {
                let path = absolute(self.string_arg(args, "path", ctx)?)?;
                let key = self.string_arg(args, "key", ctx)?;
                let absent = match self.arg(args, "state", ctx)? {
                    None => false,
                    Some(Json::String(s)) if s == "present" => false,
                    Some(Json::String(s)) if s == "absent" => true,
                    Some(other) => {
                        return Err(format!("state must be present or absent, not {other}"));
                    }
                };
                let create = matches!(self.arg(args, "create", ctx)?, Some(Json::Bool(true)));
                let mode = self.arg(args, "mode", ctx)?.map(mode_string).transpose()?;
                let current = self.read(state, &path)?;
                let text = match (current, create) {
                    (Some(text), _) => text,
                    (None, true) => String::new(),
                    (None, false) => return Err(format!("{path} does not exist on the node")),
                };
                let old = yaml_value_at(&text, &key);
                let (edit, new) = if absent {
                    (yaml_set::remove(&text, &key), None)
                } else {
                    let value = yaml_value(self.arg(args, "value", ctx)?)?;
                    let shown = show_yaml(&value);
                    (yaml_set::set(&text, &key, &value), Some(shown))
                };
                let edit = edit.map_err(|e| format!("{path}: {e}"))?;
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
                    .map(|changed| outcome(changed, format!("{path} {key} changed"), already))
            }
            Module::EnvFlag => {
                let path = absolute(self.string_arg(args, "path", ctx)?)?;
                let var = self.string_arg(args, "var", ctx)?;
                let flag = self.string_arg(args, "flag", ctx)?;
                let flag = flag.trim_start_matches('-').to_string();
                let absent = match self.arg(args, "state", ctx)? {
                    None => false,
                    Some(Json::String(s)) if s == "present" => false,
                    Some(Json::String(s)) if s == "absent" => true,
                    Some(other) => {
                        return Err(format!("state must be present or absent, not {other}"));
                    }
                };
                let Some(text) = self.read(state, &path)? else {
                    return Err(format!("{path} does not exist on the node"));
                };
                let (edit, description) = if absent {
                    (
                        env_flag::remove_flag(&text, &var, &flag),
                        format!("{var}: --{flag} removed"),
                    )
                } else {
                    let value = self.string_arg(args, "value", ctx)?;
                    let description = format!("{var}: --{flag}={value}");
                    (env_flag::set_flag(&text, &var, &flag, &value), description)
                };
                let edit = edit.map_err(|e| format!("{path}: {e}"))?;
                if !edit.changed {
                    return Ok(Outcome::Already(format!("{path}: already {description}")));
                }
                let already = format!("{path}: already {description}");
                self.write(state, &path, edit.text, None, description, reason)
                    .map(|changed| outcome(changed, format!("{path} --{flag} changed"), already))
            }
            Module::Sysctl => self.sysctl(args, ctx, state, reason),
            Module::Modprobe => self.modprobe(args, ctx, state, reason),
            Module::Service => Err("service runs only as a handler".into()),
        }
    }

    fn sysctl(
        &mut self,
        args: &BTreeMap<String, Value>,
        ctx: &minijinja::Value,
        state: &mut State,
        reason: &Reason,
    ) -> Result<Outcome, String> {
        let name = normalize_key(&self.string_arg(args, "name", ctx)?);
        let value = self.string_arg(args, "value", ctx)?;
        let file = self.boot_file(args, ctx, SYSCTL_FILE, &SYSCTL_DIRS, SYSCTL_CONF)?;
        let proc_path = format!("/proc/sys/{}", name.replace('.', "/"));
        let live = match self.facts.files.get(&proc_path) {
            Some(f) if f.state == FileState::Present => {
                Some(String::from_utf8_lossy(&f.content).trim().to_string())
            }
            Some(f) if f.state == FileState::Missing => None,
            Some(_) => return Err(format!("{proc_path} could not be read")),
            None => {
                return Err(format!(
                    "{proc_path} was not gathered, so its value is unknown"
                ));
            }
        };
        self.digest.sysctls.insert(
            name.clone(),
            live.clone().unwrap_or_else(|| "absent".into()),
        );
        let mut changed = Vec::new();
        let live_differs = live.as_deref().map(normalize_value) != Some(normalize_value(&value));
        if live_differs {
            let entry = state
                .sysctls
                .entry(name.clone())
                .or_insert_with(|| (live.clone(), value.clone(), Vec::new()));
            entry.1 = value.clone();
            entry.2.push(reason.clone());
            if !state.sysctl_order.contains(&name) {
                state.sysctl_order.push(name.clone());
            }
            changed.push(format!("{name} set to {value}"));
        }

        // Persist: set the line in our file, then check it is what the boot applies.
        let winning = |state: &mut State,
                       run: &mut Self|
         -> Result<Option<(String, String, usize)>, String> {
            let files = run.config_files(state, &SYSCTL_DIRS, SYSCTL_CONF)?;
            Ok(persisted_files(&files)
                .get(&name)
                .map(|p| (p.value.clone(), p.path.clone(), p.line)))
        };
        let before = winning(state, self)?;
        if before.as_ref().map(|(v, _, _)| normalize_value(v)) != Some(normalize_value(&value)) {
            let text = self.read(state, &file)?;
            let new = set_sysctl_line(text.as_deref(), &name, &value);
            self.write(state, &file, new, None, format!("{name} = {value}"), reason)?;
            changed.push(format!("{file} {name} = {value}"));
            if let Some((other, path, line)) = winning(state, self)?
                && normalize_value(&other) != normalize_value(&value)
            {
                state.notes.push(Note {
                    playbook: reason.playbook.clone(),
                    message: format!(
                        "{path}:{line} sets {name} = {other} and is applied after {file} at boot; \
                         edit that line, or the value reverts on the next boot"
                    ),
                });
            }
        }
        Ok(if changed.is_empty() {
            Outcome::Already(format!("{name} already {value}, now and at boot"))
        } else {
            Outcome::Changed(changed.join(", "))
        })
    }

    fn modprobe(
        &mut self,
        args: &BTreeMap<String, Value>,
        ctx: &minijinja::Value,
        state: &mut State,
        reason: &Reason,
    ) -> Result<Outcome, String> {
        let name = normalize_module(&self.string_arg(args, "name", ctx)?);
        let file = self.boot_file(args, ctx, MODULES_FILE, &MODULES_LOAD_DIRS, ETC_MODULES)?;
        let loaded = self.module_loaded(&name)?;
        self.digest.modules.insert(name.clone(), loaded);
        let mut changed = Vec::new();
        if !loaded {
            state
                .modules
                .entry(name.clone())
                .or_default()
                .push(reason.clone());
            changed.push(format!("{name} loaded"));
        }
        let files = self.config_files(state, &MODULES_LOAD_DIRS, ETC_MODULES)?;
        let inputs: Vec<(String, &str)> = files
            .iter()
            .map(|(p, t, _)| (p.clone(), t.as_str()))
            .collect();
        if !persisted_modules(&inputs).contains_key(&name) {
            let text = self.read(state, &file)?;
            let mut new = match text {
                Some(t) if !t.is_empty() && !t.ends_with('\n') => format!("{t}\n"),
                Some(t) => t,
                None => {
                    "# Managed by dnsfix: kernel modules Kubernetes networking needs at boot.\n"
                        .to_string()
                }
            };
            new.push_str(&name);
            new.push('\n');
            self.write(
                state,
                &file,
                new,
                None,
                format!("load {name} at boot"),
                reason,
            )?;
            changed.push(format!("{file} lists {name}"));
        }
        Ok(if changed.is_empty() {
            Outcome::Already(format!("{name} already loaded, now and at boot"))
        } else {
            Outcome::Changed(changed.join(", "))
        })
    }

    /// The `file` argument of sysctl and modprobe (default `default`): a file the boot
    /// reads, in one of `dirs` or `legacy` itself.
    fn boot_file(
        &self,
        args: &BTreeMap<String, Value>,
        ctx: &minijinja::Value,
        default: &str,
        dirs: &[&str],
        legacy: &str,
    ) -> Result<String, String> {
        let file = match self.arg(args, "file", ctx)? {
            Some(_) => absolute(self.string_arg(args, "file", ctx)?)?,
            None => default.to_string(),
        };
        if dirs.iter().any(|d| in_dir(&file, d)) || file == legacy {
            Ok(file)
        } else {
            Err(format!(
                "{file} is not read at boot: use a file in {} or {legacy}",
                dirs.join(", ")
            ))
        }
    }

    fn module_loaded(&self, name: &str) -> Result<bool, String> {
        if name == "br_netfilter" {
            if self.facts.br_netfilter.built_in {
                return Ok(true);
            }
            return match &self.facts.br_netfilter.loaded {
                crate::facts::node_facts::Observed::Known(loaded) => Ok(*loaded),
                crate::facts::node_facts::Observed::Absent => Ok(false),
                crate::facts::node_facts::Observed::Unknown(why) => Err(why.clone()),
            };
        }
        let modules = self
            .facts
            .files
            .get("/proc/modules")
            .and_then(|f| f.text())
            .ok_or("/proc/modules could not be read")?;
        Ok(modules
            .lines()
            .any(|l| l.split_whitespace().next() == Some(name))
            || self
                .facts
                .files
                .contains_key(&format!("/sys/module/{name}"))
                && self.facts.files[&format!("/sys/module/{name}")].state == FileState::Directory)
    }

    /// The `*.conf` files of `dirs` as the plan leaves them, plus `legacy`: `(path, text,
    /// symlink canonical target)`.
    fn config_files(
        &mut self,
        state: &mut State,
        dirs: &[&str],
        legacy: &str,
    ) -> Result<Vec<(String, String, Option<String>)>, String> {
        let mut paths: BTreeSet<String> = self
            .facts
            .files
            .keys()
            .filter(|p| dirs.iter().any(|d| in_dir(p, d)) || *p == legacy)
            .cloned()
            .collect();
        paths.extend(
            state
                .files
                .keys()
                .filter(|p| dirs.iter().any(|d| in_dir(p, d)) || *p == legacy)
                .cloned(),
        );
        let mut out = Vec::new();
        for path in paths {
            let canonical = self
                .facts
                .files
                .get(&path)
                .and_then(|f| f.symlink_target.as_ref().and(f.canonical.clone()));
            let text = match state.files.get(&path) {
                Some(v) => v.current.clone(),
                None => match self.facts.files.get(&path) {
                    Some(f) => f.text().map(|t| t.into_owned()),
                    None => None,
                },
            };
            if let Some(text) = text {
                out.push((path, text, canonical));
            } else if let Some(canonical) = canonical {
                out.push((path, String::new(), Some(canonical)));
            }
        }
        Ok(out)
    }

    /// The current text of `path` (as earlier tasks left it), or `None` when it does not
    /// exist. A file the gather did not see, could not read, or that is not text, is an
    /// error: the plan must know exactly what it replaces.
    fn read(&mut self, state: &mut State, path: &str) -> Result<Option<String>, String> {
        if let Some(file) = state.files.get(path) {
            return Ok(file.current.clone());
        }
        let (before, sha) = match self.facts.files.get(path) {
            Some(raw) => {
                self.digest.files.insert(path.to_string(), file_digest(raw));
                if let Some(target) = &raw.symlink_target {
                    return Err(format!(
                        "{path} is a symlink to {target}; dnsfix writes only regular files \
                         (edit the target, or replace the link by hand)"
                    ));
                }
                match raw.state {
                    FileState::Present if raw.truncated => {
                        return Err(format!("{path} is larger than the gather reads"));
                    }
                    FileState::Present => {
                        let text = String::from_utf8(raw.content.to_vec())
                            .map_err(|_| format!("{path} is not UTF-8 text"))?;
                        (Some(text), raw.sha256.clone())
                    }
                    FileState::Missing => (None, None),
                    FileState::Directory => return Err(format!("{path} is a directory")),
                    FileState::Unreadable => return Err(format!("{path} could not be read")),
                }
            }
            None if self.known_missing(path) => {
                self.digest.files.insert(
                    path.to_string(),
                    FileDigest {
                        state: "missing".into(),
                        sha256: None,
                        symlink: None,
                    },
                );
                (None, None)
            }
            None => {
                return Err(format!(
                    "{path} was not gathered, so its current content is unknown (gather reads \
                     the files dnsfix may write; use a path under one of those directories)"
                ));
            }
        };
        state.files.insert(
            path.to_string(),
            VFile {
                before: before.clone(),
                before_sha256: sha,
                current: before.clone(),
                mode: None,
                descriptions: Vec::new(),
                reasons: Vec::new(),
            },
        );
        Ok(before)
    }

    /// The gather listed the parent directory and the file is not in it (the conf
    /// directories are listed for `*.conf` only, /etc/dnsfix whole), or an ancestor is
    /// known to be missing.
    fn known_missing(&self, path: &str) -> bool {
        let raw = &self.facts.raw;
        let mut dir = std::path::Path::new(path).parent();
        let mut first = true;
        while let Some(d) = dir {
            let d_str = d.to_string_lossy();
            let listed_for_it = d_str == "/etc/dnsfix" || path.ends_with(".conf");
            if first && listed_for_it && raw.dirs.iter().any(|listed| listed == d_str.as_ref()) {
                return true;
            }
            if let Some(f) = self.facts.files.get(d_str.as_ref())
                && f.state == FileState::Missing
            {
                return true;
            }
            first = false;
            dir = d.parent();
        }
        false
    }

    fn write(
        &mut self,
        state: &mut State,
        path: &str,
        content: String,
        mode: Option<String>,
        description: String,
        reason: &Reason,
    ) -> Result<bool, String> {
        let current = self.read(state, path)?;
        if current.as_deref() == Some(content.as_str()) {
            return Ok(false);
        }
        if !state.order.iter().any(|p| p == path) {
            state.order.push(path.to_string());
        }
        if let Some(file) = state.files.get_mut(path) {
            file.current = Some(content);
            if mode.is_some() {
                file.mode = mode;
            }
            file.descriptions.push(description);
            file.reasons.push(reason.clone());
        }
        Ok(true)
    }
}

/// Is `path` a file directly in directory `dir` (given without a trailing slash)? Only
/// those are read at boot from sysctl.d and modules-load.d.
fn in_dir(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir)
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(|name| !name.is_empty() && !name.contains('/'))
}

fn outcome(changed: bool, what: String, already: String) -> Outcome {
    if changed {
        Outcome::Changed(what)
    } else {
        Outcome::Already(already)
    }
}

fn describe(error: &minijinja::Error) -> String {
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

fn absolute(path: String) -> Result<String, String> {
    let trimmed = path.trim();
    if !trimmed.starts_with('/') || trimmed.split('/').any(|part| part == "..") {
        return Err(format!("`{trimmed}` must be an absolute path without `..`"));
    }
    Ok(trimmed.to_string())
}

fn mode_string(value: Json) -> Result<String, String> {
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

fn yaml_value(value: Option<Json>) -> Result<YamlValue, String> {
    match value {
        Some(Json::String(s)) => Ok(YamlValue::String(s)),
        Some(Json::Array(items)) => items
            .into_iter()
            .map(|item| match item {
                Json::String(s) => Ok(s),
                Json::Number(n) => Ok(n.to_string()),
                other => Err(format!("list items must be strings, not {other}")),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(YamlValue::List),
        Some(Json::Number(n)) => Ok(YamlValue::String(n.to_string())),
        Some(other) => Err(format!(
            "value must be a string or a list of strings, not {other}"
        )),
        None => Err("`value` is missing".into()),
    }
}

fn show_yaml(value: &YamlValue) -> String {
    match value {
        YamlValue::String(s) => s.clone(),
        YamlValue::List(items) => format!("[{}]", items.join(", ")),
    }
}

/// The value at a dotted key, shown like [`show_yaml`]; `None` when unset or unparseable.
fn yaml_value_at(text: &str, key: &str) -> Option<String> {
    let mut value: serde_norway::Value = serde_norway::from_str(text).ok()?;
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

/// sysctl values compare by their words (`1` and ` 1`, `4096 87380` and `4096\t87380`).
fn normalize_value(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Sets `key = value` in a sysctl.d file: replaces the last line that assigns the key (the
/// one that wins), or appends one; a new file gets a header saying who owns it.
fn set_sysctl_line(text: Option<&str>, key: &str, value: &str) -> String {
    let line = format!("{key} = {value}");
    let Some(text) = text else {
        return format!(
            "# Managed by dnsfix: kernel settings Kubernetes networking needs.\n{line}\n"
        );
    };
    let parsed = SysctlFile::parse(text);
    if let Some(entry) = parsed.entries.iter().rev().find(|e| e.key == key) {
        let mut out = String::new();
        for (index, raw) in text.split_inclusive('\n').enumerate() {
            if index + 1 == entry.line {
                let ending = if raw.ends_with("\r\n") {
                    "\r\n"
                } else if raw.ends_with('\n') {
                    "\n"
                } else {
                    ""
                };
                out.push_str(&line);
                out.push_str(ending);
            } else {
                out.push_str(raw);
            }
        }
        return out;
    }
    let mut out = text.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// The digest of one gathered file, as plans record it.
pub fn file_digest(raw: &crate::facts::raw::RawFile) -> FileDigest {
    FileDigest {
        state: match raw.state {
            FileState::Present => "present",
            FileState::Missing => "missing",
            FileState::Directory => "directory",
            FileState::Unreadable => "unreadable",
        }
        .into(),
        sha256: raw.sha256.clone(),
        symlink: raw.symlink_target.clone(),
    }
}

/// Adds the facts every plan depends on to `digest`: every configuration file the gather
/// read (all of it outside /proc and /sys: a `when`, a template or a rule may have used
/// any of them), besides the /proc values the tasks read. Volatile kernel state such as
/// /proc/modules or the kubelet's pid is left out, so only a real change makes a plan
/// stale.
pub fn digest_core(digest: &mut FactDigest, facts: &NodeFacts) {
    for (path, raw) in &facts.files {
        if path.starts_with("/proc/") || path.starts_with("/sys/") {
            continue;
        }
        digest
            .files
            .entry(path.clone())
            .or_insert_with(|| file_digest(raw));
    }
    let mut canonical = digest.clone();
    canonical.sha256 = String::new();
    digest.sha256 = sha256_hex(
        serde_json::to_string(&canonical)
            .unwrap_or_default()
            .as_bytes(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_line_replaces_the_winning_assignment() {
        let text = "# keep\nnet.ipv4.ip_forward = 0\nother = 1\nnet.ipv4.ip_forward=0\n";
        assert_eq!(
            set_sysctl_line(Some(text), "net.ipv4.ip_forward", "1"),
            "# keep\nnet.ipv4.ip_forward = 0\nother = 1\nnet.ipv4.ip_forward = 1\n"
        );
        assert_eq!(set_sysctl_line(Some("a = 1"), "b", "2"), "a = 1\nb = 2\n");
        assert!(set_sysctl_line(None, "b", "2").ends_with("\nb = 2\n"));
    }

    #[test]
    fn boot_files_are_directly_in_their_directory() {
        assert!(in_dir("/etc/sysctl.d/99-dnsfix.conf", "/etc/sysctl.d"));
        assert!(!in_dir("/etc/sysctl.d/sub/x.conf", "/etc/sysctl.d"));
        assert!(!in_dir("/etc/sysctl.dx/x.conf", "/etc/sysctl.d"));
        assert!(!in_dir("/etc/sysctl.d/", "/etc/sysctl.d"));
    }

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

    #[test]
    fn yaml_values_read_back_for_descriptions() {
        let text = "a:\n  b: x\nlist:\n- 1.2.3.4\n";
        assert_eq!(yaml_value_at(text, "a.b").as_deref(), Some("x"));
        assert_eq!(yaml_value_at(text, "list").as_deref(), Some("[1.2.3.4]"));
        assert_eq!(yaml_value_at(text, "missing"), None);
    }
}
