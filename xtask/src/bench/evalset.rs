//! The selection evaluation set (`xtask/data/select-requests.jsonl`) and its scores.
//!
//! One JSON object a line: `{"id", "split": "tune"|"heldout", "kind":
//! "single"|"multi"|"none", "request", "expect": [[best, alternates...], ...]}`, one group
//! per intent (`[]` when no skill fits). Blank lines and `#` lines are skipped. The
//! tuning half is the only one any fitting may read ([`tune_only`] enforces it).

use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::process::repo_root;

/// Which half of the set a request belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Split {
    /// May be used to fit parameters.
    Tune,
    /// Never used to fit anything; scored only.
    Heldout,
}

/// What kind of request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// One intent.
    Single,
    /// Several intents, one expect group each.
    Multi,
    /// No skill fits.
    None,
}

/// One labelled request.
#[derive(Debug, Clone, Deserialize)]
pub struct Case {
    /// Stable id.
    pub id: String,
    /// Its half.
    pub split: Split,
    /// Its kind.
    pub kind: Kind,
    /// The request.
    pub request: String,
    /// Acceptable skills, one group per intent, best first.
    pub expect: Vec<Vec<String>>,
}

impl Case {
    /// Whether `name` answers one of the request's intents.
    pub fn accepts(&self, name: &str) -> bool {
        self.expect.iter().any(|g| g.iter().any(|s| s == name))
    }

    /// Whether every intent has an answer among `names`.
    pub fn covered(&self, names: &[String]) -> bool {
        !self.expect.is_empty()
            && self
                .expect
                .iter()
                .all(|g| g.iter().any(|s| names.contains(s)))
    }
}

/// The default path of the set.
pub fn default_path() -> Result<PathBuf, String> {
    Ok(repo_root()?
        .join("xtask")
        .join("data")
        .join("select-requests.jsonl"))
}

/// Read the set.
pub fn load(path: &Path) -> Result<Vec<Case>, String> {
    let text =
        fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let case: Case =
            serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
        if (case.kind == Kind::None) != case.expect.is_empty() {
            return Err(format!(
                "{}:{}: kind none needs an empty expect, and only it",
                path.display(),
                i + 1
            ));
        }
        out.push(case);
    }
    Ok(out)
}

/// The tuning half, checked: anything that fits parameters takes its cases from here, and
/// this is the only place a `Vec<&Case>` for fitting is made.
pub fn tune_only(cases: &[Case]) -> Vec<&Case> {
    let tune: Vec<&Case> = cases.iter().filter(|c| c.split == Split::Tune).collect();
    assert!(
        tune.iter().all(|c| c.split == Split::Tune),
        "fitting must never read the held-out half"
    );
    tune
}

/// The cases of one half.
pub fn half(cases: &[Case], split: Split) -> Vec<&Case> {
    cases.iter().filter(|c| c.split == split).collect()
}

/// What a method answered for one request.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    /// The ranking, best first (at least ten when there are that many candidates).
    pub ranked: Vec<String>,
    /// The selection (after the threshold); `None` when the method has no gate.
    pub selected: Option<Vec<String>>,
}

/// Accuracy counts of one method over some cases.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Scores {
    /// Requests with at least one intent.
    pub with_skill: usize,
    /// Ranked: the first is right.
    pub top1: usize,
    /// Ranked: a right one among the first 3.
    pub top3: usize,
    /// Ranked: a right one among the first 10.
    pub top10: usize,
    /// Multi-intent requests.
    pub multi: usize,
    /// Ranked: every intent answered among the first 3.
    pub multi_covered: usize,
    /// Requests no skill fits.
    pub none: usize,
    /// Of those, refused (nothing selected); only for methods with a gate.
    pub refused: Option<usize>,
    /// Selected: the first selected is right.
    pub sel_top1: Option<usize>,
    /// Selected: a right one among those selected.
    pub sel_top3: Option<usize>,
    /// Selected: every intent among those selected.
    pub sel_multi: Option<usize>,
    /// Skills selected in all (to see how many a selection costs).
    pub selected_total: usize,
    /// Skills selected for requests with a skill.
    pub selected_for_skill: usize,
    /// Of those, the right ones (acceptable for some intent of the request): with
    /// `selected_for_skill`, the share of pre-loaded skills that were worth their budget.
    pub selected_right: usize,
}

fn add(o: &mut Option<usize>, yes: bool) {
    *o = Some(o.unwrap_or(0) + usize::from(yes));
}

/// Score `answer` (one per case, in order) over `cases`.
pub fn score(cases: &[&Case], answers: &[Answer]) -> Scores {
    let mut s = Scores::default();
    for (c, a) in cases.iter().zip(answers) {
        let r = &a.ranked;
        let first = |n: usize| r.iter().take(n).any(|x| c.accepts(x));
        if c.kind == Kind::None {
            s.none += 1;
            if let Some(sel) = &a.selected {
                add(&mut s.refused, sel.is_empty());
                s.selected_total += sel.len();
            }
            continue;
        }
        s.with_skill += 1;
        s.top1 += usize::from(first(1));
        s.top3 += usize::from(first(3));
        s.top10 += usize::from(first(10));
        let top3: Vec<String> = r.iter().take(3).cloned().collect();
        if c.kind == Kind::Multi {
            s.multi += 1;
            s.multi_covered += usize::from(c.covered(&top3));
        }
        if let Some(sel) = &a.selected {
            s.selected_total += sel.len();
            s.selected_for_skill += sel.len();
            s.selected_right += sel.iter().filter(|x| c.accepts(x)).count();
            add(&mut s.sel_top1, sel.first().is_some_and(|x| c.accepts(x)));
            add(&mut s.sel_top3, sel.iter().any(|x| c.accepts(x)));
            if c.kind == Kind::Multi {
                add(&mut s.sel_multi, c.covered(sel));
            }
        }
    }
    s
}

fn pct(n: usize, d: usize) -> String {
    if d == 0 {
        "-".to_owned()
    } else {
        format!("{:5.1}%", 100.0 * n as f64 / d as f64)
    }
}

fn opt_pct(n: Option<usize>, d: usize) -> String {
    n.map_or_else(|| "    -".to_owned(), |n| pct(n, d))
}

impl Scores {
    /// `other` added into these counts (figures a method has no gate for stay `None`).
    pub fn merge(&mut self, other: &Scores) {
        self.with_skill += other.with_skill;
        self.top1 += other.top1;
        self.top3 += other.top3;
        self.top10 += other.top10;
        self.multi += other.multi;
        self.multi_covered += other.multi_covered;
        self.none += other.none;
        self.selected_total += other.selected_total;
        self.selected_for_skill += other.selected_for_skill;
        self.selected_right += other.selected_right;
        let add = |x: &mut Option<usize>, y: Option<usize>| {
            if let Some(y) = y {
                *x = Some(x.unwrap_or(0) + y);
            }
        };
        add(&mut self.refused, other.refused);
        add(&mut self.sel_top1, other.sel_top1);
        add(&mut self.sel_top3, other.sel_top3);
        add(&mut self.sel_multi, other.sel_multi);
    }

    /// Share helper: `n / with_skill`.
    pub fn rate(&self, n: usize) -> f64 {
        if self.with_skill == 0 {
            0.0
        } else {
            n as f64 / self.with_skill as f64
        }
    }

    /// One table line: ranked, then selected figures.
    pub fn line(&self, label: &str) -> String {
        format!(
            "{label:<44} top-1 {} top-3 {} top-10 {} multi-covered {} ({}) no-skill refused {} ({}) | selected: top-1 {} top-3 {} multi {} ({} skills selected; right {} of those for requests with a skill)",
            pct(self.top1, self.with_skill),
            pct(self.top3, self.with_skill),
            pct(self.top10, self.with_skill),
            pct(self.multi_covered, self.multi),
            self.multi,
            opt_pct(self.refused, self.none),
            self.none,
            opt_pct(self.sel_top1, self.with_skill),
            opt_pct(self.sel_top3, self.with_skill),
            opt_pct(self.sel_multi, self.multi),
            self.selected_total,
            pct(self.selected_right, self.selected_for_skill),
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn case(kind: Kind, expect: &[&[&str]]) -> Case {
        Case {
            id: "x".into(),
            split: Split::Tune,
            kind,
            request: "r".into(),
            expect: expect
                .iter()
                .map(|g| g.iter().map(|s| s.to_string()).collect())
                .collect(),
        }
    }

    #[test]
    fn scores_count_ranked_selected_multi_and_none() {
        let single = case(Kind::Single, &[&["a", "a2"]]);
        let multi = case(Kind::Multi, &[&["a"], &["b"]]);
        let none = case(Kind::None, &[]);
        let answers = vec![
            Answer {
                ranked: vec!["x".into(), "a2".into()],
                selected: Some(vec!["x".into()]),
            },
            Answer {
                ranked: vec!["a".into(), "z".into(), "b".into()],
                selected: Some(vec!["a".into(), "b".into()]),
            },
            Answer {
                ranked: vec!["q".into()],
                selected: Some(vec![]),
            },
        ];
        let s = score(&[&single, &multi, &none], &answers);
        assert_eq!((s.with_skill, s.top1, s.top3), (2, 1, 2));
        assert_eq!((s.multi, s.multi_covered), (1, 1));
        assert_eq!((s.none, s.refused), (1, Some(1)));
        assert_eq!(
            (s.sel_top1, s.sel_top3, s.sel_multi),
            (Some(1), Some(1), Some(1))
        );
        // Three skills selected for requests with one, two of them right.
        assert_eq!((s.selected_for_skill, s.selected_right), (3, 2));
        let mut twice = s;
        twice.merge(&s);
        assert_eq!((twice.selected_for_skill, twice.selected_right), (6, 4));
    }

    #[test]
    fn tune_only_never_returns_held_out_cases() {
        let mut h = case(Kind::Single, &[&["a"]]);
        h.split = Split::Heldout;
        let t = case(Kind::Single, &[&["a"]]);
        let all = vec![h, t];
        assert_eq!(tune_only(&all).len(), 1);
    }
}
