# shellcheck shell=sh
# dnsfix gather script: POSIX sh, READ-ONLY. It never writes, creates or changes anything.
# shellcheck disable=SC3013 # test -ef is not in POSIX, but dash, bash and busybox sh have it
#
# Output is a stream of records. Each record starts with a header line
#   "\n<BOUNDARY> <kind> <name>\n"
# and its body runs until the next record. BOUNDARY carries a random nonce chosen by dnsfix
# for this run, so no file content can forge or break the framing (binary data, a line that
# looks like a header, or no trailing newline are all fine). The final record is "end":
# without it dnsfix knows the output was cut short.
#
# Kinds: read PATH (a regular file, its content comes in the batch below), missing PATH,
# dir PATH, error PATH (not a regular file, never opened; PATH/: a directory not walked),
# file PATH (body: content; an empty file, or one masked by a symlink to /dev/null, which
# reads empty), link PATH (body: readlink), canon PATH (body: readlink -f), cmd NAME
# (body: stdout), rc NAME (body: exit status), pid NAME (body: pid: kubelet, k3s,
# dhclient), batch (no body: file contents follow).
#
# File contents come last, from ONE head(1) over every file read (a process per file is
# what a node in trouble can least afford). head frames them itself, "\n==> NAME <==\n"
# before each file, and prints NAME as given: every path is given as PATHNONCE followed by
# the path without its leading "/". PATHNONCE is "/" and the nonce spelled in "./" and
# "../" steps, all resolving to "/", so the file is the same and the header carries the
# nonce: a file cannot forge it either. A file head cannot open has no header: it stays
# "read" (unknown, never healthy).
B="@BOUNDARY@"
P="@PATHNONCE@"
CAP=@CAP@
# The units that run a kubelet (node_script::KUBELET_UNITS), words without spaces.
KUNITS="@KUBELET_UNITS@"
# Whether to ask the kubelet's binary for its version (1) or not (0).
ASK_VERSION=@ASK_VERSION@
LC_ALL=C
export LC_ALL
unset CDPATH
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
# The script arrives on stdin (sh -s): everything below runs with stdin from /dev/null, so
# no command can read the rest of the script as data.
{

NL='
'
# Records collect in O and go out in a few large writes (flush): before each command that
# prints to stdout itself, and at the end. Over SSH every write is a packet that sshd, the
# ssh client (and a ControlMaster) each handle: one per record was some 130 per node.
O=
hdr() { O="$O$NL$B $*$NL"; }
put() { O="$O$1"; }
flush() { printf '%s' "$O"; O=; }

# SEEN: every path looked at, one per line (a path with a newline is never framed; a
# name may hold spaces, so one is no separator).
SEEN=$NL
# READ and LINKS: the files for the batch read and the symlinks, one path per line;
# EMPTYL: the symlinks that lead to a file of size 0.
READ=
LINKS=
EMPTYL=
# f PATH: one file, as a record. Only regular files are read: a FIFO, a device or
# /dev/stdin named in some config is reported as an error, never opened (it could block,
# consume the script from stdin, or arm a watchdog). A name with a newline is skipped: it
# cannot be framed. Builtins only: contents and symlink targets are read in one go below.
f() {
  case "$1" in *"$NL"*) return ;; esac
  case "$SEEN" in *"$NL$1$NL"*) return ;; esac
  SEEN="$SEEN$1$NL"
  [ -L "$1" ] && LINKS="$LINKS$1$NL"
  if [ -d "$1" ]; then hdr dir "$1"; return; fi
  if [ ! -e "$1" ]; then hdr missing "$1"; return; fi
  if [ ! -f "$1" ]; then
    # A symlink to /dev/null masks a file (sysctl.d(5), modules-load.d(5)): it reads empty.
    if [ -L "$1" ] && [ "$1" -ef /dev/null ]; then hdr file "$1"; else hdr error "$1"; fi
    return
  fi
  # An empty file reads empty, unopened. Outside /proc, where dnsfix names its files
  # itself, that also keeps a symlink into /proc (whose files all say size 0, and
  # /proc/kmsg blocks its reader) from being read at all: through a symlink, size 0 is
  # unknown (error) until the link's resolved path shows a file outside /proc, /sys and
  # /dev (see the symlinks below).
  case "$1" in
    /proc/*) ;;
    *)
      if [ ! -s "$1" ]; then
        if [ -L "$1" ]; then hdr error "$1"; EMPTYL="$EMPTYL$1$NL"; else hdr file "$1"; fi
        return
      fi
      ;;
  esac
  hdr read "$1"
  READ="$READ$P${1#/}$NL"
}

# e PATH: whether a regular file is there, when only that matters (its content is not read).
e() {
  case "$1" in *"$NL"*) return ;; esac
  case "$SEEN" in *"$NL$1$NL"*) return ;; esac
  SEEN="$SEEN$1$NL"
  if [ -f "$1" ]; then hdr exists "$1"
  elif [ -e "$1" ] || [ -L "$1" ]; then hdr error "$1"
  else hdr missing "$1"; fi
}

# Every *.conf in the given directories, in shell glob (C locale) order. (Its variables
# are its own: sh has no local ones, and a caller's loop over `d` must keep its `d`.)
confs() {
  for cdir in "$@"; do
    if [ ! -d "$cdir" ]; then
      [ -e "$cdir" ] || [ -L "$cdir" ] || hdr missing "$cdir"
      continue
    fi
    hdr dir "$cdir"
    for cfile in "$cdir"/*.conf; do
      if [ -e "$cfile" ] || [ -L "$cfile" ]; then f "$cfile"; fi
    done
  done
}

# kdir DIR DEPTH: a kubelet --config-dir as the kubelet walks it (cmd/kubelet/app/server.go
# mergeKubeletConfigurations: filepath.WalkDir, so every subdirectory and hidden names too,
# a symlinked directory not followed), every non-directory named *.conf read; KCONFS gets
# the regular files among them. The kubelet does not follow DIR itself where it is a
# symlink (WalkDir's root is lstat'ed; with a trailing slash it is followed): a link
# record says which. Seven levels below DIR at most: a directory deeper is an error record
# named with a trailing slash, so what the kubelet merges is unknown, not wrong; so is DIR
# where a name in it that the kubelet would read has a newline.
KCONFS=
kdir() {
  [ -L "$1" ] && LINKS="$LINKS$1$NL"
  hdr dir "$1"
  for x in "${1%/}"/* "${1%/}"/.[!.]* "${1%/}"/..?*; do
    [ -e "$x" ] || [ -L "$x" ] || continue
    case "$x" in
      *"$NL"*)
        # Not framed: where the kubelet would merge it, DIR is not known in full.
        if { [ -d "$x" ] && [ ! -L "$x" ]; } || [ "${x%.conf}" != "$x" ]; then
          SEEN="$SEEN${1%/}/$NL"; hdr error "${1%/}/"
        fi
        continue
        ;;
    esac
    if [ -d "$x" ] && [ ! -L "$x" ]; then
      if [ "$2" -lt 8 ]; then kdir "$x" $(($2 + 1)); else SEEN="$SEEN$x/$NL"; hdr error "$x/"; fi
    else
      case "${x##*/}" in
        *.conf) f "$x"; [ -f "$x" ] && KCONFS="$KCONFS$x$NL" ;;
      esac
    fi
  done
}

cmd() {
  name=$1; shift
  r=
  if command -v "$1" >/dev/null 2>&1; then
    hdr cmd "$name"; flush
    "$@" 2>/dev/null
    r=$?
    hdr rc "$name"; put "$r"
  fi
}

# sctl NAME ARGS: `systemctl ARGS` as record NAME, bounded. systemctl asks PID 1 over its
# private socket, and a PID 1 that does not answer (a kubelet node booting with hundreds
# of mounts to make, each a transient unit: kubernetes/kubernetes#79194) holds it until
# sd-bus's auth timeout, 90 s by default (bus-internal.h BUS_AUTH_TIMEOUT, the build's
# DEFAULT_TIMEOUT_USEC; SYSTEMD_BUS_TIMEOUT bounds method calls only, 25 s by default,
# once the connection is up): past dnsfix's command timeout, the node would lose every
# fact, not only its units' states. So each call gets SWAIT seconds (TERM, which
# systemctl ends on; no -k, which a BusyBox timeout before 1.30 lacks: 124 coreutils'
# timeout, 143 BusyBox's, whose child gets the TERM, 137 a KILL). The first call
# cut off is a systemctl-cut record (body: the seconds); systemctl is not asked again,
# and each call not made is a record NAME with no rc record: asked of no one, not "not
# installed".
SWAIT=@SYSTEMCTL_WAIT@
SCUT=
sctl() {
  command -v systemctl >/dev/null 2>&1 || return 0
  name=$1; shift
  if [ -n "$SCUT" ]; then hdr cmd "$name"; return 0; fi
  if command -v timeout >/dev/null 2>&1; then
    cmd "$name" timeout "$SWAIT" systemctl "$@"
  else
    cmd "$name" systemctl "$@"
  fi
  case "$r" in
    124 | 137 | 143) SCUT=1; hdr cmd systemctl-cut; put "$SWAIT$NL" ;;
  esac
}

hdr begin dnsfix-gather-1
f /proc/sys/kernel/hostname
f /etc/os-release
f /proc/sys/kernel/random/boot_id
# Who runs this (id -u), from the shell's own status: the effective uid.
hdr cmd uid
EUID_=
while read -r k _ e _; do
  [ "$k" = Uid: ] && { EUID_=$e; break; }
done < /proc/self/status 2>/dev/null
if [ -n "$EUID_" ]; then put "$EUID_$NL"; else flush; id -u; fi

# Resolver files, and who manages them.
f /etc/resolv.conf
f /run/systemd/resolve/resolv.conf
f /run/systemd/resolve/stub-resolv.conf
f /usr/lib/systemd/resolv.conf
f /etc/systemd/resolved.conf
# Its main file where systemd 256 and later look too, the first there read (conf-parser.c
# config_parse_standard_file_with_dropins_full: CONF_PATHS("")): openSUSE and Fedora ship it
# in /usr/lib alone (meson -Dconfigfiledir=/usr/lib).
f /run/systemd/resolved.conf
f /usr/local/lib/systemd/resolved.conf
f /usr/lib/systemd/resolved.conf
# systemd's version, which decides whether it reads those (before 256 it reads /etc's
# alone), from the name of its private library (meson.build libshared_name
# systemd-shared-TAG, the project version unless the distribution sets the tag):
# rootlibexecdir up to 251, libdir/systemd from 252 (/usr/lib64/systemd, Debian's
# /usr/lib/TRIPLET/systemd). Globs, no process.
for x in /usr/lib/systemd/libsystemd-shared-*.so /usr/lib64/systemd/libsystemd-shared-*.so /usr/lib/*/systemd/libsystemd-shared-*.so /lib/systemd/libsystemd-shared-*.so; do
  case "$x" in
    *"$NL"*) continue ;;
    # /lib/systemd only on a split /usr, where it is not /usr/lib/systemd.
    /lib/*) [ /lib/systemd -ef /usr/lib/systemd ] && continue ;;
  esac
  [ -e "$x" ] && e "$x"
done
# systemd-resolved's drop-ins in every directory its config parser reads (CONF_PATHS: a
# package's own in /usr/lib too); /lib only where it is not /usr/lib (split /usr).
confs /etc/systemd/resolved.conf.d /run/systemd/resolved.conf.d /usr/local/lib/systemd/resolved.conf.d /usr/lib/systemd/resolved.conf.d
[ /lib/systemd -ef /usr/lib/systemd ] || confs /lib/systemd/resolved.conf.d
# NetworkManager reads its packages' snippets in /usr/lib/NetworkManager/conf.d too (Ubuntu's
# 10-dns-resolved.conf sets dns=systemd-resolved there): its DNS settings need all three.
f /etc/NetworkManager/NetworkManager.conf
confs /etc/NetworkManager/conf.d /run/NetworkManager/conf.d /usr/lib/NetworkManager/conf.d
# NetworkManager's own list of the servers its connections give, in every dns= mode (its
# resolv.conf says 127.0.0.1 or 127.0.0.53 where a caching plugin runs): since 1.16.
[ -d /run/NetworkManager ] && f /run/NetworkManager/no-stub-resolv.conf
# Whether NetworkManager starts at boot, where it is configured: `systemctl enable` links it
# into multi-user.target (data/NetworkManager.service.in [Install] WantedBy=), a mask
# links its name in /etc or /run to /dev/null. Stopped now and enabled, it writes
# /etc/resolv.conf again at the next boot. Tests and a link record, no process.
if [ -d /etc/NetworkManager ]; then
  e /etc/systemd/system/multi-user.target.wants/NetworkManager.service
  f /etc/systemd/system/NetworkManager.service
  f /run/systemd/system/NetworkManager.service
  # `systemctl enable --runtime` links it in /run; a wants link pulls the unit in by its
  # name, from the unit path: where no unit file is there (a removed package), nothing.
  e /run/systemd/system/multi-user.target.wants/NetworkManager.service
  e /usr/lib/systemd/system/NetworkManager.service
  e /lib/systemd/system/NetworkManager.service
  # Its version, from the directory its plugins are installed in (meson.build nm_plugindir:
  # libdir/NetworkManager/VERSION, the distribution's version string; Ubuntu 20.04:
  # /usr/lib/x86_64-linux-gnu/NetworkManager/1.22.10): before 1.28 an unset rc-manager
  # means symlink, not auto, and so it does in RHEL 8's build (its `.el8` release). Globs,
  # no process.
  for x in /usr/lib64/NetworkManager/[0-9]* /usr/lib/*/NetworkManager/[0-9]* /usr/lib/NetworkManager/[0-9]*; do
    case "$x" in *"$NL"*) continue ;; esac
    [ -d "$x" ] && hdr dir "$x"
  done
fi
# Whether /etc/resolv.conf, a regular file, is immutable or append-only (chattr +i, a common
# guard): NetworkManager then leaves it alone whatever its rc-manager says (nm-dns-manager.c
# _check_resconf_immutable), and nothing can rename a new file over it. (No cheaper test
# tells: `test -w` misses an append-only file, and busybox's says root may write any file.)
[ -f /etc/resolv.conf ] && [ ! -L /etc/resolv.conf ] && cmd resolv-conf-attr lsattr -d -- /etc/resolv.conf
f /etc/dhcp/dhclient.conf
f /etc/dhclient.conf
f /etc/dhcp/dhclient-exit-hooks.d/zdnsupdate
f /etc/resolvconf/resolv.conf.d/head
f /etc/resolvconf/resolv.conf.d/base
f /etc/cloud/cloud.cfg.d/99-disable-network-config.cfg
# The configuration of the program whose header a plain /etc/resolv.conf carries (on any
# of its first 64 lines, resolv_writer::HEADER_LINES: Kubespray puts its block above it;
# the shell reads a byte a call, so no further), which says whether it writes the file
# again: openresolv's (libc.in's signature) and SUSE netconfig's (dns-resolver's `###`
# header). netconfig's too where /etc/resolv.conf links to the file it writes since
# sysconfig 0.85, /run/netconfig/resolv.conf (functions.netconfig netconfig_check_and_link).
if [ -f /etc/resolv.conf ] && [ ! -L /etc/resolv.conf ]; then
  n=0
  while [ "$n" -lt 64 ] && { IFS= read -r x || [ -n "$x" ]; }; do
    n=$((n + 1))
    case "$x" in
      "# Generated by resolvconf") f /etc/resolvconf.conf ;;
      "### /etc/resolv.conf "*netconfig*) f /etc/sysconfig/network/config ;;
    esac
  done 2>/dev/null < /etc/resolv.conf
elif [ -L /etc/resolv.conf ] && [ /etc/resolv.conf -ef /run/netconfig/resolv.conf ]; then
  f /etc/sysconfig/network/config
fi
# Who answers DNS on this node: the UDP sockets (a server on systemd-resolved's stub
# address or NodeLocal DNSCache's, or on port 53 of every address).
f /proc/net/udp
f /proc/net/udp6
cmd resolvconf-bin command -v resolvconf
cmd cloud-init-bin command -v cloud-init
# shellcheck disable=SC2086 # KUNITS is a list of words
sctl units is-active systemd-resolved NetworkManager $KUNITS systemd-networkd firewalld
# Whether systemd-resolved starts at boot, asked where it wrote its files this boot (a
# kubelet on them still has them after the next boot only if it does), and where
# /etc/resolv.conf links to nothing (after a boot without it: disabled, masked or gone?).
# Told from its links, with no systemctl started (a real one costs as much CPU as the rest
# of this script: bench/gather-cpu.sh), where the answer is certain to be `enabled`, as
# systemctl's install.c unit_file_lookup_state works it out (v237 to v256): on a merged
# /usr (a split one searches /lib/systemd/system before /usr/lib's, and v255 and later
# never), the unit file it finds first on the unit path is the package's, a regular,
# non-empty file in /usr/lib/systemd/system, and none of the directories before it holds
# the name (no mask, copy, link, generated or transient unit); no directory of the path
# has drop-ins for it (unit_file_search loads them: one that does not parse, or before
# v239 an empty one, makes is-enabled say otherwise); and /etc/systemd/system has a
# symlink of the unit's name in a *.wants or *.requires directory that is not itself a
# link: find_symlinks_in_scope matches it by its name and says ENABLED at the first one
# in the persistent configuration directory, wherever it leads. Anything else is asked of
# systemctl.
resolved_linked() {
  if [ -e /lib/systemd/system ] && [ ! /lib/systemd/system -ef /usr/lib/systemd/system ]; then return 1; fi
  for d in /etc/systemd/system.control /run/systemd/system.control /run/systemd/transient \
    /run/systemd/generator.early /etc/systemd/system /etc/systemd/system.attached \
    /run/systemd/system /run/systemd/system.attached /run/systemd/generator \
    /usr/local/lib/systemd/system /usr/lib/systemd/system /run/systemd/generator.late; do
    if [ -e "$d/systemd-resolved.service.d" ] || [ -L "$d/systemd-resolved.service.d" ]; then return 1; fi
    case "$d" in /usr/lib/systemd/system | /run/systemd/generator.late) continue ;; esac
    if [ -e "$d/systemd-resolved.service" ] || [ -L "$d/systemd-resolved.service" ]; then return 1; fi
  done
  x=/usr/lib/systemd/system/systemd-resolved.service
  { [ -f "$x" ] && [ ! -L "$x" ] && [ -s "$x" ]; } || return 1
  for x in /etc/systemd/system/*.wants/systemd-resolved.service /etc/systemd/system/*.requires/systemd-resolved.service; do
    if [ -L "$x" ] && [ ! -L "${x%/*}" ]; then return 0; fi
  done
  return 1
}
if [ -d /run/systemd/resolve ] || { [ -L /etc/resolv.conf ] && [ ! -e /etc/resolv.conf ]; }; then
  if resolved_linked; then
    hdr cmd resolved-enabled; put "enabled$NL"; hdr rc resolved-enabled; put 0
  else
    sctl resolved-enabled is-enabled systemd-resolved
  fi
fi
# Whether firewalld starts at boot, where its unit file is installed: stopped now and
# enabled, its zones decide the pods' forwarded traffic again after the next boot.
if [ -e /usr/lib/systemd/system/firewalld.service ] || [ -e /lib/systemd/system/firewalld.service ] || [ -e /etc/systemd/system/firewalld.service ]; then
  sctl firewalld-enabled is-enabled firewalld
fi

# Kubelet: config files, env/flag files, the units that start it, the running process.
KCFG="/etc/kubernetes/kubelet-config.yaml /var/lib/kubelet/config.yaml /etc/kubernetes/kubelet/config.json"
KENV="/etc/kubernetes/kubelet.env /var/lib/kubelet/kubeadm-flags.env /etc/default/kubelet /etc/sysconfig/kubelet"
RCFG="/etc/rancher/k3s/config.yaml /etc/rancher/rke2/config.yaml"
for x in $KCFG $KENV $RCFG; do f "$x"; done
# k3s/RKE2 config drop-ins (config.yaml.d/*.yaml|*.yml in any case, applied in name order). RCFGD and
# UNITS hold one path per line: a name may have spaces (or glob characters) in it; one
# with a newline is left out, as f leaves it out.
RCFGD=
for d in /etc/rancher/k3s/config.yaml.d /etc/rancher/rke2/config.yaml.d; do
  if [ ! -d "$d" ]; then
    [ -e "$d" ] || [ -L "$d" ] || hdr missing "$d"
    continue
  fi
  hdr dir "$d"
  for x in "$d"/*.[yY][aA][mM][lL] "$d"/*.[yY][mM][lL] "$d"/.[!.]*.[yY][aA][mM][lL] \
    "$d"/.[!.]*.[yY][mM][lL] "$d"/..?*.[yY][aA][mM][lL] "$d"/..?*.[yY][mM][lL] \
    "$d"/.[yY][aA][mM][lL] "$d"/.[yY][mM][lL]; do
    case "$x" in *"$NL"*) continue ;; esac
    if [ -e "$x" ]; then f "$x"; RCFGD="$RCFGD$x$NL"; fi
  done
done
# Unit files and drop-ins of every service that runs a kubelet, in every unit directory.
UDIRS="/etc/systemd/system /run/systemd/system /usr/local/lib/systemd/system /usr/lib/systemd/system"
[ /lib/systemd/system -ef /usr/lib/systemd/system ] || UDIRS="$UDIRS /lib/systemd/system"
# The kubelet's drop-in directories where dnsfix may write are reported even when missing.
KDROP="/etc/systemd/system/kubelet.service.d /usr/lib/systemd/system/kubelet.service.d"
# shellcheck disable=SC2086 # KDROP is a list of words
confs $KDROP
# CRI-O's unit too, where CRI-O is installed: its drop-ins, Environment= and the
# EnvironmentFile= it names (/etc/sysconfig/crio, /etc/default/crio in the Debian
# packages; followed below) and its ExecStart= give CRI-O options over its files.
# The alias cri-o.service (the unit's Alias=) too: systemd reads the drop-ins of every
# name of a unit (systemd-stable @565916c2 src/shared/dropin.c unit_file_find_dropin_paths).
CUNIT=
[ -d /etc/crio ] && CUNIT="crio cri-o"
UNITS=
for u in $KUNITS $CUNIT; do
  for d in $UDIRS; do
    if [ -e "$d/$u.service" ]; then f "$d/$u.service"; UNITS="$UNITS$d/$u.service$NL"; fi
    if [ -d "$d/$u.service.d" ]; then
      case " $KDROP " in *" $d/$u.service.d "*) ;; *) confs "$d/$u.service.d" ;; esac
      for x in "$d/$u.service.d"/*.conf; do
        case "$x" in *"$NL"*) ;; *) [ -e "$x" ] && UNITS="$UNITS$x$NL" ;; esac
      done
    fi
  done
done
# k3s as a service dnsfix does not read: under OpenRC (install.sh writes /etc/init.d/k3s or
# k3s-agent) or installed with INSTALL_K3S_NAME (k3s-NAME.service). Its presence is enough.
for x in /etc/init.d/k3s* /etc/systemd/system/k3s-*.service; do
  [ -e "$x" ] && f "$x"
done
# k0s: the worker profile it last fetched, in its default data directory; below, the
# rounds follow a --data-dir on its unit's command line to the profile there, and a
# profile's resolvConf to its file.
K0SP=
case "$UNITS" in
  *"/k0sworker.service"* | *"/k0scontroller.service"*) K0SP=/var/lib/k0s/worker-profile.yaml; f "$K0SP" ;;
esac
# Processes dnsfix cares about, by name: the kubelet (RKE2's too), k3s and MicroK8s's
# kubelite (which run the kubelet inside themselves), dhclient (is it the DHCP client
# in use?) and weave-npc, each root's. A kubelet, k3s or kubelite
# counts only if it runs as root in this mount namespace: anyone can name a process
# "kubelet", a container's root is uid 0 too, and dnsfix reads
# the files its command line names and asks its binary for the version. A zombie (a
# kubelet exiting while another starts) is not the kubelet: it has no command line.
root_proc() {
  # Only a process of this mount namespace: a kubelet in a container (kind, k3d, a pod
  # running as uid 0) names files of its own filesystem, and its binary is not this
  # node's to run.
  # (Only where that can be told: a user's local gather cannot stat root's namespaces.)
  if [ -e "$1/ns/mnt" ]; then [ "$1/ns/mnt" -ef /proc/self/ns/mnt ] || return 1; fi
  uid0 "$1"
}
# uid0 /proc/PID: a live process of root's (a container's root counts: Weave's weave-npc
# runs in its pod), not one any user can start under that name.
uid0() {
  while read -r k r _; do
    case "$k" in
      State:) [ "$r" = Z ] && return 1 ;;
      Uid:) [ "$r" = 0 ]; return ;;
    esac
  done < "$1/status" 2>/dev/null
  return 1
}
KPID=
K3SPID=
MPID=
AGENTS=' '
DHCL=
DHCD=
DHCPCD=
UDHCPC=
# One redirection of stderr for the whole scan (a process may end before its comm is
# read), not one per process: a node runs hundreds, and in dash each redirection is four
# more system calls.
{
  for d in /proc/[0-9]*; do
    c=
    read -r c < "$d/comm" || continue
    case "$c" in
      kubelet) [ -z "$KPID" ] && root_proc "$d" && KPID=${d#/proc/} ;;
      k3s-server|k3s-agent) [ -z "$K3SPID" ] && root_proc "$d" && K3SPID=${d#/proc/} ;;
      kubelite) [ -z "$MPID" ] && root_proc "$d" && MPID=${d#/proc/} ;;
      # NetworkManager runs sandboxed (ProtectSystem=true: a mount namespace of its own)
      # and its dhclient with it: root's, with this root, not a container's.
      # Its command line says which interfaces it serves and which dhclient.conf it reads
      # (-cf): read in the batch, and searched for -cf in the first round below.
      dhclient)
        if uid0 "$d" && [ "$d/root" -ef / ]; then
          hdr pid dhclient; put "${d#/proc/}"
          f "$d/cmdline"; DHCL="$DHCL$NL$d/cmdline"
        fi
        ;;
      # DHCP clients that write /etc/resolv.conf themselves: dhcpcd (its resolv.conf hook,
      # which dhcpcd.conf or its command line, -C/--nohook, may turn off; -f names another
      # dhcpcd.conf, found in the first round below; dhcpcd 9 and later write a title over
      # the command line) and busybox udhcpc (its script, which its command line names,
      # and Alpine's reads udhcpc.conf and ifupdown's peer-dns). Root's, with this root
      # (dhcpcd's privilege-separated helpers run chrooted as another user).
      dhcpcd)
        if uid0 "$d" && [ "$d/root" -ef / ]; then
          hdr pid dhcpcd; put "${d#/proc/}"; DHCPCD=1
          f "$d/cmdline"; DHCD="$DHCD$NL$d/cmdline"
        fi
        ;;
      udhcpc)
        if uid0 "$d" && [ "$d/root" -ef / ]; then
          hdr pid udhcpc; put "${d#/proc/}"; f "$d/cmdline"; UDHCPC=1
        fi
        ;;
      # Weave's network policy controller: with it, Weave loads br_netfilter at its start.
      weave-npc) uid0 "$d" && { hdr pid weave-npc; put "${d#/proc/}"; } ;;
      # Network plugins' node agents, root's in their pods (DNS-CNI-CONFIG-LEFTOVER: whose
      # CNI file the runtime should load): the Cilium chart's `command: cilium-agent`,
      # calico/node's runit services (`exec calico-node -felix`), kube-flannel's
      # /opt/bin/flanneld. The first of each name.
      cilium-agent | calico-node | flanneld)
        case "$AGENTS" in
          *" $c "*) ;;
          *) uid0 "$d" && { AGENTS="$AGENTS$c "; hdr pid "$c"; put "${d#/proc/}"; } ;;
        esac
        ;;
    esac
  done
} 2>/dev/null
[ -n "$K3SPID" ] && { hdr pid k3s; put "$K3SPID"; }
[ -n "$DHCPCD" ] && f /etc/dhcpcd.conf
# dhclient-script's enter hooks, where a dhclient runs: a make_resolv_conf that does
# nothing keeps it from writing /etc/resolv.conf (dhclient-script(8) HOOKS), and Debian's
# exit hooks, where Ubuntu's hand the lease's servers to systemd-resolved. Debian's
# script sources /etc/dhcp/dhclient-enter-hooks and each name `run-parts --list` prints of
# /etc/dhcp/dhclient-enter-hooks.d (letters, digits, _ and - alone: the others are only
# noted as there, unread); ISC's own /etc/dhclient-enter-hooks and its .d; Red Hat's
# /etc/dhcp/dhclient-enter-hooks only where it is executable, and then PEERDNS from
# /etc/sysconfig/network, /etc/sysconfig/networking/network and the interface's ifcfg file
# (rules/dhclient_script.rs names the sources). Builtins only.
if [ -n "$DHCL" ]; then
  f /etc/dhcp/dhclient-enter-hooks
  [ -f /etc/dhcp/dhclient-enter-hooks ] && [ -x /etc/dhcp/dhclient-enter-hooks ] && { hdr cmd dhclient-enter-hooks-x; put "1$NL"; }
  f /etc/dhclient-enter-hooks
  f /etc/dhcp/dhclient-exit-hooks
  for d in /etc/dhcp/dhclient-enter-hooks.d /etc/dhclient-enter-hooks.d /etc/dhcp/dhclient-exit-hooks.d; do
    [ -d "$d" ] || continue
    hdr dir "$d"
    for x in "$d"/*; do
      [ -e "$x" ] || [ -L "$x" ] || continue
      case "${x##*/}" in
        *[!A-Za-z0-9_-]*) e "$x" ;;
        *) f "$x" ;;
      esac
    done
  done
  if [ -d /etc/sysconfig/network-scripts ]; then
    f /etc/sysconfig/network
    f /etc/sysconfig/networking/network
    for x in /etc/sysconfig/network-scripts/ifcfg-*; do
      [ -e "$x" ] && f "$x"
    done
  fi
fi
if [ -n "$UDHCPC" ]; then f /etc/udhcpc/udhcpc.conf; f /etc/network/interfaces; fi
if [ -n "$KPID" ]; then
  hdr pid kubelet; put "$KPID"
  f "/proc/$KPID/cmdline"
fi
# Restarts a run left due (common.sh `due`: cut off between its changes and its handlers),
# and, only where there is one, the start of the process that runs the kubelet. dnsfix's
# state is root's alone: a gather without root says it could not look.
RDUE=
if [ -d /var/lib/dnsfix ] && [ ! -x /var/lib/dnsfix ]; then
  hdr error /var/lib/dnsfix/restart-due/
else
  for x in /var/lib/dnsfix/restart-due/*/*; do
    [ -f "$x" ] || continue
    f "$x"; RDUE=1
  done
fi
if [ -n "$RDUE" ]; then
  for x in $KPID $K3SPID $MPID; do f "/proc/$x/stat"; done
  # A mark of a run still under way is no run cut off: whether one holds the node lock
  # now, from the kernel's list of locks and the lock file's device and inode (read, never
  # locked: a lock taken here could turn an apply starting that instant away).
  if [ -f /var/lib/dnsfix/lock ]; then
    f /proc/locks
    f /var/lib/dnsfix/owner
    cmd lock-file stat -c '%d %i' /var/lib/dnsfix/lock
  fi
fi
# MicroK8s: kubelite takes the kubelet's flags from the file its --kubelet-args-file names
# (followed below); a stopped MicroK8s from the file of the snap's current revision, by its
# real path (`current` is a symlink, and nothing is written through one). Its wrapper sets
# forwarding at every start only when the CNI manifest is there.
M=
if [ -d /var/snap/microk8s ]; then
  f /var/snap/microk8s/current
  if cd -P /var/snap/microk8s/current 2>/dev/null; then M=$PWD/args; cd /; fi
fi
if [ -n "$MPID" ]; then
  hdr pid kubelite; put "$MPID"
  f "/proc/$MPID/cmdline"
fi
# (kubelite's own default for --kubelet-args-file, too.)
if [ -n "$M" ]; then f "$M/kubelet"; KENV="$KENV $M/kubelet"; fi
[ -n "$M" ] && e "$M/cni-network/cni.yaml"
# Files the units and settings above name: EnvironmentFile= (with %N/%n), --config,
# --config-dir, --resolv-conf (as a flag, a kubelet-arg, K3S_/RKE2_RESOLV_CONF, or a
# resolvConf/resolv-conf key, or a resolverConfig key in any case). Three rounds: units name env files, env files name the
# config, the config names the resolv.conf, which is read but never searched (it names no
# file: an awk round over it alone would find nothing). A crude superset: which setting wins is decided
# by dnsfix from the files themselves. Paths under /proc, /sys and /dev are never followed
# (however spelt: //proc, /./sys), nor any path with a `..` in it (/etc/../proc/kmsg); a
# relative resolvConf is joined to its file's directory and its `..` taken away on paper
# first (clean), as the kubelet does, and then judged the same way.
# One awk per round reads every file of the round itself (and, in the first, the kubelet's,
# kubelite's, dhclients' and dhcpcds' command lines, their NULs read as spaces; busybox awk
# ends a line at a NUL, so there only the command's first word: a dhclient's -cf file or a
# dhcpcd's -f file is then not read, and dnsfix says what it reads is unknown). The
# program runs under gawk, mawk, the one-true awk and busybox awk alike.
# shellcheck disable=SC2016 # an awk program: its $ are awk's
REFS='
    function path(t, v,   n) {
      sub(/^[ \t]*["\047]?/, "", v); sub(/["\047]?[ \t]*$/, "", v)
      # //proc and /./sys name /proc and /sys too: judged with one slash and no "."
      # steps; printed as written, the name dnsfix looks the file up by.
      n = v; gsub(/\/+/, "/", n); while (gsub(/\/\.\//, "/", n)) {}; sub(/\/\.$/, "", n)
      if (n ~ /^\// && n !~ /^\/(proc|sys|dev)(\/|$)/ && n !~ /(^|\/)\.\.(\/|$)/) print t v
    }
    # filepath.Clean (Go) of an absolute path, as the kubelet joins a relative one to the
    # directory of its config file: no empty or "." names, a ".." takes the name before it away
    # (lexically: the file opened is this one, whatever links are on the way).
    function clean(p,   k, i, n, a, s, out) {
      k = split(p, a, "/"); n = 0
      for (i = 1; i <= k; i++) {
        if (a[i] == "" || a[i] == ".") continue
        if (a[i] == "..") { if (n > 0) n--; continue }
        s[++n] = a[i]
      }
      out = ""; for (i = 1; i <= n; i++) out = out "/" s[i]
      return out == "" ? "/" : out
    }
    BEGIN { CRIO = "/cri-?o[.]service([.]d/[^/]*)?$" }
    FILENAME ~ /^\/proc\/[0-9]+\/cmdline$/ { gsub(/\0/, " ") }
    # A dhclient (its command line among those in DH): the file its last -cf names, which
    # it reads instead of its default dhclient.conf (isc-dhcp client/dhclient.c @572032cb
    # main: these options take the next word as their value; C, H, F, V, timeout,
    # --timeout and --request-options come from the Red Hat dhclient options patch of
    # rpms/dhcp). Any other option (the Red Hat -B and -nc among them) is passed over as a
    # flag, as dhclient_cmdline.rs does.
    # Read, never searched.
    FILENAME ~ /^\/proc\/[0-9]+\/cmdline$/ && index(DD, " " FILENAME " ") {
      # A dhcpcd: the file its last -f or --config names (src/if-options.h IF_OPTS, these
      # letters take a value, attached or the next word; src/if-options.c cf_options, the
      # long names: those that take one are passed over with it, as resolv_writer.rs
      # does, but for the long name of -y, whose value, seconds, reads as no option). Read,
      # never searched.
      k = split($0, w, /[ ]+/); c = ""
      for (i = 2; i <= k; i++) {
        if (w[i] == "--") break
        if (w[i] ~ /^--config=/) { c = substr(w[i], 10); continue }
        if (w[i] ~ /^--(script|env|config|logfile|leasetime|metric|option|timeout|userclass|msuserclass|vsio|vsio6|vendor|allowinterfaces|nohook|nooption|require|static|whitelist|blacklist|denyinterfaces|arping|destination|fallback|iaid|dev|define|definend|define6|embed|encap|vendopt|vendclass|authprotocol|authtoken|controlgroup|slaac|reject|mudurl|link_rcvbuf|request_time|fallback_time|ipv4ll_time|initial_interval|backoff_cutoff|backoff_jitter|allow)$/) {
          if (w[i] == "--config" && i < k) c = w[i + 1]
          i++; continue
        }
        if (w[i] !~ /^-[^-]/) continue
        for (j = 2; j <= length(w[i]); j++) {
          o = substr(w[i], j, 1)
          if (index("cefhijlmorstuvyzCFIOQSWXZ", o)) {
            v = substr(w[i], j + 1)
            if (v == "") { v = (i < k) ? w[i + 1] : ""; i++ }
            if (o == "f") c = v
            break
          }
        }
      }
      if (c != "") path("r ", c)
      next
    }
    FILENAME ~ /^\/proc\/[0-9]+\/cmdline$/ && index(DH, " " FILENAME " ") {
      k = split($0, w, /[ ]+/); c = ""
      for (i = 2; i <= k; i++) {
        if (w[i] ~ /^-(4o6|p|pf|cf|df|lf|sf|s|g|e|D|C|H|F|V|timeout|-timeout|-request-options|-dad-wait-time|-prefix-len-hint|-address-prefix-len|-decline-wait-time)$/) {
          if (w[i] == "-cf" && i < k) c = w[i + 1]
          i++
        }
      }
      if (c != "") path("r ", c)
      next
    }
    { sub(/\r$/, "") }
    # k0s: its unit writes each space of an argument as \x20; the kubelet flags of
    # --kubelet-extra-args are words of their own.
    FILENAME ~ /\/k0s(worker|controller)\.service(\.d\/[^\/]*)?$/ { gsub(/\\x20/, " "); gsub(/kubelet-extra-args=/, " ") }
    /^[ \t]*EnvironmentFile[ \t]*=/ {
      v = $0; sub(/^[^=]*=[ \t]*-?/, "", v)
      u = FILENAME; sub(/\/[^\/]*\.conf$/, "", u); sub(/.*\//, "", u); sub(/\.d$/, "", u)
      # A drop-in of the alias cri-o.service names the unit crio.service: systemd parses
      # the drop-ins once the id of the unit is the name of its unit file (systemd-stable
      # @565916c2 src/core/load-fragment.c unit_load_fragment: merge_by_names picks the
      # file name of the fragment; src/core/unit.c unit_load_fragment_and_dropin loads the
      # drop-ins after), and %n/%N/%p name that id (src/core/unit-printf.c unit_name_printf).
      if (FILENAME ~ CRIO) u = "crio.service"
      n = u; sub(/\.[^.]*$/, "", n)
      gsub(/%%/, "\001", v); gsub(/%N|%p/, n, v); gsub(/%n/, u, v); gsub(/\001/, "%", v)
      # That of CRI-O (/etc/sysconfig/crio, /etc/default/crio) is read, never searched: it
      # names no file of the kubelet, and a round over it alone would cost a process.
      path((FILENAME ~ CRIO) ? "r " : "f ", v)
      next
    }
    # Nothing else of the unit of CRI-O names a file for dnsfix to follow: its
    # --config-dir is that of CRI-O, not the kubelet (dnsfix reads its options apart).
    FILENAME ~ CRIO { next }
    # K3S_RESOLV_CONF= / RKE2_RESOLV_CONF= in an environment file: the rest of the line.
    /^[ \t]*(export[ \t]+)?(K3S|RKE2)_RESOLV_CONF=/ {
      v = $0; sub(/^[^=]*=/, "", v)
      path("r ", v)
      next
    }
    # A YAML or JSON key whose value is a path (`resolv-conf+:` too, which the config reader
    # of k3s takes as resolv-conf): the rest of the line (spaces allowed). A
    # relative one is taken from the directory of the file, as the kubelet resolves those of its
    # config file (a crude superset again: dnsfix decides which one counts). resolverConfig
    # in any case too: kubelet 1.28 to 1.31 read resolvConf in a drop-in by that spelling
    # (encoding/json matches keys to the field ResolverConfig regardless of case,
    # kubernetes#126630), and where the version of the kubelet is not known dnsfix judges both.
    /^[ \t]*["\047]?(resolvConf|resolv-conf[+]?)["\047]?[ \t]*:/ || tolower($0) ~ /^[ \t]*["\047]?resolverconfig["\047]?[ \t]*:/ {
      v = $0; sub(/^[^:]*:/, "", v); sub(/[ \t]#.*$/, "", v); sub(/,[ \t]*$/, "", v)
      rv = v; sub(/^[ \t]*["\047]?/, "", rv); sub(/["\047]?[ \t]*$/, "", rv)
      if (rv != "" && rv !~ /^\//) { rd = FILENAME; sub(/\/[^\/]*$/, "", rd); v = clean(rd "/" rv) }
      path("r ", v)
      next
    }
    {
      line = $0
      # (`]` first in the bracket, no escapes: busybox awk rejects `\[\]{}` there.)
      gsub(/[]["\047\t,{}]/, " ", line)
      k = split(line, w, /[ ]+/)
      for (i = 1; i <= k; i++) {
        x = w[i]
        # NAME=--flag=value (an env file, Environment=): the assignment prefix goes.
        while (x ~ /^[A-Za-z_][A-Za-z0-9_]*=/ && x !~ /^(K3S|RKE2)_RESOLV_CONF=/) sub(/^[A-Za-z_][A-Za-z0-9_]*=/, "", x)
        sub(/^-+/, "", x)
        # --kubelet-arg=NAME=VALUE, one word, as the install scripts of k3s and RKE2 write
        # their arguments into ExecStart=: NAME=VALUE (GetArgs takes a leading -- away too).
        if (sub(/^kubelet-arg[+]?=/, "", x)) sub(/^-+/, "", x)
        # --kubelet-args-file counts on the command line of kubelite only.
        if (x ~ /^kubelet-args-file=/ && FILENAME !~ /^\/proc\/[0-9]+\/cmdline$/) continue
        # k0s: the worker profile it keeps in the data directory its unit names.
        if (FILENAME ~ /\/k0s(worker|controller)\.service(\.d\/[^\/]*)?$/ && x ~ /^data-dir(=|$)/) {
          if (x == "data-dir") { if (i == k) continue; x = w[i + 1] } else sub(/^[^=]*=/, "", x)
          sub(/\/+$/, "", x); path("f ", x "/worker-profile.yaml")
        } else if (x ~ /^(config|config-dir|resolv-conf[+]?|resolv_conf|K3S_RESOLV_CONF|RKE2_RESOLV_CONF|kubelet-args-file)=/) {
          t = (x ~ /^config-dir=/) ? "d " : (x ~ /^(config|kubelet-args-file)=/) ? "f " : "r "
          sub(/^[^=]*=/, "", x); path(t, x)
        } else if ((x ~ /^(config|config-dir|resolv-conf|resolvConf|resolvConf:|resolv-conf:|kubelet-args-file)$/ || tolower(x) ~ /^resolverconfig:?$/) && i < k) {
          if (x == "kubelet-args-file" && FILENAME !~ /^\/proc\/[0-9]+\/cmdline$/) continue
          t = (x == "config-dir") ? "d " : (x == "config" || x == "kubelet-args-file") ? "f " : "r "
          y = w[i + 1]; if (y == ":" && i + 1 < k) y = w[i + 2]
          path(t, y)
        }
      }
    }'
# SRC and R hold one path per line; they are split at newlines only, without globbing.
SRC=$UNITS$RCFGD
for x in $KENV $KCFG $RCFG $K0SP; do SRC="$SRC$x$NL"; done
CMDLINE=
for x in $KPID $MPID; do [ -f "/proc/$x/cmdline" ] && CMDLINE="$CMDLINE$NL/proc/$x/cmdline"; done
# dhclient's and dhcpcd's command lines, and their names for awk (DH, DD: each between
# spaces).
DH=" " DD=" "
oldifs=$IFS; IFS=$NL; set -f
for x in $DHCL; do [ -f "$x" ] && { CMDLINE="$CMDLINE$NL$x"; DH="$DH$x "; }; done
for x in $DHCD; do [ -f "$x" ] && { CMDLINE="$CMDLINE$NL$x"; DD="$DD$x "; }; done
IFS=$oldifs; set +f
round=0
while [ $round -lt 3 ] && { [ -n "$SRC" ] || [ -n "$CMDLINE" ]; }; do
  round=$((round + 1))
  oldifs=$IFS; IFS=$NL; set -f
  EXIST=
  # Not an empty file: nothing to read, and a symlink into /proc says size 0 (see f).
  for x in $SRC; do [ -f "$x" ] && [ -s "$x" ] && EXIST="$EXIST$x$NL"; done
  R=
  # shellcheck disable=SC2086
  [ -n "$EXIST$CMDLINE" ] && R=$(awk -v DH="$DH" -v DD="$DD" "$REFS" $EXIST $CMDLINE 2>/dev/null)
  IFS=$oldifs; set +f
  CMDLINE=
  SRC=
  IFS=$NL; set -f
  for l in $R; do
    # The list is split already: the body gets the usual IFS and globbing back.
    IFS=$oldifs; set +f
    t=${l%% *}; x=${l#* }
    case "$x" in /*) ;; *) continue ;; esac
    case "$SEEN" in *"$NL$x$NL"*) continue ;; esac
    if [ "$t" = d ]; then
      SEEN="$SEEN$x$NL"
      # `/` (any number of slashes) is never walked: every *.conf on the node.
      case "$x" in *[!/]*) ;; *) continue ;; esac
      if [ -d "$x" ]; then
        KCONFS=
        kdir "$x" 1
        SRC="$SRC$KCONFS"
      else
        [ -e "$x" ] || [ -L "$x" ] || hdr missing "$x"
      fi
    else
      # A resolv.conf or a dhclient.conf (r) names no file of dnsfix's: read, never searched.
      f "$x"
      [ "$t" = r ] || SRC="$SRC$x$NL"
    fi
  done
  IFS=$oldifs; set +f
done
# k0s: whether it wrote the kubelet's config this boot (/run is emptied at boot), which
# it does after setting the kernel up; read above where its kubelet runs and names it.
[ -n "$K0SP" ] && e /run/k0s/kubelet/config.yaml
# k0s running no kubelet: the version of the k0s its unit starts, which decides what its
# next start does with the worker profile's resolvConf (kept from 1.33.1; before, k0s
# writes its own choice over it). The binary is the first word of the last ExecStart= of
# its unit files (k0s-bin; dnsfix uses the answer only where that is the ExecStart in
# effect); bounded, and killed if it ignores the first signal.
if [ -n "$K0SP" ] && [ -z "$KPID" ] && command -v timeout >/dev/null 2>&1; then
  K0SBIN=
  oldifs=$IFS; IFS=$NL; set -f
  for x in $UNITS; do
    case "$x" in
      */k0sworker.service | */k0scontroller.service | */k0sworker.service.d/* | */k0scontroller.service.d/*) ;;
      *) continue ;;
    esac
    # A regular file with content only: a FIFO (or a link to one) would block awk for ever.
    { [ -f "$x" ] && [ -s "$x" ]; } || continue
    # shellcheck disable=SC2016 # an awk program: its $ are awk's
    b=$(awk '/^[ \t]*ExecStart[ \t]*=/ { v = $0; sub(/^[^=]*=[ \t]*/, "", v); sub(/^[-@:+!]+/, "", v); sub(/[ \t].*/, "", v); if (v != "") b = v } END { print b }' "$x" 2>/dev/null)
    [ -n "$b" ] && K0SBIN=$b
  done
  IFS=$oldifs; set +f
  case "$K0SBIN" in
    /*)
      if [ -f "$K0SBIN" ] && [ -x "$K0SBIN" ]; then
        hdr cmd k0s-bin; put "$K0SBIN$NL"
        cmd k0s-version timeout -k 2 5 "$K0SBIN" version
      fi
      ;;
  esac
fi
# k3s/RKE2: the id `with-node-id` appends to the node's name.
[ -d /etc/rancher ] && f /etc/rancher/node/id
# k3s/RKE2: the generated fallback resolv.conf (missing when k3s did not need it) and the
# kubelet config drop-ins of the kubelet they run: their own, the user's, and the copies
# they make of `kubelet-arg: config=` (a file) and `config-dir=` (20-cli-config-dir/), the
# whole directory as the kubelet walks it.
# k3s: the CNI directory its containerd reads, the conf_dir line of the config.toml k3s
# writes at every start; only that line is kept (the file may hold registry credentials).
# A regular file of some size, not a link (one into /proc may block its reader, as f
# says); the record only where the file could be opened, ended by "# read" once the loop
# is done (a read error ends it as the end of the file does).
K3SCT=/var/lib/rancher/k3s/agent/etc/containerd/config.toml
if [ -f "$K3SCT" ] && [ ! -L "$K3SCT" ] && [ -s "$K3SCT" ]; then
  {
    K3SCD=
    while IFS= read -r l || [ -n "$l" ]; do
      case "$l" in *conf_dir*) K3SCD="$K3SCD$l$NL" ;; esac
    done
    hdr cmd k3s-cni-conf-dir; put "$K3SCD# read$NL"
  } 2>/dev/null < "$K3SCT"
fi
for r in k3s rke2; do
  f "/var/lib/rancher/$r/agent/etc/resolv.conf"
  d="/var/lib/rancher/$r/agent/etc/kubelet.conf.d"
  case "$SEEN" in *"$NL$d$NL"*) ;; *) [ -d "$d" ] && { SEEN="$SEEN$d$NL"; kdir "$d" 1; } ;; esac
done
# The kubelet's version: asked of the running root kubelet's (or k3s's) binary, else of
# the kubelet on root's PATH; bounded, and killed if it ignores the first signal.
KBIN=
if [ -n "$KPID" ]; then KBIN="/proc/$KPID/exe"
elif [ -n "$K3SPID" ]; then KBIN="/proc/$K3SPID/exe"
else
  # command -v kubelet, without a subshell: the first executable kubelet on PATH.
  oldifs=$IFS; IFS=:; set -f
  for d in $PATH; do
    if [ -f "${d:-.}/kubelet" ] && [ -x "${d:-.}/kubelet" ]; then KBIN="${d:-.}/kubelet"; break; fi
  done
  IFS=$oldifs; set +f
fi
if [ "$ASK_VERSION" = 1 ] && [ -n "$KBIN" ] && command -v timeout >/dev/null 2>&1; then
  cmd kubelet-version timeout -k 2 5 "$KBIN" --version
  # A running binary replaced on disk since it started reads "PATH (deleted)": its next
  # start runs another version.
  case "$KBIN" in /proc/*) cmd kubelet-exe readlink "$KBIN" ;; esac
fi

# CNI configuration: the kubelet's runtime reads the first .conf, .conflist or .json file
# of the directory in name order (libcni ConfFiles; nothing else there is read: MicroK8s
# keeps its CNI manifest of some hundred KB in the same directory); k3s keeps its own, and
# so does MicroK8s's containerd (conf_dir ${SNAP_DATA}/args/cni-network). ConfFiles lists
# a symlink whatever it leads to (a link to nothing or to a directory fails to load).
for d in /etc/cni/net.d /var/lib/rancher/k3s/agent/etc/cni/net.d ${M:+"$M/cni-network"}; do
  if [ -d "$d" ]; then
    hdr dir "$d"
    for x in "$d"/*.conf "$d"/*.conflist "$d"/*.json; do
      if [ -f "$x" ] || [ -L "$x" ]; then f "$x"; fi
    done
  elif [ ! -e "$d" ]; then
    hdr missing "$d"
  fi
done

# CRI-O's configuration, where CRI-O is installed: its [crio.network] cni_default_network
# picks the pod network by name instead of the first file above. /etc/crio/crio.conf,
# then every file of /etc/crio/crio.conf.d, the last setting winning (crio.conf.d(5)).
# cdir DIR DEPTH reads the directory as CRI-O walks it (cri-o @f954a17e pkg/config/
# config.go UpdateFromPath: filepath.Walk, so every subdirectory and hidden names too, a
# symlinked directory not followed, every name that is no directory decoded): seven
# levels below DIR at most, a directory deeper, or a name with a newline in DIR, is an
# error record named DIR/ (or the deeper one's), so the setting is unknown, not wrong.
cdir() {
  hdr dir "$1"
  for x in "$1"/* "$1"/.[!.]* "$1"/..?*; do
    [ -e "$x" ] || [ -L "$x" ] || continue
    case "$x" in *"$NL"*) hdr error "$1/"; continue ;; esac
    if [ -d "$x" ] && [ ! -L "$x" ]; then
      if [ "$2" -lt 8 ]; then cdir "$x" $(($2 + 1)); else hdr error "$x/"; fi
    else
      f "$x"
    fi
  done
}
# /etc/sysconfig/crio: the environment of CRI-O's own unit (contrib/systemd/crio.service),
# whose option variables and CONTAINER_* variables may override the files; read where no
# unit is found too (the unit CRI-O ships is assumed then).
if [ -d /etc/crio ]; then
  f /etc/crio/crio.conf
  f /etc/sysconfig/crio
  if [ -d /etc/crio/crio.conf.d ]; then cdir /etc/crio/crio.conf.d 1; fi
fi

# Files dnsfix itself writes (the plan must know what it replaces): all of /etc/dnsfix,
# and what the playbooks in use may write.
f /etc/dnsfix
f /etc/dnsfix/resolv.conf
for x in /etc/dnsfix/* /etc/dnsfix/.[!.]*; do
  if [ -e "$x" ] || [ -L "$x" ]; then f "$x"; fi
done
# shellcheck disable=SC2043 # dnsfix fills in zero or more quoted paths
for x in @EXTRA@; do f "$x"; done

# firewalld: its permanent configuration, as it loads it at start and reload (whether it
# runs is in the systemctl call above). firewalld.conf (DefaultZone), the zones it ships
# and those of /etc (a file of the same name replaces the shipped one), and what else may
# accept forwarded traffic: direct rules and the policies of /etc. Nothing here where it
# is not installed: each directory is a dir or missing record all the same. flannel's
# subnet file names the pod network (FLANNEL_NETWORK) the zones are judged against.
f /etc/firewalld/firewalld.conf
for d in /usr/lib/firewalld/zones /etc/firewalld/zones /etc/firewalld/policies; do
  if [ -d "$d" ]; then
    hdr dir "$d"
    for x in "$d"/*.xml; do
      if [ -f "$x" ] || [ -L "$x" ]; then f "$x"; fi
    done
  elif [ ! -e "$d" ]; then
    hdr missing "$d"
  fi
done
[ -d /etc/firewalld ] && f /etc/firewalld/direct.xml
f /run/flannel/subnet.env

# Bridge netfilter, forwarding, modules.
f /proc/sys/net/bridge
for k in bridge/bridge-nf-call-iptables bridge/bridge-nf-call-ip6tables bridge/bridge-nf-call-arptables \
  ipv4/ip_forward ipv4/conf/default/forwarding ipv6/conf/all/forwarding; do
  f "/proc/sys/net/$k"
done
# Each Linux bridge's own IPv4 forwarding: one made after the boot (the pods' cni0) started
# with net.ipv4.conf.default.forwarding, which routes nothing that enters by it where 0.
for x in /sys/class/net/*/bridge; do
  [ -d "$x" ] || continue
  x=${x%/bridge}
  f "/proc/sys/net/ipv4/conf/${x##*/}/forwarding"
done
f /proc/modules
f /sys/module/br_netfilter
f /etc/sysctl.conf
# Where an upgrade to Debian 13 moved a changed /etc/sysctl.conf (procps removes it).
f /etc/sysctl.conf.dpkg-bak
# Booted by systemd (sd_booted): then the boot reads /etc/sysctl.conf only through a link.
f /run/systemd/system
confs /etc/sysctl.d /run/sysctl.d /usr/local/lib/sysctl.d /usr/lib/sysctl.d
[ /lib/sysctl.d -ef /usr/lib/sysctl.d ] || confs /lib/sysctl.d
f /etc/modules
confs /etc/modules-load.d /run/modules-load.d /usr/local/lib/modules-load.d /usr/lib/modules-load.d
[ /lib/modules-load.d -ef /usr/lib/modules-load.d ] || confs /lib/modules-load.d
# What may stop a module listed above loading all the same: kmod's deny-lists (blacklist,
# install), in kmod's directories, and this boot's kernel command line (modules_load=,
# modprobe.blacklist=, module_blacklist=). Read in the one batch below, no process more.
f /proc/cmdline
confs /etc/modprobe.d /run/modprobe.d /usr/local/lib/modprobe.d /usr/lib/modprobe.d
[ /lib/modprobe.d -ef /usr/lib/modprobe.d ] || confs /lib/modprobe.d

# NodeLocal DNSCache's dummy interface (its absence is a fact too: a clusterDNS on its
# address then reaches nothing).
if [ -e /sys/class/net/nodelocaldns ]; then
  cmd nodelocaldns-addr ip -o addr show dev nodelocaldns
else
  hdr missing /sys/class/net/nodelocaldns
fi

# Symlinks: every target from one readlink. What readlink -f would print is worked out
# with cd -P (a builtin) from the target; a chain of links, or targets that do not come
# back one per line (a newline in one, a readlink that takes one operand), are asked of
# readlink one link at a time, as before.
# canon LINK TARGET: LINK's resolved path in C (empty when a directory on the way is
# missing, as readlink -f fails there).
canon() {
  p=$2
  case "$p" in /*) ;; *) p=${1%/*}/$p ;; esac
  b=${p##*/}
  case "$b" in
    '' | . | ..) C=$(readlink -f "$1" 2>/dev/null); return ;;
  esac
  d=${p%/*}
  if cd -P "${d:-/}" 2>/dev/null; then
    C=${PWD%/}/$b
    if [ -L "$C" ]; then C=$(readlink -f "$1" 2>/dev/null); fi
  else
    C=
  fi
}
if [ -n "$LINKS" ]; then
  oldifs=$IFS; IFS=$NL; set -f
  # shellcheck disable=SC2086
  T=$(readlink -- $LINKS 2>/dev/null)
  nl=0 nt=0
  for x in $LINKS; do nl=$((nl + 1)); done
  for x in $T; do nt=$((nt + 1)); done
  # shellcheck disable=SC2086
  [ "$nl" = "$nt" ] && set -- $T
  for x in $LINKS; do
    IFS=$oldifs; set +f
    if [ "$nl" = "$nt" ]; then t=$1; shift; canon "$x" "$t"
    else t=$(readlink "$x" 2>/dev/null); C=$(readlink -f "$x" 2>/dev/null); fi
    hdr link "$x"; put "$t$NL"
    hdr canon "$x"; put "$C"
    # A link of size 0 to a regular file outside the kernel's trees reads empty: C is
    # where it leads (-ef: the same file, not a name that lost a trailing newline).
    case "$NL$EMPTYL" in
      *"$NL$x$NL"*)
        case "$C" in
          '' | /proc/* | /sys/* | /dev/*) ;;
          *) if [ -f "$C" ] && [ ! -s "$C" ] && [ "$x" -ef "$C" ]; then hdr file "$x"; fi ;;
        esac
        ;;
    esac
  done
  IFS=$oldifs; set +f
  cd /
fi

# Every regular file, in one head: see the top for how the batch is framed. /dev/null
# first makes at least two files, so head prints the headers; dnsfix skips it.
hdr batch
flush
if [ -n "$READ" ]; then
  oldifs=$IFS; IFS=$NL; set -f
  # shellcheck disable=SC2086
  head -c $((CAP + 1)) "${P}dev/null" $READ 2>/dev/null
  IFS=$oldifs; set +f
fi
hdr end
flush
} </dev/null
