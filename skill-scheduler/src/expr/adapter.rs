//! The crontab(5) adapter over the `cron` crate: validated crontab fields are written out
//! in `cron`'s language, and `cron` finds the next matching wall-clock time.
//!
//! Two things differ between the languages and are bridged here:
//! - **field order and weekday numbers**: `cron` reads `sec min hour dom month dow`, with
//!   weekdays 1-7 from Sunday; crontab numbers them 0-7 with both 0 and 7 Sunday. Every
//!   weekday is written to `cron` as a list of its own numbers;
//! - **the day rule**: `cron` requires both day fields to match (AND). crontab fires on a
//!   day that matches *either* when both are restricted (neither starts with `*`, cronie's
//!   `DOM_STAR`/`DOW_STAR`), so such a schedule becomes two `cron` schedules, one with
//!   the weekday field `*` and one with the day-of-month field `*`, and the earlier of
//!   their next times wins. With a `*`-led day field crontab ANDs too, and one `cron`
//!   schedule does.
//!
//! `cron`'s calendar runs from [`FIRST_YEAR`] to [`LAST_YEAR`]: outside it there is no
//! answer. Time zones are not given to `cron`: it searches the wall clock (as if it were
//! UTC), and the caller applies the daylight-saving rules.

use chrono::{Datelike, NaiveDateTime};
use cron::TimeUnitSpec;

/// The first year `cron` computes fire times in.
pub const FIRST_YEAR: i32 = 1970;

/// The last year `cron` computes fire times in: [`Schedule::next_after`](super::Schedule::next_after)
/// finds no fire after the end of it.
pub const LAST_YEAR: i32 = 2100;

/// One validated crontab list entry, in crontab's own numbers: every value from `low` to
/// `high` in steps of `step` (`*` is the whole range of its field, `*` in day-of-week 0-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Item {
    pub low: u32,
    pub high: u32,
    pub step: u32,
}

/// The validated fields of one schedule, seconds first (`0` for a five-field schedule).
pub(super) struct Fields {
    pub fields: [Vec<Item>; 6],
    /// The day-of-month field starts with `*`.
    pub dom_star: bool,
    /// The day-of-week field starts with `*`.
    pub dow_star: bool,
}

/// The `cron` schedules of one crontab schedule: one, or two when the OR rule applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CronTimes {
    first: cron::Schedule,
    /// With both day fields restricted: the weekday half of the OR rule (`first` is then the
    /// day-of-month half).
    second: Option<cron::Schedule>,
}

impl CronTimes {
    /// The `cron` schedules for validated fields. `None` only if `cron` refuses the text
    /// written for it, which validation rules out.
    pub(super) fn new(f: &Fields) -> Option<CronTimes> {
        let [sec, min, hour, dom, month, dow] = &f.fields;
        let time = format!(
            "{} {} {}",
            plain_field(sec),
            plain_field(min),
            plain_field(hour)
        );
        let (dom, month, dow) = (plain_field(dom), plain_field(month), weekday_field(dow));
        let parse = |text: String| text.parse::<cron::Schedule>().ok();
        if f.dom_star || f.dow_star {
            return Some(CronTimes {
                first: parse(format!("{time} {dom} {month} {dow}"))?,
                second: None,
            });
        }
        Some(CronTimes {
            first: parse(format!("{time} {dom} {month} *"))?,
            second: Some(parse(format!("{time} * {month} {dow}"))?),
        })
    }

    /// The first wall-clock time strictly after `after` (to the whole second) that the
    /// schedule names; `None` outside [`FIRST_YEAR`]..=[`LAST_YEAR`].
    pub(super) fn next_local(&self, after: NaiveDateTime) -> Option<NaiveDateTime> {
        // Outside its calendar `cron` would jump to 1970, or overflow near chrono's end.
        if !(FIRST_YEAR..=LAST_YEAR).contains(&after.year()) {
            return None;
        }
        let after = after.and_utc();
        let next = |s: &cron::Schedule| s.after(&after).next();
        let first = next(&self.first);
        let second = self.second.as_ref().and_then(next);
        let best = match (first, second) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        best.map(|t| t.naive_utc())
    }

    /// Whether some month the schedule names has a day of the month it names (29 February
    /// counts). Only meaningful when the day rule is AND (a `*`-led day field).
    pub(super) fn has_a_date(&self) -> bool {
        const LONGEST: [u32; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
        let (months, days) = (self.first.months(), self.first.days_of_month());
        (1..=12u32).any(|m| {
            months.includes(m) && (1..=LONGEST[(m - 1) as usize]).any(|d| days.includes(d))
        })
    }
}

/// A field whose numbers `cron` shares with crontab: each entry as `low-high/step`.
fn plain_field(items: &[Item]) -> String {
    let parts: Vec<String> = items
        .iter()
        .map(|i| match (i.low == i.high, i.step) {
            (true, _) => i.low.to_string(),
            (false, 1) => format!("{}-{}", i.low, i.high),
            (false, s) => format!("{}-{}/{s}", i.low, i.high),
        })
        .collect();
    parts.join(",")
}

/// The day-of-week field in `cron`'s numbers (Sunday = 1 ... Saturday = 7): the days the
/// crontab entries name (0 and 7 both Sunday), listed one by one.
fn weekday_field(items: &[Item]) -> String {
    let mut days = [false; 7];
    for i in items {
        let mut v = i.low;
        while v <= i.high {
            days[(v % 7) as usize] = true;
            v += i.step.max(1);
        }
    }
    let list: Vec<String> = (0..7)
        .filter(|d| days[*d])
        .map(|d| (d + 1).to_string())
        .collect();
    list.join(",")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn item(low: u32, high: u32, step: u32) -> Item {
        Item { low, high, step }
    }

    #[test]
    fn weekdays_are_renumbered_from_sunday_as_one() {
        // crontab 0 and 7 are both Sunday, cron's 1.
        assert_eq!(weekday_field(&[item(0, 0, 1), item(7, 7, 1)]), "1");
        // Monday to Friday.
        assert_eq!(weekday_field(&[item(1, 5, 1)]), "2,3,4,5,6");
        // Friday to Sunday (5-7) wraps to cron's 6, 7 and 1.
        assert_eq!(weekday_field(&[item(5, 7, 1)]), "1,6,7");
        // Every other day from Monday: Mon, Wed, Fri, Sun.
        assert_eq!(weekday_field(&[item(1, 7, 2)]), "1,2,4,6");
    }

    #[test]
    fn other_fields_keep_their_numbers() {
        assert_eq!(
            plain_field(&[item(5, 5, 1), item(10, 20, 1), item(0, 59, 15)]),
            "5,10-20,0-59/15"
        );
    }

    #[test]
    fn calendar_edges() {
        let f = Fields {
            fields: [
                vec![item(0, 0, 1)],
                vec![item(0, 0, 1)],
                vec![item(0, 0, 1)],
                vec![item(1, 31, 1)],
                vec![item(1, 12, 1)],
                vec![item(0, 6, 1)],
            ],
            dom_star: true,
            dow_star: true,
        };
        let t = CronTimes::new(&f).unwrap();
        let at = |y, mo, d| {
            chrono::NaiveDate::from_ymd_opt(y, mo, d)
                .unwrap()
                .and_hms_opt(0, 0, 0)
                .unwrap()
        };
        assert_eq!(t.next_local(at(1970, 1, 1)), Some(at(1970, 1, 2)));
        assert_eq!(t.next_local(at(1969, 12, 30)), None);
        assert_eq!(t.next_local(at(2100, 12, 30)), Some(at(2100, 12, 31)));
        assert_eq!(t.next_local(at(2100, 12, 31)), None);
        assert_eq!(t.next_local(at(2101, 1, 1)), None);
    }
}
