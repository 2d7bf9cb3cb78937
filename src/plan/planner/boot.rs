//! The files the boot reads that sysctl and modprobe persist into (sysctl.d,
//! modules-load.d and their legacy files), as the plan leaves them.

use std::collections::BTreeSet;

use minijinja::Value as Ctx;

use super::args::absolute;
use super::error::PlanErrorKind;
use super::{Run, State};
use crate::playbook::Value;

impl Run<'_> {
    /// The `file` argument of sysctl and modprobe (default `default`): a file the boot
    /// reads, in one of `dirs` or `legacy` itself.
    pub(super) fn boot_file(
        &self,
        file: Option<&Value>,
        ctx: &Ctx,
        default: &str,
        dirs: &'static [&'static str],
        legacy: &'static str,
    ) -> Result<String, PlanErrorKind> {
        let file = match self.arg(file, ctx)? {
            Some(_) => absolute(self.string_arg(file, "file", ctx)?)?,
            None => default.to_string(),
        };
        if dirs.iter().any(|d| in_dir(&file, d)) || file == legacy {
            Ok(file)
        } else {
            Err(PlanErrorKind::NotBootFile { file, dirs, legacy })
        }
    }

    /// The `*.conf` files of `dirs` as the plan leaves them, plus `legacy`: `(path, text,
    /// symlink canonical target)`.
    pub(super) fn config_files(
        &mut self,
        state: &mut State,
        dirs: &[&str],
        legacy: &str,
    ) -> Result<Vec<(String, String, Option<String>)>, PlanErrorKind> {
        let mut paths: BTreeSet<String> = self
            .facts
            .files
            .keys()
            .filter(|p| dirs.iter().any(|d| in_dir(p, d)) || *p == legacy)
            .cloned()
            .collect();
        paths.extend(
            state
                .files
                .keys()
                .filter(|p| dirs.iter().any(|d| in_dir(p, d)) || *p == legacy)
                .cloned(),
        );
        let mut out = Vec::new();
        for path in paths {
            let canonical = self
                .facts
                .files
                .get(&path)
                .and_then(|f| f.symlink_target.as_ref().and(f.config_canonical()));
            // A link reads what the file it names holds, as the plan leaves that file.
            let planned = state
                .files
                .get(&path)
                .or_else(|| canonical.as_ref().and_then(|c| state.files.get(c)));
            let text = match planned {
                Some(v) => v.current.clone(),
                None => match self.facts.files.get(&path) {
                    Some(f) => f.text().map(|t| t.into_owned()),
                    None => None,
                },
            };
            if let Some(text) = text {
                out.push((path, text, canonical));
            } else if let Some(canonical) = canonical {
                out.push((path, String::new(), Some(canonical)));
            }
        }
        Ok(out)
    }
}

/// Is `path` a file directly in directory `dir` (given without a trailing slash)? Only
/// those are read at boot from sysctl.d and modules-load.d.
pub(super) fn in_dir(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir)
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(|name| !name.is_empty() && !name.contains('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn boot_files_are_directly_in_their_directory() {
        assert!(in_dir("/etc/sysctl.d/99-dnsfix.conf", "/etc/sysctl.d"));
        assert!(!in_dir("/etc/sysctl.d/sub/x.conf", "/etc/sysctl.d"));
        assert!(!in_dir("/etc/sysctl.dx/x.conf", "/etc/sysctl.d"));
        assert!(!in_dir("/etc/sysctl.d/", "/etc/sysctl.d"));
    }
}
