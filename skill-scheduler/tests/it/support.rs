//! Helpers shared by the integration tests: instants, a recording dispatcher, a skills
//! folder with scheduled actions, and letting paused time pass.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use skill_registry::{Registry, RegistryConfig, Source};
use skill_scheduler::{Clock, DispatchFuture, Dispatcher, Fire, SchedulerConfig};

pub fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, s).unwrap()
}

/// What a test dispatcher does with a run.
#[derive(Clone, Copy)]
pub enum Behaviour {
    Quick,
    Hold(Duration),
    Fail,
    Panic,
}

pub struct Recorder {
    fires: Mutex<Vec<Fire>>,
    behaviour: Behaviour,
}

impl Recorder {
    pub fn new(behaviour: Behaviour) -> Arc<Recorder> {
        Arc::new(Recorder {
            fires: Mutex::new(Vec::new()),
            behaviour,
        })
    }

    pub fn instants(&self, name: &str) -> Vec<DateTime<Utc>> {
        self.fires
            .lock()
            .unwrap()
            .iter()
            .filter(|f| f.name == name)
            .map(|f| f.scheduled)
            .collect()
    }

    pub fn all(&self) -> Vec<Fire> {
        self.fires.lock().unwrap().clone()
    }
}

impl Dispatcher for Recorder {
    fn dispatch(&self, fire: Fire) -> DispatchFuture {
        self.fires.lock().unwrap().push(fire);
        let behaviour = self.behaviour;
        Box::pin(async move {
            match behaviour {
                Behaviour::Quick => Ok(()),
                Behaviour::Hold(d) => {
                    tokio::time::sleep(d).await;
                    Ok(())
                }
                Behaviour::Fail => Err("handler exited with status 3".to_owned()),
                Behaviour::Panic => panic!("dispatcher blew up"),
            }
        })
    }
}

pub struct Pack {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
}

impl Pack {
    pub fn new() -> Pack {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("skills");
        std::fs::create_dir_all(root.join("jobs")).unwrap();
        // The actions layout: a domain folder with its index, one file per action.
        std::fs::write(
            root.join("jobs").join("SKILL.md"),
            "---\ndomain: jobs\ndescription: Scheduled jobs for tests\n---\n# Jobs\n",
        )
        .unwrap();
        Pack { _dir: dir, root }
    }

    /// Write an actions skill `jobs.<action>` with a schedule (and a body marker).
    pub fn job(&self, action: &str, schedule: &str, body: &str) -> PathBuf {
        let path = self.root.join("jobs").join(format!("{action}.md"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            format!(
                "---\nname: jobs.{action}\ndescription: Scheduled job {action}\nschedule: \"{schedule}\"\n---\n\n# jobs.{action}\n\n{body}\n"
            ),
        )
        .unwrap();
        path
    }

    pub fn registry(&self) -> Arc<Registry> {
        Arc::new(Registry::load(RegistryConfig::with_sources(vec![
            Source::new(self.root.clone(), "test"),
        ])))
    }

    pub fn state(&self) -> PathBuf {
        self._dir.path().join("state.json")
    }
}

pub fn config(start: DateTime<Utc>) -> SchedulerConfig {
    SchedulerConfig {
        clock: Clock::StartingAt(start),
        ..SchedulerConfig::default()
    }
}

/// Let simulated time pass (the paused clock jumps from timer to timer).
pub async fn pass(d: Duration) {
    tokio::time::sleep(d).await;
}

pub const MINUTE: Duration = Duration::from_secs(60);
pub const HOUR: Duration = Duration::from_secs(3600);
pub const DAY: Duration = Duration::from_secs(86_400);

/// Let the driver (and the runs it started) act on the current instant without moving
/// the clock.
pub async fn settle() {
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
}

/// The instant the state file at `path` records for `name`, if it does.
pub fn recorded(path: &Path, name: &str) -> Option<DateTime<Utc>> {
    let text = std::fs::read_to_string(path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let at = v["last_fires"][name].as_str()?;
    Some(
        DateTime::parse_from_rfc3339(at)
            .unwrap()
            .with_timezone(&Utc),
    )
}

/// What a [`StateReader`] saw as a run started: the skill, its instant, and what the state
/// file recorded for the skill then.
pub type Seen = (String, DateTime<Utc>, Option<DateTime<Utc>>);

/// A dispatcher that reads the state file as each run starts.
pub struct StateReader {
    path: PathBuf,
    seen: Mutex<Vec<Seen>>,
}

impl StateReader {
    pub fn new(path: PathBuf) -> Arc<StateReader> {
        Arc::new(StateReader {
            path,
            seen: Mutex::new(Vec::new()),
        })
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Dispatcher for StateReader {
    fn dispatch(&self, fire: Fire) -> DispatchFuture {
        let on_disk = recorded(&self.path, &fire.name);
        self.seen
            .lock()
            .unwrap()
            .push((fire.name, fire.scheduled, on_disk));
        Box::pin(async { Ok(()) })
    }
}

pub const MS: Duration = Duration::from_millis(1);
