//! Plane-to-plane homographies: the normalised direct linear transform over any number of point
//! pairs (least squares), a deterministic RANSAC around it, and reprojection errors.

use nalgebra::{Matrix3, SMatrix, SymmetricEigen, Vector3};

/// One correspondence: a point on the source plane (e.g. board column, row) and where it is seen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointPair {
    /// Source-plane position.
    pub from: [f64; 2],
    /// Destination-plane position.
    pub to: [f64; 2],
}

/// Applies a homography to a point; `None` for points mapped to infinity.
pub fn apply(h: &Matrix3<f64>, p: [f64; 2]) -> Option<[f64; 2]> {
    let v = h * Vector3::new(p[0], p[1], 1.0);
    if v.z.abs() < 1e-12 {
        return None;
    }
    Some([v.x / v.z, v.y / v.z])
}

/// Similarity that moves the points' centroid to the origin and their mean distance to √2,
/// which keeps the DLT well conditioned (Hartley normalisation).
fn normaliser(points: impl Iterator<Item = [f64; 2]> + Clone) -> Matrix3<f64> {
    let n = points.clone().count().max(1) as f64;
    let (sx, sy) = points.clone().fold((0.0, 0.0), |(a, b), p| (a + p[0], b + p[1]));
    let (cx, cy) = (sx / n, sy / n);
    let mean_dist = points.map(|p| ((p[0] - cx).powi(2) + (p[1] - cy).powi(2)).sqrt()).sum::<f64>() / n;
    let s = if mean_dist > 1e-12 { std::f64::consts::SQRT_2 / mean_dist } else { 1.0 };
    Matrix3::new(s, 0.0, -s * cx, 0.0, s, -s * cy, 0.0, 0.0, 1.0)
}

/// Least-squares homography (algebraic error, Hartley-normalised) mapping every `from` to its
/// `to`. Needs at least four pairs in general position; `None` when degenerate.
pub fn fit(pairs: &[PointPair]) -> Option<Matrix3<f64>> {
    fit_weighted(pairs, None)
}

/// [`fit`] with a non-negative weight per pair.
pub fn fit_weighted(pairs: &[PointPair], weights: Option<&[f64]>) -> Option<Matrix3<f64>> {
    if pairs.len() < 4 {
        return None;
    }
    let tf = normaliser(pairs.iter().map(|p| p.from));
    let tt = normaliser(pairs.iter().map(|p| p.to));
    let mut ata = SMatrix::<f64, 9, 9>::zeros();
    for (i, pair) in pairs.iter().enumerate() {
        let w = weights.map_or(1.0, |w| w[i]);
        if w <= 0.0 {
            continue;
        }
        let a = tf * Vector3::new(pair.from[0], pair.from[1], 1.0);
        let b = tt * Vector3::new(pair.to[0], pair.to[1], 1.0);
        let (x, y, z) = (a.x, a.y, a.z);
        let (u, v, s) = (b.x / b.z, b.y / b.z, 1.0);
        let r1 = [0.0, 0.0, 0.0, -s * x, -s * y, -s * z, v * x, v * y, v * z];
        let r2 = [s * x, s * y, s * z, 0.0, 0.0, 0.0, -u * x, -u * y, -u * z];
        for r in [r1, r2] {
            for j in 0..9 {
                for k in 0..9 {
                    ata[(j, k)] += w * r[j] * r[k];
                }
            }
        }
    }
    let eigen = SymmetricEigen::new(ata);
    let (min_index, _) = eigen.eigenvalues.iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1))?;
    let h = eigen.eigenvectors.column(min_index);
    let hn = Matrix3::new(h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8]);
    let denorm = tt.try_inverse()? * hn * tf;
    let scale = denorm[(2, 2)];
    let result = if scale.abs() > 1e-12 { denorm / scale } else { denorm / denorm.norm() };
    if result.iter().all(|v| v.is_finite()) && result.determinant().abs() > 1e-15 {
        Some(result)
    } else {
        None
    }
}

/// Distance in destination units between where `h` sends `from` and the observed `to`.
pub fn reprojection_error(h: &Matrix3<f64>, pair: &PointPair) -> f64 {
    match apply(h, pair.from) {
        Some(p) => ((p[0] - pair.to[0]).powi(2) + (p[1] - pair.to[1]).powi(2)).sqrt(),
        None => f64::INFINITY,
    }
}

/// Outcome of [`ransac`]: the model refitted on all inliers, and which pairs they were.
#[derive(Debug, Clone)]
pub struct RansacFit {
    /// The homography refitted by least squares over the inliers.
    pub homography: Matrix3<f64>,
    /// One flag per input pair.
    pub inliers: Vec<bool>,
    /// Root-mean-square reprojection error over the inliers.
    pub rms_error: f64,
}

/// RANSAC over minimal four-point samples, then least squares over the consensus set (twice,
/// re-selecting inliers). `threshold` is the inlier distance in destination units. Deterministic:
/// samples come from a fixed-seed generator so results are reproducible.
pub fn ransac(pairs: &[PointPair], threshold: f64, iterations: usize) -> Option<RansacFit> {
    let n = pairs.len();
    if n < 4 {
        return None;
    }
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = |bound: usize| {
        // xorshift64*: plenty for choosing samples.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % bound
    };
    let mut best_count = 0;
    let mut best: Option<Matrix3<f64>> = None;
    for _ in 0..iterations {
        let mut idx = [0usize; 4];
        let mut k = 0;
        let mut guard = 0;
        while k < 4 && guard < 100 {
            guard += 1;
            let c = next(n);
            if !idx[..k].contains(&c) {
                idx[k] = c;
                k += 1;
            }
        }
        if k < 4 {
            continue;
        }
        let sample: Vec<PointPair> = idx.iter().map(|&i| pairs[i]).collect();
        if !spread_enough(&sample) {
            continue;
        }
        let Some(h) = fit(&sample) else { continue };
        let count = pairs.iter().filter(|p| reprojection_error(&h, p) < threshold).count();
        if count > best_count {
            best_count = count;
            best = Some(h);
        }
    }
    let mut h = best.or_else(|| fit(pairs))?;
    let mut inliers = vec![true; n];
    for _ in 0..3 {
        inliers = pairs.iter().map(|p| reprojection_error(&h, p) < threshold).collect();
        let chosen: Vec<PointPair> = pairs.iter().zip(&inliers).filter(|(_, &i)| i).map(|(p, _)| *p).collect();
        h = fit(&chosen)?;
    }
    inliers = pairs.iter().map(|p| reprojection_error(&h, p) < threshold).collect();
    let errors: Vec<f64> =
        pairs.iter().zip(&inliers).filter(|(_, &i)| i).map(|(p, _)| reprojection_error(&h, p)).collect();
    if errors.len() < 4 {
        return None;
    }
    let rms_error = (errors.iter().map(|e| e * e).sum::<f64>() / errors.len() as f64).sqrt();
    Some(RansacFit { homography: h, inliers, rms_error })
}

/// Rejects samples whose source points are nearly collinear (they give no stable homography).
fn spread_enough(sample: &[PointPair]) -> bool {
    for i in 0..sample.len() {
        for j in i + 1..sample.len() {
            for k in j + 1..sample.len() {
                let (a, b, c) = (sample[i].from, sample[j].from, sample[k].from);
                let area = ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])).abs();
                if area < 1.0 {
                    return false;
                }
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_h() -> Matrix3<f64> {
        Matrix3::new(30.0, 4.0, 200.0, -3.0, 26.0, 150.0, 0.0004, 0.002, 1.0)
    }

    fn grid_pairs(h: &Matrix3<f64>) -> Vec<PointPair> {
        let mut pairs = Vec::new();
        for r in 0..19 {
            for c in 0..19 {
                let from = [f64::from(c), f64::from(r)];
                if let Some(to) = apply(h, from) {
                    pairs.push(PointPair { from, to });
                }
            }
        }
        pairs
    }

    #[test]
    fn exact_fit_recovers_the_homography() {
        let h = sample_h();
        let fitted = fit(&grid_pairs(&h));
        let Some(fitted) = fitted else { panic!("no fit") };
        for p in grid_pairs(&h) {
            assert!(reprojection_error(&fitted, &p) < 1e-6);
        }
    }

    #[test]
    fn ransac_ignores_outliers() {
        let h = sample_h();
        let mut pairs = grid_pairs(&h);
        for (i, p) in pairs.iter_mut().enumerate() {
            if i % 4 == 0 {
                p.to[0] += 40.0 + (i % 7) as f64;
            }
        }
        let Some(fit) = ransac(&pairs, 2.0, 200) else { panic!("no fit") };
        let inliers = fit.inliers.iter().filter(|&&b| b).count();
        assert!(inliers >= pairs.len() * 3 / 4 - 1, "{inliers}");
        assert!(fit.rms_error < 1e-6);
    }

    #[test]
    fn too_few_points_is_none() {
        let pairs = grid_pairs(&sample_h());
        assert!(fit(&pairs[..3]).is_none());
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use crate::LensDistortion;
    use proptest::prelude::*;

    /// Homographies of boards seen from plausible cameras: scale, rotation, shear, translation
    /// and a moderate perspective term.
    fn camera_homography() -> impl Strategy<Value = Matrix3<f64>> {
        (10.0f64..60.0, -3.2f64..3.2, -0.2f64..0.2, 0.0f64..800.0, 0.0f64..600.0, -0.004f64..0.004, -0.004f64..0.004)
            .prop_map(|(s, angle, shear, tx, ty, px, py)| {
                let (c, si) = (angle.cos(), angle.sin());
                Matrix3::new(s * c, s * (shear - si), tx, s * si, s * c, ty, px, py, 1.0)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn fit_recovers_any_camera_homography(h in camera_homography()) {
            let mut pairs = Vec::new();
            for r in 0..19 {
                for c in 0..19 {
                    let from = [f64::from(c), f64::from(r)];
                    if let Some(to) = apply(&h, from) {
                        pairs.push(PointPair { from, to });
                    }
                }
            }
            // Skip views where the board crosses the horizon (not a picture of a board).
            let z_signs: Vec<bool> = pairs.iter().map(|p| (h * Vector3::new(p.from[0], p.from[1], 1.0)).z > 0.0).collect();
            prop_assume!(z_signs.iter().all(|&s| s) && pairs.len() == 361);
            let fitted = fit(&pairs);
            prop_assert!(fitted.is_some());
            if let Some(f) = fitted {
                for p in &pairs {
                    prop_assert!(reprojection_error(&f, p) < 1e-5);
                }
            }
        }

        #[test]
        fn lens_distort_and_undistort_are_inverse(k1 in -0.3f64..0.2, x in 0.0f64..1920.0, y in 0.0f64..1080.0) {
            let lens = LensDistortion { k1, ..LensDistortion::none(1920, 1080) };
            let d = lens.distort([x, y]);
            let back = lens.undistort(d);
            prop_assert!((back[0] - x).abs() < 1e-3 && (back[1] - y).abs() < 1e-3, "{:?} -> {:?} -> {:?}", [x, y], d, back);
        }
    }
}
