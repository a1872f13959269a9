//! Camera maths: a pinhole camera posed above the board, the division-model lens, and the
//! board→image homography. The lens is vision's own division model
//! ([`tengen_vision::LensDistortion`]), so ground truth is in vision's terms.

use tengen_vision::LensDistortion;

use crate::scene::{CameraPose, Scene};

/// Physical board dimensions in millimetres (a standard Japanese-size 19×19 board).
pub mod board_mm {
    /// Distance between columns.
    pub const SPACING_X: f64 = 22.0;
    /// Distance between rows (boards are slightly longer than wide so the grid looks square
    /// from a seated player's oblique view).
    pub const SPACING_Y: f64 = 23.7;
    /// Usual wooden margin beyond the outer line, left/right (a scene may set another).
    pub const MARGIN_X: f64 = 15.0;
    /// Usual wooden margin beyond the outer line, top/bottom.
    pub const MARGIN_Y: f64 = 15.0;
    /// Half width of a board with the usual margin.
    pub const HALF_W: f64 = 9.0 * SPACING_X + MARGIN_X;
    /// Half length of a board with the usual margin.
    pub const HALF_L: f64 = 9.0 * SPACING_Y + MARGIN_Y;
}

/// The lens of a camera rendering an image of the given size with coefficient `k1`: centred,
/// normalised by half the image diagonal.
pub(crate) fn centred_lens(width: u32, height: u32, k1: f64) -> LensDistortion {
    LensDistortion { k1, ..LensDistortion::none(width, height) }
}

/// Most barrel distortion rendered (stronger values are clamped): beyond this the division model
/// folds the image corners back.
pub const MIN_K1: f64 = -0.4;
/// Most pincushion distortion rendered (stronger values are clamped).
pub const MAX_K1: f64 = 0.1;

/// A 3-vector of f64 (world millimetres or directions).
pub type V3 = [f64; 3];

/// Vector helpers.
#[inline(always)]
pub(crate) fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
#[inline(always)]
pub(crate) fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
#[inline(always)]
pub(crate) fn scale(a: V3, s: f64) -> V3 {
    [a[0] * s, a[1] * s, a[2] * s]
}
#[inline(always)]
pub(crate) fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
#[inline(always)]
pub(crate) fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}
#[inline(always)]
pub(crate) fn norm(a: V3) -> V3 {
    let l = dot(a, a).sqrt();
    if l > 0.0 {
        scale(a, 1.0 / l)
    } else {
        a
    }
}

/// World frame: millimetres, origin at the board centre on the playing surface, x toward
/// column 18, y toward row 18, z up. A pinhole camera with square pixels and principal point at
/// the image centre, plus the division-model lens.
#[derive(Debug, Clone)]
pub struct Camera {
    /// Camera centre in the world.
    pub position: V3,
    /// Image x axis in the world.
    pub right: V3,
    /// Image y axis in the world.
    pub down: V3,
    /// View axis in the world.
    pub forward: V3,
    /// Focal length in pixels.
    pub focal: f64,
    /// Principal point.
    pub centre: [f64; 2],
    /// The lens.
    pub lens: LensDistortion,
}

impl Camera {
    /// Poses the camera as the scene asks: aim, tilt, roll, then a distance that makes the board
    /// fill the frame as asked, then the off-centre shift.
    pub fn from_scene(scene: &Scene) -> Camera {
        let pose: &CameraPose = &scene.camera;
        let (w, h) = (f64::from(scene.width.max(1)), f64::from(scene.height.max(1)));
        let fov = pose.fov_deg.clamp(10.0, 150.0).to_radians();
        let focal = (w / 2.0) / (fov / 2.0).tan();
        let tilt = pose.tilt_deg.clamp(0.0, 80.0).to_radians();
        let az = pose.azimuth_deg.to_radians();
        // Horizontal direction from the board toward where the camera stands (0 = south, +y).
        let toward_camera = [-az.sin(), az.cos(), 0.0];
        let view_back = [toward_camera[0] * tilt.sin(), toward_camera[1] * tilt.sin(), tilt.cos()];
        let forward = scale(view_back, -1.0);
        // Image "down" points toward the camera's side of the board; right = forward × down
        // keeps the image unmirrored for our x-right, y-down-the-diagram, z-up world.
        let down0 = norm(add(toward_camera, scale(forward, -dot(toward_camera, forward))));
        let right0 = norm(cross(forward, down0));
        let roll = pose.roll_deg.to_radians();
        let (s, c) = roll.sin_cos();
        let right = add(scale(right0, c), scale(down0, s));
        let down = add(scale(down0, c), scale(right0, -s));
        let lens = centred_lens(scene.width, scene.height, scene.lens_k1.clamp(MIN_K1, MAX_K1));
        let mut camera = Camera {
            position: scale(view_back, 1000.0),
            right,
            down,
            forward,
            focal,
            centre: [w / 2.0, h / 2.0],
            lens,
        };
        // Distance: scale until the board's extent matches the requested fill.
        let fill = pose.board_fill.clamp(0.1, 3.0);
        let mut distance = 1000.0;
        for _ in 0..6 {
            camera.position = scale(view_back, distance);
            let corners = board_outline(scene.board.half_extent()).map(|p| camera.project_undistorted(p));
            let (min_x, max_x) = extent(corners.iter().map(|p| p[0]));
            let (min_y, max_y) = extent(corners.iter().map(|p| p[1]));
            let current = ((max_x - min_x) / w).max((max_y - min_y) / h);
            if current > 0.0 {
                distance *= current / fill;
            }
        }
        camera.position = scale(view_back, distance);
        // Off-centre: slide the camera parallel to its image plane.
        let shift = add(
            scale(right, -pose.offset[0] * w * distance / focal),
            scale(down, -pose.offset[1] * h * distance / focal),
        );
        camera.position = add(camera.position, shift);
        camera
    }

    /// Undistorted pixel of a world point (no lens); points behind the camera give non-finite
    /// values.
    pub fn project_undistorted(&self, p: V3) -> [f64; 2] {
        let d = sub(p, self.position);
        let z = dot(d, self.forward);
        [self.centre[0] + self.focal * dot(d, self.right) / z, self.centre[1] + self.focal * dot(d, self.down) / z]
    }

    /// Image pixel of a world point, through the lens.
    pub fn project(&self, p: V3) -> [f64; 2] {
        self.lens.distort(self.project_undistorted(p))
    }

    /// Unit ray direction (world) through an image pixel.
    pub fn ray(&self, pixel: [f64; 2]) -> V3 {
        let u = self.lens.undistort(pixel);
        let a = (u[0] - self.centre[0]) / self.focal;
        let b = (u[1] - self.centre[1]) / self.focal;
        norm(add(add(scale(self.right, a), scale(self.down, b)), self.forward))
    }

    /// Homography from physical board coordinates (col, row, 1) to undistorted pixels,
    /// normalised so the bottom-right entry is 1.
    pub fn board_homography(&self) -> [[f64; 3]; 3] {
        use board_mm::{SPACING_X, SPACING_Y};
        // Columns of K·[R | -R·C] applied to the board→world affine map.
        let to_image = |v: V3| -> V3 {
            let (x, y, z) = (dot(v, self.right), dot(v, self.down), dot(v, self.forward));
            [self.focal * x + self.centre[0] * z, self.focal * y + self.centre[1] * z, z]
        };
        let c0 = to_image([SPACING_X, 0.0, 0.0]);
        let c1 = to_image([0.0, SPACING_Y, 0.0]);
        let c2 = to_image(sub([-9.0 * SPACING_X, -9.0 * SPACING_Y, 0.0], self.position));
        let n = c2[2];
        [[c0[0] / n, c1[0] / n, c2[0] / n], [c0[1] / n, c1[1] / n, c2[1] / n], [c0[2] / n, c1[2] / n, 1.0]]
    }
}

/// World position of a physical board coordinate on the playing surface.
pub fn board_to_world(col: f64, row: f64) -> V3 {
    [(col - 9.0) * board_mm::SPACING_X, (row - 9.0) * board_mm::SPACING_Y, 0.0]
}

/// The four corners of the board's top surface, given its half width and half length.
fn board_outline([half_w, half_l]: [f64; 2]) -> [V3; 4] {
    [[-half_w, -half_l, 0.0], [half_w, -half_l, 0.0], [half_w, half_l, 0.0], [-half_w, half_l, 0.0]]
}

fn extent(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)))
}

/// Applies a row-major homography to (x, y).
pub fn apply_homography(h: &[[f64; 3]; 3], x: f64, y: f64) -> [f64; 2] {
    let w = h[2][0] * x + h[2][1] * y + h[2][2];
    [(h[0][0] * x + h[0][1] * y + h[0][2]) / w, (h[1][0] * x + h[1][1] * y + h[1][2]) / w]
}

/// Product of two row-major 3×3 matrices.
pub fn mat_mul(a: &[[f64; 3]; 3], b: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let mut out = [[0.0; 3]; 3];
    for (i, row) in out.iter_mut().enumerate() {
        for (j, cell) in row.iter_mut().enumerate() {
            *cell = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn distort_and_undistort_undo_each_other_over_the_image(
            k1 in -0.4f64..0.1, x in 0.0f64..1920.0, y in 0.0f64..1080.0,
        ) {
            let lens = centred_lens(1920, 1080, k1);
            type Map = fn(&LensDistortion, [f64; 2]) -> [f64; 2];
            let (distort, undistort): (Map, Map) = (LensDistortion::distort, LensDistortion::undistort);
            for (there, back) in [(distort, undistort), (undistort, distort)] {
                let moved = there(&lens, [x, y]);
                let returned = back(&lens, moved);
                prop_assert!(
                    (returned[0] - x).abs() < 1e-6 && (returned[1] - y).abs() < 1e-6,
                    "{x},{y} -> {moved:?} -> {returned:?}"
                );
            }
        }

        #[test]
        fn homography_matches_camera_projection(
            tilt in 0.0f64..45.0, az in -180.0f64..180.0, roll in -180.0f64..180.0,
            col in -1.0f64..19.0, row in -1.0f64..19.0,
        ) {
            let mut scene = Scene::default();
            scene.camera.tilt_deg = tilt;
            scene.camera.azimuth_deg = az;
            scene.camera.roll_deg = roll;
            let cam = Camera::from_scene(&scene);
            let h = cam.board_homography();
            let via_h = apply_homography(&h, col, row);
            let direct = cam.project_undistorted(board_to_world(col, row));
            prop_assert!((via_h[0] - direct[0]).abs() < 1e-6 && (via_h[1] - direct[1]).abs() < 1e-6);
            // And the ray through that pixel comes back to the same board point.
            let pixel = cam.lens.distort(direct);
            let ray = cam.ray(pixel);
            let t = -cam.position[2] / ray[2];
            let hit = add(cam.position, scale(ray, t));
            let expect = board_to_world(col, row);
            prop_assert!((hit[0] - expect[0]).abs() < 1e-3 && (hit[1] - expect[1]).abs() < 1e-3);
        }
    }

    #[test]
    fn overhead_camera_sees_row_zero_at_top_and_column_zero_left() {
        let cam = Camera::from_scene(&Scene {
            camera: CameraPose { tilt_deg: 0.0, ..CameraPose::default() },
            ..Scene::default()
        });
        let tl = cam.project(board_to_world(0.0, 0.0));
        let br = cam.project(board_to_world(18.0, 18.0));
        assert!(tl[0] < br[0] && tl[1] < br[1], "{tl:?} {br:?}");
        assert!((tl[0] + br[0] - 1920.0).abs() < 1.0, "board centred");
    }
}
