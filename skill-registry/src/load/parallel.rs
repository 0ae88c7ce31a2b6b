//! Parsing many files on all cores: one result per request, in request order, and a parser
//! crash costs only its own file.
//!
//! Workers are `std::thread::scope` threads pulling jobs from an atomic counter, so no job list
//! is split ahead of time. A parse that panics becomes an invalid entry with an `unreadable`
//! diagnostic; the other files load as usual.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::RegistryConfig;
use crate::skill::Skill;

/// A file to parse, as the workers see it: what it is loaded as when its parse crashed.
pub(super) trait Job: Sync {
    /// The entry a file whose parse crashed (a bug in the parser) is loaded as.
    fn crashed(&self, config: &RegistryConfig) -> Skill;
}

/// Parse one request with `parse`; a panic costs only this file ([`Job::crashed`]).
fn parse_guarded<R, F, T>(parse: &F, req: &R, config: &RegistryConfig) -> T
where
    R: Job,
    F: Fn(&R, &RegistryConfig) -> T,
    T: From<Skill>,
{
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parse(req, config)))
        .unwrap_or_else(|_| T::from(req.crashed(config)))
}

/// Parse the requests with `parse` on up to `threads` threads. The result has one skill per
/// request, in request order: each result carries its request's index, and a request
/// without a result (its parse crashed) is loaded as [`Job::crashed`] says.
///
/// `T` is a skill or a handle to one: a worker that gives an `Arc<Skill>` moves a pointer
/// through the result lists instead of the whole (kilobyte-sized) skill.
pub(super) fn run_parallel_with<R, F, T>(
    requests: &[&R],
    config: &RegistryConfig,
    parse: &F,
) -> Vec<T>
where
    R: Job,
    F: Fn(&R, &RegistryConfig) -> T + Sync,
    T: From<Skill> + Send,
{
    let threads = if config.threads == 0 {
        std::thread::available_parallelism().map_or(1, usize::from)
    } else {
        config.threads
    }
    .min(requests.len().max(1));
    if threads <= 1 || requests.len() < 64 {
        return requests
            .iter()
            .map(|r| parse_guarded(parse, r, config))
            .collect();
    }
    let next = AtomicUsize::new(0);
    let mut slots: Vec<Option<T>> = std::iter::repeat_with(|| None)
        .take(requests.len())
        .collect();
    let work = || {
        let mut local = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(req) = requests.get(i) else { break };
            local.push((i, parse_guarded(parse, req, config)));
        }
        local
    };
    std::thread::scope(|scope| {
        // This thread is one of the workers: one thread fewer to start.
        let handles: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        let mut results = vec![work()];
        // A worker that died took its results with it; those slots stay empty.
        results.extend(handles.into_iter().map(|h| h.join().unwrap_or_default()));
        for (i, skill) in results.into_iter().flatten() {
            if let Some(slot) = slots.get_mut(i) {
                *slot = Some(skill);
            }
        }
    });
    slots
        .into_iter()
        .zip(requests)
        .map(|(slot, req)| slot.unwrap_or_else(|| T::from(req.crashed(config))))
        .collect()
}
