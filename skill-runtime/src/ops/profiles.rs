//! The profiles operation ([`Engine::profiles`]): every processing profile the engine
//! knows, from its configuration (a profile's tool list) and from the skills' affinity
//! lists (`proactive_for_profile_ids`, `exclude_from_prompt_profile_ids`), with how many
//! loaded skills each list names.

use std::collections::BTreeMap;
use std::sync::Arc;

use skill_registry::{Affinity, Snapshot};

use crate::engine::Engine;

/// One profile ([`Engine::profiles`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileInfo {
    /// Its name.
    pub name: String,
    /// Whether the configuration names it (with a tool list).
    pub configured: bool,
    /// Loaded skills proactive for it.
    pub proactive: usize,
    /// Loaded skills excluded under it.
    pub excluded: usize,
}

/// Every profile the engine knows, by name ([`Engine::profiles`]).
#[derive(Debug, Clone)]
pub struct Profiles {
    /// The snapshot generation.
    pub generation: u64,
    /// The profiles, by name.
    pub profiles: Vec<ProfileInfo>,
}

impl Engine {
    /// Every profile the engine knows: configured ones and those the loaded skills' affinity
    /// lists name, by name, with how many loaded skills are proactive for or excluded under
    /// each.
    pub fn profiles(&self) -> Profiles {
        let snapshot = self.registry().snapshot();
        let configured = &self.runtime().config().profiles;
        let mut out: BTreeMap<String, ProfileInfo> = configured
            .keys()
            .map(|name| {
                let info = ProfileInfo {
                    name: name.clone(),
                    configured: true,
                    proactive: 0,
                    excluded: 0,
                };
                (name.clone(), info)
            })
            .collect();
        for skill in snapshot.skills() {
            let m = &skill.manifest;
            // Each profile once per skill, however often its lists name it.
            let named: std::collections::BTreeSet<&String> = m
                .proactive_for_profile_ids
                .iter()
                .chain(&m.exclude_from_prompt_profile_ids)
                .collect();
            for name in named {
                let info = out.entry(name.clone()).or_insert_with(|| ProfileInfo {
                    name: name.clone(),
                    configured: false,
                    proactive: 0,
                    excluded: 0,
                });
                match skill.affinity(Some(name)) {
                    Affinity::Excluded => info.excluded += 1,
                    Affinity::Proactive => info.proactive += 1,
                    Affinity::Included | Affinity::NotListed => {}
                }
            }
        }
        Profiles {
            generation: snapshot.generation(),
            profiles: out.into_values().collect(),
        }
    }

    /// The names of [`Engine::profiles`] for one snapshot, computed once per generation.
    pub(crate) fn profile_names(&self, snapshot: &Snapshot) -> Arc<[String]> {
        let generation = snapshot.generation();
        let cache = self.profile_names_cache();
        if let Ok(guard) = cache.lock() {
            if let Some((g, names)) = guard.as_ref() {
                if *g == generation {
                    return Arc::clone(names);
                }
            }
        }
        let names: Arc<[String]> = self.walk_profile_names(snapshot).into();
        if let Ok(mut guard) = cache.lock() {
            // A newer generation already cached stays.
            if guard.as_ref().is_none_or(|(g, _)| *g < generation) {
                *guard = Some((generation, Arc::clone(&names)));
            }
        }
        names
    }

    fn walk_profile_names(&self, snapshot: &Snapshot) -> Vec<String> {
        let mut names: Vec<String> = self.runtime().config().profiles.keys().cloned().collect();
        for skill in snapshot.skills() {
            let m = &skill.manifest;
            names.extend(
                m.proactive_for_profile_ids
                    .iter()
                    .chain(&m.exclude_from_prompt_profile_ids)
                    .cloned(),
            );
        }
        names.sort();
        names.dedup();
        names
    }
}
