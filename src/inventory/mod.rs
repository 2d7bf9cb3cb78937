//! Ansible/Kubespray-compatible inventory: which hosts exist, which groups they are in, what
//! their variables are, and which of them a `--limit` selects.
//!
//! It reads what `ansible-playbook -i` reads, so Kubespray inventories work unchanged: YAML
//! (or JSON) and INI inventory files, a directory of them, `group_vars/` and `host_vars/`
//! beside them, Ansible's variable precedence (spelled out in `builder.rs`) and host patterns.
//!
//! It never connects to a host, never prints, and never evaluates Jinja: dnsfix reads
//! literal values, and a templated value (`"{{ cluster_name }}"`) is kept and shown verbatim.
//! It also cannot run dynamic inventory scripts or inventory plugins; such sources are
//! refused with an error saying so.

mod builder;
mod connection;
mod error;
mod group;
mod host;
mod host_range;
mod ignore;
mod ini;
mod kubespray;
mod literal;
mod origin;
mod pattern;
mod shlex;
mod ssh_args;
mod template;
mod vars_dirs;

pub(crate) use vars_dirs::{
    candidates as vars_candidates, dir_files as vars_dir_files, vault_encrypted,
};
mod warning;
mod yaml;
mod yaml11;
mod yaml_vars;

use std::fs;
use std::path::{Path, PathBuf};

pub use connection::{Connection, ConnectionKind};
pub use error::{InventoryError, MAX_FILE};
pub use host::{Host, VAULTED, is_template};
pub use origin::{VarOrigin, VarScope};
pub use ssh_args::{shell_in_host, shell_in_user};
pub use warning::InventoryWarning;

use builder::Builder;
use group::Group;
use ignore::IgnoreRules;

/// Variables of a host or group, as JSON values.
pub type Vars = serde_json::Map<String, serde_json::Value>;

/// A loaded inventory.
#[derive(Debug, Clone)]
pub struct Inventory {
    /// The `-i` path as given; `None` for the implicit localhost inventory.
    path: Option<PathBuf>,
    /// In inventory order: Ansible's order of the group `all` (see `builder.rs`,
    /// `in_ansible_order`), which is not always where a host is first written.
    hosts: Vec<Host>,
    /// `all` first, `ungrouped` second, then in order of first appearance.
    groups: Vec<Group>,
    warnings: Vec<InventoryWarning>,
}

impl Inventory {
    /// Loads an inventory: a YAML/JSON or INI file, or a directory of them (as Ansible reads
    /// a directory given to `-i`: its entries in name order, descending into subdirectories
    /// other than `group_vars` and `host_vars`, skipping hidden files and what the ansible.cfg
    /// Ansible would read says to skip (see `ignore.rs`; by default backups and
    /// documentation)), plus `group_vars/` and `host_vars/` in the file's directory (or in the
    /// directory itself: like Ansible, never those of a subdirectory).
    ///
    /// The format follows the name, as Ansible picks its inventory plugin: `.yaml`, `.yml`
    /// and `.json` (in that case) mean YAML, any other extension INI; a file with none
    /// is YAML if it parses as a YAML mapping of groups, or starts like one (`---`, `{`,
    /// `all:`), and INI otherwise.
    pub fn load(path: &Path) -> Result<Inventory, InventoryError> {
        let cleaned = without_dot_dot(path);
        let path = cleaned.as_deref().unwrap_or(path);
        if !path.exists() && path.to_string_lossy().contains(',') {
            // Ansible's host_list plugin reads such a source (`-i 'node1,node2,'`) as host
            // names (lib/ansible/plugins/inventory/host_list.py, ansible-core 2.19.14).
            return Err(InventoryError::parse(
                path,
                None,
                None,
                "a comma-separated host list, which Ansible reads as host names and dnsfix does not: write the hosts into an inventory file, one per line (`printf '%s\\n' node1 node2 > hosts`), and give that to -i",
            ));
        }
        let metadata = fs::metadata(path).map_err(|e| InventoryError::io(path, e))?;
        let mut builder = Builder::new();
        let vars_base = if metadata.is_dir() {
            let files = inventory_files(path, &mut builder)?;
            if files.is_empty() {
                return Err(InventoryError::parse(
                    path,
                    None,
                    None,
                    "expected an inventory file (such as hosts.yaml or inventory.ini) in this directory, found none",
                ));
            }
            for file in &files {
                if has_inventory_extension(file) {
                    load_file(file, &mut builder)?;
                } else if let Err(err) = load_file(file, &mut Builder::new()) {
                    // Like Ansible, an unrecognised file in an inventory directory is skipped
                    // with a warning (it may be a log or notes), but only after a dry run, so
                    // that a half-parsed file leaves nothing behind.
                    builder.warn(file, None, format!("skipped, not an inventory: {err}"));
                } else {
                    load_file(file, &mut builder)?;
                }
            }
            path.to_path_buf()
        } else {
            if let Some(why) = plugin_source(path) {
                return Err(InventoryError::parse(path, None, None, why));
            }
            load_file(path, &mut builder)?;
            match path.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
                _ => PathBuf::from("."),
            }
        };
        builder.finish(Some(path.to_path_buf()), Some(&vars_base))
    }

    /// The implicit inventory used when no `-i` is given: one host `localhost` in group
    /// `all` with `ansible_connection=local`.
    pub fn local() -> Inventory {
        let mut vars = Vars::new();
        vars.insert("ansible_connection".into(), "local".into());
        let host = Host {
            vars,
            groups: vec!["all".into()],
            ..Host::new("localhost")
        };
        let mut all = Group::new("all");
        all.hosts = vec![0];
        all.members = vec![0];
        all.children = vec![1];
        let mut ungrouped = Group::new("ungrouped");
        ungrouped.parents = vec![0];
        ungrouped.depth = 1;
        Inventory {
            path: None,
            hosts: vec![host],
            groups: vec![all, ungrouped],
            warnings: Vec::new(),
        }
    }

    /// An inventory of only group memberships: each host with the groups it is in (as a
    /// saved plan records them), no variables. `--limit` patterns select from it as from
    /// the inventory the plan was made from.
    pub fn from_memberships<'a>(
        hosts: impl IntoIterator<Item = (&'a str, &'a [String])>,
    ) -> Result<Inventory, InventoryError> {
        let mut builder = Builder::new();
        let source = Path::new("<saved plan>");
        for (name, groups) in hosts {
            if groups.is_empty() {
                builder.add_host(name, builder::UNGROUPED, source, None);
            }
            for group in groups {
                let g = builder.group(group);
                builder.add_host(name, g, source, None);
            }
        }
        builder.finish(None, None)
    }

    /// The `-i` path as given; `None` for [`Inventory::local`].
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// All hosts in inventory order: the order in which Ansible runs a play over `all`
    /// (`ansible all --list-hosts`).
    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// The host called `name`.
    pub fn host(&self, name: &str) -> Option<&Host> {
        self.hosts.iter().find(|h| h.name == name)
    }

    /// Hosts matching an Ansible `--limit` pattern, in inventory order. `None` selects every
    /// host. An element that matches nothing, or a pattern that selects no host, is an error.
    pub fn select(&self, limit: Option<&str>) -> Result<Vec<&Host>, InventoryError> {
        Ok(self
            .select_positions(limit)?
            .into_iter()
            .filter_map(|h| self.hosts.get(h))
            .collect())
    }

    /// [`Inventory::select`] as positions ([`Inventory::host_at`]): what a run keeps of
    /// its hosts without copying them.
    /// A Kubespray bastion is never selected: Kubespray runs no DNS task on it (see
    /// [`Inventory::bastion`]).
    pub fn select_positions(&self, limit: Option<&str>) -> Result<Vec<usize>, InventoryError> {
        let node = |h: &usize| {
            self.hosts
                .get(*h)
                .is_some_and(|h| !kubespray::bastion_only(h))
        };
        match limit {
            None => Ok((0..self.hosts.len()).filter(node).collect()),
            Some(limit) => {
                let selected: Vec<usize> = pattern::select(self, limit)?;
                let nodes: Vec<usize> = selected.iter().copied().filter(node).collect();
                if nodes.is_empty() && !selected.is_empty() {
                    return Err(InventoryError::LimitBastion {
                        limit: limit.to_owned(),
                        inventory: self.describe(),
                    });
                }
                Ok(nodes)
            }
        }
    }

    /// Kubespray's bastion, when the inventory has one: the host `bastion`, through which
    /// Kubespray's default `ansible_ssh_common_args` connects every other host that sets
    /// none. It (and any host only in the group `bastion`) is not a node: no DNS task of
    /// Kubespray's runs on it, so dnsfix never selects it.
    pub fn bastion(&self) -> Option<&Host> {
        self.host("bastion")
    }

    /// The host at `position` in inventory order.
    pub fn host_at(&self, position: usize) -> Option<&Host> {
        self.hosts.get(position)
    }

    /// Names of the hosts in a group (including via child groups), in Ansible's order of
    /// the group (`groups[group]`: its own hosts, then its children's, level by level);
    /// `None` if there is no such group.
    pub fn group_members(&self, group: &str) -> Option<Vec<&str>> {
        let group = self.groups.iter().find(|g| g.name == group)?;
        Some(
            group
                .members
                .iter()
                .filter_map(|&h| self.hosts.get(h))
                .map(|h| h.name.as_str())
                .collect(),
        )
    }

    /// The group's own value of variable `key`, as written (a template unresolved), with
    /// where it was set: its `group_vars/` files', which beat its vars in the inventory
    /// file; `None` where the group sets none. What a host the inventory does not list yet
    /// gets from the group, hosts and other groups aside.
    pub fn group_var(&self, group: &str, key: &str) -> Option<(&serde_json::Value, &VarOrigin)> {
        let group = self.groups.iter().find(|g| g.name == group)?;
        group
            .file_vars
            .get(key)
            .map(|(value, origin)| (value, origin))
            .or_else(|| Some((group.vars.get(key)?, group.origins.get(key)?)))
    }

    /// Whether a host the inventory does not list yet, put in some leaf group under `group`
    /// (a group with no children: `group` itself, or a descendant), would get `group`'s own
    /// value of `key` ([`Inventory::group_var`]): the group precedence a listed host's
    /// variables are merged with (see `builder.rs`: `group_vars/` files beat the inventory
    /// file's group vars; within each, groups by depth, then `ansible_group_priority`, then
    /// name, the last winning), host variables aside. `false` where every leaf under it has
    /// a group of its own that overrides the value, or where the group sets none.
    pub fn group_var_inherited(&self, group: &str, key: &str) -> bool {
        let Some(start) = self.groups.iter().position(|g| g.name == group) else {
            return false;
        };
        let mut leaves = Vec::new();
        let mut seen = Vec::new();
        let mut stack = vec![start];
        while let Some(g) = stack.pop() {
            if seen.contains(&g) {
                continue;
            }
            seen.push(g);
            match self.groups[g].children.as_slice() {
                [] => leaves.push(g),
                children => stack.extend(children.iter().copied()),
            }
        }
        leaves
            .into_iter()
            .any(|leaf| self.group_var_winner(leaf, key) == Some(start))
    }

    /// The group whose value of `key` a host only in group `leaf` gets, host variables
    /// aside ([`Inventory::group_var_inherited`]).
    fn group_var_winner(&self, leaf: usize, key: &str) -> Option<usize> {
        let closure = group::merge_order(&self.groups, &[leaf], builder::ALL);
        let last = |set: &dyn Fn(&Group) -> bool| {
            closure
                .iter()
                .rev()
                .copied()
                .find(|&g| set(&self.groups[g]))
        };
        last(&|g| g.file_vars.contains_key(key)).or_else(|| last(&|g| g.vars.contains_key(key)))
    }

    /// Every group name, `all` and `ungrouped` first, then in order of first appearance.
    pub fn group_names(&self) -> Vec<&str> {
        self.groups.iter().map(|g| g.name.as_str()).collect()
    }

    /// Groups Kubespray adds at run time that the inventory itself does not define
    /// (`k8s_cluster` for the current sample inventory), in order of creation.
    pub fn dynamic_groups(&self) -> Vec<&str> {
        self.groups
            .iter()
            .filter(|g| g.dynamic)
            .map(|g| g.name.as_str())
            .collect()
    }

    /// Things Ansible accepts but that probably do not mean what was intended.
    pub fn warnings(&self) -> &[InventoryWarning] {
        &self.warnings
    }

    /// How messages name this inventory.
    fn describe(&self) -> String {
        match &self.path {
            Some(path) => path.display().to_string(),
            None => "the implicit localhost inventory".to_string(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Yaml,
    Ini,
}

fn load_file(path: &Path, builder: &mut Builder) -> Result<(), InventoryError> {
    let text = InventoryError::read_text(path)?;
    match detect(path, &text) {
        Format::Yaml => yaml::parse(path, &text, builder),
        Format::Ini => ini::parse(path, &text, builder).map_err(|err| match err {
            InventoryError::Parse {
                path,
                line,
                column,
                message,
            } if looks_like_yaml(&text) => {
                let extension = path.extension().map(|e| e.to_string_lossy().into_owned());
                InventoryError::Parse {
                    message: format!(
                        "{message} (the file looks like YAML, but Ansible reads a file named `.{}` as INI: its yaml plugin takes only .yaml, .yml and .json, in that case, or no extension)",
                        extension.unwrap_or_default()
                    ),
                    path,
                    line,
                    column,
                }
            }
            other => other,
        }),
    }
}

/// A name that says "inventory": an extension Ansible's yaml plugin takes or `.ini`
/// (case-sensitive, as its `yaml_extensions` are), or none at all (`hosts`).
fn has_inventory_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_none_or(|e| matches!(e, "yaml" | "yml" | "json" | "ini"))
}

/// The format Ansible's plugins read `path` in (`INVENTORY_ENABLED`: yaml, then ini). The
/// yaml plugin's `verify_file` takes a name with no extension or one of `.yaml`, `.yml`,
/// `.json`, compared as written (lib/ansible/plugins/inventory/yaml.py, ansible-core
/// 2.19.14 and c9ac477e53a), so `hosts.YML` or `hosts.prod` is INI to Ansible whatever it
/// holds.
fn detect(path: &Path, text: &str) -> Format {
    match path.extension().and_then(|e| e.to_str()) {
        Some("yaml" | "yml" | "json") => return Format::Yaml,
        Some(_) => return Format::Ini,
        None if path.extension().is_some() => return Format::Ini,
        None => {}
    }
    if looks_like_yaml(text) {
        Format::Yaml
    } else {
        Format::Ini
    }
}

/// Whether `text` is a YAML inventory, or a broken one: a mapping of groups, or a first
/// line like YAML's, so that a broken YAML file gets YAML errors rather than puzzling INI
/// ones.
fn looks_like_yaml(text: &str) -> bool {
    if let Ok(serde_norway::Value::Mapping(top)) = serde_norway::from_str(text)
        && top.values().all(|v| v.is_mapping() || v.is_null())
    {
        return true;
    }
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with(';'));
    match first {
        Some(line) if line.starts_with("---") || line.starts_with('{') => true,
        Some(line) => !line.starts_with('[') && !line.contains('=') && yaml_key_line(line),
        None => false,
    }
}

/// `key:` or `key: value` with a key that has no spaces: how YAML inventories start, and
/// something no INI host line looks like (`host:port` has no space after the colon).
fn yaml_key_line(line: &str) -> bool {
    let Some((key, rest)) = line.split_once(':') else {
        return false;
    };
    !key.is_empty()
        && !key.contains(char::is_whitespace)
        && (rest.is_empty() || rest.starts_with(' '))
}

/// The files of an inventory directory that Ansible would try as inventory sources, in
/// the order it tries them (`InventoryManager.parse_source`): entries sorted by name,
/// subdirectories read where they sort, except hidden ones and `group_vars`, `host_vars`
/// and `vars_plugins` (`IGNORED_ALWAYS`).
/// `path` with each `..` taken out together with the name before it, by their text, where
/// it has such a pair (else none): Ansible opens a source as `unfrackpath(opt,
/// follow=False)` makes it (lib/ansible/cli/__init__.py), the `os.path.normpath` of its
/// text, so `-i link/../hosts.ini` is the `hosts.ini` beside `link`, not the one the walk
/// through a symlinked `link` reaches. A leading `..` stays: from the working directory,
/// which Ansible takes as `os.getcwd()` gives it, the walk and the text agree.
fn without_dot_dot(path: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let mut out: Vec<Component> = Vec::new();
    let mut changed = false;
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                    changed = true;
                }
                Some(Component::RootDir) => changed = true,
                _ => out.push(component),
            },
            other => out.push(other),
        }
    }
    if !changed {
        return None;
    }
    Some(if out.is_empty() {
        PathBuf::from(".")
    } else {
        out.iter().collect()
    })
}

/// The files [`Inventory::load`] reads a directory given to `-i` from, in its order.
pub(crate) fn source_files(dir: &Path) -> Result<Vec<PathBuf>, InventoryError> {
    inventory_files(dir, &mut Builder::new())
}

fn inventory_files(dir: &Path, builder: &mut Builder) -> Result<Vec<PathBuf>, InventoryError> {
    inventory_files_with(dir, &IgnoreRules::from_environment(), builder)
}

/// [`inventory_files`] with the skipping rules given. Where no setting says which
/// extensions Ansible skips, an `.ini` file beside other sources is read (as ansible-core
/// 2.19 reads it) with a warning: 2.18, which Kubespray pins, skips it.
fn inventory_files_with(
    dir: &Path,
    rules: &IgnoreRules,
    builder: &mut Builder,
) -> Result<Vec<PathBuf>, InventoryError> {
    let mut files = Vec::new();
    collect_inventory_files(dir, 0, rules, builder, &mut files)?;
    for pattern in &rules.unreadable {
        builder.warn(
            dir,
            None,
            format!("the inventory ignore pattern {pattern} is a regex, which dnsfix does not evaluate: what it would skip is read"),
        );
    }
    if rules.extensions_from.is_none() && files.len() > 1 {
        for file in files
            .iter()
            .filter(|f| f.to_string_lossy().ends_with(".ini"))
        {
            builder.warn(
                file,
                None,
                "read, as ansible-core 2.19 reads it; ansible-core 2.18, which Kubespray pins, skips it (its default inventory_ignore_extensions has .ini), and no ansible.cfg or ANSIBLE_INVENTORY_IGNORE says which: set inventory_ignore_extensions (Kubespray's ansible.cfg skips .ini)".into(),
            );
        }
    }
    Ok(files)
}

/// Deeper than any real inventory tree; reaching it means a symlink loop.
const MAX_DIRECTORY_DEPTH: usize = 16;

fn collect_inventory_files(
    dir: &Path,
    depth: usize,
    rules: &IgnoreRules,
    builder: &mut Builder,
    files: &mut Vec<PathBuf>,
) -> Result<(), InventoryError> {
    if depth > MAX_DIRECTORY_DEPTH {
        return Err(InventoryError::parse(
            dir,
            None,
            None,
            format!(
                "expected at most {MAX_DIRECTORY_DEPTH} nested inventory directories (a symlink loop?)"
            ),
        ));
    }
    let mut entries = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| InventoryError::io(dir, e))? {
        let entry = entry.map_err(|e| InventoryError::io(dir, e))?;
        entries.push((entry.file_name(), entry.path()));
    }
    entries.sort();
    for (name, path) in entries {
        let name = name.to_string_lossy();
        let extension = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        if name.starts_with('.') || rules.ignores(&name) {
            continue;
        }
        if path.is_dir() {
            if !matches!(&*name, "group_vars" | "host_vars" | "vars_plugins") {
                collect_inventory_files(&path, depth + 1, rules, builder, files)?;
            }
            continue;
        }
        if !path.is_file() {
            continue;
        }
        if extension.as_deref() == Some("creds") {
            // Kubespray keeps generated secrets in `credentials/*.creds` inside the
            // inventory directory. Ansible would read each as an INI file naming one host
            // (the secret); dnsfix will not connect to, or look up, a secret.
            builder.warn(
                &path,
                None,
                "skipped: a Kubespray credentials file, not an inventory (Ansible would read its content as a host name)".into(),
            );
            continue;
        }
        // Ansible reads hosts and variables from it with the rest of the directory: left
        // out, the plan would be for another inventory than Ansible's.
        if let Some(why) = plugin_source(&path) {
            return Err(InventoryError::parse(&path, None, None, why));
        }
        files.push(path);
    }
    Ok(())
}

/// Why a file is a source for one of Ansible's inventory plugins dnsfix does not have: an
/// executable (the `script` plugin runs it) or a `.toml` file (the `toml` plugin reads it;
/// the ini plugin refuses that extension: lib/ansible/plugins/inventory/ini.py
/// `verify_file`, ansible-core 2.19.14). Ansible would read hosts from it; dnsfix says so
/// rather than read it as INI.
fn plugin_source(path: &Path) -> Option<String> {
    let extension = path.extension().and_then(|e| e.to_str());
    let export = format!(
        "export a static inventory with `ansible-inventory -i {} --list --yaml`",
        crate::text::escape(&path.display().to_string())
    );
    if extension == Some("toml") {
        return Some(format!(
            "a TOML inventory, which Ansible's toml plugin reads and dnsfix does not; {export}"
        ));
    }
    if is_executable(path) && !matches!(extension, Some("yaml" | "yml" | "json" | "ini")) {
        return Some(format!(
            "an executable, which Ansible runs as a dynamic inventory script; dnsfix cannot run dynamic inventory scripts: {export}"
        ));
    }
    None
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(_path: &Path) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As Python's `os.path.normpath` takes `..` out of a source's text (the cases are its
    /// own: `a/../..` is `..`, `/..` is `/`); a path with no `name/..` is left as given.
    #[test]
    fn a_source_loses_name_and_dot_dot_pairs_by_their_text() {
        let cleaned = |p: &str| without_dot_dot(Path::new(p)).map(|p| p.display().to_string());
        assert_eq!(cleaned("link/../hosts.ini").as_deref(), Some("hosts.ini"));
        assert_eq!(
            cleaned("../inv/link/../hosts.ini").as_deref(),
            Some("../inv/hosts.ini")
        );
        assert_eq!(
            cleaned("/srv/a/./b/../hosts").as_deref(),
            Some("/srv/a/hosts")
        );
        assert_eq!(cleaned("a/../..").as_deref(), Some(".."));
        assert_eq!(cleaned("a/..").as_deref(), Some("."));
        assert_eq!(cleaned("/..").as_deref(), Some("/"));
        assert_eq!(cleaned("../../hosts.ini"), None);
        assert_eq!(cleaned("./inventory/hosts.yaml"), None);
    }
    use std::fs;

    /// A scratch directory under the system temp dir, unique per test and process.
    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("dnsfix-inventory-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("create scratch dir");
        dir
    }

    #[test]
    fn format_is_detected_from_extension_then_content() {
        let yaml = "all:\n  hosts:\n    n1:\n";
        let ini = "[kube_node]\nn1 ansible_host=192.0.2.11\n";
        assert_eq!(detect(Path::new("hosts"), yaml), Format::Yaml);
        assert_eq!(detect(Path::new("hosts"), ini), Format::Ini);
        assert_eq!(detect(Path::new("hosts"), "n1\nn2:2222\n"), Format::Ini);
        assert_eq!(
            detect(Path::new("hosts"), "# c\n---\nall: [\n"),
            Format::Yaml
        );
        assert_eq!(
            detect(Path::new("hosts"), "# c\nall:\n  bad: [\n"),
            Format::Yaml
        );
        assert_eq!(detect(Path::new("hosts"), "{\"all\": {}}"), Format::Yaml);
        assert_eq!(detect(Path::new("hosts"), ""), Format::Ini);
        assert_eq!(detect(Path::new("x.ini"), yaml), Format::Ini);
        assert_eq!(detect(Path::new("x.json"), ini), Format::Yaml);
        // Ansible's yaml plugin takes `.yml` as written, and no other extension: before,
        // dnsfix read `hosts.YML` and `hosts.prod` holding YAML as YAML, hosts Ansible
        // never reads (in a directory it skips such a file, given alone it has no hosts).
        assert_eq!(detect(Path::new("x.YML"), yaml), Format::Ini);
        assert_eq!(detect(Path::new("hosts.prod"), yaml), Format::Ini);
        assert_eq!(detect(Path::new("hosts."), yaml), Format::Ini);
        let dir = scratch("extension-case");
        fs::write(dir.join("hosts.YML"), yaml).expect("write");
        let err = Inventory::load(&dir.join("hosts.YML"))
            .map(|_| ())
            .expect_err("INI to Ansible");
        assert!(
            err.to_string()
                .contains("Ansible reads a file named `.YML` as INI"),
            "{err}"
        );
        fs::write(dir.join("hosts.yml"), "all:\n  hosts:\n    n2:\n").expect("write");
        let inventory = Inventory::load(&dir).expect("the directory loads");
        let names: Vec<&str> = inventory.hosts().iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["n2"]);
        assert!(
            inventory.warnings()[0]
                .to_string()
                .contains("hosts.YML: skipped, not an inventory"),
            "{:?}",
            inventory.warnings()
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn extensionless_files_load_in_either_format() {
        let dir = scratch("extensionless");
        fs::write(dir.join("hosts"), "[g]\nn1\n").expect("write");
        let inventory = Inventory::load(&dir.join("hosts")).expect("ini loads");
        assert_eq!(inventory.group_members("g"), Some(vec!["n1"]));
        fs::write(dir.join("hosts"), "g:\n  hosts:\n    n2:\n").expect("write");
        let inventory = Inventory::load(&dir.join("hosts")).expect("yaml loads");
        assert_eq!(inventory.group_members("g"), Some(vec!["n2"]));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn inventory_directories_skip_what_ansible_skips() {
        let dir = scratch("directory");
        fs::write(dir.join("10-hosts.yaml"), "all:\n  hosts:\n    n1:\n").expect("write");
        fs::write(dir.join("20-more.ini"), "[g]\nn2\n").expect("write");
        fs::write(dir.join("README.md"), "# not an inventory [\n").expect("write");
        fs::write(dir.join(".hidden"), "hidden\n").expect("write");
        fs::write(dir.join("hosts.ini~"), "backup\n").expect("write");
        fs::write(dir.join("deploy.log"), "[2024-01-01 00:00] started\n").expect("write");
        fs::create_dir_all(dir.join("credentials")).expect("mkdir");
        fs::write(dir.join("credentials/token.creds"), "secret\n").expect("write");
        fs::create_dir_all(dir.join("group_vars")).expect("mkdir");
        fs::write(dir.join("group_vars/all.yml"), "x: 1\n").expect("write");
        let inventory = Inventory::load(&dir).expect("loads");
        let names: Vec<&str> = inventory.hosts().iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["n1", "n2"]);
        let warnings: Vec<String> = inventory
            .warnings()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("deploy.log") && w.contains("skipped, not an inventory")),
            "{warnings:?}"
        );
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("token.creds") && w.contains("credentials file")),
            "{warnings:?}"
        );
        // A dynamic inventory script beside them is read by Ansible (it runs it): refused,
        // naming it, not left out.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let script = dir.join("dynamic.py");
            fs::write(&script, "#!/usr/bin/env python3\n").expect("write");
            fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).expect("chmod");
            let err = Inventory::load(&dir).map(|_| ()).expect_err("a script");
            let shown = err.to_string();
            assert!(
                shown.contains("dynamic.py") && shown.contains("dynamic inventory script"),
                "{shown}"
            );
        }
        let _ = fs::remove_dir_all(&dir);
    }

    /// `-i inventory.py` (executable) or `-i hosts.toml`: Ansible runs the script, or
    /// reads the TOML; before, dnsfix read either as INI and failed on its first line.
    #[test]
    fn a_script_or_toml_inventory_given_alone_is_refused_saying_so() {
        let dir = scratch("plugin-sources");
        let toml = dir.join("hosts.toml");
        fs::write(
            &toml,
            "[kube_node.hosts.node1]\nansible_host = \"192.0.2.1\"\n",
        )
        .expect("write");
        let err = Inventory::load(&toml).map(|_| ()).expect_err("toml");
        assert!(
            err.to_string()
                .contains("a TOML inventory, which Ansible's toml plugin reads"),
            "{err}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let script = dir.join("inventory");
            fs::write(&script, "#!/bin/sh\necho '{}'\n").expect("write");
            fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).expect("chmod");
            let err = Inventory::load(&script).map(|_| ()).expect_err("script");
            assert!(
                err.to_string().contains("dynamic inventory script"),
                "{err}"
            );
        }
        // In a directory beside a static file too: Ansible reads both, so one left out
        // would plan for another inventory than Ansible's.
        let inventory = dir.join("inventory");
        let _ = fs::remove_file(&inventory);
        fs::create_dir_all(&inventory).expect("mkdir");
        fs::write(inventory.join("hosts.yaml"), "all:\n  hosts:\n    node1:\n").expect("write");
        fs::rename(&toml, inventory.join("extra.toml")).expect("move");
        let err = Inventory::load(&inventory)
            .map(|_| ())
            .expect_err("toml in a directory");
        let shown = err.to_string();
        assert!(
            shown.contains("extra.toml") && shown.contains("a TOML inventory"),
            "{shown}"
        );
        let _ = fs::remove_dir_all(&dir);
    }

    /// `-i 'node1,node2,'`, Ansible's host list: before, "inventory node1,node2, does not
    /// exist".
    #[test]
    fn a_host_list_is_refused_saying_what_it_is() {
        let err = Inventory::load(Path::new("node1,node2,"))
            .map(|_| ())
            .expect_err("a host list");
        assert!(
            err.to_string()
                .starts_with("node1,node2,: a comma-separated host list"),
            "{err}"
        );
    }

    #[test]
    fn an_empty_directory_is_an_error() {
        let dir = scratch("empty");
        let err = Inventory::load(&dir).map(|_| ()).expect_err("empty dir");
        assert!(
            err.to_string().contains("expected an inventory file"),
            "{err}"
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn unusable_ports_are_warned_about() {
        let dir = scratch("ports");
        let file = dir.join("hosts.yaml");
        fs::write(
            &file,
            "all:\n  hosts:\n    n1: {ansible_port: ssh}\n    n2: {ansible_port: '{{ p }}'}\n",
        )
        .expect("write");
        let inventory = Inventory::load(&file).expect("loads");
        let warnings: Vec<&str> = inventory
            .warnings()
            .iter()
            .map(|w| w.message.as_str())
            .collect();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[0].contains("host `n1`: `ansible_port` is \"ssh\", not a TCP port"),
            "{warnings:?}"
        );
        // A template dnsfix cannot evaluate is said so, not passed over in silence.
        assert!(
            warnings[1].contains(
                "host `n2`: `ansible_port` is \"{{ p }}\", a template dnsfix does not evaluate"
            ),
            "{warnings:?}"
        );
        let _ = fs::remove_dir_all(&dir);
    }

    /// Kubespray's documented bastion (`[bastion]` with `bastion ansible_host=X
    /// ansible_user=Y`): every other host connects through it with Kubespray's default
    /// ProxyCommand, unless the inventory sets `ansible_ssh_common_args` itself; the
    /// bastion is not a node.
    #[test]
    fn a_kubespray_bastion_proxies_the_other_hosts_and_is_not_selected() {
        let dir = scratch("bastion");
        fs::write(
            dir.join("inventory.ini"),
            "[bastion]\nbastion ansible_host=203.0.113.10 ansible_user=jump\n\n\
             [kube_control_plane]\nnode1 ansible_host=10.0.0.11 ansible_ssh_private_key_file=/k/id\n\n\
             [kube_node]\nnode2 ansible_host=10.0.0.12\n\
             node3 ansible_host=10.0.0.13 ansible_ssh_common_args='-o ProxyJump=other'\n",
        )
        .expect("write");
        let inventory = Inventory::load(&dir.join("inventory.ini")).expect("loads");
        let args = |name: &str| inventory.host(name).expect(name).connection().ssh_args;
        let proxy = |key: &str| {
            vec![
                "-o".to_owned(),
                format!(
                    "ProxyCommand=ssh -o BatchMode=yes -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no -W %h:%p -p 22 jump@203.0.113.10 {key}"
                )
                .trim_end()
                .to_owned(),
            ]
        };
        assert_eq!(args("node1"), proxy("-i /k/id"));
        assert_eq!(args("node2"), proxy(""));
        assert_eq!(args("node3"), ["-o", "ProxyJump=other"]);
        let from = &inventory
            .host("node2")
            .expect("node2")
            .connection()
            .ssh_args_from;
        assert!(from[0].contains("roles/kubespray_defaults"), "{from:?}");
        assert!(
            inventory
                .host("bastion")
                .expect("bastion")
                .var("ansible_ssh_common_args")
                .is_none()
        );
        let names = |limit| -> Vec<String> {
            inventory
                .select(limit)
                .expect("select")
                .iter()
                .map(|h| h.name.clone())
                .collect()
        };
        assert_eq!(names(None), ["node1", "node2", "node3"]);
        assert_eq!(names(Some("all")), ["node1", "node2", "node3"]);
        assert!(matches!(
            inventory.select(Some("bastion")),
            Err(InventoryError::LimitBastion { .. })
        ));

        // A key path the shell would expand is one word of it (ssh expands the `~` itself).
        fs::write(
            dir.join("inventory.ini"),
            "[bastion]\nbastion ansible_host=203.0.113.10 ansible_user=jump\n\
             [kube_node]\nnode2 ansible_ssh_private_key_file=~/.ssh/id*\n",
        )
        .expect("write");
        let inventory = Inventory::load(&dir.join("inventory.ini")).expect("loads");
        let args = inventory
            .host("node2")
            .expect("node2")
            .connection()
            .ssh_args;
        let command = args[1]
            .strip_prefix("ProxyCommand=ssh ")
            .expect("ProxyCommand");
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("exec printf '%s\\n' {command}"))
            .current_dir(&dir)
            .output()
            .expect("sh");
        let words = String::from_utf8_lossy(&out.stdout);
        assert!(
            words.lines().any(|w| w == "~/.ssh/id*"),
            "{args:?}: {words}"
        );

        // A bastion without ansible_user: Ansible fails on the undefined variable; dnsfix
        // refuses the hosts that would go through it.
        fs::write(
            dir.join("inventory.ini"),
            "[bastion]\nbastion ansible_host=203.0.113.10\n[kube_node]\nnode2\n",
        )
        .expect("write");
        let inventory = Inventory::load(&dir.join("inventory.ini")).expect("loads");
        let refused = inventory.host("node2").expect("node2").connection().refused;
        let refused = refused.expect("refused");
        assert!(
            refused.contains("node2")
                && refused.contains("ansible_ssh_common_args")
                && refused.contains("through the bastion"),
            "{refused}"
        );
        let _ = fs::remove_dir_all(&dir);
    }

    /// A hostile bastion: Kubespray's template hands its values as they are to the shell
    /// that runs the ProxyCommand (the operator's $SHELL, fish's quotes not POSIX's), and
    /// to the inner ssh as its destination. They are not rendered: the hosts behind it are
    /// refused, and a warning names the bastion's line. Before, the address's `;` was
    /// quoted for a POSIX shell only, and the user's backslash let fish run the rest.
    #[test]
    fn a_hostile_bastion_is_not_put_into_the_proxy_command() {
        let dir = scratch("hostile-bastion");
        let ini = |host: &str, user: &str| {
            format!(
                "[bastion]\nbastion ansible_host={host} ansible_user={user}\n[kube_node]\nnode2\n"
            )
        };
        // A backslash in YAML: an INI line drops it as a shell would.
        let yaml = "all:\n  hosts:\n    bastion:\n      ansible_host: 203.0.113.10\n      \
                    ansible_user: 'CORP\\jump'\n  children:\n    kube_node:\n      hosts:\n        \
                    node2:\n";
        let cases = [
            (
                "inventory.ini",
                ini("'b;touch${IFS}marker'", "jump"),
                "inventory.ini:2",
                "';'",
            ),
            (
                "inventory.ini",
                ini("-oProxyCommand=x", "jump"),
                "inventory.ini:2",
                "a '-' at its start",
            ),
            (
                "inventory.ini",
                ini("203.0.113.10", "-oProxyCommand=x"),
                "inventory.ini:2",
                "a '-' at its start",
            ),
            (
                "inventory.ini",
                ini("bastion%h", "jump"),
                "inventory.ini:2",
                "'%'",
            ),
            ("hosts.yml", yaml.to_owned(), "hosts.yml", r"'\\'"),
        ];
        for (name, text, at, held) in cases {
            fs::write(dir.join(name), &text).expect("write");
            let inventory = Inventory::load(&dir.join(name)).expect("loads");
            let connection = inventory.host("node2").expect("node2").connection();
            let refused = connection.refused.expect("refused");
            assert!(
                refused.contains("through the bastion") && refused.contains("a warning names"),
                "{refused}"
            );
            let warnings: Vec<String> = inventory
                .warnings()
                .iter()
                .map(ToString::to_string)
                .collect();
            assert!(
                warnings.len() == 1
                    && warnings[0].contains(at)
                    && warnings[0].contains(held)
                    && warnings[0].contains("the hosts behind it are refused"),
                "{text}: {warnings:?}"
            );
        }
        let held = |port: &str| {
            fs::write(
                dir.join("inventory.ini"),
                format!("[bastion]\nbastion ansible_host=b ansible_user=u ansible_port={port}\n[kube_node]\nnode2\n"),
            )
            .expect("write");
            let inventory = Inventory::load(&dir.join("inventory.ini")).expect("loads");
            inventory.host("node2").expect("node2").connection().refused
        };
        assert!(held("2222").is_none());
        assert!(held("'22 -oProxyCommand=x'").is_some());

        let _ = fs::remove_dir_all(&dir);
    }

    /// Kubespray's ansible.cfg skips `.ini` files and `credentials/` in an inventory
    /// directory (as ansible-core 2.18's default skips `.ini`); before, dnsfix read every
    /// `.ini` there, hosts Kubespray's Ansible never sees. Without such a setting an `.ini`
    /// beside other sources is read, as 2.19 does, with a warning naming it.
    #[test]
    fn a_directory_skips_what_the_ansible_cfg_says_and_warns_about_ini_files_otherwise() {
        let dir = scratch("ignore-rules");
        fs::write(dir.join("hosts.yaml"), "all:\n  hosts:\n    n1:\n").expect("write");
        fs::write(dir.join("old.ini"), "[g]\nn2\n").expect("write");
        fs::create_dir_all(dir.join("credentials")).expect("mkdir");
        fs::write(dir.join("credentials/extra"), "[g]\nn3\n").expect("write");
        let cfg = "[defaults]\ninventory_ignore_extensions = ~, .orig, .bak, .ini, .cfg, .retry, .pyc, .pyo, .creds, .gpg\n[inventory]\nignore_patterns = artifacts, credentials\n";
        let kubespray = IgnoreRules::from_sources(|_| None, Some((Path::new("ansible.cfg"), cfg)));
        let mut builder = Builder::new();
        let files = inventory_files_with(&dir, &kubespray, &mut builder).expect("files");
        assert_eq!(files, [dir.join("hosts.yaml")]);
        let mut builder = Builder::new();
        let files =
            inventory_files_with(&dir, &IgnoreRules::default(), &mut builder).expect("files");
        assert_eq!(files.len(), 3, "{files:?}");
        let inventory = builder.finish(None, None).expect("finish");
        let warnings: Vec<String> = inventory
            .warnings()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("old.ini") && warnings[0].contains("2.18"),
            "{warnings:?}"
        );
        let _ = fs::remove_dir_all(&dir);
    }
}
