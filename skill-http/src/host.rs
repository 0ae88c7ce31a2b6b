//! The `Host` check, against DNS rebinding: a web page on another site can make a browser
//! send requests to a server on the user's machine through a name it controls, and the
//! server would act on them (no token is needed on loopback by default). A request is
//! served only when its `Host` names the server as a browser could not be tricked into
//! naming it: an IP address, `localhost` or a `*.localhost` name, or a name the operator
//! lists in [`HttpConfig::allowed_hosts`](super::HttpConfig::allowed_hosts) (`"*"` allows
//! every name, for a server behind a proxy that checks them). A request target in absolute
//! form (`GET http://name/...`, which RFC 9112 section 3.2.2 makes win over `Host`) must
//! name the server the same way, and so must its `Host`. An HTTP/1.0 request without `Host` is served (browsers always send
//! one); an HTTP/1.1 request without it, or with two, is malformed (RFC 9112, section 3.2:
//! `400`).

use http::header::HOST;
use http::uri::Authority;
use http::{HeaderMap, Uri, Version};

/// Why a request's `Host` is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// No `Host` on HTTP/1.1, or more than one: `400`.
    Malformed,
    /// A name the server does not serve: `403`.
    Forbidden,
}

/// Whether a request may be served (see the module docs), by its target, version and headers.
pub(crate) fn check(
    uri: &Uri,
    version: Version,
    headers: &HeaderMap,
    allowed_hosts: &[String],
) -> Result<(), Refusal> {
    let mut values = headers.get_all(HOST).iter();
    let value = values.next();
    if values.next().is_some() {
        return Err(Refusal::Malformed);
    }
    if let Some(authority) = uri.authority() {
        // Absolute form: the target's authority is the host (HTTP/2's `:authority` too).
        if !allowed(Some(authority.as_str()), allowed_hosts) {
            return Err(Refusal::Forbidden);
        }
    } else if value.is_none() && version == Version::HTTP_11 {
        return Err(Refusal::Malformed);
    }
    match value {
        None => Ok(()),
        Some(v) if allowed(v.to_str().ok(), allowed_hosts) => Ok(()),
        Some(_) => Err(Refusal::Forbidden),
    }
}

/// Whether a `Host` value (`None`: not text) names the server.
fn allowed(value: Option<&str>, allowed_hosts: &[String]) -> bool {
    let Some((host, port)) = value.and_then(split) else {
        return false;
    };
    if host.parse::<std::net::IpAddr>().is_ok()
        || host == "localhost"
        || host.ends_with(".localhost")
    {
        return true;
    }
    allowed_hosts.iter().any(|entry| {
        if entry.trim() == "*" {
            return true;
        }
        match split(entry) {
            Some((name, None)) => name == host,
            Some((name, Some(p))) => name == host && port == Some(p),
            None => false,
        }
    })
}

/// A `Host` value (or an allowlist entry) as a lower-case name without brackets or a
/// final dot, and its port.
pub(super) fn split(value: &str) -> Option<(String, Option<u16>)> {
    let authority = Authority::try_from(value.trim()).ok()?;
    if authority.as_str().contains('@') {
        return None;
    }
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase();
    if host.is_empty() {
        return None;
    }
    Some((host, authority.port_u16()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn ok(host: Option<&str>, list: &[&str]) -> bool {
        let mut headers = HeaderMap::new();
        if let Some(h) = host {
            headers.insert(HOST, h.parse().unwrap());
        }
        let list: Vec<String> = list.iter().map(|s| (*s).to_owned()).collect();
        let uri = Uri::from_static("/v1/skills");
        check(&uri, Version::HTTP_10, &headers, &list).is_ok()
    }

    /// Two `Host` headers, or none on HTTP/1.1, are malformed (both were served, the second
    /// header unchecked); an absolute-form target must name the server (`GET
    /// http://evil.example/v1/skills` with `Host: 127.0.0.1` was served).
    #[test]
    fn duplicate_missing_and_absolute_form_hosts() {
        let one = |h: &str| {
            let mut headers = HeaderMap::new();
            headers.append(HOST, h.parse().unwrap());
            headers
        };
        let path = Uri::from_static("/v1/skills");
        let mut two = one("127.0.0.1");
        two.append(HOST, "evil.example".parse().unwrap());
        for version in [Version::HTTP_10, Version::HTTP_11] {
            assert_eq!(
                check(&path, version, &two, &[]),
                Err(Refusal::Malformed),
                "{version:?}"
            );
        }
        let none = HeaderMap::new();
        assert_eq!(check(&path, Version::HTTP_10, &none, &[]), Ok(()));
        assert_eq!(
            check(&path, Version::HTTP_11, &none, &[]),
            Err(Refusal::Malformed)
        );
        let evil = Uri::from_static("http://evil.example/v1/skills");
        let local = Uri::from_static("http://127.0.0.1:7878/v1/skills");
        assert_eq!(
            check(&evil, Version::HTTP_11, &one("127.0.0.1"), &[]),
            Err(Refusal::Forbidden)
        );
        assert_eq!(
            check(&local, Version::HTTP_11, &one("127.0.0.1"), &[]),
            Ok(())
        );
        // HTTP/2 carries the authority in the target and may send no `Host`.
        assert_eq!(check(&local, Version::HTTP_2, &none, &[]), Ok(()));
        assert_eq!(
            check(&evil, Version::HTTP_2, &none, &[]),
            Err(Refusal::Forbidden)
        );
        assert_eq!(
            check(
                &evil,
                Version::HTTP_11,
                &one("127.0.0.1"),
                &["evil.example".to_owned()]
            ),
            Ok(())
        );
    }

    #[test]
    fn addresses_and_localhost_names_are_served_without_a_list() {
        for h in [
            "127.0.0.1:7878",
            "127.0.0.1",
            "[::1]:7878",
            "[::1]",
            "10.1.2.3:80",
            "localhost:7878",
            "LOCALHOST",
            "localhost.",
            "app.localhost:3000",
        ] {
            assert!(ok(Some(h), &[]), "{h}");
        }
        assert!(ok(None, &[]), "no Host (HTTP/1.0)");
    }

    #[test]
    fn other_names_need_the_list() {
        for h in [
            "attacker.example",
            "attacker.example:7878",
            "localhost.attacker.example",
            "127.0.0.1.nip.io",
            "",
            "user@localhost",
            "not a host",
        ] {
            assert!(!ok(Some(h), &[]), "{h:?}");
        }
        assert!(ok(Some("skills.example.com"), &["skills.example.com"]));
        assert!(ok(Some("Skills.Example.com:443"), &["skills.example.com"]));
        assert!(ok(
            Some("skills.example.com:8080"),
            &["skills.example.com:8080"]
        ));
        assert!(!ok(
            Some("skills.example.com:9090"),
            &["skills.example.com:8080"]
        ));
        assert!(!ok(Some("other.example.com"), &["skills.example.com"]));
        assert!(ok(Some("anything.example"), &["*"]));
    }
}
