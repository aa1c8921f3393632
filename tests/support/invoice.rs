//! The valid read-only call that the fast path is measured and counted on:
//! an invoice tool whose arguments are 5 fields with nested lines, and the
//! same arguments as a plain type for the floor (parse them with serde and
//! run the function directly). Shared by `benches/handle.rs` and
//! `tests/allocations.rs`, so the bench and the count are of one call.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolgate::{ToolError, tools};

/// One line of an invoice.
#[derive(Deserialize, Serialize, JsonSchema)]
pub struct Line {
    /// What was sold.
    sku: String,
    /// How many.
    quantity: u32,
    /// Price per unit, in cents.
    unit_cents: u64,
}

/// The arguments: an invoice to check.
#[derive(Deserialize, Serialize, JsonSchema)]
pub struct Invoice {
    /// The invoice.
    id: String,
    /// The customer.
    customer_id: String,
    /// ISO currency code.
    currency: String,
    /// Due date.
    due: String,
    /// The lines.
    lines: Vec<Line>,
}

/// What the tool computes: the invoice's total in cents.
pub fn total(invoice: &Invoice) -> u64 {
    invoice.lines.iter().map(|l| u64::from(l.quantity) * l.unit_cents).sum()
}

/// The tools: `invoice_total` alone.
pub struct Billing;

#[tools]
impl Billing {
    /// Total an invoice.
    #[tool(read_only)]
    fn invoice_total(
        &self,
        /// The invoice.
        id: String,
        /// The customer.
        customer_id: String,
        /// ISO currency code.
        currency: String,
        /// Due date.
        due: String,
        /// The lines.
        lines: Vec<Line>,
    ) -> Result<u64, ToolError> {
        let invoice = Invoice {
            id,
            customer_id,
            currency,
            due,
            lines,
        };
        Ok(total(&invoice))
    }
}
