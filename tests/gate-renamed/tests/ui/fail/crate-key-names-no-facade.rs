// `crate = "…"` names a path where the facade is not: the error points at
// the path the attribute wrote.
/// Say hello.
#[agent_tools::tool(read_only, crate = "crate::nowhere")]
fn hello() -> String {
    "hello".to_owned()
}

fn main() {}
