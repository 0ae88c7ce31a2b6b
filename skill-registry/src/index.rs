//! The snapshot's name index: the lookup every routed command makes, kept compact.
//!
//! With thousands of skills, a lookup's cost is mostly memory latency: a skill (about a
//! kilobyte, its strings elsewhere) is rarely in the processor's cache. So the index keeps
//! every name in one string and, in the hash table itself, copies of the few facts a lookup
//! reads (status, who may invoke it, its layer, whether it has a handler). A lookup then
//! reads one hash slot and the name's bytes, and no skill.

use std::collections::HashMap;
use std::collections::hash_map::{Entry, RandomState};
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::sync::Arc;

use crate::skill::{Skill, Status};

/// An entry looked up by name ([`Snapshot::resolve`], [`Disclosure::resolve`]): the skill,
/// and the parts of it that a router copies into every invocation, kept by the snapshot's
/// name index so that reading them does not touch the skill itself (with thousands of
/// skills, a skill is rarely in the processor's cache; the index mostly is).
///
/// [`Snapshot::resolve`]: crate::Snapshot::resolve
/// [`Disclosure::resolve`]: crate::Disclosure::resolve
#[derive(Debug, Clone, Copy)]
pub struct Resolved<'a> {
    /// The skill.
    pub skill: &'a Arc<Skill>,
    /// Its name (the same text as `skill.name`, and as the name looked up: lookups are
    /// exact).
    pub name: &'a str,
    /// Its layer (the same text as `skill.layer`), shared by every skill of the layer, so
    /// that an invocation can keep it without copying.
    pub layer: &'a Arc<str>,
    /// Its handler (the same as `skill.manifest.handler`).
    pub handler: Option<&'a str>,
}

/// What the index keeps of one entry.
#[derive(Debug, Clone)]
pub(crate) struct Indexed {
    /// The entry.
    pub(crate) skill: Arc<Skill>,
    /// Its name: a byte range of [`NameIndex::names`].
    name: (usize, usize),
    /// `skill.layer`, shared by every entry of the layer.
    layer: Arc<str>,
    /// `skill.status`.
    pub(crate) status: Status,
    /// `skill.model_invocable()`.
    pub(crate) model_invocable: bool,
    /// `skill.user_invocable()`.
    pub(crate) user_invocable: bool,
    /// Whether `skill.manifest.handler` is set (only then is the skill read for it).
    has_handler: bool,
}

/// A hasher for keys that are already hashes: it passes the `u64` through.
#[derive(Debug, Clone, Copy, Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u64` keys are written; anything else is folded in all the same.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Entries by name.
#[derive(Debug, Clone, Default)]
pub(crate) struct NameIndex<S = RandomState> {
    /// Hashes names (randomly keyed by default, as `HashMap` does).
    hasher: S,
    /// A name's hash -> its record (kept in the table itself: one memory access).
    slots: HashMap<u64, Indexed, BuildHasherDefault<Prehashed>>,
    /// Records whose name's 64-bit hash another name already has (with 64 random bits,
    /// practically never), with that hash.
    collided: Vec<(u64, Indexed)>,
    /// Every name, one after the other.
    names: String,
}

impl NameIndex {
    /// An index of `entries` (name, skill), whose names are unique (they are a map's keys).
    pub(crate) fn new<'s>(
        entries: impl ExactSizeIterator<Item = (&'s str, &'s Arc<Skill>)>,
    ) -> Self {
        NameIndex::with_hasher(entries, RandomState::new())
    }
}

impl<S: BuildHasher> NameIndex<S> {
    /// [`NameIndex::new`] with names hashed by `hasher`.
    pub(crate) fn with_hasher<'s>(
        entries: impl ExactSizeIterator<Item = (&'s str, &'s Arc<Skill>)>,
        hasher: S,
    ) -> Self {
        let mut index = NameIndex {
            hasher,
            slots: HashMap::with_capacity_and_hasher(entries.len(), Default::default()),
            collided: Vec::new(),
            names: String::new(),
        };
        let mut layers: HashMap<&str, Arc<str>> = HashMap::new();
        // Entries of one layer mostly come together: the last one's is tried first.
        let mut last: Option<(&str, Arc<str>)> = None;
        for (name, skill) in entries {
            let start = index.names.len();
            index.names.push_str(name);
            let layer = match &last {
                Some((held, layer)) if *held == skill.layer => Arc::clone(layer),
                _ => {
                    let layer = layers
                        .entry(skill.layer.as_str())
                        .or_insert_with(|| Arc::from(skill.layer.as_str()));
                    last = Some((skill.layer.as_str(), Arc::clone(layer)));
                    Arc::clone(layer)
                }
            };
            let record = Indexed {
                skill: Arc::clone(skill),
                name: (start, index.names.len()),
                layer,
                status: skill.status,
                model_invocable: skill.model_invocable(),
                user_invocable: skill.user_invocable(),
                has_handler: skill.manifest.handler.is_some(),
            };
            match index.slots.entry(index.hasher.hash_one(name)) {
                Entry::Vacant(slot) => {
                    slot.insert(record);
                }
                Entry::Occupied(slot) => index.collided.push((*slot.key(), record)),
            }
        }
        index
    }

    /// The record of `name`, with the name as the index holds it.
    pub(crate) fn get(&self, name: &str) -> Option<(&str, &Indexed)> {
        let hash = self.hasher.hash_one(name);
        let record = self.slots.get(&hash)?;
        let held = self.name(record);
        if held == name {
            return Some((held, record));
        }
        self.collided
            .iter()
            .filter(|(h, _)| *h == hash)
            .map(|(_, r)| (self.name(r), r))
            .find(|(held, _)| *held == name)
    }

    /// A record's name.
    fn name(&self, record: &Indexed) -> &str {
        let (start, end) = record.name;
        self.names.get(start..end).unwrap_or("")
    }
}

impl Indexed {
    /// The entry as [`Resolved`], under its name in the index.
    pub(crate) fn resolved<'a>(&'a self, name: &'a str) -> Resolved<'a> {
        Resolved {
            skill: &self.skill,
            name,
            layer: &self.layer,
            handler: if self.has_handler {
                self.skill.manifest.handler.as_deref()
            } else {
                None
            },
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use skill_format::{Dialect, FileKind, Manifest};

    fn skill(name: &str, layer: &str, handler: Option<&str>, status: Status) -> Arc<Skill> {
        Arc::new(Skill {
            name: name.to_owned(),
            description: String::new(),
            dialect: Dialect::AgentSkills,
            kind: FileKind::Skill,
            layer: layer.to_owned(),
            source: 0,
            path: format!("{name}.md").into(),
            dir: ".".into(),
            domain: None,
            manifest: Manifest {
                handler: handler.map(str::to_owned),
                disable_model_invocation: Some(name.ends_with("purge")),
                user_invocable: Some(!name.ends_with("hook")),
                ..Manifest::default()
            },
            body: String::new(),
            body_line: 1,
            status,
            diagnostics: Vec::new(),
            outline_cache: crate::SectionCache::default(),
        })
    }

    fn skills() -> Vec<Arc<Skill>> {
        vec![
            skill("a.send", "user", Some("mail.send"), Status::Loaded),
            skill("a.purge", "user", None, Status::Loaded),
            skill("b", "builtin", None, Status::Invalid),
            skill("c.hook", "project", Some("h"), Status::Ineligible),
            skill("日本", "user", None, Status::Loaded),
        ]
    }

    /// Every name is found with copies that match its skill; other names are not found.
    fn check<S: BuildHasher>(index: &NameIndex<S>, skills: &[Arc<Skill>]) {
        for s in skills {
            let (name, r) = index.get(&s.name).unwrap();
            assert_eq!(name, s.name);
            assert!(Arc::ptr_eq(&r.skill, s));
            assert_eq!(r.status, s.status);
            assert_eq!(r.model_invocable, s.model_invocable());
            assert_eq!(r.user_invocable, s.user_invocable());
            let resolved = r.resolved(name);
            assert_eq!(resolved.name, s.name);
            assert_eq!(&**resolved.layer, s.layer);
            assert_eq!(resolved.handler, s.manifest.handler.as_deref());
        }
        for unknown in ["", "a", "a.sen", "a.send ", "B", "日"] {
            assert!(index.get(unknown).is_none(), "{unknown:?}");
        }
    }

    #[test]
    fn finds_every_name_with_copies_of_its_facts() {
        let skills = skills();
        let index = NameIndex::new(skills.iter().map(|s| (s.name.as_str(), s)));
        check(&index, &skills);
        assert!(index.collided.is_empty());
        // One shared layer string per layer.
        let layer = |n: &str| Arc::clone(&index.get(n).unwrap().1.layer);
        assert!(Arc::ptr_eq(&layer("a.send"), &layer("日本")));
    }

    /// Hashes every name to the same value.
    #[derive(Default)]
    struct Constant;

    impl Hasher for Constant {
        fn finish(&self) -> u64 {
            7
        }
        fn write(&mut self, _: &[u8]) {}
    }

    #[test]
    fn names_whose_hashes_collide_are_all_found() {
        let skills = skills();
        let index = NameIndex::with_hasher(
            skills.iter().map(|s| (s.name.as_str(), s)),
            BuildHasherDefault::<Constant>::default(),
        );
        assert_eq!(index.slots.len(), 1);
        assert_eq!(index.collided.len(), skills.len() - 1);
        check(&index, &skills);
    }

    #[test]
    fn an_empty_index_finds_nothing() {
        let index = NameIndex::new(std::iter::empty());
        assert!(index.get("").is_none());
        assert!(NameIndex::<RandomState>::default().get("x").is_none());
    }
}
