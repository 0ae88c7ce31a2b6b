//! MCP over a pair of byte streams, one JSON-RPC message per line: the stdio transport
//! ([`crate::serve_stdio`]). rmcp's own line transport dropped what it could not read
//! without a word (a client waiting for an answer waited for ever), and ignored a last
//! message with no newline before the end of input. This one answers every line:
//!
//! - a line that is not JSON gets `-32700` (Parse error, `id` null), one that is JSON but
//!   not a message `-32600` (Invalid request, its `id` when readable); see `jsonrpc`;
//! - a line longer than [`MAX_LINE_BYTES`] gets `-32600` (`id` null) as soon as it is
//!   known to be too long, and the rest of it is skipped up to its newline, never held;
//! - blank lines are skipped, a trailing `\r` and a leading UTF-8 byte-order mark are
//!   ignored, and the last message is read whether or not a newline ends it.
//!
//! Writes go through one task that owns the output, each line whole, so an error answer
//! and a response never interleave on the wire. Lines are written in the order they reach
//! that task's queue: rmcp sends each message from a task of its own, so two messages sent
//! at once (a notification and a response) may reach it in either order.
//!
//! When the input ends, answers still to be written have [`STDIO_CLOSE_DRAIN`] from then to go
//! out, all of them together (rmcp's own wait for answers in flight included); past it
//! they are dropped and the transport closes, so a host that closed the server's input
//! and no longer reads its output does not keep it running. (It ran on for good once the
//! unread output filled its pipe, 64 KB.)

use std::io;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RoleServer;
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use crate::jsonrpc::{self, Rejection};
use crate::{Error, SkillsServer};

/// Longest line (one message) a client may send, in bytes, not counting its `\n`: 16 MiB,
/// rmcp's own stdio limit (and its HTTP client's largest event).
pub(crate) const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// Lines waiting for the output at once; past it, a sender waits (a client that stops
/// reading holds the server's output, not its memory).
const OUTPUT_QUEUE: usize = 64;
/// How long, once the input has ended (or the server stops), answers still to be written
/// have to go out, before the transport gives up on a client that no longer reads and
/// closes: 5 s, rmcp's own wait for answers in flight at the end of input.
pub const STDIO_CLOSE_DRAIN: Duration = Duration::from_secs(5);

/// This process's standard output, written on a duplicate of its descriptor (Unix): a
/// write the client never reads then blocks only the thread making it. Through
/// `tokio::io::stdout()` it held the lock of std's `Stdout` meanwhile, and the process,
/// flushing `Stdout` on its way out, waited for that lock for good.
pub(crate) fn stdout() -> Box<dyn AsyncWrite + Send + Unpin> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        match std::io::stdout().as_fd().try_clone_to_owned() {
            Ok(fd) => return Box::new(tokio::fs::File::from_std(std::fs::File::from(fd))),
            Err(e) => {
                tracing::warn!("cannot duplicate standard output ({e}); writing to it as it is")
            }
        }
    }
    Box::new(tokio::io::stdout())
}

/// Serve `server` on `read` and `write` until the client closes `read`.
pub(crate) async fn serve<R, W>(server: SkillsServer, read: R, write: W) -> Result<(), Error>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let running = server
        .serve(LineTransport::new(read, write, MAX_LINE_BYTES))
        .await
        .map_err(|e| Error::Session(e.to_string()))?;
    running
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| Error::Session(e.to_string()))
}

/// A line for the output, and who waits to hear it was written (no one for an error
/// answer).
struct Outgoing {
    line: Vec<u8>,
    written: Option<oneshot::Sender<io::Result<()>>>,
}

/// Newline-delimited JSON-RPC over `R` (in) and a writer task (out).
struct LineTransport<R> {
    read: BufReader<R>,
    /// The line read so far (`receive` may be cancelled mid-line: the rest comes next
    /// time).
    line: Vec<u8>,
    /// Skipping the rest of a line already refused as too long.
    discarding: bool,
    max_line: usize,
    /// An error answer not yet queued for the output.
    reply: Option<Vec<u8>>,
    /// The writer task's queue (`None` once closed).
    out: Option<mpsc::Sender<Outgoing>>,
    writer: Option<tokio::task::JoinHandle<()>>,
    /// When unwritten answers are given up: set (to [`STDIO_CLOSE_DRAIN`] from then) when the
    /// input ends or the transport closes.
    deadline: watch::Sender<Option<Instant>>,
}

/// Ready at the deadline `deadline` is given (never, if none is).
async fn given_up(mut deadline: watch::Receiver<Option<Instant>>) {
    loop {
        let set = *deadline.borrow_and_update();
        if let Some(at) = set {
            return tokio::time::sleep_until(at).await;
        }
        if deadline.changed().await.is_err() {
            return std::future::pending().await;
        }
    }
}

/// What one bounded read of a line found.
enum LineRead {
    /// A whole line is in `line` (its `\n` not included).
    Line,
    /// The line is over the limit: refused, and skipped up to its newline.
    TooLong,
    /// The end of input (what is in `line` has no newline after it).
    Eof,
    Io(io::Error),
}

/// What to do after a chunk, once its borrow of the reader has ended.
enum Step {
    Line,
    More,
    EndDiscard,
    TooLong { ended: bool },
}

impl<R: AsyncRead + Unpin> LineTransport<R> {
    fn new<W>(read: R, write: W, max_line: usize) -> Self
    where
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (out, queue) = mpsc::channel(OUTPUT_QUEUE);
        LineTransport {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            max_line,
            reply: None,
            out: Some(out),
            writer: Some(tokio::spawn(write_lines(write, queue))),
            deadline: watch::Sender::new(None),
        }
    }

    /// The drain begins now, unless it already has: the deadline of what is unwritten.
    fn begin_drain(&self) -> Instant {
        let mut at = Instant::now() + STDIO_CLOSE_DRAIN;
        self.deadline.send_if_modified(|deadline| match deadline {
            Some(set) => {
                at = *set;
                false
            }
            None => {
                *deadline = Some(at);
                true
            }
        });
        at
    }

    /// Read one line into `self.line`, never holding more than `max_line` bytes of it.
    /// Cancellation-safe: a chunk is copied and consumed with no await between, so a
    /// cancelled read leaves its partial line for the next call.
    async fn read_line(&mut self) -> LineRead {
        loop {
            let (consumed, step) = {
                let available = match self.read.fill_buf().await {
                    Ok(available) => available,
                    Err(e) => return LineRead::Io(e),
                };
                if available.is_empty() {
                    return LineRead::Eof;
                }
                let newline = available.iter().position(|b| *b == b'\n');
                let content = newline.unwrap_or(available.len());
                let consumed = newline.map_or(content, |i| i + 1);
                let step = if self.discarding {
                    if newline.is_some() {
                        Step::EndDiscard
                    } else {
                        Step::More
                    }
                } else if self.line.len().saturating_add(content) > self.max_line {
                    self.line.clear();
                    Step::TooLong {
                        ended: newline.is_some(),
                    }
                } else {
                    self.line.extend_from_slice(&available[..content]);
                    if newline.is_some() {
                        Step::Line
                    } else {
                        Step::More
                    }
                };
                (consumed, step)
            };
            self.read.consume(consumed);
            match step {
                Step::Line => return LineRead::Line,
                Step::More => {}
                Step::EndDiscard => self.discarding = false,
                Step::TooLong { ended } => {
                    self.discarding = !ended;
                    return LineRead::TooLong;
                }
            }
        }
    }

    /// Queue `rejection` as the answer to send before reading on.
    fn refuse(&mut self, rejection: &Rejection) {
        tracing::debug!(code = rejection.code.0, message = %rejection.message, "refused a line");
        let mut line = rejection.to_json().into_bytes();
        line.push(b'\n');
        self.reply = Some(line);
    }
}

/// Ready when `read` has nothing more to give: the end of input is next. Pending for good
/// while input is waiting to be read (it is not consumed).
async fn input_ends<R: AsyncRead + Unpin>(read: &mut BufReader<R>) {
    match read.fill_buf().await {
        Ok([]) | Err(_) => {}
        Ok(_) => std::future::pending().await,
    }
}

/// The message of one line (`None`: a blank line), or why it is refused.
fn message_of(line: &[u8]) -> Option<Result<ClientJsonRpcMessage, Rejection>> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    Some(jsonrpc::check(line))
}

/// Write each queued line whole, in order, and tell its sender how it went; after a
/// failed write every later line fails the same way.
async fn write_lines<W: AsyncWrite + Unpin>(mut write: W, mut queue: mpsc::Receiver<Outgoing>) {
    let mut failed: Option<io::ErrorKind> = None;
    while let Some(outgoing) = queue.recv().await {
        let result = match failed {
            Some(kind) => Err(io::Error::new(
                kind,
                "an earlier write to the client failed",
            )),
            None => {
                let result = match write.write_all(&outgoing.line).await {
                    Ok(()) => write.flush().await,
                    Err(e) => Err(e),
                };
                failed = result.as_ref().err().map(io::Error::kind);
                result
            }
        };
        if let Some(written) = outgoing.written {
            let _ = written.send(result);
        }
    }
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "the transport is closed")
}

impl<R: AsyncRead + Send + Unpin + 'static> Transport<RoleServer> for LineTransport<R> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = self.out.clone();
        let give_up = given_up(self.deadline.subscribe());
        let line = serde_json::to_vec(&item).map(|mut line| {
            line.push(b'\n');
            line
        });
        async move {
            let out = out.ok_or_else(closed)?;
            let (written, done) = oneshot::channel();
            let outgoing = Outgoing {
                line: line.map_err(io::Error::from)?,
                written: Some(written),
            };
            let sent = async {
                out.send(outgoing).await.map_err(|_| closed())?;
                done.await.map_err(|_| closed())?
            };
            tokio::select! {
                sent = sent => sent,
                () = give_up => Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "the client read no more of the output within {} s of the end of its \
                         input: the message was dropped",
                        STDIO_CLOSE_DRAIN.as_secs()
                    ),
                )),
            }
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            if self.reply.is_some() {
                // Cancellation-safe: `reserve` loses nothing when dropped, and the answer
                // is taken only once it has its place in the queue. While the queue is
                // full, the end of input right after the refused line ends the session
                // (the answer is then dropped at close if it never finds room).
                let out = self.out.clone()?;
                let permit = tokio::select! {
                    permit = out.reserve() => permit.ok()?,
                    () = input_ends(&mut self.read) => {
                        self.begin_drain();
                        return None;
                    }
                };
                if let Some(line) = self.reply.take() {
                    permit.send(Outgoing {
                        line,
                        written: None,
                    });
                }
            }
            match self.read_line().await {
                LineRead::Line => {}
                LineRead::Eof if self.line.is_empty() => {
                    self.begin_drain();
                    return None;
                }
                // The last message, with no newline after it.
                LineRead::Eof => {}
                LineRead::TooLong => {
                    self.refuse(&Rejection::invalid_request(format!(
                        "the message is over {} bytes, the longest line this server reads; \
                         it was skipped up to its newline",
                        self.max_line
                    )));
                    continue;
                }
                LineRead::Io(e) => {
                    tracing::error!("cannot read from the client: {e}");
                    self.begin_drain();
                    return None;
                }
            }
            let message = message_of(&self.line);
            self.line.clear();
            match message {
                Some(Ok(message)) => return Some(message),
                Some(Err(rejection)) => self.refuse(&rejection),
                None => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // The writer ends once every sender is gone and the queue is written.
        if let Some(out) = self.out.take()
            && let Some(line) = self.reply.take()
        {
            let _ = out.try_send(Outgoing {
                line,
                written: None,
            });
        }
        let deadline = self.begin_drain();
        if let Some(writer) = self.writer.take() {
            let abort = writer.abort_handle();
            if tokio::time::timeout_at(deadline, writer).await.is_err() {
                tracing::warn!(
                    "the client read no more of the output within {} s of the end of its input: \
                     unwritten messages were dropped",
                    STDIO_CLOSE_DRAIN.as_secs()
                );
                abort.abort();
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
