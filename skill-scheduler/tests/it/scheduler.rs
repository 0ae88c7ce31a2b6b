//! The scheduler end to end on tokio's paused clock: a registry over a temp folder, a
//! recording dispatcher, and simulated days that pass without sleeping.

use std::sync::Arc;
use std::time::Duration;

use skill_scheduler::{
    CatchUp, Clock, DispatchFuture, Dispatcher, Fire, Outcome, STATE_WRITE_LEAD, Scheduler,
    SchedulerConfig, parse_timezone,
};

use crate::support::*;

#[tokio::test(start_paused = true)]
async fn weekday_job_skips_the_weekend() {
    let pack = Pack::new();
    pack.job("digest", "0 8 * * 1-5", "digest");
    let rec = Recorder::new(Behaviour::Quick);
    // Friday 2026-11-20, 07:00 UTC.
    let s = Scheduler::start(
        pack.registry(),
        rec.clone(),
        config(utc(2026, 11, 20, 7, 0, 0)),
    )
    .unwrap();
    pass(DAY * 4 + HOUR * 2).await; // to Tuesday 09:00
    assert_eq!(
        rec.instants("jobs.digest"),
        vec![
            utc(2026, 11, 20, 8, 0, 0),
            utc(2026, 11, 23, 8, 0, 0),
            utc(2026, 11, 24, 8, 0, 0)
        ]
    );
    let fire = &rec.all()[0];
    assert_eq!(fire.generation, 1);
    assert_eq!(fire.skill.name, "jobs.digest");
    let jobs = s.jobs(2);
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].expression, "0 8 * * 1-5");
    assert_eq!(
        jobs[0].next,
        vec![utc(2026, 11, 25, 8, 0, 0), utc(2026, 11, 26, 8, 0, 0)]
    );
    assert_eq!(jobs[0].last_fire, Some(utc(2026, 11, 24, 8, 0, 0)));
    assert_eq!(
        jobs[0].last_run.as_ref().unwrap().outcome,
        Outcome::Succeeded
    );
}

#[tokio::test(start_paused = true)]
async fn month_ends_leap_day_and_the_or_rule() {
    let pack = Pack::new();
    pack.job("eom", "0 0 31 * *", "");
    pack.job("leap", "0 12 29 feb *", "");
    pack.job("either", "0 9 13 * fri", "");
    let rec = Recorder::new(Behaviour::Quick);
    let _s = Scheduler::start(
        pack.registry(),
        rec.clone(),
        config(utc(2027, 12, 20, 0, 0, 0)),
    )
    .unwrap();
    pass(DAY * 105).await;
    assert_eq!(
        rec.instants("jobs.eom"),
        vec![
            utc(2027, 12, 31, 0, 0, 0),
            utc(2028, 1, 31, 0, 0, 0),
            utc(2028, 3, 31, 0, 0, 0)
        ]
    );
    assert_eq!(rec.instants("jobs.leap"), vec![utc(2028, 2, 29, 12, 0, 0)]);
    // The 13th of each month or any Friday. 2027-12-24 is a Friday; 2028-01-13 a Thursday.
    let either = rec.instants("jobs.either");
    assert_eq!(
        &either[..4],
        &[
            utc(2027, 12, 24, 9, 0, 0),
            utc(2027, 12, 31, 9, 0, 0),
            utc(2028, 1, 7, 9, 0, 0),
            utc(2028, 1, 13, 9, 0, 0),
        ]
    );
    assert!(either.contains(&utc(2028, 3, 13, 9, 0, 0)));
    assert!(either.iter().all(|t| {
        use chrono::Datelike;
        t.day() == 13 || t.weekday() == chrono::Weekday::Fri
    }));
}

#[tokio::test(start_paused = true)]
async fn daylight_saving_in_a_named_zone() {
    let pack = Pack::new();
    pack.job("fixed", "30 2 * * *", "");
    pack.job("hourly", "0 * * * *", "");
    let rec = Recorder::new(Behaviour::Quick);
    let berlin = parse_timezone("Europe/Berlin").unwrap();
    let cfg = SchedulerConfig {
        timezone: berlin,
        ..config(utc(2026, 3, 28, 22, 0, 0))
    };
    let _s = Scheduler::start(pack.registry(), rec.clone(), cfg).unwrap();
    pass(DAY * 2).await;
    // Spring forward on 2026-03-29 at 01:00 UTC: 02:30 does not exist, so the fixed job
    // fires once at 03:00 CEST (01:00 UTC), then at 02:30 CEST (00:30 UTC) the next day.
    assert_eq!(
        rec.instants("jobs.fixed"),
        vec![utc(2026, 3, 29, 1, 0, 0), utc(2026, 3, 30, 0, 30, 0)]
    );
    // The hourly job fires every real hour, once each, 23 times on the short day.
    let hourly = rec.instants("jobs.hourly");
    let first_day: Vec<_> = hourly
        .iter()
        .filter(|t| {
            t.with_timezone(&berlin).date_naive()
                == chrono::NaiveDate::from_ymd_opt(2026, 3, 29).unwrap()
        })
        .collect();
    assert_eq!(first_day.len(), 23);
    let mut dedup = hourly.clone();
    dedup.dedup();
    assert_eq!(dedup, hourly);

    // Fall back on 2026-10-25 at 01:00 UTC: 02:30 happens twice; the fixed job fires once.
    let pack = Pack::new();
    pack.job("fixed", "30 2 * * *", "");
    let rec = Recorder::new(Behaviour::Quick);
    let cfg = SchedulerConfig {
        timezone: berlin,
        ..config(utc(2026, 10, 24, 12, 0, 0))
    };
    let _s = Scheduler::start(pack.registry(), rec.clone(), cfg).unwrap();
    pass(DAY * 2).await;
    assert_eq!(
        rec.instants("jobs.fixed"),
        vec![utc(2026, 10, 25, 0, 30, 0), utc(2026, 10, 26, 1, 30, 0)]
    );
}

#[tokio::test(start_paused = true)]
async fn jobs_follow_reloads_without_restart() {
    let pack = Pack::new();
    let a = pack.job("a", "0 * * * *", "v1");
    let registry = pack.registry();
    let rec = Recorder::new(Behaviour::Quick);
    let s = Scheduler::start(
        registry.clone(),
        rec.clone(),
        config(utc(2026, 1, 1, 0, 30, 0)),
    )
    .unwrap();
    pass(HOUR).await; // fires 01:00; now 01:30
    assert_eq!(rec.instants("jobs.a"), vec![utc(2026, 1, 1, 1, 0, 0)]);

    // Added: a new file becomes a job.
    pack.job("b", "45 * * * *", "");
    registry.reload();
    // Changed: the new schedule takes effect from the next fire.
    pack.job("a", "15 * * * *", "v2");
    registry.reload();
    pass(HOUR).await; // now 02:30
    assert_eq!(rec.instants("jobs.b"), vec![utc(2026, 1, 1, 1, 45, 0)]);
    assert_eq!(
        rec.instants("jobs.a"),
        vec![utc(2026, 1, 1, 1, 0, 0), utc(2026, 1, 1, 2, 15, 0)]
    );
    let last = rec
        .all()
        .into_iter()
        .filter(|f| f.name == "jobs.a")
        .last()
        .unwrap();
    assert!(last.skill.body.contains("v2"));
    assert_eq!(last.generation, 3);

    // Removed: never fires again.
    std::fs::remove_file(&a).unwrap();
    registry.reload();
    pass(DAY).await;
    assert_eq!(rec.instants("jobs.a").len(), 2);
    assert_eq!(
        s.jobs(1)
            .iter()
            .map(|j| j.name.as_str())
            .collect::<Vec<_>>(),
        vec!["jobs.b"]
    );
    assert_eq!(s.job_names(), ["jobs.b"]);
    assert_eq!(s.generation(), 4);

    // Made invalid: the job goes and a diagnostic with the column comes.
    pack.job("b", "0 0 30 2 *", "");
    registry.reload();
    pass(MINUTE).await;
    assert!(s.jobs(1).is_empty());
    assert!(s.job_names().is_empty());
    let d = s.diagnostics();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].code, skill_format::Code::InvalidSchedule);
    assert_eq!((d[0].line, d[0].column), (Some(4), Some(16)));
    assert!(d[0].message.contains("never fires"), "{}", d[0].message);
    let fires = rec.instants("jobs.b").len();
    pass(DAY).await;
    assert_eq!(rec.instants("jobs.b").len(), fires);
}

#[tokio::test(start_paused = true)]
async fn reload_on_a_fire_instant_fires_once() {
    let pack = Pack::new();
    pack.job("tick", "* * * * *", "v1");
    let registry = pack.registry();
    let rec = Recorder::new(Behaviour::Quick);
    let start = utc(2026, 1, 1, 0, 0, 30);
    let _s = Scheduler::start(registry.clone(), rec.clone(), config(start)).unwrap();

    // Reload exactly at 00:01:00 after the fire: body changed, schedule the same.
    tokio::time::advance(Duration::from_secs(30)).await;
    tokio::task::yield_now().await;
    assert_eq!(rec.instants("jobs.tick"), vec![utc(2026, 1, 1, 0, 1, 0)]);
    pack.job("tick", "* * * * *", "v2");
    registry.reload();
    tokio::task::yield_now().await;
    // Reload exactly at 00:01:00 again: the schedule changes to one that includes 00:01.
    pack.job("tick", "*/1 * * * *", "v3");
    registry.reload();
    tokio::task::yield_now().await;
    pass(MINUTE * 2 + Duration::from_secs(1)).await; // to 00:03:01
    assert_eq!(
        rec.instants("jobs.tick"),
        vec![
            utc(2026, 1, 1, 0, 1, 0),
            utc(2026, 1, 1, 0, 2, 0),
            utc(2026, 1, 1, 0, 3, 0)
        ]
    );
    let fires = rec.all();
    assert!(fires[1].skill.body.contains("v3"));
    assert_eq!(fires[1].generation, 3);

    // A reload racing the timer on the same instant (both due at 00:04:00): whichever runs
    // first, 00:04 fires exactly once.
    let at = utc(2026, 1, 1, 0, 4, 0);
    tokio::time::sleep(Duration::from_secs(59)).await; // now 00:04:00
    pack.job("tick", "0-59 * * * *", "v4");
    registry.reload();
    pass(Duration::from_secs(90)).await;
    let ticks = rec.instants("jobs.tick");
    assert_eq!(ticks.iter().filter(|t| **t == at).count(), 1, "{ticks:?}");
    assert_eq!(ticks.last(), Some(&utc(2026, 1, 1, 0, 5, 0)));
}

#[tokio::test(start_paused = true)]
async fn restart_does_not_fire_the_same_instant_twice() {
    let pack = Pack::new();
    pack.job("daily", "0 8 * * *", "");
    let state = pack.state();
    let with_state = |start| SchedulerConfig {
        state_path: Some(state.clone()),
        ..config(start)
    };
    let rec = Recorder::new(Behaviour::Quick);
    let s = Scheduler::start(
        pack.registry(),
        rec.clone(),
        with_state(utc(2026, 1, 1, 7, 59, 0)),
    )
    .unwrap();
    pass(MINUTE * 2).await;
    assert_eq!(rec.instants("jobs.daily"), vec![utc(2026, 1, 1, 8, 0, 0)]);
    s.shutdown();
    let text = std::fs::read_to_string(&state).unwrap();
    assert!(text.contains("2026-01-01T08:00:00Z"), "{text}");

    // Restarted on the very instant it fired (a fast restart, or a clock set back).
    let rec = Recorder::new(Behaviour::Quick);
    let s = Scheduler::start(
        pack.registry(),
        rec.clone(),
        with_state(utc(2026, 1, 1, 8, 0, 0)),
    )
    .unwrap();
    pass(HOUR).await;
    assert!(rec.instants("jobs.daily").is_empty());
    assert_eq!(s.jobs(1)[0].next, vec![utc(2026, 1, 2, 8, 0, 0)]);
    assert!(s.warnings().is_empty(), "{:?}", s.warnings());
    s.shutdown();

    // Control: without the state file the same start does fire 08:00.
    let rec = Recorder::new(Behaviour::Quick);
    let _s = Scheduler::start(
        pack.registry(),
        rec.clone(),
        config(utc(2026, 1, 1, 8, 0, 0)),
    )
    .unwrap();
    pass(MINUTE).await;
    assert_eq!(rec.instants("jobs.daily"), vec![utc(2026, 1, 1, 8, 0, 0)]);
}

#[tokio::test(start_paused = true)]
async fn missed_fires_are_not_replayed_unless_asked_once() {
    let pack = Pack::new();
    pack.job("daily", "0 8 * * *", "");
    std::fs::write(
        pack.state(),
        r#"{"version": 1, "last_fires": {"jobs.daily": "2026-01-01T08:00:00Z"}}"#,
    )
    .unwrap();
    // Down for two days: back on the 3rd at 09:00.
    let back = utc(2026, 1, 3, 9, 0, 0);
    let rec = Recorder::new(Behaviour::Quick);
    let cfg = SchedulerConfig {
        state_path: Some(pack.state()),
        ..config(back)
    };
    let s = Scheduler::start(pack.registry(), rec.clone(), cfg.clone()).unwrap();
    pass(HOUR).await;
    assert!(rec.instants("jobs.daily").is_empty());
    s.shutdown();

    std::fs::write(
        pack.state(),
        r#"{"version": 1, "last_fires": {"jobs.daily": "2026-01-01T08:00:00Z"}}"#,
    )
    .unwrap();
    let rec = Recorder::new(Behaviour::Quick);
    let cfg = SchedulerConfig {
        catch_up: CatchUp::RunOnceOnStart,
        ..cfg
    };
    let _s = Scheduler::start(pack.registry(), rec.clone(), cfg).unwrap();
    pass(DAY).await;
    // Once at start, for the latest missed instant; then on schedule.
    assert_eq!(
        rec.instants("jobs.daily"),
        vec![utc(2026, 1, 3, 8, 0, 0), utc(2026, 1, 4, 8, 0, 0)]
    );
}

#[tokio::test(start_paused = true)]
async fn corrupt_or_newer_state_starts_clean_with_a_warning() {
    for bad in ["\u{0}\u{1}garbage", r#"{"version": 7, "last_fires": {}}"#] {
        let pack = Pack::new();
        pack.job("tick", "* * * * *", "");
        std::fs::write(pack.state(), bad).unwrap();
        let rec = Recorder::new(Behaviour::Quick);
        let cfg = SchedulerConfig {
            state_path: Some(pack.state()),
            ..config(utc(2026, 1, 1, 0, 0, 30))
        };
        let s = Scheduler::start(pack.registry(), rec.clone(), cfg).unwrap();
        let w = s.warnings();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("starting with no record"), "{}", w[0]);
        pass(MINUTE * 2).await;
        assert_eq!(rec.instants("jobs.tick").len(), 2);
        // The file was replaced with a good one.
        let text = std::fs::read_to_string(pack.state()).unwrap();
        assert!(text.contains("\"version\": 1"), "{text}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_run_still_going_skips_the_next_fire() {
    let pack = Pack::new();
    pack.job("slow", "* * * * *", "");
    let rec = Recorder::new(Behaviour::Hold(Duration::from_secs(90)));
    let s = Scheduler::start(
        pack.registry(),
        rec.clone(),
        config(utc(2026, 1, 1, 0, 0, 30)),
    )
    .unwrap();
    pass(Duration::from_secs(60 * 3 + 45)).await; // to 00:04:15
    // 00:01 runs until 00:02:30, so 00:02 is skipped; 00:03 runs until 00:04:30.
    let h = s.history();
    let summary: Vec<_> = h.iter().map(|r| (r.scheduled, r.outcome.clone())).collect();
    assert_eq!(
        summary,
        vec![
            (utc(2026, 1, 1, 0, 1, 0), Outcome::Succeeded),
            (utc(2026, 1, 1, 0, 2, 0), Outcome::SkippedOverlap),
            (utc(2026, 1, 1, 0, 3, 0), Outcome::Running),
            (utc(2026, 1, 1, 0, 4, 0), Outcome::SkippedOverlap),
        ]
    );
    assert_eq!(rec.instants("jobs.slow").len(), 2);
    assert!(s.jobs(0)[0].running);
    assert_eq!(h[0].finished, Some(utc(2026, 1, 1, 0, 2, 30)));
}

/// A dispatcher that decides overlaps itself (replicas claiming in a shared database).
struct Deciding(Arc<Recorder>);

impl Dispatcher for Deciding {
    fn dispatch(&self, fire: Fire) -> DispatchFuture {
        self.0.dispatch(fire)
    }
    fn decides_overlap(&self) -> bool {
        true
    }
}

/// With replicas, a run of this process that is still going (or only waiting for its
/// claim) made this replica skip instants another replica should have run, and the skips
/// were known to this process alone: a dispatcher that decides overlaps gets every fire.
#[tokio::test(start_paused = true)]
async fn a_dispatcher_that_decides_overlaps_gets_every_fire() {
    let pack = Pack::new();
    pack.job("slow", "* * * * *", "");
    let rec = Recorder::new(Behaviour::Hold(Duration::from_secs(90)));
    let s = Scheduler::start(
        pack.registry(),
        Arc::new(Deciding(rec.clone())),
        config(utc(2026, 1, 1, 0, 0, 30)),
    )
    .unwrap();
    pass(Duration::from_secs(60 * 3 + 45)).await; // to 00:04:15
    let h = s.history();
    assert!(
        h.iter().all(|r| r.outcome != Outcome::SkippedOverlap),
        "{h:?}"
    );
    assert_eq!(rec.instants("jobs.slow").len(), 4);
    // Two runs overlap (00:03 and 00:04): the job is running until both end.
    assert!(s.jobs(0)[0].running);
    pass(Duration::from_secs(60)).await; // to 00:05:15: 00:03 ended, 00:04 and 00:05 go
    assert!(s.jobs(0)[0].running);
    s.shutdown();
}

#[tokio::test(start_paused = true)]
async fn history_is_bounded_and_failures_are_recorded() {
    let pack = Pack::new();
    pack.job("fails", "* * * * * *", "");
    let rec = Recorder::new(Behaviour::Fail);
    let cfg = SchedulerConfig {
        history_limit: 3,
        ..config(utc(2026, 1, 1, 0, 0, 0))
    };
    let s = Scheduler::start(pack.registry(), rec.clone(), cfg).unwrap();
    pass(Duration::from_millis(10_500)).await;
    // 00:00:00 (the current second counts at start) through 00:00:10.
    assert_eq!(rec.instants("jobs.fails").len(), 11);
    let h = s.history();
    assert_eq!(h.len(), 3);
    assert_eq!(h.iter().map(|r| r.id).collect::<Vec<_>>(), vec![9, 10, 11]);
    assert_eq!(h[2].scheduled, utc(2026, 1, 1, 0, 0, 10));
    assert_eq!(
        h[2].outcome,
        Outcome::Failed("handler exited with status 3".into())
    );

    // A zero limit still keeps the latest record.
    let rec = Recorder::new(Behaviour::Quick);
    let cfg = SchedulerConfig {
        history_limit: 0,
        ..config(utc(2026, 1, 1, 0, 0, 0))
    };
    let s = Scheduler::start(pack.registry(), rec, cfg).unwrap();
    pass(Duration::from_millis(2_500)).await;
    assert_eq!(s.history().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_panicking_run_is_recorded_and_does_not_block_the_job() {
    let pack = Pack::new();
    pack.job("boom", "* * * * *", "");
    let rec = Recorder::new(Behaviour::Panic);
    let s = Scheduler::start(
        pack.registry(),
        rec.clone(),
        config(utc(2026, 1, 1, 0, 0, 30)),
    )
    .unwrap();
    pass(Duration::from_secs(150)).await;
    let h = s.history();
    assert_eq!(h.len(), 2);
    assert!(
        h.iter().all(|r| matches!(r.outcome, Outcome::Failed(_))),
        "{h:?}"
    );
}

#[test]
fn starting_outside_a_runtime_is_an_error() {
    let pack = Pack::new();
    let rec = Recorder::new(Behaviour::Quick);
    let err = Scheduler::start(pack.registry(), rec, SchedulerConfig::default()).unwrap_err();
    assert!(err.to_string().contains("tokio runtime"));
}

#[test]
fn unknown_timezones_are_errors() {
    let err = parse_timezone("Mars/Olympus_Mons").unwrap_err();
    assert!(err.to_string().contains("Mars/Olympus_Mons"));
    assert!(parse_timezone("America/New_York").is_ok());
}

#[tokio::test(start_paused = true)]
async fn a_state_file_that_cannot_be_written_is_a_warning_not_a_stop() {
    let pack = Pack::new();
    pack.job("tick", "* * * * *", "");
    let rec = Recorder::new(Behaviour::Quick);
    // The state's folder is a file: no folder can be made there.
    let blocker = pack.state().with_file_name("a-file");
    std::fs::write(&blocker, "not a folder").unwrap();
    let cfg = SchedulerConfig {
        state_path: Some(blocker.join("state.json")),
        ..config(utc(2026, 1, 1, 0, 0, 30))
    };
    let s = Scheduler::start(pack.registry(), rec.clone(), cfg).unwrap();
    pass(MINUTE * 3).await;
    assert_eq!(rec.instants("jobs.tick").len(), 3);
    let w = s.warnings();
    // Reported once, not once per fire (reading it at start failed too).
    let writes: Vec<&String> = w
        .iter()
        .filter(|m| m.contains("cannot write schedule state"))
        .collect();
    assert_eq!(writes.len(), 1, "{w:?}");
    assert!(
        w.iter().any(|m| m.contains("cannot read schedule state")),
        "{w:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_state_folder_is_created_when_missing() {
    let pack = Pack::new();
    pack.job("tick", "* * * * *", "");
    let rec = Recorder::new(Behaviour::Quick);
    let path = pack
        .state()
        .with_file_name("new")
        .join("folder")
        .join("state.json");
    let cfg = SchedulerConfig {
        state_path: Some(path.clone()),
        ..config(utc(2026, 1, 1, 0, 0, 30))
    };
    let s = Scheduler::start(pack.registry(), rec.clone(), cfg).unwrap();
    pass(MINUTE).await;
    assert_eq!(rec.instants("jobs.tick").len(), 1);
    assert!(s.warnings().is_empty(), "{:?}", s.warnings());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("jobs.tick"), "{text}");
}

#[tokio::test(start_paused = true)]
async fn a_clock_jump_fires_once_instead_of_replaying_every_missed_instant() {
    // (schedule, fires before the jump, the one fire of the jump, the next fire after it)
    let cases = [
        (
            "* * * * *",
            vec![],
            utc(2026, 1, 1, 0, 1, 0),
            utc(2026, 1, 1, 1, 1, 0),
        ),
        (
            "* * * * * *",
            // The current second counts at start.
            vec![utc(2026, 1, 1, 0, 0, 30)],
            utc(2026, 1, 1, 0, 0, 31),
            utc(2026, 1, 1, 1, 0, 31),
        ),
    ];
    for (expr, before, late, next) in cases {
        let pack = Pack::new();
        pack.job("tick", expr, "");
        let rec = Recorder::new(Behaviour::Quick);
        let cfg = SchedulerConfig {
            state_path: Some(pack.state()),
            ..config(utc(2026, 1, 1, 0, 0, 30))
        };
        let s = Scheduler::start(pack.registry(), rec.clone(), cfg).unwrap();
        settle().await;
        assert_eq!(rec.instants("jobs.tick"), before, "{expr}");

        // One hour passes in one step (a stall, a suspend, a clock stepped forward):
        // 60 (or 3600) instants are due at once.
        tokio::time::advance(HOUR).await;
        settle().await;
        let mut expected = before.clone();
        expected.push(late);
        assert_eq!(rec.instants("jobs.tick"), expected, "{expr}");
        // One record per fire: no flood of skipped ones.
        let h = s.history();
        assert_eq!(h.len(), expected.len(), "{expr}: {h:?}");
        assert!(h.iter().all(|r| r.outcome == Outcome::Succeeded), "{h:?}");
        assert_eq!(h.last().unwrap().started, utc(2026, 1, 1, 1, 0, 30));
        let job = &s.jobs(1)[0];
        assert_eq!(job.next, vec![next], "{expr}");
        assert_eq!(job.last_fire, Some(late));

        // Then back on schedule.
        pass((next - s.now()).to_std().unwrap() + Duration::from_millis(500)).await;
        expected.push(next);
        assert_eq!(rec.instants("jobs.tick"), expected, "{expr}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_catch_up_past_the_scan_limit_runs_once() {
    // An every-second job down for two days: more missed instants than the catch-up scan
    // walks through, so the instant it reaches is far behind; still one run, then on time.
    let pack = Pack::new();
    pack.job("tick", "* * * * * *", "");
    std::fs::write(
        pack.state(),
        r#"{"version": 1, "last_fires": {"jobs.tick": "2026-01-01T00:00:00Z"}}"#,
    )
    .unwrap();
    let back = utc(2026, 1, 3, 0, 0, 0);
    let rec = Recorder::new(Behaviour::Quick);
    let cfg = SchedulerConfig {
        state_path: Some(pack.state()),
        catch_up: CatchUp::RunOnceOnStart,
        ..config(back + chrono::Duration::milliseconds(500))
    };
    let s = Scheduler::start(pack.registry(), rec.clone(), cfg).unwrap();
    settle().await;
    let reached = utc(2026, 1, 1, 0, 0, 0)
        + chrono::Duration::seconds(i64::try_from(skill_scheduler::MAX_CATCH_UP_SCAN).unwrap());
    assert!(reached < back - chrono::Duration::seconds(1));
    assert_eq!(rec.instants("jobs.tick"), vec![reached]);
    assert_eq!(s.history().len(), 1);
    pass(Duration::from_secs(2)).await;
    assert_eq!(
        rec.instants("jobs.tick"),
        vec![
            reached,
            back + chrono::Duration::seconds(1),
            back + chrono::Duration::seconds(2)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn seconds_fields_and_macros_fire_on_time() {
    let pack = Pack::new();
    pack.job("half", "15,45 * * * * *", "");
    pack.job("hourly", "@hourly", "");
    pack.job("daily", "@daily", "");
    let rec = Recorder::new(Behaviour::Quick);
    let new_york = parse_timezone("America/New_York").unwrap();
    // 2025-12-31 22:59:00 UTC is 17:59 in New York (EST, UTC-5).
    let cfg = SchedulerConfig {
        timezone: new_york,
        ..config(utc(2025, 12, 31, 22, 59, 0))
    };
    let _s = Scheduler::start(pack.registry(), rec.clone(), cfg).unwrap();
    pass(MINUTE * 2).await; // to 23:01:00
    assert_eq!(
        rec.instants("jobs.half"),
        vec![
            utc(2025, 12, 31, 22, 59, 15),
            utc(2025, 12, 31, 22, 59, 45),
            utc(2025, 12, 31, 23, 0, 15),
            utc(2025, 12, 31, 23, 0, 45),
        ]
    );
    assert_eq!(
        rec.instants("jobs.hourly"),
        vec![utc(2025, 12, 31, 23, 0, 0)]
    );
    assert!(rec.instants("jobs.daily").is_empty());

    pass(DAY * 2 - MINUTE * 2).await; // to 2026-01-02 22:59:00
    // Midnight in New York is 05:00 UTC.
    assert_eq!(
        rec.instants("jobs.daily"),
        vec![utc(2026, 1, 1, 5, 0, 0), utc(2026, 1, 2, 5, 0, 0)]
    );
    let hourly = rec.instants("jobs.hourly");
    assert_eq!(hourly.len(), 48);
    assert!(
        hourly
            .windows(2)
            .all(|w| w[1] - w[0] == chrono::Duration::hours(1))
    );
    // Twice a minute for two days, each instant once.
    let half = rec.instants("jobs.half");
    assert_eq!(half.len(), 2 * 60 * 48);
    assert!(half.windows(2).all(|w| w[0] < w[1]));
    assert!(half.iter().all(|t| {
        use chrono::Timelike;
        t.second() == 15 || t.second() == 45
    }));
}

#[tokio::test(start_paused = true)]
async fn removed_skills_leave_the_state_file() {
    let pack = Pack::new();
    let gone = pack.job("gone", "* * * * *", "");
    pack.job("kept", "* * * * *", "");
    // Left by an earlier run: a skill deleted while the process was down.
    std::fs::write(
        pack.state(),
        r#"{"version": 1, "last_fires": {"jobs.deleted": "2025-06-01T00:00:00Z"}}"#,
    )
    .unwrap();
    let names = || -> Vec<String> {
        let text = std::fs::read_to_string(pack.state()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["last_fires"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    let registry = pack.registry();
    let rec = Recorder::new(Behaviour::Quick);
    let cfg = SchedulerConfig {
        state_path: Some(pack.state()),
        ..config(utc(2026, 1, 1, 0, 0, 30))
    };
    let s = Scheduler::start(registry.clone(), rec.clone(), cfg.clone()).unwrap();
    pass(MINUTE).await; // 00:01 fires; now 00:01:30
    assert_eq!(names(), ["jobs.gone", "jobs.kept"]);

    std::fs::remove_file(&gone).unwrap();
    registry.reload();
    pass(MINUTE).await; // 00:02 fires for the one left
    assert_eq!(names(), ["jobs.kept"]);
    assert_eq!(rec.instants("jobs.gone"), vec![utc(2026, 1, 1, 0, 1, 0)]);
    s.shutdown();

    // Restarted on the instant that last fired: the kept entry still prevents a repeat.
    let rec = Recorder::new(Behaviour::Quick);
    let cfg = SchedulerConfig {
        clock: Clock::StartingAt(utc(2026, 1, 1, 0, 2, 0)),
        ..cfg
    };
    let _s = Scheduler::start(registry, rec.clone(), cfg).unwrap();
    pass(MINUTE + Duration::from_secs(1)).await;
    assert_eq!(rec.instants("jobs.kept"), vec![utc(2026, 1, 1, 0, 3, 0)]);
}

#[tokio::test(start_paused = true)]
async fn the_state_file_records_an_instant_ahead_of_it() {
    let pack = Pack::new();
    pack.job("tick", "* * * * *", "");
    let reader = StateReader::new(pack.state());
    let cfg = SchedulerConfig {
        state_path: Some(pack.state()),
        ..config(utc(2026, 1, 1, 0, 0, 30))
    };
    let s = Scheduler::start(pack.registry(), reader.clone(), cfg).unwrap();
    let at = utc(2026, 1, 1, 0, 1, 0);

    // Up to the lead before 00:01:00, nothing is written.
    tokio::time::advance(Duration::from_secs(30) - STATE_WRITE_LEAD - MS).await;
    settle().await;
    assert_eq!(recorded(&pack.state(), "jobs.tick"), None);
    // At the lead the instant is on disk; it has not fired (and is not reported as fired).
    tokio::time::advance(MS).await;
    settle().await;
    assert_eq!(recorded(&pack.state(), "jobs.tick"), Some(at));
    assert!(reader.seen().is_empty());
    assert_eq!(s.jobs(1)[0].last_fire, None);
    // Never early: nothing a millisecond before the instant, the run at the instant.
    tokio::time::advance(STATE_WRITE_LEAD - MS).await;
    settle().await;
    assert!(reader.seen().is_empty());
    tokio::time::advance(MS).await;
    settle().await;
    assert_eq!(reader.seen(), vec![("jobs.tick".to_owned(), at, Some(at))]);
    assert_eq!(s.history()[0].started, at);
    assert_eq!(s.jobs(1)[0].last_fire, Some(at));

    // And every instant after: the run finds its instant already on disk.
    pass(MINUTE * 2 + MS).await;
    let seen = reader.seen();
    assert_eq!(seen.len(), 3);
    assert!(
        seen.iter().all(|(_, t, on_disk)| Some(*t) == *on_disk),
        "{seen:?}"
    );
    assert!(s.warnings().is_empty(), "{:?}", s.warnings());
}

#[tokio::test(start_paused = true)]
async fn a_skill_removed_after_its_fire_was_written_ahead_does_not_fire() {
    let pack = Pack::new();
    let gone = pack.job("gone", "* * * * *", "");
    pack.job("kept", "* * * * *", "");
    let registry = pack.registry();
    let rec = Recorder::new(Behaviour::Quick);
    let cfg = SchedulerConfig {
        state_path: Some(pack.state()),
        ..config(utc(2026, 1, 1, 0, 0, 30))
    };
    let _s = Scheduler::start(registry.clone(), rec.clone(), cfg).unwrap();
    let at = utc(2026, 1, 1, 0, 1, 0);
    tokio::time::advance(Duration::from_secs(30) - STATE_WRITE_LEAD / 2).await;
    settle().await;
    assert_eq!(recorded(&pack.state(), "jobs.gone"), Some(at));
    assert_eq!(recorded(&pack.state(), "jobs.kept"), Some(at));

    // Removed between the write and the instant.
    std::fs::remove_file(&gone).unwrap();
    registry.reload();
    settle().await;
    pass(STATE_WRITE_LEAD).await;
    assert!(rec.instants("jobs.gone").is_empty());
    assert_eq!(rec.instants("jobs.kept"), vec![at]);

    // The next write no longer records a fire that never happened.
    pass(MINUTE).await;
    assert_eq!(
        rec.instants("jobs.kept"),
        vec![at, utc(2026, 1, 1, 0, 2, 0)]
    );
    assert!(rec.instants("jobs.gone").is_empty());
    assert_eq!(recorded(&pack.state(), "jobs.gone"), None);
}

#[tokio::test(start_paused = true)]
async fn a_schedule_changed_after_its_fire_was_written_ahead_fires_at_its_new_instant() {
    let at = utc(2026, 1, 1, 0, 1, 0);
    let new_at = utc(2026, 1, 1, 0, 1, 30);
    let pack = Pack::new();
    pack.job("tick", "* * * * *", "v1");
    let registry = pack.registry();
    let rec = Recorder::new(Behaviour::Quick);
    let with_state = |start| SchedulerConfig {
        state_path: Some(pack.state()),
        ..config(start)
    };
    let s = Scheduler::start(
        registry.clone(),
        rec.clone(),
        with_state(utc(2026, 1, 1, 0, 0, 30)),
    )
    .unwrap();
    tokio::time::advance(Duration::from_secs(30) - STATE_WRITE_LEAD / 2).await;
    settle().await;
    assert_eq!(recorded(&pack.state(), "jobs.tick"), Some(at));

    // Changed between the write and the instant to second 30 of every minute: 00:01:00
    // does not fire, and the entry written for it does not hold back 00:01:30 in this
    // process...
    pack.job("tick", "30 * * * * *", "v2");
    registry.reload();
    settle().await;
    pass(Duration::from_secs(10)).await; // to 00:01:10
    assert!(rec.instants("jobs.tick").is_empty());
    assert_eq!(s.jobs(1)[0].next, vec![new_at]);
    assert_eq!(s.jobs(1)[0].last_fire, None);
    // ...nor after a restart from the file that still says 00:01:00.
    s.shutdown();
    assert_eq!(recorded(&pack.state(), "jobs.tick"), Some(at));
    let rec = Recorder::new(Behaviour::Quick);
    let _s = Scheduler::start(
        registry.clone(),
        rec.clone(),
        with_state(utc(2026, 1, 1, 0, 1, 10)),
    )
    .unwrap();
    pass(MINUTE + Duration::from_secs(30)).await; // to 00:02:40
    assert_eq!(
        rec.instants("jobs.tick"),
        vec![new_at, utc(2026, 1, 1, 0, 2, 30)]
    );

    // With another job writing the file in the meantime, the called-off fire leaves it.
    let pack = Pack::new();
    pack.job("tick", "* * * * *", "v1");
    pack.job("other", "* * * * * *", "");
    let registry = pack.registry();
    let rec = Recorder::new(Behaviour::Quick);
    let _s = Scheduler::start(
        registry.clone(),
        rec.clone(),
        SchedulerConfig {
            state_path: Some(pack.state()),
            ..config(utc(2026, 1, 1, 0, 0, 30))
        },
    )
    .unwrap();
    tokio::time::advance(Duration::from_secs(30) - STATE_WRITE_LEAD / 2).await;
    settle().await;
    assert_eq!(recorded(&pack.state(), "jobs.tick"), Some(at));
    pack.job("tick", "30 * * * * *", "v2");
    registry.reload();
    settle().await;
    pass(Duration::from_secs(1)).await; // past the write for 00:01:01
    assert!(rec.instants("jobs.tick").is_empty());
    assert_eq!(
        recorded(&pack.state(), "jobs.other"),
        Some(utc(2026, 1, 1, 0, 1, 1))
    );
    assert_eq!(recorded(&pack.state(), "jobs.tick"), None);
}

#[tokio::test(start_paused = true)]
async fn a_job_queued_within_the_lead_is_written_before_it_fires_on_time() {
    let lead = chrono::Duration::from_std(STATE_WRITE_LEAD).unwrap();
    let at = utc(2026, 1, 1, 0, 1, 0);
    let pack = Pack::new();
    pack.job("tick", "* * * * *", "");
    let registry = pack.registry();
    let reader = StateReader::new(pack.state());
    // Started half the lead before 00:01:00: written at once, fired on time.
    let cfg = SchedulerConfig {
        state_path: Some(pack.state()),
        ..config(at - lead / 2)
    };
    let s = Scheduler::start(registry.clone(), reader.clone(), cfg).unwrap();
    settle().await;
    assert_eq!(recorded(&pack.state(), "jobs.tick"), Some(at));
    assert!(reader.seen().is_empty());
    pass(STATE_WRITE_LEAD / 2).await;
    settle().await;
    assert_eq!(reader.seen(), vec![("jobs.tick".to_owned(), at, Some(at))]);
    assert_eq!(s.history()[0].started, at);

    // Added by a reload after the write for 00:02:00: written on arrival, fired on time.
    let next = utc(2026, 1, 1, 0, 2, 0);
    pass((next - lead / 4 - s.now()).to_std().unwrap()).await;
    assert_eq!(recorded(&pack.state(), "jobs.tick"), Some(next));
    pack.job("late", "* * * * *", "");
    registry.reload();
    settle().await;
    assert_eq!(recorded(&pack.state(), "jobs.late"), Some(next));
    assert_eq!(reader.seen().len(), 1);
    pass(STATE_WRITE_LEAD / 4).await;
    settle().await;
    let seen = reader.seen();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(
        seen[1..]
            .iter()
            .all(|(_, t, on_disk)| *t == next && *on_disk == Some(next)),
        "{seen:?}"
    );
    assert!(s.history().iter().all(|r| r.started == r.scheduled));
}
