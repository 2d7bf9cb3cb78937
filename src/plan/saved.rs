//! What a saved plan must hold to be shown or applied. A reviewer reads `dnsfix show
//! plan.json` and approves the very file `apply` runs, so what `show` draws must be what
//! `apply` does: every diff's old side hashes to the sha256 apply compares the node's file
//! with, every new side to the sha256 it writes, a host's status and the summary are what
//! its changes make them, and an inventory edit sets the keys it names and nothing else. A
//! file edited by hand fails here, whole, before anything is shown or touched.
//!
//! A redacted side (a secret's value, [`super::redact`]) is checked where it is restored,
//! from the file itself: on the node for a node's file, here for an inventory file.

use serde_json::Value as Json;

use super::model::{Change, ClusterAction, HostPlan, HostStatus, InventoryChange, Plan};
use super::redact::is_redacted;
use crate::util::sha256_hex;

/// `plan` with its summary counted again from its hosts, or why it is not one dnsfix made.
pub fn checked(mut plan: Plan) -> Result<Plan, String> {
    for host in &plan.hosts {
        check_host(host).map_err(|e| format!("host {}: {e}", crate::text::escape(&host.host)))?;
    }
    for change in &plan.inventory_changes {
        check_inventory_change(change)
            .map_err(|e| format!("inventory file {}: {e}", crate::text::escape(&change.path)))?;
    }
    for change in &plan.cluster_changes {
        if sha256_hex(change.before.as_bytes()) != change.before_sha256 {
            return Err(format!(
                "the {} ConfigMap's old text does not hash to the plan's before_sha256",
                crate::text::escape(&change.configmap)
            ));
        }
    }
    // What `show` sums up is what the hosts hold, not what the file says it holds.
    plan.summary = super::summarize(
        &plan.hosts,
        plan.inventory_changes.len(),
        plan.cluster_changes.len(),
    );
    Ok(plan)
}

fn check_host(host: &HostPlan) -> Result<(), String> {
    let status = if host.error.is_some() {
        HostStatus::Error
    } else if host.acts() {
        HostStatus::Changes
    } else if !host.blocked.is_empty() {
        HostStatus::Blocked
    } else {
        HostStatus::Clean
    };
    if host.status != status {
        return Err(format!(
            "its status is {:?} but what it holds makes it {status:?}",
            host.status
        ));
    }
    // A restart with nothing written is one a cut-off run left due: its mark is among the
    // facts the plan holds to (kubelet-restart-due), or the restart is no plan's.
    if host.changes.is_empty() {
        let marks = host.facts.as_ref().map(|d| &d.files);
        for handler in &host.handlers {
            let unit = handler
                .unit
                .strip_suffix(".service")
                .unwrap_or(&handler.unit);
            let dir = format!("{}/{unit}/", crate::facts::restart_due::DIR);
            if !marks.is_some_and(|files| files.keys().any(|p| p.starts_with(&dir))) {
                return Err(format!(
                    "it restarts {} with nothing written and no restart mark of it ({dir}) among its facts",
                    crate::text::escape(&handler.unit)
                ));
            }
        }
    }
    for ClusterAction::RecreateDnsPods { pods, .. } in &host.cluster {
        for pod in pods {
            dns_pod_target(pod)
                .map_err(|e| format!("DNS pod {}: {e}", crate::text::escape(&pod.name)))?;
        }
    }
    for change in &host.changes {
        if let Change::WriteFile {
            path,
            before_sha256,
            before,
            after_sha256,
            content,
            ..
        } = change
        {
            sides(
                before_sha256.as_deref(),
                before.as_deref(),
                Some(after_sha256),
                content,
            )
            .map_err(|e| format!("{}: {e}", crate::text::escape(path)))?;
        }
    }
    Ok(())
}

/// Where apply lists a DNS pod again: its namespace a DNS-1123 label, its selector one
/// apply passes to kubectl ([`crate::cluster::valid_label_selector`]), and outside
/// kube-system a selector (apply lists the pods there by it alone). Checked here, so a
/// plan that names others is refused whole, before any node's kubelet is restarted.
fn dns_pod_target(pod: &super::model::PodState) -> Result<(), String> {
    if let Some(namespace) = &pod.namespace
        && !crate::cluster::valid_namespace(namespace)
    {
        return Err(format!(
            "its namespace {} is not a DNS-1123 label",
            crate::text::escape(namespace)
        ));
    }
    match &pod.selector {
        Some(selector) if !crate::cluster::valid_label_selector(selector) => Err(format!(
            "its selector {} is not a label selector (KEY=VALUE,...) apply passes to kubectl",
            crate::text::escape(selector)
        )),
        None if pod.namespace() != "kube-system" => Err(format!(
            "it is in namespace {} with no selector to list it there by",
            pod.namespace()
        )),
        _ => Ok(()),
    }
}

/// A change's old and new text against their sha256s: the old text's where it is shown
/// (none for a file the change creates), the new text's where the plan records one.
fn sides(
    before_sha256: Option<&str>,
    before: Option<&str>,
    after_sha256: Option<&str>,
    content: &str,
) -> Result<(), String> {
    match (before_sha256, before) {
        (None, Some(_)) => {
            return Err("an old text for a file the plan creates".into());
        }
        // The diff would be drawn from nothing: every line an addition, none of what the
        // write replaces shown.
        (Some(_), None) => return Err("its old text is not in the plan".into()),
        (Some(want), Some(text)) if !is_redacted(text) && sha256_hex(text.as_bytes()) != want => {
            return Err("the old text shown does not hash to the plan's before_sha256".into());
        }
        _ => {}
    }
    if let Some(want) = after_sha256
        && !is_redacted(content)
        && sha256_hex(content.as_bytes()) != want
    {
        return Err("the new content does not hash to the plan's after_sha256".into());
    }
    Ok(())
}

/// An inventory edit sets the keys its `settings` name, to the values they name, and
/// changes no other key of the file (the content is the old one with `yaml_set` edits). A
/// connection variable (`ansible_*`) is never one dnsfix sets. Where a side is redacted, the
/// keys are compared once the values are restored from the file (`apply
/// --update-inventory`, [`settings_only`]): a marker may stand for part of a value only.
pub(super) fn check_inventory_change(change: &InventoryChange) -> Result<(), String> {
    sides(
        change.before_sha256.as_deref(),
        change.before.as_deref(),
        change.after_sha256.as_deref(),
        &change.content,
    )?;
    let redacted =
        is_redacted(&change.content) || change.before.as_deref().is_some_and(is_redacted);
    if redacted {
        return named_settings(&change.settings).map(|_| ());
    }
    settings_only(change.before.as_deref(), &change.content, &change.settings)
}

/// `settings` (`key: value` lines) as (key, value) pairs; never a connection variable.
fn named_settings(settings: &[String]) -> Result<Vec<(&str, &str)>, String> {
    let mut named = Vec::new();
    for setting in settings {
        let (key, shown) = setting
            .split_once(": ")
            .ok_or_else(|| format!("{setting:?} is not `key: value`"))?;
        if key.starts_with("ansible_") {
            return Err(format!("it sets {key}, a connection variable"));
        }
        // What inventory_set refuses to plan (a plan saved by an older dnsfix, or edited):
        // Ansible would run it on the controller.
        if crate::text::ansible_template_syntax(shown) {
            return Err(format!(
                "it sets {key} to a value with Jinja template syntax, which Ansible would run on the controller"
            ));
        }
        named.push((key, shown));
    }
    Ok(named)
}

/// `after` is `before` (None: no file) with the keys `settings` name set by `yaml_set`,
/// as the plan made it, and nothing else: each named key's value is taken from `after` (a
/// string or a list of strings, all `yaml_set` writes) and set on `before` again, and the
/// result must be `after` byte for byte. A value compared as YAML would let an unnamed key
/// change where only its YAML 1.1 reading differs (`"0777"` to `0777`, octal to Ansible).
/// The last setting of a key is the value it holds (two tasks may set one key in turn).
pub fn settings_only(before: Option<&str>, after: &str, settings: &[String]) -> Result<(), String> {
    use crate::edit::yaml_set::{self, YamlValue};
    let named = named_settings(settings)?;
    let parsed: serde_norway::Value =
        serde_norway::from_str(after).map_err(|e| format!("its new text is not YAML: {e}"))?;
    let mut text = before.unwrap_or("").to_owned();
    for (i, (key, shown)) in named.iter().enumerate() {
        let value = parsed
            .get(*key)
            .ok_or_else(|| format!("its settings name {key}, which it does not set"))?;
        let json: Json = serde_json::to_value(value).map_err(|e| format!("{key}: {e}"))?;
        let last = !named[i + 1..].iter().any(|(k, _)| k == key);
        if last && super::inventory_change::show(&json) != *shown {
            return Err(format!(
                "it sets {key} to another value than its settings say ({shown})"
            ));
        }
        let yaml = match &json {
            Json::String(s) => YamlValue::String(s.clone()),
            Json::Array(items) => YamlValue::List(
                items
                    .iter()
                    .map(|i| i.as_str().map(str::to_owned))
                    .collect::<Option<_>>()
                    .ok_or_else(|| format!("{key} is a list of other than strings"))?,
            ),
            _ => return Err(format!("{key} is neither a string nor a list of strings")),
        };
        text = yaml_set::set(&text, key, &yaml)
            .map_err(|e| format!("{key}: {e}"))?
            .text;
    }
    if text != after {
        // The first line (with its ending) where `after` is not what the settings make.
        let mut wanted = text.split_inclusive('\n');
        let mut got = after.split_inclusive('\n');
        let mut n = 1;
        let said = loop {
            match (got.next(), wanted.next()) {
                (Some(a), Some(w)) if a == w => n += 1,
                (Some(a), _) => break crate::text::escape(a).into_owned(),
                (None, Some(w)) => break format!("{} is gone", crate::text::escape(w)),
                (None, None) => break String::new(),
            }
        };
        return Err(format!(
            "it changes more of the file than its settings say (line {n}: {said})"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::{HostPlan, Summary};

    fn write(before: Option<&str>, content: &str) -> Change {
        Change::WriteFile {
            path: "/var/lib/kubelet/config.yaml".into(),
            description: String::new(),
            before_sha256: before.map(|b| sha256_hex(b.as_bytes())),
            before: before.map(str::to_owned),
            after_sha256: sha256_hex(content.as_bytes()),
            content: content.into(),
            mode: None,
            reasons: Vec::new(),
        }
    }

    fn plan_of(change: Change) -> Plan {
        let mut host = HostPlan::empty("node1", HostStatus::Changes);
        host.changes.push(change);
        let mut plan = crate::plan::render::tests::full_plan();
        plan.hosts = vec![host];
        plan.inventory_changes.clear();
        plan.cluster_changes.clear();
        plan.summary = Summary::default();
        plan
    }

    const OLD: &str = "clusterDNS:\n- 169.254.25.10\nresolvConf: /etc/resolv.conf\n";
    const NEW: &str = "clusterDNS:\n- 169.254.25.10\nresolvConf: /etc/dnsfix/resolv.conf\n";

    /// The namespace and selector a saved plan's DNS pod is listed again by are checked
    /// with the rest of the plan, so a bad one refuses the plan whole, before any node is
    /// touched: a namespace that is not a DNS-1123 label, a selector apply would not pass
    /// to kubectl, a namespace other than kube-system without a selector. Before, each was
    /// refused only once the node's kubelet had been restarted.
    #[test]
    fn a_dns_pods_namespace_and_selector_are_checked_with_the_plan() {
        let with_pod = |namespace: Option<&str>, selector: Option<&str>| {
            let mut plan = plan_of(write(Some(OLD), NEW));
            plan.hosts[0].cluster.push(ClusterAction::RecreateDnsPods {
                node: vec!["node1".into()],
                pods: vec![crate::plan::model::PodState {
                    name: "dns-coredns-6d4f8b7c9b-2xkqp".into(),
                    app: "coredns".into(),
                    state: "ready".into(),
                    namespace: namespace.map(str::to_owned),
                    selector: selector.map(str::to_owned),
                }],
                via: "cp1".into(),
                reasons: Vec::new(),
            });
            checked(plan)
        };
        let selector = "app.kubernetes.io/name=coredns,k8s-app=coredns";
        with_pod(Some("coredns"), Some(selector)).expect("as plan makes it");
        with_pod(None, None).expect("kube-system's, saved before pods carried a namespace");
        with_pod(Some("kube-system"), None).expect("kube-system's");
        for (namespace, selector, why) in [
            (
                Some("core;dns"),
                Some(selector),
                "its namespace core;dns is not a DNS-1123 label",
            ),
            (
                Some("coredns"),
                Some("k8s-app=coredns' -A '"),
                "its selector k8s-app=coredns' -A ' is not a label selector",
            ),
            (
                Some("coredns"),
                Some(""),
                "its selector  is not a label selector",
            ),
            (
                Some("web"),
                None,
                "it is in namespace web with no selector to list it there by",
            ),
        ] {
            let error = with_pod(namespace, selector).expect_err("refused");
            assert!(
                error.starts_with(&format!(
                    "host node1: DNS pod dns-coredns-6d4f8b7c9b-2xkqp: {why}"
                )),
                "{error}"
            );
        }
    }

    /// A host that restarts with nothing written holds to a restart mark of that unit (a
    /// cut-off run's): one edited in without it, a restart of systemd-resolved, say, is
    /// refused.
    #[test]
    fn a_restart_alone_needs_its_restart_mark() {
        let restart = |unit: &str| crate::plan::model::HandlerRun {
            name: format!("restart {unit}"),
            unit: unit.into(),
            action: crate::plan::model::HandlerAction::Restarted,
            serial: crate::playbook::Batch::Count(1),
            reasons: Vec::new(),
        };
        let mut plan = plan_of(write(Some(OLD), NEW));
        let host = &mut plan.hosts[0];
        host.changes.clear();
        host.handlers.push(restart("kubelet"));
        let mut digest = crate::plan::model::FactDigest::default();
        digest.files.insert(
            "/var/lib/dnsfix/restart-due/kubelet/r1".into(),
            crate::plan::model::FileDigest {
                state: crate::plan::model::FileDigestState::Present,
                sha256: Some(sha256_hex(b"r1 b 1\n")),
                symlink: None,
            },
        );
        host.facts = Some(digest);
        checked(plan.clone()).expect("a restart its mark asks for");
        plan.hosts[0].handlers.push(restart("systemd-resolved"));
        let why = checked(plan).expect_err("refused");
        assert!(
            why.contains("it restarts systemd-resolved with nothing written"),
            "{why}"
        );
    }

    /// A refused inventory edit names the first line where it differs from what its
    /// settings make, or the line it dropped.
    #[test]
    fn a_refused_edit_names_the_line() {
        let settings = ["c: x".to_owned()];
        let why = settings_only(Some("c: y\nb: 2\n"), "c: x\n", &settings).expect_err("dropped");
        assert!(why.ends_with("(line 2: b: 2\\n is gone)"), "{why}");
        let why =
            settings_only(Some("c: y\nb: 2\n"), "c: x\nb: 3\n", &settings).expect_err("changed");
        assert!(why.ends_with("(line 2: b: 3\\n)"), "{why}");
        settings_only(Some("c: y\nb: 2\n"), "c: x\nb: 2\n", &settings).expect("as set");
    }

    /// A saved plan whose inventory edit sets a value with Jinja syntax (saved by a dnsfix
    /// before inventory_set refused such values, or edited) is refused: Ansible would run
    /// it on the controller.
    #[test]
    fn an_inventory_edit_with_template_syntax_is_refused() {
        let value = "/etc/kubernetes/{{ lookup('pipe', 'id') }}.conf";
        let after = format!("dns_domain: cluster.local\nkube_resolv_conf: \"{value}\"\n");
        let settings = [format!("kube_resolv_conf: {value}")];
        let why = settings_only(Some("dns_domain: cluster.local\n"), &after, &settings)
            .expect_err("a template");
        assert!(why.contains("Jinja template syntax"), "{why}");
        let plain = "dns_domain: cluster.local\nkube_resolv_conf: /etc/dnsfix/resolv.conf\n";
        settings_only(
            Some("dns_domain: cluster.local\n"),
            plain,
            &["kube_resolv_conf: /etc/dnsfix/resolv.conf".to_owned()],
        )
        .expect("a plain path");
    }

    /// The diff `show` draws comes from the old text the file holds: one that is not what
    /// apply compares the node's file with (its sha256) is refused, as is a new text that
    /// is not what apply writes, a status its changes do not make, and a summary is counted
    /// again rather than believed.
    #[test]
    fn a_saved_plan_shows_only_what_apply_does() {
        let plan = checked(plan_of(write(Some(OLD), NEW))).expect("a plan as made");
        assert_eq!((plan.summary.files, plan.summary.hosts_changing), (1, 1));

        // The same clusterDNS edit made on both sides: the diff would show only resolvConf.
        let hidden = |s: &str| s.replace("169.254.25.10", "203.0.113.66");
        let Change::WriteFile {
            before,
            content,
            after_sha256,
            ..
        } = write(Some(OLD), &hidden(NEW))
        else {
            unreachable!()
        };
        let mut edited = write(Some(OLD), NEW);
        if let Change::WriteFile {
            before: b,
            content: c,
            after_sha256: a,
            ..
        } = &mut edited
        {
            *b = before.map(|t| hidden(&t));
            *c = content;
            *a = after_sha256;
        }
        let why = checked(plan_of(edited)).expect_err("refused");
        assert!(why.contains("old text shown does not hash"), "{why}");

        let mut created = write(Some(OLD), NEW);
        if let Change::WriteFile { before_sha256, .. } = &mut created {
            *before_sha256 = None;
        }
        let why = checked(plan_of(created)).expect_err("refused");
        assert!(why.contains("file the plan creates"), "{why}");

        // The old text dropped: the diff would show every line as added, none replaced.
        let mut dropped = write(Some(OLD), NEW);
        if let Change::WriteFile { before, .. } = &mut dropped {
            *before = None;
        }
        let why = checked(plan_of(dropped)).expect_err("refused");
        assert!(why.contains("its old text is not in the plan"), "{why}");

        let mut cut = write(Some(OLD), NEW);
        if let Change::WriteFile { content, .. } = &mut cut {
            content.push_str("# edited\n");
        }
        let why = checked(plan_of(cut)).expect_err("refused");
        assert!(why.contains("new content does not hash"), "{why}");

        let mut clean = plan_of(write(Some(OLD), NEW));
        clean.hosts[0].status = HostStatus::Clean;
        let why = checked(clean).expect_err("refused");
        assert!(why.starts_with("host node1: its status is Clean"), "{why}");
    }
}
