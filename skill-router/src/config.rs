//! The router's settings: [`RouterConfig`](crate::RouterConfig) and schema pre-validation ([`Prevalidate`]).
//! Kept apart from the [`Router`](crate::Router) so a host can hold and pass them around
//! without the routing code.

use std::collections::BTreeSet;

use skill_registry::DEFAULT_BUILTIN_COMMANDS;

/// Which skills get their flags checked against their `## Flags` schema before routing
/// (markdown-first Approach B; the seed recommends Approach A, so it is off by default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Prevalidate {
    /// No pre-validation: handlers validate (Approach A).
    #[default]
    Off,
    /// Every skill with a `## Flags` schema.
    All,
    /// Skills loaded from these registry layers (a per-source opt-in: a host names the
    /// layers, e.g. `builtin`, whose `## Flags` sections it trusts).
    Layers(BTreeSet<String>),
}

impl Prevalidate {
    /// Whether it applies to a skill of `layer`.
    pub(crate) fn applies(&self, layer: &str) -> bool {
        match self {
            Prevalidate::Off => false,
            Prevalidate::All => true,
            Prevalidate::Layers(layers) => layers.contains(layer),
        }
    }
}

/// How the router behaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouterConfig {
    /// The profile whose view of the skills is used (agent-skills-integration affinity).
    pub profile: Option<String>,
    /// Whether errors list the closest existing names (default true). A host that follows
    /// lily 5.3 ("no did-you-mean") turns this off. Suggestions are never acted on either
    /// way.
    pub suggestions: bool,
    /// Built-in slash commands (default [`DEFAULT_BUILTIN_COMMANDS`], the same constant the
    /// registry's `Environment::builtin_commands` starts from). They win over every skill.
    /// `/skills` and `/skill` are answered by the router itself; the others come back as
    /// [`Route::Builtin`](crate::Route::Builtin) for the host.
    ///
    /// A built-in added here (say `quit`) is not known to the registry, which excludes a
    /// skill whose lily `command` collides with a built-in only for the registry's own list.
    /// The router still lets the built-in win: `/quit` is [`Route::Builtin`](crate::Route::Builtin), the skill's
    /// `command` is never routed, and [`Router::diagnostics`](crate::Router::diagnostics) reports the collision. To have
    /// the skill excluded as lily 3.3 says, list the same extra built-ins in the registry's
    /// `RegistryConfig::environment.builtin_commands`.
    pub builtin_commands: BTreeSet<String>,
    /// Schema pre-validation (default off).
    pub prevalidate: Prevalidate,
    /// Lily's single-skill rule (5.1) for [`Router::route_output`](crate::Router::route_output): one model output may
    /// use one skill (several commands of that skill, and help, are fine). Default off.
    pub single_skill: bool,
}

impl Default for RouterConfig {
    fn default() -> Self {
        RouterConfig {
            profile: None,
            suggestions: true,
            builtin_commands: DEFAULT_BUILTIN_COMMANDS
                .iter()
                .map(|c| (*c).to_owned())
                .collect(),
            prevalidate: Prevalidate::Off,
            single_skill: false,
        }
    }
}
