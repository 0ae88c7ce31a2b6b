//! `bench load`, the whole-process row: `skill-server validate` of the corpus as a user runs
//! it, against `cat` of the same `SKILL.md` files.
//!
//! Both are separate processes started from here with their output sent to `/dev/null`, so
//! each pays for process start, reading every file and writing its output. `cat` gets the
//! list of files the corpus walk found (the least any validator must read); `validate` gets
//! the corpus folder and walks it itself. Warm page cache (one untimed run of each first),
//! then alternating runs; the row reports each one's **best** time, since on a shared
//! machine the best run is the one least disturbed by others. Target: <= 1.5x `cat`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::Table;
use crate::process::{cargo, describe, repo_root};

/// Target for `validate` over `cat`.
const VALIDATE_TARGET: f64 = 1.5;
/// Timed runs of each process (at least this many; the best is reported).
const MIN_RUNS: usize = 11;

/// The release `skill-server` binary, built now if it is not current.
fn server_binary() -> Result<PathBuf, String> {
    let root = repo_root()?;
    let mut cmd = cargo();
    cmd.args(["build", "--release", "--quiet", "--package", "skill-server"])
        .current_dir(&root);
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {}: {e}", describe(&cmd)))?;
    if !status.success() {
        return Err(format!("{} failed", describe(&cmd)));
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    Ok(target.join("release").join("skill-server"))
}

/// Run `cmd` to completion with no input and its output discarded; its duration and exit
/// code.
fn run_once(cmd: &mut Command) -> Result<(Duration, Option<i32>), String> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let start = Instant::now();
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {}: {e}", describe(cmd)))?;
    Ok((start.elapsed(), status.code()))
}

/// Time `validate` of `corpus` against `cat` of `files` (the corpus's `SKILL.md` files),
/// adding the two rows.
pub fn run(corpus: &Path, files: &[PathBuf], bytes: u64, iterations: usize, table: &mut Table) {
    const CAT: &str = "load: corpus cat of the SKILL.md files (process)";
    const VALIDATE: &str = "load: corpus skill-server validate (process)";
    let bin = match server_binary() {
        Ok(b) => b,
        Err(e) => {
            table.error(VALIDATE, e);
            return;
        }
    };
    let cat = || {
        let mut c = Command::new("cat");
        c.args(files);
        c
    };
    let validate = || {
        let mut c = Command::new(&bin);
        c.arg("validate").arg(corpus);
        c
    };
    let runs = iterations.max(MIN_RUNS);
    let mut best = [Duration::MAX; 2];
    let mut codes = [None; 2];
    // One untimed run of each (warm cache), then alternating timed runs.
    for i in 0..=runs {
        for (slot, make) in [&cat as &dyn Fn() -> Command, &validate].iter().enumerate() {
            match run_once(&mut make()) {
                Ok((t, code)) => {
                    codes[slot] = code;
                    if i > 0 {
                        best[slot] = best[slot].min(t);
                    }
                }
                Err(e) => {
                    table.error(if slot == 0 { CAT } else { VALIDATE }, e);
                    return;
                }
            }
        }
    }
    if codes[0] != Some(0) {
        table.error(CAT, format!("cat exited with {:?}", codes[0]));
        return;
    }
    // validate exits 1 when the corpus has errors; only 2 (usage, I/O) is a failure here.
    if !matches!(codes[1], Some(0 | 1)) {
        table.error(VALIDATE, format!("validate exited with {:?}", codes[1]));
        return;
    }
    let n = files.len();
    let base = table.baseline(CAT, n, bytes, best[0]);
    table.compared(VALIDATE, n, bytes, best[1], base, VALIDATE_TARGET);
    table.note(format!(
        "process rows: best of {runs} alternating runs each (not the median), output to /dev/null; `cat` of the {n} SKILL.md paths, `{} validate {}` walks the folder itself",
        bin.display(),
        corpus.display()
    ));
}
