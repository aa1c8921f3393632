//! What an OpenTelemetry pipeline receives from gate: the real SDK, its
//! in-memory span and metric exporters, `tracing-opentelemetry` between
//! `tracing` and the tracer, and calls through a real gate on the memory
//! store: a success, a rejection and a success after it.

use std::collections::BTreeMap;
use std::sync::Arc;

use gate_examples::invoice::backend::Backend;
use gate_examples::invoice::tools::InvoiceTools;
use opentelemetry::Value;
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use toolgate::{Gate, Step, ToolCall};
use tracing_subscriber::layer::SubscriberExt;

/// What the exporters hold after the calls.
struct Exported {
    spans: Vec<SpanData>,
    metrics: Vec<ResourceMetrics>,
}

/// Runs `calls` in one task of a gate whose metrics go to an SDK meter
/// provider and whose spans go, through `tracing-opentelemetry`, to an SDK
/// tracer provider; both export to memory.
async fn export(calls: Vec<ToolCall>) -> Exported {
    let span_exporter = InMemorySpanExporter::default();
    let tracer_provider = SdkTracerProvider::builder()
        .with_simple_exporter(span_exporter.clone())
        .build();
    let metric_exporter = InMemoryMetricExporter::default();
    let meter_provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metric_exporter.clone()).build())
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(tracer_provider.tracer("test"));
    let _default = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));

    let toolbox = InvoiceTools::new(Arc::new(Backend::demo())).into_toolbox();
    let gate = Gate::builder(toolbox)
        .store("memory:")
        .meter(meter_provider.meter("gate"))
        .build()
        .await
        .unwrap();
    let mut task = gate.task("billing");
    for call in calls {
        let step = task.handle(call).await;
        assert!(!matches!(step, Step::Fail(_)), "no call here fails the task: {step:?}");
    }
    tracer_provider.force_flush().unwrap();
    meter_provider.force_flush().unwrap();
    Exported {
        spans: span_exporter.get_finished_spans().unwrap(),
        metrics: metric_exporter.get_finished_metrics().unwrap(),
    }
}

fn value<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

/// A string attribute's text (`None` for a missing or non-string one).
fn text<'a>(span: &'a SpanData, key: &str) -> Option<&'a str> {
    match value(span, key)? {
        Value::String(text) => Some(text.as_str()),
        _ => None,
    }
}

/// The points of the `u64` sum `name`, by their attributes (sorted `key=value`).
fn sum_points(exported: &[ResourceMetrics], name: &str) -> BTreeMap<Vec<String>, u64> {
    let mut points = BTreeMap::new();
    let metrics = exported
        .iter()
        .flat_map(ResourceMetrics::scope_metrics)
        .flat_map(|scope| scope.metrics());
    for metric in metrics.filter(|m| m.name() == name) {
        let AggregatedMetrics::U64(MetricData::Sum(sum)) = metric.data() else {
            panic!("{name} is not a u64 sum: {:?}", metric.data());
        };
        for point in sum.data_points() {
            let mut attributes: Vec<String> = point
                .attributes()
                .map(|kv| format!("{}={}", kv.key, kv.value))
                .collect();
            attributes.sort();
            points.insert(attributes, point.value());
        }
    }
    points
}

fn labels(pairs: &[&str]) -> Vec<String> {
    pairs.iter().map(|p| (*p).to_owned()).collect()
}

#[tokio::test]
async fn the_sdk_receives_one_execute_tool_span_per_call_and_the_decisions_counted() {
    let exported = export(vec![
        ToolCall::new("c1", "lookup_customer", r#"{"email": "ann@acme.com"}"#),
        ToolCall::new("c2", "lookup_customer", r#"{"email": 5}"#),
        ToolCall::new("c3", "lookup_customer", r#"{"email": "bob@globex.com"}"#),
    ])
    .await;

    let spans: Vec<&SpanData> = exported.spans.iter().collect();
    assert_eq!(spans.len(), 3, "{spans:#?}");
    for (span, id) in spans.iter().zip(["c1", "c2", "c3"]) {
        assert_eq!(span.name, "execute_tool lookup_customer");
        assert_eq!(span.span_kind, SpanKind::Internal);
        assert_eq!(text(span, "gen_ai.operation.name"), Some("execute_tool"));
        assert_eq!(text(span, "gen_ai.tool.name"), Some("lookup_customer"));
        assert_eq!(text(span, "gen_ai.tool.call.id"), Some(id));
        assert_eq!(text(span, "gen_ai.tool.type"), Some("function"));
        assert_eq!(value(span, "gate.attempt"), Some(&Value::I64(1)));
        // tracing-opentelemetry's own fields set the span; they are not attributes.
        assert_eq!(value(span, "otel.name"), None);
        assert_eq!(value(span, "otel.kind"), None);
    }
    let (first, rejected, after) = (spans[0], spans[1], spans[2]);
    assert_eq!(text(first, "gate.action"), Some("return"));
    assert_eq!(value(first, "error.type"), None);
    assert_eq!(first.status, Status::Unset);
    assert_eq!(text(rejected, "gate.action"), Some("reject"));
    assert_eq!(text(rejected, "gate.failure.class"), Some("structural"));
    assert_eq!(text(rejected, "error.type"), Some("structural"));
    assert!(matches!(rejected.status, Status::Error { .. }), "{:?}", rejected.status);
    assert_eq!(text(after, "gate.action"), Some("return"));
    assert_eq!(after.status, Status::Unset);
    let Some(Value::I64(repair_tokens)) = value(rejected, "gate.repair_tokens") else {
        panic!("the rejection's span has no repair tokens: {rejected:#?}");
    };
    assert!(*repair_tokens > 0, "a rejection is a repair the model pays for");

    let decisions = sum_points(&exported.metrics, "gate.decisions");
    let expected = BTreeMap::from([
        (labels(&["gate.action=return"]), 2),
        (labels(&["gate.action=reject", "gate.failure.class=structural"]), 1),
    ]);
    assert_eq!(decisions, expected);
    let tokens = sum_points(&exported.metrics, "gate.repair.tokens");
    let expected = BTreeMap::from([(labels(&["gate.action=reject"]), *repair_tokens as u64)]);
    assert_eq!(tokens, expected);
}
