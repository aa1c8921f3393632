//! gate-mcp next to a plain rmcp server, driven by the same rmcp client:
//! what serving a tool through gate costs per call, where a model's client
//! sees it, over both transports.
//!
//! The tool is the same read-only lookup on both sides, `get_weather(city)`,
//! answering the same JSON (built by [`weather`]). The peer is written as
//! rmcp's documentation has it: `#[tool_router]`, `#[tool]` and
//! `Parameters<T>` with a schemars schema, which hands the arguments to serde
//! and nothing else. gate-mcp serves a gate `#[tools]` toolbox on the
//! `memory:` store (gate-mcp's tests use it too): each call is validated
//! against the tool's schema, decided by gate's policy, logged, and its
//! result sanitized.
//!
//! Each group holds both servers for one transport and one kind of call, so
//! criterion shows them side by side; read the ratio of their calls per
//! second, never a bare figure (the client's own cost, the transport and
//! the scheduler are in both).
//!
//! - stdio: the server is a child process (this bench binary itself,
//!   started again with [`SERVE_STDIO`] naming the server), reading and
//!   writing pipes through rmcp's `stdio_pipes`, as an MCP client launches
//!   a local server.
//! - streamable HTTP: both servers in this process on 127.0.0.1, each on a
//!   random port, mounted on the same hyper-util stack gate-mcp's
//!   `serve_http` uses, with rmcp's default server configuration (sessions,
//!   answers as SSE). The client starts with `initialize` (2025-11-25), so a
//!   run is one HTTP session, and one gate task.
//!
//! Kinds of call:
//!
//! - valid: `{"city": "Lisbon"}`, in the connection's task.
//! - invalid: `{"city": 42}`, a wrong type. Both answer with a tool result
//!   whose `isError` is set: rmcp's text is serde's ("failed to deserialize
//!   parameters: invalid type: …"), gate's its rejection, naming the
//!   argument and how to fix it. Gate fails a task at its second
//!   rejection (the same rejection twice, or the rejection cap), so each
//!   invalid call names a task of its own (`_meta.gate/task`), which is a
//!   model's first wrong call in a task; the peer gets the same `_meta`, so
//!   both read the same bytes. The gate's repair-token budget is set to its
//!   maximum, so that a run's many rejections for one user measure the
//!   rejection and not the budget running out.
//!
//! Both sides are checked on every call: a bench of a call that failed
//! otherwise than expected would measure something else.
//!
//! After each transport's groups, the same calls are timed interleaved:
//! rounds of a burst through each client, back to back, and the median of
//! the rounds' ratios is printed (`gate / rmcp calls per second … 0.85x`).
//! That is the figure to read: criterion times one server after the other,
//! and on a shared machine their ratio moves with it.
//!
//! `cargo bench -p toolgate-mcp --bench peer_rmcp`

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, MetaObject, RequestMetaObject, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde_json::{Map, Value, json};
use tokio::net::TcpListener;
use toolgate::{Budget, Gate, tools};
use toolgate_mcp::{META_ACTION, McpServer};

/// The environment variable that turns this binary into a stdio server:
/// `rmcp` or `gate`. The stdio bench starts itself again with it set, so the
/// servers need no binary or example of their own.
const SERVE_STDIO: &str = "GATE_BENCH_PEER_RMCP_SERVE";

/// The user gate runs the calls for.
const USER: &str = "bench-user";

/// What both servers answer for `city`: the lookup itself, the same work on
/// both sides.
fn weather(city: &str) -> Value {
    json!({"city": city, "temperature_c": 21, "conditions": "sunny", "wind_kmh": 12})
}

/// The arguments of the plain rmcp tool, as rmcp's examples declare them.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct WeatherRequest {
    /// The city to look up.
    city: String,
}

/// The plain rmcp server: the tool router its macros build, and nothing else.
#[derive(Clone)]
struct RmcpWeather {
    /// What `#[tool_router]` builds; `#[tool_handler]` dispatches on it.
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl RmcpWeather {
    /// A server with its one tool.
    fn new() -> Self {
        RmcpWeather {
            tool_router: Self::tool_router(),
        }
    }

    /// The rmcp tool: serde's parse of the arguments, then the lookup,
    /// answered as JSON text (what gate answers for an untyped result).
    #[tool(description = "The current weather in a city.", annotations(read_only_hint = true))]
    fn get_weather(&self, Parameters(WeatherRequest { city }): Parameters<WeatherRequest>) -> String {
        weather(&city).to_string()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RmcpWeather {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
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

/// The gate gate-mcp serves: the memory store, the repair-token budget at
/// its maximum (see the module docs).
async fn gate() -> Gate {
    let budget = Budget::default()
        .with_repair_tokens(toolgate::budget::MAX_REPAIR_TOKENS)
        .expect("the maximum is a valid budget");
    Gate::builder(GateWeather.into_toolbox())
        .store("memory:")
        .budget(budget)
        .build()
        .await
        .expect("a gate on the memory store")
}

/// A server under measurement.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Server {
    /// The plain rmcp `#[tool]` server.
    Rmcp,
    /// gate-mcp serving the gate toolbox.
    Gate,
}

impl Server {
    /// Both, in the order criterion lists them.
    const BOTH: [Server; 2] = [Server::Rmcp, Server::Gate];

    /// The name in the bench's ids and in [`SERVE_STDIO`].
    fn name(self) -> &'static str {
        match self {
            Server::Rmcp => "rmcp",
            Server::Gate => "gate",
        }
    }

    /// The server named `name` in [`SERVE_STDIO`].
    fn from_name(name: &str) -> Server {
        Server::BOTH
            .into_iter()
            .find(|s| s.name() == name)
            .unwrap_or_else(|| panic!("{SERVE_STDIO} must be `rmcp` or `gate`, not `{name}`"))
    }
}

/// The kind of call measured.
#[derive(Clone, Copy)]
enum Kind {
    /// The arguments the schema asks for.
    Valid,
    /// `city` given as a number.
    Invalid,
}

impl Kind {
    /// Both, in the order the groups run.
    const BOTH: [Kind; 2] = [Kind::Valid, Kind::Invalid];

    /// The name in the groups' ids.
    fn name(self) -> &'static str {
        match self {
            Kind::Valid => "valid",
            Kind::Invalid => "invalid (wrong type)",
        }
    }
}

/// Distinct task names across the run, so that each invalid call is the
/// first rejection of a task (see the module docs).
static NEXT_TASK: AtomicU64 = AtomicU64::new(0);

/// The `tools/call` request of one call of `kind`.
fn request(kind: Kind) -> CallToolRequestParams {
    let (arguments, meta) = match kind {
        Kind::Valid => (json!({"city": "Lisbon"}), Map::new()),
        Kind::Invalid => {
            let task = format!("bench-invalid-{}", NEXT_TASK.fetch_add(1, Ordering::Relaxed));
            (
                json!({"city": 42}),
                Map::from_iter([("gate/task".to_owned(), Value::from(task))]),
            )
        }
    };
    let Value::Object(arguments) = arguments else {
        unreachable!("the arguments are an object")
    };
    let mut params = CallToolRequestParams::new("get_weather").with_arguments(arguments);
    if !meta.is_empty() {
        params.meta = Some(RequestMetaObject(MetaObject(meta)));
    }
    params
}

/// The text of a tool result.
fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

/// What gate decided for `result`, from its `_meta` (`return`, `reject`, …).
fn gate_action(result: &CallToolResult) -> Option<&str> {
    result.meta.as_ref()?.0.get(META_ACTION)?.as_str()
}

/// Panics unless `answer` is what `server` answers to a call of `kind`: the
/// lookup's JSON for a valid call (and gate's `return`); for an invalid one,
/// an error result, with serde's text from rmcp and gate's rejection (not
/// its failure of the task, which would mean the run measures something
/// else) naming `/city`.
fn check(server: Server, kind: Kind, answer: &Result<CallToolResult, ServiceError>) {
    let ok = match (kind, server, answer) {
        (Kind::Valid, Server::Rmcp, Ok(result)) => {
            result.is_error != Some(true) && text(result).contains(r#""temperature_c""#)
        }
        (Kind::Valid, Server::Gate, Ok(result)) => {
            gate_action(result) == Some("return") && text(result).contains(r#""temperature_c""#)
        }
        (Kind::Invalid, Server::Rmcp, Ok(result)) => {
            result.is_error == Some(true) && text(result).starts_with("failed to deserialize parameters")
        }
        (Kind::Invalid, Server::Gate, Ok(result)) => {
            result.is_error == Some(true) && gate_action(result) == Some("reject") && text(result).contains("/city")
        }
        _ => false,
    };
    assert!(
        ok,
        "{} answered a {} call unexpectedly: {answer:?}",
        server.name(),
        kind.name()
    );
}

/// A connected client: rmcp's, with its default configuration.
type Client = RunningService<RoleClient, ClientConfig>;

/// `iters` calls of `kind` from `client` to `server`, one after the other,
/// each checked, and the time they took.
async fn timed_calls(client: Arc<Client>, server: Server, kind: Kind, iters: u64) -> Duration {
    let started = Instant::now();
    for _ in 0..iters {
        let answer = client.call_tool(request(kind)).await;
        check(server, kind, &answer);
    }
    started.elapsed()
}

/// One transport's groups: each kind of call measured on both servers, each
/// through its own client, in one group. The calls are made from a task on
/// the runtime's workers, where an agent serving requests makes them, not
/// from `block_on`'s thread, which each answer would have to wake.
fn transport(c: &mut Criterion, runtime: &tokio::runtime::Runtime, transport: &str, clients: &[(Server, Arc<Client>)]) {
    for kind in Kind::BOTH {
        let mut group = c.benchmark_group(format!("{transport}, {} call", kind.name()));
        group.throughput(Throughput::Elements(1));
        for (server, client) in clients {
            group.bench_function(server.name(), |b| {
                b.iter_custom(|iters| {
                    let timed = timed_calls(client.clone(), *server, kind, iters);
                    runtime
                        .block_on(runtime.spawn(timed))
                        .expect("the timed calls ran to their end")
                })
            });
        }
        group.finish();
    }
}

/// Rounds of the interleaved ratio; each gives one ratio per kind of call.
const ROUNDS: usize = 21;
/// Calls per server in each round.
const BURST: u64 = 400;

/// The median and quartiles of `values`.
fn quartiles(values: &mut [f64]) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
    (at(0.25), at(0.5), at(0.75))
}

/// gate's calls per second over rmcp's, interleaved: each round times a
/// burst through each client back to back (which goes first alternates),
/// so that both share every round's conditions; criterion's groups time
/// one server after the other, and a machine whose speed drifts between
/// them moves their ratio. Prints the median of the rounds' ratios.
fn interleaved(runtime: &tokio::runtime::Runtime, transport: &str, clients: &[(Server, Arc<Client>)]) {
    let burst = |server: Server, kind: Kind| {
        let client = clients
            .iter()
            .find(|(s, _)| *s == server)
            .map(|(_, c)| c.clone())
            .expect("a client of each server");
        runtime
            .block_on(runtime.spawn(timed_calls(client, server, kind, BURST)))
            .expect("the timed calls ran to their end")
    };
    for kind in Kind::BOTH {
        let mut ratios = Vec::with_capacity(ROUNDS);
        for round in 0..ROUNDS {
            let (rmcp, gate) = if round % 2 == 0 {
                let rmcp = burst(Server::Rmcp, kind);
                (rmcp, burst(Server::Gate, kind))
            } else {
                let gate = burst(Server::Gate, kind);
                (burst(Server::Rmcp, kind), gate)
            };
            // Calls per second, gate's over rmcp's: rmcp's time over gate's.
            ratios.push(rmcp.as_secs_f64() / gate.as_secs_f64());
        }
        let (low, median, high) = quartiles(&mut ratios);
        println!(
            "{transport}, {} call: gate / rmcp calls per second, median of {ROUNDS} interleaved rounds of {BURST} \
             {median:.2}x (quartiles {low:.2}-{high:.2}x)",
            kind.name()
        );
    }
}

/// Ends the session of each client.
fn close(runtime: &tokio::runtime::Runtime, clients: Vec<(Server, Arc<Client>)>) {
    for (_, client) in clients {
        let client = Arc::into_inner(client).expect("no call holds the client after its group");
        let _ = runtime.block_on(client.cancel());
    }
}

/// A client of `server` started as a child process over its stdin and
/// stdout, and the child.
async fn stdio_client(server: Server) -> (Client, tokio::process::Child) {
    let exe = std::env::current_exe().expect("the bench's own path");
    let mut child = tokio::process::Command::new(exe)
        .env(SERVE_STDIO, server.name())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("the stdio server starts");
    let stdout = child.stdout.take().expect("a piped stdout");
    let stdin = child.stdin.take().expect("a piped stdin");
    let client = ClientConfig::default()
        .serve((stdout, stdin))
        .await
        .expect("the stdio server answers initialize");
    (client, child)
}

/// Serves `service` on `listener` the way gate-mcp's `serve_http` does
/// (hyper-util's HTTP/1.1 and HTTP/2 builder), until the runtime ends.
async fn serve_http<S>(listener: TcpListener, service: StreamableHttpService<S, LocalSessionManager>)
where
    S: ServerHandler + Send + 'static,
{
    let service = TowerToHyperService::new(service);
    let builder = Builder::new(TokioExecutor::new());
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), service.clone())
            .into_owned();
        tokio::spawn(connection);
    }
}

/// `server` on a random port of 127.0.0.1, in this process, and a client
/// connected to it.
async fn http_client(server: Server, gate: &Gate) -> Client {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let address = listener.local_addr().expect("the port's address");
    let config = StreamableHttpServerConfig::default();
    match server {
        Server::Rmcp => {
            let service = StreamableHttpService::new(
                || Ok(RmcpWeather::new()),
                Arc::new(LocalSessionManager::default()),
                config,
            );
            tokio::spawn(serve_http(listener, service));
        }
        Server::Gate => {
            let service = McpServer::new(gate.clone(), USER).http_service(config);
            tokio::spawn(serve_http(listener, service));
        }
    }
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{address}/mcp"));
    ClientConfig::default()
        .serve(transport)
        .await
        .expect("the HTTP server answers initialize")
}

/// Every group: stdio, then streamable HTTP.
fn peer_rmcp(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");

    let (clients, children): (Vec<_>, Vec<_>) = Server::BOTH
        .into_iter()
        .map(|server| {
            let (client, child) = runtime.block_on(stdio_client(server));
            ((server, Arc::new(client)), child)
        })
        .unzip();
    transport(c, &runtime, "stdio", &clients);
    interleaved(&runtime, "stdio", &clients);
    close(&runtime, clients);
    for mut child in children {
        // Closing the session closed the child's stdin: it ends on its own.
        let _ = runtime.block_on(child.wait());
    }

    let gate = runtime.block_on(gate());
    let clients: Vec<_> = Server::BOTH
        .into_iter()
        .map(|server| (server, Arc::new(runtime.block_on(http_client(server, &gate)))))
        .collect();
    transport(c, &runtime, "streamable HTTP", &clients);
    interleaved(&runtime, "streamable HTTP", &clients);
    close(&runtime, clients);
    runtime.block_on(gate.shutdown());
}

/// The stdio server this binary is when started with [`SERVE_STDIO`]:
/// serves one client on stdin and stdout until it closes them.
fn serve_stdio(server: Server) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        match server {
            Server::Rmcp => {
                let running = RmcpWeather::new()
                    .serve(rmcp::transport::stdio_pipes())
                    .await
                    .expect("the client's initialize");
                let _ = running.waiting().await;
            }
            Server::Gate => {
                let gate = gate().await;
                McpServer::new(gate.clone(), USER)
                    .serve_stdio()
                    .await
                    .expect("serving stdio");
                gate.shutdown().await;
            }
        }
    });
}

/// A stdio server when [`SERVE_STDIO`] says so; otherwise the bench, as
/// `criterion_main!` would run it.
fn main() {
    if let Ok(name) = std::env::var(SERVE_STDIO) {
        serve_stdio(Server::from_name(&name));
        return;
    }
    let mut criterion = Criterion::default().configure_from_args();
    peer_rmcp(&mut criterion);
    criterion.final_summary();
}
