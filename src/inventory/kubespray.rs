//! Kubespray's dynamic groups: the groups every Kubespray playbook adds at run time with
//! `group_by` before anything else (`roles/dynamic_groups/tasks/main.yml`, "Match needed
//! groups by their old names or definition", which `playbooks/boilerplate.yml` runs first;
//! older releases had the task in boilerplate.yml itself), so that dnsfix sees the groups —
//! and therefore the `group_vars/` — that Kubespray sees.
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

use std::path::Path;

use serde_json::Value;

use super::host::Host;
use super::origin::{VarOrigin, VarScope};
use super::ssh_args::{shell_in_host, shell_in_user};
use super::warning::InventoryWarning;

/// `group_mappings` from Kubespray's roles/dynamic_groups/tasks/main.yml (which
/// playbooks/boilerplate.yml runs first), in its order.
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

/// Where Kubespray sets its bastion default (`ansible_ssh_common_args`), and the line.
pub(crate) const BASTION_DEFAULT: (&str, usize) =
    ("roles/kubespray_defaults/defaults/main/main.yml", 4);

/// Kubespray's bastion (docs/ansible/ansible.md, "Bastion host"): when the inventory has a
/// host called `bastion`, every host gets, as a role default (so only where the inventory
/// leaves `ansible_ssh_common_args` unset), a ProxyCommand through it:
///
/// ```text
/// ansible_ssh_common_args: "{% if 'bastion' in groups['all'] %} -o ProxyCommand='ssh -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no -W %h:%p -p {{ hostvars['bastion']['ansible_port'] | default(22) }} {{ hostvars['bastion']['ansible_user'] }}@{{ hostvars['bastion']['ansible_host'] }} {% if ansible_ssh_private_key_file is defined %}-i {{ ansible_ssh_private_key_file }}{% endif %} ' {% endif %}"
/// ```
///
/// This renders it for each host but the bastion (which Kubespray's DNS plays never run
/// on, see [`bastion_only`]), with the bastion's values as the inventory sets them, and
/// with `-o BatchMode=yes` for the ssh to the bastion, which Kubespray's leaves out: the
/// outer ssh's batch mode does not reach it, and a bastion that refused the key would ask
/// for a password on the operator's terminal, once per fork (dnsfix never prompts). A part
/// Ansible could not render (the bastion has no `ansible_user` or `ansible_host`: Ansible
/// fails on the undefined variable) is left as its template, which the connection then
/// refuses as one dnsfix does not render; so is a part dnsfix will not hand a shell
/// ([`bastion_refusal`]), with a warning at the bastion's line saying why.
pub(crate) fn bastion_args(hosts: &mut [Host]) -> Vec<InventoryWarning> {
    let Some(bastion) = hosts.iter().find(|h| h.name == "bastion") else {
        return Vec::new();
    };
    let mut warnings = Vec::new();
    let mut rendered = |key: &str, default: Option<&str>| {
        let template = format!("{{{{ hostvars['bastion']['{key}'] }}}}");
        let Some(value) = bastion.var(key).map(jinja_string) else {
            return default.map_or(template, str::to_owned);
        };
        match bastion_refusal(key, &value) {
            None => shell_word(&value),
            Some(why) => {
                if let Some(origin) = bastion.origins.get(key) {
                    warnings.push(InventoryWarning {
                        path: origin.path.clone(),
                        line: origin.line,
                        message: format!(
                            "the bastion's {key} {} {why}: Kubespray's ProxyCommand through it \
                             is left unrendered, and the hosts behind it are refused",
                            crate::text::escape(&value)
                        ),
                    });
                }
                template
            }
        }
    };
    let port = rendered("ansible_port", Some("22"));
    let user = rendered("ansible_user", None);
    let address = rendered("ansible_host", None);
    let (file, line) = BASTION_DEFAULT;
    let origin = VarOrigin::new(Path::new(file), Some(line), VarScope::KubesprayDefault);
    for host in hosts.iter_mut() {
        if host.name == "bastion" || host.vars.contains_key("ansible_ssh_common_args") {
            continue;
        }
        // The host's own key, as Kubespray's template has it; the outer ssh refuses a key
        // path with a quote, a backslash or whitespace (openssh.rs literal_path).
        let key = host
            .var("ansible_ssh_private_key_file")
            .map(|k| format!("-i {}", shell_word(&jinja_string(k))))
            .unwrap_or_default();
        let command = format!(
            "ssh -o BatchMode=yes -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no -W %h:%p -p {port} {user}@{address} {key} "
        );
        let value = format!(" -o ProxyCommand={} ", shell_word(&command));
        host.vars
            .insert("ansible_ssh_common_args".into(), value.into());
        host.origins
            .insert("ansible_ssh_common_args".into(), origin.clone());
    }
    warnings
}

/// Whether a variable was set by [`bastion_args`] (Kubespray's role default).
pub(crate) fn is_bastion_default(origin: &VarOrigin) -> bool {
    origin.scope == VarScope::KubesprayDefault && origin.path == Path::new(BASTION_DEFAULT.0)
}

/// Why the bastion's `key` (`ansible_port`, `_user`, `_host`) set to `value` is not put
/// into the ProxyCommand, if so: a port that is not a number; a user or address ssh
/// would refuse as a target's (whitespace, a control character, one the shell gives
/// meaning to: [`shell_in_user`], [`shell_in_host`]; a `-` first), which the inner ssh
/// gets as its destination and hands its own ProxyCommand or Match exec (`%h`, `%r`)
/// before OpenSSH 9.6; a `%`, which ssh expands in a ProxyCommand; a `\`, which the
/// operator's shell runs it with (`$SHELL -c`) may read as an escape inside quotes (fish
/// does).
fn bastion_refusal(key: &str, value: &str) -> Option<String> {
    if key == "ansible_port" {
        let number = value.parse::<u16>().is_ok_and(|p| p > 0);
        return (!number).then(|| "is not a port number".to_owned());
    }
    let held = value
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || "%\\".contains(*c))
        .map(|c| format!("{c:?}"))
        .or_else(|| match key {
            "ansible_user" => shell_in_user(value),
            // The inner ssh has no `--` before it: an option (OpenSSH 9.6 refuses it).
            _ if value.starts_with('-') => Some("a '-' at its start".to_owned()),
            _ => shell_in_host(value),
        })?;
    Some(format!("holds {held}"))
}

/// `text` as one word of a POSIX shell: as it is where it holds nothing the shell gives
/// meaning to (the usual bastion address, user, port and key path, so the line reads as
/// Kubespray's), else in single quotes. Kubespray's template puts the bastion's values
/// into the ProxyCommand as they are, and the shell ssh runs it with would run a
/// `b;touch /tmp/p` of a hostile inventory's `ansible_host`; here it is only a name that
/// does not resolve. The whole command is quoted the same way for the split of
/// `ansible_ssh_common_args` (Python's shlex, POSIX).
fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./_-".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\"'\"'"))
    }
}

/// A value as `{{ value }}` prints it.
fn jinja_string(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        other => other.to_string(),
    }
}

/// A Kubespray bastion rather than a node: the host `bastion`, or a host of the group
/// `bastion`, that is in no other group. Kubespray's plays that touch DNS run on
/// `k8s_cluster`, `etcd` and `calico_rr`; only `Install bastion ssh config`
/// (`hosts: bastion[0]`, playbooks/boilerplate.yml) runs on the bastion.
pub(crate) fn bastion_only(host: &Host) -> bool {
    let named = host.name == "bastion" || host.groups.iter().any(|g| g == "bastion");
    named
        && host
            .groups
            .iter()
            .all(|g| matches!(g.as_str(), "all" | "ungrouped" | "bastion"))
}
