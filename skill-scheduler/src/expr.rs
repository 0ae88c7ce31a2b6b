//! crontab(5) expressions: parsing (with the column of each problem) and the next fire
//! instant in a time zone, daylight-saving transitions included.

use chrono::{
    DateTime, Datelike, Duration, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, Offset,
    TimeZone, Timelike, Utc,
};
use chrono_tz::{GapInfo, Tz};

use crate::Error;

/// Longest expression accepted, in characters. Longer text is rejected at this column + 1
/// before any field is read (a schedule is one short line; a 100-field string is a mistake).
pub const MAX_EXPRESSION_CHARS: usize = 256;

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

/// A parsed crontab(5) schedule.
///
/// Build one with [`Schedule::parse`]; ask for fire instants with [`Schedule::next_after`]
/// or [`Schedule::upcoming`].
///
/// ```
/// use skill_scheduler::{Schedule, Tz};
/// use chrono::{TimeZone, Utc};
///
/// // Every 15 minutes from 9 to 17 on weekdays.
/// let schedule: Schedule = "*/15 9-17 * * mon-fri".parse()?;
/// // Friday 2026-11-20 at 17:40 UTC: the last fire of Friday has passed.
/// let after = Utc.with_ymd_and_hms(2026, 11, 20, 17, 40, 0).unwrap();
/// let next: Vec<String> = schedule
///     .upcoming(after, Tz::UTC, 3)
///     .iter()
///     .map(|t| t.format("%a %H:%M").to_string())
///     .collect();
/// assert_eq!(next, ["Fri 17:45", "Mon 09:00", "Mon 09:15"]);
///
/// // Six fields: a leading seconds field.
/// let twice_a_minute = Schedule::parse("0,30 * * * * *")?;
/// let t = twice_a_minute.next_after(after, Tz::UTC).unwrap();
/// assert_eq!(t, Utc.with_ymd_and_hms(2026, 11, 20, 17, 40, 30).unwrap());
/// # Ok::<(), skill_scheduler::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    text: String,
    seconds: u64,
    minutes: u64,
    hours: u64,
    days_of_month: u64,
    months: u64,
    days_of_week: u64,
    /// The day-of-month field starts with `*` (cronie's `DOM_STAR`).
    dom_star: bool,
    /// The day-of-week field starts with `*` (cronie's `DOW_STAR`).
    dow_star: bool,
    /// The seconds, minute or hour field starts with `*`: the job repeats through the day
    /// and follows elapsed time across daylight-saving changes instead of the wall clock.
    wild: bool,
}

/// One field's rules.
#[derive(Clone, Copy)]
struct FieldSpec {
    name: &'static str,
    min: u32,
    max: u32,
    names: &'static [&'static str],
    /// The value names start at this number (`jan` = 1, `sun` = 0).
    names_base: u32,
}

const SECOND: FieldSpec = FieldSpec {
    name: "second",
    min: 0,
    max: 59,
    names: &[],
    names_base: 0,
};
const MINUTE: FieldSpec = FieldSpec {
    name: "minute",
    min: 0,
    max: 59,
    names: &[],
    names_base: 0,
};
const HOUR: FieldSpec = FieldSpec {
    name: "hour",
    min: 0,
    max: 23,
    names: &[],
    names_base: 0,
};
const DAY_OF_MONTH: FieldSpec = FieldSpec {
    name: "day-of-month",
    min: 1,
    max: 31,
    names: &[],
    names_base: 0,
};
const MONTH: FieldSpec = FieldSpec {
    name: "month",
    min: 1,
    max: 12,
    names: &[
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ],
    names_base: 1,
};
const DAY_OF_WEEK: FieldSpec = FieldSpec {
    name: "day-of-week",
    min: 0,
    max: 7,
    names: &["sun", "mon", "tue", "wed", "thu", "fri", "sat"],
    names_base: 0,
};

const FIVE_FIELDS: [FieldSpec; 5] = [MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK];
const SIX_FIELDS: [FieldSpec; 6] = [SECOND, MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK];

/// The `@` shorthands and the five-field text each stands for.
const MACROS: &[(&str, &str)] = &[
    ("@yearly", "0 0 1 1 *"),
    ("@annually", "0 0 1 1 *"),
    ("@monthly", "0 0 1 * *"),
    ("@weekly", "0 0 * * 0"),
    ("@daily", "0 0 * * *"),
    ("@midnight", "0 0 * * *"),
    ("@hourly", "0 * * * *"),
];

fn err(column: usize, message: impl Into<String>) -> Error {
    Error::Expression {
        column: u32::try_from(column).unwrap_or(u32::MAX),
        message: message.into(),
    }
}

/// A token of the expression: its text and 1-based column.
struct Token<'a> {
    text: &'a str,
    column: usize,
}

fn tokens(text: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        if c == ' ' || c == '\t' {
            if let Some(s) = start.take() {
                out.push(Token {
                    text: &text[s..i],
                    column: s + 1,
                });
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push(Token {
            text: &text[s..],
            column: s + 1,
        });
    }
    out
}

impl Schedule {
    /// Parse a crontab(5) expression: five fields (`minute hour day-of-month month
    /// day-of-week`), six with a leading seconds field, or one of `@yearly`, `@annually`,
    /// `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`.
    ///
    /// Errors are [`Error::Expression`] with the 1-based column of the problem in `text`.
    pub fn parse(text: &str) -> Result<Schedule, Error> {
        if text.chars().count() > MAX_EXPRESSION_CHARS {
            return Err(err(
                MAX_EXPRESSION_CHARS + 1,
                format!("the expression is longer than {MAX_EXPRESSION_CHARS} characters"),
            ));
        }
        // Columns are byte offsets + 1 below, so refuse anything but ASCII first.
        if let Some((i, c)) = text
            .chars()
            .enumerate()
            .find(|(_, c)| !c.is_ascii() || (c.is_ascii_control() && *c != '\t'))
        {
            return Err(err(i + 1, format!("unexpected character {c:?}")));
        }
        let toks = tokens(text);
        let Some(first) = toks.first() else {
            return Err(err(1, "the expression is empty"));
        };
        if first.text.starts_with('@') {
            if let Some(extra) = toks.get(1) {
                return Err(err(
                    extra.column,
                    format!("`{}` takes no fields after it", first.text),
                ));
            }
            let lower = first.text.to_ascii_lowercase();
            if lower == "@reboot" {
                return Err(err(
                    first.column,
                    "`@reboot` is not supported: a skill schedule names times, not process starts",
                ));
            }
            let Some((_, expansion)) = MACROS.iter().find(|(m, _)| *m == lower) else {
                return Err(err(
                    first.column,
                    format!(
                        "unknown shorthand `{}`: use @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly",
                        first.text
                    ),
                ));
            };
            let mut s = Schedule::parse(expansion)?;
            s.text = text.to_owned();
            return Ok(s);
        }
        let specs: &[FieldSpec] = match toks.len() {
            5 => &FIVE_FIELDS,
            6 => &SIX_FIELDS,
            n if n > 6 => {
                return Err(err(
                    toks[6].column,
                    format!(
                        "too many fields ({n}): a schedule has 5 (minute hour day-of-month month day-of-week) or 6 (seconds first)"
                    ),
                ));
            }
            n => {
                let next = FIVE_FIELDS[n].name;
                return Err(err(
                    text.trim_end().len() + 1,
                    format!(
                        "missing the {next} field: a schedule has 5 fields (minute hour day-of-month month day-of-week)"
                    ),
                ));
            }
        };
        let mut masks = [0u64; 6];
        let offset = 6 - specs.len();
        if offset == 1 {
            masks[0] = 1; // second 0
        }
        for (i, (tok, spec)) in toks.iter().zip(specs).enumerate() {
            masks[offset + i] = parse_field(tok, spec)?;
        }
        let dom_tok = &toks[toks.len() - 3];
        let dow_tok = &toks[toks.len() - 1];
        let starts = |t: &Token<'_>| t.text.starts_with('*');
        let wild = toks[..toks.len() - 3].iter().any(starts);
        // Day-of-week 7 is Sunday, like 0.
        let mut dow = masks[5];
        if dow & (1 << 7) != 0 {
            dow = (dow & !(1 << 7)) | 1;
        }
        let s = Schedule {
            text: text.to_owned(),
            seconds: masks[0],
            minutes: masks[1],
            hours: masks[2],
            days_of_month: masks[3],
            months: masks[4],
            days_of_week: dow,
            dom_star: starts(dom_tok),
            dow_star: starts(dow_tok),
            wild,
        };
        s.check_fires(dom_tok.column)?;
        Ok(s)
    }

    /// Reject day-of-month / month combinations that never occur (`0 0 30 2 *`), which
    /// would otherwise be searched for forever.
    fn check_fires(&self, dom_column: usize) -> Result<(), Error> {
        // With neither day field starting with `*`, the OR rule lets the weekday match on
        // its own, and every weekday occurs in every month.
        if !self.dom_star && !self.dow_star {
            return Ok(());
        }
        const LONGEST: [u32; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
        let fires = (1..=12u32).any(|m| {
            self.months & (1 << m) != 0
                && (1..=LONGEST[(m - 1) as usize]).any(|d| self.days_of_month & (1 << d) != 0)
        });
        if fires {
            Ok(())
        } else {
            Err(err(
                dom_column,
                "this schedule never fires: no month it names has that day of the month",
            ))
        }
    }

    /// The expression as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the job repeats within a day (its seconds, minute or hour field starts with
    /// `*`). Across daylight-saving changes such a job follows elapsed time; a job at fixed
    /// times of day follows the wall clock (see the crate docs).
    pub fn is_wildcard(&self) -> bool {
        self.wild
    }

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

    /// The first wall-clock time strictly after `after` (whole seconds) that matches.
    fn next_local(&self, after: NaiveDateTime) -> Option<NaiveDateTime> {
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
        let local = after.with_timezone(&tz).naive_local();
        let mut best = None;
        let mut cursor = local;
        while let Some(cand) = self.next_local(cursor) {
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
                while let Some(cand) = self.next_local(cursor) {
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

impl std::fmt::Display for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::str::FromStr for Schedule {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Schedule::parse(s)
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
fn next_bit(mask: u64, from: u32) -> Option<u32> {
    if from >= 64 {
        return None;
    }
    let rest = mask & (u64::MAX << from);
    (rest != 0).then(|| rest.trailing_zeros())
}

fn parse_field(tok: &Token<'_>, spec: &FieldSpec) -> Result<u64, Error> {
    let mut mask = 0u64;
    let mut offset = 0;
    for item in tok.text.split(',') {
        let column = tok.column + offset;
        offset += item.len() + 1;
        mask |= parse_item(item, column, spec)?;
    }
    Ok(mask)
}

fn parse_item(item: &str, column: usize, spec: &FieldSpec) -> Result<u64, Error> {
    if item.is_empty() {
        return Err(err(
            column,
            format!(
                "empty entry in the {} field (two commas, or a comma at an end)",
                spec.name
            ),
        ));
    }
    let (range, step) = match item.split_once('/') {
        Some((r, s)) => (r, Some((s, column + r.len() + 1))),
        None => (item, None),
    };
    let (low, high, is_range) = if range == "*" {
        // `*` in day-of-week means 0-6 (7 is only an alias of Sunday).
        let max = if spec.name == DAY_OF_WEEK.name {
            6
        } else {
            spec.max
        };
        (spec.min, max, true)
    } else if let Some((a, b)) = range.split_once('-') {
        let lo = parse_value(a, column, spec)?;
        let hi = parse_value(b, column + a.len() + 1, spec)?;
        if lo > hi {
            return Err(err(
                column,
                format!(
                    "the range {range} in the {} field is reversed: write it from low to high",
                    spec.name
                ),
            ));
        }
        (lo, hi, true)
    } else {
        let v = parse_value(range, column, spec)?;
        (v, v, false)
    };
    let step = match step {
        None => 1,
        Some((s, scol)) => {
            if !is_range {
                return Err(err(
                    scol - 1,
                    format!(
                        "a step needs a range or `*` before it in the {} field (write {range}-{}/{s})",
                        spec.name, spec.max
                    ),
                ));
            }
            let n = parse_number(s, scol, spec, "step")?;
            if n == 0 || n > spec.max.max(1) {
                return Err(err(
                    scol,
                    format!(
                        "step {s} in the {} field must be between 1 and {}",
                        spec.name,
                        spec.max.max(1)
                    ),
                ));
            }
            n
        }
    };
    let mut mask = 0u64;
    let mut v = low;
    while v <= high {
        mask |= 1 << v;
        v += step;
    }
    Ok(mask)
}

fn parse_number(text: &str, column: usize, spec: &FieldSpec, what: &str) -> Result<u32, Error> {
    if text.is_empty() {
        return Err(err(
            column,
            format!("missing {what} in the {} field", spec.name),
        ));
    }
    if let Some(i) = text.find(|c: char| !c.is_ascii_digit()) {
        return Err(err(
            column + i,
            format!(
                "unexpected `{}` in the {} field",
                &text[i..i + 1],
                spec.name
            ),
        ));
    }
    // Long digit strings are out of range anyway; keep the number small.
    if text.len() > 4 {
        return Err(err(
            column,
            format!("{what} {text} is out of range in the {} field", spec.name),
        ));
    }
    text.parse::<u32>()
        .map_err(|_| err(column, format!("{what} {text} is not a number")))
}

fn parse_value(text: &str, column: usize, spec: &FieldSpec) -> Result<u32, Error> {
    if text.starts_with(|c: char| c.is_ascii_alphabetic()) {
        let lower = text.to_ascii_lowercase();
        return match spec.names.iter().position(|n| *n == lower) {
            Some(i) => Ok(spec.names_base + i as u32),
            None if spec.names.is_empty() => Err(err(
                column,
                format!("the {} field takes numbers, not `{text}`", spec.name),
            )),
            None => Err(err(
                column,
                format!(
                    "`{text}` is not a {} name: use one of {}",
                    spec.name,
                    spec.names.join(", ")
                ),
            )),
        };
    }
    let v = parse_number(text, column, spec, "value")?;
    if v < spec.min || v > spec.max {
        return Err(err(
            column,
            format!(
                "{v} is out of range in the {} field ({}-{})",
                spec.name, spec.min, spec.max
            ),
        ));
    }
    Ok(v)
}

/// Build a UTC instant from parts; a test and doc helper kept private to the crate.
#[cfg(test)]
pub(crate) fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, s)
        .single()
        .unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn next(expr: &str, after: DateTime<Utc>) -> DateTime<Utc> {
        Schedule::parse(expr)
            .unwrap()
            .next_after(after, Tz::UTC)
            .unwrap()
    }

    fn column(expr: &str) -> u32 {
        match Schedule::parse(expr) {
            Err(Error::Expression { column, .. }) => column,
            other => panic!("expected an error for {expr:?}, got {other:?}"),
        }
    }

    #[test]
    fn weekdays_skip_the_weekend() {
        // 2026-11-20 is a Friday.
        let fri = utc(2026, 11, 20, 8, 0, 0);
        assert_eq!(next("0 8 * * 1-5", fri), utc(2026, 11, 23, 8, 0, 0));
        assert_eq!(next("0 8 * * mon-fri", fri), utc(2026, 11, 23, 8, 0, 0));
        assert_eq!(next("0 8 * * 0,6", fri), utc(2026, 11, 21, 8, 0, 0));
    }

    #[test]
    fn sunday_is_zero_and_seven() {
        let fri = utc(2026, 11, 20, 12, 0, 0);
        let sunday = utc(2026, 11, 22, 0, 0, 0);
        assert_eq!(next("0 0 * * 0", fri), sunday);
        assert_eq!(next("0 0 * * 7", fri), sunday);
        assert_eq!(next("0 0 * * sun", fri), sunday);
        assert_eq!(next("0 0 * * 6-7", fri), utc(2026, 11, 21, 0, 0, 0));
        assert_eq!(next("@weekly", fri), sunday);
    }

    #[test]
    fn or_rule_when_both_day_fields_are_restricted() {
        // The 13th or any Friday: 2026-11-13 is a Friday; from the 14th the next is Fri 20th.
        let s = Schedule::parse("0 0 13 * fri").unwrap();
        let got = s.upcoming(utc(2026, 11, 14, 0, 0, 0), Tz::UTC, 4);
        assert_eq!(
            got,
            vec![
                utc(2026, 11, 20, 0, 0, 0),
                utc(2026, 11, 27, 0, 0, 0),
                utc(2026, 12, 4, 0, 0, 0),
                utc(2026, 12, 11, 0, 0, 0),
            ]
        );
        assert_eq!(
            next("0 0 13 * fri", utc(2026, 12, 11, 0, 0, 0)),
            utc(2026, 12, 13, 0, 0, 0)
        );
        // A `*`-led day field turns the rule into AND (cronie's DOM_STAR): odd days that are
        // Mondays.
        assert_eq!(
            next("0 0 */2 * mon", utc(2026, 11, 20, 0, 0, 0)),
            utc(2026, 11, 23, 0, 0, 0)
        );
        assert_eq!(
            next("0 0 */2 * mon", utc(2026, 11, 23, 0, 0, 0)),
            utc(2026, 12, 7, 0, 0, 0)
        );
    }

    #[test]
    fn month_ends_and_leap_days() {
        assert_eq!(
            next("0 0 31 * *", utc(2026, 4, 1, 0, 0, 0)),
            utc(2026, 5, 31, 0, 0, 0)
        );
        assert_eq!(
            next("0 0 29 2 *", utc(2026, 1, 1, 0, 0, 0)),
            utc(2028, 2, 29, 0, 0, 0)
        );
        // 2100 is not a leap year: the next 29th of February after 2096 is in 2104.
        assert_eq!(
            next("0 0 29 2 *", utc(2096, 3, 1, 0, 0, 0)),
            utc(2104, 2, 29, 0, 0, 0)
        );
        assert_eq!(
            next("@monthly", utc(2026, 12, 31, 23, 59, 59)),
            utc(2027, 1, 1, 0, 0, 0)
        );
        assert_eq!(
            next("@yearly", utc(2026, 6, 1, 0, 0, 0)),
            utc(2027, 1, 1, 0, 0, 0)
        );
        assert_eq!(
            next("59 23 28-31 feb *", utc(2028, 2, 28, 23, 59, 0)),
            utc(2028, 2, 29, 23, 59, 0)
        );
    }

    #[test]
    fn steps_lists_ranges_and_seconds() {
        let s = Schedule::parse("*/15 9-17/4 * * *").unwrap();
        let got = s.upcoming(utc(2026, 1, 1, 13, 50, 0), Tz::UTC, 3);
        assert_eq!(
            got,
            vec![
                utc(2026, 1, 1, 17, 0, 0),
                utc(2026, 1, 1, 17, 15, 0),
                utc(2026, 1, 1, 17, 30, 0)
            ]
        );
        assert_eq!(
            next("5,10 * * * *", utc(2026, 1, 1, 0, 7, 0)),
            utc(2026, 1, 1, 0, 10, 0)
        );
        assert_eq!(
            next("*/20 * * * * *", utc(2026, 1, 1, 0, 0, 41)),
            utc(2026, 1, 1, 0, 1, 0)
        );
        assert_eq!(
            next("30 0 0 * * *", utc(2026, 1, 1, 0, 0, 0)),
            utc(2026, 1, 1, 0, 0, 30)
        );
        assert_eq!(
            next("@hourly", utc(2026, 1, 1, 0, 0, 0)),
            utc(2026, 1, 1, 1, 0, 0)
        );
        assert_eq!(
            next("0 0 1 JAN *", utc(2026, 1, 1, 0, 0, 0)),
            utc(2027, 1, 1, 0, 0, 0)
        );
        // Strictly after, even for a fraction of a second past the instant.
        let just_after = utc(2026, 1, 1, 0, 10, 0) + Duration::milliseconds(1);
        assert_eq!(next("10 * * * *", just_after), utc(2026, 1, 1, 1, 10, 0));
    }

    #[test]
    fn errors_carry_the_column() {
        assert_eq!(column("60 * * * *"), 1);
        assert_eq!(column("0 24 * * *"), 3);
        assert_eq!(column("0 0 0 * *"), 5);
        assert_eq!(column("0 0 * 13 *"), 7);
        assert_eq!(column("0 0 * * 8"), 9);
        assert_eq!(column("*/0 * * * *"), 3);
        assert_eq!(column("0 5-1 * * *"), 3);
        assert_eq!(column("0 0 * * fri-mon"), 9);
        assert_eq!(column("0 0 * foo *"), 7);
        assert_eq!(column("0 0 * * 1,,2"), 11);
        assert_eq!(column("0 8 * *"), 8);
        assert_eq!(column(""), 1);
        assert_eq!(column("0 0 30 2 *"), 5);
        assert_eq!(column("0 0 31 4,6,9,11 *"), 5);
        assert_eq!(column("5/10 * * * *"), 2);
        assert_eq!(column("0 0 * * * * *"), 13);
        assert_eq!(column("@reboot"), 1);
        assert_eq!(column("@daily 0"), 8);
        assert_eq!(column("1x * * * *"), 2);
        assert_eq!(column("0 0 * * é"), 9);
        assert_eq!(column("0 0 * * mon-"), 13);
        let hundred = vec!["1"; 100].join(" ");
        assert_eq!(column(&hundred), 13);
    }

    #[test]
    fn length_limit_is_enforced_at_the_edge() {
        let pad = " ".repeat(MAX_EXPRESSION_CHARS - "0 0 * * *".len());
        let at_limit = format!("0 0 * * *{pad}");
        assert_eq!(at_limit.len(), MAX_EXPRESSION_CHARS);
        assert!(Schedule::parse(&at_limit).is_ok());
        let over = format!("{at_limit} ");
        assert_eq!(column(&over), MAX_EXPRESSION_CHARS as u32 + 1);
    }

    #[test]
    fn impossible_dates_are_reported_but_or_rule_rescues_them() {
        let e = Schedule::parse("0 0 30 2 *").unwrap_err().to_string();
        assert!(e.contains("never fires"), "{e}");
        // With a weekday too, crontab fires on the weekday.
        assert!(Schedule::parse("0 0 30 2 mon").is_ok());
        assert!(Schedule::parse("0 0 29 2 *").is_ok());
    }

    fn berlin() -> Tz {
        "Europe/Berlin".parse().unwrap()
    }

    #[test]
    fn dst_gap_fires_once_after_the_gap_for_fixed_jobs() {
        // Berlin springs forward on 2026-03-29 at 02:00 CET (01:00 UTC) to 03:00 CEST.
        let s = Schedule::parse("30 2 * * *").unwrap();
        let got = s.upcoming(utc(2026, 3, 28, 12, 0, 0), berlin(), 3);
        assert_eq!(
            got,
            vec![
                utc(2026, 3, 29, 1, 0, 0),  // 02:30 does not exist: 03:00 CEST
                utc(2026, 3, 30, 0, 30, 0), // 02:30 CEST
                utc(2026, 3, 31, 0, 30, 0),
            ]
        );
        // Several skipped times collapse into one fire; 03:00 itself does not fire again.
        let s = Schedule::parse("0,30 2,3 * * *").unwrap();
        let got = s.upcoming(utc(2026, 3, 29, 0, 0, 0), berlin(), 3);
        assert_eq!(
            got,
            vec![
                utc(2026, 3, 29, 1, 0, 0),
                utc(2026, 3, 29, 1, 30, 0),
                utc(2026, 3, 30, 0, 0, 0)
            ]
        );
    }

    #[test]
    fn dst_gap_is_skipped_by_wildcard_jobs() {
        let s = Schedule::parse("30 * * * *").unwrap();
        let got = s.upcoming(utc(2026, 3, 29, 0, 0, 0), berlin(), 2);
        // 01:30 CET = 00:30 UTC, then 02:30 does not exist, then 03:30 CEST = 01:30 UTC.
        assert_eq!(
            got,
            vec![utc(2026, 3, 29, 0, 30, 0), utc(2026, 3, 29, 1, 30, 0)]
        );
    }

    #[test]
    fn dst_repeated_hour_fires_once_for_fixed_jobs() {
        // Berlin falls back on 2026-10-25 at 03:00 CEST (01:00 UTC) to 02:00 CET.
        let s = Schedule::parse("30 2 * * *").unwrap();
        let got = s.upcoming(utc(2026, 10, 24, 12, 0, 0), berlin(), 2);
        assert_eq!(
            got,
            vec![utc(2026, 10, 25, 0, 30, 0), utc(2026, 10, 26, 1, 30, 0)]
        );
    }

    #[test]
    fn dst_repeated_hour_follows_elapsed_time_for_wildcard_jobs() {
        let s = Schedule::parse("30 * * * *").unwrap();
        let got = s.upcoming(utc(2026, 10, 24, 23, 0, 0), berlin(), 4);
        assert_eq!(
            got,
            vec![
                utc(2026, 10, 24, 23, 30, 0), // 01:30 CEST
                utc(2026, 10, 25, 0, 30, 0),  // 02:30 CEST
                utc(2026, 10, 25, 1, 30, 0),  // 02:30 CET
                utc(2026, 10, 25, 2, 30, 0),  // 03:30 CET
            ]
        );
        // From inside the first pass, the second pass comes next.
        let s = Schedule::parse("10 * * * *").unwrap();
        assert_eq!(
            s.next_after(utc(2026, 10, 25, 0, 50, 0), berlin()),
            Some(utc(2026, 10, 25, 1, 10, 0))
        );
        // From inside the second pass, times already passed in the first do not repeat.
        assert_eq!(
            s.next_after(utc(2026, 10, 25, 1, 20, 0), berlin()),
            Some(utc(2026, 10, 25, 2, 10, 0))
        );
    }

    #[test]
    fn next_bit_edges() {
        assert_eq!(next_bit(0b1010, 0), Some(1));
        assert_eq!(next_bit(0b1010, 2), Some(3));
        assert_eq!(next_bit(0b1010, 4), None);
        assert_eq!(next_bit(u64::MAX, 63), Some(63));
        assert_eq!(next_bit(u64::MAX, 64), None);
    }
}
