//! `ipu-translate`: convert between IR and other formats (ONNX in; packages later).
fn main() {
    ipu_driver::tune_allocator();
    std::process::exit(ipu_driver::translate::main(std::env::args_os()));
}
