//! Putting an approval request to the client's user: MCP form elicitation.
//!
//! A call that waits for a person (`await_approval`) is, by default, put to
//! the person at the client when the client can ask one: "Approve
//! `charge_card` with {…}?", accept or decline, with an optional reason. The
//! two protocol eras ask differently:
//!
//! - up to 2025-11-25 the server sends `elicitation/create` to the client
//!   while the call is open and waits for the answer ([`ClientApproval::Elicit`]'s
//!   `wait`);
//! - from 2026-07-28 on a server may not send requests, so the call answers
//!   with an `InputRequiredResult` holding the form, and the client calls
//!   again with the answer and the echoed `requestState` (the request's id).
//!
//! Either way the answer is a decision on the stored request by
//! [`MCP_CLIENT`], a compare-and-set like any other: it is taken only for the
//! request the identical call is waiting on, never for another call or other
//! arguments, and loses to a decision made first elsewhere. No answer (the
//! client cancelled, or the wait ran out) leaves the request pending for a
//! decision out of band. The functions here take what they read as
//! arguments; the connection ([`crate::Connection`]) sequences them.

use std::time::Duration;

use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, InputRequest,
    InputRequests, InputRequiredResult, InputResponses, PrimitiveSchemaDefinition, StringSchema,
};
use toolgate_core::ledger::{ApprovalDecision, ApprovalRecord, Verdict};

/// Who a decision taken through the client is recorded as.
pub const MCP_CLIENT: &str = "mcp-client";

/// How long a call waits for the client's user by default: 60 seconds.
pub const DEFAULT_ELICITATION_WAIT: Duration = Duration::from_secs(60);

/// The key of gate's form among an `InputRequiredResult`'s input requests,
/// and of its answer among the retried call's input responses.
pub const INPUT_KEY: &str = "gate/approval";

/// The reason recorded when the client's user declines without giving one.
const DECLINED_WITHOUT_REASON: &str = "declined in the MCP client";

/// The longest reason taken from a client: the ledger's limit for a
/// reason or a note, in bytes.
const MAX_REASON_BYTES: usize = 4096;

/// Whether a call that waits for approval is put to the client's user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientApproval {
    /// Ask through form elicitation when the client declared it can; wait
    /// up to `wait` for the answer where the server asks while the call is
    /// open (protocol revisions up to 2025-11-25). A client that cannot
    /// ask gets the pending text, as with [`OutOfBand`](Self::OutOfBand).
    Elicit {
        /// How long the call waits for the answer; past it (zero: at once)
        /// the request stays pending and the pending text is the result.
        wait: Duration,
    },
    /// Never ask the client: the pending text is the result, a person
    /// decides out of band (`gate approvals`, `gate.approvals()`), and the client's
    /// next identical call gets the decided result. Right when the client's
    /// user is not the one who may sign off (the agent runs unattended, or
    /// approvals belong to an operator).
    OutOfBand,
}

impl Default for ClientApproval {
    fn default() -> Self {
        ClientApproval::Elicit {
            wait: DEFAULT_ELICITATION_WAIT,
        }
    }
}

/// What the client's user answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    /// Run the call, with what they noted.
    Approve { note: Option<String> },
    /// Never run it, for this reason.
    Deny { reason: String },
    /// No decision (cancelled, dismissed, or an answer gate cannot read):
    /// the request stays pending.
    Undecided,
}

impl Answer {
    /// The decision on request `id`, unless there is none to take.
    pub(crate) fn decision(self, id: &str) -> Option<ApprovalDecision> {
        let (verdict, note) = match self {
            Answer::Approve { note } => (Verdict::Approve, note),
            Answer::Deny { reason } => (Verdict::Deny { reason }, None),
            Answer::Undecided => return None,
        };
        Some(ApprovalDecision {
            id: id.to_owned(),
            by: MCP_CLIENT.to_owned(),
            verdict,
            note,
        })
    }
}

/// The text of the form: the tool, the arguments in full, why a person is
/// asked, until when.
pub(crate) fn question_text(request: &ApprovalRecord) -> String {
    format!(
        "Approve `{}` with {}?\n\nWhy you are asked: {}\nRequest {} for user {}, expires {}. Accept runs the call once; decline means it never runs.",
        request.tool,
        request.arguments_pretty(),
        request.reason,
        request.id,
        request.user,
        request.expires_at.utc(),
    )
}

/// The form put to the client's user about `request`.
pub(crate) fn form(request: &ApprovalRecord) -> ElicitRequestParams {
    let reason = StringSchema::new()
        .title("Reason (optional)")
        .description("Recorded with the decision; a decline's reason is what the agent is told")
        .max_length(1000);
    let schema = ElicitationSchema::builder()
        .property("reason", PrimitiveSchemaDefinition::String(reason))
        .description("Accept to run the call once, decline so it never runs")
        .build_unchecked();
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question_text(request),
        requested_schema: schema,
    }
}

/// The answer to the form, for the 2026-07-28 era: the call answers with
/// this and the client calls again with its user's answer.
pub(crate) fn input_required(request: &ApprovalRecord) -> InputRequiredResult {
    let mut asked = InputRequests::new();
    asked.insert(
        INPUT_KEY.to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(form(request))),
    );
    InputRequiredResult::new(Some(asked), Some(request.id.clone()))
}

/// What the client's user answered in `result`.
pub(crate) fn answer(result: &ElicitResult) -> Answer {
    let reason = result
        .content
        .as_ref()
        .and_then(|c| c.get("reason"))
        .and_then(|r| r.as_str())
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(|r| truncated(r, MAX_REASON_BYTES).to_owned());
    match result.action {
        ElicitationAction::Accept => Answer::Approve { note: reason },
        ElicitationAction::Decline => Answer::Deny {
            reason: reason.unwrap_or_else(|| DECLINED_WITHOUT_REASON.to_owned()),
        },
        // Cancel, and whatever a later revision adds, decides nothing.
        _ => Answer::Undecided,
    }
}

/// The request a retried call answers and the answer given, when the call
/// carries both: the `requestState` gate set (a request's id) and an answer
/// to gate's form. An answer gate cannot read is [`Answer::Undecided`].
pub(crate) fn retried_answer(
    request_state: Option<&str>,
    responses: Option<&InputResponses>,
) -> Option<(String, Answer)> {
    let id = request_state?;
    let response = responses?.get(INPUT_KEY)?;
    let answer = serde_json::from_value::<ElicitResult>(response.clone()).map_or(Answer::Undecided, |r| answer(&r));
    Some((id.to_owned(), answer))
}

/// `text` cut to at most `max` bytes, on a character boundary.
fn truncated(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn elicit_result(wire: serde_json::Value) -> ElicitResult {
        serde_json::from_value(wire).unwrap()
    }

    #[test]
    fn the_answers_as_decisions() {
        let cases = [
            (json!({"action": "accept"}), Some((Verdict::Approve, None))),
            (
                json!({"action": "accept", "content": {"reason": " checked with Bob "}}),
                Some((Verdict::Approve, Some("checked with Bob"))),
            ),
            (
                json!({"action": "decline"}),
                Some((
                    Verdict::Deny {
                        reason: "declined in the MCP client".into(),
                    },
                    None,
                )),
            ),
            (
                json!({"action": "decline", "content": {"reason": "wrong customer"}}),
                Some((
                    Verdict::Deny {
                        reason: "wrong customer".into(),
                    },
                    None,
                )),
            ),
            (
                json!({"action": "decline", "content": {"reason": "  "}}),
                Some((
                    Verdict::Deny {
                        reason: "declined in the MCP client".into(),
                    },
                    None,
                )),
            ),
            (json!({"action": "cancel"}), None),
        ];
        for (wire, expected) in cases {
            let decision = answer(&elicit_result(wire.clone())).decision("apr-1");
            let got = decision.map(|d| {
                assert_eq!(d.id, "apr-1");
                assert_eq!(d.by, "mcp-client");
                (d.verdict, d.note)
            });
            let expected = expected.map(|(v, n)| (v, n.map(str::to_owned)));
            assert_eq!(got, expected, "{wire}");
        }
    }

    fn request() -> ApprovalRecord {
        ApprovalRecord {
            id: "apr-0f".into(),
            user: "ann".into(),
            task_id: "t-1".into(),
            call_id: "c-1".into(),
            tool: "charge_card".into(),
            arguments: r#"{"amount_cents":4500,"customer_id":"cus_bob"}"#.into(),
            arguments_sha256: "00".into(),
            intent_key: "k".into(),
            reason: "the tool is declared approval".into(),
            requested_at: toolgate_core::ledger::Timestamp::from_millis(0),
            expires_at: toolgate_core::ledger::Timestamp::from_millis(86_400_000),
            status: toolgate_core::ledger::ApprovalStatus::Pending,
            decided_by: None,
            decided_at: None,
            denial_reason: None,
            note: None,
        }
    }

    #[test]
    fn the_form_names_the_tool_the_arguments_in_full_and_the_reason() {
        let wire = serde_json::to_value(input_required(&request())).unwrap();
        assert_eq!(wire["resultType"], "input_required");
        assert_eq!(wire["requestState"], "apr-0f");
        let asked = &wire["inputRequests"][INPUT_KEY];
        assert_eq!(asked["method"], "elicitation/create");
        assert_eq!(asked["params"]["mode"], "form");
        let schema = &asked["params"]["requestedSchema"];
        assert_eq!(schema["properties"]["reason"]["type"], "string");
        assert!(
            schema
                .get("required")
                .is_none_or(|r| r.as_array().is_some_and(Vec::is_empty))
        );
        let message = asked["params"]["message"].as_str().unwrap();
        assert!(message.starts_with("Approve `charge_card` with {\n"), "{message}");
        assert!(message.contains("\"amount_cents\": 4500"), "{message}");
        assert!(message.contains("\"customer_id\": \"cus_bob\""), "{message}");
        assert!(message.contains("the tool is declared approval"), "{message}");
        assert!(message.contains("1970-01-02 00:00:00 UTC"), "{message}");
    }

    #[test]
    fn a_retried_call_answers_only_with_gates_state_and_key() {
        let mut responses = InputResponses::new();
        responses.insert(INPUT_KEY.to_owned(), json!({"action": "accept"}));
        assert_eq!(
            retried_answer(Some("apr-7"), Some(&responses)),
            Some(("apr-7".to_owned(), Answer::Approve { note: None }))
        );
        assert_eq!(retried_answer(None, Some(&responses)), None);
        assert_eq!(retried_answer(Some("apr-7"), None), None);
        let mut other = InputResponses::new();
        other.insert("someone-else".to_owned(), json!({"action": "accept"}));
        assert_eq!(retried_answer(Some("apr-7"), Some(&other)), None);
        let mut unreadable = InputResponses::new();
        unreadable.insert(INPUT_KEY.to_owned(), json!({"action": "sure"}));
        assert_eq!(
            retried_answer(Some("apr-7"), Some(&unreadable)),
            Some(("apr-7".to_owned(), Answer::Undecided))
        );
    }

    #[test]
    fn a_long_reason_is_cut_on_a_character_boundary() {
        let reason = "é".repeat(3000);
        let got = answer(&elicit_result(
            json!({"action": "decline", "content": {"reason": reason}}),
        ));
        let Answer::Deny { reason } = got else {
            panic!("a decline: {got:?}")
        };
        assert_eq!(reason.len(), 4096);
        assert!(reason.chars().all(|c| c == 'é'));
    }
}
