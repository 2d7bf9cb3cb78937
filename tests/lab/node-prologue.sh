# shellcheck shell=bash
# The start the lab's node scripts share (node-init.sh, systemd-node.sh). Each sources it
# right after `set -eEu` and `set -o pipefail` (so that a missing copy stops the script),
# with its name for messages and its own arguments (DIR NAME):
#   . "${BASH_SOURCE[0]%/*}/node-prologue.sh" WHO "$@"
# lab.sh copies it into DIR/lib beside them. It sets the node's paths (DIR NAME N LIB),
# fail() and the ERR trap that calls it (both write N/failed, which lab.sh waits for),
# tracing with LAB_TRACE, and reads the node's settings (N/node.env).
WHO=$1 DIR=$2 NAME=$3
N=$DIR/nodes/$NAME
# shellcheck disable=SC2034 # LIB is for the sourcing script
LIB=$DIR/lib

fail() {
	echo "$WHO: $*" >&2
	echo "$*" >"$N/failed" 2>/dev/null || true
	exit 1
}
trap 'fail "setup failed (line $LINENO: $BASH_COMMAND)"' ERR

if [ -n "${LAB_TRACE-}" ]; then PS4="+ \$EPOCHREALTIME $WHO:\$LINENO: "; set -x; fi
# shellcheck disable=SC1091
. "$N/node.env"
