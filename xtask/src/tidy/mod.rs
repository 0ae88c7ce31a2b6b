//! Tidy: the codebase checks itself, as unit tests run by `cargo test --workspace`.
//!
//! Each test reads the workspace's own files (no build, no network) and fails with a list of
//! what to fix, file and line first:
//!
//! - every `.rs` file starts with a `//!` line saying what it owns;
//! - every dev-dependency a crate declares is used by its code (tests, benches, examples
//!   or `#[cfg(test)]` modules);
//! - serde's `Serialize`/`Deserialize` are derived or implemented only on the types of
//!   [`SERDE_ALLOWED`]: JSON shapes belong to the wire module and documented output formats;
//! - the error and diagnostic code tables ([`CODE_TABLES`]) hold unique codes in kebab-case;
//! - no file outside tests is over [`MAX_LINES`] lines ([`LONG_FILES_ALLOWED`] lists the
//!   ones being split);
//! - no module cycle inside a crate ([`CYCLES_ALLOWED`] lists the ones being broken);
//! - each crate depends only on the crates of ours its row of the layer table allows
//!   (`layers.rs`; the doors on skill-runtime alone, with an empty allow-list).
//!
//! The allow-lists only shrink: an entry that no longer matches anything fails the test too,
//! with the line to delete.

mod layers;
mod modules;
mod rust;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use modules::Crate;
use rust::{line_of, matching_brace, strip, without_tests};

/// Longest file, in lines, outside test folders.
const MAX_LINES: usize = 800;

/// Files without a `//!` first line today, in crates and tests being reorganised by others
/// (issue 14). Remove an entry when the file gets its line or goes; never add one.
const DOCLESS_ALLOWED: &[&str] = &[];

/// Dev-dependencies no code of their crate uses today, as `crate/dependency`, in crates
/// others own (issue 14: `insta` declared where no snapshot is taken). Remove an entry with
/// the dependency; never add one.
const UNUSED_DEV_DEPS_ALLOWED: &[&str] = &[];

/// Files over [`MAX_LINES`] today, each being split (issue 14). Remove an entry once its file
/// is under the limit; never add one.
const LONG_FILES_ALLOWED: &[&str] = &[
    // Route types and the Router in one file; route types move apart (doorway).
    "skill-router/src/route.rs",
    // The tokenizer and its tests (doorway).
    "skill-router/src/tokenize.rs",
];

/// Types that may derive or implement `Serialize` / `Deserialize`, as `crate/Type`.
/// Domain types should not: the wire module owns every JSON shape (issue 14, step 3), and a
/// wire module (a `wire.rs` file or `wire/` folder) needs no entry. Remove an entry when its
/// derive goes; add one only for a documented output format.
const SERDE_ALLOWED: &[&str] = &[
    // documented input format: serve's `[webhook]` table (docs/operator.md, replicas)
    "skill-server/WebhookFile",
    // documented input format: one case of an Agent Skills trigger-eval file
    "skill-search/TriggerCase",
    // documented output: diagnostics in `--format json` and the pack report
    "skill-format/Severity",
    // documented output: the stable diagnostic code, as its kebab-case text
    "skill-format/Code",
    // documented output: one diagnostic in `--format json`
    "skill-format/Diagnostic",
    // documented output: a skill's frontmatter, verbatim, in the MCP skills extension
    "skill-format/FrontmatterData",
    // documented output: the JSON catalog format, which the registry writes into the prompt
    "skill-registry/CatalogFormat",
    // documented output: the JSON catalog's budget report
    "skill-registry/BudgetReport",
    // documented output: one entry of the JSON catalog format
    "skill-registry/CatalogEntry",
    // documented file format: the lock file (`skill-server lock`, docs/operator.md)
    "skill-registry/Lock",
    // documented file format: one skill of the lock file
    "skill-registry/LockedSkill",
    // documented file format: one file of a lock entry (path, size, sha256)
    "skill-registry/FileEntry",
    // documented file format: a digest as lowercase hex in the lock file
    "skill-registry/Sha256",
    // documented output: the selection JSON
    "skill-search/Selected",
    // documented output: the selection JSON
    "skill-search/Disclosed",
    // documented output: the selection JSON
    "skill-search/Selection",
    // documented output: the selection JSON, hand-written Serialize
    "skill-search/Tier",
    // the scheduler's state file: its versioned on-disk format
    "skill-scheduler/StateFile",
    // the server's configuration file (TOML)
    "skill-server/FileConfig",
    // the server's configuration file (TOML)
    "skill-server/ProfileConfig",
    // the server's configuration file (TOML)
    "skill-server/SourceConfig",
    // serve's config file: the [trust] table
    "skill-server/TrustConfig",
];

/// The tables of stable codes: a file, the line that opens the table, and what it holds.
/// Codes are the string literals after `=>` inside the table's braces.
const CODE_TABLES: &[(&str, &str, &str)] = &[
    (
        "skill-format/src/diagnostic.rs",
        "codes! {",
        "diagnostic codes (skill_format::Code)",
    ),
    (
        "skill-router/src/error.rs",
        "pub fn code(&self)",
        "router error codes (skill_router::Error::code)",
    ),
    (
        "skill-runtime/src/error.rs",
        "pub fn code(&self)",
        "runtime error codes (skill_runtime::Error::code)",
    ),
];

/// Code tables still in snake_case, the one exception to kebab-case. The wire module (issue
/// 14, step 3) gives every code one convention; remove the entry then.
const SNAKE_CASE_ALLOWED: &[&str] = &["skill-runtime/src/error.rs"];

/// Module cycles being broken (issue 14), as `crate: parent-module: a b c` (the modules of
/// one cycle, siblings under `parent-module`, `-` for the crate root). A cycle is allowed
/// when all its modules are in one entry.
const CYCLES_ALLOWED: &[&str] = &[];

// ------------------------------------------------------------------------------------------
// The workspace's files.

/// The repository root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The workspace members' folders, relative to the root, from the root `Cargo.toml`.
fn members(root: &Path) -> Vec<String> {
    let text = read(&root.join("Cargo.toml"));
    let Some(start) = text.find("members") else {
        return Vec::new();
    };
    let list = &text[start..];
    let list = &list[..list.find(']').unwrap_or(list.len())];
    list.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Every `.rs` file under `dir`, sorted, skipping `target` and `test_data` folders.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name();
            if p.is_dir() {
                if name != "target" && name != "test_data" && name != "snapshots" {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// `path` relative to `root`, with `/` separators.
fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Whether a file is test code: under a `tests` or `benches` folder.
fn is_test_path(rel: &str) -> bool {
    rel.split('/').any(|c| c == "tests" || c == "benches")
}

/// Fail with `problems` under a heading, or pass when there are none.
fn report(heading: &str, problems: &[String]) {
    if problems.is_empty() {
        return;
    }
    let mut msg = format!("{heading}\n");
    for p in problems {
        let _ = writeln!(msg, "  - {p}");
    }
    panic!("{msg}");
}

// ------------------------------------------------------------------------------------------
// Checks.

#[test]
fn every_file_starts_with_a_module_doc() {
    let root = root();
    let mut problems = Vec::new();
    let mut docless = BTreeSet::new();
    for member in members(&root) {
        for file in rust_files(&root.join(&member)) {
            if read(&file).starts_with("//!") {
                continue;
            }
            let path = rel(&root, &file);
            docless.insert(path.clone());
            if !DOCLESS_ALLOWED.contains(&path.as_str()) {
                problems.push(format!(
                    "{path}: add a first line `//! <what this file owns and why>`"
                ));
            }
        }
    }
    for entry in DOCLESS_ALLOWED {
        if !docless.contains(*entry) {
            problems.push(format!(
                "xtask/src/tidy/mod.rs: DOCLESS_ALLOWED lists {entry}, which has its `//!` line \
                 now (or is gone): delete the entry"
            ));
        }
    }
    report(
        "files without a `//!` first line (house rule: every file says what it owns):",
        &problems,
    );
}

/// The dev-dependencies a `Cargo.toml` declares (plain and target-specific tables).
fn dev_dependencies(manifest: &str) -> Vec<String> {
    table_dependencies(manifest, "dev-dependencies")
}

/// The names a `Cargo.toml` declares in its `[table]` and target-specific `[target.*.table]`
/// tables (`table` is `dependencies` or `dev-dependencies`), in file order.
fn table_dependencies(manifest: &str, table: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut inside = false;
    for line in manifest.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            let header = t.trim_matches(|c| c == '[' || c == ']');
            inside = header == table
                || header
                    .strip_suffix(table)
                    .is_some_and(|target| target.ends_with('.'));
            continue;
        }
        if !inside || t.is_empty() || t.starts_with('#') {
            continue;
        }
        let name = t
            .split(['=', '.'])
            .next()
            .unwrap_or("")
            .trim()
            .trim_matches('"');
        if !name.is_empty() {
            names.push(name.to_owned());
        }
    }
    names
}

/// Whether stripped Rust code names the crate `ident` (`ident::`, `ident!`, `use ident`).
fn names_crate(code: &str, ident: &str) -> bool {
    code.match_indices(ident).any(|(i, _)| {
        let before = code[..i].chars().next_back();
        let after = &code[i + ident.len()..];
        let starts_word = before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        starts_word
            && (after.starts_with("::")
                || after.starts_with('!')
                || after.starts_with(';')
                || after.starts_with(" as "))
    })
}

#[test]
fn dev_dependencies_are_used() {
    let root = root();
    let mut problems = Vec::new();
    let mut unused = BTreeSet::new();
    for member in members(&root) {
        let dir = root.join(&member);
        let manifest = read(&dir.join("Cargo.toml"));
        let code: Vec<String> = rust_files(&dir).iter().map(|f| strip(&read(f))).collect();
        for dep in dev_dependencies(&manifest) {
            let ident = dep.replace('-', "_");
            if code.iter().any(|c| names_crate(c, &ident)) {
                continue;
            }
            let key = format!("{member}/{dep}");
            unused.insert(key.clone());
            if !UNUSED_DEV_DEPS_ALLOWED.contains(&key.as_str()) {
                problems.push(format!(
                    "{member}/Cargo.toml: `{dep}` is a dev-dependency that no test, bench, \
                     example or #[cfg(test)] code uses: remove it from [dev-dependencies]"
                ));
            }
        }
    }
    for entry in UNUSED_DEV_DEPS_ALLOWED {
        if !unused.contains(*entry) {
            problems.push(format!(
                "xtask/src/tidy/mod.rs: UNUSED_DEV_DEPS_ALLOWED lists {entry}, which is used or \
                 gone now: delete the entry"
            ));
        }
    }
    report("unused dev-dependencies:", &problems);
}

/// `crate/Type` of every type in `code` that derives or implements serde's traits, with
/// the line.
fn serde_types(code: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = code[from..].find("derive(") {
        let at = from + found;
        let close = code[at..].find(')').map_or(code.len(), |n| at + n);
        let list = &code[at..close];
        from = close;
        let serde = list
            .split([',', '(', ' ', '\n'])
            .map(|w| w.rsplit("::").next().unwrap_or(w).trim())
            .any(|w| w == "Serialize" || w == "Deserialize");
        if !serde {
            continue;
        }
        // The item the derive is on: the next `struct` or `enum`.
        let rest = &code[close..];
        let item = ["struct ", "enum "]
            .iter()
            .filter_map(|k| rest.find(k).map(|n| n + k.len()))
            .min();
        if let Some(start) = item {
            let name: String = rest[start..]
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push((name, line_of(code, at)));
        }
    }
    for (i, _) in code.match_indices("impl") {
        let head: String = code[i..]
            .chars()
            .take_while(|c| *c != '{' && *c != ';')
            .collect();
        let head = head.split_whitespace().collect::<Vec<_>>().join(" ");
        let is_serde = ["Serialize for ", "Deserialize<'de> for "]
            .iter()
            .any(|t| head.contains(t));
        if !head.starts_with("impl") || !is_serde {
            continue;
        }
        let name: String = head
            .rsplit(" for ")
            .next()
            .unwrap_or("")
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        out.push((name, line_of(code, i)));
    }
    out
}

/// Whether a file belongs to a wire module (`wire.rs` or a `wire/` folder): the one place
/// every JSON shape lives (issue 14, step 3), where serde needs no allow-list.
fn is_wire_module(rel: &str) -> bool {
    rel.split('/').any(|c| c == "wire" || c == "wire.rs")
}

#[test]
fn wire_modules_are_files_or_folders_named_wire() {
    assert!(is_wire_module("skill-runtime/src/wire.rs"));
    assert!(is_wire_module("skill-runtime/src/wire/route.rs"));
    assert!(!is_wire_module("skill-runtime/src/wired.rs"));
    assert!(!is_wire_module("skill-runtime/src/http/api.rs"));
}

#[test]
fn serde_only_on_allowed_types() {
    let root = root();
    let allowed: BTreeSet<&str> = SERDE_ALLOWED.iter().copied().collect();
    let mut seen = BTreeSet::new();
    let mut problems = Vec::new();
    for member in members(&root) {
        if member == "xtask" {
            continue;
        }
        let crate_name = member.rsplit('/').next().unwrap_or(&member).to_owned();
        for file in rust_files(&root.join(&member).join("src")) {
            if is_wire_module(&rel(&root, &file)) {
                continue;
            }
            let (code, _) = without_tests(&strip(&read(&file)));
            for (ty, line) in serde_types(&code) {
                let key = format!("{crate_name}/{ty}");
                if allowed.contains(key.as_str()) {
                    seen.insert(key);
                } else {
                    problems.push(format!(
                        "{}:{line}: `{ty}` derives or implements serde's Serialize/Deserialize: \
                         build its JSON in the wire module instead (or, for a documented output \
                         format, add \"{key}\" to SERDE_ALLOWED in xtask/src/tidy/mod.rs with a comment)",
                        rel(&root, &file)
                    ));
                }
            }
        }
    }
    for entry in SERDE_ALLOWED {
        if !seen.contains(*entry) {
            problems.push(format!(
                "xtask/src/tidy/mod.rs: SERDE_ALLOWED lists \"{entry}\", which no longer uses serde: \
                 delete the entry"
            ));
        }
    }
    report("serde outside the allow-list:", &problems);
}

/// The codes of a table: string literals after `=>` within the braces opened at `marker`.
fn table_codes(code: &str, source: &str, marker: &str) -> Option<Vec<(String, usize)>> {
    let start = code.find(marker)?;
    let open = start + code[start..].find('{')?;
    let end = matching_brace(code, open);
    let mut out = Vec::new();
    for (i, _) in code[open..end].match_indices("=>") {
        let at = open + i + 2;
        // Literals are blanked in `code`; read them from the source at the same offset.
        let rest = &source[at..end];
        let skip = rest.len() - rest.trim_start_matches([' ', '\n', '\r', '\t', '{']).len();
        let lit = at + skip;
        if source[lit..].starts_with('"') {
            let text: String = source[lit + 1..]
                .chars()
                .take_while(|c| *c != '"')
                .collect();
            out.push((text, line_of(source, lit)));
        }
    }
    Some(out)
}

fn is_kebab(code: &str) -> bool {
    !code.is_empty()
        && code.split('-').all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

fn is_snake(code: &str) -> bool {
    is_kebab(&code.replace('_', "-"))
}

#[test]
fn codes_are_unique_and_kebab_case() {
    let root = root();
    let mut problems = Vec::new();
    for (file, marker, what) in CODE_TABLES {
        let source = read(&root.join(file));
        let code = strip(&source);
        let Some(codes) = table_codes(&code, &source, marker) else {
            problems.push(format!(
                "{file}: no `{marker}` table of {what}: update CODE_TABLES in xtask/src/tidy/mod.rs \
                 to where the codes are defined now"
            ));
            continue;
        };
        if codes.is_empty() {
            problems.push(format!(
                "{file}: the {what} table has no `=> \"code\"` arms"
            ));
        }
        let snake_ok = SNAKE_CASE_ALLOWED.contains(file);
        let mut first: BTreeMap<&str, usize> = BTreeMap::new();
        for (c, line) in &codes {
            if let Some(prev) = first.insert(c, *line) {
                problems.push(format!(
                    "{file}:{line}: code `{c}` is already used on line {prev}: give each meaning \
                     its own code"
                ));
            }
            let ok = is_kebab(c) || (snake_ok && is_snake(c));
            if !ok {
                problems.push(format!(
                    "{file}:{line}: code `{c}` is not kebab-case (lowercase words joined by `-`): \
                     write it as `{}`",
                    c.to_lowercase().replace('_', "-")
                ));
            }
        }
        if snake_ok && codes.iter().all(|(c, _)| is_kebab(c)) {
            problems.push(format!(
                "xtask/src/tidy/mod.rs: SNAKE_CASE_ALLOWED lists {file}, whose codes are all \
                 kebab-case now: delete the entry"
            ));
        }
    }
    report("error and diagnostic codes:", &problems);
}

#[test]
fn no_long_files_outside_tests() {
    let root = root();
    let mut problems = Vec::new();
    let mut long = BTreeSet::new();
    for member in members(&root) {
        for file in rust_files(&root.join(&member)) {
            let path = rel(&root, &file);
            if is_test_path(&path) {
                continue;
            }
            let lines = read(&file).lines().count();
            if lines <= MAX_LINES {
                continue;
            }
            long.insert(path.clone());
            if !LONG_FILES_ALLOWED.contains(&path.as_str()) {
                problems.push(format!(
                    "{path}: {lines} lines, over {MAX_LINES}: split it by what it holds \
                     (one module per concern)"
                ));
            }
        }
    }
    for entry in LONG_FILES_ALLOWED {
        if !long.contains(*entry) {
            problems.push(format!(
                "xtask/src/tidy/mod.rs: LONG_FILES_ALLOWED lists {entry}, which is gone or at most \
                 {MAX_LINES} lines now: delete the entry"
            ));
        }
    }
    report("files too long:", &problems);
}

#[test]
fn no_module_cycles() {
    let root = root();
    let allowed: Vec<(String, String, BTreeSet<String>)> = CYCLES_ALLOWED
        .iter()
        .filter_map(|e| {
            let mut parts = e.splitn(3, ": ");
            let krate = parts.next()?.to_owned();
            let parent = parts.next()?.to_owned();
            let mods = parts.next()?.split(' ').map(str::to_owned).collect();
            Some((krate, parent, mods))
        })
        .collect();
    let mut used = BTreeSet::new();
    let mut problems = Vec::new();
    for member in members(&root) {
        let Some(krate) = Crate::load(&root, &member) else {
            continue;
        };
        for (parent, scc, inside) in krate.cycles() {
            let parent_name = if parent.is_empty() {
                "-".to_owned()
            } else {
                parent.join("::")
            };
            let entry = allowed.iter().position(|(k, p, mods)| {
                *k == krate.name && *p == parent_name && scc.iter().all(|m| mods.contains(m))
            });
            if let Some(i) = entry {
                used.insert(i);
                continue;
            }
            problems.push(format!(
                "{} (under `{parent_name}`): modules {} depend on each other: {}. Break the \
                 cycle: move what both need into a module of its own, or into the one lower \
                 down",
                krate.name,
                scc.join(", "),
                inside.join("; ")
            ));
        }
    }
    for (i, entry) in CYCLES_ALLOWED.iter().enumerate() {
        if !used.contains(&i) {
            problems.push(format!(
                "xtask/src/tidy/mod.rs: CYCLES_ALLOWED lists \"{entry}\", which is no longer a \
                 cycle: delete the entry"
            ));
        }
    }
    report("module cycles inside a crate:", &problems);
}
