//! DNS-IP-FORWARD for the interfaces made after the boot: the pods' bridge (cni0), their
//! veths. Such an interface starts with `net.ipv4.conf.default.forwarding`
//! ([`DEFAULT_FORWARDING`]), and the kernel routes nothing that enters by an interface
//! whose own forwarding is 0 (torvalds/linux net/ipv4/route.c `ip_route_input_slow`:
//! `if (!IN_DEV_FORWARD(in_dev)) { err = -EHOSTUNREACH; goto no_route; }`), whatever
//! `net.ipv4.ip_forward` says. Two lines leave it 0 where forwarding is on:
//! - `net.ipv4.conf.default.forwarding = 0` applied after the line that turns forwarding
//!   on (which sets `default` too; writing 1 again later changes nothing);
//! - on a node systemd boots, a line systemd's udev rule applies to each interface as it
//!   appears (99-systemd.rules: `systemd-sysctl --prefix=/net/ipv4/conf/$name`): a glob
//!   such as `net.ipv4.conf.*.forwarding = 0`, wherever it stands in the boot's order
//!   ([`crate::facts::sysctl::on_new_interface`]).
//!
//! Who breaks by it is the network plugin's affair: the bridge plugin (flannel's too) makes
//! its bridge after the boot and writes only `net.ipv4.ip_forward`, not even that where it
//! reads 1 (containernetworking/plugins pkg/ip/ipforward_linux.go `echo1`); ptp the same for
//! each pod's veth. Calico's CNI plugin and felix write `forwarding = 1` for each pod's
//! interface (cni-plugin dataplane_linux.go `configureSysctls`, felix endpoint_mgr.go
//! `configureInterface`: "we need this flag to be set on the fabric-facing interface too
//! (or for the global default to be set)"), but not for the IPIP or VXLAN device felix
//! makes (felix's `configureKernel` writes only `ip_forward`).
//!
//! IPv4 only: the kernel forwards IPv6 by `net.ipv6.conf.all.forwarding` alone; an
//! interface's own IPv6 `forwarding` picks its host or router behaviour (accepting router
//! advertisements), not whether packets entering by it are forwarded (Documentation/
//! networking/ip-sysctl.rst `conf/all/forwarding`: "IPv4 and IPv6 work differently here").
//! An interface's `force_forwarding` (ip-sysctl.rst, newer kernels: "Enable forwarding on
//! this interface only") only turns forwarding on there: a default of 0 breaks nothing.

use super::Ctx;
use crate::diagnose::finding::{Finding, Severity};
use crate::facts::node_facts::{Observed, Persisted};
use crate::facts::raw::FileState;
use crate::facts::sysctl::{
    DEFAULT_FORWARDING, PersistedValue, SYSCTL_CONF, SYSCTL_DIRS, booted_by_systemd,
    normalize_value, on_new_interface,
};

const ID: &str = "DNS-IP-FORWARD";
const IP_FORWARD: &str = "net.ipv4.ip_forward";

/// The interface pods' traffic enters the node by, as the network plugin makes it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PodSide {
    /// A Linux bridge that is the pods' gateway ([`crate::facts::cni::Cni::gateway_bridge`]).
    Bridge(String),
    /// The host end of each pod's veth, from the ptp plugin.
    PtpVeths,
    /// Each pod's interface, from Calico, which turns its forwarding on itself.
    Calico,
    /// Another plugin's, or no plugin known (its main plugin's type, where there is one).
    Other(Option<String>),
}

impl PodSide {
    fn of(ctx: &Ctx) -> PodSide {
        let cni = &ctx.facts.cni;
        if let Some(bridge) = &cni.gateway_bridge {
            return PodSide::Bridge(bridge.clone());
        }
        match crate::facts::cni::main_plugin(&cni.plugins) {
            Some("ptp") => PodSide::PtpVeths,
            Some("calico") => PodSide::Calico,
            other => PodSide::Other(other.map(str::to_owned)),
        }
    }

    /// The interface's name, or a name of the plugin's pattern, to match a line against:
    /// ptp's host veth is `veth` and 8 hex digits (plugins/pkg/ip link_linux.go
    /// `RandomVethName`), Calico's `cali` and 11 (libcalico-go k8s/conversion
    /// workload_endpoint_default.go `VethNameForWorkload`).
    fn name(&self) -> Option<&str> {
        match self {
            PodSide::Bridge(bridge) => Some(bridge),
            PodSide::PtpVeths => Some("veth00000000"),
            PodSide::Calico => Some("cali00000000000"),
            PodSide::Other(_) => None,
        }
    }

    /// As the finding names it.
    fn describe(&self) -> String {
        match self {
            PodSide::Bridge(bridge) => format!("{bridge} (the pods' gateway bridge)"),
            PodSide::PtpVeths => "the host end of each pod's veth (ptp)".to_owned(),
            PodSide::Calico => "each pod's interface (cali…)".to_owned(),
            PodSide::Other(Some(plugin)) => format!(
                "an interface the network plugin {} makes",
                crate::text::escape(plugin)
            ),
            PodSide::Other(None) => "an interface the network plugin makes".to_owned(),
        }
    }

    /// The key of its forwarding, as a line would set it for that one interface.
    fn key(&self) -> String {
        match self {
            PodSide::Bridge(bridge) => interface_key(bridge),
            PodSide::PtpVeths => interface_key("veth…"),
            PodSide::Calico => interface_key("cali…"),
            PodSide::Other(_) => interface_key("IF"),
        }
    }
}

/// `net.ipv4.conf.IF.forwarding` (a dot in the name is a slash in the dot form).
fn interface_key(name: &str) -> String {
    format!("net.ipv4.conf.{}.forwarding", name.replace('.', "/"))
}

fn live<'f>(ctx: &Ctx<'f>, key: &str) -> Option<&'f str> {
    match ctx.facts.sysctls.get(key).map(|s| &s.live) {
        Some(Observed::Known(v)) => Some(v.as_str()),
        _ => None,
    }
}

fn on(value: &str) -> bool {
    normalize_value(value) == "1"
}

/// The line that leaves [`DEFAULT_FORWARDING`] off as the boot ends, where the boot turns
/// forwarding on (`net.ipv4.ip_forward` persisted 1): it comes after that line.
fn default_off_at_boot<'f>(ctx: &Ctx<'f>) -> Option<(&'f Persisted, &'f Persisted)> {
    let forward = ctx.facts.sysctls.get(IP_FORWARD)?.persisted.as_ref()?;
    let default = ctx
        .facts
        .sysctls
        .get(DEFAULT_FORWARDING)?
        .persisted
        .as_ref()?;
    (on(&forward.value) && !on(&default.value)).then_some((default, forward))
}

/// What systemd's udev rule sets the pods' interface's forwarding to when it appears, on a
/// node systemd boots ([`on_new_interface`]).
fn udev_sets(ctx: &Ctx, side: &PodSide) -> Option<PersistedValue> {
    if !booted_by_systemd(&ctx.facts.raw) {
        return None;
    }
    let files = ctx.facts.raw.config_files(&SYSCTL_DIRS, SYSCTL_CONF);
    on_new_interface(&files, &interface_key(side.name()?))
}

/// The bridge's own forwarding now, where the gather read it.
fn bridge_now<'f>(ctx: &Ctx<'f>, bridge: &str) -> Option<String> {
    let path = format!("/proc/sys/net/ipv4/conf/{bridge}/forwarding");
    ctx.facts
        .raw
        .get(&path)
        .filter(|f| f.state == FileState::Present)
        .map(|f| String::from_utf8_lossy(&f.content).trim().to_owned())
}

/// What leaves the pods' interface with forwarding off: evidence, the fix's parts, and
/// whether it is so now.
#[derive(Debug, Default)]
struct Off {
    evidence: Vec<String>,
    fix: Vec<String>,
    now: bool,
}

fn off_causes(ctx: &Ctx, side: &PodSide) -> Off {
    let mut off = Off::default();
    let udev = udev_sets(ctx, side);
    // An interface's own line (or a glob) that udev applies as it appears decides over
    // what it started with.
    let udev_on = udev.as_ref().is_some_and(|v| on(&v.value));
    if let Some((default, forward)) = default_off_at_boot(ctx).filter(|_| !udev_on) {
        off.evidence.push(format!(
            "{}:{} sets {}, applied at boot after {}:{} turns forwarding on: an interface made after the boot starts with forwarding off",
            default.path,
            default.line,
            default.assignment(DEFAULT_FORWARDING),
            forward.path,
            forward.line
        ));
        off.fix.push(format!(
            "set that line ({}:{}) to 1",
            default.path, default.line
        ));
    }
    if let Some(glob) = udev.filter(|v| !on(&v.value)) {
        off.evidence.push(format!(
            "{}:{} sets {}: systemd's udev rule (99-systemd.rules) applies it to {} as it appears, wherever the line stands in the boot's order",
            glob.path,
            glob.line,
            glob.assignment(&side.key()),
            side.describe()
        ));
        off.fix
            .push(format!("set {}:{} to 1", glob.path, glob.line));
    }
    // What an interface made now starts with, unless udev's line sets it as it appears.
    let default_now = live(ctx, DEFAULT_FORWARDING).filter(|v| !on(v) && !udev_on);
    if let Some(v) = default_now {
        off.evidence.push(format!(
            "/proc/sys/net/ipv4/conf/default/forwarding: {v} (what an interface made now starts with)"
        ));
        off.fix.push(format!("sysctl -w {DEFAULT_FORWARDING}=1"));
        off.now |= *side == PodSide::PtpVeths;
    }
    if let PodSide::Bridge(bridge) = side
        && let Some(v) = bridge_now(ctx, bridge).filter(|v| !on(v))
    {
        off.evidence
            .push(format!("/proc/sys/net/ipv4/conf/{bridge}/forwarding: {v}"));
        off.fix
            .push(format!("sysctl -w {}=1 now", interface_key(bridge)));
        off.now = true;
    }
    off
}

/// DNS-IP-FORWARD's finding for the interfaces pods' traffic enters by, where forwarding is
/// on (`net.ipv4.ip_forward` 1 now) but they get it off; `None` otherwise.
pub(super) fn new_interfaces(ctx: &Ctx) -> Option<Finding> {
    if !live(ctx, IP_FORWARD).is_some_and(on) {
        return None;
    }
    let side = PodSide::of(ctx);
    let off = off_causes(ctx, &side);
    if off.evidence.is_empty() {
        return None;
    }
    let what = side.describe();
    let (severity, summary) = match &side {
        PodSide::Bridge(_) | PodSide::PtpVeths if off.now => (
            Severity::Critical,
            format!("IPv4 forwarding is off on {what} while net.ipv4.ip_forward is 1: pod traffic to other nodes and out of the node (DNS to CoreDNS on another node included) is not routed"),
        ),
        PodSide::Bridge(_) | PodSide::PtpVeths => (
            Severity::High,
            format!("IPv4 forwarding is on, but {what} gets it off when it is made after the next reboot, and nothing turns it on for it: pod traffic to other nodes and out of the node (DNS to CoreDNS on another node included) will not be routed"),
        ),
        PodSide::Calico => (
            Severity::Warning,
            "interfaces made after the boot get IPv4 forwarding off: Calico turns it on for each pod's interface itself (where systemd's udev rule applies a line to it, whichever writes last wins), not for its IPIP or VXLAN device (tunl0, vxlan.calico), by which pods on other nodes reach this node's pods where the IP pools encapsulate".to_owned(),
        ),
        PodSide::Other(_) => (
            Severity::Warning,
            format!("interfaces made after the boot get IPv4 forwarding off: pod traffic entering by {what} is not routed unless the plugin turns forwarding on for it, which dnsfix does not know"),
        ),
    };
    Some(ctx.finding(ID, severity, summary, off.evidence, off.fix.join("; ")))
}

/// Whether the bridge-netfilter playbook sets [`DEFAULT_FORWARDING`] to 1 now and at boot:
/// where the boot leaves it off after turning forwarding on, or it is off now while
/// forwarding is on, and the gather read it.
pub(crate) fn default_forwarding_wanted(ctx: &Ctx) -> bool {
    live(ctx, IP_FORWARD).is_some_and(on)
        && live(ctx, DEFAULT_FORWARDING).is_some()
        && new_interfaces(ctx).is_some()
        && (default_off_at_boot(ctx).is_some()
            || live(ctx, DEFAULT_FORWARDING).is_some_and(|v| !on(v)))
}

/// What the bridge-netfilter playbook says and does not do itself: a line systemd's udev
/// rule applies to the pods' interface as it appears, and the pods' bridge off now.
pub(crate) fn notes(ctx: &Ctx) -> Vec<String> {
    if new_interfaces(ctx).is_none() {
        return Vec::new();
    }
    let side = PodSide::of(ctx);
    let mut notes = Vec::new();
    if let Some(glob) = udev_sets(ctx, &side).filter(|v| !on(&v.value)) {
        let own = match &side {
            PodSide::Bridge(bridge) => format!(
                ", or add a line {} = 1 (an interface's own line wins over a glob wherever it stands)",
                interface_key(bridge)
            ),
            _ => String::new(),
        };
        notes.push(format!(
            "{}:{} sets {}, which systemd's udev rule applies to {} as it appears, wherever it stands in the boot's order: set that line to 1{own}",
            glob.path,
            glob.line,
            glob.assignment(&side.key()),
            side.describe()
        ));
    }
    if let PodSide::Bridge(bridge) = &side
        && bridge_now(ctx, bridge).is_some_and(|v| !on(&v))
    {
        notes.push(format!(
            "IPv4 forwarding is off on {bridge} now: set it with `sysctl -w {}=1` (this plan turns it on for interfaces made from now on, not for {bridge}, which is there already)",
            interface_key(bridge)
        ));
    }
    notes
}
