//! Stones as evidence of where the intersections are. On a crowded board most intersections are
//! hidden under stones, and the two line searches of [`super::refine`] see nothing there; but a
//! stone is a disc about a cell across centred on its intersection, whatever its colour, and the
//! board shows between stones at the cell centres (four touching stones leave the middle of
//! their cell bare). A point "agrees" here when a disc of stone-coloured pixels, set off from the
//! board's own colour, is centred near where the grid puts it.
//!
//! A stone stands on the board: the centre of what the camera sees of it lies above the board's
//! plane, so on an oblique view stone centres sit a fraction of a cell off the intersections, by
//! nearly the same amount everywhere (the fit estimates that offset, see [`super::refine::fit`]).
//!
//! Constants are a priori (from the geometry of stones on a board), not fitted to photos.

use super::refine::Working;
use super::response::Plane;
use crate::work::WorkMeter;
use crate::GridGeometry;

/// Radius, in cells, of the window whose stone-coloured pixels pull the centre (mean shift): a
/// stone's radius is about 0.47 cell, and a neighbour's disc begins 0.53 cell away.
const WINDOW_RADIUS_CELLS: f64 = 0.5;
/// Radius, in cells, that must be wholly stone-coloured round a stone's centre.
const CORE_RADIUS_CELLS: f64 = 0.3;
/// Share of the core that must be stone-coloured.
const MIN_CORE_SHARE: f64 = 0.9;
/// The bare board between stones, in cells from a stone's centre along the diagonals (the cell
/// centre lies at 0.71; a stone reaches 0.47, the diagonal neighbour 0.94).
const GAP_RADII_CELLS: [f64; 3] = [0.6, 0.7, 0.8];
/// Fewest of the four diagonals that must show bare board (a blob larger than a stone, a hand,
/// a dark cloth fill the gaps; a disc does not).
const MIN_OPEN_DIAGONALS: usize = 2;
/// Brightness, as a fraction of the board's, outside which a pixel is not board: darker than
/// this is a dark stone (a stone's own shadow on the board stays lighter), brighter is a white one.
const DARK_FRACTION: f64 = 0.62;
const BRIGHT_FRACTION: f64 = 1.12;
/// Difference of tint (blue over the mean of red and green, per unit of brightness) from the
/// board's, beyond which a pixel is not board: wood is yellow, white and pale stones are not.
const TINT_DIFFERENCE: f64 = 0.2;
/// Mean-shift steps and the move (in cells) below which the centre has settled.
const SHIFT_STEPS: usize = 5;
const SETTLED_CELLS: f64 = 0.02;

/// The board's own colour, the reference stones are told from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BoardColour {
    brightness: f64,
    tint: Option<f64>,
}

/// Fewest line crossings the board's colour is read beside.
const MIN_CROSSINGS_FOR_COLOUR: usize = 8;
/// Distance from a crossing, in cells along the cell diagonals, at which the bare board is read:
/// the nearest stone that may stand there (on a neighbouring point) reaches no closer than 0.6.
const BESIDE_CROSSING_CELLS: f64 = 0.25;

/// The board's colour read beside line crossings seen at board points (`col`, `row`, working
/// pixel): the median brightness (and tint) a quarter cell along the four diagonals of each. Read
/// beside lines, not at the grid's cell centres: a lattice half a cell off has stones at its cell
/// centres and would take the bare gaps between them for stones.
pub(crate) fn board_colour(
    work: &Working,
    geom: &GridGeometry,
    crossings: &[(usize, usize, [f64; 2])],
) -> Option<BoardColour> {
    if crossings.len() < MIN_CROSSINGS_FOR_COLOUR {
        return None;
    }
    let mut grey = Vec::new();
    let mut tint = Vec::new();
    for &(col, row, p) in crossings {
        let Some(f) = frame(work, geom, col as f64, row as f64) else { continue };
        let f = Frame { origin: p, ..f };
        for (a, b) in [(1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0)] {
            let q = f.at(a * BESIDE_CROSSING_CELLS, b * BESIDE_CROSSING_CELLS);
            if !inside(&work.plane, q) {
                continue;
            }
            grey.push(f64::from(work.plane.sample(q[0], q[1])));
            if let Some(t) = &work.tint {
                tint.push(f64::from(t.sample(q[0], q[1])));
            }
        }
    }
    let brightness = median(&mut grey)?;
    (brightness > 0.0).then(|| BoardColour { brightness, tint: median(&mut tint) })
}

fn median(v: &mut [f64]) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

fn inside(plane: &Plane, p: [f64; 2]) -> bool {
    p[0] >= 0.0 && p[1] >= 0.0 && p[0] <= (plane.width - 1) as f64 && p[1] <= (plane.height - 1) as f64
}

/// Whether the working pixel at `p` is unlike the bare board (`None` outside the image).
fn stone_coloured(work: &Working, board: &BoardColour, p: [f64; 2]) -> Option<bool> {
    if !inside(&work.plane, p) {
        return None;
    }
    let level = f64::from(work.plane.sample(p[0], p[1])) / board.brightness;
    if !(DARK_FRACTION..=BRIGHT_FRACTION).contains(&level) {
        return Some(true);
    }
    Some(match (&work.tint, board.tint) {
        (Some(t), Some(bt)) => (f64::from(t.sample(p[0], p[1])) - bt).abs() > TINT_DIFFERENCE,
        _ => false,
    })
}

/// Affine frame of the grid at a board point: working pixel of (u, v) cells from it.
struct Frame {
    origin: [f64; 2],
    du: [f64; 2],
    dv: [f64; 2],
}

impl Frame {
    fn at(&self, u: f64, v: f64) -> [f64; 2] {
        [self.origin[0] + u * self.du[0] + v * self.dv[0], self.origin[1] + u * self.du[1] + v * self.dv[1]]
    }
}

fn frame(work: &Working, geom: &GridGeometry, col: f64, row: f64) -> Option<Frame> {
    let o = work.to_work(geom.project(col, row));
    let a = work.to_work(geom.project(col + 0.5, row));
    let b = work.to_work(geom.project(col - 0.5, row));
    let c = work.to_work(geom.project(col, row + 0.5));
    let d = work.to_work(geom.project(col, row - 0.5));
    let f = Frame { origin: o, du: [a[0] - b[0], a[1] - b[1]], dv: [c[0] - d[0], c[1] - d[1]] };
    [o, f.du, f.dv].iter().flatten().all(|v| v.is_finite()).then_some(f)
}

/// Sample offsets (in cells) filling a disc of `radius`, on a square lattice of `step`.
fn disc_offsets(radius: f64, step: f64) -> Vec<[f64; 2]> {
    let n = (radius / step).floor() as i32;
    let mut out = Vec::new();
    for j in -n..=n {
        for i in -n..=n {
            let (u, v) = (f64::from(i) * step, f64::from(j) * step);
            if u * u + v * v <= radius * radius {
                out.push([u, v]);
            }
        }
    }
    out
}

/// The centre of a stone standing on board point (`col`, `row`), searched within
/// `radius_cells` of where `geom` puts the point, in working pixels; `None` when no stone-sized
/// disc unlike the board is centred there.
pub(crate) fn stone_at(
    work: &Working,
    geom: &GridGeometry,
    board: &BoardColour,
    col: f64,
    row: f64,
    radius_cells: f64,
    meter: &WorkMeter,
) -> Option<[f64; 2]> {
    let f = frame(work, geom, col, row)?;
    let cell = f.du[0].hypot(f.du[1]).min(f.dv[0].hypot(f.dv[1]));
    // Below about 5 working pixels a cell holds too few samples to tell a disc.
    if cell < 5.0 || !inside(&work.plane, f.origin) {
        return None;
    }
    // Sample spacing of about one working pixel, at most a twelfth of a cell.
    let step = (1.0 / cell).max(1.0 / 12.0);
    let window = disc_offsets(WINDOW_RADIUS_CELLS, step);
    if !meter.charge((SHIFT_STEPS * window.len()) as u64) {
        return None;
    }
    let (mut u, mut v) = (0.0f64, 0.0f64);
    for _ in 0..SHIFT_STEPS {
        let (mut su, mut sv, mut n) = (0.0, 0.0, 0usize);
        for o in &window {
            if stone_coloured(work, board, f.at(u + o[0], v + o[1]))? {
                su += o[0];
                sv += o[1];
                n += 1;
            }
        }
        if n * 3 < window.len() {
            return None;
        }
        let (mu, mv) = (su / n as f64, sv / n as f64);
        u += mu;
        v += mv;
        if u.hypot(v) > radius_cells {
            return None;
        }
        if mu.hypot(mv) < SETTLED_CELLS {
            break;
        }
    }
    let core = disc_offsets(CORE_RADIUS_CELLS, step);
    let solid = core.iter().filter(|o| stone_coloured(work, board, f.at(u + o[0], v + o[1])) == Some(true)).count();
    if (solid as f64) < MIN_CORE_SHARE * core.len() as f64 {
        return None;
    }
    // Each diagonal whose gap shows bare board somewhere; a stone's own side face (seen at a
    // slant) and its shadow can cover up to two of them.
    let mut open = 0usize;
    for quadrant in 0..4 {
        let base = std::f64::consts::FRAC_PI_4 + f64::from(quadrant) * std::f64::consts::FRAC_PI_2;
        let bare = GAP_RADII_CELLS.iter().any(|&r| {
            [-0.3f64, 0.0, 0.3].iter().any(|&da| {
                let (a, b) = ((base + da).cos() * r, (base + da).sin() * r);
                stone_coloured(work, board, f.at(u + a, v + b)) == Some(false)
            })
        });
        open += usize::from(bare);
    }
    if open < MIN_OPEN_DIAGONALS {
        return None;
    }
    Some(f.at(u, v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LensDistortion;
    use image::{GrayImage, Luma};

    const CELL: f64 = 20.0;
    const ORIGIN: f64 = 40.0;

    /// A light board with lines and black stones (radius 0.47 cell) on every point of column 5
    /// and of row 7; a dark blob three cells wide centred on (14, 14).
    fn board_with_stones() -> (GrayImage, GridGeometry) {
        let img = GrayImage::from_fn(440, 440, |x, y| {
            let (u, v) = ((f64::from(x) - ORIGIN) / CELL, (f64::from(y) - ORIGIN) / CELL);
            let (cu, cv) = (u.round(), v.round());
            let stone_here = (cu == 5.0 || cv == 7.0) && (0.0..=18.0).contains(&cu) && (0.0..=18.0).contains(&cv);
            if stone_here && (u - cu).hypot(v - cv) < 0.47 {
                return Luma([30]);
            }
            if (u - 14.0).hypot(v - 14.0) < 1.5 {
                return Luma([30]);
            }
            let near = |t: f64| (t - t.round()).abs() * CELL < 0.8 && (-0.05..=18.05).contains(&t);
            if (near(u) && (0.0..=18.0).contains(&v)) || (near(v) && (0.0..=18.0).contains(&u)) {
                Luma([60])
            } else {
                Luma([200])
            }
        });
        let h = [[CELL, 0.0, ORIGIN], [0.0, CELL, ORIGIN], [0.0, 0.0, 1.0]];
        (img, GridGeometry { homography: h, lens: LensDistortion::none(440, 440) })
    }

    #[test]
    fn a_stone_is_found_centred_on_its_point_and_nothing_else_is() {
        let (img, truth) = board_with_stones();
        let meter = WorkMeter::unlimited();
        let work = super::super::working(&img, &meter);
        // The board's colour beside crossings seen on the empty points.
        let crossings: Vec<(usize, usize, [f64; 2])> = (10..13)
            .flat_map(|c| (10..13).map(move |r| (c, r)))
            .map(|(c, r)| (c, r, truth.project(c as f64, r as f64)))
            .collect();
        let board = board_colour(&work, &truth, &crossings).expect("the board's colour");
        // The grid a third of a cell off: the stone pulls the point back onto its centre.
        let off = crate::locate::refine::reindex(&truth, &crate::locate::refine::translation(0.3, -0.2));
        for (c, r) in [(5.0, 2.0), (9.0, 7.0), (5.0, 7.0)] {
            let found = stone_at(&work, &off, &board, c, r, 0.42, &meter).expect("a stone");
            let truth_px = truth.project(c, r);
            let err = (found[0] - truth_px[0]).hypot(found[1] - truth_px[1]) / CELL;
            assert!(err < 0.08, "stone at ({c}, {r}) found {err:.2} cell off");
        }
        // An empty point, and a blob larger than a stone.
        assert_eq!(stone_at(&work, &truth, &board, 10.0, 10.0, 0.42, &meter), None);
        assert_eq!(stone_at(&work, &truth, &board, 14.0, 14.0, 0.42, &meter), None);
    }
}
