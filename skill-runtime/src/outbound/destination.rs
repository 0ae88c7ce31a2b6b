//! Where the engine may send a request: the URL checked whole ([`Destination::parse`]:
//! `http://` or `https://`, a host, no control characters, no user information, a port
//! from 1 to 65535) and the
//! destination policy ([`refused_address`]): loopback, link-local, private, "this
//! network", shared (CGNAT), multicast and broadcast addresses, in IPv4, IPv6 and the IPv6
//! forms that carry an IPv4 address, are refused unless
//! the sender allows them (a webhook's `allow_private_destinations`).
//!
//! The policy is applied twice: at start on the URL's host when it is an address (also in
//! the shortened, decimal, octal and hex forms `inet_aton` reads, `127.1`, `2130706433`,
//! `0x7f.0.0.1`) or a `localhost` name, and at every delivery on each address the host name
//! resolves to. A delivery connects to an address that passed, never to the name again, so
//! a name that resolves elsewhere on the second look (DNS rebinding) cannot walk around it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// A URL the engine sends to, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Destination {
    /// Whether it is `https://` (TLS to the host, its certificate checked).
    pub(crate) tls: bool,
    /// The host as the URL gives it, without the brackets of an IPv6 address.
    pub(crate) host: String,
    /// The port (80, or 443 for `https`, when the URL gives none).
    pub(crate) port: u16,
    /// The path and query, `/` when empty.
    pub(crate) path: String,
    /// The `Host` header's value.
    pub(crate) authority: String,
}

impl Destination {
    /// Check a URL whole: `http://` or `https://`, a host, no control character or space
    /// anywhere, no `user:password@`, a port from 1 to 65535.
    pub(crate) fn parse(url: &str) -> Result<Destination, String> {
        if let Some(c) = url.chars().find(|c| c.is_control() || c.is_whitespace()) {
            return Err(format!(
                "URL {url:?} contains the character {c:?}: write it without spaces or control characters"
            ));
        }
        let (tls, rest) = match (url.strip_prefix("https://"), url.strip_prefix("http://")) {
            (Some(rest), _) => (true, rest),
            (None, Some(rest)) => (false, rest),
            (None, None) => {
                return Err(format!(
                    "URL `{url}`: only http:// and https:// are supported"
                ));
            }
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        if authority.contains('@') {
            return Err(format!(
                "URL `{url}` carries user information (`...@`): put credentials in the signature secret instead"
            ));
        }
        let (host, port) = match authority.strip_prefix('[') {
            Some(v6) => match v6.split_once(']') {
                Some((host, tail)) => (host, tail.strip_prefix(':')),
                None => return Err(format!("URL `{url}`: an unclosed `[`")),
            },
            None => match authority.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            },
        };
        if host.is_empty() {
            return Err(format!("URL `{url}` names no host"));
        }
        let port = match port {
            None if tls => 443,
            None => 80,
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n > 0 => n,
                _ => {
                    return Err(format!(
                        "URL `{url}`: port `{p}` is not a number from 1 to 65535"
                    ));
                }
            },
        };
        let uri: http::Uri = url
            .parse()
            .map_err(|e| format!("URL `{url}` is not a valid URL: {e}"))?;
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        let path = if path.is_empty() { "/" } else { path }.to_owned();
        Ok(Destination {
            tls,
            host: host.to_owned(),
            port,
            path,
            authority: authority.to_owned(),
        })
    }

    /// The policy applied to the URL alone (before any name is resolved): an address in
    /// any form `inet_aton` or IPv6 reads, or a `localhost` name, that the policy refuses.
    #[cfg(any(feature = "replicas", test))]
    pub(crate) fn refused_at_start(&self) -> Option<String> {
        let lower = self.host.to_ascii_lowercase();
        let name = lower.trim_end_matches('.');
        if name == "localhost" || name.ends_with(".localhost") {
            return Some(format!("host `{}` is a loopback name", self.host));
        }
        let ip = literal_address(&self.host)?;
        refused_address(ip).map(|why| format!("host `{}` is {why}", self.host))
    }
}

/// The address a host names by itself: an IPv6 address, a dotted IPv4 address, or one of
/// the forms `inet_aton` (and so a resolver) also reads as IPv4: one to four parts, each
/// decimal, octal (leading `0`) or hex (`0x`), the last filling the bytes left.
pub(crate) fn literal_address(host: &str) -> Option<IpAddr> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Some(ip);
    }
    let parts: Vec<&str> = host.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut values = Vec::with_capacity(parts.len());
    for part in &parts {
        let lower = part.to_ascii_lowercase();
        let value = if let Some(hex) = lower.strip_prefix("0x") {
            if hex.is_empty() {
                0
            } else {
                u64::from_str_radix(hex, 16).ok()?
            }
        } else if lower.len() > 1 && lower.starts_with('0') {
            u64::from_str_radix(&lower[1..], 8).ok()?
        } else {
            lower.parse::<u64>().ok()?
        };
        values.push(value);
    }
    let (last, head) = values.split_last()?;
    let mut bytes = [0u8; 4];
    for (i, v) in head.iter().enumerate() {
        bytes[i] = u8::try_from(*v).ok()?;
    }
    let room = 4 - head.len();
    if *last >= 1u64 << (8 * room) {
        return None;
    }
    for i in 0..room {
        bytes[3 - i] = ((*last >> (8 * i)) & 0xff) as u8;
    }
    Some(IpAddr::V4(Ipv4Addr::from(bytes)))
}

/// Why the destination policy refuses an address (`None`: allowed).
pub(crate) fn refused_address(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => refused_v6(v6),
    }
}

fn refused_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_link_local() {
        Some("a link-local address (169.254.0.0/16, cloud metadata among them)")
    } else if ip.is_private() {
        Some("a private address (RFC 1918)")
    } else if a == 0 {
        Some("a \"this network\" address (0.0.0.0/8)")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a shared address (CGNAT, 100.64.0.0/10)")
    } else if a == 192 && b == 0 && ip.octets()[2] == 0 {
        Some("an IETF protocol assignment address (192.0.0.0/24)")
    } else if a == 198 && (b & 0xfe) == 18 {
        Some("a benchmarking address (198.18.0.0/15)")
    } else if ip.is_multicast() || ip.is_broadcast() || a >= 240 {
        Some("a multicast, broadcast or reserved address")
    } else {
        None
    }
}

fn refused_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let seg = ip.segments();
    // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d, `::1` among them) and
    // NAT64 (64:ff9b::a.b.c.d) addresses reach the IPv4 address they carry.
    if let Some(v4) = ip.to_ipv4() {
        return refused_v4(v4).or(ip.is_loopback().then_some("a loopback address"));
    }
    if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [x, y] = [seg[6].to_be_bytes(), seg[7].to_be_bytes()];
        return refused_v4(Ipv4Addr::new(x[0], x[1], y[0], y[1]));
    }
    // 6to4 (2002:a.b.c.d::/48) reaches the IPv4 address in its second and third groups.
    if seg[0] == 0x2002 {
        let [x, y] = [seg[1].to_be_bytes(), seg[2].to_be_bytes()];
        return refused_v4(Ipv4Addr::new(x[0], x[1], y[0], y[1]));
    }
    // The local-use NAT64 prefix (RFC 8215) translates into the operator's own network.
    if seg[..3] == [0x64, 0xff9b, 0x0001] {
        return Some("a local-use NAT64 address (64:ff9b:1::/48)");
    }
    if ip.is_unspecified() || ip.is_loopback() {
        Some("a loopback address")
    } else if seg[0] & 0xffc0 == 0xfe80 {
        Some("a link-local address (fe80::/10)")
    } else if seg[0] & 0xfe00 == 0xfc00 {
        Some("a private address (fc00::/7)")
    } else if seg[0] & 0xffc0 == 0xfec0 {
        Some("a site-local address (fec0::/10, deprecated, still routed privately)")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else {
        None
    }
}

/// The addresses of a destination a delivery may connect to, in the resolver's order:
/// every address the host resolves to that the policy allows (all of them when
/// `allow_private`). An error says why there is none.
pub(crate) async fn addresses(
    dest: &Destination,
    allow_private: bool,
) -> Result<Vec<SocketAddr>, String> {
    let found: Vec<SocketAddr> = match literal_address(&dest.host) {
        Some(ip) => vec![SocketAddr::new(ip, dest.port)],
        None => tokio::net::lookup_host((dest.host.as_str(), dest.port))
            .await
            .map_err(|e| format!("cannot resolve host {}: {e}", dest.host))?
            .collect(),
    };
    if allow_private {
        return if found.is_empty() {
            Err(format!("host {} resolves to no address", dest.host))
        } else {
            Ok(found)
        };
    }
    let mut refused = None;
    let allowed: Vec<SocketAddr> = found
        .into_iter()
        .filter(|a| match refused_address(a.ip()) {
            Some(why) => {
                refused.get_or_insert((a.ip(), why));
                false
            }
            None => true,
        })
        .collect();
    match (allowed.is_empty(), refused) {
        (false, _) => Ok(allowed),
        (true, Some((ip, why))) => Err(format!(
            "host {} resolves to {ip}, {why}: refused (set allow_private_destinations = true to deliver there)",
            dest.host
        )),
        (true, None) => Err(format!("host {} resolves to no address", dest.host)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_whole() {
        let d = Destination::parse("http://hooks.example.com:8080/in?x=1").unwrap();
        assert_eq!(
            (d.host.as_str(), d.port, d.path.as_str()),
            ("hooks.example.com", 8080, "/in?x=1")
        );
        assert_eq!(d.authority, "hooks.example.com:8080");
        let d = Destination::parse("http://[2001:db8::1]/").unwrap();
        assert_eq!((d.host.as_str(), d.port), ("2001:db8::1", 80));
        assert_eq!(Destination::parse("http://h").unwrap().path, "/");
        let d = Destination::parse("https://h/x").unwrap();
        assert_eq!((d.tls, d.port, d.path.as_str()), (true, 443, "/x"));
        assert!(!Destination::parse("http://h/x").unwrap().tls);
        assert_eq!(Destination::parse("https://h:8443/").unwrap().port, 8443);
        for (url, what) in [
            ("http:///nohost", "no host"),
            ("http://", "no host"),
            ("http://h/a\r\nX-Evil: 1", "'\\r'"),
            ("http://h/a\nb", "'\\n'"),
            ("http://h/a b", "' '"),
            ("http://h/\u{7f}", "'\\u{7f}'"),
            ("ftp://h/", "only http:// and https://"),
            ("h/", "only http:// and https://"),
            ("http://user:pw@h/", "user information"),
            ("http://h:0/", "port `0`"),
            ("http://h:/", "port ``"),
            ("http://[::1/", "unclosed"),
            ("http://h:65536/", "65535"),
            ("http://h:99999999/", "65535"),
        ] {
            let e = Destination::parse(url).unwrap_err();
            assert!(e.contains(what), "{url}: {e}");
        }
        assert_eq!(Destination::parse("http://h:65535/").unwrap().port, 65535);
        assert_eq!(Destination::parse("http://h:1/").unwrap().port, 1);
    }

    #[test]
    fn every_form_of_a_refused_address_is_refused_at_start() {
        for host in [
            "127.0.0.1",
            "127.1",
            "2130706433",
            "017700000001",
            "0177.0.0.1",
            "0x7f.0.0.1",
            "0x7f000001",
            "[::1]",
            "[::ffff:127.0.0.1]",
            "[::ffff:7f00:1]",
            "[::127.0.0.1]",
            "[64:ff9b::127.0.0.1]",
            "localhost",
            "LOCALHOST.",
            "api.localhost",
            "169.254.169.254",
            "[::ffff:169.254.169.254]",
            "[fe80::1]",
            "[febf::1]",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "[fc00::1]",
            "[fdff::1]",
            "[::ffff:10.1.2.3]",
            "0.0.0.0",
            "0.1.2.3",
            "[::]",
            "100.64.0.1",
            "100.127.255.255",
            "[::ffff:100.64.0.1]",
            "224.0.0.1",
            "255.255.255.255",
            // From the review: protocol assignments, benchmarking, site-local, 6to4 and
            // NAT64 forms of a private address, local-use NAT64.
            "192.0.0.1",
            "192.0.0.255",
            "198.18.0.1",
            "198.19.255.255",
            "[fec0::1]",
            "[feff::1]",
            "[2002:a00:1::1]",
            "[2002:7f00:1::]",
            "[2002:a9fe:a9fe::1]",
            "[64:ff9b::a00:1]",
            "[64:ff9b::192.168.0.1]",
            "[64:ff9b:1::1]",
            "[64:ff9b:1:ffff::8.8.8.8]",
        ] {
            let d = Destination::parse(&format!("http://{host}:9/x")).unwrap();
            assert!(d.refused_at_start().is_some(), "{host} allowed");
        }
        for host in [
            "93.184.216.34",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "169.253.255.255",
            "[2001:db8::1]",
            "[fbff::1]",
            "192.0.1.0",
            "191.255.255.255",
            "198.17.255.255",
            "198.20.0.0",
            "[2002:5db8:d822::1]",
            "[64:ff9b::8.8.8.8]",
            "[64:ff9b:2::1]",
            "hooks.example.com",
            "localhost.example.com",
        ] {
            let d = Destination::parse(&format!("http://{host}/x")).unwrap();
            assert_eq!(d.refused_at_start(), None, "{host}");
        }
    }

    #[test]
    fn loose_ipv4_forms_read_as_inet_aton_reads_them() {
        let v4 = |s: &str| literal_address(s);
        let ip = |a, b, c, d| Some(IpAddr::V4(Ipv4Addr::new(a, b, c, d)));
        assert_eq!(v4("127.1"), ip(127, 0, 0, 1));
        assert_eq!(v4("127.0.1"), ip(127, 0, 0, 1));
        assert_eq!(v4("2130706433"), ip(127, 0, 0, 1));
        assert_eq!(v4("0x7f.1"), ip(127, 0, 0, 1));
        assert_eq!(v4("010.0.0.1"), ip(8, 0, 0, 1));
        assert_eq!(v4("4294967295"), ip(255, 255, 255, 255));
        assert_eq!(v4("4294967296"), None);
        assert_eq!(v4("256.1.1.1"), None);
        assert_eq!(v4("1.2.3.4.5"), None);
        assert_eq!(v4("08.1.1.1"), None, "8 is not an octal digit");
        assert_eq!(v4("example.com"), None);
        assert_eq!(v4(""), None);
    }

    #[tokio::test]
    async fn a_name_is_checked_on_the_addresses_it_resolves_to() {
        // `localhost` resolves to loopback: refused at delivery as at start.
        let d = Destination::parse("http://localhost:9/").unwrap();
        let e = addresses(&d, false).await.unwrap_err();
        assert!(
            e.contains("loopback") && e.contains("allow_private_destinations"),
            "{e}"
        );
        let ok = addresses(&d, true).await.unwrap();
        assert!(ok.iter().all(|a| a.ip().is_loopback() && a.port() == 9));
        let d = Destination::parse("http://[::ffff:127.0.0.1]:9/").unwrap();
        assert!(addresses(&d, false).await.is_err());
        let d = Destination::parse("http://2130706433:9/").unwrap();
        assert!(addresses(&d, false).await.is_err());
    }
}
