//! Building a [`Runtime`]: handlers and tools as tower services, configuration and routing
//! settings.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use skill_registry::Registry;
use skill_router::RouterConfig;
use tokio::sync::{broadcast, watch};
use tower::ServiceExt;
use tower::util::BoxCloneSyncService;

use super::{
    BoxError, Call, HandlerService, Inner, Output, Runtime, RuntimeConfig, SCHEDULED_RUNS_CAPACITY,
    tasks,
};

/// Builds a [`Runtime`].
pub struct RuntimeBuilder {
    registry: Arc<Registry>,
    handlers: BTreeMap<String, HandlerService>,
    tools: BTreeMap<String, HandlerService>,
    config: RuntimeConfig,
    router: RouterConfig,
}

impl std::fmt::Debug for RuntimeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeBuilder")
            .field("handlers", &self.handlers.keys().collect::<Vec<_>>())
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

fn boxed<S, E>(service: S) -> HandlerService
where
    S: tower::Service<Call, Response = Output, Error = E> + Clone + Send + Sync + 'static,
    S::Future: Send + 'static,
    E: Into<BoxError> + 'static,
{
    BoxCloneSyncService::new(service.map_err(Into::into))
}

impl RuntimeBuilder {
    /// A builder over a registry, with no handlers or tools and default settings.
    pub(super) fn new(registry: Arc<Registry>) -> Self {
        RuntimeBuilder {
            registry,
            handlers: BTreeMap::new(),
            tools: BTreeMap::new(),
            config: RuntimeConfig::default(),
            router: RouterConfig::default(),
        }
    }

    /// Register a handler under a skill name (or a name an actions `handler:` field
    /// gives). A later registration under the same name replaces the earlier one.
    pub fn handler<S, E>(mut self, name: impl Into<String>, service: S) -> Self
    where
        S: tower::Service<Call, Response = Output, Error = E> + Clone + Send + Sync + 'static,
        S::Future: Send + 'static,
        E: Into<BoxError> + 'static,
    {
        self.handlers.insert(name.into(), boxed(service));
        self
    }

    /// Register an async function as a handler.
    pub fn handler_fn<F, Fut>(self, name: impl Into<String>, f: F) -> Self
    where
        F: Fn(Call) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<Output, BoxError>> + Send + 'static,
    {
        self.handler(name, tower::service_fn(f))
    }

    /// Register a tool for lily `tool_dispatch` under its tool name.
    pub fn tool<S, E>(mut self, name: impl Into<String>, service: S) -> Self
    where
        S: tower::Service<Call, Response = Output, Error = E> + Clone + Send + Sync + 'static,
        S::Future: Send + 'static,
        E: Into<BoxError> + 'static,
    {
        self.tools.insert(name.into(), boxed(service));
        self
    }

    /// Register an async function as a tool.
    pub fn tool_fn<F, Fut>(self, name: impl Into<String>, f: F) -> Self
    where
        F: Fn(Call) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<Output, BoxError>> + Send + 'static,
    {
        self.tool(name, tower::service_fn(f))
    }

    /// The registry the runtime will execute from.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// Use this configuration (default [`RuntimeConfig::default`]).
    pub fn config(mut self, config: RuntimeConfig) -> Self {
        self.config = config;
        self
    }

    /// The configuration the runtime will have.
    pub fn runtime_config(&self) -> &RuntimeConfig {
        &self.config
    }

    /// Route model output and user lines with these settings (default
    /// [`RouterConfig::default`]); a context's profile still overrides the profile.
    pub fn router(mut self, router: RouterConfig) -> Self {
        self.router = router;
        self
    }

    /// The runtime.
    pub fn build(self) -> Runtime {
        let (shutdown, _) = watch::channel(false);
        let (scripts, _) = watch::channel(0usize);
        let (scheduled, _) = broadcast::channel(SCHEDULED_RUNS_CAPACITY);
        let c = &self.config;
        let tasks = tasks::Tasks::new(c.fork_concurrency, c.max_pending_tasks, c.task_history);
        Runtime {
            inner: Arc::new(Inner {
                registry: self.registry,
                handlers: self.handlers,
                tools: self.tools,
                config: self.config,
                router: self.router,
                tasks,
                shutdown,
                scripts,
                scheduled,
            }),
        }
    }
}
