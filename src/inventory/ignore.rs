//! [`IgnoreRules`]: which entries of an inventory directory Ansible skips, from the settings
//! it reads (lib/ansible/config/base.yml): `INVENTORY_IGNORE_EXTS` (env
//! `ANSIBLE_INVENTORY_IGNORE`; ini `[defaults] inventory_ignore_extensions`, then
//! `[inventory] ignore_extensions`, the later winning) and `INVENTORY_IGNORE_PATTERNS` (env
//! `ANSIBLE_INVENTORY_IGNORE_REGEX`; ini `[defaults] inventory_ignore_patterns`, then
//! `[inventory] ignore_patterns`), in the one ansible.cfg Ansible reads: `$ANSIBLE_CONFIG`,
//! `./ansible.cfg`, `~/.ansible.cfg`, `/etc/ansible/ansible.cfg`, the first that exists.
//! Kubespray's own ansible.cfg sets both (skipping `.ini`, `credentials`, `artifacts`).
//!
//! Ansible's manager joins them into one regex searched in each entry's name: extensions
//! match at the end of the name, patterns anywhere. This module only reads: it never
//! evaluates a pattern it cannot read as plain text (such a pattern is reported).

use std::path::{Path, PathBuf};

/// ansible-core 2.19's default `INVENTORY_IGNORE_EXTS` (`REJECT_EXTS + ('.orig', '.cfg',
/// '.retry')`); 2.18 also has `.ini`.
const DEFAULT_EXTENSIONS: &[&str] = &[
    ".pyc", ".pyo", ".swp", ".bak", "~", ".rpm", ".md", ".txt", ".rst", ".orig", ".cfg", ".retry",
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IgnoreRules {
    extensions: Vec<String>,
    patterns: Vec<String>,
    /// Where the extensions came from (`ANSIBLE_INVENTORY_IGNORE`, or the ansible.cfg);
    /// `None` for the default, which differs between ansible-core 2.18 and 2.19.
    pub(crate) extensions_from: Option<String>,
    /// Patterns dnsfix cannot read as plain text (a regex), with where they were set.
    pub(crate) unreadable: Vec<String>,
}

impl Default for IgnoreRules {
    fn default() -> Self {
        IgnoreRules {
            extensions: DEFAULT_EXTENSIONS.iter().map(|e| (*e).to_owned()).collect(),
            patterns: Vec::new(),
            extensions_from: None,
            unreadable: Vec::new(),
        }
    }
}

impl IgnoreRules {
    /// The rules of this process: its environment, and the ansible.cfg Ansible would read.
    pub(crate) fn from_environment() -> IgnoreRules {
        let env = |name: &str| std::env::var(name).ok();
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let config = config_file(env("ANSIBLE_CONFIG"), home.as_deref())
            .and_then(|path| Some((std::fs::read_to_string(&path).ok()?, path)));
        IgnoreRules::from_sources(env, config.as_ref().map(|(t, p)| (p.as_path(), t.as_str())))
    }

    /// The rules from environment variables (`env`) and an ansible.cfg's text.
    pub(crate) fn from_sources(
        env: impl Fn(&str) -> Option<String>,
        config: Option<(&Path, &str)>,
    ) -> IgnoreRules {
        let mut rules = IgnoreRules::default();
        let setting = |var: &str, keys: [(&str, &str); 2]| {
            if let Some(value) = env(var) {
                return Some((list(&value), format!("${var}")));
            }
            let (path, text) = config?;
            let value = keys.iter().rev().find_map(|(s, k)| ini_value(text, s, k))?;
            Some((list(&value), path.display().to_string()))
        };
        if let Some((extensions, from)) = setting(
            "ANSIBLE_INVENTORY_IGNORE",
            [
                ("defaults", "inventory_ignore_extensions"),
                ("inventory", "ignore_extensions"),
            ],
        ) {
            rules.extensions = extensions;
            rules.extensions_from = Some(from);
        }
        if let Some((patterns, from)) = setting(
            "ANSIBLE_INVENTORY_IGNORE_REGEX",
            [
                ("defaults", "inventory_ignore_patterns"),
                ("inventory", "ignore_patterns"),
            ],
        ) {
            for pattern in patterns {
                if pattern.chars().any(|c| "\\.^$*+?()[]{}|".contains(c)) {
                    rules.unreadable.push(format!("`{pattern}` ({from})"));
                } else {
                    rules.patterns.push(pattern);
                }
            }
        }
        rules
    }

    /// Whether Ansible skips a directory entry called `name`.
    pub(crate) fn ignores(&self, name: &str) -> bool {
        self.extensions
            .iter()
            .any(|e| !e.is_empty() && name.ends_with(e.as_str()))
            || self.patterns.iter().any(|p| name.contains(p.as_str()))
    }
}

/// The ansible.cfg Ansible reads (config/manager.py `find_ini_config_file`): `ANSIBLE_CONFIG`
/// (a directory means its ansible.cfg), else `./ansible.cfg`, else `~/.ansible.cfg`, else
/// `/etc/ansible/ansible.cfg`; the first that exists.
fn config_file(env: Option<String>, home: Option<&Path>) -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(path) = env.filter(|p| !p.is_empty()).map(PathBuf::from) {
        candidates.push(if path.is_dir() {
            path.join("ansible.cfg")
        } else {
            path
        });
    }
    candidates.push(PathBuf::from("ansible.cfg"));
    if let Some(home) = home {
        candidates.push(home.join(".ansible.cfg"));
    }
    candidates.push(PathBuf::from("/etc/ansible/ansible.cfg"));
    candidates.into_iter().find(|p| p.is_file())
}

/// `key`'s value in `[section]` of an ini text (configparser: `key = value` or `key: value`,
/// `#`/`;` comment lines, `;` inline comments after whitespace).
fn ini_value(text: &str, section: &str, key: &str) -> Option<String> {
    let mut current = String::new();
    let mut found = None;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = name.trim().to_owned();
            continue;
        }
        let Some((k, v)) = line.split_once(['=', ':']) else {
            continue;
        };
        if current == section && k.trim().eq_ignore_ascii_case(key) {
            let v = v.split(" ;").next().unwrap_or(v);
            found = Some(v.trim().to_owned());
        }
    }
    found
}

/// Ansible's `list` type from a string: comma-separated, each item stripped.
fn list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(|s| s.trim().trim_matches(['"', '\'']).to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kubespray's ansible.cfg (@46dbdd39).
    const KUBESPRAY: &str = "[ssh_connection]\npipelining=True\n[defaults]\nforce_valid_group_names = ignore\ninventory_ignore_extensions = ~, .orig, .bak, .ini, .cfg, .retry, .pyc, .pyo, .creds, .gpg\n[inventory]\nignore_patterns = artifacts, credentials\n";

    #[test]
    fn kubesprays_ansible_cfg_skips_ini_files_credentials_and_artifacts() {
        let rules =
            IgnoreRules::from_sources(|_| None, Some((Path::new("ansible.cfg"), KUBESPRAY)));
        assert_eq!(rules.extensions_from.as_deref(), Some("ansible.cfg"));
        for name in ["hosts.ini", "x.creds", "credentials", "artifacts", "a~"] {
            assert!(rules.ignores(name), "{name}");
        }
        for name in ["hosts.yaml", "inventory", "README"] {
            assert!(!rules.ignores(name), "{name}");
        }
    }

    #[test]
    fn the_environment_beats_the_file_and_the_default_reads_ini() {
        let env =
            |name: &str| (name == "ANSIBLE_INVENTORY_IGNORE_REGEX").then(|| "old, ^x.*".to_owned());
        let rules = IgnoreRules::from_sources(env, Some((Path::new("ansible.cfg"), KUBESPRAY)));
        assert!(rules.ignores("hosts.ini") && rules.ignores("old-hosts"));
        assert!(!rules.ignores("credentials"));
        assert_eq!(
            rules.unreadable,
            ["`^x.*` ($ANSIBLE_INVENTORY_IGNORE_REGEX)"]
        );
        let default = IgnoreRules::from_sources(|_| None, None);
        assert_eq!(default.extensions_from, None);
        assert!(!default.ignores("hosts.ini") && default.ignores("notes.txt"));
        // [inventory] ignore_extensions is read after [defaults] and wins.
        let both = "[defaults]\ninventory_ignore_extensions = .a\n[inventory]\nignore_extensions = .b ; why\n";
        let rules = IgnoreRules::from_sources(|_| None, Some((Path::new("c"), both)));
        assert!(rules.ignores("x.b") && !rules.ignores("x.a"));
    }
}
