//! Best-effort flag parsing (markdown-first 5.1, Approach A): no schema, nothing dropped.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::tokenize::{Token, Word};

/// The value of one flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlagValue {
    /// Given with no value: `--overdue` (true by presence). Serialized as `true`.
    Switch(bool),
    /// One value: `--to bob@co.com` or `--to=bob@co.com`.
    One(String),
    /// Several values: `--to alice@co.com bob@co.com`, or a flag repeated.
    Many(Vec<String>),
}

impl FlagValue {
    /// The values (none for a switch).
    pub fn values(&self) -> &[String] {
        match self {
            FlagValue::Switch(_) => &[],
            FlagValue::One(v) => std::slice::from_ref(v),
            FlagValue::Many(v) => v,
        }
    }

    /// The value when there is exactly one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            FlagValue::One(v) => Some(v),
            FlagValue::Many(v) if v.len() == 1 => v.first().map(String::as_str),
            _ => None,
        }
    }

    /// Whether the flag was given with no value.
    pub fn is_switch(&self) -> bool {
        matches!(self, FlagValue::Switch(_))
    }

    fn into_values(self) -> Vec<String> {
        match self {
            FlagValue::Switch(_) => Vec::new(),
            FlagValue::One(v) => vec![v],
            FlagValue::Many(v) => v,
        }
    }

    /// A repeated flag keeps every value: `--tag a --tag b` is `[a, b]`; a switch repeated
    /// with values becomes the values.
    fn merge(self, more: FlagValue) -> Self {
        let mut values = self.into_values();
        values.extend(more.into_values());
        match values.len() {
            0 => FlagValue::Switch(true),
            1 => FlagValue::One(values.pop().unwrap_or_default()),
            _ => FlagValue::Many(values),
        }
    }
}

/// Flags by name (without `--`), sorted by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flags(BTreeMap<String, FlagValue>);

impl Flags {
    /// No flags.
    pub fn new() -> Self {
        Flags::default()
    }

    /// A flag's value.
    pub fn get(&self, name: &str) -> Option<&FlagValue> {
        self.0.get(name)
    }

    /// Whether the flag was given.
    pub fn contains(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// Set a flag, replacing any value it had.
    pub fn insert(&mut self, name: impl Into<String>, value: FlagValue) {
        self.0.insert(name.into(), value);
    }

    /// Every flag, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &FlagValue)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// How many flags.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn add(&mut self, name: String, value: FlagValue) {
        match self.0.entry(name) {
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(value);
            }
            std::collections::btree_map::Entry::Occupied(mut e) => {
                let old = std::mem::replace(e.get_mut(), FlagValue::Switch(true));
                *e.get_mut() = old.merge(value);
            }
        }
    }
}

impl<'a> IntoIterator for &'a Flags {
    type Item = (&'a String, &'a FlagValue);
    type IntoIter = std::collections::btree_map::Iter<'a, String, FlagValue>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// The result of [`parse_flags`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// The flags.
    pub flags: Flags,
    /// The words that are not flags or flag values, in order.
    pub positionals: Vec<String>,
    /// An unquoted `--help` was among the flags.
    pub help: bool,
}

/// Whether a word is a flag: `--` and at least one more character (`--` alone ends the
/// flags; a single dash, as in `-5`, is a value), and unquoted. A quoted word is a flag
/// only when its `--name=` part is unquoted and quotes start in the value
/// (`--subject="Q1 Report"`); `"--to"` and `"--to=x"` are values.
fn is_flag(word: &Word<'_>) -> bool {
    let Some(name) = word.text.strip_prefix("--") else {
        return false;
    };
    if name.is_empty() {
        return false;
    }
    !word.quoted
        || word
            .text
            .get(2..word.unquoted_prefix)
            .is_some_and(|unquoted| unquoted.contains('='))
}

/// Parse the words after the skill name, best effort (markdown-first 5.1, Approach A):
///
/// * `--flag v1 v2` takes every following word up to the next flag: one value is
///   [`FlagValue::One`], several are [`FlagValue::Many`], none is a switch (true).
/// * `--flag=value` takes exactly that value (an empty one included); the words after it
///   are not its values.
/// * A repeated flag keeps all its values.
/// * `--` alone ends the flags: every word after it is positional.
/// * Quoted words are never flags (`"--to"` is a value or a positional), except a
///   `--flag="quoted value"` whose `--flag=` is unquoted: that is `--flag=value` with the
///   quotes removed (`--subject="Q1 Report"` is the subject `Q1 Report`).
/// * Words before the first flag (and after `--`) are positionals, kept in order, never
///   dropped.
/// * An unquoted `--help` sets [`Parsed::help`] instead of becoming a flag.
pub fn parse_flags<I: IntoIterator<Item = Token>>(tokens: I) -> Parsed {
    parse_words(tokens.into_iter().map(Word::from))
}

/// [`parse_flags`] over words that may borrow from the line: only what is kept is copied.
pub(crate) fn parse_words<'a, I: IntoIterator<Item = Word<'a>>>(words: I) -> Parsed {
    let mut parsed = Parsed::default();
    let mut words = words.into_iter().peekable();
    while let Some(word) = words.next() {
        if !word.quoted && word.text == "--" {
            parsed
                .positionals
                .extend(words.map(|w| w.text.into_owned()));
            break;
        }
        if !is_flag(&word) {
            parsed.positionals.push(word.text.into_owned());
            continue;
        }
        let text = word.text;
        // `text` starts with `--` (checked by `is_flag`).
        let body = text.get(2..).unwrap_or("");
        if let Some((name, value)) = body.split_once('=') {
            if name.is_empty() {
                parsed.positionals.push(text.into_owned());
            } else {
                parsed
                    .flags
                    .add(name.to_owned(), FlagValue::One(value.to_owned()));
            }
            continue;
        }
        let is_value = |next: &Word<'_>| !is_flag(next) && (next.quoted || next.text != "--");
        let value = match words.next_if(is_value) {
            None => FlagValue::Switch(true),
            Some(first) => match words.next_if(is_value) {
                None => FlagValue::One(first.text.into_owned()),
                Some(second) => {
                    let mut values = vec![first.text.into_owned(), second.text.into_owned()];
                    while let Some(next) = words.next_if(is_value) {
                        values.push(next.text.into_owned());
                    }
                    FlagValue::Many(values)
                }
            },
        };
        if body == "help" && value.is_switch() {
            parsed.help = true;
        } else {
            parsed.flags.add(name_of(text), value);
        }
    }
    parsed
}

/// The flag name of a `--name` word, as an owned string (the word's own buffer, with the
/// `--` removed in place, when it has one).
fn name_of(text: Cow<'_, str>) -> String {
    match text {
        Cow::Borrowed(t) => t.get(2..).unwrap_or("").to_owned(),
        Cow::Owned(mut t) => {
            t.drain(..2.min(t.len()));
            t
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::tokenize::tokenize;

    fn parse(s: &str) -> Parsed {
        parse_flags(tokenize(s).unwrap())
    }

    fn one(s: &str) -> FlagValue {
        FlagValue::One(s.to_owned())
    }

    #[test]
    fn seed_shapes() {
        let p = parse("--to alice@co.com bob@co.com --subject \"Meeting Notes\" --overdue");
        assert_eq!(
            p.flags.get("to"),
            Some(&FlagValue::Many(vec![
                "alice@co.com".into(),
                "bob@co.com".into()
            ]))
        );
        assert_eq!(p.flags.get("subject"), Some(&one("Meeting Notes")));
        assert_eq!(p.flags.get("overdue"), Some(&FlagValue::Switch(true)));
        assert!(p.positionals.is_empty());
        assert!(!p.help);
    }

    #[test]
    fn equals_terminator_positionals_and_quoted_flags() {
        let p = parse("first --a=1 second --b= --c \"--not-a-flag\" -5 -- --d e");
        assert_eq!(p.flags.get("a"), Some(&one("1")));
        assert_eq!(p.flags.get("b"), Some(&one("")));
        assert_eq!(
            p.flags.get("c"),
            Some(&FlagValue::Many(vec!["--not-a-flag".into(), "-5".into()]))
        );
        assert_eq!(p.positionals, ["first", "second", "--d", "e"]);
        assert!(!p.flags.contains("d"));
        let p = parse("--=x y");
        assert_eq!(p.positionals, ["--=x", "y"]);
        assert!(p.flags.is_empty());
    }

    #[test]
    fn quoted_values_after_an_unquoted_name_are_flags() {
        let p = parse(r#"--subject="Q1 Report" --a='x y' --b= --c='' --d=x"y"z --e="""#);
        assert_eq!(p.flags.get("subject"), Some(&one("Q1 Report")));
        assert_eq!(p.flags.get("a"), Some(&one("x y")));
        assert_eq!(p.flags.get("b"), Some(&one("")));
        assert_eq!(p.flags.get("c"), Some(&one("")));
        assert_eq!(p.flags.get("d"), Some(&one("xyz")));
        assert_eq!(p.flags.get("e"), Some(&one("")));
        assert!(p.positionals.is_empty(), "{:?}", p.positionals);
        // The words after `--a='x y'` are not its values.
        let p = parse("--a='x y' z");
        assert_eq!(p.flags.get("a"), Some(&one("x y")));
        assert_eq!(p.positionals, ["z"]);
    }

    #[test]
    fn quoted_names_stay_values() {
        // Fully quoted, or quoted before the `=`: never a flag.
        let p = parse(r#""--to" '--x=1' --"y"=2 "--"z=3 --w\=4 --v'='5"#);
        assert!(p.flags.is_empty(), "{:?}", p.flags);
        assert_eq!(
            p.positionals,
            ["--to", "--x=1", "--y=2", "--z=3", "--w=4", "--v=5"]
        );
        // A quoted name after a flag is that flag's value.
        let p = parse(r#"--c "--to" x"#);
        assert_eq!(
            p.flags.get("c"),
            Some(&FlagValue::Many(vec!["--to".into(), "x".into()]))
        );
        // An empty name stays a positional, quoted value or not.
        let p = parse(r#"--="x y""#);
        assert_eq!(p.positionals, ["--=x y"]);
        assert!(p.flags.is_empty());
    }

    #[test]
    fn repeated_flags_keep_every_value() {
        let p = parse("--tag a --tag b c --v --v --w --w x");
        assert_eq!(
            p.flags.get("tag"),
            Some(&FlagValue::Many(vec!["a".into(), "b".into(), "c".into()]))
        );
        assert_eq!(p.flags.get("v"), Some(&FlagValue::Switch(true)));
        assert_eq!(p.flags.get("w"), Some(&one("x")));
    }

    #[test]
    fn help_and_unicode_names() {
        let p = parse("--help");
        assert!(p.help && p.flags.is_empty());
        let p = parse("--help me");
        assert!(!p.help);
        assert_eq!(p.flags.get("help"), Some(&one("me")));
        let p = parse("--größe 3 --名前 x");
        assert_eq!(p.flags.get("größe"), Some(&one("3")));
        assert_eq!(p.flags.get("名前"), Some(&one("x")));
    }

    #[test]
    fn value_accessors() {
        assert_eq!(FlagValue::Switch(true).values(), &[] as &[String]);
        assert_eq!(one("x").as_str(), Some("x"));
        assert_eq!(FlagValue::Many(vec!["a".into(), "b".into()]).as_str(), None);
        assert!(FlagValue::Switch(true).is_switch());
    }
}
