//! Where the server's logs and telemetry go: the `tracing` subscriber `serve` and `mcp`
//! install.
//!
//! Logs always go to stderr, filtered by `RUST_LOG` (or the command's default). With the
//! `otel` feature (on by default in this binary) and an OTLP endpoint in the environment,
//! the same `tracing` spans and events also leave as OpenTelemetry over OTLP/HTTP protobuf:
//! spans (tracing-opentelemetry), activation events as span events, and the
//! `monotonic_counter.*` / `histogram.*` event fields as metrics (tracing-opentelemetry's
//! metrics layer over the SDK meter). The libraries below know only `tracing`
//! (`skill_runtime::activation` names what they emit).
//!
//! Configuration is the standard environment (see [`OtelSettings::from_env`]):
//! - `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` /
//!   `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`): where to send. **Unset: nothing is exported**
//!   (no default collector is assumed). `http://` only: this build carries no TLS stack.
//! - `OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf` (the only one built; others are refused
//!   with a warning and telemetry stays off).
//! - `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_BSP_*`,
//!   `OTEL_METRIC_EXPORT_INTERVAL`: read by the exporter and SDK as specified.
//! - `OTEL_SERVICE_NAME`: default `skill-server`. `OTEL_SDK_DISABLED=true` turns it all off.
//! - `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`: let message text, command
//!   lines and argument values into spans (off by default).
//!
//! [`Telemetry::shutdown`] flushes what is buffered; `serve` calls it before it exits.

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

pub use crate::otel_env::{CAPTURE_CONTENT_ENV, OtelSettings};

/// The installed subscriber's exporters, to flush at exit.
#[derive(Default)]
pub struct Telemetry {
    #[cfg(feature = "otel")]
    providers: Option<crate::otel::Providers>,
    warnings: Vec<String>,
}

impl Telemetry {
    /// Install the process's subscriber: stderr logs filtered by `RUST_LOG` or
    /// `default_filter`, and OTLP export when the environment asks for it (the exporters
    /// send on `runtime`). A subscriber already installed (tests) is left as it is.
    pub fn init(
        default_filter: &str,
        ansi: bool,
        settings: &OtelSettings,
        runtime: &tokio::runtime::Handle,
    ) -> Telemetry {
        let (dispatch, telemetry) = Telemetry::build(default_filter, ansi, settings, runtime);
        // `try_init` also forwards the `log` crate's records (tantivy's) as it always did.
        let _ = dispatch.try_init();
        for w in &telemetry.warnings {
            tracing::warn!("telemetry: {w}");
        }
        telemetry
    }

    /// The subscriber [`Telemetry::init`] installs, without installing it (benchmarks
    /// compare subscribers with `tracing::dispatcher::with_default`). Also sets the
    /// process-wide content switch from `settings`.
    pub fn build(
        default_filter: &str,
        ansi: bool,
        settings: &OtelSettings,
        runtime: &tokio::runtime::Handle,
    ) -> (tracing::Dispatch, Telemetry) {
        skill_runtime::activation::set_capture_content(settings.capture_content);
        let filter = EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| EnvFilter::new(default_filter))
            // Metric events are for the exporter, not for people reading logs.
            .add_directive(metrics_off());
        let fmt = tracing_subscriber::fmt::layer()
            .with_ansi(ansi)
            .with_writer(std::io::stderr)
            .with_filter(filter);
        let mut telemetry = Telemetry::default();
        if let Some(r) = &settings.refused {
            telemetry.warnings.push(r.clone());
        }
        #[cfg(feature = "otel")]
        let dispatch = {
            let (layers, providers, warnings) = crate::otel::layers(settings, runtime);
            telemetry.providers = providers;
            telemetry.warnings.extend(warnings);
            // An empty `Vec` of layers would veto every callsite (its interest is "never"):
            // no OpenTelemetry layers is `None`, which leaves the log layer alone.
            let layers = (!layers.is_empty()).then_some(layers);
            tracing::Dispatch::new(tracing_subscriber::registry().with(fmt).with(layers))
        };
        #[cfg(not(feature = "otel"))]
        let dispatch = {
            let _ = runtime;
            if settings.traces || settings.metrics {
                telemetry
                    .warnings
                    .push("this skill-server was built without the `otel` feature".to_owned());
            }
            tracing::Dispatch::new(tracing_subscriber::registry().with(fmt))
        };
        (dispatch, telemetry)
    }

    /// Whether spans or metrics are being exported.
    pub fn exporting(&self) -> bool {
        #[cfg(feature = "otel")]
        {
            self.providers.is_some()
        }
        #[cfg(not(feature = "otel"))]
        {
            false
        }
    }

    /// Flush and stop the exporters (blocks until they are done or time out). Call it
    /// outside the runtime's `block_on`, while the runtime is still alive.
    pub fn shutdown(self) {
        #[cfg(feature = "otel")]
        if let Some(p) = self.providers {
            p.shutdown();
        }
    }
}

fn metrics_off() -> tracing_subscriber::filter::Directive {
    // A constant directive: parsing cannot fail, and a failure would only mean a noisier log.
    format!("{}=off", skill_runtime::activation::METRICS_TARGET)
        .parse()
        .unwrap_or_else(|_| tracing_subscriber::filter::LevelFilter::INFO.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(vars: &[(&str, &str)]) -> OtelSettings {
        OtelSettings::from_env(&|k| {
            vars.iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    /// rmcp's lines below `error` are filtered out by default (it logged what a client
    /// sent: a 900 KB notification became a 900 KB line), ours are not.
    #[test]
    fn default_filters_keep_rmcp_to_errors() {
        use tracing_subscriber::layer::SubscriberExt;
        for filter in [
            crate::serve_cmd::DEFAULT_LOG_FILTER,
            crate::mcp_cmd::MCP_LOG_FILTER,
        ] {
            let subscriber = tracing_subscriber::registry().with(EnvFilter::new(filter));
            tracing::subscriber::with_default(subscriber, || {
                assert!(!tracing::enabled!(target: "rmcp::service", tracing::Level::WARN));
                assert!(
                    !tracing::enabled!(target: "rmcp::transport::streamable_http_server", tracing::Level::INFO)
                );
                assert!(tracing::enabled!(target: "rmcp::service", tracing::Level::ERROR));
                assert!(tracing::enabled!(target: "skill_http", tracing::Level::WARN));
            });
        }
        let subscriber = tracing_subscriber::registry()
            .with(EnvFilter::new(crate::serve_cmd::DEFAULT_LOG_FILTER));
        tracing::subscriber::with_default(subscriber, || {
            assert!(tracing::enabled!(target: "skill_http", tracing::Level::INFO));
            // Activations are request logs: out of the default log.
            assert!(!tracing::enabled!(
                target: "skill_runtime::activation",
                tracing::Level::INFO
            ));
        });
    }

    #[test]
    fn nothing_is_exported_without_an_endpoint() {
        let s = settings(&[]);
        assert!(!s.traces && !s.metrics && !s.capture_content);
        assert_eq!(s.service_name, "skill-server");
    }

    #[test]
    fn the_generic_endpoint_turns_on_both_signals() {
        let s = settings(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")]);
        assert!(s.traces && s.metrics);
        let s = settings(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://h/v1/traces")]);
        assert!(s.traces && !s.metrics);
    }

    #[test]
    fn other_protocols_and_the_sdk_switch_turn_it_off() {
        let s = settings(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ]);
        assert!(!s.traces && !s.metrics);
        assert!(s.refused.as_deref().is_some_and(|r| r.contains("grpc")));
        let s = settings(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            ("OTEL_SDK_DISABLED", "true"),
        ]);
        assert!(!s.traces && !s.metrics && s.refused.is_none());
    }

    #[test]
    fn content_capture_is_opt_in() {
        assert!(settings(&[(CAPTURE_CONTENT_ENV, "true")]).capture_content);
        assert!(!settings(&[(CAPTURE_CONTENT_ENV, "no")]).capture_content);
    }
}
