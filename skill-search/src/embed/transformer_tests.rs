//! Tests of the sentence-embedding model's loading, tokenization, pooling and cache, on a
//! tiny BERT with deterministic weights written by the tests (the real model is 91 MB and
//! not in the repository).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::path::Path;

use super::*;

/// Hidden size, intermediate size and positions of the tiny model.
const HIDDEN: usize = 8;
const INTERMEDIATE: usize = 16;
const POSITIONS: usize = 16;

/// Deterministic values in [-0.5, 0.5) (an LCG), different for each tensor.
fn values(seed: u64, n: usize) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((x >> 40) as f32 / (1u64 << 24) as f32) - 0.5
        })
        .collect()
}

fn config(vocab: usize) -> String {
    config_with(vocab, POSITIONS)
}

fn config_with(vocab: usize, positions: usize) -> String {
    format!(
        r#"{{"vocab_size": {vocab}, "hidden_size": {HIDDEN}, "num_hidden_layers": 1,
        "num_attention_heads": 2, "intermediate_size": {INTERMEDIATE}, "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1, "max_position_embeddings": {positions}, "type_vocab_size": 2,
        "initializer_range": 0.02, "layer_norm_eps": 1e-12, "pad_token_id": 0,
        "position_embedding_type": "absolute", "model_type": "bert"}}"#
    )
}

/// The tiny model's weights, by name.
fn weights(vocab: usize, positions: usize) -> HashMap<String, Tensor> {
    let shapes: Vec<(&str, Vec<usize>)> = vec![
        ("embeddings.word_embeddings.weight", vec![vocab, HIDDEN]),
        (
            "embeddings.position_embeddings.weight",
            vec![positions, HIDDEN],
        ),
        ("embeddings.token_type_embeddings.weight", vec![2, HIDDEN]),
        ("embeddings.LayerNorm.weight", vec![HIDDEN]),
        ("embeddings.LayerNorm.bias", vec![HIDDEN]),
        (
            "encoder.layer.0.attention.self.query.weight",
            vec![HIDDEN, HIDDEN],
        ),
        ("encoder.layer.0.attention.self.query.bias", vec![HIDDEN]),
        (
            "encoder.layer.0.attention.self.key.weight",
            vec![HIDDEN, HIDDEN],
        ),
        ("encoder.layer.0.attention.self.key.bias", vec![HIDDEN]),
        (
            "encoder.layer.0.attention.self.value.weight",
            vec![HIDDEN, HIDDEN],
        ),
        ("encoder.layer.0.attention.self.value.bias", vec![HIDDEN]),
        (
            "encoder.layer.0.attention.output.dense.weight",
            vec![HIDDEN, HIDDEN],
        ),
        ("encoder.layer.0.attention.output.dense.bias", vec![HIDDEN]),
        (
            "encoder.layer.0.attention.output.LayerNorm.weight",
            vec![HIDDEN],
        ),
        (
            "encoder.layer.0.attention.output.LayerNorm.bias",
            vec![HIDDEN],
        ),
        (
            "encoder.layer.0.intermediate.dense.weight",
            vec![INTERMEDIATE, HIDDEN],
        ),
        (
            "encoder.layer.0.intermediate.dense.bias",
            vec![INTERMEDIATE],
        ),
        (
            "encoder.layer.0.output.dense.weight",
            vec![HIDDEN, INTERMEDIATE],
        ),
        ("encoder.layer.0.output.dense.bias", vec![HIDDEN]),
        ("encoder.layer.0.output.LayerNorm.weight", vec![HIDDEN]),
        ("encoder.layer.0.output.LayerNorm.bias", vec![HIDDEN]),
    ];
    shapes
        .into_iter()
        .enumerate()
        .map(|(i, (name, shape))| {
            let n = shape.iter().product();
            let mut v = values(i as u64 + 1, n);
            if name.ends_with("LayerNorm.weight") {
                v.iter_mut().for_each(|x| *x += 1.0);
            }
            let t = Tensor::from_vec(v, shape, &Device::Cpu).unwrap();
            (name.to_owned(), t)
        })
        .collect()
}

/// A model folder with the bundled vocabulary and the tiny model.
pub(crate) fn model_dir() -> tempfile::TempDir {
    model_dir_with(POSITIONS)
}

/// [`model_dir`] with another number of positions.
fn model_dir_with(positions: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let vocab = StaticEmbedder::bundled().unwrap().vocab();
    let mut text = vocab.join("\n");
    text.push('\n');
    std::fs::write(dir.path().join("vocab.txt"), text).unwrap();
    std::fs::write(
        dir.path().join("config.json"),
        config_with(vocab.len(), positions),
    )
    .unwrap();
    candle_core::safetensors::save(
        &weights(vocab.len(), positions),
        dir.path().join("model.safetensors"),
    )
    .unwrap();
    dir
}

fn load_err(dir: &Path) -> String {
    match Transformer::load(dir) {
        Ok(_) => panic!("{} loaded", dir.display()),
        Err(e) => {
            assert!(matches!(e, Error::Transformer { .. }), "{e:?}");
            e.to_string()
        }
    }
}

fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

#[test]
fn embeddings_are_unit_length_deterministic_and_differ_by_text() {
    let dir = model_dir();
    let t = Transformer::load(dir.path()).unwrap();
    let a = t.embed("fill in the PDF form").unwrap();
    assert_eq!(a.len(), HIDDEN);
    assert!((norm(&a) - 1.0).abs() < 1e-5, "{}", norm(&a));
    // A second model from the same folder (no shared cache) gives the same vector.
    let again = Transformer::load(dir.path()).unwrap();
    assert_eq!(*again.embed("fill in the PDF form").unwrap(), *a);
    let b = t.embed("book a table for two tonight").unwrap();
    assert_ne!(*a, *b);
    let s = t
        .similarity("fill in the PDF form", "book a table for two tonight")
        .unwrap();
    let dot: f32 = a.iter().zip(b.iter()).map(|(x, y)| x * y).sum();
    assert!((s - dot).abs() < 1e-6);
    // Even a text with no token has [CLS] and [SEP], so an embedding.
    assert!((norm(&t.embed("").unwrap()) - 1.0).abs() < 1e-5);
}

#[test]
fn the_embedding_is_the_normalised_mean_of_the_outputs_over_cls_text_sep() {
    let dir = model_dir();
    let t = Transformer::load(dir.path()).unwrap();
    let text = "convert this pdf to markdown";
    let ids = t.ids(text);
    let wordpiece = StaticEmbedder::bundled().unwrap();
    let vocab = wordpiece.vocab();
    assert_eq!(vocab[ids[0] as usize], "[CLS]");
    assert_eq!(vocab[ids[ids.len() - 1] as usize], "[SEP]");
    let mut inner = Vec::new();
    wordpiece.token_ids(text, &mut inner);
    assert_eq!(&ids[1..ids.len() - 1], &inner[..]);
    // The model's outputs, averaged over the tokens by hand.
    let input = Tensor::new(&ids[..], &Device::Cpu)
        .unwrap()
        .unsqueeze(0)
        .unwrap();
    let out = t
        .model
        .forward(&input, &input.zeros_like().unwrap(), None)
        .unwrap();
    let rows: Vec<Vec<f32>> = out.squeeze(0).unwrap().to_vec2().unwrap();
    assert_eq!(rows.len(), ids.len());
    let mean: Vec<f32> = (0..HIDDEN)
        .map(|d| rows.iter().map(|r| r[d]).sum::<f32>() / rows.len() as f32)
        .collect();
    let n = norm(&mean);
    let got = t.embed(text).unwrap();
    for (g, m) in got.iter().zip(&mean) {
        assert!((g - m / n).abs() < 1e-5, "{got:?} vs {mean:?}");
    }
}

#[test]
fn text_is_cut_at_the_models_positions_with_sep_last() {
    let dir = model_dir();
    let t = Transformer::load(dir.path()).unwrap();
    assert_eq!(t.max_tokens, POSITIONS.min(MAX_TOKENS));
    let words = |n: usize, last: &str| {
        let mut w: Vec<&str> = std::iter::repeat_n("report", n).collect();
        w.push(last);
        w.join(" ")
    };
    // 13 words + 1 = 14 tokens + [CLS] + [SEP] = 16: the edge, nothing cut.
    let at_edge = t.ids(&words(13, "calendar"));
    assert_eq!(at_edge.len(), POSITIONS);
    let vocab = StaticEmbedder::bundled().unwrap().vocab();
    assert_eq!(vocab[at_edge[POSITIONS - 2] as usize], "calendar");
    // One more word: the last word is cut, [SEP] stays.
    let past = t.ids(&words(14, "calendar"));
    assert_eq!(past.len(), POSITIONS);
    assert_eq!(vocab[past[POSITIONS - 1] as usize], "[SEP]");
    assert_eq!(vocab[past[POSITIONS - 2] as usize], "report");
    // So words past the edge do not change the embedding (and the model never sees more
    // positions than it has).
    assert_eq!(
        *t.embed(&words(14, "calendar")).unwrap(),
        *t.embed(&words(14, "weather")).unwrap()
    );
    assert_ne!(
        *t.embed(&words(13, "calendar")).unwrap(),
        *t.embed(&words(13, "weather")).unwrap()
    );
    let huge = "report ".repeat(1 << 20);
    assert_eq!(t.ids(&huge).len(), POSITIONS);
}

#[test]
fn the_cache_is_emptied_when_full() {
    let dir = model_dir();
    let t = Transformer::load(dir.path()).unwrap();
    {
        let mut cache = t.cache.lock().unwrap();
        for i in 0..MAX_CACHED_TEXTS - 1 {
            cache.insert(vec![i as u32], Arc::from(vec![0.0; HIDDEN]));
        }
    }
    t.embed("one more").unwrap();
    assert_eq!(t.cache.lock().unwrap().len(), MAX_CACHED_TEXTS);
    t.embed("and another").unwrap();
    let cache = t.cache.lock().unwrap();
    assert_eq!(cache.len(), 1);
    assert!(cache.contains_key(&t.ids("and another")));
    drop(cache);
    // Texts the model sees alike share an entry.
    t.embed("AND ANOTHER").unwrap();
    assert_eq!(t.cache.lock().unwrap().len(), 1);
}

#[test]
fn a_folder_that_is_not_a_usable_model_is_an_error_naming_the_problem() {
    let missing = tempfile::tempdir().unwrap();
    assert!(load_err(missing.path()).contains("cannot read vocab.txt"));

    let dir = model_dir();
    let vocab_path = dir.path().join("vocab.txt");
    let good_vocab = std::fs::read_to_string(&vocab_path).unwrap();
    std::fs::write(&vocab_path, good_vocab.replacen("[UNK]", "[unknown]", 1)).unwrap();
    let e = load_err(dir.path());
    assert!(
        e.contains("vocab.txt differs") && e.contains("line 101"),
        "{e}"
    );
    std::fs::write(&vocab_path, &good_vocab).unwrap();

    let config_path = dir.path().join("config.json");
    std::fs::write(&config_path, "{").unwrap();
    assert!(load_err(dir.path()).contains("not a BERT configuration"));
    std::fs::write(&config_path, config(30_000)).unwrap();
    assert!(load_err(dir.path()).contains("vocab_size 30000"));
    std::fs::write(
        &config_path,
        config(30_522).replace("\"hidden_size\": 8", "\"hidden_size\": 16"),
    )
    .unwrap();
    assert!(load_err(dir.path()).contains("does not match config.json"));
    std::fs::write(&config_path, config(30_522)).unwrap();

    let weights_path = dir.path().join("model.safetensors");
    let good_weights = std::fs::read(&weights_path).unwrap();
    std::fs::write(&weights_path, &good_weights[..good_weights.len() / 2]).unwrap();
    assert!(load_err(dir.path()).contains("model.safetensors"));
    std::fs::write(&weights_path, b"not safetensors").unwrap();
    assert!(load_err(dir.path()).contains("model.safetensors"));
    std::fs::write(&weights_path, &good_weights).unwrap();

    let pooling = dir.path().join("1_Pooling");
    std::fs::create_dir(&pooling).unwrap();
    for other in [
        r#"{"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}"#,
        r#"{"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": true}"#,
        r#"{"word_embedding_dimension": 384}"#,
        "[]",
    ] {
        std::fs::write(pooling.join("config.json"), other).unwrap();
        let e = load_err(dir.path());
        assert!(e.contains("1_Pooling/config.json"), "{other}: {e}");
    }
    std::fs::write(
        pooling.join("config.json"),
        r#"{"pooling_mode_mean_tokens": true}"#,
    )
    .unwrap();
    Transformer::load(dir.path()).unwrap();
}

#[test]
fn files_are_read_up_to_their_limit_and_refused_past_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), vec![b'x'; 100]).unwrap();
    assert_eq!(read_limited(dir.path(), "f", 100).unwrap().len(), 100);
    let e = read_limited(dir.path(), "f", 99).unwrap_err();
    assert!(e.contains("f is larger than 99 bytes"), "{e}");
    // A folder is not read.
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let e = read_limited(dir.path(), "sub", 100).unwrap_err();
    assert!(e.contains("sub: not a regular file"), "{e}");
}

#[cfg(unix)]
#[test]
fn a_fifo_in_the_model_folder_is_refused_without_waiting_for_a_writer() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("vocab.txt");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let e = read_limited(dir.path(), "vocab.txt", 100).unwrap_err();
    assert!(e.contains("vocab.txt: not a regular file"), "{e}");
    assert!(load_err(dir.path()).contains("not a regular file"));
}

#[test]
fn a_configuration_that_cannot_run_is_refused_at_load_not_at_the_first_request() {
    let dir = model_dir();
    let config_path = dir.path().join("config.json");
    let good = config(30_522);
    for (from, to, says) in [
        (
            "\"num_attention_heads\": 2",
            "\"num_attention_heads\": 0",
            "at least 1",
        ),
        (
            "\"num_attention_heads\": 2",
            "\"num_attention_heads\": 3",
            "not a multiple",
        ),
        (
            "\"type_vocab_size\": 2",
            "\"type_vocab_size\": 0",
            "at least 1",
        ),
        (
            "\"intermediate_size\": 16",
            "\"intermediate_size\": 0",
            "at least 1",
        ),
        (
            "\"max_position_embeddings\": 16",
            "\"max_position_embeddings\": 1",
            "fewer than 2 positions",
        ),
    ] {
        assert!(good.contains(from), "{from}");
        std::fs::write(&config_path, good.replace(from, to)).unwrap();
        let e = load_err(dir.path());
        assert!(e.contains("config.json") && e.contains(says), "{to}: {e}");
    }
    // At the edge, 2 positions pass the check (the weights have 16, so they do not match).
    std::fs::write(
        &config_path,
        good.replace(
            "\"max_position_embeddings\": 16",
            "\"max_position_embeddings\": 2",
        ),
    )
    .unwrap();
    let e = load_err(dir.path());
    assert!(e.contains("does not match"), "{e}");
}

#[test]
fn text_is_cut_at_max_tokens_when_the_model_has_more_positions() {
    let dir = model_dir_with(MAX_TOKENS + 44);
    let t = Transformer::load(dir.path()).unwrap();
    assert_eq!(t.max_tokens, MAX_TOKENS);
    // MAX_TOKENS - 2 words fit whole; one more is cut.
    let fit = "report ".repeat(MAX_TOKENS - 2);
    assert_eq!(t.ids(&fit).len(), MAX_TOKENS);
    let ids = t.ids(&format!("{fit}calendar"));
    assert_eq!(ids.len(), MAX_TOKENS);
    assert_eq!(ids, t.ids(&fit));
    assert!((norm(&t.embed(&"report ".repeat(10_000)).unwrap()) - 1.0).abs() < 1e-5);
}
