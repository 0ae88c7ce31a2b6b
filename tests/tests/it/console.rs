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

/// chromedriver on a free loopback port, ended when dropped.
struct Driver {
    child: Child,
    url: String,
}

impl Driver {
    fn start() -> Driver {
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
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .unwrap()
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
        c.update_timeouts(fantoccini::wd::TimeoutConfiguration::new(
            Some(WAIT),
            Some(WAIT),
            Some(Duration::ZERO),
        ))
        .await
        .unwrap();
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
        // No webhook here: the page says this replica delivered nothing.
        text_with(&c, "main", "None from this replica").await;
        // Live: the event stream opens.
        visit(&c, &origin, "live", "#live-state", "Connected", "live").await;
        c.close().await.unwrap();
    });
    drop(driver);
    drop(stop);
    thread.join().unwrap();
}
