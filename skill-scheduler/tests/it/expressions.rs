//! `Schedule::next_after` against a brute-force minute-by-minute scan with predicates
//! written by hand from crontab(5), and whole-year invariants in a zone with daylight
//! saving.

use chrono::{DateTime, Datelike, Duration, TimeZone, Timelike, Utc, Weekday};
use skill_scheduler::{Schedule, Tz, parse_timezone};

type Pred = fn(DateTime<Utc>) -> bool;

fn wd(t: DateTime<Utc>) -> u32 {
    t.weekday().num_days_from_sunday()
}

/// Expressions and what crontab(5) says they mean.
const CASES: &[(&str, Pred)] = &[
    ("0 8 * * 1-5", |t| {
        t.minute() == 0 && t.hour() == 8 && (1..=5).contains(&wd(t))
    }),
    ("0 17 * * fri", |t| {
        t.minute() == 0 && t.hour() == 17 && t.weekday() == Weekday::Fri
    }),
    ("*/15 * * * *", |t| t.minute() % 15 == 0),
    ("5-20/5 3 * * *", |t| {
        [5, 10, 15, 20].contains(&t.minute()) && t.hour() == 3
    }),
    ("0 0 1,15 * *", |t| {
        t.minute() == 0 && t.hour() == 0 && [1, 15].contains(&t.day())
    }),
    // OR rule: the 13th, or a Friday.
    ("0 12 13 * 5", |t| {
        t.minute() == 0 && t.hour() == 12 && (t.day() == 13 || t.weekday() == Weekday::Fri)
    }),
    // `*`-led day-of-month: AND.
    ("0 12 */2 * 1", |t| {
        t.minute() == 0 && t.hour() == 12 && t.day() % 2 == 1 && t.weekday() == Weekday::Mon
    }),
    ("30 23 28-31 * *", |t| {
        t.minute() == 30 && t.hour() == 23 && t.day() >= 28
    }),
    ("0 6 * jan,jul sun", |t| {
        t.minute() == 0 && t.hour() == 6 && [1, 7].contains(&t.month()) && wd(t) == 0
    }),
    ("0 6 * * 7", |t| {
        t.minute() == 0 && t.hour() == 6 && wd(t) == 0
    }),
    ("@daily", |t| t.minute() == 0 && t.hour() == 0),
    ("@weekly", |t| {
        t.minute() == 0 && t.hour() == 0 && wd(t) == 0
    }),
    ("0 9-17 * * mon-fri", |t| {
        t.minute() == 0 && (9..=17).contains(&t.hour()) && (1..=5).contains(&wd(t))
    }),
    ("59 23 31 12 *", |t| {
        t.minute() == 59 && t.hour() == 23 && t.day() == 31 && t.month() == 12
    }),
];

#[test]
fn next_after_matches_a_brute_force_scan() {
    let start = Utc.with_ymd_and_hms(2027, 12, 30, 22, 17, 0).unwrap();
    let horizon = Duration::days(400);
    for (expr, pred) in CASES {
        let schedule = Schedule::parse(expr).unwrap();
        let mut expected = Vec::new();
        let mut t = start + Duration::minutes(1);
        while t < start + horizon && expected.len() < 40 {
            if pred(t) {
                expected.push(t);
            }
            t += Duration::minutes(1);
        }
        assert!(!expected.is_empty(), "{expr}");
        let got = schedule.upcoming(start, Tz::UTC, expected.len());
        assert_eq!(got, expected, "{expr}");
    }
}

#[test]
fn a_year_in_berlin_fires_fixed_jobs_once_a_day_and_hourly_jobs_every_real_hour() {
    let berlin = parse_timezone("Europe/Berlin").unwrap();
    let start = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    let end = Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap();

    let nightly = Schedule::parse("30 2 * * *").unwrap();
    let fires: Vec<_> = nightly
        .upcoming(start, berlin, 400)
        .into_iter()
        .filter(|t| *t < end)
        .collect();
    // One per local day, never two on one day, none missing (the spring-forward day fires
    // at 03:00 instead).
    let mut days: Vec<_> = fires
        .iter()
        .map(|t| t.with_timezone(&berlin).date_naive())
        .collect();
    let n = days.len();
    days.dedup();
    assert_eq!(days.len(), n);
    assert_eq!(n, 365);

    let hourly = Schedule::parse("0 * * * *").unwrap();
    let fires: Vec<_> = hourly
        .upcoming(start - Duration::seconds(1), berlin, 9000)
        .into_iter()
        .filter(|t| *t < end)
        .collect();
    // Every real hour of the year, exactly once: 8760 hours.
    assert_eq!(fires.len(), 8760);
    assert!(fires.windows(2).all(|w| w[1] - w[0] == Duration::hours(1)));
}
