# dnsfix gather script: POSIX sh, READ-ONLY. It never writes, creates or changes anything.
#
# Output is a stream of records. Each record starts with a header line
#   "\n<BOUNDARY> <kind> <name>\n"
# and its body runs until the next "\n<BOUNDARY> ". BOUNDARY carries a random nonce chosen
# by dnsfix for this run, so no file content can forge or break the framing (binary data,
# a line that looks like a header, or no trailing newline are all fine). The final record
# is "end": without it dnsfix knows the output was cut short.
#
# Kinds: file PATH (body: up to CAP+1 bytes of content), missing PATH, dir PATH,
# error PATH (the read failed), link PATH (body: readlink), canon PATH (body: readlink -f),
# cmd NAME (body: stdout), rc NAME (body: exit status), pid NAME (body: pid).
B="@BOUNDARY@"
CAP=@CAP@
LC_ALL=C
export LC_ALL
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH

hdr() { printf '\n%s %s\n' "$B" "$*"; }

SEEN=' '
f() {
  case "$SEEN" in *" $1 "*) return ;; esac
  SEEN="$SEEN$1 "
  if [ -L "$1" ]; then
    hdr link "$1"; readlink "$1" 2>/dev/null
    hdr canon "$1"; readlink -f "$1" 2>/dev/null
  fi
  if [ -d "$1" ]; then hdr dir "$1"; return; fi
  if [ ! -e "$1" ]; then hdr missing "$1"; return; fi
  hdr file "$1"
  head -c $((CAP + 1)) "$1" 2>/dev/null || hdr error "$1"
}

# Every *.conf in the given directories, in shell glob (C locale) order.
confs() {
  for d in "$@"; do
    if [ ! -d "$d" ]; then
      [ -e "$d" ] || [ -L "$d" ] || hdr missing "$d"
      continue
    fi
    hdr dir "$d"
    for x in "$d"/*.conf; do
      if [ -e "$x" ] || [ -L "$x" ]; then f "$x"; fi
    done
  done
}

cmd() {
  name=$1; shift
  if command -v "$1" >/dev/null 2>&1; then
    hdr cmd "$name"; "$@" 2>/dev/null
    hdr rc "$name"; printf '%s' "$?"
  fi
}

hdr begin dnsfix-gather-1
f /proc/sys/kernel/hostname
f /etc/os-release
f /proc/sys/kernel/random/boot_id
hdr cmd uid; id -u

# Resolver files, and who manages them.
f /etc/resolv.conf
f /run/systemd/resolve/resolv.conf
f /run/systemd/resolve/stub-resolv.conf
f /usr/lib/systemd/resolv.conf
f /etc/systemd/resolved.conf
confs /etc/systemd/resolved.conf.d /run/systemd/resolved.conf.d
f /etc/NetworkManager/NetworkManager.conf
confs /etc/NetworkManager/conf.d /run/NetworkManager/conf.d
f /etc/dhcp/dhclient.conf
f /etc/dhclient.conf
f /etc/dhcp/dhclient-exit-hooks.d/zdnsupdate
f /etc/resolvconf/resolv.conf.d/head
f /etc/resolvconf/resolv.conf.d/base
f /etc/cloud/cloud.cfg.d/99-disable-network-config.cfg
cmd resolvconf-bin command -v resolvconf
cmd cloud-init-bin command -v cloud-init
cmd units systemctl is-active systemd-resolved NetworkManager kubelet k3s k3s-agent rke2-server rke2-agent

# Kubelet: config files, env/flag files, unit drop-ins, the running process.
KCFG="/etc/kubernetes/kubelet-config.yaml /var/lib/kubelet/config.yaml"
KENV="/etc/kubernetes/kubelet.env /var/lib/kubelet/kubeadm-flags.env /etc/default/kubelet /etc/sysconfig/kubelet"
RCFG="/etc/rancher/k3s/config.yaml /etc/rancher/rke2/config.yaml"
for x in $KCFG $KENV $RCFG /etc/systemd/system/kubelet.service; do f "$x"; done
confs /etc/systemd/system/kubelet.service.d /usr/lib/systemd/system/kubelet.service.d
KPID=
for d in /proc/[0-9]*; do
  c=
  read -r c < "$d/comm" 2>/dev/null || continue
  if [ "$c" = kubelet ]; then KPID=${d#/proc/}; break; fi
done
if [ -n "$KPID" ]; then
  hdr pid kubelet; printf '%s' "$KPID"
  f "/proc/$KPID/cmdline"
fi
# Any other resolv.conf the kubelet might be told to use: a crude superset here (every
# value of a resolvConf key or a resolv-conf flag, `=` or space separated); the precise
# choice (flag beats config, last flag wins) is made by dnsfix from the files above.
{
  sed -n 's/^[[:space:]]*["'\'']\{0,1\}resolvConf["'\'']\{0,1\}[[:space:]]*:[[:space:]]*//p' $KCFG
  sed -n 's/^[[:space:]]*resolv-conf[[:space:]]*:[[:space:]]*//p' $RCFG
  { [ -n "$KPID" ] && tr '\000' '\n' < "/proc/$KPID/cmdline"; cat $KENV $RCFG; } |
    tr ' "'"'"'\t\r' '\n\n\n\n\n' |
    awk 'p { print; p = 0 } /^-?-?resolv-conf=/ { sub(/^[^=]*=/, ""); print } /^--?resolv-conf$/ { p = 1 }'
} 2>/dev/null | sed 's/[[:space:]]#.*//' | tr -d '"'"'"'\r' |
  while read -r x; do
    case "$x" in /*) f "$x" ;; esac
  done
for x in /var/lib/rancher/k3s/agent/etc/resolv.conf /var/lib/rancher/rke2/agent/etc/resolv.conf; do
  [ -e "$x" ] && f "$x"
done

# Files dnsfix itself writes (the plan must know what it replaces): all of /etc/dnsfix,
# and what the playbooks in use may write.
f /etc/dnsfix
f /etc/dnsfix/resolv.conf
for x in /etc/dnsfix/* /etc/dnsfix/.[!.]*; do
  if [ -e "$x" ] || [ -L "$x" ]; then f "$x"; fi
done
for x in @EXTRA@; do f "$x"; done

# Bridge netfilter, forwarding, modules.
f /proc/sys/net/bridge
for k in bridge/bridge-nf-call-iptables bridge/bridge-nf-call-ip6tables bridge/bridge-nf-call-arptables \
  ipv4/ip_forward ipv6/conf/all/forwarding; do
  f "/proc/sys/net/$k"
done
f /proc/modules
f /sys/module/br_netfilter
f /etc/sysctl.conf
confs /etc/sysctl.d /run/sysctl.d /usr/local/lib/sysctl.d /usr/lib/sysctl.d
[ /lib/sysctl.d -ef /usr/lib/sysctl.d ] || confs /lib/sysctl.d
f /etc/modules
confs /etc/modules-load.d /run/modules-load.d /usr/local/lib/modules-load.d /usr/lib/modules-load.d
[ /lib/modules-load.d -ef /usr/lib/modules-load.d ] || confs /lib/modules-load.d

# NodeLocal DNSCache's dummy interface.
if [ -e /sys/class/net/nodelocaldns ]; then
  cmd nodelocaldns-addr ip -o addr show dev nodelocaldns
fi
hdr end
