//! The process group the collectives run on (issue 30), and the collectives on tensors.
//!
//! A host that starts several processes (the Python package and the CLI under `mpirun`,
//! through `anfora-dist`) registers a [`Communicator`]: the few byte- and number-level
//! operations an engine such as MPI provides. Everything about tensors is here, once, for
//! every engine: dtypes, shapes, axes, the mean, and the check that every rank issued the same
//! collective on the same shape and dtype. Without a registered group a collective is a
//! RuntimeError saying so.

use std::sync::{Arc, RwLock};

use anfora_tensor::{DType, SplitSpec, Tensor};

use crate::pynum::{PyErr, tensor, type_error, value_error};

/// A reduction every engine provides on numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    Sum,
    Max,
}

/// A buffer reduced in place across the group.
pub enum ReduceBuf<'a> {
    F32(&'a mut [f32]),
    F64(&'a mut [f64]),
    I32(&'a mut [i32]),
    I64(&'a mut [i64]),
}

/// A buffer an engine reduces while the program goes on (`Communicator::start`).
pub enum OwnedBuf {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I32(Vec<i32>),
    I64(Vec<i64>),
}

/// What a communication engine provides. Every process of the group calls each operation in
/// the same order; an implementation reports a failure (a timeout, a dead peer) as an error
/// message rather than blocking forever.
pub trait Communicator: Send + Sync {
    /// This process's index in the group, `0..size`.
    fn rank(&self) -> usize;
    /// The number of processes.
    fn size(&self) -> usize;
    /// Replaces `buf` by the elementwise reduction of every process's `buf`.
    fn all_reduce(&self, buf: ReduceBuf<'_>, op: Reduction) -> Result<(), String>;
    /// Writes every process's `send` (all of one length), in rank order, into `recv`.
    fn all_gather(&self, send: &[u8], recv: &mut [u8]) -> Result<(), String>;
    /// Replaces `buf` by process `root`'s.
    fn broadcast(&self, buf: &mut [u8], root: usize) -> Result<(), String>;
    /// Returns once every process has called it.
    fn barrier(&self) -> Result<(), String>;
    /// Starts reducing `buf` over the group and returns at once with a ticket for
    /// [`Communicator::finish`]; the program computes meanwhile.
    fn start(&self, buf: OwnedBuf, op: Reduction) -> Result<u64, String>;
    /// Lets the operations started advance (engines that progress only inside their calls).
    fn progress(&self);
    /// Waits for the operation `ticket` and returns its result.
    fn finish(&self, ticket: u64) -> Result<OwnedBuf, String>;
}

static GROUP: RwLock<Option<Arc<dyn Communicator>>> = RwLock::new(None);

/// Makes `group` the process group of every later collective (`None`: no group).
pub fn set_group(group: Option<Arc<dyn Communicator>>) {
    *GROUP.write().unwrap_or_else(|e| e.into_inner()) = group;
}

/// The registered process group.
pub fn group() -> Result<Arc<dyn Communicator>, PyErr> {
    GROUP
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .ok_or_else(|| {
            (
                "RuntimeError",
                "no process group: call anfora.distributed.init() (Python) or pass --distributed \
             (the CLI), in a program started by mpirun"
                    .to_string(),
            )
        })
}

fn comm_err(what: &str, e: String) -> PyErr {
    ("RuntimeError", format!("{what}: {e}"))
}

/// Which collective a process issues, for the check that every process issues the same one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Issued {
    AllReduce(u8),
    AllGather(i64),
    ReduceScatter(i64),
    Broadcast(i64),
}

impl Issued {
    fn code(self) -> [i64; 2] {
        match self {
            Issued::AllReduce(op) => [0, op as i64],
            Issued::AllGather(axis) => [1, axis],
            Issued::ReduceScatter(axis) => [2, axis],
            Issued::Broadcast(root) => [3, root],
        }
    }

    fn from_code(c: [i64; 2]) -> String {
        match c {
            [0, op] => format!("all_reduce(op='{}')", OPS.get(op as usize).unwrap_or(&"?")),
            [1, a] => format!("all_gather(axis={a})"),
            [2, a] => format!("reduce_scatter(axis={a})"),
            [3, r] => format!("broadcast(root={r})"),
            _ => "an unknown collective".to_string(),
        }
    }
}

const OPS: [&str; 3] = ["sum", "mean", "max"];
const HEADER: usize = 12;

/// What a process contributes to a collective, as 12 numbers: the collective, its argument,
/// the dtype, the rank, the element count, the first six dimensions and a fingerprint of the
/// shapes of a coalesced tuple (0 for one tensor).
fn header(issued: Issued, x: &Tensor, fingerprint: i64) -> [i64; HEADER] {
    let mut h = [-1i64; HEADER];
    h[..2].copy_from_slice(&issued.code());
    h[2] = DType::ALL.iter().position(|d| *d == x.dtype()).unwrap_or(0) as i64;
    h[3] = x.ndim() as i64;
    h[4] = x.numel() as i64;
    for (i, &d) in x.shape().iter().take(DIMS).enumerate() {
        h[5 + i] = d as i64;
    }
    h[HEADER - 1] = fingerprint;
    h
}

/// How many dimensions the header compares one by one.
const DIMS: usize = HEADER - 6;

fn describe(h: &[i64]) -> String {
    let dtype = DType::ALL.get(h[2] as usize).map_or("?", |d| d.name());
    let dims: Vec<String> = h[5..5 + (h[3].max(0) as usize).min(DIMS)]
        .iter()
        .map(|d| d.to_string())
        .collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let parts = if h[HEADER - 1] != 0 {
        format!(" (the tuple's shapes fingerprint {:x})", h[HEADER - 1])
    } else {
        String::new()
    };
    format!(
        "{} of a {dtype} tensor of shape {shape}{parts}",
        Issued::from_code([h[0], h[1]])
    )
}

/// Checks that every process issues the same collective on a tensor of the same dtype and
/// shape, naming the processes that differ from rank 0.
fn agree(
    g: &dyn Communicator,
    issued: Issued,
    x: &Tensor,
    fingerprint: i64,
    what: &str,
) -> Result<(), PyErr> {
    let mine = header(issued, x, fingerprint);
    let send: Vec<u8> = mine.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut recv = vec![0u8; send.len() * g.size()];
    g.all_gather(&send, &mut recv)
        .map_err(|e| comm_err(what, e))?;
    let all: Vec<Vec<i64>> = recv
        .chunks_exact(send.len())
        .map(|c| {
            c.chunks_exact(8)
                .map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")))
                .collect()
        })
        .collect();
    let differ: Vec<String> = all
        .iter()
        .enumerate()
        .filter(|(_, h)| h[..] != all[0][..])
        .map(|(r, h)| format!("rank {r} issued {}", describe(h)))
        .collect();
    if differ.is_empty() {
        return Ok(());
    }
    Err(value_error(format!(
        "{what}: the processes disagree: rank 0 issued {}, {}",
        describe(&all[0]),
        differ.join(", ")
    )))
}

/// The dtype a reduction runs in: itself, or the wide dtype a narrow one is computed in.
fn reduce_dtype(x: &Tensor, what: &str) -> Result<DType, PyErr> {
    match x.dtype() {
        DType::Bool => Err(type_error(format!("{what} does not take a bool tensor"))),
        d => Ok(d.wide()),
    }
}

/// `x` reduced elementwise over the group with `op` ("sum", "mean" or "max"). Narrow dtypes
/// are reduced in their wide dtype and stored back (integers wrap, as numpy's would).
pub fn all_reduce(x: &Tensor, op: &str) -> Result<Tensor, PyErr> {
    reduce_checked(x, op, 0)
}

/// Every tensor of `xs` reduced as [`all_reduce`] does, in one collective over their
/// concatenated elements (a gradient bucket). The tensors share one dtype.
pub fn all_reduce_many(xs: &[Tensor], op: &str) -> Result<Vec<Tensor>, PyErr> {
    if xs.is_empty() {
        return Ok(Vec::new());
    }
    let reduced = reduce_checked(&joined(xs, "all_reduce")?, op, fingerprint(xs))?;
    split_back(&reduced, &parts_of(xs))
}

/// The tensors of a bucket as one flat tensor; they share one dtype.
fn joined(xs: &[Tensor], what: &str) -> Result<Tensor, PyErr> {
    let first = xs
        .first()
        .ok_or_else(|| value_error(format!("{what} takes at least one tensor")))?;
    if let Some(other) = xs.iter().find(|t| t.dtype() != first.dtype()) {
        return Err(type_error(format!(
            "{what} of a tuple takes tensors of one dtype, not {} and {}",
            first.dtype(),
            other.dtype()
        )));
    }
    let flat: Vec<Tensor> = xs
        .iter()
        .map(|t| tensor(t.reshape(&[-1])))
        .collect::<Result<_, _>>()?;
    tensor(Tensor::concat(&flat, 0))
}

/// The dtype and shape of each tensor of a bucket.
fn parts_of(xs: &[Tensor]) -> Vec<(DType, Vec<usize>)> {
    xs.iter().map(|t| (t.dtype(), t.shape().to_vec())).collect()
}

/// A bucket's reduced flat tensor split back into tensors of the given dtypes and shapes.
fn split_back(flat: &Tensor, parts: &[(DType, Vec<usize>)]) -> Result<Vec<Tensor>, PyErr> {
    let ends: Vec<i64> = parts
        .iter()
        .scan(0i64, |end, (_, shape)| {
            *end += shape.iter().product::<usize>() as i64;
            Some(*end)
        })
        .collect();
    let pieces = tensor(flat.split(&SplitSpec::Indices(ends[..ends.len() - 1].to_vec()), 0))?;
    pieces
        .iter()
        .zip(parts)
        .map(|(p, (dtype, shape))| {
            let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
            tensor(tensor(p.reshape(&dims))?.try_cast(*dtype))
        })
        .collect()
}

/// The code of reduction `op` (one of `allowed`) and the dtype it runs in on `x`'s elements,
/// or the error for a reduction `x` cannot take.
fn reduction_of(x: &Tensor, op: &str, allowed: &[&str], what: &str) -> Result<(u8, DType), PyErr> {
    let code = OPS
        .iter()
        .position(|o| *o == op && allowed.contains(o))
        .ok_or_else(|| {
            let names: Vec<String> = allowed.iter().map(|o| format!("'{o}'")).collect();
            let names = match names.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
                _ => names.join(""),
            };
            value_error(format!(
                "{what}: op must be {names}, not {}",
                crate::pynum::str_repr(op)
            ))
        })?;
    let wide = reduce_dtype(x, what)?;
    if op == "mean" && !wide.is_float() {
        return Err(type_error(format!(
            "{what}(op='mean') takes a float tensor, not {}",
            x.dtype()
        )));
    }
    Ok((code as u8, wide))
}

/// A number that differs, almost surely, between two different lists of shapes.
fn fingerprint(xs: &[Tensor]) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for t in xs {
        for &d in t.shape().iter().chain(&[usize::MAX]) {
            h = (h ^ d as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    (h >> 1) as i64 | 1
}

fn reduce_checked(x: &Tensor, op: &str, fingerprint: i64) -> Result<Tensor, PyErr> {
    let what = "all_reduce";
    let (code, wide) = reduction_of(x, op, &OPS, what)?;
    let g = group()?;
    agree(&*g, Issued::AllReduce(code), x, fingerprint, what)?;
    let reduction = if op == "max" {
        Reduction::Max
    } else {
        Reduction::Sum
    };
    let t = if x.dtype() == wide {
        x.contiguous()
    } else {
        tensor(x.try_cast(wide))?.contiguous()
    };
    let divisor = (op == "mean").then_some(g.size() as f64);
    let t = reduced(&*g, &t, reduction, divisor).map_err(|e| comm_err(what, e))?;
    if x.dtype() == wide {
        return Ok(t);
    }
    tensor(t.try_cast(x.dtype()))
}

/// The contiguous tensor `t` (of a reducible dtype) reduced over the group, each element
/// then divided by `divisor` when given (a mean: the same division numpy's `sum / n` does).
fn reduced(
    g: &dyn Communicator,
    t: &Tensor,
    op: Reduction,
    divisor: Option<f64>,
) -> Result<Tensor, String> {
    let mut buf = OwnedBuf::of(t)?;
    g.all_reduce(buf.as_reduce_buf(), op)?;
    buf.into_tensor(divisor, t.shape())
}

impl OwnedBuf {
    /// A copy of the elements of a contiguous tensor of a reducible dtype.
    fn of(t: &Tensor) -> Result<OwnedBuf, String> {
        let missing = || "a contiguous tensor reads as a slice".to_string();
        Ok(match t.dtype() {
            DType::F32 => OwnedBuf::F32(t.as_f32_slice().ok_or_else(missing)?.to_vec()),
            DType::F64 => OwnedBuf::F64(t.as_f64_slice().ok_or_else(missing)?.to_vec()),
            DType::I32 => OwnedBuf::I32(t.as_i32_slice().ok_or_else(missing)?.to_vec()),
            DType::I64 => OwnedBuf::I64(t.as_i64_slice().ok_or_else(missing)?.to_vec()),
            other => return Err(format!("cannot reduce {other} elements")),
        })
    }

    fn as_reduce_buf(&mut self) -> ReduceBuf<'_> {
        match self {
            OwnedBuf::F32(v) => ReduceBuf::F32(v),
            OwnedBuf::F64(v) => ReduceBuf::F64(v),
            OwnedBuf::I32(v) => ReduceBuf::I32(v),
            OwnedBuf::I64(v) => ReduceBuf::I64(v),
        }
    }

    /// The elements as a tensor of `shape`, each float divided by `divisor` when given (a
    /// mean: the same division numpy's `sum / n` does).
    fn into_tensor(self, divisor: Option<f64>, shape: &[usize]) -> Result<Tensor, String> {
        let t = match self {
            OwnedBuf::F32(mut v) => {
                if let Some(n) = divisor {
                    v.iter_mut().for_each(|x| *x /= n as f32);
                }
                Tensor::from_f32(v, shape)
            }
            OwnedBuf::F64(mut v) => {
                if let Some(n) = divisor {
                    v.iter_mut().for_each(|x| *x /= n);
                }
                Tensor::from_f64(v, shape)
            }
            OwnedBuf::I32(v) => Tensor::from_i32(v, shape),
            OwnedBuf::I64(v) => Tensor::from_i64(v, shape),
        };
        t.map_err(|e| e.message)
    }
}

fn axis_of(x: &Tensor, axis: i64, what: &str) -> Result<usize, PyErr> {
    let n = x.ndim() as i64;
    if n == 0 {
        return Err(value_error(format!(
            "{what} takes a tensor of at least one dimension"
        )));
    }
    let a = if axis < 0 { axis + n } else { axis };
    if !(0..n).contains(&a) {
        return Err(value_error(format!(
            "{what}: axis {axis} is out of bounds for a tensor of {n} dimensions"
        )));
    }
    Ok(a as usize)
}

/// Every process's `x`, concatenated in rank order along `axis`.
pub fn all_gather(x: &Tensor, axis: i64) -> Result<Tensor, PyErr> {
    let what = "all_gather";
    let a = axis_of(x, axis, what)?;
    let g = group()?;
    agree(&*g, Issued::AllGather(a as i64), x, 0, what)?;
    let x = x.contiguous();
    let send = x.le_bytes();
    let mut recv = vec![0u8; send.len() * g.size()];
    g.all_gather(&send, &mut recv)
        .map_err(|e| comm_err(what, e))?;
    let parts = recv
        .chunks_exact(send.len().max(1))
        .take(g.size())
        .map(|c| Tensor::from_le_bytes(x.dtype(), x.shape(), c))
        .collect::<Result<Vec<_>, _>>();
    let parts = if send.is_empty() {
        vec![x.clone(); g.size()]
    } else {
        tensor(parts)?
    };
    tensor(Tensor::concat(&parts, a as i64))
}

/// This process's block of the sum of every process's `x`, split along `axis` into one
/// block per process (all_gather's adjoint).
pub fn reduce_scatter(x: &Tensor, axis: i64) -> Result<Tensor, PyErr> {
    let what = "reduce_scatter";
    let a = axis_of(x, axis, what)?;
    let g = group()?;
    let n = g.size();
    if !x.shape()[a].is_multiple_of(n) {
        return Err(value_error(format!(
            "{what}: axis {a} of length {} does not split into {n} equal blocks",
            x.shape()[a]
        )));
    }
    agree(&*g, Issued::ReduceScatter(a as i64), x, 0, what)?;
    let wide = reduce_dtype(x, what)?;
    let t = tensor(x.try_cast(wide))?.contiguous();
    let sum = reduced(&*g, &t, Reduction::Sum, None).map_err(|e| comm_err(what, e))?;
    let blocks = tensor(sum.split(&SplitSpec::Sections(n as i64), a as i64))?;
    tensor(blocks[g.rank()].contiguous().try_cast(x.dtype()))
}

fn root_of(root: i64, g: &dyn Communicator, what: &str) -> Result<usize, PyErr> {
    usize::try_from(root)
        .ok()
        .filter(|r| *r < g.size())
        .ok_or_else(|| {
            value_error(format!(
                "{what}: root {root} is not a rank of a group of {} processes",
                g.size()
            ))
        })
}

/// Process `root`'s `x`, on every process.
pub fn broadcast(x: &Tensor, root: i64) -> Result<Tensor, PyErr> {
    let what = "broadcast";
    let g = group()?;
    let r = root_of(root, &*g, what)?;
    agree(&*g, Issued::Broadcast(r as i64), x, 0, what)?;
    let x = x.contiguous();
    let mut buf = x.le_bytes().into_owned();
    g.broadcast(&mut buf, r).map_err(|e| comm_err(what, e))?;
    tensor(Tensor::from_le_bytes(x.dtype(), x.shape(), &buf))
}

/// broadcast's adjoint: on process `root`, the sum of every process's `d`; zeros elsewhere.
pub fn broadcast_grad(d: &Tensor, root: i64) -> Result<Tensor, PyErr> {
    let g = group()?;
    let r = root_of(root, &*g, "broadcast's gradient")?;
    let sum = all_reduce(d, "sum")?;
    if g.rank() == r {
        Ok(sum)
    } else {
        tensor(Tensor::zeros(d.shape(), d.dtype()))
    }
}

/// Waits until every process of the group has reached it.
pub fn barrier() -> Result<(), PyErr> {
    group()?.barrier().map_err(|e| comm_err("barrier", e))
}

/// An all-reduce started by [`start_all_reduce`]: how to rebuild its tensors.
struct InFlight {
    ticket: u64,
    parts: Vec<(DType, Vec<usize>)>,
    divisor: Option<f64>,
}

static IN_FLIGHT: std::sync::Mutex<Vec<(u64, InFlight)>> = std::sync::Mutex::new(Vec::new());
static STARTED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static PENDING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Starts reducing `xs` (tensors of one dtype, as [`all_reduce_many`] takes them) and returns
/// a handle for [`finish_all_reduce`]; the consistency check runs now, the data moves while
/// the program computes (the executor calls [`progress`] between operations).
pub fn start_all_reduce(xs: &[Tensor], op: &str) -> Result<u64, PyErr> {
    let what = "all_reduce_start";
    let flat = joined(xs, what)?;
    let (code, wide) = reduction_of(&flat, op, &OPS[..2], what)?;
    let joined = tensor(flat.try_cast(wide))?.contiguous();
    let g = group()?;
    agree(&*g, Issued::AllReduce(code), &flat, fingerprint(xs), what)?;
    let buf = OwnedBuf::of(&joined).map_err(|e| comm_err(what, e))?;
    let ticket = g
        .start(buf, Reduction::Sum)
        .map_err(|e| comm_err(what, e))?;
    let handle = STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    let parts = parts_of(xs);
    let divisor = (op == "mean").then_some(g.size() as f64);
    IN_FLIGHT.lock().unwrap_or_else(|e| e.into_inner()).push((
        handle,
        InFlight {
            ticket,
            parts,
            divisor,
        },
    ));
    PENDING.fetch_add(1, std::sync::atomic::Ordering::Release);
    Ok(handle)
}

/// Waits for the all-reduce `handle` and returns its tensors, shaped as they were given.
pub fn finish_all_reduce(handle: u64) -> Result<Vec<Tensor>, PyErr> {
    let what = "all_reduce_wait";
    let flight = {
        let mut list = IN_FLIGHT.lock().unwrap_or_else(|e| e.into_inner());
        let at = list.iter().position(|(h, _)| *h == handle).ok_or_else(|| {
            value_error(format!(
                "{what}: no all_reduce in flight has handle {handle}"
            ))
        })?;
        list.remove(at).1
    };
    PENDING.fetch_sub(1, std::sync::atomic::Ordering::Release);
    let buf = group()?
        .finish(flight.ticket)
        .map_err(|e| comm_err(what, e))?;
    let len = flight
        .parts
        .iter()
        .map(|(_, shape)| shape.iter().product::<usize>())
        .sum();
    let joined = buf
        .into_tensor(flight.divisor, &[len])
        .map_err(|e| comm_err(what, e))?;
    split_back(&joined, &flight.parts)
}

/// Lets the all-reduces in flight advance; nearly free when there are none (the executor
/// calls it after every primitive).
#[inline]
pub fn progress() {
    if PENDING.load(std::sync::atomic::Ordering::Relaxed) == 0 {
        return;
    }
    if let Ok(g) = group() {
        g.progress();
    }
}
