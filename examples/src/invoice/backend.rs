//! A simulated CRM and payment provider with deterministic fault injection.
//!
//! The demo must show every decision gate makes, on the same run every time,
//! so faults are planned per tool call rather than drawn at random: "the
//! next `charge_card` gets a 503 before anything happens, the one after times
//! out after the charge went through". The payment provider honours
//! idempotency keys the way Stripe does, and keeps every charge, so the demo
//! (and its test) can show that each intent was charged exactly once.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use schemars::JsonSchema;
use serde::Serialize;

/// A CRM customer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Customer {
    /// Customer id.
    pub id: String,
    /// Email address.
    pub email: String,
    /// Display name.
    pub name: String,
}

/// An invoice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Invoice {
    /// Invoice id.
    pub id: String,
    /// The customer it bills.
    pub customer_id: String,
    /// Amount due, in cents.
    pub amount_cents: u64,
    /// ISO currency code.
    pub currency: String,
}

/// A charge the payment provider executed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Charge {
    /// Charge id.
    pub id: String,
    /// The idempotency key the caller sent (gate's intent key).
    pub idempotency_key: String,
    /// Who was charged.
    pub customer_id: String,
    /// How much.
    pub amount_cents: u64,
}

/// A fault to inject into one upcoming call of a tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The call works.
    None,
    /// The backend answers 403 with no body.
    ForbiddenNoBody,
    /// A 503 before the backend did anything.
    UnavailableBefore,
    /// The effect happens, then the connection times out.
    TimeoutAfterEffect,
}

/// The whole simulated world.
#[derive(Debug, Default)]
pub struct Backend {
    customers: Vec<Customer>,
    invoices: Vec<Invoice>,
    charges: Mutex<Vec<Charge>>,
    receipts: Mutex<Vec<(String, String)>>,
    refunds: Mutex<Vec<String>>,
    faults: Mutex<HashMap<String, VecDeque<Fault>>>,
}

impl Backend {
    /// The demo's CRM: three customers, three invoices, no charges yet.
    pub fn demo() -> Self {
        let customer = |id: &str, email: &str, name: &str| Customer {
            id: id.into(),
            email: email.into(),
            name: name.into(),
        };
        let invoice = |id: &str, customer: &str, cents: u64| Invoice {
            id: id.into(),
            customer_id: customer.into(),
            amount_cents: cents,
            currency: "EUR".into(),
        };
        Backend {
            customers: vec![
                customer("cus_ann", "ann@acme.com", "Ann Lee"),
                customer("cus_bob", "bob@globex.com", "Bob Ode"),
                customer("cus_carol", "carol.smith@initech.com", "Carol Smith"),
            ],
            invoices: vec![
                invoice("INV-41", "cus_ann", 12_000),
                invoice("INV-42", "cus_bob", 4_500),
                invoice("INV-43", "cus_carol", 990),
            ],
            ..Backend::default()
        }
    }

    /// Plans `faults` for the next calls of `tool`, in order.
    pub fn plan(&self, tool: &str, faults: &[Fault]) {
        let mut plan = self.faults.lock().unwrap_or_else(|p| p.into_inner());
        plan.entry(tool.to_owned()).or_default().extend(faults.iter().copied());
    }

    /// The fault for this call of `tool` (none when nothing is planned).
    pub(crate) fn fault(&self, tool: &str) -> Fault {
        let mut plan = self.faults.lock().unwrap_or_else(|p| p.into_inner());
        plan.get_mut(tool).and_then(VecDeque::pop_front).unwrap_or(Fault::None)
    }

    pub(crate) fn customer_by_email(&self, email: &str) -> Option<&Customer> {
        self.customers.iter().find(|c| c.email.eq_ignore_ascii_case(email))
    }

    pub(crate) fn customers_in_domain(&self, domain: &str) -> Vec<Customer> {
        let suffix = format!("@{}", domain.trim_start_matches('@').to_ascii_lowercase());
        self.customers
            .iter()
            .filter(|c| c.email.to_ascii_lowercase().ends_with(&suffix))
            .cloned()
            .collect()
    }

    pub(crate) fn customers(&self) -> &[Customer] {
        &self.customers
    }

    pub(crate) fn invoice(&self, id: &str) -> Option<&Invoice> {
        self.invoices.iter().find(|i| i.id == id)
    }

    /// Charges once per idempotency key, as Stripe does: a repeated key
    /// returns the first charge.
    pub(crate) fn charge(&self, key: &str, customer_id: &str, amount_cents: u64) -> Charge {
        let mut charges = self.charges.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(existing) = charges.iter().find(|c| c.idempotency_key == key) {
            return existing.clone();
        }
        let charge = Charge {
            id: format!("ch_{:03}", charges.len() + 1),
            idempotency_key: key.to_owned(),
            customer_id: customer_id.to_owned(),
            amount_cents,
        };
        charges.push(charge.clone());
        charge
    }

    pub(crate) fn send_receipt(&self, customer_id: &str, invoice_id: &str) -> usize {
        let mut receipts = self.receipts.lock().unwrap_or_else(|p| p.into_inner());
        receipts.push((customer_id.to_owned(), invoice_id.to_owned()));
        receipts.len()
    }

    pub(crate) fn refund(&self, key: &str) -> bool {
        let mut refunds = self.refunds.lock().unwrap_or_else(|p| p.into_inner());
        if refunds.iter().any(|k| k == key) {
            return false;
        }
        refunds.push(key.to_owned());
        true
    }

    /// Every charge executed, in order.
    pub fn charges(&self) -> Vec<Charge> {
        self.charges.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Charges per idempotency key (intent): the demo's proof of no double charge.
    pub fn charges_per_intent(&self) -> HashMap<String, usize> {
        let mut counts = HashMap::new();
        for charge in self.charges() {
            *counts.entry(charge.idempotency_key).or_default() += 1;
        }
        counts
    }

    /// Receipts sent.
    pub fn receipts(&self) -> usize {
        self.receipts.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}
