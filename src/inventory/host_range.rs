//! Host patterns as they appear in inventory files (not `--limit`): `name`, `name:port`,
//! `[v6addr]:port`, and ranges `node[01:03]`, `node[a:c]`, `node[1:9:2]`, expanded the way
//! Ansible's `parse_address` and `expand_hostname_range` do. Ansible checks the name itself
//! against hostname/IP rules before splitting off a port; dnsfix does not, so an odd name
//! with a `:digits` suffix is read as name and port.

/// Refuse ranges that would create absurd numbers of hosts (almost certainly a typo such as
/// `node[1:10000000]`) before allocating them.
const MAX_EXPANSION: usize = 65_536;

/// Expands one inventory host pattern into host names and the port it specifies, if any.
pub(crate) fn expand_host_pattern(pattern: &str) -> Result<(Vec<String>, Option<u16>), String> {
    // A newline or an escape in a name would reach every report as its own line or a
    // terminal control: no host is called that (ssh refuses such a name too).
    if pattern.chars().any(char::is_control) {
        return Err("a host name cannot hold control characters".to_owned());
    }
    let (host, port) = split_port(pattern);
    let port = match port {
        Some(digits) => Some(
            digits
                .parse::<u16>()
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| format!("port `{digits}` is not a TCP port"))?,
        ),
        None => None,
    };
    let mut names = Vec::new();
    if host.contains('[') {
        expand_ranges(host, &mut names)?;
    } else {
        names.push(host.to_string());
    }
    Ok((names, port))
}

/// `[host]:port`, or `host:port` where `host` has no `:` outside `[...]` ranges (so a bare
/// IPv6 address never loses its last group to a "port").
pub(crate) fn split_port(pattern: &str) -> (&str, Option<&str>) {
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if pattern.starts_with('[')
        && let Some(close) = pattern.rfind("]:")
        && close > 1
        && all_digits(&pattern[close + 2..])
    {
        return (&pattern[1..close], Some(&pattern[close + 2..]));
    }
    let mut depth = false;
    for (i, c) in pattern.char_indices() {
        match c {
            '[' => depth = true,
            ']' => depth = false,
            ':' if !depth => {
                let rest = &pattern[i + 1..];
                return if all_digits(rest) {
                    (&pattern[..i], Some(rest))
                } else {
                    (pattern, None)
                };
            }
            _ => {}
        }
    }
    (pattern, None)
}

fn expand_ranges(line: &str, out: &mut Vec<String>) -> Result<(), String> {
    let open = line.find('[').ok_or("missing `[`")?;
    let close = line[open..]
        .find(']')
        .map(|i| open + i)
        .ok_or_else(|| format!("unterminated host range in `{line}`"))?;
    let (head, range, tail) = (&line[..open], &line[open + 1..close], &line[close + 1..]);
    let bounds: Vec<&str> = range.split(':').collect();
    if bounds.len() != 2 && bounds.len() != 3 {
        return Err(format!(
            "host range `[{range}]` must be begin:end or begin:end:step"
        ));
    }
    let begin = if bounds[0].is_empty() { "0" } else { bounds[0] };
    let end = bounds[1];
    if end.is_empty() {
        return Err(format!("host range `[{range}]` must specify an end value"));
    }
    let step = match bounds.get(2) {
        Some(step) => step
            .parse::<usize>()
            .ok()
            .filter(|s| *s > 0)
            .ok_or_else(|| format!("host range `[{range}]` step must be a positive integer"))?,
        None => 1,
    };

    let items: Vec<String> = if let (Some(b), Some(e)) = (letter_index(begin), letter_index(end)) {
        if b > e {
            return Err(format!("host range `[{range}]` must have begin <= end"));
        }
        LETTERS[b..=e]
            .chars()
            .step_by(step)
            .map(String::from)
            .collect()
    } else {
        let parse = |s: &str| {
            s.parse::<u64>().map_err(|_| {
                format!("host range `[{range}]` bounds must be numbers or single letters")
            })
        };
        let (b, e) = (parse(begin)?, parse(end)?);
        if b > e {
            return Err(format!("host range `[{range}]` must have begin <= end"));
        }
        let width = if begin.len() > 1 && begin.starts_with('0') {
            if begin.len() != end.len() {
                return Err(format!(
                    "host range `[{range}]` must specify equal-length begin and end formats"
                ));
            }
            begin.len()
        } else {
            0
        };
        let count = (e - b) / step as u64 + 1;
        if count > MAX_EXPANSION as u64 {
            return Err(format!(
                "host range `[{range}]` expands to more than {MAX_EXPANSION} hosts"
            ));
        }
        (b..=e)
            .step_by(step)
            .map(|n| format!("{n:0width$}"))
            .collect()
    };

    for item in items {
        let name = format!("{head}{item}{tail}");
        if name.contains('[') {
            expand_ranges(&name, out)?;
        } else {
            out.push(name);
        }
        if out.len() > MAX_EXPANSION {
            return Err(format!(
                "`{line}` expands to more than {MAX_EXPANSION} hosts"
            ));
        }
    }
    Ok(())
}

/// Python's `string.ascii_letters`, which Ansible indexes for alphabetic ranges.
const LETTERS: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

fn letter_index(bound: &str) -> Option<usize> {
    let mut chars = bound.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if c.is_ascii_alphabetic() => LETTERS.find(c),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(pattern: &str) -> Vec<String> {
        expand_host_pattern(pattern).expect("valid pattern").0
    }

    #[test]
    fn numeric_ranges_keep_zero_padding() {
        assert_eq!(names("node[01:03]"), ["node01", "node02", "node03"]);
        assert_eq!(
            names("node[1:3].example"),
            ["node1.example", "node2.example", "node3.example"]
        );
        assert_eq!(names("node[8:10]"), ["node8", "node9", "node10"]);
        assert_eq!(names("n[0:6:3]"), ["n0", "n3", "n6"]);
        assert_eq!(names("n[:1]"), ["n0", "n1"]);
    }

    #[test]
    fn alphabetic_and_nested_ranges() {
        assert_eq!(names("node[a:c]"), ["nodea", "nodeb", "nodec"]);
        assert_eq!(names("[a:b]-[1:2]"), ["a-1", "a-2", "b-1", "b-2"]);
        assert_eq!(names("x[y:B]"), ["xy", "xz", "xA", "xB"]);
    }

    #[test]
    fn ports_are_split_off() {
        assert_eq!(
            expand_host_pattern("node[1:2]:2222"),
            Ok((vec!["node1".to_string(), "node2".to_string()], Some(2222)))
        );
        assert_eq!(
            expand_host_pattern("[2001:db8::1]:22"),
            Ok((vec!["2001:db8::1".to_string()], Some(22)))
        );
        assert_eq!(
            expand_host_pattern("2001:db8::1"),
            Ok((vec!["2001:db8::1".to_string()], None))
        );
        assert_eq!(
            expand_host_pattern("192.0.2.10"),
            Ok((vec!["192.0.2.10".to_string()], None))
        );
        assert!(expand_host_pattern("node:99999").is_err());
    }

    #[test]
    fn bad_ranges_say_what_is_expected() {
        for (pattern, fragment) in [
            ("node[1:2:3:4]", "begin:end or begin:end:step"),
            ("node[1:]", "end value"),
            ("node[01:3]", "equal-length"),
            ("node[3:1]", "begin <= end"),
            ("node[c:a]", "begin <= end"),
            ("node[1:x2]", "numbers or single letters"),
            ("node[1:3", "unterminated"),
            ("node[1:9:0]", "positive integer"),
            ("node[1:9999999]", "more than"),
        ] {
            let err = expand_host_pattern(pattern).expect_err(pattern);
            assert!(err.contains(fragment), "{pattern}: {err}");
        }
    }
}
