//! What the cluster says about its DNS pods, read the way Kubespray reads the cluster:
//! kubectl on a control-plane host with its admin kubeconfig (kubeadm and Kubespray:
//! `/etc/kubernetes/admin.conf`; k3s: `k3s kubectl`; RKE2: its own kubectl with
//! `/etc/rancher/rke2/rke2.yaml`), over the SSH session dnsfix opens anyway. Read-only:
//! `get pods` and `logs --previous`; the kubeconfig never leaves the node.
//!
//! The pods are CoreDNS (`k8s-app: kube-dns`, kubeadm's and Kubespray's label) and
//! nodelocaldns (`k8s-app: node-local-dns`, Kubespray's nodelocaldns DaemonSet); the JSON
//! is core/v1 `Pod` (`spec.nodeName`, `status.phase`, `status.containerStatuses[]` with
//! `ready`, `restartCount`, `state.waiting.reason`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::gather::run_as_root;
use crate::inventory::Host;
use crate::transport::{Target, Transport};

/// At most this many crash-looping pods get their last logs read.
const MAX_LOGS: usize = 10;

/// One CoreDNS or nodelocaldns pod.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DnsPod {
    pub name: String,
    /// `coredns` or `nodelocaldns`.
    pub app: String,
    /// The node it runs on (`spec.nodeName`), lowercase.
    pub node: String,
    pub phase: String,
    pub ready: bool,
    pub restarts: u64,
    /// Why its container waits (`CrashLoopBackOff`), when it does.
    pub waiting: Option<String>,
    /// The loop plugin's fatal line from its previous run, when it crashed on a loop.
    pub loop_detected: Option<String>,
}

/// What dnsfix could learn from the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "access")]
pub enum Cluster {
    /// Read with kubectl on `via` (an inventory host).
    Read { via: String, pods: Vec<DnsPod> },
    /// No control-plane host answered with a kubectl that works: why, per host.
    Unavailable { reason: String },
}

/// Finds the node's kubectl and admin kubeconfig and sets them as "$@".
const KUBECTL: &str = r#"set -u
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

/// A script running kubectl with `args` (dnsfix's own words and validated names only)
/// against kube-system, bounded in time.
fn kubectl(args: &str) -> String {
    format!("{KUBECTL}exec timeout 30 \"$@\" --request-timeout=20s -n kube-system {args}\n")
}

const GET_PODS: &str = "get pods -l 'k8s-app in (kube-dns,node-local-dns)' -o json";

/// The DNS pods, read on the first of `control_plane` that can.
pub async fn read(transport: &Transport, control_plane: &[Host]) -> Cluster {
    if control_plane.is_empty() {
        return Cluster::Unavailable {
            reason: "the inventory has no kube_control_plane host to run kubectl on".to_owned(),
        };
    }
    let mut why = Vec::new();
    for host in control_plane {
        match read_on(transport, host).await {
            Ok(pods) => {
                return Cluster::Read {
                    via: host.name.clone(),
                    pods,
                };
            }
            Err(e) => why.push(format!("{}: {e}", host.name)),
        }
    }
    Cluster::Unavailable {
        reason: why.join("; "),
    }
}

async fn read_on(transport: &Transport, host: &Host) -> Result<Vec<DnsPod>, String> {
    let target = Target {
        host: host.name.clone(),
        connection: host.connection(),
    };
    let mut session = transport
        .connect(&target)
        .await
        .map_err(|e| e.to_string())?;
    let result = async {
        let out = run_as_root(&mut session, &target, &kubectl(GET_PODS))
            .await
            .map_err(|e| e.to_string())?;
        if out.exit_status != Some(0) {
            return Err(
                crate::text::escape(String::from_utf8_lossy(&out.stderr).trim()).into_owned(),
            );
        }
        let mut pods = parse_pods(&out.stdout)?;
        for pod in pods
            .iter_mut()
            .filter(|p| p.restarts > 0 || p.waiting.is_some())
            .take(MAX_LOGS)
        {
            pod.loop_detected = previous_loop_line(&mut session, &target, &pod.name).await;
        }
        Ok(pods)
    }
    .await;
    session.close().await;
    result
}

/// The pods in a `kubectl get pods -o json` List.
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
            let status = &pod["status"]["containerStatuses"][0];
            DnsPod {
                name: text(&pod["metadata"]["name"]),
                app: match pod["metadata"]["labels"]["k8s-app"].as_str() {
                    Some("node-local-dns") => "nodelocaldns".to_owned(),
                    _ => "coredns".to_owned(),
                },
                node: text(&pod["spec"]["nodeName"]).to_lowercase(),
                phase: text(&pod["status"]["phase"]),
                ready: status["ready"].as_bool().unwrap_or(false),
                restarts: status["restartCount"].as_u64().unwrap_or(0),
                waiting: status["state"]["waiting"]["reason"]
                    .as_str()
                    .map(str::to_owned),
                loop_detected: None,
            }
        })
        .collect())
}

/// The loop plugin's fatal line in the pod's previous run, if it crashed on a loop.
async fn previous_loop_line(
    session: &mut crate::transport::Session,
    target: &Target,
    pod: &str,
) -> Option<String> {
    // A pod name from the API is a DNS-1123 subdomain; anything else is not passed on.
    let valid = !pod.is_empty()
        && pod.len() <= 253
        && pod
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
    if !valid {
        return None;
    }
    let script = kubectl(&format!("logs {pod} --previous --tail=20"));
    let out = run_as_root(session, target, &script).await.ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .rev()
        .find(|l| l.contains("plugin/loop: Loop"))
        .map(|l| crate::text::escape(l.trim()).into_owned())
}

/// The names a node may have in the cluster: the kubelet's `--hostname-override`, the
/// machine's hostname, the inventory name; lowercase, as node names are.
pub fn node_names(host: &Host, facts: &crate::facts::NodeFacts) -> Vec<String> {
    let mut names: Vec<String> = facts
        .kubelet
        .flags
        .iter()
        .filter(|f| f.name == "hostname-override")
        .filter_map(|f| f.value.clone())
        .chain(facts.hostname.clone())
        .chain(std::iter::once(host.name.clone()))
        .map(|n| n.to_lowercase())
        .collect();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
