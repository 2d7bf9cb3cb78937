# dnsfix: what the apply and rollback scripts share (POSIX sh, run as root). Output is
# records "\n<BOUNDARY> <kind> <args>\n" with an optional message as the body, with a
# boundary no file content can forge.
B="@BOUNDARY@"
LC_ALL=C
export LC_ALL
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
hdr() { printf '\n%s %s\n' "$B" "$*"; }
sha() { sha256sum "$1" 2>/dev/null | cut -d' ' -f1; }
# After the first failure nothing more is written or restarted.
FAILED=
fail() { FAILED=1; hdr "$@"; }

# handler UNIT VERB PROBE TIMEOUT: restart (or reload) a unit and wait until it is active
# and, for a kubelet-running unit (PROBE=1), http://127.0.0.1:10248/healthz says ok.
# Records "healthy UNIT", or "unhealthy UNIT" with the reason as the body.
#
# healthz asks with curl or wget where a node has them; minimal Debian and RHEL images have
# neither, but they have bash, whose /dev/tcp speaks HTTP/1.0 well enough for a healthz.
healthz() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsS --max-time 2 http://127.0.0.1:10248/healthz 2>&1
  elif command -v wget >/dev/null 2>&1; then
    wget -q -T 2 -O - http://127.0.0.1:10248/healthz 2>&1
  elif command -v bash >/dev/null 2>&1; then
    # shellcheck disable=SC2016
    bash -c '
      exec 3<>/dev/tcp/127.0.0.1/10248 || exit 1
      printf "GET /healthz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" >&3
      IFS= read -r -t 2 status <&3 || { echo "no answer"; exit 1; }
      status=${status%$'"'"'\r'"'"'}
      case $status in
        "HTTP/1."?" 200"*) ;;
        *) echo "$status"; exit 1 ;;
      esac
      while IFS= read -r -t 2 line <&3; do
        [ -z "${line%$'"'"'\r'"'"'}" ] && break
      done
      body=
      IFS= read -r -t 2 body <&3
      printf %s "$body"
      exit 0' 2>&1
  else
    echo "neither curl, wget nor bash is installed to ask http://127.0.0.1:10248/healthz"
    return 2
  fi
}

handler() {
  unit=$1 verb=$2 probe=$3 timeout=$4
  if [ -n "$FAILED" ]; then hdr skipped "$unit"; return; fi
  if ! out=$(systemctl "$verb" "$unit" 2>&1); then
    fail unhealthy "$unit"; echo "systemctl $verb $unit failed: $out"; return
  fi
  start=$(date +%s)
  while :; do
    state=$(systemctl is-active "$unit" 2>/dev/null)
    if [ "$state" = active ]; then
      [ "$probe" = 0 ] && { hdr healthy "$unit"; return; }
      body=$(healthz); rc=$?
      if [ $rc -eq 0 ] && [ "$body" = ok ]; then hdr healthy "$unit"; return; fi
      [ $rc -eq 2 ] && { fail unhealthy "$unit"; echo "$body"; return; }
      why="unit active, but http://127.0.0.1:10248/healthz answered: ${body:-nothing}"
    else
      why="unit is ${state:-unknown}"
    fi
    if [ $(( $(date +%s) - start )) -ge "$timeout" ]; then
      fail unhealthy "$unit"; echo "not healthy ${timeout}s after systemctl $verb: $why"; return
    fi
    sleep 1
  done
}
