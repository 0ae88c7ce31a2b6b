//! Webhook delivery of scheduled runs that need a model: a JSON POST with an idempotency key,
//! an optional HMAC-SHA256 signature, retried with exponential backoff and jitter up to a
//! limit, every attempt logged (and, with a database, written to the outbox's attempts).
//!
//! The request goes through the engine's one HTTP client ([`crate::outbound::Client`]):
//! `http://` or `https://` (rustls, the platform's roots and the operator's CA file), the
//! destination policy checked on every address the receiver's name resolves to.

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use skill_store::Store;
use tokio::sync::Notify;

use crate::exec::Outcome;
use crate::outbound::destination::Destination;
use crate::outbound::{Client, Limits};

/// Attempts per delivery unless configured otherwise.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 6;
/// Most deliveries kept in this process's log (the oldest go first).
pub const MAX_DELIVERY_LOG: usize = 256;
/// The wait before the first retry unless configured otherwise; it doubles per attempt.
const DEFAULT_FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(300);
/// The most bytes of a receiver's answer read (the status is what counts).
const MAX_ANSWER_BYTES: u64 = 1024 * 1024;
/// How long one attempt (connect, send, answer) may take.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long an outbox row stays held by the replica attempting it; past that (the replica
/// died mid-attempt) another replica takes it.
const OUTBOX_LEASE: Duration = Duration::from_secs(10);
/// How often the outbox worker looks for due deliveries when not woken.
const OUTBOX_POLL: Duration = Duration::from_millis(250);
/// The header carrying the idempotency key (the same on every attempt of one run).
pub const IDEMPOTENCY_HEADER: &str = "idempotency-key";
/// The header carrying `sha256=<hex HMAC-SHA256 of the body>` when a secret is set.
pub const SIGNATURE_HEADER: &str = "x-skills-signature";
/// The header carrying the attempt number (1 for the first).
pub const ATTEMPT_HEADER: &str = "x-skills-attempt";

/// Where and how to deliver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookConfig {
    /// The receiver, `http://` or `https://host:port/path`.
    pub url: String,
    /// The HMAC-SHA256 key for the signature header (`None`: unsigned).
    pub secret: Option<String>,
    /// Attempts per delivery, at least 1.
    pub max_attempts: u32,
    /// The wait before the first retry (doubled per attempt, with jitter).
    pub first_backoff: Duration,
    /// Deliver to loopback, link-local and private addresses too (the destination policy
    /// of the `destination` module refuses them by default). Default: false.
    pub allow_private_destinations: bool,
    /// The client deliveries go through (default: the platform's roots, no CA file).
    pub client: Client,
}

impl WebhookConfig {
    /// Deliver to `url`, unsigned, with the default attempts and backoff.
    pub fn new(url: impl Into<String>) -> Self {
        WebhookConfig {
            url: url.into(),
            secret: None,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            first_backoff: DEFAULT_FIRST_BACKOFF,
            allow_private_destinations: false,
            client: Client::default(),
        }
    }

    /// Check the URL whole and, unless [`WebhookConfig::allow_private_destinations`], the
    /// destination policy on what the URL alone says (an address in any of its forms, a
    /// `localhost` name); a host name is checked again on what it resolves to at every
    /// delivery. The error says what is wrong in words an operator can act on.
    pub fn check(&self) -> Result<(), String> {
        let dest = Destination::parse(&self.url)?;
        if !self.allow_private_destinations {
            if let Some(why) = dest.refused_at_start() {
                return Err(format!(
                    "{why}: webhooks are not sent to loopback, link-local or private addresses unless allow_private_destinations = true"
                ));
            }
        }
        Ok(())
    }
}

/// One attempt of one delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryAttempt {
    /// 1 for the first.
    pub attempt: u32,
    /// The receiver's HTTP status, when it answered.
    pub status: Option<u16>,
    /// What went wrong, when something did.
    pub error: Option<String>,
    /// The replica that made it, when the deliveries listed are the database's (every
    /// replica's); `None` in this process's own log.
    pub replica: Option<String>,
}

/// One delivery as this process saw it, or (with a database) as the outbox records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryRecord {
    /// The idempotency key.
    pub key: String,
    /// Its attempts, in order: this process's, or with a database every replica's.
    pub attempts: Vec<DeliveryAttempt>,
    /// Whether an attempt got a 2xx answer.
    pub delivered: bool,
}

/// This process's delivery log, newest last, bounded by [`MAX_DELIVERY_LOG`]; with a
/// database, the outbox's most recent deliveries as last read ([`Log::set_shared`]), which
/// [`Log::list`] answers with instead.
#[derive(Debug, Clone, Default)]
pub(crate) struct Log {
    local: Arc<Mutex<VecDeque<DeliveryRecord>>>,
    shared: Arc<Mutex<Option<Vec<DeliveryRecord>>>>,
}

impl Log {
    fn add(&self, key: &str, attempt: DeliveryAttempt) {
        let Ok(mut log) = self.local.lock() else {
            return;
        };
        let delivered = attempt.status.is_some_and(|s| (200..300).contains(&s));
        if let Some(r) = log.iter_mut().rev().find(|r| r.key == key) {
            r.attempts.push(attempt);
            r.delivered |= delivered;
            return;
        }
        log.push_back(DeliveryRecord {
            key: key.to_owned(),
            attempts: vec![attempt],
            delivered,
        });
        while log.len() > MAX_DELIVERY_LOG {
            log.pop_front();
        }
    }

    /// The deliveries to show: every replica's as last read from the database, or until
    /// then (and without one) this process's.
    pub(crate) fn list(&self) -> Vec<DeliveryRecord> {
        if let Some(shared) = self.shared.lock().ok().and_then(|s| s.clone()) {
            return shared;
        }
        self.local
            .lock()
            .map(|l| l.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Keep the outbox's deliveries as just read.
    pub(crate) fn set_shared(&self, deliveries: Vec<DeliveryRecord>) {
        if let Ok(mut s) = self.shared.lock() {
            *s = Some(deliveries);
        }
    }
}

/// An outbox row and its recorded attempts as a [`DeliveryRecord`].
pub(crate) fn from_outbox(
    d: skill_store::Delivery,
    attempts: Vec<skill_store::Attempt>,
) -> DeliveryRecord {
    DeliveryRecord {
        key: d.key,
        delivered: d.state == skill_store::DeliveryState::Delivered,
        attempts: attempts
            .into_iter()
            .map(|a| DeliveryAttempt {
                attempt: u32::try_from(a.attempt).unwrap_or_default(),
                status: a.status.and_then(|s| u16::try_from(s).ok()),
                error: a.error,
                replica: Some(a.replica),
            })
            .collect(),
    }
}

/// Read the outbox's most recent deliveries (every replica's, [`MAX_DELIVERY_LOG`] of
/// them) into `log` every `every`; a failed read keeps the last (the history loop reports
/// the database's trouble).
pub(crate) async fn deliveries_loop(store: Store, log: Log, every: Duration) {
    loop {
        if let Ok(rows) = store.recent_deliveries(MAX_DELIVERY_LOG).await {
            log.set_shared(rows.into_iter().map(|(d, a)| from_outbox(d, a)).collect());
        }
        tokio::time::sleep(every).await;
    }
}

/// The JSON body of a delivery.
pub(crate) fn body(
    skill: &str,
    instant: &str,
    run_id: &str,
    outcome: &Outcome,
) -> serde_json::Value {
    serde_json::json!({
        "skill": skill,
        "instant": instant,
        "run_id": run_id,
        "content": outcome.output,
        "requires_interpretation": outcome.requires_interpretation,
    })
}

/// `sha256=<hex>`: the HMAC-SHA256 of `body` under `secret`, as the signature header
/// carries it.
pub fn signature(secret: &str, body: &[u8]) -> String {
    let mut mac = match Hmac::<Sha256>::new_from_slice(secret.as_bytes()) {
        Ok(m) => m,
        // HMAC takes keys of any length; this arm is never taken.
        Err(_) => return String::new(),
    };
    mac.update(body);
    let digest = mac.finalize().into_bytes();
    let mut hex = String::with_capacity(7 + digest.len() * 2);
    hex.push_str("sha256=");
    for b in digest {
        hex.push_str(&format!("{b:02x}"));
    }
    hex
}

/// The wait after failed attempt `attempt` (1-based): the first backoff doubled per
/// attempt, capped, times a random factor in 0.75..1.25.
pub(crate) fn backoff(first: Duration, attempt: u32) -> Duration {
    let exp = first.saturating_mul(1u32 << attempt.saturating_sub(1).min(20));
    let capped = exp.min(MAX_BACKOFF);
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    let factor = 0.75 + (random % 1000) as f64 / 2000.0;
    capped.mul_f64(factor)
}

/// One POST; the receiver's status, or why there was none.
async fn send(
    hook: &WebhookConfig,
    url: &str,
    key: &str,
    attempt: u32,
    body: &[u8],
) -> Result<u16, String> {
    let mut request = http::Request::post("/")
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(IDEMPOTENCY_HEADER, key)
        .header(ATTEMPT_HEADER, attempt.to_string());
    if let Some(secret) = &hook.secret {
        request = request.header(SIGNATURE_HEADER, signature(secret, body));
    }
    let limits = Limits {
        deadline: ATTEMPT_TIMEOUT,
        max_body: MAX_ANSWER_BYTES,
        public_only: !hook.allow_private_destinations,
    };
    let answer = hook
        .client
        .send(request, url, Bytes::copy_from_slice(body), limits)
        .await?;
    Ok(answer.status)
}

fn attempt_record(attempt: u32, result: &Result<u16, String>) -> DeliveryAttempt {
    match result {
        Ok(status) if (200..300).contains(status) => DeliveryAttempt {
            attempt,
            status: Some(*status),
            error: None,
            replica: None,
        },
        Ok(status) => DeliveryAttempt {
            attempt,
            status: Some(*status),
            error: Some(format!("the receiver answered {status}")),
            replica: None,
        },
        Err(e) => DeliveryAttempt {
            attempt,
            status: None,
            error: Some(e.clone()),
            replica: None,
        },
    }
}

/// Deliver one run from this process (no database): attempts until a 2xx answer or the
/// limit, waiting the backoff between them.
pub(crate) async fn deliver_in_process(
    hook: WebhookConfig,
    log: Log,
    key: String,
    body: serde_json::Value,
) {
    let bytes = body.to_string().into_bytes();
    let max = hook.max_attempts.max(1);
    for attempt in 1..=max {
        let result = send(&hook, &hook.url, &key, attempt, &bytes).await;
        let record = attempt_record(attempt, &result);
        let delivered = record.error.is_none();
        log.add(&key, record);
        if delivered {
            return;
        }
        if attempt < max {
            tokio::time::sleep(backoff(hook.first_backoff, attempt)).await;
        }
    }
    tracing::warn!(key, attempts = max, "webhook delivery given up");
}

/// The outbox worker of one replica: take a due delivery, attempt it, record the attempt
/// and what follows; sleep until woken or [`OUTBOX_POLL`] when nothing is due.
pub(crate) async fn outbox_worker(store: Store, hook: WebhookConfig, log: Log, wake: Arc<Notify>) {
    const WHAT: &str = "reading the webhook outbox";
    let max = i32::try_from(hook.max_attempts.max(1)).unwrap_or(i32::MAX);
    let mut outage = super::outage::Outage::default();
    loop {
        let due = store.take_due_delivery(OUTBOX_LEASE).await;
        if due.is_ok() {
            super::outage::Outage::log(outage.succeeded(), WHAT, &"");
        }
        match due {
            Ok(Some(d)) => {
                let attempt = u32::try_from(d.attempts).unwrap_or(1);
                let bytes = d.body.to_string().into_bytes();
                let result = send(&hook, &d.url, &d.key, attempt, &bytes).await;
                let record = attempt_record(attempt, &result);
                let delivered = record.error.is_none();
                let retry_in =
                    (!delivered && d.attempts < max).then(|| backoff(hook.first_backoff, attempt));
                if let Err(e) = store
                    .record_attempt(
                        d.id,
                        d.attempts,
                        record.status,
                        record.error.as_deref(),
                        delivered,
                        retry_in,
                    )
                    .await
                {
                    tracing::warn!(error = %e, key = d.key, "cannot record the delivery attempt");
                }
                log.add(&d.key, record);
            }
            Ok(None) => {
                tokio::select! {
                    () = wake.notified() => {}
                    () = tokio::time::sleep(OUTBOX_POLL) => {}
                }
            }
            Err(e @ skill_store::Error::Unreadable { .. }) => {
                // That delivery was given up (the store recorded why); the rest go on.
                tracing::warn!(error = %e, "a webhook delivery could not be read");
            }
            Err(e) => {
                super::outage::Outage::log(outage.failed(), WHAT, &e);
                tokio::time::sleep(OUTBOX_POLL * 4).await;
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_stops_at_the_cap() {
        let first = Duration::from_secs(1);
        for attempt in 1..=4u32 {
            let base = 1u64 << (attempt - 1);
            let got = backoff(first, attempt).as_secs_f64();
            assert!(
                got >= base as f64 * 0.75 && got <= base as f64 * 1.25,
                "{attempt}: {got}"
            );
        }
        let late = backoff(first, 40);
        assert!(late <= MAX_BACKOFF.mul_f64(1.25) && late >= MAX_BACKOFF.mul_f64(0.75));
    }

    /// The check at delivery: a host name that resolves to loopback (as a rebound name
    /// would) is not connected to, whatever the check at start said; allowed, it is.
    #[tokio::test]
    async fn a_delivery_connects_only_to_an_address_the_policy_allows() {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://localhost:{port}/hook");
        let mut hook = WebhookConfig::new(url.clone());
        let e = send(&hook, &url, "k", 1, b"{}").await.unwrap_err();
        assert!(
            e.contains("refused") && e.contains("allow_private_destinations"),
            "{e}"
        );
        assert!(listener.accept().is_err(), "nothing connected");
        hook.allow_private_destinations = true;
        listener.set_nonblocking(false).unwrap();
        let answer = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 4096];
            let n = s.read(&mut buf).unwrap();
            let head = String::from_utf8_lossy(&buf[..n]).into_owned();
            s.write_all(b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n")
                .unwrap();
            head
        });
        assert_eq!(send(&hook, &url, "k", 1, b"{}").await, Ok(204));
        let head = answer.join().unwrap();
        assert!(head.starts_with("POST /hook HTTP/1.1"), "{head}");
        assert!(
            head.to_ascii_lowercase()
                .contains(&format!("host: localhost:{port}")),
            "{head}"
        );
    }

    #[test]
    fn signature_is_rfc4231_hmac_sha256() {
        // RFC 4231 test case 2.
        assert_eq!(
            signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn the_log_keeps_attempts_per_key_and_drops_the_oldest() {
        let log = Log::default();
        let fail = DeliveryAttempt {
            attempt: 1,
            status: Some(503),
            error: Some("503".into()),
            replica: None,
        };
        let ok = DeliveryAttempt {
            attempt: 2,
            status: Some(200),
            error: None,
            replica: None,
        };
        log.add("a", fail);
        log.add("a", ok);
        let list = log.list();
        assert_eq!(list.len(), 1);
        assert!(list[0].delivered);
        assert_eq!(list[0].attempts.len(), 2);
        for i in 0..MAX_DELIVERY_LOG {
            log.add(
                &format!("k{i}"),
                DeliveryAttempt {
                    attempt: 1,
                    status: None,
                    error: None,
                    replica: None,
                },
            );
        }
        let list = log.list();
        assert_eq!(list.len(), MAX_DELIVERY_LOG);
        assert_eq!(list[0].key, "k0", "key a (oldest) dropped first");
    }
}
