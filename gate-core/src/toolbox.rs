//! The set of tools an agent may call.
//!
//! A toolbox keeps registration order (manifests list tools in the order the
//! developer wrote them, and MCP asks for a deterministic order) and refuses two
//! tools with one name: a model that calls `search` must reach exactly one tool.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::manifest::{self, Dialect, ManifestError};
use crate::{Tool, ToolSpec};

/// An ordered set of uniquely named tools. Cheap to clone.
#[derive(Clone, Default)]
pub struct Toolbox {
    tools: Vec<Arc<dyn Tool>>,
    /// Every call looks its tool up here by the name the model sent;
    /// foldhash (seeded per process) hashes a name in a fraction of SipHash's
    /// time.
    by_name: HashMap<String, usize, foldhash::fast::RandomState>,
}

/// Why a tool could not join a toolbox.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("two tools are named `{name}`: {first} and {second}; tool names must be unique in a toolbox")]
pub struct ToolboxError {
    name: String,
    first: String,
    second: String,
}

impl ToolboxError {
    /// The name both tools claim.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl std::fmt::Debug for Toolbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|t| t.spec().name()))
            .finish()
    }
}

impl Toolbox {
    /// An empty toolbox.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool at the end.
    pub fn add(&mut self, tool: impl Tool) -> Result<&mut Self, ToolboxError> {
        self.add_shared(Arc::new(tool))
    }

    /// Adds a tool that is shared with other toolboxes.
    pub fn add_shared(&mut self, tool: Arc<dyn Tool>) -> Result<&mut Self, ToolboxError> {
        let name = tool.spec().name().to_owned();
        if let Some(&index) = self.by_name.get(&name) {
            return Err(ToolboxError {
                name,
                first: self.tools[index].spec().origin().to_owned(),
                second: tool.spec().origin().to_owned(),
            });
        }
        self.by_name.insert(name, self.tools.len());
        self.tools.push(tool);
        Ok(self)
    }

    /// Builder form of [`Toolbox::add`].
    pub fn with(mut self, tool: impl Tool) -> Result<Self, ToolboxError> {
        self.add(tool)?;
        Ok(self)
    }

    /// All tools of `other` after this toolbox's own.
    pub fn merge(mut self, other: Toolbox) -> Result<Self, ToolboxError> {
        for tool in other.tools {
            self.add_shared(tool)?;
        }
        Ok(self)
    }

    /// The tool with this exact name. Near misses are never returned: a model
    /// that misspells a tool name is told the valid names instead.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.get_indexed(name).map(|(_, tool)| tool)
    }

    /// The tool with this exact name and its place in registration order,
    /// for whoever keeps something per tool beside the toolbox.
    pub(crate) fn get_indexed(&self, name: &str) -> Option<(usize, &Arc<dyn Tool>)> {
        self.by_name.get(name).map(|&i| (i, &self.tools[i]))
    }

    /// Tools in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.tools.iter()
    }

    /// Specs in registration order.
    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.tools.iter().map(|t| t.spec())
    }

    /// Tool names in registration order.
    pub fn names(&self) -> Vec<&str> {
        self.specs().map(ToolSpec::name).collect()
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// True when there are no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The tool definitions for a provider, as a JSON array in registration
    /// order. Anything the dialect cannot express is an error naming the tool
    /// and the JSON path; gate never emits a manifest the provider would reject.
    pub fn manifest(&self, dialect: Dialect) -> Result<Value, ManifestError> {
        manifest::render(self.specs(), dialect)
    }

    /// Builds a toolbox from names that `toolbox!` and `#[tools]` have already
    /// proven unique at compile time.
    #[doc(hidden)]
    pub fn __from_unique(tools: Vec<Arc<dyn Tool>>) -> Self {
        let mut toolbox = Toolbox::new();
        for tool in tools {
            // Names were compared in a const assertion, so this cannot fail;
            // should it ever, the first tool wins rather than panicking.
            let _ = toolbox.add_shared(tool);
        }
        toolbox
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DynamicTool, Effects};
    use serde_json::json;

    fn tool(name: &str, origin: &str) -> DynamicTool {
        let spec = ToolSpec::new(name, "d", json!({"type": "object"}), Effects::new().read_only()).unwrap();
        DynamicTool::new(spec.with_origin(origin))
    }

    #[test]
    fn keeps_order_and_finds_by_exact_name() {
        let tb = Toolbox::new()
            .with(tool("b", "x"))
            .unwrap()
            .with(tool("a", "y"))
            .unwrap();
        assert_eq!(tb.names(), ["b", "a"]);
        assert!(tb.get("a").is_some());
        assert!(tb.get("A").is_none());
        assert_eq!(tb.len(), 2);
    }

    #[test]
    fn duplicate_names_name_both_tools() {
        let err = Toolbox::new()
            .with(tool("a", "`crate::one`"))
            .unwrap()
            .with(tool("a", "`crate::two`"))
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("`crate::one`") && text.contains("`crate::two`"), "{text}");
        assert_eq!(err.name(), "a");
    }

    #[test]
    fn merge_refuses_collisions() {
        let a = Toolbox::new().with(tool("a", "1")).unwrap();
        let b = Toolbox::new().with(tool("a", "2")).unwrap();
        assert!(a.merge(b).is_err());
    }
}
