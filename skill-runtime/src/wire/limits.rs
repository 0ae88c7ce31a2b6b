//! The limits every door keeps on one request by default: how large its body may be, how
//! long a client may take to send it, and how long an answer may take. HTTP's
//! `HttpConfig` starts from them, and MCP over HTTP reads bodies and times tool calls by
//! the same numbers, so the two doors refuse the same requests.

use std::time::Duration;

/// Default request timeout.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Default time added to the runtime's script timeout to give the time limit of the
/// operations that execute skills ([`exec_time_limit`]).
pub const DEFAULT_EXEC_TIMEOUT_MARGIN: Duration = Duration::from_secs(10);
/// Default limit on request bodies.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
/// Default time a client has to send a request body once its headers are in. The body is
/// read before the request takes a place under the concurrency limit, so a slow body
/// holds only its own connection; past this it is answered `408`.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The time limit of an operation that executes skills: the script timeout plus `margin`,
/// and never less than `request_timeout`. A script past its own timeout is killed and
/// reported in its outcome before this fires.
pub fn exec_time_limit(
    script_timeout: Duration,
    margin: Duration,
    request_timeout: Duration,
) -> Duration {
    script_timeout.saturating_add(margin).max(request_timeout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exec_limit_is_the_script_timeout_plus_the_margin_never_below_the_request_limit() {
        let s = Duration::from_secs;
        assert_eq!(exec_time_limit(s(60), s(10), s(30)), s(70));
        assert_eq!(exec_time_limit(s(5), s(10), s(30)), s(30));
        assert_eq!(exec_time_limit(Duration::MAX, s(10), s(30)), Duration::MAX);
    }
}
