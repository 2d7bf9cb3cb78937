//! A [`Plan`] as Markdown for a change review (a merge request, a ticket): what the plan
//! file is (its sha256, when and from what it was made), a summary table, then one section
//! per group of identical hosts with its findings, changes (diffs in fenced `diff` blocks,
//! long ones folded in `<details>`), handlers, blocked playbooks and notes, the hosts with
//! nothing to change, and the inventory edits.
//!
//! Node text can hold anything, backticks and HTML included: it is only ever written inside
//! a code span or a fence longer than any run of backticks in it, or escaped, so it cannot
//! close a block or open one, and outside code nothing in it is left for GitHub or GitLab
//! to turn into a mention, a reference, an inline diff, math or a link. Secrets are
//! redacted as in the saved plan, control characters shown escaped as on a terminal. A
//! pure function of the plan and its digest.

use std::fmt::Write as _;

use super::model::{
    Change, ConfigMapChange, FindingRecord, HostPlan, HostStatus, InventoryChange, Plan,
};
use super::render;
use crate::diagnose::FindingStatus;

/// A diff longer than this many lines is folded in a `<details>` block.
const FOLD_LINES: usize = 20;
/// A group of more hosts than this also lists every one of them below its heading.
const HEADING_HOSTS: usize = 5;

/// The plan as Markdown. `sha256` is the plan file's digest, the one `apply` prints.
pub fn markdown(plan: &Plan, sha256: &str) -> String {
    let plan = &render::terminal_safe(&super::redact::redact_plan(&render::without_facts(plan)));
    let mut out = String::new();
    out.push_str("# dnsfix plan\n\n");
    provenance(&mut out, plan, sha256);
    summary(&mut out, plan);

    let (groups, clean) = render::groups(plan);
    for (first, hosts) in &groups {
        host_section(&mut out, first, hosts);
    }
    if !clean.is_empty() {
        out.push_str("## Nothing to change\n\n");
        let _ = writeln!(out, "{}\n", code(&render::host_list(&clean)));
    }
    if !plan.cluster_changes.is_empty() {
        cluster_changes(&mut out, &plan.cluster_changes);
    }
    if !plan.inventory_changes.is_empty() {
        inventory(&mut out, &plan.inventory_changes);
    }
    out
}

fn provenance(out: &mut String, plan: &Plan, sha256: &str) {
    let _ = writeln!(
        out,
        "Plan file sha256: {}. `dnsfix apply` prints the sha256 of the file it applies: it \
         must be this one.\n",
        code(sha256)
    );
    out.push_str("| | |\n|---|---|\n");
    let _ = writeln!(
        out,
        "| made | {} by dnsfix {} |",
        cell(&plan.created),
        cell(&plan.dnsfix_version)
    );
    match &plan.inventory {
        Some(inv) => {
            let _ = writeln!(
                out,
                "| inventory | {} (sha256 {}) |",
                code_cell(&inv.path),
                code_cell(&inv.sha256)
            );
        }
        None => out.push_str("| inventory | none: the local machine |\n"),
    }
    let limit = plan
        .limit
        .as_deref()
        .map_or_else(|| "all hosts".to_owned(), code_cell);
    let _ = writeln!(out, "| limit | {limit} |");
    let playbooks: Vec<String> = plan.playbooks.iter().map(|p| code_cell(&p.name)).collect();
    let playbooks = if playbooks.is_empty() {
        "none".to_owned()
    } else {
        playbooks.join(", ")
    };
    let _ = writeln!(out, "| playbooks | {playbooks} |\n");
}

fn summary(out: &mut String, plan: &Plan) {
    let s = &plan.summary;
    out.push_str("## Summary\n\n");
    let _ = writeln!(out, "{}\n", text(&render::summary_line(s)));
    out.push_str("| | |\n|---|---|\n");
    let _ = writeln!(
        out,
        "| hosts changing | {} of {} |",
        s.hosts_changing, s.hosts
    );
    let _ = writeln!(out, "| files | {} |", s.files);
    let _ = writeln!(out, "| sysctls | {} |", s.sysctls);
    let _ = writeln!(out, "| kernel modules | {} |", s.modules);
    if s.pods > 0 {
        let _ = writeln!(out, "| DNS pods recreated | {} |", s.pods);
    }
    if s.configmaps > 0 {
        let _ = writeln!(out, "| cluster ConfigMap keys | {} |", s.configmaps);
    }
    let restarts: Vec<String> = s
        .restarts
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(what, n)| format!("{n} × {}", cell(what)))
        .collect();
    let restarts = match (restarts.is_empty(), s.serial) {
        (true, _) => "none".to_owned(),
        (false, Some(serial)) => format!("{}, in batches of {serial}", restarts.join(", ")),
        (false, None) => restarts.join(", "),
    };
    let _ = writeln!(out, "| restarts | {restarts} |");
    let _ = writeln!(out, "| blocked playbooks | {} |", blocked_summary(plan));
    let failed: Vec<&str> = plan
        .hosts
        .iter()
        .filter(|h| h.status == HostStatus::Error)
        .map(|h| h.host.as_str())
        .collect();
    let failed = if failed.is_empty() {
        "none".to_owned()
    } else {
        failed
            .iter()
            .map(|h| code_cell(h))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(out, "| hosts not planned (unreachable) | {failed} |");
    let _ = writeln!(out, "| inventory files | {} |\n", s.inventory_files);
}

/// "`kubelet-resolvconf` on 2 hosts, `host-upstream-dns` on 1 host", or "none".
fn blocked_summary(plan: &Plan) -> String {
    let mut by_playbook: Vec<(&str, usize)> = Vec::new();
    for b in plan.hosts.iter().flat_map(|h| &h.blocked) {
        match by_playbook.iter_mut().find(|(p, _)| *p == b.playbook) {
            Some((_, n)) => *n += 1,
            None => by_playbook.push((&b.playbook, 1)),
        }
    }
    if by_playbook.is_empty() {
        return "none".to_owned();
    }
    by_playbook
        .iter()
        .map(|(p, n)| {
            let hosts = if *n == 1 { "host" } else { "hosts" };
            format!("{} on {n} {hosts}", code_cell(p))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn host_section(out: &mut String, host: &HostPlan, hosts: &[&str]) {
    let heading = match hosts {
        [one] => code(one),
        many => format!("{}: same change", code(&render::host_list(many))),
    };
    let _ = writeln!(out, "## {heading}\n");
    if hosts.len() > HEADING_HOSTS {
        let _ = writeln!(
            out,
            "<details><summary>all {} hosts</summary>\n\n{}\n\n</details>\n",
            hosts.len(),
            host_list(hosts)
        );
    }
    if host.status == HostStatus::Error {
        let why = host.error.as_ref().map_or_else(
            || "no reason recorded".to_owned(),
            |e| format!("{}: {}", e.kind, e.message),
        );
        let _ = writeln!(out, "**Could not plan:** {}\n", text(&why));
    }
    if !host.findings.is_empty() {
        out.push_str("### Findings\n\n");
        for f in &host.findings {
            finding(out, f);
        }
        out.push('\n');
    }
    if !host.changes.is_empty() {
        out.push_str("### Changes\n\n");
        for c in &host.changes {
            change(out, c);
        }
    }
    if !host.handlers.is_empty() {
        out.push_str("### Handlers\n\n");
        for h in &host.handlers {
            let verb = h.action.verb();
            let _ = writeln!(
                out,
                "- {} {} (batches of {})",
                text(verb),
                code(&h.unit),
                h.serial
            );
            for r in &h.reasons {
                let _ = writeln!(out, "  - ← {}", text(r));
            }
        }
        out.push('\n');
    }
    if !host.cluster.is_empty() {
        let via = super::render::cluster_via(&host.cluster);
        let _ = writeln!(out, "### Cluster (kubectl on {})\n", text(&via));
        for a in &host.cluster {
            let _ = writeln!(out, "- {}", text(&super::render::cluster_action(a)));
            for r in a.reasons() {
                let _ = writeln!(out, "  - ← {}: {}", code(&r.playbook), text(&r.task));
            }
        }
        out.push('\n');
    }
    if !host.blocked.is_empty() {
        out.push_str("### Blocked\n\n");
        for b in &host.blocked {
            let fixes = if b.fixes.is_empty() {
                String::new()
            } else {
                format!(" (fixes {})", codes(&b.fixes))
            };
            let _ = writeln!(out, "- {}: {}{fixes}", code(&b.playbook), text(&b.reason));
        }
        out.push('\n');
    }
    notes(out, "Notes", &host.notes);
    let failing = host
        .findings
        .iter()
        .any(|f| f.status == FindingStatus::Failed && f.id != crate::diagnose::drift::DRIFT_ID);
    if host.changes.is_empty() && host.status != HostStatus::Error && failing {
        notes(out, "No change", &host.unchanged);
    }
    if !host.fixes.is_empty() || !host.remaining.is_empty() {
        out.push_str("### After apply\n\n");
        if !host.fixes.is_empty() {
            let _ = writeln!(out, "- fixes {}", codes(&host.fixes));
        }
        if !host.remaining.is_empty() {
            let _ = writeln!(out, "- still failing: {}", codes(&host.remaining));
        }
        out.push('\n');
    }
}

fn finding(out: &mut String, f: &FindingRecord) {
    let label = match f.status {
        FindingStatus::Failed => f.severity.to_string(),
        FindingStatus::Unknown => "unknown".to_owned(),
    };
    let _ = writeln!(out, "- **{label}** {} {}", code(&f.id), text(&f.summary));
    for e in &f.evidence {
        let _ = writeln!(out, "  - {}", text(e));
    }
}

fn change(out: &mut String, c: &Change) {
    match c {
        Change::WriteFile {
            path,
            description,
            before_sha256,
            before,
            content,
            mode,
            ..
        } => {
            let (heading, old_name) = match before_sha256 {
                None => (
                    format!(
                        "`+` {} (new file, mode {})",
                        code(path),
                        code(mode.as_deref().unwrap_or("0644"))
                    ),
                    "/dev/null".to_owned(),
                ),
                Some(_) => (format!("`~` {}", code(path)), format!("a{path}")),
            };
            let _ = writeln!(out, "#### {heading}\n");
            let _ = writeln!(out, "{}\n", text(description));
            let before = before.as_deref().unwrap_or("");
            let diff = render::unified(before, content, &old_name, &format!("b{path}"));
            fenced_diff(out, &diff, path);
        }
        Change::Sysctl {
            name,
            before,
            after,
            ..
        } => {
            let before = before.as_deref().unwrap_or("unset");
            let _ = writeln!(
                out,
                "#### sysctl {}\n\n{} → {}\n",
                code(name),
                code(before),
                code(after)
            );
        }
        Change::LoadModule { name, .. } => {
            let _ = writeln!(out, "#### modprobe {}\n", code(name));
        }
    }
    let mut seen = Vec::new();
    for r in c.reasons() {
        let line = if r.fixes.is_empty() {
            format!("Because: {}", code(&r.playbook))
        } else {
            format!("Because: {} ← {}", code(&r.playbook), codes(&r.fixes))
        };
        if !seen.contains(&line) {
            let _ = writeln!(out, "{line}\n");
            seen.push(line);
        }
    }
}

fn notes(out: &mut String, title: &str, notes: &[super::model::Note]) {
    if notes.is_empty() {
        return;
    }
    let _ = writeln!(out, "### {title}\n");
    for n in notes {
        let mut lines = n.message.lines();
        let first = text(lines.next().unwrap_or_default());
        if n.playbook.is_empty() {
            let _ = writeln!(out, "- {first}");
        } else {
            let _ = writeln!(out, "- {}: {first}", code(&n.playbook));
        }
        for line in lines.filter(|l| !l.trim().is_empty()) {
            let _ = writeln!(out, "  - {}", text(line.trim()));
        }
    }
    out.push('\n');
}

fn cluster_changes(out: &mut String, changes: &[ConfigMapChange]) {
    out.push_str("## Cluster\n\n");
    let via = changes.first().map_or("", |c| c.via.as_str());
    let _ = writeln!(
        out,
        "Changed through kubectl on {}, once, before any host; each only while it still \
         holds what was read here.\n",
        code(via)
    );
    for c in changes {
        let name = format!("kube-system/configmap/{}/{}", c.configmap, c.key);
        let _ = writeln!(out, "#### `~` {}\n", code(&name));
        let _ = writeln!(out, "- {}", text(&c.description));
        let mut seen: Vec<String> = Vec::new();
        for r in &c.reasons {
            let line = if r.fixes.is_empty() {
                format!("- because: {}", code(&r.playbook))
            } else {
                format!("- because: {} ← {}", code(&r.playbook), codes(&r.fixes))
            };
            if !seen.contains(&line) {
                let _ = writeln!(out, "{line}");
                seen.push(line);
            }
        }
        let _ = writeln!(out, "- for: {}\n", host_list(&c.hosts));
        let diff = render::unified(
            &c.before,
            &c.after,
            &format!("a/{name}"),
            &format!("b/{name}"),
        );
        fenced_diff(out, &diff, &name);
    }
}

fn inventory(out: &mut String, changes: &[InventoryChange]) {
    out.push_str("## Inventory\n\n");
    out.push_str(
        "Changed only by `dnsfix apply --update-inventory`. Without it, the next Kubespray \
         run undoes these fixes.\n\n",
    );
    for c in changes {
        let (sign, old_name) = match c.before_sha256 {
            None => ("+", "/dev/null".to_owned()),
            Some(_) => ("~", format!("a/{}", c.path.trim_start_matches('/'))),
        };
        let _ = writeln!(out, "#### `{sign}` {}\n", code(&c.path));
        let _ = writeln!(out, "- sets: {}", codes(&c.settings));
        let _ = writeln!(out, "- for: {}\n", host_list(&c.hosts));
        let new_name = format!("b/{}", c.path.trim_start_matches('/'));
        let diff = render::unified(
            c.before.as_deref().unwrap_or(""),
            &c.content,
            &old_name,
            &new_name,
        );
        fenced_diff(out, &diff, &c.path);
    }
}

/// A diff in a fenced `diff` block, folded in `<details>` when long.
fn fenced_diff(out: &mut String, diff: &str, path: &str) {
    if diff.is_empty() {
        return;
    }
    let lines = diff.lines().count();
    let fold = lines > FOLD_LINES;
    if fold {
        let _ = writeln!(
            out,
            "<details><summary>diff of {} ({lines} lines)</summary>\n",
            html(path)
        );
    }
    let fence = fence_for(diff);
    let _ = writeln!(out, "{fence}diff\n{diff}{fence}\n");
    if fold {
        out.push_str("</details>\n\n");
    }
}

/// A backtick fence longer than any run of backticks in `content` (at least three).
fn fence_for(content: &str) -> String {
    "`".repeat(longest_backtick_run(content).max(2) + 1)
}

fn longest_backtick_run(s: &str) -> usize {
    s.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// `s` as an inline code span that nothing in it can close: delimited by more backticks
/// than its longest run, padded with a space (which CommonMark strips) where a leading or
/// trailing backtick or space must stay inside. A line break would end a table row or a heading, so
/// it is shown as `\n`.
fn code(s: &str) -> String {
    let s = s.replace('\n', "\\n");
    let ticks = "`".repeat(longest_backtick_run(&s) + 1);
    let pad = s.starts_with('`') || s.ends_with('`') || (s.starts_with(' ') && s.ends_with(' '));
    if pad {
        format!("{ticks} {s} {ticks}")
    } else {
        format!("{ticks}{s}{ticks}")
    }
}

/// [`code`] inside a table cell, where GitHub and GitLab split on `|` even in code.
fn code_cell(s: &str) -> String {
    code(s).replace('|', "\\|")
}

fn codes(items: &[String]) -> String {
    items.iter().map(|i| code(i)).collect::<Vec<_>>().join(", ")
}

fn host_list<S: AsRef<str>>(hosts: &[S]) -> String {
    hosts
        .iter()
        .map(|h| code(h.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Plain text as one Markdown line that reads as written: every character Markdown or
/// HTML could take as syntax is backslash-escaped, and one that would start a block (a
/// list, a heading, a quote) at the line's start too; nothing in it notifies or links
/// ([`unlinked`]).
fn text(s: &str) -> String {
    let s = s.replace('\n', " ");
    // An ordered list marker: digits, then `.` or `)`; its punctuation is what gets escaped.
    let digits = s.chars().take_while(char::is_ascii_digit).count();
    unlinked(&s, code, |i, c, out| {
        let starts_block = (i == 0 && matches!(c, '-' | '+' | '#' | '=' | '>'))
            || (digits > 0
                && i == digits
                && matches!(c, '.' | ')')
                && s[i + 1..].starts_with([' ', '\t']) | s[i + 1..].is_empty());
        if starts_block || "\\`*_[]<>|~&!".contains(c) {
            out.push('\\');
        }
        out.push(c);
    })
}

/// A word joiner (U+2060) as a character reference: it shows as nothing where the document
/// is read, and stands between a character and the rest that would make it a mention.
const JOIN: &str = "&#8288;";

/// `s` written character by character by `write` (`(index, char, out)`), with nothing left
/// that GitHub or GitLab would turn into a notification, a reference, markup or a link once
/// rendered: they find `@team`, `#123`, `!123`, `~label`, `%milestone`, `&epic`, GitLab's
/// `{+ +}` and `[- -]` inline diffs, bare `www.` and `https://` addresses and e-mail
/// addresses in the rendered text, where a backslash escape is gone, so a [`JOIN`] follows
/// the character that starts one (`@&#8288;team`, `www&#8288;.`). `$`, which delimits
/// math, is the character reference `&#36;`, which delimits nothing. A web address is
/// written whole by `url` as code (a code span, `<code>`), where nothing is a link or a
/// mention either: a joiner inside it would go along when it is copied and break it
/// (`https:&#8288;//coredns.io/plugins/loop#&#8288;troubleshooting`, in a CoreDNS pod's
/// last log line).
fn unlinked(
    s: &str,
    url: fn(&str) -> String,
    mut write: impl FnMut(usize, char, &mut String),
) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len() + 8);
    let mut at = 0;
    let mut skip = 0;
    for (i, &c) in chars.iter().enumerate() {
        if skip > 0 {
            skip -= 1;
            at += c.len_utf8();
            continue;
        }
        if let Some(len) = web_address(&chars, i) {
            let address: String = chars[i..i + len].iter().collect();
            out.push_str(&url(&address));
            skip = len - 1;
            at += c.len_utf8();
            continue;
        }
        let next = chars.get(i + 1).copied();
        if c == '$' {
            out.push_str("&#36;");
        } else {
            write(at, c, &mut out);
        }
        at += c.len_utf8();
        let join = match c {
            '@' | '#' | '!' | '~' | '%' | '&' | '$' => next.is_some_and(|n| !n.is_whitespace()),
            '{' | '[' => matches!(next, Some('+' | '-')),
            ':' => chars.get(i + 1..i + 3) == Some(&['/', '/'][..]),
            'w' | 'W' => {
                next == Some('.')
                    && i >= 2
                    && chars[i - 2..i].iter().all(|w| w.eq_ignore_ascii_case(&'w'))
            }
            _ => false,
        };
        if join {
            out.push_str(JOIN);
        }
    }
    out
}

/// The length of the web address that starts at `chars[i]`, if one does: `http://`,
/// `https://` or `www.` (after no letter or digit) and what follows of the characters a
/// URL is written in (RFC 3986's unreserved, reserved and `%`; no `|`, which splits a
/// table cell even in code, no backtick), less the punctuation GFM's autolinks leave out
/// at its end (`.` `,` `:` `;` `!` `?` `'` `"` `*` `_` `~`, and a `)` without its `(`).
fn web_address(chars: &[char], i: usize) -> Option<usize> {
    let starts = |prefix: &str| {
        let n = prefix.chars().count();
        chars.get(i..i + n).is_some_and(|w| {
            w.iter()
                .zip(prefix.chars())
                .all(|(a, b)| a.eq_ignore_ascii_case(&b))
        })
    };
    let after_word = i > 0 && chars[i - 1].is_alphanumeric();
    let prefix = if starts("https://") {
        8
    } else if starts("http://") {
        7
    } else if starts("www.") && !after_word {
        4
    } else {
        return None;
    };
    let mut end = i + prefix;
    while chars
        .get(end)
        .is_some_and(|c| c.is_ascii_alphanumeric() || "-._~:/?#[]@!$&'()*+,;=%".contains(*c))
    {
        end += 1;
    }
    loop {
        let last = chars[end - 1];
        let open = chars[i..end].iter().filter(|c| **c == '(').count();
        let close = chars[i..end].iter().filter(|c| **c == ')').count();
        if ".,:;!?'\"*_~".contains(last) || (last == ')' && close > open) {
            end -= 1;
        } else {
            break;
        }
    }
    // Nothing after the scheme or `www.`: no address, its characters are written as text.
    (end > i + prefix).then_some(end - i)
}

/// A web address inside an HTML element: `<code>`, where nothing links or mentions.
fn html_code(address: &str) -> String {
    let mut out = String::from("<code>");
    for c in address.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out.push_str("</code>");
    out
}

/// Plain text in a table cell.
fn cell(s: &str) -> String {
    text(s)
}

/// Text inside an HTML element (a `<summary>`), [`unlinked`] as Markdown text is.
fn html(s: &str) -> String {
    unlinked(s, html_code, |_, c, out| match c {
        '&' => out.push_str("&amp;"),
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        '"' => out.push_str("&quot;"),
        '\n' => out.push(' '),
        c => out.push(c),
    })
}

#[cfg(test)]
mod tests {
    use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

    use super::*;
    use crate::plan::model::{FindingRecord, Note, Reason};

    /// What a Markdown parser (pulldown-cmark, CommonMark with GitHub's tables) makes of
    /// the document: fenced code blocks (info, text), raw HTML, links, and all the text.
    #[derive(Default)]
    struct Read {
        code_blocks: Vec<(String, String)>,
        html: Vec<String>,
        links: usize,
        text: String,
        /// Text outside code spans and blocks, where a renderer looks for mentions.
        prose: String,
        math: usize,
    }

    fn read(markdown: &str) -> Read {
        let mut read = Read::default();
        let mut block: Option<(String, String)> = None;
        let options = Options::ENABLE_TABLES | Options::ENABLE_MATH;
        for event in Parser::new_ext(markdown, options) {
            match event {
                Event::Start(Tag::CodeBlock(kind)) => {
                    let info = match kind {
                        CodeBlockKind::Fenced(info) => info.to_string(),
                        CodeBlockKind::Indented => "(indented)".to_owned(),
                    };
                    block = Some((info, String::new()));
                }
                Event::End(TagEnd::CodeBlock) => read.code_blocks.extend(block.take()),
                Event::Text(t) => match &mut block {
                    Some((_, body)) => body.push_str(&t),
                    None => {
                        read.text.push_str(&t);
                        read.prose.push_str(&t);
                    }
                },
                Event::InlineMath(_) | Event::DisplayMath(_) => read.math += 1,
                Event::Code(t) => read.text.push_str(&t),
                Event::Html(h) | Event::InlineHtml(h) => read.html.push(h.to_string()),
                Event::Start(Tag::Link { .. } | Tag::Image { .. }) => read.links += 1,
                _ => {}
            }
        }
        read
    }

    /// The only HTML in the document is dnsfix's own `<details>` folding, balanced.
    fn only_our_html(read: &Read) {
        let mut open = 0i32;
        for h in &read.html {
            let h = h.trim();
            if h.starts_with("<details><summary>") && h.ends_with("</summary>") {
                assert!(
                    !h["<details><summary>".len()..].contains(['<', '>']) || {
                        let inner = &h["<details><summary>".len()..h.len() - "</summary>".len()];
                        !inner.contains(['<', '>'])
                    },
                    "{h}"
                );
                open += 1;
            } else if h == "</details>" {
                open -= 1;
                assert!(open >= 0, "a </details> closes nothing");
            } else {
                panic!("HTML that is not dnsfix's own: {h:?}");
            }
        }
        assert_eq!(open, 0, "unbalanced <details>");
    }

    #[test]
    fn full_plan_markdown() {
        let plan = crate::plan::render::tests::full_plan();
        let md = markdown(&plan, "ab12");
        let read = read(&md);
        only_our_html(&read);
        assert_eq!(read.links, 0);
        // Every file change and the inventory edit is one fenced diff block.
        let files = plan
            .hosts
            .iter()
            .filter(|h| h.host != "node3") // node2 and node3 are one group
            .flat_map(|h| &h.changes)
            .filter(|c| matches!(c, Change::WriteFile { .. }))
            .count();
        assert_eq!(
            read.code_blocks.len(),
            files + plan.inventory_changes.len() + plan.cluster_changes.len()
        );
        assert!(read.code_blocks.iter().all(|(info, _)| info == "diff"));
        insta::assert_snapshot!(md);
    }

    /// Node text made to break out: fences of every length, closing tags, HTML, links,
    /// list and heading markers, table pipes, a terminal escape. It stays text: the fences
    /// hold exactly the diff, no HTML but dnsfix's own, no link, and the words read back.
    #[test]
    fn node_text_cannot_break_the_markdown() {
        let hostile = "```\n````\n</details>\n<script>alert(1)</script>\n# heading\n- item\n\
                       | a | b |\n[click](http://evil.example)\n\x1b]52;c;Zm9v\x07\n";
        let long: String = (0..30).map(|i| format!("line {i} ``` `\n")).collect();
        let change = |path: &str, content: String| Change::WriteFile {
            path: path.to_owned(),
            description: "rendered from `x` </details> [y](z) | *bold*".to_owned(),
            before_sha256: Some("00".to_owned()),
            // A fence line both sides have: the diff shows it as context, ` ```` `, which
            // closes a three-backtick fence.
            before: Some("```\nold ` line\n".to_owned()),
            after_sha256: "11".to_owned(),
            content,
            mode: None,
            reasons: vec![Reason {
                playbook: "p`q".to_owned(),
                task: "t".to_owned(),
                fixes: vec!["DNS-X".to_owned()],
            }],
        };
        let mut plan = crate::plan::render::tests::full_plan();
        let host = &mut plan.hosts[1];
        host.host = "node`2".to_owned();
        host.changes = vec![
            change("/etc/dnsfix/``a|b``.conf", hostile.to_owned()),
            change("/etc/dnsfix/long.conf", long.clone()),
        ];
        host.findings = vec![FindingRecord {
            evidence: vec!["1. <b>not bold</b> `tick".to_owned(), "> quote".to_owned()],
            summary: "- not a list <img src=x onerror=alert(1)>".to_owned(),
            ..host.findings[0].clone()
        }];
        host.notes = vec![Note {
            playbook: "n".to_owned(),
            message: "# not a heading\n```\n</details>".to_owned(),
        }];
        let md = markdown(&plan, "ab12");
        let read = read(&md);
        only_our_html(&read);
        assert_eq!(read.links, 0, "{md}");
        let diffs: Vec<&String> = read.code_blocks.iter().map(|(_, body)| body).collect();
        let safe = crate::text::terminal_text(hostile).into_owned();
        let want = render::unified(
            "```\nold ` line\n",
            &safe,
            "a/etc/dnsfix/``a|b``.conf",
            "b/etc/dnsfix/``a|b``.conf",
        );
        assert!(
            diffs.contains(&&want),
            "the hostile diff is not one whole block:\n{md}"
        );
        let want = render::unified(
            "```\nold ` line\n",
            &long,
            "a/etc/dnsfix/long.conf",
            "b/etc/dnsfix/long.conf",
        );
        assert!(
            diffs.contains(&&want),
            "the long diff is not one whole block:\n{md}"
        );
        assert!(md.contains("<details><summary>diff of /etc/dnsfix/long.conf ("));
        for words in [
            "1. <b>not bold</b> `tick",
            "- not a list <img src=x onerror=alert(1)>",
            "# not a heading",
            "rendered from `x` </details> [y](z) | *bold*",
            "node`2",
            "/etc/dnsfix/``a|b``.conf",
        ] {
            assert!(
                read.text.contains(words),
                "{words:?} does not read back:\n{}",
                read.text
            );
        }
        assert!(!md.contains('\x1b'), "a raw escape reached the document");
    }

    /// Node text that GitHub and GitLab act on once rendered: a team mention, a GitLab
    /// inline diff, bare addresses, references, math. `search example.internal
    /// @octo-org/sre-oncall {+all-fixed+} www.evil.example` in a node's resolv.conf once
    /// notified the team, showed "all-fixed" as an addition and linked the address. It
    /// reads as written, and none of it is left for a renderer to find.
    #[test]
    fn node_text_neither_notifies_nor_links() {
        let hostile = "search example.internal @octo-org/sre-oncall {+all-fixed+} [-x-] \
                       www.evil.example WWW.evil.example https://evil.example/x #123 !456 \
                       ~bug %v1 &7 $x^2$ me@example.com";
        let mut plan = crate::plan::render::tests::full_plan();
        let host = &mut plan.hosts[1];
        host.findings = vec![FindingRecord {
            evidence: vec![format!("/etc/resolv.conf:3 {hostile}")],
            summary: hostile.to_owned(),
            ..host.findings[0].clone()
        }];
        host.notes = vec![Note {
            playbook: "n".to_owned(),
            message: format!("{hostile}\n{hostile}"),
        }];
        let long: String = (0..30).map(|i| format!("line {i}\n")).collect();
        host.changes = vec![Change::WriteFile {
            path: format!("/etc/dnsfix/{hostile}"),
            description: hostile.to_owned(),
            before_sha256: Some("00".to_owned()),
            before: Some(String::new()),
            after_sha256: "11".to_owned(),
            content: long,
            mode: None,
            reasons: vec![],
        }];
        let md = markdown(&plan, "ab12");
        let read = read(&md);
        assert_eq!((read.links, read.math), (0, 0), "{md}");
        let prose = &read.prose;
        // The folded diff's `<summary>` is HTML: its text as a browser reads it.
        let html = read.html.concat();
        // Web addresses are code, whole (and inert): what is left must be inert as text.
        for address in [
            "www.evil.example",
            "WWW.evil.example",
            "https://evil.example/x",
        ] {
            assert!(html.contains(&format!("<code>{address}</code>")), "{html}");
        }
        let summaries = html
            .split("<code>")
            .map(|part| part.split_once("</code>").map_or(part, |(_, after)| after))
            .collect::<String>()
            .replace("&#8288;", "\u{2060}")
            .replace("&#36;", "$")
            .replace("&amp;", "&");
        for shown in [prose, &summaries] {
            let mut rest = shown.as_str();
            while let Some(at) = rest.find(['@', '#', '!', '~', '%', '&', '$']) {
                let after = rest[at + 1..].chars().next();
                assert!(
                    after.is_none_or(|c| c == '\u{2060}' || c.is_whitespace()),
                    "{:?} is live in {shown}",
                    &rest[at..]
                );
                rest = &rest[at + 1..];
            }
            for live in ["{+", "[-", "www.", "WWW.", "://"] {
                assert!(!shown.contains(live), "{live:?} is live in {shown}");
            }
        }
        assert!(summaries.contains("@\u{2060}octo-org"), "{summaries}");
        // It reads as written, the joiners aside (which show as nothing), the web addresses
        // in code.
        let read_back = read.text.replace('\u{2060}', "");
        assert!(read_back.contains(hostile), "{read_back}");
        assert!(
            read_back.contains(&format!("/etc/resolv.conf:3 {hostile}")),
            "{read_back}"
        );
    }

    /// A web address in node or cluster text is code, whole, so that it copies as it reads:
    /// a CoreDNS pod's last log line had `https:&#8288;//coredns.io/plugins/loop#&#8288;
    /// troubleshooting`, whose joiners go along when it is copied (a newcomer's walk). The
    /// punctuation after it stays text, as GFM's autolinks leave it out.
    #[test]
    fn a_web_address_is_left_whole_to_copy() {
        let log = "[FATAL] plugin/loop: Loop (127.0.0.1:38718 -> :53) detected for zone \".\", \
                   see https://coredns.io/plugins/loop#troubleshooting. Query: \"HINFO 1.2.\"";
        let md = text(log);
        assert!(
            md.contains(", see `https://coredns.io/plugins/loop#troubleshooting`. Query: "),
            "{md}"
        );
        let read = read(&md);
        assert_eq!(read.links, 0, "{md}");
        assert_eq!(read.text, log.replace('\u{2060}', ""));
        assert!(!md.contains("&#8288;//"), "{md}");
        for (shown, code) in [
            ("(see www.example.com/a_(b))", "`www.example.com/a_(b)`)"),
            (
                "<https://x.example/?q=1&r=2>,",
                "`https://x.example/?q=1&r=2`\\>,",
            ),
            ("a|https://x.example/a|b", "`https://x.example/a`\\|b"),
            ("https:// alone", "https:&#8288;// alone"),
            ("awww.example", "awww&#8288;.example"),
        ] {
            assert!(text(shown).contains(code), "{shown}: {}", text(shown));
        }
        assert_eq!(
            html("see https://x.example/?a=1&b='2'."),
            "see <code>https://x.example/?a=1&amp;b=&#39;2</code>'."
        );
    }

    /// Secrets stay redacted, as in the saved plan.
    #[test]
    fn secrets_are_redacted() {
        let mut plan = crate::plan::render::tests::full_plan();
        plan.hosts[1].changes = vec![Change::WriteFile {
            path: "/etc/rancher/k3s/config.yaml".to_owned(),
            description: "d".to_owned(),
            before_sha256: Some("00".to_owned()),
            before: Some("token: s3cr3t\n".to_owned()),
            after_sha256: "11".to_owned(),
            content: "token: s3cr3t\nresolv-conf: /etc/dnsfix/resolv.conf\n".to_owned(),
            mode: None,
            reasons: vec![],
        }];
        let md = markdown(&plan, "ab12");
        assert!(!md.contains("s3cr3t"), "{md}");
        assert!(md.contains("<redacted hmac:"), "{md}");
    }
}
