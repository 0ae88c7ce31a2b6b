//! Section-level disclosure and the well-known skills index, end to end: outlines and
//! sections over HTTP (404 `unknown_section` naming the valid slugs), every section of
//! every bundled skill (and of the shared corpus when it is there), and the discovery index
//! read back over HTTP with every digest checked against the bytes served.

use std::path::PathBuf;

use skill_http::HttpConfig;
use skill_registry::{Disclosure, Registry, RegistryConfig, Sha256, Source};
use skill_runtime::EngineConfig;
use skills_tests::{repo_root, skill_md, write};

use crate::http::{get, launch, request};

const BIG: &str = "---\nname: big\ndescription: A big skill.\n---\n# Big\n\nintro\n\n## Setup\n\n```sh\n# not a heading\n```\n\n### Linux\n\napt\n\n## Setup\n\nagain\n";

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "big/SKILL.md", BIG);
    write(
        dir.path(),
        "small/SKILL.md",
        &skill_md("small", "A small skill."),
    );
    write(dir.path(), "small/scripts/run.sh", "echo hi\n");
    write(
        dir.path(),
        "quiet/SKILL.md",
        "---\nname: quiet\ndescription: Users only.\ndisable-model-invocation: true\n---\nbody\n",
    );
    dir
}

fn server(dir: &tempfile::TempDir) -> crate::http::Server {
    launch(
        EngineConfig::new(RegistryConfig::with_sources(vec![Source::new(
            dir.path(),
            "user",
        )])),
        HttpConfig::default(),
    )
}

#[test]
fn outlines_and_sections_over_http() {
    let dir = tree();
    let s = server(&dir);
    let r = get(s.addr, "/v1/skills/big/outline");
    assert_eq!(r.status, 200, "{}", r.text());
    let o = r.json();
    let slugs: Vec<&str> = o["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["slug"].as_str().unwrap())
        .collect();
    assert_eq!(slugs, ["big", "setup", "linux", "setup-1"]);
    assert_eq!(
        o["sections"][2]["path"],
        serde_json::json!(["Big", "Setup", "Linux"])
    );
    assert_eq!(o["sections"][2]["level"], 3);
    let r = get(s.addr, "/v1/skills/big/sections/setup");
    assert_eq!(r.status, 200, "{}", r.text());
    let text = r.json()["text"].as_str().unwrap().to_owned();
    assert!(
        text.starts_with("## Setup\n") && text.contains("### Linux\n\napt\n"),
        "{text}"
    );
    assert!(!text.contains("again"), "{text}");
    let r = get(s.addr, "/v1/skills/big/sections/nope");
    assert_eq!(r.status, 404);
    let e = r.json();
    assert_eq!(e["error"]["code"], "unknown_section");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Sections: big, setup, linux, setup-1"),
        "{e}"
    );
    assert_eq!(get(s.addr, "/v1/skills/nosuch/outline").status, 404);
    // The model may not read a disable-model-invocation skill's outline; a user may.
    assert_eq!(get(s.addr, "/v1/skills/quiet/outline").status, 403);
    assert_eq!(
        get(s.addr, "/v1/skills/quiet/outline?caller=user").status,
        200
    );
}

#[test]
fn the_well_known_index_round_trips_with_verified_digests() {
    let dir = tree();
    // What a conforming client drops is left out: a name outside the Agent Skills rule, a
    // description over 1,024 characters (one at the limit is listed).
    write(
        dir.path(),
        "Bad_Name/SKILL.md",
        &skill_md("Bad_Name", "Bad name."),
    );
    let long = |n: usize| {
        format!(
            "---\nname: long-{n}\ndescription: {}\n---\nbody\n",
            "d".repeat(n)
        )
    };
    write(dir.path(), "long-1024/SKILL.md", &long(1024));
    write(dir.path(), "long-1025/SKILL.md", &long(1025));
    let s = server(&dir);
    let r = get(s.addr, "/.well-known/agent-skills/index.json");
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        r.header("content-type")
            .unwrap()
            .starts_with("application/json")
    );
    let index = r.json();
    assert_eq!(
        index["$schema"],
        "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
    );
    let skills = index["skills"].as_array().unwrap();
    let names: Vec<&str> = skills.iter().map(|e| e["name"].as_str().unwrap()).collect();
    // `quiet` is not model-visible, so it is not published.
    assert_eq!(names, ["big", "long-1024", "small"]);
    for entry in skills {
        let keys: Vec<&String> = entry.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 5, "{entry}");
        let url = entry["url"].as_str().unwrap();
        let name = entry["name"].as_str().unwrap();
        if name == "small" {
            // A folder of several files is one zip, SKILL.md at its root.
            assert_eq!(entry["type"], "archive");
            assert_eq!(url, "/.well-known/agent-skills/small/skill.zip");
            let zip = get(s.addr, url);
            assert_eq!(zip.status, 200);
            assert_eq!(zip.header("content-type").unwrap(), "application/zip");
            let digest = entry["digest"].as_str().unwrap();
            assert_eq!(format!("sha256:{}", Sha256::of(&zip.body).to_hex()), digest);
            assert!(zip.body.starts_with(b"PK\x03\x04"));
            let has = |needle: &[u8]| zip.body.windows(needle.len()).any(|w| w == needle);
            assert!(has(b"SKILL.md") && has(b"scripts/run.sh") && has(b"echo hi\n"));
            continue;
        }
        assert_eq!(entry["type"], "skill-md");
        assert_eq!(url, format!("/.well-known/agent-skills/{name}/SKILL.md"));
        let digest = entry["digest"].as_str().unwrap();
        let hex = digest.strip_prefix("sha256:").unwrap();
        assert!(
            hex.len() == 64
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        );
        let file = get(s.addr, url);
        assert_eq!(file.status, 200);
        assert!(
            file.header("content-type")
                .unwrap()
                .starts_with("text/markdown")
        );
        let served = file.text().into_bytes();
        assert_eq!(Sha256::of(&served).to_hex(), hex, "{name}");
        let on_disk = std::fs::read(dir.path().join(name).join("SKILL.md")).unwrap();
        assert_eq!(served, on_disk, "{name}");
        // HEAD answers the same status with no body.
        let head = request(s.addr, "HEAD", url, &[], b"");
        assert_eq!(head.status, 200);
        assert!(head.text().is_empty());
    }
    // An unpublished skill is not found, as the proposal asks, not refused.
    assert_eq!(
        get(s.addr, "/.well-known/agent-skills/quiet/SKILL.md").status,
        404
    );
    assert_eq!(
        get(s.addr, "/.well-known/agent-skills/nosuch/SKILL.md").status,
        404
    );
    // A skill of one file has no archive.
    assert_eq!(
        get(s.addr, "/.well-known/agent-skills/big/skill.zip").status,
        404
    );
}

/// Every section of every skill in `sources` can be fetched by the slug its outline gives,
/// and comes back with its heading. Returns the number of sections read.
fn walk(sources: Vec<Source>) -> usize {
    let r = Registry::load(RegistryConfig::with_sources(sources));
    let snap = r.snapshot();
    let mut read = 0;
    let mut failures = Vec::new();
    for skill in snap.skills() {
        let outline = skill.outline();
        for s in &outline.sections {
            match skill.section(&s.slug) {
                Ok(t) if t.text.contains(&s.title) && t.section == *s => read += 1,
                Ok(t) => failures.push(format!("{}#{}: {:?}", skill.name, s.slug, t.section)),
                Err(e) => failures.push(format!("{}#{}: {e}", skill.name, s.slug)),
            }
        }
        let mut slugs: Vec<&str> = outline.sections.iter().map(|s| s.slug.as_str()).collect();
        slugs.sort_unstable();
        let n = slugs.len();
        slugs.dedup();
        if slugs.len() != n {
            failures.push(format!("{}: duplicate slugs", skill.name));
        }
        // The disclosure view serves the same outline to whoever may use the skill.
        if let Ok(o) = Disclosure::new(&snap).outline(&skill.name) {
            assert_eq!(o, outline);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    read
}

#[test]
fn every_section_of_every_bundled_skill() {
    let root = repo_root().join("packs");
    let sources = ["actions", "agentskills", "lily", "pegasus", "toolsets"]
        .iter()
        .enumerate()
        .map(|(i, p)| Source::new(root.join(p), format!("layer{i}")))
        .collect();
    assert!(walk(sources) > 20);
}

/// The shared corpus (`../shared/corpus` next to the checkout, or `SKILLS_CORPUS`): every
/// section of every skill. Skipped when it is not there.
#[test]
fn every_section_of_every_corpus_skill() {
    let dir = std::env::var_os("SKILLS_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("..").join("shared").join("corpus"));
    if !dir.is_dir() {
        eprintln!("skipped: no corpus at {}", dir.display());
        return;
    }
    let mut packs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    packs.sort();
    let sources = packs
        .iter()
        .enumerate()
        .map(|(i, p)| Source::new(p, format!("layer{i}")))
        .collect();
    let read = walk(sources);
    eprintln!("corpus: {read} sections read");
    assert!(read > 1000);
}
