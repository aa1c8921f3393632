//! What a logged tool result says happened, when nothing labels it.
//!
//! Provider transcripts do not say why a tool failed: OpenAI's `tool`
//! messages carry only text, Anthropic's `tool_result` at most `is_error`. To
//! replay them through the policy, each result is read by the rules below,
//! kept as data so the table can be read (and tested) on its own.
//!
//! 1. A result is an error when the transcript flags it (`is_error: true`),
//!    when its text starts with the word "error" in any case (`Error: …`, the
//!    convention of gate's and most agents' OpenAI loops), or when it is a
//!    JSON object with an `error` key (`{"error": "…"}`). Anything else is a
//!    successful result: its JSON, or its text as a string.
//! 2. An error's text (for `{"error": …}`, that value) is lower-cased and every
//!    run of other characters than letters and digits becomes one space; the
//!    first rule with a phrase found there as whole words gives the error's
//!    kind. Status codes count only after `http`, `status`, `code` or
//!    `error` (`Error: 429`, `HTTP 503`), never a bare number (an amount of
//!    `$500` is not a server error).
//! 3. An error no rule matches is a definitive refusal with its text as the
//!    reason (`Error: payment amount does not add up`): the tool answered and
//!    said why, and the model read it, as the transcript shows.
//!
//! Each rule's kind is one of gate's tool errors ([`ToolError`]), the ones a
//! gate transcript's `kind` labels name, so every format meets the same
//! policy.

use std::time::Duration;

use serde_json::Value;
use toolgate::ToolError;

/// The kind of failure a reading rule recognises in a text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    /// 401/403; the text is not taken as a reason (a status line is not one).
    Forbidden,
    /// 404/410, a resource that does not exist.
    NotFound,
    /// A search that found nothing.
    Empty,
    /// A response the tool could not read.
    Unreadable,
    /// The call ran out of time: what happened is unknown.
    Timeout,
    /// The connection failed before the request was sent.
    ConnectionRefused,
    /// The connection failed after the request was sent.
    ConnectionLost,
    /// 429.
    RateLimited,
    /// 503: the server did not handle the request.
    Unavailable,
    /// 502: a gateway's upstream failed, and may have acted.
    BadGateway,
    /// 504: a gateway's upstream timed out, and may have acted.
    GatewayTimeout,
    /// A refusal with a reason: card declined, amounts that do not add up.
    Rejected,
    /// A bug or a 500.
    Internal,
}

impl ErrorKind {
    /// The error this kind stands for; `text` is the reason of a refusal.
    fn to_error(self, text: &str) -> Recorded {
        match self {
            ErrorKind::Forbidden => Recorded::Forbidden { body: None },
            ErrorKind::NotFound => Recorded::NotFound,
            ErrorKind::Empty => Recorded::Empty,
            ErrorKind::Unreadable => Recorded::Unreadable,
            ErrorKind::Timeout => Recorded::Timeout,
            ErrorKind::ConnectionRefused => Recorded::ConnectionLost { sent: false },
            ErrorKind::ConnectionLost => Recorded::ConnectionLost { sent: true },
            ErrorKind::RateLimited => Recorded::RateLimited { retry_after: None },
            ErrorKind::Unavailable => Recorded::Unavailable,
            ErrorKind::BadGateway => Recorded::UpstreamFailed { status: 502 },
            ErrorKind::GatewayTimeout => Recorded::UpstreamFailed { status: 504 },
            ErrorKind::Rejected => Recorded::Rejected {
                reason: text.to_owned(),
            },
            ErrorKind::Internal => Recorded::Internal,
        }
    }
}

/// A tool's failure as the transcript recorded it, kept to be handed to the
/// policy as often as gate retries the call ([`ToolError`] is not `Clone`).
/// The variants are [`ToolError`]'s, with the details a transcript can give.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Recorded {
    Forbidden { body: Option<String> },
    NotFound,
    Empty,
    Unreadable,
    Denied { reason: Option<String> },
    Timeout,
    ConnectionLost { sent: bool },
    RateLimited { retry_after: Option<Duration> },
    Unavailable,
    UpstreamFailed { status: u16 },
    Rejected { reason: String },
    Internal,
}

impl Recorded {
    /// The tool error the replayed tool returns.
    pub(crate) fn to_tool_error(&self) -> ToolError {
        match self {
            Recorded::Forbidden { body } => ToolError::Forbidden { body: body.clone() },
            Recorded::NotFound => ToolError::NotFound,
            Recorded::Empty => ToolError::Empty,
            Recorded::Unreadable => ToolError::Unreadable,
            Recorded::Denied { reason } => ToolError::Denied { reason: reason.clone() },
            Recorded::Timeout => ToolError::Timeout,
            Recorded::ConnectionLost { sent } => ToolError::ConnectionLost { sent: *sent },
            Recorded::RateLimited { retry_after } => ToolError::RateLimited {
                retry_after: *retry_after,
            },
            Recorded::Unavailable => ToolError::Unavailable,
            Recorded::UpstreamFailed { status } => ToolError::UpstreamFailed { status: *status },
            Recorded::Rejected { reason } => ToolError::rejected(reason.clone()),
            Recorded::Internal => ToolError::internal("the transcript recorded an internal error"),
        }
    }
}

/// A labelled error of a gate transcript: `kind` and its detail fields.
pub(crate) fn labelled(error: &serde_json::Map<String, Value>, kind: &str) -> Result<Recorded, String> {
    let text = |key: &str| error.get(key).and_then(Value::as_str).map(str::to_owned);
    Ok(match kind {
        "forbidden" => Recorded::Forbidden { body: text("body") },
        "not_found" => Recorded::NotFound,
        "empty" => Recorded::Empty,
        "unreadable" => Recorded::Unreadable,
        "denied" => Recorded::Denied { reason: text("reason") },
        "timeout" => Recorded::Timeout,
        "connection_lost" => Recorded::ConnectionLost {
            sent: error.get("sent").and_then(Value::as_bool).unwrap_or(true),
        },
        "rate_limited" => Recorded::RateLimited {
            retry_after: error
                .get("retry_after_ms")
                .and_then(Value::as_u64)
                .map(Duration::from_millis),
        },
        "unavailable" => Recorded::Unavailable,
        "upstream_failed" => Recorded::UpstreamFailed {
            status: error
                .get("status")
                .and_then(Value::as_u64)
                .and_then(|s| u16::try_from(s).ok())
                .unwrap_or(502),
        },
        "rejected" => Recorded::Rejected {
            reason: text("reason").unwrap_or_else(|| "rejected".into()),
        },
        "internal" => Recorded::Internal,
        other => {
            return Err(format!(
                "unknown error kind `{other}`; expected one of: forbidden, not_found, empty, unreadable, denied, timeout, connection_lost, rate_limited, unavailable, upstream_failed, rejected, internal"
            ));
        }
    })
}

/// One reading rule: any of its phrases, as whole words, gives its kind.
pub(crate) struct Rule {
    /// What the rule recognises, as the replay prints it (`rule:timeout`).
    pub(crate) name: &'static str,
    /// Lower-case words separated by single spaces.
    pub(crate) phrases: &'static [&'static str],
    /// The kind of error it means.
    pub(crate) kind: ErrorKind,
}

/// The rules, first match wins: the gateway statuses before the plain
/// timeout (a 504 names both), the transport's failures before the
/// application's.
pub(crate) const RULES: &[Rule] = &[
    Rule {
        name: "gateway_timeout",
        phrases: &[
            "gateway timeout",
            "gateway time out",
            "http 504",
            "status 504",
            "code 504",
            "error 504",
        ],
        kind: ErrorKind::GatewayTimeout,
    },
    Rule {
        name: "bad_gateway",
        phrases: &["bad gateway", "http 502", "status 502", "code 502", "error 502"],
        kind: ErrorKind::BadGateway,
    },
    Rule {
        name: "timeout",
        phrases: &["timed out", "timeout", "time out", "deadline exceeded"],
        kind: ErrorKind::Timeout,
    },
    Rule {
        name: "rate_limited",
        phrases: &[
            "rate limit",
            "rate limited",
            "ratelimited",
            "too many requests",
            "quota exceeded",
            "http 429",
            "status 429",
            "code 429",
            "error 429",
        ],
        kind: ErrorKind::RateLimited,
    },
    Rule {
        name: "unavailable",
        phrases: &[
            "service unavailable",
            "temporarily unavailable",
            "overloaded",
            "try again later",
            "http 503",
            "status 503",
            "code 503",
            "error 503",
        ],
        kind: ErrorKind::Unavailable,
    },
    Rule {
        name: "connection_refused",
        phrases: &[
            "connection refused",
            "could not connect",
            "failed to connect",
            "cannot connect",
            "name resolution",
            "dns",
        ],
        kind: ErrorKind::ConnectionRefused,
    },
    Rule {
        name: "connection_lost",
        phrases: &[
            "connection reset",
            "connection closed",
            "connection aborted",
            "broken pipe",
            "unexpected eof",
        ],
        kind: ErrorKind::ConnectionLost,
    },
    Rule {
        name: "internal",
        phrases: &[
            "internal server error",
            "internal error",
            "panicked",
            "traceback",
            "exception",
            "stack trace",
            "http 500",
            "status 500",
            "code 500",
            "error 500",
        ],
        kind: ErrorKind::Internal,
    },
    Rule {
        name: "forbidden",
        phrases: &[
            "forbidden",
            "unauthorized",
            "unauthorised",
            "permission denied",
            "access denied",
            "not authorized",
            "not authorised",
            "http 401",
            "status 401",
            "error 401",
            "http 403",
            "status 403",
            "error 403",
        ],
        kind: ErrorKind::Forbidden,
    },
    Rule {
        name: "not_found",
        phrases: &[
            "not found",
            "no such",
            "does not exist",
            "doesn t exist",
            "unknown id",
            "http 404",
            "status 404",
            "error 404",
            "http 410",
            "gone",
        ],
        kind: ErrorKind::NotFound,
    },
    Rule {
        name: "empty",
        phrases: &[
            "no results",
            "no result",
            "no matches",
            "no match",
            "nothing found",
            "no records",
            "0 results",
            "zero results",
            "empty result",
        ],
        kind: ErrorKind::Empty,
    },
    Rule {
        name: "unreadable",
        phrases: &[
            "could not parse",
            "cannot parse",
            "can t parse",
            "unparseable",
            "malformed response",
            "invalid response",
            "unexpected response",
        ],
        kind: ErrorKind::Unreadable,
    },
];

/// How a logged result was read.
#[derive(Clone, Copy)]
pub(crate) enum Reading {
    /// A successful result.
    Success,
    /// An error the transcript labelled with its kind (gate's own format).
    Labelled,
    /// An error, by the first rule that matched it.
    Rule(&'static Rule),
    /// An error no rule matched: a refusal with its text as the reason.
    Unmatched,
    /// The transcript has no result for the call (it ends first).
    Missing,
}

impl Reading {
    /// As the replay prints it: `ok`, `label`, `rule:timeout`, `unmatched_error`, `missing`.
    pub(crate) fn describe(self) -> std::borrow::Cow<'static, str> {
        match self {
            Reading::Success => "ok".into(),
            Reading::Labelled => "label".into(),
            Reading::Rule(rule) => format!("rule:{}", rule.name).into(),
            Reading::Unmatched => "unmatched_error".into(),
            Reading::Missing => "missing".into(),
        }
    }

    /// Whether the transcript's tool failed (whatever gate would make of it).
    pub(crate) fn is_error(self) -> bool {
        matches!(self, Reading::Labelled | Reading::Rule(_) | Reading::Unmatched)
    }
}

/// Reads a result's text; `flagged` is the transcript's own error flag.
/// A successful result is its JSON, or its text as a string.
pub(crate) fn read(text: &str, flagged: bool) -> (Reading, Result<Value, Recorded>) {
    let json: Option<Value> = serde_json::from_str(text).ok();
    let error_value = json.as_ref().and_then(|v| v.get("error")).filter(|e| !e.is_null());
    let marked = starts_with_the_word_error(text);
    if !(flagged || marked || error_value.is_some()) {
        return (
            Reading::Success,
            Ok(json.unwrap_or_else(|| Value::String(text.to_owned()))),
        );
    }
    let message = match error_value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(o)) => o
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| text.to_owned(), str::to_owned),
        _ => text.to_owned(),
    };
    let words = normalized(&message);
    match RULES
        .iter()
        .find(|rule| rule.phrases.iter().any(|p| words.contains(&format!(" {p} "))))
    {
        Some(rule) => (Reading::Rule(rule), Err(rule.kind.to_error(&message))),
        None => (Reading::Unmatched, Err(ErrorKind::Rejected.to_error(&message))),
    }
}

/// `Error: …`, `ERROR 404`, `error - …`, but not `Errors are listed below`.
fn starts_with_the_word_error(text: &str) -> bool {
    let text = text.trim_start();
    text.get(..5).is_some_and(|head| head.eq_ignore_ascii_case("error"))
        && !text[5..].chars().next().is_some_and(char::is_alphanumeric)
}

/// Lower case, each run of non-alphanumeric characters one space, a space at
/// each end, so a phrase matches only whole words.
fn normalized(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push(' ');
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.ends_with(' ') {
            out.push(' ');
        }
    }
    if !out.ends_with(' ') {
        out.push(' ');
    }
    out
}

#[cfg(test)]
mod tests {
    use toolgate::runtime::classify;
    use toolgate::{Ambiguity, FailureClass};

    use super::*;

    /// The expected column was written from the rules' documentation above,
    /// not from the code: what each text means for the world, as a class.
    #[test]
    fn logged_texts_are_read_as_the_rules_say() {
        use FailureClass::*;
        let table: &[(&str, bool, Option<FailureClass>)] = &[
            (r#"{"id": "cus_1", "name": "Ann Lee"}"#, false, None),
            ("Customer found: Ann Lee", false, None),
            ("Paid $500 for INV-42.", false, None),
            (
                "Error: customer ann@acme.io not found",
                false,
                Some(Ambiguous(Ambiguity::WrongTarget)),
            ),
            ("Error: payment amount does not add up", false, Some(Definitive)),
            (
                "error: invoice INV-9 does not exist",
                false,
                Some(Ambiguous(Ambiguity::WrongTarget)),
            ),
            ("ERROR 404", false, Some(Ambiguous(Ambiguity::WrongTarget))),
            (
                r#"{"error": "No such customer"}"#,
                false,
                Some(Ambiguous(Ambiguity::WrongTarget)),
            ),
            (
                r#"{"error": {"message": "Request timed out after 30s"}}"#,
                false,
                Some(OutcomeUnknown),
            ),
            ("Error: the charge timed out", false, Some(OutcomeUnknown)),
            ("Error: 504 Gateway Timeout", false, Some(OutcomeUnknown)),
            ("Error: 502 Bad Gateway", false, Some(OutcomeUnknown)),
            ("Error: Too Many Requests", false, Some(Transient)),
            ("Error: 429", false, Some(Transient)),
            ("Error: HTTP 503 Service Unavailable", false, Some(Transient)),
            ("Error: connection refused (os error 111)", false, Some(Transient)),
            ("Error: connection reset by peer", false, Some(OutcomeUnknown)),
            (
                "Error: Traceback (most recent call last): KeyError 'amount'",
                false,
                Some(Internal),
            ),
            ("Error: amount $500 exceeds the card's limit", false, Some(Definitive)),
            ("Error: 403 Forbidden", false, Some(Ambiguous(Ambiguity::WrongTarget))),
            (
                "Error: permission denied for invoice INV-3",
                false,
                Some(Ambiguous(Ambiguity::WrongTarget)),
            ),
            (
                "Error: no results for acme.io",
                false,
                Some(Ambiguous(Ambiguity::NothingFound)),
            ),
            (
                "Error: could not parse the CRM's answer",
                false,
                Some(Ambiguous(Ambiguity::Unreadable)),
            ),
            ("Error: card declined (insufficient funds)", false, Some(Definitive)),
            ("The card was declined.", true, Some(Definitive)),
            ("Customer not found", true, Some(Ambiguous(Ambiguity::WrongTarget))),
            ("No customer matched; nothing found", false, None),
            ("Errors are listed below: none", false, None),
            ("error", false, Some(Definitive)),
        ];
        for (text, flagged, expected) in table {
            let (reading, outcome) = read(text, *flagged);
            let class = outcome.as_ref().err().map(|e| classify(&e.to_tool_error()));
            assert_eq!(class, *expected, "{text:?} read as {}", reading.describe());
            assert_eq!(reading.is_error(), expected.is_some(), "{text:?}");
        }
    }

    #[test]
    fn every_phrase_is_in_the_form_it_is_matched_in() {
        for rule in RULES {
            for phrase in rule.phrases {
                assert_eq!(normalized(phrase), format!(" {phrase} "), "{}: {phrase:?}", rule.name);
            }
        }
    }

    #[test]
    fn a_labelled_kind_must_be_one_gate_knows() {
        let error = serde_json::Map::new();
        assert_eq!(labelled(&error, "timeout"), Ok(Recorded::Timeout));
        let e = labelled(&error, "tiemout").expect_err("a typo");
        assert!(e.contains("`tiemout`") && e.contains("not_found"), "{e}");
    }
}
