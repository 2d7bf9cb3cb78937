//! The one way tests run the real binary: [`Dnsfix`] builds the command line a user would
//! type (against a lab, with its known_hosts and no progress bar) and runs it; the helpers
//! below read what it printed.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use dnsfix::apply::HostResult;
use dnsfix::apply::record::RunRecord;

use super::lab::Lab;

/// `dnsfix ARGS...`, built up step by step.
#[derive(Debug)]
pub struct Dnsfix(Command);

impl Dnsfix {
    /// `dnsfix ARGS...`, with `DNSFIX_INVENTORY` and `DNSFIX_PLAYBOOKS` unset: what the
    /// test names is all it reads.
    pub fn new<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>) -> Dnsfix {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_dnsfix"));
        cmd.args(args)
            .env_remove("DNSFIX_INVENTORY")
            .env_remove("DNSFIX_PLAYBOOKS");
        Dnsfix(cmd)
    }

    /// `-i INVENTORY --known-hosts LAB_KNOWN_HOSTS --no-progress`: a lab's nodes, their
    /// host keys checked.
    pub fn lab(self, lab: &Lab, inventory: &Path) -> Dnsfix {
        self.arg("-i")
            .arg(inventory)
            .arg("--known-hosts")
            .arg(lab.known_hosts())
            .arg("--no-progress")
    }

    /// As [`Dnsfix::lab`], and what apply and rollback need to stay inside the lab: run
    /// records in the lab's state directory, connections closed when the run ends (each
    /// run sees the node as it is now), stdin never a terminal.
    pub fn lab_apply(self, lab: &Lab, inventory: &Path) -> Dnsfix {
        self.lab(lab, inventory)
            .args(["--ssh-persist", "0"])
            .env("DNSFIX_STATE_DIR", lab.dir.join("state"))
            .stdin(Stdio::null())
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Dnsfix {
        self.0.arg(arg);
        self
    }

    pub fn args<S: AsRef<OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> Dnsfix {
        self.0.args(args);
        self
    }

    pub fn env(mut self, name: &str, value: impl AsRef<OsStr>) -> Dnsfix {
        self.0.env(name, value);
        self
    }

    pub fn env_remove(mut self, name: &str) -> Dnsfix {
        self.0.env_remove(name);
        self
    }

    pub fn stdin(mut self, stdin: Stdio) -> Dnsfix {
        self.0.stdin(stdin);
        self
    }

    /// The command, for a test that spawns it or sets what the builder does not.
    pub fn command(self) -> Command {
        self.0
    }

    /// Runs it to the end.
    pub fn output(mut self) -> Output {
        self.0.output().expect("dnsfix runs")
    }
}

/// Exit code, stdout and stderr, for a failure message.
pub fn describe(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The run record `--format json` printed.
pub fn run_record(out: &Output) -> RunRecord {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not a run record: {e}\n{}", describe(out)))
}

/// Host `name`'s result in a run record.
pub fn host_result<'a>(record: &'a RunRecord, name: &str) -> &'a HostResult {
    record
        .hosts
        .iter()
        .find(|h| h.host == name)
        .unwrap_or_else(|| panic!("{name} is not in the run record: {record:#?}"))
}
