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
    // A namespaced name belongs to the sources of its namespace: their skills win over any
    // other source's (whose own name, holding the separator, is an error anyway), whatever
    // the layers. Then the highest precedence; within a source, the first path.
    let owns = |s: &Skill| {
        config
            .sources
            .get(s.source)
            .and_then(|src| src.namespace.as_ref())
            .is_some_and(|ns| ns.strip(name).is_some())
    };
    candidates.sort_by(|a, b| {
        owns(b)
            .cmp(&owns(a))
            .then_with(|| b.source.cmp(&a.source))
            .then_with(|| a.path.cmp(&b.path))
    });
    let mut iter = candidates.into_iter();
    let winner = iter.next()?;
    let winner_owns = owns(&winner);
    let mut losers = Vec::new();
    for loser in iter {
        let mut loser = (*loser).clone();
        if winner_owns && !owns(&loser) {
            loser.diagnostics.push(Diagnostic::warning(
                Code::Shadowed,
                &loser.path,
                format!(
                    "`{name}` is a name of the namespace of layer `{}` ({}); a skill of another source cannot take it: rename this one",
                    winner.layer,
                    winner.path.display()
                ),
            ));
        } else if loser.layer == winner.layer {
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
    Some((judge(name, is_domain, winner, config), losers))
}

/// The winner of a name as served: invalid when it has errors, else (a skill, not a domain
/// index) ineligible when eligibility fails.
fn judge(name: &str, is_domain: bool, winner: Arc<Skill>, config: &RegistryConfig) -> Arc<Skill> {
    if has_errors(&winner) {
        let mut w = (*winner).clone();
        w.status = Status::Invalid;
        return Arc::new(w);
    }
    if is_domain {
        return winner;
    }
    let failures = eligibility::check(name, &winner.manifest, &config.environment);
    if failures.is_empty() {
        return winner;
    }
    let mut w = (*winner).clone();
    w.status = Status::Ineligible;
    for f in failures {
        w.diagnostics
            .push(Diagnostic::warning(f.code, &w.path, f.message));
    }
    Arc::new(w)
}

/// What [`resolve`] groups candidates by: domain indexes after skills, each by name.
fn key(s: &Skill) -> (bool, &str) {
    (s.kind == FileKind::DomainIndex, s.name.as_str())
}

/// Precedence and eligibility over every parsed candidate. Unchanged winners keep their
/// `Arc`; only entries whose status or diagnostics change are copied.
pub(super) fn resolve(
    mut candidates: Vec<Arc<Skill>>,
    mut diagnostics: Vec<Diagnostic>,
    config: &RegistryConfig,
    generation: u64,
) -> Snapshot {
    // Grouped by kind and name in the maps' order (a stable sort: within a name, in the
    // order found), so that the maps are built from sorted runs.
    candidates.sort_by(|a, b| key(a).cmp(&key(b)));
    let mut skills = Vec::new();
    let mut domains = Vec::new();
    let mut shadowed = Vec::new();
    let mut rest = candidates.into_iter().peekable();
    while let Some(first) = rest.next() {
        let is_domain = first.kind == FileKind::DomainIndex;
        let name = first.name.clone();
        let same = |n: &Arc<Skill>| key(n) == (is_domain, name.as_str());
        // Most names have one candidate: it wins, with nothing to sort or shadow.
        let winner = if rest.peek().is_some_and(same) {
            let mut group = vec![first];
            while let Some(next) = rest.next_if(same) {
                group.push(next);
            }
            let Some((winner, losers)) = resolve_name(&name, is_domain, group, config) else {
                continue;
            };
            shadowed.extend(losers);
            winner
        } else {
            judge(&name, is_domain, first, config)
        };
        if is_domain {
            domains.push((name, winner));
        } else {
            skills.push((name, winner));
        }
    }
    // Sorted and unique: built in one pass.
    let skills: BTreeMap<String, Arc<Skill>> = skills.into_iter().collect();
    let domains: BTreeMap<String, Arc<Skill>> = domains.into_iter().collect();
    for s in skills
        .values()
        .chain(domains.values())
        .chain(shadowed.iter())
    {
        diagnostics.extend(s.diagnostics.iter().cloned());
    }
    crate::lookalike::refresh(&[&skills, &domains], &mut diagnostics);
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
