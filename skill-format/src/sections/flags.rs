//! The `## Flags` section read into a [`FlagSchema`]: one [`FlagSpec`] per flag line, with
//! the annotations its description carries (required, default, boolean, enumerations,
//! value hint). See [`flag_schema`] for the accepted shapes.

use super::markdown::{LineClass, code_span, strip_bullet};
use super::{SectionKind, content_lines, section};

/// One flag declared in the `## Flags` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagSpec {
    /// The flag's name without the leading `--`.
    pub name: String,
    /// The full description as written, continuation lines joined with a
    /// single space. Annotations such as `(required)` are kept.
    pub description: String,
    /// The description contains `(required)`.
    pub required: bool,
    /// The value of a `(default: ...)` annotation, trimmed.
    pub default: Option<String>,
    /// The allowed values listed after `One of:` or `One or more of:`.
    /// Empty when the flag takes free-form values.
    pub one_of: Vec<String>,
    /// The list was introduced by `One or more of:`: several values may be
    /// given.
    pub multiple: bool,
    /// The description contains `(boolean flag)` (or `(boolean)`): the flag
    /// takes no value.
    pub boolean: bool,
    /// A hint for the value's shape, e.g. `YYYY-MM-DD`: the last trailing
    /// parenthesis that is not an annotation, or else a `<placeholder>`
    /// written after the flag name.
    pub value_hint: Option<String>,
    /// 1-based line of the flag, relative to the body.
    pub line: u32,
}

/// The flags declared in a skill's `## Flags` section, in written order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlagSchema {
    /// Every flag line, in order. A name declared twice appears twice;
    /// [`FlagSchema::get`] returns the first.
    pub flags: Vec<FlagSpec>,
}

impl FlagSchema {
    /// The first flag with this name (without the leading `--`).
    pub fn get(&self, name: &str) -> Option<&FlagSpec> {
        self.flags.iter().find(|f| f.name == name)
    }

    /// The flags marked `(required)`, in order.
    pub fn required(&self) -> impl Iterator<Item = &FlagSpec> {
        self.flags.iter().filter(|f| f.required)
    }
}

/// Parse the `## Flags` section of `body` into a [`FlagSchema`].
///
/// Returns `None` when there is no `## Flags` section or it has no flag
/// lines. Lines inside code fences are parsed like any other.
///
/// A flag line is `--name` followed by whitespace (conventionally two or
/// more spaces or a tab) and the description. Names match
/// `[A-Za-z0-9][A-Za-z0-9_-]*`. Also accepted:
///
/// * a markdown bullet in front: `- --name  Description`;
/// * the flag in backticks, followed by ` - `, `:`, an en or em dash, or
///   whitespace: `` `--name` - Description``;
/// * a value placeholder after the name: `--to <addresses>  Description`,
///   `--to=<addresses>`, or inside the backticks; it becomes the
///   `value_hint` when the description has no trailing hint.
///
/// A non-blank line that is indented and does not start with `--`, directly
/// after a flag line or another continuation line, is appended to that
/// flag's description. A blank line or an unindented non-flag line ends the
/// flag; such lines are otherwise ignored.
///
/// The description is then read for annotations (ASCII case-insensitively):
///
/// * `(required)` anywhere sets `required`.
/// * `(default: x)` anywhere sets `default` to `x`.
/// * `(boolean flag)` or `(boolean)` anywhere sets `boolean`.
/// * `(optional)` is recognised and has no effect.
/// * A parenthesis starting with `One of:` / `One or more of:` holds the
///   enumeration (below), not a hint.
/// * `One of: a, b, c` fills `one_of`; `One or more of: a, b` also sets
///   `multiple`. The list ends at `(`, `)`, `;`, a period followed by
///   whitespace, or the end of the description. Items are split on `,`,
///   trimmed, and lose a trailing period, a leading `or `/`and `, and
///   surrounding backticks or quotes. Other phrasings such as `Sort by: a,
///   b` are deliberately not treated as enumerations.
/// * Any other parenthesis at the end of the description (possibly among
///   other trailing annotations) is the `value_hint`.
pub fn flag_schema(body: &str) -> Option<FlagSchema> {
    let flags_section = section(body, SectionKind::Flags)?;
    // Raw flags: name, description so far, placeholder, line.
    let mut raw: Vec<(String, String, Option<String>, u32)> = Vec::new();
    let mut can_continue = false;

    for (line, class) in content_lines(&flags_section) {
        let text = line.text;
        if class == LineClass::Delimiter || text.trim().is_empty() {
            can_continue = false;
            continue;
        }
        if let Some(flag) = parse_flag_line(text) {
            raw.push((
                flag.name.to_owned(),
                flag.description.to_owned(),
                flag.placeholder.map(str::to_owned),
                line.number,
            ));
            can_continue = true;
            continue;
        }
        let indented = text.starts_with([' ', '\t']);
        if can_continue && indented && !text.trim_start().starts_with("--") {
            if let Some((_, description, _, _)) = raw.last_mut() {
                let more = text.trim();
                if !description.is_empty() {
                    description.push(' ');
                }
                description.push_str(more);
            }
            continue;
        }
        can_continue = false;
    }

    if raw.is_empty() {
        return None;
    }
    let flags = raw
        .into_iter()
        .map(|(name, description, placeholder, line)| {
            let description = description.trim().to_owned();
            build_spec(name, description, placeholder, line)
        })
        .collect();
    Some(FlagSchema { flags })
}

/// The pieces of one flag line, borrowed from the line.
struct FlagLine<'a> {
    name: &'a str,
    description: &'a str,
    placeholder: Option<&'a str>,
}

/// Recognise a flag line (see [`flag_schema`] for the accepted shapes).
fn parse_flag_line(text: &str) -> Option<FlagLine<'_>> {
    let text = text.trim();
    let text = strip_bullet(text).unwrap_or(text);
    if text.starts_with('`') {
        let (inner, rest) = code_span(text)?;
        let (name, after) = flag_name(inner)?;
        let placeholder = placeholder_after_name(after)?;
        let rest = rest.trim_start();
        let rest = ["-", "\u{2013}", "\u{2014}", ":"]
            .iter()
            .find_map(|sep| rest.strip_prefix(sep))
            .unwrap_or(rest);
        Some(FlagLine {
            name,
            description: rest.trim(),
            placeholder: placeholder.0,
        })
    } else {
        let (name, after) = flag_name(text)?;
        let (placeholder, description) = placeholder_after_name(after)?;
        Some(FlagLine {
            name,
            description: description.trim(),
            placeholder,
        })
    }
}

/// Split `--name` off the front of `text`: the name and what follows it.
fn flag_name(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix("--")?;
    let first = rest.chars().next()?;
    if !first.is_ascii_alphanumeric() {
        return None;
    }
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(rest.len());
    Some((rest.get(..end)?, rest.get(end..)?))
}

/// Read what follows a flag name: an optional value placeholder
/// (`=VALUE`, `=<value>`, ` <value>`) and the rest. `None` when the name is
/// glued to something that is not a separator (`--to,`).
fn placeholder_after_name(after: &str) -> Option<(Option<&str>, &str)> {
    if let Some(value) = after.strip_prefix('=') {
        let end = value.find(char::is_whitespace).unwrap_or(value.len());
        let hint = value.get(..end)?;
        let hint = angle_inner(hint).unwrap_or(hint);
        let hint = (!hint.is_empty()).then_some(hint);
        return Some((hint, value.get(end..)?));
    }
    let after = match after.strip_prefix(':') {
        Some(rest) => rest,
        None if after.is_empty() || after.starts_with(char::is_whitespace) => after,
        None => return None,
    };
    let trimmed = after.trim_start();
    if trimmed.starts_with('<') {
        if let Some(close) = trimmed.find('>') {
            let hint = trimmed.get(1..close)?.trim();
            let hint = (!hint.is_empty()).then_some(hint);
            return Some((hint, trimmed.get(close + 1..)?));
        }
    }
    Some((None, after))
}

/// The text inside `<...>` when `text` is exactly that.
fn angle_inner(text: &str) -> Option<&str> {
    text.strip_prefix('<')?.strip_suffix('>').map(str::trim)
}

/// Read the annotations out of a flag's description.
fn build_spec(
    name: String,
    description: String,
    placeholder: Option<String>,
    line: u32,
) -> FlagSpec {
    let groups = paren_groups(&description);
    let mut required = false;
    let mut boolean = false;
    let mut default = None;
    for &(_, _, inner) in &groups {
        match annotation(inner) {
            Annotation::Required => required = true,
            Annotation::Boolean => boolean = true,
            Annotation::Default(value) => {
                if default.is_none() && !value.is_empty() {
                    default = Some(value.to_owned());
                }
            }
            Annotation::Optional | Annotation::Enumeration | Annotation::Other => {}
        }
    }

    // Trailing groups: walk back from the end while each group ends where
    // the previous trailing one (or the description) ends.
    let mut value_hint = None;
    let mut end = trim_trailing(&description).len();
    for &(start, group_end, inner) in groups.iter().rev() {
        if group_end != end {
            break;
        }
        if value_hint.is_none() && annotation(inner) == Annotation::Other {
            let hint = inner.trim();
            if !hint.is_empty() {
                value_hint = Some(hint.to_owned());
            }
        }
        end = description.get(..start).map_or(0, |s| s.trim_end().len());
    }
    let value_hint = value_hint.or(placeholder);

    let (one_of, multiple) = enumeration(&description);
    FlagSpec {
        name,
        description,
        required,
        default,
        one_of,
        multiple,
        boolean,
        value_hint,
        line,
    }
}

/// What a parenthesised group in a flag description means.
#[derive(Debug, PartialEq, Eq)]
enum Annotation<'a> {
    Required,
    Optional,
    Boolean,
    Default(&'a str),
    /// A `One of:` / `One or more of:` list written inside parentheses.
    Enumeration,
    Other,
}

fn annotation(inner: &str) -> Annotation<'_> {
    let inner = inner.trim();
    if inner.eq_ignore_ascii_case("required") {
        Annotation::Required
    } else if inner.eq_ignore_ascii_case("optional") {
        Annotation::Optional
    } else if inner.eq_ignore_ascii_case("boolean flag") || inner.eq_ignore_ascii_case("boolean") {
        Annotation::Boolean
    } else if let Some(value) = strip_prefix_ignore_case(inner, "default:") {
        Annotation::Default(value.trim())
    } else if strip_prefix_ignore_case(inner, "one of:").is_some()
        || strip_prefix_ignore_case(inner, "one or more of:").is_some()
    {
        Annotation::Enumeration
    } else {
        Annotation::Other
    }
}

/// Top-level parenthesised groups: (offset of `(`, offset just past `)`,
/// text inside). Nested parentheses stay inside their group; an unclosed
/// group is ignored.
fn paren_groups(text: &str) -> Vec<(usize, usize, &str)> {
    let mut groups = Vec::new();
    let mut depth = 0usize;
    let mut start = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '(' => {
                if depth == 0 {
                    start = i;
                }
                depth += 1;
            }
            ')' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    if let Some(inner) = text.get(start + 1..i) {
                        groups.push((start, i + 1, inner));
                    }
                }
            }
            _ => {}
        }
    }
    groups
}

/// `text` without trailing whitespace and periods.
fn trim_trailing(text: &str) -> &str {
    text.trim_end_matches(|c: char| c == '.' || c.is_whitespace())
}

/// The `One of:` / `One or more of:` list in a description, and whether it
/// was the `One or more of:` form.
fn enumeration(description: &str) -> (Vec<String>, bool) {
    let lower = description.to_ascii_lowercase();
    let one = find_phrase(&lower, "one of:").map(|i| (i, "one of:".len(), false));
    let more = find_phrase(&lower, "one or more of:").map(|i| (i, "one or more of:".len(), true));
    let found = match (one, more) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    };
    let Some((at, len, multiple)) = found else {
        return (Vec::new(), false);
    };
    let Some(list) = description.get(at + len..) else {
        return (Vec::new(), false);
    };
    let list = list.get(..list_end(list)).unwrap_or(list);
    let items = list
        .split(',')
        .filter_map(|item| {
            let item = item.trim().trim_end_matches('.').trim_end();
            let item = strip_prefix_ignore_case(item, "or ")
                .or_else(|| strip_prefix_ignore_case(item, "and "))
                .unwrap_or(item)
                .trim();
            let item = ['`', '"', '\'']
                .iter()
                .find_map(|&q| item.strip_prefix(q).and_then(|i| i.strip_suffix(q)))
                .unwrap_or(item)
                .trim();
            (!item.is_empty()).then(|| item.to_owned())
        })
        .collect::<Vec<_>>();
    let multiple = multiple && !items.is_empty();
    (items, multiple)
}

/// Where an enumeration list ends (see [`flag_schema`]).
fn list_end(list: &str) -> usize {
    let mut chars = list.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '(' | ')' | ';' => return i,
            '.' if chars.peek().is_some_and(|&(_, next)| next.is_whitespace()) => return i,
            _ => {}
        }
    }
    list.len()
}

/// Byte offset of `phrase` in `lower` where it starts a word.
fn find_phrase(lower: &str, phrase: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = lower.get(from..)?.find(phrase) {
        let at = from + found;
        let starts_word = lower
            .get(..at)
            .and_then(|before| before.chars().next_back())
            .is_none_or(|c| !c.is_alphanumeric());
        if starts_word {
            return Some(at);
        }
        from = at + phrase.len();
    }
    None
}

/// `text` without `prefix`, compared ASCII case-insensitively.
fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    if head.eq_ignore_ascii_case(prefix) {
        text.get(prefix.len()..)
    } else {
        None
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::sections::tests::EMAIL;

    #[test]
    fn flag_schema_design_doc() {
        let schema = flag_schema(EMAIL).unwrap();
        let names: Vec<&str> = schema.flags.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "to",
                "subject",
                "cc",
                "tone",
                "status",
                "priority",
                "sort",
                "overdue",
                "enum-flag",
                "limit",
                "due-before"
            ]
        );

        let to = schema.get("to").unwrap();
        assert!(to.required);
        assert_eq!(
            to.description,
            "Recipient email addresses, space-separated (required)"
        );
        assert_eq!(to.line, 11);
        assert_eq!(to.value_hint, None);
        assert!(to.one_of.is_empty());

        let required: Vec<&str> = schema.required().map(|f| f.name.as_str()).collect();
        assert_eq!(required, vec!["to", "subject"]);

        let cc = schema.get("cc").unwrap();
        assert!(!cc.required && cc.default.is_none() && !cc.boolean);

        let tone = schema.get("tone").unwrap();
        assert_eq!(tone.default.as_deref(), Some("professional"));
        assert!(tone.one_of.is_empty());

        let status = schema.get("status").unwrap();
        assert_eq!(
            status.one_of,
            vec!["todo", "in_progress", "blocked", "done", "cancelled"]
        );
        assert!(status.multiple);
        assert_eq!(
            status.default.as_deref(),
            Some("todo, in_progress, blocked")
        );
        assert_eq!(status.value_hint, None);

        let priority = schema.get("priority").unwrap();
        assert_eq!(priority.one_of, vec!["critical", "high", "medium", "low"]);
        assert!(priority.multiple);

        let sort = schema.get("sort").unwrap();
        assert!(sort.one_of.is_empty(), "Sort by: is not an enumeration");
        assert_eq!(sort.default.as_deref(), Some("due_date"));

        let overdue = schema.get("overdue").unwrap();
        assert!(overdue.boolean);
        assert_eq!(overdue.value_hint, None);

        let enum_flag = schema.get("enum-flag").unwrap();
        assert_eq!(enum_flag.one_of, vec!["option1", "option2", "option3"]);
        assert!(!enum_flag.multiple);

        assert_eq!(schema.get("limit").unwrap().default.as_deref(), Some("20"));

        let due = schema.get("due-before").unwrap();
        assert_eq!(due.value_hint.as_deref(), Some("YYYY-MM-DD"));
        assert_eq!(due.line, 21);

        assert!(schema.get("--to").is_none());
        assert!(schema.get("nope").is_none());
    }

    #[test]
    fn flag_line_shapes() {
        let body = "## Flags\n\
                    - --bullet  A bullet flag\n\
                    * `--ticked` - Ticked with dash (required)\n\
                    `--colon`: Ticked with colon\n\
                    - `--both <n>` \u{2014} Em dash and placeholder\n\
                    --tabbed\tTab separated\n\
                    --to <addresses>  With placeholder\n\
                    --eq=<when>  With equals\n\
                    --bare\n\
                    --v2_x-y  Odd but valid name\n\
                    --, not a flag\n\
                    ---\n\
                    --_bad  Bad start\n\
                    --glued,  Glued punctuation\n";
        let schema = flag_schema(body).unwrap();
        let got: Vec<(&str, &str, Option<&str>)> = schema
            .flags
            .iter()
            .map(|f| {
                (
                    f.name.as_str(),
                    f.description.as_str(),
                    f.value_hint.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("bullet", "A bullet flag", None),
                ("ticked", "Ticked with dash (required)", None),
                ("colon", "Ticked with colon", None),
                ("both", "Em dash and placeholder", Some("n")),
                ("tabbed", "Tab separated", None),
                ("to", "With placeholder", Some("addresses")),
                ("eq", "With equals", Some("when")),
                ("bare", "", None),
                ("v2_x-y", "Odd but valid name", None),
            ]
        );
        assert!(schema.get("ticked").unwrap().required);
        assert_eq!(schema.get("bullet").unwrap().line, 2);
        assert_eq!(schema.get("v2_x-y").unwrap().line, 10);
    }

    #[test]
    fn continuation_lines() {
        let body = "## Flags\n\
                    --status  Filter by status. One of: todo,\n    \
                    doing, done\n\t(default: todo)\n\
                    --next  Next\n\
                    \n    \
                    indented after blank is not a continuation\n\
                    --last  Last\n\
                    Unindented prose ends it.\n    \
                    and this is not appended\n";
        let schema = flag_schema(body).unwrap();
        let status = schema.get("status").unwrap();
        assert_eq!(
            status.description,
            "Filter by status. One of: todo, doing, done (default: todo)"
        );
        assert_eq!(status.one_of, vec!["todo", "doing", "done"]);
        assert_eq!(status.default.as_deref(), Some("todo"));
        assert_eq!(status.line, 2);
        assert_eq!(schema.get("next").unwrap().description, "Next");
        assert_eq!(schema.get("last").unwrap().description, "Last");
        assert_eq!(schema.flags.len(), 3);
    }

    #[test]
    fn continuation_does_not_swallow_indented_flag() {
        let body = "## Flags\n--a  First\n  --b  Second\n";
        let schema = flag_schema(body).unwrap();
        assert_eq!(schema.flags.len(), 2);
        assert_eq!(schema.get("a").unwrap().description, "First");
        assert_eq!(schema.get("b").unwrap().line, 3);
    }

    #[test]
    fn flags_in_fence() {
        let body = "## Flags\n\n```\n--a  Alpha (required)\n--b  Beta\n```\n";
        let schema = flag_schema(body).unwrap();
        assert_eq!(schema.flags.len(), 2);
        assert_eq!(schema.get("a").unwrap().line, 4);
        assert!(schema.get("a").unwrap().required);
    }

    #[test]
    fn enumeration_edges() {
        let body = "## Flags\n\
                    --a  ONE OF: x, y, or z. Defaults to x.\n\
                    --b  Mode (one of: fast, slow) (required)\n\
                    --c  One of: `on`, \"off\", 'auto'; case-insensitive\n\
                    --d  Someone of: p, q\n\
                    --e  One or more of: v1.2, v2.0.\n\
                    --f  One of:\n";
        let schema = flag_schema(body).unwrap();
        assert_eq!(schema.get("a").unwrap().one_of, vec!["x", "y", "z"]);
        let b = schema.get("b").unwrap();
        assert_eq!(b.one_of, vec!["fast", "slow"]);
        assert!(b.required);
        assert_eq!(b.value_hint, None, "an enumeration group is not a hint");
        assert_eq!(schema.get("c").unwrap().one_of, vec!["on", "off", "auto"]);
        assert!(schema.get("d").unwrap().one_of.is_empty());
        let e = schema.get("e").unwrap();
        assert_eq!(e.one_of, vec!["v1.2", "v2.0"]);
        assert!(e.multiple);
        let f = schema.get("f").unwrap();
        assert!(f.one_of.is_empty());
        assert!(!f.multiple);
    }

    #[test]
    fn annotations() {
        let body = "## Flags\n\
                    --a  Date (YYYY-MM-DD) (required).\n\
                    --b  Thing (optional)\n\
                    --c  Verbose (BOOLEAN)\n\
                    --d  Count (Default:  5 ) more text (see docs) (e.g. 3)\n\
                    --e  Empty default (default: )\n\
                    --f  Nested (a (b) c)\n\
                    --g  Unclosed (oops\n";
        let schema = flag_schema(body).unwrap();
        let a = schema.get("a").unwrap();
        assert!(a.required);
        assert_eq!(a.value_hint.as_deref(), Some("YYYY-MM-DD"));
        assert_eq!(schema.get("b").unwrap().value_hint, None);
        assert!(!schema.get("b").unwrap().required);
        assert!(schema.get("c").unwrap().boolean);
        let d = schema.get("d").unwrap();
        assert_eq!(d.default.as_deref(), Some("5"));
        assert_eq!(d.value_hint.as_deref(), Some("e.g. 3"));
        assert_eq!(schema.get("e").unwrap().default, None);
        assert_eq!(
            schema.get("f").unwrap().value_hint.as_deref(),
            Some("a (b) c")
        );
        assert_eq!(schema.get("g").unwrap().value_hint, None);
    }

    #[test]
    fn trailing_hint_beats_placeholder() {
        let body = "## Flags\n--due <date>  Due date (YYYY-MM-DD)\n--at <time>  Time\n";
        let schema = flag_schema(body).unwrap();
        assert_eq!(
            schema.get("due").unwrap().value_hint.as_deref(),
            Some("YYYY-MM-DD")
        );
        assert_eq!(
            schema.get("at").unwrap().value_hint.as_deref(),
            Some("time")
        );
    }

    #[test]
    fn duplicate_flag_names_kept_get_returns_first() {
        let body = "## Flags\n--a  First\n--a  Second\n";
        let schema = flag_schema(body).unwrap();
        assert_eq!(schema.flags.len(), 2);
        assert_eq!(schema.get("a").unwrap().description, "First");
    }

    #[test]
    fn flag_schema_none_cases() {
        assert_eq!(flag_schema("# t\n\n## Usage\nx\n"), None);
        assert_eq!(
            flag_schema("## Flags\n\nThis skill takes no flags.\n"),
            None
        );
        assert_eq!(flag_schema("## Flags\n"), None);
    }

    #[test]
    fn flag_lines_relative_to_body_with_crlf() {
        let body = "x\r\n## Flags\r\n--a  Alpha (required)\r\n  more\r\n--b  Beta (YYYY)\r\n";
        let schema = flag_schema(body).unwrap();
        let a = schema.get("a").unwrap();
        assert_eq!(a.line, 3);
        assert_eq!(a.description, "Alpha (required) more");
        assert!(a.required);
        let b = schema.get("b").unwrap();
        assert_eq!(b.line, 5);
        assert_eq!(b.value_hint.as_deref(), Some("YYYY"));
    }
}
