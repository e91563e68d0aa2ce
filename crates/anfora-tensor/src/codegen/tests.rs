//! The generated code against the scalar functions it expands, bit for bit.

use super::*;
use crate::math::{exp_f32, sigmoid_f32, tanh_f32};

/// Inputs that reach every branch of the functions: specials, subnormals, the thresholds of
/// the expansions, and a sweep of bit patterns over the whole float32 range.
fn inputs() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7fc0_1234),
        f32::from_bits(0xffa0_0001),
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
        f32::MAX,
        f32::MIN,
        0.55,
        -0.55,
        0.549_999_95,
        40.0,
        -40.0,
        88.7,
        89.0,
        89.1,
        -103.9,
        -104.0,
        -104.1,
        1.0,
        -1.0,
        3.0,
    ];
    let mut bits: u32 = 0;
    while let Some(next) = bits.checked_add(65_521) {
        v.push(f32::from_bits(bits));
        bits = next;
    }
    v
}

/// Runs `build`'s one-stream program over `x`, for every length's tail handling too.
fn run1(build: impl Fn(&mut VectorCode, V) -> V, x: &[f32]) -> Option<Vec<f32>> {
    let mut p = VectorCode::new();
    let v = p.load(0);
    let r = build(&mut p, v);
    p.set_output(r);
    let k = Kernel::compile(&p)?;
    let pool = k.pool([]);
    let mut out = vec![0.0f32; x.len()];
    // SAFETY: one stream of x.len() elements, an output of as many.
    unsafe { k.run(&pool, &[x.as_ptr()], out.as_mut_ptr(), x.len()) };
    Some(out)
}

/// Whether this machine runs generated code; where it should (AVX-512F, not turned off), the
/// tests insist on it.
fn available() -> bool {
    if !enabled() {
        eprintln!("generated code is off or unsupported here: skipped");
        return false;
    }
    true
}

fn same_bits(got: &[f32], want: impl Fn(f32) -> f32, x: &[f32], what: &str) {
    for (i, (&g, &x)) in got.iter().zip(x).enumerate() {
        let w = want(x);
        assert_eq!(
            g.to_bits(),
            w.to_bits(),
            "{what}({x:e}) at {i}: {g:e} != {w:e}"
        );
    }
}

#[test]
fn elementary_functions_match_their_scalar_versions() {
    if !available() {
        return;
    }
    let x = inputs();
    type Case = (&'static str, fn(&mut VectorCode, V) -> V, fn(f32) -> f32);
    let cases: [Case; 9] = [
        ("tanh", VectorCode::tanh, tanh_f32),
        ("sigmoid", VectorCode::sigmoid, sigmoid_f32),
        ("exp", VectorCode::exp, exp_f32),
        ("silu", VectorCode::silu, |x| x * sigmoid_f32(x)),
        ("neg", VectorCode::neg, |x| -x),
        ("abs", VectorCode::abs, f32::abs),
        ("sqrt", VectorCode::sqrt, f32::sqrt),
        ("rsqrt", VectorCode::rsqrt, |x| 1.0 / x.sqrt()),
        ("relu", VectorCode::relu, |x| {
            if x > 0.0 || x.is_nan() { x } else { 0.0 }
        }),
    ];
    for (name, build, want) in cases {
        let got = run1(build, &x).expect("compiles");
        same_bits(&got, want, &x, name);
    }
}

/// The expanded exp, tanh and sigmoid against their scalar versions on every float32 input
/// (run with `--release --ignored`).
#[test]
#[ignore]
fn elementary_functions_match_their_scalar_versions_everywhere() {
    use rayon::prelude::*;
    if !available() {
        return;
    }
    type Case = (&'static str, fn(&mut VectorCode, V) -> V, fn(f32) -> f32);
    let cases: [Case; 3] = [
        ("tanh", VectorCode::tanh, tanh_f32),
        ("sigmoid", VectorCode::sigmoid, sigmoid_f32),
        ("exp", VectorCode::exp, exp_f32),
    ];
    for (name, build, want) in cases {
        let mut p = VectorCode::new();
        let v = p.load(0);
        let r = build(&mut p, v);
        p.set_output(r);
        let k = Kernel::compile(&p).expect("compiles");
        let pool = k.pool([]);
        (0u32..=0xffff).into_par_iter().for_each(|hi| {
            let x: Vec<f32> = (0..=0xffffu32)
                .map(|lo| f32::from_bits(hi << 16 | lo))
                .collect();
            let mut got = vec![0.0f32; x.len()];
            // SAFETY: one stream of x.len() elements, an output of as many.
            unsafe { k.run(&pool, &[x.as_ptr()], got.as_mut_ptr(), x.len()) };
            same_bits(&got, want, &x, name);
        });
    }
}

#[test]
fn every_length_runs_its_tail_masked() {
    if !available() {
        return;
    }
    let x: Vec<f32> = (0..100).map(|i| i as f32 * 0.37 - 15.0).collect();
    for n in 0..x.len() {
        // A guard after the end: the masked store must not write past n.
        let mut p = VectorCode::new();
        let v = p.load(0);
        let t = p.tanh(v);
        p.set_output(t);
        let k = Kernel::compile(&p).expect("compiles");
        let mut out = vec![-7.0f32; n + 17];
        // SAFETY: n elements read and written; the buffer is longer.
        unsafe { k.run(&k.pool([]), &[x.as_ptr()], out.as_mut_ptr(), n) };
        same_bits(&out[..n], tanh_f32, &x[..n], "tanh");
        assert!(out[n..].iter().all(|&g| g == -7.0), "wrote past {n}");
    }
}

#[test]
fn two_operand_ops_follow_numpy() {
    if !available() {
        return;
    }
    let specials = [
        0.0f32,
        -0.0,
        1.5,
        -2.0,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        3.0,
    ];
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for &x in &specials {
        for &y in &specials {
            a.push(x);
            b.push(y);
        }
    }
    let max = |x: f32, y: f32| if x > y || x.is_nan() { x } else { y };
    let min = |x: f32, y: f32| if x < y || x.is_nan() { x } else { y };
    type Case = (
        &'static str,
        fn(&mut VectorCode, V, V) -> V,
        fn(f32, f32) -> f32,
    );
    let cases: [Case; 6] = [
        ("add", VectorCode::add, |x, y| x + y),
        ("sub", VectorCode::sub, |x, y| x - y),
        ("mul", VectorCode::mul, |x, y| x * y),
        ("div", VectorCode::div, |x, y| x / y),
        ("maximum", VectorCode::maximum, max),
        ("minimum", VectorCode::minimum, min),
    ];
    for (name, build, want) in cases {
        let mut p = VectorCode::new();
        let (x, y) = (p.load(0), p.load(1));
        let r = build(&mut p, x, y);
        p.set_output(r);
        let k = Kernel::compile(&p).expect("compiles");
        let mut out = vec![0.0f32; a.len()];
        // SAFETY: two streams and an output of a.len() elements.
        unsafe {
            k.run(
                &k.pool([]),
                &[a.as_ptr(), b.as_ptr()],
                out.as_mut_ptr(),
                a.len(),
            )
        };
        for i in 0..a.len() {
            let w = want(a[i], b[i]);
            assert_eq!(out[i].to_bits(), w.to_bits(), "{name}({}, {})", a[i], b[i]);
        }
    }
}

#[test]
fn parameters_and_constants_in_every_operand_position() {
    if !available() {
        return;
    }
    // (p - x) / (x * q + 2) with p, q per call; constants on the left of sub and div go
    // through a scratch register, on the right through an embedded broadcast.
    let mut p = VectorCode::new();
    let x = p.load(0);
    let a = p.param();
    let b = p.param();
    let two = p.c(2.0);
    let num = p.sub(a, x);
    let xq = p.mul(b, x);
    let den = p.add(xq, two);
    let r = p.div(num, den);
    let r = p.maximum(two, r);
    p.set_output(r);
    let k = Kernel::compile(&p).expect("compiles");
    let x: Vec<f32> = (0..37).map(|i| i as f32 - 18.0).collect();
    for (pa, pb) in [(1.0f32, 0.5f32), (-3.0, 2.0)] {
        let mut out = vec![0.0f32; x.len()];
        let pool = k.pool([pa.to_bits(), pb.to_bits()]);
        // SAFETY: one stream and an output of x.len() elements.
        unsafe { k.run(&pool, &[x.as_ptr()], out.as_mut_ptr(), x.len()) };
        for (i, &xi) in x.iter().enumerate() {
            let r = (pa - xi) / (pb * xi + 2.0);
            let w = if 2.0 > r { 2.0 } else { r };
            assert_eq!(out[i].to_bits(), w.to_bits(), "x = {xi}");
        }
    }
}

#[test]
fn in_place_and_five_streams() {
    if !available() {
        return;
    }
    let mut p = VectorCode::new();
    let s: Vec<V> = (0..5).map(|i| p.load(i)).collect();
    let mut acc = s[0];
    for &v in &s[1..] {
        acc = p.mul(acc, v);
    }
    let acc = p.add(acc, s[2]);
    p.set_output(acc);
    let k = Kernel::compile(&p).expect("compiles");
    let n = 53;
    let cols: Vec<Vec<f32>> = (0..5)
        .map(|j| {
            (0..n)
                .map(|i| (i * 7 + j * 3) as f32 * 0.25 - 4.0)
                .collect()
        })
        .collect();
    let want: Vec<f32> = (0..n)
        .map(|i| cols[0][i] * cols[1][i] * cols[2][i] * cols[3][i] * cols[4][i] + cols[2][i])
        .collect();
    // The output is stream 0's buffer.
    let mut buf = cols[0].clone();
    let mut ptrs: Vec<*const f32> = cols.iter().map(|c| c.as_ptr()).collect();
    ptrs[0] = buf.as_ptr();
    // SAFETY: stream 0 is the output itself; the others are n elements long.
    unsafe { k.run(&k.pool([]), &ptrs, buf.as_mut_ptr(), n) };
    assert_eq!(buf, want);
}

#[test]
fn refuses_programs_that_do_not_fit() {
    // Six streams: one more than the registers for them.
    let mut p = VectorCode::new();
    let s: Vec<V> = (0..6).map(|i| p.load(i)).collect();
    let mut acc = s[0];
    for &v in &s[1..] {
        acc = p.add(acc, v);
    }
    p.set_output(acc);
    assert!(Kernel::compile(&p).is_none());
    // 40 values live at once: more than the 30 value registers.
    let mut p = VectorCode::new();
    let x = p.load(0);
    let vs: Vec<V> = (0..40)
        .map(|i| {
            let c = p.c(i as f32);
            p.add(x, c)
        })
        .collect();
    let mut acc = vs[0];
    for &v in &vs[1..] {
        acc = p.mul(acc, v);
    }
    p.set_output(acc);
    assert!(Kernel::compile(&p).is_none());
    // No output.
    let mut p = VectorCode::new();
    p.load(0);
    assert!(Kernel::compile(&p).is_none());
}

#[test]
fn unrolled_loops_where_the_registers_allow() {
    if !available() {
        return;
    }
    // `live` values alive at once: 8 fit three interleaved copies, 12 two, 20 only one.
    for live in [8usize, 12, 20] {
        let mut p = VectorCode::new();
        let x = p.load(0);
        let vs: Vec<V> = (0..live)
            .map(|i| {
                let c = p.c(1.0 + i as f32 / 8.0);
                p.mul(x, c)
            })
            .collect();
        let mut acc = vs[0];
        for &v in &vs[1..] {
            acc = p.add(acc, v);
        }
        p.set_output(acc);
        let k = Kernel::compile(&p).expect("compiles");
        let want_unroll = match live {
            8 => 3,
            12 => 2,
            _ => 1,
        };
        assert_eq!(k.code.unroll(), want_unroll, "{live} live values");
        for n in (0..120).chain([1000, 4099]) {
            let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.31 - 7.0).collect();
            let mut out = vec![f32::NAN; n];
            // SAFETY: one stream and an output of n elements.
            unsafe { k.run(&k.pool([]), &[x.as_ptr()], out.as_mut_ptr(), n) };
            for (i, (&g, &xi)) in out.iter().zip(&x).enumerate() {
                let mut w = xi * 1.0;
                for j in 1..live {
                    w += xi * (1.0 + j as f32 / 8.0);
                }
                assert_eq!(g.to_bits(), w.to_bits(), "{live} live, n = {n}, at {i}");
            }
        }
    }
}
