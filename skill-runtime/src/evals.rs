//! The engine's trigger-eval operations (SPEC section 6): a skill's Agent Skills trigger
//! eval (`[{"query", "should_trigger"}]`, kept as
//! [`TRIGGER_EVAL_FILE`](skill_search::TRIGGER_EVAL_FILE) in its folder) run through the
//! engine's own selection, so `skill-server eval` and the pack report score it the same way.

use std::path::{Path, PathBuf};

use skill_search::{SelectOptions, TRIGGER_EVAL_FILE, TriggerCase, TriggerReport};

use crate::engine::Engine;
use crate::error::Error;

/// The largest trigger-eval file read, in bytes.
pub const MAX_TRIGGER_EVAL_BYTES: u64 = 1024 * 1024;

/// Read and parse a trigger-eval file (at most [`MAX_TRIGGER_EVAL_BYTES`]); the error says
/// what is wrong with it, for a person to fix (without the path, which the caller knows).
pub fn read_trigger_cases(path: &Path) -> Result<Vec<TriggerCase>, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if meta.len() > MAX_TRIGGER_EVAL_BYTES {
        return Err(format!(
            "{} bytes, more than the {MAX_TRIGGER_EVAL_BYTES} read",
            meta.len()
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    skill_search::parse_trigger_cases(&text).map_err(|e| e.to_string())
}

impl Engine {
    /// Run `cases` for the loaded skill `skill` through selection with `options`: which
    /// queries select it, and its trigger precision and recall. Unknown skill:
    /// [`Error::UnknownSkill`].
    pub fn trigger_eval(
        &self,
        skill: &str,
        cases: &[TriggerCase],
        options: &SelectOptions,
    ) -> Result<TriggerReport, Error> {
        if self.registry().snapshot().get(skill).is_none() {
            return Err(Error::UnknownSkill(skill.to_owned()));
        }
        let index = self.index()?;
        skill_search::evaluate_triggers(&index, skill, cases, options)
            .map_err(|e| Error::Search(e.to_string()))
    }

    /// Every loaded skill that keeps a trigger eval in its folder, by name, with the file.
    pub fn trigger_eval_files(&self) -> Vec<(String, PathBuf)> {
        let mut files: Vec<(String, PathBuf)> = self
            .registry()
            .snapshot()
            .skills()
            .map(|s| (s.name.clone(), s.dir.join(TRIGGER_EVAL_FILE)))
            .filter(|(_, p)| p.is_file())
            .collect();
        files.sort();
        files
    }
}
