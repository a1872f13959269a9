//! A board standing on the table with its stones: where the stones lie (jitter, pushed apart
//! where they touch), ray tests against the stones and the board's box, the printed grid, and
//! the stones' shadows on the playing surface. Our board stands at the world origin; a
//! neighbour's board is the same object moved and turned on the table.

use crate::camera::{add, board_mm, board_to_world, dot, scale, V3};
use crate::hand::srgb;
use crate::noise::Rng;
use crate::position::Position;
use crate::render::{len2, mix3, smoothstep};
use crate::scene::{BoardStyle, StoneStyle};
use crate::texture::BoardSurface;
use tengen_rules::{Stone, BOARD_LINES};

/// Black ink of the grid when the scene gives no line colour.
const INK: [f32; 3] = [0.07, 0.06, 0.05];

/// A stone placed on a board, in the board's own frame.
#[derive(Debug, Clone)]
pub(crate) struct StoneBody {
    /// Centre of the ellipsoid (z = half thickness: it rests on its lowest point).
    pub centre: V3,
    pub black: bool,
    /// Brightness variation of this stone.
    pub tint: f32,
    /// Shell stripes: direction in the board plane, spatial frequency (rad/mm), phase.
    pub stripes: Option<([f64; 2], f64, f64, f32)>,
}

/// Where a ray meets a board's box.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum BoxHit {
    /// The playing surface.
    Top,
    /// A vertical side, with its outward normal in the board's frame.
    Side(V3),
}

/// A board on the table with its stones.
pub(crate) struct BoardBody {
    /// Centre on the table (world x, y) and rotation about the vertical as (cos, sin).
    centre: [f64; 2],
    cos: f64,
    sin: f64,
    pub stones: Vec<StoneBody>,
    /// Stone index per physical intersection (row-major), for fast ray candidate lookup.
    pub grid: Vec<Option<usize>>,
    pub surface: BoardSurface,
    /// Half width and half length of the top, millimetres.
    pub half: [f64; 2],
    pub thickness: f64,
    line_width: f64,
    star_radius: f64,
    ink: [f32; 3],
    pub stone_radius: f64,
    pub stone_half: f64,
}

impl BoardBody {
    /// A board at `centre` turned by `angle_deg`, holding `position`; `seed` draws the stones'
    /// jitter, tints and stripes and the wood.
    pub(crate) fn new(
        position: &Position,
        style: &StoneStyle,
        look: &BoardStyle,
        seed: u64,
        centre: [f64; 2],
        angle_deg: f64,
    ) -> Self {
        let stone_radius = (style.diameter_mm / 2.0).clamp(5.0, 14.0);
        let stone_half = (style.thickness_mm / 2.0).clamp(1.0, 8.0);
        let mut rng = Rng::derive(seed, 1);
        let mut stones = Vec::new();
        let mut grid = vec![None; BOARD_LINES * BOARD_LINES];
        let limit = 0.4 * board_mm::SPACING_X;
        for row in 0..BOARD_LINES {
            for col in 0..BOARD_LINES {
                let stone = position.get(col, row);
                // Draw per point regardless of content so jitter does not depend on neighbours.
                let (jx, jy) = (rng.normal() * style.jitter_mm, rng.normal() * style.jitter_mm);
                let tint = rng.range(-1.0, 1.0) as f32;
                let angle = rng.range(0.0, std::f64::consts::PI);
                let freq = rng.range(2.5, 5.0);
                let phase = rng.range(0.0, 100.0);
                let striped = rng.unit() < style.shell_stripes;
                let strength = rng.range(0.015, 0.04) as f32;
                if stone == Stone::Empty {
                    continue;
                }
                let base = board_to_world(col as f64, row as f64);
                let centre = [base[0] + jx.clamp(-limit, limit), base[1] + jy.clamp(-limit, limit), stone_half];
                grid[row * BOARD_LINES + col] = Some(stones.len());
                stones.push(StoneBody {
                    centre,
                    black: stone == Stone::BLACK,
                    tint,
                    stripes: (stone == Stone::WHITE && striped).then_some((
                        [angle.cos(), angle.sin()],
                        freq,
                        phase,
                        strength,
                    )),
                });
            }
        }
        if style.push_apart {
            push_apart(&mut stones, &grid, stone_radius, limit);
        }
        let angle = angle_deg.to_radians();
        Self {
            centre,
            cos: angle.cos(),
            sin: angle.sin(),
            stones,
            grid,
            surface: BoardSurface::new(look.material, look.wood_rgb, look.grain, seed),
            half: look.half_extent(),
            thickness: look.thickness_mm.max(1.0),
            line_width: look.line_width_mm.max(0.1),
            star_radius: look.star_radius_mm.clamp(0.0, 8.0),
            ink: look.line_rgb.map_or(INK, srgb),
            stone_radius,
            stone_half,
        }
    }

    /// A world point in the board's frame.
    #[inline(always)]
    pub(crate) fn to_local(&self, p: V3) -> V3 {
        let (x, y) = (p[0] - self.centre[0], p[1] - self.centre[1]);
        [self.cos * x + self.sin * y, -self.sin * x + self.cos * y, p[2]]
    }

    /// A world direction in the board's frame.
    #[inline(always)]
    pub(crate) fn dir_to_local(&self, d: V3) -> V3 {
        [self.cos * d[0] + self.sin * d[1], -self.sin * d[0] + self.cos * d[1], d[2]]
    }

    /// A direction in the board's frame, in the world.
    #[inline(always)]
    pub(crate) fn dir_to_world(&self, d: V3) -> V3 {
        [self.cos * d[0] - self.sin * d[1], self.sin * d[0] + self.cos * d[1], d[2]]
    }

    /// Whether the world point (x, y) lies over this board's top.
    pub(crate) fn covers(&self, p: V3) -> bool {
        let q = self.to_local(p);
        q[0].abs() <= self.half[0] && q[1].abs() <= self.half[1]
    }

    /// Nearest stone hit by a ray given in the board's frame: (t, stone index).
    pub(crate) fn hit_stones(&self, origin: V3, dir: V3) -> Option<(f64, usize)> {
        if dir[2] >= 0.0 || self.stones.is_empty() {
            return None;
        }
        // Rays that meet the stone layer nowhere near the grid cannot hit a stone.
        let t_mid = (self.stone_half - origin[2]) / dir[2];
        let mid = add(origin, scale(dir, t_mid));
        let reach = 2.0 * board_mm::SPACING_X;
        if mid[0].abs() > 9.0 * board_mm::SPACING_X + reach || mid[1].abs() > 9.0 * board_mm::SPACING_Y + reach {
            return None;
        }
        let top = 2.0 * self.stone_half;
        let t_top = (top - origin[2]) / dir[2];
        let t_base = -origin[2] / dir[2];
        let a = add(origin, scale(dir, t_top));
        let b = add(origin, scale(dir, t_base));
        let pad = self.stone_radius + 0.4 * board_mm::SPACING_X;
        let to_col = |x: f64| x / board_mm::SPACING_X + 9.0;
        let to_row = |y: f64| y / board_mm::SPACING_Y + 9.0;
        let c0 = to_col(a[0].min(b[0]) - pad).ceil().max(0.0) as usize;
        let c1 = to_col(a[0].max(b[0]) + pad).floor().min(18.0);
        let r0 = to_row(a[1].min(b[1]) - pad).ceil().max(0.0) as usize;
        let r1 = to_row(a[1].max(b[1]) + pad).floor().min(18.0);
        if c1 < 0.0 || r1 < 0.0 {
            return None;
        }
        let mut best: Option<(f64, usize)> = None;
        for row in r0..=(r1 as usize) {
            for col in c0..=(c1 as usize) {
                if let Some(i) = self.grid[row * BOARD_LINES + col] {
                    if let Some(t) = ray_stone(origin, dir, self.stones[i].centre, self.stone_radius, self.stone_half) {
                        if best.is_none_or(|(bt, _)| t < bt) {
                            best = Some((t, i));
                        }
                    }
                }
            }
        }
        best
    }

    /// The board's box (top, then the sides) hit by a ray given in the board's frame, nearer
    /// than `limit`.
    pub(crate) fn hit_box(&self, origin: V3, dir: V3, limit: f64) -> Option<(f64, BoxHit)> {
        if dir[2] >= 0.0 {
            return None;
        }
        let [hw, hl] = self.half;
        let t_top = -origin[2] / dir[2];
        if t_top >= limit {
            return None;
        }
        let p = add(origin, scale(dir, t_top));
        if p[0].abs() <= hw && p[1].abs() <= hl {
            return Some((t_top, BoxHit::Top));
        }
        // Sides: vertical faces between z = -thickness and 0.
        let mut best = None;
        let mut nearest = limit;
        for (axis, sign) in [(0usize, 1.0f64), (0, -1.0), (1, 1.0), (1, -1.0)] {
            let half = if axis == 0 { hw } else { hl };
            if dir[axis] * sign >= 0.0 {
                continue;
            }
            let t = (sign * half - origin[axis]) / dir[axis];
            if t <= 0.0 || t >= nearest {
                continue;
            }
            let q = add(origin, scale(dir, t));
            let other = 1 - axis;
            let other_half = if other == 0 { hw } else { hl };
            if q[2] <= 0.0 && q[2] >= -self.thickness && q[other].abs() <= other_half {
                let mut normal = [0.0; 3];
                normal[axis] = sign;
                nearest = t;
                best = Some((t, BoxHit::Side(normal)));
            }
        }
        best
    }

    /// Darkening of the board around the stones at `p` (board frame, `to_lamp` too): (direct,
    /// ambient) from the cast shadows and contact shadows.
    pub(crate) fn stone_shadow(&self, p: V3, to_lamp: V3) -> (f64, f64) {
        let col = (p[0] / board_mm::SPACING_X + 9.0).round() as i64;
        let row = (p[1] / board_mm::SPACING_Y + 9.0).round() as i64;
        let (mut direct, mut ambient) = (1.0, 1.0);
        let r = self.stone_radius;
        let shift = [-to_lamp[0] / to_lamp[2] * self.stone_half, -to_lamp[1] / to_lamp[2] * self.stone_half];
        for rr in (row - 1).max(0)..=(row + 1).min(18) {
            for cc in (col - 1).max(0)..=(col + 1).min(18) {
                if let Some(i) = self.grid[rr as usize * BOARD_LINES + cc as usize] {
                    let c = self.stones[i].centre;
                    let d = ((p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2)).sqrt();
                    ambient *= 1.0 - 0.55 * smoothstep(r * 1.35, r * 0.85, d);
                    let ds = ((p[0] - c[0] - shift[0]).powi(2) + (p[1] - c[1] - shift[1]).powi(2)).sqrt();
                    direct *= 1.0 - 0.9 * smoothstep(r * 1.05, r * 0.8, ds);
                }
            }
        }
        (direct, ambient)
    }

    /// Colour of the board top at `p` (board frame): grid, star points and the surface, given
    /// the sample footprint in millimetres for analytic line anti-aliasing.
    pub(crate) fn albedo(&self, p: V3, footprint: f64) -> [f32; 3] {
        let surface = self.surface.albedo(p[0], p[1]);
        let lw = self.line_width;
        let cf = p[0] / board_mm::SPACING_X + 9.0;
        let rf = p[1] / board_mm::SPACING_Y + 9.0;
        let coverage = |dist_mm: f64, half: f64| ((half + footprint / 2.0 - dist_mm) / footprint).clamp(0.0, 1.0);
        let mut ink: f64 = 0.0;
        let lc = cf.round().clamp(0.0, 18.0);
        let lr = rf.round().clamp(0.0, 18.0);
        // Outer lines are a little bolder, as on most boards.
        let half_c = if lc == 0.0 || lc == 18.0 { lw * 0.7 } else { lw * 0.5 };
        let half_r = if lr == 0.0 || lr == 18.0 { lw * 0.7 } else { lw * 0.5 };
        let ext_r = half_c / board_mm::SPACING_Y;
        let ext_c = half_r / board_mm::SPACING_X;
        if rf >= -ext_r - 0.05 && rf <= 18.0 + ext_r + 0.05 {
            // Lines end at the outer line's outer edge.
            let end = ((rf.clamp(-ext_r, 18.0 + ext_r) - rf).abs() * board_mm::SPACING_Y).max(0.0);
            ink = ink.max(coverage(len2((cf - lc).abs() * board_mm::SPACING_X, end), half_c));
        }
        if cf >= -ext_c - 0.05 && cf <= 18.0 + ext_c + 0.05 {
            let end = ((cf.clamp(-ext_c, 18.0 + ext_c) - cf).abs() * board_mm::SPACING_X).max(0.0);
            ink = ink.max(coverage(len2((rf - lr).abs() * board_mm::SPACING_Y, end), half_r));
        }
        // Hoshi at the 4-4, 4-10, 4-16 ... points.
        let star =
            |v: f64| [3.0, 9.0, 15.0].into_iter().min_by(|a, b| (v - a).abs().total_cmp(&(v - b).abs())).unwrap_or(9.0);
        let (sc, sr) = (star(cf), star(rf));
        let d = len2((cf - sc) * board_mm::SPACING_X, (rf - sr) * board_mm::SPACING_Y);
        ink = ink.max(coverage(d, self.star_radius));
        mix3(surface, self.ink, (ink * 0.93) as f32)
    }

    /// The table's darkening by this board at world point `p` on the table: (cast shadow,
    /// ambient occlusion near the board's foot). `to_lamp` is in the world frame.
    pub(crate) fn shadow_on_table(&self, p: V3, to_lamp: V3) -> (f64, f64) {
        let q = self.to_local(p);
        let l = self.dir_to_local(to_lamp);
        let [hw, hl] = self.half;
        let shift = [-l[0] / l[2] * self.thickness, -l[1] / l[2] * self.thickness];
        let dx = ((q[0] - shift[0]).abs() - hw).max(0.0);
        let dy = ((q[1] - shift[1]).abs() - hl).max(0.0);
        let out = len2(dx, dy);
        let shadow = 0.35 + 0.65 * smoothstep(0.0, 12.0, out);
        let near = len2((q[0].abs() - hw).max(0.0), (q[1].abs() - hl).max(0.0));
        let ao = 0.7 + 0.3 * smoothstep(0.0, 40.0, near);
        (shadow, ao)
    }
}

/// Moves overlapping stones apart until they at most touch (a few relaxation sweeps over
/// neighbouring points), keeping each within `limit` of its intersection.
fn push_apart(stones: &mut [StoneBody], grid: &[Option<usize>], radius: f64, limit: f64) {
    let mut homes = vec![[0.0, 0.0]; stones.len()];
    for row in 0..BOARD_LINES {
        for col in 0..BOARD_LINES {
            if let Some(i) = grid[row * BOARD_LINES + col] {
                let b = board_to_world(col as f64, row as f64);
                homes[i] = [b[0], b[1]];
            }
        }
    }
    let gap = 2.0 * radius;
    for _ in 0..6 {
        let mut moved = false;
        for row in 0..BOARD_LINES {
            for col in 0..BOARD_LINES {
                let Some(i) = grid[row * BOARD_LINES + col] else {
                    continue;
                };
                // Each pair once: the right, lower and the two lower diagonal neighbours.
                for (dc, dr) in [(1i64, 0i64), (0, 1), (1, 1), (-1, 1)] {
                    let (c2, r2) = (col as i64 + dc, row as i64 + dr);
                    if c2 < 0 || r2 < 0 || c2 >= BOARD_LINES as i64 || r2 >= BOARD_LINES as i64 {
                        continue;
                    }
                    let Some(j) = grid[r2 as usize * BOARD_LINES + c2 as usize] else {
                        continue;
                    };
                    let (a, b) = (stones[i].centre, stones[j].centre);
                    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
                    let d = len2(dx, dy);
                    if d >= gap || d < 1e-9 {
                        continue;
                    }
                    let push = (gap - d) / 2.0;
                    let (ux, uy) = (dx / d, dy / d);
                    stones[i].centre[0] -= ux * push;
                    stones[i].centre[1] -= uy * push;
                    stones[j].centre[0] += ux * push;
                    stones[j].centre[1] += uy * push;
                    moved = true;
                }
            }
        }
        for (stone, home) in stones.iter_mut().zip(&homes) {
            for (c, h) in stone.centre.iter_mut().zip(home) {
                *c = c.clamp(h - limit, h + limit);
            }
        }
        if !moved {
            break;
        }
    }
}

/// Ray–ellipsoid (semi-axes r, r, h) intersection: nearest t > 0.
pub(crate) fn ray_stone(origin: V3, dir: V3, centre: V3, r: f64, h: f64) -> Option<f64> {
    let o = [(origin[0] - centre[0]) / r, (origin[1] - centre[1]) / r, (origin[2] - centre[2]) / h];
    let d = [dir[0] / r, dir[1] / r, dir[2] / h];
    let a = dot(d, d);
    let b = dot(o, d);
    let c = dot(o, o) - 1.0;
    let disc = b * b - a * c;
    if disc < 0.0 {
        return None;
    }
    let t = (-b - disc.sqrt()) / a;
    (t > 0.0).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pushed_apart_stones_do_not_overlap_and_stay_near_their_points() {
        let mut position = Position::empty();
        for row in 4..10 {
            for col in 4..12 {
                position.set(col, row, if (row + col) % 3 == 0 { Stone::WHITE } else { Stone::BLACK });
            }
        }
        let style = StoneStyle { jitter_mm: 2.5, diameter_mm: 22.4, push_apart: true, ..StoneStyle::default() };
        let board = BoardBody::new(&position, &style, &BoardStyle::default(), 4, [0.0; 2], 0.0);
        let r = board.stone_radius;
        let mut worst_overlap: f64 = 0.0;
        for (i, a) in board.stones.iter().enumerate() {
            for b in &board.stones[i + 1..] {
                let d = len2(a.centre[0] - b.centre[0], a.centre[1] - b.centre[1]);
                worst_overlap = worst_overlap.max(2.0 * r - d);
            }
        }
        // Rows are 22 mm apart and stones 22.4 mm wide: a full row cannot avoid 0.4 mm.
        assert!(worst_overlap < 0.6, "overlap {worst_overlap:.2} mm");
        for row in 0..BOARD_LINES {
            for col in 0..BOARD_LINES {
                if let Some(i) = board.grid[row * BOARD_LINES + col] {
                    let home = board_to_world(col as f64, row as f64);
                    let c = board.stones[i].centre;
                    assert!((c[0] - home[0]).abs() <= 8.8 + 1e-9 && (c[1] - home[1]).abs() <= 8.8 + 1e-9);
                }
            }
        }
    }

    #[test]
    fn frames_turn_and_return() {
        let board =
            BoardBody::new(&Position::empty(), &StoneStyle::default(), &BoardStyle::default(), 1, [500.0, -30.0], 30.0);
        let p = [520.0, 10.0, 3.0];
        let q = board.to_local(p);
        let back = board.dir_to_world([q[0], q[1], q[2]]);
        assert!((back[0] + 500.0 - p[0]).abs() < 1e-9 && (back[1] - 30.0 - p[1]).abs() < 1e-9);
        assert!(board.covers([500.0, -30.0, 0.0]) && !board.covers([0.0, 0.0, 0.0]));
    }
}
