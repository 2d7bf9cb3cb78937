//! Kernel module deny-lists: owns [`ModprobeD`] (the `blacklist` and `install` lines of
//! kmod's modprobe.d(5) files) and [`Deny`], what stops a module loading, at boot or under a
//! plain `modprobe NAME`, with the file and line that says so. Pure: the caller passes file
//! contents and the kernel command line ([`super::kernel_cmdline`]).
//!
//! How kmod applies them (kmod-project/kmod, libkmod/libkmod-config.c and
//! libkmod/libkmod-module.c):
//! - Files: `*.conf` (not starting with `.`, not a directory) in `/etc/modprobe.d`,
//!   `/run/modprobe.d`, `/usr/local/lib/modprobe.d` (kmod 29 and later),
//!   `/usr/lib/modprobe.d` (kmod 32 and later; before, only through a `/lib` that links to
//!   it) and `/lib/modprobe.d` (`default_config_paths`). All are sorted by file name, whatever
//!   their directory; of two files with one name, the one in the earlier directory is read
//!   and the other ignored (`conf_files_insert_sorted`), so a link to /dev/null masks one.
//! - Lines (`kmod_config_parse`): a `\` at the end joins the next line; a line whose first
//!   character is `#` is a comment; words split at blanks. `blacklist NAME` and `install
//!   NAME COMMAND` take NAME with `-` read as `_` (`underscores`).
//! - `blacklist NAME` is checked only for a probe with `KMOD_PROBE_APPLY_BLACKLIST`:
//!   systemd-modules-load passes it (module_load_and_warn in systemd's
//!   src/shared/module-util.c: "Module '%s' is deny-listed (by kmod)"); a plain `modprobe
//!   NAME` passes only `KMOD_PROBE_APPLY_BLACKLIST_ALIAS_ONLY` (tools/modprobe.c), which
//!   spares a module named by its own name: it loads.
//! - `install PATTERN COMMAND`: the first line whose PATTERN matches the module
//!   (`fnmatch`, in file order) runs COMMAND with system(3) instead of loading it, for the
//!   module and each dependency it loads (`kmod_module_get_install_commands`,
//!   `module_do_install_commands`). `/bin/false` exits 1: the probe fails ("Error running
//!   install command"); `/bin/true` exits 0: the probe succeeds and nothing is loaded.
//!   Either way, under systemd-modules-load and a plain `modprobe` alike.
//! - The kernel command line: `modprobe.blacklist=A,B` adds blacklist entries, names as
//!   written (`kmod_config_parse_kcmdline`); the kernel's own `module_blacklist=A,B`
//!   refuses every load of those names, EPERM (kernel/module/main.c `blacklisted`).

use serde::Serialize;

use super::kernel_cmdline::KernelCmdline;
pub use super::node_facts::{Deny, DenyKind};
use super::sysctl::drop_in_order;

/// kmod's configuration directories, highest precedence first (libkmod/libkmod.c
/// `default_config_paths`).
pub const MODPROBE_DIRS: [&str; 5] = [
    "/etc/modprobe.d",
    "/run/modprobe.d",
    "/usr/local/lib/modprobe.d",
    "/usr/lib/modprobe.d",
    "/lib/modprobe.d",
];

/// The modules `br_netfilter` needs loaded first (the kernel's modules.dep:
/// br_netfilter.ko needs bridge.ko, which needs stp.ko and llc.ko): kmod runs their install
/// commands too, and fails the probe where one fails.
pub const BR_NETFILTER_DEPS: [&str; 3] = ["bridge", "stp", "llc"];

/// One configuration line, where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfLine {
    pub path: String,
    /// 1-based: the first line of a line joined with `\`.
    pub line: usize,
    /// The line as kmod reads it (joined, blanks around it removed).
    pub text: String,
}

/// The deny-list lines of a node's modprobe.d files, in the order kmod reads them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ModprobeD {
    /// `blacklist NAME`: NAME with `-` read as `_`.
    pub blacklists: Vec<(String, ConfLine)>,
    /// `install PATTERN COMMAND`: PATTERN with `-` read as `_` outside brackets.
    pub installs: Vec<(String, String, ConfLine)>,
}

impl ModprobeD {
    /// Reads `files` (`(path, content)` from [`MODPROBE_DIRS`], links read through, a link
    /// to /dev/null empty) in kmod's order. Never fails: a line kmod ignores is ignored.
    pub fn parse(files: &[(String, &str)]) -> ModprobeD {
        let mut out = ModprobeD::default();
        for (path, content) in drop_in_order(files, &[], &MODPROBE_DIRS, None) {
            for (line, text) in logical_lines(content) {
                out.take(path, line, &text);
            }
        }
        out
    }

    /// The node's files, from its gathered modprobe.d directories, and those of them that
    /// could not be read. A link to nothing, which kmod cannot stat, is skipped: it masks
    /// nothing.
    pub fn from_raw(raw: &super::raw::RawFacts) -> (ModprobeD, Vec<String>) {
        use super::raw::{FileState, RawFile};
        let listed: Vec<(&str, &RawFile)> = MODPROBE_DIRS
            .iter()
            .flat_map(|dir| raw.files_in(dir))
            .filter(|(p, _)| p.ends_with(".conf"))
            .collect();
        let texts: Vec<(String, String)> = listed
            .iter()
            .filter_map(|(p, f)| Some(((*p).to_owned(), f.text()?.into_owned())))
            .collect();
        let inputs: Vec<(String, &str)> =
            texts.iter().map(|(p, t)| (p.clone(), t.as_str())).collect();
        let unread = listed
            .iter()
            .filter(|(_, f)| f.state == FileState::Unreadable)
            .map(|(p, _)| (*p).to_owned())
            .collect();
        (ModprobeD::parse(&inputs), unread)
    }

    fn take(&mut self, path: &str, line: usize, text: &str) {
        if text.starts_with('#') {
            return;
        }
        let mut words = text.split([' ', '\t']).filter(|w| !w.is_empty());
        let conf = || ConfLine {
            path: path.to_owned(),
            line,
            text: text.trim().to_owned(),
        };
        match words.next() {
            Some("blacklist") => {
                if let Some(name) = words.next().and_then(underscores) {
                    self.blacklists.push((name, conf()));
                }
            }
            Some("install") => {
                // The command is the rest of the line after the one blank that ends NAME.
                let Some(rest) = text.trim_start().strip_prefix("install") else {
                    return;
                };
                let rest = rest.trim_start_matches([' ', '\t']);
                let Some((name, command)) = rest.split_once([' ', '\t']) else {
                    return;
                };
                if let Some(pattern) = underscores(name)
                    && !command.is_empty()
                {
                    self.installs.push((pattern, command.to_owned(), conf()));
                }
            }
            _ => {}
        }
    }

    /// The `blacklist` line that names `module`, the first one.
    pub fn blacklisted(&self, module: &str) -> Option<&ConfLine> {
        self.blacklists
            .iter()
            .find(|(name, _)| name == module)
            .map(|(_, line)| line)
    }

    /// The `install` command kmod runs instead of loading `module`: the first that matches.
    pub fn install(&self, module: &str) -> Option<(&str, &ConfLine)> {
        self.installs
            .iter()
            .find(|(pattern, _, _)| fnmatch(pattern, module))
            .map(|(_, command, line)| (command.as_str(), line))
    }
}

/// kmod's `freadline_wrapped`: lines joined at a `\` before the newline (a `\` before any
/// other character is dropped, the character kept), each with its first line's number.
fn logical_lines(content: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current = String::new();
    let (mut line, mut start) = (1, 1);
    let mut chars = content.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => {
                out.push((start, std::mem::take(&mut current)));
                line += 1;
                start = line;
            }
            '\\' => match chars.next() {
                Some('\n') => line += 1,
                Some(next) => current.push(next),
                None => {}
            },
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push((start, current));
    }
    out
}

/// kmod's `underscores`: `-` read as `_`, except between `[` and `]`; None where a bracket
/// is not closed (kmod rejects the line).
pub fn underscores(name: &str) -> Option<String> {
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars();
    while let Some(c) = chars.next() {
        match c {
            '-' => out.push('_'),
            '[' => {
                out.push('[');
                loop {
                    let d = chars.next()?;
                    out.push(d);
                    if d == ']' {
                        break;
                    }
                }
            }
            ']' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// fnmatch(3) without flags, as kmod matches install patterns: `*`, `?`, `[...]` (with
/// `!` or `^` to negate, and ranges), `\` quoting the next character.
pub fn fnmatch(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    matches_at(&p, &n)
}

fn matches_at(p: &[char], n: &[char]) -> bool {
    match p.first() {
        None => n.is_empty(),
        Some('*') => (0..=n.len()).any(|skip| matches_at(&p[1..], &n[skip..])),
        Some('?') => !n.is_empty() && matches_at(&p[1..], &n[1..]),
        Some('[') => match (bracket(&p[1..], n.first().copied()), n.first()) {
            (Some((true, used)), Some(_)) => matches_at(&p[1 + used..], &n[1..]),
            (Some((false, _)), _) | (_, None) => false,
            // No closing bracket: `[` is a character of its own.
            (None, Some(c)) => *c == '[' && matches_at(&p[1..], &n[1..]),
        },
        Some('\\') if p.len() > 1 => n.first() == Some(&p[1]) && matches_at(&p[2..], &n[1..]),
        Some(c) => n.first() == Some(c) && matches_at(&p[1..], &n[1..]),
    }
}

/// A bracket expression after its `[`: whether `c` is in it, and how many characters of the
/// pattern it took (its `]` included); None where it has no `]`.
fn bracket(p: &[char], c: Option<char>) -> Option<(bool, usize)> {
    let negate = matches!(p.first(), Some('!' | '^'));
    let mut i = usize::from(negate);
    let mut hit = false;
    let mut first = true;
    loop {
        let start = *p.get(i)?;
        if start == ']' && !first {
            break;
        }
        first = false;
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|e| *e != ']') {
            let end = p[i + 2];
            hit |= c.is_some_and(|c| start <= c && c <= end);
            i += 3;
        } else {
            hit |= c == Some(start);
            i += 1;
        }
    }
    Some((hit != negate, i + 1))
}

/// What an `install` command does instead of a load, where dnsfix can tell: a command
/// whose first word is `false` or `true` (any directory). Anything else may load the
/// module itself (`/sbin/modprobe --ignore-install NAME`) and is not judged.
fn install_kind(command: &str) -> Option<DenyKind> {
    let first = command.split_whitespace().next()?;
    match first.rsplit('/').next()? {
        "false" => Some(DenyKind::InstallFails),
        "true" => Some(DenyKind::InstallNoop),
        _ => None,
    }
}

/// What stops a module loading at boot, and now, and the modprobe.d files not read.
pub type Denials = (Vec<Deny>, Vec<Deny>, Vec<String>);

/// What stops `modules` (a module and the modules it needs) loading on the node of `raw`:
/// at boot (systemd-modules-load applies kmod's blacklist; sysvinit's /etc/init.d/kmod runs
/// a plain modprobe, which does not), under a plain `modprobe` now (which passes over the
/// modules `loaded` says are), and the modprobe.d files that could not be read.
pub fn module_denials(
    raw: &super::raw::RawFacts,
    modules: &[&str],
    loaded: &dyn Fn(&str) -> bool,
) -> Denials {
    let (conf, unread) = ModprobeD::from_raw(raw);
    let cmdline = KernelCmdline::from_raw(raw);
    let systemd = super::sysctl::booted_by_systemd(raw);
    let at_boot = denials(&conf, &cmdline, modules, systemd, &|_| false);
    let now = denials(&conf, &cmdline, modules, false, loaded);
    (at_boot, now, unread)
}

/// What stops `modules` (a module and the modules it needs) loading, in that order, under
/// a probe that applies kmod's blacklist (`blacklist`: systemd-modules-load, for the module
/// itself: KMOD_PROBE_APPLY_BLACKLIST does not filter dependencies) or not (a plain
/// `modprobe`). `skip` says which of them are loaded already (a probe passes over those).
fn denials(
    conf: &ModprobeD,
    cmdline: &KernelCmdline,
    modules: &[&str],
    blacklist: bool,
    skip: &dyn Fn(&str) -> bool,
) -> Vec<Deny> {
    let path = super::kernel_cmdline::PROC_CMDLINE;
    let mut out = Vec::new();
    for (index, module) in modules.iter().enumerate() {
        if skip(module) {
            continue;
        }
        let deny = |kind, path: &str, line, text: &str| Deny {
            module: (*module).to_owned(),
            kind,
            path: path.to_owned(),
            line,
            text: text.to_owned(),
        };
        if blacklist && index == 0 {
            if let Some(l) = conf.blacklisted(module) {
                out.push(deny(DenyKind::Blacklist, &l.path, l.line, &l.text));
            }
            if let Some(word) = cmdline.modprobe_blacklist(module) {
                out.push(deny(DenyKind::CmdlineBlacklist, path, 1, &word));
            }
        }
        if let Some(word) = cmdline.module_blacklist(module) {
            out.push(deny(DenyKind::KernelBlacklist, path, 1, &word));
        }
        if let Some((command, l)) = conf.install(module)
            && let Some(kind) = install_kind(command)
        {
            out.push(deny(kind, &l.path, l.line, &l.text));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, content: &'static str) -> (String, &'static str) {
        (path.to_string(), content)
    }

    fn none(_: &str) -> bool {
        false
    }

    #[test]
    fn blacklist_and_install_lines_with_their_files_and_lines() {
        // The CIS Benchmark form: both lines, in a file of the operator's.
        let files = [file(
            "/etc/modprobe.d/k8s-deny.conf",
            "# no bridge filtering here\nblacklist br-netfilter\ninstall br_netfilter /bin/false\n",
        )];
        let conf = ModprobeD::parse(&files);
        let line = conf.blacklisted("br_netfilter").expect("blacklisted");
        assert_eq!(
            (line.path.as_str(), line.line, line.text.as_str()),
            ("/etc/modprobe.d/k8s-deny.conf", 2, "blacklist br-netfilter")
        );
        let (command, line) = conf.install("br_netfilter").expect("install");
        assert_eq!((command, line.line), ("/bin/false", 3));
    }

    #[test]
    fn a_plain_modprobe_ignores_the_blacklist_but_not_install() {
        let files = [file(
            "/etc/modprobe.d/deny.conf",
            "blacklist br_netfilter\n",
        )];
        let conf = ModprobeD::parse(&files);
        let cmdline = KernelCmdline::default();
        let boot = denials(&conf, &cmdline, &["br_netfilter"], true, &none);
        assert_eq!(boot.len(), 1);
        assert_eq!(boot[0].kind, DenyKind::Blacklist);
        assert!(denials(&conf, &cmdline, &["br_netfilter"], false, &none).is_empty());

        let files = [file(
            "/etc/modprobe.d/deny.conf",
            "install br_netfilter /usr/bin/true\n",
        )];
        let conf = ModprobeD::parse(&files);
        let now = denials(&conf, &cmdline, &["br_netfilter"], false, &none);
        assert_eq!(now[0].kind, DenyKind::InstallNoop);
    }

    #[test]
    fn a_dependency_denied_by_install_but_not_by_blacklist() {
        // DISA STIG GEN003619: `install bridge /bin/false`.
        let files = [file(
            "/etc/modprobe.d/stig.conf",
            "blacklist stp\ninstall bridge /bin/false\n",
        )];
        let conf = ModprobeD::parse(&files);
        let cmdline = KernelCmdline::default();
        let mut chain = vec!["br_netfilter"];
        chain.extend(BR_NETFILTER_DEPS);
        let found = denials(&conf, &cmdline, &chain, true, &none);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            (found[0].module.as_str(), found[0].kind),
            ("bridge", DenyKind::InstallFails)
        );
        assert!(
            found[0]
                .describe("br_netfilter")
                .contains("which br_netfilter needs")
        );
        // bridge loaded already: a probe passes over it.
        let loaded = |m: &str| m == "bridge";
        assert!(denials(&conf, &cmdline, &chain, false, &loaded).is_empty());
    }

    #[test]
    fn an_install_that_may_load_it_is_not_judged() {
        let files = [file(
            "/etc/modprobe.d/x.conf",
            "install br_netfilter /sbin/modprobe --ignore-install br_netfilter; /sbin/sysctl -p\n",
        )];
        let conf = ModprobeD::parse(&files);
        let found = denials(
            &conf,
            &KernelCmdline::default(),
            &["br_netfilter"],
            true,
            &none,
        );
        assert!(found.is_empty());
    }

    #[test]
    fn file_order_masking_and_the_first_install_wins() {
        let files = [
            file(
                "/usr/lib/modprobe.d/50-k8s.conf",
                "blacklist br_netfilter\n",
            ),
            // Masked by name (a link to /dev/null reads empty).
            file("/etc/modprobe.d/50-k8s.conf", ""),
            file("/lib/modprobe.d/10-a.conf", "install br_* /bin/true\n"),
            file(
                "/etc/modprobe.d/20-b.conf",
                "install br_netfilter /bin/false\n",
            ),
            // Not *.conf: kmod does not read it.
            file("/etc/modprobe.d/deny.conf.bak", "blacklist br_netfilter\n"),
        ];
        let conf = ModprobeD::parse(&files);
        assert_eq!(conf.blacklisted("br_netfilter"), None);
        let (command, line) = conf.install("br_netfilter").expect("install");
        assert_eq!(
            (command, line.path.as_str()),
            ("/bin/true", "/lib/modprobe.d/10-a.conf")
        );
    }

    #[test]
    fn continued_lines_comments_and_blanks() {
        let files = [file(
            "/etc/modprobe.d/x.conf",
            "  # blacklist br_netfilter\n#blacklist br_netfilter\ninstall \\\nbr_netfilter\t/bin/false\n\tblacklist  br_netfilter\n",
        )];
        let conf = ModprobeD::parse(&files);
        let (command, line) = conf.install("br_netfilter").expect("joined line");
        assert_eq!((command, line.line), ("/bin/false", 3));
        // A blank before `blacklist` is fine (kmod splits words first); one before `#`
        // makes a bad line kmod ignores.
        assert_eq!(conf.blacklisted("br_netfilter").map(|l| l.line), Some(5));
        assert_eq!(conf.blacklists.len(), 1);
    }

    #[test]
    fn fnmatch_as_libc() {
        assert!(fnmatch("br_*", "br_netfilter"));
        assert!(fnmatch("br_net?ilter", "br_netfilter"));
        assert!(fnmatch("[ab]ridge", "bridge"));
        assert!(fnmatch("[!c]ridge", "bridge"));
        assert!(fnmatch("[a-c]ridge", "bridge"));
        assert!(!fnmatch("[c-d]ridge", "bridge"));
        assert!(!fnmatch("br", "br_netfilter"));
        assert!(fnmatch("*", "llc"));
        assert!(fnmatch("\\*", "*"));
        assert!(fnmatch("[x", "[x"));
        assert_eq!(underscores("br-net[a-b]"), Some("br_net[a-b]".to_owned()));
        assert_eq!(underscores("br-net[a"), None);
    }

    #[test]
    fn never_panics_on_random_input() {
        for bytes in crate::testing::random_inputs(0x5eed_0fd0_c5a1, b"x", 500, 64, Some(1)) {
            let text = String::from_utf8_lossy(&bytes);
            let files = [("/etc/modprobe.d/x.conf".to_string(), text.as_ref())];
            let conf = ModprobeD::parse(&files);
            let _ = conf.install("br_netfilter");
            let _ = fnmatch(&text, "br_netfilter");
        }
    }
}
