//! The HTTP API end to end: a real server on an ephemeral loopback port, driven over TCP
//! with a small HTTP/1.1 client, through every endpoint, with the bundled packs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::Value;
use skill_http::{App, HttpConfig, MountedService, Mounts};
use skill_registry::{RegistryConfig, Source, WatchOptions};
use skill_runtime::exec::{BoxError, Call, Output, RuntimeBuilder};
use skill_runtime::{Engine, EngineConfig};
use skills_tests::{repo_root, skill_md, write};

pub(crate) const PACKS: &[&str] = &[
    "packs/agentskills",
    "packs/actions",
    "packs/lily",
    "packs/pegasus",
    "packs/toolsets",
];
const TOKEN: &str = "test-token-123";
/// Long enough for a loaded CI machine; the happy path takes milliseconds.
pub(crate) const IO_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) struct Server {
    pub(crate) addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    /// Ask the server to shut down, without waiting.
    fn begin_stop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }

    /// Shut down (the HTTP server, then the engine) and return how long it took.
    fn stop(mut self) -> Duration {
        let started = Instant::now();
        self.begin_stop();
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
        started.elapsed()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub(crate) fn start(sources: Vec<Source>, watch: bool, http: HttpConfig) -> Server {
    let mut config = EngineConfig::new(RegistryConfig::with_sources(sources));
    config.watch = watch.then(WatchOptions::default);
    launch(config, http)
}

/// Run an engine and the server on their own runtime thread until the `Server` drops.
pub(crate) fn launch(config: EngineConfig, http: HttpConfig) -> Server {
    launch_with(config, http, |b| b)
}

/// [`launch`], with the host's own handlers registered on the executor.
fn launch_with(
    config: EngineConfig,
    http: HttpConfig,
    customize: impl FnOnce(RuntimeBuilder) -> RuntimeBuilder + Send + 'static,
) -> Server {
    launch_mounted(config, http, customize, Mounts::default())
}

/// [`launch_with`], with services mounted beside `/v1`.
pub(crate) fn launch_mounted(
    config: EngineConfig,
    http: HttpConfig,
    customize: impl FnOnce(RuntimeBuilder) -> RuntimeBuilder + Send + 'static,
    mounts: Mounts,
) -> Server {
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let engine = Engine::start_with(config, customize).unwrap();
            let (listener, addr) = skill_http::bind("127.0.0.1:0".parse().unwrap())
                .await
                .unwrap();
            addr_tx.send(addr).unwrap();
            let app = App::with_mounts(engine.clone(), http, mounts);
            skill_http::serve(listener, app, async {
                let _ = stop_rx.await;
            })
            .await
            .unwrap();
            engine.shutdown().await;
        });
    });
    let addr = addr_rx.recv_timeout(IO_TIMEOUT).unwrap();
    Server {
        addr,
        stop: Some(stop_tx),
        thread: Some(thread),
    }
}

pub(crate) fn packs() -> Vec<Source> {
    let root = repo_root();
    PACKS
        .iter()
        .enumerate()
        .map(|(i, p)| Source::new(root.join(p), format!("layer{}", i + 1)))
        .collect()
}

fn bundled() -> Server {
    start(
        packs(),
        false,
        HttpConfig {
            token: Some(TOKEN.into()),
            ..HttpConfig::default()
        },
    )
}

#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

pub(crate) fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    s
}

/// One request on its own connection (`Connection: close`), read to the end.
pub(crate) fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    let mut s = connect(addr);
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).unwrap();
    // A server may answer before the body is sent (413 for a declared length over the
    // limit) and close: the rest of the body then meets a closed connection, and the
    // answer already sent is what the test reads.
    if let Err(e) = s.write_all(body) {
        assert!(closed_early(&e), "writing the body: {e}");
    }
    let mut raw = Vec::new();
    if let Err(e) = s.read_to_end(&mut raw) {
        assert!(
            closed_early(&e) && !raw.is_empty(),
            "reading the answer: {e}"
        );
    }
    parse(&raw)
}

/// Whether an I/O error is the peer having closed the connection.
fn closed_early(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
    )
}

fn parse(raw: &[u8]) -> Reply {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("no end of headers");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        body = dechunk(&body);
    }
    Reply {
        status,
        headers,
        body,
    }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(end) = data.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size =
            usize::from_str_radix(std::str::from_utf8(&data[..end]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[end + 2..end + 2 + size]);
        data = &data[end + 2 + size + 2..];
    }
}

pub(crate) fn get(addr: SocketAddr, path: &str) -> Reply {
    request(addr, "GET", path, &[], b"")
}

pub(crate) fn post(addr: SocketAddr, path: &str, json: &Value) -> Reply {
    request(
        addr,
        "POST",
        path,
        &[
            ("Content-Type", "application/json"),
            ("Authorization", &format!("Bearer {TOKEN}")),
        ],
        json.to_string().as_bytes(),
    )
}

// --- Read endpoints ----------------------------------------------------------------------

#[test]
fn health_ready_skills_and_detail() {
    let s = bundled();
    let h = get(s.addr, "/v1/health");
    assert_eq!(h.status, 200);
    assert_eq!(h.json()["status"], "ok");
    assert!(h.header("x-request-id").unwrap().starts_with("req-"));
    assert_eq!(get(s.addr, "/v1/ready").status, 200);

    let all = get(s.addr, "/v1/skills").json();
    let names: Vec<&str> = all["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"pdf-forms") && names.contains(&"email.send"));
    let email = get(s.addr, "/v1/skills?domain=email").json();
    assert_eq!(email["count"], 4);
    let by_user = get(s.addr, "/v1/skills?invocable_by=user").json();
    assert!(!by_user.to_string().contains("\"project-conventions\""));
    let by_model = get(s.addr, "/v1/skills?invocable_by=model").json();
    assert!(!by_model.to_string().contains("\"name\":\"commit\""));
    let layer = get(s.addr, "/v1/skills?layer=layer4").json();
    assert!(
        layer["skills"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["layer"] == "layer4")
    );
    let kids = get(s.addr, "/v1/skills?profile=kids_mode").json();
    assert!(!kids.to_string().contains("\"meeting-notes\""));
    // Each skill says its source's trust level (layers other than builtin, user and
    // project are low).
    assert!(
        all["skills"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["trust"] == "low")
    );
    // Every profile the skills' affinity lists name, with how many skills name it.
    let profiles = get(s.addr, "/v1/profiles").json();
    let guest = profiles["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "guest_readonly")
        .unwrap();
    assert_eq!(guest["excluded"], 2, "{profiles}");
    assert_eq!(guest["configured"], false);
    // A skill's page: its affinity under each of them.
    let home = get(s.addr, "/v1/skills/home-automation").json();
    assert_eq!(home["trust"], "low");
    let under = |p: &str| {
        home["profiles"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["profile"] == p)
            .cloned()
            .unwrap()
    };
    assert_eq!(under("guest_readonly")["affinity"], "excluded");
    assert_eq!(under("guest_readonly")["eligible"], false);
    assert_eq!(under("household")["affinity"], "proactive");
    assert_eq!(under("household")["eligible"], true);
    // Not named by its lists: its default (`include_in_prompt_default: false`), usable on
    // request.
    assert_eq!(under("kids_mode")["affinity"], "not-listed");
    assert_eq!(under("kids_mode")["eligible"], true);
    assert_eq!(get(s.addr, "/v1/skills?status=bogus").status, 400);

    let d = get(s.addr, "/v1/skills/pdf-forms").json();
    assert_eq!(d["name"], "pdf-forms");
    assert!(d["body"].as_str().unwrap().contains("PDF"));
    let missing = get(s.addr, "/v1/skills/pdf-form");
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json()["error"]["code"], "unknown_skill");
    assert!(
        missing.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("pdf-forms")
    );
}

#[test]
fn resources_get_skill_catalog_and_diagnostics() {
    let s = bundled();
    let list = get(s.addr, "/v1/skills/pdf-forms/resources").json();
    assert!(list.to_string().contains("references/FORMS.md"));
    // Each file with the digest the manifest holds: the SHA-256 of its bytes.
    let forms =
        std::fs::read(repo_root().join("packs/agentskills/pdf-forms/references/FORMS.md")).unwrap();
    let entry = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == "references/FORMS.md")
        .unwrap();
    assert_eq!(
        entry["sha256"],
        skill_registry::Sha256::of(&forms).to_hex(),
        "{list}"
    );
    let file = get(s.addr, "/v1/skills/pdf-forms/resources/references/FORMS.md");
    assert_eq!(file.status, 200);
    assert!(
        file.header("content-type")
            .unwrap()
            .starts_with("text/plain")
    );
    let encoded = get(
        s.addr,
        "/v1/skills/pdf-forms/resources/references%2FFORMS.md",
    );
    assert_eq!(encoded.body, file.body);
    for bad in [
        "/v1/skills/pdf-forms/resources/..%2Frelease-checklist%2FSKILL.md",
        "/v1/skills/pdf-forms/resources/%2Fetc%2Fpasswd",
        "/v1/skills/pdf-forms/resources/a%00b",
    ] {
        let r = get(s.addr, bad);
        assert_eq!(r.status, 400, "{bad}: {}", r.text());
        assert_eq!(r.json()["error"]["code"], "bad_resource_path");
    }
    assert_eq!(
        get(s.addr, "/v1/skills/pdf-forms/resources/nope.txt").status,
        404
    );

    let top = get(s.addr, "/v1/get_skill").json();
    assert!(
        top["text"]
            .as_str()
            .unwrap()
            .starts_with("Available skill domains:")
    );
    let send = get(s.addr, "/v1/get_skill?path=email.send").json();
    assert!(send["text"].as_str().unwrap().contains("## Usage"));
    let unknown = get(s.addr, "/v1/get_skill?path=emial");
    assert_eq!(unknown.status, 404);
    assert_eq!(
        unknown.json()["error"]["message"],
        "Unknown domain: emial. Did you mean: email?"
    );

    let c = get(s.addr, "/v1/catalog?budget_chars=900").json();
    assert!(c["report"]["used_chars"].as_u64().unwrap() <= 900);
    assert!(!c["report"]["omitted"].as_array().unwrap().is_empty());
    let xml = get(s.addr, "/v1/catalog?format=xml").json();
    assert!(
        xml["text"]
            .as_str()
            .unwrap()
            .starts_with("<available_skills>")
    );
    assert_eq!(get(s.addr, "/v1/catalog?format=yaml").status, 400);
    assert_eq!(get(s.addr, "/v1/catalog?budget_chars=-1").status, 400);

    let d = get(s.addr, "/v1/diagnostics").json();
    assert!(d["warnings"].as_u64().is_some());
    let sched = get(s.addr, "/v1/schedules?next=3").json();
    let digest = sched["schedules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["skill"] == "workflows.daily_digest")
        .expect("the daily digest is scheduled");
    assert_eq!(digest["expression"], "0 8 * * 1-5");
    assert_eq!(digest["next"].as_array().unwrap().len(), 3);
    assert_eq!(get(s.addr, "/v1/schedules?tz=Mars/Base").status, 400);
}

#[test]
fn search_select_extract_and_route() {
    let s = bundled();
    let r = get(s.addr, "/v1/search?q=fill+a+pdf+form").json();
    assert_eq!(r["matches"][0]["name"], "pdf-forms");
    let weird = get(s.addr, "/v1/search?q=AND+%28%28%22*+%3A");
    assert_eq!(weird.status, 200, "{}", weird.text());

    let sel = post(
        s.addr,
        "/v1/select",
        &serde_json::json!({ "message": "please convert 5 miles to kilometres" }),
    );
    assert_eq!(sel.status, 200, "{}", sel.text());
    assert_eq!(
        sel.json()["selected_skills"][0]["skill_id"],
        "unit-converter"
    );

    let ex = post(
        s.addr,
        "/v1/extract",
        &serde_json::json!({ "output": "Sure.\n```cmd\nemail.send --to a@b.c\n```\n" }),
    );
    assert_eq!(ex.status, 200, "{}", ex.text());
    assert!(ex.text().contains("email.send --to a@b.c"));

    let route = post(
        s.addr,
        "/v1/route",
        &serde_json::json!({ "text": "tasks.search --status open" }),
    )
    .json();
    assert_eq!(route["route"], "invoke");
    let slash = post(
        s.addr,
        "/v1/route",
        &serde_json::json!({ "text": "/skills", "from": "user" }),
    )
    .json();
    assert_eq!(slash["route"], "skill_list");
    let out = post(
        s.addr,
        "/v1/route",
        &serde_json::json!({ "output": "```cmd\nget_skill: email\nemail.sned --to x\n```" }),
    )
    .json();
    assert_eq!(out["routes"].as_array().unwrap().len(), 2);
    let both = post(
        s.addr,
        "/v1/route",
        &serde_json::json!({ "text": "a", "output": "b" }),
    );
    assert_eq!(both.status, 400);
}

// --- Protocol, errors and safety ----------------------------------------------------------

#[test]
fn errors_methods_bodies_and_tokens() {
    let s = bundled();
    let r = get(s.addr, "/v1/nothing-here");
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["error"]["code"], "not_found");
    let r = request(s.addr, "DELETE", "/v1/skills", &[], b"");
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("GET, HEAD"));

    let auth = format!("Bearer {TOKEN}");
    let r = request(
        s.addr,
        "POST",
        "/v1/route",
        &[("Content-Type", "application/json")],
        b"{}",
    );
    assert_eq!(r.status, 401);
    assert_eq!(r.header("www-authenticate"), Some("Bearer"));
    let r = request(
        s.addr,
        "POST",
        "/v1/route",
        &[
            ("Content-Type", "application/json"),
            ("Authorization", "Bearer wrong"),
        ],
        b"{\"text\":\"x\"}",
    );
    assert_eq!(r.status, 401);
    let r = request(
        s.addr,
        "POST",
        "/v1/route",
        &[
            ("Content-Type", "application/json"),
            ("Authorization", &auth),
        ],
        b"{not json",
    );
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["code"], "bad_json");
    let r = request(
        s.addr,
        "POST",
        "/v1/route",
        &[("Content-Type", "text/plain"), ("Authorization", &auth)],
        b"{\"text\":\"x\"}",
    );
    assert_eq!(r.status, 415);
    let big = vec![b'a'; skill_http::DEFAULT_MAX_BODY_BYTES + 1];
    let r = request(
        s.addr,
        "POST",
        "/v1/route",
        &[
            ("Content-Type", "application/json"),
            ("Authorization", &auth),
        ],
        &big,
    );
    assert_eq!(r.status, 413);
    // The scheme is case-insensitive (RFC 7235); the token is read from that header only.
    let route = |path: &str, headers: &[(&str, &str)]| {
        let mut all = vec![("Content-Type", "application/json")];
        all.extend_from_slice(headers);
        request(s.addr, "POST", path, &all, b"{\"text\":\"x\"}").status
    };
    let lower = format!("bearer {TOKEN}");
    let upper = format!("BEARER  {TOKEN} ");
    assert_eq!(route("/v1/route", &[("Authorization", &lower)]), 200);
    assert_eq!(route("/v1/route", &[("Authorization", &upper)]), 200);
    let in_query = format!("/v1/route?access_token={TOKEN}&token={TOKEN}");
    assert_eq!(route(&in_query, &[]), 401);
    let cookie = format!("token={TOKEN}; access_token={TOKEN}");
    assert_eq!(route("/v1/route", &[("Cookie", &cookie)]), 401);
    let basic = format!("Basic {TOKEN}");
    assert_eq!(route("/v1/route", &[("Authorization", &basic)]), 401);
    assert_eq!(route("/v1/route", &[("Authorization", TOKEN)]), 401);
    let prefix = format!("Bearer {}", &TOKEN[..TOKEN.len() - 1]);
    assert_eq!(route("/v1/route", &[("Authorization", &prefix)]), 401);
    let longer = format!("Bearer {TOKEN}4");
    assert_eq!(route("/v1/route", &[("Authorization", &longer)]), 401);
    // Reading endpoints need no token; the request id is echoed.
    let r = request(
        s.addr,
        "GET",
        "/v1/health",
        &[("x-request-id", "abc-1")],
        b"",
    );
    assert_eq!(r.header("x-request-id"), Some("abc-1"));
}

#[test]
fn slow_and_idle_clients_do_not_block_others() {
    let s = bundled();
    // A client that sends half a request line and stalls, and many idle connections.
    let mut slow = connect(s.addr);
    slow.write_all(b"GET /v1/hea").unwrap();
    let idle: Vec<TcpStream> = (0..200).map(|_| connect(s.addr)).collect();
    let r = get(s.addr, "/v1/health");
    assert_eq!(r.status, 200);
    drop(idle);
}

/// A value of a documented body field's type.
fn sample(ty: &str) -> Value {
    match ty {
        "string" => Value::from("x"),
        "integer" => Value::from(1),
        "boolean" => Value::from(false),
        "array" => serde_json::json!(["x"]),
        other => panic!("the OpenAPI document uses an unexpected type {other}"),
    }
}

#[test]
fn the_openapi_document_matches_the_served_routes() {
    let s = bundled();
    let doc = get(s.addr, "/v1/openapi.json").json();
    assert_eq!(doc["openapi"], "3.0.3");
    let paths = doc["paths"].as_object().unwrap();
    assert!(paths.len() >= 18);
    // A workflow built answers 201, and the document says so (it said 200).
    let created = &paths["/v1/workflows"]["post"]["responses"];
    assert!(
        created["201"].is_object() && created["200"].is_null(),
        "{created}"
    );
    let auth = format!("Bearer {TOKEN}");
    let mut bodies_checked = 0;
    for (path, methods) in paths {
        for (method, op) in methods.as_object().unwrap() {
            // Every documented operation exists: it never answers 404 not_found or 405.
            let concrete = path
                .replace("{name}", "pdf-forms")
                .replace("{path}", "references/FORMS.md")
                .replace("{id}", "1");
            if concrete == "/v1/events" {
                continue;
            }
            // A body with every documented field: none of them is unknown to the server.
            let schema = &op["requestBody"]["content"]["application/json"]["schema"];
            let body = match schema["properties"].as_object() {
                Some(props) => {
                    bodies_checked += 1;
                    let fields: serde_json::Map<String, Value> = props
                        .iter()
                        .map(|(k, v)| (k.clone(), sample(v["type"].as_str().unwrap())))
                        .collect();
                    Value::Object(fields).to_string()
                }
                None => String::new(),
            };
            let r = request(
                s.addr,
                &method.to_uppercase(),
                &concrete,
                &[
                    ("Content-Type", "application/json"),
                    ("Authorization", &auth),
                ],
                body.as_bytes(),
            );
            assert!(
                r.status != 405 && !(r.status == 404 && r.text().contains("\"not_found\"")),
                "{method} {path}: {} {}",
                r.status,
                r.text()
            );
            assert!(
                !r.text().contains("unknown field"),
                "{method} {path} with {body}: {}",
                r.text()
            );
            let secured = op.get("security").is_some();
            assert_eq!(secured, method == "post" && path != "/v1/select", "{path}");
        }
    }
    assert_eq!(bodies_checked, 6, "every POST with a body was checked");
    // And a field that is not documented is refused, for the free-form workflow body too.
    for (path, known) in [("/v1/route", "text"), ("/v1/workflows", "name")] {
        let r = post(
            s.addr,
            path,
            &serde_json::json!({ known: "x", "nmae": "y" }),
        );
        assert_eq!(r.status, 400, "{path}: {}", r.text());
        assert!(r.text().contains("unknown field `nmae`"), "{}", r.text());
    }
}

// --- Live reload through the API ----------------------------------------------------------

#[test]
fn hot_reload_is_seen_through_the_api_and_the_event_stream() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a/SKILL.md", &skill_md("a", "First."));
    let s = start(
        vec![Source::new(root, "project")],
        true,
        HttpConfig::default(),
    );
    // Opened (greeting read) before the edit, so the stream has subscribed.
    let mut reader = open_events(s.addr);
    write(root, "a/SKILL.md", &skill_md("a", "Second."));
    let change = loop {
        let c = next_event(&mut reader, "change");
        if c["changed"] == serde_json::json!(["a"]) {
            break c;
        }
    };
    assert!(change["generation"].as_u64() > Some(1), "{change}");
    let d = get(s.addr, "/v1/skills/a").json();
    assert_eq!(d["description"], "Second.");
}

#[test]
fn an_explicit_reload_answers_with_its_change_set() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a/SKILL.md", &skill_md("a", "First."));
    // No watcher: only the reload can see the new skill.
    let s = start(
        vec![Source::new(root, "project")],
        false,
        HttpConfig::default(),
    );
    assert_eq!(get(s.addr, "/v1/skills/b").status, 404);
    write(root, "b/SKILL.md", &skill_md("b", "Bee."));
    let r = post(s.addr, "/v1/reload", &serde_json::json!({}));
    assert_eq!(r.status, 200, "{}", r.text());
    let change = r.json();
    assert_eq!(change["added"], serde_json::json!(["b"]), "{change}");
    assert_eq!(change["changed"], serde_json::json!([]), "{change}");
    assert!(change["generation"].as_u64() > change["previous_generation"].as_u64());
    let b = get(s.addr, "/v1/skills/b");
    assert_eq!(b.status, 200, "{}", b.text());
    assert_eq!(b.json()["description"], "Bee.");
}

#[test]
fn diagnostics_match_what_validate_reports() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "digest/SKILL.md",
        "---\nname: digest\ndescription: A digest.\nschedule: 0 8 * * mon-xyz\n---\nbody\n",
    );
    write(
        root,
        "greet/SKILL.md",
        "---\nname: greet\ndescription: Greets.\n---\n# greet\n\n## Examples\n\n```\nnot-greet --loud\n```\n",
    );
    let s = start(
        vec![Source::new(root, "project")],
        false,
        HttpConfig::default(),
    );
    let d = get(s.addr, "/v1/diagnostics").json();
    let codes: Vec<&str> = d["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"invalid-schedule"), "{d}");
    assert_eq!(d["errors"].as_u64(), Some(1), "{d}");
    let validate =
        skills_tests::skill_server(&["validate", "--format", "json", &root.display().to_string()]);
    let v: Value = serde_json::from_str(&validate.stdout).unwrap();
    let strip = |list: &Value| -> Vec<(String, String)> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|d| (d["code"].to_string(), d["message"].to_string()))
            .collect()
    };
    assert_eq!(strip(&d["diagnostics"]), strip(&v["diagnostics"]));
}

// --- Execution over HTTP -----------------------------------------------------------------

fn start_with(sources: Vec<Source>, tweak: impl FnOnce(&mut EngineConfig)) -> Server {
    let mut config = EngineConfig::new(RegistryConfig::with_sources(sources));
    config.watch = None;
    tweak(&mut config);
    launch(config, HttpConfig::default())
}

/// Ask again until `done` holds, at most `IO_TIMEOUT`. Used only where the server offers no
/// event to wait on (a background task's or a schedule's progress).
fn poll(addr: SocketAddr, path: &str, done: impl Fn(&Value) -> bool) -> Value {
    let start = std::time::Instant::now();
    loop {
        let v = get(addr, path).json();
        if done(&v) {
            return v;
        }
        assert!(start.elapsed() < IO_TIMEOUT, "{path} never got there: {v}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn execute_templates_forks_and_slash_commands() {
    let s = start_with(packs(), |_| {});
    // A template: the body comes back for the model, arguments substituted.
    let r = post(
        s.addr,
        "/v1/execute",
        &serde_json::json!({ "command": "explain the borrow checker" }),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["route"]["route"], "invoke");
    assert_eq!(v["outcome"]["kind"], "template");
    assert_eq!(v["outcome"]["requires_interpretation"], true);

    // A fork: a task id now, the result later.
    let v = post(
        s.addr,
        "/v1/execute",
        &serde_json::json!({ "command": "code-review src/lib.rs" }),
    )
    .json();
    assert_eq!(v["outcome"]["kind"], "fork", "{v}");
    let id = v["outcome"]["task"].as_u64().unwrap();
    let t = poll(s.addr, &format!("/v1/tasks/{id}"), |t| {
        t["status"] == "succeeded" || t["status"] == "failed"
    });
    assert_eq!(t["status"], "succeeded", "{t}");
    assert!(
        get(s.addr, "/v1/tasks")
            .text()
            .contains(&format!("\"id\":{id}"))
    );
    assert_eq!(get(s.addr, "/v1/tasks/999999").status, 404);

    // Multi-command output: every command reported, in order, a failure in the middle.
    let v = post(
        s.addr,
        "/v1/execute",
        &serde_json::json!({ "output": "```cmd\nexplain a\nnope.nothing\nget_skill: email\n```" }),
    )
    .json();
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 3, "{v}");
    assert_eq!(results[0]["outcome"]["ok"], true);
    assert_eq!(results[1]["outcome"]["ok"], false);
    assert_eq!(results[2]["outcome"]["ok"], true);

    // The model cannot run `commit`; a user can, by slash command.
    let v = post(
        s.addr,
        "/v1/execute",
        &serde_json::json!({ "command": "commit" }),
    )
    .json();
    assert!(v["outcome"].is_null(), "{v}");
    let v = post(
        s.addr,
        "/v1/invoke",
        &serde_json::json!({ "line": "/commit fix typo" }),
    )
    .json();
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["skill"], "commit");
}

#[cfg(unix)]
#[test]
fn scripts_hit_each_limit_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let skill =
        "---\nname: tool\ndescription: Runs a script.\nscripts:\n  - scripts/run.sh\n---\nbody\n";
    write(root, "tool/SKILL.md", skill);
    write(
        root,
        "tool/scripts/run.sh",
        "#!/bin/sh\ncase \"$1\" in\n  sleep) sleep 30 ;;\n  flood) yes flood ;;\n  *) echo \"ran with $# args\" ;;\nesac\n",
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        root.join("tool/scripts/run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let s = start_with(vec![Source::new(root, "project")], |c| {
        c.runtime.limits.timeout = Duration::from_secs(2);
    });
    let run = |command: &str| {
        post(
            s.addr,
            "/v1/execute",
            &serde_json::json!({ "command": command }),
        )
        .json()
    };
    let ok = run("tool hello");
    assert_eq!(ok["outcome"]["ok"], true, "{ok}");
    assert_eq!(ok["outcome"]["kind"], "script");
    assert_eq!(run("tool sleep")["outcome"]["limit"], "timeout");
    assert_eq!(run("tool flood")["outcome"]["limit"], "output");
    let many = format!("tool {}", vec!["a"; 101].join(" "));
    assert_eq!(run(&many)["outcome"]["limit"], "arguments");
    let long = format!("tool {}", "x".repeat(5000));
    assert_eq!(run(&long)["outcome"]["limit"], "argument_bytes");
}

#[test]
fn a_workflow_built_over_http_is_listed_and_fires_on_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("skills");
    let actions = repo_root().join("packs/actions");
    let mut builtin = Source::new(&actions, "builtin");
    builtin.writable = false;
    let mut mine = Source::new(&root, "user");
    mine.writable = true;
    std::fs::create_dir_all(&root).unwrap();
    let s = start_with(vec![builtin, mine], |_| {});
    let r = post(
        s.addr,
        "/v1/workflows",
        &serde_json::json!({
            "name": "tick",
            "description": "Say hello every second",
            "steps": "tasks.search --status open",
            "schedule": "* * * * * *",
        }),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    let d = get(s.addr, "/v1/skills/workflows.tick").json();
    assert_eq!(d["schedule"], "* * * * * *", "{d}");
    // Refused: a builtin's name, and a name that tries to leave the folder.
    let r = post(
        s.addr,
        "/v1/workflows",
        &serde_json::json!({ "name": "daily_digest", "description": "x" }),
    );
    assert_eq!(r.status, 409, "{}", r.text());
    // The message names the layer that holds the name, not a path on the server.
    let message = r.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains("(layer "), "{message}");
    assert!(!message.contains('/'), "{message}");
    let r = post(
        s.addr,
        "/v1/workflows",
        &serde_json::json!({ "name": "../../evil", "description": "x" }),
    );
    assert_eq!(r.status, 422, "{}", r.text());
    assert!(!dir.path().join("evil.md").exists());
    // The scheduler picked it up and it fires.
    let v = poll(s.addr, "/v1/schedules", |v| {
        v["history"]
            .as_array()
            .is_some_and(|h| h.iter().any(|r| r["skill"] == "workflows.tick"))
    });
    let job = v["schedules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["skill"] == "workflows.tick")
        .unwrap()
        .clone();
    assert_eq!(job["expression"], "* * * * * *");
}

// --- Event stream, limits, timeouts and shutdown -----------------------------------------

/// Open `/v1/events` and read up to its greeting (the server has subscribed by then).
/// `Err(status)` when the server refused the stream.
fn try_open_events(addr: SocketAddr) -> Result<BufReader<TcpStream>, u16> {
    let mut stream = connect(addr);
    stream
        .write_all(b"GET /v1/events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let status: u16 = line.split(' ').nth(1).unwrap().parse().unwrap();
    if status != 200 {
        return Err(status);
    }
    while !line.contains("skills engine events") {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "stream ended");
    }
    Ok(reader)
}

fn open_events(addr: SocketAddr) -> BufReader<TcpStream> {
    try_open_events(addr).unwrap_or_else(|s| panic!("the event stream answered {s}"))
}

/// The data of the next event called `name` on the stream.
fn next_event(reader: &mut BufReader<TcpStream>, name: &str) -> Value {
    let wanted = format!("event: {name}");
    let mut line = String::new();
    let mut found = false;
    loop {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "stream ended");
        if line.trim_end() == wanted {
            found = true;
        } else if found {
            if let Some(data) = line.strip_prefix("data: ") {
                return serde_json::from_str(data).unwrap();
            }
        }
    }
}

/// The property names of a schema in the OpenAPI document, sorted.
fn schema_keys(schema: &Value) -> Vec<String> {
    let mut keys: Vec<String> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    keys.sort();
    keys
}

fn keys_of(v: &Value) -> Vec<String> {
    let mut keys: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    keys
}

#[test]
fn scheduled_runs_that_need_a_model_reach_the_event_stream() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "stretch/SKILL.md",
        "---\nname: stretch\ndescription: Remind the user to stretch.\nschedule: \"* * * * * *\"\n---\nRemind the user to stand up and stretch.\n",
    );
    let s = start_with(vec![Source::new(dir.path(), "project")], |_| {});
    let doc = get(s.addr, "/v1/openapi.json").json();
    let schemas = &doc["components"]["schemas"];
    let mut events = open_events(s.addr);
    // It fires every second: a template, handed over for the host's model.
    let run = next_event(&mut events, "scheduled");
    assert_eq!(run["skill"], "stretch", "{run}");
    assert_eq!(run["outcome"]["kind"], "template", "{run}");
    assert_eq!(run["outcome"]["requires_interpretation"], true, "{run}");
    assert!(
        run["outcome"]["output"]
            .as_str()
            .unwrap()
            .contains("stretch"),
        "{run}"
    );
    // The payloads are the ones the OpenAPI document names.
    let scheduled = &schemas["ScheduledEvent"];
    assert_eq!(keys_of(&run), schema_keys(scheduled));
    assert_eq!(
        keys_of(&run["outcome"]),
        schema_keys(&scheduled["properties"]["outcome"])
    );
    let change = post(s.addr, "/v1/reload", &serde_json::json!({})).json();
    assert_eq!(keys_of(&change), schema_keys(&schemas["ChangeEvent"]));
    assert!(
        doc["paths"]["/v1/events"]["get"]["responses"]["200"]["x-events"]["scheduled"].is_object()
    );
}

/// A folder with one plain skill, for tests about the server rather than the skills.
pub(crate) fn one_skill() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a/SKILL.md", &skill_md("a", "First."));
    dir
}

#[test]
fn event_streams_are_capped() {
    let dir = one_skill();
    let s = start(
        vec![Source::new(dir.path(), "project")],
        false,
        HttpConfig {
            max_event_streams: 2,
            ..HttpConfig::default()
        },
    );
    let first = open_events(s.addr);
    let _second = open_events(s.addr);
    // One more than the cap: refused at once, and other requests still answer.
    let r = get(s.addr, "/v1/events");
    assert_eq!(r.status, 503, "{}", r.text());
    assert_eq!(r.json()["error"]["code"], "overloaded");
    assert_eq!(get(s.addr, "/v1/health").status, 200);
    // A client that leaves frees its slot (once the server sees the connection close).
    drop(first);
    let started = Instant::now();
    loop {
        match try_open_events(s.addr) {
            Ok(_third) => break,
            Err(503) => {
                assert!(started.elapsed() < IO_TIMEOUT, "the slot was never freed");
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(other) => panic!("unexpected status {other}"),
        }
    }
}

#[test]
fn shutdown_ends_open_event_streams_at_once() {
    let dir = one_skill();
    let s = start(
        vec![Source::new(dir.path(), "project")],
        false,
        HttpConfig::default(),
    );
    let mut events = open_events(s.addr);
    let took = s.stop();
    assert!(
        took < skill_http::SHUTDOWN_GRACE / 4,
        "an open stream held shutdown for {took:?}"
    );
    // The stream ended cleanly: the reader reaches the end.
    let mut rest = String::new();
    events.read_to_string(&mut rest).unwrap();
}

#[test]
fn a_client_that_stalls_in_its_headers_is_dropped() {
    let dir = one_skill();
    let timeout = Duration::from_millis(200);
    let s = start(
        vec![Source::new(dir.path(), "project")],
        false,
        HttpConfig {
            header_read_timeout: timeout,
            ..HttpConfig::default()
        },
    );
    let mut slow = connect(s.addr);
    slow.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let started = Instant::now();
    slow.write_all(b"GET /v1/hea").unwrap();
    let mut buf = Vec::new();
    match slow.read_to_end(&mut buf) {
        Ok(_) => {}
        Err(e) => assert_eq!(
            e.kind(),
            std::io::ErrorKind::ConnectionReset,
            "not dropped: {e}"
        ),
    }
    let took = started.elapsed();
    assert!(took >= timeout - Duration::from_millis(20), "{took:?}");
    assert!(buf.is_empty(), "{}", String::from_utf8_lossy(&buf));
    assert_eq!(get(s.addr, "/v1/health").status, 200);
}

/// Register a handler `name` that tells the test it started, then waits until the test
/// opens the gate.
fn gated(
    b: RuntimeBuilder,
    name: &str,
    entered: std::sync::mpsc::Sender<()>,
    gate: std::sync::Arc<tokio::sync::Semaphore>,
) -> RuntimeBuilder {
    b.handler_fn(name, move |_call: Call| {
        let entered = entered.clone();
        let gate = gate.clone();
        async move {
            let _ = entered.send(());
            let _permit = gate.acquire().await?;
            Ok::<_, BoxError>(Output::Text("done".into()))
        }
    })
}

#[test]
fn requests_over_the_concurrency_limit_are_shed_with_503() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "block/SKILL.md",
        &skill_md("block", "Waits for the test."),
    );
    let mut config = EngineConfig::new(RegistryConfig::with_sources(vec![Source::new(
        dir.path(),
        "project",
    )]));
    config.watch = None;
    let (entered_tx, entered) = std::sync::mpsc::channel();
    let gate = std::sync::Arc::new(tokio::sync::Semaphore::new(0));
    let g = gate.clone();
    let s = launch_with(
        config,
        HttpConfig {
            concurrency: 1,
            ..HttpConfig::default()
        },
        move |b| gated(b, "block", entered_tx, g),
    );
    let addr = s.addr;
    let busy = std::thread::spawn(move || {
        post(
            addr,
            "/v1/execute",
            &serde_json::json!({ "command": "block" }),
        )
    });
    entered.recv_timeout(IO_TIMEOUT).unwrap();
    // The one slot is taken: the next request is shed at once, not queued.
    let r = get(s.addr, "/v1/skills");
    assert_eq!(r.status, 503, "{}", r.text());
    assert_eq!(r.json()["error"]["code"], "overloaded");
    // Liveness and readiness stay outside the limit: they answer while it is saturated.
    assert_eq!(get(s.addr, "/v1/health").status, 200);
    assert_eq!(get(s.addr, "/v1/ready").status, 200);
    gate.add_permits(1);
    let done = busy.join().unwrap();
    assert_eq!(done.status, 200, "{}", done.text());
    assert_eq!(done.json()["outcome"]["output"], "done");
    assert_eq!(get(s.addr, "/v1/health").status, 200);
}

#[cfg(unix)]
fn make_executable(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[cfg(unix)]
#[test]
fn a_script_reports_its_own_timeout_and_a_hanging_handler_gets_504() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "tool/SKILL.md",
        "---\nname: tool\ndescription: Runs a script.\nscripts:\n  - scripts/run.sh\n---\nbody\n",
    );
    write(root, "tool/scripts/run.sh", "#!/bin/sh\nexec sleep 30\n");
    make_executable(&root.join("tool/scripts/run.sh"));
    write(root, "hang/SKILL.md", &skill_md("hang", "Never answers."));
    let mut config = EngineConfig::new(RegistryConfig::with_sources(vec![Source::new(
        root, "project",
    )]));
    config.watch = None;
    config.runtime.limits.timeout = Duration::from_millis(300);
    // The request timeout is shorter than the script's: execute gets the script's plus
    // the margin instead.
    let http = HttpConfig {
        request_timeout: Duration::from_millis(100),
        exec_timeout_margin: Duration::from_millis(1700),
        ..HttpConfig::default()
    };
    let s = launch_with(config, http, |b| {
        b.handler_fn("hang", |_call: Call| async {
            std::future::pending::<Result<Output, BoxError>>().await
        })
    });
    let r = post(
        s.addr,
        "/v1/execute",
        &serde_json::json!({ "command": "tool" }),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["outcome"]["limit"], "timeout", "{}", r.text());

    // Both endpoints that execute skills, at the same time.
    let addr = s.addr;
    let hanging: Vec<_> = [
        ("/v1/execute", serde_json::json!({ "command": "hang" })),
        ("/v1/invoke", serde_json::json!({ "line": "/hang" })),
    ]
    .into_iter()
    .map(|(path, body)| {
        std::thread::spawn(move || {
            let started = Instant::now();
            (path, post(addr, path, &body), started.elapsed())
        })
    })
    .collect();
    for h in hanging {
        let (path, r, took) = h.join().unwrap();
        assert_eq!(r.status, 504, "{path}: {}", r.text());
        assert_eq!(r.json()["error"]["code"], "timeout");
        assert!(r.text().contains("2000 ms"), "{}", r.text());
        assert!(took >= Duration::from_millis(1950), "{path}: {took:?}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn shutdown_finishes_requests_stops_scripts_and_keeps_the_schedule_state() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("skills");
    write(
        &root,
        "block/SKILL.md",
        &skill_md("block", "Waits for the test."),
    );
    write(
        &root,
        "bg/SKILL.md",
        "---\nname: bg\ndescription: Runs in the background.\ncontext: fork\nscripts:\n  - scripts/bg.sh\n---\nbody\n",
    );
    // The script writes its pid in the skill folder (its working directory), then waits.
    write(
        &root,
        "bg/scripts/bg.sh",
        "#!/bin/sh\necho $$ > pid.tmp && mv pid.tmp pid\nexec sleep 30\n",
    );
    make_executable(&root.join("bg/scripts/bg.sh"));
    write(
        &root,
        "tick/SKILL.md",
        "---\nname: tick\ndescription: Every second.\nschedule: \"* * * * * *\"\n---\nTick.\n",
    );
    std::fs::create_dir_all(dir.path().join("state")).unwrap();
    let state = dir.path().join("state/schedule-state.json");
    let mut config = EngineConfig::new(RegistryConfig::with_sources(vec![Source::new(
        &root, "project",
    )]));
    config.watch = None;
    config.schedule.as_mut().unwrap().state_path = Some(state.clone());
    let (entered_tx, entered) = std::sync::mpsc::channel();
    let gate = std::sync::Arc::new(tokio::sync::Semaphore::new(0));
    let g = gate.clone();
    let mut s = launch_with(config, HttpConfig::default(), move |b| {
        gated(b, "block", entered_tx, g)
    });

    // The scheduler fired once (its state is written before the run starts).
    let mut events = open_events(s.addr);
    assert_eq!(next_event(&mut events, "scheduled")["skill"], "tick");

    // A forked script is running.
    let v = post(
        s.addr,
        "/v1/execute",
        &serde_json::json!({ "command": "bg" }),
    )
    .json();
    assert_eq!(v["outcome"]["kind"], "fork", "{v}");
    let pid_file = root.join("bg/pid");
    let started = Instant::now();
    while !pid_file.exists() {
        assert!(started.elapsed() < IO_TIMEOUT, "the script never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let proc_dir = format!("/proc/{pid}");
    assert!(std::path::Path::new(&proc_dir).exists());

    // A request is in flight when shutdown starts.
    let addr = s.addr;
    let busy = std::thread::spawn(move || {
        post(
            addr,
            "/v1/execute",
            &serde_json::json!({ "command": "block" }),
        )
    });
    entered.recv_timeout(IO_TIMEOUT).unwrap();
    s.begin_stop();
    // Shutdown has begun once the event stream ends.
    let mut rest = String::new();
    events.read_to_string(&mut rest).unwrap();
    // The request still finishes, with its answer.
    gate.add_permits(1);
    let done = busy.join().unwrap();
    assert_eq!(done.status, 200, "{}", done.text());
    assert_eq!(done.json()["outcome"]["output"], "done");
    let took = s.stop();
    assert!(took < skill_http::SHUTDOWN_GRACE / 4, "{took:?}");

    // The script's process was killed: gone, or a zombie nobody waits for any more.
    // (SIGKILL lands asynchronously, so give the kernel a moment to deliver it.)
    let started = Instant::now();
    loop {
        let stat = std::fs::read_to_string(format!("{proc_dir}/stat")).unwrap_or_default();
        let state_char = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .next();
        if stat.is_empty() || state_char == Some("Z") {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "the script still runs after shutdown: {stat}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // The schedule's last fire is on disk for the next start.
    let saved = std::fs::read_to_string(&state).unwrap();
    assert!(saved.contains("\"tick\""), "{saved}");
}

#[test]
fn executing_or_loading_a_skill_wins_ties_in_search() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["alpha-notes", "beta-notes"] {
        write(
            dir.path(),
            &format!("{name}/SKILL.md"),
            &skill_md(name, "Keep handy reminders about projects."),
        );
    }
    let s = start_with(vec![Source::new(dir.path(), "project")], |_| {});
    let ranking = || {
        let v = get(s.addr, "/v1/search?q=handy+reminders").json();
        v["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["name"].as_str().unwrap().to_owned(),
                    m["last_used"].as_u64(),
                )
            })
            .collect::<Vec<_>>()
    };
    let names = |r: &[(String, Option<u64>)]| r.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    let before = ranking();
    assert_eq!(names(&before), ["alpha-notes", "beta-notes"], "{before:?}");
    assert!(before.iter().all(|(_, used)| used.is_none()));

    let r = post(
        s.addr,
        "/v1/execute",
        &serde_json::json!({ "command": "beta-notes" }),
    );
    assert_eq!(r.json()["outcome"]["ok"], true, "{}", r.text());
    let after = ranking();
    assert_eq!(names(&after), ["beta-notes", "alpha-notes"], "{after:?}");
    assert!(after[0].1.is_some());

    // Loading a skill's instructions counts as a use too.
    assert_eq!(get(s.addr, "/v1/get_skill?path=alpha-notes").status, 200);
    assert_eq!(names(&ranking()), ["alpha-notes", "beta-notes"]);
}

// --- Mounted services ----------------------------------------------------------------------

/// A mounted service that answers with its path and the engine's skill count.
fn echo_service(engine_skills: usize) -> MountedService {
    use http_body_util::BodyExt;
    tower::util::BoxCloneSyncService::new(tower::service_fn(
        move |req: http::Request<hyper::body::Incoming>| async move {
            let body = format!("{} {engine_skills}", req.uri().path());
            let body = http_body_util::Full::new(bytes::Bytes::from(body)).boxed_unsync();
            Ok::<_, std::convert::Infallible>(http::Response::new(body))
        },
    ))
}

#[test]
fn a_mounted_service_shares_the_listener_and_the_token_rules() {
    let http = HttpConfig {
        token: Some(TOKEN.into()),
        ..HttpConfig::default()
    };
    let config = EngineConfig::one_shot(RegistryConfig::with_sources(packs()));
    let mounts = Mounts::default().mount("/mcp", echo_service(7)).mount_with(
        "/open",
        echo_service(8),
        |parts| parts.method == http::Method::POST,
    );
    let server = launch_mounted(config, http, |b| b, mounts);
    let auth = format!("Bearer {TOKEN}");
    // The token is required, and checked as /v1 checks it.
    let denied = request(server.addr, "POST", "/mcp", &[], b"{}");
    assert_eq!(denied.status, 401, "{}", denied.text());
    assert_eq!(denied.json()["error"]["code"], "unauthorized");
    let wrong = request(
        server.addr,
        "POST",
        "/mcp",
        &[("Authorization", "Bearer nope")],
        b"",
    );
    assert_eq!(wrong.status, 401);
    let ok = request(
        server.addr,
        "POST",
        "/mcp/x",
        &[("Authorization", &auth)],
        b"",
    );
    assert_eq!((ok.status, ok.text()), (200, "/mcp/x 7".to_owned()));
    assert!(ok.header("x-request-id").is_some());
    // The prefix is a whole path segment: /mcpx is not the mount.
    assert_eq!(get(server.addr, "/mcpx").status, 404);
    // A mount decides per request whether the token is needed.
    assert_eq!(get(server.addr, "/open").text(), "/open 8");
    assert_eq!(request(server.addr, "POST", "/open", &[], b"").status, 401);
    // /v1 is unaffected.
    assert_eq!(get(server.addr, "/v1/health").status, 200);
}
