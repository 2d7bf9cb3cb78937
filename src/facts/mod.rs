//! Facts: the embedded gather script, its framed output, pure parsers and typed NodeFacts.
//! Facts never write to hosts.

pub mod cni;
pub mod crio_config;
mod derive;
pub mod dhclient_cmdline;
pub mod dhclient_conf;
pub mod dhclient_hooks;
pub(crate) mod env_lexer;
pub mod firewalld;
pub mod k0s;
pub mod k3s_config;
pub mod kernel_cmdline;
pub mod kubelet;
pub mod kubelet_config;
pub mod kubelet_flags;
pub mod microk8s;
pub mod modprobe_d;
pub mod modules_load;
pub mod network_manager;
pub mod node_facts;
pub mod raw;
pub mod resolv_conf;
pub mod resolv_writer;
pub mod resolved_conf;
pub mod restart_due;
pub mod sockets;
pub mod sysctl;
pub mod systemd_unit;

pub use node_facts::NodeFacts;
