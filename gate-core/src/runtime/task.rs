//! [`Task`]: one agent task, and the one pipeline every call goes through.
//!
//! ```text
//! handle(call)
//!   admit     load the task's stored state (once); a failed task runs nothing;
//!             resolve the tool; check its scopes are granted; validate the
//!             arguments; refuse a repeated failed call
//!   attempt   claim the intent with its dispatch (one commit), run the tool  (attempt.rs)
//!   conclude  decide (policy, then budgets), render what the model sees, commit
//!             the call's outcome, the task's state, the decision record and the
//!             tokens together (one commit), log
//! ```
//!
//! `conclude` is the only place a step is returned: every exit of the
//! pipeline, a rejection before the tool ran as much as a success, goes
//! through the same decision, the same commit and the same log.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use gate_budget::{
    Pushback, Refusal, RepairPlan, Reservation, TaskBudget, TokensExhausted, estimate_tokens, repair_cost,
};
use gate_ledger::{
    Action, ClaimRequest, DecisionId, DecisionRecord, FailureClass, FailureReason, FailureReport, Finish, Lease,
    LedgerError, State, TaskRecord, TaskState, Timestamp, new_owner_token,
};
use serde_json::{Value, json};

use super::attempt::{self, Attempt};
use super::budget::{RESENDS_REFUSED, closed};
use super::class::classify;
use super::gate::Gate;
use super::identity::{CallIdentity, as_validated, message_hash, raw_fingerprint};
use super::log::emit;
use super::messages;
use super::persist::{self, Committed, TaskWrite, TokenRequest, Writes};
use super::policy::{BudgetVerdict, Decision, History, Situation, decide, ledger_state};
use super::step::{Feedback, Step, ToolCall, ToolOutput};
use crate::tool::prepare_contained;
use crate::validate::Validator;
use crate::{Ctx, Dialect, Effects, ManifestError, PreparedCall, Tool, ToolError, ToolSpec};

/// What a lease holds beyond the tool's timeout and the store patience that
/// recording its outcome may take: the time between the claim and the call.
const LEASE_MARGIN: Duration = Duration::from_secs(5);

/// Rounds of "another worker changed the task: reload and decide again"
/// before giving up; two workers driving one task is rare, eight is plenty.
const MAX_CONFLICT_ROUNDS: usize = 8;

/// One agent task: its id, its user, its current intent and its history.
///
/// The history lives in the store: the task loads it on its first call (or
/// [`load`](Self::load)) and writes it with every decision that changes it,
/// so `gate.task_with_id(user, id)` on any worker resumes the task exactly.
pub struct Task {
    gate: Gate,
    /// Shared with every call's context (`Ctx`) rather than copied into it.
    id: Arc<str>,
    user: Arc<str>,
    intent: Option<String>,
    /// Scopes granted to the task by the program running it (never from the
    /// store: authority comes from the caller, on every worker).
    granted: BTreeSet<String>,
    /// The task as last loaded or committed.
    stored: TaskRecord,
    loaded: bool,
    /// Usage reported while the task could not be loaded: the context size
    /// to apply once it is.
    unloaded_usage: Option<u64>,
    last_retries: Vec<Feedback>,
}

/// A call that passed every check before running.
struct Admitted<'c> {
    tool: &'c dyn Tool,
    /// The arguments parsed into the tool's own types while they were
    /// validated, for the first attempt (a later attempt parses the text).
    prepared: Mutex<Option<PreparedCall<'c>>>,
    validator: &'c Arc<Validator>,
    /// The call's own text.
    raw: &'c str,
    /// The text as the validator reads it (an optional field sent as null
    /// is absent), which the identities and a later attempt use: set by
    /// validation, or worked out when first needed after a one-pass parse.
    text: OnceLock<Cow<'c, str>>,
    /// The declared intent's key for this tool, if an intent is declared.
    declared_key: Option<String>,
    /// Computed when first needed: a successful read-only call needs none.
    identity: OnceLock<CallIdentity>,
    derived_key: OnceLock<String>,
}

impl Admitted<'_> {
    /// The arguments as the tool reads them.
    fn arguments(&self) -> &str {
        self.text.get_or_init(|| as_validated(self.validator, self.raw))
    }

    /// Whether the call claims its intent in the ledger before it runs.
    fn claims(&self) -> bool {
        !self.tool.spec().effects().is_read_only()
    }

    fn identity(&self) -> &CallIdentity {
        self.identity.get_or_init(|| {
            let spec = self.tool.spec();
            CallIdentity::of(spec.name(), self.arguments(), spec.key_args())
        })
    }

    /// The call's intent key: the declared one, or the one derived from
    /// its key arguments.
    fn intent_key(&self, task_id: &str) -> &str {
        match &self.declared_key {
            Some(key) => key,
            None => self
                .derived_key
                .get_or_init(|| self.identity().derived_key(task_id, self.tool.spec().name())),
        }
    }

    /// The key the decision log records: the key a side effect is claimed
    /// under, or the declared intent's; none for a read-only call outside
    /// a declared intent, which has no intent in the ledger.
    fn logged_key(&self, task_id: &str) -> Option<&str> {
        (self.claims() || self.declared_key.is_some()).then(|| self.intent_key(task_id))
    }
}

/// What happened to a call, before any budget was asked.
enum Verdict {
    /// The task had already failed (rule 7).
    TaskFailed,
    /// The task's state could not be read: nothing ran.
    StoreDown(String),
    /// Refused before running: an unknown tool, invalid arguments, or a
    /// repeated failed call (rule 3).
    Refused {
        message: String,
        call_fp: String,
        repeat: bool,
    },
    /// The tool's result, or a finished intent's stored outcome.
    Returned {
        value: Value,
        is_error: bool,
        replayed: bool,
        /// The intent the call held, whose outcome the decision records.
        /// Boxed, here and in `Failed`: only a side effect holds one, and
        /// inline it would make every verdict, moved several times on every
        /// call, twice as large.
        lease: Option<Box<Lease>>,
    },
    /// The tool succeeded, but the store did not take its outcome.
    NotRecorded { value: Value, error: String },
    /// The tool failed.
    Failed {
        error: ToolError,
        lease: Option<Box<Lease>>,
        elapsed: Duration,
    },
    /// The ledger answered before the tool ran.
    Stopped {
        reason: FailureReason,
        state: Option<State>,
        class: Option<FailureClass>,
        error: String,
    },
}

/// The decision before the token window answered.
struct Choice {
    decision: Decision,
    class: Option<FailureClass>,
    /// For a repair: the situation, to decide again if a budget refuses.
    situation: Option<Situation>,
    plan: Option<RepairPlan>,
    /// Tokens the repair needs from the user's window.
    tokens: u64,
    /// The sanitized text a repair shows the model.
    feedback: Option<String>,
    /// The sanitized error of a failed tool call.
    error_text: Option<String>,
}

impl Choice {
    fn fixed(decision: Decision, class: Option<FailureClass>) -> Self {
        Choice {
            decision,
            class,
            situation: None,
            plan: None,
            tokens: 0,
            feedback: None,
            error_text: None,
        }
    }
}

/// Everything one decision produces.
struct Settled {
    /// The task's new record, when it changed in more than its context size.
    /// Boxed, like `intent`: a settled success carries neither, and the
    /// struct is moved on every call.
    task: Option<Box<TaskRecord>>,
    /// The context size the task has grown to: kept in memory even when
    /// the task is not written.
    context_tokens: u64,
    record: DecisionRecord,
    step: Step,
    retry_after: Option<Duration>,
    /// How the intent the call held ended, committed with the decision.
    intent: Option<Box<(Lease, Finish)>>,
}

impl Writes for Settled {
    fn task(&self) -> Option<&TaskRecord> {
        self.task.as_deref()
    }
    fn decision(&self) -> Option<&DecisionRecord> {
        Some(&self.record)
    }
    fn intent(&self) -> Option<(&Lease, &Finish)> {
        self.intent.as_deref().map(|(lease, finish)| (lease, finish))
    }
}

impl Verdict {
    /// The verdict once the ledger refused to record the intent's finish:
    /// a success whose outcome could not be recorded, or a failure the
    /// ledger is not told about (the sweep moves its intent on).
    fn without_intent(self, refusal: &LedgerError) -> Verdict {
        match self {
            Verdict::Returned {
                value, lease: Some(_), ..
            } => Verdict::NotRecorded {
                value,
                error: refusal.to_string(),
            },
            Verdict::Failed {
                error,
                lease: Some(_),
                elapsed,
            } => Verdict::Failed {
                error,
                lease: None,
                elapsed,
            },
            other => other,
        }
    }
}

/// How a decision ended: the step, and for an internal retry the delay
/// before the next attempt.
struct Concluded {
    step: Step,
    retry_after: Option<Duration>,
}

impl Gate {
    /// A new task for `user`, with a fresh id: 128 bits from the operating
    /// system, never from the [seed](super::GateBuilder::seed), since two
    /// workers seeded alike must not hand out the same task.
    pub fn task(&self, user: impl Into<String>) -> Task {
        let mut task = self.task_with_id(user, format!("task-{}", new_owner_token()));
        // An id just minted from 128 random bits names nothing stored: there
        // is nothing to load, and the first write inserts the task.
        task.loaded = true;
        task
    }

    /// The task `id` of `user`: a new task, or the one stored under that id,
    /// resumed exactly where it was on whichever worker ran it (its
    /// rejections, repairs, budgets and terminal flag come back from the
    /// store on its first call). Intent keys derive from the task id, so the
    /// resumed task also finds its ledger records.
    pub fn task_with_id(&self, user: impl Into<String>, id: impl Into<String>) -> Task {
        let (user, id) = (user.into(), id.into());
        Task {
            stored: TaskRecord::new(&user, &id),
            gate: self.clone(),
            id: Arc::from(id),
            user: Arc::from(user),
            intent: None,
            granted: BTreeSet::new(),
            loaded: false,
            unloaded_usage: None,
            last_retries: Vec::new(),
        }
    }
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

    /// Grants `scopes` to the task: a tool runs in it only when every scope
    /// the tool declares is granted. A call to a tool whose scopes are not
    /// all granted never runs; the model is told which scope is missing, and
    /// the refusal counts as a rejection. Tools without scopes always run.
    ///
    /// Grants belong to the program that runs the task, not to the store:
    /// a task resumed with [`Gate::task_with_id`] on another worker has the
    /// scopes that worker grants it.
    ///
    /// ```no_run
    /// # async fn demo(gate: gate_core::Gate) {
    /// let task = gate.task("user-42").grant(["crm:read", "billing:charge"]);
    /// # }
    /// ```
    pub fn grant<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.granted.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// The scopes granted to the task.
    pub fn granted(&self) -> impl Iterator<Item = &str> {
        self.granted.iter().map(String::as_str)
    }

    /// Whether every scope `spec` declares is granted to the task.
    pub fn may_call(&self, spec: &ToolSpec) -> bool {
        self.missing_scopes(spec).next().is_none()
    }

    /// The scopes `spec` declares that the task was not granted.
    fn missing_scopes<'s>(&'s self, spec: &'s ToolSpec) -> impl Iterator<Item = &'s str> + 's {
        spec.scopes()
            .iter()
            .map(String::as_str)
            .filter(|s| !self.granted.contains(*s))
    }

    /// The tool definitions of what this task may call, for a provider:
    /// [`Toolbox::manifest`](crate::Toolbox::manifest) without the tools
    /// whose scopes are not granted (least privilege: the model is not shown
    /// what it may not use).
    pub fn manifest(&self, dialect: Dialect) -> Result<serde_json::Value, ManifestError> {
        crate::manifest::render(self.gate.toolbox().specs().filter(|s| self.may_call(s)), dialect)
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
        &self.last_retries
    }

    /// Repairs (rejections and retries) used so far.
    pub fn repairs(&self) -> u32 {
        self.stored.state.budget.repairs
    }

    /// Tokens spent on repair so far.
    pub fn repair_tokens(&self) -> u64 {
        self.stored.state.budget.repair_tokens
    }

    /// Wall-clock latency retries have added so far.
    pub fn latency_added(&self) -> Duration {
        Duration::from_millis(self.stored.state.budget.added_latency_ms)
    }

    /// Whether the task failed: it runs nothing more until a person reopens
    /// it (`gate reconcile reopen`, or resolving the intent it waits for).
    pub fn is_failed(&self) -> bool {
        self.stored.terminal
    }

    /// The report of the failure that ended the task, while it is failed.
    pub fn failure(&self) -> Option<&FailureReport> {
        self.stored.failure.as_ref().filter(|_| self.stored.terminal)
    }

    /// Loads the task's stored state now (the first [`handle`](Self::handle)
    /// does it otherwise), e.g. to see whether a resumed task
    /// [`is_failed`](Self::is_failed) before calling the model.
    pub async fn load(&mut self) -> Result<(), LedgerError> {
        if self.loaded {
            return Ok(());
        }
        let inner = self.gate.inner();
        let (user, id) = (&self.user, &self.id);
        let stored = persist::retrying(inner.store_patience, "load the task", || {
            inner.store.load_task(user, id)
        })
        .await?;
        self.stored = stored.unwrap_or_else(|| TaskRecord::new(&*self.user, &*self.id));
        if let Some(context) = self.unloaded_usage.take() {
            self.stored.state.context_tokens = context;
            self.stored.state.usage_reported = true;
        }
        self.loaded = true;
        Ok(())
    }

    /// Records the provider's real token usage of the last model turn: the
    /// context a repair would replay is what the model just read and wrote,
    /// and if the turn was a repair, its estimate in the user's window (on
    /// every worker of the store) is settled to this real usage.
    ///
    /// A store that cannot take the settlement keeps the estimate; the
    /// failure is logged (`gate::store`), the agent goes on, and the context
    /// size still counts for the next repair. [`record_turn`](Self::record_turn)
    /// also reports the turn's latency.
    pub async fn record_usage(&mut self, input_tokens: u64, output_tokens: u64) {
        self.report_turn(Some(input_tokens.saturating_add(output_tokens)), None)
            .await;
    }

    /// Reports one model turn: how long it took (the wall-clock time of the
    /// model call) and, when the provider said, its token usage. A custom
    /// agent loop calls it after every model call; [`agent::run`](crate::agent::run)
    /// does it itself.
    ///
    /// When the turn answered a repair (the model's last step was a
    /// rejection or a correction), its latency is latency the repair added:
    /// it counts in the task's latency budget, beside the failed attempts'
    /// own time, so a later repair is refused once the budget is spent. The
    /// usage is settled as [`record_usage`](Self::record_usage) does.
    pub async fn record_turn(&mut self, latency: Duration, usage: Option<(u64, u64)>) {
        let tokens = usage.map(|(input, output)| input.saturating_add(output));
        self.report_turn(tokens, Some(latency)).await;
    }

    async fn report_turn(&mut self, tokens: Option<u64>, latency: Option<Duration>) {
        if let Err(e) = self.load().await {
            if tokens.is_some() {
                self.unloaded_usage = tokens;
            }
            tracing::warn!(target: "gate::store", error = %e, task = %self.id, "turn not recorded: the task could not be loaded");
            return;
        }
        let gate = self.gate.clone();
        let inner = gate.inner();
        let limit = inner.budget.token_limit();
        for _ in 0..MAX_CONFLICT_ROUNDS {
            if let Some(actual) = tokens {
                self.stored.state.context_tokens = actual;
                self.stored.state.usage_reported = true;
            }
            let pending = match tokens {
                Some(_) => self.stored.state.pending_tokens.clone(),
                None => Vec::new(),
            };
            let repair_latency = latency.filter(|_| self.stored.state.repair_turn_pending);
            if pending.is_empty() && repair_latency.is_none() {
                return;
            }
            let mut task = self.stored.clone();
            task.writer = new_owner_token();
            let mut budget = self.budget();
            if let Some(spent) = repair_latency {
                budget.record_latency(spent);
                task.state.repair_turn_pending = false;
            }
            let actual = tokens.unwrap_or(0);
            if !pending.is_empty() {
                let estimated = pending.iter().fold(0u64, |sum, r| sum.saturating_add(r.tokens));
                task.state.pending_tokens.clear();
                budget.settle_tokens(estimated, actual);
            }
            task.state.budget = budget.state();
            match persist::commit_usage(&*inner.store, &limit, &pending, actual, &task, inner.store_patience).await {
                Committed::Done {
                    writes: TaskWrite(task),
                    revision,
                } => {
                    self.stored = task;
                    self.stored.revision = revision.unwrap_or(self.stored.revision);
                    return;
                }
                Committed::Conflict => self.reload().await,
                // A usage write finishes no intent, so nothing refuses one.
                Committed::IntentRefused(e) | Committed::Failed(e) => {
                    tracing::warn!(target: "gate::store", error = %e, task = %self.id, "turn not recorded: the estimate stands");
                    return;
                }
            }
        }
    }

    /// Handles one tool call: admit, run, decide, commit, log. The returned
    /// step says what the model sees next.
    pub async fn handle(&mut self, call: ToolCall) -> Step {
        self.last_retries.clear();
        // Shared with the tool's context, not copied into it.
        let call = Arc::new(call);
        let step = self.step_for(&call).await;
        name_the_call(step, call)
    }

    /// The step that answers `call`: admit, run, decide, commit, log.
    async fn step_for(&mut self, call: &Arc<ToolCall>) -> Step {
        let gate = self.gate.clone();
        let admitted = match self.admit(&gate, call).await {
            Ok(admitted) => admitted,
            Err(verdict) => return self.conclude(call, None, verdict, 1).await.step,
        };
        // A first attempt earns the resends the retry budget allows.
        if let Some(retries) = &gate.inner().retry_budget {
            retries.deposit();
        }
        let mut attempt_no = 0;
        loop {
            attempt_no += 1;
            let verdict = self.attempt(call, &admitted).await;
            let concluded = self.conclude(call, Some(&admitted), verdict, attempt_no).await;
            let Some(delay) = concluded.retry_after else {
                return concluded.step;
            };
            // The resend is recorded: it is paid for now, once.
            if let Some(retries) = &gate.inner().retry_budget {
                retries.spend();
            }
            // Boxed: a timer is a large future, and an internal retry rare.
            Box::pin(tokio::time::sleep(delay)).await;
        }
    }

    /// Everything checked before a tool runs.
    async fn admit<'c>(&mut self, gate: &'c Gate, call: &'c ToolCall) -> Result<Admitted<'c>, Verdict> {
        // Loaded once per task: the load's future is boxed so that it is
        // not part of every call's.
        if !self.loaded
            && let Err(e) = Box::pin(self.load()).await
        {
            return Err(Verdict::StoreDown(e.to_string()));
        }
        grow_context(&mut self.stored.state, &call.arguments);
        if self.stored.terminal {
            return Err(Verdict::TaskFailed);
        }
        let inner = gate.inner();
        let refused = |message: String| Verdict::Refused {
            message,
            call_fp: raw_fingerprint(call),
            repeat: false,
        };
        // The tool must exist; near misses are never executed. The model is
        // told only the names it may call.
        let Some((tool, validator)) = inner
            .toolbox
            .get_indexed(&call.name)
            .and_then(|(i, tool)| Some((tool, inner.validators.get(i)?)))
        else {
            return Err(refused(self.unknown_tool(call)));
        };
        let missing: Vec<&str> = self.missing_scopes(tool.spec()).collect();
        if !missing.is_empty() {
            return Err(refused(messages::scope_missing(&call.name, &missing)));
        }
        // Validated and parsed in one pass where the tool has typed
        // arguments; otherwise the text is validated for `Tool::call`.
        let text = OnceLock::new();
        let prepared = match prepare_contained(tool.as_ref(), validator, &call.arguments) {
            Ok(Some(Ok(prepared))) => Some(prepared),
            Ok(Some(Err(rejection))) => return Err(refused(rejection.message(&call.name))),
            Ok(None) => match validator.validate(&call.arguments) {
                Ok(validated) => {
                    let _ = text.set(validated);
                    None
                }
                Err(rejection) => return Err(refused(rejection.message(&call.name))),
            },
            Err(panicked) => {
                return Err(Verdict::Failed {
                    error: panicked,
                    lease: None,
                    elapsed: Duration::ZERO,
                });
            }
        };
        let admitted = Admitted {
            tool: tool.as_ref(),
            prepared: Mutex::new(prepared),
            validator,
            raw: &call.arguments,
            text,
            declared_key: self.intent_key_for(&call.name),
            identity: OnceLock::new(),
            derived_key: OnceLock::new(),
        };
        // Rule 3 needs the call's fingerprint only once a call has failed.
        let failed_calls = &self.stored.state.failed_calls;
        if !failed_calls.is_empty() && failed_calls.contains(&admitted.identity().call_fp) {
            return Err(Verdict::Refused {
                message: messages::repeated_call(&call.name),
                call_fp: admitted.identity().call_fp.clone(),
                repeat: true,
            });
        }
        Ok(admitted)
    }

    /// The rejection of a call to a tool that does not exist. Kept out of
    /// line, as every rare path of a call is: the code a successful call
    /// runs stays together and small (it competes with the tool's own for
    /// the instruction cache).
    #[cold]
    #[inline(never)]
    fn unknown_tool(&self, call: &ToolCall) -> String {
        let names: Vec<&str> = self
            .gate
            .toolbox()
            .specs()
            .filter(|s| self.may_call(s))
            .map(ToolSpec::name)
            .collect();
        gate_validate::unknown_tool(&call.name, &names).message()
    }

    /// One attempt at the tool.
    async fn attempt(&self, call: &Arc<ToolCall>, a: &Admitted<'_>) -> Verdict {
        let inner = self.gate.inner();
        let ctx = match a.logged_key(&self.id) {
            Some(key) => Ctx::keyed(&self.id, &self.user, call, key.to_owned()),
            None => Ctx::with_derived_key(&self.id, &self.user, call, a.validator, a.tool.spec().key_args()),
        };
        let effects = a.tool.spec().effects();
        let timeout = a.tool.spec().timeout().unwrap_or(inner.tool_timeout);
        let claim = a.claims().then(|| ClaimRequest {
            user: String::from(&*self.user),
            key: a.intent_key(&self.id).to_owned(),
            fingerprint: a.identity().key_fp.clone(),
            task_id: String::from(&*self.id),
            tool: call.name.clone(),
            idempotent: effects.is_idempotent(),
            lease: timeout + inner.store_patience + LEASE_MARGIN,
            owner: Some(new_owner_token()),
        });
        let store = &*inner.store;
        let prepared = a.prepared.lock().unwrap_or_else(|p| p.into_inner()).take();
        let tool_call = match prepared {
            Some(prepared) => attempt::Call::Prepared(prepared),
            None => attempt::Call::Text(a.tool, a.arguments()),
        };
        match attempt::run(store, tool_call, ctx, claim.as_ref(), timeout, inner.store_patience).await {
            Attempt::Ran {
                result: Ok(value),
                lease,
                ..
            } => Verdict::Returned {
                value,
                is_error: false,
                replayed: false,
                lease,
            },
            Attempt::Ran {
                result: Err(error),
                lease,
                elapsed,
            } => {
                // An internal error's cause (a panic's message, a bug's
                // error) is never shown to the model: this is where the
                // operator reads it.
                if let ToolError::Internal(cause) = &error {
                    internal_error(&self.id, call, cause);
                }
                Verdict::Failed { error, lease, elapsed }
            }
            Attempt::Replayed(outcome) => Verdict::Returned {
                value: outcome.value,
                is_error: outcome.is_error,
                replayed: true,
                lease: None,
            },
            Attempt::Stopped {
                reason,
                state,
                class,
                error,
            } => Verdict::Stopped {
                reason,
                state,
                class,
                error,
            },
        }
    }

    /// The one place a step is returned: decides, commits and logs.
    async fn conclude(
        &mut self,
        call: &ToolCall,
        admitted: Option<&Admitted<'_>>,
        verdict: Verdict,
        attempt_no: i64,
    ) -> Concluded {
        match &verdict {
            // The store just failed for the whole patience: waiting as long
            // again to record that is no help to anyone.
            Verdict::StoreDown(error)
            | Verdict::Stopped {
                reason: FailureReason::LedgerUnavailable,
                error,
                ..
            } => {
                let error = error.clone();
                return Box::pin(self.unrecorded(call, admitted, verdict, attempt_no, &error)).await;
            }
            _ => {}
        }
        // The fast path: a successful read-only call that changes nothing in
        // the task's state queues its decision record for the background
        // writer and returns without waiting for the store.
        let verdict = match self.settle_if_quiet(call, admitted, verdict, attempt_no) {
            Ok(settled) => {
                self.stored.state.context_tokens = settled.context_tokens;
                self.log(&settled.record).await;
                self.gate.inner().successes.push(settled.record).await;
                return Concluded {
                    step: settled.step,
                    retry_after: None,
                };
            }
            Err(verdict) => verdict,
        };
        // Boxed: the commit's future is several kilobytes, and inline it
        // would make every call's future (the fast path's too) that large.
        Box::pin(self.commit(call, admitted, verdict, attempt_no)).await
    }

    /// Writes a decision before its step returns: the decision record, the
    /// task's state, the intent's outcome and any token reservation, in one
    /// transaction, sent again while the store is unavailable.
    async fn commit(
        &mut self,
        call: &ToolCall,
        admitted: Option<&Admitted<'_>>,
        verdict: Verdict,
        attempt_no: i64,
    ) -> Concluded {
        let gate = self.gate.clone();
        let inner = gate.inner();
        let limit = inner.budget.token_limit();
        // The log keeps the process's order: the queued successes go into
        // this decision's transaction, ahead of it (back to the queue if it
        // does not land).
        let earlier = inner.successes.take_queued().await;
        let mut verdict = verdict;
        let mut store_error = String::new();
        for _ in 0..MAX_CONFLICT_ROUNDS {
            let choice = self.choose(call, admitted, &verdict);
            // One writer token and decision id per decision, whatever the
            // number of sends, so a commit that landed unseen is recognised.
            let writer = new_owner_token();
            let at = inner.store.now();
            let decision_id = DecisionId::at(at);
            let tokens = (choice.tokens > 0).then(|| TokenRequest {
                user: &self.user,
                limit: &limit,
                tokens: choice.tokens,
            });
            let committed = persist::commit_decision(
                &*inner.store,
                tokens,
                earlier.records(),
                inner.store_patience,
                |answer| {
                    self.settle(
                        call,
                        admitted,
                        &verdict,
                        &choice,
                        answer,
                        &writer,
                        decision_id,
                        at,
                        attempt_no,
                    )
                },
            )
            .await;
            match committed {
                Committed::Done { writes, revision } => {
                    earlier.stored();
                    return self.finish(writes, revision).await;
                }
                Committed::Conflict => {
                    self.reload().await;
                    store_error = "the task kept changing on another worker".to_owned();
                }
                Committed::IntentRefused(e) => {
                    tracing::error!(target: "gate::ledger", error = %e, task = %self.id, call_id = %call.id, "ledger transition refused");
                    verdict = verdict.without_intent(&e);
                }
                Committed::Failed(e) => {
                    store_error = e.to_string();
                    break;
                }
            }
        }
        self.unrecorded(call, admitted, verdict, attempt_no, &store_error).await
    }

    /// A successful read-only call's decision when the success
    /// [is quiet](Self::success_is_quiet): its record need not be written
    /// before the step returns. The verdict comes back otherwise (by value:
    /// the general path owns it next; boxing it would cost every call an
    /// allocation to save a move).
    #[allow(clippy::result_large_err)]
    fn settle_if_quiet(
        &self,
        call: &ToolCall,
        admitted: Option<&Admitted<'_>>,
        verdict: Verdict,
        attempt_no: i64,
    ) -> Result<Settled, Verdict> {
        let Some(admitted) = admitted else {
            return Err(verdict);
        };
        let quiet = admitted.tool.spec().effects().is_read_only() && !self.stored.terminal && self.success_is_quiet();
        let value = match verdict {
            Verdict::Returned {
                value,
                is_error: false,
                replayed: false,
                lease: None,
            } if quiet => value,
            other => return Err(other),
        };
        Ok(self.settle_quiet_success(call, admitted, value, attempt_no))
    }

    /// Whether a success would change nothing in the task's stored state:
    /// no repair episode to end, no correction count to reset, every spend
    /// already logged.
    fn success_is_quiet(&self) -> bool {
        let state = &self.stored.state;
        let budget = self.budget().state();
        state.corrections_in_step == 0
            && state.episode_rejections.is_empty()
            && budget == state.budget
            && budget.repair_tokens == state.logged_repair_tokens
            && budget.added_latency_ms == state.logged_latency_ms
    }

    /// What [`settle`](Self::settle) makes of a successful read-only call
    /// whose success [is quiet](Self::success_is_quiet), made without the
    /// general path's copy and comparison of the task's state, and taking
    /// the result instead of copying it. Every successful read takes this
    /// path, so it is kept to what such a call needs; a test holds it to
    /// `settle` over every combination of the state it reads.
    fn settle_quiet_success(&self, call: &ToolCall, admitted: &Admitted<'_>, value: Value, attempt_no: i64) -> Settled {
        let state = &self.stored.state;
        let at = self.gate.inner().store.now();
        let out = self.output(value, admitted.tool.spec().effects(), false, false);
        let context_tokens = if state.usage_reported {
            state.context_tokens
        } else {
            state.context_tokens.saturating_add(estimate_tokens(&out.text))
        };
        let record = DecisionRecord {
            id: DecisionId::at(at),
            at,
            task_id: self.id.clone(),
            user: self.user.clone(),
            call_id: call.id.clone(),
            tool: admitted.tool.spec().shared_name().clone(),
            class: None,
            action: Action::Return,
            fail_reason: None,
            attempt: attempt_no,
            attempts_used: i64::from(state.budget.repairs),
            repair_tokens: 0,
            latency_added_ms: 0,
            message_hash: String::new(),
            intent_key: admitted
                .logged_key(&self.id)
                .map(str::to_owned)
                .or_else(|| self.intent_key_for(&call.name)),
        };
        Settled {
            task: None,
            context_tokens,
            record,
            step: Step::Return(out),
            retry_after: None,
            intent: None,
        }
    }

    /// Reads the task again after another worker changed it.
    async fn reload(&mut self) {
        self.loaded = false;
        if let Err(e) = self.load().await {
            // Keep deciding on what we had; the commit will fail and say so.
            self.loaded = true;
            tracing::warn!(target: "gate::store", error = %e, task = %self.id, "task could not be reloaded");
        }
    }

    /// A decision the store did not take. A repair that cannot be recorded is
    /// not handed out (its guarantees would not survive a restart): the call
    /// fails as "store unavailable". Other decisions stand, and the task
    /// keeps them in memory until a later write stores them. The intent's
    /// finish is sent once on its own: a success it records is returned, a
    /// success it cannot record fails as "outcome not recorded", with the
    /// value, so a person can record it.
    async fn unrecorded(
        &mut self,
        call: &ToolCall,
        admitted: Option<&Admitted<'_>>,
        verdict: Verdict,
        attempt_no: i64,
        store_error: &str,
    ) -> Concluded {
        let store = &*self.gate.inner().store;
        let verdict = match verdict {
            Verdict::Returned {
                value,
                is_error,
                replayed,
                lease: Some(lease),
            } => {
                if attempt::finish_alone(store, &lease, Finish::Succeeded(value.clone())).await {
                    Verdict::Returned {
                        value,
                        is_error,
                        replayed,
                        lease: None,
                    }
                } else {
                    Verdict::NotRecorded {
                        value,
                        error: store_error.to_owned(),
                    }
                }
            }
            other => other,
        };
        let mut choice = self.choose(call, admitted, &verdict);
        if choice.decision.is_repair() {
            choice = Choice {
                error_text: choice.error_text,
                ..Choice::fixed(Decision::Fail(FailureReason::LedgerUnavailable), choice.class)
            };
        }
        let mut settled = self.settle_once(call, admitted, &verdict, &choice, attempt_no);
        if let Some(intent) = settled.intent.take() {
            let (lease, finish) = *intent;
            attempt::finish_alone(store, &lease, finish).await;
        }
        tracing::error!(
            target: "gate::store",
            error = %store_error,
            task = %self.id,
            call_id = %call.id,
            action = %settled.record.action,
            "decision not stored"
        );
        self.finish(settled, None).await
    }

    /// Takes a decision's writes as the task's state and logs the decision.
    async fn finish(&mut self, settled: Settled, revision: Option<i64>) -> Concluded {
        match settled.task {
            Some(mut task) => {
                task.revision = revision.unwrap_or(self.stored.revision);
                self.stored = *task;
            }
            None => self.stored.state.context_tokens = settled.context_tokens,
        }
        self.log(&settled.record).await;
        if settled.retry_after.is_some()
            && let Step::Retry(feedback) = &settled.step
        {
            self.last_retries.push(feedback.clone());
        }
        Concluded {
            step: settled.step,
            retry_after: settled.retry_after,
        }
    }

    /// Logs a decision: its `tracing` event and the extra sinks.
    async fn log(&self, record: &DecisionRecord) {
        emit(record);
        for sink in &self.gate.inner().sinks {
            sink.record(record).await;
        }
    }

    /// The task's own budgets, with the failed attempt's duration spent.
    fn budget_after(&self, verdict: &Verdict) -> TaskBudget {
        let mut budget = self.budget();
        if let Verdict::Failed { elapsed, .. } = verdict {
            budget.record_latency(*elapsed);
        }
        budget
    }

    fn budget(&self) -> TaskBudget {
        let mut budget = self.gate.inner().budget.task();
        budget.restore(self.stored.state.budget);
        budget
    }

    fn history(&self, call_fp: &str) -> History {
        let inner = self.gate.inner();
        let state = &self.stored.state;
        History {
            same_rejection_before: false,
            rejections: state.rejections,
            rejection_cap: inner.rejection_cap,
            repeats_failed_call: state.failed_calls.iter().any(|fp| fp == call_fp),
            corrections_in_step: state.corrections_in_step,
            corrections_per_step: inner.corrections_per_step,
        }
    }

    /// The policy's decision and, for a repair, what the task's own budgets
    /// allow; the user's token window answers inside the commit.
    fn choose(&self, call: &ToolCall, admitted: Option<&Admitted<'_>>, verdict: &Verdict) -> Choice {
        let (class, situation, feedback, error_text) = match verdict {
            Verdict::TaskFailed => return Choice::fixed(Decision::Fail(FailureReason::TaskFailed), None),
            Verdict::StoreDown(_) => return Choice::fixed(Decision::Fail(FailureReason::LedgerUnavailable), None),
            // Another worker failed the task while this call was deciding.
            _ if self.stored.terminal => return Choice::fixed(Decision::Fail(FailureReason::TaskFailed), None),
            Verdict::Returned { .. } => return Choice::fixed(Decision::Return, None),
            Verdict::NotRecorded { .. } => {
                return Choice::fixed(Decision::Fail(FailureReason::OutcomeNotRecorded), None);
            }
            Verdict::Stopped { reason, class, .. } => return Choice::fixed(Decision::Fail(*reason), *class),
            Verdict::Refused {
                message,
                call_fp,
                repeat,
            } => {
                let mut history = self.history(call_fp);
                history.repeats_failed_call = *repeat;
                history.same_rejection_before = self.stored.state.episode_rejections.contains(&message_hash(message));
                let situation = Situation {
                    effects: Effects::new(),
                    class: FailureClass::Structural,
                    history,
                    budget: BudgetVerdict::OPEN,
                };
                (FailureClass::Structural, situation, self.sanitize_text(message), None)
            }
            Verdict::Failed { error, .. } => {
                let class = classify(error);
                let (effects, call_fp, args) = match admitted {
                    Some(a) => (
                        a.tool.spec().effects(),
                        a.identity().call_fp.as_str(),
                        &a.identity().args,
                    ),
                    None => (Effects::new(), "", &Value::Null),
                };
                let error_text = self.sanitize_error(error, args);
                let spec = admitted.map(|a| a.tool.spec());
                let feedback = messages::correction(
                    &call.name,
                    spec.and_then(|s| s.discovery()),
                    spec.and_then(|s| s.widen()),
                    class.ambiguity(),
                    &error_text,
                );
                let situation = Situation {
                    effects,
                    class,
                    history: self.history(call_fp),
                    budget: BudgetVerdict::OPEN,
                };
                (class, situation, self.sanitize_text(&feedback), Some(error_text))
            }
        };
        let wanted = decide(&situation);
        let mut choice = Choice {
            decision: wanted,
            class: Some(class),
            situation: Some(situation),
            plan: None,
            tokens: 0,
            feedback: Some(feedback),
            error_text,
        };
        if !wanted.is_repair() {
            return choice;
        }
        let budget = self.budget_after(verdict);
        let planned = if wanted == Decision::RetryInternally {
            let pushback = match verdict {
                Verdict::Failed {
                    error: ToolError::RateLimited { retry_after },
                    ..
                } => Pushback::from(*retry_after),
                _ => Pushback::None,
            };
            let mut rng = self.gate.inner().rng.lock().unwrap_or_else(|p| p.into_inner());
            budget.plan_retry(pushback, Duration::ZERO, &mut *rng)
        } else {
            budget.plan_reject(Duration::ZERO)
        };
        match planned {
            // Asked last, so a resend the task's own budgets refuse is not
            // measured against the budget every call shares.
            Ok(_) if wanted == Decision::RetryInternally && !self.resend_available() => {
                choice.decision = redecide(&situation, RESENDS_REFUSED);
            }
            Ok(plan) => {
                choice.plan = Some(plan);
                // The model is not involved in an internal retry: no tokens are replayed.
                if wanted != Decision::RetryInternally {
                    let text = choice.feedback.as_deref().unwrap_or_default();
                    choice.tokens = repair_cost(self.stored.state.context_tokens, text);
                }
            }
            Err(refusal) => choice.decision = redecide(&situation, closed(&refusal)),
        }
        choice
    }

    /// Whether the gate's retry budget, if it has one, holds a resend now.
    /// Only read: `choose` runs again on every conflict round and once more
    /// for a decision the store did not take, so the resend withdraws it
    /// once it is recorded and happens (`step_for`).
    fn resend_available(&self) -> bool {
        self.gate
            .inner()
            .retry_budget
            .as_ref()
            .is_none_or(|b| b.available() > 0)
    }

    /// [`settle`](Self::settle) for a decision the store did not take,
    /// settled once, with no token answer and a fresh decision id. Its task
    /// state is not committed with it, so it carries no writer token: the
    /// next commit of the task writes its own.
    fn settle_once(
        &self,
        call: &ToolCall,
        admitted: Option<&Admitted<'_>>,
        verdict: &Verdict,
        choice: &Choice,
        attempt_no: i64,
    ) -> Settled {
        let at = self.gate.inner().store.now();
        self.settle(
            call,
            admitted,
            verdict,
            choice,
            None,
            "",
            DecisionId::at(at),
            at,
            attempt_no,
        )
    }

    /// Turns a choice and the window's answer into the step, the task's new
    /// state and the decision record. Pure: the commit may call it again.
    #[allow(clippy::too_many_arguments)]
    fn settle(
        &self,
        call: &ToolCall,
        admitted: Option<&Admitted<'_>>,
        verdict: &Verdict,
        choice: &Choice,
        answer: Option<Result<Reservation, TokensExhausted>>,
        writer: &str,
        decision_id: DecisionId,
        at: Timestamp,
        attempt_no: i64,
    ) -> Settled {
        let mut decision = choice.decision;
        // A reservation the transaction made is the task's to settle, whatever
        // the decision: it is written with it.
        let mut reservation = None;
        if let Some(answer) = answer {
            match (answer, &choice.situation) {
                (Ok(r), _) => reservation = Some(r),
                (Err(exhausted), Some(situation)) => {
                    decision = redecide(situation, closed(&Refusal::Tokens(exhausted)));
                }
                (Err(_), None) => {}
            }
        }
        let mut budget = self.budget_after(verdict);
        if decision.is_repair()
            && let Some(plan) = choice.plan
            && let Err(refusal) = budget.commit(plan, reservation.map_or(0, |r| r.tokens))
            && let Some(situation) = &choice.situation
        {
            decision = redecide(situation, closed(&refusal));
        }
        // The state is copied, the rest of the record only if the task changed.
        let mut new_state = self.stored.state.clone();
        let state = &mut new_state;
        let mut failure = None;
        let tool = call.name.as_str();
        let intent_key = admitted
            .and_then(|a| a.logged_key(&self.id).map(str::to_owned))
            .or_else(|| self.intent_key_for(tool));
        // Only a failure needs the call's fingerprint.
        let call_fp = || match (admitted, verdict) {
            (Some(a), _) => a.identity().call_fp.clone(),
            (None, Verdict::Refused { call_fp, .. }) => call_fp.clone(),
            (None, _) => raw_fingerprint(call),
        };
        let effects = admitted.map_or(Effects::new(), |a| a.tool.spec().effects());
        let failed_state = match (verdict, choice.class) {
            (Verdict::Failed { lease: Some(_), .. }, Some(class)) => Some(ledger_state(class, decision, effects)),
            _ => None,
        };
        let intent = match verdict {
            Verdict::Returned {
                value,
                lease: Some(lease),
                ..
            } => Some(Box::new((Lease::clone(lease), Finish::Succeeded(value.clone())))),
            Verdict::Failed {
                error,
                lease: Some(lease),
                ..
            } => failed_state.map(|state| {
                let error_text = choice.error_text.as_deref().unwrap_or_default();
                let operator_error = messages::operator_cause(error, error_text);
                Box::new((
                    Lease::clone(lease),
                    attempt::failure_finish(state, error_text, &operator_error),
                ))
            }),
            _ => None,
        };
        let feedback = |class: FailureClass, text: String| Feedback {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            class,
            text,
        };
        let mut retry_after = None;
        let step = match decision {
            Decision::Reject | Decision::RefuseRepeat => {
                let text = choice.feedback.clone().unwrap_or_default();
                if let Verdict::Refused { message, .. } = verdict {
                    state.episode_rejections.push(message_hash(message));
                }
                state.rejections += 1;
                state.repair_turn_pending = true;
                grow_context(state, &text);
                Step::Reject(feedback(FailureClass::Structural, text))
            }
            Decision::RetryWithCorrection(_) => {
                let text = choice.feedback.clone().unwrap_or_default();
                state.corrections_in_step += 1;
                remember_failed_call(state, &call_fp());
                state.repair_turn_pending = true;
                grow_context(state, &text);
                Step::Retry(feedback(choice.class.unwrap_or(FailureClass::Transient), text))
            }
            Decision::RetryInternally => {
                let delay = choice.plan.map_or(Duration::ZERO, |p| p.delay());
                retry_after = Some(delay);
                let error_text = choice.error_text.as_deref().unwrap_or_default();
                Step::Retry(feedback(
                    choice.class.unwrap_or(FailureClass::Transient),
                    messages::internal_retry(tool, error_text, delay),
                ))
            }
            Decision::Return => {
                let (value, is_error, replayed) = match verdict {
                    Verdict::Returned {
                        value,
                        is_error,
                        replayed,
                        ..
                    } => (value.clone(), *is_error, *replayed),
                    _ => (
                        json!({"error": choice.error_text.as_deref().unwrap_or_default()}),
                        true,
                        false,
                    ),
                };
                state.corrections_in_step = 0;
                if is_error {
                    // The same call would get the same answer (rule 3).
                    remember_failed_call(state, &call_fp());
                } else {
                    // A successful call ends the repair episode (rule 1).
                    state.episode_rejections.clear();
                }
                let out = self.output(value, effects, is_error, replayed);
                grow_context(state, &out.text);
                Step::Return(out)
            }
            Decision::Fail(reason) => {
                let report = self.failure_report(
                    call,
                    verdict,
                    choice,
                    reason,
                    at,
                    call_fp(),
                    intent_key.as_deref(),
                    &budget,
                    failed_state,
                );
                if reason.ends_task() {
                    failure = Some(report.clone());
                }
                Step::Fail(Box::new(report))
            }
        };
        if let Some(r) = reservation.filter(|r| r.tokens > 0) {
            state.pending_tokens.push(r);
        }
        state.budget = budget.state();
        let spent_tokens = to_i64(state.budget.repair_tokens) - to_i64(state.logged_repair_tokens);
        let added_ms = to_i64(state.budget.added_latency_ms) - to_i64(state.logged_latency_ms);
        state.logged_repair_tokens = state.budget.repair_tokens;
        state.logged_latency_ms = state.budget.added_latency_ms;
        let action = match &step {
            Step::Return(out) if out.replayed => Action::Replay,
            _ => decision.action(),
        };
        let record = DecisionRecord {
            id: decision_id,
            at,
            task_id: self.id.clone(),
            user: self.user.clone(),
            call_id: call.id.clone(),
            tool: recorded_tool(call, admitted),
            class: choice.class,
            action,
            fail_reason: match decision {
                Decision::Fail(reason) => Some(reason),
                _ => None,
            },
            attempt: attempt_no,
            attempts_used: i64::from(state.budget.repairs),
            repair_tokens: spent_tokens,
            latency_added_ms: added_ms,
            message_hash: match &step {
                Step::Return(_) => String::new(),
                _ => message_hash(step.model_text()),
            },
            intent_key,
        };
        let terminal = failure.is_some() || self.stored.terminal;
        let context_tokens = new_state.context_tokens;
        let changed = terminal != self.stored.terminal || state_changed(&self.stored.state, &new_state);
        let task = changed.then(|| {
            Box::new(TaskRecord {
                writer: writer.to_owned(),
                state: new_state,
                terminal,
                failure: failure.or_else(|| self.stored.failure.clone()),
                ..self.stored.clone()
            })
        });
        Settled {
            task,
            context_tokens,
            record,
            step,
            retry_after,
            intent,
        }
    }

    /// What a person needs about a failed call. Out of line: a successful
    /// call's settling stays small.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn failure_report(
        &self,
        call: &ToolCall,
        verdict: &Verdict,
        choice: &Choice,
        reason: FailureReason,
        at: Timestamp,
        arguments_fingerprint: String,
        intent_key: Option<&str>,
        budget: &TaskBudget,
        failed_state: Option<State>,
    ) -> FailureReport {
        let tool = call.name.as_str();
        let (error, outcome, ledger_state) = match verdict {
            Verdict::TaskFailed => (messages::earlier_failure(self.stored.failure.as_ref()), None, None),
            Verdict::StoreDown(e) => (e.clone(), None, None),
            Verdict::Refused { message, .. } => (message.clone(), None, None),
            Verdict::Returned { value, .. } => (value.to_string(), None, None),
            Verdict::NotRecorded { value, error } => (error.clone(), Some(value.clone()), Some(State::Dispatched)),
            Verdict::Failed { .. } => (choice.error_text.clone().unwrap_or_default(), None, failed_state),
            Verdict::Stopped { error, state, .. } => (error.clone(), None, *state),
        };
        FailureReport {
            at,
            task_id: String::from(&*self.id),
            user: String::from(&*self.user),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments_fingerprint,
            intent_key: intent_key.map(str::to_owned),
            ledger_state,
            class: choice.class,
            reason,
            attempts: budget.attempts().used(),
            repair_tokens: budget.repair_tokens(),
            latency_added_ms: budget.state().added_latency_ms,
            last_error: self.sanitize_text(&error),
            outcome,
            next_check: messages::next_check(reason, tool, intent_key, &self.id, &self.user),
            model_text: self.sanitize_text(&messages::fail(tool, reason, intent_key)),
        }
    }

    /// What the model reads of a tool's result. What an `external` tool
    /// returns was written outside the system: the model is told it is
    /// data, not instructions (spotlighting).
    fn output(&self, value: Value, effects: Effects, is_error: bool, replayed: bool) -> ToolOutput {
        // `to_string` on a `Value` goes through `fmt::Display`, which grows
        // the text a piece at a time; serializing writes it into one buffer.
        // (A `Value` always serializes: its map keys are strings.)
        let raw = match &value {
            Value::String(s) => s.clone(),
            other => serde_json::to_string(other).unwrap_or_default(),
        };
        let text = match &self.gate.inner().result_sanitizer {
            Some(s) => s.sanitize_owned(raw).text,
            None => raw,
        };
        let text = if effects.is_external() {
            gate_sanitize::spotlight(&text)
        } else {
            text
        };
        ToolOutput {
            // Named by `handle`, from the call it owns (see `name_the_call`).
            call_id: String::new(),
            tool: String::new(),
            value,
            text,
            is_error,
            replayed,
        }
    }

    fn sanitize_text(&self, text: &str) -> String {
        self.gate.inner().sanitizer.sanitize(text).text
    }

    /// A tool's error as the model may see it: its class, and its text with
    /// echoes of the call's own argument values neutralized.
    fn sanitize_error(&self, error: &ToolError, args: &Value) -> String {
        let mut echoes = Vec::new();
        collect_strings(args, &mut echoes);
        let echoes: Vec<&str> = echoes.iter().map(String::as_str).collect();
        self.gate
            .inner()
            .sanitizer
            .sanitize_with_echoes(&error.to_string(), &echoes)
            .text
    }
}

/// A returned step names the call it answers. Its id and tool are moved
/// from the call, which the task alone holds once the tool is done (a tool
/// that kept its context still shares it: then they are copied); building
/// the output with copies and dropping the call's own would cost every
/// successful call two allocations.
fn name_the_call(mut step: Step, call: Arc<ToolCall>) -> Step {
    if let Step::Return(out) = &mut step {
        match Arc::try_unwrap(call) {
            Ok(call) => {
                out.call_id = call.id;
                out.tool = call.name;
            }
            Err(call) => {
                out.call_id = call.id.clone();
                out.tool = call.name.clone();
            }
        }
    }
    step
}

/// Logs a tool's internal error for the operator (out of line: rare).
#[cold]
#[inline(never)]
fn internal_error(task: &str, call: &ToolCall, cause: &dyn std::fmt::Display) {
    tracing::error!(target: "gate::tool", task = %task, call_id = %call.id, tool = %call.name, cause = %cause, "the tool failed with an internal error");
}

/// The policy's decision after a budget refused the repair it chose: the same
/// situation with that budget closed (`budget`; a budget can refuse a
/// repair, never create one).
fn redecide(situation: &Situation, budget: BudgetVerdict) -> Decision {
    decide(&Situation { budget, ..*situation })
}

/// Whether the task's stored state must be written. The context size alone
/// is not worth a write: it is an estimate, refreshed by the next usage report.
/// (Every field is named, so a new one cannot be forgotten here.)
fn state_changed(old: &TaskState, new: &TaskState) -> bool {
    let TaskState {
        rejections,
        episode_rejections,
        failed_calls,
        corrections_in_step,
        budget,
        context_tokens: _,
        usage_reported: _,
        pending_tokens,
        logged_repair_tokens,
        logged_latency_ms,
        repair_turn_pending,
    } = new;
    old.rejections != *rejections
        || old.episode_rejections != *episode_rejections
        || old.failed_calls != *failed_calls
        || old.corrections_in_step != *corrections_in_step
        || old.budget != *budget
        || old.pending_tokens != *pending_tokens
        || old.logged_repair_tokens != *logged_repair_tokens
        || old.logged_latency_ms != *logged_latency_ms
        || old.repair_turn_pending != *repair_turn_pending
}

/// Rule 3's memory: the call that failed, once.
fn remember_failed_call(state: &mut TaskState, call_fp: &str) {
    if !state.failed_calls.iter().any(|fp| fp == call_fp) {
        state.failed_calls.push(call_fp.to_owned());
    }
}

/// The tool a decision record names: the toolbox's own string when the
/// call was admitted, shared; the name as the model sent it otherwise (an
/// unknown tool's, a call refused before admission).
fn recorded_tool(call: &ToolCall, admitted: Option<&Admitted<'_>>) -> Arc<str> {
    admitted.map_or_else(
        || Arc::from(call.name.as_str()),
        |a| a.tool.spec().shared_name().clone(),
    )
}

/// Counts `text` into the context a repair would replay, while the provider
/// has not reported real usage.
fn grow_context(state: &mut TaskState, text: &str) {
    if !state.usage_reported {
        state.context_tokens = state.context_tokens.saturating_add(estimate_tokens(text));
    }
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn collect_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use gate_budget::{Reservation, TaskBudgetState};
    use serde_json::json;

    use super::*;
    use crate::{DynamicTool, Effects, Toolbox};

    /// Every combination of what a success's settling reads of the task's
    /// state, small values and past-the-limit ones alike.
    fn states() -> Vec<(TaskState, bool)> {
        let mut states = Vec::new();
        for bits in 0u32..1 << 11 {
            let on = |bit: u32| bits & (1 << bit) != 0;
            let state = TaskState {
                rejections: u32::from(on(0)),
                episode_rejections: if on(1) { vec!["hash".to_owned()] } else { Vec::new() },
                failed_calls: if on(2) { vec!["fp".to_owned()] } else { Vec::new() },
                corrections_in_step: u32::from(on(3)),
                budget: TaskBudgetState {
                    // 1, or far past any task's limit (restoring clamps it).
                    repairs: if on(4) { 1_000 } else { 1 },
                    retries: if on(5) { 2 } else { 0 },
                    added_latency_ms: if on(6) { 7 } else { 0 },
                    repair_tokens: if on(7) { 10 } else { 0 },
                },
                context_tokens: 100,
                usage_reported: on(8),
                pending_tokens: Vec::<Reservation>::new(),
                logged_repair_tokens: if on(9) { 10 } else { 0 },
                // Bit 10: the latency logged is the latency added.
                logged_latency_ms: if on(6) == on(10) { 7 } else { 0 },
                // With the rejection count, as a rejection sets both.
                repair_turn_pending: on(0),
            };
            // A declared intent gives the record a key.
            states.push((state.clone(), false));
            if bits % 7 == 0 {
                states.push((state, true));
            }
        }
        states
    }

    /// The quiet path is taken exactly when the general one would write
    /// nothing of the task, and then settles the call as it does.
    #[tokio::test]
    async fn a_quiet_success_settles_as_the_general_path_does() {
        let spec = ToolSpec::new(
            "lookup",
            "Look a customer up.",
            json!({"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]}),
            Effects::new().read_only(),
        )
        .unwrap();
        let tool = DynamicTool::new(spec).with_handler(|_, _| async { Ok(json!({"id": "cus_1"})) });
        let gate = Gate::builder(Toolbox::new().with(tool).unwrap())
            .store("memory:")
            .build()
            .await
            .unwrap();
        let call = ToolCall::new("c1", "lookup", r#"{"email": "a@b.c"}"#);
        let (mut quiet_seen, mut loud_seen) = (0, 0);
        for (state, intent) in states() {
            let mut task = gate.task("u1");
            task.load().await.unwrap();
            if intent {
                task.intent("refund");
            }
            task.stored.state = state;
            let admitted = task.admit(&gate, &call).await.ok().expect("a valid call");
            let value = json!({"id": "cus_1"});
            let verdict = Verdict::Returned {
                value: value.clone(),
                is_error: false,
                replayed: false,
                lease: None,
            };
            let choice = task.choose(&call, Some(&admitted), &verdict);
            let at = Timestamp::from_millis(1_000);
            let general = task.settle(
                &call,
                Some(&admitted),
                &verdict,
                &choice,
                None,
                "",
                DecisionId::from_u128(1),
                at,
                3,
            );
            let quiet = task.success_is_quiet();
            assert_eq!(quiet, general.task.is_none(), "{:?}", task.stored.state);
            if !quiet {
                loud_seen += 1;
                continue;
            }
            quiet_seen += 1;
            let mut settled = task.settle_quiet_success(&call, &admitted, value, 3);
            settled.record.id = DecisionId::from_u128(1);
            settled.record.at = at;
            assert_eq!(settled.record, general.record, "{:?}", task.stored.state);
            assert_eq!(settled.step, general.step);
            assert_eq!(settled.context_tokens, general.context_tokens);
            assert!(settled.task.is_none() && settled.intent.is_none() && settled.retry_after.is_none());
        }
        assert!(quiet_seen > 0 && loud_seen > 0, "{quiet_seen} quiet, {loud_seen} not");
    }
}
