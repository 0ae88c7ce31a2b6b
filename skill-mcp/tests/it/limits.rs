//! The bound on `tools/call` requests in flight, at its edge, over streamable HTTP with
//! rmcp's client: a skill whose script blocks until the test releases it holds a call open,
//! and FIFOs say when a script has started and let it finish (no sleeps). Linux: the FIFOs
//! are opened read-write.

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ErrorCode, JsonObject};
use rmcp::service::ServiceError;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use skill_http::HttpConfig;

use crate::common::serve_mcp;

/// Long enough for anything here to happen on a loaded machine; reached only when the
/// test is failing (it waits for events, never for time).
pub(crate) const EVENT_BOUND: std::time::Duration = std::time::Duration::from_secs(30);

fn args(value: Value) -> JsonObject {
    match value {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}

fn execute(line: &str) -> CallToolRequestParams {
    CallToolRequestParams::new("execute")
        .with_arguments(args(json!({ "output": format!("```cmd\n{line}\n```") })))
}

fn error_code(result: Result<CallToolResult, ServiceError>) -> (ErrorCode, String) {
    match result {
        Err(ServiceError::McpError(e)) => (e.code, e.message.into_owned()),
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

/// A skill `blocker` whose script, called `blocker <tag>`, writes a line to the FIFO
/// `started-<tag>` and then waits for a line on the FIFO `release-<tag>` (both in `fifos`).
pub(crate) fn blocker_engine(
    root: &std::path::Path,
    fifos: &std::path::Path,
) -> std::sync::Arc<skill_runtime::Engine> {
    use std::os::unix::fs::PermissionsExt;
    let dir = root.join("blocker");
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: blocker\ndescription: Blocks until the test releases it.\nscripts:\n  - scripts/wait.sh\n---\nBlocks.\n",
    )
    .unwrap();
    let script = dir.join("scripts/wait.sh");
    let f = fifos.display();
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho up > \"{f}/started-$1\"\nread line < \"{f}/release-$1\"\necho \"released $1\"\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut config =
        skill_runtime::EngineConfig::new(skill_runtime::registry::RegistryConfig::with_sources(
            vec![skill_runtime::registry::Source::new(root, "project")],
        ));
    config.watch = None;
    config.schedule = None;
    skill_runtime::Engine::start(config).unwrap()
}

/// The two FIFOs of one blocked call: `started` (the script has begun, so the call holds
/// its slot) and `release` (a line lets the script end). Both are opened read-write
/// (Linux), so neither end ever waits for the other to open and no line is lost.
pub(crate) struct Gate {
    started: tokio::io::BufReader<tokio::net::unix::pipe::Receiver>,
    release: tokio::net::unix::pipe::Sender,
}

impl Gate {
    pub(crate) fn new(fifos: &std::path::Path, tag: &str) -> Gate {
        let mut options = tokio::net::unix::pipe::OpenOptions::new();
        options.read_write(true);
        let open = |name: String| {
            let path = fifos.join(name);
            let made = std::process::Command::new("mkfifo")
                .arg(&path)
                .status()
                .unwrap();
            assert!(made.success(), "mkfifo {}", path.display());
            path
        };
        let started = open(format!("started-{tag}"));
        let release = open(format!("release-{tag}"));
        Gate {
            started: tokio::io::BufReader::new(options.open_receiver(started).unwrap()),
            release: options.open_sender(release).unwrap(),
        }
    }

    /// Until the script has started.
    pub(crate) async fn started(&mut self) {
        use tokio::io::AsyncBufReadExt;
        let mut line = String::new();
        tokio::time::timeout(EVENT_BOUND, self.started.read_line(&mut line))
            .await
            .expect("the script never started")
            .unwrap();
        assert_eq!(line, "up\n");
    }

    /// Let the script end.
    pub(crate) async fn release(&mut self) {
        use tokio::io::AsyncWriteExt;
        self.release.write_all(b"go\n").await.unwrap();
    }
}

/// `max_calls_in_flight` calls run; the next is answered at once with a JSON-RPC error
/// saying the server is busy and to retry (nothing bounded the calls running at once, and
/// each may run a script); once one ends, a new call is served. Calls that failed hold no
/// slot.
#[tokio::test(flavor = "multi_thread")]
async fn tool_calls_past_the_limit_are_refused_at_once_until_one_ends() {
    let root = tempfile::tempdir().unwrap();
    let fifos = tempfile::tempdir().unwrap();
    let engine = blocker_engine(root.path(), fifos.path());
    let limits = skill_mcp::McpLimits {
        max_calls_in_flight: 2,
        ..skill_mcp::McpLimits::default()
    };
    let (addr, stop, server) = serve_mcp(&engine, limits, HttpConfig::default()).await;
    let client = ()
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "http://{addr}/mcp"
        )))
        .await
        .unwrap();

    // Calls that fail give their slot back: more of them than the limit, one after another.
    for _ in 0..3 {
        let failed = client
            .call_tool(CallToolRequestParams::new("no_such_tool"))
            .await;
        assert_eq!(error_code(failed).0, ErrorCode::INVALID_PARAMS);
    }

    // The limit's worth of calls, each held open by its script.
    let mut gates = Vec::new();
    let mut calls = Vec::new();
    for tag in ["a", "b"] {
        let mut gate = Gate::new(fifos.path(), tag);
        let peer = client.peer().clone();
        let request = execute(&format!("blocker {tag}"));
        calls.push(tokio::spawn(async move { peer.call_tool(request).await }));
        gate.started().await;
        gates.push(gate);
    }

    // One over: refused at once (not queued behind the two).
    let over = tokio::time::timeout(
        EVENT_BOUND,
        client.call_tool(CallToolRequestParams::new("get_skill")),
    )
    .await
    .expect("the call over the limit was not answered at once");
    let (code, message) = error_code(over);
    assert_eq!(code, ErrorCode(skill_mcp::BUSY_ERROR_CODE), "{message}");
    assert!(
        message.contains("busy") && message.contains("retry"),
        "{message}"
    );

    // One ends; a new call is served.
    gates[0].release().await;
    let first = tokio::time::timeout(EVENT_BOUND, calls.remove(0))
        .await
        .expect("the released call did not end")
        .unwrap()
        .unwrap();
    let value = first.structured_content.unwrap();
    assert!(value.to_string().contains("released a"), "{value}");
    let served = client
        .call_tool(CallToolRequestParams::new("get_skill"))
        .await
        .unwrap();
    assert_ne!(served.is_error, Some(true));

    gates[1].release().await;
    tokio::time::timeout(EVENT_BOUND, calls.remove(0))
        .await
        .expect("the released call did not end")
        .unwrap()
        .unwrap();
    client.cancel().await.unwrap();
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}
