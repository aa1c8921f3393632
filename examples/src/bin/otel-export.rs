//! The invoice agent's scenarios with their traces and metrics sent over
//! OTLP (HTTP/protobuf) to a collector: every call an `execute_tool` span,
//! every decision counted, as an operator's tracing backend receives them.
//!
//! The endpoint is `--endpoint`, else `OTEL_EXPORTER_OTLP_ENDPOINT`, else
//! `http://localhost:4318` (a local OpenTelemetry Collector or Jaeger);
//! traces go to `/v1/traces` under it and metrics to `/v1/metrics`.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;
use gate_examples::invoice::{DemoEvent, DemoOptions, ModelChoice, run_demo};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{MetricExporter, Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::layer::SubscriberExt;

/// Plays the invoice scenarios (scripted model, in-memory store) and
/// exports their spans and gate's metrics over OTLP.
#[derive(Parser)]
#[command(name = "otel-export", version)]
struct Args {
    /// The collector's OTLP/HTTP base URL.
    #[arg(long, env = "OTEL_EXPORTER_OTLP_ENDPOINT", default_value = "http://localhost:4318")]
    endpoint: String,
    /// The `service.name` the traces and metrics carry.
    #[arg(long, default_value = "gate-invoice-agent")]
    service_name: String,
}

/// The two providers, shut down (and so flushed) at the end of the run.
struct Pipeline {
    tracer_provider: SdkTracerProvider,
    meter_provider: SdkMeterProvider,
}

/// The exporters and providers, installed as the global ones: the gate
/// built afterwards takes the global meter, and the `tracing` subscriber
/// sends its spans to the tracer.
fn install(args: &Args) -> Result<Pipeline, Box<dyn std::error::Error>> {
    // OTLP's HTTP client takes TLS from the process's default provider,
    // which the workspace's reqwest does not choose; an `Err` says one is
    // already installed, which serves as well.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let base = args.endpoint.trim_end_matches('/');
    let resource = Resource::builder().with_service_name(args.service_name.clone()).build();
    let spans = SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{base}/v1/traces"))
        .build()?;
    let metrics = MetricExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{base}/v1/metrics"))
        .build()?;
    let tracer_provider = SdkTracerProvider::builder()
        .with_batch_exporter(spans)
        .with_resource(resource.clone())
        .build();
    let meter_provider = SdkMeterProvider::builder()
        .with_periodic_exporter(metrics)
        .with_resource(resource)
        .build();
    opentelemetry::global::set_meter_provider(meter_provider.clone());
    let tracer = tracer_provider.tracer("gate-examples");
    let subscriber = tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(tracer));
    tracing::subscriber::set_global_default(subscriber)?;
    Ok(Pipeline {
        tracer_provider,
        meter_provider,
    })
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let pipeline = match install(&args) {
        Ok(pipeline) => pipeline,
        Err(e) => {
            eprintln!("otel-export: cannot set up the OTLP export: {e}");
            return ExitCode::FAILURE;
        }
    };
    let options = DemoOptions {
        store: "memory:".to_owned(),
        run_id: "otel".to_owned(),
        model: ModelChoice::Scripted,
        resolve: true,
    };
    let mut calls = 0_usize;
    let played = run_demo(options, &mut |event| {
        if let DemoEvent::Call { .. } = event {
            calls += 1;
        }
    })
    .await;
    // Shutting down flushes what the batch and the periodic reader hold.
    let flushed = [
        pipeline.tracer_provider.shutdown().map_err(|e| format!("traces: {e}")),
        pipeline.meter_provider.shutdown().map_err(|e| format!("metrics: {e}")),
    ];
    if let Err(e) = played {
        eprintln!("otel-export: the scenarios did not run: {e}");
        return ExitCode::FAILURE;
    }
    let mut status = ExitCode::SUCCESS;
    for failed in flushed.into_iter().filter_map(Result::err) {
        eprintln!("otel-export: not exported to {}: {failed}", args.endpoint);
        status = ExitCode::FAILURE;
    }
    if status == ExitCode::SUCCESS {
        println!(
            "otel-export: {calls} calls' spans and gate's metrics sent to {}",
            args.endpoint
        );
    }
    status
}
