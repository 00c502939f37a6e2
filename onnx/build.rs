//! Compile `proto/onnx.proto` with protox (pure Rust, no protoc) and
//! generate prost message types.

fn main() {
    println!("cargo:rerun-if-changed=proto/onnx.proto");
    let fds = match protox::compile(["onnx.proto"], ["proto"]) {
        Ok(fds) => fds,
        Err(e) => {
            eprintln!("error: failed to compile proto/onnx.proto: {e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = prost_build::Config::new().compile_fds(fds) {
        eprintln!("error: prost-build failed: {e}");
        std::process::exit(1);
    }
}
