use toolgate::tools;

struct Crm;

#[tools]
impl Crm {
    fn helper(&self) {}
}

fn main() {}
