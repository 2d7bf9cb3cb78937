//! Test support shared by the unit tests of several modules (compiled only for tests).

/// CRI-O's own IPv4 bridge network (network `crio`), verbatim: cri-o/cri-o @f954a17e
/// contrib/cni/11-crio-ipv4-bridge.conflist.
pub(crate) const CRIO_IPV4_BRIDGE: &str =
    include_str!("../tests/fixtures/cni/cri-o-11-crio-ipv4-bridge.conflist");

/// A directory of its own under the system temp dir for one test, removed with everything in
/// it when the test ends, passed or not (its name starts `dnsfix-PREFIX-`). It reads as the
/// directory's path.
#[derive(Debug)]
pub(crate) struct Scratch(tempfile::TempDir);

impl Scratch {
    pub(crate) fn new(prefix: &str) -> Self {
        Self(
            tempfile::Builder::new()
                .prefix(&format!("dnsfix-{prefix}-"))
                .tempdir()
                .expect("a scratch directory"),
        )
    }
}

impl std::ops::Deref for Scratch {
    type Target = std::path::Path;

    fn deref(&self) -> &std::path::Path {
        self.0.path()
    }
}

impl AsRef<std::path::Path> for Scratch {
    fn as_ref(&self) -> &std::path::Path {
        self.0.path()
    }
}

/// A runtime of one thread, with time and I/O, for a test that drives async code itself.
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// Deterministic pseudo-random inputs for "never panics" tests: xorshift64 from `seed`, so
/// a failure reproduces. Each text is up to `max_len` bytes drawn from `alphabet` (biased
/// towards what the parser under test reacts to) or, one time in `raw_every`, any byte at
/// all. Callers make text of them the way gathered files are, with `from_utf8_lossy`.
pub(crate) fn random_inputs(
    seed: u64,
    alphabet: &[u8],
    count: usize,
    max_len: u64,
    raw_every: Option<u64>,
) -> Vec<Vec<u8>> {
    let mut state = seed;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..count)
        .map(|_| {
            let len = next() % (max_len + 1);
            (0..len)
                .map(|_| {
                    let r = next();
                    match raw_every {
                        Some(n) if r % n == 0 => (r >> 8) as u8,
                        _ => alphabet[(r >> 8) as usize % alphabet.len()],
                    }
                })
                .collect()
        })
        .collect()
}

/// Raw facts holding files given as (path, content), as the gather would have read them.
pub(crate) fn raw_from(files: &[(&str, &str)]) -> crate::facts::raw::RawFacts {
    with_files(&crate::facts::raw::RawFacts::default(), files)
}

/// `base` with files given as (path, content) added or replaced, as the gather would have
/// read them.
pub(crate) fn with_files(
    base: &crate::facts::raw::RawFacts,
    files: &[(&str, &str)],
) -> crate::facts::raw::RawFacts {
    let mut raw = base.clone();
    for (path, text) in files {
        raw.file(
            path,
            crate::facts::raw::FileState::Present,
            Some(text.as_bytes()),
        );
    }
    raw
}

/// The text of a file `raw` holds; panics naming the path where it holds none.
pub(crate) fn text(raw: &crate::facts::raw::RawFacts, path: &str) -> String {
    raw.get(path)
        .and_then(|f| f.text())
        .unwrap_or_else(|| panic!("{path}: no text in the fixture"))
        .into_owned()
}

/// Node facts from files given as (path, content), as the gather would have read them.
pub(crate) fn facts_from(files: &[(&str, &str)]) -> crate::facts::NodeFacts {
    crate::facts::NodeFacts::from_raw("node1", &raw_from(files))
}

/// `raw` as on a node systemd boots (`/run/systemd/system` is a directory) whose
/// /etc/sysctl.conf, which no link leads to, holds `sysctl_conf`: read by a `sysctl
/// --system` by hand, not at boot.
pub(crate) fn systemd_booted_with_sysctl_conf(
    raw: &mut crate::facts::raw::RawFacts,
    sysctl_conf: &str,
) {
    raw.file(
        "/run/systemd/system",
        crate::facts::raw::FileState::Directory,
        None,
    );
    raw.file(
        "/etc/sysctl.conf",
        crate::facts::raw::FileState::Present,
        Some(sysctl_conf.as_bytes()),
    );
}

/// Sets what `systemctl is-active` said of the units the gather asks about (in
/// `node_facts::units` order): the units named in `active`-style pairs get their state,
/// every other unit `inactive`.
pub(crate) fn set_units(raw: &mut crate::facts::raw::RawFacts, states: &[(&str, &str)]) {
    let stdout: String = crate::facts::node_facts::units()
        .map(|unit| {
            let state = states
                .iter()
                .find(|(name, _)| *name == unit)
                .map_or("inactive", |(_, state)| state);
            format!("{state}\n")
        })
        .collect();
    set_command(raw, "units", &stdout, 0);
}

/// An EKS fixture's kubelet with `flag` from the NodeConfig's spec.kubelet.flags: nodeadm
/// puts it last in NODEADM_KUBELET_ARGS of /etc/eks/kubelet/environment, and so it is last
/// on the running kubelet's command line (`/proc/3456/cmdline` in the EKS fixtures).
pub(crate) fn with_eks_flag(raw: &mut crate::facts::raw::RawFacts, flag: &str) {
    use crate::facts::raw::FileState;
    let env = "/etc/eks/kubelet/environment";
    let text = text(raw, env);
    raw.file(
        env,
        FileState::Present,
        Some(format!("{text} {flag}").as_bytes()),
    );
    let cmdline = "/proc/3456/cmdline";
    let mut argv = raw.get(cmdline).expect("cmdline").content.to_vec();
    argv.extend_from_slice(format!("{flag}\0").as_bytes());
    raw.file(cmdline, FileState::Present, Some(&argv));
}

/// Sets what the gather's command record `name` printed and how it exited
/// (`kubelet-version`, `resolved-enabled`, ...).
pub(crate) fn set_command(
    raw: &mut crate::facts::raw::RawFacts,
    name: &str,
    stdout: &str,
    status: i32,
) {
    raw.commands.insert(
        name.to_owned(),
        crate::facts::raw::RawCommand {
            stdout: stdout.to_owned(),
            status: Some(status),
        },
    );
}

/// The raw facts of the rules fixture `case` (`tests/fixtures/rules/CASE/root`; each case's
/// README names its upstream sources).
pub(crate) fn rules_fixture(case: &str) -> crate::facts::raw::RawFacts {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/rules")
        .join(case)
        .join("root");
    crate::facts::raw::from_tree(&root).unwrap_or_else(|e| panic!("fixture {case}: {e}"))
}

/// Replaces `from` with `to` in the gathered file `path` of `raw`, which must hold `from`:
/// a fixture changed for a test, never silently left as it was.
pub(crate) fn replace_in_file(
    raw: &mut crate::facts::raw::RawFacts,
    path: &str,
    from: &str,
    to: &str,
) {
    let file = raw
        .get(path)
        .unwrap_or_else(|| panic!("{path} was not gathered"));
    let text =
        String::from_utf8(file.content.to_vec()).unwrap_or_else(|_| panic!("{path} is not text"));
    assert!(
        text.contains(from),
        "{path} does not hold {from:?}:\n{text}"
    );
    let text = text.replace(from, to);
    raw.file(
        path,
        crate::facts::raw::FileState::Present,
        Some(text.as_bytes()),
    );
}

/// A cluster read through `via` whose DNS Services (kube-system, `k8s-app: kube-dns`) are
/// `services` (name, address); none where kubectl did not read them.
pub(crate) fn cluster_with_services(
    via: &str,
    services: Option<Vec<(&str, &str)>>,
) -> crate::cluster::Cluster {
    crate::cluster::Cluster::Read {
        via: via.into(),
        pods: Vec::new(),
        config: Box::new(crate::cluster::DnsConfig {
            services: services.map(|list| {
                list.into_iter()
                    .map(|(name, ip)| crate::cluster::DnsService {
                        name: name.into(),
                        cluster_ips: vec![ip.into()],
                        namespace: None,
                        selector: None,
                    })
                    .collect()
            }),
            ..Default::default()
        }),
        kubelets: Default::default(),
    }
}

/// kubeadm's CoreDNS ConfigMap (kubernetes cmd/kubeadm/app/phases/addons/dns/
/// manifests.go, CoreDNSConfigMap), rendered with DNSDomain cluster.local.
pub(crate) const KUBEADM_COREFILE: &str = "\
.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30 {
       disable success cluster.local
       disable denial cluster.local
    }
    loop
    reload
    loadbalance
}
";

/// A kubeadm 1.29 node (`_healthy/kubeadm-ubuntu2204`, its README names its sources) with
/// NodeLocal DNSCache from the upstream manifest (kubernetes cluster/addons/dns/
/// nodelocaldns) set up for kube-proxy in IPVS mode as the kubernetes.io NodeLocal DNSCache
/// page says: node-cache binds 169.254.20.10 alone (`-localip`, the `,__PILLAR__DNS__SERVER__`
/// left out) and the kubelet's clusterDNS is 169.254.20.10. The kubelet's resolvConf file,
/// systemd-resolved's uplink file, lists the kube-dns Service 10.96.0.10 before the real
/// 192.0.2.53 (a DNS= an admin added); the cluster, read with kubectl on cp1, has that
/// Service and kubeadm's Corefile forwarding `.` to the pod's resolv.conf, which is that
/// file: CoreDNS forwards part of its queries to itself.
pub(crate) fn kubeadm_ipvs_nodelocal_with_service_in_file()
-> (crate::facts::NodeFacts, crate::cluster::Cluster) {
    let mut raw = rules_fixture("_healthy/kubeadm-ubuntu2204");
    replace_in_file(
        &mut raw,
        "/var/lib/kubelet/config.yaml",
        "clusterDNS:\n- 10.96.0.10\n",
        "clusterDNS:\n- 169.254.20.10\n",
    );
    replace_in_file(
        &mut raw,
        "/run/systemd/resolve/resolv.conf",
        "nameserver 192.0.2.53\n",
        "nameserver 10.96.0.10\nnameserver 192.0.2.53\n",
    );
    set_command(
        &mut raw,
        "nodelocaldns-addr",
        "6: nodelocaldns    inet 169.254.20.10/32 scope global nodelocaldns\\       valid_lft forever preferred_lft forever\n",
        0,
    );
    let mut cluster = cluster_with_services("cp1", Some(vec![("kube-dns", "10.96.0.10")]));
    if let crate::cluster::Cluster::Read { config, .. } = &mut cluster {
        config.corefiles = vec![crate::cluster::Corefile::new(
            "coredns",
            "Corefile",
            KUBEADM_COREFILE,
        )];
    }
    (crate::facts::NodeFacts::from_raw("node1", &raw), cluster)
}

/// A real /etc/os-release (`tests/fixtures/os-release/NAME`, verbatim from
/// which-distro/os-release @b92bccaf2aed: `ubuntu-22.04`, `fedora-server-40`, `debian-12`,
/// `rhel-9.4`).
pub(crate) fn os_release(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/os-release")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The CPU time the calling thread has used: what a test of an algorithm's cost compares,
/// which the other processes of a loaded machine do not lengthen as they do wall time.
pub(crate) fn thread_cpu_time() -> std::time::Duration {
    let clock = nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID;
    nix::time::clock_gettime(clock)
        .expect("the thread's CPU clock")
        .into()
}
