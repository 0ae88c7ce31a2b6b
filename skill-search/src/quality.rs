//! Selection quality over a labelled request set, and the seed's keyword fast path as a
//! baseline (agent-skills-integration 6.2).
//!
//! A request set is JSON Lines, one request a line:
//! `{"request": "...", "expect": ["skill-a", "skill-b"], "turns": ["..."]}`. `expect` lists
//! every skill that would be a right answer (corpora hold near-duplicates); an empty list
//! means no skill fits. `turns` (optional) are earlier turns, oldest first. Blank lines and
//! lines starting with `#` are skipped.

use serde::{Deserialize, Serialize};
use skill_registry::Snapshot;

use crate::Error;
use crate::index::SkillIndex;
use crate::select::SelectOptions;

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

/// Run [`SkillIndex::select`] over every case; also returns the calibration table of the
/// top-ranked candidate (selected or not) against its confidence.
pub fn evaluate_index(
    index: &SkillIndex,
    cases: &[Case],
    opts: &SelectOptions,
) -> Result<(Report, Vec<CalibrationBin>), Error> {
    let snapshot = index.snapshot();
    let mut report = Report::default();
    let mut bins: Vec<CalibrationBin> = CALIBRATION_EDGES
        .windows(2)
        .map(|w| CalibrationBin {
            low: w[0],
            high: w[1],
            count: 0,
            correct: 0,
        })
        .collect();
    for case in cases {
        note_unknown(&mut report, snapshot.as_deref(), case);
        let o = SelectOptions {
            recent_turns: case.turns.clone(),
            ..opts.clone()
        };
        let top = index.search(&crate::SearchRequest {
            text: &case.request,
            recent_turns: &case.turns,
            limit: 3,
            filter: crate::Filter {
                profile: opts.profile.clone(),
                model_invocable_only: true,
            },
        })?;
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
        let sel = index.select(&case.request, &o)?;
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
}
