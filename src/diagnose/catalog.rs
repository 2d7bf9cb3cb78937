//! The finding catalog: every finding id dnsfix can report, its default severity, and the
//! explanation `dnsfix explain ID` prints (what you see, why it happens, the fix per
//! installer, what must restart, how to verify).
//!
//! The ids are a public contract. Users grep logs, runbooks and alerts for them, and
//! JSON reports and saved plans carry them. Once an id has shipped it never changes and
//! is never reused for a different problem; new rules get new ids.
//!
//! The texts here are static: they never depend on one host's facts. What was seen on
//! a host (file, line, value) belongs in the [`Finding`](super::finding::Finding), and
//! detection lives in `rules` and `drift`, not here.

use super::finding::Severity;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleInfo {
    /// Stable SCREAMING-KEBAB id, e.g. `DNS-KUBELET-LOOPBACK`.
    pub id: &'static str,
    /// Default severity. A rule may report a variant at another severity; the texts say
    /// when.
    pub severity: Severity,
    /// One line, at most 80 chars, for the `dnsfix explain` listing.
    pub title: &'static str,
    /// What the engineer saw: log lines, errors and events, verbatim.
    pub symptom: &'static str,
    /// Why it happens.
    pub mechanism: &'static str,
    /// What fixes it, per installer flavour where that differs.
    pub fix: &'static str,
    /// What must restart or be recreated, and what need not.
    pub restart: &'static str,
    /// Commands that show the fix worked.
    pub verify: &'static str,
    /// The shipped playbook that fixes it, once there is one.
    pub playbook: Option<&'static str>,
}

// The texts are rendered line by line and indented by `dnsfix explain`. A line ending in
// `\n\` starts the next rendered line at column 0; one ending in `\n  \` indents it by
// two (commands, continuation lines). Prose wraps at about 86 columns; verbatim log lines
// are kept whole so they can be grepped.
pub const RULES: &[RuleInfo] = &[
    RuleInfo {
        id: "DNS-KUBELET-LOOPBACK",
        severity: Severity::Critical,
        title: "kubelet gives CoreDNS a loopback nameserver (e.g. 127.0.0.53)",
        symptom: "\
            CoreDNS (or nodelocaldns) pods on this node are in CrashLoopBackOff, and the log ends\n\
            with a line like this one, from an incident (port and numbers vary):\n\
            [FATAL] plugin/loop: Loop (127.0.0.1:38718 -> :53) detected for zone \".\", see https://coredns.io/plugins/loop#troubleshooting. Query: \"HINFO 1602357022762538710.2777015015780658687.\"\n\
            Older CoreDNS prints `Seen \"HINFO IN <n>.<n>.\" more than twice, loop detected`.\n\
            kube-dns, or a CoreDNS without the loop plugin, does not crash but times out:\n\
            [ERROR] 2 www.baidu.com. A: unreachable backend: read udp 127.0.0.1:38019->127.0.0.53:53: i/o timeout\n\
            The resolv.conf the crashing pod got says `nameserver 127.0.0.53`, while replicas on\n\
            other nodes are healthy and ordinary pods on this node still resolve names. It\n\
            usually starts after the node was rebooted, re-provisioned or drained, or after a\n\
            CoreDNS upgrade (kubespray#3979).",
        mechanism: "\
            CoreDNS and nodelocaldns run with dnsPolicy: Default, so kubelet gives them the file\n\
            named by its resolvConf setting, unchanged (kubelet pkg/kubelet/network/dns/dns.go).\n\
            hostNetwork pods with dnsPolicy: ClusterFirst fall back to the same file. kubelet\n\
            does not filter loopback addresses; the request to make it do so, kubernetes#49675,\n\
            was closed unfixed.\n\
            \n\
            Inside the CoreDNS pod, 127.0.0.0/8 is the pod itself. `forward . /etc/resolv.conf`\n\
            then sends every name outside the cluster back to CoreDNS. The loop plugin's start-up\n\
            probe (an HINFO query for a random name) comes back more than twice, and CoreDNS\n\
            exits (CoreDNS loop plugin README). nodelocaldns runs with hostNetwork, so for it\n\
            127.0.0.53 is the node's systemd-resolved, which is only safe while resolved's own\n\
            upstreams are real (see DNS-CLUSTER-SELF-FORWARD).\n\
            \n\
            The loopback address comes from a local stub resolver:\n\
            - systemd-resolved: /etc/resolv.conf links to stub-resolv.conf (127.0.0.53); the real\n  \
            upstreams are in /run/systemd/resolve/resolv.conf.\n\
            - NetworkManager with dns=dnsmasq (Ubuntu 16.04): 127.0.1.1.\n\
            - a local dnsmasq or unbound on 127.0.0.1 or ::1.\n\
            \n\
            Why one node, and why now: Kubespray sets kube_resolv_conf to\n\
            /run/systemd/resolve/resolv.conf only on Ubuntu 18.04-24.04 and Fedora\n\
            (roles/kubernetes/node/vars/); other distros keep /etc/resolv.conf even when\n\
            systemd-resolved runs. kubeadm picks the resolved path only if systemd-resolved was\n\
            active when it ran. A pod's resolv.conf is written once, when the pod is created,\n\
            and the loop probe runs only at start-up, so nothing breaks until the DNS pods are\n\
            recreated by a reboot, drain or rollout. Editing /etc/resolv.conf changes nothing\n\
            when kubelet reads another file (kubespray#11093).\n\
            \n\
            Pods get the first three servers of the file only (kubelet\n\
            formDNSNameserversFitsLimits): a loopback server after them reaches no pod. Where\n\
            CoreDNS and nodelocaldns forward `.` elsewhere than this file, as the Corefiles\n\
            read from the cluster say, or, where they were not read, as Kubespray renders\n\
            them when upstream_dns_servers is set (coredns-config.yml.j2,\n\
            upstreamForwardTarget), nothing loops: the finding is a warning for the other\n\
            dnsPolicy: Default pods off the host network, whose loopback is their own.\n\
            On MicroK8s with the Corefile not read it is a warning too, saying the forward is\n\
            not known: its dns addon writes `forward . /etc/resolv.conf` only where the\n\
            kubelet's arguments file had a --resolv-conf when it was enabled, or (1.26 and\n\
            later) where it found a resolv.conf without loopback servers, which it then gives\n\
            the kubelet too; otherwise `forward . 8.8.8.8 8.8.4.4` (always in 1.25 and earlier,\n\
            unless enabled as dns:/etc/resolv.conf).",
        fix: "\
            Point kubelet's resolvConf at a file that lists only real upstream resolvers:\n\
            - systemd-resolved is active and /run/systemd/resolve/resolv.conf has no loopback or\n  \
            cluster address: use that file (the fix the CoreDNS loop README gives).\n\
            - otherwise: write a dedicated file with your upstream servers and use that.\n\
            \n\
            Make it stick for your installer:\n\
            - Kubespray: resolvConf in /etc/kubernetes/kubelet-config.yaml, and kube_resolv_conf\n  \
            in the inventory so the next cluster.yml run does not write the old path back.\n  \
            Inventory vars beat the role default (/etc/resolv.conf) but not the Ubuntu/Fedora\n  \
            vars files; there only `-e kube_resolv_conf=...` wins (Ansible precedence).\n  \
            Setting upstream_dns_servers as well makes CoreDNS and nodelocaldns forward there\n  \
            instead of to /etc/resolv.conf.\n\
            - kubeadm: resolvConf in /var/lib/kubelet/config.yaml AND in ConfigMap\n  \
            kube-system/kubelet-config (key `kubelet`): kubeadm upgrade and join rewrite the\n  \
            node file from it. Remove any --resolv-conf flag from\n  \
            /var/lib/kubelet/kubeadm-flags.env or KUBELET_EXTRA_ARGS; a flag beats the file.\n\
            - k3s / RKE2: `resolv-conf: /path` in /etc/rancher/k3s/config.yaml or\n  \
            /etc/rancher/rke2/config.yaml (or K3S_RESOLV_CONF / RKE2_RESOLV_CONF).\n\
            \n\
            Do not stop at `forward . 8.8.8.8` in the Corefile: it fixes CoreDNS only, and every\n\
            other dnsPolicy: Default pod still gets the loopback server (the loop README calls\n\
            it quick and dirty). Do not delete the `loop` plugin either: the loop stays and\n\
            swallows queries.\n\
            \n\
            `dnsfix plan -i hosts.yaml --limit NODE` shows the exact change for each node.",
        restart: "\
            kubelet, because it reads the resolvConf path only at start (the file's content is\n\
            read again for every new pod):\n  \
            systemctl restart kubelet          # Kubespray, kubeadm\n  \
            systemctl restart k3s              # or k3s-agent; RKE2: rke2-server / rke2-agent\n\
            Then recreate the CoreDNS and nodelocaldns pods on the node, because a pod's\n\
            /etc/resolv.conf is written when the pod is created:\n  \
            kubectl -n kube-system delete pod -l 'k8s-app in (kube-dns,kube-dns-secondary,coredns,node-local-dns,node-local-dns-second)' \\\n    \
            --field-selector spec.nodeName=NODE\n\
            Restarting kubelet does not restart running containers. ClusterFirst pods need\n\
            nothing: they get clusterDNS, not this file. hostNetwork pods that resolve names\n\
            (ingress controllers, CNI agents) got the loopback server too; recreate them when\n\
            convenient. No reboot is needed.",
        verify: "\
            dnsfix check -i hosts.yaml --limit NODE\n\
            What kubelet really uses (flags and config file merged):\n  \
            kubectl get --raw /api/v1/nodes/NODE/proxy/configz | jq .kubeletconfig.resolvConf\n\
            The file a running CoreDNS pod got, on the node (no 127.x or ::1 nameserver):\n  \
            crictl inspectp \"$(crictl pods -q --name coredns | head -1)\" | jq -r \\\n    \
            '.info.runtimeSpec.mounts[] | select(.destination==\"/etc/resolv.conf\") | .source'\n  \
            cat <the path printed above>\n\
            The DNS pods are up and their logs are quiet:\n  \
            kubectl -n kube-system get pod -l 'k8s-app in (kube-dns,kube-dns-secondary,coredns,node-local-dns,node-local-dns-second)' -o wide\n  \
            kubectl -n kube-system logs -l 'k8s-app in (kube-dns,kube-dns-secondary,coredns)' --tail=20\n\
            A dnsPolicy: Default pod on the node resolves an outside name, a normal pod a\n\
            cluster name:\n  \
            kubectl run -it --rm dnstest --image=busybox:1.36 --restart=Never \\\n    \
            --overrides='{\"apiVersion\":\"v1\",\"spec\":{\"nodeName\":\"NODE\",\"dnsPolicy\":\"Default\"}}' \\\n    \
            -- nslookup example.com\n  \
            kubectl run -it --rm dnstest --image=busybox:1.36 --restart=Never \\\n    \
            -- nslookup kubernetes.default",
        playbook: Some("kubelet-resolvconf"),
    },
    RuleInfo {
        id: "DNS-CLUSTER-SELF-FORWARD",
        severity: Severity::Critical,
        title: "Upstream DNS points back into the cluster: lookups loop",
        symptom: "\
            After a node or cluster reboot the nodelocaldns pods go into CrashLoopBackOff one\n\
            after another with (port and numbers vary):\n\
            [FATAL] plugin/loop: Loop (169.254.25.10:<port> -> 169.254.25.10:53) detected for zone \".\", see https://coredns.io/plugins/loop#troubleshooting. Query: \"HINFO <n>.<n>.\"\n\
            CoreDNS may crash the same way. New pods anywhere in the cluster then hang in\n\
            ErrImagePull / ImagePullBackOff, because the nodes themselves resolve the registry\n\
            through the same dead address. Before the reboot everything worked.\n\
            The node's /etc/resolv.conf, rewritten by Kubespray, looks like this (from an\n\
            incident; kubespray#9948, \"NodeLocalDNS Loop detected for zone \".\"\"):\n\
            domain cluster.local\n\
            search cluster.local default.svc.cluster.local. svc.cluster.local.\n\
            nameserver 169.254.25.10",
        mechanism: "\
            CoreDNS and nodelocaldns (dnsPolicy: Default) get a copy of kubelet's resolvConf\n\
            file. With Kubespray's default empty upstream_dns_servers both forward names outside\n\
            the cluster to the servers in that file: CoreDNS `forward . /etc/resolv.conf`,\n\
            nodelocaldns `.:53 { forward . /etc/resolv.conf }`. If the file lists only the\n\
            cluster's own DNS addresses (the nodelocaldns IP 169.254.25.10, the kube-dns service\n\
            IP such as 10.233.0.3, kubelet's clusterDNS), every outside lookup comes back into\n\
            the cluster: nodelocaldns forwards to itself, or it and CoreDNS forward to each\n\
            other.\n\
            \n\
            How the cluster address gets there (Kubespray, resolvconf_mode: host_resolvconf, the\n\
            default): the last play of cluster.yml, \"Apply resolv.conf changes now that cluster\n\
            DNS is up\", puts 169.254.25.10 (or the CoreDNS service IP) first in the node's\n\
            resolver through whichever manager is active: the `# Ansible entries` block in\n\
            /etc/resolv.conf, DNS= in /etc/systemd/resolved.conf.d/kubespray.conf,\n\
            /etc/NetworkManager/conf.d/dns.conf, or `supersede domain-name-servers` in\n\
            dhclient.conf. The servers after it come from the inventory and from the nameserver\n\
            lines already in /etc/resolv.conf, with no filter, so 127.0.0.53 or an earlier\n\
            169.254.25.10 are fed back in. On Ubuntu, systemd-resolved copies its DNS= servers\n\
            into /run/systemd/resolve/resolv.conf, which is kubelet's resolvConf there (2024\n\
            root-cause comment on kubespray#9948).\n\
            \n\
            Why it waits for a reboot: running pods keep the resolv.conf they were created with,\n\
            before that last play, and the loop plugin probes only when CoreDNS starts. The\n\
            reboot recreates the DNS pods with the new file, and the probe finds the loop.\n\
            Kubespray PR 10554 (\"Fixes #9948\") only restored the default search domains;\n\
            upgrading past it does not remove this loop.\n\
            \n\
            Milder variant, reported as high: kubelet's file is fine, but the node's own\n\
            resolver (/etc/resolv.conf, or resolved's upstream list) has nothing but cluster\n\
            addresses. Pods resolve, but the node itself cannot pull images or resolve anything\n\
            while cluster DNS is down, e.g. right after a reboot, and CoreDNS, nodelocaldns or\n\
            the CNI may need the node's DNS to come back at all (kubespray#11416: calico-node\n\
            could not start).\n\
            \n\
            Variant to come, reported as warning: on a Kubespray node whose last run ended\n\
            before that last play (stopped, or a run without it: --tags, upgrade-only-k8s.yml),\n\
            /etc/systemd/resolved.conf.d/kubespray.conf has no DNS= yet\n\
            and kubelet's file is clean; with upstream_dns_servers unset the next complete run\n\
            adds the cluster address and renders the Corefiles to forward to that file.",
        fix: "\
            Break the cycle at both ends.\n\
            1. Give CoreDNS and nodelocaldns real upstream servers instead of /etc/resolv.conf:\n   \
            - Kubespray: set upstream_dns_servers in group_vars and re-run cluster.yml; then\n     \
            check that the `forward .` lines in ConfigMaps kube-system/coredns and\n     \
            kube-system/nodelocaldns list those servers.\n   \
            - kubeadm: replace `forward . /etc/resolv.conf` in ConfigMap kube-system/coredns.\n   \
            - RKE2: a HelmChartConfig rke2-coredns in kube-system whose valuesContent holds\n     \
            the chart's whole `servers` list (helm get values --all rke2-coredns -n\n     \
            kube-system -o yaml) with only the `forward` entry's parameters changed; its helm\n     \
            controller undoes a hand edit of ConfigMap kube-system/rke2-coredns-rke2-coredns\n     \
            at the next deploy.\n   \
            - CoreDNS installed with its Helm chart: helm upgrade with the release's whole\n     \
            `servers` list (helm get values --all RELEASE -n NAMESPACE -o yaml, the namespace its\n     \
            ConfigMap's meta.helm.sh/release-namespace names) with only the `forward`\n     \
            entry's parameters changed, in a values file given to helm upgrade RELEASE\n     \
            CHART --version VERSION -n NAMESPACE -f FILE (the chart and version helm list\n     \
            shows for the release: the ConfigMap's helm.sh/chart label is a subchart's\n     \
            where CoreDNS came in as a dependency of another chart);\n     \
            the next upgrade undoes a hand edit of `<release>-coredns`.\n   \
            Helm replaces a list value whole: a `servers` with the forward entry alone\n     \
            drops kubernetes, cache and loop, and with them cluster DNS.\n   \
            - k3s writes ConfigMap kube-system/coredns anew when it starts, so a hand edit\n     \
            does not last: do step 2.\n\
            2. Keep cluster addresses out of the file kubelet hands out: point resolvConf at a\n   \
            file with only real upstreams (as for DNS-KUBELET-LOOPBACK), and keep real\n   \
            servers in the node's resolver after the cluster address. Kubespray writes that\n   \
            resolver again at every run: its cluster address first, then `nameservers`,\n   \
            `cloud_resolver` and the servers /etc/resolv.conf lists at that time, so a\n   \
            127.0.0.53 or an old cluster address there comes back. Where /etc/resolv.conf is\n   \
            a plain file or NetworkManager's, list real servers in `nameservers`, without\n   \
            127.0.0.53 or cluster addresses, and set `disable_host_nameservers: true`. Where\n   \
            it is systemd-resolved's, Kubespray puts `nameservers` and upstream_dns_servers\n   \
            only into FallbackDNS (resolved.conf.j2), unused while DNS= names the cluster\n   \
            address: add DNS= real servers in a resolved.conf.d drop-in of the node's own\n   \
            (dnsfix's host-upstream-dns writes zz-dnsfix-upstream.conf). Or set\n   \
            `resolvconf_mode: none` if the nodes need not resolve cluster names (the\n   \
            workaround most used in kubespray#9948): Kubespray then stops writing the\n   \
            resolver but does not undo what it wrote, so also delete the `# Ansible entries`\n   \
            block of /etc/resolv.conf, /etc/systemd/resolved.conf.d/kubespray.conf or\n   \
            /etc/NetworkManager/conf.d/dns.conf, whichever the node has (its next run\n   \
            removes only dhclient.conf's block). On a cluster first deployed with Kubespray\n   \
            before v2.24 the cluster address may also be a DNS= line of\n   \
            /etc/systemd/resolved.conf itself, which those versions wrote and later ones never\n   \
            touch: no inventory setting removes it; delete it by hand (dnsfix names the line).\n\
            \n\
            List only real servers. With a real server after a cluster address, CoreDNS's\n\
            forward plugin still spreads queries over all of them at random, so part of the\n\
            lookups still loop.\n\
            \n\
            `dnsfix plan -i hosts.yaml --limit NODE` shows the exact change.",
        restart: "\
            Because the loop is detected only at start-up, restart the DNS pods after any change\n\
            and read their logs; a pod that kept running proves nothing:\n  \
            kubectl -n kube-system rollout restart deployment/coredns\n  \
            kubectl -n kube-system rollout restart daemonset/nodelocaldns  # upstream name: node-local-dns\n\
            Node resolver changes: restart the service that owns the resolver\n\
            (systemctl restart systemd-resolved, or systemctl reload NetworkManager) and check\n\
            the regenerated file. kubelet only if you changed the resolvConf path\n\
            (systemctl restart kubelet). No reboot is needed, but one rebooted node is the\n\
            real test.",
        verify: "\
            dnsfix check -i hosts.yaml --limit NODE\n\
            On the node:\n  \
            grep -E '^(nameserver|search)' /run/systemd/resolve/resolv.conf /etc/resolv.conf\n\
            From the cluster:\n  \
            kubectl -n kube-system get configmap coredns nodelocaldns -o yaml | grep forward\n  \
            kubectl -n kube-system logs -l k8s-app=node-local-dns --tail=20 | grep plugin/loop\n  \
            kubectl -n kube-system logs -l 'k8s-app in (kube-dns,kube-dns-secondary,coredns)' --tail=20\n  \
            kubectl run -it --rm dnstest --image=busybox:1.36 --restart=Never -- nslookup example.com\n\
            The grep for plugin/loop must print nothing after the DNS pods restarted.",
        playbook: Some("kubelet-resolvconf"),
    },
    RuleInfo {
        id: "DNS-KUBELET-RESOLVCONF-MISSING",
        severity: Severity::Critical,
        title: "kubelet's resolvConf is missing, empty, without nameserver, or gone at reboot",
        symptom: "\
            No new pod starts on this node, static control-plane pods included; running pods\n\
            keep running. `journalctl -u kubelet` shows:\n\
            \"Could not open resolv conf file.\" err=\"open /etc/resolv.conf: no such file or directory\"\n\
            \"Failed to generate sandbox config for pod\" err=\"open /run/systemd/resolve/resolv.conf: no such file or directory\" pod=\"kube-system/kube-apiserver-masternode\"\n\
            and pod events with reason FailedCreatePodSandBox:\n\
            Failed to create pod sandbox: open /run/systemd/resolve/resolv.conf: no such file or directory\n\
            On a new control-plane node `kubeadm init` waits at wait-control-plane until it\n\
            times out, and `crictl ps -a` shows nothing at all.\n\
            If the file exists but has no nameserver line, or resolvConf is \"\" (empty), pods\n\
            start but CoreDNS has no upstream: with \"\" kubelet gives dnsPolicy: Default pods\n\
            `nameserver 127.0.0.1` and `search .`, and CoreDNS dies with\n\
            `Loop (127.0.0.1:<port> -> :53) detected for zone \".\"`.",
        mechanism: "\
            kubelet opens its resolvConf file for every pod it creates, whatever the pod's\n\
            dnsPolicy, to read the host's search domains and options (kubelet\n\
            pkg/kubelet/network/dns/dns.go). If the path does not exist, or is a directory,\n\
            sandbox creation fails for every pod. The path is fixed when kubelet starts; a file\n\
            that disappears later breaks only new pods.\n\
            \n\
            Common causes:\n\
            - resolvConf is /run/systemd/resolve/resolv.conf but systemd-resolved does not run\n  \
            (disabled, masked, a minimal image or VM without it). /run is tmpfs: the file\n  \
            exists while resolved runs, and after it stopped until the next boot, which\n  \
            writes it again only if resolved is enabled. dnsfix reports the file of a\n  \
            disabled or masked resolved (systemctl disable [--now] systemd-resolved; where\n  \
            systemctl is-enabled says nothing, of one not running) as high, before the\n  \
            reboot takes it. Kubespray sets this path on every Ubuntu 18.04-24.04 and\n  \
            Fedora node regardless.\n\
            - /etc/resolv.conf is a dangling symlink, e.g. to stub-resolv.conf of a stopped\n  \
            systemd-resolved.\n\
            - the file has no nameserver line, e.g. written by a DHCP client that got no DNS\n  \
            option.\n\
            - a `nameserver` line with no address (a template or script whose variable was\n  \
            empty): kubelet refuses the whole file (\"nameserver list is empty\"), so sandbox\n  \
            creation fails for every pod, as for a missing file.\n\
            - resolvConf: \"\" (or --resolv-conf=) is valid and means \"no host DNS\": kubelet then\n  \
            gives dnsPolicy: Default pods `nameserver 127.0.0.1` (::1 on IPv6 nodes) and\n  \
            `search .`, which for CoreDNS is itself.",
        fix: "\
            Point resolvConf at a file that exists at boot and lists real upstream servers:\n\
            - systemd-resolved should run here: enable it (systemctl enable --now\n  \
            systemd-resolved) and keep /run/systemd/resolve/resolv.conf.\n\
            - it should not: use /etc/resolv.conf if it is a real file with real servers, or a\n  \
            dedicated file you own.\n\
            - resolvConf \"\" is almost never what you want: set a real path.\n\
            Persist it, or the next installer run reverts it:\n\
            - Kubespray: /etc/kubernetes/kubelet-config.yaml plus kube_resolv_conf. On Ubuntu\n  \
            and Fedora the distro vars file beats inventory vars, so pass\n  \
            `-e kube_resolv_conf=/etc/resolv.conf` to every cluster.yml, scale.yml and\n  \
            upgrade-cluster.yml run.\n\
            - kubeadm: /var/lib/kubelet/config.yaml AND ConfigMap kube-system/kubelet-config.\n\
            - k3s / RKE2: `resolv-conf:` in /etc/rancher/k3s/config.yaml or\n  \
            /etc/rancher/rke2/config.yaml. k3s uses a path you give it without checking it.\n\
            \n\
            `dnsfix plan -i hosts.yaml --limit NODE` shows the exact change.",
        restart: "\
            If you changed the path, restart kubelet (systemctl restart kubelet; k3s/RKE2:\n\
            restart their service). If you only restored the file at the same path, nothing\n\
            needs restarting: kubelet reads it again for the next pod and retries the failed\n\
            sandboxes. Recreate the CoreDNS and nodelocaldns pods if they were created while the\n\
            file had no nameserver:\n  \
            kubectl -n kube-system delete pod -l 'k8s-app in (kube-dns,kube-dns-secondary,coredns,node-local-dns,node-local-dns-second)' \\\n    \
            --field-selector spec.nodeName=NODE",
        verify: "\
            dnsfix check -i hosts.yaml --limit NODE\n\
            On the node (the API may be down if this is a control-plane node):\n  \
            grep -n resolvConf /etc/kubernetes/kubelet-config.yaml /var/lib/kubelet/config.yaml\n  \
            ls -lL /run/systemd/resolve/resolv.conf /etc/resolv.conf\n  \
            grep -c '^nameserver' <the resolvConf path>\n  \
            journalctl -u kubelet --since -10min | grep -E 'resolv conf|sandbox config'\n\
            From the cluster:\n  \
            kubectl get events -A --field-selector reason=FailedCreatePodSandBox\n  \
            kubectl run -it --rm dnstest --image=busybox:1.36 --restart=Never \\\n    \
            -- nslookup kubernetes.default",
        playbook: Some("kubelet-resolvconf"),
    },
    RuleInfo {
        id: "DNS-HOST-RESOLVER-DOWN",
        severity: Severity::High,
        title: "the node's own resolver is down, or goes down at the next reboot",
        symptom: "\
            The node itself resolves nothing: new pods whose image is not cached stay in\n\
            ErrImagePull / ImagePullBackOff, `kubeadm init` and `kubeadm join --control-plane`\n\
            fail their preflight image pulls, and a kubelet that reaches its API server by name\n\
            loses it. Pods' DNS through CoreDNS keeps working where the kubelet hands pods a\n\
            file other than /etc/resolv.conf.\n\
            Go's resolver, in containerd and the kubelet, names the server it asked: [::1]:53 or\n\
            127.0.0.1:53, its defaults, where it read no server (kubernetes/kubernetes#123901,\n\
            `kubeadm init` pulling through containerd):\n\
            failed to resolve reference \"registry.k8s.io/kube-apiserver:v1.29.2\": failed to do request: Head \"https://registry.k8s.io/v2/kube-apiserver/manifests/v1.29.2\": dial tcp: lookup registry.k8s.io on [::1]:53: read udp [::1]:46078->[::1]:53: read: connection refused\n\
            127.0.0.53:53, systemd-resolved's stub, where it is stopped (dockerd on Ubuntu\n\
            22.04, the form every Go program prints):\n\
            Error response from daemon: Get \"https://registry-1.docker.io/v2/\": dial tcp: lookup registry-1.docker.io on 127.0.0.53:53: read udp 127.0.0.1:48086->127.0.0.53:53: read: connection refused\n\
            On the node `getent hosts registry.k8s.io` prints nothing and exits 2.",
        mechanism: "\
            The node resolves through /etc/resolv.conf: glibc (resolv.conf(5): with no nameserver\n\
            line it asks a server on the local machine, 127.0.0.1) and Go's resolver in\n\
            containerd and the kubelet (127.0.0.1:53 and [::1]:53 when it cannot open the file\n\
            or it lists no server; Go net/dnsconfig_unix.go). Unless a DNS server runs on the\n\
            node itself, a missing file, a link to nothing or a file without a nameserver line\n\
            (all high) leaves the node without DNS. A directory there (high) fails every glibc\n\
            lookup whatever runs on the node: glibc opens it, the read fails and it gives up\n\
            (resolv/res_init.c); only Go falls back to 127.0.0.1:53 and [::1]:53. Pods do not\n\
            use /etc/resolv.conf: the kubelet hands them its own resolvConf\n\
            (DNS-KUBELET-RESOLVCONF-MISSING is about that file).\n\
            \n\
            Ubuntu, and Debian with systemd-resolved, link /etc/resolv.conf to\n\
            /run/systemd/resolve/stub-resolv.conf: `nameserver 127.0.0.53`, systemd-resolved's\n\
            stub listener.\n\
            - `systemctl stop systemd-resolved` (a common answer to the CoreDNS loop, or to free\n  \
            port 53) leaves its files in /run: the link still resolves, to an address nothing\n  \
            answers unless another DNS server listens on port 53 on all addresses (on Linux a\n  \
            server bound to 0.0.0.0:53 gets what is sent to 127.0.0.53 too). dnsfix reports a\n  \
            file that lists only 127.0.0.53 / 127.0.0.54 while nothing listens there as high:\n  \
            it reads the kernel's socket table (/proc/net/udp, /proc/net/udp6) for a server on\n  \
            port 53 of that address or of every address; where the table was not read, it\n  \
            goes by whether systemd-resolved is inactive or failed.\n\
            - `DNSStubListener=no` (Kubespray's systemd_resolved_disable_stub_listener, its\n  \
            default on Flatcar) keeps systemd-resolved running but not on 127.0.0.53. From\n  \
            systemd 246 it then links its stub file to its uplink file, so the usual link\n  \
            resolves; a link to the static /usr/lib/systemd/resolv.conf, a copy of the stub\n  \
            file, or an older systemd's stub file still lists 127.0.0.53: high, from the\n  \
            socket table.\n\
            - systemd-resolved with no server to ask (netplan without `nameservers`, or with\n  \
            `use-dns: false` for DHCP, and no DNS= of its own) runs and answers on 127.0.0.53,\n  \
            with a failure for every name. Its uplink file, /run/systemd/resolve/resolv.conf,\n  \
            lists every server it asks, its FallbackDNS= ones where it has no other (Ubuntu and\n  \
            Debian build it with none); in place of them it writes `# No DNS servers known.`,\n  \
            exactly where it knows none. That line, while it listens on the stub, is high. No\n  \
            nameserver line without it is unknown: it leaves out servers on a port other than 53\n  \
            and those of a link that is not a default route (no finding where resolved.conf or a\n  \
            drop-in names one on another port, which it asks). Where the socket table was not\n  \
            read, its running is taken for its listening there, and the summary says so.\n  \
            The kubelet on that file hands pods no server either\n  \
            (DNS-KUBELET-RESOLVCONF-MISSING); k3s and RKE2 from mid-2024 pass it over and give\n  \
            pods 8.8.8.8 (DNS-K3S-FALLBACK).\n\
            - `systemctl disable systemd-resolved` keeps it running until the next boot. /run is\n  \
            a tmpfs: after the reboot the link dangles. dnsfix reports a link into\n  \
            /run/systemd/resolve whose systemd-resolved is disabled or masked (where systemctl\n  \
            is-enabled says nothing: not running) as a warning, before the reboot; likewise a\n  \
            link to the static /usr/lib/systemd/resolv.conf or a copy of the stub file, which\n  \
            stay but which nothing answers once systemd-resolved does not start.\n\
            Where systemctl says nothing about systemd-resolved (no systemctl, or a node not\n\
            booted with systemd), dnsfix goes by the socket table alone, and where that was not\n\
            read either, it cannot tell and says so (unknown). What the table cannot show: a\n\
            redirect of 127.0.0.53:53 elsewhere (iptables, eBPF) answers without a socket there\n\
            (reported high), and a server on every address that refuses recursion, or an\n\
            IPv6-only one on [::]:53, is counted as answering.\n\
            NetworkManager does not repair the link: with rc-manager=symlink it leaves a link\n\
            to another file alone, and with dns= unset it hands DNS to systemd-resolved while\n\
            the link points at one of its files (NetworkManager.conf(5), dns; nm-dns-manager.c\n\
            init_resolv_conf_mode). With dns=systemd-resolved, which Ubuntu's network-manager\n\
            package sets in /usr/lib/NetworkManager/conf.d/10-dns-resolved.conf, it always\n\
            does, and with rc-manager auto (its default since 1.28) it writes no\n\
            /etc/resolv.conf at all.",
        fix: "\
            Where systemd-resolved is enabled but stopped: systemctl start systemd-resolved.\n\
            Where it runs without its stub listener: link /etc/resolv.conf to its uplink file,\n\
            ln -sfn ../run/systemd/resolve/resolv.conf /etc/resolv.conf, or set\n\
            DNSStubListener=yes again (resolved.conf and its drop-ins) and restart it.\n\
            Where it runs but knows no server: give it the real ones, nameservers in netplan\n\
            (then netplan apply), NetworkManager's connection, or a drop-in of its own (each\n\
            <ADDR> a real server's address: as written, the shell refuses the line):\n  \
            mkdir -p /etc/systemd/resolved.conf.d\n  \
            printf '[Resolve]\\nDNS=%s\\n' <ADDR> <ADDR> > /etc/systemd/resolved.conf.d/zz-dnsfix-upstream.conf\n  \
            systemctl restart systemd-resolved\n\
            To run the node without systemd-resolved, replace the link with a file of the\n\
            node's own that lists the real servers (systemd-resolved's last list is in\n\
            /run/systemd/resolve/resolv.conf until the next boot):\n  \
            rm /etc/resolv.conf; printf 'nameserver %s\\n' <ADDR> <ADDR> > /etc/resolv.conf\n\
            Where NetworkManager writes /etc/resolv.conf once the link is gone (its effective\n\
            dns= unset, default or dnsmasq; rc-manager not unmanaged, resolvconf or netconfig),\n\
            remove the link and reload it: it chooses its DNS mode again and writes its own\n\
            file (with rc-manager=file it writes through a link to nothing, into its\n\
            target, so the link goes first):\n  \
            rm /etc/resolv.conf; systemctl reload NetworkManager\n\
            Not with dns=none, nor with dns=systemd-resolved (Ubuntu's\n\
            /usr/lib/NetworkManager/conf.d/10-dns-resolved.conf): there it writes nothing and\n\
            a file of the node's own stays (NetworkManager 1.28 and later; an older one, such\n\
            as Ubuntu 20.04's 1.22, writes nameserver 127.0.0.53 over it: set dns=none in\n\
            /etc/NetworkManager/conf.d/ there). The finding's fix names the file and line that\n\
            set dns= and rc-manager=.\n\
            Or keep systemd-resolved: systemctl enable --now systemd-resolved (unmask it first\n\
            where it is masked).\n\
            No playbook changes the host's resolver: who owns it is the operator's choice, and\n\
            `dnsfix plan` lists the finding as one no playbook fixes.",
        restart: "\
            Nothing: glibc (2.26 and later) and Go read /etc/resolv.conf again when it changes\n\
            (Go checks at most every 5 s), and the kubelet retries failed image pulls with\n\
            back-off.",
        verify: "\
            dnsfix check -i hosts.yaml --limit NODE\n\
            On the node:\n  \
            ls -l /etc/resolv.conf; grep '^nameserver' /etc/resolv.conf\n  \
            systemctl is-active systemd-resolved; systemctl is-enabled systemd-resolved\n  \
            getent hosts registry.k8s.io\n  \
            crictl pull registry.k8s.io/pause:3.10",
        playbook: None,
    },
    RuleInfo {
        id: "DNS-BRIDGE-NF-OFF",
        severity: Severity::Critical,
        title: "bridge-nf-call-iptables is off or br_netfilter not loaded",
        symptom: "\
            DNS from pods fails or times out although CoreDNS is Running and its log is clean,\n\
            and dig or nslookup print (a CoreDNS pod IP answering for the kube-dns service IP):\n\
            ;; reply from unexpected source: 10.233.64.4#53, expected 10.233.0.3#53\n\
            Querying the CoreDNS pod IP directly works; connecting to the service IP times out.\n\
            Only clients on the same node as a CoreDNS pod fail, so it comes and goes as CoreDNS\n\
            is rescheduled. Other Services behave the same: a ClusterIP is unreachable from pods\n\
            on the node that runs its backend.\n\
            Also seen:\n\
            sysctl: cannot stat /proc/sys/net/bridge/bridge-nf-call-iptables: No such file or directory\n\
            Missing br-netfilter module or unset sysctl br-nf-call-iptables, proxy may not work as intended\n\
            [ERROR FileContent--proc-sys-net-bridge-bridge-nf-call-iptables]: /proc/sys/net/bridge/bridge-nf-call-iptables contents are not set to 1\n\
            (the second from kube-proxy at start-up, in iptables and IPVS mode alike, and only\n\
            where the key exists but is not 1: with br_netfilter not loaded it says nothing;\n\
            older releases print it in lower case with a semicolon; the third from kubeadm\n\
            init/join preflight). kube-proxy only reads the key: it sets neither it nor the\n\
            module.",
        mechanism: "\
            Pods on one node that share a Linux bridge (cni0, cbr0, docker0: flannel, the bridge\n\
            CNI plugin, kubenet, k3s's default flannel) talk to each other at layer 2. A lookup\n\
            sent to the kube-dns service IP is DNATed by kube-proxy's rules to a CoreDNS pod IP.\n\
            When that pod sits on the same bridge, its reply is bridged straight back to the\n\
            client. Unless net.bridge.bridge-nf-call-iptables is 1, bridged frames skip iptables\n\
            and conntrack, so the reply is never translated back to the service IP and the\n\
            client drops it: \"reply from unexpected source\". bridge-nf-call-ip6tables does the\n\
            same for IPv6: dnsfix checks the key of each family pod DNS goes by (the\n\
            kubelet's clusterDNS: bridge-nf-call-ip6tables alone on an IPv6-only cluster), and\n\
            bridge-nf-call-ip6tables too on dual-stack inventories.\n\
            \n\
            The net.bridge.* keys exist only while the br_netfilter module is loaded (Linux 3.18\n\
            and later); without it there is nothing to set (rancher-archives/rke#368,\n\
            kubeadm#312, kubernetes#87426). k3s, RKE2, k0s and MicroK8s load the module and set the key\n\
            each time they start, so a 0 there means something reset it later, e.g. a\n\
            `sysctl --system` applying a file that sets 0. While one of them runs no kubelet and\n\
            has not got that far this boot (its unit not active; k0s, whose unit reads active\n\
            while it waits: no kubelet config of its under /run), after a reboot, before it\n\
            started or while it fails, the finding is a warning: it loads the module and sets\n\
            the key when it starts, before its kubelet, and only pods a stopped service left\n\
            running are cut off until then. (MicroK8s never sets bridge-nf-call-ip6tables, so\n\
            on dual-stack it stays critical; with a routed CNI it stays info.)\n\
            \n\
            It matters only where pods sit on a Linux bridge. dnsfix reads the CNI configuration\n\
            in effect (the first file of /etc/cni/net.d by name): with the bridge plugin,\n\
            flannel (which delegates to bridge on cni0) or Weave it is critical; with routed\n\
            veths and no bridge (Calico and Canal, whose pod plugin is calico; Cilium; the AWS\n\
            VPC CNI), an Open vSwitch bridge (Antrea, Kube-OVN, OVN-Kubernetes) or\n\
            macvlan/ipvlan devices (Kubespray's macvlan plugin; the macvlan driver switches\n\
            between pods itself) no frame crosses a Linux bridge, and the finding is info:\n\
            seen, and why it does not matter. The current Kubernetes docs leave the setting\n\
            to the network plugin (website container-runtimes.md). With no CNI configuration\n\
            to read, dnsfix assumes a bridge.\n\
            \n\
            With NodeLocal DNSCache answering pods (every clusterDNS address the kubelet hands\n\
            them is on the nodelocaldns interface: Kubespray's nodelocaldns_ip; the kube-dns\n\
            Service's IP there too counts only outside IPVS mode, where IPVS takes packets for\n\
            it to CoreDNS whoever holds the address), pod DNS does\n\
            not take that path: a pod's query goes to its gateway, the bridge's own address, up\n\
            the node's IP stack to the cache, and the cache's queries to CoreDNS leave from the\n\
            node and are answered to it. The finding is then a warning: DNS works, but any\n\
            other Service is unreachable from pods on this node that run one of its backends.\n\
            Not where br_netfilter is not loaded and the CNI is flannel, which from v0.26 will\n\
            not start without it, or one dnsfix cannot tell (critical).",
        fix: "\
            Now, on the node:\n  \
            modprobe br_netfilter\n  \
            sysctl -w net.bridge.bridge-nf-call-iptables=1 net.bridge.bridge-nf-call-ip6tables=1\n\
            Then make it survive a reboot (DNS-BRIDGE-NF-NOT-PERSISTENT): br_netfilter in\n\
            /etc/modules-load.d/, the keys in /etc/sysctl.d/.\n\
            - Kubespray: re-running cluster.yml loads the module, writes\n  \
            /etc/modules-load.d/kubespray-br_netfilter.conf and sets the keys in\n  \
            sysctl_file_path.\n\
            - kubeadm: the prerequisites from the container-runtime docs:\n  \
            /etc/modules-load.d/k8s.conf (overlay, br_netfilter) and /etc/sysctl.d/k8s.conf.\n\
            - k3s / RKE2 / k0s / MicroK8s: restarting the service sets it again; find what\n  \
            resets it (the evidence names a sysctl file that sets 0, when there is one).\n\
            \n\
            `dnsfix plan -i hosts.yaml --limit NODE` shows the exact change.",
        restart: "\
            Nothing. The setting applies to the next packet, so lookups work at once. kubelet,\n\
            kube-proxy and the pods need no restart.",
        verify: "\
            On the node:\n  \
            lsmod | grep br_netfilter\n  \
            sysctl net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables\n\
            From a pod on a node that runs CoreDNS (the case that fails):\n  \
            kubectl -n kube-system get pod -l 'k8s-app in (kube-dns,kube-dns-secondary,coredns)' -o wide\n  \
            kubectl run -it --rm dnstest --image=busybox:1.36 --restart=Never \\\n    \
            --overrides='{\"apiVersion\":\"v1\",\"spec\":{\"nodeName\":\"NODE\"}}' \\\n    \
            -- nslookup kubernetes.default\n\
            dnsfix check -i hosts.yaml --limit NODE",
        playbook: Some("bridge-netfilter"),
    },
    RuleInfo {
        id: "DNS-BRIDGE-NF-NOT-PERSISTENT",
        severity: Severity::High,
        title: "br_netfilter / bridge-nf-call-iptables not set at boot",
        symptom: "\
            Nothing is wrong yet. After the next reboot pods on this node show the\n\
            DNS-BRIDGE-NF-OFF symptoms: `;; reply from unexpected source: ...` and Service\n\
            timeouts. One incident report: \"I did it before, it was working and for some\n\
            reason it changed back to 0 again after a while.\"\n\
            The boot log of systemd-sysctl shows the keys were skipped because the module was\n\
            not loaded yet:\n\
            Couldn't write '1' to 'net/bridge/bridge-nf-call-iptables', ignoring: No such file or directory\n\
            Couldn't write '1' to 'net/bridge/bridge-nf-call-ip6tables', ignoring: No such file or directory",
        mechanism: "\
            The live values are right because someone ran modprobe and sysctl -w by hand, or\n\
            because k3s, kube-proxy or the container runtime loaded br_netfilter after boot.\n\
            Nothing on disk makes it so at boot:\n\
            - br_netfilter is in no modules-load.d file (/etc/modules-load.d/*.conf, or\n  \
            /etc/modules on Debian, nor modules_load= on the kernel command line), so after a\n  \
            reboot nothing loads it early and the net.bridge.* keys do not exist; or\n\
            - a deny-list stops it although a file lists it: `blacklist br_netfilter` in a\n  \
            modprobe.d file (systemd-modules-load applies kmod's blacklist: \"Module\n  \
            'br_netfilter' is deny-listed (by kmod)\"; a plain `modprobe br_netfilter` does\n  \
            not, which is how it got loaded), `install br_netfilter /bin/false` (or for\n  \
            bridge, which it needs: the DISA STIG's GEN003619), or the kernel's\n  \
            module_blacklist=. dnsfix names the line and does not edit it: removing it is\n  \
            the owner's decision; or\n\
            - the sysctl file that wins sets a key to 0. Without one, a key is what\n  \
            br_netfilter sets when it loads: 1 (br_netfilter_sysctl_default in the kernel's\n  \
            net/bridge/br_netfilter_hooks.c), so a module loaded at boot is enough. systemd-sysctl\n  \
            applies the files of /etc/sysctl.d, /run/sysctl.d and /usr/lib/sysctl.d in the\n  \
            order of their names, and the last assignment of a key wins (sysctl.d(5)); on\n  \
            Debian 12, Ubuntu and RHEL /etc/sysctl.conf is read through the 99-sysctl.conf\n  \
            symlink. Debian 13 ships neither (procps 2:4.0.4-9 removes /etc/sysctl.conf on\n  \
            upgrade, a changed one kept as /etc/sysctl.conf.dpkg-bak), and systemd-sysctl\n  \
            does not read /etc/sysctl.conf without that link: a setting there is not applied\n  \
            at boot.\n\
            \n\
            systemd-sysctl runs early in boot. If br_netfilter is loaded after it ran, it logs\n\
            \"Couldn't write ... ignoring: No such file or directory\" and your sysctl.d setting\n\
            is never applied; the value is then the module's own 1 or whatever whoever\n\
            loads it sets (sysctl.d(5); fedora-sysv/initscripts#111, seapath/ansible#934).\n\
            systemd-modules-load runs before systemd-sysctl, which is why listing the module\n\
            there makes the sysctl file take effect.\n\
            \n\
            dnsfix says this only of a setting that is on now; one that is off already is\n\
            DNS-BRIDGE-NF-OFF, whose fix persists it too. Where the CNI wires pods without a\n\
            bridge (see DNS-BRIDGE-NF-OFF) the rule does not apply. Where pods ask NodeLocal\n\
            DNSCache on the node, the finding is a warning, as DNS-BRIDGE-NF-OFF will be after\n\
            the reboot; high again where nothing loads br_netfilter at boot and the CNI is\n\
            flannel, which from v0.26 will not start without it, or one dnsfix cannot tell.\n\
            \n\
            k3s, RKE2, k0s and MicroK8s load br_netfilter and set bridge-nf-call-iptables to 1\n\
            each time they start (ip6tables too: k0s always, k3s and RKE2 only where IPv6 is\n\
            on, MicroK8s never), so a reboot cannot undo them. (k0s before 1.29.14, 1.30.10,\n\
            1.31.6 and 1.32.2 never ran its modprobe, k0sproject/k0s#5579: where the kubelet's\n\
            version says so, dnsfix does not count on it to load br_netfilter.) So do two\n\
            network agents whenever they start: kube-router (iptables, and ip6tables on a node\n\
            with IPv6) and Weave's init container (iptables; it loads br_netfilter with its\n\
            network policy controller only, which loads xt_set beside it).\n\
            What can is a sysctl file that sets 0: the boot applies it before the service\n\
            starts, and nothing shows, but any later `sysctl --system` or\n\
            `systemctl restart systemd-sysctl` (by hand, or from a package: Debian 13's systemd\n\
            restarts systemd-sysctl whenever a package changes /usr/lib/sysctl.d) applies it\n\
            again under the running service, and bridged pods lose DNS until the\n\
            service restarts (k3s-io/k3s#7671). CentOS 7 ships such a file:\n\
            /usr/lib/sysctl.d/00-system.conf (initscripts) sets all three keys to 0, and RHEL's\n\
            systemd runs systemd-sysctl for net/bridge again when the bridge module loads\n\
            (rules/40-redhat.rules). On these nodes the finding is a warning that names the\n\
            file and line: nothing is wrong now, and a reboot does not break it.",
        fix: "\
            Persist both halves:\n  \
            echo br_netfilter > /etc/modules-load.d/k8s.conf\n  \
            printf '%s\\n' 'net.bridge.bridge-nf-call-iptables = 1' \\\n    \
            'net.bridge.bridge-nf-call-ip6tables = 1' > /etc/sysctl.d/k8s.conf\n\
            The sysctl file must sort after any file that sets these keys to 0 (k8s.conf sorts\n\
            after 99-*.conf), or remove that setting.\n\
            - Kubespray: re-run cluster.yml. It writes\n  \
            /etc/modules-load.d/kubespray-br_netfilter.conf and sets the keys in\n  \
            sysctl_file_path (/etc/sysctl.d/99-sysctl.conf, or /etc/sysctl.conf when that is a\n  \
            symlink to it), but only when the module was loaded during the run.\n\
            - kubeadm: the two files above, as in the container-runtime install docs.\n\
            - k3s / RKE2 / k0s / MicroK8s set the keys each time they start; what needs\n  \
            fixing is the file that sets 0: a sysctl.d file applied after it that sets 1, or\n  \
            that line changed (dnsfix does the first, and the second where the file is in\n  \
            /etc and applied after its own).\n\
            \n\
            `dnsfix plan -i hosts.yaml --limit NODE` shows the exact files it would write.",
        restart: "\
            Nothing now: the live values are already right. The proof is the next boot; the\n\
            Verify commands show what boot will apply without rebooting.",
        verify: "\
            What boot will apply:\n  \
            systemd-analyze cat-config modules-load.d | grep -n br_netfilter\n  \
            systemd-analyze cat-config sysctl.d | grep -n bridge-nf-call\n\
            Whether the last boot skipped the keys:\n  \
            journalctl -b -u systemd-sysctl | grep \"Couldn't write\"\n\
            After the next reboot:\n  \
            sysctl net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables\n  \
            dnsfix check -i hosts.yaml --limit NODE",
        playbook: Some("bridge-netfilter"),
    },
    RuleInfo {
        id: "DNS-IP-FORWARD",
        severity: Severity::Critical,
        title: "Packet forwarding (IPv4, or IPv6 for IPv6 pod DNS) is off, or not persisted",
        symptom: "\
            Pods on this node reach nothing outside the node: lookups to CoreDNS on other nodes\n\
            time out (`;; connection timed out; no servers could be reached`), CoreDNS on this\n\
            node cannot reach its upstreams or the API server, and stays unready with\n\
            [INFO] plugin/ready: Still waiting on: \"kubernetes\"\n\
            kubeadm init/join preflight stops with:\n\
            [ERROR FileContent--proc-sys-net-ipv4-ip_forward]: /proc/sys/net/ipv4/ip_forward contents are not set to 1\n\
            When it is only not persisted, nothing is wrong until the next reboot.",
        mechanism: "\
            The node routes pod traffic between the pod interfaces (veth, bridge, tunnel) and\n\
            the network, and Linux does that only with net.ipv4.ip_forward=1\n\
            (net.ipv6.conf.all.forwarding=1 for IPv6). With it off, packets from pods to\n\
            anything off the node are dropped: other nodes' pods, Services whose endpoints run\n\
            elsewhere, CoreDNS's upstream resolvers.\n\
            \n\
            Docker, k3s, RKE2, k0s, MicroK8s (with its CNI manifest) and some CNIs set it when\n\
            they start (the AWS VPC CNI IPv6's only, in an IPv6 cluster or with IPv6 egress;\n\
            k3s and RKE2 log\n\
            \"Set sysctl 'net/ipv4/conf/all/forwarding' to 1\"), which hides a missing persistent\n\
            setting. It goes back to 0 when a later `sysctl --system` applies a file that sets\n\
            0 (CIS-style hardening baselines do), or after a reboot where nothing sets it.\n\
            Kubespray writes net.ipv4.ip_forward=1 into sysctl_file_path (with ipv4_stack,\n\
            the default), and net.ipv6.conf.all.forwarding=1 with ipv6_stack.\n\
            \n\
            Severity: critical when the live value is 0; reported as high when it is 1 now but\n\
            no sysctl file sets it (or the winning file sets 0), so it reverts at the next boot.\n\
            A warning when it is 0 while k3s, RKE2, k0s or MicroK8s (with its CNI manifest) runs\n\
            no kubelet and has not got that far this boot (as DNS-BRIDGE-NF-OFF says): it\n\
            turns forwarding on when it starts, before its kubelet; until then only pods a\n\
            stopped service left running (their units have KillMode=process) are cut off.\n\
            Where one of them runs, a reboot cannot leave forwarding off, so \"not persisted\"\n\
            does not apply; a sysctl file that sets 0 is a warning (the next\n\
            `sysctl --system` turns forwarding off under the running service), and names the\n\
            file when forwarding is off now. kube-proxy in IPVS mode (its ConfigMap, else the\n\
            inventory's kube_proxy_mode, Kubespray's default) sets it to 1 whenever it starts\n\
            (pkg/proxy/ipvs proxier; IPv4 only), the CNI bridge plugin as the pods' gateway\n\
            (isGateway; flannel's default delegate) and the ptp plugin (kind's kindnet) for every\n\
            pod they add, and the node agents\n\
            of Calico and Canal (felix, unless FelixConfiguration sets ipForwarding:\n\
            Disabled), Cilium, Antrea (from 1.15) and Kube-OVN whenever they start:\n\
            forwarding no file sets is not reported there, and a file that sets 0 is a\n\
            warning (the boot applies it before they turn forwarding on again; a later\n\
            `sysctl --system` turns it off under them).\n\
            \n\
            The family checked is the one pod DNS goes by: the kubelet's first clusterDNS\n\
            server's (a dual-stack cluster's kube-dns Service has the family of its first\n\
            service range), and IPv4 too unless the cluster is IPv6 only (clusterDNS lists\n\
            only IPv6 servers, or the Kubespray inventory sets ipv4_stack: false, where\n\
            Kubespray sets no net.ipv4.ip_forward). Turning IPv6 forwarding on makes the\n\
            kernel ignore router advertisements on interfaces whose accept_ra is not 2.",
        fix: "\
            Now:\n  \
            sysctl -w net.ipv4.ip_forward=1\n  \
            sysctl -w net.ipv6.conf.all.forwarding=1     # where pod DNS goes over IPv6\n\
            (A node that takes its IPv6 address or default route from router advertisements\n\
            needs net.ipv6.conf.<uplink>.accept_ra=2 first.)\n\
            Persist it in a file under /etc/sysctl.d/ that sorts after any file setting 0, or\n\
            remove that setting (the grep in Verify finds it).\n\
            - Kubespray: re-run cluster.yml; it sets the key in sysctl_file_path.\n\
            - kubeadm: net.ipv4.ip_forward = 1 in /etc/sysctl.d/k8s.conf (container-runtime\n  \
            docs).\n\
            - k3s / RKE2 / k0s / MicroK8s set it at each start; a 0 later means something\n  \
            reset it, most often a `sysctl --system` applying a file that sets 0.\n\
            If a hardening baseline sets 0 on purpose, exempt Kubernetes nodes from that rule:\n\
            a node cannot route pod traffic without it.\n\
            \n\
            `dnsfix plan -i hosts.yaml --limit NODE` shows the exact change.",
        restart: "\
            Nothing. Forwarding starts with the next packet; CoreDNS becomes ready on its own.\n\
            No kubelet, kube-proxy or pod restart.",
        verify: "\
            sysctl net.ipv4.ip_forward net.ipv6.conf.all.forwarding\n\
            systemd-analyze cat-config sysctl.d | grep -n -e ip_forward -e conf.all.forwarding\n\
            grep -rn -e ip_forward -e conf.all.forwarding /etc/sysctl.conf /etc/sysctl.d /run/sysctl.d /usr/lib/sysctl.d\n\
            kubectl run -it --rm dnstest --image=busybox:1.36 --restart=Never \\\n  \
            --overrides='{\"apiVersion\":\"v1\",\"spec\":{\"nodeName\":\"NODE\"}}' -- nslookup example.com\n\
            dnsfix check -i hosts.yaml --limit NODE",
        playbook: Some("bridge-netfilter"),
    },
    RuleInfo {
        id: "DNS-NAMESERVER-LIMIT",
        severity: Severity::Warning,
        title: "More than 3 nameservers: kubelet drops the rest",
        symptom: "\
            Events with reason DNSConfigForming on pods of this node, repeated on every sync\n\
            (`kubectl describe pod`, `kubectl get events`):\n\
            Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 10.0.0.2 10.0.0.3 10.0.0.4\n\
            They flood the event stream, and the servers after the third are never used by\n\
            CoreDNS, nodelocaldns or any other dnsPolicy: Default pod, so the fallback you\n\
            think you have is not there.",
        mechanism: "\
            kubelet passes at most three nameservers to a pod (MaxDNSNameservers = 3, the glibc\n\
            limit): it keeps the first three of its resolvConf file, in file order, and records\n\
            DNSConfigForming on each pod whose list it cut (kubelet\n\
            pkg/kubelet/network/dns/dns.go). ClusterFirst pods get only clusterDNS and are not\n\
            affected; dnsPolicy: Default pods and hostNetwork pods are.\n\
            \n\
            Long lists come from systemd-resolved's /run/systemd/resolve/resolv.conf, which\n\
            lists the servers of every link (several NICs, IPv4 plus IPv6 from router\n\
            advertisements), from DHCP on several interfaces, and from Kubespray's\n\
            host_resolvconf, which stacks the cluster address, `nameservers`, `cloud_resolver`\n\
            and the servers already in /etc/resolv.conf.",
        fix: "\
            Keep three or fewer servers, the ones you want, in the file kubelet reads:\n\
            - trim the source: netplan `nameservers:`, a resolved DNS= drop-in, NetworkManager\n  \
            ipv4.dns / ipv4.ignore-auto-dns on secondary interfaces, dhclient supersede; or\n\
            - point resolvConf at a dedicated file with at most three real upstream servers.\n\
            - Kubespray, where /etc/resolv.conf is a plain file or NetworkManager's: shorten\n  \
            `nameservers` and `cloud_resolver`, and set `disable_host_nameservers: true` so it\n  \
            stops carrying over the servers already in /etc/resolv.conf. `upstream_dns_servers`\n  \
            is not among them: shortening it only takes servers from CoreDNS and nodelocaldns.\n  \
            Where it is systemd-resolved's, Kubespray puts all three only into FallbackDNS,\n  \
            which no resolv.conf lists: the servers there are resolved's DNS= lines and the\n  \
            links' (shorten those as above).\n\
            \n\
            `dnsfix plan -i hosts.yaml --limit NODE` shows the exact change.",
        restart: "\
            New pods get the shorter list at once: kubelet reads the file's content for every\n\
            pod. Recreate the CoreDNS and nodelocaldns pods to use it now:\n  \
            kubectl -n kube-system delete pod -l 'k8s-app in (kube-dns,kube-dns-secondary,coredns,node-local-dns,node-local-dns-second)' \\\n    \
            --field-selector spec.nodeName=NODE\n\
            Restart kubelet only if you changed the resolvConf path.",
        verify: "\
            grep -c '^nameserver' <the resolvConf path>        # 3 or fewer\n\
            kubectl get events -A --field-selector reason=DNSConfigForming\n\
            (old events expire after the API server's --event-ttl, one hour by default)\n\
            dnsfix check -i hosts.yaml --limit NODE",
        playbook: None,
    },
    RuleInfo {
        id: "DNS-SEARCH-LIMIT",
        severity: Severity::Warning,
        title: "Host search list over kubelet's limits, or musl's: pods get it cut",
        symptom: "\
            Node events, reason CheckLimitsForResolvConf:\n\
            Resolv.conf file '/etc/resolv.conf' contains search line consisting of more than 3 domains!\n\
            Resolv.conf file '/etc/resolv.conf' contains search line which length is more than allowed 256 chars!\n\
            Resolv.conf file \"/etc/resolv.conf\" contains a search path which length is more than allowed 253 chars!\n\
            (Kubernetes 1.28 and later print 29 domains and 2048 chars.) Pod events, reason\n\
            DNSConfigForming:\n\
            Search Line limits were exceeded, some search paths have been omitted, the applied search line is: default.svc.cluster.local svc.cluster.local cluster.local corp.example.com\n\
            Short names that relied on a dropped domain stop resolving inside pods while they\n\
            still resolve on the node.",
        mechanism: "\
            For ClusterFirst pods kubelet builds the search list <namespace>.svc.<domain>\n\
            svc.<domain> <domain>, then the host's search domains from its resolvConf file, and\n\
            cuts it to the limit from the end, so your own domains go first (kubelet\n\
            pkg/kubelet/network/dns/dns.go):\n\
            - legacy limits: 6 domains and 256 characters; the cluster takes 3, so 3 host\n  \
            domains fit.\n\
            - expanded limits (KEP-2595, Kubernetes 1.28 and later, or earlier with the\n  \
            ExpandedDNSConfig feature gate): 32 domains and 2048 characters, so 29 host\n  \
            domains.\n\
            - any single domain longer than 253 characters is dropped.\n\
            kubelet removes duplicates before it counts (omitDuplicates), so a host list that\n\
            repeats the cluster's own domains, as Kubespray's does, costs nothing; dnsfix\n\
            counts the same way. kubelet also checks its resolvConf file and raises the\n\
            CheckLimitsForResolvConf events on the node. dnsfix applies the expanded limits\n\
            (on by default since 1.26, GA in 1.28) when the node's kubelet is 1.26 or later:\n\
            `kubelet --version` where dnsfix asks the node (`dnsfix facts`, after apply, no\n\
            cluster to read, or no version there for this node), else the version the\n\
            running kubelet reports to the cluster (its Node's status.nodeInfo.kubeletVersion),\n\
            else the inventory's kube_version; it says so when the version is unknown and it\n\
            assumes the legacy ones.\n\
            \n\
            Old pod images cap the list themselves: glibc before 2.26 (CentOS 7 based images)\n\
            at 6 domains / 256 chars, and older containerd at 6 (containerd#5877), so a list\n\
            kubelet accepts can still be cut inside the pod. musl (Alpine images) reads\n\
            resolv.conf a line at a time into 256 bytes and skips a longer line whole\n\
            (src/network/resolvconf.c): a pod's `search` line of 255 characters or more,\n\
            which kubelet's expanded limits allow, leaves Alpine pods without any search\n\
            domain, the cluster's own included. The namespace's name is part of the line, so\n\
            dnsfix says from which length of it that happens. Kubespray's host_resolvconf adds\n\
            default.svc.<dns_domain> and svc.<dns_domain> to the node's list; they count too.",
        fix: "\
            Shorten the node's search list to what pods need, in the component that owns it:\n\
            netplan `search:`, resolved `Domains=`, NetworkManager ipv4.dns-search, dhclient\n\
            `supersede domain-search`, and stop DHCP or router advertisements from adding\n\
            domains (DNS-STRAY-SEARCH). Or give kubelet a dedicated file with a short list.\n\
            - Kubespray: `searchdomains` in group_vars; `remove_default_searchdomains: true`\n  \
            leaves default.svc/svc.<dns_domain> out of the node's list where `searchdomains`\n  \
            is not empty (with an empty one Kubespray keeps them: preinstall 0020-set_facts).\n\
            Workloads that need more domains can set dnsConfig.searches per pod (same limits)\n\
            or use fully qualified names.\n\
            \n\
            `dnsfix plan -i hosts.yaml --limit NODE` shows the exact change.",
        restart: "\
            New pods get the new list at once: kubelet reads the file's content for every pod.\n\
            Existing pods keep the search line they were created with; recreate those that need\n\
            a dropped domain. Restart kubelet only if you changed the resolvConf path.",
        verify: "\
            grep '^search' /run/systemd/resolve/resolv.conf /etc/resolv.conf\n\
            kubectl get events -A --field-selector reason=CheckLimitsForResolvConf\n\
            kubectl get events -A --field-selector reason=DNSConfigForming\n\
            kubectl run -it --rm dnstest --image=busybox:1.36 --restart=Never -- cat /etc/resolv.conf\n\
            dnsfix check -i hosts.yaml --limit NODE",
        playbook: None,
    },
    RuleInfo {
        id: "DNS-STRAY-SEARCH",
        severity: Severity::Warning,
        title: "Host search domains leak into every pod (e.g. openstacklocal)",
        symptom: "\
            A pod's /etc/resolv.conf ends with a domain nobody in the cluster asked for (from an\n\
            incident, k3s on OpenStack):\n\
            nameserver 10.43.0.10\n\
            search minio-tenant1.svc.cluster.local svc.cluster.local cluster.local openstacklocal\n\
            options ndots:5\n\
            CoreDNS logs names with that suffix going upstream and timing out:\n\
            [ERROR] plugin/errors: 2 kubernetes.default.svc.cluster.local.openstacklocal. A: read udp 10.42.0.64:36643->114.114.114.114:53: i/o timeout\n\
            Even a full cluster name failed while the short one worked:\n\
            ping: bad address 'kubernetes.default.svc.cluster.local'\n\
            Outside names resolve slowly or time out, and your upstream resolvers see queries\n\
            such as api.github.com.openstacklocal. Deleting the domain from /etc/resolv.conf\n\
            helps until the next DHCP renewal or reboot (kubespray#1951).",
        mechanism: "\
            For ClusterFirst pods kubelet appends the host's search domains (from its resolvConf\n\
            file) after <ns>.svc.<domain> svc.<domain> <domain>, and sets options ndots:5\n\
            (kubelet pkg/kubelet/network/dns/dns.go). A name with fewer than 5 dots is tried\n\
            with every search suffix before it is tried as is. CoreDNS answers the cluster\n\
            suffixes itself; a stray suffix is outside the cluster zone, so CoreDNS forwards it\n\
            upstream. Each lookup then costs one more round trip and leaks a query to the\n\
            outside resolver, and if the upstream drops such queries the timeout fails the\n\
            whole lookup (musl-based images such as Alpine and busybox give up at the first\n\
            error instead of trying the next name).\n\
            \n\
            Stray domains come from DHCP (domain-name / domain-search; OpenStack hands out\n\
            openstacklocal), IPv6 router advertisements (DNSSL), cloud-init/netplan, or an old\n\
            hand edit (akash-network/support#80). dnsfix expects the cluster domain and its\n\
            subdomains and the inventory's `searchdomains`; anything else is reported:\n\
            - info for a domain every node shares and that fits kubelet's limits, typically a\n  \
            corporate domain pods are meant to use: declare it in `searchdomains` to silence it;\n\
            - warning for known stray sources (openstacklocal, localdomain, home-router domains\n  \
            such as lan or home), for a domain that differs node to node (each node's DHCP\n  \
            pushing its own, e.g. cloud suffixes such as <region>.compute.internal across\n  \
            regions), or when it pushes the list over kubelet's limits. A cloud DHCP suffix\n  \
            that every node shares is info.",
        fix: "\
            Stop the source; editing the node's resolv.conf does not last:\n\
            - netplan (Ubuntu, cloud-init): `dhcp4-overrides: {use-domains: false}` (and\n  \
            dhcp6-overrides) on the interface; `accept-ra: false` if the domains come from\n  \
            router advertisements (that also stops RA addresses and routes: check first).\n\
            - dhclient: `supersede domain-search \"your.domain\";` in /etc/dhcp/dhclient.conf.\n\
            - NetworkManager: nmcli connection modify CONN ipv4.ignore-auto-dns yes\n  \
            ipv4.dns-search '<your domains>' ipv4.dns '<servers>' (ignoring DHCP DNS drops\n  \
            its servers too, so list them; ipv4.dns-search alone only adds domains).\n\
            - Kubespray: list the domains you do want in `searchdomains`; dnsfix treats them\n  \
            as intended.\n\
            - Or point kubelet's resolvConf at a dedicated file without them.\n\
            A workload that must live with it can lower ndots with dnsConfig.options\n\
            (name: ndots, value: \"2\") or use fully qualified names with a trailing dot.\n\
            \n\
            `dnsfix plan -i hosts.yaml --limit NODE` shows the exact change.",
        restart: "\
            Apply the network change (netplan apply, nmcli connection up CONN, or renew the\n\
            DHCP lease; this can blip the link, so do one node at a time) and check the node's\n\
            file. kubelet reads the file for every new pod, so it needs no restart unless you\n\
            changed the path. Existing pods keep their search line until they are recreated;\n\
            roll them when convenient. CoreDNS and nodelocaldns need nothing.",
        verify: "\
            grep '^search' /run/systemd/resolve/resolv.conf /etc/resolv.conf\n\
            resolvectl domain\n\
            kubectl run -it --rm dnstest --image=busybox:1.36 --restart=Never -- cat /etc/resolv.conf\n\
            dnsfix check -i hosts.yaml --limit NODE      # again after a lease renewal or reboot",
        playbook: Some("kubelet-resolvconf"),
    },
    RuleInfo {
        id: "DNS-NODELOCAL-CLUSTERDNS",
        severity: Severity::Critical,
        title: "clusterDNS misses nodelocaldns: nothing answers it, or pods skip the cache",
        symptom: "\
            `ip addr show nodelocaldns` lists 169.254.25.10, yet pods on this node have\n\
            `nameserver 10.233.0.3` (the kube-dns service IP) in /etc/resolv.conf. DNS works\n\
            but skips the cache: the intermittent 5-second lookup delays that NodeLocal\n\
            DNSCache was deployed to remove (the conntrack race on parallel A/AAAA queries,\n\
            kubernetes#56903) are still there, CoreDNS carries the whole load, and nodelocaldns\n\
            sees no queries from this node's pods.\n\
            If clusterDNS names a link-local address that is not on the interface\n\
            (169.254.20.10, the upstream default, against Kubespray's 169.254.25.10), every\n\
            lookup from ClusterFirst pods on the node fails instead:\n\
            ;; connection timed out; no servers could be reached",
        mechanism: "\
            NodeLocal DNSCache runs a cache on every node (a hostNetwork DaemonSet) listening on\n\
            the addresses it is given (-localip), which it puts on a dummy interface named\n\
            nodelocaldns and exempts from conntrack (NOTRACK). The upstream manifest for\n\
            kube-proxy in iptables mode gives it the link-local address and the kube-dns\n\
            service IP, so pods still configured with the service IP reach the cache. In IPVS\n\
            mode the service IP belongs to kube-ipvs0 and IPVS, so the cache takes only the\n\
            link-local address (website nodelocaldns.md), and Kubespray gives it only\n\
            nodelocaldns_ip in every mode (nodelocaldns-daemonset.yml.j2): there pods reach it\n\
            only if kubelet's clusterDNS is that address. dnsfix goes by the interface: where it\n\
            holds clusterDNS's first server, pods reach the cache (they ask the servers in\n\
            order: a cache address after the service's is asked only where that one fails).\n\
            \n\
            Kubespray sets clusterDNS to nodelocaldns_ip whenever enable_nodelocaldns is true,\n\
            so a mismatch there means the node's kubelet config was written by another run or\n\
            edited by hand (compare DNS-FLEET-DRIFT). kubeadm keeps the kube-dns service IP\n\
            (10.96.0.10) until you change it after installing nodelocaldns.\n\
            \n\
            Severity: critical where clusterDNS is a link-local address (169.254.x.y, the cloud\n\
            endpoints 169.254.169.x aside) that the nodelocaldns interface does not hold, in\n\
            any kube-proxy mode: nothing on the node answers it (high where clusterDNS lists\n\
            another server after it: each lookup waits out the first one's timeout). The same\n\
            on a Kubespray node whose clusterDNS is its nodelocaldns_ip and which has no\n\
            nodelocaldns interface: node-cache takes its interface down when it is stopped\n\
            (cmd/node-cache TeardownNetworking, on SIGTERM), so a cache that was evicted,\n\
            deleted or never scheduled leaves none. (One that crashed, was killed or runs with\n\
            -skipteardown, as Kubespray's do with enable_nodelocaldns_secondary, leaves the\n\
            interface behind: DNS-NODELOCAL-DOWN, from the node's socket table and the\n\
            cluster's pods.) With Cilium as the CNI a Local Redirect Policy can serve the\n\
            address without an interface: unknown. Other link-local clusterDNS addresses with\n\
            no nodelocaldns interface (AKS LocalDNS answers 169.254.10.11 on its own\n\
            `localdns` interface) are not reported. A warning where clusterDNS is an address\n\
            the interface does not hold, such as the service IP beside Kubespray's cache or\n\
            the upstream one in IPVS mode: DNS works, without the cache.",
        fix: "\
            Set kubelet's clusterDNS to the address on the nodelocaldns interface (Kubespray:\n\
            169.254.25.10):\n\
            - Kubespray: clusterDNS in /etc/kubernetes/kubelet-config.yaml; in the inventory\n  \
            enable_nodelocaldns: true and nodelocaldns_ip matching the DaemonSet, then re-run\n  \
            cluster.yml.\n\
            - kubeadm: clusterDNS in /var/lib/kubelet/config.yaml AND in ConfigMap\n  \
            kube-system/kubelet-config, or kubeadm upgrade/join writes the service IP back.\n\
            - k3s / RKE2: `kubelet-arg: [\"cluster-dns=<nodelocal IP>\"]` in\n  \
            /etc/rancher/{k3s,rke2}/config.yaml on each node.\n\
            If you do not want the cache, remove the nodelocaldns DaemonSet instead and keep\n\
            clusterDNS on the service IP.\n\
            \n\
            `dnsfix plan -i hosts.yaml --limit NODE` shows the exact change.",
        restart: "\
            Restart kubelet (clusterDNS is read at start). Then pods on the node must be\n\
            recreated to get the new nameserver, because their resolv.conf was written at\n\
            creation: drain and uncordon the node, or roll the workloads running there\n\
            (DaemonSet pods are not moved by a drain; delete them to recreate them).\n\
            CoreDNS and nodelocaldns need nothing: they use dnsPolicy: Default.",
        verify: "\
            ip -4 addr show nodelocaldns\n\
            kubectl -n kube-system get configmap kube-proxy -o yaml | grep 'mode:'\n\
            kubectl get --raw /api/v1/nodes/NODE/proxy/configz | jq .kubeletconfig.clusterDNS\n\
            kubectl run -it --rm dnstest --image=busybox:1.36 --restart=Never \\\n  \
            --overrides='{\"apiVersion\":\"v1\",\"spec\":{\"nodeName\":\"NODE\"}}' -- cat /etc/resolv.conf\n\
            dnsfix check -i hosts.yaml --limit NODE",
        playbook: Some("nodelocaldns-clusterdns"),
    },
    RuleInfo {
        id: "DNS-KUBELET-FLAG-SHADOW",
        severity: Severity::Warning,
        title: "A kubelet flag overrides resolvConf/clusterDNS in the config file",
        symptom: "\
            You set resolvConf (or clusterDNS) in the kubelet config file, restarted kubelet,\n\
            recreated the CoreDNS pods, and nothing changed: the loop is still there\n\
            (coredns#2790, coredns#3700). The kubelet command line still carries the old value,\n\
            e.g. --resolv-conf=/etc/resolv.conf, and kubelet logs at start:\n\
            Flag --resolv-conf has been deprecated, This parameter should be set via the config file specified by the Kubelet's --config flag. See https://kubernetes.io/docs/tasks/administer-cluster/kubelet-config-file/ for more information.",
        mechanism: "\
            kubelet takes a setting from its command line before its --config file: a flag wins\n\
            over the same field in the file (website kubelet-config-file.md). The command line\n\
            is assembled from several files, and the last copy of a flag wins:\n\
            - kubeadm: KUBELET_KUBEADM_ARGS in /var/lib/kubelet/kubeadm-flags.env, and\n  \
            KUBELET_EXTRA_ARGS from /etc/default/kubelet (deb) or /etc/sysconfig/kubelet (rpm),\n  \
            both read by the 10-kubeadm.conf drop-in.\n\
            - Kubespray: KUBELET_ARGS in /etc/kubernetes/kubelet.env, which includes the\n  \
            inventory's kubelet_custom_flags.\n\
            - any other drop-in under /etc/systemd/system/kubelet.service.d/.\n\
            \n\
            kubeadm 1.11 to 1.18 wrote --resolv-conf=/run/systemd/resolve/resolv.conf into\n\
            kubeadm-flags.env whenever systemd-resolved was active (kubernetes#64665);\n\
            kubernetes#90394 moved it to KubeletConfiguration.resolvConf. On a node set up by\n\
            one of those versions, or with a flag added by hand, the flag keeps overriding the\n\
            config file, so a fix made only in the file seems to do nothing. kubeadm's own flag\n\
            (exactly --resolv-conf=/run/systemd/resolve/resolv.conf in kubeadm-flags.env) is\n\
            right and kubeadm manages that file, so dnsfix reports it as info and leaves it;\n\
            any other shadowing flag is a warning.\n\
            \n\
            k3s and RKE2 always pass --resolv-conf as a flag, from `resolv-conf:` or\n\
            `kubelet-arg:` in their config.yaml, so the deprecation line alone is normal there.",
        fix: "\
            Keep each setting in one place, the config file, and remove the flag:\n\
            - kubeadm: delete --resolv-conf / --cluster-dns from KUBELET_KUBEADM_ARGS in\n  \
            /var/lib/kubelet/kubeadm-flags.env and from KUBELET_EXTRA_ARGS; keep resolvConf /\n  \
            clusterDNS in /var/lib/kubelet/config.yaml and ConfigMap kube-system/kubelet-config.\n\
            - Kubespray: remove it from kubelet_custom_flags in the inventory and from\n  \
            /etc/kubernetes/kubelet.env; set kube_resolv_conf instead.\n\
            - k3s / RKE2: keep `resolv-conf:` and drop `resolv-conf=` from `kubelet-arg:` (or\n  \
            the reverse) in /etc/rancher/{k3s,rke2}/config.yaml.\n\
            If the flag held the right value, move that value into the config file first.\n\
            \n\
            `dnsfix plan -i hosts.yaml --limit NODE` shows the exact change.",
        restart: "\
            Restart kubelet: flags are read only at start (run systemctl daemon-reload first if\n\
            you edited a unit or drop-in; env files need only the restart). Then recreate the\n\
            pods that depend on the setting: CoreDNS and nodelocaldns for resolvConf, the\n\
            ClusterFirst pods on the node for clusterDNS.",
        verify: "\
            cat /proc/$(pgrep -x kubelet)/cmdline | tr '\\0' ' '   # no --resolv-conf / --cluster-dns\n\
            systemctl cat kubelet\n\
            kubectl get --raw /api/v1/nodes/NODE/proxy/configz \\\n  \
            | jq '.kubeletconfig | {resolvConf, clusterDNS}'\n\
            dnsfix check -i hosts.yaml --limit NODE\n\
            (k3s runs kubelet inside the k3s process: use the configz line there.)",
        playbook: Some("kubelet-flag-shadow"),
    },
    RuleInfo {
        id: "DNS-RESOLV-MANAGED-ELSEWHERE",
        severity: Severity::Warning,
        title: "/etc/resolv.conf is a plain file another service rewrites",
        symptom: "\
            A DNS fix worked, and after the next reboot, DHCP lease renewal or NetworkManager\n\
            restart the old content is back and CoreDNS loops again (coredns#2391: CentOS 7\n\
            with kubeadm, fine until a reboot). The first lines of /etc/resolv.conf name the\n\
            owner:\n\
            # Generated by NetworkManager\n\
            # Dynamic resolv.conf(5) file for glibc resolver(3) generated by resolvconf(8)\n\
            # This file is managed by man:systemd-resolved(8). Do not edit.\n\
            # Generated by dhcpcd from eth0.dhcp\n\
            # Generated by resolvconf\n\
            ### /etc/resolv.conf file autogenerated by netconfig!\n\
            (busybox udhcpc, Alpine's DHCP client, writes no header.)\n\
            Or /etc/dhcp/dhclient.conf has a supersede line with loopback or cluster addresses,\n\
            as found behind kubespray#9948:\n\
            supersede domain-name-servers 169.254.25.10, 127.0.0.53;",
        mechanism: "\
            /etc/resolv.conf usually has an owner that regenerates it:\n\
            - NetworkManager (rc-manager=symlink, what auto means for dns=default or dnsmasq)\n  \
            replaces a regular file on every DNS change and leaves a symlink alone; dns=none\n  \
            or rc-manager=unmanaged makes it leave the file alone (NetworkManager.conf(5)), and\n  \
            so does dns=systemd-resolved with rc-manager auto, its default since 1.28 (Ubuntu\n  \
            sets it in /usr/lib/NetworkManager/conf.d/10-dns-resolved.conf; before 1.28 (and in\n  \
            RHEL 8's build, whatever the version) an unset rc-manager is symlink, and it\n  \
            writes nameserver 127.0.0.53 over a regular file: dnsfix reads the version from\n  \
            its plugin directory, libdir/NetworkManager/VERSION), and so it does\n  \
            with an immutable file (`chattr +i`: it tests the flag at its start and reload,\n  \
            nm-dns-manager.c _check_resconf_immutable; dnsfix asks `lsattr -d`). dnsfix reads\n  \
            NetworkManager.conf and the conf.d files of /usr/lib, /run and /etc as\n  \
            NetworkManager does (later files win, /etc shadows /run and /usr/lib by name).\n  \
            A file NetworkManager writes is how such a node is meant to be: info; a warning\n  \
            where its servers are not those of /run/NetworkManager/no-stub-resolv.conf, which\n  \
            NetworkManager writes in the same update (dns=default, writing the file itself):\n  \
            edited since, and the edit goes the next time NetworkManager writes it. A\n  \
            NetworkManager stopped but enabled (`systemctl stop` without `disable`: its link\n  \
            in /etc/systemd/system/multi-user.target.wants) writes it again at the next boot:\n  \
            info where the file lists the servers it writes then (its conf.d global DNS),\n  \
            else a warning, and the fix goes into its conf.d as well as into the file.\n\
            - dhclient-script rewrites it on every lease unless a hook takes over, with the\n  \
            lease's servers as dhclient.conf's statements leave them, in file order:\n  \
            `supersede` replaces them, `prepend`/`append` add to them (ISC's example file\n  \
            prepends 127.0.0.1), `default` stands in where the lease brings none, as it\n  \
            does where a `request` list leaves out domain-name-servers (ISC dhcpd then\n  \
            sends none).\n\
            - the resolvconf package regenerates it from\n  \
            /etc/resolvconf/resolv.conf.d/{head,base,tail}.\n\
            - dhcpcd's 20-resolv.conf hook writes it at every lease and renewal (Raspberry Pi\n  \
            OS before bookworm, Arch, Gentoo), or hands the servers to openresolv where a\n  \
            resolvconf program is installed, which writes it whenever it is handed servers\n  \
            and at resolvconf -u; busybox udhcpc's script (Alpine's default.script) writes\n  \
            it at every lease; SUSE's netconfig writes it (since sysconfig 0.85 into\n  \
            /run/netconfig, linked) and leaves a file changed since alone until\n  \
            `netconfig update -f`. dnsfix counts each only on evidence that it wrote the file\n  \
            and writes it again (its header, its running process, its configuration not\n  \
            turning it off), never on its package alone.\n\
            - cloud-init regenerates netplan's 50-cloud-init.yaml at every boot, and its\n  \
            resolv_conf module can write /etc/resolv.conf directly.\n\
            - systemd-resolved owns /run/systemd/resolve/; /run is tmpfs, so edits there are\n  \
            gone at reboot.\n\
            An edit to the file itself, by hand or by a tool that does not know the owner, lasts\n\
            until the owner runs again. Because a pod's resolv.conf is fixed at creation and\n\
            the CoreDNS loop check runs only at start-up, the regression shows when the DNS pods\n\
            are recreated, typically at the next reboot.\n\
            \n\
            dhclient supersede: Kubespray's host_resolvconf writes `supersede\n\
            domain-name-servers` into an `# Ansible entries` block of dhclient.conf from its\n\
            server list (nodelocaldns IP first, then `nameservers` and the servers already in\n\
            /etc/resolv.conf) with no filter. With 127.0.0.53 in `nameservers`, or in\n\
            /etc/resolv.conf when it runs (a systemd-resolved stub), the line becomes the one\n\
            above, and after a reboot it lands in the file kubelet hands to CoreDNS\n\
            (2024 root-cause comment on kubespray#9948). dnsfix reports this variant as high\n\
            when dhclient is the node's DHCP client (a dhclient process runs) and reads that\n\
            file (the one its `-cf` names, else the default dhclient.conf), for an interface\n\
            its command line names (an interface block of its own counts there). Where that file\n\
            is NetworkManager's (/var/lib/NetworkManager/dhclient-IF.conf, headed \"# Merged from\n\
            PATH\"), it is made again from PATH at every DHCP start: edit PATH, then `nmcli\n\
            connection up` (or reboot). A dhclient NetworkManager runs (-sf nm-dhcp-helper)\n\
            runs no dhclient-script: NetworkManager writes the lease's servers as its dns= and\n\
            rc-manager= say (high with dns=default; at most a warning where they go to\n\
            systemd-resolved, dnsconfd or its dnsmasq; info with dns=none or\n\
            rc-manager=unmanaged, which write no resolv.conf). Ubuntu 18.04+ with\n\
            netplan uses systemd-networkd and RHEL 8+ NetworkManager's internal client: there the\n\
            line is latent, reported as info, until something runs dhclient again. So it is\n\
            where the dhclient-script that runs writes no resolv.conf: an enter hook it sources\n\
            redefines make_resolv_conf to do nothing (Debian and Ubuntu: a file named of\n\
            letters, digits, _ and - in /etc/dhcp/dhclient-enter-hooks.d; Red Hat: an executable\n\
            /etc/dhcp/dhclient-enter-hooks), or Red Hat's PEERDNS=no holds for the interface\n\
            (its ifcfg file, else /etc/sysconfig/network); a hook that redefines it otherwise\n\
            leaves the finding unknown. Ubuntu's stock hooks hand the lease's servers to\n\
            systemd-resolved where it is enabled (20.04: an enter hook that writes them to\n\
            /run/systemd/resolved.conf.d; later: an exit hook that runs resolvectl, whatever\n\
            make_resolv_conf does): the line is then judged as written where /etc/resolv.conf\n\
            or the kubelet's file goes through systemd-resolved, and is latent where neither does.",
        fix: "\
            Change the owner's configuration, never only /etc/resolv.conf:\n\
            - NetworkManager: nmcli connection modify CONN ipv4.dns ... ipv4.ignore-auto-dns yes,\n  \
            or a [global-dns] section in /etc/NetworkManager/conf.d/ (Kubespray writes\n  \
            conf.d/dns.conf), or dns=none there if another tool should own the file.\n\
            - systemd-resolved: a drop-in in /etc/systemd/resolved.conf.d/ (DNS=, Domains=).\n\
            - dhclient: the supersede lines in /etc/dhcp/dhclient.conf; no loopback or cluster\n  \
            address in `supersede`, `prepend`, `append` or `default domain-name-servers`.\n\
            - resolvconf: /etc/resolvconf/resolv.conf.d/base or head.\n\
            - dhcpcd: `static domain_name_servers=ADDR ADDR` in /etc/dhcpcd.conf, or\n  \
            `nohook resolv.conf` there to leave the file to you; then `dhcpcd -n`.\n\
            - openresolv: `name_servers=` (before the servers it is handed) or\n  \
            `name_servers_append=` in /etc/resolvconf.conf, or `resolv_conf=/dev/null` to\n  \
            leave the file to you; then `resolvconf -u`.\n\
            - udhcpc (Alpine): `RESOLV_CONF=\"no\"` in /etc/udhcpc/udhcpc.conf (`NO_DNS=` for\n  \
            one interface, or `peer-dns no` in /etc/network/interfaces) and write the file\n  \
            yourself: it takes no servers of its own.\n\
            - netconfig (SUSE): `NETCONFIG_DNS_STATIC_SERVERS=` in\n  \
            /etc/sysconfig/network/config (NETCONFIG_DNS_POLICY naming STATIC, as `auto`\n  \
            does under wicked), or `NETCONFIG_DNS_POLICY=''`; then `netconfig update -f`.\n\
            - cloud-init: set the nameservers in its network config, or stop it regenerating the\n  \
            network config with /etc/cloud/cloud.cfg.d/99-disable-network-config.cfg\n  \
            containing `network: {config: disabled}`, and manage netplan yourself.\n\
            - Kubespray: its next run writes its list again (the cluster address, `nameservers`,\n  \
            `cloud_resolver`, and the servers /etc/resolv.conf lists at that time, so a\n  \
            127.0.0.53 or an old cluster address there comes back): keep `nameservers` to\n  \
            real servers, without 127.0.0.53 or cluster addresses, and set\n  \
            `disable_host_nameservers: true`.\n\
            Or take kubelet out of it: point resolvConf at a dedicated file no service rewrites.\n\
            \n\
            `dnsfix plan -i hosts.yaml --limit NODE` shows the exact change.",
        restart: "\
            Apply the owner's new configuration (systemctl restart systemd-resolved,\n\
            systemctl reload NetworkManager, netplan apply, or renew the DHCP lease) and check\n\
            the regenerated file. Restart kubelet only if its resolvConf path changed; recreate\n\
            the CoreDNS and nodelocaldns pods if the content they got was wrong. The real test\n\
            is rebooting one node.",
        verify: "\
            ls -l /etc/resolv.conf; head -3 /etc/resolv.conf\n\
            resolvectl status | grep -i 'resolv.conf mode'\n\
            NetworkManager --print-config | grep -E '^(dns|rc-manager)='\n\
            grep -n supersede /etc/dhcp/dhclient.conf /etc/dhclient.conf\n\
            grep -n -e nohook -e domain_name_servers /etc/dhcpcd.conf\n\
            dnsfix check -i hosts.yaml --limit NODE      # and again after rebooting the node",
        playbook: None,
    },
    RuleInfo {
        id: "DNS-K3S-FALLBACK",
        severity: Severity::Info,
        title: "k3s/RKE2 gave pods a generated resolv.conf with 8.8.8.8",
        symptom: "\
            The k3s or RKE2 service log says at every start (k3s v1.31.12, v1.32.8, v1.33.4,\n\
            v1.34 and later, and the RKE2 releases of the same versions):\n\
            level=warning msg=\"Host resolv.conf includes loopback, multicast, or link-local nameservers - kubelet will use autogenerated resolv.conf with nameservers 8.8.8.8 2001:4860:4860::8888\"\n\
            (earlier versions: \"... loopback or multicast nameservers - kubelet will use\n\
            autogenerated resolv.conf with nameserver 8.8.8.8\").\n\
            Public names resolve in pods, but internal and split-horizon names (intranet hosts,\n\
            a private registry) get NXDOMAIN or the public answer. On an air-gapped or\n\
            egress-filtered network every outside lookup from pods times out, and the CoreDNS\n\
            errors name 8.8.8.8:53 as the upstream.",
        mechanism: "\
            With no resolv-conf configured, k3s and RKE2 choose kubelet's file themselves (k3s\n\
            pkg/agent/config/config.go, locateOrGenerateResolvConf): the first of\n\
            /etc/resolv.conf and /run/systemd/resolve/resolv.conf whose nameservers are all\n\
            global unicast addresses. A loopback, multicast or link-local server (127.0.0.53,\n\
            a 169.254.x nodelocaldns address, AWS's 169.254.169.253) disqualifies a file (k3s\n\
            docs, \"Nameserver Viability Checks\"). One link-local server counts from k3s\n\
            v1.31.12, v1.32.8, v1.33.4 and v1.34 on (k3s-io/k3s#12692; RKE2 runs the same code):\n\
            GCP's metadata server 169.254.169.254, the VM's DNS resolver, which GCP routes; on a\n\
            GCE node the systemd-resolved file that lists it is taken then, and was passed over\n\
            before. A file with no nameserver line passed before v1.27.15, v1.28.11, v1.29.6\n\
            and v1.30.2 (k3s-io/k3s#9948): kubelet got it, and CoreDNS no upstream at all\n\
            (DNS-KUBELET-RESOLVCONF-MISSING). If neither file passes, k3s writes\n\
            <data-dir>/agent/etc/resolv.conf (/var/lib/rancher/k3s/... or\n\
            /var/lib/rancher/rke2/...; /tmp/k3s-resolv.conf in old versions) with\n\
            `nameserver 8.8.8.8`, and `nameserver 2001:4860:4860::8888` after it from those\n\
            versions on, and hands that to kubelet. CoreDNS then forwards every name\n\
            it does not own to Google's public resolver, bypassing your own DNS servers.\n\
            \n\
            k3s chooses when it starts, and keeps that choice until it restarts (from v1.32 it\n\
            writes it into its own kubelet drop-in, 00-k3s-defaults.conf). After a reboot it may\n\
            start before DHCP or systemd-resolved have filled the host's files in: it then falls\n\
            back, though the files pass a minute later. dnsfix reads that drop-in on a running\n\
            k3s/RKE2 and reports the choice it made, with what its next start would choose.\n\
            \n\
            It is not a loop and nothing crashes, so dnsfix reports it as info: decide whether\n\
            Google's resolver is what you want. Where the choice depends on the version (GCP's\n\
            metadata server in a file) and dnsfix does not know it, it says it cannot tell.",
        fix: "\
            Set the file explicitly, listing servers that can answer your internal names:\n\
            `resolv-conf: /etc/rancher/k3s/resolv.conf` in /etc/rancher/k3s/config.yaml\n\
            (RKE2: /etc/rancher/rke2/config.yaml), and write that file with your real upstream\n\
            servers; or point it at /run/systemd/resolve/resolv.conf once that lists real\n\
            servers. K3S_RESOLV_CONF / RKE2_RESOLV_CONF or --resolv-conf work too. k3s uses a\n\
            path you give it without checking it, so list no loopback server there\n\
            (DNS-KUBELET-LOOPBACK). If 8.8.8.8 is intended, set it explicitly anyway so the\n\
            choice is visible. On GCE, upgrading k3s/RKE2 to one of the versions above also\n\
            makes it take the systemd-resolved file with 169.254.169.254.\n\
            \n\
            `dnsfix plan -i hosts.yaml --limit NODE` shows the exact change.",
        restart: "\
            Restart the service on the node: systemctl restart k3s (server) or k3s-agent; RKE2:\n\
            rke2-server or rke2-agent. Then recreate the CoreDNS pods (dnsPolicy: Default),\n\
            whose resolv.conf was written at creation:\n  \
            kubectl -n kube-system delete pod -l 'k8s-app in (kube-dns,kube-dns-secondary,coredns)' --field-selector spec.nodeName=NODE",
        verify: "\
            journalctl -u k3s -u k3s-agent --since -10min | grep 'autogenerated resolv.conf'\n\
            (RKE2: -u rke2-server -u rke2-agent; no output after the restart)\n\
            grep resolv-conf /etc/rancher/k3s/config.yaml /etc/rancher/rke2/config.yaml\n\
            kubectl get --raw /api/v1/nodes/NODE/proxy/configz | jq .kubeletconfig.resolvConf\n\
            kubectl run -it --rm dnstest --image=busybox:1.36 --restart=Never -- nslookup <internal name>\n\
            dnsfix check -i hosts.yaml --limit NODE",
        playbook: Some("kubelet-resolvconf"),
    },
    RuleInfo {
        id: "DNS-KUBELET-NO-CLUSTER-DNS",
        severity: Severity::Critical,
        title: "kubelet has no usable clusterDNS (Service names fail) or no clusterDomain",
        symptom: "\
            Pod and node events, reason MissingClusterDNS:\n\
            kubelet does not have ClusterDNS IP configured and cannot create Pod using \"ClusterFirst\" policy. Falling back to \"Default\" policy.\n\
            Pods run, but no Service name resolves in them (`nslookup kubernetes.default`:\n\
            NXDOMAIN or a timeout from the node's own servers), and their /etc/resolv.conf is\n\
            the node's, with no cluster search domains and no ndots:5. Without a clusterDomain\n\
            the pods' server is the cluster's, but short names (my-svc, my-svc.my-namespace)\n\
            get NXDOMAIN while full names (my-svc.my-namespace.svc.cluster.local) resolve.\n\
            With a clusterDNS that is no DNS Service's address, every lookup in the node's pods\n\
            times out (`;; connection timed out; no servers could be reached`), or is slow\n\
            where a later clusterDNS server answers.",
        mechanism: "\
            The kubelet does not learn the cluster's DNS address from the cluster: it takes it\n\
            from its own clusterDNS (config file) or --cluster-dns, and parses each entry as an\n\
            IP address, dropping every one it cannot with only a log line (\"Invalid clusterDNS\n\
            IP\"; the config's validation does not look at them). With none left, every pod with\n\
            dnsPolicy ClusterFirst (the default) gets dnsPolicy Default instead: the servers,\n\
            search domains and options of the kubelet's resolvConf file\n\
            (pkg/kubelet/network/dns/dns.go GetPodDNS). The cluster search domains\n\
            <namespace>.svc.<domain>, svc.<domain> and <domain> come from clusterDomain, which\n\
            has no default in the KubeletConfiguration: without it ClusterFirst pods get only\n\
            the host's search domains. kubeadm, Kubespray, k3s, RKE2, k0s and EKS's nodeadm\n\
            all set both; they go missing from a hand-written config, or a flag that names the\n\
            Service instead of its address (--cluster-dns=kube-dns.kube-system). Two installers\n\
            leave them out on purpose, which dnsfix reports as info: MicroK8s without its dns\n\
            addon (`microk8s enable dns` sets both flags, `disable` takes them out), and\n\
            Kubespray's `dns_mode: none` with `enable_nodelocaldns: false` (\"a non functional\n\
            cluster\", Kubespray docs/advanced/dns-stack.md). On MicroK8s that holds only where\n\
            the cluster has no DNS Service: `microk8s enable dns` (on by default from 1.27)\n\
            sets the flags on the other nodes one after another through their cluster agents\n\
            and stops at the first it cannot reach, so the nodes after it keep none. Where the\n\
            cluster was read and has a DNS Service, a MicroK8s node without --cluster-dns is\n\
            critical, as on any node; where it was not read, info that says so.\n\
            \n\
            An address can be wrong too: the kubelet asks whatever clusterDNS says. Where the\n\
            cluster was read (kubectl on a control-plane host), dnsfix compares the first\n\
            clusterDNS address with kube-system's Services labelled k8s-app kube-dns,\n\
            kube-dns-secondary or coredns (kubeadm's and k3s's Service kube-dns, Kubespray's\n\
            coredns, the CoreDNS Helm chart's): critical where it is none of theirs, not a node-local\n\
            cache's (a link-local address, DNS-NODELOCAL-CLUSTERDNS's; one on the nodelocaldns\n\
            interface) and no DNS server on the node is bound to it; high where a later\n\
            clusterDNS address is the Service's (each lookup waits for the first to time out).\n\
            Not judged with Kubespray's dns_mode manual (a server of your choosing) or where a\n\
            DNS server on the node listens on every address (the address may be the node's\n\
            own); unknown where the node's socket table was not read.\n\
            A Service's address never changes: a Kubespray kube_service_addresses changed\n\
            after install renders a clusterDNS no Service has; nodeadm takes the .10 of the\n\
            NodeConfig's spec.cluster.cidr (its prefix and a for an IPv6 one: api/net.go),\n\
            whatever the cluster's Service CIDR is.",
        fix: "\
            Give the kubelet the cluster's DNS address, where its other settings are: the\n\
            cluster DNS Service's clusterIP\n  \
            kubectl -n kube-system get svc -l 'k8s-app in (kube-dns,kube-dns-secondary,coredns)' -o jsonpath='{.items[*].spec.clusterIP}'\n\
            or NodeLocal DNSCache's address where it runs (Kubespray: nodelocaldns_ip,\n\
            169.254.25.10 by default), and clusterDomain, the zone of CoreDNS's kubernetes\n\
            plugin (cluster.local unless you chose another):\n\
            - kubeadm: clusterDNS and clusterDomain in /var/lib/kubelet/config.yaml, and in the\n  \
            kubelet-config ConfigMap so `kubeadm upgrade` keeps them;\n\
            - Kubespray: dns_mode coredns (the default) and run cluster.yml;\n\
            - k3s/RKE2: the servers' `cluster-dns:` and `cluster-domain:` (agents take them\n  \
            from the server), or for one node `kubelet-arg+: [cluster-dns=ADDRESS]` in a\n  \
            config.yaml.d drop-in;\n\
            - MicroK8s: `microk8s enable dns`; for a node it did not reach,\n  \
            --cluster-dns=ADDRESS and --cluster-domain=DOMAIN in its\n  \
            /var/snap/microk8s/current/args/kubelet;\n\
            - EKS: spec.cluster.cidr in the NodeConfig, from which nodeadm derives clusterDNS;\n\
            - a plain kubelet: clusterDNS/clusterDomain in its --config file, or fix the\n  \
            --cluster-dns flag to an address.\n\
            The kubelet-cluster-dns playbook sets the address dnsfix knows (the Service's, where\n\
            the cluster was read; the one Kubespray renders from the inventory) and the\n\
            inventory's dns_domain, in the config file that sets them now, an environment\n\
            file's flag or MicroK8s's arguments file; elsewhere its plan is blocked, saying\n\
            where.",
        restart: "\
            Restart the kubelet (systemctl restart kubelet; k3s, RKE2, k0s and MicroK8s: their\n\
            service; EKS: replace the node, or reboot it with a NodeConfig in\n\
            /etc/eks/nodeadm.d/, as nodeadm writes the kubelet's settings at boot). Pods keep\n\
            the resolv.conf they were created with: recreate every pod on the node created\n\
            without the cluster's DNS (kubectl delete pod --field-selector spec.nodeName=NODE\n\
            -A, or roll their Deployments).",
        verify: "\
            kubectl get --raw /api/v1/nodes/NODE/proxy/configz | jq '.kubeletconfig | {clusterDNS, clusterDomain}'\n\
            kubectl get events -A --field-selector reason=MissingClusterDNS\n\
            kubectl run -it --rm dnstest --image=busybox:1.36 --restart=Never --overrides='{\"spec\":{\"nodeName\":\"NODE\"}}' -- nslookup kubernetes.default\n\
            dnsfix check -i hosts.yaml --limit NODE",
        playbook: Some("kubelet-cluster-dns"),
    },
    RuleInfo {
        id: "DNS-CNI-CONFIG-INVALID",
        severity: Severity::Critical,
        title: "containerd cannot load the first CNI config file: no new pod gets a network",
        symptom: "\
            The node turns NotReady, and `kubectl describe node NODE` says:\n\
            container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized\n\
            Pods on the node that are not hostNetwork, CoreDNS's among them, stay in\n\
            ContainerCreating with the event (reason NetworkNotReady)\n\
            network is not ready: container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized\n\
            The node gets the node.kubernetes.io/not-ready taint: no new pod is scheduled there,\n\
            and after the default 300 s its pods are evicted. Pods that were running keep their\n\
            network until then. containerd logs\n\
            failed to reload cni configuration after receiving fs change event(...)\n\
            (or at its start: failed to load cni during init, please check CRI plugin status before setting up network for pods)\n\
            and `crictl info` shows lastCNILoadStatus: cni config load failed: failed to load CNI config list file /etc/cni/net.d/...: ...: invalid cni config: failed to load cni config",
        mechanism: "\
            The container runtime, not the kubelet, loads the CNI configuration: the files of\n\
            its directory (/etc/cni/net.d; k3s's own /var/lib/rancher/k3s/agent/etc/cni/net.d\n\
            where k3s runs its flannel; MicroK8s's in its snap) ending in .conf, .conflist or\n\
            .json, sorted by name. containerd's CRI plugin (go-cni\n\
            loadFromConfDir, max_conf_num 1) takes the first it can load, and stops with an\n\
            error at a file before it that libcni refuses: one that is not JSON (an empty file\n\
            a full disk left when a network plugin's installer rewrote it), a .conflist without\n\
            a name or with a plugin without a type, a plugin list saved as .conf. It drops the\n\
            networks it had first, so a node that worked breaks the moment such a file is\n\
            written there, and stays broken until the directory changes again. CRI-O (ocicni)\n\
            and cri-dockerd log the file and take the next one: on them dnsfix reports a file\n\
            only where none loads.\n\
            \n\
            dnsfix checks what libcni checks of a file (JSON, a list's name and non-empty plugin\n\
            list, each plugin's name, cniVersion and type as strings, its capabilities, ipam,\n\
            dns and prevResult as their types; not the list's booleans) and takes the runtime\n\
            from the kubelet's --container-runtime-endpoint or containerRuntimeEndpoint, k3s's\n\
            docker (its cri-dockerd) or container-runtime-endpoint, else the default:\n\
            containerd (the kubelet's from 1.27, none in 1.24 to 1.26, the dockershim before;\n\
            k3s, RKE2, MicroK8s and k0s embed it). Unknown where the endpoint names another\n\
            runtime, or a kubelet of 1.24 to 1.26 is given none dnsfix found, unless no file of\n\
            the directory loads: then no runtime has a network. A link there is listed too,\n\
            and one to nothing or to a directory does not load.",
        fix: "\
            Take the file out of the way or repair it:\n  \
            mv /etc/cni/net.d/BROKEN /root/      # or rename it to end in .bak\n\
            containerd loads the directory again when a file in it is written, renamed or\n\
            removed. Where a network plugin's installer wrote it (Calico's install-cni, Cilium,\n\
            flannel, the AWS VPC CNI), free the disk space and restart that plugin's pod on the\n\
            node so it writes its file again. dnsfix has no playbook for this: which file is\n\
            meant to be there is the network plugin's to say.",
        restart: "\
            Nothing for the runtime (containerd reloads on the change; a file moved in, which\n\
            it ignores, needs `systemctl restart containerd`). Pods stuck in ContainerCreating\n\
            are retried by the kubelet; the node turns Ready within a sync.",
        verify: "\
            ls -l /etc/cni/net.d/\n\
            crictl info | grep -e NetworkReady -e lastCNILoadStatus -A2\n\
            kubectl get node NODE\n\
            dnsfix check -i hosts.yaml --limit NODE",
        playbook: None,
    },
    RuleInfo {
        id: "DNS-CNI-CONFIG-LEFTOVER",
        severity: Severity::Critical,
        title: "the first CNI file is a former network plugin's: new pods get no working network",
        symptom: "\
            After a move from one network plugin to another (Cilium to Calico, flannel to\n\
            Calico or Cilium), pods already running are fine and every new pod on the node stays\n\
            in ContainerCreating, CoreDNS's replacements included, with FailedCreatePodSandBox\n\
            naming the former plugin:\n\
            plugin type=\"cilium-cni\" name=\"cilium\" failed (add): unable to connect to Cilium daemon: failed to create cilium agent client after 30.000000 seconds timeout: Get \"http:///var/run/cilium/cilium.sock/v1/config\": dial unix /var/run/cilium/cilium.sock: connect: no such file or directory\n\
            plugin type=\"flannel\" failed (add): loadFlannelSubnetEnv failed: open /run/flannel/subnet.env: no such file or directory\n\
            plugin type=\"calico\" failed (add): stat /var/lib/calico/nodename: no such file or directory: check that the calico/node container is running and has mounted /var/lib/calico/",
        mechanism: "\
            The container runtime loads the first CNI file of its directory by name that loads\n\
            (containerd's go-cni, max_conf_num 1; CRI-O's ocicni the same), whatever network\n\
            plugin runs. A plugin's installer writes its own file and leaves the others:\n\
            Calico's install-cni writes 10-calico.conflist, kube-flannel 10-flannel.conflist,\n\
            Cilium's agent 05-cilium.conflist (it renames the others to *.cilium_bak only while\n\
            it runs, with cni.exclusive). Removing a plugin's DaemonSet does not remove its\n\
            file, so the former plugin's file can sort first (05-cilium before 10-calico,\n\
            10-calico before 10-flannel): the runtime hands every new pod to a plugin whose\n\
            agent no longer runs, and it fails as above.\n\
            \n\
            dnsfix reads the runtime's directory as DNS-CNI-CONFIG-INVALID does, and the node's\n\
            processes for the agents of the plugins it tells by name: cilium-agent (the Cilium\n\
            chart's agent container), calico-node (calico/node's felix, `exec calico-node\n\
            -felix`), flanneld (kube-flannel; k3s's own flannel runs inside k3s), each root's.\n\
            It reports where the file in effect is one of those plugins', its agent does not\n\
            run, and the agent of a plugin whose file sorts after it does. Not where the agent\n\
            of the file in effect runs (a migration under way), or where no later plugin's\n\
            agent runs (the plugin may just be down).",
        fix: "\
            Move the former plugin's file out of the directory (keep it, in case):\n  \
            mv /etc/cni/net.d/05-cilium.conflist /root/      # or rename it to end in .bak\n\
            containerd loads the directory again when a file in it is renamed or removed, and\n\
            takes the running plugin's file. Then delete the pods stuck in ContainerCreating on\n\
            the node (kubectl delete pod --field-selector spec.nodeName=NODE,status.phase=Pending\n\
            -A), so that they are created again. Where the first file's plugin is still the\n\
            cluster's (a move to it under way, its agent restarting: from the node it looks the\n\
            same), start its agent instead and leave the file; Kubespray's kube_network_plugin\n\
            says which, and the remediation follows it. dnsfix has no playbook for this: which\n\
            plugin is meant to run is the cluster's to say.",
        restart: "\
            Nothing for the runtime (containerd reloads on the change). Pods already stuck are\n\
            retried by the kubelet; deleting them is quicker. Pods that got the former plugin's\n\
            network before it stopped keep it: recreate them too.",
        verify: "\
            ls -l /etc/cni/net.d/\n\
            crictl info | grep -e lastCNILoadStatus -A2\n\
            kubectl -n kube-system get pods -o wide --field-selector spec.nodeName=NODE\n\
            dnsfix check -i hosts.yaml --limit NODE",
        playbook: None,
    },
    RuleInfo {
        id: "DNS-KUBELET-RESTART-DUE",
        severity: Severity::High,
        title: "an apply changed the kubelet's files and was cut off before restarting it",
        symptom: "\
            `dnsfix apply` ended with the connection or the script lost (\"the connection was\n\
            lost under the apply script\", \"dnsfix stopped waiting\", \"the connection or the\n\
            apply script died\"), or was interrupted, and a new `dnsfix plan` has nothing to\n\
            change: the kubelet's files hold the fix. Pods created since still get the old\n\
            resolv.conf or clusterDNS (a CoreDNS replacement keeps crash-looping on the loop).",
        mechanism: "\
            The kubelet reads its config file, flags and resolvConf setting when it starts. An\n\
            apply writes the files first and restarts the unit last, in the same script; cut off\n\
            in between, the files are new and the running kubelet is the old one. Every other rule\n\
            reads the files, so they pass. Before its first change the apply (or rollback) script\n\
            marks the kubelet unit its handlers restart (/var/lib/dnsfix/restart-due/UNIT/RUN: the\n\
            run, the boot, the time since boot), and removes the unit's marks once it restarted\n\
            it. dnsfix reports a mark from this boot whose kubelet process started before it.",
        fix: "\
            The kubelet-restart-due playbook: `dnsfix plan` shows the restart of the unit the\n\
            mark names, with the run that left it, and `dnsfix apply` restarts it (its handler\n\
            removes the mark) and recreates the node's CoreDNS and nodelocaldns pods. It writes\n\
            nothing: the files are what the run left, a rollback's (rollback-RUN) too. By hand:\n  \
            systemctl restart kubelet   # k3s, rke2-server, snap.microk8s.daemon-kubelite, k0sworker\n\
            Applying again the saved plan the run carried out (`dnsfix apply plan.json`) restarts\n\
            the unit as well and takes over the run's backups (`adopted`), so that run's record\n\
            ends done. A restart by hand, or a reboot, leaves the mark; dnsfix no longer reports\n\
            it, and the next handler that restarts the unit removes it.",
        restart: "\
            The unit the mark names; then the node's CoreDNS and nodelocaldns pods, which read the\n\
            kubelet's resolv.conf when they are created.",
        verify: "\
            systemctl show -p ActiveEnterTimestamp kubelet   # after the apply\n\
            dnsfix check -i hosts.yaml --limit NODE",
        playbook: Some("kubelet-restart-due"),
    },
    RuleInfo {
        id: "DNS-FIREWALLD-PODS-UNTRUSTED",
        severity: Severity::Warning,
        title: "firewalld runs and no zone accepts the pod network",
        symptom: "\
            Pods time out on names, often only those whose queries cross nodes, and stopping\n\
            firewalld on the nodes makes them resolve. From incidents (flannel-io/flannel#2055,\n\
            kubeadm with flannel on Alma 9.4, logged with LogDenied=all):\n\
            filter_FWD_public_REJECT: IN=flannel.1 OUT=cni0 MAC=... SRC=10.244.1.0 DST=10.244.0.2\n\
            and a test pod's lookups answered \"no route to host\" (the REJECT's ICMP). On CentOS 7\n\
            (coredns/coredns#4714) CoreDNS itself logged, with firewalld running:\n\
            [ERROR] plugin/errors: 2 5637218425957891351.2484993851925124540. HINFO: read udp 10.244.5.20:33008->172.18.1.1:53: i/o timeout",
        mechanism: "\
            firewalld sorts every packet into a zone: by the source address bound to a zone, else\n\
            by the interface bound to one, else the default zone (firewalld.conf DefaultZone,\n\
            public unless set). The pod network's interfaces (cni0, flannel.1, cali*, ...) and\n\
            addresses are bound to none unless someone did so, so what the pods send through the\n\
            node is the default zone's. A zone's default target accepts ICMP and rejects\n\
            everything else (firewalld.zone(5)); only target ACCEPT forwards packets not addressed\n\
            to the host. Intra-zone forwarding (<forward/>, firewalld 1.0 and later) reaches only\n\
            the interfaces and sources bound to the zone by name (nftables.py\n\
            build_zone_forward_rules), not traffic that fell into it. firewalld keeps its own\n\
            nftables table (FirewallBackend=nftables, its default), so an accept in kube-proxy's or\n\
            the network plugin's iptables rules does not stop its reject. It accepts DNAT'd\n\
            packets (ct status dnat; with StrictForwardPorts=yes, 2.3 and later, not even those):\n\
            a query to the kube-dns Service from a pod on the same node as a CoreDNS pod may still\n\
            pass, while one that a CoreDNS pod's node receives from another node (flannel.1 to\n\
            cni0) does not. k3s's requirements page: \"It is recommended to turn off firewalld\";\n\
            where it stays, the pod and service networks (10.42.0.0/16, 10.43.0.0/16 by default)\n\
            belong in the trusted zone. RKE2's known issues: firewalld conflicts with Canal and\n\
            should be disabled. Kubespray leaves firewalld as it finds it.\n\
            \n\
            dnsfix reads firewalld's permanent configuration (what it loads at start and at every\n\
            reload): firewalld.conf, the zones of /usr/lib/firewalld/zones and /etc/firewalld/zones\n\
            (a file of /etc replaces the shipped zone of its name), and the pod network from\n\
            flannel's /run/flannel/subnet.env (FLANNEL_NETWORK) or the inventory's\n\
            kube_pods_subnet. It passes where the default zone's target is ACCEPT or a zone with\n\
            target ACCEPT holds a source covering the pod network; it cannot tell (unknown) where\n\
            such a zone binds a pod interface, holds an ipset or MAC source, or holds sources and\n\
            the pod network is not known, where a zone of another target forwards within itself\n\
            (<forward/>) and binds the pod network or a pod interface (pod to pod passes there,\n\
            a CoreDNS pod's query out of the zone does not), where direct rules or policies of\n\
            /etc/firewalld may accept the traffic, or where a file of it could not be read.\n\
            Rules added without --permanent are not seen: they are gone at the next reload or\n\
            boot. A firewalld stopped now (systemctl stop, a common first aid) that is still\n\
            enabled (systemctl is-enabled, asked where its unit file is installed) starts again\n\
            at the next boot with these zones: judged the same, the finding says from that boot.",
        fix: "\
            Either stop firewalld (k3s's recommendation, RKE2's known issue):\n  \
            systemctl disable --now firewalld\n\
            or, to keep it, put the pod and service networks in the trusted zone (k3s's rules;\n\
            the finding fills in the node's networks where dnsfix knows them):\n  \
            firewall-cmd --permanent --zone=trusted --add-source=10.42.0.0/16   # pods\n  \
            firewall-cmd --permanent --zone=trusted --add-source=10.43.0.0/16   # services\n  \
            firewall-cmd --reload\n\
            (with firewalld stopped, firewall-offline-cmd --zone=trusted --add-source=... writes\n\
            the same to its files: firewall-cmd needs the daemon)\n\
            and open the ports the nodes use between them in their zone (flannel VXLAN 8472/udp,\n\
            the kubelet's 10250/tcp, the API server's 6443/tcp on servers). dnsfix has no\n\
            playbook for this: which of the two is the operator's choice.",
        restart: "\
            Nothing for the pods: firewalld's reload applies the zones at once. With\n\
            FirewallBackend=iptables, firewalld's reload and stop flush every iptables table\n\
            (ipXtables.py build_flush_rules: -F, -X, -Z), kube-proxy's and the network plugin's\n\
            rules with them: restart k3s, RKE2 or kube-proxy and the network plugin's pod on the\n\
            node afterwards.",
        verify: "\
            firewall-cmd --get-default-zone; firewall-cmd --zone=trusted --list-sources\n\
            kubectl run -it --rm dnstest --image=busybox:1.36 --restart=Never --overrides='{\"spec\":{\"nodeName\":\"NODE\"}}' -- nslookup kubernetes.default\n\
            dnsfix check -i hosts.yaml --limit NODE",
        playbook: None,
    },
    RuleInfo {
        id: "DNS-MACVLAN-NO-MASQUERADE",
        severity: Severity::Critical,
        title: "pods on Kubespray's macvlan, and kube-proxy does not masquerade all",
        symptom: "\
            Pods on a node that runs a CoreDNS pod time out on some lookups, while pods on\n\
            other nodes resolve: kube-proxy picks a CoreDNS endpoint per new flow, and the\n\
            queries it sends to the one beside them go unanswered (on every name where every\n\
            ready CoreDNS endpoint is on that node). A lookup there says (Kubespray\n\
            docs/CNI/macvlan.md):\n\
            reply from unexpected source\n\
            and a lookup there succeeds when it asks the CoreDNS pod's own address. Pods on a\n\
            node without CoreDNS resolve until a CoreDNS pod is scheduled there.",
        mechanism: "\
            Kubespray's macvlan network plugin gives each pod a macvlan device of\n\
            macvlan_interface, in bridge mode (10-macvlan.conf.j2, the CNI plugin's default),\n\
            and a default route to the first address of the node's pod CIDR, which the node\n\
            holds on its own macvlan device mac0 (debian-network-macvlan.cfg.j2 and the CentOS\n\
            and Flatcar templates). A query to the kube-dns Service goes to mac0, and kube-proxy\n\
            on the node DNATs it to a CoreDNS pod. Where that pod runs on the same node, it\n\
            shares the client's subnet, and the macvlan driver switches its reply from pod to pod\n\
            without the node: the node's conntrack never puts the Service IP back as the\n\
            source, and the client drops an answer from an address it did not ask. A CoreDNS pod\n\
            on another node answers through its node and this one (routes via access_ip), and\n\
            that works: the failure follows where CoreDNS pods are scheduled.\n\
            \n\
            kube-proxy's masqueradeAll masquerades every packet to a Service IP (iptables and\n\
            IPVS modes alike); without it only sources outside clusterCIDR, the pod network, are.\n\
            Masqueraded, the query reaches CoreDNS from mac0's address and the answer comes\n\
            back through the node. Kubespray renders kube_proxy_masquerade_all (false by\n\
            default) as the ConfigMap's iptables.masqueradeAll; its macvlan CI sets it true. It\n\
            renders no nftables section, which kube-proxy reads in nftables mode: there the\n\
            variable does nothing.\n\
            \n\
            dnsfix reads masqueradeAll from kube-system/kube-proxy's config.conf where it read\n\
            the cluster (v1alpha1's iptables.masqueradeAll, nftables.masqueradeAll in nftables\n\
            mode; another apiVersion is unknown, not the inventory's value), else the\n\
            inventory's kube_proxy_masquerade_all, else Kubespray's default on a Kubespray node;\n\
            elsewhere it cannot tell (unknown). Severity follows where CoreDNS runs, where the\n\
            cluster was read: critical where a ready CoreDNS pod runs on the node (named, with\n\
            its share of the Service's ready endpoints), where one is scheduled there and not\n\
            ready (starting, crash-looping: it takes that share each time it turns ready), and\n\
            where no CoreDNS pod is ready anywhere (the first ready on the node breaks it);\n\
            high where the cluster lists the node, ready CoreDNS pods elsewhere and none on it\n\
            (pods resolve now, and lose DNS when one is scheduled there: a rollout, a drain, a\n\
            failure elsewhere); high too where the only ready CoreDNS pods on the node are\n\
            Kubespray's coredns-secondary (dns_mode coredns_dual), clusterDNS asks the primary's\n\
            Service first and ready primary pods run elsewhere (pods lose their fallback, not\n\
            their DNS: glibc asks the second server only where the first fails, musl asks both\n\
            and keeps the primary's answer); critical where that is not known. A warning where pod DNS does not go through the kube-dns Service: every\n\
            clusterDNS address on the nodelocaldns interface (pods ask NodeLocal DNSCache on the\n\
            node over mac0 and the node's IP stack, whose queries to CoreDNS leave from the\n\
            node), or clusterDNS none of the cluster DNS Services' addresses (as kubectl read\n\
            them, kube-system's and CoreDNS's in other namespaces, else Kubespray's\n\
            skydns_server; dns_mode manual): pods ask that server directly. Other Services still fail for a client beside a backend. Kubespray's doc\n\
            also says to disable nodelocaldns on macvlan because its address is not reachable;\n\
            its files do not bear that out (mac0 is the pods' gateway, the address is local to\n\
            the node), and dnsfix does not report it.",
        fix: "\
            Kubespray, iptables or IPVS mode: set kube_proxy_masquerade_all: true\n\
            (group_vars/all/all.yml) and write it to kube-proxy's ConfigMap with\n\
            ansible-playbook cluster.yml -e upgrade_cluster_setup=true: only with\n\
            upgrade_cluster_setup does Kubespray run `kubeadm init phase addon kube-proxy`\n\
            (roles/kubernetes/control-plane/tasks/kubeadm-upgrade.yml); plain cluster.yml on a\n\
            running cluster does not. upgrade-cluster.yml sets it too, but drains every node\n\
            (roles/upgrade/pre-upgrade: drain_nodes: true).\n\
            nftables mode: Kubespray renders the variable as iptables.masqueradeAll only, which\n\
            kube-proxy does not read there: kubectl -n kube-system edit configmap kube-proxy and\n\
            in config.conf set nftables.masqueradeAll: true; a Kubespray re-run of the\n\
            kube-proxy addon (the two playbooks above) writes the ConfigMap back without it.\n\
            By hand (any installer): the same edit, iptables.masqueradeAll: true in iptables\n\
            and IPVS modes.\n\
            dnsfix has no playbook for this: the setting is the cluster's, not a node's.",
        restart: "\
            kube-proxy reads its configuration at start: kubectl -n kube-system rollout restart\n\
            daemonset kube-proxy. Pods need no restart.",
        verify: "\
            kubectl -n kube-system get configmap kube-proxy -o jsonpath='{.data.config\\.conf}' | grep -A3 -E '^(iptables|nftables):'\n\
            kubectl run -it --rm dnstest --image=busybox:1.36 --restart=Never --overrides='{\"spec\":{\"nodeName\":\"NODE\"}}' -- nslookup kubernetes.default\n  \
            (NODE one that runs a CoreDNS pod)\n\
            dnsfix check -i hosts.yaml --limit NODE",
        playbook: None,
    },
    RuleInfo {
        id: "DNS-POD-LOOP",
        severity: Severity::Critical,
        title: "a CoreDNS or nodelocaldns pod on this node crash-loops on a DNS loop",
        symptom: "\
            kubectl -n kube-system get pods -o wide shows a coredns (or nodelocaldns) pod on the\n\
            node in CrashLoopBackOff with a rising restart count, and its previous run ends with:\n\
            [FATAL] plugin/loop: Loop (127.0.0.1:38718 -> :53) detected for zone \".\", see https://coredns.io/plugins/loop#troubleshooting. Query: \"HINFO 1602357022762538710.2777015015780658687.\"\n\
            It often stays that way after the node's resolv.conf was already fixed.",
        mechanism: "\
            CoreDNS and nodelocaldns run with dnsPolicy: Default: kubelet writes the pod's\n\
            /etc/resolv.conf from its resolvConf file once, when the pod sandbox is created. With\n\
            `forward . /etc/resolv.conf` in the Corefile, a loopback or cluster address there\n\
            sends the loop plugin's start-up probe back to the pod itself, and CoreDNS exits\n\
            (plugin/loop). The container restarts inside the same pod, with the same resolv.conf:\n\
            fixing the kubelet's file and restarting the kubelet does not change it. Only a new\n\
            pod reads the new file. dnsfix reads the pods with kubectl on a control-plane host\n\
            and the loop line with `kubectl logs --previous`.",
        fix: "\
            First the node: the kubelet's resolvConf must name a file with only real upstream\n\
            servers (see DNS-KUBELET-LOOPBACK and DNS-CLUSTER-SELF-FORWARD), kubelet restarted.\n\
            Then delete the pod; its Deployment (CoreDNS) or DaemonSet (nodelocaldns) creates a\n\
            replacement that reads the new file:\n  \
            kubectl -n kube-system delete pod POD\n\
            (CoreDNS found outside kube-system through the cluster DNS Service: in its\n\
            namespace, kubectl -n NAMESPACE delete pod POD.)\n\
            `dnsfix apply` does both, in that order, and waits for the replacement to be Ready\n\
            in the pod's namespace (playbook kubelet-resolvconf, task `recreate the cluster DNS\n\
            pods on this node`).\n\
            Where the Corefile's root `forward .` itself loops (DNS-COREFILE-LOOP), neither\n\
            helps: a new pod loads the same Corefile. Fix that line; the pod loads it at its\n\
            next restart, and dnsfix apply leaves the pod alone.",
        restart: "\
            The kubelet, when its resolvConf changed. Then the crash-looping pod is deleted and\n\
            recreated; other pods on the node need not be.",
        verify: "\
            kubectl -n kube-system get pods -l 'k8s-app in (kube-dns,kube-dns-secondary,coredns)' -o wide\n\
            kubectl -n kube-system exec POD -- cat /etc/resolv.conf   # the new replacement\n\
            dnsfix verify -i hosts.yaml --limit NODE",
        playbook: Some("kubelet-resolvconf"),
    },
    RuleInfo {
        id: "DNS-NODELOCAL-DOWN",
        severity: Severity::Critical,
        title: "kubelet's clusterDNS is the node's NodeLocal DNSCache, and nothing answers there",
        symptom: "\
            Every pod on one node fails to resolve names while the rest of the cluster works.\n\
            Applications log errors such as:\n\
            lookup kubernetes.default.svc.cluster.local on 169.254.25.10:53: read udp 10.233.64.5:41122->169.254.25.10:53: read: connection refused\n\
            and `kubectl -n kube-system get pods -o wide` shows that node's nodelocaldns pod\n\
            not ready (CrashLoopBackOff, OOMKilled), or no nodelocaldns pod there at all. The\n\
            node still has its nodelocaldns interface with 169.254.25.10, so the node looks fine.",
        mechanism: "\
            node-cache adds its link-local address (Kubespray: nodelocaldns_ip, 169.254.25.10)\n\
            to a dummy interface named nodelocaldns. It takes the interface down only when it is\n\
            stopped by a signal it traps (SIGTERM: cmd/node-cache main.go registers\n\
            TeardownNetworking as caddy's OnProcessExit), and not at all with -skipteardown,\n\
            which Kubespray passes to both of its DaemonSets with enable_nodelocaldns_secondary\n\
            (nodelocaldns and nodelocaldns-second share the address, so one serves while the\n\
            other restarts). A cache that crashes keeps it too: a fatal error exits at once\n\
            (CoreDNS's log.Fatal, as plugin/loop does on a loop, or a Corefile that does not\n\
            load), and a SIGKILL (the OOM killer, the secondary's preStop `kill -9 1`) cannot\n\
            be trapped. The address then stays on the node with nothing listening on it, and\n\
            kubelet keeps handing it to every ClusterFirst pod as its nameserver.\n\
            DNS-NODELOCAL-CLUSTERDNS, which reads only the node, cannot tell this from a working\n\
            cache. The upstream manifest (cluster/addons/dns/nodelocaldns) in iptables mode\n\
            also puts the kube-dns service IP on the interface and leaves clusterDNS on it:\n\
            that address is then as dead. Where kubelet's clusterDNS is a link-local address\n\
            and the node has neither the interface nor a ready cache (a DaemonSet that does not\n\
            schedule there), nothing answers either; on a Kubespray node\n\
            DNS-NODELOCAL-CLUSTERDNS says so from the node alone.\n\
            \n\
            dnsfix reads the pods labelled k8s-app=node-local-dns (the primary DaemonSet, also\n\
            the upstream manifest's) and node-local-dns-second (Kubespray's secondary) with\n\
            kubectl on a control-plane host. Where the node's socket table (/proc/net/udp,\n\
            /proc/net/udp6) was read, it decides: a UDP socket on port 53 of the address (or of\n\
            every address) passes, none is the finding, and the pods say why. Elsewhere the\n\
            pods decide: a primary serves when it is Ready; the secondary when its container\n\
            runs, because its readiness and liveness probes ask the primary's health port\n\
            (nodelocaldns_health_port), so it is NotReady whenever the primary is down, still\n\
            answering. There, a node with no cache pod is judged only when the cluster lists\n\
            the node under a name dnsfix knows. Where the cluster lists no cache pod at all,\n\
            the cache is not one dnsfix can see, and nothing is said; nor with Cilium and no\n\
            interface, whose Local Redirect Policy can serve the address without one.\n\
            \n\
            Severity: critical where clusterDNS lists only the cache's addresses; high where it\n\
            lists another server after them, which each lookup reaches only after an error or\n\
            a timeout.",
        fix: "\
            Get a cache pod ready on the node. Find out why it is not:\n  \
            kubectl -n kube-system get pods -l 'k8s-app in (node-local-dns,node-local-dns-second)' -o wide\n  \
            kubectl -n kube-system describe pod POD; kubectl -n kube-system logs POD --previous\n\
            - OOMKilled: raise nodelocaldns_memory_limit (Kubespray) or the DaemonSet's limit.\n\
            - plugin/loop: the node's resolv.conf loops (DNS-POD-LOOP); fix the kubelet's file,\n  \
            then recreate the pod (dnsfix apply does both).\n\
            - No pod on the node: the DaemonSet's nodeSelector (nodelocaldns_ds_nodeselector) or\n  \
            tolerations leave the node out. Add them, or set clusterDNS on that node to the\n  \
            kube-dns service IP.\n\
            Until then the node's pods have no DNS. Deleting the interface by hand\n\
            (ip link del nodelocaldns) does not help: kube-proxy does not answer the link-local\n\
            address either.",
        restart: "\
            Nothing on the node. The cache pod, once it is ready, serves the address at once;\n\
            pods need not be recreated.",
        verify: "\
            kubectl -n kube-system get pods -l 'k8s-app in (node-local-dns,node-local-dns-second)' -o wide\n\
            dnsfix verify -i hosts.yaml --limit NODE\n\
            dnsfix check -i hosts.yaml --limit NODE",
        playbook: None,
    },
    RuleInfo {
        id: "DNS-KUBEADM-CONFIG-DRIFT",
        severity: Severity::Warning,
        title: "kubeadm's kubelet-config ConfigMap disagrees with the node's kubelet config",
        symptom: "\
            A DNS fix made on a kubeadm node (resolvConf, clusterDNS or clusterDomain in\n\
            /var/lib/kubelet/config.yaml) comes undone after `kubeadm upgrade node`, and the\n\
            CoreDNS pods there crash-loop again; or nodes joined at different times hand pods\n\
            different resolv.conf files.",
        mechanism: "\
            kubeadm keeps the cluster's KubeletConfiguration in ConfigMap\n\
            kube-system/kubelet-config (data.kubelet; before 1.24 kubelet-config-1.NN, NN the\n\
            cluster's minor version in ConfigMap kubeadm-config). `kubeadm join` and `kubeadm\n\
            upgrade node` write it to /var/lib/kubelet/config.yaml on the node, replacing the\n\
            file (kubeadm's \"Reconfiguring a kubeadm cluster\" task). A setting the node's file\n\
            decides, and the ConfigMap gives otherwise, therefore changes at the next upgrade.\n\
            resolvConf is the exception where the ConfigMap sets none (kubeadm init ran where\n\
            systemd-resolved did not; kubernetes#124038 and kubeadm#3327 keep the init node's\n\
            path out of it): kubeadm then chooses per node as it writes the file,\n\
            systemd-resolved's /run/systemd/resolve/resolv.conf where systemd-resolved runs,\n\
            else nothing, so the kubelet reads /etc/resolv.conf (componentconfigs\n\
            mutateResolverConfig; before 1.30 the kubelet config's Default). dnsfix compares\n\
            the node's file with that choice. A flag (kubeadm-flags.env, KUBELET_EXTRA_ARGS) beats both and\n\
            survives; dnsfix compares only the settings the file decides.",
        fix: "\
            Decide which is right. Usually the node was fixed and the ConfigMap was not:\n  \
            kubectl -n kube-system edit configmap kubelet-config   # the finding names it\n\
            and set the same resolvConf / clusterDNS / clusterDomain there. If the ConfigMap is\n\
            right, `kubeadm upgrade node phase kubelet-config` writes it to the node. Where\n\
            the ConfigMap sets no resolvConf, a file for this node alone belongs in a\n\
            kubeletconfiguration patch passed to `kubeadm upgrade node --patches DIR`\n\
            (kubeadm 1.25 and later) or in --resolv-conf in KUBELET_EXTRA_ARGS: in the\n\
            ConfigMap it would reach every node, also those without that file.",
        restart: "\
            Editing the ConfigMap restarts nothing. Writing it to a node changes the node's file:\n\
            restart the kubelet there, then recreate the CoreDNS and nodelocaldns pods on it.",
        verify: "\
            kubectl -n kube-system get configmap kubelet-config -o jsonpath='{.data.kubelet}' | grep -E 'resolvConf|clusterD'\n\
            grep -E 'resolvConf|clusterD' -A1 /var/lib/kubelet/config.yaml\n\
            dnsfix check -i hosts.yaml --limit NODE",
        playbook: None,
    },
    RuleInfo {
        id: "DNS-COREFILE-UPSTREAM-DRIFT",
        severity: Severity::Warning,
        title: "The Corefiles forward elsewhere than the inventory's upstream_dns_servers",
        symptom: "\
            upstream_dns_servers is set in the Kubespray inventory, yet CoreDNS and nodelocaldns\n\
            still send names outside the cluster to each pod's /etc/resolv.conf: the cluster\n\
            was deployed before the value was set. Where a node's kubelet hands pods its stub\n\
            (127.0.0.53) or the cluster's own address, the pods there crash-loop on\n\
            \"plugin/loop: Loop ... detected\", and outside names fail cluster-wide.",
        mechanism: "\
            Kubespray renders the `.:53` block of both Corefiles with\n\
            `forward . {{ upstream_dns_servers | join(' ') }}` when the list is not empty, else\n\
            `forward . /etc/resolv.conf` (roles/kubernetes-apps/ansible/templates/\n\
            coredns-config.yml.j2; nodelocaldns-config.yml.j2's upstreamForwardTarget). The\n\
            ConfigMaps are written only when the kubernetes-apps role runs, so setting the value\n\
            later changes nothing until then. /etc/resolv.conf in a CoreDNS pod is the file the\n\
            kubelet handed it (dnsPolicy: Default), which carries the node's problems into the\n\
            cluster. An upstream_dns_servers written as a template (\"{{ corp_dns }}\") is what\n\
            Ansible renders it to, which dnsfix does not: the drift is then unknown.",
        fix: "\
            Set the line Kubespray renders, nothing else:\n  \
            kubectl -n kube-system edit configmap coredns        # forward . SERVERS {\n  \
            kubectl -n kube-system edit configmap nodelocaldns   # forward . SERVERS\n\
            or re-run Kubespray: ansible-playbook cluster.yml --tags coredns,nodelocaldns.\n\
            dnsfix apply does the edit (playbook corefile-upstream) as a compare-and-swap on the\n\
            ConfigMap, and rollback restores it.",
        restart: "\
            None: the reload plugin in both Corefiles reloads a changed Corefile within about two\n\
            minutes (the kubelet's ConfigMap sync, then the plugin's check). A pod crash-looping\n\
            on a loop picks it up at its next restart.",
        verify: "\
            kubectl -n kube-system get configmap coredns -o jsonpath='{.data.Corefile}' | grep 'forward \\.'\n\
            dnsfix check -i hosts.yaml --limit kube_control_plane\n\
            dnsfix verify -i hosts.yaml",
        playbook: Some("corefile-upstream"),
    },
    RuleInfo {
        id: "DNS-COREFILE-LOOP",
        severity: Severity::Critical,
        title: "A Corefile's root forward sends names back to the cluster's own DNS",
        symptom: "\
            Every CoreDNS (or nodelocaldns) pod in the cluster crash-loops at once, each\n\
            previous run ending with\n\
            [FATAL] plugin/loop: Loop (10.233.64.5:41020 -> :53) detected for zone \".\"\n\
            while the nodes' resolv.conf files are clean, and recreating the pods changes\n\
            nothing. With several servers in the line, some lookups of outside names time out\n\
            and the pods may stay up.",
        mechanism: "\
            The `forward .` of a Corefile's root block (`.:53`) takes every name outside the\n\
            cluster. Where it names CoreDNS's own Service ClusterIP (kube-dns, 10.233.0.3 with\n\
            Kubespray's defaults) in CoreDNS's Corefile, or NodeLocal DNSCache's own listen\n\
            address (its `bind`, nodelocaldns_ip 169.254.25.10) in nodelocaldns's, the question\n\
            comes back to the server that asked. One pointing at the other loops where the\n\
            other's root in turn points back: CoreDNS forwarding to 169.254.25.10 while\n\
            nodelocaldns forwards its root to CoreDNS. nodelocaldns's cluster.local,\n\
            in-addr.arpa and ip6.arpa blocks forward to CoreDNS by design; only the root\n\
            blocks matter. Kubespray renders upstream_dns_servers into the root block of both\n\
            Corefiles (coredns-config.yml.j2, nodelocaldns-config.yml.j2), so an inventory\n\
            listing the cluster's own address writes the loop into both. The loop plugin\n\
            probes the root zone once at start-up and stops the server when the probe comes\n\
            back; under forward's default random policy, a line with real servers beside the\n\
            looping one may pass the probe, and that share of lookups loops until it times out.\n\
            Where the root forwards to /etc/resolv.conf, whether that file loops is\n\
            DNS-CLUSTER-SELF-FORWARD's question, per node.",
        fix: "\
            Point the line at real upstream servers: the inventory's upstream_dns_servers\n\
            where they do not loop, else /etc/resolv.conf:\n  \
            kubectl -n kube-system edit configmap coredns        # forward . SERVERS {\n  \
            kubectl -n kube-system edit configmap nodelocaldns   # forward . SERVERS\n\
            Where the inventory's upstream_dns_servers rendered the loop, remove the cluster's\n\
            address there first: Kubespray renders it again at its next cluster.yml run.",
        restart: "\
            None: the reload plugin loads a changed Corefile within about two minutes, and a\n\
            crash-looping pod loads it at its next restart.",
        verify: "\
            kubectl -n kube-system get configmap coredns nodelocaldns -o yaml | grep 'forward \\.'\n\
            kubectl -n kube-system get pods -l 'k8s-app in (kube-dns,node-local-dns)' -o wide\n\
            dnsfix check -i hosts.yaml --limit kube_control_plane",
        playbook: None,
    },
    RuleInfo {
        id: "DNS-FLEET-DRIFT",
        severity: Severity::Warning,
        title: "DNS settings differ from the rest of the inventory group",
        symptom: "\
            One node misbehaves and its peers are fine: the CoreDNS replica scheduled there is in\n\
            CrashLoopBackOff, or only pods on that node time out, often right after it was\n\
            rebooted, re-imaged or added. From an incident, the kubelet configs side by side:\n\
            # the broken node\n\
            clusterDNS:\n\
            - 169.254.25.10\n\
            resolvConf: \"/etc/resolv.conf\"\n\
            # the healthy nodes\n\
            clusterDNS:\n\
            - 169.254.25.10\n\
            resolvConf: \"/run/systemd/resolve/resolv.conf\"",
        mechanism: "\
            Nodes in one inventory group are meant to be configured alike, but per-node state\n\
            drifts: Kubespray picks kube_resolv_conf by distro and version, so an Ubuntu 22.04\n\
            node and a Debian 12 node in the same group get different paths; nodes added at\n\
            different times by different Kubespray or kubeadm versions; kubeadm's\n\
            systemd-resolved detection looks at the node as it was at join time; a hand fix\n\
            made on one node and never carried to the others; a node that rebooted and picked\n\
            up regenerated resolver files while its peers still run on the old ones.\n\
            \n\
            dnsfix compares, per inventory group with at least 3 gathered hosts: the effective\n\
            kubelet resolvConf, clusterDNS, the nameservers in the file kubelet hands to pods,\n\
            net.bridge.bridge-nf-call-iptables, and the installer flavour. A node whose value\n\
            differs from a strict majority of its group is reported, even when its value passes\n\
            every other rule: the odd node is the one that breaks at the next reboot or\n\
            reschedule. dnsfix reports the difference, not which side is right; the majority\n\
            can be wrong too, so read the other findings for both.",
        fix: "\
            Decide which value is right (usually the one with no other finding), bring the odd\n\
            node in line, and make the inventory say it so re-runs keep the nodes alike:\n\
            - Kubespray: set the variable in group_vars (kube_resolv_conf, upstream_dns_servers,\n  \
            nodelocaldns_ip) and re-run the playbook for that node; for a distro-driven\n  \
            difference, pass `-e kube_resolv_conf=...`, which beats the distro vars files.\n\
            - kubeadm: fix /var/lib/kubelet/config.yaml on the node to match ConfigMap\n  \
            kube-system/kubelet-config (or fix the ConfigMap if it is the odd one).\n\
            - k3s / RKE2: make /etc/rancher/{k3s,rke2}/config.yaml agree across the group.\n\
            If the difference is intended, put the node in its own inventory group.\n\
            \n\
            `dnsfix plan -i hosts.yaml` shows the exact changes for the odd nodes.",
        restart: "\
            Drift itself restarts nothing. What must restart depends on the setting that\n\
            differs: follow the matching finding (DNS-KUBELET-LOOPBACK for resolvConf,\n\
            DNS-NODELOCAL-CLUSTERDNS for clusterDNS, DNS-BRIDGE-NF-OFF for the bridge sysctl).",
        verify: "\
            dnsfix check -i hosts.yaml            # the whole group: drift needs the peers\n\
            dnsfix facts -i hosts.yaml --limit kube_node\n\
            ansible -i hosts.yaml kube_node -b -m command \\\n  \
            -a \"grep -A1 -E 'resolvConf|clusterDNS' /etc/kubernetes/kubelet-config.yaml\"",
        playbook: None,
    },
];

/// The catalog entry for `id`, matched case-insensitively (`dns-kubelet-loopback` works).
pub fn rule(id: &str) -> Option<&'static RuleInfo> {
    RULES.iter().find(|r| r.id.eq_ignore_ascii_case(id))
}

/// The ids nearest to `typed`, an id `rule` does not know, for "did you mean": `close` when
/// they are near enough to be what was meant (the id without its `DNS-`, the start of ids,
/// a whole word of them, or a typo or two), else the nearest by edit distance, for a hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nearest {
    pub ids: Vec<&'static str>,
    pub close: bool,
}

/// At most this many ids are suggested.
const MAX_SUGGESTED: usize = 5;

/// Longer than any id by far: no id is near it, and the edit distance's cost grows with it.
const MAX_COMPARED: usize = 64;

pub fn nearest(typed: &str) -> Nearest {
    if typed.chars().count() > MAX_COMPARED {
        return Nearest {
            ids: Vec::new(),
            close: false,
        };
    }
    let typed = typed.trim().to_ascii_uppercase().replace('_', "-");
    // Compared without the common `DNS-`, which every id has and a user may leave out.
    let core = |id: &str| -> String { id.strip_prefix("DNS-").unwrap_or(id).to_owned() };
    let want = core(&typed);
    let words: Vec<&str> = want.split('-').filter(|w| w.len() >= 4).collect();
    let typos = (want.chars().count() / 4).max(1);
    // The first of these that names any id: a typo, the start of ids, a word of them.
    let tiers: [&dyn Fn(&str) -> bool; 3] = [
        &|have| edit_distance(&want, have) <= typos,
        &|have| want.len() >= 3 && have.starts_with(&want),
        &|have| have.split('-').any(|w| words.contains(&w)),
    ];
    for tier in tiers {
        let close: Vec<&'static str> = RULES
            .iter()
            .map(|r| r.id)
            .filter(|id| tier(&core(id)))
            .take(MAX_SUGGESTED)
            .collect();
        if !close.is_empty() {
            return Nearest {
                ids: close,
                close: true,
            };
        }
    }
    let distance = |id: &str| edit_distance(&want, &core(id));
    let best = RULES.iter().map(|r| distance(r.id)).min().unwrap_or(0);
    Nearest {
        ids: RULES
            .iter()
            .map(|r| r.id)
            .filter(|id| distance(id) == best)
            .take(MAX_SUGGESTED)
            .collect(),
        close: false,
    }
}

/// Levenshtein distance over characters: insertions, deletions and substitutions.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous[j] + usize::from(ca != *cb);
            current.push(substitute.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_ids_for_a_typo_a_prefix_a_word_or_none_close() {
        let ids = |typed: &str| nearest(typed);
        let close = |list: &[&'static str]| Nearest {
            ids: list.to_vec(),
            close: true,
        };
        assert_eq!(ids("DNS-KUBELET-LOOPBAK"), close(&["DNS-KUBELET-LOOPBACK"]));
        // One far longer than any id is compared with none: the distance's cost grows
        // with it (100 kB took 11 s).
        let started = crate::testing::thread_cpu_time();
        assert!(ids(&"A".repeat(100_000)).ids.is_empty());
        assert!(crate::testing::thread_cpu_time() - started < std::time::Duration::from_secs(1));
        assert_eq!(ids("kubelet_loopback"), close(&["DNS-KUBELET-LOOPBACK"]));
        assert_eq!(
            ids("dns-bridge"),
            close(&["DNS-BRIDGE-NF-OFF", "DNS-BRIDGE-NF-NOT-PERSISTENT"])
        );
        assert_eq!(
            ids("DNS-LOOP"),
            close(&["DNS-POD-LOOP", "DNS-COREFILE-LOOP"])
        );
        assert_eq!(
            ids("DNS-TYPO"),
            Nearest {
                ids: vec!["DNS-POD-LOOP"],
                close: false
            }
        );
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    fn texts(r: &RuleInfo) -> [(&'static str, &'static str); 6] {
        [
            ("title", r.title),
            ("symptom", r.symptom),
            ("mechanism", r.mechanism),
            ("fix", r.fix),
            ("restart", r.restart),
            ("verify", r.verify),
        ]
    }

    #[test]
    fn ids_are_screaming_kebab_starting_with_dns() {
        for r in RULES {
            let rest = r.id.strip_prefix("DNS-");
            assert!(rest.is_some(), "{} does not start with DNS-", r.id);
            let ok = rest.is_some_and(|rest| {
                rest.split('-').all(|part| {
                    !part.is_empty()
                        && part
                            .chars()
                            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
                })
            });
            assert!(ok, "{} is not SCREAMING-KEBAB", r.id);
        }
    }

    #[test]
    fn ids_are_unique_even_ignoring_case() {
        for (i, a) in RULES.iter().enumerate() {
            for b in &RULES[i + 1..] {
                assert!(!a.id.eq_ignore_ascii_case(b.id), "duplicate id {}", a.id);
            }
        }
    }

    /// Shipped ids never change: renaming one breaks users' greps and saved reports.
    #[test]
    fn shipped_ids_and_default_severities_are_stable() {
        let expected = [
            ("DNS-KUBELET-LOOPBACK", Severity::Critical),
            ("DNS-CLUSTER-SELF-FORWARD", Severity::Critical),
            ("DNS-KUBELET-RESOLVCONF-MISSING", Severity::Critical),
            ("DNS-HOST-RESOLVER-DOWN", Severity::High),
            ("DNS-BRIDGE-NF-OFF", Severity::Critical),
            ("DNS-BRIDGE-NF-NOT-PERSISTENT", Severity::High),
            ("DNS-IP-FORWARD", Severity::Critical),
            ("DNS-NAMESERVER-LIMIT", Severity::Warning),
            ("DNS-SEARCH-LIMIT", Severity::Warning),
            ("DNS-STRAY-SEARCH", Severity::Warning),
            ("DNS-NODELOCAL-CLUSTERDNS", Severity::Critical),
            ("DNS-KUBELET-FLAG-SHADOW", Severity::Warning),
            ("DNS-RESOLV-MANAGED-ELSEWHERE", Severity::Warning),
            ("DNS-K3S-FALLBACK", Severity::Info),
            ("DNS-KUBELET-NO-CLUSTER-DNS", Severity::Critical),
            ("DNS-CNI-CONFIG-INVALID", Severity::Critical),
            ("DNS-CNI-CONFIG-LEFTOVER", Severity::Critical),
            ("DNS-KUBELET-RESTART-DUE", Severity::High),
            ("DNS-FIREWALLD-PODS-UNTRUSTED", Severity::Warning),
            ("DNS-MACVLAN-NO-MASQUERADE", Severity::Critical),
            ("DNS-POD-LOOP", Severity::Critical),
            ("DNS-NODELOCAL-DOWN", Severity::Critical),
            ("DNS-KUBEADM-CONFIG-DRIFT", Severity::Warning),
            ("DNS-COREFILE-UPSTREAM-DRIFT", Severity::Warning),
            ("DNS-COREFILE-LOOP", Severity::Critical),
            ("DNS-FLEET-DRIFT", Severity::Warning),
        ];
        let actual: Vec<(&str, Severity)> = RULES.iter().map(|r| (r.id, r.severity)).collect();
        assert_eq!(actual, expected);
    }

    #[test]
    fn every_text_field_is_non_empty() {
        for r in RULES {
            for (field, text) in texts(r) {
                assert!(!text.trim().is_empty(), "{}: {field} is empty", r.id);
            }
        }
    }

    #[test]
    fn titles_are_one_line_of_at_most_80_chars() {
        for r in RULES {
            assert!(
                r.title.chars().count() <= 80,
                "{}: title is {} chars",
                r.id,
                r.title.chars().count()
            );
            assert!(!r.title.contains('\n'), "{}: title spans lines", r.id);
        }
    }

    /// A command that writes a systemd-resolved drop-in makes its directory first: the
    /// systemd-resolved package ships /etc/systemd/resolved.conf but no resolved.conf.d
    /// (Debian 12's 252.39-1~deb12u2; Ubuntu's likewise), so the redirect alone fails there.
    #[test]
    fn a_resolved_drop_in_is_written_into_a_directory_made_first() {
        const DIR: &str = "/etc/systemd/resolved.conf.d";
        for r in RULES {
            for (field, text) in texts(r) {
                for (at, _) in text.match_indices(&format!("> {DIR}/")) {
                    assert!(
                        text[..at].contains(&format!("mkdir -p {DIR}")),
                        "{}: {field} writes into {DIR} without making it first",
                        r.id
                    );
                }
            }
        }
    }

    /// Catches a misplaced `\` line continuation: stray blanks at either end of a line.
    #[test]
    fn texts_have_no_trailing_blanks_tabs_or_edge_blank_lines() {
        for r in RULES {
            for (field, text) in texts(r) {
                assert_eq!(
                    text,
                    text.trim(),
                    "{}: {field} starts or ends with blanks",
                    r.id
                );
                for line in text.lines() {
                    assert_eq!(line, line.trim_end(), "{}: {field}: {line:?}", r.id);
                    assert!(!line.contains('\t'), "{}: {field} has a tab", r.id);
                }
            }
        }
    }

    /// "see DNS-CLUSTER-SELF-FORWARD" must name an id that exists.
    #[test]
    fn ids_mentioned_in_texts_exist() {
        for r in RULES {
            for (field, text) in texts(r) {
                for (at, _) in text.match_indices("DNS-") {
                    let word: String = text[at..]
                        .chars()
                        .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '-')
                        .collect();
                    let word = word.trim_end_matches('-');
                    assert!(
                        rule(word).is_some(),
                        "{}: {field} mentions unknown {word}",
                        r.id
                    );
                }
            }
        }
    }

    /// What Kubespray's next run does to the node's resolver (roles/kubernetes/preinstall
    /// @46dbdd39): it writes its list again, the cluster address first and the servers
    /// /etc/resolv.conf lists at that time carried over unless disable_host_nameservers
    /// (vars/main.yml, configured_nameservers), so a 127.0.0.53 there comes back whatever
    /// `nameservers` says; and resolvconf_mode none stops the writing without undoing it
    /// (0110-dhclient-hooks-undo.yml removes only dhclient.conf's block; only reset.yml
    /// deletes kubespray.conf and dns.conf). The fixes that send the operator to the
    /// inventory say so.
    #[test]
    fn kubespray_resolver_fixes_say_what_its_next_run_keeps() {
        for id in ["DNS-CLUSTER-SELF-FORWARD", "DNS-RESOLV-MANAGED-ELSEWHERE"] {
            let fix = rule(id).expect(id).fix;
            assert!(
                fix.contains("disable_host_nameservers: true"),
                "{id}:\n{fix}"
            );
        }
        // upstream_dns_servers is not in that list (resolved.conf.j2's FallbackDNS only).
        let fix = rule("DNS-NAMESERVER-LIMIT").expect("rule").fix;
        assert!(
            !fix.contains("shorten `nameservers`, `upstream_dns_servers`"),
            "{fix}"
        );
        assert!(fix.contains("only into FallbackDNS"), "{fix}");
        let fix = rule("DNS-CLUSTER-SELF-FORWARD").expect("rule").fix;
        assert!(fix.contains("resolvconf_mode: none"), "{fix}");
        // On systemd-resolved nodes nameservers reach only FallbackDNS (resolved.conf.j2).
        assert!(fix.contains("only into FallbackDNS"), "{fix}");
        for file in [
            "/etc/systemd/resolved.conf.d/kubespray.conf",
            "/etc/NetworkManager/conf.d/dns.conf",
            "`# Ansible entries`",
        ] {
            assert!(fix.contains(file), "{file}:\n{fix}");
        }
    }

    /// `dnsfix explain`'s commands are pasted as they are, as root: a documentation
    /// address (RFC 5737's 192.0.2.0/24, 198.51.100.0/24 and 203.0.113.0/24, RFC 3849's
    /// 2001:db8::/32) in one would configure a server that is no one's. They name the
    /// servers `<ADDR>`, unquoted, as the findings' fixes do where none is known: the shell
    /// refuses the line (`> <ADDR`), so it runs none of its commands.
    #[test]
    fn no_text_names_a_documentation_address_to_paste() {
        use std::net::IpAddr;
        let documentation = |ip: IpAddr| match ip {
            IpAddr::V4(v4) => matches!(
                v4.octets(),
                [192, 0, 2, _] | [198, 51, 100, _] | [203, 0, 113, _]
            ),
            IpAddr::V6(v6) => v6.segments()[..2] == [0x2001, 0x0db8],
        };
        for r in RULES {
            for (field, text) in texts(r) {
                let words = text.split(|c: char| !(c.is_ascii_hexdigit() || c == '.' || c == ':'));
                for word in words {
                    let word = word.trim_matches(|c| c == '.' || c == ':');
                    if let Ok(ip) = word.parse::<IpAddr>() {
                        assert!(!documentation(ip), "{} {field}: {word}", r.id);
                    }
                }
                assert!(
                    !text.contains("'<ADDR"),
                    "{} {field}: a quoted <ADDR> the shell takes",
                    r.id
                );
            }
        }
    }

    #[test]
    fn rule_lookup_is_case_insensitive() {
        for r in RULES {
            let lower = r.id.to_ascii_lowercase();
            assert_eq!(rule(r.id).map(|f| f.id), Some(r.id));
            assert_eq!(rule(&lower).map(|f| f.id), Some(r.id));
        }
        assert_eq!(
            rule("Dns-Kubelet-Loopback").map(|r| r.id),
            Some("DNS-KUBELET-LOOPBACK")
        );
        assert!(rule("DNS-NO-SUCH-RULE").is_none());
        assert!(rule("").is_none());
    }
}
