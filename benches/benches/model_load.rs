//! Loading a model file: validation alone (`read_model`) and load + validate + plan
//! (`Model::from_bytes`, what the C API's load does) of the digits LeNet, and one run at
//! batch 1 through the runtime. Goal (issue 26): load + validate + plan within 0.2 ms.

use anfora_ir::Options;
use anfora_runtime::{LoadOptions, Model};
use anfora_session::{Arg, Session};
use anfora_tensor::Tensor;

fn main() {
    divan::main();
}

fn lenet_file() -> Vec<u8> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/digits_lenet.py");
    let text = std::fs::read_to_string(path).expect("the workload");
    let mut s = Session::load(path, &text, Options::default());
    let x = Tensor::zeros(&[1, 1, 8, 8], anfora_tensor::DType::F32).unwrap();
    let c = s
        .compiled("lenet", &[Arg::from(anfora_ops::Value::Tensor(x))])
        .unwrap();
    anfora_model::write_model(
        &s.frontend.module,
        c.graph,
        &c.abstracts,
        "bench",
        &Default::default(),
    )
    .unwrap()
}

#[divan::bench]
fn validate(b: divan::Bencher) {
    let file = lenet_file();
    let limits = anfora_model::Limits::default();
    b.bench(|| anfora_model::read_model(divan::black_box(&file), &limits).unwrap());
}

#[divan::bench]
fn load_validate_plan(b: divan::Bencher) {
    let file = lenet_file();
    b.bench(|| Model::from_bytes(divan::black_box(&file), &LoadOptions::default()).unwrap());
}

#[divan::bench]
fn run_batch_1(b: divan::Bencher) {
    anfora_runtime::set_num_threads(1);
    let model = Model::from_bytes(&lenet_file(), &LoadOptions::default()).unwrap();
    let x = Tensor::full(
        &[1, 1, 8, 8],
        anfora_tensor::Scalar::Float(0.5),
        anfora_tensor::DType::F32,
    )
    .unwrap();
    b.bench(|| model.run(std::slice::from_ref(&x)).unwrap());
}
