//! `Gate` and `Task`: the pipeline every tool call goes through.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use gate_ledger::{Claim, ClaimRequest, DecisionRecord, Finish, Lease, Ledger, LedgerError, State};
use gate_sanitize::Sanitizer;
use gate_validate::Validator;
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::budget::{Budget, Pushback, RepairTokenBudget, TaskBudget, closed};
use super::class::{Ambiguity, FailureClass, classify};
use super::log::{DecisionSink, LedgerSink, emit};
use super::policy::{BudgetVerdict, Decision, FailReason, History, Situation, decide};
use super::report::{FailureReport, next_check};
use super::step::{Feedback, Step, ToolCall, ToolOutput};
use crate::{Ctx, Tool, ToolError, Toolbox, call_contained};

/// Why a gate could not be built.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct GateError {
    message: String,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl GateError {
    fn new(message: impl Into<String>, source: Option<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        GateError {
            message: message.into(),
            source,
        }
    }
}

/// Builds a [`Gate`].
pub struct GateBuilder {
    toolbox: Toolbox,
    store: String,
    ledger: Option<Arc<dyn Ledger>>,
    budget: Budget,
    sanitizer: Option<Sanitizer>,
    result_sanitizer: Option<Option<Sanitizer>>,
    rejection_cap: u32,
    corrections_per_step: u32,
    sinks: Vec<Arc<dyn DecisionSink>>,
    seed: Option<u64>,
}

/// The default store: an SQLite file in the working directory.
pub const DEFAULT_STORE: &str = "sqlite:gate.db";
/// Cap on results shown to the model (tool results may be long; error texts
/// use the sanitizer's own, smaller cap).
pub const DEFAULT_RESULT_CAP: usize = 64 * 1024;

impl GateBuilder {
    /// The ledger store by URL: `sqlite:FILE` (default `sqlite:gate.db`),
    /// `postgres://…`, or `memory:`.
    pub fn store(mut self, url: impl Into<String>) -> Self {
        self.store = url.into();
        self
    }

    /// An already opened ledger (shared between gates, or a test double).
    pub fn ledger(mut self, ledger: Arc<dyn Ledger>) -> Self {
        self.ledger = Some(ledger);
        self
    }

    /// The budgets.
    pub fn budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }

    /// The sanitizer for every error, rejection, correction and failure text.
    pub fn sanitizer(mut self, sanitizer: Sanitizer) -> Self {
        self.sanitizer = Some(sanitizer);
        self
    }

    /// The sanitizer for tool results (default: all built-in rules with a
    /// 64 KiB cap); `None` hands results to the model unchanged.
    pub fn result_sanitizer(mut self, sanitizer: Option<Sanitizer>) -> Self {
        self.result_sanitizer = Some(sanitizer);
        self
    }

    /// Rejections a task may receive before it fails (default 2).
    pub fn rejection_cap(mut self, cap: u32) -> Self {
        self.rejection_cap = cap;
        self
    }

    /// Corrected retries per step (default 1).
    pub fn corrections_per_step(mut self, corrections: u32) -> Self {
        self.corrections_per_step = corrections;
        self
    }

    /// Another place for decision records (the ledger store always gets them).
    pub fn decision_sink(mut self, sink: Arc<dyn DecisionSink>) -> Self {
        self.sinks.push(sink);
        self
    }

    /// Seeds the backoff jitter, for reproducible runs.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Compiles every tool's validator and opens the store.
    pub async fn build(self) -> Result<Gate, GateError> {
        let mut validators = HashMap::new();
        for spec in self.toolbox.specs() {
            let validator = Validator::new(spec.input_schema()).map_err(|e| {
                GateError::new(
                    format!("tool `{}`: its input schema cannot be validated: {e}", spec.name()),
                    Some(Box::new(e)),
                )
            })?;
            validators.insert(spec.name().to_owned(), validator);
        }
        let ledger = match self.ledger {
            Some(ledger) => ledger,
            None => gate_ledger::open(&self.store).await.map_err(|e| {
                GateError::new(
                    format!("cannot open the ledger store `{}`: {e}", self.store),
                    Some(Box::new(e)),
                )
            })?,
        };
        let result_sanitizer = match self.result_sanitizer {
            Some(choice) => choice,
            None => Some(default_result_sanitizer()?),
        };
        let mut sinks: Vec<Arc<dyn DecisionSink>> = vec![Arc::new(LedgerSink(ledger.clone()))];
        sinks.extend(self.sinks);
        let tokens = self.budget.token_budget();
        Ok(Gate {
            inner: Arc::new(Inner {
                toolbox: self.toolbox,
                validators,
                ledger,
                sanitizer: self.sanitizer.unwrap_or_else(default_sanitizer),
                result_sanitizer,
                budget: self.budget,
                tokens,
                rejection_cap: self.rejection_cap,
                corrections_per_step: self.corrections_per_step,
                sinks,
                rng: Mutex::new(match self.seed {
                    Some(seed) => StdRng::seed_from_u64(seed),
                    None => StdRng::from_os_rng(),
                }),
            }),
        })
    }
}

/// Compiling the built-in rules takes a while, and a sanitizer is a cheap
/// `Arc` clone, so every gate of a process shares the default ones.
fn default_sanitizer() -> Sanitizer {
    static DEFAULT: OnceLock<Sanitizer> = OnceLock::new();
    DEFAULT.get_or_init(Sanitizer::default).clone()
}

fn default_result_sanitizer() -> Result<Sanitizer, GateError> {
    static DEFAULT: OnceLock<Result<Sanitizer, String>> = OnceLock::new();
    DEFAULT
        .get_or_init(|| {
            Sanitizer::builder()
                .max_len(DEFAULT_RESULT_CAP)
                .build()
                .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|e| GateError::new(format!("result sanitizer: {e}"), None))
}

/// The shared part of the runtime: toolbox, validators, ledger, sanitizer,
/// budgets and decision sinks. Cheap to clone; one per process is typical.
#[derive(Clone)]
pub struct Gate {
    inner: Arc<Inner>,
}

struct Inner {
    toolbox: Toolbox,
    validators: HashMap<String, Validator>,
    ledger: Arc<dyn Ledger>,
    sanitizer: Sanitizer,
    result_sanitizer: Option<Sanitizer>,
    budget: Budget,
    tokens: RepairTokenBudget,
    rejection_cap: u32,
    corrections_per_step: u32,
    sinks: Vec<Arc<dyn DecisionSink>>,
    rng: Mutex<StdRng>,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("tools", &self.inner.toolbox)
            .field("ledger", &self.inner.ledger)
            .finish()
    }
}

impl Gate {
    /// Starts building a gate over `toolbox`.
    pub fn builder(toolbox: Toolbox) -> GateBuilder {
        GateBuilder {
            toolbox,
            store: DEFAULT_STORE.to_owned(),
            ledger: None,
            budget: Budget::default(),
            sanitizer: None,
            result_sanitizer: None,
            rejection_cap: 2,
            corrections_per_step: 1,
            sinks: Vec::new(),
            seed: None,
        }
    }

    /// A new task for `user`, with a fresh id.
    pub fn task(&self, user: impl Into<String>) -> Task {
        let id = {
            let mut rng = self.inner.rng.lock().unwrap_or_else(|p| p.into_inner());
            format!("task-{:016x}", rand::Rng::random::<u64>(&mut *rng))
        };
        self.task_with_id(user, id)
    }

    /// The task `id` of `user`, e.g. to resume it after a restart: intent keys
    /// derive from the task id, so the resumed task finds its ledger records.
    pub fn task_with_id(&self, user: impl Into<String>, id: impl Into<String>) -> Task {
        let user = user.into();
        let budget = self.inner.budget.task(&self.inner.tokens, user.clone());
        Task {
            gate: self.clone(),
            id: id.into(),
            user,
            intent: None,
            budget,
            state: TaskState::default(),
        }
    }

    /// The toolbox.
    pub fn toolbox(&self) -> &Toolbox {
        &self.inner.toolbox
    }

    /// The ledger store.
    pub fn ledger(&self) -> &Arc<dyn Ledger> {
        &self.inner.ledger
    }

    /// The sanitizer applied to every text the model sees.
    pub fn sanitizer(&self) -> &Sanitizer {
        &self.inner.sanitizer
    }
}

/// Per-task history: what rules 1–4 look at.
#[derive(Debug, Default)]
struct TaskState {
    /// Hashes of the rejection messages given (rule 1 is about the message:
    /// two different calls that earn the same message are one lesson).
    rejected: HashSet<String>,
    failed_calls: HashSet<String>,
    rejections: u32,
    corrections_in_step: u32,
    last_retries: Vec<Feedback>,
    /// The task's totals at its last decision record.
    logged_repair_tokens: i64,
    logged_latency_ms: i64,
    context_tokens: u64,
    usage_reported: bool,
}

/// One agent task: its id, its user, its current intent and its history.
pub struct Task {
    gate: Gate,
    id: String,
    user: String,
    intent: Option<String>,
    budget: TaskBudget,
    state: TaskState,
}

/// How long gate assumes a retried attempt may take, for the latency
/// budget's "will the retry fit" check: tools do not declare timeouts, so
/// only the backoff and measured durations count.
const ASSUMED_ATTEMPT_TIMEOUT: Duration = Duration::ZERO;

fn sha256_hex(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// What one attempt to run a validated call produced.
enum Attempt {
    Ran(Result<Value, ToolError>, Option<Lease>),
    Replayed(gate_ledger::Outcome),
    Stop(FailReason, Option<State>, String),
}

impl Task {
    /// The gate this task runs in.
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// The task id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The user.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// Declares the intent the next calls serve ("pay INV-42"). Each tool
    /// called under it gets a key minted from the task, the label and the
    /// tool, so a call the model regenerates while replanning maps to the same
    /// key, whatever its arguments, and the other steps of the intent (the
    /// receipt after the charge) get keys of their own.
    pub fn intent(&mut self, label: &str) {
        self.intent = Some(label.to_owned());
    }

    /// The key calls of `tool` carry under the current intent, if one is declared.
    pub fn intent_key_for(&self, tool: &str) -> Option<String> {
        self.intent
            .as_ref()
            .map(|label| gate_ledger::minted_intent_key(&self.id, &format!("{label}\u{1f}{tool}")))
    }

    /// Ends the current intent; later calls derive their keys from their arguments.
    pub fn clear_intent(&mut self) {
        self.intent = None;
    }

    /// The internal retries gate made during the last [`handle`](Self::handle)
    /// (a 503 retried after a backoff, say): the returned step is the final
    /// outcome, these are the attempts before it.
    pub fn last_retries(&self) -> &[Feedback] {
        &self.state.last_retries
    }

    /// Records the provider's real token usage of the last model turn: the
    /// context a repair would replay is what the model just read and wrote.
    /// If the turn was a repair, its estimate is replaced by this real usage.
    pub fn record_usage(&mut self, input_tokens: u64, output_tokens: u64) {
        self.state.context_tokens = input_tokens + output_tokens;
        self.state.usage_reported = true;
        self.budget.record_usage(input_tokens, output_tokens);
    }

    /// Repairs (rejections and retries) used so far.
    pub fn repairs(&self) -> u32 {
        self.budget.attempts().used()
    }

    /// Tokens spent on repair so far.
    pub fn repair_tokens(&self) -> u64 {
        self.budget.repair_tokens()
    }

    /// Wall-clock latency retries have added so far.
    pub fn latency_added(&self) -> Duration {
        self.budget.latency().added()
    }

    fn grow_context(&mut self, text: &str) {
        if !self.state.usage_reported {
            self.state.context_tokens += gate_budget::estimate_tokens(text);
        }
    }

    /// The policy's decision, with the budgets consulted for a repair: on a
    /// refusal the policy decides again with that budget closed. Returns the
    /// grant's delay for internal retries.
    fn authorize(&mut self, situation: Situation, feedback: &str, pushback: Pushback) -> (Decision, Duration) {
        let wanted = decide(&Situation {
            budget: BudgetVerdict::OPEN,
            ..situation
        });
        let granted = match wanted {
            Decision::Reject | Decision::RefuseRepeat | Decision::RetryWithCorrection(_) => {
                let cost = gate_budget::repair_cost(self.state.context_tokens, feedback);
                self.budget.authorize_reject(cost, Duration::ZERO)
            }
            Decision::RetryInternally => {
                let mut rng = self.gate.inner.rng.lock().unwrap_or_else(|p| p.into_inner());
                // The model is not involved: no tokens are replayed.
                self.budget
                    .authorize_retry(0, pushback, ASSUMED_ATTEMPT_TIMEOUT, &mut *rng)
            }
            other => return (other, Duration::ZERO),
        };
        match granted {
            Ok(grant) => {
                if wanted == Decision::RetryInternally {
                    // No model turn follows an internal retry: settle its
                    // (zero) charge now, or the next turn's usage would be
                    // booked as repair.
                    self.budget.record_usage(0, 0);
                }
                (wanted, grant.delay)
            }
            Err(refusal) => (
                decide(&Situation {
                    budget: closed(&refusal),
                    ..situation
                }),
                Duration::ZERO,
            ),
        }
    }

    /// Handles one tool call: validate, run, classify, decide, log. The
    /// returned step says what the model sees next.
    pub async fn handle(&mut self, call: ToolCall) -> Step {
        self.state.last_retries.clear();
        self.grow_context(&call.arguments);
        let gate = self.gate.clone();

        // 1. The tool must exist; near misses are never executed.
        let Some(tool) = gate.inner.toolbox.get(&call.name).cloned() else {
            let names = gate.inner.toolbox.names();
            let message = gate_validate::unknown_tool(&call.name, &names).message();
            let call_fp = call_fingerprint(&call.name, &canonical_or_raw(&call.arguments));
            return self.structural(&call, &call_fp, message, false).await;
        };

        // 2. The arguments must satisfy the schema.
        let validator = &gate.inner.validators[&call.name];
        let arguments = match validator.validate(&call.arguments) {
            Ok(args) => args.into_owned(),
            Err(rejection) => {
                let message = rejection.message(&call.name);
                let call_fp = call_fingerprint(&call.name, &canonical_or_raw(&call.arguments));
                return self.structural(&call, &call_fp, message, false).await;
            }
        };
        let args: Value = serde_json::from_str(&arguments).unwrap_or(Value::Null);
        let call_fp = call_fingerprint(&call.name, &gate_ledger::canonical_json(&args));
        let spec = tool.spec();
        let key_fp = gate_ledger::fingerprint(&key_arguments(&args, spec.key_args()));
        let intent_key = self
            .intent_key_for(&call.name)
            .unwrap_or_else(|| gate_ledger::derived_intent_key(&self.id, &call.name, &key_fp));

        // 3. Rule 3: a call that repeats a failed one unchanged is not a retry.
        if self.state.failed_calls.contains(&call_fp) {
            let message = format!(
                "This exact call to `{}` already failed in this task and was not run again. Follow the correction you were given: change the arguments or call the tool it named.",
                call.name
            );
            return self.structural(&call, &call_fp, message, true).await;
        }

        // 4. Run, retrying internally while the policy says so.
        let ctx = Ctx::new(&self.id, &self.user, &call.id, &call.name, &intent_key);
        let mut attempt_no: i64 = 0;
        loop {
            attempt_no += 1;
            let started = tokio::time::Instant::now();
            let attempt = self.attempt(&gate, tool.as_ref(), &ctx, &arguments, &key_fp).await;
            let (result, lease) = match attempt {
                Attempt::Replayed(outcome) => {
                    let step = self.output(&gate, &call, outcome.value, outcome.is_error, true);
                    self.log(&call, "none", &step, attempt_no, Some(&intent_key)).await;
                    return step;
                }
                Attempt::Stop(reason, state, error) => {
                    let step = self.fail(&call, &call_fp, reason, None, Some(&intent_key), state, &error);
                    self.log(&call, "ledger", &step, attempt_no, Some(&intent_key)).await;
                    return step;
                }
                Attempt::Ran(result, lease) => (result, lease),
            };
            let error = match result {
                Ok(value) => {
                    if let Some(lease) = &lease {
                        // The effect happened; a failed write here only loses the replay.
                        if let Err(e) = gate.inner.ledger.complete(lease, value.clone()).await {
                            tracing::warn!(target: "gate::ledger", error = %e, key = %intent_key, "completed call not recorded");
                        }
                    }
                    self.state.corrections_in_step = 0;
                    let step = self.output(&gate, &call, value, false, false);
                    self.log(&call, "none", &step, attempt_no, Some(&intent_key)).await;
                    return step;
                }
                Err(error) => error,
            };
            self.budget.record_latency(started.elapsed());
            let (class, ambiguity) = classify(&error);
            let error_text = self.sanitize_error(&gate, &error, &args);
            let pushback = match &error {
                ToolError::RateLimited { retry_after } => Pushback::from(*retry_after),
                _ => Pushback::None,
            };
            let feedback = correction_text(&call.name, spec.discovery(), spec.widen(), ambiguity, &error_text);
            let situation = Situation {
                effects: spec.effects(),
                class,
                ambiguity,
                history: self.history(&call_fp),
                budget: BudgetVerdict::OPEN,
            };
            let (decision, delay) = self.authorize(situation, &feedback, pushback);
            let outcome = ledger_outcome(class, ambiguity, decision, spec.effects().is_idempotent());
            self.settle_ledger(&gate, lease.as_ref(), outcome, &error, &error_text)
                .await;
            match decision {
                Decision::RetryInternally => {
                    let step = Step::Retry(Feedback {
                        call_id: call.id.clone(),
                        tool: call.name.clone(),
                        class,
                        text: format!(
                            "`{}` failed ({error_text}); gate retried it after {} ms.",
                            call.name,
                            delay.as_millis()
                        ),
                    });
                    self.log(&call, class.as_str(), &step, attempt_no, Some(&intent_key))
                        .await;
                    if let Step::Retry(feedback) = step {
                        self.state.last_retries.push(feedback);
                    }
                    tokio::time::sleep(delay).await;
                    continue;
                }
                Decision::Return => {
                    self.state.corrections_in_step = 0;
                    let step = self.output(&gate, &call, json!({"error": error_text}), true, false);
                    self.log(&call, class.as_str(), &step, attempt_no, Some(&intent_key))
                        .await;
                    return step;
                }
                Decision::RetryWithCorrection(_) => {
                    self.state.corrections_in_step += 1;
                    self.state.failed_calls.insert(call_fp.clone());
                    self.grow_context(&feedback);
                    let text = self.sanitize_text(&gate, &feedback);
                    let step = Step::Retry(Feedback {
                        call_id: call.id.clone(),
                        tool: call.name.clone(),
                        class,
                        text,
                    });
                    self.log(&call, class.as_str(), &step, attempt_no, Some(&intent_key))
                        .await;
                    return step;
                }
                Decision::Fail(reason) => {
                    let state = lease.as_ref().map(|_| outcome);
                    let step = self.fail(
                        &call,
                        &call_fp,
                        reason,
                        Some(class),
                        Some(&intent_key),
                        state,
                        &error_text,
                    );
                    self.log(&call, class.as_str(), &step, attempt_no, Some(&intent_key))
                        .await;
                    return step;
                }
                Decision::Reject | Decision::RefuseRepeat => {
                    // Structural decisions are taken before the tool runs.
                    let step = self.fail(
                        &call,
                        &call_fp,
                        FailReason::Internal,
                        Some(class),
                        Some(&intent_key),
                        None,
                        &error_text,
                    );
                    self.log(&call, class.as_str(), &step, attempt_no, Some(&intent_key))
                        .await;
                    return step;
                }
            }
        }
    }

    /// Claims the intent (for tools with effects), runs the tool, contains panics.
    async fn attempt(&self, gate: &Gate, tool: &dyn Tool, ctx: &Ctx, arguments: &str, key_fp: &str) -> Attempt {
        let effects = tool.spec().effects();
        if effects.is_read_only() {
            return Attempt::Ran(call_contained(tool, ctx, arguments).await, None);
        }
        let ledger = &gate.inner.ledger;
        let request = ClaimRequest {
            user: self.user.clone(),
            key: ctx.intent_key().to_owned(),
            fingerprint: key_fp.to_owned(),
            task_id: self.id.clone(),
            tool: ctx.tool().to_owned(),
            idempotent: effects.is_idempotent(),
            lease: Duration::from_secs(60),
        };
        let lease = match ledger.claim(&request).await {
            Ok(Claim::Acquired(lease)) => lease,
            Ok(Claim::Replay { outcome, .. }) => return Attempt::Replayed(outcome),
            Ok(Claim::OutcomeUnknown(record)) => {
                let error = record
                    .error
                    .clone()
                    .unwrap_or_else(|| "an earlier attempt's outcome is unknown".to_owned());
                return Attempt::Stop(FailReason::OutcomeUnknown, Some(State::OutcomeUnknown), error);
            }
            Err(e) => return Attempt::Stop(ledger_fail_reason(&e), None, e.to_string()),
        };
        // Committed before the tool runs: a crash from here on is OutcomeUnknown.
        let lease = match ledger.dispatch(&lease).await {
            Ok(lease) => lease,
            Err(e) => {
                let _ = ledger.release(&lease).await;
                return Attempt::Stop(ledger_fail_reason(&e), None, e.to_string());
            }
        };
        Attempt::Ran(call_contained(tool, ctx, arguments).await, Some(lease))
    }

    /// Records in the ledger what the decision means for the intent.
    async fn settle_ledger(
        &self,
        gate: &Gate,
        lease: Option<&Lease>,
        state: State,
        error: &ToolError,
        error_text: &str,
    ) {
        let Some(lease) = lease else { return };
        let finish = match state {
            State::FailedPermanent => Finish::FailedPermanent {
                body: json!({"error": error_text}),
                error: error_text.to_owned(),
            },
            State::FailedRetryable => Finish::FailedRetryable {
                error: error_text.to_owned(),
            },
            _ => Finish::OutcomeUnknown {
                error: operator_cause(error, error_text),
            },
        };
        if let Err(e) = gate.inner.ledger.finish(lease, finish).await {
            tracing::error!(target: "gate::ledger", error = %e, key = %lease.key, "ledger transition refused");
        }
    }

    fn history(&self, call_fp: &str) -> History {
        History {
            same_rejection_before: false,
            rejections: self.state.rejections,
            rejection_cap: self.gate.inner.rejection_cap,
            repeats_failed_call: self.state.failed_calls.contains(call_fp),
            corrections_in_step: self.state.corrections_in_step,
            corrections_per_step: self.gate.inner.corrections_per_step,
        }
    }

    /// A structural failure (unknown tool, invalid arguments, or a repeated
    /// failed call): reject or fail, as the policy says.
    async fn structural(&mut self, call: &ToolCall, call_fp: &str, message: String, repeat: bool) -> Step {
        let gate = self.gate.clone();
        let message_hash = sha256_hex(&message);
        let mut history = self.history(call_fp);
        history.repeats_failed_call = repeat;
        history.same_rejection_before = self.state.rejected.contains(&message_hash);
        let situation = Situation {
            effects: crate::Effects::new(),
            class: FailureClass::Structural,
            ambiguity: None,
            history,
            budget: BudgetVerdict::OPEN,
        };
        let step = match self.authorize(situation, &message, Pushback::None).0 {
            Decision::Reject | Decision::RefuseRepeat => {
                self.state.rejections += 1;
                self.state.rejected.insert(message_hash);
                self.grow_context(&message);
                let text = self.sanitize_text(&gate, &message);
                Step::Reject(Feedback {
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    class: FailureClass::Structural,
                    text,
                })
            }
            Decision::Fail(reason) => self.fail(
                call,
                call_fp,
                reason,
                Some(FailureClass::Structural),
                self.intent_key_for(&call.name).as_deref(),
                None,
                &message,
            ),
            _ => self.fail(
                call,
                call_fp,
                FailReason::Internal,
                Some(FailureClass::Structural),
                None,
                None,
                &message,
            ),
        };
        self.log(
            call,
            FailureClass::Structural.as_str(),
            &step,
            1,
            self.intent_key_for(&call.name).as_deref(),
        )
        .await;
        step
    }

    #[allow(clippy::too_many_arguments)]
    fn fail(
        &self,
        call: &ToolCall,
        call_fp: &str,
        reason: FailReason,
        class: Option<FailureClass>,
        intent_key: Option<&str>,
        ledger_state: Option<State>,
        error: &str,
    ) -> Step {
        let last_error = self.sanitize_text(&self.gate, error);
        let model_text = self.sanitize_text(&self.gate, &fail_text(&call.name, reason, intent_key));
        Step::Fail(Box::new(FailureReport {
            task_id: self.id.clone(),
            user: self.user.clone(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments_fingerprint: call_fp.to_owned(),
            intent_key: intent_key.map(str::to_owned),
            ledger_state: ledger_state.map(|s| s.as_str().to_owned()),
            class,
            reason,
            attempts: self.repairs(),
            repair_tokens: self.repair_tokens(),
            latency_added_ms: self.latency_added().as_millis() as u64,
            last_error,
            next_check: next_check(reason, &call.name, intent_key),
            model_text,
        }))
    }

    fn output(&mut self, gate: &Gate, call: &ToolCall, value: Value, is_error: bool, replayed: bool) -> Step {
        let raw = match &value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let text = match &gate.inner.result_sanitizer {
            Some(s) => s.sanitize(&raw).text,
            None => raw,
        };
        self.grow_context(&text);
        Step::Return(ToolOutput {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            value,
            text,
            is_error,
            replayed,
        })
    }

    fn sanitize_text(&self, gate: &Gate, text: &str) -> String {
        gate.inner.sanitizer.sanitize(text).text
    }

    /// A tool's error as the model may see it: its class, and its text with
    /// echoes of the call's own argument values neutralized.
    fn sanitize_error(&self, gate: &Gate, error: &ToolError, args: &Value) -> String {
        let mut echoes = Vec::new();
        collect_strings(args, &mut echoes);
        let echoes: Vec<&str> = echoes.iter().map(String::as_str).collect();
        gate.inner
            .sanitizer
            .sanitize_with_echoes(&error.to_string(), &echoes)
            .text
    }

    /// Logs one decision. Tokens and latency are what this decision spent
    /// (since the previous record of the task), so sums over records are
    /// exact; when the provider's real usage replaced an estimate in between,
    /// the difference (possibly negative) lands on this record.
    async fn log(&mut self, call: &ToolCall, class: &str, step: &Step, attempt: i64, intent_key: Option<&str>) {
        let tokens = self.repair_tokens() as i64;
        let latency_ms = self.latency_added().as_millis() as i64;
        let spent_tokens = tokens - std::mem::replace(&mut self.state.logged_repair_tokens, tokens);
        let added_ms = latency_ms - std::mem::replace(&mut self.state.logged_latency_ms, latency_ms);
        let gate = &self.gate;
        let record = DecisionRecord {
            at: gate.inner.ledger.now(),
            task_id: self.id.clone(),
            user: self.user.clone(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            class: class.to_owned(),
            action: step.action().to_owned(),
            attempt,
            attempts_used: i64::from(self.repairs()),
            repair_tokens: spent_tokens,
            latency_added_ms: added_ms,
            message_hash: sha256_hex(step.model_text()),
            intent_key: intent_key.map(str::to_owned),
        };
        emit(&record);
        for sink in &gate.inner.sinks {
            sink.record(&record).await;
        }
    }
}

/// The JSON the fingerprint covers: the `key` arguments, or all of them.
fn key_arguments(args: &Value, key_args: &[String]) -> Value {
    if key_args.is_empty() {
        return args.clone();
    }
    let Value::Object(map) = args else { return args.clone() };
    Value::Object(
        map.iter()
            .filter(|(k, _)| key_args.contains(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    )
}

/// The identity of a call for rules 1 and 3: the tool and its canonical arguments.
fn call_fingerprint(tool: &str, canonical_arguments: &str) -> String {
    sha256_hex(&format!("{tool}\u{0}{canonical_arguments}"))
}

/// Canonical JSON of arguments that parse, the raw text of those that do not.
fn canonical_or_raw(arguments: &str) -> String {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v) => gate_ledger::canonical_json(&v),
        Err(_) => arguments.to_owned(),
    }
}

fn collect_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

/// The operator-side cause of an error (never shown to the model).
fn operator_cause(error: &ToolError, error_text: &str) -> String {
    match std::error::Error::source(error) {
        Some(cause) => format!("{error_text} ({cause})"),
        None => error_text.to_owned(),
    }
}

fn ledger_fail_reason(error: &LedgerError) -> FailReason {
    if error.is_in_progress() {
        FailReason::InProgress
    } else if error.is_key_reused() {
        FailReason::KeyReused
    } else {
        FailReason::LedgerUnavailable
    }
}

/// The state a failed call leaves its intent in. One function, so that the
/// ledger and the failure report can never disagree.
fn ledger_outcome(class: FailureClass, ambiguity: Option<Ambiguity>, decision: Decision, idempotent: bool) -> State {
    match (class, decision) {
        (FailureClass::Definitive, _) => State::FailedPermanent,
        // Nothing happened, or the tool is safe to run again: a new attempt may take it.
        (_, Decision::RetryInternally | Decision::RetryWithCorrection(_)) | (FailureClass::Transient, _) => {
            State::FailedRetryable
        }
        (FailureClass::Ambiguous, _) if ambiguity != Some(Ambiguity::Unreadable) => State::FailedPermanent,
        _ if idempotent => State::FailedRetryable,
        // Timeouts, lost connections after sending, unreadable answers and
        // crashes while dispatched: the effect may have happened.
        _ => State::OutcomeUnknown,
    }
}

/// The correction for an ambiguous failure: information, not "try again".
fn correction_text(
    tool: &str,
    discovery: Option<&str>,
    widen: Option<&str>,
    ambiguity: Option<Ambiguity>,
    error: &str,
) -> String {
    match (ambiguity, discovery, widen) {
        (Some(Ambiguity::WrongTarget), Some(d), _) => format!(
            "`{tool}` was refused without a usable reason ({error}): the identifier you used is probably not one it can access. Call `{d}` to see the valid ones, then call `{tool}` again with one of them."
        ),
        (Some(Ambiguity::WrongTarget), None, _) => format!(
            "`{tool}` was refused without a usable reason ({error}). Check the identifiers you passed against what earlier results returned, and call `{tool}` again with a different one."
        ),
        (Some(Ambiguity::NothingFound), _, Some(hint)) => {
            format!("`{tool}` found nothing for these arguments. Widen the search: {hint}.")
        }
        (Some(Ambiguity::NothingFound), _, None) => format!(
            "`{tool}` found nothing for these arguments. Widen the search (fewer or looser filters) and call again with different arguments."
        ),
        _ => format!("`{tool}` failed ({error})."),
    }
}

/// What the model is told when the task stops.
fn fail_text(tool: &str, reason: FailReason, intent_key: Option<&str>) -> String {
    let key = intent_key.map(|k| format!(" (intent {k})")).unwrap_or_default();
    match reason {
        FailReason::OutcomeUnknown => format!(
            "STOP. The call to `{tool}` may or may not have taken effect{key}. Do not call it again: it has been queued for a person to check. Tell the user the operation is pending verification."
        ),
        FailReason::InProgress => format!(
            "STOP. The same operation is already running elsewhere{key}. Do not call `{tool}` again; tell the user it is in progress."
        ),
        FailReason::KeyReused => format!(
            "STOP. This operation{key} was already requested with different details. Do not call `{tool}` again; ask the user which details are right."
        ),
        FailReason::LedgerUnavailable => {
            format!("STOP. `{tool}` could not be run safely right now. Tell the user to try again later.")
        }
        FailReason::NotActionable | FailReason::RejectionCap => format!(
            "STOP. Calls to `{tool}` kept failing validation. Do not call it again in this task; tell the user what you were trying to do."
        ),
        _ => format!(
            "STOP. `{tool}` failed and this task cannot continue. Tell the user the operation did not complete."
        ),
    }
}
