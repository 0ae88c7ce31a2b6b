//! Every tool and every prompt through rmcp's client, with trigger control.

use rmcp::model::{CallToolRequestParams, ErrorCode, GetPromptRequestParams, JsonObject};
use rmcp::service::ServiceError;
use serde_json::{Value, json};

use crate::common::{Client, Fixture, connect};

fn args(value: Value) -> JsonObject {
    match value {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}

async fn call(client: &Client, name: &'static str, a: Value) -> rmcp::model::CallToolResult {
    client
        .call_tool(CallToolRequestParams::new(name).with_arguments(args(a)))
        .await
        .unwrap()
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread")]
async fn every_tool_answers_from_the_engine() {
    let fx = Fixture::new();
    let (client, _changes) = connect(fx.server()).await;
    let tools: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(
        tools,
        [
            "get_skill",
            "load_skill",
            "use_skill",
            "search_skills",
            "select_skills",
            "route",
            "execute"
        ]
    );

    let top = call(&client, "get_skill", json!({})).await;
    assert_ne!(top.is_error, Some(true));
    assert!(text(&top).contains("email"), "{}", text(&top));
    let send = call(&client, "get_skill", json!({"path": "email.send"})).await;
    assert!(text(&send).contains("email.send"), "{}", text(&send));

    let loaded = call(&client, "load_skill", json!({"name": "pdf-forms"})).await;
    assert_ne!(loaded.is_error, Some(true));
    assert!(text(&loaded).contains("pdf"), "{}", text(&loaded));
    // `commit` has disable-model-invocation: never a tool-invocable skill.
    let refused = call(&client, "load_skill", json!({"name": "commit"})).await;
    assert_eq!(refused.is_error, Some(true));
    let refused = call(
        &client,
        "use_skill",
        json!({"name": "commit", "arguments": "api"}),
    )
    .await;
    assert_eq!(refused.is_error, Some(true));

    // code-review is `context: fork`: the outcome carries a task id.
    let forked = call(
        &client,
        "use_skill",
        json!({"name": "code-review", "arguments": "42"}),
    )
    .await;
    let value = forked.structured_content.clone().unwrap();
    assert!(value.to_string().contains("task"), "{value}");

    let found = call(
        &client,
        "search_skills",
        json!({"query": "weather forecast", "limit": 3}),
    )
    .await;
    let value = found.structured_content.unwrap();
    assert_eq!(value["matches"][0]["name"], "weather-report", "{value}");

    let selected = call(
        &client,
        "select_skills",
        json!({"message": "will it rain in Paris tomorrow?"}),
    )
    .await;
    let value = selected.structured_content.unwrap();
    assert!(value.get("selected_skills").is_some(), "{value}");

    let output = "Sure.\n```cmd\nget_skill email\n```\n";
    let routed = call(&client, "route", json!({"output": output})).await;
    assert!(routed.structured_content.is_some(), "{}", text(&routed));
    let executed = call(&client, "execute", json!({"output": output})).await;
    let value = executed.structured_content.unwrap();
    assert_eq!(
        value["results"].as_array().map(Vec::len),
        Some(1),
        "{value}"
    );

    // An unknown tool and bad arguments are protocol errors.
    for (name, a) in [("nope", json!({})), ("load_skill", json!({"name": 3}))] {
        let e = client
            .call_tool(CallToolRequestParams::new(name).with_arguments(args(a)))
            .await
            .unwrap_err();
        match e {
            ServiceError::McpError(e) => assert_eq!(e.code, ErrorCode::INVALID_PARAMS),
            other => panic!("{other:?}"),
        }
    }
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn user_invocable_skills_are_prompts_with_their_argument_hint() {
    let fx = Fixture::new();
    let (client, _changes) = connect(fx.server()).await;
    let prompts = client.list_all_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    // disable-model-invocation: still a prompt; user-invocable: false: not one.
    assert!(names.contains(&"commit"), "{names:?}");
    assert!(!names.contains(&"project-conventions"), "{names:?}");
    for p in &prompts {
        assert!(
            p.description.as_deref().is_some_and(|d| !d.is_empty()),
            "{}",
            p.name
        );
    }
    let commit = prompts.iter().find(|p| p.name == "commit").unwrap();
    let arg = &commit.arguments.as_ref().unwrap()[0];
    assert_eq!(arg.name, "arguments");
    assert!(
        arg.description
            .as_deref()
            .unwrap_or("")
            .contains("[optional scope]")
    );

    for p in &prompts {
        let got = client
            .get_prompt(
                GetPromptRequestParams::new(p.name.clone())
                    .with_arguments(args(json!({"arguments": "api"}))),
            )
            .await
            .unwrap();
        assert_eq!(got.messages.len(), 1, "{}", p.name);
    }
    let got = client
        .get_prompt(
            GetPromptRequestParams::new("commit").with_arguments(args(json!({"arguments": "api"}))),
        )
        .await
        .unwrap();
    let body = serde_json::to_string(&got.messages[0]).unwrap();
    assert!(body.contains("Use api as the"), "{body}");
    let hidden = client
        .get_prompt(GetPromptRequestParams::new("project-conventions"))
        .await
        .unwrap_err();
    match hidden {
        ServiceError::McpError(e) => assert_eq!(e.code, ErrorCode::INVALID_PARAMS),
        other => panic!("{other:?}"),
    }
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_answer_with_the_json_the_http_api_gives() {
    use skill_runtime::wire::{ResultsShape, SearchShape};
    use skill_runtime::{Scope, SearchQuery};
    let fx = Fixture::new();
    let (client, _changes) = connect(fx.server()).await;
    // search_skills: the HTTP API's `GET /v1/search` renders SearchShape.
    let query = "fill a pdf form";
    let matches = fx
        .engine
        .search(&SearchQuery {
            text: query.to_owned(),
            limit: 3,
            profile: None,
        })
        .unwrap();
    assert!(!matches.is_empty());
    let over_mcp = call(
        &client,
        "search_skills",
        json!({ "query": query, "limit": 3 }),
    )
    .await;
    assert_eq!(
        over_mcp.structured_content,
        Some(serde_json::to_value(SearchShape::new(query, &matches)).unwrap())
    );
    // route: `POST /v1/route` with `output` serializes the routed output as it is.
    let output = "Sure.\n```cmd\nnot-a-skill at all\n```\n";
    let routed = fx.engine.route_output(output, &Scope::model());
    let over_mcp = call(&client, "route", json!({ "output": output })).await;
    assert_eq!(
        over_mcp.structured_content,
        Some(serde_json::to_value(skill_runtime::wire::RoutedOutputShape::from(&routed)).unwrap())
    );
    // execute: `POST /v1/execute` with `output` renders ResultsShape.
    let results = fx.engine.execute_output(output, &Scope::model()).await;
    let over_mcp = call(&client, "execute", json!({ "output": output })).await;
    assert_eq!(
        over_mcp.structured_content,
        Some(serde_json::to_value(ResultsShape::new(&results)).unwrap())
    );
    client.cancel().await.unwrap();
}

/// A `tools/call` the client cancels ends, and so does the script it started: the call
/// ignored its cancellation, and a run went on for minutes after its client had gone.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_execute_stops_its_script() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("sleeper");
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: sleeper\ndescription: Sleeps for a test.\nscripts:\n  - scripts/nap.sh\n---\nNaps.\n",
    )
    .unwrap();
    let script = dir.join("scripts/nap.sh");
    std::fs::write(&script, "#!/bin/sh\necho $$ > nap.pid\nexec sleep 30\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut config =
        skill_runtime::EngineConfig::new(skill_runtime::registry::RegistryConfig::with_sources(
            vec![skill_runtime::registry::Source::new(root.path(), "project")],
        ));
    config.watch = None;
    config.schedule = None;
    let engine = skill_runtime::Engine::start(config).unwrap();
    let server = skill_mcp::SkillsServer::new(engine, skill_mcp::McpConfig::default());
    let (client, _changes) = crate::common::connect(server).await;
    let request = rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(
        CallToolRequestParams::new("execute")
            .with_arguments(args(json!({ "output": "```cmd\nsleeper\n```" }))),
    ));
    let handle = client
        .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await
        .unwrap();
    // Until the script runs.
    let pid_file = dir.join("nap.pid");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok())
        {
            break pid;
        }
        if std::time::Instant::now() > deadline {
            let r = handle.await_response().await;
            panic!("the script never started: {r:?}");
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    };
    handle.cancel(Some("test".into())).await.unwrap();
    // Killed (and reaped) once the call ends: bounded well below the script's 30 s.
    let gone = |pid: i32| !std::path::Path::new(&format!("/proc/{pid}")).exists();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !gone(pid) && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(
        gone(pid),
        "the script {pid} still runs after the call was cancelled"
    );
    client.cancel().await.unwrap();
}
