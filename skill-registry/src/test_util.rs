//! Helpers for the crate's unit tests.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;

use skill_format::{Dialect, FileKind, Manifest};

use crate::skill::{Skill, Status};

/// Write `text` at `rel` under `root`, creating its folders.
pub(crate) fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A loaded folder skill `name` at `name/SKILL.md` in the layer `user`, with `description`
/// and nothing else.
pub(crate) fn skill(name: &str, description: &str) -> Arc<Skill> {
    Arc::new(Skill {
        name: name.to_owned(),
        description: description.to_owned(),
        dialect: Dialect::AgentSkills,
        kind: FileKind::Skill,
        layer: "user".to_owned(),
        source: 0,
        path: format!("{name}/SKILL.md").into(),
        dir: name.into(),
        domain: None,
        manifest: Manifest::default(),
        body: String::new(),
        body_line: 1,
        status: Status::Loaded,
        diagnostics: Vec::new(),
        outline_cache: crate::SectionCache::default(),
    })
}
