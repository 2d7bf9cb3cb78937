//! [`Finding`]: one thing wrong (or not knowable) on one host, with the evidence an
//! on-call engineer needs to act without reading the code.

use serde::Serialize;

/// How bad a finding is. Ordered: `Info < Warning < High < Critical`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Info,
    Warning,
    High,
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }

    pub fn parse(s: &str) -> Option<Severity> {
        match s {
            "info" => Some(Severity::Info),
            "warning" => Some(Severity::Warning),
            "high" => Some(Severity::High),
            "critical" => Some(Severity::Critical),
            _ => None,
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // pad, not write_str, so `{:<9}` aligns columns.
        f.pad(self.as_str())
    }
}

/// Whether the rule found a problem or could not tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingStatus {
    /// The problem is there; the evidence shows it.
    Failed,
    /// A fact the rule needs could not be read: not clean, not proven broken.
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable SCREAMING-KEBAB id users grep for (see `dnsfix explain`).
    pub id: &'static str,
    pub severity: Severity,
    pub status: FindingStatus,
    pub host: String,
    /// One line: what is wrong.
    pub summary: String,
    /// What was seen, with file:line, e.g. "/etc/kubernetes/kubelet-config.yaml:31
    /// resolvConf: /etc/resolv.conf → symlink to ../run/systemd/resolve/stub-resolv.conf →
    /// nameserver 127.0.0.53".
    pub evidence: Vec<String>,
    /// What to do about it, for this host.
    pub remediation: String,
    /// The shipped playbook that fixes it, once there is one.
    pub playbook: Option<&'static str>,
    /// The values the remediation gives a setting, where dnsfix knows them (`clusterDNS` →
    /// the cluster DNS Service's address): what the playbook sets.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub wanted: std::collections::BTreeMap<&'static str, Vec<String>>,
    /// The setting a finding is about, where a rule's findings are about different ones
    /// and its playbook must tell them apart (DNS-KUBELET-NO-CLUSTER-DNS: `clusterDomain`
    /// alone). Not part of the report; plans show it to playbooks as `about`.
    #[serde(skip)]
    pub about: Option<&'static str>,
}

impl Finding {
    /// This finding, about `setting` alone.
    pub fn about(mut self, setting: &'static str) -> Finding {
        self.about = Some(setting);
        self
    }

    /// This finding, with `values` as what its remediation gives `setting`.
    pub fn wanting(mut self, setting: &'static str, values: Vec<String>) -> Finding {
        self.wanted.insert(setting, values);
        self
    }

    /// The order findings are shown in, by `check` and in plans: the worst first, then by
    /// id (findings of one id keep the rules' order).
    pub fn worst_first(a: &Finding, b: &Finding) -> std::cmp::Ordering {
        b.severity.cmp(&a.severity).then(a.id.cmp(b.id))
    }
}
