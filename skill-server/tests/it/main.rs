//! skill-server's integration tests, one binary: the `serve` command as a child process
//! (`serve`), the README's walkthrough (`readme`) and `eval` on a bundled trigger eval;
//! `common` holds the helpers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod eval;
mod mcp;
mod readme;
mod replicas;
mod serve;
