//! Hands and forearms as unions of capsules in world millimetres: an index and middle finger
//! reaching to the fingertip point (where a stone is held), curled ring and little fingers, a
//! thumb, a palm and a sleeved forearm rising toward the player.

use tengen_rules::Stone;

use crate::camera::{add, board_mm, board_to_world, dot, norm, scale, sub, V3};
use crate::scene::{Hand, Side};

/// A capsule: the points within `radius` of the segment a–b.
#[derive(Debug, Clone)]
pub(crate) struct Capsule {
    pub a: V3,
    pub b: V3,
    pub radius: f64,
    /// Sleeve cloth rather than skin.
    pub sleeve: bool,
    /// A fingertip segment (ends at `b`): draws a nail on its upper side.
    pub nail: bool,
    /// One of the palm's bars: shaded with a flattened normal so the bars read as one surface.
    pub palm: bool,
}

impl Capsule {
    /// A capsule of bare skin (no nail, not a palm bar).
    fn skin(a: V3, b: V3, radius: f64) -> Self {
        Capsule { a, b, radius, sleeve: false, nail: false, palm: false }
    }
}

/// One hand ready for ray tests.
#[derive(Debug, Clone)]
pub(crate) struct HandGeometry {
    pub capsules: Vec<Capsule>,
    /// Held stone: centre, black?
    pub held: Option<(V3, bool)>,
    pub skin: [f32; 3],
    pub sleeve: [f32; 3],
    /// Displacement during the exposure (motion blur), world mm.
    pub motion: V3,
    /// Bounding sphere of the skin parts and the held stone (sleeves are tested one by one).
    pub bound_centre: V3,
    pub bound_radius: f64,
}

pub(crate) fn srgb(c: [u8; 3]) -> [f32; 3] {
    c.map(|v| f32::from(v) / 255.0)
}

impl HandGeometry {
    pub fn build(hand: &Hand) -> HandGeometry {
        let tip_board = board_to_world(hand.target[0], hand.target[1]);
        let lift = hand.lift_mm.max(6.0);
        let tip = add(tip_board, [0.0, 0.0, lift]);
        // Where the player's body is: well beyond the edge the arm crosses.
        let along = hand.along;
        let (col, row) = (along.unwrap_or(hand.target[0]), along.unwrap_or(hand.target[1]));
        let body = match hand.side {
            Side::South => [board_to_world(col, 0.0)[0], board_mm::HALF_L + 450.0, 0.0],
            Side::North => [board_to_world(col, 0.0)[0], -board_mm::HALF_L - 450.0, 0.0],
            Side::East => [board_mm::HALF_W + 450.0, board_to_world(0.0, row)[1], 0.0],
            Side::West => [-board_mm::HALF_W - 450.0, board_to_world(0.0, row)[1], 0.0],
        };
        let mut u = norm([tip[0] - body[0], tip[1] - body[1], 0.0]);
        if dot(u, u) < 0.5 {
            u = [0.0, -1.0, 0.0];
        }
        let s = [-u[1], u[0], 0.0];
        let z = [0.0, 0.0, 1.0];
        // Offsets in the hand frame: (along u, along s, up).
        let at = |fu: f64, fs: f64, fz: f64| add(add(add(tip, scale(u, fu)), scale(s, fs)), scale(z, fz));
        let skin = Capsule::skin;
        let tip = |a: V3, b: V3, radius: f64| Capsule { nail: true, ..Capsule::skin(a, b, radius) };
        let palm = |a: V3, b: V3, radius: f64| Capsule { palm: true, ..Capsule::skin(a, b, radius) };
        let sleeve = |a: V3, b: V3, radius: f64| Capsule { sleeve: true, ..Capsule::skin(a, b, radius) };
        let knuckle = |fs: f64| at(-62.0, fs, 22.0);
        let mut capsules = vec![
            // Index finger: knuckle, middle joint, tip.
            skin(knuckle(-18.0), at(-28.0, -10.0, 10.0), 8.5),
            tip(at(-28.0, -10.0, 10.0), at(-2.0, -6.0, 1.0), 8.0),
            // Middle finger, slightly longer, on top of the held stone.
            skin(knuckle(3.0), at(-24.0, 5.0, 14.0), 8.5),
            tip(at(-24.0, 5.0, 14.0), at(4.0, 5.0, 6.0), 8.0),
            // Ring and little fingers curled under the palm.
            skin(knuckle(22.0), at(-38.0, 23.0, 6.0), 8.0),
            skin(at(-38.0, 23.0, 6.0), at(-52.0, 22.0, 0.0), 7.5),
            skin(knuckle(39.0), at(-48.0, 39.0, 8.0), 7.0),
            skin(at(-48.0, 39.0, 8.0), at(-60.0, 37.0, 4.0), 6.5),
            // Thumb along the index finger's side.
            skin(at(-125.0, -30.0, 26.0), at(-78.0, -38.0, 14.0), 11.0),
            tip(at(-78.0, -38.0, 14.0), at(-48.0, -26.0, 8.0), 9.5),
            // Palm as parallel bars.
            palm(at(-130.0, -24.0, 38.0), knuckle(-18.0), 16.0),
            palm(at(-132.0, 2.0, 40.0), knuckle(5.0), 17.0),
            palm(at(-130.0, 26.0, 38.0), knuckle(31.0), 16.0),
            // Fill between the bars so the palm reads as one surface, not ridges.
            palm(at(-131.0, -11.0, 39.0), knuckle(-7.0), 16.5),
            palm(at(-131.0, 14.0, 39.0), knuckle(17.0), 16.5),
            // Wrist and bare forearm.
            skin(at(-140.0, 0.0, 42.0), at(-200.0, 0.0, 62.0), 27.0),
        ];
        // Sleeve: from just above the wrist to the elbow and beyond, rising toward the player.
        capsules.push(sleeve(at(-195.0, 0.0, 62.0), at(-520.0, 0.0, 200.0), 40.0));
        capsules.push(sleeve(at(-520.0, 0.0, 200.0), at(-900.0, 0.0, 330.0), 46.0));
        let held = hand.holding.and_then(|stone| match stone {
            Stone::BLACK => Some((at(4.0, 0.0, -6.0), true)),
            Stone::WHITE => Some((at(4.0, 0.0, -6.0), false)),
            Stone::Empty => None,
        });
        let skin_parts: Vec<&Capsule> = capsules.iter().filter(|c| !c.sleeve).collect();
        let count = (2 * skin_parts.len()).max(1) as f64;
        let sum = skin_parts.iter().fold([0.0; 3], |acc, c| add(acc, add(c.a, c.b)));
        let bound_centre = scale(sum, 1.0 / count);
        let mut bound_radius = skin_parts
            .iter()
            .map(|c| {
                let da = sub(c.a, bound_centre);
                let db = sub(c.b, bound_centre);
                dot(da, da).sqrt().max(dot(db, db).sqrt()) + c.radius
            })
            .fold(0.0, f64::max);
        if let Some((centre, _)) = held {
            let d = sub(centre, bound_centre);
            bound_radius = bound_radius.max(dot(d, d).sqrt() + 15.0);
        }
        let motion = hand.motion_mm;
        // The bounding sphere must hold the hand throughout the exposure.
        bound_radius += 0.5 * dot(motion, motion).sqrt();
        HandGeometry {
            capsules,
            held,
            skin: srgb(hand.skin_rgb),
            sleeve: srgb(hand.sleeve_rgb),
            motion,
            bound_centre,
            bound_radius,
        }
    }

    /// Whether the ray `origin + s·dir` (s ≥ 0, dir unit) passes within `margin(s)` of the
    /// skin parts' bounding sphere.
    pub fn ray_near_bound(&self, origin: V3, dir: V3, margin: impl Fn(f64) -> f64) -> bool {
        let oc = sub(self.bound_centre, origin);
        let s = dot(oc, dir).max(0.0);
        let closest = sub(oc, scale(dir, s));
        let reach = self.bound_radius + margin(s);
        dot(closest, closest) <= reach * reach
    }
}

/// Ray–capsule intersection (nearest t > 0), after Inigo Quilez.
pub(crate) fn ray_capsule(origin: V3, dir: V3, cap: &Capsule) -> Option<f64> {
    let ba = sub(cap.b, cap.a);
    let oa = sub(origin, cap.a);
    let baba = dot(ba, ba);
    let bard = dot(ba, dir);
    let baoa = dot(ba, oa);
    let rdoa = dot(dir, oa);
    let oaoa = dot(oa, oa);
    let r2 = cap.radius * cap.radius;
    let a = baba - bard * bard;
    let b = baba * rdoa - baoa * bard;
    let c = baba * oaoa - baoa * baoa - r2 * baba;
    let h = b * b - a * c;
    if h >= 0.0 && a.abs() > 1e-12 {
        let t = (-b - h.sqrt()) / a;
        let y = baoa + t * bard;
        if y > 0.0 && y < baba {
            return (t > 0.0).then_some(t);
        }
        let oc = if y <= 0.0 { oa } else { sub(origin, cap.b) };
        let b = dot(dir, oc);
        let c = dot(oc, oc) - r2;
        let h = b * b - c;
        if h > 0.0 {
            let t = -b - h.sqrt();
            return (t > 0.0).then_some(t);
        }
    }
    None
}

/// Position along a capsule's axis of a surface point: 0 at `a`, 1 at `b`.
pub(crate) fn capsule_param(p: V3, cap: &Capsule) -> f64 {
    let ba = sub(cap.b, cap.a);
    (dot(sub(p, cap.a), ba) / dot(ba, ba)).clamp(0.0, 1.0)
}

/// Outward normal of a capsule at a surface point.
pub(crate) fn capsule_normal(p: V3, cap: &Capsule) -> V3 {
    let ba = sub(cap.b, cap.a);
    let pa = sub(p, cap.a);
    let h = (dot(pa, ba) / dot(ba, ba)).clamp(0.0, 1.0);
    norm(sub(pa, scale(ba, h)))
}

/// Distance from the ray `origin + s·dir` (s ≥ 0) to the capsule's segment, and the ray
/// parameter of the closest approach.
pub(crate) fn ray_segment_distance(origin: V3, dir: V3, cap: &Capsule) -> (f64, f64) {
    let ba = sub(cap.b, cap.a);
    let w = sub(origin, cap.a);
    let (a, b, c) = (dot(dir, dir), dot(dir, ba), dot(ba, ba));
    let (d, e) = (dot(dir, w), dot(ba, w));
    let denom = a * c - b * b;
    let mut seg = if denom.abs() > 1e-9 { ((a * e - b * d) / denom).clamp(0.0, 1.0) } else { 0.0 };
    let mut s = ((b * seg - d) / a).max(0.0);
    // Re-project onto the segment for the clamped ray parameter.
    seg = ((dot(add(w, scale(dir, s)), ba)) / c).clamp(0.0, 1.0);
    s = ((b * seg - d) / a).max(0.0);
    let p = add(origin, scale(dir, s));
    let q = add(cap.a, scale(ba, seg));
    let diff = sub(p, q);
    (dot(diff, diff).sqrt(), s)
}
