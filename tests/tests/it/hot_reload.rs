#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Hot reload: incremental reloads, last-good retention, change sets, and the watcher
//! (debounce, coalescing, roots that appear, vanish or are replaced). Waits are on events
//! (change sets through a channel), never on sleeps.

use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use skill_format::Code;
use skill_registry::{ChangeSet, Registry, RegistryConfig, Source, Status, WatchOptions};
use skills_tests::{skill_md, write};

/// Long enough for a loaded CI machine; the happy path takes milliseconds.
const WAIT: Duration = Duration::from_secs(30);

fn registry(root: &Path) -> Arc<Registry> {
    Arc::new(Registry::load(RegistryConfig::with_sources(vec![
        Source::new(root, "project"),
    ])))
}

fn changes(r: &Registry) -> (Receiver<ChangeSet>, skill_registry::Subscription) {
    let (tx, rx) = mpsc::channel();
    let sub = r.subscribe(move |c| {
        let _ = tx.send(c.clone());
    });
    (rx, sub)
}

fn next(rx: &Receiver<ChangeSet>) -> ChangeSet {
    rx.recv_timeout(WAIT).expect("no change set arrived")
}

fn broken(name: &str) -> String {
    format!("---\nname: {name}\ndescription: [unclosed\n---\nbody\n")
}

// --- Incremental reloads (no watcher) ---------------------------------------------------

#[test]
fn reload_paths_reparses_only_what_changed_and_reports_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a/SKILL.md", &skill_md("a", "First."));
    write(root, "b/SKILL.md", &skill_md("b", "Bee."));
    let r = registry(root);
    let (rx, _sub) = changes(&r);
    let before = r.snapshot();

    write(root, "a/SKILL.md", &skill_md("a", "Second."));
    let c = r.reload_paths([root.join("a/SKILL.md")]);
    assert_eq!(
        (c.added.len(), c.changed.clone(), c.removed.len()),
        (0, vec!["a".to_owned()], 0)
    );
    assert_eq!((c.previous_generation, c.generation), (1, 2));
    assert_eq!(next(&rx).changed, ["a"]);
    let after = r.snapshot();
    assert_eq!(after.get("a").unwrap().description, "Second.");
    // The untouched skill is the very same allocation: it was not parsed again.
    assert!(Arc::ptr_eq(
        before.get("b").unwrap(),
        after.get("b").unwrap()
    ));

    // A new folder and a removed one.
    write(root, "c/SKILL.md", &skill_md("c", "Sea."));
    std::fs::remove_dir_all(root.join("b")).unwrap();
    let c = r.reload_paths([root.join("c"), root.join("b")]);
    assert_eq!(
        (c.added, c.removed),
        (vec!["c".to_owned()], vec!["b".to_owned()])
    );

    // Nothing changed: no new generation, nobody told.
    let c = r.reload_paths([root.join("c/SKILL.md")]);
    assert!(c.is_empty());
    assert_eq!(c.generation, r.snapshot().generation());
    assert!(rx.try_recv().is_ok()); // the add/remove above
    assert!(rx.try_recv().is_err());
}

#[test]
fn a_broken_edit_keeps_the_last_good_version_served() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a/SKILL.md", &skill_md("a", "Good."));
    let r = registry(root);
    for round in 0..3 {
        write(root, "a/SKILL.md", &broken("a"));
        let c = r.reload_paths([root.join("a/SKILL.md")]);
        assert_eq!(c.changed, ["a"], "round {round}");
        let snap = r.snapshot();
        let a = snap.get("a").expect("last good version still served");
        let good = if round == 0 { "Good." } else { "Fixed." };
        assert_eq!(a.description, good);
        assert_eq!(a.status, Status::Loaded);
        assert!(a.diagnostics.iter().any(|d| d.code == Code::LastGoodServed));
        // The file's own errors are reported.
        assert!(
            snap.diagnostics()
                .iter()
                .any(|d| d.code == Code::InvalidYaml)
        );

        write(root, "a/SKILL.md", &skill_md("a", "Fixed."));
        let c = r.reload_paths([root.join("a/SKILL.md")]);
        assert_eq!(c.changed, ["a"]);
        let snap = r.snapshot();
        assert_eq!(snap.get("a").unwrap().description, "Fixed.");
        assert!(snap.diagnostics().is_empty(), "{:?}", snap.diagnostics());
    }
    // An explicit full reload keeps the same rule.
    write(root, "a/SKILL.md", &broken("a"));
    r.reload();
    assert_eq!(r.snapshot().get("a").unwrap().description, "Fixed.");
    // A file broken from the start has no good version: it is invalid.
    write(root, "z/SKILL.md", &broken("z"));
    r.reload();
    assert_eq!(r.snapshot().entry("z").unwrap().status, Status::Invalid);
    // Deleting the file really removes the skill.
    std::fs::remove_dir_all(root.join("a")).unwrap();
    let c = r.reload_paths([root.join("a")]);
    assert_eq!(c.removed, ["a"]);
}

/// Two threads reload at once (as the watcher and an explicit `reload()` can): subscribers
/// still get every change set in generation order, each following the one before.
#[test]
fn concurrent_reloads_publish_in_generation_order() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a/SKILL.md", &skill_md("a", "A 0."));
    write(root, "b/SKILL.md", &skill_md("b", "B 0."));
    let r = registry(root);
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let _sub = r.subscribe(move |c| {
        // Widen the window in which an unordered publish would overtake this one.
        std::thread::yield_now();
        sink.lock()
            .unwrap()
            .push((c.previous_generation, c.generation));
    });
    const ROUNDS: usize = 60;
    std::thread::scope(|scope| {
        for name in ["a", "b"] {
            let r = &r;
            scope.spawn(move || {
                for i in 1..=ROUNDS {
                    let file = format!("{name}/SKILL.md");
                    write(root, &file, &skill_md(name, &format!("{name} {i}.")));
                    if i % 2 == 0 {
                        r.reload();
                    } else {
                        r.reload_paths([root.join(&file)]);
                    }
                }
            });
        }
    });
    let seen = seen.lock().unwrap();
    assert!(!seen.is_empty());
    let mut last = 1;
    for &(previous, generation) in seen.iter() {
        assert_eq!(
            (previous, generation),
            (last, last + 1),
            "published out of order: {seen:?}"
        );
        last = generation;
    }
    assert_eq!(last, r.snapshot().generation());
    let snap = r.snapshot();
    assert_eq!(snap.get("a").unwrap().description, format!("a {ROUNDS}."));
    assert_eq!(snap.get("b").unwrap().description, format!("b {ROUNDS}."));
}

// --- The watcher -----------------------------------------------------------------------

#[test]
fn an_edit_is_seen_without_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a/SKILL.md", &skill_md("a", "First."));
    let r = registry(root);
    let (rx, _sub) = changes(&r);
    let _w = r.watch(WatchOptions::default()).unwrap();
    write(root, "a/SKILL.md", &skill_md("a", "Second."));
    let c = next(&rx);
    assert_eq!(c.changed, ["a"]);
    assert_eq!(c.snapshot.get("a").unwrap().description, "Second.");
    assert_eq!(r.snapshot().generation(), c.generation);
}

#[test]
fn a_burst_of_a_thousand_files_is_one_reload() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "seed/SKILL.md", &skill_md("seed", "Seed."));
    let r = registry(root);
    let (rx, _sub) = changes(&r);
    let options = WatchOptions {
        debounce: Duration::from_millis(300),
        max_delay: Duration::from_secs(20),
    };
    let _w = r.watch(options).unwrap();
    for i in 0..1000 {
        write(
            root,
            &format!("s{i:04}/SKILL.md"),
            &skill_md(&format!("s{i:04}"), "Burst."),
        );
    }
    let c = next(&rx);
    assert_eq!(c.added.len(), 1000);
    assert_eq!(c.generation, 2);
    // A later edit is a change set of its own, with nothing left over from the burst.
    write(root, "seed/SKILL.md", &skill_md("seed", "Seed again."));
    let c = next(&rx);
    assert_eq!(
        (c.changed.clone(), c.added.len()),
        (vec!["seed".to_owned()], 0)
    );
    assert_eq!(c.generation, 3);
}

#[test]
fn a_root_that_does_not_exist_yet_is_picked_up_when_it_appears() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("later/skills");
    let r = registry(&root);
    assert_eq!(r.snapshot().skills().count(), 0);
    let (rx, _sub) = changes(&r);
    let _w = r.watch(WatchOptions::default()).unwrap();
    std::fs::create_dir_all(dir.path().join("later")).unwrap();
    write(&root, "x/SKILL.md", &skill_md("x", "Late."));
    let mut seen = next(&rx);
    while seen.snapshot.get("x").is_none() {
        seen = next(&rx);
    }
    // And from then on the root is watched recursively.
    write(&root, "x/SKILL.md", &skill_md("x", "Later."));
    let c = next(&rx);
    assert_eq!(c.snapshot.get("x").unwrap().description, "Later.");
}

#[test]
fn a_root_deleted_renamed_or_replaced_is_followed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("skills");
    write(&root, "a/SKILL.md", &skill_md("a", "Original."));
    let r = registry(&root);
    let (rx, _sub) = changes(&r);
    let _w = r.watch(WatchOptions::default()).unwrap();

    // Renamed away: its skills are gone.
    std::fs::rename(&root, dir.path().join("moved")).unwrap();
    let c = next(&rx);
    assert_eq!(c.removed, ["a"]);

    // Replaced by another folder of the same name.
    write(
        &dir.path().join("staging"),
        "b/SKILL.md",
        &skill_md("b", "Replacement."),
    );
    std::fs::rename(dir.path().join("staging"), &root).unwrap();
    let mut c = next(&rx);
    while c.snapshot.get("b").is_none() {
        c = next(&rx);
    }
    assert!(c.snapshot.get("a").is_none());

    // Edits inside the replacement are seen.
    write(&root, "b/SKILL.md", &skill_md("b", "Edited."));
    let mut c = next(&rx);
    while c.snapshot.get("b").unwrap().description != "Edited." {
        c = next(&rx);
    }

    // Deleted outright.
    std::fs::remove_dir_all(&root).unwrap();
    let mut c = next(&rx);
    while c.snapshot.get("b").is_some() {
        c = next(&rx);
    }
}

/// What a snapshot says, in comparable form.
fn summary(s: &skill_registry::Snapshot) -> String {
    let mut out = String::new();
    for e in s.entries().chain(s.domains()).chain(s.shadowed().iter()) {
        out.push_str(&format!(
            "{} {:?} {} {} {}\n",
            e.name,
            e.status,
            e.layer,
            e.path.display(),
            e.description
        ));
    }
    for d in s.diagnostics() {
        out.push_str(&format!("{d}\n"));
    }
    out
}

#[test]
fn the_edit_fast_path_agrees_with_a_full_reload() {
    let dir = tempfile::tempdir().unwrap();
    let low = dir.path().join("low");
    let high = dir.path().join("high");
    write(&low, "a/SKILL.md", &skill_md("a", "Low a."));
    write(&low, "b/SKILL.md", &skill_md("b", "Low b."));
    write(&high, "a/SKILL.md", &skill_md("a", "High a."));
    write(&high, "c/SKILL.md", &skill_md("c", "High c."));
    write(
        &high,
        "mail/SKILL.md",
        "---\ndomain: mail\ndescription: Mail things\n---\n# Mail\n",
    );
    write(
        &high,
        "mail/send.md",
        "---\nname: mail.send\ndescription: Send mail\n---\n# mail.send\n",
    );
    let config = RegistryConfig::with_sources(vec![
        Source::new(&low, "user"),
        Source::new(&high, "project"),
    ]);
    let fast = Registry::load(config.clone());
    let full = Registry::load(config);
    let steps: Vec<(&Path, &str, String)> = vec![
        (&high, "a/SKILL.md", skill_md("a", "High a, edited.")),
        (&high, "a/SKILL.md", broken("a")),
        (&low, "a/SKILL.md", skill_md("a", "Low a, edited.")),
        (&high, "a/SKILL.md", skill_md("a", "High a, fixed.")),
        // A name change inside the file: `c` becomes a second `b` in another layer.
        (&high, "c/SKILL.md", skill_md("b", "High b.")),
        (&low, "b/SKILL.md", broken("b")),
        (
            &high,
            "mail/send.md",
            "---\nname: mail.send\ndescription: Send it now\n---\nbody\n".into(),
        ),
        (
            &high,
            "mail/SKILL.md",
            "---\ndomain: mail\ndescription: Mail, edited\n---\n# Mail\n".into(),
        ),
        (
            &high,
            "mail/send.md",
            "---\nname: mail.send\ndescription: [oops\n---\nbody\n".into(),
        ),
    ];
    for (i, (root, rel, text)) in steps.iter().enumerate() {
        write(root, rel, text);
        fast.reload_paths([root.join(rel)]);
        full.reload();
        assert_eq!(
            summary(&fast.snapshot()),
            summary(&full.snapshot()),
            "step {i}: {rel}"
        );
    }
}

#[test]
fn any_folder_can_be_watched_for_other_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    let (tx, rx) = mpsc::channel();
    let w = skill_registry::watch_folders(vec![notes.clone()], WatchOptions::default(), move |c| {
        tx.send(c).is_ok()
    })
    .unwrap();
    write(&notes, "a.md", "# A\n");
    let c = rx.recv_timeout(WAIT).unwrap();
    assert!(c.paths.contains(&notes.join("a.md")), "{c:?}");
    assert!(!c.rescan);
    w.stop();
}
