//! systemd-resolved's configuration as its parser reads it: the `[Resolve]` settings of
//! /etc/systemd/resolved.conf, then of its drop-ins in the order it reads them
//! ([`RESOLVED_DROPIN_DIRS`]: merged in name order, a name in an earlier directory hiding the
//! same name in later ones, a link to /dev/null masking it), each with the file and line it
//! is on. The one reader behind the rules, the plan's notes and its prediction.
//!
//! As systemd's conf-parser.c `config_parse` and `parse_line` read a file: a UTF-8 byte
//! order mark at its start dropped; a `#` or `;` line a comment, skipped first; a line
//! ending in an unescaped `\` joined with the next, the `\` read as a space; then trimmed,
//! `[Section]` starting a section, else `key=value` with both sides trimmed; a key outside
//! `[Resolve]` is not resolved's (an assignment outside any section is ignored). A `[` line
//! that does not end in `]`, or whose name holds a control character, a quote or a
//! backslash, is an error: the parser stops there, and systemd-resolved reads no later line
//! nor file (`config_parse_many_files` returns it, `manager_parse_config_file` too, before
//! it sets up its compiled-in fallback servers, and resolved only logs "Failed to parse
//! configuration file"), so what follows it is not read ([`ResolvedConf::stopped_at`]).
//!
//! [`RESOLVED_DROPIN_DIRS`]: super::raw::RESOLVED_DROPIN_DIRS

use super::raw::{RawFacts, RawFile};

/// systemd-resolved's main configuration file.
pub const MAIN: &str = "/etc/systemd/resolved.conf";

/// One `key=value` line of a `[Resolve]` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    /// The file it is in.
    pub path: String,
    /// Its line number, from 1.
    pub line: usize,
    /// The key, as written (systemd's keys are case-sensitive).
    pub key: String,
    /// The value, trimmed: empty for `DNS=`, which drops the servers set before it.
    pub value: String,
    /// The line as written, trimmed.
    pub text: String,
}

impl Setting {
    /// `path:line`.
    pub fn location(&self) -> String {
        format!("{}:{}", self.path, self.line)
    }

    /// Whether it is in a drop-in named after `name` (every drop-in for `""`), which
    /// systemd-resolved reads after that one.
    pub fn in_dropin_after(&self, name: &str) -> bool {
        self.path != MAIN && self.path.rsplit('/').next().is_some_and(|n| n > name)
    }
}

/// What systemd-resolved reads of its configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResolvedConf {
    /// The `[Resolve]` settings of resolved.conf and then of its drop-ins, in the order
    /// systemd-resolved reads them.
    pub settings: Vec<Setting>,
    /// The section header where its parser stopped (no closing `]`, or a name that is not
    /// safe: `is_safe`), as
    /// `path:line` and the line: nothing after it is read.
    pub stopped_at: Option<(String, String)>,
}

impl ResolvedConf {
    /// The configuration the files of `raw` give.
    pub fn read(raw: &RawFacts) -> ResolvedConf {
        let main = raw
            .get(MAIN)
            .and_then(RawFile::text)
            .map(|t| (MAIN.to_owned(), t.into_owned()));
        let dropins = super::sysctl::conf_d_files(raw, &super::raw::RESOLVED_DROPIN_DIRS);
        let mut conf = ResolvedConf::default();
        for (path, text) in main.into_iter().chain(dropins) {
            let mut in_resolve = false;
            for (line, joined) in logical_lines(&text) {
                let trimmed = joined.trim();
                if trimmed.starts_with('[') {
                    if !trimmed.ends_with(']') || !is_safe(&trimmed[1..trimmed.len() - 1]) {
                        let text = crate::text::escape(trimmed).into_owned();
                        conf.stopped_at = Some((format!("{path}:{line}"), text));
                        return conf;
                    }
                    in_resolve = trimmed == "[Resolve]";
                    continue;
                }
                if !in_resolve {
                    continue;
                }
                let Some((key, value)) = trimmed.split_once('=') else {
                    continue;
                };
                conf.settings.push(Setting {
                    path: path.clone(),
                    line,
                    key: key.trim().to_owned(),
                    value: value.trim().to_owned(),
                    text: trimmed.to_owned(),
                });
            }
        }
        conf
    }

    /// Its `key` settings, in the order they are read.
    pub fn of<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a Setting> {
        self.settings.iter().filter(move |s| s.key == key)
    }

    /// The empty `DNS=` lines of the drop-ins read after the one named `name` (of every
    /// drop-in for `""`): each drops the servers set before it (resolved.conf(5)), those of
    /// `name` too.
    pub fn dns_resets_after(&self, name: &str) -> Vec<&Setting> {
        self.of("DNS")
            .filter(|s| s.value.is_empty() && s.in_dropin_after(name))
            .collect()
    }
}

/// A section name systemd's `parse_line` takes (`string_is_safe`): no control character,
/// quote, backslash or DEL; it stops at one that is not ("Bad characters in section
/// header").
fn is_safe(name: &str) -> bool {
    !name
        .chars()
        .any(|c| c.is_ascii_control() || matches!(c, '"' | '\'' | '\\'))
}

/// The lines of `text` as systemd's `config_parse` hands them to `parse_line`, each with the
/// number of its first physical line: a byte order mark dropped, a line ending in an
/// unescaped `\` joined with the next one (the `\` read as a space), a comment line among
/// joined ones skipped.
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = Vec::new();
    let mut continued: Option<(usize, String)> = None;
    for (n, line) in text.lines().enumerate() {
        // A comment line is skipped before a `\` is looked for: one that ends in `\`
        // continues nothing, and one among joined lines leaves the joining open.
        if line.trim_start().starts_with(['#', ';']) {
            continue;
        }
        let mut escaped = false;
        for c in line.chars() {
            escaped = !escaped && c == '\\';
        }
        let (first, mut joined) = continued.take().unwrap_or((n + 1, String::new()));
        if escaped {
            joined.push_str(&line[..line.len() - 1]);
            joined.push(' ');
            continued = Some((first, joined));
        } else {
            joined.push_str(line);
            lines.push((first, joined));
        }
    }
    lines.extend(continued);
    lines
}

/// The servers of systemd-resolved's compiled-in fallback list (meson's `dns-servers`, which
/// distributions set apart), as the resolved.conf it ships shows them: the commented
/// `#FallbackDNS=` line of its `[Resolve]` section (src/resolve/resolved.conf.in
/// `#FallbackDNS={{DNS_SERVERS}}`), the last one where there are more; none where that file
/// has no such line (an administrator's file, or one not read), where the list is not
/// known. A `FallbackDNS=` setting, an empty one too, replaces the list
/// (resolved-conf.c `config_parse_dns_servers`: `need_builtin_fallbacks = false`).
pub fn shipped_fallback(raw: &RawFacts) -> Option<String> {
    let text = raw.get(MAIN).and_then(RawFile::text)?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut in_resolve = false;
    let mut found = None;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_resolve = line == "[Resolve]";
        } else if in_resolve && let Some(value) = line.strip_prefix("#FallbackDNS=") {
            found = Some(value.trim().to_owned());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::raw_from;

    #[test]
    fn settings_come_in_the_order_resolved_reads_them_with_their_lines() {
        let raw = raw_from(&[
            (
                "/etc/systemd/resolved.conf.d/b.conf",
                "[Resolve]\nDNS=192.0.2.2\n",
            ),
            (
                MAIN,
                "#  comment\n[Resolve]\n#DNS=\n; DNS=x\nDNS = 192.0.2.1 \n[Other]\nDNS=192.0.2.9\n",
            ),
            (
                "/usr/lib/systemd/resolved.conf.d/a.conf",
                "DNS=192.0.2.8\n[Resolve]\nFallbackDNS=192.0.2.3\n",
            ),
        ]);
        let got: Vec<(String, String, String)> = ResolvedConf::read(&raw)
            .settings
            .into_iter()
            .map(|s| (s.location(), s.key, s.value))
            .collect();
        let want = [
            ("/etc/systemd/resolved.conf:5", "DNS", "192.0.2.1"),
            (
                "/usr/lib/systemd/resolved.conf.d/a.conf:3",
                "FallbackDNS",
                "192.0.2.3",
            ),
            ("/etc/systemd/resolved.conf.d/b.conf:2", "DNS", "192.0.2.2"),
        ];
        let want: Vec<(String, String, String)> = want
            .iter()
            .map(|(l, k, v)| (l.to_string(), k.to_string(), v.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    /// systemd's parser drops a byte order mark and joins a line ending in `\\` with the
    /// next (a comment line among them skipped); before, the mark hid the file's `[Resolve]`
    /// and the second line's server was lost.
    #[test]
    fn a_byte_order_mark_and_continued_lines_are_read_as_systemd_reads_them() {
        let raw = raw_from(&[
            (
                MAIN,
                "\u{feff}[Resolve]\nDNS=192.0.2.1 \\\n# between\n  192.0.2.2\nDomains=a\\\\\n",
            ),
            (
                "/etc/systemd/resolved.conf.d/a.conf",
                "[Resolve]\nDNS=192.0.2.3\\",
            ),
        ]);
        let got: Vec<(String, String)> = ResolvedConf::read(&raw)
            .settings
            .into_iter()
            .map(|s| (s.location(), s.value))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "/etc/systemd/resolved.conf:2".to_owned(),
                    "192.0.2.1    192.0.2.2".to_owned()
                ),
                (
                    "/etc/systemd/resolved.conf:5".to_owned(),
                    "a\\\\".to_owned()
                ),
                (
                    "/etc/systemd/resolved.conf.d/a.conf:2".to_owned(),
                    "192.0.2.3".to_owned()
                ),
            ]
        );
    }

    /// A comment line is skipped before a trailing `\\` is looked for: it continues
    /// nothing. Before, it swallowed the next line. A section name with a quote stops the
    /// parser, as one without its `]` does.
    #[test]
    fn a_comment_ending_in_a_backslash_continues_nothing() {
        let raw = raw_from(&[(
            MAIN,
            "[Resolve]\n# x \\\nDNS=192.0.2.9\n[Re\"solve]\nDNS=192.0.2.8\n",
        )]);
        let conf = ResolvedConf::read(&raw);
        let values: Vec<&str> = conf.settings.iter().map(|s| s.value.as_str()).collect();
        assert_eq!(values, ["192.0.2.9"]);
        assert_eq!(
            conf.stopped_at.map(|(at, _)| at),
            Some("/etc/systemd/resolved.conf:4".to_owned())
        );
    }

    /// A section header without its closing `]` stops systemd-resolved's parser: nothing
    /// after it is read, in that file or a later one. Before, the reader went on.
    #[test]
    fn a_broken_section_header_stops_the_reading() {
        let raw = raw_from(&[
            (MAIN, "[Resolve]\nDNS=192.0.2.1\n"),
            (
                "/etc/systemd/resolved.conf.d/10-site.conf",
                "[Resolve]\nDNS=192.0.2.2\n[Resolve # site\nDNS=192.0.2.3\n",
            ),
            (
                "/etc/systemd/resolved.conf.d/20-late.conf",
                "[Resolve]\nDNS=\n",
            ),
        ]);
        let conf = ResolvedConf::read(&raw);
        let values: Vec<&str> = conf.settings.iter().map(|s| s.value.as_str()).collect();
        assert_eq!(values, ["192.0.2.1", "192.0.2.2"]);
        assert_eq!(
            conf.stopped_at,
            Some((
                "/etc/systemd/resolved.conf.d/10-site.conf:3".to_owned(),
                "[Resolve # site".to_owned()
            ))
        );
        assert!(conf.dns_resets_after("").is_empty());
    }

    #[test]
    fn only_an_empty_dns_line_of_a_later_drop_in_resets() {
        let raw = raw_from(&[
            (MAIN, "[Resolve]\nDNS=\n"),
            ("/etc/systemd/resolved.conf.d/a.conf", "[Resolve]\nDNS=\n"),
            (
                "/etc/systemd/resolved.conf.d/zzz.conf",
                "[Network]\nDNS=\n[Resolve]\nDNSSEC=\nDNS=\n",
            ),
        ]);
        let at = |name| -> Vec<String> {
            ResolvedConf::read(&raw)
                .dns_resets_after(name)
                .into_iter()
                .map(Setting::location)
                .collect()
        };
        assert_eq!(at("m.conf"), ["/etc/systemd/resolved.conf.d/zzz.conf:5"]);
        assert_eq!(
            at(""),
            [
                "/etc/systemd/resolved.conf.d/a.conf:2",
                "/etc/systemd/resolved.conf.d/zzz.conf:5"
            ]
        );
    }
}
