//! The skills extension (SEP-2640) as rmcp's client sees it.

use std::sync::Arc;

use rmcp::model::{
    DIRECTORY_MIME_TYPE, ErrorCode, GetSkillRequestParams, PaginatedRequestParams,
    ReadResourceDirectoryRequestParams, ReadResourceRequestParams, SkillResources,
};
use rmcp::service::ServiceError;
use skill_mcp::{MAX_FILES_PER_SKILL, McpConfig, SKILLS_PAGE_SIZE, SkillsServer};
use skill_runtime::registry::{RegistryConfig, Source};
use skill_runtime::{Engine, EngineConfig};

use crate::common::{Fixture, connect, read_everything};

fn code(e: ServiceError) -> ErrorCode {
    match e {
        ServiceError::McpError(e) => e.code,
        other => panic!("expected an MCP error, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn capability_list_get_and_every_file_of_every_pack_verified() {
    let fx = Fixture::new();
    let (client, _changes) = connect(fx.server()).await;
    let info = client.peer_info().unwrap();
    assert!(info.capabilities.supports_skills());
    assert!(info.capabilities.supports_directory_read());
    assert!(info.capabilities.resources.is_some());

    let (skills, files) = read_everything(&client).await;
    let listed = client.list_all_skills().await.unwrap();
    let uris: Vec<&str> = listed.iter().map(|s| s.uri.as_str()).collect();
    // Folder skills with Agent Skills names are served; lily's `plan_compiler` (an
    // underscore) and actions files (`email.send`) are not.
    for expected in [
        "skill://pdf-forms/SKILL.md",
        "skill://data/csv-cleanup/SKILL.md",
        "skill://code-review/SKILL.md",
        "skill://commit/SKILL.md",
        "skill://weather-report/SKILL.md",
    ] {
        assert!(uris.contains(&expected), "{expected} in {uris:?}");
    }
    assert!(
        !uris
            .iter()
            .any(|u| u.contains("plan_compiler") || u.contains("email"))
    );
    let mut sorted = uris.clone();
    sorted.sort();
    assert_eq!(uris, sorted, "the listing is in URI order");
    assert_eq!(skills, listed.len());
    // pdf-forms: SKILL.md and its three supporting files, each listed once.
    let pdf = listed.iter().find(|s| s.name() == "pdf-forms").unwrap();
    let SkillResources::Files(pdf_files) = &pdf.resources else {
        panic!("dynamic")
    };
    let mut names: Vec<&str> = pdf_files.iter().map(|f| f.uri.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "skill://pdf-forms/SKILL.md",
            "skill://pdf-forms/assets/template.txt",
            "skill://pdf-forms/references/FORMS.md",
            "skill://pdf-forms/scripts/fill.py",
        ]
    );
    assert!(files >= skills + 3, "{files} files for {skills} skills");

    // skills/get gives the listed entry; an unknown skill is -32602.
    let got = client
        .get_skill(GetSkillRequestParams::new(pdf.uri.clone()))
        .await
        .unwrap();
    assert_eq!(&got.skill, pdf);
    let unknown = client
        .get_skill(GetSkillRequestParams::new("skill://nope/SKILL.md"))
        .await
        .unwrap_err();
    assert_eq!(code(unknown), ErrorCode::INVALID_PARAMS);
    // An unknown file is resource-not-found (-32002 on the 2025-11-25 this duplex
    // negotiates; see errors.rs for every version).
    let unread = client
        .read_resource(ReadResourceRequestParams::new("skill://pdf-forms/nope.md"))
        .await
        .unwrap_err();
    assert_eq!(code(unread), ErrorCode::RESOURCE_NOT_FOUND);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn frontmatter_is_the_yaml_mapping_as_written() {
    let fx = Fixture::new();
    let (client, _changes) = connect(fx.server()).await;
    for skill in client.list_all_skills().await.unwrap() {
        let path = skill
            .uri
            .strip_prefix("skill://")
            .and_then(|p| p.strip_suffix("/SKILL.md"))
            .unwrap()
            .to_owned();
        let read = client
            .read_resource(ReadResourceRequestParams::new(skill.uri.clone()))
            .await
            .unwrap();
        let text = String::from_utf8(crate::common::bytes_of(&read.contents[0])).unwrap();
        let yaml = text
            .split("\n---")
            .next()
            .unwrap()
            .trim_start_matches("---\n");
        let expected: serde_json::Value = serde_yaml::from_str(yaml).unwrap();
        let actual = serde_json::to_value(&skill.frontmatter).unwrap();
        assert_eq!(actual, expected, "{path}");
    }
    let listed = client.list_all_skills().await.unwrap();
    let csv = listed.iter().find(|s| s.name() == "csv-cleanup").unwrap();
    assert_eq!(
        csv.frontmatter.extra.get("metadata"),
        Some(&serde_json::json!({"author": "skills-engine examples", "version": "1.3"}))
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn directories_list_direct_children_and_refuse_files() {
    let fx = Fixture::new();
    let (client, _changes) = connect(fx.server()).await;
    let root = client
        .read_resource_directory(ReadResourceDirectoryRequestParams::new("skill://pdf-forms"))
        .await
        .unwrap();
    let children: Vec<(&str, Option<&str>)> = root
        .resources
        .iter()
        .map(|r| (r.uri.as_str(), r.mime_type.as_deref()))
        .collect();
    assert_eq!(
        children,
        [
            ("skill://pdf-forms/SKILL.md", Some("text/markdown")),
            ("skill://pdf-forms/assets", Some(DIRECTORY_MIME_TYPE)),
            ("skill://pdf-forms/references", Some(DIRECTORY_MIME_TYPE)),
            ("skill://pdf-forms/scripts", Some(DIRECTORY_MIME_TYPE)),
        ]
    );
    // The cache hints of every other listing (it said `ttlMs: 0`, "do not cache").
    assert_eq!(root.ttl_ms, Some(60_000));
    assert_eq!(root.cache_scope, Some(rmcp::model::CacheScope::Private));
    let prefix = client
        .read_resource_directory(ReadResourceDirectoryRequestParams::new("skill://data"))
        .await
        .unwrap();
    assert_eq!(prefix.resources[0].uri, "skill://data/csv-cleanup");
    for not_a_dir in ["skill://pdf-forms/SKILL.md", "skill://nope"] {
        let e = client
            .read_resource_directory(ReadResourceDirectoryRequestParams::new(not_a_dir))
            .await
            .unwrap_err();
        assert_eq!(code(e), ErrorCode::INVALID_PARAMS, "{not_a_dir}");
    }
    client.cancel().await.unwrap();
}

fn write_skill(root: &std::path::Path, name: &str, extra_files: usize) {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: Generated skill {name} for the tests.\n---\n\nBody.\n"
        ),
    )
    .unwrap();
    for i in 0..extra_files {
        std::fs::write(dir.join(format!("f{i:04}.txt")), "x").unwrap();
    }
}

fn engine_over(root: &std::path::Path) -> Arc<Engine> {
    let mut config =
        EngineConfig::new(RegistryConfig::with_sources(vec![Source::new(root, "gen")]));
    config.watch = None;
    config.schedule = None;
    Engine::start(config).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn pages_hold_whole_entries_and_the_file_limit_is_kept_at_its_edge() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..SKILLS_PAGE_SIZE {
        write_skill(dir.path(), &format!("s{i:03}"), 0);
    }
    // At the limit (SKILL.md + 511 files) served; one over, left out.
    write_skill(dir.path(), "at-limit", MAX_FILES_PER_SKILL - 1);
    write_skill(dir.path(), "over-limit", MAX_FILES_PER_SKILL);
    let server = SkillsServer::new(engine_over(dir.path()), McpConfig::default());
    let skipped = server.skipped();
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].0, "over-limit");
    let (client, _changes) = connect(server).await;
    let first = client.list_skills(None).await.unwrap();
    assert_eq!(first.skills.len(), SKILLS_PAGE_SIZE);
    let cursor = first.next_cursor.clone().unwrap();
    let mut params = PaginatedRequestParams::default();
    params.cursor = Some(cursor);
    let second = client.list_skills(Some(params)).await.unwrap();
    assert_eq!(second.skills.len(), 1);
    assert_eq!(second.next_cursor, None);
    let at_limit = first
        .skills
        .iter()
        .chain(&second.skills)
        .find(|s| s.name() == "at-limit")
        .unwrap();
    let SkillResources::Files(files) = &at_limit.resources else {
        panic!("dynamic")
    };
    assert_eq!(files.len(), MAX_FILES_PER_SKILL);
    let mut bad = PaginatedRequestParams::default();
    bad.cursor = Some("not-a-cursor".into());
    let e = client.list_skills(Some(bad)).await.unwrap_err();
    assert_eq!(code(e), ErrorCode::INVALID_PARAMS);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reload_is_announced_and_the_new_state_is_served() {
    let fx = Fixture::new();
    let (client, mut changes) = connect(fx.server()).await;
    let before = client.list_all_skills().await.unwrap();
    assert!(!before.iter().any(|s| s.name() == "fresh-skill"));
    write_skill(&fx.path("agentskills"), "fresh-skill", 1);
    let engine = fx.engine.clone();
    let change = tokio::task::spawn_blocking(move || engine.reload())
        .await
        .unwrap();
    assert_eq!(change.added, vec!["fresh-skill".to_owned()]);
    let first = changes.recv().await.unwrap();
    assert!(first == "resources" || first == "prompts");
    let after = client.list_all_skills().await.unwrap();
    let fresh = after.iter().find(|s| s.name() == "fresh-skill").unwrap();
    assert_eq!(fresh.uri, "skill://fresh-skill/SKILL.md");
    let (_, files) = read_everything(&client).await;
    assert!(files > 0);
    client.cancel().await.unwrap();
}

fn find_file(dir: &std::path::Path, tail: &str) -> Option<std::path::PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = find_file(&path, tail) {
                return Some(found);
            }
        } else if path.ends_with(tail) {
            return Some(path);
        }
    }
    None
}

/// A file changed on disk after the listing, before any read gave its listed bytes, is
/// served as it is now with its own digest in `_meta`; a file once read as listed is
/// served as listed for the rest of the generation (kept in memory, as rmcp's catalog
/// serves), even if it changes on disk before the reload.
#[tokio::test(flavor = "multi_thread")]
async fn a_read_of_a_file_changed_since_the_listing_carries_the_served_bytes_digest() {
    let fx = Fixture::new();
    let server = fx.server();
    let (client, _changes) = connect(server.clone()).await;
    let listed = client.list_all_skills().await.unwrap();
    let pdf = listed.iter().find(|s| s.name() == "pdf-forms").unwrap();
    let SkillResources::Files(files) = &pdf.resources else {
        panic!("dynamic")
    };
    let digest_of = |uri: &str| files.iter().find(|f| f.uri == uri).unwrap().digest.clone();
    // Unchanged: the bytes are the listed ones, and no _meta is added.
    let kept_uri = "skill://pdf-forms/SKILL.md";
    let read = client
        .read_resource(ReadResourceRequestParams::new(kept_uri))
        .await
        .unwrap();
    let unchanged = serde_json::to_value(&read.contents[0]).unwrap();
    assert!(unchanged.get("_meta").is_none(), "{unchanged}");
    let listed_bytes = crate::common::bytes_of(&read.contents[0]);
    // Changed on disk with no reload, never read before: the bytes served come with their
    // own digest.
    let uri = "skill://pdf-forms/assets/template.txt";
    let listed_digest = digest_of(uri);
    let on_disk = find_file(fx.dir.path(), "pdf-forms/assets/template.txt").unwrap();
    let fresh = b"a new template, not the one listed\n";
    std::fs::write(&on_disk, fresh).unwrap();
    let kept_on_disk = find_file(fx.dir.path(), "pdf-forms/SKILL.md").unwrap();
    let mut rewritten = listed_bytes.clone();
    rewritten.extend_from_slice(b"\nA line added after the read.\n");
    std::fs::write(&kept_on_disk, &rewritten).unwrap();
    // A second client of the same server, so that no client-side cache of the first read
    // answers.
    client.cancel().await.unwrap();
    let (client, _changes) = connect(server).await;
    let read = client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .unwrap();
    assert_eq!(crate::common::bytes_of(&read.contents[0]), fresh);
    let changed = serde_json::to_value(&read.contents[0]).unwrap();
    let expected = format!(
        "sha256:{}",
        skill_runtime::registry::Sha256::of(fresh).to_hex()
    );
    assert_eq!(changed["_meta"]["sha256"], serde_json::json!(expected));
    assert_eq!(changed["_meta"]["size"], serde_json::json!(fresh.len()));
    assert_ne!(expected, listed_digest);
    // The file read as listed before its change: still the listed bytes, no _meta.
    let read = client
        .read_resource(ReadResourceRequestParams::new(kept_uri))
        .await
        .unwrap();
    assert_eq!(crate::common::bytes_of(&read.contents[0]), listed_bytes);
    let kept = serde_json::to_value(&read.contents[0]).unwrap();
    assert!(kept.get("_meta").is_none(), "{kept}");
    client.cancel().await.unwrap();
}

/// A client that sends `notifications/initialized` more than once gets each change
/// announced once: every notification started a listener of its own, so a change went out
/// once per notification (500 times after 500), and the listeners outlived the session.
#[tokio::test(flavor = "multi_thread")]
async fn a_repeated_initialized_notification_does_not_repeat_the_announcements() {
    let fx = Fixture::new();
    let (client, mut changes) = connect(fx.server()).await;
    for _ in 0..3 {
        client.notify_initialized().await.unwrap();
    }
    // A round trip after the notifications: the server has read them.
    client.list_all_skills().await.unwrap();
    write_skill(&fx.path("agentskills"), "fresh-skill", 1);
    let engine = fx.engine.clone();
    tokio::task::spawn_blocking(move || engine.reload())
        .await
        .unwrap();
    let mut got = vec![changes.recv().await.unwrap(), changes.recv().await.unwrap()];
    got.sort_unstable();
    assert_eq!(got, ["prompts", "resources"]);
    // Nothing more comes: there is no event to wait for, so a bounded wait (duplicates are
    // sent by the same loop, right after these).
    let more = tokio::time::timeout(std::time::Duration::from_millis(300), changes.recv()).await;
    assert!(more.is_err(), "announced again: {more:?}");
    client.cancel().await.unwrap();
}

/// Two sources with a `pdf` each, given namespaces `a` and `b`: both are listed, at
/// `skill://a/pdf/SKILL.md` and `skill://b/pdf/SKILL.md` (the namespace as the first
/// segment, the frontmatter's name as the last, as SEP-2640 asks), each entry's
/// frontmatter as written, and each file readable. A skill of a source without a
/// namespace whose folder path gives the same URI (`a/pdf`) takes neither's place: both
/// are left out of the resources, with the reason.
#[tokio::test(flavor = "multi_thread")]
async fn namespaced_skills_are_served_under_their_namespace() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    write_skill(a.path(), "pdf", 0);
    write_skill(b.path(), "pdf", 1);
    let source = |root: &std::path::Path, layer: &str, ns: &str| {
        let mut s = Source::new(root, layer);
        s.namespace = Some(skill_runtime::registry::Namespace::new(ns).unwrap());
        s
    };
    let start = |sources: Vec<Source>| {
        let mut config = EngineConfig::new(RegistryConfig::with_sources(sources));
        config.watch = None;
        config.schedule = None;
        Engine::start(config).unwrap()
    };
    let engine = start(vec![
        source(a.path(), "user", "a"),
        source(b.path(), "project", "b"),
    ]);
    let server = SkillsServer::new(engine, McpConfig::default());
    assert!(server.skipped().is_empty(), "{:?}", server.skipped());
    let (client, _changes) = connect(server).await;
    let listed = client.list_all_skills().await.unwrap();
    let uris: Vec<&str> = listed.iter().map(|s| s.uri.as_str()).collect();
    assert_eq!(uris, ["skill://a/pdf/SKILL.md", "skill://b/pdf/SKILL.md"]);
    for skill in &listed {
        assert_eq!(skill.name(), "pdf");
    }
    let (skills, files) = read_everything(&client).await;
    assert_eq!((skills, files), (2, 3));
    let read = client
        .read_resource(ReadResourceRequestParams::new("skill://b/pdf/f0000.txt"))
        .await
        .unwrap();
    assert_eq!(read.contents.len(), 1);
    client.cancel().await.unwrap();

    // A plain source with a skill at `a/pdf/SKILL.md` would have the same URI.
    let plain = tempfile::tempdir().unwrap();
    write_skill(&plain.path().join("a"), "pdf", 0);
    let engine = start(vec![
        Source::new(plain.path(), "project"),
        source(a.path(), "user", "a"),
    ]);
    let server = SkillsServer::new(engine, McpConfig::default());
    let mut skipped = server.skipped();
    skipped.sort();
    let names: Vec<&str> = skipped.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["a:pdf", "pdf"]);
    for (_, reason) in &skipped {
        assert!(
            reason.contains("same URI skill://a/pdf/SKILL.md"),
            "{reason}"
        );
    }
}

/// With `require_lock` (and no watcher), `resources/read` of a file changed after the load
/// is refused with the engine's `lock_mismatch` code in the error's data (it was served).
#[tokio::test(flavor = "multi_thread")]
async fn with_require_lock_a_changed_file_is_refused_not_served() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("skills");
    write_skill(&root, "locked", 1);
    let sources = RegistryConfig::with_sources(vec![Source::new(&root, "gen")]);
    let lock = dir.path().join("lock.json");
    skill_registry::Lock::from_snapshot(
        &skill_registry::Registry::load(sources.clone()).snapshot(),
    )
    .write(&lock)
    .unwrap();
    let mut registry = sources;
    registry.trust.require_lock = Some(lock);
    let mut config = EngineConfig::new(registry);
    config.watch = None;
    config.schedule = None;
    let server = SkillsServer::new(Engine::start(config).unwrap(), McpConfig::default());
    let (client, _changes) = connect(server.clone()).await;
    let uri = "skill://locked/f0000.txt";
    assert!(
        client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .is_ok()
    );
    std::fs::write(root.join("locked/f0000.txt"), "edited after the lock").unwrap();
    // A second client, so that no client-side cache of the first read answers.
    client.cancel().await.unwrap();
    let (client, _changes) = connect(server).await;
    let e = client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .unwrap_err();
    let ServiceError::McpError(e) = e else {
        panic!("expected an MCP error, got {e:?}");
    };
    let data = e.data.unwrap_or_default();
    assert_eq!(data["code"], "lock_mismatch", "{}", e.message);
    assert!(!e.message.contains("edited after"), "{}", e.message);
    client.cancel().await.unwrap();
}

/// What a host's `skills/list` check refuses (the TypeScript SDK's `SkillsClient.list()`
/// throws for the whole listing on one such entry) is left out with its reason; each limit
/// is served at its edge and left out one past it.
#[tokio::test(flavor = "multi_thread")]
async fn entries_a_host_would_refuse_are_left_out_with_the_reason() {
    use skill_runtime::format::{MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS};
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, fields: &str| {
        let folder = dir.path().join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            format!("---\nname: {name}\n{fields}\n---\n\nBody.\n"),
        )
        .unwrap();
    };
    // Characters, not bytes: `é` is two bytes.
    let description = |n: usize| format!("description: {}", "é".repeat(n));
    write("desc-at-limit", &description(MAX_DESCRIPTION_CHARS));
    write("desc-over", &description(MAX_DESCRIPTION_CHARS + 1));
    let compat = |n: usize| format!("description: d\ncompatibility: {}", "c".repeat(n));
    write("compat-at-limit", &compat(MAX_COMPATIBILITY_CHARS));
    write("compat-over", &compat(MAX_COMPATIBILITY_CHARS + 1));
    write("compat-number", "description: d\ncompatibility: 3");
    write(
        "meta-strings",
        "description: d\nmetadata:\n  version: \"1.0\"",
    );
    write("meta-number", "description: d\nmetadata:\n  version: 1.0");
    write(
        "meta-nested",
        "description: d\nmetadata:\n  owner:\n    team: x",
    );
    let server = SkillsServer::new(engine_over(dir.path()), McpConfig::default());
    let mut skipped = server.skipped();
    skipped.sort();
    let names: Vec<&str> = skipped.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "compat-number",
            "compat-over",
            "desc-over",
            "meta-nested",
            "meta-number"
        ]
    );
    assert!(skipped[2].1.contains("1025 characters"), "{}", skipped[2].1);
    assert!(skipped[3].1.contains("metadata"), "{}", skipped[3].1);
    let (client, _changes) = connect(server).await;
    let mut listed: Vec<String> = client
        .list_all_skills()
        .await
        .unwrap()
        .iter()
        .map(|s| s.name().to_owned())
        .collect();
    listed.sort();
    assert_eq!(listed, ["compat-at-limit", "desc-at-limit", "meta-strings"]);
    client.cancel().await.unwrap();
}
