//! The integration tests, one binary: the real `dnsfix` binary driven as users drive it
//! (`cli`, and the `*_e2e` modules against the real-sshd lab), fixture tests over
//! `tests/fixtures/`, and the node scripts and the gather run against temporary roots.
//! Run one module with a filter: `cargo test --test it verify_e2e::`.

mod common;

mod apply_e2e;
mod check_e2e;
mod cli;
mod corefile_e2e;
mod facts_e2e;
mod facts_fixtures;
mod gather_tree;
mod inventory;
mod inventory_ansible;
mod kubectl_reference;
mod lab_smoke;
mod node_scripts;
mod openssh_e2e;
mod plan_e2e;
mod plan_fixtures;
mod rules_fixtures;
mod sysctl_reference;
mod systemd_e2e;
mod transport_e2e;
mod verify_e2e;
