//! `bench verified`: the cost of verified reads (issue 45 item 2) on the bundled packs.
//!
//! Every file of every loaded skill of `packs/` (each pack loaded as one source), read the
//! way a door reads it (the skill looked up for the caller, then `Snapshot::read_file`), in
//! one pass:
//! - baseline: over a registry without `require_lock` (the manifest lookup, nothing
//!   hashed: today's read);
//! - contender: the same over a registry with `require_lock` (a lock written from the same
//!   tree): the file read is checked against the lock (the lookup, `skill_for_files`, leaves
//!   the skill file to the read that serves it, as the doors do); a file hashed once and unchanged since is vouched for by its stamp (see
//!   skill-registry's `verified.rs`), so the timed passes, after the first, measure the
//!   fast path. Target: at most [`READ_RATIO_TARGET`] times the baseline.
//!
//! A second pair times `load_skill` of every skill with and without `require_lock` (the
//! skill file is opened and its stamp checked, or hashed, to check that the parse served
//! is still what the lock names): reported for information, since the baseline reads no
//! file at all.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args as ClapArgs;
use skill_registry::{Disclosure, Lock, Registry, RegistryConfig, Snapshot, Source};

use super::Table;
use super::timing::measure_pair;
use crate::process::repo_root;

/// A verified read over an unverified one (the target).
const READ_RATIO_TARGET: f64 = 1.2;
/// Default timed passes.
const DEFAULT_ITERATIONS: usize = 200;

/// Command-line arguments of `bench verified`.
#[derive(Debug, Clone, ClapArgs)]
pub struct Args {
    /// Timed passes over every file (the median is reported).
    #[arg(long, default_value_t = DEFAULT_ITERATIONS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    iterations: usize,
}

impl Default for Args {
    fn default() -> Self {
        Args {
            iterations: DEFAULT_ITERATIONS,
        }
    }
}

/// One bundled pack loaded twice: plain, and with `require_lock`.
struct Pack {
    plain: Arc<Snapshot>,
    locked: Arc<Snapshot>,
    /// Every loaded skill's name and the files of its manifest.
    files: Vec<(String, Vec<String>)>,
}

fn load(root: PathBuf, lock_dir: &std::path::Path, i: usize) -> Result<Pack, String> {
    let config = RegistryConfig::with_sources(vec![Source::new(&root, "project")]);
    let plain = Registry::load(config.clone()).snapshot();
    let lock_path = lock_dir.join(format!("lock-{i}.json"));
    Lock::from_snapshot(&plain)
        .write(&lock_path)
        .map_err(|e| e.to_string())?;
    let mut locked_config = config;
    locked_config.trust.require_lock = Some(lock_path);
    let locked = Registry::load(locked_config).snapshot();
    let files = plain
        .skills()
        .filter(|s| locked.get(&s.name).is_some())
        // The model's view, as a door serving the model asks.
        .filter(|s| Disclosure::new(&plain).skill(&s.name).is_ok())
        .filter_map(|s| {
            let m = plain.manifest_of(s)?;
            Some((
                s.name.clone(),
                m.files().iter().map(|f| f.path.clone()).collect(),
            ))
        })
        .collect();
    Ok(Pack {
        plain,
        locked,
        files,
    })
}

/// Run the benchmark, adding rows to `table`.
pub fn run(args: &Args, table: &mut Table) -> Result<(), String> {
    let packs_dir = repo_root()?.join("packs");
    let lock_dir = tempfile::Builder::new()
        .prefix("xtask-bench-verified-")
        .tempdir()
        .map_err(|e| format!("cannot create a temporary folder: {e}"))?;
    let mut roots: Vec<PathBuf> = std::fs::read_dir(&packs_dir)
        .map_err(|e| format!("{}: {e}", packs_dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    roots.sort();
    let packs = roots
        .into_iter()
        .enumerate()
        .map(|(i, root)| load(root, lock_dir.path(), i))
        .collect::<Result<Vec<Pack>, String>>()?;
    let files: usize = packs
        .iter()
        .flat_map(|p| &p.files)
        .map(|(_, f)| f.len())
        .sum();
    let skills: usize = packs.iter().map(|p| p.files.len()).sum();
    if files == 0 {
        table.error("verified: bundled packs", "no file to read");
        return Ok(());
    }
    // What a door does for one file (HTTP resources, MCP resources/read): the skill looked
    // up for this caller (`skill_for_files`: the read checks the file it serves), then the
    // file read (with require_lock hashed, or vouched for by its stamp). The same code on
    // both sides; only the policy differs.
    let read_all = |locked: bool| {
        let mut bytes = 0u64;
        let mut errors = Vec::new();
        for p in &packs {
            let snapshot = if locked { &p.locked } else { &p.plain };
            let view = Disclosure::new(snapshot);
            for (name, paths) in &p.files {
                for path in paths {
                    let read = view
                        .skill_for_files(name)
                        .and_then(|skill| snapshot.read_file(skill, path));
                    match read {
                        Ok(b) => bytes += black_box(b).len() as u64,
                        Err(e) => errors.push(format!("{name}/{path}: {e}")),
                    }
                }
            }
        }
        (bytes, errors)
    };
    let ((base_time, (base_bytes, base_errors)), (time, (bytes, errors))) =
        measure_pair(args.iterations, || read_all(false), || read_all(true));
    // Every read must succeed on both sides, or the figures compare different work.
    if let Some(first) = base_errors.first().or(errors.first()) {
        table.error(
            "verified: read every file, require_lock",
            format!(
                "{} read(s) failed, first: {first}",
                base_errors.len() + errors.len()
            ),
        );
        return Ok(());
    }
    let base = table.baseline(
        "verified: read every file of packs/, unverified",
        files,
        base_bytes,
        base_time,
    );
    table.compared(
        "verified: the same reads, in the manifest and hashed (require_lock)",
        files,
        bytes,
        time,
        base,
        READ_RATIO_TARGET,
    );
    let load_all = |locked: bool| {
        let mut chars = 0usize;
        for p in &packs {
            let view = Disclosure::new(if locked { &p.locked } else { &p.plain });
            for (name, _) in &p.files {
                chars += view.load_skill(name).map_or(0, |t| black_box(t).len());
            }
        }
        chars
    };
    let ((load_base, chars), (load_time, _)) =
        measure_pair(args.iterations, || load_all(false), || load_all(true));
    let load_baseline = table.baseline(
        "verified: load_skill of every skill, unverified",
        skills,
        chars as u64,
        load_base,
    );
    table.absolute(
        "verified: load_skill of every skill, skill file hashed (require_lock)",
        skills,
        chars as u64,
        load_time,
        None,
    );
    table.note(format!(
        "verified reads: {files} files of {skills} skills in {} packs; a read is {:.2}x the unverified read; load_skill (no file read before) is {:.2}x",
        packs.len(),
        time.as_secs_f64() / base.as_secs_f64().max(f64::MIN_POSITIVE),
        load_time.as_secs_f64() / load_baseline.as_secs_f64().max(f64::MIN_POSITIVE),
    ));
    Ok(())
}
