//! The dhclient processes the gather found, each with what its command line says
//! ([`DhclientCommand`]): read by DNS-RESOLV-MANAGED-ELSEWHERE's dhclient.conf checks and by
//! the fix texts that tell where a dhclient of the node's own takes servers. Facts only: it
//! judges nothing.

use crate::facts::dhclient_cmdline::DhclientCommand;
use crate::facts::raw::FileState;

/// The files dhclient reads where its command line names none: the built-in
/// `_PATH_DHCLIENT_CONF` (isc-dhcp includes/dhcpd.h @572032cb: /etc/dhclient.conf) and
/// the one Debian and Ubuntu build it with (/etc/dhcp/dhclient.conf).
pub(super) const DHCLIENT_DEFAULTS: [&str; 2] = ["/etc/dhcp/dhclient.conf", "/etc/dhclient.conf"];

/// A running dhclient and what its command line says ([`DhclientCommand`]): `Err` where
/// it was not read or not understood (then it may read a default file and serve any
/// interface).
pub(super) struct DhclientRun {
    pub(super) pid: u32,
    pub(super) command: Result<DhclientCommand, String>,
}

impl DhclientRun {
    /// Every root dhclient the gather found, in its order.
    pub(super) fn all(facts: &crate::facts::NodeFacts) -> Vec<DhclientRun> {
        let raw = &facts.raw;
        let pids: Vec<u32> = match raw.all_pids.get("dhclient") {
            Some(all) if !all.is_empty() => all.clone(),
            _ => raw.pids.get("dhclient").copied().into_iter().collect(),
        };
        pids.into_iter()
            .map(|pid| {
                let path = format!("/proc/{pid}/cmdline");
                let command = match raw.files.get(&path) {
                    Some(f) if f.state == FileState::Present => DhclientCommand::parse(&f.content)
                        .map_err(|why| format!("{path} is not understood: {why}")),
                    _ => Err(format!("{path} was not read")),
                };
                DhclientRun { pid, command }
            })
            .collect()
    }

    /// Whether it reads `path`: its `-cf` file, else the default ones (taken as read, as
    /// where its command line does not say).
    pub(super) fn reads(&self, path: &str) -> bool {
        match &self.command {
            Ok(DhclientCommand { conf: Some(c), .. }) => c == path,
            _ => DHCLIENT_DEFAULTS.contains(&path),
        }
    }

    /// The interfaces it serves, `Err` with why where that is not known.
    pub(super) fn serves(&self) -> Result<&[String], String> {
        match &self.command {
            Ok(c) if c.none => Ok(&[]),
            Ok(c) if let Some(option) = &c.unknown => Err(format!(
                "which interfaces dhclient (pid {}) serves is not known: its command line has {option}, an option dnsfix does not know (it may take the next word as its value)",
                self.pid
            )),
            Ok(c) if c.interfaces.is_empty() => Err(format!(
                "dhclient (pid {}) names no interface on its command line: it serves every one it finds up",
                self.pid
            )),
            Ok(c) => Ok(&c.interfaces),
            Err(why) => Err(format!(
                "which interfaces dhclient (pid {}) serves is not known: {why}",
                self.pid
            )),
        }
    }
}
