//! The ranking's unit tests: exact-name clauses, the cap by rank, and the gate's inputs on a
//! small index (the dense witness: the first candidate's whole-text similarity and its
//! lead; the unknown share leaving out words with a digit).

use std::collections::HashMap;

use super::{cap_by_rank, exact_names};
use crate::SkillIndex;
use crate::index::test_support::index_of;
use crate::index::{Gate, SearchRequest};
use crate::params::Params;
use crate::text::name_tokens;

#[test]
fn exact_name_clauses_are_only_skill_names_each_once() {
    let by_name: HashMap<String, u64> =
        [("pdf-forms".to_owned(), 0), ("spreadsheet".to_owned(), 1)]
            .into_iter()
            .collect();
    let mut text = String::from("use pdf-forms, then /pdf-forms again and `spreadsheet` ");
    for i in 0..100_000 {
        text.push_str(&format!("tok{i} "));
    }
    text.push_str("pdf-forms");
    let tokens = name_tokens(&text);
    assert!(tokens.len() > 100_000);
    assert_eq!(exact_names(&tokens, &by_name), ["pdf-forms", "spreadsheet"]);
    assert!(exact_names(&name_tokens("nothing named here"), &by_name).is_empty());
}

#[test]
fn confidence_never_rises_down_the_ranking() {
    let mut c = [0.9, 0.18, 0.41, 0.05, 0.3];
    cap_by_rank(c.iter_mut());
    assert_eq!(c, [0.9, 0.18, 0.18, 0.05, 0.05]);
    let mut falling = [0.99, 0.6, 0.2];
    cap_by_rank(falling.iter_mut());
    assert_eq!(falling, [0.99, 0.6, 0.2]);
    let mut none: [f32; 0] = [];
    cap_by_rank(none.iter_mut());
}

fn gate(index: &SkillIndex, text: &str, p: &Params) -> Gate {
    let req = SearchRequest {
        text,
        limit: 10,
        ..Default::default()
    };
    index.rank(&req, 10, p, Some(10)).unwrap().1
}

fn skills() -> (tempfile::TempDir, SkillIndex) {
    index_of([
        (
            "git-branch",
            "Create a git branch named after the ticket and push it.",
        ),
        (
            "photo-resize",
            "Resize photos and images to smaller dimensions for the web.",
        ),
        (
            "email-draft",
            "Compose an email to colleagues about a meeting.",
        ),
    ])
}

#[test]
fn the_dense_witness_reads_the_first_candidates_whole_text_and_its_lead() {
    let (_dir, index) = skills();
    let p = Params::SHIPPED;
    let req = SearchRequest {
        text: "resize these photos for the web page and email them",
        limit: 10,
        ..Default::default()
    };
    let (hits, g) = index.rank(&req, 10, &p, Some(10)).unwrap();
    assert_eq!(hits[0].name, "photo-resize", "{hits:?}");
    assert!(hits.len() >= 2, "{hits:?}");
    // The first candidate's own similarity, not the best of all: it is the one the lead
    // is measured from, and the lead is its gap to the nearest other candidate.
    assert!(g.dense > 0.0, "{g:?}");
    assert!(g.dense_margin > 0.0, "{g:?}");
    assert!(g.dense_margin < g.dense, "{g:?}");
    // Both reach the gate's score with their weights, and only with them.
    let off = Params {
        gate_dense: 0.0,
        gate_dense_margin: 0.0,
        ..p
    };
    let on = Params {
        gate_dense: 2.0,
        gate_dense_margin: 3.0,
        ..p
    };
    let (z_off, z_on) = (
        gate(&index, req.text, &off).z,
        gate(&index, req.text, &on).z,
    );
    let want = 2.0 * g.dense + 3.0 * g.dense_margin;
    assert!(
        (z_on - z_off - want).abs() < 1e-4,
        "{z_on} - {z_off} vs {want}"
    );
}

#[test]
fn a_word_with_a_digit_is_not_an_unknown_word() {
    let (_dir, index) = skills();
    let on = Params {
        skip_numbers: true,
        ..Params::SHIPPED
    };
    let off = Params {
        skip_numbers: false,
        ..Params::SHIPPED
    };
    // "412" and "3hrs" are used by no skill: with numbers skipped they say nothing.
    for text in ["git branch for ticket 412", "push branch 3hrs"] {
        assert_eq!(gate(&index, text, &on).unknown, 0.0, "{text}");
        assert!(gate(&index, text, &off).unknown > 0.0, "{text}");
    }
    // A word no skill uses without a digit still counts either way.
    assert!(gate(&index, "git branch for sourdough", &on).unknown > 0.0);
}
