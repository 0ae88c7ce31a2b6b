//! `cargo xtask`: repository automation.
fn main() {}
