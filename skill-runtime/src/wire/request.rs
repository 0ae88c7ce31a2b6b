//! The door contract: one description of each operation's input ([`Operation`]), from
//! which every door reads its requests and documents them.
//!
//! HTTP reads a JSON body (or a query string) with [`Operation::read`] /
//! [`Operation::read_query`], MCP reads its tool arguments with the same
//! [`Operation::read`], and the command line checks what clap gave it with
//! [`Request::check`]; the OpenAPI document and the MCP tools' `inputSchema` are both
//! [`Operation::input_schema`]. So a value one door refuses, every door refuses, with the
//! operation's one error code ([`Operation::error_code`]) and the same message.
//!
//! Fields marked [`Field::scope`] say who asks (the processing profile, the caller): HTTP
//! and the command line take them from the request, an MCP server fixes them by its own
//! configuration, so its tools neither list nor accept them.

use std::collections::HashMap;
use std::fmt;

use serde_json::{Map, Value, json};

/// Largest number a count (a query parameter or a body field) may hold.
pub const MAX_COUNT: u64 = u32::MAX as u64;

/// What a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// Any text. In a query string, empty counts as left out.
    Text,
    /// `true` or `false`.
    Switch,
    /// A list of texts.
    Texts,
    /// A whole number from `min` to `max`, both included.
    Count {
        /// The smallest value taken.
        min: u64,
        /// The largest value taken.
        max: u64,
    },
    /// One of these words.
    Choice(&'static [&'static str]),
    /// An IANA time zone name (`Europe/Paris`).
    TimeZone,
    /// An RFC 3339 instant (`2026-11-20T12:00:00Z`).
    Instant,
}

/// One input field of an operation.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The field's name in a JSON body and in MCP arguments.
    pub name: &'static str,
    /// Its name in an HTTP query string (the same as `name`, except where HTTP has long
    /// spelt it otherwise).
    pub query_name: &'static str,
    /// What it holds.
    pub kind: FieldKind,
    /// Whether a request must give it.
    pub required: bool,
    /// Whether it says who asks (profile, caller): left to the server on MCP.
    pub scope: bool,
    /// What it means, for the documents.
    pub description: &'static str,
}

impl Field {
    /// An optional field named `name` everywhere.
    pub const fn new(name: &'static str, kind: FieldKind, description: &'static str) -> Field {
        Field {
            name,
            query_name: name,
            kind,
            required: false,
            scope: false,
            description,
        }
    }

    /// This field, required.
    pub const fn required(mut self) -> Field {
        self.required = true;
        self
    }

    /// This field, saying who asks (see [`Field::scope`]).
    pub const fn scope(mut self) -> Field {
        self.scope = true;
        self
    }

    /// This field, spelt `name` in a query string.
    pub const fn in_query_as(mut self, name: &'static str) -> Field {
        self.query_name = name;
        self
    }

    /// The JSON Schema of the field's value, with its description.
    pub fn schema(&self) -> Value {
        let mut schema = self.value_schema();
        schema["description"] = json!(self.description);
        schema
    }

    /// The JSON Schema of the field's value alone (an OpenAPI query parameter carries the
    /// description beside it).
    pub fn value_schema(&self) -> Value {
        match self.kind {
            FieldKind::Text => json!({ "type": "string" }),
            FieldKind::Switch => json!({ "type": "boolean" }),
            FieldKind::Texts => json!({ "type": "array", "items": { "type": "string" } }),
            FieldKind::Count { min, max } => {
                json!({ "type": "integer", "minimum": min, "maximum": max })
            }
            FieldKind::Choice(words) => json!({ "type": "string", "enum": words }),
            FieldKind::TimeZone => {
                let names: Vec<&str> = chrono_tz::TZ_VARIANTS.iter().map(|z| z.name()).collect();
                json!({ "type": "string", "enum": names })
            }
            FieldKind::Instant => json!({ "type": "string", "format": "date-time" }),
        }
    }
}

/// A request a door refused, with the stable code every door reports it with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestError {
    /// The operation's error code (`bad_json` or `bad_query`, from [`ERROR_CODES`](super::ERROR_CODES)).
    pub code: &'static str,
    /// What is wrong, naming the field.
    pub message: String,
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RequestError {}

/// One operation's input: its fields, the pair of which exactly one is given (if any),
/// and the code of a refusal.
#[derive(Debug)]
pub struct Operation {
    /// The operation's name (`select`, `search`, ...).
    pub name: &'static str,
    /// Its fields.
    pub fields: &'static [Field],
    /// Two fields of which a request gives exactly one.
    pub one_of: Option<[&'static str; 2]>,
    /// The code of every refusal of this operation's input.
    pub error_code: &'static str,
}

/// Checked input of an operation: every field known, of its kind and in its range.
#[derive(Debug, Clone, Default)]
pub struct Args(Map<String, Value>);

impl Args {
    /// A text field, if given.
    pub fn text(&self, name: &str) -> Option<String> {
        self.0.get(name).and_then(Value::as_str).map(str::to_owned)
    }

    /// A count, if given.
    pub fn count(&self, name: &str) -> Option<u64> {
        self.0.get(name).and_then(Value::as_u64)
    }

    /// A count as a `usize`, if given (every count fits: [`MAX_COUNT`] is `u32::MAX`).
    pub fn size(&self, name: &str) -> Option<usize> {
        self.count(name)
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
    }

    /// A switch; left out is `false`.
    pub fn switch(&self, name: &str) -> bool {
        self.0.get(name).and_then(Value::as_bool).unwrap_or(false)
    }

    /// A list of texts; left out is empty.
    pub fn texts(&self, name: &str) -> Vec<String> {
        match self.0.get(name) {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The checked fields, in name order.
    pub fn fields(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }
}

/// A JSON value's kind, for messages.
pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `a`, `b` or `c` for a message.
fn listed(words: &[&str], last: &str) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("`{w}`")).collect();
    match quoted.split_last() {
        Some((end, [])) => end.clone(),
        Some((end, rest)) => format!("{} {last} {end}", rest.join(", ")),
        None => String::new(),
    }
}

impl Operation {
    fn refuse(&self, message: String) -> RequestError {
        RequestError {
            code: self.error_code,
            message,
        }
    }

    /// The fields a door takes: all of them, or (`scope: false`, MCP) those that do not
    /// say who asks.
    pub fn door_fields(&self, scope: bool) -> impl Iterator<Item = &'static Field> {
        self.fields.iter().filter(move |f| scope || !f.scope)
    }

    /// The JSON Schema of a request object (an OpenAPI body, an MCP `inputSchema`),
    /// with the scope fields or without them. No field takes `null`: a field is given or
    /// left out; no other field is taken.
    pub fn input_schema(&self, scope: bool) -> Value {
        let mut props = Map::new();
        let mut required = Vec::new();
        for f in self.door_fields(scope) {
            props.insert(f.name.to_owned(), f.schema());
            if f.required {
                required.push(f.name);
            }
        }
        let mut schema = json!({
            "type": "object",
            "properties": props,
            "additionalProperties": false,
        });
        if !required.is_empty() {
            schema["required"] = json!(required);
        }
        if let Some(pair) = self.one_of {
            schema["oneOf"] = json!(pair.map(|f| json!({ "required": [f] })));
        }
        schema
    }

    /// Check a JSON object's fields (an HTTP body; MCP arguments with `scope: false`).
    ///
    /// # Errors
    /// A [`RequestError`] naming the first field that is unknown, `null`, of the wrong
    /// kind or out of range, a required field left out, or a broken `one_of` rule.
    pub fn read(&self, object: &Map<String, Value>, scope: bool) -> Result<Args, RequestError> {
        for (key, value) in object {
            let Some(field) = self.door_fields(scope).find(|f| f.name == key) else {
                let names: Vec<&str> = self.door_fields(scope).map(|f| f.name).collect();
                return Err(self.refuse(if names.is_empty() {
                    format!("unknown field `{key}`: this operation takes no fields")
                } else {
                    format!("unknown field `{key}`, expected {}", listed(&names, "or"))
                }));
            };
            self.check_value(field, value)?;
        }
        self.finish(object.clone(), scope)
    }

    /// Check an HTTP query string's parameters (already percent-decoded). Parameters this
    /// operation does not take are ignored, as HTTP servers do; an empty text counts as
    /// left out, an empty count or choice is refused.
    ///
    /// # Errors
    /// As [`Operation::read`].
    pub fn read_query(&self, query: &HashMap<String, String>) -> Result<Args, RequestError> {
        let mut object = Map::new();
        for field in self.fields {
            let Some(raw) = query.get(field.query_name) else {
                continue;
            };
            let value = match field.kind {
                FieldKind::Text if raw.is_empty() => continue,
                FieldKind::Count { min, max } => match raw.parse::<u64>() {
                    Ok(n) => json!(n),
                    Err(_) => {
                        return Err(self.refuse(format!(
                            "`{}` must be a whole number from {min} to {max}, not `{raw}`",
                            field.query_name
                        )));
                    }
                },
                FieldKind::Switch => match raw.as_str() {
                    "true" => json!(true),
                    "false" => json!(false),
                    _ => {
                        return Err(self.refuse(format!(
                            "`{}` is `true` or `false`, not `{raw}`",
                            field.query_name
                        )));
                    }
                },
                _ => json!(raw),
            };
            self.check_value(field, &value)
                .map_err(|e| self.renamed(e, field))?;
            object.insert(field.name.to_owned(), value);
        }
        self.finish(object, true)
    }

    /// A refusal that names a query parameter as the query string spells it.
    fn renamed(&self, mut e: RequestError, field: &Field) -> RequestError {
        if field.query_name != field.name {
            e.message = e.message.replacen(
                &format!("`{}`", field.name),
                &format!("`{}`", field.query_name),
                1,
            );
        }
        e
    }

    fn check_value(&self, field: &Field, value: &Value) -> Result<(), RequestError> {
        let name = field.name;
        let wrong =
            |what: &str| self.refuse(format!("`{name}` must be {what}, not {}", kind_of(value)));
        match (field.kind, value) {
            (_, Value::Null) => {
                Err(self.refuse(format!("`{name}` may be left out, but not given as null")))
            }
            (FieldKind::Text, Value::String(_)) | (FieldKind::Switch, Value::Bool(_)) => Ok(()),
            (FieldKind::Text, _) => Err(wrong("a string")),
            (FieldKind::Switch, _) => Err(wrong("a boolean")),
            (FieldKind::Texts, Value::Array(items)) if items.iter().all(Value::is_string) => Ok(()),
            (FieldKind::Texts, _) => Err(wrong("an array of strings")),
            (FieldKind::Count { min, max }, v) => match v.as_u64() {
                Some(n) if (min..=max).contains(&n) => Ok(()),
                _ => Err(self.refuse(format!(
                    "`{name}` must be a whole number from {min} to {max}, not {v}"
                ))),
            },
            (FieldKind::Choice(words), Value::String(s)) if words.contains(&s.as_str()) => Ok(()),
            (FieldKind::Choice(words), Value::String(s)) => {
                Err(self.refuse(format!("`{name}` is {}, not `{s}`", listed(words, "or"))))
            }
            (FieldKind::TimeZone, Value::String(s)) => match s.parse::<skill_scheduler::Tz>() {
                Ok(_) => Ok(()),
                Err(_) => Err(self.refuse(format!(
                    "`{name}` must be an IANA time zone such as Europe/Paris, not `{s}`"
                ))),
            },
            (FieldKind::Instant, Value::String(s)) => match skill_scheduler::DateTime::parse_from_rfc3339(s) {
                Ok(_) => Ok(()),
                Err(e) => Err(self.refuse(format!(
                    "`{name}` must be an RFC 3339 instant such as 2026-11-20T12:00:00Z, not `{s}` ({e})"
                ))),
            },
            (FieldKind::Choice(_) | FieldKind::TimeZone | FieldKind::Instant, _) => {
                Err(wrong("a string"))
            }
        }
    }

    fn finish(&self, object: Map<String, Value>, scope: bool) -> Result<Args, RequestError> {
        if let Some(missing) = self
            .door_fields(scope)
            .find(|f| f.required && !object.contains_key(f.name))
        {
            return Err(self.refuse(format!("`{}` is required", missing.name)));
        }
        if let Some([a, b]) = self.one_of {
            if object.contains_key(a) == object.contains_key(b) {
                let what = |n: &str| {
                    self.fields
                        .iter()
                        .find(|f| f.name == n)
                        .map_or(String::new(), |f| format!(" ({})", f.description))
                };
                return Err(self.refuse(format!(
                    "give exactly one of `{a}`{} and `{b}`{}",
                    what(a),
                    what(b)
                )));
            }
        }
        Ok(Args(object))
    }
}

/// A typed request of one operation.
pub trait Request: Sized {
    /// The operation's input description.
    const OPERATION: &'static Operation;

    /// The request from checked input.
    fn from_args(args: &Args) -> Self;

    /// The request's fields as a JSON object (left-out fields absent).
    fn to_object(&self) -> Map<String, Value>;

    /// Read a request from a JSON object, with the scope fields (`scope: true`: HTTP) or
    /// without them (MCP).
    ///
    /// # Errors
    /// See [`Operation::read`].
    fn read(object: &Map<String, Value>, scope: bool) -> Result<Self, RequestError> {
        Self::OPERATION
            .read(object, scope)
            .map(|a| Self::from_args(&a))
    }

    /// Read a request from an HTTP query string.
    ///
    /// # Errors
    /// See [`Operation::read_query`].
    fn read_query(query: &HashMap<String, String>) -> Result<Self, RequestError> {
        Self::OPERATION
            .read_query(query)
            .map(|a| Self::from_args(&a))
    }

    /// Check a request built by hand (the command line's, from its flags) against the
    /// operation's rules.
    ///
    /// # Errors
    /// See [`Operation::read`].
    fn check(&self) -> Result<(), RequestError> {
        Self::OPERATION.read(&self.to_object(), true).map(drop)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    const OP: Operation = Operation {
        name: "demo",
        fields: &[
            Field::new("message", FieldKind::Text, "the text").required(),
            Field::new("n", FieldKind::Count { min: 1, max: 20 }, "how many"),
            Field::new("from", FieldKind::Choice(&["model", "user"]), "who").scope(),
            Field::new("turns", FieldKind::Texts, "earlier turns"),
            Field::new("q", FieldKind::Text, "query").in_query_as("query"),
        ],
        one_of: None,
        error_code: "bad_json",
    };

    fn read(v: Value, scope: bool) -> Result<Args, String> {
        OP.read(v.as_object().unwrap(), scope)
            .map_err(|e| e.message)
    }

    #[test]
    fn counts_are_checked_at_both_edges() {
        assert!(read(json!({"message": "m", "n": 1}), true).is_ok());
        assert!(read(json!({"message": "m", "n": 20}), true).is_ok());
        assert_eq!(
            read(json!({"message": "m", "n": 0}), true).unwrap_err(),
            "`n` must be a whole number from 1 to 20, not 0"
        );
        assert!(read(json!({"message": "m", "n": 21}), true).is_err());
        assert!(read(json!({"message": "m", "n": -1}), true).is_err());
        assert!(read(json!({"message": "m", "n": 2.5}), true).is_err());
    }

    #[test]
    fn kinds_nulls_unknown_and_required_fields_are_refused() {
        assert_eq!(
            read(json!({"n": 2}), true).unwrap_err(),
            "`message` is required"
        );
        assert_eq!(
            read(json!({"message": 3}), true).unwrap_err(),
            "`message` must be a string, not an integer"
        );
        assert_eq!(
            read(json!({"message": null}), true).unwrap_err(),
            "`message` may be left out, but not given as null"
        );
        assert!(
            read(json!({"message": "m", "extra": 1}), true)
                .unwrap_err()
                .starts_with("unknown field `extra`, expected `message`, `n`")
        );
        assert!(read(json!({"message": "m", "turns": ["a", 1]}), true).is_err());
        assert_eq!(
            read(json!({"message": "m", "from": "root"}), true).unwrap_err(),
            "`from` is `model` or `user`, not `root`"
        );
    }

    #[test]
    fn scope_fields_are_only_taken_where_the_door_takes_them() {
        assert!(read(json!({"message": "m", "from": "user"}), true).is_ok());
        assert!(
            read(json!({"message": "m", "from": "user"}), false)
                .unwrap_err()
                .starts_with("unknown field `from`")
        );
        let schema = OP.input_schema(false);
        assert!(schema["properties"].get("from").is_none());
        assert_eq!(schema["properties"]["n"]["minimum"], 1);
        assert_eq!(schema["required"], json!(["message"]));
        assert_eq!(schema["additionalProperties"], false);
    }

    #[test]
    fn query_strings_are_read_by_kind_and_spelling() {
        let q = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<HashMap<_, _>>()
        };
        let args = OP
            .read_query(&q(&[
                ("message", "m"),
                ("n", "3"),
                ("query", "x"),
                ("zz", "1"),
            ]))
            .unwrap();
        assert_eq!(args.count("n"), Some(3));
        assert_eq!(args.text("q").as_deref(), Some("x"));
        assert_eq!(
            OP.read_query(&q(&[("message", "m"), ("n", "")]))
                .unwrap_err()
                .message,
            "`n` must be a whole number from 1 to 20, not ``"
        );
        // An empty text is left out, so a required one is missing.
        assert_eq!(
            OP.read_query(&q(&[("message", "")])).unwrap_err().message,
            "`message` is required"
        );
        assert_eq!(
            OP.read_query(&q(&[("message", "m"), ("n", "99")]))
                .unwrap_err()
                .message,
            "`n` must be a whole number from 1 to 20, not 99"
        );
    }
}
