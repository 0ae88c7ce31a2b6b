//! Precedence and eligibility: which candidate of a name is served, which are shadowed,
//! and which winners are invalid or ineligible.

use std::collections::BTreeMap;
use std::sync::Arc;

use skill_format::{Code, Diagnostic, FileKind};

use super::has_errors;
use crate::RegistryConfig;
use crate::eligibility;
use crate::skill::{Skill, Status};
use crate::snapshot::{Snapshot, sort_diagnostics};

/// Precedence and eligibility for one name: the winner (marked invalid or ineligible when
/// it is) and the shadowed losers; `None` when there is no candidate.
pub(super) fn resolve_name(
    name: &str,
    is_domain: bool,
    mut candidates: Vec<Arc<Skill>>,
    config: &RegistryConfig,
) -> Option<(Arc<Skill>, Vec<Arc<Skill>>)> {
    // Highest precedence first; within a source, the lexicographically first path wins.
    candidates.sort_by(|a, b| b.source.cmp(&a.source).then_with(|| a.path.cmp(&b.path)));
    let mut iter = candidates.into_iter();
    let mut winner = iter.next()?;
    let mut losers = Vec::new();
    for loser in iter {
        let mut loser = (*loser).clone();
        if loser.layer == winner.layer {
            loser.diagnostics.push(Diagnostic::error(
                Code::DuplicateName,
                &loser.path,
                format!(
                    "`{name}` is also defined by {} in the same layer `{}`; that one wins (first path in order): rename one of them",
                    winner.path.display(),
                    winner.layer
                ),
            ));
        } else {
            loser.diagnostics.push(Diagnostic::warning(
                Code::Shadowed,
                &loser.path,
                format!(
                    "`{name}` is shadowed by {} from the higher layer `{}`",
                    winner.path.display(),
                    winner.layer
                ),
            ));
        }
        loser.status = Status::Shadowed;
        losers.push(Arc::new(loser));
    }
    if has_errors(&winner) {
        let mut w = (*winner).clone();
        w.status = Status::Invalid;
        winner = Arc::new(w);
    } else if !is_domain {
        let failures = eligibility::check(name, &winner.manifest, &config.environment);
        if !failures.is_empty() {
            let mut w = (*winner).clone();
            w.status = Status::Ineligible;
            for f in failures {
                w.diagnostics
                    .push(Diagnostic::warning(f.code, &w.path, f.message));
            }
            winner = Arc::new(w);
        }
    }
    Some((winner, losers))
}

/// Precedence and eligibility over every parsed candidate. Unchanged winners keep their
/// `Arc`; only entries whose status or diagnostics change are copied.
pub(super) fn resolve(
    candidates: Vec<Arc<Skill>>,
    mut diagnostics: Vec<Diagnostic>,
    config: &RegistryConfig,
    generation: u64,
) -> Snapshot {
    let mut by_name: BTreeMap<(bool, String), Vec<Arc<Skill>>> = BTreeMap::new();
    for skill in candidates {
        let is_domain = skill.kind == FileKind::DomainIndex;
        by_name
            .entry((is_domain, skill.name.clone()))
            .or_default()
            .push(skill);
    }
    let mut skills = BTreeMap::new();
    let mut domains = BTreeMap::new();
    let mut shadowed = Vec::new();
    for ((is_domain, name), candidates) in by_name {
        let Some((winner, losers)) = resolve_name(&name, is_domain, candidates, config) else {
            continue;
        };
        shadowed.extend(losers);
        if is_domain {
            domains.insert(name, winner);
        } else {
            skills.insert(name, winner);
        }
    }
    for s in skills
        .values()
        .chain(domains.values())
        .chain(shadowed.iter())
    {
        diagnostics.extend(s.diagnostics.iter().cloned());
    }
    sort_diagnostics(&mut diagnostics);
    shadowed.sort_by(|a, b| a.name.cmp(&b.name).then(a.path.cmp(&b.path)));
    Snapshot::new(
        generation,
        skills,
        domains,
        shadowed,
        diagnostics,
        config.sources.clone(),
    )
}
