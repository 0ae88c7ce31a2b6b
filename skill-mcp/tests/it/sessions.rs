//! What `/mcp` keeps per session, at its edges, in raw HTTP (rmcp's client never reuses an
//! id or opens a second GET stream): a request id in flight, the GET streams open, and
//! `DELETE`.

use skill_http::HttpConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::{Fixture, serve_mcp};
use crate::http::{INITIALIZE, exchange, post_head, status};
use crate::limits::{EVENT_BOUND, Gate, blocker_engine};

/// A new session on the server at `addr` (its id), initialized.
async fn open_session(addr: std::net::SocketAddr) -> String {
    let (head, body) = exchange(
        addr,
        &post_head("", INITIALIZE.len()),
        INITIALIZE.as_bytes(),
    )
    .await;
    assert_eq!(status(&head), 200, "{head}\n{body}");
    let session = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .unwrap()
        .to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let (head, _) = post(addr, &session, initialized).await;
    assert_eq!(status(&head), 202, "{head}");
    session
}

/// POST `message` in `session`: the head and the body.
async fn post(addr: std::net::SocketAddr, session: &str, message: &str) -> (String, String) {
    let extra = format!("mcp-session-id: {session}\r\nmcp-protocol-version: 2025-06-18\r\n");
    exchange(addr, &post_head(&extra, message.len()), message.as_bytes()).await
}

fn request(id: i64, method: &str, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)
}

/// While a request is in flight on a session, another with its id is answered at once
/// with `400` and `-32600` naming that id (of eight such requests rmcp answered one and
/// left seven open with no answer and no end); other ids, and that id on another session,
/// are served; once answered, the id may be used again.
#[tokio::test(flavor = "multi_thread")]
async fn an_id_in_flight_on_its_session_is_refused_at_once() {
    let root = tempfile::tempdir().unwrap();
    let fifos = tempfile::tempdir().unwrap();
    let engine = blocker_engine(root.path(), fifos.path());
    let (addr, stop, server) = serve_mcp(
        &engine,
        skill_mcp::McpLimits::default(),
        HttpConfig::default(),
    )
    .await;
    let session = open_session(addr).await;

    let mut gate = Gate::new(fifos.path(), "a");
    let call = request(
        7,
        "tools/call",
        r#"{"name":"execute","arguments":{"output":"```cmd\nblocker a\n```"}}"#,
    );
    let first = {
        let session = session.clone();
        tokio::spawn(async move { post(addr, &session, &call).await })
    };
    gate.started().await;

    let again: Vec<_> = (0..7)
        .map(|_| {
            let session = session.clone();
            tokio::spawn(async move { post(addr, &session, &request(7, "ping", "{}")).await })
        })
        .collect();
    for refused in again {
        let (head, body) = tokio::time::timeout(EVENT_BOUND, refused)
            .await
            .expect("a request reusing an id in flight was not answered")
            .unwrap();
        assert_eq!(status(&head), 400, "{head}\n{body}");
        let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(answer["id"], 7, "{body}");
        assert_eq!(answer["error"]["code"], -32600, "{body}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("in flight"), "{message}");
    }
    let (head, body) = post(addr, &session, &request(8, "ping", "{}")).await;
    assert_eq!(status(&head), 200, "another id: {head}\n{body}");
    let other = open_session(addr).await;
    let (head, body) = post(addr, &other, &request(7, "ping", "{}")).await;
    assert_eq!(
        status(&head),
        200,
        "the id on another session: {head}\n{body}"
    );

    gate.release().await;
    let (head, body) = tokio::time::timeout(EVENT_BOUND, first)
        .await
        .expect("the held call did not end")
        .unwrap();
    assert_eq!(status(&head), 200, "{head}");
    assert!(body.contains("released a"), "{body}");
    let (head, body) = post(addr, &session, &request(7, "ping", "{}")).await;
    assert_eq!(status(&head), 200, "the id once answered: {head}\n{body}");
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}

/// The head of `GET /mcp` in `session` (`extra`: more header lines).
fn get_head(session: &str, extra: &str) -> String {
    format!(
        "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\
         mcp-session-id: {session}\r\nmcp-protocol-version: 2025-06-18\r\n{extra}\r\n"
    )
}

/// `GET /mcp` in `session`: the status, and the connection (open while the stream is).
async fn get_stream(addr: std::net::SocketAddr, session: &str) -> (u16, tokio::net::TcpStream) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(get_head(session, "").as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 1024];
    while !raw.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(EVENT_BOUND, s.read(&mut buf))
            .await
            .expect("no answer to a GET")
            .unwrap();
        assert!(n > 0, "the GET's connection closed before its head");
        raw.extend_from_slice(&buf[..n]);
    }
    (status(&String::from_utf8_lossy(&raw)), s)
}

/// A session may have `MAX_GET_STREAMS_PER_SESSION` GET streams open; one more is `429`
/// (one session held 300); another session has its own; a stream that closes frees its
/// place.
#[tokio::test(flavor = "multi_thread")]
async fn get_streams_past_the_cap_are_refused() {
    let fx = Fixture::new();
    let (addr, stop, server) = serve_mcp(
        &fx.engine,
        skill_mcp::McpLimits::default(),
        HttpConfig::default(),
    )
    .await;
    let session = open_session(addr).await;
    let mut open = Vec::new();
    for _ in 0..skill_mcp::MAX_GET_STREAMS_PER_SESSION {
        let (code, stream) = get_stream(addr, &session).await;
        assert_eq!(code, 200, "within the cap");
        open.push(stream);
    }
    let (head, body) = exchange(addr, &get_head(&session, "Connection: close\r\n"), b"").await;
    assert_eq!(status(&head), 429, "one past the cap: {head}\n{body}");
    assert!(body.contains("GET streams open"), "{body}");
    let other = open_session(addr).await;
    assert_eq!(get_stream(addr, &other).await.0, 200, "another session");

    // A closed stream's place is free once the server sees the connection gone.
    drop(open.pop());
    let reopened = tokio::time::timeout(EVENT_BOUND, async {
        loop {
            let (code, stream) = get_stream(addr, &session).await;
            if code == 200 {
                return stream;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("a closed stream's place was never freed");
    drop((open, reopened));
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}

/// `DELETE` of an open session answers `200` (rmcp's `202` is the answer to an accepted
/// notification; Python's client logged it as a failed termination); of a session that
/// is no longer open `404`, as any request naming it.
#[tokio::test(flavor = "multi_thread")]
async fn delete_ends_a_session_with_200_and_an_ended_one_is_404() {
    let fx = Fixture::new();
    let (addr, stop, server) = serve_mcp(
        &fx.engine,
        skill_mcp::McpLimits::default(),
        HttpConfig::default(),
    )
    .await;
    let session = open_session(addr).await;
    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
         mcp-session-id: {session}\r\nmcp-protocol-version: 2025-06-18\r\n\r\n"
    );
    let (head, body) = exchange(addr, &delete, b"").await;
    assert_eq!(status(&head), 200, "{head}\n{body}");
    let (head, body) = exchange(addr, &delete, b"").await;
    assert_eq!(status(&head), 404, "{head}\n{body}");
    let (head, _) = post(addr, &session, &request(2, "ping", "{}")).await;
    assert_eq!(status(&head), 404, "{head}");
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}
