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
//!
//! systemd-resolved: Ubuntu's hooks hand the lease's servers to it where it is enabled
//! (`if systemctl is-enabled systemd-resolved`), so they still reach the resolver.
//! Ubuntu 20.04's systemd 245 ships /etc/dhcp/dhclient-enter-hooks.d/resolved (pop-os/systemd
//! master_focal @ce313f24 debian/extra/dhclient-enter-resolved-hook, installed by
//! debian/rules): a do-nothing `make_resolv_conf`, then one that writes the servers to
//! /run/systemd/resolved.conf.d and restarts systemd-resolved. Later isc-dhcp-client
//! packages split that in two, an enter hook that only blanks `make_resolv_conf` and an
//! exit hook in /etc/dhcp/dhclient-exit-hooks.d that runs `resolvectl`: Debian's script
//! sources /etc/dhcp/dhclient-exit-hooks and then what run-parts lists of its .d directory
//! as it exits (`exit_with_hooks`, pexip/os-isc-dhcp @29a44578), after `make_resolv_conf`,
//! so an exit hook that hands the servers to systemd-resolved does so whatever the enter
//! hooks did. Whether a guard holds is systemctl(1)'s `is-enabled` exit status for the state
//! the gather read ([`resolved_enabled`]).

use super::dhclient_run::DhclientRun;
use crate::facts::NodeFacts;
use crate::facts::dhclient_hooks::{Kind, MAX_DEPTH, hook, peerdns, run_parts_name};
use crate::facts::node_facts::UnitState;
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
    /// It writes no /etc/resolv.conf, but a hook hands the lease's servers to
    /// systemd-resolved (Ubuntu's stock hooks, where it is enabled): the notes and the hook
    /// line that says so. They reach what goes through systemd-resolved.
    Resolved(Vec<String>),
}

/// Where the hooks leave `make_resolv_conf`.
enum State {
    Script,
    Resolvconf,
    /// A hook hands the servers to systemd-resolved: why.
    Resolved(String),
    Nothing(String),
    /// A definition that runs, whose effect dnsfix cannot tell (another body, a condition,
    /// a call): why. An exit hook that hands the servers on still decides.
    Unsure(String),
    /// What the script does is not known at all (a hook not read in full, one sh refuses,
    /// where dash ends the script before its exit hooks): why.
    Unknown(String),
}

/// Whether `systemctl is-enabled systemd-resolved`, which the stock hooks ask, succeeds:
/// systemctl(1)'s table of `is-enabled` states and exit statuses (pop-os/systemd
/// master_noble @814fa98f man/systemctl.xml): 0 for enabled, enabled-runtime, alias,
/// static, indirect, generated and transient. `None` where the state was not read or is a
/// word that table does not have. The gather asks only where systemd-resolved has run this
/// boot (/run/systemd/resolve is there, or /etc/resolv.conf links to nothing); where it
/// did not ask, systemd-resolved has not run and is not active, so it is taken as not
/// enabled.
pub(crate) fn resolved_enabled(facts: &NodeFacts) -> Option<bool> {
    let Some(state) = facts.services.systemd_resolved_enabled.as_deref() else {
        let ran = facts.services.systemd_resolved != UnitState::Inactive
            || [
                "/run/systemd/resolve/resolv.conf",
                "/run/systemd/resolve/stub-resolv.conf",
            ]
            .iter()
            .any(|p| {
                facts
                    .raw
                    .get(p)
                    .is_some_and(|f| f.state != FileState::Missing)
            });
        return if ran { None } else { Some(false) };
    };
    match state {
        "enabled" | "enabled-runtime" | "alias" | "static" | "indirect" | "generated"
        | "transient" => Some(true),
        "linked" | "linked-runtime" | "masked" | "masked-runtime" | "disabled" | "bad"
        | "not-found" => Some(false),
        _ => None,
    }
}

/// Whether the dhclient-script the dhclients `runs` (none of them NetworkManager's) run
/// writes /etc/resolv.conf at a lease.
pub(crate) fn writes(facts: &NodeFacts, runs: &[&DhclientRun]) -> Writes {
    let raw = &facts.raw;
    if let Some(why) = runs.iter().find_map(|r| other_script(r)) {
        return Writes::Unknown(vec![why]);
    }
    let script = Script::of(raw);
    let enabled = resolved_enabled(facts);
    let (hooks, mut notes) = sourced(raw, script, Hooks::Enter);
    let mut state = State::Script;
    for path in hooks {
        state = after(raw, &path, enabled, state);
    }
    if let State::Nothing(why) | State::Unsure(why) = &state
        && let Some(exit) = exit_to_resolved(raw, script, enabled)
    {
        // What a make_resolv_conf dnsfix cannot tell writes stays not known.
        return match (exit, &state) {
            (Ok(note), State::Nothing(_)) => Writes::Resolved(vec![why.clone(), note]),
            (Ok(note) | Err(note), _) => Writes::Unknown(vec![why.clone(), note]),
        };
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
        State::Resolved(why) => {
            notes.push(why);
            Writes::Resolved(notes)
        }
        State::Nothing(why) if script == Script::Other => Writes::Unknown(vec![
            why,
            "which dhclient-script runs here is not known (/etc/os-release names neither a Debian nor a Red Hat family): ISC's own client/scripts/linux sources that hook, the distribution's may not".to_owned(),
        ]),
        State::Nothing(why) => Writes::No(vec![why]),
        State::Unsure(why) | State::Unknown(why) => Writes::Unknown(vec![why]),
    }
}

/// Why what `run` writes is not the distribution's dhclient-script's to say: its `-sf`
/// names another script, whose hooks and `make_resolv_conf` (if any) dnsfix does not know.
fn other_script(run: &DhclientRun) -> Option<String> {
    let script = run.command.as_ref().ok()?.script.as_deref()?;
    if script.rsplit('/').next() == Some("dhclient-script") {
        return None;
    }
    Some(format!(
        "dhclient (pid {}) runs {} (-sf), not dhclient-script: what it writes is not known",
        run.pid,
        crate::text::escape(script)
    ))
}

/// Which hooks: those sourced before `make_resolv_conf`, or as the script exits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hooks {
    Enter,
    Exit,
}

/// The hooks of `which` kind `script` sources, in its order, and notes on those it passes
/// over. Exit hooks are read for Debian's script alone (the one whose distributions ship
/// them for systemd-resolved).
fn sourced(raw: &RawFacts, script: Script, which: Hooks) -> (Vec<String>, Vec<String>) {
    let (file, dir) = match (script, which) {
        (Script::Debian, Hooks::Enter) => (
            "/etc/dhcp/dhclient-enter-hooks",
            "/etc/dhcp/dhclient-enter-hooks.d",
        ),
        (Script::Debian, Hooks::Exit) => (
            "/etc/dhcp/dhclient-exit-hooks",
            "/etc/dhcp/dhclient-exit-hooks.d",
        ),
        (Script::Other, Hooks::Enter) => {
            ("/etc/dhclient-enter-hooks", "/etc/dhclient-enter-hooks.d")
        }
        (_, Hooks::Exit) => return (Vec::new(), Vec::new()),
        (Script::RedHat, Hooks::Enter) => {
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

/// Where the hook at `path` leaves `make_resolv_conf`, which the hooks before it left as
/// `state`; `enabled`: whether systemd-resolved is enabled ([`resolved_enabled`]). The last
/// definition that runs wins.
fn after(raw: &RawFacts, path: &str, enabled: Option<bool>, mut state: State) -> State {
    let Some(f) = raw.get(path) else {
        return state;
    };
    let shown = crate::text::escape(path);
    let text = match f.state {
        FileState::Present if !f.truncated => match f.text() {
            Some(t) => t,
            None => return state,
        },
        FileState::Present => {
            return State::Unknown(format!(
                "{shown} was not read in full: what it does to make_resolv_conf is not known"
            ));
        }
        FileState::Unreadable => {
            return State::Unknown(format!(
                "{shown} could not be read: what it does to make_resolv_conf is not known"
            ));
        }
        _ => return state,
    };
    let parsed = hook(&text);
    if parsed.unbalanced {
        return State::Unknown(format!(
            "{shown} does not parse (it ends inside a compound command, a quote or a $( )): sh refuses it, and what dhclient-script does then is not known"
        ));
    }
    if parsed.too_deep {
        return State::Unknown(format!(
            "{shown} nests compound commands deeper than {MAX_DEPTH}: dnsfix does not read it, and what it does to make_resolv_conf is not known"
        ));
    }
    for d in parsed.definitions {
        let at = format!("{shown}:{}", d.line);
        if d.resolved_guard {
            match enabled {
                Some(true) => {}
                Some(false) => continue,
                None => {
                    state = State::Unsure(format!(
                        "{at} redefines make_resolv_conf where systemd-resolved is enabled, and whether it is enabled here is not known"
                    ));
                    continue;
                }
            }
        }
        state = match (d.kind, d.nested) {
            (Kind::Resolvconf, _) => State::Resolvconf,
            (Kind::Resolved, _) => State::Resolved(format!(
                "{at} redefines make_resolv_conf to hand the lease's servers to systemd-resolved instead of writing /etc/resolv.conf"
            )),
            (Kind::Nothing, false) if d.resolved_guard => State::Nothing(format!(
                "{at} redefines make_resolv_conf to do nothing where systemd-resolved is enabled, as it is here: dhclient-script does not write /etc/resolv.conf"
            )),
            (Kind::Nothing, false) => State::Nothing(format!(
                "{at} redefines make_resolv_conf to do nothing: dhclient-script does not write /etc/resolv.conf"
            )),
            (Kind::Nothing, true) => State::Unsure(format!(
                "{at} redefines make_resolv_conf to do nothing, but inside a compound command (a condition, a case, a function): whether it runs is not known"
            )),
            (Kind::Empty, _) => State::Unknown(format!(
                "{at} defines make_resolv_conf with an empty body, which sh refuses (dash ends dhclient-script there, bash keeps the function it had): what is written is not known"
            )),
            (Kind::Mention, _) => State::Unsure(format!(
                "{at} names make_resolv_conf other than in a definition dnsfix reads: what dhclient-script writes then is not known"
            )),
            (Kind::Other, _) => State::Unsure(format!(
                "{at} redefines make_resolv_conf: what it writes is not known"
            )),
        };
    }
    state
}

/// Where an exit hook `script` sources hands the lease's servers to systemd-resolved
/// (`resolvectl dns`, `systemd-resolve --set-dns`, a redirection into its drop-in
/// directory: [`crate::facts::dhclient_hooks::HandOver`]), in run-parts' order: `Ok` with
/// its line where one surely does so here; else `Err` where one may (its guard hangs on
/// whether systemd-resolved is enabled, and that is not known; it sits in a branch, loop
/// or function whose running is not known), or an exit hook was not read or does not
/// parse; `None` where none does (a guarded one where systemd-resolved is not enabled
/// does not).
fn exit_to_resolved(
    raw: &RawFacts,
    script: Script,
    enabled: Option<bool>,
) -> Option<Result<String, String>> {
    let (hooks, _) = sourced(raw, script, Hooks::Exit);
    let mut maybe: Option<String> = None;
    for path in hooks {
        let Some(f) = raw.get(&path) else {
            continue;
        };
        let shown = crate::text::escape(&path);
        let text = match (f.state, f.truncated, f.text()) {
            (FileState::Present, false, Some(text)) => text,
            (FileState::Present | FileState::Unreadable, ..) => {
                maybe.get_or_insert(format!(
                    "{shown}, an exit hook, could not be read in full: whether it hands the lease's servers to systemd-resolved is not known"
                ));
                continue;
            }
            _ => continue,
        };
        let parsed = hook(&text);
        if parsed.unbalanced || parsed.too_deep {
            maybe.get_or_insert(format!(
                "{shown}, an exit hook, does not parse or nests compound commands deeper than {MAX_DEPTH}: whether it hands the lease's servers to systemd-resolved is not known"
            ));
            continue;
        }
        for h in parsed.hand_overs {
            let at = format!("{shown}:{}", h.line);
            match (h.resolved_guard, enabled, h.nested) {
                (true, Some(false), _) => {}
                (true, None, _) => {
                    maybe.get_or_insert(format!(
                        "{at}, an exit hook, hands the lease's servers to systemd-resolved where it is enabled, and whether it is enabled here is not known"
                    ));
                }
                (_, _, true) => {
                    maybe.get_or_insert(format!(
                        "{at}, an exit hook, hands the lease's servers to systemd-resolved inside a compound command (a branch, a loop, a function): whether it runs is not known"
                    ));
                }
                _ => {
                    return Some(Ok(format!(
                        "{at}, an exit hook dhclient-script runs after make_resolv_conf, hands the lease's servers to systemd-resolved whatever make_resolv_conf does"
                    )));
                }
            }
        }
    }
    maybe.map(Err)
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
    if global.is_none() {
        match env_peerdns(runs) {
            Ok(env) => global = env,
            Err(why) => return (None, vec![why]),
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

/// The `PEERDNS` dhclient puts in its script's environment (`-e PEERDNS=VALUE`, the last one),
/// where no file the script sources sets it: as `(where, value)`, none where no dhclient
/// passes one. `Err` where the dhclients pass different ones (or some none), or a command
/// line was not read.
fn env_peerdns(runs: &[&DhclientRun]) -> Result<Option<(String, Option<String>)>, String> {
    let mut seen: Vec<(u32, Option<String>)> = Vec::new();
    let mut unread = None;
    for run in runs {
        let Ok(command) = &run.command else {
            unread.get_or_insert(run.pid);
            continue;
        };
        let value = command
            .env
            .iter()
            .filter_map(|e| e.strip_prefix("PEERDNS="))
            .next_back()
            .map(str::to_owned);
        seen.push((run.pid, value));
    }
    let Some((pid, first)) = seen.first().cloned() else {
        return Ok(None);
    };
    if let (Some(other), Some(_)) = (unread, &first) {
        return Err(format!(
            "dhclient (pid {pid}) passes PEERDNS to its script (-e PEERDNS=), and the command line of dhclient (pid {other}) was not read: which PEERDNS holds for which interface is not known"
        ));
    }
    if seen.iter().any(|(_, v)| *v != first) {
        return Err(
            "the dhclients here pass different PEERDNS values to their script (-e PEERDNS=): which one holds for which interface is not known".to_owned(),
        );
    }
    Ok(first.map(|v| (format!("dhclient (pid {pid}), its -e option"), Some(v))))
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
        Writes::No(_) | Writes::Resolved(_) => "no",
        Writes::Unknown(_) => "unknown",
    }
}
