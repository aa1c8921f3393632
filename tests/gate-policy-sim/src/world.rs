//! The simulated backends: a customer directory and a card processor, with
//! the fault scheduled for each step (a forbidden or empty read, a charge
//! that times out after it ran), exposed to gate as a real toolbox so gate's
//! own validator, ledger and budgets handle every call. It also counts
//! charges, so a duplicate cannot go unseen whichever policy made it.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::Deserialize;
use serde_json::{Value, json};
use toolgate::{ToolError, tools};

use super::params::Params;
use super::rng::SplitMix64;

/// The fault injected into one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fault {
    None,
    InvalidArgs,
    UnknownTool,
    Forbidden,
    Empty,
    Timeout,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum StepKind {
    Lookup,
    Charge,
}

/// What the model's current call rests on, which decides whether an
/// ambiguous read is resolved by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Basis {
    /// The step's first well-formed call.
    First,
    /// A resend after a raw ambiguous error.
    Blind,
    /// A call that follows gate's correction (discovery tool or widen hint).
    Corrected,
}

/// One task's world: the step being played, the model's luck, the charges run.
#[derive(Debug)]
pub(super) struct World {
    pub(super) rng: SplitMix64,
    pub(super) fault: Fault,
    pub(super) resolved: bool,
    pub(super) timeout_pending: bool,
    pub(super) basis: Basis,
    pub(super) charges: u32,
    pub(super) p_correct: f64,
    pub(super) p_blind: f64,
}

impl World {
    pub(super) fn new() -> Self {
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

    pub(super) fn reset(&mut self, rng: SplitMix64, params: &Params) {
        *self = World {
            rng,
            p_correct: params.p_correct,
            p_blind: params.p_blind,
            ..World::new()
        };
    }

    pub(super) fn begin_step(&mut self, fault: Fault) {
        self.fault = fault;
        self.resolved = !matches!(fault, Fault::Forbidden | Fault::Empty);
        self.timeout_pending = fault == Fault::Timeout;
        self.basis = Basis::First;
    }

    /// A well-formed lookup (or widened search) reaches the backend.
    pub(super) fn read(&mut self) -> Result<(), ToolError> {
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
    pub(super) fn charge(&mut self) -> Result<(), ToolError> {
        self.charges += 1;
        if self.timeout_pending {
            self.timeout_pending = false;
            return Err(ToolError::Timeout);
        }
        Ok(())
    }
}

pub(super) fn lock(world: &Mutex<World>) -> MutexGuard<'_, World> {
    world.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The simulated tools, as gate sees them: a read-only lookup with a
/// discovery tool and a widen hint, and a non-idempotent charge.
pub struct SimTools(pub(super) Arc<Mutex<World>>);

pub(super) fn customer(email: &str) -> Value {
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

pub(super) fn customer_list() -> Value {
    json!(["ann@acme.com", "bob@acme.com", "carla@globex.com", "dan@initech.com"])
}

pub(super) fn charge_receipt(customer_id: &str, amount_cents: u64) -> Value {
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
pub(super) struct LookupArgs {
    pub(super) email: String,
}

/// The arguments of `search_customers`.
#[derive(Deserialize)]
pub(super) struct SearchArgs {
    pub(super) domain: String,
}

/// The arguments of `charge`.
#[derive(Deserialize)]
pub(super) struct ChargeArgs {
    pub(super) customer_id: String,
    pub(super) amount_cents: u64,
}

pub(super) const TOOL_NAMES: [&str; 4] = ["lookup_customer", "list_customers", "search_customers", "charge"];
pub(super) const WRONG_LOOKUP_NAMES: [&str; 4] =
    ["lookup_customers", "get_customer", "customer_lookup", "find_customer"];
pub(super) const WRONG_CHARGE_NAMES: [&str; 4] = ["charge_card", "create_charge", "charge_customer", "make_payment"];
