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
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    // A FIFO would block the read and a device (`/dev/zero`) never end: only a regular
    // file is read, and never past the cap, whatever its size said.
    if !meta.is_file() {
        return Err("not a regular file".to_owned());
    }
    let too_big = || format!("more than the {MAX_TRIGGER_EVAL_BYTES} bytes read");
    if meta.len() > MAX_TRIGGER_EVAL_BYTES {
        return Err(too_big());
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_TRIGGER_EVAL_BYTES + 1).read_to_string(&mut text))
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX_TRIGGER_EVAL_BYTES {
        return Err(too_big());
    }
    skill_search::parse_trigger_cases(&text).map_err(|e| e.to_string())
}

/// Whether `dir`'s trigger eval is a regular file reached without a symbolic link (a link
/// could lead out of the skill's folder, and the report prints what fails).
fn has_trigger_eval(dir: &Path) -> bool {
    let mut at = dir.to_path_buf();
    TRIGGER_EVAL_FILE.split('/').all(|part| {
        at.push(part);
        at.symlink_metadata()
            .is_ok_and(|m| !m.file_type().is_symlink())
    }) && at.is_file()
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
            .map_err(|e| Error::Search(std::sync::Arc::new(e)))
    }

    /// Every loaded skill that keeps a trigger eval in its folder (a regular file, reached
    /// without a symbolic link), by name, with the file.
    pub fn trigger_eval_files(&self) -> Vec<(String, PathBuf)> {
        let mut files: Vec<(String, PathBuf)> = self
            .registry()
            .snapshot()
            .skills()
            .filter(|s| has_trigger_eval(&s.dir))
            .map(|s| (s.name.clone(), s.dir.join(TRIGGER_EVAL_FILE)))
            .collect();
        files.sort();
        files
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// Only regular files are read: `/dev/zero` was read until memory ran out, and a FIFO
    /// blocked the read for good.
    #[cfg(unix)]
    #[test]
    fn devices_and_fifos_are_not_read() {
        let e = read_trigger_cases(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(e, "not a regular file");
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("eval_queries.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        assert_eq!(read_trigger_cases(&fifo).unwrap_err(), "not a regular file");
        let ok = dir.path().join("ok.json");
        std::fs::write(&ok, r#"[{"query":"q","should_trigger":true}]"#).unwrap();
        assert_eq!(read_trigger_cases(&ok).unwrap().len(), 1);
    }

    /// A trigger eval reached through a symbolic link (the file, or its `evals` folder) is
    /// not one of the skill's: the pack report read and printed a file out of the pack.
    #[cfg(unix)]
    #[tokio::test]
    async fn trigger_evals_behind_links_are_not_the_skills() {
        use std::os::unix::fs::symlink;
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let cases = r#"[{"query":"SECRET","should_trigger":true}]"#;
        std::fs::write(outside.path().join("secret.json"), cases).unwrap();
        for name in ["plain", "file-link", "dir-link"] {
            let dir = root.path().join(name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(
                dir.join("SKILL.md"),
                format!("---\nname: {name}\ndescription: A test skill.\n---\nBody.\n"),
            )
            .unwrap();
        }
        let evals = |name: &str| root.path().join(name).join("evals");
        std::fs::create_dir_all(evals("plain")).unwrap();
        std::fs::write(evals("plain").join("eval_queries.json"), cases).unwrap();
        std::fs::create_dir_all(evals("file-link")).unwrap();
        symlink(
            outside.path().join("secret.json"),
            evals("file-link").join("eval_queries.json"),
        )
        .unwrap();
        std::fs::copy(
            outside.path().join("secret.json"),
            outside.path().join("eval_queries.json"),
        )
        .unwrap();
        symlink(outside.path(), evals("dir-link")).unwrap();
        #[allow(unused_mut)]
        let mut config =
            crate::EngineConfig::new(skill_registry::RegistryConfig::with_sources(vec![
                skill_registry::Source::new(root.path(), "test"),
            ]));
        #[cfg(feature = "watch")]
        {
            config.watch = None;
        }
        let engine = Engine::start(config).unwrap();
        let names: Vec<String> = engine
            .trigger_eval_files()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["plain"]);
    }
}
