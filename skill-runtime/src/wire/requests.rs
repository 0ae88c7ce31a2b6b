//! Every operation's typed request, with its one input description ([`Operation`]).
//! HTTP, MCP and the command line build these, and the Engine answers them.
//!
//! Counts have one rule at every door: a value outside the documented range is refused
//! (never clamped), with the operation's code.

use serde_json::{Map, Value, json};
use skill_registry::Caller;
use skill_search::SelectOptions;

use super::request::{Args, Field, FieldKind, MAX_COUNT, Operation, Request};
use crate::ops::{Scope, SearchQuery};

/// `profile`: the processing profile (profile affinity).
pub(super) const PROFILE: Field = Field::new(
    "profile",
    FieldKind::Text,
    "the processing profile (profile affinity)",
)
.scope();
/// `caller`: who reads.
pub(super) const CALLER: Field = Field::new(
    "caller",
    FieldKind::Choice(&["model", "user"]),
    "who reads: `model` (default) or `user`",
)
.scope();
/// Any count up to [`MAX_COUNT`].
pub(super) const ANY_COUNT: FieldKind = FieldKind::Count {
    min: 0,
    max: MAX_COUNT,
};

/// The text of a one-of field pair's member, for a request's JSON.
pub(super) fn put(map: &mut Map<String, Value>, name: &str, value: Option<&impl serde::Serialize>) {
    if let Some(v) = value {
        map.insert(name.to_owned(), json!(v));
    }
}

/// The caller a checked `caller`/`from` value names.
pub(super) fn caller(word: Option<String>, default: Caller) -> Caller {
    match word.as_deref() {
        Some("user") => Caller::User,
        Some("model") => Caller::Model,
        _ => default,
    }
}

pub(super) fn caller_word(c: Caller) -> &'static str {
    match c {
        Caller::User => "user",
        _ => "model",
    }
}

/// Skill selection for a message (`POST /v1/select`, MCP `select_skills`, `select`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SelectRequest {
    /// The user's request.
    pub message: String,
    /// Earlier turns, oldest first.
    pub recent_turns: Vec<String>,
    /// Most skills selected (default [`skill_search::DEFAULT_MAX_SKILLS`]).
    pub max_skills: Option<usize>,
    /// Token budget of the disclosed text (default [`skill_search::DEFAULT_BUDGET_TOKENS`]).
    pub budget_tokens: Option<usize>,
    /// The processing profile.
    pub profile: Option<String>,
}

pub(super) const SELECT: Operation = Operation {
    name: "select",
    fields: &[
        Field::new("message", FieldKind::Text, "the user's request").required(),
        Field::new(
            "recent_turns",
            FieldKind::Texts,
            "earlier turns, oldest first",
        ),
        Field::new(
            "max_skills",
            FieldKind::Count {
                min: 1,
                max: skill_search::MAX_MAX_SKILLS as u64,
            },
            "most skills selected (1 to 20, default 3)",
        ),
        Field::new(
            "budget_tokens",
            ANY_COUNT,
            "token budget of the disclosed text (default 6000)",
        ),
        PROFILE,
    ],
    one_of: None,
    error_code: "bad_json",
};

impl Request for SelectRequest {
    const OPERATION: &'static Operation = &SELECT;

    fn from_args(a: &Args) -> Self {
        SelectRequest {
            message: a.text("message").unwrap_or_default(),
            recent_turns: a.texts("recent_turns"),
            max_skills: a.size("max_skills"),
            budget_tokens: a.size("budget_tokens"),
            profile: a.text("profile"),
        }
    }

    fn to_object(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("message".into(), json!(self.message));
        if !self.recent_turns.is_empty() {
            m.insert("recent_turns".into(), json!(self.recent_turns));
        }
        put(&mut m, "max_skills", self.max_skills.as_ref());
        put(&mut m, "budget_tokens", self.budget_tokens.as_ref());
        put(&mut m, "profile", self.profile.as_ref());
        m
    }
}

impl SelectRequest {
    /// The selection options it asks for (the defaults where it says nothing).
    pub fn options(&self) -> SelectOptions {
        let defaults = SelectOptions::default();
        SelectOptions {
            recent_turns: self.recent_turns.clone(),
            max_skills: self.max_skills.unwrap_or(defaults.max_skills),
            budget_tokens: self.budget_tokens.unwrap_or(defaults.budget_tokens),
            profile: self.profile.clone(),
            ..defaults
        }
    }
}

/// Ranked skills for a query (`GET /v1/search`, MCP `search_skills`, `search`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchRequest {
    /// The query text (HTTP's `q`).
    pub query: String,
    /// Most results (default [`DEFAULT_RESULTS`]).
    pub limit: Option<usize>,
    /// The processing profile.
    pub profile: Option<String>,
}

/// Results a search or notes search returns when the request does not say.
pub const DEFAULT_RESULTS: usize = 10;

pub(super) const SEARCH: Operation = Operation {
    name: "search",
    fields: &[
        Field::new("query", FieldKind::Text, "the query text")
            .required()
            .in_query_as("q"),
        Field::new(
            "limit",
            FieldKind::Count {
                min: 1,
                max: skill_search::MAX_LIMIT as u64,
            },
            "most results (1 to 1000, default 10)",
        ),
        PROFILE,
    ],
    one_of: None,
    error_code: "bad_query",
};

impl Request for SearchRequest {
    const OPERATION: &'static Operation = &SEARCH;

    fn from_args(a: &Args) -> Self {
        SearchRequest {
            query: a.text("query").unwrap_or_default(),
            limit: a.size("limit"),
            profile: a.text("profile"),
        }
    }

    fn to_object(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("query".into(), json!(self.query));
        put(&mut m, "limit", self.limit.as_ref());
        put(&mut m, "profile", self.profile.as_ref());
        m
    }
}

impl SearchRequest {
    /// The engine's search query.
    pub fn query(&self) -> SearchQuery {
        SearchQuery {
            text: self.query.clone(),
            limit: self.limit.unwrap_or(DEFAULT_RESULTS),
            profile: self.profile.clone(),
        }
    }
}

/// Ranked notes for a query (`GET /v1/notes/search`, `notes-search`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NotesSearchRequest {
    /// The query text (HTTP's `q`).
    pub query: String,
    /// Most results (default [`DEFAULT_RESULTS`]).
    pub limit: Option<usize>,
}

pub(super) const NOTES_SEARCH: Operation = Operation {
    name: "notes_search",
    fields: &[
        Field::new("query", FieldKind::Text, "the query text")
            .required()
            .in_query_as("q"),
        Field::new(
            "limit",
            FieldKind::Count {
                min: 1,
                max: skill_search::MAX_NOTE_RESULTS as u64,
            },
            "most results (1 to 1000, default 10)",
        ),
    ],
    one_of: None,
    error_code: "bad_query",
};

impl Request for NotesSearchRequest {
    const OPERATION: &'static Operation = &NOTES_SEARCH;

    fn from_args(a: &Args) -> Self {
        NotesSearchRequest {
            query: a.text("query").unwrap_or_default(),
            limit: a.size("limit"),
        }
    }

    fn to_object(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("query".into(), json!(self.query));
        put(&mut m, "limit", self.limit.as_ref());
        m
    }
}

impl NotesSearchRequest {
    /// Most results, the default filled in.
    pub fn limit(&self) -> usize {
        self.limit.unwrap_or(DEFAULT_RESULTS)
    }
}

/// Split model output into commands and text (`POST /v1/extract`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExtractRequest {
    /// The model output.
    pub output: String,
}

pub(super) const EXTRACT: Operation = Operation {
    name: "extract",
    fields: &[Field::new("output", FieldKind::Text, "the model output").required()],
    one_of: None,
    error_code: "bad_json",
};

impl Request for ExtractRequest {
    const OPERATION: &'static Operation = &EXTRACT;

    fn from_args(a: &Args) -> Self {
        ExtractRequest {
            output: a.text("output").unwrap_or_default(),
        }
    }

    fn to_object(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("output".into(), json!(self.output));
        m
    }
}

/// What a route or execute request names: one line, or a whole model output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// One command line (or, routed from a user, one message).
    Line(String),
    /// A whole model output (its ```` ```cmd ```` blocks).
    Output(String),
}

impl Default for Input {
    fn default() -> Self {
        Input::Line(String::new())
    }
}

/// Route one line or a whole output without running anything (`POST /v1/route`, MCP
/// `route`, `route`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RouteRequest {
    /// What to route.
    pub input: Input,
    /// Who wrote it (HTTP's `from`; MCP routes as the model).
    pub from: Option<Caller>,
    /// The processing profile.
    pub profile: Option<String>,
}

pub(super) const ROUTE: Operation = Operation {
    name: "route",
    fields: &[
        Field::new("text", FieldKind::Text, "one command line or user message"),
        Field::new(
            "output",
            FieldKind::Text,
            "a whole model output (instead of text)",
        ),
        Field::new(
            "from",
            FieldKind::Choice(&["model", "user"]),
            "`model` (default) or `user`",
        )
        .scope(),
        PROFILE,
    ],
    one_of: Some(["text", "output"]),
    error_code: "bad_json",
};

impl Request for RouteRequest {
    const OPERATION: &'static Operation = &ROUTE;

    fn from_args(a: &Args) -> Self {
        RouteRequest {
            input: match (a.text("text"), a.text("output")) {
                (_, Some(output)) => Input::Output(output),
                (text, None) => Input::Line(text.unwrap_or_default()),
            },
            from: a.text("from").map(|w| caller(Some(w), Caller::Model)),
            profile: a.text("profile"),
        }
    }

    fn to_object(&self) -> Map<String, Value> {
        let mut m = Map::new();
        match &self.input {
            Input::Line(t) => m.insert("text".into(), json!(t)),
            Input::Output(o) => m.insert("output".into(), json!(o)),
        };
        put(&mut m, "from", self.from.map(caller_word).as_ref());
        put(&mut m, "profile", self.profile.as_ref());
        m
    }
}

impl RouteRequest {
    /// Who asks: the caller it names (the model by default), under its profile.
    pub fn scope(&self) -> Scope {
        Scope {
            caller: self.from.unwrap_or(Caller::Model),
            profile: self.profile.clone(),
        }
    }
}

/// Execute one command line or a whole model output as the model (`POST /v1/execute`,
/// MCP `execute`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExecuteRequest {
    /// What to execute.
    pub input: Input,
    /// The processing profile.
    pub profile: Option<String>,
}

pub(super) const EXECUTE: Operation = Operation {
    name: "execute",
    fields: &[
        Field::new("output", FieldKind::Text, "a whole model output"),
        Field::new(
            "command",
            FieldKind::Text,
            "one command line (instead of output)",
        ),
        PROFILE,
    ],
    one_of: Some(["output", "command"]),
    error_code: "bad_json",
};

impl Request for ExecuteRequest {
    const OPERATION: &'static Operation = &EXECUTE;

    fn from_args(a: &Args) -> Self {
        ExecuteRequest {
            input: match (a.text("output"), a.text("command")) {
                (Some(output), _) => Input::Output(output),
                (None, command) => Input::Line(command.unwrap_or_default()),
            },
            profile: a.text("profile"),
        }
    }

    fn to_object(&self) -> Map<String, Value> {
        let mut m = Map::new();
        match &self.input {
            Input::Line(t) => m.insert("command".into(), json!(t)),
            Input::Output(o) => m.insert("output".into(), json!(o)),
        };
        put(&mut m, "profile", self.profile.as_ref());
        m
    }
}

/// A user's slash command (`POST /v1/invoke`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InvokeRequest {
    /// The user's line (`/skill name args`, `/command args`, `/name args`).
    pub line: String,
    /// The processing profile.
    pub profile: Option<String>,
}

pub(super) const INVOKE: Operation = Operation {
    name: "invoke",
    fields: &[
        Field::new("line", FieldKind::Text, "the user's line").required(),
        PROFILE,
    ],
    one_of: None,
    error_code: "bad_json",
};

impl Request for InvokeRequest {
    const OPERATION: &'static Operation = &INVOKE;

    fn from_args(a: &Args) -> Self {
        InvokeRequest {
            line: a.text("line").unwrap_or_default(),
            profile: a.text("profile"),
        }
    }

    fn to_object(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("line".into(), json!(self.line));
        put(&mut m, "profile", self.profile.as_ref());
        m
    }
}

/// Use one skill by name with arguments, as the model (MCP `use_skill`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UseSkillRequest {
    /// The skill's name.
    pub name: String,
    /// Its arguments (`$ARGUMENTS`), if any.
    pub arguments: Option<String>,
    /// The processing profile.
    pub profile: Option<String>,
}

pub(super) const USE_SKILL: Operation = Operation {
    name: "use_skill",
    fields: &[
        Field::new("name", FieldKind::Text, "the skill's name").required(),
        Field::new(
            "arguments",
            FieldKind::Text,
            "replaces $ARGUMENTS in the skill",
        ),
        PROFILE,
    ],
    one_of: None,
    error_code: "bad_json",
};

impl Request for UseSkillRequest {
    const OPERATION: &'static Operation = &USE_SKILL;

    fn from_args(a: &Args) -> Self {
        UseSkillRequest {
            name: a.text("name").unwrap_or_default(),
            arguments: a.text("arguments"),
            profile: a.text("profile"),
        }
    }

    fn to_object(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("name".into(), json!(self.name));
        put(&mut m, "arguments", self.arguments.as_ref());
        put(&mut m, "profile", self.profile.as_ref());
        m
    }
}

/// One skill's text, one section of it, or its outline (MCP `load_skill`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadSkillRequest {
    /// The skill's name.
    pub name: String,
    /// The slug of one section.
    pub section: Option<String>,
    /// The outline instead of the text.
    pub outline: bool,
    /// The processing profile.
    pub profile: Option<String>,
}

pub(super) const LOAD_SKILL: Operation = Operation {
    name: "load_skill",
    fields: &[
        Field::new("name", FieldKind::Text, "the skill's name").required(),
        Field::new(
            "section",
            FieldKind::Text,
            "the slug of one section to load (with its subsections)",
        ),
        Field::new(
            "outline",
            FieldKind::Switch,
            "return the skill's outline instead of its text",
        ),
        PROFILE,
    ],
    one_of: None,
    error_code: "bad_json",
};

impl Request for LoadSkillRequest {
    const OPERATION: &'static Operation = &LOAD_SKILL;

    fn from_args(a: &Args) -> Self {
        LoadSkillRequest {
            name: a.text("name").unwrap_or_default(),
            section: a.text("section"),
            outline: a.switch("outline"),
            profile: a.text("profile"),
        }
    }

    fn to_object(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("name".into(), json!(self.name));
        put(&mut m, "section", self.section.as_ref());
        if self.outline {
            m.insert("outline".into(), json!(true));
        }
        put(&mut m, "profile", self.profile.as_ref());
        m
    }
}

impl LoadSkillRequest {
    /// The rule no schema states: an outline and a section are not asked together.
    ///
    /// # Errors
    /// The operation's code when both are given.
    pub fn checked(self) -> Result<Self, super::RequestError> {
        if self.outline && self.section.is_some() {
            return Err(super::RequestError {
                code: LOAD_SKILL.error_code,
                message: "give `outline` or `section`, not both".to_owned(),
            });
        }
        Ok(self)
    }
}

/// The `get_skill` tiers (`GET /v1/get_skill`, MCP `get_skill`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GetSkillRequest {
    /// Empty, a domain, `domain.command`, `domain.all` or a skill name (`#slug`: a section).
    pub path: Option<String>,
    /// Who reads.
    pub caller: Option<Caller>,
    /// The processing profile.
    pub profile: Option<String>,
}

pub(super) const GET_SKILL: Operation = Operation {
    name: "get_skill",
    fields: &[
        Field::new(
            "path",
            FieldKind::Text,
            "empty, a domain, domain.command, domain.all or a skill name, optionally followed by #slug for one section",
        ),
        PROFILE,
        CALLER,
    ],
    one_of: None,
    error_code: "bad_query",
};

impl Request for GetSkillRequest {
    const OPERATION: &'static Operation = &GET_SKILL;

    fn from_args(a: &Args) -> Self {
        GetSkillRequest {
            path: a.text("path").filter(|p| !p.trim().is_empty()),
            caller: a.text("caller").map(|w| caller(Some(w), Caller::Model)),
            profile: a.text("profile"),
        }
    }

    fn to_object(&self) -> Map<String, Value> {
        let mut m = Map::new();
        put(&mut m, "path", self.path.as_ref());
        put(&mut m, "caller", self.caller.map(caller_word).as_ref());
        put(&mut m, "profile", self.profile.as_ref());
        m
    }
}

impl GetSkillRequest {
    /// Who asks.
    pub fn scope(&self) -> Scope {
        Scope {
            caller: self.caller.unwrap_or(Caller::Model),
            profile: self.profile.clone(),
        }
    }
}

/// A workflow for `workflow.build` (`POST /v1/workflows`): its fields become the
/// handler's flags (a switch given `false` is left out).
pub const BUILD_WORKFLOW: Operation = Operation {
    name: "build_workflow",
    fields: &[
        Field::new("name", FieldKind::Text, "the workflow's name").required(),
        Field::new("description", FieldKind::Text, "what it does").required(),
        Field::new("steps", FieldKind::Text, "its steps, one command per line"),
        Field::new("schedule", FieldKind::Text, "a cron expression"),
        Field::new(
            "domain",
            FieldKind::Text,
            "the domain folder (default workflows)",
        ),
        Field::new(
            "overwrite",
            FieldKind::Switch,
            "replace an existing workflow of that name",
        ),
    ],
    one_of: None,
    error_code: "bad_json",
};

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn object(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    /// A request read and written back is the same request, for every operation's typed
    /// form (so `check` judges exactly what the command line built).
    #[test]
    fn requests_round_trip_through_their_object() {
        let select = SelectRequest::read(
            &object(json!({"message": "m", "recent_turns": ["a"], "max_skills": 20, "budget_tokens": 0, "profile": "p"})),
            true,
        )
        .unwrap();
        assert_eq!(
            SelectRequest::read(&select.to_object(), true).unwrap(),
            select
        );
        let route =
            RouteRequest::read(&object(json!({"output": "o", "from": "user"})), true).unwrap();
        assert_eq!(route.input, Input::Output("o".into()));
        assert_eq!(route.scope().caller, Caller::User);
        assert_eq!(RouteRequest::read(&route.to_object(), true).unwrap(), route);
        let exec = ExecuteRequest::read(&object(json!({"command": "c"})), true).unwrap();
        assert_eq!(ExecuteRequest::read(&exec.to_object(), true).unwrap(), exec);
    }

    #[test]
    fn max_skills_is_refused_outside_one_to_twenty_at_every_door() {
        for n in [1, skill_search::MAX_MAX_SKILLS] {
            let r = SelectRequest {
                message: "m".into(),
                max_skills: Some(n),
                ..SelectRequest::default()
            };
            assert!(r.check().is_ok(), "{n}");
        }
        for n in [0, skill_search::MAX_MAX_SKILLS + 1] {
            let r = SelectRequest {
                message: "m".into(),
                max_skills: Some(n),
                ..SelectRequest::default()
            };
            assert_eq!(r.check().unwrap_err().code, "bad_json", "{n}");
        }
    }

    #[test]
    fn search_limits_are_refused_outside_their_range() {
        for (n, ok) in [(0, false), (1, true), (skill_search::MAX_LIMIT, true)] {
            let r = SearchRequest {
                query: "q".into(),
                limit: Some(n),
                profile: None,
            };
            assert_eq!(r.check().is_ok(), ok, "{n}");
        }
        let over = SearchRequest {
            query: "q".into(),
            limit: Some(skill_search::MAX_LIMIT + 1),
            profile: None,
        };
        assert_eq!(over.check().unwrap_err().code, "bad_query");
        let notes = NotesSearchRequest {
            query: "q".into(),
            limit: Some(skill_search::MAX_NOTE_RESULTS + 1),
        };
        assert!(notes.check().is_err());
    }

    #[test]
    fn exactly_one_of_a_pair() {
        let both = object(json!({"text": "a", "output": "b"}));
        let err = RouteRequest::read(&both, true).unwrap_err();
        assert!(
            err.message.starts_with("give exactly one of `text`"),
            "{err}"
        );
        assert!(ExecuteRequest::read(&Map::new(), true).is_err());
        let load = LoadSkillRequest::read(
            &object(json!({"name": "n", "outline": true, "section": "s"})),
            false,
        )
        .unwrap();
        assert!(load.checked().is_err());
    }

    #[test]
    fn every_operation_is_listed_once_with_a_known_code() {
        let mut names: Vec<&str> = super::super::OPERATIONS.iter().map(|o| o.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), super::super::OPERATIONS.len());
        for op in super::super::OPERATIONS {
            assert!(
                super::super::ERROR_CODES
                    .iter()
                    .any(|c| c.code == op.error_code && c.status == 400),
                "{}",
                op.name
            );
        }
    }
}
