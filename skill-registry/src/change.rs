//! Change sets: what a reload changed, published to subscribers.

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
        let (added, mut changed, removed) = diff(old.entry_map(), new.entry_map());
        // A skill whose files changed (a resource edited) is changed too.
        for (name, skill) in new.entry_map() {
            let files_differ = old
                .entry_map()
                .get(name)
                .is_some_and(|before| old.manifest_of(before) != new.manifest_of(skill));
            if files_differ {
                changed.push(name.clone());
            }
        }
        changed.sort();
        changed.dedup();
        let (da, dc, dr) = diff(old.domain_map(), new.domain_map());
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

fn diff(
    old: &BTreeMap<String, Arc<Skill>>,
    new: &BTreeMap<String, Arc<Skill>>,
) -> (Names, Names, Names) {
    let mut added = Vec::new();
    let mut changed = Vec::new();
    let mut removed = Vec::new();
    for (name, skill) in new {
        match old.get(name) {
            None => added.push(name.clone()),
            Some(before) if !Arc::ptr_eq(before, skill) && **before != **skill => {
                changed.push(name.clone());
            }
            Some(_) => {}
        }
    }
    for name in old.keys() {
        if !new.contains_key(name) {
            removed.push(name.clone());
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
