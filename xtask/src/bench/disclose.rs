//! `bench disclose`: catalog fitting and hot-reload cost over a generated pack.
//!
//! - Catalog: the markdown, XML and JSON catalogs of N skills fitted to the default
//!   16,000-char budget. Target: under 5 ms each. Baseline in the same run: joining every
//!   listed skill's `- name: description` line with no budget at all.
//! - Reload cost: `Registry::reload_paths` for one edited `SKILL.md` against a cold
//!   `load_snapshot` of the same tree (target: at most a tenth of it).
//! - Reload latency: with the watcher running (default debounce), the time from the write
//!   of one `SKILL.md` to its change set reaching a subscriber (the new snapshot is
//!   visible by then), over `--edits` edits; p50 and p99. Target: p99 under 250 ms.
//! - Corpus pass (when `../shared/corpus` exists): every disclosure path over every real
//!   skill: the catalog in each format, `get_skill` at every tier, `load_skill`,
//!   `use_skill`, and each skill's resources listed and read. Any failure other than a
//!   documented refusal (a file over the cap) is an error row.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use clap::Args as ClapArgs;
use skill_registry::{
    Budget, CatalogFormat, DEFAULT_DEBOUNCE, Disclosure, Error, Registry, RegistryConfig, Snapshot,
    Source, WatchOptions, load_snapshot,
};

use super::Table;
use super::generate;
use super::timing::{measure_pair, median};
use crate::process::repo_root;

/// Default size of the generated pack.
const DEFAULT_GENERATED: usize = 10_000;
/// Default timed runs per catalog measurement.
const DEFAULT_ITERATIONS: usize = 20;
/// Default number of edits for the latency figures.
const DEFAULT_EDITS: usize = 100;
/// Catalog target.
const CATALOG_TARGET: Duration = Duration::from_millis(5);
/// Reload latency target (p99).
const LATENCY_TARGET: Duration = Duration::from_millis(250);
/// One-file reload over a cold load.
const RELOAD_RATIO_TARGET: f64 = 0.10;
/// Longest wait for one change set before the edit counts as lost.
const EDIT_TIMEOUT: Duration = Duration::from_secs(10);

/// Command-line arguments of `bench disclose`.
#[derive(Debug, Clone, ClapArgs)]
pub struct Args {
    /// Number of skills in the generated pack.
    #[arg(long, default_value_t = DEFAULT_GENERATED)]
    generated: usize,
    /// Timed runs per catalog measurement (the median is reported).
    #[arg(long, default_value_t = DEFAULT_ITERATIONS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    iterations: usize,
    /// Edits timed for the reload latency.
    #[arg(long, default_value_t = DEFAULT_EDITS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    edits: usize,
    /// Watcher debounce in milliseconds (default: the registry's default).
    #[arg(long)]
    debounce_ms: Option<u64>,
    /// Folder of real-world skills for the corpus pass. Default: `../shared/corpus` next
    /// to the repository; skipped when absent.
    #[arg(long)]
    corpus: Option<PathBuf>,
}

impl Default for Args {
    fn default() -> Self {
        Args {
            generated: DEFAULT_GENERATED,
            iterations: DEFAULT_ITERATIONS,
            edits: DEFAULT_EDITS,
            debounce_ms: None,
            corpus: None,
        }
    }
}

/// Run the benchmark, adding rows to `table`.
pub fn run(args: &Args, table: &mut Table) -> Result<(), String> {
    let dir = tempfile::Builder::new()
        .prefix("xtask-bench-disclose-")
        .tempdir()
        .map_err(|e| format!("cannot create a temporary folder: {e}"))?;
    let root = dir.path();
    let n = args.generated;
    generate::write_pack(root, n)?;
    let mut config = RegistryConfig::with_sources(vec![Source::new(root, "bench")]);
    config.discover.max_folders = config.discover.max_folders.max(n.saturating_add(16));
    let registry = Arc::new(Registry::load(config.clone()));
    let snapshot = registry.snapshot();
    let loaded = snapshot.skills().count();
    if loaded != n {
        table.error(
            "disclose: generated pack",
            format!("{loaded} of {n} skills loaded"),
        );
        return Ok(());
    }
    corpus_pass(args, table);
    catalogs(&snapshot, n, args.iterations, table);
    reload_cost(&registry, &config, root, n, table)?;
    latency(&registry, root, n, args, table)?;
    Ok(())
}

fn catalogs(snapshot: &Snapshot, n: usize, iterations: usize, table: &mut Table) {
    let view = Disclosure::new(snapshot);
    let budget = Budget::default();
    let join = || {
        let mut s = String::new();
        for skill in snapshot.skills() {
            s.push_str("- ");
            s.push_str(&skill.name);
            s.push_str(": ");
            s.push_str(&skill.description);
            s.push('\n');
        }
        s
    };
    let mut base = None;
    for (label, format) in [
        ("markdown", CatalogFormat::Markdown),
        ("xml", CatalogFormat::Xml),
        ("json", CatalogFormat::Json),
    ] {
        let ((join_time, joined), (time, catalog)) = measure_pair(
            iterations,
            || black_box(join()),
            || black_box(view.catalog(format, &budget)),
        );
        if base.is_none() {
            table.baseline(
                "disclose: join every line, no budget",
                n,
                joined.len() as u64,
                join_time,
            );
            base = Some(join_time);
        }
        table.absolute(
            &format!("disclose: catalog {label}, 16k budget"),
            n,
            catalog.text.len() as u64,
            time,
            Some(CATALOG_TARGET),
        );
        let r = &catalog.report;
        table.note(format!(
            "catalog {label}: {} listed ({} shortened), {} omitted, {} of {} chars; {:.2}x the no-budget join",
            r.included.len(),
            r.truncated.len(),
            r.omitted.len(),
            r.used_chars,
            r.budget_chars,
            time.as_secs_f64() / base.unwrap_or(join_time).as_secs_f64().max(f64::MIN_POSITIVE),
        ));
    }
}

/// Rewrite skill `index`'s description with a new word.
fn edit(root: &Path, index: usize, n: usize, round: usize) -> Result<std::path::PathBuf, String> {
    let name = generate::folder_name(index, n);
    let file = root.join(&name).join("SKILL.md");
    let text = generate::skill_text(index, &name).replacen(
        "description: ",
        &format!("description: Edit {round}. "),
        1,
    );
    std::fs::write(&file, text).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok(file)
}

fn reload_cost(
    registry: &Registry,
    config: &RegistryConfig,
    root: &Path,
    n: usize,
    table: &mut Table,
) -> Result<(), String> {
    const ROUNDS: usize = 5;
    let mut round = 0;
    let ((cold, _), (one, changes)) = measure_pair(
        ROUNDS,
        || load_snapshot(config, 1),
        || {
            round += 1;
            let index = 1 + (round * 7919) % n.max(1);
            match edit(root, index, n, round) {
                Ok(file) => registry.reload_paths([file]).changed.len(),
                Err(_) => 0,
            }
        },
    );
    let base = table.baseline("disclose: cold load of the tree", n, 0, cold);
    if changes != 1 {
        table.error(
            "disclose: reload of one edited file",
            format!("the reload reported {changes} changed skills, expected 1"),
        );
        return Ok(());
    }
    table.compared(
        "disclose: reload of one edited file",
        1,
        0,
        one,
        base,
        RELOAD_RATIO_TARGET,
    );
    Ok(())
}

fn latency(
    registry: &Arc<Registry>,
    root: &Path,
    n: usize,
    args: &Args,
    table: &mut Table,
) -> Result<(), String> {
    let debounce = args
        .debounce_ms
        .map_or(DEFAULT_DEBOUNCE, Duration::from_millis);
    let (tx, rx) = mpsc::channel();
    let _sub = registry.subscribe(move |c| {
        let _ = tx.send((Instant::now(), c.changed.clone()));
    });
    let watcher = registry
        .watch(WatchOptions {
            debounce,
            ..WatchOptions::default()
        })
        .map_err(|e| e.to_string())?;
    let mut times = Vec::with_capacity(args.edits);
    let mut lost = 0;
    for round in 0..args.edits {
        let index = 1 + (round * 104_729) % n.max(1);
        let name = generate::folder_name(index, n);
        // The clock starts before the write: the write itself is part of the latency.
        let written = Instant::now();
        edit(root, index, n, 1000 + round)?;
        loop {
            match rx.recv_timeout(EDIT_TIMEOUT) {
                Ok((at, changed)) if changed.contains(&name) => {
                    times.push(at.saturating_duration_since(written));
                    break;
                }
                Ok(_) => continue,
                Err(_) => {
                    lost += 1;
                    break;
                }
            }
        }
    }
    watcher.stop();
    if lost > 0 {
        table.error(
            "disclose: reload latency",
            format!("{lost} of {} edits produced no change set", args.edits),
        );
        return Ok(());
    }
    times.sort_unstable();
    let p = |q: f64| times[((times.len() as f64 * q).ceil() as usize).clamp(1, times.len()) - 1];
    let (p50, p99) = (median(&mut times.clone()), p(0.99));
    table.absolute("disclose: reload latency p50", times.len(), 0, p50, None);
    table.absolute(
        "disclose: reload latency p99",
        times.len(),
        0,
        p99,
        Some(LATENCY_TARGET),
    );
    table.note(format!(
        "reload latency: write of one SKILL.md in a {n}-skill tree to its change set, {} edits, debounce {} ms",
        times.len(),
        debounce.as_millis()
    ));
    Ok(())
}

/// Every disclosure path over every skill of the corpus.
fn corpus_pass(args: &Args, table: &mut Table) {
    const ROW: &str = "disclose: corpus, every path";
    let dir = match &args.corpus {
        Some(d) => d.clone(),
        None => match repo_root() {
            Ok(r) => r.join("..").join("shared").join("corpus"),
            Err(e) => {
                table.skipped(ROW, e);
                return;
            }
        },
    };
    if !dir.is_dir() {
        table.skipped(ROW, format!("no corpus at {}", dir.display()));
        return;
    }
    let started = Instant::now();
    let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(
        &dir, "corpus",
    )]));
    let snap = registry.snapshot();
    let view = Disclosure::new(&snap);
    let mut failures: Vec<String> = Vec::new();
    let mut fail = |what: String| {
        if failures.len() < 5 {
            failures.push(what);
        } else {
            failures.push(String::new());
        }
    };
    let mut listed = 0;
    for format in [
        CatalogFormat::Markdown,
        CatalogFormat::Xml,
        CatalogFormat::Json,
    ] {
        let c = view.catalog(
            format,
            &Budget {
                budget_chars: Some(usize::MAX),
                entry_cap_chars: Some(usize::MAX),
                ..Budget::default()
            },
        );
        if !c.report.is_complete() {
            fail(format!(
                "catalog {format:?} is incomplete with an unlimited budget"
            ));
        }
        if format == CatalogFormat::Json
            && serde_json::from_str::<serde_json::Value>(&c.text).is_err()
        {
            fail("catalog JSON does not parse".into());
        }
        listed = c.report.included.len();
    }
    if let Err(e) = view.get_skill(None) {
        fail(format!("get_skill: {e}"));
    }
    let (mut skills, mut resources, mut bytes, mut capped) = (0usize, 0usize, 0u64, 0usize);
    for skill in snap.skills() {
        let name = &skill.name;
        let visible = view.skill(name).is_ok();
        if !visible {
            continue;
        }
        skills += 1;
        match view.get_skill(Some(name)) {
            Ok(text) if text == skill.body => {}
            Ok(_) => fail(format!("get_skill: {name} is not the body")),
            Err(e) => fail(format!("get_skill: {name}: {e}")),
        }
        if let Err(e) = view.load_skill(name) {
            fail(format!("load_skill: {name}: {e}"));
        }
        if let Err(e) = view.use_skill(name, Some("corpus check")) {
            fail(format!("use_skill: {name}: {e}"));
        }
        match view.resources(name) {
            Ok(list) => {
                for r in list {
                    resources += 1;
                    match view.read_resource(name, &r.path) {
                        Ok(b) if b.len() as u64 == r.size => bytes += b.len() as u64,
                        Ok(b) => fail(format!(
                            "{name}/{}: read {} of {} bytes",
                            r.path,
                            b.len(),
                            r.size
                        )),
                        Err(Error::ResourceTooLarge { .. }) => capped += 1,
                        Err(e) => fail(format!("{name}/{}: {e}", r.path)),
                    }
                }
            }
            Err(e) => fail(format!("resources: {name}: {e}")),
        }
    }
    let elapsed = started.elapsed();
    if failures.is_empty() {
        table.absolute(ROW, skills, bytes, elapsed, None);
        table.note(format!(
            "corpus: {skills} skills through get_skill, load_skill and use_skill, {listed} in each catalog format; {resources} resources listed and read ({:.1} MB), {capped} refused as over the size cap",
            bytes as f64 / 1e6
        ));
    } else {
        let shown: Vec<&String> = failures.iter().filter(|f| !f.is_empty()).collect();
        table.error(ROW, format!("{} failures, e.g. {shown:?}", failures.len()));
    }
}
