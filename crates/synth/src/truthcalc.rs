//! Computes the ground truth of a frame from the camera and the placed stones.

use crate::camera::{add, apply_homography, board_mm, board_to_world, dot, mat_mul, norm, sub, Camera, V3};
use tengen_rules::BOARD_LINES;

use crate::position::Position;
use crate::scene::Scene;
use crate::truth::GroundTruth;

/// One clockwise quarter turn, as a map from seen board coordinates to physical ones.
const QUARTER: [[f64; 3]; 3] = [[0.0, 1.0, 0.0], [-1.0, 0.0, 18.0], [0.0, 0.0, 1.0]];
const IDENTITY: [[f64; 3]; 3] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// Offsets (in spacings) of the samples that decide whether a point is occluded.
const OCCLUSION_SAMPLES: [[f64; 2]; 5] = [[0.0, 0.0], [0.35, 0.0], [-0.35, 0.0], [0.0, 0.35], [0.0, -0.35]];

#[allow(clippy::too_many_arguments)]
pub(crate) fn ground_truth(
    position: &Position,
    camera: &Camera,
    scene: &Scene,
    hand_hit: &dyn Fn(V3, V3) -> Option<f64>,
    stone_centre: &dyn Fn(usize, usize) -> Option<V3>,
    stone_half: f64,
    hand_pixels: usize,
    hand_over_board: bool,
) -> GroundTruth {
    let h_phys = camera.board_homography();
    let lens = camera.lens;
    // Pick the quarter turn that puts the seen top-left corner nearest the image's top-left.
    let mut best = (f64::INFINITY, 0u8, IDENTITY);
    let mut m = IDENTITY;
    for k in 0..4u8 {
        let h = mat_mul(&h_phys, &m);
        let tl = lens.distort(apply_homography(&h, 0.0, 0.0));
        if tl[0] + tl[1] < best.0 - 1e-9 {
            best = (tl[0] + tl[1], k, m);
        }
        m = mat_mul(&m, &QUARTER);
    }
    let (_, turns, to_phys) = best;
    let homography = mat_mul(&h_phys, &to_phys);
    let seen = position.rotated(turns);
    let n = BOARD_LINES * BOARD_LINES;
    let mut intersections = Vec::with_capacity(n);
    let mut stone_tops = Vec::with_capacity(n);
    let mut occluded = Vec::with_capacity(n);
    let mut in_frame = Vec::with_capacity(n);
    let (w, h) = (f64::from(scene.width), f64::from(scene.height));
    for row in 0..BOARD_LINES {
        for col in 0..BOARD_LINES {
            let px = lens.distort(apply_homography(&homography, col as f64, row as f64));
            intersections.push(px);
            in_frame.push(px[0] >= 0.0 && px[1] >= 0.0 && px[0] < w && px[1] < h);
            let phys = apply_homography(&to_phys, col as f64, row as f64);
            let (pc, pr) = (phys[0].round() as usize, phys[1].round() as usize);
            let centre = stone_centre(pc, pr);
            stone_tops.push(centre.map(|c| camera.project([c[0], c[1], 2.0 * stone_half])));
            // A point is occluded when a hand lies in front of any of a few samples around it
            // (at stone-top height where there is a stone).
            let base = centre
                .map(|c| [c[0], c[1], 2.0 * stone_half * 0.9])
                .unwrap_or_else(|| board_to_world(pc as f64, pr as f64));
            let hidden = OCCLUSION_SAMPLES.iter().any(|o| {
                let target = add(base, [o[0] * board_mm::SPACING_X, o[1] * board_mm::SPACING_Y, 0.0]);
                let to = sub(target, camera.position);
                let dist = dot(to, to).sqrt();
                hand_hit(camera.position, norm(to)).is_some_and(|t| t < dist - 0.5)
            });
            occluded.push(hidden);
        }
    }
    let last = (BOARD_LINES - 1) as f64;
    let corner = |c: f64, r: f64| lens.distort(apply_homography(&homography, c, r));
    GroundTruth {
        width: scene.width,
        height: scene.height,
        grid: seen.to_rows(),
        physical_grid: position.to_rows(),
        quarter_turns: turns,
        corners: [corner(0.0, 0.0), corner(last, 0.0), corner(last, last), corner(0.0, last)],
        intersections,
        homography,
        lens,
        stone_tops,
        occluded,
        in_frame,
        hand_present: hand_pixels > 0,
        hand_over_board,
        hand_fraction: hand_pixels as f64 / (w * h),
    }
}
