//! One OpenTelemetry MCP server span per request the handler serves, as
//! semantic-conventions-genai v0.1.0 (MCP) describes it.
//!
//! The span is named `{mcp.method.name} {target}`, the target being the tool or prompt
//! name when the request has one (`tools/call get_skill`), else `{mcp.method.name}`. It
//! carries `mcp.method.name`, `jsonrpc.request.id`, `mcp.protocol.version`,
//! `mcp.session.id` (over HTTP with a session), `network.transport` (`tcp` over HTTP,
//! `pipe` over stdio), `gen_ai.tool.name` with `gen_ai.operation.name = execute_tool` for a
//! tool call, `gen_ai.prompt.name`, `mcp.resource.uri`, and on failure `error.type` with
//! `rpc.response.status_code` (the JSON-RPC code), or `error.type = tool_error` for a tool
//! result with `isError`. A request whose `params._meta` carries `traceparent` continues
//! that trace ([`skill_runtime::activation::adopt_remote_parent`]).

use rmcp::ErrorData;
use rmcp::model::CallToolResponse;
use rmcp::service::{RequestContext, RoleServer};
use tracing::Instrument as _;
use tracing::field::Empty;

/// What a request is about, when it names something.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target<'a> {
    /// No tool, prompt or resource.
    None,
    /// `tools/call`.
    Tool(&'a str),
    /// `prompts/get`.
    Prompt(&'a str),
    /// A resource URI (`resources/read`, `resources/directory/read`).
    Resource(&'a str),
}

/// The span of one request, its remote parent adopted from `params._meta`.
pub(crate) fn span(
    method: &'static str,
    target: Target<'_>,
    context: &RequestContext<RoleServer>,
) -> tracing::Span {
    let (tool, prompt, uri) = match target {
        Target::None => (None, None, None),
        Target::Tool(t) => (Some(t), None, None),
        Target::Prompt(p) => (None, Some(p), None),
        Target::Resource(u) => (None, None, Some(u)),
    };
    let name = match tool.or(prompt) {
        Some(t) => format!("{method} {t}"),
        None => method.to_owned(),
    };
    let (transport, session) = transport_and_session(context);
    let protocol = context.protocol_version().map(|v| v.to_string());
    let span = tracing::info_span!(
        "mcp.request",
        otel.name = name,
        otel.kind = "server",
        otel.status_code = Empty,
        mcp.method.name = method,
        jsonrpc.request.id = %context.id,
        mcp.protocol.version = protocol,
        mcp.session.id = session,
        network.transport = transport,
        gen_ai.operation.name = tool.map(|_| "execute_tool"),
        gen_ai.tool.name = tool,
        gen_ai.prompt.name = prompt,
        mcp.resource.uri = uri,
        error.type = Empty,
        rpc.response.status_code = Empty,
    );
    let meta = &context.meta;
    skill_runtime::activation::adopt_remote_parent(&span, &|key| {
        match key {
            "traceparent" => meta.get_traceparent(),
            "tracestate" => meta.get_tracestate(),
            _ => None,
        }
        .map(str::to_owned)
    });
    span
}

/// Serve a request inside its span, and record its failure there.
pub(crate) async fn traced<T>(
    span: tracing::Span,
    work: impl Future<Output = Result<T, ErrorData>>,
) -> Result<T, ErrorData> {
    let result = work.instrument(span.clone()).await;
    outcome(&span, &result);
    result
}

/// Serve a tool call inside its span, and record its failure or tool error there.
pub(crate) async fn traced_tool(
    span: tracing::Span,
    work: impl Future<Output = Result<CallToolResponse, ErrorData>>,
) -> Result<CallToolResponse, ErrorData> {
    let result = work.instrument(span.clone()).await;
    tool_outcome(&span, &result);
    result
}

/// Record a request's failure on its span: the JSON-RPC code.
fn outcome<T>(span: &tracing::Span, result: &Result<T, ErrorData>) {
    if let Err(e) = result {
        let code = e.code.0.to_string();
        span.record("error.type", code.as_str());
        span.record("rpc.response.status_code", code.as_str());
        span.record("otel.status_code", "ERROR");
    }
}

/// Record a tool call's outcome: a JSON-RPC failure, or a result with `isError`.
fn tool_outcome(span: &tracing::Span, result: &Result<CallToolResponse, ErrorData>) {
    outcome(span, result);
    if let Ok(CallToolResponse::Complete(r)) = result
        && r.is_error == Some(true)
    {
        span.record("error.type", "tool_error");
        span.record("otel.status_code", "ERROR");
    }
}

/// `network.transport` and the session id: over HTTP the request's parts are in the
/// context (`tcp`, and the `Mcp-Session-Id` header when there is a session); over stdio
/// they are not (`pipe`).
#[cfg(feature = "http")]
fn transport_and_session(context: &RequestContext<RoleServer>) -> (&'static str, Option<String>) {
    match context.extensions.get::<http::request::Parts>() {
        Some(parts) => (
            "tcp",
            parts
                .headers
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
        ),
        None => ("pipe", None),
    }
}

#[cfg(not(feature = "http"))]
fn transport_and_session(_context: &RequestContext<RoleServer>) -> (&'static str, Option<String>) {
    ("pipe", None)
}
