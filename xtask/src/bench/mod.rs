//! `cargo xtask bench`: the benchmark harness.
//!
//! Timing is plain [`std::time::Instant`] wall clock: a baseline and the code compared
//! with it each do one untimed warm-up run (warm caches, warm page cache), then run
//! alternately `--iterations` times each, so that background load hits both alike; the
//! table reports each one's median. Figures are only meaningful in the release profile, so when this binary is a
//! dev build (as `cargo xtask` makes it) `bench` re-runs itself with
//! `cargo run --release --package xtask -- bench ...` and passes its exit code on.
//!
//! Every benchmark adds rows to one [`Table`], printed at the end. To add one (`bench
//! disclose`, `bench route`, `bench search`, ...): write a module with an `Args` struct that
//! has a [`Default`] matching its command-line defaults and a
//! `run(&Args, &mut Table) -> Result<(), String>`, add a variant to [`BenchName`], and add it
//! to [`run_all`].

mod bm25;
mod console;
mod disclose;
mod distinctive;
mod evalset;
mod fastpath;
mod fit;
pub(crate) mod generate;
mod host;
mod http;
pub(crate) use http::{read_rss_kib, release_server};
mod hybrid;
mod load;
mod mcp;
mod model;
mod packs;
mod route;
mod scale;
mod scan;
mod scan_collections;
mod scan_peers;
mod scan_set;
mod schedule;
mod search;
mod select;
mod select_try;
mod steps;
mod table;
mod timing;
mod validate_proc;
mod verified;

use std::process::ExitCode;

use clap::{Args, Subcommand};

pub use table::Table;

use crate::process::{cargo, exit_code_of, repo_root, run_status};

/// Set in the environment of the release re-run so that it does not re-run itself again.
const RELEASE_RERUN_ENV: &str = "XTASK_BENCH_RELEASE_RERUN";

/// Arguments of `cargo xtask bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The benchmark to run; all of them (with their defaults) when omitted.
    #[command(subcommand)]
    bench: Option<BenchName>,
}

/// The benchmarks.
#[derive(Debug, Subcommand)]
pub enum BenchName {
    /// Loading: frontmatter YAML alone vs full parse + validate over a corpus, `cat` vs a
    /// `skill-server validate` process over the corpus, and file reading vs a full registry
    /// load over a generated pack.
    Load(load::LoadArgs),
    /// Disclosure: a 10,000-skill catalog within a budget, and hot-reload latency.
    Disclose(disclose::Args),
    /// Verified reads: every file of the bundled packs read under `require_lock` (in the
    /// manifest, hashed) against the unverified read, and `load_skill` likewise.
    Verified(verified::Args),
    /// MCP: `resources/read` p50 and p99 of our server against rmcp's `SkillCatalog` on
    /// the same folder.
    Mcp(mcp::Args),
    /// Routing: extraction and routing throughput against line splitting.
    Route(route::Args),
    /// Search and selection: index build, query latency, incremental update, accuracy.
    Search(search::Args),
    /// Selection accuracy on the evaluation set (held-out and tuning halves) against plain
    /// BM25 and each signal alone; select latency; index build against registry load.
    Select(search::Args),
    /// Fit the ranking parameters on the tuning half of the evaluation set and print them.
    SelectFit(search::Args),
    /// Scheduling: registering 10,000 jobs and firing lateness.
    Schedule(schedule::Args),
    /// HTTP: requests/s and latency against a bare hyper server; serve's RSS.
    Http(http::Args),
    /// Scale: `serve` over 10,000 / 50,000 / 100,000 real-sized skills (the corpus cycled
    /// under new names): time to ready, RSS, select and search latency, catalog, one-file
    /// reload, against the read floor of the same files. Not part of the default run (it
    /// takes minutes and needs the corpus).
    Scale(scale::Args),
    /// The content scan: recall on a labelled hostile set (per family, held-out half),
    /// skills of the real corpus flagged at error level (each listed), and the same figures
    /// for the skill scanners users install from PyPI, run offline. Not timed (so no release
    /// re-run) and not part of the default run (it installs the peers).
    Scan(scan::Args),
    /// The console: first paint of the skills page in headless Chromium over the bundled
    /// packs, the corpus and 10,000 generated skills. Not part of the default run (it needs
    /// Chromium and chromedriver: `bash .ci/chromium`).
    Console(console::Args),
}

/// Run the chosen benchmark (or all) and print the table.
pub fn run(args: &BenchArgs) -> Result<ExitCode, String> {
    if let Some(BenchName::Scan(a)) = &args.bench {
        return scan::run(a);
    }
    if cfg!(debug_assertions) && std::env::var_os(RELEASE_RERUN_ENV).is_none() {
        return rerun_in_release();
    }
    let mut table = Table::new();
    match &args.bench {
        Some(BenchName::Load(a)) => load::run(a, &mut table)?,
        Some(BenchName::Disclose(a)) => disclose::run(a, &mut table)?,
        Some(BenchName::Verified(a)) => verified::run(a, &mut table)?,
        Some(BenchName::Mcp(a)) => mcp::run(a, &mut table)?,
        Some(BenchName::Route(a)) => route::run(a, &mut table)?,
        Some(BenchName::Search(a)) => search::run(a, &mut table)?,
        Some(BenchName::Select(a)) => select::run(a, &mut table)?,
        Some(BenchName::SelectFit(a)) => select::run_fit(a, &mut table)?,
        Some(BenchName::Schedule(a)) => schedule::run(a, &mut table)?,
        Some(BenchName::Http(a)) => http::run(a, &mut table)?,
        Some(BenchName::Scale(a)) => scale::run(a, &mut table)?,
        Some(BenchName::Console(a)) => console::run(a, &mut table)?,
        Some(BenchName::Scan(_)) => {}
        None => run_all(&mut table)?,
    }
    println!("{}", header());
    print!("{}", table.render());
    Ok(if table.has_errors() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Every benchmark with its default arguments.
fn run_all(table: &mut Table) -> Result<(), String> {
    load::run(&load::LoadArgs::default(), table)?;
    disclose::run(&disclose::Args::default(), table)?;
    verified::run(&verified::Args::default(), table)?;
    route::run(&route::Args::default(), table)?;
    search::run(&search::Args::default(), table)?;
    select::run(&search::Args::default(), table)?;
    schedule::run(&schedule::Args::default(), table)?;
    http::run(&http::Args::default(), table)?;
    mcp::run(&mcp::Args::default(), table)?;
    Ok(())
}

/// Re-run this command line in a release build of xtask.
fn rerun_in_release() -> Result<ExitCode, String> {
    let root = repo_root()?;
    let mut cmd = cargo();
    cmd.args(["run", "--release", "--quiet", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .args(["--package", "xtask"])
        .args(if cfg!(feature = "transformer") {
            &["--features", "transformer"][..]
        } else {
            &[]
        })
        .arg("--")
        .args(std::env::args_os().skip(1))
        .env(RELEASE_RERUN_ENV, "1");
    eprintln!(
        "xtask: re-running in release mode: cargo run --release --package xtask -- bench ..."
    );
    run_status(&mut cmd).map(exit_code_of)
}

/// The line above the table: build profile and machine.
fn header() -> String {
    let profile = if cfg!(debug_assertions) {
        "DEV PROFILE (figures not representative)"
    } else {
        "release profile"
    };
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    format!(
        "bench: {profile}, {cores} cores, {} {}, medians of alternating timed runs after one warm-up run each",
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}
