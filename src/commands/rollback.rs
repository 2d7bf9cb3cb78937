//! `dnsfix rollback RUN_ID`: restore what an apply run changed, on the selected hosts,
//! where the files are still what that run wrote.

use std::collections::HashMap;
use std::sync::Arc;

use super::apply::{exit_code, save_record};
use super::{Context, exit};
use crate::apply::record::{self, ClusterUpdate, RunRecord};
use crate::apply::{self, ApplyOptions, HostResult};
use crate::config::{Config, Format, RollbackConfig};
use crate::error::Error;
use crate::inventory::Host;
use crate::report::{self, EventSink};

/// 0 when everything was restored (or nothing needed to be), 3 when a host failed; 1 when
/// the answer to y/N was no.
/// How a rollback runs its hosts: no batches (a rollback undoes what is there), no pods.
fn options(config: &Config, args: &RollbackConfig) -> ApplyOptions {
    ApplyOptions {
        serial: None,
        max_fail_percentage: 100,
        health_timeout: args.health_timeout,
        forks: config.forks,
        // A rollback recreates no pod: it puts files back.
        cluster: crate::cluster::Access::ControlPlane(Vec::new()),
        stop: crate::apply::Stop::default(),
        plan_elsewhere: Vec::new(),
    }
}

/// The cluster last: the reverse of apply, which changed it first. Not where the operator
/// stopped the rollback (Ctrl-C) before every host: rolling the run back again restores
/// them with the rest.
fn restore_cluster(
    ctx: &Context,
    options: &ApplyOptions,
    cluster: &[ClusterUpdate],
    run_id: &str,
) -> Vec<ClusterUpdate> {
    if options.stop.requested() {
        // Recorded as not done (exit 3), so a runbook does not go green on them.
        return cluster
            .iter()
            .map(|update| ClusterUpdate {
                outcome: "error".into(),
                message: format!(
                    "not restored: the rollback was stopped (Ctrl-C); roll run {run_id} back again to finish it"
                ),
                ..update.clone()
            })
            .collect();
    }
    ctx.runtime.block_on(apply::configmaps::restore(
        &ctx.transport,
        &ctx.cluster_access(),
        cluster,
    ))
}

pub fn run(config: &Config, args: &RollbackConfig) -> Result<u8, Error> {
    // The run may still be refused once the inventory is read: its warnings come after.
    let ctx = Context::unwarned(config)?;
    let run_id = args.run_id.as_str();
    let applied = record::load(&record::state_dir(), run_id).map_err(Error::RunRecord)?;
    if applied.command != "apply" {
        return Err(Error::RunRecord(format!(
            "run {run_id} was a {}, not an apply",
            applied.command
        )));
    }
    if config.limit.is_none() {
        not_in_inventory(&ctx, &applied)?;
    }
    ctx.report_warnings();
    let selected: Vec<&str> = ctx.hosts().into_iter().map(|h| h.name.as_str()).collect();
    let targets: Vec<HostResult> = applied
        .hosts
        .iter()
        .filter(|h| selected.contains(&h.host.as_str()))
        .cloned()
        .collect();
    let writing = targets
        .iter()
        .filter(|h| apply::rollback::may_have_written(h))
        .count();
    // The run's ConfigMap changes go back with any of the hosts that asked for them.
    let cluster: Vec<ClusterUpdate> = applied
        .cluster_updates
        .iter()
        .filter(|u| apply::configmaps::may_have_written(u))
        .filter(|u| u.hosts.iter().any(|h| selected.contains(&h.as_str())))
        .cloned()
        .collect();
    if writing == 0 && cluster.is_empty() {
        let line =
            format!("run {run_id} wrote nothing on the selected hosts: nothing to roll back");
        // With --format json stdout is for JSON only.
        if config.format == crate::config::Format::Text {
            println!("{line}");
        } else {
            eprintln!("{line}");
        }
        return Ok(exit::OK);
    }
    let question = match cluster.len() {
        0 => format!("Roll back run {run_id} on {writing} host(s)?"),
        n => {
            format!("Roll back run {run_id} on {writing} host(s) and {n} cluster ConfigMap key(s)?")
        }
    };
    if !args.yes
        && !super::confirm(
            &question,
            "not rolling back without confirmation: there is no terminal to ask on; pass \
             --yes to roll the run back",
            "nothing rolled back",
        )?
    {
        return Ok(exit::BAD_INPUT);
    }
    let hosts: HashMap<String, Host> = ctx
        .hosts()
        .into_iter()
        .map(|h| (h.name.clone(), h.clone()))
        .collect();
    let options = options(config, args);
    let rollback_id = record::new_run_id();
    let started = crate::util::now_rfc3339();
    let sink: Arc<dyn EventSink> = Arc::from(report::sink_for(writing, config.progress));
    super::stop_on_interrupt(&options.stop, &sink, "restores, restarts and health checks");
    let rolled = ctx.runtime.block_on(apply::rollback::rollback(
        run_id,
        &targets,
        &hosts,
        Arc::clone(&ctx.transport),
        &options,
        Arc::clone(&sink),
    ));
    sink.finish();
    let cluster_updates = restore_cluster(&ctx, &options, &cluster, run_id);
    let record = RunRecord {
        kind: "dnsfix-run".into(),
        format_version: record::RUN_FORMAT_VERSION,
        dnsfix_version: env!("CARGO_PKG_VERSION").into(),
        run_id: rollback_id,
        command: "rollback".into(),
        started,
        finished: crate::util::now_rfc3339(),
        inventory: ctx.inventory.path().map(super::absolute_display),
        plan_file: applied.plan_file.clone(),
        plan_created: applied.plan_created.clone(),
        rolls_back: Some(run_id.to_string()),
        inventory_updates: inventory_left(&rolled, &ctx, &applied.inventory_updates),
        hosts: rolled.into_iter().map(|r| r.result).collect(),
        cluster_updates,
    };
    let saved = save_record(&record);
    let rendered = match config.format {
        Format::Json => report::pretty_json(&record),
        Format::Text | Format::Junit | Format::Markdown => {
            report::apply::text(&record, &[], false, saved.as_deref())
        }
    };
    super::print(&rendered)?;
    // A ConfigMap key changed since the run is kept and reported: a failed rollback (3),
    // as for a file, not a stale plan (apply's 4). So is an inventory edit left in place.
    Ok(
        match exit_code(&record.hosts, false, (&[], &record.cluster_updates)) {
            exit::STALE => exit::UNREACHABLE,
            exit::OK if record.inventory_updates.iter().any(|u| u.outcome == "kept") => {
                exit::UNREACHABLE
            }
            code => code,
        },
    )
}

/// The inventory edits that now point the next Kubespray run at what this rollback took
/// off a node: a host whose rollback removed a file in dnsfix's own directory
/// (`/etc/dnsfix/resolv.conf`) and to which the inventory still gives that file as
/// `kube_resolv_conf` (its kubelet would then start no pod), whichever run set it. Each is
/// `kept`, to undo by hand, and fails the rollback (exit 3), as a kept node file does;
/// `unused` (no failure) where Kubespray's vars for the node's OS set kube_resolv_conf
/// over the inventory's. Other settings a run wrote (`upstream_dns_servers`,
/// systemd-resolved's file) are the fix as Kubespray makes it, and hosts that keep their fix
/// may need them: not judged here.
fn inventory_left(
    rolled: &[apply::rollback::RolledBack],
    ctx: &Context,
    written: &[crate::apply::record::InventoryUpdate],
) -> Vec<crate::apply::record::InventoryUpdate> {
    let mut left: Vec<crate::apply::record::InventoryUpdate> = Vec::new();
    for one in rolled {
        let host = &one.result.host;
        let Some(inventory_host) = ctx.inventory.host(host) else {
            continue;
        };
        // The file that sets the value Ansible takes (a run of dnsfix may have written
        // others for this host); else where a run of dnsfix wrote it, else the inventory.
        let path = || {
            inventory_host
                .origins
                .get("kube_resolv_conf")
                .map(|o| o.path.display().to_string())
                .or_else(|| {
                    written
                        .iter()
                        .find(|u| u.outcome == "written" && u.hosts.contains(host))
                        .map(|u| u.path.clone())
                })
                .or_else(|| ctx.inventory.path().map(|p| p.display().to_string()))
                .unwrap_or_default()
        };
        left.extend(judge_kube_resolv_conf(inventory_host, one, path));
    }
    left
}

/// The inventory's kube_resolv_conf for `host` after its rollback (`rolled`), where it
/// names a file the rollback removed: `kept` where the next Kubespray run hands it to the
/// kubelet, `unused` where Kubespray's vars for the node's OS set their own over it
/// (include_vars outranks group and host vars). Where the node's OS is not known, `kept`,
/// saying which OSes would make it moot. `path` is the inventory file to name.
fn judge_kube_resolv_conf(
    host: &Host,
    rolled: &apply::rollback::RolledBack,
    path: impl FnOnce() -> String,
) -> Option<crate::apply::record::InventoryUpdate> {
    use apply::rollback::DistroVars;
    let value = apply::rollback::removed_kube_resolv_conf(host, &rolled.result)?;
    let given = format!(
        "the inventory gives {} kube_resolv_conf: {}, a file this rollback removed",
        crate::text::escape(&host.name),
        crate::text::escape(value)
    );
    let (outcome, message) = match &rolled.distro_vars {
        DistroVars::Read(Some(vars)) => (
            "unused",
            format!(
                "{given}, but Kubespray's {}{} for the node's OS sets kube_resolv_conf: {} over \
                 group and host vars: the next Kubespray run does not hand the kubelet the \
                 inventory's (a Kubespray older than {} has no such file and does: take the \
                 setting out of the host's vars by hand then)",
                vars.file,
                match vars.formerly {
                    Some((name, renamed)) => format!(" ({name} before {renamed})"),
                    None => String::new(),
                },
                vars.kube_resolv_conf,
                vars.since
            ),
        ),
        DistroVars::Read(None) => ("kept", format!("{given}: {STARTS_NO_POD}; {BY_HAND}")),
        DistroVars::NotRead | DistroVars::Unknown(_) => (
            "kept",
            format!(
                "{given}: {STARTS_NO_POD} (unless Kubespray's vars for the node's OS set it: \
                 Ubuntu 18.04 to 24.04, Fedora{}); {BY_HAND}",
                match &rolled.distro_vars {
                    DistroVars::Unknown(why) => format!(
                        "; the node's OS was not read after the rollback: {}",
                        crate::text::escape(why)
                    ),
                    _ => String::new(),
                }
            ),
        ),
    };
    Some(crate::apply::record::InventoryUpdate {
        path: path(),
        outcome: outcome.into(),
        message,
        hosts: vec![host.name.clone()],
    })
}

/// What the next Kubespray run does with a kube_resolv_conf naming a file that is gone.
const STARTS_NO_POD: &str = "the next Kubespray run hands the kubelet a resolvConf that is not there, and it starts \
     no pod";

/// How a kept kube_resolv_conf is undone.
const BY_HAND: &str = "take the setting out of the host's vars, or override a group's in \
     host_vars, by hand (rollback edits no file where dnsfix runs)";

/// Refuses a rollback whose run changed hosts that are not in this inventory (without
/// `--limit`, which chooses hosts on purpose): rolled back elsewhere, or with no `-i` at
/// all, those hosts would keep the run's changes while the rollback said there was nothing
/// to do. The message names the inventory the run used.
fn not_in_inventory(ctx: &Context, applied: &RunRecord) -> Result<(), Error> {
    let known = |name: &str| ctx.inventory.hosts().iter().any(|h| h.name == name);
    let mut missing: Vec<&str> = applied
        .hosts
        .iter()
        .filter(|h| apply::rollback::may_have_written(h))
        .map(|h| h.host.as_str())
        .chain(
            applied
                .cluster_updates
                .iter()
                .filter(|u| apply::configmaps::may_have_written(u))
                .flat_map(|u| u.hosts.iter().map(String::as_str)),
        )
        .filter(|name| !known(name))
        .collect();
    missing.sort_by(|a, b| crate::text::natural_cmp(a, b));
    missing.dedup();
    if missing.is_empty() {
        return Ok(());
    }
    let here = match ctx.inventory.path() {
        Some(path) => format!("the inventory {}", path.display()),
        None => "the implicit localhost inventory (no -i)".to_owned(),
    };
    let hint = match &applied.inventory {
        Some(path) => format!(
            "roll it back with the run's inventory: dnsfix rollback -i {} {}",
            crate::node_script::quote(path),
            applied.run_id
        ),
        None => "pass -i with the inventory the run used".to_owned(),
    };
    let hint = format!("{hint} (or --limit to the hosts to roll back)");
    Err(Error::RunRecord(format!(
        "run {} changed host{} {} that {} not in {here}: {hint}",
        applied.run_id,
        if missing.len() == 1 { "" } else { "s" },
        crate::text::escape(&missing.join(", ")),
        if missing.len() == 1 { "is" } else { "are" },
    )))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::apply::rollback::{DistroVars, RolledBack};
    use crate::apply::{HostOutcome, Step, StepOutcome};
    use crate::plan::{HostPlan, HostStatus};

    const FILE: &str = "/etc/dnsfix/resolv.conf";

    /// node1, a Kubespray node (Kubespray HEAD on Ubuntu 22.04, its fixture's README names
    /// the sources) given the /etc/os-release `os`, whose inventory gives it dnsfix's file
    /// as kube_resolv_conf and whose rollback removed that file; its OS's Kubespray vars
    /// read from its facts by the plan's rule, as the rollback reads them.
    fn rolled_back(os: &str) -> (Host, RolledBack) {
        let raw = crate::testing::with_files(
            &crate::testing::rules_fixture("_upstream/kubespray-head-ubuntu2204-default"),
            &[("/etc/os-release", &crate::testing::os_release(os))],
        );
        let facts = crate::facts::NodeFacts::from_raw("node1", &raw);
        let distro_vars = DistroVars::Read(crate::plan::context::kubespray_distro_vars(&facts));
        let mut host = Host::new("node1");
        host.vars.insert("kube_resolv_conf".into(), json!(FILE));
        let plan = HostPlan::empty("node1", HostStatus::Changes);
        let mut result = HostResult::new(&plan, HostOutcome::Applied);
        result.steps.push(Step {
            kind: "write".into(),
            target: FILE.into(),
            outcome: StepOutcome::Removed,
            message: String::new(),
        });
        (
            host,
            RolledBack {
                result,
                distro_vars,
            },
        )
    }

    fn judged(host: &Host, rolled: &RolledBack) -> Option<(String, String)> {
        judge_kube_resolv_conf(host, rolled, || "host_vars/node1.yml".into())
            .map(|u| (u.outcome, u.message))
    }

    /// Kubespray's roles/kubernetes/node/vars/ubuntu-22.yml and fedora.yml (@46dbdd39) set
    /// kube_resolv_conf over the inventory's (include_vars outranks host_vars): the removed
    /// file is handed to no kubelet there, so no `kept` (and no exit 3); the line says why,
    /// naming the file. Before, both were kept "unless" the OS said otherwise.
    #[test]
    fn a_removed_kube_resolv_conf_is_unused_where_the_distro_vars_set_their_own() {
        for (os, file) in [
            ("ubuntu-22.04", "roles/kubernetes/node/vars/ubuntu-22.yml"),
            ("fedora-server-40", "roles/kubernetes/node/vars/fedora.yml"),
        ] {
            let (host, rolled) = rolled_back(os);
            let (outcome, message) = judged(&host, &rolled).expect("judged");
            assert_eq!(outcome, "unused", "{os}: {message}");
            assert!(
                message.contains(&format!(
                    "Kubespray's {file} for the node's OS sets kube_resolv_conf: \
                     /run/systemd/resolve/resolv.conf over group and host vars"
                )),
                "{os}: {message}"
            );
            assert!(!message.contains('\n'), "{os}: one line: {message}");
        }
        // The release that brought the file is named: an older Kubespray takes the
        // inventory's value.
        let (host, rolled) = rolled_back("ubuntu-22.04");
        let (_, message) = judged(&host, &rolled).expect("judged");
        assert!(
            message.ends_with(
                "(a Kubespray older than v2.19.0 has no such file and does: take the setting \
                 out of the host's vars by hand then)"
            ),
            "{message}"
        );
    }

    /// Fedora 33's vars file was fedora-33.yml from v2.15.0 until v2.18.0 made it fedora.yml
    /// (kubespray 81b4ffa6b, a5f88e14d): a user of those releases is told both names.
    #[test]
    fn a_fedora_33_node_is_told_its_vars_file_s_older_name() {
        let (host, rolled) = rolled_back("fedora-container-33");
        let (outcome, message) = judged(&host, &rolled).expect("judged");
        assert_eq!(outcome, "unused", "{message}");
        assert!(
            message.contains(
                "Kubespray's roles/kubernetes/node/vars/fedora.yml (fedora-33.yml before \
                 v2.18.0) for the node's OS sets kube_resolv_conf"
            ) && message.contains("older than v2.15.0"),
            "{message}"
        );
    }

    /// Debian and RHEL have no such vars file: the inventory's value is the kubelet's at the
    /// next Kubespray run, kept (exit 3) as before, without the "unless" now the OS is known.
    #[test]
    fn a_removed_kube_resolv_conf_is_kept_on_an_os_without_distro_vars() {
        for os in ["debian-12", "rhel-9.4"] {
            let (host, rolled) = rolled_back(os);
            let (outcome, message) = judged(&host, &rolled).expect("judged");
            assert_eq!(outcome, "kept", "{os}: {message}");
            assert!(
                message.starts_with(
                    "the inventory gives node1 kube_resolv_conf: /etc/dnsfix/resolv.conf, a \
                     file this rollback removed: the next Kubespray run hands the kubelet a \
                     resolvConf that is not there, and it starts no pod; take the setting out"
                ),
                "{os}: {message}"
            );
        }
    }

    /// Where the node's facts could not be read after the rollback, the OS is not known: kept,
    /// saying which OSes would make it moot. A host whose inventory names another file, or
    /// whose rollback removed none, is not judged.
    #[test]
    fn a_removed_kube_resolv_conf_of_an_unknown_os_is_kept_with_the_os_named() {
        let (host, mut rolled) = rolled_back("ubuntu-22.04");
        rolled.distro_vars = DistroVars::Unknown("timeout: timed out".into());
        let (outcome, message) = judged(&host, &rolled).expect("judged");
        assert_eq!(outcome, "kept");
        assert!(
            message.contains(
                "(unless Kubespray's vars for the node's OS set it: Ubuntu 18.04 to 24.04, \
                 Fedora; the node's OS was not read after the rollback: timeout: timed out)"
            ),
            "{message}"
        );
        let mut other = host.clone();
        other
            .vars
            .insert("kube_resolv_conf".into(), json!("/etc/resolv.conf"));
        assert_eq!(judged(&other, &rolled), None);
        rolled.result.steps[0].outcome = StepOutcome::Kept;
        assert_eq!(judged(&host, &rolled), None);
    }
}
