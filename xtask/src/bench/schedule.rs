//! `bench schedule`: registering many scheduled skills, and firing accuracy on a real clock.
//!
//! - Registration: `Scheduler::start` over a generated actions pack of N scheduled skills
//!   (default 10,000; a mix of weekday, every-5-minutes, monthly, nightly and yearly
//!   expressions): parse every schedule, compute every next fire and queue it. Baseline in
//!   the same run: `scheduled_skills`, which only parses the expressions. Target: at most
//!   5x the baseline.
//! - Memory: resident set size before and after starting a scheduler over the N skills
//!   (Linux `/proc/self/status`; a note, skipped elsewhere).
//! - Accuracy: N jobs again, M of them every second (`* * * * * *`, default 1,000, all due
//!   on the same instants) and the rest from the mix, run as `serve` runs them with a state
//!   dir: a state file (`schedule-state.json` in a temp folder) written and fsynced for
//!   each batch of fires before it starts, `STATE_WRITE_LEAD` ahead of the instant (so the
//!   write is measured only when it outlasts the lead). On the system clock for a
//!   short window of real seconds (default 3), on a 2-worker runtime; lateness of each
//!   dispatch against its scheduled instant, p50/p99/max (fires for the second the
//!   scheduler started in are left out: they are late by construction). Baseline in the
//!   same run: M plain tokio tasks that each sleep to the next whole second and measure
//!   their own lateness the same way. Target: p99 under 10 ms on an otherwise idle machine
//!   (an error row above it). M is a share of N because all N on every second means N runs
//!   started on one instant each second, which plain timers alone do not do within 10 ms on
//!   2 cores: that case (M = N) runs next, reported for information with its own plain
//!   timer figures. `--accuracy-jobs` sets M (at most N).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args as ClapArgs;
use skill_registry::{Registry, RegistryConfig, Source};
use skill_scheduler::{
    DateTime, DispatchFuture, Dispatcher, Fire, STATE_WRITE_LEAD, Scheduler, SchedulerConfig, Utc,
    scheduled_skills,
};

use super::Table;
use super::timing::measure_pair;

/// Default number of scheduled skills registered.
const DEFAULT_SKILLS: usize = 10_000;
/// Default number of every-second jobs in the accuracy run.
const DEFAULT_ACCURACY_JOBS: usize = 1_000;
/// Default accuracy window in real seconds (kept short: this part sleeps for real).
const DEFAULT_WINDOW_SECS: u64 = 3;
/// Longest accuracy window accepted.
const MAX_WINDOW_SECS: u64 = 30;
/// Default timed runs of the registration measurement.
const DEFAULT_ITERATIONS: usize = 5;
/// Registration over parse-only.
const REGISTER_RATIO_TARGET: f64 = 5.0;
/// Lateness target (p99).
const LATENESS_TARGET: Duration = Duration::from_millis(10);
/// Skills per generated domain folder.
const PER_DOMAIN: usize = 100;

/// The expressions the registration pack cycles through.
const MIX: &[&str] = &[
    "0 8 * * 1-5",
    "*/5 * * * *",
    "0 0 1 * *",
    "30 2 * * *",
    "@yearly",
    "0 17 * * fri",
    "15 9-17/2 * * mon-fri",
    "0 0 13 * fri",
];

/// Command-line arguments of `bench schedule`.
#[derive(Debug, Clone, ClapArgs)]
pub struct Args {
    /// Number of scheduled skills registered.
    #[arg(long, default_value_t = DEFAULT_SKILLS)]
    skills: usize,
    /// Number of the registered jobs that fire every second in the real-clock accuracy run
    /// (at most `--skills`; the rest keep the mixed schedules).
    #[arg(long, default_value_t = DEFAULT_ACCURACY_JOBS)]
    accuracy_jobs: usize,
    /// Length of the accuracy run in real seconds (1 to 30).
    #[arg(long, default_value_t = DEFAULT_WINDOW_SECS, value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..=MAX_WINDOW_SECS))]
    window: u64,
    /// Timed runs of the registration measurement (the median is reported).
    #[arg(long, default_value_t = DEFAULT_ITERATIONS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    iterations: usize,
}

impl Default for Args {
    fn default() -> Self {
        Args {
            skills: DEFAULT_SKILLS,
            accuracy_jobs: DEFAULT_ACCURACY_JOBS,
            window: DEFAULT_WINDOW_SECS,
            iterations: DEFAULT_ITERATIONS,
        }
    }
}

/// Write `n` actions skills in domains `<prefix>0000`..., `PER_DOMAIN` per domain folder, schedules from `schedule(i)`.
fn generate(
    root: &Path,
    prefix: &str,
    n: usize,
    schedule: impl Fn(usize) -> &'static str,
) -> Result<(), String> {
    let io = |e: std::io::Error| format!("cannot write the generated pack: {e}");
    for i in 0..n {
        let domain = format!("{prefix}{:04}", i / PER_DOMAIN);
        let dir = root.join(&domain);
        if i % PER_DOMAIN == 0 {
            std::fs::create_dir_all(&dir).map_err(io)?;
            std::fs::write(
                dir.join("SKILL.md"),
                format!(
                    "---\ndomain: {domain}\ndescription: Generated jobs {domain}\n---\n# {domain}\n"
                ),
            )
            .map_err(io)?;
        }
        let action = format!("job{:04}", i % PER_DOMAIN);
        std::fs::write(
            dir.join(format!("{action}.md")),
            format!(
                "---\nname: {domain}.{action}\ndescription: Generated scheduled job {i}\nschedule: \"{}\"\n---\n\n# {domain}.{action}\n\nRun job {i}.\n",
                schedule(i)
            ),
        )
        .map_err(io)?;
    }
    Ok(())
}

fn registry(root: &Path) -> Arc<Registry> {
    Arc::new(Registry::load(RegistryConfig::with_sources(vec![
        Source::new(root.to_path_buf(), "bench"),
    ])))
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .map_err(|e| format!("cannot start a tokio runtime: {e}"))
}

/// Does nothing but note how late each fire is.
struct Lateness {
    /// Fires for instants before this (the second the scheduler started in, which it
    /// still fires, necessarily late) are not counted.
    since: DateTime<Utc>,
    samples: Mutex<Vec<Duration>>,
}

impl Dispatcher for Lateness {
    fn dispatch(&self, fire: Fire) -> DispatchFuture {
        if fire.scheduled < self.since {
            return Box::pin(async { Ok(()) });
        }
        let late = (Utc::now() - fire.scheduled).to_std().unwrap_or_default();
        if let Ok(mut s) = self.samples.lock() {
            s.push(late);
        }
        Box::pin(async { Ok(()) })
    }
}

/// A dispatcher for the registration runs: never called within them.
struct Idle;

impl Dispatcher for Idle {
    fn dispatch(&self, _fire: Fire) -> DispatchFuture {
        Box::pin(async { Ok(()) })
    }
}

/// Resident set size in bytes (Linux only).
fn rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
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

/// Run the benchmark, adding rows to `table`.
pub fn run(args: &Args, table: &mut Table) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("cannot make a temp folder: {e}"))?;
    let n = args.skills;
    let pack = dir.path().join("mix");
    generate(&pack, "mix", n, |i| MIX[i % MIX.len()])?;
    let reg = registry(&pack);
    let snapshot = reg.snapshot();
    let rt = runtime()?;

    // Memory.
    match rss() {
        Some(before) => {
            let _guard = rt.enter();
            let started = Scheduler::start(reg.clone(), Arc::new(Idle), SchedulerConfig::default());
            let after = rss().unwrap_or(before);
            drop(started);
            let grown = after.saturating_sub(before);
            table.note(format!(
                "memory: {n} registered jobs grew the resident set by {:.1} MiB ({} bytes per job; the registry snapshot is not counted)",
                grown as f64 / (1024.0 * 1024.0),
                grown / n.max(1) as u64
            ));
        }
        None => table.note("memory: not measured (no /proc/self/status)"),
    }

    // Registration (the scheduler is dropped after the clock stops).
    let ((parse, jobs), (register, started)) = measure_pair(
        args.iterations,
        || scheduled_skills(&snapshot).0.len(),
        || {
            let _guard = rt.enter();
            Scheduler::start(reg.clone(), Arc::new(Idle), SchedulerConfig::default())
        },
    );
    let registered = started.map(|s| s.jobs(0).len()).unwrap_or(0);
    if jobs != n || registered != n {
        table.error(
            "schedule: register jobs",
            format!("{jobs} schedules parsed and {registered} jobs registered of {n} skills"),
        );
        return Ok(());
    }
    let base = table.baseline(&format!("schedule: parse {n} expressions"), n, 0, parse);
    table.compared(
        &format!("schedule: register {n} jobs (start)"),
        n,
        0,
        register,
        base,
        REGISTER_RATIO_TARGET,
    );

    drop(reg);

    // Accuracy on the real clock, as `serve` runs with a state dir: N jobs registered, M of
    // them every second, a state file written and fsynced ahead of each batch of fires.
    let m = args.accuracy_jobs.min(n);
    let secs = args.window;
    let window = Duration::from_secs(secs);
    let main = lateness(&rt, dir.path(), "main", n, m, window)?;
    let expected_min = m * (secs as usize).saturating_sub(1);
    let name = if m == n {
        format!("schedule: lateness p99, all {n} jobs every second, state file")
    } else {
        format!(
            "schedule: lateness p99, {n} jobs with {m} every second ({m} fires/s; all {n}: see below), state file"
        )
    };
    if main.fires.len() < expected_min {
        table.error(
            &name,
            format!(
                "{} fires in {:.1} s, expected at least {expected_min} (missed instants are not replayed: the driver fell behind)",
                main.fires.len(),
                main.elapsed.as_secs_f64()
            ),
        );
        return Ok(());
    }
    let (b50, b99) = (
        percentile(&main.timers, 0.50),
        percentile(&main.timers, 0.99),
    );
    let (p50, p99, max) = main.summary();
    table.baseline(
        &format!("schedule: plain tokio timers, lateness p99 ({m} tasks x {secs} s)"),
        main.timers.len(),
        0,
        b99,
    );
    if p99 >= LATENESS_TARGET {
        table.error(
            &name,
            format!(
                "p99 lateness {:.2} ms is over the {} ms target (p50 {:.2} ms, max {:.2} ms; is the machine busy?)",
                ms(p99),
                LATENESS_TARGET.as_millis(),
                ms(p50),
                ms(max)
            ),
        );
    } else {
        table.absolute(&name, main.fires.len(), 0, p99, Some(LATENESS_TARGET));
    }
    table.note(format!(
        "lateness over {secs} s, {n} jobs of which {m} every second, state file of {} bytes written and fsynced {} ms ahead of each batch: {} fires, p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms (plain timers: p50 {:.2} ms, p99 {:.2} ms); target p99 < {} ms",
        main.state_bytes,
        STATE_WRITE_LEAD.as_millis(),
        main.fires.len(),
        ms(p50),
        ms(p99),
        ms(max),
        ms(b50),
        ms(b99),
        LATENESS_TARGET.as_millis()
    ));

    // Every one of the N jobs on every second: N runs started on the same instant each
    // second. Reported for information (no target), beside plain timers under the same load.
    if m < n {
        let all = lateness(&rt, dir.path(), "all", n, n, window)?;
        let (p50, p99, max) = all.summary();
        let t99 = percentile(&all.timers, 0.99);
        table.absolute(
            &format!("schedule: lateness p99, all {n} jobs every second ({n} fires/s, no target), state file"),
            all.fires.len(),
            0,
            p99,
            None,
        );
        table.note(format!(
            "the target row puts {m} of the {n} jobs on every second; with all {n} due on the same instant each second: {} fires (at least {} expected unless the driver falls behind: missed instants are not replayed), p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms, where {n} plain tokio timers alone have p99 {:.2} ms on {} cores",
            all.fires.len(),
            n * (secs as usize).saturating_sub(1),
            ms(p50),
            ms(p99),
            ms(max),
            ms(t99),
            std::thread::available_parallelism().map_or(0, usize::from),
        ));
    }
    Ok(())
}

/// What one real-clock window measured.
struct Window {
    /// Lateness of each counted fire, sorted.
    fires: Vec<Duration>,
    /// Lateness of plain tokio timers under the same load, sorted.
    timers: Vec<Duration>,
    /// How long the scheduler ran.
    elapsed: Duration,
    /// Size of the state file at the end.
    state_bytes: u64,
}

impl Window {
    /// p50, p99 and max of the fires.
    fn summary(&self) -> (Duration, Duration, Duration) {
        (
            percentile(&self.fires, 0.50),
            percentile(&self.fires, 0.99),
            self.fires.last().copied().unwrap_or_default(),
        )
    }
}

/// Register `n` jobs, `m` of them every second and the rest from [`MIX`], with a state file
/// in a fresh folder under `dir` (named as `serve` names it), and measure each fire's
/// lateness for `window` on the system clock; before that, `m` plain tokio tasks that each
/// sleep to the next whole second measure their own lateness the same way.
fn lateness(
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    label: &str,
    n: usize,
    m: usize,
    window: Duration,
) -> Result<Window, String> {
    let every = dir.join(format!("{label}-every-second"));
    generate(&every, "every", m, |_| "* * * * * *")?;
    let mut sources = vec![Source::new(every, "every")];
    if n > m {
        let rest = dir.join(format!("{label}-mix"));
        generate(&rest, "mix", n - m, |i| MIX[i % MIX.len()])?;
        sources.push(Source::new(rest, "mix"));
    }
    let reg = Arc::new(Registry::load(RegistryConfig::with_sources(sources)));
    let state_dir = dir.join(format!("{label}-state"));
    std::fs::create_dir_all(&state_dir)
        .map_err(|e| format!("cannot make the state folder: {e}"))?;
    let state_path = state_dir.join("schedule-state.json");
    let secs = window.as_secs().max(1) as usize;

    let timers = rt.block_on(async {
        let samples = Arc::new(Mutex::new(Vec::with_capacity(m * secs)));
        let end = Utc::now() + window;
        let mut tasks = Vec::with_capacity(m);
        for _ in 0..m {
            let samples = samples.clone();
            tasks.push(tokio::spawn(async move {
                loop {
                    let now = Utc::now();
                    let target = next_second(now);
                    if target > end {
                        break;
                    }
                    tokio::time::sleep((target - now).to_std().unwrap_or_default()).await;
                    let late = (Utc::now() - target).to_std().unwrap_or_default();
                    if let Ok(mut s) = samples.lock() {
                        s.push(late);
                    }
                }
            }));
        }
        for t in tasks {
            let _ = t.await;
        }
        Arc::try_unwrap(samples)
            .ok()
            .and_then(|m| m.into_inner().ok())
            .unwrap_or_default()
    });

    let recorder = Arc::new(Lateness {
        since: Utc::now(),
        samples: Mutex::new(Vec::with_capacity(m * secs)),
    });
    let config = SchedulerConfig {
        state_path: Some(state_path.clone()),
        ..SchedulerConfig::default()
    };
    let started = Instant::now();
    let outcome = rt.block_on(async {
        let s =
            Scheduler::start(reg.clone(), recorder.clone(), config).map_err(|e| e.to_string())?;
        tokio::time::sleep(window).await;
        let warnings = s.warnings();
        s.shutdown();
        match warnings.first() {
            Some(w) => Err(format!("the scheduler warned: {w}")),
            None => Ok(()),
        }
    });
    let elapsed = started.elapsed();
    outcome?;
    let mut fires = recorder
        .samples
        .lock()
        .map(|s| s.clone())
        .unwrap_or_default();
    let mut timers = timers;
    fires.sort_unstable();
    timers.sort_unstable();
    let state_bytes = std::fs::metadata(&state_path).map_or(0, |md| md.len());
    Ok(Window {
        fires,
        timers,
        elapsed,
        state_bytes,
    })
}

fn next_second(now: DateTime<Utc>) -> DateTime<Utc> {
    let whole = now.timestamp() + 1;
    DateTime::from_timestamp(whole, 0).unwrap_or(now)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
