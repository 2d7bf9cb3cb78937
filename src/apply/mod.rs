//! Apply: carry out a plan on the nodes, safely. For each host that has changes:
//!
//! 1. gather again and compare with the plan's facts digest; a host whose facts moved is
//!    refused as stale (nothing is written there, the others go on);
//! 2. one exec runs the apply script: node lock, compare-and-swap atomic writes with
//!    backups and a manifest, sysctls and modules verified after they are set;
//! 3. the handlers run (restart or reload), each gated on the unit coming back healthy;
//! 4. after every host, facts are gathered again and the findings the plan fixes must be
//!    gone.
//!
//! Hosts without handlers go first, all at once (up to `--forks`); hosts whose units
//! restart go in batches (`--serial`), and once more than `--max-fail-percentage` of the
//! hosts failed no further batch starts. Every run is recorded locally (the run file) and
//! on each node (`/var/lib/dnsfix/backups/RUN/`), so `rollback` can undo it.

pub mod configmaps;
pub mod record;
pub mod rollback;
pub mod script;

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::diagnose::{FindingStatus, diagnose_host};
use crate::events::{Event, EventSink};
use crate::gather::{Reads, gather_session_with, run_as_root};
use crate::inventory::Host;
use crate::node_script::{self, Record, RecordKind};
use crate::plan::model::{
    Change, ClusterAction, FactDigest, HandlerAction, HandlerRun, HostPlan, HostStatus, Plan,
};
use crate::playbook::Batch;
use crate::transport::{Session, Target, Transport};

/// How apply runs.
#[derive(Debug, Clone)]
pub struct ApplyOptions {
    /// Restart batch size; `None`: the plan's (its handlers' smallest `serial`).
    pub serial: Option<Batch>,
    /// Stop starting batches once more than this share of the hosts failed.
    pub max_fail_percentage: u32,
    /// How long a restarted unit has to become healthy.
    pub health_timeout: Duration,
    pub forks: usize,
    /// Where kubectl runs (cluster actions).
    pub cluster: crate::cluster::Access,
    /// Set when the operator asks the run to stop (Ctrl-C).
    pub stop: Stop,
    /// The namespaces outside kube-system, each with its selector, where the whole saved
    /// plan recreates CoreDNS pods ([`plan_elsewhere`]), taken before `--limit` narrowed
    /// it: a selected node whose own plan holds only kube-system pods lists them too.
    pub plan_elsewhere: Vec<(String, Option<String>)>,
}

/// The namespaces outside kube-system, each with its selector, where any host of `plan`
/// recreates CoreDNS pods: for [`ApplyOptions::plan_elsewhere`], before `--limit`.
pub fn plan_elsewhere(plan: &Plan) -> Vec<(String, Option<String>)> {
    let all: Vec<ClusterAction> = plan
        .hosts
        .iter()
        .flat_map(|h| h.cluster.iter().cloned())
        .collect();
    namespaces_elsewhere(&all)
}

/// The operator's request to stop a run (the first Ctrl-C): no host starts after it, and
/// those in progress finish, their restarts and health gates included, so that none is cut
/// off between its writes and its restart. Shared by every clone.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<std::sync::atomic::AtomicBool>);

impl Stop {
    pub fn request(&self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn requested(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// A host the run did not start because it was asked to stop.
    pub fn untouched(host: &HostPlan) -> HostResult {
        let mut result = HostResult::new(host, HostOutcome::Untouched);
        result.error = Some(STOPPED.into());
        result
    }
}

/// Why a host was not started after the operator stopped the run.
pub const STOPPED: &str =
    "not started: the run was stopped (Ctrl-C) after the hosts in progress finished";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostOutcome {
    /// Changes made (or found made by an interrupted run), handlers healthy, verified.
    Applied,
    /// Everything was already in place: nothing written, nothing restarted.
    Unchanged,
    /// The plan has nothing to do here.
    NothingPlanned,
    /// The host could not be planned; apply did not touch it.
    NotPlanned,
    /// Facts changed since the plan: refused, nothing written.
    Stale,
    /// Another apply holds the node's lock: nothing written.
    Locked,
    /// Something failed (see the steps, handlers or error).
    Failed,
    /// Not started: an earlier batch failed past --max-fail-percentage, or the operator
    /// stopped the run (Ctrl-C).
    Untouched,
    /// The run was recorded as started but did not record this host's result (it was
    /// interrupted); the node's manifest says what it wrote.
    Pending,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// `write`, `sysctl` or `module`.
    pub kind: String,
    pub target: String,
    pub outcome: StepOutcome,
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub message: String,
}

/// What one step of a node script did; the names are the script's record kinds, as run
/// records have always stored them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepOutcome {
    /// Apply wrote the file, set the sysctl or loaded the module.
    Ok,
    /// Already as planned (or as before, for a rollback).
    Already,
    /// Not attempted: an earlier step failed.
    Skipped,
    /// Changed since the plan: refused.
    Stale,
    Error,
    /// Written by an interrupted earlier run of the same plan, taken over.
    Adopted,
    /// Rollback left it alone (changed since the run, or a module).
    Kept,
    /// Rollback removed a file the run created.
    Removed,
    /// Rollback put the old content or value back.
    Restored,
}

impl StepOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            StepOutcome::Ok => "ok",
            StepOutcome::Already => "already",
            StepOutcome::Skipped => "skipped",
            StepOutcome::Stale => "stale",
            StepOutcome::Error => "error",
            StepOutcome::Adopted => "adopted",
            StepOutcome::Kept => "kept",
            StepOutcome::Removed => "removed",
            StepOutcome::Restored => "restored",
        }
    }

    /// The outcome a node script record kind names, if it names one.
    pub fn parse(kind: &str) -> Option<StepOutcome> {
        Some(match kind {
            "ok" => StepOutcome::Ok,
            "already" => StepOutcome::Already,
            "skipped" => StepOutcome::Skipped,
            "stale" => StepOutcome::Stale,
            "error" => StepOutcome::Error,
            "adopted" => StepOutcome::Adopted,
            "kept" => StepOutcome::Kept,
            "removed" => StepOutcome::Removed,
            "restored" => StepOutcome::Restored,
            _ => return None,
        })
    }
}

impl std::fmt::Display for StepOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandlerResult {
    pub unit: String,
    pub action: HandlerAction,
    pub healthy: bool,
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verified {
    /// Findings the plan fixes that are gone now.
    pub fixed: Vec<String>,
    /// Findings the plan fixes that are still there: the host failed.
    pub remaining: Vec<String>,
    /// Findings failing after the changes that were not before them nor at plan time (nor
    /// are the plan's to fix): what the change brought out, reported, not failing the host
    /// ([`newly_failing`]).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub new: Vec<String>,
    /// The `dnsfix verify` queries asked from the node after the change. A failing
    /// upstream (the kubelet's resolv.conf for Default pods) fails the host; cluster DNS
    /// is reported, since its pods keep the resolv.conf they started with until recreated.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub dns: Vec<crate::verify::ProbeResult>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostResult {
    pub host: String,
    pub outcome: HostOutcome,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub stale: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub steps: Vec<Step>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub handlers: Vec<HandlerResult>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub verified: Option<Verified>,
    /// The node's DNS pods deleted through the cluster's API and their replacements.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub pods: Vec<crate::cluster::PodRecreation>,
    /// What apply left undone here without failing the host, and why: CoreDNS
    /// namespaces of the plan's other nodes not confirmed, so not listed for recreation
    /// on this one, none of whose pods is on it ([`crate::cluster::left_unconfirmed`]);
    /// DNS pods of the node being deleted (Terminating), left to their controller
    /// ([`crate::cluster::Kubectl::take_notes`]).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub notes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// What the plan could not fix here and so never tried (`PLAYBOOK: REASON (fixes
    /// IDS)`), from the plan's `blocked`: the run fails (exit 3) for them, and says so
    /// with the host.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub blocked: Vec<String>,
    /// The host failed only in that a CoreDNS pod was kept as the only Ready replica
    /// ([`crate::cluster::PodRecreation::kept`]): its files, kubelet and other pods are
    /// done, and the rollout goes on (its other nodes are what brings another replica
    /// up); it does not count against `--max-fail-percentage`, and the run still fails.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub pods_kept: bool,
    /// What the plan asked for here (kept in the run record for rollback).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub planned: Vec<Change>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub planned_handlers: Vec<HandlerRun>,
    /// The cluster actions the plan asked for here, with their reasons.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub planned_cluster: Vec<crate::plan::model::ClusterAction>,
}

impl HostResult {
    pub fn new(plan: &HostPlan, outcome: HostOutcome) -> HostResult {
        HostResult {
            host: plan.host.clone(),
            outcome,
            stale: Vec::new(),
            steps: Vec::new(),
            handlers: Vec::new(),
            verified: None,
            pods: Vec::new(),
            notes: Vec::new(),
            error: None,
            blocked: plan.blocked.iter().map(ToString::to_string).collect(),
            pods_kept: false,
            // The run record is kept: secrets in it are redacted like a saved plan's.
            planned: crate::plan::redact::redact_changes(&plan.changes),
            planned_handlers: plan.handlers.clone(),
            planned_cluster: plan.cluster.clone(),
        }
    }

    /// A host the plan does nothing on: `nothing_planned`, or `not_planned` with why, in
    /// the plan's words ("unreachable: refused: ..."), so the run record says it too.
    fn unplanned(plan: &HostPlan) -> HostResult {
        let mut result = HostResult::new(plan, HostOutcome::NothingPlanned);
        if plan.status == HostStatus::Error {
            result.outcome = HostOutcome::NotPlanned;
            result.error = Some(match &plan.error {
                Some(e) => format!("{}: {}", e.kind, e.message),
                None => "could not be planned".to_owned(),
            });
        }
        result
    }

    fn failed(mut self, error: impl Into<String>) -> HostResult {
        self.outcome = HostOutcome::Failed;
        self.error = Some(error.into());
        self
    }

    /// What failed on the node: the steps in error and the handlers that did not come back.
    pub fn failures(&self) -> Vec<String> {
        let steps = self
            .steps
            .iter()
            .filter(|s| s.outcome == StepOutcome::Error)
            .map(|s| format!("{}: {}", s.target, s.message));
        let handlers = self.handlers.iter().filter(|h| !h.healthy).map(|h| {
            let first = h.message.lines().next().unwrap_or_default();
            format!("{} did not come back healthy: {first}", h.unit)
        });
        steps.chain(handlers).collect()
    }

    /// Did this host fail (locked and interrupted count)?
    pub fn is_failure(&self) -> bool {
        matches!(
            self.outcome,
            HostOutcome::Failed | HostOutcome::Locked | HostOutcome::Pending
        )
    }

    /// Does this host count against --max-fail-percentage? Not where it failed only in
    /// keeping the last Ready CoreDNS replica ([`HostResult::pods_kept`]): stopping the
    /// rollout there would leave the nodes whose fix brings the other replicas up.
    pub fn stops_rollout(&self) -> bool {
        self.is_failure() && !self.pods_kept
    }
}

/// Applies `plan` to `hosts` (the inventory's hosts by name).
pub async fn apply(
    plan: &Plan,
    run_id: &str,
    hosts: &HashMap<String, Host>,
    transport: Arc<Transport>,
    options: &ApplyOptions,
    allows: Vec<(String, crate::playbook::Allow)>,
    sink: Arc<dyn EventSink>,
) -> Vec<HostResult> {
    let mut results: HashMap<String, HostResult> = HashMap::new();
    let mut quick = Vec::new();
    let mut rolling = Vec::new();
    for host in &plan.hosts {
        match host.status {
            HostStatus::Changes if hosts.contains_key(&host.host) => {
                if host.handlers.is_empty() {
                    quick.push(host.clone());
                } else {
                    rolling.push(host.clone());
                }
            }
            HostStatus::Changes => {
                let result = HostResult::new(host, HostOutcome::Failed)
                    .failed("the host is not in the inventory");
                results.insert(host.host.clone(), result);
            }
            HostStatus::Error | HostStatus::Clean | HostStatus::Blocked => {
                results.insert(host.host.clone(), HostResult::unplanned(host));
            }
        }
    }
    let mut ctx = Context {
        run_id: run_id.to_string(),
        transport,
        options: options.clone(),
        allows,
        sink,
        pods: tokio::sync::Mutex::new(()),
        restarted: crate::cluster::Restarted::new(not_ready_before(quick.iter().chain(&rolling))),
        looks: tokio::sync::Semaphore::new(LOOKS),
        elsewhere: Vec::new(),
        unconfirmed: None,
        answered: std::sync::Mutex::new(None),
    };
    // A plan that recreates CoreDNS outside kube-system is confirmed against the cluster
    // once, before any node is touched (stale hosts refused here, not after their kubelet
    // restarted), with the whole saved plan's namespaces (`--limit` took out the hosts
    // whose pods were there), wherever a selected host recreates DNS pods at all.
    let mut elsewhere = elsewhere_of(&quick, &rolling);
    if quick.iter().chain(&rolling).any(|h| !h.cluster.is_empty()) {
        for key in &options.plan_elsewhere {
            if !elsewhere.iter().any(|k| same_key(k, key)) {
                elsewhere.push(key.clone());
            }
        }
    }
    let (refused, unconfirmed) =
        refuse_stale_elsewhere(&ctx, &elsewhere, &mut quick, &mut rolling).await;
    for refused in refused {
        results.insert(refused.host.clone(), refused);
    }
    // Confirmed, each node lists them; not, none does (refused) and says what that left.
    match unconfirmed {
        None => ctx.elsewhere = elsewhere,
        Some(cause) => ctx.unconfirmed = Some((elsewhere, cause)),
    }
    let ctx = Arc::new(ctx);
    let total = quick.len() + rolling.len();

    // Hosts with nothing to restart: all at once.
    for result in run_batch(&ctx, hosts, quick).await {
        results.insert(result.host.clone(), result);
    }
    // Hosts with restarts: rolling batches.
    let serial = options.serial.unwrap_or_else(|| {
        rolling
            .iter()
            .flat_map(|h| h.handlers.iter().map(|r| r.serial))
            .min_by_key(|b| b.size(total.max(1)))
            .unwrap_or(Batch::Count(1))
    });
    let size = serial.size(total.max(1));
    let mut pending = rolling.into_iter().peekable();
    while pending.peek().is_some() {
        if options.stop.requested() {
            for host in pending.by_ref() {
                results.insert(host.host.clone(), Stop::untouched(&host));
            }
            break;
        }
        let failed = results.values().filter(|r| r.stops_rollout()).count();
        if total > 0 && failed * 100 > options.max_fail_percentage as usize * total {
            for host in pending.by_ref() {
                let mut result = HostResult::new(&host, HostOutcome::Untouched);
                result.error = Some(format!(
                    "not started: {failed} of {total} hosts failed, more than \
                     --max-fail-percentage {}",
                    options.max_fail_percentage
                ));
                results.insert(host.host.clone(), result);
            }
            break;
        }
        let batch: Vec<HostPlan> = pending.by_ref().take(size).collect();
        for result in run_batch(&ctx, hosts, batch).await {
            results.insert(result.host.clone(), result);
        }
    }
    plan.hosts
        .iter()
        .filter_map(|h| results.remove(&h.host))
        .collect()
}

/// A namespace outside kube-system with the label selector its CoreDNS pods are listed by.
type Selected = (String, Option<String>);

struct Context {
    run_id: String,
    transport: Arc<Transport>,
    options: ApplyOptions,
    /// The `allow:` of the playbooks loaded for this run, by playbook name (never from the
    /// plan file).
    allows: Vec<(String, crate::playbook::Allow)>,
    sink: Arc<dyn EventSink>,
    /// One node's DNS pods are recreated at a time across the run, whatever the batch
    /// size: two nodes holding the two CoreDNS replicas must not lose both at once, and
    /// each weighs the other's replica as listed under it, after the other's deletes.
    pods: tokio::sync::Mutex<()>,
    /// The nodes whose kubelet this run restarts or restarted, and when
    /// ([`noting_restart`]): a CoreDNS replica there may read not Ready until its first
    /// probe, and is waited for before a node's own is kept as the last Ready one.
    restarted: crate::cluster::Restarted,
    /// How many nodes look at the cluster for a DNS pod put there since the plan at once,
    /// outside [`Context::pods`] ([`landed_since`]): each is a kubectl session on a
    /// control-plane host, whose sshd takes 10 sessions a connection and 10 unauthenticated
    /// connections at once by default (sshd_config MaxSessions, MaxStartups).
    looks: tokio::sync::Semaphore,
    /// The namespaces outside kube-system, each with its selector, where the plan's hosts
    /// left to run recreate CoreDNS pods, confirmed as the cluster DNS Service's before
    /// any node was touched ([`elsewhere_of`]): every node's pods are listed there
    /// again, as kube-system's are.
    elsewhere: Vec<(String, Option<String>)>,
    /// Those namespaces where the cluster did not confirm them before any node was
    /// touched, with why ([`crate::cluster::Unconfirmed`]): the hosts whose own
    /// planned pods are there were refused; on the others that recreate DNS pods they
    /// are left out, and what that left there is said ([`crate::cluster::left_unconfirmed`]).
    unconfirmed: Option<(Vec<Selected>, crate::cluster::Unconfirmed)>,
    /// The control-plane host where kubectl answered last, tried first by the next node
    /// ([`crate::cluster::Access::preferring`]).
    answered: std::sync::Mutex<Option<String>>,
}

async fn run_batch(
    ctx: &Arc<Context>,
    hosts: &HashMap<String, Host>,
    batch: Vec<HostPlan>,
) -> Vec<HostResult> {
    let permits = Arc::new(Semaphore::new(ctx.options.forks.max(1)));
    let mut tasks = JoinSet::new();
    for plan in batch {
        let Some(host) = hosts.get(&plan.host).cloned() else {
            continue;
        };
        let ctx = Arc::clone(ctx);
        let permits = Arc::clone(&permits);
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await;
            // Waiting for a fork when the run was stopped: not started.
            if ctx.options.stop.requested() {
                return Stop::untouched(&plan);
            }
            ctx.sink.event(Event::HostStarted {
                host: host.name.clone(),
            });
            let result = apply_host(&ctx, &host, &plan).await;
            // A retry of this host (`--limit`) while this run goes on with others takes
            // over what it left there (record::liveness_for); unnoted, it would wait on
            // this run.
            let _ = record::note_ended(&record::state_dir(), &ctx.run_id, &host.name);
            ctx.sink.event(Event::HostDone {
                host: host.name.clone(),
                message: match &result.error {
                    Some(error) => format!("{}: {error}", outcome_word(result.outcome)),
                    None => outcome_word(result.outcome).to_string(),
                },
            });
            result
        });
    }
    let mut out = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        if let Ok(result) = joined {
            out.push(result);
        }
    }
    out
}

async fn apply_host(ctx: &Context, host: &Host, plan: &HostPlan) -> HostResult {
    let mut result = HostResult::new(plan, HostOutcome::Applied);
    let target = Target {
        host: host.name.clone(),
        connection: host.connection(),
    };
    let mut session = match ctx.transport.connect(&target).await {
        Ok(s) => s,
        Err(e) => return result.failed(unreachable(&e)),
    };
    if let Err(error) = apply_on(ctx, &mut session, &target, host, plan, &mut result).await {
        result.outcome = HostOutcome::Failed;
        result.error = Some(error);
    }
    session.close().await;
    result
}

/// A host apply or rollback could not reach, as a plan says one: "unreachable: refused:
/// connection refused by ...".
pub(crate) fn unreachable(e: &crate::transport::TransportError) -> String {
    match e.kind() {
        // Its message says so already: "cannot reach ...".
        "unreachable" => format!("unreachable: {e}"),
        kind => format!("unreachable: {kind}: {e}"),
    }
}

/// Whether a node command's error is one that never reached the node.
fn unreached(e: &crate::gather::HostError) -> Option<&crate::transport::TransportError> {
    match e {
        crate::gather::HostError::Transport(t) if t.unreached() => Some(t),
        _ => None,
    }
}

/// The word for an outcome, as reports print it.
pub fn outcome_word(outcome: HostOutcome) -> &'static str {
    match outcome {
        HostOutcome::Applied => "applied",
        HostOutcome::Unchanged => "unchanged",
        HostOutcome::NothingPlanned => "nothing planned",
        HostOutcome::NotPlanned => "not planned",
        HostOutcome::Stale => "stale",
        HostOutcome::Locked => "locked",
        HostOutcome::Failed => "failed",
        HostOutcome::Untouched => "untouched",
        HostOutcome::Pending => "interrupted",
    }
}

async fn apply_on(
    ctx: &Context,
    session: &mut Session,
    target: &Target,
    host: &Host,
    plan: &HostPlan,
    result: &mut HostResult,
) -> Result<(), String> {
    // 1. Still the node the plan was made for?
    let Some(digest) = &plan.facts else {
        return Err("the plan has no facts digest for this host".into());
    };
    // Every change names a before-state the plan recorded: a change without one (an edited
    // plan, say) is not something a reviewer saw the effect of.
    if let Some(why) = unrecorded(plan, digest) {
        return Err(format!("refused: {why}"));
    }
    // The node's marker that this plan is done (its handlers ran), so a re-run of a
    // finished plan restarts nothing.
    let marker = format!("/var/lib/dnsfix/done/{}", digest.sha256);
    // The node's note that a run of this plan failed to recreate the DNS pods: a re-run
    // that finds the changes made (by that run) recreates them again.
    let pods_failed = format!("/var/lib/dnsfix/pods-failed/{}", digest.sha256);
    let ControlFlow::Continue(facts) = gather_before(
        ctx,
        session,
        target,
        plan,
        digest,
        [&marker, &pods_failed],
        result,
    )
    .await?
    else {
        return Ok(());
    };
    let retry_pods = facts
        .files
        .get(&pods_failed)
        .is_some_and(|f| f.state == crate::facts::raw::FileState::Present);
    // The note the apply script writes before the changes and the handlers, removed once
    // the pods are recreated and the plan marked done: a run that died between left it.
    let pods_pending = script::pods_pending_note(&digest.sha256);
    let changes = permitted_changes(ctx, plan, &facts)?;

    // 2. The changes and the handlers, in one exec under the node lock.
    let names = crate::cluster::node_names(host, &facts);
    let run = run_changes(ctx, session, target, plan, digest, &changes, result);
    if noting_restart(ctx, &names, plan, run).await?.is_break() {
        return Ok(());
    }

    // 4. Verify: gather again; the findings the plan fixes must be gone.
    let after = verify_fixed(
        session,
        target,
        (host, made_here(result).then_some(&facts)),
        plan,
        [&pods_pending, &marker],
        result,
    )
    .await?;
    // 5. The cluster's side: the node's DNS pods read the kubelet's new file only when
    // they are created anew.
    let recreated = !plan.cluster.is_empty();
    // Another run of this plan made the changes and ran the handlers: the pods are its
    // business while it runs (it may be recreating them now) or once it marked the plan
    // done; left by a run that is gone, they are this run's, and so are the checks.
    let left = if result.outcome == HostOutcome::Unchanged && !retry_pods {
        left_on_node(&after, &host.name, [&pods_pending, &marker])
    } else {
        PodsLeft::ToDo
    };
    if recreated && left_to_another(&left, &pods_pending, result) {
        return Ok(());
    }
    if recreated {
        if left == PodsLeft::TakeOver {
            // Taken over: a run started meanwhile leaves them to this one.
            let claim = script::mark_done_script(&ctx.run_id, &pods_pending)?;
            let _ = note(session, target, &claim).await;
        }
        if let Err(e) = recreate_dns_pods(ctx, host, &after, &plan.cluster, result).await {
            // Without the note a re-run finds the changes made and leaves the pods as
            // they are: the user must know that the pods are theirs to recreate.
            let mark = script::mark_done_script(&ctx.run_id, &pods_failed)?;
            return Err(match note(session, target, &mark).await {
                Ok(()) => e,
                Err(why) => format!(
                    "{e}; and the note that makes a re-run recreate them ({pods_failed}) \
                     could not be written ({why}): recreate this node's DNS pods by hand"
                ),
            });
        }
        if retry_pods {
            // A note left behind only makes a later run recreate the pods once more.
            let clear = script::remove_marker_script(&pods_failed)?;
            let _ = note(session, target, &clear).await;
        }
    }
    // Cluster DNS is judged where pods were recreated: a node whose plan saw none and
    // where none was there at apply time recreated nothing.
    let recreated = recreated && (planned_pods(plan) || !result.pods.is_empty());
    verify_dns(session, target, host, plan, &after, recreated, result).await?;
    // 6. Only now is the plan done on this node: a re-run restarts nothing.
    mark_done(ctx, session, target, &marker, digest).await?;
    // After the done marker, never before: a node without either is one whose pods no
    // run of this plan is known to have recreated. (Noted wherever the plan has a
    // cluster action, pods or none.)
    if !plan.cluster.is_empty() {
        let clear = script::remove_marker_script(&pods_pending)?;
        let _ = note(session, target, &clear).await;
    }
    Ok(())
}

/// What is left of a node's DNS pods for a run that found the plan's changes made and
/// its handlers run by another run ([`RecordKind::Handled`]), by the pods-pending note
/// that run's apply script wrote before its changes (`note`: its run id), which it
/// removes only after it marked the plan done (`done`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum PodsLeft {
    /// This run made the changes or ran the handlers itself (or the pods failed before):
    /// it recreates them.
    ToDo,
    /// The note's run is still running (`running`): they are its business.
    Running,
    /// The note's run is not one this state directory recorded ([`record::Liveness::Unknown`]):
    /// it may be running elsewhere, so they are left to it, with a note on the host.
    Elsewhere(String),
    /// Recreated, verified and marked done by the other run (since this run looked).
    Done,
    /// The note's run, recorded in this state directory, is gone (killed, stopped, failed
    /// after its handlers), or there is no note and no done marker (a run of a dnsfix that
    /// wrote none): this run recreates them, verifies and marks the plan done.
    TakeOver,
}

/// Whether the node's DNS pods are another run's business ([`PodsLeft`]): its own
/// (running, done), or one's this state directory did not record. That last host fails
/// (exit 3): its pods may still be on the old file, and no run here can tell.
fn left_to_another(left: &PodsLeft, pods_pending: &str, result: &mut HostResult) -> bool {
    match left {
        PodsLeft::Running | PodsLeft::Done => true,
        PodsLeft::Elsewhere(run) => {
            result.outcome = HostOutcome::Failed;
            result.error = Some(format!(
                "the DNS pods are left to run {run}, which noted them pending on the node \
                 ({pods_pending}) and which this state directory ({}) did not record: \
                 another machine's or another state directory's run (DNSFIX_STATE_DIR), which \
                 may be recreating them now; apply from its state directory, or once that run \
                 is over remove the note on the node and apply the plan again",
                record::state_dir().display()
            ));
            true
        }
        PodsLeft::ToDo | PodsLeft::TakeOver => false,
    }
}

/// [`pods_left`] by the node's facts gathered after the apply script: its pods-pending
/// note and its done marker; a run is running where it holds its lock in this state
/// directory and is not done with `host`, and known gone only where this state directory
/// recorded it ([`record::liveness_for`]).
fn left_on_node(
    after: &crate::facts::NodeFacts,
    host: &str,
    [note, marker]: [&str; 2],
) -> PodsLeft {
    let note = after.files.get(note).and_then(|f| f.text());
    let done = after
        .files
        .get(marker)
        .is_some_and(|f| f.state == crate::facts::raw::FileState::Present);
    pods_left(note.as_deref(), done, |run| {
        record::liveness_for(&record::state_dir(), run, host)
    })
}

fn pods_left(
    note: Option<&str>,
    done: bool,
    liveness: impl Fn(&str) -> record::Liveness,
) -> PodsLeft {
    match note.map(str::trim) {
        Some(run) => match liveness(run) {
            record::Liveness::Running => PodsLeft::Running,
            record::Liveness::Unknown => PodsLeft::Elsewhere(run.to_owned()),
            record::Liveness::Gone => PodsLeft::TakeOver,
        },
        None if done => PodsLeft::Done,
        None => PodsLeft::TakeOver,
    }
}

/// Gathers the node's facts again and compares them with the plan's digest. `Break` when
/// the host's outcome is settled here: its facts moved (stale) or the plan is already done
/// on it (unchanged).
async fn gather_before(
    ctx: &Context,
    session: &mut Session,
    target: &Target,
    plan: &HostPlan,
    digest: &FactDigest,
    [marker, pods_failed]: [&str; 2],
    result: &mut HostResult,
) -> Result<ControlFlow<(), crate::facts::NodeFacts>, String> {
    // What the plan's facts name is read again to compare, but only what dnsfix would
    // read anyway; a path beyond that must turn up in the node's own gather (below).
    let allows: Vec<&crate::playbook::Allow> = ctx.allows.iter().map(|(_, a)| a).collect();
    let (mut extra, beyond): (Vec<String>, Vec<String>) = crate::plan::digest::paths(digest)
        .into_iter()
        .partition(|p| crate::plan::policy::readable_on_request(p, &allows));
    extra.push(marker.to_string());
    extra.push(pods_failed.to_string());
    // Whether this plan's handlers ran already (a restart mark its own restart removed).
    extra.push(crate::plan::digest::handled_marker(&digest.sha256));
    // The kubelet's binary is asked again: where the plan asked it, the version holds the
    // plan (`digest::reasons`); everywhere, the findings before the changes are judged
    // as verify judges those after them, without the cluster (`newly_failing`).
    let reads = Reads {
        extra,
        kubelet_version: true,
    };
    let facts =
        gather_session_with(session, target, &reads)
            .await
            .map_err(|e| match unreached(&e) {
                Some(t) => unreachable(t),
                None => format!("gather before apply: {}: {e}", e.kind()),
            })?;
    if let Some(path) = beyond
        .iter()
        .find(|p| !facts.files.contains_key(p.as_str()))
    {
        return Err(format!(
            "refused: the plan's facts name {path}, which dnsfix does not read on this node"
        ));
    }
    let stale = crate::plan::digest::reasons(plan, &facts);
    if !stale.is_empty() {
        result.outcome = HostOutcome::Stale;
        result.stale = stale;
        return Ok(ControlFlow::Break(()));
    }
    let marked = facts
        .files
        .get(marker)
        .is_some_and(|f| f.state == crate::facts::raw::FileState::Present);
    let pending = pending_changes(plan, &facts);
    if pending == 0 && marked {
        result.outcome = HostOutcome::Unchanged;
        return Ok(ControlFlow::Break(()));
    }
    if let Some(refusal) = systemd_unanswered(plan, &facts) {
        return Err(refusal);
    }
    Ok(ControlFlow::Continue(facts))
}

/// Why nothing is written where the plan restarts or reloads a unit and systemd did not
/// answer the gather's systemctl just now ([`Services::systemctl_cut`]): the files would
/// change under a running unit whose restart systemd cannot make (its job, once queued,
/// runs whenever systemd gets to it, with no health gate watching), and the node's lock
/// would be held for the handler's bound.
///
/// [`Services::systemctl_cut`]: crate::facts::node_facts::Services::systemctl_cut
fn systemd_unanswered(plan: &HostPlan, facts: &crate::facts::NodeFacts) -> Option<String> {
    let secs = facts.services.systemctl_cut?;
    let calls: Vec<String> = plan
        .handlers
        .iter()
        .map(|h| format!("`systemctl {} {}`", h.action.verb(), h.unit))
        .collect();
    if calls.is_empty() {
        return None;
    }
    Some(format!(
        "refused: the plan needs {}, and systemctl did not answer within {secs}s just now \
         (systemd, PID 1, busy or stuck): nothing was written; apply again once \
         `systemctl is-system-running` answers on the node",
        calls.join(" and ")
    ))
}

/// The plan's changes with their secrets restored, once policy allows every one of them.
///
/// Only what dnsfix (or a loaded playbook's `allow:`) may change, judged by the node's
/// facts and files as gathered now, never by what the plan file says was there: first
/// what the plan touches, then what it writes there.
fn permitted_changes(
    ctx: &Context,
    plan: &HostPlan,
    facts: &crate::facts::NodeFacts,
) -> Result<Vec<Change>, String> {
    // A playbook's `allow:` counts only on a host where that playbook asked for a change,
    // and every change must say which playbook asked for it.
    if let Some(change) = plan.changes.iter().find(|c| c.reasons().is_empty()) {
        return Err(format!(
            "refused: {} is asked for by no playbook",
            change.target()
        ));
    }
    if plan.cluster.iter().any(|a| a.reasons().is_empty()) {
        return Err("refused: a cluster action is asked for by no playbook".into());
    }
    let allows: Vec<&crate::playbook::Allow> = ctx
        .allows
        .iter()
        .filter(|(name, _)| {
            plan.changes
                .iter()
                .flat_map(|c| c.reasons())
                .any(|r| r.playbook == *name)
        })
        .map(|(_, allow)| allow)
        .collect();
    let policy = crate::plan::policy::Policy::with_allows(facts, &allows);
    crate::plan::policy::check_targets(&policy, &plan.changes)?;
    // A saved plan shows secrets redacted: they come back from the node's files, which the
    // stale check just proved are the ones the plan was made from.
    let changes = restore_secrets(&plan.changes, facts)?;
    let current: std::collections::BTreeMap<&str, String> = changes
        .iter()
        .filter_map(|c| match c {
            Change::WriteFile { path, .. } => facts
                .files
                .get(path.as_str())
                .and_then(|f| f.text())
                .map(|t| (path.as_str(), t.into_owned())),
            _ => None,
        })
        .collect();
    crate::plan::policy::check_host(&policy, &changes, &plan.handlers, |path| {
        current.get(path).map(String::as_str)
    })?;
    Ok(changes)
}

/// Runs the changes and the handlers in one exec under the node lock. `Break` when the
/// host's outcome is settled without verifying: the node was locked, there was nothing to
/// run, or a step found its file changed since the plan (stale).
async fn run_changes(
    ctx: &Context,
    session: &mut Session,
    target: &Target,
    plan: &HostPlan,
    digest: &FactDigest,
    changes: &[Change],
    result: &mut HostResult,
) -> Result<ControlFlow<()>, String> {
    let boundary = crate::node_script::Boundary::fresh();
    let handled = crate::plan::digest::handled_marker(&digest.sha256);
    let pending = (!plan.cluster.is_empty()).then(|| script::pods_pending_note(&digest.sha256));
    let text = script::apply_script(
        &boundary,
        &ctx.run_id,
        &handled,
        pending.as_deref(),
        changes,
        &plan.handlers,
        ctx.options.health_timeout.as_secs(),
    )?;
    let node_script = NodeScript {
        text,
        boundary,
        what: "apply",
        health_timeout: ctx.options.health_timeout.as_secs(),
    };
    let end = run_node_script(
        session,
        target,
        &node_script,
        &plan.handlers,
        result,
        |kind, record| step(plan, kind, record),
    )
    .await
    .map_err(|e| {
        format!("{e}; every file is its old or its new content: apply the same plan again")
    })?;
    match end {
        ScriptEnd::Locked | ScriptEnd::Nothing => return Ok(ControlFlow::Break(())),
        ScriptEnd::Done | ScriptEnd::Failed(_) => {}
    }
    if result.steps.iter().any(|s| s.outcome == StepOutcome::Stale) {
        result.outcome = HostOutcome::Stale;
        result.stale = result
            .steps
            .iter()
            .filter(|s| s.outcome == StepOutcome::Stale)
            .map(|s| {
                format!(
                    "{}: changed since the plan (sha256 now {})",
                    s.target, s.message
                )
            })
            .collect();
        // Found at the write, after the prechecks: what came before it is written, and
        // the handlers did not run (a new plan finds those files as wanted).
        let written: Vec<&str> = rollback::written(result)
            .map(|s| s.target.as_str())
            .collect();
        if !written.is_empty() {
            let units: Vec<&str> = plan.handlers.iter().map(|h| h.unit.as_str()).collect();
            let restart = if units.is_empty() {
                String::new()
            } else {
                format!(
                    "; not restarted: {}, which runs on the old settings until it is",
                    units.join(", ")
                )
            };
            let line = format!("written before that: {}{restart}", written.join(", "));
            result.stale.push(line);
        }
        return Ok(ControlFlow::Break(()));
    }
    if let ScriptEnd::Failed(why) = end {
        return Err(why);
    }
    Ok(ControlFlow::Continue(()))
}

/// `run` (the node's [`run_changes`]), the node (`names`) noted meanwhile in
/// [`Context::restarted`] where its plan restarts a unit (the kubelet, or k3s/RKE2 with
/// it): from before the exec, as another node of the batch may weigh its CoreDNS replica
/// while its kubelet restarts, to when the exec returned, after the restart. Forgotten
/// where the script ran no handler (the node locked, nothing to do, a stale file); a
/// script that failed or died may have restarted it, and one that found the handlers run
/// by another run of the plan ([`RecordKind::Handled`]) may have found them run a moment
/// before: both count as restarted when they returned, which only waits longer. So does
/// a `run` dropped before it returned (its task panicked, the run stopped: [`Ending`]):
/// a node left noted as restarting would have the others wait for it to the cap.
async fn noting_restart(
    ctx: &Context,
    names: &[String],
    plan: &HostPlan,
    run: impl std::future::Future<Output = Result<ControlFlow<()>, String>>,
) -> Result<ControlFlow<()>, String> {
    let restarts = plan
        .handlers
        .iter()
        .any(|h| h.action == HandlerAction::Restarted);
    if !restarts {
        return run.await;
    }
    ctx.restarted.restarting(names);
    let mut ending = Ending {
        restarted: &ctx.restarted,
        names,
        forget: false,
    };
    let ran = run.await;
    ending.forget = ran == Ok(ControlFlow::Break(()));
    ran
}

/// Notes the end of a node's apply script ([`noting_restart`]) when dropped, whether the
/// script returned or its future was dropped midway (a panic unwinding through it):
/// restarted now, or forgotten where the script ran no handler (`forget`). A future
/// dropped midway is noted early: the script may still run on the node and restart its
/// kubelet after that, which no one here can see; it takes a panic, and waiting longer
/// would need the node's own end.
struct Ending<'a> {
    restarted: &'a crate::cluster::Restarted,
    names: &'a [String],
    forget: bool,
}

impl Drop for Ending<'_> {
    fn drop(&mut self) {
        let at = (!self.forget).then(std::time::Instant::now);
        self.restarted.ended(self.names, at);
    }
}

/// Gathers the node's facts after apply: the findings the plan fixes must be gone.
/// Records which are fixed and which remain; returns the facts for the checks that follow.
async fn verify_fixed(
    session: &mut Session,
    target: &Target,
    (host, before): (&Host, Option<&crate::facts::NodeFacts>),
    plan: &HostPlan,
    [pods_pending, marker]: [&str; 2],
    result: &mut HostResult,
) -> Result<crate::facts::NodeFacts, String> {
    // The kubelet's version too: the findings are judged here without the cluster. The
    // pods-pending note, then the done marker, for `pods_left`: read in that order, a
    // note found removed was removed after its run marked the plan done.
    let reads = Reads {
        extra: vec![pods_pending.to_string(), marker.to_string()],
        kubelet_version: true,
    };
    let after = gather_session_with(session, target, &reads)
        .await
        .map_err(|e| format!("gather after apply: {}: {e}", e.kind()))?;
    let failing_in = |facts| -> Vec<String> {
        diagnose_host(host, facts)
            .findings()
            .filter(|f| f.status == FindingStatus::Failed)
            .map(|f| f.id.to_string())
            .collect()
    };
    let failing = failing_in(&after);
    let (remaining, fixed): (Vec<String>, Vec<String>) = plan
        .fixes
        .iter()
        .cloned()
        .partition(|id| failing.contains(id));
    let new = newly_failing(plan, &failing, &before.map(failing_in).unwrap_or_default());
    result.verified = Some(Verified {
        fixed,
        remaining: remaining.clone(),
        new,
        dns: Vec::new(),
    });
    if !remaining.is_empty() {
        return Err(format!(
            "still failing after apply: {}",
            remaining.join(", ")
        ));
    }
    Ok(after)
}

/// Whether this run made every change of the host (the facts from before them then judge
/// what they bring out, [`newly_failing`]): where an earlier run (killed before its checks)
/// or a hand made some, those facts hold them already, and plan time alone is the measure.
fn made_here(result: &HostResult) -> bool {
    result.steps.iter().all(|s| s.outcome == StepOutcome::Ok)
}

/// Of the findings `failing` after the apply, those failing neither before its changes
/// (`before`, judged as `failing` is: without the cluster, the kubelet's version from its
/// binary; none where the changes were made before this run) nor at plan time, and not the
/// plan's to fix ([`Verified::new`]). Like is
/// compared with like: the plan judged with the cluster, and a rule the cluster settles
/// (kube-proxy's masqueradeAll set in its ConfigMap) may fail without it.
fn newly_failing(plan: &HostPlan, failing: &[String], before: &[String]) -> Vec<String> {
    let mut new: Vec<String> = failing
        .iter()
        .filter(|id| !plan.fixes.contains(id) && !before.contains(id))
        .filter(|id| {
            !plan
                .findings
                .iter()
                .any(|f| &f.id == *id && f.status == FindingStatus::Failed)
        })
        .cloned()
        .collect();
    new.dedup();
    new
}

/// Real queries: the files say DNS is fixed, the servers must say so too. Records every
/// probe; fails the host when a resolver this plan gave pods or the node, or a recreated
/// DNS pod, does not answer.
async fn verify_dns(
    session: &mut Session,
    target: &Target,
    host: &Host,
    plan: &HostPlan,
    after: &crate::facts::NodeFacts,
    recreated: bool,
    result: &mut HostResult,
) -> Result<(), String> {
    let dns = crate::verify::check_node(
        session,
        target,
        host,
        after,
        (None, std::time::Duration::from_secs(3)),
        None,
    )
    .await;
    let upstream_failures: Vec<String> = dns
        .probes
        .iter()
        .filter(|p| !p.ok && p.probe.path == crate::verify::Path::Upstream)
        .map(probe_failure)
        .collect();
    if let Some(v) = &mut result.verified {
        v.dns = dns.probes;
    }
    // The queries judge what this plan changed: a plan that gave pods a new resolver must
    // leave one that answers; other plans (br_netfilter, say) only report them.
    if changes_resolver(plan) && !upstream_failures.is_empty() {
        return Err(format!(
            "the kubelet's upstream DNS does not answer after apply: {}",
            upstream_failures.join("; ")
        ));
    }
    // A plan that changed the node's own resolver (host-upstream-dns, which adds the real
    // servers after the cluster address) must leave one that answers: the node's lookups
    // go on to the next server. Elsewhere the node's resolver is only reported.
    let host: Vec<&crate::verify::ProbeResult> = result
        .verified
        .iter()
        .flat_map(|v| &v.dns)
        .filter(|p| p.probe.path == crate::verify::Path::Host)
        .collect();
    if changes_host_resolver(plan) && !host.is_empty() && host.iter().all(|p| !p.ok) {
        let host_failures: Vec<String> = host.iter().map(|p| probe_failure(p)).collect();
        return Err(format!(
            "the node's own resolver does not answer after apply: {}",
            host_failures.join("; ")
        ));
    }
    // Recreated DNS pods must answer too.
    let cluster_failures: Vec<String> = result
        .verified
        .iter()
        .flat_map(|v| &v.dns)
        .filter(|p| recreated && !p.ok && p.probe.path.is_cluster())
        .map(probe_failure)
        .collect();
    if !cluster_failures.is_empty() {
        return Err(format!(
            "cluster DNS does not answer after its pods were recreated: {}",
            cluster_failures.join("; ")
        ));
    }
    Ok(())
}

/// A failed probe as the host's error lists it: server, name and why.
fn probe_failure(p: &crate::verify::ProbeResult) -> String {
    format!(
        "{} {}: {}",
        p.probe.server,
        p.probe.name,
        p.reason.as_deref().unwrap_or("failed")
    )
}

/// Whether the plan's cluster action names DNS pods on the node (it has one without, where
/// the plan saw none there: apply looks again).
fn planned_pods(plan: &HostPlan) -> bool {
    plan.cluster
        .iter()
        .any(|ClusterAction::RecreateDnsPods { pods, .. }| !pods.is_empty())
}

/// Whether the plan gives pods a new resolver (the playbooks that change the kubelet's
/// resolv.conf).
fn changes_resolver(plan: &HostPlan) -> bool {
    changed_by(plan, &["kubelet-resolvconf", "kubelet-flag-shadow"])
}

/// Whether the plan changes the node's own resolver (its upstream servers).
fn changes_host_resolver(plan: &HostPlan) -> bool {
    changed_by(plan, &["host-upstream-dns"])
}

/// Whether one of `playbooks` changes something in the plan.
fn changed_by(plan: &HostPlan, playbooks: &[&str]) -> bool {
    plan.changes.iter().any(|c| {
        c.reasons()
            .iter()
            .any(|r| playbooks.contains(&r.playbook.as_str()))
    })
}

/// Why a node script's run failed where the node was reached. dnsfix stops waiting at the
/// timeout or past the output cap, and a lost connection is the client's news: over SSH
/// the script may run on (sshd keeps a command without a terminal going, its lock held
/// until it ends), so the message says so rather than that it died. A local script is
/// killed at its timeout or cap.
fn cut_off(what: &str, e: &crate::gather::HostError, local: bool) -> String {
    use crate::gather::HostError;
    use crate::transport::{Phase, TransportError};
    let may_run_on = format!(
        "the {what} script may still be running on the node, holding its lock until it ends"
    );
    match e {
        HostError::Transport(TransportError::Timeout {
            during: Phase::Command,
            ..
        }) if !local => format!("dnsfix stopped waiting ({}: {e}): {may_run_on}", e.kind()),
        HostError::Transport(TransportError::OutputTooLarge { .. }) if !local => {
            format!("dnsfix stopped reading ({}: {e}): {may_run_on}", e.kind())
        }
        HostError::Transport(TransportError::Disconnected { .. }) => format!(
            "the connection was lost under the {what} script ({}: {e}): {may_run_on}",
            e.kind()
        ),
        _ => format!(
            "the connection or the {what} script died ({}: {e})",
            e.kind()
        ),
    }
}

/// Runs a bookkeeping script (a marker written or removed) on the node; why it failed.
async fn note(session: &mut Session, target: &Target, script: &str) -> Result<(), String> {
    let out = crate::gather::run_as_root(session, target, script)
        .await
        .map_err(|e| e.to_string())?;
    if out.exit_status != Some(0) {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(match stderr.trim() {
            "" => format!("exit status {:?}", out.exit_status),
            said => crate::text::escape(said).into_owned(),
        });
    }
    Ok(())
}

/// Writes the node's marker that the plan is done, so a re-run restarts nothing.
async fn mark_done(
    ctx: &Context,
    session: &mut Session,
    target: &Target,
    marker: &str,
    digest: &FactDigest,
) -> Result<(), String> {
    let handled = crate::plan::digest::handled_marker(&digest.sha256);
    // Half the command's time for the lock: the other half is the message's, not a
    // timeout's.
    let wait = (session.command_timeout().as_secs() / 2).max(1);
    let mark = script::plan_done_script(&ctx.run_id, marker, &handled, wait)?;
    let out = crate::gather::run_as_root(session, target, &mark)
        .await
        .map_err(|e| format!("applied and verified, but cannot mark it done: {e}"))?;
    match out.exit_status {
        Some(0) => Ok(()),
        Some(code) if code == script::ROLLED_BACK_EXIT as u32 => Err(format!(
            "applied and verified, but not marked done: the plan's handled note ({handled}) \
             is gone, so a rollback ran on the node meanwhile (or the note could not be \
             written); apply the plan again for it to stand"
        )),
        _ => Err(format!(
            "applied and verified, but cannot mark it done at {marker}: {}",
            crate::text::escape(String::from_utf8_lossy(&out.stderr).trim())
        )),
    }
}

/// Deletes the node's CoreDNS and nodelocaldns pods through kubectl on a control-plane host
/// and waits for Ready replacements. The node's names come from its facts as gathered now,
/// never from the plan file; a replacement that does not come up fails the host.
/// CoreDNS pods the plan found outside kube-system are listed again in their namespace
/// (the plan's, by the plan's selector) and recreated there: on every node the plan
/// recreates DNS pods on, not only those where it saw one there ([`listed_elsewhere`]).
async fn recreate_dns_pods(
    ctx: &Context,
    host: &Host,
    facts: &crate::facts::NodeFacts,
    actions: &[ClusterAction],
    result: &mut HostResult,
) -> Result<(), String> {
    let names = crate::cluster::node_names(host, facts);
    let mut elsewhere = listed_elsewhere(&ctx.elsewhere, actions);
    // Those of the plan's other nodes come after the node's own.
    let also = elsewhere.split_off(namespaces_elsewhere(actions).len());
    // A node whose plan saw no DNS pod on it is looked at first, without the lock: at
    // fleet scale most such nodes have none, and a listing each under the lock would
    // serialise them. Only one where a pod landed since waits for it.
    let saw_none = actions
        .iter()
        .all(|ClusterAction::RecreateDnsPods { pods, .. }| pods.is_empty());
    if saw_none {
        let look: Vec<Selected> = elsewhere.iter().chain(&also).cloned().collect();
        if !landed_since(ctx, &names, &look, &mut result.notes).await? {
            return Ok(());
        }
    }
    let _one_node_at_a_time = ctx.pods.lock().await;
    // CoreDNS elsewhere is recreated only where the cluster's DNS Service is now: its
    // Services come with the first listing.
    // The plan's namespaces outside kube-system the cluster did not confirm before any
    // node was touched (this node's own are not among them: such hosts were refused),
    // and why: left out here as those of `also` the cluster does not confirm now.
    let mut unconfirmed = match &ctx.unconfirmed {
        Some((plan, why)) if !actions.is_empty() => Some((plan.clone(), why.clone())),
        _ => None,
    };
    let listing = if elsewhere.is_empty() && also.is_empty() {
        crate::cluster::Listing::Pods
    } else {
        crate::cluster::Listing::WithServices
    };
    let (mut kubectl, pods) = connect(ctx, listing).await.map_err(|why| {
        format!("cannot recreate the DNS pods: the cluster could not be read ({why})")
    })?;
    // Not the node's own: where the cluster does not confirm them now (a Services list
    // that timed out), they are left out, and the node's own pods recreated.
    if !also.is_empty() {
        match crate::cluster::unconfirmed_also(&mut kubectl, &pods, &also).await {
            None => elsewhere.extend(also),
            Some(e) => unconfirmed = Some((also, e)),
        }
    }
    // What that left on the node, listed (only read) before its own pods are recreated:
    // none of their pods here, a note; one here or not known, the host fails once its
    // own are done.
    let mut left = None;
    if let Some((namespaces, why)) = &unconfirmed {
        match crate::cluster::left_unconfirmed(&mut kubectl, namespaces, &names, why).await {
            Ok(note) => result.notes.push(note),
            Err(error) => left = Some(error),
        }
    }
    let done = crate::cluster::recreate_node_pods(
        &mut kubectl,
        &ctx.restarted,
        pods,
        &elsewhere,
        &names,
        ctx.options.health_timeout,
    )
    .await;
    result.notes.extend(kubectl.take_notes());
    kubectl.close().await;
    pods_outcome(actions, done, left, result)
}

/// The host's result of its pods' recreation (`done`, and `left`: what a namespace left out
/// left on the node): the pods replaced, before a failure too, for the report; a pod kept
/// as the last Ready replica; the failure, and DNS-POD-LOOP and DNS-NODELOCAL-DOWN back to
/// remaining where a pod may still loop or the cache may still be down ([`may_still_fail`]).
fn pods_outcome(
    actions: &[ClusterAction],
    done: Result<Vec<crate::cluster::PodRecreation>, crate::cluster::PodsFailed>,
    left: Option<String>,
    result: &mut HostResult,
) -> Result<(), String> {
    // Steps done before a failure are kept for the report: those pods were replaced.
    let (done, error) = match done {
        Ok(done) => (done, left),
        Err(failed) => {
            let error = format!("recreating the DNS pods: {failed}");
            let error = match left {
                Some(left) => format!("{error}; {left}"),
                None => error,
            };
            (failed.done, Some(error))
        }
    };
    result.pods = done;
    // An apply that found the node's changes made by another run of the plan still
    // deleted pods here: it did something.
    if !result.pods.is_empty() {
        result.outcome = HostOutcome::Applied;
    }
    // Kept as the last Ready replica, and nothing else undone: failed, not stopping the
    // rollout.
    result.pods_kept = error.is_none()
        && result.pods.iter().any(|p| p.kept)
        && result.pods.iter().all(|p| p.ok || p.kept);
    let failure = error.or_else(|| {
        result
            .pods
            .iter()
            .find(|p| !p.ok)
            .map(|p| format!("DNS pod {} on {}: {}", p.shown(), p.node, p.message))
    });
    if let Some(failure) = failure {
        // A pod still loops, or the node's cache is still down: the finding is not fixed,
        // whatever the node's files say (they are judged without the cluster). Not where
        // the pods left are only those kept as the last Ready replica (Ready, they do not
        // loop), nor where every pod the plan saw so was replaced by a Ready one and the
        // failure is another's (a left-out namespace's pod).
        if !result.pods_kept
            && let Some(v) = &mut result.verified
        {
            for id in may_still_fail(actions, &result.pods) {
                if let Some(i) = v.fixed.iter().position(|f| f == id) {
                    let id = v.fixed.remove(i);
                    v.remaining.push(id);
                }
            }
        }
        return Err(failure);
    }
    Ok(())
}

/// The cluster's findings a plan takes to be fixed by recreating the node's DNS pods that
/// may still hold after a recreation that failed (`done`: what it did before): DNS-POD-LOOP
/// ([`may_still_loop`]) and DNS-NODELOCAL-DOWN ([`cache_may_be_down`]). The others the plan
/// fixes through the cluster (a ConfigMap's Corefile) do not hang on the pods.
fn may_still_fail(
    actions: &[ClusterAction],
    done: &[crate::cluster::PodRecreation],
) -> Vec<&'static str> {
    use crate::diagnose::cluster::{NODELOCAL_DOWN, POD_LOOP};
    [
        (POD_LOOP, may_still_loop(actions, done)),
        (NODELOCAL_DOWN, cache_may_be_down(actions, done)),
    ]
    .into_iter()
    .filter_map(|(id, may)| may.then_some(id))
    .collect()
}

/// Whether a pod the plan saw as `seen` was replaced by a Ready one in `done`.
fn replaced_ready(
    done: &[crate::cluster::PodRecreation],
    seen: &crate::plan::model::PodState,
) -> bool {
    done.iter().any(|r| {
        r.ok && r.pod == seen.name
            && r.namespace.as_deref().unwrap_or("kube-system") == seen.namespace()
    })
}

/// Whether DNS-POD-LOOP may still hold after a recreation that failed: a pod the plan saw
/// looping (its state says `loop detected`, [`crate::cluster::DnsPod::state`]) that was
/// not replaced by a Ready one, or a replacement that is not Ready (it may loop too).
fn may_still_loop(actions: &[ClusterAction], done: &[crate::cluster::PodRecreation]) -> bool {
    done.iter().any(|r| !r.ok && !r.kept)
        || actions
            .iter()
            .flat_map(|ClusterAction::RecreateDnsPods { pods, .. }| pods)
            .filter(|p| p.state.contains("loop detected"))
            .any(|p| !replaced_ready(done, p))
}

/// Whether the node's NodeLocal DNSCache may still be down after a recreation that failed:
/// a nodelocaldns pod the plan saw looping (the plan takes one down for another reason to
/// stay down) that was not replaced by a Ready one, or a nodelocaldns replacement that is
/// not Ready. CoreDNS's pods say nothing of the cache.
fn cache_may_be_down(actions: &[ClusterAction], done: &[crate::cluster::PodRecreation]) -> bool {
    let cache = |app: &str| app.starts_with("nodelocaldns");
    done.iter().any(|r| cache(&r.app) && !r.ok && !r.kept)
        || actions
            .iter()
            .flat_map(|ClusterAction::RecreateDnsPods { pods, .. }| pods)
            .filter(|p| cache(&p.app) && p.state.contains("loop detected"))
            .any(|p| !replaced_ready(done, p))
}

/// The pods the plans of `hosts` saw not Ready, which are not waited for after a kubelet
/// restart ([`crate::cluster::recreate_node_pods`]).
fn not_ready_before<'a>(
    hosts: impl Iterator<Item = &'a HostPlan>,
) -> Vec<crate::cluster::NotReadyBefore> {
    hosts
        .flat_map(|h| &h.cluster)
        .flat_map(|ClusterAction::RecreateDnsPods { pods, .. }| pods)
        .filter_map(|p| {
            let restarts = crate::cluster::not_ready_restarts(&p.state)?;
            Some((p.namespace().to_owned(), p.name.clone(), restarts))
        })
        .collect()
}

/// kubectl where the run's cluster access says, the control-plane host that answered last
/// tried first ([`Context::answered`]), which it then is.
async fn connect(
    ctx: &Context,
    listing: crate::cluster::Listing,
) -> Result<(crate::cluster::Kubectl, Vec<crate::cluster::DnsPod>), String> {
    let answered = ctx.answered.lock().ok().and_then(|a| a.clone());
    let access = ctx.options.cluster.preferring(answered.as_deref());
    let connected = crate::cluster::Kubectl::connect_with(&ctx.transport, &access, listing).await;
    if let (Ok((kubectl, _)), Ok(mut answered)) = (&connected, ctx.answered.lock()) {
        *answered = Some(kubectl.via().to_owned());
    }
    connected
}

/// At most this many looks of [`landed_since`] at once ([`Context::looks`]).
const LOOKS: usize = 4;

/// Whether a DNS pod was put on a node (`names`) whose plan saw none there, looked at
/// without the one-node-at-a-time lock: kube-system's and those of `namespaces` (only
/// read). Where none is, the note of a namespace left out before the run
/// ([`Context::unconfirmed`], [`crate::cluster::left_unconfirmed`]) goes into `notes`, and
/// the node is done. Where the cluster cannot be read the host fails, saying it cannot tell
/// (a pod put there since would still run with the old upstream) and how to look.
async fn landed_since(
    ctx: &Context,
    names: &[String],
    namespaces: &[Selected],
    notes: &mut Vec<String>,
) -> Result<bool, String> {
    let node = crate::text::escape(names.first().map_or("", String::as_str)).into_owned();
    let unknown = |why: String| {
        format!(
            "cannot tell whether a CoreDNS or nodelocaldns pod was put on this node since the \
             plan (which saw none here): the cluster could not be read ({why}); one put here \
             since, if any, still runs with the old upstream: look (kubectl get pods -A -o wide \
             --field-selector spec.nodeName={node}) and recreate it by hand, or run the same \
             plan again"
        )
    };
    let _look = ctx
        .looks
        .acquire()
        .await
        .map_err(|e| unknown(e.to_string()))?;
    let (mut kubectl, pods) = connect(ctx, crate::cluster::Listing::Pods)
        .await
        .map_err(unknown)?;
    let landed = crate::cluster::landed_on_node(&mut kubectl, &pods, namespaces, names).await;
    let landed = match landed {
        Ok(false) => match &ctx.unconfirmed {
            Some((left_out, why)) => {
                crate::cluster::left_unconfirmed(&mut kubectl, left_out, names, why)
                    .await
                    .map(|note| {
                        notes.push(note);
                        false
                    })
            }
            None => Ok(false),
        },
        Ok(true) => Ok(true),
        Err(why) => Err(unknown(why)),
    };
    kubectl.close().await;
    landed
}

/// The hosts of `quick` and `rolling` whose plan recreates CoreDNS pods outside kube-system,
/// taken out of them and refused, where the cluster does not confirm the namespace and
/// selector their plan names as the cluster DNS Service's now
/// ([`crate::cluster::Kubectl::confirm_elsewhere`], one listing for the whole run): stale,
/// where the cluster shows another Service or none; untouched, where the cluster or its
/// Services could not be read. `elsewhere`: the namespaces and selectors to confirm, the
/// hosts' own and the whole saved plan's ([`ApplyOptions::plan_elsewhere`]); with the
/// refused hosts, None where the cluster confirmed them all, else why not. Nothing is
/// asked of the cluster where there are none.
async fn refuse_stale_elsewhere(
    ctx: &Context,
    elsewhere: &[(String, Option<String>)],
    quick: &mut Vec<HostPlan>,
    rolling: &mut Vec<HostPlan>,
) -> (Vec<HostResult>, Option<crate::cluster::Unconfirmed>) {
    if elsewhere.is_empty() {
        return (Vec::new(), None);
    }
    let listing = crate::cluster::Listing::WithServices;
    let (outcome, why, cause) = match connect(ctx, listing).await {
        Err(why) => (
            HostOutcome::Untouched,
            format!(
                "not started: the plan recreates CoreDNS pods outside kube-system, and the cluster could not be read to confirm where its DNS Service is ({why})"
            ),
            crate::cluster::Unconfirmed::Unlisted(format!("the cluster could not be read ({why})")),
        ),
        Ok((mut kubectl, pods)) => {
            let confirmed = kubectl.confirm_elsewhere(&pods, elsewhere).await;
            kubectl.close().await;
            match confirmed {
                Ok(()) => return (Vec::new(), None),
                Err(e @ crate::cluster::Unconfirmed::Unlisted(_)) => {
                    (HostOutcome::Untouched, format!("not started: {e}"), e)
                }
                Err(e @ crate::cluster::Unconfirmed::Moved(_)) => (
                    HostOutcome::Stale,
                    format!(
                        "{e}; the plan is stale: make a new plan (nothing on this node was touched)"
                    ),
                    e,
                ),
            }
        }
    };
    let mut refused = Vec::new();
    for hosts in [quick, rolling] {
        hosts.retain(|h| {
            if namespaces_elsewhere(&h.cluster).is_empty() {
                return true;
            }
            let mut result = HostResult::new(h, outcome);
            result.error = Some(why.clone());
            refused.push(result);
            false
        });
    }
    (refused, Some(cause))
}

/// The namespaces outside kube-system, each with its selector, of the pods of every host
/// of `quick` and `rolling`. Once [`refuse_stale_elsewhere`] took out the hosts it did not
/// confirm, those left are confirmed: it refuses all of them or none.
fn elsewhere_of(quick: &[HostPlan], rolling: &[HostPlan]) -> Vec<(String, Option<String>)> {
    let all: Vec<ClusterAction> = quick
        .iter()
        .chain(rolling)
        .flat_map(|h| h.cluster.iter().cloned())
        .collect();
    namespaces_elsewhere(&all)
}

/// The namespaces outside kube-system where a node's CoreDNS pods are listed again at
/// apply time: those of its own `actions`' pods, and `confirmed` (the whole plan's,
/// [`elsewhere_of`]) wherever it recreates DNS pods at all. A CoreDNS pod the
/// Deployment put on the node after the plan, in a namespace where the plan saw none on
/// it (the node then ran only its nodelocaldns pod), reads the node's old file as one
/// the plan saw would: recreated too, as a kube-system CoreDNS pod that lands there is.
/// Nothing is widened: the namespace and selector are the plan's, confirmed, and only
/// pods on the node running a `coredns` container are taken there.
fn listed_elsewhere(
    confirmed: &[(String, Option<String>)],
    actions: &[ClusterAction],
) -> Vec<(String, Option<String>)> {
    let mut listed = namespaces_elsewhere(actions);
    if actions.is_empty() {
        return listed;
    }
    for key in confirmed {
        if !listed.iter().any(|k| same_key(k, key)) {
            listed.push(key.clone());
        }
    }
    listed
}

/// The namespaces outside kube-system whose DNS pods `actions` recreate, each with the
/// selector the plan listed them by, each once.
fn namespaces_elsewhere(actions: &[ClusterAction]) -> Vec<(String, Option<String>)> {
    let mut found: Vec<(String, Option<String>)> = Vec::new();
    for ClusterAction::RecreateDnsPods { pods, .. } in actions {
        for pod in pods.iter().filter(|p| p.namespace() != "kube-system") {
            let key = (pod.namespace().to_owned(), pod.selector.clone());
            if !found.iter().any(|k| same_key(k, &key)) {
                found.push(key);
            }
        }
    }
    found
}

/// Whether two namespaces with their selectors list the same pods: the same namespace,
/// and selectors of the same pairs in whatever order ([`crate::cluster::same_selector`]),
/// as the cluster DNS Service is confirmed by.
fn same_key(a: &(String, Option<String>), b: &(String, Option<String>)) -> bool {
    a.0 == b.0 && crate::cluster::same_selector(&a.1, &b.1)
}

/// `changes` with the redacted values of every file put back from the file on the node;
/// each restored content must hash to the plan's `after_sha256`. A redacted old text (what
/// `show` drew the diff from) must be the node's file, where that file is still the one
/// the plan was made from: its other lines are no one else's.
fn restore_secrets(
    changes: &[Change],
    facts: &crate::facts::NodeFacts,
) -> Result<Vec<Change>, String> {
    use crate::plan::redact::{is_redacted, unredact};
    let mut out = changes.to_vec();
    for change in &mut out {
        let Change::WriteFile {
            path,
            content,
            after_sha256,
            before,
            before_sha256,
            ..
        } = change
        else {
            continue;
        };
        let shown_before = before.as_deref().filter(|b| is_redacted(b));
        if !is_redacted(content) && shown_before.is_none() {
            continue;
        }
        let source = facts
            .files
            .get(path.as_str())
            .and_then(|f| f.text())
            .ok_or_else(|| format!("{path}: redacted in the plan, and not readable on the node"))?;
        if let (Some(shown), Some(want)) = (shown_before, before_sha256.as_deref())
            && crate::util::sha256_hex(source.as_bytes()) == want
            && !crate::plan::redact::shows(shown, &source)
        {
            return Err(format!(
                "{path}: the old text the plan shows is not the file it was made from: the \
                 plan file was edited"
            ));
        }
        if !is_redacted(content) {
            continue;
        }
        let restored = unredact(content, &source).map_err(|e| format!("{path}: {e}"))?;
        if crate::util::sha256_hex(restored.as_bytes()) != *after_sha256 {
            return Err(format!(
                "{path}: the redacted values cannot be restored to what the plan wrote"
            ));
        }
        *content = restored;
    }
    Ok(out)
}

/// The first change whose before-state the plan's digest does not record.
fn unrecorded(plan: &HostPlan, digest: &crate::plan::model::FactDigest) -> Option<String> {
    plan.changes.iter().find_map(|change| match change {
        Change::WriteFile { path, .. } if !digest.files.contains_key(path) => Some(format!(
            "the plan writes {path} but records nothing of what was there"
        )),
        Change::Sysctl { name, .. } if !digest.sysctls.contains_key(name) => Some(format!(
            "the plan sets sysctl {name} but records nothing of its value"
        )),
        Change::LoadModule { name, .. } if !digest.modules.contains_key(name) => Some(format!(
            "the plan loads module {name} but records nothing of it"
        )),
        _ => None,
    })
}

/// How a node script ended.
#[derive(Debug)]
pub(crate) enum ScriptEnd {
    /// Every step (and handler) succeeded.
    Done,
    /// Something failed: what, for the host's error.
    Failed(String),
    /// Another apply holds the node lock (the result says so).
    Locked,
    /// The script had nothing to do on this node (a rollback of a run that wrote nothing).
    Nothing,
}

/// A script for one node: its text, its record boundary, what it is (for messages), and
/// the health timeout its handlers wait with.
pub(crate) struct NodeScript {
    pub text: String,
    pub boundary: crate::node_script::Boundary,
    pub what: &'static str,
    pub health_timeout: u64,
}

impl NodeScript {
    /// How long the script may run past the command timeout: each handler's restart may
    /// take five health timeouts and its health wait one more (common.sh `handler`), and
    /// 20 s beyond: the wait's last look may start just before its end and take its
    /// `systemctl is-active` (5 s at most), healthz (3 s), `systemctl show` (5 s), the
    /// second between looks and the journal read (5 s). A script cut off there would leave
    /// the node mid-restart with its lock held, and the journal lines that say why unread.
    fn handler_time(&self, handlers: usize) -> Duration {
        let one = Duration::from_secs(self.health_timeout.saturating_mul(6).saturating_add(20));
        one.saturating_mul(u32::try_from(handlers).unwrap_or(u32::MAX))
    }
}

/// Runs an apply or rollback script on the node and reads its records into `result`:
/// steps (made by `make_step`), handler results, and how it ended. A dead connection or
/// script is an `Err` saying so.
pub(crate) async fn run_node_script(
    session: &mut Session,
    target: &Target,
    node_script: &NodeScript,
    handlers: &[HandlerRun],
    result: &mut HostResult,
    make_step: impl Fn(StepOutcome, &Record) -> Step,
) -> Result<ScriptEnd, String> {
    let what = node_script.what;
    let reads = session.command_timeout();
    session.set_command_timeout(reads.saturating_add(node_script.handler_time(handlers.len())));
    let output = run_as_root(session, target, &node_script.text).await;
    session.set_command_timeout(reads);
    let local = matches!(session, Session::Local(_));
    let output = output.map_err(|e| {
        if let Some(t) = unreached(&e) {
            return unreachable(t);
        }
        cut_off(what, &e, local)
    })?;
    // The first record may start the output: a line of its own, as a banner line is.
    let mut stdout = Vec::with_capacity(output.stdout.len() + 1);
    stdout.push(b'\n');
    stdout.extend_from_slice(&output.stdout);
    // Without a batch no header is malformed.
    let records = node_script::records(&stdout, &node_script.boundary, false).unwrap_or_default();
    let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
    if records.first().map(|r| &r.kind) != Some(&RecordKind::Begin) {
        return Err(format!("the {what} script did not run: {stderr}"));
    }
    let mut finished = false;
    for record in &records[1..] {
        match &record.kind {
            RecordKind::Done => finished = true,
            RecordKind::Failed => {}
            RecordKind::Nothing => {
                result.outcome = HostOutcome::NothingPlanned;
                return Ok(ScriptEnd::Nothing);
            }
            RecordKind::Locked => {
                result.outcome = HostOutcome::Locked;
                result.error = Some(format!("another apply is running here: {}", record.args));
                return Ok(ScriptEnd::Locked);
            }
            RecordKind::Fatal => return Ok(ScriptEnd::Failed(record.args.clone())),
            // An earlier run of the same plan made every change and ran the handlers.
            RecordKind::Handled => result.outcome = HostOutcome::Unchanged,
            RecordKind::Healthy | RecordKind::Unhealthy => {
                result
                    .handlers
                    .extend(script::handler_result(record, handlers));
            }
            kind => result.steps.push(match StepOutcome::parse(kind.as_str()) {
                Some(outcome) => make_step(outcome, record),
                // The scripts send no other kind: one that does speaks another protocol.
                None => Step {
                    kind: "write".into(),
                    target: record.args.clone(),
                    outcome: StepOutcome::Error,
                    message: format!(
                        "the {what} script sent an unknown record `{}`",
                        kind.as_str()
                    ),
                },
            }),
        }
    }
    if finished {
        return Ok(ScriptEnd::Done);
    }
    let failures = result.failures();
    Ok(ScriptEnd::Failed(if failures.is_empty() {
        format!("the {what} script stopped early: {stderr}")
    } else {
        failures.join("; ")
    }))
}

/// How many changes are not yet in place on the node.
fn pending_changes(plan: &HostPlan, facts: &crate::facts::NodeFacts) -> usize {
    plan.changes
        .iter()
        .filter(|change| match change {
            Change::WriteFile {
                path, after_sha256, ..
            } => {
                facts.files.get(path).and_then(|f| f.sha256.as_deref())
                    != Some(after_sha256.as_str())
            }
            Change::Sysctl { name, after, .. } => {
                facts
                    .sysctl_live(name)
                    .map(|f| script::normalize_value(&String::from_utf8_lossy(&f.content)))
                    != Some(script::normalize_value(after))
            }
            Change::LoadModule { name, .. } => facts.module_loaded(name) != Some(true),
        })
        .count()
}

fn step(plan: &HostPlan, outcome: StepOutcome, record: &Record) -> Step {
    let target = record.args.split(' ').next().unwrap_or("").to_string();
    let what = plan
        .changes
        .iter()
        .find_map(|c| match c {
            Change::WriteFile { path, .. } if *path == target => Some("write"),
            Change::Sysctl { name, .. } if *name == target => Some("sysctl"),
            Change::LoadModule { name, .. } if *name == target => Some("module"),
            _ => None,
        })
        .unwrap_or("write");
    let message = match outcome {
        StepOutcome::Stale => record
            .args
            .split_once(' ')
            .map_or("", |(_, s)| s)
            .to_string(),
        _ => record.text(),
    };
    Step {
        kind: what.to_string(),
        target,
        outcome,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where systemd did not answer the gather's systemctl, a plan that restarts or
    /// reloads a unit is refused before anything is written, naming each call; a plan
    /// without handlers, or a node whose systemctl answered, goes on.
    #[test]
    fn a_restart_systemd_cannot_make_now_is_refused_before_writing() {
        let mut plan = HostPlan::empty("node2", crate::plan::model::HostStatus::Changes);
        let mut raw = crate::testing::raw_from(&[("/etc/resolv.conf", "nameserver 192.0.2.53\n")]);
        let answered = crate::facts::NodeFacts::from_raw("node2", &raw);
        crate::testing::set_command(&mut raw, "units", "", 124);
        crate::testing::set_command(&mut raw, "systemctl-cut", "3\n", 0);
        let cut = crate::facts::NodeFacts::from_raw("node2", &raw);
        assert_eq!(cut.services.systemctl_cut, Some(3));
        assert_eq!(systemd_unanswered(&plan, &cut), None, "no handler");
        for (unit, action) in [
            ("kubelet", HandlerAction::Restarted),
            ("systemd-resolved", HandlerAction::Reloaded),
        ] {
            plan.handlers.push(HandlerRun {
                name: format!("{} {unit}", action.verb()),
                unit: unit.into(),
                action,
                serial: crate::playbook::Batch::Count(1),
                reasons: Vec::new(),
            });
        }
        assert_eq!(systemd_unanswered(&plan, &answered), None);
        assert_eq!(
            systemd_unanswered(&plan, &cut).as_deref(),
            Some(
                "refused: the plan needs `systemctl restart kubelet` and `systemctl reload \
                 systemd-resolved`, and systemctl did not answer within 3s just now (systemd, \
                 PID 1, busy or stuck): nothing was written; apply again once `systemctl \
                 is-system-running` answers on the node"
            )
        );
    }

    /// A run's context with `cluster` as its kubectl access, nothing else of note.
    fn context(cluster: crate::cluster::Access) -> Context {
        let transport = Transport::new(crate::transport::SshOptions::default()).expect("transport");
        Context {
            run_id: "test".to_owned(),
            transport: Arc::new(transport),
            options: ApplyOptions {
                serial: None,
                max_fail_percentage: 0,
                health_timeout: Duration::from_secs(1),
                forks: 1,
                cluster,
                stop: Stop::default(),
                plan_elsewhere: Vec::new(),
            },
            allows: Vec::new(),
            sink: Arc::new(crate::events::Silent),
            pods: tokio::sync::Mutex::new(()),
            restarted: crate::cluster::Restarted::default(),
            looks: tokio::sync::Semaphore::new(LOOKS),
            elsewhere: Vec::new(),
            unconfirmed: None,
            answered: std::sync::Mutex::new(None),
        }
    }

    /// A node whose plan saw no DNS pod on it is looked at without the one-node-at-a-time
    /// lock (at fleet scale, a listing per such node under it serialised them all, each
    /// waiting out a dead first control-plane host in turn), and where the cluster cannot
    /// be read the host fails saying plainly that it cannot tell whether a pod landed, and
    /// how to look. Before, the look waited for the lock, and the error was the generic
    /// "cannot recreate the DNS pods".
    #[tokio::test]
    async fn a_node_the_plan_saw_no_dns_pod_on_is_looked_at_without_the_lock() {
        let ctx = context(crate::cluster::Access::ControlPlane(Vec::new()));
        let _held = ctx.pods.lock().await;
        let mut notes = Vec::new();
        let looked = tokio::time::timeout(
            Duration::from_secs(10),
            landed_since(&ctx, &["node1".to_owned()], &[], &mut notes),
        )
        .await
        .expect("looked at without the lock");
        let error = looked.expect_err("the cluster could not be read");
        assert!(
            error.starts_with(
                "cannot tell whether a CoreDNS or nodelocaldns pod was put on this node since \
                 the plan (which saw none here): the cluster could not be read (the inventory \
                 has no kube_control_plane host to run kubectl on)"
            ),
            "{error}"
        );
        assert!(
            error.contains("kubectl get pods -A -o wide --field-selector spec.nodeName=node1"),
            "{error}"
        );
        assert!(notes.is_empty());
    }

    /// The looks of nodes the plan saw no DNS pod on share a few kubectl sessions on the
    /// control plane (sshd's MaxSessions and MaxStartups default to 10): with every one
    /// taken, the next waits. Before, up to `--serial` nodes opened one each at once.
    #[tokio::test]
    async fn the_looks_outside_the_lock_are_few_at_once() {
        let ctx = context(crate::cluster::Access::ControlPlane(Vec::new()));
        let _taken = ctx.looks.acquire_many(LOOKS as u32).await.expect("permits");
        let mut notes = Vec::new();
        let waited = tokio::time::timeout(
            Duration::from_millis(300),
            landed_since(&ctx, &["node1".to_owned()], &[], &mut notes),
        )
        .await;
        assert!(
            waited.is_err(),
            "looked with every permit taken: {waited:?}"
        );
    }

    /// A planned CoreDNS pod, ready, in `namespace` (by `k8s-app=coredns`) or kube-system.
    fn pod(name: &str, namespace: Option<&str>) -> crate::plan::model::PodState {
        crate::plan::model::PodState {
            name: name.to_owned(),
            app: "coredns".to_owned(),
            state: "ready".to_owned(),
            namespace: namespace.map(str::to_owned),
            selector: namespace.map(|_| "k8s-app=coredns".to_owned()),
        }
    }

    /// The namespaces apply lists outside kube-system: those of the plan's pods there,
    /// each with its selector, once; kube-system's (a plan saved before pods carried a
    /// namespace among them) are listed as before.
    #[test]
    fn pods_outside_kube_system_are_listed_in_their_namespace() {
        let action = |pods| ClusterAction::RecreateDnsPods {
            node: vec!["node1".to_owned()],
            pods,
            via: "cp1".to_owned(),
            reasons: Vec::new(),
        };
        let actions = [
            action(vec![
                pod("nodelocaldns-x", None),
                pod("dns-coredns-a", Some("coredns")),
            ]),
            action(vec![
                pod("dns-coredns-b", Some("coredns")),
                pod("coredns-c", Some("kube-system")),
            ]),
        ];
        assert_eq!(
            namespaces_elsewhere(&actions),
            [("coredns".to_owned(), Some("k8s-app=coredns".to_owned()))]
        );
        assert!(namespaces_elsewhere(&actions[..0]).is_empty());
    }

    /// A selector given in another order (a hand-edited plan: `b=2,a=1` beside `a=1,b=2`)
    /// selects the same pods, as the Service's confirmation already says: the namespace is
    /// listed once, not twice (before, its pods were listed and recreated twice).
    #[test]
    fn a_selector_in_another_order_is_listed_once() {
        let pod = |name: &str, selector: &str| crate::plan::model::PodState {
            name: name.to_owned(),
            app: "coredns".to_owned(),
            state: "ready".to_owned(),
            namespace: Some("coredns".to_owned()),
            selector: Some(selector.to_owned()),
        };
        let actions = [ClusterAction::RecreateDnsPods {
            node: vec!["node1".to_owned()],
            pods: vec![
                pod("dns-coredns-a", "a=1,b=2"),
                pod("dns-coredns-b", "b=2,a=1"),
            ],
            via: "cp1".to_owned(),
            reasons: Vec::new(),
        }];
        let one = [("coredns".to_owned(), Some("a=1,b=2".to_owned()))];
        assert_eq!(namespaces_elsewhere(&actions), one);
        let confirmed = [("coredns".to_owned(), Some("b=2,a=1".to_owned()))];
        assert_eq!(listed_elsewhere(&confirmed, &actions), one);
    }

    /// A node where the plan saw no CoreDNS pod of the cluster DNS Service's namespace
    /// (only its kube-system nodelocaldns pod) has that namespace listed again at apply
    /// time, by the selector the plan confirmed, as kube-system is: a CoreDNS pod the
    /// Deployment put there after the plan is recreated. Before, only the namespaces of
    /// the node's own planned pods were listed and such a pod kept the old upstream. A
    /// node without a cluster action lists nothing; a plan without CoreDNS elsewhere lists
    /// kube-system alone, as before.
    #[test]
    fn every_node_lists_the_plans_confirmed_namespace() {
        let host = |name: &str, pods: Vec<crate::plan::model::PodState>| {
            let mut plan: HostPlan =
                serde_json::from_value(serde_json::json!({"host": name, "status": "changes",
                    "findings": [], "changes": [], "handlers": [], "blocked": [], "notes": [],
                    "fixes": [], "remaining": []}))
                .expect("host plan");
            plan.cluster = vec![ClusterAction::RecreateDnsPods {
                node: vec![name.to_owned()],
                pods,
                via: "cp1".to_owned(),
                reasons: Vec::new(),
            }];
            plan
        };
        let seen = host("node1", vec![pod("dns-coredns-a", Some("coredns"))]);
        let unseen = host("node2", vec![pod("nodelocaldns-x", None)]);
        let confirmed = elsewhere_of(std::slice::from_ref(&seen), std::slice::from_ref(&unseen));
        let coredns = [("coredns".to_owned(), Some("k8s-app=coredns".to_owned()))];
        assert_eq!(confirmed, coredns);
        assert_eq!(listed_elsewhere(&confirmed, &unseen.cluster), coredns);
        assert_eq!(listed_elsewhere(&confirmed, &seen.cluster), coredns);
        assert!(listed_elsewhere(&confirmed, &[]).is_empty());
        let home = elsewhere_of(&[], std::slice::from_ref(&unseen));
        assert!(listed_elsewhere(&home, &unseen.cluster).is_empty());
    }

    /// A k3s config.yaml whose token a saved plan shows redacted: its old text, put back
    /// from the node's file, must be that file, where the file is still the one the plan
    /// was made from; an edited line beside the marker is refused before anything is
    /// written. A file changed since is left to the compare-and-swap (stale), not called
    /// edited.
    #[test]
    fn a_redacted_old_text_must_be_the_nodes_file() {
        let path = "/etc/rancher/k3s/config.yaml";
        let file = "token: K10abc::server:s3cr3t\nresolv-conf: /etc/resolv.conf\n";
        let new = "token: K10abc::server:s3cr3t\nresolv-conf: /run/systemd/resolve/resolv.conf\n";
        let facts = crate::testing::facts_from(&[(path, file)]);
        let shown = crate::plan::redact::redact;
        let change = |before: String| Change::WriteFile {
            path: path.into(),
            description: String::new(),
            before_sha256: Some(crate::util::sha256_hex(file.as_bytes())),
            before: Some(before),
            after_sha256: crate::util::sha256_hex(new.as_bytes()),
            content: shown(new),
            mode: None,
            reasons: Vec::new(),
        };
        assert!(crate::plan::redact::is_redacted(&shown(file)));
        let restored = restore_secrets(&[change(shown(file))], &facts).expect("as made");
        assert!(matches!(&restored[0], Change::WriteFile { content, .. } if content == new));

        let edited = shown(file).replace("/etc/resolv.conf", "/etc/elsewhere.conf");
        let why = restore_secrets(&[change(edited.clone())], &facts).expect_err("refused");
        assert!(
            why.contains("old text the plan shows is not the file"),
            "{why}"
        );

        let moved = crate::testing::facts_from(&[(path, "token: other\n")]);
        let why = restore_secrets(&[change(edited)], &moved).expect_err("not restorable");
        assert!(!why.contains("old text"), "{why}");
    }

    /// A node whose plan restarts its kubelet is a restarted one for the other nodes' step 7
    /// from before its apply script runs (a node of the same batch may weigh its CoreDNS
    /// replica while it restarts) to the script's end, when it is noted restarted then;
    /// one whose script ran no handler (locked, nothing to do, stale) is forgotten, and a
    /// plan that restarts nothing is never noted. One whose script failed, or whose future
    /// was dropped before it returned (its task panicked), is noted restarted then: before,
    /// a dropped one stayed restarting for good, and the others waited for it for ever.
    #[tokio::test]
    async fn a_kubelet_restart_is_noted_for_the_other_nodes() {
        let ctx = context(crate::cluster::Access::ControlPlane(Vec::new()));
        let names = ["node2".to_owned()];
        let mut plan = HostPlan::empty("node2", crate::plan::model::HostStatus::Changes);
        plan.handlers = vec![HandlerRun {
            name: "restart kubelet".into(),
            unit: "kubelet.service".into(),
            action: HandlerAction::Restarted,
            serial: crate::playbook::Batch::Count(1),
            reasons: Vec::new(),
        }];
        let before = std::time::Instant::now();
        let run = async {
            assert_eq!(
                ctx.restarted.when("node2"),
                Some(None),
                "noted while it runs"
            );
            Ok(ControlFlow::Continue(()))
        };
        let ran = noting_restart(&ctx, &names, &plan, run).await;
        assert_eq!(ran, Ok(ControlFlow::Continue(())));
        let at = ctx.restarted.when("node2").flatten().expect("restarted");
        assert!(at >= before);
        let locked = async { Ok(ControlFlow::Break(())) };
        noting_restart(&ctx, &names, &plan, locked).await.ok();
        assert_eq!(ctx.restarted.when("node2"), None);
        // A script that failed may have restarted the kubelet: noted restarted when it
        // returned.
        let before = std::time::Instant::now();
        let failed = async { Err("health gate failed".to_owned()) };
        noting_restart(&ctx, &names, &plan, failed).await.ok();
        let at = ctx
            .restarted
            .when("node2")
            .flatten()
            .expect("failed: restarted");
        assert!(at >= before);
        // One whose future is dropped before it returned (its task panicked): noted
        // restarted when dropped, not left restarting for ever.
        ctx.restarted.ended(&names, None);
        let before = std::time::Instant::now();
        let never = std::future::pending();
        let run = noting_restart(&ctx, &names, &plan, never);
        let dropped = tokio::time::timeout(std::time::Duration::from_millis(50), run).await;
        assert!(dropped.is_err(), "{dropped:?}");
        let at = ctx
            .restarted
            .when("node2")
            .flatten()
            .expect("dropped: restarted");
        assert!(at >= before);
        plan.handlers.clear();
        ctx.restarted.ended(&names, None);
        let run = async { Err("died".to_owned()) };
        noting_restart(&ctx, &names, &plan, run).await.ok();
        assert_eq!(ctx.restarted.when("node2"), None);
    }

    /// An apply script that runs `before`, sends its `begin` record, runs `between`, then
    /// sends its `done` record.
    fn framed(before: &str, between: &str) -> NodeScript {
        let boundary = crate::node_script::Boundary::fresh();
        let text = format!(
            "{before}printf '%s' '{}'; {between}printf '%s' '{}'",
            boundary.header(&RecordKind::Begin, ""),
            boundary.header(&RecordKind::Done, "")
        );
        NodeScript {
            text,
            boundary,
            what: "apply",
            health_timeout: 0,
        }
    }

    /// A record as a write step, for `run_node_script`.
    fn write_step(outcome: StepOutcome, record: &Record) -> Step {
        Step {
            kind: "write".into(),
            target: record.args.clone(),
            outcome,
            message: String::new(),
        }
    }

    /// An apply script that waits on a restarted unit runs past the command timeout (a read's
    /// bound) by its handlers' waits; one without handlers does not.
    #[tokio::test]
    async fn a_script_with_handlers_may_run_past_the_command_timeout() {
        let options = crate::transport::SshOptions {
            command_timeout: Duration::from_secs(1),
            ..Default::default()
        };
        let mut session = Session::Local(crate::transport::LocalTransport::connect(&options));
        let target = Target {
            host: "localhost".into(),
            connection: crate::inventory::Inventory::local().hosts()[0].connection(),
        };
        let handler = HandlerRun {
            name: "restart kubelet".into(),
            unit: "kubelet.service".into(),
            action: Default::default(),
            serial: crate::playbook::Batch::Count(1),
            reasons: Vec::new(),
        };
        let mut plan = HostPlan::empty("localhost", crate::plan::model::HostStatus::Changes);
        plan.handlers = vec![handler.clone()];
        let script = framed("sleep 2; ", "");
        let mut result = HostResult::new(&plan, HostOutcome::Pending);
        let make = write_step;
        let end = run_node_script(
            &mut session,
            &target,
            &script,
            &[handler],
            &mut result,
            make,
        )
        .await
        .expect("the handler's wait bounds it");
        assert!(matches!(end, ScriptEnd::Done), "{end:?}");
        assert_eq!(
            session.command_timeout(),
            Duration::from_secs(1),
            "restored"
        );
        let error = run_node_script(&mut session, &target, &script, &[], &mut result, make)
            .await
            .expect_err("no handler: the command timeout");
        assert!(error.contains("timeout"), "{error}");
    }

    /// A node script whose output passes the session's cap (a hostile or broken node) is
    /// ended there and fails the host as a connection lost mid-way does, naming the cap:
    /// nothing it printed counts as a record, not even the `done` after the flood.
    #[tokio::test]
    async fn a_script_whose_output_passes_the_cap_fails_as_a_lost_connection() {
        let mut session = Session::Local(crate::transport::LocalTransport::connect(
            &crate::transport::SshOptions::default(),
        ));
        session.set_output_cap(crate::transport::OutputCap {
            stdout: 4096,
            stderr: 4096,
        });
        let target = Target {
            host: "localhost".into(),
            connection: crate::inventory::Inventory::local().hosts()[0].connection(),
        };
        let plan = HostPlan::empty("localhost", crate::plan::model::HostStatus::Changes);
        let script = framed("", "head -c 5000 /dev/zero; ");
        let mut result = HostResult::new(&plan, HostOutcome::Pending);
        let make = write_step;
        let error = run_node_script(&mut session, &target, &script, &[], &mut result, make)
            .await
            .expect_err("past the cap");
        assert_eq!(
            error,
            "the connection or the apply script died (output_too_large: the command's output on this machine passed 4096 bytes, the most dnsfix reads of one command; nothing of it was used)"
        );
        assert!(result.steps.is_empty());
    }

    /// A node script dnsfix stopped waiting for, or whose connection was lost, may run on
    /// over SSH (sshd keeps a command without a terminal going): the message says so, not
    /// that it died. A local one is killed at its timeout; any other failure reads as
    /// before.
    #[test]
    fn a_script_cut_off_over_ssh_may_still_be_running() {
        use crate::gather::HostError;
        use crate::transport::{Phase, TransportError};
        let timeout = HostError::Transport(TransportError::Timeout {
            address: "root@10.0.0.5:22".into(),
            seconds: 90,
            during: Phase::Command,
        });
        assert_eq!(
            cut_off("apply", &timeout, false),
            "dnsfix stopped waiting (timeout: timed out after 90s while running the command on \
             root@10.0.0.5:22): the apply script may still be running on the node, holding its \
             lock until it ends"
        );
        assert_eq!(
            cut_off("apply", &timeout, true),
            "the connection or the apply script died (timeout: timed out after 90s while \
             running the command on root@10.0.0.5:22)"
        );
        let lost = HostError::Transport(TransportError::Disconnected {
            address: "root@10.0.0.5:22".into(),
            detail: "the connection closed before the command ended".into(),
        });
        assert_eq!(
            cut_off("rollback", &lost, false),
            "the connection was lost under the rollback script (disconnected: connection to \
             root@10.0.0.5:22 lost: the connection closed before the command ended): the \
             rollback script may still be running on the node, holding its lock until it \
             ends"
        );
        let flood = HostError::Transport(TransportError::OutputTooLarge {
            address: "root@10.0.0.5:22".into(),
            cap: "16 MiB".into(),
        });
        assert_eq!(
            cut_off("apply", &flood, false),
            "dnsfix stopped reading (output_too_large: the command's output on root@10.0.0.5:22 \
             passed 16 MiB, the most dnsfix reads of one command; nothing of it was used): the \
             apply script may still be running on the node, holding its lock until it ends"
        );
        let other = HostError::Transport(TransportError::Other("boom".into()));
        assert_eq!(
            cut_off("apply", &other, false),
            "the connection or the apply script died (error: boom)"
        );
    }

    /// DNS-POD-LOOP stays fixed after a failed recreation only where every pod the plan saw
    /// looping was replaced by a Ready one and no replacement is not Ready: a failure of
    /// another's (a left-out namespace's stale pod) does not move it to remaining.
    #[test]
    fn a_pod_loop_is_fixed_where_every_looping_pod_was_replaced() {
        let pod = |name: &str, state: &str| crate::plan::model::PodState {
            name: name.to_owned(),
            app: "coredns".to_owned(),
            state: state.to_owned(),
            namespace: None,
            selector: None,
        };
        let actions = [ClusterAction::RecreateDnsPods {
            node: vec!["node1".to_owned()],
            pods: vec![
                pod("coredns-a", "CrashLoopBackOff, 7 restarts, loop detected"),
                pod("nodelocaldns-b", "ready"),
            ],
            via: "cp1".to_owned(),
            reasons: Vec::new(),
        }];
        let step = |name: &str, ok: bool| crate::cluster::PodRecreation {
            pod: name.to_owned(),
            app: "coredns".to_owned(),
            node: "node1".to_owned(),
            replacement: ok.then(|| format!("{name}-new")),
            ok,
            message: String::new(),
            namespace: None,
            kept: false,
        };
        assert!(!may_still_loop(&actions, &[step("coredns-a", true)]));
        // Not replaced (the failure came first), or its replacement not Ready.
        assert!(may_still_loop(&actions, &[]));
        assert!(may_still_loop(&actions, &[step("coredns-a", false)]));
        // Another pod's replacement not Ready: it may loop too.
        assert!(may_still_loop(
            &actions,
            &[step("coredns-a", true), step("nodelocaldns-b", false)]
        ));
        // The same name in another namespace is not the pod the plan saw.
        let mut elsewhere = step("coredns-a", true);
        elsewhere.namespace = Some("coredns".to_owned());
        assert!(may_still_loop(&actions, &[elsewhere]));
    }

    /// A recreation of the node's DNS pods that failed before its NodeLocal DNSCache pod,
    /// crash-looping on plugin/loop when the plan was made, was replaced by a Ready one: the
    /// run record has DNS-NODELOCAL-DOWN among what remains, with DNS-POD-LOOP (the node's
    /// files, judged without the cluster, say nothing of the cache). Before, it stayed
    /// among what was fixed. Replaced, with CoreDNS's replacement the one not Ready, the
    /// cache is up: only DNS-POD-LOOP moves.
    #[test]
    fn a_cache_not_replaced_after_a_failed_recreation_is_not_fixed() {
        use crate::diagnose::cluster::{COREFILE_UPSTREAM, NODELOCAL_DOWN, POD_LOOP};
        let looping = "CrashLoopBackOff, 9 restarts, loop detected";
        let pod = |name: &str, app: &str| crate::plan::model::PodState {
            name: name.to_owned(),
            app: app.to_owned(),
            state: looping.to_owned(),
            namespace: None,
            selector: None,
        };
        let actions = [ClusterAction::RecreateDnsPods {
            node: vec!["node1".to_owned()],
            pods: vec![
                pod("coredns-a", "coredns"),
                pod("nodelocaldns-b", "nodelocaldns"),
            ],
            via: "cp1".to_owned(),
            reasons: Vec::new(),
        }];
        let step = |name: &str, app: &str, ok: bool| crate::cluster::PodRecreation {
            pod: name.to_owned(),
            app: app.to_owned(),
            node: "node1".to_owned(),
            replacement: ok.then(|| format!("{name}-new")),
            ok,
            message: String::new(),
            namespace: None,
            kept: false,
        };
        let outcome = |done: Vec<crate::cluster::PodRecreation>| {
            let plan = HostPlan::empty("node1", crate::plan::model::HostStatus::Changes);
            let mut result = HostResult::new(&plan, HostOutcome::Pending);
            result.verified = Some(Verified {
                fixed: [POD_LOOP, NODELOCAL_DOWN, COREFILE_UPSTREAM]
                    .map(str::to_owned)
                    .to_vec(),
                remaining: Vec::new(),
                new: Vec::new(),
                dns: Vec::new(),
            });
            let failed = crate::cluster::PodsFailed {
                done,
                error: "timed out".to_owned(),
                left: Vec::new(),
            };
            let error = pods_outcome(&actions, Err(failed), None, &mut result)
                .expect_err("the recreation failed");
            assert!(error.contains("timed out"), "{error}");
            let v = result.verified.expect("verified");
            (v.fixed, v.remaining)
        };
        // CoreDNS's pod replaced, then the failure: the cache's pod was never replaced.
        let (fixed, remaining) = outcome(vec![step("coredns-a", "coredns", true)]);
        assert_eq!(fixed, [COREFILE_UPSTREAM]);
        assert_eq!(remaining, [POD_LOOP, NODELOCAL_DOWN]);
        // The cache's replacement not Ready.
        let (fixed, remaining) = outcome(vec![
            step("coredns-a", "coredns", true),
            step("nodelocaldns-b", "nodelocaldns", false),
        ]);
        assert_eq!(fixed, [COREFILE_UPSTREAM]);
        assert_eq!(remaining, [POD_LOOP, NODELOCAL_DOWN]);
        // The cache replaced by a Ready one, CoreDNS's replacement not Ready.
        let (fixed, remaining) = outcome(vec![
            step("nodelocaldns-b", "nodelocaldns", true),
            step("coredns-a", "coredns", false),
        ]);
        assert_eq!(fixed, [NODELOCAL_DOWN, COREFILE_UPSTREAM]);
        assert_eq!(remaining, [POD_LOOP]);
    }

    /// After the apply, a finding failing that the plan did not find failing (nor fix) is
    /// new (one the plan could not judge too); one the plan found failing, or fixes, or
    /// failing before the changes as verify judges, is not.
    #[test]
    fn findings_failing_since_the_plan_are_new() {
        use crate::diagnose::finding::{FindingStatus, Severity};
        let mut plan = HostPlan::empty("node1", crate::plan::model::HostStatus::Changes);
        plan.fixes = vec!["DNS-KUBELET-LOOPBACK".to_owned()];
        let finding = |id: &str, status| crate::plan::model::FindingRecord {
            id: id.to_owned(),
            severity: Severity::Warning,
            status,
            summary: String::new(),
            evidence: Vec::new(),
            playbook: None,
        };
        plan.findings = vec![
            finding("DNS-BRIDGE-NF-OFF", FindingStatus::Failed),
            finding("DNS-NAMESERVER-LIMIT", FindingStatus::Unknown),
        ];
        let failing = [
            "DNS-KUBELET-LOOPBACK",
            "DNS-BRIDGE-NF-OFF",
            "DNS-NAMESERVER-LIMIT",
            "DNS-STRAY-SEARCH",
        ]
        .map(str::to_owned);
        assert_eq!(
            newly_failing(&plan, &failing, &[]),
            ["DNS-NAMESERVER-LIMIT", "DNS-STRAY-SEARCH"]
        );
        // Failing before the changes, judged as after them (without the cluster): not new,
        // whatever the plan judged with the cluster.
        assert_eq!(
            newly_failing(&plan, &failing, &["DNS-STRAY-SEARCH".to_owned()]),
            ["DNS-NAMESERVER-LIMIT"]
        );
    }

    /// A run that finds the plan's changes made and its handlers run by another run goes
    /// on to what is left, by the pods-pending note that run's script wrote before its
    /// changes and the done marker: the note's run still running, nothing (the pods are
    /// its business); gone (killed mid-recreation, after its handlers or its checks, run
    /// on another machine), the pods, the checks and the marker; no note and the plan
    /// marked done, nothing; neither (a run of a dnsfix that wrote no note), all of it.
    /// Before, every such run stopped there, "unchanged", whatever was left.
    #[test]
    fn a_handled_plan_goes_on_to_what_its_run_left() {
        let live = |run: &str| match run {
            "20261201T010000Z-live0000" => record::Liveness::Running,
            "20261201T010000Z-else0000" => record::Liveness::Unknown,
            _ => record::Liveness::Gone,
        };
        let (running, dead) = ("20261201T010000Z-live0000\n", "20261201T010000Z-dead0000\n");
        for done in [false, true] {
            assert_eq!(pods_left(Some(running), done, live), PodsLeft::Running);
            assert_eq!(pods_left(Some(dead), done, live), PodsLeft::TakeOver);
            // Not recorded here: maybe running elsewhere, so not taken over.
            assert_eq!(
                pods_left(Some("20261201T010000Z-else0000"), done, live),
                PodsLeft::Elsewhere("20261201T010000Z-else0000".into())
            );
            // A note whose run cannot be named (cut short, empty) is no one's to wait for.
            assert_eq!(pods_left(Some(""), done, live), PodsLeft::TakeOver);
        }
        assert_eq!(pods_left(None, true, live), PodsLeft::Done);
        assert_eq!(pods_left(None, false, live), PodsLeft::TakeOver);
    }

    /// Run records written before steps had a typed outcome must still read.
    #[test]
    fn step_outcomes_keep_the_record_kinds_as_names() {
        for name in [
            "ok", "already", "skipped", "stale", "error", "adopted", "kept", "removed", "restored",
        ] {
            let outcome = StepOutcome::parse(name).expect("a step kind");
            assert_eq!(outcome.as_str(), name);
            assert_eq!(serde_json::json!(outcome), serde_json::json!(name));
            let back: StepOutcome =
                serde_json::from_value(serde_json::json!(name)).expect("reads the saved name");
            assert_eq!(back, outcome);
        }
        assert_eq!(StepOutcome::parse("healthy"), None);
    }
}
