//! `cargo xtask attack`: the reproductions of issue 46 as bounded, loopback-only scripts
//! against the release `skill-server`, each printing its own figures beside the server's
//! peak resident set and the p99 of `/v1/health` (probed every [`PROBE_EVERY`] on a new
//! connection) while it runs. Not part of `cargo test`: it builds the release server and
//! takes about a minute.
//!
//! Targets: peak RSS under [`RSS_TARGET_MIB`] and health p99 under [`HEALTH_P99_TARGET`]
//! through every reproduction (the scale one has its own, larger, RSS figure). Exit 1 when
//! a target is missed.

mod repro;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args as ClapArgs;

/// The server's peak resident set allowed through each reproduction.
const RSS_TARGET_MIB: f64 = 256.0;
/// The health probe's p99 allowed through each reproduction.
const HEALTH_P99_TARGET: Duration = Duration::from_millis(100);
/// How often health is probed.
const PROBE_EVERY: Duration = Duration::from_millis(20);
/// How often the server's resident set is read.
const RSS_EVERY: Duration = Duration::from_millis(5);
/// A probe or a read that takes longer counts as this long (and failed).
const IO_LIMIT: Duration = Duration::from_secs(5);

/// `cargo xtask attack` options.
#[derive(Debug, ClapArgs)]
pub struct AttackArgs {
    /// Seconds each flood lasts (clients that never read, headers a byte at a time).
    #[arg(long, default_value_t = 6)]
    pub(crate) seconds: u64,
    /// Generated skills for the scale reproduction (item 8); 0 skips it.
    #[arg(long, default_value_t = 50_000)]
    scale: usize,
    /// Connections sending their headers a byte at a time (item 7).
    #[arg(long, default_value_t = 4_200)]
    pub(crate) slow_connections: usize,
}

/// One reproduction's figures.
struct Row {
    name: &'static str,
    peak_mib: f64,
    p99: Duration,
    max: Duration,
    probes: usize,
    failed: usize,
    note: String,
}

/// The server under attack and its two watchers (resident set, health).
pub(crate) struct Target {
    pub(crate) addr: SocketAddr,
    child: Child,
    stop: Arc<AtomicBool>,
    peak_kib: Arc<AtomicU64>,
    probes: Arc<Mutex<Vec<Duration>>>,
    failed: Arc<AtomicU64>,
    watchers: Vec<std::thread::JoinHandle<()>>,
}

impl Target {
    /// Start `bin serve` over `skills` and its watchers; the time it took to listen.
    fn start(bin: &Path, skills: &[PathBuf]) -> Result<(Target, Duration), String> {
        let mut cmd = Command::new(bin);
        cmd.args(["serve", "--no-watch", "--listen", "127.0.0.1:0"]);
        for s in skills {
            cmd.arg("--skills").arg(s);
        }
        let started = Instant::now();
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
        let pid = child.id();
        let stop = Arc::new(AtomicBool::new(false));
        let peak_kib = Arc::new(AtomicU64::new(0));
        let sampler = {
            let (stop, peak) = (stop.clone(), peak_kib.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if let Some(kib) = crate::bench::read_rss_kib(pid) {
                        peak.fetch_max(kib, Ordering::Relaxed);
                    }
                    std::thread::sleep(RSS_EVERY);
                }
            })
        };
        let mut line = String::new();
        if let Some(out) = child.stdout.take() {
            let mut reader = BufReader::new(out);
            let _ = reader.read_line(&mut line);
            // Keep draining what it prints, so it never blocks on its output.
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut reader, &mut std::io::sink());
            });
        }
        let ready = started.elapsed();
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .and_then(|a| a.parse::<SocketAddr>().ok());
        let Some(addr) = addr else {
            stop.store(true, Ordering::Relaxed);
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("the server did not say where it listens: {line:?}"));
        };
        let probes = Arc::new(Mutex::new(Vec::new()));
        let failed = Arc::new(AtomicU64::new(0));
        let prober = {
            let (stop, probes, failed) = (stop.clone(), probes.clone(), failed.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let t = Instant::now();
                    let ok = health(addr);
                    let took = t.elapsed().min(IO_LIMIT);
                    if !ok {
                        failed.fetch_add(1, Ordering::Relaxed);
                    }
                    if let Ok(mut p) = probes.lock() {
                        p.push(if ok { took } else { IO_LIMIT });
                    }
                    std::thread::sleep(PROBE_EVERY.saturating_sub(took));
                }
            })
        };
        Ok((
            Target {
                addr,
                child,
                stop,
                peak_kib,
                probes,
                failed,
                watchers: vec![sampler, prober],
            },
            ready,
        ))
    }

    /// Start a new measurement: the peak from the current size, no probes.
    fn reset(&self) {
        let now = crate::bench::read_rss_kib(self.child.id()).unwrap_or(0);
        self.peak_kib.store(now, Ordering::Relaxed);
        if let Ok(mut p) = self.probes.lock() {
            p.clear();
        }
        self.failed.store(0, Ordering::Relaxed);
    }

    /// The figures since the last reset.
    fn row(&self, name: &'static str, note: String) -> Row {
        let mut probes = self.probes.lock().map(|p| p.clone()).unwrap_or_default();
        probes.sort();
        let at = |q: f64| {
            let i = ((probes.len() as f64 * q).ceil() as usize).saturating_sub(1);
            probes.get(i).copied().unwrap_or_default()
        };
        Row {
            name,
            peak_mib: self.peak_kib.load(Ordering::Relaxed) as f64 / 1024.0,
            p99: at(0.99),
            max: probes.last().copied().unwrap_or_default(),
            probes: probes.len(),
            failed: usize::try_from(self.failed.load(Ordering::Relaxed)).unwrap_or(0),
            note,
        }
    }

    /// The server's pid.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.child.kill();
        let _ = self.child.wait();
        for w in self.watchers.drain(..) {
            let _ = w.join();
        }
    }
}

/// One `GET /v1/health` on a new connection; whether it answered 200 within [`IO_LIMIT`].
fn health(addr: SocketAddr) -> bool {
    let Ok(mut s) = TcpStream::connect_timeout(&addr, IO_LIMIT) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(IO_LIMIT));
    let _ = s.set_write_timeout(Some(IO_LIMIT));
    if s.write_all(b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    buf.starts_with(b"HTTP/1.1 200")
}

/// Run every reproduction and print the table.
pub fn run(args: &AttackArgs) -> Result<ExitCode, String> {
    let bin = crate::bench::release_server()?;
    let dir = tempfile::Builder::new()
        .prefix("xtask-attack-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let sources = repro::write_skills(dir.path())?;
    let mut rows = Vec::new();
    let (target, ready) = Target::start(&bin, &sources)?;
    // Item 1 is measured at the start: the alias files are read then.
    std::thread::sleep(Duration::from_millis(300));
    rows.push(target.row(
        "1 YAML aliases (8 files) at start",
        format!(
            "listening after {} ms; {}",
            ready.as_millis(),
            repro::aliases_excluded(target.addr)
        ),
    ));
    type Repro = fn(&Target, &Path, &AttackArgs) -> String;
    let steps: [(&'static str, Repro); 5] = [
        ("2 outline of a 4 MiB heading file", repro::outline),
        (
            "3 1 MiB answers, clients that never read",
            repro::amplification,
        ),
        ("4 MCP duplicate ids, GET streams", repro::mcp),
        ("6 process limit (fork loop)", repro::processes),
        ("7 headers a byte at a time", repro::slow_headers),
    ];
    for (name, step) in steps {
        target.reset();
        let note = step(&target, dir.path(), args);
        rows.push(target.row(name, note));
    }
    drop(target);
    rows.push(Row {
        name: "5 stdio: stdin closed, output unread",
        peak_mib: 0.0,
        p99: Duration::ZERO,
        max: Duration::ZERO,
        probes: 0,
        failed: 0,
        note: repro::stdio(&bin, &sources),
    });
    let scale = if args.scale > 0 {
        Some(repro::scale(&bin, dir.path(), args.scale)?)
    } else {
        None
    };
    let missed = print(&rows);
    if let Some(line) = scale {
        println!("8 scale: {line}");
    }
    Ok(if missed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Print the rows; whether a target was missed.
fn print(rows: &[Row]) -> bool {
    let mut missed = false;
    println!(
        "{:<44} {:>9} {:>9} {:>9} {:>7}  figures",
        "reproduction", "peak RSS", "health99", "max", "probes"
    );
    for r in rows {
        let ok = r.peak_mib < RSS_TARGET_MIB && r.p99 < HEALTH_P99_TARGET;
        missed |= !ok;
        println!(
            "{:<44} {:>6.1} MiB {:>6.1} ms {:>6.1} ms {:>4}/{:<3} {} {}",
            r.name,
            r.peak_mib,
            r.p99.as_secs_f64() * 1e3,
            r.max.as_secs_f64() * 1e3,
            r.probes - r.failed,
            r.probes,
            if ok { "ok" } else { "MISSED" },
            r.note
        );
    }
    println!(
        "targets: peak RSS < {RSS_TARGET_MIB} MiB and health p99 < {} ms in every row (probes: answered/sent)",
        HEALTH_P99_TARGET.as_millis()
    );
    missed
}
