//! skill-server's integration tests, one binary: the `serve` command as a child process
//! (`serve`) and the README's walkthrough (`readme`); `common` holds the helpers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod readme;
mod serve;
