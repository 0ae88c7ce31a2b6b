//! `bench select`, issue 43's steps: selection with typo matching, intent slots, dense
//! candidates, dropping conversation fillers and the request-length terms against the same index with them off
//! (`Params::typos`, `Params::intent_slots`, `Params::dense`, `Params::fillers`, `Params::w_sem_len` and
//! `Params::gate_len`), in the same run:
//! accuracy on the held-out half, on a misspelled copy of the tuning half (made here by a
//! deterministic generator; never of the held-out half), and `select` latency.

use std::time::{Duration, Instant};

use skill_search::tuning::{self, Params};
use skill_search::{SearchRequest, SelectOptions, SkillIndex};

use super::Table;
use super::evalset::{self, Answer, Case, Split};
use super::search::{micros, percentile};

/// Ranking depth read for top-10.
const DEPTH: usize = 10;
/// Words shorter than this are left as written by the misspelling generator.
const MIN_MISSPELT_CHARS: usize = 5;
/// One word in this many (of those long enough) is misspelt.
const MISSPELL_EVERY: u64 = 3;
/// Timed passes over the requests for the latency rows.
const PASSES: usize = 5;
/// The dense witness's weight in the gate (`Params::gate_dense`, shipped at 0) and the
/// intercept that goes with it, as a `BENCH_SELECT_TRY` grid on the tuning half chose them:
/// the steps row that measures the witness.
const TRIED_GATE_DENSE: f32 = 3.0;
const TRIED_GATE_BIAS: f32 = -7.6;

/// The parameter sets compared: shipped, the typo and slot steps each alone, shipped
/// with dense candidates, shipped keeping conversation fillers, shipped without the request-length terms (semantic weight
/// and gate), with the gate's dense witness (the first candidate's whole-text similarity),
/// leaving words with a digit out of the unknown share, and typo, slot, dense and filler
/// steps off.
fn variants() -> [(&'static str, Params); 9] {
    let off = Params {
        typos: false,
        intent_slots: false,
        dense: false,
        fillers: false,
        ..Params::SHIPPED
    };
    [
        ("steps on (shipped)", Params::SHIPPED),
        ("typos only", Params { typos: true, ..off }),
        (
            "intent slots only",
            Params {
                intent_slots: true,
                ..off
            },
        ),
        (
            "dense candidates on",
            Params {
                dense: true,
                ..Params::SHIPPED
            },
        ),
        (
            "conversation fillers kept",
            Params {
                fillers: false,
                ..Params::SHIPPED
            },
        ),
        (
            "length terms off",
            Params {
                w_sem_len: 0.0,
                gate_len: 0.0,
                ..Params::SHIPPED
            },
        ),
        (
            "gate's dense witness on",
            Params {
                gate_dense: TRIED_GATE_DENSE,
                gate_bias: TRIED_GATE_BIAS,
                ..Params::SHIPPED
            },
        ),
        (
            "numbers not counted as unknown words",
            Params {
                skip_numbers: true,
                ..Params::SHIPPED
            },
        ),
        ("steps off (before)", off),
    ]
}

/// Every case's ranking and selection with parameters `p`.
pub(super) fn answers(index: &SkillIndex, cases: &[&Case], p: &Params) -> Vec<Answer> {
    let opts = SelectOptions::default();
    cases
        .iter()
        .map(|c| {
            let ranked = tuning::search(
                index,
                &SearchRequest {
                    text: &c.request,
                    limit: DEPTH,
                    ..Default::default()
                },
                p,
            )
            .map(|(h, _)| h.into_iter().map(|m| m.name).collect())
            .unwrap_or_default();
            let (selected, alternatives) = tuning::select(index, &c.request, &opts, p)
                .map(|s| {
                    let alternatives = s
                        .selected_skills
                        .iter()
                        .flat_map(|s| s.alternatives.iter().cloned())
                        .collect();
                    let names = s.selected_skills.into_iter().map(|s| s.skill_id).collect();
                    (names, alternatives)
                })
                .unwrap_or_default();
            Answer {
                ranked,
                selected: Some(selected),
                alternatives,
            }
        })
        .collect()
}

/// FNV-1a of `s`: the generator's only source of choices.
fn hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `word` with one typo chosen by `h`: two neighbouring letters swapped, a letter dropped,
/// doubled, or replaced by the next letter of the alphabet.
fn misspell(word: &str, h: u64) -> String {
    let mut c: Vec<char> = word.chars().collect();
    let n = c.len();
    // Never the first letter: people rarely get it wrong.
    let at = 1 + (h / 4) as usize % (n - 1);
    match h % 4 {
        0 if at + 1 < n => c.swap(at, at + 1),
        0 | 1 => {
            c.remove(at);
        }
        2 => c.insert(at, c[at]),
        _ => {
            let next = ((c[at] as u8 - b'a' + 1) % 26 + b'a') as char;
            c[at] = next;
        }
    }
    c.into_iter().collect()
}

/// A misspelt copy of tuning cases: about one long word in [`MISSPELL_EVERY`] gets one typo.
pub fn misspelt(tune: &[&Case]) -> Vec<Case> {
    tune.iter()
        .filter(|c| c.split == Split::Tune)
        .map(|c| {
            let words: Vec<String> = c
                .request
                .split(' ')
                .enumerate()
                .map(|(i, w)| {
                    let h = hash(&format!("{}:{i}:{w}", c.id));
                    let plain = w.chars().all(|ch| ch.is_ascii_lowercase());
                    if plain && w.len() >= MIN_MISSPELT_CHARS && h % MISSPELL_EVERY == 0 {
                        misspell(w, h / MISSPELL_EVERY)
                    } else {
                        w.to_owned()
                    }
                })
                .collect();
            Case {
                request: words.join(" "),
                ..(*c).clone()
            }
        })
        .collect()
}

/// Accuracy of each variant on the held-out half and on the misspelt tuning copy, then
/// latency of `select` with the steps on and off.
pub fn rows(index: &SkillIndex, held: &[&Case], tune: &[&Case], table: &mut Table) {
    let copy = misspelt(tune);
    let copy_refs: Vec<&Case> = copy.iter().collect();
    for (label, cases) in [
        ("HELD-OUT", held),
        ("tune, misspelt copy (generated)", copy_refs.as_slice()),
    ] {
        for (name, p) in variants() {
            let s = evalset::score(cases, &answers(index, cases, &p));
            table.note(s.line(&format!("{label}: issue 43 {name} (ranked | select)")));
        }
    }
    let texts =
        |cases: &[&Case]| -> Vec<String> { cases.iter().map(|c| c.request.clone()).collect() };
    latency(index, "corpus, held-out requests", &texts(held), table);
    latency(
        index,
        "corpus, misspelt tuning copy",
        &texts(&copy_refs),
        table,
    );
    matchers(
        index,
        "corpus, misspelt tuning copy",
        &texts(&copy_refs),
        table,
    );
}

/// Typo matching's automata against a symmetric-delete table, on the words of `requests`
/// that it looks up.
pub fn matchers(index: &SkillIndex, label: &str, requests: &[String], table: &mut Table) {
    match tuning::compare_typo_matchers(index, requests) {
        Ok(t) => {
            let per = |d: Duration| micros(d / u32::try_from(t.words.max(1)).unwrap_or(u32::MAX));
            table.note(format!(
                "typo matchers, {label}: {} words; automata over tantivy's term dictionary \
                 (baseline) {} a word; symmetric-delete table {} a word (x{:.2}), built in {} \
                 ({} entries); same answer for {} of {}",
                t.words,
                per(t.automata),
                per(t.table),
                t.table.as_secs_f64() / t.automata.as_secs_f64().max(1e-9),
                micros(t.table_build),
                t.table_entries,
                t.agree,
                t.words
            ));
        }
        Err(e) => table.error(&format!("typo matchers, {label}"), e.to_string()),
    }
}

/// `select` latency with the steps on and off, interleaved request by request.
pub fn latency(index: &SkillIndex, label: &str, requests: &[String], table: &mut Table) {
    let opts = SelectOptions::default();
    let [(_, on), .., (_, off)] = variants();
    let mut times: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    for pass in 0..=PASSES {
        for r in requests {
            for (slot, p) in [&on, &off].into_iter().enumerate() {
                let t = Instant::now();
                let _ = std::hint::black_box(tuning::select(index, r, &opts, p));
                if pass > 0 {
                    times[slot].push(t.elapsed());
                }
            }
        }
    }
    for t in &mut times {
        t.sort_unstable();
    }
    let [on_t, off_t] = &times;
    let ratio =
        |p: f64| percentile(on_t, p).as_secs_f64() / percentile(off_t, p).as_secs_f64().max(1e-9);
    table.note(format!(
        "select, {label}: steps off (baseline) p50 {} p99 {}; steps on p50 {} p99 {} \
         (x{:.2} p50, x{:.2} p99; p99 target under 2 ms: {})",
        micros(percentile(off_t, 0.5)),
        micros(percentile(off_t, 0.99)),
        micros(percentile(on_t, 0.5)),
        micros(percentile(on_t, 0.99)),
        ratio(0.5),
        ratio(0.99),
        if percentile(on_t, 0.99) < Duration::from_millis(2) {
            "ok"
        } else {
            "MISSED"
        }
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspelling_is_one_edit_and_deterministic() {
        for h in 0..16 {
            let w = misspell("spreadsheet", h);
            assert_ne!(w, "spreadsheet", "{h}");
            assert!(w.starts_with('s'));
            assert!((10..=12).contains(&w.len()), "{w}");
            assert_eq!(w, misspell("spreadsheet", h));
        }
    }
}
