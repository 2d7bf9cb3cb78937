#!/bin/bash
# Starts a lab node of the systemd flavour (LAB_FLAVOUR=systemd; tests/lab/README.md,
# "The systemd flavour"). lab.sh runs it as
#   nsenter --net=/run/netns/NS unshare --mount --propagation private systemd-node.sh DIR NAME
# so it is already in the node's network namespace and in a mount namespace of its own.
# It builds the node's root filesystem and ends by running systemd-nspawn, whose child
# is the node's real systemd (PID 1 of the container), and again after each reboot of
# the node ("boot" below). It writes N/nspawn.pid and N/booting at each boot, or N/failed.
#
#   N/root      overlayfs: lower = the cached Debian rootfs (lab.sh rootfs), upper+work on
#               a tmpfs mounted at N/ovl; both mounts exist only in this mount namespace,
#               so they last across the node's reboots and vanish with the node
#   /run        a private tmpfs: systemd-nspawn keeps its runtime files there, not in the
#               host's /run
#   cgroup      the node gets a cgroup of its own (N/cgroup holds its path; on a hybrid
#               host also one in the unified hierarchy, N/cgroup-unified), so that
#               nodes never share one; lab.sh down removes them
# shellcheck disable=SC2015 # `check && check || continue`: skip when either check fails
set -eEu
set -o pipefail
# shellcheck disable=SC1091 # node-prologue.sh: lab.sh copies it beside this script
. "${BASH_SOURCE[0]%/*}/node-prologue.sh" systemd-node "$@"
R=$N/root
MACHINE=$(cat "$N/netns")
[ "$LAB_SSH_USER" = root ] || fail "the systemd flavour logs in as root only (LAB_SSH_USER=$LAB_SSH_USER)"
[ -d "$LAB_ROOTFS/usr/lib/systemd" ] || fail "no systemd rootfs at $LAB_ROOTFS"
# The kernel's built-in values of the network sysctls a reboot resets (see "boot"); the
# scenario's LAB_SYSCTL may set only these.
BOOT_DEFAULTS="net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0 net.bridge.bridge-nf-call-iptables=1 net.bridge.bridge-nf-call-ip6tables=1 net.bridge.bridge-nf-call-arptables=1"
for kv in $LAB_SYSCTL; do
	case " $BOOT_DEFAULTS " in *" ${kv%%=*}="*) ;; *) fail "LAB_SYSCTL ${kv%%=*}: no boot default known for it (systemd-node.sh BOOT_DEFAULTS)" ;; esac
done

# --- cgroup ------------------------------------------------------------------------------
# systemd-nspawn --keep-unit places the container below the cgroup it runs in. Two nodes
# in one cgroup would share their "payload" subtree (and each systemd would manage the
# other's processes), so each node gets its own: in the name=systemd hierarchy on a
# cgroup v1 host, in the unified one on a cgroup v2 host.
if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
	own=$(sed -n 's/^0:://p' /proc/self/cgroup)
	cg=/sys/fs/cgroup${own%/}/$MACHINE
elif [ "$(stat -f -c %T /sys/fs/cgroup/systemd 2>/dev/null)" = cgroupfs ]; then
	own=$(sed -n 's/^[0-9]*:name=systemd://p' /proc/self/cgroup)
	cg=/sys/fs/cgroup/systemd${own%/}/$MACHINE
else
	fail "neither a cgroup v2 /sys/fs/cgroup nor a name=systemd hierarchy at /sys/fs/cgroup/systemd: systemd cannot run in a container here"
fi
mkdir "$cg" || fail "cannot create the node's cgroup $cg"
echo "$cg" >"$N/cgroup"
# A hybrid host (cgroup v1 with a cgroup2 at /sys/fs/cgroup/unified): systemd 252 in the
# container tracks its units' processes in the unified hierarchy too, so the node needs a
# cgroup of its own there as well. Without it, two nodes booting at once share one and
# fail each other's units ("Failed to attach to cgroup /system.slice/...: No such file or
# directory").
if [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ] &&
	[ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
	own=$(sed -n 's/^0:://p' /proc/self/cgroup)
	ucg=/sys/fs/cgroup/unified${own%/}/$MACHINE
	mkdir "$ucg" || fail "cannot create the node's cgroup $ucg"
	echo "$ucg" >"$N/cgroup-unified"
fi
# Only systemd-nspawn moves into them (see "boot"): this script outlives each boot. On a
# cgroup v2 host it joins $cg/supervisor, where systemd-nspawn 252 --keep-unit moves itself
# anyway (the container goes to $cg/payload): once nspawn has handed controllers down
# from $cg, $cg itself can take no process, so a second boot could not join it.
join=$cg
if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
	join=$cg/supervisor
	mkdir -p "$join" || fail "cannot create $join"
fi

# --- root filesystem -----------------------------------------------------------------------
mount -t tmpfs -o mode=0755,nosuid,nodev lab-run /run
mkdir -p "$N/ovl" "$R"
mount -t tmpfs -o mode=0700 lab-ovl "$N/ovl"
mkdir "$N/ovl/upper" "$N/ovl/work"
mount -t overlay lab-root -o "lowerdir=$LAB_ROOTFS,upperdir=$N/ovl/upper,workdir=$N/ovl/work" "$R" ||
	fail "cannot mount an overlay on $R (overlayfs with a tmpfs upper layer is required)"

# Seed from the scenario chain (base first). root/run is left out: systemd mounts a fresh
# /run at boot, and what belongs there (systemd-resolved's files) the real services write.
for sd in "${LAB_SCENARIO_DIRS[@]}"; do
	[ -d "$sd/root" ] || continue
	for top in "$sd/root"/* "$sd/root"/.[!.]*; do
		[ -e "$top" ] || [ -L "$top" ] || continue
		case ${top##*/} in
		run) continue ;;
		etc | usr | var | root | home) ;;
		*) fail "scenario $sd: root/${top##*/} is outside the node's private trees (etc usr var root home run)" ;;
		esac
		cp -R -P --preserve=mode,timestamps --remove-destination "$top" "$R/" ||
			fail "cannot copy $top into the node"
	done
done
for p in $LAB_DELETE; do
	case $p in /etc/?* | /usr/?* | /var/?* | /root/?* | /home/?* | /run/?*) rm -rf "${R:?}$p" ;; *) fail "LAB_DELETE $p: outside the node's private trees" ;; esac
done
for sd in "${LAB_SCENARIO_DIRS[@]}"; do
	[ -d "$sd/root" ] || continue
	(cd "$sd/root" && grep -rlI -e @LAB_NODE_NAME@ -e @LAB_NODE_IP@ . || true) | while IFS= read -r f; do
		f=$R/${f#./}
		if [ -f "$f" ] && [ ! -L "$f" ]; then
			sed -i "s/@LAB_NODE_NAME@/$NAME/g; s/@LAB_NODE_IP@/$LAB_NODE_IP/g" "$f"
		fi
	done
done

# The kubelet stand-in (statically linked: the rootfs's libc need not be the host's).
install -D -m 0755 "$LIB/kubelet-static" "$R$LAB_KUBELET_BIN"
install -D -m 0755 "$LIB/kubelet-check" "$R/usr/local/lib/dnsfix-lab/kubelet-check"

# Identity.
echo "$NAME" >"$R/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n' "$NAME" >"$R/etc/hosts"
od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$R/etc/machine-id"
echo >>"$R/etc/machine-id"

# SSH: Debian's own ssh.service and sshd_config, plus a drop-in (sshd_config.d is read
# first, so its settings win), this node's host keys and the lab's client key for root.
install -m 0600 "$N/ssh_host_ed25519_key" "$N/ssh_host_ecdsa_key" "$R/etc/ssh/"
install -m 0644 "$N/ssh_host_ed25519_key.pub" "$N/ssh_host_ecdsa_key.pub" "$R/etc/ssh/"
cat >"$R/etc/ssh/sshd_config.d/dnsfix-lab.conf" <<EOF
# dnsfix lab node $NAME (tests/lab/systemd-node.sh): reached through a forwarder on the
# host's 127.0.0.1; every connection comes from there.
HostKey /etc/ssh/ssh_host_ed25519_key
HostKey /etc/ssh/ssh_host_ecdsa_key
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UseDNS no
MaxStartups 200
MaxSessions 100
LogLevel VERBOSE
EOF
install -d -m 0700 "$R/root/.ssh"
install -m 0600 "$DIR/id_ed25519.pub" "$R/root/.ssh/authorized_keys"

# Scenario hooks, base first, in a chroot of the node's root (before it boots).
for sd in "${LAB_SCENARIO_DIRS[@]}"; do
	if [ -f "$sd/setup.sh" ]; then
		env -i PATH="$PATH" LAB_NODE_NAME="$NAME" LAB_SSH_USER="$LAB_SSH_USER" \
			chroot "$R" /bin/bash -eu -s <"$sd/setup.sh" || fail "scenario hook $sd/setup.sh failed"
	fi
done

# Units: the scenario's lists say which units boot enabled. Units without a unit file in
# the node (containerd) do not exist here: systemctl says so, as on a node without them.
unit() { case $1 in *.*) echo "$1" ;; *) echo "$1.service" ;; esac; }
unit_file() { # UNIT: the unit has a file in the node
	local d
	for d in etc/systemd/system usr/local/lib/systemd/system usr/lib/systemd/system lib/systemd/system; do
		[ -e "$R/$d/$1" ] && return 0
	done
	return 1
}
for u in $LAB_UNITS_ACTIVE; do
	u=$(unit "$u")
	if unit_file "$u"; then
		systemctl --root="$R" --quiet enable "$u" || fail "systemctl --root enable $u failed"
	else
		echo "systemd-node: $u has no unit file in the node; left out" >&2
	fi
done
for u in $LAB_UNITS_INACTIVE $LAB_UNITS_DISABLED; do
	u=$(unit "$u")
	unit_file "$u" && { systemctl --root="$R" --quiet disable "$u" || fail "systemctl --root disable $u failed"; }
done

# --- network (this namespace only) -------------------------------------------------------
if [ -n "$LAB_NODELOCALDNS" ]; then
	ip link add nodelocaldns type dummy 2>/dev/null || ip link add nodelocaldns type ifb ||
		fail "cannot create the nodelocaldns interface"
	for a in $LAB_NODELOCALDNS; do ip addr add "$a" dev nodelocaldns; done
	ip link set nodelocaldns up
fi
for kv in $LAB_SYSCTL; do
	key=${kv%%=*} val=${kv#*=}
	echo "$val" >"/proc/sys/${key//.//}" || fail "cannot set sysctl $key=$val"
done
# The site's upstream resolvers (as on the namespace nodes, tests/lab/node-init.sh): their
# addresses on a link of this namespace, dnsmasq from the node's own Debian packages run by
# the node's systemd, answering every name with 192.0.2.80.
if [ -n "$LAB_UPSTREAM_DNS" ]; then
	ip link add upstream type dummy 2>/dev/null || ip link add upstream type ifb ||
		fail "cannot create the upstream DNS link"
	listen=
	for a in $LAB_UPSTREAM_DNS; do
		ip addr add "$a/32" dev upstream
		listen="$listen --listen-address=$a"
	done
	ip link set upstream up
	[ -x "$R/usr/sbin/dnsmasq" ] || fail "the rootfs has no dnsmasq: rebuild it (lab.sh rootfs --build)"
	printf '%s\n' \
		'[Unit]' \
		"Description=The site's upstream DNS resolvers (dnsfix lab)" \
		'' \
		'[Service]' \
		"ExecStart=/usr/sbin/dnsmasq --keep-in-foreground --conf-file=/dev/null --user=root --group=root --no-resolv --no-hosts --bind-interfaces$listen --address=/#/192.0.2.80" \
		'' \
		'[Install]' \
		'WantedBy=multi-user.target' >"$R/etc/systemd/system/lab-upstream-dns.service"
	systemctl --root="$R" --quiet enable lab-upstream-dns.service || fail "cannot enable lab-upstream-dns.service"
fi

# --- boot ----------------------------------------------------------------------------------
# --register=no --keep-unit: no systemd-machined and no system bus on the host are needed
# (without --keep-unit nspawn asks the host's systemd for a scope: "Failed to open system
# bus"). --network-namespace-path: the node's namespace, where this script already is.
# Unlike --private-network, it leaves /proc/sys/net read-only and drops CAP_NET_ADMIN
# (systemd 252: systemd-sysctl at boot then says "Couldn't write '1' to
# 'net/ipv4/ip_forward', ignoring: Operation not permitted", and so would `sysctl -w`
# over ssh); SYSTEMD_NSPAWN_API_VFS_WRITABLE=network and --capability=CAP_NET_ADMIN give
# the node what a real one has over its own network sysctls, and nothing more.
# --resolv-conf=off, --timezone=off: the node's /etc/resolv.conf is the scenario's.
#
# A reboot in the node (`systemctl reboot`, lab.sh reboot) ends systemd-nspawn with exit
# status 133: with --keep-unit, systemd-nspawn 252 leaves the reboot to its caller (as
# systemd-nspawn@.service does, RestartForceExitStatus=133) instead of rebooting the
# container itself; without --keep-unit this loop would never see it. The node then boots
# again from the same root: the overlay's upper layer, the node's disk, lives on in this
# script's mount namespace; /run is a fresh tmpfs at every boot (nspawn mounts it), and
# each boot gets a boot id of its own (nspawn binds a random one over
# /proc/sys/kernel/random/boot_id). What lives on outside the container is the network
# namespace, whose sysctls a real reboot resets: before each new boot the keys the lab and
# dnsfix know get the kernel's built-in defaults (BOOT_DEFAULTS; not the values a new
# namespace starts with, which copy the host's IPv4 settings, forwarding included, where
# net.core.devconf_inherit_init_net is 0). Anything else in the namespace keeps its
# state: its links (the nodelocaldns interface, the site's resolvers) stay, as if the
# node-cache pod and the network were back.
#
# N/nspawn.pid is the running systemd-nspawn; N/booting the boot's count (1, 2, ...),
# written after it. An exit other than a reboot ends the node: its status goes to
# init.log, and to N/failed unless it is 0.
boot=0
trap - ERR
while :; do
	boot=$((boot + 1))
	rm -f "$N/cgroup-failed"
	(
		echo "$BASHPID" >"$join/cgroup.procs" || { : >"$N/cgroup-failed"; exit 1; }
		if [ -n "${ucg-}" ]; then echo "$BASHPID" >"$ucg/cgroup.procs" || { : >"$N/cgroup-failed"; exit 1; }; fi
		exec env SYSTEMD_NSPAWN_API_VFS_WRITABLE=network systemd-nspawn --directory="$R" --boot \
			--register=no --keep-unit --machine="$MACHINE" --hostname="$NAME" \
			--network-namespace-path=/proc/self/ns/net --capability=CAP_NET_ADMIN \
			--resolv-conf=off --timezone=off --link-journal=no --console=pipe
	) </dev/null &
	echo $! >"$N/nspawn.pid" || fail "cannot write $N/nspawn.pid"
	echo "$boot" >"$N/booting" || fail "cannot write $N/booting"
	rc=0
	wait $! || rc=$?
	[ ! -e "$N/cgroup-failed" ] || fail "cannot move systemd-nspawn into the node's cgroups ($join ${ucg-})"
	if [ "$rc" != 133 ]; then
		echo "systemd-node: systemd-nspawn exited with status $rc (boot $boot)" >&2
		[ "$rc" = 0 ] || echo "systemd-nspawn exited with status $rc (boot $boot)" >"$N/failed"
		exit "$rc"
	fi
	echo "systemd-node: the node rebooted (boot $boot ended); its network sysctls go back to the kernel's defaults" >&2
	for kv in $BOOT_DEFAULTS; do
		p=/proc/sys/$(echo "${kv%%=*}" | tr . /)
		[ -e "$p" ] || continue
		echo "${kv#*=}" >"$p" || fail "cannot reset sysctl ${kv%%=*}"
	done
done
