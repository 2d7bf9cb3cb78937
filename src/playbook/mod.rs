//! Playbooks: declarative fixes, shipped inside the binary (`playbooks/`, `templates/`) and
//! overridable from a directory. This module loads and checks them; `plan` runs them.
//!
//! Loading is strict, because a reviewer approves what a playbook does: unknown keys,
//! unknown modules, missing or unknown module arguments, a `notify` without a handler, a
//! template that does not exist and a `when` or `{{ }}` that does not compile are errors
//! naming the file and line. Nothing is evaluated here; values are compiled for syntax only.

pub mod action;
pub mod model;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use minijinja::Environment;
use minijinja::syntax::SyntaxConfig;

pub use action::{Action, Module, Service};
pub use model::{Allow, Serial};
use model::{HandlerFile, PlaybookFile, TaskFile};

/// The playbooks shipped with dnsfix, in the order they run.
pub const BUILTIN_PLAYBOOKS: &[(&str, &str)] = &[
    (
        "10-kubelet-flag-shadow.yml",
        include_str!("../../playbooks/10-kubelet-flag-shadow.yml"),
    ),
    (
        "20-kubelet-resolvconf.yml",
        include_str!("../../playbooks/20-kubelet-resolvconf.yml"),
    ),
    (
        "30-host-upstream-dns.yml",
        include_str!("../../playbooks/30-host-upstream-dns.yml"),
    ),
    (
        "40-bridge-netfilter.yml",
        include_str!("../../playbooks/40-bridge-netfilter.yml"),
    ),
    (
        "50-nodelocaldns-clusterdns.yml",
        include_str!("../../playbooks/50-nodelocaldns-clusterdns.yml"),
    ),
    (
        "55-kubelet-cluster-dns.yml",
        include_str!("../../playbooks/55-kubelet-cluster-dns.yml"),
    ),
    (
        "60-corefile-upstream.yml",
        include_str!("../../playbooks/60-corefile-upstream.yml"),
    ),
    (
        "70-kubelet-restart-due.yml",
        include_str!("../../playbooks/70-kubelet-restart-due.yml"),
    ),
];

/// The templates shipped with dnsfix.
pub const BUILTIN_TEMPLATES: &[(&str, &str)] = &[
    (
        "upstream-resolv.conf.j2",
        include_str!("../../templates/upstream-resolv.conf.j2"),
    ),
    (
        "resolved-upstream.conf.j2",
        include_str!("../../templates/resolved-upstream.conf.j2"),
    ),
    (
        "networkmanager-upstream.conf.j2",
        include_str!("../../templates/networkmanager-upstream.conf.j2"),
    ),
    (
        "host-resolv.conf.j2",
        include_str!("../../templates/host-resolv.conf.j2"),
    ),
    (
        "rancher-cluster-dns.yaml.j2",
        include_str!("../../templates/rancher-cluster-dns.yaml.j2"),
    ),
];

#[derive(Debug, thiserror::Error)]
pub enum PlaybookError {
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{file}:{line}: {message}")]
    Invalid {
        file: String,
        line: usize,
        message: String,
    },
}

fn invalid(file: &str, line: usize, message: impl Into<String>) -> PlaybookError {
    PlaybookError::Invalid {
        file: file.to_string(),
        line,
        message: message.into(),
    }
}

/// A value in a playbook: a literal, a template string rendered to a string, or a lone
/// `{{ expression }}` evaluated to keep its type (a list stays a list), as in Ansible.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Literal(serde_json::Value),
    Template(String),
    Expression(String),
}

impl Value {
    /// The text of a literal string, trimmed; `None` for anything rendered per host.
    pub fn literal_str(&self) -> Option<String> {
        match self {
            Value::Literal(serde_json::Value::String(s)) => Some(s.trim().to_string()),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Task {
    pub name: String,
    /// 1-based line of the task in its file.
    pub line: usize,
    pub when: Option<String>,
    pub loop_over: Option<String>,
    pub notify: Vec<String>,
    pub action: Action,
}

#[derive(Debug, Clone)]
pub struct Handler {
    pub name: String,
    pub line: usize,
    pub service: Service,
}

#[derive(Debug, Clone)]
pub struct Playbook {
    pub name: String,
    pub description: String,
    /// The file it came from: `builtin:NAME` or a path.
    pub source: String,
    /// sha256 of the file, recorded in saved plans.
    pub sha256: String,
    pub fixes: Vec<String>,
    pub hosts: String,
    pub when: Option<String>,
    pub vars: Vec<(String, Value)>,
    /// Batch size for restarts: `Count(n)` or `Percent(p)`.
    pub serial: Batch,
    pub tasks: Vec<Task>,
    pub handlers: Vec<Handler>,
    /// What it may change beyond dnsfix's own set (`allow:`).
    pub allow: Allow,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Batch {
    Count(u32),
    Percent(u32),
}

impl Batch {
    /// Hosts per batch out of `total`, at least 1.
    pub fn size(self, total: usize) -> usize {
        match self {
            Batch::Count(n) => (n as usize).max(1),
            Batch::Percent(p) => (total * p as usize / 100).max(1),
        }
    }

    pub fn parse(text: &str) -> Option<Batch> {
        let text = text.trim();
        if let Some(p) = text.strip_suffix('%') {
            let p: u32 = p.trim().parse().ok()?;
            return (1..=100).contains(&p).then_some(Batch::Percent(p));
        }
        let n: u32 = text.parse().ok()?;
        (n > 0).then_some(Batch::Count(n))
    }
}

impl std::fmt::Display for Batch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Batch::Count(n) => write!(f, "{n}"),
            Batch::Percent(p) => write!(f, "{p}%"),
        }
    }
}

/// Every playbook that runs, in order, with the template environment.
#[derive(Debug)]
pub struct Playbooks {
    pub playbooks: Vec<Playbook>,
    pub env: Environment<'static>,
}

/// A minijinja environment configured the way playbooks and templates are written: strict
/// about undefined values (a typo is an error, not an empty string), whitespace-friendly
/// blocks, and a kept final newline (config files end with one).
pub fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    let syntax = SyntaxConfig::builder()
        .keep_trailing_newline(true)
        .trim_blocks(true)
        .lstrip_blocks(true)
        .build();
    if let Ok(syntax) = syntax {
        env.set_syntax(syntax);
    }
    env.add_filter("bool", ansible_bool);
    env
}

/// Ansible's `bool` filter: inventory booleans arrive as YAML booleans, numbers or strings
/// (`dnsfix_strip_search_domains=false` in an INI inventory is the string "false", which
/// Jinja alone finds true). `yes/no`, `true/false`, `on/off`, `y/n`, `1/0` in any case;
/// anything else is false, as in Ansible.
fn ansible_bool(value: minijinja::Value) -> bool {
    if let Some(b) = value.as_str() {
        return matches!(
            b.trim().to_ascii_lowercase().as_str(),
            "yes" | "true" | "on" | "y" | "t" | "1"
        );
    }
    if value.kind() == minijinja::value::ValueKind::Bool {
        return value.is_true();
    }
    if let Ok(n) = i64::try_from(value.clone()) {
        return n == 1;
    }
    false
}

impl Playbooks {
    /// The shipped playbooks and templates, overlaid with those in `dir`: a file there with
    /// the name of a shipped one replaces it, other `*.yml`/`*.yaml` files are added (all
    /// run in file-name order), and `dir/templates/*.j2` likewise replace or add templates.
    pub fn load(dir: Option<&Path>) -> Result<Playbooks, PlaybookError> {
        let mut files: BTreeMap<String, (String, String)> = BUILTIN_PLAYBOOKS
            .iter()
            .map(|(name, text)| {
                (
                    name.to_string(),
                    (format!("builtin:playbooks/{name}"), text.to_string()),
                )
            })
            .collect();
        let mut templates: BTreeMap<String, (String, String)> = BUILTIN_TEMPLATES
            .iter()
            .map(|(name, text)| {
                (
                    name.to_string(),
                    (format!("builtin:templates/{name}"), text.to_string()),
                )
            })
            .collect();
        if let Some(dir) = dir {
            for (name, path) in list(dir, &["yml", "yaml"])? {
                let text = read(&path)?;
                files.insert(name, (path.display().to_string(), text));
            }
            let template_dir = dir.join("templates");
            if template_dir.is_dir() {
                for (name, path) in list(&template_dir, &["j2"])? {
                    let text = read(&path)?;
                    templates.insert(name, (path.display().to_string(), text));
                }
            }
        }

        let mut env = environment();
        for (name, (source, text)) in &templates {
            env.add_template_owned(name.clone(), text.clone())
                .map_err(|e| invalid(source, e.line().unwrap_or(1), template_error(&e)))?;
        }
        let mut playbooks = Vec::new();
        for (source, text) in files.values() {
            let playbook = parse(source, text, &env)?;
            if let Some(other) = playbooks
                .iter()
                .find(|p: &&Playbook| p.name == playbook.name)
            {
                return Err(invalid(
                    source,
                    1,
                    format!(
                        "playbook name `{}` is also used by {}",
                        playbook.name, other.source
                    ),
                ));
            }
            playbooks.push(playbook);
        }
        Ok(Playbooks { playbooks, env })
    }

    pub fn get(&self, name: &str) -> Option<&Playbook> {
        self.playbooks.iter().find(|p| p.name == name)
    }

    /// The paths the tasks name literally (template `dest`, yaml_set/env_flag `path`,
    /// sysctl and modprobe `file`, sysctl `name` as its /proc/sys file): the gather reads
    /// them, so a site playbook can write outside the directories it always reads.
    pub fn paths_to_gather(&self) -> Vec<String> {
        let mut paths = std::collections::BTreeSet::new();
        for task in self.playbooks.iter().flat_map(|p| &p.tasks) {
            paths.extend(task.action.literal_paths());
            if let Action::Sysctl(args) = &task.action
                && let Some(name) = args.name.literal_str()
            {
                let key = crate::facts::sysctl::normalize_key(&name);
                paths.insert(crate::facts::raw::sysctl_path(&key));
            }
        }
        paths
            .into_iter()
            .filter(|p| crate::facts::raw::safe_path(p))
            .collect()
    }

    /// The playbook that fixes finding `id`, if any.
    pub fn fixing(&self, id: &str) -> Option<&Playbook> {
        self.playbooks
            .iter()
            .find(|p| p.fixes.iter().any(|f| f == id))
    }
}

fn list(dir: &Path, extensions: &[&str]) -> Result<Vec<(String, PathBuf)>, PlaybookError> {
    let entries = std::fs::read_dir(dir).map_err(|source| PlaybookError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| PlaybookError::Read {
            path: dir.to_path_buf(),
            source,
        })?;
        let path = entry.path();
        let wanted = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| extensions.contains(&e));
        if wanted
            && path.is_file()
            && let Some(name) = path.file_name().and_then(|n| n.to_str())
        {
            found.push((name.to_string(), path.clone()));
        }
    }
    found.sort();
    Ok(found)
}

fn read(path: &Path) -> Result<String, PlaybookError> {
    std::fs::read_to_string(path).map_err(|source| PlaybookError::Read {
        path: path.to_path_buf(),
        source,
    })
}

fn template_error(error: &minijinja::Error) -> String {
    match error.detail() {
        Some(detail) => format!("{}: {detail}", error.kind()),
        None => error.to_string(),
    }
}

/// The 1-based line of the first occurrence of `needle` at or after line `from`, or `from`.
fn line_of(text: &str, needle: &str, from: usize) -> usize {
    let needle = needle.lines().next().unwrap_or(needle).trim();
    if needle.is_empty() {
        return from.max(1);
    }
    text.lines()
        .enumerate()
        .skip(from.saturating_sub(1))
        .find(|(_, line)| line.contains(needle))
        .map_or(from.max(1), |(index, _)| index + 1)
}

/// Parses and checks one playbook file.
pub fn parse(
    source: &str,
    text: &str,
    env: &Environment<'static>,
) -> Result<Playbook, PlaybookError> {
    let file: PlaybookFile = serde_norway::from_str(text).map_err(|e| {
        let line = e.location().map_or(1, |l| l.line());
        invalid(source, line, format!("not a valid playbook: {e}"))
    })?;
    let check = Checker { source, text, env };
    if file.name.trim().is_empty() {
        return Err(invalid(
            source,
            line_of(text, "name:", 1),
            "`name` is empty",
        ));
    }
    for id in &file.fixes {
        if crate::diagnose::catalog::rule(id).is_none() {
            return Err(invalid(
                source,
                line_of(text, id, 1),
                format!("`fixes` names {id}, which is not a finding id (see `dnsfix explain`)"),
            ));
        }
    }
    let when = match &file.when {
        Some(expr) => Some(check.expression(expr, 1, "when")?),
        None => None,
    };
    let mut vars = Vec::new();
    for (key, value) in &file.vars {
        let Some(key) = key.as_str() else {
            return Err(invalid(
                source,
                line_of(text, "vars:", 1),
                "a var name is not a string",
            ));
        };
        let line = line_of(text, &format!("{key}:"), line_of(text, "vars:", 1));
        vars.push((key.to_string(), check.value(value, line, key)?));
    }
    let serial = match &file.serial {
        None => Batch::Count(1),
        Some(Serial::Count(n)) if *n > 0 => Batch::Count(*n),
        Some(Serial::Text(text_value)) if Batch::parse(text_value).is_some() => {
            Batch::parse(text_value).unwrap_or(Batch::Count(1))
        }
        Some(other) => {
            return Err(invalid(
                source,
                line_of(text, "serial:", 1),
                format!(
                    "`serial` must be a positive number or a percentage like \"20%\", not {other:?}"
                ),
            ));
        }
    };

    let mut handlers = Vec::new();
    let handlers_at = line_of(text, "handlers:", 1);
    for handler in &file.handlers {
        handlers.push(check.handler(handler, handlers_at)?);
    }
    let mut tasks = Vec::new();
    let mut at = line_of(text, "tasks:", 1);
    for task in &file.tasks {
        let compiled = check.task(task, at)?;
        at = compiled.line + 1;
        for name in &compiled.notify {
            if !handlers.iter().any(|h: &Handler| &h.name == name) {
                return Err(invalid(
                    source,
                    line_of(text, name, compiled.line),
                    format!(
                        "task `{}` notifies `{name}`, but no handler has that name",
                        compiled.name
                    ),
                ));
            }
        }
        tasks.push(compiled);
    }
    if tasks.is_empty() {
        return Err(invalid(
            source,
            line_of(text, "tasks:", 1),
            "a playbook needs at least one task",
        ));
    }
    Ok(Playbook {
        name: file.name,
        description: file.description.trim().to_string(),
        source: source.to_string(),
        sha256: crate::util::sha256_hex(text.as_bytes()),
        fixes: file.fixes,
        hosts: file.hosts,
        when,
        vars,
        serial,
        tasks,
        handlers,
        allow: file.allow,
    })
}

struct Checker<'a> {
    source: &'a str,
    text: &'a str,
    env: &'a Environment<'static>,
}

impl Checker<'_> {
    fn expression(&self, expr: &str, from: usize, what: &str) -> Result<String, PlaybookError> {
        let line = line_of(self.text, expr, from);
        self.env.compile_expression(expr).map_err(|e| {
            let mut message = format!("{what}: {}", template_error(&e));
            if expr.trim_start().starts_with("{{") {
                message.push_str(" (`when` and `loop` are bare expressions: drop the {{ }})");
            }
            invalid(self.source, line, message)
        })?;
        Ok(expr.to_string())
    }

    fn value(
        &self,
        value: &serde_norway::Value,
        line: usize,
        what: &str,
    ) -> Result<Value, PlaybookError> {
        if let serde_norway::Value::String(s) = value {
            let trimmed = s.trim();
            if let Some(inner) = trimmed
                .strip_prefix("{{")
                .and_then(|rest| rest.strip_suffix("}}"))
                .filter(|inner| !inner.contains("{{") && !inner.contains("}}"))
            {
                let line = line_of(self.text, trimmed, line);
                return Ok(Value::Expression(self.expression(
                    inner.trim(),
                    line,
                    what,
                )?));
            }
            if s.contains("{{") || s.contains("{%") {
                let line = line_of(self.text, s, line);
                self.env.template_from_str(s).map_err(|e| {
                    invalid(self.source, line, format!("{what}: {}", template_error(&e)))
                })?;
                return Ok(Value::Template(s.clone()));
            }
        }
        let json = serde_json::to_value(value)
            .map_err(|e| invalid(self.source, line, format!("{what}: {e}")))?;
        Ok(Value::Literal(json))
    }

    fn args(
        &self,
        module: Module,
        args: &BTreeMap<String, serde_norway::Value>,
        line: usize,
        owner: &str,
    ) -> Result<BTreeMap<String, Value>, PlaybookError> {
        let (required, optional) = module.arguments();
        for key in args.keys() {
            if !required.contains(&key.as_str()) && !optional.contains(&key.as_str()) {
                let mut known: Vec<&str> = required.iter().chain(optional).copied().collect();
                known.sort();
                return Err(invalid(
                    self.source,
                    line_of(self.text, &format!("{key}:"), line),
                    format!(
                        "{owner}: {} has no argument `{key}` (it takes: {})",
                        module.name(),
                        known.join(", ")
                    ),
                ));
            }
        }
        for key in required {
            if !args.contains_key(*key) {
                return Err(invalid(
                    self.source,
                    line,
                    format!("{owner}: {} needs the argument `{key}`", module.name()),
                ));
            }
        }
        let mut compiled = BTreeMap::new();
        for (key, value) in args {
            let at = line_of(self.text, &format!("{key}:"), line);
            compiled.insert(
                key.clone(),
                self.value(value, at, &format!("{owner}: {key}"))?,
            );
        }
        if module == Module::Template
            && let Some(Value::Literal(serde_json::Value::String(src))) = compiled.get("src")
            && self.env.get_template(src).is_err()
        {
            return Err(invalid(
                self.source,
                line_of(self.text, src, line),
                format!("{owner}: template `{src}` does not exist (shipped or in <dir>/templates)"),
            ));
        }
        Ok(compiled)
    }

    fn task(&self, task: &TaskFile, from: usize) -> Result<Task, PlaybookError> {
        let line = line_of(self.text, &task.name, from);
        let owner = format!("task `{}`", task.name);
        let candidates = [
            (Module::Template, &task.template),
            (Module::YamlSet, &task.yaml_set),
            (Module::EnvFlag, &task.env_flag),
            (Module::ArgsFlag, &task.args_flag),
            (Module::Sysctl, &task.sysctl),
            (Module::Modprobe, &task.modprobe),
            (Module::Service, &task.service),
            (Module::InventorySet, &task.inventory_set),
            (Module::Note, &task.note),
            (Module::Fail, &task.fail),
            (Module::DnsPods, &task.dns_pods),
            (Module::CorefileForward, &task.corefile_forward),
            (Module::RestartDue, &task.restart_due),
        ];
        let used: Vec<_> = candidates
            .iter()
            .filter_map(|(module, args)| args.as_ref().map(|a| (*module, a)))
            .collect();
        let (module, args) = match used.as_slice() {
            [one] => *one,
            [] => {
                return Err(invalid(
                    self.source,
                    line,
                    format!(
                        "{owner} uses no module (one of template, yaml_set, env_flag, args_flag, sysctl, \
                         modprobe, service, inventory_set, note, fail, dns_pods, corefile_forward, \
                         restart_due)"
                    ),
                ));
            }
            _ => {
                return Err(invalid(
                    self.source,
                    line,
                    format!("{owner} uses more than one module"),
                ));
            }
        };
        if module == Module::Service {
            return Err(invalid(
                self.source,
                line,
                format!(
                    "{owner}: service runs only as a handler, so that a unit restarts only when \
                     something it reads changed (use `notify`)"
                ),
            ));
        }
        let when = match &task.when {
            Some(expr) => Some(self.expression(expr, line, &format!("{owner}: when"))?),
            None => None,
        };
        let loop_over = match &task.loop_over {
            Some(expr) => {
                let inner = expr.trim();
                let inner = inner
                    .strip_prefix("{{")
                    .and_then(|r| r.strip_suffix("}}"))
                    .unwrap_or(inner)
                    .trim();
                Some(self.expression(inner, line, &format!("{owner}: loop"))?)
            }
            None => None,
        };
        let args = self.args(module, args, line, &owner)?;
        let action =
            Action::new(module, args).map_err(|e| self.args_error(e, module, line, &owner))?;
        Ok(Task {
            name: task.name.clone(),
            line,
            when,
            loop_over,
            notify: task.notify.names(),
            action,
        })
    }

    fn handler(&self, handler: &HandlerFile, from: usize) -> Result<Handler, PlaybookError> {
        let line = line_of(self.text, &handler.name, from);
        let owner = format!("handler `{}`", handler.name);
        let args = self.args(Module::Service, &handler.service, line, &owner)?;
        if let Some(Value::Literal(state)) = args.get("state")
            && !matches!(state.as_str(), Some("restarted" | "reloaded"))
        {
            return Err(invalid(
                self.source,
                line_of(self.text, "state:", line),
                format!("{owner}: state must be restarted or reloaded, not {state}"),
            ));
        }
        let service =
            Service::new(args).map_err(|e| self.args_error(e, Module::Service, line, &owner))?;
        Ok(Handler {
            name: handler.name.clone(),
            line,
            service,
        })
    }

    /// What [`Checker::args`] and the `service` check have already reported, should
    /// building the typed action still find it.
    fn args_error(
        &self,
        error: action::ArgsError,
        module: Module,
        line: usize,
        owner: &str,
    ) -> PlaybookError {
        let message = match error {
            action::ArgsError::Missing(key) => {
                format!("{owner}: {} needs the argument `{key}`", module.name())
            }
            action::ArgsError::HandlerOnly => format!("{owner}: service runs only as a handler"),
        };
        invalid(self.source, line, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_one(text: &str) -> Result<Playbook, String> {
        let env = Playbooks::load(None).map_err(|e| e.to_string())?.env;
        parse("site.yml", text, &env).map_err(|e| e.to_string())
    }

    const MINIMAL: &str = "\
name: site
description: a site playbook
fixes: [DNS-BRIDGE-NF-OFF]
tasks:
  - name: forward
    sysctl:
      name: net.ipv4.ip_forward
      value: \"1\"
";

    #[test]
    fn shipped_playbooks_and_templates_load() {
        let playbooks = Playbooks::load(None).expect("shipped playbooks load");
        assert_eq!(playbooks.playbooks.len(), BUILTIN_PLAYBOOKS.len());
        for (name, _) in BUILTIN_TEMPLATES {
            let used = BUILTIN_PLAYBOOKS
                .iter()
                .any(|(_, text)| text.contains(name));
            assert!(used, "template {name} is shipped but no playbook uses it");
            assert!(playbooks.env.get_template(name).is_ok(), "{name}");
        }
        for playbook in &playbooks.playbooks {
            assert!(!playbook.description.is_empty(), "{}", playbook.name);
            assert!(
                !playbook.fixes.is_empty(),
                "{} fixes nothing",
                playbook.name
            );
        }
    }

    #[test]
    fn catalog_names_the_playbook_that_fixes_each_finding() {
        let playbooks = Playbooks::load(None).expect("shipped playbooks load");
        for rule in crate::diagnose::catalog::RULES {
            assert_eq!(
                rule.playbook,
                playbooks.fixing(rule.id).map(|p| p.name.as_str()),
                "catalog entry {} and the shipped playbooks disagree",
                rule.id
            );
        }
    }

    #[test]
    fn a_minimal_playbook_loads() {
        let playbook = load_one(MINIMAL).expect("loads");
        assert_eq!(playbook.hosts, "all");
        assert_eq!(playbook.serial, Batch::Count(1));
        assert_eq!(playbook.tasks[0].action.module(), Module::Sysctl);
        assert_eq!(playbook.tasks[0].line, 5);
    }

    #[track_caller]
    fn assert_error(text: &str, want: &str) {
        match load_one(text) {
            Ok(_) => panic!("expected an error containing {want:?}"),
            Err(message) => assert!(
                message.contains(want),
                "{message:?} does not contain {want:?}"
            ),
        }
    }

    #[test]
    fn mistakes_name_the_file_and_line() {
        assert_error(&MINIMAL.replace("fixes:", "fixs:"), "site.yml:3");
        assert_error(
            &MINIMAL.replace("    sysctl:", "    notfy: x\n    sysctl:"),
            "site.yml:",
        );
        assert_error(
            &MINIMAL.replace("tasks:", "when: \"failing ==\"\ntasks:"),
            "site.yml:4: when",
        );
        assert_error(
            &MINIMAL.replace("      value: \"1\"", "      value: \"1\"\n      vlaue: 2"),
            "site.yml:9: task `forward`: sysctl has no argument `vlaue`",
        );
        assert_error(
            &MINIMAL.replace("      value: \"1\"\n", ""),
            "needs the argument `value`",
        );
        assert_error(&MINIMAL.replace("\"1\"", "\"{{ 1 + }}\""), "site.yml:8");
        assert_error(
            &MINIMAL.replace("DNS-BRIDGE-NF-OFF", "DNS-NOPE"),
            "site.yml:3: `fixes` names DNS-NOPE",
        );
        assert_error(
            &MINIMAL.replace("    sysctl:", "    notify: restart\n    sysctl:"),
            "no handler has that name",
        );
        assert_error(
            &MINIMAL.replace(
                "    sysctl:\n      name: net.ipv4.ip_forward\n      value: \"1\"",
                "    template:\n      src: nope.j2\n      dest: /etc/x",
            ),
            "template `nope.j2` does not exist",
        );
        assert_error(
            &MINIMAL.replace(
                "    sysctl:\n      name: net.ipv4.ip_forward\n      value: \"1\"",
                "    service:\n      name: kubelet",
            ),
            "service runs only as a handler",
        );
        assert_error(
            &MINIMAL.replace("tasks:", "serial: 0%\ntasks:"),
            "`serial` must be",
        );
        assert_error(
            &MINIMAL.replace("    sysctl:", "    note: {msg: x}\n    sysctl:"),
            "uses more than one module",
        );
    }

    #[test]
    fn a_directory_replaces_and_adds_playbooks_and_templates() {
        let dir = std::env::temp_dir().join(format!("dnsfix-playbooks-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("templates")).expect("mkdir");
        std::fs::write(
            dir.join("40-bridge-netfilter.yml"),
            MINIMAL.replace("site", "mine"),
        )
        .expect("write");
        std::fs::write(
            dir.join("90-extra.yml"),
            MINIMAL.replace("name: site", "name: extra"),
        )
        .expect("write");
        std::fs::write(dir.join("templates/upstream-resolv.conf.j2"), "# ours\n").expect("write");
        let playbooks = Playbooks::load(Some(&dir)).expect("loads");
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            playbooks.get("bridge-netfilter").is_none(),
            "replaced by the site file"
        );
        assert!(playbooks.get("mine").is_some());
        assert_eq!(
            playbooks.playbooks.last().map(|p| p.name.as_str()),
            Some("extra")
        );
        let rendered = playbooks
            .env
            .get_template("upstream-resolv.conf.j2")
            .and_then(|t| t.render(()))
            .expect("renders");
        assert_eq!(rendered, "# ours\n");
    }

    #[test]
    fn batches() {
        assert_eq!(Batch::parse("20%"), Some(Batch::Percent(20)));
        assert_eq!(Batch::parse("3"), Some(Batch::Count(3)));
        assert_eq!(Batch::parse("0"), None);
        assert_eq!(Batch::parse("101%"), None);
        assert_eq!(Batch::Percent(20).size(12), 2);
        assert_eq!(Batch::Percent(1).size(12), 1);
        assert_eq!(Batch::Count(5).size(2), 5);
    }
}
