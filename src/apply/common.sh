# shellcheck shell=sh
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
# dnsfix's own state on the node (locks, backups, manifests) is private to root.
STATE=/var/lib/dnsfix
umask 077

# The kubelet units this run's handlers restart (dnsfix sets DUE after these files; the
# script sets DUE_NAME), and whether `due` marked them.
DUE=
DUE_NAME=
DUE_MARKED=
DUE_FAILED=

# due: before a run's first change on the node, mark the kubelet units its handlers restart:
# $STATE/restart-due/UNIT/DUE_NAME holds the run, the boot id and the seconds since boot. A
# run cut off between its changes and its handlers leaves them: the gather reads them, and
# a kubelet process started before its mark is still on the old settings
# (DNS-KUBELET-RESTART-DUE). A handler removes its unit's marks once the unit restarted;
# `undue` takes this run's back where it changed nothing after all. A mark that cannot be
# written stops the run before the change, as any bookkeeping does.
due() {
  [ -z "$DUE_FAILED" ] || return 1
  { [ -n "$DUE" ] && [ -z "$DUE_MARKED" ]; } || return 0
  dboot='' dup=''
  { read -r dboot < /proc/sys/kernel/random/boot_id; read -r dup _ < /proc/uptime; } 2>/dev/null
  DUE_MARKED=1
  for u in $DUE; do
    if ! { mkdir -p "$STATE/restart-due/$u" && printf '%s %s %s\n' "$RUN" "$dboot" "$dup" > "$STATE/restart-due/$u/$DUE_NAME"; } 2>/dev/null; then
      # Every later change waits too (a rollback goes on to its next entry).
      DUE_FAILED=1
      fail error "$STATE/restart-due/$u"; echo "cannot mark $u to be restarted (full or read-only filesystem?)"
      return 1
    fi
  done
}

undue() {
  [ -n "$DUE_MARKED" ] || return 0
  for u in $DUE; do
    rm -f "$STATE/restart-due/$u/$DUE_NAME" 2>/dev/null; rmdir "$STATE/restart-due/$u" 2>/dev/null
  done
  DUE_MARKED=
}

# Why a state directory that is not private_state is refused.
KEPT_PRIVATE="dnsfix keeps its lock, backups and manifests only in a directory that only root can write (remove it, or chown root: and chmod 700 it)"

# lock WHO: flock on $STATE/lock through fd 9, held until this shell exits, so the kernel
# releases it however the run ends and no run can take or remove another's. $STATE/owner
# says who holds it, for the message a second run prints. Every write is checked.
lock() {
  [ -L "$STATE" ] && { fail fatal "$STATE is a symlink: $KEPT_PRIVATE"; exit 0; }
  mkdir -p "$STATE" 2>/dev/null || { fail fatal "cannot create $STATE"; exit 0; }
  private_state || exit 0
  command -v flock >/dev/null 2>&1 || { fail fatal "flock (util-linux) is not installed: dnsfix cannot lock the node"; exit 0; }
  # `command`: a failed redirection of the special built-in exec would end dash here, before
  # the message. Its own 2>/dev/null would stay for the rest of the script (exec keeps its
  # redirections), hiding every later error: the group's is only the group's.
  { command exec 9>>"$STATE/lock"; } 2>/dev/null || { fail fatal "cannot open $STATE/lock (full or read-only filesystem?)"; exit 0; }
  if ! flock -n -x 9; then
    owner=$(cat "$STATE/owner" 2>/dev/null)
    hdr locked "${owner:-another apply} holds $STATE/lock"
    exit 0
  fi
  { printf '%s (pid %s)\n' "$1" "$$" > "$STATE/owner.$$" && mv -f "$STATE/owner.$$" "$STATE/owner"; } 2>/dev/null ||
    { rm -f "$STATE/owner.$$"; fail fatal "cannot write $STATE/owner (full or read-only filesystem?)"; exit 0; }
}

# private_state: $STATE is root's alone, as dnsfix makes it (umask 077). One made or
# opened up by anyone else (a user, a container with a hostPath mount) would let them
# plant symlinks where this run writes as root (the lock's owner, a backup copy), and
# edit the manifests and backups a rollback restores from. (stat does not follow a
# symlink: one put there after lock's look reads as mode 777.)
private_state() {
  # shellcheck disable=SC2046
  set -- $(stat -c '%u %a' "$STATE" 2>/dev/null)
  if [ "${1:-x}" != 0 ] || [ $((0${2:-777} & 022)) -ne 0 ]; then
    fail fatal "$STATE is owned by uid ${1:-?} with mode ${2:-?}: $KEPT_PRIVATE"
    return 1
  fi
}

# record LINE: append one line to the run's manifest, or fail the run. Nothing is changed
# on the node unless its manifest line is there first.
record() {
  printf '%s\n' "$1" >> "$BACKUP/manifest" 2>/dev/null && return 0
  fail error "$BACKUP/manifest"; echo "cannot record in $BACKUP/manifest (full or read-only filesystem?)"
  return 1
}

# What tmp_beside's random part matches, in a glob: 16 hex digits.
X='[0-9a-f]'
# shellcheck disable=SC2034 # apply.sh uses it
HEX16=$X$X$X$X$X$X$X$X$X$X$X$X$X$X$X$X

# tmp_beside PATH TAG: the name of a new temp file in PATH's directory: hidden, after the
# file and TAG, with 64 random bits, so no one who can write that directory can have put
# anything at the name beforehand. Fails without randomness: a guessable name is not used.
tmp_beside() {
  rnd=$(od -An -N8 -tx8 /dev/urandom 2>/dev/null)
  rnd=${rnd##* }
  case $rnd in ????????????????) ;; *) return 1 ;; esac
  printf '%s/.%s.dnsfix-%s-%s' "${1%/*}" "${1##*/}" "$2" "$rnd"
}

# create FILE MODE COMMAND...: COMMAND's output into FILE, a new file: noclobber refuses
# an existing regular file or a symlink to one and creates with O_EXCL (so not through a
# dangling symlink either); only the unguessable name (tmp_beside) keeps a FIFO or device
# from being there. Its read and write bits are MODE's from the umask.
create() {
  cfile=$1 cmode=$2
  shift 2
  (
    umask "$(printf '%03o' $((0777 & ~0$cmode & 0777)))" || exit 1
    set -C
    "$@" > "$cfile"
  ) 2>/dev/null
}

# own FILE MODE UID GID: FILE's owner (chown -h: never through a symlink), then its mode
# where the umask did not make it (execute or special bits, a directory's default ACL;
# chown clears setuid), on the regular file made here only; then all three are checked
# (stat does not follow a symlink): a file that is not exactly so is not put in place.
# OWN_WHY says why, where it is not a failed command.
own() {
  OWN_WHY=
  chown -h "${3:-0}:${4:-0}" "$1" 2>/dev/null || return 1
  want=$(printf '%o' $((0$2)))
  if [ "$(stat -c %a "$1" 2>/dev/null)" != "$want" ]; then
    { [ -f "$1" ] && [ ! -L "$1" ]; } || return 1
    # chmod follows a symlink (its -h is coreutils 9.5's, src/chmod.c 07a69fc3b): in a
    # directory its group or others can write, not sticky (MicroK8s's args: its group's),
    # one of them could swap the file for a symlink after the look above, and have root's
    # chmod give this mode to any file they choose.
    # So does its owner, where that is not root (Kubespray's kube_owner of /etc/kubernetes).
    # shellcheck disable=SC2046
    set -- "$@" $(stat -c '%u %a' "${1%/*}" 2>/dev/null)
    odu=${5:-x} odm=${6:-777}
    if [ "$odu" != 0 ] || { [ $((0$odm & 022)) -ne 0 ] && [ $((0$odm & 01000)) -eq 0 ]; }; then
      # shellcheck disable=SC2034 # apply.sh and rollback.sh say it
      OWN_WHY="its directory (owner uid $odu, mode $odm) is writable by others than root, and mode $want needs a chmod, which would follow a symlink put in the file's place"
      return 1
    fi
    chmod "$want" "$1" 2>/dev/null || return 1
  fi
  [ "$(stat -c '%a %u %g' "$1" 2>/dev/null)" = "$want ${3:-0} ${4:-0}" ]
}

# label TMP PATH: where SELinux is on, TMP gets the context PATH has, as a file made anew
# gets its directory's default instead (etc_t in /etc, where /etc/resolv.conf is
# net_conf_t, which NetworkManager must be able to write). Nothing to do for a new PATH:
# put gives it the context the policy names for it.
label() {
  [ -e /sys/fs/selinux/enforce ] && [ -e "$2" ] || return 0
  command -v chcon >/dev/null 2>&1 || return 1
  # -h: TMP itself, never what a symlink put in its place leads to (src/chcon.c).
  chcon -h --reference="$2" "$1" 2>/dev/null
}

# put TMP PATH: TMP renamed over PATH while it is still the regular file made here; the
# directory synced after. A new PATH gets its SELinux context from the policy. `-T`: PATH
# is the name renamed over, whatever it became since it was checked; without it, a PATH
# someone replaced by a directory, or by a symlink to one, would take TMP into that
# directory (coreutils' mv; busybox's since 1.34, coreutils/mv.c, commit 91bc01c59).
put() {
  { [ -f "$1" ] && [ ! -L "$1" ]; } || return 1
  pnew=; [ -e "$2" ] || pnew=1
  mv -fT "$1" "$2" 2>/dev/null || return 1
  if [ -n "$pnew" ] && [ -e /sys/fs/selinux/enforce ] && command -v restorecon >/dev/null 2>&1; then
    restorecon "$2" 2>/dev/null || true
  fi
  sync "${2%/*}" 2>/dev/null || true
}

# state_of PATH: into CUR, its sha256, "absent", "symlink" or "not-a-regular-file" (a FIFO
# or a device is never opened: reading it could block the run for good).
state_of() {
  if [ -L "$1" ]; then CUR=symlink
  elif [ ! -e "$1" ]; then CUR=absent
  elif [ ! -f "$1" ]; then CUR=not-a-regular-file
  else
    CUR=$(sha "$1")
    [ -n "$CUR" ] || CUR=unreadable
  fi
}

# real_dir DIR: DIR and every parent is a real directory, not a symlink.
real_dir() {
  d=$1
  while [ -n "$d" ] && [ "$d" != / ]; do
    if [ -L "$d" ]; then echo "$d is a symlink"; return 1; fi
    d=${d%/*}
  done
  return 0
}

# may_replace PATH BEFORE: nothing keeps root from replacing PATH (BEFORE: its sha256, or
# "absent" for a file made anew) by renaming a new file over it, checked before anything is
# written, in apply and rollback alike: its directories (roots_dir), a file mounted over it,
# an immutable flag. Else says why, and fails.
may_replace() {
  roots_dir "${1%/*}" "$2" || return 1
  # A file mounted over the target (a container's /etc/resolv.conf, which systemd-nspawn
  # --resolv-conf=bind-* mounts, man/systemd-nspawn.xml, systemd v255.13) refuses the
  # rename (EBUSY) only at the write, after the files before it: found here, none is.
  # mountinfo's mount point field escapes only characters a planned path never has.
  if [ -e "$1" ] &&
    awk -v p="$1" '$5 == p { f = 1 } END { exit !f }' /proc/self/mountinfo 2>/dev/null; then
    echo "$1 is a mount point (a file mounted over it): dnsfix writes by renaming a new file over the old, which a mount point refuses; change it where it is mounted from, or leave this change out"; return 1
  fi
  # An immutable or append-only file or directory (`chattr +i /etc/resolv.conf` keeps a
  # resolver file from its manager) refuses the rename only at the write, after the files
  # before it are written: found here, nothing is.
  if command -v lsattr >/dev/null 2>&1; then
    for pa in "${1%/*}" "$1"; do
      [ -e "$pa" ] || continue
      pflags=$(lsattr -d -- "$pa" 2>/dev/null) || continue
      case ${pflags%% *} in
        *[ia]*) echo "$pa is immutable or append-only (lsattr: ${pflags%% *}): dnsfix does not lift that; chattr -i -a it, or leave this change out"; return 1 ;;
      esac
    done
  fi
}

# roots_dir DIR BEFORE: what exists of DIR and the directories above it is a directory, and
# one anyone can write is sticky (no one else can move root's files in it); for a file
# dnsfix creates (BEFORE absent), each is root's too. A directory any user can write
# (made beforehand by a user, or by a container that mounts it) would let them replace
# what dnsfix writes there at will, a file that root's daemons then trust; a new file in a
# directory a user owns (/etc/dnsfix made by a user) too: /etc/dnsfix/resolv.conf, which
# the kubelet hands every pod. A file that is there already is the directory owner's to
# replace as it is: Kubespray makes /etc/kubernetes its kube_owner's (kube in its sample
# inventory; roles/kubernetes/preinstall/tasks/0050-create_directories.yml), and dnsfix
# edits kubelet-config.yaml there. (A group a directory is writable by is root's choice:
# MicroK8s gives its group its args, snap/hooks/configure, canonical/microk8s d099c907.)
roots_dir() {
  rd=$1 rnew=
  [ "$2" = absent ] && rnew=1
  while [ -n "$rd" ]; do
    if [ -e "$rd" ]; then
      # A file where a directory should be (`cp resolv.conf /etc/dnsfix` before it was
      # made) would fail the write only at its mkdir, after the files before it.
      if [ ! -d "$rd" ]; then
        echo "$rd is not a directory: the file there is where dnsfix would make one (dnsfix does not remove it)"
        return 1
      fi
      # shellcheck disable=SC2046
      set -- $(stat -c '%u %a' "$rd" 2>/dev/null)
      if { [ -n "$rnew" ] && [ "${1:-x}" != 0 ]; } || [ $((0${2:-777} & 01002)) -eq 2 ]; then
        echo "$rd is owned by uid ${1:-?} with mode ${2:-?}: whoever can write there could put a file of their own in place of what dnsfix writes, for root's daemons to read; dnsfix makes files only in directories root owns, and writes none where any user can write (chown root: it, chmod o-w it)"
        return 1
      fi
    fi
    rd=${rd%/*}
  done
}

# pin_dir DIR: make DIR, a real directory (real_dir), the working directory, and check
# that it is DIR itself: a step then names its files ./NAME, and a parent someone swaps
# for a symlink afterwards cannot send the write elsewhere (the working directory is the
# directory checked, whatever its path leads to now). Back in / where it is not.
pin_dir() {
  if cd -P -- "$1" 2>/dev/null && [ "$(pwd -P)" = "$1" ]; then return 0; fi
  cd /
  return 1
}
# shellcheck disable=SC2034 # apply.sh and rollback.sh use it
PINNED="is not the directory it was checked as (a parent replaced by a symlink since?)"


# handler UNIT VERB PROBE TIMEOUT: restart (or reload) a unit and wait until it is active
# and, for a kubelet-running unit (PROBE=1), http://127.0.0.1:10248/healthz (or
# http://[::1]:10248/healthz) says ok.
# Records "healthy UNIT", or "unhealthy UNIT" with the reason as the body.
#
# healthz asks with curl or wget where a node has them; minimal Debian and RHEL images have
# neither, but they have bash, whose /dev/tcp speaks HTTP/1.0 well enough for a healthz.
healthz() {
  # A kubelet on an IPv6 node may answer on ::1 only (k3s and RKE2 bind its healthz there
  # where the node's IP is IPv6: pkg/daemons/agent/agent.go). Asked there whenever
  # 127.0.0.1 did not say ok, whatever the exit code: wget2 exits 0 on a refused
  # connection or an HTTP error, with nothing written (measured with wget2 1.99.1).
  hbody=$(healthz_at 127.0.0.1 127.0.0.1); hrc=$?
  if [ $hrc -ne 2 ] && { [ $hrc -ne 0 ] || [ "$hbody" != ok ]; }; then
    if b6=$(healthz_at '[::1]' ::1) && [ "$b6" = ok ]; then hbody=ok hrc=0; fi
  fi
  printf %s "$hbody"
  return $hrc
}

# healthz_tools: how healthz_at asks, worked out once before a handler's probes (each
# probe runs in $(...), where what it sets is lost), and set whatever the environment
# held under these names. $bounded: wget's -T and bash's read -t bound each wait, not the
# whole answer, and a listener that trickles a line a second would hold the run (and the
# node's lock) for ever.
#
# $hwget: the node's own port, never through a proxy. Root's environment often names one
# for every login (/etc/environment, which pam_env gives sshd's and sudo's sessions), and
# curl and wget send even 127.0.0.1 there unless no_proxy names it; a proxy's "ok" would
# pass for the kubelet's, a proxy's error fail a healthy one. curl's -q (first: no
# ~/.curlrc, which can name a proxy too) and --noproxy '*' are in healthz_at. GNU wget
# and busybox's take -Y off, which wins over a wgetrc's use_proxy = on and http_proxy
# (GNU wget 1.21; busybox knows no --no-config). wget2 (Fedora's wget from 40, Debian's
# wget2) has no -Y, and its --no-proxy drops only the *_proxy variables: a proxy its rc
# names (http-proxy, or proxy = URL) is still used (rockdaboot/wget2 src/options.c).
# --no-config skips the rc files, but from 2.0 only the user's, not /etc/wget2rc; so
# --http-proxy= too: the command line is read after every rc, and an empty proxy is
# neither an rc's nor the environment's. And -t 1: wget2 retries a refused connection
# (20 tries by default), so a kubelet that is down held each probe the whole `timeout 3`,
# and for ever without timeout; GNU wget does so where a wgetrc says retry_connrefused;
# busybox ignores -t (networking/wget.c).
healthz_tools() {
  bounded=; command -v timeout >/dev/null 2>&1 && bounded="timeout 3"
  hwget='-Y off -t 1'
  if ! command -v curl >/dev/null 2>&1 && command -v wget >/dev/null 2>&1; then
    case $($bounded wget --version 2>/dev/null) in
      *Wget2*) hwget='--no-config --no-proxy --http-proxy= -t 1' ;;
    esac
  fi
}

# healthz_at URLHOST HOST: the kubelet's healthz on HOST (URLHOST: as a URL spells it),
# asked as healthz_tools worked out.
healthz_at() {
  if command -v curl >/dev/null 2>&1; then
    curl -q --noproxy '*' -fsS --max-time 2 "http://$1:10248/healthz" 2>&1
  elif command -v wget >/dev/null 2>&1; then
    # shellcheck disable=SC2086 # several flags, none with a space
    $bounded wget $hwget -q -T 2 -O - "http://$1:10248/healthz" 2>&1
  elif command -v bash >/dev/null 2>&1; then
    # shellcheck disable=SC2016
    $bounded bash -c '
      exec 3<>"/dev/tcp/$1/10248" || exit 1
      printf "GET /healthz HTTP/1.0\r\nHost: %s\r\n\r\n" "$1" >&3
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
      exit 0' healthz "$2" 2>&1
  else
    echo "neither curl, wget nor bash is installed to ask http://127.0.0.1:10248/healthz"
    return 2
  fi
}

# answered_by UNIT: false when what listens on port 10248 is known to be a process
# outside UNIT's tree (its main process, or one that process started: RKE2 runs its
# kubelet as a child). A port is anyone's to take while the kubelet restarts (a real
# kubelet that cannot bind it keeps running), and an "ok" from a user's process is not
# the unit's health. Every pid=N in ss's answer must be in the tree: a process's name is
# printed there as it is, so a listener named "pid=<the unit's pid>" adds a pid it is
# not, but cannot hide its own. What cannot be told (no ss, no process in its answer) is
# not held against the unit.
answered_by() {
  command -v ss >/dev/null 2>&1 || return 0
  listeners=$(ss -Hltnp 'sport = :10248' 2>/dev/null)
  case $listeners in *pid=*) ;; *) return 0 ;; esac
  # `MainPID=N`, not --value, which systemd before v230 refuses (CentOS 7's and Amazon
  # Linux 2's v219): its pid not known there, a user's listener passed for the unit's.
  main=$(ask_systemd show -p MainPID "$1" 2>/dev/null)
  main=${main#MainPID=}
  case $main in '' | 0 | *[!0-9]*) return 0 ;; esac
  while :; do
    case $listeners in *pid=*) ;; *) return 0 ;; esac
    listeners=${listeners#*pid=}
    lpid=${listeners%%[!0-9]*}
    [ -z "$lpid" ] || in_tree "$lpid" "$main" || return 1
  done
}

# in_tree PID MAIN: PID is MAIN or one of its descendants.
in_tree() {
  lpid=$1 main=$2
  hops=0
  while [ -n "$lpid" ] && [ "$lpid" -gt 1 ] && [ $hops -lt 64 ]; do
    [ "$lpid" = "$main" ] && return 0
    st=
    read -r st < "/proc/$lpid/stat" 2>/dev/null || return 1
    # Past the command's name (which may hold spaces): state, then the parent's pid.
    # shellcheck disable=SC2086
    set -- ${st##*) }
    lpid=${2:-}
    hops=$((hops + 1))
  done
  return 1
}

# ask_systemd ARGS: `systemctl ARGS` for the health gate's looks, 5 s at most where timeout is
# there (without -k, which a BusyBox timeout before 1.30 lacks; systemctl ends on TERM). A
# systemd that stops answering (the kubelet's restart itself can set off the mount storm
# of kubernetes/kubernetes#79194) holds a call until sd-bus's auth timeout, 90 s by
# default: past the gate's own bound.
ask_systemd() {
  if command -v timeout >/dev/null 2>&1; then
    timeout 5 systemctl "$@" 9>&-
  else
    systemctl "$@" 9>&-
  fi
}

# journal UNIT: the unit's last lines in the journal, where there is one (they say why it
# failed), after the message's first line; bounded in time and size.
journal() {
  command -v journalctl >/dev/null 2>&1 || return 0
  if command -v timeout >/dev/null 2>&1; then
    timeout 5 journalctl -u "$1" -n 8 --no-pager -o short-iso 2>/dev/null 9>&- | tail -c 2000
  else
    journalctl -u "$1" -n 8 --no-pager -o short-iso 2>/dev/null 9>&- | tail -c 2000
  fi
}

handler() {
  unit=$1 verb=$2 probe=$3 timeout=$4
  if [ -n "$FAILED" ]; then hdr skipped "$unit"; return; fi
  # fd 9 (the node lock) is not handed to what the unit starts. The restart itself is
  # bounded too: systemctl waits for the start job, and a Type=notify unit with
  # TimeoutStartSec=0 (k3s's and RKE2's) that never says it is ready would hold this run,
  # and the node's lock, for ever. The bound is generous (five times the health timeout:
  # a k3s server with embedded etcd may take minutes); cut off, systemctl leaves the job
  # to systemd.
  bound=$((timeout * 5))
  if command -v timeout >/dev/null 2>&1; then
    out=$(timeout "$bound" systemctl "$verb" "$unit" 2>&1 9>&-)
  else
    out=$(systemctl "$verb" "$unit" 2>&1 9>&-)
  fi
  rc=$?
  # 124: coreutils' timeout; 143: busybox's, whose child got SIGTERM.
  if [ $rc -eq 124 ] || [ $rc -eq 143 ]; then
    fail unhealthy "$unit"
    echo "systemctl $verb $unit did not return within ${bound}s (systemd keeps its job running)"
    journal "$unit"; return
  elif [ $rc -ne 0 ]; then
    fail unhealthy "$unit"; echo "systemctl $verb $unit failed: $out"; journal "$unit"; return
  fi
  # Restarted: what a run cut off before this left due is done (`due`).
  rm -f "$STATE/restart-due/${unit%.service}/"* 2>/dev/null; rmdir "$STATE/restart-due/${unit%.service}" 2>/dev/null
  [ "$probe" = 0 ] || healthz_tools
  start=$(date +%s)
  while :; do
    state=$(ask_systemd is-active "$unit" 2>/dev/null)
    case $? in 124 | 137 | 143) state="not told: systemctl is-active did not answer within 5s (systemd busy or stuck)" ;; esac
    if [ "$state" = active ]; then
      [ "$probe" = 0 ] && { hdr healthy "$unit"; return; }
      body=$(healthz); rc=$?
      if [ $rc -eq 0 ] && [ "$body" = ok ]; then
        answered_by "$unit" && { hdr healthy "$unit"; return; }
        why="the kubelet's healthz (127.0.0.1 or [::1], port 10248) answered ok, but from a process that is not $unit's"
      else
        [ $rc -eq 2 ] && { fail unhealthy "$unit"; echo "$body"; return; }
        why="unit active, but the kubelet's healthz (127.0.0.1 or [::1], port 10248) answered: ${body:-nothing}"
      fi
    else
      case $state in
        "not told: "*) why=${state#not told: } ;;
        *) why="unit is ${state:-unknown}" ;;
      esac
    fi
    if [ $(( $(date +%s) - start )) -ge "$timeout" ]; then
      fail unhealthy "$unit"; echo "not healthy ${timeout}s after systemctl $verb: $why"
      journal "$unit"; return
    fi
    sleep 1
  done
}
