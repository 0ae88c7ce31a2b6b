//! `cargo xtask`: repository automation for the skills engine.
//!
//! `cargo xtask` is an alias (see `.cargo/config.toml`) for
//! `cargo run --quiet --package xtask --`, so it builds and runs this crate in the dev profile.
//!
//! Subcommands:
//!
//! - `cargo xtask validate [PATH...]`: `skill-server validate` over the given paths, or over
//!   every bundled pack (each with its own dialect) when no path is given.
//! - `cargo xtask bench [NAME] [ARGS]`: benchmark harness with plain wall-clock timing. It
//!   re-runs itself as `cargo run --release -p xtask -- bench ...` so the figures are always
//!   measured in the release profile (the dev build only forwards). With no name it runs every
//!   benchmark with its defaults.
//! - `cargo xtask ci`: the CI steps (`cargo fmt`, `cargo clippy`, `cargo test`), which
//!   `.ci/run` must match (see [`ci::STEPS`]).
//!
//! Exit codes: those of the commands it runs, passed through; 2 for its own usage or I/O
//! errors.

mod bench;
mod ci;
mod process;
mod validate;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "Repository automation: validate, bench, ci."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Validate skill files with `skill-server validate`. Without PATH, validates every
    /// bundled pack (packs/agentskills, actions, lily, pegasus, toolsets), each with its
    /// dialect; `packs/broken` is deliberately invalid and left out.
    Validate(validate::ValidateArgs),
    /// Run benchmarks in release mode and print one table. Without a name, runs them all.
    Bench(bench::BenchArgs),
    /// Run the CI steps in order (what `.ci/run` runs), stopping at the first failure.
    Ci(ci::CiArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Validate(args) => validate::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Ci(args) => ci::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}
