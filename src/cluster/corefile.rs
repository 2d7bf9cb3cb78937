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
        let line = raw.split('#').next().unwrap_or_default().trim();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// kubeadm's CoreDNS ConfigMap (kubernetes cmd/kubeadm/app/phases/addons/dns/
    /// manifests.go, CoreDNSConfigMap), rendered with DNSDomain cluster.local.
    const KUBEADM: &str = "\
.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30 {
       disable success cluster.local
       disable denial cluster.local
    }
    loop
    reload
    loadbalance
}
";

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
