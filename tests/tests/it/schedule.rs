//! `skill-server schedules` end to end: the bundled scheduled skills' next fire times from a
//! fixed instant, time zones with daylight saving, and bad input (expressions, zones,
//! instants).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use skills_tests::{skill_server, write};

const ALL_PACKS: &[&str] = &[
    "packs/agentskills",
    "packs/actions",
    "packs/lily",
    "packs/pegasus",
    "packs/toolsets",
];

/// Friday 2026-11-20, noon UTC.
const FROM: &str = "2026-11-20T12:00:00Z";

fn schedules(extra: &[&str], packs: &[&str]) -> skills_tests::Run {
    let mut argv = vec!["schedules"];
    for p in packs {
        argv.extend(["--skills", p]);
    }
    argv.extend_from_slice(extra);
    skill_server(&argv)
}

/// A temp skills folder with one actions domain `jobs` and the given `(action, schedule)`s.
fn jobs_pack(jobs: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "jobs/SKILL.md",
        "---\ndomain: jobs\ndescription: Scheduled jobs\n---\n# Jobs\n",
    );
    for (action, schedule) in jobs {
        write(
            dir.path(),
            &format!("jobs/{action}.md"),
            &format!(
                "---\nname: jobs.{action}\ndescription: Job {action}\nschedule: \"{schedule}\"\n---\n\n# jobs.{action}\n\nDo it.\n"
            ),
        );
    }
    dir
}

#[test]
fn bundled_packs_list_their_next_fire_times() {
    let run = schedules(&["--from", FROM, "--next", "6"], ALL_PACKS);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    // The weekday digest skips Saturday and Sunday: Monday to Friday, then Monday again.
    let digest: Vec<&str> = run
        .stdout
        .split("\n\n")
        .find(|block| block.starts_with("workflows.daily_digest  0 8 * * 1-5"))
        .unwrap()
        .lines()
        .skip(1)
        .collect();
    assert_eq!(
        digest,
        vec![
            "  Mon 2026-11-23 08:00:00 UTC  2026-11-23T08:00:00Z",
            "  Tue 2026-11-24 08:00:00 UTC  2026-11-24T08:00:00Z",
            "  Wed 2026-11-25 08:00:00 UTC  2026-11-25T08:00:00Z",
            "  Thu 2026-11-26 08:00:00 UTC  2026-11-26T08:00:00Z",
            "  Fri 2026-11-27 08:00:00 UTC  2026-11-27T08:00:00Z",
            "  Mon 2026-11-30 08:00:00 UTC  2026-11-30T08:00:00Z",
        ]
    );
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn bundled_packs_json_in_a_named_zone() {
    let run = schedules(
        &[
            "--from",
            FROM,
            "--next",
            "3",
            "--tz",
            "Europe/Berlin",
            "--format",
            "json",
        ],
        ALL_PACKS,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["timezone"], "Europe/Berlin");
    let names: Vec<&str> = v["schedules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["skill"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec!["workflows.daily_digest", "workflows.weekly_report"]
    );
    // 08:00 in Berlin is 07:00 UTC in winter: Monday the 23rd is the first weekday after.
    assert_eq!(v["schedules"][0]["next"][0], "2026-11-23T08:00:00+01:00");
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn daylight_saving_gap_fires_once_after_it() {
    let dir = jobs_pack(&[("night", "30 2 * * *"), ("hourly", "0 * * * *")]);
    let path = dir.path().display().to_string();
    let run = skill_server(&[
        "schedules",
        "--skills",
        &path,
        "--tz",
        "Europe/Berlin",
        "--from",
        "2026-03-28T12:00:00Z",
        "--next",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let night = v["schedules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["skill"] == "jobs.night")
        .unwrap();
    // 02:30 does not exist on 2026-03-29 in Berlin: it fires once at 03:00 CEST.
    assert_eq!(
        night["next"],
        serde_json::json!(["2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"])
    );
}

#[test]
fn invalid_schedules_are_diagnostics_with_the_column() {
    let dir = jobs_pack(&[
        ("good", "@daily"),
        ("feb30", "0 0 30 2 *"),
        ("zero_step", "*/0 * * * *"),
        ("reversed", "0 0 * * 5-1"),
    ]);
    let path = dir.path().display().to_string();
    let run = skill_server(&[
        "schedules",
        "--skills",
        &path,
        "--from",
        FROM,
        "--next",
        "1",
    ]);
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("jobs.good  @daily"), "{}", run.stdout);
    assert!(
        run.stdout.contains("Sat 2026-11-21 00:00:00 UTC"),
        "{}",
        run.stdout
    );
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{}", run.stderr);
    // `schedule: "` is 11 characters, so column c of the expression is column 11 + c.
    let expect = [
        ("feb30.md:4:16: error[invalid-schedule]", "never fires"),
        ("reversed.md:4:20: error[invalid-schedule]", "reversed"),
        ("zero_step.md:4:14: error[invalid-schedule]", "step 0"),
    ];
    for (line, (place, what)) in lines.iter().zip(expect) {
        assert!(line.contains(place) && line.contains(what), "{line}");
    }

    let run = skill_server(&["schedules", "--skills", &path, "--format", "json"]);
    assert_eq!(run.code, 1);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let d = v["diagnostics"].as_array().unwrap();
    assert_eq!(d.len(), 3);
    assert_eq!(d[0]["column"], 16);
    assert_eq!(d[0]["code"], "invalid-schedule");
}

#[test]
fn bad_zone_instant_and_count_are_usage_errors() {
    let run = schedules(&["--tz", "Mars/Base"], &["packs/actions"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("unknown time zone `Mars/Base`"),
        "{}",
        run.stderr
    );

    let run = schedules(&["--from", "next tuesday"], &["packs/actions"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("RFC 3339"), "{}", run.stderr);

    let run = schedules(&["--next", "1001"], &["packs/actions"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("more than 1000"), "{}", run.stderr);
    let run = schedules(&["--next", "1000", "--from", FROM], &["packs/actions"]);
    assert_eq!(run.code, 0);
    assert_eq!(
        run.stdout.lines().filter(|l| l.starts_with("  ")).count(),
        2000
    );

    let run = skill_server(&["schedules", "--skills", "packs/no-such-pack"]);
    assert_eq!(run.code, 2);
}

#[test]
fn no_scheduled_skills_is_not_an_error() {
    let run = schedules(&["--from", FROM], &["packs/agentskills"]);
    assert_eq!(run.code, 0);
    assert!(
        run.stdout.starts_with("0 scheduled skills in UTC"),
        "{}",
        run.stdout
    );
}

/// Fewer fire times than `--next` asked for (the calendar ends with 2100) are said, not
/// left to be noticed; none at all is said too.
#[test]
fn fire_times_cut_by_the_end_of_the_calendar_are_said() {
    let dir = jobs_pack(&[("yearly", "0 0 1 1 *")]);
    let path = dir.path().to_str().unwrap();
    let run = skill_server(&[
        "schedules",
        "--skills",
        path,
        "--next",
        "3",
        "--from",
        "2099-06-01T00:00:00Z",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("2100-01-01T00:00:00Z"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("(no further fire time: the scheduler's calendar ends with 2100)"),
        "{}",
        run.stdout
    );
    let run = skill_server(&[
        "schedules",
        "--skills",
        path,
        "--next",
        "1",
        "--from",
        "2099-06-01T00:00:00Z",
    ]);
    assert!(!run.stdout.contains("no further"), "{}", run.stdout);
    let run = skill_server(&[
        "schedules",
        "--skills",
        path,
        "--next",
        "2",
        "--from",
        "2100-06-01T00:00:00Z",
    ]);
    assert!(
        run.stdout
            .contains("(no fire time before the scheduler's calendar ends, with 2100)"),
        "{}",
        run.stdout
    );
}
