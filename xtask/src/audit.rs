//! `cargo xtask audit-corpus`: the content scan over a corpus of real skills, to measure
//! how often each finding code fires and to read a sample of findings (the false-positive
//! review). The corpus is read in place; nothing of it is written anywhere.
//!
//! Every top-level folder of the corpus is loaded as its own low-trust source; the
//! findings of every entry's manifest (winners, domain indexes and shadowed ones) are
//! counted per code, then `--sample` findings per code (spread evenly over the list, so
//! the sample is deterministic) are printed with the text of their line.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use skill_format::{Code, Diagnostic};
use skill_registry::{RegistryConfig, SCAN_CODES, Source, load_snapshot};

use crate::process::repo_root;

/// How much of a finding's line the sample shows.
const SHOWN_LINE_CHARS: usize = 160;

/// Arguments of `cargo xtask audit-corpus`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// The corpus folder. Default: `../shared/corpus` next to the repository.
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Findings printed per code (0 prints the counts only).
    #[arg(long, default_value_t = 20)]
    sample: usize,
}

/// Run the scan over the corpus and print counts and samples.
pub fn run(args: &AuditArgs) -> Result<ExitCode, String> {
    let corpus = match &args.corpus {
        Some(c) => c.clone(),
        None => {
            let root = repo_root()?;
            root.parent().unwrap_or(&root).join("shared").join("corpus")
        }
    };
    if !corpus.is_dir() {
        println!("skipped: no corpus at {}", corpus.display());
        return Ok(ExitCode::SUCCESS);
    }
    let mut folders: Vec<PathBuf> = fs::read_dir(&corpus)
        .map_err(|e| format!("cannot read {}: {e}", corpus.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    let sources = folder_sources(&folders);
    let config = RegistryConfig::with_sources(sources);
    let started = std::time::Instant::now();
    let snapshot = load_snapshot(&config, 1);
    let elapsed = started.elapsed();
    let mut skills = 0;
    let mut files = 0;
    let mut flagged_skills = 0;
    let mut by_code: BTreeMap<&'static str, Vec<Diagnostic>> = BTreeMap::new();
    for skill in snapshot
        .entries()
        .chain(snapshot.domains())
        .chain(snapshot.shadowed())
    {
        let Some(m) = snapshot.manifest_of(skill) else {
            continue;
        };
        skills += 1;
        files += m.files().len();
        if !m.findings().is_empty() {
            flagged_skills += 1;
        }
        for d in m.findings() {
            by_code.entry(d.code.as_str()).or_default().push(d.clone());
        }
    }
    println!(
        "scanned {skills} skills, {files} files in {:.2}s; {flagged_skills} skills with findings",
        elapsed.as_secs_f64()
    );
    println!("{:<30} {:>8} {:>8}", "code", "findings", "skills");
    for code in SCAN_CODES {
        let list = by_code.get(code.as_str()).map(Vec::as_slice).unwrap_or(&[]);
        println!(
            "{:<30} {:>8} {:>8}",
            code.as_str(),
            list.len(),
            distinct_skills(list, &corpus)
        );
    }
    if args.sample > 0 {
        for code in SCAN_CODES {
            sample(*code, by_code.get(code.as_str()), args.sample, &corpus);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Skills (folders of a `SKILL.md`, or single files) among the findings.
fn distinct_skills(list: &[Diagnostic], corpus: &Path) -> usize {
    let mut dirs: Vec<&Path> = list
        .iter()
        .map(|d| d.path.parent().unwrap_or(corpus))
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs.len()
}

fn sample(code: Code, list: Option<&Vec<Diagnostic>>, n: usize, corpus: &Path) {
    let Some(list) = list.filter(|l| !l.is_empty()) else {
        return;
    };
    println!("\n== {code} ({} findings) ==", list.len());
    let step = (list.len() / n).max(1);
    for d in list.iter().step_by(step).take(n) {
        let rel = d.path.strip_prefix(corpus).unwrap_or(&d.path);
        let line = d.line.and_then(|l| line_of(&d.path, l)).unwrap_or_default();
        let shown: String = line.trim().chars().take(SHOWN_LINE_CHARS).collect();
        println!(
            "{}:{}:{}: {}\n    | {}",
            rel.display(),
            d.line.unwrap_or(0),
            d.column.unwrap_or(0),
            d.message,
            shown.escape_debug()
        );
    }
}

fn line_of(path: &Path, line: u32) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    text.split('\n')
        .nth(usize::try_from(line).ok()?.checked_sub(1)?)
        .map(str::to_owned)
}

/// One source per folder, each its own layer named after the folder (the corpus's packs).
pub(crate) fn folder_sources(folders: &[PathBuf]) -> Vec<Source> {
    folders
        .iter()
        .map(|p| {
            let layer = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            Source::new(p, layer)
        })
        .collect()
}
