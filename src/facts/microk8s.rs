//! MicroK8s: one process, `kubelite`, runs the kubelet (and, on a control-plane node, the
//! rest of Kubernetes) inside itself, started by the snap's `daemon-kubelite` service
//! (`run-kubelite-with-args`). The kubelet's flags are not on any command line: kubelite
//! reads them from the file its `--kubelet-args-file` names, `$SNAP_DATA/args/kubelet`
//! (`/var/snap/microk8s/<revision>/args/kubelet`; `current` links to the revision).
//!
//! How kubelite reads that file (canonical/microk8s, build-scripts/components/kubernetes/
//! patches/.../0000-Kubelite-integration.patch, `ReadArgsFromFile`): every line trimmed;
//! empty lines and lines starting with `#` skipped (a `#` later on a line is not a comment);
//! every `"` and `'` removed; the rest split at single spaces; `$VAR`/`${VAR}` expanded from
//! kubelite's environment (the snap's `SNAP`, `SNAP_DATA`, `SNAP_COMMON`, ...). The kubelet
//! then parses the words as its command line: the last of a scalar flag wins.
//!
//! What the wrapper does at every start (microk8s-resources/wrappers/run-kubelite-with-args):
//! when no line of the file mentions `--resolv-conf` (a commented one counts), it adds
//! `--resolv-conf=` the first of /etc/resolv.conf and systemd-resolved's
//! /run/systemd/resolve/resolv.conf whose nameservers are all non-loopback, if one is
//! (MicroK8s 1.26 and later, scripts/find-resolv-conf.py); it loads br_netfilter and sets
//! `net.bridge.bridge-nf-call-iptables` to 1; and, when the CNI manifest
//! (`$SNAP_DATA/args/cni-network/cni.yaml`) is there, sets IPv4 and IPv6 forwarding to 1.

use super::kubelet_flags::{Flag, VALUE_FLAGS, parse_args};
use super::raw::{FileState, RawFacts};

/// snapd's link to the snap's current revision of its data (`/var/snap/microk8s/<rev>`).
pub const CURRENT: &str = "/var/snap/microk8s/current";
/// The systemd unit snapd makes for the `daemon-kubelite` app.
pub const UNIT: &str = "snap.microk8s.daemon-kubelite";

/// kubelite's view of one line of an arguments file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgsLine {
    /// 1-based.
    pub number: usize,
    /// The words kubelite passes on, before `$VAR` expansion (empty for a blank line or a
    /// comment).
    pub words: Vec<String>,
    /// The line starts with `#` (after leading blanks).
    pub comment: bool,
}

/// Every line of `text` as kubelite reads it. Lines end at `\n`; the `\r` of a CRLF file
/// is trimmed with the other blanks.
pub fn lines(text: &str) -> Vec<ArgsLine> {
    text.split('\n')
        .enumerate()
        .map(|(i, line)| {
            // Go's strings.TrimSpace: Unicode white space at both ends.
            let line = line.trim();
            let comment = line.starts_with('#');
            let words = if line.is_empty() || comment {
                Vec::new()
            } else {
                line.replace(['"', '\''], "")
                    .split(' ')
                    .map(str::to_owned)
                    .collect()
            };
            ArgsLine {
                number: i + 1,
                words,
                comment,
            }
        })
        .collect()
}

/// The values kubelite's environment gives the snap's variables, worked out from where the
/// arguments file is (`<SNAP_DATA>/args/kubelet`, SNAP_DATA `/var/snap/microk8s/<rev>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapVars {
    snap: String,
    snap_data: String,
    snap_common: String,
    revision: String,
}

impl SnapVars {
    pub fn for_args_file(path: &str) -> Option<SnapVars> {
        let snap_data = path.strip_suffix("/args/kubelet")?;
        let (base, revision) = snap_data.rsplit_once('/')?;
        (base == "/var/snap/microk8s").then(|| SnapVars {
            snap: format!("/snap/microk8s/{revision}"),
            snap_data: snap_data.to_owned(),
            snap_common: format!("{base}/common"),
            revision: revision.to_owned(),
        })
    }

    fn get(&self, name: &str) -> Option<&str> {
        Some(match name {
            "SNAP" => &self.snap,
            "SNAP_DATA" => &self.snap_data,
            "SNAP_COMMON" => &self.snap_common,
            "SNAP_REVISION" => &self.revision,
            "SNAP_NAME" | "SNAP_INSTANCE_NAME" => "microk8s",
            _ => return None,
        })
    }
}

/// Go's os.ExpandEnv for the variables dnsfix knows the value of; any other `$NAME` or
/// `${NAME}` is left as written (its value is kubelite's environment, which dnsfix does
/// not read), so a path that uses one is never mistaken for another file.
fn expand(word: &str, vars: Option<&SnapVars>) -> String {
    let Some(vars) = vars else {
        return word.to_owned();
    };
    let mut out = String::new();
    let mut rest = word;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, len) = match after.strip_prefix('{') {
            Some(inner) => match inner.find('}') {
                Some(end) => (&inner[..end], end + 2),
                None => ("", 0),
            },
            None => {
                let end = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..end], end)
            }
        };
        match vars.get(name) {
            Some(value) if len > 0 => {
                out.push_str(value);
                rest = &after[len..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Every word kubelite passes on (a double space makes an empty one), expanded, with its
/// line.
fn words(text: &str, path: &str) -> Vec<(String, usize)> {
    let vars = SnapVars::for_args_file(path);
    lines(text)
        .into_iter()
        .flat_map(|line| {
            let number = line.number;
            let vars = vars.as_ref();
            line.words
                .into_iter()
                .map(move |w| (expand(&w, vars), number))
        })
        .collect()
}

/// The kubelet flags of an arguments file at `path`, in order, each with its line.
pub fn flags(text: &str, path: &str) -> Vec<Flag> {
    parse_args(words(text, path))
}

/// The first word dnsfix cannot place as the kubelet would, with its line and why:
/// - an empty word (a double space): a value nobody meant, or a word the kubelet refuses;
/// - a word after `--`, or one that is neither a flag nor a known flag's value: the
///   kubelet refuses to start with it ("unknown command");
/// - a `--name` without `=` before another word, where `name` is not one dnsfix knows to
///   take a value: whether the kubelet takes that word as its value depends on its flag
///   table (`--hostname-override` does, even when the word is `--resolv-conf=/x`).
///
/// MicroK8s writes every flag as `--name=value`; these come from hand edits.
pub fn unplaced_word(text: &str) -> Option<(usize, String)> {
    let mut words = words(text, "").into_iter().peekable();
    while let Some((word, line)) = words.next() {
        if word.is_empty() {
            return Some((line, "an empty word (a double space)".into()));
        }
        if word == "--" {
            return words
                .next()
                .map(|(w, line)| (line, format!("{w:?} after `--`, which the kubelet refuses")));
        }
        let Some(body) = word.strip_prefix("--").or_else(|| word.strip_prefix('-')) else {
            return Some((
                line,
                format!("{word:?} is no flag, which the kubelet refuses"),
            ));
        };
        if body.contains('=') {
            continue;
        }
        if VALUE_FLAGS.contains(&super::kubelet_flags::normalize_name(body).as_str()) {
            words.next();
        } else if words.peek().is_some() {
            return Some((
                line,
                format!("{word} without `=` before another word (write {word}=VALUE)"),
            ));
        }
    }
    None
}

/// The line whose mention of `--resolv-conf` keeps the wrapper from choosing a file at
/// start: its test is `grep -- "--resolv-conf" | tr "=" " " | gawk '{print $2}'` over the
/// whole file, comments included, and it chooses only when that prints nothing.
pub fn resolv_conf_mentioned(text: &str) -> Option<usize> {
    text.split('\n').enumerate().find_map(|(i, line)| {
        let second = line
            .replace('=', " ")
            .split([' ', '\t'])
            .filter(|w| !w.is_empty())
            .nth(1)
            .map(str::to_owned);
        (line.contains("--resolv-conf") && second.is_some()).then_some(i + 1)
    })
}

/// The running kubelite (root, this mount namespace): its pid and the `--kubelet-args-file`
/// of its command line.
pub(super) fn kubelite(raw: &RawFacts) -> Option<(u32, Option<String>)> {
    let pid = *raw.pids.get("kubelite")?;
    let cmdline = &raw
        .get(&format!("/proc/{pid}/cmdline"))
        .filter(|f| f.state == FileState::Present && !f.content.is_empty())?
        .content;
    let flags = super::kubelet_flags::cmdline_flags(cmdline);
    let file =
        super::kubelet_flags::last_flag(&flags, "kubelet-args-file").and_then(|f| f.value.clone());
    Some((pid, file))
}

/// The kubelet's arguments file: the running kubelite's, else the current revision's by
/// its real path (`current` resolved: a file is never written through a symlink).
pub(super) fn args_file(raw: &RawFacts) -> Option<String> {
    if let Some((_, Some(file))) = kubelite(raw) {
        return Some(file);
    }
    current_revision(raw)
        .map(|dir| format!("{dir}/args/kubelet"))
        .filter(|file| raw.get(file).is_some_and(|f| f.state != FileState::Missing))
}

/// Where `current` leads: the revision's data directory.
pub fn current_revision(raw: &RawFacts) -> Option<String> {
    let current = raw.get(CURRENT)?;
    match &current.canonical {
        Some(target) => Some(target.clone()),
        None => (current.state == FileState::Directory).then(|| CURRENT.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubelite_reads_trimmed_lines_without_quotes_or_comments() {
        let text = "# set by hand\n  --resolv-conf=\"/run/systemd/resolve/resolv.conf\"\r\n\n\
                    --cluster-dns 10.152.183.10\n--node-labels='a=b'  --x=1\n#--resolv-conf=/x";
        let path = "/var/snap/microk8s/7964/args/kubelet";
        let got: Vec<(String, Option<String>, usize)> = flags(text, path)
            .into_iter()
            .map(|f| (f.name, f.value, f.line))
            .collect();
        let want = [
            ("resolv-conf", Some("/run/systemd/resolve/resolv.conf"), 2),
            ("cluster-dns", Some("10.152.183.10"), 4),
            ("node-labels", Some("a=b"), 5),
            ("x", Some("1"), 5),
        ];
        let want: Vec<(String, Option<String>, usize)> = want
            .iter()
            .map(|(n, v, l)| (n.to_string(), v.map(str::to_owned), *l))
            .collect();
        assert_eq!(got, want);
        // The wrapper's test: a second word on a line that mentions the flag.
        assert_eq!(resolv_conf_mentioned(text), Some(2));
        assert_eq!(
            resolv_conf_mentioned("--x=1\n# --resolv-conf=/x\n"),
            Some(2)
        );
        assert_eq!(
            resolv_conf_mentioned("#--resolv-conf\n--resolv-conf=\n"),
            None
        );
        let unplaced = |text: &str| unplaced_word(text).map(|(line, _)| line);
        assert_eq!(unplaced(text), Some(5));
        assert_eq!(unplaced("--resolv-conf /a\n--x=1 y\n"), Some(2));
        assert_eq!(unplaced("--node-ip\n--resolv-conf=/a\n"), Some(1));
        // A flag dnsfix knows takes a value takes the next word, as pflag does.
        assert_eq!(
            unplaced("--hostname-override\nnode-7\n--resolv-conf=/a\n"),
            None
        );
        assert_eq!(unplaced("--x=1\n--\n--y=2\n"), Some(3));
        assert_eq!(unplaced("--resolv-conf /a\n--x=1\n--fail-swap-on\n"), None);
    }

    #[test]
    fn the_snap_variables_expand_from_where_the_file_is() {
        let path = "/var/snap/microk8s/7964/args/kubelet";
        let text = "--root-dir=${SNAP_COMMON}/var/lib/kubelet\n--cert-dir=$SNAP_DATA/certs\n\
                    --resolv-conf=$HOME/r\n--a=${SNAP}x$\n";
        let values: Vec<String> = flags(text, path)
            .into_iter()
            .filter_map(|f| f.value)
            .collect();
        assert_eq!(
            values,
            [
                "/var/snap/microk8s/common/var/lib/kubelet",
                "/var/snap/microk8s/7964/certs",
                "$HOME/r",
                "/snap/microk8s/7964x$",
            ]
        );
        // Elsewhere the variables are not known: nothing is expanded.
        let elsewhere = flags("--cert-dir=$SNAP_DATA/certs", "/etc/kubelet.args");
        assert_eq!(elsewhere[0].value.as_deref(), Some("$SNAP_DATA/certs"));
    }
}
