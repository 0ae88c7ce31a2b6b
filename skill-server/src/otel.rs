//! The `otel` feature's wiring: OTLP/HTTP protobuf exporters for spans and metrics, the
//! tracing-opentelemetry layers that feed them, and the small HTTP/1.1 client they send
//! with.
//!
//! Why our own client: the SDK's batch span processor and periodic metric reader export
//! from their own threads with a blocking executor, so the exporter's client must not need
//! to be inside a tokio runtime. opentelemetry-otlp's choices are reqwest (a second HTTP
//! stack, and a TLS library when https is wanted) or opentelemetry-http's hyper client
//! (which turns on HTTP/2 in hyper for the whole build). [`HyperClient`] implements the
//! exporter's `HttpClient` trait with hyper's HTTP/1.1 client connection on the server's
//! own tokio runtime: each export is spawned on that runtime and awaited from the
//! exporter's thread.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{
    MetricExporter, Protocol, SpanExporter, WithExportConfig, WithHttpConfig,
};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{Instrument, SdkMeterProvider, Stream};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Subscriber;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::registry::LookupSpan;

use crate::otel_env::OtelSettings;

/// How long one export may take when `OTEL_EXPORTER_OTLP_TIMEOUT` does not say (the
/// specification's default).
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest collector response read (responses are small status messages).
const MAX_RESPONSE_BYTES: usize = 64 * 1024;

/// The `tracing` targets exported: the engine's crates and its telemetry targets.
const EXPORTED_TARGETS: [&str; 9] = [
    "skill_format",
    "skill_registry",
    "skill_router",
    "skill_search",
    "skill_scheduler",
    "skill_runtime",
    "skill_http",
    "skill_mcp",
    "skill_server",
];

/// The SDK providers to flush at exit.
pub(crate) struct Providers {
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
}

impl Providers {
    pub(crate) fn shutdown(self) {
        if let Some(t) = self.tracer {
            if let Err(e) = t.shutdown() {
                tracing::warn!("telemetry: flushing spans failed: {e}");
            }
        }
        if let Some(m) = self.meter {
            if let Err(e) = m.shutdown() {
                tracing::warn!("telemetry: flushing metrics failed: {e}");
            }
        }
    }
}

/// A boxed layer over the subscriber `S`.
pub(crate) type BoxedLayer<S> = Box<dyn Layer<S> + Send + Sync + 'static>;

/// What the exporters take: the engine's crates at INFO, and every activation event, a
/// model output's per-command ones included (those are DEBUG, so that a library's plain
/// `info` log shows one summary per request instead of one line per command).
fn exported_targets() -> Targets {
    EXPORTED_TARGETS
        .iter()
        .fold(Targets::new(), |t, name| {
            t.with_target(*name, LevelFilter::INFO)
        })
        .with_target(
            skill_runtime::activation::ACTIVATION_TARGET,
            LevelFilter::DEBUG,
        )
}

/// The OpenTelemetry layers `settings` ask for (none when nothing is to be exported), the
/// providers behind them, and warnings for exporters that could not be built.
pub(crate) fn layers<S>(
    settings: &OtelSettings,
    runtime: &tokio::runtime::Handle,
) -> (Vec<BoxedLayer<S>>, Option<Providers>, Vec<String>)
where
    S: Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
{
    let mut layers: Vec<BoxedLayer<S>> = Vec::new();
    let mut warnings = Vec::new();
    let resource = Resource::builder()
        .with_service_name(settings.service_name.clone())
        .build();
    let client = HyperClient {
        runtime: runtime.clone(),
        timeout: export_timeout(),
    };
    let exported = exported_targets();
    let mut providers = Providers {
        tracer: None,
        meter: None,
    };
    if settings.traces {
        match SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_http_client(client.clone())
            .build()
        {
            Ok(exporter) => {
                let provider = SdkTracerProvider::builder()
                    .with_batch_exporter(exporter)
                    .with_resource(resource.clone())
                    .build();
                let tracer = provider.tracer("skill-server");
                // A request that names its caller's span (W3C trace context) continues
                // that trace.
                skill_runtime::activation::set_remote_parent(adopt_remote_parent);
                // Metric events are counted, not recorded as span events.
                let spans = exported
                    .clone()
                    .with_target(skill_runtime::activation::METRICS_TARGET, LevelFilter::OFF);
                layers.push(Box::new(
                    tracing_opentelemetry::layer()
                        .with_tracer(tracer)
                        .with_filter(spans),
                ));
                providers.tracer = Some(provider);
            }
            Err(e) => warnings.push(format!("span exporter: {e}")),
        }
    }
    if settings.metrics {
        match MetricExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_http_client(client)
            .build()
        {
            Ok(exporter) => {
                let provider = SdkMeterProvider::builder()
                    .with_view(with_unit)
                    .with_periodic_exporter(exporter)
                    .with_resource(resource)
                    .build();
                layers.push(Box::new(
                    tracing_opentelemetry::MetricsLayer::new(provider.clone())
                        .with_filter(exported),
                ));
                providers.meter = Some(provider);
            }
            Err(e) => warnings.push(format!("metric exporter: {e}")),
        }
    }
    let any = providers.tracer.is_some() || providers.meter.is_some();
    (layers, any.then_some(providers), warnings)
}

/// The W3C trace-context keys a request's carrier is read for.
const TRACE_CONTEXT_KEYS: [&str; 2] = ["traceparent", "tracestate"];

/// The trace-context keys of one carrier, read once.
struct Carrier(Vec<(&'static str, String)>);

impl Extractor for Carrier {
    fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.as_str())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.iter().map(|(k, _)| *k).collect()
    }
}

/// The [`skill_runtime::activation::RemoteParent`] this build installs: the W3C trace
/// context propagator over the carrier's `traceparent` and `tracestate`; a carrier
/// without a valid `traceparent` leaves the span a root.
fn adopt_remote_parent(span: &tracing::Span, get: &dyn Fn(&str) -> Option<String>) {
    let carrier = Carrier(
        TRACE_CONTEXT_KEYS
            .iter()
            .filter_map(|k| get(k).map(|v| (*k, v)))
            .collect(),
    );
    if carrier.0.is_empty() {
        return;
    }
    let cx = TraceContextPropagator::new().extract(&carrier);
    if cx.span().span_context().is_valid() {
        // Fails only for a span this layer does not know (filtered out): it stays a root.
        let _ = span.set_parent(cx);
    }
}

/// The metric stream of an engine instrument, with its unit from
/// [`skill_runtime::activation::UNITS`]; other instruments keep the default.
fn with_unit(instrument: &Instrument) -> Option<Stream> {
    let (_, unit) = skill_runtime::activation::UNITS
        .iter()
        .find(|(name, _)| *name == instrument.name())?;
    Stream::builder().with_unit(*unit).build().ok()
}

/// `OTEL_EXPORTER_OTLP_TIMEOUT` in milliseconds, or [`EXPORT_TIMEOUT`].
fn export_timeout() -> Duration {
    std::env::var("OTEL_EXPORTER_OTLP_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(EXPORT_TIMEOUT, Duration::from_millis)
}

/// The exporters' HTTP client: one HTTP/1.1 connection per export, driven on the server's
/// runtime. `http://` endpoints only.
#[derive(Debug, Clone)]
struct HyperClient {
    runtime: tokio::runtime::Handle,
    timeout: Duration,
}

#[async_trait::async_trait]
impl HttpClient for HyperClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let timeout = self.timeout;
        let task = self
            .runtime
            .spawn(async move { tokio::time::timeout(timeout, send(request)).await });
        match task.await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(format!("no answer within {} ms", timeout.as_millis()).into()),
            Err(e) => Err(format!("the export task ended: {e}").into()),
        }
    }
}

async fn send(request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
    let (mut parts, body) = request.into_parts();
    if parts.uri.scheme_str() != Some("http") {
        return Err(format!(
            "cannot send to {}: only http:// endpoints are supported (no TLS in this build)",
            parts.uri
        )
        .into());
    }
    let authority = parts
        .uri
        .authority()
        .cloned()
        .ok_or_else(|| format!("no host in {}", parts.uri))?;
    let port = authority.port_u16().unwrap_or(80);
    let stream = tokio::net::TcpStream::connect((authority.host(), port)).await?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    parts
        .headers
        .insert(hyper::header::HOST, authority.as_str().parse()?);
    parts.uri = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .parse()?;
    let response = sender
        .send_request(Request::from_parts(parts, Full::new(body)))
        .await?;
    let (parts, body) = response.into_parts();
    let body = Limited::new(body, MAX_RESPONSE_BYTES)
        .collect()
        .await?
        .to_bytes();
    Ok(Response::from_parts(parts, body))
}

#[cfg(test)]
mod tests {
    use tracing::Level;

    /// A model output's per-command activations (DEBUG) are exported; other DEBUG events
    /// are not (they were dropped with them once activations moved to DEBUG).
    #[test]
    fn per_command_activations_are_exported() {
        let t = super::exported_targets();
        assert!(t.would_enable(skill_runtime::activation::ACTIVATION_TARGET, &Level::DEBUG));
        assert!(t.would_enable("skill_http", &Level::INFO));
        assert!(!t.would_enable("skill_http", &Level::DEBUG));
        assert!(!t.would_enable("hyper", &Level::INFO));
    }
}
