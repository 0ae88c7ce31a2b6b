//! The module graph of each crate, for the cycle check: each file's module path, the
//! modules its `use` items and `crate::`/`super::` paths reach (through re-exports), and
//! the cycles among sibling modules.
//!
//! A dependency counts between two modules when neither contains the other, lifted to the
//! two siblings under their deepest common parent: `a::x` using `b::y` is `a -> b`. A child
//! using its parent's items, or a parent its child's, is not a cycle. Test code is left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::rust::{line_of, strip, without_tests};
use super::{read, rel, rust_files};

/// A module path inside a crate (`[]` is the crate root).
pub(super) type ModPath = Vec<String>;

/// One crate's modules: each file's module path, its test-free stripped code and the
/// imports it holds.
pub(super) struct Crate {
    pub(super) name: String,
    modules: BTreeMap<ModPath, (String, String)>,
}

impl Crate {
    /// The crate in `dir` (`src/lib.rs` or `src/main.rs`), or `None` without one.
    pub(super) fn load(root: &Path, member: &str) -> Option<Crate> {
        let src = root.join(member).join("src");
        if !src.join("lib.rs").exists() && !src.join("main.rs").exists() {
            return None;
        }
        let mut modules = BTreeMap::new();
        let mut test_only: BTreeSet<ModPath> = BTreeSet::new();
        for file in rust_files(&src) {
            let relp = file
                .strip_prefix(&src)
                .ok()?
                .to_string_lossy()
                .replace('\\', "/");
            if relp.starts_with("bin/") {
                continue;
            }
            let mut path: ModPath = relp
                .trim_end_matches(".rs")
                .split('/')
                .map(str::to_owned)
                .collect();
            if matches!(
                path.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                path.pop();
            }
            let (code, tests) = without_tests(&strip(&read(&file)));
            for t in tests {
                let mut p = path.clone();
                p.push(t);
                test_only.insert(p);
            }
            modules.insert(path, (rel(root, &file), code));
        }
        modules.retain(|p, _| !test_only.iter().any(|t| p.starts_with(t)));
        let name = member.rsplit('/').next().unwrap_or(member).to_owned();
        Some(Crate { name, modules })
    }

    fn is_module(&self, path: &[String]) -> bool {
        self.modules.contains_key(path)
    }

    /// The module a path names, read from inside `from`: the deepest module it walks
    /// through, following `use` re-exports. `None` for paths into other crates.
    fn resolve(&self, from: &[String], segs: &[String], depth: usize) -> Option<ModPath> {
        if depth > 16 {
            return None;
        }
        let (mut cur, rest): (ModPath, &[String]) = match segs.first().map(String::as_str) {
            Some("crate") => (Vec::new(), &segs[1..]),
            Some("self") => (from.to_vec(), &segs[1..]),
            Some("super") => {
                let mut cur = from.to_vec();
                let mut rest = segs;
                while rest.first().map(String::as_str) == Some("super") {
                    cur.pop();
                    rest = &rest[1..];
                }
                (cur, rest)
            }
            Some(first) => {
                let mut child = from.to_vec();
                child.push(first.to_owned());
                if self.is_module(&child) {
                    (child, &segs[1..])
                } else {
                    return None;
                }
            }
            None => return None,
        };
        for seg in rest {
            let mut child = cur.clone();
            child.push(seg.clone());
            if self.is_module(&child) {
                cur = child;
                continue;
            }
            // A name imported into `cur` (a re-export): where it comes from.
            if let Some(target) = self
                .imports(&cur)
                .into_iter()
                .find(|(alias, _)| alias == seg)
                .and_then(|(_, path)| self.resolve(&cur, &path, depth + 1))
            {
                return Some(target);
            }
            break;
        }
        Some(cur)
    }

    /// The `use` paths of a module, each with the name it binds (`*` for globs).
    fn imports(&self, module: &[String]) -> Vec<(String, Vec<String>)> {
        let Some((_, code)) = self.modules.get(module) else {
            return Vec::new();
        };
        use_statements(code)
            .into_iter()
            .flat_map(|(tree, _)| expand_use(&tree))
            .collect()
    }

    /// Every dependency of one module on another that is neither its ancestor nor its
    /// descendant, as (from, to, file:line).
    fn edges(&self) -> Vec<(ModPath, ModPath, String)> {
        let mut out = Vec::new();
        for (module, (file, code)) in &self.modules {
            let mut paths: Vec<(Vec<String>, usize)> = Vec::new();
            for (tree, at) in use_statements(code) {
                for (_, path) in expand_use(&tree) {
                    paths.push((path, at));
                }
            }
            paths.extend(inline_paths(code));
            for (path, at) in paths {
                let Some(target) = self.resolve(module, &path, 0) else {
                    continue;
                };
                if target.starts_with(module) || module.starts_with(&target) {
                    continue;
                }
                out.push((
                    module.clone(),
                    target,
                    format!("{file}:{}", line_of(code, at)),
                ));
            }
        }
        out
    }

    /// Cycles among sibling modules: (parent, the modules of one cycle, an example edge
    /// for each dependency inside it).
    pub(super) fn cycles(&self) -> Vec<(ModPath, Vec<String>, Vec<String>)> {
        // Lift each edge to the siblings under the deepest common parent.
        let mut graphs: BTreeMap<ModPath, BTreeMap<(String, String), String>> = BTreeMap::new();
        for (from, to, place) in self.edges() {
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            let (Some(a), Some(b)) = (from.get(common), to.get(common)) else {
                continue;
            };
            graphs
                .entry(from[..common].to_vec())
                .or_default()
                .entry((a.clone(), b.clone()))
                .or_insert(place);
        }
        let mut out = Vec::new();
        for (parent, edges) in graphs {
            for scc in strongly_connected(&edges) {
                let inside: Vec<String> = edges
                    .iter()
                    .filter(|((a, b), _)| scc.contains(a) && scc.contains(b))
                    .map(|((a, b), place)| format!("{a} -> {b} ({place})"))
                    .collect();
                out.push((parent.clone(), scc, inside));
            }
        }
        out
    }
}

/// The `use` trees of stripped code (after `use`, up to `;`), with their offsets.
fn use_statements(code: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices("use ") {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[i + 4..];
        let Some(end) = rest.find(';') else { continue };
        let tree = rest[..end].split_whitespace().collect::<Vec<_>>().join(" ");
        if tree
            .chars()
            .all(|c| c.is_alphanumeric() || "_:{},* ".contains(c))
        {
            out.push((tree, i));
        }
    }
    out
}

/// The paths of a use tree (`a::{b, c::{d, e as f}}`), each with the name it binds.
fn expand_use(tree: &str) -> Vec<(String, Vec<String>)> {
    fn walk(prefix: &[String], tree: &str, out: &mut Vec<(String, Vec<String>)>) {
        let tree = tree.trim().trim_start_matches("::");
        if let Some(open) = tree.find('{') {
            let head: Vec<String> = tree[..open]
                .split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            let mut p = prefix.to_vec();
            p.extend(head);
            let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        walk(&p, &inner[start..i], out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            walk(&p, &inner[start..], out);
            return;
        }
        if tree.is_empty() {
            return;
        }
        let (path, alias) = match tree.split_once(" as ") {
            Some((p, a)) => (p, Some(a.trim())),
            None => (tree, None),
        };
        let mut p = prefix.to_vec();
        p.extend(path.split("::").map(|s| s.trim().to_owned()));
        if p.last().map(String::as_str) == Some("self") {
            p.pop();
        }
        let name = alias
            .map(str::to_owned)
            .or_else(|| p.last().cloned())
            .unwrap_or_default();
        out.push((name, p));
    }
    let mut out = Vec::new();
    walk(&[], tree, &mut out);
    out
}

/// Paths written in code (not in `use`): `crate::a::b`, `super::a`, with their offsets.
fn inline_paths(code: &str) -> Vec<(Vec<String>, usize)> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    for head in ["crate::", "super::"] {
        for (i, _) in code.match_indices(head) {
            let before = code[..i].chars().next_back();
            if before.is_some_and(|c| is_ident(c) || c == '$' || c == ':') {
                continue;
            }
            let mut path = Vec::new();
            let mut at = i;
            loop {
                let seg: String = code[at..].chars().take_while(|c| is_ident(*c)).collect();
                if seg.is_empty() {
                    break;
                }
                at += seg.len();
                path.push(seg);
                if !code[at..].starts_with("::") {
                    break;
                }
                at += 2;
            }
            if path.len() > 1 {
                out.push((path, i));
            }
        }
    }
    out
}

/// The strongly connected components with more than one node (Tarjan), each sorted.
fn strongly_connected(edges: &BTreeMap<(String, String), String>) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = edges.keys().flat_map(|(a, b)| [a, b]).collect();
    let next = |n: &String| -> Vec<&String> {
        edges
            .keys()
            .filter(|(a, _)| a == n)
            .map(|(_, b)| b)
            .collect()
    };
    // Reachability by search from each node: the graphs are a few dozen modules.
    let reach = |from: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(n) = stack.pop() {
            for m in next(&n) {
                if seen.insert(m.clone()) {
                    stack.push(m.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&String, BTreeSet<String>> = nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for n in &nodes {
        if done.contains(*n) || !reach[n].contains(*n) {
            continue;
        }
        let scc: Vec<String> = nodes
            .iter()
            .filter(|m| reach[n].contains(**m) && reach[*m].contains(*n))
            .map(|m| (*m).clone())
            .collect();
        done.extend(scc.iter().cloned());
        out.push(scc);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cycle_check_finds_a_cycle_and_follows_re_exports() {
        let code = |s: &str| without_tests(&strip(s)).0;
        let modules: BTreeMap<ModPath, (String, String)> = [
            (vec![], "pub use a::Thing;\nmod a;\nmod b;\nmod c;\n"),
            (vec!["a".to_owned()], "use crate::b::{self, Other};\n"),
            (
                vec!["b".to_owned()],
                "// use crate::c;\nfn f() { crate::Thing::new(); }\n",
            ),
            (
                vec!["c".to_owned()],
                "use super::a;\n#[cfg(test)]\nmod tests { use crate::c; use super::b; }\n",
            ),
        ]
        .into_iter()
        .map(|(p, src)| (p, ("f.rs".to_owned(), code(src))))
        .collect();
        let krate = Crate {
            name: "k".to_owned(),
            modules,
        };
        let cycles = krate.cycles();
        assert_eq!(cycles.len(), 1, "{cycles:?}");
        assert_eq!(cycles[0].1, ["a", "b"]);
    }

    #[test]
    fn use_trees_expand_to_paths() {
        let paths = expand_use("super::{a::{self, B}, c::D as E, f::*}");
        let flat: Vec<String> = paths
            .iter()
            .map(|(n, p)| format!("{n}={}", p.join("::")))
            .collect();
        assert_eq!(
            flat,
            [
                "a=super::a",
                "B=super::a::B",
                "E=super::c::D",
                "*=super::f::*"
            ]
        );
    }
}
