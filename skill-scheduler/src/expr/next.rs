//! The next fire instant of a [`Schedule`] in a time zone: a day-by-day search of the wall
//! clock, with cronie's daylight-saving rules (fixed-time jobs fire once after a gap and
//! once in a repeated hour; wildcard jobs follow elapsed time).

use chrono::{DateTime, Duration, LocalResult, NaiveDateTime, Offset, TimeZone, Timelike, Utc};
#[cfg(test)]
use chrono::{Datelike, NaiveDate, NaiveTime};
use chrono_tz::{GapInfo, Tz};

use super::Schedule;

/// How many calendar days ahead [`Schedule::next_after`] looks before giving up: the
/// 400-year Gregorian cycle, within which every date that exists falls on every weekday.
/// (The longest real gap is a 29th of February on a given weekday when a `*`-led day
/// field makes the day rule AND: 40 years, 2088 to 2128 for Sundays.) The parser already
/// rejects every schedule that can never fire, so this bound only guards against surprises;
/// months outside the schedule are skipped a month at a time.
pub const MAX_SEARCH_DAYS: u32 = 366 * 400;

/// The widest daylight-saving shift handled as a transition (cronie uses the same bound):
/// a fire in a repeated hour is looked for this far back.
const MAX_DST_SHIFT: Duration = Duration::hours(3);

impl Schedule {
    #[cfg(test)]
    fn day_matches(&self, date: NaiveDate) -> bool {
        let dom = self.days_of_month & (1 << date.day()) != 0;
        let dow = self.days_of_week & (1 << date.weekday().num_days_from_sunday()) != 0;
        if self.dom_star || self.dow_star {
            dom && dow
        } else {
            dom || dow
        }
    }

    /// The first time of day at or after `h:m:s` that matches, if any.
    #[cfg(test)]
    fn time_at_or_after(&self, h: u32, m: u32, s: u32) -> Option<NaiveTime> {
        let first_min = next_bit(self.minutes, 0)?;
        let first_sec = next_bit(self.seconds, 0)?;
        let hh = next_bit(self.hours, h)?;
        if hh > h {
            return NaiveTime::from_hms_opt(hh, first_min, first_sec);
        }
        if let Some(mm) = next_bit(self.minutes, m) {
            if mm > m {
                return NaiveTime::from_hms_opt(h, mm, first_sec);
            }
            if let Some(ss) = next_bit(self.seconds, s) {
                return NaiveTime::from_hms_opt(h, m, ss);
            }
            if let Some(mm) = next_bit(self.minutes, m + 1) {
                return NaiveTime::from_hms_opt(h, mm, first_sec);
            }
        }
        let hh = next_bit(self.hours, h + 1)?;
        NaiveTime::from_hms_opt(hh, first_min, first_sec)
    }

    /// The first wall-clock time strictly after `after` (whole seconds) that matches: the
    /// hand-written bit-set search, kept while the differential test compares it with `cron`.
    #[cfg(test)]
    pub(super) fn next_local_bitsets(&self, after: NaiveDateTime) -> Option<NaiveDateTime> {
        let start = after.with_nanosecond(0)? + Duration::seconds(1);
        let mut date = start.date();
        let (mut h, mut m, mut s) = (start.hour(), start.minute(), start.second());
        for _ in 0..MAX_SEARCH_DAYS {
            if self.months & (1 << date.month()) == 0 {
                let (y, mo) = if date.month() == 12 {
                    (date.year() + 1, 1)
                } else {
                    (date.year(), date.month() + 1)
                };
                date = NaiveDate::from_ymd_opt(y, mo, 1)?;
                (h, m, s) = (0, 0, 0);
                continue;
            }
            if self.day_matches(date) {
                if let Some(t) = self.time_at_or_after(h, m, s) {
                    return Some(date.and_time(t));
                }
            }
            date = date.succ_opt()?;
            (h, m, s) = (0, 0, 0);
        }
        None
    }

    /// The first fire instant strictly after `after`, with the schedule read on the wall
    /// clock of `tz`. `None` only past the end of the calendar chrono supports (or
    /// [`MAX_SEARCH_DAYS`] without a match, which the parser rules out).
    ///
    /// Daylight-saving rules (cronie's): a fixed-time job whose wall time falls in a skipped
    /// hour fires once at the first instant after the gap; in a repeated hour it fires at
    /// the first occurrence only. A wildcard job ([`Schedule::is_wildcard`]) follows elapsed
    /// time: it fires at every real instant that matches and at none inside a gap.
    pub fn next_after(&self, after: DateTime<Utc>, tz: Tz) -> Option<DateTime<Utc>> {
        self.next_after_with(after, tz, |t| self.times.next_local(t))
    }

    /// [`Schedule::next_after`] with the given search for the next matching wall time.
    pub(super) fn next_after_with(
        &self,
        after: DateTime<Utc>,
        tz: Tz,
        next_local: impl Fn(NaiveDateTime) -> Option<NaiveDateTime>,
    ) -> Option<DateTime<Utc>> {
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

/// The lowest set bit of `mask` at or above `from`.
#[cfg(test)]
fn next_bit(mask: u64, from: u32) -> Option<u32> {
    if from >= 64 {
        return None;
    }
    let rest = mask & (u64::MAX << from);
    (rest != 0).then(|| rest.trailing_zeros())
}

#[cfg(test)]
mod tests {
    use super::next_bit;

    #[test]
    fn next_bit_edges() {
        assert_eq!(next_bit(0b1010, 0), Some(1));
        assert_eq!(next_bit(0b1010, 2), Some(3));
        assert_eq!(next_bit(0b1010, 4), None);
        assert_eq!(next_bit(u64::MAX, 63), Some(63));
        assert_eq!(next_bit(u64::MAX, 64), None);
    }
}
