//! Fixtures: the bundled packs in a temporary folder, an engine over them, and an rmcp
//! client connected to a `SkillsServer` through an in-process duplex.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::model::{ResourceContents, SkillResources};
use rmcp::service::RunningService;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use skill_mcp::{McpConfig, SkillsServer};
use skill_runtime::registry::{RegistryConfig, Source};
use skill_runtime::{Engine, EngineConfig};
use tokio::sync::mpsc;

/// The packs served (every bundled pack but `broken`).
pub const PACKS: &[&str] = &["actions", "agentskills", "lily", "pegasus", "toolsets"];

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A copy of the bundled packs and an engine over it (no watcher: reloads are explicit).
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub engine: Arc<Engine>,
}

impl Fixture {
    pub fn new() -> Fixture {
        let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let dir = tempfile::tempdir().unwrap();
        let mut sources = Vec::new();
        for (i, pack) in PACKS.iter().enumerate() {
            copy_dir(&repo.join("packs").join(pack), &dir.path().join(pack));
            sources.push(Source::new(dir.path().join(pack), format!("layer{i}")));
        }
        let mut config = EngineConfig::new(RegistryConfig::with_sources(sources));
        config.watch = None;
        config.schedule = None;
        let engine = Engine::start(config).unwrap();
        Fixture { dir, engine }
    }

    pub fn server(&self) -> SkillsServer {
        SkillsServer::new(self.engine.clone(), McpConfig::default())
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
}

/// A client that reports list-changed notifications on a channel.
#[derive(Clone)]
pub struct Listener {
    pub changes: mpsc::UnboundedSender<&'static str>,
}

impl ClientHandler for Listener {
    async fn on_resource_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        let _ = self.changes.send("resources");
    }

    async fn on_prompt_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        let _ = self.changes.send("prompts");
    }
}

pub type Client = RunningService<RoleClient, Listener>;

/// Connect rmcp's client to the server through a duplex byte stream.
pub async fn connect(server: SkillsServer) -> (Client, mpsc::UnboundedReceiver<&'static str>) {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let (tx, rx) = mpsc::unbounded_channel();
    let client = Listener { changes: tx }.serve(client_io).await.unwrap();
    (client, rx)
}

/// The bytes of a read result (text or base64 blob).
pub fn bytes_of(contents: &ResourceContents) -> Vec<u8> {
    match contents {
        ResourceContents::TextResourceContents { text, .. } => text.as_bytes().to_vec(),
        ResourceContents::BlobResourceContents { blob, .. } => decode_base64(blob),
        _ => Vec::new(),
    }
}

fn decode_base64(s: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            _ => 63,
        }
    };
    let clean: Vec<u8> = s.bytes().filter(|&b| b != b'=').collect();
    let mut out = Vec::new();
    for chunk in clean.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= value(c) << (18 - 6 * i);
        }
        for i in 0..chunk.len().saturating_sub(1) {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    out
}

/// List every skill, read every file of every skill and check size and digest against the
/// entry; returns (skills, files) read.
pub async fn read_everything(client: &rmcp::service::Peer<RoleClient>) -> (usize, usize) {
    let skills = client.list_all_skills().await.unwrap();
    let mut files = 0;
    for skill in &skills {
        skill.validate().unwrap();
        let SkillResources::Files(list) = &skill.resources else {
            panic!("{} is dynamic", skill.uri);
        };
        for file in list {
            let read = client
                .read_resource(rmcp::model::ReadResourceRequestParams::new(
                    file.uri.clone(),
                ))
                .await
                .unwrap();
            assert_eq!(read.contents.len(), 1, "{}", file.uri);
            let bytes = bytes_of(&read.contents[0]);
            file.verify(&bytes).unwrap();
            files += 1;
        }
    }
    (skills.len(), files)
}

/// A running server: its address, the sender that stops it, and its task.
pub type Served = (
    std::net::SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<Result<(), skill_runtime::Error>>,
);

/// A loopback server of `engine` with `/mcp` mounted under `limits`, and `config` (its
/// `allowed_hosts` also given to the mount, for `Host` and `Origin`).
pub async fn serve_mcp(
    engine: &Arc<Engine>,
    limits: skill_mcp::McpLimits,
    config: skill_http::HttpConfig,
) -> Served {
    use skill_http::App;
    let (listener, addr) = skill_http::bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let mount = App::mounts().mount(
        "/mcp",
        skill_mcp::http_mounted(
            engine.clone(),
            McpConfig::default(),
            config.allowed_hosts.clone(),
            limits,
        ),
    );
    let app = App::with_mounts(engine.clone(), config, mount);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(skill_http::serve(listener, app, async {
        let _ = stopped.await;
    }));
    (addr, stop, server)
}
