//! skill-server's integration tests, one binary: the `serve` command as a child process
//! (`serve`), the README's walkthrough (`readme`), `eval` on a bundled trigger eval and
//! proactive skills pre-loaded by `select` over the CLI and HTTP (`proactive`); signed locks with
//! the `minisign` tool and `require_signature` (`signed`); verified reads and runs under
//! `require_lock` and `audit` of a skill past the manifest's limits (`verified`);
//! remote sources and `add` against our own server (`hub`); every door refusing an excluded
//! skill, and webhook names resolving to private addresses (`excluded`); `common` holds the
//! helpers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod eval;
mod excluded;
mod hub;
mod mcp;
mod otel;
mod proactive;
mod readme;
#[cfg(feature = "postgres")]
mod replicas;
mod serve;
mod signed;
mod sources;
mod verified;
