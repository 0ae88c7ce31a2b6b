//! JSON shapes of section-level disclosure: a skill's outline and one section, the same
//! over HTTP, the command line's `--format json` and MCP.

use serde::Serialize;
use skill_registry::{Outline, OutlineSection, SectionText};

/// One section of an outline.
#[derive(Debug, Serialize)]
pub struct OutlineSectionShape<'a> {
    /// The slug to ask for it by.
    pub slug: &'a str,
    /// The heading's text.
    pub title: &'a str,
    /// The heading level, 1 to 6.
    pub level: u8,
    /// The enclosing headings' texts, outermost first, then this one.
    pub path: &'a [String],
    /// 1-based line of the heading in the skill file.
    pub line: u32,
    /// Characters of the section, subsections included.
    pub chars: u64,
    /// Estimated tokens of the section.
    pub tokens: u64,
}

impl<'a> From<&'a OutlineSection> for OutlineSectionShape<'a> {
    fn from(s: &'a OutlineSection) -> Self {
        OutlineSectionShape {
            slug: &s.slug,
            title: &s.title,
            level: s.level,
            path: &s.path,
            line: s.line,
            chars: s.chars,
            tokens: s.tokens,
        }
    }
}

/// `GET /v1/skills/{name}/outline`.
#[derive(Debug, Serialize)]
pub struct OutlineShape<'a> {
    /// The skill.
    pub name: &'a str,
    /// Characters of the whole body.
    pub chars: u64,
    /// Estimated tokens of the whole body.
    pub tokens: u64,
    /// The sections in body order, at most `MAX_OUTLINE_SECTIONS` (1,000).
    pub sections: Vec<OutlineSectionShape<'a>>,
    /// Every heading of the body, those past the limit included.
    pub total_sections: usize,
    /// Whether the body has more headings than `sections` lists (the text under the rest
    /// belongs to the sections above them).
    pub truncated: bool,
}

impl<'a> From<&'a Outline> for OutlineShape<'a> {
    fn from(o: &'a Outline) -> Self {
        OutlineShape {
            name: &o.name,
            chars: o.chars,
            tokens: o.tokens,
            sections: o.sections.iter().map(OutlineSectionShape::from).collect(),
            total_sections: o.total_sections,
            truncated: o.total_sections > o.sections.len(),
        }
    }
}

/// `GET /v1/skills/{name}/sections/{slug}`.
#[derive(Debug, Serialize)]
pub struct SectionShape<'a> {
    /// The skill.
    pub name: &'a str,
    /// The section's place in the outline.
    #[serde(flatten)]
    pub section: OutlineSectionShape<'a>,
    /// The heading line and everything up to the next heading of the same or a higher
    /// level.
    pub text: &'a str,
}

impl<'a> From<&'a SectionText> for SectionShape<'a> {
    fn from(s: &'a SectionText) -> Self {
        SectionShape {
            name: &s.name,
            section: OutlineSectionShape::from(&s.section),
            text: &s.text,
        }
    }
}
