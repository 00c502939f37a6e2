//! `ipu-opt`: parse, verify, transform and print IR, like `mlir-opt`.
fn main() {
    ipu_driver::tune_allocator();
    std::process::exit(ipu_driver::opt::main(std::env::args_os()));
}
