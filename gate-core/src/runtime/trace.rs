//! The span every call runs in, named and shaped the way the OpenTelemetry
//! GenAI semantic conventions describe a tool's execution, so that a
//! tracing backend shows gate's calls beside the model calls around them
//! without a mapping of its own; and, with the `otel` feature, the metrics
//! an operator charts.
//!
//! # The span
//!
//! [`Task::handle`](super::Task::handle) runs each call in one `tracing`
//! span, `execute_tool` (target `gate::call`, level `INFO`). The stages'
//! own events (store retries, the decision event) and the tool's spans are
//! inside it. Its fields, set when the call starts or when its last decision
//! is made (an internal retry's decisions are the `gate::decision` events;
//! the span carries the one the model sees):
//!
//! | field | value |
//! | --- | --- |
//! | `otel.name` | `execute_tool {tool}`: the span's name under `tracing-opentelemetry` |
//! | `otel.kind` | `internal` |
//! | `otel.status_code` | `error` when the call did not succeed, else unset |
//! | `gen_ai.operation.name` | `execute_tool` |
//! | `gen_ai.tool.name` | the tool the model called (possibly one that does not exist) |
//! | `gen_ai.tool.call.id` | the provider's call id |
//! | `gen_ai.tool.type` | `function`: the application runs the tool, with the arguments the model wrote |
//! | `error.type` | when the call did not succeed: its failure class (`structural`, `transient`, …), else the reason the task failed, else the action |
//! | `gate.action` | what gate did: `return`, `replay`, `reject`, `retry_with_correction`, `retry_internally`, `fail` |
//! | `gate.failure.class` | the failure class, when the call failed |
//! | `gate.fail.reason` | why the task failed, for `fail` |
//! | `gate.intent_key` | the intent key the call ran under, when it had one |
//! | `gate.attempt` | the attempt of the call the decision was about (an internal retry is attempt 2, …) |
//! | `gate.repair_tokens` | the tokens that decision spent on repair |
//! | `gate.approval.id` | the approval request the call waits on, was declined by, or runs under |
//! | `gate.guard.verdict` | what the information-flow guard said, when it was asked: `runs`, `needs_approval`, `refused` |
//!
//! The names under `gen_ai.` and `error.type` are the conventions' (a test
//! holds them to the `opentelemetry-semantic-conventions` crate's
//! constants); `gate.` is gate's own namespace. A call that waits for a
//! person's approval is not an error: its span has no `error.type`. The
//! information-flow guard's verdict will be a field of the same span once
//! that stage exists; it does not yet.
//!
//! Without a subscriber, or with one that leaves `gate::call` at `INFO`
//! out, the span is disabled and the call pays for nothing: its name is
//! formatted and its decision recorded only for a span that is enabled.
//!
//! # The metrics (`otel` feature)
//!
//! Every decision, an internal retry's included, counts on two counters of
//! the gate's `Meter` (the one given to `GateBuilder::meter`,
//! else the global meter provider's `gate` meter when the gate is built):
//!
//! | instrument | unit | attributes |
//! | --- | --- | --- |
//! | `gate.decisions` | `{decision}` | `gate.action`, and `gate.failure.class` when the call failed |
//! | `gate.repair.tokens` | `{token}` | `gate.action` |
//!
//! A call that waits for a person counts as a decision with `gate.action`
//! `await_approval` (once per call that waits, the identical call asking
//! again included).

use toolgate_ledger::{Action, DecisionRecord, FailureClass, FailureReason};
use tracing::Span;
use tracing::field::Empty;

use super::step::ToolCall;

/// The span `call` runs in, its decision fields empty until
/// [`record_decision`] fills them.
pub(super) fn call_span(call: &ToolCall) -> Span {
    let span = tracing::info_span!(
        target: "gate::call",
        "execute_tool",
        otel.name = Empty,
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = call.name.as_str(),
        gen_ai.tool.call.id = call.id.as_str(),
        gen_ai.tool.type = "function",
        error.type = Empty,
        gate.action = Empty,
        gate.failure.class = Empty,
        gate.fail.reason = Empty,
        gate.intent_key = Empty,
        gate.attempt = Empty,
        gate.repair_tokens = Empty,
        gate.approval.id = Empty,
        gate.guard.verdict = Empty,
    );
    // The conventions' name holds the tool's, which a static span name
    // cannot: formatted only for a span someone reads.
    if !span.is_disabled() {
        span.record("otel.name", format!("execute_tool {}", call.name).as_str());
    }
    span
}

/// Sets the fields of the decision the model sees on the call's span.
pub(super) fn record_decision(span: &Span, record: &DecisionRecord) {
    if span.is_disabled() {
        return;
    }
    span.record("gate.action", record.action.as_str());
    if let Some(class) = record.class {
        span.record("gate.failure.class", class.as_str());
    }
    if let Some(reason) = record.fail_reason {
        span.record("gate.fail.reason", reason.as_str());
    }
    if let Some(key) = &record.intent_key {
        span.record("gate.intent_key", key.as_str());
    }
    span.record("gate.attempt", record.attempt);
    span.record("gate.repair_tokens", record.repair_tokens);
    if let Some(error) = error_type(record) {
        span.record("error.type", error);
        span.record("otel.status_code", "error");
    }
}

/// Names on the call's span the approval request the call waits on, was
/// declined by, or runs under.
pub(super) fn record_approval(span: &Span, approval_id: &str) {
    if !span.is_disabled() {
        span.record("gate.approval.id", approval_id);
    }
}

/// Records the guard's verdict on the call: it runs (`Ok(None)`), needs a
/// person (`Ok(Some(reason))`), or is refused.
pub(super) fn record_guard<T>(span: &Span, screened: &Result<Option<String>, T>) {
    if !span.is_disabled() {
        let verdict = match screened {
            Ok(None) => "runs",
            Ok(Some(_)) => "needs_approval",
            Err(_) => "refused",
        };
        span.record("gate.guard.verdict", verdict);
    }
}

/// The low-cardinality name of what went wrong, when something did: the
/// failure class, else the reason the task failed (a task that had already
/// failed, a store that could not be reached), else the action for a call
/// that was not answered with a result (a call waiting for a person is not
/// an error).
fn error_type(record: &DecisionRecord) -> Option<&'static str> {
    let answered = matches!(record.action, Action::Return | Action::Replay | Action::AwaitApproval);
    record
        .class
        .map(FailureClass::as_str)
        .or_else(|| record.fail_reason.map(FailureReason::as_str))
        .or_else(|| (!answered).then(|| record.action.as_str()))
}

#[cfg(feature = "otel")]
pub(super) use metrics::Metrics;

/// The counters behind the `otel` feature.
#[cfg(feature = "otel")]
mod metrics {
    use opentelemetry::KeyValue;
    use opentelemetry::metrics::{Counter, Meter};
    use toolgate_ledger::DecisionRecord;

    /// The gate's instruments, made once when the gate is built.
    pub(in crate::runtime) struct Metrics {
        decisions: Counter<u64>,
        repair_tokens: Counter<u64>,
    }

    impl Metrics {
        /// The instruments on `meter`.
        pub(in crate::runtime) fn new(meter: &Meter) -> Self {
            Metrics {
                decisions: meter
                    .u64_counter("gate.decisions")
                    .with_description("Decisions gate made about tool calls, by action and failure class.")
                    .with_unit("{decision}")
                    .build(),
                repair_tokens: meter
                    .u64_counter("gate.repair.tokens")
                    .with_description("Tokens spent on repair (rejections and retries), by action.")
                    .with_unit("{token}")
                    .build(),
            }
        }

        /// Counts one decision.
        pub(in crate::runtime) fn count(&self, record: &DecisionRecord) {
            let action = KeyValue::new("gate.action", record.action.as_str());
            match record.class {
                Some(class) => self.decisions.add(
                    1,
                    &[action.clone(), KeyValue::new("gate.failure.class", class.as_str())],
                ),
                None => self.decisions.add(1, std::slice::from_ref(&action)),
            }
            if let Ok(tokens @ 1..) = u64::try_from(record.repair_tokens) {
                self.repair_tokens.add(tokens, &[action]);
            }
        }
    }
}
