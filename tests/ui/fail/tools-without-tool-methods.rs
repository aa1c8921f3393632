use gate::tools;

struct Crm;

#[tools]
impl Crm {
    fn helper(&self) {}
}

fn main() {}
