//! The decision log: one record per decision, as a `tracing` event and in a
//! sink.
//!
//! The field names are stable (dashboards and `gate report` read them):
//! `task`, `user`, `call_id`, `tool`, `class`, `action`, `fail_reason`,
//! `attempt`, `attempts_used`, `repair_tokens`, `latency_added_ms`,
//! `message_hash`, `intent_key`; class, action and reason carry the names of
//! gate's vocabulary (`outcome_unknown`, `retry_internally`,
//! `rejection_cap`), an empty class or reason meaning none. The store always
//! receives the records, committed with the decision they describe; more
//! sinks (a JSON Lines file) can be added.

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use toolgate_ledger::{BoxFuture, DecisionRecord};

use super::gate::Inner;

/// Where decision records go besides the `tracing` event.
pub trait DecisionSink: Send + Sync {
    /// Stores one record. Sinks report their own failures (a decision log
    /// that cannot be written must not stop the agent).
    fn record<'a>(&'a self, record: &'a DecisionRecord) -> BoxFuture<'a, ()>;
}

/// Logs a decision: its `tracing` event, its count in the metrics (`otel`
/// feature), then every extra sink.
pub(super) async fn record(gate: &Inner, record: &DecisionRecord) {
    emit(record);
    #[cfg(feature = "otel")]
    gate.metrics.count(record);
    for sink in &gate.sinks {
        sink.record(record).await;
    }
}

/// Emits the `toolgate::decision` tracing event for a record.
fn emit(record: &DecisionRecord) {
    tracing::info!(
        target: "gate::decision",
        task = %record.task_id,
        user = %record.user,
        call_id = %record.call_id,
        tool = %record.tool,
        class = record.class.map_or("", |c| c.as_str()),
        action = record.action.as_str(),
        fail_reason = record.fail_reason.map_or("", |r| r.as_str()),
        attempt = record.attempt,
        attempts_used = record.attempts_used,
        repair_tokens = record.repair_tokens,
        latency_added_ms = record.latency_added_ms,
        message_hash = %record.message_hash,
        intent_key = record.intent_key.as_deref().unwrap_or(""),
        "decision"
    );
}

/// Appends records to a file, one JSON object per line.
pub struct JsonLinesSink {
    file: Mutex<std::fs::File>,
}

impl JsonLinesSink {
    /// Opens (creating or appending to) `path`.
    pub fn create(path: impl AsRef<Path>) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        Ok(JsonLinesSink { file: Mutex::new(file) })
    }
}

impl DecisionSink for JsonLinesSink {
    fn record<'a>(&'a self, record: &'a DecisionRecord) -> BoxFuture<'a, ()> {
        let line = serde_json::to_string(record).unwrap_or_default();
        Box::pin(async move {
            let written = match self.file.lock() {
                Ok(mut file) => writeln!(file, "{line}"),
                Err(poisoned) => writeln!(poisoned.into_inner(), "{line}"),
            };
            if let Err(e) = written {
                tracing::warn!(target: "gate::decision", error = %e, "decision record not written");
            }
        })
    }
}
