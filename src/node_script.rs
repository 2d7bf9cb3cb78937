//! The protocol every script dnsfix runs on a node speaks (gather, apply, rollback): how a
//! run's boundary is made, what a record header looks like, how output is split into
//! typed records (on bytes: file contents are not text), and how a script template gets
//! its values. It never runs anything and never interprets what a record means; `raw`
//! (facts) and `apply` do.
//!
//! A record is `\n<BOUNDARY> <kind> <args>\n` followed by its body, up to the next record.
//! The boundary holds a fresh nonce, so no file on a node can forge one. The gather script
//! also sends files in a batch through head(1), whose headers (`\n==> NAME <==\n`) carry
//! the nonce as a path prefix (see [`Boundary::path_prefix`]).

/// The units that run a kubelet, directly or inside themselves (k3s and RKE2), in the order
/// dnsfix prefers them. The gather script asks systemd about exactly these.
pub const KUBELET_UNITS: &[&str] = &[
    "kubelet",
    "k3s",
    "k3s-agent",
    "rke2-server",
    "rke2-agent",
    "snap.microk8s.daemon-kubelite",
    "k0sworker",
    "k0scontroller",
];

/// One run's record boundary, made from its nonce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Boundary {
    nonce: String,
}

impl Boundary {
    /// A boundary with a fresh nonce.
    pub fn fresh() -> Boundary {
        Boundary {
            nonce: crate::util::nonce(),
        }
    }

    pub fn from_nonce(nonce: &str) -> Boundary {
        Boundary {
            nonce: nonce.to_owned(),
        }
    }

    /// What starts every record header: `--dnsfix-<nonce>`.
    pub fn text(&self) -> String {
        format!("--dnsfix-{}", self.nonce)
    }

    /// A digest of the nonce spelled as a path prefix that resolves to `/`: two bits per
    /// step, `./`, `../`, `.//` or `..//` (at the root `..` is the root). gather.sh gives
    /// head(1) every file as this prefix and the path without its leading `/`, so the
    /// header head prints before each file (`==> NAME <==`) carries it. head's arguments
    /// are visible to every user of the node (`ps`), so the prefix is a one-way digest of
    /// the nonce, never the nonce: seeing it does not tell anyone the record boundary.
    /// (A file's content may still imitate head's header; the parser only accepts each
    /// announced file once, in order, so an imitation ends in an error, not in a fact.)
    pub fn path_prefix(&self) -> String {
        const STEPS: [&str; 4] = ["./", "../", ".//", "..//"];
        let digest = crate::util::sha256_hex(format!("dnsfix-path:{}", self.nonce).as_bytes());
        let mut out = String::from("/");
        for c in digest[..32].chars() {
            let v = c.to_digit(16).unwrap_or(u32::from(c) & 0xf) as usize;
            out.push_str(STEPS[v >> 2]);
            out.push_str(STEPS[v & 3]);
        }
        out
    }

    /// A record header as the scripts' `hdr` prints it (tests build output with it).
    pub fn header(&self, kind: &RecordKind, args: &str) -> String {
        format!("\n{} {} {args}\n", self.text(), kind.as_str())
    }
}

/// What a record says. The names are the words the scripts print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordKind {
    // Every script.
    Begin,
    /// Something went wrong with the named path or step (body: why).
    Error,
    // Gather.
    End,
    /// The file batch (head's output) follows.
    Batch,
    /// A file of the batch, as head announced it (the name is the node path).
    BatchFile,
    File,
    /// A file that the batch will deliver.
    Read,
    Missing,
    /// A regular file that is there; its content was not asked for.
    Exists,
    Dir,
    Link,
    Canon,
    Cmd,
    Rc,
    Pid,
    // Apply and rollback.
    Done,
    Failed,
    Nothing,
    Locked,
    Fatal,
    Handled,
    Healthy,
    Unhealthy,
    Ok,
    Already,
    Skipped,
    Stale,
    Adopted,
    Kept,
    Removed,
    Restored,
    /// A kind no dnsfix script sends: output of another protocol.
    Unknown(String),
}

impl RecordKind {
    const NAMED: &[RecordKind] = &[
        RecordKind::Begin,
        RecordKind::Error,
        RecordKind::End,
        RecordKind::Batch,
        RecordKind::File,
        RecordKind::Read,
        RecordKind::Missing,
        RecordKind::Exists,
        RecordKind::Dir,
        RecordKind::Link,
        RecordKind::Canon,
        RecordKind::Cmd,
        RecordKind::Rc,
        RecordKind::Pid,
        RecordKind::Done,
        RecordKind::Failed,
        RecordKind::Nothing,
        RecordKind::Locked,
        RecordKind::Fatal,
        RecordKind::Handled,
        RecordKind::Healthy,
        RecordKind::Unhealthy,
        RecordKind::Ok,
        RecordKind::Already,
        RecordKind::Skipped,
        RecordKind::Stale,
        RecordKind::Adopted,
        RecordKind::Kept,
        RecordKind::Removed,
        RecordKind::Restored,
    ];

    pub fn as_str(&self) -> &str {
        match self {
            RecordKind::Begin => "begin",
            RecordKind::Error => "error",
            RecordKind::End => "end",
            RecordKind::Batch => "batch",
            RecordKind::BatchFile => "==>",
            RecordKind::File => "file",
            RecordKind::Read => "read",
            RecordKind::Missing => "missing",
            RecordKind::Exists => "exists",
            RecordKind::Dir => "dir",
            RecordKind::Link => "link",
            RecordKind::Canon => "canon",
            RecordKind::Cmd => "cmd",
            RecordKind::Rc => "rc",
            RecordKind::Pid => "pid",
            RecordKind::Done => "done",
            RecordKind::Failed => "failed",
            RecordKind::Nothing => "nothing",
            RecordKind::Locked => "locked",
            RecordKind::Fatal => "fatal",
            RecordKind::Handled => "handled",
            RecordKind::Healthy => "healthy",
            RecordKind::Unhealthy => "unhealthy",
            RecordKind::Ok => "ok",
            RecordKind::Already => "already",
            RecordKind::Skipped => "skipped",
            RecordKind::Stale => "stale",
            RecordKind::Adopted => "adopted",
            RecordKind::Kept => "kept",
            RecordKind::Removed => "removed",
            RecordKind::Restored => "restored",
            RecordKind::Unknown(word) => word,
        }
    }

    /// The kind a header's first word names.
    pub fn parse(word: &str) -> RecordKind {
        RecordKind::NAMED
            .iter()
            .find(|k| k.as_str() == word)
            .cloned()
            .unwrap_or_else(|| RecordKind::Unknown(word.to_owned()))
    }
}

/// One record of a script's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<'a> {
    pub kind: RecordKind,
    /// The whole header line after the boundary (for messages about it).
    pub header: String,
    /// The rest of the header after the kind (a path, unit, run id or message).
    pub args: String,
    /// Everything up to the next record, exactly as sent.
    pub body: &'a [u8],
}

impl Record<'_> {
    /// The body as text without its trailing newlines (a message, a value).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(self.body)
            .trim_end_matches('\n')
            .to_owned()
    }

    /// The body without its line end (a pid, a status, a link target): a newline inside
    /// it stays, for the caller to refuse.
    pub fn line(&self) -> String {
        String::from_utf8_lossy(self.body)
            .trim_end_matches(['\n', '\r'])
            .to_owned()
    }
}

/// A name from a node (a header, a path) as text: its UTF-8 as it is, and each byte that is
/// not UTF-8 as `\xHH`. Names that differ only there stay apart (`99-\xfe.conf` and
/// `99-\xff.conf` in /etc/sysctl.d were one file, the later one's, where each invalid byte
/// read as U+FFFD); [`name_bytes`] gives the bytes back. A valid name that spells such an
/// escape itself is taken for it, as a name made to be.
pub fn name_text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The bytes of a name [`name_text`] made: each `\xHH` of a byte from 0x80 (never valid
/// UTF-8 alone) as that byte. What a node sorts by name (systemd's strcmp of conf file
/// names) sorts by these.
pub fn name_bytes(name: &str) -> std::borrow::Cow<'_, [u8]> {
    if !name.contains("\\x") {
        return std::borrow::Cow::Borrowed(name.as_bytes());
    }
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = bytes
            .get(i..i + 4)
            .filter(|e| e.starts_with(b"\\x"))
            .and_then(|e| std::str::from_utf8(&e[2..]).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok())
            .filter(|b| *b >= 0x80);
        match escaped {
            Some(b) => {
                out.push(b);
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed record header: {0:?}")]
pub struct BadHeader(pub String);

/// Splits `output` into records. Each record starts at a newline followed by the boundary
/// (or, when `batch` is set, by head's header with the boundary's path prefix); text before
/// the first record (a login banner, a shell's warnings) is left out. A batch header that
/// does not end in ` <==` is an error.
pub fn records<'a>(
    output: &'a [u8],
    boundary: &Boundary,
    batch: bool,
) -> Result<Vec<Record<'a>>, BadHeader> {
    let marker = format!("\n{} ", boundary.text());
    let marker = marker.as_bytes();
    // head's header before each file of the batch (see gather.sh).
    let batch_marker = format!("\n==> {}", boundary.path_prefix());
    let batch_marker = batch.then_some(batch_marker.as_bytes());
    let starts = find_records(output, marker, batch_marker);
    let mut out = Vec::with_capacity(starts.len());
    for (i, &(start, in_batch)) in starts.iter().enumerate() {
        let header_start = start
            + match (in_batch, batch_marker) {
                (true, Some(b)) => b.len(),
                _ => marker.len(),
            };
        let end = starts.get(i + 1).map_or(output.len(), |&(s, _)| s);
        let record = &output[header_start..end];
        let (header, body) = match record.iter().position(|&b| b == b'\n') {
            Some(nl) => (&record[..nl], &record[nl + 1..]),
            None => (record, &record[record.len()..]),
        };
        let header = name_text(header);
        if in_batch {
            // "etc/resolv.conf <==": the path after the prefix, without its leading "/".
            let Some(rel) = header.strip_suffix(" <==") else {
                return Err(BadHeader(header.into_owned()));
            };
            out.push(Record {
                kind: RecordKind::BatchFile,
                args: format!("/{rel}"),
                header: header.into_owned(),
                body,
            });
            continue;
        }
        let (kind, args) = header.split_once(' ').unwrap_or((&header, ""));
        out.push(Record {
            kind: RecordKind::parse(kind),
            args: args.to_owned(),
            header: header.into_owned(),
            body,
        });
    }
    Ok(out)
}

/// Where each record starts, in order, and whether it is a file of the batch (`batch`
/// marker) rather than a script record (`marker`). Both start with a newline; the head
/// header right after the script's "batch" header starts at that header's newline.
fn find_records(haystack: &[u8], marker: &[u8], batch: Option<&[u8]>) -> Vec<(usize, bool)> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(at) = haystack[i..].iter().position(|&b| b == b'\n') {
        let at = i + at;
        let rest = &haystack[at..];
        if rest.starts_with(marker) {
            out.push((at, false));
            // The header line ends at the next newline, which may start a batch record.
            i = at + marker.len();
        } else if let Some(batch) = batch.filter(|b| rest.starts_with(b)) {
            out.push((at, true));
            i = at + batch.len();
        } else {
            i = at + 1;
        }
    }
    out
}

/// Fills a script template's `@NAME@` placeholders, in one pass: every placeholder in the
/// template must be given and every value must have its placeholder, so a template and its
/// caller cannot drift apart silently. Values are inserted as they are (callers check or
/// quote them); a value is never scanned for placeholders.
///
/// # Panics
/// When the template and the values do not match: the templates are dnsfix's own, so that
/// is a bug in dnsfix, caught by the tests that render every template.
pub fn render(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut used = vec![false; values.len()];
    let mut rest = template;
    while let Some(at) = rest.find('@') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_uppercase() || c == '_'))
            .unwrap_or(after.len());
        if name_len > 0 && after[name_len..].starts_with('@') {
            let name = &after[..name_len];
            let Some(i) = values.iter().position(|(n, _)| *n == name) else {
                panic!("script placeholder @{name}@ has no value");
            };
            used[i] = true;
            out.push_str(values[i].1);
            rest = &after[name_len + 1..];
        } else {
            out.push('@');
            rest = after;
        }
    }
    out.push_str(rest);
    if let Some(i) = used.iter().position(|u| !u) {
        panic!("script has no placeholder @{}@", values[i].0);
    }
    out
}

/// Single-quotes `s` for sh.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// An absolute path that is safe to put in single quotes and read.
pub fn safe_path(path: &str) -> bool {
    path.starts_with('/')
        && !path.split('/').any(|part| part == "..")
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/+@:-".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_through_their_words() {
        for kind in RecordKind::NAMED {
            assert_eq!(&RecordKind::parse(kind.as_str()), kind);
        }
        assert_eq!(
            RecordKind::parse("bogus"),
            RecordKind::Unknown("bogus".into())
        );
    }

    #[test]
    fn records_split_on_the_boundary_only() {
        let b = Boundary::from_nonce("x");
        let out = b"banner\n\n--dnsfix-x begin dnsfix-apply-1\n\n--dnsfix-x error /etc/a\ncannot write\n--dnsfix-x-not a record\n\n--dnsfix-x done r1\n";
        let r = records(out, &b, false).expect("frames");
        let kinds: Vec<&RecordKind> = r.iter().map(|r| &r.kind).collect();
        assert_eq!(
            kinds,
            [&RecordKind::Begin, &RecordKind::Error, &RecordKind::Done]
        );
        assert_eq!(r[1].args, "/etc/a");
        assert_eq!(r[1].text(), "cannot write\n--dnsfix-x-not a record");
    }

    #[test]
    fn batch_headers_count_only_when_asked_for() {
        let b = Boundary::from_nonce("7");
        let out = format!(
            "{}\n==> {}etc/a <==\nA",
            b.header(&RecordKind::Batch, ""),
            b.path_prefix()
        );
        let with = records(out.as_bytes(), &b, true).expect("frames");
        assert_eq!(with[1].kind, RecordKind::BatchFile);
        assert_eq!((with[1].args.as_str(), with[1].body), ("/etc/a", &b"A"[..]));
        assert_eq!(records(out.as_bytes(), &b, false).expect("frames").len(), 1);
    }

    #[test]
    fn render_fills_every_placeholder_once_and_only_those() {
        let t = "B=\"@B@\" x=\"$@\" mail=a@b @NOT a placeholder@ @C@@B@";
        assert_eq!(
            render(t, &[("B", "1"), ("C", "@B@")]),
            "B=\"1\" x=\"$@\" mail=a@b @NOT a placeholder@ @B@1"
        );
    }

    #[test]
    #[should_panic(expected = "@C@ has no value")]
    fn render_refuses_a_missing_value() {
        render("@B@ @C@", &[("B", "1")]);
    }

    #[test]
    #[should_panic(expected = "no placeholder @D@")]
    fn render_refuses_a_value_without_placeholder() {
        render("@B@", &[("B", "1"), ("D", "2")]);
    }

    #[test]
    fn every_list_of_kubelet_units_is_this_one() {
        let services: Vec<String> = KUBELET_UNITS
            .iter()
            .map(|u| format!("{u}.service"))
            .collect();
        assert_eq!(crate::facts::systemd_unit::KUBELET_SERVICES, services);
        // systemctl is-active answers in the order gather.sh asks: units()'s.
        let script = crate::facts::raw::script("n");
        let asked: Vec<&str> = crate::facts::node_facts::units().collect();
        let expected = format!(
            "is-active {} $KUNITS {}\n",
            asked[..2].join(" "),
            asked[2 + KUBELET_UNITS.len()..].join(" ")
        );
        assert!(
            script.contains(&expected)
                && script.contains(&format!("KUNITS=\"{}\"", KUBELET_UNITS.join(" ")))
        );
    }
}
