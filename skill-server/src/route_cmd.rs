//! Subcommands of this slot (being built).

use std::io::Write;

use clap::Subcommand;

/// The subcommands this module adds.
#[derive(Debug, Subcommand)]
pub enum Commands {}

/// Run one of this module's subcommands; returns the exit code.
pub fn run(command: Commands, _out: &mut dyn Write, _err: &mut dyn Write) -> u8 {
    match command {}
}
