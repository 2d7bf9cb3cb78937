//! Runs the playbooks against one host's facts and findings, on a virtual copy of the
//! node's files, and records what apply would change. Pure: no I/O.
//!
//! Semantics (docs/playbooks.md):
//! - a playbook runs on a host when the host matches `hosts`, one of its `fixes` failed
//!   there (when it lists any), and its `when` is true;
//! - tasks run in order on the files as earlier tasks (and playbooks) left them, so two
//!   tasks editing one file give one change with the final content;
//! - `fail` blocks the playbook on that host: its changes there are dropped and the reason
//!   is shown instead;
//! - handlers fire once per host, after every playbook, if a task that notifies them
//!   changed something; the same unit restarted by several playbooks restarts once.
//!
//! This file is the host loop and the state it shares; each module a task or handler can
//! use has its own file.

mod args;
mod args_flag;
mod boot;
mod corefile_forward;
mod dns_pods;
mod env_flag;
mod error;
mod fail;
mod inventory_set;
mod modprobe;
mod note;
mod restart_due;
mod service;
mod state;
mod sysctl;
mod template;
mod yaml_set;

use std::collections::{BTreeMap, BTreeSet};

use minijinja::Environment;
use minijinja::Value as Ctx;
use serde_json::Value as Json;

pub use crate::plan::digest::{digest_core, file_digest};
pub use error::{PlanError, PlanErrorKind, Site};
pub use modprobe::MODULES_FILE;
pub use state::{ConfigMapSet, InventorySet};
pub use sysctl::SYSCTL_FILE;

use super::model::{Blocked, Change, ClusterAction, FactDigest, HandlerRun, Note, Reason};
use crate::facts::NodeFacts;
use crate::playbook::{Action, Handler, Playbook, Task, Value};
use crate::util::sha256_hex;
use state::State;

/// What planning one host produced.
#[derive(Debug, Default)]
pub struct HostRun {
    pub changes: Vec<Change>,
    pub handlers: Vec<HandlerRun>,
    pub blocked: Vec<Blocked>,
    pub notes: Vec<Note>,
    /// What the cluster's API is asked to do once the handlers ran.
    pub cluster: Vec<ClusterAction>,
    /// The stated no-op reasons: tasks that found their target as wanted, playbooks whose
    /// `when` was false.
    pub unchanged: Vec<Note>,
    pub inventory_sets: Vec<InventorySet>,
    /// Cluster ConfigMap keys this host's playbooks want changed.
    pub configmap_sets: Vec<ConfigMapSet>,
    pub digest: FactDigest,
}

/// One host's run: what the tasks render with and read, and the facts they depended on.
struct Run<'a> {
    env: &'a Environment<'static>,
    facts: &'a NodeFacts,
    /// What the cluster said about this node.
    cluster: &'a crate::cluster::NodeView,
    /// The cluster's Corefiles, as read (none when it was not).
    corefiles: &'a [crate::cluster::Corefile],
    /// The host's context (`super::context::build`), under each playbook's vars.
    base: &'a Ctx,
    digest: FactDigest,
}

/// A playbook's own variables: `fixes`, `playbook` and its `vars`.
type Scope = serde_json::Map<String, Json>;

/// What the playbooks that ran leave behind besides the state: their handlers and the
/// vars those see, and the playbooks a `fail` blocked.
#[derive(Default)]
struct Ran<'p> {
    /// (playbook, handler name) → its definition.
    handlers: BTreeMap<(String, String), (&'p Playbook, &'p Handler)>,
    scopes: BTreeMap<String, Scope>,
    blocked: Vec<Blocked>,
}

/// The playbook var naming which of its failing findings a playbook addresses on a host.
const FIXES_HERE: &str = "fixes_here";

/// What one task did.
enum Outcome {
    /// Nothing to record (a note, an inventory request).
    Unchanged,
    /// The target is already as the task wants it: the stated no-op reason.
    Already(String),
    /// Something changed; the text says what, for handler reasons, and which file changed
    /// (none for a sysctl or a module).
    Changed { what: String, file: Option<String> },
    /// `fail` ran: the playbook is blocked on this host.
    Failed(String),
}

/// Plans one host. `base` is the context from [`super::context::build`]; `playbooks` are
/// those whose `hosts` pattern selects it, and `failing` the findings that failed there.
pub fn plan_host(
    playbooks: &[&Playbook],
    env: &Environment<'static>,
    facts: &NodeFacts,
    base: &Ctx,
    failing: &BTreeSet<String>,
    (cluster, corefiles): (&crate::cluster::NodeView, &[crate::cluster::Corefile]),
) -> Result<HostRun, PlanError> {
    let mut run = Run {
        env,
        facts,
        cluster,
        corefiles,
        base,
        digest: FactDigest {
            boot_id: facts.boot_id.clone(),
            ..FactDigest::default()
        },
    };
    let mut state = State::default();
    let mut ran = Ran::default();
    for playbook in playbooks {
        run.playbook(playbook, failing, &mut state, &mut ran)?;
    }
    let handlers = run.handlers(&state, &ran)?;
    Ok(run.finish(state, handlers, ran.blocked))
}

/// Places an error at `site` in `playbook`.
fn at(playbook: &Playbook, site: Site) -> impl FnOnce(PlanErrorKind) -> PlanError + '_ {
    move |kind| PlanError::new(playbook, site, kind)
}

impl<'a> Run<'a> {
    /// The context a playbook's tasks render with: its scope over the host's.
    fn ctx(&self, scope: &Scope) -> Ctx {
        minijinja::value::merge_maps([Ctx::from(minijinja::value::Serde(scope)), self.base.clone()])
    }

    /// Runs `playbook` on the state, if it applies here. A `fail` puts the state back as
    /// it was before the playbook and records it as blocked.
    fn playbook<'p>(
        &mut self,
        playbook: &'p Playbook,
        failing: &BTreeSet<String>,
        state: &mut State,
        ran: &mut Ran<'p>,
    ) -> Result<(), PlanError> {
        let fixing: Vec<String> = playbook
            .fixes
            .iter()
            .filter(|id| failing.contains(*id))
            .cloned()
            .collect();
        if !playbook.fixes.is_empty() && fixing.is_empty() {
            return Ok(());
        }
        let Some(scope) = self.scope(playbook, &fixing, state)? else {
            return Ok(());
        };
        // A `fixes_here` var narrows which of them the playbook addresses on this host (a
        // stray search domain kubelet-resolvconf keeps): its reasons and a blocked line
        // name only those.
        let fixing = match scope.get(FIXES_HERE) {
            Some(serde_json::Value::Array(here)) => fixing
                .into_iter()
                .filter(|id| here.iter().any(|h| h.as_str() == Some(id.as_str())))
                .collect(),
            _ => fixing,
        };
        let saved = state.clone();
        for task in &playbook.tasks {
            if let Some(reason) = self.task_items(playbook, task, &scope, &fixing, state)? {
                *state = saved;
                ran.blocked.push(Blocked {
                    playbook: playbook.name.clone(),
                    task: task.name.clone(),
                    reason,
                    fixes: fixing,
                });
                return Ok(());
            }
        }
        if let Some(blocked) = self.unit_unknown(playbook, &saved, state, &fixing) {
            *state = saved;
            ran.blocked.push(blocked);
            return Ok(());
        }
        for handler in &playbook.handlers {
            ran.handlers.insert(
                (playbook.name.clone(), handler.name.clone()),
                (playbook, handler),
            );
        }
        ran.scopes.insert(playbook.name.clone(), scope);
        // Remember which findings each playbook's handler reasons point at.
        for entry in state
            .notified
            .iter_mut()
            .filter(|(_, p, _, _)| *p == playbook.name)
        {
            if !entry.2.contains(" ← ") && !fixing.is_empty() {
                entry.2 = format!("{} ← {}", entry.2, fixing.join(", "));
            }
        }
        Ok(())
    }

    /// Where systemd did not answer the gather's systemctl ([`systemctl_cut`]) and
    /// `playbook`'s changes (those in `state` beyond `before`) notify a handler, the
    /// playbook is blocked: which unit runs the kubelet is then a guess among those
    /// installed (RKE2 installs both of its units: the server's restarted on an agent would
    /// start a server), and whether systemd can restart anything now is not known. Apply
    /// refuses a restart the same way on its own facts; this keeps a plan made during the
    /// stall from restarting the guessed unit once systemd answers again.
    ///
    /// [`systemctl_cut`]: crate::facts::node_facts::Services::systemctl_cut
    fn unit_unknown(
        &self,
        playbook: &Playbook,
        before: &State,
        state: &State,
        fixing: &[String],
    ) -> Option<Blocked> {
        let secs = self.facts.services.systemctl_cut?;
        let mut handlers: Vec<&str> = Vec::new();
        for (handler, p, _, _) in state.notified.iter().skip(before.notified.len()) {
            if *p == playbook.name && !handlers.contains(&handler.as_str()) {
                handlers.push(handler);
            }
        }
        let first = *handlers.first()?;
        Some(Blocked {
            playbook: playbook.name.clone(),
            task: first.to_owned(),
            reason: format!(
                "its changes need `{}`, and systemctl did not answer within {secs}s \
                 (systemd, PID 1, busy or stuck): which units run, and whether systemd can \
                 restart them now, is not known; plan again once `systemctl \
                 is-system-running` answers on the node",
                handlers.join("`, `")
            ),
            fixes: fixing.to_vec(),
        })
    }

    /// The playbook's scope (its `vars`, in order), or `None` when its `when` is false
    /// here (which is noted as the reason nothing changed, and which of the findings it
    /// fixes, `fixing`, failing here it leaves).
    fn scope(
        &self,
        playbook: &Playbook,
        fixing: &[String],
        state: &mut State,
    ) -> Result<Option<Scope>, PlanError> {
        let mut scope = Scope::new();
        scope.insert("fixes".into(), serde_json::json!(playbook.fixes));
        scope.insert("playbook".into(), serde_json::json!(playbook.name));
        for (name, value) in &playbook.vars {
            let value = self
                .eval(value, &self.ctx(&scope))
                .map_err(at(playbook, Site::Var(name.clone())))?;
            scope.insert(name.clone(), value);
        }
        if let Some(when) = &playbook.when
            && !self
                .eval_bool(when, &self.ctx(&scope))
                .map_err(at(playbook, Site::When))?
        {
            let when = when.split_whitespace().collect::<Vec<_>>().join(" ");
            let message = if fixing.is_empty() {
                format!("not needed here (`when: {when}` is false)")
            } else {
                format!(
                    "does not fix {} here (`when: {when}` is false): `dnsfix explain {}` says how to fix it by hand",
                    fixing.join(", "),
                    fixing[0]
                )
            };
            state.unchanged.push(Note {
                playbook: playbook.name.clone(),
                message,
            });
            return Ok(None);
        }
        Ok(Some(scope))
    }

    /// Runs `task` once, or once per item of its `loop`, where its `when` holds. Returns
    /// the message of a `fail` that ran.
    fn task_items(
        &mut self,
        playbook: &Playbook,
        task: &Task,
        scope: &Scope,
        fixing: &[String],
        state: &mut State,
    ) -> Result<Option<String>, PlanError> {
        let items: Vec<Option<Json>> = match &task.loop_over {
            Some(expr) => {
                let site = || Site::Loop {
                    task: task.name.clone(),
                };
                let list = self
                    .eval(&Value::Expression(expr.clone()), &self.ctx(scope))
                    .map_err(at(playbook, site()))?;
                match list {
                    Json::Array(items) => items.into_iter().map(Some).collect(),
                    Json::Null => Vec::new(),
                    got => return Err(at(playbook, site())(PlanErrorKind::NotAList { got })),
                }
            }
            None => vec![None],
        };
        for item in items {
            let mut task_scope = scope.clone();
            if let Some(item) = item {
                task_scope.insert("item".into(), item);
            }
            let task_ctx = self.ctx(&task_scope);
            if let Some(when) = &task.when
                && !self.eval_bool(when, &task_ctx).map_err(at(
                    playbook,
                    Site::TaskWhen {
                        task: task.name.clone(),
                    },
                ))?
            {
                continue;
            }
            let reason = Reason {
                playbook: playbook.name.clone(),
                task: task.name.clone(),
                fixes: fixing.to_vec(),
            };
            let outcome = self.task(task, &task_ctx, state, &reason).map_err(at(
                playbook,
                Site::Task {
                    task: task.name.clone(),
                    line: task.line,
                },
            ))?;
            match outcome {
                Outcome::Failed(message) => return Ok(Some(message)),
                Outcome::Changed { what, file } => {
                    for handler in &task.notify {
                        state.notified.push((
                            handler.clone(),
                            playbook.name.clone(),
                            what.clone(),
                            file.clone(),
                        ));
                    }
                }
                Outcome::Already(why) => state.unchanged.push(Note {
                    playbook: playbook.name.clone(),
                    message: why,
                }),
                Outcome::Unchanged => {}
            }
        }
        Ok(None)
    }

    /// Runs one task (one item of its loop) with its module.
    fn task(
        &mut self,
        task: &Task,
        ctx: &Ctx,
        state: &mut State,
        reason: &Reason,
    ) -> Result<Outcome, PlanErrorKind> {
        match &task.action {
            Action::Template(args) => self.template(args, ctx, state, reason),
            Action::YamlSet(args) => self.yaml_set(args, ctx, state, reason),
            Action::EnvFlag(args) => self.env_flag(args, ctx, state, reason),
            Action::ArgsFlag(args) => self.args_flag(args, ctx, state, reason),
            Action::Sysctl(args) => self.sysctl(args, ctx, state, reason),
            Action::Modprobe(args) => self.modprobe(args, ctx, state, reason),
            Action::InventorySet(args) => self.inventory_set(args, ctx, state, reason),
            Action::Note(args) => self.note(args, ctx, state, reason),
            Action::Fail(args) => self.fail(args, ctx),
            Action::DnsPods(args) => self.dns_pods(args, ctx, state, reason),
            Action::CorefileForward(args) => self.corefile_forward(args, ctx, state, reason),
            Action::RestartDue(args) => self.restart_due(args, ctx),
        }
    }

    /// The host's result: the files, sysctls and modules the state changed, in the order
    /// they first changed, with the handlers, notes and the facts read.
    fn finish(self, state: State, handlers: Vec<HandlerRun>, blocked: Vec<Blocked>) -> HostRun {
        let mut out = HostRun {
            handlers,
            blocked,
            notes: state.notes.clone(),
            cluster: state.cluster.clone(),
            unchanged: state.unchanged.clone(),
            inventory_sets: state.inventory_sets.clone(),
            configmap_sets: state.configmap_sets.clone(),
            ..HostRun::default()
        };
        for path in &state.order {
            let Some(file) = state.files.get(path) else {
                continue;
            };
            let Some(content) = &file.current else {
                continue;
            };
            if file.before.as_deref() == Some(content.as_str()) {
                continue;
            }
            out.changes.push(Change::WriteFile {
                path: path.clone(),
                description: dedup(&file.descriptions).join("; "),
                before_sha256: file.before_sha256.clone(),
                before: file.before.clone(),
                after_sha256: sha256_hex(content.as_bytes()),
                content: content.clone(),
                mode: if file.before.is_none() {
                    Some(file.mode.clone().unwrap_or_else(|| "0644".into()))
                } else {
                    None
                },
                reasons: dedup_reasons(&file.reasons),
            });
        }
        // Modules before sysctls: a bridge key exists only once br_netfilter is loaded, and
        // apply runs the changes in this order.
        for (name, reasons) in &state.modules {
            out.changes.push(Change::LoadModule {
                name: name.clone(),
                reasons: dedup_reasons(reasons),
            });
        }
        for name in &state.sysctl_order {
            if let Some((before, after, reasons)) = state.sysctls.get(name) {
                out.changes.push(Change::Sysctl {
                    name: name.clone(),
                    before: before.clone(),
                    after: after.clone(),
                    reasons: dedup_reasons(reasons),
                });
            }
        }
        out.digest = self.digest;
        out
    }
}

fn outcome(changed: bool, file: &str, what: String, already: String) -> Outcome {
    if changed {
        Outcome::Changed {
            what,
            file: Some(file.to_owned()),
        }
    } else {
        Outcome::Already(already)
    }
}

fn dedup(items: &[String]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    items.iter().filter(|i| seen.insert(*i)).cloned().collect()
}

fn dedup_reasons(reasons: &[Reason]) -> Vec<Reason> {
    let mut out: Vec<Reason> = Vec::new();
    for reason in reasons {
        if !out.contains(reason) {
            out.push(reason.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::playbook::Playbooks;

    /// Plans `playbook` (a site playbook, no `fixes`) on a node with `files`.
    fn plan(playbook: &str, files: &[(&str, &str)]) -> Result<HostRun, PlanError> {
        plan_in(
            playbook,
            files,
            &crate::cluster::NodeView::Unavailable {
                reason: "not read in this test".to_owned(),
            },
        )
    }

    fn plan_in(
        playbook: &str,
        files: &[(&str, &str)],
        cluster: &crate::cluster::NodeView,
    ) -> Result<HostRun, PlanError> {
        plan_with(playbook, files, cluster, &[])
    }

    fn plan_with(
        playbook: &str,
        files: &[(&str, &str)],
        cluster: &crate::cluster::NodeView,
        corefiles: &[crate::cluster::Corefile],
    ) -> Result<HostRun, PlanError> {
        plan_facts(
            playbook,
            &crate::testing::facts_from(files),
            cluster,
            corefiles,
        )
    }

    fn plan_facts(
        playbook: &str,
        facts: &NodeFacts,
        cluster: &crate::cluster::NodeView,
        corefiles: &[crate::cluster::Corefile],
    ) -> Result<HostRun, PlanError> {
        let env = Playbooks::load(None).expect("shipped playbooks load").env;
        let playbook = crate::playbook::parse("site.yml", playbook, &env).expect("loads");
        let base = Ctx::from(minijinja::value::Serde(
            serde_json::json!({ "host": "node1" }),
        ));
        plan_host(
            &[&playbook],
            &env,
            facts,
            &base,
            &BTreeSet::new(),
            (cluster, corefiles),
        )
    }

    const COREFILE_FORWARD: &str = "name: site\ndescription: d\ntasks:\n  - name: coredns\n    \
                                    corefile_forward:\n      configmap: coredns\n      \
                                    servers: [192.0.2.53]\n  - name: nodelocaldns\n    \
                                    corefile_forward:\n      configmap: nodelocaldns\n      \
                                    servers: [192.0.2.53]\n";

    fn corefile(configmap: &str, text: &str) -> crate::cluster::Corefile {
        crate::cluster::Corefile::new(configmap, "Corefile", text)
    }

    fn run_blocked(run: &HostRun) -> String {
        run.blocked
            .iter()
            .map(|b| b.reason.clone())
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// `corefile_forward`: the cluster's Corefile text, its root forward changed, for the
    /// plan to merge across hosts; a Corefile already so is the stated no-op; without
    /// cluster access, the manual step; a Corefile without a root forward is an error.
    #[test]
    fn corefile_forward_wants_the_root_forward_changed_in_the_cluster() {
        let view = crate::cluster::NodeView::Read {
            via: "cp1".to_owned(),
            names: vec!["node1".to_owned()],
            pods: Vec::new(),
        };
        let coredns = ".:53 {\n    forward . /etc/resolv.conf {\n       max_concurrent 1000\n    }\n    loop\n}\n";
        let done = ".:53 {\n    forward . 192.0.2.53\n}\n";
        let run = plan_with(
            COREFILE_FORWARD,
            &[],
            &view,
            &[corefile("coredns", coredns), corefile("nodelocaldns", done)],
        )
        .expect("plans");
        assert!(run.changes.is_empty() && run.cluster.is_empty());
        assert_eq!(run.configmap_sets.len(), 1, "{:?}", run.configmap_sets);
        let set = &run.configmap_sets[0];
        assert_eq!(
            (set.configmap.as_str(), set.key.as_str(), set.via.as_str()),
            ("coredns", "Corefile", "cp1")
        );
        assert_eq!(set.before, coredns);
        assert_eq!(
            set.after,
            coredns.replace("/etc/resolv.conf {", "192.0.2.53 {")
        );
        assert_eq!(
            set.description,
            "forward . /etc/resolv.conf → 192.0.2.53 (the .:53 block, line 2)"
        );
        assert!(
            run.unchanged.iter().any(|n| n
                .message
                .contains("the nodelocaldns Corefile (Corefile) already forwards . to 192.0.2.53")),
            "{:?}",
            run.unchanged
        );
        // The line names the block and the FROM the edit is in, as written.
        let two =
            ".:5353 {\n    forward . 192.0.2.9\n}\n. {\n    forward .:53 /etc/resolv.conf\n}\n";
        let two_roots =
            plan_with(COREFILE_FORWARD, &[], &view, &[corefile("coredns", two)]).expect("plans");
        assert_eq!(
            two_roots.configmap_sets[0].description,
            "forward .:53 /etc/resolv.conf → 192.0.2.53 (the . block, line 5)"
        );

        let run = plan(COREFILE_FORWARD, &[]).expect("plans");
        assert!(run.configmap_sets.is_empty());
        assert!(
            run.notes[0]
                .message
                .contains("kubectl -n kube-system edit configmap coredns"),
            "{:?}",
            run.notes
        );

        let blocked = plan_with(
            COREFILE_FORWARD,
            &[],
            &view,
            &[corefile(
                "coredns",
                "cluster.local:53 {\n    forward . 10.0.0.1\n}\n",
            )],
        )
        .expect("plans: blocked, saying why, not a failed plan");
        assert!(run_blocked(&blocked).contains(
            "the coredns Corefile (Corefile) is left as it is: the Corefile has no block for \
             the root zone"
        ));
        let error = plan_with(
            &COREFILE_FORWARD.replace("configmap: coredns", "configmap: kube-proxy"),
            &[],
            &view,
            &[],
        )
        .expect_err("not a Corefile ConfigMap");
        assert!(
            error.to_string().contains("coredns or nodelocaldns"),
            "{error}"
        );
    }

    /// `corefile_forward` leaves alone a Corefile whose edit would not last or change
    /// anything: one a Helm release or another owner writes back (naming where the change
    /// belongs), and one no CoreDNS pod loads.
    #[test]
    fn corefile_forward_leaves_owned_and_unloaded_corefiles_alone() {
        let view = crate::cluster::NodeView::Read {
            via: "cp1".to_owned(),
            names: vec!["node1".to_owned()],
            pods: Vec::new(),
        };
        let coredns = ".:53 {\n    forward . /etc/resolv.conf {\n       max_concurrent 1000\n    }\n    loop\n}\n";
        // The CoreDNS Helm chart installed as the release `coredns` names its ConfigMap
        // `coredns` (coredns/helm charts/coredns _helpers.tpl at caac0316): the edit is
        // one its next upgrade undoes, so the plan names the release's value instead.
        let mut owned = corefile("coredns", coredns);
        owned.helm_release = Some("coredns".into());
        let helm = plan_with(COREFILE_FORWARD, &[], &view, &[owned]).expect("plans");
        assert!(helm.configmap_sets.is_empty(), "{:?}", helm.configmap_sets);
        assert!(
            run_blocked(&helm).contains(
                "Helm release coredns owns ConfigMap kube-system/coredns and its next upgrade \
                 would undo the edit; instead copy the release's whole `servers` list (helm get \
                 values --all coredns -n kube-system -o yaml > values.yaml), set only the \
                 `forward` entry's parameters to . 192.0.2.53 there and helm upgrade coredns \
                 CHART --version VERSION -n kube-system -f values.yaml, with the CHART and \
                 VERSION helm list -n kube-system -f '^coredns$' shows for the release (Helm"
            ),
            "{}",
            run_blocked(&helm)
        );
        // A release installed in another namespace (`helm install -n dns-system`, as its
        // `meta.helm.sh/release-namespace` says, helm/helm pkg/action/validate.go at
        // 002ac784) is found there, not in kube-system.
        let mut elsewhere = corefile("coredns", coredns);
        elsewhere.helm_release = Some("coredns".into());
        elsewhere.helm_namespace = Some("dns-system".into());
        // Its chart named from the helm.sh/chart label (`helm upgrade` takes one beside the
        // release: helm/helm pkg/cmd/upgrade.go:93-96 at e9b85e4d); a version's `_` is the
        // `+` the label could not hold (charts/coredns _helpers.tpl:33 at caac0316).
        elsewhere.helm_chart = Some("coredns-1.46.2_build.1".into());
        let helm = plan_with(COREFILE_FORWARD, &[], &view, &[elsewhere]).expect("plans");
        assert!(
            run_blocked(&helm).contains(
                "(helm get values --all coredns -n dns-system -o yaml > values.yaml), set only the \
                 `forward` entry's parameters to . 192.0.2.53 there and helm upgrade coredns \
                 CHART --version VERSION -n dns-system -f values.yaml, with the CHART and \
                 VERSION helm list -n dns-system -f '^coredns$' shows for the release (the \
                 ConfigMap's helm.sh/chart label says coredns 1.46.2+build.1:"
            ),
            "{}",
            run_blocked(&helm)
        );
        // k3s's packaged ConfigMap (its deploy controller applies it again at every start):
        // left as it is, the owner named.
        let mut k3s = corefile("coredns", coredns);
        k3s.owner =
            Some("k3s's deploy controller (annotation objectset.rio.cattle.io/owner-gvk: k3s.cattle.io/v1, Kind=Addon)".into());
        let owned = plan_with(COREFILE_FORWARD, &[], &view, &[k3s]).expect("plans");
        assert!(
            owned.configmap_sets.is_empty(),
            "{:?}",
            owned.configmap_sets
        );
        assert!(
            run_blocked(&owned).contains("k3s's deploy controller (annotation objectset.rio.cattle.io/owner-gvk: k3s.cattle.io/v1, Kind=Addon) owns ConfigMap kube-system/coredns"),
            "{}",
            run_blocked(&owned)
        );
        // CoreDNS found through a cluster DNS Service outside kube-system, its ConfigMap
        // `coredns` there and no owner: apply writes kube-system's ConfigMaps only, so it is
        // left as it is and the step named.
        let mut elsewhere = corefile("coredns", coredns);
        elsewhere.namespace = Some("dns".into());
        let outside = plan_with(COREFILE_FORWARD, &[], &view, &[elsewhere]).expect("plans");
        assert!(
            outside.configmap_sets.is_empty(),
            "{:?}",
            outside.configmap_sets
        );
        assert!(
            run_blocked(&outside).contains(
                "ConfigMap dns/coredns is outside kube-system, where dnsfix changes ConfigMaps; \
                 set `forward .` in its `.:53` block to 192.0.2.53 by hand (kubectl -n dns edit \
                 configmap coredns)"
            ),
            "{}",
            run_blocked(&outside)
        );
        // A Corefile no CoreDNS pod loads (a stale kubeadm `coredns` beside the Helm
        // release's the pods mount, a second `Corefile*` key): nothing to edit there, and
        // one without a root forward blocks nothing.
        let mut stale = corefile("coredns", coredns);
        stale.unloaded = true;
        let mut extra = corefile("coredns", "cluster.local:53 {\n    forward . 10.0.0.1\n}\n");
        extra.key = "Corefile.override".into();
        extra.unloaded = true;
        let unloaded = plan_with(COREFILE_FORWARD, &[], &view, &[stale, extra]).expect("plans");
        assert!(
            unloaded.configmap_sets.is_empty(),
            "{:?}",
            unloaded.configmap_sets
        );
        assert!(
            unloaded.unchanged.iter().any(|n| n.message.contains(
                "no DNS pod loads the coredns ConfigMap's Corefile (Corefile, Corefile.override): left as it is"
            )),
            "{:?}",
            unloaded.unchanged
        );
    }

    const RECREATE: &str = "name: site\ndescription: d\ntasks:\n  - name: recreate\n    \
                            dns_pods:\n      state: recreated\n  - name: again\n    \
                            dns_pods:\n      state: recreated\n";

    fn pod(name: &str, app: &str, ready: bool) -> crate::cluster::DnsPod {
        crate::cluster::DnsPod {
            name: name.to_owned(),
            app: app.to_owned(),
            node: "node1".to_owned(),
            phase: "Running".to_owned(),
            ready,
            restarts: if ready { 0 } else { 7 },
            waiting: (!ready).then(|| "CrashLoopBackOff".to_owned()),
            running: ready,
            terminating: false,
            loop_detected: (!ready).then(|| "[FATAL] plugin/loop: Loop".to_owned()),
            logs_read: !ready,
            logs_unread: None,
            container: None,
            namespace: None,
            selector: None,
            readiness: None,
        }
    }

    /// With the cluster read, `dns_pods` is one cluster action naming the pods on the
    /// node as they are; two tasks asking give one action.
    #[test]
    fn dns_pods_recreates_the_node_pods_through_the_cluster() {
        let view = crate::cluster::NodeView::Read {
            via: "cp1".to_owned(),
            names: vec!["node1".to_owned()],
            pods: vec![
                pod("coredns-5d78c9869d-x7k2p", "coredns", false),
                pod("nodelocaldns-9wqzb", "nodelocaldns", true),
            ],
        };
        let run = plan_in(RECREATE, &[], &view).expect("plans");
        assert_eq!(run.cluster.len(), 1, "{:?}", run.cluster);
        let ClusterAction::RecreateDnsPods {
            node,
            pods,
            via,
            reasons,
        } = &run.cluster[0];
        assert_eq!(
            (node.as_slice(), via.as_str()),
            (&["node1".to_owned()][..], "cp1")
        );
        assert_eq!(
            pods.iter()
                .map(|p| (p.name.as_str(), p.state.as_str()))
                .collect::<Vec<_>>(),
            [
                (
                    "coredns-5d78c9869d-x7k2p",
                    "CrashLoopBackOff, 7 restarts, loop detected"
                ),
                ("nodelocaldns-9wqzb", "ready"),
            ]
        );
        assert_eq!(
            reasons.iter().map(|r| r.task.as_str()).collect::<Vec<_>>(),
            ["recreate", "again"]
        );
        assert!(run.notes.is_empty());

        // No pod on the node now: the action all the same, its pods none, so apply lists
        // the node's pods after the kubelet restart and recreates one put there since the
        // plan (before, the plan had no action, "none to recreate", and such a pod kept
        // the old upstream).
        let empty = crate::cluster::NodeView::Read {
            via: "cp1".to_owned(),
            names: vec!["node1".to_owned()],
            pods: Vec::new(),
        };
        let run = plan_in(RECREATE, &[], &empty).expect("plans");
        let [ClusterAction::RecreateDnsPods { node, pods, .. }] = run.cluster.as_slice() else {
            panic!("one action: {:?}", run.cluster);
        };
        assert_eq!(
            (node.as_slice(), pods.len()),
            (&["node1".to_owned()][..], 0)
        );
        assert!(
            !run.unchanged
                .iter()
                .any(|n| n.message.contains("none to recreate")),
            "{:?}",
            run.unchanged
        );

        // No cluster access: the manual step, with why.
        let run = plan(RECREATE, &[]).expect("plans");
        assert!(run.cluster.is_empty());
        assert!(
            run.notes[0]
                .message
                .contains("kubectl -n kube-system delete pod")
                && run.notes[0].message.contains("not read in this test"),
            "{:?}",
            run.notes
        );
        let error = plan(&RECREATE.replace("recreated", "deleted"), &[]).expect_err("a bad state");
        assert!(
            error
                .to_string()
                .contains("state must be recreated, not \"deleted\""),
            "{error}"
        );
    }

    /// CoreDNS found through a cluster DNS Service outside kube-system: recreated in its
    /// namespace like kube-system's, the plan carrying the namespace and the Service's
    /// selector apply lists its pods by there. Before, the action left it out and a note
    /// named the manual step (`kubectl -n coredns delete pod ...`).
    #[test]
    fn dns_pods_recreates_coredns_outside_kube_system_in_its_namespace() {
        let mut elsewhere = pod("dns-coredns-6d4f8b7c9b-2xkqp", "coredns", false);
        elsewhere.namespace = Some("coredns".into());
        elsewhere.selector = Some("app.kubernetes.io/name=coredns,k8s-app=coredns".into());
        let mixed = crate::cluster::NodeView::Read {
            via: "cp1".to_owned(),
            names: vec!["node1".to_owned()],
            pods: vec![
                pod("nodelocaldns-9wqzb", "nodelocaldns", true),
                elsewhere.clone(),
            ],
        };
        let placed = |run: &HostRun| -> Vec<(String, String, Option<String>)> {
            run.cluster
                .iter()
                .flat_map(|ClusterAction::RecreateDnsPods { pods, .. }| pods)
                .map(|p| (p.namespace().to_owned(), p.name.clone(), p.selector.clone()))
                .collect()
        };
        let selector = Some("app.kubernetes.io/name=coredns,k8s-app=coredns".to_owned());
        let run = plan_in(RECREATE, &[], &mixed).expect("plans");
        assert_eq!(
            placed(&run),
            [
                ("kube-system".into(), "nodelocaldns-9wqzb".into(), None),
                (
                    "coredns".into(),
                    "dns-coredns-6d4f8b7c9b-2xkqp".into(),
                    selector.clone()
                ),
            ]
        );
        assert!(run.notes.is_empty(), "{:?}", run.notes);
        let alone = crate::cluster::NodeView::Read {
            via: "cp1".to_owned(),
            names: vec!["node1".to_owned()],
            pods: vec![elsewhere],
        };
        let run = plan_in(RECREATE, &[], &alone).expect("plans");
        assert_eq!(
            placed(&run),
            [(
                "coredns".into(),
                "dns-coredns-6d4f8b7c9b-2xkqp".into(),
                selector
            )]
        );
        assert!(run.notes.is_empty(), "{:?}", run.notes);
        assert!(
            !run.unchanged
                .iter()
                .any(|n| n.message.contains("none to recreate")),
            "{:?}",
            run.unchanged
        );
    }

    /// Two playbooks asking for the node's DNS pods (kubelet-resolvconf and
    /// kubelet-restart-due both end with `dns_pods`), the pods in two namespaces
    /// (nodelocaldns in kube-system, CoreDNS through its Service in `coredns`): one action
    /// (merged by [`ClusterAction::same_target`], the node), each pod once, both reasons,
    /// and no note. Before, each playbook added its own note naming the manual step for
    /// the pod outside kube-system.
    #[test]
    fn two_playbooks_recreate_pods_of_two_namespaces_once() {
        let env = Playbooks::load(None).expect("shipped playbooks load").env;
        let book = |name: &str| {
            let text = format!(
                "name: {name}\ndescription: d\ntasks:\n  - name: recreate\n    \
                 dns_pods:\n      state: recreated\n"
            );
            crate::playbook::parse(&format!("{name}.yml"), &text, &env).expect("loads")
        };
        let (first, second) = (book("kubelet-resolvconf"), book("kubelet-restart-due"));
        let mut elsewhere = pod("dns-coredns-6d4f8b7c9b-2xkqp", "coredns", false);
        elsewhere.namespace = Some("coredns".into());
        elsewhere.selector = Some("k8s-app=coredns".into());
        let view = crate::cluster::NodeView::Read {
            via: "cp1".to_owned(),
            names: vec!["node1".to_owned()],
            pods: vec![pod("nodelocaldns-9wqzb", "nodelocaldns", true), elsewhere],
        };
        let base = Ctx::from(minijinja::value::Serde(
            serde_json::json!({ "host": "node1" }),
        ));
        let run = plan_host(
            &[&first, &second],
            &env,
            &crate::testing::facts_from(&[]),
            &base,
            &BTreeSet::new(),
            (&view, &[]),
        )
        .expect("plans");
        assert_eq!(run.cluster.len(), 1, "{:?}", run.cluster);
        let ClusterAction::RecreateDnsPods { pods, reasons, .. } = &run.cluster[0];
        assert_eq!(
            pods.iter()
                .map(|p| format!("{}/{}", p.namespace(), p.name))
                .collect::<Vec<_>>(),
            [
                "kube-system/nodelocaldns-9wqzb",
                "coredns/dns-coredns-6d4f8b7c9b-2xkqp"
            ]
        );
        assert_eq!(
            reasons
                .iter()
                .map(|r| r.playbook.as_str())
                .collect::<Vec<_>>(),
            ["kubelet-resolvconf", "kubelet-restart-due"]
        );
        assert!(run.notes.is_empty(), "{:?}", run.notes);
    }

    const FORWARD: &[(&str, &str)] = &[
        ("/proc/sys/net/ipv4/ip_forward", "0\n"),
        ("/etc/sysctl.d/99-dnsfix.conf", "# ours\n"),
    ];

    /// Two tasks that persist forwarding: the second must find it done.
    /// k3s reads its config.yaml.d drop-ins as it reads config.yaml, a key written twice
    /// with its last value: the drop-in that sets resolv-conf twice is edited where that
    /// value is, its earlier entry taken out, as the kubelet's own config file would be.
    #[test]
    fn a_k3s_drop_in_with_a_key_written_twice_is_edited_at_its_last_entry() {
        let dropin = "/etc/rancher/k3s/config.yaml.d/10-dns.yaml";
        let mut raw = crate::testing::rules_fixture("DNS-K3S-FALLBACK/k3s-auto-fallback");
        raw.dirs.push("/etc/rancher/k3s/config.yaml.d".to_owned());
        raw.file(
            dropin,
            crate::facts::raw::FileState::Present,
            Some(b"resolv-conf: /etc/old-resolv.conf\nresolv-conf: /etc/k3s-resolv.conf\n"),
        );
        let facts = NodeFacts::from_raw("node1", &raw);
        let playbook = format!(
            "name: site\ndescription: d\ntasks:\n  - name: set\n    yaml_set:\n      \
             path: {dropin}\n      key: resolv-conf\n      value: /etc/dnsfix/resolv.conf\n"
        );
        let unread = crate::cluster::NodeView::Unavailable {
            reason: "not read in this test".to_owned(),
        };
        let run = plan_facts(&playbook, &facts, &unread, &[]).expect("plans");
        let written: Vec<&str> = run
            .changes
            .iter()
            .filter_map(|c| match c {
                Change::WriteFile { path, content, .. } if path == dropin => Some(content.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(written, ["resolv-conf: /etc/dnsfix/resolv.conf\n"]);
    }

    const TWICE: &str = "name: site\ndescription: d\ntasks:\n  - name: forward\n    \
                         sysctl:\n      name: net.ipv4.ip_forward\n      value: \"1\"\n  \
                         - name: again\n    sysctl:\n      name: net.ipv4.ip_forward\n      \
                         value: \"1\"\n";

    /// A node with forwarding on and dnsfix's (empty) sysctl file.
    fn forwarding_node() -> crate::facts::raw::RawFacts {
        let mut raw = crate::testing::raw_from(&[
            ("/proc/sys/net/ipv4/ip_forward", "1\n"),
            ("/etc/sysctl.d/99-dnsfix.conf", "# ours\n"),
        ]);
        raw.dirs.push("/etc/sysctl.d".to_owned());
        raw
    }

    /// A file the boot applies after dnsfix's that sets forwarding to 0: edited through
    /// Debian's link to /etc/sysctl.conf (and a second task on the key sees the edit);
    /// only named where the link leads into /usr/lib or the file is not text.
    #[test]
    fn a_later_sysctl_file_is_edited_in_etc_and_named_elsewhere() {
        let base = forwarding_node;
        let conf = "kernel.sysrq = 0\n-net.ipv4.ip_forward = 0\n";
        let mut debian = base();
        debian.file(
            "/etc/sysctl.conf",
            crate::facts::raw::FileState::Present,
            Some(conf.as_bytes()),
        );
        debian.link(
            "/etc/sysctl.d/99-sysctl.conf",
            "../sysctl.conf",
            "/etc/sysctl.conf",
            conf.as_bytes(),
        );
        let facts = NodeFacts::from_raw("node1", &debian);
        let unread = crate::cluster::NodeView::Unavailable {
            reason: "not read in this test".to_owned(),
        };
        let run = plan_facts(TWICE, &facts, &unread, &[]).expect("plans");
        let written: BTreeMap<&str, &str> = run
            .changes
            .iter()
            .filter_map(|c| match c {
                Change::WriteFile { path, content, .. } => Some((path.as_str(), content.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(
            written.get("/etc/sysctl.conf"),
            Some(&"kernel.sysrq = 0\n-net.ipv4.ip_forward = 1\n"),
            "{written:?}"
        );
        assert!(!written.contains_key("/etc/sysctl.d/99-sysctl.conf"));
        assert_eq!(run.notes.len(), 1, "{:?}", run.notes);
        assert!(run.notes[0].message.contains("that line now sets 1"));

        // A link into /usr/lib: named, with what to do instead.
        let mut vendor = base();
        vendor.file(
            "/usr/lib/sysctl.d/zz-router.conf",
            crate::facts::raw::FileState::Present,
            Some(b"net.ipv4.ip_forward = 0\n"),
        );
        vendor.link(
            "/etc/sysctl.d/zz-router.conf",
            "/usr/lib/sysctl.d/zz-router.conf",
            "/usr/lib/sysctl.d/zz-router.conf",
            b"net.ipv4.ip_forward = 0\n",
        );
        // A hardening file in /etc that is not UTF-8: named, and the plan still stands.
        let mut latin1 = base();
        latin1.file(
            "/etc/sysctl.d/zz-hardening.conf",
            crate::facts::raw::FileState::Present,
            Some(b"# r\xe9seau\nnet.ipv4.ip_forward = 0\n"),
        );
        // A glob of forwarding's other name: left to the administrator, as udev applies
        // it to every interface that appears.
        let mut glob = base();
        glob.file(
            "/etc/sysctl.d/zz-router-off.conf",
            crate::facts::raw::FileState::Present,
            Some(b"net.ipv4.conf.*.forwarding = 0\n"),
        );
        for (raw, says) in [
            (
                vendor,
                "it is a link to /usr/lib/sysctl.d/zz-router.conf: replace the link",
            ),
            (
                glob,
                "/etc/sysctl.d/zz-router-off.conf:1 sets net.ipv4.conf.*.forwarding = 0 (a glob that matches net.ipv4.conf.all.forwarding, the same kernel setting as net.ipv4.ip_forward; systemd-sysctl expands a glob from systemd 245, procps `sysctl --system` from procps-ng 4.0.0; an older one (RHEL 8's systemd 239 and procps-ng 3.3.15) sets nothing for it) and is applied after /etc/sysctl.d/99-dnsfix.conf at boot; set that line to 1 (systemd's udev rule",
            ),
            (
                latin1,
                "/etc/sysctl.d/zz-hardening.conf:2 sets net.ipv4.ip_forward = 0",
            ),
        ] {
            let run = plan_facts(TWICE, &NodeFacts::from_raw("node1", &raw), &unread, &[])
                .expect("plans");
            let paths: Vec<&str> = run
                .changes
                .iter()
                .filter_map(|c| match c {
                    Change::WriteFile { path, .. } => Some(path.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(paths, ["/etc/sysctl.d/99-dnsfix.conf"]);
            assert!(
                run.notes.iter().any(|n| n.message.contains(says)),
                "{:?}",
                run.notes
            );
        }
    }

    /// A node systemd boots never reads an /etc/sysctl.conf no link leads to, but procps
    /// `sysctl --system` applies it last: its 0 is changed too; a `file:` there is named.
    #[test]
    fn an_unlinked_sysctl_conf_counts_for_sysctl_system_not_for_the_boot() {
        let unread = crate::cluster::NodeView::Unavailable {
            reason: "not read in this test".to_owned(),
        };
        let mut trixie = forwarding_node();
        crate::testing::systemd_booted_with_sysctl_conf(&mut trixie, "net.ipv4.ip_forward = 0\n");
        let run =
            plan_facts(TWICE, &NodeFacts::from_raw("node1", &trixie), &unread, &[]).expect("plans");
        assert!(
            run.changes.iter().any(|c| matches!(c,
                Change::WriteFile { path, content, .. }
                    if path == "/etc/sysctl.conf" && content == "net.ipv4.ip_forward = 1\n")),
            "{:?}",
            run.changes
        );
        assert!(
            run.notes.iter().any(|n| n
                .message
                .contains("is applied after /etc/sysctl.d/99-dnsfix.conf by `sysctl --system`")),
            "{:?}",
            run.notes
        );
        // A site playbook that persists into that file: the boot would not read it.
        let into_conf = TWICE.replace(
            "value: \"1\"\n  - name: again",
            "value: \"1\"\n      file: /etc/sysctl.conf\n  - name: again",
        );
        assert_ne!(into_conf, TWICE);
        trixie.file(
            "/etc/sysctl.conf",
            crate::facts::raw::FileState::Present,
            Some(b"# mine\n"),
        );
        let run = plan_facts(
            &into_conf,
            &NodeFacts::from_raw("node1", &trixie),
            &unread,
            &[],
        )
        .expect("plans");
        assert!(
            run.notes.iter().any(|n| n
                .message
                .contains("the boot does not read /etc/sysctl.conf")),
            "{:?}",
            run.notes
        );
    }

    /// The messages `could not plan: playbook: ...` shows, place by place.
    #[test]
    fn errors_name_the_playbook_task_and_line() {
        let error = plan(
            "name: site\ndescription: d\ntasks:\n  - name: edit\n    yaml_set:\n      \
             path: etc/x.yaml\n      key: a\n      value: b\n",
            &[],
        )
        .expect_err("a relative path");
        assert_eq!(
            error.to_string(),
            "playbook site (site.yml): task `edit` (line 4): `etc/x.yaml` must be an absolute \
             path without `..`"
        );
        assert_eq!((error.task(), error.line()), (Some("edit"), Some(4)));

        let error = plan(
            "name: site\ndescription: d\ntasks:\n  - name: edit\n    yaml_set:\n      \
             path: /etc/x.yaml\n      key: a\n      value: b\n",
            &[],
        )
        .expect_err("not gathered");
        assert_eq!(
            error.to_string(),
            "playbook site (site.yml): task `edit` (line 4): /etc/x.yaml was not gathered, so \
             its current content is unknown (gather reads the files dnsfix may write; use a \
             path under one of those directories)"
        );

        let error = plan(
            "name: site\ndescription: d\ntasks:\n  - name: each\n    loop: \"1\"\n    \
             note:\n      msg: x\n",
            &[],
        )
        .expect_err("not a list");
        assert_eq!(
            error.to_string(),
            "playbook site (site.yml): task `each` loop: expected a list, got 1"
        );
        assert_eq!((error.task(), error.line()), (Some("each"), None));

        let error = plan(
            "name: site\ndescription: d\nvars:\n  x: \"{{ nope }}\"\ntasks:\n  - name: n\n    \
             note:\n      msg: x\n",
            &[],
        )
        .expect_err("undefined");
        assert_eq!(
            error.to_string(),
            "playbook site (site.yml): vars.x: `nope` is undefined"
        );
    }

    #[test]
    fn a_handler_state_must_be_restarted_or_reloaded() {
        let error = plan(
            "name: site\ndescription: d\ntasks:\n  - name: forward\n    sysctl:\n      \
             name: net.ipv4.ip_forward\n      value: \"1\"\n    notify: h\nhandlers:\n  - \
             name: h\n    service:\n      name: kubelet\n      state: \"{{ 'stopped' }}\"\n",
            FORWARD,
        )
        .expect_err("stopped");
        assert_eq!(
            error.to_string(),
            "playbook site handler `h`: state must be restarted or reloaded, not \"stopped\""
        );
        let run = plan(
            "name: site\ndescription: d\ntasks:\n  - name: forward\n    sysctl:\n      \
             name: net.ipv4.ip_forward\n      value: \"1\"\n    notify: h\nhandlers:\n  - \
             name: h\n    service:\n      name: kubelet\n      state: \"{{ 'reloaded' }}\"\n",
            FORWARD,
        )
        .expect("plans");
        assert_eq!(
            run.handlers[0].action,
            crate::plan::model::HandlerAction::Reloaded
        );
        assert_eq!(run.changes.len(), 2, "{:?}", run.changes);
    }

    /// inventory_set sets a top-level Ansible variable, never a connection variable: what
    /// `show` and `apply` check a saved plan's inventory edit by.
    #[test]
    fn inventory_set_takes_only_variable_names() {
        let with_key = |key: &str| {
            plan(
                &format!(
                    "name: site\ndescription: d\ntasks:\n  - name: keep\n    inventory_set:\n      \
                     key: \"{key}\"\n      value: x\n"
                ),
                FORWARD,
            )
        };
        with_key("kube_resolv_conf").expect("a variable");
        // A value other than a string or a list of strings is refused, not written as a
        // string (`false` as "false", true to a `when:`).
        let boolean = plan(
            "name: site\ndescription: d\ntasks:\n  - name: keep\n    inventory_set:\n      \
             key: enable_nodelocaldns\n      value: false\n",
            FORWARD,
        )
        .expect_err("a boolean");
        assert!(
            boolean
                .to_string()
                .contains("a string or a list of strings"),
            "{boolean}"
        );
        for key in ["ansible_host", "dns.servers", "9lives", "a-b"] {
            let error = with_key(key).expect_err(key);
            assert!(
                error.to_string().contains("not one inventory_set sets"),
                "{error}"
            );
        }
    }

    /// A value with Jinja syntax (from a node: a kubelet flag's path) is never asked for in
    /// the inventory, which Ansible renders on the controller: the playbook is blocked,
    /// saying why, the value shown escaped.
    #[test]
    fn inventory_set_never_writes_template_syntax() {
        let with_value = |value: &str| {
            plan(
                &format!(
                    "name: site\ndescription: d\ntasks:\n  - name: keep\n    inventory_set:\n      \
                     key: kube_resolv_conf\n      value: {value}\n"
                ),
                FORWARD,
            )
            .expect("plans")
        };
        let plain = with_value("/etc/kubernetes/resolv-upstream.conf");
        assert!(run_blocked(&plain).is_empty(), "{}", run_blocked(&plain));
        for bad in [
            r#""{{ '{{' }} lookup('pipe', 'id') }}""#,
            r#""/etc/{{ '{%' }} if 1 %}x{{ '{%' }} endif %}""#,
            r#"["192.0.2.1", "{{ '{#' }}x#}"]"#,
            // A #jinja2: header with delimiters of its own (ansible-core is_possibly_template).
            r##""#jinja2:variable_start_string:'<<', variable_end_string:'>>'\n/etc/<<x>>""##,
        ] {
            let run = with_value(bad);
            let blocked = run_blocked(&run);
            assert!(
                blocked.contains("holds Jinja template syntax"),
                "{bad}: {blocked}"
            );
        }
    }
}
