//! The webhook outbox: a delivery is written before it is attempted, taken by one replica
//! at a time (`FOR UPDATE SKIP LOCKED`, then a lease), and every attempt is recorded. A
//! replica that dies mid-delivery leaves the row leased; once the lease runs out another
//! replica takes it and sends it again with the same idempotency key (at least once).

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::{Error, Store};

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryState {
    /// Waiting for its next attempt (or being attempted now).
    Pending,
    /// The receiver answered 2xx.
    Delivered,
    /// Every attempt failed.
    Failed,
}

impl DeliveryState {
    fn parse(s: &str) -> DeliveryState {
        match s {
            "delivered" => DeliveryState::Delivered,
            "failed" => DeliveryState::Failed,
            _ => DeliveryState::Pending,
        }
    }
}

/// One delivery taken from the outbox, or listed.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    /// Row id.
    pub id: i64,
    /// The scheduled run it reports, when known.
    pub run_id: Option<i64>,
    /// The idempotency key sent with every attempt.
    pub key: String,
    /// The webhook URL.
    pub url: String,
    /// The JSON body.
    pub body: serde_json::Value,
    /// Where it stands.
    pub state: DeliveryState,
    /// Attempts made so far (including the one just taken).
    pub attempts: i32,
}

/// One recorded attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// The delivery.
    pub delivery_id: i64,
    /// 1 for the first attempt.
    pub attempt: i32,
    /// The replica that made it.
    pub replica: String,
    /// When.
    pub at: DateTime<Utc>,
    /// The receiver's HTTP status, when it answered.
    pub status: Option<i32>,
    /// What went wrong, when something did.
    pub error: Option<String>,
}

const DELIVERY_COLUMNS: &str = "id, run_id, idempotency_key, url, body, state, attempts";

fn attempt(r: &tokio_postgres::Row) -> Result<Attempt, tokio_postgres::Error> {
    Ok(Attempt {
        delivery_id: r.try_get(0)?,
        attempt: r.try_get(1)?,
        replica: r.try_get(2)?,
        at: r.try_get(3)?,
        status: r.try_get(4)?,
        error: r.try_get(5)?,
    })
}

fn delivery(r: &tokio_postgres::Row) -> Result<Delivery, tokio_postgres::Error> {
    let state: String = r.try_get(5)?;
    Ok(Delivery {
        id: r.try_get(0)?,
        run_id: r.try_get(1)?,
        key: r.try_get(2)?,
        url: r.try_get(3)?,
        body: r.try_get(4)?,
        state: DeliveryState::parse(&state),
        attempts: r.try_get(6)?,
    })
}

impl Store {
    /// Write a delivery to the outbox (due now). A key already there is not added twice;
    /// returns the row id either way.
    pub async fn enqueue_delivery(
        &self,
        run_id: Option<i64>,
        key: &str,
        url: &str,
        body: &serde_json::Value,
    ) -> Result<i64, Error> {
        let client = self.client().await?;
        let row = client
            .query_one(
                "WITH ins AS (
                     INSERT INTO skills_deliveries (run_id, idempotency_key, url, body)
                     VALUES ($1, $2, $3, $4)
                     ON CONFLICT (idempotency_key) DO NOTHING RETURNING id)
                 SELECT id FROM ins
                 UNION ALL SELECT id FROM skills_deliveries WHERE idempotency_key = $2
                 LIMIT 1",
                &[&run_id, &key, &url, body],
            )
            .await?;
        crate::rows::one("skills_deliveries", &row, |r| r.try_get(0))
    }

    /// Take the most overdue pending delivery no replica holds (or whose holder's lease ran
    /// out), lease it for `lease` and count the attempt. `None` when nothing is due.
    pub async fn take_due_delivery(&self, lease: Duration) -> Result<Option<Delivery>, Error> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!(
                    "UPDATE skills_deliveries SET attempts = attempts + 1,
                            lease_until = clock_timestamp() + make_interval(secs => $1::float8)
                     WHERE id = (
                         SELECT id FROM skills_deliveries
                         WHERE state = 'pending' AND next_attempt <= clock_timestamp()
                           AND (lease_until IS NULL OR lease_until < clock_timestamp())
                         ORDER BY next_attempt, id
                         LIMIT 1
                         FOR UPDATE SKIP LOCKED)
                     RETURNING {DELIVERY_COLUMNS}"
                ),
                &[&lease.as_secs_f64()],
            )
            .await?;
        let Some(row) = row else { return Ok(None) };
        match crate::rows::one("skills_deliveries", &row, delivery) {
            Ok(d) => Ok(Some(d)),
            Err(e) => {
                // Left pending, it would be taken again at every lease: given up instead,
                // with the reason as its attempt, so the outbox moves on.
                let why = e.to_string();
                if let Ok(id) = row.try_get::<_, i64>(0) {
                    let attempt = row.try_get::<_, i32>(6).unwrap_or(1);
                    self.record_attempt(id, attempt, None, Some(&why), false, None)
                        .await?;
                }
                Err(e)
            }
        }
    }

    /// The earliest instant a pending delivery is due, if any (for sleeping until then;
    /// an instant too far to read, such as `infinity` written by hand, is none).
    pub async fn next_delivery_due(&self) -> Result<Option<DateTime<Utc>>, Error> {
        let client = self.client().await?;
        let row = client
            .query_one(
                "SELECT min(greatest(next_attempt, coalesce(lease_until, next_attempt)))
                 FROM skills_deliveries WHERE state = 'pending'",
                &[],
            )
            .await?;
        Ok(row.try_get(0).ok().flatten())
    }

    /// Record attempt `attempt` of delivery `id` and what follows: delivered, retried after
    /// `retry_in`, or (`retry_in` `None` and not delivered) given up.
    pub async fn record_attempt(
        &self,
        id: i64,
        attempt: i32,
        status: Option<u16>,
        error: Option<&str>,
        delivered: bool,
        retry_in: Option<Duration>,
    ) -> Result<(), Error> {
        let status = status.map(i32::from);
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        tx.execute(
            "INSERT INTO skills_delivery_attempts (delivery_id, attempt, replica, status, error)
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
            &[&id, &attempt, &self.replica, &status, &error],
        )
        .await?;
        if delivered {
            tx.execute(
                "UPDATE skills_deliveries SET state = 'delivered', lease_until = NULL,
                        finished = clock_timestamp() WHERE id = $1",
                &[&id],
            )
            .await?;
        } else if let Some(wait) = retry_in {
            tx.execute(
                "UPDATE skills_deliveries SET lease_until = NULL,
                        next_attempt = clock_timestamp() + make_interval(secs => $2::float8)
                 WHERE id = $1",
                &[&id, &wait.as_secs_f64()],
            )
            .await?;
        } else {
            tx.execute(
                "UPDATE skills_deliveries SET state = 'failed', lease_until = NULL,
                        finished = clock_timestamp() WHERE id = $1",
                &[&id],
            )
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The most recent `limit` deliveries, oldest first (a row this version cannot read is
    /// skipped, with a warning the first time).
    pub async fn deliveries(&self, limit: usize) -> Result<Vec<Delivery>, Error> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let client = self.client().await?;
        let rows = client
            .query(
                &format!(
                    "SELECT {DELIVERY_COLUMNS} FROM
                     (SELECT * FROM skills_deliveries ORDER BY id DESC LIMIT $1) d ORDER BY id"
                ),
                &[&limit],
            )
            .await?;
        Ok(crate::rows::all(
            &self.reported,
            "skills_deliveries",
            &rows,
            delivery,
        ))
    }

    /// The most recent `limit` deliveries with their attempts (every replica's), oldest
    /// first: two queries, the second over the attempts of those deliveries only.
    pub async fn recent_deliveries(
        &self,
        limit: usize,
    ) -> Result<Vec<(Delivery, Vec<Attempt>)>, Error> {
        let deliveries = self.deliveries(limit).await?;
        let ids: Vec<i64> = deliveries.iter().map(|d| d.id).collect();
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT delivery_id, attempt, replica, at, status, error
                 FROM skills_delivery_attempts WHERE delivery_id = ANY($1)
                 ORDER BY delivery_id, attempt",
                &[&ids],
            )
            .await?;
        let attempts = crate::rows::all(&self.reported, "skills_delivery_attempts", &rows, attempt);
        let mut by_id: std::collections::HashMap<i64, Vec<Attempt>> =
            std::collections::HashMap::new();
        for a in attempts {
            by_id.entry(a.delivery_id).or_default().push(a);
        }
        Ok(deliveries
            .into_iter()
            .map(|d| {
                let a = by_id.remove(&d.id).unwrap_or_default();
                (d, a)
            })
            .collect())
    }

    /// Every recorded attempt of delivery `id`, in order.
    pub async fn attempts(&self, id: i64) -> Result<Vec<Attempt>, Error> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT delivery_id, attempt, replica, at, status, error
                 FROM skills_delivery_attempts WHERE delivery_id = $1 ORDER BY attempt",
                &[&id],
            )
            .await?;
        Ok(crate::rows::all(
            &self.reported,
            "skills_delivery_attempts",
            &rows,
            attempt,
        ))
    }
}
