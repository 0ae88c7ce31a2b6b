//! What routing gives: [`Route`](crate::Route) and its parts ([`Invocation`], [`SlashInvocation`],
//! [`ListedSkill`]), a whole output routed ([`RoutedOutput`]), and the read-only or
//! mutating classification ([`access_of`]). Plain data, apart from the [`Router`](crate::Router)
//! that builds it.

use std::borrow::Cow;
use std::sync::Arc;

use skill_registry::Skill;

use crate::Error;
use crate::extract::Extraction;
use crate::flags::Flags;

/// Read-only or mutating (markdown-first 15.7): the orchestrator may run read-only skills
/// itself; mutating ones are delegated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// `*.search`, `*.get`, `*.list`, `*.read`.
    ReadOnly,
    /// Everything else (`*.create`, `*.update`, `*.delete`, `*.send`, and any name not
    /// known to be read-only: when in doubt, a skill is treated as having side effects).
    Mutating,
}

impl Access {
    /// The class's stable name: `read_only` or `mutating`.
    pub fn as_str(self) -> &'static str {
        match self {
            Access::ReadOnly => "read_only",
            Access::Mutating => "mutating",
        }
    }
}

/// The names markdown-first 15.7 calls read-only, as the last dot segment.
const READ_ONLY_ACTIONS: &[&str] = &["search", "get", "list", "read"];

/// Classify a skill name (markdown-first 15.7).
pub fn access_of(name: &str) -> Access {
    match name.rsplit_once('.') {
        Some((_, action)) if READ_ONLY_ACTIONS.contains(&action) => Access::ReadOnly,
        _ => Access::Mutating,
    }
}

/// A command that invokes a skill (markdown-first `RoutedCommand`).
///
/// `S` is the string type: [`String`] (the default) for an invocation a caller keeps, or
/// `Cow<'a, str>` for one that borrows from the model's output where it can (the name, the
/// raw line, unquoted flags and values), as [`Router::route_output`](crate::Router::route_output)
/// gives it. [`Invocation::into_owned`] converts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation<S = String> {
    /// The skill's name, exactly as registered.
    pub skill: S,
    /// The flags, best effort (Approach A).
    pub flags: Flags<S>,
    /// The words that are not flags or flag values, in order.
    pub positionals: Vec<S>,
    /// The command line as written, trimmed.
    pub raw: S,
    /// Read-only or mutating.
    pub access: Access,
    /// The skill's `handler`, if it declares one (markdown-first 5.4: none means the body
    /// is a template for the model).
    pub handler: Option<S>,
    /// The layer the skill was loaded from (shared with the registry's index, so routing
    /// does not copy it).
    pub layer: Arc<str>,
}

impl<S: Into<String>> Invocation<S> {
    /// The invocation with owned strings (text already owned is moved, not copied).
    pub fn into_owned(self) -> Invocation {
        Invocation {
            skill: self.skill.into(),
            flags: self.flags.into_owned(),
            positionals: self.positionals.into_iter().map(Into::into).collect(),
            raw: self.raw.into(),
            access: self.access,
            handler: self.handler.map(Into::into),
            layer: self.layer,
        }
    }
}

impl<S: AsRef<str>> Invocation<S> {
    /// The argument text after the command word of the raw line (what `$ARGUMENTS`
    /// holds for a model command).
    pub fn arguments(&self) -> &str {
        let raw = self.raw.as_ref().trim();
        match raw.split_once(|c: char| c.is_whitespace()) {
            Some((_, rest)) => rest.trim(),
            None => "",
        }
    }
}

impl Invocation {
    /// A skill invoked with these flags and no positionals, as if the line
    /// `<name> --flag value ...` had been routed (the raw text is that line, quoted so it
    /// tokenizes back to the same words). A host calling a handler directly, such as the
    /// built-in `workflow.build`, uses it.
    pub fn with_flags(
        name: &str,
        flags: Flags,
        handler: Option<String>,
        layer: impl Into<Arc<str>>,
    ) -> Invocation {
        let mut words = vec![name.to_owned()];
        for (flag, value) in flags.iter() {
            words.push(format!("--{flag}"));
            words.extend(value.values().iter().cloned());
        }
        Invocation {
            skill: name.to_owned(),
            flags,
            positionals: Vec::new(),
            raw: crate::tokenize::join(&words),
            access: access_of(name),
            handler,
            layer: layer.into(),
        }
    }

    /// A scheduled fire of a skill: no flags, no positionals, the raw text its name.
    pub fn scheduled(skill: &Skill) -> Invocation {
        Invocation {
            skill: skill.name.clone(),
            flags: Flags::new(),
            positionals: Vec::new(),
            raw: skill.name.clone(),
            access: access_of(&skill.name),
            handler: skill.manifest.handler.clone(),
            layer: Arc::from(skill.layer.as_str()),
        }
    }
}

/// How a slash-invoked skill is to be run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Inject the content into the conversation (pegasus `context: inline`, lily
    /// `prompt_rewrite`).
    Inline,
    /// Run the content as an isolated task (pegasus `context: fork`).
    Fork,
    /// Call the skill's `command_tool` directly (lily `tool_dispatch`); no content.
    Tool,
}

impl Delivery {
    /// The delivery's stable name: `inline`, `fork` or `tool`.
    pub fn as_str(self) -> &'static str {
        match self {
            Delivery::Inline => "inline",
            Delivery::Fork => "fork",
            Delivery::Tool => "tool",
        }
    }
}

/// How the user named the skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// `/skill <name> [args]` (lily).
    Skill,
    /// `/<command> [args]` with lily's `command`.
    Command,
    /// `/<name> [args]` (pegasus).
    Name,
}

impl Via {
    /// The way's stable name: `skill`, `command` or `name`.
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Skill => "skill",
            Via::Command => "command",
            Via::Name => "name",
        }
    }
}

/// A skill invoked by a user's slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlashInvocation {
    /// The skill's name.
    pub skill: String,
    /// How it was named.
    pub via: Via,
    /// The argument string, trimmed, as written.
    pub args: String,
    /// The arguments split shell-style (as `$ARGUMENTS[N]` sees them).
    pub arguments: Vec<String>,
    /// Inline, fork or tool.
    pub delivery: Delivery,
    /// Lily `command_tool` for [`Delivery::Tool`].
    pub tool: Option<String>,
    /// The body after `$ARGUMENTS` substitution (none for [`Delivery::Tool`]).
    pub content: Option<String>,
    /// The finished invocation a runtime executes: the arguments parsed into flags and
    /// positionals (best effort; on a quoting error, no flags and [`Self::arguments`] as
    /// positionals), the raw text the user's line, trimmed.
    pub invocation: Invocation,
}

impl SlashInvocation {
    /// The user message to inject for an inline slash command, as pegasus writes it:
    /// `[Skill: <name>]`, a blank line, then the content. `None` for fork and tool delivery
    /// (a fork runs the bare content as a task; a tool call has no content). The model's
    /// `use_skill` result is the bare content, without this wrapper.
    ///
    /// ```
    /// use skill_router::{Delivery, SlashInvocation, Via};
    ///
    /// let call = SlashInvocation {
    ///     skill: "code-review".into(),
    ///     via: Via::Name,
    ///     args: "PR #42".into(),
    ///     arguments: vec!["PR".into(), "#42".into()],
    ///     delivery: Delivery::Inline,
    ///     tool: None,
    ///     content: Some("Review PR #42.".into()),
    ///     invocation: skill_router::Invocation::with_flags(
    ///         "code-review",
    ///         skill_router::Flags::new(),
    ///         None,
    ///         "project",
    ///     ),
    /// };
    /// assert_eq!(call.user_message().as_deref(), Some("[Skill: code-review]\n\nReview PR #42."));
    /// ```
    pub fn user_message(&self) -> Option<String> {
        match (&self.delivery, &self.content) {
            (Delivery::Inline, Some(content)) => {
                Some(format!("[Skill: {}]\n\n{content}", self.skill))
            }
            _ => None,
        }
    }
}

/// One line of `/skills`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedSkill {
    /// The skill's name.
    pub name: String,
    /// Its one-line description (lily `summary` where set).
    pub description: String,
    /// Its lily `command`, if any.
    pub command: Option<String>,
    /// Its pegasus `argument-hint`, if any.
    pub argument_hint: Option<String>,
}

/// What a command line routes to.
///
/// `S` is the string type of an [`Invocation`]: [`String`] (the default), or `Cow<'a, str>`
/// in [`RoutedCommand`], borrowing from the model's output ([`Route::into_owned`] converts).
/// Every other variant is owned either way.
#[derive(Debug)]
pub enum Route<S = String> {
    /// Help text: a `get_skill` tier or `<name> --help`.
    Help {
        /// The dot path asked about (`None` for plain `get_skill`).
        topic: Option<String>,
        /// The text to show, from the registry's disclosure.
        text: String,
    },
    /// A skill invoked by the model.
    Invoke(Invocation<S>),
    /// A skill invoked by a user's slash command (boxed: it is the largest route and the
    /// rarest in model output, which keeps every other route small).
    Slash(Box<SlashInvocation>),
    /// `/skills`: what the user may invoke.
    SkillList {
        /// The skills, by name.
        skills: Vec<ListedSkill>,
        /// The listing as text.
        text: String,
    },
    /// A built-in slash command other than `/skills` and `/skill` (`/help`, `/exit`,
    /// `/clear`, ...), for the host to handle.
    Builtin {
        /// The command word, without the slash.
        command: String,
        /// The rest of the line, trimmed.
        args: String,
    },
    /// A user message that is not a command. Unknown slash commands land here too (pegasus:
    /// treated as a normal message), with a note saying so.
    Message {
        /// The message, trimmed.
        text: String,
        /// Why a message that looked like a command is treated as a plain one.
        note: Option<String>,
        /// Closest command or skill names for an unknown slash command (shown, never used).
        suggestions: Vec<String>,
    },
    /// A command that cannot be routed, and why.
    Error(Error),
}

impl<S: AsRef<str>> Route<S> {
    /// The skill a route invokes, if it invokes one.
    pub fn skill(&self) -> Option<&str> {
        match self {
            Route::Invoke(i) => Some(i.skill.as_ref()),
            Route::Slash(s) => Some(&s.skill),
            _ => None,
        }
    }

    /// Whether this is an error.
    pub fn is_error(&self) -> bool {
        matches!(self, Route::Error(_))
    }
}

impl<S: Into<String>> Route<S> {
    /// The route with an owned [`Invocation`] (see [`Invocation::into_owned`]); every other
    /// variant is moved as it is.
    pub fn into_owned(self) -> Route {
        match self {
            Route::Invoke(i) => Route::Invoke(i.into_owned()),
            Route::Help { topic, text } => Route::Help { topic, text },
            Route::Slash(s) => Route::Slash(s),
            Route::SkillList { skills, text } => Route::SkillList { skills, text },
            Route::Builtin { command, args } => Route::Builtin { command, args },
            Route::Message {
                text,
                note,
                suggestions,
            } => Route::Message {
                text,
                note,
                suggestions,
            },
            Route::Error(e) => Route::Error(e),
        }
    }
}

/// One command of a model output, routed.
#[derive(Debug)]
pub struct RoutedCommand<'a> {
    /// The command line.
    pub command: &'a str,
    /// Its 1-based line in the output.
    pub line: u32,
    /// Where it goes. An invocation borrows from the output where it can (only the layer,
    /// the handler and words with escapes or partly quoted are owned); [`Route::into_owned`]
    /// gives the route [`Router::route_model`](crate::Router::route_model) gives for the line.
    pub route: Route<Cow<'a, str>>,
}

/// A whole model output: the extraction and every command routed, in order.
#[derive(Debug)]
pub struct RoutedOutput<'a> {
    /// Commands, text and unterminated blocks, in order.
    pub extraction: Extraction<'a>,
    /// Each command's route, in order.
    pub routes: Vec<RoutedCommand<'a>>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::FlagValue;

    #[test]
    fn arguments_are_the_text_after_the_command_word() {
        let mut inv = Invocation::with_flags("greet", Flags::new(), None, "user");
        inv.raw = "  greet   'a b'  --loud ".into();
        assert_eq!(inv.arguments(), "'a b'  --loud");
        inv.raw = "greet".into();
        assert_eq!(inv.arguments(), "");
    }

    #[test]
    fn an_invocation_with_flags_reads_back_as_its_line() {
        let mut flags = Flags::new();
        flags.insert("name", FlagValue::One("a b".into()));
        flags.insert("overwrite", FlagValue::Switch(true));
        let inv = Invocation::with_flags("workflow.build", flags.clone(), None, "builtin");
        assert_eq!(inv.access, Access::Mutating);
        let parsed = crate::parse_flags(crate::tokenize(&inv.raw).unwrap());
        assert_eq!(parsed.positionals, vec!["workflow.build".to_owned()]);
        assert_eq!(parsed.flags, flags);
    }
}
