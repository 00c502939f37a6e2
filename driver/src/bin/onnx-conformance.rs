//! `onnx-conformance`: the ONNX backend node tests through the importer and
//! the reference interpreter, or (`--device TARGET`) compiled and run on the
//! simulated device.
fn main() {
    ipu_driver::tune_allocator();
    std::process::exit(ipu_driver::conformance::main(std::env::args_os()));
}
