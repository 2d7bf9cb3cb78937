//! YAML (and JSON) inventories, read like Ansible's `yaml` inventory plugin:
//!
//! ```yaml
//! all:
//!   hosts: {node1: {ansible_host: 192.0.2.11}}
//!   vars: {...}
//!   children:
//!     kube_node: {hosts: {node1: }}
//! ```
//!
//! Top-level keys other than `all` are groups too (they end up under `all`). Groups,
//! `hosts:`, `vars:` and `children:` may be null; a string where a mapping of hosts or
//! children is expected names one host or child, as in Ansible. A host listed in several
//! groups is one host whose variables from every listing merge, later listings winning.
//!
//! Stricter than Ansible, which only warns and skips: an unknown key in a group (a typo such
//! as `host:`), or a group that is not a mapping, is an error here, because a skipped section
//! silently drops hosts from a fleet-wide change. Duplicate keys are errors too.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use serde::de::{self, DeserializeSeed, MapAccess};

use super::Vars;
use super::builder::Builder;
use super::error::InventoryError;
use super::host_range::expand_host_pattern;
use super::yaml_vars::{
    Expect, Issue, KeySeed, Shape, VAULT_WARNING, ValueSeed, VarsMap, fail, source, to_error,
    vault_lines,
};
use super::yaml11::Source;

const GROUP_KEYS: &[&str] = &["hosts", "vars", "children"];

/// Reads the YAML inventory `text` (from `path`) into `builder`.
pub(crate) fn parse(path: &Path, text: &str, builder: &mut Builder) -> Result<(), InventoryError> {
    let ctx = Ctx {
        issue: Issue::default(),
        builder: RefCell::new(builder),
        path,
        source: source(text),
    };
    let de = serde_norway::Deserializer::from_str(text);
    Shape(Top { ctx: &ctx })
        .deserialize(de)
        .map_err(|err| to_error(path, text, &err, &ctx.issue))?;
    for line in vault_lines(text) {
        builder.warn(path, Some(line), VAULT_WARNING.into());
    }
    Ok(())
}

/// Shared by every visitor of one parse. The builder is borrowed only for short updates,
/// never across a nested deserialization.
struct Ctx<'b> {
    issue: Issue,
    builder: RefCell<&'b mut Builder>,
    path: &'b Path,
    source: Source<'b>,
}

struct Top<'a, 'b> {
    ctx: &'a Ctx<'b>,
}

impl<'de> Expect<'de> for Top<'_, '_> {
    type Out = ();

    fn issue(&self) -> &Issue {
        &self.ctx.issue
    }
    fn expected(&self) -> String {
        "a mapping of groups at the top level (such as `all:`)".into()
    }
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(name) = map.next_key_seed(KeySeed {
            issue: &self.ctx.issue,
            seen: &mut seen,
            within: "",
            allowed: None,
        })? {
            if name == "plugin" {
                let plugin = map.next_value_seed(ValueSeed {
                    issue: &self.ctx.issue,
                    source: &self.ctx.source,
                    path: name,
                    marks: &RefCell::default(),
                    unsafe_content: false,
                })?;
                return Err(fail(
                    &self.ctx.issue,
                    format!(
                        "this file configures the inventory plugin {plugin}, it is not a static inventory; dnsfix reads static YAML and INI inventories (export one with `ansible-inventory -i <this file> --list --yaml`)"
                    ),
                ));
            }
            map.next_value_seed(Shape(GroupDef {
                ctx: self.ctx,
                name,
            }))?;
        }
        Ok(())
    }
    fn null<E: de::Error>(self) -> Result<(), E> {
        Ok(()) // an empty file is an empty inventory
    }
}

struct GroupDef<'a, 'b> {
    ctx: &'a Ctx<'b>,
    name: String,
}

impl<'de> Expect<'de> for GroupDef<'_, '_> {
    type Out = usize;

    fn issue(&self) -> &Issue {
        &self.ctx.issue
    }
    fn expected(&self) -> String {
        format!(
            "group `{}` to be a mapping with `hosts`, `vars` and/or `children`",
            self.name
        )
    }
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<usize, A::Error> {
        let ctx = self.ctx;
        let group = ctx.builder.borrow_mut().group(&self.name);
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key_seed(KeySeed {
            issue: &ctx.issue,
            seen: &mut seen,
            within: &self.name,
            allowed: Some(GROUP_KEYS),
        })? {
            match key.as_str() {
                "hosts" => map.next_value_seed(Shape(Hosts {
                    ctx,
                    group,
                    name: &self.name,
                }))?,
                "children" => map.next_value_seed(Shape(Children {
                    ctx,
                    parent: group,
                    name: &self.name,
                }))?,
                _ => {
                    let within = format!("{}.vars", self.name);
                    let (vars, tagged) = map.next_value_seed(Shape(VarsMap {
                        issue: &ctx.issue,
                        source: &ctx.source,
                        what: format!("a mapping of variables under `{within}`"),
                        path: within,
                    }))?;
                    let mut builder = ctx.builder.borrow_mut();
                    for (key, value) in vars {
                        let literal = tagged.contains(&key);
                        builder
                            .set_group_var(group, key, value, ctx.path, None, literal)
                            .map_err(|message| fail::<A::Error>(&ctx.issue, message))?;
                    }
                }
            }
        }
        Ok(group)
    }
    fn null<E: de::Error>(self) -> Result<usize, E> {
        Ok(self.ctx.builder.borrow_mut().group(&self.name))
    }
}

struct Hosts<'a, 'b, 'n> {
    ctx: &'a Ctx<'b>,
    group: usize,
    name: &'n str,
}

impl Hosts<'_, '_, '_> {
    /// Adds the hosts `pattern` names, with `vars`, of which those named in `tagged` are
    /// tagged `!unsafe`.
    fn add<E: de::Error>(
        &self,
        pattern: &str,
        vars: Vars,
        tagged: &BTreeSet<String>,
    ) -> Result<(), E> {
        if pattern == "<<" {
            return Err(fail(
                &self.ctx.issue,
                format!(
                    "YAML merge keys (`<<`) are supported inside variables, not in `{}.hosts`",
                    self.name
                ),
            ));
        }
        let (names, port) = expand_host_pattern(pattern).map_err(|e| {
            fail::<E>(
                &self.ctx.issue,
                format!(
                    "invalid host pattern `{}` in `{}.hosts`: {e}",
                    crate::text::escape(pattern),
                    self.name
                ),
            )
        })?;
        let mut builder = self.ctx.builder.borrow_mut();
        for name in names {
            let host = builder.add_host(&name, self.group, self.ctx.path, port);
            for (key, value) in &vars {
                let literal = tagged.contains(key);
                let (key, value) = (key.clone(), value.clone());
                builder.set_host_var(host, key, value, self.ctx.path, None, literal);
            }
        }
        Ok(())
    }
}

impl<'de> Expect<'de> for Hosts<'_, '_, '_> {
    type Out = ();

    fn issue(&self) -> &Issue {
        &self.ctx.issue
    }
    fn expected(&self) -> String {
        format!("a mapping of hosts under `{}.hosts`", self.name)
    }
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let within = format!("{}.hosts", self.name);
        let mut seen = HashSet::new();
        while let Some(pattern) = map.next_key_seed(KeySeed {
            issue: &self.ctx.issue,
            seen: &mut seen,
            within: &within,
            allowed: None,
        })? {
            let (vars, tagged) = map.next_value_seed(Shape(VarsMap {
                issue: &self.ctx.issue,
                source: &self.ctx.source,
                what: format!(
                    "a mapping of variables (or nothing) for host `{pattern}` under `{within}`"
                ),
                path: format!("{within}.{pattern}"),
            }))?;
            self.add::<A::Error>(&pattern, vars, &tagged)?;
        }
        Ok(())
    }
    fn null<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn string<E: de::Error>(self, value: &str) -> Result<(), E> {
        self.add(value, Vars::new(), &BTreeSet::new())
    }
}

struct Children<'a, 'b, 'n> {
    ctx: &'a Ctx<'b>,
    parent: usize,
    name: &'n str,
}

impl Children<'_, '_, '_> {
    fn link<E: de::Error>(&self, child: usize) -> Result<(), E> {
        self.ctx
            .builder
            .borrow_mut()
            .add_child(self.parent, child)
            .map_err(|message| fail(&self.ctx.issue, message))
    }
}

impl<'de> Expect<'de> for Children<'_, '_, '_> {
    type Out = ();

    fn issue(&self) -> &Issue {
        &self.ctx.issue
    }
    fn expected(&self) -> String {
        format!("a mapping of child groups under `{}.children`", self.name)
    }
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let within = format!("{}.children", self.name);
        let mut seen = HashSet::new();
        while let Some(name) = map.next_key_seed(KeySeed {
            issue: &self.ctx.issue,
            seen: &mut seen,
            within: &within,
            allowed: None,
        })? {
            let child = map.next_value_seed(Shape(GroupDef {
                ctx: self.ctx,
                name,
            }))?;
            self.link::<A::Error>(child)?;
        }
        Ok(())
    }
    fn null<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn string<E: de::Error>(self, value: &str) -> Result<(), E> {
        let child = self.ctx.builder.borrow_mut().group(value);
        self.link(child)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::Inventory;
    use serde_json::json;

    fn load(text: &str) -> Result<Inventory, String> {
        let path = Path::new("hosts.yaml");
        let mut builder = Builder::new();
        parse(path, text, &mut builder).map_err(|e| e.to_string())?;
        builder
            .finish(Some(path.to_path_buf()), None)
            .map_err(|e| e.to_string())
    }

    fn names(inventory: &Inventory) -> Vec<&str> {
        inventory.hosts().iter().map(|h| h.name.as_str()).collect()
    }

    const KUBESPRAY: &str = "\
all:
  hosts:
    node1:
      ansible_host: 192.0.2.11
      ip: 192.0.2.11
    node2:
      ansible_host: 192.0.2.12
      ip: 192.0.2.12
    node3:
      ansible_host: 192.0.2.13
  children:
    kube_control_plane:
      hosts:
        node1:
    kube_node:
      hosts:
        node2:
        node3:
    etcd:
      hosts:
        node1:
    k8s_cluster:
      children:
        kube_control_plane:
        kube_node:
    calico_rr:
      hosts: {}
";

    #[test]
    fn reads_the_kubespray_shape() {
        let inv = load(KUBESPRAY).expect("loads");
        assert_eq!(names(&inv), ["node1", "node2", "node3"]);
        assert_eq!(
            inv.group_members("k8s_cluster"),
            Some(vec!["node1", "node2", "node3"])
        );
        assert_eq!(inv.group_members("calico_rr"), Some(vec![]));
        assert_eq!(inv.group_members("ungrouped"), Some(vec![]));
        let node1 = &inv.hosts()[0];
        assert_eq!(
            node1.groups,
            ["all", "etcd", "k8s_cluster", "kube_control_plane"]
        );
        assert_eq!(node1.var_str("ansible_host"), Some("192.0.2.11"));
    }

    #[test]
    fn top_level_groups_and_nulls_are_accepted() {
        // Old Kubespray samples list groups at the top level, all of them empty.
        let inv = load("---\nkube-master:\nkube-node:\n  hosts:\n    n1:\netcd:\n  hosts:\n")
            .expect("loads");
        assert_eq!(names(&inv), ["n1"]);
        // kube_node is Kubespray's dynamic group for the legacy kube-node.
        assert_eq!(inv.hosts()[0].groups, ["all", "kube-node", "kube_node"]);
        assert!(inv.group_names().contains(&"kube-master"));
        assert_eq!(load("").expect("empty").hosts().len(), 0);
    }

    #[test]
    fn a_host_listed_twice_merges_its_vars() {
        let inv = load(
            "all:\n  hosts:\n    n1: {a: 1, b: 1}\n  children:\n    g:\n      hosts:\n        n1: {b: 2, c: 2}\n        n2: \n",
        )
        .expect("loads");
        let vars = &inv.hosts()[0].vars;
        assert_eq!(vars.get("a"), Some(&json!(1)));
        assert_eq!(vars.get("b"), Some(&json!(2)));
        assert_eq!(vars.get("c"), Some(&json!(2)));
        assert_eq!(names(&inv), ["n1", "n2"]);
    }

    #[test]
    fn host_ranges_ports_and_string_sections() {
        let inv = load("all:\n  children:\n    kube_node:\n      hosts:\n        node[01:03]:2222:\n    etcd:\n      hosts: node01\n").expect("loads");
        assert_eq!(names(&inv), ["node01", "node02", "node03"]);
        assert_eq!(inv.hosts()[2].var("ansible_port"), Some(&json!(2222)));
        assert_eq!(inv.group_members("etcd"), Some(vec!["node01"]));
    }

    #[test]
    fn hosts_as_a_list_is_located() {
        let err = load(
            "all:\n  children:\n    kube_node:\n      hosts:\n        - node1\n        - node2\n",
        )
        .expect_err("a list is not hosts");
        assert_eq!(
            err,
            "hosts.yaml:5:9: expected a mapping of hosts under `kube_node.hosts`, found a list"
        );
    }

    #[test]
    fn structural_mistakes_are_errors_at_their_line() {
        let cases = [
            (
                "all:\n  host:\n    n1:\n",
                "hosts.yaml:2:3: unexpected key `host` in `all`: expected `hosts`, `vars`, `children`",
            ),
            (
                "all:\n  hosts:\n    n1:\n    n2:\n    n1:\n",
                "hosts.yaml:5:5: duplicate key `n1` in `all.hosts` (Ansible warns and keeps the last value): remove one",
            ),
            (
                "all:\n  vars:\n    a: 1\n    a: 2\n",
                "hosts.yaml:4:5: duplicate key `a` in `all.vars` (Ansible warns and keeps the last value): remove one",
            ),
            (
                "all:\n  children:\n    kube_node: [n1]\n",
                "hosts.yaml:3:16: expected group `kube_node` to be a mapping with `hosts`, `vars` and/or `children`, found a list",
            ),
            (
                "all:\n  hosts:\n    n1: 192.0.2.1\n",
                "hosts.yaml:3:9: expected a mapping of variables (or nothing) for host `n1` under `all.hosts`, found a string",
            ),
            (
                "all:\n  vars: [a]\n",
                "hosts.yaml:2:9: expected a mapping of variables under `all.vars`, found a list",
            ),
            (
                "- all\n",
                "hosts.yaml:1:1: expected a mapping of groups at the top level (such as `all:`), found a list",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(load(text).expect_err(text), want, "{text}");
        }
    }

    #[test]
    fn loops_bad_ranges_and_plugin_files_are_errors() {
        let err = load("a:\n  children:\n    b:\n      children:\n        a:\n").expect_err("loop");
        assert!(err.contains("creates a loop"), "{err}");
        assert!(err.starts_with("hosts.yaml:"), "{err}");

        let err = load("all:\n  hosts:\n    node[3:1]:\n").expect_err("bad range");
        assert!(err.starts_with("hosts.yaml:3:"), "{err}");
        assert!(
            err.contains("invalid host pattern `node[3:1]` in `all.hosts`"),
            "{err}"
        );

        let err = load("plugin: amazon.aws.aws_ec2\nregions: [x]\n").expect_err("plugin");
        assert!(
            err.contains("inventory plugin \"amazon.aws.aws_ec2\""),
            "{err}"
        );
    }

    #[test]
    fn syntax_errors_name_file_and_line() {
        let err = load("all:\n  hosts:\n    n1:\n   bad: indent\n").expect_err("syntax");
        assert!(err.starts_with("hosts.yaml:4:"), "{err}");
        assert!(err.contains("invalid YAML"), "{err}");
    }

    /// A host name without its colon (`node2` for `node2:`): libyaml notices at the next
    /// line that is not blank or a comment, which may be a screen further down; the line
    /// the mistake is on is the simple key's, which must be in the message too (as
    /// ansible-inventory, through PyYAML, prints "while scanning a simple key ... line 5").
    #[test]
    fn syntax_errors_keep_the_line_the_mistake_is_on() {
        let err = load(
            "all:\n  hosts:\n    node1:\n      ansible_host: 10.0.0.1\n    node2\n    # node3\n\n  children: {}\n",
        )
        .expect_err("missing colon");
        assert!(err.starts_with("hosts.yaml:6:"), "{err}");
        assert!(
            err.contains("while scanning a simple key at line 5 column 5"),
            "{err}"
        );
    }

    #[test]
    fn group_priority_is_not_a_variable() {
        let inv = load("all:\n  children:\n    a:\n      vars: {ansible_group_priority: 10, x: 1}\n      hosts: {n1: }\n").expect("loads");
        assert_eq!(inv.hosts()[0].var("ansible_group_priority"), None);
        let err = load("all:\n  children:\n    a:\n      vars: {ansible_group_priority: high}\n")
            .expect_err("bad priority");
        assert!(
            err.contains("expected an integer for `ansible_group_priority`"),
            "{err}"
        );
    }
}
