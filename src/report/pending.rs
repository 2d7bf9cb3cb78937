//! [`Pending`]: a sink that passes every event on and keeps which hosts have finished, so
//! a signal that ends dnsfix can say what it stopped ("check stopped with 2 of 5 hosts
//! pending (in progress: node3; not started: node4, node5)"). It never prints by itself.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use super::{Event, EventSink, escape};

/// At most this many host names per list; the rest are counted.
const MAX_NAMED: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Started,
    Finished,
}

/// The run's hosts (in inventory order) and how far each has got.
pub struct Pending {
    command: &'static str,
    hosts: Vec<String>,
    states: Mutex<HashMap<String, State>>,
    inner: Box<dyn EventSink>,
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("command", &self.command)
            .field("hosts", &self.hosts.len())
            .finish_non_exhaustive()
    }
}

impl Pending {
    pub fn new(command: &'static str, hosts: Vec<String>, inner: Box<dyn EventSink>) -> Pending {
        Pending {
            command,
            hosts,
            states: Mutex::new(HashMap::new()),
            inner,
        }
    }

    /// What to say when signal exit code `code` (130, 143, 129) ends the run now.
    pub fn message(&self, code: i32) -> String {
        let how = match code {
            143 => "terminated",
            129 => "hung up",
            _ => "interrupted",
        };
        let states = self.states.lock().unwrap_or_else(PoisonError::into_inner);
        let (mut running, mut waiting) = (Vec::new(), Vec::new());
        for host in &self.hosts {
            match states.get(host) {
                Some(State::Finished) => {}
                Some(State::Started) => running.push(host.as_str()),
                None => waiting.push(host.as_str()),
            }
        }
        let pending = running.len() + waiting.len();
        if pending == 0 {
            return format!(
                "dnsfix: {how}: {} stopped after every host had answered",
                self.command
            );
        }
        let mut parts = Vec::new();
        if !running.is_empty() {
            parts.push(format!("in progress: {}", names(&running)));
        }
        if !waiting.is_empty() {
            parts.push(format!("not started: {}", names(&waiting)));
        }
        format!(
            "dnsfix: {how}: {} stopped with {pending} of {} pending ({}); no report was printed",
            self.command,
            crate::text::count(self.hosts.len(), "host"),
            parts.join("; ")
        )
    }
}

/// Host names as one escaped line, the first [`MAX_NAMED`] named.
fn names(hosts: &[&str]) -> String {
    let mut text = hosts
        .iter()
        .take(MAX_NAMED)
        .map(|h| escape(h).into_owned())
        .collect::<Vec<_>>()
        .join(", ");
    if hosts.len() > MAX_NAMED {
        text.push_str(&format!(" and {} more", hosts.len() - MAX_NAMED));
    }
    text
}

impl EventSink for Pending {
    fn event(&self, event: Event) {
        let state = match &event {
            Event::HostStarted { host } => Some((host, State::Started)),
            Event::FactsGathered { host, .. }
            | Event::HostFailed { host, .. }
            | Event::HostDone { host, .. } => Some((host, State::Finished)),
            Event::HostConnected { .. } | Event::Warning { .. } => None,
        };
        if let Some((host, state)) = state {
            self.states
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(host.clone(), state);
        }
        self.inner.event(event);
    }

    fn finish(&self) {
        self.inner.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(hosts: &[&str]) -> Pending {
        Pending::new(
            "check",
            hosts.iter().map(|h| (*h).to_owned()).collect(),
            Box::new(crate::events::Silent),
        )
    }

    #[test]
    fn names_the_hosts_in_progress_and_not_started_in_inventory_order() {
        let p = pending(&["a", "b\nfake", "c", "d"]);
        p.event(Event::HostStarted { host: "a".into() });
        p.event(Event::HostStarted { host: "c".into() });
        p.event(Event::FactsGathered {
            host: "a".into(),
            elapsed: std::time::Duration::ZERO,
        });
        assert_eq!(
            p.message(130),
            "dnsfix: interrupted: check stopped with 3 of 4 hosts pending (in progress: c; \
             not started: b\\nfake, d); no report was printed"
        );
        // A second step (verify's queries after its gather) starts a finished host again.
        for host in ["b\nfake", "c", "d"] {
            p.event(Event::HostFailed {
                host: host.into(),
                kind: "refused",
                error: String::new(),
            });
        }
        assert_eq!(
            p.message(143),
            "dnsfix: terminated: check stopped after every host had answered"
        );
        p.event(Event::HostStarted { host: "d".into() });
        assert!(
            p.message(129)
                .contains("1 of 4 hosts pending (in progress: d)")
        );
    }

    #[test]
    fn a_long_list_is_cut_and_counted() {
        let hosts: Vec<String> = (1..=12).map(|i| format!("n{i}")).collect();
        let p = pending(&hosts.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(
            p.message(130)
                .contains("(not started: n1, n2, n3, n4, n5, n6, n7, n8, n9, n10 and 2 more)"),
            "{}",
            p.message(130)
        );
    }
}
