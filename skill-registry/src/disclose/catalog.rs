//! The catalog for the system prompt, fitted to a character budget.
//!
//! Fitting, in order (deterministic for the same snapshot and options):
//! 1. Every entry is capped at [`Budget::entry_cap_chars`]: its description is shortened so
//!    the entry's text fits (the description is all that is cut: an entry whose other
//!    parts alone exceed the cap keeps them, with an empty description).
//! 2. Entries are taken in priority order (skills proactive for the profile first, then by
//!    name) while each still fits with its description cut to [`MIN_DESCRIPTION_CHARS`];
//!    from the first that does not fit on, the rest are **omitted** (and named in the report,
//!    and, in markdown, counted in a closing line).
//! 3. The kept entries get the longest common description length that fits the budget:
//!    longer descriptions are **shortened** first, at a word boundary, ending in
//!    [`TRUNCATION_MARK`]; descriptions shorter than that length are untouched.
//!
//! The text never exceeds the budget (counted in characters, i.e. Unicode scalar values). A
//! budget too small for even the format's frame gives an empty text and omits everything.
//! Entries appear in output order: markdown lists folder skills by name, then each actions
//! domain with its skills; XML and JSON list every entry by name.

use std::borrow::Cow;
use std::path::PathBuf;

use serde::Serialize;

use super::tiers::{DOMAIN_USAGE, brief};
use super::{CHARS_PER_TOKEN, Disclosure, one_line};
use crate::eligibility::Affinity;
use crate::skill::Skill;

/// The budget when neither a char budget nor a context window is given.
pub const DEFAULT_BUDGET_CHARS: usize = 16_000;
/// The default cap on one entry's text.
pub const DEFAULT_ENTRY_CAP_CHARS: usize = 1_536;
/// The share of the context window the catalog may use, in percent (pegasus: 2%).
pub const CONTEXT_WINDOW_PERCENT: u64 = 2;
/// Descriptions are not shortened below this many characters; entries are omitted instead.
pub const MIN_DESCRIPTION_CHARS: usize = 40;
/// Ends a shortened description.
pub const TRUNCATION_MARK: &str = "…";

/// The catalog's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CatalogFormat {
    /// `- name: description` lines; actions skills grouped by domain, with the `get_skill`
    /// usage lines (markdown-first 10.2).
    #[default]
    Markdown,
    /// The Agent Skills `<available_skills>` block, byte for byte as the reference library's
    /// `to-prompt` prints it.
    Xml,
    /// A compact JSON array of `{name, description, location, domain}` objects.
    Json,
}

/// How much room the catalog has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Budget {
    /// The budget in characters; wins over `context_window_tokens`.
    pub budget_chars: Option<usize>,
    /// The model's context window: the budget is [`CONTEXT_WINDOW_PERCENT`] of it, at
    /// [`CHARS_PER_TOKEN`] characters per token.
    pub context_window_tokens: Option<u64>,
    /// The cap on one entry's text ([`DEFAULT_ENTRY_CAP_CHARS`] when `None`). Only the
    /// description is cut to meet it: the rest of an entry (name, location, and in JSON
    /// its `when_to_use`/`when_not_to_use` lists) is kept whole, so a cap smaller than
    /// that leaves the description empty and the entry longer than the cap (it is still
    /// reported as shortened, and the whole catalog still never exceeds the budget).
    pub entry_cap_chars: Option<usize>,
}

impl Budget {
    /// The budget in characters: `budget_chars`, else 2% of the context window x 4, else
    /// [`DEFAULT_BUDGET_CHARS`].
    pub fn chars(&self) -> usize {
        if let Some(c) = self.budget_chars {
            return c;
        }
        match self.context_window_tokens {
            Some(tokens) => {
                // One rounding, at the end: 2% of 1,049 tokens x 4 is 83 chars, not 82.
                let chars = tokens.saturating_mul(CHARS_PER_TOKEN * CONTEXT_WINDOW_PERCENT) / 100;
                usize::try_from(chars).unwrap_or(usize::MAX)
            }
            None => DEFAULT_BUDGET_CHARS,
        }
    }

    /// The per-entry cap in characters.
    pub fn entry_cap(&self) -> usize {
        self.entry_cap_chars.unwrap_or(DEFAULT_ENTRY_CAP_CHARS)
    }
}

/// What fitting the budget did: nothing is dropped without being named here.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct BudgetReport {
    /// The budget in characters.
    pub budget_chars: usize,
    /// Characters the text uses.
    pub used_chars: usize,
    /// Skills that could be listed (before fitting).
    pub candidates: usize,
    /// Listed skills, in output order.
    pub included: Vec<String>,
    /// Listed skills whose description was shortened, by name.
    pub truncated: Vec<String>,
    /// Skills left out to fit the budget, by name.
    pub omitted: Vec<String>,
}

impl BudgetReport {
    /// Whether every candidate is listed with its whole description.
    pub fn is_complete(&self) -> bool {
        self.truncated.is_empty() && self.omitted.is_empty()
    }
}

/// One listed skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CatalogEntry {
    /// The skill's name.
    pub name: String,
    /// The description as listed (shortened when `truncated`).
    pub description: String,
    /// The skill file's absolute, resolved path.
    pub location: PathBuf,
    /// Its actions domain, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether the description was shortened.
    pub truncated: bool,
    /// The skill's `when_to_use` entries (JSON only; left out when empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub when_to_use: Vec<String>,
    /// The skill's `when_not_to_use` entries (JSON only; left out when empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub when_not_to_use: Vec<String>,
}

/// A rendered catalog and what fitting it did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalog {
    /// The format of `text`.
    pub format: CatalogFormat,
    /// The text to put in the prompt.
    pub text: String,
    /// The listed entries, in output order.
    pub entries: Vec<CatalogEntry>,
    /// The budget report.
    pub report: BudgetReport,
}

/// A candidate entry, before fitting.
#[derive(Clone)]
struct Candidate<'a> {
    skill: &'a Skill,
    /// The full description, one line for markdown.
    description: Cow<'a, str>,
    description_chars: usize,
    location: PathBuf,
    /// Characters of the entry's text other than the description.
    fixed: usize,
    /// The same for a shortened description (JSON marks it `"truncated":true`).
    fixed_cut: usize,
    /// Characters the whole description takes, escaped.
    full_cost: usize,
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// Python's `html.escape(s, quote=True)`.
fn xml_escape(s: &str) -> Cow<'_, str> {
    if !s.contains(['&', '<', '>', '"', '\'']) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Where [`shorten`] cuts `text` (whose length in characters is `len`) for at most `max`
/// characters: the kept head (without the mark), and whether it was cut at all.
fn cut_point(text: &str, len: usize, max: usize) -> (&str, bool) {
    if len <= max {
        return (text, false);
    }
    let mark = chars(TRUNCATION_MARK);
    if max < mark {
        return ("", true);
    }
    let room = max - mark;
    let cut = text.char_indices().nth(room).map_or(text.len(), |(i, _)| i);
    let head = &text[..cut];
    let next_is_space = text[cut..].starts_with(char::is_whitespace);
    let head = if next_is_space {
        head
    } else {
        match head.rfind(char::is_whitespace) {
            Some(i) if i > 0 => &head[..i],
            _ => head,
        }
    };
    let head = head.trim_end_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':'));
    (head, true)
}

/// The first `max` characters of `text`, cut back to a word boundary when there is one,
/// with the mark appended; `text` itself when it is short enough.
fn shorten(text: &str, max: usize) -> (Cow<'_, str>, bool) {
    match cut_point(text, chars(text), max) {
        (head, false) => (Cow::Borrowed(head), false),
        ("", true) if max < chars(TRUNCATION_MARK) => (Cow::Borrowed(""), true),
        (head, true) => (Cow::Owned(format!("{head}{TRUNCATION_MARK}")), true),
    }
}

/// The length in characters of `text` once escaped for the format.
fn escaped_chars(format: CatalogFormat, text: &str) -> usize {
    match format {
        CatalogFormat::Markdown => chars(text),
        CatalogFormat::Xml => text
            .chars()
            .map(|c| match c {
                '&' => 5,
                '<' | '>' => 4,
                '"' | '\'' => 6,
                _ => 1,
            })
            .sum(),
        CatalogFormat::Json => text
            .chars()
            .map(|c| match c {
                '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
                c if u32::from(c) < 0x20 => 6,
                _ => 1,
            })
            .sum(),
    }
}

/// The pieces of one format's text; the text is their concatenation, so costs add up.
struct Layout {
    format: CatalogFormat,
}

impl Layout {
    /// The frame present whenever the text is not empty.
    fn frame(&self) -> (&'static str, &'static str) {
        match self.format {
            CatalogFormat::Markdown => ("", ""),
            CatalogFormat::Xml => ("<available_skills>", "\n</available_skills>"),
            CatalogFormat::Json => ("[", "]"),
        }
    }

    /// One entry's text; `truncated` tells whether `description` was shortened.
    fn entry(&self, c: &Candidate<'_>, description: &str, truncated: bool) -> String {
        match self.format {
            CatalogFormat::Markdown if c.description.is_empty() => {
                format!("- {}\n", one_line(&c.skill.name))
            }
            CatalogFormat::Markdown => format!("- {}: {description}\n", one_line(&c.skill.name)),
            CatalogFormat::Xml => format!(
                "\n<skill>\n<name>\n{}\n</name>\n<description>\n{}\n</description>\n<location>\n{}\n</location>\n</skill>",
                xml_escape(&c.skill.name),
                xml_escape(description),
                c.location.display()
            ),
            CatalogFormat::Json => {
                let e = CatalogEntry {
                    name: c.skill.name.clone(),
                    description: description.to_owned(),
                    location: c.location.clone(),
                    domain: c.skill.domain.clone(),
                    truncated,
                    when_to_use: c.skill.manifest.when_to_use.clone(),
                    when_not_to_use: c.skill.manifest.when_not_to_use.clone(),
                };
                // The comma that separates it from the previous entry is counted with it.
                format!(",{}", serde_json::to_string(&e).unwrap_or_default())
            }
        }
    }

    /// Fixed text of one group (a domain, or the folder skills), present when any of its
    /// entries is listed. `first_block` tells whether it opens the markdown text.
    fn group(&self, domain: Option<&Skill>, name: Option<&str>) -> String {
        if self.format != CatalogFormat::Markdown {
            return String::new();
        }
        match (name, domain) {
            (None, _) => "Available skills:\n".to_owned(),
            (Some(d), Some(index)) => format!("\n{d}: {}\n", one_line(&index.description)),
            (Some(d), None) => format!("\n{d}:\n"),
        }
    }

    /// Fixed text present when any domain entry is listed.
    fn domains_block(&self) -> (&'static str, &'static str) {
        match self.format {
            CatalogFormat::Markdown => ("Available skill domains:\n", DOMAIN_USAGE_WITH_GAP),
            _ => ("", ""),
        }
    }

    fn trailer(&self, omitted: usize) -> String {
        match self.format {
            CatalogFormat::Markdown if omitted > 0 => format!(
                "\n({omitted} more skill(s) not listed to fit the prompt budget; get_skill lists them all.)\n"
            ),
            _ => String::new(),
        }
    }
}

/// The markdown domain block's closing: a blank line and the usage lines.
const DOMAIN_USAGE_WITH_GAP: &str = concat!(
    "\n",
    "Use: get_skill: <domain> for domain details\n",
    "Use: get_skill: <domain>.<command> for specific skill details\n",
    "Use: get_skill: <domain>.all to load all skills in a domain\n"
);

impl<'a> Disclosure<'a> {
    /// The catalog of every skill this view may list, fitted to the budget.
    pub fn catalog(&self, format: CatalogFormat, budget: &Budget) -> Catalog {
        debug_assert!(DOMAIN_USAGE_WITH_GAP.ends_with(DOMAIN_USAGE));
        let layout = Layout { format };
        let roots = resolved_roots(self.snapshot.sources());
        let budget_chars = budget.chars();
        let cap = budget.entry_cap();
        // Priority order: proactive skills first, then by name (the snapshot's order). Only
        // entries that are actually considered get their text prepared.
        let (mut order, rest): (Vec<&Skill>, Vec<&Skill>) = self
            .visible()
            .filter(|s| self.listed(s))
            .map(|s| &**s)
            .partition(|s| s.affinity(self.profile.as_deref()) == Affinity::Proactive);
        order.extend(rest);
        let total = order.len();
        let prepare = |s: &'a Skill| -> (Candidate<'a>, usize) {
            let mut description = match format {
                CatalogFormat::Markdown => Cow::Owned(one_line(&brief(s))),
                _ => Cow::Borrowed(s.description.as_str()),
            };
            let low = self
                .snapshot
                .sources()
                .get(s.source)
                .is_none_or(|src| src.trust == crate::Trust::Low);
            if self.mark_low_trust && low {
                description = Cow::Owned(format!("{}{description}", super::LOW_TRUST_MARK));
            }
            let mut c = Candidate {
                skill: s,
                description_chars: chars(&description),
                full_cost: escaped_chars(format, &description),
                description,
                location: location(&roots, s),
                fixed: 0,
                fixed_cut: 0,
            };
            c.fixed = chars(&layout.entry(&c, "", false));
            c.fixed_cut = chars(&layout.entry(&c, "", true));
            // The per-entry cap: the longest description this entry may show.
            let max_desc = if c.fixed + c.full_cost <= cap {
                c.description_chars
            } else {
                let (mut lo, mut hi) = (0, c.description_chars);
                while lo < hi {
                    let mid = lo + (hi - lo).div_ceil(2);
                    if entry_cost(format, &c, mid) <= cap {
                        lo = mid;
                    } else {
                        hi = mid - 1;
                    }
                }
                lo
            };
            (c, max_desc)
        };

        // Keep entries while they fit with the minimum description; the first that does
        // not fit, and every one after it, is omitted.
        let (open, close) = layout.frame();
        let frame = chars(open) + chars(close);
        let mut used = frame;
        let mut groups_open: Vec<Option<&str>> = Vec::new();
        let mut domains_open = false;
        let mut kept: Vec<(Candidate<'_>, usize)> = Vec::new();
        let mut omitted_count = 0;
        for (rank, skill) in order.iter().enumerate() {
            let (c, max_desc) = prepare(skill);
            let min_len = max_desc.min(MIN_DESCRIPTION_CHARS);
            let mut cost = entry_cost(format, &c, min_len);
            let group = c.skill.domain.as_deref();
            let new_group = !groups_open.contains(&group);
            if new_group {
                cost += chars(&self.group_text(&layout, group));
            }
            let opens_domains = group.is_some() && !domains_open;
            if opens_domains {
                let (a, b) = layout.domains_block();
                cost += chars(a) + chars(b) + usize::from(groups_open.contains(&None));
            }
            if group.is_none() && domains_open && new_group {
                cost += 1; // The blank line between the folder block and the domains.
            }
            let trailer = chars(&layout.trailer(total - rank - 1));
            if used + cost + trailer > budget_chars {
                omitted_count = total - rank;
                break;
            }
            used += cost;
            if new_group {
                groups_open.push(group);
            }
            domains_open |= opens_domains;
            kept.push((c, max_desc));
        }
        if omitted_count > 0 {
            used += chars(&layout.trailer(omitted_count));
        }
        if used > budget_chars {
            // Not even the frame fits: nothing is listed.
            kept.clear();
            used = 0;
        }

        // The longest common description length that fits.
        let at = |limit: usize| -> usize {
            kept.iter()
                .map(|(c, m)| entry_cost(format, c, (*m).min(limit)))
                .sum()
        };
        let fixed_used = used - at(MIN_DESCRIPTION_CHARS);
        let longest = kept.iter().map(|(_, m)| *m).max().unwrap_or(0);
        let limit = if fixed_used + at(longest) <= budget_chars {
            longest
        } else {
            let (mut lo, mut hi) = (MIN_DESCRIPTION_CHARS.min(longest), longest);
            while lo < hi {
                let mid = lo + (hi - lo).div_ceil(2);
                if fixed_used + at(mid) <= budget_chars {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            lo
        };
        let mut omitted: Vec<String> = order[kept.len()..].iter().map(|s| s.name.clone()).collect();
        omitted.sort_unstable();
        let candidates: Vec<Candidate<'_>> = kept.iter().map(|(c, _)| c.clone()).collect();
        let max_desc: Vec<usize> = kept.iter().map(|(_, m)| (*m).min(limit)).collect();

        // Render in output order.
        let mut listed: Vec<(usize, Cow<'_, str>, bool)> = Vec::new();
        for (i, c) in candidates.iter().enumerate() {
            let (d, cut) = shorten(&c.description, max_desc[i]);
            listed.push((i, d, cut));
        }
        if format == CatalogFormat::Markdown {
            // Folder skills first, then by domain; by name within each.
            listed.sort_by(|a, b| {
                let (sa, sb) = (candidates[a.0].skill, candidates[b.0].skill);
                sa.domain
                    .cmp(&sb.domain)
                    .then_with(|| sa.name.cmp(&sb.name))
            });
        }
        let mut text = String::new();
        match format {
            CatalogFormat::Markdown => {
                let mut group: Option<Option<&str>> = None;
                for (i, d, cut) in &listed {
                    let c = &candidates[*i];
                    let g = c.skill.domain.as_deref();
                    if group != Some(g) {
                        if g.is_some() && group.is_none_or(|x| x.is_none()) {
                            if group.is_some() {
                                text.push('\n');
                            }
                            text.push_str(layout.domains_block().0);
                        }
                        text.push_str(&self.group_text(&layout, g));
                        group = Some(g);
                    }
                    text.push_str(&layout.entry(c, d, *cut));
                }
                if group.is_some_and(|g| g.is_some()) {
                    text.push_str(layout.domains_block().1);
                }
            }
            CatalogFormat::Xml | CatalogFormat::Json => {
                if !listed.is_empty() || chars(open) + chars(close) <= budget_chars {
                    text.push_str(open);
                    for (n, (i, d, cut)) in listed.iter().enumerate() {
                        let entry = layout.entry(&candidates[*i], d, *cut);
                        let entry = if format == CatalogFormat::Json && n == 0 {
                            entry.trim_start_matches(',').to_owned()
                        } else {
                            entry
                        };
                        text.push_str(&entry);
                    }
                    text.push_str(close);
                }
            }
        }
        let trailer = layout.trailer(omitted.len());
        if !omitted.is_empty() && chars(&text) + chars(&trailer) <= budget_chars {
            text.push_str(&trailer);
        }
        let entries: Vec<CatalogEntry> = listed
            .iter()
            .map(|(i, d, cut)| {
                let c = &candidates[*i];
                CatalogEntry {
                    name: c.skill.name.clone(),
                    description: d.to_string(),
                    location: c.location.clone(),
                    domain: c.skill.domain.clone(),
                    truncated: *cut,
                    when_to_use: c.skill.manifest.when_to_use.clone(),
                    when_not_to_use: c.skill.manifest.when_not_to_use.clone(),
                }
            })
            .collect();
        let mut truncated: Vec<String> = entries
            .iter()
            .filter(|e| e.truncated)
            .map(|e| e.name.clone())
            .collect();
        truncated.sort();
        Catalog {
            format,
            report: BudgetReport {
                budget_chars,
                used_chars: chars(&text),
                candidates: total,
                included: entries.iter().map(|e| e.name.clone()).collect(),
                truncated,
                omitted,
            },
            text,
            entries,
        }
    }

    fn group_text(&self, layout: &Layout, domain: Option<&str>) -> String {
        match domain {
            None => layout.group(None, None),
            Some(d) => layout.group(self.snapshot.domain(d).map(|s| &**s), Some(d)),
        }
    }
}

/// The text length of an entry whose description is cut to `limit` characters.
fn entry_cost(format: CatalogFormat, c: &Candidate<'_>, limit: usize) -> usize {
    match cut_point(&c.description, c.description_chars, limit) {
        (_, false) => c.fixed + c.full_cost,
        (head, true) if head.is_empty() && limit < chars(TRUNCATION_MARK) => c.fixed_cut,
        (head, true) => c.fixed_cut + escaped_chars(format, head) + chars(TRUNCATION_MARK),
    }
}

/// Each source's path and its resolved absolute form.
fn resolved_roots(sources: &[crate::Source]) -> Vec<(PathBuf, PathBuf)> {
    sources
        .iter()
        .map(|s| {
            let abs = std::fs::canonicalize(&s.path)
                .or_else(|_| std::path::absolute(&s.path))
                .unwrap_or_else(|_| s.path.clone());
            (s.path.clone(), abs)
        })
        .collect()
}

/// The skill file's absolute, resolved path: its source's resolved root joined with the
/// rest of its path (discovery follows only links that stay inside the root).
fn location(roots: &[(PathBuf, PathBuf)], skill: &Skill) -> PathBuf {
    if let Some((root, abs)) = roots.get(skill.source) {
        if let Ok(rest) = skill.path.strip_prefix(root) {
            return if rest.as_os_str().is_empty() {
                abs.clone()
            } else {
                abs.join(rest)
            };
        }
    }
    std::path::absolute(&skill.path).unwrap_or_else(|_| skill.path.clone())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn budget_sources_in_order_of_precedence() {
        let b = |chars: Option<usize>, tokens: Option<u64>| Budget {
            budget_chars: chars,
            context_window_tokens: tokens,
            entry_cap_chars: None,
        };
        assert_eq!(b(None, None).chars(), DEFAULT_BUDGET_CHARS);
        // 2% of 200,000 tokens, 4 chars a token.
        assert_eq!(b(None, Some(200_000)).chars(), 16_000);
        assert_eq!(b(Some(10), Some(200_000)).chars(), 10);
        assert_eq!(b(Some(0), None).chars(), 0);
        assert_eq!(b(None, Some(0)).chars(), 0);
        // One rounding at the end: 1,049 x 8 / 100 = 83.92, so 83 (not 1,049 x 4 / 100 x 2).
        assert_eq!(b(None, Some(1_049)).chars(), 83);
        assert_eq!(b(None, Some(1_050)).chars(), 84);
        assert_eq!(b(None, Some(12)).chars(), 0);
        assert_eq!(b(None, Some(13)).chars(), 1);
        assert!(b(None, Some(u64::MAX)).chars() > 1 << 40);
        assert_eq!(b(None, None).entry_cap(), DEFAULT_ENTRY_CAP_CHARS);
    }

    #[test]
    fn shortening_cuts_at_a_word_and_marks_it() {
        let text = "Fill in, inspect and flatten fillable PDF forms";
        assert_eq!(shorten(text, 100), (Cow::Borrowed(text), false));
        assert!(!shorten(text, text.chars().count()).1);
        let (s, cut) = shorten(text, 20);
        assert!(cut);
        assert_eq!(s, "Fill in, inspect…");
        assert!(s.chars().count() <= 20);
        // No space to cut at: a hard cut.
        let (s, _) = shorten("abcdefghijklmnop", 6);
        assert_eq!(s, "abcde…");
        // Multi-byte text is cut on characters, never inside one.
        let (s, _) = shorten("ééééé ééééé", 7);
        assert_eq!(s, "ééééé…");
        assert_eq!(shorten("abc", 1).0, "…");
        assert_eq!(shorten("abc", 0), (Cow::Borrowed(""), true));
    }

    #[test]
    fn xml_escaping_is_pythons_html_escape() {
        assert_eq!(
            xml_escape(r#"a<b>&"c"'d'"#),
            "a&lt;b&gt;&amp;&quot;c&quot;&#x27;d&#x27;"
        );
        assert!(matches!(xml_escape("plain"), Cow::Borrowed(_)));
    }
}
