//! The application a server serves: the engine, the HTTP settings, and the services
//! mounted beside `/v1` ([`Mounts`]) with the same token rules.
//!
//! Mounted services (MCP at `/mcp`, the console at `/ui`) share `/v1`'s listener, its token
//! rule and its `Host` check. `/mcp` also checks a browser's `Origin` against the same
//! `allowed_hosts` (skill-mcp's `origin` module).

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use http::{Request, Response};
use hyper::body::Incoming;
use tokio::sync::{Semaphore, watch};
use tower::util::BoxCloneSyncService;

use super::config::HttpConfig;
use super::request::authorize;
use super::response::{Body, unauthorized};
use skill_runtime::Engine;

/// A service mounted beside `/v1` on the same listener (see [`Mounts::mount`]): it gets every
/// request whose path is its prefix or starts with the prefix and `/`, path unchanged.
pub type MountedService = BoxCloneSyncService<Request<Incoming>, Response<Body>, Infallible>;

/// Whether a request to a mounted service needs the bearer token (when one is configured).
pub type MountAuth = fn(&http::request::Parts) -> bool;

/// A service under a path prefix.
#[derive(Clone)]
pub(crate) struct Mount {
    prefix: String,
    pub(crate) service: MountedService,
    pub(crate) needs_token: MountAuth,
}

impl std::fmt::Debug for Mount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mount")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl Mount {
    /// The route template of a path it serves: its prefix, or `{prefix}/{path}` below it.
    pub(crate) fn route(&self, path: &str) -> std::borrow::Cow<'_, str> {
        if path.len() > self.prefix.len() + 1 {
            format!("{}/{{path}}", self.prefix).into()
        } else {
            self.prefix.as_str().into()
        }
    }

    pub(crate) fn serves(&self, path: &str) -> bool {
        path.strip_prefix(self.prefix.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    }
}

/// Everything a request handler reaches.
#[derive(Debug)]
pub struct App {
    pub(crate) engine: Arc<Engine>,
    pub(crate) config: HttpConfig,
    pub(crate) mounts: Vec<Mount>,
    pub(crate) next_id: AtomicU64,
    /// One permit per open event stream.
    pub(crate) event_streams: Arc<Semaphore>,
    /// Becomes `true` when [`serve`](super::serve) starts shutting down: event streams end.
    pub(crate) closing: watch::Sender<bool>,
    /// Skill details rendered at the current generation.
    pub(crate) details: super::rendered::Rendered,
}

impl App {
    /// The sources answers' paths are written relative to: the current snapshot's, or
    /// `None` when the operator asked for absolute paths ([`HttpConfig::absolute_paths`]).
    pub(crate) fn path_roots(&self) -> Option<Arc<skill_runtime::registry::Snapshot>> {
        (!self.config.absolute_paths).then(|| self.engine.snapshot())
    }

    /// An application over an engine.
    pub fn new(engine: Arc<Engine>, config: HttpConfig) -> Arc<App> {
        App::with_mounts(engine, config, Mounts::default())
    }

    /// An application over an engine with extra services mounted under path prefixes
    /// (built with [`Mounts::mount`] and [`Mounts::mount_with`]).
    pub fn with_mounts(engine: Arc<Engine>, config: HttpConfig, mounts: Mounts) -> Arc<App> {
        let event_streams = Arc::new(Semaphore::new(config.max_event_streams));
        Arc::new(App {
            engine,
            config,
            mounts: mounts.0,
            next_id: AtomicU64::new(1),
            event_streams,
            closing: watch::channel(false).0,
            details: super::rendered::Rendered::default(),
        })
    }

    /// Start a list of mounted services (see [`App::with_mounts`]).
    pub fn mounts() -> Mounts {
        Mounts(Vec::new())
    }

    /// The bearer-token check of this server: true when no token is configured or the
    /// headers carry it (`Authorization: Bearer <token>`, compared in constant time).
    pub fn authorized(&self, headers: &http::HeaderMap) -> bool {
        authorize(self.config.token.as_deref(), headers).is_ok()
    }

    /// The `401` answer `/v1` gives a request without the token (a JSON error with code
    /// `unauthorized` and a `WWW-Authenticate: Bearer` header).
    pub fn unauthorized(&self) -> Response<Body> {
        unauthorized().into_response()
    }

    /// The engine.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The time limit of the endpoints that execute skills: the runtime's script timeout
    /// plus [`HttpConfig::exec_timeout_margin`], and never less than
    /// [`HttpConfig::request_timeout`]. A script past its own timeout is killed and
    /// reported in the outcome (`"limit": "timeout"`) before this fires; a handler that
    /// never answers gets `504 timeout`. A model output whose commands together run
    /// longer than this also gets `504` (send them one by one to avoid that).
    pub fn exec_timeout(&self) -> Duration {
        skill_runtime::wire::limits::exec_time_limit(
            self.engine.script_timeout(),
            self.config.exec_timeout_margin,
            self.config.request_timeout,
        )
    }
}

/// Services mounted beside `/v1` (see [`App::with_mounts`]).
#[derive(Debug, Clone, Default)]
pub struct Mounts(Vec<Mount>);

impl Mounts {
    /// Mount `service` under `prefix` (such as `/mcp`); every request to it needs the
    /// bearer token when the server has one, as `/v1`'s action endpoints do. The request
    /// reaches the service with its path unchanged, after the request id is assigned and
    /// the token checked; load shedding and `/v1`'s time limits do not apply (a mounted
    /// service may stream).
    pub fn mount(self, prefix: impl Into<String>, service: MountedService) -> Self {
        self.mount_with(prefix, service, |_| true)
    }

    /// [`Mounts::mount`], with `needs_token` deciding per request whether the token is
    /// required (say, only for requests that act).
    pub fn mount_with(
        mut self,
        prefix: impl Into<String>,
        service: MountedService,
        needs_token: MountAuth,
    ) -> Self {
        let prefix = prefix.into().trim_end_matches('/').to_owned();
        self.0.push(Mount {
            prefix,
            service,
            needs_token,
        });
        self
    }
}
