//! One door contract: every operation with input (`skill_runtime::wire::OPERATIONS`) is
//! walked from its own input description, and each door that offers it (HTTP, the MCP
//! tools, the command line) accepts and refuses the same inputs with the same code.
//!
//! Cases come from the description: a valid request; each count at both edges and one
//! past each; each field of the wrong kind and `null`; an unknown field; each required
//! field left out; both and neither of a one-of pair. Fields that say who asks (profile,
//! caller) are the server's on MCP, so their cases are asked of the other doors only. Two things a query
//! string cannot say are not asked of HTTP's query-string operations: a text of the
//! wrong kind (every query value is text) and `null`; and a query string's unknown
//! parameters are ignored, as HTTP servers do.

use serde_json::{Map, Value, json};
use skill_http::HttpConfig;
use skill_registry::{RegistryConfig, Source};
use skill_runtime::wire::{FieldKind, OPERATIONS, Operation};
use skill_runtime::{Engine, EngineConfig};
use skills_tests::{skill_md, skill_server, write};

use crate::http::{Server, get, launch, post};

/// What a door did with a request: took it (whatever the operation then answered), or
/// refused it with this code.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Verdict {
    Accepted,
    Refused(String),
}

/// One request of an operation and what the contract says of it.
struct Case {
    label: String,
    args: Map<String, Value>,
    expect: Verdict,
    /// The command line can say it (counts as numbers, every required field given).
    cli: bool,
    /// A query string can say it.
    query: bool,
    /// MCP takes it (it gives no field that says who asks).
    mcp: bool,
}

/// A valid value of a field.
fn valid(kind: FieldKind, name: &str) -> Value {
    match kind {
        FieldKind::Text if name == "name" => json!("greet"),
        FieldKind::Text => json!("greet"),
        FieldKind::Switch => json!(false),
        FieldKind::Texts => json!(["earlier"]),
        FieldKind::Count { min, .. } => json!(min.max(1)),
        FieldKind::Choice(words) => json!(words.first().copied().unwrap_or("")),
        FieldKind::TimeZone => json!("Europe/Paris"),
        FieldKind::Instant => json!("2026-11-20T12:00:00Z"),
    }
}

/// A value of the wrong kind for a field.
fn wrong(kind: FieldKind) -> Value {
    match kind {
        FieldKind::Text | FieldKind::Choice(_) | FieldKind::TimeZone | FieldKind::Instant => {
            json!(7)
        }
        FieldKind::Switch | FieldKind::Count { .. } => json!("x"),
        FieldKind::Texts => json!([1]),
    }
}

/// The cases of one operation, from its description.
fn cases(op: &Operation) -> Vec<Case> {
    let refused = Verdict::Refused(op.error_code.to_owned());
    let fields: Vec<_> = op.door_fields(true).collect();
    let mut base = Map::new();
    for f in &fields {
        let chosen = op.one_of.is_some_and(|[a, _]| a == f.name);
        let other = op.one_of.is_some_and(|[_, b]| b == f.name);
        if (f.required || chosen) && !other {
            base.insert(f.name.to_owned(), valid(f.kind, f.name));
        }
    }
    let with = |name: &str, v: Value| {
        let mut m = base.clone();
        m.insert(name.to_owned(), v);
        m
    };
    let mut out = vec![Case {
        label: "valid".into(),
        args: base.clone(),
        expect: Verdict::Accepted,
        cli: true,
        query: true,
        mcp: true,
    }];
    for f in &fields {
        if let FieldKind::Count { min, max } = f.kind {
            let mut edges = vec![(min, true), (max, true), (max + 1, false)];
            if min > 0 {
                edges.push((min - 1, false));
            }
            for (n, ok) in edges {
                out.push(Case {
                    label: format!("{} = {n}", f.name),
                    args: with(f.name, json!(n)),
                    expect: if ok {
                        Verdict::Accepted
                    } else {
                        refused.clone()
                    },
                    cli: true,
                    query: true,
                    mcp: !f.scope,
                });
            }
        }
        let text = matches!(f.kind, FieldKind::Text);
        out.push(Case {
            label: format!("{} of the wrong kind", f.name),
            args: with(f.name, wrong(f.kind)),
            expect: refused.clone(),
            cli: false,
            query: !text,
            mcp: !f.scope,
        });
        out.push(Case {
            label: format!("{} = null", f.name),
            args: with(f.name, Value::Null),
            expect: refused.clone(),
            cli: false,
            query: false,
            mcp: !f.scope,
        });
        if f.required {
            let mut m = base.clone();
            m.remove(f.name);
            out.push(Case {
                label: format!("{} left out", f.name),
                args: m,
                expect: refused.clone(),
                cli: false,
                query: true,
                mcp: !f.scope,
            });
        }
    }
    out.push(Case {
        label: "an unknown field".into(),
        args: with("zz_unknown", json!("x")),
        expect: refused.clone(),
        cli: false,
        query: false,
        mcp: true,
    });
    if let Some([a, b]) = op.one_of {
        let kind = |n: &str| fields.iter().find(|f| f.name == n).map(|f| f.kind);
        let mut both = base.clone();
        both.insert(b.to_owned(), valid(kind(b).unwrap_or(FieldKind::Text), b));
        let mut neither = base.clone();
        neither.remove(a);
        for (label, args) in [("both of a pair", both), ("neither of a pair", neither)] {
            out.push(Case {
                label: label.into(),
                args,
                expect: refused.clone(),
                cli: false,
                query: true,
                mcp: true,
            });
        }
    }
    out
}

/// HTTP: the method and path of an operation, and whether it reads the query string.
fn http_route(op: &str) -> Option<(&'static str, bool)> {
    Some(match op {
        "select" => ("/v1/select", false),
        "search" => ("/v1/search", true),
        "notes_search" => ("/v1/notes/search", true),
        "extract" => ("/v1/extract", false),
        "route" => ("/v1/route", false),
        "execute" => ("/v1/execute", false),
        "invoke" => ("/v1/invoke", false),
        "get_skill" => ("/v1/get_skill", true),
        "list_skills" => ("/v1/skills", true),
        "disclosure" => ("/v1/skills/greet/outline", true),
        "catalog" => ("/v1/catalog", true),
        "schedules" => ("/v1/schedules", true),
        "build_workflow" => ("/v1/workflows", false),
        _ => return None,
    })
}

/// MCP: the tool that takes an operation.
fn mcp_tool(op: &str) -> Option<&'static str> {
    Some(match op {
        "select" => "select_skills",
        "search" => "search_skills",
        "route" => "route",
        "execute" => "execute",
        "get_skill" => "get_skill",
        "use_skill" => "use_skill",
        "load_skill" => "load_skill",
        _ => return None,
    })
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn http_verdict(server: &Server, op: &Operation, case: &Case) -> Option<Verdict> {
    let (path, query) = http_route(op.name)?;
    if query && !case.query {
        return None;
    }
    let reply = if query {
        let pairs: Vec<String> = case
            .args
            .iter()
            .map(|(k, v)| {
                let name = op
                    .fields
                    .iter()
                    .find(|f| f.name == k)
                    .map_or(k.as_str(), |f| f.query_name);
                let value = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                format!("{name}={}", encode(&value))
            })
            .collect();
        get(server.addr, &format!("{path}?{}", pairs.join("&")))
    } else {
        post(server.addr, path, &Value::Object(case.args.clone()))
    };
    Some(if reply.status == 400 {
        Verdict::Refused(reply.json()["error"]["code"].as_str()?.to_owned())
    } else {
        Verdict::Accepted
    })
}

fn mcp_verdict(engine: &Engine, op: &Operation, case: &Case) -> Option<Verdict> {
    if !case.mcp {
        return None;
    }
    let tool = mcp_tool(op.name)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    let called = rt.block_on(skill_mcp::call_tool(engine, None, tool, case.args.clone()));
    Some(match called {
        Ok(_) => Verdict::Accepted,
        Err(e) => Verdict::Refused(
            e.data
                .as_ref()
                .and_then(|d| d["code"].as_str())
                .unwrap_or_else(|| panic!("{tool}: a refusal without a code: {e:?}"))
                .to_owned(),
        ),
    })
}

/// The command line's arguments for an operation's request, where it has the operation.
fn cli_args(op: &str, args: &Map<String, Value>, skills: &str, notes: &str) -> Option<Vec<String>> {
    let count = |name: &str| args.get(name).map(Value::to_string);
    let text = |name: &str| args.get(name).and_then(Value::as_str).map(str::to_owned);
    let mut argv: Vec<String> = match op {
        "select" => {
            let mut a = vec!["select".into(), "--skills".into(), skills.into()];
            if let Some(n) = count("max_skills") {
                a.extend(["--max".into(), n]);
            }
            if let Some(n) = count("budget_tokens") {
                a.extend(["--budget".into(), n]);
            }
            a.push(text("message")?);
            a
        }
        "search" => vec!["search".into(), "--skills".into(), skills.into()],
        "notes_search" => vec!["notes-search".into(), "--notes".into(), notes.into()],
        _ => return None,
    };
    if op != "select" {
        if let Some(n) = count("limit") {
            argv.extend(["--limit".into(), n]);
        }
        argv.push(text("query")?);
    }
    Some(argv)
}

fn cli_verdict(op: &Operation, case: &Case, skills: &str, notes: &str) -> Option<Verdict> {
    if !case.cli {
        return None;
    }
    let argv = cli_args(op.name, &case.args, skills, notes)?;
    let refs: Vec<&str> = argv.iter().map(String::as_str).collect();
    let run = skill_server(&refs);
    if run.code != 2 {
        return Some(Verdict::Accepted);
    }
    // A refusal by the contract names its code in brackets; any other exit 2 is not one.
    let code = run
        .stderr
        .rsplit_once('[')
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(code, _)| code.to_owned())
        .unwrap_or_else(|| panic!("{argv:?}: exit 2 without a code: {}", run.stderr));
    Some(Verdict::Refused(code))
}

#[test]
fn every_door_accepts_and_refuses_alike() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "skills/greet/SKILL.md",
        &skill_md("greet", "Greet the user by name."),
    );
    write(dir.path(), "notes/n.md", "# Greetings\nsay hello\n");
    let skills = dir.path().join("skills");
    let notes = dir.path().join("notes");
    let config = || {
        let mut c = EngineConfig::new(RegistryConfig::with_sources(vec![Source::new(
            &skills, "layer1",
        )]));
        c.watch = None;
        c.schedule = None;
        c.notes = Some(notes.clone());
        c
    };
    let server = launch(config(), HttpConfig::default());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let engine = rt.block_on(async { Engine::start(config()).unwrap() });
    let (s, n) = (skills.to_str().unwrap(), notes.to_str().unwrap());

    let mut checked = 0;
    for op in OPERATIONS {
        let mut doors_seen = 0;
        for case in cases(op) {
            let verdicts = [
                ("http", http_verdict(&server, op, &case)),
                ("mcp", mcp_verdict(&engine, op, &case)),
                ("cli", cli_verdict(op, &case, s, n)),
            ];
            for (door, verdict) in verdicts {
                let Some(verdict) = verdict else { continue };
                doors_seen += 1;
                checked += 1;
                assert_eq!(
                    verdict, case.expect,
                    "{} over {door}, {}: {:?}",
                    op.name, case.label, case.args
                );
            }
        }
        assert!(doors_seen > 0, "no door offers {}", op.name);
    }
    assert!(checked > 100, "only {checked} checks");
    rt.block_on(engine.shutdown());
}
