//! Reload and the event stream.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use http::{Response, StatusCode};
use hyper::body::Frame;

use crate::app::App;
use crate::response::{ApiError, Body, json_response};
use skill_runtime::Event;

/// Interval of keep-alive comments on the event stream.
const EVENT_KEEPALIVE: Duration = Duration::from_secs(15);

pub(super) async fn reload(app: &Arc<App>) -> Result<Response<Body>, ApiError> {
    let engine = app.engine.clone();
    let change = tokio::task::spawn_blocking(move || engine.reload())
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))?;
    Ok(json_response(
        StatusCode::OK,
        &skill_runtime::wire::ChangeShape::from(&change),
    ))
}

/// The body of an event stream. It holds the stream's permit, so the slot frees as soon
/// as hyper drops the body (the client went away, or the stream ended).
struct EventBody {
    rx: tokio::sync::mpsc::Receiver<Bytes>,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl hyper::body::Body for EventBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        self.rx
            .poll_recv(cx)
            .map(|chunk| chunk.map(|b| Ok(Frame::data(b))))
    }
}

/// Completes when the server starts shutting down (or the app is gone).
async fn until_closing(closing: &mut tokio::sync::watch::Receiver<bool>) {
    // The guard `wait_for` returns is dropped here, never held across an await.
    let _ = closing.wait_for(|c| *c).await;
}

/// Chunks queued for one event stream before its writer waits for the client.
const EVENT_STREAM_QUEUE: usize = 16;

/// The event stream: `event: change` with the change set as JSON (its `id` is the new
/// generation), `event: scheduled` with a finished scheduled run, keep-alive comments, and
/// `event: lagged` when this reader fell behind and lost events. At most
/// `max_event_streams` are open at once; every stream ends when the server shuts down.
/// A `HEAD` (`head`) gets the answer a `GET` would, refusal included, and no stream: its
/// body ends at once, and the slot it took is free again as soon as that body is dropped.
pub(super) fn events(app: &Arc<App>, head: bool) -> Result<Response<Body>, ApiError> {
    let permit = app.event_streams.clone().try_acquire_owned().map_err(|_| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "overloaded",
            format!(
                "{} event streams are open, the most this server allows; retry shortly",
                app.config.max_event_streams
            ),
        )
    })?;
    let (tx, body_rx) = tokio::sync::mpsc::channel::<Bytes>(EVENT_STREAM_QUEUE);
    if head {
        // No writer: with the sender gone the body ends, its length never known.
        drop(tx);
    } else {
        tokio::spawn(write_events(
            app.engine.events(),
            app.closing.subscribe(),
            tx,
        ));
    }
    let body = EventBody {
        rx: body_rx,
        _permit: permit,
    };
    let mut resp = Response::new(http_body_util::BodyExt::boxed_unsync(body));
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Ok(resp)
}

/// Write one event stream into `tx` until the client goes away, the engine stops or the
/// server starts shutting down.
async fn write_events(
    mut rx: tokio::sync::broadcast::Receiver<Arc<Event>>,
    mut closing: tokio::sync::watch::Receiver<bool>,
    tx: tokio::sync::mpsc::Sender<Bytes>,
) {
    use tokio::sync::broadcast::error::RecvError;
    let mut msg = ": skills engine events\nretry: 2000\n\n".to_owned();
    loop {
        // Wait for the client to take the message, unless the server is closing.
        let sent = tokio::select! {
            r = tx.send(Bytes::from(msg)) => r.is_ok(),
            () = until_closing(&mut closing) => false,
        };
        if !sent {
            return;
        }
        msg = tokio::select! {
            r = rx.recv() => match r {
                Ok(event) => {
                    let id = match &*event {
                        Event::Change(c) => format!("id: {}\n", c.generation),
                        Event::Scheduled(_) => String::new(),
                    };
                    format!("{id}event: {}\ndata: {}\n\n", event.name(), skill_runtime::wire::event_json(&event))
                }
                Err(RecvError::Lagged(n)) => format!("event: lagged\ndata: {{\"missed\":{n}}}\n\n"),
                Err(RecvError::Closed) => return,
            },
            () = tokio::time::sleep(EVENT_KEEPALIVE) => ": keep-alive\n\n".to_owned(),
            () = until_closing(&mut closing) => return,
            () = tx.closed() => return,
        };
    }
}
