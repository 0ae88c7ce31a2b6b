//! `bench search` and `bench select`: the skill-search crate.
//!
//! `bench search`, on the corpus (each pack a layer) and on a generated pack:
//! - index build time against the registry load it indexes (baseline);
//! - per-request latency of `search` and `select` against the seed's keyword fast path
//!   (substring match, agent-skills-integration 6.2) over the same requests; p50/p99 in the
//!   notes, with the target p99 under 1 ms at 10,000 skills;
//! - incremental update of one changed skill (`SkillIndex::apply` on the registry's change
//!   set) against a full `rebuild` (baseline);
//! - resident memory added by building the index (Linux `/proc/self/status`).
//!
//! - on the corpus, the accuracy figures of `bench select` (shipped weights in-sample,
//!   cross-validated, and the fast path) beside the latencies.
//!
//! `bench select`: accuracy of `select` over the labelled request set
//! (`skill-search/tests/data/requests.jsonl`, over the corpus): top-1, top-3, no-skill
//! precision and recall, next to the fast path's in the same run, and the calibration
//! table (top candidates binned by confidence, with the share that was right). The text
//! model's shipped weights were fitted on that same set, so those figures are in-sample;
//! beside them come the figures of a k-fold cross-validation (weights refitted in code on
//! k-1 folds, the held-out fold scored with them), the in-sample figures of that in-code
//! fit over every request (the fair comparison for the held-out ones), and the held-out
//! calibration table.

use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args as ClapArgs;
use skill_registry::{ChangeSet, Registry, RegistryConfig, Snapshot, Source, load_snapshot};
use skill_search::quality::{self, CalibrationBin, Case, CrossValidation, FastPath, Report};
use skill_search::{SearchRequest, SelectOptions, SkillIndex, TextModel};

use super::Table;
use super::generate;
use super::timing::{measure_pair, median};
use crate::process::repo_root;

/// Default number of timed runs of whole-set measurements.
const DEFAULT_ITERATIONS: usize = 5;
/// Default size of the generated pack.
const DEFAULT_GENERATED: usize = 10_000;
/// Default passes over the request list for latency percentiles.
const DEFAULT_PASSES: usize = 20;
/// p99 latency target for search and selection at 10,000 skills.
const P99_TARGET: Duration = Duration::from_millis(1);
/// Index build may take at most this many times the registry load it indexes.
const BUILD_TARGET: f64 = 3.0;
/// One query may take at most this many times the fast path's.
const QUERY_TARGET: f64 = 50.0;
/// An incremental update may take at most this share of a full rebuild.
const UPDATE_TARGET: f64 = 0.1;

/// Command-line arguments of `bench search` and `bench select`.
#[derive(Debug, Clone, ClapArgs)]
pub struct Args {
    /// Folder of skill packs (each sub-folder a layer). Default: `../shared/corpus` next
    /// to the repository; skipped when absent.
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// The labelled request set. Default: `skill-search/tests/data/requests.jsonl`.
    #[arg(long)]
    requests: Option<PathBuf>,
    /// Number of skills in the generated pack (0 skips it).
    #[arg(long, default_value_t = DEFAULT_GENERATED)]
    generated: usize,
    /// Timed runs of whole-set measurements (the median is reported).
    #[arg(long, default_value_t = DEFAULT_ITERATIONS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    iterations: usize,
    /// Passes over the requests for the latency percentiles.
    #[arg(long, default_value_t = DEFAULT_PASSES, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    passes: usize,
}

impl Default for Args {
    fn default() -> Self {
        Args {
            corpus: None,
            requests: None,
            generated: DEFAULT_GENERATED,
            iterations: DEFAULT_ITERATIONS,
            passes: DEFAULT_PASSES,
        }
    }
}

impl Args {
    fn corpus(&self) -> Result<PathBuf, String> {
        match &self.corpus {
            Some(c) => Ok(c.clone()),
            None => {
                let root = repo_root()?;
                Ok(root.parent().unwrap_or(&root).join("shared").join("corpus"))
            }
        }
    }

    fn requests(&self) -> Result<Vec<Case>, String> {
        let path = match &self.requests {
            Some(p) => p.clone(),
            None => repo_root()?
                .join("skill-search")
                .join("tests")
                .join("data")
                .join("requests.jsonl"),
        };
        let text = fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        quality::parse_cases(&text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// The corpus as a registry configuration: each sub-folder a layer, in name order.
fn corpus_config(dir: &Path) -> Result<RegistryConfig, String> {
    let mut packs: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    packs.sort();
    let sources = packs
        .iter()
        .enumerate()
        .map(|(i, p)| Source::new(p.clone(), format!("layer{}", i + 1)))
        .collect();
    Ok(RegistryConfig::with_sources(sources))
}

/// Resident set size of this process, in bytes (Linux only).
fn rss_bytes() -> Option<u64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((sorted.len() as f64) * p).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn micros(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

/// Per-request latencies of `f` over `requests`, `passes` times; sorted.
fn latencies(requests: &[String], passes: usize, mut f: impl FnMut(&str)) -> Vec<Duration> {
    let mut out = Vec::with_capacity(requests.len() * passes);
    for r in requests {
        f(r); // warm-up
    }
    for _ in 0..passes {
        for r in requests {
            let t = Instant::now();
            f(r);
            out.push(t.elapsed());
        }
    }
    out.sort_unstable();
    out
}

/// Run `bench search`.
pub fn run(args: &Args, table: &mut Table) -> Result<(), String> {
    let corpus = args.corpus()?;
    if corpus.is_dir() {
        let cases = args.requests().unwrap_or_default();
        let requests: Vec<String> = cases.iter().map(|c| c.request.clone()).collect();
        let config = corpus_config(&corpus)?;
        if let Some((index, snapshot)) =
            suite("search corpus", &config, &requests, None, args, table)
        {
            if !cases.is_empty() {
                let opts = SelectOptions::default();
                match accuracy(&index, &snapshot, &cases, &opts) {
                    Ok(a) => {
                        for line in a.summary("search corpus: accuracy") {
                            table.note(line);
                        }
                    }
                    Err(e) => table.error("search corpus: accuracy", e),
                }
            }
        }
    } else {
        table.skipped(
            "search: corpus",
            format!("no corpus at {}", corpus.display()),
        );
    }
    if args.generated == 0 {
        table.skipped("search: generated pack", "--generated 0");
        return Ok(());
    }
    let dir = tempfile::Builder::new()
        .prefix("xtask-bench-search-")
        .tempdir()
        .map_err(|e| format!("cannot create a temporary folder: {e}"))?;
    generate::write_pack(dir.path(), args.generated)?;
    let mut config = RegistryConfig::with_sources(vec![Source::new(dir.path(), "bench")]);
    config.discover.max_folders = config
        .discover
        .max_folders
        .max(args.generated.saturating_add(16));
    let requests = generated_requests();
    let edit = generate::folder_name(args.generated / 2, args.generated);
    suite(
        &format!("search {}k generated", args.generated / 1000),
        &config,
        &requests,
        Some((dir.path(), edit)),
        args,
        table,
    );
    Ok(())
}

/// Requests phrased over the generated pack's vocabulary, plus some that fit nothing.
fn generated_requests() -> Vec<String> {
    let mut out = Vec::new();
    for (verb, object, domain) in [
        ("summarise", "the invoices", "finance"),
        ("convert", "these CSV exports", "operations"),
        ("validate", "our API schemas", "engineering"),
        ("draft", "release notes", "marketing"),
        ("review", "the pull requests", "engineering"),
        ("extract", "numbers from the log files", "support"),
        ("plan", "calendar events", "research"),
        ("audit", "the spreadsheets", "legal"),
        ("translate", "the design documents", "marketing"),
        ("index", "support tickets", "support"),
    ] {
        out.push(format!("please {verb} {object} for the {domain} team"));
        out.push(format!("can you {verb} {object}?"));
    }
    out.push("use skill-00042 on this".into());
    out.push("what's the capital of Australia?".into());
    out.push("thanks, that's all".into());
    out.push("name:foo AND (bar OR \"baz".into());
    out
}

/// Build, query and update benchmarks over one pack; returns the index built (and its
/// snapshot) unless building failed.
fn suite(
    label: &str,
    config: &RegistryConfig,
    requests: &[String],
    edit: Option<(&Path, String)>,
    args: &Args,
    table: &mut Table,
) -> Option<(SkillIndex, Arc<Snapshot>)> {
    // Memory first, on a fresh heap: RSS before and after the first build.
    let load_once = load_snapshot(config, 1);
    let n = load_once.skills().count();
    let snapshot = Arc::new(load_once);
    let before = rss_bytes();
    let index = match SkillIndex::build(snapshot.clone()) {
        Ok(i) => i,
        Err(e) => {
            table.error(&format!("{label}: index build"), e.to_string());
            return None;
        }
    };
    let after = rss_bytes();
    let rss = match (before, after) {
        (Some(b), Some(a)) => format!(
            "RSS grew by {:.1} MB over the first build (process RSS {:.1} MB)",
            a.saturating_sub(b) as f64 / 1e6,
            a as f64 / 1e6
        ),
        _ => "RSS not available on this OS".to_owned(),
    };
    table.note(format!(
        "{label}: {n} skills; tantivy index {:.1} MB; {rss}",
        index.index_bytes() as f64 / 1e6
    ));

    // Build time: registry load (baseline) vs index build over its snapshot.
    let ((load_time, _), (build_time, built)) = measure_pair(
        args.iterations,
        || load_snapshot(config, 1),
        || SkillIndex::build(snapshot.clone()),
    );
    if let Err(e) = built {
        table.error(&format!("{label}: index build"), e.to_string());
        return None;
    }
    let base = table.baseline(
        &format!("{label}: registry load (baseline)"),
        n,
        0,
        load_time,
    );
    table.compared(
        &format!("{label}: index build"),
        n,
        0,
        build_time,
        base,
        BUILD_TARGET,
    );

    latency_rows(label, &index, &snapshot, requests, args, table);
    update_rows(label, config, &index, snapshot.clone(), edit, args, table);
    // The updates re-indexed the snapshot itself; start the accuracy run from a fresh index
    // so recent-use and segment layout do not differ from `bench select`'s.
    match SkillIndex::build(snapshot.clone()) {
        Ok(i) => Some((i, snapshot)),
        Err(e) => {
            table.error(&format!("{label}: index build"), e.to_string());
            None
        }
    }
}

/// Accuracy of selection over a labelled set, every way `bench select` reports it.
struct Accuracy {
    /// Shipped weights, scored on the set they were fitted on.
    in_sample: Report,
    /// Its calibration table.
    calibration: Vec<CalibrationBin>,
    /// Refitted in code: held out, and in-sample.
    cv: CrossValidation,
    /// The seed's fast path, trigger keywords only.
    triggers_only: Report,
    /// The fast path with skill names as keywords too.
    named: Report,
}

fn accuracy(
    index: &SkillIndex,
    snapshot: &Snapshot,
    cases: &[Case],
    opts: &SelectOptions,
) -> Result<Accuracy, String> {
    let (in_sample, calibration) =
        quality::evaluate_index(index, cases, opts).map_err(|e| e.to_string())?;
    let cv = quality::cross_validate(index, cases, opts, quality::DEFAULT_FOLDS)
        .map_err(|e| e.to_string())?;
    Ok(Accuracy {
        in_sample,
        calibration,
        cv,
        triggers_only: FastPath::new(snapshot, false).evaluate(snapshot, cases),
        named: FastPath::new(snapshot, true).evaluate(snapshot, cases),
    })
}

/// One line of accuracy figures.
fn accuracy_line(name: &str, r: &Report) -> String {
    format!(
        "{name}: ranked top-1 {:.1}% top-3 {:.1}%; selected top-1 {:.1}% top-3 {:.1}% ({} requests with a skill); no-skill precision {:.1}% recall {:.1}% ({} answered none, {} need none)",
        100.0 * r.ranked_top1_accuracy(),
        100.0 * r.ranked_top3_accuracy(),
        100.0 * r.top1_accuracy(),
        100.0 * r.top3_accuracy(),
        r.with_skill,
        100.0 * r.no_skill_precision(),
        100.0 * r.no_skill_recall(),
        r.said_none,
        r.without_skill,
    )
}

fn calibration_line(title: &str, bins: &[CalibrationBin]) -> String {
    let cells: Vec<String> = bins
        .iter()
        .map(|b| {
            let share = if b.count == 0 {
                "-".to_owned()
            } else {
                format!("{:.0}%", 100.0 * b.correct as f64 / b.count as f64)
            };
            format!(
                "[{:.1},{:.1}) {}/{} right ({share})",
                b.low, b.high, b.correct, b.count
            )
        })
        .collect();
    format!("{title}: {}", cells.join("; "))
}

fn model_line(m: &TextModel) -> String {
    format!(
        "bias {:.2}, coverage {:.2}, mass {:.2}, name {:.2}, relative {:.2}",
        m.bias, m.coverage, m.mass, m.name, m.relative
    )
}

impl Accuracy {
    /// The selected top-1 / top-3 and no-skill precision of each selector, one line each.
    fn summary(&self, label: &str) -> Vec<String> {
        let short = |name: &str, r: &Report| {
            format!(
                "{label}: {name}: top-1 {:.1}% top-3 {:.1}%, no-skill precision {:.1}% recall {:.1}%",
                100.0 * r.top1_accuracy(),
                100.0 * r.top3_accuracy(),
                100.0 * r.no_skill_precision(),
                100.0 * r.no_skill_recall(),
            )
        };
        vec![
            short("select, shipped weights (in-sample)", &self.in_sample),
            short(
                &format!("select, {}-fold held-out", self.cv.folds),
                &self.cv.held_out,
            ),
            short("fast path, keywords or name", &self.named),
        ]
    }

    /// Every figure, for `bench select`.
    fn lines(&self) -> Vec<String> {
        let cv = &self.cv;
        vec![
            accuracy_line(
                "select, shipped weights (in-sample: fitted on this set)",
                &self.in_sample,
            ),
            accuracy_line(
                &format!(
                    "select, {}-fold cross-validation (held out: weights refitted in code on the other folds)",
                    cv.folds
                ),
                &cv.held_out,
            ),
            accuracy_line(
                "select, weights refitted in code on every request (in-sample, same procedure as the held-out row)",
                &cv.refit_in_sample,
            ),
            accuracy_line(
                "fast path, trigger keywords only (seed 6.2)",
                &self.triggers_only,
            ),
            accuracy_line("fast path, trigger keywords or the skill name", &self.named),
            format!(
                "text model: shipped {}; refitted in code on every request {}",
                model_line(&TextModel::FITTED),
                model_line(&cv.refit)
            ),
            calibration_line(
                "calibration of the top candidate by confidence (shipped weights, in-sample)",
                &self.calibration,
            ),
            calibration_line(
                "calibration of the top candidate by confidence (held out)",
                &cv.held_out_calibration,
            ),
        ]
    }
}

fn latency_rows(
    label: &str,
    index: &SkillIndex,
    snapshot: &Snapshot,
    requests: &[String],
    args: &Args,
    table: &mut Table,
) {
    if requests.is_empty() {
        table.skipped(&format!("{label}: queries"), "no requests");
        return;
    }
    let fast = FastPath::new(snapshot, true);
    let opts = SelectOptions::default();
    let fast_l = latencies(requests, args.passes, |r| {
        black_box(fast.select(r));
    });
    let search_l = latencies(requests, args.passes, |r| {
        let _ = black_box(index.search(&SearchRequest {
            text: r,
            limit: 10,
            ..Default::default()
        }));
    });
    let select_l = latencies(requests, args.passes, |r| {
        let _ = black_box(index.select(r, &opts));
    });
    let k = search_l.len();
    let base = table.baseline(
        &format!("{label}: fast path per request (p50)"),
        requests.len(),
        0,
        percentile(&fast_l, 0.5),
    );
    table.compared(
        &format!("{label}: search per request (p50)"),
        requests.len(),
        0,
        percentile(&search_l, 0.5),
        base,
        QUERY_TARGET,
    );
    table.compared(
        &format!("{label}: select per request (p50)"),
        requests.len(),
        0,
        percentile(&select_l, 0.5),
        base,
        QUERY_TARGET,
    );
    let verdict = |d: Duration| {
        if d < P99_TARGET {
            "under 1 ms: ok"
        } else {
            "over 1 ms: MISSED"
        }
    };
    let s99 = percentile(&search_l, 0.99);
    let c99 = percentile(&select_l, 0.99);
    table.note(format!(
        "{label}: {k} timed queries; fast path p50 {} p99 {}; search p50 {} p99 {} ({}); select p50 {} p99 {} ({})",
        micros(percentile(&fast_l, 0.5)),
        micros(percentile(&fast_l, 0.99)),
        micros(percentile(&search_l, 0.5)),
        micros(s99),
        verdict(s99),
        micros(percentile(&select_l, 0.5)),
        micros(c99),
        verdict(c99),
    ));
}

fn update_rows(
    label: &str,
    config: &RegistryConfig,
    index: &SkillIndex,
    snapshot: Arc<Snapshot>,
    edit: Option<(&Path, String)>,
    args: &Args,
    table: &mut Table,
) {
    let Some(name) = snapshot
        .skills()
        .nth(snapshot.skills().count() / 2)
        .map(|s| s.name.clone())
    else {
        return;
    };
    // Incremental: one changed skill through apply(); baseline: a full rebuild.
    let change = ChangeSet {
        previous_generation: snapshot.generation(),
        generation: snapshot.generation(),
        added: Vec::new(),
        changed: vec![name.clone()],
        removed: Vec::new(),
        domains: Vec::new(),
        snapshot: snapshot.clone(),
    };
    let ((full, _), (one, _)) = measure_pair(
        args.iterations,
        || index.rebuild(snapshot.clone()),
        || index.apply(&change),
    );
    let base = table.baseline(
        &format!("{label}: full rebuild (baseline)"),
        snapshot.skills().count(),
        0,
        full,
    );
    table.compared(
        &format!("{label}: incremental update of 1 skill"),
        1,
        0,
        one,
        base,
        UPDATE_TARGET,
    );

    // End to end on the generated pack: edit a file, reload that path, apply, find it.
    let Some((root, folder)) = edit else {
        return;
    };
    let registry = Registry::load(config.clone());
    let live = match SkillIndex::build(registry.snapshot()) {
        Ok(i) => i,
        Err(e) => {
            table.error(&format!("{label}: hot reload"), e.to_string());
            return;
        }
    };
    let file = root.join(&folder).join("SKILL.md");
    let mut reload = Vec::new();
    let mut apply = Vec::new();
    let mut found = 0;
    for i in 0..args.iterations.max(3) {
        let word = format!("zebraword{i}");
        let text = format!(
            "---\nname: {folder}\ndescription: Count the {word} herds for the wildlife team.\n---\n# {word}\n"
        );
        if let Err(e) = fs::write(&file, text) {
            table.error(&format!("{label}: hot reload"), e.to_string());
            return;
        }
        let t = Instant::now();
        let cs = registry.reload_paths([file.clone()]);
        reload.push(t.elapsed());
        let t = Instant::now();
        let ok = live.apply(&cs).is_ok();
        apply.push(t.elapsed());
        let hits = live.search(&SearchRequest {
            text: &word,
            limit: 1,
            ..Default::default()
        });
        if ok && hits.is_ok_and(|h| h.first().is_some_and(|m| m.name == folder)) {
            found += 1;
        }
    }
    table.note(format!(
        "{label}: hot reload of one edited file: registry reload_paths median {}, index apply median {}; found by its new words {found}/{} times",
        micros(median(&mut reload)),
        micros(median(&mut apply)),
        apply.len()
    ));
}

/// Run `bench select`: accuracy over the labelled set, against the fast path.
pub fn run_select(args: &Args, table: &mut Table) -> Result<(), String> {
    let corpus = args.corpus()?;
    if !corpus.is_dir() {
        table.skipped(
            "select: corpus",
            format!("no corpus at {}", corpus.display()),
        );
        return Ok(());
    }
    let cases = args.requests()?;
    let config = corpus_config(&corpus)?;
    let snapshot = Arc::new(load_snapshot(&config, 1));
    let index = SkillIndex::build(snapshot.clone()).map_err(|e| e.to_string())?;
    let opts = SelectOptions::default();
    let fast_named = FastPath::new(&snapshot, true);

    let ((fast_time, fast_report), (sel_time, sel)) = measure_pair(
        args.iterations,
        || fast_named.evaluate(&snapshot, &cases),
        || quality::evaluate_index(&index, &cases, &opts),
    );
    let (report, _) = sel.map_err(|e| e.to_string())?;
    let acc = accuracy(&index, &snapshot, &cases, &opts)?;
    let base = table.baseline(
        "select: fast path over the request set (baseline)",
        cases.len(),
        0,
        fast_time,
    );
    table.compared(
        "select: search + select over the request set",
        cases.len(),
        0,
        sel_time,
        base,
        QUERY_TARGET * 2.0,
    );
    table.note(format!(
        "request set: {} requests over {} corpus skills, threshold {}",
        cases.len(),
        snapshot.skills().count(),
        opts.threshold
    ));
    for line in acc.lines() {
        table.note(line);
    }
    if acc.in_sample != report || acc.named != fast_report {
        table.error(
            "select: request set",
            "the timed runs and the accuracy run disagree; selection is not deterministic",
        );
    }
    if !report.unknown_labels.is_empty() {
        table.error(
            "select: request set",
            format!(
                "labels not in the corpus: {}",
                report.unknown_labels.join(", ")
            ),
        );
    }
    if std::env::var_os("BENCH_SELECT_MISSES").is_some() {
        for (req, want, got) in &report.misses {
            table.note(format!("miss: {req:?} want {want:?} got {got:?}"));
        }
        for (req, want, got) in &acc.cv.held_out.misses {
            table.note(format!("held-out miss: {req:?} want {want:?} got {got:?}"));
        }
    }
    Ok(())
}
