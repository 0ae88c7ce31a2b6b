//! The engine's trust and integrity operations (SPEC section 10c): the content scan's
//! findings, a lock of what is served, and a comparison of what is served with a lock.
//!
//! They read the current snapshot's per-file manifests (computed once per snapshot by the
//! registry), so the CLI's `audit`, `lock` and `verify`, the pack report and any other door
//! give the same answer for the same folders.

use skill_format::Diagnostic;
use skill_registry::{Lock, SkillDrift};

use crate::engine::Engine;

/// What [`Engine::lock`] gives.
#[derive(Debug, Clone)]
pub struct Locked {
    /// The lock of what is served now.
    pub lock: Lock,
    /// Entries whose files could not all be hashed (over a limit, or unreadable).
    pub incomplete: Vec<String>,
}

impl Engine {
    /// Every content-scan finding of the loaded entries (winners, domain indexes and
    /// shadowed entries, whatever their status), each with the name of the skill it belongs
    /// to, ordered by path, line and column, without repeats.
    pub fn findings(&self) -> Vec<(String, Diagnostic)> {
        let snapshot = self.registry().snapshot();
        let mut out: Vec<(String, Diagnostic)> = snapshot
            .entries()
            .chain(snapshot.domains())
            .chain(snapshot.shadowed())
            .filter_map(|s| snapshot.manifest_of(s).map(|m| (s, m)))
            .flat_map(|(s, m)| m.findings().iter().map(|d| (s.name.clone(), d.clone())))
            .collect();
        out.sort_by(|(_, a), (_, b)| {
            a.path
                .cmp(&b.path)
                .then(a.line.cmp(&b.line))
                .then(a.column.cmp(&b.column))
                .then(a.code.as_str().cmp(b.code.as_str()))
        });
        out.dedup_by(|a, b| a.1 == b.1);
        out
    }

    /// A lock of every skill served now (name, layer, folder digest and per-file manifest),
    /// with the names of the entries whose manifest is incomplete (a file over a limit or
    /// unreadable): `verify` will report those as changed.
    pub fn lock(&self) -> Locked {
        let snapshot = self.registry().snapshot();
        let incomplete = snapshot
            .entries()
            .chain(snapshot.domains())
            .filter(|s| snapshot.manifest_of(s).is_some_and(|m| !m.is_complete()))
            .map(|s| s.name.clone())
            .collect();
        Locked {
            lock: Lock::from_snapshot(&snapshot),
            incomplete,
        }
    }

    /// How the skills served now differ from `lock`: added, removed and changed files per
    /// skill (empty when they match).
    pub fn verify(&self, lock: &Lock) -> Vec<SkillDrift> {
        lock.verify(&self.registry().snapshot())
    }
}
