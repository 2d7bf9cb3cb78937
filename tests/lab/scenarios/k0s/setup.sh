# Runs inside the node after root/ is copied. The kubelet as k0s's supervisor starts it
# (k0s pkg/component/worker/kubelet.go, pkg/supervisor/supervisor.go): argv[0] the staged
# binary, then the flags as name=value, sorted by name; its own session, as a child of
# `k0s worker` it is no child of a login.
mkdir -p /var/lib/k0s/kubelet/pki
setsid /var/lib/k0s/bin/kubelet --cert-dir=/var/lib/k0s/kubelet/pki \
	--config=/run/k0s/kubelet/config.yaml --containerd=/run/k0s/containerd.sock \
	--hostname-override="$LAB_NODE_NAME" --kubeconfig=/var/lib/k0s/kubelet.conf \
	--root-dir=/var/lib/k0s/kubelet --runtime-cgroups=/system.slice/containerd.service \
	--v=1 </dev/null >/run/k0s/kubelet.log 2>&1 &
