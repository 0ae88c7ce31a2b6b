//! Three `skill-server serve` replicas on one PostgreSQL database with an every-second
//! schedule and a slower script job: the replica running one of that job's runs is
//! SIGKILLed mid-run and restarted; every instant is claimed exactly once,
//! none is lost, no instant is delivered under two run ids, and every run reaches a webhook
//! receiver on loopback (which fails first attempts, so retries carry the same key). A
//! fourth server without a database runs beside them, to compare fire lateness.
//!
//! Needs PostgreSQL: `SKILLS_TEST_DATABASE_URL` or `target/ci-postgres/url` (from
//! `.ci/postgres`). It is `#[ignore]`d, so a plain `cargo test` reports it as ignored; run it
//! with `-- --include-ignored` (as `.ci/run` does), where a missing database fails it.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::spawn_serve;

/// Instants the test counts (the issue asks for at least 30).
const INSTANTS: i64 = 32;

/// One request the receiver saw.
#[derive(Debug, Clone)]
struct Seen {
    key: String,
    run_id: String,
    instant: i64,
    attempt: u32,
    /// Milliseconds from the instant to the request's arrival.
    late_ms: i64,
}

/// A webhook receiver on loopback that answers 503 to the first attempt of every third
/// key, 200 otherwise, and records every request.
fn receiver() -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::<Seen>::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let log = log.clone();
            std::thread::spawn(move || {
                let now = chrono::Utc::now();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut headers = BTreeMap::new();
                let mut line = String::new();
                loop {
                    line.clear();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let l = line.trim_end();
                    if l.is_empty() {
                        break;
                    }
                    if let Some((k, v)) = l.split_once(':') {
                        headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
                    }
                }
                let len: usize = headers
                    .get("content-length")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                let mut body = vec![0; len];
                reader.read_exact(&mut body).unwrap();
                let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
                let instant =
                    chrono::DateTime::parse_from_rfc3339(json["instant"].as_str().unwrap())
                        .unwrap()
                        .with_timezone(&chrono::Utc);
                let s = Seen {
                    key: headers["idempotency-key"].clone(),
                    run_id: json["run_id"].as_str().unwrap().to_owned(),
                    instant: instant.timestamp(),
                    attempt: headers["x-skills-attempt"].parse().unwrap(),
                    late_ms: (now - instant).num_milliseconds(),
                };
                let fail = s.attempt == 1 && s.instant % 3 == 0;
                log.lock().unwrap().push(s);
                let status = if fail {
                    "503 Service Unavailable"
                } else {
                    "200 OK"
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                );
            });
        }
    });
    (url, seen)
}

fn skills_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tick")).unwrap();
    std::fs::write(
        dir.path().join("tick/SKILL.md"),
        "---\nname: tick\ndescription: Report the time every second.\nschedule: \"* * * * * *\"\n---\nSay what time it is.\n",
    )
    .unwrap();
    // A script that runs for most of its two seconds, so a replica can die in the middle.
    std::fs::create_dir_all(dir.path().join("work/scripts")).unwrap();
    std::fs::write(
        dir.path().join("work/SKILL.md"),
        "---\nname: work\ndescription: Do slow work every two seconds.\nschedule: \"*/2 * * * * *\"\nscripts:\n  - scripts/work.sh\n---\nRuns a slow job.\n",
    )
    .unwrap();
    let script = dir.path().join("work/scripts/work.sh");
    std::fs::write(&script, "#!/bin/sh\nsleep 1.5\necho done\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn config(dir: &std::path::Path, name: &str, db: Option<&str>, hook: &str) -> String {
    let path = dir.join(format!("{name}.toml"));
    let db = db
        .map(|u| format!("database_url = \"{u}\"\nreplica_name = \"{name}\"\n"))
        .unwrap_or_default();
    std::fs::write(
        &path,
        format!(
            "watch = false\n{db}\n[webhook]\nurl = \"{hook}\"\nfirst_backoff_ms = 100\n\
             allow_private_destinations = true\n"
        ),
    )
    .unwrap();
    path.to_string_lossy().into_owned()
}

fn start(cfg: &str, skills: &std::path::Path) -> Child {
    let skills = skills.to_string_lossy().into_owned();
    let (child, _addr, _logs) = spawn_serve(
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--config",
            cfg,
            "--skills",
            &skills,
        ],
        &[("SKILLS_DATABASE_URL", "")],
    );
    child
}

fn p99(mut v: Vec<i64>) -> i64 {
    v.sort_unstable();
    v[((v.len() * 99).div_ceil(100)).saturating_sub(1)]
}

#[cfg(unix)]
#[test]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
fn three_replicas_fire_each_instant_once_through_a_kill_and_deliver_every_run() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let url = rt.block_on(fresh_database());
    let skills = skills_dir();
    let (hook, seen) = receiver();
    let (solo_hook, solo_seen) = receiver();
    let cfgs: Vec<String> = (0..3)
        .map(|i| config(skills.path(), &format!("r{i}"), Some(&url), &hook))
        .collect();
    let solo_cfg = config(skills.path(), "solo", None, &solo_hook);
    let mut replicas: Vec<Child> = cfgs.iter().map(|c| start(c, skills.path())).collect();
    let mut solo = start(&solo_cfg, skills.path());
    let first = chrono::Utc::now().timestamp() + 1;
    let last = first + INSTANTS - 1;
    let began = Instant::now();
    // A third of the way in, SIGKILL the replica running a `work` run (mid-run: its
    // claim is in the table as running), and restart it 3 s later.
    std::thread::sleep(Duration::from_secs(8));
    let (victim, killed_run) = loop {
        if let Some(found) = rt.block_on(running_work(&url)) {
            break found;
        }
        assert!(
            began.elapsed() < Duration::from_secs(20),
            "no work run seen running"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let victim: usize = victim.trim_start_matches('r').parse().unwrap();
    replicas[victim].kill().unwrap();
    replicas[victim].wait().unwrap();
    std::thread::sleep(Duration::from_secs(3));
    replicas[victim] = start(&cfgs[victim], skills.path());
    while chrono::Utc::now().timestamp() <= last + 1 {
        std::thread::sleep(Duration::from_millis(200));
    }
    // Runs of the window are claimed; wait for their deliveries (a delivery held by the
    // killed replica is retaken after the outbox lease).
    let rows = rt.block_on(rows(&url, first, last));
    let wanted: BTreeSet<String> = rows
        .iter()
        .filter(|(_, outcome, _)| outcome == "succeeded")
        .map(|(_, _, id)| id.to_string())
        .collect();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let delivered: BTreeSet<String> = seen
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.instant >= first && s.instant <= last)
            .map(|s| s.run_id.clone())
            .collect();
        if wanted.is_subset(&delivered) || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    for mut c in replicas {
        let _ = c.kill();
        let _ = c.wait();
    }
    let _ = solo.kill();
    let _ = solo.wait();

    // Every instant of the window has exactly one row (claimed once, none lost).
    let per_instant: BTreeMap<i64, usize> = rows.iter().fold(BTreeMap::new(), |mut m, r| {
        *m.entry(r.0).or_default() += 1;
        m
    });
    let missing: Vec<i64> = (first..=last)
        .filter(|t| !per_instant.contains_key(t))
        .collect();
    assert!(missing.is_empty(), "instants never fired: {missing:?}");
    assert!(per_instant.values().all(|n| *n == 1));
    let seen = seen.lock().unwrap().clone();
    let window: Vec<&Seen> = seen
        .iter()
        .filter(|s| s.instant >= first && s.instant <= last)
        .collect();
    // No instant delivered under two run ids (a double fire), and a key never changes run.
    let mut ids: BTreeMap<i64, BTreeSet<&str>> = BTreeMap::new();
    let mut keys: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for s in &window {
        ids.entry(s.instant).or_default().insert(&s.run_id);
        keys.entry(&s.key).or_default().insert(&s.run_id);
    }
    let doubles: Vec<_> = ids.iter().filter(|(_, v)| v.len() > 1).collect();
    assert!(doubles.is_empty(), "double fires: {doubles:?}");
    assert!(keys.values().all(|v| v.len() == 1));
    // Every run that succeeded was delivered; first attempts that got 503 were retried.
    let delivered: BTreeSet<String> = window.iter().map(|s| s.run_id.clone()).collect();
    let lost: Vec<_> = wanted.difference(&delivered).collect();
    assert!(lost.is_empty(), "runs never delivered: {lost:?}");
    let retries = window.iter().filter(|s| s.attempt > 1).count();
    assert!(retries >= 5, "retries seen: {retries}");
    let skipped = rows.iter().filter(|r| r.1 == "skipped-overlap").count();
    let failed = rows.iter().filter(|r| r.1 == "failed").count();
    // The killed run's instant fired once: no other replica ran it again, and the run
    // was failed once its lease ran out.
    let (killed_instant, killed_outcome, twins) = rt.block_on(killed(&url, killed_run));
    assert_eq!(
        twins, 1,
        "instant {killed_instant} of `work` ran {twins} times"
    );
    assert_eq!(killed_outcome, "failed", "the killed run's row");
    let work_doubles = rt.block_on(work_doubles(&url));
    assert_eq!(work_doubles, 0, "`work` instants with more than one row");
    let by_replica = rt.block_on(replicas_used(&url, first, last));
    let claim_p99 = rt.block_on(claim_lateness_p99(&url, first, last));
    assert!(by_replica >= 2, "fires spread over replicas: {by_replica}");

    // Lateness, instant to the webhook's first attempt, both set-ups in the same run.
    let late = |v: &[Seen]| -> Vec<i64> {
        v.iter()
            .filter(|s| s.attempt == 1 && s.instant >= first && s.instant <= last)
            .map(|s| s.late_ms)
            .collect()
    };
    let db_late = late(&seen);
    let solo_late = late(&solo_seen.lock().unwrap());
    assert!(
        !solo_late.is_empty(),
        "the server without a database delivered"
    );
    eprintln!(
        "replicas: {} instants, {} runs, {} skipped-overlap, {} failed (lease), 0 double fires, \
         {} deliveries ({} retries); lateness p99 to the webhook: {} ms with the database, {} ms without; \
         claim p99 {claim_p99:.0} ms after the instant; replica r{victim} killed mid-run of `work` at \
         instant {killed_instant} ({} s)",
        per_instant.len(),
        wanted.len(),
        skipped,
        failed,
        window.len(),
        retries,
        p99(db_late),
        p99(solo_late),
        began.elapsed().as_secs()
    );
}

/// A new database on the test server (the test fails without one: it is ignored unless asked for).
async fn fresh_database() -> String {
    let mut url = std::env::var("SKILLS_TEST_DATABASE_URL").unwrap_or_default();
    if url.is_empty() {
        let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/ci-postgres/url");
        url = std::fs::read_to_string(file)
            .unwrap_or_default()
            .trim()
            .to_owned();
    }
    assert!(
        !url.is_empty(),
        "needs PostgreSQL: run bash .ci/postgres first (or set SKILLS_TEST_DATABASE_URL)"
    );
    let client = connect(&url).await;
    let name = format!(
        "skills_e2e_{}_{}",
        std::process::id(),
        chrono::Utc::now().timestamp_millis()
    );
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    let base = url.rsplit_once('/').map(|(b, _)| b).unwrap();
    format!("{base}/{name}")
}

async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
}

/// The window's runs of `tick`: (instant, outcome, row id).
async fn rows(url: &str, first: i64, last: i64) -> Vec<(i64, String, i64)> {
    let client = connect(url).await;
    client
        .query(
            "SELECT extract(epoch FROM scheduled)::bigint, outcome, id FROM skills_runs
             WHERE job = 'tick' AND scheduled BETWEEN to_timestamp($1) AND to_timestamp($2)
             ORDER BY scheduled",
            &[&(first as f64), &(last as f64)],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
}

/// A `work` run going now that started under a second ago, so at least half a second of
/// its script is left: (its replica, its row id).
async fn running_work(url: &str) -> Option<(String, i64)> {
    let client = connect(url).await;
    client
        .query_opt(
            "SELECT replica, id FROM skills_runs WHERE job = 'work' AND outcome = 'running'
             AND started > clock_timestamp() - interval '1 second' ORDER BY id DESC LIMIT 1",
            &[],
        )
        .await
        .unwrap()
        .map(|r| (r.get(0), r.get(1)))
}

/// The killed run: its instant, its final outcome, and how many rows its instant has.
async fn killed(url: &str, id: i64) -> (i64, String, i64) {
    let client = connect(url).await;
    let row = client
        .query_one(
            "SELECT extract(epoch FROM r.scheduled)::bigint, r.outcome,
                    (SELECT count(*) FROM skills_runs t
                     WHERE t.job = r.job AND t.scheduled = r.scheduled)
             FROM skills_runs r WHERE r.id = $1",
            &[&id],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1), row.get(2))
}

/// `work` instants with more than one row (a double fire).
async fn work_doubles(url: &str) -> i64 {
    let client = connect(url).await;
    client
        .query_one(
            "SELECT count(*) FROM (SELECT scheduled FROM skills_runs WHERE job = 'work'
             GROUP BY scheduled HAVING count(*) > 1) d",
            &[],
        )
        .await
        .unwrap()
        .get(0)
}

/// How many replicas claimed runs in the window.
async fn replicas_used(url: &str, first: i64, last: i64) -> i64 {
    let client = connect(url).await;
    client
        .query_one(
            "SELECT count(DISTINCT replica) FROM skills_runs
             WHERE job = 'tick' AND scheduled BETWEEN to_timestamp($1) AND to_timestamp($2)",
            &[&(first as f64), &(last as f64)],
        )
        .await
        .unwrap()
        .get(0)
}

/// The 99th percentile of (claimed - scheduled) over the window's runs, in milliseconds.
async fn claim_lateness_p99(url: &str, first: i64, last: i64) -> f64 {
    let client = connect(url).await;
    client
        .query_one(
            "SELECT percentile_cont(0.99) WITHIN GROUP
                 (ORDER BY extract(epoch FROM started - scheduled) * 1000)
             FROM skills_runs
             WHERE job = 'tick' AND scheduled BETWEEN to_timestamp($1) AND to_timestamp($2)",
            &[&(first as f64), &(last as f64)],
        )
        .await
        .unwrap()
        .get(0)
}
