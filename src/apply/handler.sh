# dnsfix handler script: restart (or reload) one unit and wait until it is healthy.
# Records: begin, then "healthy UNIT" or "unhealthy UNIT" with the reason as the body.
B="@BOUNDARY@"
UNIT="@UNIT@"
VERB="@VERB@"
TIMEOUT=@TIMEOUT@
HEALTHZ=@HEALTHZ@
LC_ALL=C
export LC_ALL
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
hdr() { printf '\n%s %s\n' "$B" "$*"; }
hdr begin dnsfix-handler-1

healthz() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsS --max-time 2 http://127.0.0.1:10248/healthz 2>&1
  elif command -v wget >/dev/null 2>&1; then
    wget -q -T 2 -O - http://127.0.0.1:10248/healthz 2>&1
  else
    echo "neither curl nor wget is installed to ask http://127.0.0.1:10248/healthz"
    return 2
  fi
}

if ! out=$(systemctl "$VERB" "$UNIT" 2>&1); then
  hdr unhealthy "$UNIT"
  echo "systemctl $VERB $UNIT failed: $out"
  exit 0
fi
start=$(date +%s)
why=
while :; do
  state=$(systemctl is-active "$UNIT" 2>/dev/null)
  if [ "$state" = active ]; then
    if [ "$HEALTHZ" = 0 ]; then hdr healthy "$UNIT"; exit 0; fi
    body=$(healthz); rc=$?
    if [ $rc -eq 0 ] && [ "$body" = ok ]; then hdr healthy "$UNIT"; exit 0; fi
    [ $rc -eq 2 ] && { hdr unhealthy "$UNIT"; echo "$body"; exit 0; }
    why="unit active, but http://127.0.0.1:10248/healthz answered: ${body:-nothing}"
  else
    why="unit is ${state:-unknown}"
  fi
  if [ $(( $(date +%s) - start )) -ge "$TIMEOUT" ]; then
    hdr unhealthy "$UNIT"
    echo "not healthy ${TIMEOUT}s after systemctl $VERB: $why"
    exit 0
  fi
  sleep 1
done
