use super::kernel::{bridge_nf_not_persistent, bridge_nf_off, installer_bridge, ip_forward};
use super::kubelet_file::resolvconf_missing;
use super::node_resolver::host_resolver_down;
use super::search::search_limit;
use super::*;

/// The DNS-SEARCH-LIMIT fixture with five host search domains (over the legacy limits,
/// within the expanded ones), its kubelet's version left for the cluster to say.
fn five_domains() -> (Host, NodeFacts) {
    let raw = crate::testing::rules_fixture("DNS-SEARCH-LIMIT/expanded-five-domains-1.29");
    let mut facts = NodeFacts::from_raw("node1", &raw);
    facts.kubelet.version = None;
    (Host::new("node1"), facts)
}

fn cluster(kubelets: &[(&str, &str)]) -> crate::cluster::Cluster {
    crate::cluster::Cluster::Read {
        via: "cp1".into(),
        pods: Vec::new(),
        config: Default::default(),
        kubelets: kubelets
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect(),
    }
}

/// MicroK8s's wrapper turns forwarding on at every start only where its CNI manifest
/// is, and sets bridge-nf-call-iptables (never -ip6tables) itself: neither needs a
/// sysctl.d file then, but forwarding does without the manifest.
#[test]
fn microk8s_forwarding_persists_only_with_its_cni_manifest() {
    let raw = crate::testing::rules_fixture("_upstream/microk8s-1.32-debian12-joined-worker");
    let host = Host::new("node1");
    let facts = NodeFacts::from_raw("node1", &raw);
    assert_eq!(facts.flavour.kind, FlavourKind::MicroK8s);
    assert_eq!(
        ip_forward(&Ctx::in_cluster(&host, &facts, None)),
        RuleOutcome::Pass
    );
    assert_eq!(
        bridge_nf_not_persistent(&Ctx::in_cluster(&host, &facts, None)),
        RuleOutcome::Pass
    );
    let mut raw = raw.clone();
    for path in [
        "/var/snap/microk8s/7964/args/cni-network/cni.yaml",
        "/var/snap/microk8s/current/args/cni-network/cni.yaml",
    ] {
        raw.file(path, crate::facts::raw::FileState::Missing, None);
    }
    let facts = NodeFacts::from_raw("node1", &raw);
    let RuleOutcome::Findings(f) = ip_forward(&Ctx::in_cluster(&host, &facts, None)) else {
        panic!("forwarding with no CNI manifest is nobody's at boot");
    };
    assert!(
        f[0].evidence.iter().any(|e| e.contains("no sysctl.d")),
        "{f:?}"
    );
}

/// The `kubeadm-resolved-stopped-before-reboot` fixture (the kubelet on resolved's
/// uplink file in /run) with systemd-resolved `state` now and `enabled` from
/// `systemctl is-enabled` ("": not asked).
fn resolved_case(state: &str, enabled: &str) -> crate::facts::raw::RawFacts {
    let mut raw = crate::testing::rules_fixture(
        "DNS-KUBELET-RESOLVCONF-MISSING/kubeadm-resolved-stopped-before-reboot",
    );
    crate::testing::set_units(
        &mut raw,
        &[("systemd-resolved", state), ("kubelet", "active")],
    );
    raw.commands.remove("resolved-enabled");
    if !enabled.is_empty() {
        crate::testing::set_command(
            &mut raw,
            "resolved-enabled",
            &format!("{enabled}\n"),
            i32::from(enabled != "enabled"),
        );
    }
    raw
}

/// DNS-KUBELET-RESOLVCONF-MISSING on `raw`, the kubelet's resolvConf chosen by `auto`
/// (a source kind: `k3s_auto`, `k0s_auto`) where that is not "".
fn resolved_outcome(raw: &crate::facts::raw::RawFacts, auto: &str) -> RuleOutcome {
    let host = Host::new("node1");
    let mut facts = NodeFacts::from_raw("node1", raw);
    if !auto.is_empty()
        && let Observed::Known(e) = &mut facts.kubelet.resolv_conf
    {
        e.source.kind = auto.into();
    }
    resolvconf_missing(&Ctx::in_cluster(&host, &facts, None))
}

/// A kubelet file systemd-resolved keeps in /run is reported where systemd-resolved
/// does not start at the next boot (`systemctl is-enabled`, whether it runs now or
/// not), and, where that is not known, while it is inactive or failed; not where it
/// starts then, and not where k3s/RKE2 chose the file (they choose again at their next
/// start). k0s's own choice is its next start's: reported like a setting.
#[test]
fn a_file_left_by_a_stopped_systemd_resolved_is_reported_before_the_reboot() {
    // (systemd-resolved now, is-enabled, source kind, reported, "does not start at boot")
    for (state, enabled, auto, reported, not_at_boot) in [
        ("inactive", "disabled", "", true, true),
        ("active", "disabled", "", true, true),
        ("active", "masked", "", true, true),
        ("active", "linked", "", true, true),
        ("inactive", "enabled", "", false, false),
        ("failed", "enabled", "", false, false),
        ("inactive", "static", "", false, false),
        // A reboot changes these themselves (their links are in /run): is-active decides.
        ("active", "enabled-runtime", "", false, false),
        ("inactive", "masked-runtime", "", true, false),
        ("active", "masked-runtime", "", false, false),
        // Not asked, or a word systemctl 252 does not print: is-active decides.
        ("inactive", "", "", true, false),
        ("failed", "", "", true, false),
        ("active", "", "", false, false),
        ("activating", "", "", false, false),
        ("inactive", "frobnicated", "", true, false),
        ("active", "frobnicated", "", false, false),
        ("inactive", "disabled", "k3s_auto", false, false),
        ("inactive", "disabled", "k0s_auto", true, true),
    ] {
        let case = format!("resolved {state}/{enabled:?}, source {auto:?}");
        match resolved_outcome(&resolved_case(state, enabled), auto) {
            RuleOutcome::Findings(f) if reported => {
                assert_eq!(f[0].severity, Severity::High, "{case}: {f:?}");
                let word = if enabled.is_empty() {
                    String::new()
                } else {
                    format!(" and {enabled} (systemctl is-enabled)")
                };
                assert!(
                    f[0].evidence[0].ends_with(&format!(
                        "systemd-resolved, which is {state} (systemctl is-active){word}"
                    )),
                    "{case}: {f:?}"
                );
                assert_eq!(
                    f[0].summary.contains("does not start at boot"),
                    not_at_boot,
                    "{case}: {f:?}"
                );
                assert_eq!(
                    f[0].remediation.contains("systemctl unmask"),
                    enabled.starts_with("masked"),
                    "{case}: {f:?}"
                );
            }
            RuleOutcome::Pass if !reported => {}
            other => panic!("{case}: {other:?}"),
        }
    }
}

/// The node's /etc/resolv.conf made as `kind` says: a link to systemd-resolved's
/// `stub` or `uplink` file (as Ubuntu links it; `stub+nm…`: with NetworkManager running,
/// configured as [`network_manager_conf`] says for the part after `+`), a `copied-stub`
/// (`copied-stub+nm…` likewise), a file of its `own`, a link to
/// NetworkManager's (`nm-link`) or resolvconf's file, Debian's `dnsmasq` address, one
/// with `no-nameserver`, a link to nothing (`dangling`), `absent`, a `directory`, a
/// link to an uplink file with no server (`uplink-empty`), the stub link while
/// systemd-resolved knows no server (`stub-no-servers…`), to the stub file systemd
/// ships (`usr-lib-link`) or through /var/run (`var-run-link`).
fn etc_resolv_conf(raw: &mut crate::facts::raw::RawFacts, kind: &str, state: &str) {
    use crate::facts::raw::FileState;
    let etc = "/etc/resolv.conf";
    let (kind, nm) = kind.split_once('+').unwrap_or((kind, ""));
    if !nm.is_empty() {
        for (path, text) in network_manager_conf(nm) {
            raw.file(path, FileState::Present, Some(text.as_bytes()));
        }
        let units = [("systemd-resolved", state), ("NetworkManager", "active")];
        crate::testing::set_units(raw, &units);
        if nm == "nm-resolvconf-bin" {
            crate::testing::set_command(raw, "resolvconf-bin", "/usr/sbin/resolvconf\n", 0);
        }
    }
    match kind {
        "stub" | "uplink" => {
            let file = if kind == "uplink" {
                "resolv.conf"
            } else {
                "stub-resolv.conf"
            };
            let path = format!("/run/systemd/resolve/{file}");
            let body = raw.files[&path]
                .text()
                .expect("resolved's file")
                .into_owned();
            let target = format!("../run/systemd/resolve/{file}");
            raw.link(etc, &target, &path, body.as_bytes());
        }
        "copied-stub" => {
            let body = b"nameserver 127.0.0.53\noptions edns0 trust-ad\n";
            raw.file(etc, FileState::Present, Some(body));
        }
        "own" => raw.file(etc, FileState::Present, Some(b"nameserver 192.0.2.53\n")),
        // Another manager's file in /run, and Debian's dnsmasq address.
        "nm-link" | "resolvconf-link" => {
            let dir = if kind == "nm-link" {
                "NetworkManager"
            } else {
                "resolvconf"
            };
            let path = format!("/run/{dir}/resolv.conf");
            let target = format!("..{path}");
            raw.link(etc, &target, &path, b"nameserver 192.0.2.53\n");
        }
        "dnsmasq" => raw.file(etc, FileState::Present, Some(b"nameserver 127.0.1.1\n")),
        "no-nameserver" => raw.file(etc, FileState::Present, Some(b"search example.internal\n")),
        "directory" => raw.file(etc, FileState::Directory, None),
        "stub-no-servers"
        | "stub-no-servers-listening"
        | "stub-no-servers-wildcard"
        | "stub-no-servers-port"
        | "stub-no-servers-unnamed" => resolved_without_servers(raw, kind),
        // systemd-resolved's uplink file as it writes it knowing no server, and
        // (`-unnamed`) knowing only servers it leaves out of it.
        "uplink-empty" | "uplink-unnamed" => {
            let path = "/run/systemd/resolve/resolv.conf";
            let head = "# This is /run/systemd/resolve/resolv.conf managed by man:systemd-resolved(8).\n\n";
            let body = if kind == "uplink-empty" {
                format!("{head}# No DNS servers known.\nsearch .\n")
            } else {
                format!("{head}search .\n")
            };
            raw.file(path, FileState::Present, Some(body.as_bytes()));
            raw.link(
                etc,
                "../run/systemd/resolve/resolv.conf",
                path,
                body.as_bytes(),
            );
        }
        // The static stub file systemd ships, and an absolute link through /var/run
        // with no canonical path.
        "usr-lib-link" => {
            let body = b"nameserver 127.0.0.53\noptions edns0 trust-ad\n";
            let path = "/usr/lib/systemd/resolv.conf";
            raw.link(etc, "../usr/lib/systemd/resolv.conf", path, body);
        }
        "var-run-link" => {
            let body = b"nameserver 127.0.0.53\n";
            let target = "/var/run/systemd/resolve/stub-resolv.conf";
            raw.link(etc, target, target, body);
            raw.files.get_mut(etc).expect("entry").canonical = None;
        }
        "dangling" | "absent" => {
            raw.file(etc, FileState::Missing, None);
            if kind == "dangling" {
                raw.files.get_mut(etc).expect("entry").symlink_target =
                    Some("../run/systemd/resolve/stub-resolv.conf".into());
            }
        }
        other => panic!("no such /etc/resolv.conf: {other}"),
    }
}

/// The stub link, systemd-resolved knowing no server: its uplink file names none, and
/// says `# No DNS servers known.`. `-listening`: the socket table shows it on 127.0.0.53
/// and 127.0.0.54 (the lab's systemd 252 node after its DNS= drop-in went, its upstreams'
/// rows left out); `-wildcard`: it shows only a server on every address, which answers
/// there instead; `-port`: a drop-in names a server on port 5353, which the file leaves
/// out (and so does not say it knows none); `-unnamed`: the file names none and does not
/// say it knows none (a server of a link that is not a default route), the socket table
/// showing it on the stub.
fn resolved_without_servers(raw: &mut crate::facts::raw::RawFacts, kind: &str) {
    use crate::facts::raw::FileState;
    let etc = "/etc/resolv.conf";
    let uplink = "/run/systemd/resolve/resolv.conf";
    let head = "# This is /run/systemd/resolve/resolv.conf managed by man:systemd-resolved(8).\n\n";
    let body = match kind {
        "stub-no-servers-port" | "stub-no-servers-unnamed" => format!("{head}search .\n"),
        _ => format!("{head}# No DNS servers known.\nsearch .\n"),
    };
    raw.file(uplink, FileState::Present, Some(body.as_bytes()));
    let stub = "/run/systemd/resolve/stub-resolv.conf";
    let text = raw.files[stub].text().expect("stub").into_owned();
    raw.link(
        etc,
        "../run/systemd/resolve/stub-resolv.conf",
        stub,
        text.as_bytes(),
    );
    let row = |addr: &str| {
        format!(
            " 7976: {addr} 00000000:0000 07 00000000:00000000 00:00000000 00000000   997        0 5755979 2 00000000c6005cc8 0\n"
        )
    };
    let header = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n";
    let table = match kind {
        "stub-no-servers-listening" | "stub-no-servers-unnamed" => {
            Some([row("3600007F:0035"), row("3500007F:0035")].concat())
        }
        "stub-no-servers-wildcard" => Some(row("00000000:0035")),
        _ => None,
    };
    if let Some(rows) = table {
        let text = format!("{header}{rows}");
        raw.file("/proc/net/udp", FileState::Present, Some(text.as_bytes()));
        raw.file(
            "/proc/net/udp6",
            FileState::Present,
            Some(header.as_bytes()),
        );
    }
    if kind == "stub-no-servers-port" {
        let path = "/etc/systemd/resolved.conf.d/local.conf";
        raw.file(
            path,
            FileState::Present,
            Some(b"[Resolve]\nDNS=192.0.2.53:5353\n"),
        );
    }
}

/// NetworkManager's configuration files for `nm`: `nm` none at all; `nm-ubuntu`: Ubuntu's
/// /usr/lib/NetworkManager/conf.d/10-dns-resolved.conf (`dns=systemd-resolved`);
/// `nm-shadowed`: that file shadowed by an empty one of the same name in /etc; `nm-none`,
/// `nm-resolvconf`, `nm-resolved-symlink`: dns=none, rc-manager=resolvconf,
/// dns=systemd-resolved with rc-manager=symlink in /etc/NetworkManager/conf.d/; `nm-file`:
/// rc-manager=file there;
/// `nm-resolvconf-bin`: none, and a resolvconf program on the node ([`etc_resolv_conf`]
/// adds it).
fn network_manager_conf(nm: &str) -> Vec<(&'static str, &'static str)> {
    const LIB: &str = "/usr/lib/NetworkManager/conf.d/10-dns-resolved.conf";
    const ETC: &str = "/etc/NetworkManager/conf.d/90-dns.conf";
    let ubuntu = (LIB, "[main]\ndns=systemd-resolved\n");
    match nm {
        "nm" | "nm-resolvconf-bin" => vec![],
        "nm-ubuntu" => vec![ubuntu],
        "nm-shadowed" => vec![
            ubuntu,
            ("/etc/NetworkManager/conf.d/10-dns-resolved.conf", ""),
        ],
        "nm-none" => vec![ubuntu, (ETC, "[main]\ndns=none\n")],
        "nm-resolvconf" => vec![(ETC, "[main]\nrc-manager=resolvconf\n")],
        "nm-resolved-symlink" => vec![(ETC, "[main]\ndns=systemd-resolved\nrc-manager=symlink\n")],
        "nm-file" => vec![(ETC, "[main]\nrc-manager=file\n")],
        other => panic!("no such NetworkManager: {other}"),
    }
}

/// NetworkManager's route to a file of its own: remove the link, and its reload writes one.
const NM_ROUTE: &str =
    "rm /etc/resolv.conf; systemctl reload NetworkManager, and it writes its own";

/// The node's own resolver: down now where /etc/resolv.conf is missing, a directory,
/// without a nameserver, or lists only the stub of a systemd-resolved that does not run
/// (high); down after the next boot where it links into /run/systemd/resolve and
/// systemd-resolved will not start then (warning); a file of its own, or a resolved
/// that runs and starts at boot, passes; where that turns on systemd-resolved and
/// systemctl did not answer (`unknown`: no `units` output at all), it cannot tell. The fix
/// fits what the file is, and what NetworkManager does with a file of the node's own.
#[test]
fn the_hosts_own_resolver_is_down_now_or_after_the_next_boot() {
    use Severity::{High, Warning};
    // A finding's severity, and what its summary and its fix say; an Unknown finding's
    // summary starts "cannot tell".
    type Want = Option<(Severity, &'static str, &'static str)>;
    const LINK: &str = "servers (192.0.2.53) in place of the link to ../run/systemd/resolve/stub-resolv.conf; or enable systemd-resolved (systemctl enable --now systemd-resolved)";
    const UPLINK: &str = "servers (192.0.2.53) in place of the link to ../run/systemd/resolve/resolv.conf; or enable";
    const ASK: &str = "systemctl did not answer for systemd-resolved";
    // (/etc/resolv.conf, systemd-resolved now, is-enabled; the finding)
    #[rustfmt::skip]
    let cases: [(&str, &str, &str, Want); 55] = [
        ("stub", "active", "enabled", None),
        ("stub", "inactive", "enabled", Some((High, "which answers there, does not run", "start systemd-resolved (systemctl start"))),
        ("stub", "failed", "", Some((High, "does not run: the node's own lookups (image pulls, the kubelet's API server name) fail unless another DNS server listens on port 53 on all addresses", LINK))),
        ("stub", "inactive", "disabled", Some((High, "does not run", LINK))),
        ("stub", "active", "disabled", Some((Warning, "next reboot", LINK))),
        ("stub", "active", "masked", Some((Warning, "next reboot", "or unmask and enable systemd-resolved (systemctl unmask"))),
        ("stub", "activating", "disabled", Some((Warning, "next reboot", LINK))),
        ("stub", "unknown", "", Some((High, "cannot tell: /etc/resolv.conf lists only systemd-resolved's stub address, and systemctl did not say whether systemd-resolved runs", ASK))),
        ("stub", "unknown", "disabled", Some((High, "cannot tell", ASK))),
        // NetworkManager with nothing configured writes the file once the link is gone.
        ("stub+nm", "active", "disabled", Some((Warning, "next reboot", "in place of the link to ../run/systemd/resolve/stub-resolv.conf (NetworkManager manages it here, with dns unset and rc-manager unset: rm /etc/resolv.conf; systemctl reload NetworkManager, and it writes its own (with dns unset it hands DNS to systemd-resolved only while /etc/resolv.conf links to its files)); or enable"))),
        // Ubuntu's dns=systemd-resolved: NetworkManager leaves a file of the node's own alone.
        ("stub+nm-ubuntu", "inactive", "disabled", Some((High, "does not run", "in place of the link to ../run/systemd/resolve/stub-resolv.conf (NetworkManager hands DNS to systemd-resolved here (dns=systemd-resolved at /usr/lib/NetworkManager/conf.d/10-dns-resolved.conf:2) and leaves /etc/resolv.conf alone, so a file of its own stays (NetworkManager 1.28 and later;"))),
        ("stub+nm-shadowed", "inactive", "disabled", Some((High, "does not run", NM_ROUTE))),
        ("stub+nm-resolvconf-bin", "inactive", "disabled", Some((High, "does not run", "and it writes its own (with dns unset it hands DNS to systemd-resolved only while /etc/resolv.conf links to its files); resolvconf is installed here, and a NetworkManager built with resolvconf support hands the servers to it instead"))),
        ("stub+nm-none", "inactive", "disabled", Some((High, "does not run", LINK))),
        ("stub+nm-resolvconf", "inactive", "disabled", Some((High, "does not run", "(NetworkManager hands its servers to resolvconf here (rc-manager=resolvconf at /etc/NetworkManager/conf.d/90-dns.conf:2), not to /etc/resolv.conf)"))),
        ("copied-stub+nm-resolved-symlink", "inactive", "", Some((High, "does not run", "instead of systemd-resolved's stub address (NetworkManager hands DNS to systemd-resolved here (dns=systemd-resolved at /etc/NetworkManager/conf.d/90-dns.conf:2) and writes its local address over /etc/resolv.conf (rc-manager=symlink at /etc/NetworkManager/conf.d/90-dns.conf:3): set dns=none"))),
        ("uplink", "inactive", "enabled", None),
        ("uplink", "inactive", "", Some((Warning, "only if it starts systemd-resolved", UPLINK))),
        ("uplink", "active", "disabled", Some((Warning, "does not start at boot", UPLINK))),
        ("uplink", "unknown", "", Some((High, "cannot tell: /etc/resolv.conf links into systemd-resolved's /run directory, and systemctl did not say whether systemd-resolved runs or starts at boot", ASK))),
        ("uplink", "unknown", "enabled", None),
        ("uplink", "unknown", "disabled", Some((Warning, "does not start at boot", UPLINK))),
        ("uplink-empty", "active", "enabled", Some((High, "lists no nameserver", "give systemd-resolved the real servers: it runs and starts at boot but knows none"))),
        // Down all the same (glibc asks 127.0.0.1), but systemd-resolved may ask servers it
        // leaves out of the file: not "knows none".
        ("uplink-unnamed", "active", "enabled", Some((High, "lists no nameserver", "give systemd-resolved the real servers: it runs and starts at boot but its list of them, /run/systemd/resolve/resolv.conf, names none (it leaves out servers on a port other than 53"))),
        // systemd-resolved answers at its stub but knows no server to ask (netplan without
        // nameservers): every lookup fails. Not where another server answers there, nor
        // where it asks one its uplink file cannot name.
        // The socket table not read: that it answers there is not seen, and not said.
        ("stub-no-servers", "active", "enabled", Some((High, "systemd-resolved, which runs (whether it answers there is not known: the socket table was not read), knows no DNS server to ask", "give systemd-resolved the real servers: it runs and starts at boot but knows none"))),
        ("stub-no-servers", "active", "", Some((High, "knows no DNS server to ask", "give systemd-resolved the real servers: it runs but knows none"))),
        // Enabled again, it still knows no server: the servers go with it.
        ("stub-no-servers", "active", "disabled", Some((High, "knows no DNS server to ask", "in place of the link to ../run/systemd/resolve/stub-resolv.conf; or enable systemd-resolved (systemctl enable --now systemd-resolved) and give it the real servers, as it runs but knows none: with a drop-in of its own (mkdir -p /etc/systemd/resolved.conf.d;"))),
        ("stub-no-servers", "inactive", "enabled", Some((High, "which answers there, does not run", "start systemd-resolved (systemctl start"))),
        ("stub-no-servers-listening", "active", "enabled", Some((High, "systemd-resolved, which answers there, knows no DNS server to ask", "give systemd-resolved the real servers: it runs and starts at boot but knows none; with a drop-in of its own (mkdir -p /etc/systemd/resolved.conf.d; printf '[Resolve]\\nDNS=%s\\n' <ADDR> <ADDR> > /etc/systemd/resolved.conf.d/zz-dnsfix-upstream.conf; systemctl restart systemd-resolved)"))),
        // No nameserver line without `# No DNS servers known.`: it asks servers it leaves
        // out, or none.
        ("stub-no-servers-unnamed", "active", "enabled", Some((High, "cannot tell: /etc/resolv.conf lists only systemd-resolved's stub address, and /run/systemd/resolve/resolv.conf, systemd-resolved's list of the servers it asks, names none without saying `# No DNS servers known.`", "resolvectl status"))),
        ("stub-no-servers-wildcard", "active", "enabled", None),
        ("stub-no-servers-port", "active", "enabled", None),
        ("usr-lib-link", "inactive", "disabled", Some((High, "does not run", "in place of the link to ../usr/lib/systemd/resolv.conf; or enable"))),
        ("usr-lib-link", "active", "enabled", None),
        ("usr-lib-link", "active", "disabled", Some((Warning, "does not start at boot: after the next reboot nothing answers there", "in place of the link to ../usr/lib/systemd/resolv.conf; or enable"))),
        ("usr-lib-link", "unknown", "", Some((High, "cannot tell", ASK))),
        ("var-run-link", "active", "disabled", Some((Warning, "does not start at boot", "in place of the link to /var/run/systemd/resolve/stub-resolv.conf"))),
        ("copied-stub", "inactive", "", Some((High, "does not run", "servers (192.0.2.53) instead of systemd-resolved's stub address; or enable"))),
        ("copied-stub", "active", "enabled", None),
        ("copied-stub", "active", "disabled", Some((Warning, "does not start at boot", "servers (192.0.2.53) instead of systemd-resolved's stub address; or enable"))),
        ("copied-stub", "unknown", "", Some((High, "cannot tell: /etc/resolv.conf lists only systemd-resolved's stub address", ASK))),
        ("own", "inactive", "disabled", None),
        ("own", "unknown", "", None),
        ("nm-link", "inactive", "disabled", None),
        ("resolvconf-link", "inactive", "", None),
        ("dnsmasq", "inactive", "", None),
        ("no-nameserver", "active", "enabled", Some((High, "lists no nameserver: the node's own lookups", "add the real servers to /etc/resolv.conf, its other lines kept: [ -z \"$(tail -c1 /etc/resolv.conf)\" ] || echo >> /etc/resolv.conf; printf 'nameserver %s\\n' 192.0.2.53 >> /etc/resolv.conf (nothing rewrites it here)"))),
        ("directory", "active", "enabled", Some((High, "is a directory: glibc fails every lookup on the read error (resolv/res_init.c), and Go (containerd, the kubelet) asks 127.0.0.1 and ::1 instead", "replace the directory with a file that lists the real servers: look at it first (findmnt /etc/resolv.conf; ls -la /etc/resolv.conf), then rmdir /etc/resolv.conf (it refuses a directory that is not empty or is a mount point); printf 'nameserver %s\\n' 192.0.2.53 > /etc/resolv.conf (nothing rewrites it here)"))),
        ("dangling", "inactive", "", Some((High, "is a link to nothing: the node's own lookups", LINK))),
        // After the boot: the gather asks is-enabled where the link dangles.
        ("dangling", "inactive", "masked", Some((High, "is a link to nothing", "or unmask and enable systemd-resolved"))),
        ("dangling", "inactive", "not-found", Some((High, "is a link to nothing", "or install systemd-resolved, which is not on the node"))),
        // rc-manager=file writes through the link to nothing (nm-dns-manager.c
        // update_resolv_conf @355bc902), with dns unset in systemd-resolved's mode (the link
        // names its stub file): its stub address, so the link has to go first.
        ("dangling+nm-file", "inactive", "disabled", Some((High, "is a link to nothing", "rm /etc/resolv.conf; systemctl reload NetworkManager, and it writes its own (left as it is, the link to nothing is written through: rc-manager=file writes systemd-resolved's stub address (nameserver 127.0.0.53), which nothing answers while systemd-resolved does not run, into /etc/../run/systemd/resolve/stub-resolv.conf where that directory exists, so the rm comes first)"))),
        // Running and enabled, and still a link to nothing: the link is wrong, not the servers.
        ("dangling", "active", "enabled", Some((High, "is a link to nothing", "link /etc/resolv.conf to systemd-resolved's stub file again (ln -sfn ../run/systemd/resolve/stub-resolv.conf /etc/resolv.conf)"))),
        ("absent", "inactive", "disabled", Some((High, "does not exist", "write /etc/resolv.conf with the real servers: printf 'nameserver %s\\n' 192.0.2.53 > /etc/resolv.conf (nothing rewrites it here)"))),
        ("absent", "unknown", "", Some((High, "does not exist", "write /etc/resolv.conf with the real servers: printf 'nameserver %s\\n' 192.0.2.53 > /etc/resolv.conf"))),
    ];
    for (kind, state, enabled, want) in cases {
        let case = format!("{kind}, {state}, {enabled}");
        let mut raw = resolved_case(state, enabled);
        etc_resolv_conf(&mut raw, kind, state);
        if state == "unknown" {
            // No systemctl: the gather has no `systemctl is-active` output at all.
            raw.commands.remove("units");
        }
        let host = Host::new("node1");
        let facts = NodeFacts::from_raw("node1", &raw);
        match (
            host_resolver_down(&Ctx::in_cluster(&host, &facts, None)),
            want,
        ) {
            (RuleOutcome::Pass, None) => {}
            (RuleOutcome::Findings(f), Some(want)) => resolver_finding_is(&case, kind, &f, want),
            (other, _) => panic!("{case}: {other:?}"),
        }
    }
}

/// Where the gather stopped a systemctl that did not answer (systemd busy or stuck), the
/// resolver that turns on systemd-resolved is unknown as without systemctl, but says so,
/// and what to do is to wait for systemd, not to ask systemctl by hand.
#[test]
fn a_systemctl_stopped_unanswered_says_systemd_did_not_answer() {
    for kind in ["stub", "uplink"] {
        let mut raw = resolved_case("unknown", "");
        etc_resolv_conf(&mut raw, kind, "unknown");
        crate::testing::set_command(&mut raw, "units", "", 124);
        crate::testing::set_command(&mut raw, "systemctl-cut", "10\n", 0);
        let host = Host::new("node1");
        let facts = NodeFacts::from_raw("node1", &raw);
        let RuleOutcome::Findings(f) = host_resolver_down(&Ctx::in_cluster(&host, &facts, None))
        else {
            panic!("{kind}: no finding");
        };
        resolver_finding_is(
            kind,
            kind,
            &f,
            (
                Severity::High,
                "cannot tell",
                "systemctl did not answer for systemd-resolved (systemctl did not answer within \
                 10s and was stopped: systemd (PID 1) is busy or stuck; a node rebooted with \
                 hundreds of kubelet mounts to make can hold it for minutes): check again once \
                 `systemctl is-system-running` answers; meanwhile `pgrep -x systemd-resolve` \
                 says whether systemd-resolved runs",
            ),
        );
    }
}

/// One row of [`the_hosts_own_resolver_is_down_now_or_after_the_next_boot`]: the finding
/// has the severity, status, summary and fix the row wants, and names NetworkManager only
/// where it runs and does something with the file.
fn resolver_finding_is(
    case: &str,
    kind: &str,
    f: &[Finding],
    (severity, summary, fix): (Severity, &str, &str),
) {
    assert_eq!(f.len(), 1, "{case}: {f:?}");
    assert_eq!(f[0].severity, severity, "{case}: {f:?}");
    let status = if summary.starts_with("cannot tell") {
        FindingStatus::Unknown
    } else {
        FindingStatus::Failed
    };
    assert_eq!(f[0].status, status, "{case}: {f:?}");
    assert!(f[0].summary.contains(summary), "{case}: {f:?}");
    assert!(f[0].remediation.contains(fix), "{case}: {f:?}");
    // NetworkManager is named only where it runs and does something with
    // the file; its rm-and-reload route only where it then writes one.
    let nm = kind.contains("+nm") && !kind.ends_with("+nm-none");
    let r = &f[0].remediation;
    assert_eq!(
        r.contains("NetworkManager manages it here") || r.contains("NetworkManager hands"),
        nm,
        "{case}: {f:?}"
    );
    assert_eq!(
        f[0].remediation.contains(NM_ROUTE),
        kind.ends_with("+nm")
            || kind.ends_with("+nm-shadowed")
            || kind.ends_with("+nm-resolvconf-bin")
            || kind.ends_with("+nm-file"),
        "{case}: {f:?}"
    );
    // NetworkManager's effective settings are evidence where it runs.
    assert_eq!(
        f[0].evidence
            .iter()
            .any(|e| e.starts_with("NetworkManager is active, with ")),
        kind.contains("+nm"),
        "{case}: {f:?}"
    );
    // "knows none" only where systemd-resolved's file says it knows none.
    assert_eq!(
        f[0].remediation.contains("knows none"),
        (summary.contains("lists no nameserver") || summary.contains("knows no DNS server"))
            && fix.contains("knows none"),
        "{case}: {f:?}"
    );
}

/// The dhcpcd node of [`writer_node`] (nothing running but the kubelet) with
/// /etc/resolv.conf made as `etc` says (`missing`, `directory`, `resolvconf-link`: a link to
/// Debian resolvconf's file, which is not there; `netconfig-link`: a link to netconfig's
/// file, with no server; else the file's text), `programs` running (`dhcpcd`,
/// `openresolv`: its resolvconf program, `dhclient`, `dhclient-cf`: one with its own `-cf`
/// file, `dhclient-v4`, `dhclient-v6`: ifupdown's DHCPv4 and DHCPv6 ones, `dhclient-nm`: NetworkManager's, `udhcpc`: busybox's with its default script,
/// `netconfig`: SUSE's /etc/sysconfig/network/config, `nm`: NetworkManager 1.28 with no
/// configuration of its own, `nm-none`: the same with `dns=none`, `nm-at-boot`: stopped
/// but enabled) or facts (`locked`: an immutable file; `v6`: the inventory's servers are
/// IPv6, `v4v6`: one of each), and the inventory's upstream_dns_servers:
/// DNS-HOST-RESOLVER-DOWN's finding.
fn owner_down_finding(etc: &str, programs: &[&str]) -> Finding {
    use crate::facts::raw::FileState;
    let mut raw = writer_node(&[]);
    let path = "/etc/resolv.conf";
    match etc {
        "missing" => raw.file(path, FileState::Missing, None),
        "directory" => raw.file(path, FileState::Directory, None),
        "resolvconf-link" => {
            raw.file(path, FileState::Missing, None);
            raw.files.get_mut(path).expect("entry").symlink_target =
                Some("../run/resolvconf/resolv.conf".into());
        }
        "netconfig-link" => raw.link(
            path,
            "/run/netconfig/resolv.conf",
            "/run/netconfig/resolv.conf",
            b"search example.internal\n",
        ),
        text => raw.file(path, FileState::Present, Some(text.as_bytes())),
    }
    let mut units = vec![("kubelet", "active")];
    let mut servers = serde_json::json!(["192.0.2.53", "198.51.100.53"]);
    for program in programs {
        match *program {
            "dhcpcd" => with_process(&mut raw, program, 612, b""),
            // Its command line not read: which family it serves is not known (the
            // fixture's /proc/612/cmdline is dhcpcd's).
            "dhclient" => {
                raw.files.remove("/proc/612/cmdline");
                with_process(&mut raw, program, 612, b"")
            }
            "dhclient-cf" => with_process(
                &mut raw,
                "dhclient",
                612,
                b"/sbin/dhclient\0-cf\0/etc/dhcp/dhclient-ens5.conf\0ens5\0",
            ),
            // Debian's ifupdown for `inet dhcp` (-4) and `inet6 dhcp` (-6): pexip/os-ifupdown
            // @0b51fb82 inet.defn and inet6.defn, linux `dhcp` methods.
            "dhclient-v4" => with_process(
                &mut raw,
                "dhclient",
                612,
                b"/sbin/dhclient\0-4\0-v\0-pf\0/run/dhclient.ens5.pid\0-lf\0/var/lib/dhcp/dhclient.ens5.leases\0-I\0-df\0/var/lib/dhcp/dhclient6.ens5.leases\0ens5\0",
            ),
            "dhclient-v6" => with_process(
                &mut raw,
                "dhclient",
                614,
                b"/sbin/dhclient\0-6\0-pf\0/run/dhclient6.ens5.pid\0-lf\0/var/lib/dhcp/dhclient6.ens5.leases\0-I\0-df\0/var/lib/dhcp/dhclient.ens5.leases\0ens5\0",
            ),
            // NetworkManager's own dhclient (src/core/dhcp/nm-dhcp-dhclient.c @1.40.0).
            "dhclient-nm" => with_process(
                &mut raw,
                "dhclient",
                612,
                b"/sbin/dhclient\0-d\0-q\0-sf\0/usr/libexec/nm-dhcp-helper\0-pf\0/run/NetworkManager/dhclient-ens5.pid\0ens5\0",
            ),
            "udhcpc" => with_process(&mut raw, "udhcpc", 613, b"udhcpc\0-i\0eth0\0"),
            "netconfig" => raw.file(
                crate::facts::resolv_writer::NETCONFIG_CONF,
                FileState::Present,
                Some(b"NETCONFIG_DNS_POLICY=\"auto\"\n"),
            ),
            "locked" => crate::testing::set_command(
                &mut raw,
                crate::facts::network_manager::RESOLV_CONF_ATTR,
                "----i---------e------- /etc/resolv.conf\n",
                0,
            ),
            "v6" => servers = serde_json::json!(["2001:db8::53"]),
            "v4v6" => servers = serde_json::json!(["192.0.2.53", "2001:db8::53"]),
            "nm-none" => {
                let dir = "/usr/lib/x86_64-linux-gnu/NetworkManager/1.28.0";
                raw.file(dir, FileState::Directory, None);
                units.push(("NetworkManager", "active"));
                raw.file(
                    "/etc/NetworkManager/conf.d/dns.conf",
                    FileState::Present,
                    Some(b"[main]\ndns=none\n"),
                );
            }
            "openresolv" => {
                crate::testing::set_command(&mut raw, "resolvconf-bin", "/usr/sbin/resolvconf\n", 0)
            }
            "nm" | "nm-at-boot" => {
                let dir = "/usr/lib/x86_64-linux-gnu/NetworkManager/1.28.0";
                raw.file(dir, FileState::Directory, None);
                if *program == "nm" {
                    units.push(("NetworkManager", "active"));
                } else {
                    let wants = crate::facts::raw::NM_UNIT_LINKS[0];
                    let unit = "/usr/lib/systemd/system/NetworkManager.service";
                    raw.link(wants, unit, unit, b"");
                    raw.file(unit, FileState::Present, Some(b"[Unit]\n"));
                }
            }
            other => panic!("no such program: {other}"),
        }
    }
    crate::testing::set_units(&mut raw, &units);
    let mut host = Host::new("node1");
    host.vars.insert("upstream_dns_servers".into(), servers);
    let facts = NodeFacts::from_raw("node1", &raw);
    match host_resolver_down(&Ctx::in_cluster(&host, &facts, None)) {
        RuleOutcome::Findings(f) if f.len() == 1 => f[0].clone(),
        other => panic!("{etc} {programs:?}: {other:?}"),
    }
}

/// Where /etc/resolv.conf is not systemd-resolved's and is down (missing, a directory, no
/// nameserver line), the fix names the step of the program that writes it, with the
/// servers known (the inventory's here), in place of "through whatever manages it":
/// dhcpcd's and openresolv's own settings (resolv_writer's `Writer::fix`), NetworkManager's
/// connection or global DNS (NetworkManager.conf(5) `[global-dns-domain-*]` `servers`),
/// the file itself where nothing rewrites it (and dhclient's dhclient.conf where dhclient
/// runs), resolvconf's `base` for a link to its file.
#[test]
fn a_resolver_down_is_fixed_through_the_program_that_writes_it() {
    const NO_SERVER: &str = "search example.internal\n";
    const REAPPLY: &str = "nmcli connection modify CON ipv4.dns \"192.0.2.53 198.51.100.53\", then nmcli device reapply IFACE (nmcli connection show --active names CON, nmcli -g GENERAL.DEVICES connection show CON its IFACE), which applies them without deactivating the device (NetworkManager 1.36 to 1.40 restart DHCP on a DHCP connection and remove its address until the new lease comes: from a console there); only where reapply refuses (a device not activated, or other changes to the connection it cannot apply: \"Can't reapply any changes to 'SETTING' setting\"), nmcli connection up CON, which deactivates the device, removing its addresses and routes, and activates it again (DHCP anew: a node reached over it may be lost)";
    const APPEND: &str = "add the real servers to /etc/resolv.conf, its other lines kept: [ -z \"$(tail -c1 /etc/resolv.conf)\" ] || echo >> /etc/resolv.conf; printf 'nameserver %s\\n' 192.0.2.53 198.51.100.53 >> /etc/resolv.conf";
    const RMDIR: &str = "look at it first (findmnt /etc/resolv.conf; ls -la /etc/resolv.conf), then rmdir /etc/resolv.conf (it refuses a directory that is not empty or is a mount point)";
    #[rustfmt::skip]
    let cases: Vec<(&str, &[&str], String)> = vec![
        ("# Generated by dhcpcd from ens5.dhcp\n", &["dhcpcd"], "dhcpcd writes /etc/resolv.conf here at every lease and renewal, and when an interface goes up or down: give dhcpcd the servers in /etc/dhcpcd.conf (`static domain_name_servers=192.0.2.53 198.51.100.53`, in an `interface NAME` block for one interface)".into()),
        ("# Generated by resolvconf\n", &["openresolv"], "openresolv writes /etc/resolv.conf here whenever a program hands it servers (resolvconf -a: a DHCP client, ifupdown, a VPN) and at every resolvconf -u: give openresolv the servers in /etc/resolvconf.conf (`name_servers=\"192.0.2.53 198.51.100.53\"` puts them".into()),
        (NO_SERVER, &["udhcpc"], "udhcpc writes /etc/resolv.conf here".into()),
        (NO_SERVER, &["udhcpc"], "`dns=\"192.0.2.53 198.51.100.53\"`".into()),
        ("### /etc/resolv.conf file autogenerated by netconfig!\n", &["netconfig"], "netconfig writes /etc/resolv.conf here".into()),
        ("### /etc/resolv.conf file autogenerated by netconfig!\n", &["netconfig"], "`NETCONFIG_DNS_STATIC_SERVERS=\"192.0.2.53 198.51.100.53\"`".into()),
        ("netconfig-link", &["netconfig"], "`NETCONFIG_DNS_STATIC_SERVERS=\"192.0.2.53 198.51.100.53\"`".into()),
        (NO_SERVER, &[], format!("{APPEND} (nothing rewrites it here)")),
        (NO_SERVER, &["locked"], format!("it is locked (lsattr: ----i---------e-------): chattr -i -a /etc/resolv.conf first, and set the flag it had again after (chattr +i, or +a); {APPEND} (nothing rewrites it here)")),
        (NO_SERVER, &["dhclient"], format!("{APPEND}; dhclient runs here and writes the file anew at every lease: put the IPv4 servers in its dhclient.conf (/etc/dhcp/dhclient.conf on Debian and Ubuntu, else /etc/dhclient.conf) (`prepend domain-name-servers 192.0.2.53, 198.51.100.53;`): dhclient reads that file only at its start, and restarting the unit that runs it (systemctl status 612 names it: networking, ifup@IFACE or network) takes the interface down and releases its lease, so do that from a console or in a maintenance window, or let the next boot do it")),
        (NO_SERVER, &["dhclient-cf"], "put the IPv4 servers in /etc/dhcp/dhclient-ens5.conf (`prepend domain-name-servers 192.0.2.53, 198.51.100.53;`)".into()),
        (NO_SERVER, &["dhclient", "v6"], "dhclient runs here and writes the file anew at every lease: put the IPv6 servers in its dhclient.conf (/etc/dhcp/dhclient.conf on Debian and Ubuntu, else /etc/dhclient.conf) (`prepend dhcp6.name-servers 2001:db8::53;`), which only a DHCPv6 dhclient (-6) takes: a DHCPv4 one writes the file from its lease's IPv4 servers (`domain-name-servers`) alone: dhclient reads that file only at its start".into()),
        (NO_SERVER, &["dhclient", "v4v6"], "put the IPv4 servers in its dhclient.conf (/etc/dhcp/dhclient.conf on Debian and Ubuntu, else /etc/dhclient.conf) (`prepend domain-name-servers 192.0.2.53;`) and, for a DHCPv6 dhclient (-6), the IPv6 ones (`prepend dhcp6.name-servers 2001:db8::53;`): dhclient reads that file only at its start".into()),
        // Every dhclient known to be a DHCPv4 one: no line gives the file IPv6 servers.
        (NO_SERVER, &["dhclient-v4", "v6"], "dhclient runs here and writes the file anew at every lease: no dhclient.conf line gives the file the IPv6 servers (2001:db8::53): no dhclient here (pid 612) is a DHCPv6 client (-6), and a DHCPv4 one writes the file from its lease's IPv4 servers (`domain-name-servers`) alone, so `prepend dhcp6.name-servers` changes nothing; give IPv4 servers instead, or make /etc/resolv.conf a file nothing rewrites: an enter hook that redefines make_resolv_conf to do nothing (dhclient-script(8), HOOKS: printf 'make_resolv_conf() { :; }\\n' > /etc/dhcp/dhclient-enter-hooks.d/zz-dnsfix on Debian and Ubuntu; /etc/dhclient-enter-hooks with ISC's own script), then the servers above stay".into()),
        (NO_SERVER, &["dhclient-v4", "v4v6"], "put the IPv4 servers in its dhclient.conf (/etc/dhcp/dhclient.conf on Debian and Ubuntu, else /etc/dhclient.conf) (`prepend domain-name-servers 192.0.2.53;`): dhclient reads that file only at its start, and restarting the unit that runs it (systemctl status 612 names it: networking, ifup@IFACE or network) takes the interface down and releases its lease, so do that from a console or in a maintenance window, or let the next boot do it; no dhclient.conf line gives the file the IPv6 servers (2001:db8::53): no dhclient here (pid 612) is a DHCPv6 client (-6)".into()),
        // A DHCPv6 dhclient runs beside the DHCPv4 one: each family's line, the -6 one named.
        (NO_SERVER, &["dhclient-v4", "dhclient-v6", "v4v6"], "put the IPv4 servers in its dhclient.conf (/etc/dhcp/dhclient.conf on Debian and Ubuntu, else /etc/dhclient.conf) (`prepend domain-name-servers 192.0.2.53;`) and put the IPv6 servers in its dhclient.conf (/etc/dhcp/dhclient.conf on Debian and Ubuntu, else /etc/dhclient.conf) (`prepend dhcp6.name-servers 2001:db8::53;`), which the DHCPv6 dhclient here (pid 614: -6, or a DHCPv6 mode) takes: dhclient reads that file only at its start, and restarting the unit that runs it (systemctl status 612 614 names it".into()),
        // A DHCPv6 dhclient beside one whose command line is not known: not said to be a
        // DHCPv4 one.
        (NO_SERVER, &["dhclient", "dhclient-v6", "v6"], "which the DHCPv6 dhclient here (pid 614: -6, or a DHCPv6 mode) takes".into()),
        // Both families' dhclients: each writes the whole file from its own lease.
        (NO_SERVER, &["dhclient-v4", "dhclient-v6", "v4v6"], "; a DHCPv4 and a DHCPv6 dhclient both run here, and each writes the whole file from its own lease, so it holds the last lease's family alone; to keep servers of both, keep dhclient from writing it (printf 'make_resolv_conf() { :; }\\n' > /etc/dhcp/dhclient-enter-hooks.d/zz-dnsfix on Debian and Ubuntu) and make /etc/resolv.conf a file of your own".into()),
        (NO_SERVER, &["dhclient-v6", "v6"], "put the IPv6 servers in its dhclient.conf (/etc/dhcp/dhclient.conf on Debian and Ubuntu, else /etc/dhclient.conf) (`prepend dhcp6.name-servers 2001:db8::53;`), which the DHCPv6 dhclient here (pid 614: -6, or a DHCPv6 mode) takes: dhclient reads".into()),
        (NO_SERVER, &["dhclient-nm"], "printf 'nameserver %s\\n' 192.0.2.53 198.51.100.53 >> /etc/resolv.conf (nothing rewrites it here)".into()),
        ("missing", &[], "write /etc/resolv.conf with the real servers: printf 'nameserver %s\\n' 192.0.2.53 198.51.100.53 > /etc/resolv.conf (nothing rewrites it here)".into()),
        ("directory", &[], format!("replace the directory with a file that lists the real servers: {RMDIR}; printf 'nameserver %s\\n' 192.0.2.53 198.51.100.53 > /etc/resolv.conf")),
        (NO_SERVER, &["nm"], format!("NetworkManager writes /etc/resolv.conf here from its connections' servers, and they give none: give it the real servers (192.0.2.53, 198.51.100.53), on its connection, {REAPPLY}; or global DNS, `[global-dns-domain-*]` `servers=192.0.2.53,198.51.100.53` in a file under /etc/NetworkManager/conf.d/ (then systemctl reload NetworkManager;")),
        ("missing", &["nm"], "systemctl reload NetworkManager: it writes /etc/resolv.conf here from its connections' servers (where they give none, give it the real servers (192.0.2.53, 198.51.100.53): nmcli connection modify CON".into()),
        ("directory", &["nm"], format!("/etc/resolv.conf is a directory: {RMDIR}; systemctl reload NetworkManager: it writes /etc/resolv.conf here")),
        (NO_SERVER, &["nm-none"], format!("{APPEND} (nothing rewrites it here)")),
        (NO_SERVER, &["nm-at-boot"], format!("{APPEND}; NetworkManager, stopped now but enabled, writes the file anew at its next start from its connections' servers: give it the real servers for then, global DNS, `[global-dns-domain-*]` `servers=192.0.2.53,198.51.100.53` in a file under /etc/NetworkManager/conf.d/ (read at its start;")),
        ("resolvconf-link", &[], "/etc/resolv.conf links to ../run/resolvconf/resolv.conf, another program's file: give that program the real servers (192.0.2.53, 198.51.100.53) (Debian's resolvconf: `nameserver` lines in /etc/resolvconf/resolv.conf.d/base, then resolvconf -u, which writes the file again where its updates are enabled, as its unit's start enables them (resolvconf --updates-are-enabled; where they are not, it only marks the update postponed, made at resolvconf --enable-updates); not systemctl restart resolvconf, whose stop drops a pending update, so that its start writes nothing (resolvconf 1.87 and later); it keeps three servers at most, the interfaces' before base's, and none after a loopback one (127.*, ::1) unless /etc/default/resolvconf sets TRUNCATE_NAMESERVER_LIST_AFTER_LOOPBACK_ADDRESS=no (it is on by default): [ -z \"$(tail -c1 /etc/resolvconf/resolv.conf.d/base)\" ] || echo >> /etc/resolvconf/resolv.conf.d/base; printf 'nameserver %s\\n' 192.0.2.53 198.51.100.53 >> /etc/resolvconf/resolv.conf.d/base; resolvconf -u); or make /etc/resolv.conf a file of its own".into()),
    ];
    for (etc, programs, fix) in cases {
        let f = owner_down_finding(etc, programs);
        assert_eq!(f.id, "DNS-HOST-RESOLVER-DOWN", "{f:?}");
        assert!(
            f.remediation.contains(&fix),
            "{etc} {programs:?}: {}",
            f.remediation
        );
        assert!(!f.remediation.contains("whatever manages it"), "{f:?}");
        // Never the whole-tree removal, never a connection taken down as the first step,
        // and dhclient.conf only where a dhclient-script of its own runs.
        assert!(!f.remediation.contains("rm -r "), "{f:?}");
        // The note of both families only where a DHCPv4 and a DHCPv6 dhclient both run.
        assert_eq!(
            f.remediation.contains("both run here"),
            programs.contains(&"dhclient-v4") && programs.contains(&"dhclient-v6"),
            "{etc} {programs:?}: {}",
            f.remediation
        );
        assert!(!f.remediation.contains("then nmcli connection up"), "{f:?}");
        assert_eq!(
            f.remediation.contains("dhclient runs here"),
            programs
                .iter()
                .any(|p| ["dhclient", "dhclient-cf", "dhclient-v4", "dhclient-v6"].contains(p)),
            "{etc} {programs:?}: {}",
            f.remediation
        );
    }
}

/// systemd-resolved runs, answers at its stub and knows no server: the fix gives it the
/// servers in a drop-in (its directory made first), and also names the program that hands
/// it a link's servers on this node: NetworkManager's connection where NetworkManager runs
/// and hands DNS to it (Ubuntu's dns=systemd-resolved), systemd-networkd's (netplan's
/// `nameservers`) where that runs; neither where neither runs.
#[test]
fn a_systemd_resolved_without_servers_is_given_them_where_this_node_takes_them() {
    const DROP_IN: &str = "give systemd-resolved the real servers (192.0.2.53): it runs and starts at boot but knows none; with a drop-in of its own (mkdir -p /etc/systemd/resolved.conf.d; printf '[Resolve]\\nDNS=%s\\n' '192.0.2.53' > /etc/systemd/resolved.conf.d/zz-dnsfix-upstream.conf; systemctl restart systemd-resolved)";
    const NM: &str = "; or NetworkManager's connection, whose servers it hands to systemd-resolved here (nmcli connection modify CON ipv4.dns \"192.0.2.53\", then nmcli device reapply IFACE";
    const NETPLAN: &str = "; or the interface's servers in systemd-networkd, which hands them to systemd-resolved (with netplan, whose files are /run/systemd/network/10-netplan-*: `nameservers: {addresses: [192.0.2.53]}` under the interface in /etc/netplan/, then netplan apply; without it: DNS=192.0.2.53 in the [Network] section";
    // (NetworkManager's configuration, as network_manager_conf names it, "" for none;
    // systemd-networkd runs; the fix names NetworkManager's connection, netplan)
    for (nm, networkd, names_nm, names_netplan) in [
        ("", false, false, false),
        ("", true, false, true),
        ("nm-ubuntu", false, true, false),
        // NetworkManager writes the file itself (dns unset, /etc/resolv.conf no link into
        // systemd-resolved's files is not the case here: the stub link chooses
        // systemd-resolved for it).
        ("nm", true, true, true),
        ("nm-none", false, false, false),
    ] {
        let mut raw = resolved_case("active", "enabled");
        let kind = if nm.is_empty() {
            "stub-no-servers-listening".to_owned()
        } else {
            format!("stub-no-servers-listening+{nm}")
        };
        etc_resolv_conf(&mut raw, &kind, "active");
        let mut units = vec![("systemd-resolved", "active"), ("kubelet", "active")];
        if !nm.is_empty() {
            units.push(("NetworkManager", "active"));
        }
        if networkd {
            units.push(("systemd-networkd", "active"));
        }
        crate::testing::set_units(&mut raw, &units);
        let mut host = Host::new("node1");
        host.vars.insert(
            "upstream_dns_servers".into(),
            serde_json::json!(["192.0.2.53"]),
        );
        let facts = NodeFacts::from_raw("node1", &raw);
        let RuleOutcome::Findings(f) = host_resolver_down(&Ctx::in_cluster(&host, &facts, None))
        else {
            panic!("{kind}: no finding");
        };
        let r = &f[0].remediation;
        assert!(r.contains(DROP_IN), "{kind}: {r}");
        assert_eq!(r.contains(NM), names_nm, "{kind} {networkd}: {r}");
        assert_eq!(r.contains(NETPLAN), names_netplan, "{kind} {networkd}: {r}");
    }
}

/// DNS-CLUSTER-SELF-FORWARD where NetworkManager writes the node's plain /etc/resolv.conf
/// (the Rocky 9 node of networkmanager-host-cluster-only, Kubespray's global DNS listing
/// only nodelocaldns): the fix says what host-upstream-dns writes there
/// (templates/networkmanager-upstream.conf.j2) and the same by hand, with the cluster
/// address first; for the kubelet's file where the kubelet reads /etc/resolv.conf, and for
/// the host's own resolver where the kubelet has a file of its own.
#[test]
fn a_cluster_only_resolver_networkmanager_writes_is_fixed_through_its_global_dns() {
    const PLAYBOOK: &str = "NetworkManager writes /etc/resolv.conf here from its connections' servers, so servers written into the file go at its next update: give it the real servers after the cluster address. dnsfix apply does (playbook host-upstream-dns, with the inventory's upstream_dns_servers, else its nameservers, else the real servers the node lists): NetworkManager's global DNS in /etc/NetworkManager/conf.d/zz-dnsfix-upstream.conf, `[global-dns-domain-*]` `servers=` the first cluster address then those servers, three at most (glibc reads no more than three: MAXNS), and `[global-dns]` `searches=` and `options=` as /etc/resolv.conf has them (global DNS replaces the connections' own), then systemctl reload NetworkManager. By hand the same file: `servers=169.254.25.10,192.0.2.53,198.51.100.53`, then systemctl reload NetworkManager";
    let base =
        crate::testing::rules_fixture("DNS-CLUSTER-SELF-FORWARD/networkmanager-host-cluster-only");
    let mut own = base.clone();
    crate::testing::replace_in_file(
        &mut own,
        "/var/lib/kubelet/config.yaml",
        "kind: KubeletConfiguration\n",
        "kind: KubeletConfiguration\nresolvConf: /etc/dnsfix/resolv.conf\n",
    );
    own.file(
        "/etc/dnsfix/resolv.conf",
        crate::facts::raw::FileState::Present,
        Some(b"nameserver 192.0.2.53\n"),
    );
    let mut host = Host::new("node1");
    host.vars.insert(
        "upstream_dns_servers".into(),
        serde_json::json!(["192.0.2.53", "198.51.100.53"]),
    );
    for (raw, summary) in [
        (
            &base,
            "the resolv.conf kubelet hands to dnsPolicy=Default pods lists only the cluster's DNS",
        ),
        (&own, "the host's own resolver lists only the cluster's DNS"),
    ] {
        let facts = NodeFacts::from_raw("node1", raw);
        let ctx = Ctx::in_cluster(&host, &facts, None);
        let RuleOutcome::Findings(f) = super::kubelet_file::cluster_self_forward(&ctx) else {
            panic!("{summary}: no finding");
        };
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].summary.starts_with(summary), "{f:?}");
        assert!(
            f[0].remediation.contains(PLAYBOOK),
            "{summary}: {}",
            f[0].remediation
        );
    }
}

/// DNS-CLUSTER-SELF-FORWARD on the Rocky 9 node of networkmanager-host-cluster-only with
/// NetworkManager stopped but enabled (`networkmanager_at_boot`), and /etc/resolv.conf
/// listing two cluster addresses: the fix gives NetworkManager the first cluster address
/// and the upstreams for its next start, three in all (not both cluster addresses and one
/// upstream), and fixes the file now too, as the playbook does (host-resolv.conf.j2).
#[test]
fn a_cluster_only_resolver_networkmanager_writes_at_its_next_start_is_fixed_now_too() {
    let mut raw =
        crate::testing::rules_fixture("DNS-CLUSTER-SELF-FORWARD/networkmanager-host-cluster-only");
    crate::testing::replace_in_file(
        &mut raw,
        "/etc/resolv.conf",
        "nameserver 169.254.25.10\n",
        "nameserver 169.254.25.10\nnameserver 10.96.0.10\n",
    );
    crate::testing::set_units(&mut raw, &[("kubelet", "active")]);
    let unit = "/usr/lib/systemd/system/NetworkManager.service";
    raw.link(crate::facts::raw::NM_UNIT_LINKS[0], unit, unit, b"");
    raw.file(
        unit,
        crate::facts::raw::FileState::Present,
        Some(b"[Unit]\n"),
    );
    let mut host = Host::new("node1");
    host.vars.insert(
        "upstream_dns_servers".into(),
        serde_json::json!(["192.0.2.53", "198.51.100.53"]),
    );
    let facts = NodeFacts::from_raw("node1", &raw);
    let ctx = Ctx::in_cluster(&host, &facts, None);
    let RuleOutcome::Findings(f) = super::kubelet_file::cluster_self_forward(&ctx) else {
        panic!("no finding");
    };
    let r = &f[0].remediation;
    for want in [
        "NetworkManager is stopped but enabled, and writes /etc/resolv.conf anew from its connections' servers at its next start",
        "By hand the same file: `servers=169.254.25.10,192.0.2.53,198.51.100.53` (read at its next start; the playbook writes /etc/resolv.conf itself for now); and /etc/resolv.conf for now, its other lines kept: sed -i '/^[[:space:]]*nameserver[[:space:]]/d' /etc/resolv.conf; [ -z \"$(tail -c1 /etc/resolv.conf)\" ] || echo >> /etc/resolv.conf; printf 'nameserver %s\\n' 169.254.25.10 192.0.2.53 198.51.100.53 >> /etc/resolv.conf",
    ] {
        assert!(r.contains(want), "{r}");
    }

    // A zone after the address is no part of what is pasted: `169.254.25.10%$(reboot)`
    // counts as the cluster address it starts with, and the command names that alone.
    crate::testing::replace_in_file(
        &mut raw,
        "/etc/resolv.conf",
        "nameserver 169.254.25.10\n",
        "nameserver 169.254.25.10%$(reboot)`id`|x\n",
    );
    let facts = NodeFacts::from_raw("node1", &raw);
    let ctx = Ctx::in_cluster(&host, &facts, None);
    let RuleOutcome::Findings(f) = super::kubelet_file::cluster_self_forward(&ctx) else {
        panic!("no finding");
    };
    let r = &f[0].remediation;
    assert!(
        r.contains("printf 'nameserver %s\\n' 169.254.25.10 192.0.2.53 198.51.100.53 >>")
            && !r.contains("reboot")
            && !r.contains("`id`"),
        "{r}"
    );
}

/// The kubelet's own file lists only the cluster address, and it is not the host's
/// /etc/resolv.conf (which NetworkManager writes): the fix for the kubelet's file is the
/// generic one, not NetworkManager's global DNS (that is the host's file's fix).
#[test]
fn a_cluster_only_kubelet_file_apart_from_the_hosts_keeps_the_generic_fix() {
    let mut raw =
        crate::testing::rules_fixture("DNS-CLUSTER-SELF-FORWARD/networkmanager-host-cluster-only");
    crate::testing::replace_in_file(
        &mut raw,
        "/var/lib/kubelet/config.yaml",
        "kind: KubeletConfiguration\n",
        "kind: KubeletConfiguration\nresolvConf: /etc/dnsfix/resolv.conf\n",
    );
    raw.file(
        "/etc/dnsfix/resolv.conf",
        crate::facts::raw::FileState::Present,
        Some(b"nameserver 169.254.25.10\n"),
    );
    // CoreDNS forwards to these, not to the kubelet's file: no loop.
    let mut host = Host::new("node1");
    host.vars.insert(
        "upstream_dns_servers".into(),
        serde_json::json!(["192.0.2.53"]),
    );
    let facts = NodeFacts::from_raw("node1", &raw);
    let ctx = Ctx::in_cluster(&host, &facts, None);
    let RuleOutcome::Findings(f) = super::kubelet_file::cluster_self_forward(&ctx) else {
        panic!("no finding");
    };
    let kubelet = f
        .iter()
        .find(|f| f.summary.starts_with("the resolv.conf kubelet hands to dnsPolicy=Default pods lists only the cluster's DNS"))
        .unwrap_or_else(|| panic!("{f:?}"));
    assert!(
        kubelet
            .remediation
            .starts_with("list real upstream servers after the cluster IP on the host"),
        "{}",
        kubelet.remediation
    );
    assert!(
        !kubelet.remediation.contains("global DNS"),
        "{}",
        kubelet.remediation
    );
}

/// Where NetworkManager writes /etc/resolv.conf (DNS-RESOLV-MANAGED-ELSEWHERE on a plain
/// file, the planner's `network_manager_manages`): not with Ubuntu's dns=systemd-resolved
/// in /usr/lib/NetworkManager/conf.d (rc-manager auto leaves the file alone), unless a file
/// of the same name in /etc shadows it or rc-manager is set; not with dns unset while
/// /etc/resolv.conf links to systemd-resolved's stub; not where NetworkManager is stopped.
/// (Its plugin directory names 1.28.0, the first version whose default rc-manager is auto:
/// without a version, whether it leaves the file alone is unknown.)
#[test]
fn network_manager_manages_resolv_conf_as_its_effective_settings_say() {
    // (/etc/resolv.conf, NetworkManager's files as network_manager_conf names them,
    // NetworkManager's state; manages)
    for (etc, nm, state, manages) in [
        ("own", "nm", "active", true),
        ("own", "nm", "inactive", false),
        ("own", "nm-ubuntu", "active", false),
        ("own", "nm-shadowed", "active", true),
        ("own", "nm-none", "active", false),
        ("own", "nm-resolvconf", "active", true),
        ("own", "nm-resolved-symlink", "active", true),
        ("stub", "nm", "active", false),
        ("stub", "nm-shadowed", "active", false),
        ("nm-link", "nm", "active", true),
    ] {
        let mut raw = resolved_case("active", "enabled");
        etc_resolv_conf(&mut raw, &format!("{etc}+{nm}"), "active");
        raw.file(
            "/usr/lib/x86_64-linux-gnu/NetworkManager/1.28.0",
            crate::facts::raw::FileState::Directory,
            None,
        );
        let units = [("systemd-resolved", "active"), ("NetworkManager", state)];
        crate::testing::set_units(&mut raw, &units);
        let facts = NodeFacts::from_raw("node1", &raw);
        assert_eq!(
            network_manager_manages_resolv(&facts).is_some(),
            manages,
            "{etc} {nm} {state}"
        );
        // A plain file NetworkManager rewrites is DNS-RESOLV-MANAGED-ELSEWHERE's.
        if etc == "own" {
            let host = Host::new("node1");
            let outcome = super::node_resolver::resolv_managed_elsewhere(&Ctx::in_cluster(
                &host, &facts, None,
            ));
            assert_eq!(
                matches!(outcome, RuleOutcome::Findings(_)),
                manages,
                "{etc} {nm} {state}: {outcome:?}"
            );
        }
    }
}

/// A plain /etc/resolv.conf locked with `chattr +i` (or `+a`) is none of NetworkManager's:
/// it tests the immutable flag when it picks its rc-manager and then writes only its own
/// files in /run (nm-dns-manager.c `_check_resconf_immutable` @355bc902), and it cannot
/// rename a new file over an append-only one. So no DNS-RESOLV-MANAGED-ELSEWHERE there: an
/// edit of the file stays. The flags as e2fsprogs 1.47's `lsattr -d` prints them (lib/e2p/
/// pf.c: `i` immutable and `a` append-only lower case, `I` indexed and `A` no-atime upper
/// case), from an ext4 file here.
#[test]
fn network_manager_leaves_an_immutable_resolv_conf_alone() {
    use crate::facts::network_manager::RESOLV_CONF_ATTR;
    use crate::facts::raw::RawCommand;
    // (lsattr's output, its exit status; NetworkManager writes the file)
    for (stdout, status, manages) in [
        ("----i---------e------- /etc/resolv.conf\n", Some(0), false),
        ("-----a--------e------- /etc/resolv.conf\n", Some(0), false),
        ("----ia--------e------- /etc/resolv.conf\n", Some(0), false),
        ("--------------e------- /etc/resolv.conf\n", Some(0), true),
        ("-------A---I--e------- /etc/resolv.conf\n", Some(0), true),
        // A file system without attributes: lsattr fails and prints nothing on stdout.
        ("", Some(1), true),
        // Not a flag field: nothing is taken from it.
        ("i\u{1b}[2J /etc/resolv.conf\n", Some(0), true),
    ] {
        let mut raw = resolved_case("active", "enabled");
        etc_resolv_conf(&mut raw, "own+nm", "active");
        let units = [("systemd-resolved", "active"), ("NetworkManager", "active")];
        crate::testing::set_units(&mut raw, &units);
        raw.commands.insert(
            RESOLV_CONF_ATTR.into(),
            RawCommand {
                stdout: stdout.into(),
                status,
            },
        );
        let facts = NodeFacts::from_raw("node1", &raw);
        assert_eq!(
            network_manager_manages_resolv(&facts).is_some(),
            manages,
            "{stdout:?}"
        );
        let host = Host::new("node1");
        let outcome =
            super::node_resolver::resolv_managed_elsewhere(&Ctx::in_cluster(&host, &facts, None));
        assert_eq!(
            matches!(outcome, RuleOutcome::Findings(_)),
            manages,
            "{stdout:?}: {outcome:?}"
        );
    }
}

/// Where the kubelet's file is resolved's, by a link from /etc/resolv.conf or through
/// /var/run; and not where the kubelet has a file of its own.
#[test]
fn a_disabled_resolveds_file_is_found_through_links_and_var_run() {
    // /etc/resolv.conf linked to resolved's stub.
    let mut linked = resolved_case("active", "disabled");
    let stub = linked.files["/run/systemd/resolve/stub-resolv.conf"]
        .text()
        .expect("stub text")
        .into_owned();
    linked.files.remove("/etc/resolv.conf");
    linked.link(
        "/etc/resolv.conf",
        "../run/systemd/resolve/stub-resolv.conf",
        "/run/systemd/resolve/stub-resolv.conf",
        stub.as_bytes(),
    );
    // The kubelet's file is reported; the host's link is DNS-HOST-RESOLVER-DOWN's.
    let RuleOutcome::Findings(f) = resolved_outcome(&linked, "") else {
        panic!("a disabled resolved's uplink file is gone at the next boot");
    };
    assert!(!f[0].remediation.contains("/etc/resolv.conf"), "{f:?}");
    // Through /var/run, a link to /run: the gather gives no canonical path there.
    let config = "/var/lib/kubelet/config.yaml";
    let with_resolv_conf = |raw: &mut crate::facts::raw::RawFacts, value: &str| {
        let text = raw.files[config].text().expect("config text").replace(
            "resolvConf: /run/systemd/resolve/resolv.conf",
            &format!("resolvConf: {value}"),
        );
        raw.file(
            config,
            crate::facts::raw::FileState::Present,
            Some(text.as_bytes()),
        );
    };
    let mut var_run = resolved_case("active", "disabled");
    let uplink = var_run.files["/run/systemd/resolve/resolv.conf"].clone();
    var_run
        .files
        .insert("/var/run/systemd/resolve/resolv.conf".into(), uplink);
    with_resolv_conf(&mut var_run, "/var/run/systemd/resolve/resolv.conf");
    assert!(matches!(
        resolved_outcome(&var_run, ""),
        RuleOutcome::Findings(_)
    ));
    // The same disabled resolved, with the kubelet on a file of its own: nothing to say.
    let mut own = resolved_case("inactive", "disabled");
    with_resolv_conf(&mut own, "/etc/resolv.conf");
    assert_eq!(resolved_outcome(&own, ""), RuleOutcome::Pass);
}

/// The severities of DNS-BRIDGE-NF-OFF and DNS-IP-FORWARD on a node of flavour `kind`.
fn bridge_and_forwarding(raw: &crate::facts::raw::RawFacts, kind: FlavourKind) -> [Severity; 2] {
    let facts = NodeFacts::from_raw("node1", raw);
    assert_eq!(facts.flavour.kind, kind);
    let host = Host::new("node1");
    let ctx = Ctx::in_cluster(&host, &facts, None);
    [bridge_nf_off(&ctx), ip_forward(&ctx)].map(|o| match o {
        RuleOutcome::Findings(f) => f[0].severity,
        other => panic!("{other:?}"),
    })
}

/// The bridge key pod DNS goes through is the family of the kubelet's clusterDNS: on an
/// IPv6-only flannel node (pods on cni0) bridge-nf-call-ip6tables off is critical, and
/// bridge-nf-call-iptables off does not touch pod DNS.
#[test]
fn the_bridge_key_follows_the_cluster_dns_family() {
    let mut base = crate::testing::rules_fixture("_upstream/cni-flannel-brnf-off");
    let modules = crate::testing::text(&base, "/proc/modules");
    base.file(
        "/proc/modules",
        FileState::Present,
        Some(format!("br_netfilter 32768 0 - Live 0x0000000000000000\n{modules}").as_bytes()),
    );
    crate::testing::replace_in_file(
        &mut base,
        "/var/lib/kubelet/config.yaml",
        "clusterDNS:\n- 10.96.0.10\n",
        "clusterDNS:\n- fd00:10:96::a\n",
    );
    let outcome = |v4: &str, v6: &str| {
        let mut raw = base.clone();
        for (key, value) in [("iptables", v4), ("ip6tables", v6)] {
            raw.file(
                &format!("/proc/sys/net/bridge/bridge-nf-call-{key}"),
                FileState::Present,
                Some(format!("{value}\n").as_bytes()),
            );
        }
        let facts = NodeFacts::from_raw("node1", &raw);
        let host = Host::new("node1");
        bridge_nf_off(&Ctx::in_cluster(&host, &facts, None))
    };
    match outcome("1", "0") {
        RuleOutcome::Findings(f) => {
            assert_eq!(f[0].severity, Severity::Critical, "{f:?}");
            assert!(
                f[0].evidence.iter().any(|e| e.contains("ip6tables")),
                "{f:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(outcome("0", "1"), RuleOutcome::Pass),
        "{:?}",
        outcome("0", "1")
    );
}

/// On an IPv6-only k3s node (clusterDNS IPv6, no dual-stack in the inventory) k3s sets
/// bridge-nf-call-ip6tables at start (`enableIPv6`): a sysctl file that sets it to 0 is
/// named, and the bridge-netfilter playbook sets the key, as for iptables elsewhere.
#[test]
fn an_ipv6_only_k3s_node_has_its_ip6tables_key_judged_as_k3s_sets_it() {
    let mut raw = crate::testing::rules_fixture("_upstream/k3s-centos7-initscripts-bridge-0");
    raw.file(
        "/etc/rancher/k3s/config.yaml",
        FileState::Present,
        Some(b"cluster-dns: fd00:43::a\n"),
    );
    let facts = NodeFacts::from_raw("node1", &raw);
    let host = Host::new("node1");
    let ctx = Ctx::in_cluster(&host, &facts, None);
    assert!(
        super::kernel::installer_bridge(&ctx).1[1],
        "ip6tables wanted"
    );
    match bridge_nf_off(&ctx) {
        RuleOutcome::Findings(f) => {
            assert!(
                f[0].evidence.iter().any(|e| e.contains("00-system.conf:7")),
                "{f:?}"
            );
            assert!(
                f[0].remediation.contains("bridge-nf-call-ip6tables=1"),
                "{f:?}"
            );
            assert!(
                !f[0].remediation.contains("bridge-nf-call-iptables=1"),
                "{f:?}"
            );
        }
        other => panic!("{other:?}"),
    }
}

/// On Debian 13 nothing reads /etc/sysctl.conf at boot: a setting only there is not
/// persisted, and one an upgrade moved to /etc/sysctl.conf.dpkg-bak is named.
#[test]
fn debian_13_does_not_read_etc_sysctl_conf_at_boot() {
    let raw = crate::testing::rules_fixture("DNS-IP-FORWARD/debian13-sysctl-conf-not-read");
    let evidence = |raw: &crate::facts::raw::RawFacts| {
        let facts = NodeFacts::from_raw("node1", raw);
        let host = Host::new("node1");
        match ip_forward(&Ctx::in_cluster(&host, &facts, None)) {
            RuleOutcome::Findings(f) => {
                assert_eq!(f[0].severity, Severity::High);
                f[0].evidence.join(" | ")
            }
            other => panic!("{other:?}"),
        }
    };
    assert!(evidence(&raw).contains("only /etc/sysctl.conf sets it"));
    let mut upgraded = raw.clone();
    upgraded.file(
        "/etc/sysctl.conf",
        crate::facts::raw::FileState::Missing,
        None,
    );
    upgraded.file(
        "/etc/sysctl.conf.dpkg-bak",
        crate::facts::raw::FileState::Present,
        Some(b"net.ipv4.ip_forward=1\n"),
    );
    let said = evidence(&upgraded);
    assert!(
        said.contains("is set by no sysctl.d file") && said.contains(".dpkg-bak sets it"),
        "{said}"
    );
    // The same for /etc/modules: listed there only, br_netfilter is not loaded at boot.
    let mut modules = raw.clone();
    modules.file(
        "/etc/modules-load.d/k8s.conf",
        crate::facts::raw::FileState::Missing,
        None,
    );
    modules.file(
        "/etc/modules",
        crate::facts::raw::FileState::Present,
        Some(b"br_netfilter\n"),
    );
    let facts = NodeFacts::from_raw("node1", &modules);
    let host = Host::new("node1");
    match bridge_nf_not_persistent(&Ctx::in_cluster(&host, &facts, None)) {
        RuleOutcome::Findings(f) => assert!(
            f[0].evidence[0].contains("only /etc/modules lists it"),
            "{:?}",
            f[0].evidence
        ),
        other => panic!("{other:?}"),
    }
    // Where something boots it that is not systemd, /etc/sysctl.conf comes last.
    let mut openrc = raw.clone();
    openrc.file(
        "/run/systemd/system",
        crate::facts::raw::FileState::Missing,
        None,
    );
    let facts = NodeFacts::from_raw("node1", &openrc);
    let host = Host::new("node1");
    assert_eq!(
        ip_forward(&Ctx::in_cluster(&host, &facts, None)),
        RuleOutcome::Pass
    );
}

/// k0s before 1.29.14, 1.30.10, 1.31.6 and 1.32.2 never ran its modprobe: there a
/// br_netfilter that is loaded now but not persisted is gone after a reboot, and a
/// stopped k0s does not turn bridge netfilter on where the module is missing.
#[test]
fn an_old_k0s_does_not_load_br_netfilter() {
    let raw = crate::testing::rules_fixture("_upstream/k0s-1.34-ubuntu2204-worker-after-reboot");
    let host = Host::new("node1");
    let with_version = |raw: &crate::facts::raw::RawFacts, version: &str| {
        let facts = NodeFacts::from_raw("node1", raw);
        let mut ctx = Ctx::in_cluster(&host, &facts, None);
        ctx.kubelet_version = Some((version.to_owned(), "node1".to_owned()));
        (
            bridge_nf_not_persistent(&ctx),
            bridge_nf_off(&ctx),
            installer_bridge(&ctx).0,
        )
    };
    // Running, br_netfilter loaded by hand and the bridge keys on, nothing persisted; with
    // the bridge plugin alone (k0s's own kube-router loads br_netfilter itself whenever it
    // starts, whatever k0s does).
    let mut running = raw.clone();
    running.file(
        "/proc/77/cmdline",
        crate::facts::raw::FileState::Present,
        Some(b"/srv/k0s/bin/kubelet\0--config=/run/k0s/kubelet/config.yaml\0"),
    );
    running.pids.insert("kubelet".to_owned(), 77);
    running.file(
        "/proc/modules",
        crate::facts::raw::FileState::Present,
        Some(b"br_netfilter 32768 0 - Live 0x0000000000000000\nbridge 311296 1 br_netfilter, Live 0x0000000000000000\n"),
    );
    running.file(
        "/proc/sys/net/bridge",
        crate::facts::raw::FileState::Directory,
        None,
    );
    running.file(
        "/proc/sys/net/bridge/bridge-nf-call-iptables",
        crate::facts::raw::FileState::Present,
        Some(b"1\n"),
    );
    assert_eq!(
        with_version(&running, "v1.31.5+k0s").0,
        RuleOutcome::Pass,
        "the fixture's kube-router loads br_netfilter itself"
    );
    let kube_router = "/etc/cni/net.d/10-kuberouter.conflist";
    let text = crate::testing::text(&raw, kube_router);
    running.file(
        kube_router,
        crate::facts::raw::FileState::Present,
        Some(text.replace("kube-bridge", "cni0").as_bytes()),
    );
    let (old, _, left) = with_version(&running, "v1.31.5+k0s");
    match old {
        RuleOutcome::Findings(f) => {
            assert_eq!(f[0].severity, Severity::High);
            assert!(
                f[0].evidence[0].contains("not loaded at boot"),
                "{:?}",
                f[0].evidence
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(!left, "the playbook must load and persist it");
    let (new, _, left) = with_version(&running, "v1.31.6+k0s");
    assert_eq!(new, RuleOutcome::Pass);
    assert!(left);
    // Stopped, after a reboot, with br_netfilter not loaded: an old k0s sets nothing.
    let severity = |version: &str| match with_version(&raw, version).1 {
        RuleOutcome::Findings(f) => f[0].severity,
        other => panic!("{other:?}"),
    };
    assert_eq!(severity("v1.32.1+k0s"), Severity::Critical);
    assert_eq!(severity("v1.32.2+k0s"), Severity::Warning);
    assert_eq!(
        crate::facts::kubelet::version_minor_patch("v1.29.14+k0s"),
        Some((29, 14))
    );
}

/// Bridge netfilter and forwarding off on a k0s node whose k0s runs no kubelet (after
/// a reboot) are warnings: k0s sets both at its next start, before its kubelet. Off while
/// a kubelet runs, they are critical: something reset them after k0s's start.
#[test]
fn off_is_critical_only_while_the_installer_runs_its_kubelet() {
    let raw = crate::testing::rules_fixture("_upstream/k0s-1.34-ubuntu2204-worker-after-reboot");
    assert_eq!(
        bridge_and_forwarding(&raw, FlavourKind::K0s),
        [Severity::Warning, Severity::Warning]
    );
    // k0s's unit reads active while k0s waits for its worker profile: still before its
    // kernel setup, until it writes the kubelet's config under /run.
    let mut waiting = raw.clone();
    crate::testing::set_units(&mut waiting, &[("k0sworker", "active")]);
    assert_eq!(
        bridge_and_forwarding(&waiting, FlavourKind::K0s),
        [Severity::Warning, Severity::Warning]
    );
    // Past it (the kubelet crashed, k0s restarts it without setting anything again).
    waiting.file(
        "/run/k0s/kubelet/config.yaml",
        crate::facts::raw::FileState::Present,
        None,
    );
    assert_eq!(
        bridge_and_forwarding(&waiting, FlavourKind::K0s),
        [Severity::Critical, Severity::Critical]
    );
    // The same node with k0s's kubelet running.
    let mut running = raw.clone();
    running.file(
        "/proc/77/cmdline",
        crate::facts::raw::FileState::Present,
        Some(b"/srv/k0s/bin/kubelet\0--config=/run/k0s/kubelet/config.yaml\0"),
    );
    running.file(
        "/run/k0s/kubelet/config.yaml",
        crate::facts::raw::FileState::Present,
        Some(b"kind: KubeletConfiguration\nresolvConf: /run/systemd/resolve/resolv.conf\n"),
    );
    running.pids.insert("kubelet".to_owned(), 77);
    assert_eq!(
        bridge_and_forwarding(&running, FlavourKind::K0s),
        [Severity::Critical, Severity::Critical]
    );
}

/// k3s runs the kubelet inside its own process: a running k3s (its pid, or its unit
/// active) keeps bridge netfilter and forwarding off critical; with k3s stopped they are
/// warnings (k3s sets them when it starts).
#[test]
fn a_stopped_k3s_leaves_bridge_netfilter_and_forwarding_to_its_next_start() {
    let mut raw = crate::testing::raw_from(&[
        (
            "/etc/systemd/system/k3s.service",
            // As k3s's install.sh renders it (the fixture's README says how).
            include_str!(
                "../../../tests/fixtures/rules/_upstream/k3s-auto-uplink/root/etc/systemd/system/k3s.service"
            ),
        ),
        (
            "/proc/modules",
            "overlay 151552 0 - Live 0x0000000000000000\n",
        ),
        ("/proc/sys/net/ipv4/ip_forward", "0\n"),
    ]);
    for path in [
        "/proc/sys/net/bridge",
        "/proc/sys/net/bridge/bridge-nf-call-iptables",
        "/etc/rancher/k3s/config.yaml",
    ] {
        raw.file(path, crate::facts::raw::FileState::Missing, None);
    }
    assert_eq!(
        bridge_and_forwarding(&raw, FlavourKind::K3s),
        [Severity::Warning, Severity::Warning]
    );
    let mut running = raw.clone();
    running.pids.insert("k3s".to_owned(), 812);
    assert_eq!(
        bridge_and_forwarding(&running, FlavourKind::K3s),
        [Severity::Critical, Severity::Critical]
    );
    // An active unit runs, whatever process dnsfix saw: RKE2 and k0s restart a crashed
    // kubelet without setting anything again.
    crate::testing::set_units(&mut raw, &[("k3s", "active")]);
    assert_eq!(
        bridge_and_forwarding(&raw, FlavourKind::K3s),
        [Severity::Critical, Severity::Critical]
    );
    // Where no pod traffic is bridged, a stopped k3s changes nothing: info, as always.
    let mut routed = running.clone();
    routed.pids.clear();
    routed.file(
        "/etc/cni/net.d/10-calico.conflist",
        crate::facts::raw::FileState::Present,
        Some(br#"{"name": "k8s-pod-network", "cniVersion": "0.3.1", "plugins": [{"type": "calico"}]}"#),
    );
    assert_eq!(
        bridge_and_forwarding(&routed, FlavourKind::K3s)[0],
        Severity::Info
    );
}

/// Where k3s sets bridge netfilter and forwarding at every start, only a sysctl file
/// that sets one to 0 matters: the next `sysctl --system` applies it under the running
/// k3s. CentOS 7's initscripts ship such a file for the bridge keys; a CIS-style
/// baseline sets forwarding to 0.
#[test]
fn a_sysctl_file_that_undoes_what_the_installer_sets_is_a_warning() {
    let raw = crate::testing::rules_fixture("_upstream/k3s-centos7-initscripts-bridge-0");
    let outcomes = |raw: &crate::facts::raw::RawFacts| {
        let facts = NodeFacts::from_raw("node1", raw);
        assert_eq!(facts.flavour.kind, FlavourKind::K3s);
        let host = Host::new("node1");
        let ctx = Ctx::in_cluster(&host, &facts, None);
        [
            bridge_nf_not_persistent(&ctx),
            ip_forward(&ctx),
            bridge_nf_off(&ctx),
        ]
        .map(|o| match o {
            RuleOutcome::Findings(f) => Some((f[0].severity, f[0].evidence.join(" | "))),
            RuleOutcome::Pass => None,
            other => panic!("{other:?}"),
        })
    };
    let [bridge, forward, off] = outcomes(&raw);
    let (severity, evidence) = bridge.expect("a finding");
    assert_eq!(severity, Severity::Warning);
    assert!(
        evidence.contains("/usr/lib/sysctl.d/00-system.conf:8"),
        "{evidence}"
    );
    assert_eq!((forward, off), (None, None));

    // A hardening file that turns forwarding off: a warning while it is on, and what
    // the critical names once a `sysctl --system` applied it.
    let mut hardened = raw.clone();
    hardened.file(
        "/etc/sysctl.d/99-zz-hardening.conf",
        crate::facts::raw::FileState::Present,
        Some(b"# CIS 3.1.1\nnet.ipv4.ip_forward = 0\n"),
    );
    let [_, forward, _] = outcomes(&hardened);
    let (severity, evidence) = forward.expect("a finding");
    assert_eq!(severity, Severity::Warning);
    assert!(
        evidence.contains("/etc/sysctl.d/99-zz-hardening.conf:2"),
        "{evidence}"
    );
    for key in ["ipv4/ip_forward", "bridge/bridge-nf-call-iptables"] {
        hardened.file(
            &format!("/proc/sys/net/{key}"),
            crate::facts::raw::FileState::Present,
            Some(b"0\n"),
        );
    }
    let [bridge, forward, off] = outcomes(&hardened);
    assert_eq!(bridge, None, "off is DNS-BRIDGE-NF-OFF's business");
    for (finding, file) in [
        (forward, "/etc/sysctl.d/99-zz-hardening.conf:2"),
        (off, "/usr/lib/sysctl.d/00-system.conf:8"),
    ] {
        let (severity, evidence) = finding.expect("a finding");
        assert_eq!(severity, Severity::Critical);
        assert!(evidence.contains(file), "{evidence}");
    }

    // On a node systemd boots, an /etc/sysctl.conf no link leads to is not read at
    // boot, but a `sysctl --system` by hand applies it last: it undoes k3s's 1 too.
    let mut trixie = raw.clone();
    trixie.file(
        "/usr/lib/sysctl.d/00-system.conf",
        crate::facts::raw::FileState::Missing,
        None,
    );
    crate::testing::systemd_booted_with_sysctl_conf(
        &mut trixie,
        "net.bridge.bridge-nf-call-iptables = 0\n",
    );
    let [bridge, _, _] = outcomes(&trixie);
    let (severity, evidence) = bridge.expect("a finding");
    assert_eq!(severity, Severity::Warning);
    assert!(evidence.contains("/etc/sysctl.conf:1"), "{evidence}");

    // Without the initscripts file nothing undoes what k3s sets.
    let mut plain = raw.clone();
    plain.file(
        "/usr/lib/sysctl.d/00-system.conf",
        crate::facts::raw::FileState::Missing,
        None,
    );
    assert_eq!(outcomes(&plain), [None, None, None]);
}

/// The version playbooks get is the first of `kubelet --version`, the cluster's and
/// the inventory's that names a 1.x minor, with where it came from.
#[test]
fn the_kubelet_version_is_the_first_that_names_a_minor() {
    let (mut host, mut facts) = five_domains();
    host.vars
        .insert("kube_version".into(), serde_json::json!("v1.28.3"));
    let version = |facts: &NodeFacts, cluster: &crate::cluster::Cluster| {
        kubelet_version(&Ctx::in_cluster(&host, facts, Some(cluster)))
    };
    let said = |v: &str, from: &str| Some((v.to_owned(), from.to_owned()));
    assert_eq!(
        version(&facts, &cluster(&[])),
        said("v1.28.3", "inventory kube_version")
    );
    let read = cluster(&[("node1", "v1.30.2")]);
    assert_eq!(
        version(&facts, &read),
        said("v1.30.2", "node node1's status.nodeInfo.kubeletVersion")
    );
    facts.kubelet.version = Some("v1.31.0".into());
    assert_eq!(version(&facts, &read), said("v1.31.0", "kubelet --version"));
    // One that names no 1.x minor is passed over.
    facts.kubelet.version = Some("v2.0".into());
    assert_eq!(
        version(&facts, &cluster(&[("node1", "garbage")])),
        said("v1.28.3", "inventory kube_version")
    );
}

/// Without `kubelet --version` the running kubelet's version comes from the cluster,
/// by the node's name there, before the inventory's kube_version; with neither the
/// legacy limits are assumed, and said to be.
#[test]
fn the_kubelet_version_comes_from_the_cluster_when_the_node_was_not_asked() {
    let (host, facts) = five_domains();
    let outcome = |cluster: Option<&crate::cluster::Cluster>| {
        search_limit(&Ctx::in_cluster(&host, &facts, cluster))
    };
    let RuleOutcome::Findings(f) = outcome(None) else {
        panic!("five domains under the legacy limits: {:?}", outcome(None));
    };
    assert!(f[0].summary.contains("version is unknown"), "{f:?}");

    let read = cluster(&[("node1", "v1.29.4"), ("node2", "v1.25.0")]);
    assert_eq!(outcome(Some(&read)), RuleOutcome::Pass);
    let ctx = Ctx::in_cluster(&host, &facts, Some(&read));
    assert_eq!(
        kube_minor(&ctx).map(|(_, from)| from),
        Some("node node1's status.nodeInfo.kubeletVersion: v1.29.4".to_owned())
    );

    // Another node's version is not this one's.
    let read = cluster(&[("node2", "v1.29.4")]);
    assert!(matches!(outcome(Some(&read)), RuleOutcome::Findings(_)));
    // The cluster's word over the inventory's (an upgrade the inventory has not seen).
    let mut old = host.clone();
    old.vars.insert("kube_version".into(), "v1.25.3".into());
    let read = cluster(&[("node1", "v1.29.4")]);
    let ctx = Ctx::in_cluster(&old, &facts, Some(&read));
    assert_eq!(kube_minor(&ctx).map(|(m, _)| m), Some(29));
}

/// The node's kubelet binary is worth asking only when the cluster gave no version for
/// it and the version changes a finding: five domains pass or fail on it; three never.
#[test]
fn the_kubelet_binary_is_asked_only_when_its_version_decides() {
    let (host, facts) = five_domains();
    assert!(kubelet_version_wanted(&host, &facts, &cluster(&[])));
    assert!(kubelet_version_wanted(
        &host,
        &facts,
        &cluster(&[("node2", "v1.29.4")])
    ));
    assert!(!kubelet_version_wanted(
        &host,
        &facts,
        &cluster(&[("node1", "v1.29.4")])
    ));
    let mut asked = facts.clone();
    asked.kubelet.version = Some("v1.29.4".into());
    assert!(!kubelet_version_wanted(&host, &asked, &cluster(&[])));

    let raw = crate::testing::rules_fixture("DNS-SEARCH-LIMIT/legacy-exactly-three");
    let mut three = NodeFacts::from_raw("node1", &raw);
    three.kubelet.version = None;
    assert!(!kubelet_version_wanted(&host, &three, &cluster(&[])));

    // A CNI file containerd cannot load, and no runtime endpoint: the kubelet's default
    // runtime is the version's. With the endpoint set, the version does not matter.
    let calico = r#"{"name":"k8s-pod-network","cniVersion":"1.0.0","plugins":[{"type":"calico"}]}"#;
    let broken = crate::testing::with_files(
        &raw,
        &[
            ("/etc/cni/net.d/05-cilium.conflist", ""),
            ("/etc/cni/net.d/10-calico.conflist", calico),
        ],
    );
    let mut facts = NodeFacts::from_raw("node1", &broken);
    facts.kubelet.version = None;
    let endpoint = facts.kubelet.runtime_endpoint.take();
    assert!(endpoint.is_some(), "{:?}", facts.kubelet);
    assert!(kubelet_version_wanted(&host, &facts, &cluster(&[])));
    facts.kubelet.runtime_endpoint = endpoint;
    assert!(!kubelet_version_wanted(&host, &facts, &cluster(&[])));
}

/// A k3s node on GCE whose kubelet file k3s chose with GCP's metadata server deciding:
/// without k3s's version (plan takes versions from the cluster and asks no binary) the
/// facts cannot say which file that is, so the node's own version is wanted, even where
/// the cluster has one; with the version in the facts, nothing more is.
#[test]
fn a_k3s_choice_that_turns_on_the_version_asks_the_node_for_it() {
    let raw = crate::testing::rules_fixture("_upstream/k3s-gce-metadata-uplink");
    let host = Host::new("node1");
    let asked = NodeFacts::from_raw("node1", &raw);
    assert!(asked.kubelet.version.is_some());
    let read = cluster(&[("node1", "v1.33.4+k3s1")]);
    assert!(!kubelet_version_wanted(&host, &asked, &read));

    let mut raw = raw.clone();
    raw.commands.remove("kubelet-version");
    let unasked = NodeFacts::from_raw("node1", &raw);
    assert!(
        matches!(&unasked.kubelet.resolv_conf, Observed::Unknown(why) if why.contains(crate::facts::kubelet::K3S_VERSION_UNKNOWN)),
        "{:?}",
        unasked.kubelet.resolv_conf
    );
    assert!(kubelet_version_wanted(&host, &unasked, &read));
}

/// A k3s node whose choice of the kubelet's file turns on k3s's release (a host file with
/// no nameserver: k3s-io/k3s#9948) and whose binary gave no version (not running, or the
/// question timed out): the version its kubelet reports to the cluster settles it, as the
/// drop-in case is settled. Before, the cluster's "v1.28.10+k3s1" was not used and the file
/// stayed unknown. A plain kube_version from the inventory says nothing of k3s's release.
#[test]
fn a_k3s_choice_that_turns_on_the_version_takes_the_clusters() {
    let mut raw = crate::testing::rules_fixture(
        "DNS-KUBELET-RESOLVCONF-MISSING/k3s-1.28-uplink-without-nameserver",
    );
    raw.commands.remove("kubelet-version");
    let host = Host::new("node1");
    let unasked = NodeFacts::from_raw("node1", &raw);
    assert!(
        matches!(&unasked.kubelet.resolv_conf, Observed::Unknown(why) if why.contains(crate::facts::kubelet::K3S_VERSION_UNKNOWN)),
        "{:?}",
        unasked.kubelet.resolv_conf
    );
    let file = |version: &str| {
        let read = cluster(&[("k3s-1", version)]);
        let known = with_known_version(&host, &unasked, Some(&read)).expect("read again");
        match known.kubelet.resolv_conf {
            Observed::Known(e) => e.value,
            other => panic!("{version}: {other:?}"),
        }
    };
    // Before #9948 k3s takes the uplink file with no nameserver; from v1.28.11 it generates
    // its own.
    assert_eq!(file("v1.28.10+k3s1"), "/run/systemd/resolve/resolv.conf");
    assert_eq!(
        file("v1.28.11+k3s1"),
        "/var/lib/rancher/k3s/agent/etc/resolv.conf"
    );

    let mut inventory = Host::new("node1");
    inventory
        .vars
        .insert("kube_version".into(), serde_json::json!("v1.28.11"));
    let plain = with_known_version(&inventory, &unasked, None).expect("read again");
    assert!(
        matches!(&plain.kubelet.resolv_conf, Observed::Unknown(why) if why.contains(crate::facts::kubelet::K3S_VERSION_UNKNOWN)),
        "{:?}",
        plain.kubelet.resolv_conf
    );
}

/// A kubelet config drop-in that sets resolvConf (in either spelling) is read one way or
/// the other by the kubelet's version: the facts need the node's own, even where the
/// cluster has one (plan and check ask no binary otherwise, and the facts would take the
/// kubelet for a current one).
#[test]
fn a_dropin_resolv_conf_asks_the_node_for_its_kubelet_version() {
    let raw = crate::testing::rules_fixture("_upstream/eks-al2023-1.31-nodeconfig-resolvconf");
    let host = Host::new("node1");
    let read = cluster(&[("node1", "v1.31.13-eks-3c4bb28")]);
    let asked = NodeFacts::from_raw("node1", &raw);
    assert!(!kubelet_version_wanted(&host, &asked, &read));

    let mut raw = raw.clone();
    raw.commands.remove("kubelet-version");
    let unasked = NodeFacts::from_raw("node1", &raw);
    assert!(kubelet_version_wanted(&host, &unasked, &read));
}

/// What DNS-KUBELET-LOOPBACK tells the node of `raw` to do (its stub loops).
fn loopback_remediation(raw: &crate::facts::raw::RawFacts) -> String {
    let host = Host::new("node1");
    let facts = NodeFacts::from_raw("node1", raw);
    let RuleOutcome::Findings(f) = super::kubelet_file::kubelet_loopback(&Ctx::new(&host, &facts))
    else {
        panic!("the stub loops: {:?}", facts.kubelet.resolv_conf);
    };
    f[0].remediation.clone()
}

/// A --resolv-conf over the config's setting: the fix names what counts once the flag goes
/// under the key that sets it (`resolverConfig` in a 1.28 to 1.31 kubelet's drop-in), and
/// offers taking the flag out only where a config value is there to count (else the
/// kubelet's default /etc/resolv.conf would, the stub here).
#[test]
fn a_resolv_conf_flag_names_the_setting_under_it_as_spelled() {
    use crate::facts::raw::FileState;
    let mut spelled = crate::testing::rules_fixture(
        "DNS-KUBELET-LOOPBACK/kubeadm-1.31-config-dir-resolverconfig",
    );
    let flag = "--resolv-conf=/etc/resolv.conf";
    spelled.file(
        "/etc/default/kubelet",
        FileState::Present,
        Some(
            format!("KUBELET_EXTRA_ARGS=--config-dir=/etc/kubernetes/kubelet.conf.d {flag}\n")
                .as_bytes(),
        ),
    );
    let cmdline = "/proc/2291/cmdline";
    let mut argv = spelled.files[cmdline].content.to_vec();
    argv.extend_from_slice(format!("{flag}\0").as_bytes());
    spelled.file(cmdline, FileState::Present, Some(&argv));
    // The drop-in's resolverConfig is the stub too: taking the flag out fixes nothing.
    let fix = loopback_remediation(&spelled);
    assert!(
        fix.contains("change the flag there") && !fix.contains("remove it"),
        "{fix}"
    );
    // Where the drop-in names a file that serves pods, it is offered, the key as spelled.
    let dropin = "/etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf";
    crate::testing::replace_in_file(
        &mut spelled,
        dropin,
        "resolverConfig: /etc/resolv.conf",
        "resolverConfig: /run/systemd/resolve/resolv.conf",
    );
    let fix = loopback_remediation(&spelled);
    assert!(
        fix.contains("change the flag there, or remove it (without it, /etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf:3 resolverConfig: /run/systemd/resolve/resolv.conf counts)"),
        "{fix}"
    );

    let mut bare =
        crate::testing::rules_fixture("DNS-KUBELET-LOOPBACK/kubeadm-1.30-etc-default-stub-flag");
    let config = "/var/lib/kubelet/config.yaml";
    let text = String::from_utf8_lossy(&bare.files[config].content)
        .replace("resolvConf: /run/systemd/resolve/resolv.conf\n", "");
    bare.file(config, FileState::Present, Some(text.as_bytes()));
    let fix = loopback_remediation(&bare);
    assert!(
        fix.contains("--resolv-conf at /etc/default/kubelet:1 sets it, and a flag beats the config file: change the flag there")
            && !fix.contains("remove it"),
        "{fix}"
    );
}

/// DNS-KUBELET-FLAG-SHADOW: a flag set in a unit file or drop-in is gone only after
/// systemctl daemon-reload, on EKS too, where the value is kept in the NodeConfig (nodeadm
/// writes config.json anew at every boot).
#[test]
fn a_shadowing_flag_in_a_unit_drop_in_asks_for_a_daemon_reload() {
    let host = Host::new("node1");
    let shadow_fix = |case: &str| {
        let facts = NodeFacts::from_raw("node1", &crate::testing::rules_fixture(case));
        let RuleOutcome::Findings(f) = kubelet_flags::flag_shadow(&Ctx::new(&host, &facts)) else {
            panic!("{case}: the flag shadows the config");
        };
        assert_eq!(f[0].severity, Severity::Warning, "{case}: {f:?}");
        f[0].remediation.clone()
    };
    let kubeadm = shadow_fix("DNS-KUBELET-FLAG-SHADOW/kubeadm-dropin-execstart-flag");
    assert!(
        kubeadm.ends_with(
            "keep the value in the config file; systemctl daemon-reload, then restart kubelet"
        ),
        "{kubeadm}"
    );
    let eks = shadow_fix("DNS-KUBELET-FLAG-SHADOW/eks-al2023-dropin-cluster-dns-flag");
    assert!(
        eks.contains("keep the value in the NodeConfig's spec.kubelet.config (nodeadm writes it to /etc/kubernetes/kubelet/config.json.d/40-nodeadm.conf, a --config-dir drop-in over config.json, at every boot); systemctl daemon-reload, then restart kubelet"),
        "{eks}"
    );
    // In an environment file, nothing to reload.
    let env = shadow_fix("DNS-KUBELET-FLAG-SHADOW/kubespray-cluster-dns-flag");
    assert!(!env.contains("daemon-reload"), "{env}");
}

/// DNS-KUBELET-FLAG-SHADOW on EKS where a unit drop-in's --resolv-conf shadows the
/// resolvConf of nodeadm's drop-in 40-nodeadm.conf (the
/// `eks-al2023-dropin-cluster-dns-flag` node with that flag in place of --cluster-dns, and
/// the NodeConfig's spec.kubelet.config setting resolvConf, which nodeadm writes to the
/// drop-in with --config-dir among its flags: amazon-eks-ami 81fec2e8
/// nodeadm/internal/kubelet/config.go writeKubeletConfig, JSON indented by four spaces,
/// apiVersion and kind merged in). Keeping the value in spec.kubelet.config is the fix only
/// for a kubelet known to be 1.32 or later; one of unknown version may be 1.29 to 1.31,
/// which pass that drop-in's resolvConf over (kubernetes#126630): the flag goes to
/// spec.kubelet.flags there.
#[test]
fn eks_keeps_a_shadowing_resolv_conf_flag_a_flag_unless_the_kubelet_is_1_32() {
    let dir = "/etc/kubernetes/kubelet/config.json.d";
    let mut raw =
        crate::testing::rules_fixture("DNS-KUBELET-FLAG-SHADOW/eks-al2023-dropin-cluster-dns-flag");
    let flag = "--resolv-conf=/run/systemd/resolve/resolv.conf";
    crate::testing::replace_in_file(
        &mut raw,
        "/etc/systemd/system/kubelet.service.d/20-cluster-dns.conf",
        "--cluster-dns=169.254.20.10",
        flag,
    );
    crate::testing::replace_in_file(
        &mut raw,
        "/etc/eks/kubelet/environment",
        "--runtime-cgroups=/runtime.slice/containerd.service",
        &format!("--runtime-cgroups=/runtime.slice/containerd.service --config-dir={dir}"),
    );
    crate::testing::replace_in_file(
        &mut raw,
        "/proc/3456/cmdline",
        "--cluster-dns=169.254.20.10",
        &format!("--config-dir={dir}\0{flag}"),
    );
    let raw = crate::testing::with_files(
        &raw,
        &[(
            "/etc/kubernetes/kubelet/config.json.d/40-nodeadm.conf",
            "{\n    \"apiVersion\": \"kubelet.config.k8s.io/v1beta1\",\n    \"kind\": \"KubeletConfiguration\",\n    \"resolvConf\": \"/etc/resolv.conf\"\n}",
        )],
    );
    let host = Host::new("node1");
    let fix = |raw: &crate::facts::raw::RawFacts| {
        let facts = NodeFacts::from_raw("node1", raw);
        let RuleOutcome::Findings(f) = kubelet_flags::flag_shadow(&Ctx::new(&host, &facts)) else {
            panic!(
                "the flag shadows the drop-in: {:?}",
                facts.kubelet.resolv_conf
            );
        };
        assert_eq!(f[0].severity, Severity::Warning, "{f:?}");
        f[0].remediation.clone()
    };
    let current = fix(&raw);
    assert!(
        current.contains("keep the value in the NodeConfig's spec.kubelet.config"),
        "{current}"
    );
    let mut unknown = raw.clone();
    assert!(unknown.commands.remove("kubelet-version").is_some());
    let unknown = fix(&unknown);
    assert!(
        unknown.contains("keep --resolv-conf as a flag, in the NodeConfig's spec.kubelet.flags")
            && unknown.contains("which a kubelet of 1.28 to 1.31 (this one's version is not known) does not read resolvConf from (kubernetes#126630)")
            && !unknown.contains("keep the value in the NodeConfig's spec.kubelet.config"),
        "{unknown}"
    );
}

/// A `--resolv-conf` that shadows a `--config-dir` drop-in's resolvConf is kept in that
/// drop-in once it goes, under the spelling the kubelet reads there: resolvConf from 1.32
/// (kubernetes#127421), resolverConfig for 1.28 to 1.31 (kubernetes#126630), both where the
/// version is not known.
#[test]
fn a_shadowing_resolv_conf_is_kept_in_a_dropin_under_the_spelling_the_kubelet_reads() {
    let mut raw = crate::testing::rules_fixture(
        "DNS-KUBELET-LOOPBACK/kubeadm-config-dir-dropin-version-unknown",
    );
    // The flag names the stub (a loop), the drop-in the uplink file.
    let flag = "--resolv-conf=/etc/resolv.conf";
    crate::testing::replace_in_file(
        &mut raw,
        "/etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf",
        "resolvConf: /etc/resolv.conf",
        "resolvConf: /run/systemd/resolve/resolv.conf",
    );
    crate::testing::replace_in_file(
        &mut raw,
        "/var/lib/kubelet/kubeadm-flags.env",
        "--pod-infra-container-image=registry.k8s.io/pause:3.9",
        &format!("--pod-infra-container-image=registry.k8s.io/pause:3.9 {flag}"),
    );
    crate::testing::replace_in_file(
        &mut raw,
        "/proc/2291/cmdline",
        "--config-dir=/etc/kubernetes/kubelet.conf.d",
        &format!("--config-dir=/etc/kubernetes/kubelet.conf.d\0{flag}"),
    );
    let host = Host::new("node1");
    let fix = |version: Option<&str>| {
        let mut raw = raw.clone();
        if let Some(v) = version {
            raw.commands.insert(
                "kubelet-version".into(),
                crate::facts::raw::RawCommand {
                    stdout: format!("Kubernetes {v}\n"),
                    status: Some(0),
                },
            );
        }
        let facts = NodeFacts::from_raw("node1", &raw);
        let RuleOutcome::Findings(f) = kubelet_flags::flag_shadow(&Ctx::new(&host, &facts)) else {
            panic!(
                "the flag shadows the drop-in: {:?}",
                facts.kubelet.resolv_conf
            );
        };
        f[0].remediation.clone()
    };
    let dropin = "/etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf (the --config-dir drop-in that sets it, which beats the config file)";
    let current = fix(Some("v1.33.5"));
    assert!(current.contains(&format!("{dropin};")), "{current}");
    // 1.30 passes the drop-in's resolvConf over: the config file's is the one under the flag.
    let old = fix(Some("v1.30.4"));
    assert!(old.contains("keep the value in the config file;"), "{old}");
    let unknown = fix(None);
    assert!(
        unknown.contains(&format!(
            "{dropin} (resolv.conf's file under both resolvConf and resolverConfig there"
        )),
        "{unknown}"
    );
}

/// On EKS, a kubelet before 1.32 does not read resolvConf from the drop-in nodeadm writes
/// spec.kubelet.config to (kubernetes#126630): the fix goes to spec.kubelet.flags there.
#[test]
fn eks_before_1_32_takes_resolv_conf_from_nodeconfig_flags() {
    let remediation = |case: &str| {
        loopback_remediation(&crate::testing::rules_fixture(&format!("_upstream/{case}")))
    };
    let old = remediation("eks-al2023-1.31-nodeconfig-resolvconf");
    assert!(
        old.contains("add --resolv-conf to spec.kubelet.flags"),
        "{old}"
    );
    let new = remediation("eks-al2023-old-stub");
    assert!(new.contains("set spec.kubelet.config.resolvConf"), "{new}");
    // A restart reads nothing new: nodeadm writes the kubelet's config at boot.
    assert!(
        new.contains("replace the node") && !new.contains("restart kubelet"),
        "{new}"
    );
    // nodeadm writes spec.kubelet.config to the drop-in for every kubelet since
    // amazon-eks-ami b1e7d354: where the version is not known, the flag, which always counts.
    let mut raw = crate::testing::rules_fixture("_upstream/eks-al2023-old-stub");
    raw.commands.remove("kubelet-version");
    assert_eq!(NodeFacts::from_raw("node1", &raw).kubelet.version, None);
    let unknown = loopback_remediation(&raw);
    assert!(
        unknown.contains("add --resolv-conf to spec.kubelet.flags"),
        "{unknown}"
    );
}

/// Where a `--config-dir` drop-in or a `--resolv-conf` flag sets a kubeadm or Kubespray
/// kubelet's resolvConf, the fix names that place: both beat the config file (the flag
/// every config, a drop-in the file it is merged over), so an edit of config.yaml, or of
/// kubeadm's kubelet-config ConfigMap, would change nothing.
#[test]
fn a_resolv_conf_set_outside_the_config_file_is_fixed_where_it_is_set() {
    let remediation = |case: &str| {
        loopback_remediation(&crate::testing::rules_fixture(&format!(
            "DNS-KUBELET-LOOPBACK/{case}"
        )))
    };
    let config_yaml = "set resolvConf in /var/lib/kubelet/config.yaml";

    let dropin = remediation("kubeadm-1.33-config-dir-dropin");
    assert!(
        dropin.contains(
            "set resolvConf in /etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf:3: that --config-dir drop-in sets it, and it beats /var/lib/kubelet/config.yaml"
        ) && !dropin.contains(config_yaml),
        "{dropin}"
    );
    // A kubelet of unknown version may be one of those that read it there only as
    // resolverConfig (1.28 to 1.31): where config.yaml sets the same file (so that every
    // version loops), the fix writes both spellings.
    let mut raw = crate::testing::rules_fixture(
        "DNS-KUBELET-LOOPBACK/kubeadm-config-dir-dropin-version-unknown",
    );
    crate::testing::replace_in_file(
        &mut raw,
        "/var/lib/kubelet/config.yaml",
        "resolvConf: /run/systemd/resolve/resolv.conf",
        "resolvConf: /etc/resolv.conf",
    );
    let unknown = loopback_remediation(&raw);
    assert!(
        unknown.contains(
            "set resolvConf in /etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf:3, and resolverConfig beside it (the spelling kubelet 1.28 to 1.31 read in a drop-in; this kubelet's version is not known to be 1.32 or later)"
        ),
        "{unknown}"
    );
    assert!(!dropin.contains("resolverConfig"), "{dropin}");
    // Kubelet 1.28 to 1.31 read it there as resolverConfig.
    let spelled = remediation("kubeadm-1.31-config-dir-resolverconfig");
    assert!(
        spelled.contains("set resolverConfig in /etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf:3 (the spelling kubelet 1.28 to 1.31 read in a drop-in), and resolvConf beside it")
            && !spelled.contains(config_yaml),
        "{spelled}"
    );
    let flag = remediation("kubeadm-1.30-etc-default-stub-flag");
    assert!(
        flag.contains("--resolv-conf at /etc/default/kubelet:1 sets it, and a flag beats the config file: change the flag there, or remove it (without it, /var/lib/kubelet/config.yaml:40 resolvConf: /run/systemd/resolve/resolv.conf counts)")
            && !flag.contains(config_yaml),
        "{flag}"
    );
    // In a unit drop-in's ExecStart, read again after a daemon-reload.
    let unit = loopback_remediation(&crate::testing::rules_fixture(
        "DNS-KUBELET-FLAG-SHADOW/kubeadm-dropin-execstart-flag",
    ));
    assert!(
        unit.contains(
            "--resolv-conf at /etc/systemd/system/kubelet.service.d/20-dns.conf:3 sets it, and a flag beats the config file: change the flag there, or remove it (without it, /var/lib/kubelet/config.yaml:38 resolvConf: /run/systemd/resolve/resolv.conf counts), then systemctl daemon-reload"
        ),
        "{unit}"
    );
    // Set in the config file: there, and where the installer keeps it.
    let kubespray = remediation("kubespray-3979-ubuntu1804-stub");
    assert!(
        kubespray.contains(
            "set resolvConf in /etc/kubernetes/kubelet-config.yaml and make Kubespray agree"
        ),
        "{kubespray}"
    );
}

/// Where no file sets a bridge key, br_netfilter's own 1 holds at boot; but a glob that
/// sets it to 0 does name it, and a sysctl file that could not be read might: the first is
/// a finding, the second unknown, never a pass.
#[test]
fn bridge_keys_at_the_module_default_pass_unless_a_glob_or_an_unread_file_may_set_them() {
    let base = crate::testing::rules_fixture(
        "DNS-BRIDGE-NF-NOT-PERSISTENT/weave-module-at-boot-keys-at-default",
    );
    let host = Host::new("node1");
    let outcome = |raw: &crate::facts::raw::RawFacts| {
        let facts = NodeFacts::from_raw("node1", raw);
        (
            bridge_nf_not_persistent(&Ctx::new(&host, &facts)),
            ip_forward(&Ctx::new(&host, &facts)),
        )
    };
    assert_eq!(outcome(&base), (RuleOutcome::Pass, RuleOutcome::Pass));

    let mut glob = base.clone();
    glob.file(
        "/etc/sysctl.d/zz-hardening.conf",
        crate::facts::raw::FileState::Present,
        Some(b"net.bridge.bridge-nf-call-* = 0\n"),
    );
    let (RuleOutcome::Findings(f), _) = outcome(&glob) else {
        panic!("a glob that sets 0 reverts the key at boot");
    };
    // Weave sets the key again whenever its pod starts: a warning, for the next
    // `sysctl --system` under it.
    assert!(
        f[0].evidence.iter().any(|e| e.contains(
            "/etc/sysctl.d/zz-hardening.conf:1 sets net.bridge.bridge-nf-call-iptables = 0, which a later `sysctl --system` applies over the 1 Weave sets"
        )),
        "{f:?}"
    );

    let mut unread = base.clone();
    unread.file(
        "/etc/sysctl.d/zz.conf",
        crate::facts::raw::FileState::Unreadable,
        None,
    );
    let (bridge, forward) = outcome(&unread);
    for o in [bridge, forward] {
        let RuleOutcome::Findings(f) = o else {
            panic!("an unread sysctl file is unknown: {o:?}");
        };
        assert_eq!(
            f[0].status,
            crate::diagnose::FindingStatus::Unknown,
            "{f:?}"
        );
        assert!(
            f[0].summary
                .contains("/etc/sysctl.d/zz.conf could not be read")
                || f[0]
                    .evidence
                    .iter()
                    .any(|e| e.contains("/etc/sysctl.d/zz.conf could not be read")),
            "{f:?}"
        );
    }
}

/// A `nameserver` line with no address makes kubelet reject its resolv.conf for every pod
/// (dns.go parseResolvConf, "nameserver list is empty"), even beside real servers.
#[test]
fn a_nameserver_line_without_an_address_stops_every_pod() {
    let mut raw = crate::testing::rules_fixture("_healthy/kubeadm-ubuntu2204");
    let host = Host::new("node1");
    let facts = NodeFacts::from_raw("node1", &raw);
    assert_eq!(
        resolvconf_missing(&Ctx::new(&host, &facts)),
        RuleOutcome::Pass
    );
    let path = "/run/systemd/resolve/resolv.conf";
    let text = crate::testing::text(&raw, path);
    let broken = text.replacen("nameserver ", "nameserver\nnameserver ", 1);
    raw.file(
        path,
        crate::facts::raw::FileState::Present,
        Some(broken.as_bytes()),
    );
    let facts = NodeFacts::from_raw("node1", &raw);
    let RuleOutcome::Findings(f) = resolvconf_missing(&Ctx::new(&host, &facts)) else {
        panic!("an empty nameserver line fails every pod");
    };
    assert_eq!(f[0].severity, Severity::Critical);
    assert!(f[0].summary.contains("nameserver list is empty"), "{f:?}");
}

/// Kubespray's CoreDNS and nodelocaldns forward to upstream_dns_servers where it is set,
/// not to kubelet's file: a loopback server there loops nothing (a warning for the other
/// Default pods); and pods get the first three servers only, so a loopback fourth is no
/// loop at all.
#[test]
fn a_loopback_server_loops_only_where_coredns_forwards_to_it() {
    let mut raw =
        crate::testing::rules_fixture("DNS-KUBELET-LOOPBACK/kubespray-3979-ubuntu1804-stub");
    let facts = NodeFacts::from_raw("node1", &raw);
    let host = Host::new("node1");
    let severity = |host: &Host, facts: &NodeFacts| match super::kubelet_file::kubelet_loopback(
        &Ctx::new(host, facts),
    ) {
        RuleOutcome::Findings(f) => Some(f[0].severity),
        _ => None,
    };
    assert_eq!(severity(&host, &facts), Some(Severity::Critical));
    let mut upstreams = host.clone();
    upstreams.vars.insert(
        "upstream_dns_servers".into(),
        serde_json::json!(["192.0.2.53"]),
    );
    assert_eq!(severity(&upstreams, &facts), Some(Severity::Warning));
    // Only the CoreDNS Kubespray deploys has upstream_dns_servers in its Corefile: not
    // with dns_mode manual or none, nor deploy_coredns false.
    for (key, value) in [
        ("dns_mode", "manual".into()),
        ("dns_mode", "none".into()),
        ("deploy_coredns", false.into()),
    ] {
        let mut theirs = upstreams.clone();
        theirs.vars.insert(key.into(), value);
        assert_eq!(severity(&theirs, &facts), Some(Severity::Critical), "{key}");
    }
    // The Corefile read from the cluster outranks the inventory: deployed before
    // upstream_dns_servers was set, it still forwards to the pod's resolv.conf.
    let corefile = |forward: &str| {
        let text = format!(".:53 {{\n    errors\n    loop\n    forward . {forward}\n}}\n");
        crate::cluster::Cluster::Read {
            via: "cp1".into(),
            pods: Vec::new(),
            config: Box::new(crate::cluster::DnsConfig {
                corefiles: vec![crate::cluster::Corefile::new("coredns", "Corefile", &text)],
                ..Default::default()
            }),
            kubelets: Default::default(),
        }
    };
    let in_cluster = |host: &Host, cluster| match super::kubelet_file::kubelet_loopback(
        &Ctx::in_cluster(host, &facts, Some(&cluster)),
    ) {
        RuleOutcome::Findings(f) => Some(f[0].severity),
        _ => None,
    };
    assert_eq!(
        in_cluster(&upstreams, corefile("/etc/resolv.conf")),
        Some(Severity::Critical)
    );
    assert_eq!(
        in_cluster(&host, corefile("192.0.2.53")),
        Some(Severity::Warning)
    );

    // The kubelet's /etc/resolv.conf, read through its link to the stub.
    for path in ["/etc/resolv.conf", "/run/systemd/resolve/stub-resolv.conf"] {
        let text = crate::testing::text(&raw, path);
        let fourth = text.replace(
            "nameserver 127.0.0.53",
            "nameserver 192.0.2.1\nnameserver 192.0.2.2\nnameserver 192.0.2.3\nnameserver 127.0.0.53",
        );
        raw.file(
            path,
            crate::facts::raw::FileState::Present,
            Some(fourth.as_bytes()),
        );
    }
    let facts = NodeFacts::from_raw("node1", &raw);
    assert_eq!(severity(&host, &facts), None);
}

/// musl reads resolv.conf lines into 256 bytes and skips a longer one whole: a pod's
/// search line of 255 characters or more (the namespace's name counts) loses Alpine pods
/// every search domain, within kubelet's expanded limits too.
#[test]
fn a_search_line_musl_skips_is_over_the_limit_even_where_kubelet_keeps_it() {
    let (host, mut facts) = five_domains();
    facts.kubelet.version = Some("v1.29.4".into());
    let outcome = |facts: &NodeFacts| search_limit(&Ctx::new(&host, facts));
    assert_eq!(outcome(&facts), RuleOutcome::Pass);
    let with_search = |search: &str| {
        let mut raw = crate::testing::rules_fixture("DNS-SEARCH-LIMIT/expanded-five-domains-1.29");
        let path = "/run/systemd/resolve/resolv.conf";
        let text = crate::testing::text(&raw, path);
        let text = text.replace(
            "search corp.example eng.corp.example example.internal lab.example.internal qa.example.internal",
            &format!("search {search}"),
        );
        raw.file(
            path,
            crate::facts::raw::FileState::Present,
            Some(text.as_bytes()),
        );
        let mut facts = NodeFacts::from_raw("node1", &raw);
        facts.kubelet.version = Some("v1.29.4".into());
        facts
    };
    let long = |c: &str, n: usize| format!("{}.example.com", c.repeat(n - 12));
    let some = with_search(&[long("a", 60), long("b", 60), long("c", 69)].join(" "));
    let RuleOutcome::Findings(f) = outcome(&some) else {
        panic!("long namespaces lose their search line");
    };
    // 249 characters and the namespace's name: from 6 characters on, 255 or more.
    assert!(
        f[0].summary
            .contains("namespaces whose names are 6 characters or longer"),
        "{f:?}"
    );
    let all = with_search(&[long("a", 100), long("b", 100)].join(" "));
    let RuleOutcome::Findings(f) = outcome(&all) else {
        panic!("every pod loses its search line");
    };
    assert!(f[0].summary.contains("for every pod"), "{f:?}");
}

/// kube-proxy in IPVS mode turns IPv4 forwarding on whenever it starts (pkg/proxy/ipvs
/// proxier, "Set the ip_forward sysctl we need for"): forwarding no file persists does not
/// stay off after a reboot there. In iptables mode it does.
#[test]
fn ipvs_kube_proxy_sets_forwarding_no_file_persists() {
    let raw = crate::testing::rules_fixture("DNS-IP-FORWARD/ip-forward-not-persisted");
    let facts = NodeFacts::from_raw("node1", &raw);
    let host = Host::new("node1");
    let outcome = |mode: Option<&str>, cluster: Option<&str>| {
        let mut host = host.clone();
        if let Some(m) = mode {
            host.vars
                .insert("kube_proxy_mode".into(), serde_json::json!(m));
        }
        let mut ctx = Ctx::new(&host, &facts);
        ctx.kube_proxy_mode =
            cluster.map(|m| (m.to_owned(), "kube-proxy (config.conf)".to_owned()));
        matches!(ip_forward(&ctx), RuleOutcome::Findings(_))
    };
    assert!(outcome(None, None));
    assert!(outcome(Some("iptables"), None));
    assert!(!outcome(Some("ipvs"), None));
    assert!(!outcome(None, Some("ipvs")));
    assert!(outcome(Some("ipvs"), Some("")));
    // flannel's bridge plugin, the pods' gateway, turns it on for every pod it adds.
    let mut flannel = raw.clone();
    flannel.file(
        "/etc/cni/net.d/10-flannel.conflist",
        crate::facts::raw::FileState::Present,
        Some(br#"{"name":"cbr0","cniVersion":"0.3.1","plugins":[{"type":"flannel","delegate":{"hairpinMode":true,"isDefaultGateway":true}},{"type":"portmap","capabilities":{"portMappings":true}}]}"#),
    );
    let with_flannel = NodeFacts::from_raw("node1", &flannel);
    assert_eq!(
        ip_forward(&Ctx::new(&host, &with_flannel)),
        RuleOutcome::Pass
    );
    // A cluster read without a kube-proxy ConfigMap runs none, whatever the inventory says.
    let mut ipvs = host.clone();
    ipvs.vars
        .insert("kube_proxy_mode".into(), serde_json::json!("ipvs"));
    let mut ctx = Ctx::new(&ipvs, &facts);
    ctx.kube_proxy_absent = true;
    assert!(matches!(ip_forward(&ctx), RuleOutcome::Findings(_)));
}

/// A clusterDNS on NodeLocal DNSCache's link-local address that nothing on the node holds
/// (no nodelocaldns interface: node-cache takes it down when it is stopped; or another address
/// on it) is every ClusterFirst lookup timing out, in any kube-proxy mode; where the
/// interface was not looked at, nothing is said.
#[test]
fn a_clusterdns_nothing_on_the_node_answers_is_critical() {
    use crate::facts::node_facts::NODELOCALDNS_SYSFS;
    use crate::facts::raw::FileState;
    let base = crate::testing::rules_fixture("_upstream/kubespray-head-ubuntu2204-default");
    let mut host = Host::new("node1");
    host.vars
        .insert("kube_proxy_mode".into(), serde_json::json!("iptables"));
    let outcome = |raw: &crate::facts::raw::RawFacts| {
        let facts = NodeFacts::from_raw("node1", raw);
        super::kubelet_flags::nodelocal_clusterdns(&Ctx::new(&host, &facts))
    };
    assert!(!matches!(outcome(&base), RuleOutcome::Findings(_)));

    let mut gone = base.clone();
    gone.commands.remove("nodelocaldns-addr");
    assert!(
        !matches!(outcome(&gone), RuleOutcome::Findings(_)),
        "not looked at"
    );
    gone.file(NODELOCALDNS_SYSFS, FileState::Missing, None);
    let RuleOutcome::Findings(f) = outcome(&gone) else {
        panic!("no interface answers 169.254.25.10");
    };
    assert_eq!(f[0].severity, Severity::Critical);
    assert!(f[0].summary.contains("no nodelocaldns interface"), "{f:?}");
    // Another nodelocaldns_ip than clusterDNS's: not Kubespray's cache, nothing is said
    // (AKS LocalDNS holds 169.254.10.11 on `localdns`).
    let mut other_ip = host.clone();
    other_ip
        .vars
        .insert("nodelocaldns_ip".into(), serde_json::json!("169.254.20.10"));
    let facts = NodeFacts::from_raw("node1", &gone);
    assert!(!matches!(
        super::kubelet_flags::nodelocal_clusterdns(&Ctx::new(&other_ip, &facts)),
        RuleOutcome::Findings(_)
    ));
    // With Cilium as the CNI, its Local Redirect Policy may serve the address: unknown.
    let mut cilium = gone.clone();
    cilium.file(
        "/etc/cni/net.d/05-cilium.conflist",
        FileState::Present,
        Some(br#"{"cniVersion":"0.3.1","name":"cilium","plugins":[{"type":"cilium-cni"}]}"#),
    );
    let RuleOutcome::Findings(f) = outcome(&cilium) else {
        panic!("unknown with cilium");
    };
    assert_eq!(
        f[0].status,
        crate::diagnose::FindingStatus::Unknown,
        "{f:?}"
    );
    // The same on CRI-O (the kubelet's containerRuntimeEndpoint its socket), whose unit's
    // environment file passes an option that chooses no network, or one that does
    // (contrib/systemd/crio.service and internal/criocli/criocli.go @f954a17e): Cilium's
    // file is still the files' network, and the exception holds.
    let config = "/etc/kubernetes/kubelet-config.yaml";
    let text = cilium
        .get(config)
        .and_then(|f| f.text())
        .expect("kubelet config");
    let crio_config = text.replace(
        "unix:///var/run/containerd/containerd.sock",
        "unix:///var/run/crio/crio.sock",
    );
    assert_ne!(crio_config, text);
    // A drop-in naming the network in a dotted key dnsfix does not read: Cilium's file is
    // only the first by name, and the finding says so.
    for (path, options) in [
        (
            "/etc/sysconfig/crio",
            "CRIO_CONFIG_OPTIONS=\"--log-level=info\"\n",
        ),
        (
            "/etc/sysconfig/crio",
            "CRIO_NETWORK_OPTIONS=\"--cni-default-network=cilium\"\n",
        ),
        (
            "/etc/crio/crio.conf.d/20-network.conf",
            "[crio]\nnetwork.cni_default_network = \"crio\"\n",
        ),
    ] {
        let crio = crate::testing::with_files(&cilium, &[(config, &crio_config), (path, options)]);
        let RuleOutcome::Findings(f) = outcome(&crio) else {
            panic!("{options}: unknown with cilium on CRI-O");
        };
        assert_eq!(
            f[0].status,
            crate::diagnose::FindingStatus::Unknown,
            "{options}: {f:?}"
        );
        let caveat = "if Cilium's is the network CRI-O gives pods, which is not known (/etc/crio/crio.conf.d/20-network.conf:2 sets cni_default_network in a form dnsfix does not read; /etc/cni/net.d/05-cilium.conflist is only the first CNI file by name)";
        assert_eq!(
            f[0].summary.contains(caveat),
            path.starts_with("/etc/crio/"),
            "{f:?}"
        );
    }

    let mut other = base.clone();
    crate::testing::set_command(
        &mut other,
        "nodelocaldns-addr",
        "5: nodelocaldns    inet 169.254.20.10/32 scope global nodelocaldns\\       valid_lft forever preferred_lft forever\n",
        0,
    );
    let RuleOutcome::Findings(f) = outcome(&other) else {
        panic!("the interface holds another address");
    };
    assert_eq!(f[0].severity, Severity::Critical);
    assert!(
        f[0].remediation
            .contains("set clusterDNS to [169.254.20.10]"),
        "{f:?}"
    );
}

/// What the Corefiles read from the cluster say of `forward .`: node-cache's placeholder is
/// the pod's resolv.conf; a root block without a forward, or none read, says nothing; an
/// unread nodelocaldns Corefile matters only where its pods run.
#[test]
fn corefile_forwards_reads_files_placeholders_and_gaps() {
    use crate::cluster::{Corefile, DnsConfig};
    let corefile = |configmap: &str, body: &str| {
        let text = format!(".:53 {{\n    errors\n{body}}}\n");
        Corefile::new(configmap, "Corefile", &text)
    };
    let config = |files: Vec<Corefile>| DnsConfig {
        corefiles: files,
        ..Default::default()
    };
    let forwards =
        |files, which: &str| super::corefile_forwards(&config(files), which == "nodelocaldns");
    assert_eq!(forwards(vec![], "coredns"), None);
    assert_eq!(
        forwards(
            vec![corefile("coredns", "    forward . 192.0.2.53\n")],
            "coredns"
        ),
        Some(false)
    );
    assert_eq!(
        forwards(
            vec![corefile("coredns", "    forward . /etc/resolv.conf\n")],
            "coredns"
        ),
        Some(true)
    );
    assert_eq!(
        forwards(
            vec![corefile("coredns", "    proxy . /etc/resolv.conf\n")],
            "coredns"
        ),
        None
    );
    // Only /etc/resolv.conf is the file the kubelet hands the pod: another path is one
    // mounted into it, which lists what it lists. Before, any path was the kubelet's.
    assert_eq!(
        forwards(
            vec![corefile(
                "coredns",
                "    forward . /etc/coredns/resolv.conf\n"
            )],
            "coredns"
        ),
        None
    );
    assert_eq!(
        forwards(
            vec![corefile(
                "nodelocaldns",
                "    forward . __PILLAR__UPSTREAM__SERVERS__\n"
            )],
            "nodelocaldns"
        ),
        Some(true)
    );
    // The upstream manifest's ConfigMap counts with Kubespray's.
    assert_eq!(
        super::corefile_forwards(
            &config(vec![corefile(
                "node-local-dns",
                "    forward . __PILLAR__UPSTREAM__SERVERS__\n"
            )]),
            true
        ),
        Some(true)
    );
    // Unless kube-dns's ConfigMap names upstreamNameservers: node-cache puts those there.
    let kube_dns = crate::cluster::parse_configmaps(
        br#"{"kind":"ConfigMap","metadata":{"name":"kube-dns"},"data":{"upstreamNameservers":"[\"192.0.2.53\", \"198.51.100.53\"]"}}"#,
    )
    .expect("parses");
    assert_eq!(kube_dns.kube_dns_upstreams, ["192.0.2.53", "198.51.100.53"]);
    assert_eq!(
        super::corefile_forwards(
            &DnsConfig {
                corefiles: vec![corefile(
                    "node-local-dns",
                    "    forward . __PILLAR__UPSTREAM__SERVERS__\n"
                )],
                ..kube_dns
            },
            true
        ),
        Some(false)
    );
}

/// NodeLocal DNSCache runs in the host's network namespace: a loopback server in kubelet's
/// file is the host's own resolver to it, so only CoreDNS's Corefile decides whether
/// DNS-KUBELET-LOOPBACK loops.
#[test]
fn only_coredns_loops_on_a_loopback_server() {
    use crate::cluster::{Cluster, Corefile, DnsConfig};
    let raw = crate::testing::rules_fixture("DNS-KUBELET-LOOPBACK/kubespray-3979-ubuntu1804-stub");
    let facts = NodeFacts::from_raw("node1", &raw);
    let host = Host::new("node1");
    let corefile = |configmap: &str, forward: &str| {
        let text = format!(".:53 {{\n    loop\n    forward . {forward}\n}}\n");
        Corefile::new(configmap, "Corefile", &text)
    };
    let cluster = Cluster::Read {
        via: "cp1".into(),
        pods: Vec::new(),
        config: Box::new(DnsConfig {
            corefiles: vec![
                corefile("coredns", "192.0.2.53"),
                corefile("nodelocaldns", "/etc/resolv.conf"),
            ],
            ..Default::default()
        }),
        kubelets: Default::default(),
    };
    let ctx = Ctx::in_cluster(&host, &facts, Some(&cluster));
    let RuleOutcome::Findings(f) = super::kubelet_file::kubelet_loopback(&ctx) else {
        panic!("the loopback is still handed to Default pods");
    };
    assert_eq!(f[0].severity, Severity::Warning);
    assert_eq!(ctx.corefile_forwards_to_file, Some(true));
}

/// Forwarding is checked in the family pod DNS goes by: the kubelet's first clusterDNS
/// server's, and IPv4 too unless the cluster is IPv6 only (clusterDNS has only IPv6
/// servers, or the Kubespray inventory says ipv4_stack: false). IPv6 forwarding off is
/// critical there, and its fix names router advertisements; kube-proxy IPVS turns only
/// IPv4's on, the network plugin both.
#[test]
fn forwarding_is_checked_in_the_family_pod_dns_goes_by() {
    use super::kernel::{Family, forwarding_families, forwarding_keys};
    use crate::facts::raw::FileState;
    let base = crate::testing::rules_fixture("DNS-IP-FORWARD/kubespray-ipv6-only");
    let vars: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/rules/DNS-IP-FORWARD/kubespray-ipv6-only/vars.json"
        ))
        .expect("vars"),
    )
    .expect("json");
    let mut host = Host::new("node1");
    host.vars = vars.as_object().cloned().expect("object");
    let facts = NodeFacts::from_raw("node1", &base);
    let ctx = Ctx::new(&host, &facts);
    assert_eq!(forwarding_families(&ctx), [Family::V6]);
    assert_eq!(ip_forward(&ctx), RuleOutcome::Pass);

    // Off, and no file sets it: critical, IPv6 only.
    let mut off = base.clone();
    off.file(
        "/proc/sys/net/ipv6/conf/all/forwarding",
        FileState::Present,
        Some(b"0\n"),
    );
    let conf = String::from_utf8(off.get("/etc/sysctl.conf").expect("conf").content.to_vec())
        .expect("text")
        .replace("net.ipv6.conf.all.forwarding=1\n", "");
    off.file(
        "/etc/sysctl.conf",
        FileState::Present,
        Some(conf.as_bytes()),
    );
    off.link(
        "/etc/sysctl.d/99-sysctl.conf",
        "../sysctl.conf",
        "/etc/sysctl.conf",
        conf.as_bytes(),
    );
    let facts = NodeFacts::from_raw("node1", &off);
    let ctx = Ctx::new(&host, &facts);
    let RuleOutcome::Findings(f) = ip_forward(&ctx) else {
        panic!("IPv6 forwarding is off");
    };
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].severity, Severity::Critical);
    assert!(f[0].summary.starts_with("IPv6 forwarding is off"), "{f:?}");
    assert!(f[0].remediation.contains("accept_ra=2"), "{f:?}");
    assert_eq!(forwarding_keys(&ctx), ["net.ipv6.conf.all.forwarding"]);

    // On but not persisted: high; kube-proxy IPVS does not set IPv6's, Calico's felix does.
    let mut unpersisted = off.clone();
    unpersisted.file(
        "/proc/sys/net/ipv6/conf/all/forwarding",
        FileState::Present,
        Some(b"1\n"),
    );
    let facts = NodeFacts::from_raw("node1", &unpersisted);
    let RuleOutcome::Findings(f) = ip_forward(&Ctx::new(&host, &facts)) else {
        panic!("IPVS does not set IPv6 forwarding");
    };
    assert_eq!(f[0].severity, Severity::High);
    assert!(
        f[0].summary
            .starts_with("IPv6 forwarding is on but not persisted")
    );
    let calico = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/rules/_upstream/cni-calico-brnf-off/root/etc/cni/net.d/10-calico.conflist"
    ))
    .expect("calico conflist");
    unpersisted.file(
        "/etc/cni/net.d/10-calico.conflist",
        FileState::Present,
        Some(&calico),
    );
    let facts = NodeFacts::from_raw("node1", &unpersisted);
    assert_eq!(ip_forward(&Ctx::new(&host, &facts)), RuleOutcome::Pass);

    // Dual-stack: the first clusterDNS server's family first, IPv4 while any server is.
    let families = |dns: &[&str]| {
        let mut raw = crate::testing::rules_fixture("_healthy/kubespray-ubuntu2204");
        let path = "/etc/kubernetes/kubelet-config.yaml";
        let text = String::from_utf8(raw.get(path).expect("config").content.to_vec())
            .expect("text")
            .replace(
                "clusterDNS:\n- 169.254.25.10\n",
                &format!(
                    "clusterDNS:\n{}",
                    dns.iter().map(|d| format!("- {d}\n")).collect::<String>()
                ),
            );
        raw.file(path, FileState::Present, Some(text.as_bytes()));
        let facts = NodeFacts::from_raw("node1", &raw);
        forwarding_families(&Ctx::new(&Host::new("node1"), &facts))
    };
    assert_eq!(
        families(&["10.233.0.3", "fd85:ee78:d8a6:8607::1003"]),
        [Family::V4]
    );
    assert_eq!(
        families(&["fd85:ee78:d8a6:8607::1003", "10.233.0.3"]),
        [Family::V6, Family::V4]
    );
    assert_eq!(families(&["fd85:ee78:d8a6:8607::1003"]), [Family::V6]);
    // Kubespray IPv6-only keeps nodelocaldns's IPv4 link-local clusterDNS: IPv6 only.
    let raw = crate::testing::rules_fixture("_healthy/kubespray-ubuntu2204");
    let facts = NodeFacts::from_raw("node1", &raw);
    let mut v6_only = Host::new("node1");
    v6_only
        .vars
        .insert("ipv4_stack".into(), serde_json::json!(false));
    assert_eq!(
        forwarding_families(&Ctx::new(&v6_only, &facts)),
        [Family::V6]
    );
}

/// A sysctl file that sets forwarding to 0 where kube-proxy (ipvs) turns it on whenever it
/// starts: the boot's 0 does not last, only a later `sysctl --system` turns it off.
#[test]
fn a_file_setting_forwarding_off_under_ipvs_kube_proxy_is_a_warning() {
    let raw = crate::testing::rules_fixture("DNS-IP-FORWARD/sysctl-conf-red-hat-tuning");
    let facts = NodeFacts::from_raw("node1", &raw);
    let host = Host::new("node1");
    let RuleOutcome::Findings(f) = ip_forward(&Ctx::new(&host, &facts)) else {
        panic!("0 at the next boot");
    };
    assert_eq!(f[0].severity, Severity::High);
    let mut ipvs = host.clone();
    ipvs.vars
        .insert("kube_proxy_mode".into(), serde_json::json!("ipvs"));
    let RuleOutcome::Findings(f) = ip_forward(&Ctx::new(&ipvs, &facts)) else {
        panic!("a later sysctl --system turns it off");
    };
    assert_eq!(f[0].severity, Severity::Warning, "{f:?}");
    assert!(f[0].summary.contains("kube-proxy (ipvs mode)"), "{f:?}");
    assert!(
        f[0].evidence[0].contains("sets net.ipv4.ip_forward = 0"),
        "{f:?}"
    );
}

/// On EKS a kubelet flag that overrides nodeadm's config.json comes from the NodeConfig's
/// spec.kubelet.flags (nodeadm appends them after its own, in /etc/eks/kubelet/environment):
/// the way the NodeConfig says it, not a trap for someone editing config.json, which
/// nodeadm rewrites at every boot. Info, and the fix names the NodeConfig.
#[test]
fn a_nodeconfig_flag_over_nodeadms_config_is_info() {
    use crate::facts::raw::FileState;
    let mut raw = crate::testing::rules_fixture("_upstream/eks-al2023-nodeadm");
    let env = "/etc/eks/kubelet/environment";
    let text = crate::testing::text(&raw, env);
    raw.file(
        env,
        FileState::Present,
        Some(format!("{} --cluster-dns=169.254.20.10", text.trim_end()).as_bytes()),
    );
    let cmdline = "/proc/3456/cmdline";
    let mut argv = raw.get(cmdline).expect("cmdline").content.to_vec();
    argv.extend_from_slice(b"--cluster-dns=169.254.20.10\0");
    raw.file(cmdline, FileState::Present, Some(&argv));
    let facts = NodeFacts::from_raw("node1", &raw);
    let host = Host::new("node1");
    let RuleOutcome::Findings(f) = super::kubelet_flags::flag_shadow(&Ctx::new(&host, &facts))
    else {
        panic!("a finding: {:?}", facts.kubelet.cluster_dns);
    };
    assert_eq!(f[0].severity, Severity::Info, "{f:?}");
    assert!(
        f[0].evidence[0].starts_with("/etc/eks/kubelet/environment:1 --cluster-dns=169.254.20.10 overrides /etc/kubernetes/kubelet/config.json"),
        "{f:?}"
    );
    assert!(
        f[0].remediation
            .contains("spec.kubelet.flags in the NodeConfig"),
        "{f:?}"
    );
}

/// DNS-RESOLV-MANAGED-ELSEWHERE on `raw`, with the inventory's upstream_dns_servers set
/// (`upstream`) or not.
fn managed_elsewhere(raw: &crate::facts::raw::RawFacts, upstream: bool) -> RuleOutcome {
    let facts = NodeFacts::from_raw("node1", raw);
    let mut host = Host::new("node1");
    if upstream {
        host.vars.insert(
            "upstream_dns_servers".into(),
            serde_json::json!(["192.0.2.53"]),
        );
    }
    super::node_resolver::resolv_managed_elsewhere(&Ctx::new(&host, &facts))
}

/// DNS-RESOLV-MANAGED-ELSEWHERE's findings on `raw` ([`managed_elsewhere`]).
fn managed_findings(raw: &crate::facts::raw::RawFacts, upstream: bool) -> Vec<Finding> {
    let RuleOutcome::Findings(found) = managed_elsewhere(raw, upstream) else {
        panic!("findings expected")
    };
    found
}

/// The finding among `found` whose first evidence line starts with `prefix` (a file, and a
/// line of it): `what`, said where there is none.
fn finding_at<'f>(found: &'f [Finding], prefix: &str, what: &str) -> &'f Finding {
    found
        .iter()
        .find(|f| f.evidence[0].starts_with(prefix))
        .unwrap_or_else(|| panic!("{what}: {found:?}"))
}

/// dhclient's supersede line is judged as the kubelet's file would be once a lease brings
/// its servers there: where CoreDNS and nodelocaldns forward to that file, high; where they
/// forward elsewhere (Kubespray's upstream_dns_servers), a loopback server is a warning
/// and the cluster address alone, which Kubespray's host_resolvconf puts first on purpose,
/// is info. The fix says what Kubespray renders its line from.
#[test]
fn a_dhclient_supersede_line_is_as_bad_as_its_servers_would_be_for_pods() {
    use crate::facts::raw::FileState;
    let raw =
        crate::testing::rules_fixture("DNS-RESOLV-MANAGED-ELSEWHERE/kubespray-9948-before-reboot");
    let outcome = |raw: &crate::facts::raw::RawFacts, upstream: bool| match managed_elsewhere(
        raw, upstream,
    ) {
        RuleOutcome::Findings(f) => (f[0].severity, f[0].remediation.clone()),
        other => panic!("{other:?}"),
    };
    let (severity, fix) = outcome(&raw, false);
    assert_eq!(severity, Severity::High);
    assert!(
        fix.starts_with("Kubespray writes this line at every run (host_resolvconf)")
            && fix.contains("disable_host_nameservers: true"),
        "{fix}"
    );
    // The fixture's line has no real server: after a lease the node itself resolves
    // nothing until cluster DNS answers, wherever CoreDNS forwards.
    assert_eq!(outcome(&raw, true).0, Severity::High);
    let path = "/etc/dhcp/dhclient.conf";
    let text = crate::testing::text(&raw, path);
    let line = |servers: &str| {
        let edited = text.replace("169.254.25.10, 127.0.0.53;", servers);
        assert_ne!(edited, text);
        let mut raw = raw.clone();
        raw.file(path, FileState::Present, Some(edited.as_bytes()));
        raw
    };
    let loopback = line("169.254.25.10, 127.0.0.53, 192.0.2.53;");
    assert_eq!(outcome(&loopback, true).0, Severity::Warning);
    assert_eq!(outcome(&loopback, false).0, Severity::High);
    let cluster = line("169.254.25.10, 192.0.2.53;");
    assert_eq!(outcome(&cluster, true).0, Severity::Info);
    assert_eq!(outcome(&cluster, false).0, Severity::High);
    assert_eq!(outcome(&line("169.254.25.10;"), true).0, Severity::High);
}

/// A `request` list that leaves out domain-name-servers asks the DHCP server for none
/// (isc-dhcp @572032cb client/clparse.c `REQUEST` replaces the default list; client/
/// dhclient.c `make_client_options` sends it as the parameter request list), and ISC dhcpd
/// then sends none (common/options.c `cons_options`): on ISC's example file with
/// domain-name-servers taken out of its request and require lists, the loopback server
/// its prepend line adds is all the node gets, and a `default` line's servers stand in at
/// every lease, not only after one that brings none. A `require` list with them (dhclient
/// ignores an offer without them), `request;` (no list: the server's defaults) and an
/// `also request domain-name-servers` keep the lease's servers.
#[test]
fn dhclients_request_list_without_domain_name_servers_brings_no_lease_servers() {
    use crate::facts::raw::FileState;
    let raw = crate::testing::rules_fixture(
        "DNS-RESOLV-MANAGED-ELSEWHERE/dhclient-example-prepend-loopback",
    );
    let path = "/etc/dhcp/dhclient.conf";
    let original =
        String::from_utf8(raw.get(path).expect("dhclient.conf").content.to_vec()).expect("text");
    let request = "request subnet-mask, broadcast-address, time-offset, routers,\n\tdomain-name, domain-name-servers, host-name;\n";
    let require = "require subnet-mask, domain-name-servers;\n";
    assert!(original.contains(request) && original.contains(require));
    let unasked = "request subnet-mask, broadcast-address, time-offset, routers,\n\tdomain-name, host-name;\n";
    let with = |from: &[(&str, &str)]| {
        let mut conf = original.clone();
        for (a, b) in from {
            conf = conf.replacen(a, b, 1);
        }
        let mut raw = raw.clone();
        raw.file(path, FileState::Present, Some(conf.as_bytes()));
        managed_findings(&raw, true).remove(0)
    };
    // As shipped (CoreDNS forwarding elsewhere): the lease's servers follow 127.0.0.1.
    assert_eq!(with(&[]).severity, Severity::Warning);
    // Not requested, still required: a lease dhclient takes has them.
    assert_eq!(with(&[(request, unasked)]).severity, Severity::Warning);
    let f = with(&[(request, unasked), (require, "require subnet-mask;\n")]);
    assert_eq!(f.severity, Severity::High, "{f:?}");
    assert!(
        f.summary
            .starts_with("dhclient writes only 127.0.0.1 into the host resolver at every lease"),
        "{f:?}"
    );
    assert!(
        f.evidence.contains(&"/etc/dhcp/dhclient.conf:6: request subnet-mask, broadcast-address, time-offset, routers, domain-name, host-name;".to_owned()),
        "{f:?}"
    );
    assert!(
        f.evidence.iter().any(|e| e.starts_with(
            "no supersede line, but the request list (line 6) leaves out domain-name-servers"
        )),
        "{f:?}"
    );
    // A default line stands in at every lease then: not latent.
    let prepend = "prepend domain-name-servers 127.0.0.1;";
    let default = "default domain-name-servers 127.0.0.1;";
    assert_eq!(with(&[(prepend, default)]).severity, Severity::Info);
    let f = with(&[
        (prepend, default),
        (request, unasked),
        (require, "require subnet-mask;\n"),
    ]);
    assert_eq!(f.severity, Severity::High, "{f:?}");
    // `request;` sends no list (the server's defaults), and `also request` adds them back.
    for back in [
        "request;\n".to_owned(),
        format!("{unasked}also request domain-name-servers;\n"),
    ] {
        let f = with(&[(request, &back), (require, "require subnet-mask;\n")]);
        assert_eq!(f.severity, Severity::Warning, "{back}: {f:?}");
    }
}

/// ISC's example dhclient.conf (DNS-RESOLV-MANAGED-ELSEWHERE/dhclient-example-prepend-loopback)
/// with its `request` and `require` lists replaced by `lists`, judged with CoreDNS
/// forwarding elsewhere: the finding.
fn isc_example_with(lists: &str) -> Finding {
    use crate::facts::raw::FileState;
    let mut raw = crate::testing::rules_fixture(
        "DNS-RESOLV-MANAGED-ELSEWHERE/dhclient-example-prepend-loopback",
    );
    let path = "/etc/dhcp/dhclient.conf";
    let original =
        String::from_utf8(raw.get(path).expect("dhclient.conf").content.to_vec()).expect("text");
    let shipped = "request subnet-mask, broadcast-address, time-offset, routers,\n\tdomain-name, domain-name-servers, host-name;\nrequire subnet-mask, domain-name-servers;\n";
    assert!(original.contains(shipped));
    let conf = original.replacen(shipped, lists, 1);
    raw.file(path, FileState::Present, Some(conf.as_bytes()));
    managed_findings(&raw, true).remove(0)
}

/// The request list that leaves out domain-name-servers is the one a `request` statement
/// set in place of dhclient's default (isc-dhcp @572032cb client/clparse.c lines 661-665:
/// `REQUEST` drops the default list and parses its own); an `also request` after it adds
/// to that list (`TOKEN_ALSO`), so the `request` line is the one named, not the last
/// `also request`. After `request;` (no list), an `also request` makes the list, but
/// `request;` is what replaced the default.
#[test]
fn the_request_line_that_replaced_the_default_list_is_named() {
    let f = isc_example_with(
        "request subnet-mask, routers;\nalso request ntp-servers;\nrequire subnet-mask;\n",
    );
    assert_eq!(f.severity, Severity::High, "{f:?}");
    assert!(
        f.evidence
            .contains(&"/etc/dhcp/dhclient.conf:6: request subnet-mask, routers;".to_owned()),
        "{f:?}"
    );
    assert!(
        f.evidence.iter().any(|e| e.starts_with(
            "no supersede line, but the request list (line 6) leaves out domain-name-servers"
        )),
        "{f:?}"
    );
    assert!(
        !f.evidence.iter().any(|e| e.contains("ntp-servers")),
        "{f:?}"
    );
    let f = isc_example_with("request;\nalso request ntp-servers;\nrequire subnet-mask;\n");
    assert_eq!(f.severity, Severity::High, "{f:?}");
    assert!(
        f.evidence
            .contains(&"/etc/dhcp/dhclient.conf:6: request;".to_owned()),
        "{f:?}"
    );
}

/// On a file NetworkManager made, the list is reset by its `request; # override dhclient
/// defaults`, followed by its own `also request` lines (nm-dhcp-dhclient-utils.c
/// @b92182f1 `nm_dhcp_dhclient_create_config`, lines 431-437 and 502-506), none of them
/// domain-name-servers for IPv4. It writes that `request;` because the file it merges
/// from has a `request` line (its list then merged in): that line is named. The made file
/// below is what create_config writes for ens5 from the source below with no client id,
/// host name, MUD URL or reject list, and a dhcp-timeout under 60: the header, the copied
/// `prepend`, add_ip4_config's option definitions, then the request lines.
#[test]
fn a_networkmanager_request_line_names_the_request_line_it_was_written_for() {
    use crate::facts::raw::FileState;
    let mut raw = crate::testing::rules_fixture(
        "DNS-RESOLV-MANAGED-ELSEWHERE/dhclient-cf-names-another-file",
    );
    let source = b"prepend domain-name-servers 127.0.0.1;\nrequest subnet-mask, routers;\n";
    raw.file("/etc/dhcp/dhclient.conf", FileState::Present, Some(source));
    raw.file(
        "/var/lib/NetworkManager/dhclient-ens5.conf",
        FileState::Present,
        Some(b"# Created by NetworkManager\n# Merged from /etc/dhcp/dhclient.conf\n\nprepend domain-name-servers 127.0.0.1;\n\noption rfc3442-classless-static-routes code 121 = array of unsigned integer 8;\noption ms-classless-static-routes code 249 = array of unsigned integer 8;\noption wpad code 252 = string;\n\nrequest; # override dhclient defaults\nalso request subnet-mask;\nalso request routers;\nalso request rfc3442-classless-static-routes;\nalso request ms-classless-static-routes;\nalso request static-routes;\nalso request wpad;\nalso request ntp-servers;\nalso request root-path;\n\n"),
    );
    raw.file(
        "/proc/912/cmdline",
        FileState::Present,
        Some(b"/sbin/dhclient\0-d\0-q\0-sf\0/usr/libexec/nm-dhcp-helper\0-pf\0/run/NetworkManager/dhclient-ens5.pid\0-lf\0/var/lib/NetworkManager/dhclient-ens5.lease\0-cf\0/var/lib/NetworkManager/dhclient-ens5.conf\0ens5\0"),
    );
    let found = managed_findings(&raw, false);
    let f = finding_at(
        &found,
        "/var/lib/NetworkManager/",
        "a finding on the made file",
    );
    assert!(
        f.evidence
            .contains(&"/var/lib/NetworkManager/dhclient-ens5.conf:10: request;".to_owned()),
        "{f:?}"
    );
    assert!(
        f.evidence.iter().any(|e| e.starts_with(
            "no supersede line, but the request list (line 10) leaves out domain-name-servers"
        )),
        "{f:?}"
    );
    assert!(
        f.evidence.contains(&"/var/lib/NetworkManager/dhclient-ens5.conf:10: request; is NetworkManager's, written for /etc/dhcp/dhclient.conf:2: request subnet-mask, routers;: it merges that list into its own, without domain-name-servers; that line is the one to change".to_owned()),
        "{f:?}"
    );
    assert!(!f.evidence.iter().any(|e| e.contains("root-path")), "{f:?}");
}

/// An interface block starts from a copy of the top level's settings as they are where it
/// opens (isc-dhcp @572032cb client/clparse.c `parse_interface_declaration` →
/// `make_client_config`, lines 984 and 1073-1081), request list included; a later
/// top-level `request` sets a new list on the top level's alone. Its domain-name-servers
/// statements run after all the top level's. So an `also request domain-name-servers` in
/// the block asks for them on that interface (the lease's servers follow 127.0.0.1: a
/// warning where CoreDNS forwards elsewhere), and a block opened before the top-level
/// `request` keeps the default list.
#[test]
fn an_interface_keeps_the_request_list_of_the_top_level_before_its_block() {
    let f = isc_example_with(
        "request subnet-mask, routers;\nrequire subnet-mask;\ninterface \"ens5\" {\n  also request domain-name-servers;\n}\n",
    );
    assert_eq!(f.severity, Severity::Warning, "{f:?}");
    assert!(
        f.evidence
            .iter()
            .any(|e| e == "no supersede line: the lease's own servers are passed on too"),
        "{f:?}"
    );
    // Without the block's line, the top level's list is the interface's too: high.
    let f = isc_example_with(
        "request subnet-mask, routers;\nrequire subnet-mask;\ninterface \"ens5\" {\n  send host-name \"node1\";\n}\n",
    );
    assert_eq!(f.severity, Severity::High, "{f:?}");
    // The block opened before the top-level request: ens5 keeps the default list.
    let prepend_in_block = |before: &str, after: &str| {
        use crate::facts::raw::FileState;
        let mut raw = crate::testing::rules_fixture(
            "DNS-RESOLV-MANAGED-ELSEWHERE/dhclient-example-prepend-loopback",
        );
        let conf = format!(
            "{before}interface \"ens5\" {{\n  prepend domain-name-servers 127.0.0.1;\n}}\n{after}"
        );
        raw.file(
            "/etc/dhcp/dhclient.conf",
            FileState::Present,
            Some(conf.as_bytes()),
        );
        managed_findings(&raw, true).remove(0)
    };
    let f = prepend_in_block("", "request subnet-mask, routers;\n");
    assert_eq!(f.severity, Severity::Warning, "{f:?}");
    assert!(!f.evidence.iter().any(|e| e.contains("request")), "{f:?}");
    // Before the block, it is ens5's list too.
    let f = prepend_in_block("request subnet-mask, routers;\n", "");
    assert_eq!(f.severity, Severity::High, "{f:?}");
}

/// dhclient runs the statements of dhclient.conf in order over the lease's options
/// (isc-dhcp common/options.c `set_option` @572032cb): `prepend` and `append` add their
/// servers to the lease's, `supersede` replaces everything before it. So ISC's own example
/// file (`prepend domain-name-servers 127.0.0.1;`) hands a loopback server on at every lease,
/// a supersede after the prepend takes it away again, one before it does not, and the
/// statement may be spelt with a tab, span lines, or stand in an interface block.
#[test]
fn dhclients_prepend_and_append_lines_count_in_their_order() {
    use crate::facts::raw::FileState;
    let raw = crate::testing::rules_fixture(
        "DNS-RESOLV-MANAGED-ELSEWHERE/dhclient-example-prepend-loopback",
    );
    let path = "/etc/dhcp/dhclient.conf";
    let outcome = |raw: &crate::facts::raw::RawFacts, upstream: bool| match managed_elsewhere(
        raw, upstream,
    ) {
        RuleOutcome::Findings(f) => Some((f[0].severity, f[0].evidence.clone())),
        RuleOutcome::Pass => None,
        other => panic!("{other:?}"),
    };
    let (severity, evidence) = outcome(&raw, false).expect("a finding");
    assert_eq!(severity, Severity::High);
    assert_eq!(
        evidence[0],
        "/etc/dhcp/dhclient.conf:5: prepend domain-name-servers 127.0.0.1;"
    );
    // CoreDNS forwards elsewhere: the lease's servers follow the loopback one, so pods off
    // the host network that get the file are what it harms.
    assert_eq!(outcome(&raw, true).map(|o| o.0), Some(Severity::Warning));
    let with = |conf: &str| {
        let mut raw = raw.clone();
        raw.file(path, FileState::Present, Some(conf.as_bytes()));
        raw
    };
    let later_supersede =
        with("prepend domain-name-servers 127.0.0.1;\nsupersede domain-name-servers 192.0.2.53;\n");
    assert_eq!(outcome(&later_supersede, false), None);
    let earlier_supersede =
        with("supersede domain-name-servers 192.0.2.53;\nappend domain-name-servers ::1;\n");
    let (_, evidence) = outcome(&earlier_supersede, false).expect("a finding");
    assert_eq!(
        evidence[..2],
        [
            "/etc/dhcp/dhclient.conf:1: supersede domain-name-servers 192.0.2.53;",
            "/etc/dhcp/dhclient.conf:2: append domain-name-servers ::1;"
        ]
    );
    let tab = with("supersede\tdomain-name-servers 127.0.0.53;\n");
    assert_eq!(outcome(&tab, false).map(|o| o.0), Some(Severity::High));
    let requested = with("request subnet-mask,\n\tdomain-name, domain-name-servers, host-name;\n");
    assert_eq!(outcome(&requested, false), None);
    // A statement ends at its `;` (dhclient.conf(5): free-form): the loopback server on the
    // second line of one counts, and so does a statement inside a one-line interface block.
    let two_lines = with("supersede domain-name-servers 192.0.2.53,\n\t127.0.0.1;\n");
    let (_, evidence) = outcome(&two_lines, false).expect("a finding");
    assert_eq!(
        evidence[0],
        "/etc/dhcp/dhclient.conf:1: supersede domain-name-servers 192.0.2.53, 127.0.0.1;"
    );
    let block = with("interface \"ens5\" { supersede domain-name-servers 127.0.0.53; }\n");
    let (_, evidence) = outcome(&block, false).expect("a finding");
    assert_eq!(
        evidence[..2],
        [
            "/etc/dhcp/dhclient.conf:1: supersede domain-name-servers 127.0.0.53;",
            "for interface ens5 (its block in /etc/dhcp/dhclient.conf runs after the file's top-level statements)"
        ]
    );
    // An interface's block runs after the top level, wherever it stands in the file
    // (clparse.c make_client_config, execute.c execute_statements_in_scope): the
    // supersede below it does not take its prepend away.
    let order = with(
        "interface \"ens5\" {\n  prepend domain-name-servers 127.0.0.1;\n}\nsupersede domain-name-servers 192.0.2.53;\n",
    );
    assert_eq!(outcome(&order, false).map(|o| o.0), Some(Severity::High));
    // A recorded lease is no statement run on a new one.
    let lease = with("lease {\n  option domain-name-servers 127.0.0.1;\n}\n");
    assert_eq!(outcome(&lease, false), None);
    // /etc/resolv.conf locked with chattr +i, the usual guard against dhclient-script:
    // its rename over the file fails, the line is latent.
    let mut locked = raw.clone();
    locked.file(
        "/etc/resolv.conf",
        FileState::Present,
        Some(b"nameserver 127.0.0.1\nnameserver 192.0.2.53\n"),
    );
    crate::testing::set_command(
        &mut locked,
        crate::facts::network_manager::RESOLV_CONF_ATTR,
        "----i---------e------- /etc/resolv.conf\n",
        0,
    );
    let (severity, evidence) = outcome(&locked, false).expect("a finding");
    assert_eq!(severity, Severity::Info);
    assert!(
        evidence
            .iter()
            .any(|e| e.contains("lsattr: ----i---------e-------")),
        "{evidence:?}"
    );
}

/// An option dnsfix does not know on a dhclient's command line (a distribution's patch
/// may add one) leaves which interfaces it serves unknown, never the `-cf` file it reads:
/// the gather read that file, passing over such an option as dnsfix's parser does.
#[test]
fn an_unknown_dhclient_option_keeps_its_cf_file_judged() {
    use crate::facts::raw::FileState;
    let mut raw = crate::testing::rules_fixture(
        "DNS-RESOLV-MANAGED-ELSEWHERE/dhclient-redhat-ifup-hostname-option",
    );
    raw.file(
        "/proc/912/cmdline",
        FileState::Present,
        Some(b"/sbin/dhclient\0--bogus\0-cf\0/etc/dhcp/dhclient-ens5.conf\0ens5\0"),
    );
    let found = managed_findings(&raw, false);
    assert!(
        found.iter().any(|f| f.severity == Severity::High
            && f.evidence[0].starts_with("/etc/dhcp/dhclient-ens5.conf:5:")),
        "{found:?}"
    );
}

/// NetworkManager's header on a dhclient file it made, `_("# Created by NetworkManager\n")`
/// and `_("# Merged from %s\n\n")` (nm-dhcp-dhclient-utils.c @b92182f1), is translated
/// (po/de.po), and the file is at its own `NMSTATEDIR "/dhclient%s-%s.conf"`: a copy of the
/// header in a file elsewhere is no file NetworkManager made.
#[test]
fn networkmanagers_header_counts_at_its_own_path_in_any_language() {
    use super::node_resolver::nm_merged_from;
    let made = "/var/lib/NetworkManager/dhclient-ens5.conf";
    let english = "# Created by NetworkManager\n# Merged from /etc/dhcp/dhclient.conf\n\nprepend domain-name-servers 127.0.0.1;\n";
    assert_eq!(
        nm_merged_from(made, english),
        Some("/etc/dhcp/dhclient.conf")
    );
    assert_eq!(
        nm_merged_from("/var/lib/NetworkManager/dhclient6-ens5.conf", english),
        Some("/etc/dhcp/dhclient.conf")
    );
    let german = "# Erstellt von NetworkManager\n# Zusammengef\u{fc}hrt aus /etc/dhcp/dhclient-ens5.conf\n\n";
    assert_eq!(
        nm_merged_from(made, german),
        Some("/etc/dhcp/dhclient-ens5.conf")
    );
    // The header copied into a file dhclient reads with -cf from elsewhere.
    assert_eq!(
        nm_merged_from("/etc/dhcp/dhclient-ens5.conf", english),
        None
    );
    assert_eq!(
        nm_merged_from("/var/lib/NetworkManager/other.conf", english),
        None
    );
    assert_eq!(nm_merged_from(made, "# a comment\n# from /etc/x\n"), None);
}
/// Where NetworkManager runs dhclient it passes `-cf /var/lib/NetworkManager/dhclient-IF.conf`
/// (nm-dhcp-dhclient.c @b92182f1: NMSTATEDIR "/dhclient%s-%s.conf"), a file it makes again
/// at every DHCP start from the distribution's dhclient.conf, headed `# Created by
/// NetworkManager` / `# Merged from PATH` (nm-dhcp-dhclient-utils.c
/// `nm_dhcp_dhclient_create_config` @b92182f1, which copies the lines without their leading
/// spaces). The finding is on the made file's lines, and names PATH as the file to edit;
/// PATH itself is never called latent.
#[test]
fn a_networkmanager_made_dhclient_file_names_the_file_it_was_merged_from() {
    use crate::facts::raw::FileState;
    let mut raw = crate::testing::rules_fixture(
        "DNS-RESOLV-MANAGED-ELSEWHERE/dhclient-cf-names-another-file",
    );
    let source = b"prepend domain-name-servers 127.0.0.1;\n";
    raw.file("/etc/dhcp/dhclient.conf", FileState::Present, Some(source));
    raw.file(
        "/var/lib/NetworkManager/dhclient-ens5.conf",
        FileState::Present,
        Some(b"# Created by NetworkManager\n# Merged from /etc/dhcp/dhclient.conf\n\nprepend domain-name-servers 127.0.0.1;\n\n"),
    );
    // start_dhclient's argv (nm-dhcp-dhclient.c @b92182f1): -d -q -sf -pf -lf -cf IFACE.
    raw.file(
        "/proc/912/cmdline",
        FileState::Present,
        Some(b"/sbin/dhclient\0-d\0-q\0-sf\0/usr/libexec/nm-dhcp-helper\0-pf\0/run/NetworkManager/dhclient-ens5.pid\0-lf\0/var/lib/NetworkManager/dhclient-ens5.lease\0-cf\0/var/lib/NetworkManager/dhclient-ens5.conf\0ens5\0"),
    );
    let found = managed_findings(&raw, false);
    // /etc/resolv.conf links to systemd-resolved's stub and no dns= is set: NetworkManager
    // hands the lease's servers to systemd-resolved (at most a warning).
    let high = finding_at(
        &found,
        "/var/lib/NetworkManager/",
        "a finding on the made file",
    );
    assert_eq!(high.severity, Severity::Warning);
    assert_eq!(
        high.evidence[0],
        "/var/lib/NetworkManager/dhclient-ens5.conf:4: prepend domain-name-servers 127.0.0.1;"
    );
    assert!(
        high.evidence
            .iter()
            .any(|e| e.contains("made again from /etc/dhcp/dhclient.conf at every DHCP start")),
        "{:?}",
        high.evidence
    );
    assert!(
        high.remediation.starts_with(
            "edit /etc/dhcp/dhclient.conf, not /var/lib/NetworkManager/dhclient-ens5.conf"
        ),
        "{}",
        high.remediation
    );
    // NetworkManager makes the file again only at the next DHCP start.
    assert!(
        high.remediation.ends_with(
            "then `nmcli connection up <connection>` for the interface's connection (or reboot), so NetworkManager writes /var/lib/NetworkManager/dhclient-ens5.conf again from /etc/dhcp/dhclient.conf"
        ),
        "{}",
        high.remediation
    );
    assert!(
        !found
            .iter()
            .any(|f| f.evidence[0].starts_with("/etc/dhcp/dhclient.conf:")),
        "{found:?}"
    );
    // A line added to the source since NetworkManager made its file (its `request` line
    // NetworkManager merges into its own, so that one is no sign): it counts from the
    // next DHCP start, a warning on the source, not silence.
    let source = b"request subnet-mask, domain-name-servers;\nprepend domain-name-servers 127.0.0.1;\nsupersede domain-name-servers 169.254.25.10;\n";
    raw.file("/etc/dhcp/dhclient.conf", FileState::Present, Some(source));
    let found = managed_findings(&raw, false);
    let pending = finding_at(
        &found,
        "/etc/dhcp/dhclient.conf:",
        "a finding on the source",
    );
    assert_eq!(pending.severity, Severity::Warning);
    assert!(
        pending.summary.contains("from NetworkManager's next DHCP start, which makes /var/lib/NetworkManager/dhclient-ens5.conf from it again"),
        "{}",
        pending.summary
    );
    // Only the request line added: the made file is still current.
    let source =
        b"request subnet-mask, domain-name-servers;\nprepend domain-name-servers 127.0.0.1;\n";
    raw.file("/etc/dhcp/dhclient.conf", FileState::Present, Some(source));
    let found = managed_findings(&raw, false);
    assert!(
        !found
            .iter()
            .any(|f| f.evidence[0].starts_with("/etc/dhcp/dhclient.conf:")),
        "{found:?}"
    );
}

/// The lines `nm_dhcp_dhclient_create_config` (nm-dhcp-dhclient-utils.c @b92182f1) copies
/// for ens5: a `request` list to its `;` and `also request` lines are merged into its own,
/// another interface's block is left out, ens5's block is copied without its own lines.
#[test]
fn networkmanager_copies_the_lines_of_its_interface() {
    let source = "request subnet-mask,\n  domain-name-servers;\nprepend domain-name-servers 127.0.0.1;\ninterface \"eth1\" {\n  supersede domain-name-servers 192.0.2.53;\n}\ninterface \"ens5\" {\n  append domain-name-servers 192.0.2.54;  \n}\nalso request ntp-servers;\n";
    assert_eq!(
        super::node_resolver::nm_merged_lines(source, "ens5"),
        "prepend domain-name-servers 127.0.0.1;\nappend domain-name-servers 192.0.2.54;\n"
    );
    assert_eq!(
        super::node_resolver::nm_merged_lines(source, "eth1"),
        "prepend domain-name-servers 127.0.0.1;\nsupersede domain-name-servers 192.0.2.53;\n"
    );
    // Lines that start `timeout `, `retry ` or `script ` are dropped whole; `send fqdn.`
    // lines come last (nm-dhcp-dhclient-utils.c @b92182f1 lines 395-431, 509).
    let source = "send fqdn.encoded on;\ntimeout 60; prepend domain-name-servers 127.0.0.1;\n  retry 30;\nscript \"/sbin/x\";\nappend domain-name-servers 192.0.2.54;\n";
    assert_eq!(
        super::node_resolver::nm_merged_lines(source, "ens5"),
        "append domain-name-servers 192.0.2.54;\nsend fqdn.encoded on;\n"
    );
}

/// The source NetworkManager merges its dhclient file from is compared as
/// `nm_dhcp_dhclient_create_config` copies it (nm-dhcp-dhclient-utils.c @b92182f1): the
/// block of another interface is never copied into dhclient-ens5.conf, the lines of the
/// block for ens5 are, without the block; the servers lines count in their order (dhclient
/// runs them in order: a `supersede` before a `prepend` keeps the prepended server).
#[test]
fn networkmanagers_merge_is_compared_as_it_copies_the_source() {
    use crate::facts::raw::FileState;
    let mut raw = crate::testing::rules_fixture(
        "DNS-RESOLV-MANAGED-ELSEWHERE/dhclient-cf-names-another-file",
    );
    let made = "/var/lib/NetworkManager/dhclient-ens5.conf";
    raw.file(
        made,
        FileState::Present,
        Some(b"# Created by NetworkManager\n# Merged from /etc/dhcp/dhclient.conf\n\nprepend domain-name-servers 127.0.0.1;\n\n"),
    );
    // start_dhclient's argv (nm-dhcp-dhclient.c @b92182f1): -d -q -sf -pf -lf -cf IFACE.
    raw.file(
        "/proc/912/cmdline",
        FileState::Present,
        Some(b"/sbin/dhclient\0-d\0-q\0-sf\0/usr/libexec/nm-dhcp-helper\0-pf\0/run/NetworkManager/dhclient-ens5.pid\0-lf\0/var/lib/NetworkManager/dhclient-ens5.lease\0-cf\0/var/lib/NetworkManager/dhclient-ens5.conf\0ens5\0"),
    );
    let on_source = |raw: &crate::facts::raw::RawFacts, source: &[u8]| {
        let mut raw = raw.clone();
        raw.file("/etc/dhcp/dhclient.conf", FileState::Present, Some(source));
        managed_findings(&raw, false)
            .into_iter()
            .find(|f| f.evidence[0].starts_with("/etc/dhcp/dhclient.conf:"))
    };
    for source in [
        &b"prepend domain-name-servers 127.0.0.1;\ninterface \"eth1\" {\n  supersede domain-name-servers 192.0.2.53;\n}\n"[..],
        b"interface \"ens5\" {\n  prepend domain-name-servers 127.0.0.1;\n}\nlease {\n  option domain-name-servers 192.0.2.53;\n}\n",
    ] {
        let found = on_source(&raw, source);
        assert!(found.is_none(), "{}: {found:?}", String::from_utf8_lossy(source));
    }
    // The same lines in another order: what NetworkManager makes next differs.
    raw.file(
        made,
        FileState::Present,
        Some(b"# Created by NetworkManager\n# Merged from /etc/dhcp/dhclient.conf\n\nprepend domain-name-servers 127.0.0.1;\nsupersede domain-name-servers 192.0.2.53;\n\n"),
    );
    let found = on_source(
        &raw,
        b"supersede domain-name-servers 192.0.2.53;\nprepend domain-name-servers 127.0.0.1;\n",
    )
    .expect("a finding on the source");
    assert_eq!(found.severity, Severity::Warning, "{found:?}");
    assert!(
        found
            .summary
            .contains("from NetworkManager's next DHCP start"),
        "{}",
        found.summary
    );
}

/// Where the file NetworkManager made is not current, the source is judged as
/// `nm_dhcp_dhclient_create_config` (nm-dhcp-dhclient-utils.c @b92182f1) would copy it for
/// the made file's interface: another interface's block is never copied (A); the lines of
/// the interface's own block come after the top level's, flat, so a later `supersede` wins
/// (C; common/options.c `set_option` @572032cb); a line that starts `timeout ` is dropped
/// whole, with the statement after it on that line (B).
#[test]
fn a_pending_source_is_judged_as_networkmanager_copies_it() {
    use crate::facts::raw::FileState;
    let mut raw = crate::testing::rules_fixture(
        "DNS-RESOLV-MANAGED-ELSEWHERE/dhclient-cf-names-another-file",
    );
    raw.file(
        "/var/lib/NetworkManager/dhclient-ens5.conf",
        FileState::Present,
        Some(b"# Created by NetworkManager\n# Merged from /etc/dhcp/dhclient.conf\n\nsupersede domain-name-servers 192.0.2.2;\n\n"),
    );
    raw.file(
        "/proc/912/cmdline",
        FileState::Present,
        Some(b"/sbin/dhclient\0-d\0-q\0-sf\0/usr/libexec/nm-dhcp-helper\0-pf\0/run/NetworkManager/dhclient-ens5.pid\0-lf\0/var/lib/NetworkManager/dhclient-ens5.lease\0-cf\0/var/lib/NetworkManager/dhclient-ens5.conf\0ens5\0"),
    );
    let on_source = |source: &[u8]| {
        let mut raw = raw.clone();
        raw.file("/etc/dhcp/dhclient.conf", FileState::Present, Some(source));
        let RuleOutcome::Findings(found) = managed_elsewhere(&raw, false) else {
            return None;
        };
        found
            .into_iter()
            .find(|f| f.evidence[0].starts_with("/etc/dhcp/dhclient.conf:"))
    };
    for source in [
        &b"supersede domain-name-servers 192.0.2.1;\ninterface \"eth1\" {\n  prepend domain-name-servers 127.0.0.1;\n}\n"[..],
        b"timeout 60; prepend domain-name-servers 127.0.0.1;\n",
        b"supersede domain-name-servers 127.0.0.1;\ninterface \"ens5\" {\n  supersede domain-name-servers 192.0.2.9;\n}\n",
    ] {
        let found = on_source(source);
        assert!(found.is_none(), "{}: {found:?}", String::from_utf8_lossy(source));
    }
    // What counts is shown by the source's own line numbers.
    let found = on_source(b"supersede domain-name-servers 127.0.0.1;\ninterface \"ens5\" {\n  append domain-name-servers 192.0.2.9;\n}\n")
        .expect("a finding on the source");
    assert_eq!(found.severity, Severity::Warning, "{found:?}");
    assert!(
        found.summary.contains("would write 127.0.0.1 "),
        "{}",
        found.summary
    );
    assert_eq!(
        found.evidence[..3],
        [
            "/etc/dhcp/dhclient.conf:1: supersede domain-name-servers 127.0.0.1;",
            "/etc/dhcp/dhclient.conf:3: append domain-name-servers 192.0.2.9;",
            "NetworkManager copies these lines of /etc/dhcp/dhclient.conf into /var/lib/NetworkManager/dhclient-ens5.conf for interface ens5, where dhclient runs them in this order (an interface block's without the block)",
        ],
        "{:?}",
        found.evidence
    );
}

/// A dhclient NetworkManager runs (`-sf nm-dhcp-helper`, nm-dhcp-dhclient.c `dhclient_start`
/// @1.40.0 5d4802f7 line 461) runs no dhclient-script: NetworkManager takes the lease and
/// writes its servers as its `[main] dns` and `rc-manager` say (nm-dns-manager.c
/// `update_dns` @1.40.0). With dns=none or rc-manager=unmanaged they reach no resolv.conf
/// (info); with dns=systemd-resolved they go to systemd-resolved per link (at most a
/// warning); with dns=default NetworkManager writes them (high, said of NetworkManager).
#[test]
fn a_dhclient_networkmanager_runs_is_judged_by_what_networkmanager_writes() {
    use crate::facts::raw::FileState;
    let judged = |main: &[u8]| {
        let mut raw = crate::testing::rules_fixture(
            "DNS-RESOLV-MANAGED-ELSEWHERE/dhclient-cf-names-another-file",
        );
        raw.file(
            "/etc/NetworkManager/NetworkManager.conf",
            FileState::Present,
            Some(main),
        );
        raw.file(
            "/proc/912/cmdline",
            FileState::Present,
            Some(b"/usr/sbin/dhclient\0-d\0-q\0-sf\0/usr/libexec/nm-dhcp-helper\0-pf\0/run/NetworkManager/dhclient-ens5.pid\0-lf\0/var/lib/NetworkManager/dhclient-ens5.lease\0-cf\0/etc/dhcp/dhclient-ens5.conf\0ens5\0"),
        );
        let found = managed_findings(&raw, false);
        found
            .into_iter()
            .find(|f| f.evidence[0].starts_with("/etc/dhcp/dhclient-ens5.conf:"))
            .expect("a finding on the -cf file")
    };
    let none = judged(b"[main]\ndns=none\n");
    assert_eq!(none.severity, Severity::Info);
    assert!(
        none.summary
            .contains("NetworkManager does not write resolv.conf here"),
        "{}",
        none.summary
    );
    let unmanaged = judged(b"[main]\ndns=default\nrc-manager=unmanaged\n");
    assert_eq!(unmanaged.severity, Severity::Info);
    let resolved = judged(b"[main]\ndns=systemd-resolved\n");
    assert_eq!(resolved.severity, Severity::Warning);
    assert!(
        resolved.summary.contains("to systemd-resolved"),
        "{}",
        resolved.summary
    );
    let default = judged(b"[main]\ndns=default\n");
    assert_eq!(default.severity, Severity::High);
    assert!(
        default
            .summary
            .starts_with("NetworkManager writes dhclient's 127.0.0.1"),
        "{}",
        default.summary
    );
    assert!(
        default
            .evidence
            .iter()
            .any(|e| e.contains("NetworkManager, not dhclient-script, takes each lease")),
        "{:?}",
        default.evidence
    );
}

/// A `-cf` file dnsfix could not judge whole is unknown, not judged on a part: one over the
/// gather's cap (read in part), and a relative path (dhclient reads it from the directory it
/// was started in: client/dhclient.c @572032cb `main` reads it before `detach`'s
/// chdir("/")). `-cf /dev/null` gives dhclient no statement: no finding.
#[test]
fn a_dhclient_cf_file_not_read_whole_is_unknown_and_dev_null_is_healthy() {
    use crate::facts::raw::FileState;
    let base = crate::testing::rules_fixture(
        "DNS-RESOLV-MANAGED-ELSEWHERE/dhclient-cf-names-another-file",
    );
    let cf_finding = |raw: &crate::facts::raw::RawFacts| {
        let RuleOutcome::Findings(found) = managed_elsewhere(raw, false) else {
            return None;
        };
        found.into_iter().find(|f| {
            f.summary.starts_with("dhclient reads") || f.evidence[0].contains("dhclient-ens5")
        })
    };
    let mut cut = base.clone();
    cut.files
        .get_mut("/etc/dhcp/dhclient-ens5.conf")
        .expect("read")
        .truncated = true;
    let finding = cut_finding_check(cf_finding(&cut));
    assert!(
        finding.summary.contains("larger than dnsfix reads"),
        "{}",
        finding.summary
    );
    let with_cf = |cf: &[u8]| {
        let mut raw = base.clone();
        let mut line = b"/sbin/dhclient\0-cf\0".to_vec();
        line.extend_from_slice(cf);
        line.extend_from_slice(b"\0ens5\0");
        raw.file("/proc/912/cmdline", FileState::Present, Some(&line));
        raw
    };
    let finding = cut_finding_check(cf_finding(&with_cf(b"dhclient-ens5.conf")));
    assert!(
        finding
            .summary
            .contains("relative to the directory dhclient was started in"),
        "{}",
        finding.summary
    );
    assert!(cf_finding(&with_cf(b"/dev/null")).is_none());
}

fn cut_finding_check(
    finding: Option<crate::diagnose::finding::Finding>,
) -> crate::diagnose::finding::Finding {
    let finding = finding.expect("a finding on the -cf file");
    assert_eq!(finding.status, crate::diagnose::FindingStatus::Unknown);
    finding
}

/// A dhclient started with `-cf` reads that file alone (client/dhclient.c `main`
/// @572032cb): a loopback line in the default dhclient.conf is then latent (info), and says
/// which file the running dhclient reads instead.
#[test]
fn a_default_dhclient_conf_no_running_dhclient_reads_is_latent() {
    use crate::facts::raw::FileState;
    let mut raw = crate::testing::rules_fixture(
        "DNS-RESOLV-MANAGED-ELSEWHERE/dhclient-cf-names-another-file",
    );
    raw.file(
        "/etc/dhcp/dhclient.conf",
        FileState::Present,
        Some(b"supersede domain-name-servers 127.0.0.53;\n"),
    );
    let found = managed_findings(&raw, false);
    let latent = finding_at(
        &found,
        "/etc/dhcp/dhclient.conf:1:",
        "a finding on the default file",
    );
    assert_eq!(latent.severity, Severity::Info);
    assert!(
        latent
            .summary
            .ends_with("but no running dhclient reads this file: latent until one does"),
        "{}",
        latent.summary
    );
    assert!(
        latent.evidence.contains(
            &"dhclient runs, but not with /etc/dhcp/dhclient.conf: pid 912 reads /etc/dhcp/dhclient-ens5.conf (-cf on its command line)".to_owned()
        ),
        "{:?}",
        latent.evidence
    );
    assert!(found.iter().any(|f| f.severity == Severity::High
        && f.evidence[0].starts_with("/etc/dhcp/dhclient-ens5.conf:5:")));
}

/// NetworkManager 1.22 with dns=systemd-resolved and no rc-manager writes 127.0.0.53 over
/// a plain /etc/resolv.conf (its default was symlink before 1.28): where no plugin
/// directory names the version, that is unknown, not a pass (taken as 1.28's auto, which
/// leaves the file alone).
#[test]
fn networkmanager_s_unknown_version_makes_its_rc_manager_default_unknown() {
    let mut raw = crate::testing::rules_fixture(
        "DNS-RESOLV-MANAGED-ELSEWHERE/ubuntu2004-networkmanager-1.22-plain-file",
    );
    raw.files
        .retain(|path, _| !path.starts_with("/usr/lib/x86_64-linux-gnu/NetworkManager/"));
    let found = managed_findings(&raw, false);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].status, crate::diagnose::FindingStatus::Unknown);
    assert!(
        found[0].summary.contains("its version was not found"),
        "{}",
        found[0].summary
    );
    // With rc-manager set, the version does not matter.
    let mut set = raw.clone();
    set.file(
        "/etc/NetworkManager/conf.d/rc.conf",
        crate::facts::raw::FileState::Present,
        Some(b"[main]\nrc-manager=unmanaged\n"),
    );
    assert!(matches!(managed_elsewhere(&set, false), RuleOutcome::Pass));
}

/// The file a dhclient's `-cf` names comes from its command line: a control character in
/// its name is shown escaped in the finding, never raw.
#[test]
fn a_dhclient_cf_name_is_shown_escaped() {
    use crate::facts::raw::FileState;
    let mut raw = crate::testing::rules_fixture(
        "DNS-RESOLV-MANAGED-ELSEWHERE/dhclient-cf-names-another-file",
    );
    let odd = "/etc/dhcp/x\x1b[2J.conf";
    raw.file(
        "/proc/912/cmdline",
        FileState::Present,
        Some(format!("/sbin/dhclient\0-cf\0{odd}\0ens5\0").as_bytes()),
    );
    raw.file(
        odd,
        FileState::Present,
        Some(b"prepend domain-name-servers 127.0.0.1;\n"),
    );
    let found = managed_findings(&raw, false);
    let text = format!("{found:?}");
    assert!(
        found
            .iter()
            .any(|f| f.evidence[0].contains("x\\u{1b}") || f.evidence[0].contains("x\\x1b")),
        "{text}"
    );
    assert!(
        found
            .iter()
            .all(|f| f.evidence.iter().all(|e| !e.contains('\x1b'))),
        "{text}"
    );
}

/// `default domain-name-servers` gives its servers only where nothing is there yet
/// (isc-dhcp common/options.c `set_option` @572032cb, `default_option_statement`: saved
/// only where `lookup_option` finds none): in the lease's place where the lease brings no
/// servers, so a loopback one there is latent (info); after a `prepend` or `append` (a value
/// is there then) it counts for nothing, and after a `supersede` neither.
#[test]
fn a_dhclient_default_line_counts_only_where_the_lease_brings_no_servers() {
    use crate::facts::raw::FileState;
    let raw = crate::testing::rules_fixture(
        "DNS-RESOLV-MANAGED-ELSEWHERE/dhclient-example-prepend-loopback",
    );
    let with = |conf: &str| {
        let mut raw = raw.clone();
        raw.file(
            "/etc/dhcp/dhclient.conf",
            FileState::Present,
            Some(conf.as_bytes()),
        );
        match managed_elsewhere(&raw, false) {
            RuleOutcome::Findings(f) => Some((f[0].severity, f[0].summary.clone())),
            RuleOutcome::Pass => None,
            other => panic!("{other:?}"),
        }
    };
    let (severity, summary) = with("default domain-name-servers 127.0.0.1;\n").expect("a finding");
    assert_eq!(severity, Severity::Info);
    assert!(
        summary.contains("only after a lease that brings no domain-name-servers"),
        "{summary}"
    );
    assert_eq!(
        with("prepend domain-name-servers 192.0.2.53;\ndefault domain-name-servers 127.0.0.1;\n"),
        None
    );
    assert_eq!(
        with("supersede domain-name-servers 192.0.2.53;\ndefault domain-name-servers 127.0.0.1;\n"),
        None
    );
    // A prepend after it adds to whatever is there: the loopback one counts in full.
    let (severity, _) =
        with("default domain-name-servers 192.0.2.53;\nprepend domain-name-servers 127.0.0.1;\n")
            .expect("a finding");
    assert_eq!(severity, Severity::High);
}

/// Whose block the line is, and who removes it: Kubespray rewrites it with its default
/// resolvconf_mode (host_resolvconf), removes it at its next run with another, and leaves
/// it alone with dns_mode none; upstream_dns_servers is advised only where it is not set.
#[test]
fn the_dhclient_fix_follows_what_kubespray_does_with_its_block() {
    let raw =
        crate::testing::rules_fixture("DNS-RESOLV-MANAGED-ELSEWHERE/kubespray-9948-before-reboot");
    let facts = NodeFacts::from_raw("node1", &raw);
    let fix = |vars: serde_json::Value| {
        let mut host = Host::new("node1");
        if let serde_json::Value::Object(map) = vars {
            host.vars = map;
        }
        match super::node_resolver::resolv_managed_elsewhere(&Ctx::new(&host, &facts)) {
            RuleOutcome::Findings(f) => f[0].remediation.clone(),
            other => panic!("{other:?}"),
        }
    };
    let default = fix(serde_json::json!({}));
    assert!(default.contains("set upstream_dns_servers"), "{default}");
    let set = fix(serde_json::json!({"upstream_dns_servers": ["192.0.2.53"]}));
    assert!(
        set.starts_with("Kubespray writes this line at every run"),
        "{set}"
    );
    assert!(!set.contains("set upstream_dns_servers"), "{set}");
    let other_mode = fix(serde_json::json!({"resolvconf_mode": "none"}));
    assert!(
        other_mode.contains("resolvconf_mode: none its next run removes it"),
        "{other_mode}"
    );
    let no_dns = fix(serde_json::json!({"dns_mode": "none", "resolvconf_mode": "none"}));
    assert!(
        no_dns.contains("neither rewrites nor removes it"),
        "{no_dns}"
    );
}

/// On EKS an empty clusterDomain from the NodeConfig's spec.kubelet.config (nodeadm's
/// 40-nodeadm.conf drop-in) is fixed in the NodeConfig: config.json, where clusterDNS is
/// set, loses to the drop-in and is written anew at every boot.
#[test]
fn an_eks_cluster_domain_is_fixed_in_the_nodeconfig() {
    let mut raw = crate::testing::rules_fixture("_upstream/eks-al2023-1.31-nodeconfig-resolvconf");
    crate::testing::replace_in_file(
        &mut raw,
        "/etc/kubernetes/kubelet/config.json.d/40-nodeadm.conf",
        "\"resolvConf\": \"/run/systemd/resolve/resolv.conf\"",
        "\"clusterDomain\": \"\"",
    );
    let facts = NodeFacts::from_raw("node1", &raw);
    let host = Host::new("node1");
    match kubelet_flags::no_cluster_dns(&Ctx::in_cluster(&host, &facts, None)) {
        RuleOutcome::Findings(f) => {
            let fix = &f[0].remediation;
            assert!(
                fix.starts_with("set spec.kubelet.config.clusterDomain: cluster.local"),
                "{fix}"
            );
            assert!(fix.contains("40-nodeadm.conf:4"), "{fix}");
            assert!(!fix.contains("config.json:"), "{fix}");
        }
        other => panic!("{other:?}"),
    }
    // From a flag of spec.kubelet.flags, which beats the config: that flag.
    let mut flagged = raw.clone();
    crate::testing::with_eks_flag(&mut flagged, "--cluster-domain=");
    flagged.pids.remove("kubelet");
    let facts = NodeFacts::from_raw("node1", &flagged);
    match kubelet_flags::no_cluster_dns(&Ctx::in_cluster(&host, &facts, None)) {
        RuleOutcome::Findings(f) => {
            let fix = &f[0].remediation;
            assert!(
                fix.starts_with("change --cluster-domain to cluster.local"),
                "{fix}"
            );
            assert!(
                fix.contains("cannot take out a flag of the user data's"),
                "{fix}"
            );
        }
        other => panic!("{other:?}"),
    }
}

/// A second --cluster-dns with the cache's address after the service's (what a NodeConfig
/// file in /etc/eks/nodeadm.d/ gives: nodeadm appends its flags after the user data's):
/// pods still ask the service first, and reach the cache only after a timeout.
#[test]
fn the_cache_counts_only_as_the_first_cluster_dns_server() {
    let base =
        crate::testing::rules_fixture("DNS-NODELOCAL-CLUSTERDNS/eks-al2023-cluster-dns-flag");
    let env = "/etc/eks/kubelet/environment";
    let mut raw = base.clone();
    crate::testing::with_eks_flag(&mut raw, "--cluster-dns=169.254.20.10");
    let facts = NodeFacts::from_raw("node1", &raw);
    let dns = facts.kubelet.cluster_dns.known().expect("known");
    assert_eq!(dns.value, ["172.20.0.10", "169.254.20.10"]);
    let host = Host::new("node1");
    match super::kubelet_flags::nodelocal_clusterdns(&Ctx::new(&host, &facts)) {
        RuleOutcome::Findings(f) => {
            assert!(f[0].summary.contains("172.20.0.10 first"), "{f:?}");
            assert!(
                f[0].summary
                    .contains("the local cache only where it does not answer"),
                "{f:?}"
            );
            assert!(
                f[0].remediation
                    .contains("cannot take out a flag of the user data's"),
                "{f:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    // A first link-local server the cache does not hold, the one it holds after it.
    let mut raw = base.clone();
    crate::testing::replace_in_file(
        &mut raw,
        env,
        "--cluster-dns=172.20.0.10",
        "--cluster-dns=169.254.20.11 --cluster-dns=169.254.20.10",
    );
    raw.pids.remove("kubelet");
    let facts = NodeFacts::from_raw("node1", &raw);
    match super::kubelet_flags::nodelocal_clusterdns(&Ctx::new(&host, &facts)) {
        RuleOutcome::Findings(f) => assert!(
            f[0].summary
                .contains("169.254.20.11 is not on the nodelocaldns interface"),
            "{f:?}"
        ),
        other => panic!("{other:?}"),
    }
}

/// On k3s the clusterDNS advice is the kubelet-arg that beats what k3s writes into its own
/// kubelet config at every start, and the restart is of the k3s service; a kubelet-arg that
/// sets it is changed where it is.
#[test]
fn k3s_cluster_dns_is_advised_as_a_kubelet_arg() {
    let raw = crate::testing::rules_fixture("DNS-NODELOCAL-CLUSTERDNS/k3s-ipvs-service-ip");
    let host = Host::new("node1");
    let remediation = |raw: &crate::facts::raw::RawFacts| {
        let facts = NodeFacts::from_raw("node1", raw);
        match super::kubelet_flags::nodelocal_clusterdns(&Ctx::new(&host, &facts)) {
            RuleOutcome::Findings(f) => f[0].remediation.clone(),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(
        remediation(&raw),
        "give the kubelet --cluster-dns=169.254.20.10: `kubelet-arg+: [cluster-dns=169.254.20.10]` in a drop-in in /etc/rancher/k3s/config.yaml.d/ named after the others (a kubelet flag beats the clusterDNS k3s writes into the kubelet's config at every start; kubelet-arg+ keeps the other kubelet-args, which a later file's plain kubelet-arg: replaces); restart k3s (systemctl restart k3s: the kubelet runs inside it) and recreate pods"
    );
    let mut set = raw.clone();
    set.file(
        "/etc/rancher/k3s/config.yaml",
        crate::facts::raw::FileState::Present,
        Some(b"kubelet-arg:\n  - cluster-dns=10.43.0.10\n"),
    );
    assert_eq!(
        remediation(&set),
        "change the kubelet-arg cluster-dns= at /etc/rancher/k3s/config.yaml:2 to 169.254.20.10; restart k3s (systemctl restart k3s: the kubelet runs inside it) and recreate pods"
    );
    // Several entries add up: each is named, and one set in the unit needs a reload.
    let mut several = raw.clone();
    several.file(
        "/etc/rancher/k3s/config.yaml",
        crate::facts::raw::FileState::Present,
        Some(b"kubelet-arg:\n  - cluster-dns=10.43.0.10\n"),
    );
    let unit = "/etc/systemd/system/k3s.service";
    let text = crate::testing::text(&raw, unit);
    let flagged = text.replace(
        "    server \\\n",
        "    server \\\n    --kubelet-arg=cluster-dns=10.43.0.11 \\\n",
    );
    several.file(
        unit,
        crate::facts::raw::FileState::Present,
        Some(flagged.as_bytes()),
    );
    let advice = remediation(&several);
    assert!(
        advice.starts_with("leave one kubelet-arg cluster-dns= entry, cluster-dns=169.254.20.10: k3s passes every one on and the kubelet adds them up (at /etc/systemd/system/k3s.service:")
            && advice.contains(", /etc/rancher/k3s/config.yaml:2); systemctl daemon-reload, then restart k3s"),
        "{advice}"
    );
    // Over k3s's own choice the flag shadows nothing; over an operator's kubelet drop-in
    // that says otherwise it does.
    let shadow = |raw: &crate::facts::raw::RawFacts| {
        let facts = NodeFacts::from_raw("node1", raw);
        super::kubelet_flags::flag_shadow(&Ctx::new(&host, &facts))
    };
    assert_eq!(shadow(&set), RuleOutcome::Pass);
    set.file(
        "/var/lib/rancher/k3s/agent/etc/kubelet.conf.d/50-site.conf",
        crate::facts::raw::FileState::Present,
        Some(b"clusterDNS:\n- 10.96.0.10\n"),
    );
    let RuleOutcome::Findings(f) = shadow(&set) else {
        panic!("the operator's drop-in is shadowed");
    };
    assert!(
        f[0].evidence[0].contains("--cluster-dns=10.43.0.10 overrides /var/lib/rancher/k3s/agent/etc/kubelet.conf.d/50-site.conf:1 clusterDNS: 10.96.0.10"),
        "{f:?}"
    );
}

/// Weave's init container loads br_netfilter at every start only with its network policy
/// controller (init.sh: `if EXPECT_NPC != 0`): without weave-npc running, a br_netfilter
/// nothing loads at boot is gone after a reboot.
#[test]
fn weave_loads_br_netfilter_only_with_its_policy_controller() {
    let raw = crate::testing::rules_fixture("_upstream/cni-weave-brnf-on-not-persisted");
    let host = Host::new("node1");
    let outcome = |raw: &crate::facts::raw::RawFacts| {
        let facts = NodeFacts::from_raw("node1", raw);
        bridge_nf_not_persistent(&Ctx::new(&host, &facts))
    };
    assert_eq!(outcome(&raw), RuleOutcome::Pass);
    let mut no_npc = raw.clone();
    assert!(no_npc.pids.remove("weave-npc").is_some());
    let RuleOutcome::Findings(f) = outcome(&no_npc) else {
        panic!("nothing loads br_netfilter at boot");
    };
    assert_eq!(f[0].severity, Severity::High);
}

/// The Kubespray node `_upstream/kubespray-head-ubuntu2204-default` with `clusterDNS:` and
/// nothing under it, as kubelet-config.v1beta1.yaml.j2 renders it for dns_mode none
/// without NodeLocal DNSCache (@46dbdd39: `kubelet_cluster_dns = []`), and `vars`.
fn kubespray_without_cluster_dns(vars: &[(&str, serde_json::Value)]) -> RuleOutcome {
    kubespray_cluster_dns("clusterDNS:\n", vars, |_| ())
}

/// That node with `list` in place of its `clusterDNS:` and the one item under it, `vars`,
/// and `edit` made to its facts.
fn kubespray_cluster_dns(
    list: &str,
    vars: &[(&str, serde_json::Value)],
    edit: impl Fn(&mut crate::facts::raw::RawFacts),
) -> RuleOutcome {
    let mut raw = crate::testing::rules_fixture("_upstream/kubespray-head-ubuntu2204-default");
    crate::testing::replace_in_file(
        &mut raw,
        "/etc/kubernetes/kubelet-config.yaml",
        "clusterDNS:\n- 169.254.25.10\n",
        list,
    );
    edit(&mut raw);
    let facts = NodeFacts::from_raw("node1", &raw);
    let mut host = Host::new("node1");
    for (k, v) in vars {
        host.vars.insert((*k).into(), v.clone());
    }
    kubelet_flags::no_cluster_dns(&Ctx::in_cluster(&host, &facts, None))
}

/// Kubespray's dns_mode none leaves clusterDNS empty by design ("a non functional
/// cluster"): info, not critical. Elsewhere on Kubespray the fix names the address its
/// template would render: nodelocaldns_ip, else the third service address.
#[test]
fn no_cluster_dns_on_kubespray() {
    let RuleOutcome::Findings(f) = kubespray_without_cluster_dns(&[
        ("dns_mode", "none".into()),
        ("enable_nodelocaldns", false.into()),
    ]) else {
        panic!("an empty clusterDNS is reported");
    };
    assert_eq!(f[0].severity, Severity::Info, "{f:?}");
    assert!(
        f[0].evidence.contains(&"dns_mode: none".to_owned()),
        "{f:?}"
    );
    // With NodeLocal DNSCache (Kubespray's default) the template renders nodelocaldns_ip
    // whatever dns_mode: an empty list is not what dns_mode none gives.
    for nodelocal in [None, Some(true)] {
        let mut vars = vec![("dns_mode", "none".into())];
        vars.extend(nodelocal.map(|on| ("enable_nodelocaldns", on.into())));
        let RuleOutcome::Findings(f) = kubespray_without_cluster_dns(&vars) else {
            panic!("an empty clusterDNS is reported");
        };
        assert_eq!(f[0].severity, Severity::Critical, "{nodelocal:?}: {f:?}");
        assert_eq!(wanted(&f, "clusterDNS"), ["169.254.25.10"]);
    }

    let RuleOutcome::Findings(f) = kubespray_without_cluster_dns(&[]) else {
        panic!("an empty clusterDNS is reported");
    };
    assert_eq!(f[0].severity, Severity::Critical, "{f:?}");
    assert!(
        f[0].summary
            .contains("(the servers of /run/systemd/resolve/resolv.conf)"),
        "{f:?}"
    );
    assert!(
        f[0].remediation
            .contains("set clusterDNS to [169.254.25.10]"),
        "{f:?}"
    );
    let RuleOutcome::Findings(f) = kubespray_without_cluster_dns(&[
        ("enable_nodelocaldns", false.into()),
        ("kube_service_addresses", "10.96.0.0/12".into()),
    ]) else {
        panic!("an empty clusterDNS is reported");
    };
    assert!(
        f[0].remediation.contains("set clusterDNS to [10.96.0.3]"),
        "{f:?}"
    );
    // No nodelocaldns interface on the node: nothing would answer Kubespray's
    // nodelocaldns_ip there, so the service address is wanted.
    let no_interface = |raw: &mut crate::facts::raw::RawFacts| {
        raw.commands.remove("nodelocaldns-addr");
        raw.file(
            crate::facts::node_facts::NODELOCALDNS_SYSFS,
            FileState::Missing,
            None,
        );
        assert!(NodeFacts::from_raw("node1", raw).nodelocaldns_absent());
    };
    let RuleOutcome::Findings(f) = kubespray_cluster_dns("clusterDNS:\n", &[], no_interface) else {
        panic!("an empty clusterDNS is reported");
    };
    assert_eq!(wanted(&f, "clusterDNS"), ["10.233.0.3"]);
    // A templated switch does not matter there.
    let templated = [("enable_nodelocaldns", "{{ nodelocal | bool }}".into())];
    let RuleOutcome::Findings(f) = kubespray_cluster_dns("clusterDNS:\n", &templated, no_interface)
    else {
        panic!("an empty clusterDNS is reported");
    };
    assert_eq!(wanted(&f, "clusterDNS"), ["10.233.0.3"]);

    // dns_mode manual with manual_dns_server left at "": the template renders `- `, a
    // null item the kubelet reads as "" and drops.
    let manual = [
        ("dns_mode", "manual".into()),
        ("enable_nodelocaldns", false.into()),
    ];
    let RuleOutcome::Findings(f) = kubespray_cluster_dns("clusterDNS:\n- \n", &manual, |_| ())
    else {
        panic!("an empty entry is no address");
    };
    assert_eq!(f[0].severity, Severity::Critical, "{f:?}");
    assert!(
        f[0].summary.starts_with("kubelet's clusterDNS [\"\"]"),
        "{f:?}"
    );
}

/// With dns_mode coredns_dual and no cache, Kubespray renders clusterDNS `[skydns_server,
/// skydns_server_secondary]` (kubelet-config.v1beta1.yaml.j2 @46dbdd39). The secondary is
/// the fourth service address where unset or written as Kubespray's own expression (the
/// sample's group_vars/k8s_cluster/k8s-cluster.yml:230 `... | ansible.utils.ipaddr(4) |
/// ...`), the inventory's where it is an address, and not known where it is another
/// template: never the fourth address in its stead.
#[test]
fn kubespray_s_secondary_dns_server_is_the_inventory_s() {
    let sample = "{{ kube_service_subnets.split(',') | first | ansible.utils.ipaddr('net') | ansible.utils.ipaddr(4) | ansible.utils.ipaddr('address') }}";
    let dual = |secondary: Option<&str>| {
        let mut vars = vec![
            ("dns_mode", "coredns_dual".into()),
            ("enable_nodelocaldns", false.into()),
        ];
        vars.extend(secondary.map(|s| ("skydns_server_secondary", s.into())));
        let RuleOutcome::Findings(f) = kubespray_without_cluster_dns(&vars) else {
            panic!("an empty clusterDNS is reported");
        };
        f[0].wanted.get("clusterDNS").cloned()
    };
    let both = |second: &str| Some(vec!["10.233.0.3".to_owned(), second.to_owned()]);
    assert_eq!(dual(None), both("10.233.0.4"));
    assert_eq!(dual(Some(sample)), both("10.233.0.4"));
    assert_eq!(dual(Some("10.233.0.53")), both("10.233.0.53"));
    assert_eq!(dual(Some("{{ my_secondary_dns }}")), None);
}

/// The kubelet reads clusterDNS entries with Go's ParseIPSloppy: IPv4 octets with leading
/// zeros count, names and zones do not.
#[test]
fn kubelet_takes_the_addresses_go_parses() {
    for ok in [
        "10.96.0.10",
        "010.096.000.010",
        "0010.96.0.10",
        "fd00:10:96::a",
        "::ffff:10.96.0.10",
        "::ffff:010.096.000.010",
    ] {
        assert!(kubelet_flags::kubelet_parses_ip(ok), "{ok}");
    }
    for bad in [
        "kube-dns",
        "10.96.0",
        "10.96.0.256",
        "fe80::1%eth0",
        "",
        " 10.96.0.10",
        "0x0a.0.0.1",
        "::ffff:10.96.0.256",
        "1.2.3.4:53",
    ] {
        assert!(!kubelet_flags::kubelet_parses_ip(bad), "{bad}");
    }
}

/// A --cluster-dns flag that holds no address beats the config file's good one: the fix is
/// the flag, not the config. MicroK8s without its dns addon has no cluster DNS by choice.
#[test]
fn no_cluster_dns_from_a_flag_and_on_microk8s() {
    let flagged = |host: &Host, raw: &crate::facts::raw::RawFacts| {
        let facts = NodeFacts::from_raw("node1", raw);
        let RuleOutcome::Findings(f) = kubelet_flags::no_cluster_dns(&Ctx::new(host, &facts))
        else {
            panic!("the name is dropped");
        };
        f
    };
    let raw = crate::testing::rules_fixture(
        "DNS-KUBELET-NO-CLUSTER-DNS/kubeadm-cluster-dns-flag-by-name",
    );
    let host = Host::new("node1");
    let f = flagged(&host, &raw);
    assert!(
        f[0].remediation
            .starts_with("change --cluster-dns at /etc/default/kubelet:1")
            && f[0].remediation.contains(
                "(without it, /var/lib/kubelet/config.yaml:16 clusterDNS: 10.96.0.10 counts)"
            ),
        "{}",
        f[0].remediation
    );
    // With the clusterDNS wanted known (10.96.0.10, the config's), taking the flag
    // out is offered; with another address in the config, as wrong as the flag's, it fixes
    // nothing: not offered.
    let mut other = raw.clone();
    let config = "/var/lib/kubelet/config.yaml";
    crate::testing::replace_in_file(&mut other, config, "- 10.96.0.10\n", "- 10.96.0.99\n");
    let mut host = host.clone();
    for (key, value) in [
        ("dns_mode", "coredns"),
        ("enable_nodelocaldns", "false"),
        ("kube_service_addresses", "10.96.0.0/12"),
        ("skydns_server", "10.96.0.10"),
    ] {
        host.vars.insert(key.into(), serde_json::json!(value));
    }
    let f = flagged(&host, &raw);
    assert!(
        f[0].remediation.contains(
            "to 10.96.0.10, or remove it (without it, /var/lib/kubelet/config.yaml:16 clusterDNS: 10.96.0.10 counts)"
        ),
        "{}",
        f[0].remediation
    );
    let f = flagged(&host, &other);
    assert!(
        f[0].remediation
            .starts_with("change --cluster-dns at /etc/default/kubelet:1")
            && !f[0].remediation.contains("remove it"),
        "{}",
        f[0].remediation
    );
    // With no clusterDNS in the config, taking the flag out leaves the kubelet none: not
    // offered.
    let mut bare = raw.clone();
    let config = "/var/lib/kubelet/config.yaml";
    crate::testing::replace_in_file(&mut bare, config, "clusterDNS:\n- 10.96.0.10\n", "");
    let f = flagged(&host, &bare);
    assert!(
        f[0].remediation
            .starts_with("change --cluster-dns at /etc/default/kubelet:1")
            && !f[0].remediation.contains("remove it"),
        "{}",
        f[0].remediation
    );

    let mut raw = crate::testing::rules_fixture("_upstream/microk8s-1.32-debian12-joined-worker");
    let path = "/var/snap/microk8s/7964/args/kubelet";
    crate::testing::replace_in_file(&mut raw, path, "--cluster-domain=cluster.local\n", "");
    crate::testing::replace_in_file(&mut raw, path, "--cluster-dns=10.152.183.10\n", "");
    let facts = NodeFacts::from_raw("node1", &raw);
    let RuleOutcome::Findings(f) = kubelet_flags::no_cluster_dns(&Ctx::new(&host, &facts)) else {
        panic!("no --cluster-dns is reported");
    };
    assert_eq!(f[0].severity, Severity::Info, "{f:?}");
    assert!(f[0].remediation.contains("microk8s enable dns"), "{f:?}");
}

/// MicroK8s's dns addon forwards CoreDNS to the kubelet's file only where it found one
/// for the kubelet (or one was set), else to 8.8.8.8 and 8.8.4.4: with its Corefile unread,
/// a loopback server in the kubelet's file is the Default pods' problem, not a known
/// loop; where the Corefile was read and forwards to the file, the loop is real.
#[test]
fn a_microk8s_loopback_is_a_loop_only_where_the_corefile_says_so() {
    let raw = crate::testing::rules_fixture(
        "DNS-KUBELET-LOOPBACK/microk8s-1.25-ubuntu2204-resolved-stub",
    );
    let host = Host::new("node1");
    let facts = NodeFacts::from_raw("node1", &raw);
    let judge = |read: Option<bool>| {
        let mut ctx = Ctx::new(&host, &facts);
        ctx.coredns_forwards_to_file = read;
        ctx.corefile_forwards_to_file = read;
        match super::kubelet_file::kubelet_loopback(&ctx) {
            RuleOutcome::Findings(f) => f,
            other => panic!("127.0.0.53 is reported: {other:?}"),
        }
    };
    let f = judge(None);
    assert_eq!(f[0].severity, Severity::Warning, "{f:?}");
    assert!(
        f[0].summary
            .contains("whether CoreDNS loops on it is not known")
            && f[0].evidence.iter().any(|e| e
                .contains("CoreDNS's Corefile (kube-system/coredns) was not read")
                && e.contains("`forward . 8.8.8.8 8.8.4.4`")),
        "{f:?}"
    );
    let f = judge(Some(true));
    assert_eq!(f[0].severity, Severity::Critical, "{f:?}");
    assert!(f[0].summary.contains("crash with a loop"), "{f:?}");
    let f = judge(Some(false));
    assert_eq!(f[0].severity, Severity::Warning, "{f:?}");
    assert!(f[0].summary.contains("CoreDNS does not loop"), "{f:?}");
}

/// A MicroK8s worker that `microk8s enable dns` did not reach (the cluster agent loop stops
/// at the first node it cannot reach): where the cluster has a DNS Service, no --cluster-dns
/// is the failure it is on any other node, and the fix sets the Service's address in the
/// arguments file; where the cluster has none, the dns addon is off; unread, info that says
/// so.
#[test]
fn microk8s_without_cluster_dns_is_judged_against_the_clusters_dns_service() {
    let raw = crate::testing::rules_fixture(
        "DNS-KUBELET-NO-CLUSTER-DNS/microk8s-1.32-worker-missed-enable-dns",
    );
    let host = Host::new("node1");
    let facts = NodeFacts::from_raw("node1", &raw);
    let judge = |cluster: &crate::cluster::Cluster| {
        let ctx = Ctx::in_cluster(&host, &facts, Some(cluster));
        match kubelet_flags::no_cluster_dns(&ctx) {
            RuleOutcome::Findings(f) => f,
            other => panic!("no --cluster-dns is reported: {other:?}"),
        }
    };
    let f = judge(&with_services(Some(vec![("kube-dns", "10.152.183.10")])));
    assert_eq!(f[0].severity, Severity::Critical, "{f:?}");
    assert_eq!(wanted(&f, CLUSTER_DNS), ["10.152.183.10"]);
    assert!(
        f[0].remediation
            .starts_with("set --cluster-dns=10.152.183.10 and --cluster-domain (cluster.local unless `microk8s enable dns` was given another) in /var/snap/microk8s/7964/args/kubelet")
            && f[0]
                .remediation
                .contains("stops at the first it cannot reach"),
        "{f:?}"
    );
    assert!(
        f[0].evidence.contains(
            &"kubectl on cp1: kube-system/kube-dns 10.152.183.10 (Services labelled k8s-app kube-dns, kube-dns-secondary or coredns)"
                .to_owned()
        ) && f[0]
            .evidence
            .contains(&"/var/snap/microk8s/7964/args/kubelet: no --cluster-dns".to_owned()),
        "{f:?}"
    );

    let f = judge(&with_services(Some(vec![])));
    assert_eq!(f[0].severity, Severity::Info, "{f:?}");
    assert!(
        f[0].summary
            .contains("the cluster has no DNS Service (kubectl on cp1")
            && f[0].remediation.contains("microk8s enable dns"),
        "{f:?}"
    );

    for unread in [with_services(None), cluster(&[])] {
        let f = judge(&unread);
        assert_eq!(f[0].severity, Severity::Info, "{f:?}");
        assert!(
            f[0].summary.contains("the cluster was not read to compare")
                && f[0].remediation.starts_with("let dnsfix read the cluster"),
            "{f:?}"
        );
    }
}

/// On EKS a search domain from the NodeConfig's spec.instance.network.domains, which
/// nodeadm writes into systemd-resolved's Domains= at every boot, is fixed there.
#[test]
fn an_eks_search_domain_from_the_nodeconfig_is_fixed_there() {
    let mut raw = crate::testing::rules_fixture("_upstream/eks-al2023-nodeadm");
    // The kubelet's /etc/resolv.conf, read through its link to resolved's uplink file.
    for path in ["/etc/resolv.conf", "/run/systemd/resolve/resolv.conf"] {
        crate::testing::replace_in_file(
            &mut raw,
            path,
            "search us-west-2.compute.internal",
            "search corp.example us-west-2.compute.internal",
        );
    }
    let host = Host::new("node1");
    let stray = |raw: &crate::facts::raw::RawFacts| {
        let facts = NodeFacts::from_raw("node1", raw);
        let RuleOutcome::Findings(f) = super::search::stray_search(&Ctx::new(&host, &facts)) else {
            panic!("corp.example is not declared");
        };
        f[0].clone()
    };
    // From DHCP, as far as dnsfix can tell: on AL2023 systemd-networkd takes it, from the
    // VPC's DHCP option set, through the .network files nodeadm writes at every boot.
    let dhcp = stray(&raw).remediation;
    assert!(
        dhcp.starts_with("if pods should resolve")
            && dhcp.contains("the VPC's DHCP option set")
            && dhcp.contains("UseDomains=no"),
        "{dhcp}"
    );
    // nodeadm/internal/system/resolve.conf.tpl (amazon-eks-ami 81fec2e8) rendered with
    // domains and no nameservers: the DNS= line's template leaves an empty line.
    raw.file(
        "/run/systemd/resolved.conf.d/40-eks.conf",
        FileState::Present,
        Some(b"[Resolve]\n\nDomains=corp.example\n"),
    );
    let f = stray(&raw);
    assert!(
        f.remediation
            .starts_with("remove it from spec.instance.network.domains in the NodeConfig"),
        "{f:?}"
    );
    assert!(
        f.evidence.contains(
            &"/run/systemd/resolved.conf.d/40-eks.conf:3: Domains=corp.example (the NodeConfig's spec.instance.network.domains, written by nodeadm at every boot: change it there)"
                .to_owned()
        ),
        "{f:?}"
    );
}

/// A cluster read on cp1 whose DNS Services are `services` (name, address).
fn with_services(services: Option<Vec<(&str, &str)>>) -> crate::cluster::Cluster {
    crate::testing::cluster_with_services("cp1", services)
}

const UDP_HEADER: &str = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n";

/// The kubeadm node of `kubeadm-config-without-cluster-domain` (clusterDNS 10.96.0.10) with
/// its clusterDomain back and the socket tables `udp` (rows after the header; None: not
/// read) and no IPv6 one; its facts with clusterDNS `dns` where given.
fn service_node(udp: Option<&str>, dns: Option<&[&str]>) -> NodeFacts {
    let mut raw = crate::testing::rules_fixture(
        "DNS-KUBELET-NO-CLUSTER-DNS/kubeadm-config-without-cluster-domain",
    );
    match udp {
        Some(rows) => raw.file(
            crate::facts::sockets::UDP,
            FileState::Present,
            Some(format!("{UDP_HEADER}{rows}").as_bytes()),
        ),
        None => raw.file(crate::facts::sockets::UDP, FileState::Unreadable, None),
    }
    raw.file(crate::facts::sockets::UDP6, FileState::Missing, None);
    let mut facts = NodeFacts::from_raw("node1", &raw);
    if let Observed::Known(d) = &mut facts.kubelet.cluster_domain {
        d.value = "cluster.local".into();
    }
    if let (Some(dns), Observed::Known(e)) = (dns, &mut facts.kubelet.cluster_dns) {
        e.value = dns.iter().map(|a| (*a).to_owned()).collect();
    }
    facts
}

/// What the first finding's fix gives `setting` (it must name one).
fn wanted<'f>(findings: &'f [crate::diagnose::Finding], setting: &str) -> &'f [String] {
    findings[0]
        .wanted
        .get(setting)
        .unwrap_or_else(|| panic!("no {setting} wanted: {findings:?}"))
}

fn judge_services(facts: &NodeFacts, cluster: &crate::cluster::Cluster) -> RuleOutcome {
    kubelet_flags::no_cluster_dns(&Ctx::in_cluster(&Host::new("node1"), facts, Some(cluster)))
}

/// clusterDNS an address, but not the cluster DNS Service's, and nothing on the node
/// answers there: critical; high where a later server is the Service's; not judged where
/// kubectl found no such Service.
#[test]
fn a_cluster_dns_no_service_holds_is_reported() {
    let facts = service_node(Some(""), None);
    let other = with_services(Some(vec![("coredns", "10.233.0.3")]));
    let RuleOutcome::Findings(f) = judge_services(&facts, &other) else {
        panic!("10.96.0.10 is no Service's");
    };
    assert_eq!(f[0].severity, Severity::Critical, "{f:?}");
    assert!(
        f[0].summary.starts_with(
            "kubelet clusterDNS 10.96.0.10 is not the address of the cluster's DNS Service (kube-system/coredns 10.233.0.3)"
        ),
        "{f:?}"
    );
    assert!(
        f[0].evidence.contains(
            &"kubectl on cp1: kube-system/coredns 10.233.0.3 (Services labelled k8s-app kube-dns, kube-dns-secondary or coredns)"
                .to_owned()
        ),
        "{f:?}"
    );
    assert!(
        f[0].remediation
            .starts_with("set clusterDNS to [10.233.0.3]")
            && f[0].remediation.contains("kubelet-config ConfigMap"),
        "{f:?}"
    );
    for cluster in [
        with_services(Some(vec![("kube-dns", "10.96.0.10")])),
        with_services(Some(vec![])),
        with_services(None),
    ] {
        assert_eq!(
            judge_services(&facts, &cluster),
            RuleOutcome::Pass,
            "{cluster:?}"
        );
    }
    // A later server that is the Service's: each lookup waits for the first to time out.
    let later = service_node(Some(""), Some(&["10.96.0.99", "10.96.0.10"]));
    let kube_dns = with_services(Some(vec![("kube-dns", "10.96.0.10")]));
    let RuleOutcome::Findings(f) = judge_services(&later, &kube_dns) else {
        panic!("10.96.0.99 is no Service's");
    };
    assert_eq!(f[0].severity, Severity::High, "{f:?}");
    // The Service's address, already there later, is not listed twice.
    assert_eq!(wanted(&f, "clusterDNS"), ["10.96.0.10"]);
    // With a second address, only the first is replaced.
    let dual = service_node(Some(""), Some(&["10.96.0.10", "fd00:10:96::a"]));
    let RuleOutcome::Findings(f) = judge_services(&dual, &other) else {
        panic!("10.96.0.10 is no Service's");
    };
    assert!(
        f[0].remediation
            .starts_with("set clusterDNS to [10.233.0.3,fd00:10:96::a]"),
        "{f:?}"
    );
    assert_eq!(wanted(&f, "clusterDNS"), ["10.233.0.3", "fd00:10:96::a"]);
    // A NodeLocal DNSCache on the node: its address is the one wanted, as
    // nodelocaldns-clusterdns sets it.
    let mut cached = service_node(Some(""), Some(&["10.96.0.99"]));
    cached.nodelocaldns = Some(vec!["169.254.20.10".into()]);
    let RuleOutcome::Findings(f) = judge_services(&cached, &kube_dns) else {
        panic!("10.96.0.99 is no Service's");
    };
    assert_eq!(wanted(&f, "clusterDNS"), ["169.254.20.10"]);
    // No clusterDomain either: the inventory's dns_domain comes with it, for one fix.
    let mut bare = service_node(Some(""), None);
    if let Observed::Known(d) = &mut bare.kubelet.cluster_domain {
        d.value = String::new();
    }
    let mut host = Host::new("node1");
    host.vars.insert("dns_domain".into(), "corp.local".into());
    let RuleOutcome::Findings(f) =
        kubelet_flags::no_cluster_dns(&Ctx::in_cluster(&host, &bare, Some(&other)))
    else {
        panic!("10.96.0.10 is no Service's");
    };
    assert_eq!(wanted(&f, "clusterDomain"), ["corp.local"]);
    // The first address the kubelet takes is the one replaced; a name it drops goes.
    let named = service_node(Some(""), Some(&["kube-dns.kube-system", "10.96.0.99"]));
    let RuleOutcome::Findings(f) = judge_services(&named, &other) else {
        panic!("10.96.0.99 is no Service's");
    };
    assert!(
        f[0].summary.starts_with("kubelet clusterDNS 10.96.0.99 ")
            && f[0]
                .remediation
                .starts_with("set clusterDNS to [10.233.0.3];"),
        "{f:?}"
    );
}

/// What answers on the node itself, or may: a DNS server bound to the address or to every
/// address, a node-local cache (link-local, or on the nodelocaldns interface), the same
/// address spelt IPv4-mapped; a server of Kubespray's dns_mode manual. None is judged; a
/// socket table not read leaves it unknown.
#[test]
fn a_cluster_dns_answered_on_the_node_is_not_judged() {
    let other = with_services(Some(vec![("coredns", "10.233.0.3")]));
    let row = |local: &str| {
        format!(
            " 2412: {local} 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 6220938 2 00000000fed30b06 0\n"
        )
    };
    for local in ["0A00600A:0035", "00000000:0035"] {
        let bound = service_node(Some(&row(local)), None);
        assert_eq!(judge_services(&bound, &other), RuleOutcome::Pass, "{local}");
    }
    let RuleOutcome::Findings(f) = judge_services(&service_node(None, None), &other) else {
        panic!("not known");
    };
    assert_eq!(
        f[0].status,
        crate::diagnose::finding::FindingStatus::Unknown,
        "{f:?}"
    );
    for spelt in ["::ffff:10.233.0.3", "::ffff:010.233.000.003"] {
        let mapped = service_node(Some(""), Some(&[spelt]));
        assert_eq!(
            judge_services(&mapped, &other),
            RuleOutcome::Pass,
            "{spelt}"
        );
    }
    let cache = service_node(Some(""), Some(&["169.254.25.10"]));
    assert_eq!(judge_services(&cache, &other), RuleOutcome::Pass);
    let mut cache6 = service_node(Some(""), Some(&["fd00::10"]));
    cache6.nodelocaldns = Some(vec!["fd00::10".into()]);
    let six = with_services(Some(vec![("kube-dns", "fd00:10:96::a")]));
    assert_eq!(judge_services(&cache6, &six), RuleOutcome::Pass);
    let mut manual = Host::new("node1");
    manual.vars.insert("dns_mode".into(), "manual".into());
    let facts = service_node(Some(""), None);
    assert_eq!(
        kubelet_flags::no_cluster_dns(&Ctx::in_cluster(&manual, &facts, Some(&other))),
        RuleOutcome::Pass
    );
}

/// Kubespray's service range and its DNS address as Kubespray renders them (the range
/// counted as util::nth_address counts): the IPv6 range where `ipv4_stack: false`, the
/// defaults only on a Kubespray node, and skydns_server where it is an address or the
/// default's expression.
#[test]
fn kubespray_s_dns_address_comes_from_its_first_service_range() {
    let mut host = Host::new("node1");
    assert_eq!(kubespray_service_range(&host, false), None);
    assert_eq!(kubespray_service_range(&host, true), Some("10.233.0.0/18"));
    // A range written as a template is what Ansible renders it to, not the default.
    for unusable in [
        serde_json::json!("{{ svc_cidr | default('10.96.0.0/12') }}"),
        serde_json::json!(""),
        serde_json::Value::Null,
    ] {
        let mut templated = Host::new("node1");
        templated
            .vars
            .insert("kube_service_addresses".into(), unusable.clone());
        assert_eq!(
            kubespray_service_range(&templated, true),
            None,
            "{unusable}"
        );
        assert_eq!(kubespray_dns_server(&templated, true), None, "{unusable}");
    }
    host.vars.insert("ipv4_stack".into(), false.into());
    assert_eq!(
        kubespray_service_range(&host, true),
        Some("fd85:ee78:d8a6:8607::1000/116")
    );
    host.vars
        .insert("kube_service_addresses_ipv6".into(), "fd00:96::/108".into());
    assert_eq!(
        kubespray_dns_server(&host, false),
        "fd00:96::3".parse().ok()
    );
    // The sample inventory's expression is the default's: the third address.
    host.vars.insert(
        "skydns_server".into(),
        "{{ kube_service_subnets.split(',') | first | ansible.utils.ipaddr('net') | ansible.utils.ipaddr(3) | ansible.utils.ipaddr('address') }}".into(),
    );
    assert_eq!(
        kubespray_dns_server(&host, false),
        "fd00:96::3".parse().ok()
    );
    // Another template is not known here.
    host.vars.insert(
        "skydns_server".into(),
        "{{ kube_service_subnets.split(',') | first | ansible.utils.ipaddr(10) }}".into(),
    );
    assert_eq!(kubespray_dns_server(&host, false), None);
    // ipv4_stack is tested bare: the INI string "false" is true for Kubespray.
    host.vars.insert("ipv4_stack".into(), "false".into());
    assert_eq!(kubespray_service_range(&host, true), Some("10.233.0.0/18"));
    host.vars.insert("ipv4_stack".into(), false.into());
    host.vars
        .insert("skydns_server".into(), "fd00:96::a".into());
    assert_eq!(
        kubespray_dns_server(&host, false),
        "fd00:96::a".parse().ok()
    );
}

/// The cluster domain an inventory declares: dns_domain; on a Kubespray node without it,
/// Kubespray's default `"{{ cluster_name }}"`, so cluster_name; a template left unrendered
/// (cluster_name not in the inventory) names none, and elsewhere cluster_name is only a name.
#[test]
fn the_inventory_s_domain_is_dns_domain_or_kubespray_s_cluster_name() {
    let host = |vars: &[(&str, &str)]| {
        let mut host = Host::new("node1");
        for (k, v) in vars {
            host.vars.insert((*k).into(), (*v).into());
        }
        host
    };
    let named = host(&[("cluster_name", "prod.local")]);
    assert_eq!(inventory_domain(&named, true), Some("prod.local"));
    assert_eq!(inventory_domain(&named, false), None);
    let both = host(&[
        ("cluster_name", "prod.local"),
        ("dns_domain", "corp.example"),
    ]);
    assert_eq!(inventory_domain(&both, true), Some("corp.example"));
    let unrendered = host(&[("dns_domain", "{{ cluster_name }}")]);
    assert_eq!(inventory_domain(&unrendered, true), None);
    assert_eq!(inventory_domain(&host(&[]), true), None);
}

/// A k3s agent before v1.32 shows no clusterDNS of its own (its server hands it one): the
/// rule leaves it to the server's node rather than reporting it unknown on every agent.
#[test]
fn a_k3s_agent_s_cluster_dns_is_judged_on_its_server() {
    let facts = NodeFacts::from_raw(
        "node1",
        &crate::testing::rules_fixture("_upstream/k3s-aws-link-local-fallback"),
    );
    assert!(matches!(facts.kubelet.cluster_dns, Observed::Unknown(_)));
    let host = Host::new("node1");
    match kubelet_flags::no_cluster_dns(&Ctx::new(&host, &facts)) {
        RuleOutcome::NotApplicable(why) => {
            assert!(why.starts_with("k3s-agent.service runs an agent"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    // The same where a k3s.service runs `k3s agent`: the facts and the rule agree.
    let mut raw = crate::testing::rules_fixture("_upstream/k3s-env-resolv-conf");
    crate::testing::replace_in_file(
        &mut raw,
        "/etc/systemd/system/k3s.service",
        "    server \\\n",
        "    agent \\\n",
    );
    let facts = NodeFacts::from_raw("node1", &raw);
    assert!(
        matches!(
            kubelet_flags::no_cluster_dns(&Ctx::new(&host, &facts)),
            RuleOutcome::NotApplicable(_)
        ),
        "{:?}",
        facts.kubelet.cluster_dns
    );
}

/// Kubespray tests enable_nodelocaldns bare (`{% if enable_nodelocaldns %}` in the kubelet
/// config template): an INI inventory's `enable_nodelocaldns=false`, the string "false",
/// renders [nodelocaldns_ip] all the same, so that is what the fix wants; a real false
/// renders the service address.
#[test]
fn an_ini_false_string_enables_nodelocaldns_as_kubespray_reads_it() {
    let RuleOutcome::Findings(f) =
        kubespray_without_cluster_dns(&[("enable_nodelocaldns", "false".into())])
    else {
        panic!("an empty clusterDNS is reported");
    };
    assert_eq!(wanted(&f, "clusterDNS"), ["169.254.25.10"]);
    let RuleOutcome::Findings(f) =
        kubespray_without_cluster_dns(&[("enable_nodelocaldns", false.into())])
    else {
        panic!("an empty clusterDNS is reported");
    };
    assert_eq!(wanted(&f, "clusterDNS"), ["10.233.0.3"]);
    let mut host = Host::new("node1");
    for (value, truthy) in [
        (serde_json::json!("false"), Some(true)),
        (serde_json::json!(""), Some(false)),
        (serde_json::json!(0), Some(false)),
        (serde_json::json!("{{ x }}"), None),
        (serde_json::json!(false), Some(false)),
    ] {
        host.vars
            .insert("enable_nodelocaldns".into(), value.clone());
        assert_eq!(host.var_truthy("enable_nodelocaldns"), truthy, "{value}");
    }
}

/// On EKS a --cluster-dns or --resolv-conf in the NodeConfig's spec.kubelet.flags (nodeadm
/// puts them last on the kubelet's command line) beats spec.kubelet.config: the fix names
/// the flag, not the config.
#[test]
fn an_eks_flag_is_fixed_in_the_nodeconfig_s_flags() {
    let fix = |fixture: &str, flag: &str, rule: fn(&Ctx) -> RuleOutcome| {
        let mut raw = crate::testing::rules_fixture(fixture);
        crate::testing::with_eks_flag(&mut raw, flag);
        let facts = NodeFacts::from_raw("node1", &raw);
        let mut host = Host::new("node1");
        host.vars.insert("kube_proxy_mode".into(), "ipvs".into());
        match rule(&Ctx::new(&host, &facts)) {
            RuleOutcome::Findings(f) => f[0].remediation.clone(),
            other => panic!("{fixture}: {other:?}"),
        }
    };
    let dns = fix(
        "DNS-NODELOCAL-CLUSTERDNS/eks-al2023-ipvs-service-ip",
        "--cluster-dns=172.20.0.10",
        kubelet_flags::nodelocal_clusterdns,
    );
    assert!(
        dns.contains(
            "change --cluster-dns to 169.254.20.10 in the NodeConfig's spec.kubelet.flags"
        ),
        "{dns}"
    );
    let resolv = fix(
        "_upstream/eks-al2023-old-stub",
        "--resolv-conf=/run/systemd/resolve/stub-resolv.conf",
        super::kubelet_file::kubelet_loopback,
    );
    assert!(
        resolv.contains("change --resolv-conf in its spec.kubelet.flags"),
        "{resolv}"
    );
    // Before 1.32 the flag is the only way: taken out, it leaves the kubelet the default
    // /etc/resolv.conf, as spec.kubelet.config.resolvConf goes to a drop-in (kubernetes#126630).
    let before_1_32 = fix(
        "_upstream/eks-al2023-1.31-nodeconfig-resolvconf",
        "--resolv-conf=/run/systemd/resolve/stub-resolv.conf",
        super::kubelet_file::kubelet_loopback,
    );
    assert!(
        before_1_32.contains("change --resolv-conf in its spec.kubelet.flags")
            && !before_1_32.contains("take it out"),
        "{before_1_32}"
    );
    assert!(resolv.contains("or take it out"), "{resolv}");
}

/// On EKS a cluster address among the node's resolvers may come from the NodeConfig's
/// spec.instance.network.nameservers, which nodeadm writes as systemd-resolved's DNS= at
/// every boot (resolve.conf.tpl): DNS-CLUSTER-SELF-FORWARD's evidence names that line.
#[test]
fn an_eks_cluster_address_from_the_nodeconfig_is_named() {
    let mut raw = crate::testing::rules_fixture("_upstream/eks-al2023-nodeadm");
    raw.file(
        "/run/systemd/resolved.conf.d/40-eks.conf",
        FileState::Present,
        Some(b"[Resolve]\nDNS=172.20.0.10\n\n"),
    );
    // The uplink file, and /etc/resolv.conf, which links to it (the gather reads both).
    for path in ["/run/systemd/resolve/resolv.conf", "/etc/resolv.conf"] {
        crate::testing::replace_in_file(
            &mut raw,
            path,
            "nameserver 10.0.0.2\n",
            "nameserver 172.20.0.10\n",
        );
    }
    let facts = NodeFacts::from_raw("node1", &raw);
    let host = Host::new("node1");
    let outcome = super::kubelet_file::cluster_self_forward(&Ctx::new(&host, &facts));
    let RuleOutcome::Findings(f) = outcome else {
        panic!("the pods' resolv.conf lists the cluster address: {outcome:?}");
    };
    assert!(
        f[0].evidence.contains(
            &"/run/systemd/resolved.conf.d/40-eks.conf:2: DNS=172.20.0.10 (the NodeConfig's spec.instance.network.nameservers, written by nodeadm at every boot: change it there)"
                .to_owned()
        ),
        "{f:?}"
    );
}

/// A Kubespray cluster deployed before v2.24 keeps the DNS= line its old template wrote
/// into /etc/systemd/resolved.conf (0061-systemd-resolved.yml @v2.23.3); later runs write
/// only the kubespray.conf drop-in. DNS-CLUSTER-SELF-FORWARD's evidence names that line,
/// unless a drop-in resets the list with an empty DNS=, which drops it (resolved.conf(5)):
/// one of /etc, /run or a package's own in /usr/lib or /usr/local/lib, all merged by name
/// (systemd src/resolve/resolved-conf.c `manager_parse_config_file`, CONF_PATHS_NULSTR @v245
/// and @v255), unless a drop-in of the same name in an earlier directory hides it.
#[test]
fn a_cluster_address_left_in_resolved_conf_by_an_old_kubespray_is_named() {
    let case = "DNS-CLUSTER-SELF-FORWARD/kubespray-v2.23-resolved-conf-left-behind";
    let line = "/etc/systemd/resolved.conf:2: DNS=169.254.25.10 (written by Kubespray before v2.24";
    let host = Host::new("node1");
    let named = |raw: &crate::facts::raw::RawFacts| {
        let facts = NodeFacts::from_raw("node1", raw);
        let outcome = super::kubelet_file::cluster_self_forward(&Ctx::new(&host, &facts));
        let RuleOutcome::Findings(f) = outcome else {
            panic!("the pods' resolv.conf lists the cluster address: {outcome:?}");
        };
        f[0].evidence.iter().any(|e| e.starts_with(line))
    };
    let base = crate::testing::rules_fixture(case);
    assert!(named(&base), "the old line is named");
    let reset: &[u8] = b"[Resolve]\nDNS=\n";
    let mut raw = base.clone();
    raw.file(
        "/etc/systemd/resolved.conf.d/00-reset.conf",
        FileState::Present,
        Some(reset),
    );
    assert!(!named(&raw), "a drop-in's empty DNS= drops it");
    for dir in ["/usr/lib", "/usr/local/lib"] {
        let mut raw = base.clone();
        let vendor = format!("{dir}/systemd/resolved.conf.d/50-vendor.conf");
        raw.file(&vendor, FileState::Present, Some(reset));
        assert!(!named(&raw), "{vendor}: a package's drop-in counts too");
        // The admin's empty file of the same name hides the package's.
        raw.file(
            "/etc/systemd/resolved.conf.d/50-vendor.conf",
            FileState::Present,
            Some(b""),
        );
        assert!(named(&raw), "{vendor} hidden by /etc's");
    }
}

/// Kubespray writes the inventory's kubelet_config_extra_args after the resolvConf it
/// renders from kube_resolv_conf (kubelet-config.v1beta1.yaml.j2 @46dbdd39), so where that
/// mapping sets resolvConf, it is what the kubelet takes at every run: the fix names it,
/// not kube_resolv_conf.
#[test]
fn a_resolv_conf_in_kubelet_config_extra_args_is_where_kubespray_keeps_it() {
    let raw = crate::testing::rules_fixture("DNS-KUBELET-LOOPBACK/kubespray-extra-args-resolvconf");
    let facts = NodeFacts::from_raw("node1", &raw);
    let fix = |vars: serde_json::Value| {
        let mut host = Host::new("node1");
        if let serde_json::Value::Object(map) = vars {
            host.vars = map;
        }
        match super::kubelet_file::kubelet_loopback(&Ctx::new(&host, &facts)) {
            RuleOutcome::Findings(f) => f[0].remediation.clone(),
            other => panic!("{other:?}"),
        }
    };
    let extra = fix(serde_json::json!({
        "kubelet_config_extra_args": {"resolvConf": "/etc/resolv.conf"}
    }));
    assert!(
        extra.contains("resolvConf in the inventory's kubelet_config_extra_args"),
        "{extra}"
    );
    let plain = fix(serde_json::json!({"kubelet_config_extra_args": {"maxPods": 200}}));
    assert!(
        plain.contains("kube_resolv_conf in the inventory"),
        "{plain}"
    );
}

/// The Antrea agent turns forwarding on at every start only from Antrea 1.15 (antrea-io/
/// antrea 0204fbc3): forwarding no file persists is an info naming the version that
/// decides, not a pass (an older agent leaves it off after a reboot) nor a high (a newer
/// one sets it).
#[test]
fn antrea_sets_forwarding_only_from_1_15() {
    let mut raw = crate::testing::rules_fixture("DNS-IP-FORWARD/ip-forward-not-persisted");
    // antrea-io/antrea @fc70f2bb build/charts/antrea/conf/antrea-cni.conflist, with the
    // chart's portmap plugin.
    raw.file(
        "/etc/cni/net.d/10-antrea.conflist",
        FileState::Present,
        Some(br#"{"cniVersion":"0.3.0","name":"antrea","plugins":[{"type":"antrea","ipam":{"type":"host-local"}},{"type":"portmap","capabilities":{"portMappings":true}}]}"#),
    );
    let facts = NodeFacts::from_raw("node1", &raw);
    let host = Host::new("node1");
    let RuleOutcome::Findings(f) = ip_forward(&Ctx::new(&host, &facts)) else {
        panic!("forwarding no file persists, with Antrea");
    };
    assert_eq!(f[0].severity, Severity::Info, "{f:?}");
    assert!(f[0].summary.contains("from Antrea 1.15"), "{f:?}");
    assert!(f[0].remediation.contains("antrea-agent"), "{f:?}");
}

/// The `_healthy/kubeadm-ubuntu2204` node (containerd, Calico) with and without an empty
/// CNI file (a full disk as Calico's install-cni rewrote one) sorting before Calico's.
fn cni_nodes() -> (crate::facts::raw::RawFacts, crate::facts::raw::RawFacts) {
    let base = crate::testing::rules_fixture("_healthy/kubeadm-ubuntu2204");
    let calico = r#"{"name":"k8s-pod-network","cniVersion":"1.0.0","plugins":[{"type":"calico"}]}"#;
    let healthy =
        crate::testing::with_files(&base, &[("/etc/cni/net.d/10-calico.conflist", calico)]);
    let broken = crate::testing::with_files(&healthy, &[("/etc/cni/net.d/05-cilium.conflist", "")]);
    (healthy, broken)
}

/// `raw` with `from` replaced by `to` in the running kubelet's command line.
fn kubelet_cmdline(
    raw: &crate::facts::raw::RawFacts,
    from: &str,
    to: &str,
) -> crate::facts::raw::RawFacts {
    let path = "/proc/2291/cmdline";
    let cmdline = crate::testing::text(raw, path).replace(from, to);
    crate::testing::with_files(raw, &[(path, cmdline.as_str())])
}

/// DNS-CNI-CONFIG-INVALID for one node tree.
fn cni_outcome(raw: &crate::facts::raw::RawFacts) -> RuleOutcome {
    let facts = NodeFacts::from_raw("node1", raw);
    super::cni::cni_config_invalid(&Ctx::in_cluster(&Host::new("node1"), &facts, None))
}

/// A CNI file libcni refuses, sorting first: containerd gives no pod a network (go-cni
/// loadFromConfDir stops there); CRI-O and cri-dockerd take the next file.
#[test]
fn a_cni_file_containerd_cannot_load_is_critical_only_on_containerd() {
    let (healthy, broken) = cni_nodes();
    let outcome = cni_outcome;
    assert_eq!(outcome(&healthy), RuleOutcome::Pass);
    let RuleOutcome::Findings(f) = outcome(&broken) else {
        panic!("containerd stops at the empty file");
    };
    assert_eq!(
        (f[0].severity, f[0].status),
        (Severity::Critical, FindingStatus::Failed)
    );
    assert!(
        f[0].summary.contains(
            "/etc/cni/net.d/05-cilium.conflist, the first CNI file by name, does not load (it never reaches /etc/cni/net.d/10-calico.conflist)"
        ),
        "{f:?}"
    );
    assert!(
        f[0].evidence
            .iter()
            .any(|e| e
                .starts_with("runtime: containerd (unix:///var/run/containerd/containerd.sock (")),
        "{f:?}"
    );
    // The same node on CRI-O: skipped, Calico's file is the network.
    let endpoint = |from: &str, to: &str| kubelet_cmdline(&broken, from, to);
    let containerd = "--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock";
    let crio = endpoint(
        containerd,
        "--container-runtime-endpoint=unix:///var/run/crio/crio.sock",
    );
    let facts = NodeFacts::from_raw("node1", &crio);
    assert_eq!(
        facts
            .kubelet
            .runtime_endpoint
            .as_ref()
            .map(|e| e.value.as_str()),
        Some("unix:///var/run/crio/crio.sock"),
        "{:?}",
        facts.kubelet
    );
    assert_eq!(outcome(&crio), RuleOutcome::Pass);
    // CRI-O with no file it can load has no network either.
    let mut only_broken = crio.clone();
    only_broken
        .files
        .remove("/etc/cni/net.d/10-calico.conflist");
    only_broken
        .order
        .retain(|p| p != "/etc/cni/net.d/10-calico.conflist");
    let RuleOutcome::Findings(f) = outcome(&only_broken) else {
        panic!("CRI-O finds no network to take");
    };
    assert!(
        f[0].summary.starts_with("the runtime loads no pod network")
            && f[0].evidence.iter().any(|e| e.contains("crio.sock")),
        "{f:?}"
    );
    // A file dnsfix could not read, before any it can: unknown, not a pass.
    let mut unread = healthy.clone();
    unread.file(
        "/etc/cni/net.d/05-cilium.conflist",
        crate::facts::raw::FileState::Unreadable,
        None,
    );
    let RuleOutcome::Findings(f) = outcome(&unread) else {
        panic!("an unread file is unknown");
    };
    assert_eq!(f[0].status, FindingStatus::Unknown, "{f:?}");
    // No endpoint anywhere: the kubelet's default from 1.27 is containerd's; a 1.26 kubelet
    // needs one, so dnsfix cannot tell.
}

/// The runtime, where the node's kubelet names none dnsfix knows or none at all.
#[test]
fn a_cni_file_containerd_cannot_load_by_runtime_endpoint() {
    let (_, broken) = cni_nodes();
    let outcome = cni_outcome;
    let host = Host::new("node1");
    let endpoint = |from: &str, to: &str| kubelet_cmdline(&broken, from, to);
    let containerd = "--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock";
    // k3s's cri-dockerd skips the file; a runtime dnsfix does not know leaves it unknown,
    // unless no file of the directory loads, which leaves every runtime with no network.
    let dockerd = endpoint(
        "unix:///var/run/containerd/containerd.sock",
        "unix:///run/k3s/cri-dockerd/cri-dockerd.sock",
    );
    assert_eq!(outcome(&dockerd), RuleOutcome::Pass);
    let other = endpoint(
        "unix:///var/run/containerd/containerd.sock",
        "unix:///run/other/other.sock",
    );
    let status = |raw: &crate::facts::raw::RawFacts| match outcome(raw) {
        RuleOutcome::Findings(f) => Some((f[0].severity, f[0].status)),
        _ => None,
    };
    assert_eq!(
        status(&other),
        Some((Severity::Critical, FindingStatus::Unknown))
    );
    let mut alone = other.clone();
    alone.files.remove("/etc/cni/net.d/10-calico.conflist");
    alone
        .order
        .retain(|p| p != "/etc/cni/net.d/10-calico.conflist");
    assert_eq!(
        status(&alone),
        Some((Severity::Critical, FindingStatus::Failed))
    );
    let none = endpoint(&format!("{containerd}\0"), "");
    let mut facts = NodeFacts::from_raw("node1", &none);
    assert_eq!(facts.kubelet.runtime_endpoint, None, "{:?}", facts.kubelet);
    for (version, status) in [
        ("v1.30.2", FindingStatus::Failed),
        ("v1.26.3", FindingStatus::Unknown),
    ] {
        facts.kubelet.version = Some(version.to_owned());
        let RuleOutcome::Findings(f) =
            super::cni::cni_config_invalid(&Ctx::in_cluster(&host, &facts, None))
        else {
            panic!("{version}: a finding");
        };
        assert_eq!(f[0].status, status, "{version}: {f:?}");
    }
    facts.kubelet.version = Some("v1.23.17".to_owned());
    assert_eq!(
        super::cni::cni_config_invalid(&Ctx::in_cluster(&host, &facts, None)),
        RuleOutcome::Pass,
        "the dockershim skips the file"
    );
}

/// The cluster DNS Service's address read from the cluster is the cluster's own: on a
/// kubeadm node whose clusterDNS is a node-local cache's address alone (IPVS mode), a
/// kubelet resolvConf file listing the kube-dns Service loops CoreDNS, which forwards `.`
/// there ([`crate::testing::kubeadm_ipvs_nodelocal_with_service_in_file`]).
#[test]
fn a_dns_service_address_read_from_the_cluster_is_the_clusters_own() {
    let (facts, cluster) = crate::testing::kubeadm_ipvs_nodelocal_with_service_in_file();
    let host = Host::new("node1");
    let ctx = Ctx::in_cluster(&host, &facts, Some(&cluster));
    let service: std::net::IpAddr = "10.96.0.10".parse().expect("an address");
    assert!(ctx.cluster.contains(&service), "{:?}", ctx.cluster);
    let RuleOutcome::Findings(f) = super::kubelet_file::cluster_self_forward(&ctx) else {
        panic!("the file kubelet hands CoreDNS lists the kube-dns Service");
    };
    assert_eq!(
        (f[0].severity, f[0].status),
        (Severity::Critical, crate::diagnose::FindingStatus::Failed),
        "{f:?}"
    );
    assert!(f[0].summary.contains("(10.96.0.10)"), "{f:?}");
    assert!(
        f[0].evidence
            .iter()
            .any(|e| e.starts_with("cluster DNS addresses: ") && e.contains("10.96.0.10")),
        "{f:?}"
    );
    // The node alone does not know the Service's address.
    assert!(!Ctx::new(&host, &facts).cluster.contains(&service));
}

/// DNS-KUBELET-RESTART-DUE: a mark whose kubelet's start cannot be read, and marks a
/// gather without root could not look at, are unknown, never a pass.
#[test]
fn restart_marks_that_cannot_be_judged_are_unknown() {
    let mut raw = crate::testing::rules_fixture("DNS-KUBELET-RESTART-DUE/kubeadm-apply-cut-off");
    let host = Host::new("node1");
    let status = |raw: &crate::facts::raw::RawFacts| {
        let facts = NodeFacts::from_raw("node1", raw);
        match super::restart_due::restart_due(&Ctx::new(&host, &facts)) {
            RuleOutcome::Findings(f) => Some(f[0].status),
            _ => None,
        }
    };
    assert_eq!(status(&raw), Some(FindingStatus::Failed));
    raw.files.remove("/proc/2291/stat");
    assert_eq!(status(&raw), Some(FindingStatus::Unknown));
    let mut unread = crate::testing::rules_fixture("_healthy/kubeadm-ubuntu2204");
    assert_eq!(status(&unread), None);
    let dir = format!("{}/", crate::facts::restart_due::DIR);
    unread.file(&dir, crate::facts::raw::FileState::Unreadable, None);
    assert_eq!(status(&unread), Some(FindingStatus::Unknown));
}

/// DNS-KUBELET-RESTART-DUE: a kubelet stopped after a run was cut off (by its operator)
/// is not due a restart, which would start it: it reads the run's files when it starts.
#[test]
fn a_kubelet_stopped_since_a_cut_off_run_is_not_started() {
    let raw =
        crate::testing::rules_fixture("DNS-KUBELET-RESTART-DUE/kubeadm-cut-off-kubelet-stopped");
    let host = Host::new("node1");
    let facts = NodeFacts::from_raw("node1", &raw);
    assert_eq!(facts.kubelet.pid, None);
    match super::restart_due::restart_due(&Ctx::new(&host, &facts)) {
        RuleOutcome::NotApplicable(why) => assert!(
            why.starts_with(
                "no kubelet runs now: apply run 20261130T021500Z-7f3a left kubelet to be restarted"
            ),
            "{why}"
        ),
        other => panic!("expected not applicable, got {other:?}"),
    }
}

/// DNS-KUBELET-RESTART-DUE: with no kubelet process since a cut-off run, only an inactive
/// unit (stopped by its operator) makes it not applicable; a unit systemd keeps restarting
/// (activating), a failed one or one whose state was not told has not stayed up since the
/// run changed its files, which may be what broke it: high, with journalctl and rollback.
#[test]
fn a_kubelet_that_does_not_stay_up_since_a_cut_off_run_is_high() {
    let host = Host::new("node1");
    // kubelet is the third unit systemctl is-active answers for (node_facts::units).
    for state in ["activating", "failed", "deactivating", ""] {
        let mut raw = crate::testing::rules_fixture(
            "DNS-KUBELET-RESTART-DUE/kubeadm-cut-off-kubelet-stopped",
        );
        let units = raw.commands["units"].stdout.replacen(
            "active\ninactive\ninactive\n",
            &format!("active\ninactive\n{state}\n"),
            1,
        );
        assert_ne!(units, raw.commands["units"].stdout, "{state}");
        crate::testing::set_command(&mut raw, "units", &units, 0);
        let facts = NodeFacts::from_raw("node1", &raw);
        assert_eq!(facts.kubelet.pid, None);
        let RuleOutcome::Findings(findings) =
            super::restart_due::restart_due(&Ctx::new(&host, &facts))
        else {
            panic!("{state}: expected a finding");
        };
        let finding = &findings[0];
        assert_eq!(finding.severity, Severity::High, "{state}");
        assert!(
            finding.summary.starts_with(
                "kubelet has not stayed up since apply run 20261130T021500Z-7f3a changed its files"
            ),
            "{state}: {}",
            finding.summary
        );
        assert_eq!(
            finding.remediation,
            "journalctl -u kubelet says why it does not stay up; where the run's changes broke \
             it, dnsfix rollback 20261130T021500Z-7f3a puts the files back"
        );
    }
}

/// DNS-KUBELET-LOOPBACK on the 1.31 node whose drop-in spells `resolverConfig: /etc/resolv.conf`
/// (the stub) over the config's healthy file, with `kubelet --version` giving nothing: the
/// inventory's kube_version (v1.30.4, which reads that spelling) makes it the loop it is;
/// with no version anywhere, which file the kubelet reads is unknown, but 1.28 to 1.31
/// would loop: a critical loop, said of those versions, never a Pass.
#[test]
fn a_dropin_resolver_config_is_judged_by_the_version_the_rules_know() {
    let mut raw = crate::testing::rules_fixture(
        "DNS-KUBELET-LOOPBACK/kubeadm-1.31-config-dir-resolverconfig",
    );
    assert!(raw.commands.remove("kubelet-version").is_some());
    let facts = NodeFacts::from_raw("node1", &raw);
    let loopback = |host: &Host| {
        crate::diagnose::diagnose_host(host, &facts)
            .outcomes
            .into_iter()
            .find(|(id, _)| *id == "DNS-KUBELET-LOOPBACK")
            .map(|(_, o)| o)
    };
    let mut host = Host::new("node1");
    match loopback(&host) {
        Some(RuleOutcome::Findings(f)) => {
            assert_eq!(
                (f[0].severity, f[0].status),
                (Severity::Critical, FindingStatus::Failed),
                "{f:?}"
            );
            assert!(
                f[0].summary.starts_with(
                    "this kubelet may be 1.28 to 1.31 (its version is not known), and then: kubelet hands CoreDNS/nodelocaldns a resolv.conf with loopback nameserver 127.0.0.53"
                ),
                "{f:?}"
            );
            assert!(
                f[0].evidence.iter().any(|e| e.starts_with(
                    "kubelet 1.28 to 1.31: /etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf:3 resolvConf: /etc/resolv.conf"
                )),
                "{f:?}"
            );
        }
        other => panic!("expected a critical loop, got {other:?}"),
    }
    host.vars
        .insert("kube_version".into(), serde_json::json!("v1.30.4"));
    match loopback(&host) {
        Some(RuleOutcome::Findings(f)) => {
            assert_eq!(
                (f[0].severity, f[0].status),
                (Severity::Critical, FindingStatus::Failed),
                "{f:?}"
            );
            assert!(
                f[0].evidence.iter().any(|e| e.contains(
                    "/etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf:3 resolvConf: /etc/resolv.conf"
                )),
                "{f:?}"
            );
        }
        other => panic!("expected a critical loop, got {other:?}"),
    }
    // A 1.32 kubelet passes that spelling over: the config's file holds.
    host.vars
        .insert("kube_version".into(), serde_json::json!("v1.32.1"));
    assert!(matches!(loopback(&host), Some(RuleOutcome::Pass)));
}

/// DNS-KUBELET-LOOPBACK on the `kubeadm-1.31-config-dir-resolverconfig` node with no version
/// known and config.yaml's file turned into a loopback one too: 1.28 to 1.31 loop on the
/// drop-in's /etc/resolv.conf (127.0.0.53), 1.32 and later on config.yaml's file
/// (127.0.0.1). The summary says what each version finds, not the first one's for both.
#[test]
fn both_readings_failing_each_on_its_own_file_are_each_named() {
    let mut raw = crate::testing::rules_fixture(
        "DNS-KUBELET-LOOPBACK/kubeadm-1.31-config-dir-resolverconfig",
    );
    assert!(raw.commands.remove("kubelet-version").is_some());
    raw.file(
        "/run/systemd/resolve/resolv.conf",
        FileState::Present,
        Some(b"nameserver 127.0.0.1\n"),
    );
    let facts = NodeFacts::from_raw("node1", &raw);
    let outcome = crate::diagnose::diagnose_host(&Host::new("node1"), &facts)
        .outcomes
        .into_iter()
        .find(|(id, _)| *id == "DNS-KUBELET-LOOPBACK")
        .map(|(_, o)| o);
    let Some(RuleOutcome::Findings(f)) = outcome else {
        panic!("expected a loop, got {outcome:?}");
    };
    assert_eq!(
        (f[0].severity, f[0].status),
        (Severity::Critical, FindingStatus::Failed),
        "{f:?}"
    );
    let summary = &f[0].summary;
    assert!(
        summary.starts_with(
            "whatever this kubelet's version (it is not known): kubelet 1.28 to 1.31: "
        ),
        "{summary}"
    );
    assert!(summary.contains("127.0.0.53"), "{summary}");
    assert!(
        summary.contains("; kubelet 1.32 or later: ") && summary.contains("127.0.0.1"),
        "{summary}"
    );
    // config.yaml's file unreadable: 1.28 to 1.31 still loop, and the evidence says why
    // 1.32 and later could not be judged.
    raw.file(
        "/run/systemd/resolve/resolv.conf",
        FileState::Unreadable,
        None,
    );
    let facts = NodeFacts::from_raw("node1", &raw);
    let outcome = crate::diagnose::diagnose_host(&Host::new("node1"), &facts)
        .outcomes
        .into_iter()
        .find(|(id, _)| *id == "DNS-KUBELET-LOOPBACK")
        .map(|(_, o)| o);
    let Some(RuleOutcome::Findings(f)) = outcome else {
        panic!("expected a loop, got {outcome:?}");
    };
    assert_eq!(f[0].status, FindingStatus::Failed, "{f:?}");
    assert!(
        f[0].summary
            .starts_with("this kubelet may be 1.28 to 1.31 (its version is not known)"),
        "{f:?}"
    );
    assert!(
        f[0].evidence.iter().any(|e| e.starts_with(
            "kubelet 1.32 or later: not judged: cannot tell: /run/systemd/resolve/resolv.conf"
        )),
        "{:?}",
        f[0].evidence
    );
}

/// DNS-KUBELET-LOOPBACK where a drop-in's resolvConf is healthy and config.yaml's is the
/// stub (the `kubeadm-config-dir-dropin-version-unknown` node with the two files swapped):
/// kubelet 1.28 to 1.31 pass the drop-in's resolvConf over and loop on config.yaml's
/// (kubernetes#126630), 1.32 on read it (#127421). With no version known the file is
/// unknown, but 1.28 to 1.31 would loop: a critical loop, naming both settings and the
/// ways out, never a Pass; with the version stated in kube_version, what that version
/// reads. With resolverConfig written beside the drop-in's resolvConf, as
/// kubelet-resolvconf writes it where the version is not known ("set resolverConfig for
/// kubelet 1.28 to 1.31 beside it"), every version reads the healthy file: check passes.
#[test]
fn a_healthy_dropin_resolv_conf_over_a_stub_loops_until_the_version_or_both_spellings_say() {
    let dropin = "/etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf";
    let mut raw = crate::testing::rules_fixture(
        "DNS-KUBELET-LOOPBACK/kubeadm-config-dir-dropin-version-unknown",
    );
    crate::testing::replace_in_file(
        &mut raw,
        "/var/lib/kubelet/config.yaml",
        "resolvConf: /run/systemd/resolve/resolv.conf",
        "resolvConf: /etc/resolv.conf",
    );
    crate::testing::replace_in_file(
        &mut raw,
        dropin,
        "resolvConf: /etc/resolv.conf",
        "resolvConf: /run/systemd/resolve/resolv.conf",
    );
    let loopback = |host: &Host, raw: &crate::facts::raw::RawFacts| {
        let facts = NodeFacts::from_raw("node1", raw);
        crate::diagnose::diagnose_host(host, &facts)
            .outcomes
            .into_iter()
            .find(|(id, _)| *id == "DNS-KUBELET-LOOPBACK")
            .map(|(_, o)| o)
    };
    let mut host = Host::new("node1");
    match loopback(&host, &raw) {
        Some(RuleOutcome::Findings(f)) => {
            assert_eq!(
                (f[0].severity, f[0].status),
                (Severity::Critical, FindingStatus::Failed),
                "{f:?}"
            );
            let why = f[0].evidence.join("\n");
            for part in [
                "the kubelet's version is not known",
                "kubelet 1.28 to 1.31: /var/lib/kubelet/config.yaml:38 resolvConf: /etc/resolv.conf",
                "127.0.0.53",
                "kubelet 1.28 to 1.31 read \"/etc/resolv.conf\" (/var/lib/kubelet/config.yaml:38 resolvConf;",
                "from 1.32 on \"/run/systemd/resolve/resolv.conf\" (/etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf:3 resolvConf;",
                "the inventory's kube_version",
                "set resolvConf and resolverConfig both to the same file in /etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf",
            ] {
                assert!(why.contains(part), "{part}: {why}");
            }
        }
        other => panic!("expected a critical loop, got {other:?}"),
    }
    host.vars
        .insert("kube_version".into(), serde_json::json!("v1.30.4"));
    match loopback(&host, &raw) {
        Some(RuleOutcome::Findings(f)) => assert_eq!(
            (f[0].severity, f[0].status),
            (Severity::Critical, FindingStatus::Failed),
            "{f:?}"
        ),
        other => panic!("expected a critical loop, got {other:?}"),
    }
    host.vars
        .insert("kube_version".into(), serde_json::json!("v1.32.1"));
    assert!(matches!(loopback(&host, &raw), Some(RuleOutcome::Pass)));
    // Both spellings, the version unknown again.
    crate::testing::replace_in_file(
        &mut raw,
        dropin,
        "resolvConf: /run/systemd/resolve/resolv.conf\n",
        "resolvConf: /run/systemd/resolve/resolv.conf\nresolverConfig: /run/systemd/resolve/resolv.conf\n",
    );
    let mut host = Host::new("node1");
    // The fixture's vars.json.
    host.vars.insert(
        "searchdomains".into(),
        serde_json::json!(["example.internal"]),
    );
    let facts = NodeFacts::from_raw("node1", &raw);
    let findings: Vec<_> = crate::diagnose::diagnose_host(&host, &facts)
        .outcomes
        .into_iter()
        .filter(|(_, o)| matches!(o, RuleOutcome::Findings(_)))
        .collect();
    assert!(findings.is_empty(), "{findings:?}");
    assert!(matches!(loopback(&host, &raw), Some(RuleOutcome::Pass)));
}

/// A `{% %}` template among upstream_dns_servers is unrendered like a `{{ }}` one: never
/// passed on as a server's address.
#[test]
fn a_jinja_block_among_upstream_servers_is_no_address() {
    let mut host = Host::new("node1");
    host.vars.insert(
        "upstream_dns_servers".into(),
        serde_json::json!(["{% if corp %}192.0.2.9{% endif %}", "192.0.2.53"]),
    );
    let facts = crate::testing::facts_from(&[]);
    let ctx = Ctx::new(&host, &facts);
    assert_eq!(upstream_dns_servers(&ctx), ["192.0.2.53"]);
    assert_eq!(
        unrendered_upstream_dns_server(&ctx).as_deref(),
        Some("{% if corp %}192.0.2.9{% endif %}")
    );
}

/// On a k3s node whose pod network dnsfix knows only as k3s's default (10.42.0.0/16, which
/// a server may change), a zone with intra-zone forwarding counts where a range bound to
/// it may be the pod network (overlapping the default, or another range: `--cluster-cidr`
/// may have chosen it), not for a single host: every shipped zone has `<forward/>`, and a
/// host allowed into the drop zone is no pod. Zones: firewalld v1.3.4's shipped ones (the
/// DNS-FIREWALLD-PODS-UNTRUSTED fixtures name them).
#[test]
fn a_forwarding_zone_counts_only_where_it_binds_the_pod_network() {
    let drop_with = |source: &str| {
        let drop = include_str!(
            "../../../tests/fixtures/rules/DNS-FIREWALLD-PODS-UNTRUSTED/kubespray-rocky9-pods-in-trusted/root/usr/lib/firewalld/zones/drop.xml"
        );
        drop.replace(
            "<forward/>",
            &format!("<source address=\"{source}\"/>\n  <forward/>"),
        )
    };
    let outcome = |source: &str| {
        let drop = drop_with(source);
        let mut raw = crate::testing::raw_from(&[
            (
                "/etc/systemd/system/k3s.service",
                include_str!(
                    "../../../tests/fixtures/rules/_upstream/k3s-auto-uplink/root/etc/systemd/system/k3s.service"
                ),
            ),
            (
                "/etc/firewalld/firewalld.conf",
                include_str!(
                    "../../../tests/fixtures/rules/DNS-FIREWALLD-PODS-UNTRUSTED/kubespray-rocky9-pods-in-trusted/root/etc/firewalld/firewalld.conf"
                ),
            ),
            (
                "/usr/lib/firewalld/zones/public.xml",
                include_str!(
                    "../../../tests/fixtures/rules/DNS-FIREWALLD-PODS-UNTRUSTED/kubespray-rocky9-pods-in-trusted/root/usr/lib/firewalld/zones/public.xml"
                ),
            ),
            (
                "/usr/lib/firewalld/zones/trusted.xml",
                include_str!(
                    "../../../tests/fixtures/rules/DNS-FIREWALLD-PODS-UNTRUSTED/kubespray-rocky9-pods-in-trusted/root/usr/lib/firewalld/zones/trusted.xml"
                ),
            ),
            ("/etc/firewalld/zones/drop.xml", &drop),
        ]);
        raw.pids.insert("k3s".to_owned(), 812);
        crate::testing::set_units(&mut raw, &[("k3s", "active"), ("firewalld", "active")]);
        let facts = NodeFacts::from_raw("node1", &raw);
        assert_eq!(facts.flavour.kind, FlavourKind::K3s);
        let host = Host::new("node1");
        let ctx = Ctx::in_cluster(&host, &facts, None);
        super::firewalld::firewalld_pods_untrusted(&ctx)
    };
    let status = |o: RuleOutcome| match o {
        RuleOutcome::Findings(f) => (f[0].severity, f[0].status),
        other => panic!("{other:?}"),
    };
    use crate::diagnose::finding::FindingStatus;
    assert_eq!(
        status(outcome("203.0.113.5")),
        (Severity::Warning, FindingStatus::Failed)
    );
    for range in ["10.42.3.0/24", "10.100.0.0/16"] {
        assert_eq!(
            status(outcome(range)),
            (Severity::Warning, FindingStatus::Unknown),
            "{range}"
        );
    }
    assert_eq!(
        status(outcome("198.51.100.7/32")),
        (Severity::Warning, FindingStatus::Failed)
    );
}

/// With NodeLocal DNSCache answering pods (every clusterDNS address on its interface),
/// bridge netfilter off does not touch pod DNS: a warning. Critical again where a
/// clusterDNS server is elsewhere (pods then reach CoreDNS through the Service), and where
/// flannel will not start without br_netfilter.
#[test]
fn bridge_netfilter_off_under_a_node_local_cache_is_a_warning() {
    let base = crate::testing::rules_fixture("DNS-BRIDGE-NF-OFF/nodelocaldns-answers-pods");
    let severity = |raw: &crate::facts::raw::RawFacts| {
        let facts = NodeFacts::from_raw("node1", raw);
        let host = Host::new("node1");
        match bridge_nf_off(&Ctx::in_cluster(&host, &facts, None)) {
            RuleOutcome::Findings(f) => f[0].severity,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(severity(&base), Severity::Warning);
    // A second clusterDNS server, the kube-dns Service, which pods ask when the first
    // does not answer.
    let mut two = base.clone();
    crate::testing::replace_in_file(
        &mut two,
        "/etc/kubernetes/kubelet-config.yaml",
        "- 169.254.25.10\n",
        "- 169.254.25.10\n- 10.233.0.3\n",
    );
    assert_eq!(severity(&two), Severity::Critical);
    // No cache on the node.
    let mut none = base.clone();
    none.commands.remove("nodelocaldns-addr");
    assert_eq!(severity(&none), Severity::Critical);
    // br_netfilter not loaded: flannel v0.26 and later exit at start.
    let mut unloaded = base.clone();
    let modules: String = crate::testing::text(&base, "/proc/modules")
        .lines()
        .filter(|l| !l.starts_with("br_netfilter "))
        .map(|l| format!("{l}\n"))
        .collect();
    unloaded.file(
        "/proc/modules",
        FileState::Present,
        Some(modules.as_bytes()),
    );
    unloaded.file("/proc/sys/net/bridge", FileState::Missing, None);
    for key in ["iptables", "ip6tables", "arptables"] {
        let path = format!("/proc/sys/net/bridge/bridge-nf-call-{key}");
        unloaded.file(&path, FileState::Missing, None);
    }
    assert_eq!(severity(&unloaded), Severity::Critical);
    // Nor with a network plugin dnsfix cannot tell, which may be a flannel.
    let mut unknown = unloaded.clone();
    unknown.file(
        "/etc/cni/net.d/10-flannel.conflist",
        FileState::Missing,
        None,
    );
    assert_eq!(severity(&unknown), Severity::Critical);
    // The upstream manifest's cache holds the kube-dns Service's IP too, clusterDNS: it
    // answers in iptables mode; in IPVS mode IPVS takes the packet to CoreDNS.
    let mut service_ip = base.clone();
    crate::testing::replace_in_file(
        &mut service_ip,
        "/etc/kubernetes/kubelet-config.yaml",
        "- 169.254.25.10\n",
        "- 10.233.0.3\n",
    );
    crate::testing::set_command(
        &mut service_ip,
        "nodelocaldns-addr",
        "6: nodelocaldns    inet 169.254.25.10/32 scope global nodelocaldns\\       valid_lft forever preferred_lft forever\n6: nodelocaldns    inet 10.233.0.3/32 scope global nodelocaldns\\       valid_lft forever preferred_lft forever\n",
        0,
    );
    let in_mode = |mode: &str| {
        let facts = NodeFacts::from_raw("node1", &service_ip);
        let mut host = Host::new("node1");
        host.vars
            .insert("kube_proxy_mode".into(), serde_json::json!(mode));
        match bridge_nf_off(&Ctx::in_cluster(&host, &facts, None)) {
            RuleOutcome::Findings(f) => f[0].severity,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(in_mode("iptables"), Severity::Warning);
    assert_eq!(in_mode("ipvs"), Severity::Critical);
    let mut loaded_unknown = base.clone();
    loaded_unknown.file(
        "/etc/cni/net.d/10-flannel.conflist",
        FileState::Missing,
        None,
    );
    assert_eq!(severity(&loaded_unknown), Severity::Warning);
}

/// DNS-BRIDGE-NF-OFF where dnsfix cannot tell the pods' network: a warning that says what
/// it does not know where it read a plugin of none of its lists (Terway); where it read no
/// plugin at all, Multus whose cluster network it did not find (the thick plugin's file of
/// multus-cni's daemon-config, its clusterNetwork naming a file that is not there, or one
/// not read, or a network by name, which Multus looks up as a NetworkAttachmentDefinition:
/// pkg/k8sclient/k8sclient.go getNetDelegate @95a09323), the critical of a bridged one.
#[test]
fn bridge_netfilter_off_under_a_network_dnsfix_cannot_tell_is_a_warning() {
    let base = crate::testing::rules_fixture("DNS-BRIDGE-NF-OFF/unknown-plugin-terway");
    let summary = |raw: &crate::facts::raw::RawFacts| {
        let f = bridge_nf_off_first(raw);
        (f.severity, f.summary)
    };
    let (severity, text) = summary(&base);
    assert_eq!(severity, Severity::Warning);
    assert!(
        text.contains("the network plugin terway is one dnsfix does not know"),
        "{text}"
    );
    let mut multus = base.clone();
    multus.file(
        "/etc/cni/net.d/00-multus.conf",
        FileState::Present,
        Some(br#"{"capabilities":{"portMappings":true},"cniVersion":"0.3.1","logLevel":"verbose","logToStderr":true,"name":"multus-cni-network","clusterNetwork":"/host/etc/cni/net.d/10-calico.conflist","type":"multus-shim"}"#),
    );
    let (severity, _) = summary(&multus);
    assert_eq!(severity, Severity::Critical);
    let mut unread = multus.clone();
    unread.file(
        "/etc/cni/net.d/10-calico.conflist",
        FileState::Unreadable,
        None,
    );
    assert_eq!(summary(&unread).0, Severity::Critical);
    let mut by_name = multus.clone();
    by_name.file(
        "/etc/cni/net.d/00-multus.conf",
        FileState::Present,
        Some(br#"{"cniVersion":"0.3.1","name":"multus-cni-network","clusterNetwork":"k8s-pod-network","type":"multus-shim"}"#),
    );
    assert_eq!(summary(&by_name).0, Severity::Critical);
}

/// DNS-BRIDGE-NF-NOT-PERSISTENT foretells DNS-BRIDGE-NF-OFF after the reboot: a warning
/// where pods ask NodeLocal DNSCache on the node, still high where flannel will not start
/// then for want of br_netfilter.
#[test]
fn bridge_netfilter_not_persisted_under_a_node_local_cache_is_a_warning() {
    let base = crate::testing::rules_fixture("_upstream/kubespray-v2.24-ubuntu2204-flannel");
    let severity = |raw: &crate::facts::raw::RawFacts| {
        let facts = NodeFacts::from_raw("node1", raw);
        let host = Host::new("node1");
        match bridge_nf_not_persistent(&Ctx::in_cluster(&host, &facts, None)) {
            RuleOutcome::Findings(f) => f[0].severity,
            other => panic!("{other:?}"),
        }
    };
    // A hardening file applied after /etc/sysctl.conf's 99-sysctl.conf link sets 0.
    let mut zero = base.clone();
    zero.file(
        "/etc/sysctl.d/99-zz-hardening.conf",
        FileState::Present,
        Some(b"net.bridge.bridge-nf-call-iptables = 0\n"),
    );
    assert_eq!(severity(&zero), Severity::Warning);
    let mut no_cache = zero.clone();
    no_cache.commands.remove("nodelocaldns-addr");
    assert_eq!(severity(&no_cache), Severity::High);
    // A network plugin dnsfix does not know, which may put pods on no Linux bridge at all:
    // a warning that says so (Terway's file, as DNS-BRIDGE-NF-OFF/unknown-plugin-terway
    // has it), not the high of a bridged network.
    let mut unknown = no_cache.clone();
    unknown.file(
        "/etc/cni/net.d/10-flannel.conflist",
        FileState::Missing,
        None,
    );
    unknown.file(
        "/etc/cni/net.d/10-terway.conf",
        FileState::Present,
        Some(b"{\n  \"cniVersion\": \"0.4.0\",\n  \"name\": \"terway\",\n  \"type\": \"terway\",\n  \"eniip_virtual_type\": \"IPVlan\"\n}\n"),
    );
    assert_eq!(severity(&unknown), Severity::Warning);
    // Nothing loads br_netfilter at boot: flannel will not start after the reboot.
    let mut unlisted = base.clone();
    unlisted.file(
        "/etc/modules-load.d/kubespray-br_netfilter.conf",
        FileState::Missing,
        None,
    );
    assert_eq!(severity(&unlisted), Severity::High);
}

/// DNS-CNI-CONFIG-LEFTOVER judges only by agents it sees: the first file's plugin's agent
/// stopped and none of the later files' running is a plugin down, not a leftover (pass).
#[test]
fn a_cni_file_is_a_leftover_only_where_a_later_plugins_agent_runs() {
    let base =
        crate::testing::rules_fixture("DNS-CNI-CONFIG-LEFTOVER/kubeadm-cilium-left-before-calico");
    let outcome = |raw: &crate::facts::raw::RawFacts| {
        let facts = NodeFacts::from_raw("node1", raw);
        let host = Host::new("node1");
        match super::cni::cni_config_leftover(&Ctx::new(&host, &facts)) {
            RuleOutcome::Findings(f) => Some(f[0].severity),
            RuleOutcome::Pass => None,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(outcome(&base), Some(Severity::Critical));
    let mut neither = base.clone();
    neither.pids.remove("calico-node");
    assert_eq!(outcome(&neither), None);
    // A flannel file first, Calico's after it, calico-node running: a leftover, unless k3s
    // runs (its flannel is inside it).
    // Kubespray's flannel conflist (its cni-flannel.yml.j2 `cni-conf.json`, as the
    // _upstream fixture's README says).
    let flannel_raw = crate::testing::rules_fixture("_upstream/kubespray-v2.24-ubuntu2204-flannel");
    let flannel_text = crate::testing::text(&flannel_raw, "/etc/cni/net.d/10-flannel.conflist");
    let flannel = flannel_text.as_bytes();
    let mut left = base.clone();
    left.files.remove("/etc/cni/net.d/05-cilium.conflist");
    left.order
        .retain(|p| p != "/etc/cni/net.d/05-cilium.conflist");
    left.file(
        "/etc/cni/net.d/00-flannel.conflist",
        crate::facts::raw::FileState::Present,
        Some(flannel),
    );
    assert_eq!(outcome(&left), Some(Severity::Critical));
    // A k3s process does not run flannel for a node k3s does not run (kubeadm's here).
    let mut stray_k3s = left.clone();
    stray_k3s.pids.insert("k3s".into(), 1360);
    assert_eq!(outcome(&stray_k3s), Some(Severity::Critical));

    // Both dead files before Calico's are named, to be moved away together.
    let mut two = base.clone();
    two.file(
        "/etc/cni/net.d/07-flannel.conflist",
        crate::facts::raw::FileState::Present,
        Some(flannel),
    );
    let remedy = |raw: &crate::facts::raw::RawFacts, vars: &[(&str, &str)]| {
        let facts = NodeFacts::from_raw("node1", raw);
        let mut host = Host::new("node1");
        for (k, v) in vars {
            host.vars.insert((*k).into(), serde_json::json!(v));
        }
        match super::cni::cni_config_leftover(&Ctx::new(&host, &facts)) {
            RuleOutcome::Findings(f) => f[0].remediation.clone(),
            other => panic!("{other:?}"),
        }
    };
    let both = remedy(&two, &[]);
    assert!(
        both.contains("move /etc/cni/net.d/05-cilium.conflist and /etc/cni/net.d/07-flannel.conflist out of /etc/cni/net.d"),
        "{both}"
    );
    // Without the inventory's word, both ways; with it, the one it says.
    assert!(both.starts_with("if Cilium is no longer"), "{both}");
    let calico = remedy(&base, &[("kube_network_plugin", "calico")]);
    assert!(
        calico.starts_with("move /etc/cni/net.d/05-cilium.conflist"),
        "{calico}"
    );
    let cilium = remedy(&base, &[("kube_network_plugin", "cilium")]);
    assert!(cilium.starts_with("start Cilium's agent"), "{cilium}");

    // Behind Multus, its cluster network decides: not judged.
    let mut multus = base.clone();
    multus.file(
        "/etc/cni/net.d/00-multus.conf",
        crate::facts::raw::FileState::Present,
        // The thick plugin's file (as src/facts/cni.rs's Multus tests have it), its cluster
        // network the leftover.
        Some(br#"{"capabilities":{"portMappings":true},"cniVersion":"0.3.1","logLevel":"verbose","logToStderr":true,"name":"multus-cni-network","clusterNetwork":"/host/etc/cni/net.d/05-cilium.conflist","type":"multus-shim"}"#),
    );
    let facts = NodeFacts::from_raw("node1", &multus);
    let host = Host::new("node1");
    assert!(
        matches!(
            super::cni::cni_config_leftover(&Ctx::new(&host, &facts)),
            RuleOutcome::NotApplicable(_)
        ),
        "{:?}",
        facts.cni
    );
}

/// On the CRI-O node of DNS-BRIDGE-NF-OFF/crio-default-network-bridge, a drop-in naming the
/// network in a dotted key dnsfix does not read (`network.cni_default_network` under
/// `[crio]`) leaves the first file by name in place, a leftover Cilium file whose agent does
/// not run: whether CRI-O loads it is not known, so DNS-CNI-CONFIG-LEFTOVER is unknown,
/// saying why, not a pass; where CRI-O's network is read, the file is not the one in effect.
#[test]
fn a_crio_network_not_read_leaves_a_leftover_file_unknown() {
    let base = crate::testing::rules_fixture("DNS-BRIDGE-NF-OFF/crio-default-network-bridge");
    let cilium = r#"{"cniVersion":"0.3.1","name":"cilium","plugins":[{"type":"cilium-cni"}]}"#;
    let with_cilium =
        crate::testing::with_files(&base, &[("/etc/cni/net.d/05-cilium.conflist", cilium)]);
    let unread = crate::testing::with_files(
        &with_cilium,
        &[(
            "/etc/crio/crio.conf.d/20-network.conf",
            "[crio]\nnetwork.cni_default_network = \"crio\"\n",
        )],
    );
    let host = Host::new("node1");
    let facts = NodeFacts::from_raw("node1", &unread);
    assert!(facts.cni.runtime_unknown.is_some(), "{:?}", facts.cni);
    let RuleOutcome::Findings(f) = super::cni::cni_config_leftover(&Ctx::new(&host, &facts)) else {
        panic!("unknown expected: {:?}", facts.cni);
    };
    assert_eq!(
        f[0].status,
        crate::diagnose::FindingStatus::Unknown,
        "{f:?}"
    );
    assert!(
        f[0].summary.contains("/etc/cni/net.d/05-cilium.conflist is the first CNI file by name and Cilium's agent does not run on this node, but which CNI network CRI-O gives pods is not known: "),
        "{}",
        f[0].summary
    );
    let facts = NodeFacts::from_raw("node1", &with_cilium);
    assert!(
        !matches!(
            super::cni::cni_config_leftover(&Ctx::new(&host, &facts)),
            RuleOutcome::Findings(_)
        ),
        "{:?}",
        facts.cni
    );
}

/// DNS-BRIDGE-NF-NOT-PERSISTENT on the CRI-O node of
/// DNS-BRIDGE-NF-OFF/crio-default-network-bridge moved from kube-router to CRI-O's own IPv4
/// bridge network: kube-router's file (its daemonset's cni-conf.json, cloudnativelabs/
/// kube-router @7c2c2779 daemonset/kube-router-all-service-daemonset.yaml:10-25, installed
/// as 10-kuberouter.conflist, :95) left behind, cri-o/cri-o @f954a17e
/// contrib/cni/11-crio-ipv4-bridge.conflist (network `crio`) beside it, br_netfilter loaded
/// by hand and in no modules-load.d file. Where CRI-O names `crio` in a form dnsfix does
/// not read, the first file by name, kube-router's, may be a leftover: its agent is not
/// taken as loading br_netfilter at every start, and the finding is unknown, saying why,
/// not a pass. Where CRI-O's setting is read, kube-router's file is passed over: high.
#[test]
fn a_crio_network_not_read_does_not_count_a_leftover_agent_loading_br_netfilter() {
    let base = crate::testing::rules_fixture("DNS-BRIDGE-NF-OFF/crio-default-network-bridge");
    let kube_router = r#"{
   "cniVersion":"0.3.0",
   "name":"mynet",
   "plugins":[
      {
         "name":"kubernetes",
         "type":"bridge",
         "bridge":"kube-bridge",
         "isDefaultGateway":true,
         "ipam":{
            "type":"host-local"
         }
      }
   ]
}
"#;
    let moved = crio_bridge_nf_node(
        &base,
        &[("/etc/cni/net.d/10-kuberouter.conflist", kube_router)],
    );
    let unread = crate::testing::with_files(
        &moved,
        &[(
            "/etc/crio/crio.conf.d/20-network.conf",
            "[crio]\nnetwork.cni_default_network = \"crio\"\n",
        )],
    );
    let host = Host::new("node1");
    let facts = NodeFacts::from_raw("node1", &unread);
    assert!(facts.cni.runtime_unknown.is_some(), "{:?}", facts.cni);
    assert_eq!(
        facts.cni.config.as_deref(),
        Some("/etc/cni/net.d/10-kuberouter.conflist")
    );
    let RuleOutcome::Findings(f) = bridge_nf_not_persistent(&Ctx::new(&host, &facts)) else {
        panic!("unknown expected, not a pass: {:?}", facts.cni);
    };
    assert_eq!(
        f[0].status,
        crate::diagnose::FindingStatus::Unknown,
        "{f:?}"
    );
    for part in [
        "modules-load.d",
        "not so where kube-router is the network CRI-O gives pods (/etc/cni/net.d/10-kuberouter.conflist: kube-router (its kube-bridge) loads br_netfilter",
        "/etc/crio/crio.conf.d/20-network.conf:2 sets cni_default_network in a form dnsfix does not read; /etc/cni/net.d/10-kuberouter.conflist is only the first CNI file by name",
    ] {
        assert!(f[0].summary.contains(part), "{part}: {}", f[0].summary);
    }
    assert!(
        f[0].remediation
            .contains("where kube-router does not run on this node: persist"),
        "{f:?}"
    );
    // CRI-O's `crio` read: kube-router's file is passed over, and nothing loads the module
    // at boot.
    let facts = NodeFacts::from_raw("node1", &moved);
    assert_eq!(
        facts.cni.config.as_deref(),
        Some("/etc/cni/net.d/11-crio-ipv4-bridge.conflist"),
        "{:?}",
        facts.cni
    );
    let RuleOutcome::Findings(f) = bridge_nf_not_persistent(&Ctx::new(&host, &facts)) else {
        panic!("high expected: {:?}", facts.cni);
    };
    assert_eq!(f[0].severity, Severity::High, "{f:?}");
    assert_eq!(f[0].status, crate::diagnose::FindingStatus::Failed, "{f:?}");
}

/// CRI-O's fixture node (DNS-BRIDGE-NF-OFF/crio-default-network-bridge) with `files`
/// beside CRI-O's own bridge network (11-crio-ipv4-bridge.conflist) in /etc/cni/net.d,
/// its other networks gone, br_netfilter loaded and the bridge keys 1 now.
fn crio_bridge_nf_node(
    base: &crate::facts::raw::RawFacts,
    files: &[(&str, &str)],
) -> crate::facts::raw::RawFacts {
    use crate::facts::raw::FileState;
    let mut all = files.to_vec();
    all.extend([
        (
            "/etc/cni/net.d/11-crio-ipv4-bridge.conflist",
            crate::testing::CRIO_IPV4_BRIDGE,
        ),
        (
            "/proc/modules",
            "br_netfilter 32768 0 - Live 0x0000000000000000\nbridge 311296 1 br_netfilter, Live 0x0000000000000000\nvxlan 94208 0 - Live 0x0000000000000000\noverlay 151552 0 - Live 0x0000000000000000\n",
        ),
        ("/proc/sys/net/bridge/bridge-nf-call-iptables", "1\n"),
        ("/proc/sys/net/bridge/bridge-nf-call-ip6tables", "1\n"),
        ("/proc/sys/net/bridge/bridge-nf-call-arptables", "1\n"),
    ]);
    let mut node = crate::testing::with_files(base, &all);
    for gone in [
        "/etc/cni/net.d/10-calico.conflist",
        "/etc/cni/net.d/10-crio-bridge.conflist",
    ] {
        node.file(gone, FileState::Missing, None);
    }
    node
}

/// DNS-BRIDGE-NF-NOT-PERSISTENT where CRI-O names its network in a form dnsfix does not
/// read and the first CNI file is Weave's (weaveworks/weave @8c847638 `weave`
/// create_cni_config(), as in DNS-BRIDGE-NF-NOT-PERSISTENT/weave-module-at-boot-keys-at-default),
/// no weave-npc running, br_netfilter loaded by hand and in no modules-load.d file, and a
/// sysctl.d file setting bridge-nf-call-iptables to 0 while it is 1 now. With Weave counted
/// or not, the finding is high and the fix the same (only the evidence on the sysctl line
/// differs): the finding judged without Weave, not unknown.
#[test]
fn a_crio_network_not_read_leaves_a_finding_the_agent_does_not_change() {
    let base = crate::testing::rules_fixture("DNS-BRIDGE-NF-OFF/crio-default-network-bridge");
    let weave_node = crate::testing::rules_fixture(
        "DNS-BRIDGE-NF-NOT-PERSISTENT/weave-module-at-boot-keys-at-default",
    );
    let weave = String::from_utf8(
        weave_node
            .get("/etc/cni/net.d/10-weave.conflist")
            .expect("Weave's conflist")
            .content
            .to_vec(),
    )
    .expect("text");
    let node = crio_bridge_nf_node(
        &base,
        &[
            ("/etc/cni/net.d/10-weave.conflist", weave.as_str()),
            (
                "/etc/crio/crio.conf.d/20-network.conf",
                "[crio]\nnetwork.cni_default_network = \"crio\"\n",
            ),
            (
                "/etc/sysctl.d/90-off.conf",
                "net.bridge.bridge-nf-call-iptables = 0\n",
            ),
        ],
    );
    let host = Host::new("node1");
    let facts = NodeFacts::from_raw("node1", &node);
    assert!(facts.cni.runtime_unknown.is_some(), "{:?}", facts.cni);
    assert_eq!(
        facts.cni.bridge_nf_agent.as_ref().map(|a| a.name),
        Some("Weave"),
        "{:?}",
        facts.cni
    );
    assert!(!facts.raw.pids.contains_key("weave-npc"));
    let RuleOutcome::Findings(f) = bridge_nf_not_persistent(&Ctx::new(&host, &facts)) else {
        panic!("high expected: {:?}", facts.cni);
    };
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].status, crate::diagnose::FindingStatus::Failed, "{f:?}");
    assert_eq!(f[0].severity, Severity::High, "{f:?}");
    assert!(
        f[0].evidence.iter().any(|e| e.contains("modules-load.d")),
        "{f:?}"
    );
    assert!(
        f[0].evidence.iter().any(|e| e
            == "net.bridge.bridge-nf-call-iptables is 1 now; /etc/sysctl.d/90-off.conf:1 sets it to 0 at boot"),
        "{f:?}"
    );
}

/// kube-proxy's mode is known from its ConfigMap, the inventory or Kubespray's default;
/// on a kubeadm node with neither it is not (DNS-BRIDGE-NF-OFF's NodeLocal DNSCache
/// downgrade then does not count the kube-dns Service's IP).
#[test]
fn kube_proxy_mode_is_known_only_where_something_says_it() {
    let raw = crate::testing::rules_fixture("_healthy/kubeadm-ubuntu2204");
    let facts = NodeFacts::from_raw("node1", &raw);
    let mut host = Host::new("node1");
    assert_eq!(super::kube_proxy_ipvs(&Ctx::new(&host, &facts)).0, None);
    host.vars
        .insert("kube_proxy_mode".into(), serde_json::json!("iptables"));
    assert_eq!(
        super::kube_proxy_ipvs(&Ctx::new(&host, &facts)).0,
        Some(false)
    );
}

/// DNS-KUBELET-RESTART-DUE: while a run holds the node lock, its marks are its own and its
/// restart may still come: unknown, not a run cut off; another run's mark is cut off still.
#[test]
fn a_mark_of_a_run_under_way_is_not_a_run_cut_off() {
    let mut raw = crate::testing::rules_fixture("DNS-KUBELET-RESTART-DUE/kubeadm-apply-cut-off");
    let outcome = |raw: &crate::facts::raw::RawFacts| {
        let facts = NodeFacts::from_raw("node1", raw);
        let host = Host::new("node1");
        super::restart_due::restart_due(&Ctx::new(&host, &facts))
    };
    assert!(matches!(outcome(&raw), RuleOutcome::Findings(_)));
    crate::testing::set_command(&mut raw, "lock-file", "65024 4242\n", 0);
    raw.file(
        "/proc/locks",
        FileState::Present,
        Some(b"1: FLOCK  ADVISORY  WRITE 31338 fe:00:4242 0 EOF\n"),
    );
    // Another run holds the lock: this mark is still a run cut off.
    raw.file(
        "/var/lib/dnsfix/owner",
        FileState::Present,
        Some(b"run 20261130T080000Z-0000 (pid 31337)\n"),
    );
    let status = |outcome: RuleOutcome| match outcome {
        RuleOutcome::Findings(f) => (f[0].status, f[0].summary.clone()),
        other => panic!("{other:?}"),
    };
    assert_eq!(status(outcome(&raw)).0, FindingStatus::Failed);
    raw.file(
        "/var/lib/dnsfix/owner",
        FileState::Present,
        Some(b"run 20261130T021500Z-7f3a (pid 31337)\n"),
    );
    let (unknown, why) = status(outcome(&raw));
    assert_eq!(unknown, FindingStatus::Unknown, "{why}");
    assert!(
        why.contains("holds the node lock now (run 20261130T021500Z-7f3a (pid 31337))"),
        "{why}"
    );
    raw.file("/proc/locks", FileState::Present, Some(b""));
    assert_eq!(status(outcome(&raw)).0, FindingStatus::Failed);
}

/// The fix for a resolver down on Ubuntu's NetworkManager node (10-dns-resolved.conf) says
/// what NetworkManager does with a file of the node's own: with 1.22 (rc-manager unset is
/// symlink before 1.28) it writes nameserver 127.0.0.53 over it, where systemd-resolved
/// does not run; stopped but enabled, it does so from its start at the next boot, which
/// the fix names, as it does for a running one.
#[test]
fn the_resolver_fix_names_what_a_stopped_enabled_network_manager_does_at_boot() {
    use crate::facts::raw::FileState;
    let base = crate::testing::rules_fixture(
        "DNS-HOST-RESOLVER-DOWN/ubuntu2204-networkmanager-resolved-disabled",
    );
    let fix = |raw: &crate::facts::raw::RawFacts| {
        let facts = NodeFacts::from_raw("node1", raw);
        let host = Host::new("node1");
        match host_resolver_down(&Ctx::new(&host, &facts)) {
            RuleOutcome::Findings(f) => f[0].remediation.clone(),
            other => panic!("{other:?}"),
        }
    };
    let mut raw = base.clone();
    raw.file(
        "/usr/lib/x86_64-linux-gnu/NetworkManager/1.22.10",
        FileState::Directory,
        None,
    );
    let old = "writes its local address over /etc/resolv.conf (rc-manager unset: symlink, the default of NetworkManager 1.22.10 (before 1.28)): set dns=none";
    let running = fix(&raw);
    assert!(
        running.contains(&format!("NetworkManager hands DNS to systemd-resolved here (dns=systemd-resolved at /usr/lib/NetworkManager/conf.d/10-dns-resolved.conf:2) and {old}")),
        "{running}"
    );
    crate::testing::set_units(
        &mut raw,
        &[("NetworkManager", "inactive"), ("kubelet", "active")],
    );
    let stopped = fix(&raw);
    assert!(!stopped.contains("NetworkManager"), "{stopped}");
    raw.file(
        crate::facts::raw::NM_UNIT_LINKS[0],
        FileState::Present,
        None,
    );
    let at_boot = fix(&raw);
    assert!(
        at_boot.contains("NetworkManager hands DNS to systemd-resolved here from its start at the next boot (stopped now, enabled)")
            && at_boot.contains(old),
        "{at_boot}"
    );
}

/// Where CoreDNS is not Kubespray's, the fix for a kubelet file that loops CoreDNS names
/// the knob of whoever owns its Corefile, not upstream_dns_servers (which renders nothing
/// there): RKE2's HelmChartConfig, a Helm release's `servers` value (an edit of a chart's
/// ConfigMap is undone by its next deploy), kubeadm's ConfigMap itself. The `servers` list
/// is copied whole: Helm replaces a list value, and "set the forward plugin's parameters in
/// the servers value", followed literally, dropped kubernetes, cache and loop. The ConfigMaps
/// are tests/fixtures/kubectl's, rendered from the charts; the node is kubeadm's
/// ([`crate::testing::kubeadm_ipvs_nodelocal_with_service_in_file`]).
#[test]
fn the_corefile_fix_names_the_knob_of_its_owner() {
    let (facts, mut cluster) = crate::testing::kubeadm_ipvs_nodelocal_with_service_in_file();
    let host = Host::new("node1");
    let mut remedy = |configmaps: Option<&[u8]>| {
        if let (Some(json), crate::cluster::Cluster::Read { config, .. }) =
            (configmaps, &mut cluster)
        {
            // As read: by the pods' volumes, which name either.
            let mounts = [
                "dns-coredns".to_owned(),
                crate::cluster::RKE2_COREDNS.to_owned(),
            ];
            config.corefiles =
                crate::cluster::mounted_corefiles(json, &mounts).expect("configmaps");
        }
        let ctx = Ctx::in_cluster(&host, &facts, Some(&cluster));
        match super::kubelet_file::cluster_self_forward(&ctx) {
            RuleOutcome::Findings(f) => f[0].remediation.clone(),
            other => panic!("{other:?}"),
        }
    };
    let kubeadm = remedy(None);
    assert!(
        kubeadm.starts_with("set `forward .` in the `.:53` block of ConfigMap kube-system/coredns to real servers (kubectl -n kube-system edit configmap coredns)"),
        "{kubeadm}"
    );
    let rke2 = remedy(Some(include_bytes!(
        "../../../tests/fixtures/kubectl/rke2-coredns-configmaps.json"
    )));
    assert!(
        rke2.starts_with("copy the rke2-coredns chart's whole `servers` list (helm get values --all rke2-coredns -n kube-system -o yaml) into a HelmChartConfig named rke2-coredns in kube-system")
            && rke2.contains("change only the `forward` entry's parameters"),
        "{rke2}"
    );
    let helm = remedy(Some(include_bytes!(
        "../../../tests/fixtures/kubectl/helm-coredns-configmaps.json"
    )));
    assert!(
        // `helm upgrade` takes the chart beside the release (helm/helm pkg/cmd/upgrade.go:93-96
        // at e9b85e4d), and the release's own, which `helm list` shows: the ConfigMap's
        // helm.sh/chart label, coredns-1.46.2, is a subchart's where CoreDNS came in as a
        // dependency, and `helm upgrade RELEASE coredns` would replace the umbrella chart.
        helm.starts_with("copy the whole `servers` list of Helm release dns (helm get values --all dns -n kube-system -o yaml > values.yaml), change only the `forward` entry's parameters there, and helm upgrade dns CHART --version VERSION -n kube-system -f values.yaml, with the CHART and VERSION helm list -n kube-system -f '^dns$' shows for the release (the ConfigMap's helm.sh/chart label says coredns 1.46.2:")
            && helm.contains("the release owns ConfigMap kube-system/dns-coredns"),
        "{helm}"
    );
    // The same chart installed with `helm install -n coredns`: the release and its
    // ConfigMap are in `coredns`, which `helm get values` and `helm upgrade` must be told
    // (before, the advice said -n kube-system, where there is no such release).
    let elsewhere = remedy(Some(include_bytes!(
        "../../../tests/fixtures/kubectl/helm-coredns-ns-configmaps.json"
    )));
    assert!(
        elsewhere.starts_with("copy the whole `servers` list of Helm release dns (helm get values --all dns -n coredns -o yaml > values.yaml), change only the `forward` entry's parameters there, and helm upgrade dns CHART --version VERSION -n coredns -f values.yaml, with the CHART and VERSION helm list -n coredns -f '^dns$' shows for the release (the ConfigMap's helm.sh/chart label says coredns 1.46.2:")
            && elsewhere.contains("the release owns ConfigMap coredns/dns-coredns"),
        "{elsewhere}"
    );
    // k3s rewrites its ConfigMap: its knobs are the node's resolv-conf and coredns-custom.
    let k3s_raw =
        crate::testing::rules_fixture("DNS-KUBELET-LOOPBACK/k3s-1.33-kubelet-config-file");
    let k3s_facts = NodeFacts::from_raw("node1", &k3s_raw);
    let mut ctx = Ctx::new(&host, &k3s_facts);
    ctx.coredns_configmap = Some(("coredns".into(), None));
    let k3s = super::coredns_forward_knob(&ctx);
    assert!(
        k3s.starts_with("give k3s a resolv-conf of real servers") && k3s.contains("coredns-custom"),
        "{k3s}"
    );
    // One the addon manager reconciles (AKS's): its owner, not an edit it undoes.
    let mut ctx = Ctx::new(&host, &facts);
    ctx.coredns_configmap = Some(("coredns".into(), None));
    ctx.coredns_owner =
        Some("the addon manager (label addonmanager.kubernetes.io/mode: Reconcile)".into());
    let reconciled = super::coredns_forward_knob(&ctx);
    assert!(
        reconciled.starts_with("set `forward .` where the addon manager (label addonmanager.kubernetes.io/mode: Reconcile) takes ConfigMap kube-system/coredns from")
            && super::coredns_not_kubesprays(&ctx),
        "{reconciled}"
    );
    // The catalog's fix says the same of both charts.
    let catalog = crate::diagnose::catalog::rule("DNS-CLUSTER-SELF-FORWARD").expect("rule");
    assert!(
        catalog.fix.contains("chart's whole `servers` list")
            && catalog.fix.contains("Helm replaces a list value whole"),
        "{}",
        catalog.fix
    );
    for fix in [&kubeadm, &rke2, &helm, &k3s, &reconciled] {
        assert!(!fix.contains("upstream_dns_servers"), "{fix}");
    }
}

/// DNS-BRIDGE-NF-OFF's first finding on the node `raw` describes (panics where it gives
/// none).
fn bridge_nf_off_first(raw: &crate::facts::raw::RawFacts) -> Finding {
    let facts = NodeFacts::from_raw("node1", raw);
    let host = Host::new("node1");
    match bridge_nf_off(&Ctx::new(&host, &facts)) {
        RuleOutcome::Findings(mut f) => f.remove(0),
        other => panic!("{other:?}"),
    }
}

/// DNS-BRIDGE-NF-OFF on the CRI-O node told to use its own bridge network
/// (DNS-BRIDGE-NF-OFF/crio-default-network-bridge) stays critical however the drop-in says
/// so: TOML CRI-O reads (BurntSushi/toml v1.6.0: names in any case) that dnsfix reads, or
/// does not (a dotted key, an inline table, a multi-line string), the drop-in unreadable
/// or cut at the gather's limit: never Calico's first file, never info.
#[test]
fn bridge_netfilter_off_where_crio_picks_a_network_dnsfix_cannot_parse_stays_critical() {
    let base = crate::testing::rules_fixture("DNS-BRIDGE-NF-OFF/crio-default-network-bridge");
    let drop_in = "/etc/crio/crio.conf.d/20-network.conf";
    let judge = |raw: &crate::facts::raw::RawFacts| {
        let f = bridge_nf_off_first(raw);
        (f.severity, f.evidence.join("\n"))
    };
    assert_eq!(judge(&base).0, Severity::Critical);
    for text in [
        "[crio]\nnetwork.cni_default_network = \"crio\"\n",
        "[crio]\nnetwork = { cni_default_network = \"crio\" }\n",
        "[CRIO.NETWORK]\ncni_default_network = \"crio\"\n",
        "[crio.network]\nCNI_DEFAULT_NETWORK = \"crio\"\n",
        "[crio.network]\ncni_default_network = \"\"\"crio\"\"\"\n",
    ] {
        let raw = crate::testing::with_files(&base, &[(drop_in, text)]);
        let (severity, evidence) = judge(&raw);
        assert_eq!(severity, Severity::Critical, "{text}: {evidence}");
        assert!(
            evidence.contains("crio") && !evidence.contains("10-calico"),
            "{text}: {evidence}"
        );
    }
    let mut unread = base.clone();
    unread.file(drop_in, FileState::Unreadable, None);
    let (severity, evidence) = judge(&unread);
    assert_eq!(severity, Severity::Critical);
    assert!(evidence.contains("could not be read"), "{evidence}");
    // The setting past the gather's limit: what was read is the start of the file only.
    let mut cut = crate::testing::with_files(&base, &[(drop_in, "[crio.network]\n")]);
    cut.files.get_mut(drop_in).expect("read").truncated = true;
    let (severity, evidence) = judge(&cut);
    assert_eq!(severity, Severity::Critical);
    assert!(evidence.contains("too large"), "{evidence}");
}

/// DNS-BRIDGE-NF-OFF on the CRI-O node of DNS-BRIDGE-NF-OFF/crio-default-network-bridge
/// whose drop-in also sets `network_dir` elsewhere (cri-o @f954a17e pkg/config/config.go
/// `NetworkDir`, the directory ocicni loads), or whose unit's environment file
/// (contrib/systemd/crio.service: `EnvironmentFile=-/etc/sysconfig/crio`, its
/// `$CRIO_NETWORK_OPTIONS` on the command line) sets options: the network is not known,
/// and the evidence says why, never that CRI-O gives pods no network.
#[test]
fn crio_network_dir_elsewhere_or_command_line_options_leave_the_network_unknown() {
    let base = crate::testing::rules_fixture("DNS-BRIDGE-NF-OFF/crio-default-network-bridge");
    let drop_in = "/etc/crio/crio.conf.d/20-network.conf";
    let evidence = |raw: &crate::facts::raw::RawFacts| {
        let f = bridge_nf_off_first(raw);
        (f.severity, f.evidence.join("\n"))
    };
    let elsewhere = crate::testing::with_files(
        &base,
        &[(
            drop_in,
            "[crio.network]\ncni_default_network = \"k8s\"\nnetwork_dir = \"/etc/kubernetes/cni/net.d/\"\n",
        )],
    );
    let (severity, text) = evidence(&elsewhere);
    assert_eq!(severity, Severity::Critical);
    assert!(
        text.contains("network_dir") && !text.contains("no network"),
        "{text}"
    );
    // CRI-O's default directory, as its template writes it: the setting is read as before.
    let default_dir = crate::testing::with_files(
        &base,
        &[(
            drop_in,
            "[crio.network]\ncni_default_network = \"crio\" # its bridge\nnetwork_dir = \"/etc/cni/net.d/\"\n",
        )],
    );
    let facts = NodeFacts::from_raw("node1", &default_dir);
    assert_eq!(
        facts.cni.config.as_deref(),
        Some("/etc/cni/net.d/10-crio-bridge.conflist")
    );
    let options = crate::testing::with_files(
        &base,
        &[(
            "/etc/sysconfig/crio",
            "# /etc/sysconfig/crio\n#CRIO_NETWORK_OPTIONS=\nCRIO_NETWORK_OPTIONS=\"--cni-default-network=k8s-pod-network\"\n",
        )],
    );
    // The flag names the network as the files' setting does, over it: Calico's, routed.
    let (severity, text) = evidence(&options);
    assert_eq!(severity, Severity::Info, "{text}");
    assert!(
        text.contains("/etc/sysconfig/crio:3 sets CRIO_NETWORK_OPTIONS")
            && text.contains("10-calico"),
        "{text}"
    );
    // The file as CRI-O ships it (contrib/sysconfig/crio @f954a17e): every line a comment.
    let shipped = crate::testing::with_files(
        &base,
        &[(
            "/etc/sysconfig/crio",
            "# /etc/sysconfig/crio\n\n# use \"--enable-metrics\" and \"--metrics-port value\"\n#CRIO_METRICS_OPTIONS=\"--enable-metrics\"\n\n#CRIO_NETWORK_OPTIONS=\n#CRIO_STORAGE_OPTIONS=\n",
        )],
    );
    let facts = NodeFacts::from_raw("node1", &shipped);
    assert_eq!(
        facts.cni.config.as_deref(),
        Some("/etc/cni/net.d/10-crio-bridge.conflist")
    );
}

/// CRI-O's command line overrides its configuration files (cri-o @f954a17e
/// internal/criocli/criocli.go `mergeConfig`: `mergeConfigFiles`, then `mergeNetworkConfig`
/// sets `NetworkDir` where `--cni-config-dir` or CONTAINER_CNI_CONFIG_DIR is set): on the
/// node of DNS-BRIDGE-NF-OFF/crio-default-network-bridge whose drop-in sets `network_dir`
/// elsewhere, a unit passing `--cni-config-dir=/etc/cni/net.d` (or setting the variable so)
/// makes CRI-O read /etc/cni/net.d, and the drop-in's name picks CRI-O's bridge there: no
/// longer unknown. Where the drop-in's name is in a form dnsfix does not read (a dotted key),
/// only the name is unknown, with the flag or where nothing else moves the directory:
/// Calico's file and plugins stand, whether pods sit on a bridge does not.
#[test]
fn crio_s_command_line_cni_config_dir_beats_its_files_network_dir() {
    let base = crate::testing::rules_fixture("DNS-BRIDGE-NF-OFF/crio-default-network-bridge");
    let drop_in = "/etc/crio/crio.conf.d/20-network.conf";
    let elsewhere = "[crio.network]\ncni_default_network = \"crio\"\nnetwork_dir = \"/etc/kubernetes/cni/net.d/\"\n";
    let facts = |network: &str, sysconfig: &str| {
        let raw = crate::testing::with_files(
            &base,
            &[(drop_in, network), ("/etc/sysconfig/crio", sysconfig)],
        );
        NodeFacts::from_raw("node1", &raw).cni
    };
    let files_alone = facts(elsewhere, "# /etc/sysconfig/crio\n");
    assert_eq!(files_alone.config, None, "{files_alone:?}");
    for sysconfig in [
        "CRIO_NETWORK_OPTIONS=\"--cni-config-dir=/etc/cni/net.d\"\n",
        "CONTAINER_CNI_CONFIG_DIR=/etc/cni/net.d/\n",
    ] {
        let cni = facts(elsewhere, sysconfig);
        assert_eq!(
            cni.config.as_deref(),
            Some("/etc/cni/net.d/10-crio-bridge.conflist"),
            "{sysconfig}: {cni:?}"
        );
        assert_eq!(cni.runtime_unknown, None, "{sysconfig}: {cni:?}");
    }
    let dotted = "[crio]\nnetwork.cni_default_network = \"crio\"\nnetwork.network_dir = \"/opt/cni/net.d\"\n";
    let cni = facts(
        dotted,
        "CRIO_NETWORK_OPTIONS=\"--cni-config-dir /etc/cni/net.d\"\n",
    );
    assert_eq!(
        cni.config.as_deref(),
        Some("/etc/cni/net.d/10-calico.conflist"),
        "{cni:?}"
    );
    assert!(
        (cni.runtime_unknown.as_deref())
            .is_some_and(|why| why.starts_with(&format!("{drop_in}:2 sets cni_default_network"))),
        "{cni:?}"
    );
    assert!(
        matches!(&cni.pod_bridge, crate::facts::cni::PodBridge::Unknown(_)),
        "{cni:?}"
    );
    // Without the flag, the dotted network_dir may name another directory: nothing of
    // /etc/cni/net.d stands.
    let cni = facts(dotted, "# /etc/sysconfig/crio\n");
    assert_eq!(cni.config, None, "{cni:?}");
    // The dotted name alone, with no flag: the directory is CRI-O's default, only the name
    // is unknown.
    let cni = facts(
        "[crio]\nnetwork.cni_default_network = \"crio\"\n",
        "# /etc/sysconfig/crio\n",
    );
    assert_eq!(
        cni.config.as_deref(),
        Some("/etc/cni/net.d/10-calico.conflist"),
        "{cni:?}"
    );
    assert!(cni.runtime_unknown.is_some(), "{cni:?}");
    let f = bridge_nf_off_first(&crate::testing::with_files(
        &base,
        &[
            (drop_in, elsewhere),
            (
                "/etc/sysconfig/crio",
                "CONTAINER_CNI_CONFIG_DIR=/etc/cni/net.d/\n",
            ),
        ],
    ));
    assert_eq!(f.severity, Severity::Critical, "{f:?}");
    assert!(
        f.evidence.join("\n").contains("10-crio-bridge"),
        "{:?}",
        f.evidence
    );
}

/// CRI-O's configuration counts only where the kubelet hands pods to CRI-O: the CRI-O
/// node of DNS-BRIDGE-NF-OFF/crio-default-network-bridge with the kubelet's runtime
/// endpoint containerd's again (its kubeadm-flags.env and command line as
/// _upstream/kubeadm-1.29-cilium-no-brnf has them), a CRI-O installed beside it and
/// unused: containerd takes the first file by name, Calico's, whatever CRI-O's
/// cni_default_network says.
#[test]
fn crio_configuration_on_a_containerd_node_picks_no_network() {
    let base = crate::testing::rules_fixture("DNS-BRIDGE-NF-OFF/crio-default-network-bridge");
    let upstream = |path: &str| {
        let file = format!(
            "{}/tests/fixtures/rules/_upstream/kubeadm-1.29-cilium-no-brnf/root{path}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file}: {e}"))
    };
    let flags = "/var/lib/kubelet/kubeadm-flags.env";
    let cmdline = "/proc/1733/cmdline";
    let (env, argv) = (upstream(flags), upstream(cmdline));
    assert!(env.contains("containerd.sock") && argv.contains("containerd.sock"));
    let containerd = crate::testing::with_files(&base, &[(flags, &env), (cmdline, &argv)]);
    let crio = NodeFacts::from_raw("node1", &base);
    assert_eq!(
        crio.cni.config.as_deref(),
        Some("/etc/cni/net.d/10-crio-bridge.conflist")
    );
    let facts = NodeFacts::from_raw("node1", &containerd);
    assert_eq!(
        facts.cni.config.as_deref(),
        Some("/etc/cni/net.d/10-calico.conflist"),
        "{:?}",
        facts.cni
    );
    assert!(matches!(
        facts.cni.pod_bridge,
        crate::facts::cni::PodBridge::Routed(_)
    ));
}

/// Ubuntu 20.04's NetworkManager 1.22 in systemd-resolved's mode writes 127.0.0.53 over a
/// plain /etc/resolv.conf (rc-manager unset: symlink): a conf.d [global-dns] is no fix
/// there (its servers go to systemd-resolved), so the fix names rc-manager=unmanaged. The
/// same holds where NetworkManager is stopped but enabled: the finding says 127.0.0.53 and
/// the version's default then too, not only that the file is written at the next boot.
#[test]
fn networkmanager_writing_resolveds_stub_is_told_to_leave_the_file_alone_running_or_at_boot() {
    use crate::facts::raw::FileState;
    let mut raw = crate::testing::rules_fixture(
        "DNS-RESOLV-MANAGED-ELSEWHERE/ubuntu2004-networkmanager-1.22-plain-file",
    );
    let finding = |raw: &crate::facts::raw::RawFacts| {
        let facts = NodeFacts::from_raw("node1", raw);
        let host = Host::new("node1");
        match super::node_resolver::resolv_managed_elsewhere(&Ctx::new(&host, &facts)) {
            RuleOutcome::Findings(f) => f[0].clone(),
            other => panic!("{other:?}"),
        }
    };
    let check = |f: &crate::diagnose::finding::Finding, when: &str| {
        assert!(
            f.summary.contains("nameserver 127.0.0.53") && f.summary.contains(when),
            "{}",
            f.summary
        );
        assert!(
            f.evidence.iter().any(|e| e.contains(
                "NetworkManager 1.22.10 is older than 1.28, where an unset rc-manager is symlink"
            )),
            "{:?}",
            f.evidence
        );
        assert!(
            f.remediation.starts_with("set rc-manager=unmanaged")
                && f.remediation
                    .contains("[global-dns] servers alone go to systemd-resolved"),
            "{}",
            f.remediation
        );
    };
    check(&finding(&raw), "at its next update");
    crate::testing::set_units(
        &mut raw,
        &[
            ("NetworkManager", "inactive"),
            ("systemd-resolved", "active"),
            ("kubelet", "active"),
        ],
    );
    raw.file(
        crate::facts::raw::NM_UNIT_LINKS[0],
        FileState::Present,
        None,
    );
    let at_boot = finding(&raw);
    check(&at_boot, "at its start at the next boot");
    assert!(
        at_boot
            .remediation
            .contains("systemctl disable NetworkManager"),
        "{}",
        at_boot.remediation
    );
}

/// A stopped, enabled NetworkManager writes /etc/resolv.conf at its next start with its
/// conf.d [global-dns-domain-*] servers: a file that lists them already is how the node
/// will be (info), which dnsfix's own fix (conf.d and the file, host-upstream-dns) makes
/// so; a file with other servers loses them at the reboot (warning).
#[test]
fn a_stopped_network_manager_warns_only_where_the_file_differs_from_what_it_writes() {
    use crate::facts::raw::FileState;
    let mut raw = crate::testing::rules_fixture(
        "DNS-CLUSTER-SELF-FORWARD/networkmanager-stopped-enabled-host-cluster-only",
    );
    let finding = |raw: &crate::facts::raw::RawFacts| match managed_elsewhere(raw, false) {
        RuleOutcome::Findings(f) => f[0].clone(),
        other => panic!("{other:?}"),
    };
    let same = finding(&raw);
    assert_eq!(same.severity, Severity::Info, "{same:?}");
    raw.file(
        "/etc/resolv.conf",
        FileState::Present,
        Some(b"nameserver 192.0.2.53\n"),
    );
    let other = finding(&raw);
    assert_eq!(other.severity, Severity::Warning, "{other:?}");
    assert!(
        other.evidence.iter().any(|e| e
            == "its nameservers (192.0.2.53) are not NetworkManager's global DNS servers, which it writes at its start ([global-dns-domain-*] servers at /etc/NetworkManager/conf.d/dns.conf:2: 169.254.25.10)"),
        "{:?}",
        other.evidence
    );
}

/// A top-level supersede with a loopback server, and an interface block that supersedes it
/// with a real one: the block runs after the top level for its interface (isc-dhcp
/// client/clparse.c make_client_config @572032cb), so on a node whose only DHCP interface is
/// that one dhclient hands on the real server. Which interfaces dhclient serves the gather
/// does not read: the top level's loopback counts only for an interface without a block,
/// unknown rather than a high finding. A block with no blank before its brace is a block.
#[test]
fn a_top_level_dhclient_line_an_interface_block_overrides_is_unknown_not_high() {
    use crate::diagnose::FindingStatus;
    use crate::facts::raw::FileState;
    let raw = crate::testing::rules_fixture(
        "DNS-RESOLV-MANAGED-ELSEWHERE/dhclient-example-prepend-loopback",
    );
    let with = |conf: &str| {
        let mut raw = raw.clone();
        raw.file(
            "/etc/dhcp/dhclient.conf",
            FileState::Present,
            Some(conf.as_bytes()),
        );
        match managed_elsewhere(&raw, false) {
            RuleOutcome::Findings(f) => f[0].clone(),
            other => panic!("{other:?}"),
        }
    };
    for conf in [
        "supersede domain-name-servers 127.0.0.1;\ninterface \"ens5\" { supersede domain-name-servers 192.0.2.53; }\n",
        "supersede domain-name-servers 127.0.0.1;\ninterface\"ens5\"{supersede domain-name-servers 192.0.2.53;}\n",
    ] {
        let f = with(conf);
        assert_eq!(f.status, FindingStatus::Unknown, "{conf:?} {f:?}");
        assert!(
            f.evidence.iter().any(|e| e.starts_with(
                "interface blocks in /etc/dhcp/dhclient.conf give ens5 servers of their own"
            )),
            "{:?}",
            f.evidence
        );
    }
    // A block that itself hands a loopback server on is a finding for its interface.
    let f = with(
        "supersede domain-name-servers 192.0.2.53;\ninterface \"ens5\" { prepend domain-name-servers 127.0.0.1; }\n",
    );
    assert_eq!(
        (f.severity, f.status),
        (Severity::High, FindingStatus::Failed)
    );
}

/// NetworkManager 1.22 does not know rc-manager=auto and falls back to its default,
/// symlink, as for an unset one (nm-dns-manager.c init_resolv_conf_mode): the resolver
/// fix's note says so for an explicit `auto` too, as DNS-RESOLV-MANAGED-ELSEWHERE's does.
#[test]
fn the_resolver_fix_names_the_default_an_explicit_auto_falls_back_to_before_1_28() {
    use crate::facts::raw::FileState;
    let mut raw = crate::testing::rules_fixture(
        "DNS-HOST-RESOLVER-DOWN/ubuntu2204-networkmanager-resolved-disabled",
    );
    raw.file(
        "/usr/lib/x86_64-linux-gnu/NetworkManager/1.22.10",
        FileState::Directory,
        None,
    );
    raw.file(
        "/etc/NetworkManager/conf.d/rc.conf",
        FileState::Present,
        Some(b"[main]\nrc-manager=auto\n"),
    );
    let facts = NodeFacts::from_raw("node1", &raw);
    let host = Host::new("node1");
    let fix = match host_resolver_down(&Ctx::new(&host, &facts)) {
        RuleOutcome::Findings(f) => f[0].remediation.clone(),
        other => panic!("{other:?}"),
    };
    assert!(
        fix.contains("(rc-manager=auto at /etc/NetworkManager/conf.d/rc.conf:2: symlink, the default of NetworkManager 1.22.10 (before 1.28))"),
        "{fix}"
    );
}

/// A CRI-O option that chooses nothing of the network leaves the files' network as it is:
/// the node of DNS-BRIDGE-NF-OFF/crio-default-network-bridge with `cni_default_network = ""`
/// (Calico's routed file first by name) and /etc/sysconfig/crio passing `--log-level=info`
/// and storage options (contrib/systemd/crio.service @f954a17e passes every
/// `$CRIO_*_OPTIONS`) stays info, not critical. An option that does choose the
/// configuration or network (internal/criocli/criocli.go @f954a17e: `--config`, alias `-c`,
/// `--cni-config-dir`), in any of the unit's lists, leaves the bridge unknown, critical,
/// but Calico's plugin list and forwarding stay as the files give them.
#[test]
fn crio_options_that_choose_no_network_keep_the_files_network() {
    let base = crate::testing::rules_fixture("DNS-BRIDGE-NF-OFF/crio-default-network-bridge");
    let first = crate::testing::with_files(
        &base,
        &[(
            "/etc/crio/crio.conf.d/20-network.conf",
            "[crio.network]\ncni_default_network = \"\"\n",
        )],
    );
    let judge = |sysconfig: &str| {
        let raw = crate::testing::with_files(&first, &[("/etc/sysconfig/crio", sysconfig)]);
        let facts = NodeFacts::from_raw("node1", &raw);
        let host = Host::new("node1");
        match bridge_nf_off(&Ctx::new(&host, &facts)) {
            RuleOutcome::Findings(f) => (f[0].severity, f[0].evidence.join("\n"), facts.cni),
            other => panic!("{other:?}"),
        }
    };
    let (severity, evidence, cni) = judge(
        "CRIO_CONFIG_OPTIONS=\"--log-level=info\"\nCRIO_STORAGE_OPTIONS='--storage-driver overlay'\n",
    );
    assert_eq!(severity, Severity::Info, "{evidence}");
    assert_eq!(cni.runtime_unknown, None);
    // A flag dnsfix does not know (a later CRI-O's), written with `=`: read past, and said;
    // not that CRI-O refuses to start.
    let (severity, evidence, cni) =
        judge("CRIO_NETWORK_OPTIONS=\"--some-later-flag=x --log-level info\"\n");
    assert_eq!(severity, Severity::Info, "{evidence}");
    assert_eq!(cni.runtime_unknown, None);
    assert!(
        evidence.contains("flags dnsfix does not know")
            && evidence.contains("--some-later-flag=x")
            && !evidence.contains("refuse"),
        "{evidence}"
    );
    // Go's flag package, which urfave/cli v2 parses with (flag.go `parseOne`): a value
    // flag takes the next word whatever it looks like, so `--cni-config-dir=…` here is
    // `--log-level`'s value and chooses nothing.
    let (severity, evidence, _) =
        judge("CRIO_NETWORK_OPTIONS=\"--log-level --cni-config-dir=/opt/cni/net.d\"\n");
    assert_eq!(severity, Severity::Info, "{evidence}");
    // Flags end at the first word that is none; CRI-O takes that word for a command and
    // does not start (cmd/crio/main.go @f954a17e: `command %q not supported`): not known
    // then, for that reason, not for the flag after it.
    let (severity, evidence, _) =
        judge("CRIO_NETWORK_OPTIONS=\"calico --cni-default-network=crio\"\n");
    assert_eq!(severity, Severity::Critical, "{evidence}");
    assert!(
        evidence.contains("with calico, where CRI-O's flags end"),
        "{evidence}"
    );
    for (sysconfig, word) in [
        (
            "CRIO_RUNTIME_OPTIONS=\"--log-level=info -c /etc/crio/other.conf\"\n",
            "-c",
        ),
        (
            "CRIO_NETWORK_OPTIONS=--cni-config-dir=/opt/cni/net.d\n",
            "--cni-config-dir",
        ),
        (
            "CRIO_METRICS_OPTIONS=\"--config-dir\" \nCRIO_METRICS_OPTIONS=\"--enable-metrics\"\nCRIO_CONFIG_OPTIONS=\"-config=/x.conf\"\n",
            "-config",
        ),
    ] {
        // These may move the directory CRI-O reads: nothing of /etc/cni/net.d stands.
        let (severity, evidence, cni) = judge(sysconfig);
        assert_eq!(severity, Severity::Critical, "{sysconfig}: {evidence}");
        assert!(evidence.contains(word), "{sysconfig}: {evidence}");
        assert!(cni.plugins.is_empty(), "{sysconfig}: {cni:?}");
        assert!(cni.forwards.is_none(), "{sysconfig}: {cni:?}");
        assert!(
            matches!(cni.pod_bridge, crate::facts::cni::PodBridge::Unknown(_)),
            "{cni:?}"
        );
    }
    // `--cni-default-network` names the network, as the files' setting would, over it:
    // CRI-O's bridge, by name.
    let (_, _, cni) = judge("CRIO_NETWORK_OPTIONS=\"--cni-default-network=crio\"\n");
    assert!(cni.runtime_unknown.is_none(), "{cni:?}");
    assert_eq!(
        cni.config.as_deref(),
        Some("/etc/cni/net.d/10-crio-bridge.conflist")
    );
    assert!(cni.forwards.is_some(), "{cni:?}");
}

/// Where CRI-O reads its CNI files from another directory (OpenShift's
/// `network_dir = "/etc/kubernetes/cni/net.d/"`; cri-o @f954a17e docs/crio.conf.5.md
/// `network_dir`, pkg/config/config.go `NetworkDir`), what /etc/cni/net.d holds says nothing
/// of its network: a broken file there is no DNS-CNI-CONFIG-INVALID, and a bridge there with
/// `isGateway` does not set forwarding at every start.
#[test]
fn crio_reading_another_directory_ignores_etc_cni_net_d() {
    let base = crate::testing::rules_fixture("DNS-BRIDGE-NF-OFF/crio-default-network-bridge");
    let elsewhere = (
        "/etc/crio/crio.conf.d/00-default",
        "[crio.network]\nnetwork_dir = \"/etc/kubernetes/cni/net.d/\"\n",
    );
    let broken = crate::testing::with_files(
        &base,
        &[
            elsewhere,
            ("/etc/cni/net.d/10-calico.conflist", "{"),
            ("/etc/cni/net.d/10-crio-bridge.conflist", "{"),
        ],
    );
    let facts = NodeFacts::from_raw("node1", &broken);
    let host = Host::new("node1");
    let outcome = super::cni::cni_config_invalid(&Ctx::new(&host, &facts));
    assert!(matches!(outcome, RuleOutcome::Pass), "{outcome:?}");
    // ip_forward on but persisted by no file: the files' bridge does not vouch for it.
    let unpersisted = crate::testing::with_files(
        &base,
        &[elsewhere, ("/etc/sysctl.d/k8s.conf", "# nothing\n")],
    );
    let facts = NodeFacts::from_raw("node1", &unpersisted);
    let RuleOutcome::Findings(f) = ip_forward(&Ctx::new(&host, &facts)) else {
        panic!("ip_forward passes with CRI-O reading another directory");
    };
    assert!(f[0].summary.contains("not persisted"), "{f:?}");
    // Where CRI-O's unit names the network of /etc/cni/net.d it picks, that network's
    // bridge vouches for forwarding as the files' setting would.
    let by_name = crate::testing::with_files(
        &base,
        &[
            ("/etc/sysctl.d/k8s.conf", "# nothing\n"),
            (
                "/etc/sysconfig/crio",
                "CRIO_NETWORK_OPTIONS=\"--cni-default-network=crio\"\n",
            ),
        ],
    );
    let facts = NodeFacts::from_raw("node1", &by_name);
    let outcome = ip_forward(&Ctx::new(&host, &facts));
    assert!(matches!(outcome, RuleOutcome::Pass), "{outcome:?}");
}

/// `check` and `plan` judge the same facts: n1 and n2 the 1.31 resolverConfig node
/// (DNS-KUBELET-LOOPBACK/kubeadm-1.31-config-dir-resolverconfig) with a v1.32.1 kubelet,
/// which passes the drop-in's resolverConfig over; n3 the same node with no
/// `kubelet --version` and the inventory's kube_version v1.30.4, whose kubelet reads it
/// (the stub: a loop). The version is known for n3 before any rule runs, so the fleet's
/// drift sees n3's resolvConf differ from n1's and n2's, in `check` (diagnose) as in
/// `plan` (which settles the facts first): never the loop alone.
#[test]
fn check_judges_the_fleet_on_facts_read_with_the_known_kubelet_version() {
    let base = crate::testing::rules_fixture(
        "DNS-KUBELET-LOOPBACK/kubeadm-1.31-config-dir-resolverconfig",
    );
    let mut current = base.clone();
    crate::testing::set_command(&mut current, "kubelet-version", "Kubernetes v1.32.1\n", 0);
    let mut unversioned = base.clone();
    assert!(unversioned.commands.remove("kubelet-version").is_some());
    let host = |name: &str| {
        let mut host = Host::new(name);
        host.groups = vec!["all".into(), "k8s_cluster".into(), "kube_node".into()];
        host
    };
    let (n1, n2, mut n3) = (host("n1"), host("n2"), host("n3"));
    n3.vars
        .insert("kube_version".into(), serde_json::json!("v1.30.4"));
    let facts = [
        NodeFacts::from_raw("n1", &current),
        NodeFacts::from_raw("n2", &current),
        NodeFacts::from_raw("n3", &unversioned),
    ];
    let gathered: Vec<(&Host, &NodeFacts)> = [&n1, &n2, &n3].into_iter().zip(&facts).collect();
    let check = crate::diagnose::diagnose(&gathered);
    let drift = check[2]
        .outcomes
        .iter()
        .find(|(id, _)| *id == "DNS-FLEET-DRIFT")
        .map(|(_, o)| o.clone());
    match drift {
        Some(RuleOutcome::Findings(f)) => assert!(
            f.iter().all(|f| f.severity == Severity::Warning) && !f.is_empty(),
            "{f:?}"
        ),
        other => panic!("expected n3's drift, got {other:?}"),
    }
    // The plan's path: the facts settled first, then diagnosed.
    let known = crate::diagnose::settle(&gathered, None);
    let settled: Vec<(&Host, &NodeFacts)> = gathered
        .iter()
        .zip(&known)
        .map(|((h, f), k)| (*h, k.as_ref().unwrap_or(f)))
        .collect();
    assert!(known[2].is_some() && known[0].is_none());
    assert_eq!(
        format!("{:?}", crate::diagnose::diagnose(&settled)),
        format!("{check:?}")
    );
}

/// Where what a stopped, enabled NetworkManager writes at its start cannot be told, the
/// warning stands: with `dns=dnsmasq` it writes its local dnsmasq over the file
/// (NetworkManager @1.40.0 src/core/dns/nm-dns-manager.c `update_dns`: a caching plugin puts
/// its own address, 127.0.0.1, in /etc/resolv.conf), not the servers the file lists.
#[test]
fn a_stopped_network_manager_warns_where_what_it_writes_is_not_known() {
    let base = crate::testing::rules_fixture(
        "DNS-CLUSTER-SELF-FORWARD/networkmanager-stopped-enabled-host-cluster-only",
    );
    let raw = crate::testing::with_files(
        &base,
        &[
            (
                "/etc/NetworkManager/conf.d/dns.conf",
                "[main]\ndns=dnsmasq\n",
            ),
            ("/etc/resolv.conf", "nameserver 192.0.2.1\n"),
        ],
    );
    let RuleOutcome::Findings(f) = managed_elsewhere(&raw, false) else {
        panic!("no finding with dns=dnsmasq");
    };
    assert_eq!(f[0].severity, Severity::Warning, "{f:?}");
    assert!(f[0].summary.contains("next boot"), "{f:?}");
}

/// A kubelet of unknown version whose drop-in gives kubelet 1.28 to 1.31 and 1.32 on two
/// different files: where both are healthy, the rules that read the kubelet's file judge
/// both and pass (the facts keep both readings, each with its file); where one cannot be
/// read, they are unknown, saying which versions read it.
#[test]
fn two_healthy_readings_pass_and_an_unreadable_one_is_unknown_for_its_versions() {
    let dropin = "/etc/kubernetes/kubelet.conf.d/99-resolv-conf.conf";
    let mut raw = crate::testing::rules_fixture(
        "DNS-KUBELET-LOOPBACK/kubeadm-config-dir-dropin-version-unknown",
    );
    crate::testing::replace_in_file(
        &mut raw,
        dropin,
        "resolvConf: /etc/resolv.conf",
        "resolvConf: /etc/kubernetes/resolv.conf",
    );
    let healthy = crate::testing::with_files(
        &raw,
        &[(
            "/etc/kubernetes/resolv.conf",
            "nameserver 192.0.2.53\nsearch example.internal\n",
        )],
    );
    let mut host = Host::new("node1");
    host.vars.insert(
        "searchdomains".into(),
        serde_json::json!(["example.internal"]),
    );
    let facts = NodeFacts::from_raw("node1", &healthy);
    assert!(matches!(facts.kubelet.resolv_conf, Observed::Unknown(_)));
    let by = facts
        .kubelet
        .resolv_conf_by_version
        .as_ref()
        .expect("both readings");
    assert_eq!(by.dropin, dropin);
    let read: Vec<(&str, &str)> = by
        .readings
        .iter()
        .map(|r| (r.versions.as_str(), r.resolv_conf.value.as_str()))
        .collect();
    assert_eq!(
        read,
        [
            ("kubelet 1.28 to 1.31", "/run/systemd/resolve/resolv.conf"),
            ("kubelet 1.32 or later", "/etc/kubernetes/resolv.conf"),
        ]
    );
    let findings: Vec<_> = crate::diagnose::diagnose_host(&host, &facts)
        .findings()
        .cloned()
        .collect();
    assert!(findings.is_empty(), "{findings:?}");
    // The 1.32 reading's file was not gathered: not known, for those versions.
    let facts = NodeFacts::from_raw("node1", &raw);
    let loopback = crate::diagnose::diagnose_host(&host, &facts)
        .outcomes
        .into_iter()
        .find(|(id, _)| *id == "DNS-KUBELET-LOOPBACK")
        .map(|(_, o)| o);
    match loopback {
        Some(RuleOutcome::Findings(f)) => {
            assert_eq!(f[0].status, FindingStatus::Unknown, "{f:?}");
            assert!(
                f[0].summary.starts_with(
                    "this kubelet may be 1.32 or later (its version is not known), and then: cannot tell: /etc/kubernetes/resolv.conf could not be read"
                ),
                "{f:?}"
            );
        }
        other => panic!("expected unknown, got {other:?}"),
    }
}

/// DNS-MACVLAN-NO-MASQUERADE on Kubespray's macvlan node without nodelocaldns: kube-proxy's
/// ConfigMap replaces the inventory's kube_proxy_masquerade_all either way; in nftables
/// mode Kubespray's variable is not rendered where kube-proxy reads it; with no kube-proxy
/// the rule does not judge; off Kubespray with neither known it cannot tell.
#[test]
fn macvlan_masquerade_all_from_the_configmap_else_the_inventory() {
    use crate::cluster::{Cluster, DnsConfig, MasqueradeAll};
    let raw =
        crate::testing::rules_fixture("DNS-MACVLAN-NO-MASQUERADE/kubespray-macvlan-service-dns");
    let facts = NodeFacts::from_raw("node1", &raw);
    let read = |masquerade_all: Option<bool>, mode: &str, configmap: bool| Cluster::Read {
        via: "cp1".into(),
        pods: Vec::new(),
        config: Box::new(DnsConfig {
            kube_proxy_mode: configmap.then(|| mode.to_owned()),
            kube_proxy_configmap: configmap,
            kube_proxy_from: configmap.then(|| "kube-proxy (config.conf)".to_owned()),
            kube_proxy_masquerade_all: masquerade_all.map(|on| MasqueradeAll::Read {
                on,
                key: if mode == "nftables" {
                    "nftables.masqueradeAll"
                } else {
                    "iptables.masqueradeAll"
                }
                .into(),
            }),
            ..DnsConfig::default()
        }),
        kubelets: Default::default(),
    };
    let rule = |host: &Host, facts: &NodeFacts, cluster: Option<&Cluster>| {
        macvlan::macvlan_no_masquerade(&Ctx::in_cluster(host, facts, cluster))
    };
    let one = |outcome: RuleOutcome| match outcome {
        RuleOutcome::Findings(f) if f.len() == 1 => f.into_iter().next().expect("one"),
        other => panic!("expected one finding, got {other:?}"),
    };
    let mut on = Host::new("node1");
    on.vars
        .insert("kube_proxy_masquerade_all".into(), serde_json::json!(true));
    assert_eq!(rule(&on, &facts, None), RuleOutcome::Pass);
    // The ConfigMap says false: the inventory's true was never rolled out.
    let f = one(rule(&on, &facts, Some(&read(Some(false), "ipvs", true))));
    assert_eq!(f.severity, Severity::Critical);
    assert!(
        f.evidence.contains(
            &"ConfigMap kube-system/kube-proxy (config.conf) iptables.masqueradeAll: false"
                .to_owned()
        ),
        "{f:?}"
    );
    // The ConfigMap says true: the inventory's unset (Kubespray's false) does not count.
    let unset = Host::new("node1");
    assert_eq!(
        rule(&unset, &facts, Some(&read(Some(true), "ipvs", true))),
        RuleOutcome::Pass
    );
    // No kube-proxy ConfigMap at all: kube-proxy is not deployed.
    assert!(matches!(
        rule(&unset, &facts, Some(&read(None, "", false))),
        RuleOutcome::NotApplicable(_)
    ));
    // nftables mode: Kubespray renders the variable as iptables.masqueradeAll alone.
    let mut nft = on.clone();
    nft.vars
        .insert("kube_proxy_mode".into(), serde_json::json!("nftables"));
    let f = one(rule(&nft, &facts, None));
    assert_eq!(f.severity, Severity::Critical);
    assert!(
        f.evidence
            .iter()
            .any(|e| e.contains("nftables mode reads nftables.masqueradeAll")),
        "{f:?}"
    );
    // In nftables mode the fix leads with the ConfigMap's own key: Kubespray's variable
    // would not converge there.
    assert!(
        f.remediation.starts_with("kube-proxy runs in nftables mode, which reads nftables.masqueradeAll: kubectl -n kube-system edit configmap kube-proxy, set nftables.masqueradeAll: true in config.conf"),
        "{f:?}"
    );
    let f = one(rule(
        &unset,
        &facts,
        Some(&read(Some(false), "nftables", true)),
    ));
    assert!(
        f.evidence.contains(
            &"ConfigMap kube-system/kube-proxy (config.conf) nftables.masqueradeAll: false"
                .to_owned()
        ),
        "{f:?}"
    );
    assert!(
        f.remediation
            .starts_with("kube-proxy runs in nftables mode"),
        "{f:?}"
    );
    // Elsewhere the rollout that rewrites the ConfigMap without draining comes first.
    let f = one(rule(&unset, &facts, None));
    let setup = f
        .remediation
        .find("ansible-playbook cluster.yml -e upgrade_cluster_setup=true");
    let upgrade = f.remediation.find("upgrade-cluster.yml");
    assert!(setup.is_some() && setup < upgrade, "{f:?}");
    assert!(f.remediation.contains("drains every node"), "{f:?}");
    // Not a Kubespray node, nothing read, no variable: unknown, not a guess.
    let mut kubeadm = facts.clone();
    kubeadm.flavour.kind = FlavourKind::Kubeadm;
    let f = one(rule(&unset, &kubeadm, None));
    assert_eq!(f.status, crate::diagnose::FindingStatus::Unknown);
    assert!(f.summary.contains("masqueradeAll is not known"), "{f:?}");
}

/// A CoreDNS pod of Kubespray's Deployment (`coredns`, or `coredns-secondary` with
/// dns_mode coredns_dual) on `node`, ready or crash-looping.
fn coredns_pod(name: &str, app: &str, node: &str, ready: bool) -> crate::cluster::DnsPod {
    crate::cluster::DnsPod {
        name: name.to_owned(),
        app: app.to_owned(),
        node: node.to_owned(),
        phase: "Running".to_owned(),
        ready,
        restarts: if ready { 0 } else { 7 },
        waiting: (!ready).then(|| "CrashLoopBackOff".to_owned()),
        running: ready,
        terminating: false,
        loop_detected: None,
        logs_read: true,
        logs_unread: None,
        container: None,
        namespace: None,
        selector: None,
        readiness: None,
    }
}

/// The cluster as kubectl on cp1 reads it for the macvlan fixture's node1: `pods`, the
/// kube-dns Service at `service`, kube-proxy's ConfigMap with masqueradeAll false, and
/// node1 among the cluster's nodes where `named`.
fn macvlan_cluster(
    pods: Vec<crate::cluster::DnsPod>,
    service: &str,
    named: bool,
) -> crate::cluster::Cluster {
    let mut kubelets = crate::cluster::Kubelets::new();
    kubelets.insert("node2".into(), "v1.28.10".into());
    if named {
        kubelets.insert("node1".into(), "v1.28.10".into());
    }
    crate::cluster::Cluster::Read {
        via: "cp1".into(),
        pods,
        config: Box::new(crate::cluster::DnsConfig {
            services: Some(vec![crate::cluster::DnsService {
                name: "coredns".into(),
                cluster_ips: vec![service.to_owned()],
                namespace: None,
                selector: None,
            }]),
            // Kubespray's rendering with kube_proxy_masquerade_all unset.
            kube_proxy_mode: Some("ipvs".into()),
            kube_proxy_configmap: true,
            kube_proxy_from: Some("kube-proxy (config.conf)".into()),
            kube_proxy_masquerade_all: Some(crate::cluster::MasqueradeAll::Read {
                on: false,
                key: "iptables.masqueradeAll".into(),
            }),
            ..crate::cluster::DnsConfig::default()
        }),
        kubelets,
    }
}

/// `cluster` with no node listed: kubectl get nodes gave nothing.
fn unlisted_nodes(mut cluster: crate::cluster::Cluster) -> crate::cluster::Cluster {
    if let crate::cluster::Cluster::Read { kubelets, .. } = &mut cluster {
        kubelets.clear();
    }
    cluster
}

/// DNS-MACVLAN-NO-MASQUERADE graded by where CoreDNS runs: critical, naming the pod and its
/// share of the ready endpoints, where a ready CoreDNS pod runs on the node; high where the
/// cluster lists the node and ready CoreDNS only elsewhere (pods resolve now, until one is
/// scheduled here); critical where that is not known (the cluster not read, no CoreDNS pod
/// listed, the node under a name the cluster does not have).
#[test]
fn macvlan_severity_follows_where_coredns_runs() {
    let raw =
        crate::testing::rules_fixture("DNS-MACVLAN-NO-MASQUERADE/kubespray-macvlan-service-dns");
    let facts = NodeFacts::from_raw("node1", &raw);
    let host = Host::new("node1");
    let one = |cluster: Option<&crate::cluster::Cluster>| match macvlan::macvlan_no_masquerade(
        &Ctx::in_cluster(&host, &facts, cluster),
    ) {
        RuleOutcome::Findings(f) if f.len() == 1 => f.into_iter().next().expect("one"),
        other => panic!("expected one finding, got {other:?}"),
    };
    let a = "coredns-776bb9db5d-2xkqv";
    let b = "coredns-776bb9db5d-h8n4z";
    // One of the two ready replicas on node1: half its pods' queries are lost.
    let here = macvlan_cluster(
        vec![
            coredns_pod(a, "coredns", "node1", true),
            coredns_pod(b, "coredns", "node2", true),
        ],
        "10.233.0.3",
        true,
    );
    let f = one(Some(&here));
    assert_eq!(f.severity, Severity::Critical);
    assert!(f.summary.contains(a), "{f:?}");
    assert!(
        f.summary.contains("1 of 2 ready coredns endpoints"),
        "{f:?}"
    );
    assert!(
        f.evidence.contains(&format!(
            "pod kube-system/{a} (coredns) on node node1: ready (kubectl on cp1)"
        )),
        "{f:?}"
    );
    // Both elsewhere: pods here resolve now, and break when one lands here.
    let elsewhere = macvlan_cluster(
        vec![
            coredns_pod(a, "coredns", "node2", true),
            coredns_pod(b, "coredns", "node3", true),
        ],
        "10.233.0.3",
        true,
    );
    let f = one(Some(&elsewhere));
    assert_eq!(f.severity, Severity::High);
    assert!(
        f.summary.contains(&format!(
            "pods on this node resolve now only because no CoreDNS pod runs here ({a} on node2, {b} on node3); one scheduled here (a rollout, a drain, a failure elsewhere) breaks their DNS with no change to this node"
        )),
        "{f:?}"
    );
    // Not known where CoreDNS runs: critical as before, and the evidence says why.
    for (cluster, why) in [
        (None, "the cluster was not read"),
        (
            Some(macvlan_cluster(Vec::new(), "10.233.0.3", true)),
            "the cluster lists none",
        ),
        (
            Some(macvlan_cluster(
                vec![coredns_pod(a, "coredns", "node2", true)],
                "10.233.0.3",
                false,
            )),
            "do not include it under that name",
        ),
        (
            Some(unlisted_nodes(macvlan_cluster(
                vec![coredns_pod(a, "coredns", "node2", true)],
                "10.233.0.3",
                false,
            ))),
            "the cluster's nodes were not read (kubectl on cp1)",
        ),
    ] {
        let f = one(cluster.as_ref());
        assert_eq!(f.severity, Severity::Critical, "{why}");
        assert!(f.evidence.iter().any(|e| e.contains(why)), "{why}: {f:?}");
    }
}

/// DNS-MACVLAN-NO-MASQUERADE where no CoreDNS pod is ready on the node: critical, naming
/// the pod, where one is scheduled there not ready (it takes its share each time it turns
/// ready), and where none is ready anywhere (the first ready here breaks the node); never
/// "no CoreDNS pod runs here" nor "resolve now" there.
#[test]
fn macvlan_coredns_not_ready_here_or_anywhere_is_critical() {
    let raw =
        crate::testing::rules_fixture("DNS-MACVLAN-NO-MASQUERADE/kubespray-macvlan-service-dns");
    let facts = NodeFacts::from_raw("node1", &raw);
    let host = Host::new("node1");
    let one = |cluster: &crate::cluster::Cluster| match macvlan::macvlan_no_masquerade(
        &Ctx::in_cluster(&host, &facts, Some(cluster)),
    ) {
        RuleOutcome::Findings(f) if f.len() == 1 => f.into_iter().next().expect("one"),
        other => panic!("expected one finding, got {other:?}"),
    };
    let a = "coredns-776bb9db5d-2xkqv";
    let b = "coredns-776bb9db5d-h8n4z";
    // A crash-looping replica here is no endpoint now, and one each time it turns ready:
    // critical, naming it, never "no CoreDNS pod runs here". So is one a rollout is
    // starting here (ContainerCreating).
    let mut starting = coredns_pod(b, "coredns", "node1", false);
    starting.phase = "Pending".into();
    starting.restarts = 0;
    starting.waiting = Some("ContainerCreating".into());
    for (pod, state) in [
        (
            coredns_pod(b, "coredns", "node1", false),
            "CrashLoopBackOff, 7 restarts",
        ),
        (starting, "ContainerCreating"),
    ] {
        let down_here = macvlan_cluster(
            vec![coredns_pod(a, "coredns", "node2", true), pod],
            "10.233.0.3",
            true,
        );
        let f = one(&down_here);
        assert_eq!(f.severity, Severity::Critical, "{f:?}");
        assert!(
            f.summary.contains(&format!(
                "CoreDNS {b} ({state}) is scheduled on this node, not ready: each time it turns ready, pods here lose"
            )),
            "{f:?}"
        );
        assert!(!f.summary.contains("no CoreDNS pod runs here"), "{f:?}");
        assert!(
            f.evidence
                .iter()
                .any(|e| e.contains(b) && e.contains("not an endpoint now")),
            "{f:?}"
        );
    }
    // No CoreDNS pod ready anywhere (both crash-looping elsewhere): pods here do not
    // "resolve now"; critical, and the first one ready here breaks the node.
    let none_ready = macvlan_cluster(
        vec![
            coredns_pod(a, "coredns", "node2", false),
            coredns_pod(b, "coredns", "node3", false),
        ],
        "10.233.0.3",
        true,
    );
    let f = one(&none_ready);
    assert_eq!(f.severity, Severity::Critical, "{f:?}");
    assert!(
        f.summary.contains(&format!(
            "no CoreDNS endpoint is ready ({a} on node2: CrashLoopBackOff, 7 restarts, {b} on node3: CrashLoopBackOff, 7 restarts): the first CoreDNS pod ready on this node"
        )),
        "{f:?}"
    );
    assert!(!f.summary.contains("resolve now"), "{f:?}");
}

/// [`macvlan_cluster`] with Kubespray's two CoreDNS Services of dns_mode coredns_dual:
/// coredns-svc.yml.j2 with coredns_ordinal_suffix "" and "-secondary" (coredns_svc_name
/// coredns), at skydns_server and skydns_server_secondary.
fn dual_cluster(pods: Vec<crate::cluster::DnsPod>) -> crate::cluster::Cluster {
    let mut cluster = macvlan_cluster(pods, "10.233.0.3", true);
    if let crate::cluster::Cluster::Read { config, .. } = &mut cluster {
        let services = config.services.as_mut().expect("services");
        services[0].selector = Some("k8s-app=kube-dns".into());
        services.push(crate::cluster::DnsService {
            name: "coredns-secondary".into(),
            cluster_ips: vec!["10.233.0.4".into()],
            namespace: None,
            selector: Some("k8s-app=kube-dns-secondary".into()),
        });
    }
    cluster
}

/// DNS-MACVLAN-NO-MASQUERADE with Kubespray's dns_mode coredns_dual (clusterDNS
/// `[skydns_server, skydns_server_secondary]`, kubelet-config.v1beta1.yaml.j2:55-56
/// @46dbdd39): where only a coredns-secondary pod runs on the node and the primary runs
/// ready elsewhere, pods ask the primary first and lose only their fallback: high, not
/// critical. Critical where a primary pod runs here, is scheduled here not ready, none is
/// ready anywhere, or the secondary is clusterDNS's first server.
#[test]
fn macvlan_only_the_secondary_coredns_here_is_high() {
    let raw =
        crate::testing::rules_fixture("DNS-MACVLAN-NO-MASQUERADE/kubespray-macvlan-service-dns");
    let mut facts = NodeFacts::from_raw("node1", &raw);
    let Observed::Known(dns) = &mut facts.kubelet.cluster_dns else {
        panic!("clusterDNS");
    };
    dns.value = vec!["10.233.0.3".into(), "10.233.0.4".into()];
    let host = Host::new("node1");
    let one = |facts: &NodeFacts, cluster: &crate::cluster::Cluster| {
        match macvlan::macvlan_no_masquerade(&Ctx::in_cluster(&host, facts, Some(cluster))) {
            RuleOutcome::Findings(f) if f.len() == 1 => f.into_iter().next().expect("one"),
            other => panic!("expected one finding, got {other:?}"),
        }
    };
    let s1 = "coredns-secondary-6d4b75cb6d-k2x9p";
    let s2 = "coredns-secondary-6d4b75cb6d-q7m4w";
    let a = "coredns-776bb9db5d-2xkqv";
    let b = "coredns-776bb9db5d-h8n4z";
    let secondaries = || {
        vec![
            coredns_pod(s1, "coredns-secondary", "node1", true),
            coredns_pod(s2, "coredns-secondary", "node2", true),
        ]
    };
    let with = |mut pods: Vec<crate::cluster::DnsPod>| {
        let mut all = secondaries();
        all.append(&mut pods);
        all
    };
    let elsewhere = with(vec![
        coredns_pod(a, "coredns", "node2", true),
        coredns_pod(b, "coredns", "node3", true),
    ]);
    let f = one(&facts, &dual_cluster(elsewhere.clone()));
    assert_eq!(f.severity, Severity::High, "{f:?}");
    assert!(
        f.summary.contains(&format!(
            "only the secondary CoreDNS {s1} runs on this node (1 of 2 ready coredns-secondary endpoints; the primary on {a} on node2, {b} on node3): pods here ask the primary first and resolve through it, but lose their fallback"
        )),
        "{f:?}"
    );
    assert!(
        f.evidence.contains(&format!(
            "pod kube-system/{s1} (coredns-secondary) on node node1: ready (kubectl on cp1)"
        )),
        "{f:?}"
    );
    assert!(
        f.evidence.iter().any(|e| e.ends_with(
            "clusterDNS [10.233.0.3, 10.233.0.4]: pods ask 10.233.0.3, Service kube-system/coredns's address, first (kubectl on cp1)"
        )),
        "{f:?}"
    );
    // The Services not read: Kubespray's skydns_server (the service range's third
    // address) tells the first server is the primary's.
    let mut unread = dual_cluster(elsewhere.clone());
    if let crate::cluster::Cluster::Read { config, .. } = &mut unread {
        config.services = None;
    }
    let f = one(&facts, &unread);
    assert_eq!(f.severity, Severity::High, "{f:?}");
    assert!(
        f.evidence
            .iter()
            .any(|e| e.contains("pods ask 10.233.0.3, skydns_server")),
        "{f:?}"
    );
    // The primary's pod here too, ready: critical as before.
    let f = one(
        &facts,
        &dual_cluster(with(vec![
            coredns_pod(a, "coredns", "node1", true),
            coredns_pod(b, "coredns", "node3", true),
        ])),
    );
    assert_eq!(f.severity, Severity::Critical, "{f:?}");
    assert!(f.summary.contains(a) && f.summary.contains(s1), "{f:?}");
    // Each share names Kubespray's Service of its Deployment (coredns-svc.yml.j2:5).
    assert!(
        f.summary
            .contains("(1 of 2 ready coredns endpoints, 1 of 2 ready coredns-secondary endpoints)"),
        "{f:?}"
    );
    // Scheduled here and crash-looping: each time it turns ready it breaks pods here.
    let f = one(
        &facts,
        &dual_cluster(with(vec![
            coredns_pod(a, "coredns", "node1", false),
            coredns_pod(b, "coredns", "node3", true),
        ])),
    );
    assert_eq!(f.severity, Severity::Critical, "{f:?}");
    assert!(
        f.summary.contains(&format!(
            "CoreDNS {a} (CrashLoopBackOff, 7 restarts) is scheduled on this node"
        )),
        "{f:?}"
    );
    // No primary endpoint ready anywhere: every query falls to the secondary.
    let f = one(
        &facts,
        &dual_cluster(with(vec![coredns_pod(a, "coredns", "node2", false)])),
    );
    assert_eq!(f.severity, Severity::Critical, "{f:?}");
    // The secondary's Service first in clusterDNS: pods ask it first.
    let mut reversed = facts.clone();
    let Observed::Known(dns) = &mut reversed.kubelet.cluster_dns else {
        panic!("clusterDNS");
    };
    dns.value.reverse();
    let f = one(&reversed, &dual_cluster(elsewhere));
    assert_eq!(f.severity, Severity::Critical, "{f:?}");
}

/// DNS-MACVLAN-NO-MASQUERADE where the kubelet's clusterDNS is not a cluster DNS Service
/// (Kubespray's dns_mode manual): pods ask that server directly, not through kube-proxy, so
/// a warning, not critical, whether the Services were read or Kubespray's skydns_server
/// tells the kube-dns Service's address.
#[test]
fn macvlan_cluster_dns_not_a_service_is_a_warning() {
    let raw =
        crate::testing::rules_fixture("DNS-MACVLAN-NO-MASQUERADE/kubespray-macvlan-service-dns");
    let mut facts = NodeFacts::from_raw("node1", &raw);
    let Observed::Known(dns) = &mut facts.kubelet.cluster_dns else {
        panic!("clusterDNS");
    };
    dns.value = vec!["192.0.2.53".into()];
    let mut host = Host::new("node1");
    host.vars.insert("dns_mode".into(), "manual".into());
    host.vars
        .insert("manual_dns_server".into(), "192.0.2.53".into());
    let here = macvlan_cluster(
        vec![coredns_pod(
            "coredns-776bb9db5d-2xkqv",
            "coredns",
            "node1",
            true,
        )],
        "10.233.0.3",
        true,
    );
    for cluster in [None, Some(&here)] {
        let f = match macvlan::macvlan_no_masquerade(&Ctx::in_cluster(&host, &facts, cluster)) {
            RuleOutcome::Findings(f) if f.len() == 1 => f.into_iter().next().expect("one"),
            other => panic!("expected one finding, got {other:?}"),
        };
        assert_eq!(f.severity, Severity::Warning, "{f:?}");
        assert!(
            f.evidence
                .iter()
                .any(|e| e.contains("clusterDNS [192.0.2.53]")
                    && e.contains("pods ask that server directly, not through a Service")),
            "{f:?}"
        );
    }
}

/// DNS-MACVLAN-NO-MASQUERADE where clusterDNS is a CoreDNS Service outside kube-system (the
/// CoreDNS Helm chart in a namespace of its own) while a leftover kube-system/kube-dns
/// Service stays: pods ask CoreDNS through that Service and kube-proxy, so the finding is
/// graded by where CoreDNS runs, not a warning that pods ask the server directly.
#[test]
fn macvlan_cluster_dns_on_a_service_elsewhere_goes_through_kube_proxy() {
    let raw =
        crate::testing::rules_fixture("DNS-MACVLAN-NO-MASQUERADE/kubespray-macvlan-service-dns");
    let facts = NodeFacts::from_raw("node1", &raw);
    let host = Host::new("node1");
    let mut cluster = macvlan_cluster(
        vec![coredns_pod(
            "coredns-776bb9db5d-2xkqv",
            "coredns",
            "node1",
            true,
        )],
        "10.233.0.10",
        true,
    );
    if let crate::cluster::Cluster::Read { config, .. } = &mut cluster {
        config.services_elsewhere = vec![crate::cluster::DnsService {
            name: "dns-coredns".into(),
            cluster_ips: vec!["10.233.0.3".into()],
            namespace: Some("coredns".into()),
            selector: Some("app.kubernetes.io/instance=dns,k8s-app=coredns".into()),
        }];
    }
    let f = match macvlan::macvlan_no_masquerade(&Ctx::in_cluster(&host, &facts, Some(&cluster))) {
        RuleOutcome::Findings(f) if f.len() == 1 => f.into_iter().next().expect("one"),
        other => panic!("expected one finding, got {other:?}"),
    };
    assert_eq!(f.severity, Severity::Critical, "{f:?}");
    assert!(
        f.evidence
            .iter()
            .any(|e| e.contains("holds Service coredns/dns-coredns's address")),
        "{f:?}"
    );
}

/// DNS-MACVLAN-NO-MASQUERADE where kube-proxy's ConfigMap was read and is of an apiVersion
/// dnsfix does not read (v1alpha2 keeps masqueradeAll elsewhere): unknown, naming the
/// ConfigMap, never the inventory's value or Kubespray's default.
#[test]
fn macvlan_configmap_of_another_version_is_unknown() {
    use crate::cluster::{Cluster, DnsConfig, MasqueradeAll};
    let raw =
        crate::testing::rules_fixture("DNS-MACVLAN-NO-MASQUERADE/kubespray-macvlan-service-dns");
    let facts = NodeFacts::from_raw("node1", &raw);
    let mut on = Host::new("node1");
    on.vars
        .insert("kube_proxy_masquerade_all".into(), serde_json::json!(true));
    let unset = Host::new("node1");
    let v1alpha2 = Cluster::Read {
        via: "cp1".into(),
        pods: Vec::new(),
        config: Box::new(DnsConfig {
            kube_proxy_mode: Some("ipvs".into()),
            kube_proxy_configmap: true,
            kube_proxy_from: Some("kube-proxy (config.conf)".into()),
            kube_proxy_masquerade_all: Some(MasqueradeAll::Unread(
                "apiVersion kubeproxy.config.k8s.io/v1alpha2, whose masqueradeAll dnsfix does not read (it reads kubeproxy.config.k8s.io/v1alpha1's)".into(),
            )),
            ..DnsConfig::default()
        }),
        kubelets: Default::default(),
    };
    for host in [&on, &unset] {
        let outcome =
            macvlan::macvlan_no_masquerade(&Ctx::in_cluster(host, &facts, Some(&v1alpha2)));
        let RuleOutcome::Findings(f) = outcome else {
            panic!("expected a finding, got {outcome:?}");
        };
        let f = &f[0];
        assert_eq!(f.status, crate::diagnose::FindingStatus::Unknown, "{f:?}");
        assert!(
            f.summary
                .contains("ConfigMap kube-system/kube-proxy (config.conf): apiVersion kubeproxy.config.k8s.io/v1alpha2"),
            "{f:?}"
        );
    }
}

/// DNS-MACVLAN-NO-MASQUERADE on a CRI-O node whose `cni_default_network` dnsfix cannot read
/// (a dotted key, `network.cni_default_network`), with a leftover macvlan file sorting first
/// (Kubespray's rendered 10-macvlan.conf as 05-macvlan.conf) beside CRI-O's own networks:
/// CRI-O may give pods another network than that first file, so the rule cannot tell, and
/// says why; never a critical on a network pods may not be on.
#[test]
fn macvlan_first_file_under_a_crio_network_dnsfix_cannot_read_is_unknown() {
    let mut raw = crate::testing::rules_fixture("DNS-BRIDGE-NF-OFF/crio-default-network-bridge");
    crate::testing::replace_in_file(
        &mut raw,
        "/etc/crio/crio.conf.d/20-network.conf",
        "[crio.network]\ncni_default_network = \"crio\"",
        "[crio]\nnetwork.cni_default_network = \"crio\"",
    );
    let macvlan =
        crate::testing::rules_fixture("DNS-MACVLAN-NO-MASQUERADE/kubespray-macvlan-service-dns");
    let body = macvlan
        .get("/etc/cni/net.d/10-macvlan.conf")
        .expect("the macvlan file")
        .content
        .clone();
    raw.file(
        "/etc/cni/net.d/05-macvlan.conf",
        FileState::Present,
        Some(&body),
    );
    let facts = NodeFacts::from_raw("node1", &raw);
    assert_eq!(
        facts.cni.config.as_deref(),
        Some("/etc/cni/net.d/05-macvlan.conf"),
        "{:?}",
        facts.cni
    );
    assert!(facts.cni.runtime_unknown.is_some(), "{:?}", facts.cni);
    let mut host = Host::new("node1");
    host.vars
        .insert("kube_proxy_masquerade_all".into(), serde_json::json!(false));
    let outcome = macvlan::macvlan_no_masquerade(&Ctx::in_cluster(&host, &facts, None));
    let RuleOutcome::Findings(f) = outcome else {
        panic!("expected unknown, got {outcome:?}");
    };
    assert_eq!(f[0].status, FindingStatus::Unknown, "{f:?}");
    assert!(
        f[0].summary.contains(
            "but CRI-O may give pods another network: /etc/crio/crio.conf.d/20-network.conf:2"
        ),
        "{f:?}"
    );
}

/// The dhcpcd node of DNS-RESOLV-MANAGED-ELSEWHERE/dhcpcd-9.4-writes-resolv-conf with no
/// dhcpcd running and `files` added: the base of the tests below of the programs that write
/// /etc/resolv.conf themselves (src/facts/resolv_writer.rs).
fn writer_node(files: &[(&str, &str)]) -> crate::facts::raw::RawFacts {
    let mut raw =
        crate::testing::rules_fixture("DNS-RESOLV-MANAGED-ELSEWHERE/dhcpcd-9.4-writes-resolv-conf");
    raw.pids.remove("dhcpcd");
    raw.all_pids.remove("dhcpcd");
    crate::testing::with_files(&raw, files)
}

/// `raw` with a root process `name` of pid `pid` (and its command line, where given).
fn with_process(raw: &mut crate::facts::raw::RawFacts, name: &str, pid: u32, cmdline: &[u8]) {
    raw.pids.insert(name.into(), pid);
    raw.all_pids.entry(name.into()).or_default().push(pid);
    if !cmdline.is_empty() {
        raw.file(
            &format!("/proc/{pid}/cmdline"),
            crate::facts::raw::FileState::Present,
            Some(cmdline),
        );
    }
}

/// The DNS-RESOLV-MANAGED-ELSEWHERE finding of a program writing /etc/resolv.conf, where
/// there is exactly one: its severity, summary and evidence; `None` for a pass.
fn writer_outcome(raw: &crate::facts::raw::RawFacts) -> Option<(Severity, String, Vec<String>)> {
    match managed_elsewhere(raw, false) {
        RuleOutcome::Pass => None,
        RuleOutcome::Findings(f) if f.len() == 1 => {
            Some((f[0].severity, f[0].summary.clone(), f[0].evidence.clone()))
        }
        other => panic!("one finding or none expected: {other:?}"),
    }
}

/// A dhcpcd header without dhcpcd running, a resolvconf program and dhcpcd.conf without
/// openresolv's header or a running client: packages installed, nothing shown to write the
/// file. dhcpcd runs but the file is not its (no header): it hands the servers elsewhere.
#[test]
fn a_program_merely_installed_writes_nothing() {
    let raw = writer_node(&[]);
    assert_eq!(writer_outcome(&raw), None);
    let mut raw = writer_node(&[(
        "/etc/resolv.conf",
        "nameserver 192.0.2.53\nnameserver 198.51.100.53\n",
    )]);
    crate::testing::set_command(&mut raw, "resolvconf-bin", "/usr/sbin/resolvconf\n", 0);
    with_process(&mut raw, "dhcpcd", 612, b"");
    assert_eq!(writer_outcome(&raw), None);
}

/// dhcpcd.conf's `nohook resolv.conf` in an `interface` block keeps dhcpcd from writing the
/// file only for the interfaces the block's pattern matches (src/if-options.c
/// `read_config`, fnmatch; every matching block applies, and `nohook` adds up,
/// `add_environ`): where every interface its header names has one, nothing writes
/// it; another interface's block, or an `ssid` block (only where that network is chosen),
/// leaves the finding.
#[test]
fn dhcpcd_s_nohook_counts_for_the_interfaces_its_block_names() {
    let conf = crate::testing::text(
        &crate::testing::rules_fixture(
            "DNS-RESOLV-MANAGED-ELSEWHERE/dhcpcd-9.4-writes-resolv-conf",
        ),
        "/etc/dhcpcd.conf",
    );
    for (block, writes) in [
        ("interface ens5\nnohook resolv.conf\n", false),
        (
            "interface ens*\nnohook wpa_supplicant, 20-resolv.conf\n",
            false,
        ),
        ("interface eth0\nnohook resolv.conf\n", true),
        ("ssid home\nnohook resolv.conf\n", true),
        ("interface ens5\nnohook 20-resolv.conf.sh\n", true),
        // Every matching block applies: a later one for the same interface without
        // `nohook` leaves the earlier one's in force.
        (
            "interface ens*\nnohook resolv.conf\ninterface ens5\nmetric 100\n",
            false,
        ),
    ] {
        let mut raw = writer_node(&[("/etc/dhcpcd.conf", &format!("{conf}\n{block}"))]);
        with_process(&mut raw, "dhcpcd", 612, b"");
        let found = writer_outcome(&raw);
        assert_eq!(found.is_some(), writes, "{block}: {found:?}");
    }
}

/// dhcpcd's command line counts like its dhcpcd.conf (src/dhcpcd.c `add_options` after
/// `read_config`): `-C`/`--nohook resolv.conf` turns the hook off for every interface, and
/// `-f FILE` reads FILE instead of /etc/dhcpcd.conf (not read: not known, said). dhcpcd 9
/// and later write a title over it (src/dhcpcd.c `setproctitle`): the evidence says its
/// options are not known.
#[test]
fn dhcpcd_s_command_line_counts() {
    let header = "# Generated by dhcpcd from ens5.dhcp\nnameserver 192.0.2.53\n";
    let run = |cmdline: &[u8], files: &[(&str, &str)]| {
        let mut all = vec![("/etc/resolv.conf", header)];
        all.extend_from_slice(files);
        let mut raw = writer_node(&all);
        with_process(&mut raw, "dhcpcd", 612, cmdline);
        writer_outcome(&raw)
    };
    assert_eq!(run(b"/usr/sbin/dhcpcd\0-q\0-C\0resolv.conf\0", &[]), None);
    assert_eq!(
        run(b"dhcpcd\0--nohook\0wpa_supplicant,resolv.conf\0", &[]),
        None
    );
    let other = "/etc/dhcpcd-ens5.conf";
    assert_eq!(
        run(
            b"dhcpcd\0-f\0/etc/dhcpcd-ens5.conf\0",
            &[(other, "nohook resolv.conf\n")]
        ),
        None
    );
    let (_, _, evidence) = run(b"dhcpcd\0-f\0/etc/dhcpcd-ens5.conf\0", &[]).expect("dhcpcd's");
    assert!(
        evidence.contains(
            &"/etc/dhcpcd-ens5.conf (its -f) was not read: whether it turns the resolv.conf hook off is not known".to_owned()
        ),
        "{evidence:?}"
    );
    // Another hook turned off: the file is still dhcpcd's.
    assert!(run(b"dhcpcd\0-C\0ntp.conf\0", &[]).is_some());
    let (_, _, evidence) = run(b"dhcpcd: [manager] [ip4] [ip6]\0\0\0", &[]).expect("dhcpcd's");
    assert!(
        evidence.iter().any(|e| e.starts_with(
            "dhcpcd's command line (pid 612) is its title, dhcpcd: [manager] [ip4] [ip6]: dhcpcd 9 and later write it over"
        )),
        "{evidence:?}"
    );
}

/// dhcpcd and openresolv write their header first: a header below the first line shows
/// lines added since (Kubespray puts its block first), which their next write takes away: a
/// warning. An immutable file none of them can replace: no finding.
#[test]
fn a_header_below_the_first_line_is_an_edit_and_a_locked_file_no_writer_s() {
    let block = "# Ansible entries BEGIN\nnameserver 169.254.25.10\n# Ansible entries END\n";
    let mut raw = writer_node(&[(
        "/etc/resolv.conf",
        &format!("{block}# Generated by resolvconf\n"),
    )]);
    crate::testing::set_command(&mut raw, "resolvconf-bin", "/usr/sbin/resolvconf\n", 0);
    let (severity, summary, evidence) = writer_outcome(&raw).expect("openresolv's");
    assert_eq!(severity, Severity::Warning);
    assert!(
        summary.contains("edited after openresolv wrote it"),
        "{summary}"
    );
    assert!(
        evidence
            .iter()
            .any(|e| e.contains("openresolv's header is on line 4")
                && e.contains("3.17 and later replace such a file only at resolvconf -u")),
        "{evidence:?}"
    );
    let mut locked = raw.clone();
    crate::testing::set_command(
        &mut locked,
        crate::facts::network_manager::RESOLV_CONF_ATTR,
        "----i---------e------- /etc/resolv.conf\n",
        0,
    );
    assert_eq!(writer_outcome(&locked), None);
}

/// openresolv writes /etc/resolv.conf unless /etc/resolvconf.conf turns it off: `resolvconf`
/// or `libc` not yes (resolvconf.in, libc.in @fc721631), or `resolv_conf` naming another
/// file or /dev/null. Its `name_servers` lines are shown.
#[test]
fn openresolv_s_configuration_can_turn_it_off() {
    // openresolv @v3.12.0 resolvconf.conf, with the line below appended.
    let shipped = "# Configuration for resolvconf(8)\n# See resolvconf.conf(5) for details\n\nresolv_conf=/etc/resolv.conf\n# If you run a local name server, you should uncomment the below line and\n# configure your subscribers configuration files below.\n#name_servers=127.0.0.1\n";
    for (line, writes) in [
        ("", true),
        ("name_servers_append=\"192.0.2.53\"\n", true),
        ("resolvconf=NO\n", false),
        ("libc=no\n", false),
        ("resolv_conf=/dev/null\n", false),
        ("resolv_conf=/etc/resolv.conf.openresolv\n", false),
    ] {
        let mut raw = writer_node(&[
            (
                "/etc/resolv.conf",
                "# Generated by resolvconf\nnameserver 192.0.2.53\n",
            ),
            ("/etc/resolvconf.conf", &format!("{shipped}{line}")),
        ]);
        crate::testing::set_command(&mut raw, "resolvconf-bin", "/usr/sbin/resolvconf\n", 0);
        let found = writer_outcome(&raw);
        assert_eq!(found.is_some(), writes, "{line}: {found:?}");
        if line.starts_with("name_servers_append") {
            let (_, _, evidence) = found.expect("a finding");
            assert!(
                evidence
                    .contains(&"/etc/resolvconf.conf:8: name_servers_append=192.0.2.53".to_owned()),
                "{evidence:?}"
            );
        }
    }
}

/// Alpine's /etc/udhcpc/udhcpc.conf (alpinelinux/aports main/busybox/udhcpc.conf
/// @7a06535b), which its default.script sources before writing /etc/resolv.conf.
const ALPINE_UDHCPC_CONF: &str = "# Do not overwrite /etc/resolv.conf\n#RESOLV_CONF=\"no\"\n\n# Use alternative path for resolv.conf\n#RESOLV_CONF=\"/tmp/resolv.conf\"\n\n# Prevent overwriting of resolv.conf on a per-interface basis\n#NO_DNS=\"eth1 wlan1\"\n\n# List of interfaces where DHCP routes are ignored\n#NO_GATEWAY=\"eth1 wlan1\"\n";

/// ifupdown-ng's dhcp executor starts `/sbin/udhcpc -b -R -p /var/run/udhcpc.IF.pid -i IF`
/// (ifupdown-ng executor-scripts/linux/dhcp, its tests' udhcpc_up): no `-s`, so busybox's
/// default script, which Alpine installs as its default.script (aports main/busybox
/// @a3e77d0e): it writes `search` and `nameserver` lines at every lease and renewal that
/// brings servers, unless udhcpc.conf's RESOLV_CONF is `no` or another file, NO_DNS names the
/// interface, or ifupdown passes `peer-dns no` as IF_PEER_DNS; a `dns=` there replaces the
/// lease's servers. Another script (`-s`) writes what it writes: not counted. A line the
/// script never writes is an edit: a warning.
#[test]
fn udhcpc_writes_the_file_through_its_default_script() {
    const CMDLINE: &[u8] = b"/sbin/udhcpc\0-b\0-R\0-p\0/var/run/udhcpc.eth0.pid\0-i\0eth0\0";
    // What default.script's resolvconf() writes for `search example.internal` and two servers.
    const WRITTEN: &str =
        "search example.internal\nnameserver 192.0.2.53\nnameserver 198.51.100.53\n";
    let alpine = |extra: &[(&str, &str)], cmdline: &[u8]| {
        let mut files = vec![
            ("/etc/resolv.conf", WRITTEN),
            ("/etc/udhcpc/udhcpc.conf", ALPINE_UDHCPC_CONF),
            (
                "/etc/network/interfaces",
                "auto lo\niface lo inet loopback\n\nauto eth0\niface eth0 inet dhcp\n",
            ),
        ];
        files.extend_from_slice(extra);
        let mut raw = writer_node(&files);
        with_process(&mut raw, "udhcpc", 2401, cmdline);
        raw
    };
    let (severity, summary, evidence) = writer_outcome(&alpine(&[], CMDLINE)).expect("udhcpc's");
    assert_eq!(severity, Severity::Info);
    assert!(
        summary.starts_with(
            "udhcpc writes /etc/resolv.conf at every lease and renewal that brings DNS servers"
        ),
        "{summary}"
    );
    assert!(
        evidence.contains(&"udhcpc runs (pid 2401, for eth0) with its default script, /usr/share/udhcpc/default.script".to_owned()),
        "{evidence:?}"
    );
    let conf = |line: &str| format!("{ALPINE_UDHCPC_CONF}{line}");
    for (extra, cmdline, writes) in [
        (
            vec![("/etc/udhcpc/udhcpc.conf", conf("RESOLV_CONF=\"no\"\n"))],
            CMDLINE,
            false,
        ),
        (
            vec![(
                "/etc/udhcpc/udhcpc.conf",
                conf("RESOLV_CONF=\"/tmp/resolv.conf\"\n"),
            )],
            CMDLINE,
            false,
        ),
        (
            vec![("/etc/udhcpc/udhcpc.conf", conf("NO_DNS=\"eth0\"\n"))],
            CMDLINE,
            false,
        ),
        (
            vec![("/etc/udhcpc/udhcpc.conf", conf("NO_DNS=\"eth1 wlan1\"\n"))],
            CMDLINE,
            true,
        ),
        (
            vec![(
                "/etc/network/interfaces",
                "auto eth0\niface eth0 inet dhcp\n\tpeer-dns no\n".to_owned(),
            )],
            CMDLINE,
            false,
        ),
        (
            vec![],
            b"udhcpc\0-s\0/etc/udhcpc/mine.script\0-i\0eth0\0".as_slice(),
            false,
        ),
        (
            vec![],
            b"udhcpc\0-s\0/usr/share/udhcpc/default.script\0".as_slice(),
            true,
        ),
    ] {
        let extra: Vec<(&str, &str)> = extra.iter().map(|(p, t)| (*p, t.as_str())).collect();
        let found = writer_outcome(&alpine(&extra, cmdline));
        assert_eq!(found.is_some(), writes, "{extra:?} {cmdline:?}: {found:?}");
    }
    // default.script sources udhcpc.conf after udhcpc set `dns` from the lease: a `dns=`
    // there takes the lease's place, and the fix offers it.
    let own = alpine(
        &[(
            "/etc/udhcpc/udhcpc.conf",
            &conf("dns=\"192.0.2.10 192.0.2.11\"\n"),
        )],
        CMDLINE,
    );
    let (_, _, evidence) = writer_outcome(&own).expect("udhcpc's");
    assert!(
        evidence.contains(&"/etc/udhcpc/udhcpc.conf:12: dns=\"192.0.2.10 192.0.2.11\"".to_owned()),
        "{evidence:?}"
    );
    let fix = crate::facts::resolv_writer::Writer::Udhcpc.fix();
    assert!(
        fix.starts_with(
            "give udhcpc's script the servers in /etc/udhcpc/udhcpc.conf (`dns=\"ADDR ADDR\"`"
        ),
        "{fix}"
    );
    let edited = alpine(
        &[("/etc/resolv.conf", &format!("{WRITTEN}options ndots:2\n"))],
        CMDLINE,
    );
    let (severity, summary, evidence) = writer_outcome(&edited).expect("udhcpc's");
    assert_eq!(severity, Severity::Warning, "{summary}");
    assert!(
        evidence.iter().any(|e| e.starts_with(
            "/etc/resolv.conf:4: options ndots:2 is a line udhcpc's script does not write"
        )),
        "{evidence:?}"
    );
}

/// netconfig's dns-resolver module before sysconfig 0.85 (openSUSE/sysconfig @37ac6c07^
/// scripts/netconfig.d/dns-resolver) wrote /etc/resolv.conf itself, headed with this; its
/// settings' shipped default (config/sysconfig.config-netconfig-dns.in @9d5ff1f8) is
/// NETCONFIG_DNS_POLICY="auto". It writes nothing where the policy is empty, and a file
/// changed since it leaves alone until `netconfig update -f`: info either way.
#[test]
fn netconfig_writes_the_file_unless_its_policy_is_empty() {
    const HEADER: &str = "### /etc/resolv.conf file autogenerated by netconfig!\n#\n# Before you change this file manually, consider to define the\n# static DNS configuration using the following variables in the\n# /etc/sysconfig/network/config file:\n#     NETCONFIG_DNS_STATIC_SEARCHLIST\n#     NETCONFIG_DNS_STATIC_SERVERS\n#     NETCONFIG_DNS_FORWARDER\n# or disable DNS configuration updates via netconfig by setting:\n#     NETCONFIG_DNS_POLICY=''\n#\n# See also the netconfig(8) manual page and other documentation.\n#\n# Note: Manual change of this file disables netconfig too, but\n# may get lost when this file contains comments or empty lines\n# only, the netconfig settings are same with settings in this\n# file and in case of a \"netconfig update -f\" call.\n#\n### Please remove (at least) this line when you modify the file!\n";
    const POLICY: &str = "## Type:        string\n## Default:     \"auto\"\n#\n# Defines the DNS merge policy as documented in netconfig(8) manual page.\n# Set to \"\" to disable DNS configuration.\n#\nNETCONFIG_DNS_POLICY=\"auto\"\n";
    let resolv = format!("{HEADER}nameserver 192.0.2.53\n");
    let raw = writer_node(&[
        ("/etc/resolv.conf", &resolv),
        ("/etc/sysconfig/network/config", POLICY),
    ]);
    let (severity, summary, evidence) = writer_outcome(&raw).expect("netconfig's");
    assert_eq!(severity, Severity::Info);
    assert!(
        summary.starts_with("netconfig wrote /etc/resolv.conf"),
        "{summary}"
    );
    assert!(
        evidence
            .contains(&"/etc/sysconfig/network/config:7: NETCONFIG_DNS_POLICY=\"auto\"".to_owned()),
        "{evidence:?}"
    );
    let off = writer_node(&[
        ("/etc/resolv.conf", &resolv),
        (
            "/etc/sysconfig/network/config",
            &POLICY.replace("NETCONFIG_DNS_POLICY=\"auto\"", "NETCONFIG_DNS_POLICY=''"),
        ),
    ]);
    assert_eq!(writer_outcome(&off), None);
    // No netconfig settings: not a SUSE node any more.
    assert_eq!(
        writer_outcome(&writer_node(&[("/etc/resolv.conf", &resolv)])),
        None
    );
}

/// Since sysconfig 0.85 netconfig writes /run/netconfig/resolv.conf and links
/// /etc/resolv.conf to it (openSUSE/sysconfig @9d5ff1f8 scripts/netconfig.d/dns-resolver.in
/// `dump_resolv_conf`, `write_resolv_conf`; scripts/functions.netconfig
/// `netconfig_check_and_link`), renaming a new file over its own at every update with no
/// checksum: the link shows netconfig, a change in the file goes at its next update (a
/// warning where its header is below the first line), an empty policy turns it off, and a
/// link elsewhere is not netconfig's.
#[test]
fn netconfig_s_link_is_netconfig_s() {
    // dns-resolver.in `dump_resolv_conf` @9d5ff1f8, then the servers.
    const HEADER: &str = "### /etc/resolv.conf is a symlink to /run/netconfig/resolv.conf\n### autogenerated by netconfig!\n#\n# Before you change this file manually, consider to define the\n# static DNS configuration using the following variables in the\n# /etc/sysconfig/network/config file:\n#     NETCONFIG_DNS_STATIC_SEARCHLIST\n#     NETCONFIG_DNS_STATIC_SERVERS\n#     NETCONFIG_DNS_FORWARDER\n# or disable DNS configuration updates via netconfig by setting:\n#     NETCONFIG_DNS_POLICY=''\n#\n# See also the netconfig(8) manual page and other documentation.\n#\n";
    let linked = |resolv: &str, policy: &str, target: &str| {
        let mut raw = writer_node(&[
            ("/etc/resolv.conf", resolv),
            (
                "/etc/sysconfig/network/config",
                &format!("NETCONFIG_DNS_POLICY=\"{policy}\"\n"),
            ),
        ]);
        let file = raw.files.get_mut("/etc/resolv.conf").expect("file");
        file.symlink_target = Some(target.into());
        file.canonical = Some(target.into());
        raw
    };
    let resolv = format!("{HEADER}nameserver 192.0.2.53\n");
    let (severity, summary, evidence) =
        writer_outcome(&linked(&resolv, "auto", "/run/netconfig/resolv.conf"))
            .expect("netconfig's");
    assert_eq!(severity, Severity::Info);
    assert!(
        summary.starts_with("netconfig writes /etc/resolv.conf at every netconfig update"),
        "{summary}"
    );
    assert!(
        evidence.contains(
            &"/etc/resolv.conf links to /run/netconfig/resolv.conf (netconfig's link)".to_owned()
        ) && !evidence.iter().any(|e| e.contains("regular file")),
        "{evidence:?}"
    );
    let block = "# Ansible entries BEGIN\nnameserver 169.254.25.10\n# Ansible entries END\n";
    let edited = linked(
        &format!("{block}{resolv}"),
        "auto",
        "/run/netconfig/resolv.conf",
    );
    let (severity, summary, _) = writer_outcome(&edited).expect("netconfig's");
    assert_eq!(severity, Severity::Warning, "{summary}");
    assert_eq!(
        writer_outcome(&linked(&resolv, "", "/run/netconfig/resolv.conf")),
        None
    );
    assert_eq!(
        writer_outcome(&linked(&resolv, "auto", "/run/resolvconf/resolv.conf")),
        None
    );
}

/// Where dhcpcd writes the plain /etc/resolv.conf that lists only the cluster's address
/// (DNS-CLUSTER-SELF-FORWARD/host-resolver-cluster-only-dhcpcd), the fix names where dhcpcd
/// takes servers: written into the file, they go at its next lease.
#[test]
fn a_self_forwarding_host_resolver_a_program_writes_names_where_it_takes_servers() {
    let raw =
        crate::testing::rules_fixture("DNS-CLUSTER-SELF-FORWARD/host-resolver-cluster-only-dhcpcd");
    let facts = NodeFacts::from_raw("node1", &raw);
    let host = Host::new("node1");
    let diagnosis = crate::diagnose::diagnose_host(&host, &facts);
    let finding = diagnosis
        .findings()
        .find(|f| f.id == "DNS-CLUSTER-SELF-FORWARD")
        .expect("DNS-CLUSTER-SELF-FORWARD");
    assert!(
        finding.remediation.contains(
            "; dhcpcd writes this /etc/resolv.conf anew, so give it the servers there instead: give dhcpcd the servers in /etc/dhcpcd.conf (`static domain_name_servers=ADDR ADDR`"
        ),
        "{}",
        finding.remediation
    );
}

/// The findings of DNS-IP-FORWARD on `raw`, as node1 of no inventory.
fn forward_findings(raw: &crate::facts::raw::RawFacts) -> Vec<crate::diagnose::Finding> {
    let facts = NodeFacts::from_raw("node1", raw);
    match ip_forward(&Ctx::new(&Host::new("node1"), &facts)) {
        RuleOutcome::Findings(f) => f,
        _ => Vec::new(),
    }
}

/// `net.ipv4.conf.default.forwarding = 0` after the line that turns forwarding on leaves
/// every interface made after the boot with forwarding off (devinet.c
/// `inetdev_init`): flannel's cni0, which the bridge plugin makes and never turns on
/// (fixture `DNS-IP-FORWARD/default-forwarding-off-after-reboot`). High while cni0
/// forwards now, critical where it does not; the plan turns default on and edits the
/// later line. Before it, or with cni0's own line, it is no finding.
#[test]
fn default_forwarding_off_after_forwarding_on_breaks_the_pods_bridge() {
    use crate::facts::raw::FileState;
    let base = crate::testing::rules_fixture("DNS-IP-FORWARD/default-forwarding-off-after-reboot");
    let f = forward_findings(&base);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].severity, Severity::High, "{f:?}");
    assert!(f[0].summary.contains("cni0"), "{f:?}");
    let facts = NodeFacts::from_raw("node1", &base);
    let keys = super::kernel::forwarding_keys(&Ctx::new(&Host::new("node1"), &facts));
    assert!(
        keys.contains(&"net.ipv4.conf.default.forwarding"),
        "{keys:?}"
    );
    // cni0 off now: pods reach nothing off the node.
    let mut now = base.clone();
    now.file(
        "/proc/sys/net/ipv4/conf/cni0/forwarding",
        FileState::Present,
        Some(b"0\n"),
    );
    let f = forward_findings(&now);
    assert_eq!(f[0].severity, Severity::Critical, "{f:?}");
    assert!(
        f[0].evidence
            .iter()
            .any(|e| e == "/proc/sys/net/ipv4/conf/cni0/forwarding: 0"),
        "{f:?}"
    );
    assert!(
        f[0].remediation
            .contains("sysctl -w net.ipv4.conf.cni0.forwarding=1 now"),
        "{f:?}"
    );
    // Applied before the line that turns forwarding on, it is undone by it.
    let before = crate::testing::with_files(
        &base,
        &[(
            "/etc/sysctl.d/10-hardening.conf",
            "net.ipv4.conf.default.forwarding = 0\n",
        )],
    );
    let mut before = before;
    before.file(
        "/etc/sysctl.d/99-zz-hardening.conf",
        FileState::Missing,
        None,
    );
    assert!(forward_findings(&before).is_empty());
    // The bridge's own line, which systemd's udev rule applies as cni0 appears, wins
    // over the default on a node systemd boots.
    let mut own = crate::testing::with_files(
        &base,
        &[(
            "/etc/sysctl.d/90-cni0.conf",
            "net.ipv4.conf.cni0.forwarding = 1\n",
        )],
    );
    own.file("/run/systemd/system", FileState::Directory, None);
    assert!(
        forward_findings(&own).is_empty(),
        "{:?}",
        forward_findings(&own)
    );
}

/// A glob of every interface's forwarding, sorted before ip_forward = 1: the boot ends
/// with forwarding on everywhere, but systemd's udev rule (99-systemd.rules) applies the
/// glob to each interface as it appears, cni0 too (systemd-sysctl --prefix): high on a
/// node systemd boots, the evidence naming the glob and the versions that expand it; no
/// finding where no udev rule runs.
#[test]
fn a_forwarding_glob_before_ip_forward_still_hits_the_pods_bridge() {
    use crate::facts::raw::FileState;
    let mut raw =
        crate::testing::rules_fixture("DNS-IP-FORWARD/default-forwarding-off-after-reboot");
    raw.file(
        "/etc/sysctl.d/99-zz-hardening.conf",
        FileState::Missing,
        None,
    );
    let mut raw = crate::testing::with_files(
        &raw,
        &[(
            "/etc/sysctl.d/10-router-off.conf",
            "net.ipv4.conf.*.forwarding = 0\n",
        )],
    );
    assert!(forward_findings(&raw).is_empty(), "no udev rule runs");
    raw.file("/run/systemd/system", FileState::Directory, None);
    let f = forward_findings(&raw);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].severity, Severity::High, "{f:?}");
    assert!(
        f[0].evidence[0].starts_with("/etc/sysctl.d/10-router-off.conf:1 sets net.ipv4.conf.*.forwarding = 0 (a glob that matches net.ipv4.conf.cni0.forwarding; systemd-sysctl expands a glob from systemd 245"),
        "{f:?}"
    );
    assert!(f[0].evidence[0].contains("systemd's udev rule"), "{f:?}");
    let facts = NodeFacts::from_raw("node1", &raw);
    let host = Host::new("node1");
    let ctx = Ctx::new(&host, &facts);
    let notes = super::forwarding_notes(&ctx);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("or add a line net.ipv4.conf.cni0.forwarding = 1"),
        "{notes:?}"
    );
    // The default is on at the end of the boot: nothing for the playbook to set.
    assert!(!super::kernel::forwarding_keys(&ctx).contains(&"net.ipv4.conf.default.forwarding"));
}

/// Who the default's 0 breaks is the network plugin's affair: ptp's veths are the pods'
/// gateway and nobody turns them on (high, critical while the default is 0 now: every pod
/// added since has one); Calico turns each pod's interface on itself, not its tunnel
/// devices (warning); a plugin dnsfix does not know, a warning.
#[test]
fn the_default_forwarding_finding_is_as_bad_as_the_plugin_makes_it() {
    use crate::facts::raw::FileState;
    let mut base =
        crate::testing::rules_fixture("DNS-IP-FORWARD/default-forwarding-off-after-reboot");
    base.file(
        "/etc/cni/net.d/10-flannel.conflist",
        FileState::Missing,
        None,
    );
    base.file(
        "/proc/sys/net/ipv4/conf/cni0/forwarding",
        FileState::Missing,
        None,
    );
    let with = |name: &str, conf: &str| crate::testing::with_files(&base, &[(name, conf)]);
    // containernetworking/plugins's ptp conflist as kindnet writes it.
    let ptp = with(
        "/etc/cni/net.d/10-kindnet.conflist",
        r#"{"cniVersion":"0.3.1","name":"kindnet","plugins":[{"type":"ptp","ipMasq":false,"ipam":{"type":"host-local","ranges":[[{"subnet":"10.244.0.0/24"}]]}},{"type":"portmap","capabilities":{"portMappings":true}}]}"#,
    );
    let f = forward_findings(&ptp);
    assert_eq!(f[0].severity, Severity::High, "{f:?}");
    assert!(f[0].summary.contains("each pod's veth"), "{f:?}");
    let mut ptp_now = ptp.clone();
    ptp_now.file(
        "/proc/sys/net/ipv4/conf/default/forwarding",
        FileState::Present,
        Some(b"0\n"),
    );
    assert_eq!(forward_findings(&ptp_now)[0].severity, Severity::Critical);
    let calico = with(
        "/etc/cni/net.d/10-calico.conflist",
        r#"{"name":"k8s-pod-network","cniVersion":"1.0.0","plugins":[{"type":"calico"}]}"#,
    );
    let f = forward_findings(&calico);
    assert_eq!(f[0].severity, Severity::Warning, "{f:?}");
    assert!(f[0].summary.contains("tunl0, vxlan.calico"), "{f:?}");
    let f = forward_findings(&base);
    assert_eq!(f[0].severity, Severity::Warning, "{f:?}");
    assert!(f[0].summary.contains("which dnsfix does not know"), "{f:?}");
}

/// The Ubuntu node of `dhclient-enter-hook-nodnsupdate` (dhclient's `prepend` of 127.0.0.1,
/// and the usual enter hook whose make_resolv_conf does nothing) with its hook changed as
/// `hook` says, at `name` in /etc/dhcp/dhclient-enter-hooks.d: DNS-RESOLV-MANAGED-ELSEWHERE
/// for /etc/dhcp/dhclient.conf.
fn hooked(name: &str, hook: Option<&[u8]>) -> Finding {
    use crate::facts::raw::FileState;
    let mut raw = crate::testing::rules_fixture(
        "DNS-RESOLV-MANAGED-ELSEWHERE/dhclient-enter-hook-nodnsupdate",
    );
    let dir = "/etc/dhcp/dhclient-enter-hooks.d";
    let fixture = format!("{dir}/nodnsupdate");
    let text = raw.get(&fixture).expect("the hook").content.to_vec();
    raw.files.remove(&fixture);
    let path = format!("{dir}/{name}");
    raw.file(&path, FileState::Present, Some(hook.unwrap_or(&text)));
    let found = managed_findings(&raw, false);
    finding_at(&found, "/etc/dhcp/dhclient.conf:5:", "the prepend line").clone()
}

/// An enter hook whose make_resolv_conf does nothing, sourced as Debian's dhclient-script
/// sources them (pexip/os-isc-dhcp @29a44578 debian/dhclient-script.linux `run_hookdir`:
/// what `run-parts --list` prints), keeps dhclient-script from writing /etc/resolv.conf: the
/// line is latent, and the evidence names the hook's line. A name run-parts passes over
/// (a dot in it: debianutils run-parts.c `^[a-zA-Z0-9_-]+$`) counts for nothing, and says so.
#[test]
fn a_do_nothing_enter_hook_makes_a_dhclient_line_latent_where_it_is_sourced() {
    let f = hooked("nodnsupdate", None);
    assert_eq!(
        (f.severity, f.status),
        (Severity::Info, FindingStatus::Failed),
        "{f:?}"
    );
    assert!(
        f.evidence.contains(&"/etc/dhcp/dhclient-enter-hooks.d/nodnsupdate:2 redefines make_resolv_conf to do nothing: dhclient-script does not write /etc/resolv.conf".to_owned()),
        "{f:?}"
    );
    let f = hooked("nodnsupdate.sh", None);
    assert_eq!(
        (f.severity, f.status),
        (Severity::High, FindingStatus::Failed),
        "{f:?}"
    );
    assert!(
        f.evidence.contains(&"/etc/dhcp/dhclient-enter-hooks.d/nodnsupdate.sh is not sourced: dhclient-script sources what run-parts --list prints, names of letters, digits, _ and - alone".to_owned()),
        "{f:?}"
    );
}

/// A hook that redefines make_resolv_conf to do something else, or to do nothing only
/// under a condition, or with a body sh refuses: what dhclient-script writes is not known,
/// and the finding says so, naming the hook's line. A later hook (in run-parts' order)
/// replaces an earlier one's definition.
#[test]
fn an_enter_hook_that_redefines_make_resolv_conf_otherwise_leaves_it_unknown() {
    for (hook, says) in [
        (
            &b"make_resolv_conf() {\n  cp /etc/resolv.conf.mine /etc/resolv.conf\n}\n"[..],
            "/etc/dhcp/dhclient-enter-hooks.d/zz-mine:1 redefines make_resolv_conf: what it writes is not known",
        ),
        (
            b"if [ \"$interface\" = ens6 ]; then\n  make_resolv_conf() { :; }\nfi\n",
            "/etc/dhcp/dhclient-enter-hooks.d/zz-mine:2 redefines make_resolv_conf to do nothing, but inside a compound command",
        ),
        (
            b"make_resolv_conf() { }\n",
            "/etc/dhcp/dhclient-enter-hooks.d/zz-mine:1 defines make_resolv_conf with an empty body, which sh refuses",
        ),
    ] {
        let f = hooked("zz-mine", Some(hook));
        assert_eq!(f.status, FindingStatus::Unknown, "{f:?}");
        assert!(
            f.evidence.iter().any(|e| e.starts_with(says)),
            "{says}: {f:?}"
        );
    }
    // Sourced before the do-nothing one (nodnsupdate sorts after 00-mine): replaced by it.
    let mut raw = crate::testing::rules_fixture(
        "DNS-RESOLV-MANAGED-ELSEWHERE/dhclient-enter-hook-nodnsupdate",
    );
    raw.file(
        "/etc/dhcp/dhclient-enter-hooks.d/00-mine",
        crate::facts::raw::FileState::Present,
        Some(b"make_resolv_conf() {\n  echo nameserver 192.0.2.53 > /etc/resolv.conf\n}\n"),
    );
    let found = managed_findings(&raw, false);
    let f = finding_at(&found, "/etc/dhcp/dhclient.conf:5:", "the prepend line");
    assert_eq!(
        (f.severity, f.status),
        (Severity::Info, FindingStatus::Failed),
        "{f:?}"
    );
}

/// The `dhclient-enter-hook-nodnsupdate` node with `edit` applied: DNS-RESOLV-MANAGED-ELSEWHERE
/// for /etc/dhcp/dhclient.conf's prepend line.
fn hooks_edited(edit: impl FnOnce(&mut crate::facts::raw::RawFacts)) -> Finding {
    let mut raw = crate::testing::rules_fixture(
        "DNS-RESOLV-MANAGED-ELSEWHERE/dhclient-enter-hook-nodnsupdate",
    );
    edit(&mut raw);
    let found = managed_findings(&raw, false);
    finding_at(&found, "/etc/dhcp/dhclient.conf:5:", "the prepend line").clone()
}

/// Where the exit-hook tests put their hook.
const EXIT_HOOK: &str = "/etc/dhcp/dhclient-exit-hooks.d/resolved";

/// An exit hook's line that hands the lease's servers to systemd-resolved (written for the
/// tests, not copied from a package).
const RESOLVECTL_DNS: &[u8] = b"resolvectl dns \"$interface\" $new_domain_name_servers\n";

/// `text` as the exit hook [`EXIT_HOOK`].
fn exit_hook(raw: &mut crate::facts::raw::RawFacts, text: &[u8]) {
    raw.file(EXIT_HOOK, crate::facts::raw::FileState::Present, Some(text));
}

/// Ubuntu's hooks hand the lease's servers to systemd-resolved where it is enabled: Ubuntu
/// 20.04's enter hook (tests/fixtures/dhclient-hooks/ubuntu-20.04-resolved, verbatim) by a
/// make_resolv_conf of its own, later packages' exit hooks by `resolvectl` after
/// make_resolv_conf, whatever an enter hook made of it (Debian's `exit_with_hooks`,
/// pexip/os-isc-dhcp @29a44578). Either way the prepend line reaches the resolver: high,
/// not latent and not unknown. Where systemd-resolved is not enabled the guard fails and
/// the other hooks decide; where that is not known, neither is what is written.
#[test]
fn ubuntu_s_resolved_hooks_count_as_handing_the_servers_on() {
    use crate::facts::raw::FileState;
    let focal: &[u8] =
        include_bytes!("../../../tests/fixtures/dhclient-hooks/ubuntu-20.04-resolved");
    let enter = "/etc/dhcp/dhclient-enter-hooks.d";
    let enabled = |raw: &mut crate::facts::raw::RawFacts, state: &str| {
        crate::testing::set_command(raw, "resolved-enabled", &format!("{state}\n"), 0);
    };
    // The stock hook alone (the user's nodnsupdate taken away), resolved enabled: high, the
    // hook's line named.
    let f = hooks_edited(|raw| {
        raw.files.remove(&format!("{enter}/nodnsupdate"));
        raw.file(
            &format!("{enter}/resolved"),
            FileState::Present,
            Some(focal),
        );
        enabled(raw, "enabled");
    });
    assert_eq!(
        (f.severity, f.status),
        (Severity::High, FindingStatus::Failed),
        "{f:?}"
    );
    assert!(
        f.evidence.contains(&format!("{enter}/resolved:24 redefines make_resolv_conf to hand the lease's servers to systemd-resolved instead of writing /etc/resolv.conf")),
        "{f:?}"
    );
    // Sourced after nodnsupdate (run-parts' byte order), it wins; a do-nothing hook sorted
    // after it wins over it; with resolved disabled, nodnsupdate's definition stands.
    let both = |state: &'static str, last: bool| {
        hooks_edited(move |raw| {
            raw.file(
                &format!("{enter}/resolved"),
                FileState::Present,
                Some(focal),
            );
            if last {
                raw.file(
                    &format!("{enter}/zz-dnsfix"),
                    FileState::Present,
                    Some(b"make_resolv_conf() { :; }\n"),
                );
            }
            enabled(raw, state);
        })
    };
    assert_eq!(both("enabled", false).severity, Severity::High);
    assert_eq!(both("enabled", true).severity, Severity::Info);
    assert_eq!(both("disabled", false).severity, Severity::Info);
    assert_eq!(both("masked", false).severity, Severity::Info);
    // Whether it is enabled not known (a state systemctl's table lacks): not known.
    assert_eq!(both("something-new", false).status, FindingStatus::Unknown);
    // An exit hook that runs resolvectl under the same guard (written for the test): the
    // servers reach systemd-resolved whatever nodnsupdate did, where it is enabled.
    let exit = |state: &'static str| {
        hooks_edited(move |raw| {
            exit_hook(raw, b"if systemctl is-enabled systemd-resolved >/dev/null 2>&1; then\n  resolvectl dns \"$interface\" $new_domain_name_servers\nfi\n");
            enabled(raw, state);
        })
    };
    let f = exit("enabled");
    assert_eq!(
        (f.severity, f.status),
        (Severity::High, FindingStatus::Failed),
        "{f:?}"
    );
    assert!(
        f.evidence.iter().any(|e| e.starts_with("/etc/dhcp/dhclient-exit-hooks.d/resolved:2, an exit hook dhclient-script runs after make_resolv_conf, hands the lease's servers to systemd-resolved")),
        "{f:?}"
    );
    assert_eq!(exit("disabled").severity, Severity::Info);
    // An exit hook name run-parts passes over is never sourced.
    let f = hooks_edited(|raw| {
        raw.file(
            "/etc/dhcp/dhclient-exit-hooks.d/resolved.sh",
            FileState::Present,
            Some(RESOLVECTL_DNS),
        );
        enabled(raw, "enabled");
    });
    assert_eq!(f.severity, Severity::Info, "{f:?}");
    // A dhclient that runs another script (-sf): its hooks are not dhclient-script's.
    let f = hooks_edited(|raw| {
        raw.file(
            "/proc/912/cmdline",
            FileState::Present,
            Some(b"/sbin/dhclient\0-sf\0/usr/local/sbin/lease-hook\0ens5\0"),
        );
    });
    assert_eq!(f.status, FindingStatus::Unknown, "{f:?}");
    assert!(
        f.evidence.iter().any(|e| e.starts_with(
            "dhclient (pid 912) runs /usr/local/sbin/lease-hook (-sf), not dhclient-script"
        )),
        "{f:?}"
    );
}

/// Servers a hook hands to systemd-resolved are said to go there, and judged by what goes
/// through it: as written where /etc/resolv.conf or the kubelet's file does (a lock on
/// /etc/resolv.conf stops nothing then), latent where neither does; not known where an
/// exit hook could not be read, or an enter hook sh refuses ends the script first (dash).
#[test]
fn servers_handed_to_systemd_resolved_are_judged_by_what_goes_through_it() {
    use crate::facts::raw::FileState;
    let enter = "/etc/dhcp/dhclient-enter-hooks.d";
    let enabled = |raw: &mut crate::facts::raw::RawFacts, state: &str| {
        crate::testing::set_command(raw, "resolved-enabled", &format!("{state}\n"), 0);
    };
    let f = hooks_edited(|raw| {
        exit_hook(raw, RESOLVECTL_DNS);
    });
    assert_eq!(f.severity, Severity::High, "{f:?}");
    assert!(
        f.summary.starts_with(
            "dhclient-script's hooks hand 127.0.0.1 to systemd-resolved at every lease"
        ),
        "{f:?}"
    );
    // dhclient-script itself writes no file, so a lock on /etc/resolv.conf changes nothing.
    let locked = hooks_edited(|raw| {
        exit_hook(raw, RESOLVECTL_DNS);
        crate::testing::set_command(
            raw,
            crate::facts::network_manager::RESOLV_CONF_ATTR,
            "----i---------e------- /etc/resolv.conf\n",
            0,
        );
    });
    assert_eq!(locked.severity, Severity::High, "{locked:?}");
    // Where neither /etc/resolv.conf nor the kubelet's file goes through systemd-resolved,
    // the servers it is handed reach neither: latent.
    let apart = hooks_edited(|raw| {
        exit_hook(raw, RESOLVECTL_DNS);
        let etc = raw.files.get_mut("/etc/resolv.conf").expect("resolv.conf");
        etc.symlink_target = None;
        etc.canonical = None;
        raw.file(
            "/etc/resolv.conf",
            FileState::Present,
            Some(b"nameserver 192.0.2.53\n"),
        );
        let conf = "/etc/kubernetes/kubelet-config.yaml";
        let text = String::from_utf8_lossy(&raw.get(conf).expect("config").content)
            .replace("/run/systemd/resolve/resolv.conf", "/etc/resolv.conf");
        raw.file(conf, FileState::Present, Some(text.as_bytes()));
    });
    assert_eq!(
        (apart.severity, apart.status),
        (Severity::Info, FindingStatus::Failed),
        "{apart:?}"
    );
    assert!(
        apart.evidence.iter().any(|e| e == "neither /etc/resolv.conf nor the kubelet's resolv.conf goes through systemd-resolved"),
        "{apart:?}"
    );
    // An exit hook that could not be read, or an enter hook sh refuses (dash ends the
    // script before its exit hooks): not known.
    let unread = hooks_edited(|raw| {
        raw.file(EXIT_HOOK, FileState::Unreadable, None);
        enabled(raw, "enabled");
    });
    assert_eq!(unread.status, FindingStatus::Unknown, "{unread:?}");
    let refused = hooks_edited(|raw| {
        raw.file(
            &format!("{enter}/zz-broken"),
            FileState::Present,
            Some(b"make_resolv_conf() { }\n"),
        );
        exit_hook(raw, RESOLVECTL_DNS);
    });
    assert_eq!(refused.status, FindingStatus::Unknown, "{refused:?}");
    // A hand-over whose running is not known (a function), an exit hook that does not
    // parse, and one after a make_resolv_conf dnsfix cannot tell: not known either.
    for (exit, mine) in [
        (
            &b"push() {\n  resolvectl dns \"$interface\" $new_domain_name_servers\n}\n"[..],
            None,
        ),
        (b"if true; then\n", None),
        (
            RESOLVECTL_DNS,
            Some(&b"make_resolv_conf() {\n  cp /etc/resolv.conf.mine /etc/resolv.conf\n}\n"[..]),
        ),
    ] {
        let f = hooks_edited(|raw| {
            exit_hook(raw, exit);
            if let Some(mine) = mine {
                raw.file(&format!("{enter}/zz-mine"), FileState::Present, Some(mine));
            }
        });
        assert_eq!(f.status, FindingStatus::Unknown, "{f:?}");
    }
}

/// Red Hat's dhclient-script (VersatusHPC/rpms-dhcp @986801e1 dhclient-script) sources
/// /etc/dhcp/dhclient-enter-hooks only where it is executable (`[ -x ]`, the gather's
/// `dhclient-enter-hooks-x` record), and its make_resolv_conf returns at once where
/// PEERDNS is `no`: the ifcfg file of the interface dhclient serves, else
/// /etc/sysconfig/network.
#[test]
fn red_hat_s_enter_hook_counts_where_executable_and_peerdns_where_it_is_no() {
    use crate::facts::raw::FileState;
    let base = crate::testing::rules_fixture(
        "DNS-RESOLV-MANAGED-ELSEWHERE/dhclient-redhat-ifup-hostname-option",
    );
    let judged = |raw: &crate::facts::raw::RawFacts| {
        let found = managed_findings(raw, false);
        finding_at(
            &found,
            "/etc/dhcp/dhclient-ens5.conf:5:",
            "the prepend line",
        )
        .clone()
    };
    assert_eq!(judged(&base).severity, Severity::High);
    let mut hooked = base.clone();
    hooked.file(
        "/etc/dhcp/dhclient-enter-hooks",
        FileState::Present,
        Some(b"make_resolv_conf() { :; }\n"),
    );
    let f = judged(&hooked);
    assert_eq!(f.severity, Severity::High, "{f:?}");
    assert!(
        f.evidence
            .iter()
            .any(|e| e.contains("sources it only where it is executable")),
        "{f:?}"
    );
    crate::testing::set_command(
        &mut hooked,
        super::dhclient_script::ENTER_HOOK_EXEC,
        "1\n",
        0,
    );
    assert_eq!(judged(&hooked).severity, Severity::Info);
    // PEERDNS=no in /etc/sysconfig/network, which the ifcfg file does not set: not written;
    // the ifcfg file's PEERDNS=yes wins over it.
    let mut global = base.clone();
    global.file(
        "/etc/sysconfig/network",
        FileState::Present,
        Some(b"PEERDNS=no\n"),
    );
    let f = judged(&global);
    assert_eq!(f.severity, Severity::Info, "{f:?}");
    assert!(
        f.evidence
            .iter()
            .any(|e| e.starts_with("/etc/sysconfig/network:1: PEERDNS=no")),
        "{f:?}"
    );
    global.file(
        "/etc/sysconfig/network-scripts/ifcfg-ens5",
        FileState::Present,
        Some(b"DEVICE=ens5\nBOOTPROTO=dhcp\nPEERDNS=yes\n"),
    );
    assert_eq!(judged(&global).severity, Severity::High);
    // Another interface's ifcfg file sets it and ens5 has none: which file network-functions
    // picks for ens5 is not known.
    let mut other = base.clone();
    other.file(
        "/etc/sysconfig/network",
        FileState::Present,
        Some(b"PEERDNS=no\n"),
    );
    other.file(
        "/etc/sysconfig/network-scripts/ifcfg-eth1",
        FileState::Present,
        Some(b"DEVICE=eth1\nPEERDNS=yes\n"),
    );
    assert_eq!(judged(&other).status, FindingStatus::Unknown);
    // dhclient's -e PEERDNS=no (the script's environment, before it sources anything)
    // holds where no file sets it; an ifcfg file's PEERDNS=yes still wins over it.
    let mut env = base.clone();
    env.file(
        "/proc/912/cmdline",
        FileState::Present,
        Some(b"/sbin/dhclient\0-1\0-q\0-cf\0/etc/dhcp/dhclient-ens5.conf\0-e\0PEERDNS=no\0ens5\0"),
    );
    let f = judged(&env);
    assert_eq!(f.severity, Severity::Info, "{f:?}");
    assert!(
        f.evidence
            .iter()
            .any(|e| e.starts_with("dhclient (pid 912), its -e option: PEERDNS=no")),
        "{f:?}"
    );
    env.file(
        "/etc/sysconfig/network-scripts/ifcfg-ens5",
        FileState::Present,
        Some(b"DEVICE=ens5\nBOOTPROTO=dhcp\nPEERDNS=yes\n"),
    );
    assert_eq!(judged(&env).severity, Severity::High);
    // On Debian, PEERDNS is nothing to dhclient-script.
    let debian = crate::testing::rules_fixture(
        "DNS-RESOLV-MANAGED-ELSEWHERE/dhclient-example-prepend-loopback",
    );
    let mut debian = debian.clone();
    debian.file(
        "/etc/sysconfig/network",
        FileState::Present,
        Some(b"PEERDNS=no\n"),
    );
    let found = managed_findings(&debian, false);
    let f = finding_at(&found, "/etc/dhcp/dhclient.conf:5:", "the prepend line");
    assert_eq!(f.severity, Severity::High, "{f:?}");
}

/// DNS-HOST-RESOLVER-DOWN's fix where dhclient runs but its dhclient-script does not write
/// the file: it is one nothing rewrites (no dhclient.conf line, no enter hook to add), and
/// the hook's line says why; where a hook leaves that unknown, the note says so.
#[test]
fn the_resolver_down_fix_knows_a_do_nothing_enter_hook() {
    use crate::facts::raw::FileState;
    let mut raw = writer_node(&[]);
    raw.file(
        "/etc/resolv.conf",
        FileState::Present,
        Some(b"search example.internal\n"),
    );
    raw.file(
        "/etc/os-release",
        FileState::Present,
        Some(b"ID=debian\nVERSION_ID=\"12\"\n"),
    );
    with_process(&mut raw, "dhclient", 612, b"/sbin/dhclient\0-4\0ens5\0");
    crate::testing::set_units(&mut raw, &[("kubelet", "active")]);
    let down = |raw: &crate::facts::raw::RawFacts| {
        let mut host = Host::new("node1");
        host.vars.insert(
            "upstream_dns_servers".into(),
            serde_json::json!(["192.0.2.53"]),
        );
        let facts = NodeFacts::from_raw("node1", raw);
        match host_resolver_down(&Ctx::in_cluster(&host, &facts, None)) {
            RuleOutcome::Findings(f) if f.len() == 1 => f[0].remediation.clone(),
            other => panic!("{other:?}"),
        }
    };
    assert!(down(&raw).contains(
        "dhclient runs here and writes the file anew at every lease: put the IPv4 servers"
    ));
    let hook = "/etc/dhcp/dhclient-enter-hooks.d/nodnsupdate";
    let mut quiet = raw.clone();
    quiet.file(
        hook,
        FileState::Present,
        Some(b"make_resolv_conf() { :; }\n"),
    );
    let fix = down(&quiet);
    assert!(
        fix.ends_with("; dhclient runs here, but its dhclient-script does not write /etc/resolv.conf (/etc/dhcp/dhclient-enter-hooks.d/nodnsupdate:1 redefines make_resolv_conf to do nothing: dhclient-script does not write /etc/resolv.conf), so nothing rewrites it"),
        "{fix}"
    );
    assert!(
        !fix.contains("prepend domain-name-servers") && !fix.contains("zz-dnsfix"),
        "{fix}"
    );
    let mut odd = raw.clone();
    odd.file(
        hook,
        FileState::Present,
        Some(b"make_resolv_conf() { logger hi; }\n"),
    );
    assert!(
        down(&odd).contains("dhclient runs here and may write the file anew at every lease (/etc/dhcp/dhclient-enter-hooks.d/nodnsupdate:1 redefines make_resolv_conf: what it writes is not known): put the IPv4 servers"),
        "{}",
        down(&odd)
    );
}
