//! The node's CNI network configuration, and whether pods sit on a Linux bridge: owns
//! [`Cni`]. Pure: it reads gathered files.
//!
//! Why it matters: `net.bridge.bridge-nf-call-iptables` only affects frames that cross a
//! Linux bridge. Where pod traffic is bridged (the `bridge` plugin, flannel, which delegates
//! to `bridge` on cni0, Weave's `weave` bridge, kubenet's cbr0), a missing br_netfilter lets
//! replies bypass the service NAT ("reply from unexpected source"). Where pods are wired
//! with routed veths (Calico, including Canal, whose pod plugin is `calico`; Cilium; the AWS
//! VPC CNI; Azure CNI in transparent mode, but not in its bridge mode), nothing is bridged
//! and the setting does not matter; the current Kubernetes docs (container-runtimes.md)
//! leave it to the network plugin.
//!
//! The configuration in effect is the first file of the directory, by name, ending in
//! `.conf`, `.conflist` or `.json` (libcni `ConfFiles`, as containerd and CRI-O load it),
//! that libcni accepts (CRI-O's, where its `cni_default_network` names one, the first
//! such file with that network name: [`CrioNetwork`]); Cilium renames the others to
//! `*.cilium_bak`. k3s keeps its own directory. A file libcni refuses sorting before it is
//! skipped by CRI-O and cri-dockerd, but stops containerd, which then gives no pod a
//! network ([`Cni::refused`]).

use serde::Serialize;

use super::crio_config::CrioNetwork;
use super::raw::{FileState, RawFacts, RawFile};

/// The directories read, in the order they are tried: k3s's own first (on a k3s node its
/// containerd reads only that one, and /etc/cni/net.d may hold leftovers).
pub const CNI_DIRS: &[&str] = &["/var/lib/rancher/k3s/agent/etc/cni/net.d", "/etc/cni/net.d"];

/// Plugin types that put pods on a Linux bridge. flannel delegates to `bridge` unless its
/// `delegate` names another type (flannel-io/cni-plugin flannel_linux.go).
const BRIDGED: &[&str] = &["bridge", "weave-net"];
/// Main plugin types that wire pods with routed veths and no bridge: calico (projectcalico
/// cni-plugin; Canal's conflist uses it too), cilium-cni, aws-cni (amazon-vpc-cni-k8s),
/// ptp (containernetworking/plugins plugins/main/ptp: a veth pair and host routes; kindnet's
/// conflist uses it).
const ROUTED: &[&str] = &["calico", "cilium-cni", "aws-cni", "ptp"];
/// Main plugin types that put pods on an Open vSwitch bridge (br-int), whose datapath
/// bridge netfilter, a hook of the Linux bridge, never sees: antrea (build/charts/antrea/
/// conf/antrea-cni.conflist), kube-ovn (dist/images/01-kube-ovn.conflist), OVN-Kubernetes
/// (ovn-org/ovn-kubernetes go-controller/pkg/config/cni.go WriteCNIConfig: type
/// `CNI.Plugin`, ovn-k8s-cni-overlay by default, in /etc/cni/net.d/10-ovn-kubernetes.conf),
/// ovs-cni (k8snetworkplumbingwg/ovs-cni @d6d1f17b docs/cni-plugin.md: type `ovs`, the
/// pod's veth a port of the Open vSwitch bridge its `bridge` names).
const OVS: &[&str] = &["antrea", "kube-ovn", "ovn-k8s-cni-overlay", "ovs"];
/// Main plugin types that give each pod a macvlan or ipvlan device of a host interface
/// (containernetworking/plugins plugins/main/macvlan and ipvlan; Kubespray's macvlan
/// network plugin, roles/network_plugin/macvlan/templates/10-macvlan.conf.j2): the
/// driver switches frames between the pods of one parent itself (drivers/net/macvlan.c,
/// bridge mode, the plugin's default), no Linux bridge, so bridge netfilter, a hook of the
/// Linux bridge (net/bridge/br_netfilter_hooks.c), never sees them and turning it on
/// changes nothing.
const VLAN_DEVICES: &[&str] = &["macvlan", "ipvlan"];
/// Main plugin types that move a device of the node into the pod's network namespace:
/// host-device (containernetworking/plugins @3d27709f plugins/main/host-device/
/// host-device.go moveLinkIn: `netlink.LinkSetNsFd` of the named link), sriov (k8snetworkplumbingwg/
/// sriov-cni @b448389f pkg/sriov/sriov.go SetupVF: the VF netdevice moved into the pod's
/// namespace). The pod's frames leave through that device, switched by the NIC, never by
/// a Linux bridge of the node.
const MOVED_DEVICES: &[&str] = &["host-device", "sriov"];

/// How Azure CNI (`azure-vnet`) wires pods, from its `mode` (Azure/azure-container-
/// networking @cbd7560c network/network.go: `bridge`, `tunnel`, `transparent`,
/// `transparent-vlan`, `tunnel` where none is given; network/network_linux.go
/// newNetworkImpl refuses any other). `transparent`, the mode of its shipped
/// cni/azure-linux.conflist since ac1e600b (2020) and of AKS's conflists, gives each pod a
/// veth and a host route to it (network/transparent_endpointclient_linux.go
/// AddEndpointRules: `ip route add <podip> dev <hostveth>`); `transparent-vlan` a VLAN
/// interface in a namespace of its own, routed the same way. `bridge` and `tunnel`
/// put the node's interface and the pods' veths on a Linux bridge, `bridge` from the
/// conflist or `azure` and the interface's index (connectExternalInterface,
/// NewLinuxBridgeClient; the OVS client only with a multitenancy VLAN).
///
/// azure-vnet decodes its configuration with encoding/json (cni/netconfig.go
/// ParseNetworkConfig: `json.Unmarshal` into NetworkConfig, `json:"mode"`): a key equal to
/// `mode` but for case sets it too, and of several the last in the file wins. dnsfix's
/// JSON keeps no order of keys, so where the spellings give different modes and one of
/// them puts pods on a bridge, bridged is taken: it is never judged less than it may be.
fn azure_vnet(path: &str, plugin: &serde_json::Value) -> PodBridge {
    let modes = go_fields(plugin, "mode");
    let judged: Vec<PodBridge> = match modes.as_slice() {
        [] => vec![azure_vnet_mode(path, plugin, "")],
        _ => modes
            .iter()
            .map(|m| azure_vnet_mode(path, plugin, m.as_str().unwrap_or_default()))
            .collect(),
    };
    let first = judged[0].clone();
    if judged.iter().all(|j| *j == first) {
        return first;
    }
    let spelt = format!(
        "{path}: azure-vnet's mode is spelt more than once with different values ({}), of which Azure CNI takes the last in the file",
        modes
            .iter()
            .map(|m| m.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    match judged.iter().find(|j| matches!(j, PodBridge::Bridged(_))) {
        Some(PodBridge::Bridged(why)) => {
            PodBridge::Bridged(format!("{spelt}: taken as bridged, as {why}"))
        }
        _ => PodBridge::Unknown(spelt),
    }
}

/// The values of every key of `v` equal to `key` but for case, nulls left out (they set
/// nothing): the keys encoding/json decodes into the struct field `key`.
fn go_fields<'a>(v: &'a serde_json::Value, key: &str) -> Vec<&'a serde_json::Value> {
    v.as_object().map_or_else(Vec::new, |map| {
        map.iter()
            .filter(|(k, x)| k.eq_ignore_ascii_case(key) && !x.is_null())
            .map(|(_, x)| x)
            .collect()
    })
}

/// How azure-vnet wires pods in `mode` ([`azure_vnet`]).
fn azure_vnet_mode(path: &str, plugin: &serde_json::Value, mode: &str) -> PodBridge {
    match mode {
        "transparent" | "transparent-vlan" => PodBridge::Routed(format!(
            "{path}: plugin azure-vnet in {mode} mode wires pods with routed veths, no Linux bridge"
        )),
        "bridge" | "tunnel" | "" => PodBridge::Bridged(format!(
            "{path}: plugin azure-vnet in {} mode puts pods on bridge {}",
            if mode.is_empty() {
                "tunnel (its default)"
            } else {
                mode
            },
            go_fields(plugin, "bridge")
                .first()
                .and_then(|b| b.as_str())
                .unwrap_or("azure<N> (azure and the host interface's index)")
        )),
        other => PodBridge::Unknown(format!(
            "{path}: plugin azure-vnet in a mode dnsfix does not know ({other:?})"
        )),
    }
}

/// Plugin types whose node agent turns forwarding on (IPv4, and IPv6 where the cluster has
/// it) whenever it starts, which it does at every boot: a node with one of them in its
/// chain does not need a sysctl file for it.
const AGENT_FORWARDS: &[(&str, &str)] = &[
    // felix/dataplane/linux/int_dataplane.go configureKernel, called from Start: `if
    // d.config.IPForwarding == "Enabled"` (the default; unconditional before 3.29) it
    // writes /proc/sys/net/ipv4/ip_forward, and IPv6's where IPv6 is enabled. Canal runs
    // the same felix.
    (
        "calico",
        "Calico's felix (calico-node) turns forwarding on whenever it starts, unless its FelixConfiguration sets ipForwarding: Disabled",
    ),
    // The agent's enableIPForwarding at start (daemon/cmd, later pkg/datapath/iptables):
    // net.ipv4.ip_forward, and net.ipv6.conf.all.forwarding with IPv6; in chaining mode
    // too.
    (
        "cilium-cni",
        "the Cilium agent turns forwarding on whenever it starts",
    ),
    // pkg/agent/route/route_linux.go Initialize: EnsureSysctlNetValue("ipv4/ip_forward",
    // 1) where the node has an IPv4 address, IPv6's where it has an IPv6 one (since
    // antrea-io/antrea 0204fbc3, in 1.15.0; an older agent does not).
    (
        "antrea",
        "the Antrea agent turns forwarding on whenever it starts (Antrea 1.15 and later)",
    ),
    // dist/images/install-cni.sh, kube-ovn-cni's init container: `echo 1 >
    // /proc/sys/net/ipv4/ip_forward` for an IPv4 pod address, IPv6's for an IPv6 one.
    (
        "kube-ovn",
        "kube-ovn-cni turns forwarding on whenever it starts (install-cni.sh)",
    ),
];

/// The bridge plugin's gateway settings: `isDefaultGateway` implies `isGateway`.
fn gateway(conf: &serde_json::Value, default: bool) -> bool {
    conf["isDefaultGateway"].as_bool() == Some(true)
        || conf["isGateway"].as_bool().unwrap_or(default)
}

/// The bridge plugin's bridge: its `bridge`, `cni0` where unset (plugins/main/bridge
/// bridge.go `defaultBrName`).
fn bridge_name(conf: &serde_json::Value) -> String {
    conf["bridge"]
        .as_str()
        .filter(|b| !b.is_empty())
        .unwrap_or("cni0")
        .to_owned()
}

/// Why a main plugin turns forwarding on for every pod it adds, where it does: the bridge
/// plugin as the pods' gateway (bridge.go, `isGateway`), ptp always (ptp.go cmdAdd:
/// ip.EnableForward).
fn forwards_per_pod(kind: &str, plugin: &serde_json::Value) -> Option<&'static str> {
    match kind {
        "bridge" if gateway(plugin, false) => Some(
            "the bridge plugin is the pods' gateway (isGateway) and turns forwarding on for every pod it adds",
        ),
        "ptp" => Some("the ptp plugin turns forwarding on for every pod it adds"),
        _ => None,
    }
}

/// Whether pods sit on a Linux bridge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "why", rename_all = "snake_case")]
pub enum PodBridge {
    Bridged(String),
    /// No Linux bridge: routed veths, an Open vSwitch bridge, macvlan or ipvlan devices.
    Routed(String),
    Unknown(String),
}

impl PodBridge {
    /// The same judgement, its why followed by what chose the file.
    pub(crate) fn because(self, chosen: &str) -> PodBridge {
        match self {
            PodBridge::Bridged(why) => PodBridge::Bridged(format!("{why}; {chosen}")),
            PodBridge::Routed(why) => PodBridge::Routed(format!("{why}; {chosen}")),
            PodBridge::Unknown(why) => PodBridge::Unknown(format!("{why}; {chosen}")),
        }
    }
}

/// The name a runtime knows a CNI file's network by: its `name`, or the file's own name
/// where that is empty (ocicni `loadNetworks`: `path.Base(confFile)`).
fn network_name<'a>(path: &'a str, json: &'a serde_json::Value) -> &'a str {
    json["name"]
        .as_str()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| path.rsplit('/').next().unwrap_or(path))
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
    /// Why the network plugin turns forwarding on by itself, where it does: the `bridge`
    /// plugin as the pods' gateway (`isGateway`, or `isDefaultGateway`, which implies it)
    /// calls enableIPForward, for the families of its gateways, for each pod it adds
    /// (containernetworking/plugins plugins/main/bridge), and flannel hands it `isGateway:
    /// true` unless its delegate says otherwise (flannel-io/cni-plugin doCmdAdd); the
    /// agents of [`AGENT_FORWARDS`] whenever they start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forwards: Option<String>,
    /// Why the network plugin turns IPv6 forwarding on (and not IPv4's) whenever it starts,
    /// where it does: the AWS VPC CNI's init container in an IPv6 cluster, or with IPv6
    /// egress (cmd/aws-vpc-cni-init configureIPv6Settings: `ENABLE_IPv6 ||
    /// ENABLE_V6_EGRESS`), which its conflist shows in its `egress-cni` plugin
    /// (cmd/aws-vpc-cni: an IPv4 egress subnet, 169.254.172.0/22, in an IPv6 cluster; an
    /// IPv6 one, fd00::ac:00/118, with `enabled: "true"` for IPv6 egress).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forwards_ipv6: Option<String>,
    /// The Linux bridge that is the pods' gateway, where the bridge plugin makes one (its
    /// `bridge`, `cni0` where unset; flannel's delegate's too): the pods' traffic to other
    /// nodes enters the node by it. The plugin makes it when it adds the first pod after
    /// the boot and writes only `net.ipv4.ip_forward` (containernetworking/plugins
    /// pkg/ip/ipforward_linux.go `EnableIP4Forward`, left alone where it reads 1), so the
    /// bridge's own forwarding is the kernel's default's then
    /// (sysctl::DEFAULT_FORWARDING).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gateway_bridge: Option<String>,
    /// The network agent that loads br_netfilter and turns bridge netfilter on whenever it
    /// starts, before it wires any pod, where there is one: see [`BridgeNfAgent`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bridge_nf_agent: Option<BridgeNfAgent>,
    /// The files of the directory the runtime reads that sort before the one in effect (all
    /// of them where none is) and that libcni refuses. CRI-O (ocicni `loadNetworks`) and
    /// cri-dockerd (`getDefaultCNINetwork`) log each and go on to the next; containerd's CRI
    /// plugin (go-cni `loadFromConfDir`, reached through `WithDefaultConf`) stops at the
    /// first with an error and keeps no network at all.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<Refused>,
    /// A file of that directory, before any libcni accepts, that dnsfix could not read:
    /// whether the runtime loads it is unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unread: Option<String>,
    /// The files of the runtime's directory that libcni accepts and that sort after the one
    /// in effect: the runtime never loads them (containerd and CRI-O take the first), so a
    /// network plugin whose file sorts after another's, a former plugin's left behind,
    /// gives pods no network of its own.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub later: Vec<LaterConfig>,
    /// Why the runtime may give pods another network than the file in effect, where it may:
    /// CRI-O's settings name one in a way dnsfix does not read ([`Cni::crio_unknown`]).
    /// The file's plugins and forwarding are still what the files say; only whether pods
    /// sit on a bridge is not known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime_unknown: Option<String>,
}

/// A CNI configuration file the runtime passes over for the one in effect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LaterConfig {
    pub path: String,
    /// Its main plugin's type (a Multus file's delegate's), where it has one.
    pub plugin: Option<String>,
}

/// Where CRI-O's settings name its network in a way dnsfix does not read
/// ([`Cni::runtime_unknown`]), what a judgement that the node runs Cilium (a
/// `cilium-cni` among [`Cni::plugins`], those of the first file by name) must add: the
/// file may be a former plugin's left behind, and CRI-O may give pods another network.
/// Empty otherwise.
pub fn cilium_caveat(cni: &Cni) -> String {
    match &cni.runtime_unknown {
        Some(why) => format!(
            ", if Cilium's is the network CRI-O gives pods, which is not known ({why}; {} is only the first CNI file by name)",
            cni.config.as_deref().map_or_else(
                || "its file".into(),
                |c| crate::text::escape(c).into_owned()
            )
        ),
        None => String::new(),
    }
}

/// The main plugin of a chain as [`Cni::plugins`] lists it: the first, or Multus's
/// delegate's, `flannel` for flannel's delegation.
pub fn main_plugin(plugins: &[String]) -> Option<&str> {
    plugins
        .iter()
        .find(|p| *p != "multus")
        .map(|p| p.split('>').next().unwrap_or(p))
}

/// A CNI configuration file libcni refuses, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refused {
    pub path: String,
    pub why: String,
}

impl Refused {
    /// The directory the file is in.
    pub fn dir(&self) -> &str {
        dir_of(&self.path)
    }
}

/// The directory a configuration file's path is in.
pub fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.why)
    }
}

/// A network agent that sets bridge netfilter itself at every start: Weave's init
/// container (prog/weave-kube/init.sh: `modprobe br_netfilter` unless EXPECT_NPC=0, which
/// goes with no weave-npc, then `echo 1 > .../bridge-nf-call-iptables` where the module is
/// there; ip6tables left alone), kube-router's route
/// controller (pkg/controllers/routing/network_routes_controller.go Run: `modprobe
/// br_netfilter`, bridge-nf-call-iptables, and -ip6tables on a node with IPv6), whose pods
/// sit on its `kube-bridge`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BridgeNfAgent {
    /// Who, for messages: "Weave", "kube-router".
    pub name: &'static str,
    /// The sysctl keys it sets to 1.
    pub keys: Vec<&'static str>,
    pub why: String,
}

/// The files of `files` (of `dir`, in name order) that libcni accepts, with their main
/// plugin.
fn accepted(raw: &RawFacts, dir: &str, files: &[(&str, &RawFile)]) -> Vec<LaterConfig> {
    files
        .iter()
        .filter(|(_, file)| file.state == FileState::Present && !file.truncated)
        .filter_map(|&(path, file)| {
            let json: serde_json::Value =
                serde_json::from_str(&String::from_utf8_lossy(&file.content)).ok()?;
            if libcni_refuses(path, &json).is_some() {
                return None;
            }
            let plugins = match multus_delegate(raw, dir, path, &json) {
                Some(Ok((label, delegate))) => Cni::from_config(&label, &delegate).plugins,
                Some(Err(_)) => Vec::new(),
                None => Cni::from_config(path, &json).plugins,
            };
            Some(LaterConfig {
                path: path.to_owned(),
                plugin: main_plugin(&plugins).map(str::to_owned),
            })
        })
        .collect()
}

impl Cni {
    pub fn from_raw(raw: &RawFacts) -> Cni {
        Cni::for_runtime(raw, None)
    }

    /// [`Cni::from_raw`] where the runtime is CRI-O: its `cni_default_network`, where set,
    /// picks the network by name instead of the first file ([`CrioNetwork`]).
    pub fn for_runtime(raw: &RawFacts, crio: Option<&CrioNetwork>) -> Cni {
        let mut refused = Vec::new();
        let (dirs, runtime_dir) = directories(raw);
        for dir in &dirs {
            let mut files: Vec<(&str, &RawFile)> = raw
                .files_in(dir)
                .filter(|(p, _)| {
                    [".conf", ".conflist", ".json"]
                        .iter()
                        .any(|ext| p.ends_with(ext))
                })
                .collect();
            files.sort_by_key(|(p, _)| *p);
            let runtime_reads = Some(dir) == runtime_dir.as_ref();
            for (index, &(path, file)) in files.iter().enumerate() {
                let json = match file.state {
                    // Cut at the gather's limit: what it holds is not known.
                    FileState::Present if file.truncated => {
                        let mut cni =
                            Cni::unknown(format!("{path} is too large to read whole"), refused);
                        cni.unread = runtime_reads.then(|| path.to_owned());
                        return cni;
                    }
                    FileState::Present => {
                        let text = String::from_utf8_lossy(&file.content);
                        serde_json::from_str::<serde_json::Value>(&text)
                            .map_err(|e| format!("not JSON ({e})"))
                            .and_then(|json| match libcni_refuses(path, &json) {
                                Some(why) => Err(why),
                                None => Ok(json),
                            })
                    }
                    // ConfFiles lists a link whatever it leads to; reading it fails.
                    FileState::Missing if file.symlink_target.is_some() => {
                        Err("a symlink to nothing".to_owned())
                    }
                    FileState::Directory if file.symlink_target.is_some() => {
                        Err("a symlink to a directory".to_owned())
                    }
                    // A directory is not listed; a file gone since the listing is not there.
                    FileState::Missing | FileState::Directory => continue,
                    FileState::Unreadable => {
                        let mut cni = Cni::unknown(format!("{path} could not be read"), refused);
                        cni.unread = runtime_reads.then(|| path.to_owned());
                        return cni;
                    }
                };
                let json = match json {
                    Ok(json) => json,
                    Err(why) => {
                        if runtime_reads {
                            refused.push(Refused {
                                path: path.to_owned(),
                                why,
                            });
                        }
                        continue;
                    }
                };
                let picked = crio.filter(|_| runtime_reads);
                if picked.is_some_and(|c| network_name(path, &json) != c.default_network) {
                    continue;
                }
                let mut cni = match multus_delegate(raw, dir, path, &json) {
                    Some(Ok((label, delegate))) => {
                        let mut cni = Cni::from_config(&label, &delegate);
                        cni.config = Some(path.to_owned());
                        cni.plugins.insert(0, "multus".to_owned());
                        cni
                    }
                    Some(Err(why)) => Cni {
                        config: Some(path.to_owned()),
                        network: json["name"].as_str().map(str::to_owned),
                        plugins: vec!["multus".to_owned()],
                        ..Cni::unknown(why, Vec::new())
                    },
                    None => Cni::from_config(path, &json),
                };
                cni.refused = refused;
                if let Some(crio) = picked {
                    // Picked by name: the order of the files decides nothing.
                    cni.pod_bridge = cni.pod_bridge.because(&format!(
                        "the network CRI-O's cni_default_network names ({})",
                        crio.at
                    ));
                } else if runtime_reads {
                    cni.later = accepted(raw, dir, &files[index + 1..]);
                }
                return cni;
            }
            if let Some(crio) = crio.filter(|_| Some(dir) == runtime_dir.as_ref()) {
                // Only CRI-O's own directory (network_dir, checked with the setting) says
                // that no file has the name; the runtime's directory found is another
                // where MicroK8s's or k3s's own is there.
                let own = dir == CNI_DIRS[1];
                return Cni::unknown(
                    format!(
                        "CRI-O's cni_default_network ({}) names {:?}, which no CNI file of {dir} that loads is: {}",
                        crio.at,
                        crio.default_network,
                        if own {
                            "CRI-O gives new pods no network"
                        } else {
                            "CRI-O reads /etc/cni/net.d, which dnsfix did not read here: which network it gives pods is not known"
                        }
                    ),
                    refused,
                );
            }
        }
        let why = if refused.is_empty() {
            format!("no CNI configuration in {}", dirs.join(" or "))
        } else {
            let paths: Vec<&str> = refused.iter().map(|r| r.path.as_str()).collect();
            format!("no CNI configuration parses ({})", paths.join(", "))
        };
        Cni::unknown(why, refused)
    }

    /// The network of a CRI-O node whose settings do not say, in a way dnsfix reads,
    /// which network of /etc/cni/net.d CRI-O picks (`why`:
    /// [`super::crio_config::CrioUnknown::Name`]), from the network its files give: the plugins,
    /// forwarding and refused files stay as read (the Cilium and forwarding judgements need
    /// them, and the files are the likeliest network); whether pods sit on a bridge becomes
    /// not known, with why, and so do the files passed over.
    pub fn crio_unknown(mut self, why: String) -> Cni {
        let unknown = format!("{why}: which CNI network CRI-O gives pods is not known");
        self.pod_bridge = match self.pod_bridge {
            PodBridge::Unknown(files) => PodBridge::Unknown(format!("{files}; {unknown}")),
            _ => PodBridge::Unknown(unknown),
        };
        self.later.clear();
        self.runtime_unknown = Some(why);
        self
    }

    /// The network of a CRI-O node whose settings may make it read its CNI files from
    /// another directory than /etc/cni/net.d (`network_dir`, `--cni-config-dir`, or a
    /// configuration dnsfix does not read: [`super::crio_config::CrioUnknown::Directory`]):
    /// not known, with why, and nothing of /etc/cni/net.d's files, which CRI-O may never
    /// read.
    pub fn crio_elsewhere(why: String) -> Cni {
        Cni::unknown(
            format!("{why}: which CNI network CRI-O gives pods is not known"),
            Vec::new(),
        )
    }

    /// No configuration in effect that dnsfix can judge, with why.
    fn unknown(why: String, refused: Vec<Refused>) -> Cni {
        Cni {
            config: None,
            network: None,
            plugins: Vec::new(),
            pod_bridge: PodBridge::Unknown(why),
            forwards: None,
            forwards_ipv6: None,
            gateway_bridge: None,
            bridge_nf_agent: None,
            refused,
            unread: None,
            later: Vec::new(),
            runtime_unknown: None,
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
        let mut gateway_bridge = None;
        for plugin in &plugins {
            let Some(kind) = plugin["type"].as_str() else {
                continue;
            };
            if kind == "flannel" {
                let delegate = plugin["delegate"]["type"].as_str().unwrap_or("bridge");
                if delegate == "bridge" && gateway(&plugin["delegate"], true) {
                    gateway_bridge.get_or_insert_with(|| bridge_name(&plugin["delegate"]));
                    forwards.get_or_insert(format!(
                        "{path}: flannel's bridge plugin is the pods' gateway and turns forwarding on for every pod it adds"
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
            if let Some((_, agent)) = AGENT_FORWARDS.iter().find(|(t, _)| *t == kind) {
                forwards.get_or_insert(format!("{path}: {agent}"));
            }
            if let Some(why) = forwards_per_pod(kind, plugin) {
                forwards.get_or_insert(format!("{path}: {why}"));
            }
            if kind == "bridge" && gateway(plugin, false) {
                gateway_bridge.get_or_insert_with(|| bridge_name(plugin));
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
        let pod_bridge = pod_bridge(path, bridged, &types, &plugins);
        let iptables = "net.bridge.bridge-nf-call-iptables";
        let bridge_nf_agent = match (types.first().map(String::as_str), plugins.first()) {
            (Some("weave-net"), _) => Some(BridgeNfAgent {
                name: "Weave",
                keys: vec![iptables],
                why: format!(
                    "{path}: Weave's init container loads br_netfilter and sets {iptables} to 1 whenever it starts, before Weave wires a pod"
                ),
            }),
            (Some("bridge"), Some(p)) if p["bridge"] == "kube-bridge" => Some(BridgeNfAgent {
                name: "kube-router",
                keys: vec![iptables, "net.bridge.bridge-nf-call-ip6tables"],
                why: format!(
                    "{path}: kube-router (its kube-bridge) loads br_netfilter and sets bridge netfilter to 1 whenever it starts"
                ),
            }),
            _ => None,
        };
        let forwards_ipv6 = plugins
            .iter()
            .find(|p| p["type"] == "egress-cni" || p["type"] == "egress-v4-cni")
            .filter(|_| types.first().is_some_and(|t| t == "aws-cni"))
            .and_then(|egress| {
                // Before v1.13 (amazon-vpc-cni-k8s 62dbe0d8) the plugin was egress-v4-cni in
                // every conflist, `enabled` from ENABLE_IPv6: an IPv6 cluster's IPv4 egress.
                if egress["type"] == "egress-v4-cni" {
                    return (egress["enabled"] == "true").then(|| format!(
                        "{path}: aws-node's init container turns IPv6 forwarding on whenever it starts (an IPv6 cluster: its egress-v4-cni plugin is enabled)"
                    ));
                }
                let subnet = egress["ipam"]["ranges"][0][0]["subnet"].as_str()?;
                let ipv6_cluster = !subnet.contains(':');
                let ipv6_egress = subnet.contains(':') && egress["enabled"] == "true";
                (ipv6_cluster || ipv6_egress).then(|| {
                    format!(
                        "{path}: aws-node's init container turns IPv6 forwarding on whenever it starts ({})",
                        if ipv6_cluster { "an IPv6 cluster: its egress-cni plugin is for IPv4" } else { "IPv6 egress is enabled" }
                    )
                })
            });
        Cni {
            config: Some(path.to_owned()),
            network,
            plugins: types,
            pod_bridge,
            forwards,
            forwards_ipv6,
            gateway_bridge,
            bridge_nf_agent,
            refused: Vec::new(),
            unread: None,
            later: Vec::new(),
            runtime_unknown: None,
        }
    }
}

/// The CNI directories to read, in order, and the one the runtime reads, where one is
/// known.
fn directories(raw: &RawFacts) -> (Vec<String>, Option<String>) {
    // MicroK8s's containerd reads its snap's directory alone (microk8s-resources/
    // default-args/containerd-template.toml: conf_dir = "${SNAP_DATA}/args/cni-network").
    let microk8s = super::microk8s::current_revision(raw)
        .map(|dir| format!("{dir}/args/cni-network"))
        .filter(|dir| raw.dirs.iter().any(|d| d == dir));
    let dirs: Vec<&str> = microk8s
        .iter()
        .map(String::as_str)
        .chain(CNI_DIRS.iter().copied())
        .filter(|d| *d != CNI_DIRS[0] || k3s_reads_own_dir(raw))
        .take(if microk8s.is_some() {
            1
        } else {
            CNI_DIRS.len()
        })
        .collect();
    // The runtime's directory: k3s's own where k3s's containerd config names it (there
    // or not yet), else the first of them that is there; the next is a fallback for
    // what the pods sit on while the runtime's holds no configuration yet.
    let runtime_dir = match k3s_conf_dir(raw) {
        Some(true) if microk8s.is_none() => Some(CNI_DIRS[0]),
        _ => dirs
            .iter()
            .copied()
            .find(|d| raw.dirs.iter().any(|x| x == d) || raw.files_in(d).next().is_some()),
    };
    let owned = dirs.iter().map(|d| (*d).to_owned()).collect();
    (owned, runtime_dir.map(str::to_owned))
}

/// Whether pods sit on a Linux bridge, from the chain's plugin types and its plugins'
/// configuration: `bridged` where a plugin of the chain puts them on one (see
/// [`BRIDGED`], flannel), else by the main plugin; a main plugin of none of the lists
/// that looks like a fork of the bridge plugin ([`bridge_like`]) is taken as bridged.
fn pod_bridge(
    path: &str,
    bridged: Option<String>,
    types: &[String],
    plugins: &[&serde_json::Value],
) -> PodBridge {
    let azure = plugins
        .first()
        .filter(|p| p["type"] == "azure-vnet")
        .map(|p| azure_vnet(path, p));
    match (bridged, types.first(), azure) {
        (Some(why), ..) => PodBridge::Bridged(why),
        (None, _, Some(azure)) => azure,
        (None, Some(main), None) if MOVED_DEVICES.contains(&main.as_str()) => {
            PodBridge::Routed(format!(
                "{path}: plugin {main} moves a device of the node into the pod, whose frames leave through it without crossing a Linux bridge"
            ))
        }
        (None, Some(main), None) if ROUTED.contains(&main.as_str()) => PodBridge::Routed(format!(
            "{path}: plugin {main} wires pods with routed veths, no Linux bridge"
        )),
        (None, Some(main), None) if OVS.contains(&main.as_str()) => PodBridge::Routed(format!(
            "{path}: plugin {main} puts pods on an Open vSwitch bridge, not a Linux one: bridge netfilter never sees their frames"
        )),
        (None, Some(main), None) if VLAN_DEVICES.contains(&main.as_str()) => {
            PodBridge::Routed(format!(
                "{path}: plugin {main} gives pods {main} devices of a host interface, which the {main} driver switches between without a Linux bridge: bridge netfilter never sees their frames (nor does the host's conntrack see a Service backend's reply to a client pod beside it, unless kube-proxy masquerades all Service traffic, which DNS-MACVLAN-NO-MASQUERADE checks for macvlan)"
            ))
        }
        (None, Some(main), None) => match plugins.iter().find_map(|p| bridge_like(p)) {
            Some((kind, device)) => PodBridge::Bridged(format!(
                "{path}: plugin {kind} is not one dnsfix knows, but {}: taken as bridged",
                match device {
                    Some(device) => format!("it names a bridge ({device})"),
                    None => "its type says bridge".to_owned(),
                }
            )),
            None => PodBridge::Unknown(format!(
                "{path}: plugin {main} is not one dnsfix knows to be bridged or routed"
            )),
        },
        (None, None, _) => PodBridge::Unknown(format!("{path}: no plugin type")),
    }
}

/// A plugin of none of dnsfix's lists that looks like a fork of the bridge plugin, with
/// its type and the bridge it names: a type ending in `bridge` (KubeVirt's `cnv-bridge`,
/// OpenShift Virtualization's NetworkAttachmentDefinition examples; Tencent TKE's
/// `tke-bridge`, qyzhaoxun/multus-cni doc/default-delegates.md) or a string `bridge` key,
/// the bridge plugin's own setting (containernetworking/plugins plugins/main/bridge
/// `BrName`, `json:"bridge"`). Open vSwitch plugins name their bridge too ([`OVS`]), and
/// azure-vnet is judged by its mode ([`azure_vnet`]): not these. Pods on a Linux bridge
/// are never taken for anything less.
fn bridge_like(plugin: &serde_json::Value) -> Option<(&str, Option<&str>)> {
    let kind = plugin["type"].as_str()?;
    if OVS.contains(&kind) || kind == "azure-vnet" {
        return None;
    }
    let device = plugin["bridge"].as_str();
    (kind.ends_with("bridge") || device.is_some()).then_some((kind, device))
}

/// Whether the struct field `key` of `v` decodes as encoding/json decodes it: every key
/// of `v` equal to `key` but for case is decoded into the field in turn, so each value
/// must be null or pass `ok` (have the field's type).
fn go_field_ok(v: &serde_json::Value, key: &str, ok: impl Fn(&serde_json::Value) -> bool) -> bool {
    v.as_object().is_none_or(|map| {
        map.iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(key))
            .all(|(_, x)| x.is_null() || ok(x))
    })
}

/// Why encoding/json fails to decode a plugin's other typed fields into types.PluginConf
/// (containernetworking/cni v1.3.0 pkg/types/types.go), where it does: `capabilities` a
/// map of booleans, `ipam` an object whose `type` is a string, `dns` an object of string
/// lists (`nameservers`, `search`, `options`) and a string `domain`, `prevResult` an
/// object. A null is none of these errors.
fn typed_fields(v: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    let strings = |x: &Value| {
        x.as_array()
            .is_some_and(|l| l.iter().all(|e| e.is_null() || e.is_string()))
    };
    let booleans = |c: &Value| {
        c.as_object()
            .is_some_and(|m| m.values().all(|b| b.is_null() || b.is_boolean()))
    };
    if !go_field_ok(v, "capabilities", booleans) {
        return Some("has capabilities that are not all true or false".to_owned());
    }
    if !go_field_ok(v, "ipam", |i| {
        i.is_object() && go_field_ok(i, "type", Value::is_string)
    }) {
        return Some("has an ipam that is not an object with a string type".to_owned());
    }
    let dns_ok = |d: &Value| {
        d.is_object()
            && ["nameservers", "search", "options"]
                .iter()
                .all(|k| go_field_ok(d, k, strings))
            && go_field_ok(d, "domain", Value::is_string)
    };
    if !go_field_ok(v, "dns", dns_ok) {
        return Some("has a dns that is not lists of strings and a string domain".to_owned());
    }
    if !go_field_ok(v, "prevResult", Value::is_object) {
        return Some("has a prevResult that is not an object".to_owned());
    }
    None
}

/// Why libcni refuses a configuration file, where it does, as containerd, CRI-O and
/// cri-dockerd load it (containernetworking/cni libcni/conf.go, v1.1 to v1.3): a
/// `.conflist` through `NetworkConfFromBytes` (a string `name`; a string `cniVersion` where
/// set; a non-empty `plugins` list, each one a plugin), another through `ConfFromBytes`
/// (one plugin). A plugin is an object with a non-empty string `type` (`missing 'type'`),
/// and a string `name` and `cniVersion` where set (types.PluginConf, whose fields Go's
/// encoding/json matches in any case), and its other typed fields ([`typed_fields`]).
/// Not checked: the list's booleans (`disableCheck`, `disableGC`, `loadOnlyInlinedPlugins`)
/// and `cniVersions`.
fn libcni_refuses(path: &str, json: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    let plugin = |v: &Value| {
        if !v.is_object() {
            return Some("is not a JSON object".to_owned());
        }
        for key in ["name", "cniVersion", "type"] {
            if !go_field_ok(v, key, Value::is_string) {
                return Some(format!("has a {key} that is not a string"));
            }
        }
        if let Some(why) = typed_fields(v) {
            return Some(why);
        }
        // The type the decode ends with: the exact key's, else one equal but for case.
        let kind = v.get("type").or_else(|| {
            v.as_object()?
                .iter()
                .find_map(|(k, x)| k.eq_ignore_ascii_case("type").then_some(x))
        });
        let typed = kind.and_then(Value::as_str).is_some_and(|t| !t.is_empty());
        (!typed).then(|| match v.get("plugins") {
            Some(_) => "has no type (a plugin list, which libcni reads only from a .conflist file)"
                .to_owned(),
            None => "has no type".to_owned(),
        })
    };
    if !path.ends_with(".conflist") {
        return plugin(json);
    }
    if !json.is_object() {
        return Some("is not a JSON object".to_owned());
    }
    // The list's own keys are read from a map: a null is no string there.
    match json.get("name") {
        None => return Some("has no name".to_owned()),
        Some(name) if !name.is_string() => return Some("its name is not a string".to_owned()),
        Some(_) => {}
    }
    if json.get("cniVersion").is_some_and(|v| !v.is_string()) {
        return Some("its cniVersion is not a string".to_owned());
    }
    match json.get("plugins") {
        // libcni before v1.3 (containerd 1.7 and 2.0): "no 'plugins' key"; from v1.3 it
        // looks for NAME/*.conf beside the file, which dnsfix does not read.
        None => Some("has no plugins list".to_owned()),
        Some(Value::Array(list)) if list.is_empty() => Some("lists no plugins".to_owned()),
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .find_map(|(i, p)| plugin(p).map(|why| format!("its plugin {} {why}", i + 1))),
        Some(_) => Some("its plugins is not a list".to_owned()),
    }
}

/// Whether k3s's containerd reads k3s's own CNI directory: k3s gives it one only where it
/// runs its flannel (pkg/executor/embed: `CNIConfDir` set unless the flannel backend is
/// `none`, which an agent takes from its server), and its generated config.toml says so as
/// `conf_dir` (pkg/agent/templates, both template versions); without it containerd reads
/// /etc/cni/net.d (Cilium, Calico), and a flannel file left in k3s's directory is not the
/// node's network. The gather keeps the `conf_dir` lines of that file (`k3s-cni-conf-dir`;
/// the rest may hold registry credentials). Where the file was not there, as before: k3s's
/// directory first.
fn k3s_reads_own_dir(raw: &RawFacts) -> bool {
    k3s_conf_dir(raw).unwrap_or(true)
}

/// Whether k3s's containerd config names k3s's own CNI directory, where the gather read it.
fn k3s_conf_dir(raw: &RawFacts) -> Option<bool> {
    // The gather ends the record with "# read" where it read the whole file.
    let text = raw
        .commands
        .get("k3s-cni-conf-dir")
        .and_then(|c| c.stdout.strip_suffix("# read\n"))?;
    Some(text.lines().any(|l| {
        l.trim_start()
            .strip_prefix("conf_dir")
            .is_some_and(|rest| rest.contains(CNI_DIRS[0]))
    }))
}

/// Multus in front of the cluster's network (`00-multus.conf`, named to come first): the
/// pods' own interface is its cluster network's, which decides whether they sit on a
/// bridge. Multus's thin plugin (`type: multus`, alone or in a `.conflist`) carries that
/// network's configuration as the first of its `delegates` (k8snetworkplumbingwg/multus-cni
/// cmd/thin_entrypoint `multusConfTemplate`); the thick one (`type: multus-shim`) names its
/// file in `clusterNetwork`, as the daemon sees it (pkg/server/config `ClusterNetwork =
/// primaryCNIConfigPath`, under `multusAutoconfigDir`, `/host/etc/cni/net.d` in its
/// manifests, where the node's directory is mounted), or by network name. `None` where
/// `json` is no Multus configuration; an error where its cluster network is not found.
fn multus_delegate(
    raw: &RawFacts,
    dir: &str,
    path: &str,
    json: &serde_json::Value,
) -> Option<Result<(String, serde_json::Value), String>> {
    let plugin = match json["plugins"].as_array() {
        Some(list) => list.first()?,
        None => json,
    };
    let kind = plugin["type"].as_str()?;
    if !matches!(kind, "multus" | "multus-shim") {
        return None;
    }
    // A clusterNetwork replaces the delegates (pkg/types LoadNetConf fills them only
    // without one; GetDefaultNetworks puts it in their place).
    let named = plugin["clusterNetwork"].as_str().unwrap_or_default();
    if named.is_empty() {
        return Some(
            match plugin["delegates"].as_array().and_then(|d| d.first()) {
                Some(delegate) if kind == "multus" => Ok((
                    format!("{path} (Multus's cluster network, its first delegate)"),
                    delegate.clone(),
                )),
                _ => Err(format!("{path}: Multus with no cluster network")),
            },
        );
    }
    let local = named.strip_prefix("/host").filter(|p| p.starts_with('/'));
    let file = local.or(named.starts_with('/').then_some(named));
    let parsed = |p: &str| {
        let text = raw
            .get(p)
            .filter(|f| f.state == FileState::Present && !f.truncated)?
            .text()?;
        serde_json::from_str::<serde_json::Value>(&text).ok()
    };
    let found = match file {
        Some(f) => parsed(f).map(|j| (f.to_owned(), j)),
        None => raw
            .files_in(dir)
            .filter_map(|(p, _)| parsed(p).map(|j| (p.to_owned(), j)))
            .find(|(p, j)| p != path && j["name"] == named),
    };
    Some(match found {
        Some((file, delegate)) => Ok((
            format!("{file} (Multus's cluster network, clusterNetwork in {path})"),
            delegate,
        )),
        None => Err(format!(
            "{path}: Multus's cluster network {named:?} is not a CNI configuration dnsfix read"
        )),
    })
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

    /// The node agents of Calico (Canal), Cilium (chained too), Antrea and Kube-OVN turn
    /// forwarding on at every start; the AWS VPC CNI in an IPv4 cluster and Weave do not.
    #[test]
    fn network_agents_that_turn_forwarding_on() {
        let forwards = |text: &str| cni(&[("/etc/cni/net.d/10-x.conflist", text)]).forwards;
        let upstream = |case: &str, file: &str| {
            let path = format!(
                "{}/tests/fixtures/rules/_upstream/{case}/root/etc/cni/net.d/{file}",
                env!("CARGO_MANIFEST_DIR")
            );
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
        };
        let calico = upstream("cni-calico-brnf-off", "10-calico.conflist");
        assert!(forwards(&calico).is_some_and(|w| w.contains("felix")));
        // antrea-io/antrea @fc70f2bb build/charts/antrea/conf/antrea-cni.conflist, with
        // the chart's portmap plugin.
        let antrea = r#"{"cniVersion":"0.3.0","name":"antrea","plugins":[{"type":"antrea","ipam":{"type":"host-local"}},{"type":"portmap","capabilities":{"portMappings":true}}]}"#;
        assert!(forwards(antrea).is_some_and(|w| w.contains("Antrea")));
        // kubeovn/kube-ovn @1533681d dist/images/01-kube-ovn.conflist.
        let ovn = r#"{"name":"kube-ovn","cniVersion":"0.3.1","plugins":[{"type":"kube-ovn","server_socket":"/run/openvswitch/kube-ovn-daemon.sock"},{"type":"portmap","capabilities":{"portMappings":true}}]}"#;
        assert!(forwards(ovn).is_some());
        let aws = upstream("eks-al2023-nodeadm", "10-aws.conflist");
        assert!(forwards(&aws).is_none());
        // Cilium chained after the AWS VPC CNI (its aws-cni chaining mode appends
        // cilium-cni to the chain): its agent runs all the same.
        let mut chained: serde_json::Value = serde_json::from_str(&aws).expect("json");
        chained["plugins"].as_array_mut().expect("plugins").push(
            serde_json::json!({"name": "cilium", "type": "cilium-cni", "enable-route-mtu": true}),
        );
        assert!(forwards(&chained.to_string()).is_some_and(|w| w.contains("Cilium")));
        let weave = upstream("cni-weave-brnf-on-not-persisted", "10-weave.conflist");
        assert!(forwards(&weave).is_none());
    }

    /// The ptp plugin (kind's kindnet conflist: ptp, host-local, portmap, as kindnetd
    /// renders /etc/cni/net.d/10-kindnet.conflist for an IPv4 node) wires pods with a veth
    /// pair and host routes, no bridge, and turns forwarding on for every pod it adds
    /// (containernetworking/plugins 3d27709f plugins/main/ptp/ptp.go: ip.SetupVeth,
    /// ip.EnableForward).
    #[test]
    fn ptp_is_routed_and_turns_forwarding_on() {
        let kindnet = r#"{"cniVersion":"0.3.1","name":"kindnet","plugins":[{"type":"ptp","ipMasq":false,"ipam":{"type":"host-local","dataDir":"/run/cni-ipam-state","routes":[{"dst":"0.0.0.0/0"}],"ranges":[[{"subnet":"10.244.0.0/24"}]]},"mtu":1500},{"type":"portmap","capabilities":{"portMappings":true}}]}"#;
        let c = cni(&[("/etc/cni/net.d/10-kindnet.conflist", kindnet)]);
        assert!(
            matches!(c.pod_bridge, PodBridge::Routed(_)),
            "{:?}",
            c.pod_bridge
        );
        assert!(c.forwards.is_some_and(|w| w.contains("ptp")));
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
        assert_eq!(c.refused.len(), 1, "{c:?}");
        assert!(
            c.refused[0]
                .to_string()
                .starts_with("/etc/cni/net.d/00-broken.conf: not JSON ("),
            "{c:?}"
        );
    }

    /// What libcni refuses (libcni/conf.go), each one a file containerd stops at.
    #[test]
    fn files_libcni_refuses_before_the_one_in_effect() {
        let calico = r#"{"name":"k8s-pod-network","cniVersion":"0.3.1","plugins":[{"type":"calico"},{"type":"portmap","capabilities":{"portMappings":true}}]}"#;
        let c = cni(&[
            ("/etc/cni/net.d/10-calico.conflist", calico),
            // A plugin list in a .conf file: ConfFromBytes finds no type.
            ("/etc/cni/net.d/01-list.conf", calico),
            (
                "/etc/cni/net.d/02-noname.conflist",
                r#"{"cniVersion":"0.3.1","plugins":[{"type":"calico"}]}"#,
            ),
            (
                "/etc/cni/net.d/03-untyped.conflist",
                r#"{"name":"n","plugins":[{"type":"calico"},{"capabilities":{}}]}"#,
            ),
            (
                "/etc/cni/net.d/04-empty.conflist",
                r#"{"name":"n","plugins":[]}"#,
            ),
            (
                "/etc/cni/net.d/05-version.json",
                r#"{"name":"n","type":"bridge","cniVersion":1}"#,
            ),
            ("/etc/cni/net.d/06-array.conf", "[]"),
            (
                "/etc/cni/net.d/07-caps.conflist",
                r#"{"name":"n","plugins":[{"type":"portmap","capabilities":{"portMappings":"true"}}]}"#,
            ),
            (
                "/etc/cni/net.d/08-ipam.conf",
                r#"{"name":"n","type":"bridge","ipam":"host-local"}"#,
            ),
            (
                "/etc/cni/net.d/09-dns.conf",
                r#"{"name":"n","type":"bridge","dns":{"nameservers":"10.0.0.10"}}"#,
            ),
            // After the one in effect: never read by containerd (max_conf_num 1).
            ("/etc/cni/net.d/20-broken.conflist", "{"),
        ]);
        assert_eq!(
            c.config.as_deref(),
            Some("/etc/cni/net.d/10-calico.conflist")
        );
        let refused: Vec<String> = c.refused.iter().map(ToString::to_string).collect();
        assert_eq!(
            refused,
            [
                "/etc/cni/net.d/01-list.conf: has no type (a plugin list, which libcni reads only from a .conflist file)",
                "/etc/cni/net.d/02-noname.conflist: has no name",
                "/etc/cni/net.d/03-untyped.conflist: its plugin 2 has no type",
                "/etc/cni/net.d/04-empty.conflist: lists no plugins",
                "/etc/cni/net.d/05-version.json: has a cniVersion that is not a string",
                "/etc/cni/net.d/06-array.conf: is not a JSON object",
                "/etc/cni/net.d/07-caps.conflist: its plugin 1 has capabilities that are not all true or false",
                "/etc/cni/net.d/08-ipam.conf: has an ipam that is not an object with a string type",
                "/etc/cni/net.d/09-dns.conf: has a dns that is not lists of strings and a string domain",
            ]
        );
        // Nothing accepted: every file is refused, and what pods sit on is unknown.
        let c = cni(&[("/etc/cni/net.d/00-broken.conf", "{ not json")]);
        assert_eq!(c.config, None);
        assert!(
            matches!(&c.pod_bridge, PodBridge::Unknown(w) if w == "no CNI configuration parses (/etc/cni/net.d/00-broken.conf)"),
            "{c:?}"
        );
        assert_eq!(c.refused.len(), 1);
        // A list without plugins: libcni before v1.3 refuses it (from v1.3 it reads them
        // from a directory beside it, which dnsfix does not). A plugin's fields are matched
        // in any case, as Go's encoding/json does.
        let c = cni(&[
            ("/etc/cni/net.d/10-calico.conflist", calico),
            ("/etc/cni/net.d/05-dir.conflist", r#"{"name":"dir"}"#),
            // Each variant is decoded: a number in one fails whatever the other holds.
            (
                "/etc/cni/net.d/04-mixed.conf",
                r#"{"name":"n","type":"bridge","Type":5}"#,
            ),
            (
                "/etc/cni/net.d/06-case.conflist",
                r#"{"name":"n","plugins":[{"Type":"bridge","CNIVERSION":1}]}"#,
            ),
            (
                "/etc/cni/net.d/07-case.conf",
                r#"{"Name":"n","TYPE":"bridge","cniversion":"0.4.0"}"#,
            ),
        ]);
        assert_eq!(c.config.as_deref(), Some("/etc/cni/net.d/07-case.conf"));
        let refused: Vec<String> = c.refused.iter().map(ToString::to_string).collect();
        assert_eq!(
            refused,
            [
                "/etc/cni/net.d/04-mixed.conf: has a type that is not a string",
                "/etc/cni/net.d/05-dir.conflist: has no plugins list",
                "/etc/cni/net.d/06-case.conflist: its plugin 1 has a cniVersion that is not a string",
            ]
        );
        // k3s's own directory is there but not written yet (its flannel not started): a
        // broken leftover in /etc/cni/net.d is no file its containerd reads.
        let mut raw = crate::testing::raw_from(&[("/etc/cni/net.d/00-old.conf", "{")]);
        assert_eq!(Cni::from_raw(&raw).refused.len(), 1);
        raw.dirs.push(CNI_DIRS[0].to_owned());
        assert_eq!(Cni::from_raw(&raw).refused, []);
        // Nor where k3s's containerd config names its directory, not made yet.
        let mut raw = crate::testing::raw_from(&[("/etc/cni/net.d/00-old.conf", "{")]);
        let conf_dir = format!("  conf_dir = \"{}\"\n# read\n", CNI_DIRS[0]);
        crate::testing::set_command(&mut raw, "k3s-cni-conf-dir", &conf_dir, 0);
        assert_eq!(Cni::from_raw(&raw).refused, []);
    }

    /// ConfFiles lists links whatever they lead to, and reading one to nothing or to a
    /// directory fails; a file too large to read whole is not judged.
    #[test]
    fn links_that_do_not_load_and_files_not_read_whole() {
        let calico = r#"{"name":"k8s-pod-network","plugins":[{"type":"calico"}]}"#;
        let mut raw = crate::testing::raw_from(&[("/etc/cni/net.d/10-calico.conflist", calico)]);
        for (path, state) in [
            ("/etc/cni/net.d/01-gone.conf", FileState::Missing),
            ("/etc/cni/net.d/02-dir.conf", FileState::Directory),
            // A directory of its own is not listed.
            ("/etc/cni/net.d/03-real-dir.conf", FileState::Directory),
        ] {
            raw.file(path, state, None);
        }
        for path in ["/etc/cni/net.d/01-gone.conf", "/etc/cni/net.d/02-dir.conf"] {
            raw.files.get_mut(path).expect("added").symlink_target = Some("/srv/x".into());
        }
        let c = Cni::from_raw(&raw);
        let refused: Vec<String> = c.refused.iter().map(ToString::to_string).collect();
        assert_eq!(
            refused,
            [
                "/etc/cni/net.d/01-gone.conf: a symlink to nothing",
                "/etc/cni/net.d/02-dir.conf: a symlink to a directory",
            ]
        );
        assert_eq!(
            c.config.as_deref(),
            Some("/etc/cni/net.d/10-calico.conflist")
        );
        let big = format!(
            "{{\"name\":\"n\",\"type\":\"bridge\",\"x\":\"{}\"}}",
            "a".repeat(2 << 20)
        );
        let mut raw = crate::testing::raw_from(&[("/etc/cni/net.d/10-calico.conflist", calico)]);
        raw.file(
            "/etc/cni/net.d/05-big.conf",
            FileState::Present,
            Some(big.as_bytes()),
        );
        let c = Cni::from_raw(&raw);
        assert_eq!(
            (c.config, c.unread.as_deref()),
            (None, Some("/etc/cni/net.d/05-big.conf"))
        );
    }

    /// Multus first in the directory: the pods' own interface is its cluster network's.
    /// The thin plugin's file, rendered from multus-cni cmd/thin_entrypoint
    /// `multusConfTemplate` (what Kubespray's multus role runs) with kube-flannel.yml's
    /// network as the master plugin; the thick plugin's, as `MultusConf.Generate` writes
    /// it from the thick manifest's daemon-config.json (`multusAutoconfigDir`
    /// /host/etc/cni/net.d; fields dnsfix does not read left out).
    #[test]
    fn multus_is_judged_by_its_cluster_network() {
        let thin = format!(
            "{{\n        \"cniVersion\": \"0.3.1\",\n        \"name\": \"cbr0\",\n        \"type\": \"multus\",\n        \"capabilities\": {{\"portMappings\": true}},\n        \"kubeconfig\": \"/etc/cni/net.d/multus.d/multus.kubeconfig\",\n        \"delegates\": [\n                {FLANNEL}\n        ]\n}}\n"
        );
        let c = cni(&[("/etc/cni/net.d/00-multus.conf", &thin)]);
        assert_eq!(c.config.as_deref(), Some("/etc/cni/net.d/00-multus.conf"));
        assert_eq!(c.plugins, ["multus", "flannel>bridge", "portmap"]);
        assert!(
            matches!(&c.pod_bridge, PodBridge::Bridged(w) if w.contains("Multus's cluster network"))
        );
        assert!(c.forwards.is_some());
        // The same in a .conflist (`multusConflistTemplate`).
        let list = format!("{{\"cniVersion\":\"0.3.1\",\"name\":\"cbr0\",\"plugins\":[{thin}]}}");
        let c = cni(&[("/etc/cni/net.d/00-multus.conflist", &list)]);
        assert!(matches!(&c.pod_bridge, PodBridge::Bridged(_)), "{c:?}");

        let calico = r#"{"name":"k8s-pod-network","cniVersion":"0.3.1","plugins":[{"type":"calico","datastore_type":"kubernetes"},{"type":"portmap","snat":true,"capabilities":{"portMappings":true}}]}"#;
        let thick = r#"{"capabilities":{"portMappings":true},"cniVersion":"0.3.1","logLevel":"verbose","logToStderr":true,"name":"multus-cni-network","clusterNetwork":"/host/etc/cni/net.d/10-calico.conflist","type":"multus-shim"}"#;
        let c = cni(&[
            ("/etc/cni/net.d/00-multus.conf", thick),
            ("/etc/cni/net.d/10-calico.conflist", calico),
        ]);
        assert_eq!(c.plugins, ["multus", "calico", "portmap"]);
        assert!(
            matches!(&c.pod_bridge, PodBridge::Routed(w) if w.starts_with("/etc/cni/net.d/10-calico.conflist (Multus's")),
            "{c:?}"
        );
        // By network name; and not found at all.
        let c = cni(&[
            (
                "/etc/cni/net.d/00-multus.conf",
                &thick.replace("/host/etc/cni/net.d/10-calico.conflist", "k8s-pod-network"),
            ),
            ("/etc/cni/net.d/10-calico.conflist", calico),
        ]);
        assert!(matches!(&c.pod_bridge, PodBridge::Routed(_)), "{c:?}");
        // The thin plugin's clusterNetwork wins over its delegates.
        let both = thin.replace(
            "\"type\": \"multus\",",
            "\"type\": \"multus\",\n        \"clusterNetwork\": \"k8s-pod-network\",",
        );
        assert_ne!(both, thin);
        let c = cni(&[
            ("/etc/cni/net.d/00-multus.conf", &both),
            ("/etc/cni/net.d/10-calico.conflist", calico),
        ]);
        assert!(matches!(&c.pod_bridge, PodBridge::Routed(_)), "{c:?}");
        let c = cni(&[("/etc/cni/net.d/00-multus.conf", thick)]);
        assert!(
            matches!(&c.pod_bridge, PodBridge::Unknown(w) if w.contains("is not a CNI configuration")),
            "{c:?}"
        );
    }

    /// MicroK8s's containerd reads the CNI configuration of its snap's revision, not
    /// /etc/cni/net.d: microk8s-resources/default-args/cni-network/flannel.conflist,
    /// verbatim, beside a file left in /etc/cni/net.d.
    #[test]
    fn microk8s_reads_its_own_directory() {
        let flannel = r#"{
    "name": "microk8s-flannel-network",
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
        "capabilities": {"portMappings": true},
        "snat": true
      }
    ]
}"#;
        let dir = "/var/snap/microk8s/7964/args/cni-network";
        let mut raw = crate::testing::raw_from(&[
            (&format!("{dir}/flannel.conflist") as &str, flannel),
            (
                "/etc/cni/net.d/10-calico.conflist",
                r#"{"name":"k8s-pod-network","plugins":[{"type":"calico"}]}"#,
            ),
        ]);
        raw.dirs.push(dir.to_owned());
        let current = super::super::microk8s::CURRENT;
        raw.file(current, FileState::Directory, None);
        if let Some(link) = raw.files.get_mut(current) {
            link.canonical = Some("/var/snap/microk8s/7964".into());
        }
        let c = Cni::from_raw(&raw);
        assert_eq!(
            c.config.as_deref(),
            Some(format!("{dir}/flannel.conflist").as_str())
        );
        assert!(matches!(c.pod_bridge, PodBridge::Bridged(_)), "{c:?}");
        // Its directory alone: none there is no network, whatever /etc/cni/net.d holds.
        raw.file(&format!("{dir}/flannel.conflist"), FileState::Missing, None);
        let c = Cni::from_raw(&raw);
        assert_eq!(c.config, None, "{c:?}");
    }

    /// Weave and kube-router set bridge netfilter themselves whenever they start; the
    /// kube-router conflist is its daemonset's cni-conf.json (cloudnativelabs/kube-router
    /// daemonset/kube-router-all-service-daemonset.yaml), verbatim.
    #[test]
    fn agents_that_set_bridge_netfilter_at_start() {
        let kube_router = r#"{
   "cniVersion":"0.3.0",
   "name":"mynet",
   "plugins":[
      {
         "name":"kubernetes",
         "type":"bridge",
         "bridge":"kube-bridge",
         "isDefaultGateway":true,
         "ipam":{
            "type":"host-local"
         }
      }
   ]
}"#;
        let c = cni(&[("/etc/cni/net.d/10-kuberouter.conflist", kube_router)]);
        let agent = c.bridge_nf_agent.expect("kube-router");
        assert_eq!((agent.name, agent.keys.len()), ("kube-router", 2));
        assert!(matches!(c.pod_bridge, PodBridge::Bridged(_)));
        let c = cni(&[("/etc/cni/net.d/10-flannel.conflist", FLANNEL)]);
        assert_eq!(c.bridge_nf_agent, None);
    }

    /// k3s with `flannel-backend: none` gives its containerd no CNI directory: it reads
    /// /etc/cni/net.d, and a flannel file left in k3s's directory is not the network. The
    /// conf_dir line as k3s's config.toml template writes it (pkg/agent/templates
    /// ContainerdConfigTemplateV3), where it runs flannel.
    #[test]
    fn k3s_reads_its_own_directory_only_where_its_containerd_is_told_to() {
        let cilium = r#"{"cniVersion":"0.3.1","name":"cilium","plugins":[{"type":"cilium-cni","enable-debug":false}]}"#;
        let raw = crate::testing::raw_from(&[
            (
                "/var/lib/rancher/k3s/agent/etc/cni/net.d/10-flannel.conflist",
                FLANNEL,
            ),
            ("/etc/cni/net.d/05-cilium.conflist", cilium),
        ]);
        let with = |conf_dir: Option<&str>| {
            let mut raw = raw.clone();
            if let Some(text) = conf_dir {
                raw.commands.insert(
                    "k3s-cni-conf-dir".into(),
                    crate::facts::raw::RawCommand {
                        stdout: text.into(),
                        status: Some(0),
                    },
                );
            }
            Cni::from_raw(&raw).config
        };
        let k3s = "/var/lib/rancher/k3s/agent/etc/cni/net.d/10-flannel.conflist";
        assert_eq!(with(None).as_deref(), Some(k3s));
        let conf_dir = "  conf_dir = \"/var/lib/rancher/k3s/agent/etc/cni/net.d\"\n# read\n";
        assert_eq!(with(Some(conf_dir)).as_deref(), Some(k3s));
        let cilium = Some("/etc/cni/net.d/05-cilium.conflist");
        assert_eq!(with(Some("# read\n")).as_deref(), cilium);
        // Not read to its end: as if not read at all.
        assert_eq!(with(Some("")).as_deref(), Some(k3s));
    }

    /// aws-node's init container turns IPv6 forwarding on in an IPv6 cluster or with IPv6
    /// egress: amazon-vpc-cni-k8s misc/10-aws.conflist rendered as cmd/aws-vpc-cni does
    /// (the egress plugin's subnet and `enabled` by cluster family).
    #[test]
    fn the_aws_vpc_cni_forwards_ipv6_in_an_ipv6_cluster_or_with_ipv6_egress() {
        let conflist = |subnet: &str, dst: &str, enabled: &str| {
            format!(
                r#"{{
  "cniVersion": "0.4.0",
  "name": "aws-cni",
  "disableCheck": true,
  "plugins": [
    {{
      "name": "aws-cni",
      "type": "aws-cni",
      "vethPrefix": "eni",
      "mtu": "9001",
      "podSGEnforcingMode": "strict",
      "pluginLogFile": "/var/log/aws-routed-eni/plugin.log",
      "pluginLogLevel": "DEBUG",
      "capabilities": {{"io.kubernetes.cri.pod-annotations": true}}
    }},
    {{
      "name": "egress-cni",
      "type": "egress-cni",
      "mtu": "9001",
      "enabled": "{enabled}",
      "randomizeSNAT": "prng",
      "nodeIP": "",
      "ipam": {{
         "type": "host-local",
         "ranges": [[{{"subnet": "{subnet}"}}]],
         "routes": [{{"dst": "{dst}"}}],
         "dataDir": "/run/cni/v4pd/egress-v6-ipam"
      }},
      "pluginLogFile": "/var/log/aws-routed-eni/egress-v6-plugin.log",
      "pluginLogLevel": "DEBUG"
    }},
    {{
      "type": "portmap",
      "capabilities": {{"portMappings": true}},
      "snat": true
    }}
  ]
}}"#
            )
        };
        let v6 = |text: String| cni(&[("/etc/cni/net.d/10-aws.conflist", &text)]);
        let ipv4 = v6(conflist("fd00::ac:00/118", "::/0", "false"));
        assert_eq!(
            (ipv4.forwards.clone(), ipv4.forwards_ipv6.clone()),
            (None, None)
        );
        assert!(matches!(ipv4.pod_bridge, PodBridge::Routed(_)));
        assert!(
            v6(conflist("fd00::ac:00/118", "::/0", "true"))
                .forwards_ipv6
                .is_some()
        );
        let ipv6 = v6(conflist("169.254.172.0/22", "0.0.0.0/0", "true"));
        assert!(
            ipv6.forwards_ipv6
                .is_some_and(|w| w.contains("an IPv6 cluster"))
        );
        assert_eq!(ipv6.forwards, None);
        let old = conflist("169.254.172.0/22", "0.0.0.0/0", "true")
            .replace("\"egress-cni\"", "\"egress-v4-cni\"");
        assert!(v6(old.clone()).forwards_ipv6.is_some());
        let old_ipv4 = old.replace("\"enabled\": \"true\"", "\"enabled\": \"false\"");
        assert_ne!(old_ipv4, old);
        assert_eq!(v6(old_ipv4).forwards_ipv6, None);
    }

    /// Kubespray's macvlan network plugin: kubernetes-sigs/kubespray @46dbdd39
    /// roles/network_plugin/macvlan/templates/10-macvlan.conf.j2 rendered with
    /// macvlan_interface eth0 and node_pod_cidr 10.233.64.0/24 (gateway its first
    /// address), beside its 99-loopback.conf.j2. Pods sit on macvlan devices of eth0, no
    /// Linux bridge; ipvlan likewise.
    #[test]
    fn macvlan_and_ipvlan_pods_sit_on_no_linux_bridge() {
        let macvlan = r#"{
  "cniVersion": "0.4.0",
  "name": "mynet",
  "type": "macvlan",
  "master": "eth0",
  "hairpinMode": true,
  "ipam": {
    "type": "host-local",
    "subnet": "10.233.64.0/24",
    "routes": [
      { "dst": "0.0.0.0/0" }
    ],
    "gateway": "10.233.64.1"
  }
}"#;
        let loopback = r#"{
  "cniVersion": "0.2.0",
  "name": "lo",
  "type": "loopback"
}"#;
        let c = cni(&[
            ("/etc/cni/net.d/10-macvlan.conf", macvlan),
            ("/etc/cni/net.d/99-loopback.conf", loopback),
        ]);
        assert_eq!(c.config.as_deref(), Some("/etc/cni/net.d/10-macvlan.conf"));
        assert!(
            matches!(&c.pod_bridge, PodBridge::Routed(w) if w.contains("without a Linux bridge")),
            "{c:?}"
        );
        let ipvlan = macvlan.replace("\"macvlan\"", "\"ipvlan\"");
        let c = cni(&[("/etc/cni/net.d/10-ipvlan.conf", &ipvlan)]);
        assert!(matches!(c.pod_bridge, PodBridge::Routed(_)), "{c:?}");
    }

    /// CRI-O picks the network its cni_default_network names, not the first file:
    /// cri-o/cri-o @f954a17e contrib/cni/11-crio-ipv4-bridge.conflist, verbatim, after a
    /// Calico file; a name no file has leaves pods no network.
    #[test]
    fn crio_picks_its_default_network_by_name() {
        let calico =
            r#"{"name":"k8s-pod-network","cniVersion":"0.3.1","plugins":[{"type":"calico"}]}"#;
        let raw = crate::testing::raw_from(&[
            ("/etc/cni/net.d/10-calico.conflist", calico),
            (
                "/etc/cni/net.d/11-crio-ipv4-bridge.conflist",
                crate::testing::CRIO_IPV4_BRIDGE,
            ),
        ]);
        let named = |name: &str| CrioNetwork {
            default_network: name.into(),
            at: "/etc/crio/crio.conf:3".into(),
        };
        let first = Cni::for_runtime(&raw, None);
        assert!(
            matches!(first.pod_bridge, PodBridge::Routed(_)),
            "{first:?}"
        );
        assert_eq!(first.later.len(), 1);
        let c = Cni::for_runtime(&raw, Some(&named("crio")));
        assert_eq!(
            c.config.as_deref(),
            Some("/etc/cni/net.d/11-crio-ipv4-bridge.conflist")
        );
        assert!(
            matches!(&c.pod_bridge, PodBridge::Bridged(w) if w.ends_with("cni_default_network names (/etc/crio/crio.conf:3)")),
            "{c:?}"
        );
        assert_eq!(c.later, []);
        let c = Cni::for_runtime(&raw, Some(&named("k8s-pod-network")));
        assert_eq!(
            c.config.as_deref(),
            Some("/etc/cni/net.d/10-calico.conflist")
        );
        let c = Cni::for_runtime(&raw, Some(&named("cbr0")));
        assert_eq!(c.config, None);
        assert!(
            matches!(&c.pod_bridge, PodBridge::Unknown(w) if w.contains("gives new pods no network")),
            "{c:?}"
        );
    }

    /// Azure CNI by its mode: Azure/azure-container-networking cni/azure-linux.conflist,
    /// verbatim, as shipped since ac1e600b (transparent, @cbd7560c) and before it (bridge,
    /// @323b0488); the conflist of Azure CNI powered by Cilium (cni/azure-chained-
    /// cilium.conflist @cbd7560c), transparent with cilium-cni chained after it.
    #[test]
    fn azure_cni_is_judged_by_its_mode() {
        let transparent = r#"{
   "cniVersion":"0.3.0",
   "name":"azure",
   "plugins":[
      {
         "type":"azure-vnet",
         "mode":"transparent",
         "ipsToRouteViaHost":["169.254.20.10"],
         "ipam":{
            "type":"azure-vnet-ipam"
         }
      },
      {
         "type":"portmap",
         "capabilities":{
            "portMappings":true
         },
         "snat":true
      }
   ]
}"#;
        let c = cni(&[("/etc/cni/net.d/10-azure.conflist", transparent)]);
        assert_eq!(c.plugins, ["azure-vnet", "portmap"]);
        assert!(
            matches!(&c.pod_bridge, PodBridge::Routed(w) if w.contains("transparent mode")),
            "{c:?}"
        );
        let bridge = transparent.replace(
            "\"mode\":\"transparent\",",
            "\"mode\":\"bridge\",\n         \"bridge\":\"azure0\",",
        );
        assert_ne!(bridge, transparent);
        let c = cni(&[("/etc/cni/net.d/10-azure.conflist", &bridge)]);
        assert!(
            matches!(&c.pod_bridge, PodBridge::Bridged(w) if w.contains("bridge azure0")),
            "{c:?}"
        );
        // encoding/json matches `mode` in any case, the last spelling in the file winning
        // (cni/netconfig.go ParseNetworkConfig): `Mode` is the mode; two spellings that
        // disagree, one of them bridge, are bridged whichever comes last.
        let judge = |text: &str| cni(&[("/etc/cni/net.d/10-azure.conflist", text)]).pod_bridge;
        let spelt = transparent.replace("\"mode\":", "\"Mode\":");
        assert_ne!(spelt, transparent);
        assert!(matches!(judge(&spelt), PodBridge::Routed(_)));
        let capital_bridge = bridge.replace("\"mode\":", "\"MODE\":");
        assert!(matches!(judge(&capital_bridge), PodBridge::Bridged(_)));
        let both = transparent.replace(
            "\"mode\":\"transparent\",",
            "\"mode\":\"transparent\",\n         \"Mode\":\"bridge\",",
        );
        assert_ne!(both, transparent);
        assert!(
            matches!(judge(&both), PodBridge::Bridged(ref w) if w.contains("more than once")),
            "{:?}",
            judge(&both)
        );
        // No mode is tunnel, a Linux bridge too; a mode Azure CNI refuses is not known.
        let none = transparent.replace("\"mode\":\"transparent\",", "");
        let c = cni(&[("/etc/cni/net.d/10-azure.conflist", &none)]);
        assert!(matches!(&c.pod_bridge, PodBridge::Bridged(_)), "{c:?}");
        let odd = transparent.replace("\"transparent\"", "\"l2tunnel\"");
        let c = cni(&[("/etc/cni/net.d/10-azure.conflist", &odd)]);
        assert!(matches!(&c.pod_bridge, PodBridge::Unknown(_)), "{c:?}");
        let cilium = r#"{
	"cniVersion": "0.3.0",
	"name": "azure",
	"plugins": [
		{
			"type": "azure-vnet",
			"mode": "transparent",
			"ipsToRouteViaHost": [
				"169.254.20.10"
			],
			"executionMode": "v4swift",
			"ipam": {
				"type": "azure-cns"
			}
		},
		{
			"name": "cilium",
			"type": "cilium-cni"
		}
	]
}"#;
        let c = cni(&[("/etc/cni/net.d/05-cilium.conflist", cilium)]);
        assert!(matches!(&c.pod_bridge, PodBridge::Routed(_)), "{c:?}");
        // Behind Multus's thick plugin (its file as in multus_is_judged_by_its_cluster_
        // network), Azure CNI's file decides, by its mode.
        let thick = r#"{"capabilities":{"portMappings":true},"cniVersion":"0.3.1","logLevel":"verbose","logToStderr":true,"name":"multus-cni-network","clusterNetwork":"/host/etc/cni/net.d/10-azure.conflist","type":"multus-shim"}"#;
        for (azure, routed) in [(transparent, true), (bridge.as_str(), false)] {
            let c = cni(&[
                ("/etc/cni/net.d/00-multus.conf", thick),
                ("/etc/cni/net.d/10-azure.conflist", azure),
            ]);
            assert_eq!(c.plugins, ["multus", "azure-vnet", "portmap"]);
            let judged = match &c.pod_bridge {
                PodBridge::Routed(w) | PodBridge::Bridged(w) => {
                    w.contains("Multus's cluster network")
                }
                PodBridge::Unknown(_) => false,
            };
            assert!(judged, "{c:?}");
            assert_eq!(
                matches!(c.pod_bridge, PodBridge::Routed(_)),
                routed,
                "{c:?}"
            );
            assert_eq!(
                matches!(c.pod_bridge, PodBridge::Bridged(_)),
                !routed,
                "{c:?}"
            );
        }
    }

    /// host-device and SR-IOV move a device of the node into the pod: the configuration
    /// of containernetworking/plugins @3d27709f plugins/main/host-device/
    /// host-device_test.go (CNI 1.0.0, device eth1), and k8snetworkplumbingwg/sriov-cni
    /// @006d5651 README.md's "Configuration with IPAM", verbatim, as a node's network.
    #[test]
    fn moved_devices_cross_no_linux_bridge() {
        let host_device = r#"{
				"cniVersion": "1.0.0",
				"name": "cni-plugin-host-device-test",
				"type": "host-device",
				"device": "eth1"
			}"#;
        let sriov = r#"{
    "cniVersion": "0.3.1",
    "name": "sriov-net",
    "type": "sriov",
        "deviceID": "0000:03:02.0",
        "vlan": 2222,
        "ipam": {
                "type": "host-local",
                "subnet": "10.56.217.0/24",
                "rangeStart": "10.56.217.171",
                "rangeEnd": "10.56.217.181",
                "routes": [
                        { "dst": "0.0.0.0/0" }
                ],
                "gateway": "10.56.217.1"
        }
}
"#;
        for conf in [host_device, sriov] {
            let c = cni(&[("/etc/cni/net.d/10-mynet.conf", conf)]);
            assert!(
                matches!(&c.pod_bridge, PodBridge::Routed(w) if w.contains("moves a device of the node")),
                "{c:?}"
            );
        }
    }

    #[test]
    fn flannel_is_bridged_and_unknown_plugins_are_unknown() {
        let c = cni(&[("/etc/cni/net.d/10-flannel.conflist", FLANNEL)]);
        assert_eq!(c.plugins, ["flannel>bridge", "portmap"]);
        assert!(matches!(&c.pod_bridge, PodBridge::Bridged(w) if w.contains("cni0")));
        // Terway's file as AliyunContainerService/terway @3ccdfe13 docs/cni-chain.md gives it:
        // a plugin dnsfix has no ground truth for.
        let c = cni(&[(
            "/etc/cni/net.d/10-terway.conf",
            r#"{"cniVersion":"0.4.0","name":"terway","type":"terway","eniip_virtual_type":"IPVlan"}"#,
        )]);
        assert!(matches!(c.pod_bridge, PodBridge::Unknown(_)));
        // ovs-cni, its docs/cni-plugin.md example (@d6d1f17b), verbatim: Open vSwitch.
        let c = cni(&[(
            "/etc/cni/net.d/10-mynet.conf",
            r#"{
    "name": "mynet",
    "type": "ovs",
    "bridge": "mynet0",
    "vlan": 100
}"#,
        )]);
        assert!(
            matches!(&c.pod_bridge, PodBridge::Routed(w) if w.contains("Open vSwitch")),
            "{c:?}"
        );
        // kube-ovn's dist/images/01-kube-ovn.conflist, verbatim: Open vSwitch, no Linux
        // bridge.
        let kube_ovn = r#"{
    "name":"kube-ovn",
    "cniVersion":"0.3.1",
    "plugins":[
        {
            "type":"kube-ovn",
            "server_socket":"/run/openvswitch/kube-ovn-daemon.sock"
        },
        {
            "type":"portmap",
            "capabilities":{
                "portMappings":true
            }
        }
    ]
}"#;
        let c = cni(&[("/etc/cni/net.d/01-kube-ovn.conflist", kube_ovn)]);
        assert!(
            matches!(&c.pod_bridge, PodBridge::Routed(w) if w.contains("Open vSwitch")),
            "{c:?}"
        );
        // OVN-Kubernetes: what ovnkube-node writes to /etc/cni/net.d/10-ovn-kubernetes.conf,
        // rendered from ovn-org/ovn-kubernetes: go-controller/pkg/config/cni.go @37eefb61
        // WriteCNIConfig (json.Marshal of cni/types NetConf, @6e36658e for its fields and
        // tags) with config.go @35427943's defaults: CNIConfFileName, CNI.Plugin
        // ovn-k8s-cni-overlay, Logging.Level 4, log file limits 100, 5 and 5, no CNI log
        // file. Pods sit on br-int.
        let ovn = r#"{"cniVersion":"0.4.0","name":"ovn-kubernetes","type":"ovn-k8s-cni-overlay","ipam":{},"dns":{},"logLevel":"4","logfile-maxsize":100,"logfile-maxbackups":5,"logfile-maxage":5,"runtimeConfig":{}}"#;
        let c = cni(&[("/etc/cni/net.d/10-ovn-kubernetes.conf", ovn)]);
        assert!(
            matches!(&c.pod_bridge, PodBridge::Routed(w) if w.contains("Open vSwitch")),
            "{c:?}"
        );
        let c = cni(&[]);
        assert!(
            matches!(&c.pod_bridge, PodBridge::Unknown(w) if w.contains("no CNI configuration"))
        );
    }

    /// A fork of the bridge plugin dnsfix has no list entry for is bridged, not unknown: its
    /// type ends in `bridge` (KubeVirt's cnv-bridge as OpenShift Virtualization's
    /// NetworkAttachmentDefinition example writes it; Tencent TKE's tke-bridge, named in
    /// qyzhaoxun/multus-cni doc/default-delegates.md) or it names a bridge. ovs-cni names
    /// one too and stays Open vSwitch; azure-vnet stays judged by its mode.
    #[test]
    fn bridge_forks_are_bridged() {
        let judge = |text: &str| cni(&[("/etc/cni/net.d/10-x.conf", text)]).pod_bridge;
        let cnv = judge(
            r#"{"cniVersion":"0.3.1","name":"mybridge","type":"cnv-bridge","bridge":"mybridge"}"#,
        );
        assert!(
            matches!(&cnv, PodBridge::Bridged(w) if w.contains("mybridge")),
            "{cnv:?}"
        );
        let tke = judge(
            r#"{"cniVersion":"0.3.1","name":"tke-bridge","type":"tke-bridge","bridge":"cbr0"}"#,
        );
        assert!(
            matches!(&tke, PodBridge::Bridged(w) if w.contains("cbr0")),
            "{tke:?}"
        );
        let untyped = judge(r#"{"cniVersion":"0.3.1","name":"n","type":"vendor-bridge"}"#);
        assert!(
            matches!(&untyped, PodBridge::Bridged(w) if w.contains("type says bridge")),
            "{untyped:?}"
        );
        let named =
            judge(r#"{"cniVersion":"0.3.1","name":"n","type":"vendor-net","bridge":"br0"}"#);
        assert!(matches!(named, PodBridge::Bridged(_)), "{named:?}");
        let ovs = judge(r#"{"name":"mynet","type":"ovs","bridge":"mynet0","vlan":100}"#);
        assert!(matches!(ovs, PodBridge::Routed(_)), "{ovs:?}");
        let azure =
            judge(r#"{"name":"azure","type":"azure-vnet","mode":"transparent","bridge":"azure0"}"#);
        assert!(matches!(azure, PodBridge::Routed(_)), "{azure:?}");
    }
}
