//! `bench mcp`: `resources/read` latency of our MCP server against rmcp's own `SkillCatalog`
//! (rmcp's SEP-2640 reference server) on the same folder, in one run (issue 47).
//!
//! Both servers serve `--dir` (default: the bundled `packs/agentskills`, whose skills are
//! folders as both read them), each over an in-process duplex stream to rmcp's client (the
//! byte stream stdio uses, so no socket noise). Each lists its skills, then every file of
//! its listing is read in passes that alternate between the servers (one untimed warm-up
//! pass each), so background load hits both alike. Every read is timed on its own; the rows
//! are each server's p50 and p99 over all timed reads. Every read is checked against its
//! listed size and digest (a wrong one is an error row). The client's response cache is off,
//! so every read reaches its server. Target: our p50 at most rmcp's.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args as ClapArgs;
use rmcp::handler::server::skill_catalog::SkillCatalog;
use rmcp::model::{
    GetSkillRequestParams, GetSkillResult, ListSkillsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ResourceContents, ServerCapabilities,
    ServerConfig, SkillResource, SkillResources,
};
use rmcp::service::{RequestContext, RoleClient, RoleServer, RunningService};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use skill_mcp::{McpConfig, SkillsServer};
use skill_runtime::registry::{RegistryConfig, Source};
use skill_runtime::{Engine, EngineConfig};

use super::Table;
use crate::process::repo_root;

/// Our p50 over rmcp's (the target: at most rmcp's).
const P50_RATIO_TARGET: f64 = 1.0;
/// Default timed passes over every file.
const DEFAULT_PASSES: usize = 20;

/// Command-line arguments of `bench mcp`.
#[derive(Debug, Clone, ClapArgs)]
pub struct Args {
    /// The folder both servers serve (default: `packs/agentskills`).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Timed passes over every file of each server.
    #[arg(long, default_value_t = DEFAULT_PASSES, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    passes: usize,
}

impl Default for Args {
    fn default() -> Self {
        Args {
            dir: None,
            passes: DEFAULT_PASSES,
        }
    }
}

/// rmcp's `SkillCatalog` behind the handler its documentation shows.
#[derive(Clone)]
struct RmcpPeer {
    skills: Arc<SkillCatalog>,
}

impl ServerHandler for RmcpPeer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_resources()
                .enable_skills_with_directory_read()
                .build(),
        )
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        Ok(self.skills.list_skills())
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        self.skills.get_skill(&request.uri)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.skills
            .read_resource(&request.uri)
            .map(Into::into)
            .ok_or_else(|| ErrorData::resource_not_found(request.uri, None))
    }
}

type Client = RunningService<RoleClient, ()>;

/// A client connected to `server` over an in-process duplex stream.
async fn connect<S: ServerHandler>(server: S) -> Result<Client, String> {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_io).await.map_err(|e| e.to_string())?;
    // rmcp's client keeps read answers for the `ttlMs` a server states (ours states one,
    // rmcp's catalog none): with its cache on, our reads would be answered by the client
    // and never reach the server. Every read here goes to its server.
    client
        .peer()
        .set_response_cache_config(rmcp::ClientCacheConfig::disabled())
        .await;
    Ok(client)
}

/// Every file of every skill the client's server lists.
async fn files_of(client: &Client) -> Result<Vec<SkillResource>, String> {
    let skills = client
        .list_all_skills()
        .await
        .map_err(|e| format!("skills/list: {e}"))?;
    Ok(skills
        .into_iter()
        .flat_map(|s| match s.resources {
            SkillResources::Files(files) => files,
            _ => Vec::new(),
        })
        .collect())
}

fn bytes_of(contents: &ResourceContents) -> Result<Vec<u8>, String> {
    use base64::Engine as _;
    match contents {
        ResourceContents::TextResourceContents { text, .. } => Ok(text.as_bytes().to_vec()),
        ResourceContents::BlobResourceContents { blob, .. } => {
            base64::engine::general_purpose::STANDARD
                .decode(blob)
                .map_err(|e| e.to_string())
        }
        _ => Err("contents neither text nor blob".to_owned()),
    }
}

/// One pass: every file read once, each read timed; the bytes checked after the clock.
async fn pass(
    client: &Client,
    files: &[SkillResource],
    times: &mut Vec<Duration>,
) -> Result<u64, String> {
    let mut bytes = 0;
    for file in files {
        let started = Instant::now();
        let read = client
            .read_resource(ReadResourceRequestParams::new(file.uri.clone()))
            .await;
        times.push(started.elapsed());
        let read = read.map_err(|e| format!("{}: {e}", file.uri))?;
        let data = read
            .contents
            .first()
            .ok_or_else(|| format!("{}: no contents", file.uri))
            .and_then(bytes_of)?;
        file.verify(&data)
            .map_err(|e| format!("{}: {e}", file.uri))?;
        bytes += data.len() as u64;
    }
    Ok(bytes)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

struct Measured {
    files: usize,
    bytes: u64,
    ours: Vec<Duration>,
    theirs: Vec<Duration>,
}

async fn measure(dir: PathBuf, passes: usize) -> Result<Measured, String> {
    let mut config = EngineConfig::new(RegistryConfig::with_sources(vec![Source::new(
        dir.clone(),
        "project",
    )]));
    config.watch = None;
    config.schedule = None;
    let engine = Engine::start(config).map_err(|e| e.to_string())?;
    let ours = connect(SkillsServer::new(engine, McpConfig::default())).await?;
    let catalog = tokio::task::spawn_blocking(move || SkillCatalog::from_dir(dir))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    let theirs = connect(RmcpPeer {
        skills: Arc::new(catalog),
    })
    .await?;
    let our_files = files_of(&ours).await?;
    let their_files = files_of(&theirs).await?;
    if our_files.is_empty() || their_files.is_empty() {
        return Err(format!(
            "nothing to read: {} files served by ours, {} by rmcp's",
            our_files.len(),
            their_files.len()
        ));
    }
    let mut m = Measured {
        files: our_files.len().min(their_files.len()),
        bytes: 0,
        ours: Vec::new(),
        theirs: Vec::new(),
    };
    // Warm-up: one untimed pass each (our first reads also fill our kept contents).
    pass(&theirs, &their_files, &mut Vec::new()).await?;
    pass(&ours, &our_files, &mut Vec::new()).await?;
    for _ in 0..passes {
        pass(&theirs, &their_files, &mut m.theirs).await?;
        m.bytes = pass(&ours, &our_files, &mut m.ours).await?;
    }
    let _ = ours.cancel().await;
    let _ = theirs.cancel().await;
    m.ours.sort_unstable();
    m.theirs.sort_unstable();
    Ok(m)
}

/// Run the benchmark.
pub fn run(args: &Args, table: &mut Table) -> Result<(), String> {
    let dir = match &args.dir {
        Some(d) => d.clone(),
        None => repo_root()?.join("packs").join("agentskills"),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let name = format!("mcp resources/read: {}", dir.display());
    let m = match runtime.block_on(measure(dir, args.passes)) {
        Ok(m) => m,
        Err(e) => {
            table.error(&name, e);
            return Ok(());
        }
    };
    let reads = m.ours.len();
    let p50 = table.baseline(
        "mcp resources/read p50, rmcp SkillCatalog",
        1,
        0,
        percentile(&m.theirs, 0.5),
    );
    table.compared(
        "mcp resources/read p50, ours",
        1,
        0,
        percentile(&m.ours, 0.5),
        p50,
        P50_RATIO_TARGET,
    );
    let p99 = table.baseline(
        "mcp resources/read p99, rmcp SkillCatalog",
        1,
        0,
        percentile(&m.theirs, 0.99),
    );
    table.compared(
        "mcp resources/read p99, ours (information)",
        1,
        0,
        percentile(&m.ours, 0.99),
        p99,
        f64::INFINITY,
    );
    table.note(format!(
        "mcp: {} files ({} bytes a pass of ours), {reads} timed reads a server, each verified against its listed size and digest",
        m.files, m.bytes
    ));
    Ok(())
}
