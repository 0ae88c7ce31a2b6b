//! The next fire instant of a [`Schedule`] in a time zone: the `cron` crate finds the next
//! matching wall-clock time, and this module maps it to an instant with cronie's
//! daylight-saving rules (fixed-time jobs fire once after a gap and once in a repeated
//! hour; wildcard jobs follow elapsed time), which `cron` cannot express: given a zone, it
//! skips wall times that do not exist and fires both passes of a repeated hour for every
//! job.

use chrono::{DateTime, Duration, LocalResult, NaiveDateTime, Offset, TimeZone, Timelike, Utc};
use chrono_tz::{GapInfo, Tz};

use super::Schedule;

/// The widest daylight-saving shift handled as a transition (cronie uses the same bound):
/// a fire in a repeated hour is looked for this far back.
const MAX_DST_SHIFT: Duration = Duration::hours(3);

impl Schedule {
    /// The first fire instant strictly after `after`, with the schedule read on the wall
    /// clock of `tz`. `None` when the wall clock is outside [`FIRST_YEAR`]..=[`LAST_YEAR`]
    /// (the `cron` crate's calendar) or the schedule's next fire is past the end of it.
    ///
    /// [`FIRST_YEAR`]: crate::FIRST_YEAR
    /// [`LAST_YEAR`]: crate::LAST_YEAR
    ///
    /// Daylight-saving rules (cronie's): a fixed-time job whose wall time falls in a skipped
    /// hour fires once at the first instant after the gap; in a repeated hour it fires at
    /// the first occurrence only. A wildcard job ([`Schedule::is_wildcard`]) follows elapsed
    /// time: it fires at every real instant that matches and at none inside a gap.
    pub fn next_after(&self, after: DateTime<Utc>, tz: Tz) -> Option<DateTime<Utc>> {
        let next_local = |t| self.times.next_local(t);
        let local = after.with_timezone(&tz).naive_local();
        let mut best = None;
        let mut cursor = local;
        while let Some(cand) = next_local(cursor) {
            if let Some(t) = self.instant_of(cand, tz, after) {
                best = Some(t);
                break;
            }
            cursor = cand;
        }
        // A wildcard job's second pass through a repeated hour can hold wall times at or
        // before `after`'s, at later instants: look there when the clock goes back soon.
        if self.wild && tz != Tz::UTC {
            let now_offset = tz.offset_from_utc_datetime(&after.naive_utc()).fix();
            let later = after + MAX_DST_SHIFT;
            let later_offset = tz.offset_from_utc_datetime(&later.naive_utc()).fix();
            if later_offset.local_minus_utc() < now_offset.local_minus_utc() {
                let mut cursor = local - MAX_DST_SHIFT;
                while let Some(cand) = next_local(cursor) {
                    if cand > local {
                        break;
                    }
                    if let LocalResult::Ambiguous(_, second) = tz.from_local_datetime(&cand) {
                        let second = second.with_timezone(&Utc);
                        if second > after {
                            best = Some(best.map_or(second, |b: DateTime<Utc>| b.min(second)));
                            break;
                        }
                    }
                    cursor = cand;
                }
            }
        }
        best
    }

    /// The instant a matching wall time `cand` fires at, if it is after `after`.
    fn instant_of(
        &self,
        cand: NaiveDateTime,
        tz: Tz,
        after: DateTime<Utc>,
    ) -> Option<DateTime<Utc>> {
        match tz.from_local_datetime(&cand) {
            LocalResult::Single(t) => Some(t.with_timezone(&Utc)).filter(|t| *t > after),
            LocalResult::Ambiguous(first, second) => {
                let first = first.with_timezone(&Utc);
                let second = second.with_timezone(&Utc);
                if first > after {
                    Some(first)
                } else if self.wild && second > after {
                    Some(second)
                } else {
                    None
                }
            }
            LocalResult::None => {
                if self.wild {
                    return None;
                }
                gap_end(cand, tz).filter(|t| *t > after)
            }
        }
    }

    /// The next `n` fire instants strictly after `after`.
    pub fn upcoming(&self, after: DateTime<Utc>, tz: Tz, n: usize) -> Vec<DateTime<Utc>> {
        let mut out = Vec::with_capacity(n.min(1024));
        let mut t = after;
        while out.len() < n {
            match self.next_after(t, tz) {
                Some(next) => {
                    out.push(next);
                    t = next;
                }
                None => break,
            }
        }
        out
    }
}

/// The first instant after the daylight-saving gap that swallows wall time `local`.
fn gap_end(local: NaiveDateTime, tz: Tz) -> Option<DateTime<Utc>> {
    if let Some(end) = GapInfo::new(&local, &tz).and_then(|g| g.end) {
        return Some(end.with_timezone(&Utc));
    }
    // Fallback: walk forward a minute at a time to the first wall time that exists.
    let mut v = local.with_second(0)?;
    for _ in 0..(24 * 60) {
        v += Duration::minutes(1);
        if let Some(t) = tz.from_local_datetime(&v).earliest() {
            return Some(t.with_timezone(&Utc));
        }
    }
    None
}
