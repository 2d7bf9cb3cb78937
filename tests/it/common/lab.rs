//! Rust side of the dnsfix test lab (`tests/lab/lab.sh`, documented in
//! `tests/lab/README.md`): Kubernetes-like nodes made of network, mount and PID
//! namespaces, each running a real OpenSSH server reached on `127.0.0.1:PORT`.
//!
//! ```ignore
//! use crate::common::lab::Lab;
//!
//! let lab = Lab::start(&["healthy", "kubeadm"]).unwrap_or_else(|e| panic!("lab could not start: {e}"));
//! // dnsfix ... -i lab.inventory() --known-hosts lab.known_hosts()
//! lab.exec("kubeadm", "echo 0 > /proc/sys/net/bridge/bridge-nf-call-iptables");
//! // dropping the lab tears it down, also when the test panics
//! ```
//!
//! The lab never skips: it needs root, sshd, socat, iproute2 and a C compiler, and
//! `Lab::start` returns the reason when something is missing. Set `DNSFIX_LAB_KEEP=1` to
//! keep labs after the test (then remove them with `tests/lab/lab.sh down DIR`).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// Every scenario under tests/lab/scenarios, one node each.
pub const ALL_SCENARIOS: &[&str] = &[
    "healthy",
    "stub-symlink",
    "kubespray-loop",
    "brnf-off",
    "stray-search",
    "kubeadm",
    "sudo-user",
    "kubespray-loop-resolved",
    "kubeadm-stopped",
    "minimal-no-curl",
];

/// One lab node (a row of `DIR/nodes.tsv`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Inventory and `ssh_config` host name: `nodeN-SCENARIO` (N counts from 1).
    pub name: String,
    /// Port of the node's forwarder on 127.0.0.1.
    pub port: u16,
    /// Scenario directory name under `tests/lab/scenarios`.
    pub scenario: String,
    /// SSH user of the scenario (`root`, or `dnsfixlab` for `sudo-user`).
    pub user: String,
    /// The node's network namespace (`ip netns list`); gone after the lab is dropped.
    pub netns: String,
}

/// A running lab. Dropping it stops every node and deletes `dir`.
#[derive(Debug)]
pub struct Lab {
    pub dir: PathBuf,
    pub nodes: Vec<Node>,
    keep: bool,
}

/// Path of `tests/lab/lab.sh`.
pub fn lab_sh() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lab/lab.sh")
}

fn run_lab_sh<S: AsRef<OsStr>>(args: &[S]) -> Output {
    run_lab_sh_env(args, &[])
}

/// lab.sh with `env` set, and `LAB_REBOOT_UNITS` never inherited from the caller's
/// environment (a reboot waits for the units unless a test says otherwise).
fn run_lab_sh_env<S: AsRef<OsStr>>(args: &[S], env: &[(&str, &str)]) -> Output {
    let mut lab = Command::new("bash");
    lab.arg(lab_sh()).args(args).env_remove("LAB_REBOOT_UNITS");
    for (name, value) in env {
        lab.env(name, value);
    }
    lab.output()
        .unwrap_or_else(|e| panic!("cannot run bash {}: {e}", lab_sh().display()))
}

fn describe(out: &Output) -> String {
    format!(
        "exit {}\nstderr:\n{}\nstdout:\n{}",
        out.status
            .code()
            .map_or_else(|| "by signal".to_owned(), |c| c.to_string()),
        String::from_utf8_lossy(&out.stderr).trim_end(),
        String::from_utf8_lossy(&out.stdout).trim_end()
    )
}

fn parse_nodes(tsv: &str) -> Result<Vec<Node>, String> {
    tsv.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            match f.as_slice() {
                [name, port, netns, scenario, user] => Ok(Node {
                    name: (*name).to_owned(),
                    port: port
                        .parse()
                        .map_err(|e| format!("nodes.tsv: bad port in {l:?}: {e}"))?,
                    scenario: (*scenario).to_owned(),
                    user: (*user).to_owned(),
                    netns: (*netns).to_owned(),
                }),
                _ => Err(format!("nodes.tsv: bad line {l:?}")),
            }
        })
        .collect()
}

impl Lab {
    /// Starts a lab with one node per scenario name (`"healthy"`, or `"healthy:NAME"` to
    /// choose the node name). The lab dir is unique: under `CARGO_TARGET_TMPDIR` (or the
    /// system temp dir when that path is long), named with the pid and a counter.
    /// Returns `Err` with lab.sh's stderr if the lab cannot start.
    pub fn start(scenarios: &[&str]) -> Result<Lab, String> {
        let base = option_env!("CARGO_TARGET_TMPDIR")
            .map(PathBuf::from)
            .filter(|p| p.as_os_str().len() <= 60)
            .unwrap_or_else(std::env::temp_dir);
        let dir = loop {
            let n = COUNTER.fetch_add(1, Ordering::SeqCst);
            let d = base.join(format!("lab-{}-{n}", std::process::id()));
            if !d.exists() {
                break d;
            }
        };
        let keep = std::env::var_os("DNSFIX_LAB_KEEP").is_some_and(|v| !v.is_empty());
        let mut args: Vec<OsString> = vec!["up".into()];
        if !keep {
            // lab.sh tears the lab down by itself if this process dies without Drop.
            args.extend(["--owner".into(), std::process::id().to_string().into()]);
        }
        args.push(dir.clone().into_os_string());
        args.extend(scenarios.iter().map(OsString::from));
        let out = run_lab_sh(&args);
        if !out.status.success() {
            let _ = std::fs::remove_dir(&dir);
            return Err(format!(
                "lab.sh up {} failed: {}",
                scenarios.join(" "),
                describe(&out)
            ));
        }
        let tsv = std::fs::read_to_string(dir.join("nodes.tsv"))
            .map_err(|e| format!("{}: {e}", dir.join("nodes.tsv").display()))?;
        let nodes = match parse_nodes(&tsv) {
            Ok(nodes) => nodes,
            Err(e) => {
                let _ = run_lab_sh(&[OsStr::new("down"), dir.as_os_str()]);
                return Err(e);
            }
        };
        Ok(Lab { dir, nodes, keep })
    }

    /// Kubespray-style YAML inventory of all nodes (`all: hosts/children/vars`).
    pub fn inventory(&self) -> PathBuf {
        self.dir.join("inventory.yaml")
    }
    /// The same nodes laid out as a Kubespray inventory directory (`DIR/inventory/`):
    /// `hosts.yaml` and `group_vars/all/all.yml` holding `all_yml`. Returns the hosts file.
    pub fn kubespray_inventory(&self, all_yml: &str) -> PathBuf {
        let dir = self.dir.join("inventory");
        std::fs::create_dir_all(dir.join("group_vars/all")).expect("mkdir group_vars/all");
        std::fs::copy(self.inventory(), dir.join("hosts.yaml")).expect("copy the inventory");
        std::fs::write(dir.join("group_vars/all/all.yml"), all_yml).expect("write all.yml");
        dir.join("hosts.yaml")
    }
    /// `[127.0.0.1]:PORT ssh-ed25519 ...` for every node, as started (rekey does not
    /// update it).
    pub fn known_hosts(&self) -> PathBuf {
        self.dir.join("known_hosts")
    }
    /// The client private key (ed25519, no passphrase) every node accepts.
    pub fn key(&self) -> PathBuf {
        self.dir.join("id_ed25519")
    }
    /// OpenSSH client config with one `Host NAME` block per node: `ssh -F FILE NAME`.
    pub fn ssh_config(&self) -> PathBuf {
        self.dir.join("ssh_config")
    }
    /// Milliseconds `lab.sh up` took.
    pub fn startup_ms(&self) -> Option<u64> {
        std::fs::read_to_string(self.dir.join("startup_ms"))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// The node with this name, else the first node of this scenario. Panics if none.
    /// How a transport reaches `node` (by name or scenario): its sshd on the loopback
    /// address, as its user, with the lab's key given to the transport.
    pub fn target(&self, node: &str) -> dnsfix::transport::Target {
        use dnsfix::inventory::{Connection, ConnectionKind};
        let node = self.node(node);
        dnsfix::transport::Target {
            host: node.name.clone(),
            connection: Connection {
                kind: ConnectionKind::Ssh,
                address: "127.0.0.1".into(),
                port: Some(node.port),
                user: Some(node.user.clone()),
                private_key: None,
                become_root: false,
                become_method: None,
                ssh_args: Vec::new(),
                ssh_args_from: Vec::new(),
                refused: None,
            },
        }
    }

    pub fn node(&self, name_or_scenario: &str) -> &Node {
        self.nodes
            .iter()
            .find(|n| n.name == name_or_scenario)
            .or_else(|| self.nodes.iter().find(|n| n.scenario == name_or_scenario))
            .unwrap_or_else(|| {
                let names: Vec<&str> = self.nodes.iter().map(|n| n.name.as_str()).collect();
                panic!("no node or scenario {name_or_scenario:?} in the lab (nodes: {names:?})")
            })
    }

    fn node_op(&self, verb: &str, node: &str) {
        self.node_op_with(verb, node, &[]);
    }

    fn node_op_with(&self, verb: &str, node: &str, extra: &[&str]) {
        self.node_op_env(verb, node, extra, &[]);
    }

    fn node_op_env(&self, verb: &str, node: &str, extra: &[&str], env: &[(&str, &str)]) {
        let name = self.node(node).name.clone();
        let mut args = vec![OsStr::new(verb), self.dir.as_os_str(), OsStr::new(&name)];
        args.extend(extra.iter().map(OsStr::new));
        let out = run_lab_sh_env(&args, env);
        assert!(
            out.status.success(),
            "lab.sh {verb} {name} failed: {}",
            describe(&out)
        );
    }

    /// Stops the node's sshd and its forwarder: new connections get "Connection refused".
    pub fn stop(&self, node: &str) {
        self.node_op("stop", node);
    }
    /// Undoes [`Lab::stop`]: same port, same host key.
    pub fn resume(&self, node: &str) {
        self.node_op("start", node);
    }
    /// New host key and sshd restart; known_hosts is NOT updated, so strict clients
    /// refuse with "REMOTE HOST IDENTIFICATION HAS CHANGED".
    pub fn rekey(&self, node: &str) {
        self.node_op("rekey", node);
    }
    /// Reboots a node of the systemd flavour for real (`systemctl reboot` in the node):
    /// its systemd boots again from the same disk, with a fresh /run, a new boot id and its
    /// network sysctls at the kernel's defaults; returns once the boot is over and its
    /// units, kubelet and sshd are up (`lab.sh reboot`).
    pub fn reboot(&self, node: &str) {
        self.node_op("reboot", node);
    }
    /// [`Lab::reboot`] of a node a test broke on purpose: returns once the boot is over and
    /// sshd listens, whether or not the scenario's units came up or failed
    /// (`LAB_REBOOT_UNITS=any`).
    pub fn reboot_units_may_fail(&self, node: &str) {
        self.node_op_env("reboot", node, &[], &[("LAB_REBOOT_UNITS", "any")]);
    }
    /// SIGSTOPs the node's sshd: TCP connects, but no SSH banner ever comes (timeouts).
    pub fn freeze(&self, node: &str) {
        self.node_op("freeze", node);
    }
    /// Undoes [`Lab::freeze`].
    #[expect(
        dead_code,
        reason = "lab.sh's thaw, for timeout tests; none uses it today"
    )]
    pub fn thaw(&self, node: &str) {
        self.node_op("thaw", node);
    }

    /// Makes every login to the node slow after the banner, as to a node whose sshd waits
    /// on a broken resolver: each of the login's two key checks waits `secs` (0: undo).
    pub fn slow_login(&self, node: &str, secs: u32) {
        self.node_op_with("slow-login", node, &[&secs.to_string()]);
    }

    /// Runs `sh -c CMD` as root inside the node's namespaces and returns its stdout.
    /// Panics with stderr if it fails.
    pub fn exec(&self, node: &str, cmd: &str) -> String {
        let out = self.exec_output(node, cmd);
        assert!(
            out.status.success(),
            "lab exec on {node}: `{cmd}` failed: {}",
            describe(&out)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Like [`Lab::exec`], but returns the whole output whatever the exit status.
    pub fn exec_output(&self, node: &str, cmd: &str) -> Output {
        let name = self.node(node).name.clone();
        run_lab_sh(&[
            OsStr::new("exec"),
            self.dir.as_os_str(),
            OsStr::new(&name),
            OsStr::new("--"),
            OsStr::new("sh"),
            OsStr::new("-c"),
            OsStr::new(cmd),
        ])
    }

    /// Plain OpenSSH to the node through the lab's ssh_config (no agent), e.g. to check
    /// what a node looks like independently of dnsfix.
    pub fn ssh(&self, node: &str, cmd: &str) -> Output {
        let name = self.node(node).name.clone();
        Command::new("ssh")
            .arg("-F")
            .arg(self.ssh_config())
            .arg(name)
            .arg(cmd)
            .env_remove("SSH_AUTH_SOCK")
            .output()
            .unwrap_or_else(|e| panic!("cannot run ssh: {e}"))
    }

    /// The node's systemctl stand-in call log: one "EPOCH\tUSER\tARGS" line per call.
    pub fn systemctl_calls(&self, node: &str) -> Vec<String> {
        self.exec(node, "cat /run/lab-systemd/calls.log")
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if self.keep {
            eprintln!(
                "DNSFIX_LAB_KEEP: lab kept at {} (remove: {} down {0})",
                self.dir.display(),
                lab_sh().display()
            );
            return;
        }
        super::masters::remove_linked_dirs(&self.dir);
        match Command::new("bash")
            .arg(lab_sh())
            .arg("down")
            .arg(&self.dir)
            .output()
        {
            Ok(out) if out.status.success() => {}
            Ok(out) => eprintln!(
                "lab.sh down {} failed: {}",
                self.dir.display(),
                describe(&out)
            ),
            Err(e) => eprintln!("cannot run lab.sh down {}: {e}", self.dir.display()),
        }
    }
}
