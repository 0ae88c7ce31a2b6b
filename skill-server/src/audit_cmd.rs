//! `audit`: the content scan's findings over skill folders (every file of every skill, its
//! resources included), for review before a pack is trusted.

use std::io::Write;
use std::path::PathBuf;

use clap::Subcommand;
use skill_runtime::format::{Diagnostic, Severity};
use skill_runtime::wire::{AuditShape, pretty};

use crate::Format;
use crate::commands::{engine_over, write_out};

/// The subcommands this module adds.
#[derive(Debug, Subcommand)]
pub(crate) enum Commands {
    /// Scan skills for prompt injection, hidden text, encoded blobs and data sent out, and
    /// print the findings like a compiler. Exit 1 when a finding is at or above
    /// `--severity`, 0 otherwise, 2 on usage or I/O problems.
    Audit {
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// The lowest severity reported and counted for the exit code: warning or error.
        #[arg(long, default_value = "warning")]
        severity: String,
        /// Also read hidden folders (`.curated`, `.system`; never `.git` or `node_modules`),
        /// as `serve` does for a source with `include_hidden`.
        #[arg(long)]
        include_hidden: bool,
        /// A skill folder, or a root of many skills.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
}

/// Run `audit`; returns the exit code.
pub(crate) fn run(command: Commands, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    crate::commands::exit_code(run_inner(command, out), err)
}

fn run_inner(command: Commands, out: &mut dyn Write) -> Result<u8, String> {
    let Commands::Audit {
        format,
        severity,
        include_hidden,
        paths,
    } = command;
    let threshold = crate::trust_config::severity_named(&severity)?;
    let engine = engine_over(&paths, include_hidden)?;
    let found: Vec<(String, Diagnostic)> = engine
        .findings()
        .into_iter()
        .filter(|(_, d)| d.severity >= threshold)
        .collect();
    let errors = found
        .iter()
        .filter(|(_, d)| d.severity == Severity::Error)
        .count();
    let mut skills: Vec<&str> = found.iter().map(|(s, _)| s.as_str()).collect();
    skills.sort_unstable();
    skills.dedup();
    let text = if format == Format::Json {
        let entries = engine.entries();
        pretty(&AuditShape::new(
            &found,
            entries.skills.len() + entries.domains.len(),
        ))
    } else {
        let mut t = String::new();
        for (_, d) in &found {
            t.push_str(&d.to_string());
            t.push('\n');
        }
        t.push_str(&format!(
            "{} finding(s) ({errors} error(s), {} warning(s)) in {} skill(s)\n",
            found.len(),
            found.len() - errors,
            skills.len()
        ));
        t
    };
    write_out(out, &text)?;
    Ok(u8::from(!found.is_empty()))
}
