//! [`HttpService`]: rmcp's streamable HTTP service behind the server's `Origin` check (the
//! same check `/mcp` has, the `origin` module's), for a host that mounts
//! MCP itself.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};

use crate::RmcpService;
use crate::mount::{forbidden_origin_body, origin_accepted};

/// MCP over streamable HTTP as a tower service ([`http_service`](crate::http_service)): a
/// request whose `Origin` the allowlist does not accept gets `403 forbidden_origin`, any
/// other goes to rmcp.
#[derive(Clone)]
pub struct HttpService {
    /// rmcp's service.
    inner: RmcpService,
    /// The `Host` allowlist the `Origin` check reads (empty: loopback only).
    allowed_hosts: Arc<[String]>,
}

impl HttpService {
    /// `inner` behind the `Origin` check of `allowed_hosts`.
    pub(crate) fn new(inner: RmcpService, allowed_hosts: Vec<String>) -> Self {
        HttpService {
            inner,
            allowed_hosts: allowed_hosts.into(),
        }
    }
}

impl std::fmt::Debug for HttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpService")
            .field("allowed_hosts", &self.allowed_hosts)
            .finish_non_exhaustive()
    }
}

impl<B> tower::Service<Request<B>> for HttpService
where
    B: http_body::Body + Send + 'static,
    B::Data: Send + 'static,
    B::Error: std::fmt::Display,
{
    type Response = Response<BoxBody<Bytes, Infallible>>;
    type Error = Infallible;
    type Future =
        Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send + 'static>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        tower::Service::<Request<B>>::poll_ready(&mut self.inner, cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        if origin_accepted(req.headers(), req.uri(), &self.allowed_hosts) {
            return self.inner.call(req);
        }
        let mut resp = Response::new(Full::new(Bytes::from(forbidden_origin_body())).boxed());
        *resp.status_mut() = StatusCode::FORBIDDEN;
        resp.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        Box::pin(std::future::ready(Ok(resp)))
    }
}
