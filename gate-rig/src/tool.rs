//! One gate tool as a rig tool handler, and the rig answer for each step.
//!
//! Why rig's `Serve` contract rather than its `Tool` or `DynamicTool`: what
//! those return is always a tool result, and rig goes on with the run after
//! a failed one, while a task gate failed must stop it; only a handler's
//! error of kind `Cancelled` ends the run. A handler also receives the
//! argument text itself, which it passes to gate unparsed.

use rig_core::completion::ToolDefinition;
use rig_core::effect::{EffectKind, FamilyDescriptor, HandlerDescriptor, Outcome, family, tool_key};
use rig_core::error::{ErrorKind, ErrorReport};
use rig_core::serve::{Dispatch, Reply, Serve};
use rig_core::tool::{ToolErrorKind, ToolExecutionError, ToolOutput, ToolResult};
use toolgate_core::{FailureClass, Step, ToolCall};

use crate::GateTools;

/// The handler rig calls for one of the task's tools.
pub(crate) struct GateTool {
    tools: GateTools,
    definition: ToolDefinition,
}

impl GateTool {
    pub(crate) fn new(tools: GateTools, definition: ToolDefinition) -> Self {
        GateTool { tools, definition }
    }
}

impl Serve for GateTool {
    type Family = family::Tool;

    fn descriptor(&self) -> HandlerDescriptor {
        HandlerDescriptor {
            key: tool_key(self.definition.name.as_str()),
            family: FamilyDescriptor::Tool {
                name: self.definition.name.to_string(),
                description: self.definition.description.clone(),
                parameters: self.definition.parameters.clone(),
                embedding: None,
            },
            layers: Vec::new(),
        }
    }

    async fn serve(&self, kind: EffectKind, _dispatch: Dispatch) -> Reply {
        let EffectKind::ToolCall { name, args } = kind else {
            return Reply::Outcome(Err(ErrorReport::new(
                ErrorKind::HandlerUnavailable,
                format!("the gate tool `{}` serves tool calls only", self.definition.name),
            )));
        };
        let call = ToolCall::new(self.tools.mint_call_id(), name, args);
        match self.tools.handle(call).await {
            Some(step) => reply(&step),
            None => Reply::Outcome(Err(ErrorReport::new(
                ErrorKind::Internal,
                "gate's handling of the call stopped unexpectedly; the decision log says what it recorded",
            ))),
        }
    }
}

/// What rig carries for `step`: a result the model reads, or, for a
/// failed task, a cancellation that ends the run.
fn reply(step: &Step) -> Reply {
    let code = format!("gate:{}", step.action().as_str());
    let text = step.model_text();
    let result = match step {
        Step::Return(out) if !out.is_error => ToolResult::success(ToolOutput::text(text)),
        // A definitive answer (card declined): the tool's own error.
        Step::Return(_) => failed(ToolErrorKind::Other, text, code),
        Step::Reject(_) => failed(ToolErrorKind::InvalidArgs, text, code),
        Step::Retry(feedback) => failed(retry_kind(feedback.class), text, code),
        Step::Fail(_) => return Reply::Outcome(Err(ErrorReport::new(ErrorKind::Cancelled, text).with_code(code))),
        // A step gate adds later: the model reads its text as the tool's
        // error, and the run goes on.
        _ => failed(ToolErrorKind::Other, text, code),
    };
    Reply::Outcome(Ok(Outcome::ToolResult { result }))
}

/// A failed result whose model-visible text is gate's, verbatim (rig
/// shows the model an explicit error's message; only errors it wraps from
/// other types get a generic text).
fn failed(kind: ToolErrorKind, text: &str, code: String) -> ToolResult {
    ToolResult::failed(
        ToolExecutionError::new(kind, text)
            .with_code(code)
            .with_retryable(false),
    )
}

/// rig's nearest kind for a failure gate answers with a correction.
fn retry_kind(class: FailureClass) -> ToolErrorKind {
    use toolgate_core::ledger::Ambiguity;
    match class {
        FailureClass::Ambiguous(Ambiguity::WrongTarget) => ToolErrorKind::PermissionDenied,
        FailureClass::Ambiguous(Ambiguity::NothingFound) => ToolErrorKind::NotFound,
        _ => ToolErrorKind::Other,
    }
}
