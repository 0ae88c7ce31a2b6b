//! Unit tests of expressions: parsing, errors with their column, and next fire instants
//! (month ends, the OR rule, daylight saving in Berlin).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use chrono::Duration;
use chrono_tz::Tz;

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
    assert_eq!(
        next("0 0 29 2 *", utc(2092, 3, 1, 0, 0, 0)),
        utc(2096, 2, 29, 0, 0, 0)
    );
    // 2100 is not a leap year, and 2104 is past the end of `cron`'s calendar: no fire.
    let leap = Schedule::parse("0 0 29 2 *").unwrap();
    assert_eq!(leap.next_after(utc(2096, 3, 1, 0, 0, 0), Tz::UTC), None);
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
