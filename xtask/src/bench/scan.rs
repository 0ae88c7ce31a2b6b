//! `cargo xtask bench scan`: the content scan against a labelled hostile set and the real
//! corpus, beside the skill scanners users install, in one run.
//!
//! - Hostile side: every variant of the seeds in `xtask/data/scan-seeds.tsv`
//!   ([`super::scan_set`]) and of the public collections a registry ships
//!   ([`super::scan_collections`]: Spikee, PromptInject; each its own family), each written as a skill folder in a temporary directory. A
//!   variant is caught at error level when the registry's manifest of its skill holds an
//!   error-level finding (what excludes a low-trust skill), and flagged when it holds any.
//!   Recall is printed per family and overall for the `held` half (seeds never read while
//!   the patterns were written or changed: the headline) and for the `tune` half.
//! - Benign side: the real corpus, read in place (nothing of it is copied): every skill
//!   whose manifest holds an error-level finding is counted and listed, for a person to
//!   read.
//! - Peers, offline (no model calls): PyPI `cisco-ai-skill-scanner` (its static analyzers;
//!   HIGH or CRITICAL counts as error level, MEDIUM and above as flagged) and
//!   `skillscan-security`, installed by this bench into a virtual environment under
//!   `target/scan-peers/`. A peer that cannot be installed or run says why in its row.
//!
//! No figure here is timed; the scan's speed is `bench load`'s business.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args as ClapArgs;
use skill_format::Severity;
use skill_registry::{RegistryConfig, load_snapshot};

use super::scan_set::{self, Row, Variant, variant_name};
use crate::process::repo_root;

/// Arguments of `bench scan`.
#[derive(Debug, Clone, ClapArgs, Default)]
pub struct Args {
    /// The corpus folder. Default: `../shared/corpus` next to the repository.
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Leave the peer scanners out.
    #[arg(long)]
    no_peers: bool,
    /// Print the tuning half's variants this tree does not catch at error level (the
    /// held-out half's are never printed: tune on one half, report on the other).
    #[arg(long)]
    tune_misses: bool,
}

/// Run the benchmark and print its figures.
pub fn run(args: &Args) -> Result<ExitCode, String> {
    let root = repo_root()?;
    let mut seeds = scan_set::seeds(&root.join("xtask/data/scan-seeds.tsv"))?;
    let hand_written = seeds.len();
    let collections = super::scan_collections::collections(&root);
    for c in &collections {
        if let Ok(s) = &c.seeds {
            seeds.extend(s.iter().cloned());
        }
    }
    let variants = scan_set::variants(&seeds);
    let dir = tempfile::tempdir().map_err(|e| format!("cannot make a temporary folder: {e}"))?;
    let hostile = dir.path().join("hostile");
    write_variants(&hostile, &variants)?;
    let corpus = args
        .corpus
        .clone()
        .unwrap_or_else(|| root.parent().unwrap_or(&root).join("shared").join("corpus"));
    let corpus = corpus.is_dir().then_some(corpus);

    let mut rows = vec![ours(&hostile, variants.len(), corpus.as_deref())];
    if !args.no_peers {
        rows.extend(super::scan_peers::rows(
            &root,
            &hostile,
            variants.len(),
            corpus.as_deref(),
        ));
    }
    println!(
        "bench scan: {} hostile variants from {} seeds ({hand_written} hand-written, the rest from public collections; {} held-out, {} tuning), generated across markdown structures, look-alike and fullwidth letters, hidden characters and file encodings",
        variants.len(),
        seeds.len(),
        seeds.iter().filter(|s| s.half == "held").count(),
        seeds.iter().filter(|s| s.half == "tune").count(),
    );
    for c in &collections {
        match &c.seeds {
            Ok(s) => println!("  family {}: {} seeds from {}", c.family, s.len(), c.source),
            Err(e) => println!("  family {}: left out ({e}); from {}", c.family, c.source),
        }
    }
    for half in ["held", "tune"] {
        print_recall(half, &variants, &rows);
    }
    if args.tune_misses {
        print_tune_misses(&variants, &rows[0]);
    }
    print_corpus(&rows, corpus.as_deref());
    Ok(ExitCode::SUCCESS)
}

fn write_variants(dir: &Path, variants: &[Variant]) -> Result<(), String> {
    for (i, v) in variants.iter().enumerate() {
        let name = variant_name(i);
        let skill = dir.join(&name);
        std::fs::create_dir_all(skill.join("references")).map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&v.skill).replace("NAME", &name);
        std::fs::write(skill.join("SKILL.md"), text).map_err(|e| e.to_string())?;
        if let Some(bytes) = &v.resource {
            std::fs::write(skill.join("references/notes.md"), bytes).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// Our scan: the registry's manifests, as a low-trust source sees them.
fn ours(hostile: &Path, n: usize, corpus: Option<&Path>) -> Row {
    let found = judged(&[hostile.to_path_buf()]);
    let hostile_row = (0..n)
        .map(|i| {
            found
                .get(&hostile.join(variant_name(i)))
                .map_or((false, false), |f| (f.any, f.error.is_some()))
        })
        .collect();
    let corpus_row = corpus.map(|c| {
        let folders = top_folders(c);
        let found = judged(&folders);
        let mut flagged: Vec<String> = found
            .iter()
            .filter_map(|(dir, f)| {
                f.error
                    .as_ref()
                    .map(|e| format!("{}: {e}", dir.strip_prefix(c).unwrap_or(dir).display()))
            })
            .collect();
        flagged.sort();
        (flagged, found.len())
    });
    Row {
        name: "skills-engine (this tree)".to_owned(),
        hostile: Some(hostile_row),
        corpus: corpus_row,
        note: String::new(),
    }
}

/// A skill's findings in short: any at all, and the first error-level one.
struct Judged {
    any: bool,
    error: Option<String>,
}

/// Load each folder as a low-trust source and judge every entry's manifest, by folder.
fn judged(folders: &[PathBuf]) -> HashMap<PathBuf, Judged> {
    let sources = crate::audit::folder_sources(folders);
    let snapshot = load_snapshot(&RegistryConfig::with_sources(sources), 1);
    let mut out = HashMap::new();
    for skill in snapshot
        .entries()
        .chain(snapshot.domains())
        .chain(snapshot.shadowed())
    {
        let Some(m) = snapshot.manifest_of(skill) else {
            continue;
        };
        let error = m.findings().iter().find(|d| d.severity == Severity::Error);
        out.insert(
            skill.dir.clone(),
            Judged {
                any: !m.findings().is_empty(),
                error: error.map(|d| {
                    format!(
                        "{}:{} {} {}",
                        d.path.strip_prefix(&skill.dir).unwrap_or(&d.path).display(),
                        d.line.unwrap_or(0),
                        d.code,
                        d.message.chars().take(140).collect::<String>()
                    )
                }),
            },
        );
    }
    out
}

/// The corpus's top-level folders (one source each, as `audit-corpus` loads it).
pub(super) fn top_folders(corpus: &Path) -> Vec<PathBuf> {
    let mut folders: Vec<PathBuf> = std::fs::read_dir(corpus)
        .map(|r| {
            r.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    folders.sort();
    folders
}

fn pct(part: usize, whole: usize) -> String {
    if whole == 0 {
        "-".to_owned()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

fn print_recall(half: &str, variants: &[Variant], rows: &[Row]) {
    let title = if half == "held" {
        "held-out half (seeds never read while writing the patterns; the headline)"
    } else {
        "tuning half (seeds read while writing the patterns)"
    };
    println!("\nrecall, {title}: caught at error level / flagged at any level");
    let mut families: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, v) in variants.iter().enumerate().filter(|(_, v)| v.half == half) {
        families.entry(v.family.as_str()).or_default().push(i);
    }
    let all: Vec<usize> = families.values().flatten().copied().collect();
    print!("{:<14} {:>5}", "family", "n");
    for r in rows {
        print!("  {:>26}", truncate(&r.name, 26));
    }
    println!();
    let groups = families
        .iter()
        .map(|(f, ix)| (f.to_string(), ix.clone()))
        .chain(std::iter::once(("overall".to_owned(), all)));
    for (family, ix) in groups {
        print!("{:<14} {:>5}", family, ix.len());
        for r in rows {
            let cell = match &r.hostile {
                Some(h) => {
                    let error = ix.iter().filter(|&&i| h[i].1).count();
                    let any = ix.iter().filter(|&&i| h[i].0).count();
                    format!("{} / {}", pct(error, ix.len()), pct(any, ix.len()))
                }
                None => "did not run".to_owned(),
            };
            print!("  {cell:>26}");
        }
        println!();
    }
}

fn print_tune_misses(variants: &[Variant], ours: &Row) {
    let Some(h) = &ours.hostile else { return };
    println!("\ntuning-half variants not caught at error level:");
    for (i, v) in variants.iter().enumerate() {
        if v.half == "tune" && !h[i].1 {
            println!(
                "  {} {:<12} {:<16} {}",
                variant_name(i),
                v.family,
                v.transform,
                truncate(&v.seed.replace('\n', " "), 90)
            );
        }
    }
}

fn truncate(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

fn print_corpus(rows: &[Row], corpus: Option<&Path>) {
    let Some(corpus) = corpus else {
        println!("\ncorpus: not found (pass --corpus); no false-positive figures");
        return;
    };
    println!(
        "\ncorpus {} (benign side): skills flagged at error level",
        corpus.display()
    );
    for r in rows {
        match &r.corpus {
            Some((flagged, total)) => println!(
                "  {:<28} {} of {} ({})",
                r.name,
                flagged.len(),
                total,
                pct(flagged.len(), *total)
            ),
            None => println!("  {:<28} did not run: {}", r.name, r.note),
        }
    }
    for r in rows {
        if let Some((flagged, _)) = &r.corpus {
            println!("\nflagged by {} (read each):", r.name);
            for f in flagged {
                println!("  {f}");
            }
        }
    }
    for r in rows.iter().filter(|r| !r.note.is_empty()) {
        println!("\n{}: {}", r.name, r.note);
    }
}
