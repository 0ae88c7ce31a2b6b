//! `bench scale`: one `skill-server serve` process over 10,000, 50,000 and 100,000
//! real-sized skills, beside the read floor of the same files.
//!
//! The pack is the corpus's loadable `SKILL.md` files cycled under new names
//! (`scale-000001`, ...; only the frontmatter's `name` changes), in source folders of
//! [`SHARD`] skills each, one `--skills` layer apiece. For each size, one run prints:
//!
//! - the read floor: walking the folders and reading every `SKILL.md` on one thread (the
//!   baseline; median of [`READ_RUNS`]);
//! - time to ready, cold: from starting a fresh `serve` (watching its sources) to its first
//!   line, which it prints once every skill is loaded and indexed; target at most
//!   [`READY_TARGET`] times the read floor;
//! - time to ready with the index on disk (`index_dir` in a configuration file): the first
//!   start, which builds it there, and a warm start over the same files with the index left
//!   as the first start wrote it; target for the warm start under [`WARM_TARGET`];
//! - RSS once ready, after the requests, and at its peak (`VmHWM`), and once ready after the
//!   warm start (its index memory-mapped); target under [`RSS_TARGET_MIB`];
//! - `POST /v1/select` and `GET /v1/search` latency over loopback, one keep-alive
//!   connection, one request at a time, p50 and p99 of `--queries` each (after one untimed
//!   round of each request); target select p99 under [`SELECT_P99_TARGET`];
//! - `GET /v1/catalog` (median of [`CATALOG_RUNS`]);
//! - a one-file reload: from rewriting one skill's file (a new word in its body) until a
//!   search for that word finds it, through the watcher and its debounce (median and
//!   worst of [`RELOADS`] files); target under [`RELOAD_TARGET`].
//!
//! The targets are the ones issue 46 sets at 100,000 skills; they are printed at every size.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use clap::Args as ClapArgs;
use skill_format::{Origin, ParseOptions, parse_skill};

use super::Table;
use super::http::{Request, read_rss_kib, release_server, response_complete};
use super::load::{collect_skill_files, default_corpus, read_all};
use super::timing::median;

/// Pack sizes by default.
const DEFAULT_SIZES: [usize; 3] = [10_000, 50_000, 100_000];
/// Skills per source folder: well under discovery's default of 50,000 folders per root.
const SHARD: usize = 25_000;
/// Timed select and search requests by default (each).
const DEFAULT_QUERIES: usize = 200;
/// Read-floor runs (the median is reported).
const READ_RUNS: usize = 3;
/// Catalog requests (the median is reported).
const CATALOG_RUNS: usize = 5;
/// One-file reloads timed.
const RELOADS: usize = 5;
/// Ready within this many times the read floor.
const READY_TARGET: f64 = 4.0;
/// A warm start (index on disk, skills unchanged) ready within this.
const WARM_TARGET: Duration = Duration::from_secs(2);
/// RSS under this many MiB.
const RSS_TARGET_MIB: f64 = 1024.0;
/// Select p99 under this.
const SELECT_P99_TARGET: Duration = Duration::from_millis(5);
/// A one-file reload visible under this.
const RELOAD_TARGET: Duration = Duration::from_millis(200);
/// Longest wait for the server to be ready.
const READY_TIMEOUT: Duration = Duration::from_secs(900);
/// Longest wait for one reload to show.
const RELOAD_TIMEOUT: Duration = Duration::from_secs(30);

/// Requests as users write them, over the corpus's subjects (select and search cycle
/// through them).
const REQUESTS: [&str; 16] = [
    "fill in the fields of this PDF form and save a copy",
    "write a commit message for my staged changes",
    "turn this spreadsheet of sales into a pivot table with a chart",
    "review my pull request for security problems",
    "design a landing page for a coffee shop in React",
    "convert the meeting notes document to markdown",
    "why does this python test fail intermittently",
    "set up error monitoring for a Next.js app",
    "draft a slide deck that explains our quarterly results",
    "analyse single-cell RNA sequencing data and cluster the cells",
    "write end-to-end browser tests for the login flow",
    "refactor this module and keep the public API the same",
    "plan the database migration to add a tenants table",
    "summarise the changes since the last release for the changelog",
    "build an MCP server that exposes our ticket system",
    "make the image smaller without losing quality",
];

/// Command-line arguments of `bench scale`.
#[derive(Debug, Clone, ClapArgs)]
pub struct Args {
    /// Pack sizes to measure, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = DEFAULT_SIZES)]
    sizes: Vec<usize>,
    /// Folder of real-world skills (searched recursively for `SKILL.md`). Default: as for
    /// `bench load`.
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Timed select requests and timed search requests per size.
    #[arg(long, default_value_t = DEFAULT_QUERIES, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    queries: usize,
}

impl Default for Args {
    fn default() -> Self {
        Args {
            sizes: DEFAULT_SIZES.to_vec(),
            corpus: None,
            queries: DEFAULT_QUERIES,
        }
    }
}

/// Run every size, adding rows to `table`.
pub fn run(args: &Args, table: &mut Table) -> Result<(), String> {
    let corpus = match &args.corpus {
        Some(c) => c.clone(),
        None => default_corpus()?,
    };
    if !corpus.is_dir() {
        table.skipped("scale", format!("no corpus at {}", corpus.display()));
        return Ok(());
    }
    let templates = templates(&corpus);
    if templates.is_empty() {
        table.skipped(
            "scale",
            format!("no loadable SKILL.md under {}", corpus.display()),
        );
        return Ok(());
    }
    let bytes: usize = templates.iter().map(String::len).sum();
    table.note(format!(
        "scale: {} loadable corpus files ({:.1} KB on average) cycled under new names; {} per source folder",
        templates.len(),
        bytes as f64 / templates.len() as f64 / 1e3,
        SHARD
    ));
    let server = release_server()?;
    for &n in &args.sizes {
        if let Err(e) = size(&server, &templates, n, args.queries, table) {
            table.error(&format!("scale {n}"), e);
        }
    }
    Ok(())
}

/// The text of every loadable corpus `SKILL.md` whose frontmatter names it, in path order.
fn templates(corpus: &Path) -> Vec<String> {
    let (paths, _) = collect_skill_files(corpus);
    let probe = folder(0);
    paths
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .filter(|text| {
            renamed(text, &probe).is_some_and(|t| {
                let opts =
                    ParseOptions::new(format!("{probe}/SKILL.md"), Origin::folder(probe.clone()));
                let file = parse_skill(t.as_bytes(), &opts);
                file.is_loadable() && file.name == probe
            })
        })
        .collect()
}

/// The folder (and skill) name of skill `i`.
fn folder(i: usize) -> String {
    format!("scale-{i:06}")
}

/// `text` with its frontmatter's `name:` line naming `name`; `None` without one.
fn renamed(text: &str, name: &str) -> Option<String> {
    let rest = text.strip_prefix("---\n")?;
    let mut out = String::with_capacity(text.len() + name.len());
    out.push_str("---\n");
    let mut done = false;
    let mut lines = rest.split_inclusive('\n');
    for line in lines.by_ref() {
        if line.trim_end() == "---" {
            out.push_str(line);
            break;
        }
        if !done && line.starts_with("name:") {
            let _ = writeln!(out, "name: {name}");
            done = true;
        } else {
            out.push_str(line);
        }
    }
    lines.for_each(|l| out.push_str(l));
    done.then_some(out)
}

/// Percent-encoding of a query-string value.
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// A word of letters only for `k`, unlike every other `k`'s and unlike English.
fn marker(mut k: usize) -> String {
    let mut s = String::from("zqmark");
    loop {
        s.push(char::from(b'a' + (k % 26) as u8));
        k /= 26;
        if k == 0 {
            return s;
        }
    }
}

/// From `serve`'s first line, the skills it loaded and its address.
pub(super) fn ready_line(line: &str) -> Option<(usize, SocketAddr)> {
    let skills = line
        .strip_prefix("skill-server: ")?
        .split(' ')
        .next()?
        .parse()
        .ok()?;
    let addr = line
        .split("http://")
        .nth(1)?
        .split('/')
        .next()?
        .parse()
        .ok()?;
    Some((skills, addr))
}

/// The source folder of skill `i` under `root`.
fn shard(root: &Path, i: usize) -> PathBuf {
    root.join(format!("shard-{}", i / SHARD))
}

/// Write `n` skills under `root`; returns the source folders and the total bytes.
fn write_pack(root: &Path, templates: &[String], n: usize) -> Result<(Vec<PathBuf>, u64), String> {
    let mut total = 0u64;
    let mut shards = Vec::new();
    for i in 0..n {
        let source = shard(root, i);
        if i % SHARD == 0 {
            std::fs::create_dir(&source)
                .map_err(|e| format!("cannot create {}: {e}", source.display()))?;
            shards.push(source.clone());
        }
        let name = folder(i);
        let dir = source.join(&name);
        std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let template = &templates[i % templates.len()];
        let text = renamed(template, &name).unwrap_or_else(|| template.clone());
        std::fs::write(dir.join("SKILL.md"), &text)
            .map_err(|e| format!("cannot write {}: {e}", dir.display()))?;
        total += text.len() as u64;
    }
    Ok((shards, total))
}

/// A `serve` process, killed when dropped.
pub(super) struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One keep-alive connection, one request at a time.
struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    fn connect(addr: SocketAddr) -> Result<Client, String> {
        let stream = TcpStream::connect(addr).map_err(|e| format!("cannot connect: {e}"))?;
        let _ = stream.set_nodelay(true);
        Ok(Client {
            stream,
            buf: Vec::with_capacity(64 * 1024),
        })
    }

    /// Send `req` and read its whole response: its time and body.
    fn call(&mut self, req: &Request) -> Result<(Duration, &[u8]), String> {
        let start = Instant::now();
        self.stream
            .write_all(&req.bytes)
            .map_err(|e| format!("cannot send: {e}"))?;
        self.buf.clear();
        let mut chunk = [0u8; 64 * 1024];
        let ok = loop {
            let k = self
                .stream
                .read(&mut chunk)
                .map_err(|e| format!("cannot read: {e}"))?;
            if k == 0 {
                return Err("the server closed the connection".to_owned());
            }
            self.buf.extend_from_slice(&chunk[..k]);
            if let Some(ok) = response_complete(&self.buf) {
                break ok;
            }
        };
        let took = start.elapsed();
        let body_at = self
            .buf
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map_or(0, |p| p + 4);
        if !ok {
            let head = String::from_utf8_lossy(&self.buf[..self.buf.len().min(300)]);
            return Err(format!("request failed: {head}"));
        }
        Ok((took, &self.buf[body_at..]))
    }
}

/// The `q`-th percentile of sorted `times`.
fn percentile(times: &[Duration], q: f64) -> Duration {
    if times.is_empty() {
        return Duration::ZERO;
    }
    let i = ((times.len() as f64 * q).ceil() as usize).clamp(1, times.len());
    times[i - 1]
}

/// Time `queries` requests made by `req` (after one untimed round of each of
/// [`REQUESTS`]), sorted.
fn latencies(
    client: &mut Client,
    queries: usize,
    req: impl Fn(&str) -> Request,
) -> Result<Vec<Duration>, String> {
    let reqs: Vec<Request> = REQUESTS.iter().map(|r| req(r)).collect();
    for r in &reqs {
        client.call(r)?;
    }
    let mut times = Vec::with_capacity(queries);
    for q in 0..queries {
        times.push(client.call(&reqs[q % reqs.len()])?.0);
    }
    times.sort_unstable();
    Ok(times)
}

/// `VmHWM` (peak resident set) of process `pid`, in KiB.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| {
        l.strip_prefix("VmHWM:")
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    })
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or_else(
        || "n/a".to_owned(),
        |k| format!("{:.0} MiB", k as f64 / 1024.0),
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}

/// Start `serve` over `shards` and wait for its first line: the process, the time it took,
/// the line.
pub(super) fn start(
    server: &Path,
    shards: &[PathBuf],
    config: Option<&Path>,
    log: &Path,
) -> Result<(Server, Duration, String), String> {
    let stderr =
        std::fs::File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let mut cmd = Command::new(server);
    cmd.args(["serve", "--listen", "127.0.0.1:0"]);
    if let Some(config) = config {
        cmd.arg("--config").arg(config);
    }
    for s in shards {
        cmd.arg("--skills").arg(s);
    }
    let started = Instant::now();
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", server.display()))?;
    let out = child.stdout.take();
    let server = Server(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        if let Some(out) = out {
            let mut out = BufReader::new(out);
            let _ = out.read_line(&mut line);
            let _ = tx.send(line);
            // Keep reading so that the server never blocks on a full pipe.
            let _ = std::io::copy(&mut out, &mut std::io::sink());
        }
    });
    let line = rx.recv_timeout(READY_TIMEOUT).unwrap_or_default();
    let ready = started.elapsed();
    if line.is_empty() {
        let log = std::fs::read_to_string(log).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(3).collect();
        return Err(format!("serve did not start: {}", tail.join(" | ")));
    }
    Ok((server, ready, line))
}

/// The address from `serve`'s first line, once it says it loaded all `n` skills.
fn loaded_all(line: &str, n: usize) -> Result<SocketAddr, String> {
    let (loaded, addr) =
        ready_line(line).ok_or_else(|| format!("unexpected first line: {}", line.trim()))?;
    if loaded != n {
        return Err(format!(
            "serve loaded {loaded} skills of {n}: {}",
            line.trim()
        ));
    }
    Ok(addr)
}

/// One size: write the pack, measure, add rows.
fn size(
    server: &Path,
    templates: &[String],
    n: usize,
    queries: usize,
    table: &mut Table,
) -> Result<(), String> {
    let dir = tempfile::Builder::new()
        .prefix("xtask-bench-scale-")
        .tempdir()
        .map_err(|e| format!("cannot create a temporary folder: {e}"))?;
    let (shards, bytes) = write_pack(dir.path(), templates, n)?;

    let mut reads = Vec::with_capacity(READ_RUNS);
    for _ in 0..READ_RUNS {
        let start = Instant::now();
        let mut files = 0;
        for s in &shards {
            files += read_all(s)?.0;
        }
        reads.push(start.elapsed());
        if files != n {
            return Err(format!("read {files} files, wrote {n}"));
        }
    }
    let read = median(&mut reads);

    let log = dir.path().join("serve.log");
    let (running, ready, line) = start(server, &shards, None, &log)?;
    let pid = running.0.id();
    let addr = loaded_all(&line, n)?;
    let rss_ready = read_rss_kib(pid);
    let mut client = Client::connect(addr)?;
    let select = latencies(&mut client, queries, |r| {
        Request::post_json(
            "/v1/select",
            &serde_json::json!({ "message": r }).to_string(),
        )
    })?;
    let search = latencies(&mut client, queries, |r| {
        Request::get(&format!("/v1/search?q={}", encode(r)))
    })?;
    let catalog_req = Request::get("/v1/catalog");
    client.call(&catalog_req)?;
    let mut catalog = Vec::with_capacity(CATALOG_RUNS);
    for _ in 0..CATALOG_RUNS {
        catalog.push(client.call(&catalog_req)?.0);
    }
    let catalog = median(&mut catalog);
    let mut reloads = Vec::with_capacity(RELOADS);
    for k in 0..RELOADS {
        reloads.push(reload(&mut client, dir.path(), templates, n, k)?);
    }
    let worst_reload = reloads.iter().copied().max().unwrap_or_default();
    let reload = median(&mut reloads);
    let rss_after = read_rss_kib(pid);
    let peak = peak_rss_kib(pid);
    drop(running);

    // The index on disk: a first start builds it, a second over the same files finds it.
    let config = dir.path().join("serve.toml");
    let index_dir = dir.path().join("index");
    std::fs::write(
        &config,
        format!("index_dir = {:?}\n", index_dir.display().to_string()),
    )
    .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
    let (first, disk_first, line) = start(server, &shards, Some(&config), &log)?;
    loaded_all(&line, n)?;
    drop(first);
    let (warm_server, warm, line) = start(server, &shards, Some(&config), &log)?;
    loaded_all(&line, n)?;
    let rss_warm = read_rss_kib(warm_server.0.id());
    drop(warm_server);

    let label = |what: &str| format!("scale {n}: {what}");
    let base = table.baseline(&label("read floor (1 thread)"), n, bytes, read);
    table.compared(
        &label("serve ready, cold"),
        n,
        bytes,
        ready,
        base,
        READY_TARGET,
    );
    table.compared(
        &label("serve ready, index on disk, first start"),
        n,
        bytes,
        disk_first,
        base,
        READY_TARGET,
    );
    table.absolute(
        &label("serve ready, warm (index on disk, unchanged)"),
        n,
        bytes,
        warm,
        Some(WARM_TARGET),
    );
    let p = |t: &[Duration], q| percentile(t, q);
    table.absolute(&label("select p50"), 1, 0, p(&select, 0.50), None);
    table.absolute(
        &label("select p99"),
        1,
        0,
        p(&select, 0.99),
        Some(SELECT_P99_TARGET),
    );
    table.absolute(&label("search p50"), 1, 0, p(&search, 0.50), None);
    table.absolute(&label("search p99"), 1, 0, p(&search, 0.99), None);
    table.absolute(&label("catalog"), 1, 0, catalog, None);
    table.absolute(
        &label("one-file reload visible"),
        1,
        0,
        reload,
        Some(RELOAD_TARGET),
    );
    let rss_ok = rss_after.is_some_and(|k| (k as f64 / 1024.0) < RSS_TARGET_MIB);
    let ratio = ready.as_secs_f64() / read.as_secs_f64().max(f64::MIN_POSITIVE);
    table.note(format!(
        "scale {n}: {:.0} MB; read floor {:.0} ms; ready {:.1} s = {ratio:.1}x the floor (target <= {READY_TARGET}x: {}); with the index on disk {:.1} s first, {:.1} s warm (target < {} s: {}), RSS {} once ready warm; RSS {} once ready, {} after the requests, peak {} (target < {RSS_TARGET_MIB} MiB: {}); select p99 {:.2} ms (target < {} ms: {}); reload median {:.0} ms, worst {:.0} ms of {RELOADS} (target < {} ms: {}); select/search over one keep-alive loopback connection, {queries} timed each",
        bytes as f64 / 1e6,
        ms(read),
        ready.as_secs_f64(),
        verdict(ratio <= READY_TARGET),
        disk_first.as_secs_f64(),
        warm.as_secs_f64(),
        WARM_TARGET.as_secs(),
        verdict(warm < WARM_TARGET),
        mib(rss_warm),
        mib(rss_ready),
        mib(rss_after),
        mib(peak),
        verdict(rss_ok),
        ms(p(&select, 0.99)),
        ms(SELECT_P99_TARGET),
        verdict(p(&select, 0.99) < SELECT_P99_TARGET),
        ms(reload),
        ms(worst_reload),
        ms(RELOAD_TARGET),
        verdict(reload < RELOAD_TARGET),
    ));
    Ok(())
}

/// Rewrite the `k`-th of [`RELOADS`] skills spread over the pack with a new word in its
/// body, and time until a search for the word finds it.
fn reload(
    client: &mut Client,
    root: &Path,
    templates: &[String],
    n: usize,
    k: usize,
) -> Result<Duration, String> {
    let i = (k * n / RELOADS + n / (2 * RELOADS)).min(n.saturating_sub(1));
    let name = folder(i);
    let file = shard(root, i).join(&name).join("SKILL.md");
    let word = marker(k);
    let template = &templates[i % templates.len()];
    let mut text = renamed(template, &name).unwrap_or_else(|| template.clone());
    let _ = write!(text, "\n\nReload check: {word}.\n");
    let query = Request::get(&format!("/v1/search?q={word}&limit=1"));
    let want = format!("\"{name}\"");
    let start = Instant::now();
    std::fs::write(&file, text).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    loop {
        let (_, body) = client.call(&query)?;
        if body.windows(want.len()).any(|w| w == want.as_bytes()) {
            return Ok(start.elapsed());
        }
        if start.elapsed() > RELOAD_TIMEOUT {
            return Err(format!(
                "{name}'s change was not found by search after {} s",
                RELOAD_TIMEOUT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn renaming_changes_the_frontmatter_name_only() {
        let text = "---\nname: pdf\ndescription: Fill forms.\n---\n# PDF\n\nname: not this one\n";
        let out = renamed(text, "scale-000007").unwrap();
        assert_eq!(
            out,
            "---\nname: scale-000007\ndescription: Fill forms.\n---\n# PDF\n\nname: not this one\n"
        );
        assert!(renamed("# no frontmatter\n", "x").is_none());
        assert!(renamed("---\ndescription: d\n---\nname: body\n", "x").is_none());
    }

    #[test]
    fn a_renamed_skill_loads_under_its_folder_name() {
        let dir = tempfile::tempdir().unwrap();
        let corpus = dir.path().join("corpus");
        for (folder, text) in [
            (
                "a",
                "---\nname: a\ndescription: Fill PDF forms.\n---\n# A\n",
            ),
            ("b", "# no frontmatter\n"),
        ] {
            std::fs::create_dir_all(corpus.join(folder)).unwrap();
            std::fs::write(corpus.join(folder).join("SKILL.md"), text).unwrap();
        }
        let templates = templates(&corpus);
        assert_eq!(templates.len(), 1);
        let pack = dir.path().join("pack");
        std::fs::create_dir(&pack).unwrap();
        let (shards, bytes) = write_pack(&pack, &templates, 3).unwrap();
        assert_eq!(shards.len(), 1);
        assert!(bytes > 0);
        let sources = shards
            .iter()
            .map(|s| skill_registry::Source::new(s, "scale"))
            .collect();
        let config = skill_registry::RegistryConfig::with_sources(sources);
        let snapshot = skill_registry::load_snapshot(&config, 1);
        let names: Vec<_> = snapshot.skills().map(|s| s.name.clone()).collect();
        assert_eq!(names.len(), 3, "{:?}", snapshot.diagnostics());
        assert!(names.contains(&"scale-000002".to_owned()));
    }

    #[test]
    fn queries_are_percent_encoded_and_markers_differ() {
        assert_eq!(encode("pdf form & co/2"), "pdf%20form%20%26%20co%2F2");
        assert_ne!(marker(1), marker(27));
        assert!(marker(12345).chars().all(|c| c.is_ascii_lowercase()));
    }

    #[test]
    fn the_ready_line_gives_skills_and_address() {
        let line = "skill-server: 50000 skills (0 errors, 3 warnings) on http://127.0.0.1:40123/v1/ (OpenAPI at /v1/openapi.json)\n";
        let (n, addr) = ready_line(line).unwrap();
        assert_eq!(n, 50_000);
        assert_eq!(addr.port(), 40123);
        assert!(ready_line("error: boom").is_none());
    }

    #[test]
    fn percentiles_of_sorted_times() {
        let t: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&t, 0.50), Duration::from_millis(50));
        assert_eq!(percentile(&t, 0.99), Duration::from_millis(99));
        assert_eq!(percentile(&[], 0.99), Duration::ZERO);
    }
}
