//! skill-store against a real PostgreSQL: each test makes its own database on the server
//! named by `SKILLS_TEST_DATABASE_URL` (or `target/ci-postgres/url`, written by
//! `.ci/postgres`). Every test is `#[ignore]`d, so without a database `cargo test` counts them
//! as ignored in its summary; `cargo test -- --include-ignored` runs them (`.ci/run` does,
//! after `.ci/postgres`), and then a missing database fails them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod notes;
mod outbox;
mod retention;
mod runs;
mod support;
mod tasks;
mod unreadable;
