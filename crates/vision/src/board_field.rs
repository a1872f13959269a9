//! The board's light as a smooth field over the cell centres, fitted robustly, and the cells
//! brighter than it explains: a lamp's fall-off and a cast change the wood's colour slowly across
//! the board, while a stone's top leaning over a cell centre or a lamp's reflection changes it
//! abruptly.

use nalgebra::{SMatrix, SVector};

use crate::features::{luma, CELLS};

/// Terms of the field: 1, x, y, x², xy, y² over the board scaled to [−1, 1].
const TERMS: usize = 6;
/// Offset added before the logarithm (as in `features::colour_distance`), so dark cells do not
/// dominate the fit.
const LOG_EPS: f32 = 4.0;
/// Tukey's biweight constant, in robust spreads: the usual 95 %-efficiency choice.
const TUKEY_C: f64 = 4.685;
/// A cell further than this many robust spreads from the field is not the field's wood (the
/// usual three-sigma cut).
const INLIER_SPREADS: f64 = 3.0;
/// The smallest spread taken, in ln colour (a 2 % change): on an evenly lit, clean board the
/// measured spread can be tiny, and the wood's grain alone must not make cells outliers.
const MIN_SPREAD: f64 = 0.02;
/// Reweighting passes of the fit.
const PASSES: usize = 6;

/// For every cell centre (`j * CELLS + i`, as `BoardColour::cells`), whether it is brighter than
/// the fitted field by more than the wood varies; `None` when too few cells could be measured to
/// fit. Cells darker than `plausible_luma` × the board's luminance are never wood and never
/// fitted (false).
pub fn brighter_than_the_wood(cells: &[[f32; 3]], global: [f32; 3], plausible_luma: f32) -> Option<Vec<bool>> {
    let global_l = luma(global).max(1.0);
    // The inner cells that may be wood at all (as the local reference takes them).
    let samples: Vec<(usize, [f64; TERMS], [f64; 3])> = (1..CELLS - 1)
        .flat_map(|j| (1..CELLS - 1).map(move |i| (i, j)))
        .filter_map(|(i, j)| {
            let k = j * CELLS + i;
            let c = *cells.get(k)?;
            (c[0].is_finite() && luma(c) / global_l >= plausible_luma).then(|| (k, terms(i, j), ln_colour(c)))
        })
        .collect();
    if samples.len() < 4 * TERMS {
        return None;
    }
    // Start from the frame's board colour (a constant field) and reweight.
    let g = ln_colour(global);
    let mut coef: [SVector<f64, TERMS>; 3] = std::array::from_fn(|ch| {
        let mut v = SVector::<f64, TERMS>::zeros();
        v[0] = g[ch];
        v
    });
    let mut spread = MIN_SPREAD;
    for _ in 0..PASSES {
        let residuals: Vec<f64> = samples.iter().map(|(_, t, y)| residual(&coef, t, y)).collect();
        spread = robust_spread(&residuals).max(MIN_SPREAD);
        let mut ata = SMatrix::<f64, TERMS, TERMS>::zeros();
        let mut aty: [SVector<f64, TERMS>; 3] = [SVector::zeros(); 3];
        for ((_, t, y), r) in samples.iter().zip(&residuals) {
            let u = r / (TUKEY_C * spread);
            if u >= 1.0 {
                continue;
            }
            let w = (1.0 - u * u).powi(2);
            let tv = SVector::<f64, TERMS>::from_column_slice(t);
            ata += w * tv * tv.transpose();
            for ch in 0..3 {
                aty[ch] += w * y[ch] * tv;
            }
        }
        let Some(inverse) = ata.try_inverse() else {
            break;
        };
        coef = std::array::from_fn(|ch| inverse * aty[ch]);
    }
    let mut bright = vec![false; cells.len()];
    for (k, t, y) in &samples {
        let tv = SVector::<f64, TERMS>::from_column_slice(t);
        let field: [f32; 3] = std::array::from_fn(|ch| (coef[ch].dot(&tv).exp() as f32 - LOG_EPS).max(0.0));
        // Only what is brighter than the wood's light counts (a white top leaning over the cell):
        // darker cells (a hand, a sleeve, a shadow) stay references, as they were before the
        // field, so that what lies on them reads unlike any stone.
        bright[*k] = luma(cells[*k]) > luma(field) && residual(&coef, t, y) > INLIER_SPREADS * spread;
    }
    Some(bright)
}

/// The field's terms at cell centre (i, j).
fn terms(i: usize, j: usize) -> [f64; TERMS] {
    let half = (CELLS - 1) as f64 / 2.0;
    let (x, y) = ((i as f64 - half) / half, (j as f64 - half) / half);
    [1.0, x, y, x * x, x * y, y * y]
}

/// A colour as ln(channel + ε).
fn ln_colour(c: [f32; 3]) -> [f64; 3] {
    c.map(|v| f64::from((v + LOG_EPS).ln()))
}

/// Euclidean distance in ln colour between a cell and the field at its centre.
fn residual(coef: &[SVector<f64, TERMS>; 3], t: &[f64; TERMS], y: &[f64; 3]) -> f64 {
    let tv = SVector::<f64, TERMS>::from_column_slice(t);
    (0..3).map(|ch| (y[ch] - coef[ch].dot(&tv)).powi(2)).sum::<f64>().sqrt()
}

/// 1.4826 × the median absolute residual: the spread of the inliers, robust to the outliers.
fn robust_spread(residuals: &[f64]) -> f64 {
    let mut r = residuals.to_vec();
    if r.is_empty() {
        return 0.0;
    }
    let mid = r.len() / 2;
    r.select_nth_unstable_by(mid, f64::total_cmp);
    1.4826 * r[mid]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wood lit by a lamp to one side (a third brighter across the board), with a block of white
    /// tops and a dark sleeve over some cells.
    fn lit_board() -> Vec<[f32; 3]> {
        (0..CELLS * CELLS)
            .map(|k| {
                let (i, j) = (k % CELLS, k / CELLS);
                let light = 0.85 + 0.3 * i as f32 / CELLS as f32 + 0.01 * ((k * 7) % 5) as f32;
                if (4..8).contains(&i) && (4..8).contains(&j) {
                    [228.0, 226.0, 218.0]
                } else if (12..16).contains(&i) && (12..14).contains(&j) {
                    [110.0, 85.0, 70.0]
                } else {
                    [190.0 * light, 140.0 * light, 80.0 * light]
                }
            })
            .collect()
    }

    #[test]
    fn the_lamps_fall_off_is_wood_and_white_tops_are_brighter() {
        let cells = lit_board();
        let bright = brighter_than_the_wood(&cells, [190.0, 140.0, 80.0], 0.4).expect("enough cells to fit");
        for j in 1..CELLS - 1 {
            for i in 1..CELLS - 1 {
                let white = (4..8).contains(&i) && (4..8).contains(&j);
                // The sleeve is darker than the wood: not counted, as the reference keeps it.
                assert_eq!(bright[j * CELLS + i], white, "cell ({i}, {j})");
            }
        }
    }

    #[test]
    fn too_few_cells_fit_nothing() {
        let mut cells = vec![[f32::NAN; 3]; CELLS * CELLS];
        for cell in cells.iter_mut().take(30) {
            *cell = [190.0, 140.0, 80.0];
        }
        assert!(brighter_than_the_wood(&cells, [190.0, 140.0, 80.0], 0.4).is_none());
    }
}
