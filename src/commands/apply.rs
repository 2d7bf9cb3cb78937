//! `dnsfix apply [PLAN]`: carry out a saved plan exactly as saved, or a fresh one after a
//! y/N; what surrounds the executor in [`crate::apply`] (checking the plan still fits,
//! recording the run, the local inventory update, the report and the exit code).

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use super::{Context, exit};
use crate::apply::record::{self, ClusterUpdate, InventoryUpdate, RunRecord};
use crate::apply::{self, ApplyOptions, HostOutcome, HostResult, outcome_word};
use crate::config::{ApplyConfig, Config, Format};
use crate::error::Error;
use crate::inventory::Host;
use crate::plan::model::{InventoryChange, Plan};
use crate::playbook::Playbooks;
use crate::report::{self, EventSink};
use crate::util::sha256_hex;

/// 0 when everything was applied, 4 when a host was stale, 3 when a host failed, could
/// not be planned or reached, or has a blocked playbook; 1 when the answer to y/N was no.
pub fn run(config: &Config, args: &ApplyConfig) -> Result<u8, Error> {
    // Playbooks are checked before any host is contacted: a typo is exit 1, not a fleet
    // run. A saved plan is checked against the playbooks loaded now, so it loads them too.
    let playbooks = Playbooks::load(args.playbooks.as_deref())?;
    // A saved plan is read before any host is contacted, too.
    let saved = args.plan.as_deref().map(load_plan).transpose()?;
    if let (Some((plan, _)), Some(file)) = (&saved, args.plan.as_deref()) {
        limit_needs_inventory(config, plan, file)?;
    }
    // A saved plan may still be refused once the inventory is read: its warnings come after.
    let ctx = Context::unwarned(config)?;
    let run = Run {
        ctx: &ctx,
        playbooks: &playbooks,
        options: ApplyOptions {
            serial: args.serial,
            max_fail_percentage: args.max_fail_percentage,
            health_timeout: args.health_timeout,
            forks: config.forks,
            cluster: ctx.cluster_access(),
            stop: crate::apply::Stop::default(),
            plan_elsewhere: saved
                .as_ref()
                .map(|(plan, _)| crate::apply::plan_elsewhere(plan))
                .unwrap_or_default(),
        },
        update_inventory: args.update_inventory,
        plan_file: args.plan.as_deref(),
    };
    match (&saved, args.plan.as_deref()) {
        (Some((plan, sha256)), Some(file)) => {
            // Every refusal of the plan comes first: then what the reviewer approved is
            // this exact file, so which one is applied is said before anything else.
            let part = selected_part(&run, plan)?;
            eprintln!("applying {} (sha256 {sha256})", file.display());
            ctx.report_warnings();
            warn_if_the_inventory_differs(&run, plan);
            if part.hosts.is_empty() {
                eprintln!("warning: {}", none_selected(&run, plan));
            }
            apply_plan(&run, &part, false)
        }
        _ => {
            ctx.report_warnings();
            apply_fresh(&run, args)
        }
    }
}

/// `--limit` selects the part of a saved plan to apply by the hosts it selects in the
/// inventory given with `-i`. Without `-i` that is this machine's implicit inventory, never
/// the plan's hosts: for a plan made from an inventory, the pattern would refuse its names
/// or select none of them ("nothing to do on 0 hosts"), so the inventory to give is named.
fn limit_needs_inventory(config: &Config, plan: &Plan, file: &Path) -> Result<(), Error> {
    let (None, Some(limit), Some(made)) = (&config.inventory, &config.limit, &plan.inventory)
    else {
        return Ok(());
    };
    Err(Error::Usage(format!(
        "--limit selects the plan's hosts from the inventory given with -i, and none was \
         given: the plan was made from inventory {}: dnsfix apply -i {} {} --limit {}",
        crate::text::escape(&made.path),
        crate::node_script::quote(&made.path),
        crate::node_script::quote(&file.display().to_string()),
        crate::node_script::quote(limit)
    )))
}

/// Everything apply needs besides the plan.
#[derive(Debug)]
struct Run<'a> {
    ctx: &'a Context<'a>,
    /// The playbooks loaded for this run: the shipped ones and `--playbooks DIR`.
    playbooks: &'a Playbooks,
    options: ApplyOptions,
    update_inventory: bool,
    plan_file: Option<&'a Path>,
}

/// Plans now, shows the plan, asks y/N (unless `--yes`), then applies it.
fn apply_fresh(run: &Run, args: &ApplyConfig) -> Result<u8, Error> {
    let (plan, unreachable) = super::plan::make(run.ctx, run.playbooks);
    let unreachable = unreachable || super::plan::exit_code(&plan) == exit::UNREACHABLE;
    let changing = plan.hosts.iter().filter(|h| h.acts()).count();
    // The plan is shown before anything is asked: on stdout as the text report, or with
    // another format (stdout is the run record then) on stderr.
    let text = run.ctx.config.format == Format::Text;
    let shown = crate::plan::render::text(&plan, args.colour);
    let nothing = changing == 0
        && plan.cluster_changes.is_empty()
        && (plan.inventory_changes.is_empty() || !run.update_inventory);
    if text {
        let mut out = std::io::stdout().lock();
        out.write_all(shown.as_bytes())?;
        if nothing {
            writeln!(out, "nothing to apply")?;
        }
    } else if !args.yes || nothing {
        eprint!("{shown}");
        if nothing {
            eprintln!("nothing to apply");
        }
    }
    if nothing {
        // No run took place, so there is no run record: JSON gets the plan (its `kind`
        // says which), for a job that reads stdout either way.
        if run.ctx.config.format == Format::Json {
            super::print(&crate::plan::render::json(&plan))?;
        }
        let code = if blocked(&plan) {
            exit::UNREACHABLE
        } else {
            exit::OK
        };
        return Ok(super::unless_unreachable(unreachable, code));
    }
    let question = match plan.cluster_changes.len() {
        0 => format!("Apply these changes to {changing} host(s)?"),
        n => format!("Apply these changes to {changing} host(s) and {n} cluster ConfigMap key(s)?"),
    };
    if !args.yes
        && !super::confirm(
            &question,
            "not applying without confirmation: there is no terminal to ask on; review the \
             plan and pass --yes, or apply a saved plan (`dnsfix plan -o plan.json`, then \
             `dnsfix apply plan.json`)",
            "nothing applied",
        )?
    {
        return Ok(exit::BAD_INPUT);
    }
    let plan = selected_part(run, &plan)?;
    apply_plan(run, &plan, unreachable)
}

/// Reads a saved plan and checks it is one this dnsfix can apply; returns it with the
/// file's sha256, which `run` prints once nothing refuses the plan any more.
fn load_plan(path: &Path) -> Result<(Plan, String), Error> {
    let (text, sha256) = super::show::read_file(path)?;
    // Edited by hand (or cut), it is refused whole, before any host is touched.
    let plan = super::show::parse_plan(path, &text)?;
    Ok((plan, sha256))
}

/// The playbooks a plan was made with must be the ones loaded now, byte for byte, and every
/// change must come from one of them: what a change may touch is judged by the loaded
/// playbooks' `allow:`, never by anything in the plan file.
fn verify_playbooks(plan: &Plan, loaded: &crate::playbook::Playbooks) -> Result<(), Error> {
    for recorded in &plan.playbooks {
        match loaded.playbooks.iter().find(|p| p.name == recorded.name) {
            Some(p) if p.sha256 == recorded.sha256 => {}
            Some(p) => {
                return Err(Error::PlanRefused(format!(
                    "the plan was made with playbook {} from {} (sha256 {}), but {} here is different (sha256 {}): plan again, or pass the same --playbooks",
                    recorded.name, recorded.source, recorded.sha256, p.source, p.sha256
                )));
            }
            None => {
                return Err(Error::PlanRefused(format!(
                    "the plan was made with playbook {} from {}, which is not loaded: pass --playbooks with the site playbooks the plan was made with",
                    recorded.name, recorded.source
                )));
            }
        }
    }
    for change in &plan.cluster_changes {
        for reason in &change.reasons {
            if !plan.playbooks.iter().any(|p| p.name == reason.playbook) {
                return Err(Error::PlanRefused(format!(
                    "the change to the {} ConfigMap is attributed to playbook {}, which the \
                     plan does not list: refused",
                    change.configmap, reason.playbook
                )));
            }
        }
    }
    for host in &plan.hosts {
        let cluster = host.cluster.iter().flat_map(|a| a.reasons());
        for reason in host.changes.iter().flat_map(|c| c.reasons()).chain(cluster) {
            if !plan.playbooks.iter().any(|p| p.name == reason.playbook) {
                return Err(Error::PlanRefused(format!(
                    "host {}: a change is attributed to playbook {}, which the plan does not list: refused",
                    host.host, reason.playbook
                )));
            }
        }
    }
    Ok(())
}

/// A plan file may change a cluster ConfigMap only as `corefile_forward` does: the root
/// `forward .` of a coredns or nodelocaldns Corefile, every other byte kept, to the
/// `upstream_dns_servers` the inventory gives the hosts that asked for it now. Whatever
/// else a (hand-edited) plan file says is refused before anything is touched.
fn verify_cluster_change(
    change: &crate::plan::model::ConfigMapChange,
    inventory: &crate::inventory::Inventory,
) -> Result<(), Error> {
    let refuse = |why: &str| {
        Err(Error::PlanRefused(format!(
            "the plan's change to kube-system/{} ({}) {why}: refused",
            crate::text::escape(&change.configmap),
            crate::text::escape(&change.key)
        )))
    };
    if !["coredns", "nodelocaldns"].contains(&change.configmap.as_str())
        || !change.key.starts_with("Corefile")
    {
        return refuse("is not to a CoreDNS or nodelocaldns Corefile");
    }
    if sha256_hex(change.before.as_bytes()) != change.before_sha256 {
        return refuse("does not match its own before_sha256");
    }
    let after = crate::cluster::corefile::parse(&change.after).unwrap_or_default();
    let crate::cluster::corefile::RootForward::Forward(_, forward) = after.root_forward() else {
        return refuse("leaves no root `forward .`");
    };
    match crate::cluster::corefile::set_root_forward(&change.before, &forward.to) {
        Ok(Some(edit)) if edit.text == change.after => {}
        _ => return refuse("changes more than the root block's `forward .` line"),
    }
    if change.reasons.is_empty() {
        return refuse("gives no reason");
    }
    let asking: Vec<&crate::inventory::Host> = change
        .hosts
        .iter()
        .filter_map(|h| inventory.host(h))
        .collect();
    if asking.is_empty() {
        return refuse("is asked for by no host of the inventory");
    }
    for host in asking {
        let servers = host.var_list("upstream_dns_servers").unwrap_or_default();
        if servers != forward.to {
            return refuse(&format!(
                "forwards to {}, but the inventory's upstream_dns_servers for {} is now [{}]: \
                 plan again",
                forward.to.join(" "),
                host.name,
                servers.join(", ")
            ));
        }
    }
    Ok(())
}

/// Applies `plan` to the selected hosts and prints the report. Returns the exit code.
/// `plan` is the part [`selected_part`] gave.
fn apply_plan(run: &Run, plan: &Plan, planned_unreachable: bool) -> Result<u8, Error> {
    let ctx = run.ctx;
    let hosts: HashMap<String, Host> = ctx
        .hosts()
        .into_iter()
        .map(|h| (h.name.clone(), h.clone()))
        .collect();
    let run_id = record::new_run_id();
    let mut record = start_record(run, plan, &run_id)?;
    // For as long as this process lives: another run of the plan leaves this one's DNS
    // pods to it while it does, and takes them over once it is gone.
    // How another run of this state directory tells this one is still running; without it
    // such a run would take over this one's pods (a filesystem without flock).
    let _running = match record::hold(&record::state_dir(), &run_id) {
        Ok(lock) => Some(lock),
        Err(e) => {
            eprintln!(
                "warning: cannot hold this run's lock in {} ({e}): another apply of the same \
                 plan from this state directory may recreate the DNS pods this run recreates",
                record::state_dir().display()
            );
            None
        }
    };
    let changing = plan.hosts.iter().filter(|h| h.acts()).count();
    let sink: Arc<dyn EventSink> = Arc::from(report::sink_for(changing, ctx.config.progress));
    // From the first change on (the cluster's, then the hosts'), Ctrl-C lets what is under
    // way finish and starts nothing more.
    super::stop_on_interrupt(
        &run.options.stop,
        &sink,
        "writes, restarts and health checks",
    );
    // The cluster first: a CoreDNS pod restarted by the node fixes then already reads the
    // new Corefile, and one crash-looping on a loop comes up at its next restart.
    if !plan.cluster_changes.is_empty() {
        // Recorded as pending before the first write, so an interrupted run can still be
        // rolled back; then again with what was done, before any host.
        record.cluster_updates = apply::configmaps::pending(&plan.cluster_changes);
        if let Err(e) = record::save(&record::state_dir(), &record) {
            return Err(Error::RunRecord(format!(
                "cannot record the run in {} before changing the cluster: {e}",
                record::state_dir().display()
            )));
        }
        let pending = std::mem::take(&mut record.cluster_updates);
        record.cluster_updates = ctx.runtime.block_on(apply::configmaps::apply(
            &ctx.transport,
            &run.options.cluster,
            pending,
        ));
        let _ = save_record(&record);
    }
    let results = ctx.runtime.block_on(apply::apply(
        plan,
        &run_id,
        &hosts,
        Arc::clone(&ctx.transport),
        &run.options,
        run.playbooks
            .playbooks
            .iter()
            .map(|p| (p.name.clone(), p.allow.clone()))
            .collect(),
        Arc::clone(&sink),
    ));
    sink.finish();
    // A signal ending dnsfix cut the rollout off: the inventory is not edited for a run
    // whose record stays `pending` (save_record waits for the exit the same way).
    if crate::transport::children::ending() {
        crate::transport::children::wait_for_exit();
    }

    let selected: Vec<&str> = ctx.hosts().into_iter().map(|h| h.name.as_str()).collect();
    let inventory_updates = if run.update_inventory {
        let inventory = run.ctx.inventory.path();
        plan.inventory_changes
            .iter()
            .map(|change| match held(change, &selected, &results) {
                Some(update) => update,
                None => update_inventory(change, inventory),
            })
            .collect()
    } else {
        Vec::new()
    };
    // Without --update-inventory, the report's reminder counts the edits of this run's
    // hosts: those of hosts `--limit` left out are theirs to apply.
    let reminded: Vec<InventoryChange> = plan
        .inventory_changes
        .iter()
        .filter(|c| c.hosts.iter().any(|h| selected.contains(&h.as_str())))
        .cloned()
        .collect();
    record.finished = crate::util::now_rfc3339();
    record.hosts = results;
    record.inventory_updates = inventory_updates;
    let saved = save_record(&record);
    let rendered = match ctx.config.format {
        Format::Json => report::pretty_json(&record),
        Format::Text | Format::Junit | Format::Markdown => {
            report::apply::text(&record, &reminded, run.update_inventory, saved.as_deref())
        }
    };
    super::print(&rendered)?;
    Ok(exit_code(
        &record.hosts,
        planned_unreachable || blocked(plan),
        (&record.inventory_updates, &record.cluster_updates),
    ))
}

/// An inventory edit not to make in this run, as the update to report, where it names a
/// file in dnsfix's own directory (`kube_resolv_conf: /etc/dnsfix/resolv.conf`, set per
/// host) and its host has not got the node's side of the fix: left out by `--limit`, or
/// refused or failed here. The next Kubespray run would give the host a resolvConf that
/// does not exist there, and its kubelet then starts no pod. A host of the run with nothing
/// to do on the node, or one found done, has it. Other edits (a group's
/// `upstream_dns_servers`, a `kube_resolv_conf` of systemd-resolved's own file) are the fix
/// itself as Kubespray makes it: written whatever the run did, so a rollout `--limit`ed one
/// node at a time keeps them.
fn held(
    change: &InventoryChange,
    selected: &[&str],
    results: &[HostResult],
) -> Option<InventoryUpdate> {
    if !crate::plan::inventory_change::names_a_dnsfix_file(change) {
        return None;
    }
    let waiting: Vec<String> = change
        .hosts
        .iter()
        .filter_map(|host| {
            if !selected.contains(&host.as_str()) {
                return Some(format!("{host} (not in this run)"));
            }
            let result = results.iter().find(|r| &r.host == host)?;
            match result.outcome {
                HostOutcome::Applied | HostOutcome::Unchanged | HostOutcome::NothingPlanned => None,
                outcome => Some(format!("{host} ({})", outcome_word(outcome))),
            }
        })
        .collect();
    if waiting.is_empty() {
        return None;
    }
    Some(InventoryUpdate {
        path: change.path.clone(),
        hosts: change.hosts.clone(),
        outcome: "held".into(),
        message: format!(
            "not written: {} {} not got the file it names from this run, and the next \
             Kubespray run would give {} a resolvConf that is not there; apply the plan to {} \
             with --update-inventory",
            crate::text::escape(&waiting.join(", ")),
            if waiting.len() == 1 { "has" } else { "have" },
            if waiting.len() == 1 { "it" } else { "them" },
            if waiting.len() == 1 { "it" } else { "them" },
        ),
    })
}

/// Some host of `plan` has a blocked playbook: what it would have fixed stays broken, so
/// the run is not a success (3), whatever else it applied. A runbook's `apply --yes`
/// must not go green on a node that still loops.
fn blocked(plan: &Plan) -> bool {
    plan.hosts.iter().any(|h| !h.blocked.is_empty())
}

/// The part of `plan` for the selected hosts, once the whole plan is known to fit: every
/// host it changes is still in the inventory, and it was made with the playbooks loaded
/// now. Prints nothing: a refusal here is the first thing apply says.
fn selected_part(run: &Run, plan: &Plan) -> Result<Plan, Error> {
    let inventory = &run.ctx.inventory;
    // A host the plan changes must still be in the inventory: dropping it quietly would
    // report success for a change never made.
    let missing: Vec<&str> = plan
        .hosts
        .iter()
        .filter(|h| h.acts() && inventory.host(&h.host).is_none())
        .map(|h| h.host.as_str())
        .collect();
    if !missing.is_empty() {
        // Where no inventory was given, the one the plan was made with is what to give.
        let given = match (inventory.path(), &plan.inventory, run.plan_file) {
            (Some(path), _, _) => format!("the inventory {}", path.display()),
            (None, Some(made), Some(file)) => format!(
                "the implicit localhost inventory (no -i): apply it with the plan's inventory: \
                 dnsfix apply -i {} {}",
                crate::node_script::quote(&made.path),
                crate::node_script::quote(&file.display().to_string())
            ),
            (None, _, _) => "the implicit localhost inventory (no -i)".to_owned(),
        };
        return Err(Error::PlanRefused(format!(
            "the plan changes host{} {} that {} not in {given}: nothing was applied",
            if missing.len() == 1 { "" } else { "s" },
            crate::text::escape(&missing.join(", ")),
            if missing.len() == 1 { "is" } else { "are" },
        )));
    }
    verify_playbooks(plan, run.playbooks)?;
    for change in &plan.cluster_changes {
        verify_cluster_change(change, inventory)?;
    }
    let selected: Vec<&str> = run
        .ctx
        .hosts()
        .into_iter()
        .map(|h| h.name.as_str())
        .collect();
    let mut plan = plan.clone();
    plan.hosts.retain(|h| selected.contains(&h.host.as_str()));
    plan.cluster_changes
        .retain(|c| c.hosts.iter().any(|h| selected.contains(&h.as_str())));
    Ok(plan)
}

/// Why the part of a saved `plan` this run applies has no host: `--limit` selected none of
/// its hosts, or the inventory given has none of them (a plan for another inventory).
fn none_selected(run: &Run, plan: &Plan) -> String {
    const NAMED: usize = 10;
    let mut names: Vec<&str> = plan.hosts.iter().map(|h| h.host.as_str()).collect();
    let more = names.len().saturating_sub(NAMED);
    names.truncate(NAMED);
    let mut hosts = crate::text::escape(&names.join(", ")).into_owned();
    if more > 0 {
        hosts.push_str(&format!(" and {more} more"));
    }
    let inventory = match run.ctx.inventory.path() {
        Some(path) => format!(
            "the inventory {}",
            crate::text::escape(&path.display().to_string())
        ),
        None => "the implicit localhost inventory (no -i)".to_owned(),
    };
    match &run.ctx.config.limit {
        Some(limit) => format!(
            "--limit `{}` selects none of the plan's hosts ({hosts}) in {inventory}: nothing \
             is applied",
            crate::text::escape(limit)
        ),
        None => format!(
            "{inventory} has none of the plan's hosts ({hosts}): nothing is applied; give \
             the inventory the plan was made from{}",
            plan.inventory
                .as_ref()
                .map_or(String::new(), |made| format!(
                    " ({})",
                    crate::text::escape(&made.path)
                ))
        ),
    }
}

/// Warns when the inventory changed since the saved `plan` was made.
fn warn_if_the_inventory_differs(run: &Run, plan: &Plan) {
    if let (Some(saved), Some(path)) = (&plan.inventory, run.ctx.inventory.path()) {
        let now = crate::plan::inventory_change::digest(path);
        if now != saved.sha256 {
            eprintln!("warning: {}", inventory_differs(&saved.path, path));
        }
    }
}

/// The warning for an inventory whose digest is not the plan's: changed since, where it
/// is the file the plan names, or another inventory (a plan made for staging applied with
/// production's), whose hosts of the same names get the plan's changes wherever their
/// files match the plan's, so both paths are named.
fn inventory_differs(saved: &str, now: &Path) -> String {
    let same = Path::new(saved) == now
        || std::fs::canonicalize(saved).ok() == std::fs::canonicalize(now).ok();
    if same {
        format!(
            "the inventory changed since the plan was made ({}); hosts are reached with its \
             current connection settings",
            crate::text::escape(saved)
        )
    } else {
        format!(
            "the plan was made from inventory {}; this run reads {}, whose contents differ: \
             the plan's hosts are matched by name and reached with this inventory's connection \
             settings (a plan is for the inventory it was made from: plan again with this one)",
            crate::text::escape(saved),
            crate::text::escape(&now.display().to_string())
        )
    }
}

/// Records the run before any node is touched, so an interrupted run can still be rolled
/// back (the nodes' manifests say what it wrote).
fn start_record(run: &Run, plan: &Plan, run_id: &str) -> Result<RunRecord, Error> {
    let record = RunRecord {
        kind: "dnsfix-run".into(),
        format_version: record::RUN_FORMAT_VERSION,
        dnsfix_version: env!("CARGO_PKG_VERSION").into(),
        run_id: run_id.to_owned(),
        command: "apply".into(),
        started: crate::util::now_rfc3339(),
        finished: String::new(),
        // Absolute: rollback's hint must work from any directory.
        inventory: run.ctx.inventory.path().map(super::absolute_display),
        plan_file: run.plan_file.map(|p| p.display().to_string()),
        plan_created: plan.created.clone(),
        rolls_back: None,
        hosts: plan
            .hosts
            .iter()
            .filter(|h| h.acts())
            .map(|h| HostResult::new(h, HostOutcome::Pending))
            .collect(),
        inventory_updates: Vec::new(),
        cluster_updates: Vec::new(),
    };
    if let Err(e) = record::save(&record::state_dir(), &record) {
        return Err(Error::RunRecord(format!(
            "cannot record the run in {} before applying: {e} (set DNSFIX_STATE_DIR to a \
             writable directory)",
            record::state_dir().display()
        )));
    }
    Ok(record)
}

/// Saves the finished run's record; a failure is a warning (the nodes keep their part).
/// Not once a signal is ending dnsfix: the hosts (and ConfigMaps) in progress then failed
/// because their ssh was killed, and the record saved before them (`pending`, read as
/// interrupted) is the true one.
pub(super) fn save_record(record: &RunRecord) -> Option<std::path::PathBuf> {
    if crate::transport::children::ending() {
        crate::transport::children::wait_for_exit();
    }
    match record::save(&record::state_dir(), record) {
        Ok(path) => Some(path),
        Err(e) => {
            eprintln!(
                "warning: cannot record run {} in {}: {e} (the nodes keep their part under \
                 /var/lib/dnsfix/backups/{})",
                record.run_id,
                record::state_dir().display(),
                record.run_id
            );
            None
        }
    }
}

/// 4 if a host was stale, else 3 if a host failed, was locked, left untouched, or could
/// not be planned or reached, or `incomplete` (a host unreachable at planning, or blocked),
/// else 0.
pub(super) fn exit_code(
    results: &[HostResult],
    incomplete: bool,
    (updates, cluster): (&[InventoryUpdate], &[ClusterUpdate]),
) -> u8 {
    let outcomes = || {
        updates
            .iter()
            .map(|u| u.outcome.as_str())
            .chain(cluster.iter().map(|u| u.outcome.as_str()))
    };
    if results.iter().any(|r| r.outcome == HostOutcome::Stale) || outcomes().any(|o| o == "stale") {
        return exit::STALE;
    }
    let failed = results.iter().any(|r| {
        matches!(
            r.outcome,
            HostOutcome::Failed
                | HostOutcome::Locked
                | HostOutcome::Untouched
                | HostOutcome::NotPlanned
        )
    }) || outcomes().any(|o| o == "error");
    if failed || incomplete {
        exit::UNREACHABLE
    } else {
        exit::OK
    }
}

/// Where a saved plan may write in the inventory: a vars file under the `group_vars/` or
/// `host_vars/` of the inventory this run loaded (`-i`), the way there no symlink out of it.
/// An edited plan must not write anywhere else the operator can (their shell profile).
fn inventory_file_allowed(path: &Path, inventory: Option<&Path>) -> Result<(), String> {
    let refused = |why: &str| Err(format!("refused: {why}"));
    let Some(inventory) = inventory else {
        return refused("no inventory was given (-i) to update");
    };
    let base = crate::plan::inventory_change::base_dir(inventory);
    if path.components().any(|c| {
        !matches!(
            c,
            std::path::Component::Normal(_)
                | std::path::Component::RootDir
                | std::path::Component::CurDir
        )
    }) {
        return refused("not a plain path");
    }
    let inside = |root: &Path| {
        let Ok(rest) = path.strip_prefix(root) else {
            return false;
        };
        let mut parts = rest.components();
        matches!(parts.next(), Some(std::path::Component::Normal(d)) if d == "group_vars" || d == "host_vars")
            && parts.next().is_some()
    };
    let absolute_base = std::path::absolute(&base).unwrap_or_else(|_| base.clone());
    if !inside(&base) && !inside(&absolute_base) {
        return refused("not a file under the inventory's group_vars/ or host_vars/");
    }
    // The nearest directory on the way that exists, resolved, must still be in the inventory.
    // `-i hosts.yaml` in the working directory: its base is "" (the file's parent), and so
    // is a relative path's last ancestor.
    let here = |p: &Path| {
        if p.as_os_str().is_empty() {
            std::path::PathBuf::from(".")
        } else {
            p.to_path_buf()
        }
    };
    let canonical_base =
        std::fs::canonicalize(here(&base)).map_err(|e| format!("{}: {e}", base.display()))?;
    let existing = path.ancestors().skip(1).map(here).find(|a| a.exists());
    match existing.map(std::fs::canonicalize) {
        Some(Ok(dir)) if dir.starts_with(&canonical_base) => Ok(()),
        _ => refused("its directory leads out of the inventory"),
    }
}

/// Makes one local inventory change, compare-and-swap on the file the plan read.
fn update_inventory(change: &InventoryChange, inventory: Option<&Path>) -> InventoryUpdate {
    let path = Path::new(&change.path);
    let outcome = |outcome: &str, message: String| InventoryUpdate {
        path: change.path.clone(),
        outcome: outcome.into(),
        message,
        hosts: change.hosts.clone(),
    };
    if let Err(why) = inventory_file_allowed(path, inventory) {
        return outcome(
            "error",
            format!("{}: {why}", crate::text::escape(&change.path)),
        );
    }
    let now = std::fs::read(path).ok();
    let now_sha = now.as_deref().map(sha256_hex);
    let now_text = now.as_deref().map(String::from_utf8_lossy);
    // A redacted old text (what `show` drew the diff from) must be this file, where it is
    // still the one the plan was made from.
    if let (Some(shown), Some(text)) = (&change.before, &now_text)
        && crate::plan::redact::is_redacted(shown)
        && now_sha == change.before_sha256
        && !crate::plan::redact::shows(shown, text)
    {
        return outcome(
            "error",
            format!(
                "{}: the old text the plan shows is not this file: the plan file was edited",
                crate::text::escape(&change.path)
            ),
        );
    }
    // A saved plan shows secrets redacted: they come back from the file as it is now.
    let content = if crate::plan::redact::is_redacted(&change.content) {
        // Keyed markers carry no digest of their own: only the plan's after_sha256 proves
        // the values put back are the ones it was made with.
        if change.after_sha256.is_none() && crate::plan::redact::is_keyed(&change.content) {
            return outcome(
                "stale",
                format!(
                    "{}: redacted values and no after_sha256 to check them by; plan again",
                    change.path
                ),
            );
        }
        let source = now_text.as_deref().unwrap_or_default();
        match crate::plan::redact::unredact(&change.content, source) {
            Ok(c)
                if change
                    .after_sha256
                    .as_ref()
                    .is_none_or(|want| *want == sha256_hex(c.as_bytes())) =>
            {
                c
            }
            Ok(_) => {
                return outcome(
                    "stale",
                    format!(
                        "{}: the redacted values cannot be restored to what the plan wrote; plan again",
                        change.path
                    ),
                );
            }
            Err(e) => return outcome("stale", format!("{}: {e}; plan again", change.path)),
        }
    } else {
        change.content.clone()
    };
    let target_sha = sha256_hex(content.as_bytes());
    if now_sha.as_deref() == Some(target_sha.as_str()) {
        return outcome("already", String::new());
    }
    if now_sha != change.before_sha256 {
        return outcome(
            "stale",
            "the file changed since the plan; plan again".into(),
        );
    }
    // A redacted edit's keys are compared here, its values restored (the plan's own check
    // could not read them): it sets what its settings say and nothing else.
    let redacted = |t: &str| crate::plan::redact::is_redacted(t);
    if (redacted(&change.content) || change.before.as_deref().is_some_and(redacted))
        && let Err(why) =
            crate::plan::saved::settings_only(now_text.as_deref(), &content, &change.settings)
    {
        return outcome(
            "error",
            format!(
                "{}: {why}: the plan file was edited",
                crate::text::escape(&change.path)
            ),
        );
    }
    if let Some(dir) = path.parent()
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        return outcome("error", format!("{}: {e}", dir.display()));
    }
    // An inventory file is shared with the team and its tools, like its neighbours.
    match crate::util::write_atomic_mode(path, content.as_bytes(), 0o644) {
        Ok(()) => outcome("written", change.settings.join("; ")),
        Err(e) => outcome("error", e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::{ConfigMapChange, Reason};

    /// Only an edit naming dnsfix's own file waits for its hosts to have it: a group's
    /// `kube_resolv_conf` of systemd-resolved's file is written under `--limit` (a rollout
    /// one node at a time keeps it); `/etc/dnsfix/resolv.conf` for a host left out or failed
    /// is held, naming it; one applied or found done has it.
    #[test]
    fn an_edit_is_held_only_where_it_names_dnsfix_s_file_and_its_host_lacks_it() {
        let edit = |setting: &str, hosts: &[&str]| InventoryChange {
            path: "inventory/group_vars/all/all.yml".into(),
            before_sha256: None,
            before: None,
            content: String::new(),
            after_sha256: None,
            settings: vec![setting.into()],
            hosts: hosts.iter().map(|h| (*h).to_owned()).collect(),
        };
        let result = |host: &str, outcome: &str| -> HostResult {
            serde_json::from_value(serde_json::json!({
                "host": host, "outcome": outcome, "planned": [], "planned_handlers": [],
            }))
            .expect("a host result")
        };
        let group = edit(
            "kube_resolv_conf: /run/systemd/resolve/resolv.conf",
            &["node1", "node2"],
        );
        let results = [result("node2", "applied")];
        assert_eq!(held(&group, &["node2"], &results), None);
        let own = edit("kube_resolv_conf: /etc/dnsfix/resolv.conf", &["node1"]);
        let update = held(&own, &["node2"], &results).expect("held");
        assert_eq!(update.outcome, "held");
        assert!(
            update.message.contains("node1 (not in this run)"),
            "{}",
            update.message
        );
        let failed = [result("node1", "failed")];
        let update = held(&own, &["node1"], &failed).expect("held");
        assert!(
            update.message.contains("node1 (failed)"),
            "{}",
            update.message
        );
        for outcome in ["applied", "unchanged"] {
            assert_eq!(held(&own, &["node1"], &[result("node1", outcome)]), None);
        }
    }

    fn change(before: &str, after: &str) -> ConfigMapChange {
        ConfigMapChange {
            configmap: "coredns".to_owned(),
            key: "Corefile".to_owned(),
            via: "cp1".to_owned(),
            before_sha256: sha256_hex(before.as_bytes()),
            before: before.to_owned(),
            after: after.to_owned(),
            description: String::new(),
            reasons: vec![Reason {
                playbook: "corefile-upstream".to_owned(),
                task: "t".to_owned(),
                fixes: Vec::new(),
            }],
            hosts: vec!["cp1".to_owned()],
        }
    }

    fn inventory(servers: &str) -> crate::inventory::Inventory {
        let dir = std::env::temp_dir().join(format!("dnsfix-verify-{}", crate::util::nonce()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let path = dir.join("hosts.ini");
        std::fs::write(
            &path,
            format!("[kube_control_plane]\ncp1\n[all:vars]\nupstream_dns_servers={servers}\n"),
        )
        .expect("write");
        let inventory = crate::inventory::Inventory::load(&path).expect("inventory");
        let _ = std::fs::remove_dir_all(&dir);
        inventory
    }

    /// `--update-inventory` writes a saved plan's inventory change only to a vars file of the
    /// inventory this run loaded, its redacted values put back and checked by its
    /// after_sha256 (required where the markers are keyed: they carry no digest).
    #[test]
    fn an_inventory_change_is_written_only_in_the_inventory_and_checked() {
        let dir = std::env::temp_dir().join(format!("dnsfix-invupd-{}", crate::util::nonce()));
        let vars = dir.join("group_vars/all");
        std::fs::create_dir_all(&vars).expect("mkdir");
        let hosts = dir.join("hosts.yaml");
        std::fs::write(&hosts, "all:\n  hosts:\n    node1:\n").expect("write");
        let file = vars.join("all.yml");
        let before = "ansible_become_password: hunter2\nupstream_dns_servers: []\n";
        std::fs::write(&file, before).expect("write");
        let after = "ansible_become_password: hunter2\nupstream_dns_servers: [192.0.2.53]\n";
        let change = |path: &Path, after_sha256: Option<String>| InventoryChange {
            path: path.display().to_string(),
            before_sha256: Some(sha256_hex(before.as_bytes())),
            before: None,
            content: crate::plan::redact::redact(after),
            after_sha256,
            settings: vec!["upstream_dns_servers: [192.0.2.53]".into()],
            hosts: vec![],
        };
        let good = Some(sha256_hex(after.as_bytes()));
        // Elsewhere: refused, nothing written.
        for elsewhere in [
            dir.join("profile"),
            dir.join("group_vars/../x.yml"),
            std::env::temp_dir().join("x.yml"),
        ] {
            let done = update_inventory(&change(&elsewhere, good.clone()), Some(&hosts));
            assert_eq!(done.outcome, "error", "{elsewhere:?}: {}", done.message);
            assert!(!elsewhere.exists() || elsewhere == dir.join("group_vars/../x.yml"));
        }
        assert_eq!(
            update_inventory(&change(&file, good.clone()), None).outcome,
            "error"
        );
        // A relative inventory (tests run in the package's directory), as `-i
        // inventory/hosts.yaml` gives one: its vars files are relative paths too.
        let rel = Path::new("target").join(format!("dnsfix-invupd-{}", crate::util::nonce()));
        std::fs::create_dir_all(rel.join("group_vars/all")).expect("mkdir");
        let relative = inventory_file_allowed(
            &rel.join("group_vars/all/all.yml"),
            Some(&rel.join("hosts.yaml")),
        );
        let _ = std::fs::remove_dir_all(&rel);
        assert_eq!(relative, Ok(()));
        // Keyed markers without after_sha256, or one the restored file does not match: stale.
        assert_eq!(
            update_inventory(&change(&file, None), Some(&hosts)).outcome,
            "stale"
        );
        let wrong = Some(sha256_hex(b"other"));
        assert_eq!(
            update_inventory(&change(&file, wrong), Some(&hosts)).outcome,
            "stale"
        );
        assert_eq!(std::fs::read_to_string(&file).expect("read"), before);
        // A redacted edit that sets one key more than its settings say: its keys are
        // compared once its values are back (the plan's own check cannot parse them).
        let more = format!("{after}ansible_ssh_common_args: -o ProxyCommand=evil\n");
        let edited = InventoryChange {
            content: crate::plan::redact::redact(&more),
            ..change(&file, Some(sha256_hex(more.as_bytes())))
        };
        let done = update_inventory(&edited, Some(&hosts));
        assert_eq!(done.outcome, "error", "{}", done.message);
        assert!(
            done.message.contains("ansible_ssh_common_args"),
            "{}",
            done.message
        );
        assert_eq!(std::fs::read_to_string(&file).expect("read"), before);
        let done = update_inventory(&change(&file, good), Some(&hosts));
        assert_eq!(done.outcome, "written", "{}", done.message);
        assert_eq!(std::fs::read_to_string(&file).expect("read"), after);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A plan file may change a cluster ConfigMap only as `corefile_forward` does, to the
    /// servers the inventory gives now.
    #[test]
    fn a_plan_file_changes_only_a_corefiles_root_forward() {
        let inv = &inventory("['192.0.2.53']");
        let verify_cluster_change = |c: &ConfigMapChange| super::verify_cluster_change(c, inv);
        let before = ".:53 {\n    forward . /etc/resolv.conf\n    loop\n}\n";
        let good = ".:53 {\n    forward . 192.0.2.53\n    loop\n}\n";
        assert!(verify_cluster_change(&change(before, good)).is_ok());
        // The inventory says other servers now.
        let moved =
            super::verify_cluster_change(&change(before, good), &inventory("['198.51.100.53']"))
                .expect_err("other servers now");
        assert!(moved.to_string().contains("plan again"), "{moved}");
        let mut no_reason = change(before, good);
        no_reason.reasons.clear();
        assert!(verify_cluster_change(&no_reason).is_err());
        let mut stranger = change(before, good);
        stranger.hosts = vec!["elsewhere".to_owned()];
        assert!(verify_cluster_change(&stranger).is_err());
        for (what, bad) in [
            ("a plugin dropped", ".:53 {\n    forward . 192.0.2.53\n}\n"),
            (
                "a line added",
                ".:53 {\n    forward . 192.0.2.53\n    loop\n}\nexample.org {\n}\n",
            ),
            (
                "no root forward",
                "cluster.local {\n    forward . 10.0.0.1\n}\n",
            ),
        ] {
            let error = verify_cluster_change(&change(before, bad)).expect_err(what);
            assert!(error.to_string().contains("refused"), "{what}: {error}");
        }
        let mut other = change(before, good);
        other.configmap = "kube-proxy".to_owned();
        assert!(verify_cluster_change(&other).is_err());
        let mut other = change(before, good);
        other.before_sha256 = "0".repeat(64);
        assert!(verify_cluster_change(&other).is_err());
    }
}
