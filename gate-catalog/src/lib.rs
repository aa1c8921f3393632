//! The example toolbox: one tool per argument shape.
//!
//! `gate manifest` prints it when no `--tools` file is given, and gate's
//! manifest tests (`tests/manifests.rs`) compare its output in every
//! dialect with the expected files under `tests/manifests/`. It is a crate
//! of its own so that both depend on the same catalog without one reaching
//! into the other's sources. It is published because the command ships it,
//! and it takes `gate` without default features because the tests that
//! check it also run in gate's lean build.
#![forbid(unsafe_code)]

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolgate::{Ctx, ToolError, Toolbox, tool, toolbox};

/// A postal address.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Address {
    /// Street and number.
    pub street: String,
    /// Postal code.
    pub zip: String,
    /// ISO 3166-1 alpha-2 country code.
    pub country: Option<String>,
}

/// How fast to ship.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Speed {
    /// Cheapest.
    Standard,
    /// Next day.
    Express,
}

/// A payment method, tagged by `kind`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PaymentMethod {
    /// A stored card.
    Card {
        /// The card's token.
        token: String,
    },
    /// A bank transfer.
    Transfer {
        /// The IBAN to pay from.
        iban: String,
    },
}

/// A calendar date as `YYYY-MM-DD`, kept as a string (no date crate needed):
/// the schema says `"format": "date"`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(transparent)]
#[schemars(extend("format" = "date"))]
pub struct Date(pub String);

/// A node of a category tree.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Category {
    /// Category name.
    pub name: String,
    /// Sub-categories.
    pub children: Vec<Category>,
}

/// A line of an order.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Line {
    /// Stock keeping unit.
    pub sku: String,
    /// How many.
    pub quantity: u32,
}

/// What every catalog tool returns.
#[derive(Debug, Serialize)]
pub struct Ack {
    /// What the tool understood.
    pub received: String,
}

fn ack(received: impl std::fmt::Debug) -> Ack {
    Ack {
        received: format!("{received:?}"),
    }
}

/// Echo scalar arguments: text, every integer width, floats and a flag.
#[tool(read_only)]
#[allow(clippy::too_many_arguments)]
pub fn scalars(
    /// Some text.
    text: String,
    /// An 8-bit signed integer.
    i8_value: i8,
    /// A 16-bit signed integer.
    i16_value: i16,
    /// A 32-bit signed integer.
    i32_value: i32,
    /// A 64-bit signed integer.
    i64_value: i64,
    /// An 8-bit unsigned integer.
    u8_value: u8,
    /// A 16-bit unsigned integer.
    u16_value: u16,
    /// A 32-bit unsigned integer.
    u32_value: u32,
    /// A 64-bit unsigned integer.
    u64_value: u64,
    /// A 32-bit float.
    f32_value: f32,
    /// A 64-bit float.
    f64_value: f64,
    /// A flag.
    #[arg(default)]
    flag: bool,
) -> Ack {
    ack((
        text, i8_value, i16_value, i32_value, i64_value, u8_value, u16_value, u32_value, u64_value, f32_value,
        f64_value, flag,
    ))
}

/// Create a shipment to an address.
#[tool(idempotent, external, title = "Create shipment")]
pub async fn create_shipment(
    #[ctx] ctx: &Ctx,
    /// Where to ship.
    #[arg(key)]
    address: Address,
    /// Order lines.
    #[arg(key)]
    lines: Vec<Line>,
    /// Shipping speed.
    speed: Speed,
    /// Note for the courier.
    note: Option<String>,
    /// Delivery date.
    deliver_on: Option<Date>,
) -> Result<Ack, ToolError> {
    Ok(ack((ctx.intent_key(), address, lines, speed, note, deliver_on)))
}

/// Pay for an order.
#[tool(destructive, external)]
pub async fn pay(
    /// The order to pay.
    #[arg(key)]
    order_id: String,
    /// How to pay.
    method: PaymentMethod,
) -> Result<Ack, ToolError> {
    Ok(ack((order_id, method)))
}

/// Set custom attributes on a product.
#[tool(idempotent)]
pub fn set_attributes(
    /// Product id.
    product_id: String,
    /// Attribute values by name.
    attributes: HashMap<String, i64>,
) -> Ack {
    let mut sorted: Vec<_> = attributes.into_iter().collect();
    sorted.sort();
    ack((product_id, sorted))
}

/// Move a pallet to a grid position.
#[tool(idempotent)]
pub fn move_pallet(
    /// Pallet id.
    pallet: String,
    /// Target (row, column).
    position: (u16, u16),
) -> Ack {
    ack((pallet, position))
}

/// Store an arbitrary JSON document.
#[tool(writes, external)]
pub fn store_document(
    /// The document.
    document: serde_json::Value,
) -> Ack {
    ack(document)
}

/// Import a category tree.
#[tool(idempotent)]
pub fn import_categories(
    /// The root category.
    root: Category,
) -> Ack {
    ack(root)
}

/// Update a contact; every field is optional.
#[tool(idempotent)]
pub fn update_contact(
    /// Contact id.
    #[arg(key, rename = "contactId")]
    contact_id: u64,
    /// New address, if it changed.
    address: Option<Address>,
    /// Preferred shipping speed, if any.
    speed: Option<Speed>,
    /// Tags to set.
    #[arg(default)]
    tags: Vec<String>,
    /// Credit score between 0 and 1.
    score: Option<f64>,
) -> Result<Ack, ToolError> {
    Ok(ack((contact_id, address, speed, tags, score)))
}

/// Every example tool.
pub fn toolbox() -> Toolbox {
    toolbox![
        scalars,
        create_shipment,
        pay,
        set_attributes,
        move_pallet,
        store_document,
        import_categories,
        update_contact
    ]
}
