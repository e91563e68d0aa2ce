//! Compiles `proto/onnx.proto` (the subset of ONNX's format this crate writes) into Rust types
//! with prost; protox parses the file, so no `protoc` is needed.

fn main() {
    let proto = "proto/onnx.proto";
    println!("cargo:rerun-if-changed={proto}");
    let files = protox::compile([proto], ["proto"]).expect("proto/onnx.proto parses");
    prost_build::Config::new()
        .compile_fds(files)
        .expect("prost generates the ONNX types");
}
