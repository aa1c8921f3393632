// A crate that re-exports the facade for its users (here the module `sdk`)
// tells the macros where it is with `crate = "…"`, as serde's derives take it.
mod sdk {
    pub use agent_tools as toolgate;
}

/// Say hello.
#[agent_tools::tool(read_only, crate = "crate::sdk::toolgate")]
fn hello(
    /// Whom to greet.
    name: String,
) -> String {
    format!("hello {name}")
}

struct Counter;

#[agent_tools::tools(crate = "crate::sdk::toolgate")]
impl Counter {
    /// Count to three.
    #[agent_tools::tool(read_only)]
    fn three(&self) -> u32 {
        3
    }
}

fn main() {
    assert_eq!(agent_tools::toolbox![hello].names(), ["hello"]);
    assert_eq!(Counter.into_toolbox().names(), ["three"]);
}
