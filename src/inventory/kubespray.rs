//! Kubespray's dynamic groups: the groups every Kubespray playbook adds at run time with
//! `group_by` before anything else (`playbooks/boilerplate.yml`, "Define groups for legacy
//! less structured inventories"), so that dnsfix sees the groups — and therefore the
//! `group_vars/` — that Kubespray sees.
//!
//! Kubespray's current sample `inventory.ini` defines `kube_control_plane`, `etcd` and
//! `kube_node` only; `k8s_cluster` exists only through this step, so without it the
//! variables in `group_vars/k8s_cluster/` (kube_proxy_mode, enable_nodelocaldns,
//! nodelocaldns_ip, dns_domain, ...) would silently not apply.
//!
//! The task is one `group_by` looped over a mapping, with `group_names` as it was before the
//! loop (Ansible computes a task's variables once per host): a host joins `target` when it
//! is already in one of the `sources` groups. The differential test in tests/it/inventory.rs
//! runs the same task under `ansible-playbook` and compares.

/// `group_mappings` from kubespray playbooks/boilerplate.yml, in its order.
pub(crate) const GROUP_MAPPINGS: &[(&str, &[&str])] = &[
    ("kube_control_plane", &["kube-master"]),
    ("kube_node", &["kube-node"]),
    ("calico_rr", &["calico-rr"]),
    ("no_floating", &["no-floating"]),
    (
        "k8s_cluster",
        &["kube_node", "kube_control_plane", "calico_rr"],
    ),
];

/// Kubespray's dynamic group memberships: each target group that gains hosts, in
/// [`GROUP_MAPPINGS`] order, with the hosts that join it. `members` gives the hosts of a
/// group, directly or through child groups (none for a group that does not exist). The
/// inventory builder creates the targets that did not exist under `all`, marked dynamic;
/// existing groups gain the hosts as direct members, which changes no variable (a host's
/// groups are a set).
pub(crate) fn dynamic_memberships(
    members: impl Fn(&str) -> Vec<usize>,
) -> Vec<(&'static str, Vec<usize>)> {
    // `group_names` before the loop: who is in each source group now.
    GROUP_MAPPINGS
        .iter()
        .map(|(target, sources)| {
            let mut hosts: Vec<usize> = sources.iter().flat_map(|s| members(s)).collect();
            hosts.sort_unstable();
            hosts.dedup();
            (*target, hosts)
        })
        .filter(|(_, hosts)| !hosts.is_empty())
        .collect()
}
