//! A tool crate as a user writes one when `gate` is its only dependency:
//! argument and result types derive `Deserialize`, `Serialize` and
//! `JsonSchema` through gate's re-exports, with the `crate` attributes
//! serde and schemars provide, so the manifest lists no serde or schemars.

use toolgate::{Deserialize, JsonSchema, Serialize, ToolError, Toolbox, tool, toolbox};

/// One line of an order.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolgate::serde")]
#[schemars(crate = "toolgate::schemars")]
pub struct Line {
    /// What was sold.
    pub sku: String,
    /// How many.
    pub quantity: u32,
}

/// What `count_items` finds.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolgate::serde")]
#[schemars(crate = "toolgate::schemars")]
pub struct Count {
    /// Items over all lines.
    pub items: u32,
    /// Distinct SKUs.
    pub skus: usize,
}

/// Count the items of an order.
#[tool(read_only)]
pub fn count_items(
    /// The order's lines.
    lines: Vec<Line>,
) -> Result<Count, ToolError> {
    let mut skus: Vec<&str> = lines.iter().map(|l| l.sku.as_str()).collect();
    skus.sort_unstable();
    skus.dedup();
    Ok(Count {
        items: lines.iter().map(|l| l.quantity).sum(),
        skus: skus.len(),
    })
}

/// The crate's tools.
pub fn tools() -> Toolbox {
    toolbox![count_items]
}
