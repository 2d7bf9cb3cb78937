//! [`Connection`]: how to reach a host, derived from its Ansible connection variables. This is
//! the only place that knows those variable names and their aliases, so the transports never
//! read inventory variables themselves.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::host::{Host, is_template, scalar_string, truthy};
use super::ssh_args;

/// How dnsfix talks to a host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionKind {
    /// Over SSH (the transport decides whether that is the system ssh or russh).
    Ssh,
    /// Commands run on the machine dnsfix runs on.
    Local,
}

/// The connection settings of one host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connection {
    /// `ansible_connection`: `local` (also `ansible.builtin.local`, `ansible.legacy.local`)
    /// is [`ConnectionKind::Local`]. Everything else, including `ssh`, `paramiko`, `smart`,
    /// an absent value and plugins dnsfix has no transport for (`docker`, `winrm`, ...), is
    /// [`ConnectionKind::Ssh`]: SSH is the only remote transport dnsfix has, and a host it
    /// cannot reach that way fails at connect time with the real error.
    pub kind: ConnectionKind,
    /// `ansible_ssh_host`, else `ansible_host`, else the inventory name. (Ansible's ssh plugin
    /// lets the `ansible_ssh_*` spelling win when both are set; so does dnsfix.)
    pub address: String,
    /// `ansible_ssh_port`, else `ansible_port`; `None` when unset or not a valid port number
    /// (e.g. a template), leaving the default to ssh and ~/.ssh/config.
    pub port: Option<u16>,
    /// `ansible_ssh_user`, else `ansible_user`.
    pub user: Option<String>,
    /// `ansible_ssh_private_key_file`, else `ansible_private_key_file`. A leading `~/` is
    /// expanded against `$HOME`; a relative path is resolved against the current directory,
    /// as Ansible leaves it to ssh, which opens it there (the inventory warns when the file
    /// is missing there but exists relative to the inventory). `~user/` forms are left to
    /// ssh.
    pub private_key: Option<PathBuf>,
    /// `ansible_become` is truthy: commands need root through `sudo -n`.
    pub become_root: bool,
    /// `ansible_become_method` where it names another method than sudo (`su`, `doas`,
    /// `pbrun`, ...), as "`ansible_become_method` (where) is \"su\"", for messages: dnsfix
    /// becomes root only through `sudo -n`, which never prompts, so a sudo that fails on such
    /// a host says why it was not the method the inventory asks for.
    pub become_method: Option<String>,
    /// `ansible_ssh_args`, then `ansible_ssh_common_args`, then `ansible_ssh_extra_args`,
    /// in the order Ansible's ssh plugin adds them (`_build_command`) and split as it splits
    /// them: options for the system ssh, given before the destination. Only the openssh
    /// backend can use them. (`ansible_ssh_args` replaces Ansible's own default options,
    /// `-C -o ControlMaster=auto -o ControlPersist=60s`; dnsfix sets its master first.)
    pub ssh_args: Vec<String>,
    /// Which variables set [`Connection::ssh_args`], and where: for messages.
    pub ssh_args_from: Vec<String>,
    /// Why dnsfix will not connect to this host: a connection variable it cannot use as
    /// Ansible would, named with the file that set it. The host fails at connect time with
    /// this message; the other hosts go on.
    pub refused: Option<String>,
}

impl Connection {
    pub(crate) fn from_host(host: &Host) -> Connection {
        let kind = match host.var_str("ansible_connection").map(str::trim) {
            Some("local" | "ansible.builtin.local" | "ansible.legacy.local") => {
                ConnectionKind::Local
            }
            _ => ConnectionKind::Ssh,
        };
        let address = first_string(host, &["ansible_ssh_host", "ansible_host"])
            .unwrap_or_else(|| host.name.clone());
        let port = ["ansible_ssh_port", "ansible_port"]
            .iter()
            .find_map(|key| host.var(key))
            .and_then(port_number);
        let user = first_string(host, &["ansible_ssh_user", "ansible_user"]);
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let cwd = std::env::current_dir().ok();
        let private_key = first_string(host, KEY_VARIABLES)
            .map(|raw| resolve_key_path(&raw, home.as_deref(), cwd.as_deref()));
        let become_root = host.var("ansible_become").and_then(truthy).unwrap_or(false);
        let become_method = other_become_method(host);
        let mut refused = match kind {
            ConnectionKind::Ssh => unrendered(host),
            ConnectionKind::Local => None,
        };
        let mut ssh_args = Vec::new();
        let mut ssh_args_from = Vec::new();
        for key in [
            "ansible_ssh_args",
            "ansible_ssh_common_args",
            "ansible_ssh_extra_args",
        ] {
            let Some(text) = host.var(key).and_then(scalar_string) else {
                continue;
            };
            let args = if is_template(&text) {
                let bastion = host
                    .origins
                    .get(key)
                    .is_some_and(super::kubespray::is_bastion_default);
                Err(if bastion {
                    "is Kubespray's ProxyCommand through the bastion, with a part dnsfix does \
                     not render: the bastion's ansible_host or ansible_user is unset, or it or \
                     its ansible_port was refused (a warning names its line)"
                        .to_owned()
                } else {
                    format!(
                        "is {text:?}, a template dnsfix does not render; set the options it \
                         renders to"
                    )
                })
            } else {
                ssh_args::split(&text)
            };
            let args = args.and_then(|args| {
                if key == "ansible_ssh_args" {
                    ssh_args::check_first(&args)?;
                } else {
                    ssh_args::check(&args)?;
                }
                Ok(args)
            });
            match args {
                Ok(args) if args.is_empty() => {}
                Ok(args) => {
                    ssh_args.extend(args);
                    ssh_args_from.push(named(host, key));
                }
                Err(why) => {
                    refused.get_or_insert_with(|| {
                        format!("host `{}`: {} {why}", host.name, named(host, key))
                    });
                }
            }
        }
        Connection {
            kind,
            address,
            port,
            user,
            private_key,
            become_root,
            become_method,
            ssh_args,
            ssh_args_from,
            refused,
        }
    }
}

/// `ansible_become_method` where it is set to a method other than sudo, described for
/// messages. Ansible names its sudo plugin `sudo`, `ansible.builtin.sudo` or
/// `ansible.legacy.sudo`; an unset or empty value is sudo, Ansible's default.
fn other_become_method(host: &Host) -> Option<String> {
    let key = "ansible_become_method";
    let method = first_string(host, &[key])?;
    if matches!(
        method.as_str(),
        "sudo" | "ansible.builtin.sudo" | "ansible.legacy.sudo"
    ) {
        return None;
    }
    Some(format!("{} is {method:?}", named(host, key)))
}

/// The connection variables whose value says where and as whom to connect; each list
/// in the order [`Connection::from_host`] reads the aliases.
const CONNECTION_VARIABLES: &[&[&str]] = &[
    &["ansible_ssh_host", "ansible_host"],
    &["ansible_ssh_port", "ansible_port"],
    &["ansible_ssh_user", "ansible_user"],
    &["ansible_ssh_private_key_file", "ansible_private_key_file"],
];

/// Why a host whose address, port, user or key is a template dnsfix does not render (a
/// filter, a variable the inventory does not define: `"{{ hostvars[x].ip }}"`, an inline
/// `!vault` value) is refused: Ansible would connect to what it renders, dnsfix would
/// connect to the literal text, or as someone else, or with another key.
fn unrendered(host: &Host) -> Option<String> {
    CONNECTION_VARIABLES.iter().find_map(|keys| {
        let (key, value) = keys.iter().find_map(|key| {
            let value = host.var(key).and_then(scalar_string)?;
            (!value.trim().is_empty()).then_some((*key, value))
        })?;
        if !is_template(&value) {
            return None;
        }
        // `!unsafe` text is what Ansible itself uses, `{{ }}` and all: no address, port,
        // user or key file is spelt that way.
        Some(if host.origins.get(key).is_some_and(|o| o.literal) {
            format!(
                "host `{}`: {} is {value:?}, tagged `!unsafe`: Ansible does not render it and would connect to (or as) its literal text too; refused: write the value itself",
                host.name,
                named(host, key)
            )
        } else {
            format!(
                "host `{}`: {} is {value:?}, a template dnsfix does not render; refused rather than connect to (or as) its literal text: set the value it renders to",
                host.name,
                named(host, key)
            )
        })
    })
}

/// `` `key` `` with where it was set (`group_vars/all/all.yml:12`), for messages.
fn named(host: &Host, key: &str) -> String {
    match host.origins.get(key) {
        Some(origin) => format!("`{key}` ({origin})"),
        None => format!("`{key}`"),
    }
}

/// The private key's variable and its alias, in the order they are read.
const KEY_VARIABLES: &[&str] = &["ansible_ssh_private_key_file", "ansible_private_key_file"];

/// A relative key path that names no file in the current directory, where Ansible's ssh
/// (and dnsfix) opens it, but one relative to the host's inventory: dnsfix run from
/// elsewhere than where Ansible is run. The message for the inventory's warnings.
pub(crate) fn misplaced_key(host: &Host) -> Option<String> {
    let key = KEY_VARIABLES
        .iter()
        .find(|key| first_string(host, &[key]).is_some())?;
    let raw = first_string(host, &[key])?;
    let path = Path::new(&raw);
    if !path.is_relative() || raw.starts_with('~') || is_template(&raw) || path.exists() {
        return None;
    }
    let beside = Path::new(host.var_str("inventory_dir")?).join(path);
    if !beside.exists() {
        return None;
    }
    let cwd = std::env::current_dir().ok()?;
    Some(format!(
        "host `{}`: {} is {raw:?}, a relative path, which ssh opens relative to the current directory ({}), as Ansible leaves it to; no such file there, but there is {}: run dnsfix from the directory Ansible is run from, or make the path absolute",
        host.name,
        named(host, key),
        cwd.display(),
        beside.display()
    ))
}

/// The first of `keys` that is set to a non-empty scalar (an empty `ansible_ssh_host`
/// must not hide a real `ansible_host`).
fn first_string(host: &Host, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|key| {
        let value = host.var(key).and_then(scalar_string)?;
        let value = value.trim();
        (!value.is_empty()).then(|| value.to_string())
    })
}

/// A TCP port from a number or a numeric string (YAML `"2222"`, INI `ansible_port=2222`).
pub(crate) fn port_number(value: &Value) -> Option<u16> {
    let port = match value {
        Value::Number(n) => n.as_u64()?,
        Value::String(s) => s.trim().parse::<u64>().ok()?,
        _ => return None,
    };
    u16::try_from(port).ok().filter(|p| *p != 0)
}

/// `~/x` → `$HOME/x`; relative → `base/x` (the current directory); absolute unchanged.
fn resolve_key_path(raw: &str, home: Option<&Path>, base: Option<&Path>) -> PathBuf {
    if let Some(home) = home {
        if raw == "~" {
            return home.to_path_buf();
        }
        if let Some(rest) = raw.strip_prefix("~/") {
            return home.join(rest);
        }
    }
    let path = PathBuf::from(raw);
    match base {
        Some(base) if path.is_relative() && !raw.starts_with('~') => base.join(path),
        _ => path,
    }
}

impl Host {
    /// How to reach this host, derived from its connection variables.
    pub fn connection(&self) -> Connection {
        Connection::from_host(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn host(vars: Value) -> Host {
        let mut host = Host::new("node1");
        if let Value::Object(map) = vars {
            host.vars = map;
        }
        host
    }

    #[test]
    fn defaults_to_ssh_on_the_inventory_name() {
        let c = host(json!({})).connection();
        assert_eq!(
            c,
            Connection {
                kind: ConnectionKind::Ssh,
                address: "node1".into(),
                port: None,
                user: None,
                private_key: None,
                become_root: false,
                become_method: None,
                ssh_args: Vec::new(),
                ssh_args_from: Vec::new(),
                refused: None,
            }
        );
    }

    #[test]
    fn reads_connection_variables_and_their_aliases() {
        let c = host(json!({
            "ansible_host": "192.0.2.11",
            "ansible_port": "2222",
            "ansible_user": "ubuntu",
            "ansible_become": "yes",
            "ansible_private_key_file": "/keys/id_ed25519",
        }))
        .connection();
        assert_eq!(c.address, "192.0.2.11");
        assert_eq!(c.port, Some(2222));
        assert_eq!(c.user.as_deref(), Some("ubuntu"));
        assert!(c.become_root);
        assert_eq!(c.private_key, Some(PathBuf::from("/keys/id_ed25519")));

        // The ansible_ssh_* spelling wins, as in Ansible's ssh plugin.
        let c = host(json!({
            "ansible_host": "192.0.2.11", "ansible_ssh_host": "192.0.2.12",
            "ansible_port": 22, "ansible_ssh_port": 2200,
            "ansible_user": "a", "ansible_ssh_user": "b",
        }))
        .connection();
        assert_eq!(c.address, "192.0.2.12");
        assert_eq!(c.port, Some(2200));
        assert_eq!(c.user.as_deref(), Some("b"));

        // An empty alias does not hide the other spelling.
        let c = host(json!({"ansible_ssh_host": "", "ansible_host": "192.0.2.11"})).connection();
        assert_eq!(c.address, "192.0.2.11");
    }

    #[test]
    fn ssh_args_are_split_as_ansible_does_and_unusable_ones_refuse_the_host() {
        let c = host(json!({
            "ansible_ssh_common_args": "-o ProxyCommand='ssh -W %h:%p jump' ",
            "ansible_ssh_extra_args": "-C",
        }))
        .connection();
        assert_eq!(c.ssh_args, ["-o", "ProxyCommand=ssh -W %h:%p jump", "-C"]);
        assert_eq!(
            c.ssh_args_from,
            ["`ansible_ssh_common_args`", "`ansible_ssh_extra_args`"]
        );
        assert_eq!(c.refused, None);
        // `ansible_ssh_args` too, first (ssh.py `_build_command` adds it before the others):
        // before, a ProxyJump there was dropped without a word.
        let c = host(json!({
            "ansible_ssh_extra_args": "-C",
            "ansible_ssh_args": "-o ControlMaster=auto -o ProxyJump=jump",
        }))
        .connection();
        assert_eq!(
            c.ssh_args,
            ["-o", "ControlMaster=auto", "-o", "ProxyJump=jump", "-C"]
        );
        assert_eq!(
            c.ssh_args_from,
            ["`ansible_ssh_args`", "`ansible_ssh_extra_args`"]
        );
        // A user or port there comes before Ansible's own (ssh keeps the first): Ansible
        // would reach another account or port than dnsfix; refused. After them, in the
        // other two, Ansible's own win, as dnsfix's do.
        for first in [
            "-o User=deploy",
            "-oPort=2200",
            "-l deploy",
            "-p2200",
            "-o \"port 2200\"",
        ] {
            let c = host(json!({ "ansible_ssh_args": first })).connection();
            assert!(
                c.refused
                    .as_deref()
                    .is_some_and(|why| why.contains("set ansible_user or ansible_port")),
                "{first}: {:?}",
                c.refused
            );
            let c = host(json!({ "ansible_ssh_common_args": first })).connection();
            assert_eq!(c.refused, None, "{first}");
        }
        let c = host(json!({ "ansible_ssh_args": "-S /tmp/x" })).connection();
        assert!(
            c.refused
                .is_some_and(|why| why.contains("ansible_ssh_args")),
            "-S in ansible_ssh_args refused"
        );
        for bad in ["-o 'unclosed", "node2", "-S /tmp/x", "{{ bastion_args }}"] {
            let c = host(json!({ "ansible_ssh_extra_args": bad })).connection();
            let why = c.refused.unwrap_or_else(|| panic!("{bad} refused"));
            assert!(
                why.contains("node1") && why.contains("ansible_ssh_extra_args"),
                "{why}"
            );
        }
    }

    /// `ansible_host: "{{ hostvars[groups.bastion[0]].ip }}"` and the like: before, ssh was
    /// given the literal text (or that user, or that key path) without a word.
    #[test]
    fn a_templated_address_user_key_or_port_refuses_the_host_naming_where_it_was_set() {
        for key in [
            "ansible_host",
            "ansible_ssh_host",
            "ansible_user",
            "ansible_ssh_private_key_file",
            "ansible_port",
        ] {
            let mut h = host(json!({ key: "{{ lookup('env', 'X') }}" }));
            h.origins.insert(
                key.into(),
                crate::inventory::VarOrigin::new(
                    Path::new("inventory/hosts.yaml"),
                    Some(7),
                    crate::inventory::VarScope::Host,
                ),
            );
            let why = h
                .connection()
                .refused
                .unwrap_or_else(|| panic!("{key} refused"));
            for want in ["node1", key, "inventory/hosts.yaml:7", "template"] {
                assert!(why.contains(want), "{want} in {why}");
            }
        }
        // The alias that is not used does not matter.
        let c =
            host(json!({"ansible_ssh_host": "192.0.2.1", "ansible_host": "{{ x }}"})).connection();
        assert_eq!(c.refused, None);
        let c = host(json!({"ansible_host": crate::inventory::VAULTED})).connection();
        assert!(c.refused.is_some());
    }

    #[test]
    fn connection_kind() {
        for (value, kind) in [
            ("local", ConnectionKind::Local),
            ("ansible.builtin.local", ConnectionKind::Local),
            ("ssh", ConnectionKind::Ssh),
            ("paramiko", ConnectionKind::Ssh),
            ("docker", ConnectionKind::Ssh),
        ] {
            let c = host(json!({ "ansible_connection": value })).connection();
            assert_eq!(c.kind, kind, "{value}");
        }
    }

    #[test]
    fn invalid_ports_are_none() {
        for value in [
            json!(0),
            json!(70000),
            json!("{{ port }}"),
            json!(-1),
            json!(true),
        ] {
            assert_eq!(port_number(&value), None, "{value}");
        }
        assert_eq!(port_number(&json!(" 22 ")), Some(22));
    }

    #[test]
    fn a_become_method_other_than_sudo_is_kept_for_messages() {
        for method in [
            "sudo",
            "ansible.builtin.sudo",
            "ansible.legacy.sudo",
            " ",
            "",
        ] {
            let c = host(json!({ "ansible_become_method": method })).connection();
            assert_eq!(c.become_method, None, "{method:?}");
        }
        assert_eq!(host(json!({})).connection().become_method, None);
        let c = host(json!({ "ansible_become_method": "su" })).connection();
        assert_eq!(
            c.become_method.as_deref(),
            Some("`ansible_become_method` is \"su\"")
        );
    }

    #[test]
    fn become_is_false_unless_truthy() {
        assert!(
            !host(json!({"ansible_become": "no"}))
                .connection()
                .become_root
        );
        assert!(
            !host(json!({"ansible_become": "{{ x }}"}))
                .connection()
                .become_root
        );
        assert!(
            host(json!({"ansible_become": true}))
                .connection()
                .become_root
        );
    }

    /// Ansible's ssh plugin passes the key path to ssh as written (`os.path.expanduser`
    /// only), so a relative one is opened in the current directory: before, dnsfix joined it
    /// onto the inventory's directory and used a key Ansible does not.
    #[test]
    fn a_relative_key_is_opened_in_the_current_directory_and_one_beside_the_inventory_is_warned_about()
     {
        let inventory = std::env::temp_dir().join(format!("dnsfix-key-{}", std::process::id()));
        let name = format!("dnsfix-test-key-{}", std::process::id());
        std::fs::create_dir_all(&inventory).expect("mkdir");
        std::fs::write(inventory.join(&name), "key").expect("write");
        let h = host(json!({
            "ansible_ssh_private_key_file": name,
            "inventory_dir": inventory.display().to_string(),
        }));
        let cwd = std::env::current_dir().expect("cwd");
        assert_eq!(h.connection().private_key, Some(cwd.join(&name)));
        let warning = misplaced_key(&h).expect("warned");
        for want in [
            &name,
            &cwd.display().to_string(),
            &inventory.join(&name).display().to_string(),
        ] {
            assert!(warning.contains(want.as_str()), "{want} in {warning}");
        }
        let absolute = host(json!({
            "ansible_ssh_private_key_file": inventory.join(&name).display().to_string(),
            "inventory_dir": inventory.display().to_string(),
        }));
        assert_eq!(misplaced_key(&absolute), None);
        let _ = std::fs::remove_dir_all(&inventory);
    }

    #[test]
    fn key_paths_expand_home_and_resolve_against_the_current_directory() {
        let home = Path::new("/home/op");
        let base = Path::new("/srv/ansible");
        let resolve = |raw| resolve_key_path(raw, Some(home), Some(base));
        assert_eq!(resolve("~/.ssh/id"), PathBuf::from("/home/op/.ssh/id"));
        assert_eq!(resolve("~"), PathBuf::from("/home/op"));
        assert_eq!(resolve("keys/id"), PathBuf::from("/srv/ansible/keys/id"));
        assert_eq!(resolve("/etc/keys/id"), PathBuf::from("/etc/keys/id"));
        assert_eq!(resolve("~deploy/id"), PathBuf::from("~deploy/id"));
        assert_eq!(
            resolve_key_path("keys/id", None, None),
            PathBuf::from("keys/id")
        );
    }
}
