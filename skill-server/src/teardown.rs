//! Leaving a one-shot command's state to the operating system.
//!
//! A command such as `validate` builds a whole registry (thousands of skills, their
//! diagnostics and indexes) and then ends the process. Freeing that state allocation by
//! allocation is work the operating system does at once when the process exits: about
//! 4% of `validate`'s instructions on the bundled corpus. The binary asks for this
//! ([`end_process_after_command`]); tests and embedders that call [`crate::run`]
//! in-process do not, and their state is dropped as usual.

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether the process ends right after the command that runs.
static PROCESS_ENDS: AtomicBool = AtomicBool::new(false);

/// Declare that the process ends right after the command [`crate::run`] runs (the
/// `skill-server` binary does), so that a one-shot command's state is left for the
/// operating system to reclaim instead of being freed piece by piece.
pub fn end_process_after_command() {
    PROCESS_ENDS.store(true, Ordering::Relaxed);
}

/// Drop `value`, or, when the process ends right after this command, leave it for the
/// operating system. Only for plain memory: nothing that must be flushed, joined or
/// removed on drop. (`validate`'s engine qualifies because it is a one-shot engine: no
/// watcher, no scheduler, its search index in memory and unbuilt; an engine with any of
/// those must be dropped.)
pub(crate) fn release<T>(value: T) {
    if PROCESS_ENDS.load(Ordering::Relaxed) {
        std::mem::forget(value);
    } else {
        drop(value);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn values_are_dropped_unless_the_process_ends() {
        // One test for both states: the flag is process-wide.
        let value = Arc::new(());
        release(value.clone());
        assert_eq!(
            Arc::strong_count(&value),
            1,
            "dropped when the process goes on"
        );
        end_process_after_command();
        release(value.clone());
        PROCESS_ENDS.store(false, Ordering::Relaxed);
        assert_eq!(
            Arc::strong_count(&value),
            2,
            "left alone when the process ends"
        );
    }
}
