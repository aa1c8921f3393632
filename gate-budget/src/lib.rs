//! gate's budgets: repairs per task, added latency per task, and repair tokens
//! per user over a rolling window, plus the cost model of context replay.
//!
//! # Why budgets and not max retries?
//!
//! "Retry up to 3 times" bounds one call. It does not bound what repair costs,
//! and with LLM agents the cost is not the call:
//!
//! * **Each repair re-reads the whole context.** Correcting one bad argument
//!   at step 3 of a 3-step agent (4k system prompt, 2k per step) adds 8–10k
//!   tokens to an 18k task, not the 200 tokens of the error message (see
//!   [`cost`]). So the meter charges tokens, per user, over a rolling window:
//!   [`RepairTokenBudget`], priced by [`repair_cost`].
//! * **Retries multiply under load.** When a dependency is down every task
//!   retries at once; three retries per call let a fleet quadruple its load on
//!   a failing service. A rolling budget shared across calls caps retries at a
//!   share of real traffic: [`RetryBudget`] (tower's `TpsBudget` semantics,
//!   with exact ratios). [`RetryQuota`] and [`RetryThrottle`] reproduce the
//!   AWS SDKs' quota and gRPC's throttling for tools that must match them.
//! * **Time is a budget too.** A user waiting on an agent does not care how
//!   many attempts were made, only how long it took. [`LatencyBudget`] bounds
//!   the latency repairs add, and decides whether a backoff delay or a
//!   server's `Retry-After` still fits ([`Backoff`], [`Pushback`]).
//! * **And a count still helps**, as a backstop that never depends on
//!   estimates: [`AttemptBudget`], default 2 repairs, hard cap 5 attempts.
//!
//! Each budget is a small type that answers one question and documents its
//! parameter ranges; constructors return [`BudgetError`] for values outside
//! them, never panic. [`Budget`] bundles gate's defaults (2 repairs, 30 s, 50,000
//! tokens per user per hour, backoff 100 ms–20 s) and [`TaskBudget`] checks all
//! of a task's budgets at once before a Reject or Retry is returned.
//!
//! # How the runtime uses them
//!
//! ```
//! use std::time::Duration;
//! use gate_budget::{Budget, Pushback, repair_cost};
//! use rand::{SeedableRng, rngs::StdRng};
//!
//! let budget = Budget::default();
//! let tokens = budget.token_budget();          // once per Gate, shared by all tasks
//! let mut task = budget.task(&tokens, "user-42");
//! let mut rng = StdRng::seed_from_u64(7);
//!
//! // The policy chose Retry for a read-only call that timed out:
//! let cost = repair_cost(8_000, "lookup_customer timed out; retrying");
//! let grant = task.authorize_retry(cost, Pushback::None, Duration::from_secs(5), &mut rng)?;
//! assert_eq!(grant.repair, 1);
//! assert!(grant.delay < Duration::from_millis(100)); // full jitter below the base
//! // ... sleep grant.delay, run the attempt, then:
//! task.record_latency(Duration::from_millis(850));
//! task.record_usage(8_100, 60);                  // the provider's real usage
//! assert_eq!(task.remaining_tokens(), 50_000 - 8_160);
//! # Ok::<(), gate_budget::Refusal>(())
//! ```
//!
//! A budget can only refuse. It is asked after the policy has chosen Reject or
//! Retry, so it can turn a repair into a Fail, but it never turns a Fail, or an
//! `OutcomeUnknown`, into a retry.
//!
//! Time is read from `tokio::time::Instant`, so tests can run on paused time.
#![forbid(unsafe_code)]

mod backoff;
mod budget;
pub mod cost;
mod error;
mod parity;
mod retry;
mod task;
mod tokens;
mod window;

pub use backoff::{Backoff, DEFAULT_BACKOFF_BASE, DEFAULT_BACKOFF_CAP, Jitter, MAX_BACKOFF_CAP, Pushback};
pub use budget::Budget;
pub use error::BudgetError;
pub use parity::{
    AWS_NO_RETRY_INCREMENT, AWS_QUOTA_CAPACITY, AWS_RETRY_COST, AWS_TIMEOUT_RETRY_COST, QuotaExhausted, QuotaPermit,
    RetryCost, RetryQuota, RetryThrottle,
};
pub use retry::{MAX_MIN_PER_SEC, RetryBudget};
pub use task::{
    AttemptBudget, AttemptsExhausted, DEFAULT_ADDED_LATENCY, DEFAULT_MAX_REPAIRS, Grant, LatencyBudget, LatencyRefusal,
    MAX_ADDED_LATENCY, MAX_ATTEMPTS, Refusal, TaskBudget, TaskBudgetState,
};
pub use tokens::{
    CHARS_PER_TOKEN, Charge, DEFAULT_REPAIR_TOKENS, DEFAULT_TOKEN_WINDOW, MAX_REPAIR_TOKENS, RepairTokenBudget,
    TokensExhausted, estimate_tokens, repair_cost,
};
