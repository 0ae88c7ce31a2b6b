//! Telemetry vocabulary: the skill-activation event, the metric events and the switch that
//! lets content (message text, command lines, arguments) into telemetry.
//!
//! The libraries speak plain `tracing` only: spans around the engine's operations, and the
//! events built here. No OpenTelemetry type appears below the server; `skill-server`'s
//! `otel` feature turns these spans into OTLP spans (tracing-opentelemetry), the events
//! into span events, and the `monotonic_counter.*` / `histogram.*` fields into OTLP metrics
//! (tracing-opentelemetry's metrics layer reads those field prefixes).
//!
//! Activations are emitted here, at the engine's doorway ([`crate::Engine`] operations and
//! the scheduler's dispatch), so HTTP, the command line and MCP all report them alike.
//!
//! An operation that activates one skill (a route, one command, a slash line, `get_skill`)
//! or a few (a selection, at most `skill_search::MAX_MAX_SKILLS`) emits one
//! [`ACTIVATION_EVENT`] per activation at INFO. A model output's commands are many (up to
//! [`MAX_OUTPUT_COMMANDS`](crate::exec::MAX_OUTPUT_COMMANDS)): each of them is an
//! [`ACTIVATION_EVENT`] at DEBUG, counted by a metric event, and the operation emits one
//! [`ACTIVATION_SUMMARY_EVENT`] at INFO, so one request logs one line at INFO however many
//! commands it carries.
//!
//! Attribute names follow the OpenTelemetry GenAI semantic conventions
//! (semantic-conventions-genai v0.1.0, status "Development") where one exists
//! (`gen_ai.operation.name`, `gen_ai.tool.name`); the rest are `skills.*`. A tool run is
//! one `execute_tool {name}` span (exec); the operations around runs say `skills.operation`.
//!
//! A request may name its caller's span (W3C trace context in HTTP headers or MCP
//! `params._meta`): the doors hand its keys to [`adopt_remote_parent`], which does nothing
//! until the exporting host installs a [`RemoteParent`].
//!
//! Content is off by default: spans and events carry names, layers, dialects, counts and
//! outcomes, never message text, command lines or argument values, until the operator
//! turns [`set_capture_content`] on (`skill-server` reads
//! `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use skill_registry::Snapshot;
use skill_search::Selection;

/// The `tracing` target of activation events.
pub const ACTIVATION_TARGET: &str = "skill_runtime::activation";

/// The `tracing` target of metric events (a log filter can silence them alone).
pub const METRICS_TARGET: &str = "skill_runtime::activation::metrics";

/// The activation event's name (the span event's name in OTLP).
pub const ACTIVATION_EVENT: &str = "skill_activated";

/// The name of the event that sums up the activations of one model output's commands:
/// `skills.trigger`, `skills.activations` (how many) and `skills.names` (the distinct
/// skills, the first ten of them, and how many more).
pub const ACTIVATION_SUMMARY_EVENT: &str = "skills_activated";

/// Most distinct skill names an [`ACTIVATION_SUMMARY_EVENT`] lists; it says how many more
/// there were.
const SUMMARY_NAMES: usize = 10;

/// Each metric the engine emits and its unit (UCUM, as OpenTelemetry's semantic
/// conventions write them: `s` for seconds, `{thing}` for a count of things). An exporter
/// gives its instruments these units.
pub const UNITS: [(&str, &str); 5] = [
    ("skills.activations", "{activation}"),
    ("skills.select.duration", "s"),
    ("skills.select.no_skill", "{request}"),
    ("skills.script.runs", "{run}"),
    ("skills.script.duration", "s"),
];

static CAPTURE_CONTENT: AtomicBool = AtomicBool::new(false);

/// Let message text, command lines and argument values into spans and events (off by
/// default). Process-wide: the operator's choice, set once at start.
pub fn set_capture_content(on: bool) {
    CAPTURE_CONTENT.store(on, Ordering::Relaxed);
}

/// Makes `span` the child of the remote span a request names in its W3C trace-context
/// keys (`traceparent`, `tracestate`), read through the lookup it is given. Installed once
/// by the host that exports spans (skill-server's `otel`); without one, nothing is read.
pub type RemoteParent = fn(span: &tracing::Span, get: &dyn Fn(&str) -> Option<String>);

static REMOTE_PARENT: OnceLock<RemoteParent> = OnceLock::new();

/// Install the process's [`RemoteParent`] (once; `false` when one was installed before).
pub fn set_remote_parent(adopt: RemoteParent) -> bool {
    REMOTE_PARENT.set(adopt).is_ok()
}

/// Give `span` the remote parent that the request's carrier names (HTTP headers, MCP
/// `params._meta`), when a [`RemoteParent`] is installed; the doors call it on the span of
/// each request they serve.
pub fn adopt_remote_parent(span: &tracing::Span, get: &dyn Fn(&str) -> Option<String>) {
    if let Some(adopt) = REMOTE_PARENT.get() {
        adopt(span, get);
    }
}

/// Whether content goes into telemetry (see [`set_capture_content`]).
pub fn capture_content() -> bool {
    CAPTURE_CONTENT.load(Ordering::Relaxed)
}

/// `text` when content capture is on, else nothing (the field stays empty).
pub(crate) fn content(text: &str) -> Option<&str> {
    capture_content().then_some(text)
}

/// How a skill came to be activated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// The model invoked or loaded it.
    Model,
    /// A user's slash command.
    UserSlashCommand,
    /// Preflight selection picked it for a message.
    PreflightSelection,
    /// Its schedule fired.
    Schedule,
}

impl Trigger {
    /// The attribute value (`skills.trigger`).
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Model => "model",
            Trigger::UserSlashCommand => "user_slash_command",
            Trigger::PreflightSelection => "preflight_selection",
            Trigger::Schedule => "schedule",
        }
    }
}

/// Emit one activation event (and count it) for `name`, with its layer and dialect from
/// `snapshot` (`unknown` when the snapshot no longer holds it).
pub(crate) fn activated(snapshot: &Snapshot, trigger: Trigger, name: &str) {
    let (layer, dialect) = layer_and_dialect(snapshot, name);
    tracing::info!(
        skills.trigger = trigger.as_str(),
        skills.name = name,
        skills.layer = layer,
        skills.dialect = dialect,
        "{ACTIVATION_EVENT}"
    );
    metrics::activation(trigger, name, layer, dialect);
}

/// The activations of one operation that may have many (a model output's commands): each
/// at DEBUG with its metric, and one INFO [`ACTIVATION_SUMMARY_EVENT`] when it is dropped
/// (none when nothing was activated).
struct Activations<'s> {
    snapshot: &'s Snapshot,
    trigger: Trigger,
    count: u64,
    names: Vec<String>,
    more: usize,
}

impl<'s> Activations<'s> {
    fn new(snapshot: &'s Snapshot, trigger: Trigger) -> Self {
        Activations {
            snapshot,
            trigger,
            count: 0,
            names: Vec::new(),
            more: 0,
        }
    }

    /// One activation of `name`.
    fn add(&mut self, name: &str) {
        let (layer, dialect) = layer_and_dialect(self.snapshot, name);
        tracing::debug!(
            skills.trigger = self.trigger.as_str(),
            skills.name = name,
            skills.layer = layer,
            skills.dialect = dialect,
            "{ACTIVATION_EVENT}"
        );
        metrics::activation(self.trigger, name, layer, dialect);
        self.count += 1;
        if !self.names.iter().any(|n| n == name) {
            if self.names.len() < SUMMARY_NAMES {
                self.names.push(name.to_owned());
            } else {
                self.more += 1;
            }
        }
    }
}

impl Drop for Activations<'_> {
    fn drop(&mut self) {
        if self.count == 0 {
            return;
        }
        let mut names = self.names.join(", ");
        if self.more > 0 {
            names.push_str(&format!(" and {} more", self.more));
        }
        tracing::info!(
            skills.trigger = self.trigger.as_str(),
            skills.activations = self.count,
            skills.names = names,
            "{ACTIVATION_SUMMARY_EVENT}"
        );
    }
}

/// The activations of a model output's commands (the skills of those that ran one): each
/// at DEBUG, one summary at INFO ([`Activations`]).
pub(crate) fn commands_ran<'n>(snapshot: &Snapshot, skills: impl IntoIterator<Item = &'n str>) {
    let mut activations = Activations::new(snapshot, Trigger::Model);
    for skill in skills {
        activations.add(skill);
    }
}

/// A skill's layer and dialect in `snapshot` (`unknown` when it no longer holds it).
fn layer_and_dialect<'s>(snapshot: &'s Snapshot, name: &str) -> (&'s str, &'s str) {
    match snapshot.get(name) {
        Some(s) => (s.layer.as_str(), s.dialect.as_str()),
        None => ("unknown", "unknown"),
    }
}

/// Record one selection: its latency, a no-skill answer, and an activation per selected
/// skill.
pub(crate) fn selected(snapshot: &Snapshot, selection: &Selection, took: Duration) {
    metrics::selection(selection, took);
    for s in &selection.selected_skills {
        activated(snapshot, Trigger::PreflightSelection, &s.skill_id);
    }
}

/// Count one script run by outcome (`ok`, or its error code; `failed` without one) and
/// record how long it ran.
pub(crate) fn script_finished(ok: bool, code: Option<&str>, took: Duration) {
    metrics::script(ok, code, took);
}

/// The metric events, in their own module so that their target is [`METRICS_TARGET`].
///
/// They carry no message: tracing-opentelemetry's metrics layer turns every field that is
/// not the instrument's into an attribute, a message included, and a message would make
/// one more attribute on every point. Durations are histograms in seconds, never an
/// attribute (an attribute per value is a new series per run). The units are given where
/// the instruments are exported (skill-server's `otel`), by [`UNITS`](super::UNITS).
mod metrics {
    use std::time::Duration;

    use skill_search::Selection;

    pub(super) fn selection(selection: &Selection, took: Duration) {
        tracing::info!(
            histogram.skills.select.duration = took.as_secs_f64(),
            skills.select.no_skill = selection.no_skill_needed,
        );
        if selection.no_skill_needed {
            tracing::info!(monotonic_counter.skills.select.no_skill = 1_u64);
        }
    }

    /// The count of one activation.
    pub(super) fn activation(trigger: super::Trigger, name: &str, layer: &str, dialect: &str) {
        tracing::info!(
            monotonic_counter.skills.activations = 1_u64,
            skills.trigger = trigger.as_str(),
            skills.name = name,
            skills.layer = layer,
            skills.dialect = dialect,
        );
    }

    pub(super) fn script(ok: bool, code: Option<&str>, took: Duration) {
        let result = match code {
            _ if ok => "ok",
            Some(c) => c,
            None => "failed",
        };
        tracing::info!(
            monotonic_counter.skills.script.runs = 1_u64,
            skills.script.outcome = result,
        );
        tracing::info!(
            histogram.skills.script.duration = took.as_secs_f64(),
            skills.script.outcome = result,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_name_the_modules_that_emit() {
        assert_eq!(ACTIVATION_TARGET, module_path!().replace("::tests", ""));
        assert_eq!(METRICS_TARGET, format!("{ACTIVATION_TARGET}::metrics"));
    }

    #[test]
    fn content_is_withheld_until_the_switch_is_on() {
        assert_eq!(content("secret"), None);
        set_capture_content(true);
        assert_eq!(content("secret"), Some("secret"));
        set_capture_content(false);
        assert_eq!(content("secret"), None);
    }

    #[test]
    fn triggers_have_distinct_names() {
        let names = [
            Trigger::Model,
            Trigger::UserSlashCommand,
            Trigger::PreflightSelection,
            Trigger::Schedule,
        ]
        .map(Trigger::as_str);
        let set: std::collections::BTreeSet<_> = names.iter().collect();
        assert_eq!(set.len(), names.len());
    }
}
