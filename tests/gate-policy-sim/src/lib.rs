//! The policy simulation: gate's decisions against two naive retry policies,
//! on the same seeded tasks, under the same token accounting.
//!
//! The README claims that deciding from declared side effects saves repair
//! tokens and never runs a charge twice. A claim like that needs numbers a
//! reader can reproduce and argue with, and real model runs are neither cheap
//! nor reproducible, so this crate simulates the model and the backends
//! while running gate itself for real: policy A is `toolgate::Gate` with its
//! validator, ledger, budgets and rejection texts; only the model's reaction
//! to a text is a coin flip, with stated probabilities.
//!
//! Every assumption is a field of [`Params`] and is printed with the table
//! ([`assumptions`]). Everything is deterministic given [`Params::seed`]:
//! faults and model reactions come from SplitMix64 streams derived from the
//! seed, the mix and the task number, and every policy replays the same fault
//! schedule for a given task.
//!
//! The binary (`cargo run --release -p gate-policy-sim -- --tasks 1000 --seed
//! 7`) prints the table; `tests/policy_sim.rs` checks the invariants (gate
//! never charges twice, the naive policy does when writes time out, the same
//! seed gives the same table). It is a harness that measures gate, not an
//! example of its API, so it lives with the tests and is not published.
//!
//! The files follow the simulation's parts: `rng.rs` the seeded streams,
//! `params.rs` the assumptions, `world.rs` the simulated backends, `model.rs`
//! the simulated model, `policy.rs` the policies, `run.rs` the run that counts
//! them into a [`Report`], `report.rs` the report with its [`assumptions`],
//! and `table.rs` the printed [`markdown`] table.
#![forbid(unsafe_code)]

mod model;
mod params;
mod policy;
mod report;
mod rng;
mod run;
mod table;
mod world;

pub use params::{Mix, ParamError, Params, PydanticMessages, Rates};
pub use policy::Policy;
pub use report::{Report, Row, assumptions};
pub use rng::SplitMix64;
pub use run::{SimError, run};
pub use table::markdown;
