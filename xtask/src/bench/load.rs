//! `bench load`: the cost of reading skills.
//!
//! - Corpus (real-world `SKILL.md` files, pre-read into memory): (a) `serde_yaml` over each
//!   file's frontmatter alone (split beforehand, untimed) against (b) the full
//!   `skill_format::parse_skill`. Target: (b) <= 1.25x (a).
//! - Generated pack (N skill folders in a temporary folder): (c) walking the folders and
//!   `std::fs::read` of every `SKILL.md` on one thread against (d) a full
//!   `skill_registry::load_snapshot` (discovery, parsing on every core, precedence,
//!   eligibility, the per-file manifest and content scan). Target: (d) <= 2x (c).
//! - The manifest, for reference (no target): (e) the pass alone, cold (every file read
//!   again, hashed and scanned, on one thread), against (c), which reads the same files on
//!   one thread: what hashing and the content scan add to reading. (The load's own pass
//!   reuses the parse's reads, so (e) is not a part of (d).)
//! - The corpus as a user validates it: `cat` of its `SKILL.md` files against the release
//!   `skill-server validate` of the folder, both whole processes (`validate_proc.rs`).
//!   Target: <= 1.5x.

use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};

use clap::Args;
use skill_format::{Origin, ParseOptions, parse_skill, split};
use skill_registry::{RegistryConfig, Source, load_snapshot};

use super::Table;
use super::generate;
use super::timing::measure_pair;
use crate::process::repo_root;

/// Default number of timed runs.
const DEFAULT_ITERATIONS: usize = 5;
/// Default size of the generated pack.
const DEFAULT_GENERATED: usize = 10_000;
/// Target for parse + validate over YAML alone.
const PARSE_TARGET: f64 = 1.25;
/// Target for a registry load over reading the files.
const LOAD_TARGET: f64 = 2.0;

/// Arguments of `bench load`.
#[derive(Debug, Args)]
pub struct LoadArgs {
    /// Folder of real-world skills, searched recursively for `SKILL.md` (hidden folders
    /// included). Default: `../shared/corpus` next to the repository (or `../../shared/corpus`,
    /// for a worktree in a folder of worktrees); skipped when absent.
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Number of skills in the generated pack (0 skips it).
    #[arg(long, default_value_t = DEFAULT_GENERATED)]
    generated: usize,
    /// Timed runs per measurement (the median is reported).
    #[arg(long, default_value_t = DEFAULT_ITERATIONS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    iterations: usize,
}

impl Default for LoadArgs {
    fn default() -> Self {
        LoadArgs {
            corpus: None,
            generated: DEFAULT_GENERATED,
            iterations: DEFAULT_ITERATIONS,
        }
    }
}

/// Run both halves, adding their rows to `table`.
pub fn run(args: &LoadArgs, table: &mut Table) -> Result<(), String> {
    let corpus = match &args.corpus {
        Some(c) => c.clone(),
        None => default_corpus()?,
    };
    corpus_bench(&corpus, args.iterations, table);
    if args.generated == 0 {
        table.skipped("load: generated pack", "--generated 0");
    } else {
        generated_bench(args.generated, args.iterations, table);
    }
    Ok(())
}

/// The corpus of real skills: `../shared/corpus` next to the repository, or next to a
/// folder of worktrees (the first that exists; else the first of them).
pub(super) fn default_corpus() -> Result<PathBuf, String> {
    let root = repo_root()?;
    let candidates: Vec<PathBuf> = root
        .ancestors()
        .skip(1)
        .take(2)
        .map(|a| a.join("shared").join("corpus"))
        .collect();
    Ok(candidates
        .iter()
        .find(|c| c.is_dir())
        .or(candidates.first())
        .cloned()
        .unwrap_or_else(|| root.join("shared").join("corpus")))
}

/// One corpus file in memory.
struct CorpusFile {
    bytes: Vec<u8>,
    opts: ParseOptions,
}

/// Every `SKILL.md` under `dir`, recursively, hidden folders included; symbolic links to
/// folders are not followed. Sorted by path. Returns the files and the unreadable paths.
pub(super) fn collect_skill_files(dir: &Path) -> (Vec<PathBuf>, Vec<String>) {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = match fs::read_dir(&d) {
            Ok(e) => e,
            Err(e) => {
                problems.push(format!("{}: {e}", d.display()));
                continue;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    problems.push(format!("{}: {e}", d.display()));
                    continue;
                }
            };
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                stack.push(path);
            } else if entry.file_name() == "SKILL.md" && (kind.is_file() || path.is_file()) {
                found.push(path);
            }
        }
    }
    found.sort();
    (found, problems)
}

fn corpus_bench(dir: &Path, iterations: usize, table: &mut Table) {
    const YAML: &str = "load: corpus yaml alone (serde_yaml)";
    const PARSE: &str = "load: corpus parse + validate";
    if !dir.is_dir() {
        table.skipped("load: corpus", format!("no corpus at {}", dir.display()));
        return;
    }
    let (paths, mut problems) = collect_skill_files(dir);
    let mut files = Vec::with_capacity(paths.len());
    let mut read_paths = Vec::with_capacity(paths.len());
    for path in paths {
        match fs::read(&path) {
            Ok(bytes) => {
                let folder = skill_format::folder_name_of(&path);
                read_paths.push(path.clone());
                files.push(CorpusFile {
                    bytes,
                    opts: ParseOptions::new(path, Origin::folder(folder)),
                });
            }
            Err(e) => problems.push(format!("{}: {e}", path.display())),
        }
    }
    if files.is_empty() {
        table.skipped(
            "load: corpus",
            format!("no SKILL.md under {}", dir.display()),
        );
        return;
    }
    let count = files.len();
    let bytes: u64 = files.iter().map(|f| f.bytes.len() as u64).sum();

    // Split outside the timed region: (a) times serde_yaml alone.
    let frontmatters: Vec<&str> = files
        .iter()
        .filter_map(|f| std::str::from_utf8(&f.bytes).ok())
        .filter_map(|text| split(text).ok())
        .filter_map(|doc| doc.frontmatter.map(|fm| fm.text))
        .collect();
    let fm_bytes: usize = frontmatters.iter().map(|t| t.len()).sum();
    let yaml_ok = frontmatters
        .iter()
        .filter(|t| serde_yaml::from_str::<serde_yaml::Value>(t).is_ok())
        .count();
    let loadable = files
        .iter()
        .filter(|f| parse_skill(&f.bytes, &f.opts).is_loadable())
        .count();

    let ((yaml_time, ()), (parse_time, ())) = measure_pair(
        iterations,
        || {
            for text in &frontmatters {
                let _ = black_box(serde_yaml::from_str::<serde_yaml::Value>(black_box(text)));
            }
        },
        || {
            for f in &files {
                let _ = black_box(parse_skill(black_box(&f.bytes), &f.opts));
            }
        },
    );
    let base = table.baseline(YAML, count, bytes, yaml_time);
    table.compared(PARSE, count, bytes, parse_time, base, PARSE_TARGET);
    table.note(format!(
        "corpus: {count} SKILL.md files, {:.2} MB under {}; {} with frontmatter ({:.2} MB of YAML, {yaml_ok} valid for serde_yaml); {loadable} loadable; MB/s counts whole files in both rows",
        bytes as f64 / 1e6,
        dir.display(),
        frontmatters.len(),
        fm_bytes as f64 / 1e6,
    ));
    super::validate_proc::run(dir, &read_paths, bytes, iterations, table);
    if !problems.is_empty() {
        table.note(format!(
            "corpus: {} paths could not be read, e.g. {}",
            problems.len(),
            problems.first().map_or("", String::as_str)
        ));
    }
}

fn generated_bench(n: usize, iterations: usize, table: &mut Table) {
    const READ: &str = "load: generated read floor (fs::read)";
    const LOAD: &str = "load: generated registry load";
    let dir = match tempfile::Builder::new()
        .prefix("xtask-bench-load-")
        .tempdir()
    {
        Ok(d) => d,
        Err(e) => {
            table.error(
                "load: generated pack",
                format!("cannot create a temporary folder: {e}"),
            );
            return;
        }
    };
    let root = dir.path();
    let bytes = match generate::write_pack(root, n) {
        Ok(b) => b,
        Err(e) => {
            table.error("load: generated pack", e);
            return;
        }
    };

    let mut config = RegistryConfig::with_sources(vec![Source::new(root, "bench")]);
    config.discover.max_folders = config.discover.max_folders.max(n.saturating_add(16));
    // (c) walks the root and reads every SKILL.md on one thread; (d) is a full load.
    let ((read_time, read), (load_time, snapshot)) =
        measure_pair(iterations, || read_all(root), || load_snapshot(&config, 1));
    let (read_count, read_bytes) = match read {
        Ok(r) => r,
        Err(e) => {
            table.error(READ, e);
            return;
        }
    };
    if read_count != n || read_bytes != bytes {
        table.error(
            READ,
            format!("read {read_count} files / {read_bytes} bytes, wrote {n} / {bytes}"),
        );
        return;
    }
    let base = table.baseline(READ, n, bytes, read_time);
    let loaded = snapshot.skills().count();
    if loaded == n {
        table.compared(LOAD, n, bytes, load_time, base, LOAD_TARGET);
    } else {
        let first = snapshot
            .diagnostics()
            .first()
            .map(ToString::to_string)
            .unwrap_or_default();
        table.error(
            LOAD,
            format!(
                "snapshot holds {loaded} loaded skills, expected {n} ({} errors, {} warnings) {first}",
                snapshot.error_count(),
                snapshot.warning_count()
            ),
        );
    }
    manifest_bench(&snapshot, root, (n, bytes), load_time, iterations, table);
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    table.note(format!(
        "generated: {n} skills, {:.2} MB in a temporary folder; read floor on 1 thread, registry load on {threads}",
        bytes as f64 / 1e6
    ));
}

/// The per-file manifest (SHA-256 of every file, content scan of every text file): (e) the
/// pass alone, cold (every file read, hashed and scanned, on one thread), against (c) the
/// read floor of `root`, timed in alternation with it, for reference (`load_time`: the
/// whole load's median, for the note).
fn manifest_bench(
    snapshot: &skill_registry::Snapshot,
    root: &Path,
    (n, bytes): (usize, u64),
    load_time: std::time::Duration,
    iterations: usize,
    table: &mut Table,
) {
    const MANIFEST: &str = "load: manifest pass, cold (read + hash + scan)";
    let entries: Vec<_> = snapshot.entries().cloned().collect();
    let ((read_time, _), (manifest_time, files)) = measure_pair(
        iterations,
        || read_all(root),
        || {
            entries
                .iter()
                .map(|s| {
                    black_box(skill_registry::FileManifest::compute(s))
                        .files()
                        .len()
                })
                .sum::<usize>()
        },
    );
    if files < n {
        table.error(
            MANIFEST,
            format!("{files} files in the manifests, expected at least {n}"),
        );
        return;
    }
    table.compared(MANIFEST, n, bytes, manifest_time, read_time, f64::INFINITY);
    // The load reuses its parse's reads for the pass, so the cold pass is not a part of the
    // load's time that subtracting it would leave the rest of: say only what was measured.
    table.note(format!(
        "manifest: {files} files; the cold pass (one thread, every file read again) took {:.1} ms against a read floor of {:.1} ms timed beside it, the whole load {:.1} ms (its pass reuses the parse's reads)",
        manifest_time.as_secs_f64() * 1e3,
        read_time.as_secs_f64() * 1e3,
        load_time.as_secs_f64() * 1e3
    ));
}

/// Read every `<root>/<folder>/SKILL.md`: the number of files and their total bytes.
pub(super) fn read_all(root: &Path) -> Result<(usize, u64), String> {
    let entries = fs::read_dir(root).map_err(|e| format!("cannot list {}: {e}", root.display()))?;
    let mut count = 0;
    let mut total = 0u64;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", root.display()))?;
        let file = entry.path().join("SKILL.md");
        let data = fs::read(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        count += 1;
        total += black_box(data).len() as u64;
    }
    Ok((count, total))
}
