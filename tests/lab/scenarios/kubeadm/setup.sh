# Runs inside the node after root/ is copied. Directories kubeadm and the kubelet create.
mkdir -p /etc/kubernetes/manifests /etc/kubernetes/pki /var/lib/kubelet/pki /var/lib/kubelet/pods
