//! The CRM on PostgreSQL, with row-level security: each billing team sees
//! its own customers and invoices, whatever the model asks for.
//!
//! With `--store postgres://…` the demo keeps its CRM beside gate's ledger,
//! in the schema `invoice_crm`. Every customer has an owner (a gate user);
//! a policy on each table lets a query read only the rows whose owner is
//! `current_setting('gate.user')`, which `toolgate::postgres::begin_as`
//! sets, per transaction, to the call's principal. The tools' pool runs as
//! `invoice_crm_reader`, a role that neither owns the tables nor bypasses
//! row-level security (the role that creates the schema owns the tables,
//! and an owner, like a superuser, is not held by policies). So a model
//! that asks `get_invoice` for another team's invoice by its id gets what
//! it would get for an invoice that does not exist.

use sqlx::postgres::PgPoolOptions;
use sqlx::{Executor, PgPool, Row};
use toolgate::{Principal, ToolError};

use super::backend::{Customer, Invoice};

/// The role the tools' queries run as.
pub const READER_ROLE: &str = "invoice_crm_reader";

/// The owner of the customer no billing team of the demo may read.
pub const OTHER_TEAM: &str = "sales-team";

/// The other team's customer and invoice: a model that asks for them by id
/// must not get them.
pub const OTHER_CUSTOMER: (&str, &str, &str) = ("cus_zed", "zed@umbrella.com", "Zed Novak");
/// The other team's invoice (`INV-99`, for [`OTHER_CUSTOMER`]).
pub const OTHER_INVOICE: &str = "INV-99";

/// The schema, the policies and the role; run once per database, under a
/// lock so that two demos starting together do not race on them.
const SCHEMA: &str = r#"
select pg_advisory_xact_lock(7240113);
create schema if not exists invoice_crm;
create table if not exists invoice_crm.customers (
    owner text not null,
    id text not null,
    email text not null,
    name text not null,
    primary key (owner, id)
);
create table if not exists invoice_crm.invoices (
    owner text not null,
    id text not null,
    customer_id text not null,
    amount_cents bigint not null,
    currency text not null,
    primary key (owner, id),
    foreign key (owner, customer_id) references invoice_crm.customers (owner, id)
);
alter table invoice_crm.customers enable row level security;
alter table invoice_crm.invoices enable row level security;
drop policy if exists of_their_owner on invoice_crm.customers;
create policy of_their_owner on invoice_crm.customers
    using (owner = current_setting('gate.user', true));
drop policy if exists of_their_owner on invoice_crm.invoices;
create policy of_their_owner on invoice_crm.invoices
    using (owner = current_setting('gate.user', true));
do $$ begin
    if not exists (select from pg_roles where rolname = 'invoice_crm_reader') then
        create role invoice_crm_reader nologin nosuperuser nobypassrls;
    end if;
end $$;
grant usage on schema invoice_crm to invoice_crm_reader;
grant select on invoice_crm.customers, invoice_crm.invoices to invoice_crm_reader;
"#;

/// The CRM: a pool whose connections run as [`READER_ROLE`].
#[derive(Clone, Debug)]
pub struct PgCrm {
    pool: PgPool,
}

fn unavailable(e: sqlx::Error) -> ToolError {
    ToolError::internal(format!("the CRM could not be read: {e}"))
}

impl PgCrm {
    /// Connects to `url` (as a role that may create the schema and the
    /// reader role, and `SET ROLE` to it), creates what is missing, and
    /// gives `owner` the demo's three customers and invoices, beside the
    /// other team's.
    pub async fn open(url: &str, owner: &str) -> Result<Self, sqlx::Error> {
        let admin = PgPoolOptions::new().max_connections(1).connect(url).await?;
        let mut tx = admin.begin().await?;
        tx.execute(SCHEMA).await?;
        let (other_id, other_email, other_name) = OTHER_CUSTOMER;
        let customers = [
            (owner, "cus_ann", "ann@acme.com", "Ann Lee"),
            (owner, "cus_bob", "bob@globex.com", "Bob Ode"),
            (owner, "cus_carol", "carol.smith@initech.com", "Carol Smith"),
            (OTHER_TEAM, other_id, other_email, other_name),
        ];
        for (who, id, email, name) in customers {
            sqlx::query("insert into invoice_crm.customers values ($1, $2, $3, $4) on conflict do nothing")
                .bind(who)
                .bind(id)
                .bind(email)
                .bind(name)
                .execute(&mut *tx)
                .await?;
        }
        let invoices = [
            (owner, "INV-41", "cus_ann", 12_000_i64),
            (owner, "INV-42", "cus_bob", 4_500),
            (owner, "INV-43", "cus_carol", 990),
            (OTHER_TEAM, OTHER_INVOICE, other_id, 250_000),
        ];
        for (who, id, customer, cents) in invoices {
            sqlx::query("insert into invoice_crm.invoices values ($1, $2, $3, $4, 'EUR') on conflict do nothing")
                .bind(who)
                .bind(id)
                .bind(customer)
                .bind(cents)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        admin.close().await;
        let pool = PgPoolOptions::new()
            .max_connections(4)
            .after_connect(|conn, _| {
                Box::pin(async move {
                    conn.execute("set role invoice_crm_reader").await?;
                    Ok(())
                })
            })
            .connect(url)
            .await?;
        Ok(PgCrm { pool })
    }

    async fn customers_where(
        &self,
        principal: &Principal,
        condition: Option<(&str, &str)>,
    ) -> Result<Vec<Customer>, ToolError> {
        let mut tx = toolgate::postgres::begin_as(&self.pool, principal)
            .await
            .map_err(unavailable)?;
        let (filter, value) = condition.map_or(("", None), |(filter, value)| (filter, Some(value)));
        let sql = format!("select id, email, name from invoice_crm.customers {filter} order by id");
        let mut query = sqlx::query(&sql);
        if let Some(value) = value {
            query = query.bind(value);
        }
        let rows = query.fetch_all(&mut *tx).await.map_err(unavailable)?;
        tx.commit().await.map_err(unavailable)?;
        Ok(rows
            .iter()
            .map(|row| Customer {
                id: row.get("id"),
                email: row.get("email"),
                name: row.get("name"),
            })
            .collect())
    }

    /// The customer with `email`, among those `principal` may read.
    pub async fn customer_by_email(&self, principal: &Principal, email: &str) -> Result<Option<Customer>, ToolError> {
        let found = self
            .customers_where(principal, Some(("where lower(email) = lower($1)", email)))
            .await?;
        Ok(found.into_iter().next())
    }

    /// The customers in `domain` that `principal` may read.
    pub async fn customers_in_domain(&self, principal: &Principal, domain: &str) -> Result<Vec<Customer>, ToolError> {
        let suffix = format!("%@{}", domain.trim_start_matches('@').to_ascii_lowercase());
        self.customers_where(principal, Some(("where lower(email) like $1", &suffix)))
            .await
    }

    /// Every customer `principal` may read.
    pub async fn customers(&self, principal: &Principal) -> Result<Vec<Customer>, ToolError> {
        self.customers_where(principal, None).await
    }

    /// The invoice `id`, when `principal` may read it.
    pub async fn invoice(&self, principal: &Principal, id: &str) -> Result<Option<Invoice>, ToolError> {
        let mut tx = toolgate::postgres::begin_as(&self.pool, principal)
            .await
            .map_err(unavailable)?;
        let row = sqlx::query("select id, customer_id, amount_cents, currency from invoice_crm.invoices where id = $1")
            .bind(id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(unavailable)?;
        tx.commit().await.map_err(unavailable)?;
        Ok(row.map(|row| Invoice {
            id: row.get("id"),
            customer_id: row.get("customer_id"),
            amount_cents: u64::try_from(row.get::<i64, _>("amount_cents")).unwrap_or(0),
            currency: row.get("currency"),
        }))
    }

    /// Who the tools' queries run as, and whether that role owns the
    /// customers table or bypasses row-level security: what the policies
    /// rely on.
    pub async fn reader(&self) -> Result<(String, bool, bool), sqlx::Error> {
        let row = sqlx::query(
            "select current_user::text as who, \
                    pg_has_role(current_user, (select tableowner from pg_tables where schemaname = 'invoice_crm' and tablename = 'customers'), 'USAGE') as owns, \
                    (select rolbypassrls or rolsuper from pg_roles where rolname = current_user) as bypasses",
        )
        .fetch_one(&self.pool)
        .await?;
        Ok((row.get("who"), row.get("owns"), row.get("bypasses")))
    }
}
