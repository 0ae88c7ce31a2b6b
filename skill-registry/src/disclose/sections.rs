//! Section-level disclosure: a skill's outline (every heading with its path, level, slug,
//! characters and estimated tokens, nested sections included) and one section's text by
//! slug, with its subsections. A large skill need not cost its whole body: the model reads
//! the outline, then the sections it needs (`get_skill: name#slug`).
//!
//! The outline comes from [`skill_format::sections::outline`]: headings inside fenced code
//! are not sections, duplicates get `-1`, `-2`, ..., and at most
//! [`MAX_OUTLINE_SECTIONS`](skill_format::sections::MAX_OUTLINE_SECTIONS) are listed (the outline says how many the body has). Token
//! estimates use [`CHARS_PER_TOKEN`], as the catalog budget does.
//!
//! A skill's outline is computed once, on first use, and kept with the skill
//! ([`SectionCache`]): a snapshot's skills never change, so every later outline, section
//! or unknown-slug answer is a lookup, not a parse of the body (a 4 MiB body took 6 s a
//! request).

use std::sync::Arc;

use skill_format::sections::outline;

use super::{CHARS_PER_TOKEN, Disclosure};
use crate::error::Error;
use crate::outline::Sections;
pub use crate::outline::{Outline, OutlineSection, SectionCache};
use crate::skill::Skill;

/// The most valid slugs an unknown-slug error names; the rest are counted.
pub const MAX_LISTED_SLUGS: usize = 50;

/// The separator between a skill's name and a section slug in `get_skill: name#slug`.
pub const SECTION_SEPARATOR: char = '#';

/// One section's text ([`Disclosure::section`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionText {
    /// The skill.
    pub name: String,
    /// The section's place in the outline.
    pub section: OutlineSection,
    /// The heading line and everything up to the next heading of the same or a higher
    /// level, byte for byte.
    pub text: String,
}

/// Estimated tokens of `chars` characters.
pub(crate) fn tokens_of(chars: u64) -> u64 {
    chars.div_ceil(CHARS_PER_TOKEN)
}

fn chars(text: &str) -> u64 {
    u64::try_from(text.chars().count()).unwrap_or(u64::MAX)
}

#[cfg(test)]
thread_local! {
    /// Outlines computed from a body, counted so a test can show a skill's is computed once.
    static COMPUTED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The outline of a skill and, beside each section, the bytes of the body it covers.
fn sections_of(skill: &Skill) -> Sections {
    #[cfg(test)]
    COMPUTED.with(|c| c.set(c.get() + 1));
    let body = skill.body.as_str();
    let first_line = skill.body_line.saturating_sub(1);
    let found = outline(body);
    let mut ranges = Vec::with_capacity(found.headings.len());
    let sections = found
        .headings
        .into_iter()
        .map(|h| {
            let n = chars(body.get(h.range.clone()).unwrap_or(""));
            ranges.push(h.range);
            OutlineSection {
                level: h.level,
                title: h.title,
                path: h.path,
                slug: h.slug,
                line: h.line.saturating_add(first_line),
                chars: n,
                tokens: tokens_of(n),
            }
        })
        .collect();
    let n = chars(body);
    Sections {
        outline: Outline {
            name: skill.name.clone(),
            chars: n,
            tokens: tokens_of(n),
            sections,
            total_sections: found.total,
        },
        ranges,
    }
}

impl Skill {
    /// The skill's sections, computed on the first call and kept.
    fn sections(&self) -> &Sections {
        self.outline_cache
            .0
            .get_or_init(|| Arc::new(sections_of(self)))
    }

    /// This skill's outline, whoever asks (a [`Disclosure`] checks the caller first).
    /// Computed from the body once; later calls copy it (at most
    /// [`MAX_OUTLINE_SECTIONS`](skill_format::sections::MAX_OUTLINE_SECTIONS) sections).
    pub fn outline(&self) -> Outline {
        self.sections().outline.clone()
    }

    /// One section of this skill by slug, with its subsections, whoever asks. An unknown
    /// slug is [`Error::UnknownSection`], naming the valid ones.
    pub fn section(&self, slug: &str) -> Result<SectionText, Error> {
        let slug = slug.trim();
        let all = self.sections();
        let listed = &all.outline.sections;
        if let Some((section, range)) = listed.iter().zip(&all.ranges).find(|(s, _)| s.slug == slug)
        {
            return Ok(SectionText {
                name: self.name.clone(),
                section: section.clone(),
                text: self.body.get(range.clone()).unwrap_or("").to_owned(),
            });
        }
        Err(Error::UnknownSection {
            skill: self.name.clone(),
            slug: slug.to_owned(),
            valid: listed
                .iter()
                .take(MAX_LISTED_SLUGS)
                .map(|s| s.slug.clone())
                .collect(),
            more: listed.len().saturating_sub(MAX_LISTED_SLUGS),
        })
    }
}

impl Outline {
    /// The outline as text for the model: one line per section, indented by level, with
    /// its slug and estimated tokens, then how to ask for a section.
    pub fn render(&self) -> String {
        let mut out = format!(
            "# {} outline ({} sections, ~{} tokens in all)\n\n",
            self.name,
            self.sections.len(),
            self.tokens
        );
        if self.sections.is_empty() {
            out.push_str("(no sections: the body has no headings)\n");
        }
        if self.total_sections > self.sections.len() {
            out.push_str(&format!(
                "(the first {} of {} headings; the text under the rest belongs to the sections above them)\n",
                self.sections.len(),
                self.total_sections
            ));
        }
        let top = self.sections.iter().map(|s| s.level).min().unwrap_or(1);
        for s in &self.sections {
            let indent = "  ".repeat(usize::from(s.level.saturating_sub(top)));
            out.push_str(&format!(
                "{indent}- {} [#{}] ~{} tokens\n",
                s.title, s.slug, s.tokens
            ));
        }
        out.push_str(&format!(
            "\nUse: get_skill: {}#<slug> for one section (with its subsections)\n",
            self.name
        ));
        out
    }
}

impl Disclosure<'_> {
    /// The outline of a skill this caller may use.
    pub fn outline(&self, name: &str) -> Result<Outline, Error> {
        self.skill(name).map(|s| s.outline())
    }

    /// One section of a skill this caller may use, by slug, with its subsections. An
    /// unknown slug is [`Error::UnknownSection`], naming the valid ones.
    pub fn section(&self, name: &str, slug: &str) -> Result<SectionText, Error> {
        self.skill(name)?.section(slug)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::{RegistryConfig, Snapshot, Source, load_snapshot};

    fn snapshot(body: &str) -> (tempfile::TempDir, Snapshot) {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("big");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            format!("---\nname: big\ndescription: A big skill.\n---\n{body}"),
        )
        .unwrap();
        let s = load_snapshot(
            &RegistryConfig::with_sources(vec![Source::new(dir.path(), "user")]),
            1,
        );
        (dir, s)
    }

    #[test]
    fn outline_counts_chars_and_tokens_per_section() {
        let (_d, s) = snapshot("# Big\n\n## One\n12345678\n### Deep\nx\n## One\ny\n");
        let o = Disclosure::new(&s).outline("big").unwrap();
        let slugs: Vec<&str> = o.sections.iter().map(|s| s.slug.as_str()).collect();
        assert_eq!(slugs, ["big", "one", "deep", "one-1"]);
        // "## One\n12345678\n### Deep\nx\n" is 27 characters: 7 tokens at 4 a token.
        assert_eq!((o.sections[1].chars, o.sections[1].tokens), (27, 7));
        assert_eq!(o.sections[2].path, ["Big", "One", "Deep"]);
        // The frontmatter is 4 lines: the body's first heading is line 5 of the file.
        assert_eq!(o.sections[0].line, 5);
        let text = o.render();
        assert!(text.contains("    - Deep [#deep] ~3 tokens\n"), "{text}");
        assert!(text.contains("get_skill: big#<slug>"), "{text}");
    }

    #[test]
    fn a_section_comes_with_its_subsections() {
        let (_d, s) = snapshot("# Big\n## One\na\n### Deep\nb\n## Two\nc\n");
        let d = Disclosure::new(&s);
        let one = d.section("big", "one").unwrap();
        assert_eq!(one.text, "## One\na\n### Deep\nb\n");
        assert_eq!(one.section.title, "One");
        assert_eq!(d.get_skill(Some("big#two")).unwrap(), "## Two\nc\n");
        assert_eq!(
            d.get_skill(Some("big")).unwrap(),
            s.get("big").unwrap().body
        );
    }

    #[test]
    fn an_unknown_slug_names_the_valid_ones() {
        let (_d, s) = snapshot("# Big\n## One\n");
        let e = Disclosure::new(&s).section("big", "tow").unwrap_err();
        assert!(
            matches!(&e, Error::UnknownSection { valid, more: 0, .. } if valid == &["big", "one"])
        );
        assert_eq!(
            e.to_string(),
            "Skill 'big' has no section 'tow'. Sections: big, one"
        );
        assert!(matches!(
            Disclosure::new(&s).get_skill(Some("nosuch#one")),
            Err(Error::UnknownSkill { .. })
        ));
    }

    /// A skill's outline is computed once: a second outline, a section and an unknown slug
    /// are lookups (a 4 MiB body was parsed again for each, 6 s a request).
    #[test]
    fn an_outline_is_computed_once_per_skill() {
        let (_d, s) = snapshot("# Big\n## One\na\n## Two\nb\n");
        let d = Disclosure::new(&s);
        COMPUTED.with(|c| c.set(0));
        let first = d.outline("big").unwrap();
        assert_eq!(COMPUTED.with(std::cell::Cell::get), 1);
        assert_eq!(d.outline("big").unwrap(), first);
        assert_eq!(d.section("big", "two").unwrap().text, "## Two\nb\n");
        assert!(d.section("big", "nope").is_err());
        assert_eq!(COMPUTED.with(std::cell::Cell::get), 1);
        // A clone of the skill (a later snapshot reusing it) keeps what was computed.
        let copy = (*s.get("big").unwrap()).clone();
        assert_eq!(copy.outline(), first);
        assert_eq!(COMPUTED.with(std::cell::Cell::get), 1);
    }

    /// The body: 4 MiB of `#` lines. The outline lists the limit's sections and
    /// says how many headings there are; its rendering says so too.
    #[test]
    fn a_flood_of_headings_gives_a_bounded_outline() {
        use skill_format::sections::MAX_OUTLINE_SECTIONS;
        let lines = 2 * 1024 * 1024 - 64;
        let (_d, s) = snapshot(&"#\n".repeat(lines));
        let o = Disclosure::new(&s).outline("big").unwrap();
        assert_eq!(o.sections.len(), MAX_OUTLINE_SECTIONS);
        assert_eq!(o.total_sections, lines);
        let text = o.render();
        assert!(
            text.contains(&format!("(the first 1000 of {lines} headings;")),
            "{}",
            &text[..200]
        );
        assert!(text.len() < 64 * 1024, "{}", text.len());
        // The last listed section holds the text of the headings past the limit.
        let last = &o.sections[MAX_OUTLINE_SECTIONS - 1];
        assert_eq!(last.chars, u64::try_from(2 * (lines - 999)).unwrap());
        let err = Disclosure::new(&s)
            .section("big", "section-5000")
            .unwrap_err();
        assert!(
            matches!(err, Error::UnknownSection { more, .. } if more == MAX_OUTLINE_SECTIONS - MAX_LISTED_SLUGS)
        );
    }

    #[test]
    fn the_slug_list_in_an_error_stops_at_its_limit() {
        for count in [MAX_LISTED_SLUGS, MAX_LISTED_SLUGS + 1] {
            let body: String = (0..count).map(|i| format!("# H{i}\n")).collect();
            let (_d, s) = snapshot(&body);
            match Disclosure::new(&s).section("big", "none") {
                Err(Error::UnknownSection { valid, more, .. }) => {
                    assert_eq!(valid.len(), MAX_LISTED_SLUGS);
                    assert_eq!(more, count - MAX_LISTED_SLUGS);
                }
                other => panic!("{other:?}"),
            }
        }
    }
}
