//! Reading requests: the endpoint for a path, the token check, query parameters and
//! JSON bodies, each failure a clear `4xx`.

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE};
use http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde::Deserialize;

use super::response::{ApiError, unauthorized};
use super::routes::{ENDPOINTS, Endpoint, matches, percent_decode};

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

pub(crate) type Params = HashMap<&'static str, String>;

/// The endpoint for a request, after the token check; or why not (`404`, `405`, `401`).
/// A `HEAD` is served by the path's `HEAD` endpoint, or else by its `GET` endpoint (RFC
/// 9110, section 9.3.2: the server answers it as the `GET`, without the body), with the
/// `GET`'s token rule; a `405` names `HEAD` wherever it names `GET`.
pub(crate) fn find<B>(
    token: Option<&str>,
    req: &Request<B>,
) -> Result<(&'static Endpoint, Params), ApiError> {
    let path = req.uri().path();
    let method = req.method();
    let mut allowed: Vec<&str> = Vec::new();
    let mut get = None;
    for e in ENDPOINTS {
        if let Some(params) = matches(e.path, path) {
            if e.method == *method {
                return checked(token, req, e, params);
            }
            let methods: &[&str] = if e.method == Method::GET {
                &["GET", "HEAD"]
            } else {
                &[e.method.as_str()]
            };
            for m in methods {
                if !allowed.contains(m) {
                    allowed.push(m);
                }
            }
            if *method == Method::HEAD && e.method == Method::GET && get.is_none() {
                get = Some((e, params));
            }
        }
    }
    if let Some((e, params)) = get {
        return checked(token, req, e, params);
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

/// An endpoint found for a request, once its token rule is met.
fn checked<B>(
    token: Option<&str>,
    req: &Request<B>,
    e: &'static Endpoint,
    params: Params,
) -> Result<(&'static Endpoint, Params), ApiError> {
    if e.action {
        authorize(token, req.headers())?;
    }
    Ok((e, params))
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

    /// The endpoint `method path` is served by (with a token configured), or the status
    /// and `Allow` header of the refusal.
    fn route(method: Method, path: &str) -> Result<(Method, &'static str), (u16, String)> {
        let req = Request::builder()
            .method(method)
            .uri(path)
            .body(())
            .unwrap();
        find(Some("t0ken"), &req)
            .map(|(e, _)| (e.method.clone(), e.path))
            .map_err(|e| {
                let resp = e.into_response();
                let allow = resp
                    .headers()
                    .get(http::header::ALLOW)
                    .map(|v| v.to_str().unwrap().to_owned())
                    .unwrap_or_default();
                (resp.status().as_u16(), allow)
            })
    }

    #[test]
    fn head_is_served_wherever_get_is() {
        // With a token configured and none given: no GET asks for it, so no HEAD does.
        for e in ENDPOINTS.iter().filter(|e| e.method == Method::GET) {
            let path = e
                .path
                .replace("{name}", "x")
                .replace("{path}", "a/b.md")
                .replace("{slug}", "s")
                .replace("{id}", "1");
            let (method, template) = route(Method::HEAD, &path).unwrap();
            assert_eq!(template, e.path, "HEAD {path}");
            assert!(method == Method::GET || method == Method::HEAD, "{path}");
        }
        // The discovery index has its own HEAD endpoint, which serves it.
        assert_eq!(
            route(Method::HEAD, "/.well-known/agent-skills/index.json").unwrap(),
            (Method::HEAD, "/.well-known/agent-skills/index.json")
        );
        // No HEAD where there is no GET.
        assert_eq!(
            route(Method::HEAD, "/v1/select"),
            Err((405, "POST".to_owned()))
        );
        assert_eq!(
            route(Method::HEAD, "/v1/nowhere"),
            Err((404, String::new()))
        );
    }

    #[test]
    fn a_405_names_head_wherever_it_names_get() {
        assert_eq!(
            route(Method::POST, "/v1/health"),
            Err((405, "GET, HEAD".to_owned()))
        );
        assert_eq!(
            route(Method::DELETE, "/v1/skills/x"),
            Err((405, "GET, HEAD".to_owned()))
        );
        // Listed once, though the discovery index has a HEAD endpoint of its own.
        assert_eq!(
            route(Method::POST, "/.well-known/agent-skills/index.json"),
            Err((405, "GET, HEAD".to_owned()))
        );
        assert_eq!(
            route(Method::GET, "/v1/reload"),
            Err((405, "POST".to_owned()))
        );
    }

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
