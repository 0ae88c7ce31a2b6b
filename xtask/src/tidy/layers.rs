//! The layer table: which of our crates each crate may depend on, written once, and the
//! tidy test that reads every member's `Cargo.toml` against it.
//!
//! The doors (HTTP, MCP, the command line, the pack report, the console) stand on one floor
//! above the Engine: they depend on skill-runtime, whose curated re-exports give them the
//! vocabulary of the crates below, and never on each other; the server composes them (with
//! skill-store for the database), mounting MCP and the console on HTTP as tower services. Only normal dependencies count: tests may reach any crate.

use std::collections::BTreeSet;

use super::{members, read, report, root, table_dependencies};

/// Each crate's package name and the crates of ours it may depend on (`None`: a tool
/// above the product, which may depend on anything).
const LAYERS: &[(&str, Option<&[&str]>)] = &[
    ("skill-format", Some(&[])),
    ("skill-scan", Some(&["skill-format"])),
    ("skill-registry", Some(&["skill-format", "skill-scan"])),
    ("skill-router", Some(&["skill-format", "skill-registry"])),
    ("skill-search", Some(&["skill-format", "skill-registry"])),
    ("skill-scheduler", Some(&["skill-format", "skill-registry"])),
    ("skill-store", Some(&[])),
    (
        "skill-runtime",
        Some(&[
            "skill-format",
            "skill-registry",
            "skill-router",
            "skill-search",
            "skill-scheduler",
            "skill-store",
        ]),
    ),
    // The doors' floor.
    ("skill-http", Some(&["skill-runtime"])),
    ("skill-pack", Some(&["skill-runtime"])),
    ("skill-mcp", Some(&["skill-runtime"])),
    ("skill-console", Some(&["skill-runtime"])),
    (
        "skill-server",
        Some(&[
            "skill-runtime",
            "skill-store",
            "skill-http",
            "skill-pack",
            "skill-mcp",
            "skill-console",
        ]),
    ),
    // A host of the pack report, as a user's own crate would be.
    ("pack-snapshot-example", Some(&["skill-pack"])),
    ("xtask", None),
    ("skills-tests", None),
];

/// Dependencies the table does not allow yet, as `crate -> dependency` (only shrinks; it
/// is empty, and stays so).
const LAYER_EXCEPTIONS_ALLOWED: &[&str] = &[];

/// The package name a `Cargo.toml` declares.
fn package_name(manifest: &str) -> Option<String> {
    let mut in_package = false;
    for line in manifest.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            in_package = t == "[package]";
            continue;
        }
        if in_package {
            if let Some(rest) = t.strip_prefix("name") {
                let value = rest
                    .trim_start()
                    .strip_prefix('=')?
                    .trim()
                    .trim_matches('"');
                return Some(value.to_owned());
            }
        }
    }
    None
}

/// The normal dependencies a `Cargo.toml` declares that are crates of ours (`skill-*`),
/// from `[dependencies]` and target-specific `dependencies` tables.
fn our_dependencies(manifest: &str) -> Vec<String> {
    table_dependencies(manifest, "dependencies")
        .into_iter()
        .filter(|name| name.starts_with("skill-"))
        .collect()
}

#[test]
fn every_crate_depends_only_on_the_layers_below_it() {
    let root = root();
    let mut problems = Vec::new();
    let mut exceptions_used = BTreeSet::new();
    for member in members(&root) {
        let manifest = read(&root.join(&member).join("Cargo.toml"));
        let Some(name) = package_name(&manifest) else {
            problems.push(format!("{member}/Cargo.toml: no [package] name"));
            continue;
        };
        let Some((_, allowed)) = LAYERS.iter().find(|(n, _)| *n == name) else {
            problems.push(format!(
                "{member}/Cargo.toml: `{name}` is not in the layer table: add it to LAYERS in \
                 xtask/src/tidy/layers.rs with the crates it may depend on"
            ));
            continue;
        };
        let Some(allowed) = allowed else { continue };
        for dep in our_dependencies(&manifest) {
            if allowed.contains(&dep.as_str()) {
                continue;
            }
            let key = format!("{name} -> {dep}");
            if LAYER_EXCEPTIONS_ALLOWED.contains(&key.as_str()) {
                exceptions_used.insert(key);
                continue;
            }
            problems.push(format!(
                "{member}/Cargo.toml: `{name}` depends on `{dep}`, which the layer table does \
                 not allow (it may depend on: {}); reach it through skill-runtime's re-exports",
                if allowed.is_empty() {
                    "none of ours".to_owned()
                } else {
                    allowed.join(", ")
                }
            ));
        }
    }
    for entry in LAYER_EXCEPTIONS_ALLOWED {
        if !exceptions_used.contains(*entry) {
            problems.push(format!(
                "xtask/src/tidy/layers.rs: LAYER_EXCEPTIONS_ALLOWED lists {entry}, which no \
                 Cargo.toml has now: delete the entry"
            ));
        }
    }
    report("dependencies across layers:", &problems);
}

#[test]
fn the_manifest_reader_finds_names_and_our_dependencies() {
    let manifest = "[package]\nname = \"skill-x\"\n\n[dependencies]\nskill-format.workspace = true\nserde = \"1\"\n# skill-router.workspace = true\n\n[target.'cfg(unix)'.dependencies]\nskill-store = { workspace = true }\n\n[dev-dependencies]\nskill-search.workspace = true\n";
    assert_eq!(package_name(manifest).as_deref(), Some("skill-x"));
    assert_eq!(
        our_dependencies(manifest),
        vec!["skill-format".to_owned(), "skill-store".to_owned()]
    );
}
