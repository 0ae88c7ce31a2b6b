//! Error codes against the MCP specification, for clients on each protocol version: an
//! unknown tool is a protocol error, `-32602` Invalid params (2025-06-18, tools, "Error
//! Handling"); a `resources/read` of a URI that is not served is `-32002` Resource not
//! found (2025-06-18, resources, "Error Handling") up to 2025-11-25, and `-32602` from
//! 2026-07-28 on (SEP-2164), with the URI in `data.uri` either way.

use rmcp::model::{
    CallToolRequestParams, ClientConfig, ErrorCode, ErrorData, ProtocolVersion,
    ReadResourceRequestParams,
};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use skill_http::HttpConfig;

use crate::common::{Fixture, serve_mcp};

type Client = RunningService<RoleClient, ClientConfig>;

/// How rmcp's client starts on `version`: `initialize` up to 2025-11-25, `server/discover`
/// (per-request metadata) from 2026-07-28 on.
fn lifecycle(version: &ProtocolVersion) -> ClientLifecycleMode {
    if version.as_str() >= ProtocolVersion::V_2026_07_28.as_str() {
        ClientLifecycleMode::Discover {
            preferred_versions: vec![version.clone()],
        }
    } else {
        ClientLifecycleMode::Initialize
    }
}

/// rmcp's client on `version`, connected to the server through a duplex byte stream (what
/// stdio carries).
async fn over_duplex(fx: &Fixture, version: ProtocolVersion) -> Client {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    let server = fx.server();
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let mode = lifecycle(&version);
    ClientConfig::default()
        .with_protocol_version(version)
        .serve_with_lifecycle(client_io, mode)
        .await
        .unwrap()
}

/// rmcp's client on `version` over streamable HTTP at `url`.
async fn over_http(url: &str, version: ProtocolVersion) -> Client {
    let mode = lifecycle(&version);
    ClientConfig::default()
        .with_protocol_version(version)
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(url.to_owned()),
            mode,
        )
        .await
        .unwrap()
}

fn error<T: std::fmt::Debug>(result: Result<T, ServiceError>) -> ErrorData {
    match result {
        Err(ServiceError::McpError(e)) => e,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

/// The unknown tool and the unknown resources on `client`, which negotiated `version`.
async fn check(client: Client, version: ProtocolVersion) {
    let negotiated = client.peer_info().map(|i| i.protocol_version.clone());
    assert_eq!(negotiated.as_ref(), Some(&version));
    let not_found = if version.as_str() >= ProtocolVersion::V_2026_07_28.as_str() {
        ErrorCode::INVALID_PARAMS
    } else {
        ErrorCode::RESOURCE_NOT_FOUND
    };
    let tool = error(
        client
            .call_tool(CallToolRequestParams::new("no_such_tool"))
            .await,
    );
    assert_eq!(tool.code, ErrorCode::INVALID_PARAMS, "{version}: {tool:?}");
    assert!(tool.message.contains("no_such_tool"), "{tool:?}");
    for uri in [
        "skill://pdf-forms/nope.md",
        "skill://nope/SKILL.md",
        "file:///etc/passwd",
    ] {
        let read = error(
            client
                .read_resource(ReadResourceRequestParams::new(uri))
                .await,
        );
        assert_eq!(read.code, not_found, "{version} {uri}: {read:?}");
        assert_eq!(
            read.data.as_ref().and_then(|d| d.get("uri")),
            Some(&serde_json::json!(uri)),
            "{read:?}"
        );
    }
    // A served file still reads.
    let served = client
        .read_resource(ReadResourceRequestParams::new("skill://pdf-forms/SKILL.md"))
        .await
        .unwrap();
    assert_eq!(served.contents.len(), 1);
    client.cancel().await.unwrap();
}

/// A `resources/read` of a URI the server does not serve was `-32602` whatever the
/// client's version.
#[tokio::test(flavor = "multi_thread")]
async fn unknown_tools_and_resources_get_the_specification_s_codes() {
    let fx = Fixture::new();
    for version in [
        ProtocolVersion::V_2025_06_18,
        ProtocolVersion::V_2025_11_25,
        ProtocolVersion::V_2026_07_28,
    ] {
        check(over_duplex(&fx, version.clone()).await, version).await;
    }
    let (addr, stop, server) = serve_mcp(
        &fx.engine,
        skill_mcp::McpLimits::default(),
        HttpConfig::default(),
    )
    .await;
    let url = format!("http://{addr}/mcp");
    for version in [
        ProtocolVersion::V_2025_06_18,
        ProtocolVersion::V_2025_11_25,
        ProtocolVersion::V_2026_07_28,
    ] {
        check(over_http(&url, version.clone()).await, version).await;
    }
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}

/// From protocol 2026-07-28 on there is no `initialize`: a stateless one (per-request
/// `_meta`, no `protocolVersion` param) is `404` with `-32601` Method not found and its id,
/// as SEP-2575 (and the conformance suite's `server-stateless`) says. It was `200` with
/// `-32602`.
#[tokio::test(flavor = "multi_thread")]
async fn a_stateless_initialize_is_method_not_found() {
    use crate::http::{exchange, status};
    let fx = Fixture::new();
    let (addr, stop, server) = serve_mcp(
        &fx.engine,
        skill_mcp::McpLimits::default(),
        HttpConfig::default(),
    )
    .await;
    let body = r#"{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: initialize\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let (head, answer) = exchange(addr, &head, body.as_bytes()).await;
    assert_eq!(status(&head), 404, "{head}\n{answer}");
    let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["id"], 5, "{answer}");
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}
