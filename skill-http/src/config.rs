//! How the HTTP server behaves ([`HttpConfig`]) and its default limits.

use std::time::Duration;

/// The limits HTTP shares with the other doors (see [`skill_runtime::wire::limits`]).
pub use skill_runtime::wire::limits::{
    DEFAULT_BODY_READ_TIMEOUT, DEFAULT_EXEC_TIMEOUT_MARGIN, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_REQUEST_TIMEOUT,
};

/// Default limit on API requests in flight.
pub const DEFAULT_CONCURRENCY: usize = 512;
/// Default limit on open connections.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;
/// Default limit on event streams open at once (each holds a connection for as long as
/// the client listens).
pub const DEFAULT_MAX_EVENT_STREAMS: usize = 64;
/// Default time a client has to send its request headers.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Default time a write to a client may stay pending (the client reads nothing) before
/// the connection is closed, with the answer it held.
pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// Default budget of answer bytes held for clients over all connections (answers not yet
/// handed to the connection); an answer that does not fit is `503 overloaded`.
pub const DEFAULT_MAX_ANSWER_BYTES_HELD: usize = 64 * 1024 * 1024;
/// How long shutdown waits for in-flight requests.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// How the server behaves.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Bearer token required on action endpoints (`None`: none required).
    pub token: Option<String>,
    /// Time limit of a request ([`DEFAULT_REQUEST_TIMEOUT`]); the endpoints that execute
    /// skills get at least [`App::exec_timeout`](super::App::exec_timeout). An event stream's body is not timed.
    pub request_timeout: Duration,
    /// Added to the runtime's script timeout for [`App::exec_timeout`](super::App::exec_timeout)
    /// ([`DEFAULT_EXEC_TIMEOUT_MARGIN`]).
    pub exec_timeout_margin: Duration,
    /// API requests in flight before new ones are shed with `503`
    /// ([`DEFAULT_CONCURRENCY`], at least 1).
    pub concurrency: usize,
    /// Largest request body ([`DEFAULT_MAX_BODY_BYTES`]).
    pub max_body_bytes: usize,
    /// Open connections served at once ([`DEFAULT_MAX_CONNECTIONS`], at least 1).
    pub max_connections: usize,
    /// Event streams open at once ([`DEFAULT_MAX_EVENT_STREAMS`]); more are refused with
    /// `503 overloaded`. 0 turns the event stream off.
    pub max_event_streams: usize,
    /// Time a client has to send its request headers ([`HEADER_READ_TIMEOUT`]).
    pub header_read_timeout: Duration,
    /// Time a client has to send a request body once its headers are in
    /// ([`DEFAULT_BODY_READ_TIMEOUT`]); past it the answer is `408 body_timeout`.
    pub body_read_timeout: Duration,
    /// Time a write to a client may stay pending before the connection is closed
    /// ([`DEFAULT_WRITE_TIMEOUT`]).
    pub write_timeout: Duration,
    /// Answer bytes held for clients over all connections
    /// ([`DEFAULT_MAX_ANSWER_BYTES_HELD`]); past it, `503 overloaded`.
    pub max_answer_bytes_held: usize,
    /// Host names (`name` or `name:port`) a request's `Host` may give besides IP addresses
    /// and `localhost` (DNS-rebinding protection); `"*"` allows every name (for a server
    /// behind a proxy that checks them). Default: none.
    pub allowed_hosts: Vec<String>,
    /// Catalog budgets by profile, used when a request gives none.
    pub profile_budgets: std::collections::BTreeMap<String, skill_runtime::registry::Budget>,
    /// Write server paths in answers as they are (absolute), instead of relative to the
    /// source they are in ([`Paths`](skill_runtime::wire::Paths)). Default: false.
    pub absolute_paths: bool,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            token: None,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            exec_timeout_margin: DEFAULT_EXEC_TIMEOUT_MARGIN,
            concurrency: DEFAULT_CONCURRENCY,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_event_streams: DEFAULT_MAX_EVENT_STREAMS,
            header_read_timeout: HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            write_timeout: DEFAULT_WRITE_TIMEOUT,
            max_answer_bytes_held: DEFAULT_MAX_ANSWER_BYTES_HELD,
            allowed_hosts: Vec::new(),
            profile_budgets: std::collections::BTreeMap::new(),
            absolute_paths: false,
        }
    }
}
