//! Holds nothing: the package exists for its tests, which compile tool
//! crates whose Cargo.toml names the facade `agent_tools` (a renamed
//! dependency) and check that `#[tool]`, `#[tools]` and `toolbox!` expand to
//! code that finds it.
