//! The integration tests of `skill-format`, one binary: golden files for the parser and
//! for body outlines.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod golden;
mod outline;
