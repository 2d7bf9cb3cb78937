# Runs inside the node after root/ is copied. kubelite as the snap's run-kubelite-with-args
# starts it: `declare -a args="($(cat $SNAP_DATA/args/kubelite))"; exec "$SNAP/kubelite"
# "${args[@]}"`, the arguments of default-args/kubelite with $SNAP_DATA expanded and
# --start-control-plane=false on a joined worker. Its own session, as a service's.
D=/var/snap/microk8s/7964
setsid /usr/local/lib/dnsfix-lab/snap/microk8s/7964/kubelite \
	--scheduler-args-file=$D/args/kube-scheduler \
	--controller-manager-args-file=$D/args/kube-controller-manager \
	--proxy-args-file=$D/args/kube-proxy --kubelet-args-file=$D/args/kubelet \
	--apiserver-args-file=$D/args/kube-apiserver \
	--kubeconfig-file=$D/credentials/client.config --start-control-plane=false \
	</dev/null >/run/kubelite.log 2>&1 &
