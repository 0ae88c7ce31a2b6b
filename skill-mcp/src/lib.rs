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
//! Digests and the bytes served: `resources/read` hashes the bytes it reads and compares
//! them with the size and digest the listing gave. When they differ (the file changed on
//! disk after the snapshot, before the reload that will announce it), the bytes are served
//! as they are now and the contents carry `_meta` with `sha256` ([`SERVED_DIGEST_META`],
//! the `sha256:` digest of exactly those bytes) and `size` ([`SERVED_SIZE_META`]); a host
//! that checks digests compares with `_meta` when present. An unchanged file's contents
//! carry no `_meta`, and are kept in memory for the generation (up to a byte limit per
//! generation): the next reads of that file serve the listed bytes with no disk read and
//! no hash, as rmcp's catalog serves every file, until the reload builds the next listing.
//! With `require_lock` nothing is kept: every read is verified against the lock, and a
//! file changed since is refused (`lock_mismatch`).
//!
//! Tools render their answers with the `skill_runtime::wire` shapes the HTTP API uses
//! (`use_skill` is `ExecutedShape`, `search_skills` `SearchShape`, `execute`
//! `ResultsShape`; `select_skills` and `route` are the selection and routed output as HTTP
//! serializes them), so a question gets the same JSON over MCP as over HTTP.
//!
//! Errors follow the MCP specification: an unknown tool or malformed tool arguments are
//! `-32602` (Invalid params), and so are malformed params of any method rmcp knows (rmcp
//! hands such a request to the server as a custom one; an unknown method is `-32601`). A
//! message that cannot be read is answered, over stdio and at `/mcp` ([`http_mounted`],
//! with status `400`): bytes that are not JSON with `-32700` (Parse error), JSON that is
//! not a JSON-RPC message (a batch, a null or fractional `id`, a `method` that is not a
//! string, ...) with `-32600` (Invalid request), with its `id` when it could be read, else
//! null. A `resources/read` of a URI the server does not serve is resource-not-found,
//! with the URI in `data.uri` (`-32002` for clients on protocol 2025-11-25 and earlier,
//! `-32602` from 2026-07-28 on, SEP-2164; rmcp picks the code by the negotiated version).
//! At most [`DEFAULT_MAX_CALLS_IN_FLIGHT`] `tools/call` requests run at once per server
//! (over HTTP, [`McpLimits::max_calls_in_flight`]); one more is answered at once with
//! `-32000` and a message that the server is busy and to retry.
//!
//! Transports: [`serve_stdio`] (a host starts `skill-server mcp` as a subprocess; one
//! message per line, at most 16 MiB, a longer line answered `-32600` and skipped up to its
//! newline, the last message read with or without a newline after it; at the end of input
//! what is unwritten has [`STDIO_CLOSE_DRAIN`] to go out) and,
//! with the `http` feature, [`http_mounted`], what the server mounts at `/mcp` beside `/v1`:
//! the `Origin` check and [`McpLimits`] around [`http_service`], the tower service for
//! streamable HTTP.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

#[cfg(feature = "http")]
mod bare;
mod catalog;
mod jsonrpc;
#[cfg(feature = "http")]
mod mount;
#[cfg(feature = "http")]
mod origin;
mod server;
mod stdio;
mod tools;
mod trace;

use std::sync::Arc;

use skill_runtime::Engine;

#[cfg(feature = "http")]
pub use bare::HttpService;
pub use catalog::{MAX_BYTES_PER_SKILL, MAX_FILES_PER_SKILL, SCHEME};
#[cfg(feature = "http")]
pub use mount::{DEFAULT_MAX_SESSIONS, MAX_GET_STREAMS_PER_SESSION, McpLimits};
pub use server::{
    BUSY_ERROR_CODE, CACHE_TTL, DEFAULT_MAX_CALLS_IN_FLIGHT, McpConfig, RESOURCES_PAGE_SIZE,
    SERVED_DIGEST_META, SERVED_SIZE_META, SKILLS_PAGE_SIZE, SkillsServer,
};
pub use stdio::STDIO_CLOSE_DRAIN;
pub use tools::call as call_tool;

/// Why the MCP server stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The client could not be served (the handshake or the transport failed).
    #[error("MCP session failed: {0}")]
    Session(String),
}

/// Serve MCP over this process's standard input and output until the client closes its
/// input; answers not yet written then have [`STDIO_CLOSE_DRAIN`] to go out (a client that
/// no longer reads does not keep the server running).
pub async fn serve_stdio(engine: Arc<Engine>, config: McpConfig) -> Result<(), Error> {
    stdio::serve(
        SkillsServer::new(engine, config),
        tokio::io::stdin(),
        stdio::stdout(),
    )
    .await
}

/// rmcp's streamable HTTP service over a [`SkillsServer`].
#[cfg(feature = "http")]
type RmcpService = rmcp::transport::streamable_http_server::StreamableHttpService<
    SkillsServer,
    rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
>;

/// MCP over streamable HTTP (protocol 2026-07-28, stateless; clients on 2025-11-25 get a
/// session), as a tower service for any path prefix. `allowed_hosts` is the `Host`
/// allowlist (DNS-rebinding protection): empty keeps the SDK's loopback-only default, and
/// `["*"]` turns the SDK's check off (for a caller that checks `Host` itself, as
/// skill-http does). A request with an `Origin` header gets `403
/// forbidden_origin` unless `/mcp` would serve it (the `Origin` check of
/// [`http_mounted`], under the same list: loopback, same origin, a listed host; `"*"`: every origin); a
/// request without `Origin` is not affected. This bare service has none of [`McpLimits`]
/// but the default [`DEFAULT_MAX_CALLS_IN_FLIGHT`]: [`http_mounted`] has them.
#[cfg(feature = "http")]
pub fn http_service(
    engine: Arc<Engine>,
    config: McpConfig,
    allowed_hosts: Vec<String>,
) -> HttpService {
    let (inner, _) =
        http_service_with_sessions(SkillsServer::new(engine, config), allowed_hosts.clone());
    HttpService::new(inner, allowed_hosts)
}

/// rmcp's service and its session manager (to count the sessions open), over `server`,
/// with rmcp's `Host` check of `allowed_hosts` (see [`http_service`]).
#[cfg(feature = "http")]
fn http_service_with_sessions(
    server: SkillsServer,
    allowed_hosts: Vec<String>,
) -> (
    RmcpService,
    Arc<rmcp::transport::streamable_http_server::session::local::LocalSessionManager>,
) {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
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

/// The `/mcp` service [`http_mounted`] gives: a boxed, cloneable tower service over
/// requests with body `B`, answering with a boxed body and never failing.
#[cfg(feature = "http")]
pub type MountedMcp<B> = tower::util::BoxCloneSyncService<
    http::Request<B>,
    http::Response<
        http_body_util::combinators::UnsyncBoxBody<bytes::Bytes, std::convert::Infallible>,
    >,
    std::convert::Infallible,
>;

/// [`http_service`] as a boxed tower service over requests with any body `B`, to mount at
/// `/mcp` with skill-http's `Mounts::mount`: the same listener, request ids, token rules and
/// `Host` check as `/v1` (skill-http checks `Host` before a mounted service sees
/// a request, so rmcp's own check is off), and `limits` on bodies, sessions and tool calls
/// (see [`McpLimits`]). `allowed_hosts` is the server's
/// `HttpConfig::allowed_hosts`, the list
/// its `Host` check uses: a request with an `Origin` header is served only when the
/// origin's host is loopback (`127.0.0.0/8`, `::1`, `localhost`, `*.localhost`), the
/// request's own `Host`, or in that list (`"*"`: every origin); otherwise it gets `403
/// forbidden_origin` (DNS-rebinding protection for browsers). A request without `Origin`
/// is not affected.
#[cfg(feature = "http")]
pub fn http_mounted<B>(
    engine: Arc<Engine>,
    config: McpConfig,
    allowed_hosts: Vec<String>,
    limits: McpLimits,
) -> MountedMcp<B>
where
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let server =
        SkillsServer::new(engine, config).with_max_calls_in_flight(limits.max_calls_in_flight);
    let (service, sessions) = http_service_with_sessions(server, vec!["*".to_owned()]);
    let mount = Arc::new(mount::Mount {
        service,
        sessions,
        book: mount::SessionBook::default(),
    });
    let allowed_hosts: Arc<[String]> = allowed_hosts.into();
    tower::util::BoxCloneSyncService::new(tower::service_fn(move |req| {
        let mount = mount.clone();
        let allowed_hosts = allowed_hosts.clone();
        async move {
            Ok::<_, std::convert::Infallible>(
                mount::handle(&mount, limits, &allowed_hosts, req).await,
            )
        }
    }))
}
