//! What the index's unit tests share: a small index of skills written to a temporary folder.

use skill_registry::{Registry, RegistryConfig, Source};

use crate::SkillIndex;

/// An index of `(name, description)` skills, each a folder with a SKILL.md, and the folder
/// they are in (kept alive as long as the index is read).
pub(crate) fn index_of<'a>(
    skills: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> (tempfile::TempDir, SkillIndex) {
    let dir = tempfile::tempdir().unwrap();
    for (name, description) in skills {
        let folder = dir.path().join(name);
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n"),
        )
        .unwrap();
    }
    let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(
        dir.path(),
        "user",
    )]));
    let index = SkillIndex::build(registry.snapshot()).unwrap();
    (dir, index)
}
