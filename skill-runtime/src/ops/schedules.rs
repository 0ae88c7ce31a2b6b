//! The schedules operation ([`Engine::schedules`]): every scheduled skill with its next
//! fire times, from the running scheduler (with its last fires, runs and history) or
//! computed from the skills' schedules for another time zone or start instant.

use skill_scheduler::{DateTime, RunRecord, Tz, Utc, scheduled_skills};

use crate::engine::Engine;

/// Which fire times [`Engine::schedules`] lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScheduleQuery {
    /// Fire times per skill.
    pub next: usize,
    /// The time zone of the listing (`None`: UTC).
    pub timezone: Option<Tz>,
    /// Compute fire times after this instant (`None`: now).
    pub from: Option<DateTime<Utc>>,
}

/// One scheduled skill.
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduleEntry {
    /// The skill.
    pub skill: String,
    /// Its cron expression.
    pub expression: String,
    /// Its skill file.
    pub path: std::path::PathBuf,
    /// The time zone it fires in.
    pub timezone: Tz,
    /// Its next fire times.
    pub next: Vec<DateTime<Utc>>,
    /// The scheduler's last fire of it (a running scheduler only).
    pub last_fire: Option<DateTime<Utc>>,
    /// The scheduler's last finished run of it (a running scheduler only).
    pub last_run: Option<RunRecord>,
    /// Whether a run of it is under way (a running scheduler only).
    pub running: bool,
}

/// Every scheduled skill with its next fire times ([`Engine::schedules`]).
#[derive(Debug, Clone)]
pub struct Schedules {
    /// The snapshot generation.
    pub generation: u64,
    /// The time zone of the listing.
    pub timezone: Tz,
    /// The instant fire times follow.
    pub from: DateTime<Utc>,
    /// The scheduled skills, by name.
    pub schedules: Vec<ScheduleEntry>,
    /// The scheduler's recent runs, when the listing comes from the running scheduler.
    pub history: Option<Vec<RunRecord>>,
    /// Schedules that do not parse.
    pub diagnostics: Vec<skill_format::Diagnostic>,
    /// The webhook deliveries (each with its attempts: the first and its retries), oldest
    /// first: with a database the outbox's, every replica's; else this process's; empty
    /// without a webhook or a running scheduler.
    #[cfg(feature = "replicas")]
    pub deliveries: Vec<crate::replicas::DeliveryRecord>,
}

impl Engine {
    /// Scheduled skills with their next fire times. With a running scheduler and neither a
    /// time zone nor a start instant asked for, the scheduler's own jobs (with their last
    /// fire, last run and the run history); otherwise computed from the skills' schedules.
    pub fn schedules(&self, query: &ScheduleQuery) -> Schedules {
        let snapshot = self.registry().snapshot();
        let (jobs, diagnostics) = scheduled_skills(&snapshot);
        let now = Utc::now();
        if query.timezone.is_none() && query.from.is_none() {
            if let Some(live) = self.schedule_jobs(query.next) {
                let schedules = live
                    .into_iter()
                    .map(|j| {
                        let path = snapshot
                            .get(&j.name)
                            .map(|s| s.path.clone())
                            .unwrap_or_default();
                        ScheduleEntry {
                            skill: j.name,
                            expression: j.expression,
                            path,
                            timezone: j.timezone,
                            next: j.next,
                            last_fire: j.last_fire,
                            last_run: j.last_run,
                            running: j.running,
                        }
                    })
                    .collect();
                return Schedules {
                    generation: snapshot.generation(),
                    timezone: Tz::UTC,
                    from: now,
                    schedules,
                    history: Some(self.schedule_history().unwrap_or_default()),
                    diagnostics,
                    #[cfg(feature = "replicas")]
                    deliveries: self.deliveries(),
                };
            }
        }
        let tz = query.timezone.unwrap_or(Tz::UTC);
        let from = query.from.unwrap_or(now);
        let schedules = jobs
            .iter()
            .map(|j| ScheduleEntry {
                skill: j.skill.name.clone(),
                expression: j.schedule.as_str().to_owned(),
                path: j.skill.path.clone(),
                timezone: tz,
                next: j.schedule.upcoming(from, tz, query.next),
                last_fire: None,
                last_run: None,
                running: false,
            })
            .collect();
        Schedules {
            generation: snapshot.generation(),
            timezone: tz,
            from,
            schedules,
            history: None,
            diagnostics,
            #[cfg(feature = "replicas")]
            deliveries: Vec::new(),
        }
    }
}
