//! Change sets: what a reload changed, published to subscribers.
//!
//! A change set names the skills added, changed and removed, the domain indexes touched, both
//! generations, and the new snapshot. A reload that changes nothing publishes nothing.
//!
//! Subscribers are called on the reloading thread while that reload still holds the registry's
//! reload lock. So they see generations in order, even when the watcher and an explicit reload
//! overlap. A subscriber must therefore not reload the same registry from its callback.

use std::cmp;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use crate::skill::Skill;
use crate::snapshot::Snapshot;

/// What one reload changed, with the snapshot it produced.
///
/// Names cover every winning entry whatever its status, so a skill that turns invalid is
/// `changed` (its status is in the snapshot), not `removed`. Domain indexes are listed
/// separately because they share no namespace with skills.
#[derive(Debug, Clone)]
pub struct ChangeSet {
    /// The generation before the reload.
    pub previous_generation: u64,
    /// The new generation (the snapshot's).
    pub generation: u64,
    /// Skill names that did not exist before, sorted.
    pub added: Vec<String>,
    /// Skill names whose entry differs (content, status, diagnostics, layer), sorted.
    pub changed: Vec<String>,
    /// Skill names that no longer exist, sorted.
    pub removed: Vec<String>,
    /// Domain indexes added, changed or removed, sorted.
    pub domains: Vec<String>,
    /// The snapshot after the reload.
    pub snapshot: Arc<Snapshot>,
}

impl ChangeSet {
    /// Whether the reload changed no skill and no domain index.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.changed.is_empty()
            && self.removed.is_empty()
            && self.domains.is_empty()
    }

    /// Compare two snapshots.
    pub fn between(old: &Snapshot, new: Arc<Snapshot>) -> ChangeSet {
        // A skill whose files changed (a resource edited) is changed too.
        let files_differ =
            |before: &Skill, after: &Skill| match (old.manifest_of(before), new.manifest_of(after))
            {
                (Some(a), Some(b)) => !std::ptr::eq(a, b) && a != b,
                (a, b) => a.is_some() != b.is_some(),
            };
        let (added, changed, removed) = diff(old.entry_map(), new.entry_map(), files_differ);
        let (da, dc, dr) = diff(old.domain_map(), new.domain_map(), |_, _| false);
        let mut domains: Vec<String> = da.into_iter().chain(dc).chain(dr).collect();
        domains.sort();
        ChangeSet {
            previous_generation: old.generation(),
            generation: new.generation(),
            added,
            changed,
            removed,
            domains,
            snapshot: new,
        }
    }
}

type Names = Vec<String>;

/// Names added, changed (a different entry, or `also` says so) and removed from `old` to
/// `new`, each sorted: one walk over both maps side by side (both are sorted by name), so
/// a reload that changed one skill of thousands looks nothing up.
fn diff(
    old: &BTreeMap<String, Arc<Skill>>,
    new: &BTreeMap<String, Arc<Skill>>,
    also: impl Fn(&Skill, &Skill) -> bool,
) -> (Names, Names, Names) {
    let mut added = Vec::new();
    let mut changed = Vec::new();
    let mut removed = Vec::new();
    let mut before = old.iter().peekable();
    let mut after = new.iter().peekable();
    loop {
        let order = match (before.peek(), after.peek()) {
            (None, None) => break,
            (Some(_), None) => cmp::Ordering::Less,
            (None, Some(_)) => cmp::Ordering::Greater,
            (Some((a, _)), Some((b, _))) => a.cmp(b),
        };
        match order {
            cmp::Ordering::Less => {
                if let Some((name, _)) = before.next() {
                    removed.push(name.clone());
                }
            }
            cmp::Ordering::Greater => {
                if let Some((name, _)) = after.next() {
                    added.push(name.clone());
                }
            }
            cmp::Ordering::Equal => {
                if let (Some((_, a)), Some((name, b))) = (before.next(), after.next()) {
                    if (!Arc::ptr_eq(a, b) && **a != **b) || also(a, b) {
                        changed.push(name.clone());
                    }
                }
            }
        }
    }
    (added, changed, removed)
}

type Callback = Arc<dyn Fn(&ChangeSet) + Send + Sync>;

/// The subscriber list a registry notifies after each reload.
#[derive(Default)]
pub(crate) struct Subscribers {
    next_id: AtomicU64,
    list: Arc<Mutex<Vec<(u64, Callback)>>>,
}

impl fmt::Debug for Subscribers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.list.lock().map(|l| l.len()).unwrap_or(0);
        f.debug_struct("Subscribers").field("count", &n).finish()
    }
}

impl Subscribers {
    pub(crate) fn add(&self, f: Callback) -> Subscription {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut list) = self.list.lock() {
            list.push((id, f));
        }
        Subscription {
            id,
            list: Arc::downgrade(&self.list),
        }
    }

    /// Call every subscriber, outside the lock so a callback may subscribe or unsubscribe.
    pub(crate) fn publish(&self, change: &ChangeSet) {
        let callbacks: Vec<Callback> = match self.list.lock() {
            Ok(list) => list.iter().map(|(_, f)| f.clone()).collect(),
            Err(_) => return,
        };
        for f in callbacks {
            f(change);
        }
    }
}

/// Keeps a subscription alive; dropping it unsubscribes.
#[must_use = "dropping a Subscription unsubscribes at once"]
pub struct Subscription {
    id: u64,
    list: Weak<Mutex<Vec<(u64, Callback)>>>,
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.id)
            .finish()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(list) = self.list.upgrade() {
            if let Ok(mut list) = list.lock() {
                list.retain(|(id, _)| *id != self.id);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    use crate::test_util::skill;

    /// The comparison by lookups that the side-by-side walk replaced.
    fn by_lookups(
        old: &BTreeMap<String, Arc<Skill>>,
        new: &BTreeMap<String, Arc<Skill>>,
        also: impl Fn(&Skill, &Skill) -> bool,
    ) -> (Names, Names, Names) {
        let added = new
            .keys()
            .filter(|n| !old.contains_key(*n))
            .cloned()
            .collect();
        let removed = old
            .keys()
            .filter(|n| !new.contains_key(*n))
            .cloned()
            .collect();
        let changed = new
            .iter()
            .filter(|(n, s)| old.get(*n).is_some_and(|b| **b != ***s || also(b, s)))
            .map(|(n, _)| n.clone())
            .collect();
        (added, changed, removed)
    }

    proptest! {
        /// Two maps over a few names, each entry kept (the same `Arc`), rewritten with the
        /// same or another description, or absent; `also` flags some names.
        #[test]
        fn the_walk_finds_what_lookups_find(
            entries in proptest::collection::vec((0u8..4, 0u8..4, proptest::bool::ANY), 0..12)
        ) {
            let mut old = BTreeMap::new();
            let mut new = BTreeMap::new();
            for (i, (before, after, _)) in entries.iter().enumerate() {
                let name = format!("s{i:02}");
                let first = skill(&name, "one");
                if *before > 0 {
                    old.insert(name.clone(), first.clone());
                }
                match after {
                    0 => {}
                    1 => { new.insert(name.clone(), first); }
                    2 => { new.insert(name.clone(), skill(&name, "one")); }
                    _ => { new.insert(name.clone(), skill(&name, "two")); }
                }
            }
            let flagged: Vec<String> = entries
                .iter()
                .enumerate()
                .filter(|(_, e)| e.2)
                .map(|(i, _)| format!("s{i:02}"))
                .collect();
            let also = |_: &Skill, b: &Skill| flagged.contains(&b.name);
            prop_assert_eq!(diff(&old, &new, also), by_lookups(&old, &new, also));
        }
    }
}
