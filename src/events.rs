//! What the engine tells the user about while it works: events the orchestrators
//! (gather, apply, rollback, verify) emit, and the sink they go to. The sinks themselves
//! (a progress bar, plain lines) live in `report`; the engine depends on this module only,
//! never on `report`.

use std::time::Duration;

/// What the engine tells the user about while it works.
#[derive(Debug, Clone)]
pub enum Event {
    HostStarted {
        host: String,
    },
    HostConnected {
        host: String,
    },
    FactsGathered {
        host: String,
        elapsed: Duration,
    },
    /// A host that could not be reached or gathered: every report calls it unreachable,
    /// with `kind` (`refused`, `timeout`, `auth`, `script_failed`, ...).
    HostFailed {
        host: String,
        kind: &'static str,
        error: String,
    },
    Warning {
        message: String,
    },
    /// A host finished a step other than gathering (apply, rollback), with a short outcome.
    HostDone {
        host: String,
        message: String,
    },
}

pub trait EventSink: Send + Sync {
    fn event(&self, event: Event);
    /// Called once when the work is over, before results are printed.
    fn finish(&self) {}
}

/// A sink that shows nothing: for a second look at hosts already reported.
#[derive(Debug)]
pub struct Silent;

impl EventSink for Silent {
    fn event(&self, _event: Event) {}
}
