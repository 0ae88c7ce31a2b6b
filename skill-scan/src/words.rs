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
/// The size of [`Table::next`]: every `u16` indexes it, so a step needs no bounds check.
const TABLE_LEN: usize = 1 << 16;
/// The bit of a [`Table::next`] entry that marks the automaton's special states (matches
/// and the dead state); the other bits are the state's row. The table holds its rows
/// twice, below and above this bit, so that a marked entry is a row as it is.
const SPECIAL: u16 = 1 << 15;

/// [`AUTOMATON`] as one flat table, for the walk: the states reachable from its start,
/// numbered in the order they are reached, the bytes in classes that no state tells
/// apart, and each state's row of next states by class. A step is two loads, an addition
/// and a test.
struct Table {
    /// Each byte's class.
    class: [u8; 256],
    /// By row plus class: the next state's row (its number times the class count), with
    /// [`SPECIAL`] when the automaton says it is special; the same again from [`SPECIAL`].
    next: Box<[u16; TABLE_LEN]>,
    /// The automaton's own state of each number.
    states: Vec<StateID>,
    /// The number of classes (the width of a row).
    classes: usize,
}

impl Table {
    /// The table of `dfa`'s unanchored walk; `None` when its rows do not fit below
    /// [`SPECIAL`] (they do, with room to spare; a test checks).
    fn of(dfa: &DFA) -> Option<Table> {
        let start = dfa.start_state(Anchored::No).ok()?;
        let step = |sid: StateID, b: u8| dfa.next_state(Anchored::No, sid, b);
        let mut states = vec![start];
        let mut number = std::collections::HashMap::from([(start, 0usize)]);
        let mut i = 0;
        while let Some(&sid) = states.get(i) {
            for b in 0..=u8::MAX {
                let next = step(sid, b);
                if let std::collections::hash_map::Entry::Vacant(v) = number.entry(next) {
                    v.insert(states.len());
                    states.push(next);
                }
            }
            i += 1;
        }
        // Bytes go to one class when every state goes to the same state on them.
        let mut class = [0u8; 256];
        let mut firsts: Vec<u8> = Vec::new();
        let mut by_column = std::collections::HashMap::new();
        for b in 0..=u8::MAX {
            let column: Vec<StateID> = states.iter().map(|&sid| step(sid, b)).collect();
            let c = *by_column.entry(column).or_insert_with(|| {
                firsts.push(b);
                firsts.len() - 1
            });
            class[usize::from(b)] = u8::try_from(c).ok()?;
        }
        let classes = firsts.len();
        if states.len().checked_mul(classes)? > usize::from(SPECIAL) {
            return None;
        }
        let mut next = vec![0u16; TABLE_LEN].into_boxed_slice();
        for (row, &sid) in states.iter().enumerate() {
            for (c, &b) in firsts.iter().enumerate() {
                let to = step(sid, b);
                let base = u16::try_from(number.get(&to)? * classes).ok()?;
                let flag = if dfa.is_special(to) { SPECIAL } else { 0 };
                // Twice: a marked entry indexes the copy, so a step needs no unmarking.
                *next.get_mut(row * classes + c)? = base | flag;
                *next.get_mut(usize::from(SPECIAL) + row * classes + c)? = base | flag;
            }
        }
        Some(Table {
            class,
            next: next.try_into().ok()?,
            states,
            classes,
        })
    }

    /// The entry after `byte` from the state whose entry is `at` (its row, perhaps marked:
    /// the marked rows are a copy of the table above [`SPECIAL`]).
    #[inline(always)]
    fn step(&self, at: u16, byte: u8) -> u16 {
        // Rows and classes stay below `SPECIAL` together ([`Table::of`]): no overflow.
        self.next[usize::from(at + u16::from(self.class[usize::from(byte)]))]
    }

    /// The automaton's state of an entry.
    fn state(&self, at: u16) -> Option<StateID> {
        self.states
            .get(usize::from(at & !SPECIAL) / self.classes.max(1))
            .copied()
    }
}

/// [`AUTOMATON`]'s table, when it has one.
static TABLE: LazyLock<Option<Table>> = LazyLock::new(|| Table::of(AUTOMATON.as_ref()?));

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
        let table = TABLE.as_ref()?;
        let bytes = text.as_bytes();
        let mut words = Words::default();
        // The start state is the first numbered, row 0.
        let start = 0u16;
        let note = |words: &mut Words, at: u16, end: usize| match table.state(at) {
            Some(sid) => words.note(dfa, sid, bytes, end),
            None => false,
        };
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
            let mut at = [start; WALKS];
            let steps = piece(0)
                .iter()
                .zip(piece(1))
                .zip(piece(2))
                .zip(piece(3))
                .enumerate();
            for (i, (((&b0, &b1), &b2), &b3)) in steps {
                for (k, b) in [b0, b1, b2, b3].into_iter().enumerate() {
                    at[k] = table.step(at[k], b);
                }
                if (at[0] | at[1] | at[2] | at[3]) & SPECIAL != 0 {
                    for (k, &a) in at.iter().enumerate() {
                        if a & SPECIAL != 0 && !note(&mut words, a, first(k) + i + 1) {
                            return None;
                        }
                    }
                }
            }
            // The last walk goes on over what its part has past the others' length.
            tail = (at[WALKS - 1], first(WALKS - 1) + len);
        }
        let (mut at, from) = tail;
        for (i, &b) in bytes.iter().enumerate().skip(from) {
            at = table.step(at, b);
            if at & SPECIAL != 0 && !note(&mut words, at, i + 1) {
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
