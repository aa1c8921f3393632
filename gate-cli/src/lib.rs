//! The `gate` command: provider manifests, argument checks, sanitizing, the
//! cost model, transcript replay, reconciliation and reports.
//!
//! ```text
//! gate manifest --format anthropic                  # the example toolbox as Anthropic tools
//! gate manifest --format mcp > tools.json           # a tool list for the commands below
//! gate check --tools tools.json calls.jsonl         # one verdict per call, as gate would give it
//! gate sanitize --json error.txt                    # what the sanitizer finds in a tool's output
//! gate cost --steps 20 --system 4000 --per-step 2000 --retry-rate 0.1
//! gate replay --tools tools.json transcript.jsonl   # gate's decisions on a recorded conversation
//! gate reconcile list                               # what waits for a person in ./gate.db
//! gate report --html report.html                    # the decision log, as text and as a page
//! gate console --store sqlite:gate.db               # a page to approve, deny, resolve and reopen
//! ```
//!
//! `gate --version` (or `-V`) prints `gate` and the version; `gate help
//! SUBCOMMAND` or `gate SUBCOMMAND --help` describes each subcommand, with
//! examples. `gate completions bash|zsh|fish` prints a completion script for
//! the shell; its `--help` says where each shell looks for one:
//!
//! ```text
//! mkdir -p ~/.local/share/bash-completion/completions && gate completions bash > ~/.local/share/bash-completion/completions/gate
//! mkdir -p ~/.zfunc && gate completions zsh > ~/.zfunc/_gate   # ~/.zshrc: fpath=(~/.zfunc $fpath) before compinit
//! mkdir -p ~/.config/fish/completions && gate completions fish > ~/.config/fish/completions/gate.fish
//! ```
//!
//! Most of a subcommand's work is a library function, available (and tested)
//! as an API; `gate replay`'s reading of provider transcripts and of
//! unlabelled errors (`replay/`) and `gate report --html`'s page
//! (`html_report/`) are this crate's own, tested in its tests. Exit status:
//! 0 success, 1 a negative result (a manifest that cannot be expressed, a
//! rejected call), 2 bad input to the command itself.
//!
//! This library is the command itself ([`Cli`], [`run`]), kept apart from the
//! `gate` binary so that its tests can walk every subcommand's help; programs
//! use the `toolgate` crate, which has all of the above as an API.
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

/// `println!` for the command's output: a reader that went away (`gate
/// report --json | head`) ends the command quietly, as Unix tools do,
/// instead of a panic on the broken pipe.
macro_rules! outln {
    () => { $crate::write_out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::write_out(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` for the command's output, as [`outln!`].
macro_rules! out {
    ($($arg:tt)*) => { $crate::write_out(format_args!($($arg)*)) };
}

mod approvals;
mod check;
mod choice;
mod completions;
mod console;
mod cost;
mod html_report;
mod input;
mod manifest;
mod reconcile;
mod replay;
mod report;
mod sanitize;
mod store;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use toolgate::manifest::import_each;
use toolgate::{Tool, Toolbox};

/// gate: typed LLM tools that fail safely.
///
/// The command line as clap reads it: [`Cli::parse`] (from
/// [`clap::Parser`]) reads the process's arguments, and
/// [`clap::CommandFactory::command`] gives the definition, with every
/// subcommand's help.
#[derive(Parser)]
#[command(
    name = "gate",
    version,
    about,
    // The paragraphs below the first are for this page, not for `gate --help`.
    long_about = None,
    after_help = "Examples:
  gate manifest --format anthropic
  gate manifest --format mcp > tools.json
  gate check --tools tools.json calls.jsonl
  gate reconcile list
  gate report --html report.html"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print tool definitions in a provider's format.
    Manifest(manifest::Args),
    /// Validate tool calls (JSON lines) against a tool list.
    Check(check::Args),
    /// Print a text as the model would see it; --json prints the findings.
    Sanitize(sanitize::Args),
    /// Expected tokens of an agent under context replay, with and without retries.
    Cost(cost::Args),
    /// Feed a recorded conversation through the policy.
    ///
    /// The transcript is gate's own JSON lines ({"call": …, "result"|"error":
    /// …}, {"usage": …}, {"task": …}) or a provider's log as kept: an OpenAI
    /// Chat `messages` array (or a request body holding one) whose assistant
    /// `tool_calls` are answered by `role: tool` messages, or Anthropic
    /// `messages` whose `tool_use` blocks are answered by `tool_result` blocks.
    /// One conversation per file, or one per line; each is one task.
    ///
    /// A result without a label is read from its text: it is an error when
    /// flagged (`is_error`), when it starts with the word "error" or when it
    /// is a JSON object with an `error` key; the first rule whose phrase it
    /// contains gives the kind (504/gateway timeout, 502/bad gateway, timed
    /// out, rate limit/429, unavailable/503, connection refused, connection
    /// reset, internal/traceback/500, forbidden/401/403, not found/404/does
    /// not exist, no results, could not parse), and an error no rule matches
    /// is a refusal with a reason ("payment amount does not add up").
    ///
    /// Per call: how the result was read, the failure class, gate's decision,
    /// the repair tokens gate would have spent and those the transcript spent
    /// (the model turn that answered a failed call by calling again).
    Replay(replay::Args),
    /// What waits for a person (intents whose outcome is unknown, failed
    /// tasks): list, show, resolve and reopen.
    #[command(
        subcommand,
        after_help = "Examples:
  gate reconcile list
  gate reconcile resolve KEY --outcome succeeded --value '{\"charge_id\": \"ch_001\"}'
  gate reconcile reopen TASK --user USER

KEY is an intent key and TASK a task id, as `gate reconcile list` shows them."
    )]
    Reconcile(reconcile::Command),
    /// Calls that wait for a person's approval: list, show, approve, deny.
    #[command(
        subcommand,
        after_help = "Examples:
  gate approvals list
  gate approvals show ID
  gate approvals approve ID --by alice
  gate approvals deny ID --reason 'the customer disputes it' --by alice

ID is a request id, as `gate approvals list` shows it."
    )]
    Approvals(approvals::Command),
    /// Summarize the decision log of a store.
    Report(report::Args),
    /// Serve a page for the person on call: approvals to decide, unknown
    /// outcomes to resolve, failed tasks to reopen, the decision report.
    Console(console::Args),
    /// Print a shell completion script (bash, zsh or fish).
    Completions(completions::Args),
}

/// A failure of the command itself (exit status 2).
pub(crate) struct UsageError(pub(crate) String);

impl<E: std::fmt::Display> From<E> for UsageError {
    fn from(e: E) -> Self {
        UsageError(e.to_string())
    }
}

/// A tool list in any provider's format, as declared-only tools; a tool
/// that cannot be read is bad input.
pub(crate) fn load_toolbox(path: &str) -> Result<Toolbox, UsageError> {
    let (toolbox, unreadable) = load_readable_tools(path)?;
    match unreadable.into_iter().next() {
        Some(problem) => Err(UsageError(format!("`{path}`: {problem}"))),
        None => Ok(toolbox),
    }
}

/// The tools of a list that can be read, and why each of the others cannot
/// (a schema that does not compile, a missing name, a name given twice). An
/// error only when the file is no tool list at all.
pub(crate) fn load_readable_tools(path: &str) -> Result<(Toolbox, Vec<String>), UsageError> {
    let text = input::read_text(path)?;
    let document: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| UsageError(format!("`{path}` is not JSON: {e}")))?;
    let mut toolbox = Toolbox::new();
    let mut unreadable = Vec::new();
    let imported = import_each(&document).map_err(|e| UsageError(format!("`{path}`: {e}")))?;
    for (index, tool) in imported.into_iter().enumerate() {
        match tool {
            Ok(tool) => {
                let name = tool.spec().name().to_owned();
                if let Err(e) = toolbox.add(tool) {
                    unreadable.push(format!("tool #{index} (`{name}`): {e}"));
                }
            }
            Err(e) => unreadable.push(e.to_string()),
        }
    }
    Ok((toolbox, unreadable))
}

/// A runtime for the subcommands that talk to a store.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, UsageError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(UsageError::from)
}

/// Writes to standard output. A closed pipe exits with success, since
/// whoever read the output has what they wanted; any other write error
/// exits 1 with the reason on standard error.
fn write_out(text: std::fmt::Arguments<'_>) {
    use std::io::Write;
    if let Err(e) = std::io::stdout().lock().write_fmt(text) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("gate: cannot write the output: {e}");
        std::process::exit(1);
    }
}

/// Runs the command `cli` names, and says how it ended: 0 success, 1 a
/// negative result, 2 bad input to the command (the reason is on standard
/// error).
pub fn run(cli: Cli) -> ExitCode {
    let result = match cli.command {
        Command::Manifest(args) => manifest::run(args),
        Command::Check(args) => check::run(args),
        Command::Sanitize(args) => sanitize::run(args),
        Command::Cost(args) => cost::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Reconcile(command) => reconcile::run(command),
        Command::Approvals(command) => approvals::run(command),
        Command::Report(args) => report::run(args),
        Command::Console(args) => console::run(args),
        Command::Completions(args) => completions::run(args),
    };
    match result {
        Ok(code) => code,
        Err(UsageError(message)) => {
            eprintln!("gate: {message}");
            ExitCode::from(2)
        }
    }
}
