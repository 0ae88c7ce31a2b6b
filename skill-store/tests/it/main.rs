//! skill-store against a real PostgreSQL: each test makes its own database on the server
//! named by `SKILLS_TEST_DATABASE_URL` (or `target/ci-postgres/url`, written by
//! `.ci/postgres`). Outside CI with neither, the tests say so and pass without running; in
//! CI (`CI` set) a missing database fails them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod notes;
mod outbox;
mod retention;
mod runs;
mod support;
mod tasks;
mod unreadable;
