# shellcheck shell=sh
# dnsfix rollback script (after common.sh): undo one run on this node from its manifest
# (/var/lib/dnsfix/backups/RUN/manifest), newest change first, compare-and-swap: a file is
# restored only while it is still exactly what the run wrote; a sysctl only while it
# still has the run's value. Records per entry: restored, removed, already (nothing to
# undo), kept (changed since the run, left alone; the body says why), error. Loaded
# modules stay loaded. dnsfix appends: start, restore, the handlers (only when something
# was restored), finish.
# shellcheck disable=SC2153 # STATE and the helpers come from common.sh, which runs first
RUN="@RUN@"
BACKUP=$STATE/backups/$RUN
RESTORED=
SKIPPED=
# kept NAME: an entry changed since the run, left alone; listed in $BACKUP/kept, which a
# later rollback of the run reports again.
kept() {
  printf '%s\n' "$1" >> "$BACKUP/kept" 2>/dev/null
  hdr kept "$1"
}
# shellcheck disable=SC2034 # read by common.sh's due and undue
DUE_NAME=rollback-$RUN

start() {
  hdr begin dnsfix-rollback-1
  if [ ! -f "$BACKUP/manifest" ]; then
    hdr nothing "$RUN"; echo "run $RUN wrote nothing on this node"; exit 0
  fi
  lock "rollback of run $RUN"
  # Once: a run rolled back and then applied again (the same change, by a later run)
  # must not be undone by rolling this one back again; that is the later run's to undo.
  # Entries it left for being changed since the run are said again (the run's change is
  # still in them), and nothing is restored.
  if [ -f "$BACKUP/rolled-back" ]; then
    if [ -s "$BACKUP/kept" ]; then
      while IFS= read -r k; do
        hdr kept "$k"; echo "changed since run $RUN, left alone by its rollback: undo it by hand"
      done < "$BACKUP/kept"
      hdr "done" "$RUN"; exit 0
    fi
    hdr nothing "$RUN"; echo "run $RUN was $(cat "$BACKUP/rolled-back" 2>/dev/null) already"; exit 0
  fi
  rm -f "$BACKUP/kept"
  # An earlier rollback of this run restored something and did not finish (cut off, or a
  # unit unhealthy): what it restored reads "already" now, and its handlers are still due.
  [ ! -f "$BACKUP/restart-due" ] || RESTORED=1
}

# restoring: before each restore. So that a rollback cut off after one still restarts the
# units, the next rollback of the run finds $BACKUP/restart-due and runs the handlers; and
# the kubelet units are marked as an apply marks them (common.sh `due`).
restoring() {
  # (printf, not `:`: a failed redirection of a special built-in ends a POSIX shell.)
  [ -f "$BACKUP/restart-due" ] || printf '%s\n' "$RUN" > "$BACKUP/restart-due" 2>/dev/null || true
  due
}

# cut1: the field before the first tab of R into F, R keeps the rest (empty fields stay
# empty: read with IFS set to a tab would take two tabs for one).
cut1() {
  case $R in
    *"$TAB"*) F=${R%%"$TAB"*}; R=${R#*"$TAB"} ;;
    *) F=$R; R= ;;
  esac
}

restore() {
  # Newest first: the last entry for a path is undone first. The reversed copy is checked
  # whole: on a full disk a cut-off copy would skip the oldest changes and say done.
  # Its size is known: every line of the manifest and a newline (LC_ALL=C: bytes).
  n=$(awk '{ n += length($0) + 1 } END { print n + 0 }' "$BACKUP/manifest" 2>/dev/null)
  if ! awk '{ l[NR] = $0 } END { for (i = NR; i > 0; i--) print l[i] }' "$BACKUP/manifest" \
      > "$BACKUP/manifest.rev" 2>/dev/null ||
    [ "$(wc -c < "$BACKUP/manifest.rev" 2>/dev/null | tr -d ' ')" != "${n:-x}" ]; then
    rm -f "$BACKUP/manifest.rev"
    fail error "$BACKUP/manifest"
    echo "cannot write $BACKUP/manifest.rev (full or read-only filesystem?): nothing restored"
    return
  fi
  TAB=$(printf '\t')
  # shellcheck disable=SC2034 # d takes the rest of the line, so c is the fourth field alone
  while IFS= read -r R; do
    cut1; kind=$F; cut1; a=$F; cut1; b=$F; cut1; c=$F; d=$R
    case $kind in
    file)
      path=$a before=$b after=$c
      # A line cut short (a full disk during the run) names no complete change.
      [ -n "$c" ] || continue
      dir=${path%/*}; [ -n "$dir" ] || dir=/
      # Kept for a parent that is not a real directory: a later rollback, once it is
      # again, may still restore it (SKIPPED keeps the run from being marked rolled back).
      if ! why=$(real_dir "$dir"); then
        SKIPPED=1; hdr kept "$path"; echo "$why: dnsfix never writes through a symlinked directory"; continue
      fi
      # In the directory itself from here on (pin_dir); back in / after the entry.
      if ! pin_dir "$dir"; then
        SKIPPED=1; hdr kept "$path"; echo "$dir $PINNED: dnsfix never writes through a symlinked directory"; continue
      fi
      restore_file "$path" "./${path##*/}" "$before" "$after"
      cd /
      ;;
    sysctl)
      name=$a before=$b after=$c
      p=/proc/sys/$(printf '%s' "$name" | tr . /)
      # shellcheck disable=SC2002 # cat keeps an unreadable /proc/sys file a quiet empty value
      cur=$(cat "$p" 2>/dev/null | tr -s ' \t' ' ')
      if [ "$cur" = "$before" ]; then hdr already "$name"; continue; fi
      if [ "$cur" != "$after" ]; then kept "$name"; echo "changed since run $RUN (now $cur), left alone"; continue; fi
      if [ -n "$before" ]; then restoring || continue; fi
      if [ -n "$before" ] && printf '%s\n' "$before" > "$p" 2>/dev/null; then RESTORED=1; hdr restored "$name"
      else fail error "$name"; echo "cannot set it back to ${before:-its old value}"; fi
      ;;
    module)
      hdr kept "$a"; echo "loaded by run $RUN; dnsfix does not unload modules"
      ;;
    esac
  done < "$BACKUP/manifest.rev"
  rm -f "$BACKUP/manifest.rev"
}

# restore_file PATH HERE BEFORE AFTER: put back what run RUN changed at PATH, named HERE
# (./NAME) in its directory, the working directory: compare-and-swap, as apply writes.
restore_file() {
  state_of "$2"
  if [ "$CUR" = "$3" ]; then hdr already "$1"; return; fi
  if [ "$CUR" != "$4" ]; then
    kept "$1"; echo "changed since run $RUN (sha256 $CUR), left alone"; return
  fi
  # What apply checks before it writes, checked again: since the run, a user may have
  # opened a directory on the way to all (or swapped it for one of their own, mode 777),
  # mounted a file over the target, or marked it immutable. Kept as a symlinked parent
  # is (SKIPPED): rolling the run back again restores it once that is undone.
  if ! why=$(may_replace "$1" present); then
    SKIPPED=1; hdr kept "$1"; echo "$why"; return
  fi
  if [ "$3" = absent ]; then
    restoring || return
    if rm -f "$2"; then RESTORED=1; hdr removed "$1"
    else fail error "$1"; echo "cannot remove it"; fi
    return
  fi
  # A new file of the backup's bytes, mode and owner beside the target, under an
  # unguessable name (tmp_beside, create, own), then renamed over it (put).
  rpath=$1 rhere=$2 rbefore=$3 tmp=
  OWN_WHY=
  # shellcheck disable=SC2046
  set -- $(stat -c '%a %u %g' "$BACKUP/files$rpath" 2>/dev/null)
  if [ -f "$BACKUP/files$rpath" ] && tmp=$(tmp_beside "$rhere" "rollback-$RUN") &&
    create "$tmp" "${1:-644}" cat "$BACKUP/files$rpath" &&
    own "$tmp" "${1:-644}" "${2:-0}" "${3:-0}" && label "$tmp" "$rhere" &&
    [ "$(sha "$tmp")" = "$rbefore" ]; then
    sync "$tmp" 2>/dev/null || sync
    restoring || { rm -f "$tmp"; return; }
    if put "$tmp" "$rhere"; then
      RESTORED=1; hdr restored "$rpath"
    else
      rm -f "$tmp"; fail error "$rpath"; echo "cannot rename ${rpath%/*}/${tmp#./} over $rpath"
    fi
  else
    [ -z "$tmp" ] || rm -f "$tmp"
    fail error "$rpath"; echo "cannot restore it from $BACKUP/files$rpath${OWN_WHY:+: $OWN_WHY}"
  fi
}

finish() {
  # What was applied is undone: no plan counts as carried out or done here any more, so
  # applying one again runs its handlers (and notes its own pods pending).
  [ -n "$RESTORED" ] && rm -rf "$STATE/handled" "$STATE/done" "$STATE/pods-pending" "$STATE/pods-failed" 2>/dev/null
  # Marked before a restore that then failed: nothing changed, nothing is due.
  [ -n "$RESTORED" ] || undue
  if [ -z "$FAILED" ]; then
    # Its handlers ran healthy (or it had none).
    rm -f "$BACKUP/restart-due"
    # Rolled back once, as far as it could: entries changed since (kept) stay this run's
    # no more, and a later rollback only says them again; entries kept for a symlinked
    # parent keep the run open, until a rollback restores them.
    [ -n "$SKIPPED" ] || printf 'rolled back %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$BACKUP/rolled-back"
    hdr "done" "$RUN"
  else
    hdr failed "$RUN"
  fi
}
