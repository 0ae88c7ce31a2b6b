//! The BM25 baselines of `bench select`, both Okapi BM25 (k1 1.2, b 0.75) ranking every
//! skill, with no gate (they never refuse):
//!
//! - [`Bm25::plain`], what skill hosts ship as their lexical selector (the issue's
//!   "plain BM25" peer row; zeph-skills' `bm25.rs` and Hermes' skill-retrieval plugin work
//!   this way): one document per skill of its name and description, lower-cased, split on
//!   every character that is not a letter or digit, tokens shorter than
//!   [`PLAIN_MIN_TOKEN`] characters dropped; no stems, no stop-word list, no body.
//! - [`Bm25::textbook`], a stronger reference: the whole file (name, description, body) as
//!   one document, the name repeated [`NAME_REPEAT`] times as its boost, English stop words
//!   removed and Snowball (Porter 2) stems.

use std::collections::HashMap;

use skill_registry::Snapshot;
use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, StopWordFilter, TextAnalyzer,
};

const K1: f32 = 1.2;
const B: f32 = 0.75;
/// How many times the name is repeated in the textbook document (its boost).
const NAME_REPEAT: usize = 3;
/// Shortest token the plain baseline keeps.
const PLAIN_MIN_TOKEN: usize = 3;

/// How a baseline turns text into terms.
enum Tokens {
    /// Lower-case, split on non-alphanumerics, drop short tokens.
    Plain,
    /// Tantivy's English analyzer: stop words and stems.
    Textbook(Box<TextAnalyzer>),
}

impl Tokens {
    fn of(&self, text: &str) -> Vec<String> {
        match self {
            Tokens::Plain => text
                .to_lowercase()
                .split(|c: char| !c.is_alphanumeric())
                .filter(|t| t.chars().count() >= PLAIN_MIN_TOKEN)
                .map(str::to_owned)
                .collect(),
            Tokens::Textbook(a) => tokens(&mut a.as_ref().clone(), text),
        }
    }
}

/// An in-memory inverted index over the snapshot's skills.
pub struct Bm25 {
    names: Vec<String>,
    lens: Vec<f32>,
    avg: f32,
    postings: HashMap<String, Vec<(u32, f32)>>,
    tokens: Tokens,
}

fn analyzer() -> TextAnalyzer {
    let mut b = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .dynamic();
    if let Some(stop) = StopWordFilter::new(Language::English) {
        b = b.filter_dynamic(stop);
    }
    b.filter_dynamic(Stemmer::new(Language::English)).build()
}

fn tokens(a: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut s = a.token_stream(text);
    while s.advance() {
        out.push(s.token().text.clone());
    }
    out
}

/// The textbook baseline's analyser (stop words removed, Snowball stems), for other
/// measures that read text as it does.
pub struct Stems(TextAnalyzer);

impl Stems {
    /// A new analyser.
    pub fn new() -> Self {
        Self(analyzer())
    }

    /// The stems of `text`, in order.
    pub fn of(&mut self, text: &str) -> Vec<String> {
        tokens(&mut self.0, text)
    }
}

impl Bm25 {
    /// The plain baseline over every skill of `snapshot`: name and description.
    pub fn plain(snapshot: &Snapshot) -> Self {
        Self::build(snapshot, Tokens::Plain, |s| {
            format!("{}\n{}", s.name, s.description)
        })
    }

    /// The textbook baseline over every skill of `snapshot`: the whole file.
    pub fn textbook(snapshot: &Snapshot) -> Self {
        Self::build(snapshot, Tokens::Textbook(Box::new(analyzer())), |s| {
            let name = s.name.replace(['-', '_'], " ");
            let mut text = String::new();
            for _ in 0..NAME_REPEAT {
                text.push_str(&name);
                text.push('\n');
            }
            text.push_str(&s.description);
            text.push('\n');
            text.push_str(&s.body);
            text
        })
    }

    fn build(
        snapshot: &Snapshot,
        tokens: Tokens,
        document: impl Fn(&skill_registry::Skill) -> String,
    ) -> Self {
        let mut names = Vec::new();
        let mut lens = Vec::new();
        let mut postings: HashMap<String, Vec<(u32, f32)>> = HashMap::new();
        for (i, s) in snapshot.skills().enumerate() {
            let toks = tokens.of(&document(s));
            let mut tf: HashMap<&str, f32> = HashMap::new();
            for t in &toks {
                *tf.entry(t).or_default() += 1.0;
            }
            for (t, f) in tf {
                postings
                    .entry(t.to_owned())
                    .or_default()
                    .push((i as u32, f));
            }
            names.push(s.name.clone());
            lens.push(toks.len() as f32);
        }
        let avg = lens.iter().sum::<f32>() / lens.len().max(1) as f32;
        Bm25 {
            names,
            lens,
            avg: avg.max(1.0),
            postings,
            tokens,
        }
    }

    /// The best `limit` skills for `query`, best first.
    pub fn rank(&self, query: &str, limit: usize) -> Vec<String> {
        let mut terms = self.tokens.of(query);
        terms.sort();
        terms.dedup();
        let n = self.names.len() as f32;
        let mut scores: HashMap<u32, f32> = HashMap::new();
        for t in &terms {
            let Some(list) = self.postings.get(t) else {
                continue;
            };
            let df = list.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(d, f) in list {
                let len = self.lens[d as usize];
                let s = idf * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * len / self.avg));
                *scores.entry(d).or_default() += s;
            }
        }
        let mut v: Vec<(u32, f32)> = scores.into_iter().collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        v.into_iter()
            .take(limit)
            .map(|(d, _)| self.names[d as usize].clone())
            .collect()
    }
}
