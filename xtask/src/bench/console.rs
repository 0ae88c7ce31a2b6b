//! `bench console`: the first paint of the console's skills page (`/ui/#/skills`) in
//! headless Chromium, driven over WebDriver (chromedriver), against a release `skill-server
//! serve` over the bundled packs (the baseline), the real corpus and a generated pack of
//! 10,000 skills. The time is the page's own clock (`performance.now()`, from the start
//! of the navigation) when the table's first row is in the document and two animation
//! frames have passed (the frame that paints it). The browser's cache is bypassed: every
//! run loads the page and its `/v1` answers afresh. Targets: under 1 s on the corpus,
//! under 2 s on 10,000 skills. Not part of the default run (it needs Chromium:
//! `bash .ci/chromium`).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use clap::Args as ClapArgs;
use serde_json::{Value, json};

use super::Table;
use super::{generate, http, load, scale};
use crate::process::repo_root;

/// Default page loads per pack (the median is reported).
const DEFAULT_RUNS: usize = 5;
/// Skills in the generated pack.
const GENERATED_SKILLS: usize = 10_000;
/// First paint on the corpus, at most.
const CORPUS_TARGET: Duration = Duration::from_secs(1);
/// First paint on 10,000 skills, at most.
const GENERATED_TARGET: Duration = Duration::from_secs(2);
/// How long one WebDriver call may take (a loaded machine starts Chromium slowly).
const CALL_TIMEOUT: Duration = Duration::from_secs(180);

/// Command-line arguments of `bench console`.
#[derive(Debug, Clone, ClapArgs)]
pub struct Args {
    /// Page loads per pack.
    #[arg(long, default_value_t = DEFAULT_RUNS)]
    runs: usize,
    /// The corpus folder, served as one source. Default: `../shared/corpus`.
    #[arg(long)]
    corpus: Option<PathBuf>,
}

/// A path from `target/ci-chromium/NAME` (written by `.ci/chromium`), or `fallback`.
fn tool(name: &str, fallback: &str) -> String {
    repo_root()
        .ok()
        .and_then(|r| std::fs::read_to_string(r.join("target/ci-chromium").join(name)).ok())
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|| fallback.to_owned())
}

/// chromedriver on a free loopback port in a process group of its own, with every Chromium
/// it started: dropping it ends the whole group, whichever way the bench leaves (an error,
/// a timed-out call, a panic), so no browser outlives a failed run.
struct Driver {
    child: Child,
    port: u16,
}

impl Driver {
    fn start() -> Result<Driver, String> {
        use std::os::unix::process::CommandExt;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let path = tool("chromedriver", "chromedriver");
        let mut child = Command::new(&path)
            .arg(format!("--port={port}"))
            .arg("--allowed-ips=127.0.0.1")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            // Chromium and its helpers stay in chromedriver's group (its crash handler
            // leaves it but ends with the browser), so one signal to the group ends them all.
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start {path}: {e} (run bash .ci/chromium)"))?;
        let out = child.stdout.take();
        // From here on the `Driver` owns the child: any early return ends the group.
        let driver = Driver { child, port };
        let out = out.ok_or("no chromedriver output")?;
        let mut lines = BufReader::new(out).lines();
        loop {
            match lines.next() {
                Some(Ok(line)) if line.contains("started successfully") => break,
                Some(Ok(_)) => continue,
                _ => return Err("chromedriver ended before it listened".into()),
            }
        }
        // Keep draining its output so that a full pipe never blocks it.
        std::thread::spawn(move || for _ in lines {});
        Ok(driver)
    }

    /// One WebDriver call: the answer's `value`.
    fn call(&self, method: &str, path: &str, body: &Value) -> Result<Value, String> {
        let body = body.to_string();
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(CALL_TIMEOUT))
            .map_err(|e| e.to_string())?;
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.port,
            body.len()
        )
        .map_err(|e| e.to_string())?;
        let json = read_answer(&mut BufReader::new(s)).map_err(|e| format!("{path}: {e}"))?;
        let v: Value = serde_json::from_slice(&json).map_err(|e| {
            format!(
                "chromedriver answered {path} with {:?}: {e}",
                String::from_utf8_lossy(&json)
            )
        })?;
        if v["value"]["error"].is_string() {
            return Err(format!("{path}: {}", v["value"]["message"]));
        }
        Ok(v["value"].clone())
    }
}

/// The body of one HTTP/1.1 answer: the head, then exactly `Content-Length` bytes.
/// chromedriver answers `Connection: close` but keeps the socket open, so reading to the
/// end of the stream would wait for the read timeout on every call (what stopped this
/// bench with EAGAIN).
fn read_answer(r: &mut impl BufRead) -> Result<Vec<u8>, String> {
    let mut length = None;
    let mut line = String::new();
    loop {
        line.clear();
        if r.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
            return Err("the answer ended in its head".into());
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        match l.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                length = value.trim().parse::<usize>().ok();
            }
            _ => {}
        }
    }
    let length = length.ok_or("the answer has no Content-Length")?;
    let mut body = vec![0; length];
    r.read_exact(&mut body).map_err(|e| e.to_string())?;
    Ok(body)
}

impl Drop for Driver {
    fn drop(&mut self) {
        // The group's id is chromedriver's pid (`process_group(0)`).
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Wait for the skills table's first row and two frames; the page's clock then.
const PAINTED: &str = r#"
    const done = arguments[arguments.length - 1];
    const painted = () => requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now())));
    if (document.querySelector('#skills-table tbody tr')) { painted(); return; }
    const seen = new MutationObserver(() => {
        if (document.querySelector('#skills-table tbody tr')) { seen.disconnect(); painted(); }
    });
    seen.observe(document.documentElement, { subtree: true, childList: true });
"#;

/// The median first paint over `runs` loads of the skills page at `origin`.
fn first_paint(driver: &Driver, origin: &str, runs: usize) -> Result<Duration, String> {
    let chromium = tool("chromium", "");
    let mut options = json!({
        "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,1000", "--no-first-run", "--disable-extensions",
                 "--disable-application-cache", "--disk-cache-size=1"]
    });
    if !chromium.is_empty() {
        options["binary"] = Value::String(chromium);
    }
    let session = driver.call(
        "POST",
        "/session",
        &json!({ "capabilities": { "alwaysMatch": { "goog:chromeOptions": options } } }),
    )?;
    let id = session["sessionId"]
        .as_str()
        .ok_or("no session id")?
        .to_owned();
    let base = format!("/session/{id}");
    let result = (|| {
        driver.call(
            "POST",
            &format!("{base}/timeouts"),
            &json!({ "script": CALL_TIMEOUT.as_millis() as u64 }),
        )?;
        let mut times = Vec::with_capacity(runs);
        // One load first, not counted: the browser's own start-up.
        for i in 0..=runs {
            driver.call(
                "POST",
                &format!("{base}/url"),
                &json!({ "url": "about:blank" }),
            )?;
            driver.call(
                "POST",
                &format!("{base}/url"),
                &json!({ "url": format!("{origin}/ui/#/skills") }),
            )?;
            let ms = driver.call(
                "POST",
                &format!("{base}/execute/async"),
                &json!({ "script": PAINTED, "args": [] }),
            )?;
            let ms = ms.as_f64().ok_or("the page gave no time")?;
            if i > 0 {
                times.push(Duration::from_secs_f64(ms / 1000.0));
            }
        }
        times.sort();
        times
            .get(times.len() / 2)
            .copied()
            .ok_or_else(|| "no run".to_owned())
    })();
    let _ = driver.call("DELETE", &base, &json!({}));
    result
}

/// Serve `shards`, measure, and stop the server: the median and the skills loaded.
fn measure(
    server: &Path,
    driver: &Driver,
    shards: &[PathBuf],
    runs: usize,
) -> Result<(Duration, usize), String> {
    let log = tempfile::Builder::new()
        .prefix("xtask-bench-console-")
        .tempfile()
        .map_err(|e| e.to_string())?;
    let (_server, _ready, line) = scale::start(server, shards, None, log.path())?;
    let (skills, addr) =
        scale::ready_line(&line).ok_or_else(|| format!("serve's first line: {line:?}"))?;
    let median = first_paint(driver, &format!("http://{addr}"), runs)?;
    Ok((median, skills))
}

/// Run the benchmark.
pub fn run(args: &Args, table: &mut Table) -> Result<(), String> {
    const BASE: &str = "console: skills page first paint, bundled packs";
    const CORPUS: &str = "console: skills page first paint, corpus";
    const GENERATED: &str = "console: skills page first paint, 10,000 skills";
    let driver = match Driver::start() {
        Ok(d) => d,
        Err(e) => {
            table.skipped(BASE, e);
            return Ok(());
        }
    };
    let server = http::release_server()?;
    let root = repo_root()?;
    let packs: Vec<PathBuf> = ["agentskills", "actions", "lily", "pegasus", "toolsets"]
        .iter()
        .map(|p| root.join("packs").join(p))
        .collect();
    let (base, n) = measure(&server, &driver, &packs, args.runs)?;
    let base = table.baseline(BASE, n, 0, base);
    let corpus = match &args.corpus {
        Some(c) => c.clone(),
        None => load::default_corpus()?,
    };
    if corpus.is_dir() {
        let (t, n) = measure(&server, &driver, std::slice::from_ref(&corpus), args.runs)?;
        table.absolute(CORPUS, n, 0, t, Some(CORPUS_TARGET));
        table.note(format!(
            "corpus: first paint {:.0} ms for {n} skills, {:.2}x the bundled packs' (target < {} ms)",
            t.as_secs_f64() * 1000.0,
            t.as_secs_f64() / base.as_secs_f64().max(f64::EPSILON),
            CORPUS_TARGET.as_millis()
        ));
    } else {
        table.skipped(CORPUS, format!("no corpus at {}", corpus.display()));
    }
    let dir = tempfile::Builder::new()
        .prefix("xtask-bench-console-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    generate::write_pack(dir.path(), GENERATED_SKILLS)?;
    let (t, n) = measure(&server, &driver, &[dir.path().to_path_buf()], args.runs)?;
    table.absolute(GENERATED, n, 0, t, Some(GENERATED_TARGET));
    table.note(format!(
        "10,000 skills: first paint {:.0} ms, {:.2}x the bundled packs' (target < {} ms)",
        t.as_secs_f64() * 1000.0,
        t.as_secs_f64() / base.as_secs_f64().max(f64::EPSILON),
        GENERATED_TARGET.as_millis()
    ));
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::read_answer;

    #[test]
    fn an_answer_is_read_to_its_length_not_to_the_end_of_the_stream() {
        // What chromedriver sends: `Connection: close`, then the socket stays open (here:
        // more bytes follow that are not part of the answer).
        let raw = b"HTTP/1.1 200 OK\r\nContent-Length:11\r\nConnection:close\r\n\r\n{\"value\":1}{\"more\"";
        let body = read_answer(&mut &raw[..]).unwrap();
        assert_eq!(body, b"{\"value\":1}");
    }

    #[test]
    fn an_answer_without_a_length_or_cut_short_is_an_error() {
        let no_length = b"HTTP/1.1 200 OK\r\nConnection:close\r\n\r\n{}";
        assert!(read_answer(&mut &no_length[..]).is_err());
        let short = b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}";
        assert!(read_answer(&mut &short[..]).is_err());
        let no_head_end = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n";
        assert!(read_answer(&mut &no_head_end[..]).is_err());
    }
}
