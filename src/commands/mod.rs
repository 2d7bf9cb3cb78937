//! The commands: one module per subcommand, each with one entry point, `run`, that reads
//! top to bottom (what is read before any host is contacted, the [`Context`], the work,
//! the report, the exit code). This layer alone prints results, asks questions and
//! decides exit codes; the engine modules (`gather`, `diagnose`, `plan`, `apply`) compute
//! and emit events, never more.
//!
//! Code map:
//!
//! | command | module | does |
//! |---|---|---|
//! | `dnsfix facts` | [`facts`] | gather, print the facts |
//! | `dnsfix check` | [`check`] | gather, diagnose, print the findings |
//! | `dnsfix plan` | [`plan`] | gather, plan with the playbooks, print (and save) the plan |
//! | `dnsfix show` | [`show`] | render a saved plan: text, Markdown, JSON (no inventory, no host) |
//! | `dnsfix apply` | [`apply`] | apply a saved plan, or a fresh one after a y/N |
//! | `dnsfix rollback` | [`rollback`] | undo what an apply run wrote |
//! | `dnsfix verify` | [`verify`] | gather, then ask each node's DNS paths real queries |
//! | `dnsfix explain` | [`explain`] | what a finding means (no inventory, no host) |
//! | `dnsfix inventory` | [`inventory`] | the inventory as dnsfix reads it (no host) |
//! | `dnsfix completions` | [`completions`] | a shell completion script (no inventory, no host) |
//! | `dnsfix man` | [`man`] | the man pages, for packagers (no inventory, no host) |
//!
//! [`context`] builds what the commands that reach hosts share; [`exit`] holds the exit
//! codes. Commands that read playbooks or a saved plan do so before building the
//! context, so a typo there is exit 1 before the inventory is even read.

pub mod apply;
pub mod check;
pub mod completions;
pub mod context;
pub mod explain;
pub mod facts;
pub mod interrupt;
pub mod inventory;
pub mod man;
pub mod plan;
pub mod rollback;
pub mod show;
pub mod verify;

use std::io::{BufRead, IsTerminal, Write};

pub use context::Context;

use crate::error::Error;

/// Exit codes users and scripts rely on (DESIGN.md).
pub mod exit {
    pub const OK: u8 = 0;
    /// Bad input or an internal error, always with a message.
    pub const BAD_INPUT: u8 = 1;
    pub const FINDINGS: u8 = 2;
    pub const UNREACHABLE: u8 = 3;
    pub const STALE: u8 = 4;
}

/// A host that could not be reached (or gathered) takes precedence over `code`.
/// `path` made absolute (not resolved) for a record read from elsewhere later.
fn absolute_display(path: &std::path::Path) -> String {
    std::path::absolute(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

fn unless_unreachable(unreachable: bool, code: u8) -> u8 {
    if unreachable { exit::UNREACHABLE } else { code }
}

/// Writes a whole report to stdout, made safe for a terminal first.
fn print(rendered: &str) -> Result<(), Error> {
    // A signal is ending dnsfix (and its ssh processes): what would be printed is a run it
    // cut off, and the signal decides the exit code.
    if crate::transport::children::ending() {
        crate::transport::children::wait_for_exit();
    }
    std::io::stdout()
        .lock()
        .write_all(crate::report::terminal_text(rendered).as_bytes())?;
    Ok(())
}

/// From here on, the first Ctrl-C (SIGINT) stops the run gently: `stop` is set, so no host
/// starts any more, the hosts in progress finish (`what`: their writes, restarts and health
/// gates), and the run is recorded as usual (the hosts not started are `untouched`). The
/// second (or a SIGTERM, a SIGHUP) ends dnsfix at once, exit 130, with the run record as it
/// was saved before the first host (its hosts `interrupted`: rollback still finds what
/// they wrote), and the ssh processes it started with it ([`interrupt`]). Armed once the
/// y/N question is answered, so a Ctrl-C at the question ends dnsfix as ever.
fn stop_on_interrupt(
    stop: &crate::apply::Stop,
    sink: &std::sync::Arc<dyn crate::events::EventSink>,
    what: &'static str,
) {
    let stop = stop.clone();
    let sink = std::sync::Arc::clone(sink);
    interrupt::gentle(
        Box::new(move || {
            stop.request();
            sink.event(crate::events::Event::Warning {
                message: format!(
                    "interrupted: the hosts in progress finish their {what}; no other host \
                     starts (Ctrl-C again to stop at once)"
                ),
            });
        }),
        "dnsfix: stopped at once; the hosts in progress are recorded as interrupted \
         (`dnsfix check` says where a restart is due; rollback finds what they wrote)",
    );
}

/// Asks "y/N" on the terminal. Without a terminal nothing is asked and the answer is no,
/// with `without` saying what to do instead. Any answer but yes says `declined` ("nothing
/// applied"), and so does a Ctrl-C at the question, which ends dnsfix as ever (exit 130).
fn confirm(question: &str, without: &str, declined: &'static str) -> Result<bool, Error> {
    // A Ctrl-C at the question names no host (all have answered): it says what the answer
    // no says, on a line of its own after the question's.
    interrupt::on_exit(Box::new(move |_| format!("\n{declined}")));
    if !std::io::stdin().is_terminal() {
        return Err(Error::Usage(without.into()));
    }
    eprint!("{question} [y/N] ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    let yes = matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes");
    if !yes {
        eprintln!("{declined}");
    }
    Ok(yes)
}
