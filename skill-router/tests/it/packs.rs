//! The bundled example packs are checked by their own documentation: every `## Examples`
//! line routes to its own skill and passes its flag schema.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use skill_format::sections::example_lines;
use skill_registry::{Registry, RegistryConfig, Source};
use skill_router::{Caller, Prevalidate, Route, Router, RouterConfig, lint_examples};

fn packs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("packs")
}

#[test]
fn every_bundled_example_routes_to_its_own_skill() {
    let mut checked = 0;
    for pack in ["actions", "agentskills", "lily", "pegasus", "toolsets"] {
        let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(
            packs().join(pack),
            "builtin",
        )]));
        let snapshot = registry.snapshot();
        let findings = lint_examples(&snapshot);
        assert!(findings.is_empty(), "{pack}: {findings:#?}");
        // The same, through the public router with every schema checked.
        let config = RouterConfig {
            prevalidate: Prevalidate::All,
            ..RouterConfig::default()
        };
        let router = Router::with_config(&snapshot, config);
        for skill in snapshot.skills() {
            for example in example_lines(&skill.body) {
                match router.route(example.text, Caller::Model) {
                    Route::Invoke(i) => assert_eq!(i.skill, skill.name, "{}", example.text),
                    other => panic!("{}: {other:?}", example.text),
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 40, "only {checked} examples found");
}

#[test]
fn the_broken_pack_examples_are_reported() {
    let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(
        packs().join("broken"),
        "builtin",
    )]));
    let snapshot = registry.snapshot();
    // Whatever loads from the broken pack is linted without panicking, and each finding
    // points at a line in a file.
    for d in lint_examples(&snapshot) {
        assert!(d.line.is_some() && d.path.exists(), "{d}");
    }
}
