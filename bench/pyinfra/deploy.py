# The pyinfra side of bench/facts.sh: read the files dnsfix reads with pyinfra's own facts,
# one FileContents fact per file, the way a pyinfra deploy would check them before
# deciding on operations. Run with --dry: facts are gathered over SSH, nothing is changed.
#
#   pyinfra INVENTORY bench/pyinfra/deploy.py --dry --parallel N -y
#
# BENCH_FILES_JSON names a JSON file {"host": ["/path", ...], ...}: each host reads its own
# list (facts.sh writes it from `dnsfix facts --format json`: every regular file whose
# content dnsfix read on that node). Else BENCH_FILES (space-separated) is one list for
# every host; the default is the 6 files of the bench's plain-ssh floor.
import json
import os

from pyinfra import host
from pyinfra.facts.files import FileContents

FILES = os.environ.get(
    "BENCH_FILES",
    "/etc/resolv.conf /run/systemd/resolve/resolv.conf /etc/kubernetes/kubelet-config.yaml "
    "/etc/kubernetes/kubelet.env /proc/sys/net/bridge/bridge-nf-call-iptables "
    "/proc/sys/net/ipv4/ip_forward",
).split()

if os.environ.get("BENCH_FILES_JSON"):
    with open(os.environ["BENCH_FILES_JSON"]) as f:
        FILES = json.load(f)[host.name]

for path in FILES:
    host.get_fact(FileContents, path=path)
