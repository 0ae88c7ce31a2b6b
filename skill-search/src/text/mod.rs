//! Text handling shared by the skill and notes indexes: analyzers, query limits and the
//! word lists used for trigger and name matching.

use std::sync::LazyLock;

use tantivy::Index;
use tantivy::tokenizer::{
    AsciiFoldingFilter, Language, LowerCaser, RawTokenizer, RemoveLongFilter, SimpleTokenizer,
    Stemmer, StopWordFilter, TextAnalyzer, TokenFilter, WhitespaceTokenizer,
};

mod stem;

use stem::CachedStemmer;

/// Name of the English analyzer: words, lowercased, ASCII-folded, English stop words
/// ([`stop_words`]) removed, Porter-stemmed.
pub(crate) const ENGLISH: &str = "skill_en";
/// Name of the exact analyzer: the whole value as one lowercased token.
pub(crate) const EXACT: &str = "skill_exact";
/// Name of the analyzer of text analysed before indexing: the [`english`] tokens of a skill
/// field joined by spaces, split at the spaces again. A token never holds ASCII whitespace:
/// it is a run of letters and digits (any script), lowercased, with some characters folded
/// to ASCII letters, digits or punctuation (never whitespace), then stemmed. The skill index
/// analyses each skill on a worker thread for its own term frequencies and hands tantivy
/// the result, so that tantivy's one indexing thread does not analyse everything again.
pub(crate) const ANALYSED: &str = "skill_analysed";
/// Tokens longer than this many bytes are dropped by the analyzers.
pub(crate) const MAX_TOKEN_BYTES: usize = 40;

/// Longest query text looked at, in bytes; longer text is cut at a character boundary
/// (a 1 MiB paste is searched by its first 16 KiB, not rejected).
pub const MAX_QUERY_BYTES: usize = 16 * 1024;
/// Most distinct analyzed terms a query keeps (the first ones in the text); the rest are
/// ignored so that query cost stays bounded.
pub const MAX_QUERY_TERMS: usize = 48;

/// Register the crate's analyzers on an index (they analyze skill text as it is indexed).
pub(crate) fn register(index: &Index) {
    index.tokenizers().register(ENGLISH, english_indexing());
    index
        .tokenizers()
        .register(ANALYSED, TextAnalyzer::from(WhitespaceTokenizer::default()));
    index.tokenizers().register(
        EXACT,
        TextAnalyzer::builder(RawTokenizer::default())
            .filter(LowerCaser)
            .build(),
    );
}

/// The English analyzer, for requests.
pub(crate) fn english() -> TextAnalyzer {
    english_with(Stemmer::new(Language::English))
}

/// The English analyzer for skill text being indexed: the same tokens as [`english`], its
/// stems remembered per thread (an index build stems the same few thousand words over and
/// over; a request's few words are not worth a lookup in a table of thousands).
pub(crate) fn english_indexing() -> TextAnalyzer {
    english_with(CachedStemmer)
}

/// The Snowball project's English stop word list (source and licence beside it).
const STOP_WORDS: &str = include_str!("../../data/stopwords-en.txt");
/// Parts of the list's compound forms that are words in their own right ("won the
/// match", "let it run"): the tokenizer splits `won't` into `won` and `t`, and only `t`
/// is a stop word.
const KEPT_PARTS: &[&str] = &["won", "let"];
/// Stop words added to the list: auxiliaries it leaves out for their noun senses ("a tin
/// can", "a will") that requests to an assistant use as auxiliaries ("what can you do?",
/// "will it rain?"), where they would match any skill that says what it can or will do.
/// With them the list holds every word of Lucene's English list (tantivy's own).
const EXTRA_STOP_WORDS: &[&str] = &["can", "will"];

/// The stop words as the tokenizer sees them: each word of [`STOP_WORDS`], and the parts
/// its compound forms split into (`don't` is `don` and `t`), but for [`KEPT_PARTS`];
/// then [`EXTRA_STOP_WORDS`].
///
/// Tantivy's own English list is Lucene's 33 words, which keeps "how", "my", "what",
/// "your" and the like: in a pack of a dozen skills such a word is as rare as a real
/// term, and "hey, how's your day going?" matched a skill on them.
fn stop_words() -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let lines = STOP_WORDS
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'));
    for line in lines {
        let parts = line
            .split(|c: char| !c.is_alphanumeric())
            .filter(|p| !p.is_empty());
        for part in parts {
            let kept = part != line && KEPT_PARTS.contains(&part);
            if !kept && !words.iter().any(|w| w == part) {
                words.push(part.to_owned());
            }
        }
    }
    for extra in EXTRA_STOP_WORDS {
        if !words.iter().any(|w| w == extra) {
            words.push((*extra).to_owned());
        }
    }
    words
}

/// The stop word filter, built once: every analyzer shares its set (requests of the notes
/// index make an analyzer each).
static STOP_FILTER: LazyLock<StopWordFilter> =
    LazyLock::new(|| StopWordFilter::remove(stop_words()));

fn english_with(stemmer: impl TokenFilter) -> TextAnalyzer {
    let stop = STOP_FILTER.clone();
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .filter(stop)
        .filter(stemmer)
        .build()
}

/// The stemming analyzer without stop words, for trigger verbs.
pub(crate) fn stems_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .filter(Stemmer::new(Language::English))
        .build()
}

/// `text` cut to at most [`MAX_QUERY_BYTES`] bytes at a character boundary.
pub fn clip(text: &str) -> &str {
    if text.len() <= MAX_QUERY_BYTES {
        return text;
    }
    let mut end = MAX_QUERY_BYTES;
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Every token of `text` through `analyzer`, in order.
pub(crate) fn tokens(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stream = analyzer.token_stream(text);
    while stream.advance() {
        out.push(stream.token().text.clone());
    }
    out
}

/// Lowercase words of `text`: maximal runs of alphanumeric characters.
pub(crate) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Name-like tokens of `text` with the sigil (`/`, `$`, `@`, backquote) that preceded each:
/// runs of alphanumerics and `-`, `_`, `.`, `:`, lowercased, trailing punctuation removed.
pub(crate) fn name_tokens(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut sigil = false;
    let mut prev: Option<char> = None;
    let flush = |current: &mut String, sigil: bool, out: &mut Vec<(String, bool)>| {
        let t = current.trim_end_matches(['.', ':', '-', '_']);
        if !t.is_empty() {
            out.push((t.to_lowercase(), sigil));
        }
        current.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() || (!current.is_empty() && matches!(c, '-' | '_' | '.' | ':')) {
            if current.is_empty() {
                sigil = matches!(prev, Some('/' | '$' | '@' | '`'));
            }
            current.push(c);
        } else {
            flush(&mut current, sigil, &mut out);
        }
        prev = Some(c);
    }
    flush(&mut current, sigil, &mut out);
    out
}

/// Whether `needle` occurs in `hay` as a run of consecutive items (the reference for the
/// position-indexed lookups of trigger matching).
#[cfg(test)]
pub(crate) fn contains_run(hay: &[String], needle: &[String]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn clip_keeps_char_boundaries_at_the_edge() {
        let exact = "a".repeat(MAX_QUERY_BYTES);
        assert_eq!(clip(&exact).len(), MAX_QUERY_BYTES);
        let over = format!("{}é", "a".repeat(MAX_QUERY_BYTES - 1));
        assert_eq!(clip(&over).len(), MAX_QUERY_BYTES - 1);
        assert_eq!(clip("short"), "short");
    }

    #[test]
    fn english_stems_and_drops_stop_words() {
        let mut a = english();
        assert_eq!(
            tokens(&mut a, "The Invoices are Processing"),
            ["invoic", "process"]
        );
        assert!(tokens(&mut a, "the and of it").is_empty());
        assert_eq!(
            tokens(&mut a, "hey, how's your day going?"),
            ["hey", "day", "go"]
        );
        // Compound forms split as the tokenizer splits them; "won" is a word of its own.
        assert!(tokens(&mut a, "don't we're you'll can't cannot").is_empty());
        assert_eq!(tokens(&mut a, "we won't"), ["won"]);
        assert!(tokens(&mut a, "what can you do?").is_empty());
        let long = "x".repeat(MAX_TOKEN_BYTES + 1);
        assert!(tokens(&mut a, &long).is_empty());
    }

    #[test]
    fn stop_words_are_the_list_and_its_split_compounds() {
        let words = stop_words();
        assert_eq!(words.first().map(String::as_str), Some("i"));
        for w in [
            "my", "how", "what", "your", "very", "t", "s", "don", "isn", "cannot", "can", "will",
        ] {
            assert!(words.iter().any(|x| x == w), "{w} should be a stop word");
        }
        // Every word of Lucene's English list (what tantivy's English filter drops).
        let lucene = "a an and are as at be but by for if in into is it no not of on or such \
                      that the their then there these they this to was will with";
        for w in lucene.split_whitespace() {
            assert!(
                words.iter().any(|x| x == w),
                "{w} (Lucene) should be a stop word"
            );
        }
        // Left out on purpose, by the list ("us") or here (parts that are words).
        for w in ["us", "won", "let", "must", "i'm"] {
            assert!(
                !words.iter().any(|x| x == w),
                "{w} should not be a stop word"
            );
        }
    }

    #[test]
    fn name_tokens_see_sigils_and_trim() {
        let t = name_tokens("use /pdf-forms, then `$git.commit` and mcp-builder.");
        assert!(t.contains(&("pdf-forms".into(), true)));
        assert!(t.contains(&("git.commit".into(), true)));
        assert!(t.contains(&("mcp-builder".into(), false)));
        assert!(t.contains(&("use".into(), false)));
    }

    #[test]
    fn runs_match_only_consecutive_words() {
        let hay = words("Open a Pull-Request now");
        assert!(contains_run(&hay, &words("pull request")));
        assert!(!contains_run(&hay, &words("request pull")));
        assert!(!contains_run(&hay, &[]));
    }
}
