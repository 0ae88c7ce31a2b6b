//! `skill-router`: from model output and user input to exactly one well-formed route.
//!
//! It owns the path from text to a typed, explained decision (SPEC section 5):
//!
//! * **Extraction** ([`extract`]): ```` ```cmd ```` blocks out of model output, one command
//!   per line, the conversational text kept, the order of everything preserved, CRLF and
//!   indented fences understood, an unterminated block reported (and not run).
//! * **Tokenizing** ([`tokenize`]): shell-style words (single quotes, double quotes with
//!   escapes, backslashes, adjacent parts, Unicode); an unterminated quote is an error with
//!   its column. [`join_tokens`] quotes tokens back into a line that tokenizes to the same
//!   tokens, quoting kept ([`join`] does it for plain words).
//! * **Flags** ([`parse_flags`]): best effort, as markdown-first Approach A: `--flag v1 v2`
//!   is a list, `--flag` alone is true, `--flag=value` (also `--flag="a value"`), `--` ends
//!   flags, positionals kept in order.
//! * **Routing** ([`Router`]): a model line is help (`get_skill` tiers, `<name> --help`), an
//!   [`Invocation`] (skill, flags, positionals, raw text, [`Access`] read-only or
//!   mutating) or an error ([`Router::route_output`] gives invocations that borrow from
//!   the model's output, [`Route::into_owned`] owned ones); a user line is a slash
//!   command (`/skills`, `/skill <name>`, lily `/<command>`, pegasus `/<name>`), a
//!   built-in command, or a plain message. Lily
//!   commands dispatch deterministically: only loaded skills, and a command several of them
//!   declare runs none ([`Error::AmbiguousCommand`], [`Router::diagnostics`]).
//!   Matching is exact; errors list the closest names, which are never acted on.
//! * **Trigger control**: model output cannot invoke `disable-model-invocation` skills;
//!   slash commands cannot invoke `user-invocable: false` skills, and `/skills` hides
//!   them; built-in commands win over skill commands; an unavailable `/skill` fails
//!   clearly (lily 5.2); lily's single-skill rule is available for whole outputs
//!   ([`RouterConfig::single_skill`]).
//! * **Validation** ([`validate`]): the seed's `FlagValidator` helpers for handler authors
//!   ([`validate::require`], [`validate::one_of`], [`validate::integer`],
//!   [`validate::date`], [`validate::apply_defaults`]) and opt-in schema pre-validation
//!   against a skill's `## Flags` section ([`RouterConfig::prevalidate`], Approach B).
//! * **Example linting** ([`lint_examples`]): every `## Examples` line must route to its own
//!   skill and pass its flag schema, for every skill that parsed (loaded, ineligible,
//!   shadowed), so the findings do not depend on the machine.
//!
//! Help text, suggestions and trigger checks come from `skill-registry`'s
//! [`Disclosure`](skill_registry::Disclosure), so the router answers exactly what the
//! registry discloses. Nothing here executes a skill: a host hands the route to its
//! runtime.
//!
//! ```no_run
//! use skill_registry::{Caller, Registry, RegistryConfig, Source};
//! use skill_router::{Route, Router};
//!
//! let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(
//!     "packs/actions",
//!     "builtin",
//! )]));
//! let snapshot = registry.snapshot();
//! let router = Router::new(&snapshot);
//!
//! let output = "Looking that up.\n```cmd\ntasks.search --status todo --limit 5\n```\n";
//! for routed in router.route_output(output).routes {
//!     match routed.route {
//!         Route::Invoke(call) => println!("run {} with {:?}", call.skill, call.flags),
//!         Route::Help { text, .. } => println!("{text}"),
//!         Route::Error(e) => println!("line {}: {e}", routed.line),
//!         _ => {}
//!     }
//! }
//!
//! match router.route("/skills", Caller::User) {
//!     Route::SkillList { text, .. } => print!("{text}"),
//!     other => println!("{other:?}"),
//! }
//! ```
//!
//! Limits: a command line is at most [`MAX_COMMAND_BYTES`] bytes and [`MAX_TOKENS`] words;
//! extraction is linear in the output and has no limit of its own.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod borrowed_tests;
mod config;
mod error;
mod extract;
mod flags;
mod lint;
mod route;
mod routes;
mod tokenize;
pub mod validate;

pub use config::{Prevalidate, RouterConfig};
pub use error::{Error, FlagProblem};
pub use extract::{Command, Extraction, Segment, extract, extract_bytes};
pub use flags::{FlagValue, Flags, Parsed, parse_flags};
pub use lint::{EXAMPLE_CODE, EXAMPLE_MESSAGE_PREFIX, lint_examples};
pub use route::{OUTLINE_FLAG, Router};
pub use routes::{
    Access, Delivery, Invocation, ListedSkill, Route, RoutedCommand, RoutedOutput, SlashInvocation,
    Via, access_of,
};
pub use skill_registry::Caller;
pub use tokenize::{
    MAX_COMMAND_BYTES, MAX_TOKENS, Token, join, join_tokens, quote, quote_token, tokenize,
};

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
