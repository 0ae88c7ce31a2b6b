//! Issue 46 through the real server: answers bounded relative to their requests, clients
//! that never read holding at most the answer budget for at most the write timeout, and
//! headers sent a byte at a time on every connection not holding back normal requests.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use skill_http::{HttpConfig, MountedService, Mounts};
use skill_registry::{RegistryConfig, Source};
use skill_runtime::EngineConfig;

use crate::http::{IO_TIMEOUT, connect, get, launch_mounted, one_skill, post, start};

/// A mounted service answering `size` bytes to every request.
fn big_service(size: usize) -> MountedService {
    use http_body_util::BodyExt;
    tower::util::BoxCloneSyncService::new(tower::service_fn(
        move |_req: http::Request<hyper::body::Incoming>| async move {
            let body = http_body_util::Full::new(bytes::Bytes::from(vec![b'x'; size]));
            Ok::<_, std::convert::Infallible>(http::Response::new(body.boxed_unsync()))
        },
    ))
}

/// Send a request for `/big` and never read the answer.
fn ask_and_never_read(addr: SocketAddr) -> TcpStream {
    let mut s = connect(addr);
    s.write_all(b"GET /big HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    s
}

/// Read what the server sends until it closes; the bytes and whether it ended early
/// (reset) or cleanly.
fn drain(mut s: TcpStream) -> usize {
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0;
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return total,
            Ok(n) => total += n,
        }
    }
}

/// The status line of an answer read from a stream, without reading the rest.
fn status_of(s: &mut TcpStream) -> u16 {
    let mut head = [0u8; 12];
    s.read_exact(&mut head).unwrap();
    std::str::from_utf8(&head[9..12]).unwrap().parse().unwrap()
}

/// Clients that never read: the answers held for them stay within the answer budget (an
/// answer that does not fit is `503` at once), and each is closed after the write timeout
/// with its answer cut short, which frees the budget for the next client.
#[test]
fn clients_that_never_read_hold_at_most_the_budget_for_the_write_timeout() {
    // Far larger than the loopback socket buffers, so the answer stays in the server.
    let size = 48 << 20;
    // Long enough for the refusals below to be asked while the first answer is held, on
    // a loaded machine too (at 500 ms, the budget was once freed before they were done).
    let write_timeout = Duration::from_secs(2);
    let http = HttpConfig {
        write_timeout,
        // Room for one answer, not two.
        max_answer_bytes_held: size + size / 2,
        ..HttpConfig::default()
    };
    let config = EngineConfig::one_shot(RegistryConfig::with_sources(Vec::new()));
    let mounts = Mounts::default().mount_with("/big", big_service(size), |_| false);
    let s = launch_mounted(config, http, |b| b, mounts);
    let asked = Instant::now();
    let mut first = ask_and_never_read(s.addr);
    // The first answer starts (its head is read; its body is not).
    assert_eq!(status_of(&mut first), 200);
    let mut refused = 0;
    for _ in 0..8 {
        let mut other = ask_and_never_read(s.addr);
        let status = status_of(&mut other);
        assert_eq!(status, 503, "a second answer was held beside the first");
        refused += 1;
    }
    assert_eq!(refused, 8);
    // Health is untouched meanwhile.
    assert_eq!(get(s.addr, "/v1/health").status, 200);
    // The client that never read is cut off after the write timeout: it gets less than
    // the answer when it finally reads.
    let started = Instant::now();
    loop {
        std::thread::sleep(write_timeout / 4);
        let mut next = ask_and_never_read(s.addr);
        if status_of(&mut next) == 200 {
            break;
        }
        assert!(started.elapsed() < IO_TIMEOUT, "the budget was never freed");
    }
    // The first answer's writes stalled after it was asked: never freed sooner.
    assert!(
        asked.elapsed() >= write_timeout,
        "freed before the write timeout"
    );
    let got = drain(first);
    assert!(got < size, "the whole answer went out ({got} bytes)");
}

/// An extraction or a route answers at most `answer_cap` of its request: a request that
/// would answer more gets `422 answer_too_large`, small; a normal one is answered.
#[test]
fn extraction_and_route_answers_are_bounded_by_their_request() {
    let dir = one_skill();
    let s = start(
        vec![Source::new(dir.path(), "project")],
        false,
        HttpConfig::default(),
    );
    // Many short command lines in one `cmd` block: each becomes an entry of its own in
    // the answer, far more than four times its size.
    let output = format!("```cmd\n{}```\n", "/a b\n".repeat(150_000));
    let request_bytes = output.len();
    assert!(request_bytes < 1 << 20);
    for path in ["/v1/extract", "/v1/route"] {
        let r = post(s.addr, path, &serde_json::json!({ "output": output }));
        assert_eq!(
            r.status,
            422,
            "{path}: {} bytes: {:.300}",
            r.body.len(),
            r.text()
        );
        assert_eq!(r.json()["error"]["code"], "answer_too_large", "{path}");
        assert!(r.body.len() < 1024, "{path}");
        let ok = post(s.addr, path, &serde_json::json!({ "output": "/a b c" }));
        assert_eq!(ok.status, 200, "{path}: {}", ok.text());
    }
}

/// Headers sent a byte at a time on every connection the server serves: a normal request
/// still gets a slot at once, by closing the connection that waited longest for its
/// request head (not after the header read timeout, which is far longer here).
#[test]
fn stalled_headers_on_every_connection_do_not_hold_back_a_request() {
    let dir = one_skill();
    let max = 8;
    let s = start(
        vec![Source::new(dir.path(), "project")],
        false,
        HttpConfig {
            max_connections: max,
            header_read_timeout: IO_TIMEOUT * 4,
            ..HttpConfig::default()
        },
    );
    // Exactly the cap, each with part of a request head, the first one first.
    let mut stalled: Vec<TcpStream> = Vec::new();
    for _ in 0..max {
        let mut c = connect(s.addr);
        c.write_all(b"GET /v1/hea").unwrap();
        stalled.push(c);
    }
    let started = Instant::now();
    let r = get(s.addr, "/v1/health");
    assert_eq!(r.status, 200);
    assert!(started.elapsed() < IO_TIMEOUT, "{:?}", started.elapsed());
    // The one closed was the first (waiting longest): it reads the end, at once.
    let mut first = stalled.remove(0);
    first
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut buf = [0u8; 16];
    let n = first.read(&mut buf);
    assert!(
        matches!(n, Ok(0)) || n.is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset)
    );
}
