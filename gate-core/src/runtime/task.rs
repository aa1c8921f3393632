//! [`Task`]: one agent task, and the pipeline every call of it goes through.
//!
//! [`Task::handle`] runs the pipeline, written out in one function
//! (`Task::pipeline`; the module docs of `runtime` say what each stage does
//! and where new ones go). Each stage is a file of its own taking the task
//! as a read-only [`TaskView`] and returning a value; this file holds what
//! only the task can do: load and reload its state, take a settled decision
//! as its new state, and log it.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use toolgate_ledger::{ApprovalStatus, FailureReport, LedgerError, TaskRecord, new_owner_token};
use tracing::{Instrument, Span};

use super::admit::admit;
use super::approval;
use super::attempt::Attempt;
use super::choose::{Case, choose};
use super::claim::claim;
use super::flow;
use super::gate::Gate;
use super::log;
use super::persist::{self, Committed, TaskWrite};
use super::quiet::quietly;
use super::render::name_the_call;
use super::run::run;
use super::settle::{self, Settled, grow_context};
use super::step::{Feedback, Step, ToolCall};
use super::trace;
use super::usage;
use super::view::TaskView;
use crate::guard::Verdict;
use crate::{Dialect, ManifestError, ToolSpec};

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
    granted: Arc<BTreeSet<String>>,
    /// The task as last loaded or committed.
    stored: TaskRecord,
    loaded: bool,
    /// Usage reported while the task could not be loaded: the context size
    /// to apply once it is.
    unloaded_usage: Option<u64>,
    last_retries: Vec<Feedback>,
}

/// How a decision ended: the step, and for an internal retry the pause
/// before the resend.
struct Concluded {
    step: Step,
    resend_after: Option<Duration>,
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
            granted: crate::ctx::no_scopes(),
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
    /// # async fn demo(gate: toolgate_core::Gate) {
    /// let task = gate.task("user-42").grant(["crm:read", "billing:charge"]);
    /// # }
    /// ```
    pub fn grant<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Arc::make_mut(&mut self.granted).extend(scopes.into_iter().map(Into::into));
        self
    }

    /// The scopes granted to the task.
    pub fn granted(&self) -> impl Iterator<Item = &str> {
        self.granted.iter().map(String::as_str)
    }

    /// Whether every scope `spec` declares is granted to the task.
    pub fn may_call(&self, spec: &ToolSpec) -> bool {
        self.view().may_call(spec)
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
        self.view().intent_key_for(tool)
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

    /// The task as the pipeline's stages read it.
    fn view(&self) -> TaskView<'_> {
        TaskView {
            id: &self.id,
            user: &self.user,
            intent: self.intent.as_deref(),
            granted: &self.granted,
            record: &self.stored,
        }
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
            usage::note_context(&mut self.stored.state, Some(context));
        }
        self.loaded = true;
        Ok(())
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

    /// Records the provider's real token usage of the last model turn: the
    /// context a repair would replay is what the model just read and wrote,
    /// and if the turn was a repair, its estimate in the user's window (on
    /// every worker of the store) is settled to this real usage.
    ///
    /// A store that cannot take the settlement keeps the estimate; the
    /// failure is logged (`toolgate::store`), the agent goes on, and the context
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
        let limits = &gate.inner().budget;
        let written = self
            .write_state(|stored| {
                usage::note_context(&mut stored.state, tokens);
                usage::turn_write(limits, stored, tokens, latency)
            })
            .await;
        if let Err(e) = written {
            tracing::warn!(target: "gate::store", error = %e, task = %self.id, "turn not recorded: the estimate stands");
        }
    }

    /// Writes the task's state as `next` makes it from the stored one
    /// (`None`: nothing to write), again from the task as reloaded when
    /// another worker changed it. `Ok(false)` when the task kept changing
    /// for every round.
    async fn write_state(
        &mut self,
        mut next: impl FnMut(&mut TaskRecord) -> Option<usage::TurnWrite>,
    ) -> Result<bool, LedgerError> {
        let gate = self.gate.clone();
        let inner = gate.inner();
        let limit = inner.budget.token_limit();
        for _ in 0..MAX_CONFLICT_ROUNDS {
            let Some(write) = next(&mut self.stored) else {
                return Ok(true);
            };
            let (store, patience) = (&*inner.store, inner.store_patience);
            match persist::commit_usage(store, &limit, &write.settles, write.actual, &write.task, patience).await {
                Committed::Done {
                    writes: TaskWrite(task),
                    revision,
                } => {
                    self.stored = task;
                    self.stored.revision = revision.unwrap_or(self.stored.revision);
                    return Ok(true);
                }
                Committed::Conflict => self.reload().await,
                // A state write finishes no intent, so nothing refuses one.
                Committed::IntentRefused(e) | Committed::Failed(e) => return Err(e),
            }
        }
        Ok(false)
    }

    /// What the information-flow guard ([`crate::guard`]) says of `call`
    /// now, without running it or writing anything: `None` when the guard
    /// is not asked (the call would be refused before it, by resolution,
    /// scopes or validation; its tool only reads inside; or the task has
    /// read no labelled result yet). `gate replay` shows it per call; a
    /// console can show it before a person is asked.
    pub async fn guard_verdict(&mut self, call: &ToolCall) -> Result<Option<Verdict>, LedgerError> {
        self.load().await?;
        let inner = self.gate.inner();
        let Ok(admitted) = admit(inner, self.view(), call) else {
            return Ok(None);
        };
        if !flow::concerns(self.view(), &admitted) {
            return Ok(None);
        }
        Ok(Some(flow::verdict(&inner.flow, self.view(), &admitted)))
    }

    /// Records what the user asked, in their own words: for the
    /// information-flow guard ([`crate::guard`]) the values in it (an
    /// address, an account, a URL) are trusted input, so a call that uses
    /// them is not taken for one steered by a third party's text, even when
    /// an untrusted result holds them too. [`agent::run`](crate::agent::run)
    /// and [`agent::resume`](crate::agent::resume) record the user's and the
    /// operator's messages themselves; a custom loop calls this for each.
    ///
    /// What it adds is committed with the task's state now, so every worker
    /// of the store sees it; a message that adds nothing new writes nothing.
    pub async fn user_message(&mut self, text: &str) -> Result<(), LedgerError> {
        self.load().await?;
        let written = self
            .write_state(|stored| {
                let mut task = stored.clone();
                if !flow::note_user(&mut task.state.flow, text) {
                    return None;
                }
                task.writer = new_owner_token();
                Some(usage::TurnWrite {
                    task,
                    settles: Vec::new(),
                    actual: 0,
                })
            })
            .await?;
        if written {
            return Ok(());
        }
        // Another worker keeps changing the task: the message is kept in
        // memory and written with this worker's next decision.
        flow::note_user(&mut self.stored.state.flow, text);
        tracing::warn!(target: "gate::store", task = %self.id, "the user's message is recorded with the next decision: the task kept changing on another worker");
        Ok(())
    }

    /// A step for every approval request of the task decided since it last
    /// asked: an approved call runs now (in this worker, once: the ledger
    /// holds it under the request's intent key) and its step answers the
    /// original call id; a denied or expired one is its definitive error
    /// ("a person declined: REASON", "no decision before EXPIRY"). Requests
    /// still pending are left for later. An agent loop calls it when it
    /// resumes a task that waited.
    pub async fn take_decided(&mut self) -> Result<Vec<Step>, LedgerError> {
        self.load().await?;
        let gate = self.gate.clone();
        let inner = gate.inner();
        let undelivered: Vec<String> = (self.stored.state.approvals.iter())
            .filter(|made| !made.delivered)
            .map(|made| made.id.clone())
            .collect();
        let mut steps = Vec::new();
        for id in undelivered {
            let stored = persist::retrying(inner.store_patience, "load an approval request", || {
                inner.store.load_approval(&id)
            })
            .await?;
            let Some(request) = stored else { continue };
            if request.status_at(inner.store.now()) == ApprovalStatus::Pending {
                continue;
            }
            // The call exactly as it was asked for: the approval stage finds
            // its request by it.
            let call = ToolCall::new(request.call_id, request.tool, request.arguments);
            steps.push(self.handle(call).await);
        }
        Ok(steps)
    }

    /// Handles one tool call: the returned step says what the model sees
    /// next. See the `runtime` module docs for the pipeline.
    pub async fn handle(&mut self, call: ToolCall) -> Step {
        self.last_retries.clear();
        // Shared with the tool's context, not copied into it.
        let call = Arc::new(call);
        let span = trace::call_span(&call);
        let step = self.pipeline(&call, &span).instrument(span.clone()).await;
        name_the_call(step, call)
    }

    /// The pipeline: every stage in order, each a file of its own.
    /// `span` is the call's, for the decision the model sees.
    async fn pipeline(&mut self, call: &Arc<ToolCall>, span: &Span) -> Step {
        let gate = self.gate.clone();
        let inner = gate.inner();
        let mut admitted = match self.running(call).await.and_then(|()| admit(inner, self.view(), call)) {
            Ok(admitted) => admitted,
            Err(refused) => {
                let case = Case {
                    call,
                    admitted: None,
                    attempt: refused,
                    attempt_no: 1,
                };
                return self.conclude(case, span).await.step;
            }
        };
        // The guard: is this call steered by text a third party wrote?
        let guarded = if flow::concerns(self.view(), &admitted) {
            let screened = flow::screen(&inner.flow, self.view(), &admitted);
            trace::record_guard(span, &screened);
            match screened {
                Ok(reason) => reason,
                Err(refused) => {
                    let case = Case {
                        call,
                        admitted: Some(&admitted),
                        attempt: refused,
                        attempt_no: 1,
                    };
                    return self.conclude(case, span).await.step;
                }
            }
        } else {
            None
        };
        // Approval: has a person agreed, where one must? Boxed, as every
        // wait a call rarely makes.
        if guarded.is_some() || approval::concerns(inner, self.view(), &admitted) {
            match Box::pin(approval::approval(inner, self.view(), &call.id, &admitted, guarded)).await {
                Ok(None) => {}
                Ok(Some(request)) => {
                    trace::record_approval(span, &request.id);
                    admitted.approve(request);
                }
                Err(ended) => {
                    if let Some(id) = ended.approval_id() {
                        trace::record_approval(span, id);
                    }
                    let case = Case {
                        call,
                        admitted: Some(&admitted),
                        attempt: ended,
                        attempt_no: 1,
                    };
                    return self.conclude(case, span).await.step;
                }
            }
        }
        // A first attempt earns the resends the retry budget allows.
        if let Some(retries) = &inner.retry_budget {
            retries.deposit();
        }
        let mut attempt_no = 0;
        loop {
            attempt_no += 1;
            let attempt = match claim(inner, self.view(), &admitted).await {
                Ok(lease) => run(inner, self.view(), call, &admitted, lease).await,
                Err(answered) => answered,
            };
            let concluded = self
                .conclude(
                    Case {
                        call,
                        admitted: Some(&admitted),
                        attempt,
                        attempt_no,
                    },
                    span,
                )
                .await;
            let Some(pause) = concluded.resend_after else {
                return concluded.step;
            };
            // The resend is recorded: it is paid for now, once.
            if let Some(retries) = &inner.retry_budget {
                retries.spend();
            }
            // Boxed: a timer is a large future, and an internal retry rare.
            Box::pin(tokio::time::sleep(pause)).await;
        }
    }

    /// The terminal check: `Err` when the task has failed (rule 7) or its
    /// state cannot be read. The state is loaded on the task's first call,
    /// and the call's text counts into the context a repair would replay.
    async fn running(&mut self, call: &ToolCall) -> Result<(), Attempt> {
        // The load's future is boxed so that it is not part of every call's.
        if !self.loaded
            && let Err(e) = Box::pin(self.load()).await
        {
            return Err(Attempt::StoreDown(e.to_string()));
        }
        grow_context(&mut self.stored.state, &call.arguments);
        if self.stored.terminal {
            return Err(Attempt::TaskFailed);
        }
        Ok(())
    }

    /// Decides about `case` and commits the decision (choose, settle), then
    /// takes it as the task's state and logs it: the one place a step is
    /// made, for every exit of the pipeline.
    async fn conclude(&mut self, case: Case<'_, '_>, span: &Span) -> Concluded {
        let gate = self.gate.clone();
        let inner = gate.inner();
        // The store just failed for the whole patience: waiting as long
        // again to record that is no help to anyone.
        if let Some(error) = case.attempt.store_down() {
            let error = error.to_owned();
            let settled = Box::pin(settle::unrecorded(inner, self.view(), case, &error)).await;
            return self.apply(settled, None, span).await;
        }
        // The fast path: a successful read-only call that changes nothing in
        // the task's state queues its decision record for the background
        // writer and returns without waiting for the store.
        let case = match quietly(inner, self.view(), case) {
            Ok(settled) => {
                self.stored.state.context_tokens = settled.context_tokens;
                trace::record_decision(span, &settled.record);
                log::record(inner, &settled.record).await;
                inner.successes.push(settled.record).await;
                return Concluded {
                    step: settled.step,
                    resend_after: None,
                };
            }
            Err(case) => case,
        };
        // Boxed: the commit's future is several kilobytes, and inline it
        // would make every call's future (the fast path's too) that large.
        Box::pin(self.commit(case, span)).await
    }

    /// Chooses and commits until the decision lands: again on the task as
    /// stored when another worker changed it, again without the intent's
    /// finish when the ledger refused it; unrecorded when the store fails.
    async fn commit(&mut self, mut case: Case<'_, '_>, span: &Span) -> Concluded {
        let gate = self.gate.clone();
        let inner = gate.inner();
        // The log keeps the process's order: the queued successes go into
        // this decision's transaction, ahead of it (back to the queue if it
        // does not land).
        let earlier = inner.successes.take_queued().await;
        let mut store_error = String::new();
        for _ in 0..MAX_CONFLICT_ROUNDS {
            let choice = choose(inner, self.view(), &case);
            match settle::commit(inner, self.view(), &case, &choice, earlier.records()).await {
                Committed::Done { writes, revision } => {
                    earlier.stored();
                    return self.apply(writes, revision, span).await;
                }
                Committed::Conflict => {
                    self.reload().await;
                    store_error = "the task kept changing on another worker".to_owned();
                }
                Committed::IntentRefused(e) => {
                    tracing::error!(target: "gate::ledger", error = %e, task = %self.id, call_id = %case.call.id, "ledger transition refused");
                    case.attempt = case.attempt.without_intent(&e);
                }
                Committed::Failed(e) => {
                    store_error = e.to_string();
                    break;
                }
            }
        }
        let settled = settle::unrecorded(inner, self.view(), case, &store_error).await;
        self.apply(settled, None, span).await
    }

    /// Takes a settled decision as the task's state (`revision`: the stored
    /// task's, when the decision wrote it) and logs it; the call's `span`
    /// shows it unless a resend follows.
    async fn apply(&mut self, settled: Settled, revision: Option<i64>, span: &Span) -> Concluded {
        match settled.task {
            Some(mut task) => {
                task.revision = revision.unwrap_or(self.stored.revision);
                self.stored = *task;
            }
            None => self.stored.state.context_tokens = settled.context_tokens,
        }
        if settled.resend_after.is_none() {
            trace::record_decision(span, &settled.record);
        }
        log::record(self.gate.inner(), &settled.record).await;
        if settled.resend_after.is_some()
            && let Step::Retry(feedback) = &settled.step
        {
            self.last_retries.push(feedback.clone());
        }
        Concluded {
            step: settled.step,
            resend_after: settled.resend_after,
        }
    }
}
