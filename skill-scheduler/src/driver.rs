//! The driver: the tokio task that wakes at each fire instant (or change set), takes the
//! due fires off the queue, writes the state file in the order that never fires an instant
//! twice, and starts each run on its own task.

use std::sync::{Arc, Mutex};

use skill_registry::{ChangeSet, Registry};
use tokio::sync::mpsc;

use crate::dispatch::{Dispatcher, Fire};
use crate::history::{Outcome, RunGuard, RunRecord, Runs};
use crate::lock;
use crate::queue::{Core, Due, StateWrite};
use crate::state;

/// The driver task: apply change sets, take the due fires, write the state file in the
/// right order, launch the runs, and sleep until the next instant or change set.
pub(crate) async fn drive(
    core: Arc<Mutex<Core>>,
    runs: Arc<Mutex<Runs>>,
    dispatcher: Arc<dyn Dispatcher>,
    registry: Arc<Registry>,
    mut rx: mpsc::UnboundedReceiver<ChangeSet>,
) {
    let mut channel_open = true;
    loop {
        let (due, save, save_first) = {
            let mut c = lock(&core);
            // Use the skill as it is now: apply reloads not yet seen before firing.
            while let Ok(cs) = rx.try_recv() {
                c.apply(&cs);
            }
            let current = registry.snapshot();
            if current.generation() > c.generation {
                c.sync_full(&current);
            }
            let due = c.take_due();
            // Fires the state file does not record yet (no state file, a job queued within
            // the lead of its instant, a stalled driver) are written before they start.
            let save_first = due.iter().any(|d| !d.written_ahead);
            let ahead = c.write_ahead();
            let save = if save_first || ahead {
                c.prepare_save()
            } else {
                None
            };
            (due, save, save_first)
        };
        // A fire's instant reaches the disk before its run starts, so a crash in between
        // can not fire it again: written ahead of the instant when it can be (the runs due
        // now go first then), just before the runs otherwise. Outside the lock.
        if save_first {
            save_state(&core, save.as_ref());
        }
        if !due.is_empty() {
            launch(due, &runs, dispatcher.as_ref());
        }
        if !save_first {
            save_state(&core, save.as_ref());
        }
        let wake = lock(&core).wake_deadline();
        if channel_open {
            tokio::select! {
                biased;
                msg = rx.recv() => match msg {
                    Some(cs) => lock(&core).apply(&cs),
                    None => channel_open = false,
                },
                () = tokio::time::sleep_until(wake) => {}
            }
        } else {
            tokio::time::sleep_until(wake).await;
        }
    }
}

/// Write the state file, if there is one and something to write; a failure is a warning
/// and the fires go ahead.
fn save_state(core: &Mutex<Core>, save: Option<&StateWrite>) {
    if let Some((path, entries)) = save {
        if let Err(e) = state::save(path, entries.iter().map(|(k, v)| (&**k, *v))) {
            lock(core).warn(e.to_string());
        }
    }
}

/// Start (or skip, when one is still going and the dispatcher leaves that to the
/// scheduler) the run of each due fire.
fn launch(due: Vec<Due>, runs: &Arc<Mutex<Runs>>, dispatcher: &dyn Dispatcher) {
    let mut starts = Vec::with_capacity(due.len());
    let skip_overlaps = !dispatcher.decides_overlap();
    {
        let mut r = lock(runs);
        let now = r.clock.now();
        for d in due {
            let mut record = RunRecord {
                id: 0,
                name: d.name.to_string(),
                scheduled: d.scheduled,
                started: now,
                finished: None,
                generation: d.generation,
                outcome: Outcome::Running,
                replica: None,
            };
            if skip_overlaps && r.running.contains_key(&d.name) {
                record.outcome = Outcome::SkippedOverlap;
                record.finished = Some(now);
                r.push(record);
                continue;
            }
            let id = r.push(record);
            *r.running.entry(d.name.clone()).or_default() += 1;
            starts.push((d, id));
        }
    }
    for (d, id) in starts {
        let run = dispatcher.dispatch(Fire {
            name: d.name.to_string(),
            scheduled: d.scheduled,
            generation: d.generation,
            skill: d.skill,
        });
        let guard = RunGuard {
            runs: runs.clone(),
            name: d.name,
            id,
            result: None,
        };
        tokio::spawn(async move {
            let mut guard = guard;
            guard.result = Some(run.await);
        });
    }
}
