//! The k3s / RKE2 agent config file `/etc/rancher/{k3s,rke2}/config.yaml`: owns [`K3sConfig`].
//! Pure: it never touches the network or the filesystem; [`K3sConfig::parse`] takes the text.
//!
//! Semantics follow k3s `pkg/configfilearg/parser.go` `readConfigFile`: every top-level key is
//! a CLI flag name; a list value becomes one `--key=item` per item; a scalar is converted to a
//! string (numbers and booleans included); a key with a `+` suffix (`kubelet-arg+:`) appends to
//! the value so far instead of replacing it. k3s also merges `config.yaml.d/*.yaml` drop-ins the
//! same way; merging several files is the caller's job (parse each, apply in order). The YAML
//! is read as go-yaml v2 reads it into k3s's `yaml.MapSlice`: the first document only, a key
//! written twice as two entries, the later one replacing the earlier.
//!
//! Only the DNS-relevant keys are extracted: `resolv-conf` (what kubelet gets as
//! `--resolv-conf`; when absent k3s picks a file itself, see research B), `cluster-dns`, and the
//! `kubelet-arg` pass-through list, where `resolv-conf=/x` overrides both; and `node-name`,
//! the name the node registers under (which DNS pods are its own).

use serde::Serialize;
use serde_norway::Value;

use super::kubelet_config::{
    Located, TopLevel, load_first_entries, second_document_line, top_level_key_line,
    top_level_key_lines, value_kind,
};

/// Whether k3s reads `path` as a `config.yaml.d` drop-in: a name ending in `.yaml` or
/// `.yml` in any case (pkg/configfilearg `dotDFiles`: `util.HasSuffixI`).
pub fn is_dropin_name(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    name.ends_with(".yaml") || name.ends_with(".yml")
}

/// The DNS-relevant part of a k3s/RKE2 config file. An empty file gives all-`None`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub struct K3sConfig {
    /// `resolv-conf`.
    pub resolv_conf: Option<Located<String>>,
    /// `kubelet-arg` (plus `kubelet-arg+`) entries as written, e.g. `resolv-conf=/x` or
    /// `--max-pods=200`; each with the line of its list item (or of the key for a scalar).
    pub kubelet_args: Vec<Located<String>>,
    /// The file sets `kubelet-arg` or `kubelet-arg+` at all.
    pub sets_kubelet_args: bool,
    /// Every `kubelet-arg` key in the file is `kubelet-arg+`: merged over earlier files it
    /// appends rather than replaces (k3s `configfilearg`).
    pub kubelet_args_appended: bool,
    /// `cluster-dns`; a list value is joined with `,`, the form k3s's string-slice flag takes.
    pub cluster_dns: Option<Located<String>>,
    /// The keys of string slices (`cluster-dns`, `service-cidr`) the file sets only with
    /// `key+`: merged over earlier files they append to those files' value (configfilearg
    /// keeps one value per key across the files).
    pub appended: Vec<&'static str>,
    /// `cluster-domain`: a server's (pkg/cli/cmds/server.go, default cluster.local).
    pub cluster_domain: Option<Located<String>>,
    /// `service-cidr`, joined the same way: a server's default cluster-dns is the tenth
    /// address of each (pkg/cli/server/server.go).
    pub service_cidr: Option<Located<String>>,
    /// `node-name`: the name the node registers under (k3s `cmds.NodeNameFlag`).
    pub node_name: Option<Located<String>>,
    /// `with-node-id: true`: k3s adds the node's id to that name.
    pub with_node_id: bool,
    /// `container-runtime-endpoint`: a CRI socket k3s uses instead of its embedded
    /// containerd (pkg/cli/cmds/agent.go).
    pub container_runtime_endpoint: Option<Located<String>>,
    /// `docker`: `true` runs k3s's cri-dockerd instead of its containerd (its value as
    /// written, the last).
    pub docker: Option<Located<String>>,
    /// `data-dir`: where k3s keeps its state, the kubelet's generated files among them
    /// (default /var/lib/rancher/k3s; cmds.DataDirFlag).
    pub data_dir: Option<Located<String>>,
}

/// Why a k3s/RKE2 config file could not be read. k3s refuses to start on a file that is not
/// YAML or whose first document is not a mapping (`yaml.Unmarshal` into a `yaml.MapSlice`
/// fails); a mapping where a flag's value belongs it turns into text (wrangler's
/// `convert.ToString`) that no flag can use, so what the kubelet gets is not guessed at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "error", rename_all = "snake_case")]
pub enum K3sConfigError {
    #[error("k3s config is not valid yaml at line {line}, column {column}: {message}")]
    Yaml {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("k3s config document at line {line} is a {found}, not a mapping")]
    NotAMapping { found: &'static str, line: usize },
    #[error("k3s config key `{key}` at line {line} must be a string or a list, found {found}")]
    WrongType {
        key: String,
        line: usize,
        found: String,
    },
}

impl K3sConfig {
    /// Parses a k3s/RKE2 `config.yaml`. Other keys are ignored.
    pub fn parse(text: &str) -> Result<K3sConfig, K3sConfigError> {
        let entries = match load_first_entries(text) {
            Err(err) => {
                return Err(K3sConfigError::Yaml {
                    line: err.line,
                    column: err.column,
                    message: err.message,
                });
            }
            Ok(TopLevel::Empty) => return Ok(K3sConfig::default()),
            Ok(TopLevel::Mapping(entries)) => entries,
            Ok(TopLevel::Other { found, line }) => {
                return Err(K3sConfigError::NotAMapping { found, line });
            }
        };

        let text = first_document(text);
        let mut seen: Vec<&str> = Vec::new();
        let mut config = K3sConfig::default();
        // In file order, which matters: a plain key after a `+` key replaces, and so does a
        // key written again.
        for (key, value) in &entries {
            let Some(key) = key.as_str() else {
                continue;
            };
            let (name, append) = match key.strip_suffix('+') {
                Some(name) => (name, true),
                None => (key, false),
            };
            if !matches!(
                name,
                "resolv-conf"
                    | "cluster-dns"
                    | "service-cidr"
                    | "cluster-domain"
                    | "kubelet-arg"
                    | "node-name"
                    | "with-node-id"
                    | "data-dir"
                    | "container-runtime-endpoint"
                    | "docker"
            ) {
                continue;
            }
            seen.push(key);
            let key_line = key_line(text, key, &seen);
            let mut items = items(value).map_err(|found| K3sConfigError::WrongType {
                key: key.to_string(),
                line: key_line,
                found,
            })?;
            // A string flag written with no value (`resolv-conf:`) is still passed, empty
            // (`--resolv-conf=`: configfilearg's convert.ToString(nil)): it replaces an earlier
            // file's value and outranks the K3S_* variable, and k3s reads "" as unset.
            if value.is_null()
                && !append
                && matches!(
                    name,
                    "resolv-conf"
                        | "node-name"
                        | "data-dir"
                        | "container-runtime-endpoint"
                        | "cluster-domain"
                )
            {
                items = vec![String::new()];
            }
            match name {
                "kubelet-arg" => {
                    let located = locate_items(text, key_line, items, value.is_sequence());
                    config.kubelet_args_appended =
                        append && (config.kubelet_args_appended || !config.sets_kubelet_args);
                    config.sets_kubelet_args = true;
                    if !append {
                        config.kubelet_args.clear();
                    }
                    config.kubelet_args.extend(located);
                }
                "cluster-dns" => {
                    config.mark_appended("cluster-dns", append);
                    config.cluster_dns = join_scalar(config.cluster_dns.take(), items, append)
                        .map(|joined| Located::new(joined, key_line));
                }
                "service-cidr" => {
                    config.mark_appended("service-cidr", append);
                    config.service_cidr = join_scalar(config.service_cidr.take(), items, append)
                        .map(|joined| Located::new(joined, key_line));
                }
                "docker" => {
                    config.docker = last_value(config.docker.take(), items, (append, key_line))
                }
                "with-node-id" => {
                    config.with_node_id = items.last().is_some_and(|v| v == "true");
                }
                "node-name" => {
                    config.node_name =
                        last_value(config.node_name.take(), items, (append, key_line))
                }
                "data-dir" => {
                    config.data_dir = last_value(config.data_dir.take(), items, (append, key_line))
                }
                "container-runtime-endpoint" => {
                    config.container_runtime_endpoint = last_value(
                        config.container_runtime_endpoint.take(),
                        items,
                        (append, key_line),
                    )
                }
                "cluster-domain" => {
                    config.cluster_domain =
                        last_value(config.cluster_domain.take(), items, (append, key_line));
                }
                _ => {
                    config.resolv_conf =
                        last_value(config.resolv_conf.take(), items, (append, key_line))
                }
            }
        }
        Ok(config)
    }

    /// Records one more assignment of the string slice `key` (`key+` when `append`): the
    /// file appends to the earlier files' value while it has set `key` only with `key+`.
    fn mark_appended(&mut self, key: &'static str, append: bool) {
        let set_before = match key {
            "cluster-dns" => self.cluster_dns.is_some(),
            _ => self.service_cidr.is_some(),
        };
        let appends = self.appended.contains(&key);
        self.appended.retain(|k| *k != key);
        if append && (appends || !set_before) {
            self.appended.push(key);
        }
    }

    /// The value kubelet gets for `name` through `kubelet-arg`, e.g. `kubelet_arg("resolv-conf")`
    /// for `kubelet-arg: [resolv-conf=/etc/k8s-resolv.conf]`. k3s strips a leading `--` and the
    /// last occurrence wins (k3s `pkg/daemons/agent` builds a map from these, then flags); an
    /// entry `name+=` counts as `name=` does ([`kubelet_arg_value`]).
    pub fn kubelet_arg(&self, name: &str) -> Option<Located<String>> {
        self.kubelet_args.iter().rev().find_map(|arg| {
            let value = kubelet_arg_value(&arg.value, name)?;
            Some(Located::new(value.to_string(), arg.line))
        })
    }
}

/// What a `kubelet-arg` entry does to the kubelet's one-value flag `name`. k3s's `GetArgs`
/// (k3s-io/k3s@291086171b pkg/util/args.go) takes a leading `--` away
/// (`strings.TrimPrefix(arg, "--")`), and a `+` or `-` after the name
/// (`strings.TrimRight(arg, "-+")`), and keeps every value of the name in a list it passes
/// as flags in order, the last of which the kubelet keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KubeletArg<'a> {
    /// `name=` or `name+=`: appends its value to that list, so it is the value while no
    /// later such entry sets the name.
    Sets(&'a str),
    /// `name-=`: puts its value before the others, so it comes last only where nothing else
    /// is in the list: no other entry, and no value of k3s's own (before v1.32 k3s passed
    /// its resolv.conf as that flag; from v1.32 in its kubelet config drop-in). Of several
    /// such entries alone, the first is last.
    Prepends(&'a str),
    /// Written with one dash (or three): `GetArgs` takes away only `--`, so the kubelet gets
    /// `---name=...`, which its flag parser refuses ("bad flag syntax": spf13/pflag@a750a0e7
    /// flag.go `parseLongArg`, a name that starts with `-`), and it does not start.
    Refused,
}

/// What the `kubelet-arg` entry `arg` does to the kubelet's flag `name`, where it names it.
pub(crate) fn kubelet_arg_entry<'a>(arg: &'a str, name: &str) -> Option<KubeletArg<'a>> {
    let stripped = arg.strip_prefix("--").unwrap_or(arg);
    let (key, value) = stripped.split_once('=')?;
    if key.trim_start_matches('-').trim_end_matches(['-', '+']) != name {
        return None;
    }
    // GetArgs looks at the last character: `+` appends, `-` prepends (`name+-=` too).
    Some(if key.starts_with('-') {
        KubeletArg::Refused
    } else if key.ends_with('-') {
        KubeletArg::Prepends(value)
    } else {
        KubeletArg::Sets(value)
    })
}

/// The value of a `kubelet-arg` entry that sets the kubelet's one-value flag `name`, where it
/// does ([`KubeletArg::Sets`]): `name=` or `name+=`, not `name-=`, nor one the kubelet refuses.
pub(crate) fn kubelet_arg_value<'a>(arg: &'a str, name: &str) -> Option<&'a str> {
    match kubelet_arg_entry(arg, name)? {
        KubeletArg::Sets(value) => Some(value),
        KubeletArg::Prepends(_) | KubeletArg::Refused => None,
    }
}

/// The text of `text`'s first document, the one k3s reads, where key lines are looked for.
fn first_document(text: &str) -> &str {
    match second_document_line(text) {
        Some(line) => &text[..text.split('\n').take(line - 1).map(|l| l.len() + 1).sum()],
        None => text,
    }
}

/// The line of the entry of `key` that is the last of `seen` (the keys read so far): a key
/// written more than once has its n-th entry on the n-th line that starts with it.
fn key_line(text: &str, key: &str, seen: &[&str]) -> usize {
    let nth = seen.iter().filter(|k| **k == key).count().saturating_sub(1);
    top_level_key_lines(text, key)
        .get(nth)
        .copied()
        .unwrap_or_else(|| top_level_key_line(text, key))
}

/// The strings a config value stands for, converted the way k3s's `convert.ToString` does.
/// A mapping or a tagged value (or a list holding one) cannot become a flag: the error names
/// what was found.
fn items(value: &Value) -> Result<Vec<String>, String> {
    match value {
        Value::Sequence(seq) => seq
            .iter()
            .map(|item| {
                scalar_string(item)
                    .ok_or_else(|| format!("a list item that is a {}", value_kind(item)))
            })
            .collect(),
        // A null (`kubelet-arg:`) contributes nothing rather than one empty argument.
        Value::Null => Ok(Vec::new()),
        other => scalar_string(other)
            .map(|s| vec![s])
            .ok_or_else(|| value_kind(other).to_string()),
    }
}

fn scalar_string(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => Some(String::new()),
        Value::Sequence(_) | Value::Mapping(_) | Value::Tagged(_) => None,
    }
}

/// A string flag's setting (`resolv-conf`, `node-name`, `data-dir`) after one more
/// assignment: configfilearg passes each item of a list, or of `key+` after the key, as a
/// flag of its own, and the last one wins; no item (`key:` with no value) leaves it unset.
fn last_value(
    old: Option<Located<String>>,
    items: Vec<String>,
    (append, key_line): (bool, usize),
) -> Option<Located<String>> {
    match items.into_iter().last() {
        Some(v) => Some(Located::new(v, key_line)),
        None if append => old,
        None => None,
    }
}

/// A string-slice setting after one more assignment: replaced, or appended with `,` for
/// `key+`.
fn join_scalar(old: Option<Located<String>>, items: Vec<String>, append: bool) -> Option<String> {
    let mut parts: Vec<String> = match old {
        Some(old) if append => vec![old.value],
        _ => Vec::new(),
    };
    parts.extend(items);
    (!parts.is_empty()).then(|| parts.join(","))
}

/// Gives each list item the line it appears on: the first line at or after the previous item's
/// line that contains the item's text (block lists put one item per line; flow lists share the
/// key's line). Falls back to the key's line, e.g. for items written with escapes.
fn locate_items(
    text: &str,
    key_line: usize,
    items: Vec<String>,
    is_list: bool,
) -> Vec<Located<String>> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut cursor = key_line.saturating_sub(1);
    items
        .into_iter()
        .map(|item| {
            if !is_list || item.is_empty() {
                return Located::new(item, key_line);
            }
            let found = lines
                .iter()
                .enumerate()
                .skip(cursor)
                .find(|(_, line)| line.contains(item.as_str()))
                .map(|(index, _)| index);
            match found {
                Some(index) => {
                    // A block item owns its line, so the next item starts below it.
                    let block_item = lines[index].trim_start().starts_with('-');
                    cursor = if block_item { index + 1 } else { index };
                    Located::new(item, index + 1)
                }
                None => Located::new(item, key_line),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn located(value: &str, line: usize) -> Located<String> {
        Located::new(value.to_string(), line)
    }

    #[test]
    fn rke2_server_config() {
        // /etc/rancher/rke2/config.yaml on a server with a dedicated resolv file.
        let text = "# managed by terraform\n\
                    token: K10abc::server:def\n\
                    tls-san:\n  - rke2.example.com\n\
                    resolv-conf: /etc/rancher/rke2/resolv.conf\n\
                    cluster-dns: 10.43.0.10\n\
                    kubelet-arg:\n  - \"max-pods=200\"\n  - resolv-conf=/run/systemd/resolve/resolv.conf\n";
        let config = K3sConfig::parse(text).expect("parses");
        assert_eq!(
            config.resolv_conf,
            Some(located("/etc/rancher/rke2/resolv.conf", 5))
        );
        assert_eq!(config.cluster_dns, Some(located("10.43.0.10", 6)));
        assert_eq!(
            config.kubelet_args,
            vec![
                located("max-pods=200", 8),
                located("resolv-conf=/run/systemd/resolve/resolv.conf", 9)
            ]
        );
        assert_eq!(
            config.kubelet_arg("resolv-conf"),
            Some(located("/run/systemd/resolve/resolv.conf", 9))
        );
        assert_eq!(config.kubelet_arg("cluster-dns"), None);
    }

    /// go-yaml v2, which k3s reads its config files with (into a `yaml.MapSlice`,
    /// pkg/configfilearg/parser.go @ f646604), keeps a key written twice as two entries (it
    /// refuses repeated keys only in strict mode), and configfilearg's merge lets the later
    /// entry replace the earlier one: k3s starts with the last value. A file that had lines
    /// appended to it has such keys.
    #[test]
    fn a_key_written_twice_takes_its_last_value() {
        let text = "resolv-conf: /etc/old-resolv.conf\n\
                    kubelet-arg:\n- resolv-conf=/etc/old-resolv.conf\n\
                    # appended by the node's bootstrap\n\
                    resolv-conf: /etc/k3s-resolv.conf\n\
                    kubelet-arg:\n- max-pods=200\n\
                    kubelet-arg+:\n- v=2\n";
        let config = K3sConfig::parse(text).expect("parses");
        assert_eq!(config.resolv_conf, Some(located("/etc/k3s-resolv.conf", 5)));
        assert_eq!(
            config.kubelet_args,
            vec![located("max-pods=200", 7), located("v=2", 9)]
        );
        assert_eq!(config.kubelet_arg("resolv-conf"), None);
        assert!(!config.kubelet_args_appended);
    }

    /// `yaml.Unmarshal` decodes the first document of a file and never reads on: what comes
    /// after a `---` there is not k3s's config, whatever it says.
    #[test]
    fn only_the_first_document_counts() {
        let config = K3sConfig::parse(
            "resolv-conf: /a\n---\nresolv-conf: /b\nkubelet-arg: [resolv-conf=/c]\n",
        )
        .expect("parses");
        assert_eq!(config.resolv_conf, Some(located("/a", 1)));
        assert!(config.kubelet_args.is_empty());
        let config = K3sConfig::parse("---\nresolv-conf: /a\n---\n").expect("parses");
        assert_eq!(config.resolv_conf, Some(located("/a", 2)));
        let config = K3sConfig::parse("---\n---\nresolv-conf: /a\n").expect("parses");
        assert_eq!(config, K3sConfig::default());
    }

    #[test]
    fn empty_and_comment_only_files_are_all_none() {
        assert_eq!(K3sConfig::parse(""), Ok(K3sConfig::default()));
        assert_eq!(
            K3sConfig::parse("# write-kubeconfig-mode: \"0644\"\n"),
            Ok(K3sConfig::default())
        );
        assert_eq!(K3sConfig::parse("{}\n"), Ok(K3sConfig::default()));
    }

    #[test]
    fn kubelet_arg_as_a_single_string() {
        let config = K3sConfig::parse("kubelet-arg: \"--resolv-conf=/etc/k3s-resolv.conf\"\n")
            .expect("parses");
        assert_eq!(
            config.kubelet_args,
            vec![located("--resolv-conf=/etc/k3s-resolv.conf", 1)]
        );
        assert_eq!(
            config.kubelet_arg("resolv-conf"),
            Some(located("/etc/k3s-resolv.conf", 1))
        );
    }

    #[test]
    fn flow_list_items_share_the_key_line() {
        let text = "node-name: a\nkubelet-arg: [v=2, resolv-conf=/x, v=2]\n";
        let config = K3sConfig::parse(text).expect("parses");
        let lines: Vec<_> = config.kubelet_args.iter().map(|a| a.line).collect();
        assert_eq!(lines, [2, 2, 2]);
    }

    #[test]
    fn repeated_block_items_get_their_own_lines() {
        let text = "kubelet-arg:\n- v=2\n- v=2\n";
        let config = K3sConfig::parse(text).expect("parses");
        let lines: Vec<_> = config.kubelet_args.iter().map(|a| a.line).collect();
        assert_eq!(lines, [2, 3]);
    }

    #[test]
    fn plus_suffix_appends_plain_key_replaces() {
        let text = "kubelet-arg:\n- v=2\nkubelet-arg+:\n- resolv-conf=/a\ncluster-dns: 10.43.0.10\ncluster-dns+: fd00::10\n";
        let config = K3sConfig::parse(text).expect("parses");
        assert_eq!(
            config.kubelet_args,
            vec![located("v=2", 2), located("resolv-conf=/a", 4)]
        );
        assert_eq!(config.cluster_dns, Some(located("10.43.0.10,fd00::10", 6)));

        let text = "kubelet-arg+: [v=2]\nkubelet-arg: [resolv-conf=/b]\n";
        let config = K3sConfig::parse(text).expect("parses");
        assert_eq!(config.kubelet_args, vec![located("resolv-conf=/b", 2)]);
    }

    /// configfilearg passes every item of a string flag's list, and a `key+` after the
    /// key, as flags of their own (`--resolv-conf=/a --resolv-conf=/b`): the last wins.
    /// service-cidr is a string slice, like cluster-dns.
    #[test]
    fn string_flags_take_their_last_value_slices_join() {
        let text = "resolv-conf: /a\nresolv-conf+: /b\ndata-dir: [/x, /y]\nservice-cidr: 10.50.0.0/16\nservice-cidr+: [fd00:50::/112]\n";
        let config = K3sConfig::parse(text).expect("parses");
        assert_eq!(config.resolv_conf, Some(located("/b", 2)));
        assert_eq!(config.data_dir, Some(located("/y", 3)));
        assert_eq!(
            config.service_cidr,
            Some(located("10.50.0.0/16,fd00:50::/112", 5))
        );
        let config = K3sConfig::parse("node-name: a\nnode-name+:\n").expect("parses");
        assert_eq!(config.node_name, Some(located("a", 1)));
    }

    #[test]
    fn cluster_dns_list_is_joined() {
        let config =
            K3sConfig::parse("cluster-dns:\n- 10.43.0.10\n- 2001:cafe:43::a\n").expect("parses");
        assert_eq!(
            config.cluster_dns,
            Some(located("10.43.0.10,2001:cafe:43::a", 1))
        );
    }

    #[test]
    fn scalars_are_stringified_and_null_is_empty() {
        let config = K3sConfig::parse("kubelet-arg: 5\nresolv-conf:\n").expect("parses");
        assert_eq!(config.kubelet_args, vec![located("5", 1)]);
        // `resolv-conf:` with no value: k3s passes an empty string (`--resolv-conf=`), set
        // over an earlier file's value, which it then treats as unset.
        assert_eq!(config.resolv_conf, Some(located("", 2)));
        let config = K3sConfig::parse("resolv-conf: /a\nresolv-conf+:\n").expect("parses");
        assert_eq!(config.resolv_conf, Some(located("/a", 1)));
    }

    #[test]
    fn mapping_value_is_an_error() {
        let err = K3sConfig::parse("resolv-conf:\n  path: /x\n").expect_err("mapping");
        assert_eq!(
            err.to_string(),
            "k3s config key `resolv-conf` at line 1 must be a string or a list, found mapping"
        );
    }

    #[test]
    fn list_of_mappings_is_an_error() {
        let err = K3sConfig::parse("kubelet-arg:\n- resolv-conf: /x\n").expect_err("nested");
        assert_eq!(
            err.to_string(),
            "k3s config key `kubelet-arg` at line 1 must be a string or a list, \
             found a list item that is a mapping"
        );
    }

    #[test]
    fn malformed_yaml_and_non_mapping() {
        let err = K3sConfig::parse("resolv-conf: /x\n\tkubelet-arg: v=2\n").expect_err("tab");
        assert!(
            matches!(err, K3sConfigError::Yaml { line: 2, .. }),
            "{err:?}"
        );
        let err = K3sConfig::parse("- resolv-conf=/x\n").expect_err("list");
        assert_eq!(
            err,
            K3sConfigError::NotAMapping {
                found: "sequence",
                line: 1
            }
        );
    }

    #[test]
    fn drop_ins_are_named_yaml_or_yml_in_any_case() {
        for (name, read) in [
            ("/etc/rancher/k3s/config.yaml.d/a.yaml", true),
            ("/etc/rancher/k3s/config.yaml.d/b.YML", true),
            ("/etc/rancher/k3s/config.yaml.d/c.Yaml", true),
            ("/etc/rancher/k3s/config.yaml.d/d.yaml.bak", false),
            ("/etc/rancher/k3s/config.yaml.d/yaml", false),
        ] {
            assert_eq!(is_dropin_name(name), read, "{name}");
        }
    }

    /// k3s's `GetArgs` (pkg/util/args.go) takes a leading `--` away and reads the last
    /// character of the name: `+` appends, `-` prepends; one dash (or three) is left on, and
    /// the kubelet refuses the flag.
    #[test]
    fn kubelet_arg_entries_as_get_args_reads_them() {
        for (arg, entry) in [
            ("resolv-conf=/a", Some(KubeletArg::Sets("/a"))),
            ("--resolv-conf=/a", Some(KubeletArg::Sets("/a"))),
            ("resolv-conf+=/a", Some(KubeletArg::Sets("/a"))),
            ("resolv-conf-=/a", Some(KubeletArg::Prepends("/a"))),
            ("--resolv-conf+-=/a", Some(KubeletArg::Prepends("/a"))),
            ("-resolv-conf=/a", Some(KubeletArg::Refused)),
            ("---resolv-conf=/a", Some(KubeletArg::Refused)),
            ("resolv-conf", None),
            ("max-pods=200", None),
        ] {
            assert_eq!(kubelet_arg_entry(arg, "resolv-conf"), entry, "{arg}");
        }
        let config =
            K3sConfig::parse("kubelet-arg: [resolv-conf=/a, -resolv-conf=/b]\n").expect("parses");
        assert_eq!(config.kubelet_arg("resolv-conf"), Some(located("/a", 1)));
    }
}
