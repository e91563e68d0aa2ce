//! Calibration on known data: each method's range, the zero point, the histogram's widening,
//! per-channel weight scales, and the errors for bad calibration data.

use anfora_convert::{
    CalibrationError, Calibrator, Method, QuantParams, quantize_weights_i8, weight_scales,
};

fn params(method: Method, batches: &[Vec<f32>]) -> QuantParams {
    let mut c = Calibrator::new(method).unwrap();
    for b in batches {
        c.observe(b).unwrap();
    }
    c.finish().unwrap()
}

/// A reproducible spread over [0, 1): the fractional parts of multiples of the golden ratio.
fn spread(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| (i as f64 * 0.618_033_988_75).fract() as f32)
        .collect()
}

#[test]
fn min_max_maps_the_range_seen_onto_0_to_255_with_zero_exact() {
    let p = params(Method::MinMax, &[vec![-1.0, 0.5], vec![3.0, 2.0]]);
    assert_eq!(p.scale, 4.0 / 255.0);
    // -lo / scale = 63.75.
    assert_eq!(p.zero, 64);
    // Non-negative data (after a ReLU): the range starts at 0.
    let p = params(Method::MinMax, &[vec![0.25, 2.55]]);
    assert_eq!((p.scale, p.zero), (0.01, 0));
    // The range always holds 0, and a constant zero tensor gets a usable scale.
    assert_eq!(
        params(Method::MinMax, &[vec![2.0, 5.1]]),
        QuantParams::of_range(0.0, 5.1)
    );
    assert_eq!(
        params(Method::MinMax, &[vec![0.0; 4]]),
        QuantParams {
            scale: 1.0,
            zero: 0
        }
    );
}

#[test]
fn percentile_clips_rare_outliers() {
    let mut data = spread(100_000);
    data.push(1000.0);
    let p = params(Method::Percentile(99.9), &[data.clone()]);
    let hi = p.scale * 255.0;
    // The outlier widened the histogram a thousandfold (bins of about 0.62): the clipped
    // range is the edge of the bin that holds the bulk's 99.9th percentile, far below the
    // outlier.
    assert!((0.999..1.3).contains(&hi), "{hi}");
    // Min/max keeps the outlier: every step is 1000/255 wide.
    assert!((params(Method::MinMax, &[data]).scale - 1000.0 / 255.0).abs() < 1e-4);
}

#[test]
fn entropy_clips_a_long_tail_and_keeps_a_dense_range() {
    // Magnitudes of a Laplace distribution (scale 0.1): a dense peak and a thin tail to about
    // 1.1. 128 levels over the whole range would spend most of them on the tail.
    let data: Vec<f32> = spread(50_000)
        .iter()
        .map(|u| -(1.0 - u).ln() * 0.1)
        .collect();
    let max = data.iter().fold(0.0f32, |a, &b| a.max(b));
    let p = params(Method::Entropy, &[data]);
    let hi = p.scale * 255.0;
    assert!(hi < 0.95 * max && hi > 0.5 * max, "{hi} of {max}");
    // Uniform data over its whole range: nothing to clip, the threshold is the range.
    let p = params(Method::Entropy, &[spread(20_000)]);
    assert!((p.scale * 255.0 - 1.0).abs() < 0.01, "{}", p.scale * 255.0);
}

#[test]
fn the_histogram_widens_by_merging_bins() {
    // Small values first, then one 100 times larger: the counts survive the merges.
    let mut c = Calibrator::new(Method::Percentile(50.0)).unwrap();
    c.observe(&[0.01; 10]).unwrap();
    c.observe(&[1.0; 10]).unwrap();
    let p = c.finish().unwrap();
    // Half the values are 0.01: the median's bin edge is tiny against 1.
    assert!(p.scale * 255.0 < 0.05, "{}", p.scale * 255.0);
}

#[test]
fn bad_calibration_data_is_an_error() {
    let mut c = Calibrator::new(Method::MinMax).unwrap();
    assert_eq!(c.finish(), Err(CalibrationError::Empty));
    assert_eq!(
        c.observe(&[1.0, f32::NAN]).unwrap_err().to_string(),
        "calibration data holds NaN at position 1: quantization needs finite values"
    );
    assert_eq!(
        c.observe(&[f32::INFINITY]),
        Err(CalibrationError::NotFinite(f32::INFINITY, 0))
    );
    // A rejected batch leaves nothing behind.
    assert_eq!(c.finish(), Err(CalibrationError::Empty));
    assert_eq!(
        Calibrator::new(Method::Percentile(0.0)).unwrap_err(),
        CalibrationError::BadPercentile(0.0)
    );
    assert_eq!(
        Method::parse("histogram").unwrap_err().to_string(),
        "unknown calibration method 'histogram': use minmax, percentile or kl"
    );
    assert_eq!(Method::parse("kl"), Ok(Method::Entropy));
}

#[test]
fn weights_get_one_symmetric_scale_per_output_channel() {
    // 2×3: columns' largest magnitudes 2, 0.5 and 0.
    let w = [1.0, -0.5, 0.0, -2.0, 0.25, 0.0];
    let s = weight_scales(&w, 2, 3).unwrap();
    assert_eq!(s, vec![2.0 / 127.0, 0.5 / 127.0, 1.0]);
    let q = quantize_weights_i8(&w, 3, &s);
    // 63.5 rounds to 64 (half to even), the extremes to ±127.
    assert_eq!(q, vec![64, -127, 0, -127, 64, 0]);
    assert_eq!(
        weight_scales(&w, 2, 2),
        Err(CalibrationError::WeightShape { len: 6, k: 2, n: 2 })
    );
}
