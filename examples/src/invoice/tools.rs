//! The invoice agent's tools, over the simulated backend.
//!
//! Their effect flags are the point: the reads are `read_only` (retried with a
//! correction when a call is ambiguous), `charge_card` and `send_receipt` are
//! not idempotent (a timeout is failed and reconciled, never retried), and
//! `refund` is idempotent by intent key. The reads take the call's context:
//! on the PostgreSQL CRM ([`PgCrm`]) they run for its principal.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use toolgate::{Ctx, ToolError, tools};

use super::backend::{Backend, Customer, Fault, Invoice};
use super::crm::PgCrm;

/// What `charge_card` returns: the payment provider's charge.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ChargeResult {
    /// The provider's charge id.
    pub charge_id: String,
    /// The invoice paid.
    pub invoice_id: String,
    /// `succeeded`.
    pub status: String,
}

/// What `send_receipt` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ReceiptSent {
    /// Receipts sent so far, this one included.
    pub sent: usize,
}

/// What `refund` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RefundResult {
    /// The charge refunded.
    pub charge_id: String,
    /// Always true: the refund is done (now or before).
    pub refunded: bool,
    /// False when this intent had already been refunded.
    pub first_request: bool,
}

/// The tools, sharing one backend.
pub struct InvoiceTools {
    backend: Arc<Backend>,
    /// The CRM on PostgreSQL, read for the call's principal; without it,
    /// the backend's own customers and invoices, which every user sees.
    crm: Option<PgCrm>,
}

impl InvoiceTools {
    /// Tools over `backend`.
    pub fn new(backend: Arc<Backend>) -> Self {
        InvoiceTools { backend, crm: None }
    }

    /// Tools over `backend` whose customers and invoices are `crm`'s.
    pub fn with_crm(backend: Arc<Backend>, crm: PgCrm) -> Self {
        InvoiceTools {
            backend,
            crm: Some(crm),
        }
    }

    fn read_fault(&self, tool: &str) -> Result<(), ToolError> {
        match self.backend.fault(tool) {
            Fault::None | Fault::TimeoutAfterEffect => Ok(()),
            Fault::ForbiddenNoBody => Err(ToolError::Forbidden { body: None }),
            Fault::UnavailableBefore => Err(ToolError::Unavailable),
        }
    }
}

#[tools]
impl InvoiceTools {
    /// Look up a customer by email address. Returns the customer's id and name.
    #[tool(
        read_only,
        discovery = "list_customers",
        widen = "search by the email's domain with search_customers"
    )]
    async fn lookup_customer(
        &self,
        #[ctx] ctx: &Ctx,
        /// The customer's email address.
        email: String,
        /// Include the order history.
        #[arg(default)]
        include_history: bool,
    ) -> Result<Customer, ToolError> {
        self.read_fault("lookup_customer")?;
        let _ = include_history;
        let found = match &self.crm {
            Some(crm) => crm.customer_by_email(ctx.principal(), &email).await?,
            None => self.backend.customer_by_email(&email).cloned(),
        };
        found.ok_or(ToolError::Empty)
    }

    /// Search customers by email domain, e.g. `acme.com`.
    #[tool(read_only)]
    async fn search_customers(
        &self,
        #[ctx] ctx: &Ctx,
        /// The email domain.
        domain: String,
    ) -> Result<Vec<Customer>, ToolError> {
        self.read_fault("search_customers")?;
        let found = match &self.crm {
            Some(crm) => crm.customers_in_domain(ctx.principal(), &domain).await?,
            None => self.backend.customers_in_domain(&domain),
        };
        if found.is_empty() {
            Err(ToolError::Empty)
        } else {
            Ok(found)
        }
    }

    /// List every customer this account may access.
    #[tool(read_only)]
    async fn list_customers(&self, #[ctx] ctx: &Ctx) -> Result<Vec<Customer>, ToolError> {
        self.read_fault("list_customers")?;
        match &self.crm {
            Some(crm) => crm.customers(ctx.principal()).await,
            None => Ok(self.backend.customers().to_vec()),
        }
    }

    /// Get an invoice by id (`INV-41`).
    #[tool(read_only)]
    async fn get_invoice(
        &self,
        #[ctx] ctx: &Ctx,
        /// The invoice id.
        invoice_id: String,
    ) -> Result<Invoice, ToolError> {
        self.read_fault("get_invoice")?;
        let found = match &self.crm {
            Some(crm) => crm.invoice(ctx.principal(), &invoice_id).await?,
            None => self.backend.invoice(&invoice_id).cloned(),
        };
        found.ok_or(ToolError::NotFound)
    }

    /// Charge a customer's card for an invoice. Not idempotent: never call it
    /// twice for one invoice.
    #[tool(destructive, external)]
    async fn charge_card(
        &self,
        #[ctx] ctx: &Ctx,
        /// The customer to charge.
        #[arg(key)]
        customer_id: String,
        /// Amount in cents.
        #[arg(key)]
        amount_cents: u64,
        /// The invoice being paid.
        #[arg(key)]
        invoice_id: String,
    ) -> Result<ChargeResult, ToolError> {
        match self.backend.fault("charge_card") {
            Fault::UnavailableBefore => Err(ToolError::Unavailable),
            Fault::ForbiddenNoBody => Err(ToolError::Forbidden { body: None }),
            fault => {
                // The intent key is the payment provider's idempotency key.
                let charge = self.backend.charge(ctx.intent_key(), &customer_id, amount_cents);
                if fault == Fault::TimeoutAfterEffect {
                    return Err(ToolError::Timeout);
                }
                Ok(ChargeResult {
                    charge_id: charge.id,
                    invoice_id,
                    status: "succeeded".to_owned(),
                })
            }
        }
    }

    /// Email the customer a receipt for a paid invoice.
    #[tool(writes, external)]
    async fn send_receipt(
        &self,
        /// The customer.
        customer_id: String,
        /// The paid invoice.
        invoice_id: String,
    ) -> Result<ReceiptSent, ToolError> {
        match self.backend.fault("send_receipt") {
            Fault::UnavailableBefore => Err(ToolError::Unavailable),
            Fault::TimeoutAfterEffect => {
                self.backend.send_receipt(&customer_id, &invoice_id);
                Err(ToolError::Timeout)
            }
            _ => Ok(ReceiptSent {
                sent: self.backend.send_receipt(&customer_id, &invoice_id),
            }),
        }
    }

    /// Refund a charge. Idempotent by intent key: repeating it refunds once.
    #[tool(destructive, idempotent)]
    async fn refund(
        &self,
        #[ctx] ctx: &Ctx,
        /// The charge to refund.
        charge_id: String,
    ) -> Result<RefundResult, ToolError> {
        let first = self.backend.refund(ctx.intent_key());
        Ok(RefundResult {
            charge_id,
            refunded: true,
            first_request: first,
        })
    }
}
