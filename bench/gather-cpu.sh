#!/bin/bash
# Where the gather script's CPU goes, measured inside one lab node: the script run as dnsfix
# runs it (`sh -s`, its output thrown away) RUNS times in a loop, the loop's user + system
# CPU divided by RUNS, next to the same script with systemctl left out, and the programs it
# starts timed alone. ROUNDS rounds, alternated; medians. See bench/README.md.
#
#   bench/gather-cpu.sh DIR NODE [RUNS=200] [ROUNDS=5]
#
# DIR is a running tests/lab lab and NODE one of its nodes, of either flavour: a namespace
# node asks the lab's bash systemctl stand-in, a systemd node (systemd-* scenarios) the
# real systemctl. Needs root (lab.sh exec). The script is src/facts/gather.sh with its
# placeholders filled in as raw::script_for fills them (the kubelet's version not asked).
set -u
set -o pipefail

[ $# -ge 2 ] || { echo "usage: $0 DIR NODE [RUNS=200] [ROUNDS=5]" >&2; exit 2; }
DIR=$1 NODE=$2 RUNS=${3:-200} ROUNDS=${4:-5}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAB=$ROOT/tests/lab/lab.sh

# KUBELET_UNITS, from node_script.rs: the words between `KUBELET_UNITS: &[&str] = &[` and `];`.
UNITS=$(awk '/^pub const KUBELET_UNITS/ { on = 1; next } on && /^\];/ { exit } on { gsub(/[",[:space:]]/, ""); if ($0 != "") printf "%s%s", (n++ ? " " : ""), $0 }' "$ROOT/src/node_script.rs")
[ -n "$UNITS" ] || { echo "gather-cpu.sh: KUBELET_UNITS not found in src/node_script.rs" >&2; exit 1; }
script=$(sed -e 's/@BOUNDARY@/dnsfix-bench-boundary/' -e 's#@PATHNONCE@#/./../#' -e 's/@CAP@/1048576/' \
	-e "s/@KUBELET_UNITS@/$UNITS/" -e 's/@EXTRA@//' -e 's/@ASK_VERSION@/0/' -e 's/@SYSTEMCTL_WAIT@/10/' "$ROOT/src/facts/gather.sh")
left=$(grep -o '@[A-Z_]*@' <<<"$script" | sort -u | tr '\n' ' ')
[ -z "$left" ] || { echo "gather-cpu.sh: placeholders not filled in: $left(raw::script_for has new ones)" >&2; exit 1; }
# The same with systemctl never asked (as after a call cut off: SCUT set): what the rest
# costs.
nosysctl=$(awk '$0 == "SCUT=" { print "SCUT=1"; n++; next } { print } END { exit n != 1 }' <<<"$script") ||
	{ echo "gather-cpu.sh: no line SCUT= in gather.sh (how it stops asking systemctl changed)" >&2; exit 1; }

# On the node: the two scripts in a directory of its own, then the loop.
# shellcheck disable=SC2016 # the program runs on the node: its $ are the node's
PROG='
set -u
T=$(mktemp -d) || exit 1
trap "rm -rf \"\$T\"" EXIT
# stdin: the script, a line @@nosysctl@@, the script without systemctl.
awk -v t="$T" "/^@@nosysctl@@\$/ { f = 1; next } { print > (t (f ? \"/nosysctl.sh\" : \"/gather.sh\")) }"
# Both must run to their last record, or what is timed is not the gather.
for s in gather nosysctl; do
	sh -s < "$T/$s.sh" > "$T/out" 2> "$T/err"
	tail -c 64 "$T/out" | grep -q "^dnsfix-bench-boundary end\$" || {
		echo "gather-cpu.sh: on $4, $s.sh did not run to its end record; its last errors:" >&2
		tail -n 3 "$T/err" >&2
		exit 1
	}
done
UNITS="systemd-resolved NetworkManager $1 systemd-networkd firewalld"
RUNS=$2 ROUNDS=$3
TIMEFORMAT="%3U %3S"
# ms of CPU per run of a command line, over RUNS runs.
per_run() { { time (for ((i = 0; i < RUNS; i++)); do eval "$1" >/dev/null 2>&1; done); } 2>&1 | awk -v n="$RUNS" "{ printf \"%.2f\", (\$1 + \$2) * 1000 / n }"; }
names=(gather "gather without systemctl" "sh -s < /dev/null" "systemctl is-active (the units)" "systemctl is-enabled systemd-resolved")
cmds=("sh -s < $T/gather.sh" "sh -s < $T/nosysctl.sh" "sh -s < /dev/null" "systemctl is-active $UNITS" "systemctl is-enabled systemd-resolved")
for ((r = 0; r < ROUNDS; r++)); do
	for k in "${!cmds[@]}"; do echo "$k $(per_run "${cmds[$k]}")"; done
done | sort -n -k1,1 -k2,2n | awk -v rounds="$ROUNDS" "{ v[\$1, ++c[\$1]] = \$2 } END { for (k = 0; k in c; k++) { m = int((c[k] + 1) / 2); printf \"%d %s\", k, v[k, m]; for (j = 1; j <= c[k]; j++) printf \" %s\", v[k, j]; print \"\" } }" |
	while read -r k med rest; do printf "  %-40s %8s   (%s)\n" "${names[$k]}" "$med" "$rest"; done
'
echo "== $NODE: CPU per run, ms (median of $ROUNDS rounds of $RUNS runs; the rounds' values sorted)"
printf '%s\n@@nosysctl@@\n%s\n' "$script" "$nosysctl" |
	bash "$LAB" exec "$DIR" "$NODE" -- bash -c "$PROG" gather-cpu "$UNITS" "$RUNS" "$ROUNDS" "$NODE"
