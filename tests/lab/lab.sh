#!/bin/bash
# dnsfix test lab: Kubernetes "nodes" made of namespaces, each with a real sshd.
# See tests/lab/README.md for the design, the scenario format and examples.
#
#   lab.sh up [--owner PID] DIR SCENARIO[:NAME] | SCENARIO*COUNT ...
#   lab.sh down DIR
#   lab.sh stop DIR NAME       sshd and the node's forwarder stop: connections are refused
#   lab.sh start DIR NAME      undo stop (same port, same host key)
#   lab.sh rekey DIR NAME      new host key, sshd restarted, known_hosts NOT updated
#   lab.sh reboot DIR NAME     systemd nodes: a real reboot (systemctl reboot), waits for the boot
#                              (LAB_REBOOT_UNITS=any: not for the scenario's units)
#   lab.sh freeze DIR NAME     SIGSTOP the node's sshd: TCP connects, no SSH banner (timeouts)
#   lab.sh thaw DIR NAME       SIGCONT it again
#   lab.sh slow-login DIR NAME SECS   each key check of a login waits SECS (0: undo)
#   lab.sh exec DIR NAME -- CMD [ARG...]   run CMD as root inside the node's namespaces
#   lab.sh status DIR          one line per node: name port scenario user state
#   lab.sh rootfs [--build]    path of the systemd flavour's cached rootfs (--build: make it)
#
# SCENARIO is a directory name under tests/lab/scenarios or a path to a scenario
# directory. Nodes are named nodeN-SCENARIO (N counts from 1 over the whole command
# line) unless :NAME is given. Everything needs root. Lab traffic stays on 127.0.0.1 and
# inside the network namespaces the lab creates.
# shellcheck disable=SC2015 # `check && check || die`: die when either check fails
# shellcheck disable=SC2016 # single-quoted scripts for sh -c and bash -c expand there
# shellcheck disable=SC1091 # scenario.env and node.env are the lab's own, made at run time
# shellcheck disable=SC2030,SC2031 # a scenario's settings are kept to its subshell on purpose
# shellcheck disable=SC2012 # node and scenario names are plain words (listed for a message)
# shellcheck disable=SC2013 # /proc/PID/task/PID/children is a list of words (pids)
set -u
set -o pipefail

LAB_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SCENARIOS_DIR=$LAB_SRC/scenarios
SYS_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH=$SYS_PATH:$PATH

die() { echo "lab.sh: $*" >&2; exit 1; }
usage() { sed -n '5,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

abspath() { # absolute path, without requiring it to exist
	case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac | sed -E 's#/+#/#g; s#/\./#/#g; s#/\.$##; s#(.)/$#\1#'
}

lab_dir() { # DIR argument of an existing lab
	local d
	d=$(abspath "$1")
	[ -d "$d" ] || die "no lab at $d"
	[ -f "$d/lab.id" ] || die "$d is not a lab directory (no lab.id)"
	(cd "$d" && pwd -P)
}

node_dir() { # DIR NAME -> DIR/nodes/NAME (must exist)
	[ -d "$1/nodes/$2" ] || die "no node '$2' in lab $1 (nodes: $(ls "$1/nodes" 2>/dev/null | tr '\n' ' '))"
	printf '%s\n' "$1/nodes/$2"
}

# True if PID is alive and its command line contains STRING (so we only ever signal
# processes that belong to this lab).
pid_has() {
	local pid=$1 want=$2 argv=()
	[ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
	mapfile -d '' -t argv <"/proc/$pid/cmdline" 2>/dev/null || return 1
	[[ " ${argv[*]} " == *"$want"* ]]
}
proc_dead() { # gone or zombie
	local stat
	{ read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 0
	stat=${stat##*) }
	[ "${stat%% *}" = Z ]
}

wait_for() { # wait_for TIMEOUT_S COMMAND... : poll every 20ms
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt "$deadline" ] || return 1
		sleep 0.02
	done
}

# --- scenarios ---------------------------------------------------------------------
scenario_dir() {
	local s=$1
	case $s in
	*/*) [ -f "$s/scenario.env" ] || die "scenario $s: no scenario.env"; (cd "$s" && pwd) ;;
	*)
		[ -f "$SCENARIOS_DIR/$s/scenario.env" ] ||
			die "unknown scenario '$s' (known: $(ls "$SCENARIOS_DIR" | tr '\n' ' '))"
		printf '%s\n' "$SCENARIOS_DIR/$s"
		;;
	esac
}

# Prints the scenario directories of S and its LAB_BASE ancestors, base first.
scenario_chain() {
	local d chain=() base depth=0
	d=$(scenario_dir "$1") || exit 1
	while :; do
		chain=("$d" "${chain[@]}")
		base=$(LAB_BASE="" && . "$d/scenario.env" >/dev/null && printf '%s' "${LAB_BASE-}") ||
			die "scenario $d: scenario.env failed"
		[ -n "$base" ] || break
		depth=$((depth + 1))
		[ $depth -lt 8 ] || die "scenario $1: LAB_BASE chain too deep (cycle?)"
		d=$(cd "$d" && scenario_dir "$base") || exit 1
	done
	printf '%s\n' "${chain[@]}"
}

LAB_VARS="LAB_FLAVOUR LAB_SSH_USER LAB_SYSCTL LAB_UNITS_ACTIVE LAB_UNITS_INACTIVE LAB_UNITS_DISABLED LAB_NODELOCALDNS LAB_KUBELET_BIN LAB_DELETE LAB_UPSTREAM_DNS"

# Writes the flattened settings of a scenario chain (later scenarios override earlier).
scenario_env() {
	local dirs=("$@")
	(
		# shellcheck disable=SC2034 # printed by declare -p below
		LAB_FLAVOUR=ns LAB_SSH_USER=root LAB_SYSCTL="" LAB_UNITS_ACTIVE="" LAB_UNITS_INACTIVE="" LAB_UNITS_DISABLED="" \
			LAB_NODELOCALDNS="" LAB_KUBELET_BIN=/usr/local/bin/kubelet LAB_DELETE="" \
			LAB_UPSTREAM_DNS="192.0.2.53 198.51.100.53"
		for d in "${dirs[@]}"; do
			LAB_BASE=""
			# shellcheck disable=SC1091
			. "$d/scenario.env" || exit 1
		done
		# shellcheck disable=SC2086
		declare -p $LAB_VARS
	)
}

# --- the systemd flavour's root filesystem ------------------------------------------
# A debootstrapped Debian, built once per machine and cached; every systemd node boots an
# overlay of it (systemd-node.sh). The directory name carries a hash of the recipe, so a
# change here builds a new one beside the old (old ones are not removed automatically).
ROOTFS_SUITE=bookworm
ROOTFS_PACKAGES=systemd,systemd-sysv,systemd-resolved,dbus,openssh-server,iproute2,procps,kmod,curl,dnsmasq-base
ROOTFS_RECIPE=1 # bump when the build steps in cmd_rootfs change
LAB_CACHE=${DNSFIX_LAB_CACHE:-/var/cache/dnsfix-lab}
LAB_MIRROR=${DNSFIX_LAB_MIRROR:-http://deb.debian.org/debian}

rootfs_path() {
	local key
	key=$(printf '%s\n' "$ROOTFS_SUITE" "$ROOTFS_PACKAGES" "$ROOTFS_RECIPE" | sha256sum | cut -c1-12)
	printf '%s/rootfs-%s-%s\n' "$LAB_CACHE" "$ROOTFS_SUITE" "$key"
}

umount_below() { # DIR: unmount everything mounted at or below DIR (deepest first)
	awk -v d="$1" '{ if ($5 == d || index($5, d "/") == 1) print $5 }' /proc/self/mountinfo | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null; done
}

cmd_rootfs() {
	local build=0 root tmp t0
	case ${1-} in --build) build=1 ;; "") ;; *) usage ;; esac
	root=$(rootfs_path)
	if [ -d "$root" ]; then echo "$root"; return 0; fi
	[ $build = 1 ] || die "no systemd rootfs at $root: build it once with 'lab.sh rootfs --build' (root, debootstrap, about a minute with $LAB_MIRROR reachable)"
	[ "$(id -u)" = 0 ] || die "building the rootfs needs root"
	command -v debootstrap >/dev/null || die "debootstrap not found: apt-get install debootstrap"
	command -v flock >/dev/null || die "flock not found: apt-get install util-linux"
	mkdir -p "$LAB_CACHE" || die "cannot create $LAB_CACHE"
	exec 8>"$LAB_CACHE/.lock"
	flock 8 || die "cannot lock $LAB_CACHE/.lock"
	if [ -d "$root" ]; then echo "$root"; return 0; fi # built while we waited
	tmp=$root.build
	# A build that was killed may have left debootstrap's /proc, /sys mounts behind.
	umount_below "$tmp"
	rm -rf --one-file-system "$tmp"
	t0=$SECONDS
	echo "lab.sh: building $root (debootstrap $ROOTFS_SUITE from $LAB_MIRROR)" >&2
	if ! debootstrap --variant=minbase --include="$ROOTFS_PACKAGES" "$ROOTFS_SUITE" "$tmp" "$LAB_MIRROR" \
		>"$LAB_CACHE/build.log" 2>&1; then
		umount_below "$tmp"
		die "debootstrap failed (whole log: $LAB_CACHE/build.log):
$(tail -n 15 "$LAB_CACHE/build.log")"
	fi
	umount_below "$tmp"
	# Per node at start: host keys, machine id (an empty file: systemd makes one at boot).
	rm -f "$tmp"/etc/ssh/ssh_host_*
	: >"$tmp/etc/machine-id"
	rm -rf "$tmp"/var/cache/apt/archives/*.deb "$tmp"/var/lib/apt/lists/* "$tmp"/var/log/journal/*
	printf 'suite=%s\npackages=%s\nrecipe=%s\nmirror=%s\nbuilt=%s\nseconds=%s\n' "$ROOTFS_SUITE" \
		"$ROOTFS_PACKAGES" "$ROOTFS_RECIPE" "$LAB_MIRROR" "$(date -u +%FT%TZ)" "$((SECONDS - t0))" >"$root.info"
	mv "$tmp" "$root" || die "cannot move $tmp to $root"
	echo "lab.sh: built $root in $((SECONDS - t0))s" >&2
	echo "$root"
}

preflight_systemd() {
	command -v systemd-nspawn >/dev/null || die "systemd-nspawn not found (the systemd flavour boots nodes with it): apt-get install systemd-container"
	command -v systemctl >/dev/null || die "systemctl not found: apt-get install systemd"
	command -v chroot >/dev/null || die "chroot not found: apt-get install coreutils"
	[ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] ||
		[ "$(stat -f -c %T /sys/fs/cgroup/systemd 2>/dev/null)" = cgroupfs ] ||
		die "the systemd flavour needs cgroups: a cgroup v2 /sys/fs/cgroup or a name=systemd hierarchy at /sys/fs/cgroup/systemd (found neither)"
	LAB_ROOTFS=$(cmd_rootfs) || exit 1
}

# --- up ----------------------------------------------------------------------------
preflight() {
	[ "$(id -u)" = 0 ] || die "lab needs root (it creates network, mount and PID namespaces)"
	[ -x /usr/sbin/sshd ] || die "sshd not found at /usr/sbin/sshd: apt-get install openssh-server"
	command -v ssh-keygen >/dev/null || die "ssh-keygen not found: apt-get install openssh-client"
	command -v socat >/dev/null || die "socat not found: apt-get install socat"
	command -v ip >/dev/null || die "ip not found: apt-get install iproute2"
	command -v ss >/dev/null || die "ss not found: apt-get install iproute2"
	command -v unshare >/dev/null && command -v nsenter >/dev/null || die "unshare/nsenter not found: apt-get install util-linux"
	command -v cc >/dev/null || die "cc not found (builds the kubelet stand-in): apt-get install gcc libc6-dev"
	command -v setsid >/dev/null || die "setsid not found: apt-get install util-linux"
	[ -d /proc/sys/net ] || die "/proc/sys/net missing"
	grep -qw overlay /proc/filesystems || die "overlayfs not available in this kernel (needed for the nodes' /etc, /usr, /var)"
}

write_sshd_config() { # N NAME
	local n=$1 name=$2
	cat >"$n/sshd_config" <<EOF
# sshd of dnsfix lab node $name (tests/lab/lab.sh). It runs inside the node's network,
# mount and PID namespaces and is reached through a forwarder on the host's 127.0.0.1.
ListenAddress 127.0.0.1:22
HostKey $n/ssh_host_ed25519_key
HostKey $n/ssh_host_ecdsa_key
PidFile $n/sshd.pid
AuthorizedKeysFile /etc/ssh/lab_authorized_keys
UsePAM no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
StrictModes no
UseDNS no
PrintMotd no
PrintLastLog no
X11Forwarding no
MaxStartups 200
MaxSessions 100
LogLevel VERBOSE
AcceptEnv LANG LC_*
Subsystem sftp internal-sftp
EOF
	[ "$SSHD_PENALTIES" = supported ] && echo "PerSourcePenalties no" >>"$n/sshd_config"
	return 0
}

# Starts the host-side forwarder 127.0.0.1:PORT -> node socket. PORT given: only that
# one; else random free ports are tried.
start_forwarder() { # N [PORT]
	local n=$1 want=${2-} port pid sock
	sock=$(cat "$n/sock")
	for _ in $(seq 1 40); do
		if [ -n "$want" ]; then port=$want; else port=$((20000 + RANDOM % 12000)); fi
		if [ -n "$(ss -Htln "sport = :$port" 2>/dev/null)" ]; then
			[ -n "$want" ] && { echo "port $port is in use" >&2; return 1; }
			continue
		fi
		: >"$n/fwd.log"
		setsid socat -d -d -lf "$n/fwd.log" "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork" "UNIX-CONNECT:$sock" \
			</dev/null >/dev/null 2>&1 &
		pid=$!
		if wait_for 5 fwd_settled "$n" "$pid"; then
			if grep -q 'listening on' "$n/fwd.log"; then
				echo "$pid" >"$n/fwd.pid"
				echo "$port" >"$n/port"
				return 0
			fi
		fi
		kill "$pid" 2>/dev/null
		[ -n "$want" ] && { echo "forwarder failed on port $port: $(tail -n 3 "$n/fwd.log")" >&2; return 1; }
	done
	echo "no free port found for the forwarder" >&2
	return 1
}
fwd_settled() { grep -q 'listening on' "$1/fwd.log" 2>/dev/null || ! kill -0 "$2" 2>/dev/null; }

ssh_banner() { # PORT -> first line the server sends
	timeout 5 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && IFS= read -r -t 4 line <&3 && printf "%s\n" "$line"' _ "$1" 2>/dev/null
}

node_settled() { [ -e "$1/ready" ] || [ -e "$1/failed" ] || ! kill -0 "$2" 2>/dev/null; }

# Builds one node (runs in the background, in parallel with the others). Writes N/up.ok
# or N/up.err.
build_node() { # DIR INDEX NAME
	local dir=$1 i=$2 name=$3 n upid init child port banner
	n=$dir/nodes/$name
	{
		ssh-keygen -q -t ed25519 -N '' -C "root@$name" -f "$n/ssh_host_ed25519_key" ||
			{ echo "ssh-keygen failed"; return 1; }
		# A second host key, as real servers have: a client that knows only this one (an
		# OpenSSH before 8.5 recorded ECDSA) must ask for it.
		ssh-keygen -q -t ecdsa -b 256 -N '' -C "root@$name" -f "$n/ssh_host_ecdsa_key" ||
			{ echo "ssh-keygen failed"; return 1; }
		if [ "$(cat "$n/flavour")" = systemd ]; then
			boot_systemd_node "$dir" "$name" || return 1
		else
		write_sshd_config "$n" "$name"
		setsid ip netns exec "$(cat "$n/netns")" \
			env -i PATH="$SYS_PATH" LANG=C.UTF-8 LAB_TRACE="${LAB_TRACE-}" \
			unshare --mount --uts --pid --fork --kill-child --mount-proc --propagation private \
			/bin/bash "$dir/lib/node-init.sh" "$dir" "$name" </dev/null >"$n/init.log" 2>&1 &
		upid=$!
		echo "$upid" >"$n/unshare.pid"
		if ! wait_for 60 node_settled "$n" "$upid" || [ ! -e "$n/ready" ]; then
			echo "node did not start: $(cat "$n/failed" 2>/dev/null)"
			echo "--- $n/init.log (tail)"; tail -n 25 "$n/init.log"
			[ -s "$n/sshd.log" ] && { echo "--- $n/sshd.log (tail)"; tail -n 10 "$n/sshd.log"; }
			return 1
		fi
		init=""
		for child in $(cat "/proc/$upid/task/$upid/children" 2>/dev/null); do init=$child; done
		[ -n "$init" ] || { echo "cannot find the node's init process (child of $upid)"; return 1; }
		echo "$init" >"$n/init.pid"
		fi
		start_forwarder "$n" || return 1
		port=$(cat "$n/port")
		banner=$(ssh_banner "$port")
		[[ $banner == SSH-2.0-* ]] || { echo "no SSH banner through 127.0.0.1:$port (got '$banner')"; tail -n 5 "$n/sshd.log"; return 1; }
		printf '[127.0.0.1]:%s %s\n' "$port" "$(cut -d' ' -f1,2 "$n/ssh_host_ed25519_key.pub")" >"$n/known_hosts_line"
		printf '[127.0.0.1]:%s %s\n' "$port" "$(cut -d' ' -f1,2 "$n/ssh_host_ecdsa_key.pub")" >"$n/known_hosts_line_ecdsa"
		touch "$n/up.ok"
	} >"$n/up.err" 2>&1
}

# A node of the systemd flavour: systemd-node.sh builds its root and runs systemd-nspawn
# (N/nspawn.pid), again after each reboot; nspawn's child is the node's systemd. Then
# wait for the boot to finish, and start the node side of the forwarder, in the node's
# network namespace but outside the container (sshd is the node's own ssh.service).
boot_systemd_node() { # DIR NAME
	local dir=$1 name=$2 n ns spid
	n=$dir/nodes/$name
	ns=$(cat "$n/netns")
	setsid nsenter --net="/run/netns/$ns" \
		env -i PATH="$SYS_PATH" LANG=C.UTF-8 LAB_TRACE="${LAB_TRACE-}" \
		unshare --mount --propagation private \
		/bin/bash "$dir/lib/systemd-node.sh" "$dir" "$name" </dev/null >"$n/init.log" 2>&1 &
	spid=$!
	echo "$spid" >"$n/node.pid"
	wait_for 60 systemd_node_settled "$n" 1 || { echo "node did not start"; tail -n 25 "$n/init.log"; return 1; }
	systemd_node_ready "$n" || return 1
	setsid nsenter --net="/run/netns/$ns" \
		socat -lf "$n/socat.log" "UNIX-LISTEN:$(cat "$n/sock"),fork,unlink-early,mode=0600" TCP:127.0.0.1:22 \
		</dev/null >/dev/null 2>&1 &
	echo $! >"$n/nodefwd.pid"
	wait_for 10 test -S "$(cat "$n/sock")" || { echo "the node-side forwarder did not start: $(tail -n 3 "$n/socat.log")"; return 1; }
	return 0
}
# The boot that N/booting counts is under way (nspawn's child has exec'd systemd), or
# the node failed or its script ended (then systemd_node_ready says why).
systemd_node_settled() { # N BOOT
	local spid npid c
	spid=$(cat "$1/node.pid" 2>/dev/null)
	# proc_dead, not pid_has: until setsid has exec'd, the child's command line is lab.sh's.
	[ -e "$1/failed" ] || proc_dead "$spid" || {
		[ "$(cat "$1/booting" 2>/dev/null)" = "$2" ] || return 1
		npid=$(cat "$1/nspawn.pid" 2>/dev/null)
		# nspawn's first child is a short-lived helper (the "outer child"); the container's
		# init is the one that has exec'd systemd.
		c=$(nspawn_child "$npid")
		[ -n "$c" ] && [ "$(cat "/proc/$c/comm" 2>/dev/null)" = systemd ]
	}
}
nspawn_child() { # NSPAWN_PID -> pid of its (only) child, the container's init
	local c
	for c in $(cat "/proc/$1/task/$1/children" 2>/dev/null); do echo "$c"; return 0; done
}
# After systemd_node_settled: the boot is over, every enabled LAB_UNITS_ACTIVE unit is
# active, the kubelet serves its healthz and sshd listens; N/init.pid is the node's
# systemd. Says what is wrong otherwise. With UNITS=any, the units are not waited for
# (a boot a test broke on purpose: a kubelet that cannot start).
systemd_node_ready() { # N [UNITS]
	local n=$1 units=${2:-} npid init state u i
	npid=$(cat "$n/nspawn.pid" 2>/dev/null)
	if [ -e "$n/failed" ] || ! pid_has "$npid" "systemd-nspawn --directory=$n/root"; then
		echo "node did not start: $(cat "$n/failed" 2>/dev/null)"
		echo "--- $n/init.log (tail)"; tail -n 25 "$n/init.log"
		return 1
	fi
	init=$(nspawn_child "$npid")
	echo "$init" >"$n/init.pid"
	# "running", or "degraded" with failed units; --wait returns once start-up is over
	# (asked once systemd listens: before, systemctl reports "offline").
	wait_for 30 in_node "$n" test -S /run/systemd/private ||
		{ echo "systemd in the node did not come up"; tail -n 25 "$n/init.log"; return 1; }
	state=$(timeout 90 nsenter -t "$init" -m -u -i -n -p -C -- env -i PATH="$SYS_PATH" systemctl is-system-running --wait 2>&1)
	# A boot broken on purpose may fail a unit: "degraded" is over, too.
	if [ "$state" = degraded ] && [ "$units" = any ]; then
		echo "systemd in the node is degraded (LAB_REBOOT_UNITS=any):" >&2
		in_node "$n" systemctl --failed --no-pager --no-legend >&2
	elif [ "$state" != running ]; then
		echo "systemd in the node is '$state', not running"
		in_node "$n" systemctl --failed --no-pager --no-legend 2>&1
		in_node "$n" journalctl -b --no-pager -n 30 -p warning 2>&1
		echo "--- $n/init.log (tail)"; tail -n 25 "$n/init.log"
		return 1
	fi
	[ "$units" = any ] && set --
	# shellcheck disable=SC2046 # LAB_UNITS_ACTIVE is a list of words
	[ "$units" = any ] || set -- $(. "$n/node.env" && echo "$LAB_UNITS_ACTIVE")
	for u; do
		case $u in *.*) ;; *) u=$u.service ;; esac
		[ "$(in_node "$n" systemctl show -p LoadState --value "$u")" = loaded ] || continue
		# One the node's own admin disabled or masked since (tests do) is not started.
		case $(in_node "$n" systemctl is-enabled "$u" 2>/dev/null) in disabled | masked*) continue ;; esac
		in_node "$n" systemctl is-active -q "$u" || {
			echo "$u is $(in_node "$n" systemctl is-active "$u") in the node"
			in_node "$n" journalctl -b --no-pager -n 20 -u "$u" 2>&1
			return 1
		}
		if [ "$u" = kubelet.service ]; then
			# Type=simple: active at once; ready once it serves its healthz.
			for ((i = 0; i < 500; i++)); do
				in_node "$n" grep -q '^ *[0-9]*: 0100007F:2808 00000000:0000 0A' /proc/net/tcp && break
				sleep 0.02
			done
			[ $i -lt 500 ] || {
				echo "the kubelet does not serve 127.0.0.1:10248 in the node"
				in_node "$n" journalctl -b --no-pager -n 20 -u "$u" 2>&1
				return 1
			}
		fi
	done
	wait_for 30 in_node "$n" sh -c 'ss -Htln "sport = :22" | grep -q .' ||
		{ echo "sshd does not listen in the node"; in_node "$n" journalctl -b --no-pager -n 20 -u ssh.service 2>&1; return 1; }
	return 0
}

write_outputs() { # DIR NAMES...
	local dir=$1 name n port user scenario first=1
	shift
	: >"$dir/known_hosts"
	printf '# name\tport\tnetns\tscenario\tssh_user\n' >"$dir/nodes.tsv"
	{
		echo "# dnsfix lab $dir (tests/lab/lab.sh). Use: ssh -F $dir/ssh_config NAME"
		echo
	} >"$dir/ssh_config"
	for name in "$@"; do
		n=$dir/nodes/$name
		port=$(cat "$n/port") user=$(cat "$n/user") scenario=$(cat "$n/scenario")
		cat "$n/known_hosts_line" >>"$dir/known_hosts"
		printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$port" "$(cat "$n/netns")" "$scenario" "$user" >>"$dir/nodes.tsv"
		cat >>"$dir/ssh_config" <<EOF
Host $name
  HostName 127.0.0.1
  Port $port
  User $user
  IdentityFile $dir/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $dir/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  UpdateHostKeys no
  BatchMode yes
  ConnectTimeout 10

EOF
	done
	{
		echo "# Kubespray-style YAML inventory of dnsfix lab $dir (tests/lab/lab.sh)."
		echo "# Every node is reached through its own port on 127.0.0.1."
		echo "all:"
		echo "  hosts:"
		for name in "$@"; do
			n=$dir/nodes/$name
			echo "    $name:"
			echo "      ansible_host: 127.0.0.1"
			echo "      ansible_port: $(cat "$n/port")"
			echo "      ansible_user: $(cat "$n/user")"
			[ "$(cat "$n/user")" = root ] || echo "      ansible_become: true"
			echo "      ansible_ssh_private_key_file: $dir/id_ed25519"
			echo "      lab_scenario: $(cat "$n/scenario")"
			# This node stands for one where nothing turns forwarding on at boot: no kube-proxy
			# in ipvs mode (which would set it at every start), as the group's default says.
			if [ "$(cat "$n/scenario")" = systemd-hardened-forwarding ]; then
				echo "      kube_proxy_mode: iptables"
			fi
		done
		echo "  children:"
		echo "    kube_control_plane:"
		echo "      hosts:"
		for name in "$@"; do
			[ $first = 1 ] && echo "        $name:"
			first=0
		done
		echo "    etcd:"
		echo "      hosts:"
		echo "        $1:"
		echo "    kube_node:"
		echo "      hosts:"
		for name in "$@"; do echo "        $name:"; done
		echo "    k8s_cluster:"
		echo "      children:"
		echo "        kube_control_plane:"
		echo "        kube_node:"
		echo "  vars:"
		echo "    dns_domain: cluster.local"
		echo "    kube_service_addresses: 10.233.0.0/18"
		echo "    kube_proxy_mode: ipvs"
		echo "    enable_nodelocaldns: true"
		echo "    nodelocaldns_ip: 169.254.25.10"
	} >"$dir/inventory.yaml"
}

cmd_up() {
	local owner="" dir arg scen name count i k specs=() names=() scens=() pids=() failed=0 t0 systemd_nodes=0
	while [ $# -gt 0 ]; do
		case $1 in
		--owner) owner=${2-}; shift 2 ;;
		--owner=*) owner=${1#*=}; shift ;;
		-h | --help) usage ;;
		*) break ;;
		esac
	done
	[ $# -ge 2 ] || usage
	preflight
	dir=$(abspath "$1")
	shift
	case $dir/ in /proc/* | /sys/* | /dev/* | /run/*) die "lab dir $dir: must not be under /proc, /sys, /dev or /run" ;; esac
	if [ -e "$dir" ]; then
		[ -d "$dir" ] && [ -z "$(ls -A "$dir")" ] || die "lab dir $dir exists and is not empty"
	fi
	[ ${#dir} -le 90 ] || die "lab dir path too long (${#dir} > 90 chars; unix socket paths must stay short)"

	# Expand the node specs.
	for arg in "$@"; do
		case $arg in
		*'*'*)
			scen=${arg%%\**} count=${arg#*\*}
			[[ $count =~ ^[0-9]+$ ]] && [ "$count" -ge 1 ] || die "bad repetition '$arg' (use SCENARIO*COUNT)"
			for ((k = 0; k < count; k++)); do specs+=("$scen:"); done
			;;
		*:*) specs+=("$arg") ;;
		*) specs+=("$arg:") ;;
		esac
	done
	i=0
	declare -A scen_env=() scen_chain=()
	for arg in "${specs[@]}"; do
		i=$((i + 1))
		scen=${arg%:*} name=${arg##*:}
		if [ -z "${scen_env[$scen]+x}" ]; then
			local chain=()
			mapfile -t chain < <(scenario_chain "$scen")
			[ ${#chain[@]} -gt 0 ] || exit 1
			scen_env[$scen]=$(scenario_env "${chain[@]}") || die "scenario $scen: scenario.env failed"
			scen_chain[$scen]=$(printf '%s\n' "${chain[@]}")
		fi
		case $(eval "${scen_env[$scen]}" && echo "$LAB_FLAVOUR") in
		ns) ;;
		systemd) systemd_nodes=1 ;;
		*) die "scenario $scen: unknown LAB_FLAVOUR (ns or systemd)" ;;
		esac
		[ -n "$name" ] || name=node$i-$(basename "$scen")
		[[ $name =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] || die "bad node name '$name'"
		for k in "${names[@]}"; do [ "$k" != "$name" ] && continue; die "duplicate node name '$name'"; done
		names+=("$name") scens+=("$scen")
	done

	LAB_ROOTFS=""
	[ $systemd_nodes = 1 ] && preflight_systemd

	t0=$(date +%s%N)
	[ -e "$dir" ] || UP_CREATED_DIR=1
	mkdir -p "$dir" || die "cannot create $dir"
	dir=$(cd "$dir" && pwd -P)
	LAB_ID=$(printf '%s %s %s %s' "$dir" "$$" "$t0" "$RANDOM" | sha256sum | cut -c1-8)
	echo "$LAB_ID" >"$dir/lab.id"
	# From here on, any failure tears the lab down again.
	trap 'up_fail "$dir" "interrupted"' INT TERM
	mkdir -p "$dir/nodes" "$dir/sock" "$dir/lib"
	cp "$LAB_SRC/node-prologue.sh" "$LAB_SRC/node-init.sh" "$LAB_SRC/systemd-node.sh" "$LAB_SRC/standins/systemctl" "$LAB_SRC/standins/kubelet-check" "$LAB_SRC/standins/kubectl" "$LAB_SRC/standins/configmaps.json" "$dir/lib/" &&
		chmod 0755 "$dir/lib/"* || up_fail "$dir" "cannot copy the lab scripts"
	cc -O2 -Wall -o "$dir/lib/kubelet" "$LAB_SRC/standins/kubelet.c" 2>"$dir/lib/cc.log" ||
		up_fail "$dir" "cannot compile the kubelet stand-in: $(cat "$dir/lib/cc.log")"
	# systemd nodes run it on their own Debian, whose libc need not be the host's.
	if [ $systemd_nodes = 1 ]; then
		cc -O2 -Wall -static -o "$dir/lib/kubelet-static" "$LAB_SRC/standins/kubelet.c" 2>"$dir/lib/cc.log" ||
			up_fail "$dir" "cannot compile the kubelet stand-in statically (libc6-dev has libc.a): $(cat "$dir/lib/cc.log")"
	fi
	# Snapshot the scenarios into the lab: nodes see DIR, not necessarily the originals
	# (a node's /tmp is its own), and the lab keeps what it started with.
	declare -A snap=()
	k=0
	for scen in "${!scen_chain[@]}"; do
		while IFS= read -r d; do
			[ -n "${snap[$d]+x}" ] && continue
			k=$((k + 1))
			snap[$d]=$dir/scenarios/$k-$(basename "$d")
			mkdir -p "$dir/scenarios" && cp -R -P --preserve=mode,timestamps "$d" "${snap[$d]}" ||
				up_fail "$dir" "cannot copy scenario $d"
		done <<<"${scen_chain[$scen]}"
	done
	ssh-keygen -q -t ed25519 -N '' -C "dnsfix-lab" -f "$dir/id_ed25519" || up_fail "$dir" "ssh-keygen failed"
	# OpenSSH >= 9.8 penalises sources that fail or drop connections; every lab connection
	# comes from 127.0.0.1, so that must be off where it exists.
	SSHD_PENALTIES=supported
	case $(/usr/sbin/sshd -t -f /dev/null -h "$dir/id_ed25519" -o PerSourcePenalties=no 2>&1) in
	*"Bad configuration option"*) SSHD_PENALTIES=unsupported ;;
	esac
	[ -n "$owner" ] && { echo "$owner $(proc_start "$owner")" >"$dir/owner"; }

	# Per node: settings, network namespace (created serially: ip netns add is racy on a
	# fresh /run/netns), then build all nodes in parallel.
	for i in "${!names[@]}"; do
		name=${names[$i]}
		local n=$dir/nodes/$name ns
		mkdir -p "$n"
		{
			printf '%s\nLAB_NODE_IP=192.0.2.%s\nLAB_ROOTFS=%q\nLAB_SCENARIO_DIRS=(' "${scen_env[${scens[$i]}]}" "$((11 + i % 240))" "$LAB_ROOTFS"
			while IFS= read -r d; do printf '%q ' "${snap[$d]}"; done <<<"${scen_chain[${scens[$i]}]}"
			printf ')\n'
		} >"$n/node.env"
		(. "$n/node.env" && echo "$LAB_SSH_USER") >"$n/user"
		(. "$n/node.env" && echo "$LAB_FLAVOUR") >"$n/flavour"
		basename "${scens[$i]}" >"$n/scenario"
		echo "$dir/sock/$((i + 1))" >"$n/sock"
		ns=dfx-$LAB_ID-$((i + 1))
		echo "$ns" >"$n/netns"
		ip netns add "$ns" 2>"$n/netns.err" || up_fail "$dir" "ip netns add $ns failed: $(cat "$n/netns.err")"
		ip -n "$ns" link set lo up || up_fail "$dir" "cannot bring lo up in $ns"
	done
	for i in "${!names[@]}"; do
		build_node "$dir" "$((i + 1))" "${names[$i]}" &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do wait "${pids[$i]}"; done
	for name in "${names[@]}"; do
		if [ ! -e "$dir/nodes/$name/up.ok" ]; then
			echo "lab.sh: node $name ($(cat "$dir/nodes/$name/scenario")) failed:" >&2
			sed 's/^/  /' "$dir/nodes/$name/up.err" >&2
			failed=1
		fi
	done
	[ $failed = 0 ] || up_fail "$dir" "lab did not start (see above)"
	write_outputs "$dir" "${names[@]}"
	if [ -n "$owner" ]; then
		setsid bash "${BASH_SOURCE[0]}" _watch "$dir" </dev/null >/dev/null 2>&1 &
		echo $! >"$dir/watch.pid"
	fi
	echo "$(( ($(date +%s%N) - t0) / 1000000 ))" >"$dir/startup_ms"
	trap - INT TERM
}

up_fail() { # DIR MESSAGE
	echo "lab.sh: $2" >&2
	if [ -n "${LAB_KEEP_ON_FAILURE-}" ]; then
		echo "lab.sh: LAB_KEEP_ON_FAILURE set: lab left at $1 (run: lab.sh down $1)" >&2
	elif [ -n "${UP_CREATED_DIR-}" ]; then
		teardown "$1"
	else
		teardown "$1" keep-dir
	fi
	exit 1
}

proc_start() { # start time of PID (field 22 of /proc/PID/stat), or empty
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	s=${s##*) }
	echo "$s" | awk '{print $20}'
}

# --- down --------------------------------------------------------------------------
# Stops every process of the lab and deletes its namespaces. "keep-dir": empty DIR but
# keep it (up failed on a directory the caller gave us).
teardown() { # DIR [keep-dir]
	local dir=$1 mode=${2-} id n ns pid pids=() p cg
	id=$(cat "$dir/lab.id" 2>/dev/null)
	# The watcher first, unless we are the watcher.
	pid=$(cat "$dir/watch.pid" 2>/dev/null)
	[ -n "$pid" ] && [ "$pid" != "$$" ] && pid_has "$pid" "_watch $dir" && kill "$pid" 2>/dev/null
	# The scripts that boot systemd nodes, before anything else: one between two boots
	# would start a new systemd-nspawn after the processes below were listed.
	for n in "$dir"/nodes/*/; do
		pid=$(cat "$n/node.pid" 2>/dev/null)
		[ -n "$pid" ] && pid_has "$pid" "systemd-node.sh $dir " || continue
		kill -9 "$pid" 2>/dev/null
		for _ in $(seq 1 100); do proc_dead "$pid" && break; sleep 0.02; done
	done
	for n in "$dir"/nodes/*/; do
		[ -d "$n" ] || continue
		n=${n%/}
		pid=$(cat "$n/fwd.pid" 2>/dev/null)
		[ -n "$pid" ] && pid_has "$pid" "UNIX-CONNECT:$dir/" && kill -9 "$pid" 2>/dev/null
		ns=$(cat "$n/netns" 2>/dev/null)
		[ -n "$ns" ] && for p in $(ip netns pids "$ns" 2>/dev/null); do pids+=("$p"); done
		for f in unshare.pid init.pid; do
			pid=$(cat "$n/$f" 2>/dev/null)
			[ -n "$pid" ] && pid_has "$pid" "node-init.sh $dir " && pids+=("$pid")
		done
		# systemd nodes: nspawn and everything in the node's cgroups (all of it is in the
		# network namespace too, but be thorough).
		pid=$(cat "$n/nspawn.pid" 2>/dev/null)
		[ -n "$pid" ] && pid_has "$pid" "systemd-nspawn --directory=$n/root" && pids+=("$pid")
		for cg in $(node_cgroups "$n" "$id"); do
			while read -r p; do pids+=("$p"); done < <(find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null)
		done
	done
	# Forwarders whose pid file was never written (up interrupted).
	for p in /proc/[0-9]*; do
		pid=${p#/proc/}
		[ "$pid" = "$$" ] && continue
		pid_has "$pid" "UNIX-CONNECT:$dir/sock/" && pids+=("$pid")
	done
	[ ${#pids[@]} -gt 0 ] && kill -9 "${pids[@]}" 2>/dev/null
	for _ in $(seq 1 100); do
		local alive=0
		for p in "${pids[@]}"; do proc_dead "$p" || alive=1; done
		[ $alive = 0 ] && break
		sleep 0.02
	done
	# The systemd nodes' cgroups, deepest first (they are empty now).
	for n in "$dir"/nodes/*/; do
		for cg in $(node_cgroups "${n%/}" "$id"); do
			for _ in $(seq 1 50); do # a cgroup stays busy until its last process is reaped
				[ -d "$cg" ] || break
				find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
				[ -d "$cg" ] && sleep 0.02
			done
		done
	done
	# Namespaces: the ones we recorded, plus any with this lab's id (a half-built node).
	for n in "$dir"/nodes/*/; do
		ns=$(cat "$n/netns" 2>/dev/null) && [ -n "$ns" ] && ip netns del "$ns" 2>/dev/null
	done
	if [ -n "$id" ]; then
		for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
			case $ns in dfx-"$id"-*) ip netns del "$ns" 2>/dev/null ;; esac
		done
	fi
	# Nothing is mounted on the host by the lab, but be thorough.
	awk -v d="$dir/" '{ if (index($5, d) == 1) print $5 }' /proc/self/mountinfo | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null; done
	if [ "$mode" = keep-dir ]; then
		find "$dir" -mindepth 1 -maxdepth 1 -exec rm -rf {} + 2>/dev/null
	else
		rm -rf "$dir"
	fi
}

node_cgroups() { # N LAB_ID -> the node's cgroup directories, those this lab made
	node_cgroup "$1" "$2" cgroup
	node_cgroup "$1" "$2" cgroup-unified
}
node_cgroup() { # N LAB_ID FILE -> the cgroup directory N/FILE names, if it is one this lab made
	local cg
	cg=$(cat "$1/$3" 2>/dev/null) || return 0
	case $cg in /sys/fs/cgroup/*/dfx-"$2"-[0-9]* | /sys/fs/cgroup/dfx-"$2"-[0-9]*) ;; *) return 0 ;; esac
	case $cg in *..*) return 0 ;; esac
	echo "$cg"
}

cmd_down() {
	[ $# -eq 1 ] || usage
	local dir
	dir=$(abspath "$1")
	[ -e "$dir" ] || return 0
	[ -f "$dir/lab.id" ] || {
		[ -d "$dir" ] && [ -z "$(ls -A "$dir")" ] && { rmdir "$dir"; return 0; }
		die "$dir is not a lab directory (no lab.id); refusing to delete it"
	}
	[ "$(id -u)" = 0 ] || die "lab needs root"
	teardown "$(cd "$dir" && pwd -P)"
}

cmd_watch() { # internal: tear the lab down when its owner process is gone
	local dir=$1 pid start
	read -r pid start <"$dir/owner" || exit 0
	while [ -f "$dir/lab.id" ]; do
		if [ ! -e "/proc/$pid" ] || [ "$(proc_start "$pid")" != "$start" ]; then
			teardown "$dir"
			exit 0
		fi
		sleep 1
	done
}

# --- node operations ---------------------------------------------------------------
is_systemd_node() { [ "$(cat "$1/flavour" 2>/dev/null)" = systemd ]; }

node_init_pid() { # N -> host pid of the node's init (systemd nodes: the container's systemd)
	local n=$1 pid
	pid=$(cat "$n/init.pid" 2>/dev/null)
	if is_systemd_node "$n"; then
		local npid
		npid=$(cat "$n/nspawn.pid" 2>/dev/null)
		pid_has "$npid" "systemd-nspawn" && [ -n "$pid" ] && [ "$(nspawn_child "$npid")" = "$pid" ] ||
			die "node $(basename "$n") is not running"
	else
		pid_has "$pid" "node-init.sh" || die "node $(basename "$n") is not running"
	fi
	echo "$pid"
}

in_node() { # N CMD... : run as root inside the node
	local pid ns=(-m -u -n -p --wd=/)
	pid=$(node_init_pid "$1") || exit 1
	# The container's root and working directory (/); --wd=DIR would be opened outside it.
	is_systemd_node "$1" && ns=(-m -u -i -n -p -C --root --wdns=/)
	shift
	nsenter -t "$pid" "${ns[@]}" -- env -i PATH="$SYS_PATH" HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" "$@"
}

sshd_running() {
	if is_systemd_node "$1"; then in_node "$1" systemctl is-active -q ssh.service; return; fi
	in_node "$1" sh -c '[ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null' _ "$1/sshd.pid"
}
sshd_pid() { # N: main pid of the node's sshd
	if is_systemd_node "$1"; then in_node "$1" systemctl show -p MainPID --value ssh.service; else cat "$1/sshd.pid"; fi
}
sshd_listening() { grep -q 'Server listening on 127.0.0.1 port 22' "$1/sshd.log" 2>/dev/null; }

stop_sshd() { # N
	local n=$1
	if is_systemd_node "$n"; then
		in_node "$n" sh -c 'kill -CONT "$(systemctl show -p MainPID --value ssh.service)" 2>/dev/null; systemctl stop ssh.service'
		return
	fi
	in_node "$n" sh -c 'p=$(cat "$1" 2>/dev/null) || exit 0; kill -CONT "$p" 2>/dev/null; kill "$p" 2>/dev/null
		i=0; while kill -0 "$p" 2>/dev/null && [ $i -lt 150 ]; do sleep 0.02; i=$((i+1)); done
		kill -9 "$p" 2>/dev/null; rm -f "$1"; exit 0' _ "$n/sshd.pid"
}

start_sshd() { # N
	local n=$1
	sshd_running "$n" && return 0
	if is_systemd_node "$n"; then
		in_node "$n" systemctl start ssh.service || die "sshd of $(basename "$n") did not start"
		wait_for 10 in_node "$n" sh -c 'ss -Htln "sport = :22" | grep -q .' || die "sshd of $(basename "$n") does not listen"
		return 0
	fi
	sed -i 's/Server listening on/Server was listening on/' "$n/sshd.log"
	in_node "$n" sh -c 'setsid /usr/sbin/sshd -D -e -f "$1/sshd_config" </dev/null >>"$1/sshd.log" 2>&1 &' _ "$n"
	wait_for 10 sshd_listening "$n" || die "sshd of $(basename "$n") did not start: $(tail -n 5 "$n/sshd.log")"
}

cmd_node() { # stop|start|rekey|reboot|freeze|thaw DIR NAME
	local verb=$1 dir n pid boot out
	[ $# -eq 3 ] || usage
	dir=$(lab_dir "$2")
	n=$(node_dir "$dir" "$3")
	case $verb in
	stop)
		stop_sshd "$n"
		pid=$(cat "$n/fwd.pid" 2>/dev/null)
		if [ -n "$pid" ] && pid_has "$pid" "UNIX-CONNECT:$dir/"; then
			kill -9 "$pid" 2>/dev/null
			# Its listening socket closes as it exits: until then a connect is accepted
			# and reset, not refused.
			wait_for 5 proc_dead "$pid" || die "the forwarder of $3 did not exit"
		fi
		rm -f "$n/fwd.pid"
		touch "$n/stopped"
		;;
	start)
		start_sshd "$n"
		pid=$(cat "$n/fwd.pid" 2>/dev/null)
		if ! { [ -n "$pid" ] && pid_has "$pid" "UNIX-CONNECT:$dir/"; }; then
			start_forwarder "$n" "$(cat "$n/port")" || die "cannot restart the forwarder of $3"
		fi
		rm -f "$n/stopped"
		;;
	rekey)
		rm -f "$n/ssh_host_ed25519_key" "$n/ssh_host_ed25519_key.pub"
		ssh-keygen -q -t ed25519 -N '' -C "root@$3" -f "$n/ssh_host_ed25519_key" || die "ssh-keygen failed"
		stop_sshd "$n"
		if is_systemd_node "$n"; then
			in_node "$n" sh -c 'umask 077 && cat >/etc/ssh/ssh_host_ed25519_key' <"$n/ssh_host_ed25519_key" &&
				in_node "$n" sh -c 'cat >/etc/ssh/ssh_host_ed25519_key.pub' <"$n/ssh_host_ed25519_key.pub" ||
				die "cannot install the new host key in $3"
		fi
		start_sshd "$n"
		printf '[127.0.0.1]:%s %s\n' "$(cat "$n/port")" "$(cut -d' ' -f1,2 "$n/ssh_host_ed25519_key.pub")" >"$n/known_hosts_line"
		;;
	reboot)
		is_systemd_node "$n" || die "reboot: $3 is a namespace node; only nodes of the systemd flavour boot"
		boot=$(cat "$n/booting")
		# --no-block: the shutdown may kill systemctl before it returns; the boot count
		# below says whether the node rebooted.
		in_node "$n" systemctl --no-block reboot || true
		wait_for 60 systemd_node_settled "$n" $((boot + 1)) || die "reboot: $3 did not boot again: $(tail -n 5 "$n/init.log")"
		out=$(systemd_node_ready "$n" "${LAB_REBOOT_UNITS-}") || die "reboot: $3 booted again but is not ready: $out"
		;;
	freeze) pid=$(sshd_pid "$n") && [ "${pid:-0}" != 0 ] && in_node "$n" kill -STOP "$pid" || die "no sshd to freeze on $3" ;;
	thaw) pid=$(sshd_pid "$n") && [ "${pid:-0}" != 0 ] && in_node "$n" kill -CONT "$pid" || die "no sshd to thaw on $3" ;;
	esac
}

# A login as slow as one to a node whose sshd waits on a broken resolver: the node's keys
# come from an AuthorizedKeysCommand that sleeps first (sshd checks the key twice per
# login: the offer, then the signature). Namespace nodes only.
cmd_slow_login() { # DIR NAME SECS
	local dir n keys
	[ $# -eq 3 ] || usage
	dir=$(lab_dir "$1")
	n=$(node_dir "$dir" "$2")
	case $3 in '' | *[!0-9]*) die "slow-login: SECS must be a whole number, not '$3'" ;; esac
	is_systemd_node "$n" && die "slow-login: $2 is a systemd node (namespace nodes only)"
	keys=/etc/ssh/lab_authorized_keys
	sed -i -e '/^AuthorizedKeysCommand/d' -e "s|^AuthorizedKeysFile .*|AuthorizedKeysFile $keys|" "$n/sshd_config"
	if [ "$3" != 0 ]; then
		sed -i "s|^AuthorizedKeysFile .*|AuthorizedKeysFile none|" "$n/sshd_config"
		printf 'AuthorizedKeysCommand /bin/sh -c "sleep %s; cat %s"\nAuthorizedKeysCommandUser root\n' "$3" "$keys" >>"$n/sshd_config"
	fi
	stop_sshd "$n"
	start_sshd "$n"
}

cmd_exec() { # DIR NAME -- CMD...
	local dir n
	[ $# -ge 3 ] || usage
	dir=$(lab_dir "$1")
	n=$(node_dir "$dir" "$2")
	shift 2
	[ "${1-}" = -- ] && shift
	[ $# -ge 1 ] || usage
	in_node "$n" "$@"
}

cmd_status() {
	local dir name port ns scen user n state
	dir=$(lab_dir "$1")
	while IFS=$'\t' read -r name port ns scen user; do
		case $name in '#'*) continue ;; esac
		n=$dir/nodes/$name
		if ! (node_init_pid "$n" >/dev/null 2>&1); then state=dead
		elif [ -e "$n/stopped" ]; then state=stopped
		else state=up; fi
		printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$port" "$scen" "$user" "$state"
	done <"$dir/nodes.tsv"
}

[ $# -ge 1 ] || usage
verb=$1
shift
case $verb in
up) cmd_up "$@" ;;
down) cmd_down "$@" ;;
stop | start | rekey | reboot | freeze | thaw) cmd_node "$verb" "$@" ;;
slow-login) cmd_slow_login "$@" ;;
exec) cmd_exec "$@" ;;
status) [ $# -eq 1 ] || usage; cmd_status "$1" ;;
_watch) cmd_watch "$@" ;;
rootfs) cmd_rootfs "$@" ;;
-h | --help | help) usage ;;
*) echo "lab.sh: unknown command '$verb'" >&2; usage ;;
esac
