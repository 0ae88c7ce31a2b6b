//! Reading requests: the endpoint for a path, the token check, query parameters and
//! JSON bodies, each failure a clear `4xx`.

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE};
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde::Deserialize;

use super::response::{ApiError, unauthorized};
use super::routes::{ENDPOINTS, Endpoint, MAX_COUNT, matches, percent_decode};

pub(crate) fn query_map<B>(req: &Request<B>) -> Result<HashMap<String, String>, ApiError> {
    let mut map = HashMap::new();
    for pair in req.uri().query().unwrap_or("").split('&') {
        if pair.is_empty() {
            continue;
        }
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let decode = |s: &str| {
            percent_decode(&s.replace('+', " ")).ok_or_else(|| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "bad_query",
                    "the query string is not valid percent-encoded UTF-8",
                )
            })
        };
        map.insert(decode(k)?, decode(v)?);
    }
    Ok(map)
}

pub(crate) fn number<T: std::str::FromStr>(
    q: &HashMap<String, String>,
    key: &str,
) -> Result<Option<T>, ApiError> {
    match q.get(key) {
        None => Ok(None),
        Some(v) => v
            .parse::<u64>()
            .ok()
            .filter(|n| *n <= MAX_COUNT)
            .and_then(|n| n.to_string().parse().ok())
            .map(Some)
            .ok_or_else(|| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "bad_query",
                    format!("`{key}` must be a whole number from 0 to {MAX_COUNT}, not `{v}`"),
                )
            }),
    }
}

pub(crate) type Params = HashMap<&'static str, String>;

/// The endpoint for a request, after the token check; or why not (`404`, `405`, `401`).
pub(crate) fn find<B>(
    token: Option<&str>,
    req: &Request<B>,
) -> Result<(&'static Endpoint, Params), ApiError> {
    let path = req.uri().path();
    let mut allowed = Vec::new();
    for e in ENDPOINTS {
        if let Some(params) = matches(e.path, path) {
            if e.method == *req.method() {
                if e.action {
                    authorize(token, req.headers())?;
                }
                return Ok((e, params));
            }
            allowed.push(e.method.as_str());
        }
    }
    if allowed.is_empty() {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no endpoint at {path}; see /v1/openapi.json"),
        ));
    }
    Err(ApiError::method_not_allowed(path, &allowed))
}

/// The bearer token check for action endpoints.
pub(crate) fn authorize(token: Option<&str>, headers: &http::HeaderMap) -> Result<(), ApiError> {
    let Some(token) = token else {
        return Ok(());
    };
    // Only this header: a token in the query string or a cookie is never looked at.
    let given = headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer)
        .unwrap_or("");
    if constant_time_eq(given.as_bytes(), token.as_bytes()) {
        Ok(())
    } else {
        Err(unauthorized())
    }
}

/// The token of an `Authorization: Bearer <token>` value; the scheme is matched in any
/// case (RFC 7235, section 2.1).
fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

/// The JSON body of a request whose body was read already (see [`read_body`]).
pub(crate) fn json_body<T: for<'de> Deserialize<'de>>(req: Request<Bytes>) -> Result<T, ApiError> {
    let is_json = req
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
        });
    if !is_json {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "send the body as `Content-Type: application/json`",
        ));
    }
    // Every body the API takes is an object; serde would also read a struct from an array
    // of its fields in order, which the OpenAPI document does not allow.
    let object = req
        .body()
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'{');
    if !object {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_json",
            "the body must be a JSON object",
        ));
    }
    serde_json::from_slice(req.body()).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_json",
            format!("the body is not the JSON this endpoint expects: {e}"),
        )
    })
}

/// Equality of two byte strings in time independent of their content: every byte up to
/// the longer length is compared (the shorter one padded with zeros) and the lengths'
/// difference is folded in, with no early exit.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().max(b.len());
    let mut diff = a.len() ^ b.len();
    for i in 0..n {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= usize::from(x ^ y);
    }
    std::hint::black_box(diff) == 0
}

/// The `413` of a body over `limit` bytes.
fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "body_too_large",
        format!("the request body is over {limit} bytes"),
    )
}

/// Read a whole request body: up to `limit` bytes, within `time`. A declared
/// `Content-Length` over the limit is refused before a byte is read (`413`); a body
/// still arriving when `time` runs out gets `408`.
pub(crate) async fn read_body(
    headers: &http::HeaderMap,
    body: Incoming,
    limit: usize,
    time: Duration,
) -> Result<Bytes, ApiError> {
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > u64::try_from(limit).unwrap_or(u64::MAX)) {
        return Err(too_large(limit));
    }
    let read = http_body_util::Limited::new(body, limit).collect();
    match tokio::time::timeout(time, read).await {
        Ok(Ok(c)) => Ok(c.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(too_large(limit)),
        Ok(Err(e)) => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_body",
            format!("the request body could not be read: {e}"),
        )),
        Err(_) => Err(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "body_timeout",
            format!(
                "the request body did not arrive within {} ms",
                time.as_millis()
            ),
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn bearer_scheme_in_any_case() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer abc"), Some("abc"));
        assert_eq!(bearer(" BEARER   abc "), Some("abc"));
        assert_eq!(bearer("Bearer"), None);
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearerabc"), None);
        assert_eq!(bearer("abc"), None);
    }

    #[test]
    fn constant_time_comparison() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"secret2", b"secret"));
        // A prefix padded with zeros is still not equal: the lengths differ.
        assert!(!constant_time_eq(b"secret", b"secret\0"));
        assert!(!constant_time_eq(b"", b"\0"));
        assert!(!constant_time_eq(b"", b"x"));
        assert!(constant_time_eq(b"", b""));
    }
}
