//! The invoice agent: gate end to end, on simulated parts, in four scenes.
//!
//! Each scenario is a scripted conversation (under `examples/scenarios/`)
//! played against the real runtime, with faults planned into the simulated
//! backend so that every decision gate makes appears: rejections fixed in one
//! round trip, a corrected retry with a widen hint, a 403 answered by the
//! discovery tool, a charge that timed out failed and queued for a person,
//! and the same intent run again after reconciliation, replayed and not
//! charged twice. The same scenarios can be played by a real model through
//! an OpenAI-compatible endpoint.

pub mod backend;
pub mod crm;
pub mod tools;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::json;
use toolgate::agent::{self, AgentLimits, ChatModel, Ending, Exchange, Message, ScriptedModel};
use toolgate::ledger::{Resolution, ResolveRequest};
use toolgate::{Dialect, Gate, Step};

use backend::{Backend, Charge, Fault};
use crm::PgCrm;
use tools::InvoiceTools;

/// The system prompt every scenario starts with.
pub const SYSTEM_PROMPT: &str = "You are the billing assistant of a small company. Use the tools to look up customers and invoices, charge cards for open invoices and send receipts. Never charge an invoice twice.";

/// One scene of the demo.
pub struct Scenario {
    /// Short name, used in task ids and JSON output.
    pub name: &'static str,
    /// What it shows.
    pub title: &'static str,
    /// What the user asks.
    pub request: &'static str,
    /// The scripted model's turns.
    pub script: &'static str,
    /// Faults planned before the scenario runs: (tool, faults for its next calls).
    pub faults: &'static [(&'static str, &'static [Fault])],
}

/// The four scenarios, in order. The fourth has a second part that runs
/// after reconciliation (see [`SECOND_RUN`]).
pub const SCENARIOS: [Scenario; 4] = [
    Scenario {
        name: "rejections",
        title: "A wrong argument type and a hallucinated tool name, each fixed in one round trip",
        request: "How much does ann@acme.com owe on INV-41?",
        script: include_str!("../../scenarios/1-rejections.jsonl"),
        faults: &[],
    },
    Scenario {
        name: "widen",
        title: "A lookup that finds nothing, retried once with the widen hint",
        request: "Find bob@globex.io and his open invoice INV-42.",
        script: include_str!("../../scenarios/2-widen.jsonl"),
        faults: &[],
    },
    Scenario {
        name: "discovery",
        title: "A 403 without a body, answered by the discovery tool",
        request: "Look up carol@initech.com.",
        script: include_str!("../../scenarios/3-discovery.jsonl"),
        faults: &[("lookup_customer", &[Fault::ForbiddenNoBody])],
    },
    Scenario {
        name: "pay",
        title: "A charge that timed out after it went through: failed and queued, never retried",
        request: "Charge Bob for INV-42.",
        script: include_str!("../../scenarios/4a-charge-timeout.jsonl"),
        faults: &[("charge_card", &[Fault::UnavailableBefore, Fault::TimeoutAfterEffect])],
    },
];

/// The fourth scenario's second run: the same intent, after an operator
/// resolved it.
pub const SECOND_RUN: &str = include_str!("../../scenarios/4b-second-run.jsonl");

/// The intent of the payment scenario, declared when it forms.
pub const PAY_INTENT: &str = "pay INV-42";

/// Which model plays the scenarios.
pub enum ModelChoice {
    /// The scripted conversations (deterministic).
    Scripted,
    /// A real model behind an OpenAI-compatible endpoint.
    Model(Arc<dyn ChatModel>),
}

/// Options of a demo run.
pub struct DemoOptions {
    /// The ledger store URL.
    pub store: String,
    /// Prefix of the task ids and suffix of the user, so runs against one
    /// store do not meet: each run's user has a repair-token window of its
    /// own, which a store keeps for an hour.
    pub run_id: String,
    /// The model.
    pub model: ModelChoice,
    /// Resolve the unknown charge as an operator would (and run the intent again).
    pub resolve: bool,
}

/// Something that happened, for progress output.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum DemoEvent {
    /// A scenario begins.
    Scenario {
        /// 1-based number.
        number: usize,
        /// Its name.
        name: String,
        /// What it shows.
        title: String,
    },
    /// A tool call and gate's decision.
    Call {
        /// The scenario.
        scenario: String,
        /// The exchange.
        #[serde(flatten)]
        exchange: Box<Exchange>,
    },
    /// An operator resolved an intent.
    Resolved {
        /// The intent key.
        key: String,
        /// The CLI command that does the same.
        command: String,
    },
}

/// What a scenario cost and how it ended.
#[derive(Clone, Debug, Serialize)]
pub struct ScenarioResult {
    /// Its name.
    pub name: String,
    /// How the run ended.
    pub ending: Ending,
    /// Tokens spent on repair.
    pub repair_tokens: u64,
    /// Provider-reported input tokens.
    pub input_tokens: u64,
    /// Provider-reported output tokens.
    pub output_tokens: u64,
}

/// An intent waiting for a person.
#[derive(Clone, Debug, Serialize)]
pub struct QueueItem {
    /// The intent key.
    pub key: String,
    /// The tool.
    pub tool: String,
    /// The task.
    pub task: String,
    /// What failed.
    pub error: Option<String>,
}

/// The demo's results.
#[derive(Clone, Debug, Serialize)]
pub struct DemoReport {
    /// Each scenario (the payment scenario's second run last).
    pub scenarios: Vec<ScenarioResult>,
    /// The reconciliation queue right after the charge timed out.
    pub queue_after_timeout: Vec<QueueItem>,
    /// The reconciliation queue at the end.
    pub queue_at_end: Vec<QueueItem>,
    /// Every charge the payment provider executed.
    pub charges: Vec<Charge>,
    /// Charges per intent key.
    pub charges_per_intent: BTreeMap<String, usize>,
    /// Receipts sent.
    pub receipts: usize,
    /// Repair tokens over all scenarios.
    pub total_repair_tokens: u64,
}

/// Why the demo could not run.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DemoError(String);

/// Whether `store` names a PostgreSQL database.
pub fn is_postgres(store: &str) -> bool {
    store.starts_with("postgres://") || store.starts_with("postgresql://")
}

fn err(e: impl std::fmt::Display) -> DemoError {
    DemoError(e.to_string())
}

fn messages(request: &str) -> Vec<Message> {
    vec![
        Message::System(SYSTEM_PROMPT.to_owned()),
        Message::User(request.to_owned()),
    ]
}

async fn queue(gate: &Gate, run_id: &str) -> Result<Vec<QueueItem>, DemoError> {
    let records = gate.store().list_unresolved(1000).await.map_err(err)?;
    Ok(records
        .into_iter()
        .filter(|r| r.task_id.starts_with(run_id))
        .map(|r| QueueItem {
            key: r.key,
            tool: r.tool,
            task: r.task_id,
            error: r.error,
        })
        .collect())
}

/// Plays one conversation in the task `task_id` (under `intent`, if given)
/// and sums up what it cost.
#[allow(clippy::too_many_arguments)]
async fn play(
    gate: &Gate,
    model: &ModelChoice,
    user: &str,
    task_id: &str,
    intent: Option<&str>,
    name: &str,
    script: &str,
    request: &str,
    observe: &mut (dyn FnMut(&DemoEvent) + Send),
) -> Result<(agent::Run, ScenarioResult), DemoError> {
    let model: Arc<dyn ChatModel> = match model {
        ModelChoice::Scripted => Arc::new(ScriptedModel::parse(script).map_err(err)?),
        ModelChoice::Model(m) => m.clone(),
    };
    let mut task = gate.task_with_id(user, task_id);
    if let Some(label) = intent {
        task.intent(label);
    }
    let mut on_call = |exchange: &Exchange| {
        observe(&DemoEvent::Call {
            scenario: name.to_owned(),
            exchange: Box::new(exchange.clone()),
        })
    };
    let run = agent::run(
        &mut task,
        model.as_ref(),
        Dialect::OpenAi,
        messages(request),
        AgentLimits::default(),
        &mut on_call,
    )
    .await
    .map_err(err)?
    // No invoice tool needs a person's approval: every run ends.
    .into_run();
    let result = ScenarioResult {
        name: name.to_owned(),
        ending: run.ending.clone(),
        repair_tokens: task.repair_tokens(),
        input_tokens: run.input_tokens,
        output_tokens: run.output_tokens,
    };
    Ok((run, result))
}

/// Plays the four scenarios, calling `observe` for progress.
pub async fn run_demo(
    options: DemoOptions,
    observe: &mut (dyn FnMut(&DemoEvent) + Send),
) -> Result<DemoReport, DemoError> {
    let backend = Arc::new(Backend::demo());
    let user = format!("billing-team-{}", options.run_id);
    // On PostgreSQL the CRM lives beside the ledger, under row-level
    // security: the run's team reads its own customers only.
    let tools = if is_postgres(&options.store) {
        let crm = PgCrm::open(&options.store, &user).await.map_err(err)?;
        InvoiceTools::with_crm(backend.clone(), crm)
    } else {
        InvoiceTools::new(backend.clone())
    };
    let gate = Gate::builder(tools.into_toolbox())
        .store(&options.store)
        .seed(42)
        .build()
        .await
        .map_err(err)?;
    let mut results = Vec::new();
    let mut queue_after_timeout = Vec::new();
    for (i, scenario) in SCENARIOS.iter().enumerate() {
        observe(&DemoEvent::Scenario {
            number: i + 1,
            name: scenario.name.into(),
            title: scenario.title.into(),
        });
        for (tool, faults) in scenario.faults {
            backend.plan(tool, faults);
        }
        let task_id = format!("{}-{}", options.run_id, scenario.name);
        let intent = (scenario.name == "pay").then_some(PAY_INTENT);
        let (run, result) = play(
            &gate,
            &options.model,
            &user,
            &task_id,
            intent,
            scenario.name,
            scenario.script,
            scenario.request,
            observe,
        )
        .await?;
        results.push(result);
        if scenario.name != "pay" {
            continue;
        }
        queue_after_timeout = queue(&gate, &options.run_id).await?;
        let failed_key = run.exchanges.iter().rev().find_map(|e| match &e.step {
            Step::Fail(report) => report.intent_key.clone(),
            _ => None,
        });
        let (Some(key), true) = (failed_key, options.resolve) else {
            continue;
        };
        // The operator checks the payment provider: one charge under this key.
        let charge = backend.charges().into_iter().find(|c| c.idempotency_key == key);
        let note = match &charge {
            Some(c) => format!("payment provider shows {} for this idempotency key", c.id),
            None => "payment provider shows no charge".to_owned(),
        };
        let resolution = if charge.is_some() {
            Resolution::Succeeded
        } else {
            Resolution::NotExecuted
        };
        let value = charge.map(|c| json!({"charge_id": c.id, "invoice_id": "INV-42", "status": "succeeded"}));
        let value_arg = value.as_ref().map(|v| format!(" --value '{v}'")).unwrap_or_default();
        let request = ResolveRequest {
            key: key.clone(),
            user: None,
            resolution,
            note: Some(note.clone()),
            value,
        };
        // Resolving also reopens the task that failed waiting for this intent.
        gate.store().resolve(&request).await.map_err(err)?;
        observe(&DemoEvent::Resolved {
            command: format!(
                "gate reconcile resolve {key} --outcome {resolution}{value_arg} --note \"{note}\" --store {}",
                options.store
            ),
            key,
        });

        // The same task and intent run again (a retry by the user, a restart).
        let name = format!("{}-again", scenario.name);
        let (_, result) = play(
            &gate,
            &options.model,
            &user,
            &task_id,
            intent,
            &name,
            SECOND_RUN,
            scenario.request,
            observe,
        )
        .await?;
        results.push(result);
    }
    let queue_at_end = queue(&gate, &options.run_id).await?;
    // The log is complete for `gate report` once the queued successes are in.
    gate.shutdown().await;
    Ok(DemoReport {
        total_repair_tokens: results.iter().map(|r| r.repair_tokens).sum(),
        scenarios: results,
        queue_after_timeout,
        queue_at_end,
        charges: backend.charges(),
        charges_per_intent: backend.charges_per_intent().into_iter().collect(),
        receipts: backend.receipts(),
    })
}
