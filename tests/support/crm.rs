//! The customer toolbox the durability and store tests drive: a lookup the
//! CRM counts (and answers "nothing found" for the emails it is told to), a
//! tool with a bug, and a card charge that declines large amounts and
//! hangs on one.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolgate::{Ctx, ToolError, tools};

/// Counts lookups; answers "nothing found" for the emails in `empty_for`.
#[derive(Default)]
pub struct Crm {
    /// Lookups that ran.
    pub lookups: AtomicU32,
    /// Emails the lookup finds nothing for.
    pub empty_for: Mutex<Vec<String>>,
}

/// The tools, over one [`Crm`].
pub struct Tools(pub Arc<Crm>);

#[tools]
impl Tools {
    /// Look up a customer by email.
    #[tool(read_only, widen = "search by the email's domain")]
    async fn lookup_customer(&self, email: String) -> Result<Value, ToolError> {
        self.0.lookups.fetch_add(1, Ordering::SeqCst);
        if self.0.empty_for.lock().unwrap().contains(&email) {
            return Err(ToolError::Empty);
        }
        Ok(json!({"email": email, "id": "cus_1"}))
    }

    /// Explode.
    #[tool(read_only)]
    fn explode(&self) -> Result<Value, ToolError> {
        Err(ToolError::internal("the tool has a bug"))
    }

    /// Charge a customer; amounts over 10,000 are declined, an amount of 13
    /// hangs until the call times out.
    #[tool(destructive, external, timeout = "100ms")]
    async fn charge_card(
        &self,
        #[ctx] ctx: &Ctx,
        #[arg(key)] customer_id: String,
        #[arg(key)] amount_cents: u64,
    ) -> Result<Value, ToolError> {
        if amount_cents == 13 {
            tokio::time::sleep(Duration::from_secs(5)).await;
        }
        if amount_cents > 10_000 {
            return Err(ToolError::rejected("card declined: amount over the limit"));
        }
        Ok(json!({"charge": format!("ch_{customer_id}"), "key": ctx.intent_key()}))
    }
}
