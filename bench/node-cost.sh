#!/bin/bash
# What a command costs ON a lab node: processes started and CPU used by the node's side of
# the SSH session (sshd, the login shell and everything it runs), per run of the command
# against that node alone. See bench/README.md.
#
#   bench/node-cost.sh DIR NODE RUNS NAME COMMAND [NAME COMMAND ...]
#
# DIR is a running tests/lab lab, NODE one of its (namespace-flavour) nodes; each COMMAND
# (a bash command line) must reach NODE and nothing else. Needs root.
#
# * Processes: the node is a PID namespace of its own; its ns_last_pid (the last pid handed
#   out there) is read before and after each run, and the reader's own pids (measured with
#   no command in between) are taken off. Every process the session starts counts, forks
#   without an exec too.
# * CPU: the node's sshd listener is moved into a cpuacct (cgroup v1) or cgroup v2 group of
#   its own; every session it forks is born there, so the group's usage over a run is the
#   node side's CPU (user + system) for that run. It is moved back when done.
# * With strace installed, the programs one run executes on the node are listed too.
#
# Prints, per NAME, the medians over RUNS runs: processes and CPU ms per run.
set -u
set -o pipefail

if [ $# -lt 5 ] || [ $(($# % 2)) -ne 1 ]; then
	echo "usage: $0 DIR NODE RUNS NAME COMMAND [NAME COMMAND ...]" >&2
	exit 2
fi
DIR=$1 NODE=$2 RUNS=$3
shift 3
[ "$(id -u)" = 0 ] || { echo "node-cost.sh: needs root" >&2; exit 1; }
NS=$(awk -F'\t' -v n="$NODE" '$1 == n { print $3 }' "$DIR/nodes.tsv")
[ -n "$NS" ] || { echo "node-cost.sh: no node $NODE in $DIR" >&2; exit 1; }

# The node's sshd listener, as a host pid: the sshd in the node's network namespace whose
# parent is not an sshd.
SSHD=
for p in $(ip netns pids "$NS"); do
	[ "$(cat "/proc/$p/comm" 2>/dev/null)" = sshd ] || continue
	pp=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status")
	[ "$(cat "/proc/$pp/comm" 2>/dev/null)" = sshd ] && continue
	SSHD=$p
	break
done
[ -n "$SSHD" ] || { echo "node-cost.sh: no sshd found in $NODE's namespace" >&2; exit 1; }
INIT=$(cat "$DIR/nodes/$NODE/init.pid")

last_pid() { nsenter -t "$INIT" -p -- cat /proc/sys/kernel/ns_last_pid; }

# A CPU accounting group for the listener (and so for every session it forks).
CG='' OLD_CG=''
if [ -f /sys/fs/cgroup/cpuacct/cpuacct.usage ]; then
	CG=/sys/fs/cgroup/cpuacct/dnsfix-node-cost-$$
	OLD_CG=/sys/fs/cgroup/cpuacct$(awk -F: '$2 ~ /(^|,)cpuacct(,|$)/ { print $3 }' "/proc/$SSHD/cgroup")
	mkdir "$CG" && echo "$SSHD" >"$CG/tasks" || exit 1
	usage_ns() { cat "$CG/cpuacct.usage"; }
elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	CG=/sys/fs/cgroup/dnsfix-node-cost-$$
	OLD_CG=/sys/fs/cgroup$(awk -F: '$1 == 0 { print $3 }' "/proc/$SSHD/cgroup")
	mkdir "$CG" && echo "$SSHD" >"$CG/cgroup.procs" || exit 1
	usage_ns() { awk '$1 == "usage_usec" { print $2 * 1000 }' "$CG/cpu.stat"; }
else
	echo "node-cost.sh: no cpuacct cgroup: CPU is not measured" >&2
	usage_ns() { echo 0; }
fi
cleanup() {
	[ -n "$CG" ] || return
	if [ -f "$CG/tasks" ]; then
		while read -r t; do echo "$t" >"$OLD_CG/tasks"; done <"$CG/tasks" 2>/dev/null
	else
		while read -r t; do echo "$t" >"$OLD_CG/cgroup.procs"; done <"$CG/cgroup.procs" 2>/dev/null
	fi
	rmdir "$CG" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# The reader's own pids: two readings with nothing in between.
readers=$(for _ in 1 2 3 4 5; do a=$(last_pid); b=$(last_pid); echo $((b - a)); done | median)

printf '%-26s %14s %14s   %s\n' "on $NODE, per run" "processes" "CPU ms" "programs executed (one run, strace)"
while [ $# -ge 2 ]; do
	name=$1 cmd=$2
	shift 2
	procs=() cpu=()
	for ((i = 0; i < RUNS; i++)); do
		a=$(last_pid) u0=$(usage_ns)
		bash -c "$cmd" >/dev/null 2>&1
		u1=$(usage_ns) b=$(last_pid)
		procs+=($((b - a - readers))) cpu+=($((u1 - u0)))
	done
	p=$(printf '%s\n' "${procs[@]}" | median)
	c=$(printf '%s\n' "${cpu[@]}" | median | awk '{ printf "%.1f", $1 / 1e6 }')
	progs=-
	if command -v strace >/dev/null; then
		trace=$(mktemp)
		strace -f -qq -e trace=execve -o "$trace" -p "$SSHD" &
		st=$!
		sleep 0.5
		bash -c "$cmd" >/dev/null 2>&1
		sleep 0.2
		kill "$st" 2>/dev/null
		wait "$st" 2>/dev/null
		progs=$(grep -o 'execve("[^"]*"' "$trace" | sed 's/execve("//; s/"$//; s#.*/##' | sort | uniq -c | sort -rn |
			awk '{ printf "%s%s×%s", (NR > 1 ? " " : ""), $2, $1 }')
		rm -f "$trace"
	fi
	printf '%-26s %14s %14s   %s\n' "$name" "$p" "$c" "$progs"
done
