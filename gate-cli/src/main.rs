fn main() {
    let tb = gate_examples::catalog::toolbox();
    for d in gate::Dialect::ALL {
        match tb.manifest(d) {
            Ok(v) => println!("== {d}\n{}", serde_json::to_string(&v).unwrap()),
            Err(e) => println!("== {d} ERR {e}"),
        }
    }
    for t in tb.specs() {
        println!("SRC {} {}", t.name(), t.input_schema());
    }
}
