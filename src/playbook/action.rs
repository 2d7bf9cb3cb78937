//! What a task does: one module of the closed set, with its arguments. Which arguments a
//! module takes and which it needs is checked when the playbook loads; the values stay
//! [`Value`]s (literals or templates) that the planner renders per host.

use std::collections::BTreeMap;

use super::Value;

/// The closed set of modules: the twelve a task can use, and `service`, which only a
/// handler can.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Module {
    Template,
    YamlSet,
    EnvFlag,
    ArgsFlag,
    Sysctl,
    Modprobe,
    Service,
    InventorySet,
    Note,
    Fail,
    DnsPods,
    CorefileForward,
    RestartDue,
}

impl Module {
    pub fn name(self) -> &'static str {
        match self {
            Module::Template => "template",
            Module::YamlSet => "yaml_set",
            Module::EnvFlag => "env_flag",
            Module::ArgsFlag => "args_flag",
            Module::Sysctl => "sysctl",
            Module::Modprobe => "modprobe",
            Module::Service => "service",
            Module::InventorySet => "inventory_set",
            Module::Note => "note",
            Module::Fail => "fail",
            Module::DnsPods => "dns_pods",
            Module::CorefileForward => "corefile_forward",
            Module::RestartDue => "restart_due",
        }
    }

    /// (required arguments, optional arguments).
    pub fn arguments(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            Module::Template => (&["src", "dest"], &["mode"]),
            Module::YamlSet => (&["path", "key"], &["value", "state", "create", "mode"]),
            Module::EnvFlag => (&["path", "var", "flag"], &["value", "state"]),
            Module::ArgsFlag => (&["path", "flag"], &["value", "state"]),
            Module::Sysctl => (&["name", "value"], &["file"]),
            Module::Modprobe => (&["name"], &["file"]),
            Module::Service => (&["name"], &["state"]),
            Module::InventorySet => (&["key", "value"], &[]),
            Module::Note | Module::Fail => (&["msg"], &[]),
            Module::DnsPods => (&["state"], &[]),
            Module::CorefileForward => (&["configmap", "servers"], &[]),
            Module::RestartDue => (&["unit"], &[]),
        }
    }
}

/// A task's module with its arguments, as written (rendered per host by the planner).
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Template(TemplateArgs),
    YamlSet(YamlSetArgs),
    EnvFlag(EnvFlagArgs),
    ArgsFlag(ArgsFlagArgs),
    Sysctl(SysctlArgs),
    Modprobe(ModprobeArgs),
    InventorySet(InventorySetArgs),
    /// Tell the reviewer something.
    Note(MessageArgs),
    /// Block the playbook on this host, saying why.
    Fail(MessageArgs),
    /// Recreate the node's CoreDNS and nodelocaldns pods through the cluster's API.
    DnsPods(DnsPodsArgs),
    /// Send a cluster Corefile's root `forward .` to these servers (a cluster change).
    CorefileForward(CorefileForwardArgs),
    /// Changed where a run left `unit` due its restart (so the task's `notify` fires).
    RestartDue(RestartDueArgs),
}

/// `restart_due`: changed where an apply or rollback changed the files of the kubelet unit
/// `unit` and was cut off before restarting it, and the unit has not started since (the
/// marks DNS-KUBELET-RESTART-DUE reads). Writes nothing: its `notify` restarts the unit.
/// A restart that needs no file change is thus one a node's own state asks for, never a
/// playbook's say-so.
#[derive(Debug, Clone, PartialEq)]
pub struct RestartDueArgs {
    pub unit: Value,
}

/// `corefile_forward`: the `forward .` of the root block (`.:53`) of kube-system's
/// `configmap` (coredns or nodelocaldns) goes to `servers`, in every Corefile key of it,
/// as Kubespray renders `upstream_dns_servers`. One change for the cluster, made through
/// kubectl before any host; without cluster access the plan names the step instead.
#[derive(Debug, Clone, PartialEq)]
pub struct CorefileForwardArgs {
    pub configmap: Value,
    pub servers: Value,
}

/// `dns_pods`: `state: recreated` deletes the node's CoreDNS and nodelocaldns pods after
/// its handlers ran and waits for Ready replacements (a cluster action); without cluster
/// access the plan names the step to do by hand instead.
#[derive(Debug, Clone, PartialEq)]
pub struct DnsPodsArgs {
    pub state: Value,
}

/// `template`: render the template `src` whole into `dest` (a new file gets `mode`,
/// default 0644).
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateArgs {
    pub src: Value,
    pub dest: Value,
    pub mode: Option<Value>,
}

/// `yaml_set`: set (or with `state: absent` remove) the dotted `key` of the YAML file
/// `path`; `create: true` starts from an empty file when there is none.
#[derive(Debug, Clone, PartialEq)]
pub struct YamlSetArgs {
    pub path: Value,
    pub key: Value,
    pub value: Option<Value>,
    pub state: Option<Value>,
    pub create: Option<Value>,
    pub mode: Option<Value>,
}

/// `env_flag`: set (or remove) the kubelet flag `flag` in variable `var` of the
/// environment file `path`.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvFlagArgs {
    pub path: Value,
    pub var: Value,
    pub flag: Value,
    pub value: Option<Value>,
    pub state: Option<Value>,
}

/// `args_flag`: set (or remove) the kubelet flag `flag` in the MicroK8s arguments file
/// `path` (one flag per line).
#[derive(Debug, Clone, PartialEq)]
pub struct ArgsFlagArgs {
    pub path: Value,
    pub flag: Value,
    pub value: Option<Value>,
    pub state: Option<Value>,
}

/// `sysctl`: set a sysctl now and in `file` (default /etc/sysctl.d/99-dnsfix.conf).
#[derive(Debug, Clone, PartialEq)]
pub struct SysctlArgs {
    pub name: Value,
    pub value: Value,
    pub file: Option<Value>,
}

/// `modprobe`: load a kernel module now and list it in `file` (default
/// /etc/modules-load.d/dnsfix.conf).
#[derive(Debug, Clone, PartialEq)]
pub struct ModprobeArgs {
    pub name: Value,
    pub file: Option<Value>,
}

/// `inventory_set`: ask for `key: value` in the local inventory.
#[derive(Debug, Clone, PartialEq)]
pub struct InventorySetArgs {
    pub key: Value,
    pub value: Value,
}

/// `note` and `fail`: a message.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageArgs {
    pub msg: Value,
}

/// A handler's `service`: the unit and what to do to it (`restarted` unless `state` says
/// `reloaded`).
#[derive(Debug, Clone, PartialEq)]
pub struct Service {
    pub name: Value,
    pub state: Option<Value>,
}

/// Why checked arguments do not make an action: the loader has said so already, with the
/// file and line, so these only keep construction total.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgsError {
    Missing(&'static str),
    HandlerOnly,
}

/// Arguments being moved into an action.
struct Args(BTreeMap<String, Value>);

impl Args {
    fn take(&mut self, key: &str) -> Option<Value> {
        self.0.remove(key)
    }

    fn need(&mut self, key: &'static str) -> Result<Value, ArgsError> {
        self.take(key).ok_or(ArgsError::Missing(key))
    }
}

impl Action {
    /// The action of `module` with `args` (whose names the loader has checked against
    /// [`Module::arguments`]).
    pub fn new(module: Module, args: BTreeMap<String, Value>) -> Result<Action, ArgsError> {
        let mut args = Args(args);
        let args = &mut args;
        Ok(match module {
            Module::Template => Action::Template(TemplateArgs {
                src: args.need("src")?,
                dest: args.need("dest")?,
                mode: args.take("mode"),
            }),
            Module::YamlSet => Action::YamlSet(YamlSetArgs {
                path: args.need("path")?,
                key: args.need("key")?,
                value: args.take("value"),
                state: args.take("state"),
                create: args.take("create"),
                mode: args.take("mode"),
            }),
            Module::EnvFlag => Action::EnvFlag(EnvFlagArgs {
                path: args.need("path")?,
                var: args.need("var")?,
                flag: args.need("flag")?,
                value: args.take("value"),
                state: args.take("state"),
            }),
            Module::ArgsFlag => Action::ArgsFlag(ArgsFlagArgs {
                path: args.need("path")?,
                flag: args.need("flag")?,
                value: args.take("value"),
                state: args.take("state"),
            }),
            Module::Sysctl => Action::Sysctl(SysctlArgs {
                name: args.need("name")?,
                value: args.need("value")?,
                file: args.take("file"),
            }),
            Module::Modprobe => Action::Modprobe(ModprobeArgs {
                name: args.need("name")?,
                file: args.take("file"),
            }),
            Module::InventorySet => Action::InventorySet(InventorySetArgs {
                key: args.need("key")?,
                value: args.need("value")?,
            }),
            Module::Note => Action::Note(MessageArgs {
                msg: args.need("msg")?,
            }),
            Module::Fail => Action::Fail(MessageArgs {
                msg: args.need("msg")?,
            }),
            Module::DnsPods => Action::DnsPods(DnsPodsArgs {
                state: args.need("state")?,
            }),
            Module::CorefileForward => Action::CorefileForward(CorefileForwardArgs {
                configmap: args.need("configmap")?,
                servers: args.need("servers")?,
            }),
            Module::RestartDue => Action::RestartDue(RestartDueArgs {
                unit: args.need("unit")?,
            }),
            Module::Service => return Err(ArgsError::HandlerOnly),
        })
    }

    pub fn module(&self) -> Module {
        match self {
            Action::Template(_) => Module::Template,
            Action::YamlSet(_) => Module::YamlSet,
            Action::EnvFlag(_) => Module::EnvFlag,
            Action::ArgsFlag(_) => Module::ArgsFlag,
            Action::Sysctl(_) => Module::Sysctl,
            Action::Modprobe(_) => Module::Modprobe,
            Action::InventorySet(_) => Module::InventorySet,
            Action::DnsPods(_) => Module::DnsPods,
            Action::CorefileForward(_) => Module::CorefileForward,
            Action::RestartDue(_) => Module::RestartDue,
            Action::Note(_) => Module::Note,
            Action::Fail(_) => Module::Fail,
        }
    }

    /// The files this action may write, where the playbook names them literally.
    pub fn literal_paths(&self) -> Vec<String> {
        let values: Vec<&Value> = match self {
            Action::Template(args) => vec![&args.dest],
            Action::YamlSet(args) => vec![&args.path],
            Action::EnvFlag(args) => vec![&args.path],
            Action::ArgsFlag(args) => vec![&args.path],
            Action::Sysctl(args) => args.file.iter().collect(),
            Action::Modprobe(args) => args.file.iter().collect(),
            Action::InventorySet(_)
            | Action::Note(_)
            | Action::Fail(_)
            | Action::DnsPods(_)
            | Action::CorefileForward(_)
            | Action::RestartDue(_) => Vec::new(),
        };
        values.into_iter().filter_map(Value::literal_str).collect()
    }
}

impl Service {
    pub fn new(args: BTreeMap<String, Value>) -> Result<Service, ArgsError> {
        let mut args = Args(args);
        Ok(Service {
            name: args.need("name")?,
            state: args.take("state"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TASK_MODULES: [Module; 12] = [
        Module::Template,
        Module::YamlSet,
        Module::EnvFlag,
        Module::ArgsFlag,
        Module::Sysctl,
        Module::Modprobe,
        Module::InventorySet,
        Module::Note,
        Module::Fail,
        Module::DnsPods,
        Module::CorefileForward,
        Module::RestartDue,
    ];

    fn literal(text: &str) -> Value {
        Value::Literal(serde_json::Value::String(text.into()))
    }

    #[test]
    fn every_argument_the_loader_accepts_lands_in_the_action() {
        for module in TASK_MODULES {
            let (required, optional) = module.arguments();
            let all: BTreeMap<String, Value> = required
                .iter()
                .chain(optional)
                .map(|k| (k.to_string(), literal(k)))
                .collect();
            let action = Action::new(module, all).expect("all arguments");
            assert_eq!(action.module(), module);
            // Every argument is a field: the debug form names each value.
            let shown = format!("{action:?}");
            for key in required.iter().chain(optional) {
                assert!(
                    shown.contains(&format!("{key:?}")),
                    "{module:?} drops {key}"
                );
            }
            for key in required {
                let mut fewer: BTreeMap<String, Value> = required
                    .iter()
                    .map(|k| (k.to_string(), literal(k)))
                    .collect();
                fewer.remove(*key);
                assert_eq!(Action::new(module, fewer), Err(ArgsError::Missing(key)));
            }
        }
        assert_eq!(
            Action::new(Module::Service, BTreeMap::new()),
            Err(ArgsError::HandlerOnly)
        );
    }
}
