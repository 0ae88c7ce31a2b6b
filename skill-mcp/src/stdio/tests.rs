//! The stdio transport against a hostile client, in raw bytes over an in-process pipe: a
//! real server (one small skill) on one end, the test writing lines and reading answers on
//! the other.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

use super::{MAX_LINE_BYTES, OUTPUT_QUEUE, STDIO_CLOSE_DRAIN, serve};
use crate::{McpConfig, SkillsServer};

/// Long enough for anything here on a loaded machine; reached only by a failing test.
const ANSWER_BOUND: std::time::Duration = std::time::Duration::from_secs(30);

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// An engine over one skill in a temporary folder (kept alive with the engine's test).
fn engine() -> (tempfile::TempDir, Arc<skill_runtime::Engine>) {
    let dir = tempfile::tempdir().unwrap();
    let skill = dir.path().join("demo");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: demo\ndescription: A skill to serve.\n---\nDo the thing.\n",
    )
    .unwrap();
    let mut config =
        skill_runtime::EngineConfig::new(skill_runtime::registry::RegistryConfig::with_sources(
            vec![skill_runtime::registry::Source::new(dir.path(), "project")],
        ));
    config.watch = None;
    config.schedule = None;
    (dir, skill_runtime::Engine::start(config).unwrap())
}

/// A client's ends of a server on the stdio transport: what it writes (the server's
/// stdin), what it reads (the server's stdout, line by line), and the server's task.
struct Client {
    stdin: DuplexStream,
    answers: Answers,
    served: tokio::task::JoinHandle<Result<(), crate::Error>>,
    _dir: tempfile::TempDir,
}

/// The server's output, message by message.
struct Answers(BufReader<DuplexStream>);

fn start() -> Client {
    start_with_output_buffer(1 << 16)
}

/// [`start`] with `buffer` bytes between the server's output and the client.
fn start_with_output_buffer(buffer: usize) -> Client {
    let (dir, engine) = engine();
    let (stdin, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, stdout) = tokio::io::duplex(buffer);
    let server = SkillsServer::new(engine, McpConfig::default());
    let served = tokio::spawn(serve(server, server_in, server_out));
    Client {
        stdin,
        answers: Answers(BufReader::new(stdout)),
        served,
        _dir: dir,
    }
}

impl Client {
    async fn send(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).await.unwrap();
    }

    async fn next(&mut self) -> Option<Value> {
        self.answers.next().await
    }

    async fn until(&mut self, id: i64) -> Vec<Value> {
        self.answers.until(id).await
    }

    async fn initialize(&mut self) {
        self.send(format!("{INITIALIZE}\n").as_bytes()).await;
        let answers = self.until(1).await;
        assert!(answers[0].get("result").is_some(), "{answers:?}");
        self.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .await;
    }
}

impl Answers {
    /// The next message the server wrote, or `None` at the end of its output.
    async fn next(&mut self) -> Option<Value> {
        let mut line = String::new();
        let read = tokio::time::timeout(ANSWER_BOUND, self.0.read_line(&mut line))
            .await
            .expect("no answer in time")
            .unwrap();
        if read == 0 {
            return None;
        }
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}")))
    }

    /// Messages until (and with) the answer to `id`.
    async fn until(&mut self, id: i64) -> Vec<Value> {
        let mut seen = Vec::new();
        while let Some(message) = self.next().await {
            let done = message["id"] == id;
            seen.push(message);
            if done {
                return seen;
            }
        }
        panic!("the output ended before the answer to {id}: {seen:?}");
    }
}

/// The error codes and ids of the error answers among `messages`.
fn errors(messages: &[Value]) -> Vec<(i64, Value)> {
    messages
        .iter()
        .filter_map(|m| {
            let code = m["error"]["code"].as_i64()?;
            Some((code, m["id"].clone()))
        })
        .collect()
}

fn ping(id: i64) -> Vec<u8> {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n").into_bytes()
}

/// A line that is not JSON is answered `-32700` and one that is JSON but no message
/// `-32600` (with its id when readable), and the session goes on; garbage was dropped
/// without a word, so a client waiting for an answer waited for ever.
#[tokio::test(flavor = "multi_thread")]
async fn every_malformed_line_is_answered_and_the_session_goes_on() {
    let mut client = start();
    client.initialize().await;
    client.send(b"garbage\n").await;
    client.send(b"{\"x\":\"\xff\"}\n").await;
    client
        .send(b"{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"\\ud800\"}\r\n")
        .await;
    client.send(b"[]\n").await;
    client.send(br#"{"jsonrpc":"2.0","id":5,"method":7}"#).await;
    client.send(b"\n").await;
    client
        .send(br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#)
        .await;
    client.send(b"\n\n  \r\n").await;
    client.send(&ping(6)).await;
    let answers = client.until(6).await;
    let by_code_and_id = |(code, id): &(i64, Value)| (*code, id.to_string());
    let mut got = errors(&answers);
    got.sort_by_key(by_code_and_id);
    let mut want = vec![
        (-32700, Value::Null),
        (-32700, Value::Null),
        (-32700, Value::Null),
        (-32600, Value::Null),
        (-32600, Value::Null),
        (-32600, json!(5)),
    ];
    want.sort_by_key(by_code_and_id);
    assert_eq!(got, want, "{answers:?}");
    assert!(
        answers.last().unwrap().get("result").is_some(),
        "{answers:?}"
    );
    // Malformed params of a method the server serves are Invalid params.
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "select_skills", "arguments": [1, 2]}});
    client.send(format!("{call}\n").as_bytes()).await;
    let answers = client.until(7).await;
    assert_eq!(errors(&answers), vec![(-32602, json!(7))], "{answers:?}");
    drop(client.stdin);
    client.served.await.unwrap().unwrap();
}

/// A line of [`MAX_LINE_BYTES`] is read; one byte more is answered `-32600` (id null) and
/// skipped up to its newline, and the next line is read as usual.
#[tokio::test(flavor = "multi_thread")]
async fn an_over_long_line_is_answered_and_skipped_to_its_newline() {
    let mut client = start();
    client.initialize().await;
    let padded = |id: i64, len: usize| {
        let mut line = ping(id);
        line.pop();
        line.resize(len, b' ');
        line.push(b'\n');
        line
    };
    let at_limit = padded(2, MAX_LINE_BYTES);
    let over = padded(3, MAX_LINE_BYTES + 1);
    let Client {
        mut stdin,
        answers: mut output,
        served,
        _dir,
    } = client;
    let writer = tokio::spawn(async move {
        stdin.write_all(&at_limit).await.unwrap();
        stdin.write_all(&over).await.unwrap();
        stdin.write_all(&ping(4)).await.unwrap();
        stdin
    });
    let answers = output.until(2).await;
    assert!(
        answers.last().unwrap().get("result").is_some(),
        "{answers:?}"
    );
    let answers = output.until(4).await;
    assert_eq!(errors(&answers), vec![(-32600, Value::Null)], "{answers:?}");
    let refusal = answers[0]["error"]["message"].as_str().unwrap_or_default();
    assert!(refusal.contains(&MAX_LINE_BYTES.to_string()), "{refusal}");
    drop(writer.await.unwrap());
    served.await.unwrap().unwrap();
}

/// The last message before the end of input is served without a newline after it (it
/// was ignored), and a last line of garbage is answered.
#[tokio::test(flavor = "multi_thread")]
async fn a_last_message_without_a_newline_is_served() {
    let mut ping9 = ping(9);
    ping9.pop();
    for (last, want) in [
        (ping9, json!({"id": 9, "result": {}})),
        (b"nonsense".to_vec(), json!({"id": null, "code": -32700})),
    ] {
        let mut client = start();
        client.initialize().await;
        client.send(&last).await;
        client.stdin.shutdown().await.unwrap();
        let mut rest = Vec::new();
        while let Some(message) = client.next().await {
            rest.push(message);
        }
        let got = rest.iter().find(|m| m["id"] == want["id"]);
        let got = got.unwrap_or_else(|| panic!("no answer to the last message: {rest:?}"));
        match want.get("code") {
            Some(code) => assert_eq!(&got["error"]["code"], code, "{rest:?}"),
            None => assert_eq!(got["result"], want["result"], "{rest:?}"),
        }
        client.served.await.unwrap().unwrap();
    }
}

/// A client that sends more garbage than the output queue holds, through a small output
/// pipe it drains only as it goes, loses no answer (each line is answered, in order).
/// That the reading waits for room when nothing is drained is not shown here.
#[tokio::test(flavor = "multi_thread")]
async fn answers_past_the_output_queue_wait_and_none_is_lost() {
    let mut client = start_with_output_buffer(256);
    client.initialize().await;
    let lines = 2 * OUTPUT_QUEUE + 1;
    let Client {
        mut stdin,
        answers: mut output,
        served,
        _dir,
    } = client;
    let writer = tokio::spawn(async move {
        for _ in 0..lines {
            stdin.write_all(b"not json\n").await.unwrap();
        }
        stdin.write_all(&ping(2)).await.unwrap();
        stdin
    });
    let answers = output.until(2).await;
    assert_eq!(errors(&answers), vec![(-32700, Value::Null); lines]);
    drop(writer.await.unwrap());
    served.await.unwrap().unwrap();
}

/// A host that closes the server's input and reads none of its output: the session ends
/// [`STDIO_CLOSE_DRAIN`] after the end of input, not sooner (the host may still read) and
/// not later, with answers unwritten. (rmcp's wait for answers in flight and then the
/// transport's own ran one after the other: twice the drain.)
#[tokio::test(start_paused = true)]
async fn the_end_of_input_ends_the_session_at_the_drain_whatever_is_unread() {
    let mut client = start_with_output_buffer(256);
    client.initialize().await;
    // Far more answers than the pipe, the queue and the writer hold.
    for id in 2..(4 * OUTPUT_QUEUE as i64) {
        client.send(&ping(id)).await;
    }
    let Client {
        stdin,
        answers,
        served,
        _dir,
    } = client;
    let closed = tokio::time::Instant::now();
    drop(stdin);
    tokio::time::timeout(ANSWER_BOUND, served)
        .await
        .expect("the session did not end")
        .unwrap()
        .unwrap();
    let took = closed.elapsed();
    assert!(
        took >= STDIO_CLOSE_DRAIN && took < STDIO_CLOSE_DRAIN + Duration::from_secs(1),
        "the session ended {took:?} after the end of input"
    );
    drop(answers);
}

/// The same when the output is full of error answers: the reading, waiting for room in the
/// output for the answer to the last line, sees that the input has ended after it (it
/// waited for room for good). One line is in the writer (whose pipe holds a byte), a
/// queue's worth queued, and the last waits.
#[tokio::test(start_paused = true)]
async fn the_end_of_input_is_seen_while_an_error_answer_waits_for_room() {
    let client = start_with_output_buffer(1);
    let Client {
        mut stdin,
        answers,
        served,
        _dir,
    } = client;
    for _ in 0..OUTPUT_QUEUE + 2 {
        stdin.write_all(b"not json\n").await.unwrap();
    }
    let closed = tokio::time::Instant::now();
    drop(stdin);
    // The input ended before any `initialize`: the session fails, at once.
    let ended = tokio::time::timeout(ANSWER_BOUND, served)
        .await
        .expect("the session did not end")
        .unwrap();
    assert!(ended.is_err(), "{ended:?}");
    assert!(
        closed.elapsed() <= STDIO_CLOSE_DRAIN,
        "{:?}",
        closed.elapsed()
    );
    drop(answers);
}
