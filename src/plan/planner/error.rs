//! Why a host could not be planned: [`PlanError`] says where (the playbook and its file,
//! the task or handler and the task's line) and [`PlanErrorKind`] what went wrong. The
//! text is what `could not plan: playbook: ...` has always shown.

use serde_json::Value as Json;

use crate::edit::args_flag::ArgsEditError;
use crate::edit::env_flag::EnvEditError;
use crate::edit::yaml_set::YamlEditError;
use crate::playbook::Playbook;

/// A playbook that could not be planned on a host.
#[derive(Debug)]
pub struct PlanError {
    pub playbook: String,
    /// The playbook's file: `builtin:playbooks/NAME` or a path.
    pub file: String,
    pub site: Site,
    /// Boxed: a `Result` carrying the error stays small.
    pub kind: Box<PlanErrorKind>,
}

/// Where in the playbook planning failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Site {
    /// Computing the var `name`.
    Var(String),
    /// The playbook's `when`.
    When,
    /// A task's `loop`.
    Loop { task: String },
    /// A task's `when`.
    TaskWhen { task: String },
    /// Running a task, at its line.
    Task { task: String, line: usize },
    /// A handler's `name` or `state`.
    Handler { handler: String },
    /// Rendering a handler's templated `state`. Its message has never named the place,
    /// and output stays as it was.
    HandlerState { handler: String },
}

impl PlanError {
    pub fn new(playbook: &Playbook, site: Site, kind: PlanErrorKind) -> PlanError {
        PlanError {
            playbook: playbook.name.clone(),
            file: playbook.source.clone(),
            site,
            kind: Box::new(kind),
        }
    }

    /// The task planning failed in, if it was a task.
    pub fn task(&self) -> Option<&str> {
        match &self.site {
            Site::Loop { task } | Site::TaskWhen { task } | Site::Task { task, .. } => Some(task),
            _ => None,
        }
    }

    /// The line of that task in the playbook's file, when planning failed running it.
    pub fn line(&self) -> Option<usize> {
        match &self.site {
            Site::Task { line, .. } => Some(*line),
            _ => None,
        }
    }
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (playbook, file, kind) = (&self.playbook, &self.file, &self.kind);
        match &self.site {
            Site::Var(name) => write!(f, "playbook {playbook} ({file}): vars.{name}: {kind}"),
            Site::When => write!(f, "playbook {playbook} ({file}): when: {kind}"),
            Site::Loop { task } => write!(
                f,
                "playbook {playbook} ({file}): task `{task}` loop: {kind}"
            ),
            Site::TaskWhen { task } => {
                write!(
                    f,
                    "playbook {playbook} ({file}): task `{task}` when: {kind}"
                )
            }
            Site::Task { task, line } => write!(
                f,
                "playbook {playbook} ({file}): task `{task}` (line {line}): {kind}"
            ),
            Site::Handler { handler } => {
                write!(f, "playbook {playbook} handler `{handler}`: {kind}")
            }
            Site::HandlerState { .. } => write!(f, "{kind}"),
        }
    }
}

impl std::error::Error for PlanError {}

/// What went wrong rendering an argument, reading a file or editing it.
#[derive(Debug, thiserror::Error)]
pub enum PlanErrorKind {
    #[error("{}", describe(.0))]
    Render(minijinja::Error),
    #[error("`{expr}` is undefined")]
    Undefined { expr: String },
    #[error("{0}")]
    Json(serde_json::Error),
    #[error("expected a list, got {got}")]
    NotAList { got: Json },
    #[error("`{key}` is missing")]
    ArgMissing { key: &'static str },
    #[error("`{key}` is empty")]
    ArgEmpty { key: &'static str },
    #[error("`{key}` must be a string, got {got}")]
    ArgNotString { key: &'static str, got: Json },
    #[error("`{path}` must be an absolute path without `..`")]
    NotAbsolute { path: String },
    #[error("mode must be an octal string like \"0644\", not {got}")]
    ModeNotText { got: Json },
    #[error("mode must be an octal string like \"0644\", not {text:?}")]
    ModeNotOctal { text: String },
    #[error("state must be present or absent, not {got}")]
    EditState { got: Json },
    #[error("state must be recreated, not {got:?}")]
    PodState { got: String },
    #[error("configmap must be coredns or nodelocaldns, not {got:?}")]
    ConfigMapName { got: String },
    #[error("state must be restarted or reloaded, not {got:?}")]
    HandlerState { got: String },
    #[error("list items must be strings, not {got}")]
    ListItem { got: Json },
    #[error("value must be a string or a list of strings, not {got}")]
    YamlValue { got: Json },
    #[error("{path} does not exist on the node")]
    NoSuchFile { path: String },
    #[error(
        "{path} is a symlink to {target}; dnsfix writes only regular files (edit the target, \
         or replace the link by hand)"
    )]
    Symlink { path: String, target: String },
    #[error("{path} is larger than the gather reads")]
    TooLarge { path: String },
    #[error("{path} is not UTF-8 text")]
    NotUtf8 { path: String },
    #[error("{path} is a directory")]
    Directory { path: String },
    #[error("{path} could not be read")]
    Unreadable { path: String },
    #[error(
        "{path} was not gathered, so its current content is unknown (gather reads the files \
         dnsfix may write; use a path under one of those directories)"
    )]
    FileNotGathered { path: String },
    #[error("{path} was not gathered, so its value is unknown")]
    ValueNotGathered { path: String },
    #[error("{path}: {error}")]
    YamlEdit { path: String, error: YamlEditError },
    #[error("{path}: {error}")]
    EnvEdit { path: String, error: EnvEditError },
    #[error("{path}: {error}")]
    ArgsEdit { path: String, error: ArgsEditError },
    #[error("{file} is not read at boot: use a file in {} or {legacy}", .dirs.join(", "))]
    NotBootFile {
        file: String,
        dirs: &'static [&'static str],
        legacy: &'static str,
    },
    /// Whether a module is loaded is unknown; the gather says why.
    #[error("{0}")]
    ModuleState(String),
    #[error(
        "key {key:?} is not one inventory_set sets: an Ansible variable name (letters, digits \
         and `_`, not starting with a digit), and no connection variable (`ansible_*`)"
    )]
    InventoryKey { key: String },
}

impl From<minijinja::Error> for PlanErrorKind {
    fn from(error: minijinja::Error) -> PlanErrorKind {
        PlanErrorKind::Render(error)
    }
}

/// A minijinja error as plans show it: kind and detail, and where in a template.
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
