use toolgate::tools;

struct Crm;

#[tools]
impl Default for Crm {
    fn default() -> Self {
        Crm
    }
}

fn main() {}
