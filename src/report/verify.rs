//! `dnsfix verify` results: per host, each DNS path asked, with the server, where it comes
//! from, the response code, the latency and the reason it failed; as text, JSON and JUnit.

use std::fmt::Write as _;

use serde::Serialize;

use super::{ErrorEntry, Header, escape, pretty_json};
use crate::cluster::{Cluster, DnsPod};
use crate::text::count;
use crate::verify::{HostVerify, ProbeResult};

/// Hosts that fail first, then hosts that pass, then unreachable ones (as `check` orders
/// by severity), each group in natural name order.
fn sorted(hosts: &[HostVerify]) -> Vec<&HostVerify> {
    let rank = |h: &HostVerify| match &h.result {
        Err(_) => 0,
        Ok(c) if c.failed() => 1,
        Ok(_) => 2,
    };
    let mut v: Vec<&HostVerify> = hosts.iter().collect();
    v.sort_by(|a, b| {
        rank(a)
            .cmp(&rank(b))
            .then_with(|| super::natural_cmp(&a.host, &b.host))
    });
    v
}

fn probe_line(out: &mut String, p: &ProbeResult) {
    let mark = if p.ok { "ok  " } else { "FAIL" };
    let what = format!(
        "{mark} {:<15} {:<16} {}",
        p.probe.path.word(),
        p.probe.server,
        p.probe.name
    );
    let _ = write!(out, "    {}", escape(&what));
    if let (Some(rcode), true) = (&p.rcode, p.ok) {
        let _ = write!(
            out,
            "  {rcode} {} ({} ms via {})",
            escape(&p.answers.join(", ")),
            p.latency_ms,
            p.via
        );
    }
    out.push('\n');
    let _ = writeln!(out, "         from {}", escape(&p.probe.source));
    if let Some(reason) = &p.reason {
        let _ = writeln!(out, "         {}", escape(reason));
    }
}

/// "pod coredns-x (coredns): CrashLoopBackOff, 12 restarts" and the loop line under it.
fn pod_line(out: &mut String, pod: &DnsPod) {
    let state = match (&pod.waiting, pod.ready) {
        (Some(why), _) => why.clone(),
        (None, true) => "ready".to_owned(),
        (None, false) => format!("{}, not ready", pod.phase),
    };
    let line = format!(
        "    pod  {} ({}): {state}, {} restart{}",
        pod.name,
        pod.app,
        pod.restarts,
        if pod.restarts == 1 { "" } else { "s" }
    );
    let _ = writeln!(out, "{}", escape(&line));
    if let Some(looped) = &pod.loop_detected {
        let _ = writeln!(out, "         {}", escape(looped));
    }
    if let Some(why) = &pod.logs_unread {
        let _ = writeln!(
            out,
            "         {}",
            escape(&format!("previous log not read: {why}"))
        );
    }
}

/// One line on how the cluster was read: "cluster: 4 DNS pods, read with kubectl on cp1",
/// or why it was not.
pub fn cluster_line(cluster: &Cluster) -> String {
    match cluster {
        Cluster::Read {
            via, pods, config, ..
        } => {
            let configmaps = match &config.error {
                Some(e) => format!("; ConfigMaps not read: {}", escape(e)),
                None => String::new(),
            };
            format!(
                "cluster: {}, read with kubectl on {}{configmaps}\n",
                count(pods.len(), "DNS pod"),
                escape(via)
            )
        }
        Cluster::Unavailable { reason } => format!("cluster: not read: {}\n", escape(reason)),
    }
}

pub fn text(hosts: &[HostVerify], cluster: &Cluster) -> String {
    let mut out = cluster_line(cluster);
    out.push('\n');
    for h in sorted(hosts) {
        match &h.result {
            Err(e) => {
                let _ = writeln!(
                    out,
                    "== {}: not verified: {}",
                    escape(&h.host),
                    escape(&e.to_string())
                );
            }
            Ok(checked) => {
                let verdict = if checked.failed() { "FAILS" } else { "passes" };
                let _ = writeln!(out, "== {}: {verdict}", escape(&h.host));
                for p in &checked.probes {
                    probe_line(&mut out, p);
                }
                for pod in &checked.pods {
                    pod_line(&mut out, pod);
                }
                for n in &checked.notes {
                    let _ = writeln!(out, "    note: {}", escape(n));
                }
            }
        }
        out.push('\n');
    }
    out.push_str(&summary(hosts));
    out.push('\n');
    out
}

/// "3 of 5 hosts passed; 2 failed (4 of 12 paths); 1 not verified", "0 of 1 host passed;
/// 1 failed (1 of 1 path)": the nouns agree with their totals, the verbs need not.
pub fn summary(hosts: &[HostVerify]) -> String {
    let mut pass = 0;
    let mut fail = 0;
    let mut unreachable = 0;
    let mut paths = 0;
    let mut failed_paths = 0;
    for h in hosts {
        match &h.result {
            Err(_) => unreachable += 1,
            Ok(c) => {
                paths += c.probes.len();
                failed_paths += c.probes.iter().filter(|p| !p.ok).count();
                if c.failed() { fail += 1 } else { pass += 1 }
            }
        }
    }
    let mut line = format!("{pass} of {} passed", count(hosts.len(), "host"));
    if fail > 0 {
        let _ = write!(
            line,
            "; {fail} failed ({failed_paths} of {})",
            count(paths, "path")
        );
    }
    if unreachable > 0 {
        let _ = write!(line, "; {unreachable} not verified");
    }
    line
}

#[derive(Serialize)]
struct Document<'a> {
    #[serde(flatten)]
    header: Header,
    cluster: &'a Cluster,
    hosts: Vec<HostEntry<'a>>,
    summary: String,
}

#[derive(Serialize)]
struct HostEntry<'a> {
    host: &'a str,
    /// `pass`, `fail` or `unreachable`.
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorEntry>,
    probes: &'a [ProbeResult],
    notes: &'a [String],
    pods: &'a [DnsPod],
}

pub fn json(
    hosts: &[HostVerify],
    cluster: &Cluster,
    inventory: Option<&std::path::Path>,
) -> String {
    let doc = Document {
        header: Header::new(inventory),
        cluster,
        hosts: hosts
            .iter()
            .map(|h| match &h.result {
                Err(e) => HostEntry {
                    host: &h.host,
                    status: "unreachable",
                    error: Some(e.into()),
                    probes: &[],
                    notes: &[],
                    pods: &[],
                },
                Ok(c) => HostEntry {
                    host: &h.host,
                    status: if c.failed() { "fail" } else { "pass" },
                    error: None,
                    probes: &c.probes,
                    notes: &c.notes,
                    pods: &c.pods,
                },
            })
            .collect(),
        summary: summary(hosts),
    };
    pretty_json(&doc)
}

/// JUnit XML: one testsuite per host, one testcase per path (a failure with its reason);
/// an unreachable host is one errored case, a host with nothing to ask one failed case.
pub fn junit(hosts: &[HostVerify]) -> String {
    let xml = super::check::xml;
    let mut body = String::new();
    let (mut tests, mut failures, mut errors) = (0, 0, 0);
    for h in sorted(hosts) {
        let mut cases = String::new();
        let (mut t, mut f, mut e) = (0, 0, 0);
        let host = xml(&h.host);
        match &h.result {
            Err(error) => {
                t += 1;
                e += 1;
                let _ = writeln!(
                    cases,
                    "    <testcase classname=\"dnsfix.{host}\" name=\"connect\">\n      <error type=\"{}\" message=\"{}\"/>\n    </testcase>",
                    error.kind(),
                    xml(&error.to_string())
                );
            }
            Ok(c) => {
                if c.probes.is_empty() {
                    t += 1;
                    f += 1;
                    let _ = writeln!(
                        cases,
                        "    <testcase classname=\"dnsfix.{host}\" name=\"dns\">\n      <failure message=\"{}\"/>\n    </testcase>",
                        xml(&c.notes.join("; "))
                    );
                }
                for p in &c.probes {
                    t += 1;
                    let name = xml(&format!(
                        "{} {} {}",
                        p.probe.path.word(),
                        p.probe.server,
                        p.probe.name
                    ));
                    match &p.reason {
                        Some(reason) if !p.ok => {
                            f += 1;
                            let _ = writeln!(
                                cases,
                                "    <testcase classname=\"dnsfix.{host}\" name=\"{name}\">\n      <failure message=\"{}\">from {}</failure>\n    </testcase>",
                                xml(reason),
                                xml(&p.probe.source)
                            );
                        }
                        _ => {
                            let _ = writeln!(
                                cases,
                                "    <testcase classname=\"dnsfix.{host}\" name=\"{name}\" time=\"{:.3}\"/>",
                                p.latency_ms as f64 / 1000.0
                            );
                        }
                    }
                }
            }
        }
        tests += t;
        failures += f;
        errors += e;
        let _ = write!(
            body,
            "  <testsuite name=\"{host}\" tests=\"{t}\" failures=\"{f}\" errors=\"{e}\">\n{cases}  </testsuite>\n"
        );
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"dnsfix verify\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\">\n{body}</testsuites>\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::Checked;

    /// A newcomer's walk: "0 of 1 host pass" and "cluster: 1 DNS pods".
    #[test]
    fn counts_read_as_english_for_one_and_for_many() {
        let passing = || HostVerify {
            host: "n1".into(),
            result: Ok(Checked {
                not_a_node: true,
                ..Checked::default()
            }),
        };
        let failing = || HostVerify {
            host: "n2".into(),
            result: Ok(Checked {
                notes: vec!["no kubelet resolv.conf".into()],
                ..Checked::default()
            }),
        };
        assert_eq!(summary(&[passing()]), "1 of 1 host passed");
        assert_eq!(
            summary(&[failing()]),
            "0 of 1 host passed; 1 failed (0 of 0 paths)"
        );
        assert_eq!(
            summary(&[passing(), failing()]),
            "1 of 2 hosts passed; 1 failed (0 of 0 paths)"
        );

        let cluster = |pods: usize| -> Cluster {
            let pod = serde_json::json!({
                "name": "coredns-a", "app": "coredns", "node": "n1", "phase": "Running",
                "ready": true, "restarts": 0, "waiting": null, "loop_detected": null
            });
            serde_json::from_value(serde_json::json!({
                "access": "read", "via": "cp1", "pods": vec![pod; pods]
            }))
            .expect("a cluster")
        };
        assert_eq!(
            cluster_line(&cluster(1)),
            "cluster: 1 DNS pod, read with kubectl on cp1\n"
        );
        assert_eq!(
            cluster_line(&cluster(2)),
            "cluster: 2 DNS pods, read with kubectl on cp1\n"
        );
    }
}
