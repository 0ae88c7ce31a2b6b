//! How a scheduler is set up ([`SchedulerConfig`]: zone, state file, catch-up policy,
//! history size, clock) and the wall clock it reads.

use std::path::PathBuf;

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;

use crate::Error;

/// Run history kept when the configuration does not say otherwise.
pub const DEFAULT_HISTORY_LIMIT: usize = 1000;

/// The most run records a scheduler keeps, whatever the configuration asks.
pub const MAX_HISTORY_LIMIT: usize = 100_000;

/// What to do about fires missed while the process was not running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CatchUp {
    /// Do not replay them; the next fire is the next instant from now (the default).
    #[default]
    Skip,
    /// Run a job once at start when the state file shows it missed at least one fire
    /// (reported with the latest missed instant); never more than once.
    RunOnceOnStart,
}

/// Where the scheduler's idea of "now" comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Clock {
    /// The system's wall clock (production).
    #[default]
    System,
    /// Wall time starts at this instant and advances with tokio's clock: with tokio's
    /// paused test clock, time moves only when the test advances it.
    StartingAt(DateTime<Utc>),
}

/// How a scheduler runs.
#[derive(Debug, Clone)]
pub struct SchedulerConfig {
    /// The zone schedules are read in (default UTC). See [`parse_timezone`].
    pub timezone: Tz,
    /// Where last fires are persisted; `None` keeps them in memory only.
    pub state_path: Option<PathBuf>,
    /// Missed-fire policy.
    pub catch_up: CatchUp,
    /// How many run records to keep (clamped to 1..=[`MAX_HISTORY_LIMIT`]).
    pub history_limit: usize,
    /// The clock.
    pub clock: Clock,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            timezone: Tz::UTC,
            state_path: None,
            catch_up: CatchUp::Skip,
            history_limit: DEFAULT_HISTORY_LIMIT,
            clock: Clock::System,
        }
    }
}

/// Parse an IANA zone name (`Europe/Berlin`, `UTC`).
pub fn parse_timezone(name: &str) -> Result<Tz, Error> {
    name.parse::<Tz>()
        .map_err(|_| Error::UnknownTimezone(name.to_owned()))
}

/// The wall clock as configured, anchored to tokio's clock for [`Clock::StartingAt`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct WallClock {
    pub(crate) kind: Clock,
    anchor: tokio::time::Instant,
}

impl WallClock {
    /// The clock of `kind`, anchored to tokio's clock now.
    pub(crate) fn new(kind: Clock) -> Self {
        WallClock {
            kind,
            anchor: tokio::time::Instant::now(),
        }
    }

    /// The current wall time.
    pub(crate) fn now(&self) -> DateTime<Utc> {
        match self.kind {
            Clock::System => Utc::now(),
            Clock::StartingAt(start) => {
                let elapsed = tokio::time::Instant::now().saturating_duration_since(self.anchor);
                start + Duration::from_std(elapsed).unwrap_or(Duration::MAX)
            }
        }
    }
}
