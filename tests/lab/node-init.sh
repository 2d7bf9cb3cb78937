#!/bin/bash
# PID 1 of a dnsfix lab node (started by lab.sh through
#   ip netns exec NS unshare --mount --uts --pid --fork --kill-child --mount-proc ...).
# It builds the node's private filesystem view, seeds it from the scenario, starts sshd,
# the node-side forwarder and the kubelet stand-in, writes N/ready (or N/failed), and then
# stays as the node's init, reaping orphans, until the lab is torn down.
#
# Filesystem view (private mount namespace; the host's files are never modified):
#   /etc /usr /var        overlayfs: lower = the host directory, upper+work on a tmpfs
#                         mounted at DIR/nodes/NAME/ovl
#   /run /tmp /root /home fresh tmpfs, as on a booted machine (/root gets Debian's
#                         default .bashrc/.profile, not the host's dotfiles)
#   DIR                   bind-mounted back if an overlay or tmpfs hid it
# shellcheck disable=SC2015 # `check && check || continue`: skip when either check fails
set -eEu
set -o pipefail
# shellcheck disable=SC1091 # node-prologue.sh: lab.sh copies it beside this script
. "${BASH_SOURCE[0]%/*}/node-prologue.sh" node-init "$@"
SOCK=$(cat "$N/sock")

# --- filesystem ---------------------------------------------------------------------
hostname "$NAME"
mount -t tmpfs -o mode=0755,nosuid,nodev lab-run /run
mkdir -p /run/lab-dir /run/lock /run/user
chmod 1777 /run/lock
mkdir -p "$N/ovl"
mount -t tmpfs -o mode=0700 lab-ovl "$N/ovl"
mount --rbind "$DIR" /run/lab-dir
for d in etc usr var; do
	[ -d "/$d" ] && [ ! -L "/$d" ] || continue
	mkdir -p "$N/ovl/$d/upper" "$N/ovl/$d/work"
	mount -t overlay "lab-$d" -o "lowerdir=/$d,upperdir=$N/ovl/$d/upper,workdir=$N/ovl/$d/work" "/$d" ||
		fail "cannot mount an overlay on /$d (overlayfs with a tmpfs upper layer is required)"
done
mount -t tmpfs -o mode=1777,nosuid,nodev lab-tmp /tmp
# Homes of the node's own: a fresh root home as Debian installs it (not the host's dotfiles).
mount -t tmpfs -o mode=0700 lab-root /root
for f in .bashrc .profile; do
	if [ -f "/usr/share/base-files/dot$f" ]; then cp "/usr/share/base-files/dot$f" "/root/$f"
	elif [ -f "/etc/skel/$f" ]; then cp "/etc/skel/$f" "/root/$f"; fi
done
mount -t tmpfs -o mode=0755 lab-home /home
if [ ! -e "$N/node.env" ]; then # DIR was under one of the dirs just covered
	mkdir -p "$DIR"
	mount --rbind /run/lab-dir "$DIR"
fi
umount -l /run/lab-dir && rmdir /run/lab-dir

# Paths only the scenario may populate: hide the host's versions (rm through overlayfs
# leaves a whiteout; a directory created later over it is opaque).
for p in /etc/kubernetes /var/lib/kubelet /etc/rancher /var/lib/rancher /etc/cni /etc/containerd \
	/etc/systemd/resolved.conf.d /etc/systemd/system/kubelet.service /etc/systemd/system/kubelet.service.d \
	/usr/lib/systemd/system/kubelet.service /usr/lib/systemd/system/kubelet.service.d \
	/etc/default/kubelet /etc/sysconfig/kubelet /usr/local/bin/kubelet /usr/bin/kubelet \
	/etc/NetworkManager/conf.d/dns.conf /etc/resolvconf /var/lib/dnsfix /etc/dnsfix /etc/resolv.conf; do
	if [ -e "$p" ] || [ -L "$p" ]; then rm -rf "$p"; fi
done
# Keep the host's sysctl.d / modules-load.d files as a realistic base, minus anything
# that would set the keys the scenarios are about.
shopt -s nullglob
for f in /etc/sysctl.conf /etc/sysctl.d/*.conf /usr/lib/sysctl.d/*.conf /usr/local/lib/sysctl.d/*.conf; do
	[ -f "$f" ] && [ ! -L "$f" ] || continue
	if grep -Eq '^[[:space:]]*-?(net[./]bridge[./]|net[./]ipv4[./]ip_forward|net[./]ipv6[./]conf[./]all[./]forwarding)' "$f"; then
		sed -i -E '/^[[:space:]]*-?(net[./]bridge[./]|net[./]ipv4[./]ip_forward|net[./]ipv6[./]conf[./]all[./]forwarding)/d' "$f"
	fi
done
for f in /etc/modules /etc/modules-load.d/*.conf /usr/lib/modules-load.d/*.conf /usr/local/lib/modules-load.d/*.conf; do
	[ -f "$f" ] && [ ! -L "$f" ] || continue
	if grep -Eq '^[[:space:]]*br_netfilter([[:space:]]|$)' "$f"; then
		sed -i -E '/^[[:space:]]*br_netfilter([[:space:]]|$)/d' "$f"
	fi
done
shopt -u nullglob

# Seed from the scenario chain (base first). Only the private trees may be written.
for sd in "${LAB_SCENARIO_DIRS[@]}"; do
	[ -d "$sd/root" ] || continue
	for top in "$sd/root"/* "$sd/root"/.[!.]*; do
		[ -e "$top" ] || [ -L "$top" ] || continue
		case ${top##*/} in etc | usr | var | root | home | run) ;; *) fail "scenario $sd: root/${top##*/} is outside the node's private trees (etc usr var root home run)" ;; esac
	done
	cp -R -P --preserve=mode,timestamps --remove-destination "$sd/root/." / ||
		fail "cannot copy $sd/root into the node"
done
for p in $LAB_DELETE; do
	case $p in /etc/?* | /usr/?* | /var/?* | /root/?* | /home/?* | /run/?*) rm -rf "$p" ;; *) fail "LAB_DELETE $p: outside the node's private trees" ;; esac
done
# Per-node values in seeded files: @LAB_NODE_NAME@, @LAB_NODE_IP@ (a documentation
# address, 192.0.2.0/24, that is never contacted).
for sd in "${LAB_SCENARIO_DIRS[@]}"; do
	[ -d "$sd/root" ] || continue
	(cd "$sd/root" && grep -rlI -e @LAB_NODE_NAME@ -e @LAB_NODE_IP@ . || true) | while IFS= read -r f; do
		f=/${f#./}
		if [ -f "$f" ] && [ ! -L "$f" ]; then
			sed -i "s/@LAB_NODE_NAME@/$NAME/g; s/@LAB_NODE_IP@/$LAB_NODE_IP/g" "$f"
		fi
	done
done

# Stand-ins. systemctl also shadows the host's real one.
install -m 0755 "$LIB/systemctl" /usr/local/bin/systemctl
[ -L /bin ] && install -m 0755 "$LIB/systemctl" /usr/bin/systemctl
install -D -m 0755 "$LIB/kubelet-check" /usr/local/lib/dnsfix-lab/kubelet-check
# kubectl as a control-plane node has it (Kubespray and kubeadm: /etc/kubernetes/admin.conf),
# answering from the cluster DNS "pods" of every node of this lab.
install -m 0755 "$LIB/kubectl" /usr/local/bin/kubectl
if [ -d /etc/kubernetes ]; then
	printf 'apiVersion: v1\nkind: Config\n# dnsfix lab: the kubectl stand-in needs no credentials\n' >/etc/kubernetes/admin.conf
	chmod 0600 /etc/kubernetes/admin.conf
fi
install -D -m 0755 "$LIB/kubelet" "$LAB_KUBELET_BIN"

# Identity and SSH.
echo "$NAME" >/etc/hostname
grep -q "[[:space:]]$NAME\$" /etc/hosts 2>/dev/null || printf '127.0.1.1\t%s\n' "$NAME" >>/etc/hosts
mkdir -p /run/sshd /etc/ssh
chmod 0755 /run/sshd
install -m 0644 "$DIR/id_ed25519.pub" /etc/ssh/lab_authorized_keys
# sshd without PAM refuses accounts whose password field starts with "!" (locked).
if grep -q '^root:!' /etc/shadow; then sed -i -E 's/^root:![^:]*:/root:*:/' /etc/shadow; fi

# Scenario hooks (e.g. create users), run inside the node, base first.
export LAB_NODE_NAME=$NAME LAB_SSH_USER
for sd in "${LAB_SCENARIO_DIRS[@]}"; do
	if [ -f "$sd/setup.sh" ]; then
		bash -eu "$sd/setup.sh" || fail "scenario hook $sd/setup.sh failed"
	fi
done
id "$LAB_SSH_USER" >/dev/null 2>&1 || fail "ssh user $LAB_SSH_USER does not exist in the node"

# --- network (this namespace only) -------------------------------------------------------
if [ -n "$LAB_NODELOCALDNS" ]; then
	# Kubespray's nodelocaldns interface is a dummy link. Kernels without the dummy
	# driver get an ifb link instead (also a link with no peer and no traffic).
	ip link add nodelocaldns type dummy 2>/dev/null || ip link add nodelocaldns type ifb ||
		fail "cannot create the nodelocaldns interface"
	for a in $LAB_NODELOCALDNS; do ip addr add "$a" dev nodelocaldns; done
	ip link set nodelocaldns up
fi
for kv in $LAB_SYSCTL; do
	key=${kv%%=*} val=${kv#*=}
	echo "$val" >"/proc/sys/${key//.//}" || fail "cannot set sysctl $key=$val"
done

# --- DNS servers (real ones: dnsmasq) -------------------------------------------------------
# The site's upstream resolvers, at the documentation addresses the scenarios' resolv.conf
# files name (LAB_UPSTREAM_DNS), on a link of this namespace. They answer every name with
# 192.0.2.80, as the internet would answer some address: no query leaves the lab.
# The cluster DNS "pod": one dnsmasq on the nodelocaldns and clusterDNS addresses (the
# latter on a dummy link, as kube-proxy's IPVS mode puts service addresses on kube-ipvs0).
# It answers kubernetes.default.svc.<clusterDomain> (10.233.0.1) and forwards the rest to
# the servers of the resolv.conf the kubelet handed it when it started (dnsPolicy:
# Default), as CoreDNS and nodelocaldns do. Like CoreDNS's loop plugin, it does not come up
# when that file lists a loopback address or one of its own (queries would come back to
# it): /run/lab-dns/cluster-dns.state says CrashLoopBackOff, and it stays down until the
# "pod" is recreated (lab.sh exec NAME -- /run/lab-dns/recreate-pod).
mkdir -p /run/lab-dns
echo "$DIR" >/run/lab-dns/lab-dir
echo "$N" >/run/lab-dns/node-dir
echo "$NAME" >/run/lab-dns/node-name
command -v dnsmasq >/dev/null 2>&1 || fail "dnsmasq not found: apt-get install dnsmasq-base"
command -v jq >/dev/null 2>&1 || fail "jq not found: apt-get install jq (the kubectl stand-in's ConfigMaps)"
if [ -n "$LAB_UPSTREAM_DNS" ]; then
	ip link add upstream type dummy 2>/dev/null || ip link add upstream type ifb ||
		fail "cannot create the upstream DNS link"
	listen=()
	for a in $LAB_UPSTREAM_DNS; do
		ip addr add "$a/32" dev upstream
		listen+=("--listen-address=$a")
	done
	ip link set upstream up
	dnsmasq --conf-file=/dev/null --user=root --group=root --no-resolv --no-hosts \
		--bind-interfaces "${listen[@]}" --address=/#/192.0.2.80 \
		--pid-file=/run/lab-dns/upstream.pid --log-facility=/run/lab-dns/upstream.log \
		--log-queries || fail "the upstream DNS server did not start"
fi
cat >/run/lab-dns/recreate-pod <<'POD'
#!/bin/bash
# The cluster DNS "pod" created anew: it reads the kubelet's resolv.conf as it is now.
set -u
[ -f /run/lab-dns/cluster-dns.pid ] && kill "$(cat /run/lab-dns/cluster-dns.pid)" 2>/dev/null
rm -f /run/lab-dns/cluster-dns.pid
config=
for f in /etc/kubernetes/kubelet-config.yaml /var/lib/kubelet/config.yaml; do
	[ -f "$f" ] && { config=$f; break; }
done
[ -n "$config" ] || { echo "no kubelet config: no pod" >/run/lab-dns/cluster-dns.state; exit 0; }
value() { awk -v k="$1:" '$1 == k { v = $2; gsub(/"/, "", v); print v; exit }' "$config"; }
resolv=$(value resolvConf)
# A --resolv-conf flag in the kubelet's environment files beats the config file, as it
# does for the kubelet (kubeadm's kubeadm-flags.env, KUBELET_EXTRA_ARGS).
for f in /var/lib/kubelet/kubeadm-flags.env /etc/default/kubelet /etc/sysconfig/kubelet; do
	flag=$(grep -o -- '--resolv-conf=[^ "'"'"']*' "$f" 2>/dev/null | tail -n 1)
	[ -n "$flag" ] && resolv=${flag#--resolv-conf=}
done
[ -n "$resolv" ] || resolv=/etc/resolv.conf
domain=$(value clusterDomain)
[ -n "$domain" ] || domain=cluster.local
own=$(ip -o -4 addr show dev nodelocaldns 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4 }')
own="$own $(awk '/^clusterDNS:/ { on = 1; next } on && /^- / { print $2; next } { on = 0 }' "$config")"
# The root `forward .` of the coredns Corefile (the ConfigMap as the kubectl stand-in keeps
# it): addresses there are the upstreams, as for CoreDNS; a path is the resolv.conf above.
lab=$(cat /run/lab-dns/lab-dir)
cm=$lab/configmaps.json
[ -f "$cm" ] || cm=$lab/lib/configmaps.json
forward=$(jq -r '.items[] | select(.metadata.name == "coredns") | .data.Corefile // empty' "$cm" 2>/dev/null |
	awk '/^[ \t]*\.(:53)?[ \t]*\{/ { root = 1 } root && $1 == "forward" && $2 == "." { for (i = 3; i <= NF && $i != "{"; i++) printf "%s ", $i; exit }')
upstreams=$(awk '$1 == "nameserver" { print $2 }' "$resolv" 2>/dev/null)
case $forward in
"" | /*) ;;
*) upstreams=$forward resolv="the coredns Corefile" ;;
esac
servers=()
for ns in $upstreams; do
	case " $own " in *" $ns "*) loop=$ns ;; esac
	case $ns in 127.* | ::1) loop=$ns ;; esac
	servers+=("--server=$ns")
done
# The pod as the API server shows it (core/v1 Pod), for the kubectl stand-in: its
# container named coredns, as kubeadm's, Kubespray's and the CoreDNS Helm chart's are, with
# Kubespray's -conf, mount and ConfigMap volume (kubernetes-sigs/kubespray @46dbdd39
# roles/kubernetes-apps/ansible/templates/coredns-deployment.yml.j2:63-66, 102-108), so
# the Corefile it loads is followed to the coredns ConfigMap.
node_dir=$(cat /run/lab-dns/node-dir) node=$(cat /run/lab-dns/node-name)
# Each pod is new: its name carries a generation, as a replacement's name differs. A
# reload (LAB_POD_RELOAD=1: the Corefile changed) is the same pod.
gen=$(cat /run/lab-dns/pod-gen 2>/dev/null || echo 0)
[ "${LAB_POD_RELOAD-}" = 1 ] && [ "$gen" != 0 ] || gen=$((gen + 1))
echo "$gen" >/run/lab-dns/pod-gen
pod() { # READY RESTARTS STATE-JSON
	printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"coredns-%s-%s","namespace":"kube-system","labels":{"k8s-app":"kube-dns"}},"spec":{"containers":[{"name":"coredns","args":["-conf","/etc/coredns/Corefile"],"volumeMounts":[{"name":"config-volume","mountPath":"/etc/coredns"}]}],"volumes":[{"name":"config-volume","configMap":{"name":"coredns","items":[{"key":"Corefile","path":"Corefile"}]}}],"nodeName":"%s","dnsPolicy":"Default"},"status":{"phase":"Running","containerStatuses":[{"name":"coredns","ready":%s,"restartCount":%s,"state":%s}]}}' \
		"$node" "$gen" "$node" "$1" "$2" "$3" >"$node_dir/dns-pod.json.new"
	mv "$node_dir/dns-pod.json.new" "$node_dir/dns-pod.json"
}
# A test can make the next pods loop whatever the file says (NODE_DIR/pod-fails), as when
# the upstream itself forwards back into the cluster; with NODE_DIR/pod-fails.log-error,
# the API server refuses their previous logs with its words (kubectl's stand-in reads
# dns-pod.log-error): set for the replacements only, so a plan still reads the pod before.
if [ -f "$node_dir/pod-fails" ]; then
	echo "CrashLoopBackOff: looping on request (pod-fails)" >/run/lab-dns/cluster-dns.state
	echo '[FATAL] plugin/loop: Loop (10.233.64.7:40112 -> :53) detected for zone ".", see https://coredns.io/plugins/loop#troubleshooting. Query: "HINFO 4547991504243258144.3688648895315093531."' >"$node_dir/dns-pod.log"
	if [ -f "$node_dir/pod-fails.log-error" ]; then
		cp "$node_dir/pod-fails.log-error" "$node_dir/dns-pod.log-error"
	else
		rm -f "$node_dir/dns-pod.log-error"
	fi
	pod false 3 '{"waiting":{"reason":"CrashLoopBackOff","message":"back-off 40s restarting failed container=coredns"}}'
	exit 0
fi
if [ -n "${loop-}" ]; then
	echo "CrashLoopBackOff: plugin/loop: Loop (127.0.0.1:53 -> $loop:53) detected for zone \".\"; $resolv lists $loop" >/run/lab-dns/cluster-dns.state
	# The line CoreDNS's loop plugin dies with (plugin/loop/loop.go, log.Fatalf).
	echo '[FATAL] plugin/loop: Loop (127.0.0.1:38718 -> :53) detected for zone ".", see https://coredns.io/plugins/loop#troubleshooting. Query: "HINFO 1602357022762538710.2777015015780658687."' >"$node_dir/dns-pod.log"
	pod false 5 '{"waiting":{"reason":"CrashLoopBackOff","message":"back-off 2m40s restarting failed container=coredns"}}'
	exit 0
fi
rm -f "$node_dir/dns-pod.log"
pod true 0 '{"running":{"startedAt":"2026-11-24T00:00:00Z"}}'
listen=()
for a in $own; do
	ip addr show | grep -q "inet $a/" || {
		ip link show kube-ipvs0 >/dev/null 2>&1 || {
			{ ip link add kube-ipvs0 type dummy 2>/dev/null || ip link add kube-ipvs0 type ifb; } &&
				ip link set kube-ipvs0 up
		}
		ip addr add "$a/32" dev kube-ipvs0
	}
	listen+=("--listen-address=$a")
done
[ ${#listen[@]} -gt 0 ] || { echo "no cluster DNS address" >/run/lab-dns/cluster-dns.state; exit 0; }
dnsmasq --conf-file=/dev/null --user=root --group=root --no-resolv --no-hosts --bind-interfaces \
	"${listen[@]}" "${servers[@]}" --host-record="kubernetes.default.svc.$domain,10.233.0.1" \
	--pid-file=/run/lab-dns/cluster-dns.pid --log-facility=/run/lab-dns/cluster-dns.log --log-queries &&
	echo "Running: upstreams ${servers[*]} from $resolv" >/run/lab-dns/cluster-dns.state
POD
chmod 0755 /run/lab-dns/recreate-pod
/run/lab-dns/recreate-pod || fail "the cluster DNS stand-in could not be set up"
# The "pod's" controller: the kubectl stand-in on the control-plane node deletes the pod by
# writing "delete NAME" into this FIFO (a blocked open costs nothing while idle); the pod
# is gone at once and its replacement comes up a moment later, as a DaemonSet's would.
rm -f "$N/pod-control"
mkfifo -m 0600 "$N/pod-control"
(
	exec </dev/null >/dev/null 2>&1
	while :; do
		read -r verb _ <"$N/pod-control" || continue
		# reload: the Corefile changed; CoreDNS's reload plugin (and, for a pod crash-
		# looping, its next restart) brings the same pod up on the new file.
		if [ "$verb" = reload ]; then
			LAB_POD_RELOAD=1 /run/lab-dns/recreate-pod
			continue
		fi
		[ "$verb" = delete ] || continue
		rm -f "$N/dns-pod.json" "$N/dns-pod.log"
		[ -f /run/lab-dns/cluster-dns.pid ] && kill "$(cat /run/lab-dns/cluster-dns.pid)"
		rm -f /run/lab-dns/cluster-dns.pid
		echo "Terminated: deleted" >/run/lab-dns/cluster-dns.state
		sleep 0.5
		/run/lab-dns/recreate-pod
	done
) &

# systemd-resolved's stub listener: one dnsmasq on 127.0.0.53 forwarding to the servers of
# its uplink file, as systemd-resolved answers there, for as long as the unit runs (the
# systemctl stand-in calls this script when it starts or stops systemd-resolved). dnsfix
# sees it in /proc/net/udp.
cat >/run/lab-dns/resolved-stub <<'STUB'
#!/bin/bash
set -u
# The running one gone first (dnsmasq removes its pid file as it exits, and a socket
# left behind for a moment would still answer).
if [ -f /run/lab-dns/stub.pid ]; then
	pid=$(cat /run/lab-dns/stub.pid)
	kill "$pid" 2>/dev/null
	while kill -0 "$pid" 2>/dev/null; do sleep 0.01; done
fi
rm -f /run/lab-dns/stub.pid
[ "${1-}" = start ] || exit 0
servers=()
for ns in $(awk '$1 == "nameserver" { print $2 }' /run/systemd/resolve/resolv.conf 2>/dev/null); do
	servers+=("--server=$ns")
done
exec dnsmasq --conf-file=/dev/null --user=root --group=root --no-resolv --no-hosts \
	--bind-interfaces --listen-address=127.0.0.53 "${servers[@]}" \
	--pid-file=/run/lab-dns/stub.pid --log-facility=/run/lab-dns/stub.log
STUB
chmod 0755 /run/lab-dns/resolved-stub

# --- services ------------------------------------------------------------------------------
mkdir -p /run/lab-systemd/units
: >/run/lab-systemd/calls.log
chmod 0666 /run/lab-systemd/calls.log
: >/run/lab-systemd/kubelet.log
/usr/sbin/sshd -D -e -f "$N/sshd_config" </dev/null >>"$N/sshd.log" 2>&1 &
sshd_pid=$!
socat -lf "$N/socat.log" "UNIX-LISTEN:$SOCK,fork,unlink-early,mode=0600" TCP:127.0.0.1:22 </dev/null >/dev/null 2>&1 &
for u in $LAB_UNITS_INACTIVE; do LAB_SYSTEMCTL_NOLOG=1 systemctl __lab_declare "$u" inactive enabled; done
for u in $LAB_UNITS_ACTIVE; do LAB_SYSTEMCTL_NOLOG=1 systemctl __lab_declare "$u" active enabled; done
for u in $LAB_UNITS_DISABLED; do echo disabled >"/run/lab-systemd/units/$(case $u in *.*) echo "$u" ;; *) echo "$u.service" ;; esac)/enabled"; done
case " $LAB_UNITS_ACTIVE " in
*" systemd-resolved "* | *" systemd-resolved.service "*)
	# Started by the stand-in as the unit was declared active.
	[ -s /run/lab-dns/stub.pid ] && kill -0 "$(cat /run/lab-dns/stub.pid)" ||
		fail "systemd-resolved's stub listener did not start: $(tail -n 5 /run/lab-dns/stub.log 2>/dev/null)"
	;;
esac
case " $LAB_UNITS_ACTIVE " in
*" kubelet "* | *" kubelet.service "*)
	st=$(LAB_SYSTEMCTL_NOLOG=1 systemctl is-active kubelet || true)
	[ "$st" = active ] || fail "kubelet stand-in did not start ($st): $(tail -n 5 /run/lab-systemd/kubelet.log)"
	;;
esac
i=0
until grep -q 'Server listening on 127.0.0.1 port 22' "$N/sshd.log" 2>/dev/null && [ -S "$SOCK" ]; do
	kill -0 "$sshd_pid" 2>/dev/null || fail "sshd exited: $(tail -n 5 "$N/sshd.log")"
	i=$((i + 1))
	[ $i -lt 1500 ] || fail "sshd or the node socket did not come up in 30s"
	sleep 0.02
done

echo ok >"$N/ready"
trap - ERR
set +eEu
exec </dev/null >/dev/null 2>&1
# Stay as the namespace's init: bash reaps every child that exits, orphans included.
while :; do
	sleep 3600 &
	wait $!
done
