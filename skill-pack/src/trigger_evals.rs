//! The report's "trigger evals" section: for each skill that keeps an Agent Skills trigger
//! eval (`evals/eval_queries.json` in its folder), which queries select it, with its
//! trigger precision and recall ([`skill_search::evaluate_triggers`]). Shown only when some
//! skill of the pack has such a file; a file that cannot be read or parsed is a line of the
//! section, not an error of the report.

use std::fmt::Write as _;
use std::sync::Arc;

use skill_registry::Snapshot;
use skill_search::{SelectOptions, SkillIndex, TRIGGER_EVAL_FILE};

use crate::Error;

/// Largest trigger-eval file read, in bytes.
const MAX_EVAL_FILE_BYTES: u64 = 1024 * 1024;

/// Append the section to `out` when some skill has a trigger eval.
pub(crate) fn section(
    out: &mut String,
    snapshot: Arc<Snapshot>,
    profile: Option<String>,
) -> Result<(), Error> {
    let mut files: Vec<(String, std::path::PathBuf)> = snapshot
        .skills()
        .map(|s| (s.name.clone(), s.dir.join(TRIGGER_EVAL_FILE)))
        .filter(|(_, p)| p.is_file())
        .collect();
    if files.is_empty() {
        return Ok(());
    }
    files.sort();
    crate::section(out, &format!("trigger evals ({})", files.len()));
    let index = SkillIndex::build(snapshot)?;
    let options = SelectOptions {
        profile,
        ..SelectOptions::default()
    };
    for (name, path) in files {
        let text = match std::fs::metadata(&path) {
            Ok(m) if m.len() > MAX_EVAL_FILE_BYTES => Err(format!(
                "{} bytes, more than the {MAX_EVAL_FILE_BYTES} read",
                m.len()
            )),
            _ => std::fs::read_to_string(&path).map_err(|e| e.to_string()),
        };
        let cases =
            text.and_then(|t| skill_search::parse_trigger_cases(&t).map_err(|e| e.to_string()));
        let cases = match cases {
            Ok(c) => c,
            Err(e) => {
                let _ = writeln!(out, "{name}/{TRIGGER_EVAL_FILE}: not read: {e}");
                continue;
            }
        };
        let r = skill_search::evaluate_triggers(&index, &name, &cases, &options)?;
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
