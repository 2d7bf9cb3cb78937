//! k0s when it runs no kubelet now: stopped, failed after a reboot, or not yet at its
//! kubelet. k0s starts the kubelet itself (its unit is `k0sworker`, or `k0scontroller` with
//! `--enable-worker` or `--single`), and at every start it writes the kubelet's config anew
//! (k0sproject/k0s pkg/component/worker/kubelet.go, `writeKubeletConfig`) into `/run/k0s`,
//! which a reboot empties. What the next start hands the kubelet is read from what stays:
//!
//! - the service's `--kubelet-extra-args` (its unit's `ExecStart=`, written by `k0s install`
//!   with each space of an argument as `\x20`): k0s splits it at white space, each word at
//!   its first `=` into a name and a value (internal/pkg/flags `Split`, the last of a name
//!   wins), merges them into the map of its own kubelet flags (one of the same name
//!   replaced) and writes the map out as `name=value` words sorted by name
//!   (pkg/component/worker/kubelet.go `args.Merge(k.ExtraArgs)`, stringmap `ToArgs`), so a
//!   `--resolv-conf` there beats the config file. A flag's value given as a word of its own
//!   (`--resolv-conf /x`) becomes two entries, `--resolv-conf=` and `/x=`: the kubelet takes
//!   `/x=` for an argument, refuses it ("unknown command") and never starts;
//! - the worker profile, as k0s last fetched it from the cluster: `<data dir>/
//!   worker-profile.yaml` (pkg/component/worker/config/loader.go, `storeInCacheDir`:
//!   `name:` the profile, `data:` the ConfigMap's data, `kubeletConfiguration` a JSON
//!   KubeletConfiguration with clusterDNS, clusterDomain and any resolvConf the profile sets);
//! - where the profile sets no resolvConf, or the k0s the unit starts is older than 1.33.1
//!   (before 2090e9dee8 `writeKubeletConfig` set `config.ResolverConfig` at every start,
//!   over the profile's), k0s's own choice at that start (`determineKubeletResolvConfPath`):
//!   systemd-resolved's uplink file when the only nameserver of /etc/resolv.conf is
//!   127.0.0.53, else /etc/resolv.conf. Where the profile sets one, the k0s binary's
//!   version (`k0s version`, asked by the gather) decides; where it is not known, the
//!   profile's holds only where k0s's own choice is the same file.

use std::net::{IpAddr, Ipv4Addr};

use super::kubelet_config::{KubeletConfig, Located};
use super::node_facts::{Effective, FlagFact, Source};
use super::raw::{FileState, RawFacts};
use super::systemd_unit::{At, ServiceUnit};

/// The kubelet config k0s (1.32.1 and later, as root) writes at every kubelet start, after
/// its kernel setup, under /run (a reboot empties it).
pub const RUN_CONFIG: &str = "/run/k0s/kubelet/config.yaml";
/// k0s's data directory unless `--data-dir` says otherwise (pkg/constant `DataDirDefault`).
const DATA_DIR: &str = "/var/lib/k0s";
/// The worker profile k0s asks for unless `--profile` says otherwise (pkg/config/cli.go).
const PROFILE: &str = "default";
/// The worker profile's copy in the data directory.
const PROFILE_CACHE: &str = "worker-profile.yaml";

/// The first k0s release (minor, patch of its Kubernetes version) whose worker start keeps a
/// worker profile's resolvConf: k0sproject/k0s 2090e9dee8, first in v1.33.1+k0s.0 (no
/// release of 1.32 or earlier has it, and there is no k0s 1.33.0).
pub const PROFILE_RESOLV_CONF_FROM: (u32, u32) = (33, 1);

/// The k0s service that runs a kubelet on this node, from its unit.
#[derive(Debug)]
pub struct Installed {
    pub unit: ServiceUnit,
    /// `--data-dir`, else `/var/lib/k0s`.
    pub data_dir: String,
    /// `--profile`, else `default`.
    pub profile: String,
    /// `--kubelet-extra-args` and where it was written.
    pub extra_args: Option<(String, At)>,
}

/// The k0s unit that starts a kubelet: `k0sworker`, else a `k0scontroller` whose command
/// line enables the worker. `None` on a node without either.
pub fn installed(raw: &RawFacts) -> Option<Installed> {
    ["k0sworker.service", "k0scontroller.service"]
        .into_iter()
        .filter_map(|name| ServiceUnit::from_raw(raw, name))
        .find_map(|unit| {
            let args = K0sArgs::read(&unit)?;
            Some(Installed {
                data_dir: args.data_dir.unwrap_or_else(|| DATA_DIR.to_owned()),
                profile: args.profile.unwrap_or_else(|| PROFILE.to_owned()),
                extra_args: args.extra_args,
                unit,
            })
        })
}

/// What dnsfix needs of a k0s command line.
#[derive(Default)]
struct K0sArgs {
    data_dir: Option<String>,
    profile: Option<String>,
    extra_args: Option<(String, At)>,
}

impl K0sArgs {
    /// `k0s worker ...`, or `k0s controller ...` with the worker enabled; `None` otherwise.
    /// pflag's forms: `--name=value` and `--name value` (a boolean takes no next word,
    /// and is true bare or with a value `strconv.ParseBool` reads as true).
    fn read(unit: &ServiceUnit) -> Option<K0sArgs> {
        let words = &unit.argv;
        // `server` is the controller's alias (cmd/controller/controller.go).
        let command = words.get(1)?.text.as_str();
        let mut args = K0sArgs::default();
        let (mut enable_worker, mut single) = (false, false);
        let mut i = 2;
        while let Some(word) = words.get(i) {
            i += 1;
            let Some(body) = word.text.strip_prefix("--") else {
                continue;
            };
            let (name, value) = match body.split_once('=') {
                Some((name, value)) => (name, Some(value.to_owned())),
                None => (body, None),
            };
            // The last of a boolean wins, as for any pflag flag.
            match name {
                "enable-worker" => enable_worker = value.as_deref().is_none_or(parse_bool),
                "single" => single = value.as_deref().is_none_or(parse_bool),
                _ => {}
            }
            if !matches!(name, "data-dir" | "profile" | "kubelet-extra-args") {
                continue;
            }
            let value = match value {
                Some(v) => v,
                None => {
                    let Some(next) = words.get(i) else { break };
                    i += 1;
                    next.text.clone()
                }
            };
            match name {
                // An empty --data-dir is the default (pkg/config/cfgvars.go).
                "data-dir" => args.data_dir = Some(value).filter(|v| !v.is_empty()),
                "profile" => args.profile = Some(value),
                _ => args.extra_args = Some((value, word.at.clone())),
            }
        }
        let worker = match command {
            "worker" => true,
            "controller" | "server" => enable_worker || single,
            _ => false,
        };
        worker.then_some(args)
    }
}

/// Go's `strconv.ParseBool`, true side.
fn parse_bool(value: &str) -> bool {
    matches!(value, "1" | "t" | "T" | "TRUE" | "true" | "True")
}

impl Installed {
    /// The unit's evidence for reports: its file and the k0s command it runs.
    pub fn evidence(&self) -> String {
        let file = self.unit.files().next().unwrap_or(&self.unit.name);
        format!("{file} ({}; k0s runs no kubelet now)", self.unit.name)
    }

    /// The kubelet flags `--kubelet-extra-args` gives, as k0s splits them (the last of a
    /// name wins, and k0s's own flag of that name goes), each shown at the unit's
    /// `ExecStart=`. A word without `--` is no kubelet flag of k0s's making and is left out:
    /// [`Installed::refused`] says what the kubelet makes of one.
    pub fn extra_flags(&self) -> Vec<FlagFact> {
        let Some((value, at)) = &self.extra_args else {
            return Vec::new();
        };
        let split = split_extra_args(value);
        // `ToArgs` writes them sorted by name; the kubelet reads `_` as `-` in a name, and
        // the last of a name wins.
        let mut flags: Vec<FlagFact> = Vec::new();
        for (name, value) in split {
            let Some(name) = name.strip_prefix("--") else {
                continue;
            };
            let name = super::kubelet_flags::normalize_name(name);
            flags.retain(|f| f.name != name);
            flags.push(FlagFact {
                name,
                value: Some(value.to_owned()),
                source: Source {
                    detail: Some("--kubelet-extra-args".into()),
                    ..Source::new("flag", Some(&at.path), Some(at.line))
                },
            });
        }
        flags
    }

    /// Why the kubelet k0s starts with these `--kubelet-extra-args` does not start, where
    /// it does not: a word of them that is no flag (a flag's value written apart from it,
    /// `--resolv-conf /x`) reaches the kubelet as an argument, `/x=` (k0s's `ToArgs` writes
    /// every entry as `name=value`), and the kubelet refuses any argument
    /// (cmd/kubelet/app/server.go: `unknown command`), every time k0s starts it again.
    pub fn refused(&self) -> Option<String> {
        let (value, at) = self.extra_args.as_ref()?;
        // pflag reads a word as a flag only where it starts with `-` and is more than `-`;
        // ToArgs writes the entries sorted by name, and the kubelet names the first argument.
        let (name, entry) = split_extra_args(value)
            .into_iter()
            .find(|(name, _)| !name.starts_with('-') || *name == "-")?;
        Some(format!(
            "{}:{}: --kubelet-extra-args holds the word {name:?}, which k0s hands the kubelet as the argument {:?} (it splits the extra args at white space and each word at its first `=`; a flag's value goes after `=`, as in --resolv-conf=/path): the kubelet refuses it (\"unknown command\") and does not start",
            at.path,
            at.line,
            format!("{name}={entry}")
        ))
    }

    /// The version of the k0s binary the unit starts (`v1.33.1+k0s.0`), as the gather asked
    /// it (`k0s version`, where k0s runs no kubelet); `None` where it was not asked, did
    /// not answer, or the binary asked is not the one of the `ExecStart=` in effect.
    pub fn version(&self, raw: &RawFacts) -> Option<String> {
        let asked = raw.commands.get("k0s-bin")?.stdout.trim_end_matches('\n');
        if self.unit.argv.first()?.text != asked {
            return None;
        }
        let out = raw.commands.get("k0s-version")?;
        if out.status != Some(0) {
            return None;
        }
        out.stdout
            .split_whitespace()
            .find(|w| w.starts_with('v'))
            .map(str::to_owned)
    }

    /// Where k0s keeps the worker profile it last fetched.
    pub fn profile_path(&self) -> String {
        format!("{}/{PROFILE_CACHE}", self.data_dir.trim_end_matches('/'))
    }

    /// The kubelet configuration of the worker profile k0s last fetched, with the line of
    /// its `kubeletConfiguration` key; why not, when it cannot be known from the node.
    pub fn profile_config(&self, raw: &RawFacts) -> Result<(KubeletConfig, usize), String> {
        #[derive(serde::Deserialize)]
        struct Stored {
            name: Option<String>,
            #[serde(default)]
            data: std::collections::BTreeMap<String, String>,
        }
        let path = self.profile_path();
        let text = match raw.get(&path) {
            Some(f) if f.state == FileState::Present => {
                f.text().ok_or_else(|| format!("{path}: not text"))?
            }
            Some(f) if f.state == FileState::Missing => {
                return Err(format!(
                    "{path}: no such file (k0s writes it once it has fetched its worker profile)"
                ));
            }
            Some(_) => return Err(format!("{path}: could not be read")),
            None => return Err(format!("{path}: was not gathered")),
        };
        let stored: Stored = serde_norway::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
        let name = stored.name.unwrap_or_default();
        if name != self.profile {
            return Err(format!(
                "{path} holds worker profile {name:?}, the service asks for {:?}: k0s fetches that one at its next start",
                self.profile
            ));
        }
        let json = stored
            .data
            .get("kubeletConfiguration")
            .map_or("{}", String::as_str);
        let line = text
            .lines()
            .position(|l| l.trim_start().starts_with("kubeletConfiguration:"))
            .map_or(0, |i| i + 1);
        let config =
            KubeletConfig::parse(json).map_err(|e| format!("{path}: kubeletConfiguration: {e}"))?;
        Ok((config, line))
    }
}

/// k0s's map of `--kubelet-extra-args` (internal/pkg/flags `Split`): every white-space
/// separated word split at its first `=` into a name (as written, dashes included) and a
/// value (`""` without `=`), the last of a name kept; sorted by name, as `ToArgs` writes them.
fn split_extra_args(value: &str) -> std::collections::BTreeMap<&str, &str> {
    value
        .split_whitespace()
        .map(|word| word.split_once('=').unwrap_or((word, "")))
        .collect()
}

/// The profile's settings shown at `path:line` (its `kubeletConfiguration` key): the line
/// inside the JSON says nothing on the node.
pub fn at_profile<T>(setting: Option<Located<T>>, line: usize) -> Option<Located<T>> {
    setting.map(|l| Located::new(l.value, line))
}

/// What k0s gives the kubelet as resolvConf where the profile sets none, at its next
/// start (`determineKubeletResolvConfPath`, `hasSystemdResolvedNameserver`): the uplink file
/// of systemd-resolved when /etc/resolv.conf has exactly one nameserver line k0s can parse
/// and it is 127.0.0.53 (a line is `nameserver` at its very start, white space, then a word
/// that parses as an IP address; other lines are skipped); /etc/resolv.conf otherwise, also
/// when k0s cannot open it. `None` when dnsfix could not read the file.
pub fn auto_resolv_conf(raw: &RawFacts) -> Option<Effective<String>> {
    const ETC: &str = "/etc/resolv.conf";
    const UPLINK: &str = "/run/systemd/resolve/resolv.conf";
    let file = raw.get(ETC)?;
    let (value, why) = match file.state {
        FileState::Missing => (ETC, format!("{ETC} is missing, which k0s does not check")),
        FileState::Present => {
            let text = file.text()?;
            if only_resolved_stub(&text) {
                (UPLINK, format!("{ETC} lists only 127.0.0.53"))
            } else {
                (ETC, format!("{ETC} does not list 127.0.0.53 alone"))
            }
        }
        _ => return None,
    };
    Some(Effective {
        value: value.to_owned(),
        source: Source {
            detail: Some(format!("at its next start: {why}")),
            ..Source::new("k0s_auto", None, None)
        },
        shadowed: vec![],
    })
}

/// k0s's `hasSystemdResolvedNameserver` over the text of /etc/resolv.conf.
fn only_resolved_stub(text: &str) -> bool {
    let stub = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 53));
    let mut seen = false;
    // bufio.ScanLines: lines end at \n, a \r before it is dropped.
    for line in text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)) {
        // `^nameserver\s+(\S+)`, Go's \s being [\t\n\f\r ].
        let Some(rest) = line.strip_prefix("nameserver") else {
            continue;
        };
        let go_space = |c: char| matches!(c, '\t' | '\n' | '\u{c}' | '\r' | ' ');
        if !rest.starts_with(go_space) {
            continue;
        }
        let word = rest.trim_start_matches(go_space);
        let word = word.split(go_space).next().unwrap_or_default();
        // net.ParseIP, whose Equal takes an IPv4-mapped IPv6 address for the IPv4 one.
        let Ok(ip) = word.parse::<IpAddr>() else {
            continue;
        };
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        if seen || ip != stub {
            return false;
        }
        seen = true;
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::node_facts::{FlavourKind, NodeFacts, Observed};

    /// The unit `k0s install worker` writes (the fixture's, rendered from k0s's template:
    /// its README says how), with `ExecStart=` (line 12) running `k0s COMMAND`.
    fn unit(command: &str) -> String {
        const RENDERED: &str = include_str!(
            "../../tests/fixtures/rules/_upstream/k0s-1.34-ubuntu2204-worker-after-reboot/root/etc/systemd/system/k0sworker.service"
        );
        RENDERED
            .lines()
            .map(|line| match line.starts_with("ExecStart=") {
                true => format!("ExecStart=/usr/local/bin/k0s {command}\n"),
                false => format!("{line}\n"),
            })
            .collect()
    }

    const PROFILE: &str = "data:\n  apiServerAddresses: '[\"10.0.0.10:6443\"]'\n  kubeletConfiguration: '{\"kind\":\"KubeletConfiguration\",\"apiVersion\":\"kubelet.config.k8s.io/v1beta1\",\"clusterDomain\":\"cluster.local\",\"clusterDNS\":[\"10.96.0.10\"]}'\nname: default\n";
    const STUB: &str = "nameserver 127.0.0.53\noptions edns0 trust-ad\n";
    const UPLINK: &str = "nameserver 10.0.0.2\n";

    fn node(files: &[(&str, &str)]) -> NodeFacts {
        versioned(files, None)
    }

    fn resolv(f: &NodeFacts) -> (String, String, String) {
        match &f.kubelet.resolv_conf {
            Observed::Known(e) => (e.value.clone(), e.source.kind.clone(), e.source.at()),
            other => panic!("not known: {other:?}"),
        }
    }

    /// k0s's own choice at its next start: systemd-resolved's uplink file only when
    /// 127.0.0.53 is the one nameserver line of /etc/resolv.conf that parses; a second
    /// server, a second 127.0.0.53 line or none at all keep /etc/resolv.conf, which then
    /// reaches CoreDNS with its loopback server.
    #[test]
    fn k0s_takes_resolveds_file_only_for_a_lone_stub_server() {
        let unit = unit("worker --token-file=/etc/k0s/k0stoken");
        let choice = |etc: &str| {
            let f = node(&[
                ("/etc/systemd/system/k0sworker.service", unit.as_str()),
                ("/var/lib/k0s/worker-profile.yaml", PROFILE),
                ("/etc/resolv.conf", etc),
                ("/run/systemd/resolve/resolv.conf", UPLINK),
            ]);
            assert_eq!(f.flavour.kind, FlavourKind::K0s);
            assert_eq!(f.services.kubelet_unit, "k0sworker");
            resolv(&f).0
        };
        let uplink = "/run/systemd/resolve/resolv.conf";
        assert_eq!(choice(STUB), uplink);
        // Comments, a `search` line, a CRLF and an unparseable word do not count.
        assert_eq!(
            choice(
                "# nameserver 10.0.0.9\nsearch example.internal\r\nnameserver 127.0.0.53%lo\nnameserver 127.0.0.53\r\n"
            ),
            uplink
        );
        assert_eq!(choice("nameserver ::ffff:127.0.0.53\n"), uplink);
        for etc in [
            "nameserver 127.0.0.53\nnameserver 10.0.0.2\n",
            "nameserver 127.0.0.53\nnameserver 127.0.0.53\n",
            " nameserver 127.0.0.53\n",
            "nameserver127.0.0.53\n",
            "",
        ] {
            assert_eq!(choice(etc), "/etc/resolv.conf", "{etc:?}");
        }
        let f = node(&[
            ("/etc/systemd/system/k0sworker.service", unit.as_str()),
            ("/var/lib/k0s/worker-profile.yaml", PROFILE),
            (
                "/etc/resolv.conf",
                "nameserver 127.0.0.53\nnameserver 10.0.0.2\n",
            ),
        ]);
        let (_, kind, _) = resolv(&f);
        assert_eq!(kind, "k0s_auto");
        let pod = f.kubelet.pod_resolv_conf.as_ref().expect("read");
        assert_eq!(pod.path, "/etc/resolv.conf");
        // The profile's clusterDNS and clusterDomain, at its kubeletConfiguration key.
        match &f.kubelet.cluster_dns {
            Observed::Known(e) => {
                assert_eq!(e.value, ["10.96.0.10"]);
                assert_eq!(e.source.at(), "/var/lib/k0s/worker-profile.yaml:3");
            }
            other => panic!("{other:?}"),
        }
    }

    /// The service's `--kubelet-extra-args` (its spaces written `\x20`) beat the worker
    /// profile, which beats k0s's own choice; k0s splits the extra args at white space and
    /// each at its first `=`, the last of a name winning.
    #[test]
    fn extra_args_beat_the_profile_which_beats_k0s_s_choice() {
        let with_extra = unit(
            r"worker --kubelet-extra-args=--resolv-conf=/etc/a.conf\x20--max-pods=200\x20--resolv-conf=/etc/k0s/resolv.conf --token-file=/etc/k0s/k0stoken",
        );
        let f = node(&[
            ("/etc/systemd/system/k0sworker.service", with_extra.as_str()),
            ("/var/lib/k0s/worker-profile.yaml", PROFILE),
            ("/etc/resolv.conf", STUB),
        ]);
        let (value, kind, at) = resolv(&f);
        assert_eq!(value, "/etc/k0s/resolv.conf");
        assert_eq!(kind, "flag");
        assert_eq!(at, "/etc/systemd/system/k0sworker.service:12");
        let profile = PROFILE.replace(
            r#""clusterDNS":["10.96.0.10"]"#,
            r#""clusterDNS":["10.96.0.10"],"resolvConf":"/etc/k0s/profile.conf""#,
        );
        let plain = unit("worker --token-file=/etc/k0s/k0stoken");
        let f = versioned(
            &[
                ("/etc/systemd/system/k0sworker.service", plain.as_str()),
                ("/var/lib/k0s/worker-profile.yaml", profile.as_str()),
                ("/etc/resolv.conf", STUB),
            ],
            Some(("/usr/local/bin/k0s", "v1.34.1+k0s.0\n")),
        );
        let (value, kind, at) = resolv(&f);
        assert_eq!(
            (value.as_str(), kind.as_str(), at.as_str()),
            (
                "/etc/k0s/profile.conf",
                "config",
                "/var/lib/k0s/worker-profile.yaml:3"
            )
        );
    }

    /// [`node`], with the gather's `k0s-bin` and `k0s-version` where given (the binary
    /// asked, and what `k0s version` printed).
    fn versioned(files: &[(&str, &str)], k0s: Option<(&str, &str)>) -> NodeFacts {
        let mut raw = crate::testing::raw_from(files);
        for path in [
            "/etc/resolv.conf",
            "/run/systemd/resolve/resolv.conf",
            "/var/lib/k0s/worker-profile.yaml",
        ] {
            if raw.get(path).is_none() {
                raw.file(path, FileState::Missing, None);
            }
        }
        if let Some((bin, version)) = k0s {
            crate::testing::set_command(&mut raw, "k0s-bin", &format!("{bin}\n"), 0);
            crate::testing::set_command(&mut raw, "k0s-version", version, 0);
        }
        NodeFacts::from_raw("node1", &raw)
    }

    /// A worker profile's resolvConf counts only from k0s 1.33.1 (2090e9dee8, first in
    /// v1.33.1+k0s.0); an older k0s writes its own choice over it at every start. Where the
    /// version of the k0s the unit starts is not known, the profile's holds only where k0s's
    /// own choice is the same file; a flag of the extra args wins whatever the version.
    #[test]
    fn the_profile_s_resolv_conf_counts_from_k0s_1_33_1() {
        let profile = PROFILE.replace(
            r#""clusterDNS":["10.96.0.10"]"#,
            r#""clusterDNS":["10.96.0.10"],"resolvConf":"/etc/k0s/profile.conf""#,
        );
        let plain = unit("worker --token-file=/etc/k0s/k0stoken");
        let with = |profile: &str, k0s: Option<(&str, &str)>| {
            versioned(
                &[
                    ("/etc/systemd/system/k0sworker.service", plain.as_str()),
                    ("/var/lib/k0s/worker-profile.yaml", profile),
                    ("/etc/resolv.conf", STUB),
                    ("/run/systemd/resolve/resolv.conf", UPLINK),
                ],
                k0s,
            )
        };
        for version in ["v1.33.1+k0s.0\n", "v1.33.1-rc.0+k0s.0\n", "v1.36.0+k0s.0\n"] {
            let f = with(&profile, Some(("/usr/local/bin/k0s", version)));
            assert_eq!(resolv(&f).0, "/etc/k0s/profile.conf", "{version}");
        }
        // Older: k0s's own choice (the uplink file: /etc/resolv.conf is the lone stub).
        for version in ["v1.32.13+k0s.0\n", "v1.31.1+k0s.0\n"] {
            let f = with(&profile, Some(("/usr/local/bin/k0s", version)));
            let (value, kind, _) = resolv(&f);
            assert_eq!(
                (value.as_str(), kind.as_str()),
                ("/run/systemd/resolve/resolv.conf", "k0s_auto"),
                "{version}"
            );
            match &f.kubelet.resolv_conf {
                Observed::Known(e) => assert!(
                    e.source.detail.as_deref().is_some_and(|d| d.contains(
                        "writes it over the worker profile's resolvConf /etc/k0s/profile.conf (/var/lib/k0s/worker-profile.yaml:3)"
                    )),
                    "{e:?}"
                ),
                other => panic!("{other:?}"),
            }
        }
        // Not known: not asked, another binary asked than the unit's, no answer.
        for k0s in [
            None,
            Some(("/opt/k0s", "v1.34.1+k0s.0\n")),
            Some(("/usr/local/bin/k0s", "")),
        ] {
            let f = with(&profile, k0s);
            match &f.kubelet.resolv_conf {
                Observed::Unknown(why) => assert!(
                    why.starts_with("/var/lib/k0s/worker-profile.yaml:3: the worker profile sets resolvConf /etc/k0s/profile.conf, which k0s keeps only from 1.33.1")
                        && why.contains("its own choice over it, /run/systemd/resolve/resolv.conf"),
                    "{why}"
                ),
                other => panic!("{k0s:?}: {other:?}"),
            }
            assert!(
                matches!(f.kubelet.cluster_dns, Observed::Known(_)),
                "{k0s:?}"
            );
        }
        // The same file either way: known without the version.
        let same = PROFILE.replace(
            r#""clusterDNS":["10.96.0.10"]"#,
            r#""clusterDNS":["10.96.0.10"],"resolvConf":"/run/systemd/resolve/resolv.conf""#,
        );
        assert_eq!(
            resolv(&with(&same, None)).0,
            "/run/systemd/resolve/resolv.conf"
        );
        // A flag of the extra args beats the config whatever k0s writes there.
        let flag =
            unit("worker --kubelet-extra-args=--resolv-conf=/etc/k0s/resolv.conf --token-file=/t");
        let f = versioned(
            &[
                ("/etc/systemd/system/k0sworker.service", flag.as_str()),
                ("/var/lib/k0s/worker-profile.yaml", profile.as_str()),
                ("/etc/resolv.conf", STUB),
            ],
            None,
        );
        assert_eq!(resolv(&f).0, "/etc/k0s/resolv.conf");
    }

    /// What the next start uses cannot be known without the profile k0s will run: none
    /// cached, another profile cached than the service asks for, or an unreadable cache.
    /// A flag in the extra args wins whatever the profile says.
    #[test]
    fn without_the_profile_it_runs_the_settings_are_unknown() {
        let plain = unit("worker --token-file=/etc/k0s/k0stoken");
        let other = unit("worker --profile=gpu --token-file=/etc/k0s/k0stoken");
        let data_dir = unit("worker --data-dir=/srv/k0s/ --token-file=/etc/k0s/k0stoken");
        for (unit, profile, why) in [
            (plain.as_str(), None, "no such file"),
            (
                other.as_str(),
                Some(PROFILE),
                "the service asks for \"gpu\"",
            ),
            (plain.as_str(), Some("data: [\n"), "worker-profile.yaml:"),
            // The data directory is the unit's: the default one's cache is not k0s's.
            (
                data_dir.as_str(),
                Some(PROFILE),
                "/srv/k0s/worker-profile.yaml: was not gathered",
            ),
        ] {
            let mut files = vec![
                ("/etc/systemd/system/k0sworker.service", unit),
                ("/etc/resolv.conf", STUB),
            ];
            if let Some(p) = profile {
                files.push(("/var/lib/k0s/worker-profile.yaml", p));
            }
            let f = node(&files);
            match &f.kubelet.resolv_conf {
                Observed::Unknown(reason) => assert!(reason.contains(why), "{reason}"),
                other => panic!("{why}: {other:?}"),
            }
            assert!(matches!(f.kubelet.cluster_dns, Observed::Unknown(_)));
        }
        let flag =
            unit("worker --kubelet-extra-args=--resolv-conf=/etc/k0s/resolv.conf --token-file=/t");
        let f = node(&[("/etc/systemd/system/k0sworker.service", flag.as_str())]);
        assert_eq!(resolv(&f).0, "/etc/k0s/resolv.conf");
        // A --config of the extra args replaces k0s's own config: what it says is not read.
        let config = unit(
            r"worker --kubelet-extra-args=--max-pods=9\x20--config=/etc/k0s/kubelet.yaml --token-file=/t",
        );
        let f = node(&[
            ("/etc/systemd/system/k0sworker.service", config.as_str()),
            ("/var/lib/k0s/worker-profile.yaml", PROFILE),
            ("/etc/resolv.conf", STUB),
        ]);
        match &f.kubelet.resolv_conf {
            Observed::Unknown(reason) => {
                assert!(
                    reason.contains("--config=/etc/k0s/kubelet.yaml"),
                    "{reason}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    /// A flag's value written apart from it in the extra args (`--resolv-conf /etc/x.conf`):
    /// k0s's `Split` makes two entries of it, and `ToArgs` hands the kubelet `--resolv-conf=`
    /// and the argument `/etc/x.conf=`, which the kubelet refuses ("unknown command"): it
    /// never starts, so its settings are unknown, not a resolvConf of "".
    #[test]
    fn a_value_apart_from_its_flag_keeps_the_kubelet_from_starting() {
        let apart = unit(
            r"worker --kubelet-extra-args=--max-pods=200\x20--resolv-conf\x20/etc/x.conf --token-file=/t",
        );
        let f = node(&[
            ("/etc/systemd/system/k0sworker.service", apart.as_str()),
            ("/var/lib/k0s/worker-profile.yaml", PROFILE),
            ("/etc/resolv.conf", STUB),
        ]);
        match &f.kubelet.resolv_conf {
            Observed::Unknown(reason) => assert!(
                reason.starts_with("/etc/systemd/system/k0sworker.service:12: ")
                    && reason.contains("the argument \"/etc/x.conf=\"")
                    && reason.contains("does not start"),
                "{reason}"
            ),
            other => panic!("{other:?}"),
        }
        assert!(matches!(f.kubelet.cluster_dns, Observed::Unknown(_)));
        assert!(f.kubelet.pod_resolv_conf.is_none());
        // A lone `-` is an argument too; a flag of one dash is a flag.
        for (extra, refused) in [
            (r"--max-pods=200\x20-", true),
            (r"-v=2\x20--resolv-conf=/etc/x.conf", false),
        ] {
            let unit = unit(&format!(
                "worker --kubelet-extra-args={extra} --token-file=/t"
            ));
            let f = node(&[
                ("/etc/systemd/system/k0sworker.service", unit.as_str()),
                ("/var/lib/k0s/worker-profile.yaml", PROFILE),
                ("/etc/resolv.conf", STUB),
            ]);
            assert_eq!(
                matches!(&f.kubelet.resolv_conf, Observed::Unknown(r) if r.contains("does not start")),
                refused,
                "{extra}: {:?}",
                f.kubelet.resolv_conf
            );
        }
    }

    /// The extra args as k0s passes them and the kubelet reads them: `_` is `-` in a
    /// name, k0s sorts the names it writes, and the last of a name wins; an empty
    /// `--data-dir` is the default one; the last of a boolean flag wins; `server` is the
    /// controller.
    #[test]
    fn k0s_flags_are_read_as_k0s_and_the_kubelet_read_them() {
        let read = |command: &str| {
            let unit = unit(command);
            let f = node(&[
                ("/etc/systemd/system/k0sworker.service", unit.as_str()),
                ("/var/lib/k0s/worker-profile.yaml", PROFILE),
                ("/etc/resolv.conf", STUB),
            ]);
            resolv(&f).0
        };
        assert_eq!(
            read(r"worker --kubelet-extra-args=--resolv_conf=/etc/u.conf --token-file=/t"),
            "/etc/u.conf"
        );
        // "--resolv-conf" sorts before "--resolv_conf": the kubelet sees the latter last.
        assert_eq!(
            read(
                r"worker --kubelet-extra-args=--resolv_conf=/etc/u.conf\x20--resolv-conf=/etc/d.conf"
            ),
            "/etc/u.conf"
        );
        assert_eq!(
            read("worker --data-dir= --token-file=/t"),
            "/run/systemd/resolve/resolv.conf"
        );
        for (command, worker) in [
            ("controller --enable-worker --enable-worker=false", false),
            ("controller --single=false --single", true),
            ("server --enable-worker=1", true),
        ] {
            let unit = unit(command);
            let f = node(&[("/etc/systemd/system/k0scontroller.service", unit.as_str())]);
            assert_eq!(f.flavour.kind == FlavourKind::K0s, worker, "{command}");
        }
    }

    /// A controller runs a kubelet only with `--enable-worker` (or `--single`); a running
    /// kubelet that is not k0s's makes a k0s unit a leftover.
    #[test]
    fn a_controller_counts_only_with_its_worker_and_never_over_a_running_kubelet() {
        for (command, worker) in [
            ("controller --enable-worker=true", true),
            ("controller --enable-worker", true),
            ("controller --single=true", true),
            ("controller --enable-worker=false", false),
            ("controller", false),
        ] {
            let unit = unit(command);
            let f = node(&[
                ("/etc/systemd/system/k0scontroller.service", unit.as_str()),
                ("/var/lib/k0s/worker-profile.yaml", PROFILE),
                ("/etc/resolv.conf", STUB),
            ]);
            assert_eq!(f.flavour.kind == FlavourKind::K0s, worker, "{command}");
            if worker {
                assert_eq!(f.services.kubelet_unit, "k0scontroller", "{command}");
            }
        }
        let unit = unit("worker --token-file=/t");
        let mut raw = crate::testing::raw_from(&[
            ("/etc/systemd/system/k0sworker.service", unit.as_str()),
            (
                "/var/lib/kubelet/config.yaml",
                "kind: KubeletConfiguration\n",
            ),
            (
                "/proc/42/cmdline",
                "/usr/bin/kubelet\0--config=/var/lib/kubelet/config.yaml\0",
            ),
        ]);
        raw.pids.insert("kubelet".to_owned(), 42);
        let f = NodeFacts::from_raw("node1", &raw);
        assert_ne!(f.flavour.kind, FlavourKind::K0s);
    }
}
