//! The remote scripts of apply and rollback, and their framed output. Each script runs in
//! one exec on the node; what it did comes back as records `\n<BOUNDARY> kind args\n`
//! followed by an optional message, with a boundary no file content can forge (the same
//! scheme as the gather script).

use crate::node_script::{Boundary, KUBELET_UNITS, Record, RecordKind, quote, render, safe_path};
use crate::plan::model::{Change, HandlerAction, HandlerRun};
use crate::util::nonce;

const APPLY: &str = include_str!("apply.sh");
const COMMON: &str = include_str!("common.sh");
const ROLLBACK: &str = include_str!("rollback.sh");

/// A `healthy UNIT` / `unhealthy UNIT` record as a handler result, or `None` for any
/// other record. The action comes from the handler that names the unit.
pub fn handler_result(record: &Record, handlers: &[HandlerRun]) -> Option<super::HandlerResult> {
    let healthy = match record.kind {
        RecordKind::Healthy => true,
        RecordKind::Unhealthy => false,
        _ => return None,
    };
    Some(super::HandlerResult {
        unit: record.args.clone(),
        action: handlers
            .iter()
            .find(|h| h.unit == record.args)
            .map_or(HandlerAction::Restarted, |h| h.action),
        healthy,
        message: record.text(),
    })
}

pub use crate::facts::sysctl::normalize_value;

/// The apply script for one host: lock, precheck every file, each change in plan order,
/// then the handlers (each gated on health), all under the node lock, then `finish`.
/// The plan is marked done later, by [`mark_done_script`], once dnsfix verified it.
pub fn apply_script(
    boundary: &Boundary,
    run: &str,
    handled: &str,
    pods_pending: Option<&str>,
    changes: &[Change],
    handlers: &[HandlerRun],
    timeout_secs: u64,
) -> Result<String, String> {
    check_run(run)?;
    check_path(handled)?;
    if let Some(path) = pods_pending {
        check_path(path)?;
    }
    // One compound command: the shell reads it whole before running any of it, so a
    // script cut short in transit runs nothing (and no command reads the script's rest).
    let mut script = String::from("{\n");
    script.push_str(&render(COMMON, &[("BOUNDARY", &boundary.text())]));
    script.push_str(&render(
        APPLY,
        &[
            ("RUN", run),
            ("HANDLED", handled),
            ("PODS_PENDING", pods_pending.unwrap_or_default()),
        ],
    ));
    script.push_str("hdr begin dnsfix-apply-1\nbegin_run\n");
    script.push_str(&due_units(handlers));
    for change in changes {
        match change {
            Change::WriteFile {
                path,
                before_sha256,
                after_sha256,
                ..
            } => {
                check_path(path)?;
                let before = before_sha256.as_deref().unwrap_or("absent");
                script.push_str(&format!(
                    "precheck {} {} {}\n",
                    quote(path),
                    quote(before),
                    quote(after_sha256)
                ));
            }
            Change::Sysctl {
                name,
                before,
                after,
                ..
            } => script.push_str(&sysctl_step("sysctl_precheck", name, before, after)?),
            _ => {}
        }
    }
    for change in changes {
        match change {
            Change::WriteFile {
                path,
                before_sha256,
                after_sha256,
                content,
                mode,
                ..
            } => {
                let before = before_sha256.as_deref().unwrap_or("absent");
                let mode = mode.as_deref().unwrap_or("0644");
                if mode.is_empty() || !mode.chars().all(|c| ('0'..='7').contains(&c)) {
                    return Err(format!("{path}: mode {mode:?} is not octal"));
                }
                let delimiter = format!("DNSFIX_{}", nonce());
                script.push_str(&format!(
                    "write {} {} {} {mode} <<'{delimiter}'\n{}\n{delimiter}\n",
                    quote(path),
                    quote(before),
                    quote(after_sha256),
                    base64(content.as_bytes()),
                ));
            }
            Change::Sysctl {
                name,
                before,
                after,
                ..
            } => script.push_str(&sysctl_step("sysctl_set", name, before, after)?),
            Change::LoadModule { name, .. } => {
                if !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                {
                    return Err(format!("module name {name:?} is not valid"));
                }
                script.push_str(&format!("module {}\n", quote(name)));
            }
        }
    }
    if !handlers.is_empty() {
        script.push_str("if handlers_due; then\npods_pending\n");
        for handler in handlers {
            script.push_str(&handler_call(handler, timeout_secs)?);
        }
        script.push_str("fi\n");
    }
    script.push_str("finish\n} </dev/null\n");
    Ok(script)
}

/// The node's note that a run of the plan with this digest is to recreate the node's DNS
/// pods (its run id): written by the apply script before its changes and its handlers,
/// removed by dnsfix once they are recreated, verified and the plan marked done.
pub fn pods_pending_note(digest_sha256: &str) -> String {
    format!("/var/lib/dnsfix/pods-pending/{digest_sha256}")
}

/// Marks a plan done on the node, after dnsfix verified the apply: a re-run of the same
/// plan then restarts nothing. Written through a temp file of its own, so the marker is
/// whole or absent.
pub fn mark_done_script(run: &str, marker: &str) -> Result<String, String> {
    check_run(run)?;
    check_path(marker)?;
    let dir = marker.rsplit_once('/').map_or("/", |(d, _)| d);
    // The temp name is this shell's own: two runs marking the same plan at once (one that
    // applied it, one that found it carried out) never move each other's file.
    Ok(format!(
        "umask 077; tmp={tmp}.$$; mkdir -p {dir} && printf '%s\\n' {run} > \"$tmp\" && mv -f \"$tmp\" {marker}\n",
        dir = quote(dir),
        run = quote(run),
        tmp = quote(&format!("{marker}.tmp")),
        marker = quote(marker),
    ))
}

/// How [`plan_done_script`] says the plan's handled note is gone: a rollback ran on the
/// node since this run's changes.
pub const ROLLED_BACK_EXIT: i32 = 4;

/// Marks the plan done on the node ([`mark_done_script`]) only while its handled note
/// (`handled`, written by the apply script) is there, under the node's lock: a rollback,
/// which removes the note with the node's done markers under the same lock, may have run
/// while this run recreated the pods and checked DNS (a takeover, a rollback started from
/// another terminal), and a done marker written after it would make every later apply of
/// the plan call the rolled-back node `unchanged`. The note gone: nothing is written,
/// exit [`ROLLED_BACK_EXIT`]. The lock is tried once a second for up to `wait_secs` (a
/// rollback holds it through its restarts): `flock -n`, as the apply script's lock, since
/// busybox's flock (Alpine) has no `-w`.
pub fn plan_done_script(
    run: &str,
    marker: &str,
    handled: &str,
    wait_secs: u64,
) -> Result<String, String> {
    check_path(handled)?;
    let mark = mark_done_script(run, marker)?;
    Ok(format!(
        "{{ command exec 9>>/var/lib/dnsfix/lock; }} 2>/dev/null || {{ echo \"cannot open /var/lib/dnsfix/lock\" >&2; exit 3; }}\n\
         i=0; until flock -n -x 9; do\n\
         i=$((i + 1)); [ \"$i\" -le {wait_secs} ] || {{ echo \"cannot lock /var/lib/dnsfix/lock in {wait_secs}s (its owner: $(cat /var/lib/dnsfix/owner 2>/dev/null || echo not said))\" >&2; exit 3; }}\n\
         sleep 1; done\n\
         [ -f {handled} ] || exit {ROLLED_BACK_EXIT}\n\
         {mark}",
        handled = quote(handled),
    ))
}

/// Removes a marker file `mark_done_script` wrote.
pub fn remove_marker_script(marker: &str) -> Result<String, String> {
    check_path(marker)?;
    Ok(format!("rm -f {}\n", quote(marker)))
}

/// `DUE=...`: the kubelet units among `handlers` (checked as their calls are), which the
/// script marks before its first change (common.sh `due`).
/// (Each handler's name is checked where its call is written, after this line: a name
/// [`handler_call`] refuses refuses the whole script.)
fn due_units(handlers: &[HandlerRun]) -> String {
    let units: Vec<&str> = handlers
        .iter()
        .map(unit_name)
        .filter(|name| KUBELET_UNITS.contains(name))
        .collect();
    if units.is_empty() {
        return String::new();
    }
    format!("DUE={}\n", quote(&units.join(" ")))
}

/// A handler's unit without `.service`: how the kubelet units are named, and the name its
/// restart marks go under.
fn unit_name(handler: &HandlerRun) -> &str {
    handler
        .unit
        .strip_suffix(".service")
        .unwrap_or(&handler.unit)
}

/// systemd's services that stop or restart the machine when started (systemd.special(7)):
/// never a handler's.
const SHUTDOWN_SERVICES: &[&str] = &[
    "systemd-reboot",
    "systemd-poweroff",
    "systemd-halt",
    "systemd-kexec",
    "systemd-soft-reboot",
    "systemd-exit",
    "systemd-factory-reset-reboot",
    "systemd-suspend",
    "systemd-hibernate",
    "systemd-hybrid-sleep",
    "systemd-suspend-then-hibernate",
];

/// systemd's unit types other than `service` (systemd.unit(5)).
const NOT_SERVICES: &[&str] = &[
    "target",
    "socket",
    "device",
    "mount",
    "automount",
    "swap",
    "path",
    "timer",
    "slice",
    "scope",
];

/// `handler UNIT VERB PROBE TIMEOUT`: restart or reload, then wait for health (the unit
/// active and, for a kubelet-running unit, `http://127.0.0.1:10248/healthz` ok).
fn handler_call(handler: &HandlerRun, timeout_secs: u64) -> Result<String, String> {
    if !handler
        .unit
        .starts_with(|c: char| c.is_ascii_alphanumeric())
        || !handler
            .unit
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.@".contains(c))
    {
        return Err(format!("unit name {:?} is not valid", handler.unit));
    }
    // A service, never another kind of unit: starting `reboot.target` from an edited run
    // record or plan would reboot the node.
    if let Some((_, kind)) = handler.unit.rsplit_once('.')
        && NOT_SERVICES.contains(&kind)
    {
        return Err(format!(
            "unit {} is a {kind}: dnsfix restarts services only",
            handler.unit
        ));
    }
    let name = unit_name(handler);
    if SHUTDOWN_SERVICES.contains(&name) {
        return Err(format!(
            "unit {} stops or restarts the machine: never a handler's",
            handler.unit
        ));
    }
    let verb = handler.action.verb();
    let probe = KUBELET_UNITS.contains(&name);
    Ok(format!(
        "handler {} {verb} {} {timeout_secs}\n",
        quote(&handler.unit),
        u8::from(probe)
    ))
}

/// The rollback script: restore what the run's manifest lists, compare-and-swap, then
/// (when something was restored) the same handlers, under the node lock.
pub fn rollback_script(
    boundary: &Boundary,
    run: &str,
    handlers: &[HandlerRun],
    timeout_secs: u64,
) -> Result<String, String> {
    check_run(run)?;
    let mut script = String::from("{\n");
    script.push_str(&render(COMMON, &[("BOUNDARY", &boundary.text())]));
    script.push_str(&render(ROLLBACK, &[("RUN", run)]));
    script.push_str(&due_units(handlers));
    script.push_str("start\nrestore\nif [ -n \"$RESTORED\" ]; then\n");
    for handler in handlers {
        script.push_str(&handler_call(handler, timeout_secs)?);
    }
    script.push_str(":\nfi\nfinish\n} </dev/null\n");
    Ok(script)
}

fn check_run(run: &str) -> Result<(), String> {
    if !run.is_empty()
        && run
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        Ok(())
    } else {
        Err(format!("run id {run:?} is not valid"))
    }
}

fn check_path(path: &str) -> Result<(), String> {
    if safe_path(path) {
        Ok(())
    } else {
        Err(format!(
            "{path:?}: dnsfix writes only absolute paths of [A-Za-z0-9._/+@:-] without `..`"
        ))
    }
}

/// A call of apply.sh's `function` (sysctl_precheck, sysctl_set) for sysctl `name`: its
/// value before (empty where the key did not exist) and after, blanks squeezed as the
/// script reads /proc/sys.
fn sysctl_step(
    function: &str,
    name: &str,
    before: &Option<String>,
    after: &str,
) -> Result<String, String> {
    check_sysctl(name)?;
    Ok(format!(
        "{function} {} {} {}\n",
        quote(name),
        quote(&normalize_value(before.as_deref().unwrap_or(""))),
        quote(&normalize_value(after))
    ))
}

fn check_sysctl(name: &str) -> Result<(), String> {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    {
        Ok(())
    } else {
        Err(format!("sysctl name {name:?} is not valid"))
    }
}

/// Standard base64 with padding, in 76-character lines (what `base64 -d` reads).
pub fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len() * 4 / 3 + 4);
    for chunk in bytes.chunks(3) {
        let n = match chunk.len() {
            3 => u32::from(chunk[0]) << 16 | u32::from(chunk[1]) << 8 | u32::from(chunk[2]),
            2 => u32::from(chunk[0]) << 16 | u32::from(chunk[1]) << 8,
            _ => u32::from(chunk[0]) << 16,
        };
        let sextets = [(n >> 18) & 63, (n >> 12) & 63, (n >> 6) & 63, n & 63];
        for (i, s) in sextets.iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(TABLE[*s as usize]));
            } else {
                out.push('=');
            }
        }
    }
    let mut wrapped = String::with_capacity(out.len() + out.len() / 76 + 1);
    for (i, c) in out.chars().enumerate() {
        if i > 0 && i % 76 == 0 {
            wrapped.push('\n');
        }
        wrapped.push(c);
    }
    wrapped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        let long = base64(&[0u8; 100]);
        assert!(long.lines().all(|l| l.len() <= 76));
    }

    #[test]
    fn scripts_refuse_what_they_cannot_quote_safely() {
        let change = Change::WriteFile {
            path: "/etc/$(reboot)".into(),
            description: String::new(),
            before_sha256: None,
            before: None,
            after_sha256: "x".into(),
            content: String::new(),
            mode: None,
            reasons: Vec::new(),
        };
        let b = Boundary::from_nonce("b");
        assert!(
            apply_script(
                &b,
                "r",
                "/var/lib/dnsfix/handled/x",
                None,
                &[change],
                &[],
                5
            )
            .is_err()
        );
        assert!(rollback_script(&b, "../x", &[], 5).is_err());
    }

    /// A run record or saved plan edited to "restart" `reboot.target` renders no script.
    #[test]
    fn handlers_restart_services_only() {
        let b = Boundary::from_nonce("b");
        let handler = |unit: &str| HandlerRun {
            name: "restart".into(),
            unit: unit.into(),
            action: Default::default(),
            serial: crate::playbook::Batch::Count(1),
            reasons: Vec::new(),
        };
        for unit in ["reboot.target", "poweroff.target", "sshd.socket", "x.timer"] {
            let error = rollback_script(&b, "r", &[handler(unit)], 5).expect_err(unit);
            assert!(error.contains("services only"), "{error}");
        }
        for unit in [
            "systemd-reboot.service",
            "systemd-poweroff",
            "systemd-kexec",
            "systemd-suspend.service",
            "systemd-exit",
        ] {
            let error = rollback_script(&b, "r", &[handler(unit)], 5).expect_err(unit);
            assert!(error.contains("never a handler's"), "{error}");
        }
        for unit in ["..", ".x", "-kubelet"] {
            rollback_script(&b, "r", &[handler(unit)], 5).expect_err(unit);
        }
        // Only the kubelet units are marked to be restarted.
        let both = [handler("kubelet"), handler("systemd-resolved")];
        let script = apply_script(&b, "r", "/var/lib/dnsfix/handled/x", None, &[], &both, 5)
            .expect("apply script");
        assert!(script.contains("\nDUE='kubelet'\n"), "{script}");
        // `kubelet.service` is the same unit: marked by its name, and its health gated.
        let suffixed = [handler("kubelet.service")];
        let script = apply_script(
            &b,
            "r",
            "/var/lib/dnsfix/handled/x",
            None,
            &[],
            &suffixed,
            5,
        )
        .expect("apply script");
        assert!(
            script.contains("\nDUE='kubelet'\n")
                && script.contains("handler 'kubelet.service' restart 1 5"),
            "{script}"
        );
        for unit in [
            "kubelet",
            "kubelet.service",
            "snap.microk8s.daemon-kubelite",
            "k3s",
        ] {
            rollback_script(&b, "r", &[handler(unit)], 5).expect(unit);
        }
    }

    #[test]
    fn every_template_renders_with_its_values() {
        let b = Boundary::from_nonce("b");
        let apply = apply_script(&b, "r", "/var/lib/dnsfix/handled/x", None, &[], &[], 5)
            .expect("apply script");
        let rollback = rollback_script(&b, "r", &[], 5).expect("rollback script");
        for script in [apply, rollback] {
            assert!(script.contains("B=\"--dnsfix-b\"") && script.contains("RUN=\"r\""));
            assert!(!script.contains("@RUN@") && !script.contains("@BOUNDARY@"));
        }
    }

    /// A plan that recreates DNS pods names its pods-pending note, and the script notes
    /// them pending before the handlers; a plan that does not names none (the note is
    /// never written). A path the script cannot quote safely renders no script.
    #[test]
    fn a_plan_that_recreates_pods_notes_them_pending_before_its_handlers() {
        let b = Boundary::from_nonce("b");
        let handler = HandlerRun {
            name: "restart kubelet".into(),
            unit: "kubelet".into(),
            action: Default::default(),
            serial: crate::playbook::Batch::Count(1),
            reasons: Vec::new(),
        };
        let handled = "/var/lib/dnsfix/handled/x";
        let note = pods_pending_note("x");
        let handlers = std::slice::from_ref(&handler);
        let script = apply_script(&b, "r", handled, Some(&note), &[], handlers, 5).expect("script");
        assert!(
            script.contains(&format!("PODS_PENDING=\"{note}\""))
                && script.contains("if handlers_due; then\npods_pending\nhandler "),
            "{script}"
        );
        let script = apply_script(&b, "r", handled, None, &[], handlers, 5).expect("script");
        assert!(script.contains("PODS_PENDING=\"\""), "{script}");
        apply_script(&b, "r", handled, Some("/var/lib/x\"y"), &[], handlers, 5).expect_err("quote");
    }
}
