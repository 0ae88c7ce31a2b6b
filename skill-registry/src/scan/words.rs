//! Word prefilters for the whole-file checks: before a case-insensitive pattern runs over a
//! file, one pass of an Aho-Corasick automaton over the file's text says which of the words
//! every match of it must contain are there at all, and whether each stands at the start of
//! a word, or as a whole word. Most files lack them, and the pass costs a fraction of one
//! pattern's.
//!
//! The prefilter is exact, never a guess: a condition only asks for words that each
//! alternative of its pattern spells out literally, and asks that a word stand at a word's
//! start (or whole) only where the pattern puts a word boundary (or a character that is not
//! a word character) there; so when it fails the pattern cannot match. Boundaries are ASCII
//! ones, as in the patterns (`scan::pattern`): the word characters are ASCII letters, digits
//! and `_`, and every other byte (any byte of a character outside ASCII) separates words.
//! Case-insensitive patterns also match the two non-ASCII letters that fold to ASCII ones
//! (KELVIN SIGN to `k`, LONG S to `s`); a text holding either gets no prefilter, and every
//! pattern runs as before.

use std::sync::LazyLock;

use aho_corasick::automaton::{Automaton, StateID};
use aho_corasick::dfa::DFA;
use aho_corasick::{Anchored, MatchKind};

/// The two characters outside ASCII that a case-insensitive pattern matches for an ASCII
/// letter (a test checks there are no others).
const FOLDS_TO_ASCII: [char; 2] = ['\u{212a}', '\u{17f}'];

/// Declares every word the prefilters ask for, each with a one-bit mask named after it
/// (masks combine with `|`), in the order of [`WORDS`].
macro_rules! words {
    ($($name:ident = $text:literal,)*) => {
        /// Bit positions of the words.
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[repr(u8)]
        enum Bit { $($name,)* }
        $(
            #[doc = concat!("The word `", $text, "`.")]
            pub(crate) const $name: u64 = 1 << Bit::$name as u8;
        )*
        /// Every word the prefilters ask for (`phrases::could_match`,
        /// `exfil::could_match`), lowercase, in bit order.
        const WORDS: &[&str] = &[$($text,)*];
    };
}

words! {
    IGNORE = "ignore",
    DISREGARD = "disregard",
    FORGET = "forget",
    OVERRIDE = "override",
    BYPASS = "bypass",
    YOU = "you",
    NOW = "now",
    SYSTEM = "system",
    PROMPT = "prompt",
    REVEAL = "reveal",
    PRINT = "print",
    OUTPUT = "output",
    REPEAT = "repeat",
    LEAK = "leak",
    DUMP = "dump",
    DISCLOSE = "disclose",
    EXPOSE = "expose",
    EXFILTRATE = "exfiltrate",
    INSTRUCTIONS = "instructions",
    KEYS = "keys",
    SECRETS = "secrets",
    CREDENTIALS = "credentials",
    PASSWORDS = "passwords",
    ENVIRONMENT = "environment",
    CURL = "curl",
    WGET = "wget",
    IRM = "irm",
    IWR = "iwr",
    INVOKE = "invoke-",
    IEX = "iex",
    ENV = "env",
    PRINTENV = "printenv",
    CAT = "cat",
    NC = "nc",
    NCAT = "ncat",
    NETCAT = "netcat",
    SOCAT = "socat",
    DOLLAR = "$",
    PERCENT = "%",
    BRACES = "{{",
    SECRET = "secret",
    TOKEN = "token",
    PASSW = "passw",
    PWD = "pwd",
    CREDENTIAL = "credential",
    KEY = "key",
    DOLLAR_PAREN = "$(",
    PROCESS_ENV = "process.env",
    OS_ENVIRON = "os.environ",
    DOLLAR_ENV = "$env:",
    DATA = "data:",
}

// One bit per word in a `u64`, and the automaton's pattern ids for the folds after them.
const _: () = assert!(WORDS.len() <= 64);

/// One automaton for every word (ASCII case folded) and the UTF-8 spellings of
/// [`FOLDS_TO_ASCII`] (pattern ids after the words'), with every match of a state listed
/// in it (standard semantics: a walk over the text visits every occurrence of every word).
/// `None` if it cannot be built (it always can; a test checks): then no prefilter applies.
static AUTOMATON: LazyLock<Option<DFA>> = LazyLock::new(|| {
    let mut buf = [[0u8; 4]; FOLDS_TO_ASCII.len()];
    let folds = FOLDS_TO_ASCII
        .iter()
        .zip(buf.iter_mut())
        .map(|(c, b)| &*c.encode_utf8(b));
    let patterns: Vec<&str> = WORDS.iter().copied().chain(folds).collect();
    DFA::builder()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .prefilter(false)
        .build(patterns)
        .ok()
});

/// Independent walks over parts of the text, stepped together: a walk is one chain of
/// dependent table lookups, so interleaving several lets the processor overlap them
/// (`Words::of` steps four).
const WALKS: usize = 4;
/// Texts shorter than this are walked in one piece.
const SPLIT_MIN_BYTES: usize = 256;

/// Whether a byte is a word character for an ASCII word boundary.
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The words a file's text holds, in any ASCII case: anywhere, at the start of a word, and
/// as a whole word (each a set of the word masks).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Words {
    anywhere: u64,
    start: u64,
    whole: u64,
}

impl Words {
    /// The words of `text`, or `None` when the text holds a character that folds to an
    /// ASCII letter (then no prefilter applies). One pass over the text.
    pub(crate) fn of(text: &str) -> Option<Words> {
        let dfa = AUTOMATON.as_ref()?;
        let start = dfa.start_state(Anchored::No).ok()?;
        let bytes = text.as_bytes();
        let mut words = Words::default();
        let mut tail = (start, 0);
        if bytes.len() >= SPLIT_MIN_BYTES {
            // `WALKS` parts of equal length (the last one also takes what is left), each
            // walk starting early enough to see every word whose last byte is in its part
            // (that many bytes before it, less one): the words found twice are the same
            // words, and each is noted where it stands in the whole text.
            let overlap = WORDS.iter().map(|w| w.len()).max().unwrap_or(1) - 1;
            let part = bytes.len() / WALKS;
            // Each walk reads its overlap and its part: `len` bytes from `first`, all
            // within the text (the last walk ends at `WALKS * part`).
            let len = part + overlap;
            let first = |k: usize| (k * part).saturating_sub(overlap);
            let piece = |k: usize| bytes.get(first(k)..first(k) + len).unwrap_or_default();
            let mut sids = [start; WALKS];
            let steps = piece(0)
                .iter()
                .zip(piece(1))
                .zip(piece(2))
                .zip(piece(3))
                .enumerate();
            for (i, (((&b0, &b1), &b2), &b3)) in steps {
                for (k, b) in [b0, b1, b2, b3].into_iter().enumerate() {
                    let sid = dfa.next_state(Anchored::No, sids[k], b);
                    sids[k] = sid;
                    if dfa.is_special(sid) && !words.note(dfa, sid, bytes, first(k) + i + 1) {
                        return None;
                    }
                }
            }
            // The last walk goes on over what its part has past the others' length.
            tail = (sids[WALKS - 1], first(WALKS - 1) + len);
        }
        let (mut sid, from) = tail;
        for (at, &b) in bytes.iter().enumerate().skip(from) {
            sid = dfa.next_state(Anchored::No, sid, b);
            if dfa.is_special(sid) && !words.note(dfa, sid, bytes, at + 1) {
                return None;
            }
        }
        Some(words)
    }

    /// Note the words a walk of `dfa` over `bytes` matched on reaching the special state
    /// `sid` after the byte before `end`; false for a fold (or a dead state, which a walk
    /// with standard semantics never reaches): then no prefilter applies.
    fn note(&mut self, dfa: &DFA, sid: StateID, bytes: &[u8], end: usize) -> bool {
        if dfa.is_dead(sid) {
            return false;
        }
        if !dfa.is_match(sid) {
            return true;
        }
        for i in 0..dfa.match_len(sid) {
            let pid = dfa.match_pattern(sid, i);
            let id = pid.as_usize();
            if id >= WORDS.len() {
                return false;
            }
            let bit = 1u64 << id;
            self.anywhere |= bit;
            let first = end.saturating_sub(dfa.pattern_len(pid));
            let starts = first
                .checked_sub(1)
                .and_then(|i| bytes.get(i))
                .is_none_or(|b| !is_word(*b));
            if starts {
                self.start |= bit;
                if bytes.get(end).is_none_or(|b| !is_word(*b)) {
                    self.whole |= bit;
                }
            }
        }
        true
    }

    /// Whether the text holds any of `words` (masks combined with `|`) anywhere.
    pub(crate) fn any(&self, words: u64) -> bool {
        self.anywhere & words != 0
    }

    /// Whether the text holds any of `words` where a word starts (at the text's start or
    /// after a byte that is not a word character). Meaningful for words that begin with a
    /// word character.
    pub(crate) fn any_start(&self, words: u64) -> bool {
        self.start & words != 0
    }

    /// Whether the text holds any of `words` as a whole word: where a word starts, and
    /// followed by the text's end or a byte that is not a word character. Meaningful for
    /// words that begin and end with word characters.
    pub(crate) fn any_whole(&self, words: u64) -> bool {
        self.whole & words != 0
    }
}

/// Whether a pattern may match `text`: true without a prefilter, else what `check` says of
/// the text's words.
pub(crate) fn may(words: Option<&Words>, check: impl Fn(&Words) -> bool) -> bool {
    words.is_none_or(check)
}

#[cfg(test)]
#[path = "words_tests.rs"]
mod tests;
