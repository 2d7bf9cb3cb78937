//! k3s and RKE2 choosing the kubelet's resolv.conf themselves, down to their generated
//! fallback with 8.8.8.8, and 2001:4860:4860::8888 from k3s-io/k3s#12692 on
//! (DNS-K3S-FALLBACK).

use std::collections::BTreeSet;

use super::{Ctx, RuleOutcome, kubelet_version};
use crate::diagnose::finding::Severity;
use crate::facts::kubelet::{
    K3S_VERSION_UNKNOWN, K3sRelease, K3sVerdict, k3s_generated_servers, k3s_verdict,
};
use crate::facts::node_facts::{FlavourKind, Observed};
use crate::facts::raw::{FileState, RawFile};

pub(super) fn k3s_fallback(ctx: &Ctx) -> RuleOutcome {
    if !matches!(ctx.facts.flavour.kind, FlavourKind::K3s | FlavourKind::Rke2) {
        return RuleOutcome::NotApplicable("not a k3s/RKE2 node".into());
    }
    let rke2 = ctx.facts.flavour.kind == FlavourKind::Rke2;
    let version = kubelet_version(ctx).map(|(v, _)| v);
    let release = K3sRelease::of(version.as_deref());
    let fixed = release.gcp_fix;
    match &ctx.facts.kubelet.resolv_conf {
        Observed::Known(e) if ctx.facts.kubelet.on_rancher_fallback() => {
            // k3s/RKE2 accept a host file only if every nameserver is global unicast: a
            // loopback stub fails, and so does a link-local resolver such as AWS's
            // 169.254.169.253 (GCP's 169.254.169.254 too, before k3s-io/k3s#12692).
            let r = &ctx.facts.resolver;
            let config = ctx.facts.kubelet.config_path.as_deref();
            let mut evidence = vec![match empty_setting(ctx, config) {
                Some(at) => format!("{at}: resolv-conf is empty, the automatic choice"),
                None => format!(
                    "{}: no resolv-conf set (nor --resolv-conf, nor {}_RESOLV_CONF)",
                    config.unwrap_or("config.yaml"),
                    if rke2 { "RKE2" } else { "K3S" }
                ),
            }];
            let mut kinds = BTreeSet::new();
            for f in [&r.etc_resolv_conf, &r.systemd_uplink] {
                // Judged on the text, which k3s reads its own way (k3s_nameservers).
                let text = ctx.facts.raw.get(&f.path).and_then(RawFile::text);
                let why = match text {
                    Some(text) => passed_over(&text, release),
                    None => Some("not there".to_owned()),
                };
                if let Some(why) = why {
                    if let Some(kind) = ["loopback", "link-local", "multicast", "unspecified"]
                        .into_iter()
                        .find(|k| why.contains(&format!(" is {k}")))
                    {
                        kinds.insert(kind);
                    }
                    evidence.push(format!("{}: {why}", f.path));
                }
            }
            // What the file k3s wrote at its last start says; the version's, where it is
            // not there to say it.
            let written = match &ctx.facts.kubelet.pod_resolv_conf {
                Some(f) if f.state == FileState::Present => f
                    .parsed
                    .as_ref()
                    .map(|p| {
                        p.nameservers
                            .iter()
                            .map(|n| n.address.as_str())
                            .collect::<Vec<_>>()
                    })
                    .filter(|s| !s.is_empty()),
                _ => None,
            };
            let summary_servers = match (&written, fixed) {
                (Some(s), _) => s.join(" and "),
                (None, Some(true)) => "8.8.8.8 and 2001:4860:4860::8888".to_owned(),
                (None, _) => "8.8.8.8".to_owned(),
            };
            let file_servers = match &written {
                Some(s) if s.len() == 1 => format!("nameserver {}", s[0]),
                Some(s) => format!("nameservers {}", s.join(" and ")),
                None => k3s_generated_servers(fixed),
            };
            evidence.push(format!(
                "effective: {} (generated, {file_servers})",
                e.value
            ));
            let kinds: Vec<&str> = kinds.into_iter().collect();
            // Chosen when the service last started (before the network filled the host's
            // files in, after a reboot), where the files pass now.
            if let Some(detail) = e
                .source
                .detail
                .as_deref()
                .filter(|d| d.starts_with("chosen at its last start"))
            {
                evidence.push(format!("{}: {detail}", e.source.at()));
                return RuleOutcome::Findings(vec![ctx.finding(
                    "DNS-K3S-FALLBACK",
                    Severity::Info,
                    format!(
                        "k3s/RKE2 found no host resolv.conf with only global unicast nameservers when it last started, and gives pods a generated one with {summary_servers} until it restarts, though the host's files pass now"
                    ),
                    evidence,
                    "set resolv-conf in /etc/rancher/k3s/config.yaml (or rke2) to a file with your real upstreams, so that a start before the network is up does not fall back again; restart the k3s/rke2 service".into(),
                )]);
            }
            RuleOutcome::Findings(vec![ctx.finding(
                "DNS-K3S-FALLBACK",
                Severity::Info,
                format!(
                    "k3s/RKE2 found no host resolv.conf with only global unicast nameservers{} and gives pods a generated one with {summary_servers}",
                    if kinds.is_empty() { String::new() } else { format!(" ({} servers do not count)", kinds.join(", ")) }
                ),
                evidence,
                "set resolv-conf in /etc/rancher/k3s/config.yaml (or rke2) to a file with your real upstreams; restart the k3s/rke2 service".into(),
            )])
        }
        // Which file k3s/RKE2 take depends on their version, and the node's binary was not
        // asked: it tells.
        Observed::Unknown(why) if why.contains(K3S_VERSION_UNKNOWN) => {
            let program = if rke2 { "rke2" } else { "k3s" };
            ctx.unknown_because(
                "DNS-K3S-FALLBACK",
                why.clone(),
                format!(
                    "run `{program} --version` on the node (dnsfix facts asks it), then check again; or set resolv-conf in /etc/rancher/{program}/config.yaml, so that k3s/RKE2 do not choose"
                ),
            )
        }
        Observed::Unknown(why) => ctx.unknown("DNS-K3S-FALLBACK", why.clone()),
        _ => RuleOutcome::Pass,
    }
}

/// Where the last of the k3s/RKE2 config files (`config` and its drop-ins) that sets
/// `resolv-conf` sets it (empty, as it is where k3s/RKE2 choose: configfilearg passes
/// `--resolv-conf=`), as `file:line`.
fn empty_setting(ctx: &Ctx, config: Option<&str>) -> Option<String> {
    let files = crate::facts::kubelet::config_files(&ctx.facts.raw, config?).ok()?;
    let (file, set) = files.iter().rev().find(|(_, c)| c.resolv_conf.is_some())?;
    Some(format!("{file}:{}", set.resolv_conf.as_ref()?.line))
}

/// Why k3s/RKE2 of `release` pass over a host resolv.conf of this text, where they do (or
/// may: a version that decides and is not known).
fn passed_over(text: &str, release: K3sRelease) -> Option<String> {
    match k3s_verdict(text, release) {
        K3sVerdict::Taken(_) => None,
        K3sVerdict::Rejected(why) | K3sVerdict::VersionDecides(why) => Some(why),
        K3sVerdict::NoNameserverVersionDecides => Some("no nameserver".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::catalog;
    use crate::diagnose::finding::FindingStatus;
    use crate::facts::NodeFacts;
    use crate::inventory::Host;

    /// The GCE fixture (stub in /etc/resolv.conf, GCP's metadata server alone in the
    /// uplink file, no generated file), its k3s binary saying `version` (`None`: not asked).
    fn gce(version: Option<&str>) -> NodeFacts {
        let mut raw = crate::testing::rules_fixture("_upstream/k3s-gce-metadata-uplink");
        match version {
            Some(v) => crate::testing::set_command(
                &mut raw,
                "kubelet-version",
                &format!("k3s version {v} (0000000)\ngo version go1.24.5\n"),
                0,
            ),
            None => {
                raw.commands.remove("kubelet-version");
            }
        }
        NodeFacts::from_raw("node1", &raw)
    }

    fn outcome(facts: &NodeFacts) -> RuleOutcome {
        let host = Host::new("node1");
        k3s_fallback(&Ctx::new(&host, facts))
    }

    /// From k3s-io/k3s#12692 on (v1.31.12, v1.32.8, v1.33.4, v1.34) k3s takes the uplink
    /// file with GCP's metadata server; before, it falls back, and the finding says that
    /// a fixed version would not.
    #[test]
    fn gcps_metadata_server_falls_back_only_before_the_dns_fix() {
        for v in [
            "v1.31.12+k3s1",
            "v1.32.8+k3s1",
            "v1.33.4+k3s1",
            "v1.34.1+k3s1",
        ] {
            assert_eq!(outcome(&gce(Some(v))), RuleOutcome::Pass, "{v}");
        }
        for v in ["v1.31.11+k3s1", "v1.32.7+k3s1", "v1.33.3+k3s1"] {
            let RuleOutcome::Findings(f) = outcome(&gce(Some(v))) else {
                panic!("{v}: no finding");
            };
            assert_eq!(f.len(), 1);
            assert_eq!(f[0].status, FindingStatus::Failed);
            assert!(
                f[0].summary
                    .contains("(link-local, loopback servers do not count)"),
                "{}",
                f[0].summary
            );
            assert!(
                f[0].summary.ends_with("a generated one with 8.8.8.8"),
                "{}",
                f[0].summary
            );
            let evidence = f[0].evidence.join("\n");
            assert!(
                evidence.contains("/run/systemd/resolve/resolv.conf: 169.254.169.254 is link-local (GCP's metadata server counts only in k3s/RKE2 v1.31.12, v1.32.8, v1.33.4 and v1.34 on: k3s-io/k3s#12692)"),
                "{evidence}"
            );
            assert!(
                evidence.contains("effective: /var/lib/rancher/k3s/agent/etc/resolv.conf (generated, nameserver 8.8.8.8)"),
                "{evidence}"
            );
        }
    }

    /// With the version not known, which file the kubelet gets is unknown: the finding
    /// says so, and how to learn the version.
    #[test]
    fn an_unknown_version_with_gcps_metadata_server_cannot_tell() {
        let RuleOutcome::Findings(f) = outcome(&gce(None)) else {
            panic!("no finding");
        };
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].status, FindingStatus::Unknown);
        assert_eq!(
            Some(f[0].severity),
            catalog::rule("DNS-K3S-FALLBACK").map(|r| r.severity)
        );
        assert!(
            f[0].summary
                .starts_with("cannot tell: the k3s/RKE2 version is not known"),
            "{}",
            f[0].summary
        );
        assert!(
            f[0].remediation.contains("k3s --version"),
            "{}",
            f[0].remediation
        );
    }

    /// The generated file names both Google servers from the fix on: as written when it is
    /// there, as the version writes it when it is not.
    #[test]
    fn the_generated_file_names_both_google_servers_from_the_fix_on() {
        // AWS's link-local resolver still disqualifies the file (k3s v1.33.4+k3s1).
        let mut raw = crate::testing::rules_fixture("_upstream/k3s-gce-metadata-uplink");
        raw.file(
            "/run/systemd/resolve/resolv.conf",
            FileState::Present,
            Some(b"nameserver 169.254.169.253\n".as_slice()),
        );
        let facts = NodeFacts::from_raw("node1", &raw);
        let RuleOutcome::Findings(f) = outcome(&facts) else {
            panic!("no finding");
        };
        assert!(
            f[0].summary
                .ends_with("a generated one with 8.8.8.8 and 2001:4860:4860::8888"),
            "{}",
            f[0].summary
        );
        assert!(
            f[0].evidence
                .iter()
                .any(|e| e.ends_with("(generated, nameservers 8.8.8.8 and 2001:4860:4860::8888)")),
            "{:?}",
            f[0].evidence
        );
        // What k3s wrote wins over what the version would write.
        raw.file(
            "/var/lib/rancher/k3s/agent/etc/resolv.conf",
            FileState::Present,
            Some(b"nameserver 8.8.8.8\n".as_slice()),
        );
        let facts = NodeFacts::from_raw("node1", &raw);
        let RuleOutcome::Findings(f) = outcome(&facts) else {
            panic!("no finding");
        };
        assert!(
            f[0].summary.ends_with("a generated one with 8.8.8.8"),
            "{}",
            f[0].summary
        );
    }
}
