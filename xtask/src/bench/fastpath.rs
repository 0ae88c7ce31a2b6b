//! The keyword fast path of agent-skills-integration 6.2, the latency baseline of
//! `bench search`: a skill matches when one of its keywords is a substring of the
//! lowercased request; matches come in name order.

use skill_registry::Snapshot;

/// The fast path over one snapshot.
#[derive(Debug, Clone)]
pub struct FastPath {
    skills: Vec<(String, Vec<String>)>,
}

impl FastPath {
    /// Keywords are each skill's trigger keywords. With `name_fallback`, a skill that
    /// declares none uses its name with separators as spaces (`pdf-forms` -> `pdf forms`),
    /// so the baseline is not empty on packs without triggers.
    pub fn new(snapshot: &Snapshot, name_fallback: bool) -> Self {
        let skills = snapshot
            .skills()
            .filter(|s| s.model_invocable())
            .map(|s| {
                let mut kws: Vec<String> = s
                    .manifest
                    .triggers
                    .keywords
                    .iter()
                    .map(|k| k.to_lowercase())
                    .filter(|k| !k.trim().is_empty())
                    .collect();
                if kws.is_empty() && name_fallback {
                    kws.push(s.name.replace(['-', '_', '.', ':'], " ").to_lowercase());
                }
                (s.name.clone(), kws)
            })
            .filter(|(_, k)| !k.is_empty())
            .collect();
        FastPath { skills }
    }

    /// Skills whose keywords occur in `message`, in name order.
    pub fn select(&self, message: &str) -> Vec<String> {
        let lower = message.to_lowercase();
        self.skills
            .iter()
            .filter(|(_, kws)| kws.iter().any(|k| lower.contains(k.as_str())))
            .map(|(n, _)| n.clone())
            .collect()
    }
}
