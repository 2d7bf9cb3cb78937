//! NetworkManager's DNS settings as NetworkManager reads them, and what they make it do with
//! /etc/resolv.conf. Pure: the gathered files in, no I/O.
//!
//! Which files, in which order (NetworkManager.conf(5); src/core/nm-config.c
//! `read_entire_config` @355bc902): every `*.conf` of /usr/lib/NetworkManager/conf.d, then of
//! /run/NetworkManager/conf.d, then /etc/NetworkManager/NetworkManager.conf, then every
//! `*.conf` of /etc/NetworkManager/conf.d, each directory in strcmp order of the names
//! (`_get_config_dir_files`). A name in /etc/NetworkManager/conf.d shadows the same name in
//! /run and /usr/lib, a name in /run the same name in /usr/lib: the shadowed file is not
//! read. A key a later file sets replaces the earlier value (`read_config`).
//!
//! How a file reads (GLib's key file format, NetworkManager.conf(5) "File Format"): `[group]`
//! lines open a group, `key=value` lines (spaces around either allowed) set a key of the
//! group, the last setting of a key in a file wins, lines starting with `#` are comments (a
//! `;` line names no key NetworkManager knows either). NetworkManager strips the value
//! (nm-config-data.c: `nm_strstrip(g_key_file_get_string(...))`). A file whose
//! `[.config] enable=` is false is skipped (`ignore_config_snippet`).
//!
//! What they make it do (src/core/dns/nm-dns-manager.c `init_resolv_conf_mode`):
//! - `dns=none` leaves /etc/resolv.conf alone (rc-manager unmanaged);
//! - `dns=systemd-resolved`, or `dns` unset while /etc/resolv.conf links to one of
//!   systemd-resolved's files (`_resolvconf_resolved_managed`), pushes DNS to
//!   systemd-resolved; `dnsmasq` and `dnsconfd` run those; anything else (`default`,
//!   `unbound`, removed since, an unknown word, an empty value) is `default`;
//! - `rc-manager`: `symlink` (also `none`), `file`, `resolvconf`, `netconfig`, `unmanaged`;
//!   unset, `auto` or an unknown word is the build's default, `auto` upstream since 1.28
//!   (NEWS "Overview of changes since NetworkManager-1.26"; `symlink` before, 1.22.0's
//!   src/dns/nm-dns-manager.c `init_resolv_conf_mode` falls back to
//!   NM_CONFIG_DEFAULT_MAIN_RC_MANAGER, and Ubuntu 20.04's 1.22.10 logs `init:
//!   dns=systemd-resolved rc-manager=symlink`). `auto` is `unmanaged` for the
//!   systemd-resolved and dnsconfd modes, else resolvconf or netconfig where NetworkManager
//!   was built with them and the program is there, else `symlink`. Before 1.28 `symlink`
//!   writes a regular /etc/resolv.conf in every mode, 127.0.0.53 for systemd-resolved's
//!   (1.22.0 `update_dns`: a caching plugin's local address replaces the servers). The
//!   version is the name of NetworkManager's plugin directory ([`PLUGIN_PARENTS`]). RHEL
//!   builds it with a default of its own whatever the version: `symlink` on RHEL 8, `file`
//!   before (contrib/fedora/rpm/NetworkManager.spec @1.40.0 5d4802f7: `auto` only for Fedora
//!   and RHEL 9 and later), which the directory's `.el8` release names
//!   ([`NmDns::default_rc_manager`]).

use std::collections::BTreeMap;

use super::node_facts::{Effective, ResolvFile, Shadowed, Source};
use super::raw::{FileState, RawFacts, RawFile};

/// NetworkManager's main configuration file.
pub const MAIN_FILE: &str = "/etc/NetworkManager/NetworkManager.conf";
/// Its configuration directories, in the order it reads them ([`MAIN_FILE`] is read
/// between the second and the third).
pub const CONF_DIRS: [&str; 3] = [
    "/usr/lib/NetworkManager/conf.d",
    "/run/NetworkManager/conf.d",
    "/etc/NetworkManager/conf.d",
];

/// The files systemd-resolved writes or ships that, as /etc/resolv.conf's link target (as
/// written, or resolved), make NetworkManager pick systemd-resolved while `dns` is unset
/// (nm-dns-manager.c `_resolvconf_resolved_managed`, `RESOLVED_PATHS`).
const RESOLVED_PATHS: [&str; 8] = [
    "../run/systemd/resolve/stub-resolv.conf",
    "../run/systemd/resolve/resolv.conf",
    "../lib/systemd/resolv.conf",
    "../usr/lib/systemd/resolv.conf",
    "/run/systemd/resolve/stub-resolv.conf",
    "/run/systemd/resolve/resolv.conf",
    "/lib/systemd/resolv.conf",
    "/usr/lib/systemd/resolv.conf",
];

/// The directories NetworkManager's versioned plugin directory is in: `libdir/NetworkManager`
/// (meson.build `nm_plugindir = join_paths(nm_libdir, nm_name, dist_version)` @1.22.0):
/// /usr/lib64 (RHEL, Fedora: `/usr/lib64/NetworkManager/1.40.16-1.el8`), Debian's multiarch
/// /usr/lib/TRIPLET, and /usr/lib.
pub const PLUGIN_PARENTS: [&str; 2] = ["/usr/lib64/NetworkManager", "/usr/lib/NetworkManager"];

/// NetworkManager's effective `[main] dns` and `[main] rc-manager`, each with the file and
/// line that set it and the settings it replaced; `None` where no file sets it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NmDns {
    pub dns: Option<Effective<String>>,
    pub rc_manager: Option<Effective<String>>,
    /// `[global-dns-domain-*] servers`: the global DNS servers, which NetworkManager writes
    /// in place of its connections' (NetworkManager.conf(5) "global-dns-domain sections";
    /// nm-config.c `read_config` merges the files key by key, a later file's value
    /// replacing an earlier one's).
    pub global_servers: Option<Effective<String>>,
    /// Files NetworkManager reads that could not be read here: what they set is not known.
    pub unread: Vec<String>,
    /// The installed NetworkManager's version, as its plugin directory names it
    /// (`1.22.10`, `1.40.16-1.el8`); `None` where no such directory was found.
    pub version: Option<String>,
}

/// The DNS processing mode NetworkManager runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DnsMode {
    /// It writes the servers its connections give.
    Default,
    /// Its own dnsmasq, 127.0.0.1 in the file.
    Dnsmasq,
    /// It pushes DNS to systemd-resolved.
    SystemdResolved,
    /// It pushes DNS to dnsconfd.
    Dnsconfd,
    /// `dns=none`: it leaves /etc/resolv.conf alone.
    None,
}

impl DnsMode {
    pub fn as_str(self) -> &'static str {
        match self {
            DnsMode::Default => "default",
            DnsMode::Dnsmasq => "dnsmasq",
            DnsMode::SystemdResolved => "systemd-resolved",
            DnsMode::Dnsconfd => "dnsconfd",
            DnsMode::None => "none",
        }
    }
}

/// How NetworkManager writes /etc/resolv.conf (`rc-manager`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RcManager {
    /// Writes a regular file or a missing one, leaves a link to another file alone.
    Symlink,
    /// Writes the file, through a link to an existing file.
    File,
    /// Hands the servers to resolvconf(8).
    Resolvconf,
    /// Hands the servers to SUSE's netconfig.
    Netconfig,
    /// Leaves /etc/resolv.conf alone.
    Unmanaged,
    /// Unset, `auto` or a word NetworkManager does not know: the build's default (`auto`
    /// upstream since 1.28; before, [`RcManager::Symlink`]).
    Auto,
}

impl NmDns {
    /// The global DNS servers ([`NmDns::global_servers`]) as a list (GLib's string list:
    /// `,` between them, nm-config.c NM_CONFIG_KEYFILE_LIST_SEPARATOR @1.40.0, blanks trimmed); `None` where unset.
    pub fn global_server_list(&self) -> Option<Vec<String>> {
        let e = self.global_servers.as_ref()?;
        Some(
            e.value
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
        )
    }

    /// NetworkManager's settings from the gathered files (`files`: every path the gather
    /// looked at).
    pub fn read(files: &BTreeMap<String, RawFile>) -> NmDns {
        let mut nm = NmDns {
            version: plugin_version(files),
            ..NmDns::default()
        };
        for path in config_files(files) {
            let f = &files[path];
            match f.state {
                FileState::Present => nm.apply(path, &f.text().unwrap_or_default()),
                // A dangling link NetworkManager lists but cannot read (it then refuses the
                // whole configuration), or a file this gather could not read.
                FileState::Unreadable => nm.unread.push(path.to_owned()),
                // A link to nothing: NetworkManager lists it, cannot read it and refuses its
                // whole configuration (nm-config.c `read_config`, NOT_FOUND).
                FileState::Missing if f.symlink_target.is_some() && path != MAIN_FILE => {
                    nm.unread.push(path.to_owned());
                }
                FileState::Missing | FileState::Directory => {}
            }
        }
        nm
    }

    /// Merges one file's `[main]` keys over what earlier files set.
    fn apply(&mut self, path: &str, text: &str) {
        let keys = MainKeys::parse(text);
        // `[.config] enable=` switches a conf.d snippet off; NetworkManager.conf itself is
        // read whatever it says (nm-config.c `ignore_config_snippet`: FALSE for the base).
        if !keys.enabled && path != MAIN_FILE {
            return;
        }
        for (slot, set) in [
            (&mut self.dns, keys.dns),
            (&mut self.rc_manager, keys.rc_manager),
            (&mut self.global_servers, keys.global_servers),
        ] {
            let Some((value, line)) = set else {
                continue;
            };
            let source = Source::new("network_manager", Some(path), Some(line));
            let mut shadowed = Vec::new();
            if let Some(old) = slot.take() {
                shadowed = old.shadowed;
                shadowed.push(Shadowed {
                    value: old.value,
                    source: old.source,
                });
            }
            *slot = Some(Effective {
                value,
                source,
                shadowed,
            });
        }
    }

    /// The mode NetworkManager runs in; `resolved_link`: /etc/resolv.conf links to one of
    /// systemd-resolved's files ([`links_to_resolved`]), which decides it where `dns` is
    /// unset.
    pub fn mode(&self, resolved_link: bool) -> DnsMode {
        match self.dns.as_ref().map(|e| e.value.as_str()) {
            None if resolved_link => DnsMode::SystemdResolved,
            Some("systemd-resolved") => DnsMode::SystemdResolved,
            Some("dnsmasq") => DnsMode::Dnsmasq,
            Some("dnsconfd") => DnsMode::Dnsconfd,
            Some("none") => DnsMode::None,
            _ => DnsMode::Default,
        }
    }

    /// `rc-manager` is the build's default ([`NmDns::default_rc_manager`]): unset, a word
    /// NetworkManager does not know, or `auto` before 1.28, which did not know it either
    /// (nm-dns-manager.c `init_resolv_conf_mode` @1.40.0 5d4802f7: an unknown or no word
    /// falls back to NM_CONFIG_DEFAULT_MAIN_RC_MANAGER, `auto` is auto).
    pub fn rc_manager_defaulted(&self) -> bool {
        match self.rc_manager.as_ref().map(|e| e.value.as_str()) {
            Some("symlink" | "none" | "file" | "resolvconf" | "netconfig" | "unmanaged") => false,
            Some("auto") => self.older_than_auto(),
            _ => true,
        }
    }

    /// `rc-manager` is the build's default ([`NmDns::rc_manager_defaulted`]) and no plugin
    /// directory names the version: whether that default is `auto` (1.28 and later, RHEL 9
    /// and later) or `symlink` or `file` ([`NmDns::default_rc_manager`]) is not known, and
    /// [`NmDns::rc_manager`] takes it as `auto`. (`dns=none` makes it `unmanaged` whatever
    /// the version.)
    pub fn rc_manager_default_unknown(&self) -> bool {
        self.version.is_none()
            && self.rc_manager_defaulted()
            && self.dns.as_ref().is_none_or(|e| e.value != "none")
    }

    /// The version is known and older than 1.28, the first to know `rc-manager=auto`.
    fn older_than_auto(&self) -> bool {
        self.version
            .as_deref()
            .and_then(major_minor)
            .is_some_and(|v| v < (1, 28))
    }

    /// The installed NetworkManager's build default for an unset `rc-manager` (or `auto`, or
    /// a word it does not know) where that is not `auto`, with why: `symlink` before 1.28
    /// (meson_options.txt `config_dns_rc_manager_default` @1.22.0 7fe734f8: `symlink`;
    /// `auto` from 1.28.0 6f32c5c1), and whatever the version in RHEL's builds before 9,
    /// which the plugin directory's `.elN` release names: contrib/fedora/rpm/NetworkManager.spec
    /// @1.40.0 5d4802f7 sets `dns_rc_manager_default` to `auto` only for Fedora and RHEL 9 and
    /// later, `symlink` for RHEL 8 and `file` before. `None` where the default is `auto` or the
    /// version is not known.
    pub fn default_rc_manager(&self) -> Option<(RcManager, &'static str)> {
        let version = self.version.as_deref()?;
        match rhel_release(version) {
            Some(el) if el < 8 => return Some((RcManager::File, "a RHEL 7 build")),
            Some(8) => {
                return Some((
                    RcManager::Symlink,
                    "RHEL 8's build (auto is the default only on Fedora and RHEL 9 and later)",
                ));
            }
            _ => {}
        }
        self.older_than_auto()
            .then_some((RcManager::Symlink, "older than 1.28"))
    }

    /// `rc-manager` as set (`dns=none` makes it `unmanaged` whatever it says); unset, or a
    /// word NetworkManager does not know, is `auto`, or the build's default where that is
    /// not `auto` ([`NmDns::default_rc_manager`]: `symlink` before 1.28 and on RHEL 8).
    pub fn rc_manager(&self) -> RcManager {
        if self.dns.as_ref().is_some_and(|e| e.value == "none") {
            return RcManager::Unmanaged;
        }
        match self.rc_manager.as_ref().map(|e| e.value.as_str()) {
            Some("symlink" | "none") => RcManager::Symlink,
            Some("file") => RcManager::File,
            Some("resolvconf") => RcManager::Resolvconf,
            Some("netconfig") => RcManager::Netconfig,
            Some("unmanaged") => RcManager::Unmanaged,
            _ if !self.rc_manager_defaulted() => RcManager::Auto,
            _ => self
                .default_rc_manager()
                .map_or(RcManager::Auto, |(default, _)| default),
        }
    }

    /// Whether NetworkManager in `mode` writes /etc/resolv.conf, itself or through
    /// resolvconf or netconfig: not for `dns=none` or `rc-manager=unmanaged`, nor for
    /// systemd-resolved or dnsconfd with `rc-manager` auto (its default since 1.28; an
    /// older NetworkManager, with `symlink` as its default, wrote 127.0.0.53 into a
    /// regular file there).
    pub fn writes_resolv_conf(&self, mode: DnsMode) -> bool {
        let hands_off = matches!(
            (mode, self.rc_manager()),
            (DnsMode::None, _)
                | (_, RcManager::Unmanaged)
                | (
                    DnsMode::SystemdResolved | DnsMode::Dnsconfd,
                    RcManager::Auto
                )
        );
        !hands_off
    }
}

/// The version NetworkManager's plugin directory names ([`PLUGIN_PARENTS`], or
/// /usr/lib/TRIPLET/NetworkManager), the greatest where there are several; `None` where
/// there is none.
fn plugin_version(files: &BTreeMap<String, RawFile>) -> Option<String> {
    files
        .iter()
        .filter(|(_, f)| f.state == FileState::Directory)
        .filter_map(|(path, _)| {
            let (parent, name) = path.rsplit_once('/')?;
            let known = PLUGIN_PARENTS.contains(&parent)
                || parent
                    .strip_prefix("/usr/lib/")
                    .and_then(|p| p.strip_suffix("/NetworkManager"))
                    .is_some_and(|triplet| !triplet.is_empty() && !triplet.contains('/'));
            let version = major_minor(name).filter(|_| known)?;
            Some((version, name.to_owned()))
        })
        .max()
        .map(|(_, name)| name)
}

/// The RHEL release a version string's `.elN` names (`1.40.16-1.el8`, `1.40.16-1.el8_8`:
/// the spec's `%{version}-%{release}`, its dist tag `.el8`).
fn rhel_release(version: &str) -> Option<u32> {
    let (_, release) = version.split_once('-')?;
    let tag = release
        .split('.')
        .find_map(|part| part.strip_prefix("el"))?;
    let digits: String = tag.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The major and minor number a version string starts with (`1.22.10`, `1.40.16-1.el8`).
fn major_minor(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split(['.', '-']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// The configuration files NetworkManager reads, in its order, among the gathered
/// `files`: a file shadowed by one of the same name in a later directory is left out.
pub fn config_files(files: &BTreeMap<String, RawFile>) -> Vec<&str> {
    let listed = |dir: &str| -> Vec<&str> {
        let prefix = format!("{dir}/");
        files
            .range(prefix.clone()..)
            .map(|(p, _)| p.as_str())
            .take_while(|p| p.starts_with(&prefix))
            .filter(|p| {
                let name = &p[prefix.len()..];
                !name.contains('/') && name.ends_with(".conf")
            })
            .collect()
    };
    let name = |p: &str| p.rsplit('/').next().unwrap_or_default().to_owned();
    let [lib, run, etc] = CONF_DIRS.map(listed);
    let etc_names: Vec<String> = etc.iter().map(|p| name(p)).collect();
    let run_names: Vec<String> = run.iter().map(|p| name(p)).collect();
    let mut out: Vec<&str> = lib
        .into_iter()
        .filter(|p| !etc_names.contains(&name(p)) && !run_names.contains(&name(p)))
        .collect();
    out.extend(run.into_iter().filter(|p| !etc_names.contains(&name(p))));
    if files.contains_key(MAIN_FILE) {
        out.push(MAIN_FILE);
    }
    out.extend(etc);
    out
}

/// /etc/resolv.conf links to one of systemd-resolved's files as NetworkManager tells
/// ([`RESOLVED_PATHS`]: the link as written, or where it leads), whether or not the file
/// is there.
pub fn links_to_resolved(etc: &ResolvFile) -> bool {
    etc.symlink_target.is_some()
        && [etc.symlink_target.as_deref(), etc.canonical.as_deref()]
            .into_iter()
            .flatten()
            .any(|p| RESOLVED_PATHS.contains(&p))
}

/// The gather's record of `lsattr -d -- /etc/resolv.conf`, asked where that is a regular file.
pub const RESOLV_CONF_ATTR: &str = "resolv-conf-attr";

/// The attribute flags of a regular /etc/resolv.conf where they lock it against
/// NetworkManager: `i` (immutable) or `a` (append-only), as `lsattr -d` prints them (e2fsprogs
/// lib/e2p/pf.c `print_flags`: a letter or `-` per flag, `i` and `a` lower case, then the
/// name). An immutable file NetworkManager leaves alone whatever its `rc-manager`: it tests
/// FS_IMMUTABLE_FL when it picks the rc-manager, at its start and at every reload, and then
/// writes only its own files in /run (nm-dns-manager.c `_check_resconf_immutable`
/// @355bc902). An append-only one it tries to replace, and the rename fails (the kernel
/// replaces no append-only inode). `None` where the flags lock nothing or were not read (no
/// lsattr, a file system without attributes, a link).
pub fn resolv_conf_locked(raw: &RawFacts) -> Option<String> {
    let record = raw.commands.get(RESOLV_CONF_ATTR)?;
    if record.status != Some(0) {
        return None;
    }
    // Only a flag field as lsattr prints it (letters and dashes) is taken: it is shown to
    // users as it is.
    let flags = record.stdout.split_whitespace().next()?;
    let field = flags.chars().all(|c| c.is_ascii_alphabetic() || c == '-');
    (field && flags.contains(['i', 'a'])).then(|| flags.to_owned())
}

/// The `[main]` keys of one file that matter here, each with its value and 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct MainKeys {
    dns: Option<(String, usize)>,
    rc_manager: Option<(String, usize)>,
    /// `[global-dns-domain-*] servers`.
    global_servers: Option<(String, usize)>,
    /// `[.config] enable=` is not false.
    enabled: bool,
}

impl MainKeys {
    fn parse(text: &str) -> MainKeys {
        let mut keys = MainKeys {
            dns: None,
            rc_manager: None,
            global_servers: None,
            enabled: true,
        };
        let mut group = String::new();
        for (i, raw) in text.split('\n').enumerate() {
            let line = raw.strip_suffix('\r').unwrap_or(raw).trim_start();
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            if let Some(rest) = line.strip_prefix('[') {
                // `[name]`, blanks after it allowed; the name runs to the last `]`.
                if let Some(end) = rest.rfind(']')
                    && rest[end + 1..].trim_matches([' ', '\t']).is_empty()
                {
                    group = rest[..end].to_owned();
                }
                continue;
            }
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            let value = value.trim().to_owned();
            match (group.as_str(), key.trim_end()) {
                ("main", "dns") => keys.dns = Some((value, i + 1)),
                ("main", "rc-manager") => keys.rc_manager = Some((value, i + 1)),
                ("global-dns-domain-*", "servers") => keys.global_servers = Some((value, i + 1)),
                (".config", "enable") => {
                    keys.enabled = !matches!(
                        value.to_ascii_lowercase().as_str(),
                        "no" | "false" | "off" | "0"
                    );
                }
                _ => {}
            }
        }
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::raw::RawFacts;

    fn files(list: &[(&str, &str)]) -> BTreeMap<String, RawFile> {
        crate::testing::raw_from(list).files
    }

    fn at(e: &Option<Effective<String>>) -> Option<(String, String)> {
        e.as_ref().map(|e| (e.value.clone(), e.source.at()))
    }

    #[test]
    fn only_main_keys_count_with_comments_spaces_and_the_last_setting() {
        let keys = MainKeys::parse(
            "# dns=none\n; dns=none\n[logging]\ndns=none\n[main]\n  dns = dnsmasq  \r\nplugins=keyfile\n[main] \nrc-manager =unmanaged\ndns=default\n[ main ]\ndns=none\n",
        );
        assert_eq!(keys.dns, Some(("default".into(), 10)));
        assert_eq!(keys.rc_manager, Some(("unmanaged".into(), 9)));
        assert!(keys.enabled);
        // A value keeps what follows a `#` (GLib has no trailing comments): not `none`.
        let keys = MainKeys::parse("[main]\ndns=none # off\n");
        assert_eq!(keys.dns, Some(("none # off".into(), 2)));
        let off = MainKeys::parse("[.config]\nenable=false\n[main]\ndns=none\n");
        assert!(!off.enabled);
        let on = MainKeys::parse("[.config]\nenable=nm-version-min:1.40\n[main]\ndns=none\n");
        assert!(on.enabled);
    }

    /// /usr/lib first, then /run, then NetworkManager.conf, then /etc's conf.d, each in name
    /// order; a later key wins, and a name in /etc or /run shadows the same name in /usr/lib.
    #[test]
    fn files_are_read_in_networkmanagers_order_and_shadowed_by_name() {
        let lib = "/usr/lib/NetworkManager/conf.d/10-dns-resolved.conf";
        let list = [
            (lib, "[main]\ndns=systemd-resolved\n"),
            (
                "/usr/lib/NetworkManager/conf.d/20-rc.conf",
                "[main]\nrc-manager=file\n",
            ),
            (
                "/run/NetworkManager/conf.d/20-rc.conf",
                "[main]\nrc-manager=symlink\n",
            ),
            (MAIN_FILE, "[main]\nplugins=ifupdown,keyfile\n"),
        ];
        let nm = NmDns::read(&files(&list));
        assert_eq!(
            at(&nm.dns),
            Some(("systemd-resolved".into(), format!("{lib}:2")))
        );
        assert_eq!(
            at(&nm.rc_manager),
            Some((
                "symlink".into(),
                "/run/NetworkManager/conf.d/20-rc.conf:2".into()
            ))
        );
        assert!(nm.rc_manager.as_ref().expect("set").shadowed.is_empty());
        assert_eq!(nm.mode(false), DnsMode::SystemdResolved);
        // An empty file of the same name in /etc shadows the vendor's.
        let mut shadow = list.to_vec();
        shadow.push(("/etc/NetworkManager/conf.d/10-dns-resolved.conf", ""));
        let nm = NmDns::read(&files(&shadow));
        assert_eq!(nm.dns, None);
        assert_eq!(nm.mode(false), DnsMode::Default);
        // A later file overrides, and the earlier setting is kept as shadowed.
        let mut later = list.to_vec();
        later.push((
            "/etc/NetworkManager/conf.d/90-dns.conf",
            "[main]\ndns=default\n",
        ));
        let nm = NmDns::read(&files(&later));
        let dns = nm.dns.as_ref().expect("set");
        assert_eq!(dns.value, "default");
        assert_eq!(dns.shadowed[0].source.at(), format!("{lib}:2"));
        // NetworkManager.conf comes after /run and /usr/lib, before /etc's conf.d.
        let main_wins = [
            (lib, "[main]\ndns=systemd-resolved\n"),
            (MAIN_FILE, "[main]\ndns=dnsmasq\n"),
        ];
        assert_eq!(NmDns::read(&files(&main_wins)).mode(true), DnsMode::Dnsmasq);
        // Not *.conf, or below a subdirectory: not read.
        let ignored = [
            (
                "/etc/NetworkManager/conf.d/dns.conf.bak",
                "[main]\ndns=none\n",
            ),
            (
                "/etc/NetworkManager/conf.d/x/dns.conf",
                "[main]\ndns=none\n",
            ),
        ];
        assert_eq!(NmDns::read(&files(&ignored)).dns, None);
    }

    #[test]
    fn an_unreadable_file_is_named() {
        let mut raw = RawFacts::default();
        raw.file(
            "/etc/NetworkManager/conf.d/dns.conf",
            FileState::Unreadable,
            None,
        );
        let nm = NmDns::read(&raw.files);
        assert_eq!(nm.unread, ["/etc/NetworkManager/conf.d/dns.conf"]);
    }

    /// A conf.d link to nothing: NetworkManager refuses its whole configuration, so what
    /// it says is not known. `[.config] enable=false` switches off a conf.d snippet, never
    /// NetworkManager.conf itself.
    #[test]
    fn a_dangling_snippet_is_unread_and_the_base_file_is_always_read() {
        let mut raw = RawFacts::default();
        let dangling = "/etc/NetworkManager/conf.d/10-dns.conf";
        raw.file(dangling, FileState::Missing, None);
        raw.files.get_mut(dangling).expect("file").symlink_target = Some("/nowhere".into());
        assert_eq!(NmDns::read(&raw.files).unread, [dangling]);
        let off = "[.config]\nenable=false\n[main]\ndns=none\n";
        let nm = NmDns::read(&files(&[(MAIN_FILE, off)]));
        assert_eq!(nm.mode(false), DnsMode::None);
        let nm = NmDns::read(&files(&[("/etc/NetworkManager/conf.d/50-off.conf", off)]));
        assert_eq!(nm.mode(false), DnsMode::Default);
    }

    /// init_resolv_conf_mode: dns=none and rc-manager=unmanaged leave the file alone, so do
    /// systemd-resolved (set, or picked for an unset dns by the link) and dnsconfd with
    /// rc-manager auto; rc-manager symlink or file writes it in every mode.
    #[test]
    fn the_mode_and_rc_manager_decide_whether_the_file_is_written() {
        use DnsMode::*;
        // (NetworkManager.conf, /etc/resolv.conf links to resolved; mode, writes)
        for (conf, link, mode, writes) in [
            ("", false, Default, true),
            ("", true, SystemdResolved, false),
            ("[main]\ndns=default\n", true, Default, true),
            (
                "[main]\ndns=systemd-resolved\n",
                false,
                SystemdResolved,
                false,
            ),
            (
                "[main]\ndns=systemd-resolved\nrc-manager=auto\n",
                false,
                SystemdResolved,
                false,
            ),
            (
                "[main]\ndns=systemd-resolved\nrc-manager=symlink\n",
                false,
                SystemdResolved,
                true,
            ),
            ("[main]\ndns=dnsconfd\n", false, Dnsconfd, false),
            ("[main]\ndns=dnsmasq\n", true, Dnsmasq, true),
            ("[main]\ndns=unbound\n", false, Default, true),
            ("[main]\ndns=\n", true, Default, true),
            ("[main]\ndns=none\nrc-manager=file\n", false, None, false),
            ("[main]\nrc-manager=unmanaged\n", false, Default, false),
            ("[main]\nrc-manager=resolvconf\n", false, Default, true),
            ("[main]\nrc-manager=bogus\n", true, SystemdResolved, false),
        ] {
            let nm = NmDns::read(&files(&[(MAIN_FILE, conf)]));
            assert_eq!(nm.mode(link), mode, "{conf:?} {link}");
            assert_eq!(
                nm.writes_resolv_conf(nm.mode(link)),
                writes,
                "{conf:?} {link}"
            );
        }
    }

    /// The version is the name of the plugin directory (libdir/NetworkManager/VERSION): the
    /// greatest where there are several; a directory elsewhere or not named by a version
    /// says nothing. Before 1.28 an unset rc-manager (or `auto`, unknown there) is symlink,
    /// which writes the file in systemd-resolved's mode too.
    #[test]
    fn the_plugin_directory_names_the_version_and_before_1_28_rc_manager_is_symlink() {
        let mut raw = RawFacts::default();
        let dir = |raw: &mut RawFacts, p: &str| raw.file(p, FileState::Directory, None);
        dir(&mut raw, "/usr/lib/NetworkManager/conf.d");
        dir(
            &mut raw,
            "/usr/lib/x86_64-linux-gnu/NetworkManager/dispatcher.d",
        );
        dir(&mut raw, "/usr/share/NetworkManager/1.20.0");
        assert_eq!(NmDns::read(&raw.files).version, None);
        dir(&mut raw, "/usr/lib/x86_64-linux-gnu/NetworkManager/1.22.10");
        raw.file(
            MAIN_FILE,
            FileState::Present,
            Some(b"[main]\ndns=systemd-resolved\n"),
        );
        let nm = NmDns::read(&raw.files);
        assert_eq!(nm.version.as_deref(), Some("1.22.10"));
        assert_eq!(
            nm.default_rc_manager(),
            Some((RcManager::Symlink, "older than 1.28"))
        );
        assert_eq!(nm.rc_manager(), RcManager::Symlink);
        assert!(nm.writes_resolv_conf(DnsMode::SystemdResolved));
        for word in ["auto", "bogus"] {
            let conf = format!("[main]\ndns=systemd-resolved\nrc-manager={word}\n");
            raw.file(MAIN_FILE, FileState::Present, Some(conf.as_bytes()));
            assert_eq!(
                NmDns::read(&raw.files).rc_manager(),
                RcManager::Symlink,
                "{word}"
            );
        }
        raw.file(
            MAIN_FILE,
            FileState::Present,
            Some(b"[main]\ndns=systemd-resolved\nrc-manager=unmanaged\n"),
        );
        assert!(!NmDns::read(&raw.files).writes_resolv_conf(DnsMode::SystemdResolved));
        raw.file(
            MAIN_FILE,
            FileState::Present,
            Some(b"[main]\ndns=systemd-resolved\n"),
        );
        dir(&mut raw, "/usr/lib64/NetworkManager/1.46.0-26.el9_5");
        let nm = NmDns::read(&raw.files);
        assert_eq!(nm.version.as_deref(), Some("1.46.0-26.el9_5"));
        assert_eq!(nm.rc_manager(), RcManager::Auto);
        assert!(!nm.writes_resolv_conf(DnsMode::SystemdResolved));
    }

    /// RHEL 8 builds NetworkManager with symlink as its default rc-manager whatever the
    /// version (NetworkManager.spec @1.40.0: auto only for Fedora and RHEL >= 9), RHEL 7
    /// with file: there an unset rc-manager writes the file in systemd-resolved's mode too.
    #[test]
    fn rhel_8_builds_default_to_symlink_and_rhel_7_to_file() {
        for (version, rc, default) in [
            ("1.40.16-1.el8", RcManager::Symlink, true),
            ("1.40.16-1.el8_8", RcManager::Symlink, true),
            ("1.18.8-2.el7_9", RcManager::File, true),
            ("1.46.0-26.el9_5", RcManager::Auto, false),
            ("1.40.16", RcManager::Auto, false),
            ("1.38.4-1.fc37", RcManager::Auto, false),
        ] {
            let mut raw =
                crate::testing::raw_from(&[(MAIN_FILE, "[main]\ndns=systemd-resolved\n")]);
            raw.file(
                &format!("/usr/lib64/NetworkManager/{version}"),
                FileState::Directory,
                None,
            );
            let nm = NmDns::read(&raw.files);
            assert_eq!(nm.version.as_deref(), Some(version));
            assert_eq!(nm.rc_manager(), rc, "{version}");
            assert_eq!(nm.default_rc_manager().is_some(), default, "{version}");
            assert_eq!(
                nm.writes_resolv_conf(DnsMode::SystemdResolved),
                default,
                "{version}"
            );
            // `auto` set is auto from 1.28 on, whatever the build's default (1.18 does not
            // know the word: its default).
            if version.starts_with("1.18.") {
                continue;
            }
            raw.file(
                MAIN_FILE,
                FileState::Present,
                Some(b"[main]\ndns=systemd-resolved\nrc-manager=auto\n"),
            );
            let nm = NmDns::read(&raw.files);
            assert!(!nm.rc_manager_defaulted(), "{version}");
            assert_eq!(nm.rc_manager(), RcManager::Auto, "{version}");
        }
    }

    #[test]
    fn the_links_networkmanager_takes_for_systemd_resolveds() {
        let link = |target: &str, canonical: Option<&str>| ResolvFile {
            path: "/etc/resolv.conf".into(),
            state: FileState::Present,
            symlink_target: Some(target.into()),
            canonical: canonical.map(str::to_owned),
            sha256: None,
            parsed: None,
        };
        assert!(links_to_resolved(&link(
            "../run/systemd/resolve/stub-resolv.conf",
            None
        )));
        assert!(links_to_resolved(&link(
            "/var/run/systemd/resolve/resolv.conf",
            Some("/run/systemd/resolve/resolv.conf")
        )));
        assert!(links_to_resolved(&link(
            "/usr/lib/systemd/resolv.conf",
            None
        )));
        // As written, not normalised: NetworkManager compares the strings.
        assert!(!links_to_resolved(&link(
            "/var/run/systemd/resolve/resolv.conf",
            None
        )));
        assert!(!links_to_resolved(&link(
            "../run/NetworkManager/resolv.conf",
            Some("/run/NetworkManager/resolv.conf")
        )));
        let mut plain = link("", None);
        plain.symlink_target = None;
        assert!(!links_to_resolved(&plain));
    }

    #[test]
    fn any_text_parses_without_panicking() {
        for bytes in crate::testing::random_inputs(
            7,
            b"[]=#; \t\r\nmaindnsrc-manager.config",
            500,
            80,
            Some(9),
        ) {
            let text = String::from_utf8_lossy(&bytes);
            let _ = MainKeys::parse(&text);
        }
    }
}
