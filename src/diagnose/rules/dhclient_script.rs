//! Whether the dhclient-script the node's own dhclients run writes /etc/resolv.conf at a
//! lease, as that script decides it: the enter hooks it sources (a `make_resolv_conf` that
//! does nothing, or one that does what dnsfix cannot tell) and, in Red Hat's, `PEERDNS`.
//! Facts only: it judges nothing; DNS-RESOLV-MANAGED-ELSEWHERE and the fix texts ask it.
//!
//! Which script runs is the distribution's (/etc/os-release `ID`, `ID_LIKE`):
//! - Debian and Ubuntu (pexip/os-isc-dhcp @29a44578 debian/dhclient-script.linux, 4.4.3-P1-2):
//!   /etc/dhcp/dhclient-enter-hooks where it is a regular file (`[ -f ]`, any mode), then each
//!   name `run-parts --list /etc/dhcp/dhclient-enter-hooks.d` prints ([`run_parts_name`],
//!   byte order: dhclient hands its script no locale), sourced in turn before the script
//!   calls `make_resolv_conf`.
//! - Red Hat's (Fedora rpms/dhcp dhclient-script, as mirrored in VersatusHPC/rpms-dhcp
//!   @986801e1): /etc/dhcp/dhclient-enter-hooks only where it is executable (`[ -x ]`),
//!   no directory; then its own `make_resolv_conf` returns at once where `PEERDNS` is `no`,
//!   as /etc/sysconfig/network, /etc/sysconfig/networking/network and the interface's
//!   `ifcfg-IFACE` (sourced in that order, the last one winning) leave it
//!   (fedora-sysv/initscripts @9d622839 network-scripts/network-functions `need_config`,
//!   `source_config`; doc/sysconfig.txt `PEERDNS=yes|no`, "default to yes").
//! - Any other: ISC's own client/scripts/linux (isc-projects/dhcp @572032cb) sources
//!   /etc/dhclient-enter-hooks and /etc/dhclient-enter-hooks.d the Debian way; the
//!   distribution may ship another script, so a hook that stops the write there leaves it
//!   unknown, never said not to happen.

use super::dhclient_run::DhclientRun;
use crate::facts::NodeFacts;
use crate::facts::dhclient_hooks::{Kind, hook, peerdns, run_parts_name};
use crate::facts::raw::{FileState, RawFacts};

/// The gather's record of a /etc/dhcp/dhclient-enter-hooks that is executable (`[ -x ]`).
pub(crate) const ENTER_HOOK_EXEC: &str = "dhclient-enter-hooks-x";

/// The network-scripts directory Red Hat's dhclient-script reads `ifcfg-IFACE` from.
const NETWORK_SCRIPTS: &str = "/etc/sysconfig/network-scripts";

/// Which dhclient-script the distribution ships.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Script {
    Debian,
    RedHat,
    Other,
}

impl Script {
    /// By /etc/os-release `ID` and `ID_LIKE`.
    pub(crate) fn of(raw: &RawFacts) -> Script {
        let text = raw
            .get("/etc/os-release")
            .and_then(|f| f.text())
            .unwrap_or_default();
        let mut words = Vec::new();
        for line in text.lines() {
            if let Some((k, v)) = line.split_once('=')
                && (k.trim() == "ID" || k.trim() == "ID_LIKE")
            {
                let v = v.trim().trim_matches('"').trim_matches('\'');
                words.extend(v.split_whitespace().map(str::to_owned));
            }
        }
        let has = |names: &[&str]| words.iter().any(|w| names.contains(&w.as_str()));
        if has(&["debian", "ubuntu"]) {
            Script::Debian
        } else if has(&["rhel", "fedora", "centos"]) {
            Script::RedHat
        } else {
            Script::Other
        }
    }
}

/// What the dhclient-script writes, with why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Writes {
    /// It writes /etc/resolv.conf (its own `make_resolv_conf`, or resolvconf's hook hands
    /// the servers on): notes on hooks it does not source.
    Yes(Vec<String>),
    /// It does not: the hook line or the `PEERDNS` lines that say so.
    No(Vec<String>),
    /// Not known: why.
    Unknown(Vec<String>),
}

/// Where the hooks leave `make_resolv_conf`.
enum State {
    Script,
    Resolvconf,
    Nothing(String),
    Unknown(String),
}

/// Whether the dhclient-script the dhclients `runs` (none of them NetworkManager's) run
/// writes /etc/resolv.conf at a lease.
pub(crate) fn writes(facts: &NodeFacts, runs: &[&DhclientRun]) -> Writes {
    let raw = &facts.raw;
    let script = Script::of(raw);
    let (hooks, mut notes) = sourced(raw, script);
    let mut state = State::Script;
    for path in hooks {
        state = after(raw, &path).unwrap_or(state);
    }
    match state {
        State::Script if script == Script::RedHat => {
            let (writes, more) = red_hat_peerdns(raw, runs);
            notes.extend(more);
            match writes {
                Some(false) => Writes::No(notes),
                Some(true) => Writes::Yes(notes),
                None => Writes::Unknown(notes),
            }
        }
        State::Script | State::Resolvconf => Writes::Yes(notes),
        State::Nothing(why) if script == Script::Other => Writes::Unknown(vec![
            why,
            "which dhclient-script runs here is not known (/etc/os-release names neither a Debian nor a Red Hat family): ISC's own client/scripts/linux sources that hook, the distribution's may not".to_owned(),
        ]),
        State::Nothing(why) => Writes::No(vec![why]),
        State::Unknown(why) => Writes::Unknown(vec![why]),
    }
}

/// The hooks `script` sources, in its order, and notes on those it passes over.
fn sourced(raw: &RawFacts, script: Script) -> (Vec<String>, Vec<String>) {
    let (file, dir) = match script {
        Script::Debian => (
            "/etc/dhcp/dhclient-enter-hooks",
            "/etc/dhcp/dhclient-enter-hooks.d",
        ),
        Script::Other => ("/etc/dhclient-enter-hooks", "/etc/dhclient-enter-hooks.d"),
        Script::RedHat => {
            let file = "/etc/dhcp/dhclient-enter-hooks";
            let there = raw.get(file).is_some_and(|f| f.state == FileState::Present);
            return match (there, raw.commands.contains_key(ENTER_HOOK_EXEC)) {
                (false, _) => (Vec::new(), Vec::new()),
                (true, true) => (vec![file.to_owned()], Vec::new()),
                (true, false) => (
                    Vec::new(),
                    vec![format!(
                        "{file} is not sourced: Red Hat's dhclient-script sources it only where it is executable (chmod +x)"
                    )],
                ),
            };
        }
    };
    let mut hooks = vec![file.to_owned()];
    let mut notes = Vec::new();
    let mut names: Vec<(&str, &str)> = raw
        .files_in(dir)
        .filter(|(_, f)| f.state != FileState::Directory && f.state != FileState::Missing)
        .map(|(path, _)| (path, &path[dir.len() + 1..]))
        .collect();
    names.sort_by(|a, b| a.1.as_bytes().cmp(b.1.as_bytes()));
    for (path, name) in names {
        if run_parts_name(name) {
            hooks.push(path.to_owned());
        } else {
            notes.push(format!(
                "{} is not sourced: dhclient-script sources what run-parts --list prints, names of letters, digits, _ and - alone",
                crate::text::escape(path)
            ));
        }
    }
    (hooks, notes)
}

/// Where the hook at `path` leaves `make_resolv_conf`; `None` where it is not there.
fn after(raw: &RawFacts, path: &str) -> Option<State> {
    let f = raw.get(path)?;
    let shown = crate::text::escape(path);
    let text = match f.state {
        FileState::Present if !f.truncated => f.text()?,
        FileState::Present => {
            return Some(State::Unknown(format!(
                "{shown} was not read in full: what it does to make_resolv_conf is not known"
            )));
        }
        FileState::Unreadable => {
            return Some(State::Unknown(format!(
                "{shown} could not be read: what it does to make_resolv_conf is not known"
            )));
        }
        _ => return None,
    };
    let parsed = hook(&text);
    if parsed.unbalanced {
        return Some(State::Unknown(format!(
            "{shown} does not parse (it ends inside a compound command, a quote or a $( )): sh refuses it, and what dhclient-script does then is not known"
        )));
    }
    if parsed
        .definitions
        .iter()
        .any(|d| d.kind == Kind::Resolvconf)
    {
        return Some(State::Resolvconf);
    }
    let mut state = None;
    for d in parsed.definitions {
        let at = format!("{shown}:{}", d.line);
        state = Some(match (d.kind, d.nested) {
            (Kind::Nothing, false) => State::Nothing(format!(
                "{at} redefines make_resolv_conf to do nothing: dhclient-script does not write /etc/resolv.conf"
            )),
            (Kind::Nothing, true) => State::Unknown(format!(
                "{at} redefines make_resolv_conf to do nothing, but inside a compound command (a condition, a case, a function): whether it runs is not known"
            )),
            (Kind::Empty, _) => State::Unknown(format!(
                "{at} defines make_resolv_conf with an empty body, which sh refuses (dash ends dhclient-script there, bash keeps the function it had): what is written is not known"
            )),
            (Kind::Mention, _) => State::Unknown(format!(
                "{at} names make_resolv_conf other than in a definition dnsfix reads: what dhclient-script writes then is not known"
            )),
            (Kind::Other | Kind::Resolvconf, _) => State::Unknown(format!(
                "{at} redefines make_resolv_conf: what it writes is not known"
            )),
        });
    }
    state
}

/// `PEERDNS` as Red Hat's dhclient-script sees it for the interfaces `runs` serve: whether
/// its `make_resolv_conf` writes (`None`: not known), and the lines that say so.
fn red_hat_peerdns(raw: &RawFacts, runs: &[&DhclientRun]) -> (Option<bool>, Vec<String>) {
    // (where, value): the last of the files that set it, in the order they are sourced.
    let mut global: Option<(String, Option<String>)> = None;
    for path in [
        "/etc/sysconfig/network",
        "/etc/sysconfig/networking/network",
    ] {
        if let Some((line, value)) = raw
            .get(path)
            .and_then(|f| f.text())
            .and_then(|t| peerdns(&t))
        {
            global = Some((format!("{path}:{line}"), value));
        }
    }
    let ifcfg_sets = raw
        .files_in(NETWORK_SCRIPTS)
        .filter(|(p, _)| p[NETWORK_SCRIPTS.len() + 1..].starts_with("ifcfg-"))
        .any(|(_, f)| f.text().and_then(|t| peerdns(&t)).is_some());
    let mut interfaces: Vec<String> = Vec::new();
    for run in runs {
        match run.serves() {
            Ok(served) => interfaces.extend(served.iter().cloned()),
            Err(_) if !ifcfg_sets => {}
            Err(why) => {
                return (
                    None,
                    vec![format!(
                        "which ifcfg file sets PEERDNS for dhclient is not known: {why}"
                    )],
                );
            }
        }
    }
    if runs.iter().any(|r| r.serves().is_err()) {
        // No ifcfg file sets it: the global one decides for every interface.
        interfaces.push(String::new());
    }
    let mut says = Vec::new();
    for iface in interfaces {
        let (at, value) = if iface.is_empty() {
            match &global {
                Some(g) => g.clone(),
                None => return (Some(true), Vec::new()),
            }
        } else {
            match interface_peerdns(raw, &iface, ifcfg_sets, &global) {
                Ok(Some(v)) => v,
                Ok(None) => return (Some(true), Vec::new()),
                Err(why) => return (None, vec![why]),
            }
        };
        match value.as_deref() {
            Some("no") => says.push(format!(
                "{at}: PEERDNS=no: Red Hat's dhclient-script does not write /etc/resolv.conf{}",
                if iface.is_empty() {
                    String::new()
                } else {
                    format!(" for {}", crate::text::escape(&iface))
                }
            )),
            Some(_) => return (Some(true), Vec::new()),
            None => {
                return (
                    None,
                    vec![format!(
                        "{at}: PEERDNS is set by an expansion dnsfix does not evaluate"
                    )],
                );
            }
        }
    }
    if says.is_empty() {
        (Some(true), Vec::new())
    } else {
        (Some(false), says)
    }
}

/// The `PEERDNS` Red Hat's dhclient-script has for `iface`: its `ifcfg-IFACE`'s, else the
/// global files'; `Ok(None)` where nothing sets it (its default, yes). `Err` where the
/// ifcfg file network-functions would pick is not known (`need_config` looks it up by
/// `NAME=`, `HWADDR=` and `DEVICE=` where `ifcfg-IFACE` is missing) or was not read.
fn interface_peerdns(
    raw: &RawFacts,
    iface: &str,
    ifcfg_sets: bool,
    global: &Option<(String, Option<String>)>,
) -> Result<Option<(String, Option<String>)>, String> {
    let path = format!("{NETWORK_SCRIPTS}/ifcfg-{iface}");
    let shown = crate::text::escape(&path);
    match raw.get(&path).map(|f| (f.state, f)) {
        Some((FileState::Present, f)) if !f.truncated => {
            let text = f.text().unwrap_or_default();
            Ok(peerdns(&text)
                .map(|(line, value)| (format!("{shown}:{line}"), value))
                .or_else(|| global.clone()))
        }
        None | Some((FileState::Missing, _)) if !ifcfg_sets => Ok(global.clone()),
        None | Some((FileState::Missing, _)) => Err(format!(
            "{shown} is missing, and Red Hat's network-functions then looks the interface's ifcfg file up by NAME=, HWADDR= or DEVICE=: which PEERDNS it has is not known"
        )),
        Some(_) => Err(format!(
            "{shown} could not be read: its PEERDNS is not known"
        )),
    }
}

/// Whether the dhclient-script of the node's own dhclients (not NetworkManager's) writes
/// /etc/resolv.conf, for the playbooks: `yes`, `no` or `unknown` ([`writes`]); `no` where
/// no dhclient runs, or only NetworkManager's.
pub(crate) fn resolv_conf_written(facts: &NodeFacts) -> &'static str {
    if !facts.services.dhclient {
        return "no";
    }
    let runs = DhclientRun::all(facts);
    let own: Vec<&DhclientRun> = runs
        .iter()
        .filter(|r| !r.command.as_ref().is_ok_and(|c| c.run_by_network_manager()))
        .collect();
    if !runs.is_empty() && own.is_empty() {
        return "no";
    }
    match writes(facts, &own) {
        Writes::Yes(_) => "yes",
        Writes::No(_) => "no",
        Writes::Unknown(_) => "unknown",
    }
}
