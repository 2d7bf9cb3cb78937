//! The facts a plan depends on: made when planning ([`digest_core`], [`file_digest`]) and
//! compared with the facts gathered right before apply ([`reasons`]), so that both sides
//! read a file, a sysctl and a module the same way. Apply refuses a host whose facts moved
//! since the plan was made, as readable lines, and writes nothing there.
//!
//! What the plan itself changes does not count: a file already at the plan's new content,
//! a sysctl already at its new value or a module already loaded is an earlier, interrupted
//! apply of the same plan, and applying again converges.

use crate::facts::NodeFacts;
use crate::facts::node_facts::Observed;
use crate::facts::raw::{FileState, RawFile};
use crate::facts::sysctl::normalize_value;
use crate::plan::model::{Change, FactDigest, FileDigest, FileDigestState, HostPlan};
use crate::util::sha256_hex;

/// The digest of one gathered file, as plans record it.
pub fn file_digest(raw: &RawFile) -> FileDigest {
    FileDigest {
        state: raw.state.into(),
        sha256: raw.sha256.clone(),
        symlink: raw.symlink_target.clone(),
    }
}

impl NodeFacts {
    /// The digest of `path` as gathered; `NotGathered` when the gather did not read it.
    pub fn file_digest(&self, path: &str) -> FileDigest {
        match self.files.get(path) {
            Some(raw) => file_digest(raw),
            None => FileDigest {
                state: FileDigestState::NotGathered,
                sha256: None,
                symlink: None,
            },
        }
    }
}

/// Adds the facts every plan depends on to `digest`: every configuration file the gather
/// read (all of it outside /proc and /sys: a `when`, a template or a rule may have used
/// any of them), besides the /proc values the tasks read, and the kubelet binary's version
/// where the gather asked it. Volatile kernel state such as /proc/modules or the kubelet's
/// pid is left out, so only a real change makes a plan stale.
pub fn digest_core(digest: &mut FactDigest, facts: &NodeFacts) {
    for (path, raw) in &facts.files {
        if !configuration(path) {
            continue;
        }
        digest
            .files
            .entry(path.clone())
            .or_insert_with(|| file_digest(raw));
    }
    // A kubelet whose binary was replaced on disk runs another version after its next
    // restart, which apply may be the one to make: no version to hold the plan to.
    digest.kubelet_version = facts
        .kubelet
        .version
        .clone()
        .filter(|_| !facts.kubelet.binary_replaced);
    let mut canonical = digest.clone();
    canonical.sha256 = String::new();
    digest.sha256 = sha256_hex(
        serde_json::to_string(&canonical)
            .unwrap_or_default()
            .as_bytes(),
    );
}

/// Whether the gather's record of `path` is configuration a plan depends on: not live kernel
/// state under /proc and /sys, and not dnsfix's own state (a cut-off run's restart marks: a
/// handler that removes a mark must not make every other plan stale).
fn configuration(path: &str) -> bool {
    !(path.starts_with("/proc/")
        || path.starts_with("/sys/")
        || path.starts_with("/var/lib/dnsfix/"))
}

/// Why `host`'s plan no longer fits the node, one line per fact; empty when it fits.
pub fn reasons(host: &HostPlan, facts: &NodeFacts) -> Vec<String> {
    let Some(digest) = &host.facts else {
        return vec!["the plan has no facts digest for this host".into()];
    };
    let mut out = Vec::new();
    if let Some(planned) = &digest.boot_id
        && facts.boot_id.as_deref() != Some(planned.as_str())
    {
        out.push(format!(
            "node rebooted since the plan (boot_id {} → {})",
            short(planned),
            facts.boot_id.as_deref().map_or("unknown", short)
        ));
    }
    if let Some(planned) = &digest.kubelet_version {
        match &facts.kubelet.version {
            Some(now) if now != planned => {
                out.push(format!("kubelet version {planned} → {now} (kubelet --version)"))
            }
            Some(_) if facts.kubelet.binary_replaced => out.push(format!(
                "kubelet binary replaced on disk since the plan: the kubelet runs {planned}, its restart would start a binary the plan did not ask"
            )),
            Some(_) => {}
            None => out.push(format!(
                "kubelet version {planned} → not known now (kubelet --version gave no answer): apply again, or plan again if it persists"
            )),
        }
    }
    for (path, planned) in &digest.files {
        let now = facts.file_digest(path);
        if &now == planned
            || written_by_plan(host, path, &now)
            || created_for_plan(host, path, planned, &now)
            || removed_by_restart(host, path, &now, facts, &digest.sha256)
        {
            continue;
        }
        out.push(describe(path, planned, &now));
    }
    out.extend(new_files(host, digest, facts));
    for (name, planned) in &digest.sysctls {
        let now = match facts.sysctl_live(name) {
            Some(f) if f.state == FileState::Present => {
                normalize_value(&String::from_utf8_lossy(&f.content))
            }
            Some(f) if f.state == FileState::Missing => "absent".into(),
            _ => "unknown".into(),
        };
        let target = host.changes.iter().find_map(|c| match c {
            Change::Sysctl { name: n, after, .. } if n == name => Some(normalize_value(after)),
            _ => None,
        });
        if normalize_value(planned) != now && target.as_deref() != Some(now.as_str()) {
            out.push(format!("sysctl {name}: {planned} → {now}"));
        }
    }
    for (name, planned) in &digest.modules {
        let now = loaded(facts, name);
        let loads = host
            .changes
            .iter()
            .any(|c| matches!(c, Change::LoadModule { name: n, .. } if n == name));
        if now != Some(*planned) && !(loads && now == Some(true)) {
            out.push(format!(
                "module {name}: {} → {}",
                if *planned { "loaded" } else { "not loaded" },
                match now {
                    Some(true) => "loaded",
                    Some(false) => "not loaded",
                    None => "unknown",
                }
            ));
        }
    }
    out
}

/// Every path whose current state apply must know: the digest's files and the sysctls'
/// /proc files (the gather reads them all).
pub fn paths(digest: &FactDigest) -> Vec<String> {
    let mut paths: Vec<String> = digest.files.keys().cloned().collect();
    paths.extend(
        digest
            .sysctls
            .keys()
            .map(|name| crate::facts::raw::sysctl_path(name)),
    );
    paths
}

/// Files the gather reads now that the plan's digest does not name: a new name in a
/// directory the gather lists (every `*.conf` of the sysctl.d, modules-load.d and modprobe.d
/// directories, a kubelet's drop-in and config directories, CNI's, CRI-O's ...), or a file
/// another file now points to. The digest records such a directory only as a directory, its
/// names by the files it holds: a file added there (a sysctl.d file that sorts after the one
/// the plan writes and wins at boot) changes what the rules read, as a changed one does. A
/// name that is missing now counts for nothing; a link to nothing does (it masks a file of
/// its name); a directory counts by what the gather reads in it.
///
/// Not every new file there: a sysctl.d file counts where it names a setting the plan
/// holds to or sets, a modprobe.d or modules-load.d one where it names a module the plan
/// holds to or loads (or br_netfilter and the modules it needs), so a kernel package's own
/// `/usr/lib/modprobe.d/blacklist_linux_VERSION.conf` (Ubuntu ships one per kernel,
/// installed by unattended upgrades between plan and apply) does not refuse every node.
/// dnsfix's own temporary files (`.NAME.dnsfix-RUN-HEX`, which a killed apply leaves until
/// the next writes) never count.
fn new_files(host: &HostPlan, digest: &FactDigest, facts: &NodeFacts) -> Vec<String> {
    facts
        .files
        .iter()
        .filter(|(path, _)| configuration(path) && !digest.files.contains_key(path.as_str()))
        .filter(|(path, _)| !dnsfix_temp(path))
        .filter(|(_, raw)| match raw.state {
            FileState::Present | FileState::Unreadable => true,
            FileState::Missing => raw.symlink_target.is_some(),
            FileState::Directory => false,
        })
        .filter(|(path, raw)| bears_on_plan(host, digest, path, raw))
        .filter_map(|(path, raw)| {
            let now = file_digest(raw);
            (!written_by_plan(host, path, &now)).then(|| format!("{path}: created since the plan"))
        })
        .collect()
}

/// A temporary file of an apply (`common.sh` `tmp_beside`: `.NAME.dnsfix-RUN-HEX16` beside
/// its target), left by one that was killed before it renamed or removed it.
fn dnsfix_temp(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.starts_with('.') && name.contains(".dnsfix-")
}

/// Whether a file new since the plan at `path` can change what the plan fixes: in a sysctl
/// or module directory, where a line of it (not a comment) names a setting or module the
/// plan depends on, or it masks a file the plan read in a directory it outranks (an
/// unreadable or truncated one may do either); anywhere else (a kubelet drop-in, a CNI or
/// CRI-O file), always.
fn bears_on_plan(host: &HostPlan, digest: &FactDigest, path: &str, raw: &RawFile) -> bool {
    use crate::facts::modprobe_d::{BR_NETFILTER_DEPS, MODPROBE_DIRS};
    use crate::facts::modules_load::MODULES_LOAD_DIRS;
    use crate::facts::sysctl::{SYSCTL_CONF, SYSCTL_DIRS};
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    let family: &[&str] = if SYSCTL_DIRS.contains(&dir) {
        &SYSCTL_DIRS
    } else if MODPROBE_DIRS.contains(&dir) {
        &MODPROBE_DIRS
    } else if MODULES_LOAD_DIRS.contains(&dir) {
        &MODULES_LOAD_DIRS
    } else if path == SYSCTL_CONF {
        &[]
    } else {
        return true;
    };
    // A file of the name of one the plan read in a directory of its kind that it outranks
    // (they are listed first to last) masks or overrides that one, whatever it holds (an
    // empty file, a link to /dev/null); one not read whole, or not at all, may say anything.
    let rank = |d: &str| family.iter().position(|f| *f == d);
    let masks = digest.files.keys().any(|p| {
        p.rsplit_once('/').is_some_and(|(d, n)| {
            n == name
                && rank(d)
                    .zip(rank(dir))
                    .is_some_and(|(theirs, mine)| mine < theirs)
        })
    });
    if masks || raw.state != FileState::Present || raw.truncated {
        return true;
    }
    let text = String::from_utf8_lossy(&raw.content);
    // The lines that say something: not blank, not a comment (`#`, and `;` in sysctl.d).
    let mut lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with(['#', ';']));
    // Names as sysctl.d (`net/bridge/x` is `net.bridge.x`) and kmod (`br-netfilter` is
    // `br_netfilter`) read them.
    let same = |w: &str| w.replace('/', ".").replace('-', "_");
    let sysctl = family.is_empty() || family == SYSCTL_DIRS;
    // What the plan holds to (its digest) and sets, of the kind the file configures; for
    // modules, br_netfilter and the modules it needs too.
    let planned = host.changes.iter().filter_map(|c| match c {
        Change::Sysctl { name, .. } if sysctl => Some(name.as_str()),
        Change::LoadModule { name, .. } if !sysctl => Some(name.as_str()),
        _ => None,
    });
    let held: Vec<&str> = if sysctl {
        digest.sysctls.keys().map(String::as_str).collect()
    } else {
        let needed = std::iter::once("br_netfilter").chain(BR_NETFILTER_DEPS);
        digest
            .modules
            .keys()
            .map(String::as_str)
            .chain(needed)
            .collect()
    };
    let mut wanted: Vec<String> = held.into_iter().chain(planned).map(same).collect();
    // A setting's other name sets it as much ([`crate::facts::sysctl::SAME_SETTING`]).
    for (key, other) in crate::facts::sysctl::SAME_SETTING {
        if sysctl && wanted.iter().any(|w| w == &same(key)) {
            wanted.push(same(other));
        }
    }
    // So does a key whose write sets it too ([`crate::facts::sysctl::SET_BY`]).
    for (key, by) in crate::facts::sysctl::SET_BY {
        if sysctl && wanted.iter().any(|w| w == &same(key)) {
            wanted.extend(by.iter().map(|b| same(b)));
        }
    }
    if sysctl {
        // Each line's key, left of `=`; a leading `-` only lets a failure pass; a glob
        // (`*`, `?`, `[...]`: systemd 245) may name any setting.
        return lines.any(|line| {
            let key = line.split('=').next().unwrap_or("").trim();
            let key = same(key.trim_start_matches('-'));
            key.contains(['*', '?', '[']) || wanted.contains(&key)
        });
    }
    lines
        .flat_map(str::split_whitespace)
        .any(|w| wanted.contains(&same(w)))
}

fn written_by_plan(host: &HostPlan, path: &str, now: &FileDigest) -> bool {
    host.changes.iter().any(|c| match c {
        Change::WriteFile {
            path: p,
            after_sha256,
            ..
        } => p == path && now.symlink.is_none() && now.sha256.as_deref() == Some(after_sha256),
        _ => false,
    })
}

/// The node's note that a plan's changes are in place and its handlers ran (the apply
/// script writes it under the lock), by the plan's digest.
pub fn handled_marker(digest_sha256: &str) -> String {
    format!("/var/lib/dnsfix/handled/{digest_sha256}")
}

/// A restart mark the plan holds to (kubelet-restart-due's) that is gone because the plan's
/// own handler restarted its unit: a second apply of the plan finds it done, not stale.
/// Only where the plan's handled note is there ([`handled_marker`], which apply reads
/// with the digest's files): a mark another run's restart, or a rollback, took away makes
/// the plan stale, as its restart is done.
fn removed_by_restart(
    host: &HostPlan,
    path: &str,
    now: &FileDigest,
    facts: &NodeFacts,
    digest_sha256: &str,
) -> bool {
    let Some(unit) = path
        .strip_prefix(crate::facts::restart_due::DIR)
        .and_then(|rest| rest.strip_prefix('/'))
        .and_then(|rest| rest.split_once('/'))
        .map(|(unit, _)| unit)
    else {
        return false;
    };
    now.state == FileDigestState::Missing
        && host.handlers.iter().any(|h| {
            h.action == crate::plan::model::HandlerAction::Restarted
                && h.unit.strip_suffix(".service").unwrap_or(&h.unit) == unit
        })
        && facts
            .files
            .get(&handled_marker(digest_sha256))
            .is_some_and(|f| f.state == FileState::Present)
}

/// A directory that did not exist and now does, because the plan writes a file in it.
fn created_for_plan(host: &HostPlan, path: &str, planned: &FileDigest, now: &FileDigest) -> bool {
    planned.state == FileDigestState::Missing
        && now.state == FileDigestState::Directory
        && host.changes.iter().any(|c| match c {
            Change::WriteFile { path: p, .. } => p
                .strip_prefix(path)
                .is_some_and(|rest| rest.starts_with('/')),
            _ => false,
        })
}

fn loaded(facts: &NodeFacts, name: &str) -> Option<bool> {
    if name == "br_netfilter" {
        if facts.br_netfilter.built_in {
            return Some(true);
        }
        return match &facts.br_netfilter.loaded {
            Observed::Known(l) => Some(*l),
            Observed::Absent => Some(false),
            Observed::Unknown(_) => None,
        };
    }
    facts.module_loaded(name)
}

fn describe(path: &str, planned: &FileDigest, now: &FileDigest) -> String {
    if planned.symlink != now.symlink {
        return format!(
            "{path}: symlink {} → {}",
            planned.symlink.as_deref().unwrap_or("(none)"),
            now.symlink.as_deref().unwrap_or("(none)")
        );
    }
    match (planned.state, now.state) {
        (FileDigestState::Missing, FileDigestState::Present) => {
            format!("{path}: created since the plan")
        }
        (FileDigestState::Present, FileDigestState::Missing) => {
            format!("{path}: deleted since the plan")
        }
        (FileDigestState::Present, FileDigestState::Present) => format!(
            "{path}: content changed (sha256 {} → {})",
            planned.sha256.as_deref().map_or("?", short),
            now.sha256.as_deref().map_or("?", short)
        ),
        (a, b) => format!("{path}: {a} → {b}"),
    }
}

fn short(s: &str) -> &str {
    s.get(..12).unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::raw::{RawFacts, RawFile};
    use crate::plan::model::{FactDigest, HostStatus};
    use crate::util::sha256_hex;

    fn file(content: &str) -> RawFile {
        RawFile {
            state: FileState::Present,
            symlink_target: None,
            canonical: None,
            content: content.as_bytes().into(),
            sha256: Some(sha256_hex(content.as_bytes())),
            truncated: false,
        }
    }

    fn missing() -> RawFile {
        RawFile {
            state: FileState::Missing,
            symlink_target: None,
            canonical: None,
            content: (&[][..]).into(),
            sha256: None,
            truncated: false,
        }
    }

    fn directory() -> RawFile {
        RawFile {
            state: FileState::Directory,
            ..missing()
        }
    }

    fn facts(files: &[(&str, RawFile)], boot: &str) -> NodeFacts {
        let mut raw = RawFacts::default();
        for (path, f) in files {
            raw.order.push((*path).to_string());
            raw.files.insert((*path).to_string(), f.clone());
        }
        raw.order.push("/proc/sys/kernel/random/boot_id".into());
        raw.files.insert(
            "/proc/sys/kernel/random/boot_id".into(),
            file(&format!("{boot}\n")),
        );
        NodeFacts::from_raw("n1", &raw)
    }

    /// A plan made from `before`: writes /etc/dnsfix/resolv.conf and sets ip_forward to 1.
    fn plan(before: &NodeFacts) -> HostPlan {
        let mut digest = FactDigest {
            boot_id: before.boot_id.clone(),
            ..FactDigest::default()
        };
        for path in before.files.keys().filter(|p| !p.starts_with("/proc/")) {
            digest.files.insert(path.clone(), before.file_digest(path));
        }
        digest
            .sysctls
            .insert("net.ipv4.ip_forward".into(), "0".into());
        HostPlan {
            host: "n1".into(),
            status: HostStatus::Changes,
            error: None,
            findings: Vec::new(),
            facts: Some(digest),
            changes: vec![
                Change::WriteFile {
                    path: "/etc/dnsfix/resolv.conf".into(),
                    description: String::new(),
                    before_sha256: None,
                    before: None,
                    after_sha256: sha256_hex(b"new\n"),
                    content: "new\n".into(),
                    mode: Some("0644".into()),
                    reasons: Vec::new(),
                },
                Change::Sysctl {
                    name: "net.ipv4.ip_forward".into(),
                    before: Some("0".into()),
                    after: "1".into(),
                    reasons: Vec::new(),
                },
            ],
            cluster: Vec::new(),
            handlers: Vec::new(),
            blocked: Vec::new(),
            notes: Vec::new(),
            unchanged: Vec::new(),
            fixes: Vec::new(),
            remaining: Vec::new(),
        }
    }

    fn base() -> Vec<(&'static str, RawFile)> {
        vec![
            ("/etc/resolv.conf", file("nameserver 192.0.2.53\n")),
            ("/etc/dnsfix", missing()),
            ("/etc/dnsfix/resolv.conf", missing()),
            ("/proc/sys/net/ipv4/ip_forward", file("0\n")),
        ]
    }

    /// A restart-only plan holds to its restart mark: gone because its own restart ran (its
    /// handled note there), it is done, not stale; gone otherwise (a restart by another
    /// run, a rollback), the plan is stale.
    #[test]
    fn a_restart_mark_gone_is_stale_unless_the_plans_own_restart_took_it() {
        const MARK: &str = "/var/lib/dnsfix/restart-due/kubelet/r1";
        let mut files = base();
        files.push((MARK, file("r1 boot-1 100\n")));
        let before = facts(&files, "boot-1");
        let mut host = plan(&before);
        host.changes.clear();
        host.facts.as_mut().expect("digest").sysctls.clear();
        host.handlers.push(crate::plan::model::HandlerRun {
            name: "restart kubelet".into(),
            unit: "kubelet".into(),
            action: crate::plan::model::HandlerAction::Restarted,
            serial: crate::playbook::Batch::Count(1),
            reasons: Vec::new(),
        });
        let sha = host.facts.as_ref().expect("digest").sha256.clone();
        let mut gone = base();
        gone.push((MARK, missing()));
        let elsewhere = facts(&gone, "boot-1");
        assert_eq!(
            reasons(&host, &elsewhere),
            [format!("{MARK}: deleted since the plan")]
        );
        let handled = handled_marker(&sha);
        gone.push((handled.as_str(), file("r2\n")));
        let own = facts(&gone, "boot-1");
        assert_eq!(reasons(&host, &own), Vec::<String>::new());
    }

    #[test]
    fn the_same_node_is_not_stale() {
        let before = facts(&base(), "boot-1");
        assert_eq!(reasons(&plan(&before), &before), Vec::<String>::new());
    }

    #[test]
    fn what_the_plan_itself_changed_is_not_stale() {
        let before = facts(&base(), "boot-1");
        let mut files = base();
        files[1].1 = directory();
        files[2].1 = file("new\n");
        files[3].1 = file("1\n");
        let after = facts(&files, "boot-1");
        assert_eq!(reasons(&plan(&before), &after), Vec::<String>::new());
    }

    /// The kubelet binary's version, where the plan asked it, is part of the digest: an
    /// upgrade between plan and apply (a drop-in's resolvConf counts from 1.32) is stale;
    /// a plan that did not ask holds apply to no version.
    #[test]
    fn a_kubelet_upgraded_since_the_plan_is_stale() {
        let with_exe = |version: Option<&str>, exe: &str| {
            let mut raw = RawFacts::default();
            for (path, f) in base() {
                raw.order.push(path.to_string());
                raw.files.insert(path.to_string(), f);
            }
            if let Some(v) = version {
                crate::testing::set_command(&mut raw, "kubelet-version", v, 0);
                crate::testing::set_command(&mut raw, "kubelet-exe", exe, 0);
            }
            NodeFacts::from_raw("n1", &raw)
        };
        let with_version = |version: Option<&str>| with_exe(version, "/usr/bin/kubelet\n");
        let planned = |facts: &NodeFacts| {
            let mut host = plan(facts);
            let digest = host.facts.as_mut().expect("digest");
            digest_core(digest, facts);
            host
        };
        let old = planned(&with_version(Some("Kubernetes v1.31.4\n")));
        assert_eq!(
            old.facts
                .as_ref()
                .and_then(|d| d.kubelet_version.as_deref()),
            Some("v1.31.4")
        );
        assert!(reasons(&old, &with_version(Some("Kubernetes v1.31.4\n"))).is_empty());
        assert_eq!(
            reasons(&old, &with_version(Some("Kubernetes v1.32.0\n"))),
            ["kubelet version v1.31.4 → v1.32.0 (kubelet --version)"]
        );
        assert_eq!(
            reasons(&old, &with_version(None)),
            [
                "kubelet version v1.31.4 → not known now (kubelet --version gave no answer): apply again, or plan again if it persists"
            ]
        );
        let unasked = planned(&with_version(None));
        assert_eq!(
            unasked.facts.as_ref().map(|d| d.kubelet_version.clone()),
            Some(None)
        );
        assert!(reasons(&unasked, &with_version(Some("Kubernetes v1.32.0\n"))).is_empty());

        // The binary replaced on disk since the kubelet started: at plan, no version to hold
        // the plan to (its own restart changes it); at apply, the restart would start
        // another version.
        let replaced = "/usr/bin/kubelet (deleted)\n";
        let v131 = Some("Kubernetes v1.31.4\n");
        assert!(with_exe(v131, replaced).kubelet.binary_replaced);
        let in_flux = planned(&with_exe(v131, replaced));
        assert_eq!(
            in_flux.facts.as_ref().map(|d| d.kubelet_version.clone()),
            Some(None)
        );
        assert_eq!(
            reasons(&old, &with_exe(v131, replaced)),
            [
                "kubelet binary replaced on disk since the plan: the kubelet runs v1.31.4, its restart would start a binary the plan did not ask"
            ]
        );
    }

    /// A newcomer's walk: `plan -o`, then a sysctl.d file that sorts after the plan's own
    /// and sets bridge-nf-call-iptables back to 0, then `apply`: the digest recorded
    /// /etc/sysctl.d only as a directory, so apply wrote, said "fixed", and the next check
    /// found the setting not persistent. A file new in a directory the gather lists is
    /// stale; one the plan writes, or a name still missing, is not.
    #[test]
    fn a_new_file_in_a_directory_the_gather_lists_is_stale() {
        let mut files = base();
        files.push(("/etc/sysctl.d", directory()));
        files.push(("/etc/sysctl.d/99-sysctl.conf", file("")));
        let before = facts(&files, "boot-1");
        let host = plan(&before);
        assert_eq!(reasons(&host, &before), Vec::<String>::new());

        let mut now = files.clone();
        now[1].1 = directory();
        now[2].1 = file("new\n");
        now.push(("/etc/sysctl.d/98-gone.conf", missing()));
        assert_eq!(reasons(&host, &facts(&now, "boot-1")), Vec::<String>::new());

        let added = "/etc/sysctl.d/999-zz-hardening.conf";
        now.push((added, file("net/ipv4/ip-forward = 0\n")));
        assert_eq!(
            reasons(&host, &facts(&now, "boot-1")),
            [format!("{added}: created since the plan")]
        );
        // A link to nothing masks the vendor file of its name: it counts too.
        now.pop();
        let mut dangling = missing();
        dangling.symlink_target = Some("/nowhere".into());
        now.push((added, dangling));
        assert_eq!(reasons(&host, &facts(&now, "boot-1")).len(), 1);
    }

    /// A new file counts only where it can change what the plan fixes: a sysctl.d file
    /// naming another setting does not, nor the modprobe.d file each Ubuntu kernel package
    /// ships (unattended upgrades install one between plan and apply), nor a temporary
    /// file a killed apply left beside its target; one that stops br_netfilter loading
    /// does, as does a sysctl glob, and any new file elsewhere (a kubelet drop-in).
    #[test]
    fn a_new_file_counts_where_it_bears_on_the_plan() {
        let mut files = base();
        files.push(("/etc/sysctl.d", directory()));
        files.push((
            "/usr/lib/sysctl.d/50-default.conf",
            file("kernel.sysrq = 16\n"),
        ));
        files.push(("/etc/sysctl.d/99-sysctl.conf", file("")));
        files.push(("/etc/modules-load.d/k8s.conf", file("overlay\n")));
        files.push(("/etc/kubernetes/kubelet.conf", file("apiVersion: v1\n")));
        let before = facts(&files, "boot-1");
        let host = plan(&before);
        let with = |path: &'static str, text: &str| {
            let mut now = files.clone();
            now.push((path, file(text)));
            reasons(&host, &facts(&now, "boot-1"))
        };
        let none = Vec::<String>::new();
        assert_eq!(
            with(
                "/etc/sysctl.d/60-hardening.conf",
                "kernel.kptr_restrict = 2\n"
            ),
            none
        );
        assert_eq!(
            with(
                "/usr/lib/modprobe.d/blacklist_linux_6.8.0-90-generic.conf",
                // Its opening lines as Ubuntu ships them (the framebuffer blacklist, as
                // /etc/modprobe.d/blacklist-framebuffer.conf is quoted in public listings;
                // no Ubuntu package source is reachable here).
                "# Framebuffer drivers are generally buggy and poorly-supported, and cause\n\
                 # suspend failures, kernel panics and general mayhem.  For this reason we\n\
                 # never load them automatically.\nblacklist aty128fb\nblacklist atyfb\n\
                 blacklist radeonfb\n"
            ),
            none
        );
        assert_eq!(
            with(
                "/etc/dnsfix/.resolv.conf.dnsfix-20261201T021113Z-b18123aa-0123456789abcdef",
                "x"
            ),
            none
        );
        assert_eq!(
            with("/etc/modprobe.d/pci.conf", "alias pci:v00008086d* e1000e\n"),
            none,
            "a modprobe alias's wildcard names no module the plan loads"
        );
        // A name the plan read, but in another kind of directory or one that does not
        // outrank it; a `?` in a comment (OpenShift's vm-max-map.conf, verbatim from
        // openshift/machine-config-operator@7ff337a4f
        // templates/common/_base/files/sysctl-vm-max-map.conf.yaml).
        for (path, text) in [
            (
                "/etc/sysctl.d/k8s.conf",
                "fs.inotify.max_user_instances = 8192\n",
            ),
            ("/usr/lib/sysctl.d/99-sysctl.conf", "kernel.panic = 10\n"),
            ("/etc/sysctl.d/kubelet.conf", "vm.overcommit_memory = 1\n"),
            (
                "/etc/sysctl.d/vm-max-map.conf",
                "# Needed for OpenShift Logging (ElasticSearch). See\n\
                 # https://bugzilla.redhat.com/show_bug.cgi?id=1793714\n\
                 vm.max_map_count = 262144\n",
            ),
        ] {
            assert_eq!(with(path, text), none, "{path}");
        }
        for (path, text) in [
            (
                "/etc/sysctl.d/71-net.conf",
                "net.ipv4.conf.eth?.forwarding = 0\n",
            ),
            ("/etc/sysctl.d/999-zz.conf", "-net.ipv4.ip_forward = 0\n"),
            // The other name of net.ipv4.ip_forward (the DISA RHEL 8 STIG's line).
            (
                "/etc/sysctl.d/99-stig.conf",
                "net.ipv4.conf.all.forwarding = 0\n",
            ),
            // An empty file (or a link to /dev/null) of the name of one the plan read, in a
            // directory that outranks its, masks it.
            ("/etc/sysctl.d/50-default.conf", ""),
            (
                "/etc/modprobe.d/hardening.conf",
                "install br_netfilter /bin/false\n",
            ),
            (
                "/etc/sysctl.d/70-net.conf",
                "net.ipv4.conf.*.forwarding = 0\n",
            ),
            (
                "/etc/systemd/system/kubelet.service.d/20-x.conf",
                "[Service]\n",
            ),
        ] {
            assert_eq!(
                with(path, text),
                [format!("{path}: created since the plan")]
            );
        }
    }

    #[test]
    fn a_reboot_a_changed_file_and_a_changed_sysctl_are() {
        let before = facts(&base(), "boot-1");
        let mut files = base();
        files[0].1 = file("nameserver 127.0.0.53\n");
        files[2].1 = file("someone else's\n");
        files[3].1 = file("2\n");
        let after = facts(&files, "boot-2");
        let found = reasons(&plan(&before), &after);
        assert_eq!(found.len(), 4, "{found:#?}");
        assert!(found[0].starts_with("node rebooted since the plan (boot_id boot-1 → boot-2)"));
        assert!(
            found
                .iter()
                .any(|r| r.starts_with("/etc/resolv.conf: content changed"))
        );
        assert!(
            found
                .iter()
                .any(|r| r == "/etc/dnsfix/resolv.conf: created since the plan")
        );
        assert!(
            found
                .iter()
                .any(|r| r == "sysctl net.ipv4.ip_forward: 0 → 2")
        );
    }
}

#[cfg(test)]
mod own_state_tests {
    use super::*;

    /// dnsfix's own state (a restart mark) is no fact a plan depends on: a handler that
    /// removes one must not make the other saved plans stale.
    #[test]
    fn dnsfix_s_own_state_is_not_in_a_plan_s_digest() {
        let facts = crate::testing::facts_from(&[
            ("/var/lib/dnsfix/restart-due/kubelet/r1", "r1 b1 100\n"),
            ("/etc/resolv.conf", "nameserver 192.0.2.53\n"),
        ]);
        let mut digest = FactDigest::default();
        digest_core(&mut digest, &facts);
        assert!(digest.files.contains_key("/etc/resolv.conf"));
        assert!(
            !digest
                .files
                .keys()
                .any(|p| p.starts_with("/var/lib/dnsfix/")),
            "{:?}",
            digest.files.keys().collect::<Vec<_>>()
        );
    }
}
