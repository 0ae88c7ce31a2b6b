//! The `Host` check, against DNS rebinding: a web page on another site can make a browser
//! send requests to a server on the user's machine through a name it controls, and the
//! server would act on them (no token is needed on loopback by default). A request is
//! served only when its `Host` names the server as a browser could not be tricked into
//! naming it: an IP address, `localhost` or a `*.localhost` name, or a name the operator
//! lists in [`HttpConfig::allowed_hosts`](super::HttpConfig::allowed_hosts) (`"*"` allows
//! every name, for a server behind a proxy that checks them). A request without `Host`
//! (HTTP/1.0) is served: browsers always send one.

use http::HeaderMap;
use http::header::HOST;
use http::uri::Authority;

/// Whether a request with these headers may be served (see the module docs).
pub(crate) fn allowed(headers: &HeaderMap, allowed_hosts: &[String]) -> bool {
    let Some(value) = headers.get(HOST) else {
        return true;
    };
    let Some((host, port)) = value.to_str().ok().and_then(split) else {
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
        allowed(&headers, &list)
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
