//! Least privilege to data on PostgreSQL: a tool's queries run for the
//! call's principal, so the database's own row-level-security policies
//! decide what the user may read, whatever the model asks for.
//!
//! gate decides which tools a task may call (scopes) and whether a call may
//! run (validation, the guard, approvals); it cannot see which rows a query
//! returns. A model that asks `get_customer` for another user's id is a
//! valid call. The database can refuse it, if it knows who is asking:
//! [`begin_as`] opens a transaction whose transaction-local settings name
//! the principal, and a policy reads them.
//!
//! ```sql
//! alter table customers enable row level security;
//! create policy customers_of_their_owner on customers
//!     using (owner = current_setting('gate.user', true));
//! ```
//!
//! The settings are local to the transaction (`set_config(…, true)`): they
//! end with it, so a pooled connection never carries one user's name into
//! another's query, and a query outside [`begin_as`] sees no user (`NULL`,
//! or `''` on a connection that ran one before) and, under such a policy,
//! no rows. The policy holds only for a role that neither owns the table
//! nor has `BYPASSRLS` (a superuser bypasses every policy): connect the
//! tools' pool as such a role, or `SET ROLE` to one after connecting.

use sqlx::{PgPool, Postgres, Transaction};

use crate::Principal;

/// The setting that holds the principal's user: `current_setting('gate.user', true)`.
pub const USER_SETTING: &str = "gate.user";

/// The setting that holds the principal's scopes, comma-separated in order
/// (`crm:read,billing:charge`): `current_setting('gate.scopes', true)`.
pub const SCOPES_SETTING: &str = "gate.scopes";

/// Begins a transaction on `pool` in which [`USER_SETTING`] is the
/// principal's user and [`SCOPES_SETTING`] its scopes. Run the tool's
/// queries on it (`&mut *tx`) and commit it; dropped, it rolls back.
///
/// One round trip more than `pool.begin()`: the settings are set in one
/// statement.
///
/// ```no_run
/// # async fn demo(pool: sqlx::PgPool, ctx: &toolgate_core::Ctx) -> Result<(), sqlx::Error> {
/// let mut tx = toolgate_core::postgres::begin_as(&pool, ctx.principal()).await?;
/// let names: Vec<(String,)> = sqlx::query_as("select name from customers")
///     .fetch_all(&mut *tx)
///     .await?; // only the rows the policy lets this user read
/// tx.commit().await?;
/// # Ok(()) }
/// ```
pub async fn begin_as(pool: &PgPool, principal: &Principal) -> Result<Transaction<'static, Postgres>, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let scopes = principal.scopes().collect::<Vec<_>>().join(",");
    sqlx::query("select set_config($1, $2, true), set_config($3, $4, true)")
        .bind(USER_SETTING)
        .bind(principal.user())
        .bind(SCOPES_SETTING)
        .bind(scopes)
        .execute(&mut *tx)
        .await?;
    Ok(tx)
}
