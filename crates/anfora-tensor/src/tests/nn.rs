//! The nn kernels against direct loops written here (the definitions, summed in another
//! order, so compared within a rounding tolerance), their adjoint identities, and their errors.

use super::*;
use crate::{Conv2dSpec, Padding2d, conv2d_output_shape};

/// Deterministic values in [-1, 1).
fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

#[track_caller]
fn assert_close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "element {i}: {g} vs {w}"
        );
    }
}

/// A convolution's configuration for the direct loops.
#[derive(Clone, Copy, Debug)]
struct Cfg {
    x: [usize; 4],
    w: [usize; 4],
    stride: [usize; 2],
    /// Zeros (top, bottom, left, right).
    pad: [usize; 4],
    dil: [usize; 2],
    groups: usize,
}

impl Cfg {
    fn spec(&self) -> Conv2dSpec {
        Conv2dSpec {
            stride: self.stride,
            padding: Padding2d::Explicit {
                h: [self.pad[0], self.pad[1]],
                w: [self.pad[2], self.pad[3]],
            },
            dilation: self.dil,
            groups: self.groups,
        }
    }

    fn out(&self) -> [usize; 4] {
        let [n, _, h, w] = self.x;
        let [o, _, kh, kw] = self.w;
        let oh = (h + self.pad[0] + self.pad[1] - self.dil[0] * (kh - 1) - 1) / self.stride[0] + 1;
        let ow = (w + self.pad[2] + self.pad[3] - self.dil[1] * (kw - 1) - 1) / self.stride[1] + 1;
        [n, o, oh, ow]
    }

    /// Calls `f(x index, w index, out index)` for every product of the convolution.
    fn each(&self, mut f: impl FnMut(usize, usize, usize)) {
        let [n, c, h, w] = self.x;
        let [o, cg, kh, kw] = self.w;
        let [_, _, oh, ow] = self.out();
        let og = o / self.groups;
        for b in 0..n {
            for oc in 0..o {
                let g = oc / og;
                for oy in 0..oh {
                    for ox in 0..ow {
                        for ci in 0..cg {
                            for ki in 0..kh {
                                for kj in 0..kw {
                                    let iy = (oy * self.stride[0] + ki * self.dil[0]) as isize
                                        - self.pad[0] as isize;
                                    let ix = (ox * self.stride[1] + kj * self.dil[1]) as isize
                                        - self.pad[2] as isize;
                                    if iy < 0 || ix < 0 || iy >= h as isize || ix >= w as isize {
                                        continue;
                                    }
                                    let xc = g * cg + ci;
                                    let xi = ((b * c + xc) * h + iy as usize) * w + ix as usize;
                                    let wi = ((oc * cg + ci) * kh + ki) * kw + kj;
                                    let yi = ((b * o + oc) * oh + oy) * ow + ox;
                                    f(xi, wi, yi);
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Checks the forward kernel and both backward kernels against the direct loops, in
    /// float64 and float32.
    fn check(&self, seed: u64) {
        let xv = values(self.x.iter().product(), seed);
        let wv = values(self.w.iter().product(), seed + 1);
        let out = self.out();
        let dv = values(out.iter().product(), seed + 2);
        let mut y = vec![0.0; dv.len()];
        let mut dx = vec![0.0; xv.len()];
        let mut dw = vec![0.0; wv.len()];
        self.each(|xi, wi, yi| {
            y[yi] += xv[xi] * wv[wi];
            dx[xi] += dv[yi] * wv[wi];
            dw[wi] += dv[yi] * xv[xi];
        });
        let spec = self.spec();
        let (x, w, d) = (f64s(&xv, &self.x), f64s(&wv, &self.w), f64s(&dv, &out));
        let got = Tensor::conv2d(&x, &w, &spec).unwrap();
        assert_eq!(got.shape(), &out, "{self:?}");
        assert_eq!(
            conv2d_output_shape(&self.x, &self.w, &spec).unwrap(),
            out.to_vec()
        );
        assert_close(&got.to_f64_vec(), &y, 1e-12);
        let gx = Tensor::conv2d_backprop_input(&d, &w, &self.x, &spec).unwrap();
        assert_eq!(gx.shape(), &self.x);
        assert_close(&gx.to_f64_vec(), &dx, 1e-12);
        let gw = Tensor::conv2d_backprop_filter(&d, &x, &self.w, &spec).unwrap();
        assert_eq!(gw.shape(), &self.w);
        assert_close(&gw.to_f64_vec(), &dw, 1e-12);
        // float32 keeps its dtype and agrees within float32 rounding.
        let f32_of = |t: &Tensor| t.cast(DType::F32);
        let got32 = Tensor::conv2d(&f32_of(&x), &f32_of(&w), &spec).unwrap();
        assert_eq!(got32.dtype(), DType::F32);
        assert_close(&got32.to_f64_vec(), &y, 1e-4);
        let gx32 = Tensor::conv2d_backprop_input(&f32_of(&d), &f32_of(&w), &self.x, &spec).unwrap();
        assert_close(&gx32.to_f64_vec(), &dx, 1e-4);
        let gw32 =
            Tensor::conv2d_backprop_filter(&f32_of(&d), &f32_of(&x), &self.w, &spec).unwrap();
        assert_close(&gw32.to_f64_vec(), &dw, 1e-4);
    }
}

#[test]
fn conv2d_matches_direct_loops() {
    let cases = [
        // Rows long enough for whole vectors and a partial one in float32's im2col (runs of
        // 34 to 36 elements), with padding.
        Cfg {
            x: [2, 2, 5, 37],
            w: [3, 2, 2, 3],
            stride: [1, 1],
            pad: [0, 1, 1, 2],
            dil: [1, 1],
            groups: 1,
        },
        // Plain, non-square input and kernel.
        Cfg {
            x: [2, 3, 7, 5],
            w: [4, 3, 3, 2],
            stride: [1, 1],
            pad: [0; 4],
            dil: [1, 1],
            groups: 1,
        },
        // Strides that leave rows and columns unread, padding on every side.
        Cfg {
            x: [2, 2, 9, 8],
            w: [3, 2, 3, 3],
            stride: [2, 3],
            pad: [1, 1, 2, 2],
            dil: [1, 1],
            groups: 1,
        },
        // Dilation with asymmetric padding.
        Cfg {
            x: [1, 2, 10, 9],
            w: [2, 2, 3, 2],
            stride: [1, 2],
            pad: [2, 1, 0, 3],
            dil: [2, 3],
            groups: 1,
        },
        // Groups, and depthwise.
        Cfg {
            x: [2, 4, 6, 6],
            w: [6, 2, 3, 3],
            stride: [1, 1],
            pad: [1, 1, 1, 1],
            dil: [1, 1],
            groups: 2,
        },
        Cfg {
            x: [3, 3, 5, 7],
            w: [6, 1, 2, 3],
            stride: [2, 1],
            pad: [0, 0, 1, 1],
            dil: [1, 2],
            groups: 3,
        },
        // Pointwise (the input is its own column matrix), with groups.
        Cfg {
            x: [2, 4, 3, 5],
            w: [6, 2, 1, 1],
            stride: [1, 1],
            pad: [0; 4],
            dil: [1, 1],
            groups: 2,
        },
        // A 1×1 kernel with a stride is not pointwise.
        Cfg {
            x: [1, 2, 5, 5],
            w: [3, 2, 1, 1],
            stride: [2, 2],
            pad: [0; 4],
            dil: [1, 1],
            groups: 1,
        },
        // Padding wider than the kernel: whole output rows read only zeros.
        Cfg {
            x: [1, 1, 2, 3],
            w: [2, 1, 2, 2],
            stride: [1, 1],
            pad: [3, 3, 4, 2],
            dil: [1, 1],
            groups: 1,
        },
        // Large enough to be split over threads (and the filter's partial sums added).
        Cfg {
            x: [9, 4, 16, 15],
            w: [8, 4, 3, 3],
            stride: [1, 1],
            pad: [1, 1, 1, 1],
            dil: [1, 1],
            groups: 1,
        },
        Cfg {
            x: [5, 6, 20, 20],
            w: [12, 3, 5, 5],
            stride: [2, 2],
            pad: [2, 2, 2, 2],
            dil: [1, 1],
            groups: 2,
        },
    ];
    for (i, cfg) in cases.iter().enumerate() {
        cfg.check(10 * i as u64);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    #[test]
    fn conv2d_matches_direct_loops_on_random_configurations(
        n in 1usize..3, cg in 1usize..3, og in 1usize..3, groups in 1usize..3,
        h in 1usize..8, w in 1usize..8, kh in 1usize..4, kw in 1usize..4,
        sh in 1usize..4, sw in 1usize..4, dh in 1usize..3, dw in 1usize..3,
        pad in proptest::array::uniform4(0usize..3), seed in 0u64..1000,
    ) {
        let cfg = Cfg {
            x: [n, cg * groups, h, w],
            w: [og * groups, cg, kh, kw],
            stride: [sh, sw],
            pad,
            dil: [dh, dw],
            groups,
        };
        // Only configurations whose dilated kernel fits the padded input.
        if dh * (kh - 1) < h + pad[0] + pad[1] && dw * (kw - 1) < w + pad[2] + pad[3] {
            cfg.check(seed);
        }
    }
}

#[test]
fn conv2d_unbatched_same_and_valid_padding() {
    let x = f64s(&values(2 * 5 * 6, 3), &[2, 5, 6]);
    let w = f64s(&values(3 * 2 * 3 * 4, 4), &[3, 2, 3, 4]);
    let same = Conv2dSpec {
        padding: Padding2d::Same,
        dilation: [1, 2],
        ..Conv2dSpec::default()
    };
    // An unbatched input gives an unbatched output equal to the batched one's only sample.
    let y = Tensor::conv2d(&x, &w, &same).unwrap();
    assert_eq!(y.shape(), &[3, 5, 6]);
    let xb = x.reshape(&[1, 2, 5, 6]).unwrap();
    let yb = Tensor::conv2d(&xb, &w, &same).unwrap();
    assert_eq!(yb.shape(), &[1, 3, 5, 6]);
    assert_eq!(y.to_f64_vec(), yb.to_f64_vec());
    // 'same' pads dilation·(k-1) per axis, the extra one after: (1, 1) rows, (3, 3) columns.
    let explicit = Conv2dSpec {
        padding: Padding2d::Explicit {
            h: [1, 1],
            w: [3, 3],
        },
        dilation: [1, 2],
        ..Conv2dSpec::default()
    };
    assert_eq!(
        Tensor::conv2d(&x, &w, &explicit).unwrap().to_f64_vec(),
        y.to_f64_vec()
    );
    // An even kernel pads one more after than before.
    let w2 = f64s(&values(2 * 2 * 2, 5), &[1, 2, 2, 2]);
    let same2 = Conv2dSpec {
        padding: Padding2d::Same,
        ..Conv2dSpec::default()
    };
    let after = Conv2dSpec {
        padding: Padding2d::Explicit {
            h: [0, 1],
            w: [0, 1],
        },
        ..Conv2dSpec::default()
    };
    assert_eq!(
        Tensor::conv2d(&x, &w2, &same2).unwrap().to_f64_vec(),
        Tensor::conv2d(&x, &w2, &after).unwrap().to_f64_vec()
    );
    let valid = Conv2dSpec {
        padding: Padding2d::Valid,
        ..Conv2dSpec::default()
    };
    assert_eq!(Tensor::conv2d(&x, &w, &valid).unwrap().shape(), &[3, 3, 3]);
    // The backward kernels of an unbatched convolution are unbatched too.
    let d = f64s(&values(3 * 5 * 6, 6), &[3, 5, 6]);
    let gx = Tensor::conv2d_backprop_input(&d, &w, &[2, 5, 6], &same).unwrap();
    assert_eq!(gx.shape(), &[2, 5, 6]);
    let gw = Tensor::conv2d_backprop_filter(&d, &x, &[3, 2, 3, 4], &same).unwrap();
    assert_eq!(gw.shape(), &[3, 2, 3, 4]);
}

#[test]
fn conv2d_of_a_hand_computed_example() {
    // x = arange(16).reshape(1, 1, 4, 4), w = [[1, 0], [0, -1]], stride 2:
    // y[i, j] = x[2i, 2j] - x[2i+1, 2j+1] = -5 everywhere.
    let x = ar(16, DType::F32).reshape(&[1, 1, 4, 4]).unwrap();
    let w = f32s(&[1.0, 0.0, 0.0, -1.0], &[1, 1, 2, 2]);
    let spec = Conv2dSpec {
        stride: [2, 2],
        ..Conv2dSpec::default()
    };
    assert_tensor(
        &Tensor::conv2d(&x, &w, &spec).unwrap(),
        &f32s(&[-5.0; 4], &[1, 1, 2, 2]),
    );
    // The input's gradient puts each sensitivity at the two taps of its window.
    let d = f32s(&[1.0, 2.0, 3.0, 4.0], &[1, 1, 2, 2]);
    assert_tensor(
        &Tensor::conv2d_backprop_input(&d, &w, &[1, 1, 4, 4], &spec).unwrap(),
        &f32s(
            &[
                1.0, 0.0, 2.0, 0.0, //
                0.0, -1.0, 0.0, -2.0, //
                3.0, 0.0, 4.0, 0.0, //
                0.0, -3.0, 0.0, -4.0,
            ],
            &[1, 1, 4, 4],
        ),
    );
    // dW[a, b] = Σ d[i, j] x[2i+a, 2j+b]: 0+4+24+40, 1+6+27+44, 4+12+36+56, 5+14+39+60.
    assert_tensor(
        &Tensor::conv2d_backprop_filter(&d, &x, &[1, 1, 2, 2], &spec).unwrap(),
        &f32s(&[68.0, 78.0, 108.0, 118.0], &[1, 1, 2, 2]),
    );
}

#[test]
fn conv2d_of_empty_tensors() {
    let spec = Conv2dSpec::default();
    let x = Tensor::zeros(&[0, 2, 4, 4], DType::F32).unwrap();
    let w = Tensor::ones(&[3, 2, 3, 3], DType::F32).unwrap();
    let y = Tensor::conv2d(&x, &w, &spec).unwrap();
    assert_eq!(y.shape(), &[0, 3, 2, 2]);
    let gw = Tensor::conv2d_backprop_filter(&y, &x, &[3, 2, 3, 3], &spec).unwrap();
    assert_tensor(&gw, &Tensor::zeros(&[3, 2, 3, 3], DType::F32).unwrap());
    for dtype in [DType::F32, DType::F64] {
        // No input channels: the output is zeros, the filter gradient empty.
        let x = Tensor::ones(&[1, 0, 4, 4], dtype).unwrap();
        let w = Tensor::ones(&[2, 0, 3, 3], dtype).unwrap();
        let y = Tensor::conv2d(&x, &w, &spec).unwrap();
        assert_tensor(&y, &Tensor::zeros(&[1, 2, 2, 2], dtype).unwrap());
        let d = Tensor::ones(&[1, 2, 2, 2], dtype).unwrap();
        let gw = Tensor::conv2d_backprop_filter(&d, &x, &[2, 0, 3, 3], &spec).unwrap();
        assert_eq!(gw.shape(), &[2, 0, 3, 3]);
        // No output channels: an empty output, a zero-sized filter gradient.
        let x = Tensor::ones(&[1, 2, 4, 4], dtype).unwrap();
        let w = Tensor::ones(&[0, 2, 3, 3], dtype).unwrap();
        let y = Tensor::conv2d(&x, &w, &spec).unwrap();
        assert_eq!(y.shape(), &[1, 0, 2, 2]);
        let gw = Tensor::conv2d_backprop_filter(&y, &x, &[0, 2, 3, 3], &spec).unwrap();
        assert_eq!(gw.shape(), &[0, 2, 3, 3]);
    }
}

#[test]
fn conv2d_errors() {
    let spec = Conv2dSpec::default();
    let x = Tensor::ones(&[1, 3, 8, 8], DType::F32).unwrap();
    let w = Tensor::ones(&[4, 4, 3, 3], DType::F32).unwrap();
    assert_err(
        Tensor::conv2d(&x, &w, &spec),
        ErrorKind::Value,
        "conv2d: input has 3 channels but weight expects 4 (groups=1)",
    );
    let w = Tensor::ones(&[4, 1, 3, 3], DType::F32).unwrap();
    assert_err(
        Tensor::conv2d(&x, &w, &Conv2dSpec { groups: 3, ..spec }),
        ErrorKind::Value,
        "conv2d: out_channels (4) must be divisible by groups (3)",
    );
    assert_err(
        Tensor::conv2d(&Tensor::ones(&[3, 8], DType::F32).unwrap(), &w, &spec),
        ErrorKind::Value,
        "conv2d: expected a 4-D input (N, C, H, W) or a 3-D one (C, H, W), got shape (3, 8)",
    );
    assert_err(
        Tensor::conv2d(&x, &Tensor::ones(&[4, 3, 3], DType::F32).unwrap(), &spec),
        ErrorKind::Value,
        "conv2d: expected a 4-D weight (out_channels, in_channels / groups, kH, kW), got shape \
         (4, 3, 3)",
    );
    let w = Tensor::ones(&[2, 3, 5, 5], DType::F32).unwrap();
    let small = Tensor::ones(&[1, 3, 4, 9], DType::F32).unwrap();
    assert_err(
        Tensor::conv2d(&small, &w, &spec),
        ErrorKind::Value,
        "conv2d: the padded input (4, 9) is smaller than the dilated kernel (5, 5)",
    );
    assert_err(
        Tensor::conv2d(
            &x,
            &w,
            &Conv2dSpec {
                dilation: [2, 1],
                ..spec
            },
        ),
        ErrorKind::Value,
        "conv2d: the padded input (8, 8) is smaller than the dilated kernel (9, 5)",
    );
    assert_err(
        Tensor::conv2d(
            &x,
            &w,
            &Conv2dSpec {
                stride: [2, 1],
                padding: Padding2d::Same,
                ..spec
            },
        ),
        ErrorKind::Value,
        "conv2d: padding='same' is not supported for strided convolutions",
    );
    assert_err(
        Tensor::conv2d(
            &x,
            &w,
            &Conv2dSpec {
                stride: [0, 1],
                ..spec
            },
        ),
        ErrorKind::Value,
        "conv2d: stride must be positive, got (0, 1)",
    );
    assert_err(
        Tensor::conv2d(&x, &w, &Conv2dSpec { groups: 0, ..spec }),
        ErrorKind::Value,
        "conv2d: groups must be a positive integer",
    );
    assert_err(
        Tensor::conv2d(&x, &w.cast(DType::F64), &spec),
        ErrorKind::Type,
        "conv2d: the tensors must have one dtype, got float32 and float64",
    );
    assert_err(
        Tensor::conv2d(&x.cast(DType::I64), &w, &spec),
        ErrorKind::Type,
        "conv2d: expected float32 or float64 tensors, got int64",
    );
    // Sizes that overflow are errors, not panics.
    assert_err(
        Tensor::conv2d(
            &x,
            &w,
            &Conv2dSpec {
                padding: Padding2d::Explicit {
                    h: [usize::MAX, 1],
                    w: [0, 0],
                },
                ..spec
            },
        ),
        ErrorKind::Value,
        "conv2d: the padding or the dilation is too large",
    );
    assert_err(
        Tensor::conv2d(
            &x,
            &w,
            &Conv2dSpec {
                dilation: [1, usize::MAX / 2],
                ..spec
            },
        ),
        ErrorKind::Value,
        "conv2d: the padding or the dilation is too large",
    );
    // The backward kernels check the sensitivity's shape.
    let d = Tensor::ones(&[1, 2, 3, 3], DType::F32).unwrap();
    assert_err(
        Tensor::conv2d_backprop_input(&d, &w, &[1, 3, 8, 8], &spec),
        ErrorKind::Value,
        "conv2d_backprop_input: the sensitivity has shape (1, 2, 3, 3), expected (1, 2, 4, 4)",
    );
}

/// Timings of the LeNet-sized convolutions (not an assertion): run with
/// `cargo test -p anfora-tensor --release --lib -- --ignored lenet_timings --nocapture`.
#[test]
#[ignore]
fn lenet_timings() {
    let spec = Conv2dSpec::default();
    for (xs, ws) in [
        ([64, 1, 28, 28], [6, 1, 5, 5]),
        ([64, 6, 12, 12], [16, 6, 5, 5]),
    ] {
        let x = f64s(&values(xs.iter().product(), 1), &xs).cast(DType::F32);
        let w = f64s(&values(ws.iter().product(), 2), &ws).cast(DType::F32);
        let y = Tensor::conv2d(&x, &w, &spec).unwrap();
        let time = |f: &dyn Fn()| {
            f();
            let runs = 50;
            let t = std::time::Instant::now();
            for _ in 0..runs {
                f();
            }
            t.elapsed().as_secs_f64() * 1e3 / runs as f64
        };
        let fwd = time(&|| {
            Tensor::conv2d(&x, &w, &spec).unwrap();
        });
        let bin = time(&|| {
            Tensor::conv2d_backprop_input(&y, &w, &xs, &spec).unwrap();
        });
        let bfi = time(&|| {
            Tensor::conv2d_backprop_filter(&y, &x, &ws, &spec).unwrap();
        });
        println!(
            "conv2d x{xs:?} w{ws:?}: forward {fwd:.3} ms, input grad {bin:.3} ms, weight grad {bfi:.3} ms"
        );
        // The 2×2 pooling that follows the convolution in LeNet.
        let pool = Pool2dSpec {
            kernel: [2, 2],
            stride: [2, 2],
            padding: [0, 0],
        };
        let p = Tensor::max_pool2d(&y, &pool).unwrap();
        let mfwd = time(&|| {
            Tensor::max_pool2d(&y, &pool).unwrap();
        });
        let mbwd = time(&|| {
            Tensor::max_pool2d_grad(&p, &y, &pool).unwrap();
        });
        let afwd = time(&|| {
            Tensor::avg_pool2d(&y, &pool).unwrap();
        });
        let abwd = time(&|| {
            Tensor::avg_pool2d_grad(&p, y.shape(), &pool).unwrap();
        });
        println!(
            "pool 2x2 of {:?}: max {mfwd:.3} ms, max grad {mbwd:.3} ms, avg {afwd:.3} ms, avg grad {abwd:.3} ms",
            y.shape()
        );
    }
}

// ---- pooling ----------------------------------------------------------------------------------

use crate::Pool2dSpec;

/// Direct loops: for every window of every plane, its valid input positions (row-major).
fn windows(
    shape: [usize; 4],
    spec: &Pool2dSpec,
    mut f: impl FnMut(usize, usize, &[usize]),
) -> [usize; 4] {
    let [n, c, h, w] = shape;
    let [kh, kw] = spec.kernel;
    let [sh, sw] = spec.stride;
    let [ph, pw] = spec.padding;
    let oh = (h + 2 * ph - kh) / sh + 1;
    let ow = (w + 2 * pw - kw) / sw + 1;
    for plane in 0..n * c {
        for oy in 0..oh {
            for ox in 0..ow {
                let mut at = Vec::new();
                for ki in 0..kh {
                    for kj in 0..kw {
                        let iy = (oy * sh + ki) as isize - ph as isize;
                        let ix = (ox * sw + kj) as isize - pw as isize;
                        if iy >= 0 && ix >= 0 && (iy as usize) < h && (ix as usize) < w {
                            at.push(plane * h * w + iy as usize * w + ix as usize);
                        }
                    }
                }
                f(plane, (plane * oh + oy) * ow + ox, &at);
            }
        }
    }
    [n, c, oh, ow]
}

fn check_pools(shape: [usize; 4], spec: Pool2dSpec, xv: &[f64]) {
    let x = f64s(xv, &shape);
    // Max: the first largest; its gradient goes there; the gradient's adjoint reads there.
    let mut y = Vec::new();
    let mut firsts = Vec::new();
    let out = windows(shape, &spec, |_, _, at| {
        let mut best = at[0];
        for &i in at {
            if xv[i] > xv[best] {
                best = i;
            }
        }
        y.push(xv[best]);
        firsts.push(best);
    });
    let d = values(y.len(), 7);
    let mut dx = vec![0.0; xv.len()];
    for (k, &i) in firsts.iter().enumerate() {
        dx[i] += d[k];
    }
    let dd = values(xv.len(), 8);
    let gg: Vec<f64> = firsts.iter().map(|&i| dd[i]).collect();
    let got = Tensor::max_pool2d(&x, &spec).unwrap();
    assert_eq!(got.shape(), &out);
    assert_eq!(got.to_f64_vec(), y, "{shape:?} {spec:?}");
    let dt = f64s(&d, &out);
    assert_eq!(
        Tensor::max_pool2d_grad(&dt, &x, &spec)
            .unwrap()
            .to_f64_vec(),
        dx
    );
    assert_eq!(
        Tensor::max_pool2d_grad_grad(&f64s(&dd, &shape), &x, &spec)
            .unwrap()
            .to_f64_vec(),
        gg
    );
    // Average: the padding counts, so every window divides by the kernel's size.
    let area = (spec.kernel[0] * spec.kernel[1]) as f64;
    let mut avg = Vec::new();
    let mut dxa = vec![0.0; xv.len()];
    windows(shape, &spec, |_, k, at| {
        avg.push(at.iter().map(|&i| xv[i]).sum::<f64>() / area);
        for &i in at {
            dxa[i] += d[k] / area;
        }
    });
    assert_close(
        &Tensor::avg_pool2d(&x, &spec).unwrap().to_f64_vec(),
        &avg,
        1e-15,
    );
    assert_close(
        &Tensor::avg_pool2d_grad(&dt, &shape, &spec)
            .unwrap()
            .to_f64_vec(),
        &dxa,
        1e-15,
    );
    // float32 keeps its dtype.
    let y32 = Tensor::max_pool2d(&x.cast(DType::F32), &spec).unwrap();
    assert_eq!(y32.dtype(), DType::F32);
    assert_close(&y32.to_f64_vec(), &y, 1e-7);
}

#[test]
fn pools_match_direct_loops() {
    let spec = |k: [usize; 2], s: [usize; 2], p: [usize; 2]| Pool2dSpec {
        kernel: k,
        stride: s,
        padding: p,
    };
    for (i, (shape, sp)) in [
        ([2, 3, 6, 6], spec([2, 2], [2, 2], [0, 0])),
        ([1, 2, 7, 5], spec([3, 2], [2, 1], [1, 1])),
        ([2, 1, 5, 8], spec([3, 3], [1, 3], [1, 0])),
        ([1, 1, 4, 4], spec([1, 1], [2, 2], [0, 0])),
        // Overlapping windows, so gradients add up; large enough for threads.
        ([4, 8, 32, 30], spec([3, 3], [2, 2], [1, 1])),
        ([3, 5, 40, 40], spec([4, 2], [3, 2], [2, 1])),
        // 2×2 windows with stride 2 (their own loop): odd sizes leave a row and a column out;
        // the last is large enough for threads.
        ([2, 3, 7, 9], spec([2, 2], [2, 2], [0, 0])),
        ([1, 2, 2, 2], spec([2, 2], [2, 2], [0, 0])),
        ([8, 16, 24, 24], spec([2, 2], [2, 2], [0, 0])),
        // Groups of planes over threads, with and without padding.
        ([16, 32, 24, 24], spec([2, 2], [2, 2], [0, 0])),
        ([8, 16, 32, 32], spec([3, 3], [1, 1], [1, 1])),
        ([2, 2, 6, 6], spec([2, 2], [2, 2], [1, 1])),
    ]
    .into_iter()
    .enumerate()
    {
        check_pools(shape, sp, &values(shape.iter().product(), i as u64));
    }
    // Ties: the first of equal maxima gets the gradient.
    let x = [1.0, 3.0, 3.0, 0.0, 3.0, 2.0, 1.0, 3.0, 0.0];
    check_pools([1, 1, 3, 3], spec([2, 2], [1, 1], [0, 0]), &x);
    // ReLU-like input, many ties at zero, in 2×2 windows.
    let relu: Vec<f64> = values(4 * 8 * 8, 3)
        .iter()
        .map(|v| v.max(0.0).round())
        .collect();
    check_pools([2, 2, 8, 8], spec([2, 2], [2, 2], [0, 0]), &relu);
    assert_tensor(
        &Tensor::max_pool2d_grad(
            &f64s(&[1.0; 4], &[1, 1, 2, 2]),
            &f64s(&x, &[1, 1, 3, 3]),
            &spec([2, 2], [1, 1], [0, 0]),
        )
        .unwrap(),
        &f64s(
            &[0.0, 2.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0],
            &[1, 1, 3, 3],
        ),
    );
}

/// A NaN in a window is its maximum, the first NaN when there are several (numpy's and
/// PyTorch's propagation), and it gets the gradient; in every loop of the pooling kernels.
#[test]
fn pools_propagate_the_first_nan() {
    let (a, b) = (
        f64::from_bits(0x7ff8_0000_0000_0001),
        f64::from_bits(0x7ff8_0000_0000_0002),
    );
    // One 2×2 window per layout: NaNs at positions 1 and 2, or only at 3, or none.
    let x = [1.0, a, b, 5.0, 1.0, 2.0, 3.0, a, 4.0, 9.0, -1.0, 9.0];
    for (spec, shape) in [
        (
            Pool2dSpec {
                kernel: [2, 2],
                stride: [2, 2],
                padding: [0, 0],
            },
            [3, 1, 2, 2],
        ),
        (
            Pool2dSpec {
                kernel: [2, 2],
                stride: [1, 1],
                padding: [0, 0],
            },
            [3, 1, 2, 2],
        ),
    ] {
        let t = f64s(&x, &shape);
        let y = Tensor::max_pool2d(&t, &spec).unwrap().to_f64_vec();
        assert_eq!(y[0].to_bits(), a.to_bits(), "{spec:?}");
        assert_eq!(y[1].to_bits(), a.to_bits(), "{spec:?}");
        assert_eq!(y[2], 9.0);
        let d = f64s(&[10.0, 20.0, 30.0], &[3, 1, 1, 1]);
        let dx = Tensor::max_pool2d_grad(&d, &t, &spec).unwrap().to_f64_vec();
        let want = [
            0.0, 10.0, 0.0, 0.0, 0.0, 0.0, 0.0, 20.0, 0.0, 30.0, 0.0, 0.0,
        ];
        assert_eq!(dx, want, "{spec:?}");
        let y32 = Tensor::max_pool2d(&t.cast(DType::F32), &spec)
            .unwrap()
            .to_f64_vec();
        assert!(y32[0].is_nan() && y32[1].is_nan() && y32[2] == 9.0);
    }
}

#[test]
fn pools_of_a_hand_computed_example() {
    // x = arange(16).reshape(4, 4) (unbatched, one channel), 2×2 windows:
    // stride 2: maxima 5 7 13 15, means 2.5 4.5 10.5 12.5.
    let x = ar(16, DType::F32).reshape(&[1, 4, 4]).unwrap();
    let k2 = Pool2dSpec {
        kernel: [2, 2],
        stride: [2, 2],
        padding: [0, 0],
    };
    assert_tensor(
        &Tensor::max_pool2d(&x, &k2).unwrap(),
        &f32s(&[5.0, 7.0, 13.0, 15.0], &[1, 2, 2]),
    );
    assert_tensor(
        &Tensor::avg_pool2d(&x, &k2).unwrap(),
        &f32s(&[2.5, 4.5, 10.5, 12.5], &[1, 2, 2]),
    );
    // Padding 1 with 2×2 windows and stride 2: windows start at -1, so the corners read
    // one element and the zeros count in the mean (PyTorch's count_include_pad=True).
    let p1 = Pool2dSpec {
        padding: [1, 1],
        ..k2
    };
    assert_tensor(
        &Tensor::max_pool2d(&x, &p1).unwrap(),
        &f32s(
            &[0.0, 2.0, 3.0, 8.0, 10.0, 11.0, 12.0, 14.0, 15.0],
            &[1, 3, 3],
        ),
    );
    assert_tensor(
        &Tensor::avg_pool2d(&x, &p1).unwrap(),
        &f32s(
            &[0.0, 0.75, 0.75, 3.0, 7.5, 4.5, 3.0, 6.75, 3.75],
            &[1, 3, 3],
        ),
    );
    // Negative values are not beaten by the -inf padding.
    let neg = Tensor::binary_scalar(BinaryOp::Sub, &x, Scalar::Int(100), false).unwrap();
    assert_tensor(
        &Tensor::max_pool2d(&neg, &p1).unwrap(),
        &f32s(
            &[
                -100.0, -98.0, -97.0, -92.0, -90.0, -89.0, -88.0, -86.0, -85.0,
            ],
            &[1, 3, 3],
        ),
    );
}

#[test]
fn pool_errors() {
    let x = Tensor::ones(&[1, 2, 4, 4], DType::F32).unwrap();
    let spec = |k: [usize; 2], s: [usize; 2], p: [usize; 2]| Pool2dSpec {
        kernel: k,
        stride: s,
        padding: p,
    };
    assert_err(
        Tensor::max_pool2d(&x, &spec([3, 3], [1, 1], [2, 1])),
        ErrorKind::Value,
        "max_pool2d: padding (2, 1) must be at most half of the kernel size (3, 3)",
    );
    assert_err(
        Tensor::avg_pool2d(&x, &spec([5, 2], [1, 1], [0, 0])),
        ErrorKind::Value,
        "avg_pool2d: the padded input (4, 4) is smaller than the kernel (5, 2)",
    );
    assert_err(
        Tensor::avg_pool2d(&x, &spec([2, 2], [0, 1], [0, 0])),
        ErrorKind::Value,
        "avg_pool2d: stride must be positive, got (0, 1)",
    );
    assert_err(
        Tensor::max_pool2d(
            &Tensor::ones(&[4, 4], DType::F32).unwrap(),
            &spec([2, 2], [2, 2], [0, 0]),
        ),
        ErrorKind::Value,
        "max_pool2d: expected a 4-D input (N, C, H, W) or a 3-D one (C, H, W), got shape (4, 4)",
    );
    assert_err(
        Tensor::max_pool2d(&x.cast(DType::I32), &spec([2, 2], [2, 2], [0, 0])),
        ErrorKind::Type,
        "max_pool2d: expected float32 or float64 tensors, got int32",
    );
    assert_err(
        Tensor::max_pool2d(&x, &spec([usize::MAX, 2], [1, 1], [usize::MAX / 2, 0])),
        ErrorKind::Value,
        &format!(
            "max_pool2d: the padded input ({}, 4) is smaller than the kernel ({}, 2)",
            usize::MAX,
            usize::MAX
        ),
    );
    // Empty batches pool to empty results.
    let e = Tensor::zeros(&[0, 2, 4, 4], DType::F64).unwrap();
    assert_eq!(
        Tensor::max_pool2d(&e, &spec([2, 2], [2, 2], [0, 0]))
            .unwrap()
            .shape(),
        &[0, 2, 2, 2]
    );
}

// ---- softmax family ---------------------------------------------------------------------------

/// Direct loops over `axis` of a (outer, n, inner) view: softmax, log_softmax, logsumexp.
fn softmax_loops(x: &[f64], shape: &[usize], axis: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let (mut s, mut l, mut lse) = (vec![0.0; x.len()], vec![0.0; x.len()], Vec::new());
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * n + k) * inner + i;
            let m = (0..n).map(|k| x[at(k)]).fold(f64::NEG_INFINITY, f64::max);
            let total: f64 = (0..n).map(|k| (x[at(k)] - m).exp()).sum();
            for k in 0..n {
                s[at(k)] = (x[at(k)] - m).exp() / total;
                l[at(k)] = x[at(k)] - m - total.ln();
            }
            lse.push(m + total.ln());
        }
    }
    (s, l, lse)
}

#[test]
fn softmax_family_matches_direct_loops() {
    let shape = [3, 4, 5];
    // Large values: without subtracting the maximum, exp would overflow.
    let xv: Vec<f64> = values(60, 9).iter().map(|v| v * 800.0).collect();
    let x = f64s(&xv, &shape);
    for axis in 0..3 {
        let (s, l, lse) = softmax_loops(&xv, &shape, axis);
        for a in [axis as i64, axis as i64 - 3] {
            assert_close(&Tensor::softmax(&x, a).unwrap().to_f64_vec(), &s, 1e-12);
            assert_close(&Tensor::log_softmax(&x, a).unwrap().to_f64_vec(), &l, 1e-12);
            let got = Tensor::logsumexp(&x, Some(&[a]), false).unwrap();
            let mut out_shape = shape.to_vec();
            out_shape.remove(axis);
            assert_eq!(got.shape(), out_shape.as_slice());
            assert_close(&got.to_f64_vec(), &lse, 1e-12);
            let kept = Tensor::logsumexp(&x, Some(&[a]), true).unwrap();
            out_shape.insert(axis, 1);
            assert_eq!(kept.shape(), out_shape.as_slice());
        }
    }
    assert!(
        Tensor::softmax(&x, 1)
            .unwrap()
            .to_f64_vec()
            .iter()
            .all(|v| v.is_finite())
    );
    // Over every axis, and over two.
    let all = Tensor::logsumexp(&x, None, false).unwrap();
    assert_eq!(all.shape(), &[] as &[usize]);
    let m = xv.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let want = m + xv.iter().map(|v| (v - m).exp()).sum::<f64>().ln();
    assert_close(&all.to_f64_vec(), &[want], 1e-12);
    let two = Tensor::logsumexp(&x, Some(&[0, 2]), false).unwrap();
    assert_eq!(two.shape(), &[4]);
    let flat = Tensor::logsumexp(
        &x.transpose(Some(&[1, 0, 2]))
            .unwrap()
            .reshape(&[4, 15])
            .unwrap(),
        Some(&[1]),
        false,
    )
    .unwrap();
    assert_close(&two.to_f64_vec(), &flat.to_f64_vec(), 1e-12);
}

#[test]
fn softmax_family_hand_computed_and_edge_cases() {
    // softmax([0, ln 3]) = [1/4, 3/4]; logsumexp = ln 4.
    let x = f32s(&[0.0, 3f32.ln()], &[2]);
    assert_close(
        &Tensor::softmax(&x, -1).unwrap().to_f64_vec(),
        &[0.25, 0.75],
        1e-6,
    );
    assert_eq!(Tensor::softmax(&x, 0).unwrap().dtype(), DType::F32);
    assert_close(
        &Tensor::logsumexp(&x, None, false).unwrap().to_f64_vec(),
        &[4f64.ln()],
        1e-6,
    );
    // Infinite maxima (scipy's logsumexp): all -inf gives -inf, an inf gives inf.
    let inf = f64s(&[-INF, -INF, 1.0, INF], &[2, 2]);
    assert_tensor(
        &Tensor::logsumexp(&inf, Some(&[1]), false).unwrap(),
        &f64s(&[-INF, INF], &[2]),
    );
    // Empty reductions: logsumexp is -inf, softmax of nothing is nothing.
    let e = Tensor::zeros(&[2, 0], DType::F64).unwrap();
    assert_tensor(
        &Tensor::logsumexp(&e, Some(&[1]), false).unwrap(),
        &f64s(&[-INF, -INF], &[2]),
    );
    assert_eq!(Tensor::softmax(&e, 1).unwrap().shape(), &[2, 0]);
    assert_err(
        Tensor::softmax(&x, 1),
        ErrorKind::Value,
        "softmax: axis 1 is out of bounds for array of dimension 1",
    );
    assert_err(
        Tensor::logsumexp(&x, Some(&[-2]), false),
        ErrorKind::Value,
        "logsumexp: axis -2 is out of bounds for array of dimension 1",
    );
    assert_err(
        Tensor::log_softmax(&i64s(&[1, 2], &[2]), 0),
        ErrorKind::Type,
        "log_softmax: expected float32 or float64 tensors, got int64",
    );
}

// ---- activation and special functions -------------------------------------------------------------

/// Expected values from CPython's `math` module (erf, log1p, expm1, exp) evaluated on the
/// definitions.
#[test]
fn activation_functions_match_their_definitions() {
    let xs = [-3.0, -1.0, -1e-10, 0.0, 0.5, 1.0, 2.5];
    let x = f64s(&xs, &[7]);
    let cases: [(UnaryOp, [f64; 7]); 6] = [
        (
            UnaryOp::Erf,
            [
                -0.9999779095030014,
                -0.8427007929497149,
                -1.1283791670955126e-10,
                0.0,
                0.5204998778130465,
                0.8427007929497149,
                0.999593047982555,
            ],
        ),
        (
            UnaryOp::Gelu,
            [
                -0.00404969409489031,
                -0.15865525393145707,
                -4.9999999996010574e-11,
                0.0,
                0.34573123063700656,
                0.8413447460685429,
                2.4844758366855597,
            ],
        ),
        (
            UnaryOp::GeluTanh,
            [
                -0.0036373920817729943,
                -0.15880800939172324,
                -4.9999999996010574e-11,
                0.0,
                0.34571400982514394,
                0.8411919906082768,
                2.484915733910001,
            ],
        ),
        (
            UnaryOp::Expm1,
            [
                -0.950212931632136,
                -0.6321205588285577,
                -9.999999999500001e-11,
                0.0,
                0.6487212707001282,
                1.718281828459045,
                11.182493960703473,
            ],
        ),
        (
            UnaryOp::Silu,
            [
                -0.14227761953270035,
                -0.2689414213699951,
                -4.9999999997500004e-11,
                0.0,
                0.3112296656009273,
                0.7310585786300049,
                2.3103545499468914,
            ],
        ),
        (
            UnaryOp::Softplus,
            [
                0.04858735157374206,
                0.31326168751822286,
                0.6931471805099453,
                0.6931471805599453,
                0.9740769841801067,
                1.3132616875182228,
                2.5788897342925496,
            ],
        ),
    ];
    for (op, want) in cases {
        let got = Tensor::unary(op, &x).unwrap();
        assert_eq!(got.dtype(), DType::F64);
        // Relative to the value: tiny inputs keep their precision.
        for (g, w) in got.to_f64_vec().iter().zip(want) {
            assert!(
                (g - w).abs() <= 4e-16 * w.abs().max(1e-300),
                "{op:?}: {g} vs {w}"
            );
        }
        let got32 = Tensor::unary(op, &x.cast(DType::F32)).unwrap();
        assert_eq!(got32.dtype(), DType::F32);
        for (g, w) in got32.to_f64_vec().iter().zip(want) {
            // (GELU's tanh form cancels for negative inputs: an absolute error of float32's
            // tanh remains.)
            assert!(
                (g - w).abs() <= 4e-7 * w.abs() + 2e-7,
                "{op:?} f32: {g} vs {w}"
            );
        }
    }
    let pos = f64s(&[1e-10, 0.5, 1.0, 2.5], &[4]);
    assert_close(
        &Tensor::unary(UnaryOp::Log1p, &pos).unwrap().to_f64_vec(),
        &[
            9.9999999995e-11,
            0.4054651081081644,
            0.6931471805599453,
            1.252762968495368,
        ],
        1e-16,
    );
    assert_close(
        &Tensor::unary(UnaryOp::Rsqrt, &f64s(&[4.0, 0.25], &[2]))
            .unwrap()
            .to_f64_vec(),
        &[0.5, 2.0],
        0.0,
    );
    // Softplus does not overflow, nor lose small values.
    let sp = Tensor::unary(UnaryOp::Softplus, &f64s(&[100.0, -100.0, 1000.0], &[3]))
        .unwrap()
        .to_f64_vec();
    assert_eq!((sp[0], sp[2]), (100.0, 1000.0));
    assert!(
        (sp[1] - 3.720075976020836e-44).abs() <= 1e-15 * 3.72e-44,
        "{}",
        sp[1]
    );
    // Integers compute in float64, as numpy's float functions.
    assert_tensor(
        &Tensor::unary(UnaryOp::Rsqrt, &i64s(&[4, 1], &[2])).unwrap(),
        &f64s(&[0.5, 1.0], &[2]),
    );
    // A NaN stays NaN everywhere.
    for op in [
        UnaryOp::Log1p,
        UnaryOp::Expm1,
        UnaryOp::Erf,
        UnaryOp::Gelu,
        UnaryOp::GeluTanh,
        UnaryOp::Silu,
        UnaryOp::Softplus,
        UnaryOp::Rsqrt,
        UnaryOp::Sign,
    ] {
        assert!(
            Tensor::unary(op, &f32s(&[NAN32], &[1]))
                .unwrap()
                .to_f64_vec()[0]
                .is_nan(),
            "{op:?}"
        );
    }
}

#[test]
fn sign_follows_numpy() {
    assert_tensor(
        &Tensor::unary(UnaryOp::Sign, &f64s(&[-2.5, 0.0, -0.0, 3.0, NAN], &[5])).unwrap(),
        &f64s(&[-1.0, 0.0, 0.0, 1.0, NAN], &[5]),
    );
    assert_tensor(
        &Tensor::unary(UnaryOp::Sign, &i64s(&[-3, 0, 5], &[3])).unwrap(),
        &i64s(&[-1, 0, 1], &[3]),
    );
    assert_tensor(
        &Tensor::unary(UnaryOp::Sign, &i32s(&[-3, 7], &[2])).unwrap(),
        &i32s(&[-1, 1], &[2]),
    );
    assert_err(
        Tensor::unary(UnaryOp::Sign, &bools(&[true], &[1])),
        ErrorKind::Type,
        "ufunc 'sign' did not contain a loop with signature matching types <class \
         'numpy.dtypes.BoolDType'> -> None",
    );
}
