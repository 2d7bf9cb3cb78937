//! systemd-resolved's configuration as its parser reads it: the `[Resolve]` settings of its
//! main file ([`MainFile`]), then of its drop-ins in the order it reads them
//! ([`RESOLVED_DROPIN_DIRS`]: merged in name order, a name in an earlier directory hiding the
//! same name in later ones, a link to /dev/null masking it), each with the file and line it
//! is on. The one reader behind the rules, the plan's notes and its prediction.
//!
//! The main file: systemd before 256 reads /etc/systemd/resolved.conf alone
//! (src/resolve/resolved-conf.c `manager_parse_config_file`: `config_parse_many_nulstr(
//! PKGSYSCONFDIR "/resolved.conf", ...)` v239 to v253, `config_parse_config_file(
//! "resolved.conf", ...)`, which joins `PKGSYSCONFDIR` too, in v254 and v255, SUSE's SLE 15 SP6
//! branch openSUSE/systemd SLE15-SP6 @c89ea566 among them); from 256 (systemd 6378f257,
//! "various: use new config loader instead of config_parse_config_file()") the first of
//! [`MAIN_PATHS`] that opens (src/shared/conf-parser.c
//! `config_parse_standard_file_with_dropins_full`: `CONF_PATHS_STRV("")`;
//! `config_parse_many_files` reads the first found and no other). openSUSE and Fedora ship it
//! in /usr/lib only (meson `-Dconfigfiledir=/usr/lib`: openSUSE's systemd.spec,
//! bmwiedemann/openSUSE packages/s/systemd @069ac982, its files.resolved
//! `%{_systemd_util_dir}/resolved.conf`), so there the file read depends on the version, which
//! the name of systemd's private library tells ([`systemd_versions`]).
//!
//! As systemd's conf-parser.c `config_parse` and `parse_line` read a file: a UTF-8 byte
//! order mark at its start dropped; a `#` or `;` line a comment, skipped first; a line
//! ending in an unescaped `\` joined with the next, the `\` read as a space; then trimmed,
//! `[Section]` starting a section, else `key=value` with both sides trimmed; a key outside
//! `[Resolve]` is not resolved's (an assignment outside any section is ignored). A line that
//! is not valid UTF-8 (`utf8_is_valid`, which also refuses the noncharacters U+FDD0 to U+FDEF
//! and U+xFFFE, U+xFFFF; comments are skipped before it is looked at), in any section, and a
//! `[` line that does not end in `]`, or whose name holds a control character, a quote or a
//! backslash, are errors: `parse_line` returns `log_syntax_invalid_utf8`'s -EINVAL ("String is
//! not UTF-8 clean, ignoring assignment", though nothing after it is read) or EBADMSG, the same
//! from v249 to v258; the parser stops there, and systemd-resolved reads no later line
//! nor file (`config_parse_many_files` returns it, `manager_parse_config_file` too, before
//! it sets up its compiled-in fallback servers, and resolved only logs "Failed to parse
//! configuration file"), so what follows it is not read ([`ResolvedConf::stopped_at`]).
//! The UTF-8 check came in v239 (systemd 78d17fa0, "conf-parser: reject utf8-invalid
//! lines", read in systemd-stable's v238 and v239 tags): before, such a line is read as any
//! other ([`UTF8_STOPS_SINCE`]), and where the version is not known, where it may stop is
//! kept apart ([`ResolvedConf::maybe_stopped_at`]).
//!
//! [`RESOLVED_DROPIN_DIRS`]: super::raw::RESOLVED_DROPIN_DIRS

use super::raw::{FileState, RawFacts, RawFile};

/// Where systemd-resolved's main configuration file is looked for from systemd 256 on, in
/// its order: the first there is the one read (`CONF_PATHS("systemd/resolved.conf")`,
/// src/basic/constants.h @v256).
pub const MAIN_PATHS: [&str; 4] = [
    "/etc/systemd/resolved.conf",
    "/run/systemd/resolved.conf",
    "/usr/local/lib/systemd/resolved.conf",
    "/usr/lib/systemd/resolved.conf",
];

/// The main file every systemd-resolved reads where it is there, the only one before 256.
pub const ETC_MAIN: &str = MAIN_PATHS[0];

/// Where a distribution that builds with `-Dconfigfiledir=/usr/lib` ships the main file
/// (openSUSE, Fedora; meson.build `pkgconfigfiledir`, systemd 6495361c, v255, and SUSE's
/// backport c45cecf2 to its v254).
const VENDOR_MAIN: &str = MAIN_PATHS[3];

/// The first systemd that reads a main file outside /etc.
pub const MAIN_OUTSIDE_ETC_SINCE: u32 = 256;

/// The directories systemd's private library `libsystemd-shared-TAG.so` is installed in
/// (meson.build `libshared_name = 'systemd-shared-@0@'`, the tag the project version unless
/// `-Dshared-lib-tag` says otherwise: openSUSE's `%{base_version}-%{release}`):
/// `rootlibexecdir` up to 251 (/usr/lib/systemd, /lib/systemd on a split /usr), from 252
/// `rootpkglibdir` and from 255 `pkglibdir`, `libdir/systemd` (/usr/lib64/systemd on
/// Fedora, RHEL and SUSE; Debian's multiarch /usr/lib/TRIPLET/systemd: Debian 12's
/// /usr/lib/x86_64-linux-gnu/systemd/libsystemd-shared-252.so).
pub const SHARED_LIB_DIRS: [&str; 3] = ["/usr/lib/systemd", "/usr/lib64/systemd", "/lib/systemd"];

/// The main file systemd-resolved reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum MainFile {
    /// This one.
    Read(String),
    /// None: none of [`MAIN_PATHS`] is there, or only one outside /etc, which systemd before
    /// 256 does not look at.
    #[default]
    None,
    /// Whether it reads this one, there outside /etc, is not known: systemd reads it from 256
    /// on, and its version is not known, or its libraries name versions on both sides (with
    /// why).
    Unknown(String, String),
}

impl MainFile {
    /// The main file of the node `raw` describes, as its systemd picks it.
    pub fn of(raw: &RawFacts) -> MainFile {
        // A file that does not open for want of being there (a link to nothing too) is
        // passed over (`chase_and_fopen_unlocked`: -ENOENT); any other is the one.
        let there = |path: &&&str| raw.get(path).is_some_and(|f| f.state != FileState::Missing);
        let Some(first) = MAIN_PATHS.iter().find(there) else {
            return MainFile::None;
        };
        if *first == ETC_MAIN {
            return MainFile::Read(ETC_MAIN.to_owned());
        }
        let versions = systemd_versions(raw);
        let since = |v: &u32| *v >= MAIN_OUTSIDE_ETC_SINCE;
        match (versions.first(), versions.last()) {
            (Some(low), _) if since(low) => MainFile::Read((*first).to_owned()),
            (_, Some(high)) if !since(high) => MainFile::None,
            (Some(low), Some(high)) => MainFile::Unknown(
                (*first).to_owned(),
                format!(
                    "systemd reads {first} from {MAIN_OUTSIDE_ETC_SINCE} on, and libsystemd-shared of both {low} and {high} are there: which one runs is not known"
                ),
            ),
            _ => MainFile::Unknown(
                (*first).to_owned(),
                format!(
                    "systemd reads {first} from {MAIN_OUTSIDE_ETC_SINCE} on, and its version is not known (no libsystemd-shared-*.so found)"
                ),
            ),
        }
    }

    /// The file read, where it is known.
    pub fn path(&self) -> Option<&str> {
        match self {
            MainFile::Read(path) => Some(path),
            _ => None,
        }
    }
}

/// Whether `path` is one of the places of systemd-resolved's main file (not a drop-in).
pub fn is_main_path(path: &str) -> bool {
    MAIN_PATHS.contains(&path)
}

/// systemd's major version, as the name of its private library gives it
/// (`libsystemd-shared-252.so`, `libsystemd-shared-256.7.so`, openSUSE's
/// `libsystemd-shared-259.3-1.1.so`) in one of [`SHARED_LIB_DIRS`] or /usr/lib/TRIPLET/systemd:
/// each major version one of them names, in order; none where none is there. Several
/// (an old library an upgrade left) leave which one runs open.
pub fn systemd_versions(raw: &RawFacts) -> Vec<u32> {
    raw.files
        .iter()
        .filter(|(_, f)| f.state == FileState::Present)
        .filter_map(|(path, _)| {
            let (dir, name) = path.rsplit_once('/')?;
            let known = SHARED_LIB_DIRS.contains(&dir)
                || dir
                    .strip_prefix("/usr/lib/")
                    .and_then(|d| d.strip_suffix("/systemd"))
                    .is_some_and(|triplet| !triplet.is_empty() && !triplet.contains('/'));
            let tag = name
                .strip_prefix("libsystemd-shared-")?
                .strip_suffix(".so")
                .filter(|_| known)?;
            let digits: String = tag.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect::<std::collections::BTreeSet<u32>>()
        .into_iter()
        .collect()
}

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
        !is_main_path(&self.path) && self.path.rsplit('/').next().is_some_and(|n| n > name)
    }
}

/// What systemd-resolved reads of its configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResolvedConf {
    /// Its main file: the settings of one whose reading is not known are not among
    /// `settings`.
    pub main: MainFile,
    /// The `[Resolve]` settings of its main file and then of its drop-ins, in the order
    /// systemd-resolved reads them.
    pub settings: Vec<Setting>,
    /// The section header where its parser stopped (no closing `]`, or a name that is not
    /// safe: `is_safe`), as
    /// `path:line` and the line: nothing after it is read.
    pub stopped_at: Option<(String, String)>,
    /// Why what it reads is not known in full: a main file whose reading is not known
    /// ([`MainFile::Unknown`]) sets something, stops the parser or may stop it; or a line
    /// that is not valid UTF-8 may stop it, the version of systemd not known.
    pub unsettled: Option<String>,
    /// Where the parser may stop, as `stopped_at`, with why that is not known: in a main
    /// file whose reading is not known, or at a line that is not valid UTF-8 where the
    /// version of systemd is not known (its parser stops there from 239 on). If it does, it
    /// reads nothing after that line.
    pub maybe_stopped_at: Option<(String, String, String)>,
}

/// From this systemd on, a line that is not valid UTF-8 stops the parser (systemd
/// 78d17fa0, "conf-parser: reject utf8-invalid lines", first in v239); before, the line was
/// read as any other, and the value that does not parse (a `DNS=` word that is no
/// address) dropped with a warning (v219 to v238 `parse_line` has no such check;
/// resolved-conf.c "Ignoring invalid DNS address").
pub const UTF8_STOPS_SINCE: u32 = 239;

/// Whether a line that is not valid UTF-8 stops the parser of the systemd `raw` has
/// ([`UTF8_STOPS_SINCE`]): `Err` with why where its version is not known, or its libraries
/// name versions on both sides.
fn utf8_stops(raw: &RawFacts) -> Result<bool, String> {
    let versions = systemd_versions(raw);
    let since = |v: &u32| *v >= UTF8_STOPS_SINCE;
    match (versions.first(), versions.last()) {
        (Some(low), _) if since(low) => Ok(true),
        (_, Some(high)) if !since(high) => Ok(false),
        (Some(low), Some(high)) => Err(format!(
            "systemd's parser stops at a line that is not valid UTF-8 from {UTF8_STOPS_SINCE} on, and libsystemd-shared of both {low} and {high} are there: which one runs is not known"
        )),
        _ => Err(format!(
            "systemd's parser stops at a line that is not valid UTF-8 from {UTF8_STOPS_SINCE} on, and its version is not known (no libsystemd-shared-*.so found)"
        )),
    }
}

impl ResolvedConf {
    /// The configuration the files of `raw` give.
    pub fn read(raw: &RawFacts) -> ResolvedConf {
        let mut conf = ResolvedConf {
            main: MainFile::of(raw),
            ..ResolvedConf::default()
        };
        let text_of = |path: &str| {
            raw.get(path)
                .and_then(RawFile::text)
                .map(|t| t.into_owned())
        };
        let unclean = |path: &str, text: &str| unclean_lines(raw, path, text);
        let utf8 = utf8_stops(raw);
        if let MainFile::Unknown(path, why) = &conf.main {
            // Whether it is read matters only where it sets something or stops the parser.
            let mut alone = ResolvedConf::default();
            let text = text_of(path).unwrap_or_default();
            if !alone.parse(path, &text, &unclean(path, &text), &utf8)
                || !alone.settings.is_empty()
                || alone.maybe_stopped_at.is_some()
            {
                conf.unsettled = Some(why.clone());
            }
            // The first line it may stop at: one not valid UTF-8 comes before a stop the
            // parser reached after it.
            conf.maybe_stopped_at = alone
                .maybe_stopped_at
                .or_else(|| alone.stopped_at.map(|(at, line)| (at, line, why.clone())));
        }
        let main = conf
            .main
            .path()
            .and_then(|path| Some((path.to_owned(), text_of(path)?)));
        let dropins = super::sysctl::conf_d_files(raw, &super::raw::RESOLVED_DROPIN_DIRS);
        for (path, text) in main.into_iter().chain(dropins) {
            if !conf.parse(&path, &text, &unclean(&path, &text), &utf8) {
                break;
            }
        }
        conf
    }

    /// Reads the file `path`, `text`, into it, the lines `unclean` not valid UTF-8 as the node
    /// has them, which stop the parser as `utf8` says ([`utf8_stops`]); false where its
    /// parser stops there. Where that is not known, the line is read as systemd before 239
    /// reads it, and where it may stop is kept, with why.
    fn parse(
        &mut self,
        path: &str,
        text: &str,
        unclean: &[usize],
        utf8: &Result<bool, String>,
    ) -> bool {
        let mut in_resolve = false;
        for (line, joined, clean) in logical_lines(text, unclean) {
            let trimmed = joined.trim();
            if !clean && !trimmed.is_empty() {
                let text = crate::text::escape(trimmed).into_owned();
                match utf8 {
                    Ok(true) => {
                        self.stopped_at = Some((format!("{path}:{line}"), text));
                        return false;
                    }
                    Ok(false) => {}
                    Err(why) => {
                        if self.maybe_stopped_at.is_none() {
                            self.maybe_stopped_at =
                                Some((format!("{path}:{line}"), text, why.clone()));
                            self.unsettled.get_or_insert_with(|| why.clone());
                        }
                    }
                }
            }
            if trimmed.starts_with('[') {
                if !trimmed.ends_with(']') || !is_safe(&trimmed[1..trimmed.len() - 1]) {
                    let text = crate::text::escape(trimmed).into_owned();
                    self.stopped_at = Some((format!("{path}:{line}"), text));
                    return false;
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
            self.settings.push(Setting {
                path: path.to_owned(),
                line,
                key: key.trim().to_owned(),
                value: value.trim().to_owned(),
                text: trimmed.to_owned(),
            });
        }
        true
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
/// number of its first physical line and whether it is valid UTF-8 as systemd's
/// `utf8_is_valid` judges it (none of its physical lines among `unclean`, no noncharacter): a
/// byte order mark dropped, a line ending in an unescaped `\` joined with the next one (the
/// `\` read as a space), a comment line among joined ones skipped.
fn logical_lines(text: &str, unclean: &[usize]) -> Vec<(usize, String, bool)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = Vec::new();
    let mut continued: Option<(usize, String, bool)> = None;
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
        let (first, mut joined, clean) = continued.take().unwrap_or((n + 1, String::new(), true));
        let clean = clean && !unclean.contains(&(n + 1)) && !line.chars().any(is_noncharacter);
        if escaped {
            joined.push_str(&line[..line.len() - 1]);
            joined.push(' ');
            continued = Some((first, joined, clean));
        } else {
            joined.push_str(line);
            lines.push((first, joined, clean));
        }
    }
    lines.extend(continued);
    lines
}

/// A character systemd's `unichar_is_valid` refuses though it is valid UTF-8: U+FDD0 to
/// U+FDEF and the last two of each plane (src/basic/utf8.c, v249 to v258).
fn is_noncharacter(c: char) -> bool {
    let c = u32::from(c);
    (0xFDD0..=0xFDEF).contains(&c) || c & 0xFFFE == 0xFFFE
}

/// The physical lines, from 1, of the file `path` (or of the file it links to) that are not
/// UTF-8, where it holds the bytes `text` was read from: `text` has them replaced.
fn unclean_lines(raw: &RawFacts, path: &str, text: &str) -> Vec<usize> {
    let file = raw.get(path);
    let target = file
        .and_then(RawFile::config_canonical)
        .and_then(|target| raw.get(&target));
    let Some(bytes) = [file, target]
        .into_iter()
        .flatten()
        .filter(|f| f.state == FileState::Present)
        .map(|f| &f.content[..])
        .find(|bytes| String::from_utf8_lossy(bytes) == text)
    else {
        return Vec::new();
    };
    bytes
        .split(|b| *b == b'\n')
        .enumerate()
        .filter(|(_, line)| std::str::from_utf8(line).is_err())
        .map(|(n, _)| n + 1)
        .collect()
}

/// The servers of systemd-resolved's compiled-in fallback list (meson's `dns-servers`, which
/// distributions set apart: openSUSE's `-Ddns-servers=''`), as the resolved.conf it ships
/// shows them: the commented `#FallbackDNS=` line of its `[Resolve]` section
/// (src/resolve/resolved.conf.in `#FallbackDNS={{DNS_SERVERS}}`), the last one where there
/// are more; none where that file has no such line (an administrator's file, or one not
/// read), where the list is not known. The shipped file is /usr/lib/systemd/resolved.conf
/// where the package puts it there (`-Dconfigfiledir=/usr/lib`), whether or not systemd
/// reads it (before 256 it does not, and an /etc copy would be the administrator's), else
/// /etc/systemd/resolved.conf. A `FallbackDNS=` setting, an empty one too, replaces the list
/// (resolved-conf.c `config_parse_dns_servers`: `need_builtin_fallbacks = false`).
pub fn shipped_fallback(raw: &RawFacts) -> Option<String> {
    let shipped = [VENDOR_MAIN, ETC_MAIN]
        .into_iter()
        .find(|p| raw.get(p).is_some_and(|f| f.state == FileState::Present))?;
    let text = raw.get(shipped).and_then(RawFile::text)?;
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
                ETC_MAIN,
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
                ETC_MAIN,
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
            ETC_MAIN,
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
            (ETC_MAIN, "[Resolve]\nDNS=192.0.2.1\n"),
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
            (ETC_MAIN, "[Resolve]\nDNS=\n"),
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

    /// openSUSE's shipped main file (systemd 259.3, `-Dconfigfiledir=/usr/lib`,
    /// `-Ddns-servers=''`): see the fixture's README.
    const SUSE_SHIPPED: &str = include_str!(
        "../../tests/fixtures/rules/DNS-CLUSTER-SELF-FORWARD/opensuse-tumbleweed-resolved-conf-in-usr-lib/root/usr/lib/systemd/resolved.conf"
    );
    const SUSE_LIB: &str = "/usr/lib64/systemd/libsystemd-shared-259.3-1.1.so";
    const USR_MAIN: &str = "/usr/lib/systemd/resolved.conf";

    fn located(conf: &ResolvedConf) -> Vec<String> {
        conf.settings.iter().map(Setting::location).collect()
    }

    /// From systemd 256 the main file is the first of /etc, /run, /usr/local/lib and
    /// /usr/lib's (conf-parser.c `config_parse_standard_file_with_dropins_full`); before, /etc's
    /// alone; where the version is not known, a main file outside /etc is not known to be
    /// read. Before, /usr/lib's (openSUSE's, Fedora's) was never read.
    #[test]
    fn the_main_file_is_the_first_there_from_systemd_256_and_etc_s_alone_before() {
        let usr = (USR_MAIN, "[Resolve]\nDNS=192.0.2.1\n");
        let dropin = ("/etc/systemd/resolved.conf.d/a.conf", "[Resolve]\nDNS=\n");
        let with_lib = |files: &[(&str, &str)], lib: &str| {
            let mut raw = raw_from(files);
            raw.file(lib, FileState::Present, Some(b""));
            raw
        };
        let conf = ResolvedConf::read(&with_lib(&[usr, dropin], SUSE_LIB));
        assert_eq!(conf.main, MainFile::Read(USR_MAIN.to_owned()));
        assert_eq!(
            located(&conf),
            [
                "/usr/lib/systemd/resolved.conf:2",
                "/etc/systemd/resolved.conf.d/a.conf:2"
            ]
        );
        // The main file is no drop-in: its empty DNS= resets nothing read after it.
        let reset = ResolvedConf::read(&with_lib(&[(USR_MAIN, "[Resolve]\nDNS=\n")], SUSE_LIB));
        assert!(reset.dns_resets_after("").is_empty());
        // The first there wins, the others are not read.
        let run = ("/run/systemd/resolved.conf", "[Resolve]\nDNS=192.0.2.2\n");
        let conf = ResolvedConf::read(&with_lib(&[usr, run], SUSE_LIB));
        assert_eq!(located(&conf), ["/run/systemd/resolved.conf:2"]);
        let etc = (ETC_MAIN, "[Resolve]\nDNS=192.0.2.3\n");
        let conf = ResolvedConf::read(&with_lib(&[usr, run, etc], SUSE_LIB));
        assert_eq!(located(&conf), ["/etc/systemd/resolved.conf:2"]);
        // A link to nothing is not there.
        let mut raw = with_lib(&[usr], SUSE_LIB);
        raw.file(ETC_MAIN, FileState::Missing, None);
        assert_eq!(
            ResolvedConf::read(&raw).main,
            MainFile::Read(USR_MAIN.to_owned())
        );
        // SLE 15 SP6's systemd 254 reads /etc's alone (openSUSE/systemd SLE15-SP6 @c89ea566
        // `config_parse_config_file`), Debian 12's 252 too.
        let debian = "/usr/lib/x86_64-linux-gnu/systemd/libsystemd-shared-252.so";
        for lib in ["/usr/lib64/systemd/libsystemd-shared-254.so", debian] {
            let conf = ResolvedConf::read(&with_lib(&[usr], lib));
            assert_eq!(
                (conf.main.clone(), located(&conf)),
                (MainFile::None, vec![]),
                "{lib}"
            );
        }
        // Version not known: not read, and what it sets is not known to be read.
        let conf = ResolvedConf::read(&raw_from(&[usr]));
        assert!(matches!(&conf.main, MainFile::Unknown(path, _) if path == USR_MAIN));
        assert!(conf.settings.is_empty() && conf.unsettled.is_some());
        // Where it sets nothing, whether it is read changes nothing.
        let conf = ResolvedConf::read(&raw_from(&[(USR_MAIN, SUSE_SHIPPED)]));
        assert!(matches!(conf.main, MainFile::Unknown(..)) && conf.unsettled.is_none());
    }

    /// The library's name gives the major version: Debian's, SUSE's tag with its release, a
    /// stable release's; a library elsewhere says nothing.
    #[test]
    fn the_private_library_names_systemd_s_version() {
        let version = |paths: &[&str]| {
            let mut raw = RawFacts::default();
            for path in paths {
                raw.file(path, FileState::Present, Some(b""));
            }
            systemd_versions(&raw)
        };
        assert_eq!(version(&[SUSE_LIB]), [259]);
        assert_eq!(
            version(&["/usr/lib/x86_64-linux-gnu/systemd/libsystemd-shared-252.so"]),
            [252]
        );
        assert_eq!(
            version(&[
                "/lib/systemd/libsystemd-shared-247.so",
                "/usr/lib/systemd/libsystemd-shared-256.7.so"
            ]),
            [247, 256]
        );
        assert_eq!(
            version(&[
                "/opt/systemd/libsystemd-shared-257.so",
                "/usr/lib/a/b/systemd/libsystemd-shared-257.so",
                "/usr/lib64/systemd/libsystemd-core-257.so",
            ]),
            [0u32; 0]
        );
        // Two libraries on either side of 256: which main file is read is not known; on
        // one side, it is.
        let main = |libs: &[&str]| {
            let mut raw = raw_from(&[(USR_MAIN, "[Resolve]\nDNS=192.0.2.53\n")]);
            for path in libs {
                raw.file(path, FileState::Present, Some(b""));
            }
            MainFile::of(&raw)
        };
        let old = "/usr/lib/systemd/libsystemd-shared-252.so";
        let new = "/usr/lib/systemd/libsystemd-shared-256.so";
        assert!(
            matches!(main(&[old, new]), MainFile::Unknown(_, why) if why.contains("both 252 and 256")),
            "{:?}",
            main(&[old, new])
        );
        assert_eq!(
            main(&[new, "/usr/lib64/systemd/libsystemd-shared-257.so"]),
            MainFile::Read(USR_MAIN.to_owned())
        );
        assert_eq!(
            main(&[old, "/lib/systemd/libsystemd-shared-249.so"]),
            MainFile::None
        );
    }

    /// The compiled-in fallback list is the shipped file's: /usr/lib's where the package puts
    /// it there (openSUSE's, empty), whatever an /etc copy says. Before, /etc's alone was
    /// read, so on openSUSE the list was not known, and an old copy's list was taken.
    #[test]
    fn the_shipped_fallback_list_is_read_from_the_shipped_file() {
        let copy = "[Resolve]\n#FallbackDNS=1.1.1.1 8.8.8.8\n";
        assert_eq!(
            shipped_fallback(&raw_from(&[(USR_MAIN, SUSE_SHIPPED), (ETC_MAIN, copy)])),
            Some(String::new())
        );
        assert_eq!(
            shipped_fallback(&raw_from(&[(ETC_MAIN, copy)])).as_deref(),
            Some("1.1.1.1 8.8.8.8")
        );
    }

    /// A line that is not valid UTF-8 (a Latin-1 `ü`, a noncharacter) stops systemd's parser
    /// where it stands, as a broken section header does (conf-parser.c `parse_line`:
    /// `log_syntax_invalid_utf8` returns -EINVAL, v249 to v258); one in a comment is skipped
    /// first. Before, the line was read as text and the reading went on.
    #[test]
    fn a_line_that_is_not_utf8_stops_the_reading() {
        let mut raw = raw_from(&[(ETC_MAIN, "[Resolve]\nDNS=192.0.2.1\n")]);
        raw.file(LIB_252, FileState::Present, Some(b""));
        raw.file(
            "/etc/systemd/resolved.conf.d/10-site.conf",
            FileState::Present,
            Some(b"# M\xfcller\n[Resolve]\nDNS=192.0.2.2\nDomains=m\xfcller.example\nDNS=192.0.2.3\n"),
        );
        let late = (
            "/etc/systemd/resolved.conf.d/20-late.conf",
            "[Resolve]\nDNS=\n",
        );
        let raw = crate::testing::with_files(&raw, &[late]);
        let conf = ResolvedConf::read(&raw);
        let values: Vec<&str> = conf.settings.iter().map(|s| s.value.as_str()).collect();
        assert_eq!(values, ["192.0.2.1", "192.0.2.2"]);
        assert_eq!(
            conf.stopped_at.map(|(at, _)| at),
            Some("/etc/systemd/resolved.conf.d/10-site.conf:4".to_owned())
        );
        // Valid UTF-8 that systemd refuses: a noncharacter, in a continued line.
        let mut nonchar = raw_from(&[(
            ETC_MAIN,
            "[Resolve]\nDNS=192.0.2.1 \\\n \u{fdd0}\nDNS=192.0.2.2\n",
        )]);
        nonchar.file(LIB_252, FileState::Present, Some(b""));
        let conf = ResolvedConf::read(&nonchar);
        assert!(conf.settings.is_empty());
        assert_eq!(
            conf.stopped_at.map(|(at, _)| at),
            Some("/etc/systemd/resolved.conf:2".to_owned())
        );
    }

    /// The library systemd 252 installs on Debian 12.
    const LIB_252: &str = "/usr/lib/x86_64-linux-gnu/systemd/libsystemd-shared-252.so";

    /// Before systemd 239 a line that is not valid UTF-8 is read as any other (its value
    /// dropped where it does not parse); where the version is not known, the reading goes on
    /// as before 239 and where it may stop is kept, with why, and the reading is unsettled.
    #[test]
    fn a_line_that_is_not_utf8_stops_the_reading_from_systemd_239_on() {
        let text: &[u8] = b"[Resolve]\nDNS=192.0.2.1\nDomains=m\xfcller.example\nDNS=192.0.2.3\n";
        let node = |lib: Option<&str>| {
            let mut raw = RawFacts::default();
            raw.file(ETC_MAIN, FileState::Present, Some(text));
            if let Some(lib) = lib {
                raw.file(lib, FileState::Present, Some(b""));
            }
            ResolvedConf::read(&raw)
        };
        let values = |conf: &ResolvedConf| {
            conf.settings
                .iter()
                .map(|s| s.key.clone())
                .collect::<Vec<_>>()
        };
        let old = node(Some("/lib/systemd/libsystemd-shared-237.so"));
        assert_eq!(values(&old), ["DNS", "Domains", "DNS"]);
        assert!(
            old.stopped_at.is_none() && old.maybe_stopped_at.is_none() && old.unsettled.is_none()
        );
        let new = node(Some(LIB_252));
        assert_eq!(values(&new), ["DNS"]);
        assert_eq!(
            new.stopped_at.map(|(at, _)| at).as_deref(),
            Some("/etc/systemd/resolved.conf:3")
        );
        for unknown in [node(None), {
            let mut raw = RawFacts::default();
            raw.file(ETC_MAIN, FileState::Present, Some(text));
            raw.file(
                "/lib/systemd/libsystemd-shared-237.so",
                FileState::Present,
                Some(b""),
            );
            raw.file(LIB_252, FileState::Present, Some(b""));
            ResolvedConf::read(&raw)
        }] {
            assert_eq!(values(&unknown), ["DNS", "Domains", "DNS"]);
            assert!(unknown.stopped_at.is_none());
            let (at, _, why) = unknown.maybe_stopped_at.clone().expect("may stop");
            assert_eq!(at, "/etc/systemd/resolved.conf:3");
            assert!(why.contains("from 239 on"), "{why}");
            assert!(unknown.unsettled.is_some());
        }
    }
}
