//! `ipu-run`: run a model (IR or package) and check it against the reference.
fn main() {
    std::process::exit(ipu_driver::run::main(std::env::args_os()));
}
