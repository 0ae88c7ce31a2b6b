//! How far the evaluation set's wording is from the skills' (issue 43 asks that at least a
//! third of the requests with a skill share no distinctive word with the right one). A stem of
//! a skill's name or description is *distinctive* when fewer than [`RARE_SHARE`] of the
//! corpus's skills have it in theirs; a request shares one with its best skill (the first name
//! of a group) when a stem of the request is among that skill's distinctive stems. A
//! multi-intent request counts when no group's best skill shares one.

use std::collections::{HashMap, HashSet};

use skill_registry::Snapshot;

use super::bm25::Stems;
use super::evalset::{Case, Kind};

/// Largest share of skills a stem may appear in (name or description) and be distinctive.
const RARE_SHARE: f64 = 0.01;

/// Requests with a skill, and of those the ones that share no distinctive stem with any
/// group's best skill.
pub fn without_shared_word(snapshot: &Snapshot, cases: &[Case]) -> (usize, usize) {
    let mut stems = Stems::new();
    let mut of_skill: HashMap<&str, HashSet<String>> = HashMap::new();
    let mut df: HashMap<String, usize> = HashMap::new();
    let mut skills = 0usize;
    for s in snapshot.skills() {
        skills += 1;
        let set: HashSet<String> = stems
            .of(&format!(
                "{} {}",
                s.name.replace(['-', '_'], " "),
                s.description
            ))
            .into_iter()
            .collect();
        for t in &set {
            *df.entry(t.clone()).or_default() += 1;
        }
        of_skill.insert(s.name.as_str(), set);
    }
    let rare = |t: &String| (df.get(t).copied().unwrap_or(0) as f64) < RARE_SHARE * skills as f64;
    let (mut with_skill, mut clean) = (0, 0);
    for c in cases.iter().filter(|c| c.kind != Kind::None) {
        with_skill += 1;
        let request: HashSet<String> = stems.of(&c.request).into_iter().collect();
        let shares = c.expect.iter().filter_map(|g| g.first()).any(|best| {
            of_skill
                .get(best.as_str())
                .is_some_and(|words| words.iter().any(|w| rare(w) && request.contains(w)))
        });
        clean += usize::from(!shares);
    }
    (with_skill, clean)
}
