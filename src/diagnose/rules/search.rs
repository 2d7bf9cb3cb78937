//! The search list pods get: over the kubelet's limits (DNS-SEARCH-LIMIT), or carrying
//! domains that are not the cluster's (DNS-STRAY-SEARCH).

use std::collections::BTreeSet;

use super::{Ctx, RuleOutcome, dns_domain, kube_minor, parsed_pod_resolv, resolv_chain};
use crate::diagnose::finding::Severity;
use crate::inventory::Host;

/// The search list a ClusterFirst pod gets, as kubelet builds it (pkg/kubelet/network/dns
/// `generateSearchesForDNSClusterFirst`): `<ns>.svc.<domain> svc.<domain> <domain>`, then the
/// host's search domains, duplicates removed (`omitDuplicates`, first occurrence kept). The
/// namespace is one the host list does not name, the longest list any pod gets.
fn pod_search<'a>(domain: &str, host: &[&'a str]) -> Vec<std::borrow::Cow<'a, str>> {
    use std::borrow::Cow;
    let mut out: Vec<Cow<'a, str>> = vec![
        Cow::Owned(format!("<ns>.svc.{domain}")),
        Cow::Owned(format!("svc.{domain}")),
        Cow::Owned(domain.to_owned()),
    ];
    for d in host {
        if !out.iter().any(|o| o.as_ref() == *d) {
            out.push(Cow::Borrowed(*d));
        }
    }
    out
}

pub(super) fn search_limit(ctx: &Ctx) -> RuleOutcome {
    let (e, f, p) = match parsed_pod_resolv(ctx, "DNS-SEARCH-LIMIT") {
        Ok(parsed) => parsed,
        Err(outcome) => return outcome,
    };
    let host = p.kubelet_search();
    let problems = search_limit_problems(ctx, &host);
    if problems.problems.is_empty() {
        return RuleOutcome::Pass;
    }
    let line = p.search_line.map(|l| format!(":{l}")).unwrap_or_default();
    RuleOutcome::Findings(vec![ctx.finding(
        "DNS-SEARCH-LIMIT",
        Severity::Warning,
        format!(
            "pods' search list over what kubelet or musl keep ({}): {}",
            problems.label,
            problems.problems.join("; ")
        ),
        vec![
            resolv_chain(e, f),
            format!(
                "{}{line}: search {}",
                f.canonical.as_deref().unwrap_or(&f.path),
                host.join(" ")
            ),
            format!("a pod gets: search {}", problems.composed.join(" ")),
        ],
        "remove search domains from the host (DHCP/netplan/NetworkManager) or give kubelet a dedicated resolv.conf".into(),
    )])
}

struct SearchLimits {
    label: String,
    composed: Vec<String>,
    problems: Vec<String>,
}

/// What kubelet would cut from the search list of a pod on this host.
fn search_limit_problems(ctx: &Ctx, host: &[&str]) -> SearchLimits {
    // ExpandedDNSConfig: beta and on by default from 1.26, GA in 1.28 (kube_features.go).
    let version = kube_minor(ctx);
    let expanded = version.as_ref().is_some_and(|(m, _)| *m >= 26);
    let (max_domains, max_chars) = if expanded { (32, 2048) } else { (6, 256) };
    let label = match &version {
        Some((_, from)) if expanded => format!("32 domains / 2048 chars, expanded since 1.26; {from}"),
        Some((_, from)) => format!("6 domains / 256 chars before 1.26; {from}"),
        None => "6 domains / 256 chars, the limits before 1.26: the kubelet's version is unknown (set kube_version)".to_owned(),
    };
    let domain = dns_domain(ctx);
    let composed: Vec<String> = pod_search(&domain, host)
        .into_iter()
        .map(|c| c.into_owned())
        .collect();
    let mut problems = Vec::new();
    if composed.len() > max_domains {
        problems.push(format!(
            "{} domains after the cluster's own and duplicates removed, at most {max_domains} are kept, so these are dropped: {}",
            composed.len(),
            composed[max_domains..].join(", ")
        ));
    }
    // "<ns>" stands for a namespace name; count it as "default".
    let joined = composed.join(" ").len() - "<ns>".len() + "default".len();
    if joined > max_chars {
        problems.push(format!(
            "the search line is {joined} chars, over {max_chars}"
        ));
    }
    if let Some(problem) = musl_drops(&composed, max_domains, max_chars) {
        problems.push(problem);
    }
    for d in host.iter().filter(|d| d.len() > 253) {
        problems.push(format!(
            "domain {}... is over 253 chars and is dropped",
            &d[..40.min(d.len())]
        ));
    }
    SearchLimits {
        label,
        composed,
        problems,
    }
}

/// Where musl (Alpine images) ignores the pod's whole search line: it reads resolv.conf a
/// line at a time into 256 bytes and skips a line that does not fit, newline included
/// (src/network/resolvconf.c: `char line[256]`, "Ignore lines that get truncated"), so it
/// keeps lines of 254 characters at most. The line is `search ` and what kubelet keeps of
/// the list (`max_domains`, `max_chars`: formDNSSearchFitsLimits drops domains from the end
/// until both fit); both turn on the pod's namespace (`<ns>`, 1 to 63 characters).
fn musl_drops(composed: &[String], max_domains: usize, max_chars: usize) -> Option<String> {
    let dropped: Vec<usize> = (1..=63)
        .filter(|&n| {
            let ns = "n".repeat(n);
            // kubelet drops a domain over 253 characters before it counts.
            let mut kept: Vec<String> = composed
                .iter()
                .map(|d| d.replace("<ns>", &ns))
                .filter(|d| d.len() <= 253)
                .take(max_domains)
                .collect();
            while !kept.is_empty() && kept.join(" ").len() > max_chars {
                kept.pop();
            }
            "search ".len() + kept.join(" ").len() > 254
        })
        .collect();
    let (first, last) = (*dropped.first()?, *dropped.last()?);
    let who = match (first, last) {
        (1, 63) => "every pod".to_owned(),
        (_, 63) => format!("pods in namespaces whose names are {first} characters or longer"),
        _ => format!("pods in some namespaces whose names are {first} to {last} characters long"),
    };
    Some(format!(
        "for {who} the search line is 255 characters or more, which musl (Alpine images) skips whole: their short names, the cluster's own included, stop resolving"
    ))
}

/// Search domains that come from somewhere nobody means for pods: DHCP on OpenStack
/// (kubespray#1951), home routers and distribution defaults. `Some((why, true))` for those;
/// a cloud DHCP suffix (AWS `ec2.internal` / `<region>.compute.internal`, GCE
/// `c.<project>.internal` / `google.internal`, Azure `reddog.microsoft.com` /
/// `<id>.internal.cloudapp.net`) is `Some((why, false))`: every node of a region or project
/// has the same one, so it is a warning only where it differs node to node (the fleet
/// check).
pub(crate) fn known_stray(domain: &str) -> Option<(&'static str, bool)> {
    let d = domain.trim_end_matches('.').to_ascii_lowercase();
    match d.as_str() {
        "openstacklocal" => Some(("OpenStack's DHCP default", true)),
        "localdomain" | "local" | "localnet" | "domain" => {
            Some(("a distribution or DHCP default", true))
        }
        "lan" | "home" | "home.arpa" | "fritz.box" => Some(("a home router's domain", true)),
        "ec2.internal" => Some(("AWS DHCP (us-east-1)", false)),
        "google.internal" => Some(("GCE DHCP", false)),
        "reddog.microsoft.com" => Some(("Azure DHCP", false)),
        _ if d.ends_with(".compute.internal") => Some(("AWS DHCP (a region's suffix)", false)),
        _ if d.starts_with("c.") && d.ends_with(".internal") => {
            Some(("GCE DHCP (a project's suffix)", false))
        }
        _ if d.ends_with(".internal.cloudapp.net") => {
            Some(("Azure DHCP (a deployment's suffix)", false))
        }
        _ => None,
    }
}

/// The search domains the inventory declares (`searchdomains`), lowercased, without a
/// trailing dot.
fn declared_search(host: &Host) -> BTreeSet<String> {
    host.var_list("searchdomains")
        .unwrap_or_default()
        .into_iter()
        .map(|d| d.trim_end_matches('.').to_lowercase())
        .collect()
}

/// The stray ones of `search` (a resolv.conf's domains as the kubelet reads them): neither
/// the cluster's `domain` nor under it, nor declared in the inventory's `searchdomains`.
/// DNS-STRAY-SEARCH reports them, and kubelet-resolvconf leaves them out of dnsfix's file
/// where the inventory asks it to (`stray_search_domains`).
pub(crate) fn strays<'a>(search: &[&'a str], domain: &str, host: &Host) -> Vec<&'a str> {
    let domain = domain.trim_end_matches('.').to_lowercase();
    let allowed = declared_search(host);
    search
        .iter()
        .copied()
        .filter(|d| {
            let d = d.trim_end_matches('.').to_lowercase();
            !(d == domain || d.ends_with(&format!(".{domain}")) || allowed.contains(&d))
        })
        .collect()
}

pub(super) fn stray_search(ctx: &Ctx) -> RuleOutcome {
    let (e, f, p) = match parsed_pod_resolv(ctx, "DNS-STRAY-SEARCH") {
        Ok(parsed) => parsed,
        Err(outcome) => return outcome,
    };
    let domain = dns_domain(ctx);
    let allowed = declared_search(ctx.host);
    let host = p.kubelet_search();
    let stray = strays(&host, &domain, ctx.host);
    if stray.is_empty() {
        return RuleOutcome::Pass;
    }
    let line = p.search_line.map(|l| format!(":{l}")).unwrap_or_default();
    let known: Vec<(String, bool)> = stray
        .iter()
        .filter_map(|d| known_stray(d).map(|(why, warn)| (format!("{d}: {why}"), warn)))
        .collect();
    let over = !search_limit_problems(ctx, &host).problems.is_empty();
    let mut evidence = vec![
        resolv_chain(e, f),
        format!(
            "{}{line}: search {}",
            f.canonical.as_deref().unwrap_or(&f.path),
            p.search.join(" ")
        ),
        format!(
            "declared: {domain} and its subdomains{}",
            if allowed.is_empty() {
                ", no searchdomains in the inventory".to_owned()
            } else {
                format!(
                    ", searchdomains: {}",
                    allowed.iter().cloned().collect::<Vec<_>>().join(" ")
                )
            }
        ),
    ];
    evidence.extend(known.iter().map(|(k, warn)| {
        if *warn {
            format!("known stray source: {k}")
        } else {
            format!("cloud DHCP suffix: {k} (harmless where every node has the same one)")
        }
    }));
    let nodeconfig = nodeadm_domains(ctx, &stray);
    evidence.extend(nodeconfig.clone());
    let (severity, summary, fix) = if known.iter().any(|(_, warn)| *warn) || over {
        (
            Severity::Warning,
            format!(
                "host search domain {} leaks into every ClusterFirst pod{}: each outside name is tried with it first (ndots:5)",
                stray.join(", "),
                if over {
                    " and pushes the list over kubelet's limits"
                } else {
                    ""
                }
            ),
            "stop DHCP/RA from pushing it (dhclient supersede domain-search, netplan dhcp4-overrides use-domains: false, NetworkManager ipv4.ignore-auto-dns) or list it in searchdomains if it is wanted",
        )
    } else {
        (
            Severity::Info,
            format!(
                "pods inherit the host search domain {}, which the inventory does not declare",
                stray.join(", ")
            ),
            "if pods should resolve short names in it, declare it in searchdomains to silence this; otherwise stop DHCP/netplan/NetworkManager from pushing it",
        )
    };
    let fix = match nodeconfig {
        Some(_) => format!(
            "remove it from spec.instance.network.domains in the NodeConfig (nodeadm writes them into systemd-resolved's Domains= at every boot), then {}; or list it in searchdomains if it is wanted",
            super::EKS_APPLY
        ),
        // AL2023 takes the DHCP domain with systemd-networkd (UseDomains=yes in the
        // .network files nodeadm writes into /run at every boot: amazon-eks-ami
        // nodeadm/cmd/nodeadm-internal/udev, eks-managed.network.tpl).
        None if ctx.facts.flavour.kind == crate::facts::node_facts::FlavourKind::Eks => {
            "if pods should resolve short names in it, declare it in searchdomains; otherwise take it out of the VPC's DHCP option set (domain-name), or give systemd-networkd UseDomains=no in a drop-in under /etc/systemd/network/ for the interface's .network file (nodeadm writes those in /run anew at every boot), in the launch template's user data".to_owned()
        }
        None => fix.to_owned(),
    };
    RuleOutcome::Findings(vec![ctx.finding(
        "DNS-STRAY-SEARCH",
        severity,
        summary,
        evidence,
        fix,
    )])
}

/// On EKS, where the NodeConfig's spec.instance.network.domains names one of `stray`:
/// nodeadm writes them as `Domains=` into /run/systemd/resolved.conf.d/40-eks.conf at every
/// boot (amazon-eks-ami nodeadm/internal/system/resolve.go, resolve.conf.tpl), so an edit
/// elsewhere does not last. The evidence line, when it does.
fn nodeadm_domains(ctx: &Ctx, stray: &[&str]) -> Option<String> {
    super::nodeadm_resolved(ctx, ("Domains=", "domains"), |d| {
        stray.iter().any(|s| {
            s.trim_end_matches('.')
                .eq_ignore_ascii_case(d.trim_end_matches('.'))
        })
    })
}
