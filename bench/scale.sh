#!/bin/bash
# dnsfix plan over a large inventory: HOSTS inventory hosts, aliases (round robin) onto a
# lab of NODES real nodes, so a 1000-host fleet fits on one machine. See bench/README.md.
#
#   bench/scale.sh [NODES=50] [HOSTS=1000] [FORKS=50]
#
# For each of HOSTS/4, HOSTS/2 and HOSTS hosts it runs `dnsfix plan` (russh, or
# BACKEND=openssh with a control directory per run, so each starts with no master) under
# /usr/bin/time -v and prints wall time, maximum RSS and time per host; then the same at
# 2×FORKS. DNSFIX=path measures another build (e.g. an older one) on the same lab. Needs root (the lab) and GNU time (/usr/bin/time). The lab is torn down on exit.
set -u
set -o pipefail

NODES=${1:-50}
HOSTS=${2:-1000}
FORKS=${3:-50}
BACKEND=${BACKEND:-russh}
[ "$BACKEND" = russh ] || [ "$BACKEND" = openssh ] ||
	{ echo "bench/scale.sh: BACKEND is russh or openssh" >&2; exit 2; }
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAB=$ROOT/tests/lab/lab.sh
[ "$(id -u)" = 0 ] || { echo "bench/scale.sh: needs root (the lab creates namespaces)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench/scale.sh: /usr/bin/time not found: apt-get install time" >&2; exit 1; }
unset SSH_AUTH_SOCK

if [ -z "${DNSFIX-}" ]; then
	echo "== building dnsfix (cargo build --release)"
	(cd "$ROOT" && cargo build --release --quiet) || exit 1
	DNSFIX=$ROOT/target/release/dnsfix
fi

DIR=$(mktemp -d "${TMPDIR:-/tmp}/dnsfix-scale.XXXXXX") || exit 1
trap 'bash "$LAB" down "$DIR"' EXIT
trap 'exit 130' INT TERM
STUB=$((NODES / 3)) BRNF=$((NODES / 3))
specs=("healthy*$((NODES - STUB - BRNF))")
[ $STUB -gt 0 ] && specs+=("stub-symlink*$STUB")
[ $BRNF -gt 0 ] && specs+=("brnf-off*$BRNF")
echo "== starting a lab of $NODES nodes in $DIR"
bash "$LAB" up --owner $$ "$DIR" "${specs[@]}" || exit 1

# inventory-H.yaml: H hosts host0001..., host i on lab node (i mod NODES).
inventory() {
	local h=$1 i name n out=$DIR/inventory-$1.yaml
	mapfile -t names < <(awk '!/^#/ { print $1 }' "$DIR/nodes.tsv")
	{
		echo "all:"
		echo "  hosts:"
		for ((i = 0; i < h; i++)); do
			name=${names[$((i % NODES))]}
			n=$DIR/nodes/$name
			printf '    host%04d:\n      ansible_host: 127.0.0.1\n      ansible_port: %s\n      ansible_user: root\n      ansible_ssh_private_key_file: %s\n' \
				$((i + 1)) "$(cat "$n/port")" "$DIR/id_ed25519"
		done
		echo "  children:"
		echo "    kube_node:"
		echo "      hosts:"
		for ((i = 0; i < h; i++)); do printf '        host%04d:\n' $((i + 1)); done
		echo "  vars:"
		echo "    enable_nodelocaldns: true"
		echo "    nodelocaldns_ip: 169.254.25.10"
	} >"$out"
	echo "$out"
}

echo "== dnsfix plan --ssh-backend $BACKEND"
printf '\n%-8s %-6s %10s %12s %14s %6s\n' hosts forks "wall s" "max RSS MB" "ms per host" exit
run() { # HOSTS FORKS
	local inv log rc
	inv=$(inventory "$1")
	log=$DIR/time-$1-$2.log
	# A control directory per run: no master of an earlier size is reused.
	mkdir -m 0700 "$DIR/xdg-$1-$2"
	XDG_RUNTIME_DIR=$DIR/xdg-$1-$2 /usr/bin/time -v "$DNSFIX" plan -i "$inv" \
		--known-hosts "$DIR/known_hosts" --forks "$2" --ssh-backend "$BACKEND" --color never \
		>"$DIR/plan-$1-$2.txt" 2>"$log"
	rc=$?
	# This run's masters (openssh) end now, not ControlPersist later.
	find "$DIR/xdg-$1-$2" -type s -exec ssh -o BatchMode=yes -S {} -O exit lab \; >/dev/null 2>&1
	awk -v h="$1" -v f="$2" -v rc="$rc" '
		/Elapsed \(wall clock\)/ { n = split($NF, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i] }
		/Maximum resident set size/ { rss = $NF / 1024 }
		END { printf "%-8s %-6s %10.2f %12.1f %14.2f %6s\n", h, f, s, rss, 1000 * s / h, rc }' "$log"
}
for h in $((HOSTS / 4)) $((HOSTS / 2)) "$HOSTS"; do run "$h" "$FORKS"; done
run "$HOSTS" $((FORKS * 2))
echo
echo "(exit 2 = changes planned, the expected outcome; plans and time -v logs in $DIR until exit)"
