//! Kernel modules loaded at boot: owns [`ModulesLoad`] (one `modules-load.d(5)` file or
//! Debian's `/etc/modules`) and [`persisted_modules`], which answers "will `br_netfilter` be
//! loaded after a reboot, and which file says so" for rule R7. Pure: it never touches the
//! network or the filesystem; the caller passes file contents and symlink targets.
//!
//! File format (modules-load.d(5), systemd `src/modules-load/modules-load.c`): one module per
//! line; empty lines and lines whose first non-blank character is `#` or `;` are ignored. The
//! whole stripped line is the module name handed to kmod, so a trailing comment or module
//! arguments (`loop max_loop=64`, allowed by Debian's modules(5)) make systemd-modules-load
//! fail to find the module: such a line is recorded as written and does not count as the bare
//! module in [`persisted_modules`].

use std::collections::BTreeMap;

use serde::Serialize;

use super::kubelet_config::Located;
use super::sysctl::drop_in_order;

/// Directories searched for `*.conf`, highest precedence first (modules-load.d(5); `/lib` on
/// split-usr systems).
pub const MODULES_LOAD_DIRS: [&str; 5] = [
    "/etc/modules-load.d",
    "/run/modules-load.d",
    "/usr/local/lib/modules-load.d",
    "/usr/lib/modules-load.d",
    "/lib/modules-load.d",
];

/// Debian's legacy list. On systemd hosts it is read through the kmod package's
/// `/etc/modules-load.d/modules.conf -> ../modules` link; it is also applied last on its own
/// when that link is missing (sysvinit's `/etc/init.d/kmod` reads it directly).
pub const ETC_MODULES: &str = "/etc/modules";

/// The modules listed in one file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub struct ModulesLoad {
    /// Module lines as written (blanks around them removed), with their 1-based lines.
    pub modules: Vec<Located<String>>,
}

impl ModulesLoad {
    /// Parses one modules-load.d file (or `/etc/modules`). Never fails.
    pub fn parse(text: &str) -> ModulesLoad {
        let modules = text
            .split('\n')
            .enumerate()
            .filter_map(|(index, raw)| {
                let trimmed = raw.trim();
                let skip = trimmed.is_empty() || trimmed.starts_with(['#', ';']);
                (!skip).then(|| Located::new(trimmed.to_string(), index + 1))
            })
            .collect();
        ModulesLoad { modules }
    }
}

/// The module name as kmod compares it: `-` and `_` are the same character in module names
/// (`br-netfilter` is `br_netfilter`), and `lsmod` / `/proc/modules` print `_`.
pub fn normalize_module(name: &str) -> String {
    name.replace('-', "_")
}

/// Every module loaded at boot (keys normalised by [`normalize_module`]) with the path and
/// 1-based line of the first file, in application order, that lists it: that line is the one
/// that actually loads it; later ones find it already loaded.
///
/// `files` are `(path, content)` pairs from [`MODULES_LOAD_DIRS`] plus [`ETC_MODULES`], symlinks
/// included (read through the link; a link to `/dev/null` reads as empty). The precedence rules
/// are those of sysctl.d (see [`super::sysctl::persisted`]): `*.conf` only, a file name in an
/// earlier directory masks the same name in later ones (so an empty `/dev/null` link masks a
/// vendor file), files run in file-name order, then `/etc/modules`. Unlike sysctl values, no
/// symlink information is needed: when Debian's `modules.conf -> ../modules` link is read too,
/// `/etc/modules` is applied twice, which changes nothing because the first listing wins.
///
/// On a node systemd boots (`systemd`), systemd-modules-load reads only the modules-load.d
/// directories: `/etc/modules` counts only through a link there (Debian 12's kmod ships
/// `modules.conf -> ../modules`; Debian 13's kmod 34.2-2 ships neither file nor link).
pub fn persisted_modules(
    files: &[(String, &str)],
    systemd: bool,
) -> BTreeMap<String, (String, usize)> {
    let mut result = BTreeMap::new();
    let legacy = (!systemd).then_some(ETC_MODULES);
    for (path, content) in drop_in_order(files, &[], &MODULES_LOAD_DIRS, legacy) {
        for module in ModulesLoad::parse(content).modules {
            result
                .entry(normalize_module(&module.value))
                .or_insert_with(|| (path.to_string(), module.line));
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, content: &'static str) -> (String, &'static str) {
        (path.to_string(), content)
    }

    #[test]
    fn kubernetes_docs_file() {
        // /etc/modules-load.d/k8s.conf from the kubernetes.io container-runtimes page.
        let parsed = ModulesLoad::parse("overlay\nbr_netfilter\n");
        assert_eq!(
            parsed.modules,
            vec![
                Located::new("overlay".to_string(), 1),
                Located::new("br_netfilter".to_string(), 2)
            ]
        );
    }

    #[test]
    fn comments_blanks_crlf_and_no_trailing_newline() {
        let text = "# /etc/modules: kernel modules to load at boot time.\r\n;legacy\r\n\r\n  \
                    ip_vs  \r\nloop max_loop=64\r\nbr_netfilter # k8s";
        let names: Vec<_> = ModulesLoad::parse(text)
            .modules
            .into_iter()
            .map(|m| (m.value, m.line))
            .collect();
        assert_eq!(
            names,
            [
                ("ip_vs".to_string(), 4),
                ("loop max_loop=64".to_string(), 5),
                ("br_netfilter # k8s".to_string(), 6)
            ]
        );
    }

    #[test]
    fn empty_file() {
        assert_eq!(ModulesLoad::parse(""), ModulesLoad::default());
        assert_eq!(ModulesLoad::parse("\n# nothing\n"), ModulesLoad::default());
    }

    #[test]
    fn kubespray_node_persistence() {
        // Kubespray (research A4): br_netfilter in its own file, IPVS modules via
        // community.general.modprobe persistent: present, Ubuntu's default modules.conf link.
        let files = [
            file(
                "/etc/modules-load.d/kubespray-br_netfilter.conf",
                "br_netfilter\n",
            ),
            file(
                "/etc/modules-load.d/kube_proxy-ipvs.conf",
                "ip_vs\nip_vs_rr\nip_vs_wrr\nip_vs_sh\nnf_conntrack\n",
            ),
            file(ETC_MODULES, "# /etc/modules\nbr-netfilter\ndummy\n"),
            file(
                "/etc/modules-load.d/modules.conf",
                "# /etc/modules\nbr-netfilter\ndummy\n",
            ),
        ];
        let map = persisted_modules(&files, false);
        // kube_proxy-ipvs.conf < kubespray-br_netfilter.conf < modules.conf by name.
        assert_eq!(
            map.get("br_netfilter"),
            Some(&(
                "/etc/modules-load.d/kubespray-br_netfilter.conf".to_string(),
                1
            ))
        );
        assert_eq!(
            map.get("dummy"),
            Some(&("/etc/modules-load.d/modules.conf".to_string(), 3))
        );
        assert_eq!(map.get("ip_vs_sh").map(|m| m.1), Some(4));
        assert_eq!(map.len(), 7);
    }

    #[test]
    fn etc_modules_alone_is_applied_last() {
        let files = [file(ETC_MODULES, "br_netfilter\n")];
        let map = persisted_modules(&files, false);
        assert_eq!(
            map.get("br_netfilter").map(|m| m.0.as_str()),
            Some(ETC_MODULES)
        );
    }

    #[test]
    fn masking_by_name_and_dev_null() {
        let files = [
            file("/usr/lib/modules-load.d/k8s.conf", "br_netfilter\n"),
            file("/usr/lib/modules-load.d/vendor.conf", "overlay\n"),
            file("/etc/modules-load.d/k8s.conf", "overlay\n"),
            // A link to /dev/null, read through: empty, but it masks the vendor file by name.
            file("/etc/modules-load.d/vendor.conf", ""),
        ];
        let map = persisted_modules(&files, false);
        // /etc k8s.conf masks the vendor k8s.conf, so br_netfilter is NOT persisted.
        assert_eq!(map.get("br_netfilter"), None);
        assert_eq!(
            map.get("overlay").map(|m| m.0.as_str()),
            Some("/etc/modules-load.d/k8s.conf")
        );
    }

    #[test]
    fn line_with_arguments_does_not_count_as_the_module() {
        let files = [file(
            "/etc/modules-load.d/k8s.conf",
            "br_netfilter # for kube-proxy\n",
        )];
        let map = persisted_modules(&files, false);
        assert_eq!(map.get("br_netfilter"), None);
        assert!(map.contains_key("br_netfilter # for kube_proxy"));
    }

    #[test]
    fn never_panics_on_random_input() {
        // Any bytes at all: an empty alphabet is never used with raw_every = 1.
        for bytes in crate::testing::random_inputs(0xdead_beef_cafe_f00d, b"x", 500, 64, Some(1)) {
            let text = String::from_utf8_lossy(&bytes);
            let _ = ModulesLoad::parse(&text);
            let files = [("/etc/modules-load.d/x.conf".to_string(), text.as_ref())];
            let _ = persisted_modules(&files, false);
        }
    }
}
