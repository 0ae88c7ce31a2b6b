//! `report`: the skill-pack crate's deterministic pack report, for review and snapshots.

use std::io::Write;
use std::path::PathBuf;

use clap::{Subcommand, ValueEnum};
use skill_pack::{ReportConfig, parse_instant};
use skill_runtime::registry::Budget;

use crate::commands::write_out;

/// How `report` writes the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ReportFormat {
    /// Plain text (the snapshot form).
    Text,
    /// One self-contained HTML page: the same sections, with pictures (inline CSS and SVG,
    /// nothing fetched), for a pull request's artefacts.
    Html,
}

/// The subcommands this module adds.
#[derive(Debug, Subcommand)]
pub(crate) enum Commands {
    /// Print one deterministic report of a pack: skills, diagnostics, shadowed entries,
    /// catalogs with budget reports, get_skill tiers, routed examples, schedules and the
    /// selections for the pack's `requests.txt`. No absolute paths or clock time, so it
    /// can be committed as a snapshot.
    Report {
        /// A pack folder; repeat for layers, lowest precedence first.
        #[arg(required = true)]
        packs: Vec<PathBuf>,
        /// The profile to disclose and select for.
        #[arg(long)]
        profile: Option<String>,
        /// Compute schedules' next fire times from this RFC 3339 instant
        /// (default 2026-01-01T00:00:00Z).
        #[arg(long)]
        at: Option<String>,
        /// The catalog budget in characters.
        #[arg(long)]
        budget_chars: Option<usize>,
        /// Read every file as this dialect instead of detecting it per file.
        #[arg(long, value_enum, default_value_t = crate::DialectArg::Auto)]
        dialect: crate::DialectArg,
        /// `text` (default) or `html`.
        #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
        format: ReportFormat,
    },
}

/// Run `report`; returns the exit code (0, or 2 on usage or I/O problems).
pub(crate) fn run(command: Commands, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    crate::commands::exit_code(run_inner(command, out).map(|()| 0), err)
}

fn run_inner(command: Commands, out: &mut dyn Write) -> Result<(), String> {
    let Commands::Report {
        packs,
        profile,
        at,
        budget_chars,
        dialect,
        format,
    } = command;
    let mut config = ReportConfig {
        profile,
        dialect: dialect.dialect(),
        budget: Budget {
            budget_chars,
            ..Budget::default()
        },
        ..ReportConfig::default()
    };
    if let Some(at) = at {
        config.at = parse_instant(&at).map_err(|e| format!("--at: {e}"))?;
    }
    let text = match format {
        ReportFormat::Text => skill_pack::report_with(&packs, &config),
        ReportFormat::Html => skill_pack::report_html(&packs, &config),
    }
    .map_err(|e| e.to_string())?;
    write_out(out, &text)
}
