//! A semantic signal that ships inside the crate: static token vectors distilled from the
//! all-MiniLM-L6-v2 sentence-embedding model, so "fill in a PDF form" and "complete the
//! fields of a PDF document" come out close although they share one word.
//!
//! No model runs here. `skill-search/distill/distill.py` ran the transformer once on every
//! WordPiece token of the model's vocabulary, weighted each token (frequent tokens count
//! less), fitted the rows so that a training sentence's rows sum to where the model puts
//! the whole sentence, reduced them to their main axes and stored them as int8 in
//! `data/static-embeddings.bin`, which is compiled into the crate ([`TABLE`]); see
//! `data/README.md` for the source package, licence and quality figures. At run time a
//! text is tokenized exactly as the model tokenizes it ([`tokenizer`]), its tokens' rows
//! are summed and the sum is L2-normalised: an [`Embedding`]. Cosine similarity between
//! two embeddings is the signal the ranking fuses with BM25.
//!
//! The table is parsed once, on first use ([`StaticEmbedder::bundled`]); a corrupt table
//! is an [`Error::Embeddings`], never a panic. Embedding a request costs microseconds:
//! tokenizing plus one row addition per token.

mod table;
mod tokenizer;
#[cfg(feature = "transformer")]
pub(crate) mod transformer;

use std::sync::OnceLock;

use crate::Error;
use table::Table;
use tokenizer::WordPiece;

// For callers that clip their own text (the ranking); unused until they merge.
#[allow(unused_imports)]
pub(crate) use tokenizer::MAX_INPUT_BYTES;

/// The distilled table, compiled into the crate (format: see [`table`]).
static TABLE: &[u8] = include_bytes!("../../data/static-embeddings.bin");

/// Turns text into [`Embedding`]s with the bundled static table.
#[derive(Debug)]
pub(crate) struct StaticEmbedder {
    table: Table<'static>,
    wordpiece: WordPiece<'static>,
}

impl StaticEmbedder {
    /// The embedder over the table compiled into the crate, parsed on the first call and
    /// shared afterwards. Every call returns the same result: the embedder, or the
    /// [`Error::Embeddings`] saying why the bundled table is unusable (a build with a
    /// damaged `data/static-embeddings.bin`).
    pub(crate) fn bundled() -> Result<&'static StaticEmbedder, Error> {
        static BUNDLED: OnceLock<Result<StaticEmbedder, String>> = OnceLock::new();
        let parsed = BUNDLED.get_or_init(|| {
            Self::from_bytes(TABLE).map_err(|e| match e {
                Error::Embeddings { message } => message,
                other => other.to_string(),
            })
        });
        match parsed {
            Ok(embedder) => Ok(embedder),
            Err(message) => Err(Error::Embeddings {
                message: message.clone(),
            }),
        }
    }

    /// An embedder over a table in the distillation script's format.
    fn from_bytes(bytes: &'static [u8]) -> Result<Self, Error> {
        let table = Table::parse(bytes)?;
        let wordpiece = WordPiece::new(&table.vocab).ok_or_else(|| Error::Embeddings {
            message: format!("the vocabulary has no {} entry", tokenizer::UNKNOWN),
        })?;
        Ok(Self { table, wordpiece })
    }

    /// Length of every embedding this embedder returns.
    pub(crate) fn dims(&self) -> usize {
        self.table.dims()
    }

    /// Whether `word` (lowercase) is a whole word of the embedding vocabulary: an English
    /// word the model knows, not a misspelling (typo matching leaves such words alone).
    pub(crate) fn knows_word(&self, word: &str) -> bool {
        self.wordpiece.is_word(word)
    }

    /// The embedding of `text`: the weighted sum of its tokens' vectors, L2-normalised.
    ///
    /// Only the first [`MAX_INPUT_BYTES`] bytes are read. Text with no known token (empty,
    /// punctuation only, an unknown script) gives the zero vector, whose cosine with
    /// anything is 0; [`Embedding::is_zero`] tells it apart.
    pub(crate) fn embed(&self, text: &str) -> Embedding {
        let mut ids = Vec::new();
        self.wordpiece.tokenize(text, &mut ids);
        let mut values = vec![0.0f32; self.dims()];
        for id in ids {
            self.table.add_row(id, &mut values);
        }
        let norm = values.iter().map(|v| v * v).sum::<f32>().sqrt();
        if norm > 0.0 && norm.is_finite() {
            values.iter_mut().for_each(|v| *v /= norm);
        } else {
            values.iter_mut().for_each(|v| *v = 0.0);
        }
        Embedding { values }
    }

    /// Appends the vocabulary ids of `text`'s WordPiece tokens to `out` (the model's own
    /// tokenization, without `[CLS]` and `[SEP]`).
    #[cfg(feature = "transformer")]
    pub(crate) fn token_ids(&self, text: &str, out: &mut Vec<u32>) {
        self.wordpiece.tokenize(text, out);
    }

    /// The vocabulary in id order.
    #[cfg(feature = "transformer")]
    pub(crate) fn vocab(&self) -> &[&'static str] {
        &self.table.vocab
    }

    /// The WordPiece tokens of `text`, as the model's tokenizer writes them (for tests
    /// and explanations).
    #[cfg(test)]
    fn tokens(&self, text: &str) -> Vec<&'static str> {
        let mut ids = Vec::new();
        self.wordpiece.tokenize(text, &mut ids);
        ids.iter()
            .map(|&id| self.table.vocab.get(id as usize).copied().unwrap_or("?"))
            .collect()
    }
}

/// The cosine similarity of two unit vectors (or zero ones), in [-1, 1]: their dot product
/// over the common prefix.
pub(crate) fn unit_cosine(a: &[f32], b: &[f32]) -> f32 {
    // Eight running sums instead of one: a single sum is a chain of dependent additions
    // the compiler may not reorder, so it runs one component at a time; eight independent
    // ones become vector instructions. (A request is compared with every candidate,
    // hundreds at 10,000 skills; the one chain was most of a query's time.)
    const LANES: usize = 8;
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut sums = [0f32; LANES];
    let (mut xs, mut ys) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    for (x, y) in (&mut xs).zip(&mut ys) {
        for i in 0..LANES {
            sums[i] += x[i] * y[i];
        }
    }
    let rest: f32 = xs
        .remainder()
        .iter()
        .zip(ys.remainder())
        .map(|(x, y)| x * y)
        .sum();
    (sums.iter().sum::<f32>() + rest).clamp(-1.0, 1.0)
}

/// A text's position in the embedding space: unit length, or all zeros when the text had
/// no known token.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Embedding {
    values: Vec<f32>,
}

impl Embedding {
    /// Cosine similarity in [-1, 1]: the dot product of two unit vectors; 0 when either
    /// is zero. Embeddings from the same embedder always have the same length; were they
    /// not, only the common prefix would count.
    pub(crate) fn cosine(&self, other: &Embedding) -> f32 {
        unit_cosine(&self.values, &other.values)
    }

    /// Whether the text had no known token (the vector is all zeros).
    pub(crate) fn is_zero(&self) -> bool {
        self.values.iter().all(|&v| v == 0.0)
    }

    /// The vector's components.
    #[cfg(test)]
    pub(crate) fn values(&self) -> &[f32] {
        &self.values
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn embedder() -> &'static StaticEmbedder {
        StaticEmbedder::bundled().unwrap()
    }

    fn cos(a: &str, b: &str) -> f32 {
        let e = embedder();
        e.embed(a).cosine(&e.embed(b))
    }

    #[derive(serde::Deserialize)]
    struct Case {
        text: String,
        tokens: Vec<String>,
    }

    #[test]
    fn tokenizer_matches_the_reference_tokenizer() {
        let cases: Vec<Case> =
            serde_json::from_str(include_str!("testdata/tokenizer-cases.json")).unwrap();
        assert!(cases.len() >= 30);
        for case in &cases {
            assert_eq!(
                embedder().tokens(&case.text),
                case.tokens,
                "text: {:?}",
                case.text
            );
        }
    }

    #[test]
    fn bundled_table_is_parsed_once_and_shared() {
        let a = StaticEmbedder::bundled().unwrap();
        let b = StaticEmbedder::bundled().unwrap();
        assert!(std::ptr::eq(a, b));
        assert_eq!(a.dims(), a.embed("anything").values().len());
    }

    #[test]
    fn paraphrases_are_closer_than_unrelated_requests() {
        let form = "fill in a pdf form";
        let paraphrase = "complete the fields of a PDF document";
        let unrelated = "deploy a kubernetes cluster";
        assert!(cos(form, paraphrase) > cos(form, unrelated) + 0.2);
        let mail = "send an email to the team";
        assert!(cos(mail, "write a message to my colleagues") > cos(mail, "resize a photo"));
        assert!(
            cos("make a poster image", "design a graphic")
                > cos("make a poster image", "query a sql database")
        );
    }

    #[test]
    fn embeddings_are_unit_length_or_zero() {
        let e = embedder().embed("Convert this PDF to markdown");
        let norm: f32 = e.values().iter().map(|v| v * v).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
        assert!((e.cosine(&e) - 1.0).abs() < 1e-4);
        for empty in ["", "   \t\n", "😀🎉", "\u{0}\u{7}"] {
            let z = embedder().embed(empty);
            assert!(z.is_zero(), "{empty:?}");
            assert_eq!(z.cosine(&e), 0.0);
        }
    }

    #[test]
    fn cosine_is_the_dot_product_at_every_length() {
        // Lengths around the eight-lane chunking, and vectors of unequal length (only the
        // common prefix counts).
        for n in [0usize, 1, 7, 8, 9, 15, 16, 17, 383, 384, 385] {
            let a: Vec<f32> = (0..n)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) / 400.0)
                .collect();
            let b: Vec<f32> = (0..n + 3)
                .map(|i| ((i * 53 % 97) as f32 - 48.0) / 400.0)
                .collect();
            let want: f64 = a
                .iter()
                .zip(&b)
                .map(|(x, y)| f64::from(*x) * f64::from(*y))
                .sum();
            let got = Embedding { values: a }.cosine(&Embedding { values: b });
            assert!(
                (f64::from(got) - want.clamp(-1.0, 1.0)).abs() < 1e-5,
                "n {n}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn case_and_accents_do_not_change_the_embedding() {
        let e = embedder();
        assert_eq!(e.embed("Café Résumé"), e.embed("cafe resume"));
    }

    #[test]
    fn text_past_the_input_limit_is_ignored() {
        let e = embedder();
        let head = "pdf ".repeat(MAX_INPUT_BYTES / 4);
        assert_eq!(head.len(), MAX_INPUT_BYTES);
        let longer = format!("{head}kubernetes cluster deployment");
        assert_eq!(e.embed(&head), e.embed(&longer));
    }

    #[test]
    fn corrupt_table_is_an_error_not_a_panic() {
        let bytes: &'static [u8] = Box::leak(TABLE[..TABLE.len() / 2].to_vec().into_boxed_slice());
        let err = StaticEmbedder::from_bytes(bytes).unwrap_err();
        assert!(matches!(err, Error::Embeddings { .. }));
        assert!(err.to_string().contains("embedding table"), "{err}");
    }

    #[test]
    fn table_without_unknown_token_is_refused() {
        let bytes: &'static [u8] =
            Box::leak(table::tests::build(&["a", "b"], 2).into_boxed_slice());
        let err = StaticEmbedder::from_bytes(bytes).unwrap_err();
        assert!(err.to_string().contains("[UNK]"), "{err}");
    }
}
