//! Fused kernels against the unfused evaluation, and the in-place (`_owned`) ops.

use super::*;
use crate::fused::{FusedKernel, FusedOp, ValueId};
use proptest::prelude::*;

/// Evaluates `ops` one by one with the tensor methods. `Err((k, e))`: op `k` failed with `e`;
/// `e` is `None` when op `k` is not something the tensor methods can express (a scalar where a
/// tensor is needed).
fn reference(
    inputs: &[Tensor],
    ops: &[FusedOp],
) -> std::result::Result<Tensor, (usize, Option<crate::TensorError>)> {
    #[derive(Clone)]
    enum V {
        T(Tensor),
        S(Scalar),
    }
    let mut vals: Vec<V> = inputs.iter().cloned().map(V::T).collect();
    for (k, op) in ops.iter().enumerate() {
        let t = |v: ValueId| match vals.get(v as usize) {
            Some(V::T(t)) => Ok(t.clone()),
            _ => Err((k, None)),
        };
        let r = match *op {
            FusedOp::Scalar(s) => {
                vals.push(V::S(s));
                continue;
            }
            FusedOp::Unary(u, a) => Tensor::unary(u, &t(a)?),
            FusedOp::Cast(d, a) => t(a)?.try_cast(d),
            FusedOp::Binary(b, x, y) => {
                match (vals.get(x as usize).cloned(), vals.get(y as usize).cloned()) {
                    (Some(V::T(x)), Some(V::T(y))) => Tensor::binary(b, &x, &y),
                    (Some(V::T(x)), Some(V::S(y))) => Tensor::binary_scalar(b, &x, y, false),
                    (Some(V::S(x)), Some(V::T(y))) => Tensor::binary_scalar(b, &y, x, true),
                    _ => return Err((k, None)),
                }
            }
            FusedOp::Where(c, x, y) => Tensor::where_(&t(c)?, &t(x)?, &t(y)?),
        };
        vals.push(V::T(r.map_err(|e| (k, Some(e)))?));
    }
    match vals.pop() {
        Some(V::T(t)) => Ok(t),
        _ => Err((ops.len().saturating_sub(1), None)),
    }
}

/// A deep copy (uniquely owned storage).
fn fresh(t: &Tensor) -> Tensor {
    let shape = t.shape();
    match t.dtype() {
        DType::Bool => Tensor::from_bool(t.as_bool_slice().unwrap().to_vec(), shape),
        DType::I32 => Tensor::from_i32(t.as_i32_slice().unwrap().to_vec(), shape),
        DType::I64 => Tensor::from_i64(t.as_i64_slice().unwrap().to_vec(), shape),
        DType::F32 => Tensor::from_f32(t.as_f32_slice().unwrap().to_vec(), shape),
        DType::F64 => Tensor::from_f64(t.as_f64_slice().unwrap().to_vec(), shape),
        DType::F16 | DType::BF16 => {
            Tensor::from_half_bits(t.as_half_bits().unwrap(), shape, t.dtype())
        }
        DType::I8 | DType::U8 => Tensor::from_le_bytes(t.dtype(), shape, &t.to_le_bytes()),
    }
    .unwrap()
}

/// Checks the fused kernel of `ops` against the reference, for `run`, `run_owned` (with
/// uniquely owned and shared inputs) and `run_unfused`.
fn check_program(inputs: &[Tensor], ops: &[FusedOp]) -> std::result::Result<(), TestCaseError> {
    let dtypes: Vec<DType> = inputs.iter().map(Tensor::dtype).collect();
    let expected = reference(inputs, ops);
    let kernel = match FusedKernel::new(&dtypes, ops.to_vec()) {
        Ok(k) => k,
        Err(e) => {
            // The first op whose prefix `new` refuses (a prefix ending on a scalar is refused for
            // its output alone).
            let k = (0..ops.len())
                .find(|&k| {
                    !matches!(ops[k], FusedOp::Scalar(_))
                        && FusedKernel::new(&dtypes, ops[..=k].to_vec()).is_err()
                })
                .unwrap_or(ops.len() - 1);
            let first = FusedKernel::new(&dtypes, ops[..=k].to_vec()).unwrap_err();
            prop_assert_eq!(&first, &e);
            match expected {
                Ok(_) => prop_assert!(false, "new failed with {e:?}, unfused succeeded"),
                Err((j, None)) => prop_assert_eq!(j, k),
                Err((j, Some(u))) if j == k => prop_assert_eq!(u, e),
                // An earlier op failed on these inputs only.
                Err((j, Some(u))) => {
                    prop_assert!(j < k, "unfused failed later ({j}) than new ({k})");
                    prop_assert!(
                        matches!(
                            u.kind,
                            ErrorKind::Value | ErrorKind::ZeroDivision | ErrorKind::Memory
                        ),
                        "{u:?}"
                    );
                }
            }
            return Ok(());
        }
    };
    let expected = expected.map_err(|(_, e)| e.expect("a valid program"));
    prop_assert_eq!(kernel.output_dtype(), {
        match &expected {
            Ok(t) => t.dtype(),
            Err(_) => kernel.output_dtype(),
        }
    });
    let refs: Vec<&Tensor> = inputs.iter().collect();
    let same = |got: crate::Result<Tensor>, what: &str| -> std::result::Result<(), TestCaseError> {
        match (&got, &expected) {
            (Ok(g), Ok(e)) => prop_assert!(
                g.same_as(e) && g.dtype() == e.dtype(),
                "{what}: got {g:?} {:?} {}, expected {e:?} {:?} {}",
                g.shape(),
                g.dtype(),
                e.shape(),
                e.dtype()
            ),
            (Err(g), Err(e)) => prop_assert_eq!(g, e, "{}", what),
            _ => prop_assert!(false, "{what}: got {got:?}, expected {expected:?}"),
        }
        Ok(())
    };
    same(kernel.run(&refs), "run")?;
    same(kernel.run_unfused(&refs), "run_unfused")?;
    same(kernel.run_owned(inputs.to_vec()), "run_owned (shared)")?;
    same(
        kernel.run_owned(inputs.iter().map(fresh).collect()),
        "run_owned (unique)",
    )?;
    Ok(())
}

// ----- random programs ---------------------------------------------------------------------------

const DTYPES: [DType; 5] = [DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64];

fn dtype() -> impl Strategy<Value = DType> {
    prop::sample::select(&DTYPES[..])
}

/// Input values of a dtype: specials, wrapping-prone and small integers (zero included).
fn tensor_of(dtype: DType, shape: Vec<usize>) -> BoxedStrategy<Tensor> {
    let n: usize = shape.iter().product();
    match dtype {
        DType::Bool => prop::collection::vec(any::<bool>(), n)
            .prop_map(move |v| Tensor::from_bool(v, &shape).unwrap())
            .boxed(),
        DType::I32 => prop::collection::vec(
            prop_oneof![4 => -4i32..5, 1 => Just(i32::MAX), 1 => Just(i32::MIN), 1 => any::<i32>()],
            n,
        )
        .prop_map(move |v| Tensor::from_i32(v, &shape).unwrap())
        .boxed(),
        DType::I64 => prop::collection::vec(
            prop_oneof![4 => -4i64..5, 1 => Just(i64::MAX), 1 => Just(i64::MIN), 1 => any::<i64>()],
            n,
        )
        .prop_map(move |v| Tensor::from_i64(v, &shape).unwrap())
        .boxed(),
        DType::F32 => prop::collection::vec(
            prop_oneof![
                6 => -5.0f32..5.0,
                1 => Just(f32::NAN),
                1 => Just(f32::INFINITY),
                1 => Just(f32::NEG_INFINITY),
                1 => Just(-0.0f32),
                1 => Just(0.0f32),
                1 => Just(3e38f32),
                1 => -100.0f32..100.0,
            ],
            n,
        )
        .prop_map(move |v| Tensor::from_f32(v, &shape).unwrap())
        .boxed(),
        DType::F64 => prop::collection::vec(
            prop_oneof![
                6 => -5.0f64..5.0,
                1 => Just(f64::NAN),
                1 => Just(f64::INFINITY),
                1 => Just(f64::NEG_INFINITY),
                1 => Just(-0.0f64),
                1 => Just(0.0f64),
                1 => Just(1e308f64),
                1 => -800.0f64..800.0,
            ],
            n,
        )
        .prop_map(move |v| Tensor::from_f64(v, &shape).unwrap())
        .boxed(),
        DType::F16 | DType::BF16 | DType::I8 | DType::U8 => {
            unreachable!("fused kernels take no storage-dtype inputs")
        }
    }
}

/// 1-3 inputs of random dtypes whose shapes broadcast together (non-trivially: dimensions of
/// 1, missing leading dimensions, 0-d and empty tensors), now and then one that does not.
fn inputs() -> impl Strategy<Value = Vec<Tensor>> {
    let out = prop_oneof![
        2 => prop::collection::vec(prop_oneof![1 => Just(0usize), 8 => 1usize..5], 0..4),
        7 => prop::collection::vec(prop_oneof![1 => Just(0usize), 12 => 2usize..6], 1..4),
        // Now and then several chunks' worth.
        1 => (1usize..4, 1000usize..5000).prop_map(|(a, b)| vec![a, b]),
    ];
    (out, 1usize..4).prop_flat_map(|(out, n)| {
        let nd = out.len();
        let shape = move |out: Vec<usize>| {
            (
                prop_oneof![2 => Just(0), 1 => 0..=nd],
                prop::collection::vec(prop::bool::weighted(0.3), nd),
                0u8..20,
            )
                .prop_map(move |(skip, ones, odd)| {
                    let mut s: Vec<usize> = out
                        .iter()
                        .zip(&ones)
                        .skip(skip)
                        .map(|(&d, &one)| if one { 1 } else { d })
                        .collect();
                    // Rarely, a shape that does not broadcast.
                    if odd == 0
                        && let Some(d) = s.last_mut()
                    {
                        *d += 5;
                    }
                    s
                })
        };
        prop::collection::vec((dtype(), shape(out.clone())), n).prop_flat_map(|specs| {
            specs
                .into_iter()
                .map(|(d, s)| tensor_of(d, s))
                .collect::<Vec<_>>()
        })
    })
}

fn scalar() -> impl Strategy<Value = Scalar> {
    prop_oneof![
        any::<bool>().prop_map(Scalar::Bool),
        (-3i64..4).prop_map(Scalar::Int),
        Just(Scalar::Int(3_000_000_000)),
        Just(Scalar::Int(-1)),
        prop_oneof![
            Just(0.5),
            Just(-1.5),
            Just(0.0),
            Just(-0.0),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(1e10),
            Just(0.1),
        ]
        .prop_map(Scalar::Float),
    ]
}

const UNARY: [UnaryOp; 13] = [
    UnaryOp::Neg,
    UnaryOp::Pos,
    UnaryOp::Abs,
    UnaryOp::Invert,
    UnaryOp::LogicalNot,
    UnaryOp::Exp,
    UnaryOp::Log,
    UnaryOp::Sqrt,
    UnaryOp::Tanh,
    UnaryOp::Sin,
    UnaryOp::Cos,
    UnaryOp::Sigmoid,
    UnaryOp::Relu,
];

const BINARY: [BinaryOp; 20] = [
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::Div,
    BinaryOp::FloorDiv,
    BinaryOp::Mod,
    BinaryOp::Pow,
    BinaryOp::Maximum,
    BinaryOp::Minimum,
    BinaryOp::BitAnd,
    BinaryOp::BitOr,
    BinaryOp::BitXor,
    BinaryOp::LShift,
    BinaryOp::RShift,
    BinaryOp::Eq,
    BinaryOp::Ne,
    BinaryOp::Lt,
    BinaryOp::Le,
    BinaryOp::Gt,
    BinaryOp::Ge,
];

/// An op template: value operands are fractions in [0, 1) of the values defined before it, so
/// that any template is valid at any position.
#[derive(Clone, Debug)]
enum Tpl {
    Scalar(Scalar),
    Unary(UnaryOp, f64),
    Binary(BinaryOp, f64, f64),
    Cast(DType, f64),
    Where(f64, f64, f64),
}

fn tpl() -> impl Strategy<Value = Tpl> {
    let f = || 0.0f64..1.0;
    prop_oneof![
        2 => scalar().prop_map(Tpl::Scalar),
        3 => (prop::sample::select(&UNARY[..]), f()).prop_map(|(u, a)| Tpl::Unary(u, a)),
        6 => (prop::sample::select(&BINARY[..]), f(), f()).prop_map(|(b, x, y)| Tpl::Binary(b, x, y)),
        1 => (dtype(), f()).prop_map(|(d, a)| Tpl::Cast(d, a)),
        1 => (f(), f(), f()).prop_map(|(c, x, y)| Tpl::Where(c, x, y)),
    ]
}

/// Lowers templates to ops, preferring tensor operands (recent ones more often) so that most
/// programs are valid.
fn program(n_inputs: usize, tpls: &[Tpl]) -> Vec<FusedOp> {
    let mut ops = Vec::new();
    let mut is_scalar: Vec<bool> = vec![false; n_inputs];
    for t in tpls {
        let id = is_scalar.len();
        let pick = |f: f64| -> ValueId {
            // Skew towards recent values, then move off scalars when possible.
            let k = ((f * f) * id as f64) as usize;
            let mut v = id - 1 - k.min(id - 1);
            if is_scalar[v]
                && let Some(w) = (0..id).rev().find(|&w| !is_scalar[w])
            {
                v = if f < 0.05 { v } else { w };
            }
            v as ValueId
        };
        let op = match *t {
            Tpl::Scalar(s) => FusedOp::Scalar(s),
            Tpl::Unary(u, a) => FusedOp::Unary(u, pick(a)),
            Tpl::Binary(b, x, y) => {
                // A scalar operand is used when the previous value is one.
                let last = (id - 1) as ValueId;
                let x = if is_scalar[id - 1] && x < 0.5 {
                    last
                } else {
                    pick(x)
                };
                FusedOp::Binary(b, x, pick(y))
            }
            Tpl::Cast(d, a) => FusedOp::Cast(d, pick(a)),
            Tpl::Where(c, x, y) => FusedOp::Where(pick(c), pick(x), pick(y)),
        };
        is_scalar.push(matches!(op, FusedOp::Scalar(_)));
        ops.push(op);
    }
    // End on a tensor value.
    if is_scalar.last() == Some(&true) {
        let s = (is_scalar.len() - 1) as ValueId;
        ops.push(FusedOp::Binary(BinaryOp::Add, 0, s));
    }
    ops
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    #[test]
    fn fused_matches_unfused(inputs in inputs(), tpls in prop::collection::vec(tpl(), 1..9)) {
        let ops = program(inputs.len(), &tpls);
        check_program(&inputs, &ops)?;
    }
}

// ----- fixed programs ----------------------------------------------------------------------------

/// W5: tanh(x * 1.5 + 0.3) * sigmoid(x) - x / 3.
fn w5_ops() -> Vec<FusedOp> {
    vec![
        FusedOp::Scalar(Scalar::Float(1.5)),
        FusedOp::Binary(BinaryOp::Mul, 0, 1),
        FusedOp::Scalar(Scalar::Float(0.3)),
        FusedOp::Binary(BinaryOp::Add, 2, 3),
        FusedOp::Unary(UnaryOp::Tanh, 4),
        FusedOp::Unary(UnaryOp::Sigmoid, 0),
        FusedOp::Binary(BinaryOp::Mul, 5, 6),
        FusedOp::Scalar(Scalar::Int(3)),
        FusedOp::Binary(BinaryOp::Div, 0, 8),
        FusedOp::Binary(BinaryOp::Sub, 7, 9),
    ]
}

fn ramp32(n: usize) -> Tensor {
    let v: Vec<f32> = (0..n)
        .map(|i| ((i as f32 * 0.618_034).fract() - 0.5) * 6.0)
        .collect();
    Tensor::from_f32(v, &[n]).unwrap()
}

fn check(inputs: &[Tensor], ops: Vec<FusedOp>) {
    check_program(inputs, &ops).unwrap();
}

#[test]
fn w5_matches_unfused_at_every_size() {
    // Sizes around the chunk length and the parallel threshold.
    for n in [0, 1, 7, 2047, 2048, 2049, 5000, 40_000, 100_003] {
        check(&[ramp32(n)], w5_ops());
    }
    let y = FusedKernel::new(&[DType::F32], w5_ops())
        .unwrap()
        .run(&[&f32s(&[0.0, 1.0, -1.0], &[3])])
        .unwrap();
    // numpy: np.tanh(x*1.5+0.3)*(1/(1+np.exp(-x))) - x/3 on float32.
    let want = [0.145_656_32f32, 0.358_837_34, 0.109_129_1];
    for (g, w) in y.as_f32_slice().unwrap().iter().zip(want) {
        assert!((g - w).abs() < 1e-6, "{g} vs {w}");
    }
}

#[test]
fn broadcasting_programs() {
    let a = ramp32(12).reshape(&[3, 1, 4]).unwrap();
    let b = Tensor::arange(
        Scalar::Int(0),
        Scalar::Int(10),
        Scalar::Int(1),
        Some(DType::I64),
    )
    .unwrap()
    .reshape(&[5, 2, 1])
    .unwrap();
    let c = f64s(&[0.5], &[]);
    let ops = vec![
        FusedOp::Binary(BinaryOp::Mul, 0, 1),
        FusedOp::Unary(UnaryOp::Exp, 3),
        FusedOp::Binary(BinaryOp::Gt, 4, 2),
        FusedOp::Where(5, 0, 1),
        FusedOp::Binary(BinaryOp::Sub, 6, 2),
    ];
    check(&[a.clone(), b.clone(), c.clone()], ops.clone());
    // Large enough for threads and gathers of several chunks.
    let a = ramp32(3 * 50 * 400).reshape(&[3, 50, 400]).unwrap();
    let b = Tensor::arange(
        Scalar::Int(0),
        Scalar::Int(400),
        Scalar::Int(1),
        Some(DType::I64),
    )
    .unwrap();
    let b2 = ramp32(50).reshape(&[50, 1]).unwrap();
    check(&[a.clone(), b, c.clone()], ops);
    check(
        &[a, b2],
        vec![
            FusedOp::Binary(BinaryOp::Add, 0, 1),
            FusedOp::Unary(UnaryOp::Sigmoid, 2),
        ],
    );
}

#[test]
fn errors_are_the_unfused_ones() {
    // new: dtype errors, as the unfused op gives them.
    assert_err(
        FusedKernel::new(&[DType::F32], vec![FusedOp::Binary(BinaryOp::BitAnd, 0, 0)]),
        ErrorKind::Type,
        "ufunc 'bitwise_and' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''",
    );
    assert_err(
        FusedKernel::new(
            &[DType::I32],
            vec![
                FusedOp::Scalar(Scalar::Int(3_000_000_000)),
                FusedOp::Binary(BinaryOp::Add, 0, 1),
            ],
        ),
        ErrorKind::Overflow,
        "Python integer 3000000000 out of bounds for int32",
    );
    assert_err(
        FusedKernel::new(&[DType::Bool], vec![FusedOp::Unary(UnaryOp::Neg, 0)]),
        ErrorKind::Type,
        "The numpy boolean negative, the `-` operator, is not supported, use the `~` operator or the logical_not function instead.",
    );
    assert!(FusedKernel::new(&[DType::F32], vec![]).is_err());
    assert!(FusedKernel::new(&[DType::F32], vec![FusedOp::Unary(UnaryOp::Exp, 1)]).is_err());
    assert!(FusedKernel::new(&[DType::F32], vec![FusedOp::Scalar(Scalar::Int(1))]).is_err());
    assert!(
        FusedKernel::new(
            &[DType::F32],
            vec![
                FusedOp::Scalar(Scalar::Int(1)),
                FusedOp::Unary(UnaryOp::Exp, 1)
            ]
        )
        .is_err()
    );
    // run: broadcasting, zero division (also in a value the output does not use), wrong inputs.
    let k = FusedKernel::new(
        &[DType::F32, DType::F32],
        vec![FusedOp::Binary(BinaryOp::Add, 0, 1)],
    )
    .unwrap();
    assert_err(
        k.run(&[&ramp32(3), &ramp32(4)]),
        ErrorKind::Value,
        "operands could not be broadcast together with shapes (3,) (4,) ",
    );
    assert_err(
        k.run(&[&ramp32(3)]),
        ErrorKind::Value,
        "the fused kernel takes 2 inputs, got 1",
    );
    let ints = i64s(&[5, 0, -3], &[3]);
    let k = FusedKernel::new(
        &[DType::I64, DType::F32],
        vec![
            FusedOp::Scalar(Scalar::Int(7)),
            FusedOp::Binary(BinaryOp::FloorDiv, 2, 0),
            FusedOp::Unary(UnaryOp::Exp, 1),
        ],
    )
    .unwrap();
    assert_err(
        k.run(&[&ints, &ramp32(3)]),
        ErrorKind::ZeroDivision,
        "integer division or modulo by zero",
    );
    // ... but not when the output is empty (the unfused op skips the check then)...
    check(&[i64s(&[0], &[1]), ramp32(0)], k.ops().to_vec());
    // ... and it is the first failing op's error.
    check(
        &[ints.clone(), ramp32(4)],
        vec![
            FusedOp::Binary(BinaryOp::FloorDiv, 0, 0),
            FusedOp::Binary(BinaryOp::Add, 2, 1),
        ],
    );
    check(
        &[ints, i64s(&[-1], &[])],
        vec![
            FusedOp::Binary(BinaryOp::Pow, 0, 1),
            FusedOp::Unary(UnaryOp::Neg, 2),
        ],
    );
}

#[test]
fn zero_d_and_empty() {
    let ops = vec![
        FusedOp::Unary(UnaryOp::Sqrt, 0),
        FusedOp::Scalar(Scalar::Float(2.0)),
        FusedOp::Binary(BinaryOp::Pow, 1, 2),
        FusedOp::Binary(BinaryOp::Lt, 3, 0),
    ];
    check(&[f64s(&[2.0], &[])], ops.clone());
    check(&[f64s(&[], &[0, 3])], ops.clone());
    check(&[f64s(&[], &[2, 0])], ops);
    // The output is an input.
    check(
        &[i32s(&[1, 2], &[2])],
        vec![FusedOp::Unary(UnaryOp::Pos, 0)],
    );
    check(
        &[i32s(&[1, 2], &[2]), bools(&[true], &[])],
        vec![FusedOp::Cast(DType::I32, 0)],
    );
}

// ----- run_owned and the in-place ops ------------------------------------------------------------

#[test]
fn run_owned_reuses_a_unique_input() {
    let k = FusedKernel::new(&[DType::F32], w5_ops()).unwrap();
    let x = ramp32(10_000);
    let expected = k.run(&[&x]).unwrap();
    let unique = fresh(&x);
    let addr = unique.as_ptr_addr();
    assert!(unique.is_unique());
    let y = k.run_owned(vec![unique]).unwrap();
    assert_eq!(y.as_ptr_addr(), addr);
    assert_tensor(&y, &expected);
    // Shared: no reuse, and the input is untouched.
    let shared = fresh(&x);
    let keep = shared.clone();
    assert!(!shared.is_unique());
    let y = k.run_owned(vec![shared]).unwrap();
    assert_ne!(y.as_ptr_addr(), keep.as_ptr_addr());
    assert_tensor(&y, &expected);
    assert_tensor(&keep, &x);
    // Another dtype or shape: no reuse.
    let k = FusedKernel::new(&[DType::F32], vec![FusedOp::Cast(DType::F64, 0)]).unwrap();
    let unique = fresh(&x);
    let addr = unique.as_ptr_addr();
    assert_ne!(k.run_owned(vec![unique]).unwrap().as_ptr_addr(), addr);
    let k = FusedKernel::new(
        &[DType::F32, DType::F32],
        vec![FusedOp::Binary(BinaryOp::Add, 0, 1)],
    )
    .unwrap();
    let (a, b) = (fresh(&ramp32(4)), ramp32(12).reshape(&[3, 4]).unwrap());
    let addr = a.as_ptr_addr();
    let y = k.run_owned(vec![a, fresh(&b)]).unwrap();
    assert_ne!(y.as_ptr_addr(), addr);
}

#[test]
fn binary_owned_reuses_or_falls_back() {
    let a = ramp32(100_000);
    let b = ramp32(100_000);
    let expected = Tensor::binary(BinaryOp::Mul, &a, &b).unwrap();
    let owned = fresh(&a);
    let addr = owned.as_ptr_addr();
    let y = Tensor::binary_owned(BinaryOp::Mul, owned, &b).unwrap();
    assert_eq!(y.as_ptr_addr(), addr);
    assert_tensor(&y, &expected);
    // Broadcast right operand, reused.
    let m = ramp32(12).reshape(&[3, 4]).unwrap();
    let row = f32s(&[1.0, -2.0, 0.5, f32::NAN], &[4]);
    let owned = fresh(&m);
    let addr = owned.as_ptr_addr();
    let y = Tensor::binary_owned(BinaryOp::Sub, owned, &row).unwrap();
    assert_eq!(y.as_ptr_addr(), addr);
    assert_tensor(&y, &Tensor::binary(BinaryOp::Sub, &m, &row).unwrap());
    // Shared: falls back, input untouched.
    let y = Tensor::binary_owned(BinaryOp::Sub, m.clone(), &row).unwrap();
    assert_ne!(y.as_ptr_addr(), m.as_ptr_addr());
    assert_tensor(&y, &Tensor::binary(BinaryOp::Sub, &m, &row).unwrap());
    // Result of another shape or dtype: falls back.
    let y = Tensor::binary_owned(BinaryOp::Sub, fresh(&row), &m).unwrap();
    assert_tensor(&y, &Tensor::binary(BinaryOp::Sub, &row, &m).unwrap());
    let i = i32s(&[1, 2, 3], &[3]);
    let y = Tensor::binary_owned(BinaryOp::Div, fresh(&i), &i).unwrap();
    assert_tensor(&y, &Tensor::binary(BinaryOp::Div, &i, &i).unwrap());
    // Errors as binary's, and comparisons of bools in place.
    assert_err(
        Tensor::binary_owned(BinaryOp::FloorDiv, fresh(&i), &i32s(&[1, 0, 1], &[3])),
        ErrorKind::ZeroDivision,
        "integer division or modulo by zero",
    );
    assert_err(
        Tensor::binary_owned(BinaryOp::Add, fresh(&i), &i32s(&[1, 0], &[2])),
        ErrorKind::Value,
        "operands could not be broadcast together with shapes (3,) (2,) ",
    );
    let p = bools(&[true, false, true], &[3]);
    let q = bools(&[true, true, false], &[3]);
    let owned = fresh(&p);
    let addr = owned.as_ptr_addr();
    let y = Tensor::binary_owned(BinaryOp::Eq, owned, &q).unwrap();
    assert_eq!(y.as_ptr_addr(), addr);
    assert_tensor(&y, &bools(&[true, false, false], &[3]));
}

#[test]
fn binary_scalar_owned_reuses_or_falls_back() {
    let x = ramp32(5000);
    for (op, s, first) in [
        (BinaryOp::Sub, Scalar::Float(1.5), true),
        (BinaryOp::Div, Scalar::Int(3), false),
        (BinaryOp::Pow, Scalar::Float(2.0), false),
        (BinaryOp::Maximum, Scalar::Float(f64::NAN), true),
    ] {
        let expected = Tensor::binary_scalar(op, &x, s, first).unwrap();
        let owned = fresh(&x);
        let addr = owned.as_ptr_addr();
        let y = Tensor::binary_scalar_owned(op, owned, s, first).unwrap();
        assert_eq!(y.as_ptr_addr(), addr);
        assert_tensor(&y, &expected);
    }
    let i = i64s(&[7, -7, 0], &[3]);
    // 7 // i raises, i // 7 works in place.
    assert_err(
        Tensor::binary_scalar_owned(BinaryOp::FloorDiv, fresh(&i), Scalar::Int(7), true),
        ErrorKind::ZeroDivision,
        "integer division or modulo by zero",
    );
    let y =
        Tensor::binary_scalar_owned(BinaryOp::FloorDiv, fresh(&i), Scalar::Int(7), false).unwrap();
    assert_tensor(&y, &i64s(&[1, -1, 0], &[3]));
    // A float scalar makes an int tensor float64: falls back.
    let y =
        Tensor::binary_scalar_owned(BinaryOp::Mul, fresh(&i), Scalar::Float(0.5), false).unwrap();
    assert_tensor(&y, &f64s(&[3.5, -3.5, 0.0], &[3]));
    assert_err(
        Tensor::binary_scalar_owned(
            BinaryOp::Add,
            i32s(&[1], &[1]),
            Scalar::Int(3_000_000_000),
            false,
        ),
        ErrorKind::Overflow,
        "Python integer 3000000000 out of bounds for int32",
    );
}

#[test]
fn unary_owned_reuses_or_falls_back() {
    let x = ramp32(70_000);
    for op in [
        UnaryOp::Exp,
        UnaryOp::Tanh,
        UnaryOp::Neg,
        UnaryOp::Relu,
        UnaryOp::Sin,
        UnaryOp::Sigmoid,
    ] {
        let expected = Tensor::unary(op, &x).unwrap();
        let owned = fresh(&x);
        let addr = owned.as_ptr_addr();
        let y = Tensor::unary_owned(op, owned).unwrap();
        assert_eq!(y.as_ptr_addr(), addr, "{op:?}");
        assert_tensor(&y, &expected);
    }
    let i = i32s(&[1, 0, -2], &[3]);
    // Integer functions of one element run in place too (no copy of the operand first).
    for (op, want) in [
        (UnaryOp::Neg, [-1, 0, 2]),
        (UnaryOp::Abs, [1, 0, 2]),
        (UnaryOp::Sign, [1, 0, -1]),
        (UnaryOp::Invert, [-2, -1, 1]),
    ] {
        let owned = fresh(&i);
        let addr = owned.as_ptr_addr();
        let y = Tensor::unary_owned(op, owned).unwrap();
        assert_eq!(y.as_ptr_addr(), addr, "{op:?}");
        assert_tensor(&y, &i32s(&want, &[3]));
    }
    let y = Tensor::unary_owned(UnaryOp::Exp, fresh(&i)).unwrap();
    assert_tensor(&y, &Tensor::unary(UnaryOp::Exp, &i).unwrap());
    let y = Tensor::unary_owned(UnaryOp::LogicalNot, fresh(&i)).unwrap();
    assert_tensor(&y, &bools(&[false, true, false], &[3]));
    let b = bools(&[true, false], &[2]);
    let owned = fresh(&b);
    let addr = owned.as_ptr_addr();
    let y = Tensor::unary_owned(UnaryOp::LogicalNot, owned).unwrap();
    assert_eq!(y.as_ptr_addr(), addr);
    assert_tensor(&y, &bools(&[false, true], &[2]));
    assert_err(
        Tensor::unary_owned(UnaryOp::Neg, b),
        ErrorKind::Type,
        "The numpy boolean negative, the `-` operator, is not supported, use the `~` operator or the logical_not function instead.",
    );
    // Shared: the input is untouched.
    let keep = x.clone();
    let y = Tensor::unary_owned(UnaryOp::Exp, x.clone()).unwrap();
    assert_ne!(y.as_ptr_addr(), keep.as_ptr_addr());
    assert_tensor(&keep, &ramp32(70_000));
}

// ----- generated code ----------------------------------------------------------------------------

/// Values reaching every branch of the expanded functions, NaN payloads and signed zeros
/// included, repeated to `n` elements.
fn specials32(n: usize) -> Tensor {
    let base = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        0.55,
        -0.549_999_95,
        3.0,
        -17.5,
        88.9,
        -103.9,
        -120.0,
        1e-40,
        -1e-40,
        f32::MAX,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::from_bits(0xffc0_0123),
    ];
    let v: Vec<f32> = (0..n)
        .map(|i| {
            if i % 3 == 0 {
                base[(i / 3) % base.len()]
            } else {
                ((i as f32 * 0.618_034).fract() - 0.5) * 40.0
            }
        })
        .collect();
    Tensor::from_f32(v, &[n]).unwrap()
}

/// `run` and `run_owned` against `run_unfused`, bit for bit (NaN payloads included), with
/// `generated` saying whether the generated code must be what runs.
fn check_bits(inputs: &[Tensor], ops: Vec<FusedOp>, generated: bool) {
    let dtypes: Vec<DType> = inputs.iter().map(Tensor::dtype).collect();
    let k = FusedKernel::new(&dtypes, ops).unwrap();
    let refs: Vec<&Tensor> = inputs.iter().collect();
    assert_eq!(
        k.uses_generated_code(&refs),
        generated && crate::codegen::enabled(),
        "which path runs"
    );
    let want = k.run_unfused(&refs).unwrap();
    let bits = |t: &Tensor| -> Vec<u32> {
        t.as_f32_slice()
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect()
    };
    let got = k.run(&refs).unwrap();
    assert_eq!(got.shape(), want.shape());
    assert!(bits(&got) == bits(&want), "run differs");
    let owned = k.run_owned(inputs.iter().map(fresh).collect()).unwrap();
    assert!(bits(&owned) == bits(&want), "run_owned differs");
}

#[test]
fn generated_code_is_bitwise_the_unfused_evaluation() {
    use BinaryOp as B;
    use FusedOp::{Binary, Scalar as S, Unary};
    use UnaryOp as U;
    // Every op the generator expands, on two inputs read in place and weak scalars on both
    // sides, at sizes with tails, around the chunk, and split over threads.
    let ops = vec![
        Unary(U::Tanh, 0),         // 2
        Unary(U::Sigmoid, 1),      // 3
        Binary(B::Mul, 2, 3),      // 4
        Unary(U::Exp, 0),          // 5
        Unary(U::Silu, 1),         // 6
        Binary(B::Maximum, 5, 6),  // 7
        Unary(U::Abs, 1),          // 8
        Unary(U::Sqrt, 8),         // 9
        Unary(U::Rsqrt, 0),        // 10
        Binary(B::Minimum, 9, 10), // 11
        Unary(U::Neg, 11),         // 12
        Unary(U::Relu, 12),        // 13
        Binary(B::Sub, 4, 7),      // 14
        S(Scalar::Float(2.5)),     // 15
        Binary(B::Div, 15, 14),    // 16: 2.5 / v
        S(Scalar::Int(-3)),        // 17
        Binary(B::Add, 16, 17),    // 18
        Binary(B::Sub, 17, 13),    // 19: -3 - v
        Binary(B::Mul, 18, 19),    // 20
        Binary(B::Maximum, 20, 0), // 21
    ];
    for n in [1, 15, 16, 17, 33, 2049, 40_000, 100_003] {
        let x = specials32(n);
        let y = Tensor::unary(UnaryOp::Neg, &ramp32(n)).unwrap();
        check_bits(&[x, y], ops.clone(), true);
    }
    // W5, and one-element inputs (constants of each call: two calls, two values).
    check_bits(&[specials32(5000)], w5_ops(), true);
    let splat_ops = vec![
        Binary(B::Mul, 0, 1),
        Unary(U::Tanh, 2),
        Binary(B::Sub, 1, 3),
    ];
    for s in [0.5f32, -2.0] {
        let x = specials32(777);
        check_bits(&[x, f32s(&[s], &[1])], splat_ops.clone(), true);
    }
}

#[test]
fn generated_code_carries_booleans_between_float_ops() {
    use BinaryOp as B;
    use FusedOp::{Binary, Cast, Scalar as S, Where};
    // ReLU's gradient as the autodiff rule writes it: d * (x > 0), the bool promoted.
    let relu_grad = vec![S(Scalar::Int(0)), Binary(B::Gt, 0, 2), Binary(B::Mul, 1, 3)];
    // Each comparison alone (NaN on either side), casts through bool, `where`, and a mix.
    let mut programs: Vec<Vec<FusedOp>> = [B::Lt, B::Le, B::Eq, B::Ne, B::Gt, B::Ge]
        .into_iter()
        .map(|c| vec![Binary(c, 0, 1), Cast(DType::F32, 2)])
        .collect();
    programs.push(vec![Cast(DType::Bool, 0), Cast(DType::F32, 2)]);
    programs.push(vec![Binary(B::Lt, 0, 1), Where(2, 0, 1)]);
    programs.push(vec![
        Binary(B::Ne, 0, 1),   // 2
        Binary(B::Le, 0, 1),   // 3
        Where(2, 0, 1),        // 4
        Binary(B::Add, 4, 3),  // 5: float + bool
        S(Scalar::Bool(true)), // 6
        Binary(B::Mul, 5, 6),  // 7: a weak bool scalar
    ]);
    for n in [1, 17, 40_000] {
        let x = specials32(n);
        // Equal to x in a third of the places, so that ==, <= and >= hold somewhere.
        let y: Vec<f32> = x
            .as_f32_slice()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, &v)| match i % 3 {
                1 => v,
                2 => f32::NAN,
                _ => -v * 0.5 + 1.0,
            })
            .collect();
        let y = Tensor::from_f32(y, &[n]).unwrap();
        check_bits(&[x.clone(), y.clone()], relu_grad.clone(), true);
        for ops in &programs {
            check_bits(&[x.clone(), y.clone()], ops.clone(), true);
            // NaN in y where x is a number.
            check_bits(&[y.clone(), x.clone()], ops.clone(), true);
        }
    }
}

#[test]
fn generated_code_leaves_other_programs_to_the_chunks() {
    use FusedOp::{Binary, Unary};
    // float64, a broadcast input that is gathered, and an op the generator does not expand.
    let x64 = Tensor::from_f64((0..100).map(|i| i as f64 / 7.0).collect(), &[100]).unwrap();
    let k = FusedKernel::new(&[DType::F64], w5_ops()).unwrap();
    assert!(!k.uses_generated_code(&[&x64]));
    let m = ramp32(12).reshape(&[3, 4]).unwrap();
    let row = ramp32(4);
    check_bits(
        &[m, row],
        vec![Binary(BinaryOp::Mul, 0, 1), Unary(UnaryOp::Tanh, 2)],
        false,
    );
    check_bits(&[specials32(100)], vec![Unary(UnaryOp::Log, 0)], false);
}
