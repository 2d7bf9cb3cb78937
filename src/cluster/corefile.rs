//! The parts of a Corefile dnsfix judges: each server block's zones, its `forward` plugin
//! (the zone it forwards and where to) and whether the `loop` plugin is on. The syntax is
//! Caddyfile's as CoreDNS reads it (coredns.io/manual/configuration): server blocks
//! `ZONE[:PORT]... {`, one directive per line with its arguments, a nested `{ }` block of
//! options, `#` comments.

use serde::{Deserialize, Serialize};

/// One server block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerBlock {
    /// `.:53`, `cluster.local:53`, as written.
    pub zones: Vec<String>,
    /// 1-based line of the block's opening line in the Corefile.
    pub line: usize,
    /// `forward FROM TO...`, when the block has one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub forward: Option<Forward>,
    /// The `loop` plugin is on: the block dies on a forwarding loop at start-up.
    pub loop_plugin: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Forward {
    /// The zone forwarded (`.`: everything).
    pub from: String,
    /// Addresses or a resolv.conf path (`/etc/resolv.conf`).
    pub to: Vec<String>,
    pub line: usize,
}

impl ServerBlock {
    /// It serves the root zone (`.`, `.:53`, `dns://.:53`): where names outside the
    /// cluster go.
    pub fn is_root(&self) -> bool {
        self.zones.iter().any(|z| {
            let z = z.strip_prefix("dns://").unwrap_or(z);
            z == "." || z.starts_with(".:")
        })
    }
}

impl Forward {
    /// It forwards to the servers of a resolv.conf file (the pod's own, in a pod: the one
    /// the kubelet handed it).
    pub fn to_resolv_conf(&self) -> bool {
        self.to.iter().any(|t| t.starts_with('/'))
    }
}

/// The server blocks of `text`; an unbalanced brace ends the parse with what was read.
pub fn parse(text: &str) -> Vec<ServerBlock> {
    let mut blocks = Vec::new();
    let mut current: Option<ServerBlock> = None;
    let mut depth = 0usize;
    for (i, raw) in text.lines().enumerate() {
        let line = uncommented(raw).trim();
        if line.is_empty() {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let opens = line.ends_with('{');
        let closes = words == ["}"];
        match depth {
            0 if opens => {
                let zones = words[..words.len() - 1]
                    .iter()
                    .flat_map(|w| w.split(','))
                    .filter(|w| !w.is_empty())
                    .map(str::to_owned)
                    .collect();
                current = Some(ServerBlock {
                    zones,
                    line: i + 1,
                    forward: None,
                    loop_plugin: false,
                });
                depth = 1;
            }
            0 => {}
            1 if closes => {
                blocks.extend(current.take());
                depth = 0;
            }
            1 => {
                let args: Vec<&str> = words.iter().copied().filter(|w| *w != "{").collect();
                if let Some(block) = current.as_mut() {
                    match args.first().copied() {
                        Some("loop") => block.loop_plugin = true,
                        Some("forward") if args.len() >= 3 => {
                            block.forward = Some(Forward {
                                from: args[1].to_owned(),
                                to: args[2..].iter().map(|s| (*s).to_owned()).collect(),
                                line: i + 1,
                            });
                        }
                        _ => {}
                    }
                }
                if opens {
                    depth += 1;
                }
            }
            _ if closes => depth -= 1,
            _ if opens => depth += 1,
            _ => {}
        }
    }
    blocks
}

/// `line` up to its comment, as CoreDNS's lexer reads it (coredns/caddy
/// `caddyfile/lexer.go`, `next`): a `#` outside a quoted token skips the rest of the line,
/// also in the middle of a word (`example.org#x` is `example.org`), while inside one it is
/// text. A token is quoted when it starts with `"`, and runs to the next `"` not escaped
/// with a backslash. Not followed here: a quoted token running on past the end of its
/// line, and a new quoted token right after a closing quote (`"a""# b"`).
fn uncommented(line: &str) -> &str {
    let (mut quoted, mut escaped, mut token_start) = (false, false, true);
    for (i, c) in line.char_indices() {
        if quoted {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => quoted = false,
                _ => {}
            }
            continue;
        }
        match c {
            '#' => return &line[..i],
            '"' if token_start => quoted = true,
            _ => {}
        }
        token_start = c.is_whitespace();
    }
    line
}

/// The root block's `forward .` set to other targets: the new Corefile text, and what
/// changed where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardEdit {
    pub text: String,
    /// 1-based line of the `forward` in the root block.
    pub line: usize,
    /// Its targets before.
    pub was: Vec<String>,
}

/// `text` with the `forward .` of its root block (`.:53`, `.`: where names outside the
/// cluster go) sent to `servers`, as Kubespray renders `upstream_dns_servers` there:
/// `forward . 192.0.2.53 198.51.100.53` (one space between the words, as Kubespray
/// writes them), the indentation and the rest of the line (an options block's `{`, a
/// comment) kept, and every other line byte for byte. `None` when it already forwards there.
/// The result is parsed again to prove nothing else moved.
pub fn set_root_forward(text: &str, servers: &[String]) -> Result<Option<ForwardEdit>, String> {
    let blocks = parse(text);
    let root = blocks
        .iter()
        .find(|b| b.is_root())
        .ok_or("the Corefile has no block for the root zone (`.:53`)")?;
    let forward = root
        .forward
        .as_ref()
        .filter(|f| f.from == ".")
        .ok_or_else(|| format!("the `.:53` block (line {}) has no `forward .`", root.line))?;
    if forward.to == servers {
        return Ok(None);
    }
    if servers.is_empty() || servers.iter().any(|s| !valid_target(s)) {
        return Err(format!(
            "not a list of DNS server addresses: {}",
            servers.join(" ")
        ));
    }
    let mut out = String::with_capacity(text.len() + 64);
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if i + 1 != forward.line {
            out.push_str(line);
            continue;
        }
        let start = line.find("forward").ok_or("the forward line moved")?;
        let after_from = {
            let rest = &line[start + "forward".len()..];
            let from = rest.trim_start();
            let skipped = rest.len() - from.len() + 1; // the `.`
            start + "forward".len() + skipped
        };
        let tail = &line[after_from..];
        let code = uncommented(tail);
        let end = code.find(['{', '\r', '\n']).unwrap_or(code.len());
        // Keep the space before `{` or `#` as it was.
        let kept = &tail[end..];
        let gap = if kept.is_empty() || kept.starts_with(['\r', '\n']) {
            ""
        } else {
            " "
        };
        out.push_str(&line[..after_from]);
        out.push(' ');
        out.push_str(&servers.join(" "));
        out.push_str(gap);
        out.push_str(kept);
    }
    let again = parse(&out);
    let moved = again.len() != blocks.len()
        || again.iter().zip(&blocks).any(|(a, b)| {
            let (fa, fb) = (a.forward.as_ref(), b.forward.as_ref());
            a.zones != b.zones
                || a.loop_plugin != b.loop_plugin
                || if std::ptr::eq(b, root) {
                    fa.map(|f| (&f.from, &f.to)) != Some((&".".to_owned(), &servers.to_vec()))
                } else {
                    fa != fb
                }
        });
    if moved {
        return Err(format!(
            "the `forward .` on line {} could not be changed alone: edit it by hand",
            forward.line
        ));
    }
    Ok(Some(ForwardEdit {
        text: out,
        line: forward.line,
        was: forward.to.clone(),
    }))
}

/// A server address CoreDNS's forward takes as plain DNS (`parse.HostPortOrFile`): an IP
/// address, or one with a port (`192.0.2.53:5353`, `[2001:db8::53]:53`), optionally
/// `dns://`. Anything else (a name, a typo) would stop every CoreDNS pod that reloads.
fn valid_target(s: &str) -> bool {
    let s = s.strip_prefix("dns://").unwrap_or(s);
    s.parse::<std::net::IpAddr>().is_ok() || s.parse::<std::net::SocketAddr>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::KUBEADM_COREFILE as KUBEADM;

    /// Kubespray's nodelocaldns ConfigMap (roles/kubernetes-apps/ansible/templates/
    /// nodelocaldns-config.yml.j2 at 46dbdd39, 2026-08-21) rendered with its defaults:
    /// nodelocaldns_ip 169.254.25.10, skydns_server 10.233.0.3, health port 9254,
    /// prometheus port 9253, upstream_dns_servers set to 192.0.2.53 198.51.100.53.
    const NODELOCALDNS: &str = "\
cluster.local:53 {
    errors
    cache {
        success 9984 30
        denial 9984 5
    }
    reload
    loop
    bind 169.254.25.10
    forward . 10.233.0.3 {
        force_tcp
    }
    prometheus :9253
    health 169.254.25.10:9254
}
in-addr.arpa:53 {
    errors
    cache 30
    reload
    loop
    bind 169.254.25.10
    forward . 10.233.0.3 {
        force_tcp
    }
    prometheus :9253
}
ip6.arpa:53 {
    errors
    cache 30
    reload
    loop
    bind 169.254.25.10
    forward . 10.233.0.3 {
        force_tcp
    }
    prometheus :9253
}
.:53 {
    errors
    cache 30
    reload
    loop
    bind 169.254.25.10
    forward . 192.0.2.53 198.51.100.53
    prometheus :9253
}
";

    #[test]
    fn kubeadm_corefile_forwards_to_the_pods_resolv_conf_with_loop_on() {
        let blocks = parse(KUBEADM);
        assert_eq!(blocks.len(), 1);
        let b = &blocks[0];
        assert_eq!(
            (b.zones.as_slice(), b.line, b.loop_plugin),
            (&[".:53".to_owned()][..], 1, true)
        );
        let f = b.forward.as_ref().expect("forward");
        assert_eq!(
            (f.from.as_str(), f.to.as_slice(), f.line),
            (".", &["/etc/resolv.conf".to_owned()][..], 13)
        );
        assert!(f.to_resolv_conf());
    }

    #[test]
    fn nodelocaldns_blocks_forward_cluster_zones_to_coredns_and_the_rest_upstream() {
        let blocks = parse(NODELOCALDNS);
        let summary: Vec<(&str, Vec<&str>, bool)> = blocks
            .iter()
            .map(|b| {
                (
                    b.zones[0].as_str(),
                    b.forward
                        .as_ref()
                        .map(|f| f.to.iter().map(String::as_str).collect())
                        .unwrap_or_default(),
                    b.loop_plugin,
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("cluster.local:53", vec!["10.233.0.3"], true),
                ("in-addr.arpa:53", vec!["10.233.0.3"], true),
                ("ip6.arpa:53", vec!["10.233.0.3"], true),
                (".:53", vec!["192.0.2.53", "198.51.100.53"], true),
            ]
        );
        assert_eq!(blocks[3].forward.as_ref().map(|f| f.line), Some(44));
        assert!(
            !blocks[3]
                .forward
                .as_ref()
                .is_some_and(Forward::to_resolv_conf)
        );
    }

    fn servers(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_root_forward_is_set_as_kubespray_renders_it_and_nothing_else_moves() {
        // kubeadm's: the options block's `{` stays, as Kubespray's coredns-config.yml.j2
        // renders `forward . {{ upstream_dns_servers | join(' ') }} {`.
        let edit = set_root_forward(KUBEADM, &servers(&["192.0.2.53", "198.51.100.53"]))
            .expect("edit")
            .expect("a change");
        assert_eq!(
            (edit.line, edit.was.as_slice()),
            (13, &["/etc/resolv.conf".to_owned()][..])
        );
        let want = KUBEADM.replace(
            "    forward . /etc/resolv.conf {\n",
            "    forward . 192.0.2.53 198.51.100.53 {\n",
        );
        assert_eq!(edit.text, want);
        // Already there: nothing to do.
        assert_eq!(
            set_root_forward(&want, &servers(&["192.0.2.53", "198.51.100.53"])),
            Ok(None)
        );
        // nodelocaldns: only the `.:53` block's forward, never the cluster zones'.
        let edit = set_root_forward(NODELOCALDNS, &servers(&["203.0.113.53"]))
            .expect("edit")
            .expect("a change");
        assert_eq!(
            edit.text,
            NODELOCALDNS.replace(
                "    forward . 192.0.2.53 198.51.100.53\n",
                "    forward . 203.0.113.53\n"
            )
        );
        assert_eq!(edit.line, 44);
        // A comment after the targets and CRLF line ends are kept.
        let crlf = ".:53 {\r\n  forward . /etc/resolv.conf # upstream\r\n  loop\r\n}\r\n";
        let edit = set_root_forward(crlf, &servers(&["192.0.2.53"])).expect("edit");
        assert_eq!(
            edit.map(|e| e.text).as_deref(),
            Some(".:53 {\r\n  forward . 192.0.2.53 # upstream\r\n  loop\r\n}\r\n")
        );
    }

    #[test]
    fn a_corefile_without_a_root_forward_or_with_odd_servers_is_refused() {
        let only_cluster = "cluster.local:53 {\n    forward . 10.233.0.3\n}\n";
        assert!(set_root_forward(only_cluster, &servers(&["192.0.2.53"])).is_err());
        let no_forward = ".:53 {\n    whoami\n}\n";
        assert!(set_root_forward(no_forward, &servers(&["192.0.2.53"])).is_err());
        for bad in [
            &[][..],
            &["192.0.2.53\n}"][..],
            &["a b"][..],
            &["dns.example"][..],
            &["8.8.8"][..],
            &["1.2.3.4.5"][..],
            &["/run/other/resolv.conf"][..],
        ] {
            assert!(
                set_root_forward(KUBEADM, &servers(bad)).is_err(),
                "{bad:?} accepted"
            );
        }
        for good in [
            &["2001:db8::53"][..],
            &["[2001:db8::53]:53", "192.0.2.53:5353"][..],
            &["dns://192.0.2.53"][..],
        ] {
            assert!(
                set_root_forward(KUBEADM, &servers(good)).is_ok(),
                "{good:?} refused"
            );
        }
        // CoreDNS's `dns://` server block prefix is the root zone too.
        let scheme = "dns://.:53 {\n    forward . /etc/resolv.conf\n}\n";
        assert_eq!(
            set_root_forward(scheme, &servers(&["192.0.2.53"]))
                .expect("edit")
                .map(|e| e.text)
                .as_deref(),
            Some("dns://.:53 {\n    forward . 192.0.2.53\n}\n")
        );
    }

    #[test]
    fn a_hash_starts_a_comment_where_corednss_lexer_says() {
        // coredns/caddy caddyfile/lexer.go: outside quotes a `#` ends the line, in the
        // middle of a word too; a quoted token (one that starts with `"`) keeps it, and
        // `\"` does not end it.
        for (line, code) in [
            ("forward . 10.0.0.1 # ours", "forward . 10.0.0.1 "),
            ("forward . 10.0.0.1#ours", "forward . 10.0.0.1"),
            ("log \"a # b\" # c", "log \"a # b\" "),
            ("log \"a \\\" # b\" # c", "log \"a \\\" # b\" "),
            ("log a\"b # c", "log a\"b "),
            ("# all", ""),
            ("loop", "loop"),
        ] {
            assert_eq!(uncommented(line), code, "{line}");
        }
        let blocks = parse(".:53 {\n  errors \"#\"\n  forward . 10.0.0.1#x\n  loop\n}\n");
        assert_eq!(
            blocks[0].forward.as_ref().map(|f| f.to.clone()),
            Some(vec!["10.0.0.1".to_owned()])
        );
        assert!(blocks[0].loop_plugin);
    }

    #[test]
    fn comments_several_zones_and_a_broken_file() {
        let blocks = parse(
            "# site\nexample.org example.net:53 { # two zones\n  forward . 10.0.0.1 # ours\n}\n.:53 {\n  loop\n",
        );
        assert_eq!(
            blocks.len(),
            1,
            "the unclosed block is not reported: {blocks:?}"
        );
        assert_eq!(blocks[0].zones, ["example.org", "example.net:53"]);
        assert!(!blocks[0].loop_plugin);
        assert_eq!(
            blocks[0].forward.as_ref().map(|f| f.to.clone()),
            Some(vec!["10.0.0.1".to_owned()])
        );
    }
}
