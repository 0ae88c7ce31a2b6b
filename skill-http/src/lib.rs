//! The HTTP API: JSON over HTTP/1.1 on hyper, with tower middleware.
//!
//! Every request gets a request id (the client's `x-request-id` when it is short and
//! printable, else a counter), echoed in the response and carried by a tracing span; each
//! request is logged at DEBUG, and a summary of the requests answered (counts, client and
//! server errors) at INFO once a minute. An API request is first routed and its token
//! checked, then its body is read: a declared `Content-Length` over
//! [`HttpConfig::max_body_bytes`] is refused at once (`413`), a body that does not arrive
//! within [`HttpConfig::body_read_timeout`] gets `408`. The body is read before the request
//! takes a place under the concurrency limit, so slow bodies hold only their own
//! connections. Then, outermost first: load shedding (over [`HttpConfig::concurrency`]
//! requests in flight, the answer is `503 overloaded` at once instead of a queue), the
//! concurrency limit, and a time limit (`504 timeout`): [`HttpConfig::request_timeout`],
//! except for endpoints that execute skills (`/v1/execute`, `/v1/invoke`), which get
//! [`App::exec_timeout`] so a script's own timeout is reported (as the outcome's `limit`)
//! before the request's. `/v1/health` and `/v1/ready` skip the limit: they answer while it
//! is saturated. An event stream's body is not timed; at most
//! [`HttpConfig::max_event_streams`] are open at once (`503 overloaded` beyond), and all of
//! them end when the server shuts down. Headers must arrive within
//! [`HttpConfig::header_read_timeout`] (slow clients are dropped), and at most
//! [`HttpConfig::max_connections`] connections are served at once: at the cap a new one
//! closes the one that has waited longest for a request head, and when every connection is
//! answering a request, new ones wait; there is no cap per client address, since behind a
//! proxy every client shares one. A client that does not read holds its answer for at most
//! [`HttpConfig::write_timeout`], and answers held for clients take from one budget,
//! [`HttpConfig::max_answer_bytes_held`] (see the `conns` module). Errors are `{"error": {"code", "message"}}` with a fitting status; a
//! server-side error's message names no server path (the log has the details). When a
//! token is configured, action endpoints (every `POST` but `/v1/select`) need
//! `Authorization: Bearer <token>` (the scheme in any case, RFC 7235); the token is read
//! from that header only, and compared in time independent of its content. Every request,
//! mounted services' included, must name the server in its `Host` as an IP address,
//! `localhost` or a name in [`HttpConfig::allowed_hosts`] (DNS-rebinding protection;
//! `403 forbidden_host` otherwise; an absolute-form target's authority likewise), and an
//! HTTP/1.1 request needs exactly one `Host` (`400 bad_host`), except `/v1/health` and
//! `/v1/ready`, which probes reach by any name.
//!
//! Every endpoint that answers `GET` answers `HEAD` as well (RFC 9110, section 9.3.2), with
//! the same checks: the status and headers the `GET` would get, the `Content-Length` of its
//! body when that is known, and no body; a `HEAD` of the event stream opens no stream. A
//! `405` lists the path's methods in its `Allow` header, `HEAD` wherever `GET` is.

#![warn(unreachable_pub)]

mod app;
mod config;
mod conns;
mod handlers;
mod host;
mod openapi;
mod rendered;
mod request;
mod response;
mod routes;
mod server;

pub use app::{App, MountAuth, MountedService, Mounts};
pub use config::{
    DEFAULT_BODY_READ_TIMEOUT, DEFAULT_CONCURRENCY, DEFAULT_EXEC_TIMEOUT_MARGIN,
    DEFAULT_MAX_ANSWER_BYTES_HELD, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_EVENT_STREAMS, DEFAULT_REQUEST_TIMEOUT, DEFAULT_WRITE_TIMEOUT, HEADER_READ_TIMEOUT,
    HttpConfig, SHUTDOWN_GRACE,
};
pub use response::Body;
pub use server::{bind, serve};

/// The README's example, compiled as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
