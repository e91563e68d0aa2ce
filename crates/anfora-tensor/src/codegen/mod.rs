//! Generated machine code for fused float32 elementwise programs.
//!
//! The chunked evaluation of [`crate::fused`] runs one vector loop per op, so every intermediate
//! goes through a store and a load. For float32 programs whose inputs are read in place or are
//! one element, this module writes the whole program as one loop instead: each vector of 16
//! elements is loaded once, every op (the elementary functions expanded into their IEEE
//! operations) is evaluated in registers, and the result is stored once.
//!
//! Pipeline: [`VectorCode`] is a straight-line program over 16-lane vectors of 32-bit values, built
//! by the fused kernel's lowering with the methods below. The elementary functions expand into
//! the operations of their scalar versions in `math.rs` (same constants, same fused
//! multiply-adds, same order), except where one AVX-512 instruction gives the same value as
//! several scalar steps: `vscalefps` for a product by 2^n rounded once, `vpternlogd` for
//! copysign, and steps scaled by an exact power of two so that a factor folds into a constant.
//! So the generated code's results are bitwise those of the chunked kernels (tested on every
//! float32 input). [`Kernel::compile`] allocates registers and encodes the loop for AVX-512
//! (`x86`).
//!
//! Available on x86-64 Linux with AVX-512F; the environment variable `ANFORA_JIT=0` turns it off
//! (the chunked kernels then run, with the same results).

use std::sync::OnceLock;

use crate::math::{
    EXP_P32, LN2_HI32, LN2_LO32, LOG2E32, MAGIC32, RECIP_1P_SIGMOID32, RECIP_1P_TANH32, TANH_P32,
    TANH_SMALL,
};

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod x86;

#[cfg(test)]
mod tests;

/// The most input streams a program may read (the general registers that hold them).
pub(crate) const MAX_STREAMS: usize = 5;

/// A value of a [`VectorCode`]: the index of the op that computes it.
pub(crate) type V = u32;

/// The comparisons of [`Op::Select`], as `vcmpps` predicates (quiet: NaN raises nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Cmp {
    /// `x < y` (false when either is NaN).
    Lt,
    /// `x >= y` (false when either is NaN).
    Ge,
    /// `x > y` (false when either is NaN).
    Gt,
    /// Either is NaN.
    Unord,
    /// `!(x <= y)`: `x > y` or either is NaN.
    NotLe,
    /// `x <= y` (false when either is NaN).
    Le,
    /// `x == y` (false when either is NaN).
    Eq,
    /// `x != y` (true when either is NaN).
    Ne,
}

/// Two-operand ops. Float ops round as IEEE float32; `Max`/`Min` are the hardware's
/// (`x > y ? x : y` and `x < y ? x : y`, so the second operand on NaN or equal values); the
/// bitwise ones act on the 32-bit patterns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
    And,
    Or,
    Xor,
    /// `a * 2^floor(b)`, rounded once (to a subnormal or infinity where it falls there); NaN
    /// when either is NaN, the first's payload first.
    Scalef,
}

impl Bin {
    fn commutes(self) -> bool {
        matches!(self, Bin::Add | Bin::Mul | Bin::And | Bin::Or | Bin::Xor)
    }
}

/// One op of a [`VectorCode`]; operands are earlier values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Op {
    /// 16 elements of input stream `s`: vector `block` of the iteration (0 unless the loop is
    /// unrolled, see `VectorCode::interleaved`).
    Load {
        stream: u8,
        block: u8,
    },
    /// Slot `k` of the constant pool, in every lane.
    Const(u16),
    Bin(Bin, V, V),
    /// `a * b + c`, rounded once.
    Fma(V, V, V),
    /// `-(a * b) + c`, rounded once.
    Fnma(V, V, V),
    Sqrt(V),
    /// Per bit of the 32-bit patterns: `then`'s where `mask`'s is set, else `otherwise`'s.
    BitSelect {
        mask: V,
        then: V,
        otherwise: V,
    },
    /// Per lane, `then` where `x cmp y` holds, else `otherwise`.
    Select {
        cmp: Cmp,
        x: V,
        y: V,
        then: V,
        otherwise: V,
    },
}

/// A straight-line program over vectors of 16 float32 (or 32-bit integer) lanes, with one
/// output. The constant pool holds fixed constants and `n_params` slots that each call fills
/// (see [`VectorCode::param`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct VectorCode {
    ops: Vec<Op>,
    pool: Vec<u32>,
    /// The pool slots of the parameters, in the order of [`VectorCode::param`] calls.
    params: Vec<u16>,
    out: Option<V>,
    n_streams: u8,
}

impl VectorCode {
    pub(crate) fn new() -> VectorCode {
        VectorCode::default()
    }

    fn push(&mut self, op: Op) -> V {
        self.ops.push(op);
        (self.ops.len() - 1) as V
    }

    /// The next vector of input stream `s` (loaded once however often it is used).
    pub(crate) fn load(&mut self, s: u8) -> V {
        self.n_streams = self.n_streams.max(s + 1);
        let op = Op::Load {
            stream: s,
            block: 0,
        };
        if let Some(i) = self.ops.iter().position(|&o| o == op) {
            return i as V;
        }
        self.push(op)
    }

    /// A fixed 32-bit constant.
    pub(crate) fn bits(&mut self, b: u32) -> V {
        let slot = match self
            .pool
            .iter()
            .enumerate()
            .position(|(k, &p)| p == b && !self.params.contains(&(k as u16)))
        {
            Some(k) => k,
            None => {
                self.pool.push(b);
                self.pool.len() - 1
            }
        };
        self.push(Op::Const(slot as u16))
    }

    pub(crate) fn c(&mut self, x: f32) -> V {
        self.bits(x.to_bits())
    }

    /// A constant whose value each call supplies: the calls' values go, in order, to the
    /// parameters in the order they were created.
    pub(crate) fn param(&mut self) -> V {
        self.pool.push(0);
        let slot = (self.pool.len() - 1) as u16;
        self.params.push(slot);
        self.push(Op::Const(slot))
    }

    pub(crate) fn set_output(&mut self, v: V) {
        self.out = Some(v);
    }

    /// The program for `k` consecutive vectors at once, its copies interleaved op by op (so
    /// that the out-of-order core finds independent work next to each other in the long
    /// dependency chains of the elementary functions), with the copies' results. Constants are
    /// shared.
    pub(crate) fn interleaved(&self, k: u8) -> (Vec<Op>, Vec<V>) {
        let out = self.out.expect("an output");
        let mut ops = Vec::with_capacity(self.ops.len() * usize::from(k));
        // Per copy, the new index of each op.
        let mut map: Vec<Vec<V>> = vec![Vec::with_capacity(self.ops.len()); usize::from(k)];
        for &op in &self.ops {
            if let Op::Const(_) = op {
                ops.push(op);
                for m in &mut map {
                    m.push((ops.len() - 1) as V);
                }
                continue;
            }
            for (j, m) in map.iter_mut().enumerate() {
                let f = |v: V| m[v as usize];
                let new = match op {
                    Op::Load { stream, .. } => Op::Load {
                        stream,
                        block: j as u8,
                    },
                    Op::Const(_) => unreachable!("shared above"),
                    Op::Bin(b, x, y) => Op::Bin(b, f(x), f(y)),
                    Op::Fma(x, y, z) => Op::Fma(f(x), f(y), f(z)),
                    Op::Fnma(x, y, z) => Op::Fnma(f(x), f(y), f(z)),
                    Op::Sqrt(x) => Op::Sqrt(f(x)),
                    Op::BitSelect {
                        mask,
                        then,
                        otherwise,
                    } => Op::BitSelect {
                        mask: f(mask),
                        then: f(then),
                        otherwise: f(otherwise),
                    },
                    Op::Select {
                        cmp,
                        x,
                        y,
                        then,
                        otherwise,
                    } => Op::Select {
                        cmp,
                        x: f(x),
                        y: f(y),
                        then: f(then),
                        otherwise: f(otherwise),
                    },
                };
                ops.push(new);
                m.push((ops.len() - 1) as V);
            }
        }
        let outs = map.iter().map(|m| m[out as usize]).collect();
        (ops, outs)
    }

    pub(crate) fn bin(&mut self, op: Bin, a: V, b: V) -> V {
        self.push(Op::Bin(op, a, b))
    }

    pub(crate) fn add(&mut self, a: V, b: V) -> V {
        self.bin(Bin::Add, a, b)
    }

    pub(crate) fn sub(&mut self, a: V, b: V) -> V {
        self.bin(Bin::Sub, a, b)
    }

    pub(crate) fn mul(&mut self, a: V, b: V) -> V {
        self.bin(Bin::Mul, a, b)
    }

    pub(crate) fn div(&mut self, a: V, b: V) -> V {
        self.bin(Bin::Div, a, b)
    }

    fn fma(&mut self, a: V, b: V, c: V) -> V {
        self.push(Op::Fma(a, b, c))
    }

    pub(crate) fn select(&mut self, cmp: Cmp, x: V, y: V, then: V, otherwise: V) -> V {
        self.push(Op::Select {
            cmp,
            x,
            y,
            then,
            otherwise,
        })
    }

    /// `-x` (the sign bit flipped, NaN included).
    pub(crate) fn neg(&mut self, x: V) -> V {
        let s = self.bits(0x8000_0000);
        self.bin(Bin::Xor, x, s)
    }

    pub(crate) fn abs(&mut self, x: V) -> V {
        let m = self.bits(0x7fff_ffff);
        self.bin(Bin::And, x, m)
    }

    /// numpy's `maximum`: `a` when `a > b` or `a` is NaN, else `b`.
    pub(crate) fn maximum(&mut self, a: V, b: V) -> V {
        let m = self.bin(Bin::Max, a, b);
        self.select(Cmp::Unord, a, a, a, m)
    }

    /// numpy's `minimum`: `a` when `a < b` or `a` is NaN, else `b`.
    pub(crate) fn minimum(&mut self, a: V, b: V) -> V {
        let m = self.bin(Bin::Min, a, b);
        self.select(Cmp::Unord, a, a, a, m)
    }

    /// `maximum(x, 0)`.
    pub(crate) fn relu(&mut self, x: V) -> V {
        let zero = self.c(0.0);
        self.select(Cmp::NotLe, x, zero, x, zero)
    }

    pub(crate) fn sqrt(&mut self, x: V) -> V {
        self.push(Op::Sqrt(x))
    }

    /// `1 / sqrt(x)`.
    pub(crate) fn rsqrt(&mut self, x: V) -> V {
        let s = self.sqrt(x);
        let one = self.c(1.0);
        self.div(one, s)
    }

    /// `if x < lo { lo } else { x }`: one `vmaxps lo, x`, which gives its second operand unless
    /// the first is greater, so NaN stays NaN.
    fn clamp_below(&mut self, x: V, lo: f32) -> V {
        let lo = self.c(lo);
        self.bin(Bin::Max, lo, x)
    }

    /// `math::reduce_ln2` of float32 `x * k` for `k` 1 or -2: `(r, n)` with `x * k = n ln 2 + r`
    /// and `n` an integral float. For `k = -2` this is `r / -2` (every step scales exactly), so
    /// the caller's polynomial in `r` takes coefficients scaled by powers of -2.
    fn reduce_ln2(&mut self, x: V, k: f32) -> (V, V) {
        let (log2e, magic) = (self.c(LOG2E32 * k), self.c(MAGIC32));
        let t = self.fma(x, log2e, magic);
        let n = self.sub(t, magic);
        let hi = self.c(-LN2_HI32 / k);
        let r = self.fma(n, hi, x);
        let lo = self.c(-LN2_LO32 / k);
        let r = self.fma(n, lo, r);
        (r, n)
    }

    /// `math::exp_poly32` at `r * k` (`k` as in `reduce_ln2`): Horner's scheme in `r` with the
    /// coefficient of degree `d` times `k^d`, which gives every step's value exactly (powers of
    /// two scale without rounding).
    fn exp_poly(&mut self, r: V, k: f32) -> V {
        let coefs = EXP_P32;
        let (&top, rest) = coefs.split_last().expect("a polynomial");
        let mut scale = k.powi(rest.len() as i32);
        let mut p = self.c(top * scale);
        for &c in rest.iter().rev() {
            scale /= k;
            let c = self.c(c * scale);
            p = self.fma(p, r, c);
        }
        p
    }

    /// `math::exp_f32`.
    pub(crate) fn exp(&mut self, x: V) -> V {
        let x = self.clamp_below(x, -104.0);
        // if x > 89 { 89 } else { x }, as in clamp_below.
        let hi = self.c(89.0);
        let x = self.bin(Bin::Min, hi, x);
        let (r, n) = self.reduce_ln2(x, 1.0);
        let e = self.exp_poly(r, 1.0);
        // e 2^n rounded once: what the scalar version's two factors give.
        self.bin(Bin::Scalef, e, n)
    }

    /// `math::tanh_f32`.
    pub(crate) fn tanh(&mut self, x: V) -> V {
        let a = self.abs(x);
        let z = self.mul(a, a);
        let c: Vec<V> = TANH_P32.iter().map(|&c| self.c(c)).collect();
        let p = self.fma(z, c[4], c[3]);
        let p = self.fma(p, z, c[2]);
        let p = self.fma(p, z, c[1]);
        let p = self.fma(p, z, c[0]);
        let az = self.mul(a, z);
        let small = self.fma(az, p, a);
        // -2a < -80 exactly where a > 40 (as in clamp_below, NaN stays).
        let lim = self.c(40.0);
        let a40 = self.bin(Bin::Min, lim, a);
        let (r, n) = self.reduce_ln2(a40, -2.0);
        let p = self.exp_poly(r, -2.0);
        // e is normal, so scaling it is exact, as the scalar version's sum of bits.
        let e = self.bin(Bin::Scalef, p, n);
        // 2e / (1 + e) as twice e / (1 + e): every step of the quotient scales exactly.
        let q = self.quotient_1p(e, e, &RECIP_1P_TANH32);
        let (m2, one) = (self.c(-2.0), self.c(1.0));
        let large = self.fma(q, m2, one);
        let lim = self.c(TANH_SMALL);
        let t = self.select(Cmp::Ge, a, lim, large, small);
        // copysign(t, x).
        let sign = self.bits(0x8000_0000);
        self.push(Op::BitSelect {
            mask: sign,
            then: x,
            otherwise: t,
        })
    }

    /// `math::sigmoid_f32`.
    pub(crate) fn sigmoid(&mut self, x: V) -> V {
        // -|x|: the sign bit set.
        let sign = self.bits(0x8000_0000);
        let a = self.bin(Bin::Or, x, sign);
        let a = self.clamp_below(a, -104.0);
        let (r, n) = self.reduce_ln2(a, 1.0);
        let p = self.exp_poly(r, 1.0);
        // p 2^n rounded once (the scalar version's p 2^(n+64) 2^-64).
        let e = self.bin(Bin::Scalef, p, n);
        let (one, zero) = (self.c(1.0), self.c(0.0));
        let num = self.select(Cmp::Ge, x, zero, one, e);
        self.quotient_1p(num, e, &RECIP_1P_SIGMOID32)
    }

    /// `math::quotient_1p32`: `n / (1 + e)` without a division.
    fn quotient_1p(&mut self, n: V, e: V, c: &[f32]) -> V {
        let (&last, rest) = c.split_last().expect("a polynomial");
        let mut r = self.c(last);
        for &k in rest.iter().rev() {
            let k = self.c(k);
            r = self.fma(r, e, k);
        }
        let q0 = self.mul(n, r);
        let t = self.sub(n, q0);
        let res = self.push(Op::Fnma(q0, e, t));
        self.fma(res, r, q0)
    }

    /// `x * sigmoid(x)`. The hardware returns the first operand's NaN when both are NaN; the
    /// compiled scalar version multiplies in this order.
    pub(crate) fn silu(&mut self, x: V) -> V {
        let s = self.sigmoid(x);
        self.mul(s, x)
    }
}

/// Whether generated code may be used: the machine has AVX-512F and `ANFORA_JIT` is not `0`.
pub(crate) fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        let off = std::env::var("ANFORA_JIT").is_ok_and(|v| v.trim() == "0");
        !off && supported()
    })
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn supported() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
fn supported() -> bool {
    false
}

/// A compiled [`VectorCode`]: one function over `n` elements of its streams.
#[derive(Debug)]
pub(crate) struct Kernel {
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    code: x86::Code,
    pool: Vec<u32>,
    params: Vec<u16>,
    n_streams: usize,
}

impl Kernel {
    /// The machine code of `prog`, or `None` when generated code is off or the program does not
    /// fit (more live values than vector registers, more than five streams, no output).
    pub(crate) fn compile(prog: &VectorCode) -> Option<Kernel> {
        if !enabled() {
            return None;
        }
        Self::compile_enabled(prog)
    }

    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    fn compile_enabled(prog: &VectorCode) -> Option<Kernel> {
        Some(Kernel {
            code: x86::Code::compile(prog)?,
            pool: prog.pool.clone(),
            params: prog.params.clone(),
            n_streams: usize::from(prog.n_streams),
        })
    }

    #[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
    fn compile_enabled(_: &VectorCode) -> Option<Kernel> {
        None
    }

    /// The constant pool with the parameters set to `params` (as many as the program has).
    pub(crate) fn pool(&self, params: impl IntoIterator<Item = u32>) -> Vec<u32> {
        let mut pool = self.pool.clone();
        let mut n = 0;
        for (&slot, v) in self.params.iter().zip(params) {
            pool[usize::from(slot)] = v;
            n += 1;
        }
        assert_eq!(n, self.params.len(), "one value per parameter");
        pool
    }

    /// Evaluates the program for elements `0..n`: reads `n` elements from each stream and writes
    /// `n` to `out`.
    ///
    /// # Safety
    /// `pool` comes from [`Kernel::pool`]; `streams` has one pointer per stream the program loads, each
    /// valid for reading `n` float32 values; `out` is valid for writing `n` values. A stream may
    /// be `out` itself (each vector is read before it is written), but must not overlap it
    /// otherwise.
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    pub(crate) unsafe fn run(&self, pool: &[u32], streams: &[*const f32], out: *mut f32, n: usize) {
        debug_assert_eq!(streams.len(), self.n_streams);
        debug_assert_eq!(pool.len(), self.pool.len());
        // SAFETY: the caller's contract is the code's.
        unsafe { self.code.run(pool, streams, out, n) }
    }

    #[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
    pub(crate) unsafe fn run(&self, _: &[u32], _: &[*const f32], _: *mut f32, _: usize) {
        unreachable!("no generated code on this target")
    }
}
