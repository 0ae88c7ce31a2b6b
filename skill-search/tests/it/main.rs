//! skill-search's integration tests: one binary, one module per area.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod index;
mod select;
mod trigger_eval;
