//! CRI-O's choice of pod network: owns [`CrioNetwork`]. Pure: it reads gathered files.
//!
//! CRI-O gives pods the network its `[crio.network]` `cni_default_network` names, and the
//! first CNI file by name only where that is unset or "" (cri-o/cri-o @f954a17e
//! docs/crio.conf.5.md; vendor/github.com/cri-o/ocicni v0.5.0 ocicni.go: `loadNetworks`
//! takes the first network it loads as the default, and `syncNetworkConfig` keeps a
//! default set by configuration). The setting is read from /etc/crio/crio.conf, then from
//! every file of /etc/crio/crio.conf.d in name order, the last one that sets it winning
//! (docs/crio.conf.d.5.md; pkg/config/config.go `UpdateFromPath` walks the directory and
//! decodes each file over what came before).

use serde::Serialize;

use super::kubelet_flags::{EnvFile, split_words};
use super::raw::{FileState, RawFacts};

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
/// The environment variables of [`CRIO_SYSCONFIG`] that CRI-O's flags read and that may
/// choose another network or configuration (internal/criocli/criocli.go @f954a17e:
/// `EnvVars` of `--config`, `--config-dir`, `--cni-default-network`, `--cni-config-dir`).
const CRIO_VARIABLES: &[&str] = &[
    "CONTAINER_CONFIG",
    "CONTAINER_CONFIG_DIR",
    "CONTAINER_CNI_DEFAULT_NETWORK",
    "CONTAINER_CNI_CONFIG_DIR",
];
/// The variable of [`CRIO_VARIABLES`] and the flag of [`CRIO_FLAGS`] that name only the
/// network CRI-O picks, from the directory it reads anyway (internal/criocli/criocli.go
/// @f954a17e: `--cni-default-network`, `EnvVars: CONTAINER_CNI_DEFAULT_NETWORK`); every
/// other one may move that directory (`--cni-config-dir`) or set `network_dir` in a file
/// dnsfix does not read (`--config`, `--config-dir`).
const CRIO_NAME_ONLY: &[&str] = &["CONTAINER_CNI_DEFAULT_NETWORK", "cni-default-network"];
/// The flags of CRI-O that choose its configuration or its network over the files dnsfix
/// reads, with their aliases (internal/criocli/criocli.go @f954a17e getCrioFlags: `config`
/// alias `c`, `config-dir` alias `d`, `cni-default-network`, `cni-config-dir`). urfave/cli
/// v2 (v2.27.7, cri-o's go.mod) parses with Go's flag package: one dash or two, the value
/// after `=` or as the next word.
const CRIO_FLAGS: &[&str] = &[
    "config",
    "c",
    "config-dir",
    "d",
    "cni-default-network",
    "cni-config-dir",
];

/// What CRI-O's configuration says of the pod network.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CrioNetwork {
    /// The network `cni_default_network` names, where a file sets it to a name.
    pub default_network: String,
    /// The file and line that set it last.
    pub at: String,
}

impl CrioNetwork {
    /// The default network CRI-O's configuration files set, where they set one; `Ok(None)`
    /// where none does or the last that sets it sets "" (the first file by name, then).
    /// An error says why the network CRI-O picks is not known: a file that could not be
    /// read, or not whole (CRI-O reads every file of the drop-in directory and stops on
    /// one it cannot), or one that sets `cni_default_network` in a way dnsfix does not
    /// parse. CRI-O's TOML decoder (BurntSushi/toml v1.6.0, cri-o @f954a17e go.mod;
    /// decode.go @d733fc53 `unifyStruct`) matches table and key names with
    /// `strings.EqualFold`, so `[CRIO.NETWORK]` and `CNI_DEFAULT_NETWORK` count too; dotted
    /// keys, inline tables and multi-line strings are TOML it accepts that this reading
    /// does not. Unknown too where `network_dir` names a directory other than
    /// /etc/cni/net.d, the only one dnsfix reads for CRI-O. CRI-O's environment file, which
    /// may override the files, is read apart ([`sysconfig`]).
    pub fn from_raw(raw: &RawFacts) -> Result<Option<CrioNetwork>, String> {
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
        let mut last = None;
        let mut network_dir = None;
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
            if let Some((value, line)) =
                setting(&text, DEFAULT_NETWORK).map_err(unread(DEFAULT_NETWORK))?
            {
                last = Some(CrioNetwork {
                    default_network: value,
                    at: format!("{path}:{line}"),
                });
            }
            if let Some((dir, line)) = setting(&text, NETWORK_DIR).map_err(unread(NETWORK_DIR))? {
                network_dir = Some((dir, format!("{path}:{line}")));
            }
        }
        match network_dir {
            Some((dir, at)) if !is_crio_network_dir(&dir) => Err(format!(
                "{at} sets network_dir to {dir:?}: CRI-O reads its CNI files there, not from {CRIO_NETWORK_DIR}, and dnsfix does not read that directory"
            )),
            _ => Ok(last.filter(|n| !n.default_network.is_empty())),
        }
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

/// Why CRI-O's environment file leaves the network unknown, where it does: it could not be
/// read whole, it gives a variable of [`CRIO_VARIABLES`] a value, or an option list
/// (`CRIO_*_OPTIONS`: contrib/systemd/crio.service @f954a17e passes `$CRIO_CONFIG_OPTIONS
/// $CRIO_RUNTIME_OPTIONS $CRIO_STORAGE_OPTIONS $CRIO_NETWORK_OPTIONS
/// $CRIO_METRICS_OPTIONS`, each split into words) holds one of [`CRIO_FLAGS`]. The file is
/// read as systemd's EnvironmentFile= reads it ([`EnvFile`]), the last assignment of a name
/// winning; any other option (`--log-level=info`) leaves the files' network as it is.
/// Only [`CRIO_NAME_ONLY`] leaves the directory known.
pub fn sysconfig(raw: &RawFacts) -> Result<(), CrioUnknown> {
    let Some(file) = raw.get(CRIO_SYSCONFIG) else {
        return Ok(());
    };
    let text = match file.state {
        FileState::Missing | FileState::Directory => return Ok(()),
        FileState::Present if !file.truncated => file.text(),
        _ => None,
    };
    let Some(text) = text else {
        return Err(CrioUnknown::Directory(format!(
            "{CRIO_SYSCONFIG}, the environment of CRI-O's unit, could not be read whole"
        )));
    };
    let env = EnvFile::parse(&text);
    let mut names: Vec<&str> = env.vars.iter().map(|v| v.name.as_str()).collect();
    names.dedup();
    for name in names {
        let Some(var) = env.get(name) else {
            continue;
        };
        if CRIO_VARIABLES.contains(&name) && !var.value.trim().is_empty() {
            let why = format!(
                "{CRIO_SYSCONFIG}:{} sets {name}, which CRI-O reads as a setting over its configuration files and which may choose its network: dnsfix does not read it",
                var.line
            );
            return Err(scope(name, why));
        }
        if !(name.starts_with("CRIO_") && name.ends_with("_OPTIONS")) {
            continue;
        }
        let chosen = split_words(&var.value, var.line)
            .into_iter()
            .find(|(word, _)| {
                let body = word.strip_prefix("--").or_else(|| word.strip_prefix('-'));
                body.is_some_and(|b| CRIO_FLAGS.contains(&b.split('=').next().unwrap_or(b)))
            });
        if let Some((word, line)) = chosen {
            let why = format!(
                "{CRIO_SYSCONFIG}:{line} sets {name} with {}, an option of CRI-O's command line that chooses its configuration or network over its files: dnsfix does not read it",
                crate::text::escape(&word)
            );
            let flag = word.trim_start_matches('-').split('=').next().unwrap_or("");
            return Err(scope(flag, why));
        }
    }
    Ok(())
}

/// `why` as the unknown a variable or flag named `setting` leaves: the name only for
/// [`CRIO_NAME_ONLY`], the directory too for any other.
fn scope(setting: &str, why: String) -> CrioUnknown {
    if CRIO_NAME_ONLY.contains(&setting) {
        CrioUnknown::Name(why)
    } else {
        CrioUnknown::Directory(why)
    }
}

/// Whether `dir` is /etc/cni/net.d as filepath.Clean would give it: slashes doubled or
/// trailing, and `.` names, left out; a path with `..` in it is taken as another.
fn is_crio_network_dir(dir: &str) -> bool {
    let names: Vec<&str> = dir
        .split('/')
        .filter(|name| !name.is_empty() && *name != ".")
        .collect();
    dir.starts_with('/') && format!("/{}", names.join("/")) == CRIO_NETWORK_DIR
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

    #[test]
    fn the_last_file_that_sets_it_wins() {
        let set = TEMPLATE.replace(
            "# cni_default_network = \"\"",
            "cni_default_network = \"k8s-pod-network\" # Calico's",
        );
        assert_ne!(set, TEMPLATE);
        let raw = crate::testing::raw_from(&[(CRIO_CONF, TEMPLATE)]);
        assert_eq!(CrioNetwork::from_raw(&raw), Ok(None));
        let raw = crate::testing::raw_from(&[(CRIO_CONF, &set)]);
        assert_eq!(
            CrioNetwork::from_raw(&raw),
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
            CrioNetwork::from_raw(&raw).map(|n| n.map(|n| n.default_network)),
            Ok(Some("cbr0".into()))
        );
        let raw = crate::testing::raw_from(&[
            (CRIO_CONF, &set),
            (
                "/etc/crio/crio.conf.d/30-reset.conf",
                "[crio.network]\ncni_default_network = \"\"\n",
            ),
        ]);
        assert_eq!(CrioNetwork::from_raw(&raw), Ok(None));
        // Another table's key of that name is not it.
        let raw = crate::testing::raw_from(&[(
            CRIO_CONF,
            "[crio.runtime]\ncni_default_network = \"x\"\n",
        )]);
        assert_eq!(CrioNetwork::from_raw(&raw), Ok(None));
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
            CrioNetwork::from_raw(&crate::testing::raw_from(&[(drop_in, text)]))
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
        assert!(CrioNetwork::from_raw(&raw).is_err_and(|e| e.contains("could not be read")));
        let mut raw = crate::testing::raw_from(&[(drop_in, "[crio.network]\n")]);
        raw.files.get_mut(drop_in).expect("read").truncated = true;
        assert!(CrioNetwork::from_raw(&raw).is_err_and(|e| e.contains("too large")));
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
            CrioNetwork::from_raw(&raw).map(|n| n.map(|n| n.default_network)),
            Ok(Some("sorted".into()))
        );
        let raw = crate::testing::raw_from(&[
            ("/etc/crio/crio.conf.d/10-a-b.conf", sorted.as_str()),
            ("/etc/crio/crio.conf.d/10-b/z.conf", walked.as_str()),
        ]);
        assert_eq!(
            CrioNetwork::from_raw(&raw).map(|n| n.map(|n| n.default_network)),
            Ok(Some("walked".into()))
        );
    }
}
