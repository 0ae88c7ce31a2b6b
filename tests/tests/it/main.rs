//! The workspace's end-to-end tests, one binary: each module drives the engine through a
//! front door (the CLI in-process, HTTP over loopback) or a crate's public API, with the
//! bundled packs and temporary skill trees. Shared helpers live in the `skills_tests`
//! library (`tests/src/lib.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod bounds;
mod console;
mod deps;
mod disclose;
mod doors;
mod doorway;
mod hot_reload;
mod http;
mod no_panic;
mod pack_reports;
mod registry;
mod router;
mod rules;
mod schedule;
mod search;
mod sections_index;
mod validate_packs;
