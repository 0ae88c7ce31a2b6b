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
//! - `cargo xtask snapshot [--update]`: the skill-pack report of every bundled pack (and
//!   `packs/broken`), compared with the committed `tests/pack-reports/<pack>.txt`; fails with a
//!   summary of changed lines on drift, `--update` rewrites them.
//! - `cargo xtask audit-corpus [--corpus DIR] [--sample N]`: the content scan over a corpus
//!   of real skills (default `../shared/corpus`): findings per code and a sample of each.
//! - `cargo xtask attack [--seconds N] [--scale N] [--slow-connections N]`: the hostile-input
//!   reproductions of issue 46 against the release `skill-server`, loopback only, each with
//!   the server's peak RSS and the health p99 while it runs (see the attack module).
//! - `cargo xtask ci`: the CI steps (`cargo fmt`, `cargo clippy`, `cargo test`, `cargo doc`
//!   with warnings denied, `cargo package`), which `.ci/run` must match (see [`ci::STEPS`]).
//!
//! Exit codes: those of the commands it runs, passed through; 2 for its own usage or I/O
//! errors.

mod attack;
mod audit;
mod bench;
mod ci;
mod process;
mod snapshot;
#[cfg(test)]
#[allow(clippy::panic)] // A failing check reports its list of problems by panicking.
mod tidy;
mod validate;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "Repository automation: validate, snapshot, bench, ci."
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
    /// Render the pack report (skill-pack) of every bundled pack, packs/broken included,
    /// and compare it with the committed `tests/pack-reports/<pack>.txt`. Exit 1 with a
    /// summary of changed lines on drift; `--update` rewrites the files.
    Snapshot(snapshot::SnapshotArgs),
    /// Run benchmarks in release mode and print one table of figures, each with its ratio
    /// against a baseline measured in the same run. Without a name, runs them all with
    /// their defaults; `cargo xtask bench NAME --help` lists a benchmark's options.
    Bench(bench::BenchArgs),
    /// Run the CI steps in order, stopping at the first failure: `cargo fmt --check`,
    /// `cargo clippy --workspace --all-targets -D warnings`, `cargo test --workspace`,
    /// `cargo doc --no-deps --workspace` with `RUSTDOCFLAGS="-D warnings"`, `cargo package`
    /// (what `.ci/run` runs; `--print` lists them).
    Ci(ci::CiArgs),
    /// Run the content scan over a corpus of real skills (default ../shared/corpus, read in
    /// place) and print the findings per code with a sample of each, for the
    /// false-positive review.
    AuditCorpus(audit::AuditArgs),
    /// Run the hostile-input reproductions of issue 46 against the release server
    /// (loopback only, bounded) and print each one's figures with the server's peak RSS
    /// and the health p99 meanwhile. Exit 1 when a target is missed. Not part of `cargo test`.
    Attack(attack::AttackArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Validate(args) => validate::run(&args),
        Command::Snapshot(args) => snapshot::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Ci(args) => ci::run(&args),
        Command::AuditCorpus(args) => audit::run(&args),
        Command::Attack(args) => attack::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}
