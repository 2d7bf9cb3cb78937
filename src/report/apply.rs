//! The text report of an apply or rollback run: one block per host that was touched or
//! refused, one line for the rest, and a summary with the run id to roll back with.

use std::fmt::Write as _;

use crate::apply::record::RunRecord;
use crate::apply::{HostOutcome, HostResult, StepOutcome, outcome_word};
use crate::plan::model::InventoryChange;

pub fn text(
    record: &RunRecord,
    inventory_changes: &[InventoryChange],
    update_inventory: bool,
    saved: Option<&std::path::Path>,
) -> String {
    let mut out = String::new();
    let rollback = record.command == "rollback";
    let mut quiet: Vec<(&'static str, Vec<&str>)> = Vec::new();
    for host in &record.hosts {
        if listed_only(host) {
            let word = if rollback {
                "nothing to roll back"
            } else if host.outcome == HostOutcome::Unchanged {
                "already applied, nothing to do"
            } else {
                "nothing planned"
            };
            match quiet.iter_mut().find(|(w, _)| *w == word) {
                Some((_, hosts)) => hosts.push(&host.host),
                None => quiet.push((word, vec![&host.host])),
            }
            continue;
        }
        host_block(&mut out, host, rollback);
    }
    for (word, hosts) in quiet {
        let _ = writeln!(out, "{word}: {}", hosts.join(", "));
    }
    if !record.cluster_updates.is_empty() {
        // From the plan file, the run record or the cluster: shown escaped.
        let esc = |s: &str| crate::text::escape(s).into_owned();
        let via = esc(&record.cluster_updates[0].via);
        let _ = writeln!(out, "\n== cluster (kubectl on {via})");
        for update in &record.cluster_updates {
            let _ = write!(
                out,
                "  {:<8} kube-system/configmap/{}/{}",
                esc(&update.outcome),
                esc(&update.configmap),
                esc(&update.key)
            );
            if !update.message.is_empty() {
                let _ = write!(out, ": {}", esc(&update.message));
            }
            out.push('\n');
        }
    }
    if !record.inventory_updates.is_empty() {
        let _ = writeln!(out, "\n== inventory");
        for update in &record.inventory_updates {
            let _ = write!(out, "  {:<8} {}", update.outcome, update.path);
            if !update.message.is_empty() {
                let _ = write!(out, ": {}", update.message);
            }
            out.push('\n');
        }
    } else if !inventory_changes.is_empty() && !update_inventory && !rollback {
        let _ = writeln!(
            out,
            "\nThe inventory was not updated ({} file{}): without --update-inventory the next \
             Kubespray run undoes these fixes.",
            inventory_changes.len(),
            if inventory_changes.len() == 1 {
                ""
            } else {
                "s"
            }
        );
    }
    out.push('\n');
    let _ = writeln!(out, "{}", summary(record));
    if let Some(path) = saved {
        let _ = writeln!(out, "run recorded in {}", path.display());
    }
    // With the run's inventory: without it a rollback or a plan would not find the hosts.
    let inventory = record
        .inventory
        .as_deref()
        .map(|i| format!("-i {} ", crate::node_script::quote(i)))
        .unwrap_or_default();
    if !rollback
        && (record
            .hosts
            .iter()
            .any(crate::apply::rollback::may_have_written)
            || record
                .cluster_updates
                .iter()
                .any(crate::apply::configmaps::may_have_written))
    {
        let _ = writeln!(
            out,
            "to undo it: dnsfix rollback {inventory}{}",
            record.run_id
        );
    }
    let stale: Vec<&str> = record
        .hosts
        .iter()
        .filter(|h| h.outcome == HostOutcome::Stale)
        .map(|h| h.host.as_str())
        .collect();
    if !rollback && !stale.is_empty() {
        // The plan's changes were made from facts these nodes no longer have: only a plan
        // made from what they have now can say what to write there.
        let _ = writeln!(
            out,
            "the plan is stale for {}: make a new one: dnsfix plan {inventory}--limit {} -o PLAN, then dnsfix apply PLAN",
            crate::text::count(stale.len(), "host"),
            crate::node_script::quote(&stale.join(","))
        );
    }
    out
}

/// A host with nothing done and nothing to say: one name on a line with the others.
fn listed_only(host: &HostResult) -> bool {
    matches!(
        host.outcome,
        HostOutcome::NothingPlanned | HostOutcome::Unchanged
    ) && host.error.is_none()
        && host.notes.is_empty()
        && host.blocked.is_empty()
}

fn host_block(out: &mut String, host: &HostResult, rollback: bool) {
    let word = if rollback {
        crate::apply::rollback::rollback_word(host.outcome)
    } else {
        outcome_word(host.outcome)
    };
    let mut head = format!("== {}: {word}", host.host);
    if matches!(
        host.outcome,
        HostOutcome::Stale | HostOutcome::Locked | HostOutcome::Untouched
    ) && !crate::apply::rollback::wrote(host)
    {
        head.push_str(" (nothing written)");
    }
    let _ = writeln!(out, "{head}");
    // The error, the stale facts, the steps' and handlers' messages carry text from the
    // node and the cluster (a pod's waiting reason, a unit's journal): shown escaped, each
    // on its own line, so none can move the cursor or pass for a line of the report.
    if let Some(error) = &host.error {
        let _ = writeln!(out, "    {}", super::escape(error));
    }
    for line in &host.stale {
        let _ = writeln!(out, "    {}", super::escape(line));
    }
    for step in &host.steps {
        let mut line = format!("    {:<9} {}", step.outcome, step.target);
        let repeated = host
            .error
            .as_deref()
            .is_some_and(|e| e.contains(step.message.trim()));
        if !step.message.is_empty() && step.outcome != StepOutcome::Stale && !repeated {
            let _ = write!(line, ": {}", step.message.lines().next().unwrap_or(""));
        }
        let _ = writeln!(out, "{}", super::escape(&line));
    }
    for handler in &host.handlers {
        let verb = handler.action.verb();
        let state = if handler.healthy {
            "healthy"
        } else {
            "UNHEALTHY"
        };
        let mut head = format!("    {verb:<9} {}: {state}", handler.unit);
        // The message, then (an unhealthy unit's) last lines of its journal.
        let mut lines = handler.message.lines();
        if let Some(first) = lines.next().filter(|l| !l.is_empty()) {
            let _ = write!(head, ": {first}");
        }
        let _ = writeln!(out, "{}", super::escape(&head));
        for line in lines {
            let _ = writeln!(out, "              | {}", super::escape(line));
        }
    }
    // The node's DNS pods, deleted through the cluster's API and replaced.
    for pod in &host.pods {
        let word = match (pod.ok, pod.kept) {
            (true, _) => "recreated",
            (false, true) => "KEPT",
            (false, false) => "NOT READY",
        };
        let line = format!("    {word:<9} pod {}: {}", pod.shown(), pod.message);
        let _ = writeln!(out, "{}", super::escape(&line));
    }
    for note in &host.notes {
        let _ = writeln!(out, "{}", super::escape(&format!("    note      {note}")));
    }
    if !rollback {
        for blocked in &host.blocked {
            let _ = writeln!(
                out,
                "{}",
                super::escape(&format!("    BLOCKED   {blocked}"))
            );
        }
    }
    if let Some(verified) = &host.verified
        && !rollback
    {
        if !verified.fixed.is_empty() {
            let _ = writeln!(out, "    fixed     {}", verified.fixed.join(", "));
        }
        if !verified.remaining.is_empty() {
            let _ = writeln!(out, "    REMAINING {}", verified.remaining.join(", "));
        }
        if !verified.new.is_empty() {
            let _ = writeln!(
                out,
                "    NEW       {}: failing after the changes, not before them (dnsfix check; dnsfix explain ID)",
                verified.new.join(", ")
            );
        }
        // The verify queries, one line per DNS path asked from the node.
        for p in &verified.dns {
            let what = format!(
                "{} {} ({})",
                p.probe.path.word(),
                p.probe.server,
                p.probe.name
            );
            let line = match (&p.reason, p.ok) {
                (_, true) => format!(
                    "    dns       {what}: {} in {} ms",
                    p.rcode.as_deref().unwrap_or("answered"),
                    p.latency_ms
                ),
                (Some(why), false) => format!("    DNS FAILS {what}: {why}"),
                (None, false) => format!("    DNS FAILS {what}"),
            };
            let _ = writeln!(out, "{}", super::escape(&line));
        }
    }
    out.push('\n');
}

fn summary(record: &RunRecord) -> String {
    let count = |outcome: HostOutcome| record.hosts.iter().filter(|h| h.outcome == outcome).count();
    let mut parts = Vec::new();
    let rollback = record.command == "rollback";
    let (verb, unchanged) = if rollback {
        ("rolled back", "with nothing to roll back")
    } else {
        ("applied", "already in place")
    };
    for (outcome, word) in [
        (HostOutcome::Applied, verb),
        (HostOutcome::Unchanged, unchanged),
        (HostOutcome::Stale, "stale"),
        (HostOutcome::Locked, "locked"),
        (HostOutcome::Failed, "failed"),
        (HostOutcome::Untouched, "untouched"),
        (HostOutcome::NotPlanned, "not planned"),
        (HostOutcome::Pending, "interrupted"),
    ] {
        let n = count(outcome);
        if n > 0 {
            parts.push(format!("{n} {word}"));
        }
    }
    let what = if record.command == "rollback" {
        format!(
            "rollback {} of run {}",
            record.run_id,
            record.rolls_back.as_deref().unwrap_or("?")
        )
    } else {
        format!("run {}", record.run_id)
    };
    let hosts = crate::text::count(record.hosts.len(), "host");
    // A host whose plan could not fix everything fails the run whatever was applied.
    let blocked = record
        .hosts
        .iter()
        .filter(|h| !h.blocked.is_empty())
        .count();
    let blocked = if blocked > 0 && !rollback {
        format!(
            "; {} with fixes the plan could not make (BLOCKED above)",
            crate::text::count(blocked, "host")
        )
    } else {
        String::new()
    };
    if record.hosts.is_empty() {
        // Not "nothing to do on 0 hosts": the selection (`--limit`, the inventory given)
        // took none of the hosts of the plan, or of the run rolled back.
        let of = if rollback { "the run" } else { "the plan" };
        format!("{what}: no host of {of} was selected, nothing done")
    } else if parts.is_empty() {
        format!("{what}: nothing to do on {hosts}{blocked}")
    } else {
        format!("{what}: {} of {hosts}{blocked}", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A newcomer's walk: "1 applied of 1 hosts", and a rollback counted as "rollback
    /// applied".
    #[test]
    fn the_last_line_counts_one_host_as_one() {
        let record = |command: &str, outcomes: &[&str]| -> RunRecord {
            let hosts: Vec<serde_json::Value> = outcomes
                .iter()
                .enumerate()
                .map(|(i, outcome)| {
                    serde_json::json!({"host": format!("n{i}"), "outcome": outcome,
                        "planned": [], "planned_handlers": []})
                })
                .collect();
            serde_json::from_value(serde_json::json!({
                "kind": "dnsfix-run", "format_version": 1, "dnsfix_version": "0",
                "run_id": "r2", "command": command, "started": "", "finished": "",
                "inventory": null, "plan_file": null, "plan_created": "",
                "rolls_back": "r1", "hosts": hosts,
            }))
            .expect("a run record")
        };
        assert_eq!(
            summary(&record("apply", &["applied"])),
            "run r2: 1 applied of 1 host"
        );
        // A stale host is told what to do next (docs/apply.md: "make a new plan").
        let stale = text(&record("apply", &["applied", "stale"]), &[], false, None);
        assert!(
            stale.contains(
                "the plan is stale for 1 host: make a new one: dnsfix plan --limit 'n1' -o PLAN"
            ),
            "{stale}"
        );
        let rolled = text(&record("rollback", &["stale"]), &[], false, None);
        assert!(!rolled.contains("make a new one"), "{rolled}");
        assert_eq!(
            summary(&record("apply", &["unchanged", "applied"])),
            "run r2: 1 applied, 1 already in place of 2 hosts"
        );
        assert_eq!(
            summary(&record("rollback", &["applied"])),
            "rollback r2 of run r1: 1 rolled back of 1 host"
        );
        assert_eq!(
            crate::apply::rollback::rollback_word(HostOutcome::Applied),
            "rolled back"
        );
        // A selection that took none of the plan's hosts is said as such, not as
        // "nothing to do on 0 hosts".
        assert_eq!(
            summary(&record("apply", &[])),
            "run r2: no host of the plan was selected, nothing done"
        );
        assert_eq!(
            summary(&record("rollback", &[])),
            "rollback r2 of run r1: no host of the run was selected, nothing done"
        );
        assert_eq!(
            summary(&record("apply", &["nothing_planned"])),
            "run r2: nothing to do on 1 host"
        );
    }

    /// A host the plan could not fix fails the run (exit 3): its block says what is
    /// blocked and why, though nothing was planned there, and so does the last line.
    /// Before, it was one more name after "nothing planned", and the exit code went
    /// unexplained.
    #[test]
    fn a_blocked_host_says_what_is_blocked() {
        let record: RunRecord = serde_json::from_value(serde_json::json!({
            "kind": "dnsfix-run", "format_version": 1, "dnsfix_version": "0",
            "run_id": "r2", "command": "apply", "started": "", "finished": "",
            "inventory": null, "plan_file": null, "plan_created": "",
            "hosts": [
                {"host": "n1", "outcome": "applied", "planned": [], "planned_handlers": []},
                {"host": "n2", "outcome": "nothing_planned", "planned": [], "planned_handlers": [],
                 "blocked": ["kubelet-resolvconf: No real upstream DNS server is known \u{1b}[2J (fixes DNS-POD-LOOP)"]},
                {"host": "n3", "outcome": "nothing_planned", "planned": [], "planned_handlers": []},
            ],
        }))
        .expect("a run record");
        let out = text(&record, &[], false, None);
        assert!(
            out.contains(
                "== n2: nothing planned\n    BLOCKED   kubelet-resolvconf: No real upstream DNS \
                 server is known \\u{1b}[2J (fixes DNS-POD-LOOP)\n"
            ),
            "{out}"
        );
        assert!(out.contains("\nnothing planned: n3\n"), "{out}");
        assert_eq!(
            summary(&record),
            "run r2: 1 applied of 3 hosts; 1 host with fixes the plan could not make (BLOCKED above)"
        );
    }

    /// A file found changed at its write, after an earlier one was written: the host is
    /// stale (exit 4), and its block does not claim that nothing was written.
    #[test]
    fn a_host_stale_after_a_write_is_not_said_to_have_nothing_written() {
        let host = |steps: serde_json::Value| -> HostResult {
            serde_json::from_value(serde_json::json!({
                "host": "n1",
                "outcome": "stale",
                "steps": steps,
                "planned": [],
                "planned_handlers": [],
            }))
            .expect("a host result")
        };
        let stale = serde_json::json!({
            "kind": "write", "target": "/etc/b", "outcome": "stale", "message": "abc"
        });
        let written = serde_json::json!({
            "kind": "write", "target": "/etc/a", "outcome": "ok", "message": ""
        });
        let mut out = String::new();
        host_block(&mut out, &host(serde_json::json!([written, stale])), false);
        assert!(out.starts_with("== n1: stale\n"), "{out}");
        let mut out = String::new();
        host_block(&mut out, &host(serde_json::json!([stale])), false);
        assert!(out.starts_with("== n1: stale (nothing written)\n"), "{out}");
    }

    /// A CoreDNS pod kept as the last Ready replica is said to be kept, not "NOT READY":
    /// it is Ready.
    #[test]
    fn a_pod_kept_as_the_last_ready_replica_is_said_to_be_kept() {
        let host: HostResult = serde_json::from_value(serde_json::json!({
            "host": "n1",
            "outcome": "failed",
            "pods": [
                {"pod": "coredns-a", "app": "coredns", "node": "n1", "ok": false,
                 "kept": true, "message": "not deleted: it is the only Ready coredns replica"},
                {"pod": "nodelocaldns-b", "app": "nodelocaldns", "node": "n1", "ok": false,
                 "message": "deleted; no replacement appeared within 2s"}
            ],
            "error": "DNS pod coredns-a on n1: not deleted",
            "planned": [],
            "planned_handlers": [],
        }))
        .expect("a host result");
        let mut out = String::new();
        host_block(&mut out, &host, false);
        assert!(
            out.contains("    KEPT      pod coredns-a: not deleted")
                && out.contains("    NOT READY pod nodelocaldns-b: deleted"),
            "{out}"
        );
    }

    /// Text from the node and the cluster in a host's block (the error built from a pod's
    /// waiting reason, a stale fact, a step's message, an unhealthy unit's journal) is shown
    /// escaped: no escape sequence reaches the terminal and no newline starts a line that
    /// reads as the report's own. Before, the error and the journal lines were written raw.
    #[test]
    fn node_and_cluster_text_in_a_host_block_is_shown_escaped() {
        let host: HostResult = serde_json::from_value(serde_json::json!({
            "host": "n1",
            "outcome": "failed",
            "stale": ["/etc/resolv.conf: \u{1b}[2Jchanged"],
            "steps": [{"kind": "write", "target": "/etc/a", "outcome": "error",
                       "message": "disk \u{1b}]0;owned\u{7}full"}],
            "handlers": [{"unit": "kubelet", "action": "restarted", "healthy": false,
                          "message": "failed\nkubelet[1]: \u{1b}[31mE0101\u{1b}[0m"}],
            "error": "DNS pod nodelocaldns-b on n1: not Ready after 2s: Crash\u{1b}]0;owned\u{7}\nLoop",
            "planned": [],
            "planned_handlers": [],
        }))
        .expect("a host result");
        let mut out = String::new();
        host_block(&mut out, &host, false);
        assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
        assert!(
            out.contains("not Ready after 2s: Crash\\u{1b}]0;owned\\u{7}\\nLoop\n"),
            "{out}"
        );
        assert!(out.contains("| kubelet[1]: \\u{1b}[31mE0101"), "{out}");
    }
}
