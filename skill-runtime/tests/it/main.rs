//! skill-runtime's integration tests, one binary: execution by kind and limits (`runtime`,
//! `scripts`, `contain`), the built-in workflow handler (`workflow`), the bounds on one
//! request's work and answer (`load`), several replicas on one database (`replicas`), one suite for both
//! implementations of the engine's shared state (`state`); `common` holds the helpers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod contain;
mod load;
#[cfg(feature = "replicas")]
mod replicas;
mod runtime;
mod scripts;
mod state;
mod workflow;
