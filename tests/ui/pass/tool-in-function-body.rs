//! Tools may be declared where they are used.
use toolgate::{tool, toolbox};

fn main() {
    /// A local tool.
    #[tool(read_only)]
    fn local(x: u8) -> u8 {
        x
    }
    assert_eq!(toolbox![local].names(), ["local"]);
}
