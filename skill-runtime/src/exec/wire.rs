//! The JSON of routing: a [`Route`] and its parts (an invocation, a slash command, a skill
//! listing, a routing error), the flags, an extraction of model output, and one command of
//! model output with its route.
//!
//! The router's types are plain data without a wire format; these shapes borrow from them
//! and fix the field names, the `route` tag and the snake_case error codes.
//! [`wire`](crate::wire) re-exports them, and [`exec`](crate::exec) renders the routes it does
//! not run with them, so one route has one JSON. They live under `exec` because the wire
//! already depends on it (an outcome's shape): exec using `wire` would be a module cycle.

use std::collections::BTreeMap;

use serde::Serialize;
use skill_router::{
    Command, Extraction, FlagValue, Flags, Invocation, ListedSkill, Route, RoutedOutput, Segment,
    SlashInvocation,
};

/// A code in the wire's convention: kebab-case (the router's) becomes snake_case.
pub fn snake_case(code: &str) -> String {
    code.replace('-', "_")
}

/// A route, tagged by `route` (`help`, `invoke`, `slash`, `skill_list`, `builtin`, `message`,
/// `error`), with the variant's fields beside the tag.
#[derive(Debug, Serialize)]
#[serde(tag = "route", rename_all = "snake_case")]
pub enum RouteShape<'a> {
    /// Help text: a `get_skill` tier or `<name> --help`.
    Help {
        /// The dot path asked about (`null` for plain `get_skill`).
        topic: Option<&'a str>,
        /// The text to show.
        text: &'a str,
    },
    /// A skill invoked by the model.
    Invoke(InvocationShape<'a>),
    /// A skill invoked by a user's slash command.
    Slash(SlashShape<'a>),
    /// `/skills`.
    SkillList {
        /// The skills, by name.
        skills: Vec<ListedSkillShape<'a>>,
        /// The listing as text.
        text: &'a str,
    },
    /// A built-in slash command for the host.
    Builtin {
        /// The command word, without the slash.
        command: &'a str,
        /// The rest of the line.
        args: &'a str,
    },
    /// A plain user message.
    Message {
        /// The message.
        text: &'a str,
        /// Why a line that looked like a command is a plain message.
        note: Option<&'a str>,
        /// Closest names for an unknown slash command.
        suggestions: &'a [String],
    },
    /// A command that cannot be routed.
    Error(RouteErrorShape),
}

impl<'a, S: AsRef<str>> From<&'a Route<S>> for RouteShape<'a> {
    fn from(r: &'a Route<S>) -> Self {
        match r {
            Route::Help { topic, text } => RouteShape::Help {
                topic: topic.as_deref(),
                text,
            },
            Route::Invoke(i) => RouteShape::Invoke(i.into()),
            Route::Slash(s) => RouteShape::Slash(s.as_ref().into()),
            Route::SkillList { skills, text } => RouteShape::SkillList {
                skills: skills.iter().map(ListedSkillShape::from).collect(),
                text,
            },
            Route::Builtin { command, args } => RouteShape::Builtin { command, args },
            Route::Message {
                text,
                note,
                suggestions,
            } => RouteShape::Message {
                text,
                note: note.as_deref(),
                suggestions,
            },
            Route::Error(e) => RouteShape::Error(RouteErrorShape::from(e)),
        }
    }
}

/// A routing error: `{code, message, suggestions, column?}`, the code in snake_case.
#[derive(Debug, Serialize)]
pub struct RouteErrorShape {
    code: String,
    message: String,
    suggestions: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    column: Option<u32>,
}

impl From<&skill_router::Error> for RouteErrorShape {
    fn from(e: &skill_router::Error) -> Self {
        RouteErrorShape {
            code: snake_case(e.code()),
            message: e.to_string(),
            suggestions: e.suggestions().to_vec(),
            column: e.column(),
        }
    }
}

/// A flag's value: `true` for a switch, a string for one value, an array for several.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum FlagValueShape<'a> {
    /// Given with no value.
    Switch(bool),
    /// One value.
    One(&'a str),
    /// Several values.
    Many(Vec<&'a str>),
}

impl<'a, S: AsRef<str>> From<&'a FlagValue<S>> for FlagValueShape<'a> {
    fn from(v: &'a FlagValue<S>) -> Self {
        match v {
            FlagValue::Switch(b) => FlagValueShape::Switch(*b),
            FlagValue::One(s) => FlagValueShape::One(s.as_ref()),
            FlagValue::Many(vs) => FlagValueShape::Many(vs.iter().map(AsRef::as_ref).collect()),
        }
    }
}

/// The flags as an object, by name (owned flags, or flags borrowing from a model's output).
pub fn flags_shape<S: AsRef<str>>(flags: &Flags<S>) -> BTreeMap<&str, FlagValueShape<'_>> {
    flags.iter().map(|(k, v)| (k, v.into())).collect()
}

/// A skill invoked by the model: its flags, positionals, raw line, access class, handler and
/// layer.
#[derive(Debug, Serialize)]
pub struct InvocationShape<'a> {
    skill: &'a str,
    flags: BTreeMap<&'a str, FlagValueShape<'a>>,
    positionals: Vec<&'a str>,
    raw: &'a str,
    access: &'static str,
    handler: Option<&'a str>,
    layer: &'a str,
}

impl<'a, S: AsRef<str>> From<&'a Invocation<S>> for InvocationShape<'a> {
    fn from(i: &'a Invocation<S>) -> Self {
        InvocationShape {
            skill: i.skill.as_ref(),
            flags: flags_shape(&i.flags),
            positionals: i.positionals.iter().map(AsRef::as_ref).collect(),
            raw: i.raw.as_ref(),
            access: i.access.as_str(),
            handler: i.handler.as_ref().map(AsRef::as_ref),
            layer: i.layer.as_ref(),
        }
    }
}

/// A skill invoked by a user's slash command.
#[derive(Debug, Serialize)]
pub struct SlashShape<'a> {
    skill: &'a str,
    via: &'static str,
    args: &'a str,
    arguments: &'a [String],
    delivery: &'static str,
    tool: Option<&'a str>,
    content: Option<&'a str>,
}

impl<'a> From<&'a SlashInvocation> for SlashShape<'a> {
    fn from(s: &'a SlashInvocation) -> Self {
        SlashShape {
            skill: &s.skill,
            via: s.via.as_str(),
            args: &s.args,
            arguments: &s.arguments,
            delivery: s.delivery.as_str(),
            tool: s.tool.as_deref(),
            content: s.content.as_deref(),
        }
    }
}

/// One line of `/skills`.
#[derive(Debug, Serialize)]
pub struct ListedSkillShape<'a> {
    name: &'a str,
    description: &'a str,
    command: Option<&'a str>,
    argument_hint: Option<&'a str>,
}

impl<'a> From<&'a ListedSkill> for ListedSkillShape<'a> {
    fn from(l: &'a ListedSkill) -> Self {
        ListedSkillShape {
            name: &l.name,
            description: &l.description,
            command: l.command.as_deref(),
            argument_hint: l.argument_hint.as_deref(),
        }
    }
}

/// A route field of a shape, written as its [`RouteShape`].
pub(crate) fn owned_route<S: serde::Serializer>(r: &Route, s: S) -> Result<S::Ok, S::Error> {
    RouteShape::from(r).serialize(s)
}

/// A borrowed route field of a shape, written as its [`RouteShape`].
pub(crate) fn borrowed_route<S: serde::Serializer>(r: &&Route, s: S) -> Result<S::Ok, S::Error> {
    RouteShape::from(*r).serialize(s)
}

/// A whole model output routed: `{extraction: {segments}, routes: [...]}`, and
/// `not_routed`, the number of commands past the routed ones, when there are any.
#[derive(Debug, Serialize)]
pub struct RoutedOutputShape<'a> {
    extraction: SegmentsShape<'a>,
    routes: Vec<RoutedCommandShape<'a>>,
    #[serde(skip_serializing_if = "is_zero")]
    not_routed: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// An extraction as its segments only.
#[derive(Debug, Serialize)]
struct SegmentsShape<'a> {
    segments: Vec<SegmentShape<'a>>,
}

impl<'a> From<&'a RoutedOutput<'a>> for RoutedOutputShape<'a> {
    fn from(o: &'a RoutedOutput<'a>) -> Self {
        RoutedOutputShape {
            extraction: SegmentsShape {
                segments: o
                    .extraction
                    .segments
                    .iter()
                    .map(SegmentShape::from)
                    .collect(),
            },
            routes: o
                .routes
                .iter()
                .map(|r| RoutedCommandShape {
                    command: r.command,
                    line: r.line,
                    route: (&r.route).into(),
                })
                .collect(),
            not_routed: o
                .extraction
                .commands()
                .count()
                .saturating_sub(o.routes.len()),
        }
    }
}

/// One command of model output and where it goes: `{command, line, route, ...}`.
#[derive(Debug, Serialize)]
pub struct RoutedCommandShape<'a> {
    /// The command line.
    pub command: &'a str,
    /// Its 1-based line in the output.
    pub line: u32,
    /// Its route, flattened beside the command.
    #[serde(flatten)]
    pub route: RouteShape<'a>,
}

/// One `cmd` block command: its text, 1-based line and block number.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct CommandShape<'a> {
    text: &'a str,
    line: u32,
    block: u32,
}

impl<'a> From<Command<'a>> for CommandShape<'a> {
    fn from(c: Command<'a>) -> Self {
        CommandShape {
            text: c.text,
            line: c.line,
            block: c.block,
        }
    }
}

/// One segment of model output, tagged by `kind` (`text`, `command`, `unterminated`).
#[derive(Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum SegmentShape<'a> {
    Text { text: &'a str, line: u32 },
    Command(CommandShape<'a>),
    Unterminated { text: &'a str, line: u32 },
}

impl<'a> From<&Segment<'a>> for SegmentShape<'a> {
    fn from(s: &Segment<'a>) -> Self {
        match *s {
            Segment::Text { text, line } => SegmentShape::Text { text, line },
            Segment::Command(c) => SegmentShape::Command(c.into()),
            Segment::Unterminated { text, line } => SegmentShape::Unterminated { text, line },
        }
    }
}

/// An unterminated `cmd` block.
#[derive(Debug, Serialize)]
struct UnterminatedShape<'a> {
    line: u32,
    text: &'a str,
}

/// `POST /v1/extract` and `extract`: commands, text, unterminated blocks and every
/// segment in order.
#[derive(Debug, Serialize)]
pub struct ExtractionShape<'a> {
    commands: Vec<CommandShape<'a>>,
    text: String,
    unterminated: Vec<UnterminatedShape<'a>>,
    segments: Vec<SegmentShape<'a>>,
}

impl<'a> From<&Extraction<'a>> for ExtractionShape<'a> {
    fn from(x: &Extraction<'a>) -> Self {
        ExtractionShape {
            commands: x.commands().map(CommandShape::from).collect(),
            text: x.text(),
            unterminated: x
                .unterminated()
                .map(|(line, text)| UnterminatedShape { line, text })
                .collect(),
            segments: x.segments.iter().map(SegmentShape::from).collect(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn json(r: &Route) -> String {
        serde_json::to_string(&RouteShape::from(r)).unwrap()
    }

    #[test]
    fn an_invocation_carries_its_flags_access_and_layer() {
        let mut flags = Flags::new();
        flags.insert("tags", FlagValue::Many(vec!["a".into(), "b".into()]));
        flags.insert("overdue", FlagValue::One("x".into()));
        flags.insert("all", FlagValue::Switch(true));
        let inv = Invocation::with_flags("tasks.search", flags, None, "builtin");
        assert_eq!(
            json(&Route::Invoke(inv)),
            r#"{"route":"invoke","skill":"tasks.search","flags":{"all":true,"overdue":"x","tags":["a","b"]},"positionals":[],"raw":"tasks.search --all --overdue x --tags a b","access":"read_only","handler":null,"layer":"builtin"}"#
        );
    }

    #[test]
    fn a_message_and_help_keep_their_nulls() {
        let msg = Route::Message {
            text: "hello".into(),
            note: None,
            suggestions: Vec::new(),
        };
        assert_eq!(
            json(&msg),
            r#"{"route":"message","text":"hello","note":null,"suggestions":[]}"#
        );
        let help = Route::Help {
            topic: None,
            text: "t".into(),
        };
        assert_eq!(json(&help), r#"{"route":"help","topic":null,"text":"t"}"#);
    }

    #[test]
    fn an_error_has_a_snake_case_code_and_a_column_only_when_known() {
        let e = skill_router::Error::UnterminatedQuote {
            quote: '\'',
            column: 12,
        };
        let s = json(&Route::Error(e));
        assert!(
            s.starts_with(r#"{"route":"error","code":"unterminated_quote","#),
            "{s}"
        );
        assert!(s.ends_with(r#""suggestions":[],"column":12}"#), "{s}");
    }
}
