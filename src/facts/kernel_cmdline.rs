//! The kernel command line this boot started with (`/proc/cmdline`): owns
//! [`KernelCmdline`], and answers what dnsfix asks of it about modules: which ones
//! systemd-modules-load loads from it (`modules_load=`), and which ones kmod
//! (`modprobe.blacklist=`) or the kernel (`module_blacklist=`) refuse. Pure: the caller
//! passes the file's text. It is this boot's line: the next boot takes its own from the
//! boot loader, which dnsfix does not read.

use serde::Serialize;

/// Where the kernel shows it.
pub const PROC_CMDLINE: &str = "/proc/cmdline";

/// The words of the command line, `key=value` or a bare `key`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct KernelCmdline {
    pub words: Vec<String>,
}

impl KernelCmdline {
    /// This boot's, from the gathered `/proc/cmdline`; empty where it was not read.
    pub fn from_raw(raw: &super::raw::RawFacts) -> KernelCmdline {
        raw.get(PROC_CMDLINE)
            .and_then(super::raw::RawFile::text)
            .map(|t| KernelCmdline::parse(&t))
            .unwrap_or_default()
    }

    /// Splits at blanks outside double quotes, the quotes removed (the kernel's
    /// `next_arg`, systemd's `proc_cmdline_parse`). Never fails.
    pub fn parse(text: &str) -> KernelCmdline {
        let mut words = Vec::new();
        let mut current = String::new();
        let mut quoted = false;
        for c in text.chars() {
            match c {
                '"' => quoted = !quoted,
                c if c.is_ascii_whitespace() && !quoted => {
                    if !current.is_empty() {
                        words.push(std::mem::take(&mut current));
                    }
                }
                c => current.push(c),
            }
        }
        if !current.is_empty() {
            words.push(current);
        }
        KernelCmdline { words }
    }

    /// Every `key=value` whose key is `key`, `-` and `_` alike (systemd's
    /// `proc_cmdline_key_streq`, the kernel's `parameq`), in order.
    fn values<'a>(&'a self, key: &'a str) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        self.words.iter().filter_map(move |w| {
            let (k, v) = w.split_once('=')?;
            (k.replace('-', "_") == key.replace('-', "_")).then_some((w.as_str(), v))
        })
    }

    /// The `modules_load=` word that has systemd-modules-load load `module` at boot (names
    /// with `-` read as `_`, as systemd and kmod both do). Not `rd.modules_load=`, which
    /// systemd honours only inside the initrd (`PROC_CMDLINE_STRIP_RD_PREFIX`), where
    /// dnsfix cannot tell whether the module is there.
    pub fn modules_load(&self, module: &str) -> Option<String> {
        self.values("modules_load")
            .find(|(_, v)| v.split(',').any(|m| m.replace('-', "_") == module))
            .map(|(w, _)| w.to_owned())
    }

    /// The `modprobe.blacklist=` word that names `module` (kmod adds every one, names as
    /// written, to its blacklist; the key is matched exactly).
    pub fn modprobe_blacklist(&self, module: &str) -> Option<String> {
        self.words
            .iter()
            .filter_map(|w| Some((w, w.strip_prefix("modprobe.blacklist=")?)))
            .find(|(_, v)| v.split(',').any(|m| m == module))
            .map(|(w, _)| w.clone())
    }

    /// The `module_blacklist=` word that names `module`: the kernel keeps the last one, and
    /// compares names exactly.
    pub fn module_blacklist(&self, module: &str) -> Option<String> {
        self.values("module_blacklist")
            .last()
            .filter(|(_, v)| v.split(',').any(|m| m == module))
            .map(|(w, _)| w.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ubuntu_line_with_modules_load_and_quotes() {
        let line = "BOOT_IMAGE=/vmlinuz-5.15.0-105-generic root=UUID=0b1c ro \"quoted word=x y\" modules-load=overlay,br-netfilter quiet\n";
        let c = KernelCmdline::parse(line);
        assert!(c.words.contains(&"quoted word=x y".to_owned()));
        assert_eq!(
            c.modules_load("br_netfilter").as_deref(),
            Some("modules-load=overlay,br-netfilter")
        );
        assert_eq!(c.modules_load("bridge"), None);
    }

    #[test]
    fn rd_modules_load_is_the_initrd_s() {
        let c = KernelCmdline::parse("rd.modules_load=br_netfilter");
        assert_eq!(c.modules_load("br_netfilter"), None);
    }

    #[test]
    fn blacklists_of_kmod_and_the_kernel() {
        let c = KernelCmdline::parse(
            "modprobe.blacklist=nouveau,br_netfilter module_blacklist=bridge module-blacklist=llc",
        );
        assert_eq!(
            c.modprobe_blacklist("br_netfilter").as_deref(),
            Some("modprobe.blacklist=nouveau,br_netfilter")
        );
        // The kernel keeps the last module_blacklist=.
        assert_eq!(c.module_blacklist("bridge"), None);
        assert_eq!(
            c.module_blacklist("llc").as_deref(),
            Some("module-blacklist=llc")
        );
        // Names compare exactly there.
        let c =
            KernelCmdline::parse("modprobe.blacklist=br-netfilter module_blacklist=br-netfilter");
        assert_eq!(c.modprobe_blacklist("br_netfilter"), None);
        assert_eq!(c.module_blacklist("br_netfilter"), None);
    }
}
