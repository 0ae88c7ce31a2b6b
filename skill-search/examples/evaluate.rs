//! Print, for every request of a labelled set, the top candidates with their evidence.
//!
//! `cargo run -p skill-search --example evaluate -- REQUESTS.jsonl PACK_DIR...`

use std::sync::Arc;

use skill_registry::{RegistryConfig, Source, load_snapshot};
use skill_search::{SearchRequest, SelectOptions, SkillIndex, quality};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let requests = args
        .next()
        .ok_or("usage: evaluate REQUESTS.jsonl PACK_DIR...")?;
    let sources = args
        .enumerate()
        .map(|(i, p)| Source::new(p, format!("layer{}", i + 1)))
        .collect();
    let snapshot = Arc::new(load_snapshot(&RegistryConfig::with_sources(sources), 1));
    let index = SkillIndex::build(snapshot)?;
    let cases = quality::parse_cases(&std::fs::read_to_string(requests)?)?;
    for case in cases {
        let hits = index.search(&SearchRequest {
            text: &case.request,
            recent_turns: &case.turns,
            limit: 10,
            ..Default::default()
        })?;
        let rank = hits.iter().position(|h| case.expect.contains(&h.name));
        let opts = SelectOptions {
            recent_turns: case.turns.clone(),
            ..SelectOptions::default()
        };
        let t0 = std::time::Instant::now();
        let _ = index.search(&SearchRequest {
            text: &case.request,
            recent_turns: &case.turns,
            limit: 3,
            filter: skill_search::Filter {
                profile: None,
                model_invocable_only: true,
            },
        })?;
        let search_took = t0.elapsed();
        let start = std::time::Instant::now();
        let selection = index.select(&case.request, &opts)?;
        let took = start.elapsed();
        println!(
            "{:?} expect={:?} rank={rank:?} select={:?} tier={} search {search_took:?} in {took:?}",
            case.request,
            case.expect,
            selection
                .selected_skills
                .iter()
                .map(|s| s.skill_id.as_str())
                .collect::<Vec<_>>(),
            selection.disclosure.tier as u8
        );
        for h in &hits {
            println!(
                "    {} conf={:.2} cov={:.2} mass={:.1} name={:.1} rel={:.2} trig={} explicit={} phrase={:?} terms={:?} body={:?}",
                h.name,
                h.confidence,
                h.coverage,
                h.matched_weight,
                h.name_weight,
                h.text_score,
                h.triggers.len(),
                h.explicit,
                h.phrase,
                h.matched_terms,
                h.body_terms
            );
        }
    }
    if std::env::var_os("EVALUATE_TIMING").is_some() {
        let cases = quality::parse_cases(&std::fs::read_to_string(
            std::env::args().nth(1).unwrap_or_default(),
        )?)?;
        let opts = SelectOptions::default();
        let mut times = Vec::new();
        for pass in 0..20 {
            for case in &cases {
                let t = std::time::Instant::now();
                let _ = index.select(&case.request, &opts)?;
                if pass > 0 {
                    times.push((t.elapsed(), case.request.clone()));
                }
            }
        }
        times.sort();
        for (t, r) in times.iter().rev().take(12) {
            println!("slow: {t:?} {r}");
        }
    }
    Ok(())
}
