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
//! Attribute names follow the OpenTelemetry GenAI semantic conventions (semconv 1.37,
//! status "Development") where one exists (`gen_ai.operation.name`, `gen_ai.tool.name`);
//! the rest are `skills.*`.
//!
//! Content is off by default: spans and events carry names, layers, dialects, counts and
//! outcomes, never message text, command lines or argument values, until the operator
//! turns [`set_capture_content`] on (`skill-server` reads
//! `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`).

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

static CAPTURE_CONTENT: AtomicBool = AtomicBool::new(false);

/// Let message text, command lines and argument values into spans and events (off by
/// default). Process-wide: the operator's choice, set once at start.
pub fn set_capture_content(on: bool) {
    CAPTURE_CONTENT.store(on, Ordering::Relaxed);
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
    let (layer, dialect) = match snapshot.get(name) {
        Some(s) => (s.layer.as_str(), s.dialect.as_str()),
        None => ("unknown", "unknown"),
    };
    tracing::info!(
        monotonic_counter.skills.activations = 1_u64,
        skills.trigger = trigger.as_str(),
        skills.name = name,
        skills.layer = layer,
        skills.dialect = dialect,
        "{ACTIVATION_EVENT}"
    );
}

/// Record one selection: its latency, a no-skill answer, and an activation per selected
/// skill.
pub(crate) fn selected(snapshot: &Snapshot, selection: &Selection, took: Duration) {
    metrics::selection(selection, took);
    for s in &selection.selected_skills {
        activated(snapshot, Trigger::PreflightSelection, &s.skill_id);
    }
}

/// Count one script run by outcome: `ok`, or its error code (`failed` without one).
pub(crate) fn script_finished(ok: bool, code: Option<&str>, duration_ms: u64) {
    metrics::script(ok, code, duration_ms);
}

/// The metric events, in their own module so that their target is [`METRICS_TARGET`].
mod metrics {
    use std::time::Duration;

    use skill_search::Selection;

    pub(super) fn selection(selection: &Selection, took: Duration) {
        tracing::info!(
            histogram.skills.select.duration = took.as_secs_f64(),
            skills.select.no_skill = selection.no_skill_needed,
            "select"
        );
        if selection.no_skill_needed {
            tracing::info!(monotonic_counter.skills.select.no_skill = 1_u64, "no skill");
        }
    }

    pub(super) fn script(ok: bool, code: Option<&str>, duration_ms: u64) {
        let result = match code {
            _ if ok => "ok",
            Some(c) => c,
            None => "failed",
        };
        tracing::info!(
            monotonic_counter.skills.script.runs = 1_u64,
            skills.script.outcome = result,
            skills.script.duration_ms = duration_ms,
            "script finished"
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
