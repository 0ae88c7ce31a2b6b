//! What `/mcp` keeps per session (by its `Mcp-Session-Id`) while requests run: the ids of
//! the requests in flight, and how many GET streams are open.
//!
//! - A request whose id is in flight on its session is refused ([`SessionBook::begin`]
//!   gives no hold): rmcp routes an answer by its id, so of several requests with one id
//!   it answered one and left the others open with no answer and no end.
//! - A session has at most [`MAX_GET_STREAMS_PER_SESSION`] GET streams open
//!   ([`SessionBook::open_stream`]); each holds a connection and a channel until the
//!   client closes it, and nothing bounded them.
//!
//! A [`Hold`] is the place taken; it is given back when dropped. [`HeldBody`] carries it in
//! the response body, so a stream's place is held as long as the stream is open, and a
//! request's id until its answer has gone out (or the stream ends without one). An entry
//! lives only while something holds it: the book is as large as the requests and streams
//! open now.

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use super::Body;
use bytes::Bytes;
use http_body::{Frame, SizeHint};
use rmcp::model::RequestId;
use serde_json::Value;

/// Most GET streams (`text/event-stream` opened with `GET /mcp`) one session may have
/// open at once; one more is refused with `429`. A client needs one (the stream of the
/// server's own messages), a few more while it reconnects or resumes streams: 8 leaves
/// room for that and bounds what one session holds (one session accepted 300).
pub const MAX_GET_STREAMS_PER_SESSION: usize = 8;

/// One session's entry.
#[derive(Debug, Default)]
struct Entry {
    /// Ids of its requests in flight.
    in_flight: HashSet<RequestId>,
    /// GET streams open.
    streams: usize,
}

impl Entry {
    fn is_empty(&self) -> bool {
        self.in_flight.is_empty() && self.streams == 0
    }
}

/// The entries of every session with something in flight (cheap to clone: shared).
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionBook(Arc<Mutex<HashMap<String, Entry>>>);

/// What a [`Hold`] holds.
#[derive(Debug)]
enum Held {
    /// A request id, and the id as JSON (to know its answer when it goes out).
    Request(RequestId, Value),
    /// One GET stream.
    Stream,
}

/// A place taken in a [`SessionBook`], given back on drop.
#[derive(Debug)]
pub(crate) struct Hold {
    book: SessionBook,
    session: String,
    held: Held,
}

impl SessionBook {
    fn entries(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        // Nothing panics while holding the lock; a poisoned map is still consistent.
        match self.0.lock() {
            Ok(entries) => entries,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The request `id` begins on `session`: its hold, or `None` when a request with that
    /// id is already in flight there.
    pub(crate) fn begin(&self, session: &str, id: &RequestId) -> Option<Hold> {
        let mut entries = self.entries();
        let entry = entries.entry(session.to_owned()).or_default();
        if !entry.in_flight.insert(id.clone()) {
            return None;
        }
        let json = serde_json::to_value(id).unwrap_or(Value::Null);
        Some(Hold {
            book: self.clone(),
            session: session.to_owned(),
            held: Held::Request(id.clone(), json),
        })
    }

    /// A GET stream opens on `session`: its hold, or `None` when the session has
    /// [`MAX_GET_STREAMS_PER_SESSION`] open.
    pub(crate) fn open_stream(&self, session: &str) -> Option<Hold> {
        let mut entries = self.entries();
        let entry = entries.entry(session.to_owned()).or_default();
        if entry.streams >= MAX_GET_STREAMS_PER_SESSION {
            return None;
        }
        entry.streams += 1;
        Some(Hold {
            book: self.clone(),
            session: session.to_owned(),
            held: Held::Stream,
        })
    }

    /// Number of sessions with an entry (for tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries().len()
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        let mut entries = self.book.entries();
        let Some(entry) = entries.get_mut(&self.session) else {
            return;
        };
        match &self.held {
            Held::Request(id, _) => {
                entry.in_flight.remove(id);
            }
            Held::Stream => entry.streams = entry.streams.saturating_sub(1),
        }
        if entry.is_empty() {
            entries.remove(&self.session);
        }
    }
}

/// A response body that keeps a [`Hold`] until the body ends or is dropped; a request's
/// hold ends as soon as a frame carries the request's answer.
pub(crate) struct HeldBody {
    inner: Body,
    hold: Option<Hold>,
}

impl HeldBody {
    /// `inner`, holding `hold`.
    pub(crate) fn new(inner: Body, hold: Hold) -> Self {
        HeldBody {
            inner,
            hold: Some(hold),
        }
    }
}

/// Whether `data` (server-sent events, or one JSON message) carries the answer (a result
/// or an error) to the request whose id is `id`.
fn carries_answer(data: &[u8], id: &Value) -> bool {
    let answers = |json: &[u8]| {
        serde_json::from_slice::<Value>(json).is_ok_and(|message| {
            message.get("id") == Some(id)
                && (message.get("result").is_some() || message.get("error").is_some())
        })
    };
    answers(data)
        || data.split(|b| *b == b'\n').any(|line| {
            line.strip_prefix(b"data:")
                .is_some_and(|json| answers(json.trim_ascii()))
        })
}

impl http_body::Body for HeldBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(None) => self.hold = None,
            Poll::Ready(Some(Ok(frame))) => {
                let answered = match (&self.hold, frame.data_ref()) {
                    (
                        Some(Hold {
                            held: Held::Request(_, id),
                            ..
                        }),
                        Some(data),
                    ) => carries_answer(data, id),
                    _ => false,
                };
                if answered {
                    self.hold = None;
                }
            }
            _ => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use http_body_util::BodyExt;
    use serde_json::json;

    use super::*;

    fn id(n: i64) -> RequestId {
        RequestId::Number(n)
    }

    #[test]
    fn an_id_is_refused_while_in_flight_on_its_session_only() {
        let book = SessionBook::default();
        let first = book.begin("s1", &id(7));
        assert!(first.is_some());
        assert!(book.begin("s1", &id(7)).is_none(), "a second 7 on s1");
        let other_session = book.begin("s2", &id(7));
        assert!(other_session.is_some(), "7 on another session");
        let other_id = book.begin("s1", &RequestId::String("7".into()));
        assert!(other_id.is_some(), "the string \"7\" is another id");
        drop(first);
        assert!(book.begin("s1", &id(7)).is_some(), "7 once answered");
        drop((other_session, other_id));
        assert_eq!(book.len(), 0, "entries live only while held");
    }

    #[test]
    fn get_streams_are_capped_at_the_limit_per_session() {
        let book = SessionBook::default();
        let open: Vec<Hold> = (0..MAX_GET_STREAMS_PER_SESSION)
            .map(|_| book.open_stream("s1").expect("within the limit"))
            .collect();
        assert!(book.open_stream("s1").is_none(), "one past the limit");
        assert!(book.open_stream("s2").is_some(), "another session's own");
        drop(open.into_iter().next());
        assert!(
            book.open_stream("s1").is_some(),
            "a closed one frees its place"
        );
    }

    #[test]
    fn answers_are_known_in_sse_events_and_json() {
        let id = json!(7);
        let sse = b"id: 0/1\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n";
        assert!(carries_answer(sse, &id));
        assert!(carries_answer(
            br#"{"jsonrpc":"2.0","id":7,"error":{}}"#,
            &id
        ));
        // Not the answer: another id, a notification, a request from the server, priming.
        assert!(!carries_answer(b"data: {\"id\":8,\"result\":{}}\n\n", &id));
        let progress = b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n";
        assert!(!carries_answer(progress, &id));
        assert!(!carries_answer(
            b"data: {\"id\":7,\"method\":\"ping\"}\n\n",
            &id
        ));
        assert!(!carries_answer(b"id: 0\nretry: 3000\ndata:\n\n", &id));
    }

    /// A request's hold ends with the frame of its answer, before the body ends.
    #[tokio::test]
    async fn a_request_is_out_of_flight_once_its_answer_has_gone_out() {
        let book = SessionBook::default();
        let hold = book.begin("s", &id(3)).unwrap();
        let frames = [
            Bytes::from_static(b"data: {\"method\":\"notifications/progress\"}\n\n"),
            Bytes::from_static(b"data: {\"id\":3,\"result\":{}}\n\n"),
        ];
        let stream = open_body(frames);
        let mut body = HeldBody::new(stream, hold);
        body.frame().await.unwrap().unwrap();
        assert!(book.begin("s", &id(3)).is_none(), "before the answer");
        body.frame().await.unwrap().unwrap();
        assert!(book.begin("s", &id(3)).is_some(), "after the answer");
    }

    /// A body of `frames` that stays open after them (pending, never ended).
    fn open_body(frames: [Bytes; 2]) -> Body {
        Frames(frames.into_iter().collect()).boxed_unsync()
    }

    struct Frames(std::collections::VecDeque<Bytes>);

    impl http_body::Body for Frames {
        type Data = Bytes;
        type Error = Infallible;
        fn poll_frame(
            mut self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            match self.0.pop_front() {
                Some(data) => Poll::Ready(Some(Ok(Frame::data(data)))),
                None => Poll::Pending,
            }
        }
    }
}
