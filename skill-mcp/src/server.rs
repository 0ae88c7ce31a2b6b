//! The MCP server handler: capabilities, the skills extension (`skills/list`,
//! `skills/get`, `resources/read`, `resources/directory/read`), resources, tools, prompts
//! and change notifications, each answered from the catalog or an Engine operation.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, GetSkillRequestParams,
    GetSkillResult, Implementation, JsonObject, ListPromptsResult, ListResourcesResult,
    ListSkillsResult, ListToolsResult, MetaObject, PaginatedRequestParams, Prompt, PromptArgument,
    PromptMessage, ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ResourceContents, Role,
    ServerCapabilities, ServerConfig, ServerNotification, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler};
use skill_runtime::wire::limits;
use skill_runtime::{Engine, Event};

use crate::catalog::{Catalog, FileRef, digest_text};
use crate::{tools, trace};

/// Most path segments of a `skill://` URI asked about when it is not served, to find an
/// excluded skill it names (a skill's folders are seldom this deep; a longer URI is
/// answered "not found" after that many lookups).
const MAX_URI_SEGMENTS_ASKED: usize = 8;

/// Skills per `skills/list` page (an entry is never split across pages).
pub const SKILLS_PAGE_SIZE: usize = 100;
/// Resources per `resources/list` and `resources/directory/read` page.
pub const RESOURCES_PAGE_SIZE: usize = 500;
/// How long a host may treat a listing, entry or file as current (the server also
/// announces every change with `notifications/resources/list_changed`).
pub const CACHE_TTL: Duration = Duration::from_secs(60);
/// Default most `tools/call` requests a server runs at once, over all its sessions (over
/// HTTP, `McpLimits::max_calls_in_flight` sets it). A call may run a skill's script (up to
/// `MAX_SCRIPT_PROCESSES`, 64 processes, for up to the script timeout), so calls in flight
/// are scripts in flight: 32 is several agents' parallel tool calls at once, and bounds the
/// worst case at 2,048 script processes; one more is answered at once with
/// [`BUSY_ERROR_CODE`] (the client retries), never queued.
pub const DEFAULT_MAX_CALLS_IN_FLIGHT: usize = 32;
/// The JSON-RPC error code of a `tools/call` refused because
/// [`DEFAULT_MAX_CALLS_IN_FLIGHT`] (or the configured limit) calls are running (the
/// implementation-defined server-error range); its message says to retry.
pub const BUSY_ERROR_CODE: i32 = -32000;

/// Settings of one MCP server.
#[derive(Debug, Clone, Default)]
pub struct McpConfig {
    /// The profile whose view is served (affinity exclusions, tools); `None`: no profile.
    pub profile: Option<String>,
}

/// The `_meta` key of a read whose bytes differ from the listed manifest: the `sha256:`
/// digest of the bytes served.
pub const SERVED_DIGEST_META: &str = "sha256";
/// The `_meta` key of a read whose bytes differ from the listed manifest: their size.
pub const SERVED_SIZE_META: &str = "size";

/// `None` when the bytes are the ones the manifest lists (size and SHA-256, both from the
/// registry's snapshot); otherwise the file changed since the snapshot, and the result
/// carries the digest and size of exactly the bytes served.
fn served_meta(file: &FileRef, bytes: &[u8]) -> Option<MetaObject> {
    let sha256 = skill_runtime::Sha256::of(bytes);
    if bytes.len() as u64 == file.size && sha256 == file.sha256 {
        return None;
    }
    let mut meta = JsonObject::new();
    meta.insert(
        SERVED_DIGEST_META.to_owned(),
        serde_json::Value::String(digest_text(&sha256)),
    );
    meta.insert(SERVED_SIZE_META.to_owned(), serde_json::json!(bytes.len()));
    Some(MetaObject(meta))
}

/// How often a session's change listener checks that its session is still open (it
/// also ends at the first notification that cannot be sent).
const LISTENER_CHECK: Duration = Duration::from_secs(5);

/// The engine as an MCP server. Cheap to clone: clones share the engine, the catalog and
/// the session's state (the HTTP transport gives each new session its own).
#[derive(Clone)]
pub struct SkillsServer {
    engine: Arc<Engine>,
    config: Arc<McpConfig>,
    catalog: Arc<Mutex<Option<Arc<Catalog>>>>,
    /// Whether this session's change listener was started (one per session, however many
    /// `notifications/initialized` the client sends).
    listening: Arc<std::sync::atomic::AtomicBool>,
    /// The `tools/call` slots, shared by every session of the server.
    calls: Arc<tokio::sync::Semaphore>,
    /// How many slots `calls` has (for the busy message).
    max_calls: usize,
}

impl std::fmt::Debug for SkillsServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillsServer")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

fn invalid_cursor(cursor: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("`{cursor}` is not a cursor this server gave out"),
        None,
    )
}

/// The offset a cursor stands for (cursors are offsets in decimal).
fn offset(request: Option<&PaginatedRequestParams>) -> Result<usize, ErrorData> {
    match request.and_then(|r| r.cursor.as_deref()) {
        None => Ok(0),
        Some(c) => c.parse().map_err(|_| invalid_cursor(c)),
    }
}

fn next_cursor(end: usize, total: usize) -> Option<String> {
    (end < total).then(|| end.to_string())
}

fn ttl_ms() -> u64 {
    u64::try_from(CACHE_TTL.as_millis()).unwrap_or(u64::MAX)
}

/// A `resources/read` answer of one file's contents, cacheable for [`CACHE_TTL`].
fn read_result(contents: ResourceContents) -> ReadResourceResult {
    let mut result = ReadResourceResult::new(vec![contents]);
    result.ttl_ms = Some(ttl_ms());
    result.cache_scope = Some(CacheScope::Private);
    result
}

impl SkillsServer {
    /// A server over the engine.
    pub fn new(engine: Arc<Engine>, config: McpConfig) -> Self {
        SkillsServer {
            engine,
            config: Arc::new(config),
            catalog: Arc::new(Mutex::new(None)),
            listening: Arc::new(std::sync::atomic::AtomicBool::new(false)),
            calls: Arc::new(tokio::sync::Semaphore::new(DEFAULT_MAX_CALLS_IN_FLIGHT)),
            max_calls: DEFAULT_MAX_CALLS_IN_FLIGHT,
        }
    }

    /// This server with at most `max` `tools/call` requests at once (at least 1), over all
    /// its sessions.
    #[cfg(feature = "http")]
    pub(crate) fn with_max_calls_in_flight(mut self, max: usize) -> Self {
        let max = max.clamp(1, tokio::sync::Semaphore::MAX_PERMITS);
        self.calls = Arc::new(tokio::sync::Semaphore::new(max));
        self.max_calls = max;
        self
    }

    /// A server for a new session: the same engine, settings and catalog, and session state
    /// of its own (HTTP sessions; stdio has one).
    #[cfg(feature = "http")]
    pub(crate) fn for_session(&self) -> Self {
        SkillsServer {
            listening: Arc::new(std::sync::atomic::AtomicBool::new(false)),
            ..self.clone()
        }
    }

    /// The engine it serves.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    pub(crate) fn profile(&self) -> Option<&str> {
        self.config.profile.as_deref()
    }

    /// The catalog of the current generation (built on first use after a reload).
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        let generation = self.engine.generation();
        let mut slot = match self.catalog.lock() {
            Ok(slot) => slot,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(c) = slot.as_ref().filter(|c| c.generation == generation) {
            return c.clone();
        }
        let built = Arc::new(Catalog::build(&self.engine, self.profile()));
        for (name, reason) in &built.skipped {
            tracing::debug!(skill = %name, %reason, "not served over the skills extension");
        }
        *slot = Some(built.clone());
        built
    }

    /// Number of skills and files the extension serves now (for benches and logs).
    pub fn served_counts(&self) -> (usize, usize) {
        let c = self.catalog();
        (c.skills.len(), c.file_count())
    }

    /// Skills the extension leaves out now, each with the reason.
    pub fn skipped(&self) -> Vec<(String, String)> {
        self.catalog().skipped.clone()
    }

    fn read(&self, uri: &str) -> Result<ReadResourceResult, ErrorData> {
        let catalog = self.catalog();
        // The specification's resource-not-found: rmcp sends it as -32002 to clients on
        // 2025-11-25 and earlier and as -32602 from 2026-07-28 on (SEP-2164).
        let not_found = || {
            ErrorData::resource_not_found(
                format!("no resource is served at {uri}"),
                Some(serde_json::json!({ "uri": uri })),
            )
        };
        let Some(file) = catalog.file(uri) else {
            return Err(self.excluded_at(uri).unwrap_or_else(not_found));
        };
        if let Some(contents) = file.kept.get() {
            return Ok(read_result(contents.clone()));
        }
        let skill = &catalog.skills[file.skill];
        let bytes = self
            .engine
            .skill_file(&skill.name, self.profile(), &file.relative)
            .map_err(|e| {
                // The engine's stable code (`lock_mismatch`, ...) rides in the error's data.
                let data = serde_json::json!({ "uri": uri, "code": e.code() });
                ErrorData::internal_error(format!("cannot read {uri}: {e}"), Some(data))
            })?;
        let meta = served_meta(file, &bytes);
        let contents = match String::from_utf8(bytes) {
            Ok(text) => ResourceContents::text(text, uri),
            Err(e) => ResourceContents::blob(base64_encode(e.as_bytes()), uri),
        };
        let contents = contents.with_mime_type(file.mime);
        let contents = match meta {
            Some(meta) => contents.with_meta(meta),
            None => {
                // Exactly the listed bytes: kept for the generation's next reads.
                catalog.keep(file, &contents);
                contents
            }
        };
        Ok(read_result(contents))
    }

    /// The refusal of a URI that is not served because it names a skill the trust policy
    /// excluded: a `skill://` URI names its skill by one of its first path segments (the
    /// folders above it, then its name), so each of the first [`MAX_URI_SEGMENTS_ASKED`]
    /// is asked about (a namespaced skill by `namespace:segment` as well). The error carries
    /// the stable code and the reason, like the tools' refusals.
    fn excluded_at(&self, uri: &str) -> Option<ErrorData> {
        let refusal = names_asked(uri).find_map(|n| self.engine.exclusion(&n))?;
        let code = skill_runtime::wire::snake_case(refusal.code());
        let reason = tools::relative_paths(&self.engine, &refusal.to_string());
        Some(ErrorData::invalid_params(
            format!("{uri} is not served: {reason}"),
            Some(serde_json::json!({ "uri": uri, "code": code })),
        ))
    }

    fn prompts(&self) -> Vec<Prompt> {
        self.engine
            .visible_skills(self.profile())
            .into_iter()
            .filter(|s| s.user_invocable)
            .map(|s| {
                let arguments = s.argument_hint.map(|hint| {
                    vec![
                        PromptArgument::new(tools::PROMPT_ARGUMENT)
                            .with_description(format!("Arguments: {hint}"))
                            .with_required(false),
                    ]
                });
                // A prompt always has a description (hosts show it in their menus).
                let description = if s.description.trim().is_empty() {
                    format!("Run the {} skill", s.name)
                } else {
                    s.description
                };
                Prompt::new(s.name, Some(description), arguments)
            })
            .collect()
    }
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (binary resources travel as `blob`).
fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(BASE64[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

impl ServerHandler for SkillsServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_tools()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_skills_with_directory_read()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                "skills-engine",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "Skills served by the skills engine. Hosts: skills/list gives every skill's \
                 manifest; read files with resources/read. Models: get_skill, load_skill, \
                 use_skill, search_skills and select_skills are tools.",
            )
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let span = trace::span("skills/list", trace::Target::None, &context);
        trace::traced(span, async move {
            let start = offset(request.as_ref())?;
            let catalog = self.catalog();
            let total = catalog.skills.len();
            if start > total {
                return Err(invalid_cursor(&start.to_string()));
            }
            let end = (start + SKILLS_PAGE_SIZE).min(total);
            let skills = catalog.skills[start..end]
                .iter()
                .map(|s| s.entry.clone())
                .collect();
            let mut result = ListSkillsResult::with_all_items(skills);
            result.next_cursor = next_cursor(end, total);
            result.ttl_ms = Some(ttl_ms());
            result.cache_scope = Some(CacheScope::Private);
            Ok(result)
        })
        .await
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let span = trace::span(
            "skills/get",
            trace::Target::Resource(&request.uri),
            &context,
        );
        trace::traced(span, async move {
            let catalog = self.catalog();
            let skill = catalog.skill(&request.uri).ok_or_else(|| {
                ErrorData::invalid_params(format!("no skill is served at {}", request.uri), None)
            })?;
            Ok(GetSkillResult::new(skill.entry.clone())
                .with_ttl_ms(ttl_ms())
                .with_cache_scope(CacheScope::Private))
        })
        .await
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        let span = trace::span(
            "resources/directory/read",
            trace::Target::Resource(&request.uri),
            &context,
        );
        trace::traced(span, async move {
            let catalog = self.catalog();
            let children = catalog.directory(&request.uri).ok_or_else(|| {
                ErrorData::invalid_params(
                    format!("{} is not a directory resource", request.uri),
                    None,
                )
            })?;
            let start = match request.cursor.as_deref() {
                None => 0,
                Some(c) => c.parse().map_err(|_| invalid_cursor(c))?,
            };
            if start > children.len() {
                return Err(invalid_cursor(&start.to_string()));
            }
            let end = (start + RESOURCES_PAGE_SIZE).min(children.len());
            let mut result = ListResourcesResult::with_all_items(children[start..end].to_vec());
            result.next_cursor = next_cursor(end, children.len());
            result.ttl_ms = Some(ttl_ms());
            result.cache_scope = Some(CacheScope::Private);
            Ok(result)
        })
        .await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let span = trace::span("resources/list", trace::Target::None, &context);
        trace::traced(span, async move {
            let start = offset(request.as_ref())?;
            let catalog = self.catalog();
            let total = catalog.file_count();
            if start > total {
                return Err(invalid_cursor(&start.to_string()));
            }
            let resources = catalog
                .file_uris(start, RESOURCES_PAGE_SIZE)
                .iter()
                .filter_map(|uri| catalog.resource(uri))
                .collect();
            let end = (start + RESOURCES_PAGE_SIZE).min(total);
            let mut result = ListResourcesResult::with_all_items(resources);
            result.next_cursor = next_cursor(end, total);
            result.ttl_ms = Some(ttl_ms());
            result.cache_scope = Some(CacheScope::Private);
            Ok(result)
        })
        .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let span = trace::span(
            "resources/read",
            trace::Target::Resource(&request.uri),
            &context,
        );
        trace::traced(span, async move { self.read(&request.uri).map(Into::into) }).await
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let span = trace::span("tools/list", trace::Target::None, &context);
        let _ = &request;
        trace::traced(span, async move {
            let mut result = ListToolsResult::with_all_items(tools::definitions());
            result.ttl_ms = Some(ttl_ms());
            result.cache_scope = Some(CacheScope::Private);
            Ok(result)
        })
        .await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let span = trace::span("tools/call", trace::Target::Tool(&request.name), &context);
        trace::traced_tool(span, async move {
            // A slot for as long as this call runs: released when the call returns, fails,
            // times out or is cancelled (dropped with this future). None free: refused now.
            let Ok(_slot) = self.calls.clone().try_acquire_owned() else {
                return Err(busy(self.max_calls));
            };
            // The time limit of HTTP's executing endpoints, and the client's cancellation: the
            // call (and any script it started, which is killed when its run is dropped) ends
            // with either. A call ran on for minutes after its client had gone.
            let limit = limits::exec_time_limit(
                self.engine.script_timeout(),
                limits::DEFAULT_EXEC_TIMEOUT_MARGIN,
                limits::DEFAULT_REQUEST_TIMEOUT,
            );
            let call = tools::call(
                &self.engine,
                self.profile(),
                &request.name,
                request.arguments.unwrap_or_default(),
            );
            tokio::select! {
                result = tokio::time::timeout(limit, call) => match result {
                    Ok(r) => r.map(Into::into),
                    Err(_) => Err(ErrorData::internal_error(
                        format!(
                            "the tool call ran longer than {} s and was stopped (send fewer commands per call)",
                            limit.as_secs()
                        ),
                        None,
                    )),
                },
                () = context.ct.cancelled() => Err(ErrorData::internal_error(
                    "the tool call was cancelled by the client",
                    None,
                )),
            }
        })
        .await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let span = trace::span("prompts/list", trace::Target::None, &context);
        let _ = &request;
        trace::traced(span, async move {
            let mut result = ListPromptsResult::with_all_items(self.prompts());
            result.ttl_ms = Some(ttl_ms());
            result.cache_scope = Some(CacheScope::Private);
            Ok(result)
        })
        .await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let span = trace::span(
            "prompts/get",
            trace::Target::Prompt(&request.name),
            &context,
        );
        trace::traced(span, async move {
            let arguments = request
                .arguments
                .as_ref()
                .and_then(|a| a.get(tools::PROMPT_ARGUMENT))
                .and_then(|v| v.as_str());
            let text = self
                .engine
                .prompt_text(&request.name, arguments, self.profile())
                .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
            let summary = self
                .engine
                .skill_summary(&request.name, self.profile())
                .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
            Ok(
                GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                    .with_description(summary.description)
                    .into(),
            )
        })
        .await
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        // From protocol 2026-07-28 on (stateless) there is no `initialize`: Method not
        // found (over HTTP, `404`), as SEP-2575 says, whatever its params. It arrives here
        // without a `protocolVersion` param (with one, rmcp opens a 2025-11-25 session).
        if request.method == "initialize"
            && context
                .protocol_version()
                .is_some_and(|v| !v.has_initialize())
        {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                "initialize is not a method of protocol 2026-07-28 and later: send \
                 server/discover, and each request's _meta",
                None,
            ));
        }
        // A request of a method rmcp knows arrives here when its params do not fit the
        // method: that is Invalid params, not Method not found.
        let malformed = crate::jsonrpc::params_error(&request.method, request.params.as_ref());
        Err(malformed.unwrap_or_else(|| {
            ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                request.method,
                None,
            )
        }))
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.resources_list_changed = requested.resources_list_changed;
        accepted.prompts_list_changed = requested.prompts_list_changed;
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut events = self.engine.events();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                event = events.recv() => match event {
                    Ok(e) if matches!(*e, Event::Change(_)) => {
                        for n in change_notifications() {
                            // A category the listener did not ask for is refused; skip it.
                            let _ = context.sink().send(n).await;
                        }
                    }
                    Ok(_) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        for n in change_notifications() {
                            let _ = context.sink().send(n).await;
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return Ok(()),
                }
            }
        }
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // A session (stdio, or HTTP on 2025-11-25) hears of every reload, once: a client
        // repeating the notification started a listener each time (each change was then
        // announced that many times), and a listener outlived its session until the
        // next change. It ends with its session now.
        if self
            .listening
            .swap(true, std::sync::atomic::Ordering::AcqRel)
        {
            return;
        }
        let mut events = self.engine.events();
        let peer = context.peer;
        tokio::spawn(async move {
            let mut check = tokio::time::interval(LISTENER_CHECK);
            check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                let event = tokio::select! {
                    e = events.recv() => e,
                    _ = check.tick() => {
                        if peer.is_transport_closed() {
                            return;
                        }
                        continue;
                    }
                };
                match event {
                    Ok(e) if !matches!(*e, Event::Change(_)) => continue,
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        if peer.notify_resource_list_changed().await.is_err()
                            || peer.notify_prompt_list_changed().await.is_err()
                        {
                            return;
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        });
    }
}

/// The error of a `tools/call` over the limit of calls in flight.
fn busy(max: usize) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode(BUSY_ERROR_CODE),
        format!(
            "the server is busy: {max} tool calls are running, the most it runs at once; retry shortly"
        ),
        Some(serde_json::json!({ "max_calls_in_flight": max })),
    )
}

fn change_notifications() -> [ServerNotification; 2] {
    [
        ServerNotification::ResourceListChangedNotification(Default::default()),
        ServerNotification::PromptListChangedNotification(Default::default()),
    ]
}

/// The skill names a `skill://` URI may name, in order: its first path segment, then each
/// of the next ones up to [`MAX_URI_SEGMENTS_ASKED`] segments in all, alone and as
/// `first:segment` (a namespaced skill). Lazy: the caller stops at the first excluded one.
fn names_asked(uri: &str) -> impl Iterator<Item = String> + '_ {
    let mut segments = uri
        .strip_prefix(crate::catalog::SCHEME)
        .unwrap_or("")
        .split('/')
        .filter(|s| !s.is_empty());
    let first = segments.next();
    first.map(str::to_owned).into_iter().chain(
        segments
            .take(MAX_URI_SEGMENTS_ASKED.saturating_sub(1))
            .flat_map(move |s| [s.to_owned(), format!("{}:{s}", first.unwrap_or(""))]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_4648_vectors() {
        for (input, expected) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64_encode(input.as_bytes()), expected);
        }
    }

    #[test]
    fn cursors_are_offsets_and_anything_else_is_invalid_params() {
        let mut p = PaginatedRequestParams::default();
        assert_eq!(offset(Some(&p)).ok(), Some(0));
        p.cursor = Some("200".into());
        assert_eq!(offset(Some(&p)).ok(), Some(200));
        p.cursor = Some("x".into());
        let e = offset(Some(&p)).err().map(|e| e.code);
        assert_eq!(e, Some(rmcp::model::ErrorCode::INVALID_PARAMS));
        assert_eq!(next_cursor(100, 100), None);
        assert_eq!(next_cursor(100, 101).as_deref(), Some("100"));
    }

    /// A URI of `n` segments whose last one is `target`.
    fn uri_of(n: usize) -> String {
        let mut segments: Vec<String> = (1..n).map(|i| format!("d{i}")).collect();
        segments.push("target".into());
        format!("{}{}", crate::catalog::SCHEME, segments.join("/"))
    }

    #[test]
    fn a_uri_names_a_skill_by_its_first_eight_segments_and_no_further() {
        assert_eq!(MAX_URI_SEGMENTS_ASKED, 8);
        let at_edge: Vec<String> = names_asked(&uri_of(MAX_URI_SEGMENTS_ASKED)).collect();
        assert!(at_edge.iter().any(|n| n == "target"), "{at_edge:?}");
        assert!(at_edge.iter().any(|n| n == "d1:target"), "{at_edge:?}");
        // One segment more: the last is not asked about, nor are more names than at the edge.
        let past: Vec<String> = names_asked(&uri_of(MAX_URI_SEGMENTS_ASKED + 1)).collect();
        assert!(!past.iter().any(|n| n.ends_with("target")), "{past:?}");
        assert_eq!(past.len(), at_edge.len());
        // The first segment alone, once; nothing for a URI of another scheme.
        assert_eq!(names_asked(&uri_of(1)).collect::<Vec<_>>(), ["target"]);
        assert_eq!(names_asked("file:///etc/passwd").count(), 0);
    }
}
