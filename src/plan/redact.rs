//! Secrets in the files a plan shows and saves. A k3s `config.yaml` holds the cluster's
//! `token`, a group_vars file may hold `ansible_become_password`: a reviewer must see that a
//! line is there and unchanged, never its value, and a saved plan or run record must not be
//! a copy of it. The value of a secret-looking key (`token`, `password`, `secret`, `key`,
//! ...) and the password of a `scheme://user:password@` URL become
//! `<redacted sha256:…>`, keeping a digest to tell values apart.
//!
//! A saved plan holds the redacted text, so `apply` puts the values back from the file on
//! the node ([`unredact`]): compare-and-swap makes that file exactly the one the plan was
//! made from, and the result must hash to the plan's `after_sha256`.

use crate::facts::raw::sha256_hex;

use super::model::{Change, Plan};

const MARK: &str = "<redacted sha256:";
/// Hex digits of the digest kept in a marker.
const DIGEST: usize = 16;

/// Words that make a key a secret's: `token`, `agent-token`, `etcd-s3-secret-key`,
/// `ansible_become_password`, `api_key`.
fn secret_key(key: &str) -> bool {
    key.to_ascii_lowercase().split(['-', '_', '.']).any(|word| {
        matches!(
            word,
            "key"
                | "pass"
                | "apikey"
                | "accesskey"
                | "secretkey"
                | "privatekey"
                | "credential"
                | "credentials"
        ) || ["token", "password", "passwd", "secret"]
            .iter()
            .any(|s| word.ends_with(s))
    })
}

fn marker(value: &str) -> String {
    format!("{MARK}{}>", &sha256_hex(value.as_bytes())[..DIGEST])
}

/// One line split as `PREFIX KEY SEP VALUE`, for `key: value`, `KEY=value`, `- key=value`
/// and `export KEY=value` lines.
fn split_assignment(line: &str) -> Option<(usize, &str, &str)> {
    let body_start = line.len() - line.trim_start().len();
    let mut body = &line[body_start..];
    let mut offset = body_start;
    for lead in ["- ", "export "] {
        if let Some(rest) = body.strip_prefix(lead) {
            let trimmed = rest.trim_start();
            offset += body.len() - trimmed.len();
            body = trimmed;
        }
    }
    let body = body.trim_start_matches(['"', '\'']);
    let key_end = body.find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))?;
    let key = &body[..key_end];
    let rest = body[key_end..].trim_start_matches(['"', '\'']).trim_start();
    let sep = rest.chars().next()?;
    if key.is_empty() || !matches!(sep, ':' | '=') {
        return None;
    }
    let after_sep = &rest[1..];
    let value = after_sep.trim();
    if value.is_empty() {
        return None;
    }
    let value_start = line.len() - after_sep.trim_start().len();
    let _ = offset;
    Some((value_start, key, value))
}

/// The password part of `scheme://user:password@`, as a byte range.
fn url_password(line: &str) -> Option<(usize, usize)> {
    let scheme = line.find("://")? + 3;
    let rest = &line[scheme..];
    let at = rest.find('@')?;
    let userinfo = &rest[..at];
    if userinfo.contains(['/', ' ']) {
        return None;
    }
    let colon = userinfo.find(':')?;
    Some((scheme + colon + 1, scheme + at))
}

/// `text` with every secret value replaced by a marker.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        let mut redacted = body.to_owned();
        if let Some((start, key, value)) = split_assignment(body)
            && secret_key(key)
            && !value.starts_with(MARK)
        {
            let value = body[start..].trim_end();
            redacted = format!("{}{}", &body[..start], marker(value));
        } else if let Some((from, to)) = url_password(body)
            && !body[from..to].starts_with(MARK)
        {
            redacted = format!(
                "{}{}{}",
                &body[..from],
                marker(&body[from..to]),
                &body[to..]
            );
        }
        out.push_str(&redacted);
        out.push_str(end);
    }
    out
}

/// `plan` as it may be shown or saved: every file's before and after text redacted (the
/// sha256s stay those of the real content).
pub fn redact_plan(plan: &Plan) -> Plan {
    let mut plan = plan.clone();
    for host in &mut plan.hosts {
        host.changes = redact_changes(&host.changes);
    }
    for change in &mut plan.inventory_changes {
        change.content = redact(&change.content);
        if let Some(b) = &mut change.before {
            *b = redact(b);
        }
    }
    plan
}

/// `changes` as they may be shown or recorded: every file's before and after text
/// redacted.
pub fn redact_changes(changes: &[Change]) -> Vec<Change> {
    let mut changes = changes.to_vec();
    for change in &mut changes {
        if let Change::WriteFile {
            before, content, ..
        } = change
        {
            *content = redact(content);
            if let Some(b) = before {
                *b = redact(b);
            }
        }
    }
    changes
}

/// Whether `text` holds a marker.
pub fn is_redacted(text: &str) -> bool {
    text.contains(MARK)
}

/// `redacted` with each marker replaced by the value it stands for, taken from `source`
/// (the file the redacted text was made from, or that it edits): a line of `source` with
/// the same text before the value and a value with the marker's digest.
pub fn unredact(redacted: &str, source: &str) -> Result<String, String> {
    let mut out = String::with_capacity(redacted.len());
    for (n, line) in redacted.split_inclusive('\n').enumerate() {
        let Some(at) = line.find(MARK) else {
            out.push_str(line);
            continue;
        };
        let prefix = &line[..at];
        let close = line[at..]
            .find('>')
            .map(|i| at + i + 1)
            .ok_or_else(|| format!("line {}: a redaction marker is cut short", n + 1))?;
        let digest = &line[at + MARK.len()..close - 1];
        let suffix = &line[close..];
        let value = source.lines().find_map(|s| {
            let rest = s.strip_prefix(prefix)?;
            let suffix_trim = suffix.trim_end_matches('\n');
            let value = rest.strip_suffix(suffix_trim).unwrap_or(rest);
            let value = if suffix_trim.is_empty() {
                value.trim_end()
            } else {
                value
            };
            (sha256_hex(value.as_bytes()).starts_with(digest)).then_some(value)
        });
        match value {
            Some(v) => {
                out.push_str(prefix);
                out.push_str(v);
                out.push_str(suffix);
            }
            None => {
                return Err(format!(
                    "line {}: the redacted value is not in the file on the node",
                    n + 1
                ));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A k3s agent config.yaml as docs.k3s.io shows one (token and server), with a
    /// datastore URL carrying a password.
    const K3S: &str = "server: https://10.0.0.1:6443\ntoken: K10abc::server:s3cr3t\nagent-token: 'other'\nresolv-conf: /etc/resolv.conf\ndatastore-endpoint: postgres://k3s:hunter2@db:5432/k3s\nkubelet-arg:\n  - max-pods=200\n";

    #[test]
    fn secret_values_are_replaced_and_restored() {
        let r = redact(K3S);
        assert!(
            !r.contains("s3cr3t") && !r.contains("hunter2") && !r.contains("other"),
            "{r}"
        );
        assert!(r.contains("server: https://10.0.0.1:6443\n"));
        assert!(r.contains("resolv-conf: /etc/resolv.conf\n"));
        assert!(r.contains("token: <redacted sha256:"));
        assert!(r.contains("postgres://k3s:<redacted sha256:"));
        assert_eq!(redact(&r), r, "redacting twice changes nothing");
        // The plan's new content: resolv-conf changed, the token line as it was.
        let edited = r.replace("/etc/resolv.conf", "/etc/dnsfix/resolv.conf");
        let applied = unredact(&edited, K3S).expect("restored");
        assert_eq!(
            applied,
            K3S.replace("/etc/resolv.conf", "/etc/dnsfix/resolv.conf")
        );
        // A different secret on the node does not restore.
        assert!(unredact(&edited, &K3S.replace("s3cr3t", "changed")).is_err());
    }

    /// What a run record keeps of the plan (its changes) shows no secret either.
    #[test]
    fn recorded_changes_are_redacted() {
        let change = Change::WriteFile {
            path: "/etc/rancher/k3s/config.yaml".into(),
            description: String::new(),
            before_sha256: Some("b".into()),
            before: Some(K3S.into()),
            after_sha256: "a".into(),
            content: K3S.replace("/etc/resolv.conf", "/etc/dnsfix/resolv.conf"),
            mode: None,
            reasons: vec![],
        };
        let mut with = super::super::error_plan("node1", vec![], "x", "y".into());
        with.changes = vec![change];
        let record = crate::apply::HostResult::new(&with, crate::apply::HostOutcome::Pending);
        let json = serde_json::to_string(&record).expect("json");
        assert!(
            !json.contains("s3cr3t") && !json.contains("hunter2"),
            "{json}"
        );
        assert!(json.contains(MARK), "{json}");
    }

    #[test]
    fn ansible_pass_variables_and_spaced_colons() {
        for line in [
            "ansible_become_pass: hunter2\n",
            "ansible_ssh_pass=hunter2\n",
            "token : hunter2\n",
        ] {
            let out = redact(line);
            assert!(
                !out.contains("hunter2") && out.contains(MARK),
                "{line} -> {out}"
            );
            assert_eq!(unredact(&out, line).as_deref(), Ok(line), "{line}");
        }
    }

    #[test]
    fn env_files_and_ini_forms() {
        let env = "KUBELET_EXTRA_ARGS=--v=2\nexport API_TOKEN=\"abc\"\nansible_become_password=pw1\nmonkey=banana\n";
        let r = redact(env);
        assert!(r.contains("KUBELET_EXTRA_ARGS=--v=2\n"));
        assert!(!r.contains("abc") && !r.contains("pw1"), "{r}");
        assert!(r.contains("monkey=banana"), "{r}");
        assert_eq!(unredact(&r, env).expect("restored"), env);
    }
}
