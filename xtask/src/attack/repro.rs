//! The reproductions of issue 46, each bounded in time and connections, loopback only.
//! Each returns its own figures as one line.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{AttackArgs, IO_LIMIT, Target};

/// Aliases of a 1,000-item list in each alias file (item 1).
const ALIAS_LINES: usize = 10_000;
/// Alias files (item 1).
const ALIAS_FILES: usize = 8;
/// The heading file's size (item 2): the largest SKILL.md the parser reads.
const HEADINGS_BYTES: usize = skill_format::MAX_FILE_BYTES;
/// The model output of the amplification (item 3): its JSON body (newlines escaped) stays
/// under the server's 1 MiB body limit (1 MiB of output made a 1,170 KiB body: 413).
const AMPLIFY_BYTES: usize = 880 << 10;
/// Clients that never read, per endpoint (item 3).
const NEVER_READ: usize = 10;
/// Processes the fork loop tries to start (item 6).
const FORKS: usize = 300;

/// Write the skills every reproduction needs; the source folders.
pub(super) fn write_skills(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let w = |rel: &str, text: &str| -> Result<(), String> {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
    };
    w(
        "base/a/SKILL.md",
        "---\nname: a\ndescription: A skill to route to.\n---\nBody.\n",
    )?;
    w(
        "base/bomb/SKILL.md",
        "---\nname: bomb\ndescription: Starts processes.\nscripts:\n  - scripts/bomb.sh\n---\nBody.\n",
    )?;
    let count = dir.join("forks.txt");
    w(
        "base/bomb/scripts/bomb.sh",
        &format!(
            "#!/bin/sh\ni=0\nwhile [ $i -lt {FORKS} ]; do\n  (echo x >> '{}'; exec sleep 30) &\n  i=$((i+1))\ndone\nwait\n",
            count.display()
        ),
    )?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let script = dir.join("base/bomb/scripts/bomb.sh");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| e.to_string())?;
    }
    let list = vec!["x"; 1000].join(", ");
    for i in 0..ALIAS_FILES {
        let mut text = format!("---\nname: alias-{i}\ndescription: Aliases.\na: &a [{list}]\n");
        for k in 0..ALIAS_LINES {
            text.push_str(&format!("b{k}: *a\n"));
        }
        text.push_str("---\nBody.\n");
        w(&format!("aliases/alias-{i}/SKILL.md"), &text)?;
    }
    let mut big = String::from("---\nname: big\ndescription: Headings only.\n---\n");
    // Up to the parser's file limit and not past it: a larger file is refused at load, and
    // its outline requests would only measure the refusal.
    let mut k = 0;
    loop {
        let line = format!("# h{k}\n");
        if big.len() + line.len() > HEADINGS_BYTES {
            break;
        }
        big.push_str(&line);
        k += 1;
    }
    w("big/big/SKILL.md", &big)?;
    Ok(["base", "aliases", "big"]
        .iter()
        .map(|s| dir.join(s))
        .collect())
}

/// A request on a new connection (`Connection: close`), not read.
fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Option<TcpStream> {
    let mut s = TcpStream::connect_timeout(&addr, IO_LIMIT).ok()?;
    let _ = s.set_read_timeout(Some(IO_LIMIT * 2));
    let _ = s.set_write_timeout(Some(IO_LIMIT * 2));
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).ok()?;
    s.write_all(body).ok()?;
    Some(s)
}

/// An answer read to its end: status (0: none), header block, body bytes.
struct Answer {
    status: u16,
    head: String,
    body: Vec<u8>,
}

fn read_answer(s: Option<TcpStream>) -> Answer {
    let mut raw = Vec::new();
    if let Some(mut s) = s {
        let _ = s.read_to_end(&mut raw);
    }
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(raw.len());
    let head = String::from_utf8_lossy(raw.get(..split).unwrap_or_default()).into_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Answer {
        status,
        head,
        body: raw.get(split + 4..).unwrap_or_default().to_vec(),
    }
}

/// The status line of a stream's answer, read without the rest (0: none).
fn status_only(s: &mut TcpStream) -> u16 {
    let mut head = [0u8; 12];
    match s.read_exact(&mut head) {
        Ok(()) => std::str::from_utf8(&head[9..12])
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(0),
        Err(_) => 0,
    }
}

fn kib(n: usize) -> String {
    format!("{:.1} KiB", n as f64 / 1024.0)
}

/// Item 1: the alias files were excluded with a diagnostic.
pub(super) fn aliases_excluded(addr: SocketAddr) -> String {
    let a = read_answer(send(addr, "GET", "/v1/diagnostics", &[], b""));
    let text = String::from_utf8_lossy(&a.body);
    format!(
        "{} of {ALIAS_FILES} alias files excluded with yaml-too-large",
        text.matches("yaml-too-large").count().min(ALIAS_FILES)
    )
}

/// Item 2: outlines of a file of 4 MiB of headings, read by four clients at once and held
/// unread by four more; an unknown section.
pub(super) fn outline(t: &Target, _dir: &Path, args: &AttackArgs) -> String {
    let addr = t.addr;
    let path = "/v1/skills/big/outline";
    let unread: Vec<_> = (0..4)
        .filter_map(|_| send(addr, "GET", path, &[], b""))
        .collect();
    let started = Instant::now();
    let readers: Vec<_> = (0..4)
        .map(|_| std::thread::spawn(move || read_answer(send(addr, "GET", path, &[], b""))))
        .collect();
    let answers: Vec<Answer> = readers.into_iter().filter_map(|h| h.join().ok()).collect();
    let took = started.elapsed();
    let t0 = Instant::now();
    let unknown = read_answer(send(
        addr,
        "GET",
        "/v1/skills/big/sections/no-such-heading",
        &[],
        b"",
    ));
    let unknown_took = t0.elapsed();
    std::thread::sleep(Duration::from_secs(args.seconds).saturating_sub(started.elapsed()));
    drop(unread);
    let statuses: Vec<u16> = answers.iter().map(|a| a.status).collect();
    let largest = answers.iter().map(|a| a.body.len()).max().unwrap_or(0);
    format!(
        "4 reads {statuses:?}, largest {}, all in {} ms; 4 unread held {} s; unknown section {} in {} ms",
        kib(largest),
        took.as_millis(),
        args.seconds,
        unknown.status,
        unknown_took.as_millis()
    )
}

/// A model output of about `bytes` bytes: one command block of many short commands.
fn amplifying_output(bytes: usize) -> String {
    let mut out = String::from("```cmd\n");
    while out.len() + 8 < bytes {
        out.push_str("/a b c\n");
    }
    out.push_str("```\n");
    out
}

/// An MCP session: its id (initialized).
fn mcp_session(addr: SocketAddr) -> Option<String> {
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"attack","version":"0"}}}"#;
    let a = read_answer(send(
        addr,
        "POST",
        "/mcp",
        &mcp_headers(None),
        init.as_bytes(),
    ));
    let id = a.head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("mcp-session-id")
            .then(|| v.trim().to_owned())
    })?;
    let done = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let _ = read_answer(send(
        addr,
        "POST",
        "/mcp",
        &mcp_headers(Some(&id)),
        done.as_bytes(),
    ));
    Some(id)
}

fn mcp_headers(session: Option<&str>) -> Vec<(&str, &str)> {
    let mut h = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    if let Some(s) = session {
        h.push(("Mcp-Session-Id", s));
    }
    h
}

/// Item 3: a 1 MiB request to `/v1/extract`, `/v1/route` and MCP `route`, read once for
/// its size, then sent by clients that never read, held for the flood's length.
pub(super) fn amplification(t: &Target, _dir: &Path, args: &AttackArgs) -> String {
    let addr = t.addr;
    let output = amplifying_output(AMPLIFY_BYTES);
    let body = serde_json::json!({ "output": output }).to_string();
    let session = mcp_session(addr);
    let mcp_body = serde_json::json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "route", "arguments": { "output": output } }
    })
    .to_string();
    let json = [("Content-Type", "application/json")];
    let mut note = Vec::new();
    let ask = |which: &str| match which {
        "extract" => send(addr, "POST", "/v1/extract", &json, body.as_bytes()),
        "route" => send(addr, "POST", "/v1/route", &json, body.as_bytes()),
        _ => send(
            addr,
            "POST",
            "/mcp",
            &mcp_headers(session.as_deref()),
            mcp_body.as_bytes(),
        ),
    };
    for which in ["extract", "route", "mcp"] {
        let a = read_answer(ask(which));
        note.push(format!("{which} {} {}", a.status, kib(a.body.len())));
    }
    let mut held = Vec::new();
    for which in ["extract", "route", "mcp"] {
        for _ in 0..NEVER_READ {
            if let Some(s) = ask(which) {
                held.push(s);
            }
        }
    }
    std::thread::sleep(Duration::from_secs(args.seconds));
    let mut statuses = std::collections::BTreeMap::new();
    for mut s in held {
        *statuses.entry(status_only(&mut s)).or_insert(0) += 1;
    }
    format!(
        "request {}: {}; {} never-reading clients for {} s, statuses {statuses:?}",
        kib(body.len()),
        note.join(", "),
        NEVER_READ * 3,
        args.seconds
    )
}

/// Item 4: eight requests with one id on one session at once; 300 GET streams on it.
pub(super) fn mcp(t: &Target, _dir: &Path, _args: &AttackArgs) -> String {
    let addr = t.addr;
    let Some(session) = mcp_session(addr) else {
        return "no MCP session could be opened".to_owned();
    };
    let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"route","arguments":{"text":"/a b"}}}"#;
    let started = Instant::now();
    let workers: Vec<_> = (0..8)
        .map(|_| {
            let session = session.clone();
            std::thread::spawn(move || {
                read_answer(send(
                    addr,
                    "POST",
                    "/mcp",
                    &mcp_headers(Some(&session)),
                    call.as_bytes(),
                ))
                .status
            })
        })
        .collect();
    let statuses: Vec<u16> = workers.into_iter().filter_map(|w| w.join().ok()).collect();
    let took = started.elapsed();
    let mut streams = Vec::new();
    let mut by_status = std::collections::BTreeMap::new();
    for _ in 0..300 {
        let headers = [
            ("Accept", "text/event-stream"),
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ];
        if let Some(mut s) = send(addr, "GET", "/mcp", &headers, b"") {
            *by_status.entry(status_only(&mut s)).or_insert(0) += 1;
            streams.push(s);
        }
    }
    drop(streams);
    format!(
        "same id x8: statuses {statuses:?} in {} ms (0 = no answer in {} s); 300 GET streams: {by_status:?}",
        took.as_millis(),
        (IO_LIMIT * 2).as_secs()
    )
}

/// Item 6: a script that starts [`FORKS`] processes as fast as it can; how many started.
pub(super) fn processes(t: &Target, dir: &Path, _args: &AttackArgs) -> String {
    let count = dir.join("forks.txt");
    let _ = std::fs::remove_file(&count);
    let body = serde_json::json!({ "command": "bomb" }).to_string();
    let a = read_answer(send(
        t.addr,
        "POST",
        "/v1/execute",
        &[("Content-Type", "application/json")],
        body.as_bytes(),
    ));
    let outcome: serde_json::Value = serde_json::from_slice(&a.body).unwrap_or_default();
    // Let any straggler that was mid-fork write its line.
    std::thread::sleep(Duration::from_millis(200));
    let started = std::fs::read_to_string(&count)
        .map(|s| s.lines().count())
        .unwrap_or(0);
    format!(
        "limit {} ({}); {} processes at most (the script and {started} it started; the limit is 64)",
        outcome["outcome"]["limit"],
        t.pid(),
        started + 1
    )
}

/// Item 7: `n` connections sending a request head a byte at a time, for the flood's length
/// and until the server closed them all (at most three header read timeouts): how many it
/// closed, and at what age (those past its connection cap at once, each by a newer
/// connection; the rest at the timeout, counted from their accept, which comes late in a
/// flood).
pub(super) fn slow_headers(t: &Target, _dir: &Path, args: &AttackArgs) -> String {
    let addr = t.addr;
    let n = args.slow_connections;
    let timeout = skill_http::HEADER_READ_TIMEOUT;
    let started = Instant::now();
    // Until every connection is closed (the server accepts a flood's connections late, and
    // each one's timeout runs from its accept), the flood's length at least, and at most
    // three header timeouts.
    let flood = started + Duration::from_secs(args.seconds);
    let until = started + Duration::from_secs(args.seconds).max(timeout * 3);
    let threads = 8;
    let workers: Vec<_> = (0..threads)
        .map(|k| {
            let share = n / threads + usize::from(k < n % threads);
            std::thread::spawn(move || {
                // Each connection with when it was opened and, once a write failed, when
                // the server was found to have closed it.
                let mut conns: Vec<(TcpStream, Instant, Option<Duration>)> = (0..share)
                    .filter_map(|_| {
                        let s = TcpStream::connect_timeout(&addr, IO_LIMIT).ok()?;
                        Some((s, Instant::now(), None))
                    })
                    .collect();
                let head = b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\nX-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
                let mut at = 0;
                while Instant::now() < until
                    && (Instant::now() < flood || conns.iter().any(|c| c.2.is_none()))
                {
                    let byte = [head[at % head.len()]];
                    for (s, opened, closed) in &mut conns {
                        if closed.is_none() && s.write(&byte).is_err() {
                            *closed = Some(opened.elapsed());
                        }
                    }
                    at += 1;
                    std::thread::sleep(Duration::from_millis(100));
                }
                conns.into_iter().map(|c| c.2).collect::<Vec<_>>()
            })
        })
        .collect();
    let mut lives = Vec::new();
    for w in workers {
        if let Ok(l) = w.join() {
            lives.extend(l);
        }
    }
    let opened = lives.len();
    let early = lives.iter().flatten().filter(|l| **l < timeout).count();
    let mut at_timeout: Vec<Duration> = lives
        .iter()
        .flatten()
        .copied()
        .filter(|l| *l >= timeout)
        .collect();
    at_timeout.sort();
    let open = lives.iter().filter(|l| l.is_none()).count();
    format!(
        "{n} connections for {} s: {opened} opened; closed by the server: {early} before the \
         {} s header timeout (the cap is {} connections; each probe past it closes one too), \
         {} at {}-{} ms of their life; {open} still open",
        started.elapsed().as_secs(),
        timeout.as_secs(),
        skill_http::DEFAULT_MAX_CONNECTIONS,
        at_timeout.len(),
        at_timeout.first().map_or(0, Duration::as_millis),
        at_timeout.last().map_or(0, Duration::as_millis),
    )
}

/// Item 5: `skill-server mcp` whose host closes its input with answers unread.
pub(super) fn stdio(bin: &Path, sources: &[PathBuf]) -> String {
    let mut cmd = Command::new(bin);
    cmd.args(["mcp", "--no-watch"]);
    for s in sources {
        cmd.arg("--skills").arg(s);
    }
    let Ok(mut child) = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    else {
        return "cannot start skill-server mcp".to_owned();
    };
    let mut lines = String::from(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"attack","version":"0"}}}"#,
    );
    lines.push('\n');
    lines.push_str(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    lines.push('\n');
    for id in 2..400 {
        lines.push_str(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#
        ));
        lines.push('\n');
    }
    let wrote = child
        .stdin
        .take()
        .map(|mut input| input.write_all(lines.as_bytes()).is_ok());
    // The input is closed here (dropped); the output is never read.
    let closed = Instant::now();
    let limit = Duration::from_secs(30);
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return format!(
                "exited {} ms after its input closed ({status}; wrote {}); the drain is 5 s",
                closed.elapsed().as_millis(),
                kib(lines.len()),
            );
        }
        if closed.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return format!(
                "still running {} s after its input closed (killed); wrote: {wrote:?}",
                limit.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Item 8: `serve` over `n` generated skills: time to listen, RSS, readiness.
pub(super) fn scale(bin: &Path, dir: &Path, n: usize) -> Result<String, String> {
    let skills = dir.join("scale");
    std::fs::create_dir_all(&skills).map_err(|e| e.to_string())?;
    crate::bench::generate::write_pack(&skills, n)?;
    let (target, ready) = match Target::start(bin, &[skills]) {
        Ok(t) => t,
        Err(e) => return Ok(format!("{n} generated skills: did not start: {e}")),
    };
    std::thread::sleep(Duration::from_millis(500));
    let r = read_answer(send(target.addr, "GET", "/v1/ready", &[], b""));
    let peak = target.row("8", String::new()).peak_mib;
    Ok(format!(
        "{n} generated (small) skills: listening after {} ms, /v1/ready {}, peak RSS {peak:.1} MiB (real-sized skills: cargo xtask bench scale)",
        ready.as_millis(),
        r.status
    ))
}
