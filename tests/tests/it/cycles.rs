//! No module cycles inside a crate.
//!
//! The module tree is read from the file layout (`a.rs` or `a/mod.rs` is module `a`). An
//! edge A -> B is a path in A's code (comments and string literals left out) that names B:
//! `crate::b::...` or `super::...` resolved to an absolute module path, kept at the
//! longest existing module. Containment is not a dependency: an edge between a module and
//! one of its ancestors is ignored (a parent declares, re-exports and uses its children;
//! a child uses its parent's items). Every other edge is lifted to the two siblings under
//! the modules' lowest common ancestor, and the siblings of each parent must form no cycle
//! (Tarjan's strongly connected components). A name re-exported by a parent counts as the
//! parent's, so the check errs on the side of fewer edges; it is a tripwire for the
//! `a <-> b` cycles that split files fall into, not a full name resolver.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use skills_tests::repo_root;

/// The crates this check covers (the others are checked on their own branches).
const CRATES: &[&str] = &[
    "skill-router",
    "skill-runtime",
    "skill-pack",
    "skill-server",
];

type ModPath = Vec<String>;

fn modules(src: &Path) -> BTreeMap<ModPath, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap();
            let mut parts: ModPath = rel
                .iter()
                .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
                .collect();
            if parts
                .last()
                .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
            {
                parts.pop();
            }
            out.insert(parts, std::fs::read_to_string(&path).unwrap());
        }
    }
    out
}

/// The code without comments and string literals (enough for path scanning).
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let line = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        let mut in_str = false;
        let mut prev = ' ';
        for c in line.chars() {
            if c == '"' && prev != '\\' {
                in_str = !in_str;
            } else if !in_str {
                out.push(c);
            }
            prev = c;
        }
        out.push('\n');
    }
    out
}

/// Absolute module paths named in a module's code.
fn references(module: &ModPath, code: &str) -> Vec<ModPath> {
    let mut refs = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let text: String = bytes.iter().collect();
    for (start, _) in text
        .match_indices("crate::")
        .chain(text.match_indices("super::"))
    {
        let before = text[..start].chars().last().unwrap_or(' ');
        if before.is_alphanumeric() || before == '_' || before == ':' {
            continue;
        }
        let rest = &text[start..];
        let path: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        let mut abs: ModPath = Vec::new();
        if segs.first() == Some(&"crate") {
            segs.remove(0);
        } else {
            abs = module.clone();
            while segs.first() == Some(&"super") {
                segs.remove(0);
                abs.pop();
            }
        }
        abs.extend(segs.iter().map(|s| (*s).to_owned()));
        refs.push(abs);
    }
    refs
}

fn sibling_cycles(src: &Path) -> Vec<String> {
    let mods = modules(src);
    let mut edges: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
    for (m, text) in &mods {
        for r in references(m, &code_only(text)) {
            // The longest existing module the path names.
            let mut target = r.clone();
            while !target.is_empty() && !mods.contains_key(&target) {
                target.pop();
            }
            let common = m.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if common == m.len() || common == target.len() {
                continue; // the same module, an ancestor or a descendant
            }
            let (a, b) = (m[..=common].to_vec(), target[..=common].to_vec());
            edges.entry(a).or_default().insert(b);
        }
    }
    // Tarjan's strongly connected components over the lifted sibling edges.
    let nodes: Vec<ModPath> = edges
        .iter()
        .flat_map(|(a, bs)| std::iter::once(a.clone()).chain(bs.iter().cloned()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let index_of: BTreeMap<&ModPath, usize> =
        nodes.iter().enumerate().map(|(i, n)| (n, i)).collect();
    let adj: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            edges
                .get(n)
                .map(|bs| bs.iter().map(|b| index_of[b]).collect())
                .unwrap_or_default()
        })
        .collect();
    let mut index = vec![usize::MAX; nodes.len()];
    let mut low = vec![0; nodes.len()];
    let mut on_stack = vec![false; nodes.len()];
    let mut stack = Vec::new();
    let mut counter = 0;
    let mut cycles = Vec::new();
    fn visit(
        v: usize,
        adj: &[Vec<usize>],
        st: &mut (Vec<usize>, Vec<usize>, Vec<bool>, Vec<usize>, usize),
        out: &mut Vec<Vec<usize>>,
    ) {
        st.0[v] = st.4;
        st.1[v] = st.4;
        st.4 += 1;
        st.3.push(v);
        st.2[v] = true;
        for &w in &adj[v] {
            if st.0[w] == usize::MAX {
                visit(w, adj, st, out);
                st.1[v] = st.1[v].min(st.1[w]);
            } else if st.2[w] {
                st.1[v] = st.1[v].min(st.0[w]);
            }
        }
        if st.1[v] == st.0[v] {
            let mut comp = Vec::new();
            while let Some(w) = st.3.pop() {
                st.2[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                out.push(comp);
            }
        }
    }
    let mut state = (
        std::mem::take(&mut index),
        std::mem::take(&mut low),
        std::mem::take(&mut on_stack),
        std::mem::take(&mut stack),
        std::mem::take(&mut counter),
    );
    let mut comps = Vec::new();
    for v in 0..nodes.len() {
        if state.0[v] == usize::MAX {
            visit(v, &adj, &mut state, &mut comps);
        }
    }
    for comp in comps {
        let names: Vec<String> = comp.iter().map(|&i| nodes[i].join("::")).collect();
        cycles.push(names.join(" <-> "));
    }
    cycles
}

#[test]
fn no_module_cycles_in_these_crates() {
    // CYCLES_ROOT checks another checkout (say, an older commit's `git archive`).
    let root = std::env::var_os("CYCLES_ROOT").map_or_else(repo_root, std::path::PathBuf::from);
    let mut found = Vec::new();
    for krate in CRATES {
        for cycle in sibling_cycles(&root.join(krate).join("src")) {
            found.push(format!("{krate}: {cycle}"));
        }
    }
    assert!(found.is_empty(), "module cycles:\n{}", found.join("\n"));
}

#[test]
fn the_check_finds_a_cycle_between_siblings() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| skills_tests::write(dir.path(), rel, text);
    write("lib.rs", "mod a;\nmod b;\n");
    write("a.rs", "use crate::b::B;\npub struct A;\n");
    write("b/mod.rs", "mod c;\n");
    write("b/c.rs", "use crate::a::A; // a comment naming crate::x\n");
    assert_eq!(sibling_cycles(dir.path()), ["b <-> a"]);
    // A child using its parent is not a cycle.
    write("b/c.rs", "use super::B;\n");
    write("b/mod.rs", "mod c;\npub use c::C;\npub struct B;\n");
    assert!(sibling_cycles(dir.path()).is_empty());
}
