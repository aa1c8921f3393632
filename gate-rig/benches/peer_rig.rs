//! gate next to rig's own tool call: what gate costs per call where a rig
//! user would otherwise call a plain rig tool.
//!
//! The tool is the same read-only lookup on every side, `get_weather(city)`
//! answering the same JSON (built by [`weather`]), called with the same
//! argument text. The peer is a plain rig [`Tool`] (typed arguments, parsed
//! by serde) in a rig-agent [`ToolSet`], called with `ToolSet::execute`,
//! which is what rig's agent loop does with a model's tool call (rig 0.44
//! has no `ToolSet::call`; `execute` is its successor). gate's side is its
//! `#[tools]` toolbox, called two ways:
//!
//! - `task.handle(ToolCall)`, gate's runtime alone: validation against the
//!   schema, the policy, the decision log, the result's sanitizing.
//! - the same task behind gate-rig (`GateTools::toolset`), called with the
//!   same `ToolSet::execute` as the peer: what a rig agent on gate pays,
//!   gate-rig's own handling included (each call runs in a spawned tokio
//!   task, so that a dropped rig run cannot cut gate off mid-call, and is
//!   recorded for `GateTools::calls`).
//!
//! Each gate side runs on the memory store and on SQLite (`sqlite:` in a
//! temp dir), sustained: one task, call after call, so on SQLite the loop
//! runs at the pace of the background writer (`benches/handle.rs` at the
//! workspace root also times bursts shorter than its queue). All run in one
//! group, so criterion shows them side by side; read the ratios of their
//! calls per second, never a bare figure. Every call is checked to have
//! succeeded: a bench of a call that failed would measure something else.
//!
//! Every loop runs in a task on the runtime's workers, where an agent
//! serving requests runs. From `block_on` on a thread of its own (an agent
//! awaited in `#[tokio::main]`'s body) gate-rig's spawned call also pays
//! for waking that thread each time, which on a small machine is several
//! times the call.
//!
//! `cargo bench -p toolgate-rig --bench peer_rig`

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rig_agent::tool::ToolSet;
use rig_core::tool::{Tool, ToolContext, ToolResult};
use serde_json::{Value, json};
use tokio::sync::Mutex;
use toolgate::{Gate, Step, Task, ToolCall, tools};
use toolgate_rig::GateTools;

/// The tool's name on every side.
const TOOL: &str = "get_weather";

/// The argument text every call carries, as a model's tool call has it.
const ARGUMENTS: &str = r#"{"city": "Lisbon"}"#;

/// The user the gate task runs for.
const USER: &str = "bench-user";

/// What every side answers for `city`: the lookup itself, the same work on
/// each.
fn weather(city: &str) -> Value {
    json!({"city": city, "temperature_c": 21, "conditions": "sunny", "wind_kmh": 12})
}

/// The plain rig tool's arguments.
#[derive(serde::Deserialize)]
struct WeatherArgs {
    /// The city to look up.
    city: String,
}

/// The plain rig tool, written as rig's documentation has it.
struct RigWeather;

impl Tool for RigWeather {
    const NAME: &'static str = TOOL;
    type Args = WeatherArgs;
    type Output = Value;
    type Error = Infallible;

    fn description(&self) -> String {
        "The current weather in a city.".to_owned()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city to look up."}},
            "required": ["city"],
        })
    }

    async fn call(&self, _context: &mut ToolContext, args: WeatherArgs) -> Result<Value, Infallible> {
        Ok(weather(&args.city))
    }
}

/// gate's toolbox: the same tool, declared read-only.
struct GateWeather;

#[tools]
impl GateWeather {
    /// The current weather in a city.
    #[tool(read_only)]
    fn get_weather(
        &self,
        /// The city to look up.
        city: String,
    ) -> Value {
        weather(&city)
    }
}

/// Panics unless rig's `result` is the lookup's success.
fn check_rig(result: &ToolResult) {
    assert!(
        result.is_success() && result.output().render().contains("temperature_c"),
        "the benchmarked call must succeed: {}",
        result.output().render()
    );
}

/// Panics unless gate's `step` is the lookup's success.
fn check_gate(step: &Step) {
    assert!(
        matches!(step, Step::Return(out) if !out.is_error) && step.model_text().contains("temperature_c"),
        "the benchmarked call must succeed: {}",
        step.model_text()
    );
}

/// `iters` calls through `toolset` (rig's own tool or gate-rig's), each
/// checked, and the time they took.
async fn timed_toolset_calls(toolset: ToolSet, iters: u64) -> Duration {
    let mut context = ToolContext::default();
    let started = Instant::now();
    for _ in 0..iters {
        check_rig(&toolset.execute(TOOL, ARGUMENTS, &mut context).await);
    }
    started.elapsed()
}

/// `iters` calls through `task.handle`, each checked, and the time they
/// took. Each call is built inside the timing, as rig's side receives the
/// argument text inside it.
async fn timed_handle_calls(task: Arc<Mutex<Task>>, iters: u64) -> Duration {
    let mut task = task.lock().await;
    let started = Instant::now();
    for n in 0..iters {
        let step = task.handle(ToolCall::new(format!("c{n}"), TOOL, ARGUMENTS)).await;
        check_gate(&step);
    }
    started.elapsed()
}

/// The time `timed` reports, run in a task on `runtime`'s workers (see the
/// module docs).
fn on_worker(runtime: &tokio::runtime::Runtime, timed: impl Future<Output = Duration> + Send + 'static) -> Duration {
    runtime
        .block_on(runtime.spawn(timed))
        .expect("the timed loop ran to its end")
}

/// A gate on the store at `url`.
async fn gate(url: &str) -> Gate {
    Gate::builder(GateWeather.into_toolbox())
        .store(url)
        .build()
        .await
        .expect("a gate")
}

/// The group: rig's tool, then gate on each store, both ways.
fn peer_rig(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let dir = std::env::temp_dir().join(format!("gate-bench-peer-rig-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temp dir");

    let mut group = c.benchmark_group("valid read-only call");
    group.throughput(Throughput::Elements(1));

    let rig = ToolSet::from_tools(vec![RigWeather]);
    group.bench_function("rig: ToolSet::execute of a rig Tool", |b| {
        b.iter_custom(|iters| on_worker(&runtime, timed_toolset_calls(rig.clone(), iters)))
    });

    let stores = [
        ("memory", "memory:".to_owned()),
        ("sqlite", format!("sqlite:{}", dir.join("gate.db").display())),
    ];
    for (store, url) in stores {
        let gate = runtime.block_on(gate(&url));
        let task = Arc::new(Mutex::new(gate.task(USER)));
        group.bench_function(format!("gate: task.handle, {store}"), |b| {
            b.iter_custom(|iters| on_worker(&runtime, timed_handle_calls(task.clone(), iters)))
        });
        // A task of its own, so that neither side's calls weigh on the
        // other's state.
        let tools = GateTools::new(gate.task(USER)).expect("the toolbox as rig tools");
        let toolset = tools.toolset();
        group.bench_function(format!("gate via gate-rig: ToolSet::execute, {store}"), |b| {
            b.iter_custom(|iters| on_worker(&runtime, timed_toolset_calls(toolset.clone(), iters)))
        });
        runtime.block_on(gate.shutdown());
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, peer_rig);
criterion_main!(benches);
