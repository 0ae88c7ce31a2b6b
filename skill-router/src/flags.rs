//! Best-effort flag parsing (markdown-first 5.1, Approach A): no schema, nothing dropped.

use std::borrow::Cow;

use crate::tokenize::{Token, Word};

/// The value of one flag.
///
/// `S` is the string type: [`String`] (the default) for a value a caller keeps, or
/// `Cow<'a, str>` for one that borrows the command line when it can, as
/// [`Router::route_output`](crate::Router::route_output) gives it ([`FlagValue::into_owned`]
/// converts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlagValue<S = String> {
    /// Given with no value: `--overdue` (true by presence). Serialized as `true`.
    Switch(bool),
    /// One value: `--to bob@co.com` or `--to=bob@co.com`.
    One(S),
    /// Several values: `--to alice@co.com bob@co.com`, or a flag repeated.
    Many(Vec<S>),
}

impl<S> FlagValue<S> {
    /// The values (none for a switch).
    pub fn values(&self) -> &[S] {
        match self {
            FlagValue::Switch(_) => &[],
            FlagValue::One(v) => std::slice::from_ref(v),
            FlagValue::Many(v) => v,
        }
    }

    /// Whether the flag was given with no value.
    pub fn is_switch(&self) -> bool {
        matches!(self, FlagValue::Switch(_))
    }

    fn into_values(self) -> Vec<S> {
        match self {
            FlagValue::Switch(_) => Vec::new(),
            FlagValue::One(v) => vec![v],
            FlagValue::Many(v) => v,
        }
    }

    /// A repeated flag keeps every value: `--tag a --tag b` is `[a, b]`; a switch repeated
    /// with values becomes the values.
    fn merge(self, more: FlagValue<S>) -> Self {
        let mut values = self.into_values();
        values.extend(more.into_values());
        if values.len() > 1 {
            return FlagValue::Many(values);
        }
        match values.pop() {
            Some(v) => FlagValue::One(v),
            None => FlagValue::Switch(true),
        }
    }
}

impl<S: AsRef<str>> FlagValue<S> {
    /// The value when there is exactly one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            FlagValue::One(v) => Some(v.as_ref()),
            FlagValue::Many(v) if v.len() == 1 => v.first().map(AsRef::as_ref),
            _ => None,
        }
    }
}

impl<S: Into<String>> FlagValue<S> {
    /// The value with owned strings (text already owned is moved, not copied).
    pub fn into_owned(self) -> FlagValue {
        match self {
            FlagValue::Switch(b) => FlagValue::Switch(b),
            FlagValue::One(v) => FlagValue::One(v.into()),
            FlagValue::Many(v) => FlagValue::Many(v.into_iter().map(Into::into).collect()),
        }
    }
}

/// Flags by name (without `--`), sorted by name.
///
/// Kept as one vector sorted by name, names unique: a routed command has a handful of
/// flags, so a lookup is a short binary search and building the flags is one allocation.
/// `S` is the string type, as for [`FlagValue`].
#[derive(Clone, PartialEq, Eq)]
pub struct Flags<S = String>(Vec<(S, FlagValue<S>)>);

/// One flag as [`Flags`] keeps it.
type Entry<S> = (S, FlagValue<S>);

/// The iterator of `&Flags`: each flag's name and value, by name.
type FlagsIter<'a, S> =
    std::iter::Map<std::slice::Iter<'a, Entry<S>>, fn(&'a Entry<S>) -> (&'a S, &'a FlagValue<S>)>;

impl<S> Default for Flags<S> {
    fn default() -> Self {
        Flags(Vec::new())
    }
}

impl Flags {
    /// No flags.
    pub fn new() -> Self {
        Flags::default()
    }

    /// Set a flag, replacing any value it had.
    pub fn insert(&mut self, name: impl Into<String>, value: FlagValue) {
        let name = name.into();
        match self.find(&name) {
            Ok(at) => {
                if let Some(slot) = self.0.get_mut(at) {
                    slot.1 = value;
                }
            }
            Err(at) => self.0.insert(at, (name, value)),
        }
    }
}

impl<S: AsRef<str>> Flags<S> {
    /// Where `name` is, or where it would go.
    fn find(&self, name: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_ref().cmp(name))
    }

    /// A flag's value.
    pub fn get(&self, name: &str) -> Option<&FlagValue<S>> {
        let at = self.find(name).ok()?;
        self.0.get(at).map(|(_, v)| v)
    }

    /// Whether the flag was given.
    pub fn contains(&self, name: &str) -> bool {
        self.find(name).is_ok()
    }

    /// Every flag, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &FlagValue<S>)> {
        self.0.iter().map(|(k, v)| (k.as_ref(), v))
    }
}

impl<S> Flags<S> {
    /// How many flags.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<S: Into<String>> Flags<S> {
    /// The flags with owned strings (text already owned is moved, not copied).
    pub fn into_owned(self) -> Flags {
        Flags(
            self.0
                .into_iter()
                .map(|(k, v)| (k.into(), v.into_owned()))
                .collect(),
        )
    }
}

impl<S: std::fmt::Debug> std::fmt::Debug for Flags<S> {
    /// As a map by name, the way the flags were printed when they were a `BTreeMap`:
    /// `Flags({"to": One("bob")})`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        struct Map<'a, S>(&'a [Entry<S>]);
        impl<S: std::fmt::Debug> std::fmt::Debug for Map<'_, S> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_map()
                    .entries(self.0.iter().map(|(k, v)| (k, v)))
                    .finish()
            }
        }
        f.debug_tuple("Flags").field(&Map(&self.0)).finish()
    }
}

/// Flags as a parse collects them: in the order given, repeats included, sorted and merged
/// once at the end ([`Pending::finish`]), so that collecting is linear and a command's flags
/// cost one allocation.
struct Pending<S>(Vec<Entry<S>>);

impl<S: AsRef<str>> Pending<S> {
    fn add(&mut self, name: S, value: FlagValue<S>) {
        self.0.push((name, value));
    }

    /// Sorted by name (stably, so a repeated flag's values stay in the order given) and
    /// repeats merged in that order, as adding them one by one to a map would.
    fn finish(self) -> Flags<S> {
        let mut all = self.0;
        if all
            .windows(2)
            .all(|w| matches!(w, [a, b] if a.0.as_ref() < b.0.as_ref()))
        {
            return Flags(all);
        }
        all.sort_by(|a, b| a.0.as_ref().cmp(b.0.as_ref()));
        // Merged in place: `later` is removed after its value joins the `kept` one.
        all.dedup_by(|later, kept| {
            if later.0.as_ref() != kept.0.as_ref() {
                return false;
            }
            let more = std::mem::replace(&mut later.1, FlagValue::Switch(true));
            let old = std::mem::replace(&mut kept.1, FlagValue::Switch(true));
            kept.1 = old.merge(more);
            true
        });
        Flags(all)
    }
}

impl<'a, S> IntoIterator for &'a Flags<S> {
    type Item = (&'a S, &'a FlagValue<S>);
    type IntoIter = FlagsIter<'a, S>;
    fn into_iter(self) -> Self::IntoIter {
        fn pair<S>(e: &Entry<S>) -> (&S, &FlagValue<S>) {
            (&e.0, &e.1)
        }
        self.0.iter().map(pair as fn(&'a Entry<S>) -> _)
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

/// What [`parse_words`] gives: [`Parsed`] with words borrowed from the line where they can be.
#[derive(Debug, Default)]
pub(crate) struct ParsedWords<'a> {
    /// As [`Parsed::flags`].
    pub(crate) flags: Flags<Cow<'a, str>>,
    /// As [`Parsed::positionals`].
    pub(crate) positionals: Vec<Cow<'a, str>>,
    /// As [`Parsed::help`].
    pub(crate) help: bool,
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
    let parsed = parse_words(tokens.into_iter().map(Word::from));
    Parsed {
        flags: parsed.flags.into_owned(),
        positionals: parsed
            .positionals
            .into_iter()
            .map(Cow::into_owned)
            .collect(),
        help: parsed.help,
    }
}

/// [`parse_flags`] over words that may borrow from the line: a borrowed word stays
/// borrowed, an owned one (escaped, or partly quoted) is moved, and only the name and
/// value of an owned `--name=value` word are copied out of it.
pub(crate) fn parse_words<'a, I: IntoIterator<Item = Word<'a>>>(words: I) -> ParsedWords<'a> {
    let mut parsed = ParsedWords::default();
    let mut flags = Pending(Vec::new());
    // The `--flag` whose values are being read, and the values so far: one pass, each
    // word looked at once.
    let mut open: Option<(Cow<'a, str>, FlagValue<Cow<'a, str>>)> = None;
    let mut words = words.into_iter();
    while let Some(word) = words.next() {
        if !word.quoted && word.text == "--" {
            close(open.take(), &mut flags, &mut parsed.help);
            parsed.positionals.extend(words.map(|w| w.text));
            break;
        }
        if !is_flag(&word) {
            match &mut open {
                Some((_, value)) => add_value(value, word.text),
                None => parsed.positionals.push(word.text),
            }
            continue;
        }
        close(open.take(), &mut flags, &mut parsed.help);
        let text = word.text;
        // `text` starts with `--` (checked by `is_flag`).
        let body = text.get(2..).unwrap_or("");
        if let Some((name, _)) = body.split_once('=') {
            if name.is_empty() {
                parsed.positionals.push(text);
            } else {
                let (name, value) = name_and_value(text);
                flags.add(name, FlagValue::One(value));
            }
            continue;
        }
        open = Some((text, FlagValue::Switch(true)));
    }
    close(open, &mut flags, &mut parsed.help);
    parsed.flags = flags.finish();
    parsed
}

/// One more value for the open flag: a switch becomes one value, one value becomes a list.
fn add_value<'a>(value: &mut FlagValue<Cow<'a, str>>, more: Cow<'a, str>) {
    *value = match std::mem::replace(value, FlagValue::Switch(true)) {
        FlagValue::Switch(_) => FlagValue::One(more),
        FlagValue::One(first) => FlagValue::Many(vec![first, more]),
        FlagValue::Many(mut all) => {
            all.push(more);
            FlagValue::Many(all)
        }
    };
}

/// Close the open `--flag` (its whole word, `--` included) with the values read: an
/// unquoted `--help` with none sets `help` instead of becoming a flag.
fn close<'a>(
    open: Option<(Cow<'a, str>, FlagValue<Cow<'a, str>>)>,
    flags: &mut Pending<Cow<'a, str>>,
    help: &mut bool,
) {
    let Some((text, value)) = open else {
        return;
    };
    if text == "--help" && value.is_switch() {
        *help = true;
    } else {
        flags.add(name_of(text), value);
    }
}

/// The flag name of a `--name` word: borrowed from the line, or the word's own buffer with
/// the `--` removed in place.
fn name_of(text: Cow<'_, str>) -> Cow<'_, str> {
    match text {
        Cow::Borrowed(t) => Cow::Borrowed(t.get(2..).unwrap_or("")),
        Cow::Owned(mut t) => {
            t.drain(..2.min(t.len()));
            Cow::Owned(t)
        }
    }
}

/// The name and value of a `--name=value` word (one with an `=`): borrowed from the line
/// when the word is, copied out of the word's own buffer otherwise.
fn name_and_value(text: Cow<'_, str>) -> (Cow<'_, str>, Cow<'_, str>) {
    match text {
        Cow::Borrowed(t) => {
            let (name, value) = t.get(2..).unwrap_or("").split_once('=').unwrap_or(("", ""));
            (Cow::Borrowed(name), Cow::Borrowed(value))
        }
        Cow::Owned(t) => {
            let (name, value) = t.get(2..).unwrap_or("").split_once('=').unwrap_or(("", ""));
            (Cow::Owned(name.to_owned()), Cow::Owned(value.to_owned()))
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub(crate) mod tests {
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

    /// The parser as it was before flags were collected unsorted and merged at the end
    /// (a map updated flag by flag, every word owned), kept as the reference the fast path
    /// must agree with: flags, positionals and help alike.
    pub(crate) fn reference(
        tokens: Vec<Token>,
    ) -> (
        std::collections::BTreeMap<String, FlagValue>,
        Vec<String>,
        bool,
    ) {
        let mut flags = std::collections::BTreeMap::<String, FlagValue>::new();
        let mut add = |name: String, value: FlagValue| match flags.remove(&name) {
            Some(old) => {
                flags.insert(name, old.merge(value));
            }
            None => {
                flags.insert(name, value);
            }
        };
        let (mut positionals, mut help) = (Vec::new(), false);
        let mut words = tokens.into_iter().map(Word::from).peekable();
        while let Some(word) = words.next() {
            if !word.quoted && word.text == "--" {
                positionals.extend(words.map(|w| w.text.into_owned()));
                break;
            }
            if !is_flag(&word) {
                positionals.push(word.text.into_owned());
                continue;
            }
            let text = word.text.into_owned();
            let body = &text[2..];
            if let Some((name, value)) = body.split_once('=') {
                if name.is_empty() {
                    positionals.push(text.clone());
                } else {
                    add(name.to_owned(), FlagValue::One(value.to_owned()));
                }
                continue;
            }
            let is_value = |next: &Word<'_>| !is_flag(next) && (next.quoted || next.text != "--");
            let mut values = Vec::new();
            while let Some(next) = words.next_if(is_value) {
                values.push(next.text.into_owned());
            }
            let value = match values.len() {
                0 => FlagValue::Switch(true),
                1 => FlagValue::One(values.remove(0)),
                _ => FlagValue::Many(values),
            };
            if body == "help" && value.is_switch() {
                help = true;
            } else {
                add(body.to_owned(), value);
            }
        }
        (flags, positionals, help)
    }

    /// The parser and the reference agree on one line (lines that do not tokenize are
    /// skipped), and the flags read back the same through every accessor.
    fn agrees(line: &str) {
        let Ok(tokens) = tokenize(line) else {
            return;
        };
        let got = parse_flags(tokens.clone());
        let (flags, positionals, help) = reference(tokens);
        let got_flags: Vec<(&str, &FlagValue)> = got.flags.iter().collect();
        let want_flags: Vec<(&str, &FlagValue)> =
            flags.iter().map(|(k, v)| (k.as_str(), v)).collect();
        assert_eq!(got_flags, want_flags, "{line:?}");
        assert_eq!(got.positionals, positionals, "{line:?}");
        assert_eq!(got.help, help, "{line:?}");
        assert_eq!(got.flags.len(), flags.len(), "{line:?}");
        assert_eq!(
            format!("{:?}", got.flags),
            format!("Flags({flags:?})"),
            "{line:?}"
        );
        for (name, value) in &flags {
            assert_eq!(got.flags.get(name), Some(value), "{line:?} {name}");
            assert!(got.flags.contains(name), "{line:?} {name}");
        }
        let by_ref: Vec<(&String, &FlagValue)> = (&got.flags).into_iter().collect();
        assert_eq!(by_ref, flags.iter().collect::<Vec<_>>(), "{line:?}");
        assert!(!got.flags.contains("no such flag"));
    }

    /// Argument lines (what follows a skill name) that exercise the flag rules: repeats,
    /// `=` forms, `--`, quoting, `--help`, non-ASCII and pipes. The router's borrowing
    /// test routes each of them too.
    pub(crate) const VARIED_ARGUMENTS: &[&str] = &[
        "",
        "x",
        "--a",
        "--a --a",
        "--a x --a",
        "--a --a x",
        "--b 1 --a 2 --b 3 4 --a",
        "--z 1 --y 2 --x 3 --y --z 5 6",
        "--to alice@co.com bob@co.com --subject \"Meeting Notes\" --overdue",
        "draft-1 --mode=fast -- --literal",
        "--input \"report 1.csv\" --limit 7 --verbose",
        "first --a=1 second --b= --c \"--not-a-flag\" -5 -- --d e",
        "--=x y --= --==",
        r#"--subject="Q1 Report" --a='x y' --b= --c='' --d=x"y"z --e="""#,
        r#""--to" '--x=1' --"y"=2 "--"z=3 --w\=4 --v'='5"#,
        r#"--c "--to" x "--" y -- z"#,
        "--help",
        "--help me",
        "--help --help",
        "--help=1 --help",
        "a --help b",
        "--größe 3 --名前 x --größe 4 --Größe 5",
        "--a=1 --a=2 --a 3 4 --a",
        "--a=1=2 --b==",
        "-- --a b",
        "--a -- b",
        "'--' --a",
        "--a '' \"\" --b ''",
        "--tag a --tag b c --v --v --w --w x",
        "--x\\y 1 --x\\ 2 --é --e --E",
        "--a\u{a0}b 1 --a 2",
        "- -- - --- ---- --a-b --a_b",
        "--a| | --b |",
    ];

    #[test]
    fn parser_matches_the_reference_on_varied_commands() {
        for line in VARIED_ARGUMENTS {
            agrees(line);
        }
        // Many flags (more than a sort does by insertion), with repeats, in every order.
        let names = ["q", "b", "zz", "a", "b", "m", "q", "a", "k", "c"];
        let mut line = String::new();
        for round in 0..30 {
            for i in 0..names.len() {
                let n = names[(i * 7 + round) % names.len()].repeat(1 + (i + round) % 3);
                line.push_str(&format!("--{n} {} ", "v ".repeat((i + round) % 4)));
            }
            agrees(&line);
        }
    }

    proptest::proptest! {
        #[test]
        fn parser_matches_the_reference(
            line in "(--?[abé]{0,2}(=[ab\"' ]{0,3})?|[ab]|\"--a\"|'x y'|\\-|--|-| ){0,12}"
        ) {
            agrees(&line);
        }
    }

    #[test]
    fn value_accessors() {
        assert_eq!(FlagValue::<String>::Switch(true).values(), &[] as &[String]);
        assert_eq!(one("x").as_str(), Some("x"));
        assert_eq!(
            FlagValue::<String>::Many(vec!["a".into(), "b".into()]).as_str(),
            None
        );
        assert!(FlagValue::<String>::Switch(true).is_switch());
    }
}
