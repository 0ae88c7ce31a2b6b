//! A host that picks `skill-format` alone gets a small dependency tree: the exact list of
//! crates below is committed, so any new dependency is a visible change here. The registry
//! without features pulls no file watcher, and search keeps its index in memory without
//! tokio or hyper. The runtime without its default features executes skills without the HTTP
//! stack or the watcher; the server without its default features has no PostgreSQL client.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// Every crate in `cargo tree -p skill-format -e normal` (normal dependencies, default
/// features), by name.
const SKILL_FORMAT_TREE: &[&str] = &[
    "aho-corasick",
    "equivalent",
    "hashbrown",
    "indexmap",
    "itoa",
    "memchr",
    "nom",
    "proc-macro2",
    "quote",
    "regex",
    "regex-automata",
    "regex-syntax",
    "ryu",
    "serde",
    "serde_core",
    "serde_derive",
    "serde_yaml",
    "skill-format",
    "syn",
    "thiserror",
    "thiserror-impl",
    "tinyvec",
    "unicode-general-category",
    "unicode-ident",
    "unicode-normalization",
    "unsafe-libyaml",
];

/// The crate names in `cargo tree -p <package> -e normal`.
fn tree(package: &str) -> BTreeSet<String> {
    tree_with(package, &[])
}

/// The same, with more `cargo tree` arguments (features).
fn tree_with(package: &str, extra: &[&str]) -> BTreeSet<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let out = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "-e",
            "normal",
            "--prefix",
            "none",
            "-p",
            package,
        ])
        .args(extra)
        .arg("--manifest-path")
        .arg(&manifest)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn skill_format_dependency_tree_is_the_committed_list() {
    let got = tree("skill-format");
    let want: BTreeSet<String> = SKILL_FORMAT_TREE.iter().map(|s| (*s).to_owned()).collect();
    let added: Vec<_> = got.difference(&want).collect();
    let removed: Vec<_> = want.difference(&got).collect();
    assert!(
        added.is_empty() && removed.is_empty(),
        "skill-format's dependencies changed: added {added:?}, removed {removed:?}; \
         update SKILL_FORMAT_TREE in tests/tests/it/deps.rs if that is intended"
    );
    for heavy in ["tokio", "tantivy", "hyper", "notify"] {
        assert!(!got.contains(heavy), "skill-format pulls {heavy}");
    }
}

#[test]
fn registry_and_search_without_features_stay_light() {
    let registry = tree("skill-registry");
    for heavy in ["notify", "tokio", "tantivy", "hyper"] {
        assert!(!registry.contains(heavy), "skill-registry pulls {heavy}");
    }
    let search = tree("skill-search");
    for heavy in ["tokio", "hyper", "notify", "memmap2"] {
        assert!(!search.contains(heavy), "skill-search pulls {heavy}");
    }
}

#[test]
fn runtime_without_default_features_has_no_http_stack_or_watcher() {
    let lean = tree_with("skill-runtime", &["--no-default-features"]);
    for heavy in ["hyper", "hyper-util", "http-body-util", "notify"] {
        assert!(
            !lean.contains(heavy),
            "skill-runtime without features pulls {heavy}"
        );
    }
    let full = tree("skill-runtime");
    assert!(
        full.contains("notify"),
        "skill-runtime's defaults lost notify"
    );
    // The HTTP server is its own door crate (skill-http); the runtime's defaults build no
    // HTTP stack.
    assert!(
        !full.contains("hyper"),
        "skill-runtime's defaults pull hyper"
    );
    assert!(
        tree("skill-http").contains("hyper"),
        "skill-http lost its server"
    );
    // A database client only for hosts that share state between replicas.
    for heavy in ["skill-store", "tokio-postgres", "deadpool-postgres"] {
        assert!(
            !full.contains(heavy),
            "skill-runtime's defaults pull {heavy}"
        );
    }
    let replicas = tree_with("skill-runtime", &["--features", "replicas"]);
    assert!(
        replicas.contains("tokio-postgres"),
        "the replicas feature lost its client"
    );
    assert!(
        replicas.contains("hyper"),
        "the replicas feature lost its webhook client"
    );
}

#[test]
fn the_server_builds_postgresql_in_by_default_only() {
    let full = tree("skill-server");
    for wanted in ["skill-store", "tokio-postgres"] {
        assert!(
            full.contains(wanted),
            "skill-server's defaults lost {wanted}"
        );
    }
    // Processes are signalled through rustix; nix would be a second binding.
    assert!(!full.contains("nix"), "skill-server pulls nix");
    let lean = tree_with("skill-server", &["--no-default-features"]);
    for heavy in ["skill-store", "tokio-postgres", "deadpool-postgres"] {
        assert!(
            !lean.contains(heavy),
            "skill-server without features pulls {heavy}"
        );
    }
}
