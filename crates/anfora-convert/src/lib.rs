//! The offline converter (issue 28): what it decides before a model runs quantized.
//!
//! So far, the quantization parameters (`calibrate`): those of activations from the values
//! they take on calibration data (min/max, a percentile, or the threshold that loses the least
//! information, as TensorRT's entropy calibration chooses it), and per-channel scales of
//! weights. The model rewrite that uses them (and the kernels in `anfora-tensor::quant`) is
//! the next part.

pub mod calibrate;

pub use calibrate::{
    CalibrationError, Calibrator, Method, QuantParams, quantize_weights_i8, weight_scales,
};
