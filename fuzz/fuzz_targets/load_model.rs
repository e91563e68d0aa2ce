//! Loads arbitrary bytes as a model file; whatever loads is run once on zero inputs of its
//! declared types, under a time limit. Any panic or abort is a bug: the loader must refuse
//! with an error or the model must run to a value or a Python exception.
//!
//! `cargo +nightly fuzz run load_model` (from the repository root, with cargo-fuzz
//! installed); seed the corpus with exported models, e.g. `anfora export ... -o
//! fuzz/corpus/load_model/fib.anfora`.

#![no_main]

use anfora_runtime::{LoadOptions, Model};
use anfora_tensor::Tensor;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut options = LoadOptions::default();
    options.limits.max_bytes = 1 << 24;
    let Ok(model) = Model::from_bytes(data, &options) else {
        return;
    };
    model.set_timeout(Some(std::time::Duration::from_millis(100)));
    let inputs: Option<Vec<Tensor>> = model
        .inputs()
        .iter()
        .map(|(_, spec)| {
            let shape: Option<Vec<usize>> = spec.shape.iter().copied().collect();
            let shape = shape?;
            (shape.iter().product::<usize>() <= 1 << 16)
                .then(|| Tensor::zeros(&shape, spec.dtype).ok())
                .flatten()
        })
        .collect();
    if let Some(inputs) = inputs {
        let _ = model.run(&inputs);
    }
});
