//! The cost of telemetry on `Engine::select`, as ratios, in one run:
//! `cargo bench -p skill-server --bench otel_select`.
//!
//! The `otel` feature changes only the subscriber the server installs (the libraries emit
//! the same `tracing` spans and events either way), so one process measures every case:
//! - `no subscriber`: nothing listens (a library host that installs no subscriber);
//! - `otel off`: the server's stderr log layer alone, which is what a build without the
//!   feature runs, and what a build with it runs when no OTLP endpoint is set (idle);
//! - `otel active`: the log layer plus the OpenTelemetry span and metrics layers exporting
//!   to a loopback OTLP/HTTP receiver.
//!
//! The parent process starts the receiver and re-runs this binary as a child with
//! `OTEL_EXPORTER_OTLP_ENDPOINT` pointed at it (the exporter reads the environment). The
//! cases run in alternating rounds so background load hits them alike; each figure is the
//! median over rounds of the mean `select` latency of a round.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::convert::Infallible;
use std::path::Path;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use skill_runtime::registry::{RegistryConfig, Source};
use skill_runtime::search::SelectOptions;
use skill_runtime::{Engine, EngineConfig};
use skill_server::telemetry::{OtelSettings, Telemetry};

const CHILD_ENV: &str = "SKILLS_OTEL_BENCH_CHILD";
const ROUNDS: usize = 15;
const SELECTS_PER_ROUND: usize = 200;
const MESSAGES: [&str; 8] = [
    "fill in the fields of this pdf form",
    "send an email to dana about the budget",
    "what is on my calendar tomorrow",
    "search my tasks for the report",
    "summarise this document for me",
    "create a workflow that runs every morning",
    "what's the weather like",
    "thanks, that is all",
];

fn main() {
    if std::env::var_os(CHILD_ENV).is_some() {
        child();
    } else {
        parent();
    }
}

fn parent() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    rt.spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let service = service_fn(|req: hyper::Request<hyper::body::Incoming>| async move {
                    let _ = req.into_body().collect().await;
                    Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::new())))
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .env(CHILD_ENV, "1")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{addr}"))
        .env("OTEL_BSP_SCHEDULE_DELAY", "200")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "1000")
        .env_remove("RUST_LOG")
        .status()
        .unwrap();
    assert!(status.success());
}

fn child() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let sources = ["agentskills", "actions", "lily", "pegasus", "toolsets"]
        .iter()
        .enumerate()
        .map(|(i, p)| Source::new(repo.join("packs").join(p), format!("layer{}", i + 1)))
        .collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let _enter = rt.enter();
    let mut config = EngineConfig::new(RegistryConfig::with_sources(sources));
    config.watch = None;
    config.schedule = None;
    let engine = Engine::start(config).unwrap();
    let options = SelectOptions::default();
    let env = |k: &str| std::env::var(k).ok();

    let none = tracing::Dispatch::none();
    let (off, off_telemetry) =
        Telemetry::build("warn", false, &OtelSettings::default(), rt.handle());
    let settings = OtelSettings::from_env(&env);
    assert!(settings.traces && settings.metrics, "{settings:?}");
    let (active, active_telemetry) = Telemetry::build("warn", false, &settings, rt.handle());
    assert!(active_telemetry.exporting());

    let cases = [
        ("no subscriber", &none),
        ("otel off (idle)", &off),
        ("otel active", &active),
    ];
    let mut means: Vec<Vec<Duration>> = vec![Vec::new(); cases.len()];
    let round = |record: bool, means: &mut Vec<Vec<Duration>>| {
        for (i, (_, dispatch)) in cases.iter().enumerate() {
            let took = tracing::dispatcher::with_default(dispatch, || {
                let started = Instant::now();
                for n in 0..SELECTS_PER_ROUND {
                    let s = engine
                        .select(MESSAGES[n % MESSAGES.len()], &options)
                        .unwrap();
                    std::hint::black_box(s);
                }
                started.elapsed() / SELECTS_PER_ROUND as u32
            });
            if record {
                means[i].push(took);
            }
        }
    };
    round(false, &mut means);
    for _ in 0..ROUNDS {
        round(true, &mut means);
    }
    let medians: Vec<Duration> = means
        .iter_mut()
        .map(|m| {
            m.sort();
            m[m.len() / 2]
        })
        .collect();
    println!("select latency, median of {ROUNDS} rounds x {SELECTS_PER_ROUND} selects (packs/*):");
    for ((name, _), median) in cases.iter().zip(&medians) {
        println!(
            "  {name:<18} {:>9.1} us   ratio to otel off: {:.3}",
            median.as_secs_f64() * 1e6,
            median.as_secs_f64() / medians[1].as_secs_f64()
        );
    }
    active_telemetry.shutdown();
    off_telemetry.shutdown();
}
