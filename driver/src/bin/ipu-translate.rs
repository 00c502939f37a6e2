//! `ipu-translate`: convert between IR and other formats (ONNX in; packages later).
fn main() {
    std::process::exit(ipu_driver::translate::main(std::env::args_os()));
}
