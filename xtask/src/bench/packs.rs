//! Selection over one pack at a time: the evaluation set against a registry that holds only
//! one of the corpus's packs (its repositories), as a host with a single small or medium
//! pack runs it.
//!
//! Each request is relabelled for the pack: an intent keeps the acceptable skills the pack
//! holds, an intent the pack cannot answer is dropped, and a request left with no intent is
//! one the pack should refuse (a no-skill request for that pack). The whole corpus alone
//! cannot show how the gate behaves where a single common word is a "rare" term of a
//! dozen skills; this can. Scores are pooled over the packs, and over the small ones alone.

use std::collections::HashSet;
use std::sync::Arc;

use skill_registry::{RegistryConfig, load_snapshot};
use skill_search::SkillIndex;

use super::evalset::{Case, Kind};
use super::model::{Model, attach};

/// A pack of at most this many skills counts as small.
pub const SMALL_PACK: usize = 30;

/// One corpus pack, indexed alone.
pub struct Pack {
    /// Skills it loads.
    pub skills: usize,
    /// Names it loads.
    names: HashSet<String>,
    /// Its index.
    pub index: SkillIndex,
}

/// Every source of `config` loaded and indexed on its own.
pub fn load(config: &RegistryConfig, model: Option<&Model>) -> Result<Vec<Pack>, String> {
    config
        .sources
        .iter()
        .map(|source| {
            let one = RegistryConfig {
                sources: vec![source.clone()],
                ..config.clone()
            };
            let snapshot = Arc::new(load_snapshot(&one, 1));
            let names: HashSet<String> = snapshot.skills().map(|s| s.name.clone()).collect();
            let index = attach(
                SkillIndex::build(snapshot).map_err(|e| e.to_string())?,
                model,
            );
            Ok(Pack {
                skills: names.len(),
                names,
                index,
            })
        })
        .collect()
}

impl Pack {
    /// `cases` relabelled for this pack (same order, same ids).
    pub fn relabel(&self, cases: &[&Case]) -> Vec<Case> {
        cases.iter().map(|c| relabel(c, &self.names)).collect()
    }
}

/// `case` as a registry holding only `names` should answer it.
fn relabel(case: &Case, names: &HashSet<String>) -> Case {
    let expect: Vec<Vec<String>> = case
        .expect
        .iter()
        .map(|g| g.iter().filter(|n| names.contains(*n)).cloned().collect())
        .filter(|g: &Vec<String>| !g.is_empty())
        .collect();
    let kind = match expect.len() {
        0 => Kind::None,
        1 => Kind::Single,
        _ => Kind::Multi,
    };
    Case {
        id: case.id.clone(),
        split: case.split,
        kind,
        request: case.request.clone(),
        expect,
        styles: case.styles.clone(),
        near_miss: case.near_miss,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::evalset::Split;

    #[test]
    fn relabelling_keeps_what_the_pack_holds_and_refuses_the_rest() {
        let names: HashSet<String> = ["a", "b2"].iter().map(|s| s.to_string()).collect();
        let case = |kind: Kind, expect: &[&[&str]]| Case {
            id: "r1".into(),
            split: Split::Tune,
            kind,
            request: "q".into(),
            expect: expect
                .iter()
                .map(|g| g.iter().map(|s| s.to_string()).collect())
                .collect(),
            styles: Vec::new(),
            near_miss: false,
        };
        let r = relabel(&case(Kind::Single, &[&["x", "a"]]), &names);
        assert_eq!(
            (r.kind, r.expect),
            (Kind::Single, vec![vec!["a".to_owned()]])
        );
        let r = relabel(&case(Kind::Single, &[&["x", "y"]]), &names);
        assert_eq!((r.kind, r.expect.len()), (Kind::None, 0));
        // A multi-intent request the pack answers in part is a single one for it.
        let r = relabel(&case(Kind::Multi, &[&["a"], &["z"]]), &names);
        assert_eq!((r.kind, r.expect.len()), (Kind::Single, 1));
        let r = relabel(&case(Kind::Multi, &[&["a"], &["b1", "b2"]]), &names);
        assert_eq!(r.kind, Kind::Multi);
        assert_eq!(r.expect[1], ["b2"]);
        let r = relabel(&case(Kind::None, &[]), &names);
        assert_eq!(r.kind, Kind::None);
        assert_eq!((r.id.as_str(), r.split), ("r1", Split::Tune));
    }
}
