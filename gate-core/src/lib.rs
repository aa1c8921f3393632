//! The runtime of gate: tools, toolboxes, provider manifests and the policy
//! that decides, for every failed call, whether to reject, retry with a
//! correction, or fail and reconcile.
//!
//! Most users depend on the `gate` facade crate, which adds the `#[tool]`
//! macros and gives every item one path. This crate exists apart from the
//! facade so that the crates built on the runtime (`gate-mcp`, `gate-rig`)
//! can depend on it while the facade re-exports them behind its features;
//! tools known only at run time ([`DynamicTool`], imported manifests) need
//! nothing more than this crate.
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod agent;
mod ctx;
mod effects;
mod error;
pub mod guard;
pub mod manifest;
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub mod postgres;
pub mod provider;
pub mod runtime;
mod tool;
mod toolbox;

#[doc(hidden)]
pub mod __private;

pub use ctx::{Ctx, Principal};
pub use effects::{Effects, EffectsError};
pub use error::{BoxError, ToolError};
pub use manifest::{Dialect, ManifestError};
pub use provider::{Provider, ProviderError};
pub use tool::{DynamicTool, PreparedCall, Tool, ToolFuture, ToolSpec, ToolSpecError, is_portable_tool_name};
pub use toolbox::{Toolbox, ToolboxError};

pub use runtime::{Budget, FailureClass, FailureReport, Gate, Step, Task, ToolCall};
pub use toolgate_budget as budget;
pub use toolgate_ledger as ledger;
pub use toolgate_sanitize as sanitize;
pub use toolgate_sanitize::Sanitizer;
pub use toolgate_validate as validate;
