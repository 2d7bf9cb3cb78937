# shellcheck shell=sh
# dnsfix apply script: POSIX sh, run as root on one node, in one exec per host, after
# common.sh. dnsfix appends the steps of this host's plan (calls to the functions below,
# file contents as base64 here-documents), its handlers and a final `finish`. Every step
# reports one record.
#
# Safety:
# - a node-side lock keeps two applies off one node: flock(1) on $STATE/lock, held by this
#   shell until it exits, so the kernel releases it when the run ends or dies, and no run
#   can take or remove another's;
# - every write of bookkeeping (the lock's owner, the pods-pending note, the backup, the
#   manifest line) is checked before the node's file is touched: a full disk stops the
#   run with the file unchanged;
# - a file is never written through a symlinked directory: every parent of the target must
#   be a real directory (a parent swapped for a symlink since the plan is stale), and the
#   write happens inside that directory (pin_dir), so a swap after the check cannot move
#   it elsewhere;
# - every file is compare-and-swap: the current sha256 must be the plan's before (or the
#   file absent when the plan creates it) right before the rename; a file already at the
#   plan's after is left alone ("already"); a sysctl's live value likewise (checked with
#   the files, and again before it is set);
# - writes are atomic: the new content goes to a temp file in the same directory, created
#   new (noclobber) under an unguessable name with the old file's mode and owner (create
#   and own, in common.sh: never through a symlink, and checked), synced, checked against the plan's
#   sha256, and renamed over the target; the directory is synced after;
# - a target that is not a regular file (a FIFO, a device) is stale, never opened;
# - the old file is copied under /var/lib/dnsfix/backups/RUN/files/ first and listed in
#   the run's manifest, so `dnsfix rollback RUN` can restore it;
# - nothing is written once any step failed (later steps report "skipped");
# - the handlers run inside the same lock, each gated on the unit coming back healthy;
#   dnsfix marks the plan done on the node only after it has verified the result.
# - what dnsfix creates here is private: backups and its state are made under umask 077.
# shellcheck disable=SC2153 # STATE and the helpers come from common.sh, which runs first
RUN="@RUN@"
BACKUP=$STATE/backups/$RUN
# Written under the lock once this plan's changes are in place and its handlers ran, so
# a run of the same plan that finds nothing to change restarts nothing, even before the
# run that applied it has verified and marked it done.
HANDLED="@HANDLED@"
# Where the plan recreates the node's DNS pods (empty where it does not): this run's note,
# written under the lock before its changes and its handlers (pods_pending), that they are
# still to be recreated. dnsfix removes it once they are, verified, and the plan marked
# done; a run of the same plan that finds the changes made and the note left by a run no
# longer running recreates them (src/apply/mod.rs `pods_left`).
# Without it, a run that died after the handlers (a second Ctrl-C, its link dropped)
# left the node handled, its pods on the old file, and every re-run "unchanged".
PODS_PENDING="@PODS_PENDING@"
# Set when this run changed something on the node (its handlers are then due).
CHANGED=
# This run's restart marks (common.sh `due`) are named after it.
# shellcheck disable=SC2034 # read by common.sh's due and undue
DUE_NAME=$RUN

# lock, then the run's backup directory (private, like everything in $STATE).
begin_run() {
  lock "run $RUN"
  mkdir -p "$BACKUP/files" 2>/dev/null || { fail fatal "cannot create $BACKUP"; exit 0; }
  # Not handled yet: this run's handlers are due, whatever it finds. Noted before the
  # first change, as the rest of the bookkeeping (a full disk: nothing written).
  [ -f "$HANDLED" ] || pods_pending
}

# check PATH BEFORE AFTER: is the file where the plan expects it? BEFORE/AFTER are sha256
# or "absent". Prints todo, already, or "stale CURRENT".
check() {
  state_of "$1"
  case $CUR in
    symlink | not-a-regular-file) echo "stale $CUR" ;;
    "$3") echo already ;;
    "$2") echo todo ;;
    *) echo "stale $CUR" ;;
  esac
}

# precheck PATH BEFORE AFTER: run for every file before anything is written, so a host
# that is stale for one file gets none written.
precheck() {
  if ! why=$(real_dir "${1%/*}"); then
    fail stale "$1 symlinked-parent"; echo "$why: dnsfix never writes through a symlinked directory"; return
  fi
  state=$(check "$1" "$2" "$3")
  case $state in
    stale*) fail stale "$1 ${state#stale }"; return ;;
  esac
  # A directory others can write, a mount over the file, an immutable flag (common.sh).
  if [ "$state" = todo ] && ! why=$(may_replace "$1" "$2"); then
    fail error "$1"; echo "$why"; return
  fi
}

# write PATH BEFORE AFTER MODE < base64 content. Back in / after it (write_in works in
# the target's directory).
write() {
  write_in "$@"
  cd /
}

write_in() {
  path=$1 before=$2 after=$3 mode=$4
  if [ -n "$FAILED" ]; then cat >/dev/null; hdr skipped "$path"; return; fi
  dir=${path%/*}; [ -n "$dir" ] || dir=/
  name=${path##*/}
  state=$(check "$path" "$before" "$after")
  case $state in
    already) cat >/dev/null; adopt "$path" "$before" "$after"; return ;;
    stale*) cat >/dev/null; fail stale "$path ${state#stale }"; return ;;
  esac
  if ! why=$(real_dir "$dir"); then
    cat >/dev/null; fail stale "$path symlinked-parent"; echo "$why: dnsfix never writes through a symlinked directory"; return
  fi
  if [ ! -d "$dir" ]; then
    (umask 022; mkdir -p "$dir") 2>/dev/null || { cat >/dev/null; fail error "$path"; echo "cannot create directory $dir"; return; }
  fi
  # From here on in the directory itself, its files named ./NAME: see pin_dir.
  if ! pin_dir "$dir"; then
    cat >/dev/null; fail stale "$path symlinked-parent"; echo "$dir $PINNED: dnsfix never writes through a symlinked directory"; return
  fi
  here=./$name
  # A temp file an interrupted run left behind is garbage now (we hold the lock): only
  # names tmp_beside makes, never a look-alike someone keeps there.
  # shellcheck disable=SC2086 # HEX16 is a glob
  rm -f "./.$name.dnsfix-"*-$HEX16 2>/dev/null
  # The new file gets the old one's mode and owner (a new one: the plan's mode, root's).
  if [ "$before" = absent ]; then
    set -- "$mode" 0 0
  else
    # shellcheck disable=SC2046
    set -- $(stat -c '%a %u %g' "$here" 2>/dev/null)
  fi
  fmode=${1:-644} fuid=${2:-0} fgid=${3:-0}
  if ! tmp=$(tmp_beside "$here" "$RUN"); then
    cat >/dev/null; fail error "$path"; echo "no random bits for a temp file's name (od, /dev/urandom)"; return
  fi
  if ! create "$tmp" "$fmode" base64 -d; then
    rm -f "$tmp"
    fail error "$path"; echo "cannot write $dir/${tmp#./} (full or read-only filesystem?)"
    return
  fi
  if [ "$(sha "$tmp")" != "$after" ]; then
    rm -f "$tmp"; fail error "$path"; echo "the written copy does not match the plan (disk full?)"; return
  fi
  if [ "$before" = absent ]; then
    record "$(printf 'file\t%s\tabsent\t%s\t%s' "$path" "$after" "$mode")" || { rm -f "$tmp"; return; }
  else
    # The file as it is at the moment of copying, opened only if it is a regular file:
    # whoever can write its directory (Kubespray's kube_owner, /etc/kubernetes) may have
    # swapped it since the check for a FIFO, whose open would hold the run and the node's
    # lock for good, or for a symlink to /dev/zero, which a plain cp follows and reads until
    # /var is full. -R copies a FIFO or a device as one (mkfifo, mknod) and -P a symlink as
    # a symlink, never opening them: coreutils' cp copies a non-regular file as regular
    # only without -R (src/copy.c copy_as_regular, then mknodat; aa0c0de35), busybox's
    # likewise ("cp thing1 thing2 without -R: just open and read()", else mknod;
    # libbb/copy_file.c, 371fe9f71). The copy is then no regular file of the plan's
    # sha256 (state_of opens none either), so the file changed meanwhile: stale. A
    # directory in its place is stale at once: -R would copy the whole tree as root.
    if [ -d "$here" ] && [ ! -L "$here" ]; then
      rm -f "$tmp"; fail stale "$path not-a-regular-file"; return
    fi
    { rm -rf "$BACKUP/files$path" && mkdir -p "$BACKUP/files$dir" && cp -RPp "$here" "$BACKUP/files$path"; } 2>/dev/null ||
      { rm -f "$tmp"; rm -rf "$BACKUP/files$path"; fail error "$path"; echo "cannot back up to $BACKUP/files$path (full or read-only filesystem?)"; return; }
    # The copy must be what the plan saw: where it is not, the file changed meanwhile
    # (stale, as the compare-and-swap would find), or the copy is cut short.
    state_of "$BACKUP/files$path"
    if [ "$CUR" != "$before" ]; then
      rm -f "$tmp"; rm -rf "$BACKUP/files$path"
      state=$(check "$here" "$before" "$after")
      case $state in
        todo) fail error "$path"; echo "cannot back up to $BACKUP/files$path: the copy is not the file (full filesystem?)" ;;
        *) fail stale "$path ${state#stale }" ;;
      esac
      return
    fi
    record "$(printf 'file\t%s\t%s\t%s\t%s' "$path" "$before" "$after" "$fmode")" || { rm -f "$tmp"; return; }
  fi
  own "$tmp" "$fmode" "$fuid" "$fgid" ||
    { rm -f "$tmp"; fail error "$path"; echo "cannot give $dir/${tmp#./} mode $fmode and owner $fuid:$fgid${OWN_WHY:+: $OWN_WHY}"; return; }
  label "$tmp" "$here" ||
    { rm -f "$tmp"; fail error "$path"; echo "cannot give $dir/${tmp#./} the SELinux context of $path (chcon)"; return; }
  # The backup and its manifest line reach the disk with the new content, their
  # directories' entries too, so a power loss after the rename cannot keep the new file
  # and lose what rolls it back.
  if [ "$before" = absent ]; then set -- "$tmp" "$BACKUP/manifest" "$BACKUP"
  else set -- "$tmp" "$BACKUP/manifest" "$BACKUP" "$BACKUP/files$path" "$BACKUP/files$dir"; fi
  sync "$@" 2>/dev/null || sync
  # Compare-and-swap: the target must still be what the plan saw.
  state=$(check "$here" "$before" "$after")
  case $state in
    todo) ;;
    *) rm -f "$tmp"; fail stale "$path ${state#stale }"; return ;;
  esac
  due || { rm -f "$tmp"; return; }
  if put "$tmp" "$here"; then
    CHANGED=1
    # The directory moved while it was written (see pin_dir): the new file is in it, not
    # at PATH. (`cd -P .` asks the kernel again: dash's pwd -P repeats what the last cd
    # found.)
    now=$(cd -P . 2>/dev/null && pwd -P)
    if [ "$now" != "$dir" ]; then
      fail stale "$path moved"; echo "$dir was moved to ${now:-somewhere else} while it was written: the new file is there, nothing new is at $path"
      return
    fi
    hdr ok "$path"
  else
    rm -f "$tmp"; fail error "$path"; echo "cannot rename $dir/${tmp#./} over $path"
  fi
}

# adopt PATH BEFORE AFTER: the file already has the plan's content. If an earlier,
# interrupted run wrote it over the same BEFORE, take over that run's backup, so rolling
# back this run restores it.
adopt() {
  # A run that ran this plan's handlers was not interrupted: nothing to take over.
  if [ -f "$HANDLED" ]; then hdr already "$1"; return; fi
  apath=$1 abefore=$2 aafter=$3
  # Only a run that was interrupted: one that finished (applied or failed), was rolled
  # back or was taken over by another run already has its own record and its own
  # rollback, and is not this run's to take over (this run takes over each of its files).
  set --
  for m in "$STATE"/backups/*/manifest; do
    r=${m%/manifest}
    if [ ! -f "$m" ] || [ -f "$r/result" ] || [ -f "$r/rolled-back" ]; then continue; fi
    if [ -f "$r/adopted-by" ] && [ "$(cat "$r/adopted-by" 2>/dev/null)" != "$RUN" ]; then continue; fi
    set -- "$@" "$m"
  done
  prev=
  [ $# -eq 0 ] ||
    prev=$(awk -F '\t' -v p="$apath" -v b="$abefore" -v a="$aafter" \
      '$1 == "file" && $2 == p && $3 == b && $4 == a { f = FILENAME } END { print f }' "$@" 2>/dev/null)
  prev=${prev%/manifest}
  if [ -n "$prev" ] && [ "$prev" != "$BACKUP" ]; then
    line=$(awk -F '\t' -v p="$apath" -v b="$abefore" -v a="$aafter" '$1 == "file" && $2 == p && $3 == b && $4 == a' "$prev/manifest" | tail -n 1)
    # The copy is checked as a backup is: a full disk must not leave this run a cut-off
    # backup it cannot roll back from.
    if [ -f "$prev/files$apath" ]; then
      { mkdir -p "$BACKUP/files${apath%/*}" && cp -p "$prev/files$apath" "$BACKUP/files$apath" &&
        [ "$(sha "$BACKUP/files$apath")" = "$abefore" ]; } 2>/dev/null || {
        rm -f "$BACKUP/files$apath"; fail error "$apath"
        echo "cannot copy the interrupted run ${prev##*/}'s backup to $BACKUP/files$apath (full or read-only filesystem?)"
        return
      }
    fi
    record "$line" || return
    due || return
    printf '%s\n' "$RUN" > "$prev/adopted-by" 2>/dev/null
    CHANGED=1
    hdr adopted "$apath"; echo "written by the interrupted run ${prev##*/}"
  else
    hdr already "$apath"
  fi
}

# sysctl_now NAME: the live value, blanks squeezed, in $cur ($p: its /proc/sys path).
sysctl_now() {
  p=/proc/sys/$(printf '%s' "$1" | tr . /)
  # shellcheck disable=SC2002 # cat keeps an unreadable /proc/sys file a quiet empty value
  cur=$(cat "$p" 2>/dev/null | tr -s ' \t' ' ')
}

# sysctl_precheck NAME BEFORE AFTER: run with the files' prechecks, so a host where a value
# moved since the plan gets nothing written. BEFORE is empty where the key did not exist
# then (br_netfilter not loaded: the run loads it first), which any value now matches.
sysctl_precheck() {
  sysctl_now "$1"
  if [ -n "$2" ] && [ "$cur" != "$2" ] && [ "$cur" != "$3" ]; then
    fail stale "$1"; echo "reads $cur, the plan saw $2: changed since the plan"
  fi
}

# sysctl NAME BEFORE AFTER: set a live value and read it back; compare-and-swap, as files
# are: a value that is neither the plan's before nor its after is left alone.
sysctl_set() {
  name=$1 before=$2 after=$3
  if [ -n "$FAILED" ]; then hdr skipped "$name"; return; fi
  sysctl_now "$name"
  if [ "$cur" = "$after" ]; then hdr already "$name"; return; fi
  if [ -n "$before" ] && [ "$cur" != "$before" ]; then
    fail stale "$name"; echo "reads $cur, the plan saw $before: changed since the plan"; return
  fi
  record "$(printf 'sysctl\t%s\t%s\t%s' "$name" "$cur" "$after")" || return
  due || return
  # shellcheck disable=SC2002 # cat keeps an unreadable /proc/sys file a quiet empty value
  if printf '%s\n' "$after" > "$p" 2>/dev/null && [ "$(cat "$p" 2>/dev/null | tr -s ' \t' ' ')" = "$after" ]; then
    CHANGED=1
    hdr ok "$name"
  else
    fail error "$name"; echo "$p reads $(cat "$p" 2>/dev/null) after writing $after"
  fi
}

# module NAME: load a kernel module and check it is there.
module() {
  if [ -n "$FAILED" ]; then hdr skipped "$1"; return; fi
  if [ -d "/sys/module/$1" ]; then hdr already "$1"; return; fi
  record "$(printf 'module\t%s' "$1")" || return
  due || return
  out=$(modprobe "$1" 2>&1)
  if [ -d "/sys/module/$1" ]; then
    CHANGED=1
    hdr ok "$1"
  else
    fail error "$1"; echo "modprobe $1: ${out:-module not loaded}"
  fi
}

# handlers_due: are this plan's handlers still to run? Not when this run changed nothing
# and an earlier run of the same plan ran them (it may still be verifying).
handlers_due() {
  if [ -z "$FAILED" ] && [ -z "$CHANGED" ] && [ -f "$HANDLED" ]; then
    hdr handled "$(cat "$HANDLED" 2>/dev/null)"
    return 1
  fi
  return 0
}

# pods_pending: note that this run's DNS pods are still to be recreated (the run's id,
# whole or absent): before the first change where the plan is not handled yet, and again
# before the handlers (a handled plan changed again). Not written, nothing is written or
# restarted after it: a run that then died would leave no trace of the pods left.
pods_pending() {
  if [ -n "$FAILED" ] || [ -z "$PODS_PENDING" ]; then return 0; fi
  { mkdir -p "${PODS_PENDING%/*}" && printf '%s\n' "$RUN" > "$PODS_PENDING.$$" &&
    mv -f "$PODS_PENDING.$$" "$PODS_PENDING"; } 2>/dev/null && return 0
  rm -f "$PODS_PENDING.$$" 2>/dev/null
  fail error "$PODS_PENDING"
  echo "cannot note that the DNS pods are still to be recreated (full or read-only filesystem?): nothing more is written or restarted"
}

# finish: record the result on the node (dnsfix marks the plan done after verifying).
finish() {
  # Marked before a change that then failed: nothing changed, nothing is due.
  [ -n "$CHANGED" ] || undue
  if [ -z "$FAILED" ]; then
    { mkdir -p "${HANDLED%/*}" && printf '%s\n' "$RUN" > "$HANDLED.$$" && mv -f "$HANDLED.$$" "$HANDLED"; } 2>/dev/null ||
      rm -f "$HANDLED.$$"
    # Without its result this run would pass for an interrupted one (adopt).
    if printf 'applied %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$BACKUP/result" 2>/dev/null; then
      hdr "done" "$RUN"
    else
      hdr failed "$RUN"; echo "cannot record the result in $BACKUP/result (full or read-only filesystem?)"
    fi
  else
    printf 'failed %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$BACKUP/result"
    hdr failed "$RUN"
  fi
}
