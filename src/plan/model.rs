//! The plan as saved (`-o plan.json`) and rendered: typed, per-host changes with the facts
//! they were computed from, so `apply` can refuse a host whose facts moved since review.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::diagnose::{Finding, FindingStatus, Severity};
use crate::facts::raw::FileState;
use crate::playbook::Batch;

/// Bumped when a saved plan changes shape incompatibly.
pub const PLAN_FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Always `dnsfix-plan`.
    pub kind: String,
    pub format_version: u32,
    pub dnsfix_version: String,
    /// RFC 3339, UTC.
    pub created: String,
    pub inventory: Option<InventoryRef>,
    pub limit: Option<String>,
    /// Every playbook that was considered, with the digest of its file.
    pub playbooks: Vec<PlaybookRef>,
    /// Every selected host, in inventory order.
    pub hosts: Vec<HostPlan>,
    /// Each host's inventory groups (without `all`), so a saved plan can be narrowed with
    /// the same `--limit` patterns offline (`dnsfix show --limit kube_node`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub groups: BTreeMap<String, Vec<String>>,
    /// Changes to the local inventory that keep the node fixes from being reverted by the
    /// next Kubespray run; `apply` makes them only with `--update-inventory`.
    pub inventory_changes: Vec<InventoryChange>,
    /// Changes to kube-system ConfigMaps, made once for the whole cluster through kubectl,
    /// before any host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_changes: Vec<ConfigMapChange>,
    pub summary: Summary,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InventoryRef {
    pub path: String,
    /// sha256 over every inventory file read (the inventory, group_vars, host_vars), in
    /// path order, so an edited inventory is noticed.
    pub sha256: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlaybookRef {
    pub name: String,
    pub source: String,
    pub sha256: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostStatus {
    /// Nothing to change.
    Clean,
    /// Changes planned.
    Changes,
    /// Nothing can be changed automatically, but something is wrong (a playbook said why).
    Blocked,
    /// The host could not be reached or planned; `error` says why.
    Error,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostPlan {
    pub host: String,
    pub status: HostStatus,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<HostPlanError>,
    pub findings: Vec<FindingRecord>,
    /// The facts the plan was computed from; `apply` re-checks them.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub facts: Option<FactDigest>,
    pub changes: Vec<Change>,
    pub handlers: Vec<HandlerRun>,
    /// What is done through the cluster's API for this node, after its handlers ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster: Vec<ClusterAction>,
    /// Playbooks that apply here but cannot fix automatically, with the reason.
    pub blocked: Vec<Blocked>,
    /// Things the reviewer should know that do not block the plan.
    pub notes: Vec<Note>,
    /// Why nothing changes where something might have: tasks that found their target
    /// already as wanted ("resolvConf already …"), playbooks not needed here, findings no
    /// playbook fixes.
    #[serde(default)]
    pub unchanged: Vec<Note>,
    /// Finding ids the plan fixes (gone when the predicted facts are diagnosed again).
    pub fixes: Vec<String>,
    /// Finding ids still failing after the plan, as predicted.
    pub remaining: Vec<String>,
}

impl HostPlan {
    /// A plan for `host` with `status` and nothing in it yet.
    pub fn empty(host: &str, status: HostStatus) -> HostPlan {
        HostPlan {
            host: host.to_owned(),
            status,
            error: None,
            findings: Vec::new(),
            facts: None,
            changes: Vec::new(),
            handlers: Vec::new(),
            cluster: Vec::new(),
            blocked: Vec::new(),
            notes: Vec::new(),
            unchanged: Vec::new(),
            fixes: Vec::new(),
            remaining: Vec::new(),
        }
    }

    /// Does apply do anything here: a node change, a restart (one a cut-off run left due
    /// needs no change) or a cluster action?
    pub fn acts(&self) -> bool {
        !self.changes.is_empty() || !self.handlers.is_empty() || !self.cluster.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostPlanError {
    /// `unreachable` (with the transport's kind in `detail`) or `playbook`.
    pub kind: String,
    pub message: String,
}

/// A finding as recorded in a plan (owned, so a saved plan can be read back).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindingRecord {
    pub id: String,
    pub severity: Severity,
    pub status: FindingStatus,
    pub summary: String,
    pub evidence: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub playbook: Option<String>,
}

impl From<&Finding> for FindingRecord {
    fn from(f: &Finding) -> FindingRecord {
        FindingRecord {
            id: f.id.to_string(),
            severity: f.severity,
            status: f.status,
            summary: f.summary.clone(),
            evidence: f.evidence.clone(),
            playbook: f.playbook.map(str::to_string),
        }
    }
}

/// What the plan saw on the host. Every file the plan read or will write, the sysctls and
/// modules it touches, and the boot id: if any differs at apply time, the host is stale.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FactDigest {
    pub boot_id: Option<String>,
    pub files: BTreeMap<String, FileDigest>,
    /// Live values, by sysctl key.
    pub sysctls: BTreeMap<String, String>,
    /// Whether each module is loaded.
    pub modules: BTreeMap<String, bool>,
    /// What the running kubelet's binary said its version was (`kubelet --version`), where
    /// the plan asked it and the binary was not replaced on disk since the kubelet started:
    /// a kubelet config drop-in's resolvConf, and k3s's choice of the kubelet's resolv.conf,
    /// depend on it. Apply asks again: another version, or the binary replaced on disk
    /// since (the restart would start another), makes the host stale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubelet_version: Option<String>,
    /// sha256 over all of the above (canonical JSON), for a one-line comparison.
    pub sha256: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDigest {
    pub state: FileDigestState,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sha256: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub symlink: Option<String>,
}

/// What a file was when the plan (or apply's re-check) looked at it. The serialized
/// names are those saved plans have always used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FileDigestState {
    #[serde(rename = "present")]
    Present,
    #[serde(rename = "missing")]
    Missing,
    #[serde(rename = "directory")]
    Directory,
    #[serde(rename = "unreadable")]
    Unreadable,
    /// Only at apply time: the re-check did not read the file.
    #[serde(rename = "not gathered")]
    NotGathered,
}

impl FileDigestState {
    pub fn as_str(self) -> &'static str {
        match self {
            FileDigestState::Present => "present",
            FileDigestState::Missing => "missing",
            FileDigestState::Directory => "directory",
            FileDigestState::Unreadable => "unreadable",
            FileDigestState::NotGathered => "not gathered",
        }
    }
}

impl From<FileState> for FileDigestState {
    fn from(state: FileState) -> FileDigestState {
        match state {
            FileState::Present => FileDigestState::Present,
            FileState::Missing => FileDigestState::Missing,
            FileState::Directory => FileDigestState::Directory,
            FileState::Unreadable => FileDigestState::Unreadable,
        }
    }
}

impl std::fmt::Display for FileDigestState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// Why a change is in the plan: the playbook, task and the findings it fixes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reason {
    pub playbook: String,
    pub task: String,
    pub fixes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Change {
    /// Write a whole file. Applied only if the file's sha256 is still `before_sha256`
    /// (`None`: the file must not exist).
    WriteFile {
        path: String,
        /// What changed, for humans: "resolvConf: /etc/resolv.conf → /run/…".
        description: String,
        before_sha256: Option<String>,
        /// The current content (for the diff; not needed to apply).
        #[serde(skip_serializing_if = "Option::is_none", default)]
        before: Option<String>,
        after_sha256: String,
        content: String,
        /// Octal mode for a new file; an existing file keeps its mode and owner.
        mode: Option<String>,
        reasons: Vec<Reason>,
    },
    /// Set a sysctl now (persistence is a separate file write).
    Sysctl {
        name: String,
        before: Option<String>,
        after: String,
        reasons: Vec<Reason>,
    },
    /// Load a kernel module now (persistence is a separate file write).
    LoadModule { name: String, reasons: Vec<Reason> },
}

impl Change {
    /// What the change touches: a file's path, `sysctl NAME`, `module NAME`.
    pub fn target(&self) -> String {
        match self {
            Change::WriteFile { path, .. } => path.clone(),
            Change::Sysctl { name, .. } => format!("sysctl {name}"),
            Change::LoadModule { name, .. } => format!("module {name}"),
        }
    }

    pub fn reasons(&self) -> &[Reason] {
        match self {
            Change::WriteFile { reasons, .. }
            | Change::Sysctl { reasons, .. }
            | Change::LoadModule { reasons, .. } => reasons,
        }
    }

    pub fn reasons_mut(&mut self) -> &mut Vec<Reason> {
        match self {
            Change::WriteFile { reasons, .. }
            | Change::Sysctl { reasons, .. }
            | Change::LoadModule { reasons, .. } => reasons,
        }
    }
}

/// Something done through the cluster's API (kubectl on a control-plane host) rather than
/// on the node, after the node's handlers ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClusterAction {
    /// Delete the CoreDNS and nodelocaldns pods running on the node, one at a time, each
    /// followed by a bounded wait for a Ready replacement: a pod reads the kubelet's
    /// resolv.conf once, when it is created.
    RecreateDnsPods {
        /// The names the node may have in the cluster ([`crate::cluster::node_names`]:
        /// `--hostname-override`, else the hostname, and the inventory name where that is
        /// unread or an in-tree cloud provider names the node).
        node: Vec<String>,
        /// The pods there when the plan was made; apply lists them again.
        pods: Vec<PodState>,
        /// The control-plane host kubectl ran on.
        via: String,
        reasons: Vec<Reason>,
    },
}

impl ClusterAction {
    pub fn reasons(&self) -> &[Reason] {
        match self {
            ClusterAction::RecreateDnsPods { reasons, .. } => reasons,
        }
    }

    /// Does `other` act on the same thing (whatever its reasons)?
    pub fn same_target(&self, other: &ClusterAction) -> bool {
        match (self, other) {
            (
                ClusterAction::RecreateDnsPods { node: a, .. },
                ClusterAction::RecreateDnsPods { node: b, .. },
            ) => a == b,
        }
    }
}

/// A DNS pod as the plan saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodState {
    pub name: String,
    /// `coredns` or `nodelocaldns`.
    pub app: String,
    /// "ready", "CrashLoopBackOff, 12 restarts, loop detected".
    pub state: String,
    /// Its namespace where it is not kube-system: CoreDNS found through the cluster DNS
    /// Service elsewhere (the CoreDNS Helm chart installed with `-n coredns`). A plan saved
    /// before pods carried it has none: kube-system, where apply looked then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The label selector (`KEY=VALUE,...`) its pods were listed by there: its Service's
    /// selector. apply lists them again by it in `namespace`. None in kube-system (the
    /// DNS pods' own labels).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
}

impl PodState {
    /// Its namespace: kube-system where the plan names none.
    pub fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or("kube-system")
    }
}

/// A handler that fires because something it watches changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandlerRun {
    pub name: String,
    pub unit: String,
    pub action: HandlerAction,
    /// Restart batch size across hosts.
    pub serial: Batch,
    /// "/etc/kubernetes/kubelet-config.yaml resolvConf changed ← DNS-KUBELET-LOOPBACK",
    /// one per change that notified it.
    pub reasons: Vec<String>,
}

/// What a handler does to its unit (the `state` of a `service` handler).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum HandlerAction {
    #[default]
    #[serde(rename = "restarted")]
    Restarted,
    #[serde(rename = "reloaded")]
    Reloaded,
}

impl HandlerAction {
    /// `restarted` or `reloaded`, as playbooks and plans spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            HandlerAction::Restarted => "restarted",
            HandlerAction::Reloaded => "reloaded",
        }
    }

    /// `restart` or `reload`: the systemctl verb.
    pub fn verb(self) -> &'static str {
        match self {
            HandlerAction::Restarted => "restart",
            HandlerAction::Reloaded => "reload",
        }
    }

    pub fn parse(text: &str) -> Option<HandlerAction> {
        match text {
            "restarted" => Some(HandlerAction::Restarted),
            "reloaded" => Some(HandlerAction::Reloaded),
            _ => None,
        }
    }
}

impl std::fmt::Display for HandlerAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blocked {
    pub playbook: String,
    pub task: String,
    pub reason: String,
    pub fixes: Vec<String>,
}

/// `PLAYBOOK: REASON (fixes IDS)`, as the plan's text and an apply's run record say it.
impl std::fmt::Display for Blocked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.playbook, self.reason)?;
        if !self.fixes.is_empty() {
            write!(f, " (fixes {})", self.fixes.join(", "))?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    pub playbook: String,
    pub message: String,
}

/// One edit of a local inventory file (a Kubespray group_vars file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InventoryChange {
    pub path: String,
    pub before_sha256: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub before: Option<String>,
    pub content: String,
    /// The sha256 of the new content with its secrets (`content` is shown redacted): what
    /// apply restores from the file must hash to it. Plans made before it have none.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub after_sha256: Option<String>,
    /// `key: value` lines set, for humans.
    pub settings: Vec<String>,
    /// The hosts whose fixes need it.
    pub hosts: Vec<String>,
}

/// One key of a kube-system ConfigMap set to new text (a Corefile's `forward .`), made
/// with kubectl where the cluster was read. Apply writes it only while the key still holds
/// `before` (its sha256), and replaces the object with the resourceVersion it read, so a
/// concurrent edit is never overwritten.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigMapChange {
    /// `coredns` or `nodelocaldns`.
    pub configmap: String,
    /// The data key: `Corefile`.
    pub key: String,
    /// Where kubectl ran when the plan was made.
    pub via: String,
    pub before_sha256: String,
    pub before: String,
    pub after: String,
    /// What changes, for humans: "forward . /etc/resolv.conf → 192.0.2.53 (line 30)".
    pub description: String,
    pub reasons: Vec<Reason>,
    /// The hosts whose playbooks asked for it.
    pub hosts: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub hosts: usize,
    pub hosts_changing: usize,
    pub hosts_blocked: usize,
    pub hosts_failed: usize,
    pub files: usize,
    pub sysctls: usize,
    pub modules: usize,
    /// DNS pods to recreate through the cluster's API.
    #[serde(default)]
    pub pods: usize,
    /// Handler runs by what they do: `kubelet restart`, `NetworkManager reload`.
    pub restarts: BTreeMap<String, usize>,
    /// The smallest restart batch of any handler.
    pub serial: Option<Batch>,
    pub inventory_files: usize,
    /// kube-system ConfigMap keys to change.
    #[serde(default)]
    pub configmaps: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Saved plans and run records written before these were enums must still read, and
    /// new ones must read the same: the serialized names are the old strings.
    #[test]
    fn typed_outcomes_keep_their_saved_names() {
        for (state, name) in [
            (FileDigestState::Present, "present"),
            (FileDigestState::Missing, "missing"),
            (FileDigestState::Directory, "directory"),
            (FileDigestState::Unreadable, "unreadable"),
            (FileDigestState::NotGathered, "not gathered"),
        ] {
            assert_eq!(serde_json::json!(state), serde_json::json!(name));
            assert_eq!(state.to_string(), name);
            let back: FileDigestState =
                serde_json::from_value(serde_json::json!(name)).expect("reads the saved name");
            assert_eq!(back, state);
        }
        for (action, name) in [
            (HandlerAction::Restarted, "restarted"),
            (HandlerAction::Reloaded, "reloaded"),
        ] {
            assert_eq!(serde_json::json!(action), serde_json::json!(name));
            assert_eq!(HandlerAction::parse(name), Some(action));
            let back: HandlerAction =
                serde_json::from_value(serde_json::json!(name)).expect("reads the saved name");
            assert_eq!(back, action);
        }
    }
}
