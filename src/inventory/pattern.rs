//! `--limit`: Ansible host patterns, evaluated against an [`Inventory`]
//! (`InventoryManager.subset` + `_evaluate_patterns`).
//!
//! - Elements are separated by `,`; without a comma, by `:` unless the whole pattern is one
//!   host address (so `fe80::1` and `node[1:3]` stay whole, while `kube_node:!etcd` splits).
//! - An element is a host name, a group name, `all`, or a glob over host and group names
//!   (`*`, `?`, `[seq]`, `[!seq]`, Python `fnmatch`, case-sensitive); a group selects its
//!   hosts and those of its descendants. `group[0]`, `group[-1]`, `group[0:2]` pick hosts by
//!   position in the group.
//! - `&x` intersects, `!x` excludes. Plain elements are applied first, then every `&`, then
//!   every `!`, whatever the written order; only `&`/`!` elements start from `all`.
//! - `@file` reads one element per line from a file (e.g. an Ansible `.retry` file).
//!
//! Unlike Ansible, which warns and carries on, an element that matches nothing is an error,
//! and so is a limit that selects no host: a typo in `!do-not-touch` must not widen a change.
//! `~regex` elements are refused with an error (there is no regex engine in dnsfix).

use std::collections::HashSet;
use std::net::Ipv6Addr;
use std::path::PathBuf;

use super::Inventory;
use super::error::InventoryError;
use super::host_range::split_port;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Union,
    Intersect,
    Exclude,
}

/// Indices of the hosts `limit` selects, in inventory order.
pub(crate) fn select(inventory: &Inventory, limit: &str) -> Result<Vec<usize>, InventoryError> {
    check_brackets(limit).map_err(|reason| InventoryError::LimitInvalid {
        pattern: crate::text::escape(&limit.chars().take(80).collect::<String>()).into_owned(),
        reason,
    })?;
    let mut elements = Vec::new();
    for element in split_host_pattern(limit) {
        if let Some(file) = element.strip_prefix('@') {
            let path = PathBuf::from(file);
            let text = std::fs::read_to_string(&path)
                .map_err(|source| InventoryError::LimitFile { path, source })?;
            for (n, line) in text.lines().enumerate() {
                check_brackets(line.trim()).map_err(|reason| InventoryError::LimitInvalid {
                    pattern: format!("{file}:{}", n + 1),
                    reason,
                })?;
            }
            elements.extend(
                text.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(String::from),
            );
        } else {
            elements.push(element);
        }
    }
    if elements.is_empty() {
        return Err(InventoryError::LimitInvalid {
            pattern: limit.to_string(),
            reason: "names no host or group; leave out --limit to select every host".into(),
        });
    }

    let mut ordered: Vec<(Op, &str)> = Vec::new();
    for op in [Op::Union, Op::Intersect, Op::Exclude] {
        for element in &elements {
            let (this, body) = match element.as_bytes().first() {
                Some(b'&') => (Op::Intersect, &element[1..]),
                Some(b'!') => (Op::Exclude, &element[1..]),
                _ => (Op::Union, element.as_str()),
            };
            if this == op {
                ordered.push((op, body));
            }
        }
    }
    if !ordered.iter().any(|(op, _)| *op == Op::Union) {
        ordered.insert(0, (Op::Union, "all"));
    }

    let mut selected: Vec<usize> = Vec::new();
    for (op, body) in ordered {
        let written = match op {
            Op::Union => body.to_string(),
            Op::Intersect => format!("&{body}"),
            Op::Exclude => format!("!{body}"),
        };
        let matched = if op == Op::Union
            && let Some(h) = inventory.hosts.iter().position(|h| h.name == body)
        {
            vec![h]
        } else {
            match_one(inventory, body, &written)?
        };
        match op {
            Op::Union => {
                for h in matched {
                    if !selected.contains(&h) {
                        selected.push(h);
                    }
                }
            }
            Op::Intersect => {
                let keep: HashSet<usize> = matched.into_iter().collect();
                selected.retain(|h| keep.contains(h));
            }
            Op::Exclude => {
                let drop: HashSet<usize> = matched.into_iter().collect();
                selected.retain(|h| !drop.contains(h));
            }
        }
    }

    let chosen: HashSet<usize> = selected.into_iter().collect();
    let result: Vec<usize> = (0..inventory.hosts.len())
        .filter(|h| chosen.contains(h))
        .collect();
    if result.is_empty() {
        return Err(InventoryError::LimitEmpty {
            limit: limit.to_string(),
            inventory: inventory.describe(),
        });
    }
    Ok(result)
}

/// Hosts matched by one element (without its `&`/`!`), in Ansible's order so that
/// subscripts pick the same hosts Ansible would.
fn match_one(
    inventory: &Inventory,
    body: &str,
    written: &str,
) -> Result<Vec<usize>, InventoryError> {
    if body.starts_with('~') {
        return Err(InventoryError::LimitInvalid {
            pattern: written.to_string(),
            reason:
                "regular-expression patterns (`~...`) are not supported; use a glob such as `node*`"
                    .into(),
        });
    }
    let (expr, subscript) = split_subscript(body);
    let glob: Vec<char> = expr.chars().collect();

    let mut hosts: Vec<usize> = Vec::new();
    let mut matched_group = false;
    for group in &inventory.groups {
        if fnmatch(&glob, &group.name) {
            matched_group = true;
            for &h in &group.members {
                if !hosts.contains(&h) {
                    hosts.push(h);
                }
            }
        }
    }
    if !matched_group || expr.contains(['.', '?', '*', '[']) {
        for (h, host) in inventory.hosts.iter().enumerate() {
            if fnmatch(&glob, &host.name) && !hosts.contains(&h) {
                hosts.push(h);
            }
        }
    }
    if hosts.is_empty() {
        if matched_group && subscript.is_none() {
            // A real group that happens to be empty (e.g. Kubespray's `calico_rr`): not a
            // typo. If nothing else is selected, the caller reports an empty selection.
            return Ok(hosts);
        }
        return Err(InventoryError::LimitNoMatch {
            pattern: written.to_string(),
            inventory: inventory.describe(),
        });
    }

    match subscript {
        None => Ok(hosts),
        Some(Subscript::Index(index)) => {
            let len = hosts.len() as i64;
            let at = if index < 0 { len + index } else { index };
            match usize::try_from(at).ok().and_then(|i| hosts.get(i)) {
                Some(&h) => Ok(vec![h]),
                None => Err(InventoryError::LimitInvalid {
                    pattern: written.to_string(),
                    reason: format!("index {index} is out of range: `{expr}` has {len} host(s)"),
                }),
            }
        }
        Some(Subscript::Range(start, end)) => {
            let end = end.unwrap_or(hosts.len().saturating_sub(1));
            let picked: Vec<usize> = hosts
                .iter()
                .copied()
                .skip(start)
                .take((end + 1).saturating_sub(start))
                .collect();
            if picked.is_empty() {
                return Err(InventoryError::LimitInvalid {
                    pattern: written.to_string(),
                    reason: format!(
                        "range is out of range: `{expr}` has {} host(s)",
                        hosts.len()
                    ),
                });
            }
            Ok(picked)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Subscript {
    Index(i64),
    Range(usize, Option<usize>),
}

/// `name[3]`, `name[-1]`, `name[1:3]`, `name[1:]` (Ansible's `PATTERN_WITH_SUBSCRIPT`);
/// anything else in brackets is a glob character class and stays in the pattern.
fn split_subscript(pattern: &str) -> (&str, Option<Subscript>) {
    let Some(inner_end) = pattern.strip_suffix(']') else {
        return (pattern, None);
    };
    let Some(open) = inner_end.rfind('[') else {
        return (pattern, None);
    };
    let (base, inner) = (&inner_end[..open], &inner_end[open + 1..]);
    if base.is_empty() {
        return (pattern, None);
    }
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let unsigned = inner.strip_prefix('-').unwrap_or(inner);
    if digits(unsigned) {
        return match inner.parse() {
            Ok(index) => (base, Some(Subscript::Index(index))),
            Err(_) => (pattern, None),
        };
    }
    if let Some(sep) = inner.find([':', '-']) {
        let (start, end) = (&inner[..sep], &inner[sep + 1..]);
        if digits(start) && (end.is_empty() || digits(end)) {
            let start = start.parse().ok();
            let end = if end.is_empty() {
                Some(None)
            } else {
                end.parse().ok().map(Some)
            };
            if let (Some(start), Some(end)) = (start, end) {
                return (base, Some(Subscript::Range(start, end)));
            }
        }
    }
    (pattern, None)
}

/// Longest pattern dnsfix reads: far more than any real host list, small enough that no
/// pattern costs noticeable time.
const MAX_PATTERN: usize = 64 * 1024;

/// Every `[` is closed by a `]` before the next `[`, and every `]` closes one. Ansible reads
/// `web[` as `web` (the whole group) and nests nothing; dnsfix refuses both rather than run
/// on more hosts than asked, in one pass whatever the length.
fn check_brackets(pattern: &str) -> Result<(), String> {
    if pattern.len() > MAX_PATTERN {
        return Err(format!(
            "is {} bytes long; at most {MAX_PATTERN}",
            pattern.len()
        ));
    }
    let mut open: Option<usize> = None;
    for (column, c) in pattern.chars().enumerate().map(|(i, c)| (i + 1, c)) {
        match (c, open) {
            ('[', Some(at)) => {
                return Err(format!(
                    "`[` at column {column} is inside the `[` at column {at}; brackets do not nest"
                ));
            }
            ('[', None) => open = Some(column),
            (']', None) => return Err(format!("`]` at column {column} closes no `[`")),
            (']', Some(_)) => open = None,
            _ => {}
        }
    }
    match open {
        Some(at) => Err(format!("`[` at column {at} is never closed")),
        None => Ok(()),
    }
}

/// Ansible's `split_host_pattern`.
fn split_host_pattern(pattern: &str) -> Vec<String> {
    let parts: Vec<String> = if pattern.contains(',') {
        pattern.split(',').map(String::from).collect()
    } else if is_host_address(pattern.trim()) {
        vec![pattern.to_string()]
    } else {
        split_on_colons(pattern)
    };
    parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// Runs of characters other than whitespace, `:`, `[` and `]`, where a whole `[...]` counts
/// as one character (so `web[1:2]:db` is `web[1:2]` and `db`).
fn split_on_colons(pattern: &str) -> Vec<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if c == '['
            && let Some(len) = chars[i..].iter().position(|&d| d == ']')
        {
            current.extend(&chars[i..=i + len]);
            i += len + 1;
            continue;
        }
        if c.is_whitespace() || matches!(c, ':' | '[' | ']') {
            if !current.is_empty() {
                parts.push(std::mem::take(&mut current));
            }
        } else {
            current.push(c);
        }
        i += 1;
    }
    if !current.is_empty() {
        parts.push(current);
    }
    parts
}

/// Would Ansible's `parse_address(pattern, allow_ranges=True)` accept this as one host
/// (name or IPv4 with optional ranges and port, or an IPv6 address)?
fn is_host_address(pattern: &str) -> bool {
    let (host, _port) = split_port(pattern);
    host.parse::<Ipv6Addr>().is_ok() || is_hostname(host)
}

fn is_hostname(host: &str) -> bool {
    !host.is_empty() && host.split('.').all(is_label)
}

/// A hostname label: word characters, `-`, and `[x:y]` ranges; not ending in `-` or `_`.
fn is_label(label: &str) -> bool {
    let chars: Vec<char> = label.chars().collect();
    if chars.is_empty() {
        return false;
    }
    let mut i = 0;
    let mut last = ' ';
    while let Some(&c) = chars.get(i) {
        if c == '[' {
            let Some(len) = chars[i..].iter().position(|&d| d == ']') else {
                return false;
            };
            let inner = &chars[i + 1..i + len];
            if !inner.contains(&':') || !inner.iter().all(|d| d.is_alphanumeric() || *d == ':') {
                return false;
            }
            i += len + 1;
            last = ']';
            continue;
        }
        let word = c.is_alphanumeric() || c == '_';
        if !(word || (c == '-' && i > 0)) {
            return false;
        }
        last = c;
        i += 1;
    }
    last != '-' && last != '_'
}

/// Python's `fnmatch.fnmatchcase`: `*`, `?`, `[seq]`, `[!seq]`, whole-string match.
fn fnmatch(pattern: &[char], name: &str) -> bool {
    let tokens = glob_tokens(pattern);
    let name: Vec<char> = name.chars().collect();
    let (mut t, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match tokens.get(t) {
            Some(Token::Star) => {
                star = Some((t, n));
                t += 1;
            }
            Some(token) if token.matches(name[n]) => {
                t += 1;
                n += 1;
            }
            _ => match star {
                Some((st, sn)) => {
                    t = st + 1;
                    n = sn + 1;
                    star = Some((st, sn + 1));
                }
                None => return false,
            },
        }
    }
    tokens[t..].iter().all(|token| matches!(token, Token::Star))
}

#[derive(Debug)]
enum Token {
    Star,
    Any,
    Literal(char),
    Class {
        negated: bool,
        items: Vec<(char, char)>,
    },
}

impl Token {
    fn matches(&self, c: char) -> bool {
        match self {
            Token::Star | Token::Any => true,
            Token::Literal(l) => *l == c,
            Token::Class { negated, items } => {
                items.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != *negated
            }
        }
    }
}

fn glob_tokens(pattern: &[char]) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut i = 0;
    while let Some(&c) = pattern.get(i) {
        i += 1;
        match c {
            '*' => {
                if !matches!(tokens.last(), Some(Token::Star)) {
                    tokens.push(Token::Star);
                }
            }
            '?' => tokens.push(Token::Any),
            '[' => {
                // Find the closing bracket; a `]` right after `[` or `[!` is a member.
                let mut j = i;
                if pattern.get(j) == Some(&'!') {
                    j += 1;
                }
                if pattern.get(j) == Some(&']') {
                    j += 1;
                }
                while pattern.get(j).is_some_and(|&d| d != ']') {
                    j += 1;
                }
                if j >= pattern.len() {
                    tokens.push(Token::Literal('['));
                    continue;
                }
                let mut body = &pattern[i..j];
                let negated = body.first() == Some(&'!');
                if negated {
                    body = &body[1..];
                }
                let mut items = Vec::new();
                let mut k = 0;
                while let Some(&lo) = body.get(k) {
                    if body.get(k + 1) == Some(&'-')
                        && let Some(&hi) = body.get(k + 2)
                    {
                        items.push((lo, hi));
                        k += 3;
                    } else {
                        items.push((lo, lo));
                        k += 1;
                    }
                }
                tokens.push(Token::Class { negated, items });
                i = j + 1;
            }
            other => tokens.push(Token::Literal(other)),
        }
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob(pattern: &str, name: &str) -> bool {
        fnmatch(&pattern.chars().collect::<Vec<_>>(), name)
    }

    /// An unclosed `[` would select the whole group (as Ansible reads `kube_node[0`); a
    /// nest of brackets took seconds per thousand. Both are refused at once.
    #[test]
    fn unbalanced_brackets_are_refused_in_one_pass() {
        for (pattern, says) in [
            ("kube_node[0", "`[` at column 10 is never closed"),
            ("node[", "`[` at column 5 is never closed"),
            (
                "node[[1]]",
                "`[` at column 6 is inside the `[` at column 5; brackets do not nest",
            ),
            ("node]", "`]` at column 5 closes no `[`"),
        ] {
            assert_eq!(check_brackets(pattern), Err(says.to_string()), "{pattern}");
        }
        for ok in [
            "kube_node[0]",
            "web[1:3]:db",
            "node[12]",
            "all",
            "!node1,&kube_node",
        ] {
            assert_eq!(check_brackets(ok), Ok(()), "{ok}");
        }
        let start = crate::testing::thread_cpu_time();
        let nested = "[".repeat(60_000);
        assert!(check_brackets(&nested).is_err());
        assert!(check_brackets(&"x".repeat(MAX_PATTERN + 1)).is_err());
        let took = crate::testing::thread_cpu_time() - start;
        assert!(
            took < std::time::Duration::from_millis(200),
            "took {took:?}"
        );
    }

    #[test]
    fn fnmatch_like_python() {
        assert!(glob("node*", "node1"));
        assert!(glob("node*", "node"));
        assert!(glob("*", ""));
        assert!(glob("kube_*", "kube_node"));
        assert!(!glob("kube_*", "k8s_cluster"));
        assert!(glob("node?", "node1"));
        assert!(!glob("node?", "node10"));
        assert!(glob("node[12]", "node2"));
        assert!(!glob("node[!12]", "node2"));
        assert!(glob("node[0-9][0-9]", "node42"));
        assert!(glob("a[]]b", "a]b"));
        assert!(glob("a[b", "a[b"));
        assert!(glob("*.example.com", "node1.example.com"));
        assert!(!glob("Node*", "node1"));
        assert!(glob("*a*b*c", "xaybzc"));
        assert!(!glob("*a*b*c", "xaybz"));
    }

    #[test]
    fn splitting_follows_ansible() {
        let split = |s: &str| split_host_pattern(s);
        assert_eq!(split("node1,node2"), ["node1", "node2"]);
        assert_eq!(split("kube_node:!node3"), ["kube_node", "!node3"]);
        assert_eq!(split("kube_node:&etcd"), ["kube_node", "&etcd"]);
        assert_eq!(split("fe80::1"), ["fe80::1"]);
        assert_eq!(split("2001:db8::53"), ["2001:db8::53"]);
        assert_eq!(split("node[1:3]"), ["node[1:3]"]);
        assert_eq!(split("web[1:2]:db"), ["web[1:2]", "db"]);
        assert_eq!(split("192.0.2.11"), ["192.0.2.11"]);
        assert_eq!(split(" a , ,b "), ["a", "b"]);
        assert_eq!(split("kube_*:etcd"), ["kube_*", "etcd"]);
        assert_eq!(split("node1:2222"), ["node1:2222"]);
        assert!(split("").is_empty());
    }

    #[test]
    fn subscripts() {
        assert_eq!(
            split_subscript("web[0]"),
            ("web", Some(Subscript::Index(0)))
        );
        assert_eq!(
            split_subscript("web[-1]"),
            ("web", Some(Subscript::Index(-1)))
        );
        assert_eq!(
            split_subscript("web[1:3]"),
            ("web", Some(Subscript::Range(1, Some(3))))
        );
        assert_eq!(
            split_subscript("web[1:]"),
            ("web", Some(Subscript::Range(1, None)))
        );
        assert_eq!(
            split_subscript("web[1-2]"),
            ("web", Some(Subscript::Range(1, Some(2))))
        );
        assert_eq!(split_subscript("node[12]x"), ("node[12]x", None));
        assert_eq!(split_subscript("node[ab]"), ("node[ab]", None));
        assert_eq!(split_subscript("[0]"), ("[0]", None));
    }
}
