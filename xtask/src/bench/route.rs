//! Benchmark slot (being built).

use clap::Args as ClapArgs;

use super::Table;

/// Command-line arguments of this benchmark.
#[derive(Debug, Clone, Default, ClapArgs)]
pub struct Args {}

/// Run the benchmark, adding rows to `table`.
pub fn run(_args: &Args, _table: &mut Table) -> Result<(), String> {
    Err("this benchmark is not built yet".into())
}
