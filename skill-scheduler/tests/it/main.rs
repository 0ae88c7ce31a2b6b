//! The integration tests of `skill-scheduler`, one binary: expressions against a
//! brute-force reading of crontab(5), and the scheduler end to end on a paused clock.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod expressions;
mod scheduler;
mod support;
