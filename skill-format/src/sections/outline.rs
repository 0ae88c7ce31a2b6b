//! The outline of a skill body: every ATX heading outside fenced code, with its level, its
//! path of ancestor headings, a stable slug and the byte range of its section (the heading
//! line up to the next heading of the same or a higher level, so subsections are inside).
//!
//! This is what section-level disclosure serves: a large skill's outline first, then one
//! section by slug. Slugs follow GitHub's anchors (lowercase; letters, digits, `-` and `_`
//! kept; spaces become `-`; other characters dropped) and a repeated slug gets `-1`, `-2`, ...
//! in body order, skipping any suffix another heading already has. A heading whose text
//! leaves nothing gets [`EMPTY_SLUG`]. Setext headings are not recognised (as in
//! [`sections`](super::sections)), so a `---` line under text is never a section.
//!
//! An outline holds at most [`MAX_OUTLINE_SECTIONS`] headings: a 4 MiB body of `#` lines
//! has two million, and its outline was a 199 MB answer. Headings past the limit are
//! counted ([`Outline::total`]) but are text of the sections above them.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use super::markdown::{Fence, LineClass, Lines, atx_heading};

/// The slug of a heading whose text has no letter, digit, `-` or `_` (before the
/// duplicate suffix).
pub const EMPTY_SLUG: &str = "section";

/// The most headings an outline holds. The largest real skill in the corpus has 105 (a
/// reference file 171); past this, headings are counted, and are text of the section
/// above them. At the limit an outline is about 100 KB of JSON for one-word titles.
pub const MAX_OUTLINE_SECTIONS: usize = 1_000;

/// The most characters of a heading's text an outline keeps, in its title, its path and its
/// slug (the rest of the line is left out). Each heading's path repeats its ancestors'
/// titles, so 1,000 headings under one 4 MB title came to 4 GB; with this cap an outline is
/// at most about [`MAX_OUTLINE_SECTIONS`] x 6 x 200 characters of titles.
pub const MAX_TITLE_CHARS: usize = 200;

/// The first [`MAX_TITLE_CHARS`] characters of `text`.
fn clip(text: &str) -> &str {
    match text.char_indices().nth(MAX_TITLE_CHARS) {
        Some((end, _)) => text.get(..end).unwrap_or(text),
        None => text,
    }
}

/// A body's outline: its first [`MAX_OUTLINE_SECTIONS`] headings, and how many it has.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outline {
    /// The headings in body order, at most [`MAX_OUTLINE_SECTIONS`].
    pub headings: Vec<Heading>,
    /// Every heading of the body, those past the limit included.
    pub total: usize,
}

impl Outline {
    /// Whether the body has more headings than the outline holds.
    pub fn truncated(&self) -> bool {
        self.total > self.headings.len()
    }
}

/// One heading of a body and the section it opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// 1 for `#`, up to 6.
    pub level: u8,
    /// The heading's text, trimmed, without the `#`s, at most [`MAX_TITLE_CHARS`]
    /// characters.
    pub title: String,
    /// The titles of the enclosing headings, outermost first, then this one.
    pub path: Vec<String>,
    /// A slug unique within the body.
    pub slug: String,
    /// 1-based line of the heading, relative to the body.
    pub line: u32,
    /// Bytes of the body the section covers: from the start of the heading line to the
    /// start of the next heading of the same or a higher level (or the end of the body).
    pub range: Range<usize>,
}

/// The headings of `body` in order, with their sections, up to [`MAX_OUTLINE_SECTIONS`]
/// (the rest counted). Headings inside fenced code blocks (backticks or tildes, closed or
/// running to the end) are not headings. Linear in the body's length.
pub fn outline(body: &str) -> Outline {
    let mut found: Vec<Heading> = Vec::new();
    let mut total = 0usize;
    // Indexes into `found` of the headings still open, outermost first.
    let mut open: Vec<usize> = Vec::new();
    let mut fence = Fence::default();
    for line in Lines::new(body, 1) {
        if fence.classify(line.text) != LineClass::Text {
            continue;
        }
        let Some((level, text)) = atx_heading(line.text) else {
            continue;
        };
        let text = clip(text);
        total += 1;
        if found.len() >= MAX_OUTLINE_SECTIONS {
            continue;
        }
        let level = u8::try_from(level).unwrap_or(6);
        while let Some(&last) = open.last() {
            if found.get(last).is_some_and(|h| h.level >= level) {
                if let Some(h) = found.get_mut(last) {
                    h.range.end = line.start;
                }
                open.pop();
            } else {
                break;
            }
        }
        let mut path: Vec<String> = open
            .iter()
            .filter_map(|&i| found.get(i).map(|h| h.title.clone()))
            .collect();
        path.push(text.to_owned());
        open.push(found.len());
        found.push(Heading {
            level,
            title: text.to_owned(),
            path,
            slug: String::new(),
            line: line.number,
            range: line.start..body.len(),
        });
    }
    assign_slugs(&mut found);
    Outline {
        headings: found,
        total,
    }
}

/// GitHub's anchor text for a heading, before duplicates are numbered.
pub fn slugify(title: &str) -> String {
    let mut out = String::with_capacity(title.len());
    for c in strip_link_targets(title).chars() {
        if c.is_alphanumeric() || c == '-' || c == '_' {
            out.extend(c.to_lowercase());
        } else if c == ' ' {
            out.push('-');
        }
    }
    out
}

/// `[text](target)` as `text`: a link's target is not part of its anchor.
fn strip_link_targets(title: &str) -> String {
    let mut out = String::with_capacity(title.len());
    let mut rest = title;
    while let Some(at) = rest.find("](") {
        let (before, after) = rest.split_at(at);
        out.push_str(before);
        match after.find(')') {
            Some(close) => rest = after.get(close + 1..).unwrap_or(""),
            None => {
                rest = after;
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
thread_local! {
    /// Failed slug probes, counted so a test can show they grow linearly.
    static PROBES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn assign_slugs(headings: &mut [Heading]) {
    let bases: Vec<String> = headings
        .iter()
        .map(|h| {
            let s = slugify(&h.title);
            if s.is_empty() {
                EMPTY_SLUG.to_owned()
            } else {
                s
            }
        })
        .collect();
    let mut taken: HashSet<String> = HashSet::with_capacity(headings.len());
    // The last suffix tried for each base: a later heading with the same base starts there
    // (every slug below it is still taken), so n headings of one title cost n probes in
    // all, not n^2 / 2 (40,000 `## Same` headings took minutes).
    let mut last: HashMap<String, u32> = HashMap::new();
    for (h, base) in headings.iter_mut().zip(bases) {
        let mut n = last.get(&base).copied().unwrap_or(0);
        let mut slug = if n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        };
        while taken.contains(&slug) {
            n += 1;
            slug = format!("{base}-{n}");
            #[cfg(test)]
            PROBES.with(|p| p.set(p.get() + 1));
        }
        taken.insert(slug.clone());
        last.insert(base, n);
        h.slug = slug;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn slugs(body: &str) -> Vec<String> {
        outline(body).headings.into_iter().map(|h| h.slug).collect()
    }

    /// A title keeps its first `MAX_TITLE_CHARS` characters (multi-byte ones cut whole),
    /// and so do the paths that repeat it: the review's body, one 4 MB title over 999
    /// subsections, needed 4 GB.
    #[test]
    fn titles_are_cut_at_their_limit() {
        let at = "é".repeat(MAX_TITLE_CHARS);
        let o = outline(&format!("# {at}\n## b\n"));
        assert_eq!(o.headings[0].title, at);
        let over = format!("{at}x");
        let o = outline(&format!("# {over}\n## b\n"));
        assert_eq!(o.headings[0].title, at);
        assert_eq!(o.headings[1].path, vec![at.clone(), "b".to_owned()]);
        let huge = format!("# {}\n{}", "t".repeat(4_000_000), "## a\n".repeat(999));
        let o = outline(&huge);
        let kept: usize = o
            .headings
            .iter()
            .map(|h| h.title.len() + h.slug.len() + h.path.iter().map(String::len).sum::<usize>())
            .sum();
        assert!(kept < 1_000_000, "{kept} bytes of titles");
    }

    /// At the limit every heading is listed; one more is counted, and its text belongs
    /// to the section above it. The issue's body: 4 MiB of `#` lines (two million
    /// headings) gives an outline of the limit's size.
    #[test]
    fn an_outline_holds_at_most_its_limit_of_headings() {
        let body = |n: usize| "# A\ntext\n".repeat(n);
        let at = outline(&body(MAX_OUTLINE_SECTIONS));
        assert_eq!(at.headings.len(), MAX_OUTLINE_SECTIONS);
        assert_eq!(at.total, MAX_OUTLINE_SECTIONS);
        assert!(!at.truncated());
        let over_body = body(MAX_OUTLINE_SECTIONS + 1);
        let over = outline(&over_body);
        assert_eq!(over.headings.len(), MAX_OUTLINE_SECTIONS);
        assert_eq!(over.total, MAX_OUTLINE_SECTIONS + 1);
        assert!(over.truncated());
        let last = &over.headings[MAX_OUTLINE_SECTIONS - 1];
        assert_eq!(&over_body[last.range.clone()], "# A\ntext\n# A\ntext\n");
        let flood = "#\n".repeat(2 * 1024 * 1024);
        let o = outline(&flood);
        assert_eq!(
            (o.headings.len(), o.total),
            (MAX_OUTLINE_SECTIONS, 2 * 1024 * 1024)
        );
    }

    #[test]
    fn nested_sections_contain_their_subsections() {
        let body = "intro\n# A\na\n## B\nb\n### C\nc\n## D\nd\n# E\n";
        let o = outline(body).headings;
        let titles: Vec<&str> = o.iter().map(|h| h.title.as_str()).collect();
        assert_eq!(titles, ["A", "B", "C", "D", "E"]);
        assert_eq!(
            &body[o[0].range.clone()],
            "# A\na\n## B\nb\n### C\nc\n## D\nd\n"
        );
        assert_eq!(&body[o[1].range.clone()], "## B\nb\n### C\nc\n");
        assert_eq!(&body[o[2].range.clone()], "### C\nc\n");
        assert_eq!(&body[o[4].range.clone()], "# E\n");
        assert_eq!(o[2].path, ["A", "B", "C"]);
        assert_eq!(o[3].path, ["A", "D"]);
        assert_eq!(o[2].line, 6);
    }

    #[test]
    fn fences_hide_headings() {
        let body = "# Real\n```sh\n# comment\n```\n~~~\n## not\n~~~\n````\n```\n# still code\n````\n## Also real\n";
        assert_eq!(slugs(body), ["real", "also-real"]);
        // An unclosed fence runs to the end.
        assert_eq!(slugs("# A\n~~~\n# B\n"), ["a"]);
    }

    #[test]
    fn duplicates_are_numbered_as_github_does() {
        assert_eq!(
            slugs("# Usage\n## Usage\n# Usage\n"),
            ["usage", "usage-1", "usage-2"]
        );
        // A numbered slug that a later heading spells out is not reused.
        assert_eq!(slugs("# A\n# A\n# A-1\n"), ["a", "a-1", "a-1-1"]);
        assert_eq!(slugs("# !!!\n# ???\n"), ["section", "section-1"]);
    }

    /// The slugs are those of trying every suffix from 0 (the rule as written), and the
    /// failed probes grow linearly with repeated titles (they grew quadratically).
    #[test]
    fn repeated_titles_get_the_same_slugs_in_linear_probes() {
        fn reference(titles: &[&str]) -> Vec<String> {
            let mut taken = HashSet::new();
            titles
                .iter()
                .map(|t| {
                    let base = slugify(t);
                    let mut slug = base.clone();
                    let mut n = 0;
                    while taken.contains(&slug) {
                        n += 1;
                        slug = format!("{base}-{n}");
                    }
                    taken.insert(slug.clone());
                    slug
                })
                .collect()
        }
        let titles = [
            "A", "A-2", "A", "A", "A-1", "A", "B", "A-1", "A-1", "B-1", "B", "B", "A",
        ];
        let body: String = titles.iter().map(|t| format!("## {t}\n")).collect();
        assert_eq!(slugs(&body), reference(&titles));
        for n in [250, MAX_OUTLINE_SECTIONS] {
            PROBES.with(|p| p.set(0));
            let o = outline(&"## Same\n".repeat(n)).headings;
            assert_eq!(
                o.last().map(|h| h.slug.clone()),
                Some(format!("same-{}", n - 1))
            );
            assert_eq!(PROBES.with(std::cell::Cell::get), n - 1, "{n} headings");
        }
    }

    #[test]
    fn slugs_keep_letters_and_drop_punctuation() {
        assert_eq!(slugify("Step 2: `git push`!"), "step-2-git-push");
        assert_eq!(slugify("Über Größe"), "über-größe");
        assert_eq!(slugify("See [the docs](https://x.y/z)"), "see-the-docs");
        assert_eq!(slugify("snake_case and-dash"), "snake_case-and-dash");
    }

    #[test]
    fn setext_and_indented_lines_are_not_headings() {
        assert!(outline("Title\n=====\n\nSub\n---\n").headings.is_empty());
        assert!(
            outline("    # indented code\n#nospace\n")
                .headings
                .is_empty()
        );
    }

    #[test]
    fn crlf_bodies_keep_their_line_endings_in_ranges() {
        let body = "# A\r\nx\r\n# B\r\n";
        let o = outline(body).headings;
        assert_eq!(&body[o[0].range.clone()], "# A\r\nx\r\n");
        assert_eq!(&body[o[1].range.clone()], "# B\r\n");
    }
}
