//! Routing, then executing: a whole model output ([`Runtime::execute_output`]) and a
//! user's slash line ([`Runtime::invoke`]), with the runtime's routing settings; and the
//! outcome of a route that executes nothing (help, a built-in, a plain message, an error).

use std::time::Instant;

use skill_registry::Caller;
use skill_router::{Invocation, Route, Router, RouterConfig};

use super::wire::{RouteShape, snake_case};

use super::{
    CommandOutcome, Context, Error, Kind, MAX_EXECUTION_OUTPUT_BYTES, MAX_OUTPUT_COMMANDS, Outcome,
    Runtime, budget, elapsed_ms, execution_cut_marker,
};

impl Runtime {
    /// Route a whole model output and execute its commands in order. Each command gets
    /// its own result (help text, route errors and failures included); one failure does
    /// not stop the others. All commands resolve against the same snapshot.
    ///
    /// At most [`MAX_OUTPUT_COMMANDS`] commands are executed, and their outputs together
    /// hold at most [`MAX_EXECUTION_OUTPUT_BYTES`] (the output that reaches it is cut,
    /// with a marker). Commands past either limit are not executed (nor routed): one last
    /// result, for the first of them, fails with `too_many_commands` or `output_limit`,
    /// saying how many were left and from which line.
    pub async fn execute_output(&self, output: &str, ctx: &Context) -> Vec<CommandOutcome> {
        let snapshot = ctx
            .snapshot
            .clone()
            .unwrap_or_else(|| self.inner.registry.snapshot());
        let mut ctx = ctx.clone().with_snapshot(snapshot.clone());
        ctx.caller = Caller::Model;
        type Step = (String, u32, Result<Invocation, Outcome>);
        let (steps, total, beyond): (Vec<Step>, usize, Option<(String, u32)>) = {
            let router = Router::with_config(&snapshot, self.router_config(&ctx));
            let routed = router.route_output_first(output, MAX_OUTPUT_COMMANDS);
            let total = routed.extraction.commands().count();
            let beyond = routed
                .extraction
                .commands()
                .nth(MAX_OUTPUT_COMMANDS)
                .map(|c| (c.text.to_owned(), c.line));
            let steps = routed
                .routes
                .into_iter()
                .map(|r| {
                    let step = match r.route.into_owned() {
                        Route::Invoke(inv) => Ok(inv),
                        other => Err(route_outcome(other)),
                    };
                    (r.command.to_owned(), r.line, step)
                })
                .collect();
            (steps, total, beyond)
        };
        let mut out = Vec::with_capacity(steps.len() + 1);
        let mut left = MAX_EXECUTION_OUTPUT_BYTES;
        let ran = steps.len();
        for (i, (command, line, step)) in steps.into_iter().enumerate() {
            if left == 0 {
                let e = Error::OutputLimit {
                    limit: MAX_EXECUTION_OUTPUT_BYTES,
                    skipped: total - i,
                    line,
                };
                out.push(CommandOutcome {
                    command,
                    line,
                    outcome: Outcome::failure(None, None, &e),
                });
                return out;
            }
            let mut outcome = match step {
                Ok(inv) => self.execute(&inv, &ctx).await,
                Err(o) => o,
            };
            let used = budget::text_bytes(&outcome.output);
            if used > left {
                budget::truncate(&mut outcome.output, left, &execution_cut_marker());
            }
            left = left.saturating_sub(used);
            out.push(CommandOutcome {
                command,
                line,
                outcome,
            });
        }
        if let Some((command, line)) = beyond {
            let e = Error::TooManyCommands {
                total,
                limit: MAX_OUTPUT_COMMANDS,
                skipped: total - ran,
                line,
            };
            out.push(CommandOutcome {
                command,
                line,
                outcome: Outcome::failure(None, None, &e),
            });
        }
        out
    }

    /// Run a user's slash line (`/name args`, `/skill name args`, lily `/<command>`).
    /// The arguments are the text after the command as written (`$ARGUMENTS`); for
    /// handlers and scripts they are also parsed into flags and positionals. `/skills` is
    /// answered as help; other built-in commands (`/help`, `/exit`, ...) fail with
    /// `builtin_command` and plain messages with `not_a_command`, with the route as
    /// `output`, for the host to handle.
    pub async fn invoke(&self, line: &str, ctx: &Context) -> Outcome {
        let started = Instant::now();
        let snapshot = ctx
            .snapshot
            .clone()
            .unwrap_or_else(|| self.inner.registry.snapshot());
        let mut ctx = ctx.clone().with_snapshot(snapshot.clone());
        ctx.caller = Caller::User;
        let step = {
            let router = Router::with_config(&snapshot, self.router_config(&ctx));
            match router.route_user(line) {
                Route::Slash(s) => Ok((s.invocation, s.args)),
                other => Err(route_outcome(other)),
            }
        };
        let mut outcome = match step {
            Ok((inv, args)) => self.execute_with(&inv, args, &ctx).await,
            Err(o) => o,
        };
        outcome.duration_ms = elapsed_ms(started);
        outcome
    }

    /// The routing settings: the runtime's [`RouterConfig`] (see
    /// [`RuntimeBuilder::router`]), under the context's profile when it names one.
    fn router_config(&self, ctx: &Context) -> RouterConfig {
        self.router_under(ctx.profile.as_deref())
    }

    /// The runtime's routing settings under `profile` when it names one (else the
    /// configured profile): the one place a request's profile overrides the settings, for
    /// the Engine's routes as for the runtime's executions.
    pub(crate) fn router_under(&self, profile: Option<&str>) -> RouterConfig {
        let mut config = self.inner.router.clone();
        if let Some(p) = profile {
            config.profile = Some(p.to_owned());
        }
        config
    }

    /// The routing settings [`Runtime::execute_output`] and [`Runtime::invoke`] route with.
    pub fn router(&self) -> &RouterConfig {
        &self.inner.router
    }
}

/// A route's JSON, as the wire shows it (`null` if it cannot be rendered, which a shape of
/// strings never is).
fn route_json(route: &Route) -> serde_json::Value {
    serde_json::to_value(RouteShape::from(route)).unwrap_or_default()
}

/// The outcome of a route that executes nothing.
fn route_outcome(route: Route) -> Outcome {
    let skill = route.skill().map(str::to_owned);
    match route {
        Route::Help { text, .. } => {
            let mut o = Outcome::success("", Kind::Help, serde_json::Value::String(text));
            o.skill = None;
            o
        }
        Route::SkillList { text, .. } => {
            let mut o = Outcome::success("", Kind::Help, serde_json::Value::String(text));
            o.skill = None;
            o
        }
        Route::Error(e) => Outcome::failure(
            skill.as_deref(),
            None,
            &Error::Route {
                code: snake_case(e.code()),
                message: e.to_string(),
            },
        ),
        // Lines the runtime does not run: the output names the route (as the route JSON
        // does), so a host calling `invoke` alone can still act on a built-in command.
        Route::Builtin { ref command, .. } => {
            let mut o = Outcome::failure(None, None, &Error::BuiltinCommand(command.clone()));
            o.output = route_json(&route);
            o
        }
        Route::Message {
            ref text, ref note, ..
        } => {
            let message = match note {
                Some(n) => format!("{n}: {text}"),
                None => format!("not a slash command: {text}"),
            };
            let mut o = Outcome::failure(None, None, &Error::NotACommand(message));
            o.output = route_json(&route);
            o
        }
        other => Outcome::failure(
            skill.as_deref(),
            None,
            &Error::Internal(format!("unexpected route: {other:?}")),
        ),
    }
}
