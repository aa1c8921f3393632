//! What a run is told: the failure mixes and every assumption, as fields a
//! reader can see and change. They are checked before anything runs, and
//! printed with the table, so no number in it rests on a hidden constant.

use serde::{Deserialize, Serialize};
use toolgate::Budget;

/// A failure mix: which faults are injected into the steps of a task, and how often.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mix {
    /// Every step may send a wrong argument type.
    InvalidArgs,
    /// Every step may call a tool name that does not exist.
    UnknownTool,
    /// Lookups may answer 403 without a body or an empty result.
    AmbiguousRead,
    /// The charge may time out after the backend charged.
    WriteTimeout,
    /// All four at lower rates.
    Mixed,
}

/// Per-step fault probabilities of a [`Mix`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Rates {
    /// Any step: the first call sends a wrong argument type.
    pub invalid_args: f64,
    /// Any step: the first call names a tool that does not exist.
    pub unknown_tool: f64,
    /// Lookup steps: the backend answers 403 without a body (half) or an empty result (half).
    pub ambiguous_read: f64,
    /// The charge step: the backend charges, then the call times out.
    pub write_timeout: f64,
}

impl Mix {
    /// Every mix, in table order.
    pub const ALL: [Mix; 5] = [
        Mix::InvalidArgs,
        Mix::UnknownTool,
        Mix::AmbiguousRead,
        Mix::WriteTimeout,
        Mix::Mixed,
    ];

    /// The name used on the command line and in the table.
    pub const fn name(self) -> &'static str {
        match self {
            Mix::InvalidArgs => "invalid-args",
            Mix::UnknownTool => "unknown-tool",
            Mix::AmbiguousRead => "ambiguous-read",
            Mix::WriteTimeout => "write-timeout",
            Mix::Mixed => "mixed",
        }
    }

    /// The mix called `name`, if any.
    pub fn parse(name: &str) -> Option<Mix> {
        Mix::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The per-step fault probabilities.
    pub const fn rates(self) -> Rates {
        let none = Rates {
            invalid_args: 0.0,
            unknown_tool: 0.0,
            ambiguous_read: 0.0,
            write_timeout: 0.0,
        };
        match self {
            Mix::InvalidArgs => Rates {
                invalid_args: 0.2,
                ..none
            },
            Mix::UnknownTool => Rates {
                unknown_tool: 0.2,
                ..none
            },
            Mix::AmbiguousRead => Rates {
                ambiguous_read: 0.2,
                ..none
            },
            Mix::WriteTimeout => Rates {
                write_timeout: 0.2,
                ..none
            },
            Mix::Mixed => Rates {
                invalid_args: 0.08,
                unknown_tool: 0.04,
                ambiguous_read: 0.08,
                write_timeout: 0.08,
            },
        }
    }
}

/// How specific pydantic-ai's retry prompts are taken to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PydanticMessages {
    /// pydantic-ai's real texts name the field (`loc`), the expected type
    /// (`msg`) and the input, and list the available tool names: the model
    /// fixes with `p_fix_specific`.
    Specific,
    /// Treat them as raw errors: the model fixes with `p_fix_raw`.
    Raw,
}

/// Everything the simulation assumes. Printed with the table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Params {
    /// Tasks per mix and policy.
    pub tasks: u64,
    /// The seed of every random stream.
    pub seed: u64,
    /// Steps per task: `steps - 1` customer lookups, then one charge.
    pub steps: u32,
    /// Tokens of the system prompt, before the tool definitions (which are
    /// counted from the real OpenAI manifest of the simulated tools).
    pub system_prompt_tokens: u64,
    /// The model fixes a call after a rejection that names the field path
    /// and the expected type (or lists the valid tool names).
    pub p_fix_specific: f64,
    /// The model fixes a call after a raw error message.
    pub p_fix_raw: f64,
    /// The model's next call succeeds after a correction that names the
    /// discovery tool or the widen hint.
    pub p_correct: f64,
    /// The model's next call succeeds after a raw ambiguous error (a blind resend).
    pub p_blind: f64,
    /// gate: repairs (rejections and retries) per task; gate's default is 2, at most 5.
    pub gate_max_repairs: u32,
    /// gate: rejections per task; gate's default is 2.
    pub gate_rejection_cap: u32,
    /// naive-retry-3: retries per failed call.
    pub naive_retries: u32,
    /// pydantic-ai-style: retries per tool (pydantic-ai's default `retries=1`).
    pub pydantic_retries: u32,
    /// pydantic-ai-style: model requests per run (pydantic-ai's default `request_limit=50`).
    pub pydantic_request_limit: u32,
    /// How specific pydantic-ai's retry prompts are taken to be.
    pub pydantic_messages: PydanticMessages,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            tasks: 1000,
            seed: 7,
            steps: 5,
            system_prompt_tokens: 1000,
            p_fix_specific: 0.9,
            p_fix_raw: 0.5,
            p_correct: 0.8,
            p_blind: 0.2,
            gate_max_repairs: 2,
            gate_rejection_cap: 2,
            naive_retries: 3,
            pydantic_retries: 1,
            pydantic_request_limit: 50,
            pydantic_messages: PydanticMessages::Specific,
        }
    }
}

/// Why the parameters cannot be simulated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamError(pub String);

impl std::fmt::Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParamError {}

impl Params {
    /// Checks every field's range.
    pub fn check(&self) -> Result<(), ParamError> {
        for (name, p) in [
            ("p-fix-specific", self.p_fix_specific),
            ("p-fix-raw", self.p_fix_raw),
            ("p-correct", self.p_correct),
            ("p-blind", self.p_blind),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(ParamError(format!("--{name} must be a probability in [0, 1], got {p}")));
            }
        }
        if self.steps < 1 || self.steps > 50 {
            return Err(ParamError(format!("--steps must be 1..=50, got {}", self.steps)));
        }
        if self.tasks > 10_000_000 {
            return Err(ParamError(format!(
                "--tasks must be at most 10,000,000, got {}",
                self.tasks
            )));
        }
        if self.system_prompt_tokens > 1_000_000 {
            return Err(ParamError("--system-tokens must be at most 1,000,000".to_owned()));
        }
        if self.naive_retries > 20 || self.pydantic_retries > 20 || self.pydantic_request_limit > 1000 {
            return Err(ParamError(
                "retry limits must be at most 20 (request limit 1000)".to_owned(),
            ));
        }
        Budget::default()
            .with_max_repairs(self.gate_max_repairs)
            .map_err(|e| ParamError(format!("--gate-max-repairs: {e}")))?;
        Ok(())
    }
}
