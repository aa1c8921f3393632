//! A model that replays a conversation file, so demos, tests and CI exercise the
//! whole agent loop (including invalid arguments, unknown tools and provider
//! errors) without a network or a non-deterministic model.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::Deserialize;

use crate::{BoxFuture, ChatModel, Message, ModelError, ToolCallRequest, Turn, Usage};

/// A conversation file that could not be loaded: names the file (when there is
/// one) and the 1-based line.
#[derive(Debug)]
pub struct ScriptError {
    path: Option<PathBuf>,
    line: Option<usize>,
    message: String,
    io: Option<std::io::Error>,
}

impl ScriptError {
    /// The 1-based line at fault, `None` for whole-file problems (unreadable,
    /// no turns).
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// The file, when the script was loaded from one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    fn at(line: usize, message: impl Into<String>) -> Self {
        ScriptError {
            path: None,
            line: Some(line),
            message: message.into(),
            io: None,
        }
    }
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("conversation script")?;
        if let Some(path) = &self.path {
            write!(f, " {}", path.display())?;
        }
        if let Some(line) = self.line {
            write!(f, ", line {line}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ScriptError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.io.as_ref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnLine {
    text: Option<String>,
    #[serde(default)]
    tool_calls: Vec<CallLine>,
    usage: Option<UsageLine>,
    error: Option<ErrorLine>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallLine {
    id: String,
    name: String,
    arguments: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UsageLine {
    input_tokens: u64,
    output_tokens: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ErrorLine {
    kind: ErrorKindLine,
    retry_after_ms: Option<u64>,
    status: Option<u16>,
    message: Option<String>,
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ErrorKindLine {
    RateLimited,
    HttpStatus,
    Transport,
    Malformed,
}

#[derive(Clone, Debug)]
struct ScriptedFailure {
    kind: ErrorKindLine,
    retry_after: Option<Duration>,
    status: Option<u16>,
    message: String,
}

impl ScriptedFailure {
    fn to_error(&self, line: usize) -> ModelError {
        let detail = format!("scripted at line {line}: {}", self.message);
        match self.kind {
            ErrorKindLine::RateLimited => ModelError::rate_limited(None, self.retry_after, detail),
            ErrorKindLine::HttpStatus if self.status == Some(429) => {
                ModelError::rate_limited(Some(429), self.retry_after, detail)
            }
            ErrorKindLine::HttpStatus => ModelError::http_status(self.status.unwrap_or(500), self.retry_after, detail),
            ErrorKindLine::Transport => ModelError::transport(false, detail),
            ErrorKindLine::Malformed => ModelError::malformed(detail),
        }
    }
}

#[derive(Clone, Debug)]
enum Entry {
    Turn(Turn),
    Failure(ScriptedFailure),
}

/// A [`ChatModel`] that serves the turns of a conversation file in order,
/// ignoring the messages it is sent. Deterministic: the same file gives the
/// same turns every run. Asking past the end is an error
/// ([`ModelError::is_script_exhausted`]), never a panic or a made-up turn.
///
/// # Conversation file
///
/// JSON Lines: one model turn per line, served in order, whatever the messages
/// sent. Blank lines and lines whose first non-blank character is `#` are
/// skipped (line numbers in errors still count them).
///
/// ```text
/// # a tool call with usage; arguments as a JSON string (kept verbatim)
/// {"tool_calls":[{"id":"call_1","name":"lookup_customer","arguments":"{\"email\":\"a@b.c\"}"}],"usage":{"input_tokens":4000,"output_tokens":50}}
/// # arguments as a JSON object: serialized compactly
/// {"tool_calls":[{"id":"call_2","name":"charge_card","arguments":{"customer_id":"c1","amount_cents":500}}]}
/// # arguments that are not JSON at all: scripted verbatim
/// {"tool_calls":[{"id":"call_3","name":"charge_card","arguments":"{\"customer_id\": \"c1\","}]}
/// # a provider failure instead of a turn
/// {"error":{"kind":"rate_limited","retry_after_ms":2000}}
/// {"text":"All done."}
/// ```
///
/// Fields of a turn: `text` (string), `tool_calls` (array of `id`, `name`,
/// `arguments`; `arguments` may be a string, kept verbatim, any other JSON value,
/// serialized, or absent, meaning `"{}"`), `usage` (`input_tokens`,
/// `output_tokens`), or instead `error` with `kind` one of `rate_limited`
/// (optional `retry_after_ms`), `http_status` (`status`, 100–599; 429 counts as
/// rate limited), `transport`, `malformed`, and an optional `message`. Unknown
/// fields are errors, so a typo fails loudly instead of silently scripting a
/// different turn.
#[derive(Debug)]
pub struct ScriptedModel {
    /// Each entry with the 1-based line it came from.
    entries: Vec<(usize, Entry)>,
    next: AtomicUsize,
}

impl ScriptedModel {
    /// Loads a conversation file (format in the [type docs](ScriptedModel)).
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, ScriptError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| ScriptError {
            path: Some(path.to_path_buf()),
            line: None,
            message: format!("cannot read: {e}"),
            io: Some(e),
        })?;
        Self::parse(&text).map_err(|mut e| {
            e.path = Some(path.to_path_buf());
            e
        })
    }

    /// Parses a conversation from JSON Lines text (format in the
    /// [type docs](ScriptedModel)).
    pub fn parse(text: &str) -> Result<Self, ScriptError> {
        let mut entries = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            entries.push((line, parse_line(line, trimmed)?));
        }
        if entries.is_empty() {
            return Err(ScriptError {
                path: None,
                line: None,
                message: "no turns: every line is blank or a comment".into(),
                io: None,
            });
        }
        Ok(ScriptedModel {
            entries,
            next: AtomicUsize::new(0),
        })
    }

    /// A script from turns built in code; line numbers in errors are the
    /// 1-based positions in `turns`.
    pub fn from_turns(turns: impl IntoIterator<Item = Turn>) -> Self {
        ScriptedModel {
            entries: turns
                .into_iter()
                .enumerate()
                .map(|(i, t)| (i + 1, Entry::Turn(t)))
                .collect(),
            next: AtomicUsize::new(0),
        }
    }

    /// Number of entries (turns and scripted errors) in the script.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the script has no entries (only possible via
    /// [`from_turns`](Self::from_turns) with nothing).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entries served so far.
    pub fn served(&self) -> usize {
        self.next.load(Ordering::SeqCst).min(self.entries.len())
    }

    /// Entries not yet served.
    pub fn remaining(&self) -> usize {
        self.entries.len() - self.served()
    }

    /// Starts the replay over from the first entry.
    pub fn reset(&self) {
        self.next.store(0, Ordering::SeqCst);
    }

    fn take(&self) -> Result<Turn, ModelError> {
        let len = self.entries.len();
        // fetch_update so that a caller racing past the end cannot push the
        // cursor beyond `len`; every caller past the end gets the same error.
        let index = self
            .next
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |i| (i < len).then_some(i + 1))
            .map_err(|_| {
                ModelError::script_exhausted(format!(
                    "all {len} scripted turn(s) were served; the agent asked for another"
                ))
            })?;
        match self.entries.get(index) {
            Some((_, Entry::Turn(turn))) => Ok(turn.clone()),
            Some((line, Entry::Failure(f))) => Err(f.to_error(*line)),
            None => Err(ModelError::script_exhausted(format!(
                "all {len} scripted turn(s) were served"
            ))),
        }
    }
}

impl FromStr for ScriptedModel {
    type Err = ScriptError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl ChatModel for ScriptedModel {
    fn next_turn<'a>(
        &'a self,
        _messages: &'a [Message],
        _tools: &'a serde_json::Value,
    ) -> BoxFuture<'a, Result<Turn, ModelError>> {
        let result = self.take();
        Box::pin(async move { result })
    }
}

fn parse_line(line: usize, text: &str) -> Result<Entry, ScriptError> {
    let parsed: TurnLine = serde_json::from_str(text).map_err(|e| {
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let msg = full.strip_suffix(&suffix).unwrap_or(&full);
        ScriptError::at(line, format!("column {}: {msg}", e.column()))
    })?;
    if let Some(err) = parsed.error {
        if parsed.text.is_some() || !parsed.tool_calls.is_empty() || parsed.usage.is_some() {
            return Err(ScriptError::at(
                line,
                "an `error` line cannot also have `text`, `tool_calls` or `usage`",
            ));
        }
        return parse_failure(line, err).map(Entry::Failure);
    }
    if parsed.text.is_none() && parsed.tool_calls.is_empty() {
        return Err(ScriptError::at(
            line,
            "a turn needs `text`, `tool_calls` or `error` (an empty turn is almost always a mistake)",
        ));
    }
    let tool_calls = parsed
        .tool_calls
        .into_iter()
        .map(|c| {
            let arguments = match c.arguments {
                None => "{}".to_owned(),
                Some(serde_json::Value::String(s)) => s,
                Some(other) => other.to_string(),
            };
            ToolCallRequest {
                id: c.id,
                name: c.name,
                arguments,
            }
        })
        .collect();
    Ok(Entry::Turn(Turn {
        text: parsed.text,
        tool_calls,
        usage: parsed.usage.map(|u| Usage {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
        }),
    }))
}

fn parse_failure(line: usize, err: ErrorLine) -> Result<ScriptedFailure, ScriptError> {
    match err.kind {
        ErrorKindLine::HttpStatus => match err.status {
            Some(s) if (100..=599).contains(&s) => {}
            Some(s) => return Err(ScriptError::at(line, format!("`status` {s} is not an HTTP status"))),
            None => return Err(ScriptError::at(line, "an `http_status` error needs a `status`")),
        },
        kind if err.status.is_some() => {
            return Err(ScriptError::at(
                line,
                format!("`status` only applies to `http_status` errors, not {kind:?}"),
            ));
        }
        _ => {}
    }
    Ok(ScriptedFailure {
        kind: err.kind,
        retry_after: err.retry_after_ms.map(Duration::from_millis),
        status: err.status,
        message: err.message.unwrap_or_else(|| "scripted error".to_owned()),
    })
}
