//! Example linting: a skill's `## Examples` lines must route to that skill.

use skill_format::sections::example_lines;
use skill_format::{Code, Diagnostic, FileKind, Severity};
use skill_registry::{Skill, Snapshot, Status};

use crate::route::{Mode, Router, SlashTarget};
use crate::routes::Route;
use skill_format::sections::{FlagSchema, flag_schema, usage_line};

use crate::validate::prevalidate_with;

/// The diagnostic code example findings carry (`example-does-not-route`); their message
/// starts with [`EXAMPLE_MESSAGE_PREFIX`].
pub const EXAMPLE_CODE: Code = Code::ExampleDoesNotRoute;

/// How every example finding's message starts.
pub const EXAMPLE_MESSAGE_PREFIX: &str = "example does not route to";

/// Check every `## Examples` line of every skill that parsed (warnings, one per failing
/// line, at the line in the file, in path then line order). That is every skill without
/// errors: loaded, ineligible on this machine (so the findings do not depend on the
/// machine) and shadowed by a higher layer; invalid skills have errors of their own.
///
/// * a line starting with `/` must be a slash command that resolves to the skill (by lily
///   `command` or by name, `/skill <name>` included);
/// * any other line must route, as a model command, to the skill (`<name> --help` and
///   `get_skill: <name>` count) and, when the skill has a `## Flags` schema, pass it
///   (unknown flags, missing required flags, values outside `One of:`). A shadowed skill's
///   examples are checked against its own schema.
///
/// Trigger control, profiles and eligibility are not applied, to invocations and help
/// alike: examples document syntax, and who may invoke a skill is a separate question.
pub fn lint_examples(snapshot: &Snapshot) -> Vec<Diagnostic> {
    let router = Router::new(snapshot);
    let parsed = |s: &&std::sync::Arc<Skill>| {
        s.kind == FileKind::Skill
            && s.status != Status::Invalid
            && !s.diagnostics.iter().any(|d| d.severity == Severity::Error)
    };
    let skills: Vec<&Skill> = snapshot
        .entries()
        .chain(snapshot.shadowed())
        .filter(parsed)
        .map(AsRef::as_ref)
        .collect();
    let lint = |part: &[&Skill]| {
        let mut out = Vec::new();
        for skill in part {
            lint_skill(&router, skill, &mut out);
        }
        out
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(skills.len() / PARALLEL_MIN_SKILLS);
    let mut out = if threads <= 1 {
        lint(&skills)
    } else {
        // The findings are sorted below, so how the skills are split does not show.
        let mut parts = skills.chunks(skills.len().div_ceil(threads));
        let first = parts.next().unwrap_or_default();
        std::thread::scope(|scope| {
            let handles: Vec<_> = parts.map(|part| scope.spawn(move || lint(part))).collect();
            let mut out = lint(first);
            for handle in handles {
                match handle.join() {
                    Ok(found) => out.extend(found),
                    // As if it had happened on this thread.
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            out
        })
    };
    out.sort_by(|a, b| a.path.cmp(&b.path).then(a.line.cmp(&b.line)));
    out
}

/// Fewer skills than this per thread are linted on one thread: starting a thread costs
/// more than linting them.
const PARALLEL_MIN_SKILLS: usize = 256;

fn lint_skill(router: &Router<'_>, skill: &Skill, out: &mut Vec<Diagnostic>) {
    // Read once per skill, not once per example: each read scans the whole body, which made
    // a body of n examples cost n times its size (20,000 examples: 4 s).
    let schema = Lazy::default();
    for example in example_lines(&skill.body) {
        let Some(problem) = check(router, skill, &schema, example.text) else {
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

#[cfg(test)]
thread_local! {
    /// Reads of a body's schema, counted so a test can show there is one per skill.
    static SCHEMA_READS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A skill's `## Flags` schema and `## Usage` line, read from its body when first needed.
#[derive(Default)]
struct Lazy(std::cell::OnceCell<(Option<FlagSchema>, Option<String>)>);

impl Lazy {
    fn get(&self, body: &str) -> &(Option<FlagSchema>, Option<String>) {
        self.0.get_or_init(|| {
            #[cfg(test)]
            SCHEMA_READS.with(|n| n.set(n.get() + 1));
            (flag_schema(body), usage_line(body).map(str::to_owned))
        })
    }
}

/// What is wrong with one example, or `None` when it routes to `skill`.
fn check(router: &Router<'_>, skill: &Skill, schema: &Lazy, example: &str) -> Option<String> {
    if let Some(after) = example.strip_prefix('/') {
        let word = after.split_ascii_whitespace().next().unwrap_or("");
        if word == "skill" {
            let name = after.split_ascii_whitespace().nth(1).unwrap_or("");
            return match router.snapshot_entry(name) {
                Some(t) if t.name == skill.name => None,
                Some(t) => Some(format!("`/skill {name}` invokes `{}`", t.name)),
                None => Some(format!("`/skill {name}` names no skill")),
            };
        }
        return match router.slash_target(word) {
            SlashTarget::Skill(t) if t.name == skill.name => None,
            SlashTarget::Skill(t) => Some(format!("`/{word}` invokes `{}`", t.name)),
            SlashTarget::Builtin => Some(format!(
                "`/{word}` is a built-in command, not a command for this skill"
            )),
            SlashTarget::Ambiguous(names) => Some(format!(
                "`/{word}` is the command of several skills ({names}), so it invokes none"
            )),
            // A shadowed skill's own command, which the winner does not declare.
            SlashTarget::Nothing if skill.manifest.command.as_deref() == Some(word) => None,
            SlashTarget::Nothing => Some(format!("`/{word}` is not a command for this skill")),
        };
    }
    match router.model_line(example, Mode::Lint).into_owned() {
        Route::Invoke(i) if i.skill == skill.name => {
            let (schema, usage) = schema.get(&skill.body);
            prevalidate_with(&skill.name, schema.as_ref(), || usage.as_deref(), &i.flags)
                .err()
                .map(|e| e.to_string())
        }
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

    /// The body's schema is read once per skill, however many examples it has: it was read
    /// for each, so n examples cost n times the body (quadratic; 20,000 took 4 s).
    #[test]
    fn a_skill_body_is_read_once_for_all_its_examples() {
        let mut text = String::from(
            "---\nname: mail.send\ndescription: Send mail\n---\n# mail.send\n\n## Usage\n\nmail.send --to <addr>\n\n## Flags\n\n--to    Recipient (required)\n\n## Examples\n\n",
        );
        for i in 0..500 {
            text.push_str(&format!("mail.send --to a@b.c --flag{i} v\n"));
        }
        let (_dir, snap) = pack(&[("mail/send.md", &text), ("mail/SKILL.md", INDEX)]);
        let router = Router::new(&snap);
        let skill = snap.entry("mail.send").unwrap();
        SCHEMA_READS.with(|n| n.set(0));
        let mut out = Vec::new();
        lint_skill(&router, skill, &mut out);
        assert_eq!(out.len(), 500);
        assert!(
            out[0].message.contains("unknown flag --flag0"),
            "{}",
            out[0].message
        );
        assert!(
            out[0].message.contains("Usage: mail.send --to <addr>"),
            "{}",
            out[0].message
        );
        assert_eq!(SCHEMA_READS.with(std::cell::Cell::get), 1);
    }

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

    /// A pack large enough to be linted on several threads (on a machine with more than
    /// one core) gives every finding once, in path then line order.
    #[test]
    fn a_large_pack_gets_every_finding_once_in_order() {
        let n = 3 * PARALLEL_MIN_SKILLS + 7;
        let texts: Vec<(String, String)> = (0..n)
            .map(|i| {
                let bad = if i % 3 == 0 { "- `/nowhere`\n" } else { "" };
                (
                    format!("s{i:04}/SKILL.md"),
                    format!(
                        "---\nname: s{i:04}\ndescription: Skill {i}.\n---\n# S\n\n## Examples\n\n- `/s{i:04}`\n{bad}- `/other{i}`\n"
                    ),
                )
            })
            .collect();
        let files: Vec<(&str, &str)> = texts
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let (_dir, snap) = pack(&files);
        assert_eq!(snap.skills().count(), n, "{:?}", snap.diagnostics().first());
        let found = lint_examples(&snap);
        let where_: Vec<(String, Option<u32>)> = found
            .iter()
            .map(|d| {
                let folder = d.path.parent().and_then(|p| p.file_name());
                (folder.unwrap().to_string_lossy().into_owned(), d.line)
            })
            .collect();
        let mut expected = Vec::new();
        for i in 0..n {
            if i % 3 == 0 {
                expected.push((format!("s{i:04}"), Some(10)));
                expected.push((format!("s{i:04}"), Some(11)));
            } else {
                expected.push((format!("s{i:04}"), Some(10)));
            }
        }
        assert_eq!(where_, expected);
    }

    #[test]
    fn slash_examples_resolve_by_command_or_name() {
        let plan = "---\nsummary: Plan things\ncommand: plan\n---\n# Plan\n\n## Examples\n\n- `/plan ship v2`\n- `/skill plan_compiler now`\n- `/plan_compiler x`\n- `/other`\n- `/help`\n";
        let (_dir, snap) = pack(&[("plan_compiler/SKILL.md", plan)]);
        let found = lint_examples(&snap);
        let msgs: Vec<&str> = found.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(msgs.len(), 2, "{msgs:#?}");
        assert!(msgs[0].contains("`/other` is not a command for this skill"));
        assert!(
            msgs[1].contains("`/help` is a built-in command, not a command for this skill"),
            "{}",
            msgs[1]
        );
    }

    /// Load `layers` (each a list of files) as sources `l0`, `l1`, ... on a machine whose
    /// OS is `plan9`.
    fn layered(layers: &[&[(&str, &str)]]) -> (tempfile::TempDir, std::sync::Arc<Snapshot>) {
        let dir = tempfile::tempdir().unwrap();
        let mut sources = Vec::new();
        for (i, files) in layers.iter().enumerate() {
            let root = dir.path().join(format!("l{i}"));
            for (rel, text) in *files {
                let p = root.join(rel);
                fs::create_dir_all(p.parent().unwrap()).unwrap();
                fs::write(p, text).unwrap();
            }
            sources.push(Source::new(root, format!("l{i}")));
        }
        let mut config = RegistryConfig::with_sources(sources);
        config.environment.os = "plan9".into();
        let snap = Registry::load(config).snapshot();
        (dir, snap)
    }

    #[test]
    fn help_examples_ignore_trigger_control() {
        let commit = "---\nname: commit\ndescription: Commit staged changes\ndisable-model-invocation: true\n---\n# commit\n\n## Examples\n\n- `commit --help`\n- `get_skill: commit`\n- `commit fix typo`\n- `/commit`\n";
        let hidden = "---\nname: conventions\ndescription: House rules\nuser-invocable: false\n---\n# conventions\n\n## Examples\n\n- `conventions --help`\n- `/conventions`\n";
        let (_dir, snap) = layered(&[&[
            ("commit/SKILL.md", commit),
            ("conventions/SKILL.md", hidden),
        ]]);
        assert_eq!(snap.skills().count(), 2, "{:?}", snap.diagnostics());
        let found = lint_examples(&snap);
        assert!(found.is_empty(), "{found:#?}");
    }

    #[test]
    fn ineligible_and_shadowed_skills_are_linted_too() {
        // Ineligible on this (plan9) machine: its examples are still checked.
        let elsewhere = "---\nsummary: Only elsewhere\ncommand: away\neligibility:\n  os: [darwin, linux, win32]\n---\n# Away\n\n## Examples\n\n- `/away now`\n- `/gone`\n- `away_skill --help`\n";
        // Shadowed: checked against its own schema, not the winner's.
        let low = "---\nname: mail\ndescription: Low mail\n---\n# mail\n\n## Usage\n\nmail --to <addr>\n\n## Flags\n\n--to  Recipient (required)\n\n## Examples\n\n- `mail --to a@b.c`\n- `mail --bogus`\n";
        let high = "---\nname: mail\ndescription: High mail\n---\n# mail\n\n## Usage\n\nmail --id <n>\n\n## Flags\n\n--id  Message (required)\n";
        let (dir, snap) = layered(&[
            &[("away_skill/SKILL.md", elsewhere), ("mail/SKILL.md", low)],
            &[("mail/SKILL.md", high)],
        ]);
        assert_eq!(
            snap.entry("away_skill").map(|s| s.status),
            Some(Status::Ineligible)
        );
        assert_eq!(snap.shadowed().len(), 1);
        let found = lint_examples(&snap);
        let got: Vec<(String, &str)> = found
            .iter()
            .map(|d| {
                (
                    d.path
                        .strip_prefix(dir.path())
                        .unwrap()
                        .display()
                        .to_string(),
                    d.message.as_str(),
                )
            })
            .collect();
        assert_eq!(got.len(), 2, "{got:#?}");
        assert_eq!(got[0].0, "l0/away_skill/SKILL.md");
        assert!(
            got[0].1.contains("`/gone` is not a command"),
            "{}",
            got[0].1
        );
        assert_eq!(got[1].0, "l0/mail/SKILL.md");
        assert!(
            got[1].1.contains("unknown flag --bogus")
                && got[1].1.contains("missing required flag --to")
                && got[1].1.contains("Usage: mail --to <addr>"),
            "{}",
            got[1].1
        );
    }

    #[test]
    fn invalid_skills_are_not_linted() {
        // lily: `tool_dispatch` without `command_tool` is malformed.
        let broken = "---\nsummary: Broken\ninvocation_mode: tool_dispatch\n---\n# x\n\n## Examples\n\n- `nothing --here`\n";
        let (_dir, snap) = layered(&[&[("bad/SKILL.md", broken)]]);
        assert_eq!(
            snap.entry("bad").map(|s| s.status),
            Some(Status::Invalid),
            "{:?}",
            snap.diagnostics()
        );
        assert!(lint_examples(&snap).is_empty());
    }
}
