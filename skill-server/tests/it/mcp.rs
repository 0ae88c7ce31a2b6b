//! `skill-server mcp` as a host starts it: a child process speaking MCP over its stdin and
//! stdout, driven by rmcp's own client. It lists the bundled pack's skills through the
//! skills extension, reads a `SKILL.md` whose size matches the listing, and lists the tools.

use rmcp::ServiceExt;
use rmcp::model::{ReadResourceRequestParams, ResourceContents, SkillResources};
use rmcp::transport::TokioChildProcess;

use crate::common::repo;

#[tokio::test(flavor = "current_thread")]
async fn a_host_reads_skills_from_skill_server_mcp_over_stdio() {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_skill-server"));
    command
        .args(["mcp", "--no-watch", "--skills", "packs/agentskills"])
        .current_dir(repo());
    let transport = TokioChildProcess::new(command).unwrap();
    let client = ().serve(transport).await.unwrap();

    let skills = client.list_all_skills().await.unwrap();
    let pdf = skills
        .iter()
        .find(|s| s.uri.ends_with("/pdf-forms/SKILL.md"))
        .unwrap_or_else(|| panic!("no pdf-forms in {:?}", skills.iter().map(|s| &s.uri)));
    let SkillResources::Files(files) = &pdf.resources else {
        panic!("pdf-forms lists no files");
    };
    let entry = files
        .iter()
        .find(|f| f.uri == pdf.uri)
        .unwrap_or_else(|| panic!("SKILL.md not among {files:?}"));
    let read = client
        .read_resource(ReadResourceRequestParams::new(pdf.uri.clone()))
        .await
        .unwrap();
    let Some(ResourceContents::TextResourceContents { text, .. }) = read.contents.first() else {
        panic!("SKILL.md is not text: {read:?}");
    };
    let on_disk = std::fs::read(repo().join("packs/agentskills/pdf-forms/SKILL.md")).unwrap();
    assert_eq!(text.as_bytes(), on_disk.as_slice());
    assert_eq!(entry.size, on_disk.len() as u64, "{entry:?}");
    assert!(
        entry.digest.starts_with("sha256:") && entry.digest.len() == 71,
        "{entry:?}"
    );

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for tool in [
        "get_skill",
        "load_skill",
        "use_skill",
        "search_skills",
        "select_skills",
    ] {
        assert!(names.contains(&tool), "{tool} not in {names:?}");
    }
    client.cancel().await.unwrap();
}

/// SIGTERM stops `skill-server mcp` cleanly (exit 0, the engine shut down) once it has
/// answered a message, as it does `serve`; it used to kill it.
#[cfg(unix)]
#[test]
fn skill_server_mcp_stops_cleanly_on_sigterm() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_skill-server"))
        .args(["mcp", "--no-watch", "--skills", "packs/agentskills"])
        .current_dir(repo())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Any answer shows the server runs; the protocol itself is rmcp's test above.
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        )
        .unwrap();
    stdin.write_all(b"\n").unwrap();
    stdin.flush().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("\"id\":1"), "{line}");
    let status = crate::common::sigterm_and_wait(child);
    drop(stdin);
    assert!(status.success(), "{status:?}");
}

/// A host that closes `skill-server mcp`'s input and never reads its output (far more than
/// a pipe's 64 KB of answers unread) sees it exit within the stdio drain,
/// `skill_mcp::STDIO_CLOSE_DRAIN`, from then (with a margin for a loaded machine). It ran on
/// for good: its last unwritten answer held the lock of standard output, which the process
/// waited for on its way out.
#[cfg(all(unix, feature = "mcp"))]
#[test]
fn skill_server_mcp_exits_within_the_drain_when_its_input_closes_unread() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let mut child = Command::new(env!("CARGO_BIN_EXE_skill-server"))
        .args(["mcp", "--no-watch", "--skills", "packs/agentskills"])
        .current_dir(repo())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(
            br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        )
        .unwrap();
    stdin.write_all(b"\n").unwrap();
    stdin.flush().unwrap();
    // The server is up: from here on nothing is read.
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"id\":0"), "{line}");
    let mut requests = b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n".to_vec();
    // Each `tools/list` answer is some 3 KB: 300 of them are 900 KB.
    for id in 1..=300 {
        requests.extend_from_slice(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\"}}\n").as_bytes(),
        );
    }
    stdin.write_all(&requests).unwrap();
    drop(stdin);
    let closed = Instant::now();
    let status = exit_within(child, skill_mcp::STDIO_CLOSE_DRAIN + Duration::from_secs(5));
    let took = closed.elapsed();
    assert!(status.success(), "took {took:?}");
    drop(stdout);
}

/// The drain counts from the host's hang-up, not from when the server reads the end of its
/// input: a host that writes its messages and closes the pipe at once, while the engine is
/// still loading a pack that takes seconds (here [`SLOW_PACK_FILES`] files of 4 MiB), and
/// never reads, sees `skill-server mcp` exit within `skill_mcp::STDIO_CLOSE_DRAIN` of the
/// close (with a margin for a loaded machine, smaller than the load). It exited the load's
/// time later (7.0 s for the 5 s drain in `cargo xtask attack`).
#[cfg(all(unix, feature = "mcp"))]
#[test]
fn skill_server_mcp_counts_the_drain_from_the_hang_up_even_while_it_loads() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let mut headings = String::from("---\nname: big-0\ndescription: Headings only.\n---\n");
    let mut k = 0;
    while headings.len() < (4 << 20) - 64 {
        headings.push_str(&format!("# h{k}\n"));
        k += 1;
    }
    for i in 0..SLOW_PACK_FILES {
        let text = headings.replacen("name: big-0", &format!("name: big-{i}"), 1);
        crate::common::write(dir.path(), &format!("big-{i}/SKILL.md"), &text);
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_skill-server"))
        .args(["mcp", "--no-watch", "--skills"])
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut requests = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#.to_vec();
    requests
        .extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    for id in 1..=300 {
        requests.extend_from_slice(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\"}}\n").as_bytes(),
        );
    }
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&requests).unwrap();
    drop(stdin);
    let closed = Instant::now();
    let stdout = child.stdout.take();
    let status = exit_within(
        child,
        skill_mcp::STDIO_CLOSE_DRAIN + Duration::from_millis(1_500),
    );
    let took = closed.elapsed();
    assert!(status.success(), "took {took:?}");
    drop(stdout);
}

/// `child`'s exit status, once it exits within `bound` of now; past it, the process is
/// killed and the test fails.
#[cfg(all(unix, feature = "mcp"))]
fn exit_within(
    mut child: std::process::Child,
    bound: std::time::Duration,
) -> std::process::ExitStatus {
    let pid = rustix::process::Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let Ok(status) = rx.recv_timeout(bound) else {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        panic!("skill-server mcp still ran {bound:?} after its input closed");
    };
    status.unwrap()
}

/// 4 MiB files in the pack of the hang-up test: enough that loading it takes longer than
/// that test's margin.
#[cfg(all(unix, feature = "mcp"))]
const SLOW_PACK_FILES: usize = 4;

/// `serve`'s `/mcp` checks a browser's `Origin` against the configured `allowed_hosts`
/// (the list of the `Host` check): a page on a listed name, on loopback or on the server's
/// own address is served, any other site gets `403 forbidden_origin`, `Origin: null` too;
/// a client that sends no `Origin` is served. (Every origin was served.)
#[cfg(unix)]
#[test]
fn serve_mcp_refuses_origins_outside_allowed_hosts() {
    use crate::common::{request, sigterm_and_wait, spawn_serve};
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("skills.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:0\"\nwatch = false\nallowed_hosts = [\"skills.example.com\"]\n\
             [[sources]]\npath = \"{}\"\n",
            repo().join("packs/actions").display()
        ),
    )
    .unwrap();
    let config = config.display().to_string();
    let (child, addr, _logs) = spawn_serve(&["serve", "--config", &config], &[]);
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let post = |origin: Option<&str>| {
        let origin = origin
            .map(|o| format!("Origin: {o}\r\n"))
            .unwrap_or_default();
        request(
            &addr,
            &format!(
                "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\n{origin}Content-Length: {}\r\n\r\n",
                initialize.len()
            ),
            initialize,
        )
    };
    for origin in ["http://attacker.example", "null"] {
        let (status, body) = post(Some(origin));
        assert_eq!(status, 403, "{origin}: {body}");
        assert!(body.contains("\"forbidden_origin\""), "{body}");
    }
    let own = format!("http://{addr}");
    for origin in [
        None,
        Some("https://skills.example.com"),
        Some("http://localhost:3000"),
        Some(own.as_str()),
    ] {
        let (status, body) = post(origin);
        assert_eq!(status, 200, "{origin:?}: {body}");
    }
    assert!(sigterm_and_wait(child).success());
}
