//! What a side effect costs in round trips to the store, counted: its claim
//! is one statement, and its outcome (the intent's finish, the task's state,
//! the decision record) one more, where a transaction would send `BEGIN`,
//! each write and `COMMIT` one after the other. Counted from sqlx's own
//! record of every statement it sends (events with target `sqlx::query`),
//! on SQLite and on PostgreSQL (when `GATE_POSTGRES_URL` is set), so the
//! figure docs/durable-tasks.md gives is tested behaviour.

use std::sync::{Arc, Mutex, OnceLock};

use serde_json::json;
use toolgate::ledger::LedgerConfig;
use toolgate::{Gate, Step, ToolCall};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

mod support;
use support::crm::Tools;

/// The statements sqlx sent, by their summary, since the last `take`.
#[derive(Clone, Default)]
struct Statements(Arc<Mutex<Vec<String>>>);

impl Statements {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// The `summary` field of one statement's event.
struct Summary(String);

impl Visit for Summary {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "summary" {
            self.0 = value.to_owned();
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "summary" {
            self.0 = format!("{value:?}");
        }
    }
}

impl<S: tracing::Subscriber> Layer<S> for Statements {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() == "sqlx::query" {
            let mut summary = Summary(String::new());
            event.record(&mut summary);
            self.0.lock().unwrap_or_else(|p| p.into_inner()).push(summary.0);
        }
    }
}

/// The process-wide subscriber: sqlx sends SQLite's statements from the
/// connection's own thread, which a thread's default subscriber misses.
fn statements() -> &'static Statements {
    static STATEMENTS: OnceLock<Statements> = OnceLock::new();
    STATEMENTS.get_or_init(|| {
        let statements = Statements::default();
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(statements.clone()))
            .expect("no other global subscriber");
        statements
    })
}

fn charge(n: u32) -> ToolCall {
    let args = json!({"customer_id": format!("cus_{n}"), "amount_cents": 4200}).to_string();
    ToolCall::new(format!("c{n}"), "charge_card", args)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_side_effect_is_two_statements_on_either_sql_store() {
    let statements = statements();
    let dir = std::env::temp_dir().join(format!("gate-round-trips-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut stores = vec![("sqlite", format!("sqlite:{}", dir.join("gate.db").display()), None)];
    if let Ok(url) = std::env::var("GATE_POSTGRES_URL") {
        stores.push((
            "postgres",
            url,
            Some(format!("gate_round_trips_{}", std::process::id())),
        ));
    }
    for (name, url, schema) in stores {
        let config = LedgerConfig {
            pg_schema: schema.clone(),
            ..LedgerConfig::default()
        };
        let storage = toolgate::ledger::open_with(&url, &config).await.unwrap();
        let gate = Gate::builder(Tools(Arc::default()).into_toolbox())
            .storage(storage)
            .build()
            .await
            .unwrap();
        // The pool's connections open on first use.
        for n in 0..5 {
            let step = gate.task("u1").handle(charge(n)).await;
            assert!(matches!(step, Step::Return(_)), "{name}: {step:?}");
        }
        statements.take();
        for n in 5..15 {
            let step = gate.task("u1").handle(charge(n)).await;
            assert!(matches!(step, Step::Return(_)), "{name}: {step:?}");
        }
        // A connection the pool opens meanwhile sets itself up (SQLite's
        // `PRAGMA`s): that is the pool's, not the calls'.
        let sent: Vec<String> = statements
            .take()
            .into_iter()
            .filter(|s| !s.starts_with("PRAGMA"))
            .collect();
        assert_eq!(sent.len(), 20, "{name}: ten charges, two statements each: {sent:#?}");
        gate.shutdown().await;
        if let Some(schema) = schema {
            toolgate_ledger::testing::drop_pg_schema(&url, &schema).await.unwrap();
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
