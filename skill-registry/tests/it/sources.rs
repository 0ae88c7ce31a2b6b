//! Source options through the public registry API: hidden folders loaded when a source
//! asks (never `.git` or `node_modules`, and no link around either rule), and namespaces
//! (two sources' skills of one name both served as `namespace:name`; without a namespace,
//! layer precedence as before; no other source can take a namespaced name).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;
use std::path::Path;

use skill_format::{Code, Severity};
use skill_registry::{
    Disclosure, Namespace, Registry, RegistryConfig, Source, Status, load_snapshot,
};

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn skill(name: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill.\n---\n{body}\n")
}

fn source(root: &Path, layer: &str, namespace: Option<&str>) -> Source {
    let mut s = Source::new(root, layer);
    s.namespace = namespace.map(|n| Namespace::new(n).unwrap());
    s
}

fn names(config: &RegistryConfig) -> Vec<String> {
    load_snapshot(config, 1)
        .skills()
        .map(|s| s.name.clone())
        .collect()
}

/// A pack that keeps its skills under `skills/.curated` and `.system`: without the option
/// only the visible one loads; with it (on the source, or for every source through the
/// discovery options) the hidden ones load too. `.git` and `node_modules`, at the top or
/// deeper, stay out either way.
#[test]
fn hidden_folders_load_only_when_the_source_asks() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "visible/SKILL.md", &skill("visible", "V."));
    write(root, ".curated/pdf/SKILL.md", &skill("pdf", "P."));
    write(
        root,
        ".system/deep/.inner/sys/SKILL.md",
        &skill("sys", "S."),
    );
    write(root, ".git/hooks/SKILL.md", &skill("git-hook", "G."));
    write(root, "node_modules/pkg/SKILL.md", &skill("npm", "N."));
    write(root, ".curated/.git/x/SKILL.md", &skill("deep-git", "D."));
    write(
        root,
        "cat/node_modules/y/SKILL.md",
        &skill("deep-npm", "D."),
    );

    let plain = RegistryConfig::with_sources(vec![Source::new(root, "project")]);
    assert_eq!(names(&plain), ["visible"]);

    let mut hidden = plain.clone();
    hidden.sources[0].include_hidden = true;
    assert_eq!(names(&hidden), ["pdf", "sys", "visible"]);

    let mut everywhere = plain.clone();
    everywhere.discover.include_hidden = true;
    assert_eq!(names(&everywhere), ["pdf", "sys", "visible"]);

    // The option is per source: another source of the same configuration keeps skipping.
    let other = tempfile::tempdir().unwrap();
    write(other.path(), ".hidden/o/SKILL.md", &skill("o", "O."));
    let mut mixed = hidden.clone();
    mixed.sources.push(Source::new(other.path(), "user"));
    assert_eq!(names(&mixed), ["pdf", "sys", "visible"]);
}

/// A link is no way around either rule: a visible link into a hidden folder is not
/// followed unless hidden folders are included, and a link into `.git` or `node_modules`
/// (to the folder or to the skill file) never is; each is reported.
#[cfg(unix)]
#[test]
fn links_into_skipped_folders_are_not_followed() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".curated/pdf/SKILL.md", &skill("pdf", "P."));
    write(root, ".git/x/SKILL.md", &skill("from-git", "G."));
    write(root, "node_modules/n/SKILL.md", &skill("from-npm", "N."));
    symlink(root.join(".curated/pdf"), root.join("pdf-link")).unwrap();
    symlink(root.join(".git/x"), root.join("git-link")).unwrap();
    symlink(root.join("node_modules"), root.join("npm-link")).unwrap();
    fs::create_dir_all(root.join("file-link")).unwrap();
    symlink(
        root.join(".git/x/SKILL.md"),
        root.join("file-link/SKILL.md"),
    )
    .unwrap();

    let plain = RegistryConfig::with_sources(vec![Source::new(root, "project")]);
    let snap = load_snapshot(&plain, 1);
    assert_eq!(snap.skills().count(), 0, "{:?}", snap.diagnostics());
    let refused = |snap: &skill_registry::Snapshot, link: &str| {
        snap.diagnostics()
            .iter()
            .any(|d| d.code == Code::SymlinkEscape && d.path == root.join(link))
    };
    for link in ["pdf-link", "git-link", "npm-link", "file-link/SKILL.md"] {
        assert!(refused(&snap, link), "{link}: {:?}", snap.diagnostics());
    }

    let mut hidden = plain.clone();
    hidden.sources[0].include_hidden = true;
    let snap = load_snapshot(&hidden, 1);
    // `pdf` loads once (from its own folder; the link to it is the same file).
    let loaded: Vec<&str> = snap.skills().map(|s| s.name.as_str()).collect();
    assert_eq!(loaded, ["pdf"]);
    assert_eq!(
        snap.get("pdf").unwrap().path,
        root.join(".curated/pdf/SKILL.md")
    );
    for link in ["git-link", "npm-link", "file-link/SKILL.md"] {
        assert!(refused(&snap, link), "{link}: {:?}", snap.diagnostics());
    }
    assert!(!refused(&snap, "pdf-link"));
}

/// Two packs with a skill of one name: without namespaces the higher layer wins and the
/// other is shadowed (as before); with a namespace on each, both load as `ns:name`, and
/// each is gettable by that name, with no shadowing.
#[test]
fn namespaced_sources_serve_both_skills_of_one_name() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    write(a.path(), "pdf/SKILL.md", &skill("pdf", "Pack A's steps."));
    write(
        b.path(),
        "pdf/SKILL.md",
        &skill("pdf", "Pack B's steps.\n\n## Usage\n\nB use."),
    );

    let plain = RegistryConfig::with_sources(vec![
        source(a.path(), "user", None),
        source(b.path(), "project", None),
    ]);
    let snap = load_snapshot(&plain, 1);
    assert_eq!(names(&plain), ["pdf"]);
    assert_eq!(snap.get("pdf").unwrap().layer, "project");
    assert_eq!(snap.shadowed().len(), 1);
    assert_eq!(snap.shadowed()[0].layer, "user");

    let spaced = RegistryConfig::with_sources(vec![
        source(a.path(), "user", Some("a")),
        source(b.path(), "project", Some("b")),
    ]);
    assert_eq!(names(&spaced), ["a:pdf", "b:pdf"]);
    let registry = Registry::load(spaced);
    let snap = registry.snapshot();
    assert!(snap.shadowed().is_empty(), "{:?}", snap.shadowed());
    assert!(snap.get("pdf").is_none());
    let view = Disclosure::new(&snap);
    assert_eq!(view.get_skill(Some("a:pdf")).unwrap(), "Pack A's steps.\n");
    assert!(
        view.get_skill(Some("b:pdf"))
            .unwrap()
            .starts_with("Pack B's")
    );
    assert_eq!(
        view.get_skill(Some("b:pdf#usage")).unwrap().trim(),
        "## Usage\n\nB use."
    );
    assert!(view.load_skill("a:pdf").unwrap().starts_with("# a:pdf\n"));
    assert!(snap.resolve("b:pdf").is_some());

    // One namespaced source beside one without: both load, the plain one as written.
    let half = RegistryConfig::with_sources(vec![
        source(a.path(), "user", None),
        source(b.path(), "project", Some("b")),
    ]);
    assert_eq!(names(&half), ["b:pdf", "pdf"]);

    // Two sources sharing a namespace: layer precedence between them, as without one.
    let shared = RegistryConfig::with_sources(vec![
        source(a.path(), "user", Some("team")),
        source(b.path(), "project", Some("team")),
    ]);
    let snap = load_snapshot(&shared, 1);
    assert_eq!(names(&shared), ["team:pdf"]);
    assert_eq!(snap.get("team:pdf").unwrap().layer, "project");
    assert_eq!(snap.shadowed()[0].name, "team:pdf");
    assert_eq!(snap.shadowed()[0].layer, "user");
}

/// Actions domains keep working in a namespace: the index and its actions are all
/// `ns:`-named, and `get_skill` finds the domain, the action and `.all`.
#[test]
fn namespaced_domains_and_actions() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "email/SKILL.md",
        "---\ndomain: email\ndescription: Mail.\n---\nIndex.\n",
    );
    write(
        root,
        "email/send.md",
        "---\ndescription: Send a mail.\n---\nSend.\n",
    );
    let config = RegistryConfig::with_sources(vec![source(root, "project", Some("ops"))]);
    let snap = load_snapshot(&config, 1);
    assert_eq!(names(&config), ["ops:email.send"]);
    let send = snap.get("ops:email.send").unwrap();
    assert_eq!(send.domain.as_deref(), Some("ops:email"));
    assert_eq!(snap.domain("ops:email").unwrap().status, Status::Loaded);
    let view = Disclosure::new(&snap);
    assert_eq!(view.get_skill(Some("ops:email")).unwrap(), "Index.\n");
    assert_eq!(view.get_skill(Some("ops:email.send")).unwrap(), "Send.\n");
    assert!(
        view.get_skill(Some("ops:email.all"))
            .unwrap()
            .contains("Send.")
    );
    assert!(view.get_skill(None).unwrap().contains("ops:email"));
}

/// The way around a namespace: a skill of another source that names itself `ns:name`.
/// Its name is an error (the separator is reserved), and it cannot take the namespaced
/// skill's place, even from a higher layer: the namespace's own skill is served.
#[test]
fn no_other_source_can_take_a_namespaced_name() {
    let owner = tempfile::tempdir().unwrap();
    let intruder = tempfile::tempdir().unwrap();
    write(owner.path(), "pdf/SKILL.md", &skill("pdf", "The owner's."));
    // Pegasus, lenient: the name rule is a warning there, so only the registry refuses it.
    write(
        intruder.path(),
        "pdf/SKILL.md",
        "---\nname: \"curated:pdf\"\ndescription: An impostor.\n---\nIntruder.\n",
    );
    write(
        intruder.path(),
        "other/SKILL.md",
        "---\nname: \"x:other\"\ndescription: Colon.\n---\nColon.\n",
    );
    let mut lower = source(owner.path(), "user", Some("curated"));
    lower.trust = skill_registry::Trust::Medium;
    let mut higher = Source::new(intruder.path(), "project");
    higher.dialect = Some(skill_format::Dialect::Pegasus);
    let config = RegistryConfig::with_sources(vec![lower, higher]);
    let snap = load_snapshot(&config, 1);
    let served = snap.get("curated:pdf").unwrap();
    assert_eq!(served.body, "The owner's.\n");
    assert_eq!(served.layer, "user");
    let shadowed = &snap.shadowed()[0];
    assert_eq!(shadowed.layer, "project");
    assert!(
        shadowed
            .diagnostics
            .iter()
            .any(|d| d.code == Code::InvalidName && d.severity == Severity::Error),
        "{:?}",
        shadowed.diagnostics
    );
    // A separator in a name without any namespace around is refused too.
    assert_eq!(snap.entry("x:other").unwrap().status, Status::Invalid);
    assert!(snap.get("x:other").is_none());
}
