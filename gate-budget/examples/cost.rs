//! Prints the cost model's report for the worked example (3 steps, 4,000
//! system tokens, 2,000 per step, retry rate 0.2), as `gate cost` would.

use toolgate_budget::cost::{CostParams, expected_tokens, render_text};

fn main() -> Result<(), toolgate_budget::BudgetError> {
    let mut params = CostParams::new(3, 4_000, 2_000);
    params.retry_rate = 0.2;
    params.seed = 1;
    let report = expected_tokens(&params)?;
    print!("{}", render_text(&report));
    Ok(())
}
