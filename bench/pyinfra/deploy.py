# The pyinfra side of bench/facts.sh: read the files the floor reads (the 6 files dnsfix
# needs for its headline findings) with pyinfra's own facts, one FileContents fact per
# file, the way a pyinfra deploy would check them before deciding on operations. Run with
# --dry: facts are gathered over SSH, nothing is changed.
#
#   pyinfra INVENTORY bench/pyinfra/deploy.py --dry --parallel N -y
#
# BENCH_FILES (space-separated) overrides the list.
import os

from pyinfra import host
from pyinfra.facts.files import FileContents

FILES = os.environ.get(
    "BENCH_FILES",
    "/etc/resolv.conf /run/systemd/resolve/resolv.conf /etc/kubernetes/kubelet-config.yaml "
    "/etc/kubernetes/kubelet.env /proc/sys/net/bridge/bridge-nf-call-iptables "
    "/proc/sys/net/ipv4/ip_forward",
).split()

for path in FILES:
    host.get_fact(FileContents, path=path)
