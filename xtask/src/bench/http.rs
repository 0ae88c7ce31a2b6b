//! `bench http`: the HTTP API under load, beside a bare hyper server.
//!
//! - Throughput and latency: a load generator on loopback keeps `--connections` HTTP/1.1
//!   keep-alive connections busy for `--seconds` per endpoint, against (a) a bare hyper server
//!   answering a fixed body (the baseline) and (b) the skills server over the bundled packs:
//!   `GET /v1/skills/{name}`, `GET /v1/catalog` and `POST /v1/route`. Both servers run
//!   in-process on the same kind of tokio runtime, the generator on its own thread. Each
//!   endpoint runs in short rounds alternating with the bare server, and is compared with
//!   those paired rounds. Target: skill detail at 70% or more of the bare server's
//!   requests/s.
//! - Memory: the RSS of a `skill-server serve` process over a generated pack of 10,000
//!   skills, once it answers `/v1/health`. Target: under 150 MiB.

use std::convert::Infallible;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args as ClapArgs;
use skill_http::{App, HttpConfig};
use skill_registry::{RegistryConfig, Source};
use skill_runtime::{Engine, EngineConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::Table;
use super::generate;
use crate::process::{cargo, repo_root};

/// Default concurrent connections.
const DEFAULT_CONNECTIONS: usize = 64;
/// Rounds each measurement is split into, alternating with the bare server.
const ROUNDS: u32 = 3;
/// Default seconds per measurement.
const DEFAULT_SECONDS: u64 = 3;
/// Skill detail's requests/s over the bare server's, at least.
const THROUGHPUT_TARGET: f64 = 0.70;
/// RSS target for 10,000 skills.
const RSS_TARGET_MIB: f64 = 150.0;
/// Skills in the generated pack for the RSS figure.
const RSS_SKILLS: usize = 10_000;

/// Command-line arguments of `bench http`.
#[derive(Debug, Clone, ClapArgs)]
pub struct Args {
    /// Concurrent keep-alive connections.
    #[arg(long, default_value_t = DEFAULT_CONNECTIONS)]
    connections: usize,
    /// Seconds of load per endpoint.
    #[arg(long, default_value_t = DEFAULT_SECONDS)]
    seconds: u64,
    /// Skip the RSS measurement (it builds and starts the server binary).
    #[arg(long)]
    no_rss: bool,
}

impl Default for Args {
    fn default() -> Self {
        Args {
            connections: DEFAULT_CONNECTIONS,
            seconds: DEFAULT_SECONDS,
            no_rss: false,
        }
    }
}

/// What one load run measured.
struct Load {
    requests: usize,
    errors: usize,
    elapsed: Duration,
    latencies: Vec<Duration>,
}

impl Load {
    fn empty() -> Load {
        Load {
            requests: 0,
            errors: 0,
            elapsed: Duration::ZERO,
            latencies: Vec::new(),
        }
    }
    /// Add another measurement of the same thing (requests, time and latencies add up).
    fn merge(&mut self, other: Load) {
        self.requests += other.requests;
        self.errors += other.errors;
        self.elapsed += other.elapsed;
        self.latencies.extend(other.latencies);
        self.latencies.sort_unstable();
    }
    fn per_second(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64().max(f64::MIN_POSITIVE)
    }
    fn percentile(&self, q: f64) -> Duration {
        if self.latencies.is_empty() {
            return Duration::ZERO;
        }
        let i = ((self.latencies.len() as f64 * q).ceil() as usize).clamp(1, self.latencies.len());
        self.latencies[i - 1]
    }
}

/// Run the benchmark, adding rows to `table`.
pub fn run(args: &Args, table: &mut Table) -> Result<(), String> {
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))?;
    let bare = server_rt.block_on(start_bare())?;
    let root = repo_root()?;
    let sources: Vec<Source> = ["agentskills", "actions", "lily", "pegasus", "toolsets"]
        .iter()
        .enumerate()
        .map(|(i, p)| Source::new(root.join("packs").join(p), format!("layer{}", i + 1)))
        .collect();
    let skills = server_rt.block_on(start_skills(sources))?;
    let duration = Duration::from_secs(args.seconds.max(1));
    let n = args.connections.max(1);

    // Each endpoint is measured in ROUNDS short rounds alternating with the bare server, so
    // that drift in the machine's speed hits both alike; the baseline row is every bare
    // round together, and each endpoint is compared with its own paired bare rounds.
    let round = duration / ROUNDS;
    let bare_req = Request::get("/");
    let mut base = Load::empty();
    let mut rows = Vec::new();
    for (label, req, target) in [
        (
            "http: GET /v1/skills/{name} (req)",
            Request::get("/v1/skills/pdf-forms"),
            1.0 / THROUGHPUT_TARGET,
        ),
        (
            "http: GET /v1/catalog (req)",
            Request::get("/v1/catalog"),
            f64::INFINITY,
        ),
        (
            "http: POST /v1/route (req)",
            Request::post_json(
                "/v1/route",
                r#"{"text":"tasks.search --status open --limit 5"}"#,
            ),
            f64::INFINITY,
        ),
    ] {
        let mut paired = Load::empty();
        let mut ours = Load::empty();
        for _ in 0..ROUNDS {
            paired.merge(load(bare, n, round, &bare_req));
            ours.merge(load(skills, n, round, &req));
        }
        rows.push((label, target, paired.per_second(), ours));
        base.merge(paired);
    }
    if base.requests == 0 {
        table.error("http: bare hyper, fixed body", "no request succeeded");
        return Ok(());
    }
    let base_time = Duration::from_secs_f64(1.0 / base.per_second());
    // One "item" is one request, so the items/s column reads as requests/s.
    table.baseline("http: bare hyper, fixed body (req)", 1, 0, base_time);
    // Only skill detail has a target (70% of the bare server's requests/s); the others
    // are reported beside it.
    for (label, target, paired_per_second, l) in rows {
        if l.requests == 0 || l.errors > 0 {
            table.error(label, format!("{} ok, {} failed", l.requests, l.errors));
            continue;
        }
        let per_request = Duration::from_secs_f64(1.0 / l.per_second());
        let paired_time = Duration::from_secs_f64(1.0 / paired_per_second.max(f64::MIN_POSITIVE));
        // The target is on throughput: time per request at most 1/0.7 of the bare one
        // measured in the rounds alternating with this endpoint's.
        table.compared(label, 1, 0, per_request, paired_time, target);
        table.note(format!(
            "{label}: {:.0} req/s ({:.0}% of the bare server's {:.0} req/s in the alternating rounds), p50 {:.2} ms, p99 {:.2} ms",
            l.per_second(),
            100.0 * l.per_second() / paired_per_second.max(f64::MIN_POSITIVE),
            paired_per_second,
            l.percentile(0.50).as_secs_f64() * 1e3,
            l.percentile(0.99).as_secs_f64() * 1e3,
        ));
    }
    table.note(format!(
        "bare hyper: {:.0} req/s, p50 {:.2} ms, p99 {:.2} ms; {n} keep-alive connections, {} s per endpoint and as much of bare hyper beside it, in {ROUNDS} alternating rounds; time/row = 1 / (req/s)",
        base.per_second(),
        base.percentile(0.50).as_secs_f64() * 1e3,
        base.percentile(0.99).as_secs_f64() * 1e3,
        duration.as_secs()
    ));
    drop(server_rt);
    if args.no_rss {
        table.skipped("http: serve RSS, 10,000 skills", "--no-rss");
    } else {
        rss(table)?;
    }
    Ok(())
}

async fn start_bare() -> Result<SocketAddr, String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(|_req| async {
                    let body = http_body_util::Full::new(bytes::Bytes::from_static(
                        b"{\"status\":\"ok\"}",
                    ));
                    Ok::<_, Infallible>(hyper::Response::new(body))
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    Ok(addr)
}

async fn start_skills(sources: Vec<Source>) -> Result<SocketAddr, String> {
    let mut config = EngineConfig::new(RegistryConfig::with_sources(sources));
    config.watch = None;
    let engine = Engine::start(config).map_err(|e| e.to_string())?;
    let (listener, addr) = skill_http::bind(
        "127.0.0.1:0"
            .parse()
            .map_err(|_| "bad address".to_owned())?,
    )
    .await
    .map_err(|e| e.to_string())?;
    let app = App::new(engine, HttpConfig::default());
    tokio::spawn(async move {
        let _ = skill_http::serve(listener, app, std::future::pending()).await;
    });
    Ok(addr)
}

/// One request, pre-rendered.
pub(super) struct Request {
    pub(super) bytes: Vec<u8>,
}

impl Request {
    /// `GET path`.
    pub(super) fn get(path: &str) -> Request {
        Request {
            bytes: format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").into_bytes(),
        }
    }
    /// `POST path` with a JSON body.
    pub(super) fn post_json(path: &str, body: &str) -> Request {
        Request {
            bytes: format!(
                "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .into_bytes(),
        }
    }
}

/// Keep `n` connections busy for `duration`, one request at a time each.
fn load(addr: SocketAddr, n: usize, duration: Duration, req: &Request) -> Load {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(_) => {
            return Load {
                requests: 0,
                errors: 1,
                elapsed: duration,
                latencies: Vec::new(),
            };
        }
    };
    let bytes = Arc::new(req.bytes.clone());
    rt.block_on(async move {
        let start = Instant::now();
        let deadline = start + duration;
        let mut tasks = Vec::with_capacity(n);
        for _ in 0..n {
            let bytes = bytes.clone();
            tasks.push(tokio::spawn(async move {
                connection(addr, &bytes, deadline).await
            }));
        }
        let mut all = Load {
            requests: 0,
            errors: 0,
            elapsed: Duration::ZERO,
            latencies: Vec::new(),
        };
        for t in tasks {
            match t.await {
                Ok((lat, errors)) => {
                    all.requests += lat.len();
                    all.errors += errors;
                    all.latencies.extend(lat);
                }
                Err(_) => all.errors += 1,
            }
        }
        all.elapsed = start.elapsed();
        all.latencies.sort_unstable();
        all
    })
}

/// One keep-alive connection: send, read one whole response (by Content-Length), repeat.
async fn connection(addr: SocketAddr, req: &[u8], deadline: Instant) -> (Vec<Duration>, usize) {
    let mut latencies = Vec::new();
    let mut errors = 0;
    let Ok(mut stream) = TcpStream::connect(addr).await else {
        return (latencies, 1);
    };
    let _ = stream.set_nodelay(true);
    let mut buf = Vec::with_capacity(64 * 1024);
    let mut chunk = vec![0u8; 64 * 1024];
    while Instant::now() < deadline {
        let sent = Instant::now();
        if stream.write_all(req).await.is_err() {
            errors += 1;
            break;
        }
        buf.clear();
        let complete = loop {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break false,
                Ok(k) => buf.extend_from_slice(&chunk[..k]),
            }
            if let Some(done) = response_complete(&buf) {
                break done;
            }
        };
        if !complete {
            errors += 1;
            break;
        }
        latencies.push(sent.elapsed());
    }
    (latencies, errors)
}

/// `Some(ok)` once `buf` holds a whole response (`ok`: status 2xx), `None` while partial.
pub(super) fn response_complete(buf: &[u8]) -> Option<bool> {
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&buf[..end]).ok()?;
    let ok = head.split(' ').nth(1).is_some_and(|s| s.starts_with('2'));
    let len = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())
                .flatten()
        })
        .unwrap_or(0);
    (buf.len() >= end + 4 + len).then_some(ok)
}

/// RSS of a `skill-server serve` process over a generated pack.
fn rss(table: &mut Table) -> Result<(), String> {
    const ROW: &str = "http: serve RSS, 10,000 skills";
    let bin = match release_server() {
        Ok(b) => b,
        Err(e) => {
            table.error(ROW, e);
            return Ok(());
        }
    };
    let dir = tempfile::Builder::new()
        .prefix("xtask-bench-http-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    generate::write_pack(dir.path(), RSS_SKILLS)?;
    let mut child = Command::new(&bin)
        .args(["serve", "--no-watch", "--listen", "127.0.0.1:0", "--skills"])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
    let started = Instant::now();
    let mut line = String::new();
    if let Some(out) = child.stdout.take() {
        let _ = BufReader::new(out).read_line(&mut line);
    }
    let ready = started.elapsed();
    let kib = read_rss_kib(child.id());
    let _ = child.kill();
    let _ = child.wait();
    match kib {
        Some(kib) => {
            let mib = kib as f64 / 1024.0;
            table.absolute(ROW, RSS_SKILLS, 0, ready, None);
            table.note(format!(
                "serve over {RSS_SKILLS} generated skills: RSS {mib:.1} MiB once listening (target < {RSS_TARGET_MIB} MiB: {}); time to listen shown as the row's time",
                if mib < RSS_TARGET_MIB { "met" } else { "MISSED" }
            ));
        }
        None => table.skipped(ROW, "no /proc/<pid>/status on this platform"),
    }
    let _ = Path::new("");
    Ok(())
}

/// Build the release `skill-server` and return the binary's path.
pub(crate) fn release_server() -> Result<std::path::PathBuf, String> {
    let root = repo_root()?;
    let status = cargo()
        .args(["build", "--release", "--quiet", "--package", "skill-server"])
        .current_dir(&root)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("building skill-server failed".to_owned());
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    Ok(target.join("release").join("skill-server"))
}

/// The resident set of process `pid`, in KiB (Linux `/proc`).
pub(crate) fn read_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| {
        l.strip_prefix("VmRSS:")
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    })
}
