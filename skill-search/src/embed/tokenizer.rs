//! The BERT uncased tokenizer (basic tokenizer + greedy longest-match WordPiece) over the
//! vocabulary shipped in the embedding table.
//!
//! It reproduces what the model's own tokenizer (`tokenizer.json` of all-MiniLM-L6-v2:
//! `BertNormalizer` with lowercasing, `BertPreTokenizer`, `WordPiece`) does to a text, so
//! the table's rows are looked up with the same pieces the model was trained on:
//!
//! 1. clean: drop NUL, U+FFFD and control/format/unassigned characters; any whitespace
//!    becomes a space;
//! 2. put spaces around CJK ideographs, so each is a word of its own;
//! 3. strip accents: canonical decomposition (NFD), then drop non-spacing marks;
//! 4. lowercase;
//! 5. split on whitespace, and make every punctuation character a word of its own;
//! 6. WordPiece: each word becomes the longest vocabulary entry that starts it, then the
//!    longest `##` continuation that follows, and so on; a word with a part no entry
//!    covers, or longer than [`MAX_WORD_CHARS`], is one unknown token.
//!
//! The unit tests compare it with the reference tokenizer's output on fixed strings
//! (`testdata/tokenizer-cases.json`, written by `skill-search/distill/distill.py`).
//! Input is clipped at [`MAX_INPUT_BYTES`] so the work is bounded whatever the caller passes.

use std::collections::HashMap;

use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

/// Longest input tokenized, in bytes; longer text is cut at a character boundary. A skill
/// description or a request is far shorter; a whole skill body may be clipped.
pub(crate) const MAX_INPUT_BYTES: usize = 16 * 1024;

/// Words longer than this many characters become the unknown token (as in BERT).
pub(crate) const MAX_WORD_CHARS: usize = 100;

/// Prefix of WordPiece continuation entries in the vocabulary.
const CONTINUATION: &str = "##";

/// The unknown-token entry of the vocabulary.
pub(crate) const UNKNOWN: &str = "[UNK]";

/// WordPiece over one vocabulary: word-initial entries and `##` continuations (stored
/// without their prefix) in two maps, so lookups borrow slices of the text.
#[derive(Debug)]
pub(crate) struct WordPiece<'a> {
    starts: HashMap<&'a str, u32>,
    continuations: HashMap<&'a str, u32>,
    unknown: u32,
    /// The longest entry in characters (continuations without `##`): no match is tried
    /// beyond it.
    longest: usize,
}

impl<'a> WordPiece<'a> {
    /// Builds the lookup from the vocabulary in id order. `None` when it has no
    /// [`UNKNOWN`] entry.
    pub(crate) fn new(vocab: &[&'a str]) -> Option<Self> {
        let mut starts = HashMap::with_capacity(vocab.len());
        let mut continuations = HashMap::new();
        let mut longest = 0;
        let mut unknown = None;
        for (id, entry) in vocab.iter().enumerate() {
            let id = u32::try_from(id).ok()?;
            if *entry == UNKNOWN {
                unknown = Some(id);
            }
            let (map, text) = match entry.strip_prefix(CONTINUATION) {
                Some(rest) if !rest.is_empty() => (&mut continuations, rest),
                _ => (&mut starts, *entry),
            };
            longest = longest.max(text.chars().count());
            // The first id wins for a duplicated entry, as in the reference tokenizer.
            map.entry(text).or_insert(id);
        }
        Some(Self {
            starts,
            continuations,
            unknown: unknown?,
            longest,
        })
    }

    /// Whether `word` is a word-initial entry of the vocabulary as it stands.
    pub(crate) fn is_word(&self, word: &str) -> bool {
        self.starts.contains_key(word)
    }

    /// Appends the ids of `text`'s tokens to `out`.
    pub(crate) fn tokenize(&self, text: &str, out: &mut Vec<u32>) {
        let normalized = normalize(clip(text, MAX_INPUT_BYTES));
        for word in pre_tokenize(&normalized) {
            self.word(word, out);
        }
    }

    /// WordPiece on one word.
    fn word(&self, word: &str, out: &mut Vec<u32>) {
        // Char boundaries of the word, plus its end.
        let bounds: Vec<usize> = word
            .char_indices()
            .map(|(i, _)| i)
            .chain(std::iter::once(word.len()))
            .collect();
        let chars = bounds.len() - 1;
        if chars > MAX_WORD_CHARS {
            out.push(self.unknown);
            return;
        }
        let mark = out.len();
        let mut start = 0;
        while start < chars {
            let map = if start == 0 {
                &self.starts
            } else {
                &self.continuations
            };
            let mut end = chars.min(start + self.longest);
            let mut found = None;
            while end > start {
                if let Some(&id) = map.get(&word[bounds[start]..bounds[end]]) {
                    found = Some(id);
                    break;
                }
                end -= 1;
            }
            match found {
                Some(id) => {
                    out.push(id);
                    start = end;
                }
                None => {
                    out.truncate(mark);
                    out.push(self.unknown);
                    return;
                }
            }
        }
    }
}

/// `text` cut to at most `max` bytes at a character boundary.
fn clip(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Steps 1 to 4: clean, space out CJK, strip accents, lowercase.
fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let cleaned = text.chars().filter_map(|c| {
        if c == '\0' || c == '\u{fffd}' || is_control(c) {
            None
        } else if is_whitespace(c) {
            Some(' ')
        } else {
            Some(c)
        }
    });
    let spaced = cleaned.flat_map(|c| {
        let cjk = is_cjk(c);
        let pad = if cjk { Some(' ') } else { None };
        pad.into_iter().chain(std::iter::once(c)).chain(pad)
    });
    for c in spaced
        .nfd()
        .filter(|&c| get_general_category(c) != GeneralCategory::NonspacingMark)
    {
        out.extend(c.to_lowercase());
    }
    out
}

/// Step 5: words split on whitespace, each punctuation character a word of its own.
fn pre_tokenize(text: &str) -> impl Iterator<Item = &str> {
    text.split(char::is_whitespace)
        .filter(|w| !w.is_empty())
        .flat_map(split_punctuation)
}

fn split_punctuation(word: &str) -> impl Iterator<Item = &str> {
    let mut rest = word;
    std::iter::from_fn(move || {
        let (i, c) = rest.char_indices().next()?;
        debug_assert_eq!(i, 0);
        let cut = if is_punctuation(c) {
            c.len_utf8()
        } else {
            rest.char_indices()
                .find(|&(_, c)| is_punctuation(c))
                .map_or(rest.len(), |(i, _)| i)
        };
        let (piece, tail) = rest.split_at(cut);
        rest = tail;
        Some(piece)
    })
}

fn is_whitespace(c: char) -> bool {
    c.is_whitespace()
}

/// Control, format, surrogate, private-use and unassigned characters, except the
/// whitespace controls tab, newline and carriage return.
fn is_control(c: char) -> bool {
    if matches!(c, '\t' | '\n' | '\r') {
        return false;
    }
    matches!(
        get_general_category(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::Surrogate
            | GeneralCategory::PrivateUse
            | GeneralCategory::Unassigned
    )
}

/// ASCII punctuation (which includes `$`, `+`, `^`, `` ` `` and the like) or any Unicode
/// punctuation category.
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(
            get_general_category(c),
            GeneralCategory::ConnectorPunctuation
                | GeneralCategory::DashPunctuation
                | GeneralCategory::OpenPunctuation
                | GeneralCategory::ClosePunctuation
                | GeneralCategory::InitialPunctuation
                | GeneralCategory::FinalPunctuation
                | GeneralCategory::OtherPunctuation
        )
}

/// The CJK Unified Ideographs blocks BERT treats as one-character words (not Hangul,
/// Hiragana or Katakana, which are written with spaces or handled as ordinary letters).
fn is_cjk(c: char) -> bool {
    matches!(
        u32::from(c),
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B820..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn vocab() -> Vec<&'static str> {
        vec![
            "[PAD]", "[UNK]", "un", "##aff", "##able", "aff", "##a", "a", ",", "!", "café", "cafe",
            "汉", "##b", "b",
        ]
    }

    fn pieces(wp: &WordPiece<'_>, vocab: &[&str], text: &str) -> Vec<String> {
        let mut ids = Vec::new();
        wp.tokenize(text, &mut ids);
        ids.iter().map(|&i| vocab[i as usize].to_owned()).collect()
    }

    #[test]
    fn greedy_longest_match_with_continuations() {
        let v = vocab();
        let wp = WordPiece::new(&v).unwrap();
        assert_eq!(pieces(&wp, &v, "unaffable"), ["un", "##aff", "##able"]);
        assert_eq!(
            pieces(&wp, &v, "UnAffable!"),
            ["un", "##aff", "##able", "!"]
        );
        // One piece that matches nothing makes the whole word unknown.
        assert_eq!(pieces(&wp, &v, "unaffablez a"), ["[UNK]", "a"]);
    }

    #[test]
    fn accents_stripped_and_cjk_split() {
        let v = vocab();
        let wp = WordPiece::new(&v).unwrap();
        assert_eq!(pieces(&wp, &v, "CAFÉ,café"), ["cafe", ",", "cafe"]);
        assert_eq!(pieces(&wp, &v, "a汉a"), ["a", "汉", "a"]);
    }

    #[test]
    fn word_length_limit_at_its_edge() {
        let v = vocab();
        let wp = WordPiece::new(&v).unwrap();
        let at_limit = "b".repeat(MAX_WORD_CHARS);
        let over = "b".repeat(MAX_WORD_CHARS + 1);
        assert_eq!(pieces(&wp, &v, &at_limit).len(), MAX_WORD_CHARS);
        assert_eq!(pieces(&wp, &v, &over), ["[UNK]"]);
    }

    #[test]
    fn input_clipped_at_its_edge_on_a_char_boundary() {
        let v = vocab();
        let wp = WordPiece::new(&v).unwrap();
        let exact = "a ".repeat(MAX_INPUT_BYTES / 2);
        assert_eq!(pieces(&wp, &v, &exact).len(), MAX_INPUT_BYTES / 2);
        let longer = format!("{exact}a a a");
        assert_eq!(pieces(&wp, &v, &longer).len(), MAX_INPUT_BYTES / 2);
        // A multi-byte character straddling the limit is dropped whole, no panic.
        let straddle = format!("{}é", "a".repeat(MAX_INPUT_BYTES - 1));
        assert_eq!(clip(&straddle, MAX_INPUT_BYTES).len(), MAX_INPUT_BYTES - 1);
    }

    #[test]
    fn vocabulary_without_unknown_entry_is_refused() {
        assert!(WordPiece::new(&["a", "b"]).is_none());
    }

    #[test]
    fn punctuation_splits_inside_words() {
        let parts: Vec<&str> = pre_tokenize("it's  a-b,c!").collect();
        assert_eq!(parts, ["it", "'", "s", "a", "-", "b", ",", "c", "!"]);
    }
}
