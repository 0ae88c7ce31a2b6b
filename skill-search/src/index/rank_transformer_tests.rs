//! The gate with a sentence-embedding model (a tiny one the tests write).

use std::sync::Arc;

use skill_registry::{Registry, RegistryConfig, Source};

use crate::embed::transformer::tests::model_dir;
use crate::params::Params;
use crate::{SearchRequest, SkillIndex, Transformer};

#[test]
fn the_gate_reads_the_models_similarity_of_the_request_and_the_first_description() {
    let skills = tempfile::tempdir().unwrap();
    for (name, description) in [
        ("pdf-forms", "Fill in PDF forms and extract their fields."),
        ("table-booking", "Book a table at a restaurant."),
    ] {
        let folder = skills.path().join(name);
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n"),
        )
        .unwrap();
    }
    let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(
        skills.path(),
        "user",
    )]));
    let plain = SkillIndex::build(registry.snapshot()).unwrap();
    assert_eq!(plain.params(), &Params::SHIPPED);
    let request = "please fill in this PDF form";
    let req = SearchRequest {
        text: request,
        limit: 2,
        ..Default::default()
    };
    let (hits, gate) = plain.search_with(&req, plain.params()).unwrap();
    assert_eq!(hits[0].name, "pdf-forms");
    assert_eq!(gate.full, 0.0);

    let dir = model_dir();
    let model = Arc::new(Transformer::load(dir.path()).unwrap());
    let index = SkillIndex::build(registry.snapshot())
        .unwrap()
        .with_transformer(Arc::clone(&model));
    assert_eq!(index.params(), &Params::TRANSFORMER);
    let (hits, gate) = index.search_with(&req, index.params()).unwrap();
    assert_eq!(hits[0].name, "pdf-forms");
    let expected = model
        .similarity(request, "Fill in PDF forms and extract their fields.")
        .unwrap();
    assert!(expected != 0.0);
    assert_eq!(gate.full, expected);
    let p = Params::TRANSFORMER;
    let z = p.gate_bias
        + p.gate_lex * gate.top_lex
        + p.gate_cover * gate.cover
        + p.gate_sem * gate.top_sem
        + p.gate_unknown * gate.unknown
        + p.gate_miss * gate.miss
        + p.gate_len * gate.length
        + p.gate_full * gate.full
        + p.gate_standout * gate.standout
        + p.gate_margin * gate.margin
        + p.gate_held * gate.held
        + p.gate_dense * gate.dense
        + p.gate_dense_margin * gate.dense_margin;
    assert!((gate.z - z).abs() < 1e-5, "{} vs {z}", gate.z);
}
