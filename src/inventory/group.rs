//! [`Group`]: one inventory group as the loader builds it and as `--limit` and
//! [`Inventory::group_members`](super::Inventory::group_members) walk it. Internal: the rest of
//! the crate sees groups only as names on [`Host::groups`](super::Host::groups).

use std::collections::BTreeMap;

use super::Vars;
use super::origin::VarOrigin;

/// Ansible's default `ansible_group_priority`.
pub(crate) const DEFAULT_PRIORITY: i64 = 1;

#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub(crate) name: String,
    /// Hosts listed directly under this group, in order of first listing (indices into the
    /// inventory's hosts).
    pub(crate) hosts: Vec<usize>,
    /// Direct child groups, in order of first listing.
    pub(crate) children: Vec<usize>,
    /// Direct parent groups. After loading, every group but `all` has at least one.
    pub(crate) parents: Vec<usize>,
    /// Length of the longest parent chain up to `all` (which is 0): Ansible's group depth,
    /// the first key of variable precedence.
    pub(crate) depth: usize,
    /// `ansible_group_priority` from the inventory file; second precedence key.
    pub(crate) priority: i64,
    /// Variables set on the group in the inventory file itself (not `group_vars/`).
    pub(crate) vars: Vars,
    /// Where each of `vars` was set.
    pub(crate) origins: BTreeMap<String, VarOrigin>,
    /// Variables of the group's `group_vars/` files, which beat `vars` for its hosts, with
    /// where each was set: the group's own values, kept for a host the inventory does not
    /// list yet (one a later Kubespray scale.yml adds).
    pub(crate) file_vars: BTreeMap<String, (serde_json::Value, VarOrigin)>,
    /// Added by Kubespray's dynamic grouping, not written in the inventory (see
    /// [`super::kubespray`]).
    pub(crate) dynamic: bool,
    /// Every host in the group or a descendant, in Ansible's order of the group (see
    /// `Builder::walk`). Filled when loading ends.
    pub(crate) members: Vec<usize>,
}

impl Group {
    pub(crate) fn new(name: &str) -> Group {
        Group {
            name: name.to_string(),
            hosts: Vec::new(),
            children: Vec::new(),
            parents: Vec::new(),
            depth: 0,
            priority: DEFAULT_PRIORITY,
            vars: Vars::new(),
            origins: BTreeMap::new(),
            file_vars: BTreeMap::new(),
            dynamic: false,
            members: Vec::new(),
        }
    }
}

/// The groups a host of the groups `direct` is in, `all` (index `all`) and every ancestor
/// with them, in the order Ansible merges their variables (`sort_groups`: depth, then
/// `ansible_group_priority`, then name; the last wins).
pub(crate) fn merge_order(groups: &[Group], direct: &[usize], all: usize) -> Vec<usize> {
    let mut closure: Vec<usize> = Vec::new();
    let mut stack: Vec<usize> = direct.to_vec();
    stack.push(all);
    while let Some(g) = stack.pop() {
        if !closure.contains(&g) {
            closure.push(g);
            stack.extend(groups[g].parents.iter().copied());
        }
    }
    closure.sort_by(|&a, &b| {
        let (ga, gb) = (&groups[a], &groups[b]);
        (ga.depth, ga.priority, &ga.name).cmp(&(gb.depth, gb.priority, &gb.name))
    });
    closure
}
