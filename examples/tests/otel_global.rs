//! A gate built without a meter counts on the global meter provider's
//! `gate` meter. A test binary of its own: it sets the process's global
//! provider, and beside `otel.rs`'s test in one process its calls, made on a
//! thread without a `tracing` subscriber, now and then cost that test spans
//! (tracing caches a callsite's interest for the whole process, while
//! `set_default` installs a subscriber for one thread).

use std::sync::Arc;

use gate_examples::invoice::backend::Backend;
use gate_examples::invoice::tools::InvoiceTools;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use toolgate::{Gate, ToolCall};

#[tokio::test]
async fn a_gate_built_without_a_meter_counts_on_the_global_providers_gate_meter() {
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter.clone()).build())
        .build();
    opentelemetry::global::set_meter_provider(provider.clone());
    let toolbox = InvoiceTools::new(Arc::new(Backend::demo())).into_toolbox();
    let gate = Gate::builder(toolbox).store("memory:").build().await.unwrap();
    let mut task = gate.task("billing");
    task.handle(ToolCall::new("c1", "get_invoice", r#"{"invoice_id": "INV-41"}"#))
        .await;
    provider.force_flush().unwrap();

    let exported = exporter.get_finished_metrics().unwrap();
    let mut decisions = Vec::new();
    let metrics = exported
        .iter()
        .flat_map(ResourceMetrics::scope_metrics)
        .flat_map(|scope| scope.metrics());
    for metric in metrics.filter(|metric| metric.name() == "gate.decisions") {
        let AggregatedMetrics::U64(MetricData::Sum(sum)) = metric.data() else {
            panic!("gate.decisions is not a u64 sum: {:?}", metric.data());
        };
        for point in sum.data_points() {
            let attributes: Vec<String> = point
                .attributes()
                .map(|kv| format!("{}={}", kv.key, kv.value))
                .collect();
            decisions.push((attributes, point.value()));
        }
    }
    assert_eq!(decisions, [(vec!["gate.action=return".to_owned()], 1)]);
    let scopes: Vec<(&str, Option<&str>)> = exported
        .iter()
        .flat_map(ResourceMetrics::scope_metrics)
        .map(|scope| (scope.scope().name(), scope.scope().version()))
        .collect();
    assert_eq!(scopes, [("gate", Some(env!("CARGO_PKG_VERSION")))]);
}
