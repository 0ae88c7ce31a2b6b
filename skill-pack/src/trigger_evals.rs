//! The report's "trigger evals" section: for each skill that keeps an Agent Skills trigger
//! eval (`evals/eval_queries.json` in its folder), which queries select it, with its
//! trigger precision and recall ([`skill_runtime::search::evaluate_triggers`]). Shown only when some
//! skill of the pack has such a file; a file that cannot be read or parsed is a line of the
//! section, not an error of the report.

use std::fmt::Write as _;

use skill_runtime::search::{SelectOptions, TRIGGER_EVAL_FILE, TriggerReport};
use skill_runtime::{Engine, read_trigger_cases};

use crate::Error;

/// Each skill's trigger eval, by name: its report, or why its file was not read.
pub(crate) type Results = Vec<(String, Result<TriggerReport, String>)>;

/// Run every skill's trigger eval (an empty list when no skill keeps one).
pub(crate) fn results(engine: &Engine, profile: Option<String>) -> Result<Results, Error> {
    let options = SelectOptions {
        profile,
        ..SelectOptions::default()
    };
    let mut out = Vec::new();
    for (name, path) in engine.trigger_eval_files() {
        let report = match read_trigger_cases(&path) {
            Ok(cases) => Ok(engine
                .trigger_eval(&name, &cases, &options)
                .map_err(Error::Engine)?),
            Err(e) => Err(e.to_string()),
        };
        out.push((name, report));
    }
    Ok(out)
}

/// Append the section to `out` when some skill has a trigger eval.
pub(crate) fn section(
    out: &mut String,
    engine: &Engine,
    profile: Option<String>,
) -> Result<(), Error> {
    let results = results(engine, profile)?;
    if results.is_empty() {
        return Ok(());
    }
    crate::section(out, &format!("trigger evals ({})", results.len()));
    for (name, report) in results {
        let r = match report {
            Ok(r) => r,
            Err(e) => {
                let _ = writeln!(out, "{name}/{TRIGGER_EVAL_FILE}: not read: {e}");
                continue;
            }
        };
        let ratio = |x: Option<f64>| x.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}"));
        let _ = writeln!(
            out,
            "{name}: {} of {} pass; precision {}, recall {}",
            r.passed(),
            r.outcomes.len(),
            ratio(r.precision()),
            ratio(r.recall())
        );
        for o in r
            .outcomes
            .iter()
            .filter(|o| o.should_trigger != o.triggered)
        {
            let _ = writeln!(
                out,
                "  FAIL {} {:?} (selected: {})",
                if o.should_trigger {
                    "missed"
                } else {
                    "false trigger"
                },
                o.query,
                if o.selected.is_empty() {
                    "none".to_owned()
                } else {
                    o.selected.join(", ")
                }
            );
        }
    }
    Ok(())
}
