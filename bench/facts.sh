#!/bin/bash
# Benchmark `dnsfix facts` and `dnsfix plan` against a lab of N nodes (a third with the
# stub-symlink loop, a third with bridge netfilter off, the rest healthy, so plan has
# diffs to render), next to the floor: plain parallel OpenSSH reading the same files.
# See bench/README.md.
#
#   bench/facts.sh [N=24] [RUNS=10]
#
# Needs root (the lab), hyperfine, and what tests/lab/lab.sh needs. Results (hyperfine JSON
# and CSV) go to target/bench/ (BENCH_OUT overrides). The lab is torn down on exit.
set -u
set -o pipefail

N=${1:-24}
RUNS=${2:-10}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAB=$ROOT/tests/lab/lab.sh
OUT=${BENCH_OUT:-$ROOT/target/bench}
[[ $N =~ ^[0-9]+$ && $N -ge 1 ]] || { echo "usage: $0 [N=24] [RUNS=10]" >&2; exit 2; }
[[ $RUNS =~ ^[0-9]+$ && $RUNS -ge 2 ]] || { echo "usage: $0 [N=24] [RUNS=10] (RUNS >= 2)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench/facts.sh: needs root (the lab creates namespaces)" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "bench/facts.sh: hyperfine not found: apt-get install hyperfine" >&2; exit 1; }
unset SSH_AUTH_SOCK

echo "== building dnsfix (cargo build --release)"
DNSFIX=$ROOT/target/release/dnsfix
if ! (cd "$ROOT" && cargo build --release --quiet); then
	echo "!! cargo build --release failed: only the floor will be measured" >&2
	DNSFIX=""
fi

DIR=$(mktemp -d "${TMPDIR:-/tmp}/dnsfix-bench.XXXXXX") || exit 1
trap 'bash "$LAB" down "$DIR"' EXIT # replaced below, once dnsfix's masters can be closed too
trap 'exit 130' INT TERM
STUB=$((N / 3)) BRNF=$((N / 3))
HEALTHY=$((N - STUB - BRNF))
specs=("healthy*$HEALTHY")
[ $STUB -gt 0 ] && specs+=("stub-symlink*$STUB")
[ $BRNF -gt 0 ] && specs+=("brnf-off*$BRNF")
echo "== starting a lab of $N nodes ($HEALTHY healthy, $STUB stub-symlink, $BRNF brnf-off) in $DIR"
bash "$LAB" up --owner $$ "$DIR" "${specs[@]}" || exit 1
echo "   up in $(cat "$DIR/startup_ms") ms"

FILES="/etc/resolv.conf /run/systemd/resolve/resolv.conf /etc/kubernetes/kubelet-config.yaml /etc/kubernetes/kubelet.env /proc/sys/net/bridge/bridge-nf-call-iptables /proc/sys/net/ipv4/ip_forward"
cat >"$DIR/floor.sh" <<EOF
#!/bin/bash
# The floor: one plain OpenSSH session per node, all nodes at once, reading the files
# dnsfix needs. Extra ssh options are passed through (e.g. -o KexAlgorithms=...).
pids=()
for node in $(awk '!/^#/ {printf "%s ", $1}' "$DIR/nodes.tsv"); do
	ssh -F "$DIR/ssh_config" "\$@" "\$node" cat $FILES >/dev/null &
	pids+=(\$!)
done
rc=0
for p in "\${pids[@]}"; do wait "\$p" || rc=1; done
exit \$rc
EOF

# dnsfix's openssh backend keeps ControlPersist masters between runs; give it a control
# directory of its own (XDG_RUNTIME_DIR) so the bench can close them: "cold" runs start
# with no master (comparable with the floor), "warm" runs reuse the previous run's.
mkdir -m 0700 "$DIR/xdg"
cat >"$DIR/close-masters.sh" <<EOF
#!/bin/bash
# Close every ssh ControlMaster under the bench's control directory, and wait until they
# are gone and their nodes' sessions have ended: a cold run must not pay for the teardown
# of the previous run's 50 connections (the floor's end inside its own run).
find "$DIR/xdg" -type s 2>/dev/null | while read -r s; do ssh -o BatchMode=yes -S "\$s" -O exit lab >/dev/null 2>&1; done
for _ in \$(seq 50); do pgrep -f "$DIR/xdg/" >/dev/null || break; sleep 0.1; done
sleep 0.5
exit 0
EOF
trap 'bash "$DIR/close-masters.sh"; bash "$LAB" down "$DIR"' EXIT
logins() { cat "$DIR"/nodes/*/sshd.log | grep -c 'Accepted publickey'; }

names=() cmds=() preps=()
add() { # NAME PREPARE COMMAND: run it once first; benchmark it only if it works
	local name=$1 prep=$2 cmd=$3 err rc
	bash -c "$prep"
	err=$(timeout 300 bash -c "$cmd" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "!! $name failed (exit $rc), not benchmarked: $cmd" >&2
		printf '%s\n' "$err" | tail -n 15 | sed 's/^/   /' >&2
		return 1
	fi
	names+=("$name") preps+=("$prep") cmds+=("$cmd")
}
add floor-ssh true "bash $DIR/floor.sh" ||
	{ echo "!! the floor itself fails: the lab is broken" >&2; exit 1; }
add floor-ssh-curve25519 true "bash $DIR/floor.sh -o KexAlgorithms=curve25519-sha256"
if [ -n "$DNSFIX" ]; then
	facts="$DNSFIX facts -i $DIR/inventory.yaml --known-hosts $DIR/known_hosts --format json --forks $N"
	before=$(logins)
	if add dnsfix-openssh "bash $DIR/close-masters.sh" "env XDG_RUNTIME_DIR=$DIR/xdg $facts --ssh-backend openssh"; then
		cold=$(($(logins) - before))
		before=$(logins)
		add dnsfix-openssh-warm true "env XDG_RUNTIME_DIR=$DIR/xdg $facts --ssh-backend openssh"
		warm=$(($(logins) - before))
		echo "   SSH logins per run (from the nodes' sshd logs): floor $N, dnsfix-openssh $cold, dnsfix-openssh-warm $warm"
		[ "$cold" -eq "$N" ] || echo "!! dnsfix-openssh made $cold logins for $N nodes: its cold numbers are not cold" >&2
	fi
	add dnsfix-russh true "$facts --ssh-backend russh"
	# plan = facts + diagnosis + playbooks + diffs; exit 2 (changes) is its success.
	plan="$DNSFIX plan -i $DIR/inventory.yaml --known-hosts $DIR/known_hosts --forks $N --color never"
	# (hyperfine runs commands without a shell, hence bash -c; it costs about 2 ms.)
	add dnsfix-plan-openssh-warm true "bash -c 'env XDG_RUNTIME_DIR=$DIR/xdg $plan --ssh-backend openssh >/dev/null; [ \$? -eq 2 ]'"
	add dnsfix-plan-russh true "bash -c '$plan --ssh-backend russh >/dev/null; [ \$? -eq 2 ]'"
	add dnsfix-plan-openssh "bash $DIR/close-masters.sh" "bash -c 'env XDG_RUNTIME_DIR=$DIR/xdg $plan --ssh-backend openssh >/dev/null; [ \$? -eq 2 ]'"
fi

# pyinfra reading dnsfix's files with its own facts, --dry (bench/pyinfra/deploy.py),
# from a venv of its own (PyPI; PYINFRA_VERSION pins it; BENCH_NO_PYINFRA=1 skips it).
if [ -z "${BENCH_NO_PYINFRA-}" ]; then
	VENV=$OUT/pyinfra-venv
	if [ ! -x "$VENV/bin/pyinfra" ]; then
		echo "== installing pyinfra ${PYINFRA_VERSION:-3.*} into $VENV"
		mkdir -p "$OUT"
		python3 -m venv "$VENV" && "$VENV/bin/pip" install -q "pyinfra==${PYINFRA_VERSION:-3.*}" ||
			echo "!! pyinfra could not be installed: not measured" >&2
	fi
	if [ -x "$VENV/bin/pyinfra" ]; then
		awk -F'\t' -v dir="$DIR" '
			BEGIN { print "hosts = [" }
			!/^#/ {
				printf "    (\"%s\", {\"ssh_hostname\": \"127.0.0.1\", \"ssh_port\": %s, \"ssh_user\": \"%s\", ", $1, $2, $5
				printf "\"ssh_key\": \"%s/id_ed25519\", \"ssh_known_hosts_file\": \"%s/known_hosts\", ", dir, dir
				printf "\"ssh_strict_host_key_checking\": \"yes\"}),\n"
			}
			END { print "]" }' "$DIR/nodes.tsv" >"$DIR/pyinfra_inventory.py"
		# The same reads as dnsfix: each node's list of the regular files dnsfix read there
		# (from its own facts: those with a sha256, whose content it read, not those it only
		# looks for, such as systemd's binary library), not just the floor's 6 files.
		PYFILES=
		if [ -n "$DNSFIX" ] && $DNSFIX facts -i "$DIR/inventory.yaml" --known-hosts "$DIR/known_hosts" --forks "$N" \
			--format json --ssh-backend russh 2>/dev/null | python3 -c '
import json, sys
hosts = json.load(sys.stdin)["hosts"]
json.dump({h["host"]: sorted(p for p, v in h["facts"]["files"].items() if v["state"] == "present" and v.get("sha256")) for h in hosts}, open(sys.argv[1], "w"))
' "$DIR/pyinfra_files.json"; then
			PYFILES="BENCH_FILES_JSON=$DIR/pyinfra_files.json"
			echo "   pyinfra reads dnsfix's files: $(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(min(map(len, d.values())), "to", max(map(len, d.values())), "per node")' "$DIR/pyinfra_files.json")"
		else
			echo "!! could not list the files dnsfix reads: pyinfra reads the floor's 6 files only" >&2
		fi
		add pyinfra-dry true "env BENCH_FILES='$FILES' $PYFILES $VENV/bin/pyinfra -y --dry --parallel $N $DIR/pyinfra_inventory.py $ROOT/bench/pyinfra/deploy.py"
	fi
fi

# BENCH_ALTERNATE=ROUNDS: instead of hyperfine's back-to-back runs, time each floor and
# the dnsfix plan measured against it in turn, ROUNDS times (each command's prepare step,
# then 1 s of quiet, before it): load that comes and goes hits both alike. Prints the
# medians and ratios, and stops.
if [ -n "${BENCH_ALTERNATE-}" ]; then
	[[ $BENCH_ALTERNATE =~ ^[0-9]+$ && $BENCH_ALTERNATE -ge 1 ]] || { echo "BENCH_ALTERNATE must be a number of rounds" >&2; exit 2; }
	pairs=(floor-ssh dnsfix-plan-openssh floor-ssh-curve25519 dnsfix-plan-russh)
	times=$DIR/alternate.tsv
	: >"$times"
	for ((round = 1; round <= BENCH_ALTERNATE; round++)); do
		for name in "${pairs[@]}"; do
			for i in "${!names[@]}"; do
				[ "${names[$i]}" = "$name" ] || continue
				bash -c "${preps[$i]}"
				sleep 1
				start=$(date +%s.%N)
				bash -c "${cmds[$i]}" >/dev/null 2>&1 || echo "!! $name failed in round $round" >&2
				end=$(date +%s.%N)
				awk -v n="$name" -v a="$start" -v b="$end" 'BEGIN { printf "%s\t%.4f\n", n, b - a }' >>"$times"
			done
		done
	done
	echo
	echo "== alternated over $N nodes: medians of $BENCH_ALTERNATE rounds"
	python3 - "$times" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    name, seconds = line.split("\t")
    runs.setdefault(name, []).append(float(seconds))
med = {name: statistics.median(v) for name, v in runs.items()}
for name, floor in [("dnsfix-plan-openssh", "floor-ssh"), ("dnsfix-plan-russh", "floor-ssh-curve25519")]:
    if name in med and floor in med:
        print(f"{floor:22} {med[floor]:7.3f} s   {name:22} {med[name]:7.3f} s   {med[name] / med[floor]:.3f}x")
PY
	exit 0
fi

mkdir -p "$OUT"
json=$OUT/facts-N$N.json csv=$OUT/facts-N$N.csv
args=()
for i in "${!names[@]}"; do args+=(--prepare "${preps[$i]}"); done
for i in "${!names[@]}"; do args+=(-n "${names[$i]}" "${cmds[$i]}"); done
echo "== hyperfine: ${#names[@]} commands, $RUNS runs each ($(nproc) CPUs, $(ssh -V 2>&1))"
hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$json" --export-csv "$csv" "${args[@]}" || exit 1

# Medians, and dnsfix relative to each floor.
echo
echo "== facts over $N nodes: medians of $RUNS runs (lower is better)"
awk -F, -v n="$N" '
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	{
		name = $col["command"]; med[name] = $col["median"]; order[++k] = name
		mean[name] = $col["mean"]; sd[name] = $col["stddev"]; min[name] = $col["min"]; max[name] = $col["max"]
	}
	END {
		printf "%-26s %10s %10s %10s %10s %12s %22s %14s\n", "command", "median s", "mean s", "stddev", "min s", "x floor-ssh", "x floor-ssh-curve25519", "pyinfra-dry x"
		for (j = 1; j <= k; j++) {
			c = order[j]
			r1 = ("floor-ssh" in med) ? sprintf("%.2fx", med[c] / med["floor-ssh"]) : "-"
			r2 = ("floor-ssh-curve25519" in med) ? sprintf("%.2fx", med[c] / med["floor-ssh-curve25519"]) : "-"
			# How many times faster than pyinfra --dry.
			r3 = ("pyinfra-dry" in med) ? sprintf("%.2fx", med["pyinfra-dry"] / med[c]) : "-"
			printf "%-26s %10.3f %10.3f %10.3f %10.3f %12s %22s %14s\n", c, med[c], mean[c], sd[c], min[c], r1, r2, r3
		}
		printf "\nper node (median / %d):\n", n
		for (j = 1; j <= k; j++) printf "  %-26s %8.1f ms\n", order[j], 1000 * med[order[j]] / n
	}' "$csv"

# On one healthy node: what one run costs the node (bench/node-cost.sh). Not the first
# node: it is the lab's kube_control_plane, where plan also runs kubectl to read the
# cluster, and that is not the gather's cost (a worker is what most nodes are).
NODE=$(awk -F'\t' '!/^#/ { n++ } !/^#/ && n > 1 && $4 == "healthy" { print $1; exit }' "$DIR/nodes.tsv")
[ -n "$NODE" ] || NODE=$(awk -F'\t' '!/^#/ && $4 == "healthy" { print $1; exit }' "$DIR/nodes.tsv")
if [ -n "$DNSFIX" ] && [ -n "$NODE" ]; then
	echo
	echo "== on the node: processes and CPU per run against $NODE alone (medians of 5)"
	one="-i $DIR/inventory.yaml --known-hosts $DIR/known_hosts --limit $NODE"
	costs=(floor-ssh "ssh -F $DIR/ssh_config $NODE cat $FILES"
		floor-ssh-curve25519 "ssh -F $DIR/ssh_config -o KexAlgorithms=curve25519-sha256 $NODE cat $FILES"
		dnsfix-plan-russh "$DNSFIX plan $one --ssh-backend russh")
	[ -x "${VENV-}/bin/pyinfra" ] && costs+=(pyinfra-dry "env BENCH_FILES='$FILES' ${PYFILES-} $VENV/bin/pyinfra -y --dry --limit $NODE $DIR/pyinfra_inventory.py $ROOT/bench/pyinfra/deploy.py")
	bash "$ROOT/bench/node-cost.sh" "$DIR" "$NODE" 5 "${costs[@]}"
	echo "(the gather script's own share: dnsfix-plan-russh minus floor-ssh-curve25519, whose cat is one process)"
fi
echo
echo "results: $json"
want=8
[ -z "${BENCH_NO_PYINFRA-}" ] && want=9
[ ${#names[@]} -eq $want ] || { echo "!! some commands failed and were not measured (see above)" >&2; exit 1; }
