//! A systemd service as systemd would start it: owns [`ServiceUnit`], built from the unit
//! file and its drop-ins as gathered from the node. Pure: it reads [`RawFacts`], never the
//! filesystem.
//!
//! This is where a kubelet's flags come from when no kubelet runs (so `/proc/PID/cmdline`
//! cannot say): kubeadm's `10-kubeadm.conf` sets `KUBELET_CONFIG_ARGS=--config=...` with
//! `Environment=` and reads `KUBELET_KUBEADM_ARGS` from `EnvironmentFile=`; kubeadm 1.10 and
//! earlier put `--cluster-dns` in `KUBELET_DNS_ARGS`; Kubespray's unit reads
//! `/etc/kubernetes/kubelet.env`; EKS nodeadm's reads `/etc/eks/kubelet/environment`; k3s and
//! RKE2 read `K3S_*`/`RKE2_*` variables from `/etc/default/%N`, `/etc/sysconfig/%N` and a
//! `.env` file beside the unit. The rules followed (systemd.unit(5), systemd.exec(5),
//! systemd.service(5)):
//!
//! - the unit file is the first found in `/etc/systemd/system`, `/run/systemd/system`,
//!   `/usr/local/lib/systemd/system`, `/usr/lib/systemd/system`, `/lib/systemd/system`;
//! - drop-ins `NAME.service.d/*.conf` from all those directories apply in file-name order,
//!   a name in an earlier directory hiding the same name in a later one;
//! - `Environment=` assignments apply in order; variables from `EnvironmentFile=` files
//!   (read in order, a `-` prefix making a missing file fine) override them;
//! - an empty `Environment=`, `EnvironmentFile=` or `ExecStart=` resets the list;
//! - in `ExecStart=`, a word that is exactly `$NAME` expands to the variable's value split at
//!   whitespace, and `${NAME}` expands in place without splitting;
//! - the specifiers `%n`, `%N`, `%p`, `%i` and `%%` are expanded.

use std::collections::BTreeMap;

use serde::Serialize;

use super::kubelet_flags::{EnvFile, Flag, parse_args, split_words, split_words_c};
use super::raw::{FileState, RawFacts, RawFile};

/// Where systemd looks for unit files, most important first. On split-/usr systems
/// /lib/systemd/system comes before /usr/lib/systemd/system; on merged-/usr ones they are
/// the same directory.
pub const UNIT_DIRS: &[&str] = &[
    "/etc/systemd/system",
    "/run/systemd/system",
    "/usr/local/lib/systemd/system",
    "/lib/systemd/system",
    "/usr/lib/systemd/system",
];

/// The services that run a kubelet, directly or inside themselves.
pub const KUBELET_SERVICES: &[&str] = &[
    "kubelet.service",
    "k3s.service",
    "k3s-agent.service",
    "rke2-server.service",
    "rke2-agent.service",
    "snap.microk8s.daemon-kubelite.service",
    "k0sworker.service",
    "k0scontroller.service",
];

/// A place in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct At {
    pub path: String,
    pub line: usize,
}

/// One variable of the service's environment and where it was set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvValue {
    pub value: String,
    pub at: At,
}

/// A word of the command line systemd would run, and where it was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Word {
    pub text: String,
    pub at: At,
    /// The variable it came from (`$KUBELET_ARGS`), if it was not written in ExecStart.
    pub var: Option<String>,
}

/// A service as systemd would start it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServiceUnit {
    /// `kubelet.service`.
    pub name: String,
    /// The unit file in use, if any (a unit may be made of drop-ins only).
    pub fragment: Option<String>,
    /// Drop-ins in the order they apply.
    pub dropins: Vec<String>,
    /// `EnvironmentFile=` entries in order: path, whether a missing file is fine, and where
    /// the entry was written.
    pub environment_files: Vec<(String, bool, At)>,
    /// The environment systemd gives the process (the variables this unit sets).
    pub environment: BTreeMap<String, EnvValue>,
    /// The command line of the `ExecStart=` in effect, variables expanded.
    pub argv: Vec<Word>,
    /// Why the command line cannot be known from the files: an environment file that could
    /// not be read, or two `ExecStart=` without a reset (systemd refuses such a unit).
    pub problem: Option<String>,
}

impl ServiceUnit {
    /// The service `name` (`kubelet.service`) from the gathered unit files; `None` when the
    /// node has neither a unit file nor a drop-in for it.
    pub fn from_raw(raw: &RawFacts, name: &str) -> Option<ServiceUnit> {
        Self::from_raw_with_aliases(raw, name, &[])
    }

    /// [`ServiceUnit::from_raw`] for a unit that may have `aliases`: an alias counts where
    /// a unit directory has a symlink of its name to a file named `name` (what `systemctl
    /// enable` makes of `Alias=`; systemd then knows the unit by both names), and its
    /// drop-ins apply too, merged with the unit's by file name. systemd lists the drop-in
    /// directories of the unit's own name in every unit directory, then those of each
    /// alias (systemd-stable @565916c2 src/shared/dropin.c `unit_file_find_dropin_paths`;
    /// the unit's name is its unit file's, src/core/load-fragment.c `unit_load_fragment`),
    /// and of a file name the first directory listed wins (src/basic/conf-files.c
    /// `files_add`).
    pub fn from_raw_with_aliases(
        raw: &RawFacts,
        name: &str,
        aliases: &[&str],
    ) -> Option<ServiceUnit> {
        let fragment = UNIT_DIRS
            .iter()
            .map(|dir| format!("{dir}/{name}"))
            .find(|path| present(raw, path));
        let linked = |alias: &str| {
            UNIT_DIRS.iter().any(|dir| {
                raw.get(&format!("{dir}/{alias}"))
                    .and_then(|f| f.symlink_target.as_deref())
                    .is_some_and(|target| target.rsplit('/').next() == Some(name))
            })
        };
        let names: Vec<&str> = std::iter::once(name)
            .chain(aliases.iter().copied().filter(|alias| linked(alias)))
            .collect();
        let dropins = dropins(raw, &names);
        if fragment.is_none() && dropins.is_empty() {
            return None;
        }
        let mut unit = ServiceUnit {
            name: name.to_owned(),
            fragment: fragment.clone(),
            dropins,
            environment_files: Vec::new(),
            environment: BTreeMap::new(),
            argv: Vec::new(),
            problem: None,
        };
        // systemd.unit(5): a unit file of size 0, or a link to /dev/null (which the gather
        // reads as an empty file), is masked: the unit cannot be started.
        if let Some(path) = &fragment
            && raw
                .get(path)
                .is_some_and(|f| f.content.is_empty() && !f.truncated)
        {
            unit.problem = Some(format!(
                "{path} is empty or a link to /dev/null: {name} is masked, and systemd does not start it"
            ));
            return Some(unit);
        }
        let files: Vec<String> = fragment.into_iter().chain(unit.dropins.clone()).collect();
        let exec_start = unit.read_settings(raw, &files);
        unit.read_environment_files(raw);
        if let Some((command, at)) = exec_start {
            unit.argv = expand_command(&command, &at, &unit.environment);
        }
        Some(unit)
    }

    /// Reads the `[Service]` settings of `files` (the unit file, then its drop-ins):
    /// `Environment=` into the environment, `EnvironmentFile=` into the list to read. Returns
    /// the `ExecStart=` in effect and where it was written.
    fn read_settings(&mut self, raw: &RawFacts, files: &[String]) -> Option<(String, At)> {
        let name = &self.name;
        let mut assignments: Vec<(String, EnvValue)> = Vec::new();
        let mut exec_start: Option<(String, At)> = None;
        for path in files {
            let Some(text) = raw.get(path).and_then(RawFile::text) else {
                continue;
            };
            for (line, key, value) in service_settings(&text) {
                let at = At {
                    path: path.clone(),
                    line,
                };
                let value = expand_specifiers(&value, name);
                match key.as_str() {
                    "Environment" if value.trim().is_empty() => assignments.clear(),
                    "Environment" => assignments.extend(environment_assignments(&value, &at)),
                    "EnvironmentFile" if value.trim().is_empty() => self.environment_files.clear(),
                    "EnvironmentFile" => {
                        let value = value.trim();
                        let (optional, file) = match value.strip_prefix('-') {
                            Some(rest) => (true, rest.to_owned()),
                            None => (false, value.to_owned()),
                        };
                        self.environment_files.push((file, optional, at));
                    }
                    "ExecStart" if value.trim().is_empty() => exec_start = None,
                    "ExecStart" => {
                        if let Some((_, first)) = &exec_start {
                            self.problem = Some(format!(
                                "{}:{} and {}:{} both set ExecStart= without a reset: systemd refuses to start {name}",
                                first.path, first.line, at.path, at.line
                            ));
                        }
                        exec_start = Some((value, at));
                    }
                    _ => {}
                }
            }
        }
        self.environment.extend(assignments);
        exec_start
    }

    /// Adds the variables of the unit's `EnvironmentFile=`s to its environment; one that
    /// cannot be read is the unit's problem.
    fn read_environment_files(&mut self, raw: &RawFacts) {
        let name = &self.name;
        for (file, optional, _) in &self.environment_files {
            let text = match raw.get(file) {
                Some(f) if f.state == FileState::Present => f.text(),
                Some(f) if f.state == FileState::Missing => {
                    if !optional {
                        self.problem = Some(format!(
                            "EnvironmentFile={file} does not exist: systemd refuses to start {name}"
                        ));
                    }
                    continue;
                }
                Some(_) => None,
                None => {
                    self.problem
                        .get_or_insert(format!("EnvironmentFile={file} was not gathered"));
                    continue;
                }
            };
            let Some(text) = text else {
                self.problem
                    .get_or_insert(format!("EnvironmentFile={file} could not be read"));
                continue;
            };
            let env = EnvFile::parse(&text);
            for var in env.vars.iter().filter(|v| !v.exported) {
                self.environment.insert(
                    var.name.clone(),
                    EnvValue {
                        value: var.value.clone(),
                        at: At {
                            path: file.clone(),
                            line: var.line,
                        },
                    },
                );
            }
        }
    }

    /// The flags of the command line (everything after the program), with where each was
    /// written and the variable it came from.
    pub fn flags(&self) -> Vec<(Flag, At, Option<String>)> {
        let words: Vec<(String, usize)> = self
            .argv
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, w)| (w.text.clone(), i))
            .collect();
        parse_args(words)
            .into_iter()
            .filter_map(|flag| {
                let word = self.argv.get(flag.line)?;
                let at = word.at.clone();
                Some((
                    Flag {
                        line: at.line,
                        ..flag
                    },
                    at,
                    word.var.clone(),
                ))
            })
            .collect()
    }

    /// Every file the unit is made of: the unit file and its drop-ins.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.fragment
            .iter()
            .chain(&self.dropins)
            .map(String::as_str)
    }
}

/// The drop-ins of a unit known by `names`, by file name; the first directory that has a
/// name wins, the directories of each name in turn.
fn dropins(raw: &RawFacts, names: &[&str]) -> Vec<String> {
    let mut dropins: BTreeMap<String, String> = BTreeMap::new();
    for (name, dir) in names
        .iter()
        .flat_map(|name| UNIT_DIRS.iter().map(move |dir| (name, dir)))
    {
        let dropin_dir = format!("{dir}/{name}.d");
        for (path, file) in raw.files_in(&dropin_dir) {
            let Some(file_name) = path.rsplit('/').next() else {
                continue;
            };
            if file_name.ends_with(".conf") && file.state == FileState::Present {
                dropins
                    .entry(file_name.to_owned())
                    .or_insert_with(|| path.to_owned());
            }
        }
    }
    dropins.into_values().collect()
}

/// The `NAME=value` words of one `Environment=` line (others are ignored, as systemd does).
fn environment_assignments(value: &str, at: &At) -> Vec<(String, EnvValue)> {
    split_words_c(value, at.line)
        .into_iter()
        .filter_map(|(word, _)| {
            let (k, v) = word.split_once('=')?;
            valid_name(k).then(|| {
                (
                    k.to_owned(),
                    EnvValue {
                        value: v.to_owned(),
                        at: at.clone(),
                    },
                )
            })
        })
        .collect()
}

fn present(raw: &RawFacts, path: &str) -> bool {
    raw.get(path).is_some_and(|f| f.state == FileState::Present)
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The `[Service]` settings of a unit file: (line, key, value), continuation lines joined,
/// comments skipped.
fn service_settings(text: &str) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut pending: Option<(usize, String)> = None;
    for (index, raw_line) in text.lines().enumerate() {
        let line = raw_line.trim_end_matches('\r');
        // systemd.syntax(7): comment lines within a continuation are ignored.
        if pending.is_some() && matches!(line.trim_start().chars().next(), Some('#' | ';')) {
            continue;
        }
        let (start, mut joined) = match pending.take() {
            Some((start, so_far)) => (start, so_far + " " + line.trim_start()),
            None => {
                let trimmed = line.trim();
                if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
                    continue;
                }
                (index + 1, trimmed.to_owned())
            }
        };
        if joined.ends_with('\\') {
            joined.pop();
            pending = Some((start, joined));
            continue;
        }
        if joined.starts_with('[') && joined.ends_with(']') {
            section = joined[1..joined.len() - 1].to_owned();
            continue;
        }
        if section != "Service" {
            continue;
        }
        if let Some((key, value)) = joined.split_once('=') {
            out.push((start, key.trim().to_owned(), value.trim().to_owned()));
        }
    }
    out
}

/// systemd specifiers that name the unit: `%n` (kubelet.service), `%N` and `%p` (kubelet),
/// `%i` (the instance, empty here), `%%`. Others are left as written.
fn expand_specifiers(value: &str, unit: &str) -> String {
    if !value.contains('%') {
        return value.to_owned();
    }
    let prefix = unit.rsplit_once('.').map_or(unit, |(p, _)| p);
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push_str(unit),
            Some('N' | 'p') => out.push_str(prefix),
            Some('i') => {}
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// `ExecStart=` → argv, with systemd's prefixes (`-@:+!`) dropped and variables expanded.
/// With `@` the second word is the name the program is given as its argv[0]
/// (systemd.service(5)), no argument: it is left out, so that argv[0] stays the program
/// run and what follows its arguments.
fn expand_command(command: &str, at: &At, env: &BTreeMap<String, EnvValue>) -> Vec<Word> {
    let rest = command.trim_start_matches(['-', '@', ':', '+', '!']);
    let named = command[..command.len() - rest.len()].contains('@');
    let command = rest;
    let mut argv = Vec::new();
    for (index, (word, _)) in split_words_c(command, at.line).into_iter().enumerate() {
        if named && index == 1 {
            continue;
        }
        let whole = word
            .strip_prefix('$')
            .filter(|name| valid_name(name))
            .or_else(|| {
                word.strip_prefix("${")
                    .and_then(|w| w.strip_suffix('}'))
                    .filter(|name| valid_name(name))
            });
        match whole {
            // `$NAME` splits at whitespace; `${NAME}` alone is one word (both vanish when unset).
            // An unset `${NAME}` is an empty argument; an unset `$NAME` is none.
            Some(name) if word.starts_with("${") && !env.contains_key(name) => argv.push(Word {
                text: String::new(),
                at: at.clone(),
                var: Some(name.to_owned()),
            }),
            Some(name) => {
                if let Some(var) = env.get(name) {
                    if word.starts_with("${") {
                        argv.push(Word {
                            text: var.value.clone(),
                            at: var.at.clone(),
                            var: Some(name.to_owned()),
                        });
                    } else {
                        for (piece, line) in split_words(&var.value, var.at.line) {
                            argv.push(Word {
                                text: piece,
                                at: At {
                                    path: var.at.path.clone(),
                                    line,
                                },
                                var: Some(name.to_owned()),
                            });
                        }
                    }
                }
            }
            None => argv.push(Word {
                text: expand_braced(&word, env),
                at: at.clone(),
                var: None,
            }),
        }
    }
    argv
}

/// `${NAME}` inside a word, replaced in place.
fn expand_braced(word: &str, env: &BTreeMap<String, EnvValue>) -> String {
    let mut out = String::new();
    let mut rest = word;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find('}') {
            Some(end) if valid_name(&after[..end]) => {
                if let Some(var) = env.get(&after[..end]) {
                    out.push_str(&var.value);
                }
                rest = &after[end + 1..];
            }
            _ => {
                out.push_str("${");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::raw::RawFacts;

    fn raw(files: &[(&str, &str)]) -> RawFacts {
        crate::testing::raw_from(files)
    }

    /// kubernetes/release d55c53d8, debian/xenial/kubeadm/channel/stable/etc/systemd/system/
    /// kubelet.service.d/post-1.10/10-kubeadm.conf (kubeadm 1.11 and later, verbatim).
    const KUBEADM_DROPIN: &str = r#"# Note: This dropin only works with kubeadm and kubelet v1.11+
[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"
Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"
# This is a file that "kubeadm init" and "kubeadm join" generates at runtime, populating the KUBELET_KUBEADM_ARGS variable dynamically
EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
# This is a file that the user can use for overrides of the kubelet args as a last resort. Preferably, the user should use
# the .NodeRegistration.KubeletExtraArgs object in the configuration files instead. KUBELET_EXTRA_ARGS should be sourced from this file.
EnvironmentFile=-/etc/default/kubelet
ExecStart=
ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
"#;

    /// The same repository at b90c762a, kubelet.service.d/post-1.8/10-kubeadm.conf
    /// (kubeadm 1.10, verbatim): DNS flags inline, no config file.
    const KUBEADM_1_10_DROPIN: &str = r#"[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"
Environment="KUBELET_SYSTEM_PODS_ARGS=--pod-manifest-path=/etc/kubernetes/manifests --allow-privileged=true"
Environment="KUBELET_NETWORK_ARGS=--network-plugin=cni --cni-conf-dir=/etc/cni/net.d --cni-bin-dir=/opt/cni/bin"
Environment="KUBELET_DNS_ARGS=--cluster-dns=10.96.0.10 --cluster-domain=cluster.local"
Environment="KUBELET_AUTHZ_ARGS=--authorization-mode=Webhook --client-ca-file=/etc/kubernetes/pki/ca.crt"
Environment="KUBELET_CADVISOR_ARGS=--cadvisor-port=0"
Environment="KUBELET_CERTIFICATE_ARGS=--rotate-certificates=true --cert-dir=/var/lib/kubelet/pki"
ExecStart=
ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_SYSTEM_PODS_ARGS $KUBELET_NETWORK_ARGS $KUBELET_DNS_ARGS $KUBELET_AUTHZ_ARGS $KUBELET_CADVISOR_ARGS $KUBELET_CERTIFICATE_ARGS $KUBELET_EXTRA_ARGS
"#;

    const KUBELET_SERVICE: &str =
        "[Unit]\nDescription=kubelet\n[Service]\nExecStart=/usr/bin/kubelet\nRestart=always\n";

    fn flags(unit: &ServiceUnit) -> Vec<String> {
        unit.flags()
            .into_iter()
            .map(|(f, at, _)| {
                format!(
                    "{}={} @{}:{}",
                    f.name,
                    f.value.unwrap_or_default(),
                    at.path,
                    at.line
                )
            })
            .collect()
    }

    #[test]
    fn kubeadm_dropin_env_files_override_environment_and_expand_in_order() {
        let raw = raw(&[
            ("/usr/lib/systemd/system/kubelet.service", KUBELET_SERVICE),
            (
                "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf",
                KUBEADM_DROPIN,
            ),
            (
                "/var/lib/kubelet/kubeadm-flags.env",
                "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock --pod-infra-container-image=registry.k8s.io/pause:3.9\"\n",
            ),
            (
                "/etc/default/kubelet",
                "KUBELET_EXTRA_ARGS=--resolv-conf=/etc/kubelet-resolv.conf\n",
            ),
        ]);
        let unit = ServiceUnit::from_raw(&raw, "kubelet.service").expect("unit");
        assert_eq!(
            unit.fragment.as_deref(),
            Some("/usr/lib/systemd/system/kubelet.service")
        );
        assert_eq!(
            flags(&unit),
            [
                "bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf @/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf:3",
                "kubeconfig=/etc/kubernetes/kubelet.conf @/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf:3",
                "config=/var/lib/kubelet/config.yaml @/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf:4",
                "container-runtime-endpoint=unix:///var/run/containerd/containerd.sock @/var/lib/kubelet/kubeadm-flags.env:1",
                "pod-infra-container-image=registry.k8s.io/pause:3.9 @/var/lib/kubelet/kubeadm-flags.env:1",
                "resolv-conf=/etc/kubelet-resolv.conf @/etc/default/kubelet:1",
            ]
        );
    }

    #[test]
    fn kubeadm_1_10_dns_flags_come_from_the_dropin() {
        let raw = raw(&[
            ("/lib/systemd/system/kubelet.service", KUBELET_SERVICE),
            (
                "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf",
                KUBEADM_1_10_DROPIN,
            ),
        ]);
        let unit = ServiceUnit::from_raw(&raw, "kubelet.service").expect("unit");
        let flags = flags(&unit);
        assert!(
            flags.contains(
                &"cluster-dns=10.96.0.10 @/etc/systemd/system/kubelet.service.d/10-kubeadm.conf:5"
                    .to_owned()
            ),
            "{flags:?}"
        );
        assert!(!flags.iter().any(|f| f.starts_with("config=")), "{flags:?}");
    }

    #[test]
    fn an_etc_dropin_hides_the_same_name_in_usr_lib_and_resets_apply() {
        let raw = raw(&[
            ("/usr/lib/systemd/system/kubelet.service", KUBELET_SERVICE),
            (
                "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf",
                KUBEADM_DROPIN,
            ),
            (
                "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf",
                "[Service]\nExecStart=\nExecStart=/opt/bin/kubelet --config=/etc/k/config.yaml\n",
            ),
            (
                "/etc/systemd/system/kubelet.service.d/20-dns.conf",
                "[Service]\nExecStart=\nExecStart=/opt/bin/kubelet \\\n  --config=/etc/k/other.yaml ${EXTRA}\nEnvironment=\"EXTRA=--cluster-dns=10.0.0.10\"\n",
            ),
        ]);
        let unit = ServiceUnit::from_raw(&raw, "kubelet.service").expect("unit");
        assert_eq!(
            unit.dropins,
            [
                "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf",
                "/etc/systemd/system/kubelet.service.d/20-dns.conf"
            ]
        );
        assert_eq!(
            flags(&unit),
            [
                "config=/etc/k/other.yaml @/etc/systemd/system/kubelet.service.d/20-dns.conf:3",
                "cluster-dns=10.0.0.10 @/etc/systemd/system/kubelet.service.d/20-dns.conf:5",
            ]
        );
    }

    #[test]
    fn env_files_override_environment_and_comments_in_continuations_are_ignored() {
        let raw = raw(&[
            (
                "/etc/systemd/system/kubelet.service",
                "[Service]\nEnvironment=\"ARGS=--resolv-conf=/from/environment\"\nEnvironmentFile=/etc/kubelet.env\nExecStart=/usr/bin/kubelet \\\n#  --cluster-dns=10.0.0.1 \\\n  $ARGS\n",
            ),
            ("/etc/kubelet.env", "ARGS=--resolv-conf=/from/env-file\n"),
        ]);
        let unit = ServiceUnit::from_raw(&raw, "kubelet.service").expect("unit");
        assert_eq!(
            flags(&unit),
            ["resolv-conf=/from/env-file @/etc/kubelet.env:1"]
        );
        assert_eq!(unit.problem, None);
    }

    #[test]
    fn what_makes_the_command_line_unknowable_is_said() {
        let unreadable = {
            let mut r = raw(&[(
                "/etc/systemd/system/kubelet.service",
                "[Service]\nEnvironmentFile=-/etc/default/kubelet\nExecStart=/usr/bin/kubelet $KUBELET_EXTRA_ARGS\n",
            )]);
            r.file("/etc/default/kubelet", FileState::Unreadable, None);
            r
        };
        let unit = ServiceUnit::from_raw(&unreadable, "kubelet.service").expect("unit");
        assert!(
            unit.problem
                .as_deref()
                .is_some_and(|p| p.contains("/etc/default/kubelet could not be read")),
            "{unit:?}"
        );
        let twice = raw(&[
            (
                "/usr/lib/systemd/system/kubelet.service",
                "[Service]\nExecStart=/usr/bin/kubelet\n",
            ),
            (
                "/etc/systemd/system/kubelet.service.d/20-dns.conf",
                "[Service]\nExecStart=/usr/bin/kubelet --resolv-conf=/x\n",
            ),
        ]);
        let unit = ServiceUnit::from_raw(&twice, "kubelet.service").expect("unit");
        assert!(
            unit.problem
                .as_deref()
                .is_some_and(|p| p.contains("without a reset")),
            "{unit:?}"
        );
    }

    #[test]
    fn specifiers_name_rke2_env_files() {
        // rancher/rke2 6ce1a801 bundle/lib/systemd/system/rke2-server.service (excerpt).
        let raw = raw(&[
            (
                "/usr/local/lib/systemd/system/rke2-server.service",
                "[Service]\nEnvironmentFile=-/etc/default/%N\nEnvironmentFile=-/etc/sysconfig/%N\nEnvironmentFile=-/usr/local/lib/systemd/system/%N.env\nExecStart=/usr/local/bin/rke2 server\n",
            ),
            (
                "/etc/default/rke2-server",
                "RKE2_RESOLV_CONF=/etc/rke2-resolv.conf\n",
            ),
            (
                "/usr/local/lib/systemd/system/rke2-server.env",
                "HOME=/root\n",
            ),
        ]);
        let unit = ServiceUnit::from_raw(&raw, "rke2-server.service").expect("unit");
        assert_eq!(
            unit.environment["RKE2_RESOLV_CONF"],
            EnvValue {
                value: "/etc/rke2-resolv.conf".into(),
                at: At {
                    path: "/etc/default/rke2-server".into(),
                    line: 1
                }
            }
        );
        assert_eq!(
            unit.environment_files[2].0,
            "/usr/local/lib/systemd/system/rke2-server.env"
        );
        assert!(ServiceUnit::from_raw(&raw, "kubelet.service").is_none());
    }
}
