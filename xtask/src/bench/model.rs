//! The optional sentence-embedding model of skill-search (xtask built with
//! `--features transformer`): `--transformer DIR` on `bench select` and `bench select-fit`.

use std::path::Path;

use skill_search::SkillIndex;

/// A loaded model, shared by every index of a run (and its embedding cache with them).
#[cfg(feature = "transformer")]
pub type Model = std::sync::Arc<skill_search::Transformer>;
/// Without the feature there is no model: this type has no values.
#[cfg(not(feature = "transformer"))]
pub type Model = std::convert::Infallible;

/// The model in `dir`, or why not.
pub fn load(dir: &Path) -> Result<Model, String> {
    #[cfg(feature = "transformer")]
    {
        skill_search::Transformer::load(dir)
            .map(std::sync::Arc::new)
            .map_err(|e| e.to_string())
    }
    #[cfg(not(feature = "transformer"))]
    Err(format!(
        "--transformer {}: this xtask was built without the model; run it as `cargo run --release -p xtask --features transformer -- bench ...`",
        dir.display()
    ))
}

/// `index`, with `model` when there is one.
pub fn attach(index: SkillIndex, model: Option<&Model>) -> SkillIndex {
    match model {
        #[cfg(feature = "transformer")]
        Some(m) => index.with_transformer(std::sync::Arc::clone(m)),
        #[cfg(not(feature = "transformer"))]
        Some(never) => match *never {},
        None => index,
    }
}

/// Least cosine similarity between the model's embeddings here and the model's reference
/// outputs for the sentences of `xtask/data/transformer-reference.json` (written by
/// `skill-search/distill/reference.py`).
#[cfg(feature = "transformer")]
pub fn check(model: &Model) -> Result<f32, String> {
    #[derive(serde::Deserialize)]
    struct Reference {
        cases: Vec<Case>,
    }
    #[derive(serde::Deserialize)]
    struct Case {
        text: String,
        embedding: Vec<f32>,
    }
    let path = crate::process::repo_root()?.join("xtask/data/transformer-reference.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let reference: Reference =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if reference.cases.is_empty() {
        return Err(format!("{} has no cases", path.display()));
    }
    let mut least = f32::MAX;
    for case in &reference.cases {
        let ours = model.embed(&case.text).map_err(|e| e.to_string())?;
        if ours.len() != case.embedding.len() {
            return Err(format!(
                "{} dimensions, the reference has {}",
                ours.len(),
                case.embedding.len()
            ));
        }
        let cos: f32 = ours.iter().zip(&case.embedding).map(|(a, b)| a * b).sum();
        least = least.min(cos);
    }
    Ok(least)
}

/// Without the model there is nothing to check.
#[cfg(not(feature = "transformer"))]
pub fn check(model: &Model) -> Result<f32, String> {
    match *model {}
}

/// Runs the model on `text` (for timing).
pub fn embed(model: &Model, text: &str) -> Result<(), String> {
    #[cfg(feature = "transformer")]
    {
        model.embed(text).map(|_| ()).map_err(|e| e.to_string())
    }
    #[cfg(not(feature = "transformer"))]
    {
        let _ = text;
        match *model {}
    }
}
