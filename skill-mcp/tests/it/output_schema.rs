//! Every tool that answers with `structuredContent` declares an `outputSchema`, and its
//! real answers (successes and tool errors, each shape a tool can give) are valid against
//! it under an independent validator, in draft-07 and in 2020-12, as clients read it.

use std::collections::BTreeSet;

use rmcp::model::{CallToolRequestParams, JsonObject, Tool};
use serde_json::{Value, json};

use crate::common::{Client, Fixture, connect};

/// Each tool's calls: every shape its structured content can take, errors included.
fn calls() -> Vec<(&'static str, Value)> {
    let output = "Sure.\n```cmd\nget_skill email\nno-such-skill --x\n```\nand\n```cmd\nunclosed";
    let mut calls = vec![
        (
            "use_skill",
            json!({"name": "code-review", "arguments": "42"}),
        ),
        (
            "use_skill",
            json!({"name": "weather-report", "arguments": "Paris"}),
        ),
        ("use_skill", json!({"name": "no-such-skill"})),
        (
            "search_skills",
            json!({"query": "weather forecast", "limit": 3}),
        ),
        ("search_skills", json!({"query": "zzzz qqqq"})),
        (
            "select_skills",
            json!({"message": "will it rain in Paris tomorrow?"}),
        ),
        ("select_skills", json!({"message": "what can you do?"})),
        ("route", json!({"output": output})),
        ("execute", json!({"output": output})),
    ];
    for line in [
        "get_skill",
        "get_skill email",
        "weather-report --city Paris --days 2 x y",
        "/skills",
        "/commit api",
        "/clear",
        "hello there",
        "no-such-skill --x",
        "/nosuch",
        "weather-report --help",
    ] {
        calls.push(("route", json!({ "text": line })));
        calls.push(("execute", json!({ "command": line })));
    }
    calls
}

struct Check {
    draft7: jsonschema::Validator,
    draft2020: jsonschema::Validator,
}

impl Check {
    fn of(tool: &Tool) -> Option<Check> {
        let schema = Value::Object(tool.output_schema.as_deref()?.clone());
        assert_eq!(
            schema["type"], "object",
            "{}: MCP wants an object",
            tool.name
        );
        Some(Check {
            draft7: jsonschema::draft7::new(&schema).unwrap(),
            draft2020: jsonschema::draft202012::new(&schema).unwrap(),
        })
    }

    /// The validation errors of `value` under both drafts (empty: valid under both).
    fn errors(&self, value: &Value) -> Vec<String> {
        let seven = self
            .draft7
            .iter_errors(value)
            .map(|e| format!("draft-07: {e}"));
        let twenty = (self.draft2020.iter_errors(value)).map(|e| format!("2020-12: {e}"));
        seven.chain(twenty).collect()
    }
}

async fn call(client: &Client, name: &'static str, a: &Value) -> rmcp::model::CallToolResult {
    let args: JsonObject = a.as_object().cloned().unwrap_or_default();
    client
        .call_tool(CallToolRequestParams::new(name).with_arguments(args))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_structured_answer_is_valid_against_its_tools_output_schema() {
    let fx = Fixture::new();
    let (client, _changes) = connect(fx.server()).await;
    let tools = client.list_all_tools().await.unwrap();
    let declared: BTreeSet<&str> = tools
        .iter()
        .filter(|t| t.output_schema.is_some())
        .map(|t| t.name.as_ref())
        .collect();
    assert_eq!(
        declared,
        BTreeSet::from([
            "use_skill",
            "search_skills",
            "select_skills",
            "route",
            "execute"
        ])
    );

    let mut shapes = BTreeSet::new();
    for (name, a) in calls() {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        let check = Check::of(tool).unwrap();
        let result = call(&client, name, &a).await;
        // A declared schema obliges every answer to carry structured content.
        let value = result
            .structured_content
            .unwrap_or_else(|| panic!("{name} {a}: no structured content"));
        let errors = check.errors(&value);
        assert!(errors.is_empty(), "{name} {a}: {errors:#?}\n{value:#}");
        let route = value["route"].as_str().map(|r| format!("route {r}"));
        let kind = route.unwrap_or_else(|| {
            let mut keys: Vec<_> = value.as_object().unwrap().keys().cloned().collect();
            keys.sort();
            keys.join(",")
        });
        shapes.insert(format!("{name}: {kind}"));
    }
    // The calls reach the alternatives the schemas describe (a tool error, a routed output,
    // the route variants a model's command takes), so those parts met a real answer.
    // (The model's scope routes no slash command: the other route variants are the user's.)
    for shape in [
        "use_skill: error",
        "use_skill: outcome,route",
        "route: extraction,routes",
        "execute: results",
        "execute: outcome,route",
        "route: route help",
        "route: route invoke",
        "route: route error",
    ] {
        assert!(shapes.contains(shape), "{shape} not met: {shapes:#?}");
    }

    // The schemas are not vacuous: a search answer is no selection, a routed command
    // without its line is refused, and an error without its code is refused.
    let checks = |name: &str| Check::of(tools.iter().find(|t| t.name == name).unwrap()).unwrap();
    let found = call(&client, "search_skills", &json!({"query": "weather"})).await;
    let found = found.structured_content.unwrap();
    assert!(checks("search_skills").errors(&found).is_empty());
    assert!(!checks("select_skills").errors(&found).is_empty());
    let mut routed = call(
        &client,
        "route",
        &json!({"output": "```cmd\nget_skill\n```"}),
    )
    .await
    .structured_content
    .unwrap();
    assert!(checks("route").errors(&routed).is_empty());
    routed["routes"][0].as_object_mut().unwrap().remove("line");
    assert!(!checks("route").errors(&routed).is_empty());
    let no_code = json!({"error": {"message": "x"}});
    assert!(!checks("execute").errors(&no_code).is_empty());
    client.cancel().await.unwrap();
}
