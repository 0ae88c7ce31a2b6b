//! Man-page sections of a skill body, and the flag schema declared in its
//! `## Flags` section.
//!
//! Skill bodies follow a man-page convention: after the title come level-2
//! sections named `Usage`, `Flags`, `Behavior` and `Examples`. This module
//! owns finding those sections ([`sections`], [`section`]), pulling the
//! useful lines out of them ([`usage_line`], [`example_lines`]) and parsing
//! the `## Flags` list into a [`FlagSchema`] ([`flag_schema`]).
//!
//! Everything here works on the body string alone. Line numbers are 1-based
//! and relative to that string; the caller adds the body's offset in the
//! file. Both `\n` and `\r\n` line endings are understood, and returned
//! slices are taken from the body unchanged.
//!
//! The markdown understanding is deliberately small:
//!
//! * Headings are ATX headings (`## Usage`, up to three leading spaces,
//!   optional closing `#`s). Setext headings (underlined with `===` or
//!   `---`) are not recognised.
//! * Fenced code blocks open with three or more backticks or tildes and
//!   close with a run of the same character at least as long. Headings
//!   inside a fence do not count. A fence that is never closed runs to the
//!   end of the body, as in CommonMark.
//!
//! The `## Flags` parser is in `flags`, the markdown primitives in `markdown`, the outline
//! of every heading (section-level disclosure) in `outline`.

mod flags;
mod markdown;
mod outline;

pub use flags::{FlagSchema, FlagSpec, flag_schema};
pub use outline::{
    EMPTY_SLUG, Heading, MAX_OUTLINE_SECTIONS, MAX_TITLE_CHARS, Outline, outline, slugify,
};

use markdown::{Fence, Line, LineClass, Lines, atx_heading, code_span, strip_bullet};

/// One of the man-page sections a skill body may contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SectionKind {
    /// `## Usage`: the synopsis of the command.
    Usage,
    /// `## Flags`: one line per flag; see [`flag_schema`].
    Flags,
    /// `## Behavior` (also spelled `## Behaviour`): what the skill does.
    Behavior,
    /// `## Examples`: example invocations; see [`example_lines`].
    Examples,
}

impl SectionKind {
    /// The heading text as conventionally written, e.g. `"Flags"`.
    pub fn heading(self) -> &'static str {
        match self {
            SectionKind::Usage => "Usage",
            SectionKind::Flags => "Flags",
            SectionKind::Behavior => "Behavior",
            SectionKind::Examples => "Examples",
        }
    }

    /// The kind named by a heading's text, compared ASCII case-insensitively.
    fn from_heading(text: &str) -> Option<Self> {
        const NAMES: [(&str, SectionKind); 5] = [
            ("usage", SectionKind::Usage),
            ("flags", SectionKind::Flags),
            ("behavior", SectionKind::Behavior),
            ("behaviour", SectionKind::Behavior),
            ("examples", SectionKind::Examples),
        ];
        NAMES
            .iter()
            .find(|(name, _)| text.eq_ignore_ascii_case(name))
            .map(|&(_, kind)| kind)
    }
}

/// A known section found in a skill body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section<'a> {
    /// Which section this is.
    pub kind: SectionKind,
    /// 1-based line of the `## ...` heading, relative to the body.
    pub heading_line: u32,
    /// Everything after the heading line up to (not including) the next
    /// level-1 or level-2 heading, or the end of the body. Level-3 and
    /// deeper headings stay inside. Line endings are kept as written.
    pub content: &'a str,
    /// 1-based line on which `content` starts, relative to the body (always
    /// `heading_line + 1`).
    pub content_line: u32,
}

/// The known sections of `body`, in body order.
///
/// Only the four [`SectionKind`]s are returned. When a kind appears more
/// than once, the first occurrence wins and later ones are ignored (a later
/// duplicate heading still ends the section before it). Headings inside
/// fenced code blocks are not headings.
pub fn sections(body: &str) -> Vec<Section<'_>> {
    let mut found: Vec<Section<'_>> = Vec::new();
    // The section being collected: kind, heading line, content start
    // (byte offset) and content line.
    let mut open: Option<(SectionKind, u32, usize, u32)> = None;
    let mut fence = Fence::default();

    for line in Lines::new(body, 1) {
        if fence.classify(line.text) != LineClass::Text {
            continue;
        }
        let Some((level, text)) = atx_heading(line.text) else {
            continue;
        };
        if level > 2 {
            continue;
        }
        if let Some((kind, heading_line, start, content_line)) = open.take() {
            found.push(Section {
                kind,
                heading_line,
                content: body.get(start..line.start).unwrap_or(""),
                content_line,
            });
        }
        if level == 2 {
            if let Some(kind) = SectionKind::from_heading(text) {
                if !found.iter().any(|s| s.kind == kind) {
                    open = Some((kind, line.number, line.next, line.number.saturating_add(1)));
                }
            }
        }
    }
    if let Some((kind, heading_line, start, content_line)) = open {
        found.push(Section {
            kind,
            heading_line,
            content: body.get(start..).unwrap_or(""),
            content_line,
        });
    }
    found
}

/// The first section of the given kind in `body`, if any.
///
/// Same rules as [`sections`].
pub fn section(body: &str, kind: SectionKind) -> Option<Section<'_>> {
    // The heading of such a section is one `## ` line spelling its name (ASCII
    // case-insensitively), so a body without the word on such a line has none; most bodies
    // lack most kinds (or name them only in prose), and the search is a memchr for the
    // word's rarest letter instead of a walk over every line.
    let (word, anchor) = kind.heading_word();
    if !on_level_two_heading(body, word, anchor) {
        return None;
    }
    sections(body).into_iter().find(|s| s.kind == kind)
}

impl SectionKind {
    /// A word every heading of this kind holds, lowercase, with the index of its rarest
    /// letter (where the search for it starts).
    fn heading_word(self) -> (&'static str, usize) {
        match self {
            SectionKind::Usage => ("usage", 3),
            SectionKind::Flags => ("flags", 0),
            // `Behavior` and `Behaviour`.
            SectionKind::Behavior => ("behavio", 4),
            SectionKind::Examples => ("examples", 1),
        }
    }
}

/// Whether `text` holds `word` (lowercase ASCII, in any ASCII case) on a line that is a
/// level-2 ATX heading (inside a code fence or not: [`sections`] decides that). The search
/// looks for the byte at `anchor` first.
fn on_level_two_heading(text: &str, word: &str, anchor: usize) -> bool {
    let (hay, needle) = (text.as_bytes(), word.as_bytes());
    let Some(&key) = needle.get(anchor) else {
        return true;
    };
    let mut from = anchor;
    while let Some(found) = hay
        .get(from..)
        .and_then(|rest| memchr::memchr2(key, key.to_ascii_uppercase(), rest))
    {
        let at = from + found;
        let start = at - anchor;
        if hay
            .get(start..start + needle.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(needle))
        {
            let line_start =
                memchr::memrchr(b'\n', hay.get(..start).unwrap_or(&[])).map_or(0, |i| i + 1);
            let line_end = memchr::memchr(b'\n', hay.get(start..).unwrap_or(&[]))
                .map_or(hay.len(), |i| start + i);
            let line = text.get(line_start..line_end).unwrap_or("");
            if atx_heading(line).is_some_and(|(level, _)| level == 2) {
                return true;
            }
            // The rest of this line cannot make it a heading: go on after it.
            from = line_end.max(at + 1);
            continue;
        }
        from = at + 1;
    }
    false
}

/// The first non-blank line of the `## Usage` section, trimmed.
///
/// Code fence delimiter lines are skipped, so a synopsis inside a fenced
/// block is found. Outside a fence, a line that is exactly one inline code
/// span (`` `email.send --to <addr>` ``) is returned without its backticks.
pub fn usage_line(body: &str) -> Option<&str> {
    let usage = section(body, SectionKind::Usage)?;
    for (line, class) in content_lines(&usage) {
        let text = line.text.trim();
        if class == LineClass::Delimiter || text.is_empty() {
            continue;
        }
        if class == LineClass::Text {
            if let Some((inner, rest)) = code_span(text) {
                if rest.trim().is_empty() && !inner.is_empty() {
                    return Some(inner);
                }
            }
        }
        return Some(text);
    }
    None
}

/// One example invocation from the `## Examples` section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExampleLine<'a> {
    /// 1-based line, relative to the body.
    pub line: u32,
    /// The example text, trimmed (and unwrapped as described in
    /// [`example_lines`]).
    pub text: &'a str,
}

/// The example invocations in the `## Examples` section, in order.
///
/// Every line of the section is considered on its own:
///
/// * Blank lines and code fence delimiter lines (```` ``` ````, `~~~`) are
///   skipped; lines inside a fence are candidates like any other.
/// * Lines starting (after trimming) with `#`, `>` or `<!--` are skipped:
///   subheadings, shell comments, quotes and HTML comments.
/// * Outside a fence, an optional bullet (`- `, `* `, `+ `) is stripped.
///   Then, if the line starts with an inline code span, or is a bullet that
///   contains one, the text is the content of the first code span. Inside a
///   fence, lines are taken verbatim.
/// * Whatever remains, trimmed, is an example if it is non-empty. No
///   attempt is made to tell prose from commands: a plain sentence in the
///   section counts as an example line.
pub fn example_lines(body: &str) -> Vec<ExampleLine<'_>> {
    let Some(examples) = section(body, SectionKind::Examples) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (line, class) in content_lines(&examples) {
        let text = line.text.trim();
        if class == LineClass::Delimiter
            || text.is_empty()
            || text.starts_with('#')
            || text.starts_with('>')
            || text.starts_with("<!--")
        {
            continue;
        }
        let text = if class == LineClass::Text {
            unwrap_example(text)
        } else {
            text
        };
        if !text.is_empty() {
            found.push(ExampleLine {
                line: line.number,
                text,
            });
        }
    }
    found
}

/// Strip a bullet and inline-code backticks from a prose example line.
fn unwrap_example(text: &str) -> &str {
    let (bulleted, rest) = match strip_bullet(text) {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    if rest.starts_with('`') {
        if let Some((inner, _)) = code_span(rest) {
            return inner;
        }
    } else if bulleted {
        if let Some(tick) = rest.find('`') {
            if let Some((inner, _)) = rest.get(tick..).and_then(code_span) {
                return inner;
            }
        }
    }
    rest.trim()
}

/// The lines of a section's content, numbered relative to the body and
/// classified against code fences.
fn content_lines<'a>(section: &Section<'a>) -> impl Iterator<Item = (Line<'a>, LineClass)> {
    let mut fence = Fence::default();
    Lines::new(section.content, section.content_line).map(move |line| {
        let class = fence.classify(line.text);
        (line, class)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// `section` gives what the walk over every line gives, whether or not the body holds
    /// the kind's word, in any case, as a heading or not.
    #[test]
    fn section_equals_the_first_of_its_kind_among_all_sections() {
        let bodies = [
            EMAIL,
            "",
            "# T\n\n## EXAMPLES\n\nx --a\n",
            "# T\n\n## Behaviour\n\nIt works.\n## usage\n\nx\n",
            "# T\n\nSee the examples and flags below, usage too.\n",
            "# T\n\n```\n## Examples\n```\n## Flags\n--a  A.\n",
            "## ExAmPlEs ##\nx\n## Examples\ny\n",
            "## Exampl\u{e9}s\nx\n",
            "x",
            "# T\n\nThe examples below.\n## Usage\n\nx --examples\n",
            "# T\r\n\r\n## Examples\r\n\r\nx --a\r\n",
            "# Examples\n### Examples\n    ## Examples\nprose examples\n",
        ];
        for body in bodies {
            for kind in [
                SectionKind::Usage,
                SectionKind::Flags,
                SectionKind::Behavior,
                SectionKind::Examples,
            ] {
                let walked = sections(body).into_iter().find(|s| s.kind == kind);
                assert_eq!(section(body, kind), walked, "{kind:?} in {body:?}");
            }
        }
        assert!(on_level_two_heading("## an EXAMPLES b", "examples", 1));
        assert!(!on_level_two_heading("an EXAMPLES b", "examples", 1));
        assert!(!on_level_two_heading("## an EXAMPLE b", "examples", 1));
        assert!(on_level_two_heading("## xflags", "flags", 0));
        assert!(!on_level_two_heading("x", "examples", 1));
        // A level-1 or level-3 heading, an indented code line, or the word in prose after
        // a heading line, is no such heading; a CRLF line and a line inside a fence are
        // candidates (the walk decides about fences).
        for no in [
            "# Examples\n",
            "### Examples\n",
            "    ## Examples\n",
            "## Usage\nexamples here\n",
            "##Examples\n",
        ] {
            assert!(!on_level_two_heading(no, "examples", 1), "{no:?}");
        }
        for yes in [
            "x\r\n## Examples\r\n",
            "```\n## Examples\n```\n",
            "   ## my examples ##",
        ] {
            assert!(on_level_two_heading(yes, "examples", 1), "{yes:?}");
        }
    }

    /// The quick check before the walk never changes an answer: every body of four lines
    /// drawn from headings of every level and kind (tab after the `##`, closing `#`s, upper
    /// case), fences, indented lines, prose naming the kinds and CRLF endings finds the same
    /// section both ways.
    #[test]
    fn the_heading_check_agrees_with_the_walk_on_every_small_body() {
        let parts = [
            "## Examples",
            "## usage ##",
            "### Flags",
            "# Behaviour",
            "   ## Flags",
            "    ## Usage",
            "```",
            "~~~md",
            "examples and flags in prose",
            "--flag  A flag.",
            "## Behavior\r",
            "##\tFlags",
            "## EXAMPLES #\r",
            "",
        ];
        let kinds = [
            SectionKind::Usage,
            SectionKind::Flags,
            SectionKind::Behavior,
            SectionKind::Examples,
        ];
        let n = parts.len();
        for i in 0..n * n * n * n {
            let body = [i % n, i / n % n, i / (n * n) % n, i / (n * n * n)]
                .map(|k| parts[k])
                .join("\n");
            for kind in kinds {
                let walked = sections(&body).into_iter().find(|s| s.kind == kind);
                assert_eq!(section(&body, kind), walked, "{kind:?} in {body:?}");
            }
        }
    }

    /// A skill body with every section, from the design document.
    pub(super) const EMAIL: &str = "# email.send

Send an email via Gmail.

## Usage

email.send --to <addresses> --subject <text> --body <text> [--cc <addresses>]

## Flags

--to            Recipient email addresses, space-separated (required)
--subject       Email subject line (required)
--cc            CC recipients, space-separated
--tone      Writing tone: formal, casual, friendly (default: professional)
--status      Filter by status. One or more of: todo, in_progress, blocked, done, cancelled (default: todo, in_progress, blocked)
--priority    Filter by priority. One or more of: critical, high, medium, low
--sort        Sort by: due_date, priority, created_at, updated_at (default: due_date)
--overdue     Only show tasks past their due date (boolean flag)
--enum-flag    Description. One of: option1, option2, option3
--limit       Maximum number of results (default: 20)
--due-before  Tasks due on or before this date (YYYY-MM-DD)

## Behavior

Sends it.

### Errors

Fails loudly.

## Examples

email.send --to bob@company.com --subject \"Q1 Report\" --body \"Here is the Q1 report.\"
email.send --to alice@co.com bob@co.com --subject \"Meeting Notes\" --body \"Attached.\"
";

    fn kinds(body: &str) -> Vec<SectionKind> {
        sections(body).iter().map(|s| s.kind).collect()
    }

    #[test]
    fn finds_all_sections_in_order_with_lines() {
        let found = sections(EMAIL);
        assert_eq!(
            found.iter().map(|s| s.kind).collect::<Vec<_>>(),
            vec![
                SectionKind::Usage,
                SectionKind::Flags,
                SectionKind::Behavior,
                SectionKind::Examples
            ]
        );
        assert_eq!(found[0].heading_line, 5);
        assert_eq!(found[0].content_line, 6);
        assert_eq!(
            found[0].content,
            "\nemail.send --to <addresses> --subject <text> --body <text> [--cc <addresses>]\n\n"
        );
        assert_eq!(found[1].heading_line, 9);
        assert_eq!(found[3].heading_line, 31);
    }

    #[test]
    fn subsection_stays_inside_and_level_one_ends() {
        let behavior = section(EMAIL, SectionKind::Behavior).unwrap();
        assert_eq!(
            behavior.content,
            "\nSends it.\n\n### Errors\n\nFails loudly.\n\n"
        );

        let body = "## Usage\nfoo\n# Title\nbar\n";
        assert_eq!(section(body, SectionKind::Usage).unwrap().content, "foo\n");
    }

    #[test]
    fn other_level_two_heading_ends_section() {
        let body = "## Usage\nfoo\n## Notes\nbar\n";
        let usage = section(body, SectionKind::Usage).unwrap();
        assert_eq!(usage.content, "foo\n");
        assert_eq!(kinds(body), vec![SectionKind::Usage]);
    }

    #[test]
    fn headings_are_case_insensitive_with_closing_hashes_and_spaces() {
        let body = "##   uSaGe ##  \na\n  ## FLAGS\nb\n## Behaviour #\nc\n## examples\nd";
        assert_eq!(
            kinds(body),
            vec![
                SectionKind::Usage,
                SectionKind::Flags,
                SectionKind::Behavior,
                SectionKind::Examples
            ]
        );
        let examples = section(body, SectionKind::Examples).unwrap();
        assert_eq!(examples.content, "d");
        assert_eq!(examples.content_line, 8);
    }

    #[test]
    fn not_headings() {
        // No space after the hashes, four-space indent, level 3, suffix text.
        let body = "##Usage\n    ## Flags\n### Examples\n## Usage notes\n## Flags#\n";
        assert!(sections(body).is_empty());
    }

    #[test]
    fn heading_as_last_line_has_empty_content() {
        let body = "intro\n## Examples";
        let examples = section(body, SectionKind::Examples).unwrap();
        assert_eq!(examples.heading_line, 2);
        assert_eq!(examples.content_line, 3);
        assert_eq!(examples.content, "");
    }

    #[test]
    fn headings_in_fences_do_not_count() {
        let body = "## Usage\n```md\n## Flags\n# Title\n```\nafter\n~~~~\n## Examples\n~~~\n## Examples\n~~~~\n## Examples\nreal\n";
        let found = sections(body);
        assert_eq!(
            found.iter().map(|s| s.kind).collect::<Vec<_>>(),
            vec![SectionKind::Usage, SectionKind::Examples]
        );
        // The `~~~` inside the `~~~~` fence does not close it.
        assert_eq!(found[1].heading_line, 12);
        assert_eq!(found[1].content, "real\n");
        assert!(found[0].content.contains("# Title"));
    }

    #[test]
    fn unclosed_fence_hides_the_rest() {
        let body = "## Usage\n```\n## Flags\n";
        assert_eq!(kinds(body), vec![SectionKind::Usage]);
        assert_eq!(
            section(body, SectionKind::Usage).unwrap().content,
            "```\n## Flags\n"
        );
    }

    #[test]
    fn backtick_fence_with_backtick_in_info_is_not_a_fence() {
        let body = "``` a`b\n## Flags\n--x  y\n";
        assert_eq!(kinds(body), vec![SectionKind::Flags]);
    }

    #[test]
    fn first_duplicate_wins() {
        let body = "## Flags\n--a  first\n## Usage\nu\n## flags\n--b  second\n";
        let found = sections(body);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].kind, SectionKind::Flags);
        assert_eq!(found[0].content, "--a  first\n");
        let schema = flag_schema(body).unwrap();
        assert_eq!(schema.flags.len(), 1);
        assert_eq!(schema.flags[0].name, "a");
        // The duplicate ends the Usage section.
        assert_eq!(section(body, SectionKind::Usage).unwrap().content, "u\n");
    }

    #[test]
    fn crlf_bodies() {
        let body = "# t\r\n\r\n## Usage\r\n\r\ncmd --x <y>\r\n\r\n## Examples\r\n```\r\ncmd --x 1\r\n```\r\n";
        let usage = section(body, SectionKind::Usage).unwrap();
        assert_eq!(usage.heading_line, 3);
        assert_eq!(usage.content, "\r\ncmd --x <y>\r\n\r\n");
        assert_eq!(usage_line(body), Some("cmd --x <y>"));
        let examples = example_lines(body);
        assert_eq!(
            examples,
            vec![ExampleLine {
                line: 9,
                text: "cmd --x 1"
            }]
        );
    }

    #[test]
    fn empty_body() {
        assert!(sections("").is_empty());
        assert_eq!(usage_line(""), None);
        assert!(example_lines("").is_empty());
        assert_eq!(flag_schema(""), None);
    }

    #[test]
    fn usage_line_cases() {
        assert_eq!(
            usage_line(EMAIL),
            Some("email.send --to <addresses> --subject <text> --body <text> [--cc <addresses>]")
        );
        let fenced = "## Usage\n\n```sh\n  tool run <x>  \n```\n";
        assert_eq!(usage_line(fenced), Some("tool run <x>"));
        let inline = "## Usage\n`tool run <x>`\n";
        assert_eq!(usage_line(inline), Some("tool run <x>"));
        let mixed = "## Usage\n`tool` runs things\n";
        assert_eq!(usage_line(mixed), Some("`tool` runs things"));
        assert_eq!(usage_line("## Usage\n\n## Flags\n--a  b\n"), None);
    }

    #[test]
    fn example_lines_plain() {
        let examples = example_lines(EMAIL);
        assert_eq!(examples.len(), 2);
        assert_eq!(examples[0].line, 33);
        assert!(
            examples[0]
                .text
                .starts_with("email.send --to bob@company.com")
        );
        assert_eq!(examples[1].line, 34);
        assert!(examples[1].text.ends_with("\"Attached.\""));
    }

    #[test]
    fn example_lines_fenced_bullets_and_skips() {
        let body = "## Examples\n\
                    \n\
                    ```bash\n\
                    # a shell comment\n\
                    tool one\n\
                    \n\
                    - tool literal bullet in fence\n\
                    ```\n\
                    - `tool two --x \"a b\"` sends two\n\
                    * Run it quietly: `tool three`\n\
                    `tool four`\n\
                    ``tool `five` ``\n\
                    - plain bullet\n\
                    > quoted\n\
                    <!-- hidden -->\n\
                    ### Sub\n\
                    -   \n\
                    Some prose line.\n";
        let got: Vec<(u32, &str)> = example_lines(body)
            .iter()
            .map(|e| (e.line, e.text))
            .collect();
        assert_eq!(
            got,
            vec![
                (5, "tool one"),
                (7, "- tool literal bullet in fence"),
                (9, "tool two --x \"a b\""),
                (10, "tool three"),
                (11, "tool four"),
                (12, "tool `five`"),
                (13, "plain bullet"),
                (18, "Some prose line."),
            ]
        );
    }

    #[test]
    fn example_lines_without_section() {
        assert!(example_lines("## Usage\nfoo\n").is_empty());
    }

    #[test]
    fn unicode_content_is_sliced_safely() {
        let body =
            "## Flags\n--naïve  Ünïcödé — One of: é, ü (default: é)\n## Examples\n- `tööl — ✓`\n";
        // `naïve` is not a valid flag name: the name stops at `ï`, which is
        // glued to it, so the line is rejected.
        assert_eq!(flag_schema(body), None);
        let body2 = "## Flags\n--lang  Ünïcödé — One of: é, ü (default: é)\n";
        let lang = flag_schema(body2).unwrap().flags.remove(0);
        assert_eq!(lang.one_of, vec!["é", "ü"]);
        assert_eq!(lang.default.as_deref(), Some("é"));
        assert_eq!(example_lines(body)[0].text, "tööl — ✓");
    }

    #[test]
    fn section_kind_heading_round_trips() {
        for kind in [
            SectionKind::Usage,
            SectionKind::Flags,
            SectionKind::Behavior,
            SectionKind::Examples,
        ] {
            assert_eq!(SectionKind::from_heading(kind.heading()), Some(kind));
        }
        assert_eq!(SectionKind::from_heading("Synopsis"), None);
    }
}
