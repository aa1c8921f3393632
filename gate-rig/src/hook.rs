//! [`GateHook`]: what a rig agent decides before any tool runs, handed to
//! gate, and each model turn reported to the task.
//!
//! rig answers a call to an unknown tool, and a call whose arguments are
//! not a JSON object, itself: by default the first fails the whole run and
//! the second gets rig's own text. Neither reaches a tool, so without this
//! hook gate would never see them: no rejection naming the real tools, no
//! hint for the usual JSON slips, no count against the rejection cap.

use std::collections::HashMap;
use std::sync::Mutex;

use rig_agent::agent::{
    AgentHook, DispatchAction, DispatchEvent, HookContext, InvalidToolCallAction, InvalidToolCallContext,
    InvalidToolCallReason, OutcomeAction, OutcomeEvent,
};
use rig_core::effect::{EffectId, EffectKind};
use tokio::time::Instant;
use toolgate_core::{Step, ToolCall};

use crate::GateTools;

/// The rig hook of a [`GateTools`]: hands rig's invalid tool calls to gate
/// and reports each model turn's latency and usage to the task
/// ([`Task::record_turn`](toolgate_core::Task::record_turn)).
///
/// - A call to a tool the task cannot run (unknown, or not granted) is
///   answered with gate's rejection as the call's result. rig then runs none
///   of the turn's other calls (each is answered "not executed"), so the
///   model sends them again with the fix.
/// - A call to one of gate's tools whose arguments are not a JSON object
///   is answered with gate's rejection (line, column, the likely slip).
/// - When gate fails the task instead, the run is cancelled.
///
/// Calls to tools that are not gate's, and calls the turn's tool choice
/// disallows, are left to rig.
pub struct GateHook {
    tools: GateTools,
    /// When each model call in flight was dispatched.
    turns: Mutex<HashMap<EffectId, Instant>>,
}

impl GateHook {
    pub(crate) fn new(tools: GateTools) -> Self {
        GateHook {
            tools,
            turns: Mutex::new(HashMap::new()),
        }
    }

    fn turns(&self) -> std::sync::MutexGuard<'_, HashMap<EffectId, Instant>> {
        self.turns.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The start of the model call in flight, taken out of the map.
    fn latest_turn(&self) -> Option<Instant> {
        let mut turns = self.turns();
        let latest = turns.keys().max().copied()?;
        turns.remove(&latest)
    }

    async fn step(&self, event: &InvalidToolCallContext) -> Option<Step> {
        let id = match &event.tool_call_id {
            Some(id) => id.to_string(),
            None => self.tools.mint_call_id(),
        };
        let arguments = event.args.clone().unwrap_or_default();
        self.tools
            .handle(ToolCall::new(id, event.tool_name.clone(), arguments))
            .await
    }
}

impl AgentHook for GateHook {
    fn name(&self) -> Option<String> {
        Some("gate".to_owned())
    }

    async fn on_invalid_tool_call(
        &self,
        _ctx: &HookContext,
        event: &InvalidToolCallContext,
    ) -> Option<InvalidToolCallAction> {
        let gates = |name: &str| self.tools.definitions().iter().any(|d| d.name.as_str() == name);
        match &event.reason {
            // Not a tool for this turn. If gate would run it (the host left it
            // out of the agent's tools), running it here would bypass the
            // host's choice; gate rejects everything else without running it.
            InvalidToolCallReason::UnknownTool if !self.tools.would_run(&event.tool_name).await => {
                // rig fires no outcome hook for a turn it recovers (this one
                // will be: the call is skipped), so its latency is reported
                // here; its usage rig never tells a hook.
                let started = self.latest_turn();
                if let Some(started) = started {
                    self.tools.task().await.record_turn(started.elapsed(), None).await;
                }
                let step = self.step(event).await;
                Some(match step {
                    Some(Step::Fail(report)) => InvalidToolCallAction::Stop {
                        reason: report.model_text.clone(),
                    },
                    Some(step) => InvalidToolCallAction::Skip {
                        reason: step.model_text().to_owned(),
                    },
                    None => InvalidToolCallAction::Fail,
                })
            }
            InvalidToolCallReason::MalformedArguments { .. } if gates(&event.tool_name) => {
                let step = self.step(event).await;
                Some(match step {
                    Some(Step::Fail(report)) => InvalidToolCallAction::Stop {
                        reason: report.model_text.clone(),
                    },
                    // Answered as an error result with this text.
                    Some(step) => InvalidToolCallAction::Retry {
                        feedback: step.model_text().to_owned(),
                    },
                    None => InvalidToolCallAction::Fail,
                })
            }
            _ => None,
        }
    }

    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if matches!(event.kind, EffectKind::Completion { .. }) {
            self.turns().insert(event.id, Instant::now());
        }
        DispatchAction::Proceed
    }

    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if !matches!(event.kind, EffectKind::Completion { .. }) {
            return OutcomeAction::Proceed;
        }
        let Some(started) = self.turns().remove(&event.id) else {
            return OutcomeAction::Proceed;
        };
        let usage = event
            .completion()
            .and_then(|response| Some((response.usage.input_tokens?, response.usage.output_tokens?)));
        self.tools.task().await.record_turn(started.elapsed(), usage).await;
        OutcomeAction::Proceed
    }
}
