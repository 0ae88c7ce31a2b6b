//! What a client sends, checked before rmcp sees it, so that every malformed message gets
//! a JSON-RPC error a client can match to its request: bytes that are not JSON are `-32700`
//! (Parse error), JSON that is not a JSON-RPC message `-32600` (Invalid request), each with
//! the message's `id` when it could be read (else null). rmcp itself answered the first
//! with `415` and plain text over HTTP, and said nothing at all over stdio.
//!
//! And the params of a method rmcp knows: a request whose params do not fit the method
//! (`tools/call` with `arguments` that are not an object, `skills/get` with a number for its
//! `uri`) reaches the server as a custom request, which rmcp answers `-32601` (Method not
//! found); [`params_error`] says what is wrong, for a `-32602` (Invalid params).

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequest, CancelTaskRequest, ClientJsonRpcMessage, CompleteRequest, DiscoverRequest,
    ErrorCode, GetPromptRequest, GetSkillRequest, GetTaskRequest, InitializeRequest,
    ListPromptsRequest, ListResourceTemplatesRequest, ListResourcesRequest, ListSkillsRequest,
    ListToolsRequest, ReadResourceDirectoryRequest, ReadResourceRequest,
    SubscriptionsListenRequest, UpdateTaskRequest,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use skill_runtime::wire::kind_of;

/// Why a message was refused, as the JSON-RPC error response that says so.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rejection {
    /// `-32700` or `-32600`.
    pub(crate) code: ErrorCode,
    /// What is wrong, for a person.
    pub(crate) message: String,
    /// The message's `id` when it could be read, else null.
    pub(crate) id: Value,
}

impl Rejection {
    /// A `-32600` (Invalid request) with `id` null.
    pub(crate) fn invalid_request(message: String) -> Rejection {
        Rejection {
            code: ErrorCode::INVALID_REQUEST,
            message,
            id: Value::Null,
        }
    }

    /// The JSON-RPC error response (one line of JSON, no newline).
    pub(crate) fn to_json(&self) -> String {
        json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": { "code": self.code.0, "message": self.message },
        })
        .to_string()
    }
}

/// `bytes` as the message rmcp reads (the same parse rmcp makes, so what passes here is
/// what rmcp accepts), or why it is not one.
pub(crate) fn check(bytes: &[u8]) -> Result<ClientJsonRpcMessage, Rejection> {
    serde_json::from_slice::<ClientJsonRpcMessage>(bytes).map_err(|e| explain(bytes, &e))
}

/// Why `bytes`, which rmcp cannot read as a message (`typed` is its error), are refused.
fn explain(bytes: &[u8], typed: &serde_json::Error) -> Rejection {
    let value = match serde_json::from_slice::<Value>(bytes) {
        Ok(value) => value,
        Err(e) => {
            return Rejection {
                code: ErrorCode::PARSE_ERROR,
                message: format!("the message is not JSON that can be read: {e}"),
                id: Value::Null,
            };
        }
    };
    let object = match value {
        Value::Object(object) => object,
        Value::Array(_) => {
            return Rejection::invalid_request(
                "JSON-RPC batches are not supported: send one message at a time (MCP has had no \
                 batches since protocol 2025-06-18)"
                    .to_owned(),
            );
        }
        other => {
            return Rejection::invalid_request(format!(
                "a JSON-RPC message is an object, not {}",
                kind_of(&other)
            ));
        }
    };
    let id = object.get("id");
    let readable_id = id.filter(|id| is_id(id)).cloned().unwrap_or(Value::Null);
    let method = object.get("method");
    let problem = if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        "`jsonrpc` must be \"2.0\"".to_owned()
    } else if let Some(id) = id.filter(|id| !is_id(id)) {
        format!(
            "`id` must be a string or an integer of at most 64 bits, not {}",
            kind_of(id)
        )
    } else if let Some(method) = method.filter(|m| !m.is_string()) {
        format!("`method` must be a string, not {}", kind_of(method))
    } else if let Some(params) = object.get("params").filter(|p| !p.is_object()) {
        format!("`params` must be an object, not {}", kind_of(params))
    } else if method.is_none() && !object.contains_key("result") && !object.contains_key("error") {
        "the message has no `method` (a request or notification) and no `result` or `error` \
         (a response)"
            .to_owned()
    } else {
        format!("not a valid JSON-RPC request, notification or response: {typed}")
    };
    Rejection {
        code: ErrorCode::INVALID_REQUEST,
        message: problem,
        id: readable_id,
    }
}

/// Whether `id` is a JSON-RPC id rmcp reads: a string or an integer that fits in `i64`.
fn is_id(id: &Value) -> bool {
    id.is_string() || id.is_i64()
}

/// The `-32602` (Invalid params) error of a request for `method` whose `params` do not
/// fit it, or `None` when rmcp knows no such method (the request is then `-32601`, Method
/// not found).
pub(crate) fn params_error(method: &str, params: Option<&Value>) -> Option<ErrorData> {
    let problem = if method == "tools/call" {
        tool_call_problem(params)
    } else {
        None
    };
    let problem = match problem {
        Some(p) => p,
        None => typed_problem(method, params)?,
    };
    Some(ErrorData::invalid_params(
        format!("invalid params for {method}: {problem}"),
        None,
    ))
}

/// What is wrong with a `tools/call`'s `name` or `arguments`, in those terms.
fn tool_call_problem(params: Option<&Value>) -> Option<String> {
    let params = params?;
    match params.get("name") {
        None => return Some("`name` (the tool to call) is missing".to_owned()),
        Some(Value::String(_)) => {}
        Some(other) => return Some(format!("`name` must be a string, not {}", kind_of(other))),
    }
    match params.get("arguments") {
        None | Some(Value::Null | Value::Object(_)) => None,
        Some(other) => Some(format!(
            "`arguments` must be an object of the tool's named arguments, not {}",
            kind_of(other)
        )),
    }
}

/// Why `params` do not make a request of `method` rmcp knows (serde's words), or `None`
/// for a method rmcp does not know.
fn typed_problem(method: &str, params: Option<&Value>) -> Option<String> {
    let mut request = json!({ "method": method });
    if let Some(params) = params {
        request["params"] = params.clone();
    }
    let parsed = match method {
        "initialize" => parse_as::<InitializeRequest>(request),
        "server/discover" => parse_as::<DiscoverRequest>(request),
        "completion/complete" => parse_as::<CompleteRequest>(request),
        "prompts/get" => parse_as::<GetPromptRequest>(request),
        "prompts/list" => parse_as::<ListPromptsRequest>(request),
        "resources/list" => parse_as::<ListResourcesRequest>(request),
        "resources/templates/list" => parse_as::<ListResourceTemplatesRequest>(request),
        "resources/read" => parse_as::<ReadResourceRequest>(request),
        "resources/directory/read" => parse_as::<ReadResourceDirectoryRequest>(request),
        "subscriptions/listen" => parse_as::<SubscriptionsListenRequest>(request),
        "tools/call" => parse_as::<CallToolRequest>(request),
        "tools/list" => parse_as::<ListToolsRequest>(request),
        "tasks/get" => parse_as::<GetTaskRequest>(request),
        "tasks/update" => parse_as::<UpdateTaskRequest>(request),
        "tasks/cancel" => parse_as::<CancelTaskRequest>(request),
        "skills/list" => parse_as::<ListSkillsRequest>(request),
        "skills/get" => parse_as::<GetSkillRequest>(request),
        _ => return None,
    };
    // A request rmcp parses as its method never arrives here; if one does, its params are
    // still what made rmcp refuse it.
    Some(
        parsed
            .err()
            .unwrap_or_else(|| "the params do not fit the method".to_owned()),
    )
}

/// `request` as a `T`, or serde's reason why not.
fn parse_as<T: DeserializeOwned>(request: Value) -> Result<(), String> {
    serde_json::from_value::<T>(request)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(bytes: &[u8]) -> (i32, Value) {
        match check(bytes) {
            Ok(_) => (0, Value::Null),
            Err(r) => (r.code.0, r.id),
        }
    }

    #[test]
    fn well_formed_messages_pass_as_rmcp_reads_them() {
        for ok in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":9223372036854775807,"result":{}}"#,
        ] {
            assert_eq!(code(ok.as_bytes()).0, 0, "{ok}");
        }
    }

    #[test]
    fn ids_are_echoed_only_when_rmcp_could_read_them() {
        // At the edge of i64: the largest id is read, one more is not.
        let max = r#"{"jsonrpc":"2.0","id":9223372036854775807,"method":5}"#;
        assert_eq!(code(max.as_bytes()), (-32600, json!(i64::MAX)));
        let over = r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}"#;
        assert_eq!(code(over.as_bytes()), (-32600, Value::Null));
        let string = r#"{"jsonrpc":"2.0","id":"q","method":"ping","params":[]}"#;
        assert_eq!(code(string.as_bytes()), (-32600, json!("q")));
        assert_eq!(code(b"{\"id\":1"), (-32700, Value::Null));
    }

    #[test]
    fn each_refusal_names_its_reason() {
        for (bytes, says) in [
            (r#"[]"#, "batches"),
            (r#"true"#, "a boolean"),
            (r#"{"id":1,"method":"ping"}"#, "`jsonrpc`"),
            (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, "`id`"),
            (r#"{"jsonrpc":"2.0","id":1,"method":{}}"#, "`method`"),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}"#,
                "`params`",
            ),
            (r#"{"jsonrpc":"2.0","id":1}"#, "no `method`"),
        ] {
            let refused = check(bytes.as_bytes()).err();
            let message = refused.map(|r| r.message).unwrap_or_default();
            assert!(message.contains(says), "{bytes}: {message}");
        }
    }

    #[test]
    fn params_errors_name_the_field_and_unknown_methods_are_none() {
        let args = json!({"name": "select_skills", "arguments": [1, 2]});
        let e = params_error("tools/call", Some(&args)).map(|e| (e.code, e.message));
        let (c, m) = e.unwrap_or_default();
        assert_eq!(c, ErrorCode::INVALID_PARAMS);
        assert!(m.contains("`arguments`") && m.contains("an array"), "{m}");
        let e = params_error("skills/get", Some(&json!({"uri": 5})));
        let m = e.map(|e| e.message).unwrap_or_default();
        assert!(m.starts_with("invalid params for skills/get: "), "{m}");
        assert!(params_error("no/such", Some(&json!({}))).is_none());
    }
}
