//! The valid path (raw text → typed args) of gate-validate against bare
//! `serde_json::from_str` and against jsonschema-then-serde, and the invalid
//! path (raw text → complete message). After criterion's own output, prints
//! the ratios measured side by side in one run.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use schemars::{JsonSchema, schema_for};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolgate_validate::Validator;

/// A small tool call, the most common shape.
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

const LOOKUP: &str = r#"{"customer_id":"cus_8f3k2j","include_history":true,"limit":20}"#;
const LOOKUP_BAD: &str = r#"{"customer_id":12345,"include_histroy":"yes","limit":300}"#;

struct Case<T> {
    name: &'static str,
    text: String,
    gate: Validator,
    js: jsonschema::Validator,
    _t: std::marker::PhantomData<T>,
}

impl<T: JsonSchema + DeserializeOwned> Case<T> {
    fn new(name: &'static str, text: String) -> Self {
        let schema = serde_json::to_value(schema_for!(T)).expect("schema");
        let gate = Validator::new(&schema).expect("gate compiles");
        let js = jsonschema::validator_for(&schema).expect("jsonschema compiles");
        let case = Case {
            name,
            text,
            gate,
            js,
            _t: std::marker::PhantomData,
        };
        // All three paths must agree before their speed means anything.
        assert!(case.serde().is_some() && case.gate().is_some() && case.jsonschema().is_some());
        assert!(case.parse().is_some());
        assert!(
            case.gate.fast_accepts(&case.text),
            "the valid path must be the fast pass"
        );
        case
    }
    fn serde(&self) -> Option<T> {
        serde_json::from_str::<T>(black_box(&self.text)).ok()
    }
    fn gate(&self) -> Option<T> {
        let text = self.gate.validate(black_box(&self.text)).ok()?;
        serde_json::from_str::<T>(&text).ok()
    }
    fn parse(&self) -> Option<T> {
        self.gate.parse::<T>(black_box(&self.text)).ok()
    }
    fn jsonschema(&self) -> Option<T> {
        let value: Value = serde_json::from_str(black_box(&self.text)).ok()?;
        if !self.js.is_valid(&value) {
            return None;
        }
        serde_json::from_value::<T>(value).ok()
    }
}

fn bench_case<T: JsonSchema + DeserializeOwned>(c: &mut Criterion, case: &Case<T>) {
    let mut g = c.benchmark_group(format!("valid/{}", case.name));
    g.bench_function("serde_json", |b| b.iter(|| case.serde()));
    g.bench_function("gate validate+serde", |b| b.iter(|| case.gate()));
    g.bench_function("gate parse", |b| b.iter(|| case.parse()));
    g.bench_function("jsonschema+serde", |b| b.iter(|| case.jsonschema()));
    g.finish();
}

fn benches(c: &mut Criterion) {
    bench_case(c, &Case::<Lookup>::new("lookup", LOOKUP.to_string()));
    bench_case(c, &Case::<Invoice>::new("invoice", invoice_text()));
    let lookup = Case::<Lookup>::new("lookup", LOOKUP.to_string());
    let mut g = c.benchmark_group("invalid/lookup");
    g.bench_function("gate message", |b| {
        b.iter(|| {
            lookup
                .gate
                .validate(black_box(LOOKUP_BAD))
                .err()
                .map(|r| r.message("lookup_customer"))
        })
    });
    g.bench_function("serde_json error", |b| {
        b.iter(|| {
            serde_json::from_str::<Lookup>(black_box(LOOKUP_BAD))
                .err()
                .map(|e| e.to_string())
        })
    });
    g.finish();
}

/// Mean time per call of `f`, over rounds interleaved with the other
/// contenders so that machine noise hits all of them alike.
fn time_per_call(rounds: &mut [(&str, &dyn Fn())], total: Duration) -> Vec<(String, f64)> {
    let mut spent = vec![Duration::ZERO; rounds.len()];
    let mut calls = vec![0u64; rounds.len()];
    let start = Instant::now();
    while start.elapsed() < total {
        for (i, (_, f)) in rounds.iter().enumerate() {
            let t = Instant::now();
            for _ in 0..200 {
                f();
            }
            spent[i] += t.elapsed();
            calls[i] += 200;
        }
    }
    rounds
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.to_string(), spent[i].as_nanos() as f64 / calls[i] as f64))
        .collect()
}

fn ratios<T: JsonSchema + DeserializeOwned>(case: &Case<T>) {
    let serde = || {
        black_box(case.serde());
    };
    let gate = || {
        black_box(case.gate());
    };
    let js = || {
        black_box(case.jsonschema());
    };
    let parse = || {
        black_box(case.parse());
    };
    let times = time_per_call(
        &mut [("serde", &serde), ("gate", &gate), ("js", &js), ("parse", &parse)],
        Duration::from_secs(4),
    );
    println!(
        "ratio valid/{}: gate validate+serde / serde_json = {:.2}x, gate parse / serde_json = {:.2}x, jsonschema+serde / serde_json = {:.2}x, gate validate+serde / jsonschema+serde = {:.2}x  (serde {:.0} ns, validate+serde {:.0} ns, parse {:.0} ns, jsonschema+serde {:.0} ns)",
        case.name,
        times[1].1 / times[0].1,
        times[3].1 / times[0].1,
        times[2].1 / times[0].1,
        times[1].1 / times[2].1,
        times[0].1,
        times[1].1,
        times[3].1,
        times[2].1,
    );
}

criterion_group!(group, benches);

fn main() {
    group();
    criterion::Criterion::default().configure_from_args().final_summary();
    ratios(&Case::<Lookup>::new("lookup", LOOKUP.to_string()));
    ratios(&Case::<Invoice>::new("invoice", invoice_text()));
    let lookup = Case::<Lookup>::new("lookup", LOOKUP.to_string());
    let serde_ok = || {
        black_box(lookup.serde());
    };
    let invalid = || {
        black_box(
            lookup
                .gate
                .validate(black_box(LOOKUP_BAD))
                .err()
                .map(|r| r.message("lookup_customer")),
        );
    };
    let times = time_per_call(
        &mut [("serde", &serde_ok), ("invalid", &invalid)],
        Duration::from_secs(2),
    );
    println!(
        "ratio invalid/lookup: gate complete message / serde_json valid parse = {:.2}x  ({:.0} ns per rejection)",
        times[1].1 / times[0].1,
        times[1].1
    );
}
