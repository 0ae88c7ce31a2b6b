//! `audit`: the content scan's findings over skill folders (every file of every skill, its
//! resources included), for review before a pack is trusted.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use clap::Subcommand;
use serde_json::json;
use skill_format::{Diagnostic, Severity};
use skill_registry::{Snapshot, load_snapshot};

use crate::Format;
use crate::commands::{check_paths, layered_config, write_out};

/// The subcommands this module adds.
#[derive(Debug, Subcommand)]
pub enum Commands {
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
        /// A skill folder, or a root of many skills.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
}

/// Run `audit`; returns the exit code.
pub fn run(command: Commands, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    match run_inner(command, out) {
        Ok(code) => code,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            2
        }
    }
}

/// Every finding of a snapshot (winners, domain indexes, shadowed entries), each with the
/// skill it belongs to, by path, line and column.
pub(crate) fn findings(snapshot: &Snapshot) -> Vec<(String, Diagnostic)> {
    let mut out: Vec<(String, Diagnostic)> = snapshot
        .entries()
        .chain(snapshot.domains())
        .chain(snapshot.shadowed())
        .filter_map(|s| snapshot.manifest_of(s).map(|m| (s, m)))
        .flat_map(|(s, m)| m.findings().iter().map(|d| (s.name.clone(), d.clone())))
        .collect();
    out.sort_by(|(_, a), (_, b)| {
        a.path
            .cmp(&b.path)
            .then(a.line.cmp(&b.line))
            .then(a.column.cmp(&b.column))
    });
    out.dedup_by(|a, b| a.1 == b.1);
    out
}

fn run_inner(command: Commands, out: &mut dyn Write) -> Result<u8, String> {
    let Commands::Audit {
        format,
        severity,
        paths,
    } = command;
    let threshold = crate::trust_config::severity_named(&severity)?;
    check_paths(&paths)?;
    let config = layered_config(&paths, |_, p| p.display().to_string());
    let snapshot = load_snapshot(&config, 1);
    let found: Vec<(String, Diagnostic)> = findings(&snapshot)
        .into_iter()
        .filter(|(_, d)| d.severity >= threshold)
        .collect();
    let errors = found
        .iter()
        .filter(|(_, d)| d.severity == Severity::Error)
        .count();
    let mut per_code: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, d) in &found {
        *per_code.entry(d.code.as_str()).or_default() += 1;
    }
    let mut skills: Vec<&str> = found.iter().map(|(s, _)| s.as_str()).collect();
    skills.sort_unstable();
    skills.dedup();
    let text = if format == Format::Json {
        let list: Vec<serde_json::Value> = found
            .iter()
            .map(|(skill, d)| {
                json!({
                    "skill": skill,
                    "path": d.path,
                    "line": d.line,
                    "column": d.column,
                    "severity": d.severity,
                    "code": d.code,
                    "message": d.message,
                })
            })
            .collect();
        let mut t = serde_json::to_string_pretty(&json!({
            "findings": list,
            "counts": per_code,
            "skills_with_findings": skills.len(),
            "skills_scanned": snapshot.entries().count() + snapshot.domains().count(),
        }))
        .map_err(|e| format!("cannot render JSON: {e}"))?;
        t.push('\n');
        t
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
