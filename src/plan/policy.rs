//! What dnsfix may change on a node: a closed set of paths, sysctls, kernel modules and
//! units. dnsfix runs as root on every node, so a plan that writes `/etc/shadow` or a cron
//! file, loads an odd module or restarts sshd must be refused however it came about: a site
//! playbook, or a saved plan edited after review.
//!
//! The set is what the shipped playbooks change, the kubelet's own files as the node's
//! facts name them (its `--config`, drop-ins and flag files), and whatever a loaded
//! playbook allows explicitly with `allow:`. Planning checks every change against it, and so
//! does `apply` right before writing, with the playbooks it loaded and the facts it just
//! gathered: never with anything read from the plan file.
//!
//! A path is not enough: a sysctl.d file can set `kernel.core_pattern`, a kubelet config
//! `staticPodPath`. So what a file of the built-in set may hold is checked too
//! ([`check_content`]): resolver files hold resolver lines, sysctl.d and modules-load.d
//! files the sysctls and modules above (a sysctl file may keep the lines of other sysctls
//! it holds on the node now, unchanged and in order: /etc/sysctl.conf, a hardening file,
//! whose one line dnsfix changes), and an edit of the kubelet's or k3s's own files may
//! change its DNS settings (`resolvConf`, `clusterDNS`, `clusterDomain`, `--resolv-conf`,
//! `--cluster-dns`, `--cluster-domain`, `resolv-conf`, `cluster-dns`) and nothing else. A path a playbook's `allow:` names is the
//! playbook's own business.

use crate::facts::NodeFacts;
use crate::facts::systemd_unit::UNIT_DIRS;
use crate::playbook::{Allow, Playbook};

use super::model::{Change, HandlerRun};

/// Files and directories (a trailing `/`) the shipped playbooks write.
pub const PATHS: &[&str] = &[
    "/etc/dnsfix/resolv.conf",
    "/etc/resolv.conf",
    "/etc/systemd/resolved.conf.d/",
    "/etc/NetworkManager/conf.d/",
    "/etc/sysctl.d/",
    "/etc/sysctl.conf",
    "/etc/modules-load.d/",
    "/var/lib/kubelet/config.yaml",
    "/var/lib/kubelet/kubeadm-flags.env",
    "/etc/default/kubelet",
    "/etc/sysconfig/kubelet",
    "/etc/rancher/k3s/config.yaml",
    "/etc/rancher/k3s/config.yaml.d/",
    "/etc/rancher/rke2/config.yaml",
    "/etc/rancher/rke2/config.yaml.d/",
];
/// Those of [`PATHS`] that are systemd environment files.
const ENV_FILES: &[&str] = &[
    "/var/lib/kubelet/kubeadm-flags.env",
    "/etc/default/kubelet",
    "/etc/sysconfig/kubelet",
];
/// Sysctl names (a trailing `.` is a prefix) the shipped playbooks set: and
/// `net.ipv4.conf.all.forwarding`, the other name of `net.ipv4.ip_forward`
/// ([`crate::facts::sysctl::SAME_SETTING`]), whose line in a file applied after dnsfix's the
/// sysctl task turns on; `net.ipv4.conf.default.forwarding`, what an interface made after
/// the boot starts with ([`crate::facts::sysctl::DEFAULT_FORWARDING`]).
pub const SYSCTLS: &[&str] = &[
    "net.bridge.",
    "net.ipv4.ip_forward",
    "net.ipv4.conf.all.forwarding",
    "net.ipv4.conf.default.forwarding",
    "net.ipv6.conf.all.forwarding",
];
/// Kernel modules the shipped playbooks load.
pub const MODULES: &[&str] = &["br_netfilter", "overlay"];
/// Units the shipped playbooks restart or reload besides the kubelet's
/// ([`KUBELET_UNITS`](crate::node_script::KUBELET_UNITS)).
const RESOLVER_UNITS: &[&str] = &["systemd-resolved", "NetworkManager"];

#[derive(Debug, Clone, Default)]
pub struct Policy {
    paths: Vec<String>,
    /// Paths from a playbook's `allow:`: their content is not checked.
    allowed_paths: Vec<String>,
    /// The kubelet files that are systemd environment files (the others are YAML, or
    /// `args_files`).
    env_files: Vec<String>,
    /// MicroK8s's kubelet arguments file, a flag per line (read by kubelite).
    args_files: Vec<String>,
    sysctls: Vec<String>,
    /// Sysctls from a playbook's `allow:`: any value (the built-in ones only to 1).
    allowed_sysctls: Vec<String>,
    modules: Vec<String>,
    units: Vec<String>,
}

impl Policy {
    /// The policy for one node: the built-in set, the kubelet's files from `facts`, and the
    /// `allow:` of every playbook in `playbooks`.
    pub fn for_node(facts: &NodeFacts, playbooks: &[&Playbook]) -> Policy {
        let allows: Vec<&Allow> = playbooks.iter().map(|p| &p.allow).collect();
        Policy::with_allows(facts, &allows)
    }

    /// As [`Policy::for_node`], from the playbooks' `allow:` alone.
    pub fn with_allows(facts: &NodeFacts, allows: &[&Allow]) -> Policy {
        let owned = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let mut policy = Policy {
            paths: owned(PATHS),
            allowed_paths: Vec::new(),
            env_files: owned(ENV_FILES),
            args_files: Vec::new(),
            sysctls: owned(SYSCTLS),
            allowed_sysctls: Vec::new(),
            modules: owned(MODULES),
            units: owned(&[crate::node_script::KUBELET_UNITS, RESOLVER_UNITS].concat()),
        };
        let k = &facts.kubelet;
        policy.paths.extend(k.config_path.iter().cloned());
        policy.paths.extend(k.config_dropins.iter().cloned());
        policy.paths.extend(k.args_file.iter().cloned());
        policy.args_files.extend(k.args_file.iter().cloned());
        // The environment files the kubelet's DNS flags are set in (never a unit file: a
        // unit is not edited, and /proc is not a file).
        for flag in &k.flags {
            if let Some(path) = &flag.source.path
                && flag.source.kind == "flag"
                && k.args_file.as_ref() != Some(path)
                && !path.starts_with("/proc/")
                && !UNIT_DIRS.iter().any(|d| path.starts_with(&format!("{d}/")))
            {
                policy.paths.push(path.clone());
                policy.env_files.push(path.clone());
            }
        }
        for a in allows {
            policy.allowed_paths.extend(a.paths.iter().cloned());
            policy.allowed_sysctls.extend(a.sysctls.iter().cloned());
            policy.modules.extend(a.modules.iter().cloned());
            policy.units.extend(a.units.iter().cloned());
        }
        policy
    }

    /// Why `change` is refused, if it is. `before` is the file's text on the node now (for
    /// a file write).
    pub fn check(&self, change: &Change, before: Option<&str>) -> Result<(), String> {
        let content_checked = self.check_target(change)?;
        match change {
            Change::WriteFile { path, content, .. } if content_checked => {
                self.check_content(path, before, content)
            }
            _ => Ok(()),
        }
    }

    /// Why what `change` touches (the file, sysctl or module) is refused, if it is, before
    /// its content is known; `Ok(true)` when the content must be checked as well.
    pub fn check_target(&self, change: &Change) -> Result<bool, String> {
        match change {
            Change::WriteFile { path, mode, .. } => {
                if let Some(mode) = mode {
                    check_mode(path, mode)?;
                }
                if path_allowed(&self.allowed_paths, path) {
                    Ok(false)
                } else if path_allowed(&self.paths, path) {
                    Ok(true)
                } else {
                    Err(format!(
                        "{path} is not a file dnsfix writes (allow it with `allow: {{paths: [{path}]}}` in the playbook that writes it)"
                    ))
                }
            }
            Change::Sysctl { name, after, .. } => {
                if self.sysctl_allowed(name) {
                    self.check_sysctl_value(name, after).map(|()| false)
                } else {
                    Err(format!(
                        "sysctl {name} is not one dnsfix sets (allow it with `allow: {{sysctls: [{name}]}}`)"
                    ))
                }
            }
            Change::LoadModule { name, .. } => {
                if self.modules.iter().any(|m| m == name) {
                    Ok(false)
                } else {
                    Err(format!(
                        "module {name} is not one dnsfix loads (allow it with `allow: {{modules: [{name}]}}`)"
                    ))
                }
            }
        }
    }

    fn sysctl_allowed(&self, name: &str) -> bool {
        listed(&self.sysctls, name) || listed(&self.allowed_sysctls, name)
    }

    /// The built-in sysctls are switched on, never off: what the shipped playbooks set
    /// them to is 1 (bridged traffic through iptables, forwarding). Another value needs the
    /// sysctl in a playbook's `allow:`.
    fn check_sysctl_value(&self, name: &str, value: &str) -> Result<(), String> {
        if listed(&self.allowed_sysctls, name) || value.trim() == "1" {
            Ok(())
        } else {
            Err(format!(
                "sysctl {name} = {} is not a value dnsfix sets: dnsfix only turns it on (1); allow another with `allow: {{sysctls: [{name}]}}`",
                crate::text::escape(value.trim())
            ))
        }
    }

    /// Why `after` may not be what `path` (one of the built-in set) holds, given `before`.
    pub fn check_content(
        &self,
        path: &str,
        before: Option<&str>,
        after: &str,
    ) -> Result<(), String> {
        let refuse = |n: usize, line: &str, what: &str| Err(not_a(path, n, line, what));
        let lines = || {
            after
                .lines()
                .enumerate()
                .map(|(i, l)| (i + 1, l, l.trim()))
                .filter(|(_, _, t)| !t.is_empty() && !t.starts_with('#') && !t.starts_with(';'))
        };
        if path == "/etc/resolv.conf" || path.starts_with("/etc/dnsfix/") {
            for (n, line, t) in lines() {
                let word = t.split_whitespace().next().unwrap_or("");
                if !matches!(
                    word,
                    "nameserver" | "search" | "domain" | "options" | "sortlist"
                ) {
                    return refuse(n, line, "a resolv.conf line");
                }
            }
            return Ok(());
        }
        if path.starts_with("/etc/systemd/resolved.conf.d/") {
            let mut section = "";
            for (n, line, t) in lines() {
                if t.starts_with('[') {
                    section = t;
                } else if section != "[Resolve]" || !t.contains('=') {
                    return refuse(n, line, "a setting of systemd-resolved's [Resolve] section");
                }
            }
            return Ok(());
        }
        if path.starts_with("/etc/NetworkManager/conf.d/") {
            let mut section = "";
            for (n, line, t) in lines() {
                if t.starts_with('[') {
                    section = t;
                    continue;
                }
                let key = t.split('=').next().unwrap_or("").trim();
                let ok = match section {
                    "[main]" => matches!(key, "dns" | "rc-manager" | "systemd-resolved"),
                    "[global-dns]" => matches!(key, "searches" | "options"),
                    s if s.starts_with("[global-dns-domain-") => {
                        matches!(key, "servers" | "options")
                    }
                    _ => false,
                };
                if !ok {
                    return refuse(n, line, "a NetworkManager DNS setting");
                }
            }
            return Ok(());
        }
        if path.starts_with("/etc/sysctl.d/") || path == crate::facts::sysctl::SYSCTL_CONF {
            return self.check_sysctl_file(path, before, lines());
        }
        if path.starts_with("/etc/modules-load.d/") {
            for (n, line, t) in lines() {
                if !self.modules.iter().any(|m| m == t) {
                    return refuse(
                        n,
                        line,
                        &format!(
                            "a module dnsfix loads (allow it with `allow: {{modules: [{t}]}}`)"
                        ),
                    );
                }
            }
            return Ok(());
        }
        // The kubelet's (or k3s's) own files: only DNS settings may differ.
        let before = before.unwrap_or("");
        let same = if self.args_files.iter().any(|a| a == path) {
            same_args_but_dns(before, after)
        } else if self.env_files.iter().any(|e| e == path) {
            same_env_but_dns(before, after)
        } else {
            same_yaml_but_dns(before, after)
        };
        same.map_err(|why| format!("{path}: {why}"))
    }

    /// A sysctl.d file or /etc/sysctl.conf: the sysctls dnsfix sets, each to a value it sets
    /// ([`Policy::check_sysctl_value`]) unless the file had that line already, and the
    /// file's own lines of other sysctls exactly as `before` has them, in order; a sysctl.d
    /// file that sets nothing (it would mask a vendor file of its name) is refused, and so
    /// is one that drops or turns back a built-in sysctl the file set before.
    fn check_sysctl_file<'a>(
        &self,
        path: &str,
        before: Option<&str>,
        lines: impl Iterator<Item = (usize, &'a str, &'a str)>,
    ) -> Result<(), String> {
        let mut now = std::collections::BTreeMap::new();
        // The lines of other sysctls an administrator's file had (dnsfix edits one line of
        // /etc/sysctl.conf or of a hardening file) stay exactly as they were, in their
        // order: dnsfix adds, changes, moves or drops none of them.
        let foreign = |t: &str| {
            let (name, value) = sysctl_assignment(t);
            value.is_none() || !self.sysctl_allowed(&name)
        };
        let mut theirs = before
            .unwrap_or("")
            .lines()
            .map(str::trim)
            .filter(|t| !t.is_empty() && !t.starts_with(['#', ';']) && foreign(t));
        for (n, line, t) in lines {
            let (name, value) = sysctl_assignment(t);
            if foreign(t) && theirs.next() == Some(t) {
                continue;
            }
            let Some(value) = value.filter(|_| self.sysctl_allowed(&name)) else {
                return Err(not_a(
                    path,
                    n,
                    line,
                    &format!("a sysctl dnsfix sets (allow it with `allow: {{sysctls: [{name}]}}`)"),
                ));
            };
            // A line the file had already is not dnsfix's choice of value.
            let kept = before.is_some_and(|b| b.lines().any(|l| l.trim() == t));
            if !kept {
                self.check_sysctl_value(&name, &value)
                    .map_err(|why| format!("{path} line {n}: {why}"))?;
            }
            now.insert(name, value);
        }
        if let Some(dropped) = theirs.next() {
            return Err(format!(
                "{path} would no longer have its line \"{}\": dnsfix changes only the sysctls it sets",
                crate::text::escape(dropped)
            ));
        }
        if now.is_empty() && path != crate::facts::sysctl::SYSCTL_CONF {
            return Err(format!(
                "{path} would set no sysctl: an empty sysctl.d file masks any file of its name"
            ));
        }
        for line in before.unwrap_or("").lines().map(str::trim) {
            let (name, Some(old)) = sysctl_assignment(line) else {
                continue;
            };
            if line.starts_with(['#', ';'])
                || !listed(&self.sysctls, &name)
                || listed(&self.allowed_sysctls, &name)
            {
                continue;
            }
            match now.get(&name) {
                Some(new) if *new == "1" || *new == old => {}
                new => {
                    return Err(format!(
                        "{path}: sysctl {name} was {old} there and would be {}: dnsfix does not take back what turns it on",
                        new.map_or("unset", String::as_str)
                    ));
                }
            }
        }
        Ok(())
    }

    /// Why restarting or reloading `unit` is refused, if it is.
    pub fn check_unit(&self, unit: &str) -> Result<(), String> {
        let name = unit.strip_suffix(".service").unwrap_or(unit);
        if self.units.iter().any(|u| u == name || u == unit) {
            Ok(())
        } else {
            Err(format!(
                "unit {unit} is not one dnsfix restarts (allow it with `allow: {{units: [{name}]}}`)"
            ))
        }
    }
}

/// kubelet and k3s/RKE2 DNS settings: config keys, k3s/RKE2 keys and kubelet flags (as
/// normalised by the flag parser).
/// (Not k3s's and RKE2's top-level `cluster-domain`, a server's option that sets CoreDNS's
/// zone too, which no playbook writes; their top-level `cluster-dns`, the server's Service
/// address, stays allowed as before.)
const DNS_KEYS: &[&str] = &[
    "resolvConf",
    "clusterDNS",
    "clusterDomain",
    "resolv-conf",
    "cluster-dns",
];
const DNS_FLAGS: &[&str] = &["resolv-conf", "cluster-dns", "cluster-domain"];
/// The kubelet flags a k3s/RKE2 `kubelet-arg` item may change: no shipped playbook writes
/// `cluster-domain=` there (kubelet-cluster-dns is blocked on k3s and RKE2).
const KUBELET_ARG_FLAGS: &[&str] = &["resolv-conf", "cluster-dns"];

/// Whether `before` and `after`, both a systemd environment file, read the same apart from
/// kubelet DNS flags: the same assignments in the same order, and every assignment's words,
/// DNS flags (and a separate value) taken out, the same.
fn same_env_but_dns(before: &str, after: &str) -> Result<(), String> {
    use crate::facts::kubelet_flags::{EnvFile, normalize_name, split_words};
    let canonical = |text: &str| -> Vec<(String, bool, Vec<String>)> {
        EnvFile::parse(text)
            .vars
            .into_iter()
            .map(|var| {
                let mut kept = Vec::new();
                let mut words = split_words(&var.value, 0).into_iter();
                while let Some((word, _)) = words.next() {
                    let body = word.trim_start_matches('-');
                    let dashed = word.len() - body.len();
                    let (name, has_value) = match body.split_once('=') {
                        Some((n, _)) => (normalize_name(n), true),
                        None => (normalize_name(body), false),
                    };
                    if (1..=2).contains(&dashed) && DNS_FLAGS.contains(&name.as_str()) {
                        if !has_value {
                            words.next();
                        }
                        continue;
                    }
                    kept.push(word);
                }
                (var.name, var.exported, kept)
            })
            .collect()
    };
    let (was, now) = (canonical(before), canonical(after));
    // The same assignments, in the same order: a repeated or new one would replace a
    // variable's flags (systemd uses the last assignment) or another file's.
    let names = |vars: &[(String, bool, Vec<String>)]| -> Vec<(String, bool)> {
        vars.iter().map(|(n, e, _)| (n.clone(), *e)).collect()
    };
    if names(&was) != names(&now) {
        return Err("the assignments differ (a variable added, removed or repeated)".into());
    }
    if was == now {
        return Ok(());
    }
    let differs = now
        .iter()
        .find(|v| !was.contains(v))
        .or_else(|| was.iter().find(|v| !now.contains(v)))
        .map(|(name, _, _)| name.clone())
        .unwrap_or_default();
    Err(format!(
        "{differs} changes beyond --resolv-conf, --cluster-dns and --cluster-domain"
    ))
}

/// `value` with its DNS settings taken out: the keys of [`DNS_KEYS`] at the top level,
/// `resolverConfig` in any case (the name kubelet 1.28 to 1.31 read resolvConf by in a
/// drop-in), and `resolv-conf=`/`cluster-dns=` items of a `kubelet-arg` list (a
/// `kubelet-arg+` list of nothing else goes whole: it adds only those).
fn without_dns_keys(value: serde_norway::Value) -> serde_norway::Value {
    use serde_norway::Value;
    let Value::Mapping(map) = value else {
        return value;
    };
    let mut out = serde_norway::Mapping::new();
    for (key, val) in map {
        let name = key.as_str().unwrap_or_default();
        if DNS_KEYS.contains(&name) || name.eq_ignore_ascii_case("resolverConfig") {
            continue;
        }
        let val = match (name, val) {
            ("kubelet-arg" | "kubelet-arg+", Value::Sequence(items)) => {
                let kept: Vec<Value> = items
                    .into_iter()
                    .filter(|item| {
                        let arg = item.as_str().unwrap_or_default().trim_start_matches('-');
                        !KUBELET_ARG_FLAGS
                            .iter()
                            .any(|f| arg.strip_prefix(f).is_some_and(|r| r.starts_with('=')))
                    })
                    .collect();
                // An empty list stays: a new `kubelet-arg` (in a drop-in, say) replaces every
                // kubelet-arg of config.yaml, DNS or not. A `kubelet-arg+` of DNS flags only
                // adds nothing else.
                if kept.is_empty() && name == "kubelet-arg+" {
                    continue;
                }
                Value::Sequence(kept)
            }
            (_, val) => val,
        };
        out.insert(key, val);
    }
    Value::Mapping(out)
}

/// A MicroK8s arguments file: every line stays byte for byte, its line ending too
/// (comments as well: MicroK8s's wrapper greps the whole file), but for whole lines of one
/// DNS flag. Such a line may go or change, and one may be added as dnsfix writes it,
/// `--flag=value` with nothing kubelite would change in the value. What kubelite passes
/// on must then read the same but for the DNS flags: no other flag may take a new value
/// (a line slipped in after a `--name` that takes the next word), and no word may become
/// one dnsfix cannot place.
fn same_args_but_dns(before: &str, after: &str) -> Result<(), String> {
    use crate::facts::kubelet_flags::normalize_name;
    use crate::facts::microk8s;
    // One DNS flag and nothing else on the line (either form), as kubelite reads it.
    let dns_line = |line: &str| -> bool {
        let Some(words) = microk8s::lines(line).into_iter().next().map(|l| l.words) else {
            return false;
        };
        let dns = |word: &str| {
            word.strip_prefix("--")
                .map(|body| normalize_name(body.split('=').next().unwrap_or_default()))
                .is_some_and(|name| DNS_FLAGS.contains(&name.as_str()))
        };
        match words.as_slice() {
            [one] => dns(one) && one.contains('='),
            [flag, value] => dns(flag) && !flag.contains('=') && !value.is_empty(),
            _ => false,
        }
    };
    // As dnsfix writes one (`args_flag`'s spelling, a value it would write).
    let written = |line: &str| -> bool {
        line.trim_end_matches(['\n', '\r'])
            .strip_prefix("--")
            .and_then(|body| body.split_once('='))
            .is_some_and(|(name, value)| {
                DNS_FLAGS.contains(&name)
                    && crate::edit::args_flag::check_value(name, value).is_ok()
            })
    };
    let refuse = |what: String| {
        Err(format!(
            "more than its DNS flags (--resolv-conf, --cluster-dns, --cluster-domain) would change: {}",
            crate::text::escape(&what)
        ))
    };
    // Lines with their endings (a last line without one is read as if it had the file's:
    // appending a line gives it one).
    let pieces = |text: &str| -> Vec<String> {
        let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_owned).collect();
        if let Some(last) = lines.last_mut()
            && !last.ends_with('\n')
        {
            last.push_str(crate::edit::line_ending(text));
        }
        lines
    };
    let (was, now) = (pieces(before), pieces(after));
    let kept_before: Vec<&String> = was.iter().filter(|l| !dns_line(l)).collect();
    let kept_after: Vec<&String> = now
        .iter()
        .filter(|l| !(written(l) || (dns_line(l) && was.contains(l))))
        .collect();
    if kept_before != kept_after {
        let differs = kept_after
            .iter()
            .find(|l| !kept_before.contains(l))
            .or_else(|| kept_before.iter().find(|l| !kept_after.contains(l)))
            .map_or_else(|| "the order of its lines".to_owned(), |l| format!("{l:?}"));
        return refuse(differs);
    }
    let others = |text: &str| -> Vec<(String, Option<String>)> {
        microk8s::flags(text, "")
            .into_iter()
            .filter(|f| !DNS_FLAGS.contains(&f.name.as_str()))
            .map(|f| (f.name, f.value))
            .collect()
    };
    if others(before) != others(after) {
        return refuse("another flag would read a different value".into());
    }
    if let (None, Some((line, what))) = (
        microk8s::unplaced_word(before),
        microk8s::unplaced_word(after),
    ) {
        return refuse(format!("line {line}: {what}"));
    }
    Ok(())
}

/// Whether `before` and `after`, both YAML (or JSON) kubelet or k3s/RKE2 configuration,
/// hold the same apart from DNS settings. A file that does not parse is refused, but for a
/// current file with a key written twice, read as the kubelet reads its `--config` file
/// (the last one counts): the plan may take out the earlier one. A planned text is strict.
fn same_yaml_but_dns(before: &str, after: &str) -> Result<(), String> {
    let read = |text: &str, which: &str| -> Result<serde_norway::Value, String> {
        if text.trim().is_empty() {
            return Ok(serde_norway::Value::Mapping(serde_norway::Mapping::new()));
        }
        serde_norway::from_str(text)
            .or_else(|e| match which {
                "current" => crate::facts::kubelet_config::last_wins(text).ok_or(e),
                _ => Err(e),
            })
            .map(|v| match v {
                // Only comments, or only `---`: an empty configuration.
                serde_norway::Value::Null => {
                    serde_norway::Value::Mapping(serde_norway::Mapping::new())
                }
                v => v,
            })
            .map(without_dns_keys)
            .map_err(|e| format!("the {which} text is not YAML ({e})"))
    };
    let was = read(before, "current")?;
    let now = read(after, "planned")?;
    if was == now {
        return Ok(());
    }
    let (serde_norway::Value::Mapping(a), serde_norway::Value::Mapping(b)) = (&was, &now) else {
        return Err("the change is not only to DNS settings".into());
    };
    let key = b
        .iter()
        .find(|(k, v)| a.get(*k) != Some(*v))
        .or_else(|| a.iter().find(|(k, _)| !b.contains_key(*k)))
        .and_then(|(k, _)| k.as_str().map(str::to_owned))
        .unwrap_or_default();
    Err(format!("{key} changes, not only DNS settings"))
}

/// Every change and handler of one host's plan against `policy`: the first refusal, named
/// by the playbook and task that asked for it. `before` gives a file's text on the node.
pub fn check_host<'a>(
    policy: &Policy,
    changes: &[Change],
    handlers: &[HandlerRun],
    before: impl Fn(&str) -> Option<&'a str>,
) -> Result<(), String> {
    for change in changes {
        let current = match change {
            Change::WriteFile { path, .. } => before(path),
            _ => None,
        };
        policy
            .check(change, current)
            .map_err(|why| refusal(change, &why))?;
    }
    for handler in handlers {
        policy
            .check_unit(&handler.unit)
            .map_err(|why| format!("refused: {why} (handler \"{}\")", handler.name))?;
    }
    Ok(())
}

/// A sysctl.d line's name (`/` read as `.`) and, when it is a plain `name = value`
/// assignment, its value (trimmed). `net/bridge/../../kernel/core_pattern` is not plain.
fn sysctl_assignment(line: &str) -> (String, Option<String>) {
    let name = line
        .trim_start_matches('-')
        .split('=')
        .next()
        .unwrap_or("")
        .trim()
        .replace('/', ".");
    let plain = name.split('.').all(|part| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c))
    });
    let value = line
        .split_once('=')
        .filter(|_| plain)
        .map(|(_, v)| v.trim().to_owned());
    (name, value)
}

/// The widest mode a file dnsfix creates may have: configuration, read by all, written by
/// root. Group or world write, execute, setuid, setgid or sticky bits are refused, from a
/// playbook's `mode:` or a saved plan's (an edited plan must not leave a root file that any
/// user can write: a sysctl.d file would then set `kernel.core_pattern` at the next boot).
const WIDEST_MODE: u32 = 0o644;

/// Why `mode` (octal, for a new file at `path`) is refused, if it is.
fn check_mode(path: &str, mode: &str) -> Result<(), String> {
    let bits = Some(mode)
        .filter(|m| !m.is_empty() && m.len() <= 4)
        .and_then(|m| u32::from_str_radix(m, 8).ok())
        .ok_or_else(|| {
            format!(
                "{path}: mode {} is not an octal file mode",
                crate::text::escape(mode)
            )
        })?;
    if bits & !WIDEST_MODE != 0 {
        return Err(format!(
            "{path}: mode {mode} is wider than {WIDEST_MODE:04o}: dnsfix creates configuration files that only root writes"
        ));
    }
    Ok(())
}

/// Why line `n` of `path` is refused: it is not `what`.
fn not_a(path: &str, n: usize, line: &str, what: &str) -> String {
    format!(
        "{path} line {n}: {:?} is not {what}",
        line.chars().take(80).collect::<String>()
    )
}

/// `name` is in `list` (a trailing `.` is a prefix).
fn listed(list: &[String], name: &str) -> bool {
    list.iter().any(|a| match a.strip_suffix('.') {
        Some(prefix) => name.starts_with(&format!("{prefix}.")),
        None => a == name,
    })
}

/// What every change of one host's plan touches, against `policy`, before anything is read
/// for it (a saved plan's redacted values are restored from the node only for files dnsfix
/// may write at all).
pub fn check_targets(policy: &Policy, changes: &[Change]) -> Result<(), String> {
    for change in changes {
        policy
            .check_target(change)
            .map_err(|why| refusal(change, &why))?;
    }
    Ok(())
}

fn refusal(change: &Change, why: &str) -> String {
    let by: Vec<String> = change
        .reasons()
        .iter()
        .map(|r| format!("playbook {} task \"{}\"", r.playbook, r.task))
        .collect();
    format!("refused: {why} (asked by {})", by.join(", "))
}

/// Whether apply may read `path` because a saved plan's facts name it, before it knows
/// anything else about the node: a path the gather reads on every node, a unit file, a
/// `/proc/sys` value, a file dnsfix (or a loaded playbook's `allow:`) may write. Any other
/// path a plan names must be one the node's own gather reads (a unit's EnvironmentFile=,
/// a `--config` elsewhere); it is never read on a plan's word alone, so an edited plan
/// cannot learn whether `/etc/shadow` hashes to a guess.
pub fn readable_on_request(path: &str, allows: &[&Allow]) -> bool {
    use crate::facts::raw::{ALWAYS_GATHERED, CONF_DIRS};
    let clean = path.starts_with('/')
        && !path
            .split('/')
            .any(|c| c == ".." || c == "." || c.contains('\n'));
    if !clean {
        return false;
    }
    let under = |dir: &str| {
        path.strip_prefix(dir)
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|rest| !rest.is_empty())
    };
    let written: Vec<String> = PATHS
        .iter()
        .map(|p| (*p).to_owned())
        .chain(allows.iter().flat_map(|a| a.paths.iter().cloned()))
        .collect();
    ALWAYS_GATHERED.contains(&path)
        || CONF_DIRS.iter().any(|d| under(d))
        || UNIT_DIRS.iter().any(|d| under(d))
        || path.starts_with("/proc/sys/")
        || path.starts_with("/var/lib/dnsfix/")
        || path_allowed(&written, path)
}

/// `path` is one of `allowed`, or inside one that ends with `/`. A path with `.` or `..`
/// components, or not absolute, never is.
fn path_allowed(allowed: &[String], path: &str) -> bool {
    if !path.starts_with('/')
        || path
            .split('/')
            .any(|c| c == ".." || c == "." || c.contains('\n'))
    {
        return false;
    }
    allowed.iter().any(|a| {
        if a.ends_with('/') {
            path.starts_with(a.as_str()) && path.len() > a.len()
        } else {
            a == path
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::Reason;

    fn write(path: &str, content: &str) -> Change {
        Change::WriteFile {
            path: path.into(),
            description: String::new(),
            before_sha256: None,
            before: None,
            after_sha256: String::new(),
            content: content.into(),
            mode: None,
            reasons: Vec::<Reason>::new(),
        }
    }

    fn policy() -> Policy {
        let allow = Allow {
            paths: vec!["/opt/kube/config.yaml".into()],
            ..Allow::default()
        };
        Policy::with_allows(&crate::testing::facts_from(&[]), &[&allow])
    }

    /// A new file's mode, from a playbook or an edited saved plan: configuration that only
    /// root writes, whatever the path (a playbook's `allow:` too).
    #[test]
    fn a_new_file_is_never_writable_by_others_nor_special() {
        let p = policy();
        let with_mode = |path: &str, mode: &str| {
            let mut change = write(path, "net.bridge.bridge-nf-call-iptables = 1\n");
            if let Change::WriteFile { mode: m, .. } = &mut change {
                *m = Some(mode.into());
            }
            change
        };
        for ok in ["0644", "644", "0600", "0640", "0444", "0400"] {
            assert!(
                p.check(&with_mode("/etc/sysctl.d/99-dnsfix.conf", ok), None)
                    .is_ok(),
                "{ok}"
            );
        }
        for path in ["/etc/sysctl.d/99-dnsfix.conf", "/opt/kube/config.yaml"] {
            for bad in [
                "0666", "0664", "0646", "0755", "0744", "4644", "2644", "1644", "", "0x1a4",
                "06444", "9",
            ] {
                let refused = p.check(&with_mode(path, bad), None);
                assert!(refused.is_err(), "{path} {bad}");
                assert!(refused.expect_err("refused").contains(path), "{path} {bad}");
            }
        }
    }

    #[test]
    fn only_what_dnsfix_writes_is_allowed() {
        let p = policy();
        for ok in [
            "/etc/dnsfix/resolv.conf",
            "/etc/resolv.conf",
            "/etc/sysctl.d/99-dnsfix.conf",
            "/etc/rancher/k3s/config.yaml.d/10-dns.yaml",
            "/opt/kube/config.yaml",
        ] {
            // A sysctl.d file must set something (an empty one masks a vendor file).
            let content = if ok.starts_with("/etc/sysctl.d/") {
                "net.ipv4.ip_forward = 1\n"
            } else {
                ""
            };
            assert!(p.check(&write(ok, content), None).is_ok(), "{ok}");
        }
        for bad in [
            "/etc/shadow",
            "/etc/cron.d/x",
            "/etc/dnsfix/../shadow",
            "/etc/dnsfix/",
            "/etc/resolv.conf.d",
            "relative/path",
            "/root/.ssh/authorized_keys",
            "/etc/kubernetes/manifests/evil.yaml",
            "/etc/rancher/k3s/registries.yaml",
        ] {
            assert!(p.check(&write(bad, ""), None).is_err(), "{bad}");
        }
        let sysctl = |name: &str| Change::Sysctl {
            name: name.into(),
            before: None,
            after: "1".into(),
            reasons: vec![],
        };
        assert!(
            p.check(&sysctl("net.bridge.bridge-nf-call-iptables"), None)
                .is_ok()
        );
        assert!(p.check(&sysctl("kernel.core_pattern"), None).is_err());
        assert!(p.check(&sysctl("net.bridgefoo"), None).is_err());
        assert!(
            p.check(&sysctl("net.ipv4.conf.all.rp_filter"), None)
                .is_err()
        );
        let module = |name: &str| Change::LoadModule {
            name: name.into(),
            reasons: vec![],
        };
        assert!(p.check(&module("br_netfilter"), None).is_ok());
        assert!(p.check(&module("evil"), None).is_err());
        assert!(p.check_unit("kubelet").is_ok());
        assert!(p.check_unit("sshd").is_err());
    }

    /// The built-in sysctls are only ever switched on: an edited plan that sets forwarding
    /// off, now or for the next boot, is refused; a value the file had already stays, and
    /// a playbook's `allow:` lets any value through.
    #[test]
    fn built_in_sysctls_are_only_switched_on() {
        let p = policy();
        let set = |name: &str, value: &str| Change::Sysctl {
            name: name.into(),
            before: Some("1".into()),
            after: value.into(),
            reasons: vec![],
        };
        assert!(p.check(&set("net.ipv4.ip_forward", "1"), None).is_ok());
        let err = p
            .check(&set("net.ipv4.ip_forward", "0"), None)
            .expect_err("off");
        assert!(
            err.contains("sysctl net.ipv4.ip_forward = 0 is not a value dnsfix sets"),
            "{err}"
        );
        assert!(
            p.check(&set("net.bridge.bridge-nf-call-iptables", "0\n"), None)
                .is_err()
        );
        let file = "/etc/sysctl.d/99-dnsfix.conf";
        let off = "net.bridge.bridge-nf-call-iptables = 1\nnet.ipv4.ip_forward = 0\n";
        let err = p.check(&write(file, off), None).expect_err("off at boot");
        assert!(err.contains(&format!("{file} line 2:")), "{err}");
        let before = "net.bridge.bridge-nf-call-arptables = 0\n";
        let kept =
            "net.bridge.bridge-nf-call-arptables = 0\nnet.bridge.bridge-nf-call-iptables = 1\n";
        assert!(p.check(&write(file, kept), Some(before)).is_ok());
        let allow = Allow {
            sysctls: vec!["net.ipv4.ip_forward".into()],
            ..Allow::default()
        };
        let allowed = Policy::with_allows(&crate::testing::facts_from(&[]), &[&allow]);
        assert!(
            allowed
                .check(&set("net.ipv4.ip_forward", "0"), None)
                .is_ok()
        );
        assert!(allowed.check(&write(file, off), None).is_ok());

        // Nor is forwarding taken away by dropping its line, emptying the file, or
        // keeping an earlier `= 0` while the `= 1` after it goes; an empty file would
        // mask a vendor file of its name.
        let on = "net.ipv4.ip_forward = 0\nnet.ipv4.ip_forward = 1\nnet.bridge.bridge-nf-call-iptables = 1\n";
        for (after, says) in [
            ("net.bridge.bridge-nf-call-iptables = 1\n", "would be unset"),
            (
                "net.ipv4.ip_forward = 0\nnet.bridge.bridge-nf-call-iptables = 1\n",
                "would be 0",
            ),
            ("# nothing\n", "would set no sysctl"),
            ("", "would set no sysctl"),
        ] {
            let err = p.check(&write(file, after), Some(on)).expect_err(after);
            assert!(err.contains(says), "{after:?}: {err}");
        }
        let reordered = "net.bridge.bridge-nf-call-iptables = 1\nnet.ipv4.ip_forward = 1\n";
        assert!(p.check(&write(file, reordered), Some(on)).is_ok());
    }

    /// An administrator's sysctl file (a hardening baseline, /etc/sysctl.conf) that the
    /// boot applies after dnsfix's: dnsfix may turn its bridge or forwarding line to 1, and
    /// its other lines stay exactly as they were; adding, changing, moving or dropping one
    /// is refused.
    #[test]
    fn an_administrators_sysctl_file_changes_only_in_the_sysctls_dnsfix_sets() {
        let p = policy();
        let before = "# CIS baseline\nnet.ipv4.conf.all.send_redirects = 0\nkernel.sysrq = 0\nnet.ipv4.ip_forward = 0\n";
        let edited = "# CIS baseline\nnet.ipv4.conf.all.send_redirects = 0\nkernel.sysrq = 0\nnet.ipv4.ip_forward = 1\n";
        for file in ["/etc/sysctl.d/zz-cis.conf", "/etc/sysctl.conf"] {
            assert!(
                p.check(&write(file, edited), Some(before)).is_ok(),
                "{file}"
            );
            for (after, says) in [
                (
                    "# CIS baseline\nnet.ipv4.conf.all.send_redirects = 0\nkernel.sysrq = 0\nkernel.core_pattern = |/tmp/x\nnet.ipv4.ip_forward = 1\n",
                    "line 4",
                ),
                (
                    "# CIS baseline\nnet.ipv4.conf.all.send_redirects = 0\nkernel.sysrq = 1\nnet.ipv4.ip_forward = 1\n",
                    "line 3",
                ),
                (
                    "# CIS baseline\nkernel.sysrq = 0\nnet.ipv4.conf.all.send_redirects = 0\nnet.ipv4.ip_forward = 1\n",
                    "line 2",
                ),
                (
                    "# CIS baseline\nnet.ipv4.conf.all.send_redirects = 0\nnet.ipv4.ip_forward = 1\n",
                    "would no longer have its line \"kernel.sysrq = 0\"",
                ),
            ] {
                let err = p.check(&write(file, after), Some(before)).expect_err(after);
                assert!(err.contains(says) && err.contains(file), "{after:?}: {err}");
            }
        }
        // /etc/sysctl.conf is a legacy file, not a drop-in: without a sysctl left it
        // masks nothing.
        let file = "/etc/sysctl.conf";
        let only_theirs = "kernel.sysrq = 0\n";
        assert!(
            p.check(&write(file, only_theirs), Some(only_theirs))
                .is_ok()
        );
    }

    /// Files written whole hold only what such a file is for.
    #[test]
    fn whole_files_hold_only_their_own_settings() {
        let p = policy();
        let check = |path: &str, content: &str| p.check(&write(path, content), None);
        for (path, ok, bad) in [
            (
                "/etc/sysctl.d/99-dnsfix.conf",
                "# dnsfix\nnet.bridge.bridge-nf-call-iptables = 1\nnet.ipv4.ip_forward=1\n",
                "net.bridge.bridge-nf-call-iptables = 1\nkernel.core_pattern = |/tmp/x %p\n",
            ),
            (
                "/etc/modules-load.d/dnsfix.conf",
                "# dnsfix\nbr_netfilter\n",
                "br_netfilter\nevil\n",
            ),
            (
                "/etc/resolv.conf",
                "# Ansible entries\nnameserver 10.233.0.3\nsearch example.com\noptions ndots:2\n",
                "nameserver 1.1.1.1\n* * * * * root sh /tmp/x\n",
            ),
            (
                "/etc/systemd/resolved.conf.d/zz-dnsfix-upstream.conf",
                "# dnsfix\n[Resolve]\nDNS=1.1.1.1 8.8.8.8\n",
                "[Service]\nExecStart=/tmp/x\n",
            ),
            (
                "/etc/NetworkManager/conf.d/zz-dnsfix-upstream.conf",
                "[global-dns-domain-*]\nservers=10.233.0.3,1.1.1.1\n",
                "[global-dns-domain-*]\nservers=1.1.1.1\n[connection]\nipv4.dns=6.6.6.6\n",
            ),
        ] {
            assert!(check(path, ok).is_ok(), "{path}: {:?}", check(path, ok));
            let err = check(path, bad).expect_err(path);
            assert!(err.contains(path) && err.contains("line"), "{err}");
        }
    }

    /// MicroK8s's arguments file: the args_flag edit passes; another flag, a word turned
    /// into a flag's value, or a flag dropped does not.
    #[test]
    fn a_microk8s_arguments_file_changes_only_in_dns_flags() {
        let facts = crate::testing::facts_from(&[]);
        let mut p = Policy::with_allows(&facts, &[]);
        let path = "/var/snap/microk8s/7964/args/kubelet";
        p.paths.push(path.into());
        p.args_files.push(path.into());
        let before = "--resolv-conf=/run/systemd/resolve/resolv.conf\n\
                      --cert-dir=${SNAP_DATA}/certs\n--cluster-dns=10.152.183.10\n";
        let edit =
            crate::edit::args_flag::set_flag(before, "resolv-conf", "/etc/dnsfix/resolv.conf")
                .expect("editable");
        assert_eq!(p.check(&write(path, &edit.text), Some(before)), Ok(()));
        // A DNS line slipped in where a flag takes the next line as its value, or after
        // `--`: the kubelet would read another flag differently, or refuse to start.
        for (before, after) in [
            ("--kubeconfig\n/k\n", "--kubeconfig\n--resolv-conf=/y\n/k\n"),
            ("--x=1\n--\n", "--x=1\n--\n--resolv-conf=/y\n"),
        ] {
            let err = p
                .check(&write(path, after), Some(before))
                .expect_err("refused");
            assert!(err.contains("more than its DNS flags"), "{err}");
        }
        // No trailing newline: the appended line is the only change.
        let bare = "--x=1";
        let appended = crate::edit::args_flag::set_flag(bare, "resolv-conf", "/r")
            .expect("editable")
            .text;
        assert_eq!(p.check(&write(path, &appended), Some(bare)), Ok(()));
        for after in [
            format!("{}--pod-manifest-path=/tmp/x\n", edit.text),
            edit.text.replace("--cert-dir=${SNAP_DATA}/certs\n", ""),
            edit.text.replace("--cert-dir=", "--resolv-conf "),
            // A comment MicroK8s's wrapper would read, an empty word kubelet would refuse,
            // a word moved onto a DNS flag's line, a single-dash flag pflag refuses.
            format!("# --pod-cidr=10.0.0.0/8\n{}", edit.text),
            edit.text.replace(
                "--cluster-dns=10.152.183.10",
                "--cluster-dns=10.152.183.10 ",
            ),
            edit.text.replace(
                "--cert-dir=${SNAP_DATA}/certs\n",
                "--cert-dir=${SNAP_DATA}/certs --cluster-dns=1.1.1.1\n",
            ),
            format!("{}-resolv-conf=/x\n", edit.text),
            format!("{}--resolv-conf=$HOME/x\n", edit.text),
            // Line endings are kept.
            edit.text.replace('\n', "\r\n"),
        ] {
            let err = p
                .check(&write(path, &after), Some(before))
                .expect_err("refused");
            assert!(err.contains("more than its DNS flags"), "{err}");
        }
    }

    /// The editors' own fixture pairs (real kubeadm, Kubespray, /etc/default and k3s
    /// files) pass; the same edits with one more setting changed do not.
    #[test]
    fn kubelet_and_k3s_files_change_only_in_dns_settings() {
        let facts = crate::testing::facts_from(&[]);
        let mut p = Policy::with_allows(&facts, &[]);
        p.paths.push("/etc/kubernetes/kubelet.env".into());
        p.env_files.push("/etc/kubernetes/kubelet.env".into());
        let check =
            |path: &str, before: &str, after: &str| p.check(&write(path, after), Some(before));
        let pairs = [
            (
                "/var/lib/kubelet/config.yaml",
                include_str!("../../tests/fixtures/edit/yaml/kubeadm-config/config.yaml"),
                include_str!(
                    "../../tests/fixtures/edit/yaml/kubeadm-config/expected-clusterDNS.yaml"
                ),
                (
                    "staticPodPath: /etc/kubernetes/manifests",
                    "staticPodPath: /tmp",
                ),
            ),
            (
                "/etc/rancher/k3s/config.yaml",
                include_str!("../../tests/fixtures/edit/yaml/k3s-config/config.yaml"),
                include_str!("../../tests/fixtures/edit/yaml/k3s-config/expected-kubelet-arg.yaml"),
                (
                    "\"max-pods=150\"",
                    "\"max-pods=150\"\n  - \"pod-manifest-path=/tmp\"",
                ),
            ),
            (
                "/etc/kubernetes/kubelet.env",
                include_str!("../../tests/fixtures/edit/env/kubespray-kubelet-env/kubelet.env"),
                include_str!(
                    "../../tests/fixtures/edit/env/kubespray-kubelet-env/expected-remove-resolv-conf.env"
                ),
                (
                    "--runtime-cgroups=",
                    "--pod-manifest-path=/tmp --runtime-cgroups=",
                ),
            ),
            (
                "/var/lib/kubelet/kubeadm-flags.env",
                include_str!("../../tests/fixtures/edit/env/kubeadm-flags-env/kubeadm-flags.env"),
                include_str!(
                    "../../tests/fixtures/edit/env/kubeadm-flags-env/expected-remove-resolv-conf.env"
                ),
                (
                    "--container-runtime-endpoint",
                    "--root-dir=/tmp --container-runtime-endpoint",
                ),
            ),
            (
                "/etc/default/kubelet",
                include_str!("../../tests/fixtures/edit/env/etc-default-kubelet/kubelet"),
                include_str!(
                    "../../tests/fixtures/edit/env/etc-default-kubelet/expected-set-resolv-conf"
                ),
                (
                    "KUBELET_EXTRA_ARGS=",
                    "LD_PRELOAD=/tmp/x.so\nKUBELET_EXTRA_ARGS=",
                ),
            ),
        ];
        for (path, before, after, (from, to)) in pairs {
            assert_ne!(before, after, "{path}");
            assert!(
                check(path, before, after).is_ok(),
                "{path}: {:?}",
                check(path, before, after)
            );
            assert!(after.contains(from), "{path}: {from}");
            let tampered = after.replacen(from, to, 1);
            let err = check(path, before, &tampered).expect_err(path);
            assert!(err.starts_with(path), "{err}");
        }
        // Review findings: a repeated assignment, a new kubelet-arg list, a `..` sysctl.
        let env = include_str!("../../tests/fixtures/edit/env/kubeadm-flags-env/kubeadm-flags.env");
        let repeated = format!("{env}KUBELET_KUBEADM_ARGS=\"--resolv-conf=/x\"\n");
        assert!(check("/var/lib/kubelet/kubeadm-flags.env", env, &repeated).is_err());
        assert!(
            check(
                "/etc/rancher/k3s/config.yaml.d/99-x.yaml",
                "",
                "kubelet-arg: [resolv-conf=/x]\n"
            )
            .is_err()
        );
        assert!(
            check(
                "/etc/rancher/k3s/config.yaml",
                "# managed elsewhere\n",
                "# managed elsewhere\nresolv-conf: /etc/dnsfix/resolv.conf\n"
            )
            .is_ok()
        );
        assert!(
            p.check(
                &write(
                    "/etc/sysctl.d/99-dnsfix.conf",
                    "net/bridge/../../kernel/core_pattern = |/tmp/x\n"
                ),
                None
            )
            .is_err()
        );
        // A new k3s drop-in may only set resolv-conf.
        let dropin = "/etc/rancher/k3s/config.yaml.d/90-dnsfix.yaml";
        assert!(check(dropin, "", "resolv-conf: /etc/dnsfix/resolv.conf\n").is_ok());
        assert!(check(dropin, "", "resolv-conf: /x\ndisable-apiserver: true\n").is_err());
    }

    /// clusterDomain in the kubelet's config and --cluster-domain in its environment files
    /// may change (kubelet-cluster-dns); not k3s's top-level cluster-domain (a server's
    /// option, CoreDNS's zone) nor a kubelet-arg item of it, which no playbook writes.
    #[test]
    fn the_kubelets_cluster_domain_may_change_not_k3ss() {
        let facts = crate::testing::facts_from(&[]);
        let p = Policy::with_allows(&facts, &[]);
        let check =
            |path: &str, before: &str, after: &str| p.check(&write(path, after), Some(before));
        let config = include_str!("../../tests/fixtures/edit/yaml/kubeadm-config/config.yaml");
        assert!(config.contains("clusterDomain: cluster.local\n"));
        let domain = config.replace(
            "clusterDomain: cluster.local\n",
            "clusterDomain: corp.local\n",
        );
        assert!(check("/var/lib/kubelet/config.yaml", config, &domain).is_ok());
        let env = include_str!("../../tests/fixtures/edit/env/etc-default-kubelet/kubelet");
        let flagged = env.replace(
            "KUBELET_EXTRA_ARGS=",
            "KUBELET_EXTRA_ARGS=--cluster-domain=corp.local ",
        );
        assert_ne!(flagged, env);
        assert!(check("/etc/default/kubelet", env, &flagged).is_ok());
        let k3s = include_str!("../../tests/fixtures/edit/yaml/k3s-config/config.yaml");
        for (what, after) in [
            ("top-level", format!("{k3s}cluster-domain: corp.local\n")),
            (
                "kubelet-arg",
                k3s.replacen(
                    "\"max-pods=150\"",
                    "\"max-pods=150\"\n  - \"cluster-domain=corp.local\"",
                    1,
                ),
            ),
        ] {
            assert_ne!(after, k3s, "{what}");
            assert!(
                check("/etc/rancher/k3s/config.yaml", k3s, &after).is_err(),
                "{what}"
            );
        }
    }
}
