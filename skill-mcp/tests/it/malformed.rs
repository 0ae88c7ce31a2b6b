//! A hostile client at `/mcp`, in raw HTTP: bodies that are not JSON, JSON that is not a
//! JSON-RPC message, and requests whose params are malformed. Each gets a JSON-RPC error
//! (they got `415` with plain text, or `-32601` Method not found and, statelessly, `404`).

use serde_json::{Value, json};
use skill_http::HttpConfig;

use crate::common::{Fixture, serve_mcp};

/// Send `head` and `body` on a new connection (`Connection: close`); the status, the
/// headers (lowercase) and the body.
async fn exchange(addr: std::net::SocketAddr, head: &str, body: &[u8]) -> (u16, String, Vec<u8>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(body).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(std::time::Duration::from_secs(20), s.read_to_end(&mut raw))
        .await
        .expect("no answer in time")
        .unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("no end of headers");
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head, raw[split + 4..].to_vec())
}

/// A POST of `body` to `/mcp` with the JSON headers and `extra` (lines ending in CRLF).
async fn post(addr: std::net::SocketAddr, extra: &str, body: &[u8]) -> (u16, String, Vec<u8>) {
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\n\r\n",
        body.len()
    );
    exchange(addr, &head, body).await
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// A new session on protocol 2025-06-18: the headers its requests carry.
async fn session(addr: std::net::SocketAddr) -> String {
    let (status, head, body) = post(addr, "", INITIALIZE.as_bytes()).await;
    assert_eq!(status, 200, "{head}\n{}", String::from_utf8_lossy(&body));
    let id = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .unwrap()
        .to_owned();
    let headers = format!("mcp-session-id: {id}\r\nmcp-protocol-version: 2025-06-18\r\n");
    let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let (status, head, _) = post(addr, &headers, initialized).await;
    assert!(status < 300, "{head}");
    headers
}

/// The JSON-RPC message of a response body: a JSON body, or the first `data:` event of
/// an event stream.
fn message(body: &[u8]) -> Value {
    let text = String::from_utf8_lossy(body);
    if let Ok(v) = serde_json::from_str(&text) {
        return v;
    }
    let data = text
        .lines()
        .find_map(|l| l.strip_prefix("data:").filter(|d| !d.trim().is_empty()))
        .unwrap_or_else(|| panic!("no JSON-RPC message in {text}"));
    serde_json::from_str(data.trim()).unwrap()
}

fn nested(depth: usize) -> Vec<u8> {
    let mut body = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"#.to_vec();
    body.extend(std::iter::repeat_n(b'[', depth));
    body.extend(std::iter::repeat_n(b']', depth));
    body.extend(b"}}");
    body
}

/// Within a session, every malformed body gets `400` and a JSON-RPC error: `-32700` for
/// bytes that are not JSON, `-32600` for JSON that is not a request or notification, with
/// the `id` when it could be read (else null). The session goes on serving.
#[tokio::test(flavor = "multi_thread")]
async fn malformed_json_rpc_gets_a_json_rpc_error_and_400() {
    let fx = Fixture::new();
    let (addr, stop, server) = serve_mcp(
        &fx.engine,
        skill_mcp::McpLimits::default(),
        HttpConfig::default(),
    )
    .await;
    let headers = session(addr).await;
    let ping = br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let cases: Vec<(Vec<u8>, i64, Value)> = vec![
        (b"[]".to_vec(), -32600, Value::Null),
        (
            [b"[".as_slice(), ping, b",", ping, b"]"].concat(),
            -32600,
            Value::Null,
        ),
        (br#""x""#.to_vec(), -32600, Value::Null),
        (b"5".to_vec(), -32600, Value::Null),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":5}"#.to_vec(),
            -32600,
            json!(1),
        ),
        (
            br#"{"jsonrpc":"2.0","id":"abc","method":["ping"]}"#.to_vec(),
            -32600,
            json!("abc"),
        ),
        (
            br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_vec(),
            -32600,
            Value::Null,
        ),
        (
            br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#.to_vec(),
            -32600,
            Value::Null,
        ),
        (
            br#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#.to_vec(),
            -32600,
            Value::Null,
        ),
        (
            br#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#.to_vec(),
            -32600,
            json!(7),
        ),
        (
            br#"{"jsonrpc":"2.0","id":8,"method":"ping","params":5}"#.to_vec(),
            -32600,
            json!(8),
        ),
        (br#"{"jsonrpc":"2.0","id":9}"#.to_vec(), -32600, json!(9)),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\ud800"}}"#.to_vec(),
            -32700,
            Value::Null,
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}"
                .to_vec(),
            -32700,
            Value::Null,
        ),
        (b"\xff\xfe".to_vec(), -32700, Value::Null),
        (b"{".to_vec(), -32700, Value::Null),
        (b"".to_vec(), -32700, Value::Null),
        (nested(200), -32700, Value::Null),
    ];
    for (body, code, id) in cases {
        let shown = String::from_utf8_lossy(&body[..body.len().min(80)]).into_owned();
        let (status, head, answer) = post(addr, &headers, &body).await;
        let text = String::from_utf8_lossy(&answer).into_owned();
        assert_eq!(status, 400, "{shown}: {head}\n{text}");
        assert!(
            head.contains("content-type: application/json"),
            "{shown}: {head}"
        );
        let answer: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{shown}: {e}: {text}"));
        assert_eq!(answer["jsonrpc"], "2.0", "{shown}: {text}");
        assert_eq!(answer["error"]["code"], code, "{shown}: {text}");
        assert_eq!(answer["id"], id, "{shown}: {text}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| m.len() > 10),
            "{shown}: {text}"
        );
    }
    // Nested just under serde_json's limit, a request is still served.
    let (status, head, answer) = post(addr, &headers, &nested(120)).await;
    assert_eq!(status, 200, "{head}");
    assert_eq!(message(&answer)["id"], 1);
    // The session still serves a well-formed request, byte for byte as it came.
    let (status, head, answer) = post(addr, &headers, ping).await;
    assert_eq!(status, 200, "{head}");
    assert_eq!(message(&answer)["id"], 2);
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}

/// Malformed params of a method the server serves are `-32602` Invalid params naming what
/// is wrong (they were `-32601` Method not found, with the method as the message), in a
/// session and statelessly (protocol 2026-07-28, where `-32601` also made the status
/// `404`). An unknown method is still `-32601`.
#[tokio::test(flavor = "multi_thread")]
async fn malformed_params_are_invalid_params_not_method_not_found() {
    let fx = Fixture::new();
    let (addr, stop, server) = serve_mcp(
        &fx.engine,
        skill_mcp::McpLimits::default(),
        HttpConfig::default(),
    )
    .await;
    let headers = session(addr).await;
    let cases = [
        (
            json!({"name": "select_skills", "arguments": [1, 2]}),
            "tools/call",
            "`arguments`",
        ),
        (json!({"name": 5}), "tools/call", "`name`"),
        (json!({"uri": 5}), "skills/get", "skills/get"),
        (json!({}), "resources/read", "`uri`"),
        (json!({"name": ["x"]}), "prompts/get", "prompts/get"),
    ];
    for (params, method, named) in &cases {
        let body = json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": params});
        let (status, head, answer) = post(addr, &headers, body.to_string().as_bytes()).await;
        assert_eq!(status, 200, "{body}: {head}");
        let answer = message(&answer);
        assert_eq!(answer["id"], 3, "{body}: {answer}");
        assert_eq!(answer["error"]["code"], -32602, "{body}: {answer}");
        let text = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(text.contains(named), "{body}: {answer}");
    }
    let unknown = br#"{"jsonrpc":"2.0","id":4,"method":"no/such"}"#;
    let (status, _, answer) = post(addr, &headers, unknown).await;
    assert_eq!(status, 200);
    assert_eq!(message(&answer)["error"]["code"], -32601);

    // Stateless: protocol 2026-07-28, its metadata in `_meta` and the standard headers.
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    });
    let body = json!({
        "jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "select_skills", "arguments": [1, 2], "_meta": meta},
    });
    let stateless =
        "mcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\nmcp-name: select_skills\r\n";
    let (status, head, answer) = post(addr, stateless, body.to_string().as_bytes()).await;
    let answer = message(&answer);
    assert_eq!(status, 200, "{head}\n{answer}");
    assert_eq!(answer["id"], 5, "{answer}");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    // The same request with well-formed arguments is served.
    let body = json!({
        "jsonrpc": "2.0", "id": 6, "method": "tools/call",
        "params": {"name": "select_skills", "arguments": {"message": "fill a pdf form"}, "_meta": meta},
    });
    let (status, head, answer) = post(addr, stateless, body.to_string().as_bytes()).await;
    let answer = message(&answer);
    assert_eq!(status, 200, "{head}\n{answer}");
    assert!(answer.get("result").is_some(), "{answer}");
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}
