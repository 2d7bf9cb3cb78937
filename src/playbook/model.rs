//! The playbook file format (docs/playbooks.md): what a playbook says, checked strictly.
//! Unknown keys are errors, so a typo (`notfy:`) never silently drops a handler.

use std::collections::BTreeMap;

use serde::Deserialize;

/// One playbook file as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlaybookFile {
    pub name: String,
    pub description: String,
    /// The finding ids this playbook fixes. When not empty, the playbook runs on a host only
    /// if one of them failed there.
    #[serde(default)]
    pub fixes: Vec<String>,
    /// An inventory host pattern (as for `--limit`); default `all`.
    #[serde(default = "all_hosts")]
    pub hosts: String,
    /// A minijinja expression; the playbook runs only where it is true.
    pub when: Option<String>,
    /// Values computed per host, in order; later ones and the tasks can use earlier ones.
    #[serde(default)]
    pub vars: serde_norway::Mapping,
    /// How many hosts restart at once: a number or a percentage (`"20%"`). Default 1.
    pub serial: Option<Serial>,
    pub tasks: Vec<TaskFile>,
    #[serde(default)]
    pub handlers: Vec<HandlerFile>,
    /// What this playbook may change beyond what dnsfix changes anyway (see
    /// `plan::policy`): extra paths (a trailing `/` allows a directory), sysctls (a
    /// trailing `.` allows a prefix), kernel modules and units to restart.
    #[serde(default)]
    pub allow: Allow,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allow {
    #[serde(default)]
    pub paths: Vec<String>,
    #[serde(default)]
    pub sysctls: Vec<String>,
    #[serde(default)]
    pub modules: Vec<String>,
    #[serde(default)]
    pub units: Vec<String>,
}

fn all_hosts() -> String {
    "all".to_string()
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Serial {
    Count(u32),
    Text(String),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskFile {
    pub name: String,
    pub when: Option<String>,
    /// An expression giving a list: the task runs once per item, as `item`.
    #[serde(rename = "loop")]
    pub loop_over: Option<String>,
    #[serde(default)]
    pub notify: Notify,
    pub template: Option<BTreeMap<String, serde_norway::Value>>,
    pub yaml_set: Option<BTreeMap<String, serde_norway::Value>>,
    pub env_flag: Option<BTreeMap<String, serde_norway::Value>>,
    pub args_flag: Option<BTreeMap<String, serde_norway::Value>>,
    pub sysctl: Option<BTreeMap<String, serde_norway::Value>>,
    pub modprobe: Option<BTreeMap<String, serde_norway::Value>>,
    pub service: Option<BTreeMap<String, serde_norway::Value>>,
    pub inventory_set: Option<BTreeMap<String, serde_norway::Value>>,
    pub note: Option<BTreeMap<String, serde_norway::Value>>,
    pub fail: Option<BTreeMap<String, serde_norway::Value>>,
    pub dns_pods: Option<BTreeMap<String, serde_norway::Value>>,
    pub corefile_forward: Option<BTreeMap<String, serde_norway::Value>>,
    pub restart_due: Option<BTreeMap<String, serde_norway::Value>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(untagged)]
pub enum Notify {
    #[default]
    None,
    One(String),
    Many(Vec<String>),
}

impl Notify {
    pub fn names(&self) -> Vec<String> {
        match self {
            Notify::None => Vec::new(),
            Notify::One(name) => vec![name.clone()],
            Notify::Many(names) => names.clone(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandlerFile {
    pub name: String,
    pub service: BTreeMap<String, serde_norway::Value>,
}
