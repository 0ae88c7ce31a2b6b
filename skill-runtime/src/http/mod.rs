//! The HTTP API: JSON over HTTP/1.1 on hyper, with tower middleware.
//!
//! Every request gets a request id (the client's `x-request-id` when it is short and
//! printable, else a counter), echoed in the response and carried by a tracing span. API
//! requests then pass, outermost first: load shedding (over [`HttpConfig::concurrency`]
//! requests in flight, the answer is `503 overloaded` at once instead of a queue), the
//! concurrency limit, and a time limit (`504 timeout`): [`HttpConfig::request_timeout`],
//! except for endpoints that execute skills (`/v1/execute`, `/v1/invoke`), which get
//! [`App::exec_timeout`] so a script's own timeout is reported (as the outcome's `limit`)
//! before the request's. An event stream's body is not timed; at most
//! [`HttpConfig::max_event_streams`] are open at once (`503 overloaded` beyond), and all of
//! them end when the server shuts down. Bodies are read up to [`HttpConfig::max_body_bytes`]
//! (`413`). Headers must arrive within [`HttpConfig::header_read_timeout`] (slow clients
//! are dropped), and at most [`HttpConfig::max_connections`] connections are served at once
//! (more wait in the kernel's accept queue). Errors are `{"error": {"code", "message"}}`
//! with a fitting status. When a token is configured, action endpoints (every `POST` but
//! `/v1/select`) need `Authorization: Bearer <token>` (the scheme in any case, RFC 7235);
//! the token is read from that header only, and compared in time independent of its
//! content.

mod app;
mod config;
mod handlers;
mod openapi;
mod request;
mod response;
mod routes;
mod server;

pub use app::{App, MountAuth, MountedService, Mounts};
pub use config::{
    DEFAULT_CONCURRENCY, DEFAULT_EXEC_TIMEOUT_MARGIN, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_EVENT_STREAMS, DEFAULT_REQUEST_TIMEOUT,
    HEADER_READ_TIMEOUT, HttpConfig, SHUTDOWN_GRACE,
};
pub use openapi::openapi;
pub use response::Body;
pub use server::{bind, serve};
