//! A generated pack of realistic, valid agentskills skills, varied deterministically by index.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

const VERBS: &[&str] = &[
    "Summarise",
    "Convert",
    "Validate",
    "Draft",
    "Review",
    "Extract",
    "Format",
    "Plan",
    "Audit",
    "Translate",
    "Index",
];
const OBJECTS: &[&str] = &[
    "invoices",
    "meeting notes",
    "release notes",
    "CSV exports",
    "API schemas",
    "log files",
    "pull requests",
    "calendar events",
    "design documents",
    "test reports",
    "support tickets",
    "spreadsheets",
    "changelogs",
];
const DOMAINS: &[&str] = &[
    "finance",
    "engineering",
    "operations",
    "marketing",
    "research",
    "legal",
    "support",
];
const TRIGGERS: &[&str] = &[
    "the user attaches a file",
    "a deadline is mentioned",
    "the user asks for a summary",
    "a repository is open",
    "numbers need checking",
    "a report is due",
    "the user pastes a table",
    "several documents must agree",
];

/// One skill in this many declares toolsets `triggers` (keywords, verbs and a pattern), so
/// that search benchmarks pay for trigger matching.
pub const TRIGGER_EVERY: usize = 4;

fn pick<'a>(list: &[&'a str], i: usize) -> &'a str {
    list.get(i % list.len().max(1)).copied().unwrap_or("")
}

/// The folder name of skill `index` (1-based) in a pack of `count`: `skill-00001`, ...
pub fn folder_name(index: usize, count: usize) -> String {
    let width = count.to_string().len().max(5);
    format!("skill-{index:0width$}")
}

/// The `SKILL.md` text of skill `index` named `name`: frontmatter with name, a one- or
/// two-sentence description, license, metadata (and sometimes compatibility; one skill in
/// [`TRIGGER_EVERY`] also toolsets `triggers`), and a body of about 40 lines with headings,
/// lists and a code block.
pub fn skill_text(index: usize, name: &str) -> String {
    let verb = pick(VERBS, index);
    let object = pick(OBJECTS, index / 3 + index);
    let domain = pick(DOMAINS, index / 5 + index);
    let trigger = pick(TRIGGERS, index / 7 + index);
    let lower = verb.to_lowercase();
    let mut s = String::with_capacity(2048);
    let _ = writeln!(s, "---");
    let _ = writeln!(s, "name: {name}");
    if index % 3 == 0 {
        let _ = writeln!(s, "description: {verb} {object} for {domain} teams.");
    } else {
        let _ = writeln!(
            s,
            "description: {verb} {object} for {domain} teams, following the house style. Use when {trigger}."
        );
    }
    let _ = writeln!(
        s,
        "license: {}",
        if index % 2 == 0 { "MIT" } else { "Apache-2.0" }
    );
    if index % 4 == 0 {
        let _ = writeln!(s, "compatibility: Requires Python 3.10+ and network access");
    }
    let _ = writeln!(s, "metadata:");
    let _ = writeln!(s, "  author: {domain}-team");
    let _ = writeln!(s, "  version: \"1.{}.{}\"", index % 10, index % 7);
    let _ = writeln!(s, "  category: {domain}");
    if index % TRIGGER_EVERY == 1 {
        // Keywords: the object and the domain's object; the verb; and a pattern for
        // "<verb> [the|our|these] <object>", spaces as `\s+`.
        let object_re = object.to_lowercase().replace(' ', r"\s+");
        let _ = writeln!(s, "triggers:");
        let _ = writeln!(
            s,
            "  keywords: [\"{}\", \"{domain} {}\"]",
            object.to_lowercase(),
            object.to_lowercase()
        );
        let _ = writeln!(s, "  verbs: [\"{lower}\"]");
        let _ = writeln!(
            s,
            "  patterns: ['\\b{lower}\\s+((the|our|these)\\s+)?{object_re}\\b']"
        );
    }
    let _ = writeln!(s, "---");
    let _ = writeln!(s, "# {verb} {object}");
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "This skill helps {domain} teams {lower} {object} quickly and consistently."
    );
    let _ = writeln!(
        s,
        "It is item {index} of a generated pack and follows the Agent Skills layout."
    );
    let _ = writeln!(s);
    let _ = writeln!(s, "## When to use");
    let _ = writeln!(s);
    let _ = writeln!(s, "- When {trigger}.");
    let _ = writeln!(
        s,
        "- When {object} arrive in bulk and need the same treatment."
    );
    let _ = writeln!(s, "- When a reviewer asks for a {domain} checklist.");
    let _ = writeln!(s);
    let _ = writeln!(s, "## Steps");
    let _ = writeln!(s);
    let _ = writeln!(s, "1. Read every input file and note its format.");
    let _ = writeln!(
        s,
        "2. Check the inputs against the {domain} conventions in `references/conventions.md`."
    );
    let _ = writeln!(
        s,
        "3. {verb} each item; keep the original wording where possible."
    );
    let _ = writeln!(
        s,
        "4. Record anything unclear in a short list of open questions."
    );
    let _ = writeln!(
        s,
        "5. Present the result as a table, then a one-paragraph summary."
    );
    let _ = writeln!(s);
    let _ = writeln!(s, "## Example");
    let _ = writeln!(s);
    let _ = writeln!(s, "```text");
    let _ = writeln!(s, "input:  {} {object}", 3 + index % 40);
    let _ = writeln!(
        s,
        "output: a table with {} columns and a summary",
        3 + index % 5
    );
    let _ = writeln!(s, "```");
    let _ = writeln!(s);
    let _ = writeln!(s, "## Edge cases");
    let _ = writeln!(s);
    let _ = writeln!(s, "- Empty input: say so and stop.");
    let _ = writeln!(s, "- Mixed formats: handle each group separately.");
    let _ = writeln!(
        s,
        "- More than {} items: work in batches of {}.",
        50 + index % 200,
        10 + index % 20
    );
    let _ = writeln!(s);
    let _ = writeln!(s, "## Notes");
    let _ = writeln!(s);
    let _ = writeln!(s, "Keep answers short and link the source of every figure.");
    let _ = writeln!(
        s,
        "Prefer ISO 8601 dates, for example 2024-{:02}-{:02}.",
        1 + index % 12,
        1 + index % 28
    );
    let _ = writeln!(s, "Ask before deleting or overwriting anything.");
    s
}

/// Write `count` skill folders (`skill-00001/SKILL.md`, ...) into `dir`. Returns the total
/// bytes written.
pub fn write_pack(dir: &Path, count: usize) -> Result<u64, String> {
    let mut total = 0u64;
    for index in 1..=count {
        let name = folder_name(index, count);
        let folder = dir.join(&name);
        fs::create_dir(&folder).map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
        let text = skill_text(index, &name);
        let file = folder.join("SKILL.md");
        fs::write(&file, &text).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        total += text.len() as u64;
    }
    Ok(total)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use skill_format::{Origin, ParseOptions, parse_skill};

    #[test]
    fn generated_skills_are_valid_without_warnings() {
        for index in 1..=200 {
            let name = folder_name(index, 10_000);
            let text = skill_text(index, &name);
            let file = parse_skill(
                text.as_bytes(),
                &ParseOptions::new(format!("{name}/SKILL.md"), Origin::folder(name.clone())),
            );
            assert!(file.is_loadable(), "{text}\n{:?}", file.diagnostics);
            assert!(file.diagnostics.is_empty(), "{:?}", file.diagnostics);
            assert_eq!(file.name, name);
            let lines = text.lines().count();
            assert!((40..=65).contains(&lines), "{lines} lines");
            let triggers = &file.manifest.triggers;
            if index % TRIGGER_EVERY == 1 {
                assert_eq!(triggers.keywords.len(), 2, "{text}");
                assert_eq!(triggers.verbs.len(), 1);
                assert_eq!(triggers.patterns.len(), 1);
            } else {
                assert!(triggers.is_empty());
            }
        }
    }

    #[test]
    fn names_are_padded() {
        assert_eq!(folder_name(1, 10_000), "skill-00001");
        assert_eq!(folder_name(7, 123_456), "skill-000007");
    }

    #[test]
    fn a_small_pack_loads() {
        let dir = tempfile::tempdir().unwrap();
        write_pack(dir.path(), 20).unwrap();
        let config =
            skill_registry::RegistryConfig::with_sources(vec![skill_registry::Source::new(
                dir.path(),
                "bench",
            )]);
        let snapshot = std::sync::Arc::new(skill_registry::load_snapshot(&config, 1));
        assert_eq!(
            snapshot.skills().count(),
            20,
            "{:?}",
            snapshot.diagnostics()
        );
        // The triggers compile and match the requests they were written for.
        let index = skill_search::SkillIndex::build(snapshot).unwrap();
        assert!(index.diagnostics().is_empty(), "{:?}", index.diagnostics());
        for i in (1..=20).filter(|i| i % TRIGGER_EVERY == 1) {
            let verb = pick(VERBS, i).to_lowercase();
            let object = pick(OBJECTS, i / 3 + i).to_lowercase();
            let hits = index
                .search(&skill_search::SearchRequest {
                    text: &format!("please {verb} the {object} now"),
                    limit: 50,
                    ..Default::default()
                })
                .unwrap();
            let name = folder_name(i, 20);
            let hit = hits.iter().find(|m| m.name == name).unwrap();
            let kinds: Vec<_> = hit.triggers.iter().map(|t| t.kind).collect();
            for kind in [
                skill_search::TriggerKind::Keyword,
                skill_search::TriggerKind::Verb,
                skill_search::TriggerKind::Pattern,
            ] {
                assert!(kinds.contains(&kind), "{name}: {kinds:?}");
            }
        }
    }
}
