//! The converter on a model exported by the compiler: weight-only and full int8 models
//! computed by the runtime against the float model, the int8 graph's shape (one quantization
//! at the input, no dequantization between layers, a float32 result from the last product),
//! and the errors of bad calibration data and options.

use anfora_convert::{ConvertError, Method, Options, Quantization, convert};
use anfora_ir::Prim;
use anfora_runtime::{LoadOptions, Model};
use anfora_session::{Arg, Session};
use anfora_tensor::Tensor;

/// Deterministic values in [-1, 1).
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

fn literal(v: &[f32], cols: usize) -> String {
    let rows: Vec<String> = v
        .chunks(cols)
        .map(|r| {
            format!(
                "[{}]",
                r.iter()
                    .map(|x| format!("{x:.6}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect();
    format!("[{}]", rows.join(", "))
}

fn row(v: &[f32]) -> String {
    let l = literal(v, v.len());
    l[1..l.len() - 1].to_string()
}

const BATCH: usize = 32;

/// A 16 → 24 → 10 MLP with ReLU, its weights module constants.
fn model() -> Vec<u8> {
    let source = format!(
        "from anfora import ops\nW1 = ops.tensor({})\nB1 = ops.tensor({})\nW2 = ops.tensor({})\n\
         B2 = ops.tensor({})\n\ndef mlp(x):\n    h = ops.relu(x @ W1 + B1)\n    return h @ W2 + B2\n",
        literal(&values(16 * 24, 1), 24),
        row(&values(24, 2)),
        literal(&values(24 * 10, 3), 10),
        row(&values(10, 4)),
    );
    let x = Tensor::from_f32(values(BATCH * 16, 5), &[BATCH, 16]).unwrap();
    export(&source, "mlp", x)
}

/// The model file of `entry` of `source` compiled for `x`.
fn export(source: &str, entry: &str, x: Tensor) -> Vec<u8> {
    let mut s = Session::load("m.py", source, Default::default());
    let c = s
        .compiled(entry, &[Arg::from(anfora_ops::Value::Tensor(x))])
        .expect("compiles");
    let names = Default::default();
    anfora_model::write_model(&s.frontend.module, c.graph, &c.abstracts, "test", &names)
        .expect("exports")
}

fn batch(seed: u64) -> Tensor {
    Tensor::from_f32(values(BATCH * 16, seed), &[BATCH, 16]).unwrap()
}

fn run(bytes: &[u8], x: &Tensor) -> Vec<f32> {
    let m = Model::from_bytes(bytes, &LoadOptions::default()).expect("loads");
    let out = m.run(std::slice::from_ref(x)).expect("runs");
    out[0].as_f32_slice().expect("float32").to_vec()
}

/// The largest difference relative to the largest magnitude of `want`.
fn relative_error(got: &[f32], want: &[f32]) -> f32 {
    let top = want.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let worst = got
        .iter()
        .zip(want)
        .fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
    worst / top
}

/// The primitives of the model's entry graph, in order.
fn prims(bytes: &[u8]) -> Vec<Prim> {
    let l = anfora_model::read_model(bytes, &Default::default()).expect("reads");
    (l.module.graph_nodes(l.entry).iter())
        .filter_map(|&n| l.module.callee_prim(n))
        .collect()
}

#[test]
fn weight_only_int8_and_int4_stay_close_to_float() {
    let bytes = model();
    let mut sizes = Vec::new();
    for (mode, bound) in [
        (Quantization::WeightInt8, 0.01),
        (Quantization::WeightInt4, 0.15),
    ] {
        let options = Options {
            quantize: Some(mode),
            ..Options::default()
        };
        let (q, report) = convert(&bytes, &options, &[]).expect("converts");
        assert_eq!(report.changes.len(), 2, "{report}");
        let p = prims(&q);
        assert_eq!(
            p.iter().filter(|p| **p == Prim::WeightOnlyMatMul).count(),
            2,
            "{p:?}"
        );
        assert!(!p.contains(&Prim::Gemm), "{p:?}");
        sizes.push(q.len());
        let x = batch(9);
        let err = relative_error(&run(&q, &x), &run(&bytes, &x));
        assert!(err < bound, "{mode:?}: relative error {err}");
    }
    // The weights' blobs shrink by half again (the graph message is most of so small a file).
    assert!(sizes[1] < sizes[0] && sizes[0] < bytes.len(), "{sizes:?}");
}

#[test]
fn int8_never_dequantizes_between_layers_and_stays_close_to_float() {
    let bytes = model();
    let calibration = vec![
        Tensor::from_f32(values(10 * BATCH * 16 + 7 * 16, 10), &[10 * BATCH + 7, 16]).unwrap(),
    ];
    for method in [Method::MinMax, Method::Percentile(99.99), Method::Entropy] {
        let options = Options {
            quantize: Some(Quantization::Int8),
            method,
            per_tensor: false,
        };
        let (q, report) = convert(&bytes, &options, &calibration).expect("converts");
        let p = prims(&q);
        let count = |prim| p.iter().filter(|p| **p == prim).count();
        assert_eq!(count(Prim::Quantize), 1, "{p:?} {report}");
        assert_eq!(count(Prim::QuantMatMul), 2, "{p:?} {report}");
        assert_eq!(count(Prim::Dequantize), 0, "{p:?}");
        assert!(
            !p.contains(&Prim::Gemm) && !p.contains(&Prim::Relu),
            "{p:?}"
        );
        assert!(report.size_after < report.size_before, "{report}");
        let x = batch(3);
        let err = relative_error(&run(&q, &x), &run(&bytes, &x));
        // The entropy method clips uniform data (no long tail to trade off) harder.
        let bound = if method == Method::Entropy { 0.3 } else { 0.06 };
        assert!(err < bound, "{method:?}: relative error {err}");
    }
}

#[test]
fn bad_calibration_data_and_options_are_clear_errors() {
    let bytes = model();
    let int8 = Options {
        quantize: Some(Quantization::Int8),
        ..Options::default()
    };
    let e = convert(&bytes, &int8, &[]).unwrap_err();
    assert!(e.to_string().contains("needs calibration data"), "{e}");
    let few = vec![Tensor::from_f32(vec![0.0; 16], &[1, 16]).unwrap()];
    let e = convert(&bytes, &int8, &few).unwrap_err();
    assert_eq!(
        e.to_string(),
        "calibration data: input 'x': 1 samples, fewer than the model's batch of 32"
    );
    let wrong = vec![Tensor::from_f64(vec![0.0; 64 * 16], &[64, 16]).unwrap()];
    let e = convert(&bytes, &int8, &wrong).unwrap_err();
    assert!(
        matches!(&e, ConvertError::Data(m) if m.contains("not float64 [64, 16]")),
        "{e}"
    );
    let e = convert(&bytes, &int8, &[few[0].clone(), few[0].clone()]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "calibration data: 2 arrays for a model of 1 tensor inputs"
    );
    let mut v = values(BATCH * 16, 1);
    v[17] = f32::NAN;
    let nan = vec![Tensor::from_f32(v, &[BATCH, 16]).unwrap()];
    let e = convert(&bytes, &int8, &nan).unwrap_err();
    assert_eq!(
        e.to_string(),
        "calibration data holds NaN at position 17: quantization needs finite values"
    );
    let e = Method::parse("median").unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown calibration method 'median': use minmax, percentile or kl"
    );
    let e = Quantization::parse("int3").unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown quantization 'int3': use int8, weight-int8 or weight-int4"
    );
}

/// The quantized operations in a program, on the compiled engine and the reference VM: the
/// same integers (both run the same integer arithmetic).
#[test]
fn both_engines_give_the_same_integers() {
    let source = "from anfora import ops\n\
        def f(x, w, wc):\n\
        \x20   q = ops.quantize(x, 0.05, 7)\n\
        \x20   y = ops.quant_matmul(q, 0.05, 7, w, ops.tensor([0.01, 0.02, 0.03], dtype='float32'), None, 0.1, 3, True)\n\
        \x20   img = ops.reshape(ops.quantize(x, 0.05, 7), (1, 2, 2, 4))\n\
        \x20   c = ops.quant_conv2d(img, 0.05, 7, wc, (2, 2), ops.tensor([0.01, 0.02], dtype='float32'), None, None, 0, False, (1, 1), (1, 0, 0, 1), (1, 1))\n\
        \x20   return y, ops.dequantize(y, 0.1, 3), c, ops.max_pool2d(ops.reshape(y, (1, 1, 4, 3)), 2)\n";
    let x = Tensor::from_f32(values(16, 21), &[4, 4]).unwrap();
    let w = Tensor::from_i8(
        (0..12).map(|i| (i * 37 % 255 - 127) as i8).collect(),
        &[4, 3],
    )
    .unwrap();
    let wc = Tensor::from_i8(
        (0..16).map(|i| (i * 53 % 255 - 127) as i8).collect(),
        &[8, 2],
    )
    .unwrap();
    let args: Vec<Arg> = [x, w, wc]
        .into_iter()
        .map(|t| Arg::from(anfora_ops::Value::Tensor(t)))
        .collect();
    let mut results = Vec::new();
    for engine in [
        anfora_session::Engine::Compiled,
        anfora_session::Engine::Reference,
    ] {
        let mut s = Session::load("q.py", source, Default::default());
        s.engine = engine;
        let v = s
            .call("f", args.clone(), &mut std::io::sink())
            .expect("runs");
        results.push(anfora_ops::value::repr(&v));
    }
    assert_eq!(results[0], results[1]);
    assert!(results[0].contains("dtype=uint8"), "{}", results[0]);
}

/// A convolution, an inference BatchNorm written out, ReLU and a dense layer.
fn bn_model() -> Vec<u8> {
    let per = |seed, lo: f32| {
        row(&values(4, seed)
            .iter()
            .map(|v| v.abs() + lo)
            .collect::<Vec<_>>())
    };
    let source = format!(
        "from anfora import ops\nW = ops.reshape(ops.tensor([{}]), (4, 2, 3, 3))\n\
         M = ops.tensor([{}])\nV = ops.tensor([{}])\nG = ops.tensor([{}])\nB = ops.tensor([{}])\n\
         W2 = ops.tensor({})\n\n\
         def net(x):\n\
         \x20   y = ops.conv2d(x, W, padding=1)\n\
         \x20   y = (y - ops.reshape(M, (1, -1, 1, 1))) / ops.sqrt(ops.reshape(V, (1, -1, 1, 1)) + 1e-5)\n\
         \x20   y = ops.relu(y * ops.reshape(G, (1, -1, 1, 1)) + ops.reshape(B, (1, -1, 1, 1)))\n\
         \x20   return ops.reshape(y, (8, -1)) @ W2\n",
        row(&values(72, 31)),
        row(&values(4, 32)),
        per(33, 0.5),
        per(34, 0.5),
        row(&values(4, 35)),
        literal(&values(4 * 25 * 10, 36), 10),
    );
    let x = Tensor::from_f32(values(8 * 2 * 25, 37), &[8, 2, 5, 5]).unwrap();
    export(&source, "net", x)
}

#[test]
fn batch_norms_fold_into_the_convolution_and_its_bias_into_the_int8_layer() {
    let bytes = bn_model();
    let x = Tensor::from_f32(values(8 * 2 * 25, 38), &[8, 2, 5, 5]).unwrap();
    let float = run(&bytes, &x);
    let (folded, report) = convert(&bytes, &Options::default(), &[]).expect("converts");
    let p = prims(&folded);
    assert!(
        !p.contains(&Prim::Sub) && !p.contains(&Prim::Div) && !p.contains(&Prim::Mul),
        "{p:?} {report}"
    );
    assert_eq!(
        p.iter().filter(|p| **p == Prim::Add).count(),
        1,
        "{p:?} {report}"
    );
    assert!(
        report
            .to_string()
            .contains("4 per-channel operations after Conv2D folded"),
        "{report}"
    );
    assert!(relative_error(&run(&folded, &x), &float) < 1e-5);
    let calibration = vec![Tensor::from_f32(values(32 * 50, 39), &[32, 2, 5, 5]).unwrap()];
    let options = Options {
        quantize: Some(Quantization::Int8),
        ..Options::default()
    };
    let (q, report) = convert(&bytes, &options, &calibration).expect("converts");
    let p = prims(&q);
    assert_eq!(
        p.iter().filter(|p| **p == Prim::QuantConv2D).count(),
        1,
        "{p:?} {report}"
    );
    assert!(
        !p.contains(&Prim::Add) && !p.contains(&Prim::Dequantize),
        "{p:?}"
    );
    assert!(relative_error(&run(&q, &x), &float) < 0.06);
}
