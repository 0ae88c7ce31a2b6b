//! `cargo xtask snapshot`: the pack report (skill-pack) of every bundled pack, checked
//! against the committed reports in `tests/pack-reports/<pack>.txt`.
//!
//! `cargo xtask snapshot` fails with a summary of the changed lines when a report drifts;
//! `cargo xtask snapshot --update` rewrites the files. The workspace test
//! `tests/tests/pack_reports.rs` makes the same comparison, so CI fails on drift too.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use skill_format::Dialect;
use skill_pack::ReportConfig;

use crate::process::repo_root;

/// The packs reported: every folder under `packs/`, sorted by name, read as the dialect its
/// name spells (`packs/lily` as lily) or, for any other name, with the dialect detected per
/// file. `packs/broken` is included: its report is the diagnostics catalogue. The workspace
/// test `tests/tests/pack_reports.rs` derives the same list the same way.
pub fn packs(root: &Path) -> Result<Vec<(String, Option<Dialect>)>, String> {
    let dir = root.join("packs");
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let dialect = name.parse().ok();
        out.push((name, dialect));
    }
    out.sort();
    Ok(out)
}

/// Where the committed reports live, relative to the repository root.
pub const REPORTS_DIR: &str = "tests/pack-reports";

/// Changed lines shown per pack in the drift summary.
const MAX_SHOWN_LINES: usize = 20;

/// Arguments of `cargo xtask snapshot`.
#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// Rewrite the committed reports instead of checking them.
    #[arg(long)]
    update: bool,
}

/// Render every pack's report and check (or with `--update`, write) the committed file.
/// Exit 1 when a report drifted.
pub fn run(args: &SnapshotArgs) -> Result<ExitCode, String> {
    let root = repo_root()?;
    let dir = root.join(REPORTS_DIR);
    if args.update {
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut drifted = 0;
    for (name, dialect) in packs(&root)? {
        let text = render(&root, &name, dialect)?;
        let file = dir.join(format!("{name}.txt"));
        let old = match std::fs::read_to_string(&file) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(format!("{}: {e}", file.display())),
        };
        if old.as_deref() == Some(text.as_str()) {
            println!("ok       packs/{name}");
            continue;
        }
        if args.update {
            std::fs::write(&file, &text).map_err(|e| format!("{}: {e}", file.display()))?;
            println!("updated  {}", rel(&root, &file));
            continue;
        }
        drifted += 1;
        match old {
            None => println!("missing  {} (no committed report)", rel(&root, &file)),
            Some(old) => {
                println!("drifted  packs/{name} vs {}", rel(&root, &file));
                print!("{}", summary(&old, &text));
            }
        }
    }
    if drifted > 0 {
        println!(
            "{drifted} pack report{} differ from the committed ones; if the change is intended, \
             run `cargo xtask snapshot --update` and commit {REPORTS_DIR}/",
            if drifted == 1 { "" } else { "s" }
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// The report of `packs/<name>`, as committed.
pub fn render(root: &Path, name: &str, dialect: Option<Dialect>) -> Result<String, String> {
    let config = ReportConfig {
        dialect,
        ..ReportConfig::default()
    };
    skill_pack::report_with(&[root.join("packs").join(name)], &config)
        .map_err(|e| format!("packs/{name}: {e}"))
}

fn rel(root: &Path, p: &Path) -> String {
    p.strip_prefix(root)
        .map_or_else(|_| p.to_path_buf(), PathBuf::from)
        .display()
        .to_string()
}

/// A short line diff: each line only in the committed report (`-`) or only in the new one
/// (`+`), with its line number, at most [`MAX_SHOWN_LINES`].
fn summary(old: &str, new: &str) -> String {
    let old: Vec<&str> = old.lines().collect();
    let new: Vec<&str> = new.lines().collect();
    let mut out = String::new();
    let mut shown = 0;
    let mut total = 0;
    let mut note = |out: &mut String, sign: char, line: usize, text: &str| {
        total += 1;
        if shown < MAX_SHOWN_LINES {
            shown += 1;
            let _ = writeln!(out, "  {sign}{line:>5}: {text}");
        }
    };
    // Skip the common start and end; show what lies between.
    let start = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let end = old[start..]
        .iter()
        .rev()
        .zip(new[start..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    for (i, l) in old[start..old.len() - end].iter().enumerate() {
        note(&mut out, '-', start + i + 1, l);
    }
    for (i, l) in new[start..new.len() - end].iter().enumerate() {
        note(&mut out, '+', start + i + 1, l);
    }
    if total > shown {
        let _ = writeln!(out, "  ... {} more changed lines", total - shown);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::summary;

    #[test]
    fn summary_shows_only_the_changed_middle() {
        let s = summary("a\nb\nc\nd\n", "a\nB\nc\nd\n");
        assert_eq!(s, "  -    2: b\n  +    2: B\n");
        assert_eq!(summary("a\n", "a\n"), "");
        let many_old: String = (0..30).map(|i| format!("{i}\n")).collect();
        let s = summary(&many_old, "x\n");
        assert!(s.ends_with("  ... 11 more changed lines\n"), "{s}");
    }
}
