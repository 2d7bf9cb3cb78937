# dnsfix apply script: POSIX sh, run as root on one node, in one exec per host, after
# common.sh. dnsfix appends the steps of this host's plan (calls to the functions below,
# file contents as base64 here-documents), its handlers and a final `finish`. Every step
# reports one record.
#
# Safety:
# - a node-side lock (mkdir is atomic) keeps two applies off one node; a lock whose owner
#   is gone (dead pid, or an earlier boot) is taken over;
# - every file is compare-and-swap: the current sha256 must be the plan's before (or the
#   file absent when the plan creates it) right before the rename; a file already at the
#   plan's after is left alone ("already");
# - writes are atomic: the new content goes to a temp file in the same directory, gets
#   the old file's mode and owner, is synced, checked against the plan's sha256, and
#   renamed over the target; the directory is synced after;
# - the old file is copied under /var/lib/dnsfix/backups/RUN/files/ first and listed in
#   the run's manifest, so `dnsfix rollback RUN` can restore it;
# - nothing is written once any step failed (later steps report "skipped");
# - the handlers run inside the same lock, each gated on the unit coming back healthy,
#   and the plan is marked done on the node only when all of them are.
RUN="@RUN@"
STATE=/var/lib/dnsfix
BACKUP=$STATE/backups/$RUN
umask 022

# The lock: a directory with "pid run boot_id" inside.
BOOT=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)
lock() {
  mkdir -p "$STATE" 2>/dev/null || { fail fatal "cannot create $STATE"; exit 0; }
  if ! mkdir "$STATE/lock" 2>/dev/null; then
    read -r pid run boot < "$STATE/lock/owner" 2>/dev/null
    if [ -n "${pid-}" ] && [ "${boot-}" = "$BOOT" ] && kill -0 "$pid" 2>/dev/null; then
      hdr locked "run ${run-?} (pid $pid) holds $STATE/lock"
      exit 0
    fi
    # The owner is gone: take the lock over.
    rm -rf "$STATE/lock"
    mkdir "$STATE/lock" 2>/dev/null || { hdr locked "another apply took $STATE/lock"; exit 0; }
  fi
  printf '%s %s %s\n' "$$" "$RUN" "$BOOT" > "$STATE/lock/owner"
  trap 'rm -rf "$STATE/lock"' EXIT
  trap 'rm -rf "$STATE/lock"; exit 1' HUP INT TERM
  mkdir -p "$BACKUP/files" || { fail fatal "cannot create $BACKUP"; exit 0; }
}

# check PATH BEFORE AFTER: is the file where the plan expects it? BEFORE/AFTER are sha256
# or "absent". Prints todo, already, or "stale CURRENT".
check() {
  if [ -L "$1" ]; then echo "stale symlink"; return; fi
  if [ -e "$1" ]; then cur=$(sha "$1"); [ -n "$cur" ] || cur=unreadable; else cur=absent; fi
  if [ "$cur" = "$3" ]; then echo already
  elif [ "$cur" = "$2" ]; then echo todo
  else echo "stale $cur"; fi
}

# precheck PATH BEFORE AFTER: run for every file before anything is written.
precheck() {
  state=$(check "$1" "$2" "$3")
  case $state in
    stale*) fail stale "$1 ${state#stale }" ;;
  esac
}

# write PATH BEFORE AFTER MODE < base64 content
write() {
  path=$1 before=$2 after=$3 mode=$4
  if [ -n "$FAILED" ]; then cat >/dev/null; hdr skipped "$path"; return; fi
  dir=${path%/*}; [ -n "$dir" ] || dir=/
  name=${path##*/}
  tmp="$dir/.$name.dnsfix-$RUN"
  state=$(check "$path" "$before" "$after")
  case $state in
    already) cat >/dev/null; adopt "$path" "$after"; return ;;
    stale*) cat >/dev/null; fail stale "$path ${state#stale }"; return ;;
  esac
  # A temp file an interrupted run left behind is garbage now (we hold the lock).
  rm -f "$dir/.$name.dnsfix-"* 2>/dev/null
  if [ ! -d "$dir" ]; then
    mkdir -p "$dir" 2>/dev/null || { cat >/dev/null; fail error "$path"; echo "cannot create directory $dir"; return; }
  fi
  if ! base64 -d > "$tmp" 2>/dev/null; then
    rm -f "$tmp"
    fail error "$path"; echo "cannot write $tmp (full or read-only filesystem?)"
    return
  fi
  if [ "$(sha "$tmp")" != "$after" ]; then
    rm -f "$tmp"; fail error "$path"; echo "the written copy does not match the plan (disk full?)"; return
  fi
  if [ "$before" = absent ]; then
    chmod "$mode" "$tmp" 2>/dev/null
    printf 'file\t%s\tabsent\t%s\t%s\n' "$path" "$after" "$mode" >> "$BACKUP/manifest"
  else
    set -- $(stat -c '%a %u %g' "$path" 2>/dev/null)
    chmod "${1:-644}" "$tmp" 2>/dev/null && chown "${2:-0}:${3:-0}" "$tmp" 2>/dev/null
    mkdir -p "$BACKUP/files$dir" && cp -p "$path" "$BACKUP/files$path" ||
      { rm -f "$tmp"; fail error "$path"; echo "cannot back up to $BACKUP/files$path"; return; }
    printf 'file\t%s\t%s\t%s\t%s\n' "$path" "$before" "$after" "${1:-644}" >> "$BACKUP/manifest"
  fi
  sync "$tmp" 2>/dev/null || sync
  # Compare-and-swap: the target must still be what the plan saw.
  state=$(check "$path" "$before" "$after")
  case $state in
    todo) ;;
    *) rm -f "$tmp"; fail stale "$path ${state#stale }"; return ;;
  esac
  if mv -f "$tmp" "$path" 2>/dev/null; then
    sync "$dir" 2>/dev/null || true
    hdr ok "$path"
  else
    rm -f "$tmp"; fail error "$path"; echo "cannot rename $tmp over $path"
  fi
}

# adopt PATH AFTER: the file already has the plan's content. If an earlier, interrupted
# run wrote it, take over that run's backup, so rolling back this run restores it.
adopt() {
  prev=$(awk -F '\t' -v p="$1" -v a="$2" '$1 == "file" && $2 == p && $4 == a { f = FILENAME } END { print f }' \
    "$STATE"/backups/*/manifest 2>/dev/null)
  prev=${prev%/manifest}
  if [ -n "$prev" ] && [ "$prev" != "$BACKUP" ]; then
    line=$(awk -F '\t' -v p="$1" -v a="$2" '$1 == "file" && $2 == p && $4 == a' "$prev/manifest" | tail -n 1)
    if [ -f "$prev/files$1" ]; then
      mkdir -p "$BACKUP/files${1%/*}" && cp -p "$prev/files$1" "$BACKUP/files$1"
    fi
    printf '%s\n' "$line" >> "$BACKUP/manifest"
    hdr adopted "$1"; echo "written by the interrupted run ${prev##*/}"
  else
    hdr already "$1"
  fi
}

# sysctl NAME BEFORE AFTER: set a live value and read it back.
sysctl_set() {
  name=$1 before=$2 after=$3
  if [ -n "$FAILED" ]; then hdr skipped "$name"; return; fi
  p=/proc/sys/$(printf '%s' "$name" | tr . /)
  cur=$(cat "$p" 2>/dev/null | tr -s ' \t' ' ')
  if [ "$cur" = "$after" ]; then hdr already "$name"; return; fi
  printf 'sysctl\t%s\t%s\t%s\n' "$name" "$cur" "$after" >> "$BACKUP/manifest"
  if printf '%s\n' "$after" > "$p" 2>/dev/null && [ "$(cat "$p" 2>/dev/null | tr -s ' \t' ' ')" = "$after" ]; then
    hdr ok "$name"
  else
    fail error "$name"; echo "$p reads $(cat "$p" 2>/dev/null) after writing $after"
  fi
}

# module NAME: load a kernel module and check it is there.
module() {
  if [ -n "$FAILED" ]; then hdr skipped "$1"; return; fi
  if [ -d "/sys/module/$1" ]; then hdr already "$1"; return; fi
  out=$(modprobe "$1" 2>&1)
  if [ -d "/sys/module/$1" ]; then
    printf 'module\t%s\n' "$1" >> "$BACKUP/manifest"
    hdr ok "$1"
  else
    fail error "$1"; echo "modprobe $1: ${out:-module not loaded}"
  fi
}

# finish MARKER: record the result on the node; mark the plan done when all went well.
finish() {
  if [ -z "$FAILED" ]; then
    mkdir -p "${1%/*}" && printf '%s\n' "$RUN" > "$1"
    printf 'applied %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$BACKUP/result"
    hdr done "$RUN"
  else
    printf 'failed %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$BACKUP/result"
    hdr failed "$RUN"
  fi
}
