//! The span every call runs in, as a subscriber sees it: its name, and the
//! fields the OpenTelemetry GenAI conventions name, with the names the
//! `opentelemetry-semantic-conventions` crate gives them, and gate's own.
//! A small layer captures each `execute_tool` span's fields.
// The crate keeps the GenAI names deprecated only because those conventions
// moved to a repository of their own; the names are the same there.
#![allow(deprecated)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use opentelemetry_semantic_conventions::attribute as semconv;
use toolgate::{Gate, Step};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

mod support;
use support::call;
use support::crm::{Crm, Tools};

/// One captured span: its name and every field that has a value.
#[derive(Clone, Debug, Default)]
struct Captured {
    name: &'static str,
    fields: BTreeMap<String, String>,
}

impl Captured {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

impl Visit for Captured {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.fields.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.fields.insert(field.name().to_owned(), value.to_string());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.fields.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

/// Captures every span of target `gate::call`, in the order they closed.
#[derive(Clone, Default)]
struct Capture {
    closed: Arc<Mutex<Vec<Captured>>>,
}

impl<S> Layer<S> for Capture
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if attrs.metadata().target() != "gate::call" {
            return;
        }
        let mut captured = Captured {
            name: attrs.metadata().name(),
            ..Captured::default()
        };
        attrs.record(&mut captured);
        ctx.span(id)
            .expect("the span is open")
            .extensions_mut()
            .insert(captured);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let span = ctx.span(id).expect("the span is open");
        if let Some(captured) = span.extensions_mut().get_mut::<Captured>() {
            values.record(captured);
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let span = ctx.span(&id).expect("the span is closing");
        if let Some(captured) = span.extensions_mut().remove::<Captured>() {
            self.closed.lock().unwrap().push(captured);
        }
    }
}

async fn crm_gate() -> Gate {
    Gate::builder(Tools(Arc::new(Crm::default())).into_toolbox())
        .store("memory:")
        .build()
        .await
        .unwrap()
}

/// Runs `calls` (tool, arguments) in one task under the intent `pay`, and
/// returns the spans and the intent key each tool had.
async fn spans_of(calls: &[(&str, &str)]) -> (Vec<Captured>, Vec<String>) {
    let capture = Capture::default();
    let _default = tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let gate = crm_gate().await;
    let mut task = gate.task("u1");
    task.intent("pay");
    let mut keys = Vec::new();
    for (n, (tool, arguments)) in calls.iter().enumerate() {
        keys.push(task.intent_key_for(tool).unwrap());
        let step = task.handle(call(&format!("call-{n}"), tool, arguments)).await;
        assert!(!matches!(step, Step::Retry(_)), "no call here is retried: {step:?}");
    }
    let closed = capture.closed.lock().unwrap().clone();
    (closed, keys)
}

#[test]
fn the_conventions_names_are_the_crates() {
    let genai = [
        (semconv::GEN_AI_OPERATION_NAME, "gen_ai.operation.name"),
        (semconv::GEN_AI_TOOL_NAME, "gen_ai.tool.name"),
        (semconv::GEN_AI_TOOL_CALL_ID, "gen_ai.tool.call.id"),
        (semconv::GEN_AI_TOOL_TYPE, "gen_ai.tool.type"),
    ];
    for (constant, literal) in genai.into_iter().chain([(semconv::ERROR_TYPE, "error.type")]) {
        assert_eq!(constant, literal);
    }
}

#[tokio::test]
async fn a_successful_call_is_an_execute_tool_span_without_an_error() {
    let (spans, keys) = spans_of(&[("lookup_customer", r#"{"email": "ada@example.com"}"#)]).await;
    assert_eq!(spans.len(), 1, "{spans:?}");
    let span = &spans[0];
    assert_eq!(span.name, "execute_tool");
    assert_eq!(span.field("otel.name"), Some("execute_tool lookup_customer"));
    assert_eq!(span.field("otel.kind"), Some("internal"));
    assert_eq!(span.field(semconv::GEN_AI_OPERATION_NAME), Some("execute_tool"));
    assert_eq!(span.field(semconv::GEN_AI_TOOL_NAME), Some("lookup_customer"));
    assert_eq!(span.field(semconv::GEN_AI_TOOL_CALL_ID), Some("call-0"));
    assert_eq!(span.field(semconv::GEN_AI_TOOL_TYPE), Some("function"));
    assert_eq!(span.field(semconv::ERROR_TYPE), None);
    assert_eq!(span.field("otel.status_code"), None);
    assert_eq!(span.field("gate.action"), Some("return"));
    assert_eq!(span.field("gate.failure.class"), None);
    assert_eq!(span.field("gate.fail.reason"), None);
    assert_eq!(span.field("gate.intent_key"), Some(keys[0].as_str()));
    assert_eq!(span.field("gate.attempt"), Some("1"));
    assert_eq!(span.field("gate.repair_tokens"), Some("0"));
}

#[tokio::test]
async fn a_call_refused_by_validation_is_a_structural_error() {
    let (spans, _) = spans_of(&[("lookup_customer", r#"{"email": 5}"#)]).await;
    assert_eq!(spans.len(), 1, "{spans:?}");
    let span = &spans[0];
    assert_eq!(span.field("otel.name"), Some("execute_tool lookup_customer"));
    assert_eq!(span.field(semconv::ERROR_TYPE), Some("structural"));
    assert_eq!(span.field("otel.status_code"), Some("error"));
    assert_eq!(span.field("gate.action"), Some("reject"));
    assert_eq!(span.field("gate.failure.class"), Some("structural"));
    assert_eq!(span.field("gate.fail.reason"), None);
    let tokens: u64 = span.field("gate.repair_tokens").unwrap().parse().unwrap();
    assert!(tokens > 0, "a rejection is a repair the model pays for: {span:?}");
}

#[tokio::test]
async fn a_declined_charge_is_a_definitive_error_returned_to_the_model() {
    let charge = r#"{"customer_id": "cus_1", "amount_cents": 20000}"#;
    let (spans, keys) = spans_of(&[("charge_card", charge)]).await;
    assert_eq!(spans.len(), 1, "{spans:?}");
    let span = &spans[0];
    assert_eq!(span.field("otel.name"), Some("execute_tool charge_card"));
    assert_eq!(span.field(semconv::ERROR_TYPE), Some("definitive"));
    assert_eq!(span.field("otel.status_code"), Some("error"));
    assert_eq!(span.field("gate.action"), Some("return"));
    assert_eq!(span.field("gate.failure.class"), Some("definitive"));
    assert_eq!(span.field("gate.fail.reason"), None);
    assert_eq!(span.field("gate.intent_key"), Some(keys[0].as_str()));
}

#[tokio::test]
async fn a_failed_call_and_the_call_after_it_name_why() {
    let (spans, _) = spans_of(&[
        ("explode", "{}"),
        ("lookup_customer", r#"{"email": "ada@example.com"}"#),
    ])
    .await;
    assert_eq!(spans.len(), 2, "{spans:?}");
    let (bug, after) = (&spans[0], &spans[1]);
    assert_eq!(bug.field("gate.action"), Some("fail"));
    assert_eq!(bug.field("gate.failure.class"), Some("internal"));
    assert_eq!(bug.field("gate.fail.reason"), Some("internal"));
    assert_eq!(bug.field(semconv::ERROR_TYPE), Some("internal"));
    assert_eq!(bug.field("otel.status_code"), Some("error"));
    // A failed task runs nothing more: no class, the reason is the error.
    assert_eq!(after.field("gate.action"), Some("fail"));
    assert_eq!(after.field("gate.failure.class"), None);
    assert_eq!(after.field("gate.fail.reason"), Some("task_failed"));
    assert_eq!(after.field(semconv::ERROR_TYPE), Some("task_failed"));
}

#[tokio::test]
async fn an_unknown_tool_is_named_as_the_model_wrote_it() {
    let (spans, _) = spans_of(&[("lookup_customr", r#"{"email": "ada@example.com"}"#)]).await;
    assert_eq!(spans.len(), 1, "{spans:?}");
    let span = &spans[0];
    assert_eq!(span.field("otel.name"), Some("execute_tool lookup_customr"));
    assert_eq!(span.field("gate.action"), Some("reject"));
    assert_eq!(span.field(semconv::ERROR_TYPE), Some("structural"));
}

// A call waiting for a person's approval is not an error: its span names
// the request and has no error type.
#[tokio::test]
async fn a_call_waiting_for_approval_names_its_request_and_is_no_error() {
    let capture = Capture::default();
    let _default = tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let gate = Gate::builder(Tools(Arc::new(Crm::default())).into_toolbox())
        .store("memory:")
        .approvals(|q: &toolgate::ApprovalQuestion<'_>| {
            (q.spec.name() == "charge_card").then(|| "every charge".to_owned())
        })
        .build()
        .await
        .unwrap();
    let step = gate
        .task("u1")
        .handle(call(
            "call-0",
            "charge_card",
            r#"{"customer_id": "cus_1", "amount_cents": 100}"#,
        ))
        .await;
    let Step::AwaitingApproval(waiting) = &step else {
        panic!("the charge waits: {step:?}")
    };
    let spans = capture.closed.lock().unwrap().clone();
    assert_eq!(spans.len(), 1, "{spans:?}");
    let span = &spans[0];
    assert_eq!(span.field("gate.action"), Some("await_approval"));
    assert_eq!(span.field("gate.approval.id"), Some(waiting.approval_id.as_str()));
    assert_eq!(span.field(semconv::ERROR_TYPE), None);
    assert_eq!(span.field("otel.status_code"), None);
}
