//! The kubelet's DNS settings themselves: clusterDNS past a NodeLocal DNSCache that does
//! not listen there (DNS-NODELOCAL-CLUSTERDNS), a flag that shadows the config file
//! (DNS-KUBELET-FLAG-SHADOW).

use std::net::IpAddr;

use super::kubelet_file::only_real_servers;
use super::{Ctx, NO_KUBELET, PodResolv, RuleOutcome, pod_resolv, restart_hint};
use crate::diagnose::finding::Severity;
use crate::facts::node_facts::Observed;

pub(super) fn nodelocal_clusterdns(ctx: &Ctx) -> RuleOutcome {
    let Some(addrs) = &ctx.facts.nodelocaldns else {
        return RuleOutcome::NotApplicable("no nodelocaldns interface".into());
    };
    let (ipvs, mode_evidence) = super::kube_proxy_ipvs(ctx);
    if !ipvs {
        return RuleOutcome::NotApplicable("kube-proxy is not in ipvs mode".into());
    }
    let dns = match &ctx.facts.kubelet.cluster_dns {
        Observed::Known(e) => e,
        Observed::Absent => return RuleOutcome::NotApplicable(NO_KUBELET.into()),
        Observed::Unknown(why) => return ctx.unknown("DNS-NODELOCAL-CLUSTERDNS", why.clone()),
    };
    let local: Vec<&String> = addrs
        .iter()
        .filter(|a| {
            a.parse::<IpAddr>()
                .is_ok_and(|ip| matches!(ip, IpAddr::V4(v) if v.is_link_local()))
        })
        .collect();
    if local.is_empty() || local.iter().any(|a| dns.value.contains(a)) {
        return RuleOutcome::Pass;
    }
    RuleOutcome::Findings(vec![ctx.finding(
        "DNS-NODELOCAL-CLUSTERDNS",
        Severity::High,
        format!("nodelocaldns listens on {} but kubelet clusterDNS is {}: in ipvs mode pods never reach the local cache", local[0], dns.value.join(", ")),
        vec![
            format!("interface nodelocaldns: {}", addrs.join(", ")),
            format!("{} clusterDNS: [{}]", dns.source.at(), dns.value.join(", ")),
            mode_evidence,
        ],
        format!(
            "set clusterDNS to [{}]; {} and recreate pods",
            local[0],
            restart_hint(ctx)
        ),
    )])
}

/// kubeadm 1.11–1.18 wrote exactly this flag into kubeadm-flags.env when systemd-resolved
/// was active (cmd/kubeadm/app/phases/kubelet/flags.go); 1.19 moved it into config.yaml.
const KUBEADM_RESOLV_FLAG: (&str, &str) = (
    "/var/lib/kubelet/kubeadm-flags.env",
    "/run/systemd/resolve/resolv.conf",
);

/// The file kubelet hands pods lists servers, none loopback and none the cluster's own.
fn pod_file_clean(ctx: &Ctx) -> bool {
    match pod_resolv(ctx) {
        PodResolv::Parsed(_, _, p) => only_real_servers(ctx, p),
        _ => false,
    }
}

pub(super) fn flag_shadow(ctx: &Ctx) -> RuleOutcome {
    let k = &ctx.facts.kubelet;
    let mut evidence = Vec::new();
    let mut kubeadms_own = true;
    let label = |kind: &str| match kind {
        "k3s_config" => "resolv-conf:",
        "k3s_env" => "environment",
        _ => "resolvConf:",
    };
    if let Observed::Known(e) = &k.resolv_conf {
        for s in e.shadowed.iter().filter(|s| s.value != e.value) {
            // Only while the config says what kubeadm's defaulting wrote (/etc/resolv.conf)
            // and the flag's file is a good one: an operator's own resolvConf being ignored
            // is the incident this rule is for.
            kubeadms_own &= e.source.path.as_deref() == Some(KUBEADM_RESOLV_FLAG.0)
                && e.value == KUBEADM_RESOLV_FLAG.1
                && s.value == "/etc/resolv.conf"
                && pod_file_clean(ctx);
            evidence.push(format!(
                "{} --resolv-conf={} overrides {} {} {}",
                e.source.at(),
                e.value,
                s.source.at(),
                label(&s.source.kind),
                s.value
            ));
        }
    }
    if let Observed::Known(e) = &k.cluster_dns {
        let v = e.value.join(",");
        for s in e.shadowed.iter().filter(|s| s.value != v) {
            kubeadms_own = false;
            evidence.push(format!(
                "{} --cluster-dns={v} overrides {} clusterDNS: {}",
                e.source.at(),
                s.source.at(),
                s.value
            ));
        }
    }
    if evidence.is_empty() {
        return match (&k.resolv_conf, &k.cluster_dns) {
            (Observed::Absent, Observed::Absent) => RuleOutcome::NotApplicable(NO_KUBELET.into()),
            _ => RuleOutcome::Pass,
        };
    }
    if kubeadms_own {
        return RuleOutcome::Findings(vec![ctx.finding(
            "DNS-KUBELET-FLAG-SHADOW",
            Severity::Info,
            "kubeadm's own --resolv-conf flag overrides the config file (kubeadm 1.11-1.18 wrote it because systemd-resolved was active): an edit of resolvConf in the config file changes nothing".into(),
            evidence,
            "nothing to do while the flag is right; to change the resolv.conf, change the flag (kubeadm 1.19+ keeps it in config.yaml instead)".into(),
        )]);
    }
    RuleOutcome::Findings(vec![ctx.finding(
        "DNS-KUBELET-FLAG-SHADOW",
        Severity::Warning,
        "a kubelet flag overrides the config file: editing the config file changes nothing".into(),
        evidence,
        format!(
            "remove the flag where it is set and keep the value in the config file; {}",
            restart_hint(ctx)
        ),
    )])
}
