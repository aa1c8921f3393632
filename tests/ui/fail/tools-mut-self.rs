use toolgate::tools;

struct Crm {
    visits: u32,
}

#[tools]
impl Crm {
    /// Count a visit.
    #[tool(idempotent)]
    fn visit(&mut self) -> u32 {
        self.visits += 1;
        self.visits
    }
}

fn main() {}
