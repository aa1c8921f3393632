//! Building a [`Gate`]: the settings, their defaults, and what can go wrong.
//!
//! Everything that can fail does so here, once, at start-up: a tool whose
//! schema cannot be compiled, a store that cannot be opened, a sanitizer that
//! cannot be built. A running gate never fails for a reason it could have
//! known when it was built. [`GateError`] says which of these happened, as
//! predicates (hyper style), with the underlying error behind `source()`.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::StdRng;
use toolgate_ledger::{LedgerError, Storage};
use toolgate_sanitize::Sanitizer;
use toolgate_validate::Validator;

use super::approval::{ApprovalPolicy, ApprovalSettings, DEFAULT_APPROVAL_EXPIRY, MAX_APPROVAL_EXPIRY};
use super::budget::{Budget, RetryBudget};
use super::flow::FlowSettings;
use super::gate::{Gate, Inner};
use super::log::DecisionSink;
#[cfg(feature = "otel")]
use super::trace::Metrics;
use super::writer::SuccessWriter;
use crate::Toolbox;
use crate::guard::Guard;

/// The default store: an SQLite file in the working directory.
pub const DEFAULT_STORE: &str = "sqlite:gate.db";
/// Cap on results shown to the model (tool results may be long; error texts
/// use the sanitizer's own, smaller cap).
pub const DEFAULT_RESULT_CAP: usize = 64 * 1024;
/// How long a store write the runtime needs is retried when the store fails:
/// 10 s.
pub const DEFAULT_STORE_PATIENCE: Duration = Duration::from_secs(10);
/// The longest store patience accepted: 10 minutes.
pub const MAX_STORE_PATIENCE: Duration = Duration::from_secs(600);
/// How long a tool call may run when its tool declares no `timeout`: 60 s.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest tool timeout accepted, from the builder or a tool: 24 hours.
pub const MAX_TOOL_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

toolgate_error::opaque_error! {
    /// Why a gate could not be built.
    ///
    /// Branch on the predicates; the message names the tool, the store or the
    /// setting, and `source()` holds the underlying error.
    pub struct GateError(Box<GateErrorImpl>);
    enum Kind {
        /// A tool's input schema cannot be compiled into a validator.
        InvalidSchema => is_invalid_schema,
        /// The store URL is not one gate understands (`memory:`, `sqlite:PATH`,
        /// `postgres://…`), or names a store whose cargo feature (`sqlite`,
        /// `postgres`) this build leaves out.
        InvalidStoreUrl => is_invalid_store_url,
        /// The store could not be reached (a database that refuses connections,
        /// a file that cannot be opened); trying again later may work.
        StoreUnavailable => is_store_unavailable,
        /// The store was reached but cannot be used (a corrupt or newer schema,
        /// a bad schema name).
        Store => is_store,
        /// A builder setting is out of its documented range, or the default
        /// sanitizer could not be built.
        InvalidSetting => is_invalid_setting,
    }
}

impl GateError {
    fn store(url: &str, e: LedgerError) -> Self {
        let kind = if e.is_invalid_url() {
            Kind::InvalidStoreUrl
        } else if e.is_unavailable() {
            Kind::StoreUnavailable
        } else {
            Kind::Store
        };
        GateError::new(kind, format!("cannot open the store `{url}`: {e}"), Some(Box::new(e)))
    }
}

/// Builds a [`Gate`].
pub struct GateBuilder {
    toolbox: Toolbox,
    store: String,
    storage: Option<Arc<dyn Storage>>,
    budget: Budget,
    retry_budget: Option<Arc<RetryBudget>>,
    sanitizer: Option<Sanitizer>,
    result_sanitizer: Option<Option<Sanitizer>>,
    rejection_cap: u32,
    corrections_per_step: u32,
    store_patience: Duration,
    tool_timeout: Duration,
    sinks: Vec<Arc<dyn DecisionSink>>,
    seed: Option<u64>,
    approval_policy: Option<Arc<dyn ApprovalPolicy>>,
    approval_expiry: Duration,
    guard: Guard,
    guard_refuses: bool,
    #[cfg(feature = "otel")]
    meter: Option<opentelemetry::metrics::Meter>,
}

impl Gate {
    /// Starts building a gate over `toolbox`.
    pub fn builder(toolbox: Toolbox) -> GateBuilder {
        GateBuilder {
            toolbox,
            store: DEFAULT_STORE.to_owned(),
            storage: None,
            budget: Budget::default(),
            retry_budget: None,
            sanitizer: None,
            result_sanitizer: None,
            rejection_cap: 2,
            corrections_per_step: 1,
            store_patience: DEFAULT_STORE_PATIENCE,
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
            sinks: Vec::new(),
            seed: None,
            approval_policy: None,
            approval_expiry: DEFAULT_APPROVAL_EXPIRY,
            guard: Guard::trifecta(),
            guard_refuses: false,
            #[cfg(feature = "otel")]
            meter: None,
        }
    }
}

impl GateBuilder {
    /// The store by URL: `sqlite:FILE` (default `sqlite:gate.db`),
    /// `postgres://…`, or `memory:`. Every gate on the same store shares its
    /// tasks and its users' token windows.
    ///
    /// SQLite needs the `sqlite` feature (on by default) and PostgreSQL the
    /// `postgres` feature. The default stays SQLite in every build, so a
    /// build without `sqlite` must name its store: `build` refuses the
    /// default rather than quietly keeping intents in memory.
    pub fn store(mut self, url: impl Into<String>) -> Self {
        self.store = url.into();
        self
    }

    /// An already opened store (shared between gates, opened with its own
    /// [`LedgerConfig`](toolgate_ledger::LedgerConfig), or a test double).
    pub fn storage(mut self, storage: Arc<dyn Storage>) -> Self {
        self.storage = Some(storage);
        self
    }

    /// The budgets.
    pub fn budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }

    /// A limit on gate's own resends (the retries it makes without the model:
    /// a transient failure, or an unknown outcome of a resend-safe tool) as a
    /// share of first attempts over a rolling window, so a dependency that
    /// fails for every call at once gets at most that share more load, not a
    /// resend per call. Each handled call deposits, each resend withdraws; a
    /// resend the budget refuses is a Fail with reason `retry_budget`. None by
    /// default: the per-task budgets still bound every task.
    ///
    /// The budget lives in this process ([`RetryBudget`]'s ranges and
    /// semantics are tower's `TpsBudget`). Across workers the share still
    /// holds, since each worker's resends are a share of its own first
    /// attempts; only the reserve (`min_per_sec`) is granted once per
    /// worker. Pass the same `Arc` to several gates to share one budget.
    pub fn retry_budget(mut self, budget: impl Into<Arc<RetryBudget>>) -> Self {
        self.retry_budget = Some(budget.into());
        self
    }

    /// The sanitizer for every error, rejection, correction and failure text.
    pub fn sanitizer(mut self, sanitizer: Sanitizer) -> Self {
        self.sanitizer = Some(sanitizer);
        self
    }

    /// The sanitizer for tool results (default: all built-in rules but
    /// `quoted-text`, with a 64 KiB cap); `None` hands results to the model
    /// unsanitized. Either way, a result of an `external` tool is wrapped as
    /// untrusted data ([`toolgate_sanitize::spotlight`]).
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

    /// How long a store write the runtime needs (a claim, a recorded
    /// outcome, a decision) is retried while the store fails, for example
    /// while connections are being dropped: 0 ..= 10 minutes, default
    /// [`DEFAULT_STORE_PATIENCE`]. Past it the call fails safe: a claim that
    /// was not recorded never runs the tool, and an outcome that was not
    /// recorded is never reported as a success.
    pub fn store_patience(mut self, patience: Duration) -> Self {
        self.store_patience = patience;
        self
    }

    /// How long a call may run when its tool declares no `timeout` (1 ms ..=
    /// 24 hours, default [`DEFAULT_TOOL_TIMEOUT`]). Past it the call is
    /// cancelled (an async tool's future is dropped; a blocking tool's late
    /// result is discarded) and classified as [`ToolError::Timeout`](crate::ToolError::Timeout):
    /// the outcome is unknown. The ledger lease of a dispatched call is its
    /// timeout plus the store patience (to record the outcome) plus 5 s, so
    /// no sweeper declares a call that may still run an unknown outcome.
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.tool_timeout = timeout;
        self
    }

    /// Another place for decision records (the store always gets them).
    pub fn decision_sink(mut self, sink: Arc<dyn DecisionSink>) -> Self {
        self.sinks.push(sink);
        self
    }

    /// Seeds the backoff jitter, for reproducible runs.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// The meter the gate's metrics are made on (`otel` feature): the
    /// counters `gate.decisions` (by `gate.action` and `gate.failure.class`)
    /// and `gate.repair.tokens` (by `gate.action`), added to on every
    /// decision. Without one, [`build`](Self::build) takes the `gate` meter
    /// of the global meter provider installed at that moment: a provider
    /// installed after the gate is built does not receive its metrics.
    #[cfg(feature = "otel")]
    pub fn meter(mut self, meter: opentelemetry::metrics::Meter) -> Self {
        self.meter = Some(meter);
        self
    }

    /// Asks `policy` about every valid call whether a person must agree
    /// before it runs (beside the tools declared `approval`, whose calls
    /// always wait). A call that needs one is stored as a request and does
    /// not run until a person approves it (`gate.approvals()`, or `gate
    /// approvals approve ID`); then it runs once.
    ///
    /// ```no_run
    /// # async fn demo(tools: toolgate_core::Toolbox) {
    /// use toolgate_core::Gate;
    /// use toolgate_core::runtime::ApprovalQuestion;
    /// let gate = Gate::builder(tools)
    ///     .approvals(|q: &ApprovalQuestion<'_>| {
    ///         let cents = q.arguments["amount_cents"].as_u64().unwrap_or(0);
    ///         (q.spec.name() == "charge_card" && cents > 100_000)
    ///             .then(|| format!("a charge of {cents} cents is above 1000.00"))
    ///     })
    ///     .build()
    ///     .await;
    /// # }
    /// ```
    pub fn approvals(mut self, policy: impl ApprovalPolicy) -> Self {
        self.approval_policy = Some(Arc::new(policy));
        self
    }

    /// How long an approval request waits for a decision before it expires
    /// (and the call with it): default 24 hours ([`DEFAULT_APPROVAL_EXPIRY`]),
    /// more than zero and at most 30 days.
    pub fn approval_expiry(mut self, expiry: Duration) -> Self {
        self.approval_expiry = expiry;
        self
    }

    /// The information-flow guard's policy (default [`Guard::trifecta`]):
    /// which calls need a person once a task has read results of tools
    /// declared `private` or `untrusted` (see [`crate::guard`]). It does
    /// nothing in a task that has read no labelled result.
    pub fn guard(mut self, policy: Guard) -> Self {
        self.guard = policy;
        self
    }

    /// A call the guard stops is refused (a definitive error naming the
    /// argument and where its value came from) instead of waiting for a
    /// person: for agents that run unattended, with nobody to ask.
    pub fn guard_refuses(mut self) -> Self {
        self.guard_refuses = true;
        self
    }

    /// Compiles every tool's validator and opens the store.
    pub async fn build(self) -> Result<Gate, GateError> {
        if self.store_patience > MAX_STORE_PATIENCE {
            return Err(GateError::new(
                Kind::InvalidSetting,
                format!(
                    "store patience {:?} is out of range: at most 10 minutes",
                    self.store_patience
                ),
                None,
            ));
        }
        if self.approval_expiry.is_zero() || self.approval_expiry > MAX_APPROVAL_EXPIRY {
            return Err(GateError::new(
                Kind::InvalidSetting,
                format!(
                    "approval expiry {:?} is out of range: more than zero and at most 30 days",
                    self.approval_expiry
                ),
                None,
            ));
        }
        let timeouts = std::iter::once(("the default tool timeout".to_owned(), self.tool_timeout)).chain(
            self.toolbox
                .specs()
                .filter_map(|s| s.timeout().map(|t| (format!("tool `{}`'s timeout", s.name()), t))),
        );
        for (what, timeout) in timeouts {
            if timeout.is_zero() || timeout > MAX_TOOL_TIMEOUT {
                return Err(GateError::new(
                    Kind::InvalidSetting,
                    format!("{what} {timeout:?} is out of range: more than zero and at most 24 hours"),
                    None,
                ));
            }
        }
        let mut validators = Vec::new();
        for spec in self.toolbox.specs() {
            let validator = Validator::new(spec.input_schema()).map_err(|e| {
                GateError::new(
                    Kind::InvalidSchema,
                    format!("tool `{}`: its input schema cannot be validated: {e}", spec.name()),
                    Some(Box::new(e)),
                )
            })?;
            validators.push(Arc::new(validator));
        }
        let storage = match self.storage {
            Some(storage) => storage,
            None => toolgate_ledger::open(&self.store)
                .await
                .map_err(|e| GateError::store(&self.store, e))?,
        };
        let result_sanitizer = match self.result_sanitizer {
            Some(choice) => choice,
            None => Some(default_result_sanitizer()?),
        };
        let successes = SuccessWriter::start(storage.clone(), self.store_patience);
        #[cfg(feature = "otel")]
        let metrics = Metrics::new(&self.meter.unwrap_or_else(gate_meter));
        Ok(Gate::from_inner(Inner {
            toolbox: self.toolbox,
            validators,
            store: storage,
            sanitizer: self.sanitizer.unwrap_or_else(default_sanitizer),
            result_sanitizer,
            budget: self.budget,
            retry_budget: self.retry_budget,
            rejection_cap: self.rejection_cap,
            corrections_per_step: self.corrections_per_step,
            store_patience: self.store_patience,
            tool_timeout: self.tool_timeout,
            sinks: self.sinks,
            rng: Mutex::new(match self.seed {
                Some(seed) => StdRng::seed_from_u64(seed),
                None => StdRng::from_os_rng(),
            }),
            approvals: ApprovalSettings {
                policy: self.approval_policy,
                expiry: self.approval_expiry,
            },
            flow: FlowSettings {
                guard: self.guard,
                refuses: self.guard_refuses,
            },
            successes,
            #[cfg(feature = "otel")]
            metrics,
        }))
    }
}

/// The global meter provider's meter for gate, named after the package that
/// makes the metrics.
#[cfg(feature = "otel")]
fn gate_meter() -> opentelemetry::metrics::Meter {
    let scope = opentelemetry::InstrumentationScope::builder("gate")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build();
    opentelemetry::global::meter_with_scope(scope)
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
            // A result is a document: its quoted strings (every JSON
            // string) are the content the model asked for, not text
            // reflected into an error.
            Sanitizer::builder()
                .max_len(DEFAULT_RESULT_CAP)
                .disable("quoted-text")
                .build()
                .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|e| GateError::new(Kind::InvalidSetting, format!("result sanitizer: {e}"), None))
}
