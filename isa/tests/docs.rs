//! docs/isa.md carries the instruction table generated from the ISA table,
//! so the documentation cannot drift from the encoder and simulator.
//! Regenerate with `cargo run -p ipu-isa --bin ipu-as -- --isa-table`.

#[test]
fn isa_doc_has_the_current_instruction_table() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/isa.md"))
        .expect("docs/isa.md");
    let table = ipu_isa::table::markdown_table();
    assert!(
        doc.contains(&table),
        "docs/isa.md is out of date: paste the output of `ipu-as --isa-table` into it"
    );
}
