//! Shared helpers for the integration tests (`crate::common::...`).

pub mod dnsfix;
pub mod lab;
pub mod masters;
pub mod reference;
