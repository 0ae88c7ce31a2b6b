//! Reading rows that other programs (or people) may have written: a value this crate
//! cannot take (an infinite timestamp, a NULL where a value belongs, a number out of
//! range) is an error naming the row, never a panic; a list skips such rows and says so
//! once per row.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use tokio_postgres::Row;

use crate::Error;

/// Unreadable rows reported by one store, remembered so that a list read every half
/// second reports each once. Past this many, further rows are skipped without a line.
const MAX_REPORTED: usize = 1024;

/// The rows of this store already reported as unreadable.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reported(Arc<Mutex<HashSet<(&'static str, String)>>>);

impl Reported {
    /// Whether `(table, key)` is reported now for the first time (and remembered).
    fn first_time(&self, table: &'static str, key: &str) -> bool {
        match self.0.lock() {
            Ok(mut seen) if seen.len() < MAX_REPORTED => seen.insert((table, key.to_owned())),
            _ => false,
        }
    }
}

/// What names a row: column 0, its key (a number for runs, tasks and deliveries, a path
/// for notes), followed by `/` and the attempt when column 1 is a delivery attempt's
/// number (column 0 is then its delivery's id); `?` for what cannot be read.
fn key_of(row: &Row) -> String {
    let part = |i: usize| -> String {
        if let Ok(n) = row.try_get::<_, i64>(i) {
            return n.to_string();
        }
        if let Ok(n) = row.try_get::<_, i32>(i) {
            return n.to_string();
        }
        row.try_get::<_, String>(i)
            .unwrap_or_else(|_| UNKNOWN_KEY.to_owned())
    };
    match row.columns().get(1) {
        Some(c) if c.name() == ATTEMPT_COLUMN => format!("{}/{}", part(0), part(1)),
        _ => part(0),
    }
}

/// The column that numbers a delivery's attempts (the second of an attempt's row).
const ATTEMPT_COLUMN: &str = "attempt";

/// A row's key when even that cannot be read.
const UNKNOWN_KEY: &str = "?";

/// One row as `read` makes it, or [`Error::Unreadable`] naming it.
pub(crate) fn one<T>(
    table: &'static str,
    row: &Row,
    read: impl Fn(&Row) -> Result<T, tokio_postgres::Error>,
) -> Result<T, Error> {
    read(row).map_err(|e| Error::Unreadable {
        table,
        key: key_of(row),
        reason: crate::chain(&e),
    })
}

/// Every row `read` can make; the others are skipped, each reported (a warning) the first
/// time this store meets it.
pub(crate) fn all<T>(
    reported: &Reported,
    table: &'static str,
    rows: &[Row],
    read: impl Fn(&Row) -> Result<T, tokio_postgres::Error>,
) -> Vec<T> {
    rows.iter()
        .filter_map(|row| match one(table, row, &read) {
            Ok(t) => Some(t),
            Err(e) => {
                let key = match &e {
                    Error::Unreadable { key, .. } => key.as_str(),
                    _ => UNKNOWN_KEY,
                };
                if reported.first_time(table, key) {
                    tracing::warn!(error = %e, "skipped a row of the shared database");
                }
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_row_is_reported_once_and_the_memory_is_bounded() {
        let r = Reported::default();
        assert!(r.first_time("skills_runs", "1"));
        assert!(!r.first_time("skills_runs", "1"));
        assert!(r.first_time("skills_tasks", "1"));
        assert!(r.first_time("skills_notes", "a.md"));
        assert!(
            r.first_time("skills_notes", "b.md"),
            "each note by its path"
        );
        for id in 2..MAX_REPORTED {
            r.first_time("skills_runs", &id.to_string());
        }
        assert!(!r.first_time("skills_runs", "last"), "past the bound");
    }
}
