//! `cargo xtask bench select-fit`: choose skill-search's ranking parameters on the tuning
//! half of the evaluation set, and print them as the constants of
//! `skill-search/src/params.rs`.
//!
//! 1. Ranking (BM25 k1 and per-field b, field weights, exact-name bonus, limit-clause
//!    penalties, fusion weight and its growth with the request's length, multi-intent
//!    diversity): coordinate ascent over small
//!    grids, maximising ranked top-1 + top-3 + half top-10 + half multi-covered. A 5-fold
//!    cross-validation runs the same search on four folds and scores the fifth, so the
//!    printed held-fold figures say how well the *procedure* generalises; the parameters
//!    printed are then fitted on the whole half.
//! 2. Gate: logistic regression of "the ranking has a right answer to offer" (requests
//!    with a right one among the first three against requests no skill fits; requests the
//!    ranking gets wrong are left out) on the best raw lexical score, its share of the
//!    request, the best semantic similarity, the share of the request's words no skill
//!    uses, the rarest request word the first candidate lacks, the request's length, how
//!    far the best lexical score stands out of the candidates', the first candidate's lead
//!    over the second, the idf share of the request in its name and description and the
//!    first candidate's similarity to the request by its whole text and its lead over the
//!    other candidates' (and,
//!    with
//!    `--transformer DIR`, the model's similarity of the request and the first
//!    candidate's description; then only the gate and step 3 are fitted, with the
//!    ranking as shipped). Its rows come from the
//!    whole corpus and from each of its packs alone (`packs.rs`: a host with a single
//!    pack must refuse what that pack cannot answer), each of the four cells (corpus or
//!    pack, right or none) weighing the same. Then its intercept is shifted to maximise
//!    selected top-3 among shifts that refuse [`MIN_REFUSED`] of the corpus's no-skill
//!    requests (each shift's selections read off one ranking: the ranking does not depend
//!    on the gate). `--gate-only` fits this step alone, the ranking as shipped.
//! 3. Confidence drop below the best candidate (`rel`, `evidence_share`): the one that
//!    selects the fewest skills while losing no right answer and no covered multi-intent
//!    request that no drop selects.
//!
//! Only [`evalset::tune_only`] cases are read.

use skill_search::tuning::{self, Gate, Params};
use skill_search::{SearchRequest, SkillIndex};

use super::evalset::{self, Answer, Case, Kind, Scores, Split};
use super::packs::Pack;

/// Folds of the cross-validation.
const FOLDS: usize = 5;
/// Rounds of coordinate ascent.
const ROUNDS: usize = 2;
/// Ranking depth read per request.
const DEPTH: usize = 10;
/// Share of the tuning half's no-skill requests the gate must refuse (the target is 85%
/// on the held-out half; a little margin).
const MIN_REFUSED: f64 = 0.9;

/// One request's ranking under some parameters: names, confidences, gate.
pub struct Ranked {
    /// Names, best first.
    pub names: Vec<String>,
    /// Their confidences.
    pub confidence: Vec<f32>,
    /// The request's gate.
    pub gate: Gate,
}

/// Rank every case with `p`.
pub fn rank_all(index: &SkillIndex, cases: &[&Case], p: &Params) -> Vec<Ranked> {
    cases
        .iter()
        .map(|c| {
            let req = SearchRequest {
                text: &c.request,
                limit: DEPTH,
                ..Default::default()
            };
            match tuning::search(index, &req, p) {
                Ok((hits, gate)) => Ranked {
                    names: hits.iter().map(|m| m.name.clone()).collect(),
                    confidence: hits.iter().map(|m| m.confidence).collect(),
                    gate,
                },
                Err(_) => Ranked {
                    names: Vec::new(),
                    confidence: Vec::new(),
                    gate: Gate::default(),
                },
            }
        })
        .collect()
}

/// Answers from rankings: the selection is the top 3 whose confidence reaches
/// `threshold` (what `select` does).
pub fn answers(ranked: &[Ranked], threshold: f32) -> Vec<Answer> {
    ranked
        .iter()
        .map(|r| Answer {
            ranked: r.names.clone(),
            selected: Some(
                r.names
                    .iter()
                    .zip(&r.confidence)
                    .take(3)
                    .filter(|(_, c)| **c >= threshold)
                    .map(|(n, _)| n.clone())
                    .collect(),
            ),
            alternatives: Vec::new(),
        })
        .collect()
}

fn ranking_objective(s: &Scores) -> f64 {
    let multi = s.multi_covered as f64 / s.multi.max(1) as f64;
    s.rate(s.top1) + s.rate(s.top3) + 0.5 * s.rate(s.top10) + 0.5 * multi
}

fn eval_ranking(index: &SkillIndex, cases: &[&Case], p: &Params) -> f64 {
    let r = rank_all(index, cases, p);
    ranking_objective(&evalset::score(cases, &answers(&r, 0.5)))
}

/// One coordinate of the search: read and write one number of the parameters.
pub(super) type Coord = (&'static str, fn(&mut Params) -> &mut f32, &'static [f32]);

pub(super) fn coords() -> Vec<Coord> {
    const K1: &[f32] = &[0.5, 0.8, 1.2, 1.6, 2.2];
    const B: &[f32] = &[0.0, 0.25, 0.5, 0.75, 0.9];
    const W: &[f32] = &[0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0];
    const BONUS: &[f32] = &[0.0, 0.5, 1.0, 2.0, 4.0];
    const FUSE: &[f32] = &[0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0];
    const DIVERSE: &[f32] = &[0.0, 0.5, 1.0, 2.0, 3.0, 5.0];
    vec![
        ("k1", |p| &mut p.k1, K1),
        ("b.name", |p| &mut p.b[0], B),
        ("b.desc", |p| &mut p.b[1], B),
        ("b.head", |p| &mut p.b[2], B),
        ("b.body", |p| &mut p.b[3], B),
        ("w.name", |p| &mut p.w[0], W),
        ("w.head", |p| &mut p.w[2], W),
        ("w.body", |p| &mut p.w[3], W),
        ("exact_name", |p| &mut p.exact_name, BONUS),
        ("not_penalty", |p| &mut p.not_penalty, BONUS),
        ("only_penalty", |p| &mut p.only_penalty, BONUS),
        ("w_sem", |p| &mut p.w_sem, FUSE),
        ("w_sem_len", |p| &mut p.w_sem_len, FUSE),
        ("w_dense", |p| &mut p.w_dense, FUSE),
        ("diversity", |p| &mut p.diversity, DIVERSE),
    ]
}

/// Coordinate ascent of the ranking parameters from `start` on `cases`.
pub fn fit_ranking(index: &SkillIndex, cases: &[&Case], start: Params, log: bool) -> Params {
    let mut best = start;
    let mut best_score = eval_ranking(index, cases, &best);
    for round in 0..ROUNDS {
        for (name, get, grid) in coords() {
            for &v in grid {
                let mut p = best;
                *get(&mut p) = v;
                if p == best {
                    continue;
                }
                let s = eval_ranking(index, cases, &p);
                if s > best_score + 1e-9 {
                    best_score = s;
                    best = p;
                    if log {
                        eprintln!("fit: round {round} {name} = {v}: objective {s:.4}");
                    }
                }
            }
        }
    }
    best
}

/// Features of the gate's logistic regression: a constant, then the [`Gate`] facts.
const GATE_FEATURES: usize = 13;

/// Fit the gate's logistic regression on the rankings (label: a right skill among the
/// first three, against requests no skill fits; requests ranked wrong are left out), over
/// the whole corpus and over each pack alone, then shift its intercept for the best
/// selected top-3 among shifts that refuse enough of the corpus's no-skill requests; then
/// pick how much a candidate's confidence drops below the best's.
pub fn fit_gate(index: &SkillIndex, cases: &[&Case], packs: &[Pack], mut p: Params) -> Params {
    assert!(
        cases.iter().all(|c| c.split == Split::Tune),
        "fitting must never read the held-out half"
    );
    let mut rows = GateRows::default();
    rows.add(cases, &rank_all(index, cases, &p), Group::Corpus);
    for pack in packs {
        let relabelled = pack.relabel(cases);
        let refs: Vec<&Case> = relabelled.iter().collect();
        rows.add(&refs, &rank_all(&pack.index, &refs, &p), Group::Pack);
    }
    let (xs, ys, weights) = rows.balanced();
    let w = logistic_fit(&xs, &ys, &weights);
    p.gate_bias = w[0] as f32;
    p.gate_lex = w[1] as f32;
    p.gate_cover = w[2] as f32;
    p.gate_sem = w[3] as f32;
    p.gate_unknown = w[4] as f32;
    p.gate_miss = w[5] as f32;
    p.gate_len = w[6] as f32;
    // Without a sentence-embedding model `full` is 0 in every row, and the ridge keeps
    // its weight at 0: the fit of the other weights is the same as without the column.
    p.gate_full = w[7] as f32;
    p.gate_standout = w[8] as f32;
    p.gate_margin = w[9] as f32;
    p.gate_held = w[10] as f32;
    p.gate_dense = w[11] as f32;
    p.gate_dense_margin = w[12] as f32;
    // With no confidence drop below the best, a request's selection is all or nothing:
    // shift the intercept for the best selected top-3 among shifts that refuse at least
    // MIN_REFUSED of the no-skill requests.
    let loose = Params {
        rel: 0.0,
        evidence_share: 0.0,
        ..p
    };
    let score = |q: &Params| evalset::score(cases, &answers(&rank_all(index, cases, q), 0.5));
    // The ranking does not depend on the gate, so one ranking gives every shift's
    // selection (`shifted`).
    let base = rank_all(index, cases, &loose);
    let mut best: Option<(f64, f32)> = None;
    for shift in (-40..=40).map(|i| i as f32 * 0.25) {
        let s = evalset::score(cases, &answers(&shifted(&base, shift), 0.5));
        let refused = s.refused.unwrap_or(0) as f64 / s.none.max(1) as f64;
        if std::env::var_os("BENCH_FIT_SHOW").is_some() {
            eprintln!(
                "fit: gate shift {shift:+.2}: selected top-3 {:.3}, refused {refused:.3}",
                s.rate(s.sel_top3.unwrap_or(0))
            );
        }
        if refused + 1e-9 < min_refused() {
            continue;
        }
        let v = s.rate(s.sel_top3.unwrap_or(0)) + 0.01 * refused;
        if best.as_ref().is_none_or(|(b, _)| v > *b + 1e-9) {
            best = Some((v, shift));
        }
    }
    if let Some((_, shift)) = best {
        p = Params {
            gate_bias: loose.gate_bias + shift,
            ..loose
        };
    }
    // The confidence drop (`rel`, `evidence_share`) that selects the fewest skills while
    // losing no right answer and no covered multi-intent request that no drop selects.
    let flat = score(&p);
    let mut chosen = (flat.selected_total, p);
    for evidence_share in [0.0, 0.25, 0.5, 0.75, 1.0] {
        for rel in [0.0, 0.1, 0.25, 0.5, 1.0, 2.0] {
            let q = Params {
                rel,
                evidence_share,
                ..p
            };
            let s = score(&q);
            if s.sel_top3 >= flat.sel_top3
                && s.sel_multi >= flat.sel_multi
                && s.selected_total < chosen.0
            {
                chosen = (s.selected_total, q);
            }
        }
    }
    chosen.1
}

/// The share of the tuning no-skill requests the gate must refuse: [`MIN_REFUSED`], or
/// `BENCH_FIT_MIN_REFUSED` when set to a number (to see what another trade gives).
fn min_refused() -> f64 {
    std::env::var("BENCH_FIT_MIN_REFUSED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(MIN_REFUSED)
}

/// Rankings made with no confidence drop below the best (`rel` and `evidence_share` 0) as
/// they would be with the gate's intercept moved by `shift`: each confidence is
/// `1 - (1 - logistic(z)) * m`, where `m` (the candidate's own evidence: triggers, a
/// phrase, an explicit mention; running maximum down the ranking, for the cap by rank) does
/// not depend on the gate, so it is read back at `z` and applied at `z + shift`.
fn shifted(ranked: &[Ranked], shift: f32) -> Vec<Ranked> {
    let logistic = |z: f64| 1.0 / (1.0 + (-z).exp());
    ranked
        .iter()
        .map(|r| {
            let z = f64::from(r.gate.z);
            let open = 1.0 - logistic(z);
            let moved = 1.0 - logistic(z + f64::from(shift));
            let confidence = r
                .confidence
                .iter()
                .map(|&c| {
                    let m = if open > 1e-9 {
                        ((1.0 - f64::from(c)) / open).clamp(0.0, 1.0)
                    } else {
                        1.0
                    };
                    (1.0 - moved * m) as f32
                })
                .collect();
            Ranked {
                names: r.names.clone(),
                confidence,
                gate: Gate {
                    z: r.gate.z + shift,
                    ..r.gate
                },
            }
        })
        .collect()
}

/// Where a gate row's ranking came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    /// The whole corpus.
    Corpus,
    /// One pack alone.
    Pack,
}

/// The gate's training rows: features, label, group.
#[derive(Default)]
struct GateRows(Vec<([f64; GATE_FEATURES], f64, Group)>);

impl GateRows {
    /// The rows of `cases` ranked as `ranked`: the gate should open when the ranking has a
    /// right answer to offer, so a request some skill fits but whose first three are all
    /// wrong teaches it nothing about that (it is left out), and a request no skill fits is
    /// a negative.
    fn add(&mut self, cases: &[&Case], ranked: &[Ranked], group: Group) {
        for (c, r) in cases.iter().zip(ranked) {
            let y = if c.kind == Kind::None {
                0.0
            } else if r.names.iter().take(3).any(|n| c.accepts(n)) {
                1.0
            } else {
                continue;
            };
            let g = &r.gate;
            let x = [
                1.0,
                f64::from(g.top_lex),
                f64::from(g.cover),
                f64::from(g.top_sem),
                f64::from(g.unknown),
                f64::from(g.miss),
                f64::from(g.length),
                f64::from(g.full),
                f64::from(g.standout),
                f64::from(g.margin),
                f64::from(g.held),
                f64::from(g.dense),
                f64::from(g.dense_margin),
            ];
            self.0.push((x, y, group));
        }
    }

    /// Features, labels and weights: each of the four cells (corpus or pack, positive or
    /// negative) weighs the same in all, so that the many requests a single pack cannot
    /// answer do not drown the corpus's few no-skill ones.
    fn balanced(&self) -> (Vec<[f64; GATE_FEATURES]>, Vec<f64>, Vec<f64>) {
        let cell = |y: f64, g: Group| self.0.iter().filter(|r| r.1 == y && r.2 == g).count();
        let counts = [
            [cell(0.0, Group::Corpus), cell(1.0, Group::Corpus)],
            [cell(0.0, Group::Pack), cell(1.0, Group::Pack)],
        ];
        let cells = counts.iter().flatten().filter(|&&n| n > 0).count().max(1);
        let per_cell = self.0.len() as f64 / cells as f64;
        let weight = |y: f64, g: Group| {
            let n = counts[usize::from(g == Group::Pack)][usize::from(y > 0.5)];
            per_cell / n.max(1) as f64
        };
        let xs = self.0.iter().map(|r| r.0).collect();
        let ys = self.0.iter().map(|r| r.1).collect();
        let ws = self.0.iter().map(|r| weight(r.1, r.2)).collect();
        (xs, ys, ws)
    }
}

/// Weighted logistic regression by Newton's method with a small ridge on the weights.
#[allow(clippy::needless_range_loop)] // Newton steps read best as indices.
fn logistic_fit(xs: &[[f64; GATE_FEATURES]], ys: &[f64], weights: &[f64]) -> [f64; GATE_FEATURES] {
    const N: usize = GATE_FEATURES;
    let mut w = [0.0f64; N];
    for _ in 0..50 {
        let mut g = [0.0f64; N];
        let mut h = [[0.0f64; N]; N];
        for ((x, y), wt) in xs.iter().zip(ys).zip(weights) {
            let z: f64 = (0..N).map(|i| w[i] * x[i]).sum();
            let pr = 1.0 / (1.0 + (-z).exp());
            for i in 0..N {
                g[i] += wt * (pr - y) * x[i];
                for j in 0..N {
                    h[i][j] += wt * pr * (1.0 - pr) * x[i] * x[j];
                }
            }
        }
        for i in 1..N {
            g[i] += 0.01 * w[i];
            h[i][i] += 0.01;
        }
        h[0][0] += 1e-6;
        let Some(step) = solve(h, g) else { break };
        let mut moved = 0.0;
        for i in 0..N {
            w[i] -= step[i];
            moved += step[i].abs();
        }
        if moved < 1e-8 {
            break;
        }
    }
    w
}

#[allow(clippy::needless_range_loop)] // Gaussian elimination reads best as indices.
fn solve<const N: usize>(mut a: [[f64; N]; N], mut b: [f64; N]) -> Option<[f64; N]> {
    for c in 0..N {
        let piv = (c..N).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        if a[piv][c].abs() < 1e-12 {
            return None;
        }
        a.swap(c, piv);
        b.swap(c, piv);
        for r in 0..N {
            if r != c {
                let f = a[r][c] / a[c][c];
                for k in c..N {
                    a[r][k] -= f * a[c][k];
                }
                b[r] -= f * b[c];
            }
        }
    }
    Some(std::array::from_fn(|i| b[i] / a[i][i]))
}

/// Fold `k` of [`FOLDS`]: the cases to fit on and the cases to score.
fn fold<'a>(cases: &[&'a Case], k: usize) -> (Vec<&'a Case>, Vec<&'a Case>) {
    let (train, test): (Vec<_>, Vec<_>) =
        cases.iter().enumerate().partition(|(i, _)| i % FOLDS != k);
    let cases = |v: Vec<(usize, &&'a Case)>| v.into_iter().map(|(_, c)| *c).collect();
    (cases(train), cases(test))
}

/// Cross-validated ranking scores of the fitting procedure over the tuning cases.
pub fn cross_validate(index: &SkillIndex, tune: &[&Case], packs: &[Pack], start: Params) -> Scores {
    let mut total = Scores::default();
    for k in 0..FOLDS {
        let (train, test) = fold(tune, k);
        let mut p = fit_ranking(index, &train, start, false);
        p = fit_gate(index, &train, packs, p);
        let s = evalset::score(&test, &answers(&rank_all(index, &test, &p), 0.5));
        total.merge(&s);
    }
    total
}

/// The parameters as the constants of `params.rs`.
pub fn constants(p: &Params) -> String {
    format!(
        "const K1: f32 = {:?};\nconst B: [f32; FIELDS] = {:?};\nconst W: [f32; FIELDS] = {:?};\nconst EXACT_NAME: f32 = {:?};\nconst NOT_PENALTY: f32 = {:?};\nconst ONLY_PENALTY: f32 = {:?};\nconst W_LEX: f32 = {:?};\nconst W_SEM: f32 = {:?};\nconst W_SEM_LEN: f32 = {:?};\nconst W_DENSE: f32 = {:?};\n{}\nconst DIVERSITY: f32 = {:?};",
        p.k1,
        p.b,
        p.w,
        p.exact_name,
        p.not_penalty,
        p.only_penalty,
        p.w_lex,
        p.w_sem,
        p.w_sem_len,
        p.w_dense,
        gate_constants("", p, false),
        p.diversity
    )
}

/// The gate's constants and the confidence drop's, their names after `prefix`; the
/// model's weight only `with_full`.
fn gate_constants(prefix: &str, p: &Params, with_full: bool) -> String {
    let mut gate = vec![
        ("GATE_BIAS", p.gate_bias),
        ("GATE_LEX", p.gate_lex),
        ("GATE_COVER", p.gate_cover),
        ("GATE_SEM", p.gate_sem),
        ("GATE_UNKNOWN", p.gate_unknown),
        ("GATE_MISS", p.gate_miss),
        ("GATE_LEN", p.gate_len),
        ("GATE_STANDOUT", p.gate_standout),
        ("GATE_MARGIN", p.gate_margin),
        ("GATE_HELD", p.gate_held),
        ("GATE_DENSE", p.gate_dense),
        ("GATE_DENSE_MARGIN", p.gate_dense_margin),
    ];
    if with_full {
        gate.push(("GATE_FULL", p.gate_full));
    }
    let mut lines: Vec<String> = gate
        .into_iter()
        .map(|(name, v)| format!("const {prefix}{name}: f32 = {v:.3};"))
        .collect();
    lines.push(format!(
        "const {prefix}EVIDENCE_SHARE: f32 = {:?};",
        p.evidence_share
    ));
    lines.push(format!("const {prefix}REL: f32 = {:?};", p.rel));
    lines.join("\n")
}

/// The gate alone: the ranking stays as shipped, the gate is cross-validated over 5 folds
/// of the tuning half, then fitted on all of it. `with_model`: the index has a
/// sentence-embedding model (its similarity is one more input, and the constants are
/// printed as `params.rs`'s `T_` ones). Returns the lines to print.
pub fn run_gate(
    index: &SkillIndex,
    packs: &[Pack],
    cases: &[Case],
    with_model: bool,
) -> Vec<String> {
    let tune = evalset::tune_only(cases);
    let start = Params::SHIPPED;
    let mut cv = Scores::default();
    // `BENCH_FIT_NO_CV` skips the cross-validation (five more fits) on a loaded machine.
    let folds = if std::env::var_os("BENCH_FIT_NO_CV").is_some() {
        0
    } else {
        FOLDS
    };
    for k in 0..folds {
        let (train, test) = fold(&tune, k);
        let p = fit_gate(index, &train, packs, start);
        cv.merge(&evalset::score(
            &test,
            &answers(&rank_all(index, &test, &p), 0.5),
        ));
    }
    let p = fit_gate(index, &tune, packs, start);
    let s = evalset::score(&tune, &answers(&rank_all(index, &tune, &p), 0.5));
    let (what, prefix) = if with_model {
        ("gate with the model", "T_")
    } else {
        ("gate", "")
    };
    vec![
        cv.line(&format!("{what}, 5-fold CV on tune (held folds)")),
        s.line(&format!("{what}, tune, fitted")),
        format!(
            "fitted constants:\n{}",
            gate_constants(prefix, &p, with_model)
        ),
    ]
}

/// Run the whole fit on the tuning half; returns the lines to print.
pub fn run(index: &SkillIndex, packs: &[Pack], cases: &[Case]) -> Vec<String> {
    let tune = evalset::tune_only(cases);
    let mut out = Vec::new();
    let start = Params::SHIPPED;
    let cv = cross_validate(index, &tune, packs, start);
    out.push(cv.line("5-fold CV on tune (held folds)"));
    let mut p = fit_ranking(index, &tune, start, true);
    p = fit_gate(index, &tune, packs, p);
    let s = evalset::score(&tune, &answers(&rank_all(index, &tune, &p), 0.5));
    out.push(s.line("tune, fitted"));
    if std::env::var_os("BENCH_FIT_SHOW").is_some() {
        let multi_cases: Vec<&Case> = tune
            .iter()
            .copied()
            .filter(|c| c.kind == Kind::Multi)
            .collect();
        for (c, a) in multi_cases.iter().zip(rank_all(index, &multi_cases, &p)) {
            out.push(format!(
                "tune multi {}: {:?} want {:?}; got {:?}",
                c.id,
                c.request,
                c.expect,
                &a.names[..a.names.len().min(3)]
            ));
        }
    }
    out.push(format!("fitted constants:\n{}", constants(&p)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(y: f64, group: Group, x: f64) -> ([f64; GATE_FEATURES], f64, Group) {
        (
            [
                1.0,
                x,
                0.5 * x,
                0.1,
                0.0,
                x * x,
                0.3 * x,
                0.0,
                0.2 * x,
                0.0,
                0.1,
                0.3,
                -0.1 * x,
            ],
            y,
            group,
        )
    }

    #[test]
    fn the_printed_constants_are_those_of_params_rs() {
        let params = include_str!("../../../skill-search/src/params.rs");
        let shipped = constants(&Params::SHIPPED);
        for line in shipped.lines() {
            assert!(params.contains(line), "{line} is not in params.rs");
        }
        assert!(shipped.contains("const GATE_MISS: f32 = ") && !shipped.contains("GATE_FULL"));
        let t = gate_constants("T_", &Params::SHIPPED, true);
        assert_eq!(t.lines().count(), 15);
        assert!(t.contains("const T_GATE_FULL: f32 = 0.000;"), "{t}");
        #[cfg(feature = "transformer")]
        for line in gate_constants("T_", &Params::TRANSFORMER, true).lines() {
            assert!(params.contains(line), "{line} is not in params.rs");
        }
    }

    #[test]
    fn a_shifted_ranking_moves_the_gate_and_keeps_each_candidates_own_evidence() {
        let ranked = [Ranked {
            names: vec!["a".into(), "b".into()],
            // At z = 0 the gate alone gives 0.5; "b" has evidence of its own (m = 0.5).
            confidence: vec![0.5, 0.75],
            gate: Gate::default(),
        }];
        let same = shifted(&ranked, 0.0);
        assert!((same[0].confidence[0] - 0.5).abs() < 1e-6);
        assert!((same[0].confidence[1] - 0.75).abs() < 1e-6);
        // logistic(-ln 4) = 0.2: "a" falls to 0.2, "b" to 1 - 0.8 * 0.5.
        let down = shifted(&ranked, -(4f32.ln()));
        assert!((down[0].confidence[0] - 0.2).abs() < 1e-5);
        assert!((down[0].confidence[1] - 0.6).abs() < 1e-5);
        assert!((down[0].gate.z + 4f32.ln()).abs() < 1e-6);
        assert_eq!(down[0].names, ranked[0].names);
        // Selected at 0.5: both before, only "b" after.
        let sel = |r: &[Ranked]| answers(r, 0.5)[0].selected.clone().unwrap_or_default();
        assert_eq!(sel(&ranked), ["a", "b"]);
        assert_eq!(sel(&down), ["b"]);
    }

    #[test]
    fn each_cell_weighs_the_same_and_the_total_is_the_row_count() {
        let mut rows = GateRows::default();
        for i in 0..3 {
            rows.0.push(row(1.0, Group::Corpus, f64::from(i)));
        }
        rows.0.push(row(0.0, Group::Corpus, 0.5));
        for i in 0..6 {
            rows.0.push(row(0.0, Group::Pack, f64::from(i)));
        }
        // No positive pack rows: three cells share the weight.
        let (xs, ys, ws) = rows.balanced();
        assert_eq!((xs.len(), ys.len(), ws.len()), (10, 10, 10));
        let cell = |y: f64, g: Group| -> f64 {
            rows.0
                .iter()
                .zip(&ws)
                .filter(|(r, _)| r.1 == y && r.2 == g)
                .map(|(_, w)| w)
                .sum()
        };
        for (y, g) in [
            (1.0, Group::Corpus),
            (0.0, Group::Corpus),
            (0.0, Group::Pack),
        ] {
            assert!((cell(y, g) - 10.0 / 3.0).abs() < 1e-9, "{y} {g:?}");
        }
        assert!((ws.iter().sum::<f64>() - 10.0).abs() < 1e-9);
    }

    #[test]
    fn a_row_of_weight_two_counts_as_two_rows() {
        let xs: Vec<[f64; GATE_FEATURES]> = (0..8)
            .map(|i| row(0.0, Group::Corpus, f64::from(i) / 4.0).0)
            .collect();
        let ys: Vec<f64> = (0..8).map(|i| f64::from(u8::from(i % 3 != 0))).collect();
        let mut weights = vec![1.0; 8];
        weights[5] = 2.0;
        let weighted = logistic_fit(&xs, &ys, &weights);
        let mut xs2 = xs.clone();
        let mut ys2 = ys.clone();
        xs2.push(xs[5]);
        ys2.push(ys[5]);
        let doubled = logistic_fit(&xs2, &ys2, &[1.0; 9]);
        for (a, b) in weighted.iter().zip(doubled) {
            assert!((a - b).abs() < 1e-6, "{weighted:?} vs {doubled:?}");
        }
        // And weighting does change the fit.
        let plain = logistic_fit(&xs, &ys, &[1.0; 8]);
        assert!(
            plain
                .iter()
                .zip(weighted)
                .any(|(a, b)| (a - b).abs() > 1e-3)
        );
    }
}
