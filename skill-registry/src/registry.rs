//! The live [`Registry`]: the current snapshot behind an atomic pointer (readers never lock),
//! reloads (whole or by path, one at a time) and the subscribers told of each change.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;

use crate::change::Subscribers;
use crate::load::{Loader, Scope};
use crate::manifest::Recompute;
use crate::{ChangeSet, RegistryConfig, Snapshot, Subscription, pathcmp};

/// The live registry: a configuration, the current snapshot behind an atomic pointer, the
/// state that makes reloads incremental, and the subscribers told of every change.
#[derive(Debug)]
pub struct Registry {
    config: RegistryConfig,
    current: ArcSwap<Snapshot>,
    pub(crate) loader: Mutex<Loader>,
    subscribers: Subscribers,
}

impl Registry {
    /// Load every source and publish the first snapshot (generation 1).
    ///
    /// ```
    /// use skill_registry::{Budget, CatalogFormat, Disclosure, Registry, RegistryConfig, Source};
    ///
    /// let dir = tempfile::tempdir()?;
    /// std::fs::create_dir(dir.path().join("pdf-forms"))?;
    /// std::fs::write(
    ///     dir.path().join("pdf-forms/SKILL.md"),
    ///     "---\nname: pdf-forms\ndescription: Fill in PDF forms.\n---\nSteps.\n",
    /// )?;
    /// let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(
    ///     dir.path(),
    ///     "project",
    /// )]));
    /// let snapshot = registry.snapshot();
    /// assert_eq!(snapshot.generation(), 1);
    /// assert_eq!(snapshot.get("pdf-forms").map(|s| s.body.as_str()), Some("Steps.\n"));
    ///
    /// let catalog = Disclosure::new(&snapshot).catalog(CatalogFormat::Markdown, &Budget::default());
    /// assert_eq!(catalog.text, "Available skills:\n- pdf-forms: Fill in PDF forms.\n");
    /// assert!(catalog.report.is_complete());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[tracing::instrument(name = "skills.registry.load", skip_all, fields(skills.count))]
    pub fn load(config: RegistryConfig) -> Self {
        let mut loader = Loader::default();
        let snapshot = loader.load(&config, 1, Scope::All);
        let snapshot = loader.attach(snapshot, None, Recompute::All, &config);
        let snapshot = loader.keep_base(snapshot, &config);
        tracing::Span::current().record("skills.count", snapshot.skills().count());
        Registry {
            config,
            current: ArcSwap::new(snapshot),
            loader: Mutex::new(loader),
            subscribers: Subscribers::default(),
        }
    }

    /// The current snapshot. Cheap; never blocks on a reload.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }

    /// Walk every source and parse every file again. Files that loaded before and now have
    /// errors keep their last good version served. When anything changed, the result is
    /// published as the next generation and subscribers are told; otherwise the change set
    /// is empty and the generation stays.
    pub fn reload(&self) -> ChangeSet {
        self.reload_scoped(Scope::All)
    }

    /// Reload after the files or folders at `paths` changed (paths as the sources name
    /// them: a source `packs/x` gives `packs/x/a/SKILL.md`). Only those files are parsed
    /// again; a source is walked again only when a change could add or remove a skill. A
    /// path spelled unlike its source (relative where the source is absolute or the
    /// reverse, a leading `./`) is first named from that source, against the current
    /// directory.
    pub fn reload_paths<I, P>(&self, paths: I) -> ChangeSet
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        let cwd = std::env::current_dir().ok();
        let roots = self.config.sources.iter().map(|s| s.path.as_path());
        let paths: HashSet<PathBuf> = paths
            .into_iter()
            .map(|p| match &cwd {
                Some(cwd) => pathcmp::respell(roots.clone(), p.into(), cwd),
                None => p.into(),
            })
            .collect();
        self.reload_scoped(Scope::Paths(&paths))
    }

    #[tracing::instrument(name = "skills.registry.reload", skip_all)]
    fn reload_scoped(&self, scope: Scope<'_>) -> ChangeSet {
        // One reload at a time; readers never take this lock.
        let mut loader = match self.loader.lock() {
            Ok(l) => l,
            Err(poisoned) => poisoned.into_inner(),
        };
        let old = self.current.load_full();
        // Incremental work starts from the snapshot before the trust policy's pass.
        let base = loader.base.clone().unwrap_or_else(|| old.clone());
        let generation = old.generation() + 1;
        let fast = match scope {
            Scope::Paths(paths) => loader.load_edits(&self.config, &base, generation, paths),
            Scope::All => None,
        };
        let next = match fast {
            Some(snapshot) => snapshot,
            None => loader.load(&self.config, generation, scope),
        };
        let recompute = match scope {
            Scope::All => Recompute::All,
            Scope::Paths(paths) => Recompute::Paths(paths),
        };
        let next = loader.attach(next, Some(&base), recompute, &self.config);
        let next = loader.keep_base(next, &self.config);
        let change = ChangeSet::between(&old, next.clone());
        if change.is_empty()
            && old.same_files(&next)
            && old.diagnostics() == next.diagnostics()
            && old.shadowed().len() == next.shadowed().len()
        {
            return ChangeSet {
                generation: old.generation(),
                snapshot: old,
                ..change
            };
        }
        self.current.store(next);
        // Published before the reload lock is released, so change sets reach subscribers
        // in generation order, each one following the last (`previous_generation` is the
        // generation they saw before). Readers never take this lock, so they do not wait.
        self.subscribers.publish(&change);
        drop(loader);
        change
    }

    /// Call `f` with every change set published from now on, in generation order, on the
    /// thread that reloaded, while that reload still holds the registry's reload lock: keep
    /// `f` short (hand the change set to a channel or task), and do not reload this
    /// registry from inside `f` (it would wait on itself). Dropping the returned
    /// [`Subscription`] unsubscribes.
    pub fn subscribe<F>(&self, f: F) -> Subscription
    where
        F: Fn(&ChangeSet) + Send + Sync + 'static,
    {
        self.subscribers.add(Arc::new(f))
    }

    /// The configuration it loads from.
    pub fn config(&self) -> &RegistryConfig {
        &self.config
    }
}
