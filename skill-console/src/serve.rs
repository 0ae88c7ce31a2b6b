//! The tower service that answers requests under [`CONSOLE_PATH`]: the embedded files, with
//! the console's security headers, for `GET` and `HEAD`.

use std::convert::Infallible;

use bytes::Bytes;
use http::header::{
    ALLOW, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_SECURITY_POLICY as CSP, CONTENT_TYPE, LOCATION,
    REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Empty, Full};

use crate::assets;

/// Where skill-server mounts the console.
pub const CONSOLE_PATH: &str = "/ui";

/// The `Content-Security-Policy` of every console answer: the page loads scripts, styles
/// and images from its own server only, connects (`fetch`, the event stream) to its own
/// server only, runs no inline script, submits no form and cannot be framed.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// Whether a console request needs the bearer token: never, since it only reads the
/// embedded page; what the page then asks of `/v1` is checked there.
pub fn needs_token(_parts: &http::request::Parts) -> bool {
    false
}

/// The body of every console answer.
pub type Body = http_body_util::combinators::UnsyncBoxBody<Bytes, Infallible>;

/// The console as a service to mount at [`CONSOLE_PATH`]: a boxed, cloneable tower service
/// over requests with any body `B` (the console reads none), never failing.
pub fn service<B: Send + 'static>()
-> tower::util::BoxCloneSyncService<Request<B>, Response<Body>, Infallible> {
    tower::util::BoxCloneSyncService::new(tower::service_fn(|req: Request<_>| {
        let resp = answer(req.method(), req.uri().path());
        async move { Ok::<_, Infallible>(resp) }
    }))
}

/// The answer to `method` on `path` (the full path, prefix included).
fn answer(method: &Method, path: &str) -> Response<Body> {
    let rest = path.strip_prefix(CONSOLE_PATH).unwrap_or(path);
    // `/ui` itself: send the browser to `/ui/`, so the page's address is one place.
    if rest.is_empty() {
        let mut resp = plain(StatusCode::PERMANENT_REDIRECT, "the console is at /ui/\n");
        resp.headers_mut()
            .insert(LOCATION, HeaderValue::from_static("/ui/"));
        return resp;
    }
    if method != Method::GET && method != Method::HEAD {
        let mut resp = plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "the console only answers GET and HEAD\n",
        );
        resp.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return resp;
    }
    let Some(asset) = assets::find(rest) else {
        return plain(
            StatusCode::NOT_FOUND,
            "no such console page: the console is at /ui/\n",
        );
    };
    let resp = with_headers(StatusCode::OK, asset.content_type, asset.bytes)
        .unwrap_or_else(|| plain(StatusCode::INTERNAL_SERVER_ERROR, ""));
    if method == Method::HEAD {
        let (parts, _) = resp.into_parts();
        return Response::from_parts(parts, Empty::new().boxed_unsync());
    }
    resp
}

/// A plain-text answer with the console's headers.
fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    with_headers(status, "text/plain; charset=utf-8", text.as_bytes()).unwrap_or_else(|| {
        let mut r = Response::new(Empty::new().boxed_unsync());
        *r.status_mut() = status;
        r
    })
}

/// An answer with `bytes` and every console header; `None` only if a header were invalid.
fn with_headers(
    status: StatusCode,
    content_type: &'static str,
    bytes: &'static [u8],
) -> Option<Response<Body>> {
    Response::builder()
        .status(status)
        .header(CONTENT_TYPE, content_type)
        .header(CONTENT_LENGTH, bytes.len())
        .header(CSP, CONTENT_SECURITY_POLICY)
        .header(X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(X_FRAME_OPTIONS, "DENY")
        .header(REFERRER_POLICY, "no-referrer")
        // The assets change only with the binary; a browser asks again each load.
        .header(CACHE_CONTROL, "no-cache")
        .body(Full::new(Bytes::from_static(bytes)).boxed_unsync())
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(r: &Response<Body>, name: http::header::HeaderName) -> &str {
        r.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    #[test]
    fn the_page_is_served_with_the_strict_policy() {
        let r = answer(&Method::GET, "/ui/");
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(header(&r, CONTENT_TYPE), "text/html; charset=utf-8");
        assert_eq!(header(&r, CSP), CONTENT_SECURITY_POLICY);
        assert_eq!(header(&r, X_CONTENT_TYPE_OPTIONS), "nosniff");
        let js = answer(&Method::GET, "/ui/console.js");
        assert_eq!(header(&js, CONTENT_TYPE), "text/javascript; charset=utf-8");
    }

    #[test]
    fn the_bare_prefix_redirects_to_the_page() {
        let r = answer(&Method::GET, "/ui");
        assert_eq!(r.status(), StatusCode::PERMANENT_REDIRECT);
        assert_eq!(header(&r, LOCATION), "/ui/");
    }

    #[test]
    fn unknown_files_and_other_methods_are_refused() {
        let missing = answer(&Method::GET, "/ui/../v1/skills");
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
        assert_eq!(header(&missing, CSP), CONTENT_SECURITY_POLICY);
        let post = answer(&Method::POST, "/ui/");
        assert_eq!(post.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(header(&post, ALLOW), "GET, HEAD");
    }

    #[tokio::test]
    async fn head_has_the_length_and_no_body() {
        let get = answer(&Method::GET, "/ui/console.css");
        let head = answer(&Method::HEAD, "/ui/console.css");
        assert_eq!(header(&head, CONTENT_LENGTH), header(&get, CONTENT_LENGTH));
        let body = head.into_body().collect().await.map(|b| b.to_bytes());
        assert_eq!(body.ok(), Some(Bytes::new()));
    }

    #[test]
    fn the_console_needs_no_token_to_be_read() {
        let (parts, ()) = Request::new(()).into_parts();
        assert!(!needs_token(&parts));
    }
}
