#!/usr/bin/env python3
"""Writes two crates of the same N tools: one with gate's `#[tool]` and
`toolbox!`, one with rmcp's `#[tool]` and `#[tool_router]`.

Every tool and every argument has a doc comment; the arguments cycle through
five shapes (one string; a string and an integer; an optional string and a
flag; a list and an integer; four mixed scalars), so neither macro is timed on
a single trivial signature. Usage: generate.py OUT_DIR GATE_PATH [N]

Each crate takes only what its tools need, as a tools crate would: rmcp with
`default-features = false` and its `server` and `macros` features, gate with
`default-features = false` (the macros, the runtime and the memory store;
no SQL store, no HTTP client). `GATE_FEATURES=default` gives gate its
default features instead (the SQLite store and the OpenAI-compatible client).
"""

import os
import sys

SHAPES = [
    [("query", "String", "The text to search for.")],
    [("customer_id", "String", "The customer's id."), ("limit", "u32", "How many results to return at most.")],
    [
        ("email", "String", "The customer's email address."),
        ("note", "Option<String>", "A note for the record, if any."),
        ("include_history", "bool", "Whether to include the order history."),
    ],
    [("tags", "Vec<String>", "The tags to match."), ("page", "u64", "The page to return, from 0.")],
    [
        ("name", "String", "The name to record."),
        ("amount", "i64", "The amount in cents."),
        ("rate", "f64", "The exchange rate to apply."),
        ("retries", "Option<u32>", "How often the downstream may retry."),
    ],
]


def body(args):
    return "format!(\"" + " ".join("{:?}" for _ in args) + "\", " + ", ".join(name for name, _, _ in args) + ")"


def gate_crate(n):
    out = ["//! Generated: {} tools through gate's `#[tool]` and `toolbox!`.".format(n), ""]
    out.append("use toolgate::{tool, toolbox, Toolbox};")
    out.append("")
    for i in range(n):
        args = SHAPES[i % len(SHAPES)]
        out.append("/// Tool number {}: looks records up by the given fields and says what it found.".format(i))
        out.append("#[tool(read_only)]")
        out.append("async fn tool_{}(".format(i))
        for name, ty, doc in args:
            out.append("    /// {}".format(doc))
            out.append("    {}: {},".format(name, ty))
        out.append(") -> String {")
        out.append("    {}".format(body(args)))
        out.append("}")
        out.append("")
    out.append("/// Every tool.")
    out.append("pub fn tools() -> Toolbox {")
    out.append("    toolbox![{}]".format(", ".join("tool_{}".format(i) for i in range(n))))
    out.append("}")
    return "\n".join(out) + "\n"


def rmcp_crate(n):
    out = ["//! Generated: {} tools through rmcp's `#[tool]` and `#[tool_router]`.".format(n), ""]
    out.append("use rmcp::handler::server::router::tool::ToolRouter;")
    out.append("use rmcp::handler::server::wrapper::Parameters;")
    out.append("use rmcp::{tool, tool_router};")
    out.append("")
    for i in range(n):
        args = SHAPES[i % len(SHAPES)]
        out.append("/// The arguments of tool number {}.".format(i))
        out.append("#[derive(serde::Deserialize, schemars::JsonSchema)]")
        out.append("pub struct Tool{}Args {{".format(i))
        for name, ty, doc in args:
            out.append("    /// {}".format(doc))
            out.append("    pub {}: {},".format(name, ty))
        out.append("}")
        out.append("")
    out.append("/// The server whose methods are the tools.")
    out.append("#[derive(Clone)]")
    out.append("pub struct Server;")
    out.append("")
    out.append("#[tool_router]")
    out.append("impl Server {")
    for i in range(n):
        args = SHAPES[i % len(SHAPES)]
        fields = ", ".join(name for name, _, _ in args)
        out.append("    /// Tool number {}: looks records up by the given fields and says what it found.".format(i))
        out.append("    #[tool(annotations(read_only_hint = true))]")
        out.append(
            "    async fn tool_{i}(&self, Parameters(Tool{i}Args {{ {f} }}): Parameters<Tool{i}Args>) -> String {{".format(
                i=i, f=fields
            )
        )
        out.append("        {}".format(body(args)))
        out.append("    }")
        out.append("")
    out.append("}")
    out.append("")
    out.append("/// Every tool.")
    out.append("pub fn tools() -> ToolRouter<Server> {")
    out.append("    Server::tool_router()")
    out.append("}")
    return "\n".join(out) + "\n"


MANIFESTS = {
    "gate": """[package]
name = "tools-gate"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
toolgate = {{ path = "{gate}"{features} }}

[workspace]
""",
    "rmcp": """[package]
name = "tools-rmcp"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
rmcp = { version = "=3.11.0", default-features = false, features = ["server", "macros"] }
serde = { version = "1", features = ["derive"] }
schemars = "1"

[workspace]
""",
}


def gate_features():
    """The gate dependency's feature settings: none unless asked for."""
    if os.environ.get("GATE_FEATURES", "lean") == "default":
        return ""
    return ", default-features = false"


def main():
    out_dir, gate_path = sys.argv[1], os.path.abspath(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    for kind, source in (("gate", gate_crate(n)), ("rmcp", rmcp_crate(n))):
        crate = os.path.join(out_dir, kind)
        os.makedirs(os.path.join(crate, "src"), exist_ok=True)
        with open(os.path.join(crate, "Cargo.toml"), "w") as f:
            f.write(MANIFESTS[kind].format(gate=gate_path, features=gate_features()) if kind == "gate" else MANIFESTS[kind])
        with open(os.path.join(crate, "src", "lib.rs"), "w") as f:
            f.write(source)


if __name__ == "__main__":
    main()
