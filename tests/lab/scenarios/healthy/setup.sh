# Runs inside the node after root/ is copied (tests/lab/README.md, "Scenarios").
# Directories Kubespray and the kubelet create (git keeps no empty directories).
mkdir -p /etc/kubernetes/manifests /etc/kubernetes/ssl /var/lib/kubelet/pki /var/lib/kubelet/pods
