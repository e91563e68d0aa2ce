//! Exported models run in the runtime with results bit-identical to the compiled original:
//! recursion, a `while` loop, an `if` and closures stay graphs in the file.

mod common;

use anfora_runtime::{Error, LoadOptions, Model};
use common::{CASES, export, input, leaves, session};

fn bits(ts: &[anfora_tensor::Tensor]) -> Vec<(String, Vec<usize>, Vec<u8>)> {
    ts.iter()
        .map(|t| {
            (
                t.dtype().name().to_string(),
                t.shape().to_vec(),
                t.to_le_bytes(),
            )
        })
        .collect()
}

#[test]
fn exported_models_compute_what_the_compiled_functions_do() {
    let mut s = session();
    for (entry, literal) in CASES {
        let file = export(&mut s, entry, literal);
        let model = Model::from_bytes(&file, &LoadOptions::default()).expect("loads");
        let got = model.run(&[input(literal)]).expect("runs");
        let value = s
            .call(entry, common::args(literal), &mut Vec::new())
            .expect("the compiled function runs");
        let mut want = Vec::new();
        leaves(&value, &mut want);
        assert_eq!(bits(&got), bits(&want), "{entry}");
    }
}

#[test]
fn a_model_runs_on_other_inputs_of_its_type() {
    let mut s = session();
    let file = export(&mut s, "fibonacci", "[10.0]");
    let model = Model::from_bytes(&file, &LoadOptions::default()).unwrap();
    let out = model.run(&[input("[12.0]")]).unwrap();
    assert_eq!(out[0].as_f32_slice().unwrap(), &[144.0]);
    let file = export(&mut s, "grow", "[1.0, 2.0]");
    let model = Model::from_bytes(&file, &LoadOptions::default()).unwrap();
    let out = model.run(&[input("[40.0, 50.0]")]).unwrap();
    assert_eq!(out[0].as_f32_slice().unwrap(), &[81.0, 101.0]);
    assert_eq!(out[1].as_i64_slice().unwrap(), &[1]);
}

#[test]
fn wrong_inputs_are_refused_with_the_expected_type() {
    let mut s = session();
    let file = export(&mut s, "mlp", "[[1.0, 2.0], [-0.5, 0.25]]");
    let model = Model::from_bytes(&file, &LoadOptions::default()).unwrap();
    let e = model.run(&[input("[1.0, 2.0]")]).unwrap_err();
    assert_eq!(
        e,
        Error::Argument("input 'x' must be float32[2, 2], not float32[2]".into())
    );
    let e = model.run(&[]).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("the model takes 1 inputs (x: float32[2, 2]), 0 were given"),
        "{e}"
    );
}

#[test]
fn several_threads_run_one_model_at_once() {
    let mut s = session();
    let file = export(&mut s, "fibonacci", "[10.0]");
    let model = Model::from_bytes(&file, &LoadOptions::default()).unwrap();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let model = &model;
                scope.spawn(move || {
                    let n = [8.0f32, 9.0, 10.0, 11.0][i];
                    let want = [21.0f32, 34.0, 55.0, 89.0][i];
                    for _ in 0..20 {
                        let t = anfora_tensor::Tensor::from_f32(vec![n], &[1]).unwrap();
                        let out = model.run(&[t]).unwrap();
                        assert_eq!(out[0].as_f32_slice().unwrap(), &[want]);
                    }
                })
            })
            .collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
    });
}

#[test]
fn a_run_past_its_time_limit_stops() {
    let source = "from anfora import ops\ndef spin(x):\n    while ops.sum(x) > 0.0:\n        x = x * 1.0\n    return x\n";
    let mut s = anfora_session::Session::load("spin.py", source, anfora_ir::Options::default());
    let file = export(&mut s, "spin", "[1.0]");
    let model = Model::from_bytes(&file, &LoadOptions::default()).unwrap();
    model.set_timeout(Some(std::time::Duration::from_millis(50)));
    match model.run(&[input("[1.0]")]).unwrap_err() {
        Error::Raised {
            kind,
            message,
            traceback,
        } => {
            assert_eq!(kind, "TimeoutError");
            assert_eq!(message, "the run went past its time limit");
            assert!(traceback.contains("spin.py"), "{traceback}");
        }
        e => panic!("{e:?}"),
    }
}

#[test]
fn saving_writes_the_parameters_current_values() {
    let source = "import anfora\nfrom anfora import ops\nP = anfora.Parameter(ops.tensor([1.0, 2.0]), name='p')\ndef step(x):\n    ops.assign(P, P * x)\n    return ops.sum(P)\n";
    let mut s = anfora_session::Session::load("step.py", source, anfora_ir::Options::default());
    let file = export(&mut s, "step", "[2.0, 3.0]");
    let model = Model::from_bytes(&file, &LoadOptions::default()).unwrap();
    assert!(model.writes_parameters());
    let out = model.run(&[input("[2.0, 3.0]")]).unwrap();
    assert_eq!(out[0].as_f32_slice().unwrap(), &[8.0]);
    assert_eq!(
        model.parameter("p").unwrap().get().as_f32_slice().unwrap(),
        &[2.0, 6.0]
    );
    let again = Model::from_bytes(&model.to_bytes().unwrap(), &LoadOptions::default()).unwrap();
    assert_eq!(
        again.parameter("p").unwrap().get().as_f32_slice().unwrap(),
        &[2.0, 6.0]
    );
    let out = again.run(&[input("[2.0, 3.0]")]).unwrap();
    assert_eq!(out[0].as_f32_slice().unwrap(), &[22.0]);
}
