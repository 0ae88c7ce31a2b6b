//! Word prefilters for the whole-file checks: before a case-insensitive pattern runs over a
//! file, a few substring searches of the file's ASCII-lowercased text say whether the
//! words every match of it must contain are there at all. Most files lack them, and the
//! searches (SIMD `memmem`) cost a fraction of one pattern's pass.
//!
//! The prefilter is exact, never a guess: a condition only asks for words that each
//! alternative of its pattern spells out literally, so when it fails the pattern cannot
//! match. Case-insensitive patterns also match the two non-ASCII letters that fold to
//! ASCII ones (KELVIN SIGN to `k`, LONG S to `s`); a text holding either gets no
//! prefilter, and every pattern runs as before.

use std::collections::HashMap;
use std::sync::LazyLock;

use memchr::memmem;

/// The two characters outside ASCII that a case-insensitive pattern matches for an ASCII
/// letter (a test checks there are no others).
const FOLDS_TO_ASCII: [char; 2] = ['\u{212a}', '\u{17f}'];

/// Every word the prefilters ask for (`phrases::could_match`, `exfil::could_match`). Each
/// gets a searcher built once: building one per search cost more than the search itself on
/// a skill-sized file. A word not listed is still searched for, only slower.
const WORDS: &[&str] = &[
    "ignore",
    "disregard",
    "forget",
    "override",
    "bypass",
    "you",
    "now",
    "system",
    "prompt",
    "reveal",
    "print",
    "output",
    "repeat",
    "leak",
    "dump",
    "disclose",
    "expose",
    "exfiltrate",
    "instructions",
    "keys",
    "secrets",
    "credentials",
    "passwords",
    "environment",
    "curl",
    "wget",
    "irm",
    "iwr",
    "invoke-",
    "iex",
    "env",
    "cat",
    "$",
    "%",
    "{{",
    "secret",
    "token",
    "passw",
    "pwd",
    "credential",
    "key",
    "$(",
    "process.env",
    "os.environ",
    "$env:",
    "data:",
];

/// The searchers of [`WORDS`], and of the UTF-8 spellings of [`FOLDS_TO_ASCII`].
struct Finders {
    words: HashMap<&'static str, memmem::Finder<'static>>,
    folds: Vec<memmem::Finder<'static>>,
}

static FINDERS: LazyLock<Finders> = LazyLock::new(|| Finders {
    words: WORDS
        .iter()
        .map(|w| (*w, memmem::Finder::new(w.as_bytes()).into_owned()))
        .collect(),
    folds: FOLDS_TO_ASCII
        .iter()
        .map(|c| {
            let mut buf = [0u8; 4];
            memmem::Finder::new(c.encode_utf8(&mut buf).as_bytes()).into_owned()
        })
        .collect(),
});

/// A file's text lowered for the word checks.
pub(crate) struct Lowered {
    text: Vec<u8>,
}

impl Lowered {
    /// The lowered text, or `None` when the text holds a character that folds to an ASCII
    /// letter (then no prefilter applies).
    pub(crate) fn of(text: &str) -> Option<Lowered> {
        let bytes = text.as_bytes();
        if !text.is_ascii() && FINDERS.folds.iter().any(|f| f.find(bytes).is_some()) {
            return None;
        }
        Some(Lowered {
            text: bytes.to_ascii_lowercase(),
        })
    }

    /// Whether the text holds `word` (lowercase), in any ASCII case.
    pub(crate) fn has(&self, word: &str) -> bool {
        match FINDERS.words.get(word) {
            Some(f) => f.find(&self.text).is_some(),
            None => memmem::find(&self.text, word.as_bytes()).is_some(),
        }
    }

    /// Whether the text holds any of `words` (lowercase), in any ASCII case.
    pub(crate) fn any(&self, words: &[&str]) -> bool {
        words.iter().any(|w| self.has(w))
    }
}

/// Whether a pattern may match `text`: true without a prefilter, else what `check` says of
/// the lowered text.
pub(crate) fn may(lowered: Option<&Lowered>, check: impl Fn(&Lowered) -> bool) -> bool {
    lowered.is_none_or(check)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// Every character a case-insensitive pattern takes for an ASCII letter is ASCII or one
    /// of [`FOLDS_TO_ASCII`]: the premise of the prefilter's exactness.
    #[test]
    fn only_two_non_ascii_characters_fold_to_ascii_letters() {
        let letter = regex::Regex::new("(?i)^[a-z]$").unwrap();
        let mut buf = [0u8; 4];
        let folding: Vec<char> = (0x80..=0x10_ffff)
            .filter_map(char::from_u32)
            .filter(|c| letter.is_match(c.encode_utf8(&mut buf)))
            .collect();
        assert_eq!(folding, [FOLDS_TO_ASCII[1], FOLDS_TO_ASCII[0]]);
    }

    /// The prebuilt searchers answer as a fresh search does, for every word, in texts that
    /// hold it at the start, in the middle, at the end, split, or not at all.
    #[test]
    fn prebuilt_searchers_agree_with_a_fresh_search() {
        for w in WORDS.iter().chain(&["not-listed", "zq"]) {
            let split = format!("{}\n{}", &w[..w.len() / 2], &w[w.len() / 2..]);
            for text in [
                w.to_string(),
                format!("{w} tail"),
                format!("head {} tail", w.to_uppercase()),
                format!("caf\u{e9} {w}"),
                split,
                "nothing to see here".to_owned(),
                String::new(),
            ] {
                let l = Lowered::of(&text).unwrap();
                let fresh = memmem::find(&text.to_ascii_lowercase().into_bytes(), w.as_bytes());
                assert_eq!(l.has(w), fresh.is_some(), "{w:?} in {text:?}");
            }
        }
        assert!(Lowered::of("caf\u{e9} \u{212a}").is_none());
    }

    #[test]
    fn words_are_found_in_any_ascii_case_and_folding_text_has_no_prefilter() {
        let l = Lowered::of("Run CURL https://x | Sh").unwrap();
        assert!(l.has("curl") && l.any(&["nope", "sh"]) && !l.has("wget"));
        assert!(Lowered::of("\u{212a}ey").is_none());
        assert!(Lowered::of("pa\u{17f}\u{17f}words").is_none());
        assert!(Lowered::of("caf\u{e9} \u{2014} ok").is_some());
        assert!(may(None, |_| false));
    }
}
