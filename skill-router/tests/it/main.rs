//! skill-router's integration tests, one binary: the seeds' examples (`seeds`), routing
//! rules (`router`), property tests (`props`) and the bundled packs (`packs`); `common`
//! holds the helpers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod packs;
mod props;
mod router;
mod seeds;
