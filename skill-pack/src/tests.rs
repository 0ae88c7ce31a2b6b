//! Unit tests of the pack report: every part present, the same for two copies, layers, schedule checks, bad input and request limits.

use super::*;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn pack() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("mypack");
    write(
        &root,
        "notes/SKILL.md",
        "---\nname: notes\ndescription: Take meeting notes and list action items.\n---\n\
         Write notes.\n\n## Examples\n\n- `notes --topic planning`\n- `nosuch.thing`\n",
    );
    write(
        &root,
        "digest/SKILL.md",
        "---\ndomain: digest\ndescription: Daily digests.\n---\nDigest things.\n",
    );
    write(
        &root,
        "digest/daily.md",
        "---\ndescription: Send the daily digest.\nschedule: \"0 9 * * 1-5\"\n---\nSend it.\n",
    );
    write(
        &root,
        REQUESTS_FILE,
        "# comment\n\ntake notes of the meeting\n",
    );
    dir
}

#[test]
fn report_has_every_part_and_no_absolute_path() {
    let dir = pack();
    let root = dir.path().join("mypack");
    let text = report(&[&root]).unwrap();
    for part in [
        "== skills (3) ==",
        "== shadowed (0) ==",
        "== catalog: markdown ==",
        "== catalog: xml ==",
        "== catalog: json ==",
        "== get_skill ==",
        "== get_skill: digest ==",
        "== examples (2) ==",
        "== schedules (1) ==",
        "== selections (1) ==",
        "> take notes of the meeting",
        "mypack/notes/SKILL.md",
    ] {
        assert!(text.contains(part), "missing {part:?} in\n{text}");
    }
    // 2026-01-01 is a Thursday: the first weekday 09:00 fires are Thu and Fri.
    assert!(text.contains("2026-01-01T09:00:00Z\n  2026-01-02T09:00:00Z\n  2026-01-05T09:00:00Z"));
    assert!(text.contains("-> invoke notes (mutating) flags --topic=planning"));
    assert!(text.contains("`nosuch.thing`\n  -> error["), "{text}");
    assert!(text.contains("[not this skill]"));
    assert!(!text.contains(&dir.path().display().to_string()), "{text}");
    if let Ok(c) = std::fs::canonicalize(dir.path()) {
        assert!(!text.contains(&c.display().to_string()));
    }
}

#[test]
fn report_is_the_same_for_two_copies_and_changes_with_an_edit() {
    let a = pack();
    let b = pack();
    let ra = report(&[a.path().join("mypack")]).unwrap();
    let rb = report(&[b.path().join("mypack")]).unwrap();
    assert_eq!(ra, rb);
    write(
        &b.path().join("mypack"),
        "notes/SKILL.md",
        "---\nname: notes\ndescription: Summarise meetings.\n---\nWrite notes.\n",
    );
    assert_ne!(ra, report(&[b.path().join("mypack")]).unwrap());
}

#[test]
fn layers_shadow_and_labels_are_unique() {
    let dir = tempfile::tempdir().unwrap();
    let low = dir.path().join("a/skills");
    let high = dir.path().join("b/skills");
    let skill = "---\nname: hello\ndescription: Say hello.\n---\nHi.\n";
    write(&low, "hello/SKILL.md", skill);
    write(&high, "hello/SKILL.md", skill);
    let text = report(&[&low, &high]).unwrap();
    assert!(text.contains("  1. skills\n  2. skills-2\n"), "{text}");
    assert!(
        text.contains(
            "hello (skills) skills/hello/SKILL.md -- shadowed by skills-2/hello/SKILL.md"
        ),
        "{text}"
    );
}

#[test]
fn instant_and_fires_are_checked() {
    let dir = pack();
    let root = dir.path().join("mypack");
    assert!(matches!(parse_instant("yesterday"), Err(Error::Instant(_))));
    let config = ReportConfig {
        at: parse_instant("2026-01-02T10:00:00+01:00").unwrap(),
        next_fires: 1,
        ..ReportConfig::default()
    };
    let text = report_with(&[&root], &config).unwrap();
    assert!(text.contains("instant: 2026-01-02T09:00:00Z (UTC)"));
    assert!(text.contains("  2026-01-05T09:00:00Z\n"), "{text}");
    let too_many = ReportConfig {
        next_fires: MAX_NEXT_FIRES + 1,
        ..ReportConfig::default()
    };
    assert!(matches!(
        report_with(&[&root], &too_many),
        Err(Error::TooManyFires(_))
    ));
    let edge = ReportConfig {
        next_fires: MAX_NEXT_FIRES,
        ..ReportConfig::default()
    };
    assert!(report_with(&[&root], &edge).is_ok());
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let none: [&Path; 0] = [];
    assert!(matches!(report(&none), Err(Error::NoRoots)));
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        report(&[dir.path().join("missing")]),
        Err(Error::Root { .. })
    ));
    let big = dir.path().join("big");
    std::fs::create_dir(&big).unwrap();
    let line = "a request\n".repeat((MAX_REQUESTS_BYTES / 10) as usize + 1);
    std::fs::write(big.join(REQUESTS_FILE), line).unwrap();
    assert!(matches!(report(&[&big]), Err(Error::Requests { .. })));
}

/// The request list is read only as a plain file of the pack, and never past the cap: a
/// link out of the pack printed `/etc/passwd` into the report, a link to `/dev/zero` ran
/// the machine out of memory, and a FIFO blocked the report for good.
#[cfg(unix)]
#[test]
fn requests_are_read_only_from_a_plain_file_in_the_pack() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    write(
        &root,
        "x/SKILL.md",
        "---\nname: x\ndescription: Do x.\n---\nX.\n",
    );
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "SECRET request\n").unwrap();
    let requests = root.join(REQUESTS_FILE);
    symlink(&secret, &requests).unwrap();
    match report(&[&root]) {
        Err(e @ Error::Requests { .. }) => {
            assert!(e.to_string().contains("symbolic link"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    std::fs::remove_file(&requests).unwrap();
    symlink("/dev/zero", &requests).unwrap();
    assert!(matches!(report(&[&root]), Err(Error::Requests { .. })));
    std::fs::remove_file(&requests).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&requests)
        .status()
        .unwrap();
    assert!(made.success());
    match report(&[&root]) {
        Err(e @ Error::Requests { .. }) => {
            assert!(e.to_string().contains("not a regular file"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    // At the cap exactly, the file is read.
    std::fs::remove_file(&requests).unwrap();
    let line = "a request\n";
    let mut text = line.repeat(MAX_REQUESTS_BYTES as usize / line.len());
    text.push_str(&"#".repeat(MAX_REQUESTS_BYTES as usize - text.len()));
    assert_eq!(text.len() as u64, MAX_REQUESTS_BYTES);
    std::fs::write(&requests, text).unwrap();
    assert!(report(&[&root]).is_ok());
}

#[test]
fn requests_past_the_limit_are_named_as_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    write(
        &root,
        "x/SKILL.md",
        "---\nname: x\ndescription: Do x.\n---\nX.\n",
    );
    let text: String = (0..=MAX_REQUESTS)
        .map(|i| format!("request {i}\n"))
        .collect();
    write(&root, REQUESTS_FILE, &text);
    let out = report(&[&root]).unwrap();
    assert!(out.contains(&format!("== selections ({MAX_REQUESTS}) ==")));
    assert!(out.contains("(1 more requests skipped"), "{out}");
}

#[test]
fn selections_pre_load_the_profiles_proactive_skills() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    write(
        &root,
        "minutes/SKILL.md",
        "---\nname: minutes\ndescription: Turn a meeting into minutes.\nproactive_for_profile_ids: [work]\n---\nWrite minutes.\n",
    );
    write(&root, REQUESTS_FILE, "what is the capital of Peru\n");
    let plain = report(&[&root]).unwrap();
    assert!(
        plain.contains("> what is the capital of Peru\n  (no skill selected)"),
        "{plain}"
    );
    let config = ReportConfig {
        profile: Some("work".into()),
        ..ReportConfig::default()
    };
    let text = report_with(&[&root], &config).unwrap();
    let reason = format!("{} `work`", skill_runtime::search::PROACTIVE_REASON);
    let line = text
        .split("> what is the capital of Peru\n")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .unwrap();
    assert!(
        line.starts_with("  minutes ") && line.ends_with(&reason),
        "{text}"
    );
}

#[test]
fn an_edit_to_a_disabled_skill_changes_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    let skill = |description: &str, brief: &str| {
        format!(
            "---\nname: off\ndescription: {description}\nversion: 1.0.0\ndefault_enabled: false\nbrief_description: {brief}\n---\nBody.\n"
        )
    };
    write(&root, "off/SKILL.md", &skill("First text.", "First brief."));
    let before = report(&[&root]).unwrap();
    assert!(
        before.contains("off: First text.\n  brief: First brief.\n"),
        "{before}"
    );
    write(
        &root,
        "off/SKILL.md",
        &skill("Second text.", "First brief."),
    );
    let after = report(&[&root]).unwrap();
    assert_ne!(before, after);
    write(
        &root,
        "off/SKILL.md",
        &skill("Second text.", "Second brief."),
    );
    assert_ne!(after, report(&[&root]).unwrap());
}
