//! `include/anfora_runtime.h` is cbindgen's output for `src/capi.rs` with `cbindgen.toml`:
//! this test regenerates it and fails when the checked-in header differs. After changing the
//! C API, `ANFORA_BLESS=1 cargo test -p anfora-runtime --test header` rewrites the header.

use std::path::Path;

#[test]
fn header_is_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    // Only the C API's file: cbindgen needs no `cargo metadata` run, and nothing else in the
    // crate is exported.
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/capi.rs"))
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).expect("the header is UTF-8");
    let path = dir.join("include/anfora_runtime.h");
    if std::env::var_os("ANFORA_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write the header");
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current != generated {
        let line = current
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| current.lines().count().min(generated.lines().count()))
            + 1;
        panic!(
            "{} is not what cbindgen generates from src/capi.rs (first difference at line \
             {line}); update it with\n    ANFORA_BLESS=1 cargo test -p anfora-runtime --test header",
            path.display()
        );
    }
    for name in [
        "anfora_model_load",
        "anfora_model_run_alloc",
        "typedef struct AnforaModel AnforaModel;",
        "ANFORA_INVALID_ARGUMENT = 1",
        "#define ANFORA_RUNTIME_H",
    ] {
        assert!(generated.contains(name), "the header lacks {name}");
    }
}
