//! A background loop's log lines while its work on the shared database fails (the database
//! does not answer, or answers with an error): the first failure is a warning, then one
//! summary every [`SUMMARY_EVERY`], and one line when it works again. A loop polling every
//! half second would otherwise write thousands of lines an hour of outage.

use std::time::Duration;

use tokio::time::Instant;

/// How often a continuing outage is summarized.
pub(crate) const SUMMARY_EVERY: Duration = Duration::from_secs(60);

/// What a loop should log after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Report {
    /// Nothing.
    Quiet,
    /// The first failure after a success: a warning with the error.
    Failing,
    /// Still failing: `errors` failures since the last line.
    Still {
        /// Failures since the last line.
        errors: u64,
    },
    /// It answers again after `errors` failures.
    Recovered {
        /// Failures in all.
        errors: u64,
    },
}

/// One loop's outage state.
#[derive(Debug, Default)]
pub(crate) struct Outage {
    /// Since when it fails, the last line's instant and the failures since the last line
    /// and in all.
    failing: Option<(Instant, Instant, u64, u64)>,
}

impl Outage {
    /// A failed attempt.
    pub(crate) fn failed(&mut self) -> Report {
        let now = Instant::now();
        match &mut self.failing {
            None => {
                self.failing = Some((now, now, 0, 1));
                Report::Failing
            }
            Some((_, last, since_line, total)) => {
                *since_line += 1;
                *total += 1;
                if now.duration_since(*last) >= SUMMARY_EVERY {
                    let errors = std::mem::take(since_line);
                    *last = now;
                    Report::Still { errors }
                } else {
                    Report::Quiet
                }
            }
        }
    }

    /// A successful attempt.
    pub(crate) fn succeeded(&mut self) -> Report {
        match self.failing.take() {
            Some((_, _, _, total)) => Report::Recovered { errors: total },
            None => Report::Quiet,
        }
    }

    /// Log `report` for the loop doing `what` (`error`: the last failure's text).
    pub(crate) fn log(report: Report, what: &str, error: &dyn std::fmt::Display) {
        match report {
            Report::Quiet => {}
            Report::Failing => {
                tracing::warn!(%error, "{what} failed (repeats are summarized every minute)");
            }
            Report::Still { errors } => {
                tracing::warn!(%error, errors, "{what} still fails");
            }
            Report::Recovered { errors } => {
                tracing::info!(errors, "{what} works again");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn an_outage_is_one_warning_a_summary_a_minute_and_one_recovery() {
        let mut o = Outage::default();
        assert_eq!(o.succeeded(), Report::Quiet);
        assert_eq!(o.failed(), Report::Failing);
        // Polled every half second for just under a minute: quiet.
        let mut quiet = 0;
        for _ in 0..119 {
            tokio::time::advance(Duration::from_millis(500)).await;
            if o.failed() == Report::Quiet {
                quiet += 1;
            }
        }
        assert_eq!(quiet, 119);
        tokio::time::advance(Duration::from_millis(500)).await;
        assert_eq!(o.failed(), Report::Still { errors: 120 });
        tokio::time::advance(Duration::from_millis(500)).await;
        assert_eq!(o.failed(), Report::Quiet);
        assert_eq!(o.succeeded(), Report::Recovered { errors: 122 });
        assert_eq!(o.succeeded(), Report::Quiet);
        assert_eq!(o.failed(), Report::Failing);
    }
}
