//! Things on the table besides boards and bowls: score sheets (printed on the table's surface),
//! game clocks (boxes with two displays) and loose stones. Ray tests and colours, in world
//! millimetres with the table top at z = −thickness.

use crate::camera::{add, scale, V3};
use crate::hand::srgb;
use crate::scene::Prop;
use tengen_rules::Stone;

/// A game clock's case: width, depth and height in millimetres.
const CLOCK_MM: [f64; 3] = [190.0, 80.0, 62.0];

/// A prop ready for ray tests.
pub(crate) enum PropBody {
    /// Paper lying flat on the table.
    Sheet { centre: [f64; 2], half: [f64; 2], cos: f64, sin: f64 },
    /// A box standing on the table.
    Clock { centre: [f64; 2], cos: f64, sin: f64, rgb: [f32; 3] },
    /// A stone lying on the table: its centre in the world.
    Stone { centre: V3, black: bool },
}

/// Where a ray meets a clock: the face's outward normal (world) and the point in the clock's
/// frame (x across, y toward the displays, z up from the table).
pub(crate) struct ClockHit {
    pub normal: V3,
    pub local: V3,
}

impl PropBody {
    pub(crate) fn new(prop: &Prop, table_z: f64, stone_half: f64) -> Option<PropBody> {
        let turn = |deg: f64| {
            let a = deg.to_radians();
            (a.cos(), a.sin())
        };
        Some(match *prop {
            Prop::Sheet { centre_mm, size_mm, angle_deg } => {
                let (cos, sin) = turn(angle_deg);
                PropBody::Sheet { centre: centre_mm, half: [size_mm[0].abs() / 2.0, size_mm[1].abs() / 2.0], cos, sin }
            }
            Prop::Clock { centre_mm, angle_deg, rgb } => {
                let (cos, sin) = turn(angle_deg);
                PropBody::Clock { centre: centre_mm, cos, sin, rgb: srgb(rgb) }
            }
            Prop::Stone { centre_mm, stone } => {
                if stone == Stone::Empty {
                    return None;
                }
                PropBody::Stone {
                    centre: [centre_mm[0], centre_mm[1], table_z + stone_half],
                    black: stone == Stone::BLACK,
                }
            }
        })
    }
}

/// (x, y) turned into a frame centred at `centre` and rotated by (cos, sin).
#[inline(always)]
fn local(p: [f64; 2], centre: [f64; 2], cos: f64, sin: f64) -> [f64; 2] {
    let (x, y) = (p[0] - centre[0], p[1] - centre[1]);
    [cos * x + sin * y, -sin * x + cos * y]
}

/// The printed colour of a score sheet at table point `p`, if a sheet lies there: white paper
/// ruled into a table of moves with a heading band.
pub(crate) fn sheet_albedo(props: &[PropBody], p: V3) -> Option<[f32; 3]> {
    for prop in props {
        let PropBody::Sheet { centre, half, cos, sin } = *prop else {
            continue;
        };
        let q = local([p[0], p[1]], centre, cos, sin);
        if q[0].abs() > half[0] || q[1].abs() > half[1] {
            continue;
        }
        let (u, v) = (q[0] + half[0], q[1] + half[1]);
        let paper = [0.93, 0.93, 0.9];
        let ink = [0.25, 0.25, 0.3];
        let inside = u > 12.0 && u < 2.0 * half[0] - 12.0 && v > 40.0 && v < 2.0 * half[1] - 15.0;
        let ruled =
            inside && ((v - 40.0).rem_euclid(8.0) < 0.5 || (u - 12.0).rem_euclid((2.0 * half[0] - 24.0) / 4.0) < 0.5);
        // A heading and a few handwritten-looking marks in the first rows.
        let heading = v > 15.0 && v < 28.0 && u > 20.0 && u < 2.0 * half[0] * 0.7;
        let writing = inside && v < 120.0 && (u * 0.9 + v * 0.3).sin() > 0.97;
        return Some(if ruled || writing {
            ink
        } else if heading {
            [0.45, 0.45, 0.5]
        } else {
            paper
        });
    }
    None
}

/// Ray against a clock standing on the table top at `table_z`: (t, hit).
pub(crate) fn hit_clock(prop: &PropBody, origin: V3, dir: V3, table_z: f64) -> Option<(f64, ClockHit)> {
    let PropBody::Clock { centre, cos, sin, .. } = *prop else {
        return None;
    };
    let o = local([origin[0], origin[1]], centre, cos, sin);
    let d = [cos * dir[0] + sin * dir[1], -sin * dir[0] + cos * dir[1]];
    let o = [o[0], o[1], origin[2] - table_z];
    let d = [d[0], d[1], dir[2]];
    let half = [CLOCK_MM[0] / 2.0, CLOCK_MM[1] / 2.0];
    // Slab method over x, y and z (0..height).
    let (mut t0, mut t1) = (f64::NEG_INFINITY, f64::INFINITY);
    let mut axis_in = (0usize, 0.0f64);
    for k in 0..3 {
        let (lo, hi) = if k == 2 { (0.0, CLOCK_MM[2]) } else { (-half[k], half[k]) };
        if d[k].abs() < 1e-12 {
            if o[k] < lo || o[k] > hi {
                return None;
            }
            continue;
        }
        let (mut a, mut b) = ((lo - o[k]) / d[k], (hi - o[k]) / d[k]);
        let mut sign = -1.0;
        if a > b {
            std::mem::swap(&mut a, &mut b);
            sign = 1.0;
        }
        if a > t0 {
            t0 = a;
            axis_in = (k, sign);
        }
        t1 = t1.min(b);
    }
    if t0 > t1 || t0 <= 0.0 {
        return None;
    }
    let mut n_local = [0.0; 3];
    n_local[axis_in.0] = axis_in.1;
    let normal = [cos * n_local[0] - sin * n_local[1], sin * n_local[0] + cos * n_local[1], n_local[2]];
    let p = add(o, scale(d, t0));
    Some((t0, ClockHit { normal, local: p }))
}

/// The clock's colour at a hit: the case, two grey-green displays with dark digits on the front
/// face (+y), two buttons on top.
pub(crate) fn clock_albedo(prop: &PropBody, hit: &ClockHit) -> [f32; 3] {
    let PropBody::Clock { rgb, .. } = *prop else {
        return [0.5; 3];
    };
    let [x, y, z] = hit.local;
    let front = y > CLOCK_MM[1] / 2.0 - 0.5;
    if front && z > 15.0 && z < 45.0 && x.abs() > 8.0 && x.abs() < 82.0 {
        // A display: light grey-green with dark segments.
        let segment = ((x.abs() - 8.0) % 18.0 > 4.0) && ((z - 15.0) % 15.0 < 2.5 || (x.abs() - 8.0) % 18.0 > 14.0);
        return if segment { [0.12, 0.14, 0.12] } else { [0.62, 0.68, 0.6] };
    }
    let top = z > CLOCK_MM[2] - 0.5;
    if top && (x.abs() - 50.0).abs() < 14.0 && y.abs() < 14.0 {
        return [0.15, 0.15, 0.16];
    }
    rgb
}
