//! The validated run configuration: what the command line asked for, checked before any
//! work starts (ripgrep's LowArgs → HiArgs, just's Arguments → Config).

use std::path::PathBuf;
use std::time::Duration;

use crate::cli::{
    BackendArg, Cli, ColourArg, Command, ConnectArgs, FormatArg, HostsArgs, SeverityArg, Shell,
    ShowFormatArg,
};
use crate::diagnose::Severity;
use crate::error::Error;
use crate::transport::{HostKeyPolicy, SshBackend, SshOptions};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Junit,
    Markdown,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Facts,
    /// Show the inventory as dnsfix understood it; contacts no host.
    Inventory,
    Check {
        fail_on: Severity,
    },
    Explain {
        id: Option<String>,
    },
    Plan(PlanConfig),
    /// Render a saved plan; contacts no host and reads no inventory.
    Show(ShowConfig),
    Apply(ApplyConfig),
    Rollback(RollbackConfig),
    Verify(VerifyConfig),
    /// Print a shell completion script; reads no inventory.
    Completions {
        shell: Shell,
    },
    /// Print the man page, or write every page into `dir`; reads no inventory.
    Man {
        dir: Option<PathBuf>,
    },
}

impl Action {
    /// The subcommand's name, as typed.
    pub fn name(&self) -> &'static str {
        match self {
            Action::Facts => "facts",
            Action::Inventory => "inventory",
            Action::Check { .. } => "check",
            Action::Explain { .. } => "explain",
            Action::Plan(_) => "plan",
            Action::Show(_) => "show",
            Action::Apply(_) => "apply",
            Action::Rollback(_) => "rollback",
            Action::Verify(_) => "verify",
            Action::Completions { .. } => "completions",
            Action::Man { .. } => "man",
        }
    }
}

/// What `dnsfix plan` was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanConfig {
    pub output: Option<PathBuf>,
    pub playbooks: Option<PathBuf>,
    pub colour: bool,
}

/// What `dnsfix apply` was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyConfig {
    pub probe_name: Option<String>,
    pub timeout: Duration,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShowConfig {
    pub plan: PathBuf,
    pub colour: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyConfig {
    pub plan: Option<PathBuf>,
    pub yes: bool,
    pub serial: Option<crate::playbook::Batch>,
    pub max_fail_percentage: u32,
    pub health_timeout: Duration,
    pub update_inventory: bool,
    pub playbooks: Option<PathBuf>,
    pub colour: bool,
}

/// What `dnsfix rollback` was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RollbackConfig {
    pub run_id: String,
    pub yes: bool,
    pub health_timeout: Duration,
}

#[derive(Debug, Clone)]
pub struct Config {
    pub action: Action,
    pub inventory: Option<PathBuf>,
    pub limit: Option<String>,
    pub format: Format,
    pub forks: usize,
    pub ssh: SshOptions,
    pub progress: bool,
    /// `--kubeconfig`: kubectl runs here with it, not on a control-plane host.
    pub kubeconfig: Option<PathBuf>,
}

/// Whether to colour text output: `auto` means on a terminal, unless NO_COLOR is set.
fn colour(arg: ColourArg) -> bool {
    match arg {
        ColourArg::Always => true,
        ColourArg::Never => false,
        ColourArg::Auto => {
            use std::io::IsTerminal;
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    }
}

fn severity(arg: SeverityArg) -> Severity {
    match arg {
        SeverityArg::Info => Severity::Info,
        SeverityArg::Warning => Severity::Warning,
        SeverityArg::High => Severity::High,
        SeverityArg::Critical => Severity::Critical,
    }
}

/// What every command that reaches hosts takes: which hosts, the output format, how to
/// connect. Each command's `--format` lists only the formats it prints (cli.rs).
type Common = (HostsArgs, FormatArg, ConnectArgs);

fn plan_action(args: crate::cli::PlanArgs) -> Result<(Action, Common), Error> {
    let colour = colour(args.color);
    // Checked now, not after every host was contacted.
    if let Some(path) = &args.output {
        check_plan_output(path)?;
    }
    let action = Action::Plan(PlanConfig {
        output: args.output,
        playbooks: args.playbooks,
        colour,
    });
    Ok((action, (args.hosts, args.format, args.connect)))
}

/// `-o PATH` names a file in a directory that exists.
fn check_plan_output(path: &std::path::Path) -> Result<(), Error> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    if !dir.is_dir() || path.is_dir() {
        return Err(Error::Usage(format!(
            "-o {}: {} is not a directory to save the plan in",
            path.display(),
            if path.is_dir() {
                path.display()
            } else {
                dir.display()
            }
        )));
    }
    Ok(())
}

/// The longest wait a `--*-timeout` flag takes: a day. Longer is no bound at all, and the
/// waits built from these (six health timeouts for an apply script, a login's 60 s added to
/// the connect timeout) must not overflow a `Duration`.
const MAX_TIMEOUT_SECS: u64 = 86_400;

/// `value` seconds for `flag`, or the error naming the flag and the range it takes.
fn seconds(flag: &str, value: u64) -> Result<Duration, Error> {
    if !(1..=MAX_TIMEOUT_SECS).contains(&value) {
        return Err(Error::Usage(format!(
            "{flag} {value}: expected 1 to {MAX_TIMEOUT_SECS} seconds"
        )));
    }
    Ok(Duration::from_secs(value))
}

fn verify_action(args: crate::cli::VerifyArgs) -> Result<(Action, Common), Error> {
    let action = Action::Verify(VerifyConfig {
        probe_name: args.probe_name,
        timeout: seconds("--dns-timeout", args.dns_timeout)?,
    });
    Ok((action, (args.hosts, args.format, args.connect)))
}

fn apply_action(args: crate::cli::ApplyArgs) -> Result<(Action, Common), Error> {
    let serial = match &args.serial {
        Some(text) => Some(crate::playbook::Batch::parse(text).ok_or_else(|| {
            Error::Usage(format!(
                "--serial {text}: expected a number of hosts or a percentage like 20%"
            ))
        })?),
        None => None,
    };
    if args.max_fail_percentage > 100 {
        return Err(Error::Usage(format!(
            "--max-fail-percentage {}: expected 0 to 100",
            args.max_fail_percentage
        )));
    }
    let action = Action::Apply(ApplyConfig {
        plan: args.plan,
        yes: args.yes,
        serial,
        max_fail_percentage: args.max_fail_percentage,
        health_timeout: seconds("--health-timeout", args.health_timeout)?,
        update_inventory: args.update_inventory,
        playbooks: args.playbooks,
        colour: colour(args.color),
    });
    Ok((action, (args.hosts, args.format, args.connect)))
}

fn rollback_action(args: crate::cli::RollbackArgs) -> Result<(Action, Common), Error> {
    // A run id names a file in the runs directory: one that could name a path elsewhere
    // (`../x`, `/tmp/x`) is none dnsfix made (`20261122T170509Z-3fa9c2d1`).
    let id = &args.run_id;
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Err(Error::Usage(format!(
            "run id {}: expected letters, digits and '-' only, as `dnsfix apply` prints them (e.g. 20261122T170509Z-3fa9c2d1)",
            crate::text::escape(id)
        )));
    }
    let action = Action::Rollback(RollbackConfig {
        run_id: args.run_id,
        yes: args.yes,
        health_timeout: seconds("--health-timeout", args.health_timeout)?,
    });
    Ok((action, (args.hosts, args.format, args.connect)))
}

impl Config {
    pub fn from_cli(cli: Cli) -> Result<Config, Error> {
        let (action, args) = match cli.command {
            Command::Facts(args) => (Action::Facts, (args.hosts, args.format, args.connect)),
            Command::Inventory(args) => return Ok(Config::inventory(args)),
            Command::Check(args) => {
                let fail_on = severity(args.fail_on);
                (
                    Action::Check { fail_on },
                    (args.hosts, args.format, args.connect),
                )
            }
            Command::Plan(args) => plan_action(args)?,
            Command::Show(args) => return Ok(Config::show(args)),
            Command::Verify(args) => verify_action(args)?,
            Command::Apply(args) => apply_action(args)?,
            Command::Rollback(args) => rollback_action(args)?,
            Command::Explain(args) => return Config::explain(args),
            Command::Completions(args) => {
                return Ok(Config::offline(Action::Completions { shell: args.shell }));
            }
            Command::Man(args) => return Config::man(args),
        };
        Config::from_common(action, args)
    }

    /// `dnsfix inventory`: the inventory's files only, no connection.
    fn inventory(args: crate::cli::InventoryArgs) -> Config {
        Config {
            inventory: args.hosts.inventory,
            limit: args.hosts.limit,
            format: format(args.format),
            ..Config::offline(Action::Inventory)
        }
    }

    fn explain(args: crate::cli::ExplainArgs) -> Result<Config, Error> {
        if let Some(id) = &args.id
            && crate::diagnose::catalog::rule(id).is_none()
        {
            let nearest = crate::diagnose::catalog::nearest(id);
            if nearest.ids.is_empty() {
                return Err(Error::Usage(format!(
                    "unknown finding id of {} characters, longer than any (`dnsfix explain` lists them all)",
                    id.chars().count()
                )));
            }
            let names = crate::text::or_list(&nearest.ids);
            let hint = if nearest.close {
                format!("did you mean {names}?")
            } else {
                format!("none is close; the nearest: {names}")
            };
            return Err(Error::Usage(format!(
                "unknown finding id `{}`: {hint} (`dnsfix explain` lists them all)",
                crate::text::escape(id)
            )));
        }
        Ok(Config::offline(Action::Explain { id: args.id }))
    }

    fn man(args: crate::cli::ManArgs) -> Result<Config, Error> {
        // Checked now, like `plan -o`: the pages go into a directory that exists.
        if let Some(dir) = &args.dir
            && !dir.is_dir()
        {
            return Err(Error::Usage(format!(
                "--dir {}: not a directory to write the man pages in",
                dir.display()
            )));
        }
        Ok(Config::offline(Action::Man { dir: args.dir }))
    }

    fn show(args: crate::cli::ShowArgs) -> Config {
        Config {
            action: Action::Show(ShowConfig {
                plan: args.plan,
                colour: colour(args.color),
            }),
            inventory: None,
            limit: args.limit,
            format: match args.format {
                ShowFormatArg::Text => Format::Text,
                ShowFormatArg::Markdown => Format::Markdown,
                ShowFormatArg::Json => Format::Json,
            },
            forks: 1,
            ssh: SshOptions::default(),
            progress: false,
            kubeconfig: None,
        }
    }

    /// A command that reads no inventory and contacts no host (explain, completions, man).
    fn offline(action: Action) -> Config {
        Config {
            action,
            inventory: None,
            limit: None,
            format: Format::Text,
            forks: 1,
            ssh: SshOptions::default(),
            progress: false,
            kubeconfig: None,
        }
    }

    fn from_common(action: Action, (hosts, format_arg, a): Common) -> Result<Config, Error> {
        if a.forks == 0 {
            return Err(Error::Usage("--forks must be at least 1".into()));
        }
        let connect_timeout = seconds("--connect-timeout", a.connect_timeout)?;
        let command_timeout = seconds("--command-timeout", a.command_timeout)?;
        for (flag, path) in [
            ("--known-hosts", &a.known_hosts),
            ("--ssh-config", &a.ssh_config),
            ("--private-key", &a.private_key),
            ("--kubeconfig", &a.kubeconfig),
        ] {
            // /dev/null is a file to ssh: "no known hosts" (or no config).
            if let Some(path) = path
                && !path.is_file()
                && path.as_path() != std::path::Path::new("/dev/null")
            {
                // A first run that is to record the keys may have no file yet. ssh would make
                // one, but a mistyped path would then start a new, empty list that trusts
                // every key it meets: the file must exist, and the message says how.
                let hint = if flag == "--known-hosts" && a.accept_new_host_keys {
                    format!(
                        " (--accept-new-host-keys records new keys in it, but it must exist: create it empty first, `touch {}`)",
                        crate::node_script::quote(&path.display().to_string())
                    )
                } else {
                    String::new()
                };
                return Err(Error::Usage(format!(
                    "{flag} {}: no such file{hint}",
                    path.display()
                )));
            }
        }
        // ssh reads these two through its own option parser, which splits on whitespace and
        // expands % and ${}: "/my dir/known_hosts" would also trust ./dir/known_hosts.
        if matches!(a.ssh_backend, BackendArg::Openssh) {
            for (flag, path) in [
                ("--known-hosts", &a.known_hosts),
                ("--private-key", &a.private_key),
            ] {
                if let Some(path) = path
                    && let Err(why) = crate::transport::literal_path(path)
                {
                    return Err(Error::Usage(format!("{flag} {why}")));
                }
            }
        }
        let mut ssh = SshOptions {
            backend: match a.ssh_backend {
                BackendArg::Openssh => SshBackend::OpenSsh,
                BackendArg::Russh => SshBackend::Russh,
            },
            host_keys: if a.accept_new_host_keys {
                HostKeyPolicy::AcceptNew
            } else {
                HostKeyPolicy::Strict
            },
            known_hosts: a.known_hosts,
            ssh_config: a.ssh_config,
            user: a.user,
            private_key: a.private_key,
            connect_timeout,
            command_timeout,
            ssh_persist: a.ssh_persist,
            // A write goes over a connection that checked the host key now, never over
            // a master left by the plan a minute ago.
            reuse_masters: !matches!(action, Action::Apply(_) | Action::Rollback(_)),
            ..SshOptions::default()
        };
        if let Some(kex) = a.russh_kex {
            ssh.russh_kex = kex;
        }
        Ok(Config {
            action,
            inventory: hosts.inventory,
            limit: hosts.limit,
            format: format(format_arg),
            forks: a.forks,
            ssh,
            progress: !a.no_progress,
            kubeconfig: a.kubeconfig,
        })
    }
}

fn format(arg: FormatArg) -> Format {
    match arg {
        FormatArg::Text => Format::Text,
        FormatArg::Json => Format::Json,
        FormatArg::Junit => Format::Junit,
        FormatArg::Markdown => Format::Markdown,
    }
}
