//! The console (`/ui`, issue 48) in a real browser: headless Chromium driven over WebDriver
//! (chromedriver, through fantoccini) against a real server on the bundled packs, with the
//! broken pack as a low-trust source so the trust policy excludes its skills with findings.
//! Each page is loaded, what it shows is checked, a screenshot is saved under
//! `target/console-screenshots/`, and the page's resource entries must all be the server's.
//!
//! Needs Chromium and chromedriver: `bash .ci/chromium` installs them and writes their paths
//! to `target/ci-chromium/`; `SKILLS_TEST_CHROMEDRIVER` and `SKILLS_TEST_CHROMIUM` override.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use skill_http::HttpConfig;
use skill_registry::{RegistryConfig, Source, Trust};
use skill_runtime::{Engine, EngineConfig};
use skills_tests::repo_root;

use crate::http::PACKS;

/// How long the browser may take to show what a test waits for.
const WAIT: Duration = Duration::from_secs(20);

/// A path from `target/ci-chromium/NAME` (written by `.ci/chromium`), or `var`, or `fallback`.
fn tool(var: &str, name: &str, fallback: &str) -> String {
    if let Ok(v) = std::env::var(var) {
        return v;
    }
    std::fs::read_to_string(repo_root().join("target/ci-chromium").join(name))
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|_| fallback.to_owned())
}

/// chromedriver on a free loopback port in a process group of its own, ended with every
/// Chromium it started when dropped (a failed test included).
struct Driver {
    child: Child,
    url: String,
}

impl Driver {
    fn start() -> Driver {
        use std::os::unix::process::CommandExt;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        let path = tool("SKILLS_TEST_CHROMEDRIVER", "chromedriver", "chromedriver");
        let mut child = Command::new(&path)
            .arg(format!("--port={port}"))
            .arg("--allowed-ips=127.0.0.1")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {path}: {e}; run bash .ci/chromium"));
        // chromedriver says on standard output when it listens.
        let out = child.stdout.take().unwrap();
        let mut lines = BufReader::new(out).lines();
        loop {
            match lines.next() {
                Some(Ok(line)) if line.contains("started successfully") => break,
                Some(Ok(_)) => continue,
                other => panic!("chromedriver ended before it listened: {other:?}"),
            }
        }
        std::thread::spawn(move || for _ in lines {});
        Driver {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // The group's id is chromedriver's pid: Chromium and its helpers are in it.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The composed server (`skill_server::app`: `/v1`, `/ui`, `/mcp`) on its own runtime
/// thread, until the stop sender drops.
fn serve() -> (
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    std::thread::JoinHandle<()>,
) {
    let root = repo_root();
    let mut sources: Vec<Source> = PACKS
        .iter()
        .enumerate()
        .map(|(i, p)| Source::new(root.join(p), format!("layer{}", i + 1)))
        .collect();
    let mut vendor = Source::new(root.join("packs/broken"), "vendor");
    vendor.trust = Trust::Low;
    sources.insert(0, vendor);
    let config = EngineConfig::new(RegistryConfig::with_sources(sources));
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let engine: Arc<Engine> = Engine::start(config).unwrap();
            let (listener, addr) = skill_http::bind("127.0.0.1:0".parse().unwrap())
                .await
                .unwrap();
            addr_tx.send(addr).unwrap();
            let http = HttpConfig {
                token: Some("console-test-token".into()),
                ..HttpConfig::default()
            };
            let app = skill_server::app(engine.clone(), http);
            skill_http::serve(listener, app, async {
                let _ = stop_rx.await;
            })
            .await
            .unwrap();
            engine.shutdown().await;
        });
    });
    let addr = addr_rx.recv_timeout(WAIT).unwrap();
    (addr, stop_tx, thread)
}

/// A headless Chromium session whose scripts and page loads may take [`WAIT`], and whose
/// element lookups never wait (the tests wait on the page's own changes instead).
async fn browser(driver: &Driver) -> Client {
    let mut caps = serde_json::Map::new();
    let mut options = json!({
        "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,1000", "--no-first-run", "--disable-extensions"]
    });
    let chromium = tool("SKILLS_TEST_CHROMIUM", "chromium", "");
    if !chromium.is_empty() {
        options["binary"] = Value::String(chromium);
    }
    caps.insert("goog:chromeOptions".into(), options);
    let c = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .unwrap();
    c.update_timeouts(fantoccini::wd::TimeoutConfiguration::new(
        Some(WAIT),
        Some(WAIT),
        Some(Duration::ZERO),
    ))
    .await
    .unwrap();
    c
}

fn screenshots() -> PathBuf {
    let dir = repo_root().join("target/console-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The text of the first element `css` finds, once it holds `want`: the page is watched
/// with a `MutationObserver` until it does (WebDriver's script timeout bounds the wait).
async fn text_with(c: &Client, css: &str, want: &str) -> String {
    let script = r#"
        const [css, want, done] = arguments;
        const check = () => {
            const e = document.querySelector(css);
            return e && e.innerText.includes(want) ? e.innerText : null;
        };
        const now = check();
        if (now !== null) { done(now); return; }
        const seen = new MutationObserver(() => {
            const t = check();
            if (t !== null) { seen.disconnect(); done(t); }
        });
        seen.observe(document.documentElement, { subtree: true, childList: true, characterData: true });
    "#;
    match c.execute_async(script, vec![json!(css), json!(want)]).await {
        Ok(Value::String(text)) => text,
        other => {
            let last = match c.find(Locator::Css(css)).await {
                Ok(e) => e.text().await.unwrap_or_default(),
                Err(_) => "(no such element)".to_owned(),
            };
            panic!("{css} never showed {want:?} ({other:?}); it shows {last:?}")
        }
    }
}

/// Load `#/page`, wait for `css` to hold `want`, save a screenshot, and check that every
/// resource the page fetched came from the server.
async fn visit(c: &Client, origin: &str, page: &str, css: &str, want: &str, shot: &str) -> String {
    c.goto(&format!("{origin}/ui/#/{page}")).await.unwrap();
    // A hash change alone does not reload the page; the router follows it.
    let text = text_with(c, css, want).await;
    let png = c.screenshot().await.unwrap();
    std::fs::write(screenshots().join(format!("{shot}.png")), png).unwrap();
    let names = c
        .execute(
            "return performance.getEntriesByType('resource').map(e => e.name)\
             .concat(performance.getEntriesByType('navigation').map(e => e.name));",
            vec![],
        )
        .await
        .unwrap();
    let names = names.as_array().cloned().unwrap_or_default();
    assert!(!names.is_empty());
    for n in names {
        let n = n.as_str().unwrap_or_default().to_owned();
        assert!(n.starts_with(&format!("{origin}/")), "{page} requested {n}");
    }
    text
}

#[test]
#[ignore = "needs chromium: run bash .ci/chromium first"]
fn every_console_page_in_a_real_browser() {
    let (addr, stop, thread) = serve();
    let driver = Driver::start();
    let origin = format!("http://{addr}");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let c = browser(&driver).await;
        // Skills: the list with every status, the broken pack's excluded skills among them.
        let list = visit(
            &c,
            &origin,
            "skills",
            "#skills-table",
            "code-review",
            "skills",
        )
        .await;
        // Each row says its source's trust level (every source here is low).
        assert!(
            list.contains("low: excluded (untrusted-findings)"),
            "{list}"
        );
        assert!(list.contains("low: passes"), "{list}");
        // One skill the trust policy excluded, and why.
        let why = visit(
            &c,
            &origin,
            "skill/scan-comment-instructions",
            "#exclusion",
            "untrusted-findings",
            "skill-excluded",
        )
        .await;
        assert!(why.starts_with("Excluded:"), "{why}");
        // One served skill: its tiers, outline and files, each file with its digest.
        let severity = std::fs::read(
            skills_tests::repo_root().join("packs/pegasus/code-review/references/severity.md"),
        )
        .unwrap();
        let digest = skill_registry::Sha256::of(&severity).to_hex();
        let files = visit(&c, &origin, "skill/code-review", "#files", &digest, "skill").await;
        assert!(files.contains("references/severity.md"), "{files}");
        // The files are below the fold: the screenshot shows them.
        c.execute(
            "document.querySelector('#files').scrollIntoView({block: 'center'});",
            vec![],
        )
        .await
        .unwrap();
        let png = c.screenshot().await.unwrap();
        std::fs::write(screenshots().join("skill.png"), png).unwrap();
        // A skill's eligibility under every profile the server knows.
        let profiles = visit(
            &c,
            &origin,
            "skill/home-automation",
            "#profiles",
            "guest_readonly",
            "skill-profiles",
        )
        .await;
        let row = |p: &str| {
            profiles
                .lines()
                .find(|l| l.starts_with(p))
                .unwrap_or_default()
                .trim_end()
                .to_owned()
        };
        assert!(row("guest_readonly").contains("excluded"), "{profiles}");
        assert!(row("guest_readonly").ends_with("no"), "{profiles}");
        assert!(row("household").contains("proactive"), "{profiles}");
        assert!(row("household").ends_with("yes"), "{profiles}");
        // The playground: the right first skill, the gate and the selected set.
        let gate = visit(
            &c,
            &origin,
            "playground?q=please%20review%20my%20pull%20request",
            "#gate",
            "first candidate",
            "playground",
        )
        .await;
        assert!(
            gate.contains("Gate open: first candidate code-review"),
            "{gate}"
        );
        let first = text_with(&c, "#candidates tbody tr .candidate", "code-review").await;
        assert_eq!(first, "code-review");
        text_with(&c, "#selected", "code-review").await;
        // Catalog budget: a small budget cuts some skills.
        let summary = visit(
            &c,
            &origin,
            "budget?budget_chars=1500",
            "#budget-summary",
            "of 1500 characters used",
            "budget",
        )
        .await;
        assert!(summary.contains("left out"), "{summary}");
        text_with(&c, "#omitted", "weather-report").await;
        // Schedules: each schedule's next fire.
        let table = visit(
            &c,
            &origin,
            "schedules",
            "#schedules",
            "workflows.daily_digest",
            "schedules",
        )
        .await;
        let next = text_with(&c, "#schedules tbody tr .next-fire", "T08:00:00").await;
        assert!(table.contains(&next));
        // No webhook here: the page says nothing was delivered.
        text_with(&c, "main", "None yet").await;
        // Live: the event stream opens.
        visit(&c, &origin, "live", "#live-state", "Connected", "live").await;
        c.close().await.unwrap();
    });
    drop(driver);
    drop(stop);
    thread.join().unwrap();
}

/// A fresh database on the test server: `SKILLS_TEST_DATABASE_URL` or
/// `target/ci-postgres/url` (written by `.ci/postgres`).
async fn fresh_database() -> String {
    let mut url = std::env::var("SKILLS_TEST_DATABASE_URL").unwrap_or_default();
    if url.is_empty() {
        url = std::fs::read_to_string(repo_root().join("target/ci-postgres/url"))
            .unwrap_or_default()
            .trim()
            .to_owned();
    }
    assert!(
        !url.is_empty(),
        "needs PostgreSQL: run bash .ci/postgres first (or set SKILLS_TEST_DATABASE_URL)"
    );
    let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let name = format!(
        "skills_console_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_micros()
    );
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    let base = url.rsplit_once('/').map(|(b, _)| b).unwrap();
    format!("{base}/{name}")
}

/// A webhook receiver on loopback that answers 200 to every request.
fn accepting_receiver() -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 8192];
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let _ = stream.read(&mut buf);
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        }
    });
    url
}

/// Two replicas on one database, both running an every-second schedule with a webhook: the
/// Schedules page of one shows the database's runs with the replica that ran each (as the
/// database records it), and every replica's deliveries with the replica of each attempt.
#[test]
#[ignore = "needs chromium and PostgreSQL: run bash .ci/chromium and bash .ci/postgres first"]
fn the_schedules_page_shows_which_replica_ran_each_run() {
    use skill_runtime::replicas::{Replicas, WebhookConfig};
    let skills = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(skills.path().join("tick")).unwrap();
    std::fs::write(
        skills.path().join("tick/SKILL.md"),
        "---\nname: tick\ndescription: Report the time every second.\nschedule: \"* * * * * *\"\n---\nSay what time it is.\n",
    )
    .unwrap();
    let hook_url = accepting_receiver();
    let dir = skills.path().to_path_buf();
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let (url_tx, url_rx) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let url = fresh_database().await;
            url_tx.send(url.clone()).unwrap();
            let mut engines = Vec::new();
            for name in ["replica-a", "replica-b"] {
                let mut config =
                    EngineConfig::new(RegistryConfig::with_sources(vec![Source::new(
                        &dir, "project",
                    )]));
                config.watch = None;
                let mut hook = WebhookConfig::new(hook_url.clone());
                hook.allow_private_destinations = true;
                config.replicas = Replicas {
                    store: Some(skill_store::Store::connect(&url, name).await.unwrap()),
                    webhook: Some(hook),
                    ..Replicas::default()
                };
                engines.push(Engine::start(config).unwrap());
            }
            let (listener, addr) = skill_http::bind("127.0.0.1:0".parse().unwrap())
                .await
                .unwrap();
            addr_tx.send(addr).unwrap();
            let app = skill_server::app(engines[0].clone(), HttpConfig::default());
            skill_http::serve(listener, app, async {
                let _ = stop_rx.await;
            })
            .await
            .unwrap();
            for e in engines {
                e.shutdown().await;
            }
        });
    });
    let _url = url_rx.recv_timeout(WAIT).unwrap();
    let addr = addr_rx.recv_timeout(WAIT).unwrap();
    let origin = format!("http://{addr}");
    // Which replica claims a fire is a race: wait until the database holds runs of both
    // (and a delivery attempt of each), as replica A's API reads it.
    let began = std::time::Instant::now();
    let schedules = loop {
        let body = blocking_get(addr, "/v1/schedules");
        let v: Value = serde_json::from_str(&body).unwrap_or_default();
        let ran: std::collections::BTreeSet<String> = v["history"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["replica"].as_str().map(str::to_owned))
            .collect();
        let delivered: std::collections::BTreeSet<String> = v["deliveries"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|d| d["attempts"].as_array().cloned().unwrap_or_default())
            .filter_map(|a| a["replica"].as_str().map(str::to_owned))
            .collect();
        if ran.len() == 2 && delivered.len() == 2 {
            break v;
        }
        assert!(
            began.elapsed() < Duration::from_secs(40),
            "runs by {ran:?}, deliveries by {delivered:?}"
        );
        std::thread::sleep(Duration::from_millis(250));
    };
    assert!(schedules["history"].as_array().unwrap().len() >= 2);
    let driver = Driver::start();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let c = browser(&driver).await;
        let runs = visit(
            &c,
            &origin,
            "schedules",
            "#runs",
            "replica-b",
            "schedules-replicas",
        )
        .await;
        assert!(runs.contains("Replica"), "{runs}");
        // Every row the page draws names the replica the database says ran that run.
        let rows = c
            .execute(
                "return [...document.querySelectorAll('#runs tbody tr')].map(r => \
                 [r.cells[0].innerText, r.cells[r.cells.length - 1].innerText]);",
                vec![],
            )
            .await
            .unwrap();
        let rows = rows.as_array().unwrap();
        assert!(rows.len() >= 2, "{rows:?}");
        let now = blocking_get(addr, "/v1/schedules");
        let now: Value = serde_json::from_str(&now).unwrap();
        let by_id: std::collections::HashMap<String, String> = now["history"]
            .as_array()
            .unwrap()
            .iter()
            .chain(schedules["history"].as_array().unwrap())
            .map(|r| {
                (
                    r["id"].to_string(),
                    r["replica"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect();
        let mut names = std::collections::BTreeSet::new();
        for row in rows {
            let (id, replica) = (row[0].as_str().unwrap(), row[1].as_str().unwrap());
            if let Some(want) = by_id.get(id) {
                assert_eq!(replica, want, "run {id}");
            }
            names.insert(replica.to_owned());
        }
        assert!(
            names.contains("replica-a") && names.contains("replica-b"),
            "{names:?}"
        );
        let scope = text_with(&c, "#deliveries-scope", "Every replica").await;
        assert!(scope.contains("shared database"), "{scope}");
        let deliveries = text_with(&c, "#deliveries", "by replica-").await;
        assert!(deliveries.contains("HTTP 200"), "{deliveries}");
        c.close().await.unwrap();
    });
    drop(driver);
    drop(stop_tx);
    thread.join().unwrap();
}

/// `GET path` on a plain connection; the body.
fn blocking_get(addr: SocketAddr, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    raw.split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default()
}
