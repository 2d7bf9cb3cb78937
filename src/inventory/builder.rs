//! [`Builder`]: the mutable inventory the YAML and INI parsers fill in (Ansible's
//! `InventoryData`), and the final step that turns it into an [`Inventory`]: implicit
//! parents, `ungrouped`, group depths, `group_vars/`/`host_vars/`, and variable precedence.
//!
//! Precedence is Ansible's (`VariableManager.get_vars` with the default
//! `VARIABLE_PRECEDENCE`), lowest first, each step replacing top-level keys
//! (`hash_behaviour=replace`):
//! 1. `all` vars from the inventory file;
//! 2. the other groups' vars from the inventory file, groups ordered by depth, then
//!    `ansible_group_priority`, then name;
//! 3. `group_vars/all`;
//! 4. `group_vars/<group>` for the other groups, in the same order;
//! 5. the host's vars from the inventory file (from every place it is listed, in file order);
//! 6. `host_vars/<host>`.
//!
//! Note what this means: any `group_vars/` file beats every group variable written in the
//! inventory file, even one on a deeper group. That surprises people, but it is what
//! Ansible (and therefore Kubespray) deploys, and dnsfix must see the same values.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::connection::{self, port_number};
use super::error::InventoryError;
use super::group::Group;
use super::host::Host;
use super::origin::{VarOrigin, VarScope};
use super::warning::InventoryWarning;
use super::{Inventory, Vars, kubespray, template, vars_dirs};

pub(crate) const ALL: usize = 0;
pub(crate) const UNGROUPED: usize = 1;

#[derive(Debug)]
pub(crate) struct Builder {
    groups: Vec<Group>,
    group_index: HashMap<String, usize>,
    hosts: Vec<HostEntry>,
    host_index: HashMap<String, usize>,
    warnings: Vec<InventoryWarning>,
}

#[derive(Debug)]
struct HostEntry {
    name: String,
    /// Host variables from the inventory file(s), merged in order of appearance.
    vars: Vars,
    origins: BTreeMap<String, VarOrigin>,
}

impl Builder {
    pub(crate) fn new() -> Builder {
        let mut builder = Builder {
            groups: Vec::new(),
            group_index: HashMap::new(),
            hosts: Vec::new(),
            host_index: HashMap::new(),
            warnings: Vec::new(),
        };
        let all = builder.group("all");
        let ungrouped = builder.group("ungrouped");
        debug_assert_eq!((all, ungrouped), (ALL, UNGROUPED));
        builder.link(ALL, UNGROUPED);
        builder
    }

    /// The group called `name`, created if needed.
    pub(crate) fn group(&mut self, name: &str) -> usize {
        if let Some(&index) = self.group_index.get(name) {
            return index;
        }
        let index = self.groups.len();
        self.groups.push(Group::new(name));
        self.group_index.insert(name.to_string(), index);
        index
    }

    pub(crate) fn group_name(&self, group: usize) -> &str {
        self.groups.get(group).map_or("", |g| g.name.as_str())
    }

    /// Adds `name` to `group`, creating the host on first sight. Like Ansible, a new host gets
    /// `inventory_file` and `inventory_dir` (absolute) as its first host variables, and the
    /// port of a `name:port` listing only then: Ansible's `InventoryData.add_host` creates
    /// `Host(name, port)` once, so a later `name:2403` elsewhere changes nothing.
    pub(crate) fn add_host(
        &mut self,
        name: &str,
        group: usize,
        source: &Path,
        port: Option<u16>,
    ) -> usize {
        let host = match self.host_index.get(name) {
            Some(&index) => index,
            None => {
                let index = self.hosts.len();
                let mut entry = HostEntry {
                    name: name.to_string(),
                    vars: Vars::new(),
                    origins: BTreeMap::new(),
                };
                let file = normalized(source);
                let implicit = VarOrigin::new(&file, None, VarScope::Implicit);
                if let Some(dir) = file.parent() {
                    entry.set("inventory_dir", path_value(dir), implicit.clone());
                }
                entry.set("inventory_file", path_value(&file), implicit);
                if let Some(port) = port {
                    entry.set(
                        "ansible_port",
                        port.into(),
                        VarOrigin::new(source, None, VarScope::Host),
                    );
                }
                self.hosts.push(entry);
                self.host_index.insert(name.to_string(), index);
                index
            }
        };
        if let Some(g) = self.groups.get_mut(group)
            && !g.hosts.contains(&host)
        {
            g.hosts.push(host);
        }
        host
    }

    /// Sets a host variable written in the inventory file at `path` (`line` when known),
    /// `literal` where it is tagged `!unsafe` (see [`VarOrigin::literal`]).
    pub(crate) fn set_host_var(
        &mut self,
        host: usize,
        key: String,
        value: Value,
        path: &Path,
        line: Option<usize>,
        literal: bool,
    ) {
        if let Some(entry) = self.hosts.get_mut(host) {
            let origin = VarOrigin::new(path, line, VarScope::Host).with_literal(literal);
            entry.set(&key, value, origin);
        }
    }

    /// Sets a group variable from the inventory file. `ansible_group_priority` is not a
    /// variable but the group's priority, as in Ansible (which reads it only from the
    /// inventory source, never from `group_vars/`). `literal` as for [`Self::set_host_var`].
    pub(crate) fn set_group_var(
        &mut self,
        group: usize,
        key: String,
        value: Value,
        path: &Path,
        line: Option<usize>,
        literal: bool,
    ) -> Result<(), String> {
        let Some(g) = self.groups.get_mut(group) else {
            return Ok(());
        };
        if key == "ansible_group_priority" {
            let priority = match &value {
                Value::Number(n) => n.as_i64(),
                Value::String(s) => s.trim().parse().ok(),
                _ => None,
            };
            g.priority = priority.ok_or_else(|| {
                format!(
                    "expected an integer for `ansible_group_priority` of group `{}`, found `{value}`",
                    g.name
                )
            })?;
            return Ok(());
        }
        let origin =
            VarOrigin::new(path, line, VarScope::Group(g.name.clone())).with_literal(literal);
        g.origins.insert(key.clone(), origin);
        g.vars.insert(key, value);
        Ok(())
    }

    /// Makes `child` a child of `parent`, refusing loops (Ansible refuses them too).
    pub(crate) fn add_child(&mut self, parent: usize, child: usize) -> Result<(), String> {
        let parent_name = self.group_name(parent).to_string();
        let child_name = self.group_name(child).to_string();
        if child == ALL {
            return Err(format!(
                "group `all` cannot be a child of `{parent_name}`: every group is already inside `all`"
            ));
        }
        if parent == child || self.is_ancestor(child, parent) {
            return Err(format!(
                "making `{child_name}` a child of `{parent_name}` creates a loop: `{parent_name}` is already inside `{child_name}`"
            ));
        }
        self.link(parent, child);
        Ok(())
    }

    pub(crate) fn warn(&mut self, path: &Path, line: Option<usize>, message: String) {
        self.warnings.push(InventoryWarning {
            path: path.to_path_buf(),
            line,
            message,
        });
    }

    fn link(&mut self, parent: usize, child: usize) {
        if let Some(p) = self.groups.get_mut(parent)
            && !p.children.contains(&child)
        {
            p.children.push(child);
        }
        if let Some(c) = self.groups.get_mut(child)
            && !c.parents.contains(&parent)
        {
            c.parents.push(parent);
        }
    }

    /// Is `candidate` `group` itself or one of its ancestors?
    fn is_ancestor(&self, candidate: usize, group: usize) -> bool {
        let mut stack = vec![group];
        let mut seen = HashSet::new();
        while let Some(g) = stack.pop() {
            if g == candidate {
                return true;
            }
            if seen.insert(g)
                && let Some(group) = self.groups.get(g)
            {
                stack.extend(group.parents.iter().copied());
            }
        }
        false
    }

    /// Ends loading: the implicit structure Ansible adds after parsing, Kubespray's dynamic
    /// groups, then variables. `vars_base` is the directory holding `group_vars/` and
    /// `host_vars/` (the inventory file's directory, or the inventory directory itself).
    pub(crate) fn finish(
        mut self,
        path: Option<PathBuf>,
        vars_base: Option<&Path>,
    ) -> Result<Inventory, InventoryError> {
        let walks = self.reconcile();
        let memberships = kubespray::dynamic_memberships(|name| {
            self.group_index(name)
                .map(|g| self.members_of(g))
                .unwrap_or_default()
        });
        for (target, hosts) in memberships {
            let group = self.dynamic_group(target);
            for host in hosts {
                self.add_member(group, host);
            }
        }
        let direct = self.direct_groups();

        let depths = self.depths();
        for (group, depth) in self.groups.iter_mut().zip(&depths) {
            group.depth = *depth;
        }

        // Each host's groups: its direct groups and all their ancestors, in merge order.
        let host_groups: Vec<Vec<usize>> = direct
            .iter()
            .map(|groups| super::group::merge_order(&self.groups, groups, ALL))
            .collect();

        let mut warnings = std::mem::take(&mut self.warnings);
        let mut group_files = Vec::with_capacity(self.groups.len());
        for group in &self.groups {
            group_files.push(match vars_base {
                Some(base) => vars_dirs::load(base, "group_vars", &group.name, &mut warnings)?,
                None => Vec::new(),
            });
        }

        keep_group_files(&mut self.groups, &group_files);

        let mut hosts = Vec::with_capacity(self.hosts.len());
        for (entry, groups) in self.hosts.into_iter().zip(&host_groups) {
            let mut merged = Merged::default();
            for &g in groups {
                let group = &self.groups[g];
                for (key, value) in &group.vars {
                    if let Some(origin) = group.origins.get(key) {
                        merged.set(key, value.clone(), origin.clone());
                    }
                }
            }
            for &g in groups {
                let scope = VarScope::GroupVars(self.groups[g].name.clone());
                merged.files(&group_files[g], &scope);
            }
            for (key, value) in entry.vars {
                if let Some(origin) = entry.origins.get(&key) {
                    merged.set(&key, value, origin.clone());
                }
            }
            if let Some(base) = vars_base {
                let files = vars_dirs::load(base, "host_vars", &entry.name, &mut warnings)?;
                merged.files(&files, &VarScope::HostVars);
            }
            let mut magic = Vars::new();
            magic.insert("inventory_hostname".into(), entry.name.clone().into());
            template::resolve(&mut merged.vars, &mut merged.origins, &magic);
            if let Some(path) = &path {
                check_ports(path, &entry.name, &merged, &mut warnings);
            }
            hosts.push(Host {
                name: entry.name,
                groups: groups
                    .iter()
                    .map(|&g| self.groups[g].name.clone())
                    .collect(),
                vars: merged.vars,
                origins: merged.origins,
            });
        }

        warnings.extend(kubespray::bastion_args(&mut hosts));
        if let Some(path) = &path {
            check_keys(path, &hosts, &mut warnings);
        }

        for (h, groups) in host_groups.iter().enumerate() {
            for &g in groups {
                self.groups[g].members.push(h);
            }
        }
        let (hosts, groups) = in_ansible_order(hosts, self.groups, &walks);

        Ok(Inventory {
            path,
            hosts,
            groups,
            warnings,
        })
    }

    /// The hosts of `group` in Ansible's order (`Group.get_hosts`): the hosts listed
    /// directly under the group, then those of its children, then of their children, level
    /// by level (`_walk_relationship` with `preserve_ordering`), each host where it is first
    /// met. Ansible takes the groups of the second level and below from a set, so where two
    /// groups of a level add unseen children, their order is Ansible's to pick; dnsfix takes
    /// them in the order their parents were met.
    fn walk(&self, group: usize) -> Vec<usize> {
        let mut ordered = vec![group];
        let mut level = self.groups[group].children.clone();
        ordered.extend(&level);
        while !level.is_empty() {
            let mut next = Vec::new();
            for &g in &level {
                for &child in &self.groups[g].children {
                    if !ordered.contains(&child) {
                        ordered.push(child);
                        next.push(child);
                    }
                }
            }
            level = next;
        }
        let mut hosts = Vec::new();
        for g in ordered {
            for &h in &self.groups[g].hosts {
                if !hosts.contains(&h) {
                    hosts.push(h);
                }
            }
        }
        hosts
    }

    /// What Ansible's `reconcile_inventory` does once the sources are read: every group
    /// without a parent hangs from `all`, and `ungrouped` holds the hosts in no other group.
    /// Returns each group's hosts in Ansible's order, before Kubespray's dynamic groups add
    /// any.
    fn reconcile(&mut self) -> Vec<Vec<usize>> {
        for g in 1..self.groups.len() {
            if self.groups[g].parents.is_empty() {
                self.link(ALL, g);
            }
        }
        self.direct_groups();
        (0..self.groups.len()).map(|g| self.walk(g)).collect()
    }

    /// Each host's direct groups (including `all` or `ungrouped`). A host listed only in
    /// `all` (or before any INI section) is in `ungrouped`; a host that also has a real
    /// group is not.
    fn direct_groups(&mut self) -> Vec<Vec<usize>> {
        let mut direct: Vec<Vec<usize>> = vec![Vec::new(); self.hosts.len()];
        for (g, group) in self.groups.iter().enumerate() {
            for &h in &group.hosts {
                direct[h].push(g);
            }
        }
        for (h, groups) in direct.iter_mut().enumerate() {
            let real = groups.iter().any(|&g| g != ALL && g != UNGROUPED);
            let ungrouped = &mut self.groups[UNGROUPED].hosts;
            if real {
                ungrouped.retain(|&x| x != h);
                groups.retain(|&g| g != UNGROUPED);
            } else if !groups.contains(&UNGROUPED) {
                ungrouped.push(h);
                groups.push(UNGROUPED);
            }
        }
        direct
    }

    /// Adds `host` to `group` directly, as Ansible's `group_by` and `add_host` do.
    pub(crate) fn add_member(&mut self, group: usize, host: usize) {
        if let Some(g) = self.groups.get_mut(group)
            && !g.hosts.contains(&host)
        {
            g.hosts.push(host);
        }
    }

    /// Every group made so far, `all` and `ungrouped` included.
    pub(crate) fn group_names(&self) -> impl Iterator<Item = &str> {
        self.groups.iter().map(|g| g.name.as_str())
    }

    pub(crate) fn group_index(&self, name: &str) -> Option<usize> {
        self.group_index.get(name).copied()
    }

    /// Hosts of `group`, directly or through child groups.
    pub(crate) fn members_of(&self, group: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![group];
        let mut seen = HashSet::new();
        while let Some(g) = stack.pop() {
            if !seen.insert(g) {
                continue;
            }
            if let Some(group) = self.groups.get(g) {
                for &h in &group.hosts {
                    if !out.contains(&h) {
                        out.push(h);
                    }
                }
                stack.extend(group.children.iter().copied());
            }
        }
        out.sort_unstable();
        out
    }

    /// The group called `name` as Ansible's `group_by` makes it: created if needed, under
    /// `all`, and marked dynamic when it did not exist.
    pub(crate) fn dynamic_group(&mut self, name: &str) -> usize {
        if let Some(&index) = self.group_index.get(name) {
            return index;
        }
        let index = self.group(name);
        self.link(ALL, index);
        self.groups[index].dynamic = true;
        index
    }

    /// Longest parent chain from each group up to `all`. Loops were refused in
    /// [`Builder::add_child`], so this terminates.
    fn depths(&self) -> Vec<usize> {
        fn depth(groups: &[Group], memo: &mut [Option<usize>], g: usize) -> usize {
            if let Some(known) = memo[g] {
                return known;
            }
            let d = groups[g]
                .parents
                .iter()
                .map(|&p| depth(groups, memo, p) + 1)
                .max()
                .unwrap_or(0);
            memo[g] = Some(d);
            d
        }
        let mut memo = vec![None; self.groups.len()];
        (0..self.groups.len())
            .map(|g| depth(&self.groups, &mut memo, g))
            .collect()
    }
}

/// A host's variables as precedence merges them, with where each winning value was set.
/// Each group's `group_vars/` files' variables, kept on the group ([`Group::file_vars`]).
fn keep_group_files(groups: &mut [Group], group_files: &[Vec<vars_dirs::VarsFile>]) {
    for (group, files) in groups.iter_mut().zip(group_files) {
        let scope = VarScope::GroupVars(group.name.clone());
        let mut merged = Merged::default();
        merged.files(files, &scope);
        for (key, value) in merged.vars {
            if let Some(origin) = merged.origins.remove(&key) {
                group.file_vars.insert(key, (value, origin));
            }
        }
    }
}

#[derive(Default)]
struct Merged {
    vars: Vars,
    origins: BTreeMap<String, VarOrigin>,
}

impl Merged {
    fn set(&mut self, key: &str, value: Value, origin: VarOrigin) {
        self.vars.insert(key.to_string(), value);
        self.origins.insert(key.to_string(), origin);
    }

    fn files(&mut self, files: &[vars_dirs::VarsFile], scope: &VarScope) {
        for file in files {
            for (key, value) in &file.vars {
                let line = file.lines.get(key).copied();
                let origin = VarOrigin::new(&file.path, line, scope.clone())
                    .with_literal(file.literal.contains(key));
                self.set(key, value.clone(), origin);
            }
        }
    }
}

impl HostEntry {
    fn set(&mut self, key: &str, value: Value, origin: VarOrigin) {
        self.vars.insert(key.to_string(), value);
        self.origins.insert(key.to_string(), origin);
    }
}

/// `hosts` and each group's members put in Ansible's order: the hosts in that of `all`,
/// which is the order a play over `all` runs them in (Kubespray's and dnsfix's batches),
/// each group's members in that of the group (`groups['kube_control_plane'][0]` is the
/// first of its walk, not the first host of the file). `walks` holds each group's hosts in
/// that order before Kubespray's dynamic groups were added; a host that joined a group only
/// through them comes after, in the order of `all`.
fn in_ansible_order(
    hosts: Vec<Host>,
    mut groups: Vec<Group>,
    walks: &[Vec<usize>],
) -> (Vec<Host>, Vec<Group>) {
    let mut order: Vec<usize> = walks.get(ALL).cloned().unwrap_or_default();
    let unreached: Vec<usize> = (0..hosts.len()).filter(|h| !order.contains(h)).collect();
    order.extend(unreached);
    let mut position = vec![0; hosts.len()];
    for (new, &old) in order.iter().enumerate() {
        position[old] = new;
    }
    for (g, group) in groups.iter_mut().enumerate() {
        let walk = walks.get(g).map(Vec::as_slice).unwrap_or_default();
        let mut rest: Vec<usize> = group
            .members
            .iter()
            .copied()
            .filter(|h| !walk.contains(h))
            .collect();
        rest.sort_by_key(|&h| position[h]);
        group.members = walk.iter().chain(&rest).map(|&h| position[h]).collect();
        for h in &mut group.hosts {
            *h = position[*h];
        }
    }
    let mut slots: Vec<Option<Host>> = hosts.into_iter().map(Some).collect();
    let hosts = order.iter().filter_map(|&h| slots[h].take()).collect();
    (hosts, groups)
}

/// `path` absolute and with `.` and `..` taken out by their text, as Ansible's
/// `unfrackpath(source, follow=False)` makes an inventory source (`os.path.normpath` of
/// the absolute path: symlinks are not followed): `inventory_dir` of `-i
/// ../inventory/hosts.yaml` has no `..` in Ansible, and `"{{ inventory_dir }}/credentials"`
/// (Kubespray's `credentials_dir`) renders to the same text here.
fn normalized(path: &Path) -> PathBuf {
    use std::path::Component;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !matches!(
                    out.components().next_back(),
                    Some(Component::RootDir) | None
                ) {
                    out.pop();
                }
            }
            other => out.push(other),
        }
    }
    out
}

fn path_value(path: &Path) -> Value {
    Value::String(path.to_string_lossy().into_owned())
}

/// A relative key that is not where ssh will open it but beside the inventory.
fn check_keys(path: &Path, hosts: &[Host], warnings: &mut Vec<InventoryWarning>) {
    for host in hosts {
        if let Some(message) = connection::misplaced_key(host) {
            warnings.push(InventoryWarning {
                path: path.to_path_buf(),
                line: None,
                message,
            });
        }
    }
}

/// A port that is set but unusable would silently become ssh's default port; say so, at
/// the file and line that set it where known (else the inventory `path`).
fn check_ports(path: &Path, host: &str, merged: &Merged, warnings: &mut Vec<InventoryWarning>) {
    for key in ["ansible_port", "ansible_ssh_port"] {
        let Some(value) = merged.vars.get(key) else {
            continue;
        };
        let origin = merged.origins.get(key);
        if port_number(value).is_some() {
            continue;
        }
        // A template left after the bare references were resolved (a filter, a variable
        // the inventory does not define) is not evaluated: the host is refused (see
        // connection.rs) rather than reached on ssh's default port.
        let message = if value.as_str().is_some_and(|s| s.contains("{{")) {
            format!(
                "host `{host}`: `{key}` is {value}, a template dnsfix does not evaluate; the host is refused: set the number"
            )
        } else {
            format!("host `{host}`: `{key}` is {value}, not a TCP port; it is ignored")
        };
        warnings.push(InventoryWarning {
            path: origin.map_or(path, |o| o.path.as_path()).to_path_buf(),
            line: origin.and_then(|o| o.line),
            message,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inventory_paths_lose_dot_and_dot_dot_as_python_normpath_does() {
        assert_eq!(
            normalized(Path::new("/srv/a/./b/../../inventory/hosts.yaml")),
            Path::new("/srv/inventory/hosts.yaml")
        );
        assert_eq!(normalized(Path::new("/../x")), Path::new("/x"));
    }
}
