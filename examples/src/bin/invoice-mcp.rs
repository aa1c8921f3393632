//! The invoice tools as an MCP server: what an MCP client (an IDE, a
//! desktop assistant, an agent framework) gets when it runs gate's example
//! toolbox, over stdio or streamable HTTP, against the simulated CRM and
//! payment provider.
#![forbid(unsafe_code)]

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use gate_examples::invoice::backend::{Backend, Fault};
use gate_examples::invoice::tools::InvoiceTools;
use serde_json::json;
use toolgate::ApprovalQuestion;
use toolgate::Gate;
use toolgate::mcp::{ClientApproval, McpServer};

/// Serves the invoice tools over MCP: on stdin and stdout by default, on
/// streamable HTTP with `--http`. Every call goes through gate (validation,
/// the ledger, the repair budgets). When it stops (the client closes stdin;
/// Ctrl-C or SIGTERM for HTTP) it prints what the simulated payment provider
/// did to stderr, as one JSON line.
#[derive(Parser)]
#[command(name = "invoice-mcp", version)]
struct Args {
    /// Serve streamable HTTP on this address (`127.0.0.1:8080`; port 0
    /// picks a free one) instead of stdio. The address served is printed on
    /// stderr.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// The ledger store: `sqlite:FILE`, `postgres://…` or `memory:`.
    #[arg(long, default_value = "sqlite:gate.db")]
    store: String,
    /// The user calls run for (whose repair-token window they spend) when a
    /// call's `_meta` names none.
    #[arg(long, default_value = "billing-team")]
    user: String,
    /// A fault the simulated backend injects into the next call of a tool;
    /// repeat the flag for more, in order. None by default.
    #[arg(long, value_enum, value_name = "FAULT")]
    fault: Vec<FaultFlag>,
    /// A tool whose every call waits for a person's approval; repeat the
    /// flag for more. A client that declared form elicitation is asked;
    /// otherwise `gate approvals approve ID --store …` decides.
    #[arg(long, value_name = "TOOL")]
    approval: Vec<String>,
    /// How long to wait for the client's answer to an approval question,
    /// in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    elicitation_wait: u64,
    /// Never ask the client: every approval is decided out of band.
    #[arg(long)]
    no_elicitation: bool,
}

/// The faults a run can ask for.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum FaultFlag {
    /// The next `charge_card` charges the card, then times out: gate fails
    /// the task and queues the charge for a person (`gate reconcile`).
    ChargeTimeout,
    /// The next `charge_card` gets a 503 before anything happened: gate
    /// retries it itself.
    ChargeUnavailable,
    /// The next `send_receipt` sends the receipt, then times out.
    ReceiptTimeout,
    /// The next `lookup_customer` gets a 403 without a body: gate answers
    /// with a correction naming `list_customers`.
    LookupForbidden,
}

impl FaultFlag {
    fn planned(self) -> (&'static str, Fault) {
        match self {
            FaultFlag::ChargeTimeout => ("charge_card", Fault::TimeoutAfterEffect),
            FaultFlag::ChargeUnavailable => ("charge_card", Fault::UnavailableBefore),
            FaultFlag::ReceiptTimeout => ("send_receipt", Fault::TimeoutAfterEffect),
            FaultFlag::LookupForbidden => ("lookup_customer", Fault::ForbiddenNoBody),
        }
    }
}

/// Ctrl-C or SIGTERM, whichever comes first.
async fn stop_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = interrupt => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                let _ = interrupt.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}

async fn serve(args: &Args, server: &McpServer) -> Result<(), String> {
    match args.http {
        None => server.serve_stdio().await.map_err(|e| e.to_string()),
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
            let bound = listener.local_addr().map_err(|e| e.to_string())?;
            eprintln!("invoice-mcp: serving MCP at http://{bound}/mcp");
            server
                .serve_http(listener, stop_signal())
                .await
                .map_err(|e| e.to_string())
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let backend = Arc::new(Backend::demo());
    for flag in &args.fault {
        let (tool, fault) = flag.planned();
        backend.plan(tool, &[fault]);
    }
    let toolbox = InvoiceTools::new(backend.clone()).into_toolbox();
    if let Some(unknown) = args.approval.iter().find(|t| toolbox.get(t).is_none()) {
        eprintln!("invoice-mcp: --approval {unknown}: no such tool");
        return ExitCode::FAILURE;
    }
    let mut builder = Gate::builder(toolbox).store(&args.store);
    if !args.approval.is_empty() {
        let needing = args.approval.clone();
        builder = builder.approvals(move |q: &ApprovalQuestion<'_>| {
            let tool = q.spec.name();
            needing
                .iter()
                .any(|t| t == tool)
                .then(|| format!("invoice-mcp runs `{tool}` only with a person's approval (--approval {tool})"))
        });
    }
    let gate = match builder.build().await {
        Ok(gate) => gate,
        Err(e) => {
            eprintln!("invoice-mcp: {e}");
            return ExitCode::FAILURE;
        }
    };
    let client_approval = if args.no_elicitation {
        ClientApproval::OutOfBand
    } else {
        ClientApproval::Elicit {
            wait: Duration::from_secs(args.elicitation_wait),
        }
    };
    let server = McpServer::new(gate.clone(), args.user.clone())
        .client_approval(client_approval)
        .server_info("invoice-mcp", env!("CARGO_PKG_VERSION"))
        .instructions(format!(
            "The billing tools of a small company: look up customers and invoices, charge cards, send receipts. {}",
            toolgate::mcp::DEFAULT_INSTRUCTIONS
        ));
    let served = serve(&args, &server).await;
    gate.shutdown().await;
    let summary = json!({
        "payment_provider": {
            "charges": backend.charges(),
            "charges_per_intent": backend.charges_per_intent(),
            "receipts": backend.receipts(),
        }
    });
    eprintln!("{summary}");
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("invoice-mcp: {e}");
            ExitCode::FAILURE
        }
    }
}
