//! crontab(5) expressions: validation of the text, with the column of each problem (the
//! `cron` crate reports none), the shorthands, and the never-fires check. The validated
//! fields go to the `cron` crate through `adapter`, which finds matching wall-clock
//! times; `next` turns them into instants in a time zone with cronie's daylight-saving
//! rules.

mod adapter;
#[cfg(test)]
mod differential;
mod next;
#[cfg(test)]
mod tests;

pub use adapter::{FIRST_YEAR, LAST_YEAR};

use adapter::{CronTimes, Fields, Item};

#[cfg(test)]
use chrono::{DateTime, TimeZone, Utc};

use crate::Error;

/// Longest expression accepted, in characters. Longer text is rejected at this column + 1
/// before any field is read (a schedule is one short line; a 100-field string is a mistake).
pub const MAX_EXPRESSION_CHARS: usize = 256;

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
    /// The seconds, minute or hour field starts with `*`: the job repeats through the day
    /// and follows elapsed time across daylight-saving changes instead of the wall clock.
    wild: bool,
    /// The same schedule for the `cron` crate, which finds the fire times.
    times: CronTimes,
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
        let mut fields: [Vec<Item>; 6] = Default::default();
        let offset = 6 - specs.len();
        if offset == 1 {
            fields[0] = vec![Item {
                low: 0,
                high: 0,
                step: 1,
            }];
        }
        for (i, (tok, spec)) in toks.iter().zip(specs).enumerate() {
            fields[offset + i] = parse_field(tok, spec)?;
        }
        let dom_tok = &toks[toks.len() - 3];
        let dow_tok = &toks[toks.len() - 1];
        let starts = |t: &Token<'_>| t.text.starts_with('*');
        let wild = toks[..toks.len() - 3].iter().any(starts);
        let fields = Fields {
            fields,
            dom_star: starts(dom_tok),
            dow_star: starts(dow_tok),
        };
        let Some(times) = CronTimes::new(&fields) else {
            return Err(err(
                1,
                "the `cron` crate refused this schedule as translated (a fault in skill-scheduler: please report it)",
            ));
        };
        // Reject day-of-month / month combinations that never occur (`0 0 30 2 *`): the
        // search would find nothing up to the end of its calendar. With neither day field
        // starting with `*`, the OR rule lets the weekday match on its own, and every
        // weekday occurs in every month.
        if (fields.dom_star || fields.dow_star) && !times.has_a_date() {
            return Err(err(
                dom_tok.column,
                "this schedule never fires: no month it names has that day of the month",
            ));
        }
        Ok(Schedule {
            text: text.to_owned(),
            wild,
            times,
        })
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

fn parse_field(tok: &Token<'_>, spec: &FieldSpec) -> Result<Vec<Item>, Error> {
    let mut items = Vec::new();
    let mut offset = 0;
    for item in tok.text.split(',') {
        let column = tok.column + offset;
        offset += item.len() + 1;
        items.push(parse_item(item, column, spec)?);
    }
    Ok(items)
}

fn parse_item(item: &str, column: usize, spec: &FieldSpec) -> Result<Item, Error> {
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
    Ok(Item { low, high, step })
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
