//! OpenTelemetry end to end: `serve` (built with the `otel` feature) exports to a loopback
//! OTLP/HTTP receiver, which decodes the protobuf with `opentelemetry-proto` and the test
//! checks the spans, the activation events and the metrics of a route, a select and a
//! scheduled fire; and that argument values and message text stay out unless the operator
//! turns content capture on. Names, attributes and units are checked against OpenTelemetry's
//! semantic conventions 1.41 (HTTP) and semantic-conventions-genai v0.1.0 (`execute_tool`).
#![cfg(all(unix, feature = "otel"))]

use std::collections::BTreeSet;
use std::convert::Infallible;
use std::process::{Child, Command};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{Metric, metric};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

use crate::common::{post, request, spawn_serve};

/// An argument value and a message word that must not leave unless content is captured.
const SECRET_ARG: &str = "zz-secret-subject-41";
const SECRET_WORD: &str = "zzsecretword";

/// The caller's span a request names in its `traceparent` header: trace id, span id.
const CALLER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";
/// The trace an MCP request names in its `params._meta`.
const MCP_CALLER_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";

/// What the receiver got: (path, body) per POST.
type Received = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// A loopback OTLP/HTTP receiver on its own runtime; answers 200 to every POST.
struct Receiver {
    addr: std::net::SocketAddr,
    got: Received,
    _rt: tokio::runtime::Runtime,
}

impl Receiver {
    fn start() -> Receiver {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let got: Received = Arc::default();
        let listener = rt
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let sink = got.clone();
        rt.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let sink = sink.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        let sink = sink.clone();
                        async move {
                            let path = req.uri().path().to_owned();
                            let body = req
                                .into_body()
                                .collect()
                                .await
                                .map(|b| b.to_bytes().to_vec())
                                .unwrap_or_default();
                            sink.lock().unwrap().push((path, body));
                            Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::new())))
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Receiver { addr, got, _rt: rt }
    }

    fn spans(&self) -> Vec<Span> {
        self.bodies("/v1/traces")
            .iter()
            .flat_map(|b| {
                ExportTraceServiceRequest::decode(b.as_slice())
                    .unwrap()
                    .resource_spans
            })
            .flat_map(|r| r.scope_spans)
            .flat_map(|s| s.spans)
            .collect()
    }

    fn metric_names(&self) -> BTreeSet<String> {
        self.metrics().into_iter().map(|m| m.name).collect()
    }

    fn metrics(&self) -> Vec<Metric> {
        self.bodies("/v1/metrics")
            .iter()
            .flat_map(|b| {
                ExportMetricsServiceRequest::decode(b.as_slice())
                    .unwrap()
                    .resource_metrics
            })
            .flat_map(|r| r.scope_metrics)
            .flat_map(|s| s.metrics)
            .collect()
    }

    fn bodies(&self, path: &str) -> Vec<Vec<u8>> {
        let got = self.got.lock().unwrap();
        got.iter()
            .filter(|(p, _)| p == path)
            .map(|(_, b)| b.clone())
            .collect()
    }

    fn everything(&self) -> Vec<u8> {
        let got = self.got.lock().unwrap();
        got.iter().flat_map(|(_, b)| b.iter().copied()).collect()
    }
}

fn text(v: &Option<AnyValue>) -> String {
    match v.as_ref().and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        _ => String::new(),
    }
}

fn attr(attrs: &[KeyValue], key: &str) -> Option<String> {
    attrs
        .iter()
        .find(|kv| kv.key == key)
        .map(|kv| text(&kv.value))
}

/// Lower-case hex of an id.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The attribute keys of a metric's points.
fn point_attribute_keys(m: &Metric) -> Vec<String> {
    let attrs: Vec<&KeyValue> = match &m.data {
        Some(metric::Data::Sum(d)) => d.data_points.iter().flat_map(|p| &p.attributes).collect(),
        Some(metric::Data::Histogram(d)) => {
            d.data_points.iter().flat_map(|p| &p.attributes).collect()
        }
        Some(metric::Data::Gauge(d)) => d.data_points.iter().flat_map(|p| &p.attributes).collect(),
        _ => Vec::new(),
    };
    attrs.into_iter().map(|kv| kv.key.clone()).collect()
}

/// The activation events of all spans: (trigger, name, layer, dialect).
fn activations(spans: &[Span]) -> Vec<(String, String, String, String)> {
    spans
        .iter()
        .flat_map(|s| &s.events)
        .filter(|e| e.name == "skill_activated")
        .map(|e| {
            let a = |k| attr(&e.attributes, k).unwrap_or_default();
            (
                a("skills.trigger"),
                a("skills.name"),
                a("skills.layer"),
                a("skills.dialect"),
            )
        })
        .collect()
}

fn terminate(mut child: Child) {
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    assert!(child.wait().unwrap().success());
}

/// A pack with one skill scheduled every second, so a fire comes promptly, and one script
/// skill.
fn ticking_pack() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let domain = dir.path().join("ticks");
    std::fs::create_dir_all(&domain).unwrap();
    std::fs::write(
        domain.join("SKILL.md"),
        "---\ndomain: ticks\ndescription: Routines that run every second\n---\n\n# Ticks\n\n\
         ## Available Skills\n\n| Skill | Purpose |\n|---|---|\n| ticks.tick | Say tick |\n",
    )
    .unwrap();
    std::fs::write(
        domain.join("tick.md"),
        "---\nname: ticks.tick\ndescription: Say tick every second\nschedule: \"* * * * * *\"\n\
         ---\n\n# ticks.tick\n\nSay tick.\n",
    )
    .unwrap();
    // A script skill, so a script run is measured.
    let hello = dir.path().join("hello");
    std::fs::create_dir_all(hello.join("scripts")).unwrap();
    std::fs::write(
        hello.join("SKILL.md"),
        "---\nname: hello\ndescription: Say hello from a script\nscripts:\n  - scripts/hello.sh\n\
         ---\n\n# hello\n\nRun it.\n",
    )
    .unwrap();
    let script = hello.join("scripts/hello.sh");
    std::fs::write(&script, "#!/bin/sh\necho hello\n").unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// Serve the bundled packs and a ticking pack, export to a fresh receiver, make a route and
/// a select, wait for a scheduled fire to be exported, stop (flushing), and return what was
/// received.
fn run_server(capture: bool) -> Receiver {
    let receiver = Receiver::start();
    let pack = ticking_pack();
    let pack_dir = pack.path().to_str().unwrap().to_owned();
    let endpoint = format!("http://{}", receiver.addr);
    let mut env = vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ("OTEL_METRIC_EXPORT_INTERVAL", "200"),
    ];
    if capture {
        env.push(("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true"));
    }
    let args = [
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--no-watch",
        "--skills",
        "packs/agentskills",
        "--skills",
        "packs/actions",
        "--skills",
        &pack_dir,
    ];
    let (child, addr, logs) = spawn_serve(&args, &env);
    let (status, body) = post(
        &addr,
        "/v1/route",
        &format!(r#"{{"text": "email.send --to dana@example.org --subject {SECRET_ARG}"}}"#),
    );
    assert_eq!(status, 200, "{body}");
    let (status, body) = post(&addr, "/v1/execute", r#"{"command": "hello"}"#);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("hello"), "{body}");
    // An MCP tool call (stateless, protocol 2026-07-28) naming its caller's span in
    // `params._meta`.
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"search_skills","arguments":{{"query":"pdf"}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"traceparent":"00-{MCP_CALLER_TRACE}-{CALLER_SPAN}-01"}}}}}}"#
    );
    let (status, body) = request(
        &addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n\
             Mcp-Name: search_skills\r\nContent-Length: {}\r\n\r\n",
            call.len()
        ),
        &call,
    );
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("pdf-forms"), "{body}");
    // The select names its caller's span (W3C trace context), so its span continues that
    // trace.
    let select = format!(r#"{{"message": "fill in the fields of this pdf form {SECRET_WORD}"}}"#);
    let (status, body) = request(
        &addr,
        &format!(
            "POST /v1/select HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
             traceparent: 00-{CALLER_TRACE}-{CALLER_SPAN}-01\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            select.len()
        ),
        &select,
    );
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("pdf-forms"), "{body}");
    // Wait (bounded) until a scheduled fire's span has been exported.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !receiver
        .spans()
        .iter()
        .any(|s| s.name == "skills.schedule.fire")
    {
        if Instant::now() >= deadline {
            terminate_quietly(&child);
            panic!(
                "no scheduled fire exported; logs:\n{}",
                logs.join().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    terminate(child);
    let logs = logs.join().unwrap();
    assert!(!logs.contains("telemetry:"), "telemetry warnings: {logs}");
    // The stderr log still works beside the exporters.
    assert!(logs.contains("shutting down"), "{logs}");
    drop(pack);
    receiver
}

fn terminate_quietly(child: &Child) {
    let _ = Command::new("kill")
        .args(["-KILL", &child.id().to_string()])
        .status();
}

#[test]
fn otlp_receiver_sees_spans_activations_and_metrics() {
    let r = run_server(false);
    let spans = r.spans();
    let names: BTreeSet<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    for want in [
        "POST /v1/route",
        "POST /v1/select",
        "skills.route",
        "skills.select",
        "skills.schedule.fire",
        "execute_tool ticks.tick",
        "execute_tool hello",
        "skills.registry.load",
    ] {
        assert!(names.contains(want), "no {want} span in {names:?}");
    }
    // The HTTP server span: `{method} {http.route}` with the route template.
    let http = spans.iter().find(|s| s.name == "POST /v1/route").unwrap();
    for (key, value) in [
        ("http.request.method", "POST"),
        ("http.route", "/v1/route"),
        ("url.path", "/v1/route"),
        ("url.scheme", "http"),
        ("network.protocol.version", "1.1"),
        ("http.response.status_code", "200"),
    ] {
        assert_eq!(
            attr(&http.attributes, key).as_deref(),
            Some(value),
            "{key} in {:?}",
            http.attributes
        );
    }
    // A tool run is one GenAI `execute_tool` span naming its tool; the operations around
    // runs do not claim to be tool runs.
    let run = spans
        .iter()
        .find(|s| s.name == "execute_tool ticks.tick")
        .unwrap();
    assert_eq!(
        attr(&run.attributes, "gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert_eq!(
        attr(&run.attributes, "gen_ai.tool.name").as_deref(),
        Some("ticks.tick")
    );
    for s in &spans {
        if attr(&s.attributes, "gen_ai.operation.name").as_deref() == Some("execute_tool") {
            assert!(
                s.name.starts_with("execute_tool ") || s.name.starts_with("tools/call "),
                "{}",
                s.name
            );
            assert!(
                attr(&s.attributes, "gen_ai.tool.name").is_some(),
                "{}",
                s.name
            );
        }
    }
    // The MCP server span (semantic-conventions-genai v0.1.0, MCP): `tools/call {tool}`,
    // continuing the trace its `params._meta` named.
    let mcp = spans
        .iter()
        .find(|s| s.name == "tools/call search_skills")
        .unwrap_or_else(|| panic!("no MCP span in {names:?}"));
    for (key, value) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "search_skills"),
        ("gen_ai.operation.name", "execute_tool"),
        ("jsonrpc.request.id", "9"),
        ("mcp.protocol.version", "2026-07-28"),
        ("network.transport", "tcp"),
    ] {
        assert_eq!(
            attr(&mcp.attributes, key).as_deref(),
            Some(value),
            "{key} in {:?}",
            mcp.attributes
        );
    }
    assert_eq!(hex(&mcp.trace_id), MCP_CALLER_TRACE);
    assert_eq!(hex(&mcp.parent_span_id), CALLER_SPAN);
    // The request that named its caller continues the caller's trace.
    let select = spans.iter().find(|s| s.name == "POST /v1/select").unwrap();
    assert_eq!(hex(&select.trace_id), CALLER_TRACE);
    assert_eq!(hex(&select.parent_span_id), CALLER_SPAN);
    // One that did not starts its own.
    assert!(http.parent_span_id.is_empty());
    assert_ne!(hex(&http.trace_id), CALLER_TRACE);
    // GenAI operation names on the engine's spans.
    let route = spans.iter().find(|s| s.name == "skills.route").unwrap();
    assert_eq!(
        attr(&route.attributes, "gen_ai.operation.name").as_deref(),
        Some("route")
    );
    // The route's span is a child of the HTTP request's span.
    let request = spans
        .iter()
        .find(|s| s.span_id == route.parent_span_id)
        .unwrap();
    assert_eq!(request.name, "POST /v1/route");

    let acts = activations(&spans);
    let has = |trigger: &str, name: &str, layer: &str, dialect: &str| {
        acts.iter().any(|a| {
            (a.0.as_str(), a.1.as_str(), a.2.as_str(), a.3.as_str())
                == (trigger, name, layer, dialect)
        })
    };
    assert!(has("model", "email.send", "layer2", "actions"), "{acts:?}");
    assert!(
        has("preflight_selection", "pdf-forms", "layer1", "agentskills"),
        "{acts:?}"
    );
    assert!(
        has("schedule", "ticks.tick", "layer3", "actions"),
        "{acts:?}"
    );

    let metrics = r.metric_names();
    for want in [
        "skills.activations",
        "skills.select.duration",
        "skills.script.runs",
        "skills.script.duration",
    ] {
        assert!(metrics.contains(want), "no {want} metric in {metrics:?}");
    }
    // Every metric has its unit, and no point carries a log message or a per-run value
    // as an attribute.
    for m in r.metrics() {
        let want = skill_runtime::activation::UNITS
            .iter()
            .find(|(name, _)| *name == m.name)
            .map(|(_, unit)| *unit);
        assert_eq!(Some(m.unit.as_str()), want, "{}", m.name);
        for key in point_attribute_keys(&m) {
            assert!(
                key != "message" && !key.contains("duration"),
                "{} carries {key}",
                m.name
            );
        }
    }

    // Content stays out by default: neither the argument value nor the message's words.
    let all = String::from_utf8_lossy(&r.everything()).into_owned();
    assert!(!all.contains(SECRET_ARG), "an argument value was exported");
    assert!(!all.contains(SECRET_WORD), "message text was exported");
}

#[test]
fn content_is_exported_only_when_the_operator_turns_it_on() {
    let r = run_server(true);
    let spans = r.spans();
    let route = spans.iter().find(|s| s.name == "skills.route").unwrap();
    assert!(
        attr(&route.attributes, "skills.input").is_some_and(|t| t.contains(SECRET_ARG)),
        "{:?}",
        route.attributes
    );
    let select = spans.iter().find(|s| s.name == "skills.select").unwrap();
    assert!(
        attr(&select.attributes, "skills.input").is_some_and(|t| t.contains(SECRET_WORD)),
        "{:?}",
        select.attributes
    );
}
