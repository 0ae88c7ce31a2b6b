//! `BENCH_SELECT_TRY`: `bench select` scores the tuning half only, once per parameter set
//! the variable names, and stops (for trying a change without a rebuild or the whole run;
//! the held-out half is never read). Sets are separated by `;`, each a comma-separated list
//! of `name=value` over [`Params::SHIPPED`]: the names of `bench select-fit`'s ranking
//! coordinates, `gate_*`, `evidence_share`, `rel`, and the switches `dense`, `fillers`, `typos`,
//! `intent_slots`, `skip_numbers` (0 or 1). An empty set is the shipped one.

use skill_search::SkillIndex;
use skill_search::tuning::Params;

use super::Table;
use super::evalset::{self, Case};
use super::{fit, host, steps};

/// `spec`'s parameter sets, or what is wrong with it.
fn parse(spec: &str) -> Result<Vec<(String, Params)>, String> {
    let mut out = Vec::new();
    for set in spec.split(';') {
        let mut p = Params::SHIPPED;
        for pair in set.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("`{pair}`: not name=value"))?;
            let v: f32 = value.parse().map_err(|e| format!("`{pair}`: {e}"))?;
            let on = v != 0.0;
            match name {
                "dense" => p.dense = on,
                "fillers" => p.fillers = on,
                "typos" => p.typos = on,
                "intent_slots" => p.intent_slots = on,
                "w_lex" => p.w_lex = v,
                "gate_bias" => p.gate_bias = v,
                "gate_lex" => p.gate_lex = v,
                "gate_cover" => p.gate_cover = v,
                "gate_sem" => p.gate_sem = v,
                "gate_unknown" => p.gate_unknown = v,
                "gate_miss" => p.gate_miss = v,
                "gate_len" => p.gate_len = v,
                "gate_standout" => p.gate_standout = v,
                "gate_margin" => p.gate_margin = v,
                "gate_held" => p.gate_held = v,
                "gate_dense" => p.gate_dense = v,
                "gate_dense_margin" => p.gate_dense_margin = v,
                "skip_numbers" => p.skip_numbers = on,
                "evidence_share" => p.evidence_share = v,
                "rel" => p.rel = v,
                _ => {
                    let (_, get, _) = fit::coords()
                        .into_iter()
                        .find(|(n, _, _)| *n == name)
                        .ok_or_else(|| format!("`{name}`: no such parameter"))?;
                    *get(&mut p) = v;
                }
            }
        }
        out.push((set.trim().to_owned(), p));
    }
    Ok(out)
}

/// Scores each set of `spec` on the tuning half; returns the sets.
pub fn run(
    index: &SkillIndex,
    tune: &[&Case],
    spec: &str,
    table: &mut Table,
) -> Result<Vec<Params>, String> {
    let sets = parse(spec)?;
    for (label, p) in &sets {
        let label = if label.is_empty() { "shipped" } else { label };
        let answers = steps::answers(index, tune, p);
        table.note(evalset::score(tune, &answers).line(&format!("tune [{label}]")));
        for l in host::lines(&format!("tune [{label}]"), tune, &answers, &[]) {
            table.note(l);
        }
    }
    Ok(sets.into_iter().map(|(_, p)| p).collect())
}
