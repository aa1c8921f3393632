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
//!   [`TokenWindow`] under a [`TokenLimit`], priced by [`repair_cost`]. The
//!   window is a plain value that the store (`gate-ledger`) keeps and updates
//!   atomically, so one window serves every worker of a deployment.
//! * **Retries multiply under load.** When a dependency is down every task
//!   retries at once; three retries per call let a fleet quadruple its load on
//!   a failing service. A rolling budget shared across calls caps retries at a
//!   share of real traffic: [`RetryBudget`] (tower's `TpsBudget` semantics,
//!   with exact ratios), which the runtime asks before each of its own
//!   resends when a gate is given one.
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
//! tokens per user per hour, backoff 100 ms–20 s) and [`TaskBudget`] checks a
//! task's own budgets before a Reject or Retry is returned.
//!
//! # How the runtime uses them
//!
//! ```
//! use std::time::Duration;
//! use toolgate_budget::{Budget, Pushback, TokenWindow, repair_cost};
//! use rand::{SeedableRng, rngs::StdRng};
//!
//! let budget = Budget::default();
//! let mut task = budget.task();
//! let mut window = TokenWindow::default();     // the user's window, kept by the store
//! let limit = budget.token_limit();
//! let mut rng = StdRng::seed_from_u64(7);
//! let now_ms = 1_767_225_600_000;              // the store's clock
//!
//! // The policy chose Retry for a read-only call that timed out:
//! let plan = task.plan_retry(Pushback::None, Duration::from_secs(5), &mut rng)?;
//! let cost = repair_cost(8_000, "lookup_customer timed out; retrying");
//! let reservation = window.reserve(&limit, now_ms, cost)?;   // atomic in the store
//! let grant = task.commit(plan, reservation.tokens)?;
//! assert_eq!(grant.repair, 1);
//! assert!(grant.delay < Duration::from_millis(100)); // full jitter below the base
//! // ... sleep grant.delay, run the attempt, then:
//! task.record_latency(Duration::from_millis(850));
//! let left = window.settle(&limit, now_ms, &[reservation], 8_160); // the provider's real usage
//! task.settle_tokens(cost, 8_160);
//! assert_eq!(left, 50_000 - 8_160);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A budget can only refuse. It is asked after the policy has chosen Reject or
//! Retry, so it can turn a repair into a Fail, but it never turns a Fail, or an
//! `OutcomeUnknown`, into a retry.
//!
//! The in-process budgets read `tokio::time::Instant`, so tests can run on
//! paused time; the token window takes the store's clock as an argument, so
//! every worker of a store agrees on its buckets.
//!
//! # Feature `testing`
//!
//! For gate's own tests, not covered by semver: `parity`, the AWS SDKs'
//! retry quota and gRPC's retry throttling reproduced exactly, which the
//! runtime does not use.
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod backoff;
mod budget;
pub mod cost;
mod error;
#[cfg(feature = "testing")]
pub mod parity;
mod retry;
mod task;
mod tokens;
mod window;

pub use backoff::{Backoff, DEFAULT_BACKOFF_BASE, DEFAULT_BACKOFF_CAP, Jitter, MAX_BACKOFF_CAP, Pushback};
pub use budget::{Budget, DEFAULT_PENDING_APPROVALS};
pub use error::BudgetError;
pub use retry::{MAX_MIN_PER_SEC, RetryBudget};
pub use task::{
    AttemptBudget, AttemptsExhausted, DEFAULT_ADDED_LATENCY, DEFAULT_MAX_REPAIRS, Grant, LatencyBudget, LatencyRefusal,
    MAX_ADDED_LATENCY, MAX_ATTEMPTS, Refusal, RepairPlan, TaskBudget, TaskBudgetState,
};
pub use tokens::{
    CHARS_PER_TOKEN, DEFAULT_REPAIR_TOKENS, DEFAULT_TOKEN_WINDOW, MAX_REPAIR_TOKENS, Reservation, TokenLimit,
    TokenWindow, TokensExhausted, WINDOW_BUCKETS, estimate_tokens, repair_cost,
};
