//! AVX-512 code for a [`VectorCode`]: register allocation, instruction encoding and executable
//! memory.
//!
//! The function takes one pointer, to [`Args`] (System V calling convention), and runs
//!
//! ```text
//!     offset = 0
//!     while offset < wide_bytes: k interleaved copies of the body on [stream + offset + 64 j]
//!                                (j < k); offset += 64 k
//!     while offset < full_bytes: body on [stream + offset]; offset += 64
//!     if tail_mask != 0: body with loads and the store masked by tail_mask (k1)
//! ```
//!
//! General registers: `rax` the byte offset, `rcx` `full_bytes`, `rbx` `wide_bytes` (saved and
//! restored: the only callee-saved register used), `rdx` the output, `rsi` the constant pool,
//! `r8`–`r11` and `rdi` the streams. Vector registers: `zmm0`–`zmm29` hold values (linear scan
//! over the straight-line body: a value's register is free after its last use); `zmm30`/`zmm31`
//! receive constants for operand positions that cannot read memory. Constants in the last
//! source position are read from the pool with an embedded broadcast.

use super::{Bin, Cmp, MAX_STREAMS, Op, V, VectorCode};

const RAX: u8 = 0;
const RCX: u8 = 1;
const RDX: u8 = 2;
const RBX: u8 = 3;
const RSI: u8 = 6;
const RDI: u8 = 7;
/// The registers holding stream pointers, by stream.
const STREAM_GPRS: [u8; MAX_STREAMS] = [8, 9, 10, 11, RDI];
const SCRATCH: [u8; 2] = [30, 31];
const N_VALUE_REGS: u32 = 30;
/// The opmask of the tail, and the one comparisons write.
const K_TAIL: u8 = 1;
const K_CMP: u8 = 2;

/// What the generated function receives.
#[repr(C)]
struct Args {
    full_bytes: u64,
    tail_mask: u64,
    pool: *const u32,
    out: *mut f32,
    streams: [*const f32; MAX_STREAMS],
    /// The bytes the main loop covers: whole groups of its vectors.
    wide_bytes: u64,
}

/// An EVEX opcode: map (1 = 0F, 2 = 0F38, 3 = 0F3A), implied prefix (0 none, 1 = 66), byte.
#[derive(Clone, Copy)]
struct Enc {
    map: u8,
    pp: u8,
    op: u8,
}

const fn enc(map: u8, pp: u8, op: u8) -> Enc {
    Enc { map, pp, op }
}

const ADDPS: Enc = enc(1, 0, 0x58);
const MULPS: Enc = enc(1, 0, 0x59);
const SUBPS: Enc = enc(1, 0, 0x5C);
const MINPS: Enc = enc(1, 0, 0x5D);
const DIVPS: Enc = enc(1, 0, 0x5E);
const MAXPS: Enc = enc(1, 0, 0x5F);
const SQRTPS: Enc = enc(1, 0, 0x51);
const MOVAPS: Enc = enc(1, 0, 0x28);
const MOVUPS_LOAD: Enc = enc(1, 0, 0x10);
const MOVUPS_STORE: Enc = enc(1, 0, 0x11);
const CMPPS: Enc = enc(1, 0, 0xC2);
const PANDD: Enc = enc(1, 1, 0xDB);
const PORD: Enc = enc(1, 1, 0xEB);
const PXORD: Enc = enc(1, 1, 0xEF);
const SCALEFPS: Enc = enc(2, 1, 0x2C);
const PTERNLOGD: Enc = enc(3, 1, 0x25);
/// `vpternlogd`'s truth table for `C ? B : A` per bit (A the destination, B `vvvv`, C `rm`).
const BIT_SELECT_CBA: u8 = 0xD8;
const FMADD213PS: Enc = enc(2, 1, 0xA8);
const FNMADD213PS: Enc = enc(2, 1, 0xAC);
const FMADD231PS: Enc = enc(2, 1, 0xB8);
const FNMADD231PS: Enc = enc(2, 1, 0xBC);
const BLENDMPS: Enc = enc(2, 1, 0x65);
const BROADCASTSS: Enc = enc(2, 1, 0x18);

/// A memory operand `[base + index + disp]`; `scale` is the EVEX disp8 factor (the access
/// size: 64 for a vector, 4 for one float).
#[derive(Clone, Copy, Debug)]
struct Mem {
    base: u8,
    index: Option<u8>,
    disp: i32,
    bcst: bool,
    scale: i32,
}

#[derive(Clone, Copy, Debug)]
enum Rm {
    Zmm(u8),
    Mem(Mem),
}

/// A pool slot, broadcast to every lane.
fn pool_bcst(slot: u16) -> Mem {
    Mem {
        base: RSI,
        index: None,
        disp: 4 * i32::from(slot),
        bcst: true,
        scale: 4,
    }
}

#[derive(Default)]
struct Asm {
    b: Vec<u8>,
}

impl Asm {
    fn bytes(&mut self, b: &[u8]) {
        self.b.extend_from_slice(b);
    }

    /// ModRM (and SIB and displacement) for register field `reg` and operand `rm`.
    fn modrm(&mut self, reg: u8, rm: Rm) {
        let reg = (reg & 7) << 3;
        match rm {
            Rm::Zmm(r) => self.b.push(0xC0 | reg | (r & 7)),
            Rm::Mem(m) => {
                debug_assert!(m.base & 7 != 4, "rsp/r12 as a base needs a SIB byte");
                let (mode, disp8, disp32) = if m.disp == 0 && m.base & 7 != 5 {
                    (0u8, None, None)
                } else if m.disp % m.scale == 0 && i8::try_from(m.disp / m.scale).is_ok() {
                    (1, Some((m.disp / m.scale) as i8), None)
                } else {
                    (2, None, Some(m.disp))
                };
                match m.index {
                    None => self.b.push(mode << 6 | reg | (m.base & 7)),
                    Some(i) => {
                        self.b.push(mode << 6 | reg | 4);
                        self.b.push((i & 7) << 3 | (m.base & 7));
                    }
                }
                if let Some(d) = disp8 {
                    self.b.push(d as u8);
                }
                if let Some(d) = disp32 {
                    self.bytes(&d.to_le_bytes());
                }
            }
        }
    }

    /// A 512-bit EVEX instruction (W0): `reg` is the ModRM.reg field (a register or an opcode
    /// extension), `vvvv` the extra source (0 when unused), `k` the opmask, `zero` zero-masking.
    #[allow(clippy::too_many_arguments)]
    fn evex(&mut self, e: Enc, reg: u8, vvvv: u8, rm: Rm, k: u8, zero: bool, imm: Option<u8>) {
        let (x, b, bcst) = match rm {
            Rm::Zmm(r) => ((r >> 4) & 1, (r >> 3) & 1, false),
            Rm::Mem(m) => (
                m.index.map_or(0, |i| (i >> 3) & 1),
                (m.base >> 3) & 1,
                m.bcst,
            ),
        };
        let inv = |bit: u8| (!bit) & 1;
        let p0 =
            inv((reg >> 3) & 1) << 7 | inv(x) << 6 | inv(b) << 5 | inv((reg >> 4) & 1) << 4 | e.map;
        let p1 = ((!vvvv) & 0xF) << 3 | 0x04 | e.pp;
        let p2 = u8::from(zero) << 7
            | 0b10 << 5
            | u8::from(bcst) << 4
            | inv((vvvv >> 4) & 1) << 3
            | (k & 7);
        self.bytes(&[0x62, p0, p1, p2, e.op]);
        self.modrm(reg, rm);
        if let Some(i) = imm {
            self.b.push(i);
        }
    }

    /// `mov r64, [base + disp]`.
    fn mov_load(&mut self, dst: u8, base: u8, disp: i32) {
        self.b
            .push(0x48 | ((dst >> 3) & 1) << 2 | ((base >> 3) & 1));
        self.b.push(0x8B);
        self.modrm(
            dst,
            Rm::Mem(Mem {
                base,
                index: None,
                disp,
                bcst: false,
                scale: 1,
            }),
        );
    }

    /// A 32-bit relative jump (`0F 8x` conditional or `E9`), patched later: returns where the
    /// displacement sits.
    fn jump(&mut self, opcode: &[u8]) -> usize {
        self.bytes(opcode);
        self.bytes(&[0; 4]);
        self.b.len() - 4
    }

    /// Points the jump whose displacement is at `at` to `target`.
    fn patch(&mut self, at: usize, target: usize) {
        let rel = target as i64 - (at as i64 + 4);
        let rel = i32::try_from(rel).expect("code is far below 2 GiB");
        self.b[at..at + 4].copy_from_slice(&rel.to_le_bytes());
    }
}

const JZ: [u8; 2] = [0x0F, 0x84];
const JB: [u8; 2] = [0x0F, 0x82];
const JAE: [u8; 2] = [0x0F, 0x83];

fn cmp_imm(c: Cmp) -> u8 {
    match c {
        Cmp::Lt => 0x11,    // LT_OQ
        Cmp::Ge => 0x1D,    // GE_OQ
        Cmp::Gt => 0x1E,    // GT_OQ
        Cmp::Unord => 0x03, // UNORD_Q
        Cmp::NotLe => 0x16, // NLE_UQ
        Cmp::Le => 0x12,    // LE_OQ
        Cmp::Eq => 0x00,    // EQ_OQ
        Cmp::Ne => 0x04,    // NEQ_UQ
    }
}

fn bin_enc(b: Bin) -> Enc {
    match b {
        Bin::Add => ADDPS,
        Bin::Sub => SUBPS,
        Bin::Mul => MULPS,
        Bin::Div => DIVPS,
        Bin::Max => MAXPS,
        Bin::Min => MINPS,
        Bin::And => PANDD,
        Bin::Or => PORD,
        Bin::Xor => PXORD,
        Bin::Scalef => SCALEFPS,
    }
}

fn operands(op: &Op) -> Vec<V> {
    match *op {
        Op::Load { .. } | Op::Const(_) => vec![],
        Op::Bin(_, a, b) => vec![a, b],
        Op::Fma(a, b, c) | Op::Fnma(a, b, c) => vec![a, b, c],
        Op::Sqrt(a) => vec![a],
        Op::BitSelect {
            mask,
            then,
            otherwise,
        } => vec![mask, then, otherwise],
        Op::Select {
            x,
            y,
            then,
            otherwise,
            ..
        } => vec![x, y, then, otherwise],
    }
}

/// One loop body: ops computing the vectors `outs` (stored at consecutive vectors), and the
/// liveness that register allocation needs.
struct Body {
    ops: Vec<Op>,
    outs: Vec<V>,
    /// Per op: whether an output depends on it.
    live: Vec<bool>,
    /// Per value: the index of the last op (or the stores, `ops.len()`) that reads it.
    last_use: Vec<usize>,
}

impl Body {
    fn new(ops: Vec<Op>, outs: Vec<V>) -> Body {
        let n = ops.len();
        let mut live = vec![false; n];
        for &o in &outs {
            live[o as usize] = true;
        }
        for i in (0..n).rev() {
            if live[i] {
                for a in operands(&ops[i]) {
                    live[a as usize] = true;
                }
            }
        }
        let mut last_use = vec![0; n];
        for (i, op) in ops.iter().enumerate().filter(|(i, _)| live[*i]) {
            for a in operands(op) {
                last_use[a as usize] = i;
            }
        }
        for &o in &outs {
            last_use[o as usize] = n;
        }
        Body {
            ops,
            outs,
            live,
            last_use,
        }
    }

    fn konst(&self, v: V) -> Option<u16> {
        match self.ops[v as usize] {
            Op::Const(slot) => Some(slot),
            _ => None,
        }
    }

    /// Emits one copy of the body; `masked` loads and stores under the tail mask. `None` when
    /// the values do not fit in the registers.
    fn emit(&self, a: &mut Asm, masked: bool) -> Option<()> {
        let n = self.ops.len();
        let mut reg: Vec<u8> = vec![u8::MAX; n];
        let mut free: u32 = (1 << N_VALUE_REGS) - 1;
        let alloc = |free: &mut u32| -> Option<u8> {
            (*free != 0).then(|| {
                let r = free.trailing_zeros() as u8;
                *free &= !(1 << r);
                r
            })
        };
        for (i, op) in self.ops.iter().enumerate() {
            if !self.live[i] || matches!(op, Op::Const(_)) {
                continue;
            }
            // A value's operand as the last source (which may read memory).
            let rm = |v: V| match self.konst(v) {
                Some(slot) => Rm::Mem(pool_bcst(slot)),
                None => Rm::Zmm(reg[v as usize]),
            };
            // A value's operand in a register: constants go to a scratch register first.
            let in_reg = |a: &mut Asm, v: V, scratch: usize| match self.konst(v) {
                Some(slot) => {
                    let s = SCRATCH[scratch];
                    a.evex(BROADCASTSS, s, 0, Rm::Mem(bcst_load(slot)), 0, false, None);
                    s
                }
                None => reg[v as usize],
            };
            let dies = |v: V| self.konst(v).is_none() && self.last_use[v as usize] == i;
            // The register of an instruction that overwrites its operand `v`: `v`'s own where it
            // dies here, else a fresh one holding a copy (a broadcast load for a constant).
            let overwritable = |a: &mut Asm, free: &mut u32, v: V| -> Option<u8> {
                if dies(v) {
                    return Some(reg[v as usize]);
                }
                let d = alloc(free)?;
                match self.konst(v) {
                    Some(slot) => {
                        a.evex(BROADCASTSS, d, 0, Rm::Mem(bcst_load(slot)), 0, false, None)
                    }
                    None => a.evex(MOVAPS, d, 0, Rm::Zmm(reg[v as usize]), 0, false, None),
                }
                Some(d)
            };
            let dying: Vec<u8> = {
                let mut d: Vec<u8> = operands(op)
                    .into_iter()
                    .filter(|&v| dies(v))
                    .map(|v| reg[v as usize])
                    .collect();
                d.sort_unstable();
                d.dedup();
                d
            };
            let release = |free: &mut u32, keep: u8| {
                for &r in &dying {
                    if r != keep {
                        *free |= 1 << r;
                    }
                }
            };
            let d = match *op {
                Op::Const(_) => unreachable!("skipped above"),
                Op::Load { stream, block } => {
                    let d = alloc(&mut free)?;
                    let mem = Mem {
                        base: STREAM_GPRS[usize::from(stream)],
                        index: Some(RAX),
                        disp: 64 * i32::from(block),
                        bcst: false,
                        scale: 64,
                    };
                    let k = if masked { K_TAIL } else { 0 };
                    a.evex(MOVUPS_LOAD, d, 0, Rm::Mem(mem), k, masked, None);
                    d
                }
                Op::Bin(b, x, y) => {
                    let (x, y) = if b.commutes() && self.konst(x).is_some() {
                        (y, x)
                    } else {
                        (x, y)
                    };
                    let xr = in_reg(a, x, 0);
                    release(&mut free, u8::MAX);
                    let d = alloc(&mut free)?;
                    a.evex(bin_enc(b), d, xr, rm(y), 0, false, None);
                    d
                }
                Op::Fma(x, y, z) | Op::Fnma(x, y, z) => {
                    let fma = matches!(op, Op::Fma(..));
                    let (e213, e231) = if fma {
                        (FMADD213PS, FMADD231PS)
                    } else {
                        (FNMADD213PS, FNMADD231PS)
                    };
                    if dies(z) && !dies(x) && !dies(y) {
                        // d = z, then d = x * y + d (231 form): no copy of a live factor.
                        let d = reg[z as usize];
                        let (x, y) = if self.konst(x).is_some() {
                            (y, x)
                        } else {
                            (x, y)
                        };
                        let xr = in_reg(a, x, 0);
                        a.evex(e231, d, xr, rm(y), 0, false, None);
                        release(&mut free, d);
                        d
                    } else {
                        // d = x, then d = y * d + z (213 form). The product commutes, so the
                        // factor that dies, or else a constant (a broadcast load instead of a
                        // register copy), becomes d.
                        let (x, y) = if dies(y) && !dies(x)
                            || self.konst(y).is_some() && !dies(x) && self.konst(x).is_none()
                        {
                            (y, x)
                        } else {
                            (x, y)
                        };
                        let d = overwritable(a, &mut free, x)?;
                        let yr = in_reg(a, y, 0);
                        a.evex(e213, d, yr, rm(z), 0, false, None);
                        release(&mut free, d);
                        d
                    }
                }
                Op::Sqrt(x) => {
                    let src = rm(x);
                    release(&mut free, u8::MAX);
                    let d = alloc(&mut free)?;
                    a.evex(SQRTPS, d, 0, src, 0, false, None);
                    d
                }
                Op::BitSelect {
                    mask,
                    then,
                    otherwise,
                } => {
                    // vpternlogd overwrites its first operand.
                    let d = overwritable(a, &mut free, otherwise)?;
                    let tr = in_reg(a, then, 0);
                    a.evex(PTERNLOGD, d, tr, rm(mask), 0, false, Some(BIT_SELECT_CBA));
                    release(&mut free, d);
                    d
                }
                Op::Select {
                    cmp,
                    x,
                    y,
                    then,
                    otherwise,
                } => {
                    let xr = in_reg(a, x, 0);
                    a.evex(CMPPS, K_CMP, xr, rm(y), 0, false, Some(cmp_imm(cmp)));
                    let er = in_reg(a, otherwise, 1);
                    let t = rm(then);
                    release(&mut free, u8::MAX);
                    let d = alloc(&mut free)?;
                    a.evex(BLENDMPS, d, er, t, K_CMP, false, None);
                    d
                }
            };
            reg[i] = d;
        }
        for (j, &out) in self.outs.iter().enumerate() {
            let src = match self.konst(out) {
                Some(slot) => {
                    a.evex(
                        BROADCASTSS,
                        SCRATCH[0],
                        0,
                        Rm::Mem(bcst_load(slot)),
                        0,
                        false,
                        None,
                    );
                    SCRATCH[0]
                }
                None => reg[out as usize],
            };
            let mem = Mem {
                base: RDX,
                index: Some(RAX),
                disp: 64 * j as i32,
                bcst: false,
                scale: 64,
            };
            let k = if masked { K_TAIL } else { 0 };
            a.evex(MOVUPS_STORE, src, 0, Rm::Mem(mem), k, false, None);
        }
        Some(())
    }
}

/// `vbroadcastss`'s operand: one float of the pool (not an embedded broadcast).
fn bcst_load(slot: u16) -> Mem {
    Mem {
        bcst: false,
        ..pool_bcst(slot)
    }
}

/// How many vectors the main loop computes per iteration, the first whose copies fit in the
/// registers (interleaved, see `VectorCode::interleaved`): the elementary functions are long
/// dependency chains, and interleaved copies let the core overlap them. W5's chain on 4M
/// floats: 2.57 ms one vector at a time, 2.37 two, 2.27 three, 2.25 four (medians, same
/// minute).
const UNROLLS: [u8; 2] = [3, 2];

/// The encoded function for `prog`, and how many vectors its main loop takes at a time: that
/// loop while whole groups remain (when the registers hold the copies), then one vector at a
/// time, then the masked tail.
fn assemble(prog: &VectorCode) -> Option<(Vec<u8>, u8)> {
    let out = prog.out?;
    if usize::from(prog.n_streams) > STREAM_GPRS.len() || prog.pool.len() > 1 << 14 {
        return None;
    }
    let one = Body::new(prog.ops.clone(), vec![out]);
    let wide = UNROLLS.iter().find_map(|&k| {
        let (ops, outs) = prog.interleaved(k);
        let mut code = Asm::default();
        Body::new(ops, outs).emit(&mut code, false)?;
        Some((code, k))
    });
    let mut a = Asm::default();
    // The wide loop's bound needs a register beyond the caller-saved ones.
    a.bytes(&[0x53]); // push rbx
    // kmovw k1, [rdi + 8]
    a.bytes(&[0xC5, 0xF8, 0x90, 0x4F, 0x08]);
    a.mov_load(RCX, RDI, 0);
    a.mov_load(RSI, RDI, 16);
    a.mov_load(RDX, RDI, 24);
    a.mov_load(RBX, RDI, 72);
    // Stream 4 lives in rdi, which holds the arguments until then: it comes last.
    for (s, &gpr) in STREAM_GPRS[..usize::from(prog.n_streams)]
        .iter()
        .enumerate()
    {
        a.mov_load(gpr, RDI, 32 + 8 * s as i32);
    }
    a.bytes(&[0x31, 0xC0]); // xor eax, eax
    let unroll = wide.as_ref().map_or(1, |w| w.1);
    if let Some((wide_code, k)) = wide {
        a.bytes(&[0x48, 0x85, 0xDB]); // test rbx, rbx
        let to_single = a.jump(&JZ);
        let top = a.b.len();
        a.bytes(&wide_code.b);
        // add rax, 64 * k
        a.bytes(&[0x48, 0x05]);
        a.bytes(&(64 * i32::from(k)).to_le_bytes());
        a.bytes(&[0x48, 0x39, 0xD8]); // cmp rax, rbx
        let back = a.jump(&JB);
        a.patch(back, top);
        let single = a.b.len();
        a.patch(to_single, single);
    }
    a.bytes(&[0x48, 0x39, 0xC8]); // cmp rax, rcx
    let to_tail = a.jump(&JAE);
    let top = a.b.len();
    one.emit(&mut a, false)?;
    a.bytes(&[0x48, 0x83, 0xC0, 0x40]); // add rax, 64
    a.bytes(&[0x48, 0x39, 0xC8]); // cmp rax, rcx
    let back = a.jump(&JB);
    a.patch(back, top);
    let tail = a.b.len();
    a.patch(to_tail, tail);
    a.bytes(&[0xC5, 0xF8, 0x98, 0xC9]); // kortestw k1, k1
    let to_end = a.jump(&JZ);
    one.emit(&mut a, true)?;
    let end = a.b.len();
    a.patch(to_end, end);
    a.bytes(&[0x5B]); // pop rbx
    a.bytes(&[0xC5, 0xF8, 0x77, 0xC3]); // vzeroupper; ret
    Some((a.b, unroll))
}

/// Executable memory holding one function.
#[derive(Debug)]
pub(super) struct Code {
    ptr: *mut libc::c_void,
    len: usize,
    /// Vectors per iteration of the main loop.
    unroll: u8,
}

// SAFETY: the mapping is read-only and executable after construction and only freed on drop.
unsafe impl Send for Code {}
// SAFETY: as above; running the code does not mutate it.
unsafe impl Sync for Code {}

impl Code {
    pub(super) fn compile(prog: &VectorCode) -> Option<Code> {
        let (bytes, unroll) = assemble(prog)?;
        let len = bytes.len();
        // SAFETY: a fresh anonymous private mapping; checked for failure below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return None;
        }
        let code = Code { ptr, len, unroll };
        // SAFETY: the mapping is `len` writable bytes and does not overlap `bytes`.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr.cast::<u8>(), len) };
        // SAFETY: the mapping from above; from now on it is only executed.
        let ok = unsafe { libc::mprotect(ptr, len, libc::PROT_READ | libc::PROT_EXEC) } == 0;
        ok.then_some(code)
    }

    /// Vectors per iteration of the main loop.
    #[cfg(test)]
    pub(super) fn unroll(&self) -> u8 {
        self.unroll
    }

    /// # Safety
    /// See [`super::Kernel::run`].
    pub(super) unsafe fn run(&self, pool: &[u32], streams: &[*const f32], out: *mut f32, n: usize) {
        let mut args = Args {
            full_bytes: (n / 16 * 64) as u64,
            tail_mask: (1u64 << (n % 16)) - 1,
            pool: pool.as_ptr(),
            out,
            streams: [std::ptr::null(); MAX_STREAMS],
            wide_bytes: (n / (16 * usize::from(self.unroll)) * 64 * usize::from(self.unroll))
                as u64,
        };
        args.streams[..streams.len()].copy_from_slice(streams);
        // SAFETY: the mapping holds a function with this signature (`assemble`), which reads
        // `args` and, per the caller's contract, the pool, the streams and `out`.
        unsafe {
            let f: unsafe extern "sysv64" fn(*const Args) = std::mem::transmute(self.ptr);
            f(&args);
        }
    }
}

impl Drop for Code {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `compile`, unmapped once.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zmm(r: u8) -> Rm {
        Rm::Zmm(r)
    }

    fn one(f: impl FnOnce(&mut Asm)) -> Vec<u8> {
        let mut a = Asm::default();
        f(&mut a);
        a.b
    }

    /// Bytes as `objdump -d` prints them: `"62 91 74"`.
    fn hex(bytes: &str) -> Vec<u8> {
        let byte = |b| u8::from_str_radix(b, 16).expect("two hex digits");
        bytes.split(' ').map(byte).collect()
    }

    /// Encodings checked against GNU as 2.40 (`objdump -d`).
    #[test]
    fn encodings_match_the_assembler() {
        let pool = |slot| Rm::Mem(pool_bcst(slot));
        let load = |base| {
            Rm::Mem(Mem {
                base,
                index: Some(RAX),
                disp: 0,
                bcst: false,
                scale: 64,
            })
        };
        // EVEX instructions without a mask or an immediate: (opcode, ModRM.reg, EVEX.vvvv,
        // ModRM.rm, encoding).
        let plain = [
            // vaddps zmm3, zmm17, zmm29
            (ADDPS, 3, 17, zmm(29), "62 91 74 40 58 dd"),
            // vsubps zmm0, zmm1, DWORD BCST [rsi+0x100]
            (SUBPS, 0, 1, pool(64), "62 f1 74 58 5c 46 40"),
            // vmulps zmm20, zmm5, zmm6
            (MULPS, 20, 5, zmm(6), "62 e1 54 48 59 e6"),
            // vdivps zmm7, zmm8, zmm9
            (DIVPS, 7, 8, zmm(9), "62 d1 3c 48 5e f9"),
            // vmaxps zmm1, zmm2, zmm3
            (MAXPS, 1, 2, zmm(3), "62 f1 6c 48 5f cb"),
            // vfmadd213ps zmm4, zmm30, DWORD BCST [rsi+0x8]
            (FMADD213PS, 4, 30, pool(2), "62 f2 0d 50 a8 66 02"),
            // vfnmadd213ps zmm4, zmm5, zmm6
            (FNMADD213PS, 4, 5, zmm(6), "62 f2 55 48 ac e6"),
            // vfmadd231ps zmm4, zmm5, zmm6
            (FMADD231PS, 4, 5, zmm(6), "62 f2 55 48 b8 e6"),
            // vfnmadd231ps zmm4, zmm30, DWORD BCST [rsi]
            (FNMADD231PS, 4, 30, pool(0), "62 f2 0d 50 bc 26"),
            // vsqrtps zmm2, zmm19
            (SQRTPS, 2, 0, zmm(19), "62 b1 7c 48 51 d3"),
            // vpandd zmm1, zmm2, DWORD BCST [rsi+0x4]
            (PANDD, 1, 2, pool(1), "62 f1 6d 58 db 4e 01"),
            // vpord / vpxord zmm1, zmm2, zmm3
            (PORD, 1, 2, zmm(3), "62 f1 6d 48 eb cb"),
            (PXORD, 1, 2, zmm(3), "62 f1 6d 48 ef cb"),
            // vscalefps zmm29, zmm17, zmm3 / vscalefps zmm4, zmm2, DWORD BCST [rsi+0x8]
            (SCALEFPS, 29, 17, zmm(3), "62 62 75 40 2c eb"),
            (SCALEFPS, 4, 2, pool(2), "62 f2 6d 58 2c 66 02"),
            // vmovaps zmm5, zmm28
            (MOVAPS, 5, 0, zmm(28), "62 91 7c 48 28 ec"),
            // vbroadcastss zmm30, DWORD PTR [rsi+0x40]
            (
                BROADCASTSS,
                30,
                0,
                Rm::Mem(bcst_load(16)),
                "62 62 7d 48 18 76 10",
            ),
            // vmovups zmm3, [r8+rax] / vmovups zmm3, [r11+rax]
            (MOVUPS_LOAD, 3, 0, load(8), "62 d1 7c 48 10 1c 00"),
            (MOVUPS_LOAD, 3, 0, load(11), "62 d1 7c 48 10 1c 03"),
            // vmovups [rdx+rax], zmm3
            (MOVUPS_STORE, 3, 0, load(RDX), "62 f1 7c 48 11 1c 02"),
        ];
        // With an immediate: (opcode, reg, vvvv, rm, imm8, encoding).
        let immediate = [
            // vpternlogd zmm29, zmm17, zmm3, 0xd8 / zmm1, zmm5, DWORD BCST [rsi+0x100], 0xd8
            (PTERNLOGD, 29, 17, zmm(3), 0xd8, "62 63 75 40 25 eb d8"),
            (PTERNLOGD, 1, 5, pool(64), 0xd8, "62 f3 55 58 25 4e 40 d8"),
            // vcmpps k2, zmm3, DWORD BCST [rsi+0x10], 0x11 / vcmpps k2, zmm3, zmm25, 0x1d
            (CMPPS, 2, 3, pool(4), 0x11, "62 f1 64 58 c2 56 04 11"),
            (CMPPS, 2, 3, zmm(25), 0x1d, "62 91 64 48 c2 d1 1d"),
        ];
        // Masked: (opcode, reg, vvvv, rm, mask register, zeroing, encoding).
        let masked = [
            // vblendmps zmm5{k2}, zmm6, zmm7 / vblendmps zmm25{k2}, zmm6, DWORD BCST [rsi+0x20]
            (BLENDMPS, 5, 6, zmm(7), 2, false, "62 f2 4d 4a 65 ef"),
            (BLENDMPS, 25, 6, pool(8), 2, false, "62 62 4d 5a 65 4e 08"),
            // vmovups zmm19{k1}{z}, [rdi+rax]
            (
                MOVUPS_LOAD,
                19,
                0,
                load(RDI),
                1,
                true,
                "62 e1 7c c9 10 1c 07",
            ),
            // vmovups [rdx+rax]{k1}, zmm21
            (
                MOVUPS_STORE,
                21,
                0,
                load(RDX),
                1,
                false,
                "62 e1 7c 49 11 2c 02",
            ),
        ];
        // mov dst, [base+disp]: (dst, base, disp, encoding).
        let mov_loads = [
            // mov rcx, [rdi] / mov r8, [rdi+0x20] / mov r11, [rdi+0x38] / mov rdi, [rdi+0x40]
            (RCX, RDI, 0, "48 8b 0f"),
            (8, RDI, 32, "4c 8b 47 20"),
            (11, RDI, 56, "4c 8b 5f 38"),
            (RDI, RDI, 64, "48 8b 7f 40"),
        ];
        let plain = plain.map(|(e, reg, vvvv, rm, want)| (e, reg, vvvv, rm, 0, false, None, want));
        let immediate = immediate
            .map(|(e, reg, vvvv, rm, imm, want)| (e, reg, vvvv, rm, 0, false, Some(imm), want));
        let masked =
            masked.map(|(e, reg, vvvv, rm, k, zero, want)| (e, reg, vvvv, rm, k, zero, None, want));
        for (e, reg, vvvv, rm, k, zero, imm, want) in
            plain.into_iter().chain(immediate).chain(masked)
        {
            let got = one(|a| a.evex(e, reg, vvvv, rm, k, zero, imm));
            assert_eq!(got, hex(want), "{want}");
        }
        for (dst, base, disp, want) in mov_loads {
            assert_eq!(one(|a| a.mov_load(dst, base, disp)), hex(want), "{want}");
        }
    }

    #[test]
    fn pool_offsets_beyond_disp8_use_disp32() {
        // vaddps zmm0, zmm0, DWORD BCST [rsi+0x400]: 0x400 / 4 = 256 does not fit a disp8.
        let got = one(|a| a.evex(ADDPS, 0, 0, Rm::Mem(pool_bcst(256)), 0, false, None));
        assert_eq!(
            got,
            [0x62, 0xf1, 0x7c, 0x58, 0x58, 0x86, 0x00, 0x04, 0x00, 0x00]
        );
    }
}
