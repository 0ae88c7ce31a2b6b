//! What the standard `OTEL_*` environment asks of telemetry, read once: which signals to
//! export, whether content may go into them, the service name, and why an endpoint that is
//! set is refused. Both the subscriber set-up and the exporters read it.

/// The switch for content in telemetry (GenAI instrumentations use this variable).
pub const CAPTURE_CONTENT_ENV: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

/// What the environment asks of telemetry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OtelSettings {
    /// Export spans (an endpoint for traces is set).
    pub traces: bool,
    /// Export metrics (an endpoint for metrics is set).
    pub metrics: bool,
    /// Content (message text, command lines, arguments) goes into telemetry.
    pub capture_content: bool,
    /// The `service.name` resource attribute.
    pub service_name: String,
    /// Why telemetry is off although an endpoint is set (shown as a warning).
    pub refused: Option<String>,
}

impl OtelSettings {
    /// Read the settings through `env` (the process environment in the binary).
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Self {
        let set = |k: &str| env(k).is_some_and(|v| !v.trim().is_empty());
        let yes = |k: &str| env(k).is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        let any = set("OTEL_EXPORTER_OTLP_ENDPOINT");
        let mut s = OtelSettings {
            traces: any || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            metrics: any || set("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"),
            capture_content: yes(CAPTURE_CONTENT_ENV),
            service_name: env("OTEL_SERVICE_NAME")
                .filter(|v| !v.trim().is_empty())
                .unwrap_or_else(|| "skill-server".to_owned()),
            refused: None,
        };
        if yes("OTEL_SDK_DISABLED") {
            s.traces = false;
            s.metrics = false;
        }
        for key in [
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
        ] {
            if let Some(p) = env(key).filter(|p| p.trim() != "http/protobuf") {
                if s.traces || s.metrics {
                    s.refused = Some(format!(
                        "{key}={p} is not supported (this server sends http/protobuf only); \
                         telemetry is off"
                    ));
                }
                s.traces = false;
                s.metrics = false;
            }
        }
        s
    }
}
