//! The outline types a skill keeps ([`SectionCache`]): its outline and the bytes each section
//! covers, computed once by `disclose` on first use. They sit below both `skill` (which holds
//! the cache) and `disclose` (which fills it), so neither depends on the other.

use std::ops::Range;
use std::sync::{Arc, OnceLock};

/// One section of a skill's outline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutlineSection {
    /// The heading level, 1 to 6.
    pub level: u8,
    /// The heading's text.
    pub title: String,
    /// The enclosing headings' texts, outermost first, then this one.
    pub path: Vec<String>,
    /// The slug to ask for it by, unique within the skill.
    pub slug: String,
    /// 1-based line of the heading in the skill file.
    pub line: u32,
    /// Characters of the section, its heading line and subsections included.
    pub chars: u64,
    /// Estimated tokens of the section (characters over the catalog budget's characters a
    /// token).
    pub tokens: u64,
}

/// A skill's outline (`Disclosure::outline`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outline {
    /// The skill.
    pub name: String,
    /// Characters of the whole body.
    pub chars: u64,
    /// Estimated tokens of the whole body.
    pub tokens: u64,
    /// The sections in body order (nested ones follow their parent), at most
    /// [`MAX_OUTLINE_SECTIONS`](skill_format::sections::MAX_OUTLINE_SECTIONS); headings past it are text of the sections above them.
    pub sections: Vec<OutlineSection>,
    /// Every heading of the body, those past [`MAX_OUTLINE_SECTIONS`](skill_format::sections::MAX_OUTLINE_SECTIONS) included.
    pub total_sections: usize,
}

/// A skill's outline and the bytes of its body each section covers, computed from the body
/// on first use and kept with the skill (a skill in a snapshot never changes).
///
/// Two caches always compare equal: what a skill is does not depend on whether its outline
/// was asked for yet.
#[derive(Debug, Clone, Default)]
pub struct SectionCache(pub(crate) OnceLock<Arc<Sections>>);

impl PartialEq for SectionCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// What a [`SectionCache`] keeps.
#[derive(Debug)]
pub(crate) struct Sections {
    pub(crate) outline: Outline,
    /// Beside each section of `outline`, the bytes of the body it covers.
    pub(crate) ranges: Vec<Range<usize>>,
}
