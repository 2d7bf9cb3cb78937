//! Reporting: the engine emits [`Event`]s; a terminal sink draws an indicatif progress
//! bar, a plain sink writes one line per host event (pipes, CI). Both write to stderr;
//! results go to stdout through the renderers in the submodules.

/// `writeln!` for one line of a text report: what is formatted into it (a host name, a
/// finding's evidence, a node's symlink target) is shown escaped, so a newline in node text
/// cannot start a line that reads as the report's own.
macro_rules! escaped_line {
    ($out:expr, $($arg:tt)*) => {{
        $out.push_str(&crate::text::escape(&format!($($arg)*)));
        $out.push('\n');
    }};
}

pub mod apply;
pub mod check;
pub mod explain;
pub mod facts;
pub mod inventory;
pub mod pending;
pub mod verify;

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::gather::HostError;

/// Version of the JSON documents (`facts`, `check`); bumped on any incompatible change.
pub const FORMAT_VERSION: u32 = 1;

/// What opens every JSON document dnsfix prints.
#[derive(Debug, Serialize)]
pub struct Header {
    pub format_version: u32,
    pub dnsfix_version: &'static str,
    pub inventory: Option<String>,
}

impl Header {
    pub fn new(inventory: Option<&std::path::Path>) -> Header {
        Header {
            format_version: FORMAT_VERSION,
            dnsfix_version: env!("CARGO_PKG_VERSION"),
            inventory: inventory.map(|p| p.display().to_string()),
        }
    }
}

/// A host that could not be gathered, as JSON reports show it.
#[derive(Debug, Serialize)]
pub struct ErrorEntry {
    pub kind: &'static str,
    pub message: String,
}

impl From<&HostError> for ErrorEntry {
    fn from(e: &HostError) -> ErrorEntry {
        ErrorEntry {
            kind: e.kind(),
            message: e.to_string(),
        }
    }
}

pub use crate::events::{Event, EventSink};
pub use crate::text::{escape, natural_cmp, pretty_json, terminal_text};

/// Chooses the sink: a progress bar on a terminal, plain lines otherwise.
pub fn sink_for(total: usize, progress: bool) -> Box<dyn EventSink> {
    if progress && std::io::stderr().is_terminal() {
        Box::new(ProgressSink::new(total))
    } else {
        Box::new(PlainSink::new(total))
    }
}

/// A host that could not be reached or gathered, as stderr shows it while the run goes on:
/// the words the report on stdout uses for it (`facts`, `check`), so one state has one name.
fn unreachable_line(host: &str, kind: &str, error: &str) -> String {
    format!("{host}: UNREACHABLE ({kind}): {error}")
}

/// Without a terminal (CI, cron, a pipe), at fleet scale: failures and warnings as they
/// happen, one line each, then one summary line; hosts that went well are only counted.
#[derive(Debug)]
pub struct PlainSink {
    total: usize,
    started: std::time::Instant,
    tally: Mutex<Tally>,
}

#[derive(Debug, Default)]
struct Tally {
    gathered: usize,
    unreachable: usize,
    /// Outcomes of the step after gathering (apply, rollback), by word, in first-seen order.
    done: Vec<(String, usize)>,
}

impl PlainSink {
    pub fn new(total: usize) -> PlainSink {
        PlainSink {
            total,
            started: std::time::Instant::now(),
            tally: Mutex::new(Tally::default()),
        }
    }

    fn print(line: &str) {
        let _ = writeln!(std::io::stderr(), "{}", escape(line));
    }
}

/// A signal is ending dnsfix ([`crate::transport::children::ending`]): what fails from
/// now on failed because dnsfix killed its ssh, not because a node is unreachable, and
/// the signal's own message ("check stopped with 2 of 5 hosts pending") is the last word.
fn cut_off() -> bool {
    crate::transport::children::ending()
}

impl EventSink for PlainSink {
    fn event(&self, event: Event) {
        if cut_off() {
            return;
        }
        let Ok(mut tally) = self.tally.lock() else {
            return;
        };
        match event {
            Event::FactsGathered { .. } => tally.gathered += 1,
            Event::HostFailed { host, kind, error } => {
                tally.unreachable += 1;
                PlainSink::print(&unreachable_line(&host, kind, &error));
            }
            Event::Warning { message } => PlainSink::print(&format!("warning: {message}")),
            Event::HostDone { host, message } => {
                // "applied", or "failed: why": a host with a reason is worth a line.
                let (word, why) = match message.split_once(": ") {
                    Some((word, why)) => (word.to_owned(), Some(why)),
                    None => (message.clone(), None),
                };
                if why.is_some() {
                    PlainSink::print(&format!("{host}: {message}"));
                }
                match tally.done.iter_mut().find(|(w, _)| *w == word) {
                    Some((_, n)) => *n += 1,
                    None => tally.done.push((word, 1)),
                }
            }
            Event::HostStarted { .. } | Event::HostConnected { .. } => {}
        }
    }

    fn finish(&self) {
        if cut_off() {
            return;
        }
        let Ok(tally) = self.tally.lock() else {
            return;
        };
        let seconds = self.started.elapsed().as_secs_f64();
        let hosts = if self.total == 1 { "host" } else { "hosts" };
        if tally.gathered + tally.unreachable > 0 {
            let mut line = format!(
                "facts gathered from {} of {} {hosts} in {seconds:.2}s",
                tally.gathered, self.total
            );
            if tally.unreachable > 0 {
                line.push_str(&format!("; {} unreachable", tally.unreachable));
            }
            PlainSink::print(&line);
        }
        if !tally.done.is_empty() {
            let counts: Vec<String> = tally
                .done
                .iter()
                .map(|(word, n)| format!("{n} {word}"))
                .collect();
            PlainSink::print(&format!(
                "{} {hosts} in {seconds:.2}s: {}",
                self.total,
                counts.join(", ")
            ));
        }
    }
}

/// A progress bar counting finished hosts; failures are printed above it as they happen.
#[derive(Debug)]
pub struct ProgressSink {
    bar: ProgressBar,
}

impl ProgressSink {
    fn new(total: usize) -> ProgressSink {
        let bar = ProgressBar::new(total as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed}] {bar:30} {pos}/{len} hosts, ETA {eta} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        ProgressSink { bar }
    }
}

impl EventSink for ProgressSink {
    fn event(&self, event: Event) {
        if cut_off() {
            return;
        }
        match event {
            Event::HostStarted { host } | Event::HostConnected { host } => {
                self.bar.set_message(escape(&host).into_owned())
            }
            Event::FactsGathered { .. } => self.bar.inc(1),
            Event::HostFailed { host, kind, error } => {
                self.bar
                    .println(escape(&unreachable_line(&host, kind, &error)));
                self.bar.inc(1);
            }
            Event::Warning { message } => self.bar.println(escape(&format!("warning: {message}"))),
            Event::HostDone { host, message } => {
                self.bar.println(escape(&format!("{host}: {message}")));
                self.bar.inc(1);
            }
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_line_escape_also_shows_reordering_characters() {
        assert_eq!(
            super::escape("node1\u{202e}lmth.exe"),
            "node1\\u{202e}lmth.exe"
        );
        assert_eq!(super::escape("a\nb"), "a\\nb");
        assert_eq!(super::escape("plain"), "plain");
    }

    #[test]
    fn host_names_sort_naturally() {
        let mut names = vec!["node10", "node2", "node1", "db", "node02", "node1a", "node"];
        names.sort_by(|a, b| super::natural_cmp(a, b));
        assert_eq!(
            names,
            ["db", "node", "node1", "node1a", "node02", "node2", "node10"]
        );
    }

    /// Node text with DEL, a C1 control or a bidirectional override: the JSON report is
    /// still JSON, reads back to the same text, and a terminal gets it unchanged.
    #[test]
    fn json_reports_escape_what_serde_json_leaves_raw() {
        let hostile = "# x\u{7f} \u{9b}31m \u{202e}evil\u{1b}[2J\ttab";
        let doc = serde_json::json!({ "comment": hostile, "list": [hostile] });
        let text = super::pretty_json(&doc);
        assert!(text.ends_with("}\n"), "{text}");
        assert!(
            text.contains("\\u007f") && text.contains("\\u009b") && text.contains("\\u202e"),
            "{text}"
        );
        assert_eq!(super::terminal_text(&text), text);
        let back: serde_json::Value =
            serde_json::from_str(&super::terminal_text(&text)).expect("still JSON");
        assert_eq!(back, doc);
    }

    #[test]
    fn terminal_text_keeps_layout_and_escapes_the_rest() {
        let hostile = "nameserver 1.1.1.1\x1b]52;c;ZXZpbA==\x07\r== node2\tok\u{202e}x\n";
        let safe = super::terminal_text(hostile);
        assert_eq!(
            safe,
            "nameserver 1.1.1.1\\u{1b}]52;c;ZXZpbA==\\u{7}\\r== node2\tok\\u{202e}x\n"
        );
        assert!(
            !safe
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t')
        );
    }
}
