//! Shared helpers for the integration tests (`crate::common::...`).

pub mod lab;
