//! What the cluster says about its DNS pods, read the way Kubespray reads the cluster:
//! kubectl on a control-plane host with its admin kubeconfig (kubeadm and Kubespray:
//! `/etc/kubernetes/admin.conf`; k3s: `k3s kubectl`; RKE2: its own kubectl with
//! `/etc/rancher/rke2/rke2.yaml`), over the SSH session dnsfix opens anyway; the
//! kubeconfig never leaves the node. Reads are `get pods`, `logs --previous`,
//! `get configmap` (by name, then those the CoreDNS pods mount that were not among the
//! names: the Helm chart's `<release>-coredns`, k3s's `coredns-custom`; with no CoreDNS pod
//! listed, RKE2's `rke2-coredns-rke2-coredns` by name), `get nodes` (each
//! node's kubelet version) and `get services` (the cluster DNS Services' addresses, in
//! kube-system and, with `-A`, elsewhere: CoreDNS outside kube-system is found through its
//! Service's selector, [`DnsConfig::service_elsewhere`]);
//! `apply` alone writes:
//! `delete pod` (below) and `replace` of a ConfigMap key ([`configmap`]).
//!
//! The pods are CoreDNS (`k8s-app: kube-dns`, kubeadm's and Kubespray's label; with
//! Kubespray's `dns_mode: coredns_dual` also its `coredns-secondary` Deployment's
//! `kube-dns-secondary`; `coredns`, the CoreDNS Helm chart's default) and nodelocaldns
//! (`k8s-app: node-local-dns`, Kubespray's nodelocaldns DaemonSet; with
//! `enable_nodelocaldns_secondary` also its `nodelocaldns-second` DaemonSet's
//! `node-local-dns-second`); the JSON is core/v1 `Pod` (`spec.nodeName`, `status.phase`,
//! `status.containerStatuses[]` with `ready`, `restartCount`, `state.waiting.reason`).

pub mod configmap;
pub mod corefile;

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::gather::run_as_root;
use crate::inventory::Host;
use crate::transport::{OutputCap, Session, Target, Transport};

/// At most this many restarting pods get their last logs read (crash-looping ones first);
/// a crash-looping pod beyond them is reported as not examined, never as clean.
const MAX_LOGS: usize = 50;

/// One CoreDNS or nodelocaldns pod.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DnsPod {
    pub name: String,
    /// `coredns`, `coredns-secondary` (Kubespray's second CoreDNS Deployment with
    /// `dns_mode: coredns_dual`) or `nodelocaldns`.
    pub app: String,
    /// The node it runs on (`spec.nodeName`), lowercase.
    pub node: String,
    pub phase: String,
    pub ready: bool,
    pub restarts: u64,
    /// Why its container waits (`CrashLoopBackOff`), when it does.
    pub waiting: Option<String>,
    /// Its container is running now (`state.running`), ready or not.
    #[serde(default)]
    pub running: bool,
    /// It is being deleted (`metadata.deletionTimestamp`): Terminating, as on a node that
    /// went away, until the kubelet there confirms or the node is deleted. Its controller
    /// counts it no more and has made another.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub terminating: bool,
    /// The loop plugin's fatal line from its previous run, when it crashed on a loop.
    pub loop_detected: Option<String>,
    /// Its previous run's log was read (false: not asked, past [`MAX_LOGS`], or asked and
    /// not read: [`DnsPod::logs_unread`] says why).
    #[serde(default)]
    pub logs_read: bool,
    /// Why its previous run's log was not read where it was asked for: what kubectl said
    /// (a node that does not answer, no previous container), or that the time ran out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logs_unread: Option<String>,
    /// The DNS container (`coredns`, `node-cache`) of a pod with more than one: its logs
    /// are asked for by this name. `kubectl logs POD` alone reads the container
    /// `kubectl.kubernetes.io/default-container` names, else the first one, which may be a
    /// sidecar injected before it (kubernetes/enhancements KEP-2227). None where the pod
    /// has one container, or none of those names (then kubectl's choice is read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// Its namespace where it is not kube-system: CoreDNS found through a cluster DNS
    /// Service elsewhere ([`DnsConfig::service_elsewhere`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Where it is not kube-system, the label selector (`KEY=VALUE,...`) it was listed by
    /// there: its Service's ([`DnsService::selector`]). apply lists its namespace again by
    /// it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// Its DNS container's readiness probe, as the longest its first probe after a kubelet
    /// restart may take to report ([`readiness_probe`]); None where it has none (Ready once
    /// running). Read at apply time only, never kept in a plan.
    #[serde(skip)]
    pub readiness: Option<Duration>,
}

/// What dnsfix could learn from the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "access")]
pub enum Cluster {
    /// Read with kubectl on `via` (an inventory host).
    Read {
        via: String,
        pods: Vec<DnsPod>,
        /// What kube-system's ConfigMaps say about DNS.
        #[serde(default)]
        config: Box<DnsConfig>,
        /// Each node's kubelet version as the cluster has it from the running kubelet
        /// (`status.nodeInfo.kubeletVersion`), by node name; empty when not read.
        #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        kubelets: Kubelets,
    },
    /// No control-plane host answered with a kubectl that works: why, per host.
    Unavailable { reason: String },
}

/// What every kubectl dnsfix runs has in its environment: no user's kuberc (kubectl 1.34+
/// reads `~/.kube/kuberc`, whose defaults and aliases could turn `get nodes` into `-o wide`
/// or `-o json`, or add timestamps to logs). kubectl's own defaults are what dnsfix parses;
/// a kubectl without kuberc ignores the variable.
pub const NO_KUBERC: &str = "KUBERC=off";

/// Finds the node's kubectl and admin kubeconfig and sets them as "$@".
const KUBECTL: &str = r#"set -u
export KUBERC=off
if command -v k3s >/dev/null 2>&1 && [ -r /etc/rancher/k3s/k3s.yaml ]; then
  set -- k3s kubectl
elif [ -x /var/lib/rancher/rke2/bin/kubectl ] && [ -r /etc/rancher/rke2/rke2.yaml ]; then
  set -- /var/lib/rancher/rke2/bin/kubectl --kubeconfig /etc/rancher/rke2/rke2.yaml
elif command -v kubectl >/dev/null 2>&1 && [ -r /etc/kubernetes/admin.conf ]; then
  set -- kubectl --kubeconfig /etc/kubernetes/admin.conf
else
  echo "no kubectl with an admin kubeconfig here" >&2; exit 3
fi
"#;

/// A script running kubectl (found by `prologue`, which sets it as "$@") with `args`
/// (dnsfix's own words and validated names only) against kube-system, bounded in time.
fn kubectl(prologue: &str, args: &str, secs: u64) -> String {
    kubectl_in(prologue, "kube-system", args, secs)
}

/// [`kubectl`] against `namespace` (a name the API allows: the caller checks it), asking
/// the API server for `secs` seconds and ended [`GRACE`] seconds later
/// ([`ReadBudget::bounded`]).
fn kubectl_in(prologue: &str, namespace: &str, args: &str, secs: u64) -> String {
    format!(
        "{prologue}exec {} -n {namespace} {args}\n",
        ReadBudget::bounded(secs)
    )
}

/// Where kubectl runs.
#[derive(Debug, Clone)]
pub enum Access {
    /// On the first answering host of the inventory's `kube_control_plane` group, with
    /// that host's admin kubeconfig (the Kubespray way).
    ControlPlane(Vec<Host>),
    /// On this machine, with this kubeconfig (`--kubeconfig`).
    Kubeconfig(std::path::PathBuf),
}

impl Access {
    /// `self` with `host` (the control-plane host where kubectl answered last,
    /// [`Kubectl::via`]) tried first: each node of a run connects in turn, and a first host
    /// that does not answer would cost every one of them its connect timeout. The others
    /// follow in the inventory's order; a `host` not among them changes nothing.
    pub fn preferring(&self, host: Option<&str>) -> Access {
        match (self, host) {
            (Access::ControlPlane(hosts), Some(host)) => {
                let mut hosts = hosts.clone();
                if let Some(i) = hosts.iter().position(|h| h.name == host) {
                    let answered = hosts.remove(i);
                    hosts.insert(0, answered);
                }
                Access::ControlPlane(hosts)
            }
            _ => self.clone(),
        }
    }
}

/// The label selector of the DNS pods (see the module's doc), for `kubectl -l`: the CoreDNS
/// labels of [`GET_DNS_SERVICES`] and NodeLocal DNSCache's. The CoreDNS Helm chart labels
/// its pods `k8s-app: coredns` (coredns/helm charts/coredns/templates/_helpers.tpl:
/// `coredns.k8sapplabel` is `k8sAppLabelOverride`, else the chart's name, on the pod
/// template where `isClusterService`, its default).
macro_rules! dns_pod_selector {
    () => {
        "k8s-app in (kube-dns,kube-dns-secondary,coredns,node-local-dns,node-local-dns-second)"
    };
}
pub(crate) use dns_pod_selector;

const GET_PODS: &str = concat!("get pods -l '", dns_pod_selector!(), "' -o json");

/// The DNS pods and ConfigMaps, read where `access` says.
pub async fn read(transport: &Transport, access: &Access) -> Cluster {
    let (kubectl, pods) = match Kubectl::connect_with(transport, access, Listing::WithLogs).await {
        Ok(listed) => listed,
        Err(reason) => return Cluster::Unavailable { reason },
    };
    read_from(kubectl, pods).await
}

/// [`read`], once kubectl has answered with `pods` (its first listing, with logs).
async fn read_from(mut kubectl: Kubectl, mut pods: Vec<DnsPod>) -> Cluster {
    let mut config = kubectl.config.take().unwrap_or_default();
    if let Some(name) = config.versioned_kubelet_configmap() {
        kubectl.read_kubelet_config(&mut config, &name).await;
    }
    let mut namespace = "kube-system".to_owned();
    let home = pods.iter().any(|p| !p.is_node_local());
    match config.service_elsewhere(home).cloned() {
        Ok(service) => {
            namespace = service.namespace().to_owned();
            config.services = Some(vec![service.clone()]);
            pods.extend(kubectl.read_elsewhere(&mut config, &service).await);
        }
        Err(why) => config.coredns_unread = why,
    }
    let pods = kubectl.with_logs(pods).await;
    kubectl
        .read_mounted_corefiles(&mut config, &namespace)
        .await;
    config.mark_loaded();
    let kubelets = std::mem::take(&mut kubectl.kubelets);
    let via = kubectl.via().to_owned();
    kubectl.close().await;
    Cluster::Read {
        via,
        pods,
        config: Box::new(config),
        kubelets,
    }
}

/// The cluster's DNS configuration, from kube-system's ConfigMaps: `coredns` and
/// `nodelocaldns` or `node-local-dns` (their Corefiles), `kube-proxy` (its mode and
/// masqueradeAll), kubeadm's `kubelet-config` (the kubelet settings `kubeadm upgrade node`
/// writes to every node; `kubelet-config-1.NN` before 1.24), `kubeadm-config` (the
/// cluster's version, which names the latter) and `kube-dns` (node-cache's upstream
/// servers).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DnsConfig {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub corefiles: Vec<Corefile>,
    /// kube-proxy's `mode` (`""` is its default, iptables).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_proxy_mode: Option<String>,
    /// Where that mode was read: `kube-proxy (config.conf)`, kubeadm's and Kubespray's, or
    /// `kube-proxy-config (config)`, EKS's kube-proxy add-on (its DaemonSet runs
    /// `--config=/var/lib/kube-proxy-config/config` from that ConfigMap; its `kube-proxy`
    /// ConfigMap holds only the kubeconfig: eksctl pkg/addons/default/testdata).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_proxy_from: Option<String>,
    /// A kube-proxy ConfigMap of either name is there, whether or not its mode was read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub kube_proxy_configmap: bool,
    /// kube-proxy's masqueradeAll in the configuration its mode was read from
    /// ([`masquerade_all`]), or why that configuration does not say it to dnsfix; `None`
    /// where none was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_proxy_masquerade_all: Option<MasqueradeAll>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubeadm_kubelet: Option<KubeadmKubelet>,
    /// The cluster's version as kubeadm keeps it (`kubeadm-config`, data.ClusterConfiguration
    /// `kubernetesVersion`): which `kubelet-config-1.NN` a kubeadm before 1.24 reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubeadm_version: Option<String>,
    /// Why that versioned ConfigMap could not be read, when it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubelet_config_error: Option<String>,
    /// The `kube-dns` ConfigMap's `upstreamNameservers`: where node-cache (the upstream
    /// NodeLocal DNSCache manifest mounts that ConfigMap at /etc/kube-dns) sends what its
    /// Corefile forwards to `__PILLAR__UPSTREAM__SERVERS__`, instead of its resolv.conf
    /// (kubernetes/dns cmd/node-cache/app/configmap.go `updateCorefile` at 9aa70b8f).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kube_dns_upstreams: Vec<String>,
    /// Why the ConfigMaps could not be read, when they could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// kube-system's cluster DNS Services ([`GET_DNS_SERVICES`]); none where they were not
    /// read (kubectl failed, or a listing that does not ask).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub services: Option<Vec<DnsService>>,
    /// CoreDNS's Services outside kube-system ([`GET_DNS_SERVICES_EVERYWHERE`]); none where
    /// kubectl was refused them or found none. Where kube-system has no DNS pod and no DNS
    /// Service, the one the kubelets' clusterDNS names is [`DnsConfig::services`]
    /// ([`DnsConfig::service_elsewhere`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub services_elsewhere: Vec<DnsService>,
    /// Why a Services list of the first listing failed (kubectl's exit status and error,
    /// each list's): refused (a Role limited to kube-system may not list Services at the
    /// cluster scope) or timed out. None where every one asked for was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub services_unlisted: Option<String>,
    /// The ConfigMaps the CoreDNS pods mount ([`coredns_mounts`]): where the Corefile CoreDNS
    /// runs comes from, whatever its name. Empty where no CoreDNS pod was listed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coredns_mounts: Vec<String>,
    /// Why those of them not asked for by name could not be read, when they could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coredns_mounts_error: Option<String>,
    /// A CoreDNS pod loads a Corefile that was not read, or one dnsfix cannot name: why.
    /// Where CoreDNS forwards is then not known from the Corefiles that were read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coredns_unread: Option<String>,
    /// Where the CoreDNS containers find their Corefile and the files it imports
    /// ([`coredns_files`]).
    #[serde(skip)]
    pub coredns_files: CorednsFiles,
}

/// The CoreDNS containers' ConfigMap volumes as their pods declare them, and what those
/// ConfigMaps hold where they were read: the Corefile each loads and the files an `import`
/// in it reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CorednsFiles {
    /// Each CoreDNS pod's container as it finds its files ([`coredns_files`]), the same
    /// one once: pods of one Deployment agree, two Deployments need not.
    pub pods: Vec<CorednsPod>,
    /// Each ConfigMap read for them, by namespace and name: its data, or `None` where it
    /// is not there.
    pub data: std::collections::BTreeMap<
        (String, String),
        Option<std::collections::BTreeMap<String, String>>,
    >,
}

/// How one CoreDNS pod's container finds its Corefile and the files it imports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorednsPod {
    /// The pod, for what is said of it.
    pub pod: String,
    /// Its namespace, where the ConfigMaps it mounts are: kube-system, or that of a cluster
    /// DNS Service elsewhere ([`DnsConfig::service_elsewhere`]). A ConfigMap of the same
    /// name in another namespace (a stale kube-system `coredns` beside the Helm chart's
    /// `coredns` installed with `-n coredns`) is not the one it loads.
    pub namespace: String,
    /// The ConfigMap and key its `-conf` file is, through its volume mounts; why not
    /// known where it is not.
    pub corefile: Result<(String, String), String>,
    /// The Corefile's directory (the `-conf` argument's), where it says.
    pub base: Option<String>,
    /// Each ConfigMap volume mounted whole (no `subPath`): its path, its ConfigMap, whether
    /// that is optional, and its `items` (key, path) where it lists them.
    pub volumes: Vec<ConfigMapVolume>,
}

/// A ConfigMap volume of the CoreDNS container: the directory where its keys are files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigMapVolume {
    pub path: String,
    pub configmap: String,
    pub optional: bool,
    pub items: Option<Vec<(String, String)>>,
}

impl CorednsFiles {
    /// The files `pod` sees as [`corefile::Files`] sees them: a directory whose ConfigMap
    /// was read holds its keys (or its `items`' paths); an optional one that is not there
    /// is empty (the kubelet mounts an empty directory); any other is not known.
    pub fn files(&self, pod: &CorednsPod) -> corefile::Files {
        let dirs = pod
            .volumes
            .iter()
            .map(|v| {
                let files = match self.data.get(&(pod.namespace.clone(), v.configmap.clone())) {
                    Some(Some(data)) => Some(match &v.items {
                        Some(items) => items
                            .iter()
                            .filter_map(|(key, path)| Some((path.clone(), data.get(key)?.clone())))
                            .filter(|(path, _)| !path.contains('/'))
                            .collect(),
                        None => data.clone(),
                    }),
                    Some(None) if v.optional => Some(Default::default()),
                    _ => None,
                };
                (v.path.clone(), files)
            })
            .collect();
        corefile::Files {
            base: pod.base.clone().unwrap_or_default(),
            dirs,
        }
    }

    /// The first pod that loads key `key` of ConfigMap `configmap` in `namespace` as its
    /// Corefile: a pod loads ConfigMaps of its own namespace only.
    pub fn loading(&self, namespace: &str, configmap: &str, key: &str) -> Option<&CorednsPod> {
        self.pods.iter().find(|p| {
            p.namespace == namespace
                && p.corefile
                    .as_ref()
                    .is_ok_and(|(c, k)| c == configmap && k == key)
        })
    }
}

/// A Service in front of the cluster's DNS pods: the address ClusterFirst pods must ask.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DnsService {
    pub name: String,
    /// `spec.clusterIPs` (both families of a dual-stack Service), else `spec.clusterIP`;
    /// never a headless Service's `None`.
    pub cluster_ips: Vec<String>,
    /// Its namespace where kubectl's answer says (kube-system otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Its pods' labels (`spec.selector`) as `kubectl -l` takes them ([`label_selector`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
}

impl DnsService {
    /// Its namespace: kube-system where kubectl's answer did not say.
    pub fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or("kube-system")
    }
}

/// A `helm.sh/chart` label's chart and version (`coredns-1.46.2`: `coredns`, `1.46.2`;
/// `rke2-coredns-1.47.003`): split before the first `-` that a digit follows, a version's
/// `_` back to the `+` Helm's label wrote it for (charts/coredns templates/_helpers.tpl:33
/// at caac0316). None where it is not that shape, or holds what a shell would read.
fn chart_label(label: &str) -> Option<(String, String)> {
    let at = label
        .char_indices()
        .find(|&(i, c)| c == '-' && label[i + 1..].starts_with(|d: char| d.is_ascii_digit()))?
        .0;
    let (chart, version) = (&label[..at], &label[at + 1..]);
    let fine = |s: &str, extra: &[char]| {
        !s.is_empty()
            && s.len() <= 63
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || extra.contains(&c))
    };
    (fine(chart, &[]) && fine(version, &['_']))
        .then(|| (chart.to_owned(), version.replace('_', "+")))
}

/// The `helm upgrade` of `release` in `namespace` with the values file `file`: `helm
/// upgrade` takes the chart as well as the release (helm/helm pkg/cmd/upgrade.go:93-96 at
/// e9b85e4d: `upgrade [RELEASE] [CHART]`, `require.ExactArgs(2)`), and a `--version`, or
/// it upgrades to the chart's latest. Both are the release's, which `helm list` shows: the
/// ConfigMap's `helm.sh/chart` label (`chart`: [`Corefile::helm_chart`]) names the chart
/// that rendered the ConfigMap, a subchart where CoreDNS came in as a dependency of an
/// umbrella release, so it is given as a hint only. Without `--reuse-values`: the file holds
/// the release's values whole (`helm get values --all -o yaml`: without `-o yaml` helm
/// prints a `COMPUTED VALUES:` header line first, pkg/cmd/get_values.go).
pub fn helm_upgrade(release: &str, chart: Option<&str>, namespace: &str, file: &str) -> String {
    let list = format!("helm list -n {namespace} -f '^{release}$'");
    match chart.and_then(chart_label) {
        Some((chart, version)) => format!(
            "helm upgrade {release} CHART --version VERSION -n {namespace} -f {file}, with the CHART and VERSION {list} shows for the release (the ConfigMap's helm.sh/chart label says {chart} {version}: the release's own chart only where the release installs the CoreDNS chart itself, not where CoreDNS is a subchart of another release's chart, which an upgrade to {chart} alone would replace)"
        ),
        None => format!(
            "helm upgrade {release} CHART --version VERSION -n {namespace} -f {file}, with the CHART and VERSION {list} shows for the release"
        ),
    }
}

/// How CoreDNS's Services are asked for in every namespace (`-A`), beside kube-system's
/// ([`GET_DNS_SERVICES`]), for CoreDNS installed elsewhere: those with the same labels, and
/// those the CoreDNS Helm chart installed as cluster DNS labels: `coredns.labels` puts
/// `app.kubernetes.io/name: coredns` on its Service whatever `isClusterService`, and with
/// it true adds `k8s-app` (`k8sAppLabelOverride`, else `coredns`) and
/// `kubernetes.io/cluster-service: "true"` (coredns/helm charts/coredns
/// templates/_helpers.tpl:30-40 and service.yaml at caac0316). A chart installed with
/// `isClusterService: false` (k8gb's, k8s_gateway's CoreDNS) carries neither and is not
/// asked for. `helm install -n coredns` puts them in `coredns`. A kubeconfig whose Role is
/// limited to kube-system is refused both: then kube-system's are all there is, as before.
pub const GET_DNS_SERVICES_EVERYWHERE: [&str; 2] = [
    "get services -A -l 'k8s-app in (kube-dns,kube-dns-secondary,coredns)' -o json",
    "get services -A -l app.kubernetes.io/name=coredns,kubernetes.io/cluster-service=true -o json",
];

/// A Service's `spec.selector` as `kubectl -l` takes it (`KEY=VALUE,...`); none where it is
/// empty or a key or value is not one the API allows (a key: an optional DNS-subdomain
/// prefix and `/`, then a name; a value: a name or empty; a name: up to 63 letters,
/// digits, `-`, `_`, `.`, beginning and ending with a letter or digit), so that nothing
/// else reaches the shell.
fn label_selector(selector: &Value) -> Option<String> {
    let labels = selector.as_object().filter(|m| !m.is_empty())?;
    let mut parts = Vec::new();
    for (key, value) in labels {
        let value = value.as_str()?;
        if !label_pair(key, value) {
            return None;
        }
        parts.push(format!("{key}={value}"));
    }
    Some(parts.join(","))
}

/// One `KEY=VALUE` of a label selector, as [`label_selector`] takes it.
fn label_pair(key: &str, value: &str) -> bool {
    let name = |s: &str| {
        !s.is_empty()
            && s.len() <= 63
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && s.starts_with(|c: char| c.is_ascii_alphanumeric())
            && s.ends_with(|c: char| c.is_ascii_alphanumeric())
    };
    let (prefix, key_name) = match key.rsplit_once('/') {
        Some((prefix, key_name)) => (Some(prefix), key_name),
        None => (None, key),
    };
    name(key_name) && prefix.is_none_or(valid_pod_name) && (value.is_empty() || name(value))
}

/// A label selector as [`label_selector`] makes it (from a saved plan: it goes into a
/// kubectl command line only if it is one).
pub fn valid_label_selector(selector: &str) -> bool {
    !selector.is_empty()
        && selector.split(',').all(|part| {
            part.split_once('=')
                .is_some_and(|(key, value)| label_pair(key, value))
        })
}

/// Whether two label selectors of `key=value` pairs select the same pods: the same pairs,
/// in whatever order and however often given (the API server ANDs a selector's
/// requirements; a Service's `spec.selector` is a map, so a plan written from another
/// listing may give its pairs in another order).
pub fn same_selector(a: &Option<String>, b: &Option<String>) -> bool {
    let pairs = |s: &str| -> std::collections::BTreeSet<String> {
        s.split(',').map(|p| p.trim().to_owned()).collect()
    };
    match (a, b) {
        (Some(a), Some(b)) => pairs(a) == pairs(b),
        (None, None) => true,
        _ => false,
    }
}

/// How the cluster DNS Services are asked for: kube-system's Services with the CoreDNS
/// pods' label, `k8s-app` `kube-dns` (kubeadm's, k3s's and EKS's Service `kube-dns`,
/// Kubespray's `coredns`; the upstream NodeLocal DNSCache manifest's `kube-dns-upstream`
/// has it too: CoreDNS answers there), `kube-dns-secondary` (Kubespray's
/// `coredns-secondary`), or `coredns`, the CoreDNS Helm chart's default.
/// tests/it/kubectl_reference.rs runs it through a real kubectl.
pub const GET_DNS_SERVICES: &str =
    "get services -l 'k8s-app in (kube-dns,kube-dns-secondary,coredns)' -o json";

/// The Services in a `kubectl get services -o json` answer (a List) that serve DNS: a port
/// 53 among their `spec.ports` (the kubelet hands pods clusterDNS on port 53). The CoreDNS
/// Helm chart labels its metrics Service (`<fullname>-metrics`, port 9153 only, with
/// `prometheus.service.enabled`) as it labels the DNS one (`coredns.labels`: coredns/helm
/// charts/coredns templates/service-metrics.yaml at caac0316); its address is no cluster
/// DNS address.
pub fn parse_services(json: &[u8]) -> Result<Vec<DnsService>, String> {
    let doc: Value =
        serde_json::from_slice(json).map_err(|e| format!("kubectl's answer is not JSON: {e}"))?;
    let items = doc["items"]
        .as_array()
        .ok_or_else(|| "kubectl's answer lists no Services".to_owned())?;
    Ok(items
        .iter()
        .filter_map(|item| {
            let spec = &item["spec"];
            let ports = spec["ports"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            if !ports.iter().any(|p| p["port"] == 53) {
                return None;
            }
            let ips: Vec<String> = match spec["clusterIPs"].as_array() {
                Some(ips) => ips
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
                None => spec["clusterIP"]
                    .as_str()
                    .map(str::to_owned)
                    .into_iter()
                    .collect(),
            };
            let ips: Vec<String> = ips
                .into_iter()
                .filter(|ip| !ip.is_empty() && ip != "None")
                .collect();
            let name = item["metadata"]["name"].as_str()?.to_owned();
            let namespace = item["metadata"]["namespace"]
                .as_str()
                .filter(|n| valid_container_name(n))
                .map(str::to_owned);
            (!ips.is_empty()).then_some(DnsService {
                name,
                cluster_ips: ips,
                namespace,
                selector: label_selector(&spec["selector"]),
            })
        })
        .collect())
}

/// One Corefile of a ConfigMap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Corefile {
    /// `coredns`, or NodeLocal DNSCache's `nodelocaldns` (Kubespray) or `node-local-dns`
    /// (the upstream manifest).
    pub configmap: String,
    /// The data key: `Corefile`, or nodelocaldns's `Corefile-second`.
    pub key: String,
    /// Its ConfigMap's namespace (`metadata.namespace`), where kubectl's answer said;
    /// kube-system otherwise ([`Corefile::namespace`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Its server blocks; none where it was not read (`unreadable`).
    pub blocks: Vec<corefile::ServerBlock>,
    /// Files it imports outside its server blocks, with their lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub imports: Vec<(String, usize)>,
    /// Why dnsfix did not read it: CoreDNS would not load it as it is ([`corefile::parse`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
    /// The Helm release that owns its ConfigMap (the `meta.helm.sh/release-name`
    /// annotation Helm 3 puts on what it installs): the next `helm upgrade` (RKE2's helm
    /// controller, at the chart's next deploy) writes the chart's Corefile back over an
    /// edit, so a change belongs in the release's values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helm_release: Option<String>,
    /// That release's namespace (the `meta.helm.sh/release-namespace` annotation Helm 3
    /// writes beside its name: helm/helm pkg/action/validate.go `setMetadataVisitor` at
    /// 002ac784): where `helm get values` and `helm upgrade` find the release, whatever
    /// namespace its ConfigMap is in (`helm install -n coredns` puts the CoreDNS chart's
    /// in `coredns`: charts/coredns templates/configmap.yaml at caac0316).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helm_namespace: Option<String>,
    /// The chart that release was installed from, as its `helm.sh/chart` label says
    /// (`NAME-VERSION`, `+` written `_`: charts/coredns templates/_helpers.tpl:33 at
    /// caac0316): `helm upgrade` takes a chart beside the release ([`helm_upgrade`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helm_chart: Option<String>,
    /// Who writes its ConfigMap back over an edit, as its metadata says
    /// ([`configmap_owner`]): a Helm release, k3s's (or RKE2's) deploy controller, the
    /// addon manager. A change belongs with that owner, not in the ConfigMap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// CoreDNS's pods were listed and none loads it (its `-conf` file is another key or
    /// ConfigMap): a stale `coredns` beside a Helm release's, a second `Corefile*` key, a
    /// `coredns-custom` key. Where CoreDNS forwards is not read from it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unloaded: bool,
    /// The Corefile as read, for a plan that changes it.
    #[serde(skip)]
    pub text: String,
}

impl Corefile {
    /// The Corefile `text` of ConfigMap `configmap`'s key `key`, read.
    pub fn new(configmap: &str, key: &str, text: &str) -> Corefile {
        Corefile::with_files(configmap, key, text, &corefile::Files::default())
    }

    /// [`Corefile::new`], with the files its imports read from `files`.
    pub fn with_files(configmap: &str, key: &str, text: &str, files: &corefile::Files) -> Corefile {
        let (parsed, unreadable) = match corefile::parse_with(text, files) {
            Ok(parsed) => (parsed, None),
            Err(why) => (corefile::Parsed::default(), Some(why)),
        };
        Corefile {
            configmap: configmap.to_owned(),
            key: key.to_owned(),
            namespace: None,
            blocks: parsed.blocks,
            imports: parsed.imports,
            unreadable,
            helm_release: None,
            helm_namespace: None,
            helm_chart: None,
            owner: None,
            unloaded: false,
            text: text.to_owned(),
        }
    }

    /// [`Corefile::new`] for the ConfigMap `item` (a core/v1 ConfigMap), with its owner.
    fn of_configmap(item: &Value, key: &str, text: &str) -> Corefile {
        let name = item["metadata"]["name"].as_str().unwrap_or_default();
        let annotations = &item["metadata"]["annotations"];
        let release = annotations["meta.helm.sh/release-name"].as_str();
        let namespace = annotations["meta.helm.sh/release-namespace"].as_str();
        Corefile {
            helm_release: release.filter(|r| valid_pod_name(r)).map(str::to_owned),
            helm_namespace: namespace.filter(|n| valid_pod_name(n)).map(str::to_owned),
            helm_chart: item["metadata"]["labels"]["helm.sh/chart"]
                .as_str()
                .filter(|label| chart_label(label).is_some())
                .map(str::to_owned),
            namespace: item["metadata"]["namespace"]
                .as_str()
                .filter(|n| valid_pod_name(n))
                .map(str::to_owned),
            owner: configmap_owner(item),
            ..Corefile::new(name, key, text)
        }
    }

    /// Where it forwards names outside the cluster is known from it.
    fn root_forward_known(&self) -> bool {
        !matches!(self.root_forward(), corefile::RootForward::Unknown(_))
    }

    /// Its ConfigMap's namespace: kube-system where kubectl's answer did not say.
    pub fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or("kube-system")
    }

    /// The namespace of the Helm release that owns it: its annotation, else its
    /// ConfigMap's.
    pub fn helm_namespace(&self) -> &str {
        self.helm_namespace.as_deref().unwrap_or(self.namespace())
    }

    /// NodeLocal DNSCache's (`nodelocaldns`, `node-local-dns`); any other is CoreDNS's.
    pub fn is_node_local(&self) -> bool {
        matches!(self.configmap.as_str(), "nodelocaldns" | "node-local-dns")
    }

    /// One CoreDNS loads: not NodeLocal DNSCache's, and a listed CoreDNS pod's `-conf`
    /// (or no CoreDNS pod was listed to say otherwise).
    pub fn is_corednss(&self) -> bool {
        !self.is_node_local() && !self.unloaded
    }

    /// The block serving the root zone (`.:53`, `.`): where names outside the cluster go.
    pub fn root(&self) -> Option<&corefile::ServerBlock> {
        corefile::root_block(&self.blocks).map(|i| &self.blocks[i])
    }

    /// Where it sends names outside the cluster; unknown where it was not read.
    pub fn root_forward(&self) -> corefile::RootForward<'_> {
        match &self.unreadable {
            Some(why) => corefile::RootForward::Unknown(format!(
                "CoreDNS would not load it as dnsfix reads it: {why}"
            )),
            None => corefile::root_forward(&self.blocks, &self.imports),
        }
    }
}

/// Who writes the ConfigMap `item` back over an edit, as its metadata says, in words:
/// - Helm 3's `meta.helm.sh/release-name` annotation, or the `app.kubernetes.io/managed-by:
///   Helm` label its charts set: the next `helm upgrade` renders the chart's data again.
/// - An `objectset.rio.cattle.io/` annotation: k3s's (and RKE2's) deploy controller applied
///   it from a manifest (k3s's packaged `coredns` carries `objectset.rio.cattle.io/owner-gvk:
///   k3s.cattle.io/v1, Kind=Addon`, tests/fixtures/kubectl/k3s-coredns-configmaps.json) and
///   applies it again at every server start.
/// - The label `addonmanager.kubernetes.io/mode: Reconcile`: the addon manager (AKS, GKE,
///   RKE2's node-local-dns: rancher/rke2-charts packages/rke2-coredns
///   generated-changes/overlay/templates/configmap-nodelocal.yaml at 262e21a4) resets it to
///   its manifest. Kubespray's own ConfigMaps carry `EnsureExists`
///   (roles/kubernetes-apps/ansible/templates/coredns-config.yml.j2 at 46dbdd39), which
///   leaves an edit alone.
fn configmap_owner(item: &Value) -> Option<String> {
    let meta = &item["metadata"];
    let annotations = meta["annotations"].as_object();
    let label = |key: &str| meta["labels"][key].as_str();
    if let Some(release) = meta["annotations"]["meta.helm.sh/release-name"].as_str() {
        return Some(format!("Helm release {}", crate::text::escape(release)));
    }
    if label("app.kubernetes.io/managed-by") == Some("Helm") {
        return Some("Helm (label app.kubernetes.io/managed-by: Helm)".to_owned());
    }
    if let Some((key, value)) = annotations.and_then(|a| {
        a.iter()
            .find(|(k, _)| k.starts_with("objectset.rio.cattle.io/owner-gvk"))
            .or_else(|| {
                a.iter()
                    .find(|(k, _)| k.starts_with("objectset.rio.cattle.io/"))
            })
    }) {
        return Some(format!(
            "k3s's deploy controller (annotation {}: {})",
            crate::text::escape(key),
            crate::text::escape(value.as_str().unwrap_or_default())
        ));
    }
    (label("addonmanager.kubernetes.io/mode") == Some("Reconcile"))
        .then(|| "the addon manager (label addonmanager.kubernetes.io/mode: Reconcile)".to_owned())
}

/// The DNS settings of kubeadm's `kubelet-config` (or `kubelet-config-1.NN`) ConfigMap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KubeadmKubelet {
    /// The ConfigMap: `kubelet-config`, or `kubelet-config-1.NN` (see [`kubelet_configmap`]).
    #[serde(default = "unversioned")]
    pub configmap: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolv_conf: Option<String>,
    #[serde(default)]
    pub cluster_dns: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_domain: Option<String>,
}

/// How kube-system's DNS ConfigMaps are asked for: by name, those missing left out (a
/// List of those found, in this order); tests/it/kubectl_reference.rs runs it through a
/// real kubectl. CoreDNS's is `coredns` (kubeadm, Kubespray, k3s, the CoreDNS Helm chart
/// installed as a release whose name holds `coredns`); one of another name (RKE2's
/// [`RKE2_COREDNS`], the Helm chart's `<release>-coredns`) is found through the CoreDNS
/// pods' volumes and read after ([`Kubectl::read_mounted_corefiles`]). A name is asked
/// here only where kubeadm or Kubespray name it: a Role limited by `resourceNames` to
/// those is refused the whole call for one more.
pub const GET_CONFIGMAPS: &str = "get configmap coredns nodelocaldns \
     node-local-dns kube-proxy kube-proxy-config kubelet-config kubeadm-config kube-dns \
     --ignore-not-found -o json";

/// RKE2's CoreDNS ConfigMap: its rke2-coredns chart (rancher/rke2-charts
/// packages/rke2-coredns at 262e21a4, the CoreDNS Helm chart 1.47.0 patched) installed as
/// the release `rke2-coredns`, whose `coredns.fullname` is always `<release>-<chart>`
/// (the patch drops the chart's "release name holds the chart's name" shortening).
pub const RKE2_COREDNS: &str = "rke2-coredns-rke2-coredns";

/// A ConfigMap [`GET_CONFIGMAPS`] asks for by name.
fn asked_by_name(name: &str) -> bool {
    GET_CONFIGMAPS
        .split_whitespace()
        .skip(2)
        .take_while(|w| !w.starts_with('-'))
        .any(|w| w == name)
}

/// kubeadm's ConfigMap of the kubelets' settings from 1.24 on (kubeadm `constants.go`,
/// `KubeletBaseConfigurationConfigMap`).
const KUBELET_CONFIG: &str = "kubelet-config";

fn unversioned() -> String {
    KUBELET_CONFIG.to_owned()
}

/// The ConfigMap a kubeadm at `version` (`v1.23.17`) keeps the kubelets' settings in when
/// there is no `kubelet-config`: `kubelet-config-1.23`. Before 1.24 (and later with the
/// UnversionedKubeletConfigMap feature gate off) kubeadm names it after the cluster's
/// version, `kubernetesVersion` of the ClusterConfiguration in `kubeadm-config`, and
/// `kubeadm join` and `kubeadm upgrade node` read that one (kubeadm `constants.go`,
/// `GetKubeletConfigMapName`; `phases/kubelet/config.go`, `CreateConfigMap`). None for a
/// version that is not `vMAJOR.MINOR...` in digits.
pub fn kubelet_configmap(version: &str) -> Option<String> {
    let mut parts = version.strip_prefix('v').unwrap_or(version).split('.');
    let number = |p: &str| !p.is_empty() && p.len() <= 4 && p.bytes().all(|b| b.is_ascii_digit());
    let major = parts.next().filter(|p| number(p))?;
    let minor = parts
        .next()
        .map(|m| m.split(['-', '+']).next().unwrap_or(m))
        .filter(|p| number(p))?;
    Some(format!("{KUBELET_CONFIG}-{major}.{minor}"))
}

/// The kubelet settings in a kubelet-config ConfigMap's `kubelet` key.
fn kubeadm_kubelet(configmap: &str, yaml: &serde_norway::Value) -> KubeadmKubelet {
    let string = |k: &str| {
        yaml.get(k)
            .and_then(serde_norway::Value::as_str)
            .map(str::to_owned)
    };
    KubeadmKubelet {
        configmap: configmap.to_owned(),
        resolv_conf: string("resolvConf"),
        cluster_dns: yaml
            .get("clusterDNS")
            .and_then(serde_norway::Value::as_sequence)
            .map(|s| {
                s.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
        cluster_domain: string("clusterDomain"),
    }
}

/// kube-proxy's masqueradeAll as its configuration holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MasqueradeAll {
    /// Its value and the key it was read from: `iptables.masqueradeAll` or
    /// `nftables.masqueradeAll`.
    Read { on: bool, key: String },
    /// The configuration was read and does not say it in a way dnsfix reads: why (another
    /// apiVersion, a value that is not a boolean).
    Unread(String),
}

/// kube-proxy's masqueradeAll in its KubeProxyConfiguration: in v1alpha1, kubeadm's and
/// Kubespray's version (kubeadm-config.v1beta4.yaml.j2:520), the `nftables` section's in
/// nftables mode and the `iptables` section's in any other mode, IPVS's too
/// (kubernetes/kubernetes @91118b59 pkg/proxy/apis/config/v1alpha1/conversion.go
/// `Convert_v1alpha1_KubeProxyConfiguration_To_config_KubeProxyConfiguration`); false where
/// the key is not there (the Go bool's zero value). Unread for another version (v1alpha2
/// moves it out of the mode sections, into its Linux settings: @122e68aa
/// pkg/proxy/apis/config/v1alpha2/zz_generated.conversion.go
/// `autoConvert_v1alpha2_KubeProxyLinuxConfiguration_To_config_KubeProxyLinuxConfiguration`),
/// or a value that is not a bool: never a guess.
fn masquerade_all(config: &serde_norway::Value) -> MasqueradeAll {
    let version = config
        .get("apiVersion")
        .and_then(serde_norway::Value::as_str);
    if let Some(v) = version.filter(|v| *v != "kubeproxy.config.k8s.io/v1alpha1") {
        return MasqueradeAll::Unread(format!(
            "apiVersion {}, whose masqueradeAll dnsfix does not read (it reads kubeproxy.config.k8s.io/v1alpha1's)",
            crate::text::escape(v)
        ));
    }
    let mode = config.get("mode").and_then(serde_norway::Value::as_str);
    let section = if mode == Some("nftables") {
        "nftables"
    } else {
        "iptables"
    };
    let key = format!("{section}.masqueradeAll");
    match config.get(section).and_then(|s| s.get("masqueradeAll")) {
        None => MasqueradeAll::Read { on: false, key },
        Some(v) => match v.as_bool() {
            Some(on) => MasqueradeAll::Read { on, key },
            None => MasqueradeAll::Unread(format!(
                "{key} is {}, not a boolean",
                crate::text::escape(serde_norway::to_string(v).unwrap_or_default().trim_end())
            )),
        },
    }
}

/// The DNS configuration in a `kubectl get configmap ... -o json` answer (a List, or one
/// ConfigMap when only one was asked for).
pub fn parse_configmaps(json: &[u8]) -> Result<DnsConfig, String> {
    let doc: Value =
        serde_json::from_slice(json).map_err(|e| format!("kubectl's answer is not JSON: {e}"))?;
    let items: Vec<&Value> = match doc["items"].as_array() {
        Some(items) => items.iter().collect(),
        None if doc["kind"] == "ConfigMap" => vec![&doc],
        None => return Err("kubectl's answer has no ConfigMaps".to_owned()),
    };
    let mut config = DnsConfig::default();
    for item in items {
        let name = item["metadata"]["name"].as_str().unwrap_or_default();
        let Some(data) = item["data"].as_object() else {
            continue;
        };
        let text = |key: &str| data.get(key).and_then(Value::as_str);
        match name {
            // NodeLocal DNSCache's is `nodelocaldns` where Kubespray deploys it,
            // `node-local-dns` in the upstream manifest (cluster/addons/dns/nodelocaldns).
            "coredns" | RKE2_COREDNS | "nodelocaldns" | "node-local-dns" => {
                for (key, value) in data {
                    if let (true, Some(text)) = (key.starts_with("Corefile"), value.as_str()) {
                        config
                            .corefiles
                            .push(Corefile::of_configmap(item, key, text));
                    }
                }
            }
            // kubeadm's (and Kubespray's) configuration wins where both hold one.
            "kube-proxy" | "kube-proxy-config" => {
                config.kube_proxy_configmap = true;
                let key = if name == "kube-proxy" {
                    "config.conf"
                } else {
                    "config"
                };
                let yaml: Option<serde_norway::Value> =
                    text(key).and_then(|t| serde_norway::from_str(t).ok());
                if let Some(y) = yaml.filter(|_| config.kube_proxy_from.is_none()) {
                    config.kube_proxy_mode = Some(
                        y.get("mode")
                            .and_then(serde_norway::Value::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                    );
                    config.kube_proxy_masquerade_all = Some(masquerade_all(&y));
                    config.kube_proxy_from = Some(format!("{name} ({key})"));
                }
            }
            // kube-dns's JSON list (kubernetes/dns pkg/dns/config/sync.go
            // `updateUpstreamNameservers`).
            "kube-dns" => {
                config.kube_dns_upstreams = text("upstreamNameservers")
                    .and_then(|t| serde_json::from_str::<Vec<String>>(t).ok())
                    .unwrap_or_default();
            }
            "kubeadm-config" => {
                let yaml: Option<serde_norway::Value> =
                    text("ClusterConfiguration").and_then(|t| serde_norway::from_str(t).ok());
                config.kubeadm_version = yaml
                    .as_ref()
                    .and_then(|y| y.get("kubernetesVersion"))
                    .and_then(serde_norway::Value::as_str)
                    .map(str::to_owned);
            }
            // The unversioned ConfigMap wins: kubeadm 1.24+ reads it, and one from before
            // an upgrade stays behind.
            _ if name == KUBELET_CONFIG
                || (kubelet_configmap_name(name)
                    && config
                        .kubeadm_kubelet
                        .as_ref()
                        .is_none_or(|k| k.configmap != KUBELET_CONFIG)) =>
            {
                let yaml: Option<serde_norway::Value> =
                    text("kubelet").and_then(|t| serde_norway::from_str(t).ok());
                if let Some(yaml) = yaml {
                    config.kubeadm_kubelet = Some(kubeadm_kubelet(name, &yaml));
                }
            }
            _ => {}
        }
    }
    Ok(config)
}

/// The ConfigMaps the CoreDNS pods in a `kubectl get pods -o json` List mount (each
/// pod's `spec.volumes[].configMap.name`; not NodeLocal DNSCache's pods), in the order
/// found, each once: the chart's `config-volume` (`coredns.fullname`, coredns/helm
/// charts/coredns templates/deployment.yaml at caac031; RKE2's
/// `rke2-coredns-rke2-coredns`), kubeadm's and k3s's `coredns`, and k3s's optional
/// `coredns-custom` (manifests/coredns.yaml at 66c487bd). Only names the API allows.
pub fn coredns_mounts(json: &[u8]) -> Vec<String> {
    let Ok(doc) = serde_json::from_slice::<Value>(json) else {
        return Vec::new();
    };
    let mut names: Vec<String> = Vec::new();
    let pods = doc["items"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for pod in pods {
        let app = pod["metadata"]["labels"]["k8s-app"].as_str();
        if matches!(app, Some("node-local-dns" | "node-local-dns-second")) {
            continue;
        }
        let volumes = pod["spec"]["volumes"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        for name in volumes
            .iter()
            .filter_map(|v| v["configMap"]["name"].as_str())
        {
            if valid_pod_name(name) && !names.iter().any(|n| n == name) {
                names.push(name.to_owned());
            }
        }
    }
    names
}

/// Where the CoreDNS container of each CoreDNS pod in a `kubectl get pods -o json` List
/// (the container `coredns`, else one whose image or `-conf` flag says CoreDNS) finds files: the ConfigMap key its `-conf`
/// file is, that file's directory, and its ConfigMap volumes mounted whole (k3s's
/// `config-volume` at /etc/coredns and the optional `custom-config-volume`, ConfigMap
/// `coredns-custom`, at /etc/coredns/custom: manifests/coredns.yaml at 66c487bd). Their
/// data is read after. Pods alike are one entry.
pub fn coredns_files(json: &[u8]) -> CorednsFiles {
    let Ok(doc) = serde_json::from_slice::<Value>(json) else {
        return CorednsFiles::default();
    };
    let items = doc["items"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut pods: Vec<CorednsPod> = Vec::new();
    for pod in items.iter().filter_map(coredns_pod) {
        let alike = |p: &CorednsPod| {
            (&p.corefile, &p.base, &p.volumes) == (&pod.corefile, &pod.base, &pod.volumes)
        };
        if !pods.iter().any(alike) {
            pods.push(pod);
        }
    }
    CorednsFiles {
        pods,
        data: Default::default(),
    }
}

/// [`coredns_files`] of one pod; none for NodeLocal DNSCache's or one without containers.
fn coredns_pod(pod: &Value) -> Option<CorednsPod> {
    let app = pod["metadata"]["labels"]["k8s-app"].as_str();
    if matches!(app, Some("node-local-dns" | "node-local-dns-second")) {
        return None;
    }
    let containers = pod["spec"]["containers"].as_array()?;
    // The container `coredns` (kubeadm's, Kubespray's, the Helm chart's, k3s's), else one
    // whose image or flags say CoreDNS. A pod with neither is no CoreDNS: kube-dns's
    // (GKE; cluster/addons/dns/kube-dns: kubedns, dnsmasq and sidecar, image
    // k8s-dns-kube-dns) shares the `k8s-app: kube-dns` label and reads no Corefile.
    let is_coredns = |c: &&Value| {
        c["image"].as_str().is_some_and(|i| i.contains("coredns"))
            || ["command", "args"].iter().any(|key| {
                c[*key].as_array().is_some_and(|words| {
                    words.iter().filter_map(Value::as_str).any(|w| {
                        matches!(w, "-conf" | "--conf")
                            || w.starts_with("-conf=")
                            || w.starts_with("--conf=")
                    })
                })
            })
    };
    let container = containers
        .iter()
        .find(|c| c["name"] == "coredns")
        .or_else(|| containers.iter().find(is_coredns))?;
    let conf = conf_path(container);
    let base = conf
        .rsplit_once('/')
        .map(|(dir, _)| dir.to_owned())
        .filter(|dir| dir.starts_with('/'));
    let volumes = pod["spec"]["volumes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mounts = container["volumeMounts"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let whole = mounts
        .iter()
        .filter(|m| m["subPath"].is_null() && m["subPathExpr"].is_null())
        .filter_map(|m| {
            let volume = volumes.iter().find(|v| v["name"] == m["name"])?;
            let cm = &volume["configMap"];
            let configmap = cm["name"].as_str().filter(|n| valid_pod_name(n))?;
            Some(ConfigMapVolume {
                path: m["mountPath"].as_str()?.trim_end_matches('/').to_owned(),
                configmap: configmap.to_owned(),
                optional: cm["optional"].as_bool().unwrap_or(false),
                items: configmap_items(cm),
            })
        })
        .collect();
    Some(CorednsPod {
        pod: pod["metadata"]["name"].as_str().unwrap_or("?").to_owned(),
        namespace: pod["metadata"]["namespace"]
            .as_str()
            .filter(|n| valid_container_name(n))
            .unwrap_or("kube-system")
            .to_owned(),
        corefile: conf_configmap_key(&conf, mounts, volumes),
        base,
        volumes: whole,
    })
}

/// A ConfigMap volume source's `items` (key, path), where it lists them.
fn configmap_items(cm: &Value) -> Option<Vec<(String, String)>> {
    cm["items"].as_array().map(|items| {
        items
            .iter()
            .filter_map(|i| {
                Some((
                    i["key"].as_str()?.to_owned(),
                    i["path"].as_str()?.to_owned(),
                ))
            })
            .collect()
    })
}

/// The file CoreDNS loads as its Corefile: its `-conf` flag (Go's flag package also takes
/// `--conf`, `-conf=`), in the container's `command` after the binary or its `args`; else
/// `Corefile` in its working directory (coredns/coredns coremain/run.go at 4b26cced: the
/// default loader reads caddy.DefaultConfigFile, `Corefile`, from the current directory;
/// the image's WORKDIR is / in its Dockerfile).
fn conf_path(container: &Value) -> String {
    let words = |key: &str| -> Vec<&str> {
        container[key]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    };
    let command = words("command");
    let mut flags: Vec<&str> = command.iter().skip(1).copied().collect();
    flags.extend(words("args"));
    let mut conf = None;
    let mut it = flags.iter();
    while let Some(word) = it.next() {
        match word.trim_start_matches('-').split_once('=') {
            Some(("conf", value)) if word.starts_with('-') => conf = Some(value.to_owned()),
            None if matches!(*word, "-conf" | "--conf") => {
                conf = it.next().map(|v| (*v).to_owned());
            }
            _ => {}
        }
    }
    let conf = conf.unwrap_or_else(|| "Corefile".to_owned());
    if conf.starts_with('/') {
        return conf;
    }
    let dir = container["workingDir"].as_str().unwrap_or("/");
    format!("{}/{conf}", dir.trim_end_matches('/'))
}

/// The ConfigMap and key of the file at `path` in a container with these volume `mounts`
/// (of the pod's `volumes`): the mount that holds it (the deepest), a ConfigMap volume
/// whose key (or `items` entry) is that file. Why not, where it is none.
fn conf_configmap_key(
    path: &str,
    mounts: &[Value],
    volumes: &[Value],
) -> Result<(String, String), String> {
    let shown = crate::text::escape(path);
    let within = |m: &&Value| {
        let at = m["mountPath"]
            .as_str()
            .unwrap_or_default()
            .trim_end_matches('/');
        path == at || path.strip_prefix(at).is_some_and(|r| r.starts_with('/'))
    };
    let Some(mount) = mounts.iter().filter(within).max_by_key(|m| {
        m["mountPath"]
            .as_str()
            .unwrap_or_default()
            .trim_end_matches('/')
            .len()
    }) else {
        return Err(format!("its Corefile {shown} is in no volume it mounts"));
    };
    let at = mount["mountPath"]
        .as_str()
        .unwrap_or_default()
        .trim_end_matches('/');
    let volume = volumes.iter().find(|v| v["name"] == mount["name"]);
    let cm = volume.map(|v| &v["configMap"]).filter(|cm| cm.is_object());
    let Some(configmap) = cm
        .and_then(|cm| cm["name"].as_str())
        .filter(|n| valid_pod_name(n))
    else {
        return Err(format!(
            "its Corefile {shown} is in a volume of no ConfigMap"
        ));
    };
    let cm = cm.unwrap_or(&Value::Null);
    // A file mount (`subPath`) is the volume's file of that name; a directory mount holds
    // the volume's files under it.
    let file = match mount["subPath"].as_str().filter(|s| !s.is_empty()) {
        Some(sub) if path == at => sub.to_owned(),
        Some(_) => return Err(format!("its Corefile {shown} is under a file mount")),
        None if !mount["subPathExpr"].is_null() => {
            return Err(format!("its Corefile {shown} is in a subPathExpr mount"));
        }
        None => path
            .strip_prefix(at)
            .unwrap_or_default()
            .trim_start_matches('/')
            .to_owned(),
    };
    let key = match configmap_items(cm) {
        Some(items) => items.into_iter().find(|(_, p)| *p == file).map(|(k, _)| k),
        None => Some(file).filter(|f| !f.contains('/') && !f.is_empty()),
    };
    key.map(|key| (configmap.to_owned(), key))
        .ok_or_else(|| format!("its Corefile {shown} is no key of ConfigMap {configmap}"))
}

/// The Corefiles (keys `Corefile...`) of the ConfigMaps in a `kubectl get configmap ...
/// -o json` answer (a List, or one ConfigMap) that are among `names`.
pub(crate) fn mounted_corefiles(json: &[u8], names: &[String]) -> Result<Vec<Corefile>, String> {
    let doc: Value =
        serde_json::from_slice(json).map_err(|e| format!("kubectl's answer is not JSON: {e}"))?;
    let items: Vec<&Value> = match doc["items"].as_array() {
        Some(items) => items.iter().collect(),
        None if doc["kind"] == "ConfigMap" => vec![&doc],
        None => return Err("kubectl's answer has no ConfigMaps".to_owned()),
    };
    let mut corefiles = Vec::new();
    for item in items {
        let name = item["metadata"]["name"].as_str().unwrap_or_default();
        let Some(data) = item["data"]
            .as_object()
            .filter(|_| names.iter().any(|n| n == name))
        else {
            continue;
        };
        for (key, value) in data {
            if let (true, Some(text)) = (key.starts_with("Corefile"), value.as_str()) {
                corefiles.push(Corefile::of_configmap(item, key, text));
            }
        }
    }
    Ok(corefiles)
}

/// `kubelet-config-MAJOR.MINOR`, as [`kubelet_configmap`] names it.
fn kubelet_configmap_name(name: &str) -> bool {
    name.strip_prefix(KUBELET_CONFIG)
        .and_then(|v| v.strip_prefix('-'))
        .is_some_and(|v| kubelet_configmap(v).as_deref() == Some(name))
}

/// Each ConfigMap's string data in a `kubectl get configmap ... -o json` answer, by name.
fn configmap_data(
    json: &[u8],
) -> std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>> {
    let doc: Value = serde_json::from_slice(json).unwrap_or_default();
    let items: Vec<&Value> = match doc["items"].as_array() {
        Some(items) => items.iter().collect(),
        None => vec![&doc],
    };
    items
        .into_iter()
        .filter_map(|item| {
            let name = item["metadata"]["name"].as_str()?.to_owned();
            let data = item["data"].as_object().map(|data| {
                data.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect()
            });
            Some((name, data.unwrap_or_default()))
        })
        .collect()
}

impl DnsConfig {
    /// CoreDNS's Corefiles read again with the files their imports read
    /// ([`DnsConfig::coredns_files`]), as the pod that loads each sees them (else the
    /// first pod): k3s imports `coredns-custom`'s `*.override` files into its `.:53` block,
    /// before its `forward .` since the fix of k3s-io/k3s#12979.
    fn read_imports(&mut self) {
        let files = &self.coredns_files;
        for c in self.corefiles.iter_mut().filter(|c| !c.is_node_local()) {
            if c.imports.is_empty() && c.unreadable.is_none() && c.root_forward_known() {
                continue;
            }
            let Some(pod) = files
                .loading(c.namespace(), &c.configmap, &c.key)
                .or(files.pods.iter().find(|p| p.namespace == c.namespace()))
            else {
                continue;
            };
            let (release, owner) = (c.helm_release.take(), c.owner.take());
            *c = Corefile {
                helm_release: release,
                helm_namespace: c.helm_namespace.take(),
                helm_chart: c.helm_chart.take(),
                namespace: c.namespace.take(),
                owner,
                ..Corefile::with_files(&c.configmap, &c.key, &c.text, &files.files(pod))
            };
        }
    }

    /// Which Corefiles CoreDNS loads, where its pods were listed: each pod's `-conf`
    /// through its volume mounts names one ConfigMap key; any other Corefile read is
    /// [`Corefile::unloaded`], and a pod whose Corefile was not read (or cannot be named)
    /// is said in [`DnsConfig::coredns_unread`]. Where no pod was listed, every Corefile
    /// but NodeLocal DNSCache's counts as CoreDNS's, as its ConfigMap's name says.
    fn mark_loaded(&mut self) {
        let pods = &self.coredns_files.pods;
        if pods.is_empty() {
            return;
        }
        for c in self.corefiles.iter_mut().filter(|c| !c.is_node_local()) {
            c.unloaded = self
                .coredns_files
                .loading(c.namespace(), &c.configmap, &c.key)
                .is_none();
        }
        let unread: Vec<String> = pods
            .iter()
            .filter_map(|p| match &p.corefile {
                Err(why) => Some(format!("pod {}: {why}", crate::text::escape(&p.pod))),
                Ok((configmap, key)) => (!self.corefiles.iter().any(|c| {
                    (c.namespace(), &c.configmap, &c.key) == (p.namespace.as_str(), configmap, key)
                }))
                .then(|| {
                    format!(
                        "pod {} loads key {} of ConfigMap {configmap}, which was not read",
                        crate::text::escape(&p.pod),
                        crate::text::escape(key)
                    )
                }),
            })
            .collect();
        self.coredns_unread = (!unread.is_empty()).then(|| unread.join("; "));
    }

    /// The ConfigMaps to ask for by name where no CoreDNS pod leads to one: RKE2's
    /// [`RKE2_COREDNS`] (its chart's `coredns.fullname`, always that name), once no CoreDNS
    /// pod was listed (its Deployment scaled to zero, its pods evicted) and the first
    /// listing read no CoreDNS Corefile (`coredns`). Not in the first listing's batch:
    /// a Role limited by `resourceNames` to kubeadm's and Kubespray's names would be refused
    /// the whole batch for it. Not with pods listed either: then the pods' volumes say which
    /// ConfigMap CoreDNS loads, and a stale one of this name must not count
    /// ([`DnsConfig::mark_loaded`]). Read, it counts as CoreDNS's by its name, as `coredns`
    /// does where no pod was listed.
    fn unled_names(&self) -> Vec<String> {
        let led = !self.coredns_files.pods.is_empty() || !self.coredns_mounts.is_empty();
        let found = self.corefiles.iter().any(|c| !c.is_node_local());
        if led || found || self.error.is_some() {
            return Vec::new();
        }
        vec![RKE2_COREDNS.to_owned()]
    }

    /// The cluster DNS Service outside kube-system whose pods are CoreDNS's, where kube-system
    /// has neither a DNS pod (`home`: CoreDNS's, kube-dns's) nor a DNS Service (its
    /// Services were read, and none is there): the CoreDNS Helm chart installed in a
    /// namespace of its own (`helm install -n coredns`, its Service given the address the
    /// kubelets' clusterDNS names). Chosen only by that address, as kubeadm's kubelet-config
    /// gives it as clusterDNS (behind NodeLocal DNSCache, where that is the cache's address,
    /// the one the cache forwards the cluster domain to: [`DnsConfig::cache_forward`]):
    /// other CoreDNS charts run outside kube-system too without
    /// being the cluster's DNS (k8gb's, k8s_gateway's, ExternalDNS's CoreDNS, installed
    /// with `isClusterService: false`), so neither the first nor any but the one the
    /// kubelets ask is taken. None without a selector: no pods are behind it.
    /// Where Services elsewhere were seen and none is taken, why, naming them.
    fn service_elsewhere(&self, home: bool) -> Result<&DnsService, Option<String>> {
        let empty = self.services.as_ref().is_some_and(Vec::is_empty);
        if home
            || !empty
            || !self.coredns_files.pods.is_empty()
            || self.services_elsewhere.is_empty()
        {
            return Err(None);
        }
        let seen = self
            .services_elsewhere
            .iter()
            .map(|s| format!("{}/{} {}", s.namespace(), s.name, s.cluster_ips.join(", ")))
            .collect::<Vec<_>>()
            .join("; ");
        let kubelets = self
            .kubeadm_kubelet
            .as_ref()
            .map(|k| k.cluster_dns.as_slice())
            .unwrap_or_default();
        // Behind NodeLocal DNSCache the kubelets ask the cache, which sends the cluster's
        // names on to the cluster DNS Service: that address is the one to match.
        let (cluster_dns, given) = match self.cache_forward(kubelets) {
            Some((to, block)) => (
                to,
                format!(
                    "the address NodeLocal DNSCache forwards the cluster domain to ({block}), kubeadm's kubelet-config giving the cache's as clusterDNS"
                ),
            ),
            None => (
                kubelets.to_vec(),
                "the address kubeadm's kubelet-config gives as clusterDNS".to_owned(),
            ),
        };
        let matching: Vec<&DnsService> = self
            .services_elsewhere
            .iter()
            .filter(|s| {
                s.cluster_ips
                    .iter()
                    .any(|ip| cluster_dns.iter().any(|c| same_address(c, ip)))
            })
            .collect();
        let why = match (cluster_dns.as_slice(), matching.as_slice()) {
            ([], _) => "no kubeadm kubelet-config gives the kubelets' clusterDNS to match their addresses with".to_owned(),
            (_, []) => format!("none has {given} ({})", cluster_dns.join(", ")),
            (_, [one]) if one.selector.is_some() => return Ok(one),
            (_, [one]) => format!(
                "{}/{}, at the kubelets' clusterDNS, selects no pods with labels dnsfix can pass to kubectl",
                one.namespace(),
                one.name
            ),
            (_, _) => format!("several have {given} ({})", cluster_dns.join(", ")),
        };
        Err(Some(format!(
            "kube-system has no CoreDNS pod and no DNS Service; CoreDNS's Services elsewhere ({seen}) are not taken for the cluster DNS Service: {why}"
        )))
    }

    /// Where NodeLocal DNSCache sends the cluster's names, when the kubelets' clusterDNS
    /// (`kubelets`) is the cache's address: the `forward .` addresses of the server block of
    /// its ConfigMap (Kubespray's `nodelocaldns`, the upstream manifest's `node-local-dns`,
    /// both read with the first listing) that serves the cluster domain (kubeadm's
    /// clusterDomain, else `cluster.local`) on port 53 and binds a clusterDNS address, with
    /// that block for the evidence. Kubespray renders `{{ dns_domain }}:53 { ... bind
    /// {{ nodelocaldns_ip }} forward . {{ forwardTarget }} ... }`, forwardTarget the
    /// CoreDNS Service's address, `manual_dns_server` with `dns_mode: manual`
    /// (kubernetes-sigs/kubespray 46dbdd39 roles/kubernetes-apps/ansible/templates/
    /// nodelocaldns-config.yml.j2:35-49, tasks/main.yml:58-70). The upstream manifest's
    /// `forward . __PILLAR__CLUSTER__DNS__` (kubernetes/kubernetes cluster/addons/dns/
    /// nodelocaldns/nodelocaldns.yaml), filled in by node-cache from its kube-system
    /// `kube-dns-upstream` Service, is no address: none.
    fn cache_forward(&self, kubelets: &[String]) -> Option<(Vec<String>, String)> {
        let domain = self
            .kubeadm_kubelet
            .as_ref()
            .and_then(|k| k.cluster_domain.as_deref())
            .unwrap_or("cluster.local")
            .trim_end_matches('.');
        let serves_domain = |zone: &str| {
            let zone = zone.strip_prefix("dns://").unwrap_or(zone);
            let (name, port) = zone.rsplit_once(':').unwrap_or((zone, "53"));
            port == "53" && name.trim_end_matches('.').eq_ignore_ascii_case(domain)
        };
        self.corefiles
            .iter()
            .filter(|c| c.is_node_local())
            .flat_map(|c| c.blocks.iter().map(move |b| (c, b)))
            .filter(|(_, b)| {
                b.bind
                    .iter()
                    .any(|a| kubelets.iter().any(|k| same_address(a, k)))
            })
            .filter(|(_, b)| b.zones.iter().any(|z| serves_domain(z)))
            .find_map(|(c, b)| {
                let to: Vec<String> = b
                    .forward
                    .as_ref()?
                    .to
                    .iter()
                    .filter_map(|t| dns_address(t))
                    .map(|ip| ip.to_string())
                    .collect();
                (!to.is_empty()).then(|| {
                    (
                        to,
                        format!(
                            "kube-system/{} {}, {} line {}",
                            c.configmap,
                            c.key,
                            crate::text::escape(&b.zones.join(" ")),
                            b.line
                        ),
                    )
                })
            })
    }

    /// The versioned kubelet-config ConfigMap to read after the first listing: on a kubeadm
    /// cluster (it has `kubeadm-config`) without `kubelet-config`.
    fn versioned_kubelet_configmap(&self) -> Option<String> {
        if self.kubeadm_kubelet.is_some() || self.error.is_some() {
            return None;
        }
        kubelet_configmap(self.kubeadm_version.as_deref()?)
    }
}

/// What the plan knows of the cluster for one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeView {
    /// The cluster was read through `via`: the node's names and the DNS pods on it.
    Read {
        via: String,
        names: Vec<String>,
        pods: Vec<DnsPod>,
    },
    /// The cluster could not be read: why.
    Unavailable { reason: String },
}

impl Cluster {
    /// The view of the node with these `names` ([`node_names`]): its DNS pods, those of
    /// CoreDNS found elsewhere too (apply recreates each in its namespace).
    pub fn node_view(&self, names: Vec<String>) -> NodeView {
        match self {
            Cluster::Read { via, pods, .. } => NodeView::Read {
                via: via.clone(),
                pods: pods
                    .iter()
                    .filter(|p| names.contains(&p.node))
                    .cloned()
                    .collect(),
                names,
            },
            Cluster::Unavailable { reason } => NodeView::Unavailable {
                reason: reason.clone(),
            },
        }
    }
}

impl DnsPod {
    /// Its namespace: kube-system unless it was found elsewhere.
    pub fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or("kube-system")
    }

    /// A NodeLocal DNSCache pod (a DaemonSet's, so its replacement comes up on its node),
    /// primary or secondary.
    pub fn is_node_local(&self) -> bool {
        self.app.starts_with("nodelocaldns")
    }

    /// It answers DNS now. Kubespray's secondary nodelocaldns is not asked whether it is
    /// Ready: its readiness (and liveness) probe asks the primary's health port
    /// (nodelocaldns-second-daemonset.yml.j2 probes nodelocaldns_health_port; its own
    /// Corefile's health plugin listens on nodelocaldns_second_health_port), so it turns
    /// NotReady exactly when the primary is down, while it still answers on port 53. Its
    /// container running counts.
    pub fn serving(&self) -> bool {
        if self.app == "nodelocaldns-secondary" {
            self.running
        } else {
            self.ready && self.waiting.is_none()
        }
    }

    /// Its phase is terminal (`Failed`, `Succeeded`): it never runs again, its controller
    /// has made another. The kubelet leaves a Deployment's pods `Failed` after a graceful
    /// node shutdown (kubernetes/kubernetes#98012; Kubespray turns that on with
    /// kubelet_shutdown_grace_period) until the pod garbage collector removes them.
    pub fn ended(&self) -> bool {
        matches!(self.phase.as_str(), "Failed" | "Succeeded")
    }

    /// The evidence line of the pod as kubectl on `via` listed it: "pod NS/NAME (APP) on
    /// node NODE: STATE (kubectl on VIA)".
    pub fn seen(&self, via: &str) -> String {
        format!(
            "pod {}/{} ({}) on node {}: {} (kubectl on {via})",
            self.namespace(),
            self.name,
            self.app,
            self.node,
            self.state()
        )
    }

    /// "ready", "CrashLoopBackOff, 12 restarts, loop detected".
    pub fn state(&self) -> String {
        if self.ready {
            return "ready".to_owned();
        }
        let mut parts = vec![self.waiting.clone().unwrap_or_else(|| {
            if self.phase.is_empty() {
                "not ready".to_owned()
            } else {
                format!("{}, not ready", self.phase)
            }
        })];
        if self.restarts > 0 {
            parts.push(format!("{} restarts", self.restarts));
        }
        if self.loop_detected.is_some() {
            parts.push("loop detected".to_owned());
        }
        parts.join(", ")
    }
}

/// A session to where kubectl answered: a control-plane host, or this machine. It keeps
/// kubectl's answers about the whole cluster up to [`OutputCap::KUBECTL`], not a node's
/// [`OutputCap::NODE`].
#[derive(Debug)]
pub struct Kubectl {
    target: Target,
    session: Session,
    /// Sets kubectl and its kubeconfig as "$@".
    prologue: String,
    /// For reports: the inventory host, or "this machine (--kubeconfig FILE)".
    via: String,
    /// kube-system's DNS ConfigMaps, read with the first listing (for [`read`]).
    config: Option<DnsConfig>,
    /// The loop lines of the pods whose previous logs came with the first listing
    /// ([`Listing::WithLogs`]), by pod.
    logs: LoopLines,
    /// The nodes' kubelet versions, read with the first listing ([`Listing::WithLogs`]).
    kubelets: Kubelets,
    /// What [`recreate_node_pods`] left as it was without failing, and why, for the report
    /// ([`Kubectl::take_notes`]).
    notes: Vec<String>,
}

/// Each node's kubelet version, by node name.
pub type Kubelets = std::collections::BTreeMap<String, String>;

/// Each pod's previous log, read, by pod.
type LoopLines = std::collections::HashMap<String, PreviousLog>;

/// A pod's previous log as asked for: from which container, and its loop line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct PreviousLog {
    /// The container named with `-c` (None: kubectl's choice).
    container: Option<String>,
    /// The loop plugin's fatal line (None: the log has none, or was not read).
    loop_line: Option<String>,
    /// Why the log was not read; None: read.
    unread: Option<Unread>,
}

/// Why a pod's previous log was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Unread {
    /// Its kubectl was not started: the exec's time for logs ran out first. Asked again in
    /// an exec of its own.
    NotStarted,
    /// kubectl failed or timed out, or the exec did: why.
    Failed(String),
}

impl Unread {
    fn why(&self) -> String {
        match self {
            Unread::NotStarted => {
                "not asked: the time for reading logs ran out (--command-timeout)".to_owned()
            }
            Unread::Failed(why) => why.clone(),
        }
    }
}

/// What the first listing reads beside the DNS pods and their ConfigMaps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// Nothing more: what apply needs to recreate pods and swap a ConfigMap key.
    Pods,
    /// The previous logs of the pods that restarted, and each node's kubelet version,
    /// for [`read`]: the logs chosen on the node from kubectl's answer, so a plan reads
    /// the cluster in one exec, not two.
    WithLogs,
    /// The DNS Services too (kube-system's and CoreDNS's everywhere), in the same exec: for
    /// apply to confirm that a plan's CoreDNS outside kube-system is the cluster DNS
    /// ([`Kubectl::confirm_elsewhere`]).
    WithServices,
}

/// Why [`Kubectl::confirm_elsewhere`] did not confirm a plan's CoreDNS outside kube-system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unconfirmed {
    /// The Services could not be listed: the cluster DNS Service is not known, which is no
    /// sign of a stale plan.
    Unlisted(String),
    /// The cluster shows another cluster DNS Service, or none: the plan is stale.
    Moved(String),
}

impl Unconfirmed {
    /// Why the namespace is not confirmed, without what apply made of it: a refusal
    /// says "refused, nothing deleted" after it ([`Unconfirmed`]'s `Display`); a namespace
    /// only of the plan's other nodes, left out on a node, says what was done there.
    pub fn cause(&self) -> &str {
        match self {
            Unconfirmed::Unlisted(why) | Unconfirmed::Moved(why) => why,
        }
    }
}

impl std::fmt::Display for Unconfirmed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: refused, nothing deleted", self.cause())
    }
}

impl Kubectl {
    /// kubectl where `access` says, once it lists the DNS pods (the listing is returned:
    /// the caller's first look at them, without another round trip); why not otherwise.
    pub async fn connect(
        transport: &Transport,
        access: &Access,
    ) -> Result<(Kubectl, Vec<DnsPod>), String> {
        Kubectl::connect_with(transport, access, Listing::Pods).await
    }

    /// [`Kubectl::connect`], the first listing reading what `listing` says.
    pub async fn connect_with(
        transport: &Transport,
        access: &Access,
        listing: Listing,
    ) -> Result<(Kubectl, Vec<DnsPod>), String> {
        match access {
            Access::ControlPlane(hosts) => {
                Kubectl::on_control_plane(transport, hosts, listing).await
            }
            Access::Kubeconfig(path) => Kubectl::here(transport, path, listing).await,
        }
    }

    /// kubectl on this machine with `kubeconfig`, as the user dnsfix runs as.
    async fn here(
        transport: &Transport,
        kubeconfig: &std::path::Path,
        listing: Listing,
    ) -> Result<(Kubectl, Vec<DnsPod>), String> {
        let via = format!("this machine (--kubeconfig {})", kubeconfig.display());
        let target = Target {
            host: "localhost".to_owned(),
            connection: crate::inventory::Connection {
                kind: crate::inventory::ConnectionKind::Local,
                address: "localhost".to_owned(),
                port: None,
                user: None,
                private_key: None,
                become_root: false,
                become_method: None,
                ssh_args: Vec::new(),
                ssh_args_from: Vec::new(),
                refused: None,
            },
        };
        let mut session = transport
            .connect(&target)
            .await
            .map_err(|e| format!("{via}: {e}"))?;
        session.set_output_cap(OutputCap::KUBECTL);
        let mut kubectl = Kubectl {
            target,
            session,
            prologue: local_prologue(kubeconfig),
            via: via.clone(),
            config: None,
            logs: LoopLines::new(),
            kubelets: Kubelets::new(),
            notes: Vec::new(),
        };
        match kubectl.first_listing(listing).await {
            Ok(pods) => Ok((kubectl, pods)),
            Err(e) => {
                kubectl.close().await;
                Err(format!("{via}: {e}"))
            }
        }
    }

    /// The first of the `control_plane` hosts where kubectl lists the DNS pods; why not,
    /// per host.
    async fn on_control_plane(
        transport: &Transport,
        control_plane: &[Host],
        listing: Listing,
    ) -> Result<(Kubectl, Vec<DnsPod>), String> {
        if control_plane.is_empty() {
            return Err(
                "the inventory has no kube_control_plane host to run kubectl on".to_owned(),
            );
        }
        let mut why = Vec::new();
        for host in control_plane {
            let target = Target {
                host: host.name.clone(),
                connection: host.connection(),
            };
            let mut session = match transport.connect(&target).await {
                Ok(s) => s,
                Err(e) => {
                    why.push(format!("{}: {e}", host.name));
                    continue;
                }
            };
            session.set_output_cap(OutputCap::KUBECTL);
            let mut kubectl = Kubectl {
                via: host.name.clone(),
                target,
                session,
                prologue: KUBECTL.to_owned(),
                config: None,
                logs: LoopLines::new(),
                kubelets: Kubelets::new(),
                notes: Vec::new(),
            };
            match kubectl.first_listing(listing).await {
                Ok(pods) => return Ok((kubectl, pods)),
                Err(e) => {
                    why.push(format!("{}: {e}", host.name));
                    kubectl.close().await;
                }
            }
        }
        Err(why.join("; "))
    }

    /// Where kubectl runs: the inventory host, or this machine.
    pub fn via(&self) -> &str {
        &self.via
    }

    /// What [`recreate_node_pods`] left as it was without failing (a pod being deleted),
    /// each a line for the report's notes.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    pub async fn close(self) {
        self.session.close().await;
    }

    /// Runs kubectl with `args`; its standard output, or its error.
    async fn run(&mut self, args: &str) -> Result<Vec<u8>, String> {
        self.run_in("kube-system", args).await
    }

    /// [`Kubectl::run`] against `namespace`.
    async fn run_in(&mut self, namespace: &str, args: &str) -> Result<Vec<u8>, String> {
        if !valid_container_name(namespace) {
            return Err(format!(
                "{}: not a namespace",
                crate::text::escape(namespace)
            ));
        }
        let script = kubectl_in(&self.prologue, namespace, args, self.request_secs());
        self.exec(&script).await
    }

    /// What one kubectl call asks the API server for: [`ReadBudget::read`], so the call
    /// ends within the command timeout.
    fn request_secs(&self) -> u64 {
        ReadBudget::within(self.session.command_timeout()).read
    }

    /// CoreDNS's pods behind `service`, a cluster DNS Service outside kube-system
    /// ([`DnsConfig::service_elsewhere`]): listed in its namespace by its selector (the
    /// pods a Service sends to are those of its namespace that its selector matches), each
    /// with that namespace; what they mount goes into `config` as kube-system's CoreDNS
    /// pods' would. Where kubectl fails, or no pod is behind it, why in
    /// [`DnsConfig::coredns_unread`]: where CoreDNS forwards is then not known.
    async fn read_elsewhere(
        &mut self,
        config: &mut DnsConfig,
        service: &DnsService,
    ) -> Vec<DnsPod> {
        let namespace = service.namespace().to_owned();
        let shown = format!("{namespace}/{}", service.name);
        let Some(selector) = &service.selector else {
            return Vec::new();
        };
        let listed = self
            .run_in(&namespace, &format!("get pods -l '{selector}' -o json"))
            .await
            .and_then(|out| Ok((coredns_pods(&out)?, out)));
        let (mut pods, out) = match listed {
            Ok(listed) => listed,
            Err(e) => {
                config.coredns_unread = Some(format!(
                    "the cluster DNS Service {shown} is outside kube-system, and its pods could not be listed there: {e}"
                ));
                return Vec::new();
            }
        };
        if pods.is_empty() {
            config.coredns_unread = Some(format!(
                "the cluster DNS Service {shown} is outside kube-system, and no pod is behind it ({selector})"
            ));
        }
        for pod in &mut pods {
            pod.namespace = Some(namespace.clone());
            pod.selector = Some(selector.clone());
        }
        config.coredns_mounts = coredns_mounts(&out);
        config.coredns_files = coredns_files(&out);
        for pod in &mut config.coredns_files.pods {
            pod.namespace.clone_from(&namespace);
        }
        pods
    }

    /// Runs a script around kubectl (as root on the control-plane host); its standard
    /// output, or its error: kubectl's stderr, escaped, when it failed.
    async fn exec(&mut self, script: &str) -> Result<Vec<u8>, String> {
        let started = std::time::Instant::now();
        let out = run_as_root(&mut self.session, &self.target, script)
            .await
            .map_err(|e| e.to_string())?;
        if out.exit_status != Some(0) {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let stderr = stderr.trim();
            let bound = self.request_secs() + GRACE;
            // KILL or TERM before timeout(1) would have sent it: something else's (the
            // kernel's out-of-memory killer), not a call that did not answer.
            let early = started.elapsed() < Duration::from_secs(bound.saturating_sub(1));
            return Err(match out.exit_status {
                Some(status @ (137 | 143)) if early => format!(
                    "kubectl was killed (exit status {status}) after {}s{}",
                    started.elapsed().as_secs(),
                    if stderr.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", crate::text::escape(stderr))
                    }
                ),
                // timeout(1) ended it ([`ReadBudget::bounded`]): what it printed, if
                // anything, is cut short.
                Some(124 | 137 | 143) => {
                    let said = if stderr.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", crate::text::escape(stderr))
                    };
                    format!("kubectl did not answer within {bound}s{said}")
                }
                _ if stderr.is_empty() => {
                    format!("kubectl exited with {:?}", out.exit_status)
                }
                _ => crate::text::escape(stderr).into_owned(),
            });
        }
        Ok(out.stdout)
    }

    /// The DNS pods, and the DNS ConfigMaps kept for [`read`], in one exec: the two
    /// kubectl run side by side. Only the pods' listing decides whether kubectl works
    /// here; the ConfigMaps' failure is kept as their error. With [`Listing::WithLogs`]
    /// the previous logs of the pods that restarted are read in the same exec and kept
    /// for [`Kubectl::with_logs`].
    async fn first_listing(&mut self, listing: Listing) -> Result<Vec<DnsPod>, String> {
        let boundary = crate::util::nonce();
        let budget = ReadBudget::within(self.session.command_timeout());
        let script = listing_script(&self.prologue, &boundary, listing, budget);
        let out = self.exec(&script).await?;
        let mut parts = split_listing(&out, &boundary);
        parts.config.coredns_mounts = coredns_mounts(parts.pods);
        parts.config.coredns_files = coredns_files(parts.pods);
        self.config = Some(parts.config);
        self.logs = parts.logs;
        self.kubelets = parts.kubelets;
        parse_pods(parts.pods)
    }

    /// kubeadm's versioned kubelet-config ConfigMap `name` into `config` (nothing when the
    /// cluster has none; why not, when kubectl fails). A second round trip, only on a kubeadm
    /// cluster from before 1.24: the first listing cannot know the name before it has read
    /// the cluster's version.
    async fn read_kubelet_config(&mut self, config: &mut DnsConfig, name: &str) {
        let read = self
            .run(&format!("get configmap {name} --ignore-not-found -o json"))
            .await;
        match read {
            // --ignore-not-found: nothing at all when there is no such ConfigMap.
            Ok(out) if out.trim_ascii().is_empty() => {}
            Ok(out) => match parse_configmaps(&out) {
                Ok(read) => config.kubeadm_kubelet = read.kubeadm_kubelet,
                Err(e) => config.kubelet_config_error = Some(format!("{name}: {e}")),
            },
            Err(e) => config.kubelet_config_error = Some(format!("{name}: {e}")),
        }
    }

    /// The Corefiles of the ConfigMaps the CoreDNS pods mount that the first listing did
    /// not ask for by name (the CoreDNS Helm chart's `<release>-coredns`), into `config`:
    /// a second round trip, only where there are such. Why not, when kubectl fails.
    /// Where no CoreDNS pod was listed to lead to its ConfigMap and the first listing
    /// found no CoreDNS Corefile, RKE2's [`RKE2_COREDNS`] is asked for by name
    /// ([`DnsConfig::unled_names`]).
    /// CoreDNS's pods found elsewhere ([`DnsConfig::service_elsewhere`]) mount ConfigMaps
    /// of their `namespace`: there every one is asked for.
    async fn read_mounted_corefiles(&mut self, config: &mut DnsConfig, namespace: &str) {
        let home = namespace == "kube-system";
        let mut names: Vec<String> = config
            .coredns_mounts
            .iter()
            .filter(|n| !home || !asked_by_name(n))
            .cloned()
            .collect();
        if home {
            names.extend(config.unled_names());
        }
        if names.is_empty() || (home && config.error.is_some()) {
            return;
        }
        let get = |names: &[String]| {
            format!(
                "get configmap {} --ignore-not-found -o json",
                names.join(" ")
            )
        };
        // A Role limited by resourceNames refuses the whole call for one name it does not
        // grant (an optional coredns-custom beside the chart's Corefile): then each is
        // asked alone, so the refusal costs that name only.
        let mut reads = vec![(names.clone(), self.run_in(namespace, &get(&names)).await)];
        if names.len() > 1 && reads[0].1.is_err() {
            reads.clear();
            for name in &names {
                let one = std::slice::from_ref(name);
                reads.push((one.to_vec(), self.run_in(namespace, &get(one)).await));
            }
        }
        let mut errors = Vec::new();
        for (names, read) in reads {
            let out = match read {
                Ok(out) if out.trim_ascii().is_empty() => {
                    b"{\"kind\":\"List\",\"items\":[]}".to_vec()
                }
                Ok(out) => out,
                Err(e) => {
                    errors.push(format!("{}: {e}", names.join(", ")));
                    continue;
                }
            };
            match mounted_corefiles(&out, &names) {
                // Those of `namespace`, whether or not kubectl's answer says so.
                Ok(found) => config.corefiles.extend(found.into_iter().map(|mut c| {
                    if c.namespace() != namespace {
                        c.namespace = Some(namespace.to_owned());
                    }
                    c
                })),
                Err(e) => {
                    errors.push(format!("{}: {e}", names.join(", ")));
                    continue;
                }
            }
            let data = configmap_data(&out);
            for name in names {
                let held = data.get(&name).cloned();
                config
                    .coredns_files
                    .data
                    .insert((namespace.to_owned(), name), held);
            }
        }
        config.coredns_mounts_error = (!errors.is_empty()).then(|| errors.join("; "));
        config.read_imports();
    }

    /// Confirms, before anything is deleted, that each namespace and label selector a plan
    /// recreates CoreDNS pods by outside kube-system (`elsewhere`) is, exactly, that of the
    /// cluster DNS Service as the cluster shows it now, found as a plan finds it
    /// ([`DnsConfig::service_elsewhere`]: kube-system without a CoreDNS pod (`pods`, its
    /// DNS pods as just listed) or DNS Service, the Service's address the kubelets'
    /// clusterDNS, or the one NodeLocal DNSCache forwards the cluster domain to). A plan
    /// file is no authority on what apply deletes: a namespace and selector written into
    /// it by hand would otherwise select any pod there. The Services come with the first
    /// listing ([`Listing::WithServices`]); kubeadm's versioned kubelet-config, where the
    /// cluster has one, is read after it.
    pub async fn confirm_elsewhere(
        &mut self,
        pods: &[DnsPod],
        elsewhere: &[(String, Option<String>)],
    ) -> Result<(), Unconfirmed> {
        if elsewhere.is_empty() {
            return Ok(());
        }
        let found = match self.dns_service_elsewhere(pods).await {
            Ok(found) => found,
            // A Services list that failed leaves the cluster DNS Service unknown, not absent.
            Err(why) => {
                return Err(Unconfirmed::Unlisted(format!(
                    "the plan recreates CoreDNS pods outside kube-system, but the Services could not be listed ({why}) to confirm that the cluster DNS Service is there"
                )));
            }
        };
        for (namespace, selector) in elsewhere {
            let asked = format!(
                "namespace {} by the selector {}",
                crate::text::escape(namespace),
                crate::text::escape(selector.as_deref().unwrap_or("(none)"))
            );
            let now = match &found {
                Ok((ns, sel, _)) if ns == namespace && same_selector(sel, selector) => continue,
                Ok((ns, sel, name)) => format!(
                    "the cluster DNS Service is {ns}/{name}, selecting {}",
                    sel.as_deref().unwrap_or("(none)")
                ),
                Err(Some(why)) => why.clone(),
                Err(None) => "no cluster DNS Service is found outside kube-system".to_owned(),
            };
            return Err(Unconfirmed::Moved(format!(
                "the plan recreates CoreDNS pods in {asked}, which is not the cluster DNS Service's now ({now})"
            )));
        }
        Ok(())
    }

    /// The cluster DNS Service outside kube-system as the first listing's Services show it
    /// now ([`DnsConfig::service_elsewhere`], `pods` kube-system's DNS pods as listed): its
    /// namespace, selector and name, or why none (None: none is there). Err where a Services
    /// list failed, with why.
    #[allow(clippy::type_complexity)]
    async fn dns_service_elsewhere(
        &mut self,
        pods: &[DnsPod],
    ) -> Result<Result<(String, Option<String>, String), Option<String>>, String> {
        let mut config = self.config.clone().unwrap_or_default();
        if let Some(why) = &config.services_unlisted {
            return Err(why.clone());
        }
        if let Some(name) = config.versioned_kubelet_configmap() {
            self.read_kubelet_config(&mut config, &name).await;
        }
        let home = pods.iter().any(|p| !p.is_node_local());
        Ok(config
            .service_elsewhere(home)
            .map(|s| (s.namespace().to_owned(), s.selector.clone(), s.name.clone())))
    }

    /// The CoreDNS and nodelocaldns pods.
    pub async fn dns_pods(&mut self) -> Result<Vec<DnsPod>, String> {
        parse_pods(&self.run(GET_PODS).await?)
    }

    /// The DNS pods of `namespace`: kube-system's by their labels ([`Kubectl::dns_pods`]),
    /// another's (CoreDNS found through its Service there) by `selector`, each with its
    /// namespace and selector. Both go into kubectl's command line only as names and labels
    /// the API allows.
    pub async fn dns_pods_in(
        &mut self,
        namespace: &str,
        selector: Option<&str>,
    ) -> Result<Vec<DnsPod>, String> {
        let selector = match selector {
            None if namespace == "kube-system" => return self.dns_pods().await,
            Some(s) if valid_label_selector(s) => s,
            Some(s) => {
                return Err(format!("{}: not a label selector", crate::text::escape(s)));
            }
            None => return Err(format!("no label selector for the pods of {namespace}")),
        };
        let out = self
            .run_in(namespace, &format!("get pods -l '{selector}' -o json"))
            .await?;
        let mut pods = coredns_pods(&out)?;
        for pod in &mut pods {
            pod.namespace = Some(namespace.to_owned());
            pod.selector = Some(selector.to_owned());
        }
        Ok(pods)
    }

    /// The pods `pod` may be replaced by: those listed as it was, in its namespace.
    async fn pods_like(&mut self, pod: &DnsPod) -> Result<Vec<DnsPod>, String> {
        self.dns_pods_in(pod.namespace(), pod.selector.as_deref())
            .await
    }

    /// `pods`, each crash-looping one with its loop line (up to [`MAX_LOGS`]).
    pub async fn with_logs(&mut self, mut pods: Vec<DnsPod>) -> Vec<DnsPod> {
        let mut order: Vec<usize> = (0..pods.len())
            .filter(|&i| pods[i].restarts > 0 || pods[i].waiting.is_some())
            .collect();
        // Those down now first: their last run is the one that matters.
        order.sort_by_key(|&i| pods[i].ready);
        order.truncate(MAX_LOGS);
        // Those the first listing read already are not asked again, unless it read
        // another container than the DNS one (its awk could not tell which, or told
        // another): asked again, naming it.
        let mut found = std::mem::take(&mut self.logs);
        found.retain(|name, log| {
            log.unread != Some(Unread::NotStarted)
                && pods
                    .iter()
                    .all(|p| p.name != *name || p.container == log.container)
        });
        // One exec per namespace: kube-system's, and that of CoreDNS found elsewhere.
        let mut namespaces: Vec<&str> = order.iter().map(|&i| pods[i].namespace()).collect();
        namespaces.sort_unstable();
        namespaces.dedup();
        for namespace in namespaces {
            let missing: Vec<(&str, Option<&str>)> = order
                .iter()
                .filter(|&&i| pods[i].namespace() == namespace)
                .map(|&i| (pods[i].name.as_str(), pods[i].container.as_deref()))
                .filter(|(name, _)| !found.contains_key(*name))
                .collect();
            // A pod without its section in the answer (the exec failed, or was cut short)
            // was not read: the rules call it unknown, never clean.
            if !missing.is_empty() {
                found.extend(self.previous_loop_lines(namespace, &missing).await);
            }
        }
        for i in order {
            match found.get(&pods[i].name) {
                Some(PreviousLog {
                    unread: Some(unread),
                    ..
                }) => pods[i].logs_unread = Some(unread.why()),
                Some(log) => {
                    pods[i].loop_detected = log.loop_line.clone();
                    pods[i].logs_read = true;
                }
                None => {}
            }
        }
        pods
    }

    /// [`Kubectl::previous_loop_line`] for each of `pods` (with the container to name, where
    /// one must be), in one exec: at fleet scale a round trip per pod was most of a plan's
    /// time.
    async fn previous_loop_lines(
        &mut self,
        namespace: &str,
        pods: &[(&str, Option<&str>)],
    ) -> LoopLines {
        let boundary = crate::util::nonce();
        let budget = ReadBudget::within(self.session.command_timeout());
        let (mut found, why) =
            match previous_logs_script(&self.prologue, &boundary, namespace, pods, budget) {
                None => (
                    LoopLines::new(),
                    "not asked: not a name the API allows".to_owned(),
                ),
                Some(script) => match run_as_root(&mut self.session, &self.target, &script).await {
                    Ok(out) => (
                        loop_lines_by_pod(&String::from_utf8_lossy(&out.stdout), &boundary),
                        "its log did not come back (kubectl's output was cut short)".to_owned(),
                    ),
                    Err(e) => (LoopLines::new(), format!("kubectl logs could not run: {e}")),
                },
            };
        // Every pod asked for has its answer: none is left to pass for one not asked.
        for (pod, container) in pods {
            let allowed = valid_container_name(namespace)
                && valid_pod_name(pod)
                && container.is_none_or(valid_container_name);
            let why = if allowed {
                why.clone()
            } else {
                "not asked: not a name the API allows".to_owned()
            };
            found
                .entry((*pod).to_owned())
                .or_insert_with(|| PreviousLog {
                    container: container.map(str::to_owned),
                    loop_line: None,
                    unread: Some(Unread::Failed(why)),
                });
        }
        found
    }

    /// Deletes the pod `name` in `namespace` (kube-system, or that of CoreDNS found
    /// elsewhere), not waiting for it to be gone. False when it was gone already (another
    /// run, or its controller, deleted it first).
    pub async fn delete_pod(&mut self, namespace: &str, name: &str) -> Result<bool, String> {
        if !valid_pod_name(name) {
            return Err(format!("{}: not a pod name", crate::text::escape(name)));
        }
        let out = self
            .run_in(
                namespace,
                &format!("delete pod {name} --wait=false --ignore-not-found"),
            )
            .await?;
        // kubectl says `pod "NAME" deleted`, and nothing when it found none.
        Ok(String::from_utf8_lossy(&out).contains("deleted"))
    }

    /// The loop plugin's fatal line in the pod's previous run, if it crashed on a loop
    /// (`Ok(None)`: its log was read and has none); `Err`: why its log was not read.
    async fn previous_loop_line(&mut self, pod: &DnsPod) -> Result<Option<String>, String> {
        let asked = (pod.name.as_str(), pod.container.as_deref());
        match self
            .previous_loop_lines(pod.namespace(), &[asked])
            .await
            .remove(&pod.name)
        {
            Some(PreviousLog {
                unread: Some(unread),
                ..
            }) => Err(unread.why()),
            Some(log) => Ok(log.loop_line),
            None => Err("its log did not come back".to_owned()),
        }
    }
}

/// The script that reads the previous logs of `pods` of `namespace`, each with `-c
/// CONTAINER` where one is given ([`DnsPod::container`]), within `budget` ([`logs_pool`]),
/// then prints their sections ([`log_sections`]). The names reach the shell as they are,
/// so only names the API allows are taken (a pod's a DNS-1123 subdomain, a container's and
/// a namespace's a DNS-1123 label); a pod left out is not read, which the rules call
/// unknown, never clean. None when no pod is left.
fn previous_logs_script(
    prologue: &str,
    boundary: &str,
    namespace: &str,
    pods: &[(&str, Option<&str>)],
    budget: ReadBudget,
) -> Option<String> {
    if !valid_container_name(namespace) {
        return None;
    }
    let entries: Vec<String> = pods
        .iter()
        .filter(|(pod, container)| {
            valid_pod_name(pod) && container.is_none_or(valid_container_name)
        })
        .map(|(pod, container)| format!("{pod}:{}", container.unwrap_or("-")))
        .collect();
    if entries.is_empty() {
        return None;
    }
    Some(format!(
        "{prologue}{}d=$(mktemp -d) || exit 1\ntrap 'rm -rf \"$d\"' EXIT\nLOGS='{}'\n{}{}",
        log_clock(),
        entries.join(" "),
        logs_pool(namespace, budget),
        log_sections(boundary)
    ))
}

/// The first listing's script: kubectl's pods into a file and its ConfigMaps beside them;
/// with [`Listing::WithLogs`], the previous logs of the pods that restarted, within
/// `budget` ([`logs_pool`]); then everything printed in order (see [`split_listing`]).
fn listing_script(prologue: &str, boundary: &str, listing: Listing, budget: ReadBudget) -> String {
    let read = ReadBudget::bounded(budget.read);
    let (clock, nodes, logs) = match listing {
        Listing::Pods => ("", "nd=\nsv=\nsa=\nsb=\n".to_owned(), "LOGS=\n".to_owned()),
        Listing::WithLogs => (
            log_clock(),
            get_kubelets(&read),
            format!("{PICK_LOGS}{}", logs_pool("kube-system", budget)),
        ),
        Listing::WithServices => (
            "",
            format!("nd=\n{}", get_services(&read)),
            "LOGS=\n".to_owned(),
        ),
    };
    let sections = log_sections(boundary);
    format!(
        "{prologue}{clock}d=$(mktemp -d) || exit 1\ntrap 'rm -rf \"$d\"' EXIT\n\
         {read} -n kube-system {GET_CONFIGMAPS} >\"$d/out\" 2>\"$d/err\" &\ncm=$!\n\
         {nodes}\
         {read} -n kube-system {GET_PODS} >\"$d/pods\" || \
         {{ s=$?; kill $cm $nd $sv $sa $sb 2>/dev/null; exit $s; }}\n\
         {logs}\
         cat \"$d/pods\"\nwait $cm\nprintf '\\n%s %s\\n' {boundary} \"$?\"\ncat \"$d/out\"\n\
         printf '\\n%s\\n' {boundary}\ncat \"$d/err\"\nprintf '\\n%s .nodes\\n' {boundary}\n\
         if [ -n \"$nd\" ] && wait $nd; then cat \"$d/nodes\" 2>/dev/null; fi\n\
         printf '\\n%s .services\\n' {boundary}\n\
         if [ -n \"$sv\" ]; then if wait $sv; then cat \"$d/services\" 2>/dev/null; else \
         printf '%s .failed %s\\n' {boundary} \"$?\"; cat \"$d/services.err\" 2>/dev/null; fi; fi\n\
         printf '\\n%s .services-a\\n' {boundary}\n\
         if [ -n \"$sa\" ]; then if wait $sa; then cat \"$d/services-a\" 2>/dev/null; else \
         printf '%s .failed %s\\n' {boundary} \"$?\"; cat \"$d/services-a.err\" 2>/dev/null; fi; fi\n\
         printf '\\n%s .services-b\\n' {boundary}\n\
         if [ -n \"$sb\" ]; then if wait $sb; then cat \"$d/services-b\" 2>/dev/null; else \
         printf '%s .failed %s\\n' {boundary} \"$?\"; cat \"$d/services-b.err\" 2>/dev/null; fi; fi\n\
         printf '\\n%s .logs\\n' {boundary}\n\
         {sections}"
    )
}

/// How the nodes are asked for: `kubectl get nodes` printed for people, which kubectl asks
/// of the API server as a Table (`Accept: application/json;as=Table;g=meta.k8s.io`): the
/// server sends its columns and each node's metadata, not whole Node objects, whose status
/// lists every image on the node (megabytes on a large cluster). A node's columns are NAME
/// STATUS ROLES AGE VERSION, VERSION being `status.nodeInfo.kubeletVersion` (kubernetes
/// `pkg/printers/internalversion/printers.go`, `nodeColumnDefinitions`; the rest are
/// `-o wide`'s); [`parse_kubelets`] finds the columns by the header, not by place.
/// tests/it/kubectl_reference.rs runs it through a real kubectl.
pub const GET_NODES: &str = "get nodes";

/// [`GET_NODES`] into `$d/nodes` (its pid in `$nd`), and the Services ([`get_services`]),
/// in the background, each kubectl as `read` bounds it ([`ReadBudget::bounded`]).
fn get_kubelets(read: &str) -> String {
    format!(
        "{read} {GET_NODES} >\"$d/nodes\" 2>/dev/null &\nnd=$!\n{}",
        get_services(read)
    )
}

/// [`GET_DNS_SERVICES`] into `$d/services` and [`GET_DNS_SERVICES_EVERYWHERE`] into
/// `$d/services-a` and `-b`, in the background (their pids in `$sv`, `$sa` and `$sb`),
/// each kubectl as `read` bounds it.
fn get_services(read: &str) -> String {
    let [all, chart] = GET_DNS_SERVICES_EVERYWHERE;
    format!(
        "{read} -n kube-system {GET_DNS_SERVICES} >\"$d/services\" 2>\"$d/services.err\" &\nsv=$!\n\
         {read} {all} >\"$d/services-a\" 2>\"$d/services-a.err\" &\nsa=$!\n\
         {read} {chart} >\"$d/services-b\" 2>\"$d/services-b.err\" &\nsb=$!\n"
    )
}

/// Chooses, on the node, the pods whose previous logs to read (their names into `$LOGS`),
/// from kubectl's answer in `$d/pods`, without jq: kubectl prints
/// `json.MarshalIndent(obj, "", "    ")` of the List (cli-runtime pkg/printers/json.go)
/// with each item's keys sorted, so a pod's own name is the `"name"` indented 16 spaces
/// and its `status` (`restartCount`, `waiting`) comes after it. A superset is harmless
/// (only the pods [`Kubectl::with_logs`] chooses are taken); a pod missed here, or an
/// answer in another layout, is read by a second exec. Names are checked as pod names,
/// never globbed, at most [`MAX_LOGS`] (only those get a section: a pod past them was not
/// read); [`logs_pool`] reads them. A pod's `spec.containers` (before its `status`: keys
/// sorted) are the names indented 24 spaces between `"containers": [` and its `]` at 16;
/// where there are several and one is the DNS container ([`is_dns_container`]), its log is
/// asked for with `-c` (`POD:CONTAINER`, else `POD:-`: kubectl's choice), as
/// [`named_dns_container`] names it, and its section says so ([`loop_lines_by_pod`]): one
/// the awk told otherwise is asked again by [`Kubectl::with_logs`].
const PICK_LOGS: &str = r#"LOGS=
n=0
set -f
for entry in $(awk '/^                "name": "/ { n = $0; sub(/^ *"name": "/, "", n); sub(/",?$/, "", n); k = 0; c = ""; next }
  /^                "containers": \[/ { inc = 1; next }
  inc && /^                \]/ { inc = 0; next }
  inc && /^                        "name": "/ { x = $0; sub(/^ *"name": "/, "", x); sub(/",?$/, "", x); k++; if (c == "" && (x == "coredns" || x == "node-cache")) c = x; next }
  n != "" && (/"restartCount": [1-9]/ || /"waiting": [{]/) && !(n in seen) { seen[n] = 1; print n ":" (k > 1 && c != "" ? c : "-") }' "$d/pods" 2>/dev/null); do
  pod=${entry%%:*}
  case $pod in '' | [-.]* | *[!a-z0-9.-]*) continue ;; esac
  case ${entry#"$pod"} in :- | :coredns | :node-cache) ;; *) continue ;; esac
  [ $n -lt 50 ] || break
  n=$((n + 1))
  LOGS="$LOGS $entry"
done
set +f
"#;

/// How long the kubectl of one exec may take, whose command timeout is C, so the exec ends
/// within it and nothing is lost to it. Each `get` the first listing runs side by side
/// asks the API server for `read` seconds (`--request-timeout`: 20, less where C is short);
/// each `kubectl logs` for `call` (a quarter of C, 2 to 15). timeout(1) ends either
/// [`GRACE`] seconds later (TERM, then KILL [`GRACE`] seconds after that), and none of the
/// logs is started `launch` seconds or more after the script's start ([`log_clock`]):
/// what is left of C after the longest call and a fifth of C (at least 3 s) for the rest,
/// so at C = 5 none is. A pod whose node does not answer (the API server proxies `logs` to
/// its kubelet: a node down after a reboot) costs its own call, and is reported unread,
/// not clean. Before, each batch of eight waited for its slowest under `timeout 30`: two
/// such pods in two batches outlasted the 60 s default, and the cluster was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ReadBudget {
    read: u64,
    call: u64,
    launch: u64,
}

/// What timeout(1) adds to a kubectl's own request timeout before TERM, and again before
/// KILL.
const GRACE: u64 = 2;

impl ReadBudget {
    fn within(command_timeout: Duration) -> Self {
        let c = command_timeout.as_secs();
        let call = (c / 4).clamp(2, 15);
        ReadBudget {
            read: (c / 2).saturating_sub(2).clamp(2, 20),
            call,
            launch: c.saturating_sub(call + 2 * GRACE + (c / 5).max(3)),
        }
    }

    /// `timeout … "$@" --request-timeout=…s` for a kubectl asking for `secs` seconds.
    fn bounded(secs: u64) -> String {
        format!(
            "timeout -k {GRACE} {} \"$@\" --request-timeout={secs}s",
            secs + GRACE
        )
    }
}

/// Starts the clock [`logs_pool`] stops starting kubectl by: `$t0`, the script's start in
/// whole seconds. At the top of the script: its whole run counts.
fn log_clock() -> &'static str {
    "t0=$(date +%s)\n"
}

/// Reads the previous logs of the pods in `$LOGS` (`POD:CONTAINER`, `-` for kubectl's
/// choice; checked names), of `namespace` (a checked label), eight kubectl at a time: a
/// FIFO holds eight tokens, each kubectl takes one and gives it back when it ends, so one
/// slow pod holds one slot, not a batch (without the FIFO they run one after another).
/// Each pod's log goes into `$d/log.POD`, kubectl's errors into `$d/err.POD` and its exit
/// status into `$d/rc.POD`; a pod not started while whole seconds since `$t0`
/// ([`log_clock`]) were fewer than the budget's `launch` has no status. [`log_sections`]
/// prints them.
fn logs_pool(namespace: &str, budget: ReadBudget) -> String {
    let kubectl = ReadBudget::bounded(budget.call);
    let launch = budget.launch;
    format!(
        r#"pids= slots=
if [ -n "$LOGS" ] && mkfifo "$d/slots" 2>/dev/null && {{ command exec 3<>"$d/slots"; }} 2>/dev/null; then
  printf '\n\n\n\n\n\n\n\n' >&3
  slots=1
fi
one_log() {{
  # $named unquoted: -c and one of two fixed names, or nothing
  {kubectl} -n {namespace} logs "$pod" $named --previous --tail=20 >"$d/log.$pod" 2>"$d/err.$pod" 3>&-
  echo $? >"$d/rc.$pod"
  [ -z "$slots" ] || echo >&3
}}
set -f
for entry in $LOGS; do
  [ -z "$slots" ] || read -r _ <&3
  [ $(($(date +%s) - t0)) -lt {launch} ] || break
  pod=${{entry%%:*}} named=
  [ "${{entry#*:}}" = - ] || named="-c ${{entry#*:}}"
  if [ -n "$slots" ]; then
    one_log "$@" &
    pids="$pids $!"
  else
    one_log "$@"
  fi
done
set +f
[ -z "$pids" ] || wait $pids
[ -z "$slots" ] || exec 3>&-
"#
    )
}

/// Every pod's section of [`logs_pool`]'s reads, in `$LOGS`'s order ([`loop_lines_by_pod`]
/// parses them): `BOUNDARY POD:CONTAINER STATUS` (kubectl's exit status; `-`: not
/// started), then the log where kubectl succeeded, else what kubectl said.
fn log_sections(boundary: &str) -> String {
    format!(
        r#"set -f
for entry in $LOGS; do
  pod=${{entry%%:*}} rc=-
  if [ -f "$d/rc.$pod" ]; then read -r rc <"$d/rc.$pod" || rc=-; fi
  printf '%s %s %s\n' {boundary} "$entry" "$rc"
  if [ "$rc" = 0 ]; then cat "$d/log.$pod"; elif [ "$rc" != - ]; then cat "$d/err.$pod"; fi 2>/dev/null
  echo
done
set +f
"#
    )
}

/// The parts of [`Kubectl::first_listing`]'s output:
/// `PODS \nBOUNDARY STATUS\nCONFIGMAPS\nBOUNDARY\nSTDERR\nBOUNDARY .nodes\nNODE LINES\nBOUNDARY .services\nSERVICES\nBOUNDARY .logs\nLOG SECTIONS`.
struct ListingParts<'a> {
    pods: &'a [u8],
    config: DnsConfig,
    /// The pods whose previous logs came back, each with its loop line.
    logs: LoopLines,
    kubelets: Kubelets,
}

/// Splits the first listing's output at its boundaries (a fresh nonce). A ConfigMap read
/// that failed or was cut short is an error for the rules, never empty config.
fn split_listing<'a>(out: &'a [u8], boundary: &str) -> ListingParts<'a> {
    let failed = |pods: &'a [u8], error: String| ListingParts {
        pods,
        config: DnsConfig {
            error: Some(error),
            ..DnsConfig::default()
        },
        logs: LoopLines::new(),
        kubelets: Kubelets::new(),
    };
    let head = format!("\n{boundary} ");
    let Some(at) = find(out, head.as_bytes()) else {
        return failed(out, "kubectl's answer was cut short".to_owned());
    };
    let (pods, rest) = (&out[..at], &out[at + head.len()..]);
    let tail = format!("\n{boundary}\n");
    let Some(end) = find(rest, tail.as_bytes()) else {
        return failed(pods, "kubectl's answer was cut short".to_owned());
    };
    let (section, after) = (&rest[..end], &rest[end + tail.len()..]);
    // Log sections start with the boundary and a pod name, which never starts with a dot.
    let marker = format!("\n{boundary} .logs\n");
    let (before, logs) = match find(after, marker.as_bytes()) {
        Some(at) => {
            let sections = String::from_utf8_lossy(&after[at + marker.len()..]);
            (&after[..at], loop_lines_by_pod(&sections, boundary))
        }
        None => (after, LoopLines::new()),
    };
    // CoreDNS's Services in every namespace, those outside kube-system kept, each once.
    let mut elsewhere: Vec<DnsService> = Vec::new();
    let mut unlisted: Vec<String> = Vec::new();
    let mut before = before;
    for (mark, asked) in [
        (".services-b", GET_DNS_SERVICES_EVERYWHERE[1]),
        (".services-a", GET_DNS_SERVICES_EVERYWHERE[0]),
    ] {
        let marker = format!("\n{boundary} {mark}\n");
        if let Some(at) = find(before, marker.as_bytes()) {
            let listed = services_section(&before[at + marker.len()..], boundary)
                .map_err(|why| unlisted.push(format!("kubectl {asked}: {why}")));
            let found = listed
                .ok()
                .and_then(|l| parse_services(l).ok())
                .unwrap_or_default();
            for s in found.into_iter().filter(|s| s.namespace() != "kube-system") {
                if !elsewhere
                    .iter()
                    .any(|e| (e.namespace(), &e.name) == (s.namespace(), &s.name))
                {
                    elsewhere.push(s);
                }
            }
            before = &before[..at];
        }
    }
    elsewhere.sort_by(|a, b| (a.namespace(), &a.name).cmp(&(b.namespace(), &b.name)));
    // An empty section is a read that failed (kubectl prints a List, empty or not).
    let marker = format!("\n{boundary} .services\n");
    let (before, services) = match find(before, marker.as_bytes()) {
        Some(at) => match services_section(&before[at + marker.len()..], boundary) {
            Ok(listed) => (&before[..at], parse_services(listed).ok()),
            Err(why) => {
                unlisted.insert(
                    0,
                    format!("kubectl -n kube-system {GET_DNS_SERVICES}: {why}"),
                );
                (&before[..at], None)
            }
        },
        None => (before, None),
    };
    let unlisted = (!unlisted.is_empty()).then(|| unlisted.join("; "));
    // kube-system's only: a Service elsewhere becomes the cluster's DNS Service only once
    // chosen by the kubelets' clusterDNS ([`DnsConfig::service_elsewhere`]), never all of
    // them (CoreDNS charts that are no cluster DNS, as k8gb's or k8s_gateway's, run there).
    let marker = format!("\n{boundary} .nodes\n");
    let (stderr, kubelets) = match find(before, marker.as_bytes()) {
        Some(at) => (&before[..at], parse_kubelets(&before[at + marker.len()..])),
        None => (before, Kubelets::new()),
    };
    let (status, json) = match section.iter().position(|b| *b == b'\n') {
        Some(nl) => (&section[..nl], &section[nl + 1..]),
        None => (section, &[][..]),
    };
    let config = if status == b"0" {
        parse_configmaps(json)
    } else {
        Err(crate::text::escape(String::from_utf8_lossy(stderr).trim()).into_owned())
    };
    match config {
        Ok(config) => ListingParts {
            pods,
            config: DnsConfig {
                services,
                services_elsewhere: elsewhere,
                services_unlisted: unlisted,
                ..config
            },
            logs,
            kubelets,
        },
        Err(error) => {
            let mut parts = failed(pods, error);
            parts.config.services = services;
            parts.config.services_elsewhere = elsewhere;
            parts.config.services_unlisted = unlisted;
            ListingParts {
                logs,
                kubelets,
                ..parts
            }
        }
    }
}

/// A Services section of the first listing: kubectl's answer, or, where kubectl failed
/// (`BOUNDARY .failed STATUS` and its stderr, [`listing_script`]), why: its exit status
/// (124, 137, 143: `timeout` ended it, [`ReadBudget::bounded`]) and its error, escaped.
fn services_section<'a>(section: &'a [u8], boundary: &str) -> Result<&'a [u8], String> {
    let failed = format!("{boundary} .failed ");
    let Some(rest) = section.strip_prefix(failed.as_bytes()) else {
        return Ok(section);
    };
    let text = String::from_utf8_lossy(rest);
    let (status, stderr) = text.split_once('\n').unwrap_or((&text, ""));
    let stderr = crate::text::escape(stderr.trim());
    let status = match status.trim() {
        // timeout(1) ended it (BusyBox's: its child's TERM).
        "124" => "did not answer in time".to_owned(),
        // Its KILL after TERM, BusyBox's TERM, or another's signal.
        s @ ("137" | "143") => format!("did not answer in time, or was killed (exit status {s})"),
        s => format!("exit status {}", crate::text::escape(s)),
    };
    Err(if stderr.is_empty() {
        status
    } else {
        format!("{status}: {stderr}")
    })
}

/// Each node's kubelet version from [`GET_NODES`]'s table: the header names the columns,
/// and a row is a node's only when it has a word for each (no cell holds a space: names,
/// the comma-joined status and roles, the age and the version never do; an empty cell, a
/// node whose kubelet has not reported, leaves the row short). A row whose name is not a
/// node's name or whose version is not a version (letters, digits, `.`, `-`, `+`, as
/// `v1.30.2+k3s1`) is left out, so nothing else the node printed passes for a version. A
/// node reports its own status, so its version may hold anything: kubectl cuts a cell at
/// a newline and appends `...` (a version with `..` is none), and should one print the
/// rest as a row for another node, a name that comes twice is left out altogether.
fn parse_kubelets(out: &[u8]) -> Kubelets {
    let text = String::from_utf8_lossy(out);
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let Some(header) = lines.next() else {
        return Kubelets::new();
    };
    let columns: Vec<&str> = header.split_whitespace().collect();
    let at = |name: &str| columns.iter().position(|c| *c == name);
    let (Some(name_at), Some(version_at)) = (at("NAME"), at("VERSION")) else {
        return Kubelets::new();
    };
    let rows: Vec<(&str, &str)> = lines
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .filter(|words| words.len() == columns.len())
        .map(|words| (words[name_at], words[version_at]))
        .collect();
    let mut seen = std::collections::HashMap::<&str, usize>::new();
    for (name, _) in &rows {
        *seen.entry(name).or_default() += 1;
    }
    rows.into_iter()
        .filter(|(name, _)| seen.get(name) == Some(&1))
        .filter(|(name, version)| {
            valid_pod_name(name)
                && version.len() <= 64
                && !version.contains("..")
                && version
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
        })
        .map(|(name, version)| (name.to_owned(), version.to_owned()))
        .collect()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Each pod's last loop line in the output of [`log_sections`], whose sections start with
/// `BOUNDARY POD:CONTAINER STATUS` (`-` for kubectl's choice of container; the boundary
/// is a fresh nonce: a log line cannot start a section). A pod whose kubectl failed, timed
/// out or was not started is unread, with why: what kubectl said, never an empty log.
fn loop_lines_by_pod(out: &str, boundary: &str) -> LoopLines {
    let mut found = LoopLines::new();
    let mut current: Option<String> = None;
    // What the current pod's failed kubectl said, line by line.
    let mut said: Vec<&str> = Vec::new();
    for line in out.lines() {
        if let Some(section) = line
            .strip_prefix(boundary)
            .and_then(|rest| rest.strip_prefix(' '))
        {
            say(&mut found, current.as_deref(), &std::mem::take(&mut said));
            let (entry, status) = section.split_once(' ').unwrap_or((section, ""));
            let (pod, container) = entry.split_once(':').unwrap_or((entry, "-"));
            let container = (container != "-").then(|| container.to_owned());
            let failed = |why: String| Some(Unread::Failed(why));
            let unread = match status {
                "0" => None,
                "-" => Some(Unread::NotStarted),
                // timeout(1) ended it: 124 (GNU), 143 (BusyBox: TERM), 137 (KILL).
                "124" | "137" | "143" => failed("kubectl logs did not answer in time".to_owned()),
                "" => failed("kubectl logs gave no status".to_owned()),
                other => failed(format!(
                    "kubectl logs exited {}",
                    crate::text::escape(other)
                )),
            };
            current = Some(pod.to_owned());
            found.insert(
                pod.to_owned(),
                PreviousLog {
                    container,
                    loop_line: None,
                    unread,
                },
            );
            continue;
        }
        let Some(log) = current.as_ref().and_then(|pod| found.get_mut(pod)) else {
            continue;
        };
        match &log.unread {
            Some(_) => said.push(line),
            None if line.contains("plugin/loop: Loop") => {
                log.loop_line = Some(crate::text::escape(line.trim()).into_owned());
            }
            None => {}
        }
    }
    say(&mut found, current.as_deref(), &said);
    found
}

/// Adds to `pod`'s failure what its kubectl `said`: the API server's error (`Error from
/// server ...`) or kubectl's own (`error: ...`), which klog's lines and warnings may come
/// before, else its last line; escaped, at most 200 characters.
fn say(found: &mut LoopLines, pod: Option<&str>, said: &[&str]) {
    let Some(PreviousLog {
        unread: Some(Unread::Failed(why)),
        ..
    }) = pod.and_then(|pod| found.get_mut(pod))
    else {
        return;
    };
    let lines = || said.iter().map(|l| l.trim()).filter(|l| !l.is_empty());
    let Some(line) = lines()
        .find(|l| l.starts_with("Error from server") || l.starts_with("error:"))
        .or_else(|| lines().next_back())
    else {
        return;
    };
    let line: String = line.chars().take(200).collect();
    why.push_str(": ");
    why.push_str(&crate::text::escape(&line));
}

/// Sets this machine's kubectl with `kubeconfig` (one quoted shell word) as "$@".
fn local_prologue(kubeconfig: &std::path::Path) -> String {
    format!(
        "set -u\nexport {NO_KUBERC}\ncommand -v kubectl >/dev/null 2>&1 || {{ echo 'no kubectl in PATH' >&2; exit 3; }}\nset -- kubectl --kubeconfig {}\n",
        crate::node_script::quote(&kubeconfig.to_string_lossy())
    )
}

/// A container name from the API is a DNS-1123 label (lowercase letters, digits and `-`,
/// a letter or digit at each end, at most 63); anything else is never passed to a node's
/// shell.
fn valid_container_name(name: &str) -> bool {
    (1..=63).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

/// The address of a DNS server as CoreDNS's `forward` takes one (and as a Service's
/// clusterIP or the kubelet's clusterDNS is written): an IP, `IP:PORT`, `[IPv6]:PORT` or
/// `[IPv6]`, with or without `dns://`. `parse.Transport` strips the scheme and
/// `HostPortOrFile` splits a port off with `net.SplitHostPort`, else trims the brackets
/// (coredns/coredns@4b26cced plugin/pkg/parse/transport.go:12-42, host.go:32-89; forward's
/// setup.go reads its TO addresses through them). The cluster DNS is asked on port 53: an
/// address with another port is no cluster DNS Service's. Parsed, so `fd00:0::3` and
/// `fd00::3` are one address.
fn dns_address(text: &str) -> Option<std::net::IpAddr> {
    let text = text.strip_prefix("dns://").unwrap_or(text);
    if let Ok(ip) = text.parse::<std::net::IpAddr>() {
        return Some(ip);
    }
    if let Ok(socket) = text.parse::<std::net::SocketAddr>() {
        return (socket.port() == 53).then_some(socket.ip());
    }
    text.strip_prefix('[')?.strip_suffix(']')?.parse().ok()
}

/// Two DNS addresses ([`dns_address`]) that are one.
fn same_address(a: &str, b: &str) -> bool {
    dns_address(a).is_some_and(|a| dns_address(b) == Some(a))
}

/// A namespace is a DNS-1123 label, as a container name ([`valid_container_name`]).
pub fn valid_namespace(name: &str) -> bool {
    valid_container_name(name)
}

/// A pod name from the API is a DNS-1123 subdomain; anything else is never passed to a
/// node's shell.
fn valid_pod_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        && !name.starts_with(['-', '.'])
}

/// The pods in a `kubectl get pods -o json` List, but those whose phase is terminal
/// ([`DnsPod::ended`]): they hold no resolv.conf, are no pod of their node any more, and
/// deleting one would wait for a replacement its controller made already.
pub fn parse_pods(json: &[u8]) -> Result<Vec<DnsPod>, String> {
    let doc: Value =
        serde_json::from_slice(json).map_err(|e| format!("kubectl's answer is not JSON: {e}"))?;
    let items = doc["items"]
        .as_array()
        .ok_or("kubectl's answer has no items")?;
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    Ok(items
        .iter()
        .map(|pod| {
            // The DNS container's status: a sidecar injected beside it may sort first
            // (the kubelet lists them by name).
            let statuses = pod["status"]["containerStatuses"].as_array();
            let status = statuses
                .and_then(|all| all.iter().find(|c| is_dns_container(&c["name"])))
                .unwrap_or(&pod["status"]["containerStatuses"][0]);
            DnsPod {
                name: text(&pod["metadata"]["name"]),
                // CoreDNS by any other label the selector asks for: `kube-dns`, or the
                // Helm chart's `coredns`.
                app: match pod["metadata"]["labels"]["k8s-app"].as_str() {
                    Some("node-local-dns") => "nodelocaldns".to_owned(),
                    // Kubespray's nodelocaldns-second-daemonset.yml.j2
                    // (enable_nodelocaldns_secondary): the same address, -skipteardown.
                    Some("node-local-dns-second") => "nodelocaldns-secondary".to_owned(),
                    // Kubespray's coredns-deployment.yml.j2 with coredns_ordinal_suffix
                    // "-secondary" (its CoreDNS Secondary task, dns_mode coredns_dual).
                    Some("kube-dns-secondary") => "coredns-secondary".to_owned(),
                    _ => "coredns".to_owned(),
                },
                node: text(&pod["spec"]["nodeName"]).to_lowercase(),
                phase: text(&pod["status"]["phase"]),
                // The container's readiness, and the pod's Ready condition: the node
                // controller marks the pods of a node that stopped answering not Ready
                // there only, leaving their containers' statuses as they were
                // (kubernetes/kubernetes @025f2834
                // pkg/controller/util/node/controller_utils.go MarkPodsNotReady).
                ready: status["ready"].as_bool().unwrap_or(false) && ready_condition(pod),
                restarts: status["restartCount"].as_u64().unwrap_or(0),
                waiting: status["state"]["waiting"]["reason"]
                    .as_str()
                    .map(str::to_owned),
                running: status["state"]["running"].is_object(),
                terminating: !pod["metadata"]["deletionTimestamp"].is_null(),
                loop_detected: None,
                logs_read: false,
                logs_unread: None,
                container: named_dns_container(pod),
                namespace: None,
                selector: None,
                readiness: readiness_probe(pod),
            }
        })
        .filter(|p| !p.ended())
        .collect())
}

/// A pod's `Ready` condition is not False (a pod without conditions is judged by its
/// container alone).
fn ready_condition(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
        .is_none_or(|c| c["status"] != "False")
}

/// The DNS container's readiness probe (else the first container's) as the longest its first
/// probe after a kubelet restart may take: periodSeconds (slept, a random part of it, before
/// the first probe: kubernetes@00421113 pkg/kubelet/prober/worker.go run) plus
/// timeoutSeconds (the probe's own bound), at most five minutes. The API server returns a
/// probe with its defaults filled in (10 and 1); those stand for a field that is missing.
/// Kubespray's CoreDNS sets timeoutSeconds 5 and no periodSeconds (kubespray@46dbdd39
/// roles/kubernetes-apps/ansible/templates/coredns-deployment.yml.j2): 15 s. None where the
/// container has no readiness probe: the kubelet reads it Ready once it runs.
fn readiness_probe(pod: &Value) -> Option<Duration> {
    let containers = pod["spec"]["containers"].as_array()?;
    let container = containers
        .iter()
        .find(|c| is_dns_container(&c["name"]))
        .or(containers.first())?;
    let probe = container.get("readinessProbe").filter(|p| p.is_object())?;
    let period = probe["periodSeconds"].as_u64().unwrap_or(10);
    let timeout = probe["timeoutSeconds"].as_u64().unwrap_or(1);
    Some(Duration::from_secs(period.saturating_add(timeout).min(300)))
}

/// The pods of a `kubectl get pods -o json` List outside kube-system that run a container
/// named `coredns`, as the CoreDNS Helm chart's Deployment names its container
/// (coredns/helm@caac0316 charts/coredns/templates/deployment.yaml:113): [`parse_pods`]
/// takes every pod it is given for CoreDNS, and a Service's selector may match others.
fn coredns_pods(json: &[u8]) -> Result<Vec<DnsPod>, String> {
    let doc: Value =
        serde_json::from_slice(json).map_err(|e| format!("kubectl's answer is not JSON: {e}"))?;
    let runs_coredns = |pod: &Value| {
        pod["spec"]["containers"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["name"] == "coredns"))
    };
    let names: Vec<&str> = doc["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|pod| runs_coredns(pod))
        .filter_map(|pod| pod["metadata"]["name"].as_str())
        .collect();
    let mut pods = parse_pods(json)?;
    pods.retain(|p| names.contains(&p.name.as_str()));
    Ok(pods)
}

/// The container names of kubeadm's, Kubespray's and the CoreDNS Helm chart's CoreDNS
/// (`coredns`) and of NodeLocal DNSCache (`node-cache`: Kubespray's DaemonSets and the
/// upstream manifest).
fn is_dns_container(name: &Value) -> bool {
    matches!(name.as_str(), Some("coredns" | "node-cache"))
}

/// The DNS container of a pod with several containers (`spec.containers`, else the
/// statuses), to be named in `kubectl logs` ([`DnsPod::container`]).
fn named_dns_container(pod: &Value) -> Option<String> {
    let listed = |v: &Value| v.as_array().filter(|a| !a.is_empty()).cloned();
    let containers = listed(&pod["spec"]["containers"])
        .or_else(|| listed(&pod["status"]["containerStatuses"]))?;
    if containers.len() < 2 {
        return None;
    }
    containers
        .iter()
        .map(|c| &c["name"])
        .find(|n| is_dns_container(n))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// What apply did to one DNS pod of a node: deleted it and waited for its replacement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodRecreation {
    pub pod: String,
    /// As [`DnsPod::app`].
    pub app: String,
    pub node: String,
    /// The pod that replaced it, Ready.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub replacement: Option<String>,
    pub ok: bool,
    /// What happened, for the report: "replaced by X on NODE, Ready after 3s", or why not.
    pub message: String,
    /// Its namespace where it is not kube-system (CoreDNS found elsewhere).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub namespace: Option<String>,
    /// Not deleted, as the only Ready replica of its CoreDNS ([`last_ready`]): not done,
    /// and left for a later run of the plan, once the rollout's other nodes brought
    /// another replica up, not a failure that stops the rollout.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub kept: bool,
}

impl PodRecreation {
    /// The pod for the report: `NAMESPACE/NAME` outside kube-system, else its name.
    pub fn shown(&self) -> String {
        match &self.namespace {
            Some(ns) if ns != "kube-system" => format!("{ns}/{}", self.pod),
            _ => self.pod.clone(),
        }
    }
}

/// Why a node's DNS pods were not all recreated, after its kubelet was restarted: the
/// steps done before (a nodelocaldns pod already replaced), the error, and the pods left
/// as they were, each as (namespace, name), for the user to recreate by hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodsFailed {
    pub done: Vec<PodRecreation>,
    pub error: String,
    pub left: Vec<(String, String)>,
}

impl std::fmt::Display for PodsFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.error)?;
        if self.left.is_empty() {
            return Ok(());
        }
        let (by_hand, odd) = deletes_by_hand(&self.left);
        if !by_hand.is_empty() {
            write!(
                f,
                "; the node's kubelet was restarted with the new files, and these pods still run with the old ones: recreate them by hand ({})",
                by_hand.join("; ")
            )?;
        }
        if !odd.is_empty() {
            write!(f, "; {odd}")?;
        }
        Ok(())
    }
}

/// The `kubectl -n NAMESPACE delete pod NAME` to run by hand for each of `pods` (namespace,
/// name), and what names the others. A command to paste holds only names the API allows:
/// a name the cluster returned with a `;` or an escape sequence in it is named escaped,
/// apart ("" where there is none).
fn deletes_by_hand(pods: &[(String, String)]) -> (Vec<String>, String) {
    let (valid, odd): (Vec<_>, Vec<_>) = pods
        .iter()
        .partition(|(ns, name)| valid_pod_name(ns) && valid_pod_name(name));
    let by_hand = valid
        .iter()
        .map(|(ns, name)| format!("kubectl -n {ns} delete pod {name}"))
        .collect();
    if odd.is_empty() {
        return (by_hand, String::new());
    }
    let named: Vec<String> = odd
        .iter()
        .map(|(ns, name)| format!("{:?} in {:?}", name, ns))
        .collect();
    let odd = format!(
        "the cluster also listed pods by names no pod can have, not deleted: {}",
        named.join(", ")
    );
    (by_hand, odd)
}

/// Deletes the CoreDNS and nodelocaldns pods running on a node (`names`: the names it may
/// have, [`node_names`]; `pods`: the cluster's DNS pods as just listed) one at a time, each time waiting up to `timeout` for a Ready
/// replacement: a nodelocaldns pod on the same node (its DaemonSet's), a CoreDNS pod on
/// any node (its Deployment's). The first replacement that does not come up stops the
/// rest: deleting more would only take more of the cluster's DNS down.
/// `elsewhere`: the namespaces outside kube-system the plan found CoreDNS in (on any of its
/// nodes, not only this one), each with the label selector it listed its pods by there: confirmed first to be the cluster DNS
/// Service's ([`Kubectl::confirm_elsewhere`]), they are listed there again and recreated
/// in their namespace, each replacement looked for there.
/// `restarted`: the kubelets this run restarted, this node's among them where it did, and
/// the pods the run's plans saw not Ready, which are not waited for after a restart
/// ([`settle`], [`weigh`]).
pub async fn recreate_node_pods(
    kubectl: &mut Kubectl,
    restarted: &Restarted,
    mut pods: Vec<DnsPod>,
    elsewhere: &[(String, Option<String>)],
    names: &[String],
    timeout: Duration,
) -> Result<Vec<PodRecreation>, PodsFailed> {
    let left = |pods: &[DnsPod]| -> Vec<(String, String)> {
        pods.iter()
            .map(|p| (p.namespace().to_owned(), p.name.clone()))
            .collect()
    };
    let failed = |error: String, pods: &[DnsPod]| PodsFailed {
        done: Vec::new(),
        error,
        left: left(&recreation_order(pods.to_vec(), names)),
    };
    if let Err(e) = kubectl.confirm_elsewhere(&pods, elsewhere).await {
        // The node's kubelet runs with the new files: the cluster DNS Service's own pods
        // on it (kube-system's, or those it selects elsewhere) still have the old ones.
        let mut left = pods.clone();
        if let Ok(Ok((namespace, selector, _))) = kubectl.dns_service_elsewhere(&pods).await
            && let Ok(listed) = kubectl.dns_pods_in(&namespace, selector.as_deref()).await
        {
            left.extend(listed);
        }
        let mut failed = failed(e.to_string(), &left);
        let restarted = if failed.left.is_empty() {
            "the node's kubelet was restarted with the new files, and "
        } else {
            ""
        };
        // Only a Service that moved makes the plan stale. One that could not be listed
        // (a timeout) is no news of the cluster: the same plan run again recreates the
        // node's pods (its pods-failed note says so), where a new plan would not (the
        // fixed node has no cluster action any more).
        let what = match e {
            Unconfirmed::Moved(_) => "the plan is stale: make a new plan",
            Unconfirmed::Unlisted(_) => "run the same plan again",
        };
        failed.error = format!(
            "{}; {restarted}{what} to recreate the node's DNS pods",
            failed.error
        );
        return Err(failed);
    }
    for (namespace, selector) in elsewhere {
        match kubectl.dns_pods_in(namespace, selector.as_deref()).await {
            Ok(listed) => pods.extend(listed),
            Err(e) => {
                let error = format!(
                    "listing the CoreDNS pods in {}: {e}",
                    crate::text::escape(namespace)
                );
                return Err(failed(error, &pods));
            }
        }
    }
    // A namespace given twice (a hand-edited plan's selector in another order) lists its
    // pods twice: each is recreated once.
    let mut seen = std::collections::HashSet::new();
    pods.retain(|p| seen.insert((p.namespace().to_owned(), p.name.clone())));
    let pods = settle(kubectl, pods, names, restarted).await;
    note_terminating(kubectl, &pods, names);
    let order = recreation_order(pods, names);
    let mut done = Vec::new();
    for (i, pod) in order.iter().enumerate() {
        // A delete refused midway (a Role without delete in CoreDNS's namespace) keeps
        // what was done before: those pods were replaced.
        let step = match recreate(kubectl, pod, &order, restarted, timeout).await {
            Ok(step) => step,
            Err(error) => {
                return Err(PodsFailed {
                    done,
                    error,
                    left: left(&order[i..]),
                });
            }
        };
        // A pod kept as the last Ready replica stops nothing: the node's other pods
        // (its nodelocaldns) are its own. A replacement that did not come up stops the
        // rest, which are named to recreate by hand, as after a refused delete.
        let stop = !step.ok && !step.kept;
        let error = format!(
            "DNS pod {} on {}: {}",
            step.shown(),
            step.node,
            step.message
        );
        done.push(step);
        if stop {
            let rest = &order[i + 1..];
            if rest.is_empty() {
                break;
            }
            let (rest, error) = ready_apart(rest, error);
            return Err(PodsFailed {
                done,
                error,
                left: left(&rest),
            });
        }
    }
    Ok(done)
}

/// A note for each DNS pod of the node being deleted (Terminating), which is not recreated.
fn note_terminating(kubectl: &mut Kubectl, pods: &[DnsPod], names: &[String]) {
    for pod in pods
        .iter()
        .filter(|p| p.terminating && names.contains(&p.node))
    {
        // A ReplicaSet makes the replacement of a Terminating pod at once; a DaemonSet only
        // once it is gone (kubernetes pkg/controller/daemon/daemon_controller.go counts a
        // terminating pod not yet terminal as the node's).
        let replacement = if pod.is_node_local() {
            "its DaemonSet makes another on the node once it is gone (a finalizer that holds \
             it holds the node's nodelocaldns off)"
        } else {
            "its ReplicaSet made its replacement already"
        };
        kubectl.notes.push(format!(
            "DNS pod {} on {} is being deleted (Terminating): not recreated, {replacement}",
            crate::text::escape(&format!("{}/{}", pod.namespace(), pod.name)),
            crate::text::escape(&pod.node)
        ));
    }
}

/// The pods left after a stop (`rest`, in recreation order) but the node's Ready CoreDNS
/// replicas, which are named in `error` apart: deleting one by hand while no other
/// replica is Ready (a replacement that did not come up says that may be so) leaves the
/// cluster without a Ready CoreDNS.
fn ready_apart(rest: &[DnsPod], error: String) -> (Vec<DnsPod>, String) {
    let (ready, others): (Vec<DnsPod>, Vec<DnsPod>) = rest
        .iter()
        .cloned()
        .partition(|p| !p.is_node_local() && p.ready);
    if ready.is_empty() {
        return (others, error);
    }
    let named: Vec<String> = ready
        .iter()
        .map(|p| crate::text::escape(&format!("{}/{}", p.namespace(), p.name)).into_owned())
        .collect();
    (
        others,
        format!(
            "{error}; the node's Ready CoreDNS {} {} left as {} {}: recreate each only once \
             another replica is Ready, one at a time",
            if ready.len() == 1 {
                "replica"
            } else {
                "replicas"
            },
            named.join(", "),
            if ready.len() == 1 { "it" } else { "they" },
            if ready.len() == 1 { "is" } else { "are" },
        ),
    )
}

/// Why the namespaces `also` are not listed on this node, where the cluster does not
/// confirm them ([`Kubectl::confirm_elsewhere`]; `pods` the DNS pods as just listed):
/// the namespaces outside kube-system of the plan's other nodes, added to a node's own
/// in case a CoreDNS pod landed there after the plan. They are not the node's own
/// planned pods: where a Services list timed out, or the Service changed mid-run, they
/// are left out ([`left_unconfirmed`] says what that left), and the node's own pods are
/// still recreated. None where they are confirmed.
pub async fn unconfirmed_also(
    kubectl: &mut Kubectl,
    pods: &[DnsPod],
    also: &[(String, Option<String>)],
) -> Option<Unconfirmed> {
    kubectl.confirm_elsewhere(pods, also).await.err()
}

/// Whether a DNS pod to recreate is on a node (`names`) where the plan saw none: among
/// kube-system's as just listed (`pods`), or in `namespaces` (those outside kube-system a
/// pod would be recreated in, listed by their selectors: only read, so listed before they
/// are confirmed). One being deleted (Terminating) is none. Why not known, where a listing
/// fails.
pub async fn landed_on_node(
    kubectl: &mut Kubectl,
    pods: &[DnsPod],
    namespaces: &[(String, Option<String>)],
    names: &[String],
) -> Result<bool, String> {
    let here = |p: &DnsPod| names.contains(&p.node) && !p.terminating;
    if pods.iter().any(here) {
        return Ok(true);
    }
    for (namespace, selector) in namespaces {
        let listed = kubectl.dns_pods_in(namespace, selector.as_deref()).await;
        match listed {
            Ok(listed) if listed.iter().any(here) => return Ok(true),
            Ok(_) => {}
            Err(e) => {
                return Err(format!(
                    "listing the CoreDNS pods in {}: {e}",
                    crate::text::escape(namespace)
                ));
            }
        }
    }
    Ok(false)
}

/// What leaving out `also` on a node (`names`) left there, the namespaces of the plan's
/// other nodes not confirmed as the cluster DNS Service's (`why` not): their pods
/// are listed (only read: nothing is deleted there) to see whether one is on the node.
/// A note where none is (nothing was left with the old upstream); an error naming the
/// pods on the node, which still run with the old upstream, each with the delete to run
/// by hand, or, where they could not be listed, the `kubectl get pods` to look with: the
/// host did not do all its plan asks, and a runbook reading exit 0 would take the node's
/// DNS for fixed. Where the cluster DNS Service moved ([`Unconfirmed::Moved`]) its pods
/// there serve no cluster DNS: the error says to make a new plan, naming them, and no
/// delete. A pod being deleted (Terminating) is not counted; a delete is written only for
/// names the API allows.
pub async fn left_unconfirmed(
    kubectl: &mut Kubectl,
    also: &[(String, Option<String>)],
    names: &[String],
    why: &Unconfirmed,
) -> Result<String, String> {
    let cause = why.cause();
    let shown: Vec<String> = also
        .iter()
        .map(|(ns, sel)| {
            format!(
                "{} (by {})",
                crate::text::escape(ns),
                crate::text::escape(sel.as_deref().unwrap_or("(none)"))
            )
        })
        .collect();
    let what = format!(
        "CoreDNS in {}, which the plan recreates on other nodes, is not confirmed as the \
         cluster DNS Service's ({cause}), so none of its pods is recreated on this node",
        shown.join(", ")
    );
    let mut here = Vec::new();
    for (namespace, selector) in also {
        match kubectl.dns_pods_in(namespace, selector.as_deref()).await {
            // One being deleted (Terminating) is no pod of the node any more: its
            // controller made another.
            Ok(listed) => here.extend(
                listed
                    .into_iter()
                    .filter(|p| names.contains(&p.node) && !p.terminating),
            ),
            Err(e) => {
                let look: Vec<String> = also
                    .iter()
                    .map(|(ns, sel)| {
                        format!(
                            "kubectl -n {} get pods -l {} -o wide",
                            crate::text::escape(ns),
                            crate::text::escape(sel.as_deref().unwrap_or("(none)"))
                        )
                    })
                    .collect();
                return Err(format!(
                    "{what}, and its pods could not be listed ({e}): one put on this node \
                     after the plan, if any, still runs with the old upstream; look ({}) and \
                     recreate it by hand",
                    look.join("; ")
                ));
            }
        }
    }
    if here.is_empty() {
        return Ok(format!(
            "{what}; none of its pods is on this node, so none was left with the old upstream"
        ));
    }
    // Where the cluster DNS Service is now another, those pods serve no cluster DNS: the
    // plan is stale, and a new one looks at the Service's pods where it is now.
    if let Unconfirmed::Moved(_) = why {
        let shown: Vec<String> = here
            .iter()
            .map(|p| crate::text::escape(&format!("{}/{}", p.namespace(), p.name)).into_owned())
            .collect();
        return Err(format!(
            "{what}, and the cluster DNS Service is no longer there: the plan is stale, make a \
             new plan (its pods on this node: {})",
            shown.join(", ")
        ));
    }
    let left: Vec<(String, String)> = here
        .iter()
        .map(|p| (p.namespace().to_owned(), p.name.clone()))
        .collect();
    let (by_hand, odd) = deletes_by_hand(&left);
    let mut error = what;
    if !by_hand.is_empty() {
        error = format!(
            "{error}, and these on it still run with the old upstream: recreate them by hand \
             ({})",
            by_hand.join("; ")
        );
    }
    if !odd.is_empty() {
        error = format!("{error}; {odd}");
    }
    Err(error)
}

/// The DNS pods of a node (`names`) in the order they are recreated, each kind as listed:
/// first the CoreDNS pods that are not Ready (deleting one takes nothing away, and its
/// replacement, on this node now fixed, is Ready with the new upstream), then the
/// nodelocaldns pods, Kubespray's secondary after the primary (its readiness probe asks
/// the primary's health port, [`DnsPod::serving`], so its replacement is Ready only once
/// the primary is), and the Ready CoreDNS pods last: each is weighed as the last Ready
/// replica ([`last_ready`]) only once the node's other replicas were replaced, so a Ready
/// pod beside a looping one of the same Deployment is recreated in the same run, not kept
/// for a second one; and where a replacement before it does not come up, the rest stop
/// with the working replica untouched. A pod being deleted (Terminating,
/// [`DnsPod::terminating`]) is left out: its controller made its replacement already, and
/// deleting it again would wait `--health-timeout` for another that never comes.
fn recreation_order(pods: Vec<DnsPod>, names: &[String]) -> Vec<DnsPod> {
    let mut on_node: Vec<DnsPod> = pods
        .into_iter()
        .filter(|p| names.contains(&p.node) && !p.terminating)
        .collect();
    on_node.sort_by_key(|p| match (p.is_node_local(), p.ready) {
        (false, false) => 0,
        (true, _) if p.app != "nodelocaldns-secondary" => 1,
        (true, _) => 2,
        (false, true) => 3,
    });
    on_node
}

/// A pod a plan saw not Ready: its namespace, its name, and its container's restarts then.
pub type NotReadyBefore = (String, String, u64);

/// From a pod's state as a plan shows it ([`DnsPod::state`]: "ready", "CrashLoopBackOff, 7
/// restarts, loop detected"), its container's restarts where it was not Ready; None where
/// it was Ready.
pub fn not_ready_restarts(state: &str) -> Option<u64> {
    if state == "ready" {
        return None;
    }
    let restarts = state
        .split(", ")
        .find_map(|part| part.strip_suffix(" restarts")?.parse().ok());
    Some(restarts.unwrap_or(0))
}

/// How long past a readiness probe's period and timeout the kubelet's status update may take
/// to reach the API server.
const SETTLE_MARGIN: Duration = Duration::from_secs(5);

/// How often the node's pods are listed while they settle.
const SETTLE_POLL: Duration = Duration::from_secs(1);

/// Whether `pod`, on a node whose kubelet just restarted, may read not Ready only because the
/// new kubelet has not probed it yet. A kubelet starts with no readiness result for any
/// container, and a container with a readiness probe but no result is not ready
/// (kubernetes@0181833d pkg/kubelet/prober/prober_manager.go UpdatePodStatus: `ready =
/// !exists`); its probe worker sleeps a random part of periodSeconds before the first probe
/// when the kubelet started within that period (kubernetes@00421113
/// pkg/kubelet/prober/worker.go run), and one success is Ready again (kubernetes#100277,
/// #113646, #125397). So a CoreDNS replica serving when the kubelet restarted reads not
/// Ready for up to its periodSeconds plus timeoutSeconds: sorted first, not weighed as the
/// last Ready one ([`last_ready`]), and deleted, while the others may be the node's
/// looping replicas. Those are its containers running, not waiting, with a readiness
/// probe, not being deleted, and not seen not Ready by the plan with as many restarts as
/// now (that container was not Ready before the restart either; one the plan did not see,
/// put there since, is waited for). nodelocaldns is not: its order and deletion do not
/// depend on its readiness.
fn unprobed(pod: &DnsPod, not_ready_before: &[NotReadyBefore]) -> bool {
    let not_ready_before = not_ready_before.iter().any(|(ns, name, restarts)| {
        *name == pod.name && ns == pod.namespace() && *restarts == pod.restarts
    });
    !pod.is_node_local()
        && !pod.ready
        && pod.running
        && pod.waiting.is_none()
        && !pod.terminating
        && pod.readiness.is_some()
        && !not_ready_before
}

/// The kubelets this run restarted, for the step that recreates a node's DNS pods
/// ([`recreate_node_pods`]): a CoreDNS replica on any of them, serving before, may read not
/// Ready until the restarted kubelet probed it ([`unprobed`]). With `--serial` above 1 the
/// nodes of a batch restart their kubelets together, so the replica another node of the
/// batch holds may read not Ready just when this node weighs its own as the last Ready one
/// ([`weigh`]). Each node is noted from the start of its apply script (its kubelet may be
/// restarting while another node weighs its replica) to when the script returned, after
/// the restart and its health gate: the restart's time as this machine's clock tells it
/// (`Instant`), never a node's clock or the API server's. Shared by the run's nodes.
#[derive(Debug, Default)]
pub struct Restarted {
    /// The pods the run's plans saw not Ready ([`unprobed`]), on every node of the run.
    not_ready_before: Vec<NotReadyBefore>,
    /// Each node's names ([`node_names`]), with when its apply script returned; None while
    /// it runs.
    kubelets: std::sync::Mutex<Vec<(Vec<String>, Option<Instant>)>>,
}

impl Restarted {
    /// `not_ready_before`: the pods the run's plans saw not Ready, on all its nodes.
    pub fn new(not_ready_before: Vec<NotReadyBefore>) -> Restarted {
        Restarted {
            not_ready_before,
            kubelets: std::sync::Mutex::new(Vec::new()),
        }
    }

    fn kubelets(&self) -> std::sync::MutexGuard<'_, Vec<(Vec<String>, Option<Instant>)>> {
        self.kubelets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A node (`names`) whose apply script, which restarts its kubelet, starts now.
    pub fn restarting(&self, names: &[String]) {
        let mut kubelets = self.kubelets();
        kubelets.retain(|(n, _)| n != names);
        kubelets.push((names.to_vec(), None));
    }

    /// Its apply script is over: its kubelet restarted before `at`; None where it did not
    /// (the node locked, nothing to do, a stale file), which forgets the node.
    pub fn ended(&self, names: &[String], at: Option<Instant>) {
        let mut kubelets = self.kubelets();
        kubelets.retain(|(n, _)| n != names);
        if let Some(at) = at {
            kubelets.push((names.to_vec(), Some(at)));
        }
    }

    /// Until when `pod`, where it may read not Ready only for want of a probe
    /// ([`unprobed`]), is waited for: its probe's bound ([`settle_bound`]) past its node's
    /// kubelet restart, or past `since` (when the wait began) while that node's apply
    /// script still runs: a fixed cap, not one that slides with the clock, so a script
    /// whose end is never noted, or one that runs its handlers' health gates for minutes,
    /// is not followed with the one-node-at-a-time lock held. None where this run did not
    /// restart its node's kubelet.
    fn deadline(&self, pod: &DnsPod, since: Instant) -> Option<Instant> {
        let at = self.when(&pod.node)?.unwrap_or(since);
        Some(at.checked_add(settle_bound(pod)).unwrap_or(at))
    }

    /// Whether `pod`, read Ready in a listing taken at `listed`, is Ready for all that: a
    /// kubelet just restarted posts a container with a readiness probe whose worker has
    /// not run yet as Ready, a broken one too, for the moment before its first probe (no
    /// worker counts as Ready: kubernetes#131303, #133770, #135795). So a replica on a
    /// node whose kubelet this run restarted is Ready only as listed at or after its
    /// probe's bound past that restart ([`settle_bound`]), and never while that node's
    /// apply script still runs (its kubelet may be restarting just then). A pod without a
    /// readiness probe is Ready once it runs, restart or not.
    fn ready_as_listed(&self, pod: &DnsPod, listed: Instant) -> bool {
        if pod.readiness.is_none() {
            return true;
        }
        match self.when(&pod.node) {
            None => true,
            Some(None) => false,
            Some(Some(at)) => listed >= at.checked_add(settle_bound(pod)).unwrap_or(at),
        }
    }

    /// When `node`'s kubelet restarted in this run, as [`Restarted::ended`] noted it;
    /// `Some(None)` while its apply script runs; None where this run did not restart it.
    pub(crate) fn when(&self, node: &str) -> Option<Option<Instant>> {
        self.kubelets()
            .iter()
            .rev()
            .find(|(names, _)| names.iter().any(|n| n == node))
            .map(|(_, at)| *at)
    }

    /// Whether `pod` may read not Ready only for want of a probe ([`unprobed`]) by what the
    /// run's plans saw.
    fn unprobed(&self, pod: &DnsPod) -> bool {
        unprobed(pod, &self.not_ready_before)
    }
}

/// How long after its kubelet's restart a pod may read not Ready for want of a probe: its
/// readiness probe's periodSeconds plus timeoutSeconds ([`readiness_probe`]) and
/// [`SETTLE_MARGIN`].
fn settle_bound(pod: &DnsPod) -> Duration {
    pod.readiness
        .unwrap_or_default()
        .saturating_add(SETTLE_MARGIN)
}

/// The node's (`names`) DNS pods once the restarted kubelet has probed those that may read
/// not Ready only for want of a probe ([`unprobed`]): their namespaces listed again every
/// [`SETTLE_POLL`] until each is Ready, no longer running, gone, or past its readiness
/// probe's periodSeconds plus timeoutSeconds and [`SETTLE_MARGIN`], counted from the
/// kubelet's restart where this run made it ([`Restarted::deadline`]: a node waiting for
/// its turn while the other nodes of its batch recreate theirs has had its pods probed by
/// then), else from now (the restart was before: a bound from it would be shorter). Then
/// a pod still not Ready failed the probe the kubelet ran. Nothing is waited for where
/// none is pending; a listing that fails is asked again until the bound.
async fn settle(
    kubectl: &mut Kubectl,
    mut pods: Vec<DnsPod>,
    names: &[String],
    restarted: &Restarted,
) -> Vec<DnsPod> {
    let started = Instant::now();
    // The restart's time is when the apply script returned, once the kubelet's healthz
    // answered; but the kubelet serves healthz as soon as it started its run loop in the
    // background, before the sync loop starts the probe workers (kubernetes@001332b0
    // cmd/kubelet/app/server.go run: RunKubelet, whose startKubelet does `go k.Run`, then
    // the healthz server). So a pending pod is waited for at least SETTLE_MARGIN past the
    // step's start, the slack the wait had before it counted from the restart.
    let floor = started.checked_add(SETTLE_MARGIN).unwrap_or(started);
    let deadline = |p: &DnsPod| {
        restarted
            .deadline(p, started)
            .unwrap_or_else(|| started.checked_add(settle_bound(p)).unwrap_or(started))
            .max(floor)
    };
    let mut pending: Vec<usize> = (0..pods.len())
        .filter(|&i| names.contains(&pods[i].node) && restarted.unprobed(&pods[i]))
        .collect();
    loop {
        pending.retain(|&i| Instant::now() < deadline(&pods[i]));
        if pending.is_empty() {
            return pods;
        }
        tokio::time::sleep(SETTLE_POLL).await;
        let mut asked: Vec<(String, Option<String>)> = Vec::new();
        for &i in &pending {
            let key = (pods[i].namespace().to_owned(), pods[i].selector.clone());
            if !asked.contains(&key) {
                asked.push(key);
            }
        }
        for (namespace, selector) in asked {
            let Ok(listed) = kubectl.dns_pods_in(&namespace, selector.as_deref()).await else {
                continue;
            };
            pending.retain(|&i| {
                if pods[i].namespace() != namespace {
                    return true;
                }
                let Some(now) = listed.iter().find(|p| p.name == pods[i].name) else {
                    return false;
                };
                pods[i] = now.clone();
                restarted.unprobed(&pods[i])
            });
        }
    }
}

/// The pods that may replace `pod`: of its app, not itself, and new since `before` was
/// listed (or, when it was gone before we deleted it, also any on its node); for
/// nodelocaldns (a DaemonSet's) only on its node, for CoreDNS (a Deployment's) anywhere.
fn candidates<'a>(
    pods: &'a [DnsPod],
    pod: &DnsPod,
    before: &[String],
    gone_before: bool,
) -> Vec<&'a DnsPod> {
    pods.iter()
        .filter(|p| p.app == pod.app && p.name != pod.name)
        .filter(|p| p.namespace() == pod.namespace())
        .filter(|p| !before.contains(&p.name) || (gone_before && p.node == pod.node))
        .filter(|p| !pod.is_node_local() || p.node == pod.node)
        .collect()
}

/// Why `pod` is not deleted, where it is a Ready CoreDNS pod and the other replicas of
/// its app in its namespace (`like`, as just listed by its namespace and selector) are
/// there, none of them Ready: deleting it would leave the cluster no Ready CoreDNS until
/// its replacement comes up, and a replacement on a node whose kubelet file is still the
/// old one (a later batch fixes it) may never. Each replica is named with its state.
/// None where it may be deleted: it is not Ready (deleting it takes nothing away), it is
/// nodelocaldns (each node has its own), another replica is Ready, or it is the only one
/// (a one-replica CoreDNS, k3s's: there is no other way to give it the new file).
fn last_ready(pod: &DnsPod, like: &[DnsPod], first: &[DnsPod]) -> Option<String> {
    if pod.is_node_local() {
        return None;
    }
    // Ready as listed just now, or, for a pod of this node (`first`: as the step listed
    // them first), Ready then and the same container running since: the kubelet posts
    // every pod of its node not Ready a moment after its restart, until the first probe
    // (kubernetes#78733, #113646), which may fall between the two listings. That errs
    // only toward keeping a pod. Not for other nodes' replicas: one whose node stopped
    // answering is posted not Ready without a restart, and is not serving.
    let ready_now = |p: &DnsPod| {
        p.ready
            || first.iter().any(|f| {
                f.name == p.name
                    && f.namespace() == p.namespace()
                    && f.ready
                    && f.restarts == p.restarts
                    && p.waiting.is_none()
            })
    };
    let ready = like
        .iter()
        .find(|p| p.name == pod.name && p.namespace() == pod.namespace())
        .map_or(pod.ready, ready_now);
    // A replica being deleted (Terminating on a node that went away) is none: it never
    // turns Ready again, and waiting for it would keep this pod for good.
    let others: Vec<&DnsPod> = like
        .iter()
        .filter(|p| p.app == pod.app && p.namespace() == pod.namespace() && p.name != pod.name)
        .filter(|p| !p.terminating)
        .collect();
    if !ready || others.is_empty() || others.iter().any(|p| ready_now(p)) {
        return None;
    }
    let shown: Vec<String> = others
        .iter()
        .map(|p| {
            let name = match p.namespace() {
                "kube-system" => p.name.clone(),
                ns => format!("{ns}/{}", p.name),
            };
            let at = match p.node.as_str() {
                "" => "not scheduled".to_owned(),
                node => format!("on {}", crate::text::escape(node)),
            };
            format!(
                "{} {at}: {}",
                crate::text::escape(&name),
                crate::text::escape(&p.state())
            )
        })
        .collect();
    Some(format!(
        "not deleted: it is the only Ready {} replica, the others are not Ready ({}), and \
         deleting it would leave the cluster without a Ready one; run the plan again once \
         another is Ready",
        pod.app,
        shown.join(", ")
    ))
}

/// How often a replacement is looked for.
const POLL: Duration = Duration::from_millis(500);

/// The replicas of `pod` as listed just before it is deleted, and why it is not
/// ([`last_ready`]; `first` as there, for nodes this run did not restart), if so. On a
/// node whose kubelet this run restarted (this one, or another of the batch, which
/// restart together), a reading taken before the probe's bound past that restart
/// ([`Restarted::ready_as_listed`]) says nothing, Ready or not: before its first probe a
/// restarted kubelet may post a broken replica Ready (kubernetes#131303) and a serving
/// one not Ready (#100277); while that node's apply script runs, no reading does. Where
/// such readings, of `pod` or of its replicas, decide whether it is kept, its namespace
/// is listed again every [`SETTLE_POLL`] until they no longer do, or a listing was asked
/// past every such replica's bound ([`Restarted::deadline`]; for a node still running its
/// script, one bound from the start of this wait): then it is kept, the side that loses
/// no Ready replica, as where the listings failed meanwhile. A verdict no reading can change (the
/// only replica, another Ready on a node this run did not restart) waits for nothing.
/// Never by a listing from before (the other node's pods may have been recreated since):
/// each node weighs the others as they are, one node at a time. A CoreDNS pod without a
/// readiness probe is Ready as listed once it runs, restart or not.
async fn weigh(
    kubectl: &mut Kubectl,
    pod: &DnsPod,
    first: &[DnsPod],
    restarted: &Restarted,
) -> Result<(Vec<DnsPod>, Option<String>), String> {
    let started = Instant::now();
    // When the listing `like` holds was asked, and when the last one was, failed or not.
    let (mut listed, mut asked) = (started, started);
    let mut like = kubectl.pods_like(pod).await?;
    // The step's first listing speaks for a pod of a node this run did not restart (a
    // takeover's) alone: on a node it restarted, that listing came before the first probe,
    // when a broken replica may be posted Ready and a serving one not Ready; such pods are
    // judged by a listing past their probe's bound instead (below).
    let first: Vec<DnsPod> = first
        .iter()
        .filter(|f| restarted.when(&f.node).is_none())
        .cloned()
        .collect();
    loop {
        // This pod and its replicas on a node this run restarted whose reading, Ready or
        // not (running, not waiting), came before their probe's bound: too early to tell.
        let early: Vec<&str> = like
            .iter()
            .filter(|p| p.app == pod.app && p.namespace() == pod.namespace())
            .filter(|p| p.ready || restarted.unprobed(p))
            .filter(|p| restarted.when(&p.node).is_some() && !restarted.ready_as_listed(p, listed))
            .map(|p| p.name.as_str())
            .collect();
        // Kept however those turn out (the pod Ready, the others not), or deleted however
        // they do (the pod not Ready, the others Ready): decided, whatever they read.
        let keep = last_ready(pod, &counted(&like, &early, pod, true), &first);
        let may_delete = last_ready(pod, &counted(&like, &early, pod, false), &first).is_none();
        if keep.is_none() || !may_delete {
            return Ok((like, keep));
        }
        // A bound no listing was asked past yet: one asked before it may have come back
        // after it (a slow API server), and the next one decides.
        let until = like
            .iter()
            .filter(|p| early.contains(&p.name.as_str()))
            .filter_map(|p| restarted.deadline(p, started))
            .max()
            .filter(|until| *until > asked);
        // Undecided past every bound (a listing asked past it failed, a node whose script
        // still runs): kept, the side that loses no Ready replica.
        let Some(until) = until else {
            let why = keep.map(|why| {
                format!(
                    "{why} (as a kubelet this run restarted may post them before its first \
                     probe: {} not known yet)",
                    crate::text::escape(&early.join(", "))
                )
            });
            return Ok((like, why));
        };
        let now = Instant::now();
        tokio::time::sleep(SETTLE_POLL.min(until.saturating_duration_since(now))).await;
        asked = Instant::now();
        if let Ok(again) = kubectl.pods_like(pod).await {
            (like, listed) = (again, asked);
        }
    }
}

/// `pods` with those named in `early` counted as `own` says for `pod` and the opposite for
/// its replicas ([`weigh`]): `own` true is the assignment that keeps `pod` if any does, false
/// the one that lets it be deleted if any does.
fn counted(pods: &[DnsPod], early: &[&str], pod: &DnsPod, own: bool) -> Vec<DnsPod> {
    pods.iter()
        .map(|p| {
            let mut p = p.clone();
            if early.contains(&p.name.as_str()) {
                p.ready = if p.name == pod.name { own } else { !own };
                if p.ready {
                    p.waiting = None;
                }
            }
            p
        })
        .collect()
}

/// `first`: the node's DNS pods as the step listed them first ([`last_ready`]);
/// `restarted`: the kubelets this run restarted ([`weigh`]).
async fn recreate(
    kubectl: &mut Kubectl,
    pod: &DnsPod,
    first: &[DnsPod],
    restarted: &Restarted,
    timeout: Duration,
) -> Result<PodRecreation, String> {
    let (like, kept) = weigh(kubectl, pod, first, restarted).await?;
    let started = Instant::now();
    let mut step = PodRecreation {
        pod: pod.name.clone(),
        app: pod.app.clone(),
        node: pod.node.clone(),
        replacement: None,
        ok: false,
        message: String::new(),
        namespace: pod.namespace.clone(),
        kept: false,
    };
    if let Some(why) = kept {
        step.message = why;
        step.kept = true;
        return Ok(step);
    }
    let before: Vec<String> = like.into_iter().map(|p| p.name).collect();
    let deleted = kubectl
        .delete_pod(pod.namespace(), &pod.name)
        .await
        .map_err(|e| format!("delete pod {}: {e}", step.shown()))?;
    // Deleted by someone else since it was listed (a concurrent run): its replacement may
    // already be among the pods listed, so one on the same node counts too.
    let gone_before = !deleted || !before.contains(&pod.name);
    let mut last = None;
    let mut error = None;
    while started.elapsed() < timeout {
        tokio::time::sleep(POLL).await;
        // One failed poll is not a failed replacement: ask again until the deadline.
        let pods = match kubectl.pods_like(pod).await {
            Ok(pods) => pods,
            Err(e) => {
                error = Some(e);
                continue;
            }
        };
        let new = candidates(&pods, pod, &before, gone_before);
        if let Some(ready) = new.iter().find(|p| p.ready) {
            step.ok = true;
            step.replacement = Some(ready.name.clone());
            step.message = format!(
                "replaced by {} on {}, Ready after {}s",
                ready.name,
                ready.node,
                started.elapsed().as_secs()
            );
            return Ok(step);
        }
        last = new.first().map(|p| (*p).clone());
    }
    step.message = match last {
        None => format!(
            "deleted; no replacement appeared within {}s{}",
            timeout.as_secs(),
            error
                .map(|e| format!(" (kubectl: {e})"))
                .unwrap_or_default()
        ),
        // A CoreDNS replacement the scheduler put on another node reads that node's
        // kubelet file: its state is that node's business (its own fix may follow in a
        // later batch), not a failure of this one.
        Some(p) if !pod.is_node_local() && p.node != pod.node => {
            step.ok = true;
            step.replacement = Some(p.name.clone());
            format!(
                "replaced by {} on {}, not Ready after {}s ({}): that node's kubelet \
                 resolv.conf decides",
                p.name,
                p.node,
                timeout.as_secs(),
                p.waiting.as_deref().unwrap_or(&p.phase)
            )
        }
        Some(p) => {
            // Why it is not Ready: the loop plugin's line where its previous run crashed on
            // a loop, or why that log could not be told.
            let previous = if p.restarts > 0 || p.waiting.is_some() {
                match kubectl.previous_loop_line(&p).await {
                    Ok(line) => line.map(|l| format!(" ({l})")),
                    Err(why) => Some(format!(" (its previous log not read: {why})")),
                }
            } else {
                None
            };
            step.replacement = Some(p.name.clone());
            format!(
                "deleted; its replacement {} on {} is not Ready after {}s: {}{}",
                p.name,
                p.node,
                timeout.as_secs(),
                p.waiting.as_deref().unwrap_or(&p.phase),
                previous.unwrap_or_default()
            )
        }
    };
    Ok(step)
}

/// The names a node may have in the cluster: the kubelet's `--hostname-override`, else
/// the machine's hostname, else (the hostname unread) the inventory name, which an in-tree
/// cloud provider adds too; lowercase, as node names are. The kubelet registers under the
/// override, else the hostname it reads from /proc/sys/kernel/hostname, trimmed and
/// lowercased (kubernetes staging/src/k8s.io/component-helpers/node/util/hostname.go
/// `GetHostname`): the inventory name is no name of the node's once its hostname is known.
/// Taking both would make an inventory entry whose `ansible_host` points at another
/// machine (a copy-paste, a recycled address) claim the DNS pods of the node it is named
/// after, and apply would recreate them with this node's.
pub fn node_names(host: &Host, facts: &crate::facts::NodeFacts) -> Vec<String> {
    // With --hostname-override the kubelet registers under that name alone: the machine's
    // hostname could be another node's (cloned VMs).
    let overridden: Vec<String> = facts
        .kubelet
        .flags
        .iter()
        .filter(|f| f.name == "hostname-override")
        .filter_map(|f| f.value.clone())
        .filter(|v| !v.trim().is_empty())
        .map(|n| n.trim().to_lowercase())
        .collect();
    if let Some(name) = overridden.last() {
        return vec![name.clone()];
    }
    let hostname = facts
        .hostname
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty());
    let mut names = vec![hostname.unwrap_or(&host.name).to_lowercase()];
    // An in-tree cloud provider (kubelets before 1.27 with `--cloud-provider=aws`) names
    // the node itself (EC2's private DNS name, kubelet `getNodeName`), which Kubespray's
    // docs/cloud_providers/aws.md has the inventory name match: that name too.
    let in_tree = facts
        .kubelet
        .flags
        .iter()
        .filter(|f| f.name == "cloud-provider")
        .filter_map(|f| f.value.as_deref())
        .next_back()
        .is_some_and(|p| !p.trim().is_empty() && p.trim() != "external");
    let inventory = host.name.to_lowercase();
    if in_tree && !names.contains(&inventory) {
        names.push(inventory);
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Why `log` was not read, as the rules get it.
    fn why(log: &PreviousLog) -> Option<String> {
        log.unread.as_ref().map(Unread::why)
    }

    /// Two pods as `kubectl get pods -o json` lists them (core/v1 Pod): a CoreDNS replica
    /// crash-looping on node1, a nodelocaldns pod running on node2.
    const PODS: &str = r#"{"apiVersion":"v1","kind":"List","items":[
      {"apiVersion":"v1","kind":"Pod",
       "metadata":{"name":"coredns-5d78c9869d-x7k2p","namespace":"kube-system",
                   "labels":{"k8s-app":"kube-dns","pod-template-hash":"5d78c9869d"}},
       "spec":{"nodeName":"Node1","dnsPolicy":"Default"},
       "status":{"phase":"Running","containerStatuses":[{"name":"coredns","ready":false,
         "restartCount":12,"state":{"waiting":{"reason":"CrashLoopBackOff",
         "message":"back-off 5m0s restarting failed container=coredns pod=coredns-5d78c9869d-x7k2p_kube-system"}},
         "lastState":{"terminated":{"exitCode":1,"reason":"Error"}}}]}},
      {"apiVersion":"v1","kind":"Pod",
       "metadata":{"name":"nodelocaldns-9wqzb","namespace":"kube-system","labels":{"k8s-app":"node-local-dns"}},
       "spec":{"nodeName":"node2","hostNetwork":true},
       "status":{"phase":"Running","containerStatuses":[{"name":"node-cache","ready":true,
         "restartCount":0,"state":{"running":{"startedAt":"2026-11-20T08:00:00Z"}}}]}}]}"#;

    /// kube-proxy's masqueradeAll in v1alpha1: the `iptables` section's in iptables and IPVS
    /// modes, the `nftables` section's in nftables mode (conversion.go @91118b59), with the
    /// key read; false where the key is not there; unread, with why, for another version or
    /// a value not a bool.
    #[test]
    fn masquerade_all_is_read_from_the_section_of_the_mode() {
        let of = |conf: &str| {
            let json = serde_json::json!({"kind": "ConfigMap", "metadata": {"name": "kube-proxy"},
                "data": {"config.conf": conf}});
            parse_configmaps(json.to_string().as_bytes())
                .expect("configmap")
                .kube_proxy_masquerade_all
                .expect("read")
        };
        let read = |on: bool, key: &str| MasqueradeAll::Read {
            on,
            key: key.to_owned(),
        };
        let v1 = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n";
        assert_eq!(
            of(&format!(
                "{v1}iptables:\n  masqueradeAll: True\nmode: ipvs\n"
            )),
            read(true, "iptables.masqueradeAll")
        );
        assert_eq!(
            of(&format!(
                "{v1}iptables:\n  masqueradeAll: true\nmode: \"\"\n"
            )),
            read(true, "iptables.masqueradeAll")
        );
        // nftables mode reads its own section: Kubespray's iptables one does nothing there.
        assert_eq!(
            of(&format!(
                "{v1}iptables:\n  masqueradeAll: true\nmode: nftables\n"
            )),
            read(false, "nftables.masqueradeAll")
        );
        assert_eq!(
            of(&format!(
                "{v1}nftables:\n  masqueradeAll: true\nmode: nftables\n"
            )),
            read(true, "nftables.masqueradeAll")
        );
        assert_eq!(
            of(&format!("{v1}mode: ipvs\n")),
            read(false, "iptables.masqueradeAll")
        );
        assert_eq!(
            of(&format!("{v1}iptables:\n  masqueradeAll: \"yes\"\n")),
            MasqueradeAll::Unread("iptables.masqueradeAll is yes, not a boolean".into())
        );
        // v1alpha2 keeps it elsewhere: not read, and said so, rather than taken as false.
        let MasqueradeAll::Unread(why) = of(
            "apiVersion: kubeproxy.config.k8s.io/v1alpha2\nlinux:\n  masqueradeAll: true\nmode: ipvs\n",
        ) else {
            panic!("v1alpha2 read");
        };
        assert!(
            why.starts_with("apiVersion kubeproxy.config.k8s.io/v1alpha2,"),
            "{why}"
        );
    }

    /// The lab's ConfigMaps (Kubespray's templates rendered with its defaults, kubeadm's
    /// kubelet-config): Corefiles, kube-proxy's mode and the kubelet settings.
    #[test]
    fn configmaps_are_read_from_kubectl_json() {
        let config = parse_configmaps(include_bytes!("../../tests/lab/standins/configmaps.json"))
            .expect("configmaps");
        let coredns = config
            .corefiles
            .iter()
            .find(|c| c.configmap == "coredns")
            .expect("coredns");
        let root = coredns.root().expect(".:53");
        let forward = root.forward.as_ref().expect("forward");
        assert_eq!(
            (forward.to.as_slice(), root.loop_plugin),
            (&["/etc/resolv.conf".to_owned()][..], true)
        );
        let nodelocal = config
            .corefiles
            .iter()
            .find(|c| c.configmap == "nodelocaldns")
            .expect("nodelocaldns");
        assert_eq!(nodelocal.blocks.len(), 4);
        assert!(
            nodelocal
                .root()
                .and_then(|b| b.forward.as_ref())
                .is_some_and(corefile::Forward::to_resolv_conf)
        );
        assert_eq!(config.kube_proxy_mode.as_deref(), Some("ipvs"));
        // Kubespray renders kube_proxy_masquerade_all (false) as `masqueradeAll: False`.
        assert_eq!(
            config.kube_proxy_masquerade_all,
            Some(MasqueradeAll::Read {
                on: false,
                key: "iptables.masqueradeAll".into()
            })
        );
        let kubelet = config.kubeadm_kubelet.expect("kubelet-config");
        assert_eq!(
            kubelet.resolv_conf.as_deref(),
            Some("/run/systemd/resolve/resolv.conf")
        );
        assert_eq!(kubelet.cluster_dns, ["10.96.0.10"]);
        assert!(config.error.is_none());
        // One ConfigMap comes back as itself, not in a List.
        let one = parse_configmaps(br#"{"kind":"ConfigMap","metadata":{"name":"kube-proxy"},"data":{"config.conf":"mode: \"\"\n"}}"#)
            .expect("one");
        assert_eq!(one.kube_proxy_mode.as_deref(), Some(""));
        // EKS's kube-proxy add-on: the kubeconfig in `kube-proxy`, the configuration in
        // `kube-proxy-config`'s `config` (the DaemonSet's --config=/var/lib/kube-proxy-config/config).
        let eks = parse_configmaps(
            br#"{"kind":"List","items":[
              {"kind":"ConfigMap","metadata":{"name":"kube-proxy"},"data":{"kubeconfig":"kind: Config\n"}},
              {"kind":"ConfigMap","metadata":{"name":"kube-proxy-config"},"data":{"config":"apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: \"ipvs\"\n"}}]}"#,
        )
        .expect("eks");
        assert_eq!(
            (
                eks.kube_proxy_mode.as_deref(),
                eks.kube_proxy_from.as_deref()
            ),
            (Some("ipvs"), Some("kube-proxy-config (config)"))
        );
        assert!(eks.kube_proxy_configmap);
        let unreadable = parse_configmaps(
            br#"{"kind":"ConfigMap","metadata":{"name":"kube-proxy"},"data":{"kubeconfig":"kind: Config\n"}}"#,
        )
        .expect("kubeconfig only");
        assert_eq!(unreadable.kube_proxy_mode, None);
        assert!(unreadable.kube_proxy_configmap);
        assert!(parse_configmaps(b"[]").is_err());
        // The upstream NodeLocal DNSCache manifest's ConfigMap, by its own name.
        let upstream = parse_configmaps(
            br#"{"kind":"ConfigMap","metadata":{"name":"node-local-dns"},"data":{"Corefile":".:53 {\n    forward . __PILLAR__UPSTREAM__SERVERS__\n}\n"}}"#,
        )
        .expect("node-local-dns");
        assert_eq!(upstream.corefiles.len(), 1);
        assert_eq!(upstream.corefiles[0].configmap, "node-local-dns");
    }

    /// kubeadm before 1.24 keeps the kubelets' settings in `kubelet-config-1.NN`, NN the
    /// minor version in `kubeadm-config`: read from kubectl's answer (the fixture's README
    /// names kubeadm's sources), and asked for by that name only where `kubelet-config` is
    /// missing.
    #[test]
    fn kubeadm_before_1_24_keeps_a_versioned_kubelet_config() {
        let old = include_bytes!("../../tests/fixtures/kubectl/kubeadm-1.23-configmaps.json");
        let config = parse_configmaps(old).expect("configmaps");
        assert_eq!(config.kubeadm_version.as_deref(), Some("v1.23.17"));
        let kubelet = config.kubeadm_kubelet.clone().expect("kubelet-config-1.23");
        assert_eq!(kubelet.configmap, "kubelet-config-1.23");
        assert_eq!(kubelet.resolv_conf, None, "kubeadm left it to the kubelet");
        assert_eq!(kubelet.cluster_dns, ["10.96.0.10"]);
        // Found already: nothing more to ask.
        assert_eq!(config.versioned_kubelet_configmap(), None);
        let first = DnsConfig {
            kubeadm_kubelet: None,
            ..config.clone()
        };
        assert_eq!(
            first.versioned_kubelet_configmap().as_deref(),
            Some("kubelet-config-1.23")
        );
        // Not kubeadm (no kubeadm-config), or the ConfigMaps failed: nothing to ask.
        let k3s = DnsConfig::default();
        assert_eq!(k3s.versioned_kubelet_configmap(), None);
        let failed = DnsConfig {
            error: Some("forbidden".into()),
            ..first.clone()
        };
        assert_eq!(failed.versioned_kubelet_configmap(), None);

        // A cluster upgraded to 1.24 keeps its kubelet-config-1.23: kubelet-config wins,
        // whichever comes first.
        let new = include_bytes!("../../tests/lab/standins/configmaps.json");
        let items = |doc: &[u8]| -> Vec<Value> {
            serde_json::from_slice::<Value>(doc).expect("JSON")["items"]
                .as_array()
                .expect("items")
                .clone()
        };
        for items in [
            [items(old), items(new)].concat(),
            [items(new), items(old)].concat(),
        ] {
            let both = serde_json::json!({"kind": "List", "items": items});
            let config = parse_configmaps(both.to_string().as_bytes()).expect("both");
            let kubelet = config.kubeadm_kubelet.expect("kubelet-config");
            assert_eq!(kubelet.configmap, "kubelet-config");
            assert_eq!(
                kubelet.resolv_conf.as_deref(),
                Some("/run/systemd/resolve/resolv.conf")
            );
        }
    }

    #[test]
    fn versioned_kubelet_config_names_come_from_the_version_alone() {
        for (version, name) in [
            ("v1.23.17", Some("kubelet-config-1.23")),
            ("v1.18.2", Some("kubelet-config-1.18")),
            ("1.22.0", Some("kubelet-config-1.22")),
            ("v1.23-rc.1", Some("kubelet-config-1.23")),
            ("v1.23.0-rc.1", Some("kubelet-config-1.23")),
            ("v1", None),
            ("", None),
            ("v1.x", None),
            ("v1.23;reboot", None),
            ("v1. 23", None),
            ("v-1.23", None),
        ] {
            assert_eq!(kubelet_configmap(version).as_deref(), name, "{version:?}");
        }
        // Only such names count as the versioned ConfigMap.
        assert!(kubelet_configmap_name("kubelet-config-1.23"));
        assert!(!kubelet_configmap_name("kubelet-config-1.23-old"));
        assert!(!kubelet_configmap_name("kubelet-config-backup"));
        assert!(!kubelet_configmap_name("kubelet-config"));
    }

    /// A node's pods are recreated not-Ready CoreDNS first, then nodelocaldns, Kubespray's
    /// secondary (listed first by its name here) after the primary, whose health its
    /// readiness asks, and Ready CoreDNS last, each kind as listed. Before, they went in the
    /// listing's name order, a Ready CoreDNS pod before a looping one of its Deployment.
    #[test]
    fn the_secondary_nodelocaldns_is_recreated_after_the_primary() {
        let mut looping = pod("coredns-5d78c9869d-z9q4m", "coredns", "node1");
        looping.ready = false;
        let pods = vec![
            pod("coredns-5d78c9869d-x7k2p", "coredns", "node1"),
            pod(
                "nodelocaldns-second-7tq8d",
                "nodelocaldns-secondary",
                "node1",
            ),
            looping,
            pod("nodelocaldns-x", "nodelocaldns", "node1"),
            pod("nodelocaldns-y", "nodelocaldns", "node2"),
        ];
        let order: Vec<String> = recreation_order(pods, &["node1".to_owned()])
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(
            order,
            [
                "coredns-5d78c9869d-z9q4m",
                "nodelocaldns-x",
                "nodelocaldns-second-7tq8d",
                "coredns-5d78c9869d-x7k2p"
            ]
        );
    }

    fn pod(name: &str, app: &str, node: &str) -> DnsPod {
        DnsPod {
            name: name.to_owned(),
            app: app.to_owned(),
            node: node.to_owned(),
            phase: "Running".to_owned(),
            ready: true,
            restarts: 0,
            waiting: None,
            running: true,
            terminating: false,
            loop_detected: None,
            logs_read: false,
            logs_unread: None,
            container: None,
            namespace: None,
            selector: None,
            readiness: None,
        }
    }

    /// A CoreDNS replacement may land on any node, a nodelocaldns one only on its own; a
    /// replica that was there before never counts, unless the deleted pod was already gone
    /// (another run deleted it) and it is on the same node.
    #[test]
    fn replacements_follow_the_controller() {
        let deleted = pod("coredns-a", "coredns", "node1");
        let before = vec!["coredns-a".to_owned(), "coredns-b".to_owned()];
        let pods = vec![
            pod("coredns-b", "coredns", "node2"),
            pod("coredns-c", "coredns", "node3"),
            pod("coredns-secondary-s", "coredns-secondary", "node1"),
            pod("nodelocaldns-x", "nodelocaldns", "node1"),
        ];
        let names = |c: Vec<&DnsPod>| c.iter().map(|p| p.name.clone()).collect::<Vec<_>>();
        assert_eq!(
            names(candidates(&pods, &deleted, &before, false)),
            ["coredns-c"]
        );

        let local = pod("nodelocaldns-x", "nodelocaldns", "node1");
        let pods = vec![
            pod("nodelocaldns-y", "nodelocaldns", "node2"),
            pod("nodelocaldns-z", "nodelocaldns", "node1"),
        ];
        let before = vec!["nodelocaldns-x".to_owned(), "nodelocaldns-y".to_owned()];
        assert_eq!(
            names(candidates(&pods, &local, &before, false)),
            ["nodelocaldns-z"]
        );

        // Gone before our delete: its replacement may already have been listed.
        let before = vec!["coredns-b".to_owned(), "coredns-d".to_owned()];
        let pods = vec![
            pod("coredns-b", "coredns", "node2"),
            pod("coredns-d", "coredns", "node1"),
        ];
        assert!(candidates(&pods, &deleted, &before, false).is_empty());
        assert_eq!(
            names(candidates(&pods, &deleted, &before, true)),
            ["coredns-d"]
        );
    }

    /// Every kubectl dnsfix runs, on a node or here, runs without the user's kuberc.
    #[test]
    fn kubectl_runs_without_a_users_kuberc() {
        let export = format!("\nexport {NO_KUBERC}\n");
        assert!(KUBECTL.contains(&export), "{KUBECTL}");
        let local = local_prologue(std::path::Path::new("/etc/kubernetes/admin.conf"));
        assert!(local.contains(&export), "{local}");
    }

    /// The first listing's pods and ConfigMaps come apart at the boundary; a ConfigMap
    /// read that failed or was cut short is an error for the rules, never empty config.
    #[test]
    fn the_first_listing_splits_pods_from_configmaps() {
        let configmaps = include_str!("../../tests/lab/standins/configmaps.json");
        let pods = br#"{"kind":"List","items":[]}"#;
        let out = [&pods[..], format!("\nB7 0\n{configmaps}\nB7\n").as_bytes()].concat();
        let parts = split_listing(&out, "B7");
        assert_eq!(parts.pods, pods);
        assert_eq!(parts.config.error, None);
        assert_eq!(parts.config.corefiles.len(), 2);
        assert!(parts.logs.is_empty());

        let out = [
            &pods[..],
            b"\nB7 1\n\nB7\nError from server (Forbidden)\n\nB7 .nodes\nNAME    STATUS   ROLES    AGE   VERSION\nnode1   Ready    <none>   5d    v1.30.2\n\nB7 .logs\nB7 coredns-a:- 0\n\n",
        ]
        .concat();
        let parts = split_listing(&out, "B7");
        assert_eq!(parts.pods, pods);
        assert_eq!(
            parts.config.error.as_deref(),
            Some("Error from server (Forbidden)")
        );
        assert_eq!(parts.logs.get("coredns-a"), Some(&PreviousLog::default()));
        assert_eq!(
            parts.kubelets.get("node1").map(String::as_str),
            Some("v1.30.2")
        );
        // A node's own version with a newline in it cannot speak for another node: a name
        // that comes twice is left out.
        let forged = parse_kubelets(
            b"NAME STATUS ROLES AGE VERSION\nnode1 Ready <none> 5d v1.30.2\n\
              node2 Ready <none> 5d v1.29.0\nnode1 Ready <none> 5d v1.20.0\n",
        );
        assert_eq!(
            forged,
            Kubelets::from([("node2".to_owned(), "v1.29.0".to_owned())])
        );
        // The columns are found by the header, wherever VERSION is; a row with an empty
        // cell (a kubelet that has not reported) or one word too many is not a node's, nor
        // a version kubectl cut at a newline; no header, no versions.
        let table = b"NAME   STATUS   VERSION   ROLES   AGE\n\
              node1  Ready,SchedulingDisabled    v1.31.0   <none>  5d\n\
              node2  NotReady         <none>  5d\n\
              node3  Ready    v1.31.0 x <none>  5d\n\
              node4  Ready    v1.31.0...   <none>  5d\n";
        assert_eq!(
            parse_kubelets(table),
            Kubelets::from([("node1".to_owned(), "v1.31.0".to_owned())])
        );
        assert!(parse_kubelets(b"node1 Ready <none> 5d v1.30.2\n").is_empty());
        assert!(parse_kubelets(b"").is_empty());

        let parts = split_listing(pods, "B7");
        assert_eq!(parts.pods, pods);
        assert!(parts.config.error.is_some_and(|e| e.contains("cut short")));
    }

    /// Runs the first listing's script with a kubectl that answers `pods` (its `get
    /// pods`), the lab's ConfigMaps and, for `logs POD`, a loop line for the crash-looping
    /// pod; the parts of its output, and the pods whose logs kubectl was asked for (with
    /// `-c CONTAINER` where one was named).
    fn run_listing(pods: &[u8]) -> (ListingParts<'static>, String) {
        let dir = std::env::temp_dir().join(format!("dnsfix-listing-{}", crate::util::nonce()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("pods.json"), pods).expect("pods");
        let configmaps = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/lab/standins/configmaps.json"
        );
        let services = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/kubectl/dns-services.json"
        );
        let stub = format!(
            "#!/bin/sh
case \" $* \" in
\
             *\" get configmap \"*) cat '{configmaps}' ;;
\
             *\" get pods \"*) cat '{dir}/pods.json' ;;
\
             *\" get services -l k8s-app in (kube-dns,kube-dns-secondary,coredns) -o json \"*) cat '{services}' ;;
\
             *\" get nodes \"*) printf 'NAME STATUS ROLES AGE VERSION\\nnode1 Ready <none> 5d v1.30.2\\n\
             node2 Ready <none> 5d v1.29.9+k3s1\\nNode3 Ready <none> 5d v1.30.2\\nnode4 Ready <none> 5d $(id)\\n' ;;
\
             *\" logs \"*) while [ \"$1\" != logs ]; do shift; done; shift
  \
             if [ \"$2\" = -c ]; then echo \"$1 -c $3\"; else echo \"$1\"; fi >>'{dir}/asked'
  \
             [ \"$1\" != coredns-5c54f84c97-q9m4d ] || \
             echo '[FATAL] plugin/loop: Loop (127.0.0.1:38017 -> :53) detected for zone \".\"' ;;
\
             esac
",
            dir = dir.display()
        );
        let kubectl = dir.join("kubectl");
        std::fs::write(&kubectl, stub).expect("stub");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&kubectl, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let prologue = format!("set -- '{}'\n", kubectl.display());
        let budget = ReadBudget::within(Duration::from_secs(60));
        let script = listing_script(&prologue, "B7", Listing::WithLogs, budget);
        let out = std::process::Command::new("sh")
            .args(["-c", &script])
            .output()
            .expect("sh runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let asked = std::fs::read_to_string(dir.join("asked")).unwrap_or_default();
        std::fs::remove_dir_all(&dir).ok();
        let out: &'static [u8] = Box::leak(out.stdout.into_boxed_slice());
        (split_listing(out, "B7"), asked)
    }

    /// On kubectl's own layout (tests/fixtures/kubectl: what kubectl prints), the node
    /// reads the previous logs of exactly the pods that restarted, in the same exec; an
    /// annotation named `name` or a value that looks like JSON chooses nothing. In any
    /// other layout it reads none and [`Kubectl::with_logs`] asks for them as before.
    #[test]
    fn the_listing_reads_the_logs_of_the_pods_that_restarted() {
        let fixture = include_bytes!("../../tests/fixtures/kubectl/dns-pods.json");
        let (parts, asked) = run_listing(fixture);
        assert_eq!(parse_pods(parts.pods).expect("pods").len(), 5);
        assert_eq!(parts.config.error, None);
        // The cluster DNS Services too.
        assert_eq!(
            parts.config.services,
            Some(vec![DnsService {
                name: "coredns".into(),
                cluster_ips: vec!["10.233.0.3".into()],
                namespace: Some("kube-system".into()),
                selector: Some("k8s-app=kube-dns".into()),
            }])
        );
        // The nodes' kubelet versions come in the same exec; a line that is not a node's
        // name and a version is left out.
        assert_eq!(
            parts.kubelets,
            Kubelets::from([
                ("node1".to_owned(), "v1.30.2".to_owned()),
                ("node2".to_owned(), "v1.29.9+k3s1".to_owned()),
            ])
        );
        // Side by side, in any order.
        let mut asked: Vec<&str> = asked.lines().collect();
        asked.sort_unstable();
        assert_eq!(asked, ["coredns-5c54f84c97-q9m4d", "nodelocaldns-2v8kd"]);
        assert_eq!(parts.logs.len(), 2);
        assert!(
            parts.logs["coredns-5c54f84c97-q9m4d"]
                .loop_line
                .as_deref()
                .is_some_and(|l| l.contains("plugin/loop: Loop"))
        );
        assert_eq!(parts.logs["nodelocaldns-2v8kd"], PreviousLog::default());
        assert!(PICK_LOGS.contains(&format!("[ $n -lt {MAX_LOGS} ]")));

        let doc: Value = serde_json::from_slice(fixture).expect("fixture");
        // More restarted pods than MAX_LOGS: only MAX_LOGS are read, and only those have
        // a section (a pod past them is unknown, never clean).
        let mut many = doc.clone();
        let crashing = doc["items"][1].clone();
        many["items"] = Value::Array(
            (0..MAX_LOGS + 5)
                .map(|i| {
                    let mut pod = crashing.clone();
                    pod["metadata"]["name"] = Value::String(format!("coredns-x-{i}"));
                    pod
                })
                .collect(),
        );
        let mut layout = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
        let mut ser = serde_json::Serializer::with_formatter(&mut layout, formatter);
        serde::Serialize::serialize(&many, &mut ser).expect("json");
        let (parts, asked) = run_listing(&layout);
        assert_eq!(parse_pods(parts.pods).expect("pods").len(), MAX_LOGS + 5);
        assert_eq!(
            (asked.lines().count(), parts.logs.len()),
            (MAX_LOGS, MAX_LOGS)
        );

        let compact = serde_json::to_vec(&doc).expect("json");
        let (parts, asked) = run_listing(&compact);
        assert_eq!(parse_pods(parts.pods).expect("pods").len(), 5);
        assert_eq!((parts.logs.len(), asked.as_str()), (0, ""));
    }

    /// The first listing names the DNS container of a pod with several (a sidecar put
    /// first), as [`named_dns_container`] does, so [`Kubectl::with_logs`] takes its log
    /// without a second exec; a volume that bears a DNS container's name names nothing.
    #[test]
    fn the_listing_reads_the_dns_containers_log_by_name() {
        let doc: Value =
            serde_json::from_slice(include_bytes!("../../tests/fixtures/kubectl/dns-pods.json"))
                .expect("fixture");
        let mut many = doc.clone();
        let items = many["items"].as_array_mut().expect("items");
        let first = |v: &mut Value, c: Value| v.as_array_mut().expect("a list").insert(0, c);
        first(
            &mut items[1]["spec"]["containers"],
            serde_json::json!({"name": "proxy", "image": "registry.example/proxy:1.0"}),
        );
        first(
            &mut items[1]["status"]["containerStatuses"],
            serde_json::json!({"name": "proxy", "ready": true, "restartCount": 0,
                               "state": {"running": {"startedAt": "2026-08-21T10:00:00Z"}}}),
        );
        for item in items.iter_mut() {
            if let Some(volumes) = item["spec"]["volumes"].as_array_mut() {
                volumes.push(serde_json::json!({"name": "node-cache", "emptyDir": {}}));
            }
        }
        let mut layout = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
        let mut ser = serde_json::Serializer::with_formatter(&mut layout, formatter);
        serde::Serialize::serialize(&many, &mut ser).expect("json");
        let (parts, asked) = run_listing(&layout);
        let pods = parse_pods(parts.pods).expect("pods");
        let mut asked: Vec<&str> = asked.lines().collect();
        asked.sort_unstable();
        assert_eq!(
            asked,
            ["coredns-5c54f84c97-q9m4d -c coredns", "nodelocaldns-2v8kd"]
        );
        for pod in pods.iter().filter(|p| parts.logs.contains_key(&p.name)) {
            assert_eq!(
                parts.logs[&pod.name].container, pod.container,
                "{}",
                pod.name
            );
        }
        assert!(
            parts.logs["coredns-5c54f84c97-q9m4d"]
                .loop_line
                .as_deref()
                .is_some_and(|l| l.contains("plugin/loop: Loop"))
        );
    }

    /// A CoreDNS pod the kubelet ended at a graceful node shutdown (phase Failed, reason
    /// Terminated, its message: kubernetes/kubernetes @1dd781dd
    /// pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go:43-44) stays listed until the
    /// pod garbage collector takes it (kubernetes/kubernetes#98012), beside the replacement
    /// its Deployment made: it is no DNS pod of its node, and is not listed as one. Before,
    /// apply deleted it and waited for a replacement that never came, failing the node.
    #[test]
    fn a_pod_ended_at_a_node_shutdown_is_not_listed() {
        let doc: Value =
            serde_json::from_slice(include_bytes!("../../tests/fixtures/kubectl/dns-pods.json"))
                .expect("fixture");
        let mut ended = doc["items"][0].clone();
        ended["metadata"]["name"] = "coredns-5c54f84c97-q9d7t".into();
        ended["status"] = serde_json::json!({
            "phase": "Failed",
            "reason": "Terminated",
            "message": "Pod was terminated in response to imminent node shutdown.",
            "containerStatuses": [{"name": "coredns", "ready": false, "restartCount": 0,
                "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]
        });
        let mut items = doc["items"].as_array().expect("items").clone();
        items.push(ended);
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
        let pods = parse_pods(&serde_json::to_vec(&list).expect("json")).expect("pods");
        let names: Vec<&str> = pods.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(pods.len(), 5, "{names:?}");
        assert!(!names.contains(&"coredns-5c54f84c97-q9d7t"), "{names:?}");
        // Succeeded is terminal too.
        let mut done = pods[0].clone();
        done.phase = "Succeeded".to_owned();
        assert!(done.ended() && !pods[0].ended());
    }

    /// A CoreDNS pod with a sidecar injected before its `coredns` container (Kubespray's
    /// crash-looping pod of tests/fixtures/kubectl/dns-pods.json, a `proxy` container put
    /// first, as a mesh does with a proxy that must start before the app): `kubectl logs
    /// POD --previous` reads the sidecar's, so the previous log is asked for with `-c
    /// coredns`, also where the first listing read kubectl's choice already.
    #[tokio::test]
    async fn the_dns_containers_previous_log_is_read_by_name() {
        let doc: Value =
            serde_json::from_slice(include_bytes!("../../tests/fixtures/kubectl/dns-pods.json"))
                .expect("fixture");
        let mut pod = doc["items"][1].clone();
        let first = |v: &mut Value, c: Value| v.as_array_mut().expect("a list").insert(0, c);
        first(
            &mut pod["spec"]["containers"],
            serde_json::json!({"name": "proxy", "image": "registry.example/proxy:1.0"}),
        );
        first(
            &mut pod["status"]["containerStatuses"],
            serde_json::json!({"name": "proxy", "ready": true, "restartCount": 0,
                               "state": {"running": {"startedAt": "2026-08-21T10:00:00Z"}}}),
        );
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [pod]});
        let pods = parse_pods(&serde_json::to_vec(&list).expect("json")).expect("pods");
        assert_eq!(
            (pods[0].container.as_deref(), pods[0].restarts),
            (Some("coredns"), 7)
        );
        // A pod of one container names none: kubectl reads it.
        let fixture = parse_pods(include_bytes!("../../tests/fixtures/kubectl/dns-pods.json"));
        assert!(fixture.expect("pods").iter().all(|p| p.container.is_none()));

        let dir = std::env::temp_dir().join(format!("dnsfix-logs-{}", crate::util::nonce()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let stub = format!(
            "#!/bin/sh\necho \"$*\" >>'{dir}/asked'\ncase \" $* \" in\n\
             *\" -c coredns \"*) echo '[FATAL] plugin/loop: Loop (127.0.0.1:38017 -> :53) detected for zone \".\"' ;;\n\
             *) echo 'proxy: ready' ;;\nesac\n",
            dir = dir.display()
        );
        let kubectl_path = dir.join("kubectl");
        std::fs::write(&kubectl_path, stub).expect("stub");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&kubectl_path, std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        let options = crate::transport::SshOptions::default();
        let mut kubectl = Kubectl {
            target: Target {
                host: "localhost".into(),
                connection: crate::inventory::Inventory::local().hosts()[0].connection(),
            },
            session: Session::Local(crate::transport::LocalTransport::connect(&options)),
            prologue: format!("set -- '{}'\n", kubectl_path.display()),
            via: "this machine".into(),
            config: None,
            // The first listing read the sidecar's log: no loop there.
            logs: LoopLines::from([(pods[0].name.clone(), PreviousLog::default())]),
            kubelets: Kubelets::new(),
            notes: Vec::new(),
        };
        let read = kubectl.with_logs(pods).await;
        kubectl.close().await;
        let asked = std::fs::read_to_string(dir.join("asked")).unwrap_or_default();
        std::fs::remove_dir_all(&dir).ok();
        assert!(
            read[0]
                .loop_detected
                .as_deref()
                .is_some_and(|l| l.contains("plugin/loop: Loop")),
            "{read:?}"
        );
        assert!(read[0].logs_read);
        assert!(
            asked.contains("logs coredns-5c54f84c97-q9m4d -c coredns --previous"),
            "{asked}"
        );
    }

    /// A pod the first listing had no time to start kubectl for is asked again in an exec
    /// of its own, with a clock of its own; one whose kubectl failed there is not (its
    /// node would not answer sooner), and keeps why. Before, both stayed unread.
    #[tokio::test]
    async fn a_pod_not_started_in_the_listing_is_asked_again_and_a_failed_one_is_not() {
        let fixture = include_bytes!("../../tests/fixtures/kubectl/dns-pods.json");
        let (mut kubectl, dir) = lab_kubectl(fixture, b"{}");
        // The stand-in answers the crash-looping pod's log with its loop line.
        std::fs::write(
            dir.join("pods/1.log"),
            "[FATAL] plugin/loop: Loop (127.0.0.1:38017 -> :53) detected for zone \".\"\n",
        )
        .expect("log");
        kubectl.logs = LoopLines::from([
            (
                "coredns-5c54f84c97-q9m4d".to_owned(),
                PreviousLog {
                    unread: Some(Unread::NotStarted),
                    ..PreviousLog::default()
                },
            ),
            (
                "nodelocaldns-2v8kd".to_owned(),
                PreviousLog {
                    unread: Some(Unread::Failed("kubectl logs did not answer in time".into())),
                    ..PreviousLog::default()
                },
            ),
        ]);
        let pods = parse_pods(fixture).expect("pods");
        let read = kubectl.with_logs(pods).await;
        // A name the API would not allow is never asked, and says so.
        let refused = kubectl
            .previous_loop_lines("kube-system", &[("coredns-x", Some("a;b"))])
            .await;
        kubectl.close().await;
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(
            why(&refused["coredns-x"]).as_deref(),
            Some("not asked: not a name the API allows")
        );
        let pod = |name: &str| read.iter().find(|p| p.name == name).expect("listed");
        let again = pod("coredns-5c54f84c97-q9m4d");
        assert!(again.logs_read && again.logs_unread.is_none(), "{again:?}");
        assert!(again.loop_detected.is_some(), "{again:?}");
        let failed = pod("nodelocaldns-2v8kd");
        assert!(!failed.logs_read, "{failed:?}");
        assert_eq!(
            failed.logs_unread.as_deref(),
            Some("kubectl logs did not answer in time")
        );
    }

    /// The logs' time comes out of the exec's command timeout: each kubectl's bound plus
    /// the last start fit inside it, with room for the output.
    #[test]
    fn the_logs_budget_fits_inside_the_command_timeout() {
        for (secs, read, call, launch) in [
            (60, 20, 15, 29),
            (20, 8, 5, 7),
            (10, 3, 2, 1),
            (5, 2, 2, 0),
            (1, 2, 2, 0),
            (600, 20, 15, 461),
        ] {
            let budget = ReadBudget::within(Duration::from_secs(secs));
            assert_eq!(
                (budget.read, budget.call, budget.launch),
                (read, call, launch),
                "{secs}"
            );
            if secs >= 10 {
                // The last start, and timeout(1)'s TERM and KILL after it.
                assert!(
                    budget.launch + budget.call + 2 * GRACE < secs,
                    "{secs}: {budget:?}"
                );
                assert!(budget.read + 2 * GRACE < secs, "{secs}: {budget:?}");
            }
        }
    }

    /// Eight kubectl at a time, each slot given back as its kubectl ends: the two pods
    /// after the first eight start as soon as the two quick ones end, while six others
    /// hang (a node that does not answer), and come back as timed out; those still
    /// waiting for a slot when the time to start runs out are not asked. A pod whose
    /// kubectl failed says why. Nothing of it is called read.
    #[test]
    fn slow_pods_hold_one_slot_each_and_the_time_to_start_them_runs_out() {
        let dir = std::env::temp_dir().join(format!("dnsfix-pool-{}", crate::util::nonce()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let kubectl = dir.join("kubectl");
        std::fs::write(
            &kubectl,
            "#!/bin/sh\nwhile [ \"$1\" != logs ]; do shift; done\ncase $2 in\n\
             hang-*) exec sleep 30 ;;\n\
             fail-*) echo \"Error from server (BadRequest): previous terminated container \\\"coredns\\\" in pod \\\"$2\\\" not found\" >&2; exit 1 ;;\n\
             *) echo '[FATAL] plugin/loop: Loop (127.0.0.1:38017 -> :53) detected for zone \".\"' ;;\nesac\n",
        )
        .expect("stub");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&kubectl, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let names: Vec<String> = ["ok-0", "fail-1"]
            .into_iter()
            .map(str::to_owned)
            .chain((2..12).map(|i| format!("hang-{i}")))
            .collect();
        let pods: Vec<(&str, Option<&str>)> = names.iter().map(|n| (n.as_str(), None)).collect();
        let budget = ReadBudget {
            read: 2,
            call: 1,
            launch: 2,
        };
        let prologue = format!("set -- '{}'\n", kubectl.display());
        let script =
            previous_logs_script(&prologue, "B7", "kube-system", &pods, budget).expect("a script");
        let started = std::time::Instant::now();
        let out = std::process::Command::new("sh")
            .args(["-c", &script])
            .output()
            .expect("sh runs");
        let took = started.elapsed();
        std::fs::remove_dir_all(&dir).ok();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The hanging ones end at their bound (call + 2 s), together.
        assert!(took < Duration::from_secs(10), "{took:?}");
        let found = loop_lines_by_pod(&String::from_utf8_lossy(&out.stdout), "B7");
        assert_eq!(found.len(), names.len());
        assert!(found["ok-0"].unread.is_none() && found["ok-0"].loop_line.is_some());
        assert!(
            why(&found["fail-1"]).as_deref().is_some_and(|w| w.starts_with(
                "kubectl logs exited 1: Error from server (BadRequest): previous terminated container"
            )),
            "{:?}",
            found["fail-1"]
        );
        for i in 2..10 {
            assert_eq!(
                why(&found[&format!("hang-{i}")]).as_deref(),
                Some("kubectl logs did not answer in time"),
                "hang-{i}"
            );
        }
        for i in 10..12 {
            assert_eq!(
                why(&found[&format!("hang-{i}")]).as_deref(),
                Some("not asked: the time for reading logs ran out (--command-timeout)"),
                "hang-{i}"
            );
        }
    }

    /// Only names the API allows reach the shell: a container that is no DNS-1123 label
    /// leaves its pod unread (unknown), never read unnamed.
    #[test]
    fn container_names_reach_the_shell_only_as_dns_labels() {
        for good in ["coredns", "node-cache", "a", "c0-1"] {
            assert!(valid_container_name(good), "{good}");
        }
        let long = "a".repeat(64);
        for bad in [
            "",
            "-x",
            "x-",
            "Core",
            "a;b",
            "a b",
            "$(id)",
            "a.b",
            long.as_str(),
        ] {
            assert!(!valid_container_name(bad), "{bad}");
        }
        let budget = ReadBudget::within(Duration::from_secs(60));
        let script = previous_logs_script(
            "",
            "B7",
            "kube-system",
            &[
                ("coredns-a", Some("$(id)")),
                ("coredns-b", Some("coredns")),
                ("coredns-c", None),
            ],
            budget,
        )
        .expect("a script");
        assert!(
            !script.contains("coredns-a") && !script.contains("$(id)"),
            "{script}"
        );
        assert!(
            script.contains("\nLOGS='coredns-b:coredns coredns-c:-'\n"),
            "{script}"
        );
        assert_eq!(
            previous_logs_script("", "B7", "kube-system", &[("x", Some("a;b"))], budget),
            None
        );
        // A namespace reaches the shell only as a DNS label too.
        assert_eq!(
            previous_logs_script("", "B7", "$(id)", &[("coredns-b", None)], budget),
            None
        );
    }

    /// The batched logs split by the boundary: each pod keeps its own last loop line, a
    /// log line imitating a section header without the nonce does not start one; a pod
    /// whose kubectl failed is unread with what kubectl said (a loop line in its error
    /// text is no loop), one it timed out or never started unread with why.
    #[test]
    fn batched_logs_are_split_by_the_boundary() {
        let out = "NONCE coredns-a:- 0\n[INFO] plugin/reload\n[FATAL] plugin/loop: Loop (127.0.0.1:1 -> :53) detected\n\n\
                   NONCE coredns-b:coredns 0\nother NONCE coredns-a:- 0\n[FATAL] plugin/loop: Loop (x) detected\n\nNONCE nodelocaldns-c:- 0\n\n\
                   NONCE coredns-d:coredns 1\n\nError from server (BadRequest): previous terminated container \"coredns\" in pod \"coredns-d\" not found\n\
                   plugin/loop: Loop\n\nNONCE coredns-e:- 124\n\nNONCE coredns-f:- -\n\nNONCE coredns-g:- 1\n\x1b[31m\n\
                   NONCE coredns-h:- 143\n\nNONCE coredns-i:- 1\nE1203 10:00:00.000000 1 memcache.go:265] couldn't get current server API group list\n\
                   error: the server doesn't have a resource type \"pods\"\nW1203 later\n\n";
        let found = loop_lines_by_pod(out, "NONCE");
        assert_eq!(
            found["coredns-a"].loop_line.as_deref(),
            Some("[FATAL] plugin/loop: Loop (127.0.0.1:1 -> :53) detected")
        );
        assert_eq!(
            found["coredns-b"],
            PreviousLog {
                container: Some("coredns".into()),
                loop_line: Some("[FATAL] plugin/loop: Loop (x) detected".into()),
                unread: None,
            }
        );
        assert_eq!(found["nodelocaldns-c"], PreviousLog::default());
        assert_eq!(
            found["coredns-d"],
            PreviousLog {
                container: Some("coredns".into()),
                loop_line: None,
                unread: Some(Unread::Failed(
                    "kubectl logs exited 1: Error from server (BadRequest): previous terminated \
                     container \"coredns\" in pod \"coredns-d\" not found"
                        .into()
                )),
            }
        );
        assert_eq!(
            why(&found["coredns-e"]).as_deref(),
            Some("kubectl logs did not answer in time")
        );
        assert_eq!(
            why(&found["coredns-f"]).as_deref(),
            Some("not asked: the time for reading logs ran out (--command-timeout)")
        );
        // What kubectl said is shown escaped.
        assert_eq!(
            why(&found["coredns-g"]).as_deref(),
            Some("kubectl logs exited 1: \\u{1b}[31m")
        );
        // BusyBox's timeout ends it with TERM's status.
        assert_eq!(
            why(&found["coredns-h"]).as_deref(),
            Some("kubectl logs did not answer in time")
        );
        // kubectl's own error, not the klog line before it.
        assert_eq!(
            why(&found["coredns-i"]).as_deref(),
            Some("kubectl logs exited 1: error: the server doesn't have a resource type \"pods\"")
        );
        assert_eq!(found.len(), 9);
    }

    /// A kubeconfig path reaches the local shell as one word, whatever it holds.
    #[test]
    fn a_kubeconfig_path_is_one_shell_word() {
        for path in [
            "/home/a b/.kube/config",
            "/tmp/it's",
            "/x;rm -rf /",
            "/$(id)`id`",
        ] {
            // The lab's kubectl stand-in first in PATH: the prologue finds a kubectl.
            let standins = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/lab/standins");
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "{}printf %s \"$3\"",
                    local_prologue(std::path::Path::new(path))
                ))
                .env(
                    "PATH",
                    format!("{standins}:{}", std::env::var("PATH").unwrap_or_default()),
                )
                .output()
                .expect("sh runs");
            assert_eq!(String::from_utf8_lossy(&out.stdout), path);
        }
    }

    /// The values of a `k8s-app in (...)` selector.
    fn selector_values(selector: &str) -> Vec<&str> {
        let set = selector.split_once("k8s-app in (").expect("a set").1;
        set.split_once(')').expect("closed").0.split(',').collect()
    }

    /// A pod of the CoreDNS Helm chart with its defaults (coredns/helm caac0316, chart
    /// 1.46.2, `helm install coredns coredns/coredns -n kube-system`): templates/
    /// deployment.yaml labels the pod template `k8s-app: {{ template "coredns.k8sapplabel"
    /// . }}`, which _helpers.tpl makes `default .Chart.Name .Values.k8sAppLabelOverride`,
    /// `coredns` (isClusterService true, no override), beside app.kubernetes.io/name and
    /// instance; its one container is `coredns`.
    const HELM_POD: &str = r#"{"apiVersion":"v1","kind":"List","items":[
      {"apiVersion":"v1","kind":"Pod",
       "metadata":{"name":"coredns-6f8b9c7d5-k2x9q","namespace":"kube-system",
                   "labels":{"app.kubernetes.io/instance":"coredns",
                             "app.kubernetes.io/name":"coredns","k8s-app":"coredns",
                             "pod-template-hash":"6f8b9c7d5"}},
       "spec":{"nodeName":"node1","dnsPolicy":"Default",
               "containers":[{"name":"coredns","args":["-conf","/etc/coredns/Corefile"]}]},
       "status":{"phase":"Running","containerStatuses":[{"name":"coredns","ready":false,
         "restartCount":4,"state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}}]}"#;

    /// The Helm chart's CoreDNS pods are listed (DNS-POD-LOOP judges them, apply recreates
    /// them) and read as CoreDNS: every CoreDNS label the Services are asked by is asked of
    /// the pods too.
    #[test]
    fn the_helm_charts_coredns_pods_are_listed_as_coredns() {
        let pods = selector_values(dns_pod_selector!());
        assert!(pods.contains(&"coredns"), "{pods:?}");
        for label in selector_values(GET_DNS_SERVICES) {
            assert!(pods.contains(&label), "{label} missing from {pods:?}");
        }
        assert!(GET_PODS.contains(dns_pod_selector!()));
        let read = parse_pods(HELM_POD.as_bytes()).expect("pods");
        assert_eq!(
            (
                read[0].app.as_str(),
                read[0].is_node_local(),
                read[0].restarts
            ),
            ("coredns", false, 4)
        );
        // Recreated on its node as a CoreDNS pod, replaced by one of its own kind.
        assert_eq!(recreation_order(read.clone(), &["node1".to_owned()]), read);
    }

    #[test]
    fn pods_are_read_from_kubectl_json() {
        let pods = parse_pods(PODS.as_bytes()).expect("pods");
        assert_eq!(pods.len(), 2);
        assert_eq!(pods[0].name, "coredns-5d78c9869d-x7k2p");
        assert_eq!(pods[0].app, "coredns");
        assert_eq!(pods[0].node, "node1");
        assert_eq!(
            (pods[0].ready, pods[0].restarts, pods[0].waiting.as_deref()),
            (false, 12, Some("CrashLoopBackOff"))
        );
        assert_eq!(pods[1].app, "nodelocaldns");
        assert!(pods[1].ready && pods[1].waiting.is_none());
        assert!(parse_pods(b"not json").is_err());
        assert!(parse_pods(b"{}").is_err());

        // Kubespray's coredns_dual: the secondary Deployment's pods are CoreDNS too, asked
        // for by their own label, and kept apart from the primary's.
        assert!(GET_PODS.contains("kube-dns-secondary"));
        let secondary = PODS.replace(
            "\"k8s-app\":\"kube-dns\"",
            "\"k8s-app\":\"kube-dns-secondary\"",
        );
        let pods = parse_pods(secondary.as_bytes()).expect("pods");
        assert_eq!(pods[0].app, "coredns-secondary");

        // enable_nodelocaldns_secondary: the nodelocaldns-second DaemonSet's pods
        // (nodelocaldns-second-daemonset.yml.j2) are NodeLocal DNSCache too, on the same
        // address, and are replaced on their node as the primary's are.
        assert!(GET_PODS.contains(",node-local-dns-second)"));
        let second = PODS.replace(
            "\"k8s-app\":\"node-local-dns\"",
            "\"k8s-app\":\"node-local-dns-second\"",
        );
        let pods = parse_pods(second.as_bytes()).expect("pods");
        assert_eq!(pods[1].app, "nodelocaldns-secondary");
        assert!(pods[1].is_node_local() && !pods[0].is_node_local());
        // Its probes ask the primary's health port: running is serving, ready or not.
        assert!(pods[1].running && pods[1].serving());
        let mut unready = pods[1].clone();
        unready.ready = false;
        assert!(unready.serving());
        assert!(!pods[0].running && !pods[0].serving());

        // A sidecar listed first (the kubelet sorts the statuses by name) does not speak
        // for the DNS container.
        let sidecar = PODS.replace(
            "\"containerStatuses\":[{\"name\":\"coredns\"",
            "\"containerStatuses\":[{\"name\":\"agent\",\"ready\":true,\"restartCount\":0,\"state\":{\"running\":{}}},{\"name\":\"coredns\"",
        );
        assert_ne!(sidecar, PODS);
        let pods = parse_pods(sidecar.as_bytes()).expect("pods");
        assert_eq!(
            (pods[0].ready, pods[0].running, pods[0].restarts),
            (false, false, 12)
        );
    }

    /// kubectl as the lab's stand-in (tests/lab/standins/kubectl, checked against a real
    /// kubectl by tests/it/kubectl_reference.rs) answers for a cluster of `pods` (a
    /// fixture's List) and `configmaps` (a fixture file), run on this machine.
    /// A Kubectl on this machine whose kubectl is `stub` (a shell command line taking
    /// kubectl's arguments), under a command timeout of `secs`.
    fn stub_kubectl(stub: &str, secs: u64) -> Kubectl {
        let options = crate::transport::SshOptions {
            command_timeout: Duration::from_secs(secs),
            ..crate::transport::SshOptions::default()
        };
        Kubectl {
            target: Target {
                host: "localhost".into(),
                connection: crate::inventory::Inventory::local().hosts()[0].connection(),
            },
            session: Session::Local(crate::transport::LocalTransport::connect(&options)),
            prologue: format!("set -- {stub}\n"),
            via: "this machine".into(),
            config: None,
            logs: LoopLines::new(),
            kubelets: Kubelets::new(),
            notes: Vec::new(),
        }
    }

    /// A single kubectl call (a get, delete or replace of apply's) asks the API server for
    /// the share of the command timeout the listing's gets have, and one that does not
    /// answer is ended within the command timeout and said to be. Before, it had `timeout
    /// 30` whatever the command timeout, so under a shorter one the exec was cut first,
    /// and one ended by timeout(1) read "kubectl exited with Some(124)". One killed by
    /// something else (the out-of-memory killer) long before is said to be killed.
    #[tokio::test]
    async fn a_kubectl_call_that_does_not_answer_ends_within_the_command_timeout() {
        // A kubectl whose API server never answers, and which ignores its own
        // --request-timeout.
        let mut kubectl = stub_kubectl("sh -c 'exec sleep 60' kubectl", 12);
        let started = std::time::Instant::now();
        let error = kubectl.run("get pods").await.expect_err("no answer");
        let took = started.elapsed();
        kubectl.close().await;
        // 12 s: the API server is asked for 12/2 - 2 = 4 s, timeout(1) ends it at 6.
        assert_eq!(error, "kubectl did not answer within 6s");
        assert!(
            took >= Duration::from_secs(5) && took < Duration::from_secs(11),
            "{took:?}"
        );

        let mut kubectl = stub_kubectl("sh -c 'echo dying >&2; kill -KILL $$' kubectl", 12);
        let error = kubectl.run("get pods").await.expect_err("killed");
        kubectl.close().await;
        assert!(
            error.starts_with("kubectl was killed (exit status 137) after 0s: dying"),
            "{error}"
        );
    }

    fn lab_kubectl(pods: &[u8], configmaps: &[u8]) -> (Kubectl, std::path::PathBuf) {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = std::env::temp_dir().join(format!("dnsfix-mounts-{}", crate::util::nonce()));
        std::fs::create_dir_all(dir.join("pods")).expect("temp dir");
        let list: Value = serde_json::from_slice(pods).expect("pods fixture");
        for (i, pod) in list["items"].as_array().expect("items").iter().enumerate() {
            let pod = serde_json::to_vec(pod).expect("json");
            std::fs::write(dir.join(format!("pods/{i}.json")), pod).expect("pod");
        }
        std::fs::write(dir.join("configmaps.json"), configmaps).expect("configmaps");
        let options = crate::transport::SshOptions::default();
        let kubectl = Kubectl {
            target: Target {
                host: "localhost".into(),
                connection: crate::inventory::Inventory::local().hosts()[0].connection(),
            },
            session: Session::Local(crate::transport::LocalTransport::connect(&options)),
            prologue: format!(
                "set -- env DNSFIX_LAB_DIR='{}' bash '{}'\n",
                dir.display(),
                root.join("tests/lab/standins/kubectl").display()
            ),
            via: "this machine".into(),
            config: None,
            logs: LoopLines::new(),
            kubelets: Kubelets::new(),
            notes: Vec::new(),
        };
        (kubectl, dir)
    }

    /// CoreDNS's Corefile is read wherever its chart names its ConfigMap: RKE2's
    /// rke2-coredns chart always `rke2-coredns-rke2-coredns` (asked for by name), the
    /// CoreDNS Helm chart `<release>-coredns` (`dns-coredns` for a release `dns`: found
    /// through the volume of the pods, then read). The fixtures are rendered from the charts
    /// (tests/fixtures/kubectl/README.md). Before, only a ConfigMap named `coredns` was
    /// read: the rules took CoreDNS's forward for unknown on both.
    #[tokio::test]
    async fn corednss_configmap_is_found_through_its_pods_volume() {
        let cases: [(&[u8], &[u8], &str); 2] = [
            (
                include_bytes!("../../tests/fixtures/kubectl/helm-coredns-pods.json"),
                include_bytes!("../../tests/fixtures/kubectl/helm-coredns-configmaps.json"),
                "dns-coredns",
            ),
            (
                include_bytes!("../../tests/fixtures/kubectl/rke2-coredns-pods.json"),
                include_bytes!("../../tests/fixtures/kubectl/rke2-coredns-configmaps.json"),
                RKE2_COREDNS,
            ),
        ];
        for (pods, configmaps, name) in cases {
            let (mut kubectl, dir) = lab_kubectl(pods, configmaps);
            let listed = kubectl.first_listing(Listing::WithLogs).await;
            let cluster = read_from(kubectl, listed.expect("listed")).await;
            std::fs::remove_dir_all(&dir).ok();
            let Cluster::Read { pods, config, .. } = cluster else {
                panic!("{name}: not read: {cluster:?}");
            };
            assert_eq!(pods.len(), 1, "{name}");
            assert_eq!(config.coredns_mounts, [name]);
            assert_eq!(config.coredns_mounts_error, None);
            let read: Vec<(&str, &str)> = config
                .corefiles
                .iter()
                .map(|c| (c.configmap.as_str(), c.key.as_str()))
                .collect();
            assert_eq!(read, [(name, "Corefile")], "{name}");
            let c = &config.corefiles[0];
            assert!(!c.is_node_local());
            let corefile::RootForward::Forward(block, forward) = c.root_forward() else {
                panic!("{name}: {:?}", c.root_forward());
            };
            assert_eq!(
                (forward.to.as_slice(), forward.line, block.loop_plugin),
                (&["/etc/resolv.conf".to_owned()][..], 13, true),
                "{name}"
            );
        }
    }

    /// Only the CoreDNS pods' ConfigMap volumes count (not NodeLocal DNSCache's), each
    /// once, and only names the API allows reach the shell.
    #[test]
    fn coredns_mounts_are_the_coredns_pods_configmap_volumes() {
        let list = serde_json::json!({"kind": "List", "items": [
            {"metadata": {"labels": {"k8s-app": "kube-dns"}}, "spec": {"volumes": [
                {"name": "config-volume", "configMap": {"name": "coredns"}},
                {"name": "custom-config-volume", "configMap": {"name": "coredns-custom", "optional": true}},
                {"name": "token", "secret": {"secretName": "x"}}]}},
            {"metadata": {"labels": {"k8s-app": "kube-dns"}}, "spec": {"volumes": [
                {"name": "config-volume", "configMap": {"name": "coredns"}},
                {"name": "odd", "configMap": {"name": "a;reboot"}}]}},
            {"metadata": {"labels": {"k8s-app": "node-local-dns"}}, "spec": {"volumes": [
                {"name": "config-volume", "configMap": {"name": "nodelocaldns"}}]}}]});
        let json = serde_json::to_vec(&list).expect("json");
        assert_eq!(coredns_mounts(&json), ["coredns", "coredns-custom"]);
        assert!(coredns_mounts(b"not json").is_empty());
        assert!(asked_by_name("coredns") && !asked_by_name(RKE2_COREDNS));
        assert!(!asked_by_name("coredns-custom") && !asked_by_name("json"));
    }

    /// k3s imports the `*.override` files of its optional `coredns-custom` ConfigMap
    /// into `.:53` before its `forward .` (tests/fixtures/kubectl/README.md): where that
    /// forwards is read from the ConfigMap the pods mount there. None (k3s creates none):
    /// the Corefile's own `forward . /etc/resolv.conf`; one whose `.override` holds a
    /// `forward .`: that one, which comes first; `.server` files add blocks of their own.
    /// Before, every such k3s Corefile was "not known".
    #[tokio::test]
    async fn k3s_coredns_custom_overrides_are_read_where_it_imports_them() {
        let pods = include_bytes!("../../tests/fixtures/kubectl/k3s-coredns-pods.json");
        let base: Value = serde_json::from_slice(include_bytes!(
            "../../tests/fixtures/kubectl/k3s-coredns-configmaps.json"
        ))
        .expect("fixture");
        let custom = |data: Value| {
            let mut list = base.clone();
            if !data.is_null() {
                list["items"]
                    .as_array_mut()
                    .expect("items")
                    .push(serde_json::json!({
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "coredns-custom", "namespace": "kube-system"},
                    "data": data}));
            }
            serde_json::to_vec(&list).expect("json")
        };
        let cases = [
            (Value::Null, Ok((vec!["/etc/resolv.conf"], 20))),
            (
                serde_json::json!({"log.override": "log\n",
                    "example.server": "example.org:53 {\n    forward . 192.0.2.10\n}\n"}),
                Ok((vec!["/etc/resolv.conf"], 20)),
            ),
            (
                serde_json::json!({"forward.override": "forward . 192.0.2.53 198.51.100.53 {\n  policy sequential\n}\n",
                    "z.override": "forward . 203.0.113.53\n"}),
                Ok((vec!["192.0.2.53", "198.51.100.53"], 19)),
            ),
        ];
        for (data, want) in cases {
            let (mut kubectl, dir) = lab_kubectl(pods, &custom(data.clone()));
            let listed = kubectl.first_listing(Listing::WithLogs).await;
            let cluster = read_from(kubectl, listed.expect("listed")).await;
            std::fs::remove_dir_all(&dir).ok();
            let Cluster::Read { config, .. } = cluster else {
                panic!("not read: {cluster:?}");
            };
            assert_eq!(config.coredns_mounts, ["coredns", "coredns-custom"]);
            let c = &config.corefiles[0];
            let got = match c.root_forward() {
                corefile::RootForward::Forward(_, f) => {
                    Ok((f.to.iter().map(String::as_str).collect::<Vec<_>>(), f.line))
                }
                other => Err(format!("{other:?}")),
            };
            assert_eq!(got, want, "{data}");
        }
        // coredns-custom not read (kubectl refused it): unknown, as before.
        let mut files = coredns_files(pods);
        let pod = files.pods[0].clone();
        assert_eq!(pod.base.as_deref(), Some("/etc/coredns"));
        assert_eq!(pod.volumes.len(), 2);
        assert_eq!(pod.corefile, Ok(("coredns".into(), "Corefile".into())));
        let text = base["items"][0]["data"]["Corefile"]
            .as_str()
            .expect("Corefile");
        let unread = Corefile::with_files("coredns", "Corefile", text, &files.files(&pod));
        assert!(matches!(
            unread.root_forward(),
            corefile::RootForward::Unknown(_)
        ));
        files
            .data
            .insert(("kube-system".into(), "coredns-custom".into()), None);
        let absent = Corefile::with_files("coredns", "Corefile", text, &files.files(&pod));
        assert!(matches!(
            absent.root_forward(),
            corefile::RootForward::Forward(..)
        ));
    }

    /// Only the Corefile a CoreDNS pod loads (its `-conf` through its volume mounts) says
    /// where CoreDNS forwards. Before, every Corefile read but NodeLocal DNSCache's
    /// counted: a stale kubeadm `coredns` that forwards to /etc/resolv.conf beside the
    /// Helm release's `dns-coredns` (forwarding to servers) made the rules see a loop
    /// and name `coredns` as the ConfigMap to edit; k3s's `coredns-custom` key
    /// `Corefile.override` (an import, coredns/coredns#4729) was read as a Corefile of
    /// its own and left the answer unknown.
    #[tokio::test]
    async fn only_the_corefile_coredns_loads_counts() {
        let with = |fixture: &[u8], extra: Value, edit: &dyn Fn(&mut Value)| {
            let mut list: Value = serde_json::from_slice(fixture).expect("fixture");
            edit(&mut list);
            list["items"].as_array_mut().expect("items").push(extra);
            serde_json::to_vec(&list).expect("json")
        };
        let helm_pods = include_bytes!("../../tests/fixtures/kubectl/helm-coredns-pods.json");
        let stale = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "coredns", "namespace": "kube-system"},
            "data": {"Corefile": crate::testing::KUBEADM_COREFILE}});
        let helm = with(
            include_bytes!("../../tests/fixtures/kubectl/helm-coredns-configmaps.json"),
            stale,
            &|list| {
                let data = &mut list["items"][0]["data"]["Corefile"];
                let text = data
                    .as_str()
                    .expect("Corefile")
                    .replace("forward . /etc/resolv.conf", "forward . 192.0.2.53");
                *data = text.into();
            },
        );
        let k3s_pods = include_bytes!("../../tests/fixtures/kubectl/k3s-coredns-pods.json");
        let custom = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "coredns-custom", "namespace": "kube-system"},
            "data": {"Corefile.override": "forward . 192.0.2.53\n"}});
        let k3s = with(
            include_bytes!("../../tests/fixtures/kubectl/k3s-coredns-configmaps.json"),
            custom,
            &|_| {},
        );
        let cases: [(&[u8], &[u8], &str); 2] = [
            (helm_pods, &helm, "dns-coredns"),
            (k3s_pods, &k3s, "coredns"),
        ];
        for (pods, configmaps, loaded) in cases {
            let (mut kubectl, dir) = lab_kubectl(pods, configmaps);
            let listed = kubectl.first_listing(Listing::WithLogs).await;
            let cluster = read_from(kubectl, listed.expect("listed")).await;
            std::fs::remove_dir_all(&dir).ok();
            let Cluster::Read { config, .. } = cluster else {
                panic!("{loaded}: not read: {cluster:?}");
            };
            let counted: Vec<(&str, Vec<String>)> = config
                .corefiles
                .iter()
                .filter(|c| c.is_corednss())
                .map(|c| match c.root_forward() {
                    corefile::RootForward::Forward(_, f) => (c.configmap.as_str(), f.to.clone()),
                    other => panic!("{loaded}: {other:?}"),
                })
                .collect();
            assert_eq!(counted, [(loaded, vec!["192.0.2.53".to_owned()])]);
            assert_eq!(config.coredns_unread, None, "{loaded}");
        }
    }

    /// A Role limited by `resourceNames` that grants the Helm chart's Corefile but not an
    /// optional `coredns-custom` beside it: the refusal costs `coredns-custom` only. Before,
    /// both were asked in one kubectl and the refusal lost the Corefile too. RKE2's
    /// ConfigMap is no longer in the first batch (a Role naming kubeadm's and Kubespray's
    /// ConfigMaps only was refused it whole): its pods' volume leads to it.
    #[tokio::test]
    async fn a_configmap_kubectl_is_refused_costs_that_name_only() {
        assert!(!GET_CONFIGMAPS.contains(RKE2_COREDNS));
        let mut pods: Value = serde_json::from_slice(include_bytes!(
            "../../tests/fixtures/kubectl/helm-coredns-pods.json"
        ))
        .expect("fixture");
        let pod = &mut pods["items"][0]["spec"];
        pod["volumes"]
            .as_array_mut()
            .expect("volumes")
            .push(serde_json::json!(
            {"name": "custom", "configMap": {"name": "coredns-custom", "optional": true}}));
        pod["containers"][0]["volumeMounts"]
            .as_array_mut()
            .expect("mounts")
            .push(serde_json::json!({"name": "custom", "mountPath": "/etc/coredns/custom"}));
        let pods = serde_json::to_vec(&pods).expect("json");
        let (mut kubectl, dir) = lab_kubectl(
            &pods,
            include_bytes!("../../tests/fixtures/kubectl/helm-coredns-configmaps.json"),
        );
        std::fs::write(dir.join("configmaps-forbidden"), "coredns-custom\n").expect("write");
        let listed = kubectl.first_listing(Listing::WithLogs).await;
        let cluster = read_from(kubectl, listed.expect("listed")).await;
        std::fs::remove_dir_all(&dir).ok();
        let Cluster::Read { config, .. } = cluster else {
            panic!("not read: {cluster:?}");
        };
        assert_eq!(config.coredns_mounts, ["dns-coredns", "coredns-custom"]);
        let read: Vec<&str> = config
            .corefiles
            .iter()
            .map(|c| c.configmap.as_str())
            .collect();
        assert_eq!(read, ["dns-coredns"]);
        let error = config.coredns_mounts_error.expect("refused");
        assert!(
            error.starts_with("coredns-custom: ") && error.contains("Forbidden"),
            "{error}"
        );
    }

    /// RKE2 with no CoreDNS pod listed (the Deployment scaled to zero, its pods evicted):
    /// nothing leads to `rke2-coredns-rke2-coredns` through a volume, so it is asked for by
    /// name in the second kubectl, and counts as CoreDNS's by that name, as `coredns` does
    /// without pods. Before, it was read only through the pods' volumes: with none, the
    /// rules said no CoreDNS Corefile was found. With pods listed it is not asked for (a
    /// stale one beside the Corefile the pods load must not count), nor where `coredns` was
    /// read; refused by the Role, the evidence says so.
    #[tokio::test]
    async fn rke2s_configmap_is_read_by_name_where_no_pod_leads_to_it() {
        let none = br#"{"apiVersion": "v1", "kind": "List", "items": []}"#;
        let rke2 = include_bytes!("../../tests/fixtures/kubectl/rke2-coredns-configmaps.json");
        let read = |pods: &'static [u8], configmaps: Vec<u8>, forbidden: bool| async move {
            let (mut kubectl, dir) = lab_kubectl(pods, &configmaps);
            if forbidden {
                std::fs::write(
                    dir.join("configmaps-forbidden"),
                    format!("{RKE2_COREDNS}\n"),
                )
                .expect("write");
            }
            let listed = kubectl.first_listing(Listing::WithLogs).await;
            let cluster = read_from(kubectl, listed.expect("listed")).await;
            std::fs::remove_dir_all(&dir).ok();
            match cluster {
                Cluster::Read { config, .. } => *config,
                other => panic!("not read: {other:?}"),
            }
        };
        let config = read(none, rke2.to_vec(), false).await;
        let counted: Vec<(&str, &str)> = config
            .corefiles
            .iter()
            .filter(|c| c.is_corednss())
            .map(|c| (c.configmap.as_str(), c.key.as_str()))
            .collect();
        assert_eq!(counted, [(RKE2_COREDNS, "Corefile")]);
        assert_eq!(config.coredns_mounts_error, None);
        assert_eq!(
            config.corefiles[0].helm_release.as_deref(),
            Some("rke2-coredns")
        );
        assert!(matches!(
            config.corefiles[0].root_forward(),
            corefile::RootForward::Forward(..)
        ));
        // Refused: said, and nothing else is lost.
        let config = read(none, rke2.to_vec(), true).await;
        assert!(config.corefiles.is_empty(), "{:?}", config.corefiles);
        let error = config.coredns_mounts_error.expect("refused");
        assert!(
            error.starts_with(RKE2_COREDNS) && error.contains("Forbidden"),
            "{error}"
        );
        // Pods listed: their volume leads to it, and the name is not asked for again.
        let rke2_pods = include_bytes!("../../tests/fixtures/kubectl/rke2-coredns-pods.json");
        let config = read(rke2_pods, rke2.to_vec(), false).await;
        assert_eq!(config.coredns_mounts, [RKE2_COREDNS]);
        assert_eq!(config.corefiles.len(), 1);
        // `coredns` read and no pod: nothing more is asked.
        let kubeadm = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "coredns", "namespace": "kube-system"},
             "data": {"Corefile": crate::testing::KUBEADM_COREFILE}}]});
        let kubeadm = serde_json::to_vec(&kubeadm).expect("json");
        let config = read(none, kubeadm, true).await;
        let read_names: Vec<&str> = config
            .corefiles
            .iter()
            .map(|c| c.configmap.as_str())
            .collect();
        assert_eq!(read_names, ["coredns"]);
        assert_eq!(config.coredns_mounts_error, None);
    }

    /// A `helm.sh/chart` label is the chart's name and version (charts/coredns
    /// templates/_helpers.tpl:33 at caac0316), the name itself holding `-` on RKE2
    /// (rancher/rke2-charts packages/rke2-coredns); nothing else is taken.
    #[test]
    fn a_chart_label_is_its_chart_and_version() {
        let got = |label: &str| chart_label(label);
        let pair = |c: &str, v: &str| Some((c.to_owned(), v.to_owned()));
        assert_eq!(got("coredns-1.46.2"), pair("coredns", "1.46.2"));
        assert_eq!(
            got("rke2-coredns-1.47.003"),
            pair("rke2-coredns", "1.47.003")
        );
        assert_eq!(
            got("coredns-1.46.2_build.1"),
            pair("coredns", "1.46.2+build.1")
        );
        for bad in ["coredns", "coredns-1.0;id", "$(id)-1.0", "-1.0"] {
            assert_eq!(got(bad), None, "{bad}");
        }
    }

    /// The ConfigMaps of `fixture` with those of the lab's kube-system named `names`
    /// (tests/lab/standins/configmaps.json: kubeadm's `kubelet-config`, its clusterDNS
    /// 10.96.0.10; Kubespray's `coredns`).
    fn with_lab_configmaps(fixture: &[u8], names: &[&str]) -> Vec<u8> {
        let mut list: Value = serde_json::from_slice(fixture).expect("fixture");
        let lab: Value =
            serde_json::from_slice(include_bytes!("../../tests/lab/standins/configmaps.json"))
                .expect("lab");
        let items = list["items"].as_array_mut().expect("items");
        for item in lab["items"].as_array().expect("items") {
            if names.iter().any(|n| item["metadata"]["name"] == *n) {
                items.push(item.clone());
            }
        }
        serde_json::to_vec(&list).expect("json")
    }

    /// [`read_from`] a lab cluster of `pods`, `configmaps` and `services` (fixtures'
    /// Lists); `forbidden`: the Services of every namespace refused, as RBAC refuses a
    /// Role limited to kube-system.
    async fn read_elsewhere_lab(
        pods: Vec<u8>,
        configmaps: Vec<u8>,
        services: Vec<u8>,
        forbidden: bool,
    ) -> (Vec<DnsPod>, DnsConfig) {
        let (mut kubectl, dir) = lab_kubectl(&pods, &configmaps);
        std::fs::write(dir.join("services.json"), services).expect("services");
        if forbidden {
            std::fs::write(dir.join("cluster-scope-forbidden"), "").expect("write");
        }
        let listed = kubectl.first_listing(Listing::WithLogs).await;
        let cluster = read_from(kubectl, listed.expect("listed")).await;
        std::fs::remove_dir_all(&dir).ok();
        match cluster {
            Cluster::Read { pods, config, .. } => (pods, *config),
            other => panic!("not read: {other:?}"),
        }
    }

    /// The CoreDNS Helm chart installed as `helm install coredns coredns/coredns -n
    /// coredns` (`coredns.fullname` is then `coredns`: charts/coredns
    /// templates/_helpers.tpl:13-24 at caac0316, the release name containing the chart's),
    /// beside a leftover kube-system `coredns` (Kubespray's, the lab's) and a second
    /// CoreDNS of the chart in `k8gb` installed with `isClusterService: false` (no
    /// `k8s-app`, no `kubernetes.io/cluster-service`: _helpers.tpl:30-40), on a kubeadm
    /// cluster whose kubelet-config gives clusterDNS 10.96.0.10. Only `coredns/coredns`'s
    /// Corefile is the one CoreDNS loads: the kube-system one of the same name is not
    /// (before, a pod's mount matched it by name and it was judged as loaded); the k8gb
    /// Service is neither asked for nor taken as the cluster's DNS (before, the chart's
    /// `app.kubernetes.io/name=coredns` alone brought it, and every Service elsewhere
    /// became the cluster DNS Services). Without kubeadm's clusterDNS to match, none is
    /// taken, and why says which were seen.
    #[tokio::test]
    async fn a_stale_kube_system_coredns_and_a_foreign_coredns_do_not_count() {
        let release = |fixture: &[u8]| {
            String::from_utf8_lossy(fixture)
                .replace("dns-coredns", "coredns")
                .replace("\"dns\"", "\"coredns\"")
                .into_bytes()
        };
        let pods = release(include_bytes!(
            "../../tests/fixtures/kubectl/helm-coredns-ns-pods.json"
        ));
        let configmaps = release(include_bytes!(
            "../../tests/fixtures/kubectl/helm-coredns-ns-configmaps.json"
        ));
        let services = release(include_bytes!(
            "../../tests/fixtures/kubectl/coredns-two-services.json"
        ));
        let (found, config) = read_elsewhere_lab(
            pods.clone(),
            with_lab_configmaps(&configmaps, &["kubelet-config", "coredns"]),
            services.clone(),
            false,
        )
        .await;
        let found: Vec<(&str, &str)> = found
            .iter()
            .map(|p| (p.namespace(), p.name.as_str()))
            .collect();
        assert_eq!(found, [("coredns", "coredns-6d4f8b7c9b-2xkqp")]);
        let named = |services: &[DnsService]| -> Vec<String> {
            services
                .iter()
                .map(|s| format!("{}/{}", s.namespace(), s.name))
                .collect()
        };
        assert_eq!(named(&config.services_elsewhere), ["coredns/coredns"]);
        assert_eq!(
            named(config.services.as_deref().expect("read")),
            ["coredns/coredns"]
        );
        let corefiles: Vec<(&str, &str, bool)> = config
            .corefiles
            .iter()
            .filter(|c| !c.is_node_local())
            .map(|c| (c.namespace(), c.configmap.as_str(), c.is_corednss()))
            .collect();
        assert_eq!(
            corefiles,
            [
                ("kube-system", "coredns", false),
                ("coredns", "coredns", true)
            ]
        );
        assert_eq!(config.coredns_unread, None);
        // CoreDNS pods in kube-system without a Service there (RKE2's, whose Service the
        // Role may not list): kube-system's DNS stays there, and no Service elsewhere
        // becomes the cluster's (before, every one did).
        let (found, config) = read_elsewhere_lab(
            include_bytes!("../../tests/fixtures/kubectl/rke2-coredns-pods.json").to_vec(),
            with_lab_configmaps(
                include_bytes!("../../tests/fixtures/kubectl/rke2-coredns-configmaps.json"),
                &["kubelet-config"],
            ),
            services.clone(),
            false,
        )
        .await;
        assert!(
            found.iter().all(|p| p.namespace() == "kube-system"),
            "{found:?}"
        );
        assert_eq!(config.services, Some(Vec::new()));
        assert_eq!(config.coredns_unread, None);
        // No kubeadm kubelet-config: nothing to choose by, so nothing is taken.
        let (found, config) = read_elsewhere_lab(
            pods,
            with_lab_configmaps(&configmaps, &["coredns"]),
            services,
            false,
        )
        .await;
        assert!(
            found.iter().all(|p| p.namespace() == "kube-system"),
            "{found:?}"
        );
        assert_eq!(config.services, Some(Vec::new()));
        let why = config.coredns_unread.expect("why");
        assert!(
            why.contains("CoreDNS's Services elsewhere (coredns/coredns 10.96.0.10) are not taken for the cluster DNS Service: no kubeadm kubelet-config"),
            "{why}"
        );
    }

    /// The selector of the CoreDNS Helm chart's Service in `coredns`
    /// (helm-coredns-ns-services.json).
    const HELM_NS_SELECTOR: &str =
        "app.kubernetes.io/instance=dns,app.kubernetes.io/name=coredns,k8s-app=coredns";

    /// apply recreates CoreDNS found outside kube-system in its own namespace: listed there
    /// again by the plan's selector, deleted there (the lab's kubectl deletes a pod only in
    /// the namespace asked), its replacement looked for there. Before, apply listed and
    /// deleted kube-system's DNS pods only: the pod was left as it was. A namespace or
    /// selector that is not one the API allows never reaches kubectl's command line.
    #[tokio::test]
    async fn coredns_outside_kube_system_is_recreated_in_its_namespace() {
        let fixture: &[u8] =
            include_bytes!("../../tests/fixtures/kubectl/helm-coredns-ns-pods.json");
        let (mut kubectl, dir) = helm_ns_lab(fixture);
        // The Deployment's controller: once the pod is gone, a Ready replacement in its
        // namespace, on another node.
        let list: Value = serde_json::from_slice(fixture).expect("fixture");
        let mut replacement = list["items"][0].clone();
        replacement["metadata"]["name"] = "dns-coredns-6d4f8b7c9b-q8wzt".into();
        replacement["spec"]["nodeName"] = "node2".into();
        let controller = replace_once_deleted(&dir, replacement);
        let home = kubectl
            .first_listing(Listing::WithServices)
            .await
            .expect("kube-system listed");
        assert!(home.is_empty(), "{home:?}");
        let elsewhere = [("coredns".to_owned(), Some(HELM_NS_SELECTOR.to_owned()))];
        let done = recreate_node_pods(
            &mut kubectl,
            &Restarted::default(),
            home,
            &elsewhere,
            &["node1".to_owned()],
            Duration::from_secs(10),
        )
        .await
        .expect("recreated");
        assert!(
            controller.join().expect("controller"),
            "the pod was not deleted"
        );
        assert_eq!(done.len(), 1, "{done:?}");
        assert!(done[0].ok, "{done:?}");
        assert_eq!(done[0].shown(), "coredns/dns-coredns-6d4f8b7c9b-2xkqp");
        assert_eq!(
            done[0].replacement.as_deref(),
            Some("dns-coredns-6d4f8b7c9b-q8wzt")
        );
        // The namespace given twice, its selector in another order (a hand-edited plan):
        // each pod is recreated once.
        let reordered: Vec<&str> = HELM_NS_SELECTOR.split(',').rev().collect();
        let twice = [
            ("coredns".to_owned(), Some(HELM_NS_SELECTOR.to_owned())),
            ("coredns".to_owned(), Some(reordered.join(","))),
        ];
        let mut again = list["items"][0].clone();
        again["metadata"]["name"] = "dns-coredns-6d4f8b7c9b-z9x8c".into();
        again["spec"]["nodeName"] = "node3".into();
        let pods_dir = dir.join("pods");
        let controller = std::thread::spawn(move || {
            for _ in 0..200 {
                if !pods_dir.join("new.json").exists() {
                    let pod = serde_json::to_vec(&again).expect("json");
                    std::fs::write(pods_dir.join("again.json"), pod).expect("replacement");
                    return true;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            false
        });
        let done = recreate_node_pods(
            &mut kubectl,
            &Restarted::default(),
            Vec::new(),
            &twice,
            &["node2".to_owned()],
            Duration::from_secs(10),
        )
        .await
        .expect("recreated");
        assert!(controller.join().expect("controller"), "not deleted");
        let shown: Vec<(String, bool)> = done.iter().map(|p| (p.shown(), p.ok)).collect();
        assert_eq!(
            shown,
            [("coredns/dns-coredns-6d4f8b7c9b-q8wzt".to_owned(), true)],
            "{done:?}"
        );

        // Names from a saved plan that the API would not allow: not the Service's either.
        for (namespace, selector, why) in [
            ("core;dns", HELM_NS_SELECTOR, "refused, nothing deleted"),
            (
                "coredns",
                "k8s-app=coredns' -A '",
                "refused, nothing deleted",
            ),
        ] {
            let bad = [(namespace.to_owned(), Some(selector.to_owned()))];
            let error = recreate_node_pods(
                &mut kubectl,
                &Restarted::default(),
                Vec::new(),
                &bad,
                &["node1".to_owned()],
                Duration::from_secs(1),
            )
            .await
            .expect_err("refused")
            .to_string();
            assert!(error.contains(why), "{error}");
        }
        kubectl.close().await;
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A controller for the lab's kubectl in `dir`: once the pod listed first (`pods/0.json`)
    /// is deleted, `replacement` appears (`pods/new.json`), as a Deployment or DaemonSet
    /// replaces a pod; true when it did within 10 s.
    fn replace_once_deleted(
        dir: &std::path::Path,
        replacement: Value,
    ) -> std::thread::JoinHandle<bool> {
        replace_when_deleted(dir, 0, replacement)
    }

    /// [`replace_once_deleted`] of the pod listed at `index`.
    fn replace_when_deleted(
        dir: &std::path::Path,
        index: usize,
        replacement: Value,
    ) -> std::thread::JoinHandle<bool> {
        let pods_dir = dir.join("pods");
        std::thread::spawn(move || {
            for _ in 0..200 {
                if !pods_dir.join(format!("{index}.json")).exists() {
                    let pod = serde_json::to_vec(&replacement).expect("json");
                    std::fs::write(pods_dir.join("new.json"), pod).expect("replacement");
                    return true;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            false
        })
    }

    /// The lab's kubectl with the CoreDNS Helm chart installed in `coredns` (its Service
    /// at kubeadm's clusterDNS, kube-system without CoreDNS) and the pods of `pods`.
    fn helm_ns_lab(pods: &[u8]) -> (Kubectl, std::path::PathBuf) {
        let configmaps = with_lab_configmaps(
            include_bytes!("../../tests/fixtures/kubectl/helm-coredns-ns-configmaps.json"),
            &["kubelet-config"],
        );
        let (kubectl, dir) = lab_kubectl(pods, &configmaps);
        let services = include_bytes!("../../tests/fixtures/kubectl/helm-coredns-ns-services.json");
        std::fs::write(dir.join("services.json"), services).expect("services");
        (kubectl, dir)
    }

    /// A saved plan names the namespace and selector apply lists CoreDNS pods by outside
    /// kube-system: edited by hand (`web`, `app=web`), apply would delete whatever pod of
    /// the node they select. apply recreates pods there only where the cluster DNS Service
    /// is, now, in exactly that namespace with exactly that selector, found as a plan finds
    /// it; otherwise nothing is deleted, and the refusal names both. Of the pods the
    /// Service's selector lists, only those running a `coredns` container are CoreDNS's.
    /// Before, the nginx pod was deleted, and a pod beside CoreDNS that the selector
    /// matches was taken for CoreDNS.
    #[tokio::test]
    async fn a_plans_namespace_and_selector_must_be_the_cluster_dns_services() {
        let fixture: Value = serde_json::from_slice(include_bytes!(
            "../../tests/fixtures/kubectl/helm-coredns-ns-pods.json"
        ))
        .expect("fixture");
        let coredns = fixture["items"][0].clone();
        let mut nginx = coredns.clone();
        nginx["metadata"]["name"] = "web-7c5ddbdf54-xk2lp".into();
        nginx["metadata"]["namespace"] = "web".into();
        nginx["metadata"]["labels"] = serde_json::json!({"app": "web"});
        nginx["spec"]["containers"][0]["name"] = "nginx".into();
        // Selected by the Service's labels in `coredns`, but no CoreDNS.
        let mut beside = nginx.clone();
        beside["metadata"]["name"] = "dns-debug".into();
        beside["metadata"]["namespace"] = "coredns".into();
        beside["metadata"]["labels"] = coredns["metadata"]["labels"].clone();
        let list = serde_json::json!({"kind": "List", "items": [coredns, nginx, beside]});
        let (mut kubectl, dir) = helm_ns_lab(&serde_json::to_vec(&list).expect("json"));
        let home = kubectl
            .first_listing(Listing::WithServices)
            .await
            .expect("listed");
        for (namespace, selector) in [
            ("web", "app=web"),
            ("coredns", "k8s-app=coredns"),
            ("kube-public", HELM_NS_SELECTOR),
        ] {
            let plan = [(namespace.to_owned(), Some(selector.to_owned()))];
            let error = recreate_node_pods(
                &mut kubectl,
                &Restarted::default(),
                home.clone(),
                &plan,
                &["node1".to_owned()],
                Duration::from_secs(1),
            )
            .await
            .expect_err("refused");
            assert!(error.done.is_empty(), "{error:?}");
            let error = error.to_string();
            assert!(
                error.contains(&format!(
                    "namespace {namespace} by the selector {selector}, which is not the cluster DNS Service's now (the cluster DNS Service is coredns/dns-coredns, selecting {HELM_NS_SELECTOR}): refused, nothing deleted"
                )),
                "{error}"
            );
        }
        // The Service's own pod on the node runs with the old file: named to recreate.
        let error = recreate_node_pods(
            &mut kubectl,
            &Restarted::default(),
            home.clone(),
            &[("web".to_owned(), Some("app=web".to_owned()))],
            &["node1".to_owned()],
            Duration::from_secs(1),
        )
        .await
        .expect_err("refused")
        .to_string();
        assert!(
            error.contains("refused, nothing deleted; the plan is stale: make a new plan to recreate the node's DNS pods; the node's kubelet was restarted with the new files, and these pods still run with the old ones: recreate them by hand (kubectl -n coredns delete pod dns-coredns-6d4f8b7c9b-2xkqp)"),
            "{error}"
        );
        for i in 0..3 {
            assert!(
                dir.join(format!("pods/{i}.json")).exists(),
                "pod {i} deleted"
            );
        }
        let listed = kubectl
            .dns_pods_in("coredns", Some(HELM_NS_SELECTOR))
            .await
            .expect("listed");
        let names: Vec<&str> = listed.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["dns-coredns-6d4f8b7c9b-2xkqp"]);
        kubectl.close().await;
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A plan's selector with the Service's pairs in another order (a Service's selector
    /// is a map) is the Service's: confirmed, not refused. Before, the selectors were
    /// compared as strings and the plan refused.
    #[tokio::test]
    async fn a_selector_in_another_order_is_the_same_selector() {
        let (mut kubectl, dir) = helm_ns_lab(include_bytes!(
            "../../tests/fixtures/kubectl/helm-coredns-ns-pods.json"
        ));
        let home = kubectl
            .first_listing(Listing::WithServices)
            .await
            .expect("listed");
        let reordered =
            "k8s-app=coredns,app.kubernetes.io/name=coredns,app.kubernetes.io/instance=dns";
        let plan = [("coredns".to_owned(), Some(reordered.to_owned()))];
        let confirmed = kubectl.confirm_elsewhere(&home, &plan).await;
        // One pair fewer is another selector.
        let fewer = [(
            "coredns".to_owned(),
            Some("k8s-app=coredns,app.kubernetes.io/name=coredns".to_owned()),
        )];
        let refused = kubectl.confirm_elsewhere(&home, &fewer).await;
        kubectl.close().await;
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(confirmed, Ok(()));
        assert!(
            matches!(refused, Err(crate::cluster::Unconfirmed::Moved(_))),
            "{refused:?}"
        );
    }

    /// A Services list refused (a Role limited to kube-system, which may not list
    /// Services at the cluster scope) is said to be, with kubectl's error: the cluster
    /// DNS Service is unknown, not absent. Before, the refusal read "no cluster DNS
    /// Service is found outside kube-system".
    #[tokio::test]
    async fn services_that_could_not_be_listed_are_said_to_be() {
        let error = unlisted("cluster-scope-forbidden").await;
        assert!(
            error.contains("but the Services could not be listed (kubectl get services -A -l app.kubernetes.io/name=coredns,kubernetes.io/cluster-service=true -o json: exit status 1: Error from server (Forbidden): services is forbidden"),
            "{error}"
        );
        assert!(error.ends_with("refused, nothing deleted"), "{error}");
    }

    /// A Services list at the cluster scope that timed out (kubectl hung on a slow API
    /// server until the `timeout` around it killed it: status 124, nothing printed) is
    /// said to be, as one refused is: the cluster DNS Service is unknown, not moved, so
    /// apply leaves the plan's hosts untouched rather than stale.
    #[tokio::test]
    async fn services_that_timed_out_are_said_to_be() {
        let error = unlisted("cluster-scope-times-out").await;
        assert!(
            error.contains("but the Services could not be listed (kubectl get services -A -l app.kubernetes.io/name=coredns,kubernetes.io/cluster-service=true -o json: did not answer in time"),
            "{error}"
        );
        assert!(error.ends_with("refused, nothing deleted"), "{error}");
    }

    /// What `confirm_elsewhere` says of the Helm chart's CoreDNS in `coredns` where the
    /// lab's kubectl is set to fail the cluster-scope Services list (`switch`, a file in
    /// its directory): unlisted, never moved.
    async fn unlisted(switch: &str) -> String {
        let (mut kubectl, dir) = helm_ns_lab(include_bytes!(
            "../../tests/fixtures/kubectl/helm-coredns-ns-pods.json"
        ));
        std::fs::write(dir.join(switch), "").expect("write");
        let home = kubectl
            .first_listing(Listing::WithServices)
            .await
            .expect("listed");
        let plan = [("coredns".to_owned(), Some(HELM_NS_SELECTOR.to_owned()))];
        let refused = kubectl.confirm_elsewhere(&home, &plan).await;
        kubectl.close().await;
        std::fs::remove_dir_all(&dir).ok();
        let Err(error @ crate::cluster::Unconfirmed::Unlisted(_)) = refused else {
            panic!("expected the Services unlisted, got {refused:?}");
        };
        error.to_string()
    }

    /// A Services list that timed out at a node, after its kubelet restarted, is no sign
    /// of a stale plan: where the node's own planned pods are outside kube-system, the
    /// error says to run the same plan again (its pods-failed note makes that recreate
    /// them), not to make a new one, which would have no cluster action for the fixed node.
    /// Where the namespace is only one of the plan's other nodes' (added in case a pod
    /// landed here), it is left out, and its pods are listed (only read) to say what that
    /// left: on a node without one of them, a note that none was left with the old
    /// upstream; on node1, which runs one, an error naming the delete to run by hand (the
    /// host fails: exit 0 would tell a runbook the node's DNS is fixed). Where they cannot
    /// be listed either, the error names the `kubectl get pods` to look with. Before, the
    /// note said "refused, nothing deleted" and "if any" on every node, the node's own
    /// pods recreated all the same and the host exiting 0.
    #[tokio::test]
    async fn services_that_timed_out_at_a_node_are_no_stale_plan() {
        let (mut kubectl, dir) = helm_ns_lab(include_bytes!(
            "../../tests/fixtures/kubectl/helm-coredns-ns-pods.json"
        ));
        std::fs::write(dir.join("cluster-scope-times-out"), "").expect("write");
        let home = kubectl
            .first_listing(Listing::WithServices)
            .await
            .expect("listed");
        let plan = [("coredns".to_owned(), Some(HELM_NS_SELECTOR.to_owned()))];
        let why = unconfirmed_also(&mut kubectl, &home, &plan)
            .await
            .expect("unconfirmed");
        assert!(why.cause().contains("could not be listed"), "{why}");
        assert!(!why.cause().contains("refused"), "{why}");
        let what = format!(
            "CoreDNS in coredns (by {HELM_NS_SELECTOR}), which the plan recreates on other \
             nodes, is not confirmed as the cluster DNS Service's ({}), so none of its pods \
             is recreated on this node",
            why.cause()
        );
        let note = left_unconfirmed(&mut kubectl, &plan, &["node2".to_owned()], &why)
            .await
            .expect("a note");
        assert_eq!(
            note,
            format!(
                "{what}; none of its pods is on this node, so none was left with the old upstream"
            )
        );
        let error = left_unconfirmed(&mut kubectl, &plan, &["node1".to_owned()], &why)
            .await
            .expect_err("a pod left on node1");
        assert_eq!(
            error,
            format!(
                "{what}, and these on it still run with the old upstream: recreate them by \
                 hand (kubectl -n coredns delete pod dns-coredns-6d4f8b7c9b-2xkqp)"
            )
        );
        let odd = [("coredns".to_owned(), Some("a=1,".to_owned()))];
        let error = left_unconfirmed(&mut kubectl, &odd, &["node2".to_owned()], &why)
            .await
            .expect_err("not listed");
        assert!(
            error.ends_with(
                "look (kubectl -n coredns get pods -l a=1, -o wide) and recreate it by hand"
            ),
            "{error}"
        );
        let error = recreate_node_pods(
            &mut kubectl,
            &Restarted::default(),
            home,
            &plan,
            &["node1".to_owned()],
            Duration::from_secs(1),
        )
        .await
        .expect_err("unconfirmed")
        .to_string();
        kubectl.close().await;
        assert!(dir.join("pods/0.json").exists(), "deleted");
        std::fs::remove_dir_all(&dir).ok();
        assert!(
            error.contains("run the same plan again to recreate the node's DNS pods"),
            "{error}"
        );
        assert!(!error.contains("stale"), "{error}");
    }

    /// A CoreDNS pod the Deployment put on the node after the plan, in the namespace and
    /// by the selector the plan confirmed, where the plan saw none on the node: listed
    /// there again at apply time and recreated, as a kube-system CoreDNS pod that lands
    /// there is. Nothing wider is deleted: not the Service's pod on another node, not a
    /// pod on the node the selector matches that runs no `coredns` container, not a pod of
    /// another namespace on the node.
    #[tokio::test]
    async fn a_pod_that_landed_after_the_plan_is_recreated_in_the_confirmed_namespace() {
        let fixture: Value = serde_json::from_slice(include_bytes!(
            "../../tests/fixtures/kubectl/helm-coredns-ns-pods.json"
        ))
        .expect("fixture");
        let coredns = fixture["items"][0].clone();
        let mut other_node = coredns.clone();
        other_node["metadata"]["name"] = "dns-coredns-6d4f8b7c9b-r5j7n".into();
        other_node["spec"]["nodeName"] = "node2".into();
        let mut debug = coredns.clone();
        debug["metadata"]["name"] = "dns-debug".into();
        debug["spec"]["containers"][0]["name"] = "netshoot".into();
        let mut web = coredns.clone();
        web["metadata"]["name"] = "web-7c5ddbdf54-xk2lp".into();
        web["metadata"]["namespace"] = "web".into();
        let list = serde_json::json!({"kind": "List", "items": [other_node, debug, web]});
        let (mut kubectl, dir) = helm_ns_lab(&serde_json::to_vec(&list).expect("json"));
        // pods/0.json is the one replace_once_deleted watches: the pod that lands later.
        std::fs::rename(dir.join("pods/0.json"), dir.join("pods/3.json")).expect("rename");
        let selector = Some(HELM_NS_SELECTOR);
        let planned: Vec<DnsPod> = kubectl
            .dns_pods_in("coredns", selector)
            .await
            .expect("listed")
            .into_iter()
            .filter(|p| p.node == "node1")
            .collect();
        assert!(planned.is_empty(), "the plan saw {planned:?} on node1");
        // After the plan: the Deployment's pod lands on node1, and once deleted its
        // replacement comes up on node2.
        std::fs::write(
            dir.join("pods/0.json"),
            serde_json::to_vec(&coredns).expect("json"),
        )
        .expect("landed");
        let mut replacement = coredns.clone();
        replacement["metadata"]["name"] = "dns-coredns-6d4f8b7c9b-q8wzt".into();
        replacement["spec"]["nodeName"] = "node2".into();
        let controller = replace_once_deleted(&dir, replacement);
        let home = kubectl
            .first_listing(Listing::WithServices)
            .await
            .expect("listed");
        let elsewhere = [("coredns".to_owned(), selector.map(str::to_owned))];
        let done = recreate_node_pods(
            &mut kubectl,
            &Restarted::default(),
            home,
            &elsewhere,
            &["node1".to_owned()],
            Duration::from_secs(10),
        )
        .await
        .expect("recreated");
        kubectl.close().await;
        assert!(controller.join().expect("controller"), "not deleted");
        let done: Vec<(String, bool)> = done.iter().map(|p| (p.shown(), p.ok)).collect();
        assert_eq!(
            done,
            [("coredns/dns-coredns-6d4f8b7c9b-2xkqp".to_owned(), true)]
        );
        for i in 1..=3 {
            assert!(
                dir.join(format!("pods/{i}.json")).exists(),
                "pod {i} deleted"
            );
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    /// The replicas `last_ready` weighs as the API server shows them: one whose node
    /// stopped answering is not Ready by its pod's Ready condition, which the node
    /// controller sets False leaving its container's status as it was (kubernetes/kubernetes
    /// @025f2834 pkg/controller/util/node/controller_utils.go MarkPodsNotReady), so the pod
    /// on node1 is the last Ready one; one being deleted (`deletionTimestamp`, Terminating on
    /// a node that went away) is none, so node1's is no longer kept for it. Before, the
    /// first was taken for Ready and node1's pod deleted, and the second kept it for good.
    #[test]
    fn a_replica_not_ready_by_its_condition_counts_and_a_terminating_one_does_not() {
        let doc: Value =
            serde_json::from_slice(include_bytes!("../../tests/fixtures/kubectl/dns-pods.json"))
                .expect("fixture");
        let read = |doc: &Value| parse_pods(&serde_json::to_vec(doc).expect("json")).expect("pods");
        // node2's replica, its container ready, on a node that stopped answering.
        let mut gone = doc.clone();
        let other = &mut gone["items"][1];
        other["status"]["containerStatuses"][0]["ready"] = true.into();
        other["status"]["containerStatuses"][0]["state"] =
            serde_json::json!({"running": {"startedAt": "2026-08-21T10:00:00Z"}});
        other["status"]["containerStatuses"][0]
            .as_object_mut()
            .expect("status")
            .remove("lastState");
        let with_ready = read(&gone);
        assert!(with_ready[1].ready, "{:?}", with_ready[1]);
        assert_eq!(last_ready(&with_ready[0], &with_ready, &[]), None);
        gone["items"][1]["status"]["conditions"] = serde_json::json!([
            {"type": "Ready", "status": "False"},
            {"type": "ContainersReady", "status": "True"}
        ]);
        let pods = read(&gone);
        assert!(!pods[1].ready, "{:?}", pods[1]);
        let why = last_ready(&pods[0], &pods, &[]).expect("kept");
        assert!(
            why.contains("coredns-5c54f84c97-q9m4d on node2: Running, not ready"),
            "{why}"
        );
        // node2's crash-looping replica being deleted: node1's is recreated.
        let mut terminating = doc.clone();
        terminating["items"][1]["metadata"]["deletionTimestamp"] = "2026-08-21T10:05:00Z".into();
        let pods = read(&terminating);
        assert!(pods[1].terminating && !pods[0].terminating);
        assert_eq!(last_ready(&pods[0], &pods, &[]), None);
    }

    /// Both CoreDNS replicas on the node being fixed (kubeadm's control plane before
    /// workers joined, a single-node cluster), listed Ready first, then posted not Ready by
    /// the restarted kubelet: each counts the other as Ready (same container since), so
    /// the first is recreated, not both kept. A replica of another node posted not Ready
    /// gets no such allowance (its node may have stopped answering).
    #[test]
    fn replicas_of_this_node_posted_not_ready_after_the_restart_count_as_ready() {
        let mut a = pod("coredns-a", "coredns", "node1");
        let mut b = pod("coredns-b", "coredns", "node1");
        a.ready = true;
        b.ready = true;
        let first = [a.clone(), b.clone()];
        a.ready = false;
        b.ready = false;
        let posted = [a.clone(), b.clone()];
        assert_eq!(last_ready(&first[0], &posted, &first), None);
        let mut elsewhere = b.clone();
        elsewhere.node = "node2".into();
        let only_mine = [first[0].clone()];
        let why = last_ready(&first[0], &[a.clone(), elsewhere], &only_mine);
        assert!(why.is_some_and(|w| w.contains("the only Ready coredns replica")));
    }

    /// The control-plane host where kubectl answered last is tried first by the next
    /// node, the others after it in the inventory's order: a first host that does not
    /// answer costs one connect timeout in a run, not one per node. Before, each node
    /// tried them in the inventory's order.
    #[test]
    fn the_control_plane_host_that_answered_is_tried_first() {
        let host = |name: &str| {
            let mut h = crate::inventory::Inventory::local().hosts()[0].clone();
            h.name = name.to_owned();
            h
        };
        let access = Access::ControlPlane(vec![host("cp1"), host("cp2"), host("cp3")]);
        let names = |a: Access| match a {
            Access::ControlPlane(hosts) => hosts.into_iter().map(|h| h.name).collect::<Vec<_>>(),
            Access::Kubeconfig(_) => Vec::new(),
        };
        assert_eq!(names(access.preferring(Some("cp2"))), ["cp2", "cp1", "cp3"]);
        assert_eq!(names(access.preferring(None)), ["cp1", "cp2", "cp3"]);
        assert_eq!(
            names(access.preferring(Some("gone"))),
            ["cp1", "cp2", "cp3"]
        );
    }

    /// A node where the plan saw no DNS pod is looked at for one put there since: a
    /// kube-system pod on it, or one in a namespace outside kube-system listed by its
    /// selector; one being deleted is none; a listing that fails says which namespace.
    #[tokio::test]
    async fn a_pod_landed_on_a_node_is_found() {
        let (mut kubectl, dir) = helm_ns_lab(include_bytes!(
            "../../tests/fixtures/kubectl/helm-coredns-ns-pods.json"
        ));
        let home = kubectl.first_listing(Listing::Pods).await.expect("listed");
        let plan = [("coredns".to_owned(), Some(HELM_NS_SELECTOR.to_owned()))];
        let node = |n: &str| vec![n.to_owned()];
        let found = landed_on_node(&mut kubectl, &home, &plan, &node("node1")).await;
        assert_eq!(found, Ok(true));
        let found = landed_on_node(&mut kubectl, &home, &plan, &node("node2")).await;
        assert_eq!(found, Ok(false));
        let found = landed_on_node(&mut kubectl, &home, &[], &node("node1")).await;
        assert_eq!(found, Ok(false));
        let mut local = pod("nodelocaldns-x", "nodelocaldns", "node2");
        let found = landed_on_node(&mut kubectl, &[local.clone()], &[], &node("node2")).await;
        assert_eq!(found, Ok(true));
        local.terminating = true;
        let found = landed_on_node(&mut kubectl, &[local], &[], &node("node2")).await;
        assert_eq!(found, Ok(false));
        let odd = [("coredns".to_owned(), Some("a=1,".to_owned()))];
        let found = landed_on_node(&mut kubectl, &home, &odd, &node("node2")).await;
        kubectl.close().await;
        std::fs::remove_dir_all(&dir).ok();
        let error = found.expect_err("not listed");
        assert!(
            error.starts_with("listing the CoreDNS pods in coredns: "),
            "{error}"
        );
    }

    /// A pod being deleted (Terminating) is no pod of the node to recreate: its controller
    /// made its replacement already. Before, a not-Ready Terminating CoreDNS pod came first,
    /// was deleted again, and apply waited the whole --health-timeout for a replacement
    /// that never came, failing the host.
    #[test]
    fn a_terminating_pod_is_not_recreated() {
        let mut going = pod("coredns-old", "coredns", "node1");
        going.ready = false;
        going.terminating = true;
        let pods = vec![going, pod("nodelocaldns-x", "nodelocaldns", "node1")];
        let order: Vec<String> = recreation_order(pods, &["node1".to_owned()])
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(order, ["nodelocaldns-x"]);
    }

    /// A Terminating pod on the node is left to its controller, and the report's notes say
    /// so: nothing to wait for, no failure.
    #[tokio::test]
    async fn a_terminating_pod_is_left_with_a_note() {
        let fixture: &[u8] = include_bytes!("../../tests/fixtures/kubectl/dns-pods.json");
        let mut list: Value = serde_json::from_slice(fixture).expect("fixture");
        list["items"][1]["spec"]["nodeName"] = "node1".into();
        list["items"][1]["metadata"]["deletionTimestamp"] = "2026-11-20T08:20:00Z".into();
        list["items"] = Value::Array(vec![list["items"][1].clone()]);
        let (mut kubectl, dir) = lab_kubectl(
            &serde_json::to_vec(&list).expect("json"),
            br#"{"kind":"List","items":[]}"#,
        );
        let pods = kubectl.first_listing(Listing::Pods).await.expect("listed");
        let done = recreate_on_node1(&mut kubectl, pods, 1)
            .await
            .expect("nothing failed");
        let notes = kubectl.take_notes();
        kubectl.close().await;
        let left = dir.join("pods/0.json").exists();
        std::fs::remove_dir_all(&dir).ok();
        assert!(done.is_empty(), "{done:?}");
        assert!(left, "the Terminating pod was deleted again");
        assert_eq!(
            notes,
            [
                "DNS pod kube-system/coredns-5c54f84c97-q9m4d on node1 is being deleted \
              (Terminating): not recreated, its ReplicaSet made its replacement already"
            ]
        );
    }

    /// A replacement that does not come up stops the node's other deletions: the pods left
    /// (nodelocaldns) are named, each with the delete to run by hand, as after a refused
    /// delete; the node's Ready CoreDNS replica, maybe the only Ready one now, is named
    /// apart, to recreate only once another is Ready. Before, the host failed naming only the pod whose
    /// replacement did not come up.
    #[tokio::test]
    async fn a_replacement_that_does_not_come_up_names_the_pods_left() {
        let fixture: &[u8] = include_bytes!("../../tests/fixtures/kubectl/dns-pods.json");
        let mut list: Value = serde_json::from_slice(fixture).expect("fixture");
        list["items"][1]["spec"]["nodeName"] = "node1".into();
        list["items"] = Value::Array(list["items"].as_array().expect("items")[..3].to_vec());
        let (mut kubectl, dir) = lab_kubectl(
            &serde_json::to_vec(&list).expect("json"),
            br#"{"kind":"List","items":[]}"#,
        );
        // No controller: the looping pod, deleted first, is not replaced.
        let pods = kubectl.first_listing(Listing::Pods).await.expect("listed");
        let failed = recreate_on_node1(&mut kubectl, pods, 1)
            .await
            .expect_err("stopped");
        kubectl.close().await;
        std::fs::remove_dir_all(&dir).ok();
        let done: Vec<(&str, bool)> = failed.done.iter().map(|p| (p.pod.as_str(), p.ok)).collect();
        assert_eq!(done, [("coredns-5c54f84c97-q9m4d", false)]);
        let left: Vec<&str> = failed.left.iter().map(|(_, name)| name.as_str()).collect();
        assert_eq!(left, ["nodelocaldns-2v8kd"]);
        let error = failed.to_string();
        assert!(
            error.starts_with(
                "DNS pod coredns-5c54f84c97-q9m4d on node1: deleted; no replacement appeared"
            ),
            "{error}"
        );
        // The Ready replica, maybe the only one now, is named apart, not with a delete.
        assert!(
            error.contains(
                "; the node's Ready CoreDNS replica kube-system/coredns-5c54f84c97-7xk2p left \
                 as it is: recreate each only once another replica is Ready, one at a time"
            ),
            "{error}"
        );
        assert!(
            error.ends_with(
                "recreate them by hand (kubectl -n kube-system delete pod nodelocaldns-2v8kd)"
            ),
            "{error}"
        );
    }

    /// What a namespace left out on a node left there: a pod being deleted (Terminating)
    /// is none; a delete to run by hand is written only for a name the API allows (another
    /// is named escaped, apart); and where the cluster DNS Service moved, its pods there
    /// serve no cluster DNS: make a new plan, no delete. Before, the Terminating pod failed
    /// the host, the odd name went into a command, and the moved case advised the delete.
    #[tokio::test]
    async fn what_a_left_out_namespace_left_on_the_node() {
        let fixture: Value = serde_json::from_slice(include_bytes!(
            "../../tests/fixtures/kubectl/helm-coredns-ns-pods.json"
        ))
        .expect("fixture");
        let coredns = fixture["items"][0].clone();
        let mut going = coredns.clone();
        going["metadata"]["deletionTimestamp"] = "2026-11-20T08:20:00Z".into();
        let mut odd = coredns.clone();
        odd["metadata"]["name"] = "dns;reboot".into();
        let plan = [("coredns".to_owned(), Some(HELM_NS_SELECTOR.to_owned()))];
        let unlisted = Unconfirmed::Unlisted("the Services could not be listed".to_owned());
        let moved =
            Unconfirmed::Moved("the cluster DNS Service is kube-system/kube-dns".to_owned());
        let names = ["node1".to_owned()];
        let left = |pods: Vec<Value>, why: Unconfirmed| {
            let list = serde_json::json!({"kind": "List", "items": pods});
            let plan = plan.clone();
            let names = names.clone();
            async move {
                let (mut kubectl, dir) = helm_ns_lab(&serde_json::to_vec(&list).expect("json"));
                let left = left_unconfirmed(&mut kubectl, &plan, &names, &why).await;
                kubectl.close().await;
                std::fs::remove_dir_all(&dir).ok();
                left
            }
        };
        let note = left(vec![going], unlisted.clone()).await.expect("a note");
        assert!(
            note.ends_with(
                "none of its pods is on this node, so none was left with the old upstream"
            ),
            "{note}"
        );
        let error = left(vec![coredns.clone(), odd], unlisted)
            .await
            .expect_err("left");
        assert!(
            error.ends_with(
                "recreate them by hand (kubectl -n coredns delete pod \
                 dns-coredns-6d4f8b7c9b-2xkqp); the cluster also listed pods by names no pod \
                 can have, not deleted: \"dns;reboot\" in \"coredns\""
            ),
            "{error}"
        );
        let error = left(vec![coredns], moved).await.expect_err("left");
        assert!(
            error.ends_with(
                "and the cluster DNS Service is no longer there: the plan is stale, make a new \
                 plan (its pods on this node: coredns/dns-coredns-6d4f8b7c9b-2xkqp)"
            ),
            "{error}"
        );
        assert!(!error.contains("delete pod"), "{error}");
    }

    /// Right after its kubelet restarted, a node's serving CoreDNS replica reads not Ready
    /// until the new kubelet's first readiness probe (kubernetes@00421113
    /// pkg/kubelet/prober/worker.go: the worker starts at Failure and sleeps a random part
    /// of periodSeconds first), while the Deployment's other replica loops on node2. Its
    /// namespace is listed again until the probe ran: then it reads Ready, comes last, and
    /// is kept as the last Ready replica. Before, it was taken for not Ready, recreated
    /// first, and the cluster was left with no Ready CoreDNS.
    #[tokio::test]
    async fn a_replica_not_yet_probed_after_the_kubelet_restart_is_waited_for() {
        let fixture: &[u8] = include_bytes!("../../tests/fixtures/kubectl/dns-pods.json");
        let mut list: Value = serde_json::from_slice(fixture).expect("fixture");
        list["items"] = Value::Array(list["items"].as_array().expect("items")[..2].to_vec());
        // As the API server returns Kubespray's probe (coredns-deployment.yml.j2), with a
        // short period for the test.
        list["items"][0]["spec"]["containers"][0]["readinessProbe"] = serde_json::json!({
            "failureThreshold": 10, "httpGet": {"path": "/ready", "port": 8181, "scheme": "HTTP"},
            "periodSeconds": 1, "successThreshold": 1, "timeoutSeconds": 1
        });
        let probed = list["items"][0].clone();
        list["items"][0]["status"]["containerStatuses"][0]["ready"] = false.into();
        let (mut kubectl, dir) = lab_kubectl(
            &serde_json::to_vec(&list).expect("json"),
            br#"{"kind":"List","items":[]}"#,
        );
        // The kubelet's first probe, a second and a half after the listing.
        let file = dir.join("pods/0.json");
        let kubelet = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1500));
            if file.exists() {
                let json = serde_json::to_vec(&probed).expect("json");
                std::fs::write(&file, json).expect("probed");
            }
        });
        let pods = kubectl.first_listing(Listing::Pods).await.expect("listed");
        assert!(!pods[0].ready, "{:?}", pods[0]);
        assert_eq!(pods[0].readiness, Some(Duration::from_secs(2)));
        let done = recreate_on_node1(&mut kubectl, pods, 2)
            .await
            .expect("recreated");
        kubectl.close().await;
        kubelet.join().expect("kubelet");
        let left = dir.join("pods/0.json").exists();
        std::fs::remove_dir_all(&dir).ok();
        let done: Vec<(&str, bool, bool)> = done
            .iter()
            .map(|p| (p.pod.as_str(), p.ok, p.kept))
            .collect();
        assert_eq!(done, [("coredns-5c54f84c97-7xk2p", false, true)]);
        assert!(left, "the serving replica was deleted");
    }

    /// The kubelet may post the serving replica not Ready only after the first listing of
    /// the step (a moment after its restart, until its first probe): listed Ready first,
    /// the same container running since, it counts as Ready when it is weighed, so it is
    /// kept as the last Ready replica. Before, it was deleted while the other replica
    /// looped.
    #[tokio::test]
    async fn a_replica_posted_not_ready_after_the_first_listing_is_still_kept() {
        let fixture: &[u8] = include_bytes!("../../tests/fixtures/kubectl/dns-pods.json");
        let mut list: Value = serde_json::from_slice(fixture).expect("fixture");
        list["items"] = Value::Array(list["items"].as_array().expect("items")[..2].to_vec());
        list["items"][0]["spec"]["containers"][0]["readinessProbe"] = serde_json::json!({
            "failureThreshold": 10, "httpGet": {"path": "/ready", "port": 8181, "scheme": "HTTP"},
            "periodSeconds": 10, "successThreshold": 1, "timeoutSeconds": 1
        });
        let (mut kubectl, dir) = lab_kubectl(
            &serde_json::to_vec(&list).expect("json"),
            br#"{"kind":"List","items":[]}"#,
        );
        let pods = kubectl.first_listing(Listing::Pods).await.expect("listed");
        assert!(pods[0].ready, "{:?}", pods[0]);
        // The kubelet's post, between the first listing and the one before the delete.
        let mut posted = list["items"][0].clone();
        posted["status"]["containerStatuses"][0]["ready"] = false.into();
        std::fs::write(
            dir.join("pods/0.json"),
            serde_json::to_vec(&posted).expect("json"),
        )
        .expect("posted");
        let done = recreate_on_node1(&mut kubectl, pods, 2)
            .await
            .expect("recreated");
        kubectl.close().await;
        let left = dir.join("pods/0.json").exists();
        std::fs::remove_dir_all(&dir).ok();
        let done: Vec<(&str, bool, bool)> = done
            .iter()
            .map(|p| (p.pod.as_str(), p.ok, p.kept))
            .collect();
        assert_eq!(done, [("coredns-5c54f84c97-7xk2p", false, true)]);
        assert!(left, "the serving replica was deleted");
    }

    /// What is waited for after the kubelet restart: a CoreDNS pod running, not waiting,
    /// with a readiness probe, not Ready, unless the plan saw it not Ready with as many
    /// restarts (it was not Ready before the restart either); nodelocaldns never.
    #[test]
    fn only_pods_that_may_be_unprobed_are_waited_for() {
        let mut serving = pod("coredns-a", "coredns", "node1");
        serving.ready = false;
        serving.readiness = Some(Duration::from_secs(15));
        assert!(unprobed(&serving, &[]));
        let before = |restarts| [("kube-system".to_owned(), "coredns-a".to_owned(), restarts)];
        assert!(!unprobed(&serving, &before(0)));
        // Restarted since the plan: another container, maybe serving.
        assert!(unprobed(&serving, &before(3)));
        let mut looping = serving.clone();
        looping.running = false;
        looping.waiting = Some("CrashLoopBackOff".to_owned());
        assert!(!unprobed(&looping, &[]));
        let mut unprobed_less = serving.clone();
        unprobed_less.readiness = None;
        assert!(!unprobed(&unprobed_less, &[]));
        let mut cache = serving.clone();
        cache.app = "nodelocaldns".to_owned();
        assert!(!unprobed(&cache, &[]));
        let mut going = serving.clone();
        going.terminating = true;
        assert!(!unprobed(&going, &[]));
        // The plan's states, as DnsPod::state writes them.
        assert_eq!(not_ready_restarts("ready"), None);
        assert_eq!(
            not_ready_restarts("CrashLoopBackOff, 7 restarts, loop detected"),
            Some(7)
        );
        assert_eq!(not_ready_restarts("Running, not ready"), Some(0));
    }

    /// A node holding a Ready CoreDNS pod and a looping one of the same Deployment, no other
    /// replica Ready (dns-pods.json, node2's crash-looping replica put on node1): the
    /// looping one is recreated first, its replacement Ready on the fixed node, and the
    /// Ready one is then weighed beside that replacement and recreated in the same run.
    /// Before, the Ready one came first by name, was kept as the last Ready replica, and a
    /// second run was needed.
    #[tokio::test]
    async fn a_looping_replica_is_recreated_before_the_ready_one_beside_it() {
        let fixture: &[u8] = include_bytes!("../../tests/fixtures/kubectl/dns-pods.json");
        let mut list: Value = serde_json::from_slice(fixture).expect("fixture");
        list["items"][1]["spec"]["nodeName"] = "node1".into();
        let ready = list["items"][0].clone();
        list["items"] = Value::Array(list["items"].as_array().expect("items")[..2].to_vec());
        let (mut kubectl, dir) = lab_kubectl(
            &serde_json::to_vec(&list).expect("json"),
            br#"{"kind":"List","items":[]}"#,
        );
        // The Deployment: each deleted replica replaced by a Ready one on node1.
        let controller = deployment(
            dir.join("pods"),
            vec![
                (1, "coredns-5c54f84c97-b2n6r", ready.clone()),
                (0, "coredns-5c54f84c97-c8j3w", ready.clone()),
            ],
            400,
        );
        let pods = kubectl.first_listing(Listing::Pods).await.expect("listed");
        let done = recreate_on_node1(&mut kubectl, pods, 10)
            .await
            .expect("recreated");
        kubectl.close().await;
        if !dir.join("pods/0.json").exists() {
            assert_eq!(controller.join().expect("controller"), [1, 0]);
        }
        std::fs::remove_dir_all(&dir).ok();
        let done: Vec<(&str, bool, bool)> = done
            .iter()
            .map(|p| (p.pod.as_str(), p.ok, p.kept))
            .collect();
        assert_eq!(
            done,
            [
                ("coredns-5c54f84c97-q9m4d", true, false),
                ("coredns-5c54f84c97-7xk2p", true, false)
            ]
        );
    }

    /// [`recreate_node_pods`] of node1's pods as the step listed them (`pods`), with no
    /// namespace outside kube-system, no kubelet restart known and none seen not Ready by
    /// the plan.
    async fn recreate_on_node1(
        kubectl: &mut Kubectl,
        pods: Vec<DnsPod>,
        timeout_secs: u64,
    ) -> Result<Vec<PodRecreation>, PodsFailed> {
        recreate_on(kubectl, pods, "node1", &Restarted::default(), timeout_secs).await
    }

    /// [`recreate_node_pods`] of `node`'s pods as the step listed them (`pods`), with no
    /// namespace outside kube-system, the kubelets `restarted` noted.
    async fn recreate_on(
        kubectl: &mut Kubectl,
        pods: Vec<DnsPod>,
        node: &str,
        restarted: &Restarted,
        timeout_secs: u64,
    ) -> Result<Vec<PodRecreation>, PodsFailed> {
        recreate_node_pods(
            kubectl,
            restarted,
            pods,
            &[],
            &[node.to_owned()],
            Duration::from_secs(timeout_secs),
        )
        .await
    }

    /// Two CoreDNS replicas of one Deployment, node1's (dns-pods.json's first) and node2's
    /// (the same pod spec on node2), both running and Ready, with Kubespray's readiness
    /// probe as the API server returns it (kubespray@46dbdd39
    /// roles/kubernetes-apps/ansible/templates/coredns-deployment.yml.j2) but a 1 s period
    /// for the tests: each may read not Ready for 2 s after its kubelet's restart, waited
    /// for up to 7 s.
    /// A Deployment's controller, standing in: each pod of `replicas` (its index in the
    /// stand-in kubectl's `pods_dir`, its replacement's name, the pod to make it of) that
    /// is deleted is replaced by that pod under the new name, looked for every 50 ms,
    /// `rounds` times at most; the indexes replaced.
    fn deployment(
        pods_dir: std::path::PathBuf,
        replicas: Vec<(usize, &'static str, Value)>,
        rounds: usize,
    ) -> std::thread::JoinHandle<Vec<usize>> {
        std::thread::spawn(move || {
            let mut replaced = Vec::new();
            for _ in 0..rounds {
                for (index, name, pod) in &replicas {
                    if !pods_dir.join(format!("{index}.json")).exists() && !replaced.contains(index)
                    {
                        let mut pod = pod.clone();
                        pod["metadata"]["name"] = (*name).into();
                        let json = serde_json::to_vec(&pod).expect("json");
                        // Gone where the test ended first: the assertion speaks.
                        std::fs::write(pods_dir.join(format!("new-{index}.json")), json).ok();
                        replaced.push(*index);
                    }
                }
                if replaced.len() == replicas.len() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            replaced
        })
    }

    fn two_replicas() -> Value {
        let fixture: &[u8] = include_bytes!("../../tests/fixtures/kubectl/dns-pods.json");
        let mut list: Value = serde_json::from_slice(fixture).expect("fixture");
        let mut a = list["items"][0].clone();
        a["spec"]["containers"][0]["readinessProbe"] = serde_json::json!({
            "failureThreshold": 10, "httpGet": {"path": "/ready", "port": 8181, "scheme": "HTTP"},
            "periodSeconds": 1, "successThreshold": 1, "timeoutSeconds": 1
        });
        let mut b = a.clone();
        b["metadata"]["name"] = "coredns-5c54f84c97-q9m4d".into();
        b["metadata"]["uid"] = "0b7c6f2e-3a41-4c55-9a0e-6d1f1c2b9a02".into();
        b["spec"]["nodeName"] = "node2".into();
        b["status"]["podIP"] = "10.233.65.2".into();
        list["items"] = serde_json::json!([a, b]);
        list
    }

    /// `pod` as its restarted kubelet posts it until its first probe: running, not ready.
    fn unprobed_pod(pod: &Value) -> Value {
        let mut posted = pod.clone();
        posted["status"]["containerStatuses"][0]["ready"] = false.into();
        posted["status"]["conditions"] = serde_json::json!([
            {"type": "Ready", "status": "False"},
            {"type": "ContainersReady", "status": "False"}
        ]);
        posted
    }

    /// Each step as (pod, ok, kept).
    fn steps(done: &[PodRecreation]) -> Vec<(&str, bool, bool)> {
        done.iter()
            .map(|p| (p.pod.as_str(), p.ok, p.kept))
            .collect()
    }

    /// With `--serial 2` node1 and node2 restart their kubelets together, and each one's
    /// CoreDNS replica reads not Ready until its kubelet's first probe (kubernetes@00421113
    /// pkg/kubelet/prober/worker.go), node2's a moment after node1's. node1's replica,
    /// weighed while node2's still reads not Ready, waits for node2's probe, trusted once
    /// listed past node2's bound (7 s), and is recreated; then node2's, beside node1's
    /// Ready replacement, is too: none kept, one
    /// node at a time, as apply's lock has them. Before, node1's was kept as the last Ready
    /// one (exit 3) while node2's served, and the plan had to be run again.
    #[tokio::test]
    async fn a_replica_of_a_node_of_the_batch_not_yet_probed_is_waited_for() {
        let list = two_replicas();
        let (a, b) = (list["items"][0].clone(), list["items"][1].clone());
        let mut posted = list.clone();
        posted["items"] = serde_json::json!([unprobed_pod(&a), unprobed_pod(&b)]);
        let (mut kubectl, dir) = lab_kubectl(
            &serde_json::to_vec(&posted).expect("json"),
            br#"{"kind":"List","items":[]}"#,
        );
        let restarted = Restarted::default();
        let now = Instant::now();
        restarted.ended(&["node1".to_owned()], Some(now));
        restarted.ended(&["node2".to_owned()], Some(now));
        let pods = kubectl.first_listing(Listing::Pods).await.expect("listed");
        assert!(pods.iter().all(|p| !p.ready), "{pods:?}");
        let pods_dir = dir.join("pods");
        // The kubelets' first probes: node1's 0.3 s after the step's first listing,
        // node2's 3.5 s after it, once node1's replica is weighed.
        let probes = {
            let (pods_dir, a, b) = (pods_dir.clone(), a.clone(), b.clone());
            std::thread::spawn(move || {
                for (wait, index, pod) in [(300, 0, a), (3200, 1, b)] {
                    std::thread::sleep(Duration::from_millis(wait));
                    let file = pods_dir.join(format!("{index}.json"));
                    if file.exists() {
                        std::fs::write(&file, serde_json::to_vec(&pod).expect("json"))
                            .expect("probed");
                    }
                }
            })
        };
        // The Deployment: each deleted replica replaced by a Ready one on its node.
        let controller = deployment(
            pods_dir,
            vec![
                (0, "coredns-5c54f84c97-c8j3w", a),
                (1, "coredns-5c54f84c97-d4k7m", b),
            ],
            600,
        );
        let node1 = recreate_on(&mut kubectl, pods, "node1", &restarted, 10).await;
        let pods = kubectl.first_listing(Listing::Pods).await.expect("listed");
        let node2 = recreate_on(&mut kubectl, pods, "node2", &restarted, 10).await;
        kubectl.close().await;
        probes.join().expect("kubelets");
        let replaced = if dir.join("pods/1.json").exists() {
            Vec::new()
        } else {
            controller.join().expect("controller")
        };
        std::fs::remove_dir_all(&dir).ok();
        let node1 = node1.expect("node1 recreated");
        let node2 = node2.expect("node2 recreated");
        assert_eq!(steps(&node1), [("coredns-5c54f84c97-7xk2p", true, false)]);
        assert_eq!(steps(&node2), [("coredns-5c54f84c97-q9m4d", true, false)]);
        assert_eq!(replaced, [0, 1]);
    }

    /// The other node of the batch restarted its kubelet, and its replica still reads not
    /// Ready past its probe's bound from that restart (periodSeconds + timeoutSeconds + 5 s):
    /// it failed the probe the kubelet ran, and node1's Ready replica is kept as the last
    /// Ready one, as before, once that bound passed, not before.
    #[tokio::test]
    async fn a_replica_of_the_batch_still_not_ready_past_its_bound_keeps_the_last_ready_one() {
        let list = two_replicas();
        let mut posted = list.clone();
        posted["items"][1] = unprobed_pod(&list["items"][1]);
        let (mut kubectl, dir) = lab_kubectl(
            &serde_json::to_vec(&posted).expect("json"),
            br#"{"kind":"List","items":[]}"#,
        );
        let restarted = Restarted::default();
        // node2's kubelet restarted 4 s ago: its replica is waited for 3 s more.
        let started = Instant::now();
        let at = started
            .checked_sub(Duration::from_secs(4))
            .expect("instant");
        restarted.ended(&["node2".to_owned()], Some(at));
        let pods = kubectl.first_listing(Listing::Pods).await.expect("listed");
        let done = recreate_on(&mut kubectl, pods, "node1", &restarted, 10).await;
        let waited = started.elapsed();
        kubectl.close().await;
        let left = dir.join("pods/0.json").exists();
        std::fs::remove_dir_all(&dir).ok();
        let done = done.expect("weighed");
        assert_eq!(steps(&done), [("coredns-5c54f84c97-7xk2p", false, true)]);
        assert!(left, "the last Ready one deleted");
        assert!(
            done[0]
                .message
                .contains("(coredns-5c54f84c97-q9m4d on node2: Running, not ready)"),
            "{}",
            done[0].message
        );
        assert!(
            waited >= Duration::from_millis(2500) && waited < Duration::from_secs(6),
            "waited {waited:?}"
        );
    }

    /// node1's Ready replica weighed while node2's reads Ready in a listing asked just
    /// before node2's probe bound that comes back after it (a slow API server: here each
    /// listing takes 2 s, the bound 1 s into the wait): the next listing, past the bound,
    /// trusts node2's, and node1's is deleted. Before, the bound had passed when that
    /// listing came back, and node1's was kept as the last Ready one undecided (exit 3; on
    /// a loaded machine, a test of the batch failed so).
    #[tokio::test]
    async fn a_listing_that_comes_back_past_the_bound_is_followed_by_one_past_it() {
        let list = two_replicas();
        let (mut kubectl, dir) = lab_kubectl(
            &serde_json::to_vec(&list).expect("json"),
            br#"{"kind":"List","items":[]}"#,
        );
        let pods = kubectl.first_listing(Listing::Pods).await.expect("listed");
        kubectl.prologue = format!("sleep 2\n{}", kubectl.prologue);
        let restarted = Restarted::default();
        let bound = settle_bound(&pods[1]);
        let at = Instant::now()
            .checked_sub(bound - Duration::from_secs(1))
            .expect("instant");
        restarted.ended(&["node2".to_owned()], Some(at));
        let (_, kept) = weigh(&mut kubectl, &pods[0], &pods, &restarted)
            .await
            .expect("weighed");
        kubectl.close().await;
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(kept, None);
    }

    /// node1's Ready replica weighed while node2's, broken, is posted Ready for a moment
    /// by node2's restarted kubelet before its probe worker's first run (no worker counts as
    /// Ready: kubernetes#131303, #133770, #135795): Ready as listed 1.5 s into the step,
    /// not Ready again at 4 s. Whether node2's apply script still runs or returned just
    /// now, that reading is not trusted before node2's probe bound (here 7 s): node1's is
    /// kept as the last Ready one. Before, the listing at 1.5 s deleted it.
    #[tokio::test]
    async fn a_replica_posted_ready_before_its_first_probe_does_not_count() {
        async fn flicker(restarted: Restarted) -> (Vec<PodRecreation>, bool) {
            let list = two_replicas();
            let (ready, broken) = (list["items"][1].clone(), unprobed_pod(&list["items"][1]));
            let mut posted = list.clone();
            posted["items"][1] = broken.clone();
            let (mut kubectl, dir) = lab_kubectl(
                &serde_json::to_vec(&posted).expect("json"),
                br#"{"kind":"List","items":[]}"#,
            );
            let file = dir.join("pods/1.json");
            let kubelet = std::thread::spawn(move || {
                for (wait, pod) in [(1500, ready), (2500, broken)] {
                    std::thread::sleep(Duration::from_millis(wait));
                    std::fs::write(&file, serde_json::to_vec(&pod).expect("json")).ok();
                }
            });
            let pods = kubectl.first_listing(Listing::Pods).await.expect("listed");
            let done = recreate_on(&mut kubectl, pods, "node1", &restarted, 3).await;
            kubectl.close().await;
            kubelet.join().expect("kubelet");
            let left = dir.join("pods/0.json").exists();
            std::fs::remove_dir_all(&dir).ok();
            (done.expect("weighed"), left)
        }
        let node2 = ["node2".to_owned()];
        let restarting = Restarted::default();
        restarting.restarting(&node2);
        let returned = Restarted::default();
        returned.ended(&node2, Some(Instant::now()));
        let (restarting, returned) = tokio::join!(flicker(restarting), flicker(returned));
        for (case, (done, left)) in [("restarting", restarting), ("returned", returned)] {
            assert_eq!(
                steps(&done),
                [("coredns-5c54f84c97-7xk2p", false, true)],
                "{case}"
            );
            assert!(left, "{case}: the last serving replica deleted");
        }
    }

    /// Both replicas on node1, whose kubelet this run just restarted: the serving one, and
    /// a broken one the restarted kubelet posts Ready before its first probe (no worker
    /// counts as Ready: kubernetes#131303) in the step's first listing, then not Ready at
    /// 1.5 s. Neither that listing nor any before the probe's bound (here 7 s) speaks for
    /// either: the serving one is kept as the last Ready one. Before, the first listing
    /// counted the broken one Ready and the serving one was deleted at once.
    #[tokio::test]
    async fn a_replica_of_this_node_posted_ready_before_its_first_probe_does_not_count() {
        let mut list = two_replicas();
        list["items"][1]["spec"]["nodeName"] = "node1".into();
        let broken = unprobed_pod(&list["items"][1]);
        let (mut kubectl, dir) = lab_kubectl(
            &serde_json::to_vec(&list).expect("json"),
            br#"{"kind":"List","items":[]}"#,
        );
        let file = dir.join("pods/1.json");
        let restarted = Restarted::default();
        restarted.ended(&["node1".to_owned()], Some(Instant::now()));
        let pods = kubectl.first_listing(Listing::Pods).await.expect("listed");
        // Posted not Ready 1.5 s after the first listing, however long that took.
        let kubelet = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1500));
            std::fs::write(&file, serde_json::to_vec(&broken).expect("json")).ok();
        });
        let done = recreate_on(&mut kubectl, pods, "node1", &restarted, 3).await;
        kubectl.close().await;
        kubelet.join().expect("kubelet");
        let left = dir.join("pods/0.json").exists();
        std::fs::remove_dir_all(&dir).ok();
        let done = match done {
            Ok(done) => done,
            Err(failed) => failed.done,
        };
        assert!(
            steps(&done).contains(&("coredns-5c54f84c97-7xk2p", false, true)),
            "{done:#?}"
        );
        assert!(left, "the serving replica deleted: {done:#?}");
    }

    /// Where no reading could change the verdict, nothing is waited for: the only replica
    /// (deleted whatever it reads), or one whose other replica, on a node this run did not
    /// restart, reads Ready. Each on node1, whose kubelet just restarted.
    #[tokio::test]
    async fn a_verdict_no_reading_can_change_waits_for_nothing() {
        for alone in [true, false] {
            let mut list = two_replicas();
            if alone {
                list["items"] = serde_json::json!([list["items"][0].clone()]);
            }
            let (mut kubectl, dir) = lab_kubectl(
                &serde_json::to_vec(&list).expect("json"),
                br#"{"kind":"List","items":[]}"#,
            );
            let restarted = Restarted::default();
            restarted.ended(&["node1".to_owned()], Some(Instant::now()));
            let pods = kubectl.first_listing(Listing::Pods).await.expect("listed");
            let started = Instant::now();
            let (_, kept) = weigh(&mut kubectl, &pods[0], &pods, &restarted)
                .await
                .expect("weighed");
            let took = started.elapsed();
            kubectl.close().await;
            std::fs::remove_dir_all(&dir).ok();
            assert_eq!(kept, None, "alone: {alone}");
            // The probe's bound here is 7 s.
            assert!(took < Duration::from_secs(4), "alone: {alone}: {took:?}");
        }
    }

    /// node2's apply script never noted its end (its task died): its unprobed replica is
    /// waited for one probe bound (here 7 s) from the start of node1's wait, then node1's
    /// is kept. Before, the bound slid with the clock and node1 waited for ever, holding
    /// the one-node-at-a-time lock.
    #[tokio::test]
    async fn a_node_whose_script_never_ends_is_waited_for_one_bound() {
        let list = two_replicas();
        let mut posted = list.clone();
        posted["items"][1] = unprobed_pod(&list["items"][1]);
        let (mut kubectl, dir) = lab_kubectl(
            &serde_json::to_vec(&posted).expect("json"),
            br#"{"kind":"List","items":[]}"#,
        );
        let restarted = Restarted::default();
        restarted.restarting(&["node2".to_owned()]);
        let started = Instant::now();
        let pods = kubectl.first_listing(Listing::Pods).await.expect("listed");
        let weighed = tokio::time::timeout(
            Duration::from_secs(25),
            recreate_on(&mut kubectl, pods, "node1", &restarted, 3),
        )
        .await;
        let waited = started.elapsed();
        kubectl.close().await;
        std::fs::remove_dir_all(&dir).ok();
        let done = weighed.expect("waited for ever").expect("weighed");
        assert_eq!(steps(&done), [("coredns-5c54f84c97-7xk2p", false, true)]);
        assert!(
            waited >= Duration::from_secs(6) && waited < Duration::from_secs(20),
            "waited {waited:?}"
        );
    }

    /// The node's own replica that still reads not Ready after its kubelet's restart is
    /// waited for up to its probe's bound counted from that restart, not from the step's
    /// first listing: a node that waited its turn behind the other nodes of its batch does
    /// not wait the whole bound again (Kubespray's probe: 20 s). But it waits SETTLE_MARGIN
    /// past the step's start all the same: the restart's time is when healthz answered,
    /// which may be before the kubelet started its probe workers. Before, the pod was
    /// not waited for at all once the bound from the restart had passed.
    #[tokio::test]
    async fn the_wait_for_a_probe_is_counted_from_the_kubelet_restart() {
        let list = two_replicas();
        let mut posted = list.clone();
        posted["items"][0] = unprobed_pod(&list["items"][0]);
        // Kubespray's probe (kubespray@46dbdd39
        // roles/kubernetes-apps/ansible/templates/coredns-deployment.yml.j2): 10 s, 5 s.
        let probe = &mut posted["items"][0]["spec"]["containers"][0]["readinessProbe"];
        probe["periodSeconds"] = 10.into();
        probe["timeoutSeconds"] = 5.into();
        let (mut kubectl, dir) = lab_kubectl(
            &serde_json::to_vec(&posted).expect("json"),
            br#"{"kind":"List","items":[]}"#,
        );
        let restarted = Restarted::default();
        let started = Instant::now();
        let at = started
            .checked_sub(Duration::from_secs(30))
            .expect("instant");
        restarted.ended(&["node1".to_owned()], Some(at));
        let pods = kubectl.first_listing(Listing::Pods).await.expect("listed");
        let settled = settle(&mut kubectl, pods, &["node1".to_owned()], &restarted).await;
        let waited = started.elapsed();
        kubectl.close().await;
        std::fs::remove_dir_all(&dir).ok();
        assert!(!settled[0].ready, "{:?}", settled[0]);
        assert!(
            waited >= Duration::from_millis(4500) && waited < Duration::from_secs(15),
            "waited {waited:?}"
        );
    }

    /// A node is a restarted one from the start of its apply script, waited for from now
    /// while the script runs, and from the script's end once it returned; forgotten where it
    /// restarted nothing; another node is none.
    #[test]
    fn a_kubelet_restart_counts_from_the_end_of_the_apply_script() {
        let restarted = Restarted::default();
        let names = ["node2".to_owned(), "node2.lab".to_owned()];
        let mut replica = pod("coredns-b", "coredns", "node2");
        replica.readiness = Some(Duration::from_secs(15));
        let now = Instant::now();
        assert_eq!(restarted.deadline(&replica, now), None);
        restarted.restarting(&names);
        assert_eq!(restarted.when("node2.lab"), Some(None));
        assert_eq!(
            restarted.deadline(&replica, now),
            Some(now + Duration::from_secs(20))
        );
        let at = now + Duration::from_secs(1);
        restarted.ended(&names, Some(at));
        assert_eq!(
            restarted.deadline(&replica, now),
            Some(at + Duration::from_secs(20))
        );
        replica.node = "node3".into();
        assert_eq!(restarted.deadline(&replica, now), None);
        restarted.ended(&names, None);
        assert_eq!(restarted.when("node2"), None);
    }

    /// The last Ready CoreDNS replica is not deleted while the others are not Ready
    /// (dns-pods.json: node1's Ready, node2's crash-looping): deleting it would leave the
    /// cluster no Ready CoreDNS, and its replacement may land on a node a later batch fixes.
    /// The step is not done, and says which replicas are not Ready. Before, node1's pod
    /// was deleted and, its replacement crash-looping on another node, counted as done.
    /// A one-replica CoreDNS (k3s's) is deleted as before: there is no other way to give it
    /// the new file.
    #[tokio::test]
    async fn the_last_ready_coredns_replica_is_not_deleted() {
        let empty = br#"{"kind":"List","items":[]}"#;
        let (mut kubectl, dir) = lab_kubectl(
            include_bytes!("../../tests/fixtures/kubectl/dns-pods.json"),
            empty,
        );
        // The node's nodelocaldns pod is its own: recreated all the same.
        let list: Value =
            serde_json::from_slice(include_bytes!("../../tests/fixtures/kubectl/dns-pods.json"))
                .expect("fixture");
        let mut cache = list["items"][2].clone();
        cache["metadata"]["name"] = "nodelocaldns-k4m8p".into();
        let daemonset = replace_when_deleted(&dir, 2, cache);
        let pods = kubectl.first_listing(Listing::Pods).await.expect("listed");
        let done = recreate_on_node1(&mut kubectl, pods, 10)
            .await
            .expect("listed");
        kubectl.close().await;
        assert!(
            dir.join("pods/0.json").exists(),
            "the last Ready one deleted"
        );
        assert!(
            daemonset.join().expect("daemonset"),
            "nodelocaldns not deleted"
        );
        let done: Vec<(&str, bool, bool)> = done
            .iter()
            .map(|p| (p.pod.as_str(), p.ok, p.kept))
            .collect();
        assert_eq!(
            done,
            [
                ("nodelocaldns-2v8kd", true, false),
                ("coredns-5c54f84c97-7xk2p", false, true)
            ]
        );
        std::fs::remove_dir_all(&dir).ok();
        let (mut kubectl, dir) = lab_kubectl(
            include_bytes!("../../tests/fixtures/kubectl/dns-pods.json"),
            empty,
        );
        let pods = kubectl.first_listing(Listing::Pods).await.expect("listed");
        let step = recreate(
            &mut kubectl,
            &pods[0],
            &[],
            &Restarted::default(),
            Duration::from_secs(2),
        )
        .await
        .expect("listed");
        assert_eq!(
            step.message,
            "not deleted: it is the only Ready coredns replica, the others are not Ready \
             (coredns-5c54f84c97-q9m4d on node2: CrashLoopBackOff, 7 restarts), and deleting it would \
             leave the cluster without a Ready one; run the plan again once another is Ready"
        );
        kubectl.close().await;
        std::fs::remove_dir_all(&dir).ok();

        let k3s: &[u8] = include_bytes!("../../tests/fixtures/kubectl/k3s-coredns-pods.json");
        let (mut kubectl, dir) = lab_kubectl(k3s, empty);
        let list: Value = serde_json::from_slice(k3s).expect("fixture");
        let mut replacement = list["items"][0].clone();
        replacement["metadata"]["name"] = "coredns-ccb96694c-t4v8n".into();
        let controller = replace_once_deleted(&dir, replacement);
        let pods = kubectl.first_listing(Listing::Pods).await.expect("listed");
        let done = recreate_on_node1(&mut kubectl, pods, 10)
            .await
            .expect("recreated");
        kubectl.close().await;
        assert!(controller.join().expect("controller"), "not deleted");
        assert!(done.iter().all(|p| p.ok), "{done:?}");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A delete refused midway (a Role in `coredns` that grants get and list, not delete)
    /// keeps the steps done before it: the node's nodelocaldns pod, already replaced, is
    /// in the report, and the error names the pods left to recreate by hand. Before, the
    /// error alone came back and the replaced nodelocaldns pod was missing from the report.
    #[tokio::test]
    async fn a_delete_refused_midway_keeps_the_steps_done() {
        let fixture: Value = serde_json::from_slice(include_bytes!(
            "../../tests/fixtures/kubectl/helm-coredns-ns-pods.json"
        ))
        .expect("fixture");
        let coredns = fixture["items"][0].clone();
        let mut cache = coredns.clone();
        cache["metadata"]["name"] = "nodelocaldns-9wqzb".into();
        cache["metadata"]["namespace"] = "kube-system".into();
        cache["metadata"]["labels"] = serde_json::json!({"k8s-app": "node-local-dns"});
        cache["spec"]["containers"][0]["name"] = "node-cache".into();
        let list = serde_json::json!({"kind": "List", "items": [cache.clone(), coredns]});
        let (mut kubectl, dir) = helm_ns_lab(&serde_json::to_vec(&list).expect("json"));
        std::fs::write(dir.join("delete-forbidden"), "coredns\n").expect("write");
        // The DaemonSet's controller: a Ready nodelocaldns pod on the node once it is gone.
        cache["metadata"]["name"] = "nodelocaldns-x7k2m".into();
        let controller = replace_once_deleted(&dir, cache);
        let home = kubectl
            .first_listing(Listing::WithServices)
            .await
            .expect("listed");
        let elsewhere = [("coredns".to_owned(), Some(HELM_NS_SELECTOR.to_owned()))];
        let failed = recreate_node_pods(
            &mut kubectl,
            &Restarted::default(),
            home,
            &elsewhere,
            &["node1".to_owned()],
            Duration::from_secs(10),
        )
        .await
        .expect_err("refused");
        assert!(controller.join().expect("controller"), "not deleted");
        let done: Vec<(&str, bool)> = failed.done.iter().map(|p| (p.pod.as_str(), p.ok)).collect();
        assert_eq!(done, [("nodelocaldns-9wqzb", true)], "{failed:?}");
        let error = failed.to_string();
        assert!(
            error.starts_with(
                "delete pod coredns/dns-coredns-6d4f8b7c9b-2xkqp: Error from server (Forbidden): pods \"dns-coredns-6d4f8b7c9b-2xkqp\" is forbidden"
            ),
            "{error}"
        );
        assert!(
            error.ends_with(
                "; the node's kubelet was restarted with the new files, and these pods still run with the old ones: recreate them by hand (kubectl -n coredns delete pod dns-coredns-6d4f8b7c9b-2xkqp)"
            ),
            "{error}"
        );
        kubectl.close().await;
        std::fs::remove_dir_all(&dir).ok();
    }

    /// The commands to recreate by hand are for pasting: a pod name the cluster returned
    /// that no pod can have (an escape sequence, a `;` and a command) is named escaped and
    /// apart, not written into a `kubectl delete`. Before, the command carried it as it was.
    #[test]
    fn pods_left_with_names_no_pod_can_have_are_not_put_in_a_command() {
        let failed = PodsFailed {
            done: Vec::new(),
            error: "delete pod kube-system/nodelocaldns-a: timed out".into(),
            left: vec![
                ("kube-system".into(), "nodelocaldns-a".into()),
                (
                    "kube-system".into(),
                    "nodelocaldns-x\u{1b}[2J;touch /tmp/PWN".into(),
                ),
            ],
        };
        let error = failed.to_string();
        assert!(
            error.contains(
                "recreate them by hand (kubectl -n kube-system delete pod nodelocaldns-a); the cluster also listed pods by names no pod can have, not deleted: \"nodelocaldns-x\\u{1b}[2J;touch /tmp/PWN\" in \"kube-system\""
            ),
            "{error}"
        );
        assert!(!error.contains("delete pod nodelocaldns-x"), "{error}");
    }

    /// tests/fixtures/kubectl/helm-coredns-ns-cluster.json is what dnsfix reads from the
    /// helm-coredns-ns kubectl fixtures (the chart in `coredns`, the lab's kubeadm
    /// kubelet-config giving its Service's address as clusterDNS), for tests that plan
    /// from that cluster without kubectl (tests/it/plan_fixtures.rs). Written anew with
    /// DNSFIX_WRITE_FIXTURES=1.
    #[tokio::test]
    async fn the_helm_coredns_ns_cluster_fixture_is_what_dnsfix_reads() {
        let (mut kubectl, dir) = helm_ns_lab(include_bytes!(
            "../../tests/fixtures/kubectl/helm-coredns-ns-pods.json"
        ));
        let listed = kubectl
            .first_listing(Listing::WithLogs)
            .await
            .expect("listed");
        let cluster = read_from(kubectl, listed).await;
        std::fs::remove_dir_all(&dir).ok();
        let Cluster::Read { pods, config, .. } = &cluster else {
            panic!("not read: {cluster:?}");
        };
        assert_eq!(pods.len(), 1, "{pods:?}");
        assert!(!config.corefiles.is_empty(), "{config:?}");
        let json = serde_json::to_string_pretty(&cluster).expect("json") + "\n";
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/kubectl/helm-coredns-ns-cluster.json");
        if std::env::var_os("DNSFIX_WRITE_FIXTURES").is_some() {
            std::fs::write(&path, &json).expect("write");
        }
        let stored = std::fs::read_to_string(&path).expect("the fixture");
        assert_eq!(
            stored, json,
            "run with DNSFIX_WRITE_FIXTURES=1 and review the diff"
        );
    }

    /// The CoreDNS Helm chart installed in a namespace of its own (`helm install dns
    /// coredns/coredns -n coredns`, its Service given the kubelets' clusterDNS address):
    /// kube-system has no CoreDNS pod and no DNS Service, so CoreDNS is found through its
    /// Service elsewhere: its pods listed in `coredns` by the Service's selector, their
    /// ConfigMap read there. Before, only kube-system was asked: no CoreDNS pod, no
    /// Corefile, and no cluster DNS Service. A kubeconfig whose Role is limited to
    /// kube-system is refused the Services of every namespace: then the cluster reads as
    /// before, and says why where CoreDNS forwards is not known.
    #[tokio::test]
    async fn coredns_outside_kube_system_is_found_through_its_service() {
        let read = |forbidden: bool| {
            read_elsewhere_lab(
                include_bytes!("../../tests/fixtures/kubectl/helm-coredns-ns-pods.json").to_vec(),
                with_lab_configmaps(
                    include_bytes!("../../tests/fixtures/kubectl/helm-coredns-ns-configmaps.json"),
                    &["kubelet-config"],
                ),
                include_bytes!("../../tests/fixtures/kubectl/helm-coredns-ns-services.json")
                    .to_vec(),
                forbidden,
            )
        };
        let (pods, config) = read(false).await;
        let found: Vec<(&str, &str, &str)> = pods
            .iter()
            .map(|p| (p.name.as_str(), p.namespace(), p.app.as_str()))
            .collect();
        assert_eq!(
            found,
            [("dns-coredns-6d4f8b7c9b-2xkqp", "coredns", "coredns")]
        );
        // The Service's selector, for apply to list them there again.
        assert_eq!(pods[0].selector.as_deref(), Some(HELM_NS_SELECTOR));
        let services = config.services.as_deref().expect("services");
        assert_eq!(
            services
                .iter()
                .map(|s| (s.namespace(), s.name.as_str(), s.cluster_ips.clone()))
                .collect::<Vec<_>>(),
            [("coredns", "dns-coredns", vec!["10.96.0.10".to_owned()])]
        );
        assert_eq!(config.coredns_mounts, ["dns-coredns"]);
        assert_eq!(
            (&config.coredns_unread, &config.coredns_mounts_error),
            (&None, &None)
        );
        let counted: Vec<(&str, &str, &str)> = config
            .corefiles
            .iter()
            .filter(|c| c.is_corednss())
            .map(|c| (c.namespace(), c.configmap.as_str(), c.helm_namespace()))
            .collect();
        assert_eq!(counted, [("coredns", "dns-coredns", "coredns")]);
        let corefile::RootForward::Forward(_, forward) = config.corefiles[0].root_forward() else {
            panic!("{:?}", config.corefiles[0].root_forward());
        };
        assert_eq!(forward.to, ["/etc/resolv.conf"]);
        // Limited to kube-system: as before, nothing found and nothing refused lost.
        let (pods, config) = read(true).await;
        assert!(pods.is_empty(), "{pods:?}");
        assert_eq!(config.services, Some(Vec::new()));
        assert!(config.corefiles.is_empty(), "{:?}", config.corefiles);
        assert_eq!(config.error, None);
    }

    /// Which Service elsewhere is the cluster's DNS: none while kube-system has a DNS
    /// Service or a DNS pod; only the one whose address kubeadm's kubelet-config names as
    /// clusterDNS, never the first by default (a k8gb-like CoreDNS elsewhere is no cluster
    /// DNS); none where two have it, where none has it, or without a selector, each saying
    /// which Services were seen and why none was taken. Before, the first was taken where
    /// nothing matched. A selector reaches the shell only as label keys and values the API
    /// allows.
    #[test]
    fn the_cluster_dns_service_elsewhere_is_the_kubelets_one() {
        let service = |namespace: &str, ip: &str, selector: Value| {
            let list = serde_json::json!({"kind": "List", "items": [{"kind": "Service",
                "metadata": {"name": "dns-coredns", "namespace": namespace},
                "spec": {"clusterIP": ip, "ports": [{"port": 53}], "selector": selector}}]});
            parse_services(&serde_json::to_vec(&list).expect("json")).expect("services")
        };
        let chart = serde_json::json!({"app.kubernetes.io/instance": "dns",
            "app.kubernetes.io/name": "coredns", "k8s-app": "coredns"});
        let first = service("coredns", "10.96.0.10", chart.clone());
        assert_eq!(
            first[0].selector.as_deref(),
            Some("app.kubernetes.io/instance=dns,app.kubernetes.io/name=coredns,k8s-app=coredns")
        );
        let second = service("dns", "10.96.0.53", chart);
        let mut config = DnsConfig {
            services: Some(Vec::new()),
            services_elsewhere: [first.clone(), second.clone()].concat(),
            ..DnsConfig::default()
        };
        let why = |r: Result<&DnsService, Option<String>>| r.expect_err("none taken").expect("why");
        let none = why(config.service_elsewhere(false));
        assert!(
            none.contains("coredns/dns-coredns 10.96.0.10; dns/dns-coredns 10.96.0.53")
                && none.ends_with("no kubeadm kubelet-config gives the kubelets' clusterDNS to match their addresses with"),
            "{none}"
        );
        let kubelet = |ips: &[&str]| {
            Some(KubeadmKubelet {
                configmap: KUBELET_CONFIG.into(),
                resolv_conf: None,
                cluster_dns: ips.iter().map(|ip| (*ip).to_owned()).collect(),
                cluster_domain: None,
            })
        };
        config.kubeadm_kubelet = kubelet(&["10.96.0.53"]);
        assert_eq!(config.service_elsewhere(false), Ok(&second[0]));
        assert_eq!(config.service_elsewhere(true), Err(None));
        config.kubeadm_kubelet = kubelet(&["10.96.0.99"]);
        assert!(why(config.service_elsewhere(false)).ends_with(
            "none has the address kubeadm's kubelet-config gives as clusterDNS (10.96.0.99)"
        ));
        config.kubeadm_kubelet = kubelet(&["10.96.0.10", "10.96.0.53"]);
        assert!(why(config.service_elsewhere(false)).contains("several have the address"));
        config.services = Some(service("kube-system", "10.96.0.10", Value::Null));
        assert_eq!(config.service_elsewhere(false), Err(None));
        config.services = None;
        assert_eq!(config.service_elsewhere(false), Err(None));
        for bad in [
            serde_json::json!({"app": "x'; id; '"}),
            serde_json::json!({"app": "$(id)"}),
            serde_json::json!({"a b": "x"}),
            serde_json::json!({"Bad_Prefix/app": "x"}),
            serde_json::json!({"app": 1}),
            serde_json::json!({}),
        ] {
            assert_eq!(label_selector(&bad), None, "{bad}");
        }
        let odd = service("coredns", "10.96.0.10", serde_json::json!({"app": "$(id)"}));
        let config = DnsConfig {
            services: Some(Vec::new()),
            services_elsewhere: odd,
            kubeadm_kubelet: kubelet(&["10.96.0.10"]),
            ..DnsConfig::default()
        };
        assert!(
            why(config.service_elsewhere(false))
                .contains("selects no pods with labels dnsfix can pass")
        );
    }

    /// Kubespray's default NodeLocal DNSCache in front of a CoreDNS installed elsewhere
    /// (`dns_mode: manual`, `manual_dns_server` the Service's address, the CoreDNS Helm chart
    /// in `coredns`): the kubelets' clusterDNS is the cache's 169.254.25.10, which no Service
    /// has; the cache's `cluster.local:53` block (bound to it) forwards to the Service's
    /// 10.233.0.3, which is then the address to match. The nodelocaldns ConfigMap is the
    /// lab's, rendered from Kubespray's nodelocaldns-config.yml.j2 (46dbdd39), and is read
    /// with the first listing: no other kubectl. Before, the Service was not taken (none
    /// had the address kubeadm's kubelet-config gives). A clusterDNS that is not the
    /// cache's address (no block binds it), or a cache block that forwards to no address
    /// (the upstream manifest's `__PILLAR__CLUSTER__DNS__`), changes nothing.
    #[test]
    fn behind_nodelocal_dnscache_the_cluster_dns_service_is_the_caches_target() {
        let lab = parse_configmaps(include_bytes!("../../tests/lab/standins/configmaps.json"))
            .expect("the lab's ConfigMaps");
        let cache: Vec<Corefile> = lab
            .corefiles
            .into_iter()
            .filter(Corefile::is_node_local)
            .collect();
        assert_eq!(cache.len(), 1, "{cache:?}");
        let list = serde_json::json!({"kind": "List", "items": [{"kind": "Service",
            "metadata": {"name": "dns-coredns", "namespace": "coredns"},
            "spec": {"clusterIP": "10.233.0.3", "ports": [{"port": 53}],
                     "selector": {"k8s-app": "coredns"}}}]});
        let elsewhere =
            parse_services(&serde_json::to_vec(&list).expect("json")).expect("services");
        let kubelet = |ip: &str| {
            Some(KubeadmKubelet {
                configmap: KUBELET_CONFIG.into(),
                resolv_conf: None,
                cluster_dns: vec![ip.to_owned()],
                cluster_domain: Some("cluster.local".into()),
            })
        };
        let mut config = DnsConfig {
            corefiles: cache.clone(),
            services: Some(Vec::new()),
            services_elsewhere: elsewhere.clone(),
            kubeadm_kubelet: kubelet("169.254.25.10"),
            ..DnsConfig::default()
        };
        assert_eq!(config.service_elsewhere(false), Ok(&elsewhere[0]));
        // Another clusterDNS: no cache block binds it, so it is matched as it is.
        config.kubeadm_kubelet = kubelet("10.233.0.10");
        let why = config
            .service_elsewhere(false)
            .expect_err("none")
            .expect("why");
        assert!(
            why.ends_with(
                "none has the address kubeadm's kubelet-config gives as clusterDNS (10.233.0.10)"
            ),
            "{why}"
        );
        // The cache forwards elsewhere: the evidence says which block gave the address.
        config.kubeadm_kubelet = kubelet("169.254.25.10");
        config.services_elsewhere[0].cluster_ips = vec!["10.233.0.99".into()];
        let why = config
            .service_elsewhere(false)
            .expect_err("none")
            .expect("why");
        assert!(
            why.ends_with("none has the address NodeLocal DNSCache forwards the cluster domain to (kube-system/nodelocaldns Corefile, cluster.local:53 line 1), kubeadm's kubelet-config giving the cache's as clusterDNS (10.233.0.3)"),
            "{why}"
        );
        // The upstream manifest's placeholder is no address.
        let upstream = Corefile::new(
            "node-local-dns",
            "Corefile",
            "cluster.local:53 {\n    bind 169.254.20.10 10.96.0.10\n    forward . __PILLAR__CLUSTER__DNS__ {\n        force_tcp\n    }\n}\n",
        );
        config.corefiles = vec![upstream];
        config.kubeadm_kubelet = kubelet("169.254.20.10");
        config.services_elsewhere[0].cluster_ips = vec!["10.233.0.3".into()];
        let why = config
            .service_elsewhere(false)
            .expect_err("none")
            .expect("why");
        assert!(why.ends_with("as clusterDNS (169.254.20.10)"), "{why}");
    }

    /// NodeLocal DNSCache's forward target as CoreDNS's forward takes it: with a port
    /// (`10.233.0.3:53`, `[fd00::3]:53`), `dns://`, or an IPv6 address spelt otherwise
    /// than the Service's clusterIP: each is the Service's address. Another port is not
    /// (the cluster DNS is asked on 53). Before, the strings were compared: none matched.
    #[test]
    fn the_caches_forward_target_is_compared_as_an_address() {
        let kubelet = Some(KubeadmKubelet {
            configmap: KUBELET_CONFIG.into(),
            resolv_conf: None,
            cluster_dns: vec!["169.254.25.10".to_owned()],
            cluster_domain: Some("cluster.local".into()),
        });
        let config = |to: &str, service_ip: &str| {
            let corefile = format!(
                "cluster.local:53 {{\n    bind 169.254.25.10\n    forward . {to} {{\n        force_tcp\n    }}\n}}\n"
            );
            let list = serde_json::json!({"kind": "List", "items": [{"kind": "Service",
                "metadata": {"name": "dns-coredns", "namespace": "coredns"},
                "spec": {"clusterIP": service_ip, "ports": [{"port": 53}],
                         "selector": {"k8s-app": "coredns"}}}]});
            DnsConfig {
                corefiles: vec![Corefile::new("nodelocaldns", "Corefile", &corefile)],
                services: Some(Vec::new()),
                services_elsewhere: parse_services(&serde_json::to_vec(&list).expect("json"))
                    .expect("services"),
                kubeadm_kubelet: kubelet.clone(),
                ..DnsConfig::default()
            }
        };
        for (to, ip) in [
            ("10.233.0.3:53", "10.233.0.3"),
            ("dns://10.233.0.3:53", "10.233.0.3"),
            ("dns://10.233.0.3", "10.233.0.3"),
            ("[fd00::3]:53", "fd00::3"),
            ("[fd00::3]", "fd00::3"),
            ("fd00:0:0::3", "fd00::3"),
            ("fd00::3", "fd00:0000::0003"),
        ] {
            let config = config(to, ip);
            let found = config.service_elsewhere(false);
            assert!(
                found.as_ref().is_ok_and(|s| s.name == "dns-coredns"),
                "{to} {ip}: {found:?}"
            );
        }
        let config = config("10.233.0.3:5353", "10.233.0.3");
        assert!(config.service_elsewhere(false).is_err());
    }

    /// The same through kubectl (the lab's): the chart in `coredns` behind Kubespray's
    /// nodelocaldns, kubeadm's kubelet-config naming the cache's 169.254.25.10, the cache
    /// forwarding `cluster.local` to the Service's 10.96.0.10. The cache's ConfigMap comes
    /// with the first listing's ConfigMaps: CoreDNS is found and its pods listed as without
    /// the cache. Before, the Service was not taken (no CoreDNS pod, no Corefile).
    #[tokio::test]
    async fn coredns_outside_kube_system_is_found_behind_nodelocal_dnscache() {
        let configmaps = with_lab_configmaps(
            include_bytes!("../../tests/fixtures/kubectl/helm-coredns-ns-configmaps.json"),
            &["kubelet-config", "nodelocaldns"],
        );
        let configmaps = String::from_utf8(configmaps)
            .expect("utf-8")
            .replace(
                "clusterDNS:\\n- 10.96.0.10",
                "clusterDNS:\\n- 169.254.25.10",
            )
            .replace("forward . 10.233.0.3", "forward . 10.96.0.10");
        assert!(configmaps.contains("- 169.254.25.10"), "{configmaps}");
        let (pods, config) = read_elsewhere_lab(
            include_bytes!("../../tests/fixtures/kubectl/helm-coredns-ns-pods.json").to_vec(),
            configmaps.into_bytes(),
            include_bytes!("../../tests/fixtures/kubectl/helm-coredns-ns-services.json").to_vec(),
            false,
        )
        .await;
        assert_eq!(config.coredns_unread, None);
        let found: Vec<(&str, &str)> = pods
            .iter()
            .map(|p| (p.name.as_str(), p.namespace()))
            .collect();
        assert_eq!(found, [("dns-coredns-6d4f8b7c9b-2xkqp", "coredns")]);
        assert_eq!(config.coredns_mounts, ["dns-coredns"]);
    }

    /// A pod's `-conf` names one ConfigMap key through its mounts: a directory mount (its
    /// `items` rename keys), a file mount (`subPath`), Go's `-conf=` and `--conf`, the
    /// default `Corefile` in the working directory; a file in no ConfigMap is unknown.
    #[test]
    fn a_pods_conf_is_one_configmap_key() {
        let pod = |args: Value, mounts: Value, volumes: Value| {
            let list = serde_json::json!({"kind": "List", "items": [{
                "metadata": {"name": "p", "labels": {"k8s-app": "kube-dns"}},
                "spec": {"containers": [{"name": "coredns", "args": args,
                    "volumeMounts": mounts}], "volumes": volumes}}]});
            coredns_files(&serde_json::to_vec(&list).expect("json")).pods[0]
                .corefile
                .clone()
        };
        let dir = serde_json::json!([{"name": "c", "mountPath": "/etc/coredns"}]);
        let cm = |items: Value| serde_json::json!([{"name": "c", "configMap": {"name": "dns", "items": items}}]);
        let ok = |key: &str| Ok(("dns".to_owned(), key.to_owned()));
        let conf = serde_json::json!(["-conf", "/etc/coredns/Corefile"]);
        assert_eq!(
            pod(conf.clone(), dir.clone(), cm(Value::Null)),
            ok("Corefile")
        );
        let renamed = serde_json::json!([{"key": "Corefile.main", "path": "Corefile"}]);
        assert_eq!(
            pod(conf.clone(), dir.clone(), cm(renamed)),
            ok("Corefile.main")
        );
        let other = serde_json::json!([{"key": "Corefile", "path": "other"}]);
        assert!(pod(conf.clone(), dir.clone(), cm(other)).is_err());
        let file = serde_json::json!([{"name": "c", "mountPath": "/etc/coredns/Corefile",
            "subPath": "Corefile-second"}]);
        assert_eq!(pod(conf, file, cm(Value::Null)), ok("Corefile-second"));
        let eq = serde_json::json!(["--conf=/etc/coredns/Corefile"]);
        assert_eq!(pod(eq, dir.clone(), cm(Value::Null)), ok("Corefile"));
        let root = serde_json::json!([{"name": "c", "mountPath": "/"}]);
        assert_eq!(pod(Value::Null, root, cm(Value::Null)), ok("Corefile"));
        assert!(pod(Value::Null, dir, cm(Value::Null)).is_err());
    }

    /// kube-dns's pods (GKE; kubernetes cluster/addons/dns/kube-dns/kube-dns.yaml.in at
    /// 025f2834: containers kubedns, dnsmasq and sidecar) share CoreDNS's `k8s-app: kube-dns` label and read no Corefile:
    /// they are no CoreDNS pod, so a Corefile beside them is not "in no volume it mounts".
    /// A CoreDNS container under another name is still found, by its image or its -conf.
    #[test]
    fn kube_dns_pods_are_no_coredns_pods() {
        let list = |containers: Value| {
            let list = serde_json::json!({"kind": "List", "items": [{
                "metadata": {"name": "kube-dns-5c9d8f", "labels": {"k8s-app": "kube-dns"}},
                "spec": {"containers": containers, "volumes": []}}]});
            coredns_files(&serde_json::to_vec(&list).expect("json")).pods
        };
        // The containers of cluster/addons/dns/kube-dns/kube-dns.yaml.in at 025f2834, their
        // names, images and arguments as there (dns_domain rendered as cluster.local).
        let kube_dns = serde_json::json!([
            {"name": "kubedns", "image": "registry.k8s.io/dns/k8s-dns-kube-dns:1.22.20",
             "args": ["--domain=cluster.local.", "--dns-port=10053",
                      "--config-dir=/kube-dns-config", "--v=2"]},
            {"name": "dnsmasq", "image": "registry.k8s.io/dns/k8s-dns-dnsmasq-nanny:1.22.20",
             "args": ["-v=2", "-logtostderr", "-configDir=/etc/k8s/dns/dnsmasq-nanny",
                      "-restartDnsmasq=true", "--", "-k", "--cache-size=1000",
                      "--no-negcache", "--dns-loop-detect", "--log-facility=-",
                      "--server=/cluster.local/127.0.0.1#10053",
                      "--server=/in-addr.arpa/127.0.0.1#10053",
                      "--server=/ip6.arpa/127.0.0.1#10053"]},
            {"name": "sidecar", "image": "registry.k8s.io/dns/k8s-dns-sidecar:1.22.20",
             "args": ["--v=2", "--logtostderr",
                      "--probe=kubedns,127.0.0.1:10053,kubernetes.default.svc.cluster.local,5,SRV",
                      "--probe=dnsmasq,127.0.0.1:53,kubernetes.default.svc.cluster.local,5,SRV"]}]);
        assert!(list(kube_dns).is_empty());
        let renamed = serde_json::json!([
            {"name": "istio-proxy", "image": "docker.io/istio/proxyv2:1.22.0"},
            {"name": "dns", "image": "registry.k8s.io/coredns/coredns:v1.11.3",
             "args": ["-conf", "/etc/coredns/Corefile"]}]);
        assert_eq!(list(renamed).len(), 1);
    }

    /// Only Services with a port 53 are the cluster's DNS: the CoreDNS Helm chart's
    /// metrics Service carries the DNS Service's labels (coredns/helm charts/coredns
    /// templates/service.yaml and service-metrics.yaml at caac0316, release `dns`,
    /// `prometheus.service.enabled`), and before, its address counted as a cluster DNS
    /// address: a kubelet whose clusterDNS named it passed DNS-KUBELET-NO-CLUSTER-DNS.
    #[test]
    fn a_metrics_service_with_the_dns_label_is_no_dns_service() {
        let labels = serde_json::json!({"app.kubernetes.io/instance": "dns",
            "app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/name": "coredns",
            "helm.sh/chart": "coredns-1.46.2", "k8s-app": "coredns",
            "kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS"});
        let mut metrics_labels = labels.clone();
        metrics_labels["app.kubernetes.io/component"] = "metrics".into();
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [
            {"kind": "Service", "metadata": {"name": "dns-coredns", "labels": labels},
             "spec": {"clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"], "type": "ClusterIP",
                      "ports": [{"name": "udp-53", "port": 53, "protocol": "UDP", "targetPort": 53},
                                {"name": "tcp-53", "port": 53, "protocol": "TCP", "targetPort": 53}]}},
            {"kind": "Service", "metadata": {"name": "dns-coredns-metrics", "labels": metrics_labels},
             "spec": {"clusterIP": "10.96.77.3", "clusterIPs": ["10.96.77.3"], "type": "ClusterIP",
                      "ports": [{"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153}]}}]});
        let services = parse_services(&serde_json::to_vec(&list).expect("json")).expect("services");
        assert_eq!(
            services,
            [DnsService {
                name: "dns-coredns".into(),
                cluster_ips: vec!["10.96.0.10".into()],
                namespace: None,
                selector: None,
            }]
        );
        let kubespray = parse_services(include_bytes!(
            "../../tests/fixtures/kubectl/dns-services.json"
        ))
        .expect("services");
        assert_eq!(kubespray.len(), 1);
    }
}
