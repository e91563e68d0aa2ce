//! The geometry of a 2-D convolution: its hyper-parameters (`Conv2dSpec`) and the checked
//! sizes of one call (`Conv`), which the kernels, `im2col` and `col2im` read.

use super::{check_positive, image_dims, value_error};
use crate::Result;
use crate::shape_repr::tuple_repr;

/// The zero padding of a 2-D convolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding2d {
    /// No padding.
    Valid,
    /// The output has the input's size (stride 1 only): `dilation·(k-1)` zeros per axis, half
    /// before (rounded down) and the rest after, as PyTorch pads.
    Same,
    /// Zeros before and after along the height (`h`) and width (`w`).
    Explicit { h: [usize; 2], w: [usize; 2] },
}

/// The hyper-parameters of a 2-D convolution (`ops.conv2d`'s keyword arguments).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv2dSpec {
    pub stride: [usize; 2],
    pub padding: Padding2d,
    pub dilation: [usize; 2],
    pub groups: usize,
}

impl Default for Conv2dSpec {
    fn default() -> Self {
        Conv2dSpec {
            stride: [1, 1],
            padding: Padding2d::Explicit {
                h: [0, 0],
                w: [0, 0],
            },
            dilation: [1, 1],
            groups: 1,
        }
    }
}

/// A convolution's sizes, checked: `x` is (N, C, H, W) (N = 1 for an unbatched input), the
/// weight (O, C/groups, KH, KW), the output (N, O, OH, OW).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Conv {
    pub(super) batched: bool,
    pub(super) n: usize,
    pub(super) c: usize,
    pub(super) h: usize,
    pub(super) w: usize,
    pub(super) o: usize,
    pub(super) kh: usize,
    pub(super) kw: usize,
    pub(super) oh: usize,
    pub(super) ow: usize,
    pub(super) sh: usize,
    pub(super) sw: usize,
    pub(super) dh: usize,
    pub(super) dw: usize,
    /// Zeros before the first row and column.
    pub(super) pt: usize,
    pub(super) pl: usize,
    pub(super) groups: usize,
    /// Channels per group of the input and of the output.
    pub(super) cg: usize,
    pub(super) og: usize,
}

/// `(before, after)` zeros along one axis for `same` padding.
fn same_padding(k: usize, d: usize) -> [usize; 2] {
    let total = d * (k - 1);
    [total / 2, total - total / 2]
}

/// The output length along one axis, or `None` when the dilated kernel does not fit.
fn out_len(len: usize, pad: [usize; 2], k: usize, s: usize, d: usize) -> Option<usize> {
    let padded = len + pad[0] + pad[1];
    let eff = d * (k - 1) + 1;
    (eff <= padded).then(|| (padded - eff) / s + 1)
}

/// Whether the padded length and the dilated kernel of one axis fit in `isize` (every index
/// the kernels compute is at most the padded length).
fn fits(len: usize, pad: [usize; 2], k: usize, d: usize) -> bool {
    let max = isize::MAX as usize;
    len.checked_add(pad[0])
        .and_then(|p| p.checked_add(pad[1]))
        .is_some_and(|p| p <= max)
        && d.checked_mul(k - 1).is_some_and(|e| e < max)
}

pub(super) fn conv_geometry(op: &str, x: &[usize], w: &[usize], spec: &Conv2dSpec) -> Result<Conv> {
    let (batch, c, h, wd) = image_dims(op, x)?;
    let &[o, wc, kh, kw] = w else {
        return Err(value_error(
            op,
            format!(
                "expected a 4-D weight (out_channels, in_channels / groups, kH, kW), got shape {}",
                tuple_repr(w)
            ),
        ));
    };
    let Conv2dSpec {
        stride: [sh, sw],
        padding,
        dilation: [dh, dw],
        groups,
    } = *spec;
    if groups == 0 {
        return Err(value_error(op, "groups must be a positive integer"));
    }
    check_positive(op, "stride", [sh, sw])?;
    check_positive(op, "dilation", [dh, dw])?;
    check_positive(op, "the kernel size", [kh, kw])?;
    if o % groups != 0 {
        return Err(value_error(
            op,
            format!("out_channels ({o}) must be divisible by groups ({groups})"),
        ));
    }
    if wc.checked_mul(groups) != Some(c) {
        return Err(value_error(
            op,
            format!(
                "input has {c} channels but weight expects {} (groups={groups})",
                wc.saturating_mul(groups)
            ),
        ));
    }
    let (ph, pw) = match padding {
        Padding2d::Valid => ([0, 0], [0, 0]),
        Padding2d::Same => {
            if sh != 1 || sw != 1 {
                return Err(value_error(
                    op,
                    "padding='same' is not supported for strided convolutions",
                ));
            }
            (same_padding(kh, dh), same_padding(kw, dw))
        }
        Padding2d::Explicit { h, w } => (h, w),
    };
    if !fits(h, ph, kh, dh) || !fits(wd, pw, kw, dw) {
        return Err(value_error(op, "the padding or the dilation is too large"));
    }
    let (Some(oh), Some(ow)) = (out_len(h, ph, kh, sh, dh), out_len(wd, pw, kw, sw, dw)) else {
        return Err(value_error(
            op,
            format!(
                "the padded input ({}, {}) is smaller than the dilated kernel ({}, {})",
                h + ph[0] + ph[1],
                wd + pw[0] + pw[1],
                dh * (kh - 1) + 1,
                dw * (kw - 1) + 1
            ),
        ));
    };
    Ok(Conv {
        batched: batch.is_some(),
        n: batch.unwrap_or(1),
        c,
        h,
        w: wd,
        o,
        kh,
        kw,
        oh,
        ow,
        sh,
        sw,
        dh,
        dw,
        pt: ph[0],
        pl: pw[0],
        groups,
        cg: wc,
        og: o / groups,
    })
}

impl Conv {
    /// Rows of the column matrix: `C_g·KH·KW`.
    pub(super) fn k(&self) -> usize {
        self.cg * self.kh * self.kw
    }
    pub(super) fn ohw(&self) -> usize {
        self.oh * self.ow
    }
    pub(super) fn hw(&self) -> usize {
        self.h * self.w
    }
    /// `dims`, after the batch size when the convolution is batched.
    pub(super) fn with_batch(&self, dims: [usize; 3]) -> Vec<usize> {
        let batch = self.batched.then_some(self.n);
        batch.into_iter().chain(dims).collect()
    }
    pub(super) fn output_shape(&self) -> Vec<usize> {
        self.with_batch([self.o, self.oh, self.ow])
    }
    pub(super) fn input_shape(&self) -> Vec<usize> {
        self.with_batch([self.c, self.h, self.w])
    }
    pub(super) fn weight_shape(&self) -> Vec<usize> {
        vec![self.o, self.cg, self.kh, self.kw]
    }
    /// Multiply-adds of the whole convolution (saturating).
    pub(super) fn work(&self) -> usize {
        self.n
            .saturating_mul(self.o)
            .saturating_mul(self.k())
            .saturating_mul(self.ohw())
    }
    /// A 1×1 kernel with unit strides and no padding reads the input itself as its columns.
    pub(super) fn pointwise(&self) -> bool {
        self.kh == 1
            && self.kw == 1
            && self.sh == 1
            && self.sw == 1
            && self.pt == 0
            && self.pl == 0
            && self.oh == self.h
            && self.ow == self.w
    }
}

/// `ops.conv2d`'s result shape for an input of shape `x` and a weight of shape `w`, or its
/// ValueError (wrong ranks, channels, groups, a kernel larger than the padded input, ...).
pub fn conv2d_output_shape(x: &[usize], w: &[usize], spec: &Conv2dSpec) -> Result<Vec<usize>> {
    Ok(conv_geometry("conv2d", x, w, spec)?.output_shape())
}
