//! Kubelet command-line flags, wherever they are written down: owns [`EnvFile`] (systemd
//! `EnvironmentFile=` files such as Kubespray's `/etc/kubernetes/kubelet.env`, kubeadm's
//! `/var/lib/kubelet/kubeadm-flags.env` and `/etc/default/kubelet`), [`Flag`] extraction from a
//! variable's value, and flags of a running kubelet from `/proc/<pid>/cmdline`. Pure: it never
//! touches the network or the filesystem; parsers take `&str` or `&[u8]`.
//!
//! Why flags matter: a kubelet flag overrides the same setting in the config file (website
//! `kubelet-config-file.md`), so a `--resolv-conf` hidden in `KUBELET_EXTRA_ARGS` or in
//! Kubespray's `kubelet_custom_flags` shadows `resolvConf:` (rule R13).

use serde::Serialize;

use super::env_lexer::is_blank;
use super::kubelet_config::Located;

/// The flags dnsfix reads that kubelet declares as taking a value, so `--name value` (with a
/// space) consumes the next word. Any other `--name` without `=` is recorded without a value:
/// without kubelet's full flag table a following word cannot be told apart from a positional.
pub(crate) const VALUE_FLAGS: [&str; 10] = [
    "resolv-conf",
    "cluster-dns",
    "cluster-domain",
    "config",
    // `--config-dir /etc/kubernetes/kubelet.conf.d`: pflag's string flags take the next word.
    "config-dir",
    "hostname-override",
    // An in-tree cloud provider names the node (cluster::node_names).
    "cloud-provider",
    "container-runtime-endpoint",
    "kubeconfig",
    // kubelite's (MicroK8s), on its own command line.
    "kubelet-args-file",
];

/// The variables of one systemd environment file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub struct EnvFile {
    /// Every assignment in file order, including ones a later assignment overrides.
    pub vars: Vec<EnvVar>,
}

/// One `NAME=value` assignment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub struct EnvVar {
    pub name: String,
    /// The value after systemd's unquoting and unescaping. One deliberate difference: where a
    /// backslash-newline continuation sits between words, a `\n` is kept in its place (systemd
    /// drops it), so [`flags`] can tell which line each word came from. Values therefore differ
    /// from systemd's only in whitespace that `$VAR` word splitting discards anyway.
    pub value: String,
    /// 1-based line where the assignment starts.
    pub line: usize,
    /// Written as `export NAME=…`. systemd rejects such a line ("invalid variable name
    /// \"export NAME\", ignoring"); it is kept here so a report can point at it, but
    /// [`EnvFile::get`] skips it.
    pub exported: bool,
}

/// One command-line flag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub struct Flag {
    /// Name without leading dashes, with `_` normalised to `-` as kubelet does
    /// (`cmd/kubelet/app/server.go`: `SetNormalizeFunc(cliflag.WordSepNormalizeFunc)`).
    pub name: String,
    /// `Some("")` for `--resolv-conf=` (an explicit empty value), `None` for a bare `--flag`.
    pub value: Option<String>,
    /// 1-based line the flag starts on; 0 when read from `/proc/<pid>/cmdline`.
    pub line: usize,
}

impl EnvFile {
    /// Parses an environment file the way systemd's `EnvironmentFile=` does (systemd
    /// `src/basic/env-file.c` `parse_env_file_internal`, v254+):
    /// - lines whose first non-blank character is `#` or `;` are comments; a trailing `#` after
    ///   a value is part of the value; lines without `=` are ignored;
    /// - unquoted values: blanks around the value are trimmed, `\x` gives `x`, and a backslash
    ///   at the end of a line continues the value on the next line;
    /// - `'…'` is literal and may span lines; `"…"` may span lines, where `\"`, `\\`, `` \` ``
    ///   and `\$` unescape, backslash-newline is a continuation and any other `\x` is kept as is;
    /// - quoted and unquoted pieces concatenate (`A="x"y` is `xy`);
    /// - names must match `[A-Za-z_][A-Za-z0-9_]*`, other assignments are dropped.
    ///
    /// CRLF line ends are read as LF (systemd would keep the CR inside quoted values).
    pub fn parse(text: &str) -> EnvFile {
        let vars = super::env_lexer::lex(text)
            .into_iter()
            .map(|a| EnvVar {
                value: a.value(),
                name: a.name,
                line: a.line,
                exported: a.exported,
            })
            .collect();
        EnvFile { vars }
    }

    /// The assignment systemd uses for `name`: the last one, skipping `export`-prefixed lines
    /// that systemd ignores.
    pub fn get(&self, name: &str) -> Option<&EnvVar> {
        self.vars
            .iter()
            .rev()
            .find(|var| var.name == name && !var.exported)
    }
}

impl EnvVar {
    /// The flags in this variable's value, with their line numbers.
    pub fn flags(&self) -> Vec<Flag> {
        flags(&self.value, self.line)
    }
}

/// Splits a variable's value into words the way systemd expands an unbraced `$VAR` in
/// `ExecStart=` (whitespace separated, quotes removed: env-util.c `replace_env_argv` uses
/// `EXTRACT_UNQUOTE|EXTRACT_RELAX`), then reads the words as kubelet's pflag does. Each flag's
/// line is `first_line` plus the newlines before it in `value`.
pub fn flags(value: &str, first_line: usize) -> Vec<Flag> {
    parse_args(split_words(value, first_line))
}

/// Flags of a running kubelet from `/proc/<pid>/cmdline` (NUL-separated argv). Leading words
/// up to and including the one whose basename is `kubelet` are skipped, which covers
/// `/usr/local/bin/kubelet …`, `/bin/sh /usr/local/bin/kubelet …` and `hyperkube kubelet …`;
/// failing that, parsing starts at the first word that begins with `-`. Lines are 0.
pub fn cmdline_flags(cmdline: &[u8]) -> Vec<Flag> {
    let mut argv: Vec<String> = cmdline
        .split(|byte| *byte == 0)
        .map(|arg| String::from_utf8_lossy(arg).into_owned())
        .collect();
    // The kernel terminates every argument with NUL, so the split leaves one empty tail.
    if argv.last().is_some_and(String::is_empty) {
        argv.pop();
    }
    let start = argv.iter().enumerate().find_map(|(index, arg)| {
        if arg.rsplit('/').next() == Some("kubelet") {
            Some(index + 1)
        } else if arg.starts_with('-') {
            Some(index)
        } else {
            None
        }
    });
    let Some(start) = start else {
        return Vec::new();
    };
    parse_args(
        argv.split_off(start)
            .into_iter()
            .map(|arg| (arg, 0))
            .collect(),
    )
}

/// The occurrence that takes effect: the last one, as with any pflag scalar flag. `name` may
/// be given with or without dashes.
pub fn last_flag<'a>(flags: &'a [Flag], name: &str) -> Option<&'a Flag> {
    let name = normalize_name(name.trim_start_matches('-'));
    flags.iter().rev().find(|flag| flag.name == name)
}

/// The value of a list flag such as kubelet's `--cluster-dns`, a pflag `StringSlice`: each
/// occurrence is a comma-separated list and repeated occurrences APPEND (they do not replace).
/// Items are not trimmed (pflag's CSV reader keeps blanks, and kubelet then rejects the IP).
/// The line is that of the last occurrence. `None` when the flag never appears.
pub fn list_flag(flags: &[Flag], name: &str) -> Option<Located<Vec<String>>> {
    let name = normalize_name(name.trim_start_matches('-'));
    let mut result: Option<Located<Vec<String>>> = None;
    for flag in flags.iter().filter(|flag| flag.name == name) {
        let located = result.get_or_insert_with(|| Located::new(Vec::new(), flag.line));
        located.line = flag.line;
        if let Some(value) = flag.value.as_deref().filter(|value| !value.is_empty()) {
            located.value.extend(value.split(',').map(str::to_string));
        }
    }
    result
}

/// kubelet's `WordSepNormalizeFunc`: `--resolv_conf` is `--resolv-conf`.
pub(crate) fn normalize_name(name: &str) -> String {
    name.replace('_', "-")
}

/// Reads words as pflag does: `--name=value`, `--name value` (only for [`VALUE_FLAGS`]),
/// `-n=value` / `-n`, a bare `--` ends flag parsing; other words are positionals and skipped.
pub(crate) fn parse_args(words: Vec<(String, usize)>) -> Vec<Flag> {
    let mut result = Vec::new();
    let mut words = words.into_iter();
    while let Some((word, line)) = words.next() {
        if word == "--" {
            break;
        }
        let body = match word.strip_prefix("--") {
            Some(body) => body,
            None => match word.strip_prefix('-') {
                Some(body) if !body.is_empty() => body,
                _ => continue,
            },
        };
        // `---x` and `--=x` are "bad flag syntax" to pflag: not flags at all.
        if body.starts_with(['-', '=']) {
            continue;
        }
        let (name, mut value) = match body.split_once('=') {
            Some((name, value)) => (normalize_name(name), Some(value.to_string())),
            None => (normalize_name(body), None),
        };
        if value.is_none() && VALUE_FLAGS.contains(&name.as_str()) {
            value = words.next().map(|(next, _)| next);
        }
        result.push(Flag { name, value, line });
    }
    result
}

/// Shell-style word splitting with quote removal, tracking each word's starting line.
/// An unterminated quote runs to the end of the text (systemd's `EXTRACT_RELAX`).
pub(crate) fn split_words(text: &str, first_line: usize) -> Vec<(String, usize)> {
    split(text, first_line, false)
}

/// [`split_words`] with systemd's C escapes (`EXTRACT_CUNESCAPE`), as it reads `ExecStart=`
/// and `Environment=`: `\x20` is a space inside the word (kardianos/service, which k0s
/// installs its unit with, writes every space of an argument so), `\t`, `\n`, `\s`,
/// octal and `\u` escapes are their characters (basic/escape.c `cunescape_one`), inside
/// quotes too. An escape systemd does not know (which makes systemd refuse the line) keeps
/// its character, as plain splitting does; `\x80` and above are taken as characters, not
/// as the raw bytes systemd writes.
pub(crate) fn split_words_c(text: &str, first_line: usize) -> Vec<(String, usize)> {
    split(text, first_line, true)
}

/// The character of the C escape after a backslash (`x20`, `t`, `101`), the escape's rest
/// taken from `chars`; `None` when it is not one (or names NUL, which systemd refuses).
fn c_escape(first: char, chars: &mut std::iter::Peekable<std::str::Chars>) -> Option<char> {
    let digits = |chars: &mut std::iter::Peekable<std::str::Chars>, n: usize, radix: u32| {
        let ahead: String = chars.clone().take(n).collect();
        let code = (ahead.len() == n && ahead.chars().all(|c| c.is_digit(radix)))
            .then(|| u32::from_str_radix(&ahead, radix).ok())
            .flatten()?;
        let c = char::from_u32(code).filter(|&c| c != '\0')?;
        chars.nth(n - 1);
        Some(c)
    };
    match first {
        'a' => Some('\u{7}'),
        'b' => Some('\u{8}'),
        'f' => Some('\u{c}'),
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        'v' => Some('\u{b}'),
        's' => Some(' '),
        'x' => digits(chars, 2, 16),
        'u' => digits(chars, 4, 16),
        'U' => digits(chars, 8, 16),
        '0'..='7' => {
            let rest: String = chars.clone().take(2).collect();
            let all = format!("{first}{rest}");
            if rest.len() != 2 || !rest.chars().all(|c| c.is_digit(8)) {
                return None;
            }
            // One byte: systemd refuses more than \377, and NUL.
            let c = u32::from_str_radix(&all, 8)
                .ok()
                .filter(|&code| code <= 0o377)
                .and_then(char::from_u32)
                .filter(|&c| c != '\0')?;
            chars.nth(1);
            Some(c)
        }
        _ => None,
    }
}

fn split(text: &str, first_line: usize, cunescape: bool) -> Vec<(String, usize)> {
    let mut words = Vec::new();
    let mut line = first_line;
    let mut chars = text.chars().peekable();
    loop {
        while let Some(&c) = chars.peek() {
            if !is_blank(c) {
                break;
            }
            if c == '\n' {
                line += 1;
            }
            chars.next();
        }
        if chars.peek().is_none() {
            return words;
        }
        let start_line = line;
        let mut word = String::new();
        while let Some(&c) = chars.peek() {
            if is_blank(c) {
                break;
            }
            chars.next();
            match c {
                '\'' => {
                    while let Some(c) = chars.next() {
                        if c == '\'' {
                            break;
                        }
                        line += usize::from(c == '\n');
                        // systemd unescapes inside single quotes too.
                        if cunescape
                            && c == '\\'
                            && let Some(escaped) = chars.peek().copied()
                        {
                            chars.next();
                            line += usize::from(escaped == '\n');
                            match c_escape(escaped, &mut chars) {
                                Some(c) => word.push(c),
                                None => word.push(escaped),
                            }
                            continue;
                        }
                        word.push(c);
                    }
                }
                '"' => {
                    while let Some(c) = chars.next() {
                        match c {
                            '"' => break,
                            '\\' => {
                                if let Some(escaped) = chars.next() {
                                    line += usize::from(escaped == '\n');
                                    match cunescape.then(|| c_escape(escaped, &mut chars)) {
                                        Some(Some(c)) => word.push(c),
                                        _ => word.push(escaped),
                                    }
                                }
                            }
                            _ => {
                                line += usize::from(c == '\n');
                                word.push(c);
                            }
                        }
                    }
                }
                '\\' => {
                    if let Some(escaped) = chars.next() {
                        // Backslash-newline joins lines without adding a character.
                        if escaped == '\n' {
                            line += 1;
                        } else if let Some(c) =
                            cunescape.then(|| c_escape(escaped, &mut chars)).flatten()
                        {
                            word.push(c);
                        } else {
                            word.push(escaped);
                        }
                    }
                }
                _ => word.push(c),
            }
        }
        words.push((word, start_line));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flag(name: &str, value: Option<&str>, line: usize) -> Flag {
        Flag {
            name: name.to_string(),
            value: value.map(str::to_string),
            line,
        }
    }

    /// `/etc/kubernetes/kubelet.env` as Kubespray's `kubelet.env.v1beta1.j2` renders it, with a
    /// `--resolv-conf` smuggled in through `kubelet_custom_flags`.
    const KUBESPRAY_ENV: &str = r#"KUBE_LOGTOSTDERR="--logtostderr=true"
KUBE_LOG_LEVEL="--v=2"
KUBELET_ADDRESS="--node-ip=10.0.0.11"
KUBELET_HOSTNAME="--hostname-override=node1"

KUBELET_ARGS="--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf \
--config=/etc/kubernetes/kubelet-config.yaml \
--kubeconfig=/etc/kubernetes/kubelet.conf \
--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock \
--runtime-cgroups=/system.slice/containerd.service \
   --resolv-conf=/etc/resolv.conf  "
KUBELET_NETWORK_PLUGIN="--network-plugin=cni --cni-conf-dir=/etc/cni/net.d --cni-bin-dir=/opt/cni/bin"
KUBELET_CLOUDPROVIDER=""

PATH=/usr/local/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
"#;

    #[test]
    fn kubespray_kubelet_env() {
        let env = EnvFile::parse(KUBESPRAY_ENV);
        let names: Vec<_> = env.vars.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "KUBE_LOGTOSTDERR",
                "KUBE_LOG_LEVEL",
                "KUBELET_ADDRESS",
                "KUBELET_HOSTNAME",
                "KUBELET_ARGS",
                "KUBELET_NETWORK_PLUGIN",
                "KUBELET_CLOUDPROVIDER",
                "PATH"
            ]
        );
        let args = env.get("KUBELET_ARGS").expect("KUBELET_ARGS");
        assert_eq!(args.line, 6);
        let flags = args.flags();
        assert_eq!(
            flags,
            vec![
                flag(
                    "bootstrap-kubeconfig",
                    Some("/etc/kubernetes/bootstrap-kubelet.conf"),
                    6
                ),
                flag("config", Some("/etc/kubernetes/kubelet-config.yaml"), 7),
                flag("kubeconfig", Some("/etc/kubernetes/kubelet.conf"), 8),
                flag(
                    "container-runtime-endpoint",
                    Some("unix:///var/run/containerd/containerd.sock"),
                    9
                ),
                flag(
                    "runtime-cgroups",
                    Some("/system.slice/containerd.service"),
                    10
                ),
                flag("resolv-conf", Some("/etc/resolv.conf"), 11),
            ]
        );
        assert_eq!(last_flag(&flags, "--resolv-conf").map(|f| f.line), Some(11));
        assert_eq!(
            env.get("KUBELET_CLOUDPROVIDER").map(|v| v.value.as_str()),
            Some("")
        );
        assert_eq!(env.get("PATH").map(|v| v.line), Some(15));
        let network = env.get("KUBELET_NETWORK_PLUGIN").expect("plugin").flags();
        assert!(network.iter().all(|f| f.line == 12));
    }

    /// `--cloud-provider aws`, its value as the next word (pflag's string flag), is read as
    /// `--cloud-provider=aws` is: an in-tree provider names the node (cluster::node_names).
    #[test]
    fn cloud_provider_takes_the_next_word() {
        let value = |text: &str| {
            flags(text, 1)
                .into_iter()
                .find(|f| f.name == "cloud-provider")
                .and_then(|f| f.value)
        };
        assert_eq!(value("--cloud-provider aws --v=2").as_deref(), Some("aws"));
        assert_eq!(value("--cloud-provider=aws").as_deref(), Some("aws"));
    }

    #[test]
    fn kubeadm_flags_env() {
        // /var/lib/kubelet/kubeadm-flags.env from kubeadm 1.12-1.18 on a resolved host.
        let text = "KUBELET_KUBEADM_ARGS=\"--cgroup-driver=systemd --network-plugin=cni \
                    --pod-infra-container-image=k8s.gcr.io/pause:3.2 \
                    --resolv-conf=/run/systemd/resolve/resolv.conf\"\n";
        let env = EnvFile::parse(text);
        let flags = env.get("KUBELET_KUBEADM_ARGS").expect("var").flags();
        assert_eq!(flags.len(), 4);
        assert_eq!(
            last_flag(&flags, "resolv-conf"),
            Some(&flag(
                "resolv-conf",
                Some("/run/systemd/resolve/resolv.conf"),
                1
            ))
        );
    }

    #[test]
    fn etc_default_kubelet_empty_and_edited() {
        // As the kubeadm deb ships it: an empty assignment.
        let env = EnvFile::parse("KUBELET_EXTRA_ARGS=\n");
        assert_eq!(
            env.get("KUBELET_EXTRA_ARGS").map(|v| v.value.as_str()),
            Some("")
        );
        assert!(env.vars[0].flags().is_empty());

        // Hand-edited, unquoted, with a space-separated value and a trailing comment, which
        // systemd keeps as part of the value (and kubelet then sees as two stray words).
        let text = "# kubelet overrides\nKUBELET_EXTRA_ARGS=--node-ip=10.0.0.5 --resolv-conf /etc/kubelet-resolv.conf # dns\n";
        let env = EnvFile::parse(text);
        let var = env.get("KUBELET_EXTRA_ARGS").expect("var");
        assert_eq!(var.line, 2);
        assert!(var.value.ends_with("# dns"));
        assert_eq!(
            var.flags(),
            vec![
                flag("node-ip", Some("10.0.0.5"), 2),
                flag("resolv-conf", Some("/etc/kubelet-resolv.conf"), 2)
            ]
        );
    }

    #[test]
    fn last_assignment_wins_but_all_are_kept() {
        let env = EnvFile::parse("A=1\nB=x\nA=2\n");
        assert_eq!(env.vars.len(), 3);
        assert_eq!(
            env.get("A").map(|v| (v.value.as_str(), v.line)),
            Some(("2", 3))
        );
        assert_eq!(env.get("C"), None);
    }

    #[test]
    fn export_prefix_is_recorded_but_ignored_by_get() {
        let env = EnvFile::parse("KUBELET_EXTRA_ARGS=--v=2\nexport KUBELET_EXTRA_ARGS=\"--v=4\"\n");
        assert_eq!(env.vars.len(), 2);
        assert!(env.vars[1].exported);
        assert_eq!(env.vars[1].name, "KUBELET_EXTRA_ARGS");
        assert_eq!(
            env.get("KUBELET_EXTRA_ARGS").map(|v| v.value.as_str()),
            Some("--v=2")
        );
    }

    #[test]
    fn quoting_rules() {
        let text = concat!(
            "SINGLE='a \\\"b\\\" $c'\n",
            "DOUBLE=\"x \\\"y\\\" \\$z \\n\"\n",
            "UNQUOTED=  a\\ b  \\#c   \n",
            "GLUED=\"one\"'two'three\n",
            "SPACED = value\n",
            "MULTI='line1\nline2'\n",
            "UNTERMINATED=\"abc"
        );
        let env = EnvFile::parse(text);
        let get = |name| env.get(name).map(|v| v.value.clone());
        assert_eq!(get("SINGLE").as_deref(), Some("a \\\"b\\\" $c"));
        assert_eq!(get("DOUBLE").as_deref(), Some("x \"y\" $z \\n"));
        assert_eq!(get("UNQUOTED").as_deref(), Some("a b  #c"));
        assert_eq!(get("GLUED").as_deref(), Some("onetwothree"));
        assert_eq!(get("SPACED").as_deref(), Some("value"));
        assert_eq!(get("MULTI").as_deref(), Some("line1\nline2"));
        assert_eq!(env.get("MULTI").map(|v| v.line), Some(6));
        assert_eq!(get("UNTERMINATED").as_deref(), Some("abc"));
    }

    #[test]
    fn comments_and_junk_lines() {
        let text = "# comment\n; also comment\n   # indented\n[Service]\nnot an assignment\n\
                    1BAD=x\nBAD-NAME=y\nGOOD=z\n";
        let env = EnvFile::parse(text);
        assert_eq!(env.vars.len(), 1);
        assert_eq!(env.vars[0].name, "GOOD");
        assert_eq!(env.vars[0].line, 8);
    }

    #[test]
    fn comment_backslash_does_not_continue_since_v254() {
        let env = EnvFile::parse("# note \\\nA=1\n");
        assert_eq!(env.get("A").map(|v| v.value.as_str()), Some("1"));
    }

    #[test]
    fn unquoted_continuation_lines() {
        let text =
            "KUBELET_EXTRA_ARGS=--v=2 \\\n  --resolv-conf=/x \\\n  --cluster-dns=10.0.0.10\n";
        let env = EnvFile::parse(text);
        let var = env.get("KUBELET_EXTRA_ARGS").expect("var");
        let lines: Vec<_> = var.flags().iter().map(|f| f.line).collect();
        assert_eq!(lines, [1, 2, 3]);
    }

    #[test]
    fn continuation_inside_a_word_joins_like_systemd() {
        // systemd eats the backslash-newline, producing one word.
        let env = EnvFile::parse("A=\"--resolv-conf=/run/sys\\\ntemd/resolve/resolv.conf\"\n");
        let var = env.get("A").expect("var");
        assert_eq!(var.value, "--resolv-conf=/run/systemd/resolve/resolv.conf");
        assert_eq!(var.flags().len(), 1);
    }

    #[test]
    fn crlf_and_no_trailing_newline() {
        let env = EnvFile::parse("A=\"--x=1 \\\r\n--y=2\"\r\nB=--z\r\nC=last");
        assert_eq!(
            env.get("A").expect("A").flags(),
            vec![flag("x", Some("1"), 1), flag("y", Some("2"), 2)]
        );
        assert_eq!(
            env.get("B").map(|v| (v.value.as_str(), v.line)),
            Some(("--z", 3))
        );
        assert_eq!(env.get("C").map(|v| v.value.as_str()), Some("last"));
    }

    #[test]
    fn empty_file() {
        assert_eq!(EnvFile::parse(""), EnvFile::default());
        assert_eq!(EnvFile::parse("\n\n# only comments\n"), EnvFile::default());
    }

    #[test]
    fn flag_forms() {
        let value = "--resolv-conf /etc/a --cluster-dns 10.0.0.10,10.0.0.11 --v 2 -v=4 \
                     --resolv_conf='/etc/my resolv.conf' --fail-swap-on --cluster-domain= \
                     positional - ---bad --=x -- --after-terminator=1";
        assert_eq!(
            flags(value, 1),
            vec![
                flag("resolv-conf", Some("/etc/a"), 1),
                flag("cluster-dns", Some("10.0.0.10,10.0.0.11"), 1),
                // `v` is not in the value list, so "2" is a positional.
                flag("v", None, 1),
                flag("v", Some("4"), 1),
                flag("resolv-conf", Some("/etc/my resolv.conf"), 1),
                flag("fail-swap-on", None, 1),
                flag("cluster-domain", Some(""), 1),
            ]
        );
    }

    #[test]
    fn value_flag_at_the_end_has_no_value() {
        assert_eq!(
            flags("--resolv-conf", 3),
            vec![flag("resolv-conf", None, 3)]
        );
    }

    #[test]
    fn flag_lines_count_newlines_in_the_value() {
        let value = "--a=1\n--b=2\n\n--resolv-conf\n/x";
        let result = flags(value, 10);
        assert_eq!(
            result,
            vec![
                flag("a", Some("1"), 10),
                flag("b", Some("2"), 11),
                flag("resolv-conf", Some("/x"), 13)
            ]
        );
    }

    #[test]
    fn last_flag_wins() {
        let result = flags("--resolv-conf=/a --v=2 --resolv-conf=/b", 1);
        assert_eq!(
            last_flag(&result, "resolv-conf").and_then(|f| f.value.as_deref()),
            Some("/b")
        );
        assert_eq!(last_flag(&result, "cluster-dns"), None);
    }

    #[test]
    fn cluster_dns_list_appends_across_occurrences() {
        let result = flags(
            "--cluster-dns=10.0.0.10,fd00::a\n--cluster-dns 169.254.25.10",
            4,
        );
        assert_eq!(
            list_flag(&result, "cluster-dns"),
            Some(Located::new(
                vec![
                    "10.0.0.10".to_string(),
                    "fd00::a".to_string(),
                    "169.254.25.10".to_string()
                ],
                5
            ))
        );
        assert_eq!(
            list_flag(&flags("--cluster-dns=", 1), "cluster-dns"),
            Some(Located::new(vec![], 1))
        );
        assert_eq!(list_flag(&result, "resolv-conf"), None);
    }

    #[test]
    fn cmdline_plain_kubelet() {
        let cmdline = b"/usr/local/bin/kubelet\0--config=/etc/kubernetes/kubelet-config.yaml\0\
                        --kubeconfig\0/etc/kubernetes/kubelet.conf\0--v=2\0";
        assert_eq!(
            cmdline_flags(cmdline),
            vec![
                flag("config", Some("/etc/kubernetes/kubelet-config.yaml"), 0),
                flag("kubeconfig", Some("/etc/kubernetes/kubelet.conf"), 0),
                flag("v", Some("2"), 0),
            ]
        );
    }

    #[test]
    fn cmdline_behind_an_interpreter_and_hyperkube() {
        let cmdline = b"/bin/sh\0/usr/local/bin/kubelet\0--resolv-conf=\0";
        assert_eq!(
            cmdline_flags(cmdline),
            vec![flag("resolv-conf", Some(""), 0)]
        );
        let cmdline = b"/hyperkube\0kubelet\0--cluster-dns=10.3.0.10\0";
        assert_eq!(cmdline_flags(cmdline).len(), 1);
    }

    #[test]
    fn cmdline_without_kubelet_word_starts_at_first_dash() {
        // Arguments keep their spaces: no shell splitting happens on argv.
        let cmdline = b"/opt/bin/kubelet-wrapper\0--resolv-conf\0/etc/my resolv.conf\0";
        assert_eq!(
            cmdline_flags(cmdline),
            vec![flag("resolv-conf", Some("/etc/my resolv.conf"), 0)]
        );
        assert!(cmdline_flags(b"").is_empty());
        assert!(cmdline_flags(b"/usr/bin/containerd\0").is_empty());
        assert!(cmdline_flags(b"\xff\xfe\0\0\0").is_empty());
    }

    #[test]
    fn never_panics_on_random_input() {
        let alphabet: &[u8] = b"AB_=\"'\\ \t\r\n#;$`-x=export ";
        for bytes in
            crate::testing::random_inputs(0x2545_f491_4f6c_dd1d, alphabet, 2_000, 120, Some(5))
        {
            let text = String::from_utf8_lossy(&bytes);
            let lines = text.split('\n').count();
            for var in EnvFile::parse(&text).vars {
                assert!(var.line >= 1 && var.line <= lines);
                for flag in var.flags() {
                    assert!(flag.line >= var.line && flag.line <= lines, "{text:?}");
                }
            }
            let _ = flags(&text, 1);
            let _ = cmdline_flags(&bytes);
        }
    }

    #[test]
    fn huge_value() {
        let mut text = String::from("KUBELET_ARGS=\"");
        for i in 0..20_000 {
            text.push_str(&format!("--flag-{i}=x \\\n"));
        }
        text.push_str("--resolv-conf=/etc/resolv.conf\"\n");
        let env = EnvFile::parse(&text);
        let flags = env.get("KUBELET_ARGS").expect("var").flags();
        assert_eq!(flags.len(), 20_001);
        assert_eq!(
            last_flag(&flags, "resolv-conf").map(|f| f.line),
            Some(20_001)
        );
    }

    /// systemd reads C escapes in `ExecStart=` and `Environment=`: k0s's unit (written by
    /// kardianos/service's `cmdEscape`) has `\x20` for each space of an argument, so
    /// `--kubelet-extra-args` with two kubelet flags is one word. Plain splitting (a `$VAR`'s
    /// value) keeps the escaped character alone, as systemd does there.
    #[test]
    fn c_escapes_are_read_as_systemd_reads_exec_start() {
        let words = |text: &str| -> Vec<String> {
            split_words_c(text, 1).into_iter().map(|(w, _)| w).collect()
        };
        assert_eq!(
            words(
                r"/usr/local/bin/k0s worker --kubelet-extra-args=--resolv-conf=/x\x20--max-pods=200 --token-file=/t"
            ),
            [
                "/usr/local/bin/k0s",
                "worker",
                "--kubelet-extra-args=--resolv-conf=/x --max-pods=200",
                "--token-file=/t"
            ]
        );
        assert_eq!(
            words(r#"a\tb "c\x41\101\u0042" \s 'd\x20e'"#),
            ["a\tb", "cAAB", " ", "d e"]
        );
        // Not an escape systemd takes (systemd refuses the line): the character stays.
        assert_eq!(
            words(r"\q \x0 \x00 \8 \400"),
            ["q", "x0", "x00", "8", "400"]
        );
        // Quotes, escaped quotes and backslashes as before.
        assert_eq!(words(r#""a\"b" c\\d 'e"f'"#), ["a\"b", "c\\d", "e\"f"]);
        let plain: Vec<String> = split_words(r"a\x20b", 1)
            .into_iter()
            .map(|(w, _)| w)
            .collect();
        assert_eq!(plain, ["ax20b"]);
    }
}
