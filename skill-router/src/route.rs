//! The router: one command line (from the model or a user) to one [`Route`].
//!
//! A model line is help (through the registry's `Disclosure`, so help says what the registry
//! discloses), an invocation with its read-only or mutating class, or an error with the closest
//! names, which are never acted on. A user line that starts with `/` tries the built-in
//! commands first, then a lily `command`, then a pegasus skill name.
//!
//! [`Router::route_output`] gives invocations that borrow from the output, through the string
//! type parameter of `Invocation`, `Flags` and `Route`. `Route::into_owned` gives the owned
//! form that every other entry point returns.
//!
//! The lily command index is built on a router's first slash command, not when the router is
//! made. So a router made per request costs nothing extra for model output. A command that two
//! loaded skills declare routes to neither of them.

use std::borrow::Cow;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};

use skill_format::args::split_arguments;
use skill_format::{Code, ContextMode, Diagnostic, InvocationMode};
use skill_registry::{Caller, Disclosure, Skill, Snapshot, Status, closest_names};

use crate::Error;
use crate::config::RouterConfig;
use crate::extract::extract;
use crate::flags::{Flags, ParsedWords, parse_words};
use crate::routes::{
    Delivery, Invocation, ListedSkill, Route, RoutedCommand, RoutedOutput, SlashInvocation, Via,
    access_of,
};
use crate::tokenize::{Word, Words};
use crate::validate::prevalidate;

/// The word after a skill name in `get_skill: <name> --outline` that asks for its outline.
pub const OUTLINE_FLAG: &str = "--outline";

/// `text` without surrounding whitespace, as [`str::trim`] gives it; text that starts and
/// ends with a visible ASCII character (a command line or a name, nearly always) is
/// returned as it is without the Unicode whitespace scan.
fn trimmed(text: &str) -> &str {
    match (text.as_bytes().first(), text.as_bytes().last()) {
        (Some(a), Some(b)) if a.is_ascii_graphic() && b.is_ascii_graphic() => text,
        _ => text.trim(),
    }
}

/// Where a lily `command` leads.
#[derive(Debug)]
enum CommandTarget<'s> {
    /// The one loaded skill that declares it; when no loaded skill does, the first entry
    /// not in use (invalid, ineligible) that declares it, so that `/<command>` fails
    /// clearly (lily 5.2) instead of becoming a plain message.
    One(&'s Arc<Skill>),
    /// Several loaded skills declare it, by name: it invokes none of them.
    Ambiguous(Vec<&'s str>),
}

/// The lily `command` aliases of a snapshot, as a router sees them.
#[derive(Debug)]
struct CommandIndex<'s> {
    /// Lily `command` -> where it leads (built-in commands excluded).
    targets: HashMap<&'s str, CommandTarget<'s>>,
    /// Command collisions found while indexing.
    diagnostics: Vec<Diagnostic>,
}

impl<'s> CommandIndex<'s> {
    fn build(snapshot: &'s Snapshot, config: &RouterConfig) -> Self {
        let mut commands: HashMap<&'s str, CommandTarget<'s>> = HashMap::new();
        let mut diagnostics = Vec::new();
        for skill in snapshot.skills() {
            let Some(c) = skill.manifest.command.as_deref() else {
                continue;
            };
            if config.builtin_commands.contains(c) {
                diagnostics.push(Diagnostic::warning(
                    Code::CommandCollision,
                    &skill.path,
                    format!(
                        "command `/{c}` of `{}` is a built-in command of this router; built-ins win, so `/{c}` never reaches the skill: rename the command, or list `{c}` among the registry's built-in commands to exclude the skill",
                        skill.name
                    ),
                ));
                continue;
            }
            match commands.entry(c) {
                Entry::Vacant(e) => {
                    e.insert(CommandTarget::One(skill));
                }
                Entry::Occupied(mut e) => {
                    let target = e.get_mut();
                    match target {
                        CommandTarget::One(first) => {
                            *target = CommandTarget::Ambiguous(vec![&first.name, &skill.name]);
                        }
                        CommandTarget::Ambiguous(names) => names.push(&skill.name),
                    }
                }
            }
        }
        for (command, target) in &commands {
            if let CommandTarget::Ambiguous(names) = target {
                for name in names {
                    let Some(skill) = snapshot.get(name) else {
                        continue;
                    };
                    diagnostics.push(Diagnostic::warning(
                        Code::CommandCollision,
                        &skill.path,
                        format!(
                            "command `/{command}` is declared by several skills ({}), so it invokes none of them: give each its own command (until then, use /skill <name>)",
                            names.join(", ")
                        ),
                    ));
                }
            }
        }
        diagnostics.sort_by(|a, b| a.path.cmp(&b.path).then(a.message.cmp(&b.message)));
        // Commands of skills not in use: `/<command>` fails clearly rather than falling
        // through to a name or a plain message. A loaded skill's claim always wins.
        for skill in snapshot.entries().filter(|s| s.status != Status::Loaded) {
            if let Some(c) = skill.manifest.command.as_deref() {
                if !config.builtin_commands.contains(c) {
                    commands.entry(c).or_insert(CommandTarget::One(skill));
                }
            }
        }
        CommandIndex {
            targets: commands,
            diagnostics,
        }
    }
}

/// Which trigger rules a routing pass applies.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Normal routing.
    Normal,
    /// Example linting: trigger control, profiles and the skill's status are ignored
    /// (examples document syntax), for invocations and help alike; schemas are checked by
    /// the linter against the example's own skill.
    Lint,
}

/// Routes command lines against one snapshot.
///
/// Building a router is cheap. The index of lily `command` aliases (linear in the skills)
/// is built the first time a slash command or [`Router::diagnostics`] needs it, so a router
/// made per request for model output never pays for it. Routing a line is a tokenize, a
/// name lookup and the flag parse.
///
/// Command dispatch is deterministic (lily 3.3, 5.2): `/<command>` goes to the one loaded
/// skill that declares it. When several loaded skills declare the same `command`, it goes
/// to none of them: routing it is [`Error::AmbiguousCommand`] (naming them all), and
/// [`Router::diagnostics`] reports it, because picking one would silently run a skill the
/// user may not have meant. Each stays reachable by `/skill <name>` and `/<name>`.
#[derive(Debug)]
pub struct Router<'s> {
    snapshot: &'s Snapshot,
    config: RouterConfig,
    /// Lily `command` aliases and their collisions, built on first use.
    commands: OnceLock<CommandIndex<'s>>,
    /// The model's view of the snapshot for the profile (built once, not per line).
    model: Disclosure<'s>,
    /// A user's view of the snapshot for the profile.
    user: Disclosure<'s>,
}

impl<'s> Router<'s> {
    /// A router over `snapshot` with the default configuration.
    pub fn new(snapshot: &'s Snapshot) -> Self {
        Router::with_config(snapshot, RouterConfig::default())
    }

    /// A router over `snapshot` with `config`.
    pub fn with_config(snapshot: &'s Snapshot, config: RouterConfig) -> Self {
        let model = Disclosure::new(snapshot)
            .profile(config.profile.as_deref())
            .caller(Caller::Model);
        let user = model.clone().caller(Caller::User);
        Router {
            snapshot,
            config,
            commands: OnceLock::new(),
            model,
            user,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &RouterConfig {
        &self.config
    }

    /// Warnings about the snapshot's lily `command`s as this router sees them, by path: a
    /// command that is one of [`RouterConfig::builtin_commands`] (the built-in wins) and a
    /// command declared by several loaded skills (it invokes none of them). Each carries
    /// [`Code::CommandCollision`] and the declaring skill's path.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.command_index().diagnostics
    }

    fn command_index(&self) -> &CommandIndex<'s> {
        self.commands
            .get_or_init(|| CommandIndex::build(self.snapshot, &self.config))
    }

    fn disclosure(&self, caller: Caller) -> &Disclosure<'s> {
        match caller {
            Caller::Model => &self.model,
            Caller::User => &self.user,
        }
    }

    fn fail<S>(&self, e: Error) -> Route<S> {
        Route::Error(if self.config.suggestions {
            e
        } else {
            e.without_suggestions()
        })
    }

    /// Route one line from `caller`: [`Router::route_model`] or [`Router::route_user`].
    ///
    /// ```
    /// use skill_registry::{Registry, RegistryConfig, Source};
    /// use skill_router::{Caller, Route, Router};
    ///
    /// let dir = tempfile::tempdir()?;
    /// std::fs::create_dir_all(dir.path().join("email"))?;
    /// std::fs::write(
    ///     dir.path().join("email/SKILL.md"),
    ///     "---\ndomain: email\ndescription: Mail tools\n---\n# Email\n",
    /// )?;
    /// std::fs::write(
    ///     dir.path().join("email/send.md"),
    ///     "---\nname: email.send\ndescription: Send mail\n---\n# email.send\n",
    /// )?;
    /// let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(
    ///     dir.path(),
    ///     "user",
    /// )]));
    /// let snapshot = registry.snapshot();
    /// let router = Router::new(&snapshot);
    ///
    /// match router.route(r#"email.send --to bob@co.com --subject="Q1 Report""#, Caller::Model) {
    ///     Route::Invoke(call) => {
    ///         assert_eq!(call.skill, "email.send");
    ///         assert_eq!(call.flags.get("subject").and_then(|v| v.as_str()), Some("Q1 Report"));
    ///     }
    ///     other => panic!("{other:?}"),
    /// }
    /// assert!(matches!(router.route("email.send --help", Caller::Model), Route::Help { .. }));
    /// match router.route("email.sned", Caller::Model) {
    ///     Route::Error(e) => assert_eq!(e.suggestions(), ["email.send"]),
    ///     other => panic!("{other:?}"),
    /// }
    /// assert!(matches!(router.route("/help", Caller::User), Route::Builtin { .. }));
    /// assert!(matches!(router.route("hello", Caller::User), Route::Message { .. }));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn route(&self, line: &str, caller: Caller) -> Route {
        match caller {
            Caller::Model => self.route_model(line),
            Caller::User => self.route_user(line),
        }
    }

    /// Like [`Router::route`] for input that arrives as bytes: invalid UTF-8 is an error
    /// with the offset of the first bad byte.
    pub fn route_bytes(&self, line: &[u8], caller: Caller) -> Route {
        match std::str::from_utf8(line) {
            Ok(s) => self.route(s, caller),
            Err(e) => self.fail(Error::InvalidUtf8 {
                offset: e.valid_up_to(),
            }),
        }
    }

    /// Route one command line the model wrote (one line of a `cmd` block):
    ///
    /// * `get_skill`, `get_skill: <path>` (also `get_skill:<path>` and `get_skill <path>`)
    ///   is help from the registry's `get_skill` tiers; `get_skill:` with nothing after it
    ///   is the top level. `get_skill: <name>#<slug>` is one section of a skill (with its
    ///   subsections) and `get_skill: <name> --outline` the skill's outline: every section
    ///   with its slug and estimated tokens.
    /// * `<name> ... --help` (an unquoted `--help` anywhere among the flags) is that name's
    ///   help, through the same tiers (so `email --help` and `email.all --help` work too);
    ///   nothing is invoked.
    /// * `<name> [flags] [args]` invokes the skill of exactly that name, unless it is
    ///   `disable-model-invocation`, invalid, ineligible or excluded for the profile.
    /// * A `/command` is an error: slash commands are for users.
    /// * An unquoted `|` is an error: pipes are deferred by the seed (15.1).
    pub fn route_model(&self, line: &str) -> Route {
        self.model_line(line, Mode::Normal).into_owned()
    }

    /// The model's invocation of the skill named exactly `name` (a typed name: no word of
    /// it is read as a command, so `get_skill` or `/x` name skills like any other), with
    /// `arguments` read as the words after a name are (flags, positionals, `--help`). The
    /// invocation's `raw` line is the name and the arguments joined by a space.
    pub fn route_skill(&self, name: &str, arguments: Option<&str>) -> Route {
        let arguments = arguments.map(trimmed).unwrap_or("");
        let raw = if arguments.is_empty() {
            name.to_owned()
        } else {
            format!("{name} {arguments}")
        };
        let mut words = match Words::new(arguments) {
            Ok(w) => w,
            Err(e) => return self.fail(e),
        };
        let parsed = parse_words(words.by_ref());
        if let Some(e) = words.take_error() {
            return self.fail(e);
        }
        let first = Word {
            text: Cow::Borrowed(name),
            quoted: true,
            unquoted_prefix: 0,
            column: 1,
        };
        self.invoke(&raw, first, parsed, words.pipe(), Mode::Normal)
            .into_owned()
    }

    /// [`Router::route_model`] with an invocation that borrows from the line where it can.
    pub(crate) fn model_line<'l>(&self, line: &'l str, mode: Mode) -> Route<Cow<'l, str>> {
        let line = trimmed(line);
        if line.is_empty() {
            return self.fail(Error::Empty);
        }
        let mut words = match Words::new(line) {
            Ok(w) => w,
            Err(e) => return self.fail(e),
        };
        let Some(first) = words.next() else {
            return self.fail(words.take_error().unwrap_or(Error::Empty));
        };
        if !first.quoted && (first.text.starts_with('/') || first.text.starts_with("get_skill")) {
            // Rare forms: every word is read first, so that a tokenizing error wins.
            let rest: Vec<Word<'l>> = words.by_ref().collect();
            if let Some(e) = words.take_error() {
                return self.fail(e);
            }
            if let Some(command) = first.text.strip_prefix('/') {
                return self.fail(Error::SlashFromModel {
                    command: command.to_owned(),
                });
            }
            if let Some(route) = self.get_skill(&first, &rest, mode) {
                return route;
            }
            let pipe = words.pipe();
            return self.invoke(line, first, parse_words(rest), pipe, mode);
        }
        // The words after the name are streamed straight into the flag parser; a
        // tokenizing error anywhere wins over everything else, as if the whole line had
        // been tokenized first.
        let parsed = parse_words(words.by_ref());
        if let Some(e) = words.take_error() {
            return self.fail(e);
        }
        self.invoke(line, first, parsed, words.pipe(), mode)
    }

    /// `<name> [flags] [args]` (or `<name> --help`), the words after the name parsed. An
    /// unquoted `|` anywhere wins over everything else (after a tokenizing error).
    fn invoke<'w>(
        &self,
        line: &'w str,
        first: Word<'w>,
        parsed: ParsedWords<'w>,
        pipe: Option<u32>,
        mode: Mode,
    ) -> Route<Cow<'w, str>> {
        if let Some(column) = pipe {
            return self.fail(Error::Pipe { column });
        }
        let name: &str = &first.text;
        if parsed.help {
            return self.help(Some(name), mode);
        }
        // Resolved through the name index: what the invocation copies (name, layer,
        // handler) and what the model's access depends on are read from the index, not
        // from the skill, which is rarely in cache when there are thousands.
        let found = match mode {
            Mode::Normal => match self.disclosure(Caller::Model).resolve(name) {
                Ok(r) => r,
                Err(e) => return self.fail(Error::Lookup(e)),
            },
            Mode::Lint => match self.snapshot.resolve(name) {
                Some(r) => r,
                None => {
                    return self.fail(Error::Lookup(skill_registry::Error::UnknownSkill {
                        name: name.to_owned(),
                        suggestions: Vec::new(),
                    }));
                }
            },
        };
        if mode == Mode::Normal && self.config.prevalidate.applies(found.layer) {
            let skill = found.skill;
            if let Err(e) = prevalidate(&skill.name, &skill.body, &parsed.flags) {
                return self.fail(e);
            }
        }
        // The lookup was exact, of the word or of the word trimmed, so the trimmed word is
        // the registered name when their lengths agree: it is then borrowed from the line,
        // and the index's copy of the name is not read (with thousands of skills it is
        // rarely in cache).
        let skill = match first.text {
            Cow::Borrowed(written) if trimmed(written).len() == found.name.len() => {
                Cow::Borrowed(trimmed(written))
            }
            _ => Cow::Owned(found.name.to_owned()),
        };
        let access = access_of(&skill);
        Route::Invoke(Invocation {
            skill,
            flags: parsed.flags,
            positionals: parsed.positionals,
            raw: Cow::Borrowed(line),
            access,
            handler: found.handler.map(|h| Cow::Owned(h.to_owned())),
            layer: Arc::clone(found.layer),
        })
    }

    /// `get_skill` forms, or `None` when the line is not one.
    fn get_skill<S>(&self, first: &Word<'_>, rest: &[Word<'_>], mode: Mode) -> Option<Route<S>> {
        let mut args: Vec<&str> = Vec::new();
        if first.text == "get_skill" || first.text == "get_skill:" {
            // `get_skill : email` (a lone colon) is read as `get_skill: email`.
            let skip = usize::from(
                first.text == "get_skill" && rest.first().is_some_and(|t| t.text == ":"),
            );
            args.extend(rest.iter().skip(skip).map(|t| &*t.text));
        } else if let Some(path) = first.text.strip_prefix("get_skill:") {
            args.push(path);
            args.extend(rest.iter().map(|t| &*t.text));
        } else {
            return None;
        }
        Some(match args.as_slice() {
            [] => self.help(None, mode),
            [path] => self.help(Some(path), mode),
            [path, OUTLINE_FLAG] | [OUTLINE_FLAG, path] => self.outline(path),
            many => self.fail(Error::GetSkillArguments {
                given: many.join(" "),
            }),
        })
    }

    /// `get_skill: <name> --outline`: the skill's outline (sections with slugs and token
    /// estimates), so the model can ask for one section with `get_skill: <name>#<slug>`.
    fn outline<S>(&self, name: &str) -> Route<S> {
        match self.disclosure(Caller::Model).outline(name.trim()) {
            Ok(outline) => Route::Help {
                topic: Some(format!("{} {OUTLINE_FLAG}", outline.name)),
                text: outline.render(),
            },
            Err(e) => self.fail(Error::Lookup(e)),
        }
    }

    /// Help for `path` through the model's `get_skill` tiers. When linting, a skill's own
    /// help is its body whoever may invoke it (examples document syntax, so a
    /// `disable-model-invocation` skill's `<name> --help` example is fine).
    fn help<S>(&self, path: Option<&str>, mode: Mode) -> Route<S> {
        let path = path.map(str::trim).filter(|p| !p.is_empty());
        if mode == Mode::Lint {
            if let Some(skill) = path.and_then(|p| self.snapshot.entry(p)) {
                return Route::Help {
                    topic: Some(skill.name.clone()),
                    text: skill.body.clone(),
                };
            }
        }
        match self.disclosure(Caller::Model).get_skill(path) {
            Ok(text) => Route::Help {
                topic: path.map(str::to_owned),
                text,
            },
            Err(e) => self.fail(Error::Lookup(e)),
        }
    }

    /// Route one line a user typed:
    ///
    /// * Not starting with `/`: a plain [`Route::Message`].
    /// * A built-in command wins over every skill: `/skills` lists what the user may
    ///   invoke, `/skill <name> [args]` invokes exactly that skill (and fails clearly when
    ///   it is unknown or not available, lily 5.2), other built-ins come back as
    ///   [`Route::Builtin`].
    /// * `/<command> [args]` invokes the skill whose lily `command` it is; otherwise
    ///   `/<name> [args]` the skill of that name (pegasus).
    /// * Skills with `user-invocable: false` cannot be invoked this way (an error says so)
    ///   and are not listed by `/skills`.
    /// * Anything else starting with `/` is an unknown command, treated as a normal message
    ///   (pegasus), with a note and the closest names.
    pub fn route_user(&self, line: &str) -> Route {
        let text = line.trim();
        if text.is_empty() {
            return self.fail(Error::Empty);
        }
        if text.len() > crate::MAX_COMMAND_BYTES {
            return self.fail(Error::TooLong {
                len: text.len(),
                limit: crate::MAX_COMMAND_BYTES,
            });
        }
        let Some(after) = text.strip_prefix('/') else {
            return message(text, None, Vec::new());
        };
        let (word, args) = match after.split_once(|c: char| c.is_ascii_whitespace()) {
            Some((w, a)) => (w, a.trim()),
            None => (after, ""),
        };
        if word.is_empty() || word.contains('/') {
            return message(
                text,
                Some("not a command: treated as a normal message".into()),
                Vec::new(),
            );
        }
        if self.config.builtin_commands.contains(word) {
            return match word {
                "skills" => self.list_skills(),
                "skill" => {
                    let (name, rest) = match args.split_once(|c: char| c.is_ascii_whitespace()) {
                        Some((n, r)) => (n, r.trim()),
                        None => (args, ""),
                    };
                    if name.is_empty() {
                        return self.fail(Error::MissingSkillName);
                    }
                    self.slash(text, name, rest, Via::Skill)
                }
                _ => Route::Builtin {
                    command: word.to_owned(),
                    args: args.to_owned(),
                },
            };
        }
        match self.command_index().targets.get(word) {
            Some(CommandTarget::One(skill)) => {
                return self.slash(text, &skill.name, args, Via::Command);
            }
            Some(CommandTarget::Ambiguous(names)) => {
                return self.fail(Error::AmbiguousCommand {
                    command: word.to_owned(),
                    skills: names.iter().map(|n| (*n).to_owned()).collect(),
                });
            }
            None => {}
        }
        if self.snapshot.entry(word).is_some() {
            return self.slash(text, word, args, Via::Name);
        }
        let suggestions = if self.config.suggestions {
            let user = self.disclosure(Caller::User);
            let candidates: Vec<&str> = self
                .config
                .builtin_commands
                .iter()
                .map(String::as_str)
                .chain(
                    self.command_index()
                        .targets
                        .iter()
                        .filter_map(|(c, t)| match t {
                            CommandTarget::One(s) if user.skill(&s.name).is_ok() => Some(*c),
                            _ => None,
                        }),
                )
                .chain(
                    self.snapshot
                        .skills()
                        .filter(|s| user.skill(&s.name).is_ok())
                        .map(|s| s.name.as_str()),
                )
                .collect();
            closest_names(word, candidates)
                .into_iter()
                .map(|n| format!("/{n}"))
                .collect()
        } else {
            Vec::new()
        };
        message(
            text,
            Some(format!(
                "unknown command /{word}: treated as a normal message"
            )),
            suggestions,
        )
    }

    /// Invoke `name` for the user: exact name only, trigger control applied.
    fn slash(&self, line: &str, name: &str, args: &str, via: Via) -> Route {
        let user = self.disclosure(Caller::User);
        let skill = match user.skill(name) {
            Ok(s) => s,
            Err(e) => return self.fail(Error::Lookup(e)),
        };
        let m = &skill.manifest;
        let (delivery, tool, content) = if m.invocation_mode == Some(InvocationMode::ToolDispatch) {
            (Delivery::Tool, m.command_tool.clone(), None)
        } else {
            let delivery = if m.context == Some(ContextMode::Fork) {
                Delivery::Fork
            } else {
                Delivery::Inline
            };
            match user.use_skill(&skill.name, Some(args)) {
                Ok(u) => (delivery, None, Some(u.content)),
                Err(e) => return self.fail(Error::Lookup(e)),
            }
        };
        let arguments = split_arguments(args);
        let (flags, positionals) = match crate::tokenize::tokenize(args) {
            Ok(tokens) => {
                let parsed = crate::flags::parse_flags(tokens);
                (parsed.flags, parsed.positionals)
            }
            Err(_) => (Flags::new(), arguments.clone()),
        };
        let invocation = Invocation {
            skill: skill.name.clone(),
            flags,
            positionals,
            raw: line.trim().to_owned(),
            access: access_of(&skill.name),
            handler: m.handler.clone(),
            layer: Arc::from(skill.layer.as_str()),
        };
        Route::Slash(Box::new(SlashInvocation {
            skill: skill.name.clone(),
            via,
            args: args.to_owned(),
            arguments,
            delivery,
            tool,
            content,
            invocation,
        }))
    }

    /// `/skills`: every skill the user may invoke, by name.
    fn list_skills(&self) -> Route {
        let user = self.disclosure(Caller::User);
        let skills: Vec<ListedSkill> = self
            .snapshot
            .skills()
            .filter(|s| user.skill(&s.name).is_ok())
            .map(|s| ListedSkill {
                name: s.name.clone(),
                description: s
                    .description
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" "),
                command: s
                    .manifest
                    .command
                    .clone()
                    .filter(|c| self.command_of(c, &s.name)),
                argument_hint: s.manifest.argument_hint.clone(),
            })
            .collect();
        let mut text = String::new();
        if skills.is_empty() {
            text.push_str("No skills available.\n");
        } else {
            let labels: Vec<String> = skills
                .iter()
                .map(|s| match &s.argument_hint {
                    Some(h) => format!("/{} {h}", s.name),
                    None => format!("/{}", s.name),
                })
                .collect();
            let width = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
            text.push_str("Available skills:\n\n");
            for (s, label) in skills.iter().zip(&labels) {
                let _ = write!(text, "  {label:<width$}  {}", s.description);
                if let Some(c) = &s.command {
                    let _ = write!(text, " (also /{c})");
                }
                text = text.trim_end().to_owned();
                text.push('\n');
            }
            text.push_str("\nUse: /skill <name> [args]\n");
        }
        Route::SkillList { skills, text }
    }

    /// Extract the `cmd` blocks of a model output and route every command, in order. With
    /// [`RouterConfig::single_skill`], a command invoking a second, different skill is an
    /// [`Error::SingleSkill`] (help and errors do not count).
    ///
    /// An invocation borrows where it can: its raw line, and every flag name, value and
    /// positional written without escapes (a whole quoted word too), from `output`, so
    /// routing a command copies little; [`Route::into_owned`] gives an owned route to keep.
    pub fn route_output<'o>(&self, output: &'o str) -> RoutedOutput<'o> {
        self.route_output_first(output, usize::MAX)
    }

    /// [`Router::route_output`] that routes only the first `max` commands: `routes` holds
    /// at most `max` entries, the extraction still holds every command. For a host that
    /// executes at most so many commands of one output, so that the rest cost nothing.
    pub fn route_output_first<'o>(&self, output: &'o str, max: usize) -> RoutedOutput<'o> {
        let extraction = extract(output);
        let mut routes = Vec::with_capacity(extraction.commands().count().min(max));
        // Each route is written where it stays (a route is large: moving it through an
        // iterator adapter costs copies).
        for c in extraction.commands().take(max) {
            routes.push(RoutedCommand {
                command: c.text,
                line: c.line,
                route: self.model_line(c.text, Mode::Normal),
            });
        }
        if self.config.single_skill {
            let mut first: Option<String> = None;
            for routed in &mut routes {
                let Some(skill) = routed.route.skill() else {
                    continue;
                };
                match &first {
                    None => first = Some(skill.to_owned()),
                    Some(f) if f != skill => {
                        routed.route = Route::Error(Error::SingleSkill {
                            first: f.clone(),
                            second: skill.to_owned(),
                        });
                    }
                    Some(_) => {}
                }
            }
        }
        RoutedOutput { extraction, routes }
    }

    /// Whether `/<command>` leads to the skill `name`.
    fn command_of(&self, command: &str, name: &str) -> bool {
        matches!(self.command_index().targets.get(command), Some(CommandTarget::One(s)) if s.name == name)
    }

    /// The winning registry entry of a name, whatever its status (for linting).
    pub(crate) fn snapshot_entry(&self, name: &str) -> Option<&'s Arc<Skill>> {
        self.snapshot.entry(name)
    }

    /// What a slash word resolves to, without trigger control or status (for linting).
    pub(crate) fn slash_target(&self, word: &str) -> SlashTarget<'s> {
        if self.config.builtin_commands.contains(word) {
            return SlashTarget::Builtin;
        }
        match self.command_index().targets.get(word) {
            Some(CommandTarget::One(skill)) => SlashTarget::Skill(skill),
            Some(CommandTarget::Ambiguous(names)) => SlashTarget::Ambiguous(names.join(", ")),
            None => self
                .snapshot
                .entry(word)
                .map_or(SlashTarget::Nothing, SlashTarget::Skill),
        }
    }
}

/// What a slash word resolves to (for linting).
pub(crate) enum SlashTarget<'s> {
    /// A built-in command.
    Builtin,
    /// A skill, by lily `command` or by name.
    Skill(&'s Arc<Skill>),
    /// A command several loaded skills declare (their names, joined).
    Ambiguous(String),
    /// Nothing: an unknown command.
    Nothing,
}

fn message(text: &str, note: Option<String>, suggestions: Vec<String>) -> Route {
    Route::Message {
        text: text.to_owned(),
        note,
        suggestions,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub(crate) mod tests {
    use super::*;
    use crate::Access;
    use skill_registry::{Registry, RegistryConfig, Source};

    /// A registry with `email.send` (a handler), `email.search` and a model-disabled
    /// `email.purge`, in the layer `user`.
    pub(crate) fn snapshot() -> (tempfile::TempDir, Arc<Snapshot>) {
        let dir = tempfile::tempdir().unwrap();
        let write = |rel: &str, text: &str| {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write(
            "email/SKILL.md",
            "---\ndomain: email\ndescription: Mail tools\n---\n# Email\n",
        );
        write(
            "email/send.md",
            "---\nname: email.send\ndescription: Send mail\nhandler: mail.send\n---\n# email.send\n",
        );
        write(
            "email/search.md",
            "---\nname: email.search\ndescription: Find mail\n---\n# email.search\n",
        );
        write(
            "email/purge.md",
            "---\nname: email.purge\ndescription: Delete all mail\ndisable-model-invocation: true\n---\n# email.purge\n",
        );
        let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(
            dir.path(),
            "user",
        )]));
        (dir, registry.snapshot())
    }

    /// The error code of a route, or the kind of route.
    fn outcome(route: &Route) -> String {
        match route {
            Route::Error(e) => e.code().to_owned(),
            Route::Invoke(i) => format!("invoke {}", i.skill),
            Route::Help { topic, .. } => format!("help {topic:?}"),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn get_skill_serves_outlines_and_sections() {
        let (_dir, snap) = snapshot();
        let router = Router::new(&snap);
        for line in [
            "get_skill: email.send --outline",
            "get_skill --outline email.send",
        ] {
            match router.route_model(line) {
                Route::Help { topic, text } => {
                    assert_eq!(topic.as_deref(), Some("email.send --outline"), "{line}");
                    assert!(text.contains("- email.send [#emailsend]"), "{text}");
                }
                other => panic!("{line}: {other:?}"),
            }
        }
        match router.route_model("get_skill: email.send#emailsend") {
            Route::Help { text, .. } => assert_eq!(text, "# email.send\n"),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            outcome(&router.route_model("get_skill: email.send#nope")),
            "unknown-section"
        );
        assert_eq!(
            outcome(&router.route_model("get_skill: nosuch --outline")),
            "unknown-skill"
        );
        // Trigger control holds for outlines as for the body.
        assert_eq!(
            outcome(&router.route_model("get_skill: email.purge --outline")),
            "model-invocation-disabled"
        );
    }

    #[test]
    fn the_command_index_is_built_only_when_needed() {
        let (_dir, snap) = snapshot();
        let router = Router::new(&snap);
        assert!(matches!(
            router.route_model("email.search --q x"),
            Route::Invoke(_)
        ));
        assert!(
            router.commands.get().is_none(),
            "model lines need no command index"
        );
        let _ = router.route_user("/email.search");
        assert!(router.commands.get().is_some());
    }

    proptest::proptest! {
        #[test]
        fn trimmed_is_str_trim(text in "\\PC{0,12}|[ \t\u{a0}\u{2003}a-z.]{0,12}") {
            proptest::prop_assert_eq!(trimmed(&text), text.trim());
        }
    }

    #[test]
    fn errors_win_as_if_the_whole_line_were_tokenized_first() {
        let (_dir, snapshot) = snapshot();
        let router = Router::new(&snapshot);
        for (line, want) in [
            // A tokenizing error anywhere wins over help, lookup, slash and get_skill.
            ("email.send --to 'x", "unterminated-quote"),
            ("nosuch --help 'x", "unterminated-quote"),
            ("email.send --help \"x", "unterminated-quote"),
            ("/email.send 'x", "unterminated-quote"),
            ("get_skill email.send 'x", "unterminated-quote"),
            ("email.send a\0", "nul"),
            // Then a slash command and get_skill forms.
            ("/email.send | x", "slash-from-model"),
            ("get_skill a b", "get-skill-arguments"),
            // Then an unquoted pipe, over help and lookup.
            ("email.send --help | x", "pipe"),
            ("nosuch | x", "pipe"),
            ("| email.send", "pipe"),
            ("get_skillx | y", "pipe"),
            // Otherwise help, then the lookup.
            ("email.send --help", "help Some(\"email.send\")"),
            ("get_skillx --a", "unknown-skill"),
            ("email.purge --all", "model-invocation-disabled"),
            ("email.send \"|\"", "invoke email.send"),
            ("\"email.send\" --to x", "invoke email.send"),
        ] {
            assert_eq!(outcome(&router.route_model(line)), want, "{line:?}");
        }
        match router.route_model("email.send a | b") {
            Route::Error(Error::Pipe { column }) => assert_eq!(column, 14),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn invocations_copy_name_layer_and_handler_from_the_index() {
        let (_dir, snapshot) = snapshot();
        let router = Router::new(&snapshot);
        let Route::Invoke(call) =
            router.route_model("  email.send --to bob x --subject=\"Q1 Report\"  ")
        else {
            panic!("not an invocation");
        };
        assert_eq!(call.skill, "email.send");
        assert_eq!(&*call.layer, "user");
        assert_eq!(call.handler.as_deref(), Some("mail.send"));
        assert_eq!(call.access, Access::Mutating);
        assert_eq!(call.raw, "email.send --to bob x --subject=\"Q1 Report\"");
        assert_eq!(
            call.flags.get("to"),
            Some(&crate::FlagValue::Many(vec!["bob".into(), "x".into()]))
        );
        assert_eq!(
            call.flags.get("subject").and_then(|v| v.as_str()),
            Some("Q1 Report")
        );
        // No handler; a name with Unicode whitespace around it is found trimmed, and the
        // invocation carries the registered name.
        let Route::Invoke(call) = router.route_model("email.search\u{a0} --q x") else {
            panic!("not an invocation");
        };
        assert_eq!(call.skill, "email.search");
        assert_eq!(call.handler, None);
        assert_eq!(call.access, Access::ReadOnly);
        assert_eq!(&*call.layer, "user");
    }
}
