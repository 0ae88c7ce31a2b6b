//! `skill-scheduler`: skills with a `schedule:` line become cron jobs that fire once, on
//! time, across registry reloads and process restarts.
//!
//! It owns three things:
//!
//! 1. **Expressions** ([`Schedule`]): crontab(5) as cronie reads it. Five fields
//!    (`minute hour day-of-month month day-of-week`), or six with a leading seconds field;
//!    `*`, numbers, ranges `a-b`, steps `*/n` and `a-b/n`, lists `a,b-c`, month and weekday
//!    names (`jan`, `mon`, any case), day-of-week `0` and `7` both Sunday, and the
//!    shorthands `@yearly` (`@annually`), `@monthly`, `@weekly`, `@daily` (`@midnight`),
//!    `@hourly`. When both day fields are restricted a day matches if *either* does
//!    (crontab's OR rule); as in cronie, a day field that starts with `*` (even `*/2`)
//!    counts as unrestricted and the two are combined with AND. Errors carry the 1-based
//!    column of the problem: out-of-range values, unknown names, `*/0` and other steps
//!    outside `1..=max`, a step after a single value (`5/10`: crontab(5) only allows
//!    steps after ranges and `*`), reversed ranges, a wrong number of fields, text longer
//!    than [`MAX_EXPRESSION_CHARS`], and schedules that can never fire (`0 0 30 2 *`),
//!    which are reported at parse time instead of being searched for.
//! 2. **Time**: [`Schedule::next_after`] reads the schedule on the wall clock of an IANA
//!    zone ([`parse_timezone`]; UTC by default) with cronie's daylight-saving rules:
//!    - a *fixed-time* job (its seconds, minute and hour fields do not start with `*`,
//!      such as `30 2 * * *`) whose wall time falls in a skipped hour fires **once, at the
//!      first instant after the gap** (several skipped times collapse into that one fire);
//!      in a repeated hour it fires **once, at the first occurrence**;
//!    - a *wildcard* job (`*/15 * * * *`, `0 * * * *`) follows elapsed time: nothing fires
//!      for wall times that do not exist, and a repeated hour's times fire at each real
//!      instant they occur (so an hourly job keeps running hourly).
//! 3. **Jobs** ([`Scheduler`]): one per loaded skill with a valid `schedule`, kept in step
//!    with the registry's change sets (added, changed and removed without restart), fired
//!    on a tokio task into a [`Dispatcher`] with the skill name, the scheduled instant and
//!    the snapshot generation (and the skill as that generation holds it). Policies:
//!    - a run still going when the next fire comes is not started, and is recorded as
//!      [`Outcome::SkippedOverlap`];
//!    - fires missed while the process was down are not replayed, unless
//!      [`CatchUp::RunOnceOnStart`] asks for one run at start;
//!    - each scheduled instant fires at most once, and instants missed while running
//!      (the driver stalled, the machine slept, the clock stepped forward) are not
//!      replayed either: the job runs once, late (its record shows the instant it was for),
//!      and its next fire is the first instant after the current second;
//!    - the last fire of each job is persisted (JSON, written to a temporary file,
//!      fsynced, renamed into place, folder fsynced) before its run starts, so a restart
//!      never fires the same instant twice (see *Write order* below); a corrupt or
//!      newer-version state file is copied aside and the scheduler starts clean with a
//!      warning ([`Scheduler::warnings`]);
//!    - a reload that lands on a fire instant fires it exactly once: an unchanged schedule
//!      keeps its queued fire, a changed or new one looks for its next fire after the last
//!      fire or the second before the current one, whichever is later (so an instant in
//!      the current second still fires, late by less than a second, and an instant that
//!      already fired never fires again); before each fire the driver applies any change
//!      set not yet seen, so the run gets the skill as it is at that moment;
//!    - a removed skill (or one that turns invalid, or loses its `schedule`) is dropped at
//!      once and never fires again; runs already started carry on; its last fire is
//!      dropped from the state file by the next write once it is over a second old (as are
//!      entries of skills that are gone by the next start), so the file holds only the
//!      jobs there are;
//!    - run history is bounded ([`DEFAULT_HISTORY_LIMIT`], at most [`MAX_HISTORY_LIMIT`]).
//!
//!    [`Scheduler::jobs`] lists every job with its expression, zone, next fire instants
//!    and last run; [`scheduled_skills`] does the same work for a snapshot without running
//!    anything (the `skill-server schedules` command uses it).
//!
//! ## The `cron` crate and what stays here
//!
//! Fire times come from the `cron` crate, which the design names. Its language is not
//! crontab(5), so a thin adapter writes each validated schedule in it: fields in `cron`'s
//! order (`sec min hour dom month dow`, second `0` for five fields), weekdays renumbered
//! (crontab's 0 and 7 are Sunday, `cron`'s Sunday is 1), names and shorthands resolved
//! to numbers. This crate keeps what `cron` cannot express:
//! - **validation with columns**: `cron`'s errors carry no position and it accepts text
//!   crontab(5) refuses (`5/10`, `?`, full day names, a year field), so the crontab text
//!   is checked here first, each problem at its column;
//! - **the OR rule**: `cron` ANDs the day fields; with both restricted, two `cron`
//!   schedules (the day-of-month one with weekday `*`, the weekday one with day-of-month
//!   `*`) are searched and the earlier time wins;
//! - **the never-fires check** (`0 0 30 2 *`), over `cron`'s month and day sets;
//! - **daylight saving**: `cron` searches the wall clock only; cronie's gap and
//!   repeated-hour rules map its times to instants here;
//! - `@reboot` stays refused with a diagnostic (a skill schedule names times).
//!
//! `cron`'s calendar ends with [`LAST_YEAR`] (2100) and starts with [`FIRST_YEAR`]
//! (1970): [`Schedule::next_after`] answers `None` outside it.
//!
//! ## Write order
//!
//! With a state file, an instant is written to it before any run for it starts: the safe
//! order for "never twice". The write happens *ahead* of the instant, so its latency (an
//! fsync, milliseconds) is not part of the fires' lateness:
//!
//! 1. [`STATE_WRITE_LEAD`] (100 ms) before instant `T`, the driver records `T` as the last
//!    fire of every job due at `T` (beside the other jobs' last fires) and writes the
//!    file, fsynced, in one write for all of them;
//! 2. at `T` it applies any change set not yet seen, then starts the runs of the jobs whose
//!    queued fire is still `T`, with no write in between. A skill removed in the meantime
//!    does not fire; one whose schedule changed fires at its new next instant, not at `T`
//!    unless that is its next instant too. Its entry written ahead is then dropped, so the
//!    next write records its real last fire: an entry means "this instant fired, or was
//!    about to", and must not stand for a fire that was called off;
//! 3. a fire the file does not record yet when its instant comes (a job added or changed
//!    less than the lead before its instant, a driver that stalled past it) gets the old
//!    order: one write, then its runs, late by the write. A write that takes longer than
//!    the lead makes the fires late too; none ever starts before its instant.
//!
//! A crash between the write and `T` loses the fires of `T` (the restarted scheduler looks
//! for the next fires after `T`) but never repeats one: the same guarantee as writing at
//! `T`, with the window longer by the lead. The lead is under the one-second step between
//! instants, so an entry written ahead is at most one instant ahead of the job's real last
//! fire.
//!
//! ## Clock and tests
//!
//! [`Clock::System`] reads the wall clock and re-checks it at least every 30 seconds, so a
//! clock step delays a fire by at most that much. [`Clock::StartingAt`] starts the wall
//! clock at a given instant and advances it with tokio's clock, which is how the tests run
//! on tokio's paused clock without sleeping.
//!
//! ## Modules
//!
//! `scheduler` (the handle: start, jobs, history) sits over `driver` (the tokio task: wake,
//! take the due fires, write the state, launch the runs). The driver sits over `queue` (the
//! jobs, their fire queue and the write-ahead rule) and `history` (run records). Below those
//! are `config`, `dispatch` ([`Fire`], [`Dispatcher`]), `jobs`, `state` (the state file) and
//! `expr` (the crontab grammar and its diagnostics in `mod.rs`, the translation for the `cron`
//! crate in `adapter`, daylight saving in `next`). Module edges only go downward; xtask's
//! tidy test checks that no module cycle exists.
//!
//! Warnings (a state file that cannot be used or written) are logged through `tracing` when
//! they happen, and the newest [`MAX_WARNINGS`] are kept for [`Scheduler::warnings`].
//!
//! ## Example
//!
//! ```
//! use skill_scheduler::{Schedule, parse_timezone};
//! use chrono::{TimeZone, Utc};
//!
//! let weekdays = Schedule::parse("0 8 * * 1-5").unwrap();
//! // Friday 2026-11-20 at noon: the next fire is Monday at 08:00 in Berlin (07:00 UTC).
//! let friday = Utc.with_ymd_and_hms(2026, 11, 20, 12, 0, 0).unwrap();
//! let berlin = parse_timezone("Europe/Berlin").unwrap();
//! let next = weekdays.next_after(friday, berlin).unwrap();
//! assert_eq!(next, Utc.with_ymd_and_hms(2026, 11, 23, 7, 0, 0).unwrap());
//!
//! let err = Schedule::parse("0 0 30 2 *").unwrap_err();
//! assert_eq!(err.to_string(), "column 5: this schedule never fires: no month it names has that day of the month");
//! ```

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod config;
mod dispatch;
mod driver;
mod expr;
mod history;
mod jobs;
mod queue;
mod scheduler;
mod state;

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

/// The instant and zone types of this crate's API, re-exported so callers need not depend
/// on `chrono` and `chrono-tz` themselves.
pub use chrono::{DateTime, SecondsFormat, Utc};
pub use chrono_tz::Tz;
pub use config::{
    CatchUp, Clock, DEFAULT_HISTORY_LIMIT, MAX_HISTORY_LIMIT, SchedulerConfig, parse_timezone,
};
pub use dispatch::{DispatchFuture, Dispatcher, Fire, RunResult};
pub use expr::{FIRST_YEAR, LAST_YEAR, MAX_EXPRESSION_CHARS, Schedule};
pub use history::{Outcome, RunRecord};
pub use jobs::{ScheduledSkill, schedule_diagnostic, scheduled_skills};
pub use queue::{MAX_CATCH_UP_SCAN, MAX_WARNINGS, STATE_WRITE_LEAD};
pub use scheduler::{JobInfo, Scheduler};
pub use state::{MAX_STATE_BYTES, STATE_VERSION};

/// Everything that can go wrong in this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A schedule expression does not parse, or can never fire.
    #[error("column {column}: {message}")]
    Expression {
        /// 1-based column (in characters) of the problem within the expression.
        column: u32,
        /// What is wrong and how to write it instead.
        message: String,
    },
    /// A time zone name that is not in the IANA database.
    #[error("unknown time zone `{0}`: use an IANA name such as `UTC` or `Europe/Berlin`")]
    UnknownTimezone(String),
    /// The state file could not be written.
    #[error("cannot write schedule state {path}: {source}")]
    State {
        /// The state file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// [`Scheduler::start`] was called outside a tokio runtime.
    #[error("the scheduler must be started inside a tokio runtime")]
    NoRuntime,
}

/// A mutex's guard, whether or not a thread panicked while holding it: every structure
/// the scheduler locks stays consistent between statements, so a poisoned lock is usable.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
