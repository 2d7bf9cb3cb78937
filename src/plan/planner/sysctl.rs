//! `sysctl`: a kernel setting, set now and persisted in a sysctl.d file, checked against
//! what the boot applies after it.

use minijinja::Value as Ctx;

use super::error::PlanErrorKind;
use super::{Outcome, Run, State};
use crate::facts::raw::FileState;
use crate::facts::sysctl::{
    PersistedValue, SYSCTL_CONF, SYSCTL_DIRS, SysctlFile, booted_by_systemd, normalize_key,
    normalize_value, persisted_files,
};
use crate::plan::model::{Note, Reason};
use crate::playbook::action::SysctlArgs;

pub const SYSCTL_FILE: &str = "/etc/sysctl.d/99-dnsfix.conf";

impl Run<'_> {
    pub(super) fn sysctl(
        &mut self,
        args: &SysctlArgs,
        ctx: &Ctx,
        state: &mut State,
        reason: &Reason,
    ) -> Result<Outcome, PlanErrorKind> {
        let name = normalize_key(&self.string_arg(Some(&args.name), "name", ctx)?);
        let value = self.string_arg(Some(&args.value), "value", ctx)?;
        let file = self.boot_file(
            args.file.as_ref(),
            ctx,
            SYSCTL_FILE,
            &SYSCTL_DIRS,
            SYSCTL_CONF,
        )?;
        let proc_path = crate::facts::raw::sysctl_path(&name);
        let live = match self.facts.sysctl_live(&name) {
            Some(f) if f.state == FileState::Present => {
                Some(String::from_utf8_lossy(&f.content).trim().to_string())
            }
            Some(f) if f.state == FileState::Missing => None,
            Some(_) => return Err(PlanErrorKind::Unreadable { path: proc_path }),
            None => return Err(PlanErrorKind::ValueNotGathered { path: proc_path }),
        };
        self.digest.sysctls.insert(
            name.clone(),
            live.clone().unwrap_or_else(|| "absent".into()),
        );
        let mut changed = Vec::new();
        let live_differs = live.as_deref().map(normalize_value) != Some(normalize_value(&value));
        if live_differs {
            let entry = state
                .sysctls
                .entry(name.clone())
                .or_insert_with(|| (live.clone(), value.clone(), Vec::new()));
            entry.1 = value.clone();
            entry.2.push(reason.clone());
            if !state.sysctl_order.contains(&name) {
                state.sysctl_order.push(name.clone());
            }
            changed.push(format!("{name} set to {value}"));
        }

        // Persist: set the line in our file, then check it is what the boot applies, and
        // what procps `sysctl --system` applies (on a node systemd boots, that also reads an
        // /etc/sysctl.conf no sysctl.d file links to, last).
        let views: &[bool] = if booted_by_systemd(&self.facts.raw) {
            &[true, false]
        } else {
            &[false]
        };
        let mut settled = true;
        for &view in views {
            let winner = self.winner(state, &name, view)?;
            settled &= winner.is_some_and(|w| normalize_value(&w.value) == normalize_value(&value));
        }
        if !settled {
            let text = self.read(state, &file)?;
            let new = set_sysctl_line(text.as_deref(), &name, &value);
            if self.write(state, &file, new, None, format!("{name} = {value}"), reason)? {
                changed.push(format!("{file} {name} = {value}"));
            }
            for &view in views {
                let wanted = Wanted {
                    name: &name,
                    value: &value,
                    file: &file,
                };
                self.later_file(state, &wanted, reason, &mut changed, view)?;
            }
            // A `file:` the boot does not read (an /etc/sysctl.conf no link leads to).
            if self.winner(state, &name, views[0])?.is_none() {
                state.notes.push(Note {
                    playbook: reason.playbook.clone(),
                    message: format!(
                        "the boot does not read {file} (no sysctl.d file links to it): {name} is not persisted"
                    ),
                });
            }
        }
        Ok(if changed.is_empty() {
            Outcome::Already(format!("{name} already {value}, now and at boot"))
        } else {
            Outcome::Changed {
                what: changed.join(", "),
                file: None,
            }
        })
    }
}

/// The setting a sysctl task persists, and the file it persists it in.
#[derive(Clone, Copy)]
struct Wanted<'a> {
    name: &'a str,
    value: &'a str,
    file: &'a str,
}

impl Run<'_> {
    /// The assignment of `name` that wins: as systemd-sysctl reads the files (`systemd`),
    /// or as procps `sysctl --system` does. It may assign another name of the setting
    /// ([`crate::facts::sysctl::SAME_SETTING`]).
    fn winner(
        &mut self,
        state: &mut State,
        name: &str,
        systemd: bool,
    ) -> Result<Option<PersistedValue>, PlanErrorKind> {
        let files = self.config_files(state, &SYSCTL_DIRS, SYSCTL_CONF)?;
        Ok(persisted_files(&files, systemd).remove(name))
    }

    /// A file the boot applies after `file` that still sets `name` to another value. One in
    /// /etc is the administrator's: its line is changed too, and a note says so. One a
    /// package or the runtime owns (/run, /usr/lib), a link into those, or one that cannot
    /// be edited as text, is only named.
    fn later_file(
        &mut self,
        state: &mut State,
        wanted: &Wanted,
        reason: &Reason,
        changed: &mut Vec<String>,
        systemd: bool,
    ) -> Result<(), PlanErrorKind> {
        let Wanted { name, value, file } = *wanted;
        let Some(winner) = self.winner(state, name, systemd)? else {
            return Ok(());
        };
        let (other, path, line) = (winner.value.as_str(), winner.path.as_str(), winner.line);
        // The line to change: the key it assigns, where that is another name of the
        // setting. A glob of that name is left to the administrator: it sets every
        // interface, and systemd's udev rule (99-systemd.rules: `systemd-sysctl
        // --prefix=/net/ipv4/conf/$name`) applies it again to each one that appears, the
        // pods' among them, which no line of another key undoes.
        let glob = winner
            .key
            .as_deref()
            .filter(|k| k.contains(['*', '?', '[']));
        let key = winner.key.as_deref().unwrap_or(name);
        let assigned = winner.assignment(name);
        // Applied after it at boot, or (a file the boot does not read) by procps.
        let after = if systemd || !booted_by_systemd(&self.facts.raw) {
            format!("is applied after {file} at boot")
        } else {
            format!("is applied after {file} by `sysctl --system`")
        };
        if normalize_value(other) == normalize_value(value) {
            return Ok(());
        }
        let target = self.etc_sysctl_file(path).filter(|_| glob.is_none());
        // A file the plan cannot rewrite as text (not UTF-8, too large) is named instead.
        let text = target.as_ref().and_then(|t| self.read(state, t).ok());
        let message = match (target, text) {
            (Some(target), Some(text)) => {
                let new = set_sysctl_line(text.as_deref(), key, value);
                let was = format!("was {other}, {}", after.trim_start_matches("is "));
                let description = format!("{key} = {value} ({was})");
                self.write(state, &target, new, None, description, reason)?;
                changed.push(format!("{target} {key} = {value}"));
                format!(
                    "{path}:{line} set {assigned} and {after}: \
                     that line now sets {value}; if a tool manages {target}, change it there too"
                )
            }
            _ if glob.is_some() => format!(
                "{path}:{line} sets {assigned} and {after}; \
                 set that line to {value} (systemd's udev rule applies the glob again to \
                 every interface as it appears, the pods' too), or {name} goes back to {other}"
            ),
            _ => match self
                .facts
                .files
                .get(path)
                .filter(|f| f.symlink_target.is_some())
                .and_then(|f| f.canonical.as_ref())
            {
                Some(target) => format!(
                    "{path}:{line} sets {assigned} and {after}; \
                     it is a link to {target}: replace the link with a copy that sets {value}, \
                     or {name} goes back to {other}"
                ),
                _ => format!(
                    "{path}:{line} sets {assigned} and {after}; \
                     edit that line, or {name} goes back to {other}"
                ),
            },
        };
        state.notes.push(Note {
            playbook: reason.playbook.clone(),
            message,
        });
        Ok(())
    }

    /// The file to edit for a sysctl file `path` that the boot reads: `path` itself, or
    /// the file its link names, where that is /etc/sysctl.conf or in /etc/sysctl.d (Debian's
    /// /etc/sysctl.d/99-sysctl.conf is a link to /etc/sysctl.conf). `None` for the files of
    /// /run, /usr/lib and /usr/local/lib, and for a link that leads elsewhere.
    fn etc_sysctl_file(&self, path: &str) -> Option<String> {
        let target = match self.facts.files.get(path) {
            Some(f) if f.symlink_target.is_some() => f.canonical.clone()?,
            _ => path.to_owned(),
        };
        (target == SYSCTL_CONF || super::boot::in_dir(&target, "/etc/sysctl.d")).then_some(target)
    }
}

/// Sets `key = value` in a sysctl.d file: replaces the last line that assigns the key (the
/// one that wins), or appends one; a new file gets a header saying who owns it.
fn set_sysctl_line(text: Option<&str>, key: &str, value: &str) -> String {
    let line = format!("{key} = {value}");
    let Some(text) = text else {
        return format!(
            "# Managed by dnsfix: kernel settings Kubernetes networking needs.\n{line}\n"
        );
    };
    let parsed = SysctlFile::parse(text);
    if let Some(entry) = parsed.entries.iter().rev().find(|e| e.key == key) {
        let mut out = String::new();
        for (index, raw) in text.split_inclusive('\n').enumerate() {
            if index + 1 == entry.line {
                let ending = if raw.ends_with("\r\n") {
                    "\r\n"
                } else if raw.ends_with('\n') {
                    "\n"
                } else {
                    ""
                };
                out.push_str(&replace_value(
                    raw.trim_end_matches(['\r', '\n']),
                    &line,
                    value,
                ));
                out.push_str(ending);
            } else {
                out.push_str(raw);
            }
        }
        return out;
    }
    let mut out = text.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// `raw` (an assignment line) with its value replaced by `value`, its key as written (a
/// `-` that tells `sysctl --system` to ignore a missing key, `/` for `.`) and the spacing
/// around `=` kept; `fallback` where the line has no `=`.
fn replace_value(raw: &str, fallback: &str, value: &str) -> String {
    let Some((key, old)) = raw.split_once('=') else {
        return fallback.to_owned();
    };
    let space = &old[..old.len() - old.trim_start().len()];
    format!("{key}={space}{value}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_line_replaces_the_winning_assignment() {
        let text = "# keep\nnet.ipv4.ip_forward = 0\nother = 1\nnet.ipv4.ip_forward=0\n";
        assert_eq!(
            set_sysctl_line(Some(text), "net.ipv4.ip_forward", "1"),
            "# keep\nnet.ipv4.ip_forward = 0\nother = 1\nnet.ipv4.ip_forward=1\n"
        );
        assert_eq!(set_sysctl_line(Some("a = 1"), "b", "2"), "a = 1\nb = 2\n");
        assert!(set_sysctl_line(None, "b", "2").ends_with("\nb = 2\n"));
        // The key keeps its spelling, its `-` (ignore a missing key) and its spacing; a
        // CRLF line keeps its ending.
        assert_eq!(
            set_sysctl_line(
                Some("-net/bridge/bridge-nf-call-iptables=0\r\nx = 1\r\n"),
                "net.bridge.bridge-nf-call-iptables",
                "1"
            ),
            "-net/bridge/bridge-nf-call-iptables=1\r\nx = 1\r\n"
        );
        assert_eq!(
            set_sysctl_line(
                Some("net.ipv4.ip_forward =  0\n"),
                "net.ipv4.ip_forward",
                "1"
            ),
            "net.ipv4.ip_forward =  1\n"
        );
    }
}
