//! Selection quality over a labelled request set, and the seed's keyword fast path as a
//! baseline (agent-skills-integration 6.2).
//!
//! A request set is JSON Lines, one request a line:
//! `{"request": "...", "expect": ["skill-a", "skill-b"], "turns": ["..."]}`. `expect` lists
//! every skill that would be a right answer (corpora hold near-duplicates); an empty list
//! means no skill fits. `turns` (optional) are earlier turns, oldest first. Blank lines and
//! lines starting with `#` are skipped.
//!
//! The text model's weights can be fitted to a set ([`fit_text_model`] over [`examples`])
//! and checked on requests they were not fitted on ([`cross_validate`]).

use serde::{Deserialize, Serialize};
use skill_registry::Snapshot;

use crate::Error;
use crate::index::{Filter, SearchRequest, SkillIndex};
use crate::score::{TextFeatures, TextModel};
use crate::select::SelectOptions;

/// Candidates of each request taken as fitting examples: the ones with the best BM25
/// scores.
pub const FIT_CANDIDATES: usize = 10;
/// Ridge penalty on the text model's weights (not its intercept) when fitting; it only
/// keeps Newton's method stable when a feature separates the examples.
pub const FIT_RIDGE: f64 = 0.01;
/// Most Newton steps of one fit.
pub const FIT_MAX_STEPS: usize = 50;
/// Folds of the cross-validation of `cargo xtask bench select`.
pub const DEFAULT_FOLDS: usize = 5;

/// One labelled request.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct Case {
    /// The request as a user writes it.
    pub request: String,
    /// Skills that are a right answer; empty when no skill fits.
    #[serde(default)]
    pub expect: Vec<String>,
    /// Earlier turns, oldest first.
    #[serde(default)]
    pub turns: Vec<String>,
}

/// Read a request set (see the module docs).
pub fn parse_cases(text: &str) -> Result<Vec<Case>, Error> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let case: Case = serde_json::from_str(line).map_err(|e| Error::RequestSet {
            line: i + 1,
            message: e.to_string(),
        })?;
        if case.request.trim().is_empty() {
            return Err(Error::RequestSet {
                line: i + 1,
                message: "`request` is empty".into(),
            });
        }
        out.push(case);
    }
    Ok(out)
}

/// Accuracy figures of one selector over a request set.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    /// Requests with a fitting skill.
    pub with_skill: usize,
    /// Requests with none.
    pub without_skill: usize,
    /// Requests with a fitting skill whose first selected skill is right.
    pub top1: usize,
    /// Requests with a fitting skill with a right skill among those selected (up to 3).
    pub top3: usize,
    /// Requests with a fitting skill whose top-ranked candidate (threshold or not) is right.
    pub ranked_top1: usize,
    /// Requests with a fitting skill with a right skill among the top three candidates.
    pub ranked_top3: usize,
    /// Requests answered "no skill needed".
    pub said_none: usize,
    /// ... of which truly need none.
    pub said_none_correctly: usize,
    /// Labelled skills that are not in the snapshot (a stale label).
    pub unknown_labels: Vec<String>,
    /// Requests whose first answer was wrong: (request, expected, got).
    pub misses: Vec<(String, Vec<String>, Vec<String>)>,
}

impl Report {
    /// Share of requests with a fitting skill whose first selected skill is right.
    pub fn top1_accuracy(&self) -> f64 {
        ratio(self.top1, self.with_skill)
    }
    /// Share with a right skill among the selected ones.
    pub fn top3_accuracy(&self) -> f64 {
        ratio(self.top3, self.with_skill)
    }
    /// Share of requests with a fitting skill whose top-ranked candidate is right.
    pub fn ranked_top1_accuracy(&self) -> f64 {
        ratio(self.ranked_top1, self.with_skill)
    }
    /// Share with a right skill among the top three candidates.
    pub fn ranked_top3_accuracy(&self) -> f64 {
        ratio(self.ranked_top3, self.with_skill)
    }
    /// Of the "no skill needed" answers, the share that were right.
    pub fn no_skill_precision(&self) -> f64 {
        ratio(self.said_none_correctly, self.said_none)
    }
    /// Of the requests that need no skill, the share answered "no skill needed".
    pub fn no_skill_recall(&self) -> f64 {
        ratio(self.said_none_correctly, self.without_skill)
    }

    fn add(&mut self, case: &Case, got: &[String], ranked: &[String]) {
        if case.expect.is_empty() {
            self.without_skill += 1;
        } else {
            self.with_skill += 1;
            if ranked.first().is_some_and(|g| case.expect.contains(g)) {
                self.ranked_top1 += 1;
            }
            if ranked.iter().take(3).any(|g| case.expect.contains(g)) {
                self.ranked_top3 += 1;
            }
            if got.first().is_some_and(|g| case.expect.contains(g)) {
                self.top1 += 1;
            }
            if got.iter().take(3).any(|g| case.expect.contains(g)) {
                self.top3 += 1;
            }
        }
        if got.is_empty() {
            self.said_none += 1;
            if case.expect.is_empty() {
                self.said_none_correctly += 1;
            }
        }
        let right = match got.first() {
            None => case.expect.is_empty(),
            Some(g) => case.expect.contains(g),
        };
        if !right {
            self.misses
                .push((case.request.clone(), case.expect.clone(), got.to_vec()));
        }
    }
}

impl Report {
    /// Add the counts of `other` (a report over other requests) to this one.
    pub fn merge(&mut self, other: Report) {
        self.with_skill += other.with_skill;
        self.without_skill += other.without_skill;
        self.top1 += other.top1;
        self.top3 += other.top3;
        self.ranked_top1 += other.ranked_top1;
        self.ranked_top3 += other.ranked_top3;
        self.said_none += other.said_none;
        self.said_none_correctly += other.said_none_correctly;
        for l in other.unknown_labels {
            if !self.unknown_labels.contains(&l) {
                self.unknown_labels.push(l);
            }
        }
        self.misses.extend(other.misses);
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// One row of the calibration table: top candidates whose confidence fell in
/// `[low, high)`, and how many of them were right.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalibrationBin {
    /// Lower bound (inclusive).
    pub low: f32,
    /// Upper bound (exclusive; the last bin includes 1.0).
    pub high: f32,
    /// Top candidates in the bin.
    pub count: usize,
    /// Of which were a right answer.
    pub correct: usize,
}

/// Confidence bin edges of [`evaluate_index`]'s calibration table.
pub const CALIBRATION_EDGES: [f32; 6] = [0.0, 0.3, 0.5, 0.7, 0.9, 1.0];

fn empty_bins() -> Vec<CalibrationBin> {
    CALIBRATION_EDGES
        .windows(2)
        .map(|w| CalibrationBin {
            low: w[0],
            high: w[1],
            count: 0,
            correct: 0,
        })
        .collect()
}

/// Run [`SkillIndex::select`] over every case; also returns the calibration table of the
/// top-ranked candidate (selected or not) against its confidence.
pub fn evaluate_index(
    index: &SkillIndex,
    cases: &[Case],
    opts: &SelectOptions,
) -> Result<(Report, Vec<CalibrationBin>), Error> {
    evaluate_with(index, cases, opts, &TextModel::FITTED)
}

/// [`evaluate_index`] with `model` as the text model instead of the shipped weights.
pub fn evaluate_with(
    index: &SkillIndex,
    cases: &[Case],
    opts: &SelectOptions,
    model: &TextModel,
) -> Result<(Report, Vec<CalibrationBin>), Error> {
    let snapshot = index.snapshot();
    let mut report = Report::default();
    let mut bins = empty_bins();
    for case in cases {
        note_unknown(&mut report, snapshot.as_deref(), case);
        let o = SelectOptions {
            recent_turns: case.turns.clone(),
            ..opts.clone()
        };
        let top = index.search_with(
            &SearchRequest {
                text: &case.request,
                recent_turns: &case.turns,
                limit: 3,
                filter: Filter {
                    profile: opts.profile.clone(),
                    model_invocable_only: true,
                },
            },
            model,
        )?;
        if let Some(m) = top.first() {
            let last = bins.len() - 1;
            let i = bins
                .iter()
                .position(|b| m.confidence < b.high)
                .unwrap_or(last);
            if let Some(b) = bins.get_mut(i) {
                b.count += 1;
                if case.expect.contains(&m.name) {
                    b.correct += 1;
                }
            }
        }
        let sel = index.select_with(&case.request, &o, model)?;
        let got: Vec<String> = sel
            .selected_skills
            .into_iter()
            .map(|s| s.skill_id)
            .collect();
        let ranked: Vec<String> = top.into_iter().map(|m| m.name).collect();
        report.add(case, &got, &ranked);
    }
    Ok((report, bins))
}

/// One fitting example of the text model: a candidate's measurements, and whether it is a
/// right answer to its request.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Example {
    /// What the text model measures of the candidate.
    pub features: TextFeatures,
    /// Whether the candidate is one of the request's right answers.
    pub right: bool,
}

/// The fitting examples of one labelled request: the [`FIT_CANDIDATES`] model-invocable
/// candidates with the best BM25 scores among those that matched a term (ties by name),
/// each labelled right or wrong. They do not depend on the text model's weights, so the
/// examples of a fold never depend on weights fitted with that fold.
pub fn examples(
    index: &SkillIndex,
    case: &Case,
    profile: Option<&str>,
) -> Result<Vec<Example>, Error> {
    let req = SearchRequest {
        text: &case.request,
        recent_turns: &case.turns,
        limit: FIT_CANDIDATES,
        filter: Filter {
            profile: profile.map(str::to_owned),
            model_invocable_only: true,
        },
    };
    let mut cands = index.candidates(&req, FIT_CANDIDATES, &TextModel::FITTED, None)?;
    cands.retain(|m| m.text_features.mass > 0.0);
    cands.sort_by(|a, b| {
        b.text_score
            .total_cmp(&a.text_score)
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(cands
        .into_iter()
        .take(FIT_CANDIDATES)
        .map(|m| Example {
            features: m.text_features,
            right: case.expect.contains(&m.name),
        })
        .collect())
}

/// Fit the text model to `examples` by logistic regression: Newton's method from all-zero
/// weights, with a [`FIT_RIDGE`] penalty on the weights (not the intercept), at most
/// [`FIT_MAX_STEPS`] steps. Deterministic. With no examples, the shipped weights.
pub fn fit_text_model(examples: &[Example]) -> TextModel {
    const N: usize = 5;
    if examples.is_empty() {
        return TextModel::FITTED;
    }
    let rows: Vec<([f64; N], f64)> = examples
        .iter()
        .map(|e| {
            let f = &e.features;
            (
                [
                    1.0,
                    f64::from(f.coverage),
                    f64::from(f.mass),
                    f64::from(f.name_mass),
                    f64::from(f.relative),
                ],
                if e.right { 1.0 } else { 0.0 },
            )
        })
        .collect();
    let mut w = [0.0f64; N];
    for _ in 0..FIT_MAX_STEPS {
        let mut grad = [0.0f64; N];
        let mut hess = [[0.0f64; N]; N];
        for (x, y) in &rows {
            let z: f64 = w.iter().zip(x).map(|(a, b)| a * b).sum();
            let p = 1.0 / (1.0 + (-z).exp());
            for i in 0..N {
                grad[i] += (p - y) * x[i];
                for j in 0..N {
                    hess[i][j] += p * (1.0 - p) * x[i] * x[j];
                }
            }
        }
        for i in 1..N {
            grad[i] += FIT_RIDGE * w[i];
            hess[i][i] += FIT_RIDGE;
        }
        let Some(step) = solve(hess, grad) else {
            break;
        };
        for (wi, s) in w.iter_mut().zip(&step) {
            *wi -= s;
        }
        if step.iter().all(|s| s.abs() < 1e-9) {
            break;
        }
    }
    TextModel {
        bias: w[0] as f32,
        coverage: w[1] as f32,
        mass: w[2] as f32,
        name: w[3] as f32,
        relative: w[4] as f32,
    }
}

/// `a x = b` by Gaussian elimination with partial pivoting; `None` when `a` is singular.
fn solve<const N: usize>(mut a: [[f64; N]; N], mut b: [f64; N]) -> Option<[f64; N]> {
    for col in 0..N {
        let pivot = (col..N).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..N {
            let factor = a[row][col] / a[col][col];
            let pivot_row = a[col];
            for (x, p) in a[row][col..].iter_mut().zip(&pivot_row[col..]) {
                *x -= factor * p;
            }
            b[row] -= factor * b[col];
        }
    }
    let mut x = [0.0f64; N];
    for row in (0..N).rev() {
        let rest: f64 = (row + 1..N).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - rest) / a[row][row];
    }
    Some(x)
}

/// Accuracy of selection on requests the text model was not fitted on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CrossValidation {
    /// Number of folds.
    pub folds: usize,
    /// Every request scored by the model fitted on the other folds.
    pub held_out: Report,
    /// The calibration table of the held-out top candidates.
    pub held_out_calibration: Vec<CalibrationBin>,
    /// The weights fitted on each fold's complement, in fold order.
    pub fold_models: Vec<TextModel>,
    /// The weights fitted in code on every request.
    pub refit: TextModel,
    /// Every request scored by `refit` (in-sample: the fair comparison for `held_out`,
    /// since both come from the same fitting procedure).
    pub refit_in_sample: Report,
}

/// K-fold cross-validation of the text model: request `n` (counting from 0 in set order)
/// is in fold `n % folds`; for each fold the model is fitted ([`fit_text_model`]) on the
/// [`examples`] of the other folds and the fold's requests are evaluated with it as in
/// [`evaluate_index`]. `folds` is at least 2 and at most the number of requests.
pub fn cross_validate(
    index: &SkillIndex,
    cases: &[Case],
    opts: &SelectOptions,
    folds: usize,
) -> Result<CrossValidation, Error> {
    let folds = folds.clamp(2, cases.len().max(2));
    let mut per_case = Vec::with_capacity(cases.len());
    for case in cases {
        per_case.push(examples(index, case, opts.profile.as_deref())?);
    }
    let fold_of = |i: usize| i % folds;
    let mut held_out = Report::default();
    let mut bins = empty_bins();
    let mut fold_models = Vec::with_capacity(folds);
    for fold in 0..folds {
        let train: Vec<Example> = per_case
            .iter()
            .enumerate()
            .filter(|(i, _)| fold_of(*i) != fold)
            .flat_map(|(_, e)| e.iter().copied())
            .collect();
        let model = fit_text_model(&train);
        let test: Vec<Case> = cases
            .iter()
            .enumerate()
            .filter(|(i, _)| fold_of(*i) == fold)
            .map(|(_, c)| c.clone())
            .collect();
        let (report, fold_bins) = evaluate_with(index, &test, opts, &model)?;
        held_out.merge(report);
        for (b, f) in bins.iter_mut().zip(fold_bins) {
            b.count += f.count;
            b.correct += f.correct;
        }
        fold_models.push(model);
    }
    let all: Vec<Example> = per_case.into_iter().flatten().collect();
    let refit = fit_text_model(&all);
    let (refit_in_sample, _) = evaluate_with(index, cases, opts, &refit)?;
    Ok(CrossValidation {
        folds,
        held_out,
        held_out_calibration: bins,
        fold_models,
        refit,
        refit_in_sample,
    })
}

fn note_unknown(report: &mut Report, snapshot: Option<&Snapshot>, case: &Case) {
    if let Some(s) = snapshot {
        for e in &case.expect {
            if s.get(e).is_none() && !report.unknown_labels.contains(e) {
                report.unknown_labels.push(e.clone());
            }
        }
    }
}

/// The keyword fast path of agent-skills-integration 6.2: a skill matches when one of its
/// keywords is a substring of the lowercased request; matches come in name order.
#[derive(Debug, Clone)]
pub struct FastPath {
    skills: Vec<(String, Vec<String>)>,
}

impl FastPath {
    /// Keywords are each skill's trigger keywords. With `name_fallback`, a skill that
    /// declares none uses its name with separators as spaces (`pdf-forms` -> `pdf forms`),
    /// so the baseline is not empty on packs without triggers.
    pub fn new(snapshot: &Snapshot, name_fallback: bool) -> Self {
        let skills = snapshot
            .skills()
            .filter(|s| s.model_invocable())
            .map(|s| {
                let mut kws: Vec<String> = s
                    .manifest
                    .triggers
                    .keywords
                    .iter()
                    .map(|k| k.to_lowercase())
                    .filter(|k| !k.trim().is_empty())
                    .collect();
                if kws.is_empty() && name_fallback {
                    kws.push(s.name.replace(['-', '_', '.', ':'], " ").to_lowercase());
                }
                (s.name.clone(), kws)
            })
            .filter(|(_, k)| !k.is_empty())
            .collect();
        FastPath { skills }
    }

    /// Skills whose keywords occur in `message`, in name order.
    pub fn select(&self, message: &str) -> Vec<String> {
        let lower = crate::text::clip(message).to_lowercase();
        self.skills
            .iter()
            .filter(|(_, kws)| kws.iter().any(|k| lower.contains(k.as_str())))
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// The fast path over every case (its first three matches count as "selected").
    pub fn evaluate(&self, snapshot: &Snapshot, cases: &[Case]) -> Report {
        let mut report = Report::default();
        for case in cases {
            note_unknown(&mut report, Some(snapshot), case);
            let got = self.select(&case.request);
            report.add(case, &got, &got);
        }
        report
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines_and_reports_bad_ones_by_number() {
        let cases = parse_cases(
            "# comment\n\n{\"request\":\"a\",\"expect\":[\"x\"]}\n{\"request\":\"b\"}\n",
        )
        .unwrap();
        assert_eq!(cases.len(), 2);
        assert!(cases[1].expect.is_empty());
        let err = parse_cases("{\"request\":\"a\"}\nnot json\n").unwrap_err();
        assert!(
            err.to_string().starts_with("line 2 of the request set"),
            "{err}"
        );
        assert!(parse_cases("{\"request\":\"  \"}").is_err());
    }

    #[test]
    fn report_counts_top1_top3_and_no_skill() {
        let mut r = Report::default();
        let case = |e: &[&str]| Case {
            request: "q".into(),
            expect: e.iter().map(|s| s.to_string()).collect(),
            turns: vec![],
        };
        r.add(&case(&["a"]), &["a".into()], &["a".into()]);
        r.add(
            &case(&["a"]),
            &["b".into(), "a".into()],
            &["b".into(), "a".into()],
        );
        r.add(&case(&["a"]), &[], &["a".into()]);
        r.add(&case(&[]), &[], &["b".into()]);
        r.add(&case(&[]), &["b".into()], &["b".into()]);
        assert_eq!((r.top1, r.top3, r.with_skill), (1, 2, 3));
        assert_eq!((r.ranked_top1, r.ranked_top3), (2, 3));
        assert_eq!((r.said_none, r.said_none_correctly), (2, 1));
        assert!((r.no_skill_precision() - 0.5).abs() < 1e-9);
        assert!((r.no_skill_recall() - 0.5).abs() < 1e-9);
        assert_eq!(r.misses.len(), 3);
    }

    /// The labelled request set kept with the crate (`bench select` measures it over the
    /// corpus; this only checks its shape, so it needs no corpus).
    const REQUESTS: &str = include_str!("../tests/data/requests.jsonl");

    #[test]
    fn the_labelled_request_set_parses_and_covers_every_kind_of_request() {
        let cases = parse_cases(REQUESTS).unwrap();
        assert!(cases.len() >= 100, "{} requests", cases.len());
        let none = cases.iter().filter(|c| c.expect.is_empty()).count();
        assert!(none >= 20, "{none} requests that need no skill");
        let named = cases
            .iter()
            .filter(|c| {
                let tokens = crate::text::name_tokens(&c.request);
                c.expect.iter().any(|e| tokens.iter().any(|(t, _)| t == e))
            })
            .count();
        assert!(named >= 5, "{named} requests naming a skill");
        assert!(cases.iter().any(|c| !c.turns.is_empty()), "follow-ups");
        let mut seen = std::collections::HashSet::new();
        for c in &cases {
            assert!(seen.insert(c.request.as_str()), "duplicate: {}", c.request);
            assert!(
                c.expect.iter().all(|e| !e.trim().is_empty()),
                "{}",
                c.request
            );
        }
    }

    /// A deterministic pseudo-random number in [0, 1).
    fn lcg(state: &mut u64) -> f32 {
        *state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (*state >> 40) as f32 / (1u64 << 24) as f32
    }

    #[test]
    fn fitting_recovers_the_weights_that_made_the_labels() {
        let truth = TextModel {
            bias: -3.0,
            coverage: 1.0,
            mass: 0.8,
            name: 0.5,
            relative: 1.5,
        };
        let mut state = 7;
        let examples: Vec<Example> = (0..20_000)
            .map(|_| {
                let features = TextFeatures {
                    coverage: lcg(&mut state),
                    mass: 4.0 * lcg(&mut state),
                    name_mass: 2.0 * lcg(&mut state),
                    relative: lcg(&mut state),
                };
                let right = lcg(&mut state) < truth.probability(&features);
                Example { features, right }
            })
            .collect();
        let fit = fit_text_model(&examples);
        for (got, want) in [
            (fit.bias, truth.bias),
            (fit.coverage, truth.coverage),
            (fit.mass, truth.mass),
            (fit.name, truth.name),
            (fit.relative, truth.relative),
        ] {
            assert!((got - want).abs() < 0.35, "{fit:?} vs {truth:?}");
        }
        assert_eq!(fit, fit_text_model(&examples), "deterministic");
        assert_eq!(fit_text_model(&[]), TextModel::FITTED);
        // All examples of one class: finite weights, not a crash.
        let one_class: Vec<Example> = examples
            .iter()
            .map(|e| Example { right: false, ..*e })
            .collect();
        let f = fit_text_model(&one_class);
        assert!(f.bias.is_finite() && f.mass.is_finite(), "{f:?}");
    }

    #[test]
    fn solve_finds_the_solution_and_refuses_singular_systems() {
        let x = solve([[2.0, 1.0], [1.0, 3.0]], [3.0, 5.0]).unwrap();
        assert!(
            (x[0] - 0.8).abs() < 1e-12 && (x[1] - 1.4).abs() < 1e-12,
            "{x:?}"
        );
        assert!(solve([[1.0, 2.0], [2.0, 4.0]], [1.0, 2.0]).is_none());
    }

    #[test]
    fn cross_validation_scores_every_request_once_on_a_model_fitted_without_it() {
        let dir = tempfile::tempdir().unwrap();
        for (name, description) in [
            (
                "pdf-forms",
                "Fill in PDF forms and extract the values of their fields.",
            ),
            (
                "git-commit",
                "Write conventional commit messages from staged changes.",
            ),
            (
                "spreadsheet",
                "Build and clean up Excel spreadsheets, formulas and pivot tables.",
            ),
            ("weather", "Forecast the weather for a city."),
        ] {
            let d = dir.path().join(name);
            std::fs::create_dir(&d).unwrap();
            std::fs::write(
                d.join("SKILL.md"),
                format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n"),
            )
            .unwrap();
        }
        let config =
            skill_registry::RegistryConfig::with_sources(vec![skill_registry::Source::new(
                dir.path(),
                "user",
            )]);
        let snapshot = std::sync::Arc::new(skill_registry::load_snapshot(&config, 1));
        let index = SkillIndex::build(snapshot).unwrap();
        let cases = parse_cases(
            r#"{"request": "fill in this pdf form", "expect": ["pdf-forms"]}
{"request": "write a commit message for my staged changes", "expect": ["git-commit"]}
{"request": "fix the pivot table formulas in my spreadsheet", "expect": ["spreadsheet"]}
{"request": "will it rain in Oslo tomorrow? weather forecast please", "expect": ["weather"]}
{"request": "extract the field values from the pdf", "expect": ["pdf-forms"]}
{"request": "tell me a joke", "expect": []}"#,
        )
        .unwrap();
        let ex = examples(&index, &cases[0], None).unwrap();
        assert!(!ex.is_empty() && ex.len() <= FIT_CANDIDATES);
        assert_eq!(ex.iter().filter(|e| e.right).count(), 1, "{ex:?}");

        let cv = cross_validate(&index, &cases, &SelectOptions::default(), 3).unwrap();
        assert_eq!(cv.folds, 3);
        assert_eq!(cv.fold_models.len(), 3);
        let h = &cv.held_out;
        assert_eq!((h.with_skill, h.without_skill), (5, 1));
        assert_eq!(
            cv.held_out_calibration
                .iter()
                .map(|b| b.count)
                .sum::<usize>(),
            5,
            "one top candidate per request that has any"
        );
        assert_eq!(cv.refit_in_sample.with_skill, 5);
        // Clamped to the number of requests.
        assert_eq!(
            cross_validate(&index, &cases, &SelectOptions::default(), 100)
                .unwrap()
                .folds,
            6
        );
    }
}
