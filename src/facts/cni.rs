//! The node's CNI network configuration, and whether pods sit on a Linux bridge: owns
//! [`Cni`]. Pure: it reads gathered files.
//!
//! Why it matters: `net.bridge.bridge-nf-call-iptables` only affects frames that cross a
//! Linux bridge. Where pod traffic is bridged (the `bridge` plugin, flannel, which delegates
//! to `bridge` on cni0, Weave's `weave` bridge, kubenet's cbr0), a missing br_netfilter lets
//! replies bypass the service NAT ("reply from unexpected source"). Where pods are wired
//! with routed veths (Calico, including Canal, whose pod plugin is `calico`; Cilium; the AWS
//! VPC CNI), nothing is bridged and the setting does not matter; the current Kubernetes
//! docs (container-runtimes.md) leave it to the network plugin.
//!
//! The configuration in effect is the first file of the directory, by name, ending in
//! `.conf`, `.conflist` or `.json` (libcni `ConfFiles`, as containerd and CRI-O load it);
//! Cilium renames the others to `*.cilium_bak`. k3s keeps its own directory.

use serde::Serialize;

use super::raw::{FileState, RawFacts, RawFile};

/// The directories read, in the order they are tried: k3s's own first (on a k3s node its
/// containerd reads only that one, and /etc/cni/net.d may hold leftovers).
pub const CNI_DIRS: &[&str] = &["/var/lib/rancher/k3s/agent/etc/cni/net.d", "/etc/cni/net.d"];

/// Plugin types that put pods on a Linux bridge. flannel delegates to `bridge` unless its
/// `delegate` names another type (flannel-io/cni-plugin flannel_linux.go).
const BRIDGED: &[&str] = &["bridge", "weave-net"];
/// Main plugin types that wire pods with routed veths and no bridge: calico (projectcalico
/// cni-plugin; Canal's conflist uses it too), cilium-cni, aws-cni (amazon-vpc-cni-k8s).
const ROUTED: &[&str] = &["calico", "cilium-cni", "aws-cni"];

/// Whether pods sit on a Linux bridge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "why", rename_all = "snake_case")]
pub enum PodBridge {
    Bridged(String),
    Routed(String),
    Unknown(String),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cni {
    /// The configuration file in effect.
    pub config: Option<String>,
    /// Its network name.
    pub network: Option<String>,
    /// Plugin types in chain order (flannel's delegate shown as `flannel>bridge`).
    pub plugins: Vec<String>,
    pub pod_bridge: PodBridge,
    /// Why the plugin turns IPv4 forwarding on whenever it wires a pod, where it does: the
    /// `bridge` plugin as the pods' gateway (`isGateway`, or `isDefaultGateway`, which
    /// implies it) calls enableIPForward for each pod it adds (containernetworking/plugins
    /// plugins/main/bridge), and flannel hands it `isGateway: true` unless its delegate
    /// says otherwise (flannel-io/cni-plugin doCmdAdd).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forwards: Option<String>,
}

impl Cni {
    pub fn from_raw(raw: &RawFacts) -> Cni {
        let mut unreadable = Vec::new();
        for dir in CNI_DIRS {
            let mut files: Vec<(&str, &RawFile)> = raw
                .files_in(dir)
                .filter(|(p, _)| {
                    [".conf", ".conflist", ".json"]
                        .iter()
                        .any(|ext| p.ends_with(ext))
                })
                .collect();
            files.sort_by_key(|(p, _)| *p);
            for (path, file) in files {
                if file.state != FileState::Present {
                    continue;
                }
                let Some(text) = file.text() else {
                    unreadable.push(path.to_owned());
                    continue;
                };
                // libcni skips a file that does not parse and tries the next.
                let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
                    unreadable.push(path.to_owned());
                    continue;
                };
                // libcni also skips a file with no plugin type.
                let typed = json["type"].is_string()
                    || json["plugins"]
                        .as_array()
                        .is_some_and(|p| p.iter().any(|x| x["type"].is_string()));
                if !typed {
                    unreadable.push(path.to_owned());
                    continue;
                }
                return Cni::from_config(path, &json);
            }
        }
        let why = if unreadable.is_empty() {
            format!("no CNI configuration in {}", CNI_DIRS.join(" or "))
        } else {
            format!("no CNI configuration parses ({})", unreadable.join(", "))
        };
        Cni {
            config: None,
            network: None,
            plugins: Vec::new(),
            pod_bridge: PodBridge::Unknown(why),
            forwards: None,
        }
    }

    fn from_config(path: &str, json: &serde_json::Value) -> Cni {
        let network = json["name"].as_str().map(str::to_owned);
        // A .conflist has `plugins`; a .conf is one plugin.
        let plugins: Vec<&serde_json::Value> = match json["plugins"].as_array() {
            Some(list) => list.iter().collect(),
            None => vec![json],
        };
        let mut types = Vec::new();
        let mut bridged = None;
        let mut forwards = None;
        // The bridge plugin's gateway settings: `isDefaultGateway` implies `isGateway`.
        let gateway = |conf: &serde_json::Value, default: bool| {
            conf["isDefaultGateway"].as_bool() == Some(true)
                || conf["isGateway"].as_bool().unwrap_or(default)
        };
        for plugin in &plugins {
            let Some(kind) = plugin["type"].as_str() else {
                continue;
            };
            if kind == "flannel" {
                let delegate = plugin["delegate"]["type"].as_str().unwrap_or("bridge");
                if delegate == "bridge" && gateway(&plugin["delegate"], true) {
                    forwards.get_or_insert(format!(
                        "{path}: flannel's bridge plugin is the pods' gateway and turns IPv4 forwarding on for every pod it adds"
                    ));
                }
                types.push(format!("flannel>{delegate}"));
                if delegate == "bridge" && bridged.is_none() {
                    bridged = Some(format!(
                        "{path}: flannel delegates to the bridge plugin (cni0)"
                    ));
                }
                continue;
            }
            types.push(kind.to_owned());
            if kind == "bridge" && gateway(plugin, false) {
                forwards.get_or_insert(format!(
                    "{path}: the bridge plugin is the pods' gateway (isGateway) and turns IPv4 forwarding on for every pod it adds"
                ));
            }
            if BRIDGED.contains(&kind) && bridged.is_none() {
                let device = plugin["bridge"].as_str().unwrap_or(match kind {
                    "weave-net" => "weave",
                    _ => "cni0",
                });
                bridged = Some(format!(
                    "{path}: plugin {kind} puts pods on bridge {device}"
                ));
            }
        }
        let pod_bridge = match (bridged, types.first()) {
            (Some(why), _) => PodBridge::Bridged(why),
            (None, Some(main)) if ROUTED.contains(&main.as_str()) => PodBridge::Routed(format!(
                "{path}: plugin {main} wires pods with routed veths, no Linux bridge"
            )),
            (None, Some(main)) => PodBridge::Unknown(format!(
                "{path}: plugin {main} is not one dnsfix knows to be bridged or routed"
            )),
            (None, None) => PodBridge::Unknown(format!("{path}: no plugin type")),
        };
        Cni {
            config: Some(path.to_owned()),
            network,
            plugins: types,
            pod_bridge,
            forwards,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cni(files: &[(&str, &str)]) -> Cni {
        let raw = crate::testing::raw_from(files);
        Cni::from_raw(&raw)
    }

    /// flannel-io/flannel Documentation/kube-flannel.yml `cni-conf.json`, verbatim.
    const FLANNEL: &str = r#"{
  "name": "cbr0",
  "cniVersion": "0.3.1",
  "plugins": [
    {
      "type": "flannel",
      "delegate": {
        "hairpinMode": true,
        "isDefaultGateway": true
      }
    },
    {
      "type": "portmap",
      "capabilities": {
        "portMappings": true
      }
    }
  ]
}"#;

    /// The bridge plugin as the pods' gateway turns forwarding on for every pod it adds:
    /// flannel's delegate is that unless it says `isGateway: false` (kube-flannel.yml's
    /// `isDefaultGateway: true` implies it anyway); a plain bridge only with the setting.
    #[test]
    fn a_gateway_bridge_turns_forwarding_on() {
        let forwards = |text: &str| cni(&[("/etc/cni/net.d/10-x.conflist", text)]).forwards;
        assert!(forwards(FLANNEL).is_some());
        assert!(
            forwards(
                r#"{"name":"cbr0","plugins":[{"type":"flannel","delegate":{"isGateway":false}}]}"#
            )
            .is_none()
        );
        assert!(
            forwards(
                r#"{"name":"b","plugins":[{"type":"bridge","bridge":"cni0","isGateway":true}]}"#
            )
            .is_some()
        );
        assert!(
            forwards(r#"{"name":"b","plugins":[{"type":"bridge","bridge":"cni0"}]}"#).is_none()
        );
    }

    #[test]
    fn the_first_file_by_name_decides() {
        let c = cni(&[
            ("/etc/cni/net.d/10-flannel.conflist", FLANNEL),
            (
                "/etc/cni/net.d/05-cilium.conflist",
                r#"{"cniVersion":"0.3.1","name":"cilium","plugins":[{"type":"cilium-cni","enable-debug":false}]}"#,
            ),
            ("/etc/cni/net.d/00-broken.conf", "{ not json"),
            ("/etc/cni/net.d/01-old.cilium_bak", FLANNEL),
        ]);
        assert_eq!(
            c.config.as_deref(),
            Some("/etc/cni/net.d/05-cilium.conflist")
        );
        assert!(matches!(c.pod_bridge, PodBridge::Routed(_)), "{c:?}");
    }

    #[test]
    fn flannel_is_bridged_and_unknown_plugins_are_unknown() {
        let c = cni(&[("/etc/cni/net.d/10-flannel.conflist", FLANNEL)]);
        assert_eq!(c.plugins, ["flannel>bridge", "portmap"]);
        assert!(matches!(&c.pod_bridge, PodBridge::Bridged(w) if w.contains("cni0")));
        let c = cni(&[(
            "/etc/cni/net.d/10-x.conf",
            r#"{"cniVersion":"0.4.0","name":"x","type":"ovs"}"#,
        )]);
        assert!(matches!(c.pod_bridge, PodBridge::Unknown(_)));
        let c = cni(&[]);
        assert!(
            matches!(&c.pod_bridge, PodBridge::Unknown(w) if w.contains("no CNI configuration"))
        );
    }
}
