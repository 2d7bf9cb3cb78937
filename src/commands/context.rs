//! What every command that reaches hosts works with, built once per run by
//! [`Context::new`]: the loaded inventory and the hosts `--limit` selected, the transport,
//! the async runtime, and the sink progress events go to.

use std::sync::Arc;

use crate::cluster::Cluster;
use crate::config::Config;
use crate::error::Error;
use crate::gather::{self, HostOutcome};
use crate::inventory::{Host, Inventory};
use crate::report::{self, EventSink};
use crate::transport::Transport;

/// The run's shared state. Fields drop in declaration order: the sink and the runtime
/// (with any task still holding the transport) go before the transport and the hosts.
pub struct Context<'c> {
    /// The validated command line: format, forks, limit, progress.
    pub config: &'c Config,
    /// Where progress and warnings go (stderr); results go to stdout.
    pub sink: Arc<dyn EventSink>,
    pub runtime: tokio::runtime::Runtime,
    pub transport: Arc<Transport>,
    /// The hosts `--limit` selected, in inventory order, as positions in `inventory`
    /// (not copies: at a thousand hosts the copies were 2 MB).
    selected: Vec<usize>,
    pub inventory: Inventory,
}

impl std::fmt::Debug for Context<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("config", &self.config)
            .field("hosts", &self.hosts())
            .finish_non_exhaustive()
    }
}

/// The inventory given with `-i`, or this machine alone.
pub fn load_inventory(config: &Config) -> Result<Inventory, Error> {
    Ok(match &config.inventory {
        Some(path) => Inventory::load(path).map_err(|e| from_env(path, e))?,
        None => Inventory::local(),
    })
}

/// An inventory that is not there, where DNSFIX_INVENTORY names it (`-i`'s default): the
/// message names the variable, which the user may have set long ago in a shell profile.
fn from_env(path: &std::path::Path, error: crate::inventory::InventoryError) -> Error {
    let set =
        std::env::var_os("DNSFIX_INVENTORY").is_some_and(|v| std::path::Path::new(&v) == path);
    match error {
        crate::inventory::InventoryError::NotFound { path: missing } if set => {
            Error::Usage(format!(
                "inventory {} does not exist (DNSFIX_INVENTORY names it: set the variable to an inventory, unset it, or give -i)",
                missing.display()
            ))
        }
        other => other.into(),
    }
}

impl<'c> Context<'c> {
    /// Loads the inventory, selects the hosts, sets up the transport and the runtime, and
    /// reports the inventory's warnings. Contacts no host.
    pub fn new(config: &'c Config) -> Result<Context<'c>, Error> {
        let ctx = Context::unwarned(config)?;
        ctx.report_warnings();
        Ok(ctx)
    }

    /// [`Context::new`] without the inventory's warnings, for a command that may still
    /// refuse what it was given once the inventory is read (`apply PLAN`, `rollback`):
    /// a refusal is the first thing it prints, and [`Context::report_warnings`] comes after
    /// its last one.
    pub fn unwarned(config: &'c Config) -> Result<Context<'c>, Error> {
        let inventory = load_inventory(config)?;
        if inventory.hosts().is_empty()
            && let Some(path) = inventory.path()
        {
            return Err(crate::inventory::InventoryError::NoHosts {
                path: path.to_path_buf(),
            }
            .into());
        }
        let selected = inventory.select_positions(config.limit.as_deref())?;
        // Before any ssh starts: a signal from here on ends them with dnsfix.
        super::interrupt::watch()?;
        let transport = Arc::new(Transport::new(config.ssh.clone())?);
        // One thread: the client's share of a fleet run is small (waiting on the nodes,
        // parsing a few KB per host), and every worker thread would get a malloc arena of
        // its own holding freed memory: at 1000 hosts that was a third of the RSS.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(Error::Runtime)?;
        let pending = Arc::new(report::pending::Pending::new(
            config.action.name(),
            selected
                .iter()
                .filter_map(|&i| inventory.host_at(i))
                .map(|h| h.name.clone())
                .collect(),
            report::sink_for(selected.len(), config.progress),
        ));
        let sink: Arc<dyn EventSink> = Arc::clone(&pending) as Arc<dyn EventSink>;
        // A signal that ends a run reading hosts says which hosts it stopped on: facts,
        // check, plan, verify, and apply's own planning (where a node hangs), which says
        // nothing of it once it asks y/N ([`super::confirm`]). Not rollback, nor apply of
        // a saved plan: they read no host before they arm their own stop.
        use crate::config::Action;
        let reads_hosts = match &config.action {
            Action::Facts | Action::Check { .. } | Action::Plan(_) | Action::Verify(_) => true,
            Action::Apply(apply) => apply.plan.is_none(),
            _ => false,
        };
        if reads_hosts {
            super::interrupt::on_exit(Box::new(move |code| pending.message(code)));
        }
        Ok(Context {
            config,
            sink,
            runtime,
            transport,
            selected,
            inventory,
        })
    }

    /// Reports the inventory's warnings (a shadowed vars file, a port that is no port).
    pub fn report_warnings(&self) {
        for warning in self.inventory.warnings() {
            self.sink.event(report::Event::Warning {
                message: warning.to_string(),
            });
        }
    }

    /// The selected hosts, in inventory order.
    pub fn hosts(&self) -> Vec<&Host> {
        self.selected
            .iter()
            .filter_map(|&i| self.inventory.host_at(i))
            .collect()
    }

    /// Gathers every selected host's facts (and the files in `extra`, and the kubelet's
    /// version from its binary), one outcome per host in the same order, then closes the
    /// progress display.
    pub fn gather(&self, extra: Vec<String>) -> Vec<HostOutcome> {
        let reads = gather::Reads {
            extra,
            kubelet_version: true,
        };
        let outcomes = self.runtime.block_on(gather::gather(
            &self.hosts(),
            Arc::clone(&self.transport),
            self.config.forks,
            Arc::clone(&self.sink),
            Arc::new(reads),
        ));
        self.sink.finish();
        outcomes
    }

    /// Where kubectl runs: with `--kubeconfig` on this machine, else on the inventory's
    /// `kube_control_plane` hosts (whatever `--limit` selected), as Kubespray runs it.
    pub fn cluster_access(&self) -> crate::cluster::Access {
        if let Some(path) = &self.config.kubeconfig {
            return crate::cluster::Access::Kubeconfig(path.clone());
        }
        crate::cluster::Access::ControlPlane(
            self.inventory
                .group_members("kube_control_plane")
                .unwrap_or_default()
                .into_iter()
                .filter_map(|name| self.inventory.host(name).cloned())
                .collect(),
        )
    }

    /// [`Context::gather`], reading the cluster's DNS pods meanwhile. The kubelets'
    /// versions come from the cluster then, not from each node's kubelet binary, unless
    /// there is no cluster to read (no `kube_control_plane` host and no `--kubeconfig`), or
    /// the cluster gave none for a host whose findings depend on it.
    pub fn gather_with_cluster(&self, extra: Vec<String>) -> (Vec<HostOutcome>, Cluster) {
        let access = self.cluster_access();
        let reads = gather::Reads {
            extra: extra.clone(),
            kubelet_version: matches!(&access, crate::cluster::Access::ControlPlane(hosts) if hosts.is_empty()),
        };
        let asked = reads.kubelet_version;
        let hosts = self.hosts();
        let (mut outcomes, cluster) = self.runtime.block_on(async {
            tokio::join!(
                gather::gather(
                    &hosts,
                    Arc::clone(&self.transport),
                    self.config.forks,
                    Arc::clone(&self.sink),
                    Arc::new(reads),
                ),
                crate::cluster::read(&self.transport, &access)
            )
        });
        // Where the cluster did not give a host's kubelet version (not read, `get nodes`
        // refused, the node registered under another name) and the version decides a
        // finding, that host is gathered again, its kubelet binary asked this time.
        if !asked {
            let again: Vec<usize> = outcomes
                .iter()
                .enumerate()
                .filter(|(i, o)| {
                    o.result.as_ref().is_ok_and(|facts| {
                        crate::diagnose::rules::kubelet_version_wanted(hosts[*i], facts, &cluster)
                    })
                })
                .map(|(i, _)| i)
                .collect();
            if !again.is_empty() {
                let those: Vec<&Host> = again.iter().map(|&i| hosts[i]).collect();
                let reads = gather::Reads {
                    extra,
                    kubelet_version: true,
                };
                let more = self.runtime.block_on(gather::gather(
                    &those,
                    Arc::clone(&self.transport),
                    self.config.forks,
                    Arc::new(crate::events::Silent),
                    Arc::new(reads),
                ));
                for (i, outcome) in again.into_iter().zip(more) {
                    if outcome.result.is_ok() {
                        outcomes[i] = outcome;
                    }
                }
            }
        }
        self.sink.finish();
        (outcomes, cluster)
    }
}
