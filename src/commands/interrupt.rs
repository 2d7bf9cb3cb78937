//! How dnsfix ends on a signal: SIGINT (Ctrl-C), SIGTERM (`kill`, a service manager) and
//! SIGHUP (the terminal gone).
//!
//! The ssh processes dnsfix starts are in process groups of their own (so the terminal's
//! Ctrl-C does not cut a node script off: apply decides what stops), which no signal to
//! dnsfix reaches. So dnsfix takes these signals itself, on a thread of its own (answering
//! while the main thread waits on the y/N question too), and ends through
//! [`crate::transport::children::exit`], which ends its ssh processes and the run's own
//! masters first: none outlives dnsfix. The exit code is the shell's for the signal
//! (128 + its number: 130, 143, 129), as when the signal ended the process.
//!
//! Apply and rollback arm a gentle stop ([`gentle`]): the first Ctrl-C calls it instead,
//! and dnsfix goes on; the next, or a SIGTERM or SIGHUP, ends it at once with the message
//! they gave. Otherwise a signal ends dnsfix at once, saying what [`on_exit`] was given:
//! the hosts still pending, for the commands that reach hosts (set up with their context).

use std::io::Write as _;
use std::sync::{Mutex, Once, PoisonError};

use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::error::Error;

/// The gentle stop armed now: what the first Ctrl-C does, and what dnsfix says when it
/// ends at once after all.
struct Gentle {
    first: Option<Box<dyn FnOnce() + Send>>,
    at_once: &'static str,
}

static GENTLE: Mutex<Option<Gentle>> = Mutex::new(None);

/// What dnsfix says when a signal ends it with no gentle stop armed, given the exit code
/// (130, 143, 129): what the run was doing, such as the hosts still pending.
type Say = Box<dyn Fn(i32) -> String + Send>;

static SAY: Mutex<Option<Say>> = Mutex::new(None);

/// From now on, a signal that ends dnsfix with no gentle stop armed says `say`'s text on
/// stderr first (a `check` waiting on a node that hangs names the hosts it stopped on).
pub fn on_exit(say: Say) {
    *SAY.lock().unwrap_or_else(PoisonError::into_inner) = Some(say);
}

/// From now on, the first Ctrl-C calls `first` instead of ending dnsfix; dnsfix says
/// `at_once` when it ends on a signal after all.
pub fn gentle(first: Box<dyn FnOnce() + Send>, at_once: &'static str) {
    *GENTLE.lock().unwrap_or_else(PoisonError::into_inner) = Some(Gentle {
        first: Some(first),
        at_once,
    });
}

/// Takes SIGINT, SIGTERM and SIGHUP from here on (once per process). The handlers are in
/// place when this returns: a signal from then on ends what dnsfix started.
pub fn watch() -> Result<(), Error> {
    static WATCHING: Once = Once::new();
    let mut result = Ok(());
    WATCHING.call_once(|| result = start());
    result
}

fn start() -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .map_err(Error::Runtime)?;
    let signals = {
        let _entered = runtime.enter();
        Signals {
            interrupt: signal(SignalKind::interrupt()).map_err(Error::Runtime)?,
            terminate: signal(SignalKind::terminate()).map_err(Error::Runtime)?,
            hangup: signal(SignalKind::hangup()).map_err(Error::Runtime)?,
        }
    };
    std::thread::Builder::new()
        .name("dnsfix-signals".into())
        .spawn(move || runtime.block_on(listen(signals)))
        .map_err(Error::Runtime)?;
    Ok(())
}

struct Signals {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
}

async fn listen(mut signals: Signals) {
    loop {
        let code = tokio::select! {
            _ = signals.interrupt.recv() => 130,
            _ = signals.terminate.recv() => 143,
            _ = signals.hangup.recv() => 129,
        };
        let mut gentle = GENTLE.lock().unwrap_or_else(PoisonError::into_inner);
        if code == 130
            && let Some(first) = gentle.as_mut().and_then(|g| g.first.take())
        {
            drop(gentle);
            // This thread is the only one that takes these signals (tokio keeps its
            // handlers for good): nothing may end it. `first` reports the stop, and a
            // report to a stderr that is gone (the terminal closed, `| tee` killed by the
            // same Ctrl-C) must not take the next signal's way out with it.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(first));
            continue;
        }
        // Not eprintln!, which panics where stderr is gone.
        if let Some(g) = gentle.as_ref() {
            let _ = writeln!(std::io::stderr(), "{}", g.at_once);
        } else if let Some(say) = SAY.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
            // As `first` above: a panic in it must not keep dnsfix from ending.
            if let Ok(text) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| say(code))) {
                // On a terminal, the progress bar's line is cleared first; not a line the
                // text leaves standing (it starts with a newline: the y/N question's).
                let clear = if !text.starts_with('\n')
                    && std::io::IsTerminal::is_terminal(&std::io::stderr())
                {
                    "\r\x1b[2K"
                } else {
                    ""
                };
                let _ = writeln!(std::io::stderr(), "{clear}{text}");
            }
        }
        drop(gentle);
        crate::transport::children::exit(code);
    }
}
