//! English stemming that remembers: the same Snowball stemmer tantivy's `Stemmer` filter
//! runs, with each thread keeping the stems of the first words it meets.
//!
//! Building an index stems every word of every skill body, and skill text repeats a small
//! vocabulary: the stemmer's suffix search was the largest single cost of an index build.
//! A word's stem never changes, so a remembered one is the same as a fresh one (a test
//! checks both on many words).

use std::cell::RefCell;
use std::collections::HashMap;

use rust_stemmers::{Algorithm, Stemmer};
use tantivy::tokenizer::{Token, TokenFilter, TokenStream, Tokenizer};

/// Most words a thread remembers the stem of (the first ones it meets: common words come
/// early and stay). About 60 bytes each, so well under a megabyte a thread.
const REMEMBERED_WORDS: usize = 8_192;
/// Longest word remembered, in bytes (longer ones are rare; analyzers drop tokens over 40).
const REMEMBERED_WORD_BYTES: usize = 24;

/// A remembered word or stem, inline: the table is one allocation, not two small ones per
/// word scattered among the index's own (which slowed queries over the index afterwards).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Word {
    len: u8,
    bytes: [u8; REMEMBERED_WORD_BYTES],
}

impl Word {
    fn new(s: &str) -> Option<Word> {
        let mut bytes = [0u8; REMEMBERED_WORD_BYTES];
        bytes.get_mut(..s.len())?.copy_from_slice(s.as_bytes());
        Some(Word {
            len: u8::try_from(s.len()).ok()?,
            bytes,
        })
    }

    fn as_str(&self) -> &str {
        // Built from a `&str` of exactly these bytes.
        self.bytes
            .get(..usize::from(self.len))
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or_default()
    }
}

/// Hashed with foldhash: every token of an index build asks this table, and std's SipHash
/// over the 25-byte key was a visible share of the build.
type Stems = HashMap<Word, Word, foldhash::fast::RandomState>;

thread_local! {
    static STEMS: RefCell<Stems> = RefCell::new(Stems::default());
}

/// The English stem of a lowercased word.
fn stem_into(stemmer: &Stemmer, word: &str, out: &mut String) {
    let key = Word::new(word);
    if let Some(key) = key {
        let found = STEMS.with(|stems| stems.borrow().get(&key).copied());
        if let Some(stem) = found {
            out.clear();
            out.push_str(stem.as_str());
            return;
        }
    }
    let stem = stemmer.stem(word);
    if let (Some(key), Some(value)) = (key, Word::new(&stem)) {
        STEMS.with(|stems| {
            let mut stems = stems.borrow_mut();
            if stems.len() < REMEMBERED_WORDS {
                stems.insert(key, value);
            }
        });
    }
    *out = stem.into_owned();
}

/// A token filter stemming English words as tantivy's `Stemmer::new(Language::English)`
/// does. Tokens are expected to be lowercased beforehand.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CachedStemmer;

impl TokenFilter for CachedStemmer {
    type Tokenizer<T: Tokenizer> = CachedStemmerFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> CachedStemmerFilter<T> {
        CachedStemmerFilter { inner: tokenizer }
    }
}

/// [`CachedStemmer`] applied to a tokenizer.
#[derive(Clone)]
pub(crate) struct CachedStemmerFilter<T> {
    inner: T,
}

impl<T: Tokenizer> Tokenizer for CachedStemmerFilter<T> {
    type TokenStream<'a> = CachedStemmerStream<T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        CachedStemmerStream {
            tail: self.inner.token_stream(text),
            stemmer: Stemmer::create(Algorithm::English),
            buffer: String::new(),
        }
    }
}

/// The tokens of a [`CachedStemmerFilter`].
pub(crate) struct CachedStemmerStream<T> {
    tail: T,
    stemmer: Stemmer,
    buffer: String,
}

impl<T: TokenStream> TokenStream for CachedStemmerStream<T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        let token = self.tail.token_mut();
        stem_into(&self.stemmer, &token.text, &mut self.buffer);
        std::mem::swap(&mut token.text, &mut self.buffer);
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use tantivy::tokenizer::{Language, LowerCaser, SimpleTokenizer, TextAnalyzer};

    use super::*;

    fn tokens(mut a: TextAnalyzer, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut s = a.token_stream(text);
        while s.advance() {
            out.push(s.token().text.clone());
        }
        out
    }

    /// The same stems as tantivy's own filter, for words met for the first time and again
    /// (remembered), and for words too long to remember.
    #[test]
    fn stems_as_tantivys_stemmer_does_fresh_and_remembered() {
        let mut text = String::from(
            "running runs ran invoices invoicing generously organizational caresses ponies \
             ties caress cats feed agreed disabled matting mating meeting milling messing \
             meetings hopping tanned falling hissing fizzed failing filing happy sky \
             internationalizationalistically supercalifragilisticexpialidocious café",
        );
        for i in 0..3_000 {
            text.push_str(&format!(" word{i}ing w{i}ations"));
        }
        let ours = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .filter(CachedStemmer)
            .build();
        let theirs = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .filter(tantivy::tokenizer::Stemmer::new(Language::English))
            .build();
        let want = tokens(theirs, &text);
        assert_eq!(want[0], "run");
        assert_eq!(tokens(ours.clone(), &text), want, "first time");
        assert_eq!(tokens(ours, &text), want, "remembered");
    }

    /// A thread remembers at most [`REMEMBERED_WORDS`] words, and none longer than
    /// [`REMEMBERED_WORD_BYTES`].
    #[test]
    fn what_a_thread_remembers_is_bounded() {
        std::thread::spawn(|| {
            let stemmer = Stemmer::create(Algorithm::English);
            let mut out = String::new();
            let long = "a".repeat(REMEMBERED_WORD_BYTES + 1);
            stem_into(&stemmer, &long, &mut out);
            assert_eq!(out, long);
            assert_eq!(STEMS.with(|s| s.borrow().len()), 0);
            for i in 0..REMEMBERED_WORDS + 100 {
                let word = format!("walk{i}ings");
                stem_into(&stemmer, &word, &mut out);
                assert_eq!(out, stemmer.stem(&word));
            }
            assert_eq!(STEMS.with(|s| s.borrow().len()), REMEMBERED_WORDS);
            for word in ["walk0ings", "walkings", "running"] {
                stem_into(&stemmer, word, &mut out);
                assert_eq!(out, stemmer.stem(word), "{word}");
            }
        })
        .join()
        .unwrap();
    }
}
