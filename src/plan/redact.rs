//! Secrets in the files a plan shows and saves. A k3s `config.yaml` holds the cluster's
//! `token`, a group_vars file may hold `ansible_become_password`: a reviewer must see that a
//! line is there and unchanged, never its value, and a saved plan or run record must not be
//! a copy of it. The value of a secret-looking key (`token`, `password`, `secret`, `key`,
//! ...) and the password of a `scheme://user:password@` URL become
//! `<redacted hmac:…>`, a digest keyed with a random key of this run alone, never stored: it
//! tells values apart within what one run shows and saves (a changed secret shows in a
//! diff), and confirms no guess at a value (a marker of the value's plain sha256, which
//! plans before it held, did: an offline check of a password list). That holds for a value on
//! its key's line (`key: v`, `KEY=v`), written inline (`{"token": "v"}`, an INI host line's
//! `ansible_become_password=v`, `--token=v`), and below its key (a block scalar such as a
//! private key, a next-line value, an open quote), line by line. A marker stands for the
//! value alone: a line's `\r` and trailing blanks stay, so the file restores byte for byte.
//!
//! A saved plan holds the redacted text, so `apply` puts the values back from the file on
//! the node ([`unredact`]): its lines are matched in order around the markers, compare-and-swap
//! makes that file exactly the one the plan was made from, and the result must hash to the
//! plan's `after_sha256`.

use crate::util::sha256_hex;

use super::model::{Change, Plan};

const MARK: &str = "<redacted hmac:";
/// Markers of plans made before: the first hex digits of the value's sha256, checked when
/// the value is restored.
const SHA256_MARK: &str = "<redacted sha256:";

/// Whether a redacted old text (what `show` drew a diff from) is `source`, the file it was
/// redacted from, once its values are put back: its other lines are that file's.
pub fn shows(redacted: &str, source: &str) -> bool {
    unredact(redacted, source).is_ok_and(|text| text == source)
}

/// Whether `text` starts with a marker.
fn marked(text: &str) -> bool {
    text.starts_with(MARK) || text.starts_with(SHA256_MARK)
}

/// The key of this run's markers: random, kept in memory only.
fn run_key() -> &'static [u8; 32] {
    static KEY: std::sync::OnceLock<[u8; 32]> = std::sync::OnceLock::new();
    KEY.get_or_init(|| {
        let mut key = [0u8; 32];
        let read = std::fs::File::open("/dev/urandom")
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut key));
        if read.is_err() {
            // No /dev/urandom: the std hasher's random seeds, as util::nonce uses them.
            let seed = format!("{}{}", crate::util::nonce(), crate::util::nonce());
            key = crate::util::sha256(seed.as_bytes());
        }
        key
    })
}
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

/// A value no secret is: a boolean, as in kubelet's `--authentication-token-webhook=true`
/// (a `token` key that only switches something on). Bare, or in a matching pair of quotes:
/// a quote left open goes on below (`password: "true` and a secret on the next line).
fn boolean(value: &str) -> bool {
    let value = value.trim();
    let bare = ['"', '\''].into_iter().fold(value, |v, q| {
        match v.strip_prefix(q).and_then(|v| v.strip_suffix(q)) {
            Some(inner) if value.len() >= 2 => inner,
            _ => v,
        }
    });
    bare.eq_ignore_ascii_case("true") || bare.eq_ignore_ascii_case("false")
}

fn marker(value: &str) -> String {
    use hmac::{Hmac, KeyInit, Mac};
    let mut mac = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(run_key())
        .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
    mac.update(value.as_bytes());
    let digest = crate::util::hex(&mac.finalize().into_bytes());
    format!("{MARK}{}>", &digest[..DIGEST])
}

/// One line split as `PREFIX KEY SEP VALUE`, for `key: value`, `KEY=value`, `- key=value`
/// and `export KEY=value` lines: the value's start, the key, and the value (trimmed, empty
/// when the line ends at the separator). The key's column is the line's indentation.
fn split_assignment(line: &str) -> Option<(usize, &str, &str)> {
    let mut body = line.trim_start();
    for lead in ["- ", "export "] {
        if let Some(rest) = body.strip_prefix(lead) {
            body = rest.trim_start();
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
    let value_start = line.len() - after_sep.trim_start().len();
    Some((value_start, key, after_sep.trim()))
}

/// A YAML block scalar's header (`|`, `>-`, `|2 # comment`): the value is on the lines
/// below.
fn block_header(value: &str) -> bool {
    // A tag may come first: `!vault |` (Ansible Vault in group_vars), `!!binary |`.
    let value = match value.strip_prefix('!') {
        Some(tagged) => tagged
            .split_once([' ', '\t'])
            .map_or("", |(_, rest)| rest.trim_start()),
        None => value,
    };
    value.starts_with(['|', '>'])
        && value[1..]
            .split('#')
            .next()
            .is_some_and(|rest| rest.trim().chars().all(|c| "+-0123456789".contains(c)))
}

/// A quoted YAML string left open on its key's line: it goes on below.
fn open_quote(value: &str) -> bool {
    ['"', '\'']
        .into_iter()
        .any(|q| value.starts_with(q) && (value.len() == 1 || !value.ends_with(q)))
}

/// Secret values written inline, anywhere on a line: `{"token": "abc"}`, an INI host line's
/// `ansible_become_password=x`, a command line's `--token=x`. Byte ranges, in order.
fn inline_secrets(line: &str) -> Vec<(usize, usize)> {
    let bytes = line.as_bytes();
    let is_key = |b: u8| b.is_ascii_alphanumeric() || b"-_.".contains(&b);
    let mut ranges = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let boundary = i == 0 || b" \t{,[\"'=".contains(&bytes[i - 1]);
        if !boundary || !is_key(bytes[i]) {
            i += 1;
            continue;
        }
        let key_start = i;
        while i < bytes.len() && is_key(bytes[i]) {
            i += 1;
        }
        let key = &line[key_start..i];
        let mut j = i;
        if j < bytes.len() && b"\"'".contains(&bytes[j]) {
            j += 1;
        }
        while j < bytes.len() && bytes[j] == b' ' {
            j += 1;
        }
        let sep = bytes.get(j).copied();
        let value_follows = match sep {
            Some(b'=') => true,
            Some(b':') => bytes.get(j + 1).is_none_or(|b| b" \t\"'".contains(b)),
            _ => false,
        };
        if !value_follows || !secret_key(key) {
            continue;
        }
        let mut start = j + 1;
        while start < bytes.len() && bytes[start] == b' ' {
            start += 1;
        }
        let end = match bytes.get(start) {
            Some(&q @ (b'"' | b'\'')) => line[start + 1..]
                .find(q as char)
                .map_or(bytes.len(), |k| start + 1 + k + 1),
            _ => line[start..]
                .find([' ', '\t', ',', '}', ']'])
                .map_or(bytes.len(), |k| start + k),
        };
        if end > start && !marked(&line[start..]) && !boolean(&line[start..end]) {
            ranges.push((start, end));
        }
        i = end.max(i);
    }
    ranges
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

/// `line` with each of `ranges` (ordered, not overlapping) replaced by its marker.
fn replace(line: &str, ranges: &[(usize, usize)]) -> String {
    let mut out = String::with_capacity(line.len());
    let mut at = 0;
    for &(from, to) in ranges {
        out.push_str(&line[at..from]);
        out.push_str(&marker(&line[from..to]));
        at = to;
    }
    out.push_str(&line[at..]);
    out
}

/// Where a line's key starts: after its indentation, `- ` and `export `.
fn key_column(line: &str) -> usize {
    let mut body = line.trim_start();
    while let Some(rest) = body
        .strip_prefix("- ")
        .or_else(|| body.strip_prefix("export "))
    {
        body = rest.trim_start();
    }
    line.len() - body.len()
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The secret values of one line (without its newline), and whether a secret's value
/// continues on the lines below (a block scalar, a next-line value, an open quote).
fn secrets_of(line: &str) -> (Vec<(usize, usize)>, bool) {
    if let Some((start, key, value)) = split_assignment(line)
        && secret_key(key)
    {
        // Nothing on the key's line but a comment: the value is below.
        if value.is_empty() || value.starts_with('#') || block_header(value) {
            return (Vec::new(), true);
        }
        if marked(value) || boolean(value) {
            return (Vec::new(), false);
        }
        // The marker stands for the value alone: a trailing blank or `\r` stays as it is.
        let range = (start, start + line[start..].trim_end().len());
        return (vec![range], open_quote(value));
    }
    // Anywhere else on the line: URL passwords (every one) and inline `key=value`s.
    let mut ranges = inline_secrets(line);
    let mut at = 0;
    while let Some((from, to)) = url_password(&line[at..]).map(|(f, t)| (at + f, at + t)) {
        if !marked(&line[from..to]) {
            ranges.push((from, to));
        }
        at = to;
    }
    ranges.sort_unstable();
    // Overlapping ranges (a password inside an inline value) become one.
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (from, to) in ranges {
        match merged.last_mut() {
            Some(last) if from < last.1 => last.1 = last.1.max(to),
            _ => merged.push((from, to)),
        }
    }
    (merged, false)
}

/// `text` with every secret value replaced by a marker. A value on the lines below its key
/// (a YAML block scalar such as a private key, or a value on the next line) is replaced
/// line by line, each line's indentation kept.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // Inside a secret's continuation: the indentation of its key.
    let mut within: Option<usize> = None;
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        if let Some(key_indent) = within {
            let content = body.trim();
            if content.is_empty() {
                out.push_str(line);
                continue;
            }
            if indentation(body) > key_indent {
                if !marked(content) {
                    let start = indentation(body);
                    let range = (start, start + body[start..].trim_end().len());
                    out.push_str(&replace(body, &[range]));
                } else {
                    out.push_str(body);
                }
                out.push_str(end);
                continue;
            }
            within = None;
        }
        let (ranges, more) = secrets_of(body);
        if more {
            within = Some(key_column(body));
        }
        out.push_str(&replace(body, &ranges));
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

/// Whether `text` holds a keyed marker, whose value only the restored file's sha256 checks.
pub fn is_keyed(text: &str) -> bool {
    text.contains(MARK)
}

/// Whether `text` holds a marker.
pub fn is_redacted(text: &str) -> bool {
    text.contains(MARK) || text.contains(SHA256_MARK)
}

/// One piece of a redacted line: text as it is, or a marker: a value, with the digest of
/// its sha256 where an older plan's marker gives one.
enum Piece<'a> {
    Text(&'a str),
    Secret(Option<&'a str>),
}

fn pieces(line: &str) -> Result<Vec<Piece<'_>>, String> {
    let mut out = Vec::new();
    let mut rest = line;
    let next = |rest: &str| {
        [MARK, SHA256_MARK]
            .into_iter()
            .filter_map(|mark| rest.find(mark).map(|at| (at, mark)))
            .min()
    };
    while let Some((at, mark)) = next(rest) {
        let close = rest[at..]
            .find('>')
            .map(|i| at + i + 1)
            .ok_or("a redaction marker is cut short")?;
        out.push(Piece::Text(&rest[..at]));
        let digest = &rest[at + mark.len()..close - 1];
        out.push(Piece::Secret((mark == SHA256_MARK).then_some(digest)));
        rest = &rest[close..];
    }
    out.push(Piece::Text(rest));
    Ok(out)
}

/// Whether `line` reads as `pieces`: its text as it is, each secret a value (not empty, and
/// of its digest where the marker gives one).
fn fits(pieces: &[Piece<'_>], line: &str) -> bool {
    match pieces {
        [] => line.is_empty(),
        [Piece::Text(t), rest @ ..] => line.strip_prefix(t).is_some_and(|line| fits(rest, line)),
        [Piece::Secret(digest), rest @ ..] => {
            // Where the value may end: before the next text (or at the line's end).
            let ends: Vec<usize> = match rest.first() {
                Some(Piece::Text(t)) if !t.is_empty() => {
                    line.match_indices(t).map(|(i, _)| i).collect()
                }
                _ => vec![line.len()],
            };
            ends.into_iter().any(|end| {
                end > 0
                    && digest.is_none_or(|d| sha256_hex(&line.as_bytes()[..end]).starts_with(d))
                    && fits(rest, &line[end..])
            })
        }
    }
}

/// `redacted` with each marker replaced by the value it stands for, taken from `source`
/// (the file the redacted text was made from, or that it edits): a line of `source` that
/// reads the same around the markers, with values of the markers' digests.
pub fn unredact(redacted: &str, source: &str) -> Result<String, String> {
    let lines: Vec<&str> = source.split('\n').collect();
    // Lines are matched in order: of two lines that read alike around their markers (a
    // `password:` under two keys, the lines of two block scalars), each takes the first
    // after the last line placed, a line without a marker placing itself where it is in
    // the file too (a block scalar's lines come after its key's). A match before that is
    // taken only where none follows it.
    let mut from = 0;
    let mut out = String::with_capacity(redacted.len());
    for (n, line) in redacted.split_inclusive('\n').enumerate() {
        if !is_redacted(line) {
            let body = line.strip_suffix('\n').unwrap_or(line);
            if let Some(i) = (from..lines.len()).find(|&i| lines[i] == body) {
                from = i + 1;
            }
            out.push_str(line);
            continue;
        }
        let (body, end) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        let pieces = pieces(body).map_err(|e| format!("line {}: {e}", n + 1))?;
        let found = (from..lines.len())
            .chain(0..from.min(lines.len()))
            .find(|&i| fits(&pieces, lines[i]));
        match found {
            Some(i) => {
                from = i + 1;
                out.push_str(lines[i]);
                out.push_str(end);
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

    /// A switch is no secret: MicroK8s's kubelet arguments say
    /// `--authentication-token-webhook=true`; a token's value is still replaced.
    #[test]
    fn a_boolean_under_a_secret_looking_key_stays() {
        let args = "--authentication-token-webhook=true\n--read-only-port=0\n";
        assert_eq!(redact(args), args);
        assert_eq!(
            redact("enable-secret: \"False\"\n"),
            "enable-secret: \"False\"\n"
        );
        assert!(redact("--token=true1\n").contains(MARK));
        assert!(redact("token: abc\n").contains(MARK));
        // A quote left open is no boolean: the value goes on below.
        for open in [
            "password: \"true\n  hunter2\"\n",
            "password: 'false\n  hunter2'\n",
        ] {
            assert!(!redact(open).contains("hunter2"), "{}", redact(open));
        }
    }

    #[test]
    fn secret_values_are_replaced_and_restored() {
        let r = redact(K3S);
        assert!(
            !r.contains("s3cr3t") && !r.contains("hunter2") && !r.contains("other"),
            "{r}"
        );
        assert!(r.contains("server: https://10.0.0.1:6443\n"));
        assert!(r.contains("resolv-conf: /etc/resolv.conf\n"));
        assert!(r.contains("token: <redacted hmac:"));
        assert!(r.contains("postgres://k3s:<redacted hmac:"));
        assert_eq!(redact(&r), r, "redacting twice changes nothing");
        // The plan's new content: resolv-conf changed, the token line as it was.
        let edited = r.replace("/etc/resolv.conf", "/etc/dnsfix/resolv.conf");
        let applied = unredact(&edited, K3S).expect("restored");
        assert_eq!(
            applied,
            K3S.replace("/etc/resolv.conf", "/etc/dnsfix/resolv.conf")
        );
        // A different secret on the node restores as the node has it: not the content the
        // plan hashed (apply refuses it on the plan's after_sha256).
        let other = unredact(&edited, &K3S.replace("s3cr3t", "changed")).expect("restored");
        assert_ne!(other, applied);
    }

    /// A marker confirms no guess: it is not the value's sha256 (a password list checked
    /// offline against a plan pasted in a review), only the same within one run, where a
    /// changed value still shows as a changed marker.
    #[test]
    fn markers_are_keyed_with_this_run_s_key() {
        let marked = redact("ansible_become_password: Summer2024!\n");
        let plain = sha256_hex(b"Summer2024!");
        assert!(
            marked.starts_with("ansible_become_password: <redacted hmac:"),
            "{marked}"
        );
        assert!(!marked.contains(&plain[..DIGEST]), "{marked}");
        assert_eq!(redact("ansible_become_password: Summer2024!\n"), marked);
        assert_ne!(redact("ansible_become_password: Summer2025!\n"), marked);
    }

    /// A plan saved before keyed markers: its sha256 markers still restore, each value
    /// checked against its digest.
    #[test]
    fn an_older_plan_s_sha256_markers_restore_and_are_checked() {
        let text = "token: hunter2\nresolv-conf: /etc/resolv.conf\n";
        let old = format!(
            "token: <redacted sha256:{}>\nresolv-conf: /etc/dnsfix/resolv.conf\n",
            &sha256_hex(b"hunter2")[..DIGEST]
        );
        assert!(is_redacted(&old));
        assert_eq!(
            unredact(&old, text).as_deref(),
            Ok("token: hunter2\nresolv-conf: /etc/dnsfix/resolv.conf\n")
        );
        assert!(unredact(&old, &text.replace("hunter2", "other")).is_err());
    }

    /// Lines that read alike around their markers restore in order, each its own value: two
    /// keys' values, and a block scalar's lines after indented lines of the same depth
    /// before its key.
    #[test]
    fn alike_lines_restore_in_order() {
        let text = "db:\n  password: one\ncache:\n  password: two\nresolv-conf: /a\n";
        let edited = redact(text).replace("/a", "/b");
        assert_eq!(
            unredact(&edited, text).as_deref(),
            Ok("db:\n  password: one\ncache:\n  password: two\nresolv-conf: /b\n")
        );
        let text = "k8s_cluster:\n  hosts:\n    node1:\n      ansible_host: 10.0.0.1\nall:\n  vars:\n    ssh_private_key: |\n      AAAA\n      BBBB\nresolv: /a\n";
        let edited = redact(text).replace("/a", "/b");
        assert!(!edited.contains("AAAA"), "{edited}");
        assert_eq!(
            unredact(&edited, text).as_deref(),
            Ok(text.replace("/a", "/b").as_str())
        );
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
        // Values with letters no hex digest holds: a marker cannot contain them by chance.
        let env = "KUBELET_EXTRA_ARGS=--v=2\nexport API_TOKEN=\"xyz\"\nansible_become_password=pw1\nmonkey=banana\n";
        let r = redact(env);
        assert!(r.contains("KUBELET_EXTRA_ARGS=--v=2\n"));
        assert!(!r.contains("xyz") && !r.contains("pw1"), "{r}");
        assert!(r.contains("monkey=banana"), "{r}");
        assert_eq!(unredact(&r, env).expect("restored"), env);
    }

    /// Values the line-at-a-time reading used to miss: each is hidden, and the text comes
    /// back byte for byte from the file it was made from.
    #[test]
    fn values_below_their_key_inline_and_with_crlf() {
        let cases = [
            // A private key kept as a block scalar in group_vars.
            "ssh_private_key: |\n  -----BEGIN OPENSSH PRIVATE KEY-----\n  b3BlbnNzaC1rZXktdjEAAAAA\n  -----END OPENSSH PRIVATE KEY-----\nother: 1\n",
            "token: >-\n  hunter2\n\nother: 1\n",
            // The value on the next line, and a quoted value going on below.
            "token:\n  hunter2\nother: 1\n",
            "- name: x\n  token: \"hunter2\n    more\"\n  other: 1\n",
            // One-line JSON, an INI host line, a command line.
            "{\"token\": \"hunter2\", \"server\": \"https://x:6443\"}\n",
            "node1 ansible_host=10.0.0.1 ansible_become_password=hunter2 ip=10.0.0.1\n",
            "ExecStart=/usr/local/bin/k3s agent --server=https://x:6443 --token=hunter2\n",
            "{\"a\": {\"api_key\":\"hunter2\"}, \"password\": 'hunter2x'}\n",
            // CRLF and trailing blanks stay as they were.
            "token: hunter2\r\nresolv-conf: /etc/resolv.conf\r\n",
            "token: hunter2   \nother: 1\n",
            // A tagged block (Ansible Vault in group_vars), a comment before the value.
            "ansible_become_password: !vault |\n          $ANSIBLE_VAULT;1.1;AES256\n          68756e74657232\nother: 1\n",
            "ssh_key: !!binary |\n  hunter2==\n",
            "token: # set below\n  hunter2\nother: 1\n",
            // Two URLs with passwords, a secret flag inside another variable's value.
            "a: postgres://u:hunter2@db/x and mysql://v:hunter2x@h/y\n",
            "KUBELET_EXTRA_ARGS=--token=hunter2 --v=2\n",
        ];
        for text in cases {
            let out = redact(text);
            assert!(!out.contains("hunter2"), "{text:?} -> {out:?}");
            assert!(out.contains(MARK), "{text:?} -> {out:?}");
            assert_eq!(
                redact(&out),
                out,
                "redacting twice changes nothing: {text:?}"
            );
            assert_eq!(unredact(&out, text).as_deref(), Ok(text), "{out:?}");
        }
        // Around a secret's lines, the rest is shown as it is.
        let out = redact(cases[0]);
        assert!(out.starts_with("ssh_private_key: |\n  <redacted"), "{out}");
        assert!(out.ends_with("\nother: 1\n"), "{out}");
        let out = redact(cases[5]);
        assert!(out.starts_with("node1 ansible_host=10.0.0.1 ansible_become_password=<redacted"));
        assert!(out.ends_with(" ip=10.0.0.1\n"), "{out}");
    }

    /// Restoring needs each secret's line on the node: a line that reads otherwise around
    /// its markers, or none at all, fails.
    #[test]
    fn a_marker_with_no_matching_line_is_refused() {
        let text = "{\"token\": \"a\", \"password\": \"b\"}\n";
        let out = redact(text);
        assert_eq!(unredact(&out, text).as_deref(), Ok(text));
        assert!(unredact(&out, "{\"token\": \"a\", \"secret\": \"b\"}\n").is_err());
        assert!(unredact(&out, "").is_err());
    }
}
