//! Generates the assembly-language parser from `src/asm/grammar.lalrpop`.
fn main() {
    println!("cargo:rerun-if-changed=src/asm/grammar.lalrpop");
    lalrpop::process_root().expect("the assembly grammar must compile");
}
