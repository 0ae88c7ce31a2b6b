//! The `Origin` check that `/mcp` applies (MCP, Streamable HTTP: servers must validate
//! `Origin` against DNS rebinding), beside the `Host` check it shares its reading of names
//! with. A browser names the page that sent a request in `Origin`; a
//! page on another site must not reach the MCP server through the user's browser. A
//! request without `Origin` (rmcp, curl, any client that is not a browser) is not
//! affected. A request with one is served only when the origin's host is
//!
//! - loopback: an address in `127.0.0.0/8`, `::1`, `localhost` or a `*.localhost` name;
//! - the request's own `Host` (same origin: host and port, a missing port being the
//!   default of the origin's scheme);
//! - or listed in the server's `allowed_hosts`, the list the `Host` check uses (`name`:
//!   any port, `name:port`: that port); `"*"` allows every origin.
//!
//! `Origin: null` (a sandboxed page, a `file:` URL, a redirect) and anything that is not a
//! `scheme://host[:port]` origin are refused unless `allowed_hosts` has `"*"`.

use http::uri::{Authority, Uri};

/// A `Host` value, an origin's authority or an allowlist entry as a lower-case name without
/// brackets or a final dot, and its port: names are read as skill-http's `Host` check reads
/// them, so an entry of `allowed_hosts` means the same to both checks.
fn split(value: &str) -> Option<(String, Option<u16>)> {
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

/// Whether a request whose `Origin` is `origin` (and whose `Host` is `host`) may be served
/// under `allowed_hosts` (the list the HTTP server's `Host` check reads, `HttpConfig::allowed_hosts`):
/// when the origin's host is loopback (`127.0.0.0/8`, `::1`, `localhost`, `*.localhost`),
/// the request's own `Host` (same host and port, a missing port being the scheme's
/// default), or listed (`name`: any port, `name:port`: that port). `"*"` in the list allows
/// every origin; `null` and anything that is not `scheme://host[:port]` are refused
/// otherwise. A request without `Origin` needs no check.
pub(crate) fn origin_allowed(origin: &str, host: Option<&str>, allowed_hosts: &[String]) -> bool {
    if allowed_hosts.iter().any(|h| h.trim() == "*") {
        return true;
    }
    let Some((name, port)) = parse_origin(origin) else {
        return false;
    };
    if is_loopback(&name) {
        return true;
    }
    let same_origin = host
        .and_then(split)
        .is_some_and(|(h, p)| h == name && p.or(port.default) == port.effective());
    same_origin
        || allowed_hosts.iter().any(|entry| match split(entry) {
            Some((n, None)) => n == name,
            Some((n, Some(p))) => n == name && port.effective() == Some(p),
            None => false,
        })
}

/// An origin's port as written, and the one its scheme implies.
#[derive(Debug, Clone, Copy)]
struct Port {
    written: Option<u16>,
    default: Option<u16>,
}

impl Port {
    fn effective(self) -> Option<u16> {
        self.written.or(self.default)
    }
}

/// `scheme://host[:port]` as its host (as [`split`] gives it) and port; `None` for
/// `null` and anything else that is not an origin.
fn parse_origin(origin: &str) -> Option<(String, Port)> {
    let uri = Uri::try_from(origin.trim()).ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    if uri.query().is_some() || !matches!(uri.path(), "" | "/") {
        return None;
    }
    let (name, written) = split(uri.authority()?.as_str())?;
    let default = match scheme.as_str() {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        _ => None,
    };
    Some((name, Port { written, default }))
}

/// `localhost`, a `*.localhost` name, or a loopback address (`127.0.0.0/8`, `::1`, and
/// `::ffff:127.x.y.z`).
fn is_loopback(name: &str) -> bool {
    if name == "localhost" || name.ends_with(".localhost") {
        return true;
    }
    match name.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback(),
        Ok(std::net::IpAddr::V6(ip)) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        Err(_) => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn ok(origin: &str, host: Option<&str>, list: &[&str]) -> bool {
        let list: Vec<String> = list.iter().map(|s| (*s).to_owned()).collect();
        origin_allowed(origin, host, &list)
    }

    #[test]
    fn loopback_origins_are_served_whatever_the_host() {
        for origin in [
            "http://127.0.0.1:7878",
            "http://127.0.0.1",
            "http://127.1.2.3:3000",
            "https://[::1]:7878",
            "http://[::ffff:127.0.0.1]",
            "http://localhost:3000",
            "http://LOCALHOST",
            "http://localhost.",
            "http://app.localhost:5173",
        ] {
            assert!(ok(origin, Some("127.0.0.1:7878"), &[]), "{origin}");
            assert!(ok(origin, None, &[]), "{origin} without Host");
        }
    }

    #[test]
    fn the_request_s_own_host_is_same_origin() {
        assert!(ok(
            "http://skills.example.com:7878",
            Some("skills.example.com:7878"),
            &[]
        ));
        assert!(ok("http://10.1.2.3:7878", Some("10.1.2.3:7878"), &[]));
        assert!(ok(
            "https://Skills.Example.com",
            Some("skills.example.com"),
            &[]
        ));
        assert!(ok(
            "https://skills.example.com",
            Some("skills.example.com:443"),
            &[]
        ));
        assert!(ok(
            "http://skills.example.com:80",
            Some("skills.example.com"),
            &[]
        ));
        // Another port or another name is another origin.
        assert!(!ok(
            "http://skills.example.com:9999",
            Some("skills.example.com:7878"),
            &[]
        ));
        assert!(!ok(
            "http://skills.example.com:8080",
            Some("skills.example.com"),
            &[]
        ));
        assert!(!ok(
            "http://attacker.example:7878",
            Some("10.1.2.3:7878"),
            &[]
        ));
        assert!(!ok("http://10.9.9.9:7878", Some("10.1.2.3:7878"), &[]));
        assert!(!ok("http://attacker.example", None, &[]));
    }

    #[test]
    fn other_origins_need_the_list() {
        let host = Some("127.0.0.1:7878");
        for origin in [
            "http://attacker.example",
            "https://attacker.example:7878",
            "http://localhost.attacker.example",
            "http://127.0.0.1.nip.io",
            "http://10.1.2.3:7878",
        ] {
            assert!(!ok(origin, host, &[]), "{origin}");
        }
        let list = ["skills.example.com", "app.example.org:8443"];
        assert!(ok("https://skills.example.com", host, &list));
        assert!(ok("http://SKILLS.example.com:9000", host, &list));
        assert!(ok("https://app.example.org:8443", host, &list));
        assert!(!ok("https://app.example.org", host, &list));
        assert!(!ok("https://other.example.com", host, &list));
        assert!(ok(
            "https://app.example.org",
            host,
            &["app.example.org:443"]
        ));
        assert!(ok("http://anything.example", host, &["*"]));
    }

    #[test]
    fn null_and_malformed_origins_are_refused_unless_everything_is_allowed() {
        let host = Some("localhost:7878");
        for origin in [
            "null",
            "",
            "localhost",
            "localhost:7878",
            "http://user@localhost",
            "http://localhost/path",
            "http://localhost?x=1",
            "not an origin",
            "http://",
        ] {
            assert!(!ok(origin, host, &["localhost"]), "{origin:?}");
            assert!(ok(origin, host, &["*"]), "{origin:?} with *");
        }
    }
}
