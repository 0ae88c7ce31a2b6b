//! Streamable HTTP at `/mcp` beside `/v1` on one loopback listener, with rmcp's client.

use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use skill_http::HttpConfig;

use crate::common::{Fixture, Served, read_everything, serve_mcp};

#[tokio::test(flavor = "multi_thread")]
async fn http_client_lists_and_reads_every_file_next_to_the_api() {
    let fx = Fixture::new();
    let (addr, stop, server) = serve_mcp(
        &fx.engine,
        skill_mcp::McpLimits::default(),
        HttpConfig::default(),
    )
    .await;
    let client = ()
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "http://{addr}/mcp"
        )))
        .await
        .unwrap();
    let (skills, files) = read_everything(&client).await;
    assert!(
        skills > 10 && files > skills,
        "{skills} skills, {files} files"
    );
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 7);
    client.cancel().await.unwrap();
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn with_a_token_mcp_needs_it_like_the_api() {
    let fx = Fixture::new();
    let config = HttpConfig {
        token: Some("s3cret".into()),
        ..HttpConfig::default()
    };
    let (addr, stop, server) = serve_mcp(&fx.engine, skill_mcp::McpLimits::default(), config).await;
    let refused = ()
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "http://{addr}/mcp"
        )))
        .await;
    assert!(refused.is_err());
    let transport = StreamableHttpClientTransport::from_config(
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            format!("http://{addr}/mcp"),
        )
        .auth_header("s3cret"),
    );
    let client = ().serve(transport).await.unwrap();
    assert!(!client.list_all_skills().await.unwrap().is_empty());
    client.cancel().await.unwrap();
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}

/// A server with `/mcp` under `limits` whose `allowed_hosts` (for `Host` and `Origin`) are
/// `allowed_hosts`.
async fn serve_with_hosts(
    fx: &Fixture,
    limits: skill_mcp::McpLimits,
    allowed_hosts: &[&str],
) -> Served {
    let config = HttpConfig {
        allowed_hosts: allowed_hosts.iter().map(|h| (*h).to_owned()).collect(),
        ..HttpConfig::default()
    };
    serve_mcp(&fx.engine, limits, config).await
}

/// Send `head` and `body` on a new connection (`Connection: close`); the status line and
/// headers, and the body.
pub(crate) async fn exchange(
    addr: std::net::SocketAddr,
    head: &str,
    body: &[u8],
) -> (String, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(body).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(std::time::Duration::from_secs(20), s.read_to_end(&mut raw))
        .await
        .expect("no answer in time")
        .unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (head.to_owned(), body.to_owned())
}

pub(crate) fn post_head(extra: &str, length: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{extra}Content-Length: {length}\r\n\r\n"
    )
}

pub(crate) const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

pub(crate) fn status(head: &str) -> u16 {
    head.split(' ').nth(1).unwrap().parse().unwrap()
}

/// Sessions are capped: past `max_sessions` a new one gets `503` with `Retry-After` (each
/// cost about 78 KB until deleted or idle for 5 minutes, and there was no cap); deleting
/// one makes room.
#[tokio::test(flavor = "multi_thread")]
async fn sessions_past_the_cap_are_refused_until_one_ends() {
    let fx = Fixture::new();
    let limits = skill_mcp::McpLimits {
        max_sessions: 2,
        ..skill_mcp::McpLimits::default()
    };
    let (addr, stop, server) = serve_mcp(&fx.engine, limits, HttpConfig::default()).await;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let (head, body) = exchange(
            addr,
            &post_head("", INITIALIZE.len()),
            INITIALIZE.as_bytes(),
        )
        .await;
        assert_eq!(status(&head), 200, "{head}\n{body}");
        let id = head
            .lines()
            .find_map(|l| l.strip_prefix("mcp-session-id: "))
            .unwrap()
            .to_owned();
        ids.push(id);
    }
    let (head, body) = exchange(
        addr,
        &post_head("", INITIALIZE.len()),
        INITIALIZE.as_bytes(),
    )
    .await;
    assert_eq!(status(&head), 503, "{head}\n{body}");
    assert!(
        head.to_ascii_lowercase().contains("retry-after: 5"),
        "{head}"
    );
    assert!(body.contains("too many MCP sessions"), "{body}");
    // A request in an open session still goes through.
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let (head, _) = exchange(
        addr,
        &post_head(
            &format!(
                "mcp-session-id: {}\r\nmcp-protocol-version: 2025-06-18\r\n",
                ids[0]
            ),
            ping.len(),
        ),
        ping.as_bytes(),
    )
    .await;
    assert_eq!(status(&head), 200, "{head}");
    let (head, _) = exchange(
        addr,
        &format!(
            "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nmcp-session-id: {}\r\nmcp-protocol-version: 2025-06-18\r\n\r\n",
            ids[1]
        ),
        b"",
    )
    .await;
    assert_eq!(status(&head), 200, "{head}");
    let (head, body) = exchange(
        addr,
        &post_head("", INITIALIZE.len()),
        INITIALIZE.as_bytes(),
    )
    .await;
    assert_eq!(status(&head), 200, "after a DELETE: {head}\n{body}");
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}

/// `/mcp` has `/v1`'s body limits: a declared length over the cap is `413` at once, a
/// longer chunked body `413`, a stalled body `408` (it was held open for good), and a
/// malformed chunked body `400` (it was `500`).
#[tokio::test(flavor = "multi_thread")]
async fn mcp_bodies_are_limited_like_the_api() {
    let fx = Fixture::new();
    let limits = skill_mcp::McpLimits {
        max_body_bytes: INITIALIZE.len(),
        body_read_timeout: std::time::Duration::from_millis(300),
        ..skill_mcp::McpLimits::default()
    };
    let (addr, stop, server) = serve_mcp(&fx.engine, limits, HttpConfig::default()).await;
    let (head, _) = exchange(addr, &post_head("", INITIALIZE.len() + 1), b"").await;
    assert_eq!(status(&head), 413, "{head}");
    let chunk = "x".repeat(150);
    let chunked = format!("96\r\n{chunk}\r\n96\r\n{chunk}\r\n0\r\n\r\n");
    let head_chunked = "POST /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
    let (head, _) = exchange(addr, head_chunked, chunked.as_bytes()).await;
    assert_eq!(status(&head), 413, "{head}");
    let (head, _) = exchange(addr, &post_head("", 40), b"{").await;
    assert_eq!(status(&head), 408, "{head}");
    let (head, body) = exchange(addr, head_chunked, b"5\r\n{\"jso\r\nzz\r\n").await;
    assert_eq!(status(&head), 400, "{head}\n{body}");
    // At the cap, a request is served.
    let (head, _) = exchange(
        addr,
        &post_head("", INITIALIZE.len()),
        INITIALIZE.as_bytes(),
    )
    .await;
    assert_eq!(status(&head), 200, "{head}");
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}

/// `initialize` posted with `Host: host` and, when given, `Origin: origin`: the status and
/// the body.
async fn initialize_from(
    addr: std::net::SocketAddr,
    host: &str,
    origin: Option<&str>,
) -> (u16, String) {
    let origin = origin
        .map(|o| format!("Origin: {o}\r\n"))
        .unwrap_or_default();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{origin}Content-Length: {}\r\n\r\n",
        INITIALIZE.len()
    );
    let (head, body) = exchange(addr, &head, INITIALIZE.as_bytes()).await;
    (status(&head), body)
}

/// DNS rebinding through a browser: a request to `/mcp` whose `Origin` is not loopback,
/// not the request's own host and not in `allowed_hosts` gets `403 forbidden_origin` (the
/// shape of `403 forbidden_host`); `Origin: null` too. A request without `Origin` is
/// served as before. (It was served whatever its `Origin`.)
#[tokio::test(flavor = "multi_thread")]
async fn mcp_refuses_origins_it_does_not_serve() {
    let fx = Fixture::new();
    let limits = skill_mcp::McpLimits::default();
    let (addr, stop, server) = serve_with_hosts(&fx, limits, &["skills.example.com"]).await;
    let port = addr.port();
    let local = format!("127.0.0.1:{port}");
    let evil_same_port = format!("http://evil.example.com:{port}");
    for (host, origin) in [
        (local.as_str(), "http://evil.example.com"),
        (local.as_str(), evil_same_port.as_str()),
        (local.as_str(), "null"),
        (local.as_str(), "http://10.9.9.9"),
        ("10.1.2.3:7878", "http://10.1.2.3:9999"),
        ("skills.example.com", "http://other.example.com"),
    ] {
        let (code, body) = initialize_from(addr, host, Some(origin)).await;
        assert_eq!(code, 403, "Host {host}, Origin {origin}: {body}");
        let value: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(value["error"]["code"], "forbidden_origin", "{body}");
    }
    for (host, origin) in [
        (local.as_str(), None),
        (local.as_str(), Some(format!("http://127.0.0.1:{port}"))),
        (local.as_str(), Some("http://localhost:3000".to_owned())),
        (local.as_str(), Some("https://app.localhost".to_owned())),
        (local.as_str(), Some("http://[::1]:8080".to_owned())),
        // Same origin: the page was served by this server under this name.
        ("10.1.2.3:7878", Some("http://10.1.2.3:7878".to_owned())),
        // Listed in allowed_hosts.
        (
            local.as_str(),
            Some("https://skills.example.com".to_owned()),
        ),
    ] {
        let (code, body) = initialize_from(addr, host, origin.as_deref()).await;
        assert_eq!(code, 200, "Host {host}, Origin {origin:?}: {body}");
    }
    // Every method: a GET (the SSE stream) and a DELETE from a foreign page are refused.
    for method in ["GET", "DELETE"] {
        let (head, _) = exchange(
            addr,
            &format!(
                "{method} /mcp HTTP/1.1\r\nHost: {local}\r\nConnection: close\r\n\
                 Origin: http://evil.example.com\r\nmcp-session-id: x\r\n\r\n"
            ),
            b"",
        )
        .await;
        assert_eq!(status(&head), 403, "{method}: {head}");
    }
    let _ = stop.send(());
    server.await.unwrap().unwrap();

    // "*" allows every origin, null included.
    let (addr, stop, server) = serve_with_hosts(&fx, limits, &["*"]).await;
    for origin in ["null", "http://evil.example.com"] {
        let (code, body) = initialize_from(addr, "localhost", Some(origin)).await;
        assert_eq!(code, 200, "{origin}: {body}");
    }
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}

/// `initialize` sent straight to the bare `http_service` (in process) with `Host: host`
/// and, when given, `Origin: origin`: the status, and the error code of a refusal.
async fn bare_initialize(
    service: &skill_mcp::HttpService,
    host: &str,
    origin: Option<&str>,
) -> (u16, Option<String>) {
    use http_body_util::BodyExt as _;
    use tower::ServiceExt as _;
    let mut request = http::Request::post("/")
        .header("host", host)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    let request = request
        .body(http_body_util::Full::new(bytes::Bytes::from_static(
            INITIALIZE.as_bytes(),
        )))
        .unwrap();
    let response = service.clone().oneshot(request).await.unwrap();
    let status = response.status().as_u16();
    if status == 200 {
        return (status, None);
    }
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let value: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    (status, value["error"]["code"].as_str().map(str::to_owned))
}

/// The bare service refuses origins as `/mcp` does (`origin_allowed` under its `Host`
/// allowlist: loopback, same origin, a listed host), with the same `403 forbidden_origin`;
/// `"*"` allows every origin. (It served every origin.)
#[tokio::test(flavor = "multi_thread")]
async fn bare_service_refuses_origins_as_mcp_does() {
    let fx = Fixture::new();
    let bare = |hosts: &[&str]| {
        skill_mcp::http_service(
            fx.engine.clone(),
            skill_mcp::McpConfig::default(),
            hosts.iter().map(|h| (*h).to_owned()).collect(),
        )
    };
    let forbidden = (403, Some("forbidden_origin".to_owned()));
    let loopback = bare(&[]);
    for origin in ["http://evil.example.com", "null", "http://10.9.9.9:8080"] {
        let got = bare_initialize(&loopback, "localhost", Some(origin)).await;
        assert_eq!(got, forbidden, "{origin}");
    }
    for origin in [
        None,
        Some("http://localhost:3000"),
        Some("https://127.0.0.1"),
        Some("http://[::1]:8080"),
        Some("https://app.localhost"),
    ] {
        let got = bare_initialize(&loopback, "localhost", origin).await;
        assert_eq!(got, (200, None), "{origin:?}");
    }

    let listed = bare(&["skills.example.com", "10.1.2.3:7878"]);
    for (origin, ok) in [
        ("https://skills.example.com", true),
        ("http://skills.example.com:8443", true),
        ("http://10.1.2.3:7878", true),
        ("http://localhost:3000", true),
        ("http://10.1.2.3:9999", false),
        ("http://other.example.com", false),
    ] {
        let got = bare_initialize(&listed, "skills.example.com", Some(origin)).await;
        let want = if ok { (200, None) } else { forbidden.clone() };
        assert_eq!(got, want, "{origin}");
    }

    let any = bare(&["*"]);
    for origin in ["null", "http://evil.example.com"] {
        let got = bare_initialize(&any, "evil.example.com", Some(origin)).await;
        assert_eq!(got, (200, None), "{origin}");
    }
}
