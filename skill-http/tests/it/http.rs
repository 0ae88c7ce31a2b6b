//! The HTTP server against hostile and careless clients, on a loopback port with short
//! configured limits: oversized and slow bodies, bad resource paths, skill names with
//! stray characters, how much it logs per request, and `HEAD` (a `GET`'s status and
//! headers without the body, the event stream's included).

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use skill_http::{App, HttpConfig};
use skill_registry::{RegistryConfig, Source};
use skill_runtime::{Engine, EngineConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::{captured_log, write};

/// Long enough for a loaded machine; every answer here should take milliseconds.
const IO_TIMEOUT: Duration = Duration::from_secs(20);

/// A server over `root` on its own task; it stops when the sender drops.
pub(crate) struct Server {
    pub(crate) addr: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<(), skill_runtime::Error>>,
}

impl Server {
    /// Shut down and wait until the server is done.
    pub(crate) async fn stop(self) {
        let _ = self.stop.send(());
        self.task.await.unwrap().unwrap();
    }
}

async fn start(root: &Path, http: HttpConfig) -> Server {
    start_with(
        RegistryConfig::with_sources(vec![Source::new(root, "project")]),
        http,
    )
    .await
}

/// A server over these sources (no watcher) on its own task.
pub(crate) async fn start_with(registry: RegistryConfig, http: HttpConfig) -> Server {
    let mut config = EngineConfig::new(registry);
    config.watch = None;
    let engine = Engine::start(config).unwrap();
    let (listener, addr) = skill_http::bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let app = App::new(engine, http);
    let task = tokio::spawn(skill_http::serve(listener, app, async {
        let _ = stopped.await;
    }));
    Server { addr, stop, task }
}

/// One skill with a resource file.
fn pack() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pdf-forms/SKILL.md",
        "---\nname: pdf-forms\ndescription: Fill PDF forms.\n---\nSee FORMS.md.\n",
    );
    write(dir.path(), "pdf-forms/FORMS.md", "# Forms\n");
    dir
}

/// An answer: status and body text.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) body: String,
}

/// Read one response (headers and a `Content-Length` body, or up to the close).
async fn read_reply(stream: &mut TcpStream) -> Reply {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = tokio::time::timeout(IO_TIMEOUT, stream.read(&mut chunk))
            .await
            .expect("no answer in time")
            .unwrap();
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let head = &text[..end];
            let length = head
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .unwrap_or(usize::MAX);
            if n == 0 || buf.len() >= end + 4 + length {
                let status = head.split(' ').nth(1).unwrap().parse().unwrap();
                let body = text[end + 4..].to_owned();
                return Reply { status, body };
            }
        } else if n == 0 {
            panic!("connection closed before an answer: {text:?}");
        }
    }
}

/// Send raw bytes on a new connection and read the answer.
async fn raw(addr: SocketAddr, request: &str) -> Reply {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    read_reply(&mut stream).await
}

pub(crate) async fn get(addr: SocketAddr, path: &str) -> Reply {
    raw(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"),
    )
    .await
}

/// The headers of a `POST /v1/select` declaring `length` bytes of body.
fn select_head(length: usize) -> String {
    format!(
        "POST /v1/select HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_length_over_the_limit_is_refused_before_the_body() {
    let dir = pack();
    let s = start(
        dir.path(),
        HttpConfig {
            max_body_bytes: 100,
            // Long: only the declared length can make the answer come at once.
            body_read_timeout: Duration::from_secs(600),
            request_timeout: Duration::from_secs(600),
            ..HttpConfig::default()
        },
    )
    .await;
    // At the limit the body is awaited; one over, refused without a byte of it.
    let r = raw(s.addr, &select_head(101)).await;
    assert_eq!(r.status, 413, "{}", r.body);
    assert!(r.body.contains("body_too_large"), "{}", r.body);
    let body = format!("{{\"message\":\"{}\"}}", "x".repeat(100 - 14));
    assert_eq!(body.len(), 100);
    let r = raw(s.addr, &format!("{}{body}", select_head(100))).await;
    assert_eq!(r.status, 200, "{}", r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_bodies_get_408_and_never_shut_out_other_clients() {
    let dir = pack();
    let s = start(
        dir.path(),
        HttpConfig {
            concurrency: 2,
            body_read_timeout: Duration::from_millis(1500),
            ..HttpConfig::default()
        },
    )
    .await;
    // More slow bodies than the concurrency limit, each one byte into 100,000.
    let mut slow = Vec::new();
    for _ in 0..6 {
        let mut stream = TcpStream::connect(s.addr).await.unwrap();
        stream
            .write_all(format!("{}{{", select_head(100_000)).as_bytes())
            .await
            .unwrap();
        slow.push(stream);
    }
    // Give the server the time to take them in.
    tokio::time::sleep(Duration::from_millis(200)).await;
    for path in ["/v1/health", "/v1/ready", "/v1/skills"] {
        let r = get(s.addr, path).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
    }
    for mut stream in slow {
        let r = read_reply(&mut stream).await;
        assert_eq!(r.status, 408, "{}", r.body);
        assert!(r.body.contains("body_timeout"), "{}", r.body);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_name_rule_for_a_skill_and_its_resources() {
    let dir = pack();
    let s = start(dir.path(), HttpConfig::default()).await;
    assert_eq!(get(s.addr, "/v1/skills/pdf-forms").await.status, 200);
    assert_eq!(
        get(s.addr, "/v1/skills/pdf-forms/resources/FORMS.md")
            .await
            .status,
        200
    );
    for name in [
        "pdf-forms%0a",
        "%20pdf-forms",
        "pdf-forms%09",
        "pdf-forms%0d%0a",
    ] {
        for path in [
            format!("/v1/skills/{name}"),
            format!("/v1/skills/{name}/resources"),
            format!("/v1/skills/{name}/resources/FORMS.md"),
        ] {
            let r = get(s.addr, &path).await;
            assert_eq!(r.status, 404, "{path}: {}", r.body);
        }
    }
}

/// A skill's detail is rendered once per generation: the second read is the same answer,
/// and after an edit and a reload the answer is the new one, never the kept one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_detail_never_outlives_its_generation() {
    let dir = pack();
    let s = start(dir.path(), HttpConfig::default()).await;
    let first = get(s.addr, "/v1/skills/pdf-forms").await;
    assert_eq!(first.status, 200);
    assert_eq!(get(s.addr, "/v1/skills/pdf-forms").await.body, first.body);
    write(
        dir.path(),
        "pdf-forms/SKILL.md",
        "---\nname: pdf-forms\ndescription: Fill and flatten PDF forms.\n---\nSee FORMS.md.\n",
    );
    let reload = raw(
        s.addr,
        "POST /v1/reload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(reload.status, 200, "{}", reload.body);
    let after = get(s.addr, "/v1/skills/pdf-forms").await;
    assert!(
        after.body.contains("Fill and flatten PDF forms."),
        "{}",
        after.body
    );
    assert!(!first.body.contains("flatten"));
    s.stop().await;
}

/// The issue's skill: a 4 MiB file of `#` lines (two million headings) made each outline
/// a 199 MB answer. It lists the limit's sections and says how many headings there are;
/// a second request and an unknown section answer from the outline kept with the skill.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_outline_of_a_flood_of_headings_is_bounded() {
    use skill_format::sections::MAX_OUTLINE_SECTIONS;
    let dir = tempfile::tempdir().unwrap();
    let head = "---\nname: flood\ndescription: Headings.\n---\n";
    let lines = (skill_format::MAX_FILE_BYTES - head.len()) / 2;
    let file = format!("{head}{}", "#\n".repeat(lines));
    write(dir.path(), "flood/SKILL.md", &file);
    let s = start(dir.path(), HttpConfig::default()).await;
    let r = get(s.addr, "/v1/skills/flood/outline").await;
    assert_eq!(r.status, 200, "{}", &r.body[..r.body.len().min(300)]);
    assert!(r.body.len() < 200 * 1024, "{} bytes", r.body.len());
    let o = json(&r);
    assert_eq!(
        o["sections"].as_array().unwrap().len(),
        MAX_OUTLINE_SECTIONS
    );
    assert_eq!(o["total_sections"], lines);
    assert_eq!(o["truncated"], true);
    assert_eq!(get(s.addr, "/v1/skills/flood/outline").await.body, r.body);
    let r = get(s.addr, "/v1/skills/flood/sections/section-5000").await;
    assert_eq!(r.status, 404, "{}", &r.body[..r.body.len().min(300)]);
    let r = get(s.addr, "/v1/skills/flood/sections/section-999").await;
    assert_eq!(r.status, 200);
    s.stop().await;
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_resource_paths_are_4xx_and_never_name_a_server_path() {
    let dir = pack();
    let folder = dir.path().join("pdf-forms");
    std::os::unix::fs::symlink("loop", folder.join("loop")).unwrap();
    std::os::unix::fs::symlink("b-link", folder.join("a-link")).unwrap();
    std::os::unix::fs::symlink("a-link", folder.join("b-link")).unwrap();
    let s = start(dir.path(), HttpConfig::default()).await;
    let temp = dir.path().to_string_lossy().into_owned();
    let canonical = std::fs::canonicalize(dir.path())
        .unwrap()
        .to_string_lossy()
        .into_owned();
    for (rel, expected) in [
        ("FORMS.md/..", 404),
        ("FORMS.md/x", 404),
        ("FORMS.md/x/y", 404),
        ("FORMS.md%2F..", 404),
        ("loop", 400),
        ("a-link", 400),
        ("loop/x", 400),
        ("missing.md", 404),
        ("..", 400),
        ("../pdf-forms/FORMS.md", 400),
        ("%2Fetc%2Fpasswd", 400),
    ] {
        let path = format!("/v1/skills/pdf-forms/resources/{rel}");
        let r = get(s.addr, &path).await;
        assert_eq!(r.status, expected, "{path}: {}", r.body);
        assert!(
            !r.body.contains(&temp) && !r.body.contains(&canonical),
            "{path} names a server path: {}",
            r.body
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_are_logged_at_debug_with_a_summary_at_info() {
    let log = captured_log();
    let dir = pack();
    let s = start(dir.path(), HttpConfig::default()).await;
    let addr = s.addr;
    for i in 0..50 {
        let r = raw(
            addr,
            &format!("GET /v1/health HTTP/1.1\r\nHost: localhost\r\nx-request-id: logged-{i}\r\nConnection: close\r\n\r\n"),
        )
        .await;
        assert_eq!(r.status, 200);
    }
    assert_eq!(get(addr, "/v1/nowhere").await.status, 404);
    // Shutting down writes the summary of what is not summed up yet.
    s.stop().await;
    let text = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
    let per_request = text.lines().filter(|l| l.contains("logged-")).count();
    assert_eq!(
        per_request, 0,
        "requests logged one by one at INFO:\n{text}"
    );
    let summary = text
        .lines()
        .find(|l| l.contains("requests answered") && l.contains(&addr.to_string()))
        .unwrap_or_else(|| panic!("no summary line for {addr}:\n{text}"));
    assert!(
        summary.contains("requests=51") && summary.contains("client_errors=1"),
        "{summary}"
    );
}

fn json(reply: &Reply) -> serde_json::Value {
    serde_json::from_str(&reply.body).unwrap_or_else(|e| panic!("{e}: {}", reply.body))
}

/// The operation `method path` of a document.
fn operation<'a>(doc: &'a serde_json::Value, method: &str, path: &str) -> &'a serde_json::Value {
    &doc["paths"][path][method]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_document_states_security_as_the_server_is_configured() {
    let dir = pack();
    let open = start(dir.path(), HttpConfig::default()).await;
    let doc = json(&get(open.addr, "/v1/openapi.json").await);
    for (path, methods) in doc["paths"].as_object().unwrap() {
        for (method, op) in methods.as_object().unwrap() {
            assert!(
                op.get("security").is_none(),
                "{method} {path} without a token"
            );
        }
    }
    let secured = start(
        dir.path(),
        HttpConfig {
            token: Some("t0ken".into()),
            ..HttpConfig::default()
        },
    )
    .await;
    let doc = json(&get(secured.addr, "/v1/openapi.json").await);
    assert_eq!(
        operation(&doc, "post", "/v1/route")["security"],
        serde_json::json!([{ "bearer": [] }])
    );
    assert!(
        operation(&doc, "post", "/v1/select")
            .get("security")
            .is_none()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_document_types_parameters_and_bodies_as_the_server_checks_them() {
    let dir = pack();
    let s = start(dir.path(), HttpConfig::default()).await;
    let doc = json(&get(s.addr, "/v1/openapi.json").await);
    let param = |method: &str, path: &str, name: &str| {
        operation(&doc, method, path)["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{path} has no `{name}`"))["schema"]
            .clone()
    };
    let format = param("get", "/v1/catalog", "format");
    assert_eq!(
        format["enum"],
        serde_json::json!(["markdown", "xml", "json"])
    );
    let limit = param("get", "/v1/search", "limit");
    assert_eq!(limit["type"], "integer");
    // One rule at every door: a count outside its range is refused, never clamped.
    assert_eq!(limit["minimum"], 1);
    assert_eq!(limit["maximum"], skill_search::MAX_LIMIT);
    // An empty query value counts as left out, so a required one says it cannot be empty.
    for (path, name) in [("/v1/search", "q"), ("/v1/notes/search", "q")] {
        assert_eq!(param("get", path, name)["minLength"], 1, "{path} {name}");
    }
    assert!(
        param("get", "/v1/search", "profile")
            .get("minLength")
            .is_none()
    );
    let tz = param("get", "/v1/schedules", "tz");
    let zones = tz["enum"].as_array().unwrap();
    assert!(zones.iter().any(|z| z == "Europe/Paris") && zones.iter().any(|z| z == "UTC"));
    let body = |path: &str| {
        operation(&doc, "post", path)["requestBody"]["content"]["application/json"]["schema"]
            .clone()
    };
    let route = body("/v1/route");
    assert_eq!(route["additionalProperties"], false);
    assert_eq!(
        route["oneOf"],
        serde_json::json!([{ "required": ["text"] }, { "required": ["output"] }])
    );
    assert_eq!(
        route["properties"]["from"]["enum"],
        serde_json::json!(["model", "user"])
    );
    let select = body("/v1/select");
    assert_eq!(
        select["properties"]["recent_turns"]["items"]["type"],
        "string"
    );
    assert_eq!(select["required"], serde_json::json!(["message"]));
    // A workflow goes only into a configured workflow domain: the document lists them.
    assert_eq!(
        body("/v1/workflows")["properties"]["domain"]["enum"],
        serde_json::json!(["workflows"])
    );

    // And the server holds to it: an empty free-text parameter is a left-out one, an
    // empty count, choice or zone is refused; counts are bounded; `null` is no value for a
    // field; exactly one of the alternatives is given.
    for path in [
        "/v1/catalog?profile=&caller=model",
        "/v1/skills?layer=&domain=",
        "/v1/search?q=forms&profile=",
        &format!("/v1/search?q=forms&limit={}", skill_search::MAX_LIMIT),
    ] {
        assert_eq!(get(s.addr, path).await.status, 200, "{path}");
    }
    for path in [
        format!("/v1/search?q=forms&limit={}", skill_search::MAX_LIMIT + 1),
        "/v1/search?q=forms&limit=0".to_owned(),
        "/v1/search?q=forms&limit=".to_owned(),
        "/v1/search?limit=3".to_owned(),
        "/v1/catalog?format=".to_owned(),
        "/v1/catalog?caller=robot".to_owned(),
        "/v1/schedules?tz=".to_owned(),
        "/v1/schedules?from=".to_owned(),
        "/v1/schedules?tz=Mars/Olympus".to_owned(),
    ] {
        assert_eq!(get(s.addr, &path).await.status, 400, "{path}");
    }
    for (path, body, status) in [
        ("/v1/route", r#"{}"#, 400),
        ("/v1/route", r#"{"text":"x","output":"y"}"#, 400),
        ("/v1/route", r#"{"text":"x","output":null}"#, 400),
        ("/v1/route", r#"{"text":"pdf-forms"}"#, 200),
        ("/v1/execute", r#"{}"#, 400),
        (
            "/v1/select",
            r#"{"message":"x","recent_turns":[null]}"#,
            400,
        ),
        ("/v1/select", r#"{"message":"x","profile":null}"#, 400),
        // Arrays of the fields in order (serde reads structs from them) are not objects.
        ("/v1/select", r#"["explain closures"]"#, 400),
        ("/v1/route", r#"["tasks.search"]"#, 400),
        ("/v1/select", r#" {"message":"x"}"#, 200),
        ("/v1/select", r#"{"message":"x","max_skills":0}"#, 400),
        ("/v1/select", r#"{"message":"x","max_skills":21}"#, 400),
        ("/v1/select", r#"{"message":"x","max_skills":20}"#, 200),
        (
            "/v1/select",
            r#"{"message":"x","budget_tokens":4294967296}"#,
            400,
        ),
        (
            "/v1/select",
            r#"{"message":"x","budget_tokens":4294967295}"#,
            200,
        ),
        ("/v1/workflows", r#"{"name":5,"description":"d"}"#, 400),
        // No writable source: the server's state refuses it, the request is fine.
        ("/v1/workflows", r#"{"name":"w","description":"d"}"#, 409),
        ("/v1/workflows", r#"{"name":"W","description":"d"}"#, 422),
        (
            "/v1/workflows",
            r#"{"name":"w","description":"d","overwrite":"yes"}"#,
            400,
        ),
    ] {
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let r = raw(s.addr, &request).await;
        assert_eq!(r.status, status, "{path} {body}: {}", r.body);
    }
}

/// One answer read off the wire: status, headers (names in lower case) and body bytes.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Send `requests` (method, path) pipelined on one connection with this `Host`, the last
/// with `Connection: close`; read until the server closes and split what came into one
/// answer per request. A `HEAD`'s answer is taken to end with its headers, so a byte of
/// body after them would spoil the next answer: the parse checks each one starts with a
/// status line and that nothing is left over.
async fn exchange(addr: SocketAddr, host: &str, requests: &[(&str, &str)]) -> Vec<Answer> {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut text = String::new();
    for (i, (method, path)) in requests.iter().enumerate() {
        let close = if i + 1 == requests.len() {
            "Connection: close\r\n"
        } else {
            ""
        };
        text.push_str(&format!(
            "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\n{close}\r\n"
        ));
    }
    stream.write_all(text.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    tokio::time::timeout(IO_TIMEOUT, stream.read_to_end(&mut buf))
        .await
        .expect("the server did not finish answering in time")
        .unwrap();
    let mut answers = Vec::new();
    let mut rest = &buf[..];
    for (i, (method, path)) in requests.iter().enumerate() {
        let end = rest
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or_else(|| {
                panic!(
                    "{method} {path}: no answer in {:?}",
                    String::from_utf8_lossy(rest)
                )
            });
        let head = std::str::from_utf8(&rest[..end]).unwrap();
        assert!(head.starts_with("HTTP/1.1 "), "{method} {path}: {head:?}");
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let headers: Vec<(String, String)> = lines
            .map(|l| {
                let (k, v) = l.split_once(':').unwrap();
                (k.trim().to_ascii_lowercase(), v.trim().to_owned())
            })
            .collect();
        rest = &rest[end + 4..];
        let length = if *method == "HEAD" {
            0
        } else if let Some((_, v)) = headers.iter().find(|(k, _)| k == "content-length") {
            v.parse().unwrap()
        } else {
            assert_eq!(i + 1, requests.len(), "{method} {path}: no length");
            rest.len()
        };
        answers.push(Answer {
            status,
            headers,
            body: rest[..length].to_vec(),
        });
        rest = &rest[length..];
    }
    assert!(
        rest.is_empty(),
        "bytes after the last answer: {:?}",
        String::from_utf8_lossy(rest)
    );
    answers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn head_answers_as_get_would_without_the_body() {
    let dir = pack();
    let s = start(dir.path(), HttpConfig::default()).await;
    for path in [
        "/v1/health",
        "/v1/ready",
        "/v1/skills",
        "/v1/skills?status=all",
        "/v1/skills/pdf-forms",
        "/v1/skills/pdf-forms/resources/FORMS.md",
        "/v1/openapi.json",
        "/.well-known/agent-skills/index.json",
        "/.well-known/agent-skills/pdf-forms/SKILL.md",
        // Refusals too: an unknown skill, a bad query, no endpoint at all.
        "/v1/skills/nope",
        "/v1/skills?status=maybe",
        "/v1/nowhere",
    ] {
        // GET, HEAD, GET on one connection: the HEAD has the status and headers of the
        // GETs around it (the health's uptime may gain a digit between them) and no body.
        let answers = exchange(
            s.addr,
            "localhost",
            &[("GET", path), ("HEAD", path), ("GET", path)],
        )
        .await;
        let [before, head, after] = &answers[..] else {
            unreachable!()
        };
        assert_eq!(head.status, before.status, "HEAD {path}");
        assert!(head.body.is_empty(), "HEAD {path}");
        for name in ["content-type", "cache-control", "etag", "www-authenticate"] {
            assert_eq!(
                head.header(name),
                before.header(name),
                "HEAD {path}: {name}"
            );
        }
        let length: usize = head
            .header("content-length")
            .unwrap_or_else(|| panic!("HEAD {path} has no content-length"))
            .parse()
            .unwrap();
        assert!(
            length == before.body.len() || length == after.body.len(),
            "HEAD {path}: content-length {length}, the GETs' bodies {} and {}",
            before.body.len(),
            after.body.len()
        );
        assert!(!before.body.is_empty(), "GET {path}");
    }
    let answers = exchange(s.addr, "localhost", &[("HEAD", "/v1/health")]).await;
    assert_eq!(answers[0].status, 200);
    assert_eq!(answers[0].header("content-type"), Some("application/json"));
    assert!(answers[0].header("x-request-id").is_some());
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn head_is_refused_where_get_is() {
    let dir = pack();
    let s = start(
        dir.path(),
        HttpConfig {
            token: Some("t0ken".into()),
            ..HttpConfig::default()
        },
    )
    .await;
    // A name the server does not serve: refused alike (403), but probes answer any name.
    let answers = exchange(
        s.addr,
        "evil.example",
        &[
            ("GET", "/v1/skills"),
            ("HEAD", "/v1/skills"),
            ("HEAD", "/v1/health"),
            ("GET", "/v1/health"),
        ],
    )
    .await;
    let [get, head, probe, _] = &answers[..] else {
        unreachable!()
    };
    assert_eq!((get.status, head.status), (403, 403));
    assert_eq!(head.header("content-type"), Some("application/json"));
    assert_eq!(
        head.header("content-length"),
        Some(get.body.len().to_string().as_str())
    );
    assert!(head.body.is_empty());
    assert_eq!(probe.status, 200);
    // A read endpoint needs no token, for HEAD as for GET.
    let answers = exchange(s.addr, "localhost", &[("HEAD", "/v1/skills/pdf-forms")]).await;
    assert_eq!(answers[0].status, 200);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_405_names_head_wherever_it_names_get() {
    let dir = pack();
    let s = start(dir.path(), HttpConfig::default()).await;
    // Where GET is allowed, so is HEAD, and a 405 says so; HEAD is no way into a POST.
    for (method, path, allow) in [
        ("POST", "/v1/health", "GET, HEAD"),
        ("DELETE", "/v1/skills", "GET, HEAD"),
        (
            "PUT",
            "/v1/skills/pdf-forms/resources/FORMS.md",
            "GET, HEAD",
        ),
        ("POST", "/.well-known/agent-skills/index.json", "GET, HEAD"),
        ("HEAD", "/v1/select", "POST"),
        ("HEAD", "/v1/reload", "POST"),
        ("GET", "/v1/reload", "POST"),
    ] {
        let answers = exchange(s.addr, "localhost", &[(method, path)]).await;
        assert_eq!(answers[0].status, 405, "{method} {path}");
        assert_eq!(answers[0].header("allow"), Some(allow), "{method} {path}");
        assert_eq!(
            answers[0].body.is_empty(),
            method == "HEAD",
            "{method} {path}"
        );
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn head_of_the_event_stream_ends_at_once_and_holds_no_slot() {
    let dir = pack();
    let s = start(
        dir.path(),
        HttpConfig {
            max_event_streams: 1,
            ..HttpConfig::default()
        },
    )
    .await;
    // Each HEAD is answered and over (the next answer follows on the same connection),
    // and gives its slot back: three in a row fit under a limit of one.
    let answers = exchange(
        s.addr,
        "localhost",
        &[
            ("HEAD", "/v1/events"),
            ("HEAD", "/v1/events"),
            ("HEAD", "/v1/events"),
            ("GET", "/v1/health"),
        ],
    )
    .await;
    for head in &answers[..3] {
        assert_eq!(head.status, 200);
        assert_eq!(head.header("content-type"), Some("text/event-stream"));
        assert_eq!(head.header("cache-control"), Some("no-cache"));
        // A stream's length is not known: none is claimed.
        assert_eq!(head.header("content-length"), None);
    }
    assert_eq!(answers[3].status, 200);

    // With the one slot taken by a GET, a HEAD is refused as a GET would be.
    let mut stream = TcpStream::connect(s.addr).await.unwrap();
    stream
        .write_all(b"GET /v1/events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(IO_TIMEOUT, stream.read(&mut chunk))
            .await
            .expect("no stream in time")
            .unwrap();
        assert!(n > 0, "the stream closed");
        buf.extend_from_slice(&chunk[..n]);
    }
    assert!(buf.starts_with(b"HTTP/1.1 200"));
    let answers = exchange(
        s.addr,
        "localhost",
        &[("GET", "/v1/events"), ("HEAD", "/v1/events")],
    )
    .await;
    assert_eq!((answers[0].status, answers[1].status), (503, 503));
    assert_eq!(
        answers[1].header("content-length"),
        Some(answers[0].body.len().to_string().as_str())
    );
    drop(stream);
    s.stop().await;
}
