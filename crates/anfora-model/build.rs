//! Compiles the model schema with protox (pure Rust: no `protoc` needed) and prost-build.

fn main() {
    let proto = "proto/anfora_model.proto";
    println!("cargo:rerun-if-changed={proto}");
    let files = protox::compile([proto], ["proto"]).expect("the model schema compiles");
    prost_build::Config::new()
        .compile_fds(files)
        .expect("prost generates the schema's types");
}
