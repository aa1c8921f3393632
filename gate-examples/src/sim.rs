//! The policy simulation: gate's decisions against two naive retry policies,
//! on the same seeded tasks, under the same token accounting.
//!
//! The README claims that deciding from declared side effects saves repair
//! tokens and never runs a charge twice. A claim like that needs numbers a
//! reader can reproduce and argue with, and real model runs are neither cheap
//! nor reproducible, so this module simulates the model and the backends
//! while running gate itself for real: policy A is `gate::Gate` with its
//! validator, ledger, budgets and rejection texts; only the model's reaction
//! to a text is a coin flip, with stated probabilities.
//!
//! Every assumption is a field of [`Params`] and is printed with the table
//! ([`assumptions`]). Everything is deterministic given [`Params::seed`]:
//! faults and model reactions come from SplitMix64 streams derived from the
//! seed, the mix and the task number, and every policy replays the same fault
//! schedule for a given task.
//!
//! The example `policy_sim` prints the table; `tests/policy_sim.rs` checks
//! the invariants (gate never charges twice, the naive policy does when
//! writes time out, the same seed gives the same table).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use gate::budget::estimate_tokens;
use gate::runtime::FailReason;
use gate::{Budget, Dialect, Gate, Step, ToolCall, ToolError, tools};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------
// Randomness
// ---------------------------------------------------------------------------

/// SplitMix64: a tiny, well-mixed, seedable generator, so that the
/// simulation needs no `rand` dependency and gives the same numbers on every
/// platform.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// A generator for one stream (`salt`) of one task of one mix: streams
    /// are independent of each other and of the order tasks are run in.
    pub fn stream(seed: u64, mix: Mix, task: u64, salt: u64) -> Self {
        let mut g = SplitMix64::new(seed ^ 0x6a09_e667_f3bc_c908);
        let a = g.next_u64() ^ (mix as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut g = SplitMix64::new(a);
        let b = g.next_u64() ^ task.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        let mut g = SplitMix64::new(b);
        SplitMix64::new(g.next_u64() ^ salt.wrapping_mul(0x94d0_49bb_1331_11eb))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform number in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p` (clamped to `[0, 1]`).
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p.clamp(0.0, 1.0)
    }
}

const STREAM_FAULTS: u64 = 1;
const STREAM_MODEL: u64 = 2;

// ---------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------

/// A failure mix: which faults are injected into the steps of a task, and how often.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mix {
    /// Every step may send a wrong argument type.
    InvalidArgs,
    /// Every step may call a tool name that does not exist.
    UnknownTool,
    /// Lookups may answer 403 without a body or an empty result.
    AmbiguousRead,
    /// The charge may time out after the backend charged.
    WriteTimeout,
    /// All four at lower rates.
    Mixed,
}

/// Per-step fault probabilities of a [`Mix`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Rates {
    /// Any step: the first call sends a wrong argument type.
    pub invalid_args: f64,
    /// Any step: the first call names a tool that does not exist.
    pub unknown_tool: f64,
    /// Lookup steps: the backend answers 403 without a body (half) or an empty result (half).
    pub ambiguous_read: f64,
    /// The charge step: the backend charges, then the call times out.
    pub write_timeout: f64,
}

impl Mix {
    /// Every mix, in table order.
    pub const ALL: [Mix; 5] = [
        Mix::InvalidArgs,
        Mix::UnknownTool,
        Mix::AmbiguousRead,
        Mix::WriteTimeout,
        Mix::Mixed,
    ];

    /// The name used on the command line and in the table.
    pub const fn name(self) -> &'static str {
        match self {
            Mix::InvalidArgs => "invalid-args",
            Mix::UnknownTool => "unknown-tool",
            Mix::AmbiguousRead => "ambiguous-read",
            Mix::WriteTimeout => "write-timeout",
            Mix::Mixed => "mixed",
        }
    }

    /// The mix called `name`, if any.
    pub fn parse(name: &str) -> Option<Mix> {
        Mix::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The per-step fault probabilities.
    pub const fn rates(self) -> Rates {
        let none = Rates {
            invalid_args: 0.0,
            unknown_tool: 0.0,
            ambiguous_read: 0.0,
            write_timeout: 0.0,
        };
        match self {
            Mix::InvalidArgs => Rates {
                invalid_args: 0.2,
                ..none
            },
            Mix::UnknownTool => Rates {
                unknown_tool: 0.2,
                ..none
            },
            Mix::AmbiguousRead => Rates {
                ambiguous_read: 0.2,
                ..none
            },
            Mix::WriteTimeout => Rates {
                write_timeout: 0.2,
                ..none
            },
            Mix::Mixed => Rates {
                invalid_args: 0.08,
                unknown_tool: 0.04,
                ambiguous_read: 0.08,
                write_timeout: 0.08,
            },
        }
    }
}

/// How specific pydantic-ai's retry prompts are taken to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PydanticMessages {
    /// pydantic-ai's real texts name the field (`loc`), the expected type
    /// (`msg`) and the input, and list the available tool names: the model
    /// fixes with `p_fix_specific`.
    Specific,
    /// Treat them as raw errors: the model fixes with `p_fix_raw`.
    Raw,
}

/// Everything the simulation assumes. Printed with the table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Params {
    /// Tasks per mix and policy.
    pub tasks: u64,
    /// The seed of every random stream.
    pub seed: u64,
    /// Steps per task: `steps - 1` customer lookups, then one charge.
    pub steps: u32,
    /// Tokens of the system prompt, before the tool definitions (which are
    /// counted from the real OpenAI manifest of the simulated tools).
    pub system_prompt_tokens: u64,
    /// The model fixes a call after a rejection that names the field path
    /// and the expected type (or lists the valid tool names).
    pub p_fix_specific: f64,
    /// The model fixes a call after a raw error message.
    pub p_fix_raw: f64,
    /// The model's next call succeeds after a correction that names the
    /// discovery tool or the widen hint.
    pub p_correct: f64,
    /// The model's next call succeeds after a raw ambiguous error (a blind resend).
    pub p_blind: f64,
    /// gate: repairs (rejections and retries) per task; gate's default is 2, at most 5.
    pub gate_max_repairs: u32,
    /// gate: rejections per task; gate's default is 2.
    pub gate_rejection_cap: u32,
    /// naive-retry-3: retries per failed call.
    pub naive_retries: u32,
    /// pydantic-ai-style: retries per tool (pydantic-ai's default `retries=1`).
    pub pydantic_retries: u32,
    /// pydantic-ai-style: model requests per run (pydantic-ai's default `request_limit=50`).
    pub pydantic_request_limit: u32,
    /// How specific pydantic-ai's retry prompts are taken to be.
    pub pydantic_messages: PydanticMessages,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            tasks: 1000,
            seed: 7,
            steps: 5,
            system_prompt_tokens: 1000,
            p_fix_specific: 0.9,
            p_fix_raw: 0.5,
            p_correct: 0.8,
            p_blind: 0.2,
            gate_max_repairs: 2,
            gate_rejection_cap: 2,
            naive_retries: 3,
            pydantic_retries: 1,
            pydantic_request_limit: 50,
            pydantic_messages: PydanticMessages::Specific,
        }
    }
}

/// Why the parameters cannot be simulated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamError(pub String);

impl std::fmt::Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParamError {}

impl Params {
    /// Checks every field's range.
    pub fn check(&self) -> Result<(), ParamError> {
        for (name, p) in [
            ("p-fix-specific", self.p_fix_specific),
            ("p-fix-raw", self.p_fix_raw),
            ("p-correct", self.p_correct),
            ("p-blind", self.p_blind),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(ParamError(format!("--{name} must be a probability in [0, 1], got {p}")));
            }
        }
        if self.steps < 1 || self.steps > 50 {
            return Err(ParamError(format!("--steps must be 1..=50, got {}", self.steps)));
        }
        if self.tasks > 10_000_000 {
            return Err(ParamError(format!(
                "--tasks must be at most 10,000,000, got {}",
                self.tasks
            )));
        }
        if self.system_prompt_tokens > 1_000_000 {
            return Err(ParamError("--system-tokens must be at most 1,000,000".to_owned()));
        }
        if self.naive_retries > 20 || self.pydantic_retries > 20 || self.pydantic_request_limit > 1000 {
            return Err(ParamError(
                "retry limits must be at most 20 (request limit 1000)".to_owned(),
            ));
        }
        Budget::default()
            .with_max_repairs(self.gate_max_repairs)
            .map_err(|e| ParamError(format!("--gate-max-repairs: {e}")))?;
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// The simulated world: backends, faults and the model's luck
// ---------------------------------------------------------------------------

/// The fault injected into one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    None,
    InvalidArgs,
    UnknownTool,
    Forbidden,
    Empty,
    Timeout,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StepKind {
    Lookup,
    Charge,
}

/// What the model's current call rests on, which decides whether an
/// ambiguous read is resolved by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Basis {
    /// The step's first well-formed call.
    First,
    /// A resend after a raw ambiguous error.
    Blind,
    /// A call that follows gate's correction (discovery tool or widen hint).
    Corrected,
}

/// One task's world: the step being played, the model's luck, the charges run.
#[derive(Debug)]
struct World {
    rng: SplitMix64,
    fault: Fault,
    resolved: bool,
    timeout_pending: bool,
    basis: Basis,
    charges: u32,
    p_correct: f64,
    p_blind: f64,
}

impl World {
    fn new() -> Self {
        World {
            rng: SplitMix64::new(0),
            fault: Fault::None,
            resolved: true,
            timeout_pending: false,
            basis: Basis::First,
            charges: 0,
            p_correct: 0.0,
            p_blind: 0.0,
        }
    }

    fn reset(&mut self, rng: SplitMix64, params: &Params) {
        *self = World {
            rng,
            p_correct: params.p_correct,
            p_blind: params.p_blind,
            ..World::new()
        };
    }

    fn begin_step(&mut self, fault: Fault) {
        self.fault = fault;
        self.resolved = !matches!(fault, Fault::Forbidden | Fault::Empty);
        self.timeout_pending = fault == Fault::Timeout;
        self.basis = Basis::First;
    }

    /// A well-formed lookup (or widened search) reaches the backend.
    fn read(&mut self) -> Result<(), ToolError> {
        if !self.resolved {
            let p = match self.basis {
                Basis::First => 0.0,
                Basis::Blind => self.p_blind,
                Basis::Corrected => self.p_correct,
            };
            self.resolved = self.rng.chance(p);
        }
        match (self.resolved, self.fault) {
            (true, _) => Ok(()),
            (false, Fault::Empty) => Err(ToolError::Empty),
            (false, _) => Err(ToolError::Forbidden { body: None }),
        }
    }

    /// A well-formed charge reaches the payment backend: it charges, and the
    /// first one of a timeout step times out afterwards.
    fn charge(&mut self) -> Result<(), ToolError> {
        self.charges += 1;
        if self.timeout_pending {
            self.timeout_pending = false;
            return Err(ToolError::Timeout);
        }
        Ok(())
    }
}

fn lock(world: &Mutex<World>) -> MutexGuard<'_, World> {
    world.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The simulated tools, as gate sees them: a read-only lookup with a
/// discovery tool and a widen hint, and a non-idempotent charge.
pub struct SimTools(Arc<Mutex<World>>);

fn customer(email: &str) -> Value {
    json!({
        "id": format!("cus_{:08x}", email.len() * 2_654_435_761 % 0xffff_ffff),
        "email": email,
        "name": "Ann Example",
        "plan": "pro",
        "currency": "EUR",
        "open_invoices": [
            {"id": "INV-1041", "amount_cents": 12_500, "due": "2026-11-30"},
            {"id": "INV-1042", "amount_cents": 4_900, "due": "2026-12-15"}
        ],
        "orders": [
            {"id": "ord_3321", "total_cents": 12_500, "status": "delivered"},
            {"id": "ord_3390", "total_cents": 4_900, "status": "shipped"},
            {"id": "ord_3402", "total_cents": 2_300, "status": "processing"}
        ]
    })
}

fn customer_list() -> Value {
    json!(["ann@acme.com", "bob@acme.com", "carla@globex.com", "dan@initech.com"])
}

fn charge_receipt(customer_id: &str, amount_cents: u64) -> Value {
    json!({"charge": "ch_1", "customer_id": customer_id, "amount_cents": amount_cents, "status": "succeeded"})
}

#[tools]
impl SimTools {
    /// Look up a customer by email address.
    #[tool(
        read_only,
        discovery = "list_customers",
        widen = "search by the email's domain with search_customers"
    )]
    async fn lookup_customer(
        &self,
        /// The customer's email address.
        email: String,
    ) -> Result<Value, ToolError> {
        lock(&self.0).read()?;
        Ok(customer(&email))
    }

    /// List the customers this account may access.
    #[tool(read_only)]
    fn list_customers(&self) -> Value {
        customer_list()
    }

    /// Search customers by email domain.
    #[tool(read_only)]
    async fn search_customers(
        &self,
        /// The email domain, e.g. `acme.com`.
        domain: String,
    ) -> Result<Value, ToolError> {
        lock(&self.0).read()?;
        Ok(json!([customer(&format!("ann@{domain}"))]))
    }

    /// Charge a customer's card.
    #[tool(destructive, external)]
    async fn charge(
        &self,
        /// The customer to charge.
        #[arg(key)]
        customer_id: String,
        /// The amount in cents.
        #[arg(key)]
        amount_cents: u64,
    ) -> Result<Value, ToolError> {
        lock(&self.0).charge()?;
        Ok(charge_receipt(&customer_id, amount_cents))
    }
}

/// The arguments of `lookup_customer`, as a naive loop deserializes them.
#[derive(Deserialize)]
struct LookupArgs {
    email: String,
}

/// The arguments of `search_customers`.
#[derive(Deserialize)]
struct SearchArgs {
    domain: String,
}

/// The arguments of `charge`.
#[derive(Deserialize)]
struct ChargeArgs {
    customer_id: String,
    amount_cents: u64,
}

const TOOL_NAMES: [&str; 4] = ["lookup_customer", "list_customers", "search_customers", "charge"];
const WRONG_LOOKUP_NAMES: [&str; 4] = ["lookup_customers", "get_customer", "customer_lookup", "find_customer"];
const WRONG_CHARGE_NAMES: [&str; 4] = ["charge_card", "create_charge", "charge_customer", "make_payment"];

// ---------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------

/// The call the model makes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    /// The step's tool with well-formed arguments (`variant` changes the lookup's email).
    Valid(u32),
    /// The step's tool with a wrong argument type (the `n`th such mistake).
    WrongType(u32),
    /// A tool name that does not exist (the `n`th such mistake).
    WrongName(u32),
    /// The discovery tool, after gate's correction named it.
    Discover,
    /// The widened search, after gate's correction named it.
    Widen,
}

/// One call as the model writes it.
struct Call {
    name: String,
    args: String,
}

impl Call {
    fn tokens(&self) -> u64 {
        estimate_tokens(&self.name) + estimate_tokens(&self.args)
    }
}

fn render(task: u64, step: u32, kind: StepKind, next: Next) -> Call {
    let (name, args) = match (kind, next) {
        (_, Next::Discover) => ("list_customers".to_owned(), "{}".to_owned()),
        (_, Next::Widen) => ("search_customers".to_owned(), r#"{"domain":"acme.com"}"#.to_owned()),
        (StepKind::Lookup, Next::Valid(v)) => (
            "lookup_customer".to_owned(),
            format!(r#"{{"email":"c{task}.s{step}.v{v}@acme.io"}}"#),
        ),
        (StepKind::Lookup, Next::WrongType(n)) => (
            "lookup_customer".to_owned(),
            format!(r#"{{"email":{}}}"#, 40_001 + 100 * step + n),
        ),
        (StepKind::Lookup, Next::WrongName(n)) => (
            WRONG_LOOKUP_NAMES[n as usize % WRONG_LOOKUP_NAMES.len()].to_owned(),
            format!(r#"{{"email":"c{task}.s{step}@acme.io"}}"#),
        ),
        (StepKind::Charge, Next::Valid(_)) => (
            "charge".to_owned(),
            format!(
                r#"{{"customer_id":"cus_{task:06}","amount_cents":{}}}"#,
                1_000 + task % 9_000
            ),
        ),
        (StepKind::Charge, Next::WrongType(n)) => (
            "charge".to_owned(),
            format!(r#"{{"customer_id":"cus_{task:06}","amount_cents":"{}.50"}}"#, 10 + n),
        ),
        (StepKind::Charge, Next::WrongName(n)) => (
            WRONG_CHARGE_NAMES[n as usize % WRONG_CHARGE_NAMES.len()].to_owned(),
            format!(
                r#"{{"customer_id":"cus_{task:06}","amount_cents":{}}}"#,
                1_000 + task % 9_000
            ),
        ),
    };
    Call { name, args }
}

/// The model's next call after a structural error: fixed with probability
/// `p`, otherwise the same kind of mistake with a different value.
fn react_structural(rng: &mut SplitMix64, next: Next, variant: u32, p: f64) -> Next {
    match next {
        Next::WrongType(n) if !rng.chance(p) => Next::WrongType(n + 1),
        Next::WrongName(n) if !rng.chance(p) => Next::WrongName(n + 1),
        Next::WrongType(_) | Next::WrongName(_) => Next::Valid(variant),
        other => other,
    }
}

/// One step of a task's plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Planned {
    kind: StepKind,
    fault: Fault,
    /// Which wrong tool name the model reaches for first, if it hallucinates
    /// one: drawn per step, so a task may repeat an earlier hallucination.
    slip: u32,
}

/// The step plan of one task: `steps - 1` lookups, then the charge, each
/// with its fault.
fn plan(params: &Params, mix: Mix, task: u64) -> Vec<Planned> {
    let mut rng = SplitMix64::stream(params.seed, mix, task, STREAM_FAULTS);
    let r = mix.rates();
    (0..params.steps)
        .map(|i| {
            let kind = if i + 1 == params.steps {
                StepKind::Charge
            } else {
                StepKind::Lookup
            };
            let u = rng.unit();
            let side = rng.unit();
            let slip = (rng.next_u64() % WRONG_LOOKUP_NAMES.len() as u64) as u32;
            let (effect_fault, effect_rate) = match kind {
                StepKind::Lookup => (
                    if side < 0.5 { Fault::Forbidden } else { Fault::Empty },
                    r.ambiguous_read,
                ),
                StepKind::Charge => (Fault::Timeout, r.write_timeout),
            };
            let fault = if u < r.invalid_args {
                Fault::InvalidArgs
            } else if u < r.invalid_args + r.unknown_tool {
                Fault::UnknownTool
            } else if u < r.invalid_args + r.unknown_tool + effect_rate {
                effect_fault
            } else {
                Fault::None
            };
            Planned { kind, fault, slip }
        })
        .collect()
}

fn first_call(step: Planned) -> Next {
    match step.fault {
        Fault::InvalidArgs => Next::WrongType(0),
        Fault::UnknownTool => Next::WrongName(step.slip),
        _ => Next::Valid(0),
    }
}

// ---------------------------------------------------------------------------
// Policies
// ---------------------------------------------------------------------------

/// A policy under comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// The real runtime, `gate::Gate`, decides.
    Gate,
    /// Every error fed back raw, each failed call retried up to 3 times.
    #[serde(rename = "naive-retry-3")]
    NaiveRetry3,
    /// Validation errors and unknown tools retried once, tool exceptions end the run.
    PydanticAiStyle,
}

impl Policy {
    /// Every policy, in table order.
    pub const ALL: [Policy; 3] = [Policy::Gate, Policy::NaiveRetry3, Policy::PydanticAiStyle];

    /// The name in the table.
    pub const fn name(self) -> &'static str {
        match self {
            Policy::Gate => "gate",
            Policy::NaiveRetry3 => "naive-retry-3",
            Policy::PydanticAiStyle => "pydantic-ai-style",
        }
    }
}

/// How one task ended.
#[derive(Clone, Debug, PartialEq, Eq)]
enum End {
    Completed,
    /// gate's `Fail`, with its report's reason.
    FailedWithReport(FailReason),
    /// The loop gave up or raised: an error, but no report and no record of side effects.
    FailedUnreported,
}

/// One task's result.
#[derive(Clone, Debug)]
struct TaskResult {
    end: End,
    repair_tokens: u64,
    /// The same formula computed by the simulation (equals `repair_tokens` for gate).
    sim_repair_tokens: u64,
    charges: u32,
}

/// The context every task starts with: system prompt, tool definitions, user message.
fn base_context(params: &Params, tool_tokens: u64) -> u64 {
    params.system_prompt_tokens
        + tool_tokens
        + estimate_tokens("Please look up my account and pay my open invoice with the card on file.")
}

/// Plays one task against the real runtime: gate decides, the model reacts
/// to the step it gets.
async fn gate_task(
    gate: &Gate,
    world: &Mutex<World>,
    params: &Params,
    base: u64,
    task_no: u64,
    steps: &[Planned],
) -> TaskResult {
    let mut task = gate.task(format!("user-{task_no}"));
    let mut ctx = base;
    let mut repair = 0u64;
    let mut call_no = 0u32;
    let mut end = End::Completed;
    'task: for (step_no, &planned) in steps.iter().enumerate() {
        let Planned { kind, fault, .. } = planned;
        lock(world).begin_step(fault);
        let mut next = first_call(planned);
        let mut variant = 0u32;
        loop {
            let call = render(task_no, step_no as u32, kind, next);
            call_no += 1;
            // The model's turn reads the whole context; report it as the
            // provider would, so gate prices a repair by context replay.
            task.record_usage(ctx, 0).await;
            let step = task
                .handle(ToolCall::new(format!("call_{call_no}"), &call.name, &call.args))
                .await;
            ctx += call.tokens();
            match step {
                Step::Return(out) => {
                    ctx += estimate_tokens(&out.text);
                    if next == Next::Discover {
                        // The valid identifiers are in hand: look one up.
                        variant += 1;
                        next = Next::Valid(variant);
                        continue;
                    }
                    break;
                }
                Step::Reject(feedback) => {
                    ctx += estimate_tokens(&feedback.text);
                    repair += ctx;
                    let mut w = lock(world);
                    next = react_structural(&mut w.rng, next, variant, params.p_fix_specific);
                }
                Step::Retry(feedback) => {
                    ctx += estimate_tokens(&feedback.text);
                    repair += ctx;
                    lock(world).basis = Basis::Corrected;
                    next = if fault == Fault::Empty {
                        Next::Widen
                    } else {
                        Next::Discover
                    };
                }
                Step::Fail(report) => {
                    end = End::FailedWithReport(report.reason);
                    break 'task;
                }
            }
        }
    }
    TaskResult {
        end,
        repair_tokens: task.repair_tokens(),
        sim_repair_tokens: repair,
        charges: lock(world).charges,
    }
}

/// What a naive loop's tool dispatch produced.
enum Outcome {
    Ok(String),
    Structural(String),
    Ambiguous(String),
    Timeout(String),
}

/// A dispatcher without gate: look the name up, deserialize the arguments
/// with serde, call the backend, turn any error into its text.
fn dispatch(world: &Mutex<World>, call: &Call) -> Outcome {
    let tool_error = |e: ToolError| match e {
        ToolError::Timeout => Outcome::Timeout(format!("Error: {e}")),
        other => Outcome::Ambiguous(format!("Error: {other}")),
    };
    match call.name.as_str() {
        "lookup_customer" => match serde_json::from_str::<LookupArgs>(&call.args) {
            Err(e) => Outcome::Structural(format!("Error: {e}")),
            Ok(args) => match lock(world).read() {
                Ok(()) => Outcome::Ok(customer(&args.email).to_string()),
                Err(e) => tool_error(e),
            },
        },
        "list_customers" => Outcome::Ok(customer_list().to_string()),
        "search_customers" => match serde_json::from_str::<SearchArgs>(&call.args) {
            Err(e) => Outcome::Structural(format!("Error: {e}")),
            Ok(args) => match lock(world).read() {
                Ok(()) => Outcome::Ok(json!([customer(&format!("ann@{}", args.domain))]).to_string()),
                Err(e) => tool_error(e),
            },
        },
        "charge" => match serde_json::from_str::<ChargeArgs>(&call.args) {
            Err(e) => Outcome::Structural(format!("Error: {e}")),
            Ok(args) => match lock(world).charge() {
                Ok(()) => Outcome::Ok(charge_receipt(&args.customer_id, args.amount_cents).to_string()),
                Err(e) => tool_error(e),
            },
        },
        other => Outcome::Structural(format!("Error: unknown tool `{other}`")),
    }
}

/// naive-retry-3: every error goes back to the model as its raw text and the
/// failed call is retried up to `naive_retries` times, whatever it was.
fn naive_task(world: &Mutex<World>, params: &Params, base: u64, task_no: u64, steps: &[Planned]) -> TaskResult {
    let mut ctx = base;
    let mut repair = 0u64;
    let mut end = End::Completed;
    'task: for (step_no, &planned) in steps.iter().enumerate() {
        let Planned { kind, fault, .. } = planned;
        lock(world).begin_step(fault);
        let mut next = first_call(planned);
        let mut variant = 0u32;
        let mut retries_left = params.naive_retries;
        loop {
            let call = render(task_no, step_no as u32, kind, next);
            ctx += call.tokens();
            let outcome = dispatch(world, &call);
            let text = match &outcome {
                Outcome::Ok(text) => {
                    ctx += estimate_tokens(text);
                    break;
                }
                Outcome::Structural(t) | Outcome::Ambiguous(t) | Outcome::Timeout(t) => t.clone(),
            };
            if retries_left == 0 {
                end = End::FailedUnreported;
                break 'task;
            }
            retries_left -= 1;
            ctx += estimate_tokens(&text);
            repair += ctx;
            let mut w = lock(world);
            match outcome {
                Outcome::Structural(_) => next = react_structural(&mut w.rng, next, variant, params.p_fix_raw),
                Outcome::Ambiguous(_) => {
                    // Nothing says what to change: the model tries another guess.
                    w.basis = Basis::Blind;
                    variant += 1;
                    next = Next::Valid(variant);
                }
                // Nothing says the charge happened: the model sends it again.
                Outcome::Timeout(_) | Outcome::Ok(_) => {}
            }
        }
    }
    TaskResult {
        end,
        repair_tokens: repair,
        sim_repair_tokens: repair,
        charges: lock(world).charges,
    }
}

/// pydantic-ai's retry prompt for a validation error: `ValidationError.errors()`
/// as indented JSON, then "Fix the errors and try again."
fn pydantic_validation_message(call: &Call) -> String {
    let args: Value = serde_json::from_str(&call.args).unwrap_or(Value::Null);
    let error = match call.name.as_str() {
        "charge" => json!({
            "type": "int_parsing",
            "loc": ["amount_cents"],
            "msg": "Input should be a valid integer, unable to parse string as an integer",
            "input": args.get("amount_cents").cloned().unwrap_or(Value::Null),
        }),
        "search_customers" => json!({
            "type": "string_type",
            "loc": ["domain"],
            "msg": "Input should be a valid string",
            "input": args.get("domain").cloned().unwrap_or(Value::Null),
        }),
        _ => json!({
            "type": "string_type",
            "loc": ["email"],
            "msg": "Input should be a valid string",
            "input": args.get("email").cloned().unwrap_or(Value::Null),
        }),
    };
    let errors = serde_json::to_string_pretty(&json!([error])).unwrap_or_default();
    format!("1 validation errors: {errors}\n\nFix the errors and try again.")
}

/// pydantic-ai's retry prompt for an unknown tool name.
fn pydantic_unknown_tool_message(name: &str) -> String {
    let available: Vec<String> = TOOL_NAMES.iter().map(|n| format!("'{n}'")).collect();
    format!(
        "Unknown tool name: '{name}'. Available tools: {}\n\nFix the errors and try again.",
        available.join(", ")
    )
}

/// pydantic-ai-style: argument validation errors and unknown tool names go
/// back to the model (pydantic-ai's retry prompt), at most `pydantic_retries`
/// times in a row per tool name; any other exception a tool raises ends the
/// run. This is pydantic-ai's default behaviour for tools that raise on HTTP
/// errors and timeouts instead of raising `ModelRetry`.
fn pydantic_task(world: &Mutex<World>, params: &Params, base: u64, task_no: u64, steps: &[Planned]) -> TaskResult {
    let p_fix = match params.pydantic_messages {
        PydanticMessages::Specific => params.p_fix_specific,
        PydanticMessages::Raw => params.p_fix_raw,
    };
    let mut ctx = base;
    let mut repair = 0u64;
    let mut end = End::Completed;
    let mut requests = 0u32;
    // pydantic-ai carries a tool's retry count only while that tool keeps failing.
    let mut last_failed: Option<(String, u32)> = None;
    'task: for (step_no, &planned) in steps.iter().enumerate() {
        let Planned { kind, fault, .. } = planned;
        lock(world).begin_step(fault);
        let mut next = first_call(planned);
        let variant = 0u32;
        loop {
            requests += 1;
            if requests > params.pydantic_request_limit {
                end = End::FailedUnreported;
                break 'task;
            }
            let call = render(task_no, step_no as u32, kind, next);
            ctx += call.tokens();
            let prompt = match dispatch(world, &call) {
                Outcome::Ok(text) => {
                    ctx += estimate_tokens(&text);
                    last_failed = None;
                    break;
                }
                Outcome::Structural(_) if !TOOL_NAMES.contains(&call.name.as_str()) => {
                    pydantic_unknown_tool_message(&call.name)
                }
                Outcome::Structural(_) => pydantic_validation_message(&call),
                Outcome::Ambiguous(_) | Outcome::Timeout(_) => {
                    end = End::FailedUnreported;
                    break 'task;
                }
            };
            let used = match &last_failed {
                Some((name, n)) if *name == call.name => *n,
                _ => 0,
            };
            if used >= params.pydantic_retries {
                // UnexpectedModelBehavior: "Tool '…' exceeded max retries count of 1".
                end = End::FailedUnreported;
                break 'task;
            }
            last_failed = Some((call.name.clone(), used + 1));
            ctx += estimate_tokens(&prompt);
            repair += ctx;
            let mut w = lock(world);
            next = react_structural(&mut w.rng, next, variant, p_fix);
        }
    }
    TaskResult {
        end,
        repair_tokens: repair,
        sim_repair_tokens: repair,
        charges: lock(world).charges,
    }
}

// ---------------------------------------------------------------------------
// Running and reporting
// ---------------------------------------------------------------------------

/// Why the simulation could not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimError(pub String);

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SimError {}

impl From<ParamError> for SimError {
    fn from(e: ParamError) -> Self {
        SimError(e.0)
    }
}

/// One line of the table: one policy on one mix.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// The failure mix.
    pub mix: Mix,
    /// The policy.
    pub policy: Policy,
    /// Tasks run.
    pub tasks: u64,
    /// Faults injected into those tasks (the same for every policy of a mix).
    pub faults: u64,
    /// Tasks whose every step got its result.
    pub completed: u64,
    /// Tasks that stopped with gate's `Fail` and its `FailureReport`.
    pub failed_with_report: u64,
    /// Tasks that stopped because the loop gave up or a tool raised: an
    /// error, but no report and no record of what the tools did.
    pub failed_unreported: u64,
    /// Repair tokens of all tasks.
    pub repair_tokens_total: u64,
    /// Mean repair tokens per task.
    pub repair_tokens_mean: f64,
    /// 95th percentile of repair tokens per task (nearest rank).
    pub repair_tokens_p95: u64,
    /// Charges that ran although the same charge had already run.
    pub duplicate_charges: u64,
    /// Charges that ran in tasks that failed without any record of them.
    pub unrecorded_charges: u64,
    /// gate: charges left `outcome_unknown` in the ledger for `gate reconcile`.
    pub charges_to_reconcile: u64,
    /// gate: why tasks failed.
    pub fail_reasons: BTreeMap<String, u64>,
    /// gate: tasks where `task.repair_tokens()` differs from the simulation's
    /// own count under the same formula (0 means the two meters agree).
    pub metering_mismatches: u64,
}

impl Row {
    fn new(mix: Mix, policy: Policy, results: &[TaskResult], faults: u64) -> Self {
        let tasks = results.len() as u64;
        let mut tokens: Vec<u64> = results.iter().map(|r| r.repair_tokens).collect();
        tokens.sort_unstable();
        let total: u64 = tokens.iter().sum();
        let p95 = if tokens.is_empty() {
            0
        } else {
            let rank = (tokens.len() * 95).div_ceil(100).max(1);
            tokens[rank - 1]
        };
        let mut fail_reasons = BTreeMap::new();
        for r in results {
            if let End::FailedWithReport(reason) = r.end {
                *fail_reasons.entry(reason.as_str().to_owned()).or_insert(0) += 1;
            }
        }
        Row {
            mix,
            policy,
            tasks,
            faults,
            completed: results.iter().filter(|r| r.end == End::Completed).count() as u64,
            failed_with_report: results
                .iter()
                .filter(|r| matches!(r.end, End::FailedWithReport(_)))
                .count() as u64,
            failed_unreported: results.iter().filter(|r| r.end == End::FailedUnreported).count() as u64,
            repair_tokens_total: total,
            repair_tokens_mean: if tasks == 0 { 0.0 } else { total as f64 / tasks as f64 },
            repair_tokens_p95: p95,
            duplicate_charges: results.iter().map(|r| u64::from(r.charges.saturating_sub(1))).sum(),
            unrecorded_charges: results
                .iter()
                .filter(|r| r.end == End::FailedUnreported)
                .map(|r| u64::from(r.charges))
                .sum(),
            charges_to_reconcile: 0,
            fail_reasons,
            metering_mismatches: results
                .iter()
                .filter(|r| r.repair_tokens != r.sim_repair_tokens)
                .count() as u64,
        }
    }
}

/// The whole run: parameters, derived token sizes, and one row per mix and policy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// The parameters.
    pub params: Params,
    /// Tokens of the simulated tools' OpenAI manifest (chars / 4).
    pub tool_definition_tokens: u64,
    /// Tokens every task starts with: system prompt, tool definitions, user message.
    pub base_context_tokens: u64,
    /// The assumptions, as printed under the table.
    pub assumptions: Vec<String>,
    /// One row per mix and policy.
    pub rows: Vec<Row>,
}

/// Runs every policy on every mix in `mixes`.
pub async fn run(params: &Params, mixes: &[Mix]) -> Result<Report, SimError> {
    params.check()?;
    let manifest = SimTools(Arc::new(Mutex::new(World::new())))
        .into_toolbox()
        .manifest(Dialect::OpenAi)
        .map_err(|e| SimError(format!("manifest: {e}")))?;
    let tool_tokens = estimate_tokens(&manifest.to_string());
    let base = base_context(params, tool_tokens);
    let mut rows = Vec::new();
    for &mix in mixes {
        let plans: Vec<Vec<Planned>> = (0..params.tasks).map(|t| plan(params, mix, t)).collect();
        let faults: u64 = plans
            .iter()
            .map(|p| p.iter().filter(|s| s.fault != Fault::None).count() as u64)
            .sum();
        let world = Arc::new(Mutex::new(World::new()));
        for policy in Policy::ALL {
            let budget = Budget::default()
                .with_max_repairs(params.gate_max_repairs)
                .map_err(|e| SimError(format!("budget: {e}")))?;
            let gate = match policy {
                Policy::Gate => Some(
                    Gate::builder(SimTools(world.clone()).into_toolbox())
                        .store("memory:")
                        .budget(budget)
                        .rejection_cap(params.gate_rejection_cap)
                        .seed(params.seed)
                        .build()
                        .await
                        .map_err(|e| SimError(format!("gate: {e}")))?,
                ),
                _ => None,
            };
            let mut results = Vec::with_capacity(plans.len());
            for (task_no, steps) in plans.iter().enumerate() {
                let task_no = task_no as u64;
                lock(&world).reset(SplitMix64::stream(params.seed, mix, task_no, STREAM_MODEL), params);
                let result = match (&gate, policy) {
                    (Some(gate), _) => gate_task(gate, &world, params, base, task_no, steps).await,
                    (None, Policy::NaiveRetry3) => naive_task(&world, params, base, task_no, steps),
                    (None, _) => pydantic_task(&world, params, base, task_no, steps),
                };
                results.push(result);
            }
            let mut row = Row::new(mix, policy, &results, faults);
            if let Some(gate) = &gate {
                let limit = u32::try_from(params.tasks.saturating_add(1)).unwrap_or(u32::MAX);
                let unresolved = gate
                    .store()
                    .list_unresolved(limit)
                    .await
                    .map_err(|e| SimError(format!("ledger: {e}")))?;
                row.charges_to_reconcile = unresolved.len() as u64;
                // A charge in a failed task is recorded when the ledger holds it.
                let charged_in_failures: u64 = results
                    .iter()
                    .filter(|r| r.end != End::Completed)
                    .map(|r| u64::from(r.charges))
                    .sum();
                row.unrecorded_charges = charged_in_failures.saturating_sub(row.charges_to_reconcile);
            }
            rows.push(row);
        }
    }
    let mut report = Report {
        params: params.clone(),
        tool_definition_tokens: tool_tokens,
        base_context_tokens: base,
        assumptions: Vec::new(),
        rows,
    };
    report.assumptions = assumptions(&report);
    Ok(report)
}

fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "–".to_owned()
    } else {
        format!("{:.1}%", part as f64 * 100.0 / whole as f64)
    }
}

/// The assumptions behind the numbers, one sentence each.
pub fn assumptions(report: &Report) -> Vec<String> {
    let p = &report.params;
    let mut mixes = String::new();
    for mix in Mix::ALL {
        let r = mix.rates();
        let _ = write!(
            mixes,
            "{}{} (invalid args {}, unknown tool {}, ambiguous read {}, write timeout {})",
            if mixes.is_empty() { "" } else { "; " },
            mix.name(),
            r.invalid_args,
            r.unknown_tool,
            r.ambiguous_read,
            r.write_timeout
        );
    }
    vec![
        format!(
            "{} tasks per mix and policy, seed {}; each task is {} steps: {} `lookup_customer` calls (read_only, discovery `list_customers`, widen hint `search_customers`), then one `charge` (destructive, external: not idempotent).",
            p.tasks,
            p.seed,
            p.steps,
            p.steps.saturating_sub(1)
        ),
        format!(
            "Faults are drawn per step, at most one, from the same seeded schedule for every policy: {mixes}. Each fault hits the step's first call; an ambiguous read persists until a call resolves it; the timeout happens after the backend charged."
        ),
        format!(
            "Model: after a rejection naming the field path and expected type, or listing the valid tool names, it fixes the call with p_fix_specific = {}; after a raw error with p_fix_raw = {}. A failed fix is the same kind of mistake with another value.",
            p.p_fix_specific, p.p_fix_raw
        ),
        format!(
            "Model: after gate's correction (call the discovery tool / widen the search as hinted) its next call succeeds with p_correct = {}; after a raw ambiguous error its resend (another guess) succeeds with p_blind = {}. After a timeout the naive model resends the charge (nothing told it the charge happened).",
            p.p_correct, p.p_blind
        ),
        format!(
            "Tokens under context replay, the same formula for every policy: a repair round trip costs the context the model re-reads (system prompt {} + tool definitions {} + user message, {} in all, plus every call, result and feedback so far, including the failed call and its feedback); texts count chars/4. gate's figure is its own `task.repair_tokens()`, with the context reported through `task.record_usage` before every model turn; first attempts and successful calls are not repair.",
            p.system_prompt_tokens, report.tool_definition_tokens, report.base_context_tokens
        ),
        format!(
            "gate: the real runtime (validator, memory ledger, sanitizer) with max {} repairs and {} rejections per task, one correction per step, default token and latency budgets; one user per task, so the per-user token window never binds.",
            p.gate_max_repairs, p.gate_rejection_cap
        ),
        format!(
            "naive-retry-3: every error text goes back raw (serde's message for bad arguments, `unknown tool` for a bad name, the error's text for 403/empty/timeout) and the failed call is retried up to {} times; then the loop gives up.",
            p.naive_retries
        ),
        format!(
            "pydantic-ai-style: pydantic-ai's defaults: argument validation errors and unknown tool names get its retry prompt (which names `loc`, `msg` and input, or the available tools: modelled as {} messages), at most {} time(s) in a row per tool name, {} requests per run; any other exception a tool raises (403, empty result, timeout) ends the run. Tools do not raise `ModelRetry` themselves.",
            match p.pydantic_messages {
                PydanticMessages::Specific => "specific",
                PydanticMessages::Raw => "raw",
            },
            p.pydantic_retries,
            p.pydantic_request_limit
        ),
        "A duplicate charge is a charge that ran although the task's charge had already run; an unrecorded charge ran in a task that failed with no record of it (gate's timed-out charges are recorded `outcome_unknown` for `gate reconcile`).".to_owned(),
    ]
}

/// The table as markdown, with its assumptions and gate's failure reasons.
pub fn markdown(report: &Report) -> String {
    let mut out = String::new();
    out.push_str(
        "| mix | policy | completed | failed, with report | failed, no report | repair tokens/task (mean) | p95 | duplicate charges | unrecorded charges |\n",
    );
    out.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for row in &report.rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {:.0} | {} | {} | {} |",
            row.mix.name(),
            row.policy.name(),
            pct(row.completed, row.tasks),
            pct(row.failed_with_report, row.tasks),
            pct(row.failed_unreported, row.tasks),
            row.repair_tokens_mean,
            row.repair_tokens_p95,
            row.duplicate_charges,
            row.unrecorded_charges,
        );
    }
    out.push_str("\nWhy gate failed tasks (each with a `FailureReport`):\n\n");
    for row in report.rows.iter().filter(|r| r.policy == Policy::Gate) {
        let reasons: Vec<String> = row.fail_reasons.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(
            out,
            "- {}: {}{}",
            row.mix.name(),
            if reasons.is_empty() {
                "none".to_owned()
            } else {
                reasons.join(", ")
            },
            if row.charges_to_reconcile > 0 {
                format!(" ({} charges queued for `gate reconcile`)", row.charges_to_reconcile)
            } else {
                String::new()
            }
        );
    }
    out.push_str("\nAssumptions:\n\n");
    for a in &report.assumptions {
        let _ = writeln!(out, "- {a}");
    }
    out
}
