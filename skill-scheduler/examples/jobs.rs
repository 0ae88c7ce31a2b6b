//! Start a scheduler over a skills folder and list its jobs.
//!
//! `cargo run -p skill-scheduler --example jobs -- [SKILLS_DIR] [ZONE]`
//! (defaults: the bundled `packs/actions`, UTC).

use std::sync::Arc;

use skill_registry::{Registry, RegistryConfig, Source};
use skill_scheduler::{
    DispatchFuture, Dispatcher, Fire, Scheduler, SchedulerConfig, parse_timezone,
};

/// Prints each fire instead of running anything.
struct Print;

impl Dispatcher for Print {
    fn dispatch(&self, fire: Fire) -> DispatchFuture {
        println!(
            "fire {} for {} (generation {})",
            fire.name, fire.scheduled, fire.generation
        );
        Box::pin(async { Ok(()) })
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../packs/actions").to_owned());
    let zone = parse_timezone(&args.next().unwrap_or_else(|| "UTC".to_owned()))?;
    let registry = Arc::new(Registry::load(RegistryConfig::with_sources(vec![
        Source::new(dir, "skills"),
    ])));
    let config = SchedulerConfig {
        timezone: zone,
        ..SchedulerConfig::default()
    };
    let scheduler = Scheduler::start(registry, Arc::new(Print), config)?;
    for job in scheduler.jobs(3) {
        println!("{}  `{}`  in {}", job.name, job.expression, job.timezone);
        for t in job.next {
            println!("  {}", t.with_timezone(&zone));
        }
    }
    for d in scheduler.diagnostics() {
        println!("{d}");
    }
    Ok(())
}
