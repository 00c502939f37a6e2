//! `ipu-opt`: parse, verify, transform and print IR, like `mlir-opt`.
fn main() {
    std::process::exit(ipu_driver::opt::main(std::env::args_os()));
}
