//! The renderer: inverse mapping from each output pixel through the lens and camera into a small
//! 3D scene (table, board box with grid, ellipsoid stones, capsule hands), then camera effects.

use image::RgbImage;

use crate::board::{ray_stone, BoardBody, BoxHit};
use crate::camera::{add, dot, norm, scale, sub, Camera, V3};
use crate::hand::{capsule_normal, capsule_param, ray_capsule, ray_segment_distance, srgb, HandGeometry};
use crate::noise::Noise2;
use crate::position::Position;
use crate::props::{clock_albedo, hit_clock, sheet_albedo, PropBody};
use crate::scene::{Scene, StoneColours};
use crate::texture::Table;
use crate::truth::GroundTruth;
use crate::SynthError;
use tengen_rules::{Stone, BOARD_LINES};

/// Largest accepted image side, to refuse absurd requests before allocating.
pub const MAX_SIDE: u32 = 8192;

/// Samples over the exposure where a moving hand may appear (stratified, jittered per pixel so
/// the blur reads as a smear with a little grain rather than as ghost copies).
const MOTION_SAMPLES: usize = 8;

/// The k-th of `n` stratified moments of the exposure (−½…½) for pixel `index`.
fn exposure_moment(index: usize, k: usize, n: usize) -> f64 {
    let jitter = (crate::noise::hash2(index as u64, k as u64) >> 11) as f64 / (1u64 << 53) as f64;
    (k as f64 + jitter) / n as f64 - 0.5
}

/// Most threads one render uses.
const MAX_THREADS: usize = 8;

/// A rendered frame with its exact ground truth.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The frame (8-bit sRGB).
    pub image: RgbImage,
    /// What the frame shows, exactly.
    pub truth: GroundTruth,
    /// JPEG quality from the scene, used by [`Rendered::jpeg`].
    pub jpeg_quality: u8,
}

impl Rendered {
    /// The frame as JPEG bytes at the scene's quality (what a camera would send).
    pub fn jpeg(&self) -> Vec<u8> {
        crate::encode_jpeg(&self.image, self.jpeg_quality)
    }
}

/// Hand shadows: penumbra half-width at contact, and its growth per millimetre between the hand
/// and the surface (a lamp about 15 cm wide, 1.6 m away).
const SHADOW_PENUMBRA_MM: f64 = 1.5;
const SHADOW_SOFTNESS: f64 = 0.08;

/// An axis-aligned 2D box.
#[derive(Debug, Clone, Copy)]
struct Box2 {
    min: [f64; 2],
    max: [f64; 2],
}

impl Box2 {
    const EVERYTHING: Box2 = Box2 { min: [f64::NEG_INFINITY; 2], max: [f64::INFINITY; 2] };
    const EMPTY: Box2 = Box2 { min: [f64::INFINITY; 2], max: [f64::NEG_INFINITY; 2] };

    fn grow(&mut self, p: [f64; 2], margin: f64) {
        self.min = [self.min[0].min(p[0] - margin), self.min[1].min(p[1] - margin)];
        self.max = [self.max[0].max(p[0] + margin), self.max[1].max(p[1] + margin)];
    }

    #[inline(always)]
    fn contains(&self, p: [f64; 2]) -> bool {
        p[0] >= self.min[0] && p[0] <= self.max[0] && p[1] >= self.min[1] && p[1] <= self.max[1]
    }
}

/// Conservative boxes for one hand part (a capsule, or a sphere when a = b).
#[derive(Debug, Clone, Copy)]
struct PartBoxes {
    /// Where the part can appear in the image (pixels).
    image: Box2,
    /// Where its shadow can fall on the board or table (world x, y in mm).
    shadow: Box2,
    /// Where it blocks the sky (light from the room above): straight below it, widened.
    sky: Box2,
}

impl PartBoxes {
    /// `motion`: the part moves by this much during the exposure (centred on its position).
    fn new(camera: &Camera, lamp: V3, thickness: f64, a: V3, b: V3, radius: f64, motion: V3) -> Self {
        const STEPS: usize = 16;
        let mut image = Box2::EMPTY;
        let mut shadow = Box2::EMPTY;
        let mut sky = Box2::EMPTY;
        let moving = dot(motion, motion) > 0.0;
        let shifts: &[f64] = if moving { &[-0.5, 0.0, 0.5] } else { &[0.0] };
        for i in 0..=STEPS {
            for &shift in shifts {
                let p = add(add(a, scale(sub(b, a), i as f64 / STEPS as f64)), scale(motion, shift));
                // Parts high above the board block too little of the sky to matter.
                if p[2] - radius < SKY_MAX_HEIGHT_MM {
                    sky.grow([p[0], p[1]], radius + SKY_PENUMBRA_MM + SKY_SOFTNESS * (p[2] + thickness).max(0.0) + 5.0);
                }
                let depth = dot(sub(p, camera.position), camera.forward);
                if depth <= radius + 1.0 {
                    image = Box2::EVERYTHING;
                } else {
                    // Lens distortion changes scale by well under 1.5×; the margin covers it.
                    let margin = 1.5 * radius * camera.focal / (depth - radius) + 3.0;
                    let px = camera.project(p);
                    if px[0].is_finite() && px[1].is_finite() {
                        image.grow(px, margin);
                    } else {
                        image = Box2::EVERYTHING;
                    }
                }
                if p[2] + radius >= lamp[2] - 1.0 {
                    shadow = Box2::EVERYTHING;
                    continue;
                }
                for plane in [0.0, -thickness] {
                    let k = (lamp[2] - plane) / (lamp[2] - p[2]);
                    let q = [lamp[0] + (p[0] - lamp[0]) * k, lamp[1] + (p[1] - lamp[1]) * k];
                    let height = (p[2] - plane).max(0.0);
                    let margin = radius * k * 1.2 + SHADOW_PENUMBRA_MM + SHADOW_SOFTNESS * height * 2.0 + 5.0;
                    shadow.grow(q, margin);
                }
            }
        }
        PartBoxes { image, shadow, sky }
    }
}

/// Sky occlusion under hands: the room's diffuse light is blocked softly below a hand.
const SKY_PENUMBRA_MM: f64 = 4.0;
const SKY_SOFTNESS: f64 = 0.8;
const SKY_STRENGTH: f64 = 0.6;
const SKY_MAX_HEIGHT_MM: f64 = 120.0;

/// The nearest surface a ray meets.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Hit {
    /// Nothing below the horizon: the room's wall.
    Nothing,
    /// Stone `index` on board `board` (0 = ours, then the neighbours).
    Stone { board: usize, index: usize },
    /// A part of hand `hand`.
    Hand { hand: usize, part: HandPart },
    /// The playing surface of board `board`.
    BoardTop { board: usize },
    /// One of a board's vertical sides, with its outward normal in the board's frame.
    BoardSide { board: usize, normal: V3 },
    /// The table under the boards (and the sheets lying on it).
    Table,
    /// A clock standing on the table: prop `index`, the face's normal and the point in the
    /// clock's frame.
    Clock { index: usize, normal: V3, local: V3 },
    /// A stone lying on the table (prop `index`).
    LooseStone { index: usize },
    /// Bowl `index`, the part met and the surface normal there.
    Bowl { index: usize, part: BowlPart, normal: V3 },
}

/// Which part of a hand a ray meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HandPart {
    /// Capsule `c` of the hand (finger, palm, forearm or sleeve).
    Capsule(usize),
    /// The stone held between the fingertips.
    HeldStone,
}

/// The view and light of one sample ray, shared by the shading of every surface.
struct RayLight {
    /// Unit vector from the surface back to the camera.
    view: V3,
    /// Unit vector from the surface to the lamp.
    to_lamp: V3,
    /// Share of the room's light that is ambient.
    ambient: f64,
    /// Gain of the lamp's direct light.
    direct_gain: f64,
    /// Moment within the exposure (−½…½), for moving hands.
    tau: f64,
}

impl RayLight {
    /// Direct lamp light on a surface with unit `normal` (cosine law, no shadows).
    #[inline(always)]
    fn lamp_light(&self, normal: V3) -> f64 {
        dot(normal, self.to_lamp).max(0.0)
    }
}

/// What a ray hit, for anti-aliasing decisions.
type ObjectId = u32;
const ID_TABLE: ObjectId = 1;
const ID_BOARD: ObjectId = 2;
const ID_SIDE: ObjectId = 3;
const ID_BOWL: ObjectId = 10;
const ID_PROP: ObjectId = 500;
/// Neighbouring boards' tops and sides: `ID_NEIGHBOUR + 2 × board (+ 1 for the side)`.
const ID_NEIGHBOUR: ObjectId = 50;
const ID_STONE: ObjectId = 1000;
/// Stone ids of one board: `ID_STONE + STONE_IDS × board + stone`.
const STONE_IDS: ObjectId = 400;
const ID_HAND: ObjectId = 100_000;
const ID_HELD: ObjectId = 200_000;

struct World<'a> {
    scene: &'a Scene,
    camera: Camera,
    /// Our board first, then the neighbours' boards.
    boards: Vec<BoardBody>,
    props: Vec<PropBody>,
    hands: Vec<HandGeometry>,
    /// Per hand, per capsule (then the held stone): image-space box of the part and board-plane
    /// box of its shadow, so most pixels skip the hand tests.
    hand_boxes: Vec<Vec<PartBoxes>>,
    /// Image region where some moving hand may appear: those pixels get several time samples.
    motion_region: Box2,
    stone_radius: f64,
    stone_half: f64,
    lamp: V3,
    table: Table,
    /// Height of the table top (the boards stand on it, their tops at z = 0).
    table_z: f64,
    /// Texture noise for the table and sleeves.
    cloth: Noise2,
}

/// Length of (x, y); libm's overflow-safe `hypot` is needlessly slow for millimetres.
#[inline(always)]
pub(crate) fn len2(x: f64, y: f64) -> f64 {
    (x * x + y * y).sqrt()
}

pub(crate) fn smoothstep(e0: f64, e1: f64, x: f64) -> f64 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

pub(crate) fn mix3(a: [f32; 3], b: [f32; 3], t: f32) -> [f32; 3] {
    [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t]
}

/// Which part of a bowl a ray meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BowlPart {
    Wall = 0,
    Rim = 1,
    Inside = 2,
    Pile = 3,
}

/// Stones in a bowl's heap: spacing of their centres and their radius as seen from above.
const PILE_CELL_MM: f64 = 17.0;
const PILE_STONE_RADIUS_MM: f64 = 10.5;

/// Distance from (x, y) to the nearest stone centre of a bowl's heap, and the offset from it.
fn nearest_pile_stone(seed: u64, x: f64, y: f64) -> (f64, [f64; 2]) {
    let (gx, gy) = ((x / PILE_CELL_MM).floor() as i64, (y / PILE_CELL_MM).floor() as i64);
    let mut best = (f64::INFINITY, [0.0, 0.0]);
    for j in gy - 1..=gy + 1 {
        for i in gx - 1..=gx + 1 {
            let h = crate::noise::hash2(crate::noise::hash2(seed, i as u64), j as u64);
            let jx = (h & 0xFFFF) as f64 / 65535.0;
            let jy = ((h >> 16) & 0xFFFF) as f64 / 65535.0;
            let (sx, sy) = ((i as f64 + jx) * PILE_CELL_MM, (j as f64 + jy) * PILE_CELL_MM);
            let d = len2(x - sx, y - sy);
            if d < best.0 {
                best = (d, [x - sx, y - sy]);
            }
        }
    }
    best
}

/// Wall thickness of a bowl and how far below the rim its stones lie, in millimetres.
const BOWL_WALL_MM: f64 = 5.0;
const BOWL_PILE_DEPTH_MM: f64 = 12.0;

/// Ray against a bowl standing on the table (top at table + height): (t, part, normal).
fn hit_bowl(origin: V3, dir: V3, bowl: &crate::scene::Bowl, thickness: f64) -> Option<(f64, BowlPart, V3)> {
    if dir[2] >= 0.0 {
        return None;
    }
    let [cx, cy] = bowl.centre_mm;
    let r = bowl.radius_mm.max(10.0);
    let bottom = -thickness;
    let top = bottom + bowl.height_mm.max(5.0);
    // Through the opening (rim, inner wall or the stones inside)?
    let t_top = (top - origin[2]) / dir[2];
    if t_top > 0.0 {
        let q = add(origin, scale(dir, t_top));
        let d = len2(q[0] - cx, q[1] - cy);
        if d < r - BOWL_WALL_MM {
            let depth = if bowl.contents == Stone::Empty { bowl.height_mm * 0.7 } else { BOWL_PILE_DEPTH_MM };
            let t_pile = (top - depth - origin[2]) / dir[2];
            let qp = add(origin, scale(dir, t_pile));
            if len2(qp[0] - cx, qp[1] - cy) < r - BOWL_WALL_MM {
                // The heap is domed a little: tilt the normal outward from the centre.
                let n = norm([(qp[0] - cx) / r * 0.3, (qp[1] - cy) / r * 0.3, 1.0]);
                return Some((t_pile, BowlPart::Pile, n));
            }
            let n = norm([cx - q[0], cy - q[1], 0.0]);
            return Some((t_top, BowlPart::Inside, n));
        }
        if d < r {
            return Some((t_top, BowlPart::Rim, [0.0, 0.0, 1.0]));
        }
    }
    // The outer wall: a vertical cylinder.
    let (ox, oy) = (origin[0] - cx, origin[1] - cy);
    let a = dir[0] * dir[0] + dir[1] * dir[1];
    if a < 1e-12 {
        return None;
    }
    let b = ox * dir[0] + oy * dir[1];
    let c = ox * ox + oy * oy - r * r;
    let disc = b * b - a * c;
    if disc < 0.0 {
        return None;
    }
    let t = (-b - disc.sqrt()) / a;
    let z = origin[2] + t * dir[2];
    if t > 0.0 && z >= bottom && z <= top {
        let q = add(origin, scale(dir, t));
        // Bowls bulge: lean the normal up near the rim and down near the foot.
        let lean = 0.5 * ((z - bottom) / (top - bottom) - 0.5);
        return Some((t, BowlPart::Wall, norm([(q[0] - cx) / r, (q[1] - cy) / r, lean])));
    }
    None
}

impl<'a> World<'a> {
    fn new(position: &Position, scene: &'a Scene) -> Self {
        let camera = Camera::from_scene(scene);
        let mut boards = vec![BoardBody::new(position, &scene.stones, &scene.board, scene.seed, [0.0, 0.0], 0.0)];
        for neighbour in &scene.neighbours {
            let seed = crate::noise::hash2(neighbour.seed, 0x4E16);
            boards.push(BoardBody::new(
                &Position::game_like(seed, neighbour.stones),
                &scene.stones,
                &scene.board,
                seed,
                neighbour.centre_mm,
                neighbour.angle_deg,
            ));
        }
        let (stone_radius, stone_half) = (boards[0].stone_radius, boards[0].stone_half);
        let table_z = -boards[0].thickness;
        let props = scene.props.iter().filter_map(|p| PropBody::new(p, table_z, stone_half)).collect();
        let hands: Vec<HandGeometry> = scene.hands.iter().map(HandGeometry::build).collect();
        let thickness = scene.board.thickness_mm.max(1.0);
        let hand_boxes: Vec<Vec<PartBoxes>> = hands
            .iter()
            .map(|hand| {
                let mut boxes: Vec<PartBoxes> = hand
                    .capsules
                    .iter()
                    .map(|c| PartBoxes::new(&camera, scene.light.lamp_mm, thickness, c.a, c.b, c.radius, hand.motion))
                    .collect();
                if let Some((centre, _)) = hand.held {
                    boxes.push(PartBoxes::new(
                        &camera,
                        scene.light.lamp_mm,
                        thickness,
                        centre,
                        centre,
                        stone_radius,
                        hand.motion,
                    ));
                }
                boxes
            })
            .collect();
        let mut motion_region = Box2::EMPTY;
        for (hand, boxes) in hands.iter().zip(&hand_boxes) {
            if dot(hand.motion, hand.motion) > 0.0 {
                for b in boxes {
                    motion_region.min =
                        [motion_region.min[0].min(b.image.min[0]), motion_region.min[1].min(b.image.min[1])];
                    motion_region.max =
                        [motion_region.max[0].max(b.image.max[0]), motion_region.max[1].max(b.image.max[1])];
                }
            }
        }
        World {
            hand_boxes,
            motion_region,
            scene,
            camera,
            boards,
            props,
            hands,
            stone_radius,
            stone_half,
            lamp: scene.light.lamp_mm,
            table: Table::new(scene.board.table_rgb, scene.board.table_texture, scene.seed),
            table_z,
            cloth: Noise2::new(scene.seed ^ 0x5EED),
        }
    }

    /// Nearest hand part: (t, hand index, which part).
    /// `pixel`, when given, lets parts whose image box misses it be skipped.
    /// `tau` (−½…½) is the moment within the exposure, for moving hands.
    fn hit_hands(&self, origin: V3, dir: V3, pixel: Option<[f64; 2]>, tau: f64) -> Option<(f64, usize, HandPart)> {
        let mut best: Option<(f64, usize, HandPart)> = None;
        for (h, hand) in self.hands.iter().enumerate() {
            // Moving the hand by m is moving the ray by −m.
            let origin = sub(origin, scale(hand.motion, tau));
            let near = hand.ray_near_bound(origin, dir, |_| 0.0);
            let boxes = &self.hand_boxes[h];
            for (c, cap) in hand.capsules.iter().enumerate() {
                if (!cap.sleeve && !near) || pixel.is_some_and(|px| !boxes[c].image.contains(px)) {
                    continue;
                }
                if let Some(t) = ray_capsule(origin, dir, cap) {
                    if best.is_none_or(|(bt, _, _)| t < bt) {
                        best = Some((t, h, HandPart::Capsule(c)));
                    }
                }
            }
            let held_in_view = pixel.is_none_or(|px| boxes.last().is_some_and(|b| b.image.contains(px)));
            if let (Some((centre, _)), true, true) = (hand.held, near, held_in_view) {
                if let Some(t) = ray_stone(origin, dir, centre, self.stone_radius, self.stone_half) {
                    if best.is_none_or(|(bt, _, _)| t < bt) {
                        best = Some((t, h, HandPart::HeldStone));
                    }
                }
            }
        }
        best
    }

    /// Light reaching point `p` from the lamp, 0–1, after hand shadows (soft, widening with
    /// distance from the hand).
    /// `on_surface`: p lies on the board, a stone or the table, so the parts' shadow boxes apply.
    fn hand_shadow(&self, p: V3, to_lamp: V3, on_surface: bool, tau: f64) -> f64 {
        let mut light = 1.0;
        let surface = p;
        for (h, hand) in self.hands.iter().enumerate() {
            let p = sub(surface, scale(hand.motion, tau));
            let near = hand.ray_near_bound(p, to_lamp, |s| SHADOW_PENUMBRA_MM + SHADOW_SOFTNESS * s);
            let boxes = &self.hand_boxes[h];
            for (c, cap) in hand.capsules.iter().enumerate() {
                if (!cap.sleeve && !near) || (on_surface && !boxes[c].shadow.contains([surface[0], surface[1]])) {
                    continue;
                }
                let (dist, s) = ray_segment_distance(p, to_lamp, cap);
                let penumbra = SHADOW_PENUMBRA_MM + SHADOW_SOFTNESS * s;
                let occ = smoothstep(cap.radius + penumbra, cap.radius - penumbra, dist);
                light *= 1.0 - 0.85 * occ;
            }
        }
        light
    }

    /// Share of the room's diffuse light reaching surface point `p` past the hands (1 = all).
    fn hand_sky(&self, p: V3, tau: f64) -> f64 {
        let mut light = 1.0;
        let surface = p;
        for (h, hand) in self.hands.iter().enumerate() {
            let p = sub(surface, scale(hand.motion, tau));
            for (c, cap) in hand.capsules.iter().enumerate() {
                if !self.hand_boxes[h][c].sky.contains([surface[0], surface[1]]) {
                    continue;
                }
                let (dist, s) = ray_segment_distance(p, [0.0, 0.0, 1.0], cap);
                if s > SKY_MAX_HEIGHT_MM {
                    continue;
                }
                let penumbra = SKY_PENUMBRA_MM + SKY_SOFTNESS * s;
                light *= 1.0 - SKY_STRENGTH * smoothstep(cap.radius + penumbra, cap.radius - penumbra, dist);
            }
        }
        light
    }

    /// The nearest surface along a ray, and how far along the ray it lies.
    /// `pixel` lets hand parts whose image box misses it be skipped; `tau` is the moment within
    /// the exposure, for moving hands.
    fn nearest_hit(&self, origin: V3, dir: V3, pixel: [f64; 2], tau: f64) -> (f64, Hit) {
        let mut nearest = (f64::INFINITY, Hit::Nothing);
        for (board, b) in self.boards.iter().enumerate() {
            if let Some((t, index)) = b.hit_stones(b.to_local(origin), b.dir_to_local(dir)) {
                if t < nearest.0 {
                    nearest = (t, Hit::Stone { board, index });
                }
            }
        }
        if let Some((t, hand, part)) = self.hit_hands(origin, dir, Some(pixel), tau) {
            if t < nearest.0 {
                nearest = (t, Hit::Hand { hand, part });
            }
        }
        if dir[2] < 0.0 {
            for (board, b) in self.boards.iter().enumerate() {
                match b.hit_box(b.to_local(origin), b.dir_to_local(dir), nearest.0) {
                    Some((t, BoxHit::Top)) => nearest = (t, Hit::BoardTop { board }),
                    Some((t, BoxHit::Side(normal))) => nearest = (t, Hit::BoardSide { board, normal }),
                    None => {}
                }
            }
            let t_table = (self.table_z - origin[2]) / dir[2];
            if t_table < nearest.0 {
                nearest = (t_table, Hit::Table);
            }
        }
        let thickness = -self.table_z;
        for (index, bowl) in self.scene.bowls.iter().enumerate() {
            if let Some((t, part, normal)) = hit_bowl(origin, dir, bowl, thickness) {
                if t < nearest.0 {
                    nearest = (t, Hit::Bowl { index, part, normal });
                }
            }
        }
        for (index, prop) in self.props.iter().enumerate() {
            match *prop {
                PropBody::Clock { .. } => {
                    if let Some((t, hit)) = hit_clock(prop, origin, dir, self.table_z) {
                        if t < nearest.0 {
                            let (normal, local) = (hit.normal, hit.local);
                            nearest = (t, Hit::Clock { index, normal, local });
                        }
                    }
                }
                PropBody::Stone { centre, .. } => {
                    if let Some(t) = ray_stone(origin, dir, centre, self.stone_radius, self.stone_half) {
                        if t < nearest.0 {
                            nearest = (t, Hit::LooseStone { index });
                        }
                    }
                }
                PropBody::Sheet { .. } => {}
            }
        }
        nearest
    }

    /// Shades one sample ray through `pixel`; returns linear-ish display colour, object id and
    /// whether a hand hit lies over the board.
    fn shade(&self, pixel: [f64; 2], footprint_scale: f64, tau: f64) -> ([f32; 3], ObjectId, bool) {
        let origin = self.camera.position;
        let dir = self.camera.ray(pixel);
        let (t, hit) = self.nearest_hit(origin, dir, pixel, tau);
        let over_board = dir[2] < 0.0 && {
            let t0 = -origin[2] / dir[2];
            self.boards[0].covers(add(origin, scale(dir, t0)))
        };
        if hit == Hit::Nothing {
            // Looking at the horizon: dim wall.
            return ([0.3, 0.3, 0.32], 0, false);
        }
        let p = add(origin, scale(dir, t));
        let ambient = f64::from(self.scene.light.ambient.clamp(0.0, 1.0));
        let ray = RayLight {
            view: scale(dir, -1.0),
            to_lamp: norm(sub(self.lamp, p)),
            ambient,
            direct_gain: (1.0 - ambient) * 1.15,
            tau,
        };
        match hit {
            Hit::Nothing => ([0.3, 0.3, 0.32], 0, false),
            Hit::Stone { board, index } => {
                let b = &self.boards[board];
                let s = &b.stones[index];
                let local = sub(b.to_local(p), s.centre);
                let colour = self.shade_stone(p, local, Some(b), s.black, s.tint, s.stripes, &ray);
                let id = ID_STONE + STONE_IDS * board as u32 + index as u32;
                (colour, id, false)
            }
            Hit::Hand { hand, part: HandPart::HeldStone } => {
                let Some((centre, black)) = self.hands[hand].held else {
                    return ([0.0; 3], 0, true);
                };
                let centre = add(centre, scale(self.hands[hand].motion, tau));
                let colour = self.shade_stone(p, sub(p, centre), None, black, 0.0, None, &ray);
                (colour, ID_HELD + hand as u32, over_board)
            }
            Hit::Hand { hand, part: HandPart::Capsule(c) } => {
                (self.shade_hand(p, hand, c, &ray), ID_HAND + hand as u32, over_board)
            }
            Hit::BoardTop { board } => {
                // Footprint of this sample on the board, for line anti-aliasing.
                let footprint = footprint_scale * t / self.camera.focal / (-dir[2]).max(0.2).sqrt();
                let id = if board == 0 { ID_BOARD } else { ID_NEIGHBOUR + 2 * board as u32 };
                (self.shade_board_top(board, p, footprint, &ray), id, false)
            }
            Hit::BoardSide { board, normal } => {
                // Board edge: end grain, darker and less saturated.
                let b = &self.boards[board];
                let q = b.to_local(p);
                let albedo = b.surface.side_albedo(q[0] + q[1], q[2]);
                let diffuse = ray.ambient * 0.8 + ray.direct_gain * ray.lamp_light(b.dir_to_world(normal));
                let id = if board == 0 { ID_SIDE } else { ID_NEIGHBOUR + 2 * board as u32 + 1 };
                (albedo.map(|a| (a as f64 * diffuse) as f32), id, false)
            }
            Hit::Bowl { index, part, normal } => {
                (self.shade_bowl(p, index, part, normal, &ray), ID_BOWL + 4 * index as u32 + part as u32, false)
            }
            Hit::Table => (self.shade_table(p, &ray), ID_TABLE, false),
            Hit::Clock { index, normal, local } => {
                let albedo = clock_albedo(&self.props[index], &crate::props::ClockHit { normal, local });
                let (direct, sky) = self.shadows_at(p, &ray, false);
                let diffuse = ray.ambient * sky * (0.6 + 0.4 * normal[2].max(0.0))
                    + ray.direct_gain * ray.lamp_light(normal) * direct;
                let half = norm(add(ray.to_lamp, ray.view));
                let spec = 0.08 * dot(normal, half).max(0.0).powi(40) * direct;
                let colour = albedo.map(|a| (a as f64 * diffuse + spec) as f32);
                (colour, ID_PROP + index as u32, false)
            }
            Hit::LooseStone { index } => {
                let PropBody::Stone { centre, black } = self.props[index] else {
                    return ([0.0; 3], 0, false);
                };
                let colour = self.shade_stone(p, sub(p, centre), None, black, 0.0, None, &ray);
                (colour, ID_PROP + index as u32, false)
            }
        }
    }

    /// A skin or sleeve part `c` of hand `h`.
    fn shade_hand(&self, p: V3, h: usize, c: usize, ray: &RayLight) -> [f32; 3] {
        let hand = &self.hands[h];
        let cap = &hand.capsules[c];
        // Shade in the hand's own frame at this moment of the exposure.
        let p = sub(p, scale(hand.motion, ray.tau));
        let mut n = capsule_normal(p, cap);
        if cap.palm && n[2] > 0.0 {
            // The back of the hand is broad and gently curved, not ridged.
            n = norm(add(scale(n, 0.35), [0.0, 0.0, 0.65]));
        }
        // Self-shadowing within a hand is left to the wrap lighting (it costs a shadow
        // test per part per pixel for little visible effect).
        let shadow = 1.0;
        let wrap = ((dot(n, ray.to_lamp) + 0.35) / 1.35).max(0.0);
        let up = 0.6 + 0.4 * n[2].max(0.0);
        let mut albedo = if cap.sleeve { hand.sleeve } else { hand.skin };
        if cap.sleeve {
            let weave = 0.92 + 0.08 * self.cloth.at((p[0] * 0.5) as f32, (p[1] * 0.5 + p[2] * 0.5) as f32);
            let folds = 0.85 + 0.15 * self.cloth.at((p[0] * 0.02) as f32 + 70.0, (p[2] * 0.03 + p[1] * 0.02) as f32);
            albedo = albedo.map(|a| a * weave * folds);
        }
        let mut shine = if cap.sleeve { 0.0 } else { 0.07 };
        if !cap.sleeve {
            // Skin tone varies a little over the hand; knuckles and tips are redder.
            let blotch = self.cloth.at((p[0] * 0.08) as f32 + 11.0, (p[1] * 0.08 + p[2] * 0.08) as f32);
            albedo = [
                albedo[0] * (0.95 + 0.08 * blotch),
                albedo[1] * (0.95 + 0.05 * blotch),
                albedo[2] * (0.95 + 0.05 * blotch),
            ];
        }
        if cap.nail {
            // A nail: the last third of a fingertip segment, on the back of the finger.
            let along = capsule_param(p, cap);
            let back = dot(n, [0.0, 0.0, 1.0]);
            let nail = smoothstep(0.6, 0.72, along) * smoothstep(0.25, 0.45, back);
            let nail_colour = [albedo[0] * 1.08 + 0.05, albedo[1] * 1.02 + 0.08, albedo[2] * 1.02 + 0.1];
            albedo = mix3(albedo, nail_colour.map(|c| c.min(1.0)), nail as f32);
            shine += 0.25 * nail;
        }
        let diffuse = ray.ambient * up + ray.direct_gain * wrap * shadow;
        let half = norm(add(ray.to_lamp, ray.view));
        let spec = shine * dot(n, half).max(0.0).powi(if cap.nail { 40 } else { 18 });
        albedo.map(|a| (a as f64 * diffuse + spec) as f32)
    }

    /// The playing surface of `board` at world point `p`: wood and ink under stone and hand
    /// shadows, with the glare spot.
    fn shade_board_top(&self, board: usize, p: V3, footprint: f64, ray: &RayLight) -> [f32; 3] {
        let b = &self.boards[board];
        let q = b.to_local(p);
        let albedo = b.albedo(q, footprint.max(0.05));
        let (direct, ao) = b.stone_shadow(q, b.dir_to_local(ray.to_lamp));
        let (hands, sky) = self.shadows_at(p, ray, true);
        let diffuse = ray.ambient * ao * sky + ray.direct_gain * ray.lamp_light([0.0, 0.0, 1.0]) * direct * hands;
        // Varnish reflection of the lamp: the glare spot.
        let half = norm(add(ray.to_lamp, ray.view));
        let nh = half[2].max(0.0);
        let glare = f64::from(self.scene.light.glare) * (0.9 * nh.powi(400) + 0.12 * nh.powi(40)) * direct * hands;
        albedo.map(|a| (a as f64 * diffuse + glare) as f32)
    }

    /// Part `part` of bowl `i` at `p`.
    fn shade_bowl(&self, p: V3, i: usize, part: BowlPart, normal: V3, ray: &RayLight) -> [f32; 3] {
        let bowl = &self.scene.bowls[i];
        let c = bowl.centre_mm;
        let (hands, sky) = self.shadows_at(p, ray, false);
        let (albedo, spec) = match part {
            BowlPart::Pile => {
                // A heap of stones: nearest jittered stone centre (cellular pattern)
                // gives a domed stone or a dark gap between stones.
                let (near, offset) = nearest_pile_stone(self.scene.seed ^ (i as u64 + 1), p[0] - c[0], p[1] - c[1]);
                let dome = (1.0 - (near / PILE_STONE_RADIUS_MM).powi(2)).max(0.0);
                let n = norm([offset[0] / PILE_STONE_RADIUS_MM, offset[1] / PILE_STONE_RADIUS_MM, dome.sqrt() + 0.2]);
                let half = norm(add(ray.to_lamp, ray.view));
                let glint = dot(n, half).max(0.0);
                let gap = if near < PILE_STONE_RADIUS_MM { 1.0 } else { 0.35 };
                match bowl.contents {
                    Stone::BLACK => ([0.05 * gap as f32; 3], gap * (0.05 * glint.powi(8) + 0.25 * glint.powi(60))),
                    Stone::WHITE => {
                        ([0.88 * gap as f32, 0.87 * gap as f32, 0.82 * gap as f32], gap * 0.3 * glint.powi(40))
                    }
                    Stone::Empty => (srgb(bowl.rgb).map(|a| a * 0.55), 0.0),
                }
            }
            BowlPart::Inside => (srgb(bowl.rgb).map(|a| a * 0.5), 0.0),
            BowlPart::Rim | BowlPart::Wall => {
                let angle = (p[1] - c[1]).atan2(p[0] - c[0]);
                let grain = self.cloth.at((angle * 12.0) as f32 + 7.0, (p[2] * 0.05) as f32);
                let half = norm(add(ray.to_lamp, ray.view));
                (srgb(bowl.rgb).map(|a| a * (0.88 + 0.14 * grain)), 0.18 * dot(normal, half).max(0.0).powi(30))
            }
        };
        let diffuse =
            ray.ambient * sky * (0.6 + 0.4 * normal[2].max(0.0)) + ray.direct_gain * ray.lamp_light(normal) * hands;
        albedo.map(|a| (a as f64 * diffuse + spec * hands) as f32)
    }

    /// The table at `p`: cloth-like texture, the soft shadows of the board and the bowls.
    fn shade_table(&self, p: V3, ray: &RayLight) -> [f32; 3] {
        let to_lamp = ray.to_lamp;
        let albedo = sheet_albedo(&self.props, p).unwrap_or_else(|| self.table.albedo(p[0], p[1], &self.cloth));
        let (mut shadow, mut ao) = self.boards[0].shadow_on_table(p, to_lamp);
        for b in &self.boards[1..] {
            let (s, a) = b.shadow_on_table(p, to_lamp);
            shadow *= s;
            ao *= a;
        }
        for bowl in &self.scene.bowls {
            let (c, r) = (bowl.centre_mm, bowl.radius_mm);
            ao *= 1.0 - 0.5 * smoothstep(r + 30.0, r, len2(p[0] - c[0], p[1] - c[1]));
            let h = bowl.height_mm * 0.6;
            let (sx, sy) = (c[0] - to_lamp[0] / to_lamp[2] * h, c[1] - to_lamp[1] / to_lamp[2] * h);
            shadow *= 1.0 - 0.75 * smoothstep(r + 8.0, r - 8.0, len2(p[0] - sx, p[1] - sy));
        }
        let (hands, sky) = self.shadows_at(p, ray, true);
        let diffuse = ray.ambient * ao * sky + ray.direct_gain * ray.lamp_light([0.0, 0.0, 1.0]) * shadow * hands;
        albedo.map(|a| (a as f64 * diffuse) as f32)
    }

    /// Lamp light and sky light left at `p` by the hands' and a standing person's shadows
    /// (1, 1 when nothing is in the way).
    fn shadows_at(&self, p: V3, ray: &RayLight, on_surface: bool) -> (f64, f64) {
        let (mut direct, sky) = if self.hands.is_empty() {
            (1.0, 1.0)
        } else {
            (self.hand_shadow(p, ray.to_lamp, on_surface, ray.tau), self.hand_sky(p, ray.tau))
        };
        if let Some(person) = &self.scene.light.person_shadow {
            direct *= person_light(person, p);
        }
        (direct, sky)
    }

    /// A stone (on the board or held) centred at `centre`, at its surface point `p`.
    /// `p` is the world point, `local` the same point relative to the stone's centre in the
    /// frame of the board it lies on (`board`; `None` = the world frame).
    #[allow(clippy::too_many_arguments)]
    fn shade_stone(
        &self,
        p: V3,
        local: V3,
        board: Option<&BoardBody>,
        black: bool,
        tint: f32,
        stripes: Option<([f64; 2], f64, f64, f32)>,
        ray: &RayLight,
    ) -> [f32; 3] {
        let (to_lamp, view) = (ray.to_lamp, ray.view);
        let (r, h) = (self.stone_radius, self.stone_half);
        let n = norm([local[0] / (r * r), local[1] / (r * r), local[2] / (h * h)]);
        let n = board.map_or(n, |b| b.dir_to_world(n));
        let lift = add(p, scale(n, 0.5));
        let (hands, sky_hands) = self.shadows_at(lift, ray, true);
        let diffuse_dir = dot(n, to_lamp).max(0.0) * hands;
        // Underside faces the board: less sky, less light.
        let sky = 0.55 + 0.45 * n[2].max(0.0);
        let half = norm(add(to_lamp, view));
        let nh = dot(n, half).max(0.0);
        let colours = self.scene.stones.colours;
        let (albedo, spec) = if black && colours == StoneColours::BlackWhite {
            // Slate: very dark with a broad faint sheen and a small soft highlight.
            let a = 0.045 + 0.008 * tint;
            ([a, a, a * 1.08], 0.05 * nh.powi(8) + 0.15 * nh.powi(90))
        } else if black {
            // Dark glass or plastic: coloured, with a sharper highlight than slate.
            let a = dark_albedo(colours).map(|c| c * (1.0 + 0.08 * tint));
            (a, 0.25 * nh.powi(60) + 0.05 * nh.powi(6))
        } else {
            let mut a = match colours {
                StoneColours::BlackWhite => [0.90 + 0.015 * tint, 0.885 + 0.015 * tint, 0.84 + 0.015 * tint],
                other => light_albedo(other).map(|c| c * (1.0 + 0.02 * tint)),
            };
            if let Some((d, freq, phase, strength)) = stripes {
                // Clam shell: faint slightly curved parallel bands.
                let along = local[0] * d[0] + local[1] * d[1];
                let across = -local[0] * d[1] + local[1] * d[0];
                let band = ((along + 0.012 * across * across) * freq + phase).sin() as f32;
                a = a.map(|c| c * (1.0 - strength * (0.5 + 0.5 * band)));
            }
            (a, 0.4 * nh.powi(60) + 0.06 * nh.powi(6))
        };
        let diffuse = ray.ambient * sky * sky_hands + ray.direct_gain * diffuse_dir;
        let spec = spec * self.scene.stones.gloss.max(0.0) * hands;
        albedo.map(|a| (a as f64 * diffuse + spec) as f32)
    }
}

/// Albedo of the dark stones of a coloured set.
fn dark_albedo(colours: StoneColours) -> [f32; 3] {
    match colours {
        StoneColours::BlackWhite => [0.045, 0.045, 0.049],
        StoneColours::Greens => [0.09, 0.28, 0.13],
        StoneColours::Blues => [0.05, 0.09, 0.28],
    }
}

/// Albedo of the light stones of a coloured set.
fn light_albedo(colours: StoneColours) -> [f32; 3] {
    match colours {
        StoneColours::BlackWhite => [0.90, 0.885, 0.84],
        StoneColours::Greens => [0.68, 0.82, 0.48],
        StoneColours::Blues => [0.58, 0.74, 0.92],
    }
}

/// Share of the lamp's light reaching world point `p` past a standing person: a soft ellipse
/// for the shoulders, a soft disc for the head beside it.
fn person_light(person: &crate::scene::PersonShadow, p: V3) -> f64 {
    let size = person.size_mm.max(20.0);
    let soft = person.softness_mm.max(1.0);
    let (s, c) = person.angle_deg.to_radians().sin_cos();
    let (x, y) = (p[0] - person.centre_mm[0], p[1] - person.centre_mm[1]);
    let (u, v) = (c * x + s * y, -s * x + c * y);
    let (a, b) = (size, 0.45 * size);
    // Distance outside the ellipse, roughly in millimetres (exact on the axes).
    let shoulders = (((u / a).powi(2) + (v / b).powi(2)).sqrt() - 1.0) * b;
    let head = len2(u, v + 0.6 * size) - 0.4 * size;
    let occ = smoothstep(soft, -soft, shoulders.min(head));
    1.0 - person.strength.clamp(0.0, 1.0) * occ
}

/// Renders `position` as the camera of `scene` would see it. Errors only on a bad image size.
pub fn render(position: &Position, scene: &Scene) -> Result<Rendered, SynthError> {
    let (w, h) = (scene.width, scene.height);
    if w == 0 || h == 0 || w > MAX_SIDE || h > MAX_SIDE {
        return Err(SynthError::BadSize { width: w, height: h });
    }
    let world = World::new(position, scene);
    let (wu, hu) = (w as usize, h as usize);
    let mut colour = vec![[0f32; 3]; wu * hu];
    let mut ids = vec![0 as ObjectId; wu * hu];
    // Rows are independent: split them over the cores (results do not depend on the split).
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, MAX_THREADS);
    let rows_per = hu.div_ceil(threads).max(1);
    let (hand_pixels, hand_over_board) = std::thread::scope(|s| {
        let world = &world;
        let handles: Vec<_> = colour
            .chunks_mut(rows_per * wu)
            .zip(ids.chunks_mut(rows_per * wu))
            .enumerate()
            .map(|(k, (colour, ids))| {
                s.spawn(move || {
                    let (mut pixels, mut over_board) = (0usize, false);
                    for (i, (c, id)) in colour.iter_mut().zip(ids.iter_mut()).enumerate() {
                        let (x, y) = (i % wu, k * rows_per + i / wu);
                        let centre = [x as f64 + 0.5, y as f64 + 0.5];
                        let (mut sample, object, over) = world.shade(centre, 1.0, 0.0);
                        if world.motion_region.contains(centre) {
                            // Motion blur: average over the exposure (the mid-exposure sample
                            // above still decides the object id and hand coverage).
                            let mut sum = [0f32; 3];
                            for k in 0..MOTION_SAMPLES {
                                let tau = exposure_moment(y * wu + x, k, MOTION_SAMPLES);
                                let (c, _, _) = world.shade(centre, 1.0, tau);
                                sum = [sum[0] + c[0], sum[1] + c[1], sum[2] + c[2]];
                            }
                            sample = sum.map(|v| v / MOTION_SAMPLES as f32);
                        }
                        *c = sample;
                        *id = object;
                        if object >= ID_HAND {
                            pixels += 1;
                            over_board |= over;
                        }
                    }
                    (pixels, over_board)
                })
            })
            .collect();
        handles.into_iter().fold((0, false), |(p, o), h| {
            let (hp, ho) = h.join().unwrap_or((0, false));
            (p + hp, o | ho)
        })
    });
    if scene.antialias {
        // Re-render object edges with a rotated-grid 4-sample pattern.
        const OFFSETS: [[f64; 2]; 4] = [[0.375, 0.125], [0.875, 0.375], [0.625, 0.875], [0.125, 0.625]];
        let ids = &ids;
        let world = &world;
        let edges: Vec<usize> = (0..wu * hu)
            .filter(|&i| {
                let (x, y, id) = (i % wu, i / wu, ids[i]);
                (x + 1 < wu && ids[i + 1] != id)
                    || (x > 0 && ids[i - 1] != id)
                    || (y + 1 < hu && ids[i + wu] != id)
                    || (y > 0 && ids[i - wu] != id)
            })
            .collect();
        let fixed: Vec<[f32; 3]> = std::thread::scope(|s| {
            let handles: Vec<_> = edges
                .chunks(edges.len().div_ceil(threads).max(1))
                .map(|chunk| {
                    s.spawn(move || {
                        chunk
                            .iter()
                            .map(|&i| {
                                let (x, y) = ((i % wu) as f64, (i / wu) as f64);
                                let mut sum = [0f32; 3];
                                for (k, o) in OFFSETS.iter().enumerate() {
                                    // Stratified moments of the exposure where hands move.
                                    let tau = if world.motion_region.contains([x, y]) {
                                        (k as f64 + 0.5) / 4.0 - 0.5
                                    } else {
                                        0.0
                                    };
                                    let (c, _, _) = world.shade([x + o[0], y + o[1]], 0.5, tau);
                                    sum = [sum[0] + c[0], sum[1] + c[1], sum[2] + c[2]];
                                }
                                sum.map(|v| v / 4.0)
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
        });
        // A panicked worker would leave `fixed` short; keep its pixels single-sampled then.
        for (i, c) in edges.into_iter().zip(fixed) {
            colour[i] = c;
        }
    }
    crate::post::camera_effects(&mut colour, wu, hu, scene);
    let image = crate::post::to_image(&colour, w, h, scene);
    let truth = crate::truthcalc::ground_truth(
        position,
        &world.camera,
        scene,
        &|origin, dir| world.hit_hands(origin, dir, None, 0.0).map(|(t, _, _)| t),
        &|col, row| {
            let board = &world.boards[0];
            board.grid[row * BOARD_LINES + col].map(|i| board.stones[i].centre)
        },
        world.stone_half,
        hand_pixels,
        hand_over_board,
    );
    Ok(Rendered { image, truth, jpeg_quality: scene.jpeg_quality.clamp(1, 100) })
}
