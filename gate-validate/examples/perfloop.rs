//! A tight loop over the valid path, for profiling with `perf`.
use gate_validate::Validator;
use schemars::{JsonSchema, schema_for};
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Lookup {
    customer_id: String,
    #[serde(default)]
    include_history: bool,
    limit: Option<u8>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
enum Currency {
    Eur,
    Usd,
    Gbp,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Line {
    sku: String,
    description: String,
    quantity: u32,
    unit_cents: u64,
    tax_rate: f64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Address {
    street: String,
    city: String,
    zip: Option<String>,
    country: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind")]
#[allow(dead_code)]
enum Payment {
    Card { last4: String },
    Transfer { iban: String, reference: Option<String> },
}

/// A larger call: nested structs, a tagged enum and 20 line items.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Invoice {
    customer_id: String,
    currency: Currency,
    lines: Vec<Line>,
    billing: Address,
    shipping: Option<Address>,
    payment: Payment,
    note: Option<String>,
    #[serde(default)]
    draft: bool,
    due_days: u16,
}

fn invoice_text() -> String {
    let lines: Vec<String> = (0..20)
        .map(|i| {
            format!(
                r#"{{"sku":"SKU-{i:04}","description":"Widget number {i}, blue, large","quantity":{q},"unit_cents":{c},"tax_rate":0.2}}"#,
                q = i + 1,
                c = 1999 + i * 100
            )
        })
        .collect();
    format!(
        r#"{{"customer_id":"cus_8f3k2j","currency":"Eur","lines":[{}],"billing":{{"street":"1 Main St","city":"Lyon","zip":"69001","country":"FR"}},"shipping":null,"payment":{{"kind":"Transfer","iban":"FR7630006000011234567890189","reference":"INV-42"}},"note":"deliver before noon","draft":false,"due_days":30}}"#,
        lines.join(",")
    )
}

fn main() {
    let schema = serde_json::to_value(schema_for!(Lookup)).unwrap();
    let v = Validator::new(&schema).unwrap();
    let text = r#"{"customer_id":"cus_8f3k2j","include_history":true,"limit":20}"#;
    let inv_schema = serde_json::to_value(schema_for!(Invoice)).unwrap();
    let inv = Validator::new(&inv_schema).unwrap();
    let inv_text = invoice_text();
    assert!(inv.fast_accepts(&inv_text));
    let mode = std::env::args().nth(1).unwrap_or_default();
    let t = std::time::Instant::now();
    let n: u32 = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5_000_000);
    let mut acc = 0usize;
    for _ in 0..n {
        match mode.as_str() {
            "fast" => acc += v.fast_accepts(std::hint::black_box(text)) as usize,
            "invalid" => {
                acc += v
                    .validate(std::hint::black_box(
                        r#"{"customer_id":12345,"include_histroy":"yes","limit":300}"#,
                    ))
                    .map_err(|r| r.message("lookup_customer").len())
                    .unwrap_err()
            }
            "ifast" => acc += inv.fast_accepts(std::hint::black_box(&inv_text)) as usize,
            "iserde" => acc += serde_json::from_str::<Invoice>(std::hint::black_box(&inv_text)).is_ok() as usize,
            _ => acc += serde_json::from_str::<Lookup>(std::hint::black_box(text)).is_ok() as usize,
        }
    }
    println!(
        "{mode}: {:.1} ns/call ({acc})",
        t.elapsed().as_nanos() as f64 / n as f64
    );
}
