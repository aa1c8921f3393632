//! The runtime of gate: tools, toolboxes, provider manifests and the policy
//! that decides, for every failed call, whether to reject, retry with a
//! correction, or fail and reconcile.
//!
//! Most users depend on the `gate` facade crate, which re-exports this crate
//! and adds the `#[tool]` macros. This crate exists on its own so the runtime
//! compiles without proc-macro dependencies and can be used with tools that
//! are only known at run time.
#![forbid(unsafe_code)]

pub mod agent;
mod ctx;
mod effects;
mod error;
pub mod manifest;
pub mod provider;
pub mod runtime;
mod tool;
mod toolbox;

#[doc(hidden)]
pub mod __private;

pub use ctx::Ctx;
pub use effects::{Effects, EffectsError};
pub use error::{BoxError, ToolError};
pub use manifest::{Dialect, ManifestError};
pub use provider::{Provider, ProviderError};
pub use tool::{
    DynamicTool, PreparedCall, Tool, ToolFuture, ToolSpec, ToolSpecError, call_contained, is_portable_tool_name,
};
pub use toolbox::{Toolbox, ToolboxError};

pub use gate_budget as budget;
pub use gate_ledger as ledger;
pub use gate_sanitize as sanitize;
pub use gate_sanitize::Sanitizer;
pub use gate_validate as validate;
pub use runtime::{Budget, FailureClass, FailureReport, Gate, Step, Task, ToolCall};
