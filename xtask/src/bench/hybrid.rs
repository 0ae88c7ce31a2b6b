//! The strongest peer `bench select` knows of (issue 43): the "afternoon's work" hybrid a host
//! would build from parts, in the same run as ours. Textbook BM25 over each skill's whole file
//! ([`Bm25::textbook`]) and all-MiniLM-L6-v2 cosine similarity between the request and each
//! skill's text (`name: description`, then the body, cut where the model cuts: its first 256
//! tokens), fused by reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009:
//! `sum 1 / (RRF_K + rank)`, rank from 1, over each list's first [`DEPTH`] entries). It has no
//! gate: a host using it injects its first three and never refuses.

use std::collections::HashMap;

use skill_registry::Snapshot;

use super::bm25::Bm25;
use super::model::Model;

/// The constant of reciprocal rank fusion (the paper's value).
const RRF_K: f32 = 60.0;
/// How deep each ranking is read before fusing.
const DEPTH: usize = 100;

/// The hybrid over one snapshot: its BM25 index and one embedding per skill.
pub struct Hybrid {
    bm25: Bm25,
    names: Vec<String>,
    embeddings: Vec<std::sync::Arc<[f32]>>,
    model: Model,
}

impl Hybrid {
    /// Embeds every skill of `snapshot` (the slow part: one model run per skill).
    pub fn build(snapshot: &Snapshot, model: &Model) -> Result<Self, String> {
        #[cfg(not(feature = "transformer"))]
        {
            let _ = snapshot;
            match *model {}
        }
        #[cfg(feature = "transformer")]
        Self::embed_all(snapshot, model)
    }

    #[cfg(feature = "transformer")]
    fn embed_all(snapshot: &Snapshot, model: &Model) -> Result<Self, String> {
        let mut names = Vec::new();
        let mut embeddings = Vec::new();
        for skill in snapshot.skills() {
            let text = format!("{}: {}\n{}", skill.name, skill.description, skill.body);
            embeddings.push(embed(model, &text)?);
            names.push(skill.name.clone());
        }
        Ok(Self {
            bm25: Bm25::textbook(snapshot),
            names,
            embeddings,
            model: model.clone(),
        })
    }

    /// The fused ranking for `query`, best first, at most `limit` names.
    pub fn rank(&self, query: &str, limit: usize) -> Result<Vec<String>, String> {
        let q = embed(&self.model, query)?;
        let mut dense: Vec<(usize, f32)> = self
            .embeddings
            .iter()
            .enumerate()
            .map(|(i, e)| (i, e.iter().zip(q.iter()).map(|(a, b)| a * b).sum()))
            .collect();
        dense.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut fused: HashMap<&str, f32> = HashMap::new();
        for (rank, (i, _)) in dense.iter().take(DEPTH).enumerate() {
            *fused.entry(self.names[*i].as_str()).or_default() += 1.0 / (RRF_K + rank as f32 + 1.0);
        }
        let lexical = self.bm25.rank(query, DEPTH);
        for (rank, name) in lexical.iter().enumerate() {
            *fused.entry(name.as_str()).or_default() += 1.0 / (RRF_K + rank as f32 + 1.0);
        }
        let mut out: Vec<(&str, f32)> = fused.into_iter().collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        Ok(out
            .into_iter()
            .take(limit)
            .map(|(n, _)| n.to_owned())
            .collect())
    }
}

#[cfg(feature = "transformer")]
fn embed(model: &Model, text: &str) -> Result<std::sync::Arc<[f32]>, String> {
    model.embed(text).map_err(|e| e.to_string())
}

#[cfg(not(feature = "transformer"))]
fn embed(model: &Model, _text: &str) -> Result<std::sync::Arc<[f32]>, String> {
    match *model {}
}
