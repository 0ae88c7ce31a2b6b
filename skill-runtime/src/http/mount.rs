//! Another service mounted under a path prefix on the same listener as `/v1` (the MCP
//! server at `/mcp`): requests whose path is the prefix or below it go to it, after the
//! same request id, tracing and token rules as the API (with a token configured, every
//! request to a mounted service needs it, since it may execute skills).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use http::{Request, Response};
use hyper::body::Incoming;

use super::Body;

type Handler =
    dyn Fn(Request<Incoming>) -> Pin<Box<dyn Future<Output = Response<Body>> + Send>> + Send + Sync;

/// A service mounted under a path prefix.
#[derive(Clone)]
pub struct Mount {
    prefix: String,
    handler: Arc<Handler>,
}

impl std::fmt::Debug for Mount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mount")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl Mount {
    /// Mount `handler` at `prefix` (e.g. `/mcp`; a trailing `/` is ignored).
    pub fn new<F, Fut>(prefix: &str, handler: F) -> Mount
    where
        F: Fn(Request<Incoming>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Response<Body>> + Send + 'static,
    {
        Mount {
            prefix: prefix.trim_end_matches('/').to_owned(),
            handler: Arc::new(move |req| Box::pin(handler(req))),
        }
    }

    /// Its prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Whether a request path belongs to it.
    pub(crate) fn matches(&self, path: &str) -> bool {
        path.strip_prefix(self.prefix.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    }

    pub(crate) async fn call(&self, req: Request<Incoming>) -> Response<Body> {
        (self.handler)(req).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_matches_itself_and_below_only() {
        let m = Mount::new("/mcp/", |_req| async {
            Response::new(super::super::full(""))
        });
        assert_eq!(m.prefix(), "/mcp");
        assert!(m.matches("/mcp"));
        assert!(m.matches("/mcp/x"));
        assert!(!m.matches("/mcpx"));
        assert!(!m.matches("/v1/mcp"));
    }
}
