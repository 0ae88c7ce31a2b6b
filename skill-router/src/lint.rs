//! Example linting: a skill's `## Examples` lines must route to that skill.

use skill_format::sections::example_lines;
use skill_format::{Code, Diagnostic};
use skill_registry::{Skill, Snapshot};

use crate::route::{Mode, Route, Router};

/// The diagnostic code example findings carry (`example-does-not-route`); their message
/// starts with [`EXAMPLE_MESSAGE_PREFIX`].
pub const EXAMPLE_CODE: Code = Code::ExampleDoesNotRoute;

/// How every example finding's message starts.
pub const EXAMPLE_MESSAGE_PREFIX: &str = "example does not route to";

/// Check every `## Examples` line of every loaded skill (warnings, one per failing line,
/// at the line in the file, in path then line order):
///
/// * a line starting with `/` must be a slash command that resolves to the skill (by lily
///   `command` or by name, `/skill <name>` included);
/// * any other line must route, as a model command, to the skill (`<name> --help` counts)
///   and, when the skill has a `## Flags` schema, pass it (unknown flags, missing required
///   flags, values outside `One of:`).
///
/// Trigger control and profiles are not applied: examples document syntax, and who may
/// invoke a skill is a separate question.
pub fn lint_examples(snapshot: &Snapshot) -> Vec<Diagnostic> {
    let router = Router::new(snapshot);
    let mut out = Vec::new();
    for skill in snapshot.skills() {
        lint_skill(&router, skill, &mut out);
    }
    out.sort_by(|a, b| a.path.cmp(&b.path).then(a.line.cmp(&b.line)));
    out
}

fn lint_skill(router: &Router<'_>, skill: &Skill, out: &mut Vec<Diagnostic>) {
    for example in example_lines(&skill.body) {
        let Some(problem) = check(router, skill, example.text) else {
            continue;
        };
        let line = skill
            .body_line
            .saturating_add(example.line)
            .saturating_sub(1);
        out.push(
            Diagnostic::warning(
                EXAMPLE_CODE,
                &skill.path,
                format!(
                    "{EXAMPLE_MESSAGE_PREFIX} `{}`: {problem} (example: `{}`)",
                    skill.name, example.text
                ),
            )
            .at(line, 1),
        );
    }
}

/// What is wrong with one example, or `None` when it routes to `skill`.
fn check(router: &Router<'_>, skill: &Skill, example: &str) -> Option<String> {
    if let Some(after) = example.strip_prefix('/') {
        let word = after.split_ascii_whitespace().next().unwrap_or("");
        let (word, target) = if word == "skill" {
            let name = after.split_ascii_whitespace().nth(1).unwrap_or("");
            (name, router.snapshot_entry(name))
        } else {
            (word, router.slash_target(word))
        };
        return match target {
            Some(t) if t.name == skill.name => None,
            Some(t) => Some(format!("`/{word}` invokes `{}`", t.name)),
            None => Some(format!("`/{word}` is not a command for this skill")),
        };
    }
    match router.model_line(example, Mode::Lint) {
        Route::Invoke(i) if i.skill == skill.name => None,
        Route::Help { topic: Some(t), .. } if t == skill.name => None,
        Route::Invoke(i) => Some(format!("it invokes `{}`", i.skill)),
        Route::Help { topic, .. } => Some(format!(
            "it is help for `{}`",
            topic.as_deref().unwrap_or("get_skill")
        )),
        Route::Error(e) => Some(e.to_string()),
        other => Some(format!("it routes to {other:?}")),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use skill_registry::{Registry, RegistryConfig, Source};
    use std::fs;

    fn pack(files: &[(&str, &str)]) -> (tempfile::TempDir, std::sync::Arc<Snapshot>) {
        let dir = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            let p = dir.path().join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        }
        let reg = Registry::load(RegistryConfig::with_sources(vec![Source::new(
            dir.path(),
            "test",
        )]));
        let snap = reg.snapshot();
        (dir, snap)
    }

    const SEND: &str = "---\nname: mail.send\ndescription: Send mail\n---\n# mail.send\n\n## Usage\n\nmail.send --to <addr> [--tone <t>]\n\n## Flags\n\n--to    Recipient (required)\n--tone  Tone. One of: formal, casual\n\n## Examples\n\nmail.send --to a@b.c\nmail.send --to a@b.c --tone loud\nmail.send --tone formal\nmail.read --id 1\nmail.send --help\nmail.send --to 'oops\nSend a friendly note.\n";
    const READ: &str = "---\nname: mail.read\ndescription: Read mail\n---\n# mail.read\n\n## Examples\n\nmail.read --id 1 --anything goes\n";
    const INDEX: &str = "---\ndomain: mail\ndescription: Mail tools\n---\n# Mail\n";

    #[test]
    fn failing_examples_are_warnings_at_their_file_line() {
        let (_dir, snap) = pack(&[
            ("mail/send.md", SEND),
            ("mail/read.md", READ),
            ("mail/SKILL.md", INDEX),
        ]);
        let names: Vec<_> = snap.entries().map(|s| (s.name.clone(), s.status)).collect();
        assert_eq!(
            snap.skills().count(),
            2,
            "{names:?} {:?}",
            snap.diagnostics()
        );
        let found = lint_examples(&snap);
        let got: Vec<(u32, String)> = found
            .iter()
            .map(|d| (d.line.unwrap(), d.message.clone()))
            .collect();
        assert_eq!(got.len(), 5, "{got:#?}");
        assert!(
            found
                .iter()
                .all(|d| d.severity == skill_format::Severity::Warning && d.code == EXAMPLE_CODE)
        );
        assert!(found.iter().all(|d| d.path.ends_with("mail/send.md")));
        assert_eq!(got[0].0, 19);
        assert!(
            got[0]
                .1
                .contains("--tone does not accept `loud` (one of: formal, casual)"),
            "{}",
            got[0].1
        );
        assert!(
            got[0]
                .1
                .contains("Usage: mail.send --to <addr> [--tone <t>]")
        );
        assert_eq!(got[1].0, 20);
        assert!(got[1].1.contains("missing required flag --to"));
        assert_eq!(got[2].0, 21);
        assert!(got[2].1.contains("it invokes `mail.read`"));
        assert_eq!(got[3].0, 23);
        assert!(got[3].1.contains("unterminated single quote"));
        assert_eq!(got[4].0, 24);
        assert!(
            got[4]
                .1
                .starts_with("example does not route to `mail.send`: Unknown skill: Send"),
            "{}",
            got[4].1
        );
    }

    #[test]
    fn slash_examples_resolve_by_command_or_name() {
        let plan = "---\nsummary: Plan things\ncommand: plan\n---\n# Plan\n\n## Examples\n\n- `/plan ship v2`\n- `/skill plan_compiler now`\n- `/plan_compiler x`\n- `/other`\n- `/help`\n";
        let (_dir, snap) = pack(&[("plan_compiler/SKILL.md", plan)]);
        let found = lint_examples(&snap);
        let msgs: Vec<&str> = found.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(msgs.len(), 2, "{msgs:#?}");
        assert!(msgs[0].contains("`/other` is not a command for this skill"));
        assert!(msgs[1].contains("`/help` is not a command for this skill"));
    }
}
