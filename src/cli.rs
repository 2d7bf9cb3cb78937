//! Command-line arguments (clap only; nothing else in the crate imports clap). Arguments
//! are turned into a validated `Config` (config.rs) before any work starts. The shell
//! completion scripts and the man pages are generated here too, from these same
//! definitions, so they can never disagree with `--help`.

use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "dnsfix",
    version,
    about = "Find and fix the node-level misconfigurations that break DNS in Kubernetes clusters",
    long_about = "Find and fix the node-level misconfigurations that break DNS in Kubernetes \
                  clusters.\n\nWith no -i, dnsfix works read-only on this machine."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Gather and print each node's DNS-relevant facts (read-only)
    Facts(FactsArgs),
    /// Diagnose every node: findings with evidence, worst first, plus fleet drift (read-only)
    Check(CheckArgs),
    /// Findings, then exactly what `apply` would change on each node (read-only)
    Plan(PlanArgs),
    /// Carry out a plan: the one given (exactly as saved), or a fresh one after a y/N
    Apply(ApplyArgs),
    /// Undo what an apply run changed, where it is still what the run wrote
    Rollback(RollbackArgs),
    /// Ask each node's DNS paths real queries from the node itself: the kubelet's upstreams
    /// answer an outside name, cluster DNS answers kubernetes.default (read-only)
    Verify(VerifyArgs),
    /// Render a saved plan offline (no inventory, no connection): as text, Markdown or JSON
    ///
    /// The text is what `plan` printed for it; Markdown is for a merge request or a change
    /// ticket. The file's sha256, when and from what it was made go to stderr.
    Show(ShowArgs),
    /// What a finding means, why it happens, how it is fixed and verified
    Explain(ExplainArgs),
    /// The inventory as dnsfix reads it: groups, connections, DNS variables and their files
    ///
    /// Per host: its groups (those Kubespray adds at run time marked), how dnsfix connects,
    /// and each DNS-relevant variable with the file and line it came from. Contacts no host.
    /// Compare with `ansible-inventory -i FILE --list`.
    Inventory(InventoryArgs),
    /// Print a shell completion script: bash, zsh, fish, elvish or powershell
    ///
    /// For example `dnsfix completions bash > ~/.local/share/bash-completion/completions/dnsfix`;
    /// the README lists where each shell looks.
    Completions(CompletionsArgs),
    /// Print the man page (roff), or write one page per command into a directory
    ///
    /// For packagers: `dnsfix man > dnsfix.1`, or `dnsfix man --dir DIR` for dnsfix.1 and a
    /// dnsfix-COMMAND.1 for each command. To read it now: `dnsfix man | man -l -`.
    Man(ManArgs),
}

#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: Shell,
}

#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// Write dnsfix.1 and a dnsfix-COMMAND.1 for each command into DIR (it must exist),
    /// instead of printing dnsfix.1
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// The shells `dnsfix completions` writes a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Elvish,
    #[value(name = "powershell")]
    PowerShell,
}

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub hosts: HostsArgs,

    /// Output format on stdout
    #[arg(long, default_value = "text", value_name = "FORMAT",
          value_parser = formats(&[FormatArg::Text, FormatArg::Json, FormatArg::Junit]))]
    pub format: FormatArg,

    #[command(flatten)]
    pub connect: ConnectArgs,

    /// Exit 2 when a finding is at least this severe
    #[arg(long, value_enum, default_value_t = SeverityArg::Warning, value_name = "SEVERITY")]
    pub fail_on: SeverityArg,
}

#[derive(Debug, Clone, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub hosts: HostsArgs,

    /// Output format on stdout
    #[arg(long, default_value = "text", value_name = "FORMAT",
          value_parser = formats(&[FormatArg::Text, FormatArg::Json, FormatArg::Markdown]))]
    pub format: FormatArg,

    #[command(flatten)]
    pub connect: ConnectArgs,

    /// Also save the plan as JSON to FILE, for review and for `apply FILE`
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// A directory of site playbooks (`*.yml`) and templates (`templates/*.j2`): a file
    /// named like a shipped one replaces it, others are added
    #[arg(long, value_name = "DIR", env = "DNSFIX_PLAYBOOKS")]
    pub playbooks: Option<PathBuf>,

    /// Colour the text output: auto (on a terminal, unless NO_COLOR is set), always, never
    #[arg(long, value_enum, default_value_t = ColourArg::Auto, value_name = "WHEN")]
    pub color: ColourArg,
}

#[derive(Debug, Clone, Args)]
pub struct ApplyArgs {
    #[command(flatten)]
    pub hosts: HostsArgs,

    /// Output format on stdout
    #[arg(long, default_value = "text", value_name = "FORMAT", value_parser = formats(TEXT_JSON))]
    pub format: FormatArg,

    #[command(flatten)]
    pub connect: ConnectArgs,

    /// A saved plan (`dnsfix plan -o FILE`) to apply exactly as reviewed: no re-plan, no
    /// prompt; with --limit, its part for the hosts selected in the -i inventory. Without
    /// it, dnsfix plans now, shows the plan and asks y/N
    #[arg(value_name = "PLAN")]
    pub plan: Option<PathBuf>,

    /// Apply a fresh plan without asking (runbooks, CI)
    #[arg(short, long)]
    pub yes: bool,

    /// Hosts whose units restart go N at a time, or N% of the hosts [default: the
    /// playbooks' serial, 1]
    #[arg(long, value_name = "N|N%")]
    pub serial: Option<String>,

    /// Start no further batch once more than this percentage of the hosts failed
    #[arg(long, default_value_t = 0, value_name = "PCT")]
    pub max_fail_percentage: u32,

    /// How long a restarted unit has to come back healthy
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    pub health_timeout: u64,

    /// Also make the plan's inventory changes (Kubespray group_vars and host_vars), so the
    /// next cluster.yml run keeps the fixes
    #[arg(long)]
    pub update_inventory: bool,

    /// Site playbooks and templates: for a fresh plan (as for `plan`), and for a saved plan
    /// the ones it was made with (their `allow:` and sha256 are checked)
    #[arg(long, value_name = "DIR", env = "DNSFIX_PLAYBOOKS")]
    pub playbooks: Option<PathBuf>,

    /// Colour the plan shown before asking: auto, always, never
    #[arg(long, value_enum, default_value_t = ColourArg::Auto, value_name = "WHEN")]
    pub color: ColourArg,
}

#[derive(Debug, Clone, Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub hosts: HostsArgs,

    /// Output format on stdout
    #[arg(long, default_value = "text", value_name = "FORMAT",
          value_parser = formats(&[FormatArg::Text, FormatArg::Json, FormatArg::Junit]))]
    pub format: FormatArg,

    #[command(flatten)]
    pub connect: ConnectArgs,

    /// The outside name the upstream servers must resolve, on every host [default: each
    /// host's dnsfix_probe_name in the inventory, else kubernetes.io]
    #[arg(long, value_name = "NAME")]
    pub probe_name: Option<String>,

    /// How long each DNS query may take
    #[arg(long, default_value_t = 3, value_name = "SECS")]
    pub dns_timeout: u64,
}

#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    /// A saved plan (`dnsfix plan -o FILE`)
    #[arg(value_name = "PLAN")]
    pub plan: PathBuf,

    /// Only the hosts this Ansible pattern selects, by name and by the groups the plan
    /// recorded (e.g. `kube_node`, `node[1:3]`, `all:!etcd`)
    #[arg(short, long, value_name = "PATTERN")]
    pub limit: Option<String>,

    #[arg(long, value_enum, default_value_t = ShowFormatArg::Text)]
    pub format: ShowFormatArg,

    /// Colour the text output: auto (on a terminal, unless NO_COLOR is set), always, never
    #[arg(long, value_enum, default_value_t = ColourArg::Auto, value_name = "WHEN")]
    pub color: ColourArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShowFormatArg {
    /// What `dnsfix plan` printed
    Text,
    /// For a merge request or a change ticket
    Markdown,
    /// The plan (narrowed by --limit)
    Json,
}

#[derive(Debug, Clone, Args)]
pub struct RollbackArgs {
    #[command(flatten)]
    pub hosts: HostsArgs,

    /// Output format on stdout
    #[arg(long, default_value = "text", value_name = "FORMAT", value_parser = formats(TEXT_JSON))]
    pub format: FormatArg,

    #[command(flatten)]
    pub connect: ConnectArgs,

    /// The run to undo (printed by `dnsfix apply`; records are in the state directory)
    #[arg(value_name = "RUN_ID")]
    pub run_id: String,

    /// Do not ask before rolling back
    #[arg(short, long)]
    pub yes: bool,

    /// How long a restarted unit has to come back healthy
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    pub health_timeout: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColourArg {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Args)]
pub struct ExplainArgs {
    /// A finding id (e.g. DNS-KUBELET-LOOPBACK); without it, every id with one line each
    pub id: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SeverityArg {
    Info,
    Warning,
    High,
    Critical,
}

/// What a command prints on stdout. Each command takes only its own (`formats`): clap then
/// lists, completes and checks just those.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Text,
    Json,
    /// JUnit XML for CI: a testsuite per host, a testcase per rule (check) or DNS path (verify)
    Junit,
    /// Markdown for a change review (`dnsfix show` renders a saved plan)
    Markdown,
}

const TEXT_JSON: &[FormatArg] = &[FormatArg::Text, FormatArg::Json];

/// `--format`'s parser for a command that prints `allowed`: its help, its completions and
/// its error for another format name only these.
fn formats(allowed: &'static [FormatArg]) -> impl TypedValueParser<Value = FormatArg> {
    // The parser let only the names of `allowed` through.
    PossibleValuesParser::new(allowed.iter().filter_map(ValueEnum::to_possible_value))
        .map(|name| FormatArg::from_str(&name, false).unwrap_or(FormatArg::Text))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    /// The system ssh client with a ControlMaster (honours ~/.ssh/config)
    Openssh,
    /// A pure-Rust client, no child processes (does not read ~/.ssh/config)
    Russh,
}

#[derive(Debug, Clone, Args)]
pub struct FactsArgs {
    #[command(flatten)]
    pub hosts: HostsArgs,

    /// Output format on stdout
    #[arg(long, default_value = "text", value_name = "FORMAT", value_parser = formats(TEXT_JSON))]
    pub format: FormatArg,

    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// `dnsfix inventory` reads files only: no connection options.
#[derive(Debug, Clone, Args)]
pub struct InventoryArgs {
    #[command(flatten)]
    pub hosts: HostsArgs,

    /// Output format on stdout
    #[arg(long, default_value = "text", value_name = "FORMAT", value_parser = formats(TEXT_JSON))]
    pub format: FormatArg,
}

/// Which hosts: the inventory and the pattern.
#[derive(Debug, Clone, Args)]
pub struct HostsArgs {
    /// Ansible/Kubespray inventory: a file (YAML or INI), or a directory of them as Ansible
    /// takes one; the group_vars/ and host_vars/ beside the file, or in the directory, are
    /// read. Without it, dnsfix works on this machine only
    #[arg(short, long, value_name = "FILE|DIR", env = "DNSFIX_INVENTORY")]
    pub inventory: Option<PathBuf>,

    /// Only these hosts: names, groups, globs, `a,b` or `a:b` unions, `!x` exclusions, `&x` intersections
    #[arg(short, long, value_name = "PATTERN")]
    pub limit: Option<String>,
}

/// How to reach the hosts: SSH, parallelism, the cluster's kubeconfig.
#[derive(Debug, Clone, Args)]
pub struct ConnectArgs {
    /// How many hosts to work on at once
    #[arg(short, long, default_value_t = 50, value_name = "N")]
    pub forks: usize,

    /// SSH implementation
    #[arg(long, value_enum, default_value_t = BackendArg::Openssh, value_name = "BACKEND")]
    pub ssh_backend: BackendArg,

    /// known_hosts file to check host keys against, in place of the user's (default:
    /// ssh's own); the system's /etc/ssh/ssh_known_hosts counts too
    #[arg(long, value_name = "FILE")]
    pub known_hosts: Option<PathBuf>,

    /// Trust and record host keys seen for the first time (a changed key is still refused)
    #[arg(long)]
    pub accept_new_host_keys: bool,

    /// ssh_config file for the openssh backend (`ssh -F`)
    #[arg(long, value_name = "FILE")]
    pub ssh_config: Option<PathBuf>,

    /// SSH user for hosts whose inventory sets no ansible_user
    #[arg(short, long, value_name = "USER")]
    pub user: Option<String>,

    /// Private key for hosts whose inventory sets no ansible_ssh_private_key_file
    #[arg(long, value_name = "FILE")]
    pub private_key: Option<PathBuf>,

    /// Seconds to wait for a node to answer: the TCP connect and the SSH banner (openssh),
    /// the TCP connect and the SSH handshake (russh); a login then gets 60 s more
    #[arg(long, default_value_t = 10, value_name = "SECS")]
    pub connect_timeout: u64,

    /// Seconds a remote command may run
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    pub command_timeout: u64,

    /// Key exchange algorithms for the russh backend, most preferred first (comma-separated)
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub russh_kex: Option<Vec<String>>,

    /// Seconds an idle OpenSSH connection outlives the run, so the next command reuses it
    /// (0: close connections when the run ends; apply and rollback never reuse one, and
    /// close theirs)
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    pub ssh_persist: u64,

    /// Never draw a progress bar, even on a terminal
    #[arg(long)]
    pub no_progress: bool,

    /// Run kubectl here with this kubeconfig for the cluster's side (DNS pods, ConfigMaps),
    /// instead of on the first kube_control_plane host with its admin kubeconfig
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
}

/// The completion script for `shell`, generated from the arguments above.
pub fn completion_script(shell: Shell) -> Vec<u8> {
    use clap_complete::Shell as Generator;
    let generator = match shell {
        Shell::Bash => Generator::Bash,
        Shell::Zsh => Generator::Zsh,
        Shell::Fish => Generator::Fish,
        Shell::Elvish => Generator::Elvish,
        Shell::PowerShell => Generator::PowerShell,
    };
    // Into memory: clap_complete panics when its writer fails (a closed pipe); the
    // caller writes the script and reports a failure like any other output error.
    let mut script = Vec::new();
    clap_complete::generate(generator, &mut Cli::command(), "dnsfix", &mut script);
    script
}

/// The man pages, as (file name, roff): `dnsfix.1` first, then a `dnsfix-COMMAND.1` for
/// every command it refers to, as `clap_mangen::generate_to` names them.
pub fn man_pages() -> std::io::Result<Vec<(String, Vec<u8>)>> {
    fn render(cmd: clap::Command, pages: &mut Vec<(String, Vec<u8>)>) -> std::io::Result<()> {
        let subcommands: Vec<clap::Command> = cmd
            .get_subcommands()
            .filter(|sub| !sub.is_hide_set())
            .cloned()
            .collect();
        let title = cmd
            .get_display_name()
            .unwrap_or_else(|| cmd.get_name())
            .to_uppercase();
        let man = clap_mangen::Man::new(cmd).title(title);
        let mut roff = Vec::new();
        man.render(&mut roff)?;
        pages.push((man.get_filename(), roff));
        for sub in subcommands {
            render(sub, pages)?;
        }
        Ok(())
    }
    // `dnsfix help` is clap's, not a command of its own: no page, not listed.
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut pages = Vec::new();
    render(cmd, &mut pages)?;
    Ok(pages)
}
