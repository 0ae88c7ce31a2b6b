//! The seam between the scheduler and whatever runs a skill: a [`Fire`] handed to a
//! [`Dispatcher`], which returns the run as a future. The runtime implements it; tests record.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use skill_registry::Skill;

/// One fire of one job, as handed to the [`Dispatcher`].
#[derive(Debug, Clone)]
pub struct Fire {
    /// The skill's name.
    pub name: String,
    /// The instant the schedule named (the run may start a little later).
    pub scheduled: DateTime<Utc>,
    /// The registry snapshot generation the skill was taken from.
    pub generation: u64,
    /// The skill as that generation holds it: the version current at fire time.
    pub skill: Arc<Skill>,
}

/// What a dispatched run returns: `Ok` or a message saying why it failed.
pub type RunResult = Result<(), String>;

/// The future a [`Dispatcher`] returns.
pub type DispatchFuture = Pin<Box<dyn Future<Output = RunResult> + Send + 'static>>;

/// Carries out a fired job. The runtime implements it (executing the skill, or handing a
/// model-driven skill to the host); tests use a recording one.
pub trait Dispatcher: Send + Sync + 'static {
    /// Start the run for `fire`. Called on the scheduler's task with no lock held (so it
    /// may call back into the [`Scheduler`](crate::Scheduler)), and should return quickly: the work belongs
    /// in the returned future, which runs on its own tokio task. While it is pending,
    /// further fires of the same skill are skipped and recorded as such, unless
    /// [`Dispatcher::decides_overlap`] says the dispatcher decides.
    fn dispatch(&self, fire: Fire) -> DispatchFuture;

    /// Whether this dispatcher decides itself what a fire that comes while a run of the
    /// same skill is going does (default false: the scheduler skips it and records the
    /// skip). A dispatcher that claims fires in a database shared by replicas says true:
    /// the database knows whether a run is going anywhere, while this process only knows
    /// its own runs, and a run that is only waiting for its claim would otherwise make
    /// this replica skip instants another replica should run.
    fn decides_overlap(&self) -> bool {
        false
    }
}
