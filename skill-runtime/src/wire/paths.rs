//! How an answer writes the server's file paths ([`Paths`]): relative to the source they
//! are in (what `/v1` answers carry unless the operator asks for absolute ones, `serve
//! --absolute-paths`), or as they are (the command line, run by the operator on their own
//! machine).

use std::borrow::Cow;
use std::path::{Component, Path};

use skill_format::Diagnostic;
use skill_registry::Source;

/// How an answer writes a server path.
#[derive(Debug, Clone, Copy)]
pub enum Paths<'s> {
    /// As the engine has it (absolute when the sources were given so).
    Absolute,
    /// Relative to the source it is in, `/`-separated; a path in no source is written as
    /// its file name alone, so no answer names a folder of the server outside its sources.
    Relative(&'s [Source]),
}

impl Paths<'_> {
    /// One path as the answer writes it.
    pub fn path<'p>(&self, path: &'p Path) -> Cow<'p, str> {
        let Paths::Relative(sources) = self else {
            return path.to_string_lossy();
        };
        if let Some(rest) = plain_rest(sources, path) {
            return Cow::Borrowed(rest);
        }
        let root = sources
            .iter()
            .map(|s| s.path.as_path())
            .filter(|root| path.starts_with(root))
            .max_by_key(|root| root.components().count());
        let rest = match root {
            Some(root) => path.strip_prefix(root).unwrap_or(path),
            None => Path::new(""),
        };
        let parts: Vec<Cow<'_, str>> = rest
            .components()
            .filter_map(|c| match c {
                Component::Normal(part) => Some(part.to_string_lossy()),
                _ => None,
            })
            .collect();
        if parts.is_empty() {
            // The source is the file itself, or the path is in no source: its name.
            return Cow::Owned(
                path.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            );
        }
        Cow::Owned(parts.join("/"))
    }

    /// A message with every source folder it names (`<root>/`) written relative.
    pub fn text<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let Paths::Relative(sources) = self else {
            return Cow::Borrowed(text);
        };
        let mut roots: Vec<String> = sources
            .iter()
            .map(|s| {
                // A source that is one skill file: the folder it is in.
                let root = match s.path.extension() {
                    Some(ext) if ext == "md" => s.path.parent().unwrap_or(&s.path),
                    _ => &s.path,
                };
                root.to_string_lossy().into_owned()
            })
            .filter(|r| !r.is_empty())
            .collect();
        // The longest first, so a source inside another is cut whole.
        roots.sort_by_key(|r| std::cmp::Reverse(r.len()));
        let mut out = Cow::Borrowed(text);
        for root in roots {
            let prefix = format!(
                "{}{}",
                root.trim_end_matches('/'),
                std::path::MAIN_SEPARATOR
            );
            if let Some(cut) = cut_at_boundaries(&out, &prefix) {
                out = Cow::Owned(cut);
            }
        }
        out
    }

    /// Diagnostics with their paths and messages written as this answer writes paths.
    pub fn diagnostics<'d>(&self, diagnostics: &'d [Diagnostic]) -> Cow<'d, [Diagnostic]> {
        if matches!(self, Paths::Absolute) {
            return Cow::Borrowed(diagnostics);
        }
        Cow::Owned(
            diagnostics
                .iter()
                .map(|d| Diagnostic {
                    path: self.path(&d.path).into_owned().into(),
                    message: self.text(&d.message).into_owned(),
                    ..d.clone()
                })
                .collect(),
        )
    }
}

/// The common case of [`Paths::path`] without its component walk and allocations (a skill
/// detail writes several paths, and the walk was a tenth of its cost): a UTF-8 path whose
/// text starts with a UTF-8 source's text and a `/`, and whose rest is plain `/`-separated
/// names, is that rest. `None` sends every other path down the general way.
fn plain_rest<'p>(sources: &[Source], path: &'p Path) -> Option<&'p str> {
    let text = path.to_str()?;
    let mut best: Option<(usize, &'p str)> = None;
    for source in sources {
        let root = source.path.to_str()?.trim_end_matches('/');
        if root.is_empty() {
            return None;
        }
        let Some(rest) = text.strip_prefix(root).and_then(|r| r.strip_prefix('/')) else {
            continue;
        };
        if best.is_none_or(|(len, _)| root.len() > len) {
            best = Some((root.len(), rest));
        }
    }
    let (_, rest) = best?;
    let plain = !rest.is_empty()
        && rest
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..");
    plain.then_some(rest)
}

/// Whether a character can be part of a path written in a message: a root is cut only where
/// a path starts (`/srv/skills/` is not cut out of `/data/srv/skills/a`, nor `skills/`
/// out of `myskills/a`).
fn in_path(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '/' | '\\' | '.' | '-' | '_' | '~' | '+' | '@' | '%')
}

/// `text` with every `prefix` that starts a path removed; `None` when there is none.
fn cut_at_boundaries(text: &str, prefix: &str) -> Option<String> {
    let mut out = String::new();
    let mut copied = 0;
    for (at, _) in text.match_indices(prefix) {
        if at < copied || text[..at].chars().next_back().is_some_and(in_path) {
            continue;
        }
        out.push_str(&text[copied..at]);
        copied = at + prefix.len();
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use skill_format::Code;

    #[test]
    fn relative_paths_name_no_server_folder() {
        let sources = vec![
            Source::new("/srv/skills", "user"),
            Source::new("/srv/skills/inner", "project"),
            Source::new("/srv/one/SKILL.md", "single"),
        ];
        let rel = Paths::Relative(&sources);
        let p = |s: &str| rel.path(Path::new(s)).into_owned();
        assert_eq!(p("/srv/skills/a/SKILL.md"), "a/SKILL.md");
        assert_eq!(p("/srv/skills/inner/b/SKILL.md"), "b/SKILL.md");
        assert_eq!(p("/srv/one/SKILL.md"), "SKILL.md");
        assert_eq!(p("/etc/skills.lock"), "skills.lock");
        assert_eq!(
            p("/srv/skillsX/a.md"),
            "a.md",
            "a prefix of a name is not a folder"
        );
        assert_eq!(
            Paths::Absolute.path(Path::new("/srv/skills/a/SKILL.md")),
            "/srv/skills/a/SKILL.md"
        );
        let d = [Diagnostic::error(
            Code::LockMismatch,
            "/srv/skills/a/SKILL.md",
            "see /srv/skills/a/x.sh, /srv/skills/inner/b/y.sh and /srv/one/SKILL.md",
        )];
        let out = rel.diagnostics(&d);
        assert_eq!(out[0].path, Path::new("a/SKILL.md"));
        assert_eq!(out[0].message, "see a/x.sh, b/y.sh and SKILL.md");
        assert_eq!(Paths::Absolute.diagnostics(&d)[0], d[0]);
    }

    /// The shortcut for plain paths writes what the component walk writes, and declines
    /// everything it cannot be sure of.
    #[test]
    fn the_plain_path_shortcut_agrees_with_the_component_walk() {
        let sources = vec![
            Source::new("/srv/skills", "user"),
            Source::new("/srv/skills/inner/", "project"),
            Source::new("/srv/one/SKILL.md", "single"),
        ];
        let cases = [
            "/srv/skills/a/SKILL.md",
            "/srv/skills/inner/b/SKILL.md",
            "/srv/skills/inner",
            "/srv/skills//a/./b.md",
            "/srv/skills/a/../b.md",
            "/srv/skillsX/a.md",
            "/srv/one/SKILL.md",
            "/etc/x.md",
            "/srv/skills/",
        ];
        for case in cases {
            let path = Path::new(case);
            let shortcut = plain_rest(&sources, path);
            let walked = Paths::Relative(&sources).path(path).into_owned();
            // The walk alone: a source that is not UTF-8 (and matches nothing) turns the
            // shortcut off.
            let mut slow = sources.clone();
            let odd: &std::ffi::OsStr = std::os::unix::ffi::OsStrExt::from_bytes(b"/nowhere/\xff");
            slow.push(Source::new(std::path::PathBuf::from(odd), "odd"));
            assert_eq!(plain_rest(&slow, path), None, "{case}");
            assert_eq!(Paths::Relative(&slow).path(path), walked, "{case}");
            if let Some(rest) = shortcut {
                assert_eq!(rest, walked, "{case}");
            }
        }
        assert_eq!(
            plain_rest(&sources, Path::new("/srv/skills/inner/b/SKILL.md")),
            Some("b/SKILL.md"),
            "the deepest source wins"
        );
        assert_eq!(plain_rest(&sources, Path::new("/srv/skills//a")), None);
        assert_eq!(plain_rest(&sources, Path::new("/srv/skills/a/../b")), None);
    }

    /// A source's folder is cut only where a path starts: not out of the middle of another
    /// path, nor out of a longer folder name.
    #[test]
    fn text_cuts_roots_only_where_a_path_starts() {
        let sources = vec![
            Source::new("/srv/skills", "user"),
            Source::new("skills", "project"),
        ];
        let rel = Paths::Relative(&sources);
        let t = |s: &str| rel.text(s).into_owned();
        assert_eq!(t("/srv/skills/a/SKILL.md:3"), "a/SKILL.md:3");
        assert_eq!(
            t("see `/srv/skills/a/x.sh` (/srv/skills/b)"),
            "see `a/x.sh` (b)"
        );
        assert_eq!(t("/data/srv/skills/a.md"), "/data/srv/skills/a.md");
        assert_eq!(t("myskills/a.md and skills/b.md"), "myskills/a.md and b.md");
        assert_eq!(t("x-skills/a.md"), "x-skills/a.md");
        assert!(matches!(rel.text("nothing here"), Cow::Borrowed(_)));
    }
}
