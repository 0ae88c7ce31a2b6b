//! What a connection may hold, and for how long: memory held for answers, writes that make
//! no progress, and connections that only wait for a request head.
//!
//! * **Answer memory** ([`Answers`]): a response body of known size takes that many bytes
//!   of [`HttpConfig::max_answer_bytes_held`] until it has been written: it is handed to
//!   hyper in [`ANSWER_CHUNK`] pieces, each only when hyper's write buffer
//!   ([`CONN_BUFFER_BYTES`]) takes more, and what hyper may still buffer after the last
//!   piece stays in the budget until the connection's writes are flushed. An answer that
//!   does not fit is `503 overloaded` at once. So the answer memory a client that does not
//!   read can hold is its one answer, for at most the write timeout, and all clients
//!   together hold at most the budget (answers of unknown size, event streams, are written
//!   as they come and are not counted).
//! * **Writes that make no progress** ([`WriteTimeout`]): a write that stays pending for
//!   [`HttpConfig::write_timeout`] (the client reads nothing) fails, and the connection
//!   closes with whatever answer it held.
//! * **Connections waiting for a request head** ([`Conns`]): at
//!   [`HttpConfig::max_connections`], a new connection closes the one that has waited
//!   longest for a request head (a new one that sent nothing complete yet, or one idle
//!   between requests), so headers sent a byte at a time on many connections do not hold
//!   the slots of normal requests for the header read timeout. A connection answering a
//!   request is never closed this way; when all are, new ones wait in the accept queue.
//!
//! [`HttpConfig::max_answer_bytes_held`]: super::HttpConfig::max_answer_bytes_held
//! [`HttpConfig::write_timeout`]: super::HttpConfig::write_timeout
//! [`HttpConfig::max_connections`]: super::HttpConfig::max_connections

use std::collections::HashMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::Response;
use http_body_util::BodyExt;
use hyper::body::{Body as _, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

use super::response::{ApiError, Body};

/// The largest piece of an answer handed to hyper at once.
pub(crate) const ANSWER_CHUNK: usize = 16 * 1024;

/// hyper's buffer per connection (`max_buf_size`): what it queues for writing before it
/// takes no more of an answer, and the largest request head it reads.
pub(crate) const CONN_BUFFER_BYTES: usize = 64 * 1024;

/// What hyper may still hold of an answer once the answer has handed over its last piece:
/// kept in the budget until the connection's writes are flushed.
const RESIDUE_BYTES: usize = CONN_BUFFER_BYTES + ANSWER_CHUNK;

/// The budget of answer bytes held for clients, over all connections.
#[derive(Debug)]
pub(crate) struct Answers {
    budget: Arc<Semaphore>,
    max: usize,
}

impl Answers {
    /// A budget of `max` bytes (at least one chunk).
    pub(crate) fn new(max: usize) -> Self {
        let max = max.clamp(ANSWER_CHUNK, Semaphore::MAX_PERMITS);
        Answers {
            budget: Arc::new(Semaphore::new(max)),
            max,
        }
    }

    /// The response with its body taking its size from the budget until it is handed
    /// over, in chunks; `503 overloaded` when it does not fit now. A body of unknown size
    /// (an event stream, a mounted service's stream) is left as it is.
    pub(crate) fn hold(
        &self,
        resp: Response<Body>,
        conn: Option<Arc<ConnState>>,
    ) -> Response<Body> {
        let exact = resp.body().size_hint().exact();
        let (parts, body) = resp.into_parts();
        let Some(size) = exact.and_then(|n| usize::try_from(n).ok()) else {
            return Response::from_parts(parts, Tracked::wrap(body, None, conn));
        };
        let permit = if size == 0 {
            None
        } else {
            let n = u32::try_from(size).unwrap_or(u32::MAX);
            match (size <= self.max)
                .then(|| self.budget.clone().try_acquire_many_owned(n).ok())
                .flatten()
            {
                Some(p) => Some(p),
                None => {
                    let busy = ApiError::new(
                        http::StatusCode::SERVICE_UNAVAILABLE,
                        "overloaded",
                        "too much answer memory is held for clients still reading; retry shortly",
                    )
                    .into_response();
                    let (p, b) = busy.into_parts();
                    return Response::from_parts(p, Tracked::wrap(b, None, conn));
                }
            }
        };
        Response::from_parts(parts, Tracked::wrap(body, permit, conn))
    }

    /// Bytes of the budget free now (tests).
    #[cfg(test)]
    pub(crate) fn free(&self) -> usize {
        self.budget.available_permits()
    }
}

/// A body that hands its data over in [`ANSWER_CHUNK`] pieces (copies, so that what
/// hyper still buffers does not keep the whole answer alive), holds its share of the
/// answer budget until the last piece is taken, and marks its connection idle when it
/// is dropped.
struct Tracked {
    inner: Body,
    pending: Bytes,
    permit: Option<OwnedSemaphorePermit>,
    conn: Option<Arc<ConnState>>,
}

impl Tracked {
    fn wrap(
        inner: Body,
        permit: Option<OwnedSemaphorePermit>,
        conn: Option<Arc<ConnState>>,
    ) -> Body {
        Tracked {
            inner,
            pending: Bytes::new(),
            permit,
            conn,
        }
        .boxed_unsync()
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        if let Some(c) = &self.conn {
            // What hyper may still buffer stays counted until the writes are flushed.
            if let Some(permit) = self.permit.as_mut() {
                let keep = permit.num_permits().min(RESIDUE_BYTES);
                if let Some(residue) = permit.split(keep) {
                    c.hold_residue(residue);
                }
            }
            c.mark_idle();
        }
    }
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        loop {
            if !self.pending.is_empty() {
                let n = self.pending.len().min(ANSWER_CHUNK);
                let piece = Bytes::copy_from_slice(self.pending.get(..n).unwrap_or_default());
                let rest = self.pending.split_off(n);
                self.pending = rest;
                return Poll::Ready(Some(Ok(Frame::data(piece))));
            }
            match Pin::new(&mut self.inner).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) if data.len() > ANSWER_CHUNK => self.pending = data,
                    Ok(data) => return Poll::Ready(Some(Ok(Frame::data(data)))),
                    Err(other) => return Poll::Ready(Some(Ok(other))),
                },
                other => return other,
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.pending.is_empty() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let mut hint = self.inner.size_hint();
        let pending = self.pending.len() as u64;
        hint.set_lower(hint.lower().saturating_add(pending));
        if let Some(upper) = hint.upper() {
            hint.set_upper(upper.saturating_add(pending));
        }
        hint
    }
}

/// A connection's state: when it started waiting for a request head (0 while it answers
/// one), and how it is told to close.
#[derive(Debug)]
pub(crate) struct ConnState {
    /// The registry's count of waits begun when this one began (from 1); 0 busy.
    idle_since: AtomicU64,
    clock: Arc<AtomicU64>,
    /// Notified to close the connection.
    pub(crate) evict: Notify,
    /// The budget share of what hyper may still buffer of the last answer.
    residue: Mutex<Option<OwnedSemaphorePermit>>,
}

impl ConnState {
    fn now(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::Relaxed).saturating_add(1)
    }

    /// The connection answers a request.
    pub(crate) fn mark_busy(&self) {
        self.idle_since.store(0, Ordering::Relaxed);
    }

    fn hold_residue(&self, permit: OwnedSemaphorePermit) {
        if let Ok(mut r) = self.residue.lock() {
            *r = Some(permit);
        }
    }

    /// The connection's writes are flushed: nothing of an answer is buffered.
    fn flushed(&self) {
        if let Ok(mut r) = self.residue.lock() {
            r.take();
        }
    }

    /// The connection waits for the next request head.
    pub(crate) fn mark_idle(&self) {
        self.idle_since.store(self.now(), Ordering::Relaxed);
    }
}

/// The connections open, for choosing one to close at the cap.
#[derive(Debug)]
pub(crate) struct Conns {
    open: Mutex<HashMap<u64, Arc<ConnState>>>,
    next: AtomicU64,
    clock: Arc<AtomicU64>,
}

impl Default for Conns {
    fn default() -> Self {
        Conns {
            open: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            clock: Arc::new(AtomicU64::new(0)),
        }
    }
}

impl Conns {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<ConnState>>> {
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Register a new connection (waiting for its first request head); its id and state.
    pub(crate) fn open(&self) -> (u64, Arc<ConnState>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(ConnState {
            idle_since: AtomicU64::new(0),
            clock: self.clock.clone(),
            evict: Notify::new(),
            residue: Mutex::new(None),
        });
        state.mark_idle();
        self.lock().insert(id, state.clone());
        (id, state)
    }

    /// Forget a closed connection.
    pub(crate) fn close(&self, id: u64) {
        self.lock().remove(&id);
    }

    /// Tell the connection that has waited longest for a request head to close; false
    /// when every connection is answering a request. Linear in the connections open
    /// (at most `max_connections`), once per connection accepted at the cap.
    pub(crate) fn evict_longest_waiting(&self) -> bool {
        let open = self.lock();
        let oldest = open
            .values()
            .filter_map(|s| {
                let t = s.idle_since.load(Ordering::Relaxed);
                (t != 0).then_some((t, s))
            })
            .min_by_key(|(t, _)| *t);
        match oldest {
            Some((_, s)) => {
                // Busy from now on: not chosen twice while it closes.
                s.mark_busy();
                s.evict.notify_one();
                true
            }
            None => false,
        }
    }
}

/// A stream whose writes fail once one has been pending for the timeout (the peer reads
/// nothing), and which tells its connection's state when its writes are flushed; reads
/// are untouched.
pub(crate) struct WriteTimeout<S> {
    inner: S,
    timeout: Duration,
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
    conn: Arc<ConnState>,
}

impl<S> WriteTimeout<S> {
    pub(crate) fn new(inner: S, timeout: Duration, conn: Arc<ConnState>) -> Self {
        WriteTimeout {
            inner,
            timeout,
            stalled: None,
            conn,
        }
    }

    /// After the inner write returned `poll`: start, clear or check the stall timer.
    fn watch<T>(
        &mut self,
        cx: &mut Context<'_>,
        poll: Poll<std::io::Result<T>>,
    ) -> Poll<std::io::Result<T>> {
        if poll.is_ready() {
            self.stalled = None;
            return poll;
        }
        let timeout = self.timeout;
        let sleep = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the client read nothing for the write timeout",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for WriteTimeout<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for WriteTimeout<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.watch(cx, poll)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.watch(cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_flush(cx);
        if matches!(poll, Poll::Ready(Ok(()))) {
            self.conn.flushed();
        }
        self.watch(cx, poll)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.watch(cx, poll)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::response::full;

    fn answer(n: usize) -> Response<Body> {
        Response::new(full(vec![b'x'; n]))
    }

    /// An answer takes its size from the budget until its body is dropped; one that does
    /// not fit (the budget's edge, one byte over) is `503` at once.
    #[tokio::test]
    async fn answers_hold_their_size_of_the_budget() {
        let answers = Answers::new(ANSWER_CHUNK * 3);
        let first = answers.hold(answer(ANSWER_CHUNK * 2), None);
        assert_eq!(first.status(), 200);
        assert_eq!(answers.free(), ANSWER_CHUNK);
        let fits = answers.hold(answer(ANSWER_CHUNK), None);
        assert_eq!(fits.status(), 200);
        assert_eq!(answers.free(), 0);
        drop(fits);
        let over = answers.hold(answer(ANSWER_CHUNK + 1), None);
        assert_eq!(over.status(), 503);
        // Handed over in chunks, the whole answer arrives; then the budget is free.
        let body = first.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(body.len(), ANSWER_CHUNK * 2);
        assert_eq!(answers.free(), ANSWER_CHUNK * 3);
    }

    /// Once an answer has handed over its last piece, what hyper may still buffer stays in
    /// the budget until the connection's writes are flushed.
    #[tokio::test]
    async fn what_hyper_may_buffer_stays_counted_until_flushed() {
        let answers = Answers::new(RESIDUE_BYTES * 4);
        let conns = Conns::default();
        let (_, state) = conns.open();
        let size = RESIDUE_BYTES * 2;
        let body = answers.hold(answer(size), Some(state.clone())).into_body();
        assert_eq!(answers.free(), RESIDUE_BYTES * 2);
        let got = body.collect().await.unwrap().to_bytes();
        assert_eq!(got.len(), size);
        assert_eq!(answers.free(), RESIDUE_BYTES * 3);
        let (client, server) = tokio::io::duplex(64);
        let mut io = WriteTimeout::new(server, Duration::from_secs(1), state.clone());
        tokio::io::AsyncWriteExt::flush(&mut io).await.unwrap();
        assert_eq!(answers.free(), RESIDUE_BYTES * 4);
        drop(client);
    }

    /// A write that stays pending past the timeout fails; one that makes progress does not.
    #[tokio::test(start_paused = true)]
    async fn a_write_pending_past_the_timeout_fails() {
        use tokio::io::AsyncWriteExt;
        let conns = Conns::default();
        let (_, state) = conns.open();
        let (client, server) = tokio::io::duplex(8);
        let timeout = Duration::from_secs(10);
        let mut io = WriteTimeout::new(server, timeout, state);
        io.write_all(&[0; 8]).await.unwrap();
        // The pipe is full: the next write waits, and fails once the timeout is over.
        let started = tokio::time::Instant::now();
        let err = io.write_all(&[0; 1]).await.unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), timeout);
        drop(client);
    }

    /// A body is handed over in pieces of at most a chunk.
    #[tokio::test]
    async fn a_large_body_comes_in_chunks() {
        let answers = Answers::new(ANSWER_CHUNK * 4);
        let mut body = answers.hold(answer(ANSWER_CHUNK * 2 + 1), None).into_body();
        let mut sizes = Vec::new();
        while let Some(f) = body.frame().await {
            sizes.push(f.unwrap().into_data().unwrap().len());
        }
        assert_eq!(sizes, vec![ANSWER_CHUNK, ANSWER_CHUNK, 1]);
    }

    /// At the cap the connection chosen is the one waiting longest for a request head;
    /// one answering a request is never chosen.
    #[tokio::test]
    async fn the_longest_waiting_connection_is_evicted() {
        let conns = Conns::default();
        let (_, first) = conns.open();
        let (_, second) = conns.open();
        let (_, third) = conns.open();
        first.mark_busy();
        // The third waits again after a request: the second has waited longest.
        third.mark_busy();
        third.mark_idle();
        assert!(conns.evict_longest_waiting());
        // The second was told (a permit is stored), the first was not.
        tokio::time::timeout(Duration::from_millis(1), second.evict.notified())
            .await
            .unwrap();
        assert!(
            tokio::time::timeout(Duration::from_millis(1), first.evict.notified())
                .await
                .is_err()
        );
        assert!(conns.evict_longest_waiting());
        tokio::time::timeout(Duration::from_millis(1), third.evict.notified())
            .await
            .unwrap();
        // Now none waits: nothing to evict.
        assert!(!conns.evict_longest_waiting());
    }
}
