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

use super::raw::{FileState, RawFacts};

/// CRI-O's main configuration file.
pub const CRIO_CONF: &str = "/etc/crio/crio.conf";
/// Its drop-in directory (pkg/config/config_unix.go `CrioConfigDropInPath`).
pub const CRIO_CONF_D: &str = "/etc/crio/crio.conf.d";

/// What CRI-O's configuration says of the pod network.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CrioNetwork {
    /// The network `cni_default_network` names, where a file sets it to a name.
    pub default_network: String,
    /// The file and line that set it last.
    pub at: String,
}

impl CrioNetwork {
    /// The default network CRI-O's configuration files set, where they set one; `None`
    /// where none does or the last that sets it sets "" (the first file by name, then).
    pub fn from_raw(raw: &RawFacts) -> Option<CrioNetwork> {
        let mut files: Vec<&str> = raw.files_in(CRIO_CONF_D).map(|(p, _)| p).collect();
        files.sort_unstable();
        let mut last = None;
        for path in std::iter::once(CRIO_CONF).chain(files) {
            let Some(text) = raw
                .get(path)
                .filter(|f| f.state == FileState::Present)
                .and_then(|f| f.text())
            else {
                continue;
            };
            if let Some((value, line)) = default_network(&text) {
                last = Some(CrioNetwork {
                    default_network: value,
                    at: format!("{path}:{line}"),
                });
            }
        }
        last.filter(|n| !n.default_network.is_empty())
    }
}

/// The `cni_default_network` a CRI-O TOML file sets in its `[crio.network]` table, with
/// its line: a basic ("…") or literal ('…') string, as CRI-O's own template writes it
/// (pkg/config/template.go `cni_default_network = "{{ .CNIDefaultNetwork }}"`). Dotted
/// keys and inline tables, which TOML allows too, are not read.
fn default_network(text: &str) -> Option<(String, usize)> {
    let mut table = String::new();
    let mut found = None;
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[') {
            table = header
                .split(']')
                .next()
                .unwrap_or_default()
                .split('.')
                .map(|part| part.trim().trim_matches('"'))
                .collect::<Vec<_>>()
                .join(".");
            continue;
        }
        if table != "crio.network" {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.trim().trim_matches('"') != "cni_default_network" {
            continue;
        }
        if let Some(value) = toml_string(value.trim()) {
            found = Some((value, index + 1));
        }
    }
    found
}

/// A TOML basic or literal string at the start of `value`, a comment allowed after it;
/// the escapes of a basic string other than `\"` and `\\` are kept as written (a network
/// name has none).
fn toml_string(value: &str) -> Option<String> {
    if let Some(rest) = value.strip_prefix('\'') {
        return rest.split_once('\'').map(|(s, _)| s.to_owned());
    }
    let rest = value.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
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
        assert_eq!(CrioNetwork::from_raw(&raw), None);
        let raw = crate::testing::raw_from(&[(CRIO_CONF, &set)]);
        assert_eq!(
            CrioNetwork::from_raw(&raw),
            Some(CrioNetwork {
                default_network: "k8s-pod-network".into(),
                at: "/etc/crio/crio.conf:7".into()
            })
        );
        // A drop-in after it sets another; one after that sets "": the first file again.
        let other = "[crio.network]\ncni_default_network = 'cbr0'\n";
        let raw = crate::testing::raw_from(&[
            (CRIO_CONF, &set),
            ("/etc/crio/crio.conf.d/20-net.conf", other),
            ("/etc/crio/crio.conf.d/10-crio.conf", "[crio.runtime]\n"),
        ]);
        assert_eq!(
            CrioNetwork::from_raw(&raw).map(|n| n.default_network),
            Some("cbr0".into())
        );
        let raw = crate::testing::raw_from(&[
            (CRIO_CONF, &set),
            (
                "/etc/crio/crio.conf.d/30-reset.conf",
                "[crio.network]\ncni_default_network = \"\"\n",
            ),
        ]);
        assert_eq!(CrioNetwork::from_raw(&raw), None);
        // Another table's key of that name is not it.
        let raw = crate::testing::raw_from(&[(
            CRIO_CONF,
            "[crio.runtime]\ncni_default_network = \"x\"\n",
        )]);
        assert_eq!(CrioNetwork::from_raw(&raw), None);
    }
}
