//! Rendering `dnsfix facts`: a compact per-host summary for people, or the full typed
//! facts as JSON (documented in docs/facts.md).

use std::fmt::Write as _;

use serde::Serialize;

use super::{ErrorEntry, Header, pretty_json};
use crate::facts::NodeFacts;
use crate::facts::node_facts::{Effective, Observed, ResolvFile, SysctlFact};
use crate::facts::raw::FileState;
use crate::gather::HostOutcome;

#[derive(Serialize)]
struct Document<'a> {
    #[serde(flatten)]
    header: Header,
    hosts: Vec<HostEntry<'a>>,
}

#[derive(Serialize)]
struct HostEntry<'a> {
    host: &'a str,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    facts: Option<&'a NodeFacts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorEntry>,
}

pub fn json(outcomes: &[HostOutcome], inventory: Option<&std::path::Path>) -> String {
    let doc = Document {
        header: Header::new(inventory),
        hosts: outcomes
            .iter()
            .map(|o| match &o.result {
                Ok(facts) => HostEntry {
                    host: &o.host,
                    status: "ok",
                    facts: Some(facts),
                    error: None,
                },
                Err(e) => HostEntry {
                    host: &o.host,
                    status: "failed",
                    facts: None,
                    error: Some(ErrorEntry::from(e)),
                },
            })
            .collect(),
    };
    pretty_json(&doc)
}

/// Every line is one line of the report: what came from a node is escaped in it.
pub fn text(outcomes: &[HostOutcome]) -> String {
    let mut out = String::new();
    for o in outcomes {
        match &o.result {
            Ok(f) => host_text(&mut out, f),
            Err(e) => {
                escaped_line!(out, "{}: UNREACHABLE ({}): {e}", o.host, e.kind());
            }
        }
    }
    let failed = outcomes.iter().filter(|o| o.result.is_err()).count();
    escaped_line!(
        out,
        "{} host{}: {} gathered, {} unreachable",
        outcomes.len(),
        if outcomes.len() == 1 { "" } else { "s" },
        outcomes.len() - failed,
        failed
    );
    out
}

fn host_text(out: &mut String, f: &NodeFacts) {
    let os =
        f.os.as_ref()
            .and_then(|o| o.pretty_name.clone())
            .unwrap_or_else(|| "unknown OS".into());
    let flavour = format!("{:?}", f.flavour.kind).to_lowercase();
    escaped_line!(
        out,
        "{} ({}, {flavour}, {os})",
        f.host,
        f.hostname.as_deref().unwrap_or("?")
    );

    let k = &f.kubelet;
    match &k.resolv_conf {
        Observed::Known(e) => {
            escaped_line!(out, "  kubelet resolvConf  {}  ({})", e.value, source(e));
            if let Some(pod) = &k.pod_resolv_conf {
                escaped_line!(out, "                      → {}", resolv_summary(pod));
            }
        }
        Observed::Absent => {
            escaped_line!(out, "  kubelet             not found on this node");
        }
        Observed::Unknown(why) => {
            escaped_line!(out, "  kubelet resolvConf  UNKNOWN: {why}");
        }
    }
    match &k.cluster_dns {
        Observed::Known(e) => {
            let v = if e.value.is_empty() {
                "(none)".to_owned()
            } else {
                e.value.join(", ")
            };
            escaped_line!(out, "  kubelet clusterDNS  {v}  ({})", source(e));
        }
        Observed::Unknown(why) => {
            escaped_line!(out, "  kubelet clusterDNS  UNKNOWN: {why}");
        }
        Observed::Absent => {}
    }
    let etc = &f.resolver.etc_resolv_conf;
    let link = etc
        .symlink_target
        .as_deref()
        .map(|t| format!(" -> {t}"))
        .unwrap_or_default();
    escaped_line!(
        out,
        "  /etc/resolv.conf{link} [{}]  {}",
        f.resolver.resolved_mode,
        resolv_summary(etc)
    );
    escaped_line!(
        out,
        "  systemd-resolved    {}",
        format!("{:?}", f.services.systemd_resolved).to_lowercase()
    );
    for (key, short) in [
        (
            "net.bridge.bridge-nf-call-iptables",
            "bridge-nf-call-iptables",
        ),
        (
            "net.bridge.bridge-nf-call-ip6tables",
            "bridge-nf-call-ip6tables",
        ),
        ("net.ipv4.ip_forward", "ip_forward"),
    ] {
        if let Some(s) = f.sysctls.get(key) {
            escaped_line!(out, "  {short:<26}{}", sysctl_summary(s));
        }
    }
    let b = &f.br_netfilter;
    let loaded = match &b.loaded {
        Observed::Known(true) => "loaded".to_owned(),
        Observed::Known(false) => "NOT loaded".to_owned(),
        Observed::Absent => "NOT loaded".to_owned(),
        Observed::Unknown(why) => format!("unknown ({why})"),
    };
    let persisted = b
        .persisted
        .as_ref()
        .map_or("not persisted".to_owned(), |p| {
            format!("persisted {}:{}", p.path, p.line)
        });
    escaped_line!(out, "  br_netfilter              {loaded}, {persisted}");
    if let Some(addrs) = &f.nodelocaldns {
        escaped_line!(out, "  nodelocaldns              {}", addrs.join(", "));
    }
}

fn source<T>(e: &Effective<T>) -> String {
    let mut s = format!("{} {}", e.source.kind, e.source.at());
    if let Some(d) = &e.source.detail {
        let _ = write!(s, ", {d}");
    }
    for sh in &e.shadowed {
        let _ = write!(s, "; overrides {} at {}", sh.value, sh.source.at());
    }
    s
}

fn resolv_summary(f: &ResolvFile) -> String {
    match (f.state, &f.parsed) {
        (FileState::Missing, _) => "MISSING".to_owned(),
        (FileState::Directory, _) => "is a directory".to_owned(),
        (FileState::Unreadable, _) | (_, None) => "UNKNOWN (could not be read)".to_owned(),
        (FileState::Present, Some(p)) => {
            let ns: Vec<&str> = p.nameservers.iter().map(|n| n.address.as_str()).collect();
            let mut s = if ns.is_empty() {
                "no nameserver".to_owned()
            } else {
                format!("nameserver {}", ns.join(", "))
            };
            if !p.search.is_empty() {
                let _ = write!(s, "; search {}", p.search.join(" "));
            }
            s
        }
    }
}

fn sysctl_summary(s: &SysctlFact) -> String {
    let live = match &s.live {
        Observed::Known(v) => v.clone(),
        Observed::Absent => "absent".to_owned(),
        Observed::Unknown(_) => "unknown".to_owned(),
    };
    let persisted = match &s.persisted {
        Some(p) => match &p.key {
            // Another name of the setting assigns it there.
            Some(key) => format!("persisted {} at {}:{} as {key}", p.value, p.path, p.line),
            None => format!("persisted {} at {}:{}", p.value, p.path, p.line),
        },
        None => "not persisted".to_owned(),
    };
    format!("{live} ({persisted})")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A symlink target read from a node with newlines in it
    /// (`ln -s "$(printf '/run/q\n  fix: …')" /etc/resolv.conf`) once printed lines of its
    /// own in `dnsfix facts`.
    #[test]
    fn node_text_cannot_forge_lines_of_the_facts() {
        let forged =
            "/run/q\n  systemd-resolved    active\n  nodelocaldns              169.254.25.10";
        let mut raw = crate::testing::raw_from(&[]);
        raw.link(
            "/etc/resolv.conf",
            forged,
            forged,
            b"nameserver 192.0.2.53\n",
        );
        let outcome = HostOutcome {
            host: "node1".to_owned(),
            elapsed: std::time::Duration::ZERO,
            result: Ok(NodeFacts::from_raw("node1", &raw)),
        };
        let out = text(&[outcome]);
        assert!(
            out.contains("  /etc/resolv.conf -> /run/q\\n  systemd-resolved    active\\n  "),
            "{out}"
        );
        let resolved = out
            .lines()
            .filter(|l| l.contains("systemd-resolved"))
            .count();
        assert_eq!(
            resolved, 2,
            "one line of its own and one inside the target:\n{out}"
        );
        assert!(
            !out.lines().any(|l| l.starts_with("  nodelocaldns")),
            "{out}"
        );
    }
}
