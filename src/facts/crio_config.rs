//! CRI-O's choice of pod network: owns [`CrioNetwork`]. Pure: it reads gathered files.
//!
//! CRI-O gives pods the network its `[crio.network]` `cni_default_network` names, and the
//! first CNI file by name only where that is unset or "" (cri-o/cri-o @f954a17e
//! docs/crio.conf.5.md; vendor/github.com/cri-o/ocicni v0.5.0 ocicni.go: `loadNetworks`
//! takes the first network it loads as the default, and `syncNetworkConfig` keeps a
//! default set by configuration). The setting is read from /etc/crio/crio.conf, then from
//! every file of /etc/crio/crio.conf.d in name order, the last one that sets it winning
//! (docs/crio.conf.d.5.md; pkg/config/config.go `UpdateFromPath` walks the directory and
//! decodes each file over what came before). Over the files, the variables and flags CRI-O's
//! systemd unit starts it with: [`unit_options`]. What the files say of the network's name
//! and of its directory is known or not apart ([`CrioFiles`]), as a flag overrides each
//! apart (internal/criocli/criocli.go `mergeConfig`: `mergeConfigFiles` first, then
//! `mergeNetworkConfig` sets `NetworkDir` and `CNIDefaultNetwork` each where its flag is set).

use serde::Serialize;

use super::raw::{FileState, RawFacts};
use super::systemd_unit::{ServiceUnit, Word};

/// CRI-O's main configuration file.
pub const CRIO_CONF: &str = "/etc/crio/crio.conf";
/// Its drop-in directory (pkg/config/config_unix.go `CrioConfigDropInPath`).
pub const CRIO_CONF_D: &str = "/etc/crio/crio.conf.d";
/// The environment file of CRI-O's unit (contrib/systemd/crio.service @f954a17e:
/// `EnvironmentFile=-/etc/sysconfig/crio`, `ExecStart=crio $CRIO_CONFIG_OPTIONS …
/// $CRIO_NETWORK_OPTIONS …`).
pub const CRIO_SYSCONFIG: &str = "/etc/sysconfig/crio";
/// The directory CRI-O reads CNI files from where `network_dir` is not set
/// (pkg/config/config.go `NetworkDir: cniConfigDir`).
const CRIO_NETWORK_DIR: &str = "/etc/cni/net.d";
/// The environment variables that CRI-O's flags read and that may choose another network
/// or configuration (internal/criocli/criocli.go @f954a17e:
/// `EnvVars` of `--config`, `--config-dir`, `--cni-default-network`, `--cni-config-dir`).
const CRIO_VARIABLES: &[&str] = &[
    "CONTAINER_CONFIG",
    "CONTAINER_CONFIG_DIR",
    "CONTAINER_CNI_DEFAULT_NETWORK",
    "CONTAINER_CNI_CONFIG_DIR",
];
/// The flags of CRI-O that choose its configuration or its network over the files dnsfix
/// reads, with their one-letter aliases (internal/criocli/criocli.go @f954a17e
/// getCrioFlags: `config` alias `c`, `config-dir` alias `d`, `cni-default-network`,
/// `cni-config-dir`).
const CRIO_FLAGS: &[(&str, Option<&str>)] = &[
    ("config", Some("c")),
    ("config-dir", Some("d")),
    (DEFAULT_NETWORK_FLAG, None),
    ("cni-config-dir", None),
];
/// CRI-O's boolean flags, which take no value from the next word: every `cli.BoolFlag` of
/// internal/criocli/criocli.go @f954a17e getCrioFlags with its aliases, and urfave/cli's
/// own `--help`/`-h` and `--version`/`-v` (v2.27.7 flag.go `HelpFlag`, `VersionFlag`).
const CRIO_BOOL_FLAGS: &[&str] = &[
    "blockio-reload",
    "selinux",
    "log-journald",
    "add-inheritable-capabilities",
    "profile",
    "enable-profile-unix-socket",
    "enable-metrics",
    "enable-tracing",
    "enable-nri",
    "nri-disable-connections",
    "nri-enable-default-validator",
    "nri-validator-reject-oci-hook-adjustment",
    "nri-validator-reject-runtime-default-seccomp-adjustment",
    "nri-validator-reject-unconfined-seccomp-adjustment",
    "nri-validator-reject-custom-seccomp-adjustment",
    "nri-validator-reject-namespace-adjustment",
    "auto-reload-registries",
    "read-only",
    "device-ownership-from-security-context",
    "drop-infra-ctr",
    "no-pivot",
    "stream-enable-tls",
    "internal-wipe",
    "internal-repair",
    "oci-artifact-mount-support",
    "enable-criu-support",
    "enable-pod-events",
    "hostnetwork-disable-selinux",
    "disable-hostport-mapping",
    // Removed since, in releases still deployed: v1.24.0 to v1.29.x (03c4bcacc8, in
    // v1.30.0, removed it).
    "seccomp-use-default-when-empty",
    "help",
    "h",
    "version",
    "v",
];
/// CRI-O's other flags (string, path, number, duration, list: each takes a value, from the
/// next word where it has no `=`): every other flag of getCrioFlags @f954a17e with its
/// aliases.
const CRIO_VALUE_FLAGS: &[&str] = &[
    "config",
    "c",
    "config-dir",
    "d",
    "conmon",
    "conmon-cgroup",
    "listen",
    "stream-address",
    "stream-port",
    "log",
    "log-format",
    "log-level",
    "l",
    "log-filter",
    "log-dir",
    "pause-command",
    "pause-image",
    "pause-image-auth-file",
    "separate-pull-cgroup",
    "global-auth-file",
    "namespaced-auth-dir",
    "signature-policy",
    "signature-policy-dir",
    "root",
    "r",
    "runroot",
    "imagestore",
    "storage-driver",
    "s",
    "storage-opt",
    "insecure-registry",
    "default-transport",
    "decryption-keys-path",
    "additional-artifact-stores",
    "default-runtime",
    "runtimes",
    "seccomp-profile",
    "privileged-seccomp-profile",
    "apparmor-profile",
    "blockio-config-file",
    "irqbalance-config-file",
    "rdt-config-file",
    "cgroup-manager",
    "pids-limit",
    "log-size-max",
    "cni-default-network",
    "cni-config-dir",
    "cni-plugin-dir",
    "cni-status-grace-period",
    "image-volumes",
    "hooks-dir",
    "default-mounts-file",
    "default-capabilities",
    "default-sysctls",
    "default-ulimits",
    "profile-cpu",
    "profile-mem",
    "profile-port",
    "metrics-host",
    "metrics-port",
    "metrics-socket",
    "metrics-cert",
    "metrics-key",
    "metrics-collectors",
    "tracing-sampling-rate-per-million",
    "tracing-endpoint",
    "nri-listen",
    "nri-plugin-dir",
    "nri-plugin-config-dir",
    "nri-plugin-registration-timeout",
    "nri-plugin-request-timeout",
    "nri-validator-required-plugins",
    "nri-validator-tolerate-missing-plugins-annotation",
    "big-files-temporary-dir",
    "pull-progress-timeout",
    "bind-mount-prefix",
    "uid-mappings",
    "gid-mappings",
    "minimum-mappable-uid",
    "minimum-mappable-gid",
    "allowed-devices",
    "additional-devices",
    "cdi-spec-dirs",
    "conmon-env",
    "default-env",
    "min-injected-gomaxprocs",
    "container-attach-socket-dir",
    "container-exits-dir",
    "ctr-stop-timeout",
    "grpc-max-recv-msg-size",
    "grpc-max-send-msg-size",
    "pinns-path",
    "namespaces-dir",
    "stream-tls-ca",
    "tls-min-version",
    "tls-cipher-suites",
    "stream-tls-cert",
    "stream-tls-key",
    "stream-idle-timeout",
    "registries-conf",
    "registries-conf-dir",
    "address",
    "version-file",
    "version-file-persist",
    "infra-ctr-cpuset",
    "shared-cpuset",
    "clean-shutdown-file",
    "absent-mount-sources-to-reject",
    "stats-collection-period",
    "collection-period",
    "included-pod-metrics",
    "checkpoint-restore-container-level-enabled",
    "irqbalance-config-restore-file",
    "pinned-images",
    "timezone",
    "tz",
    "short-name-mode",
    // Removed since, in releases still deployed: `--registry` (a string slice) to v1.30.x
    // (82af00dd29, in v1.31.0, removed it), `--nri-config-file` (a string) in v1.26.x
    // (getCrioFlags @v1.26.0 and @v1.27.0).
    "registry",
    "nri-config-file",
];
/// Flags whose kind changed between releases still deployed, so that without `=` whether
/// they take the next word depends on CRI-O's version: `--nri-disable-connections` is a
/// `cli.StringFlag` in getCrioFlags @v1.27.0 to @v1.31.0 and a `cli.BoolFlag` from
/// @v1.32.0.
const CRIO_CHANGED_FLAGS: &[&str] = &["nri-disable-connections"];
/// The unit CRI-O runs as (contrib/systemd/crio.service).
pub const CRIO_UNIT: &str = "crio.service";
/// Its alias (`Alias=cri-o.service`): where `systemctl enable` has linked it, systemd reads
/// the drop-ins of this name too.
pub const CRIO_ALIAS: &str = "cri-o.service";

/// What CRI-O's configuration says of the pod network.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CrioNetwork {
    /// The network `cni_default_network` names, where a file sets it to a name.
    pub default_network: String,
    /// The file and line that set it last.
    pub at: String,
}

/// What CRI-O's configuration files say of its pod network: the network's name and the
/// directory of its CNI files, each known or not apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrioFiles {
    /// The network the files' `cni_default_network` names; `Ok(None)` where none sets it
    /// or the last that sets it sets "" (the first file by name, then); why not known
    /// where a file sets it in a form dnsfix does not read.
    pub network: Result<Option<CrioNetwork>, String>,
    /// Why CRI-O may read its CNI files from another directory than /etc/cni/net.d, where
    /// a file's `network_dir` names another or is set in a form dnsfix does not read.
    pub directory: Result<(), String>,
}

impl CrioFiles {
    /// What CRI-O's configuration files say of the network ([`CrioFiles`]). An error says
    /// why neither is known: a file that could not be read, or not whole (CRI-O reads every
    /// file of the drop-in directory and stops on one it cannot), which may set either.
    /// CRI-O's TOML decoder (BurntSushi/toml v1.6.0, cri-o @f954a17e go.mod; decode.go
    /// @d733fc53 `unifyStruct`) matches table and key names with `strings.EqualFold`, so
    /// `[CRIO.NETWORK]` and `CNI_DEFAULT_NETWORK` count too; dotted keys, inline tables and
    /// multi-line strings are TOML it accepts that this reading does not: such a setting
    /// leaves its own part unknown, whatever later files set. The directory is unknown too
    /// where `network_dir` names one other than /etc/cni/net.d, the only one dnsfix reads
    /// for CRI-O. CRI-O's unit, whose options override the files, is read apart
    /// ([`unit_options`]).
    pub fn from_raw(raw: &RawFacts) -> Result<CrioFiles, String> {
        let prefix = format!("{CRIO_CONF_D}/");
        let mut files: Vec<&str> = raw
            .order
            .iter()
            .map(String::as_str)
            .filter(|p| p.starts_with(&prefix))
            .collect();
        // filepath.Walk's order: each directory's names sorted, a subdirectory walked
        // where its name comes.
        files.sort_by(|a, b| a.split('/').cmp(b.split('/')));
        files.dedup();
        let mut last = Ok(None);
        let mut network_dir = Ok(None);
        for path in std::iter::once(CRIO_CONF).chain(files) {
            let Some(file) = raw.get(path) else {
                continue;
            };
            let text = match file.state {
                FileState::Missing if file.symlink_target.is_some() => {
                    return Err(format!(
                        "{path} is a symlink to nothing, which CRI-O fails to read"
                    ));
                }
                FileState::Directory if file.symlink_target.is_some() => {
                    return Err(format!(
                        "{path} is a symlink to a directory, which CRI-O fails to read"
                    ));
                }
                FileState::Missing | FileState::Directory => continue,
                FileState::Unreadable => return Err(format!("{path} could not be read")),
                FileState::Present if file.truncated => {
                    return Err(format!("{path} is too large to read whole"));
                }
                FileState::Present => match file.text() {
                    Some(text) => text,
                    None => return Err(format!("{path} is not text dnsfix can read")),
                },
            };
            let unread = |key: &'static str| {
                move |line| format!("{path}:{line} sets {key} in a form dnsfix does not read")
            };
            if last.is_ok() {
                match setting(&text, DEFAULT_NETWORK) {
                    Ok(Some((value, line))) => {
                        last = Ok(Some(CrioNetwork {
                            default_network: value,
                            at: format!("{path}:{line}"),
                        }));
                    }
                    Ok(None) => {}
                    Err(line) => last = Err(unread(DEFAULT_NETWORK)(line)),
                }
            }
            if network_dir.is_ok() {
                match setting(&text, NETWORK_DIR) {
                    Ok(Some((dir, line))) => {
                        network_dir = Ok(Some((dir, format!("{path}:{line}"))))
                    }
                    Ok(None) => {}
                    Err(line) => network_dir = Err(unread(NETWORK_DIR)(line)),
                }
            }
        }
        let directory = match network_dir {
            Ok(Some((dir, at))) if !is_crio_network_dir(&dir) => Err(format!(
                "{at} sets network_dir to {dir:?}: CRI-O reads its CNI files there, not from {CRIO_NETWORK_DIR}, and dnsfix does not read that directory"
            )),
            Ok(_) => Ok(()),
            Err(why) => Err(why),
        };
        Ok(CrioFiles {
            network: last.map(|n| n.filter(|n| !n.default_network.is_empty())),
            directory,
        })
    }
}

/// Why the network CRI-O gives pods is not known, by how much.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CrioUnknown {
    /// Only its name: CRI-O reads /etc/cni/net.d as dnsfix does, and may pick another
    /// network of it than the first by name.
    Name(String),
    /// The directory too: CRI-O may read its CNI files from one dnsfix does not, so what
    /// /etc/cni/net.d holds says nothing of its network.
    Directory(String),
}

/// What CRI-O's unit starts it with, as far as the pod network goes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnitOptions {
    /// The network `cni-default-network` (or its variable) names over the files', where the
    /// unit sets it, with where; "" makes CRI-O pick the first file by name.
    pub network: Option<CrioNetwork>,
    /// Where the unit sets `cni-config-dir` (or its variable) to CRI-O's default,
    /// /etc/cni/net.d: CRI-O then reads its CNI files there whatever its files'
    /// `network_dir` says (internal/criocli/criocli.go @f954a17e `mergeNetworkConfig`, after
    /// `mergeConfigFiles`). One naming another directory leaves the network unknown.
    pub network_dir: Option<String>,
    /// Flags of its command line that dnsfix does not know, written `--name=value` and taken
    /// as flags with a value, each as where it was written.
    pub unknown_flags: Vec<String>,
}

/// What CRI-O's unit starts it with, as far as the pod network goes ([`UnitOptions`]); an
/// error where it leaves the network unknown. `--cni-config-dir` and `--config-dir` (or
/// their variables) naming CRI-O's defaults (/etc/cni/net.d, /etc/crio/crio.conf.d) change
/// nothing.
///
/// The unit is read as systemd starts it ([`ServiceUnit`]: the unit file of [`CRIO_UNIT`]
/// in any unit directory, its drop-ins (those of its alias [`CRIO_ALIAS`] too, where
/// enabled), `Environment=`, `EnvironmentFile=`, the `ExecStart=` in effect). CRI-O ships
/// it with `EnvironmentFile=-/etc/sysconfig/crio` and
/// `$CRIO_*_OPTIONS` on its command line (contrib/systemd/crio.service @f954a17e); the
/// Debian packages of cri-o/packaging (@b111fe95 templates/latest/cri-o/cri-o.spec: `sed
/// s;/etc/sysconfig/crio;/etc/default/crio;` where built by debbuild) read
/// /etc/default/crio instead; Kubespray copies the unit of CRI-O's release bundle to
/// /etc/systemd/system/crio.service and adds drop-ins (@46dbdd39
/// roles/container-engine/cri-o/tasks/main.yaml). Where no unit of that name was gathered,
/// the one CRI-O ships is assumed ([`SHIPPED_UNIT`]).
///
/// CRI-O (urfave/cli v2.27.7, cri-o @f954a17e go.mod) takes a flag's value from its
/// variable (`EnvVars`) where that is in its environment, even empty (flag.go
/// `flagFromEnvOrFile`: `syscall.Getenv`'s found; flag_string.go `Apply` sets
/// `HasBeenSet`, so internal/criocli/criocli.go's `ctx.IsSet` holds and "" replaces the
/// files' setting), then from its command line, read as Go's flag package reads it
/// ([`command_line`]).
pub fn unit_options(raw: &RawFacts) -> Result<UnitOptions, CrioUnknown> {
    let shipped;
    let (raw, unit) = match ServiceUnit::from_raw_with_aliases(raw, CRIO_UNIT, &[CRIO_ALIAS]) {
        Some(unit) => (raw, unit),
        None => {
            shipped = shipped_unit(raw);
            match ServiceUnit::from_raw(&shipped, CRIO_UNIT) {
                Some(unit) => (&shipped, unit),
                None => return Ok(UnitOptions::default()),
            }
        }
    };
    let unknown = |why: String| {
        CrioUnknown::Directory(format!(
            "{why}: what CRI-O's unit starts it with is not known"
        ))
    };
    if let Some(problem) = &unit.problem {
        return Err(unknown(crate::text::escape(problem).into_owned()));
    }
    for (file, _, _) in &unit.environment_files {
        if raw.get(file).is_some_and(|f| f.truncated) {
            return Err(unknown(format!("{file} is too large to read whole")));
        }
    }
    let (flags, unknown_flags) = command_line(&unit).map_err(unknown)?;
    let from_environment = CRIO_VARIABLES.iter().filter_map(|name| {
        let var = unit.environment.get(*name)?;
        let flag = match *name {
            "CONTAINER_CONFIG" => "config",
            "CONTAINER_CONFIG_DIR" => "config-dir",
            "CONTAINER_CNI_DEFAULT_NETWORK" => DEFAULT_NETWORK_FLAG,
            _ => "cni-config-dir",
        };
        let at = format!("{}:{}", var.at.path, var.at.line);
        Some((flag, var.value.clone(), format!("{at} sets {name}")))
    });
    // A flag on the command line beats its variable (flag_string.go `Apply` gives the
    // variable's value as the default that parsing the arguments replaces), and a later
    // flag an earlier one.
    let mut set = std::collections::BTreeMap::new();
    for (flag, value, origin) in from_environment.chain(flags) {
        set.insert(flag, (value, origin));
    }
    let network = set.remove(DEFAULT_NETWORK_FLAG);
    let mut network_dir = None;
    for (flag, (value, origin)) in set {
        let default = match flag {
            "cni-config-dir" => is_crio_network_dir(&value),
            // Read with ctx.String only (criocli.go `GetConfigFromContext`: the walk of
            // `UpdateFromPath`), so its default named is the default.
            "config-dir" => same_path(&value, CRIO_CONF_D),
            _ => false,
        };
        if !default {
            return Err(CrioUnknown::Directory(format!(
                "{origin}, which CRI-O reads over its configuration files and which may choose another directory or configuration: dnsfix does not read it"
            )));
        }
        if flag == "cni-config-dir" {
            network_dir = Some(origin);
        }
    }
    Ok(UnitOptions {
        network: network.map(|(value, origin)| CrioNetwork {
            default_network: value,
            at: origin,
        }),
        network_dir,
        unknown_flags,
    })
}

/// The unit CRI-O's own `make install` and its release bundle install
/// (/usr/local/lib/systemd/system), assumed where none was gathered.
const SHIPPED_AT: &str = "/usr/local/lib/systemd/system/crio.service";

/// The `[Service]` lines of contrib/systemd/crio.service @f954a17e that make CRI-O's
/// environment and command line, verbatim.
const SHIPPED_UNIT: &str = "[Service]
Type=notify
EnvironmentFile=-/etc/sysconfig/crio
Environment=GOTRACEBACK=crash
ExecStart=/usr/local/bin/crio \\
          $CRIO_CONFIG_OPTIONS \\
          $CRIO_RUNTIME_OPTIONS \\
          $CRIO_STORAGE_OPTIONS \\
          $CRIO_NETWORK_OPTIONS \\
          $CRIO_METRICS_OPTIONS
";

/// Facts holding [`SHIPPED_UNIT`] and, as gathered, the environment file it reads.
fn shipped_unit(raw: &RawFacts) -> RawFacts {
    let mut shipped = RawFacts::default();
    shipped.file(
        SHIPPED_AT,
        FileState::Present,
        Some(SHIPPED_UNIT.as_bytes()),
    );
    match raw.get(CRIO_SYSCONFIG) {
        Some(file) => {
            shipped
                .files
                .insert(CRIO_SYSCONFIG.to_owned(), file.clone());
        }
        // Not looked at (no /etc/crio): as good as missing, which the unit allows (`-`).
        None => shipped.file(CRIO_SYSCONFIG, FileState::Missing, None),
    }
    shipped
}

/// The flag of CRI-O that names its pod network.
const DEFAULT_NETWORK_FLAG: &str = "cni-default-network";

/// Where a word of the command line came from, for a message: the variable and its file and
/// line, or the `ExecStart=` it was written in.
fn origin(word: &Word) -> String {
    let at = format!("{}:{}", word.at.path, word.at.line);
    let text = crate::text::escape(&word.text);
    match &word.var {
        Some(var) => format!("{at} sets {var} with {text}"),
        None => format!("{at} passes {text} in ExecStart="),
    }
}

/// The flags of [`CRIO_FLAGS`] on CRI-O's command line, each as the flag's long name, its
/// value and where it was written, in order; an error where the command line is not one
/// CRI-O starts with, or not one dnsfix can read. urfave/cli v2 hands the arguments to Go's
/// flag package (`FlagSet.Parse`, flag.go `parseOne`): `-name` or `--name`, the value after
/// `=` or, for a flag that is not boolean, as the next word; parsing stops at the first
/// word that is no flag (`-` or one not starting with `-`) and after `--`. A word left
/// over is a command to urfave/cli: CRI-O runs that subcommand (`config`, `wipe`, …) or
/// refuses (cmd/crio/main.go @f954a17e: `command %q not supported`), and the daemon does
/// not start; so does a value flag without its value. A flag dnsfix does not know (one of
/// a later CRI-O) written `--name=value` takes no other word whatever its kind, and is
/// returned apart (where it was written); written without `=`, whether it takes the next
/// word is not known, nor is the network.
type Flags = (Vec<(&'static str, String, String)>, Vec<String>);
fn command_line(unit: &ServiceUnit) -> Result<Flags, String> {
    let Some(program) = unit.argv.first() else {
        return Err(format!("{} has no ExecStart= in effect", unit.name));
    };
    if program.text.rsplit('/').next() != Some("crio") {
        return Err(format!(
            "{} runs {}, not crio",
            origin(program),
            crate::text::escape(&program.text)
        ));
    }
    let mut found = Vec::new();
    let mut unknown = Vec::new();
    let mut words = unit.argv.iter().skip(1);
    while let Some(word) = words.next() {
        let text = word.text.as_str();
        if text == "--" {
            if let Some(next) = words.next() {
                return Err(left_over(next));
            }
            break;
        }
        let Some(body) = text.strip_prefix("--").or_else(|| text.strip_prefix('-')) else {
            return Err(left_over(word));
        };
        if body.is_empty() {
            return Err(left_over(word));
        }
        if body.starts_with(['-', '=']) {
            return Err(format!(
                "{}: CRI-O refuses it (bad flag syntax) and does not start",
                origin(word)
            ));
        }
        let (name, value) = match body.split_once('=') {
            Some((name, value)) => (name, Some(value.to_owned())),
            None => (body, None),
        };
        let boolean = CRIO_BOOL_FLAGS.contains(&name);
        let known = boolean || CRIO_VALUE_FLAGS.contains(&name);
        if value.is_none() && CRIO_CHANGED_FLAGS.contains(&name) {
            return Err(format!(
                "{}, a flag that takes the next word as its value in some CRI-O releases and none in others: dnsfix cannot tell which",
                origin(word)
            ));
        }
        if !known {
            if value.is_none() {
                return Err(format!(
                    "{}, a flag dnsfix does not know, of which it cannot tell whether it takes the next word",
                    origin(word)
                ));
            }
            unknown.push(origin(word));
            continue;
        }
        let value = match value {
            Some(value) => value,
            None if boolean => String::new(),
            None => match words.next() {
                Some(next) => next.text.clone(),
                None => {
                    return Err(format!(
                        "{}, a flag that needs a value and has none: CRI-O does not start",
                        origin(word)
                    ));
                }
            },
        };
        if let Some(long) = CRIO_FLAGS
            .iter()
            .find(|(flag, alias)| name == *flag || Some(name) == *alias)
            .map(|(flag, _)| *flag)
        {
            found.push((long, value, origin(word)));
        }
    }
    Ok((found, unknown))
}

/// Why a word left over after CRI-O's flags means the daemon does not start.
fn left_over(word: &Word) -> String {
    format!(
        "{}, where CRI-O's flags end: CRI-O takes it for a command (a subcommand, or `command {:?} not supported`), and the daemon does not start",
        origin(word),
        word.text
    )
}

/// Whether `dir` is /etc/cni/net.d as filepath.Clean would give it: slashes doubled or
/// trailing, and `.` names, left out; a path with `..` in it is taken as another.
fn is_crio_network_dir(dir: &str) -> bool {
    same_path(dir, CRIO_NETWORK_DIR)
}

/// Whether the absolute `path` is `target` as filepath.Clean would give it (see
/// [`is_crio_network_dir`]).
fn same_path(path: &str, target: &str) -> bool {
    let names: Vec<&str> = path
        .split('/')
        .filter(|name| !name.is_empty() && *name != ".")
        .collect();
    path.starts_with('/') && format!("/{}", names.join("/")) == target
}

/// The key naming the pod network CRI-O picks.
const DEFAULT_NETWORK: &str = "cni_default_network";
/// The key naming the directory CRI-O reads CNI files from.
const NETWORK_DIR: &str = "network_dir";

/// A name as BurntSushi/toml compares it with a field's (`strings.EqualFold`): case folded,
/// the long s and the Kelvin sign too.
fn fold(name: &str) -> String {
    name.chars()
        .flat_map(char::to_lowercase)
        .map(|c| if c == '\u{17f}' { 's' } else { c })
        .collect()
}

/// The value a CRI-O TOML file gives `key` (`cni_default_network`, `network_dir`) in its
/// `[crio.network]` table, with its line: a basic ("…") or literal ('…') string, as
/// CRI-O's own template writes it (pkg/config/template.go `cni_default_network = "{{
/// .CNIDefaultNetwork }}"`), table and key in any case. The line of a setting in another form (a dotted key, an inline table,
/// a multi-line string, anything after the string but a comment, the key twice) is an
/// error: a line that names the key, outside a comment and another table's plain key, is
/// taken as setting it.
fn setting(text: &str, key: &str) -> Result<Option<(String, usize)>, usize> {
    let mut table = String::new();
    let mut found = None;
    let mut in_file = false;
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            table = fold(
                &header
                    .split(']')
                    .next()
                    .unwrap_or_default()
                    .split('.')
                    .map(|part| part.trim().trim_matches(['"', '\'']))
                    .collect::<Vec<_>>()
                    .join("."),
            );
            if fold(line).contains(key) {
                return Err(index + 1);
            }
            continue;
        }
        if !fold(line).contains(key) {
            continue;
        }
        let named = line
            .split_once('=')
            .map(|(k, v)| (fold(k.trim().trim_matches(['"', '\''])), v));
        match named {
            Some((named, _)) if named == key && table != "crio.network" => continue,
            // Another key whose value or comment names it: not a setting of it (a dotted
            // key or an inline table is).
            Some((named, value))
                if named != key && !named.contains('.') && !value.trim().starts_with('{') =>
            {
                continue;
            }
            Some((named, value)) if named == key && !in_file => match toml_string(value.trim()) {
                Some(value) => {
                    in_file = true;
                    found = Some((value, index + 1));
                }
                None => return Err(index + 1),
            },
            _ => return Err(index + 1),
        }
    }
    Ok(found)
}

/// A TOML basic or literal string at the start of `value`, nothing after it but a
/// comment; the escapes of a basic string other than `\"` and `\\` are kept as written (a
/// network name has none). A multi-line string (`"""`, `'''`) is none.
fn toml_string(value: &str) -> Option<String> {
    if value.starts_with("\"\"\"") || value.starts_with("'''") {
        return None;
    }
    let rest_ok = |rest: &str| {
        let rest = rest.trim_start();
        rest.is_empty() || rest.starts_with('#')
    };
    if let Some(rest) = value.strip_prefix('\'') {
        let (s, rest) = rest.split_once('\'')?;
        return rest_ok(rest).then(|| s.to_owned());
    }
    let rest = value.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = rest.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '"' => return rest_ok(&rest[at + 1..]).then_some(out),
            '\\' => match chars.next()?.1 {
                e @ ('"' | '\\') => out.push(e),
                e => {
                    out.push('\\');
                    out.push(e);
                }
            },
            c => out.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The [crio.network] table as `crio config` writes it (pkg/config/template.go
    /// @f954a17e: the comment and the commented default), with the setting made.
    const TEMPLATE: &str = r#"# The crio.network table containers settings pertaining to the management of
# CNI plugins.
[crio.network]

# The default CNI network name to be selected. If not set or "", then
# CRI-O will pick-up the first one found in network_dir.
# cni_default_network = ""

# Path to the directory where CNI configuration files are located.
# network_dir = "/etc/cni/net.d/"
"#;

    /// The network `raw`'s configuration files name, whatever their directory.
    fn named(raw: &RawFacts) -> Result<Option<CrioNetwork>, String> {
        CrioFiles::from_raw(raw).and_then(|files| files.network)
    }

    #[test]
    fn the_last_file_that_sets_it_wins() {
        let set = TEMPLATE.replace(
            "# cni_default_network = \"\"",
            "cni_default_network = \"k8s-pod-network\" # Calico's",
        );
        assert_ne!(set, TEMPLATE);
        let raw = crate::testing::raw_from(&[(CRIO_CONF, TEMPLATE)]);
        assert_eq!(named(&raw), Ok(None));
        let raw = crate::testing::raw_from(&[(CRIO_CONF, &set)]);
        assert_eq!(
            named(&raw),
            Ok(Some(CrioNetwork {
                default_network: "k8s-pod-network".into(),
                at: "/etc/crio/crio.conf:7".into()
            }))
        );
        // A drop-in after it sets another; one after that sets "": the first file again.
        let other = "[crio.network]\ncni_default_network = 'cbr0'\n";
        let raw = crate::testing::raw_from(&[
            (CRIO_CONF, &set),
            ("/etc/crio/crio.conf.d/20-net.conf", other),
            ("/etc/crio/crio.conf.d/10-crio.conf", "[crio.runtime]\n"),
        ]);
        assert_eq!(
            named(&raw).map(|n| n.map(|n| n.default_network)),
            Ok(Some("cbr0".into()))
        );
        let raw = crate::testing::raw_from(&[
            (CRIO_CONF, &set),
            (
                "/etc/crio/crio.conf.d/30-reset.conf",
                "[crio.network]\ncni_default_network = \"\"\n",
            ),
        ]);
        assert_eq!(named(&raw), Ok(None));
        // Another table's key of that name is not it.
        let raw = crate::testing::raw_from(&[(
            CRIO_CONF,
            "[crio.runtime]\ncni_default_network = \"x\"\n",
        )]);
        assert_eq!(named(&raw), Ok(None));
    }

    /// TOML that CRI-O's decoder (BurntSushi/toml v1.6.0) reads as setting the network
    /// the same as `[crio.network]` `cni_default_network = "crio"`: names in another case
    /// (decode.go @d733fc53 `unifyStruct`, strings.EqualFold) are read; a dotted key, an
    /// inline table, a multi-line string are not, and make the network unknown, never
    /// the first file's; so do a drop-in not read, or not read whole.
    #[test]
    fn settings_dnsfix_does_not_parse_leave_the_network_unknown() {
        let drop_in = "/etc/crio/crio.conf.d/20-network.conf";
        let read = |text: &str| {
            named(&crate::testing::raw_from(&[(drop_in, text)]))
                .map(|n| n.map(|n| n.default_network))
        };
        for text in [
            "[CRIO.NETWORK]\ncni_default_network = \"crio\"\n",
            "[crio.network]\nCNI_DEFAULT_NETWORK = \"crio\"\n",
            "[ \"crio\" . network ]\n\"cni_default_network\" = 'crio' # CRI-O's bridge\n",
        ] {
            assert_eq!(read(text), Ok(Some("crio".into())), "{text}");
        }
        for text in [
            "[crio]\nnetwork.cni_default_network = \"crio\"\n",
            "[crio]\nnetwork = { cni_default_network = \"crio\" }\n",
            "[crio.network]\ncni_default_network = \"\"\"crio\"\"\"\n",
            "[crio.network]\ncni_default_network = '''crio'''\n",
            "[crio.network]\ncni_default_network = \"crio\" \"x\"\n",
        ] {
            assert!(
                read(text).is_err_and(|e| e.starts_with(&format!("{drop_in}:2 "))),
                "{text}: {:?}",
                read(text)
            );
        }
        let twice = "[crio.network]\ncni_default_network = \"\"\ncni_default_network = \"crio\"\n";
        assert!(read(twice).is_err(), "{:?}", read(twice));
        let mut raw = crate::testing::raw_from(&[(CRIO_CONF, "[crio.network]\n")]);
        raw.file(drop_in, FileState::Unreadable, None);
        assert!(named(&raw).is_err_and(|e| e.contains("could not be read")));
        let mut raw = crate::testing::raw_from(&[(drop_in, "[crio.network]\n")]);
        raw.files.get_mut(drop_in).expect("read").truncated = true;
        assert!(named(&raw).is_err_and(|e| e.contains("too large")));
    }

    /// What the files say of the network's name and of its directory is known or not
    /// apart, as CRI-O's flags override each apart (internal/criocli/criocli.go @f954a17e
    /// `mergeNetworkConfig`): a `cni_default_network` dnsfix does not read leaves the
    /// directory known, and a `network_dir` it does not read, or naming another directory,
    /// the name; the files after such a setting are read on, and a later one does not
    /// make it known (CRI-O may refuse the file that has it).
    #[test]
    fn the_name_and_the_directory_are_known_apart() {
        let drop_in = "/etc/crio/crio.conf.d/20-network.conf";
        let later = "/etc/crio/crio.conf.d/30-dir.conf";
        let files = |found: &[(&str, &str)]| {
            CrioFiles::from_raw(&crate::testing::raw_from(found)).expect("read")
        };
        let dotted = files(&[(drop_in, "[crio]\nnetwork.cni_default_network = \"crio\"\n")]);
        assert!(dotted.network.is_err(), "{dotted:?}");
        assert_eq!(dotted.directory, Ok(()));
        let elsewhere = files(&[(
            drop_in,
            "[crio.network]\ncni_default_network = \"crio\"\nnetwork_dir = \"/etc/kubernetes/cni/net.d/\"\n",
        )]);
        assert_eq!(
            elsewhere.network.map(|n| n.map(|n| n.default_network)),
            Ok(Some("crio".into()))
        );
        assert!(
            elsewhere
                .directory
                .is_err_and(|e| e.starts_with(&format!("{drop_in}:3 sets network_dir"))),
        );
        let dotted_dir = files(&[(drop_in, "[crio]\nnetwork.network_dir = \"/x\"\n")]);
        assert!(
            (dotted_dir.directory.as_ref())
                .is_err_and(|e| e.contains("in a form dnsfix does not read")),
            "{dotted_dir:?}"
        );
        assert_eq!(dotted_dir.network, Ok(None));
        let both = files(&[
            (drop_in, "[crio]\nnetwork.cni_default_network = \"crio\"\n"),
            (
                later,
                "[crio.network]\ncni_default_network = \"crio\"\nnetwork_dir = \"/opt/cni/net.d\"\n",
            ),
        ]);
        assert!(both.network.is_err_and(|e| e.starts_with(drop_in)));
        assert!(both.directory.is_err_and(|e| e.starts_with(later)));
    }

    /// The drop-in directory is read as filepath.Walk walks it (cri-o @f954a17e
    /// pkg/config/config.go `UpdateFromPath`): subdirectories where their name sorts, and
    /// hidden names; the last setting wins.
    #[test]
    fn drop_ins_are_read_in_walk_order() {
        let set = |name: &str| format!("[crio.network]\ncni_default_network = \"{name}\"\n");
        let (walked, sorted, hidden) = (set("walked"), set("sorted"), set("hidden"));
        // Walk: .hidden, 10-a (and its z.conf), 10-a-b.conf; a sort of the whole paths
        // would put 10-a-b.conf before 10-a/z.conf.
        let raw = crate::testing::raw_from(&[
            ("/etc/crio/crio.conf.d/10-a/z.conf", walked.as_str()),
            ("/etc/crio/crio.conf.d/10-a-b.conf", sorted.as_str()),
            ("/etc/crio/crio.conf.d/.hidden", hidden.as_str()),
        ]);
        assert_eq!(
            named(&raw).map(|n| n.map(|n| n.default_network)),
            Ok(Some("sorted".into()))
        );
        let raw = crate::testing::raw_from(&[
            ("/etc/crio/crio.conf.d/10-a-b.conf", sorted.as_str()),
            ("/etc/crio/crio.conf.d/10-b/z.conf", walked.as_str()),
        ]);
        assert_eq!(
            named(&raw).map(|n| n.map(|n| n.default_network)),
            Ok(Some("walked".into()))
        );
    }

    /// contrib/systemd/crio.service @f954a17e as `make install` puts it, its
    /// `[Service]` lines verbatim (the rest says nothing of the command line).
    const CONTRIB_UNIT: (&str, &str) = (SHIPPED_AT, SHIPPED_UNIT);

    /// The unit options of a node with `files`, the environment files the units name
    /// missing where not given (the gather follows `EnvironmentFile=` and says so).
    fn options(files: &[(&str, &str)]) -> Result<UnitOptions, CrioUnknown> {
        let mut raw = crate::testing::raw_from(files);
        for path in [CRIO_SYSCONFIG, "/etc/default/crio"] {
            if raw.get(path).is_none() {
                raw.file(path, FileState::Missing, None);
            }
        }
        unit_options(&raw)
    }

    fn directory(result: Result<UnitOptions, CrioUnknown>) -> String {
        match result {
            Err(CrioUnknown::Directory(why)) => why,
            other => panic!("{other:?}"),
        }
    }

    /// The unit as systemd starts it: the Debian packages' (cri-o/packaging @b111fe95
    /// templates/latest/cri-o/cri-o.spec: `EnvironmentFile=-/etc/default/crio` where built by
    /// debbuild) reads /etc/default/crio and not /etc/sysconfig/crio; a drop-in's
    /// `Environment=` counts (Kubespray @46dbdd39 roles/container-engine/cri-o/templates/
    /// http-proxy.conf.j2 sets only proxies; kontena/pharos-cluster's configure-cri-o.sh
    /// sets `CRIO_STORAGE_OPTIONS` so); so does a drop-in's own `ExecStart=`.
    #[test]
    fn the_unit_systemd_starts_says_what_crio_reads() {
        let debian_unit = SHIPPED_UNIT
            .replace("/usr/local/bin", "/usr/bin")
            .replace("/etc/sysconfig/crio", "/etc/default/crio");
        let debian = ("/usr/lib/systemd/system/crio.service", debian_unit.as_str());
        let dir = "CRIO_NETWORK_OPTIONS=\"--cni-config-dir=/etc/kubernetes/cni/net.d\"\n";
        let why = directory(options(&[debian, ("/etc/default/crio", dir)]));
        assert!(
            why.starts_with("/etc/default/crio:1 sets CRIO_NETWORK_OPTIONS with --cni-config-dir="),
            "{why}"
        );
        assert_eq!(
            options(&[debian, (CRIO_SYSCONFIG, dir)]),
            Ok(UnitOptions::default())
        );
        // No unit gathered: the one CRI-O ships, which reads /etc/sysconfig/crio.
        assert!(options(&[(CRIO_SYSCONFIG, dir)]).is_err());
        let proxy = (
            "/etc/systemd/system/crio.service.d/http-proxy.conf",
            "[Service]\nEnvironment=\"HTTP_PROXY=http://proxy:3128\" \"NO_PROXY=10.0.0.0/8\"\n",
        );
        let storage = (
            "/etc/systemd/system/crio.service.d/10-cgroup.conf",
            "[Service]\nEnvironment='CRIO_STORAGE_OPTIONS=--cgroup-manager=cgroupfs --stream-address=10.0.0.5'\n",
        );
        assert_eq!(
            options(&[CONTRIB_UNIT, proxy, storage]),
            Ok(UnitOptions::default())
        );
        let variable = (
            "/etc/systemd/system/crio.service.d/20-net.conf",
            "[Service]\nEnvironment=CONTAINER_CNI_CONFIG_DIR=/opt/cni/net.d\n",
        );
        let why = directory(options(&[CONTRIB_UNIT, proxy, variable]));
        assert!(
            why.starts_with(
                "/etc/systemd/system/crio.service.d/20-net.conf:2 sets CONTAINER_CNI_CONFIG_DIR"
            ),
            "{why}"
        );
        let exec = (
            "/etc/systemd/system/crio.service.d/30-exec.conf",
            "[Service]\nExecStart=\nExecStart=/usr/local/bin/crio --log-level info \\\n  -d /etc/crio/other.d\n",
        );
        let why = directory(options(&[CONTRIB_UNIT, exec]));
        assert!(
            why.starts_with(
                "/etc/systemd/system/crio.service.d/30-exec.conf:3 passes -d in ExecStart="
            ),
            "{why}"
        );
        // Another program, or an environment file it cannot read: not known.
        let wrapper = (
            "/etc/systemd/system/crio.service.d/30-exec.conf",
            "[Service]\nExecStart=\nExecStart=/bin/sh -c \"exec crio\"\n",
        );
        assert!(directory(options(&[CONTRIB_UNIT, wrapper])).contains("not crio"));
        let mut raw = crate::testing::raw_from(&[CONTRIB_UNIT]);
        raw.file(CRIO_SYSCONFIG, FileState::Unreadable, None);
        assert!(matches!(unit_options(&raw), Err(CrioUnknown::Directory(_))));
    }

    /// An empty variable is set (urfave/cli v2.27.7 flag.go `flagFromEnvOrFile`: found by
    /// `syscall.Getenv`; flag_string.go `Apply` sets `HasBeenSet`, so cri-o @f954a17e
    /// internal/criocli/criocli.go `mergeNetworkConfig` takes ""): CRI-O then picks the
    /// first file by name; a flag beats its variable (the variable only sets the flag's
    /// default before the arguments are parsed).
    #[test]
    fn an_empty_variable_sets_the_network_to_the_first_file() {
        let empty = options(&[
            CONTRIB_UNIT,
            (CRIO_SYSCONFIG, "CONTAINER_CNI_DEFAULT_NETWORK=\n"),
        ]);
        assert_eq!(
            empty.map(|o| o.network),
            Ok(Some(CrioNetwork {
                default_network: String::new(),
                at: "/etc/sysconfig/crio:1 sets CONTAINER_CNI_DEFAULT_NETWORK".into()
            }))
        );
        let flag = options(&[
            CONTRIB_UNIT,
            (
                CRIO_SYSCONFIG,
                "CRIO_NETWORK_OPTIONS=\"--cni-default-network=\"\n",
            ),
        ]);
        assert!(
            flag.as_ref().is_ok_and(|o| o
                .network
                .as_ref()
                .is_some_and(|n| n.default_network.is_empty())),
            "{flag:?}"
        );
        let both = options(&[
            CONTRIB_UNIT,
            (
                CRIO_SYSCONFIG,
                "CONTAINER_CNI_DEFAULT_NETWORK=\nCRIO_NETWORK_OPTIONS=\"--cni-default-network k8s-pod-network\"\n",
            ),
        ]);
        assert_eq!(
            both.map(|o| o.network.map(|n| n.default_network)),
            Ok(Some("k8s-pod-network".into()))
        );
        let config = options(&[CONTRIB_UNIT, (CRIO_SYSCONFIG, "CONTAINER_CONFIG=\n")]);
        assert!(
            matches!(config, Err(CrioUnknown::Directory(_))),
            "{config:?}"
        );
    }

    /// The command line as Go's flag package reads it for urfave/cli v2: parsing stops at
    /// the first word that is no flag, and CRI-O then takes that word for a command
    /// (cmd/crio/main.go @f954a17e: `command %q not supported`) and does not run; a value
    /// flag takes the next word whatever it looks like; a boolean one does not.
    #[test]
    fn flags_end_where_go_s_flag_package_ends_them() {
        let with = |value: &str| {
            options(&[
                CONTRIB_UNIT,
                (
                    CRIO_SYSCONFIG,
                    &format!("CRIO_NETWORK_OPTIONS=\"{value}\"\n"),
                ),
            ])
        };
        let why = directory(with("k8s --cni-default-network=crio"));
        assert!(why.contains("with k8s, where CRI-O's flags end"), "{why}");
        let why = directory(with("--enable-metrics -- --cni-default-network=crio"));
        assert!(why.contains("where CRI-O's flags end"), "{why}");
        // `--log-level` takes the next word as its value, the flag there included.
        assert_eq!(
            with("--log-level --cni-config-dir=/opt/cni/net.d"),
            Ok(UnitOptions::default())
        );
        assert_eq!(
            with("--log-level info --enable-metrics"),
            Ok(UnitOptions::default())
        );
        // `--enable-metrics` takes none: the next word is a flag.
        let why = directory(with("--enable-metrics --cni-config-dir /opt/cni/net.d"));
        assert!(why.contains("--cni-config-dir"), "{why}");
        let why = directory(with("--no-such-flag x"));
        assert!(
            why.contains("a flag dnsfix does not know") && !why.contains("refuses"),
            "{why}"
        );
        let why = directory(with("--metrics-port"));
        assert!(why.contains("needs a value"), "{why}");
    }

    /// Flags of releases still deployed that CRI-O @f954a17e no longer defines, with their
    /// kinds (internal/criocli/criocli.go getCrioFlags @v1.26.0 to @v1.30.0): `--registry`
    /// (a string slice, removed by 82af00dd29 in v1.31.0), `--seccomp-use-default-when-empty`
    /// (a bool, removed by 03c4bcacc8 in v1.30.0), `--nri-config-file` (a string, gone in
    /// v1.27.0); `--nri-disable-connections`, a string to v1.31.x and a bool since, is
    /// known with `=` only. A flag dnsfix does not know, written with `=`, is passed over
    /// and said; the flags after it are read.
    #[test]
    fn flags_of_older_releases_and_unknown_ones_with_a_value_are_read_past() {
        let with = |value: &str| {
            options(&[
                CONTRIB_UNIT,
                (
                    CRIO_SYSCONFIG,
                    &format!("CRIO_NETWORK_OPTIONS=\"{value}\"\n"),
                ),
            ])
        };
        let old = "--registry quay.io --registry=docker.io --seccomp-use-default-when-empty \
                   --nri-config-file /etc/nri/nri.conf --nri-disable-connections=true \
                   --log-level info";
        assert_eq!(with(old), Ok(UnitOptions::default()));
        let why = directory(with("--nri-disable-connections true"));
        assert!(why.contains("in some CRI-O releases"), "{why}");
        let later = with("--some-later-flag=x --log-level info").expect("read past");
        assert_eq!(later.network, None);
        assert_eq!(
            later.unknown_flags,
            ["/etc/sysconfig/crio:1 sets CRIO_NETWORK_OPTIONS with --some-later-flag=x"]
        );
        let why = directory(with("--some-later-flag=x --cni-config-dir /opt/cni/net.d"));
        assert!(why.contains("--cni-config-dir"), "{why}");
    }

    /// `--cni-default-network NAME` names the network as the files' setting would;
    /// `--cni-config-dir` and `--config-dir` naming CRI-O's defaults (pkg/config/
    /// config_unix.go @f954a17e: /etc/cni/net.d/, /etc/crio/crio.conf.d) change nothing;
    /// a flag beats its variable.
    #[test]
    fn options_naming_the_network_or_the_defaults_are_known() {
        let with = |value: &str| {
            options(&[
                CONTRIB_UNIT,
                (
                    CRIO_SYSCONFIG,
                    &format!(
                        "CONTAINER_CNI_CONFIG_DIR=/opt/cni/net.d\nCRIO_NETWORK_OPTIONS=\"{value}\"\n"
                    ),
                ),
            ])
        };
        let named = with("--cni-config-dir=/etc/cni/net.d/ -d /etc/crio/crio.conf.d --cni-default-network k8s-pod-network")
            .expect("known");
        assert_eq!(
            named.network_dir.as_deref(),
            Some(
                "/etc/sysconfig/crio:2 sets CRIO_NETWORK_OPTIONS with --cni-config-dir=/etc/cni/net.d/"
            )
        );
        assert_eq!(
            named.network,
            Some(CrioNetwork {
                default_network: "k8s-pod-network".into(),
                at: "/etc/sysconfig/crio:2 sets CRIO_NETWORK_OPTIONS with --cni-default-network"
                    .into()
            })
        );
        let why = directory(with(
            "--cni-config-dir=/etc/cni/net.d --config-dir=/etc/crio/other.d",
        ));
        assert!(why.contains("--config-dir"), "{why}");
        // The variable alone, naming another directory.
        let why = directory(with(""));
        assert!(why.contains("sets CONTAINER_CNI_CONFIG_DIR"), "{why}");
    }

    /// Drop-ins under the alias cri-o.service.d apply where `systemctl enable` linked the
    /// alias (contrib/systemd/crio.service `Alias=cri-o.service`), merged by file name after
    /// crio.service.d's (systemd-stable @565916c2 src/shared/dropin.c
    /// `unit_file_find_dropin_paths`, src/basic/conf-files.c `files_add`); with `@` the
    /// second word of ExecStart= is argv[0] (systemd.service(5)), no command of CRI-O's.
    #[test]
    fn the_alias_s_drop_ins_and_an_argv0_are_read_as_systemd_reads_them() {
        let alias = "/etc/systemd/system/cri-o.service";
        let net = (
            "/etc/systemd/system/cri-o.service.d/20-net.conf",
            "[Service]\nEnvironment=CONTAINER_CNI_CONFIG_DIR=/opt/cni/net.d\n",
        );
        let linked = |files: &[(&str, &str)]| {
            let mut raw = crate::testing::raw_from(files);
            raw.file(CRIO_SYSCONFIG, FileState::Missing, None);
            raw.file(alias, FileState::Present, Some(SHIPPED_UNIT.as_bytes()));
            raw.files.get_mut(alias).expect("alias").symlink_target = Some(SHIPPED_AT.into());
            unit_options(&raw)
        };
        let why = directory(linked(&[CONTRIB_UNIT, net]));
        assert!(why.contains("cri-o.service.d/20-net.conf:2"), "{why}");
        // Not linked: no alias, its drop-ins not read.
        assert_eq!(options(&[CONTRIB_UNIT, net]), Ok(UnitOptions::default()));
        // The unit's own name first: its 20-net.conf, even in /usr/lib, hides the alias's.
        let own = (
            "/usr/lib/systemd/system/crio.service.d/20-net.conf",
            "[Service]\n",
        );
        assert_eq!(
            linked(&[CONTRIB_UNIT, net, own]),
            Ok(UnitOptions::default())
        );
        let argv0 = (
            "/etc/systemd/system/crio.service.d/30-exec.conf",
            "[Service]\nExecStart=\nExecStart=@/usr/local/bin/crio crio --log-level info\n",
        );
        assert_eq!(options(&[CONTRIB_UNIT, argv0]), Ok(UnitOptions::default()));
    }
}
