//! Shared helpers for integration tests. Each test file that needs them says `mod common;`.

pub mod lab;
