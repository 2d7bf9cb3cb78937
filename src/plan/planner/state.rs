//! The per-host state the tasks work on: a virtual copy of the node's files (what is
//! there, what the plan puts there), the sysctls and modules it changes, and what the
//! tasks noted. Reading a file records its digest, so apply can tell when it moved.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::Run;
use super::error::PlanErrorKind;
use crate::facts::raw::FileState;
use crate::plan::digest::file_digest;
use crate::plan::model::{FileDigest, FileDigestState, Note, Reason};

/// A file as the plan sees it: what is on the node and what the plan will put there.
#[derive(Debug, Clone)]
pub(super) struct VFile {
    pub(super) before: Option<String>,
    pub(super) before_sha256: Option<String>,
    pub(super) current: Option<String>,
    pub(super) mode: Option<String>,
    pub(super) descriptions: Vec<String>,
    pub(super) reasons: Vec<Reason>,
}

/// A change to the local inventory a playbook asked for (`inventory_set`), kept
/// with the state that collects them.
#[derive(Debug, Clone, PartialEq)]
pub struct InventorySet {
    pub key: String,
    pub value: Json,
    pub playbook: String,
}

/// A cluster ConfigMap key a playbook wants changed (`corefile_forward`), kept with the
/// state that collects them; `plan` merges the hosts asking for the same one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigMapSet {
    pub configmap: String,
    pub key: String,
    pub via: String,
    pub before: String,
    pub after: String,
    pub description: String,
    pub reason: crate::plan::model::Reason,
}

/// The per-host state the tasks work on.
#[derive(Debug, Clone, Default)]
pub(super) struct State {
    pub(super) files: BTreeMap<String, VFile>,
    /// Paths in the order they were first changed.
    pub(super) order: Vec<String>,
    pub(super) sysctls: BTreeMap<String, (Option<String>, String, Vec<Reason>)>,
    pub(super) sysctl_order: Vec<String>,
    pub(super) modules: BTreeMap<String, Vec<Reason>>,
    /// The handlers notified, in order: (handler name, playbook, reason, the file whose
    /// change notified it).
    pub(super) notified: Vec<(String, String, String, Option<String>)>,
    pub(super) notes: Vec<Note>,
    /// Cluster actions (`dns_pods`), in task order.
    pub(super) cluster: Vec<crate::plan::model::ClusterAction>,
    /// Why tasks changed nothing ("resolvConf already …"), and playbooks whose `when` was
    /// false.
    pub(super) unchanged: Vec<Note>,
    pub(super) inventory_sets: Vec<InventorySet>,
    pub(super) configmap_sets: Vec<ConfigMapSet>,
}

impl Run<'_> {
    /// The current text of `path` (as earlier tasks left it), or `None` when it does not
    /// exist. A file the gather did not see, could not read, or that is not text, is an
    /// error: the plan must know exactly what it replaces.
    pub(super) fn read(
        &mut self,
        state: &mut State,
        path: &str,
    ) -> Result<Option<String>, PlanErrorKind> {
        if let Some(file) = state.files.get(path) {
            return Ok(file.current.clone());
        }
        let (before, sha) = match self.facts.files.get(path) {
            Some(raw) => {
                self.digest.files.insert(path.to_string(), file_digest(raw));
                if let Some(target) = &raw.symlink_target {
                    return Err(PlanErrorKind::Symlink {
                        path: path.to_string(),
                        target: target.clone(),
                    });
                }
                match raw.state {
                    FileState::Present if raw.truncated => {
                        return Err(PlanErrorKind::TooLarge {
                            path: path.to_string(),
                        });
                    }
                    FileState::Present => {
                        let text = String::from_utf8(raw.content.to_vec()).map_err(|_| {
                            PlanErrorKind::NotUtf8 {
                                path: path.to_string(),
                            }
                        })?;
                        (Some(text), raw.sha256.clone())
                    }
                    FileState::Missing => (None, None),
                    FileState::Directory => {
                        return Err(PlanErrorKind::Directory {
                            path: path.to_string(),
                        });
                    }
                    FileState::Unreadable => {
                        return Err(PlanErrorKind::Unreadable {
                            path: path.to_string(),
                        });
                    }
                }
            }
            None if self.known_missing(path) => {
                self.digest.files.insert(
                    path.to_string(),
                    FileDigest {
                        state: FileDigestState::Missing,
                        sha256: None,
                        symlink: None,
                    },
                );
                (None, None)
            }
            None => {
                return Err(PlanErrorKind::FileNotGathered {
                    path: path.to_string(),
                });
            }
        };
        state.files.insert(
            path.to_string(),
            VFile {
                before: before.clone(),
                before_sha256: sha,
                current: before.clone(),
                mode: None,
                descriptions: Vec::new(),
                reasons: Vec::new(),
            },
        );
        Ok(before)
    }

    /// The gather listed the parent directory and the file is not in it (the conf
    /// directories are listed for `*.conf` only, k3s's and RKE2's config drop-in
    /// directories for `*.yaml` and `*.yml`, /etc/dnsfix whole), or an ancestor is known to
    /// be missing.
    pub(super) fn known_missing(&self, path: &str) -> bool {
        let raw = &self.facts.raw;
        let mut dir = std::path::Path::new(path).parent();
        let mut first = true;
        while let Some(d) = dir {
            let d_str = d.to_string_lossy();
            let yaml = crate::facts::k3s_config::is_dropin_name(path);
            let listed_for_it = d_str == "/etc/dnsfix"
                || path.ends_with(".conf")
                || (yaml && crate::facts::raw::RANCHER_CONFIG_DIRS.contains(&d_str.as_ref()));
            if first && listed_for_it && raw.dirs.iter().any(|listed| listed == d_str.as_ref()) {
                return true;
            }
            if let Some(f) = self.facts.files.get(d_str.as_ref())
                && f.state == FileState::Missing
            {
                return true;
            }
            first = false;
            dir = d.parent();
        }
        false
    }

    pub(super) fn write(
        &mut self,
        state: &mut State,
        path: &str,
        content: String,
        mode: Option<String>,
        description: String,
        reason: &Reason,
    ) -> Result<bool, PlanErrorKind> {
        let current = self.read(state, path)?;
        if current.as_deref() == Some(content.as_str()) {
            return Ok(false);
        }
        if !state.order.iter().any(|p| p == path) {
            state.order.push(path.to_string());
        }
        if let Some(file) = state.files.get_mut(path) {
            file.current = Some(content);
            if mode.is_some() {
                file.mode = mode;
            }
            file.descriptions.push(description);
            file.reasons.push(reason.clone());
        }
        Ok(true)
    }
}
