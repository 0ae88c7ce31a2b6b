//! `bench route`: extraction and routing throughput.
//!
//! A generated model transcript of `--blocks` ```` ```cmd ```` blocks (one command each,
//! with a line of conversational text before every block) is routed against a registry of
//! `--skills` generated skills. Rows:
//!
//! - baseline: splitting the transcript into lines (`str::lines`, collected), the least any
//!   extractor must do;
//! - extraction alone (`skill_router::extract`);
//! - extraction and routing of every command (`Router::route_output`: tokenize, registry
//!   lookup with trigger control, best-effort flags). Target: <= 4x the baseline.
//! - for reference, the same over a transcript whose commands are bare names (no flags, no
//!   values), against that transcript's own line splitting: what extraction and one
//!   registry lookup per command cost before any argument is read;
//! - for reference, a naive router over the main transcript, against line splitting timed
//!   beside it:
//!   extraction, then per command its ASCII-whitespace words (no quotes, no flags), the
//!   first looked up in a `HashMap` of the registry's names, the rest collected: about the
//!   least a router that gives each command its arguments can do.
//!
//! Commands are invocations with quoted values, lists and switches; one in
//! [`HELP_EVERY`] is `<name> --help` (which copies the skill body, as a host would send it).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::hint::black_box;

use clap::Args as ClapArgs;
use skill_registry::{RegistryConfig, Source, load_snapshot};
use skill_router::{Route, Router};

use super::Table;
use super::generate;
use super::timing::measure_pair;

/// Default number of `cmd` blocks in the transcript.
const DEFAULT_BLOCKS: usize = 10_000;
/// Default number of skills in the registry.
const DEFAULT_SKILLS: usize = 10_000;
/// Default number of timed runs.
const DEFAULT_ITERATIONS: usize = 7;
/// Target for extraction plus routing over line splitting.
const ROUTE_TARGET: f64 = 4.0;
/// One command in this many asks for help instead of invoking.
pub(crate) const HELP_EVERY: usize = 50;

/// Command-line arguments of `bench route`.
#[derive(Debug, Clone, ClapArgs)]
pub struct Args {
    /// Number of `cmd` blocks in the generated transcript.
    #[arg(long, default_value_t = DEFAULT_BLOCKS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    blocks: usize,
    /// Number of skills in the generated registry.
    #[arg(long, default_value_t = DEFAULT_SKILLS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    skills: usize,
    /// Timed runs per measurement (the median is reported).
    #[arg(long, default_value_t = DEFAULT_ITERATIONS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    iterations: usize,
}

impl Default for Args {
    fn default() -> Self {
        Args {
            blocks: DEFAULT_BLOCKS,
            skills: DEFAULT_SKILLS,
            iterations: DEFAULT_ITERATIONS,
        }
    }
}

/// The reference transcript: as [`transcript`], every command a bare skill name.
fn names_transcript(blocks: usize, skills: usize) -> String {
    let mut s = String::with_capacity(blocks * 64);
    for i in 0..blocks {
        let index = 1 + (i * 7919) % skills;
        let name = generate::folder_name(index, skills);
        let _ = writeln!(s, "Step {i}: working on item {index} for the user.");
        let _ = writeln!(s, "```cmd\n{name}\n```");
    }
    s
}

/// The transcript: `blocks` blocks, each preceded by a line of text, commands spread over
/// `skills` skill names. Returns the text and how many commands invoke (the rest ask for
/// help).
pub(crate) fn transcript(blocks: usize, skills: usize) -> (String, usize) {
    let mut s = String::with_capacity(blocks * 120);
    let mut invokes = 0;
    for i in 0..blocks {
        // Spread the names over the registry deterministically.
        let index = 1 + (i * 7919) % skills;
        let name = generate::folder_name(index, skills);
        let _ = writeln!(s, "Step {i}: working on item {index} for the user.");
        s.push_str("```cmd\n");
        if i % HELP_EVERY == HELP_EVERY - 1 {
            let _ = writeln!(s, "{name} --help");
        } else {
            invokes += 1;
            match i % 3 {
                0 => {
                    let _ = writeln!(
                        s,
                        "{name} --input \"report {i}.csv\" --limit {} --verbose",
                        i % 50
                    );
                }
                1 => {
                    let _ = writeln!(
                        s,
                        "{name} --to alice@example.org bob@example.org --subject 'Status {i}' --body \"All done, see item {index}.\""
                    );
                }
                _ => {
                    let _ = writeln!(s, "{name} draft-{i} --mode=fast -- --literal");
                }
            }
        }
        s.push_str("```\n");
    }
    (s, invokes)
}

/// Run the benchmark, adding its rows to `table`.
pub fn run(args: &Args, table: &mut Table) -> Result<(), String> {
    const BASE: &str = "route: split lines (baseline)";
    const EXTRACT: &str = "route: extract cmd blocks";
    const ROUTE: &str = "route: extract + route";
    let dir = match tempfile::Builder::new()
        .prefix("xtask-bench-route-")
        .tempdir()
    {
        Ok(d) => d,
        Err(e) => {
            table.error(ROUTE, format!("cannot create a temporary folder: {e}"));
            return Ok(());
        }
    };
    if let Err(e) = generate::write_pack(dir.path(), args.skills) {
        table.error(ROUTE, e);
        return Ok(());
    }
    let mut config = RegistryConfig::with_sources(vec![Source::new(dir.path(), "bench")]);
    config.discover.max_folders = config
        .discover
        .max_folders
        .max(args.skills.saturating_add(16));
    let snapshot = load_snapshot(&config, 1);
    let loaded = snapshot.skills().count();
    if loaded != args.skills {
        table.error(
            ROUTE,
            format!("registry holds {loaded} skills, expected {}", args.skills),
        );
        return Ok(());
    }
    let router = Router::new(&snapshot);
    let (text, invokes) = transcript(args.blocks, args.skills);
    let bytes = text.len() as u64;
    let n = args.blocks;

    let split = || black_box(text.lines().collect::<Vec<&str>>());
    // Each closure returns its result, so that freeing it is not timed (for either side).
    let ((base_time, lines), (route_time, routed)) = measure_pair(args.iterations, split, || {
        router.route_output(black_box(&text))
    });
    let lines = lines.len();
    let ok = routed
        .routes
        .iter()
        .filter(|r| matches!(r.route, Route::Invoke(_)))
        .count();
    let help = routed
        .routes
        .iter()
        .filter(|r| matches!(r.route, Route::Help { .. }))
        .count();
    let total = routed.routes.len();
    let ((_, _), (extract_time, extracted)) = measure_pair(args.iterations, split, || {
        skill_router::extract(black_box(&text))
    });
    let extracted = extracted.commands().count();
    if lines != n * 4 {
        table.error(BASE, format!("split {lines} lines, expected {}", n * 4));
        return Ok(());
    }
    let base = table.baseline(BASE, n, bytes, base_time);
    if extracted == n {
        table.compared(EXTRACT, n, bytes, extract_time, base, ROUTE_TARGET);
    } else {
        table.error(
            EXTRACT,
            format!("extracted {extracted} commands, expected {n}"),
        );
    }
    if ok == invokes && ok + help == total && total == n {
        table.compared(ROUTE, n, bytes, route_time, base, ROUTE_TARGET);
    } else {
        table.error(
            ROUTE,
            format!("{ok} invocations and {help} help routes of {total}, expected {invokes} invocations of {n}"),
        );
    }
    // The reference rows: bare names, against their own transcript's line splitting.
    const NAMES_BASE: &str = "route: split lines, bare names (baseline)";
    const NAMES: &str = "route: extract + route, bare names";
    let names = names_transcript(args.blocks, args.skills);
    let split_names = || black_box(names.lines().collect::<Vec<&str>>());
    let ((names_base_time, _), (names_time, routed)) =
        measure_pair(args.iterations, split_names, || {
            router.route_output(black_box(&names))
        });
    let invoked = routed
        .routes
        .iter()
        .filter(|r| matches!(r.route, Route::Invoke(_)))
        .count();
    let names_base = table.baseline(NAMES_BASE, n, names.len() as u64, names_base_time);
    if invoked == n {
        table.compared(
            NAMES,
            n,
            names.len() as u64,
            names_time,
            names_base,
            f64::INFINITY,
        );
    } else {
        table.error(NAMES, format!("{invoked} invocations, expected {n}"));
    }
    // The naive router, against the main baseline.
    const NAIVE_BASE: &str = "route: split lines (baseline of the naive router)";
    const NAIVE: &str = "route: naive words + lookup (reference)";
    let ids: HashMap<&str, usize> = snapshot
        .skills()
        .enumerate()
        .map(|(i, s)| (s.name.as_str(), i))
        .collect();
    let naive = || {
        let extraction = skill_router::extract(black_box(&text));
        let mut out: Vec<(Option<usize>, Vec<&str>)> = Vec::with_capacity(n);
        for c in extraction.commands() {
            let mut words = c.text.split_ascii_whitespace();
            let id = words.next().and_then(|w| ids.get(w).copied());
            out.push((id, words.collect()));
        }
        out
    };
    let ((naive_base_time, _), (naive_time, found)) = measure_pair(args.iterations, split, naive);
    let naive_base = table.baseline(NAIVE_BASE, n, bytes, naive_base_time);
    if found.iter().filter(|(id, _)| id.is_some()).count() == n {
        table.compared(NAIVE, n, bytes, naive_time, naive_base, f64::INFINITY);
    } else {
        table.error(NAIVE, "the naive router did not find every name");
    }
    table.note(format!(
        "route: {n} cmd blocks ({:.2} MB) against {} generated skills; items are commands; 1 in {HELP_EVERY} is `--help`",
        bytes as f64 / 1e6,
        args.skills
    ));
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn transcript_has_one_command_per_block() {
        let (text, invokes) = transcript(100, 10);
        let e = skill_router::extract(&text);
        assert_eq!(e.commands().count(), 100);
        assert_eq!(invokes, 98);
        assert_eq!(text.lines().count(), 400);
    }
}
