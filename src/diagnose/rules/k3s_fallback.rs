//! k3s and RKE2 choosing the kubelet's resolv.conf themselves, down to their generated
//! fallback with 8.8.8.8 (DNS-K3S-FALLBACK).

use std::collections::BTreeSet;

use super::{Ctx, RuleOutcome};
use crate::diagnose::finding::Severity;
use crate::facts::node_facts::{FlavourKind, Observed};

pub(super) fn k3s_fallback(ctx: &Ctx) -> RuleOutcome {
    if !matches!(ctx.facts.flavour.kind, FlavourKind::K3s | FlavourKind::Rke2) {
        return RuleOutcome::NotApplicable("not a k3s/RKE2 node".into());
    }
    match &ctx.facts.kubelet.resolv_conf {
        Observed::Known(e)
            if e.source.kind == "k3s_auto" && e.value.ends_with("/agent/etc/resolv.conf") =>
        {
            // k3s/RKE2 accept a host file only if every nameserver is global unicast: a
            // loopback stub fails, and so does a link-local resolver such as AWS's
            // 169.254.169.253.
            let r = &ctx.facts.resolver;
            let mut evidence = vec![format!(
                "{}: no resolv-conf set (nor --resolv-conf, nor {}_RESOLV_CONF)",
                ctx.facts
                    .kubelet
                    .config_path
                    .as_deref()
                    .unwrap_or("config.yaml"),
                if ctx.facts.flavour.kind == FlavourKind::Rke2 {
                    "RKE2"
                } else {
                    "K3S"
                }
            )];
            let mut kinds = BTreeSet::new();
            for f in [&r.etc_resolv_conf, &r.systemd_uplink] {
                let why = match &f.parsed {
                    Some(p) => crate::facts::kubelet::not_global_unicast(p),
                    None => Some("not there".to_owned()),
                };
                if let Some(why) = why {
                    if let Some(kind) = ["loopback", "link-local", "multicast", "unspecified"]
                        .into_iter()
                        .find(|k| why.ends_with(k))
                    {
                        kinds.insert(kind);
                    }
                    evidence.push(format!("{}: {why}", f.path));
                }
            }
            evidence.push(format!(
                "effective: {} (generated, nameserver 8.8.8.8)",
                e.value
            ));
            let kinds: Vec<&str> = kinds.into_iter().collect();
            RuleOutcome::Findings(vec![ctx.finding(
                "DNS-K3S-FALLBACK",
                Severity::Info,
                format!(
                    "k3s/RKE2 found no host resolv.conf with only global unicast nameservers{} and gives pods a generated one with 8.8.8.8",
                    if kinds.is_empty() { String::new() } else { format!(" ({} servers do not count)", kinds.join(", ")) }
                ),
                evidence,
                "set resolv-conf in /etc/rancher/k3s/config.yaml (or rke2) to a file with your real upstreams; restart the k3s/rke2 service".into(),
            )])
        }
        Observed::Unknown(why) => ctx.unknown("DNS-K3S-FALLBACK", why.clone()),
        _ => RuleOutcome::Pass,
    }
}
