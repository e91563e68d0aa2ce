//! matmul.

use super::*;

#[test]
fn shapes_dtypes_and_values() {
    assert_tensor(
        &Tensor::matmul(
            &f64s(&[-3.0, -3.0, 3.0], &[3]),
            &f64s(&[0.0, 1.0, 1.0], &[3]),
        )
        .unwrap(),
        &f64s(&[0.0], &[]),
    );
    assert_tensor(
        &Tensor::matmul(
            &f32s(&[2.0, -4.0, 0.0, -3.0, -1.0, 4.0], &[2, 3]),
            &f32s(&[0.0, -4.0, 0.0], &[3]),
        )
        .unwrap(),
        &f32s(&[16.0, 4.0], &[2]),
    );
    assert_tensor(
        &Tensor::matmul(
            &f64s(&[-3.0, 2.0, 4.0], &[3]),
            &f64s(&[4.0, 1.0, 3.0, -1.0, -3.0, 0.0], &[3, 2]),
        )
        .unwrap(),
        &f64s(&[-18.0, -5.0], &[2]),
    );
    assert_tensor(
        &Tensor::matmul(
            &f32s(&[-1.0, 1.0, 4.0, -2.0, 3.0, -3.0], &[2, 3]),
            &f32s(
                &[-1.0, 3.0, -2.0, 2.0, 0.0, 0.0, 4.0, 3.0, 3.0, 0.0, 4.0, 4.0],
                &[3, 4],
            ),
        )
        .unwrap(),
        &f32s(&[13.0, -3.0, 22.0, 17.0, -7.0, -6.0, 4.0, -7.0], &[2, 4]),
    );
    assert_tensor(
        &Tensor::matmul(
            &f64s(
                &[
                    -3.0, -3.0, -2.0, 0.0, 3.0, 0.0, 4.0, -1.0, 4.0, 1.0, 2.0, -2.0,
                ],
                &[2, 2, 3],
            ),
            &f64s(&[1.0, 3.0, 3.0, 3.0, 4.0, -3.0], &[3, 2]),
        )
        .unwrap(),
        &f64s(
            &[-20.0, -12.0, 9.0, 9.0, 17.0, -3.0, -1.0, 15.0],
            &[2, 2, 2],
        ),
    );
    assert_tensor(
        &Tensor::matmul(
            &f32s(
                &[
                    3.0, 0.0, 2.0, -2.0, -4.0, -4.0, 4.0, 4.0, -2.0, -1.0, -2.0, -3.0,
                ],
                &[2, 1, 2, 3],
            ),
            &f32s(
                &[
                    3.0, 2.0, -4.0, -3.0, 1.0, 4.0, 4.0, -3.0, 1.0, -4.0, -3.0, -3.0, -1.0, -1.0,
                    2.0, 0.0, -1.0, 4.0,
                ],
                &[3, 3, 2],
            ),
        )
        .unwrap(),
        &f32s(
            &[
                11.0, 14.0, 6.0, -8.0, 6.0, -15.0, 0.0, 34.0, -5.0, 5.0, -2.0, -14.0, -6.0, -12.0,
                2.0, -8.0, 26.0, -22.0, 3.0, 20.0, 6.0, -12.0, 0.0, -11.0,
            ],
            &[2, 3, 2, 2],
        ),
    );
    assert_tensor(
        &Tensor::matmul(
            &f64s(&[1.0, 2.0, 2.0, -1.0, 4.0, -4.0], &[1, 2, 3]),
            &f64s(
                &[
                    -2.0, -3.0, -4.0, 4.0, -4.0, 0.0, 3.0, 2.0, 3.0, -4.0, 0.0, -4.0,
                ],
                &[4, 3, 1],
            ),
        )
        .unwrap(),
        &f64s(
            &[-16.0, 6.0, -4.0, -20.0, 13.0, -7.0, -12.0, 20.0],
            &[4, 2, 1],
        ),
    );
    assert_tensor(
        &Tensor::matmul(
            &i32s(&[-3, 3, -4, 1, -4, -2], &[2, 3]),
            &i32s(&[4, -2, -2, -4, 2, -3], &[3, 2]),
        )
        .unwrap(),
        &i32s(&[-26, 6, 8, 20], &[2, 2]),
    );
    assert_tensor(
        &Tensor::matmul(
            &i64s(&[0, -4, -4, 3, -4, 0], &[2, 3]),
            &i64s(&[-1, -3, 1, 2, 4, -3], &[3, 2]),
        )
        .unwrap(),
        &i64s(&[-20, 4, -7, -17], &[2, 2]),
    );
    assert_tensor(
        &Tensor::matmul(
            &i32s(&[4, -4, -3, 1, 3, 4], &[2, 3]),
            &f32s(&[2.0, -4.0, -1.0], &[3]),
        )
        .unwrap(),
        &f64s(&[27.0, -14.0], &[2]),
    );
    assert_tensor(
        &Tensor::matmul(&i32s(&[3, 0, -3], &[3]), &i32s(&[2, -4, 2], &[3])).unwrap(),
        &i32s(&[0], &[]),
    );
    assert_tensor(
        &Tensor::matmul(
            &bools(&[true, true, true, true], &[2, 2]),
            &bools(&[true, true, false, true], &[2, 2]),
        )
        .unwrap(),
        &bools(&[true, true, true, true], &[2, 2]),
    );
    assert_tensor(
        &Tensor::matmul(
            &bools(&[true, true, true], &[3]),
            &bools(&[true, true, false], &[3]),
        )
        .unwrap(),
        &bools(&[true], &[]),
    );
    assert_tensor(
        &Tensor::matmul(
            &bools(&[true, true, true, true], &[2, 2]),
            &i32s(&[4, 0, -1, 4], &[2, 2]),
        )
        .unwrap(),
        &i32s(&[3, 4, 3, 4], &[2, 2]),
    );
    assert_tensor(
        &Tensor::matmul(&f64s(&[], &[2, 0]), &f64s(&[], &[0, 3])).unwrap(),
        &f64s(&[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], &[2, 3]),
    );
    assert_tensor(
        &Tensor::matmul(
            &f32s(&[], &[0, 3]),
            &f32s(&[-1.0, 2.0, -2.0, 4.0, 2.0, 3.0], &[3, 2]),
        )
        .unwrap(),
        &f32s(&[], &[0, 2]),
    );
    assert_tensor(
        &Tensor::matmul(&i64s(&[], &[3, 0]), &i64s(&[], &[0])).unwrap(),
        &i64s(&[0, 0, 0], &[3]),
    );
    assert_tensor(
        &Tensor::matmul(&f64s(&[], &[0, 2, 3]), &f64s(&[-4.0, -4.0, -4.0], &[3, 1])).unwrap(),
        &f64s(&[], &[0, 2, 1]),
    );
    assert_tensor(
        &Tensor::matmul(
            &f32s(&[0.0, -1.0], &[2]),
            &f32s(&[4.0, -2.0, -3.0, 3.0, -2.0, 2.0], &[1, 2, 3]),
        )
        .unwrap(),
        &f32s(&[-3.0, 2.0, -2.0], &[1, 3]),
    );
    // int32 products wrap.
    assert_tensor(
        &Tensor::matmul(&i32s(&[2147483647, 2], &[1, 2]), &i32s(&[2, 1], &[2, 1])).unwrap(),
        &i32s(&[0], &[1, 1]),
    );
    // Sums start from +0.0.
    assert_tensor(
        &Tensor::matmul(&f64s(&[0.0], &[1]), &f64s(&[-4.0, 0.0], &[1, 2])).unwrap(),
        &f64s(&[0.0, 0.0], &[2]),
    );
}

#[test]
fn errors() {
    assert_err(
        Tensor::matmul(
            &Tensor::zeros(&[2, 4], DType::F64).unwrap(),
            &Tensor::zeros(&[5, 3], DType::F64).unwrap(),
        ),
        ErrorKind::Value,
        "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size 5 is different from 4)",
    );
    assert_err(
        Tensor::matmul(
            &Tensor::zeros(&[4], DType::F64).unwrap(),
            &Tensor::zeros(&[5], DType::F64).unwrap(),
        ),
        ErrorKind::Value,
        "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size 5 is different from 4)",
    );
    assert_err(
        Tensor::matmul(
            &Tensor::zeros(&[3, 4], DType::F64).unwrap(),
            &Tensor::zeros(&[5], DType::F64).unwrap(),
        ),
        ErrorKind::Value,
        "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size 5 is different from 4)",
    );
    assert_err(
        Tensor::matmul(
            &Tensor::zeros(&[3], DType::F64).unwrap(),
            &Tensor::zeros(&[4, 5], DType::F64).unwrap(),
        ),
        ErrorKind::Value,
        "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size 4 is different from 3)",
    );
    assert_err(
        Tensor::matmul(
            &Tensor::zeros(&[], DType::F64).unwrap(),
            &Tensor::zeros(&[3], DType::F64).unwrap(),
        ),
        ErrorKind::Value,
        "matmul: Input operand 0 does not have enough dimensions (has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)",
    );
    assert_err(
        Tensor::matmul(
            &Tensor::zeros(&[3], DType::F64).unwrap(),
            &Tensor::zeros(&[], DType::F64).unwrap(),
        ),
        ErrorKind::Value,
        "matmul: Input operand 1 does not have enough dimensions (has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)",
    );
    assert_err(
        Tensor::matmul(
            &Tensor::zeros(&[2, 3, 4], DType::F64).unwrap(),
            &Tensor::zeros(&[5, 4, 2], DType::F64).unwrap(),
        ),
        ErrorKind::Value,
        "operands could not be broadcast together with remapped shapes [original->remapped]: (2,3,4)->(2,newaxis,newaxis) (5,4,2)->(5,newaxis,newaxis)  and requested shape (3,2)",
    );
    assert_err(
        Tensor::matmul(
            &Tensor::zeros(&[2, 1, 3, 4], DType::F64).unwrap(),
            &Tensor::zeros(&[5, 3, 4, 2], DType::F64).unwrap(),
        ),
        ErrorKind::Value,
        "operands could not be broadcast together with remapped shapes [original->remapped]: (2,1,3,4)->(2,1,newaxis,newaxis) (5,3,4,2)->(5,3,newaxis,newaxis)  and requested shape (3,2)",
    );
    assert_err(
        Tensor::matmul(
            &Tensor::zeros(&[2, 3, 4], DType::F64).unwrap(),
            &Tensor::zeros(&[5, 5, 2], DType::F64).unwrap(),
        ),
        ErrorKind::Value,
        "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size 5 is different from 4)",
    );
}

#[test]
fn large_matrices() {
    // Many register blocks (the threaded path is in the gemm tests below); small integers keep
    // float sums exact.
    let a = Tensor::binary_scalar(
        BinaryOp::Sub,
        &Tensor::binary_scalar(BinaryOp::Mod, &ar(6400, DType::F32), Scalar::Int(7), false)
            .unwrap(),
        Scalar::Int(3),
        false,
    )
    .unwrap()
    .reshape(&[80, 80])
    .unwrap();
    let b = Tensor::binary_scalar(
        BinaryOp::Sub,
        &Tensor::binary_scalar(BinaryOp::Mod, &ar(6400, DType::F32), Scalar::Int(5), false)
            .unwrap(),
        Scalar::Int(2),
        false,
    )
    .unwrap()
    .reshape(&[80, 80])
    .unwrap();
    let c = Tensor::matmul(&a, &b).unwrap();
    assert_eq!(c.shape(), &[80, 80]);
    assert_eq!(c.as_f32_slice().unwrap()[0], 12.0);
    assert_eq!(c.as_f32_slice().unwrap()[1], 6.0);
    assert_eq!(c.as_f32_slice().unwrap()[1402], 0.0);
    assert_eq!(c.as_f32_slice().unwrap()[6399], -4.0);
    assert_eq!(c.as_f32_slice().unwrap()[3203], -3.0);
    assert_eq!(
        Tensor::reduce(ReduceOp::Sum, &c, None, false)
            .unwrap()
            .item()
            .unwrap(),
        Scalar::Float(0.0)
    );
}

/// A `rows×cols` matrix of small integers (exact in float sums) from a seed.
fn small_ints(rows: usize, cols: usize, seed: i64, dtype: DType) -> (Vec<f64>, Tensor) {
    let v: Vec<f64> = (0..(rows * cols) as i64)
        .map(|i| ((i * 7 + seed * 13) % 11 - 5) as f64)
        .collect();
    let t = f64s(&v, &[rows, cols]).cast(dtype);
    (v, t)
}

/// A bias's value at row `i`, column `j` of the result.
type BiasAt<'a> = dyn Fn(usize, usize) -> f64 + 'a;

#[test]
fn gemm_reads_transposed_operands_and_accumulates_a_broadcast_bias() {
    // Sizes on both sides of the threading threshold (the last but one is threaded); the last
    // with a transposed `b` is computed column-major (`by_columns`), with ragged blocks.
    for (m, k, n) in [
        (3, 4, 5),
        (1, 7, 1),
        (64, 72, 80),
        (37, 129, 70),
        (128, 96, 100),
        (5, 260, 257),
    ] {
        for dtype in [DType::F32, DType::F64] {
            for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
                let (av, a) = small_ints(if ta { k } else { m }, if ta { m } else { k }, 1, dtype);
                let (bv, b) = small_ints(if tb { n } else { k }, if tb { k } else { n }, 2, dtype);
                let at = |i: usize, p: usize| if ta { av[p * m + i] } else { av[i * k + p] };
                let bt = |p: usize, j: usize| if tb { bv[j * k + p] } else { bv[p * n + j] };
                let biases: [(Vec<usize>, Box<BiasAt<'_>>); 6] = [
                    (vec![], Box::new(|_, _| 2.0)),
                    (vec![n], Box::new(|_, j| j as f64)),
                    (vec![1, n], Box::new(|_, j| -(j as f64))),
                    (vec![m, 1], Box::new(|i, _| i as f64)),
                    (vec![m, n], Box::new(|i, j| (i * n + j) as f64)),
                    (vec![1, 1], Box::new(|_, _| -1.0)),
                ];
                let product = |i: usize, j: usize| (0..k).map(|p| at(i, p) * bt(p, j)).sum::<f64>();
                let expect = |bias: &dyn Fn(usize, usize) -> f64| {
                    let v: Vec<f64> = (0..m * n)
                        .map(|x| product(x / n, x % n) + bias(x / n, x % n))
                        .collect();
                    f64s(&v, &[m, n]).cast(dtype)
                };
                let plain = Tensor::gemm(&a, &b, None, ta, tb).unwrap();
                assert_tensor(&plain, &expect(&|_, _| 0.0));
                for (shape, bias) in &biases {
                    let cv: Vec<f64> = match shape.len() {
                        0 => vec![bias(0, 0)],
                        1 => (0..shape[0]).map(|j| bias(0, j)).collect(),
                        _ => (0..shape[0] * shape[1])
                            .map(|x| bias(x / shape[1], x % shape[1]))
                            .collect(),
                    };
                    let c = f64s(&cv, shape).cast(dtype);
                    // A shared accumulator is copied; a unique one of the result's shape is
                    // written in place. Both give the same values.
                    let kept = c.clone();
                    let shared = Tensor::gemm(&a, &b, Some(c.clone()), ta, tb).unwrap();
                    assert_tensor(&shared, &expect(bias.as_ref()));
                    assert_tensor(&kept, &c);
                    drop(kept);
                    let owned = Tensor::gemm(&a, &b, Some(c), ta, tb).unwrap();
                    assert_tensor(&owned, &expect(bias.as_ref()));
                }
            }
        }
    }
}

/// A product with a transposed right operand is computed column-major when that operand is
/// large; the sums are the same as on the operand stored transposed, bit for bit (random
/// floats, so a different summation order would show).
#[test]
fn transposed_right_operands_give_the_bits_of_stored_ones() {
    for dtype in [DType::F32, DType::F64] {
        for (m, k, n) in [
            (128, 512, 512),
            (33, 260, 300),
            (5, 300, 240),
            (2, 600, 128),
        ] {
            let mut rng = crate::random::Generator::new(11);
            let a = rng.uniform(&[m, k], -1.0, 1.0, dtype).unwrap();
            let w = rng.uniform(&[n, k], -1.0, 1.0, dtype).unwrap();
            let stored = w.transpose(None).unwrap().contiguous();
            let c = rng.uniform(&[n], -1.0, 1.0, dtype).unwrap();
            for bias in [None, Some(c)] {
                let got = Tensor::gemm(&a, &w, bias.clone(), false, true).unwrap();
                let want = Tensor::gemm(&a, &stored, bias, false, false).unwrap();
                assert!(got.same_as(&want), "{dtype:?} {m}×{k}×{n}");
            }
            // `aᵀ` read in place as well.
            let at = a.transpose(None).unwrap().contiguous();
            let got = Tensor::gemm(&at, &w, None, true, true).unwrap();
            let want = Tensor::gemm(&a, &stored, None, false, false).unwrap();
            assert!(got.same_as(&want), "{dtype:?} {m}×{k}×{n}, aᵀ");
        }
    }
}

/// Large products of row-major operands are split into two halves of the columns, one per
/// thread: the bits are those of the whole product on one thread, for ragged widths, depths
/// beyond gemm's blocks along k, products of at most 64 rows (split only where both halves
/// are wider than 64 columns), accumulators and both float dtypes.
#[test]
fn column_halves_give_the_bits_of_one_thread() {
    use crate::matmul::{COLUMN_HALVES_MIN, Dst, GemmElem, Layout, PARALLEL_FLOPS};
    fn check<T: GemmElem>(dtype: DType) {
        for (m, k, n) in [
            (128, 784, 512),
            (37, 1500, 301),
            (200, 96, 130),
            (64, 2100, 1000),
            (48, 1100, 128),
            (37, 1500, 130),
            (64, 2100, 160),
        ] {
            let mut rng = crate::random::Generator::new(m as u64);
            let a = rng.uniform(&[m, k], -1.0, 1.0, dtype).unwrap();
            let b = rng.uniform(&[k, n], -1.0, 1.0, dtype).unwrap();
            let c = rng.uniform(&[m, n], -1.0, 1.0, dtype).unwrap();
            assert!(m * k * n >= PARALLEL_FLOPS && n >= COLUMN_HALVES_MIN);
            for acc in [false, true] {
                let got = Tensor::gemm(&a, &b, acc.then(|| c.clone()), false, false).unwrap();
                let vals = |t: &Tensor| T::slice(&t.storage).unwrap().to_vec();
                let (av, bv) = (vals(&a), vals(&b));
                let mut want = if acc {
                    vals(&c)
                } else {
                    vec![T::zero(); m * n]
                };
                let found = if acc { Dst::Accumulate } else { Dst::Zeros };
                T::gemm_with(
                    &mut want,
                    &av,
                    Layout::of(k, false),
                    &bv,
                    Layout::of(n, false),
                    (m, k, n),
                    found,
                    false,
                );
                let want = Tensor::from_storage(T::into_storage(want), vec![m, n]);
                assert!(got.same_as(&want), "{dtype:?} {m}×{k}×{n} accumulate {acc}");
            }
        }
    }
    check::<f32>(DType::F32);
    check::<f64>(DType::F64);
}

/// A new product's buffer is not zeroed where gemm's general kernel writes every element: on
/// each path (gemm's own threads or one, column halves, column-major right operands through
/// transposes, vector-matrix kernels, empty sums, the small products that still start from
/// zeros) a destination full of NaN is
/// overwritten everywhere, with the bits of sums started from zeros; `gemm` gives those bits.
#[test]
fn fresh_products_write_every_element() {
    use crate::matmul::{Dst, GemmElem, Layout, product};
    fn check<T: GemmElem>(dtype: DType, nan: T) {
        // (m, k, n, lhs transposed, rhs transposed, parallel)
        for (m, k, n, ta, tb, parallel) in [
            (128, 784, 512, false, false, true),
            (128, 784, 512, true, false, true),
            (128, 512, 512, false, true, true),
            (128, 512, 512, false, true, false),
            (37, 300, 301, true, true, false),
            (16, 16, 17, false, false, false),
            (16, 16, 16, false, false, false),
            (3, 40, 200, false, false, false),
            (40, 2, 40, false, false, true),
            (1, 784, 512, false, false, true),
            (1, 300, 200, false, true, false),
            (8, 0, 20, false, false, false),
        ] {
            let mut rng = crate::random::Generator::new((m * k + n) as u64);
            let a_shape = if ta { [k, m] } else { [m, k] };
            let b_shape = if tb { [n, k] } else { [k, n] };
            let a = rng.uniform(&a_shape, -1.0, 1.0, dtype).unwrap();
            let b = rng.uniform(&b_shape, -1.0, 1.0, dtype).unwrap();
            let vals = |t: &Tensor| T::slice(&t.storage).unwrap().to_vec();
            let (av, bv) = (vals(&a), vals(&b));
            let (la, lb) = (Layout::of(a_shape[1], ta), Layout::of(b_shape[1], tb));
            let mut want = vec![T::zero(); m * n];
            T::gemm_with(&mut want, &av, la, &bv, lb, (m, k, n), Dst::Zeros, parallel);
            let case = format!("{dtype:?} {m}×{k}×{n} ta {ta} tb {tb} parallel {parallel}");
            let mut got = vec![nan; m * n];
            // SAFETY: `got` holds m·n elements, borrowed for the call.
            unsafe {
                product(
                    (got.as_mut_ptr(), m * n),
                    &av,
                    la,
                    &bv,
                    lb,
                    (m, k, n),
                    Dst::Overwrite,
                    parallel,
                )
            };
            let bits = |v: &[T]| Tensor::from_storage(T::into_storage(v.to_vec()), vec![m, n]);
            assert!(bits(&got).same_as(&bits(&want)), "{case}: overwritten");
            let fresh = Tensor::gemm(&a, &b, None, ta, tb).unwrap();
            assert!(fresh.same_as(&bits(&want)), "{case}: gemm");
        }
    }
    check::<f32>(DType::F32, f32::NAN);
    check::<f64>(DType::F64, f64::NAN);
}

/// `gemm_pair` gives each product the bits `gemm` gives it alone (on gemm's threads there,
/// one thread each here), accumulators included; each result carries its own error.
#[test]
fn products_side_by_side_give_the_bits_of_one_by_one() {
    fn call<'a>(
        a: &'a Tensor,
        b: &'a Tensor,
        c: Option<Tensor>,
        ta: bool,
        tb: bool,
    ) -> crate::GemmCall<'a> {
        crate::GemmCall {
            a,
            b,
            c,
            transpose_a: ta,
            transpose_b: tb,
        }
    }
    for dtype in [DType::F32, DType::F64] {
        let mut rng = crate::random::Generator::new(5);
        let d = rng.uniform(&[128, 512], -1.0, 1.0, dtype).unwrap();
        let w = rng.uniform(&[512, 384], -1.0, 1.0, dtype).unwrap();
        let h = rng.uniform(&[128, 384], -1.0, 1.0, dtype).unwrap();
        let bias = rng.uniform(&[384], -1.0, 1.0, dtype).unwrap();
        let small = rng.uniform(&[3, 512], -1.0, 1.0, dtype).unwrap();
        // Balanced (side by side), then unbalanced and small (one after the other).
        for (second_a, transposed) in [(&h, true), (&small, false)] {
            let second_b = if transposed { &d } else { &w };
            let (x, y) = Tensor::gemm_pair(
                call(&d, &w, Some(bias.clone()), false, false),
                call(second_a, second_b, None, transposed, false),
            );
            let first = Tensor::gemm(&d, &w, Some(bias.clone()), false, false).unwrap();
            let second = Tensor::gemm(second_a, second_b, None, transposed, false).unwrap();
            assert!(x.unwrap().same_as(&first), "{dtype:?} first");
            assert!(y.unwrap().same_as(&second), "{dtype:?} second");
        }
        // An error in either product is that product's own.
        let (x, y) = Tensor::gemm_pair(
            call(&d, &w, None, false, false),
            call(&d, &w, None, true, false),
        );
        assert!(
            x.unwrap()
                .same_as(&Tensor::gemm(&d, &w, None, false, false).unwrap())
        );
        assert!(y.unwrap_err().message.contains("inner dimensions differ"));
        let (x, y) = Tensor::gemm_pair(
            call(&h, &w, None, false, false),
            call(&d, &w, None, false, false),
        );
        assert!(x.unwrap_err().message.contains("inner dimensions differ"));
        assert!(y.is_ok());
    }
}

/// Products of one row by a row-major float32 matrix (batch-1 inference) run the AVX-512
/// vector-matrix kernel: each sum in order of the rows with one fused multiply-add per term,
/// and above `VECTOR_MATRIX_HALVES` multiply-adds as two halves of the rows added at the end,
/// the same on one thread or two. Random floats, compared bit for bit, so any other order or
/// a lost lane would show. The same for a matrix stored transposed, one dot product a result.
/// The index `[:, :stop]`: the first `stop` columns of a matrix, a view of it.
fn columns(stop: usize) -> [IndexItem; 2] {
    [
        IndexItem::Slice {
            start: None,
            stop: None,
            step: None,
        },
        IndexItem::Slice {
            start: None,
            stop: Some(stop as i64),
            step: None,
        },
    ]
}

#[test]
fn vector_matrix_products_sum_in_row_order_by_halves() {
    use crate::matmul::{Dst, GemmElem, Layout};
    // Column counts cover 256-column blocks, every smaller block and a masked tail; the
    // last three are summed by halves.
    for (k, n) in [
        (1, 1),
        (7, 1),
        (5, 17),
        (3, 300),
        (9, 511),
        (1000, 10),
        (300, 500),
        (784, 512),
        (513, 257),
    ] {
        // Columns `n` of a wider matrix (row stride n + 3), read in place as a view.
        let ld = n + 3;
        let mut rng = crate::random::Generator::new(k as u64 * 31 + n as u64);
        let wide = rng.uniform(&[k, ld], -1.0, 1.0, DType::F32).unwrap();
        let w = wide.index(&columns(n)).unwrap();
        assert!(w.is_view());
        let x = rng.uniform(&[1, k], -1.0, 1.0, DType::F32).unwrap();
        let bias = rng.uniform(&[n], -1.0, 1.0, DType::F32).unwrap();
        let (wv, xv, bv) = (
            wide.as_f32_slice().unwrap(),
            x.as_f32_slice().unwrap(),
            bias.as_f32_slice().unwrap(),
        );
        let sum = |rows: std::ops::Range<usize>, from: f32, j: usize| {
            rows.fold(from, |acc, p| xv[p].mul_add(wv[p * ld + j], acc))
        };
        let expect = |start: &dyn Fn(usize) -> f32| -> Vec<f32> {
            (0..n)
                .map(|j| {
                    if k * n >= 1 << 17 {
                        sum(0..k / 2, start(j), j) + sum(k / 2..k, 0.0, j)
                    } else {
                        sum(0..k, start(j), j)
                    }
                })
                .collect()
        };
        let same = |got: &Tensor, want: &[f32], what: &str| {
            let got = got.as_f32_slice().unwrap();
            assert!(
                got.iter()
                    .zip(want)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "{k}×{n} {what}"
            );
        };
        let plain = expect(&|_| 0.0);
        same(
            &Tensor::gemm(&x, &w, None, false, false).unwrap(),
            &plain,
            "gemm",
        );
        same(&Tensor::matmul(&x, &w).unwrap(), &plain, "matmul");
        let with_bias = expect(&|j| bv[j]);
        same(
            &Tensor::gemm(&x, &w, Some(bias.clone()), false, false).unwrap(),
            &with_bias,
            "gemm + bias",
        );
        // A row read with a stride: the column of a (k, 2) matrix, transposed.
        let row = x.reshape(&[k as i64]).unwrap();
        let tall = Tensor::stack(&[row.clone(), row], 1)
            .unwrap()
            .index(&columns(1))
            .unwrap();
        same(
            &Tensor::gemm(&tall, &w, None, true, false).unwrap(),
            &plain,
            "strided row",
        );
        // One thread and an overwritten destination give the same bits.
        let one_thread = |w: &[f32], layout: Layout| {
            let mut dst = vec![f32::NAN; n];
            <f32 as GemmElem>::gemm_with(
                &mut dst,
                xv,
                Layout::of(k, false),
                w,
                layout,
                (1, k, n),
                Dst::Overwrite,
                false,
            );
            f32s(&dst, &[n])
        };
        same(
            &one_thread(wv, Layout::of(ld, false)),
            &plain,
            "one thread, overwritten",
        );

        // `x @ w.T` with `w` stored (n, k) (row stride k + 5), read in place: one dot product
        // per result, its sixteen lanes added pairwise, the start value last.
        let ldt = k + 5;
        let stored = rng.uniform(&[n, ldt], -1.0, 1.0, DType::F32).unwrap();
        let wt = stored.index(&columns(k)).unwrap();
        let sv = stored.as_f32_slice().unwrap();
        let dot = |j: usize| {
            let mut lanes = [0.0f32; 16];
            for p in 0..k {
                lanes[p % 16] = xv[p].mul_add(sv[j * ldt + p], lanes[p % 16]);
            }
            for width in [8, 4, 2, 1] {
                for l in 0..width {
                    lanes[l] += lanes[l + width];
                }
            }
            lanes[0]
        };
        let plain_t: Vec<f32> = (0..n).map(|j| 0.0 + dot(j)).collect();
        let bias_t: Vec<f32> = (0..n).map(|j| bv[j] + dot(j)).collect();
        same(
            &Tensor::gemm(&x, &wt, None, false, true).unwrap(),
            &plain_t,
            "x @ w.T",
        );
        same(
            &Tensor::gemm(&x, &wt, Some(bias.clone()), false, true).unwrap(),
            &bias_t,
            "x @ w.T + bias",
        );
        let viewed = wt.transpose(None).unwrap();
        same(
            &Tensor::matmul(&x, &viewed).unwrap(),
            &plain_t,
            "matmul on a transposed view",
        );
        same(
            &one_thread(sv, Layout::of(ldt, true)),
            &plain_t,
            "x @ w.T, one thread, overwritten",
        );
    }
    // numpy's sums start from +0.0: a product of -0.0 alone gives +0.0.
    for transposed in [false, true] {
        let w = f32s(&[1.0, 2.0], if transposed { &[2, 1] } else { &[1, 2] });
        let got = Tensor::gemm(&f32s(&[-0.0], &[1, 1]), &w, None, false, transposed).unwrap();
        assert!(got.as_f32_slice().unwrap().iter().all(|v| v.to_bits() == 0));
    }
    let got = Tensor::matmul(&f32s(&[-0.0], &[1, 1]), &f32s(&[1.0, 2.0], &[1, 2])).unwrap();
    assert!(got.as_f32_slice().unwrap().iter().all(|v| v.to_bits() == 0));
}

#[test]
fn gemm_edge_cases_and_errors() {
    // k = 0: the result is the accumulator (or zeros).
    let a = Tensor::zeros(&[2, 0], DType::F32).unwrap();
    let b = Tensor::zeros(&[0, 3], DType::F32).unwrap();
    assert_tensor(
        &Tensor::gemm(&a, &b, None, false, false).unwrap(),
        &Tensor::zeros(&[2, 3], DType::F32).unwrap(),
    );
    let c = f32s(&[1.0, 2.0, 3.0], &[3]);
    assert_tensor(
        &Tensor::gemm(&a, &b, Some(c), false, false).unwrap(),
        &f32s(&[1.0, 2.0, 3.0, 1.0, 2.0, 3.0], &[2, 3]),
    );
    // Empty results.
    let e = Tensor::gemm(
        &Tensor::zeros(&[0, 4], DType::F64).unwrap(),
        &Tensor::zeros(&[4, 5], DType::F64).unwrap(),
        None,
        false,
        false,
    )
    .unwrap();
    assert_eq!(e.shape(), &[0, 5]);
    let m = Tensor::zeros(&[2, 3], DType::F32).unwrap();
    let err = |r: crate::Result<Tensor>| r.unwrap_err().to_string();
    assert_eq!(
        err(Tensor::gemm(&m, &m, None, false, false)),
        "ValueError: gemm: inner dimensions differ (3 != 2)"
    );
    assert_eq!(
        err(Tensor::gemm(&f32s(&[1.0], &[1]), &m, None, false, false)),
        "ValueError: gemm: operands must be matrices, got shapes (1,) and (2,3)"
    );
    assert_eq!(
        err(Tensor::gemm(&m, &m.cast(DType::F64), None, false, true)),
        "TypeError: gemm: operands and accumulator must share one float dtype"
    );
    assert_eq!(
        err(Tensor::gemm(
            &m.cast(DType::I64),
            &m.cast(DType::I64),
            None,
            false,
            true
        )),
        "TypeError: gemm: operands and accumulator must share one float dtype"
    );
    assert_eq!(
        err(Tensor::gemm(
            &m,
            &m,
            Some(f32s(&[1.0, 2.0, 3.0], &[3])),
            false,
            true
        )),
        "ValueError: gemm: accumulator of shape (3,) does not broadcast to (2, 2)"
    );
    assert_eq!(
        err(Tensor::gemm(
            &m,
            &m,
            Some(Tensor::zeros(&[1, 2, 2], DType::F32).unwrap()),
            false,
            true
        )),
        "ValueError: gemm: accumulator of shape (1,2,2) does not broadcast to (2, 2)"
    );
}

/// `KeepThreadsAwake` on a pool thread: the other thread polls while the guard lives (and
/// runs the kernels' parallel halves meanwhile, same bits), and stops when it is dropped.
/// Off the pool it does nothing.
#[test]
fn kept_awake_threads_run_kernels_and_stop_with_the_guard() {
    use crate::KeepThreadsAwake;
    assert!(KeepThreadsAwake::start().is_none(), "not a pool thread");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .use_current_thread()
        .build()
        .unwrap();
    let mut rng = crate::random::Generator::new(3);
    let a = rng.uniform(&[128, 300], -1.0, 1.0, DType::F32).unwrap();
    let b = rng.uniform(&[300, 256], -1.0, 1.0, DType::F32).unwrap();
    let want = Tensor::gemm(&a, &b, None, false, false).unwrap();
    pool.install(|| {
        let guard = KeepThreadsAwake::start().expect("a pool thread of two");
        let stop = guard.stop.clone();
        // The helper holds the other reference while it polls.
        let t = std::time::Instant::now();
        while std::sync::Arc::strong_count(&stop) < 2 {
            assert!(t.elapsed().as_secs() < 10, "the helper never started");
            std::thread::yield_now();
        }
        for _ in 0..3 {
            let got = Tensor::gemm(&a, &b, None, false, false).unwrap();
            assert!(got.same_as(&want));
        }
        drop(guard);
        let t = std::time::Instant::now();
        while std::sync::Arc::strong_count(&stop) > 1 {
            assert!(t.elapsed().as_secs() < 10, "the helper kept polling");
            std::thread::yield_now();
        }
    });
}

/// An SGD step on a product (`Tensor::sgd_product`) gives the bits of the product followed by
/// the unfused update `p - rate * g` (the fused kernel of `ops.sgd`), whether the product is
/// split into halves of its rows per thread or not, for odd row counts, transposed operands,
/// products of at most 64 rows or columns, depths beyond gemm's blocks along k, both float
/// dtypes and rates of every scalar kind; where it does not apply it says so and changes
/// nothing.
#[test]
fn sgd_product_gives_the_bits_of_the_product_then_the_update() {
    use crate::fused::{FusedKernel, FusedOp};
    use crate::{BinaryOp, Scalar};
    fn unfused(p: &Tensor, g: &Tensor, rate: Scalar) -> Tensor {
        let ops = vec![
            FusedOp::Scalar(rate),
            FusedOp::Binary(BinaryOp::Mul, 2, 1),
            FusedOp::Binary(BinaryOp::Sub, 0, 3),
        ];
        let dtype = p.dtype();
        FusedKernel::new(&[dtype, dtype], ops)
            .unwrap()
            .run(&[p, g])
            .unwrap()
    }
    for dtype in [DType::F32, DType::F64] {
        // (m, k, n, a transposed, b transposed, rate)
        for (m, k, n, ta, tb, rate) in [
            (784, 128, 512, true, false, Scalar::Float(0.01)),
            (96, 128, 160, true, false, Scalar::Float(-0.37)),
            (48, 1100, 150, false, false, Scalar::Int(3)),
            (128, 512, 512, false, true, Scalar::Float(1e-3)),
            (40, 64, 100, false, false, Scalar::Bool(true)),
            (16, 16, 17, true, true, Scalar::Float(0.5)),
            (97, 300, 130, true, false, Scalar::Float(0.02)),
            (200, 600, 48, false, false, Scalar::Float(0.02)),
            (100, 1100, 40, true, false, Scalar::Float(0.02)),
        ] {
            let mut rng = crate::random::Generator::new((m * n) as u64);
            let mut stored = |rows, cols, t: bool| {
                let shape = if t { [cols, rows] } else { [rows, cols] };
                rng.uniform(&shape, -1.0, 1.0, dtype).unwrap()
            };
            let a = stored(m, k, ta);
            let b = stored(k, n, tb);
            let p = rng.uniform(&[m, n], -1.0, 1.0, dtype).unwrap();
            let g = Tensor::gemm(&a, &b, None, ta, tb).unwrap();
            let want = unfused(&p, &g, rate);
            // A buffer of its own (`p` is kept to compare).
            let mut got = Tensor::from_storage((*p.storage).clone(), p.shape.to_vec());
            assert!(!got.same_as(&want));
            assert!(
                got.sgd_product(&a, &b, ta, tb, rate).unwrap(),
                "{dtype:?} {m}×{k}×{n}"
            );
            assert!(got.same_as(&want), "{dtype:?} {m}×{k}×{n} ta {ta} tb {tb}");
        }
    }
    // Where it does not apply: nothing changes.
    let mut rng = crate::random::Generator::new(7);
    let a = rng.uniform(&[64, 32], -1.0, 1.0, DType::F32).unwrap();
    let b = rng.uniform(&[32, 48], -1.0, 1.0, DType::F32).unwrap();
    let rate = Scalar::Float(0.1);
    let unchanged = |mut p: Tensor, a: &Tensor, b: &Tensor| {
        let before = (p.dtype(), p.shape.to_vec(), p.to_f64_vec());
        assert!(!p.sgd_product(a, b, false, false, rate).unwrap());
        assert_eq!((p.dtype(), p.shape.to_vec(), p.to_f64_vec()), before);
    };
    // A shared buffer, and the same buffer once it is not: then it is updated.
    let p = rng.uniform(&[64, 48], -1.0, 1.0, DType::F32).unwrap();
    unchanged(p.clone(), &a, &b);
    let mut p = p;
    assert!(p.sgd_product(&a, &b, false, false, rate).unwrap());
    // Another shape, another dtype, a product too small for gemm's general kernel, a view.
    unchanged(
        rng.uniform(&[48, 64], -1.0, 1.0, DType::F32).unwrap(),
        &a,
        &b,
    );
    unchanged(
        rng.uniform(&[64, 48], -1.0, 1.0, DType::F64).unwrap(),
        &a,
        &b,
    );
    let narrow = rng.uniform(&[32, 8], -1.0, 1.0, DType::F32).unwrap();
    unchanged(
        rng.uniform(&[64, 8], -1.0, 1.0, DType::F32).unwrap(),
        &a,
        &narrow,
    );
    let wide = rng.uniform(&[48, 64], -1.0, 1.0, DType::F32).unwrap();
    unchanged(wide.transpose(None).unwrap(), &a, &b);
    let ints = Tensor::from_i64(vec![1; 64 * 48], &[64, 48]).unwrap();
    unchanged(ints, &a, &b);
}

#[test]
fn dense_products_sum_in_order_then_add_the_bias_or_accumulator_then_relu() {
    // Row counts cover whole tiles (24 rows of one vector, 12 of two, 8 of three, 6 of four)
    // and the tiles of 4 and 1 after them; column counts one to four vectors, several blocks
    // of 64 and masked remainders; products large enough to be split by rows over threads
    // (2000×64×10, 1000×64×130). The lhs is read in place from a wider matrix (a view with
    // row stride k + 2).
    for (m, k, n) in [
        (2, 1, 1),
        (25, 3, 10),
        (13, 64, 15),
        (37, 17, 7),
        (360, 128, 10),
        (9, 130, 3),
        (100, 512, 12),
        (2000, 64, 10),
        (360, 64, 128),
        (31, 5, 16),
        (27, 33, 40),
        (17, 64, 47),
        (23, 7, 64),
        (11, 60, 200),
        (1000, 64, 130),
    ] {
        let mut rng = crate::random::Generator::new((m * 1000 + k * 10 + n) as u64);
        let wide = rng.uniform(&[m, k + 2], -1.0, 1.0, DType::F32).unwrap();
        let a = wide.index(&columns(k)).unwrap();
        assert!(a.is_view());
        let b = rng.uniform(&[k, n], -1.0, 1.0, DType::F32).unwrap();
        let row = rng.uniform(&[n], -1.0, 1.0, DType::F32).unwrap();
        let full = rng.uniform(&[m, n], -1.0, 1.0, DType::F32).unwrap();
        let (av, bv) = (wide.as_f32_slice().unwrap(), b.as_f32_slice().unwrap());
        // Each result: one sum in order of p with fused multiply-adds from +0.0, then the
        // addend.
        let sum = |i: usize, j: usize| {
            (0..k).fold(0.0f32, |acc, p| {
                av[i * (k + 2) + p].mul_add(bv[p * n + j], acc)
            })
        };
        let expect = |addend: &dyn Fn(usize, usize) -> f32| -> Vec<f32> {
            (0..m * n)
                .map(|e| sum(e / n, e % n) + addend(e / n, e % n))
                .collect()
        };
        let same = |got: Tensor, want: Vec<f32>, what: &str| {
            let got = got.as_f32_slice().unwrap();
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(got), bits(&want), "{what} of {m}x{k}x{n}");
        };
        same(
            Tensor::matmul(&a, &b).unwrap(),
            expect(&|_, _| 0.0),
            "a product",
        );
        let (rv, fv) = (row.as_f32_slice().unwrap(), full.as_f32_slice().unwrap());
        let plus_row = Tensor::gemm(&a, &b, Some(row.clone()), false, false).unwrap();
        same(plus_row, expect(&|_, j| rv[j]), "a product plus a row");
        let plus_full = Tensor::gemm(&a, &b, Some(full.clone()), false, false).unwrap();
        same(
            plus_full,
            expect(&|i, j| fv[i * n + j]),
            "a product plus a matrix",
        );
        // Either operand stored transposed and read as such: the same bits.
        let at = a.transpose(None).unwrap().contiguous();
        let bt = b.transpose(None).unwrap().contiguous();
        let transposed = Tensor::gemm(&at, &bt, Some(row.clone()), true, true).unwrap();
        same(
            transposed,
            expect(&|_, j| rv[j]),
            "transposed operands plus a row",
        );
        // ReLU fused: that of the unfused ops, `-0.0` made `+0.0` (products of `-0.0`).
        let relu = |x: f32| if x > 0.0 || x.is_nan() { x } else { 0.0 };
        for (c, addend) in [
            (None, &(|_, _| 0.0f32) as &dyn Fn(usize, usize) -> f32),
            (Some(row.clone()), &|_, j| rv[j]),
            (Some(full.clone()), &|i, j| fv[i * n + j]),
        ] {
            let fused = Tensor::gemm_relu(&a, &b, c.clone(), false, false).unwrap();
            let want = expect(addend).into_iter().map(relu).collect();
            same(fused, want, "ReLU of a product");
        }
    }
}

#[test]
fn fused_relu_keeps_nan_and_zeroes_negatives_as_the_unfused_ops() {
    // 32 columns (the kernel with whole vectors) and 8 (one partial vector), 30 rows: rows
    // whose sums are NaN, +inf, -inf, negative and positive.
    for n in [32, 8] {
        let k = 4;
        let mut av = vec![0.0f32; 30 * k];
        for (i, row) in av.chunks_mut(k).enumerate() {
            row[0] = match i % 5 {
                0 => f32::NAN,
                1 => f32::INFINITY,
                2 => f32::NEG_INFINITY,
                3 => -1.5,
                _ => 2.0,
            };
        }
        let a = Tensor::from_f32(av, &[30, k]).unwrap();
        let b = Tensor::from_f32(vec![1.0; k * n], &[k, n]).unwrap();
        let bias = Tensor::from_f32(vec![-0.25; n], &[n]).unwrap();
        let fused = Tensor::gemm_relu(&a, &b, Some(bias.clone()), false, false).unwrap();
        let product = Tensor::gemm(&a, &b, Some(bias), false, false).unwrap();
        let unfused = Tensor::unary(crate::UnaryOp::Relu, &product).unwrap();
        let bits = |t: &Tensor| -> Vec<u32> {
            t.as_f32_slice()
                .unwrap()
                .iter()
                .map(|x| x.to_bits())
                .collect()
        };
        assert_eq!(bits(&fused), bits(&unfused), "n = {n}");
        let v = fused.as_f32_slice().unwrap();
        assert!(v[0].is_nan() && v[n] == f32::INFINITY && v[2 * n] == 0.0 && v[3 * n] == 0.0);
        assert_eq!(v[4 * n], 1.75);
    }
}
