//! `skill-mcp`: the skills engine as a Model Context Protocol server, built on the
//! official Rust SDK (`rmcp`).
//!
//! One more door over [`skill_runtime::Engine`]: every answer comes from an Engine
//! operation, the same ones HTTP and the CLI call. It serves
//!
//! - the skills extension (SEP-2640, `io.modelcontextprotocol/skills` with
//!   `directoryRead`): `skills/list` (paginated, entries never split), `skills/get`,
//!   `resources/read` for every file of every served skill, `resources/directory/read`,
//!   `skill://<path>/SKILL.md` URIs ending in the skill's name, the frontmatter exactly as
//!   written, and each file's size and `sha256:` digest from the registry's per-snapshot
//!   manifest (`Engine::skill_files`; nothing is hashed here when the catalog is built);
//! - tools (`get_skill`, `load_skill`, `use_skill`, `search_skills`, `select_skills`,
//!   `route`, `execute`) and user-invocable skills as prompts;
//! - `notifications/resources/list_changed` (and prompts) when the registry reloads: to a
//!   session's peer, and to `subscriptions/listen` on protocol 2026-07-28.
//!
//! Digests and the bytes served: `resources/read` hashes the bytes it serves and compares
//! them with the size and digest the listing gave. When they differ (the file changed on
//! disk after the snapshot, before the reload that will announce it), the bytes are served
//! as they are now and the contents carry `_meta` with `sha256` ([`SERVED_DIGEST_META`],
//! the `sha256:` digest of exactly those bytes) and `size` ([`SERVED_SIZE_META`]); a host
//! that checks digests compares with `_meta` when present. An unchanged file's contents
//! carry no `_meta`.
//!
//! Tools render their answers with the `skill_runtime::wire` shapes the HTTP API uses
//! (`use_skill` is `ExecutedShape`, `search_skills` `SearchShape`, `execute`
//! `ResultsShape`; `select_skills` and `route` are the selection and routed output as HTTP
//! serializes them), so a question gets the same JSON over MCP as over HTTP.
//!
//! Transports: [`serve_stdio`] (a host starts `skill-server mcp` as a subprocess) and,
//! with the `http` feature, [`http_service`], a tower service for streamable HTTP that the
//! server mounts at `/mcp` beside `/v1`.

#![deny(missing_docs)]

mod catalog;
#[cfg(feature = "http")]
mod mount;
mod server;
mod tools;

use std::sync::Arc;

use skill_runtime::Engine;

pub use catalog::{MAX_BYTES_PER_SKILL, MAX_FILES_PER_SKILL, SCHEME};
#[cfg(feature = "http")]
pub use mount::{DEFAULT_MAX_SESSIONS, McpLimits};
pub use server::{
    CACHE_TTL, McpConfig, RESOURCES_PAGE_SIZE, SERVED_DIGEST_META, SERVED_SIZE_META,
    SKILLS_PAGE_SIZE, SkillsServer,
};
pub use tools::MAX_SEARCH_LIMIT;

/// Why the MCP server stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The client could not be served (the handshake or the transport failed).
    #[error("MCP session failed: {0}")]
    Session(String),
}

/// Serve MCP over this process's standard input and output until the client closes it.
pub async fn serve_stdio(engine: Arc<Engine>, config: McpConfig) -> Result<(), Error> {
    use rmcp::ServiceExt;
    let server = SkillsServer::new(engine, config);
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| Error::Session(e.to_string()))?;
    running
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| Error::Session(e.to_string()))
}

/// The streamable HTTP service type [`http_service`] returns.
#[cfg(feature = "http")]
pub type HttpService = rmcp::transport::streamable_http_server::StreamableHttpService<
    SkillsServer,
    rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
>;

/// MCP over streamable HTTP (protocol 2026-07-28, stateless; clients on 2025-11-25 get a
/// session), as a tower service for any path prefix. `allowed_hosts` is the `Host`
/// allowlist (DNS-rebinding protection): empty keeps the SDK's loopback-only default, and
/// `["*"]` turns the SDK's check off (for a caller that checks `Host` itself, as
/// `skill_runtime::http` does).
#[cfg(feature = "http")]
pub fn http_service(
    engine: Arc<Engine>,
    config: McpConfig,
    allowed_hosts: Vec<String>,
) -> HttpService {
    http_service_with_sessions(engine, config, allowed_hosts).0
}

/// [`http_service`] and its session manager (to count the sessions open).
#[cfg(feature = "http")]
fn http_service_with_sessions(
    engine: Arc<Engine>,
    config: McpConfig,
    allowed_hosts: Vec<String>,
) -> (
    HttpService,
    Arc<rmcp::transport::streamable_http_server::session::local::LocalSessionManager>,
) {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let server = SkillsServer::new(engine, config);
    let mut http = StreamableHttpServerConfig::default();
    http.legacy_session_mode = true;
    http.json_response = true;
    if allowed_hosts.iter().any(|h| h == "*") {
        // rmcp allows every host when its list is empty.
        http.allowed_hosts.clear();
    } else if !allowed_hosts.is_empty() {
        http.allowed_hosts = allowed_hosts;
    }
    let sessions = Arc::new(
        rmcp::transport::streamable_http_server::session::local::LocalSessionManager::default(),
    );
    let service =
        StreamableHttpService::new(move || Ok(server.for_session()), sessions.clone(), http);
    (service, sessions)
}

/// [`http_service`] as a [`skill_runtime::http::MountedService`], to mount at `/mcp` with
/// [`skill_runtime::http::Mounts::mount`]: the same listener, request ids and token rules as
/// `/v1`, and `limits` on bodies and sessions (see [`McpLimits`]).
#[cfg(feature = "http")]
pub fn http_mounted(
    engine: Arc<Engine>,
    config: McpConfig,
    allowed_hosts: Vec<String>,
    limits: McpLimits,
) -> skill_runtime::http::MountedService {
    let (service, sessions) = http_service_with_sessions(engine, config, allowed_hosts);
    tower::util::BoxCloneSyncService::new(tower::service_fn(move |req| {
        let service = service.clone();
        let sessions = sessions.clone();
        async move {
            Ok::<_, std::convert::Infallible>(mount::handle(&service, &sessions, limits, req).await)
        }
    }))
}
