//! `ipu-run`: run a model (IR or package) and check it against the reference.
fn main() {
    ipu_driver::tune_allocator();
    std::process::exit(ipu_driver::run::main(std::env::args_os()));
}
