//! Helpers shared by the binary's integration tests.
#![allow(clippy::unwrap_used, dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The repository root.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// One request on its own connection; the status and the body.
pub fn request(addr: &str, head: &str, body: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body.as_bytes()).unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let status = raw.split(' ').nth(1).unwrap().parse().unwrap();
    let body = raw.split_once("\r\n\r\n").unwrap().1.to_owned();
    (status, body)
}

/// `GET path`.
pub fn get(addr: &str, path: &str) -> (u16, String) {
    request(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"),
        "",
    )
}

/// `POST path` with a JSON body.
pub fn post(addr: &str, path: &str, json: &str) -> (u16, String) {
    request(
        addr,
        &format!(
            "POST {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            json.len()
        ),
        json,
    )
}

/// Write `text` to `root/rel`, creating its folders.
pub fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Start the real `skill-server` with `args` (and `env`) from the repository root; wait for
/// its first stdout line and return the child, the address it listens on, and a thread
/// that collects its logs (stderr, drained so the pipe never fills) until it exits.
pub fn spawn_serve(
    args: &[&str],
    env: &[(&str, &str)],
) -> (Child, String, std::thread::JoinHandle<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_skill-server"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(repo())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let logs = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    // "skill-server: N skills (...) on http://127.0.0.1:PORT/v1/ ..."
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    (child, addr, logs)
}

/// Send SIGTERM to `child` straight away (no `kill` process to start) and wait for it to
/// exit, at most 20 s: a child that does not stop is killed and the test fails instead of
/// hanging.
#[cfg(unix)]
pub fn sigterm_and_wait(mut child: Child) -> std::process::ExitStatus {
    use rustix::process::{Pid, Signal, kill_process};
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
    kill_process(pid, Signal::TERM).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let Ok(status) = rx.recv_timeout(Duration::from_secs(20)) else {
        let _ = kill_process(pid, Signal::KILL);
        panic!("the process did not stop within 20 s of SIGTERM");
    };
    status.unwrap()
}
