//! Board location: find the 19×19 grid in one frame with no clicks and return its
//! [`GridGeometry`] with a fit-quality measure, or take corners given by a person.
//!
//! Pipeline (see each submodule): a downscaled grey working image and its thin-dark-line
//! response ([`response`]); Hough lines, two families with vanishing points, projective
//! rectification and a 19-line comb search for a first lattice ([`lattice`]); then refinement
//! against the intersections — 1-D line searches at each predicted intersection, RANSAC + least
//! squares over all of them, extent correction, radial distortion, upright indexing ([`refine`]).
//! When no look at the lines finds a board, the board's outline against a darker surround places
//! a first lattice instead ([`outline`]), and on a crowded board the lattice of its stones
//! grown from it, phased by the crossings between them ([`stones`]). A board small in a large
//! frame is searched again in a cut of the full-resolution frame around it ([`zoom`]). When
//! all of that fails on a colour frame, the outline and the stones are looked for once more on
//! the frame's standard luma ([`locate`]).

pub mod crossings;
mod extent;
mod given;
mod lattice;
mod outline;
pub(crate) mod refine;
pub(crate) mod response;
mod stones;
mod zoom;

use image::{GrayImage, RgbImage};
use nalgebra::Matrix3;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::work::{WorkLimit, WorkMeter, WorkStopped};
use crate::{GridGeometry, LensDistortion};
use refine::Working;
use tengen_rules::BOARD_LINES;

pub use given::{refine_corners, refine_given, refine_or_find_corners, GivenCorners, Refinement};

/// Longest side of the working image; larger frames are box-downscaled by an integer factor.
pub const WORKING_MAX_SIDE: u32 = 1000;
/// Lattice hypotheses refined per level before giving up on it.
const MAX_HYPOTHESES: usize = 2;
/// Pairs of line families the third, lit-lines look tries (see [`search`]).
const LIT_FAMILY_PAIRS: usize = 1;
/// A refined grid with this many agreeing intersections ends the search early.
const CONFIDENT_INLIERS: usize = 120;
/// Fewest intersections that must agree with the fitted grid to accept a board.
const MIN_INLIERS: usize = 40;
/// Largest accepted RMS residual of the fit, in cells.
const MAX_RMS_CELLS: f64 = 0.07;
/// Smallest accepted cell, in full-resolution pixels.
const MIN_CELL_PX: f64 = 4.0;
/// Lines inside the grid must be this much stronger than the lines just outside it.
const MIN_EXTENT_CONTRAST: f64 = 1.3;
/// Lines beyond the 19 on every side searched for crossings when choosing the board's extent
/// (a priori: a third of the board; first lattices on the table's grain were 2–6 lines off).
const EXTENT_REACH: i32 = 6;

/// Oriented line evidence on the odd-numbered lines over that on the even-numbered ones (or the
/// reverse), below which a grid is taken to be at half the true spacing. Real boards measure
/// 0.6–1.0 (crowded, blurred frames lowest); half-spaced fits on crowded boards 0.1–0.5.
const MIN_ALTERNATION_BALANCE: f64 = 0.5;
/// A grid with this many dead lines among the outer five at both ends of a family
/// ([`refine::dead_lines_at_both_ends`]) is refused. A priori (a majority of the five); measured
/// 5 Dec 2026 on every grid that passed the other gates (several a frame): at most 1 on 349 from
/// the photos and 3 on a wrong one (gw-dev 1 `IMG_1688` as `tengen detect` reads it, two rows
/// onto the bowls); at most 2 on 646 from the rendered stress suite and 4 on the wrong one there
/// (stones/200 #1, twice the spacing along one family). See models/locate.md.
const MIN_DEAD_OUTER_LINES: usize = 3;

/// Share of the line response on each family's 19 lines that runs along them, below which the
/// family is taken to be diagonals of the board's lattice (they pass through its crossings
/// too). Between the one such grid seen (gw-dev 1 `violet_1`: 0.09) and the lowest of the 330
/// right grids of every source (0.28); not fitted.
const MIN_ORIENTED_SHARE: f64 = 0.15;

/// How to locate the board.
#[derive(Debug, Clone, Default)]
pub struct LocateOptions {
    /// Outermost intersections TL, TR, BR, BL given by a person (flag or calibration file), in
    /// image pixels. When present they replace the search: the grid they span is refined to
    /// the lines (see [`refine_corners`]).
    pub corners: Option<[[f64; 2]; 4]>,
    /// Known lens distortion (from a calibration file); when absent it is estimated.
    pub lens: Option<LensDistortion>,
    /// Most work the search may do before it gives up with [`LocateError::Stopped`].
    pub work: WorkLimit,
}

/// Where a geometry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GeometrySource {
    /// Found by searching the image.
    Searched,
    /// Built from corners given by a person.
    GivenCorners,
}

/// How well the located grid fits the image.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitQuality {
    /// Where the geometry came from.
    pub source: GeometrySource,
    /// Intersections seen in the image that agree with the grid (of 361; stones hide the rest).
    pub inlier_intersections: usize,
    /// Root-mean-square distance of those intersections from the fitted grid, in cells.
    pub rms_error_cells: f64,
    /// Mean line evidence on the 19 lines over that on the lines just outside (≥ 1.3 accepted);
    /// low values mean the extent is uncertain. 0 when the corners were given by a person.
    pub extent_contrast: f64,
    /// Median cell size in pixels.
    pub cell_px: f64,
    /// Work the search took, in the steps of [`WorkLimit`] (0 for given corners).
    #[serde(default)]
    pub work_steps: u64,
}

/// A located board.
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    /// The grid in the image.
    pub geometry: GridGeometry,
    /// How well it fits.
    pub quality: FitQuality,
}

/// Why no board could be located.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum LocateError {
    /// The image is too small to hold a readable 19×19 grid.
    #[error("image {width}×{height} is too small to locate a board")]
    ImageTooSmall {
        /// Width in pixels.
        width: u32,
        /// Height in pixels.
        height: u32,
    },
    /// No 19×19 grid was found; the reason says which stage gave up.
    #[error("no board found: {0}")]
    NoBoard(String),
    /// Corners given by a person do not form a usable quadrilateral.
    #[error("the given corners do not form a board: {0}")]
    BadCorners(String),
    /// The search used up its work budget or was cancelled before it found a board.
    #[error("board search stopped: {0}")]
    Stopped(#[from] WorkStopped),
}

/// Locates the board in an RGB frame (pixels as seen).
///
/// When the search on the frame's grey finds no board, the board's outline and its stones
/// (the fourth and fifth looks) are looked for once more on the frame's other grey, the
/// standard luma ([`crate::grey`], Rec. 709).
pub fn locate(rgb: &RgbImage, options: &LocateOptions) -> Result<Located, LocateError> {
    locate_with(&response::gray_from_rgb(rgb), Some(OtherGrey(rgb)), options)
}

/// Locates the board in a grey frame (pixels as seen), within the work budget of the options.
pub fn locate_gray(gray: &GrayImage, options: &LocateOptions) -> Result<Located, LocateError> {
    locate_with(gray, None, options)
}

/// The colour frame whose other grey a last try looks at (a priori, no constant chosen): the
/// search's grey weighs red and green alike, (2R + 2G + B) / 5, so that light wood stands out
/// from its lines and from black and white stones; a stone of another colour whose weighted
/// grey ties with the wood's (green stones under some lamps) leaves only gaps between stones
/// to be found. The standard luma weighs green 3.4 times red, so a colour that ties with the
/// wood in one grey does not in the other. Only frames on which every look failed are looked
/// at again, so every board found before stays as it was.
#[derive(Clone, Copy)]
struct OtherGrey<'a>(&'a RgbImage);

/// A channel at or above this level is clipped (JPEG ringing keeps a clipped area a few
/// levels under 255).
const CLIPPED_LEVEL: u8 = 250;

/// The colour channel the last search runs on when both greys found nothing: under a
/// coloured lamp one channel clips on the board (its lines vanish there) and another is nearly
/// dark, and both greys mix them in. The board is the frame's large bright surface, so its
/// lines show best in the channel whose bright end (90th percentile, as `lattice::bright_end`
/// takes it) is highest without being clipped; with every channel clipped, the one least
/// often at the clip. A priori: nothing chosen from photos.
fn lamp_channel(rgb: &RgbImage) -> (&'static str, GrayImage) {
    let mut hist = [[0usize; 256]; 3];
    for px in rgb.pixels() {
        for (k, h) in hist.iter_mut().enumerate() {
            h[usize::from(px[k])] += 1;
        }
    }
    let pixels = rgb.width() as usize * rgb.height() as usize;
    let clipped = |h: &[usize; 256]| h[usize::from(CLIPPED_LEVEL)..].iter().sum::<usize>();
    let unclipped = (0..3)
        .map(|k| (k, lattice::top_tenth_level(&hist[k], pixels)))
        .filter(|&(_, v)| v < CLIPPED_LEVEL)
        .max_by_key(|&(_, v)| v)
        .map(|(k, _)| k);
    let k = unclipped.unwrap_or_else(|| (0..3).min_by_key(|&k| clipped(&hist[k])).unwrap_or(0));
    let grey = GrayImage::from_fn(rgb.width(), rgb.height(), |x, y| image::Luma([rgb.get_pixel(x, y)[k]]));
    (["red", "green", "blue"][k], grey)
}

/// A grid the search accepted on its grey with fewer than [`CONFIDENT_INLIERS`] agreeing
/// intersections (the count that ends the search early, a priori: a third of the board) is
/// weak; then the line looks run once more on the standard luma, and their grid replaces the
/// first only when it is not weak (at least [`CONFIDENT_INLIERS`] agree there) and, when the
/// first covers the frame's centre, covers it too (the board a camera is pointed at). A grid
/// accepted at the gates by a lattice on the wrong lines of one grey (cast/stage-red: 63
/// intersections, 2.70 cells off) is then taken over by the board's own lines in the other
/// (192, 0.03 cell). Every grid not weak stays as it was (the look does not run), and so does
/// every grid from the stones (120 stones and 20 crossings at least).
fn stronger_in_luma(
    rgb: &RgbImage,
    options: &LocateOptions,
    base_lens: LensDistortion,
    meter: &WorkMeter,
    first: &Located,
) -> Option<Located> {
    if first.quality.inlier_intersections >= CONFIDENT_INLIERS || meter.check().is_err() {
        return None;
    }
    let (width, height) = rgb.dimensions();
    meter.charge(u64::from(width) * u64::from(height));
    let second = search(&crate::grey(rgb), options, base_lens, meter, Looks::Lines).ok()?;
    let centre = [f64::from(width) / 2.0, f64::from(height) / 2.0];
    let keeps_centre = !covers(&first.geometry, 0.0, centre) || covers(&second.geometry, 0.0, centre);
    (second.quality.inlier_intersections >= CONFIDENT_INLIERS && keeps_centre).then_some(second)
}

fn locate_with(gray: &GrayImage, colour: Option<OtherGrey>, options: &LocateOptions) -> Result<Located, LocateError> {
    let (width, height) = gray.dimensions();
    if width < 64 || height < 64 {
        return Err(LocateError::ImageTooSmall { width, height });
    }
    let base_lens = options.lens.unwrap_or_else(|| LensDistortion::none(width, height));
    if let Some(corners) = options.corners {
        return refine_corners(gray, corners, options.lens).map(|given| given.located);
    }
    let meter = WorkMeter::new(&options.work);
    let outcome = search_centred(gray, options, base_lens, &meter)
        .map(|first| match colour {
            // The second grey's look runs at the working scale, where the first grey's lines
            // found no board at all when only the finer refinement did: it has no weaker grid
            // of that look to replace, and would spend the budget's margin looking.
            Some(OtherGrey(rgb)) if !first.finer => {
                stronger_in_luma(rgb, options, base_lens, &meter, &first.located).unwrap_or(first.located)
            }
            _ => first.located,
        })
        .or_else(|err| match (err, colour) {
            (LocateError::NoBoard(reason), Some(OtherGrey(rgb))) if meter.check().is_ok() => {
                meter.charge(u64::from(width) * u64::from(height));
                let other = working(&crate::grey(rgb), &meter);
                match outline_looks(&other, options, base_lens, &meter) {
                    Some(Ok(found)) => Ok(found),
                    Some(Err(LocateError::NoBoard(again))) => {
                        Err(LocateError::NoBoard(format!("{reason}; in the standard luma: {again}")))
                    }
                    None => Err(LocateError::NoBoard(format!("{reason}; in the standard luma: no outline"))),
                    Some(Err(other)) => Err(other),
                }
            }
            (err, _) => Err(err),
        });
    let outcome = match (outcome, colour) {
        (Err(LocateError::NoBoard(reason)), Some(OtherGrey(rgb))) if meter.check().is_ok() => {
            meter.charge(u64::from(width) * u64::from(height));
            let (name, channel) = lamp_channel(rgb);
            // As for the second grey (`stronger_in_luma`), only a grid that is not weak is
            // taken from this last look; whatever stops it, the frame's reasons are kept.
            let why = match search(&channel, options, base_lens, &meter, Looks::Every) {
                Ok(mut found) if found.quality.inlier_intersections >= CONFIDENT_INLIERS => {
                    found.quality.work_steps = meter.spent();
                    return Ok(found);
                }
                _ if meter.check().is_err() => "the work budget ran out before this look was done".into(),
                Ok(weak) => format!("only {} intersections agree with a grid", weak.quality.inlier_intersections),
                Err(LocateError::NoBoard(again)) => again,
                Err(other) => other.to_string(),
            };
            return Err(LocateError::NoBoard(format!("{reason}; in the {name} channel: {why}")));
        }
        (outcome, _) => outcome,
    };
    match outcome {
        Ok(mut found) => {
            found.quality.work_steps = meter.spent();
            Ok(found)
        }
        // A search cut short says so, whatever the stage that noticed: the frame was not judged.
        Err(err) => Err(meter.check().err().map_or(err, LocateError::Stopped)),
    }
}

/// The search, then, when the board found does not cover the frame's centre, once more with it
/// blanked out: a camera set up for a board centres it, so a board that covers the centre is
/// the one to read, not its neighbour in the hall's row (a priori: a person setting up a camera
/// for a board points it at that board). The first board stands unless the second covers the
/// centre.
fn search_centred(
    gray: &GrayImage,
    options: &LocateOptions,
    base_lens: LensDistortion,
    meter: &WorkMeter,
) -> Result<Searched, LocateError> {
    let first = search_by_look(gray, options, base_lens, meter, Looks::Every)?;
    let centre = [f64::from(gray.width()) / 2.0, f64::from(gray.height()) / 2.0];
    if covers(&first.located.geometry, 0.0, centre) {
        return Ok(first);
    }
    meter.charge(u64::from(gray.width()) * u64::from(gray.height()));
    let blanked = blank_board(gray, &first.located.geometry);
    match search_by_look(&blanked, options, base_lens, meter, Looks::Every) {
        Ok(second) if covers(&second.located.geometry, 0.0, centre) => Ok(second),
        _ => Ok(first),
    }
}

/// Whether the grid, grown by `beyond` cells on every side, covers the pixel.
fn covers(geometry: &GridGeometry, beyond: f64, pixel: [f64; 2]) -> bool {
    inside_quad(&grown_outline(geometry, beyond), pixel)
}

/// Whether the pixel lies inside the convex quadrilateral (either winding).
fn inside_quad(quad: &[[f64; 2]; 4], pixel: [f64; 2]) -> bool {
    let side = |i: usize| {
        let (a, b) = (quad[i], quad[(i + 1) % 4]);
        (b[0] - a[0]) * (pixel[1] - a[1]) - (b[1] - a[1]) * (pixel[0] - a[0])
    };
    (0..4).all(|i| side(i) >= 0.0) || (0..4).all(|i| side(i) <= 0.0)
}

/// The grid's outline `beyond` cells outside its outer lines, as seen.
fn grown_outline(geometry: &GridGeometry, beyond: f64) -> [[f64; 2]; 4] {
    let (lo, hi) = (-beyond, (BOARD_LINES - 1) as f64 + beyond);
    [geometry.project(lo, lo), geometry.project(hi, lo), geometry.project(hi, hi), geometry.project(lo, hi)]
}

/// Cells beyond the outer lines blanked with a found board (a priori: its outer lines and the
/// stones on them, whose rims reach half a cell out, leave nothing for the next search).
const BLANK_BEYOND_CELLS: f64 = 1.0;

/// The frame with a found board blanked out: every pixel within [`BLANK_BEYOND_CELLS`] of its
/// grid set to the blanked area's mean, so no line or stone of it is left to find.
fn blank_board(gray: &GrayImage, geometry: &GridGeometry) -> GrayImage {
    let quad = grown_outline(geometry, BLANK_BEYOND_CELLS);
    let (w, h) = (gray.width(), gray.height());
    let clamp = |v: f64, max: u32| (v.max(0.0) as u32).min(max);
    let x0 = clamp(quad.iter().map(|p| p[0]).fold(f64::INFINITY, f64::min).floor(), w);
    let x1 = clamp(quad.iter().map(|p| p[0]).fold(f64::NEG_INFINITY, f64::max).ceil() + 1.0, w);
    let y0 = clamp(quad.iter().map(|p| p[1]).fold(f64::INFINITY, f64::min).floor(), h);
    let y1 = clamp(quad.iter().map(|p| p[1]).fold(f64::NEG_INFINITY, f64::max).ceil() + 1.0, h);
    let inside = |x: u32, y: u32| inside_quad(&quad, [f64::from(x), f64::from(y)]);
    let (mut sum, mut count) = (0u64, 0u64);
    for y in y0..y1 {
        for x in (x0..x1).filter(|&x| inside(x, y)) {
            sum += u64::from(gray.get_pixel(x, y)[0]);
            count += 1;
        }
    }
    let mut out = gray.clone();
    if count == 0 {
        return out;
    }
    let mean = image::Luma([(sum / count) as u8]);
    for y in y0..y1 {
        for x in (x0..x1).filter(|&x| inside(x, y)) {
            out.put_pixel(x, y, mean);
        }
    }
    out
}

/// Which looks a search runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Looks {
    /// Every look, then the zoom and the small board at full size (a whole frame).
    Every,
    /// Every look, no zoom (a cut of a frame, already zoomed).
    InCut,
    /// The three line looks alone (the second grey's look at a weak grid, [`stronger_in_luma`]).
    Lines,
}

/// A board one search found.
struct Searched {
    located: Located,
    /// Whether it was found only by refining the first look's lattices at twice the working
    /// resolution ([`refined_finer`]).
    finer: bool,
}

fn search(
    gray: &GrayImage,
    options: &LocateOptions,
    base_lens: LensDistortion,
    meter: &WorkMeter,
    looks: Looks,
) -> Result<Located, LocateError> {
    search_by_look(gray, options, base_lens, meter, looks).map(|found| found.located)
}

/// [`search`], saying whether only the finer refinement found the board.
fn search_by_look(
    gray: &GrayImage,
    options: &LocateOptions,
    base_lens: LensDistortion,
    meter: &WorkMeter,
    looks: Looks,
) -> Result<Searched, LocateError> {
    let zoom = looks == Looks::Every;
    let (width, height) = gray.dimensions();
    let fine_factor = working_factor(width, height);
    let fine = working_at(gray, fine_factor, meter);
    let mut best: Option<Located> = None;
    let mut last_error = LocateError::NoBoard("no lattice hypothesis".into());
    // Hypotheses from the working image, then (for blurred or faint grids, whose lines are too
    // wide for the fine filter) from a half-size copy; always refined on the finest level.
    let mut coarse: Option<Working> = None;
    // A third look, when neither found a board: the working image's line pixels that have a
    // lit surface beside them, so that a dark table's grain does not outvote a crowded board's
    // few visible lines. Its pixels are the first look's, filtered; it tries only the strongest
    // pair of line families (with the grain gone, the board's), which keeps a search that needs
    // all three looks within half the work budget.
    let mut fine_pixels: Vec<lattice::LinePixel> = Vec::new();
    let mut first_hypotheses: Vec<GridGeometry> = Vec::new();
    let mut found_finer = false;
    for level in 0..3 {
        if meter.check().is_err() {
            break;
        }
        let source = match level {
            1 => coarse.insert(working_at(gray, fine_factor * 2, meter)),
            _ => &fine,
        };
        let (w, h) = (source.resp.strength.width, source.resp.strength.height);
        let guesses = match level {
            0 => {
                fine_pixels = lattice::line_pixels(&fine.resp, meter);
                lattice::guess_from(&fine_pixels, w, h, usize::MAX, meter)
            }
            1 => lattice::guess(&source.resp, meter),
            _ => lattice::guess_from(&lattice::lit_pixels(&fine_pixels, &fine.plane), w, h, LIT_FAMILY_PAIRS, meter),
        };
        let guesses = match guesses {
            Ok(g) => g,
            Err(f) => {
                last_error = LocateError::NoBoard(f.describe().to_string());
                continue;
            }
        };
        for guess in guesses.iter().take(MAX_HYPOTHESES) {
            if meter.check().is_err() {
                break;
            }
            let initial = GridGeometry {
                homography: refine::to_rows(&work_to_full(source, &guess.homography)),
                lens: options.lens.unwrap_or(LensDistortion { k1: 0.0, ..base_lens }),
            };
            if level == 0 {
                first_hypotheses.push(initial.clone());
            }
            let mut outcome = refine_from(&fine, &initial, options.lens.is_none(), Extent::ByCrossings, meter);
            if outcome.is_err() && level == 1 {
                outcome = refine_from(source, &initial, options.lens.is_none(), Extent::ByLines, meter);
            }
            // The lit look is for a board against a dark surround: there the board's own margin
            // must show beyond each outer line, or an outer line is the board's edge.
            if level == 2 {
                outcome = with_margin(&fine, outcome, meter);
            }
            match outcome {
                Ok(located) => {
                    let better = best
                        .as_ref()
                        .is_none_or(|b| located.quality.inlier_intersections > b.quality.inlier_intersections);
                    if better {
                        best = Some(located);
                    }
                }
                Err(e) => last_error = e,
            }
            if best.as_ref().is_some_and(|b| b.quality.inlier_intersections >= CONFIDENT_INLIERS) {
                break;
            }
        }
        if best.is_some() {
            break;
        }
    }
    // On a large photo the working image has lost more than half the frame's resolution: on a
    // crowded board the few bare crossings are a pixel or two there and the stones' rims beside
    // them pull the fit off, so a first lattice that was right can fall short of the inliers it
    // needs. Before the looks that ignore the lines, it is refined once more at twice the
    // working resolution. (Not in the second grey's look at a grid already found, which only
    // replaces it with a stronger one and must leave the budget its margin.)
    if best.is_none() && looks != Looks::Lines && fine_factor >= FINER_FROM_FACTOR && meter.check().is_ok() {
        best = refined_finer(gray, options, fine_factor, &first_hypotheses, meter);
        found_finer = best.is_some();
    }
    // A fourth look, when no look at the lines found a board: the board's outline (the lit
    // surface against a darker surround) gives its perspective and extent without any line; the
    // lattice centred in it is refined like the others and must show the board's margin too.
    if best.is_none() && looks != Looks::Lines && meter.check().is_ok() {
        match outline_looks(&fine, options, base_lens, meter) {
            Some(Ok(located)) => best = Some(located),
            Some(Err(e)) => last_error = e,
            None => {}
        }
    }
    // Last, for a board small in a large frame: each region of the working image whose lines
    // form a lattice, cut out of the full-resolution frame and searched on its own.
    let found_by_looks = best.is_some();
    if best.is_none() && zoom && meter.check().is_ok() {
        match zoomed(gray, options, base_lens, &fine, &fine_pixels, meter) {
            Ok(located) => best = Some(located),
            Err(reason) => {
                last_error = match last_error {
                    LocateError::NoBoard(before) => LocateError::NoBoard(format!("{before}; zoomed: {reason}")),
                    other => other,
                }
            }
        }
    }
    // A board found on a downscaled frame that fits a cut searched at a finer scale is searched
    // again there ("large photos are searched downscaled and refined at full size"): its lines
    // and the crossings beyond them, which choose its extent, are twice as many pixels apart.
    if let (Some(found), true) = (&best, zoom && found_by_looks && fine_factor >= 2) {
        if let Some(finer) = at_full_size(gray, options, base_lens, fine_factor, &found.geometry, meter) {
            best = Some(finer);
        }
    }
    // On a crowded board the lines' fit is taken once more from the crossings between the
    // stones only (the quality stays the lines' fit, which accepted the board).
    if let Some(found) = best.as_mut() {
        if let Some(geometry) = stones::refined_between_stones(&fine, &found.geometry, meter) {
            found.geometry = geometry;
        }
    }
    best.map(|located| Searched { located, finer: found_finer }).ok_or(last_error)
}

/// The working factor from which the first look's lattices are refined again at half of it when
/// no line look found a board: a frame larger than twice the working side. (A priori, for speed:
/// below it the finer image is the whole frame, whose line response the 1080p budget cannot pay.)
const FINER_FROM_FACTOR: usize = 3;

/// The best of `hypotheses` refined on the frame at half the working factor (twice the
/// resolution), under the same acceptance as every look; `None` when none is accepted.
fn refined_finer(
    gray: &GrayImage,
    options: &LocateOptions,
    fine_factor: usize,
    hypotheses: &[GridGeometry],
    meter: &WorkMeter,
) -> Option<Located> {
    let finer = working_at(gray, fine_factor.div_ceil(2), meter);
    hypotheses
        .iter()
        .filter_map(|initial| refine_from(&finer, initial, options.lens.is_none(), Extent::ByCrossings, meter).ok())
        .max_by_key(|found| found.quality.inlier_intersections)
}

/// The fourth and fifth looks: the board's outline (the lit surface against a darker surround)
/// gives its perspective and extent without any line; the lattice centred in it is refined like
/// the others and must show the board's margin too; when that is refused, the lattice of the
/// stones grown from it ([`from_stones`]). `None` when no outline is found.
fn outline_looks(
    fine: &Working,
    options: &LocateOptions,
    base_lens: LensDistortion,
    meter: &WorkMeter,
) -> Option<Result<Located, LocateError>> {
    let lens = options.lens.unwrap_or(LensDistortion { k1: 0.0, ..base_lens });
    let quad = outline::board_outline(fine, meter)?;
    let initial = outline::lattice_in_outline(fine, &quad, lens, meter)?;
    let edge = quad.map(|p| fine.to_full(p));
    let refined =
        with_margin(fine, refine_from(fine, &initial, options.lens.is_none(), Extent::ByCrossings, meter), meter);
    // On a crowded board the rims and gaps between the stones make a lattice of crossings
    // half a cell off, which a first lattice about half a cell off may lock onto.
    let refined = refined.and_then(|located| match stones::between_stones(fine, &located.geometry, meter) {
        Some(reason) => Err(LocateError::NoBoard(reason)),
        None => Ok(located),
    });
    Some(refined.or_else(|e| {
        // A fifth look, for a crowded board whose few crossings do not pin a grid: the lattice
        // of its stones, grown from the outline's lattice.
        from_stones(fine, &initial, &edge, meter).map_err(|reason| match e {
            LocateError::NoBoard(lines) => LocateError::NoBoard(format!("{lines}; from the stones: {reason}")),
            other => other,
        })
    }))
}

/// Cells beyond a found board's outer lines cut out to search it again at a finer scale
/// (a priori: a board's margin, up to about 2.5 cells, and a grid found a line or two off).
const FULL_SIZE_BEYOND_CELLS: f64 = 3.0;

/// The board searched again in a cut around `geometry`, when that cut is searched at a finer
/// working scale than the frame; `None` when it is not, or when the cut's search finds no board
/// that stays a cell inside the cut's inner sides (the first grid then stands).
fn at_full_size(
    gray: &GrayImage,
    options: &LocateOptions,
    base_lens: LensDistortion,
    fine_factor: usize,
    geometry: &GridGeometry,
    meter: &WorkMeter,
) -> Option<Located> {
    let quad = grown_outline(geometry, FULL_SIZE_BEYOND_CELLS);
    let (w, h) = (f64::from(gray.width()), f64::from(gray.height()));
    let x0 = quad.iter().map(|p| p[0]).fold(f64::INFINITY, f64::min).max(0.0).floor();
    let y0 = quad.iter().map(|p| p[1]).fold(f64::INFINITY, f64::min).max(0.0).floor();
    let x1 = quad.iter().map(|p| p[0]).fold(f64::NEG_INFINITY, f64::max).min(w).ceil();
    let y1 = quad.iter().map(|p| p[1]).fold(f64::NEG_INFINITY, f64::max).min(h).ceil();
    if !(x1 - x0 >= 64.0 && y1 - y0 >= 64.0) {
        return None;
    }
    let cut = zoom::Cut {
        x0: x0 as u32,
        y0: y0 as u32,
        width: (x1 - x0) as u32,
        height: (y1 - y0) as u32,
        on_frame_border: [x0 <= 0.0, y0 <= 0.0, x1 >= w, y1 >= h],
    };
    // Only a board small in its frame, as for the zoom: a larger one is read without it.
    let corners = geometry.corners();
    let extent = |axis: usize| {
        let (lo, hi) =
            corners.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| (lo.min(p[axis]), hi.max(p[axis])));
        hi - lo
    };
    let small = extent(0).max(extent(1)) <= zoom::MAX_REGION_FRACTION * w.min(h);
    if !small || working_factor(cut.width, cut.height) >= fine_factor || meter.check().is_err() {
        return None;
    }
    meter.charge(u64::from(cut.width) * u64::from(cut.height));
    let shift = |l: LensDistortion| LensDistortion { centre: [l.centre[0] - x0, l.centre[1] - y0], ..l };
    let sub = image::imageops::crop_imm(gray, cut.x0, cut.y0, cut.width, cut.height).to_image();
    let sub_options = LocateOptions { corners: None, lens: options.lens.map(shift), work: options.work.clone() };
    let mut found = search(&sub, &sub_options, shift(base_lens), meter, Looks::InCut).ok()?;
    if zoom::reaches_inner_border(&cut, &found.geometry).is_some() {
        return None;
    }
    found.geometry = found.geometry.translated([x0, y0]);
    Some(found)
}

/// The zoom ([`zoom`]): the cut around the frame's one region of crossing lines, searched on
/// its own; its board, if it stays a cell inside the cut's inner borders, moved back into the
/// frame.
fn zoomed(
    gray: &GrayImage,
    options: &LocateOptions,
    base_lens: LensDistortion,
    fine: &Working,
    pixels: &[lattice::LinePixel],
    meter: &WorkMeter,
) -> Result<Located, String> {
    let cut = zoom::candidate_cut(fine, pixels, gray.width(), gray.height(), working_factor)?;
    if cut.width < 64 || cut.height < 64 {
        return Err(format!("a cut of {}×{} px is too small to search", cut.width, cut.height));
    }
    meter.charge(u64::from(cut.width) * u64::from(cut.height));
    let (x0, y0) = (f64::from(cut.x0), f64::from(cut.y0));
    let shift = |l: LensDistortion| LensDistortion { centre: [l.centre[0] - x0, l.centre[1] - y0], ..l };
    let sub = image::imageops::crop_imm(gray, cut.x0, cut.y0, cut.width, cut.height).to_image();
    let sub_options = LocateOptions { corners: None, lens: options.lens.map(shift), work: options.work.clone() };
    let at = format!("{}×{} at ({}, {})", cut.width, cut.height, cut.x0, cut.y0);
    let mut found =
        search(&sub, &sub_options, shift(base_lens), meter, Looks::InCut).map_err(|e| format!("{at}: {e}"))?;
    if let Some(side) = zoom::reaches_inner_border(&cut, &found.geometry) {
        return Err(format!("{at}: the grid reaches the cut's {side} side"));
    }
    found.geometry = found.geometry.translated([x0, y0]);
    Ok(found)
}

/// The located board of a grid found from the stones, if it is a readable convex grid.
/// The fifth look: the stones' lattice placed by the line crossings where no stone is, and when
/// that is refused, placed by the stones themselves (on a crowded board the stones' rims and
/// shadows make crossings about half a cell off, so the crossings cannot tell the phase there;
/// the crossings' placement is tried first because where it is accepted it is the finer one),
/// and when that is refused too, by the centres of the stones' outlines rather than the box
/// response's peaks (a third try, so that every grid the first two accept stays as it was).
fn from_stones(
    fine: &Working,
    initial: &GridGeometry,
    edge: &[[f64; 2]; 4],
    meter: &WorkMeter,
) -> Result<Located, String> {
    use stones::{StoneCentres, StonePhase};
    let look =
        |phase, centres| stones::stone_grid(fine, initial, edge, phase, centres, meter).and_then(located_from_stones);
    look(StonePhase::Crossings, StoneCentres::Boxes).or_else(|by_crossings| {
        look(StonePhase::Stones, StoneCentres::Boxes).or_else(|by_stones| {
            // A third try, only where both refuse: the stones' centres from their outlines.
            look(StonePhase::Stones, StoneCentres::Outlines).map_err(|by_outlines| {
                format!("{by_crossings}; with the phase from the stones: {by_stones}; from the stones' outlines: {by_outlines}")
            })
        })
    })
}

fn located_from_stones(grid: stones::StoneGrid) -> Result<Located, String> {
    let geometry = refine::orient_upright(&grid.geometry);
    let cell_px = refine::median_cell(&geometry);
    if cell_px < MIN_CELL_PX {
        return Err(format!("grid cells of {cell_px:.1} px are too small"));
    }
    if !is_convex(&geometry.corners()) {
        return Err("grid corners do not form a convex quadrilateral".into());
    }
    Ok(Located {
        geometry,
        quality: FitQuality {
            source: GeometrySource::Searched,
            inlier_intersections: grid.stones + grid.crossings,
            rms_error_cells: grid.crossing_rms_cells,
            extent_contrast: grid.extent_contrast,
            cell_px,
            work_steps: 0,
        },
    })
}

/// A board found against a dark surround must show its own margin beyond each outer line, or
/// an outer line is the board's edge.
fn with_margin(
    fine: &Working,
    outcome: Result<Located, LocateError>,
    meter: &WorkMeter,
) -> Result<Located, LocateError> {
    let located = outcome?;
    let Some(side) = refine::dark_beyond_outer_line(fine, &located.geometry) else {
        return Ok(located);
    };
    // The outer line with no board beyond it is the board's edge, so the board's outer line is
    // the next one in: the grid one line inward, refined there without moving its extent again,
    // stands if the board's margin now shows on every side and a third of the board's
    // intersections agree with it (a weak grid a line off shows a margin too: the board's edge).
    let inward = match side {
        "top" => (0.0, 1.0),
        "bottom" => (0.0, -1.0),
        "left" => (1.0, 0.0),
        _ => (-1.0, 0.0),
    };
    let moved = refine::reindex(&located.geometry, &refine::translation(inward.0, inward.1));
    refine_from(fine, &moved, false, Extent::Fixed, meter)
        .ok()
        .filter(|again| {
            again.quality.inlier_intersections >= CONFIDENT_INLIERS
                && refine::dark_beyond_outer_line(fine, &again.geometry).is_none()
        })
        .ok_or_else(|| {
            LocateError::NoBoard(format!(
                "no board margin beyond the {side} line: an outer line would be the board's edge"
            ))
        })
}

/// Refines a geometry known to be roughly right (within about 0.4 cell), e.g. the previous
/// frame's, against a new frame, within the default work budget. Used by tracking.
pub fn refine_gray(gray: &GrayImage, previous: &GridGeometry) -> Result<Located, LocateError> {
    let meter = WorkMeter::new(&WorkLimit::default());
    let work = working(gray, &meter);
    let refined = refine_from(&work, previous, false, Extent::ByLines, &meter);
    meter.check()?;
    refined
}

pub(crate) fn working(gray: &GrayImage, meter: &WorkMeter) -> Working {
    let (w, h) = gray.dimensions();
    working_at(gray, working_factor(w, h), meter)
}

pub(crate) fn working_factor(width: u32, height: u32) -> usize {
    width.max(height).div_ceil(WORKING_MAX_SIDE).max(1) as usize
}

/// The working image and its line response: work in proportion to the frame's pixels, which
/// the frame limits bound, so it is charged but never cut short.
fn working_at(gray: &GrayImage, factor: usize, meter: &WorkMeter) -> Working {
    let plane = response::working_plane(gray, factor);
    meter.charge(u64::from(gray.width()) * u64::from(gray.height()) + 16 * (plane.width * plane.height) as u64);
    Working { resp: response::line_response(&plane), plane, factor }
}

/// Converts a board → working-pixel homography into board → full-resolution pixels.
fn work_to_full(work: &Working, h: &Matrix3<f64>) -> Matrix3<f64> {
    let k = work.factor as f64;
    let off = (k - 1.0) / 2.0;
    Matrix3::new(k, 0.0, off, 0.0, k, off, 0.0, 0.0, 1.0) * h
}

/// How [`refine_from`] may move a lattice's extent (which 19 lines are the board's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Extent {
    /// The crossings beyond the 19 lines choose first ([`extent`]), then the line evidence.
    /// Not on the half-size copy, where they are too coarse to count: there they moved a grid
    /// by a line on goban-watcher-dev game 2, and not for tracking, whose previous grid is
    /// already right.
    ByCrossings,
    /// The line evidence alone chooses.
    ByLines,
    /// The extent stays: it was chosen already.
    Fixed,
}

/// Refines a first lattice on `work` (see [`refine`]), moving its extent as `extent` allows.
fn refine_from(
    work: &Working,
    initial: &GridGeometry,
    estimate_lens: bool,
    extent: Extent,
    meter: &WorkMeter,
) -> Result<Located, LocateError> {
    let mut geom = initial.clone();
    let mut fit: Option<refine::Fit> = None;
    let mut extent_contrast = 0.0;
    for (pass, radius) in [0.42, 0.3, 0.2, 0.12].into_iter().enumerate() {
        let found = refine::find_intersections(work, &geom, radius, meter);
        meter.check()?;
        let cell = refine::median_cell(&geom);
        let Some(f) = refine::fit(&found, geom.lens, cell) else {
            return Err(LocateError::NoBoard(format!("only {} grid intersections seen", found.len())));
        };
        geom = f.geometry.clone();
        // Fix a wrong extent while the search radius still forgives it. On the second pass (the
        // lattice good to a fraction of a cell by then) the crossings beyond the 19 lines decide
        // first: a lattice several lines off (on the table's grain, the board's side face) has
        // fewer crossings than the board beside it. The line evidence then moves one or two
        // lines, never giving crossings away.
        if pass <= 1 && extent != Extent::Fixed {
            let crossings = (pass == 1 && extent == Extent::ByCrossings)
                .then(|| extent::CrossingMap::measure(work, &geom, EXTENT_REACH, meter));
            if let Some(c) = &crossings {
                let (dc, dr) = (c.decisive_shift(true), c.decisive_shift(false));
                if dc != 0 || dr != 0 {
                    geom = refine::reindex(&geom, &refine::translation(f64::from(dc), f64::from(dr)));
                    continue;
                }
            }
            let (dc, dr, contrast) = refine::best_extent(work, &geom, 2, meter);
            extent_contrast = contrast;
            let keeps_crossings = crossings.as_ref().is_none_or(|c| c.window(dc, dr) >= c.window(0, 0));
            if (dc != 0 || dr != 0) && keeps_crossings {
                geom = refine::reindex(&geom, &refine::translation(f64::from(dc), f64::from(dr)));
                continue;
            }
        }
        if pass == 2 && estimate_lens {
            if let Some(lens) = refine::estimate_lens(&f.inliers, geom.lens, refine::median_cell(&geom)) {
                if let Some(relens) = refine::fit(&f.inliers, lens, refine::median_cell(&geom)) {
                    geom = relens.geometry;
                }
            }
        }
        fit = Some(f);
    }
    let fit = fit.ok_or_else(|| LocateError::NoBoard("the grid did not settle".into()))?;
    let (_, _, contrast) = refine::best_extent(work, &fit.geometry, 0, meter);
    meter.check()?;
    extent_contrast = contrast.min(extent_contrast.max(contrast));
    let geometry = refine::orient_upright(&fit.geometry);

    let cell_px = refine::median_cell(&geometry);
    let quality = FitQuality {
        source: GeometrySource::Searched,
        inlier_intersections: fit.inliers.len(),
        rms_error_cells: fit.rms_cells,
        extent_contrast,
        cell_px,
        work_steps: meter.spent(),
    };
    if quality.inlier_intersections < MIN_INLIERS {
        return Err(LocateError::NoBoard(format!(
            "only {} intersections agree with a grid (need {MIN_INLIERS})",
            quality.inlier_intersections
        )));
    }
    if quality.rms_error_cells > MAX_RMS_CELLS {
        return Err(LocateError::NoBoard(format!("grid fits poorly ({:.2} cell RMS)", quality.rms_error_cells)));
    }
    if cell_px < MIN_CELL_PX {
        return Err(LocateError::NoBoard(format!("grid cells of {cell_px:.1} px are too small")));
    }
    if quality.extent_contrast < MIN_EXTENT_CONTRAST {
        return Err(LocateError::NoBoard(format!("no clear 19-line extent (contrast {:.2})", quality.extent_contrast)));
    }
    if !is_convex(&geometry.corners()) {
        return Err(LocateError::NoBoard("grid corners do not form a convex quadrilateral".into()));
    }
    let oriented = refine::oriented_share(work, &geometry);
    if oriented < MIN_ORIENTED_SHARE {
        return Err(LocateError::NoBoard(format!(
            "the line response does not run along one family of the grid's lines (share {oriented:.2}): a lattice of diagonals"
        )));
    }
    let balance = refine::alternation_balance(work, &geometry);
    if balance < MIN_ALTERNATION_BALANCE {
        return Err(LocateError::NoBoard(format!(
            "every other line is missing (balance {balance:.2}): half the true spacing"
        )));
    }
    let dead = refine::dead_lines_at_both_ends(work, &geometry);
    if dead >= MIN_DEAD_OUTER_LINES {
        return Err(LocateError::NoBoard(format!(
            "{dead} of the outer {} lines on both sides show no line: a lattice stretched past the board",
            refine::OUTER_LINES
        )));
    }
    Ok(Located { geometry, quality })
}

/// Geometry from the four outermost intersections TL, TR, BR, BL given by a person.
pub fn from_corners(corners: [[f64; 2]; 4], lens: LensDistortion) -> Result<Located, LocateError> {
    if corners.iter().flatten().any(|v| !v.is_finite()) {
        return Err(LocateError::BadCorners("a coordinate is not a number".into()));
    }
    if !is_convex(&corners) {
        return Err(LocateError::BadCorners("corners must be TL, TR, BR, BL of a convex quadrilateral".into()));
    }
    let geometry = GridGeometry::from_corners(corners, lens)
        .ok_or_else(|| LocateError::BadCorners("degenerate corners".into()))?;
    let cell_px = refine::median_cell(&geometry);
    if cell_px < MIN_CELL_PX {
        return Err(LocateError::BadCorners(format!("cells of {cell_px:.1} px are too small")));
    }
    Ok(Located {
        geometry,
        quality: FitQuality {
            source: GeometrySource::GivenCorners,
            inlier_intersections: 4,
            rms_error_cells: 0.0,
            extent_contrast: 0.0,
            cell_px,
            work_steps: 0,
        },
    })
}

/// True when the four points, in order, turn the same way at every vertex (clockwise as seen).
fn is_convex(quad: &[[f64; 2]; 4]) -> bool {
    let mut sign = 0.0;
    for i in 0..4 {
        let (a, b, c) = (quad[i], quad[(i + 1) % 4], quad[(i + 2) % 4]);
        let cross = (b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0]);
        if cross.abs() < 1e-9 {
            return false;
        }
        if sign == 0.0 {
            sign = cross.signum();
        } else if cross.signum() != sign {
            return false;
        }
    }
    sign > 0.0
}

/// Development aid: the first lattice hypotheses (before refinement) in full-resolution pixels,
/// and the working line-response image scaled to 8 bits.
#[doc(hidden)]
pub fn debug_hypotheses(gray: &GrayImage) -> (Vec<GridGeometry>, GrayImage) {
    let (width, height) = gray.dimensions();
    let meter = WorkMeter::unlimited();
    let work = working(gray, &meter);
    let lens = LensDistortion::none(width, height);
    let guesses = lattice::guess(&work.resp, &meter).unwrap_or_default();
    let geoms = guesses
        .iter()
        .map(|g| GridGeometry { homography: refine::to_rows(&work_to_full(&work, &g.homography)), lens })
        .collect();
    let s = &work.resp.strength;
    let img = GrayImage::from_fn(s.width as u32, s.height as u32, |x, y| {
        image::Luma([(s.data[y as usize * s.width + x as usize] * 600.0).min(255.0) as u8])
    });
    (geoms, img)
}

/// Development aid: the outline and stones' looks step by step (full-resolution pixels).
#[doc(hidden)]
#[derive(Debug, Clone, Default)]
pub struct StonesDebug {
    /// The board's outline, TL, TR, BR, BL as found.
    pub outline: Option<[[f64; 2]; 4]>,
    /// The first lattice centred in the outline.
    pub initial: Option<GridGeometry>,
    /// Disc centres found.
    pub centres: Vec<[f64; 2]>,
    /// The stones' lattice and the centres that agree with it.
    pub lattice: Option<(GridGeometry, Vec<[f64; 2]>)>,
    /// The fifth look's grid or its reason.
    pub result: Option<Result<GridGeometry, String>>,
}

/// Development aid: runs the fourth and fifth looks on a frame and returns every step.
#[doc(hidden)]
pub fn debug_stones(gray: &GrayImage, outlines: bool) -> StonesDebug {
    let centres_from = if outlines { stones::StoneCentres::Outlines } else { stones::StoneCentres::Boxes };
    let (width, height) = gray.dimensions();
    let meter = WorkMeter::unlimited();
    let fine = working(gray, &meter);
    let lens = LensDistortion::none(width, height);
    let mut out = StonesDebug::default();
    let Some(quad) = outline::board_outline(&fine, &meter) else { return out };
    let edge = quad.map(|p| fine.to_full(p));
    out.outline = Some(edge);
    let Some(initial) = outline::lattice_in_outline(&fine, &quad, lens, &meter) else { return out };
    let (centres, lattice) = stones::debug_steps(&fine, &initial, centres_from, &meter);
    out.centres = centres;
    out.lattice = lattice;
    let grid = |phase| stones::stone_grid(&fine, &initial, &edge, phase, centres_from, &meter).map(|g| g.geometry);
    out.result = Some(grid(stones::StonePhase::Crossings).or_else(|_| grid(stones::StonePhase::Stones)));
    out.initial = Some(initial);
    out
}

/// A light board (wood reaching `margin` cells beyond its outer lines) with dark lines on
/// a dark table, seen straight on, and its grid: the looks' tests share it.
#[cfg(test)]
pub(crate) fn board_on_a_dark_table(margin: f64) -> (GrayImage, GridGeometry) {
    board_on_a_table(margin, 35)
}

/// As [`board_on_a_dark_table`], on a table of the given grey (the wood is 200).
#[cfg(test)]
pub(crate) fn board_on_a_table(margin: f64, table: u8) -> (GrayImage, GridGeometry) {
    drawn_board((600, 580), [70.0, 70.0], 24.0, margin, 1.0, [table, 50, 200])
}

/// A board seen straight on, drawn in greys, and its grid: a `frame` of pixels, the first
/// intersection at `origin`, cells of `cell` px, the wood reaching `margin` cells beyond the
/// outer lines (infinite: wood everywhere), lines `line_half_px` either side of their centre;
/// `greys` are the table's, the lines' and the wood's.
#[cfg(test)]
pub(crate) fn drawn_board(
    frame: (u32, u32),
    origin: [f64; 2],
    cell: f64,
    margin: f64,
    line_half_px: f64,
    greys: [u8; 3],
) -> (GrayImage, GridGeometry) {
    let [table, line, wood] = greys;
    let img = GrayImage::from_fn(frame.0, frame.1, |x, y| {
        let (u, v) = ((f64::from(x) - origin[0]) / cell, (f64::from(y) - origin[1]) / cell);
        let on_board = |t: f64| (-margin..=18.0 + margin).contains(&t);
        let on_lines = |t: f64| (-0.05..=18.05).contains(&t);
        let near = |t: f64| (t - t.round()).abs() * cell < line_half_px && on_lines(t);
        if !(on_board(u) && on_board(v)) {
            image::Luma([table])
        } else if (near(u) && on_lines(v)) || (near(v) && on_lines(u)) {
            image::Luma([line])
        } else {
            image::Luma([wood])
        }
    });
    let h = [[cell, 0.0, origin[0]], [0.0, cell, origin[1]], [0.0, 0.0, 1.0]];
    (img, GridGeometry { homography: h, lens: LensDistortion::none(frame.0, frame.1) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grid_whose_outer_line_is_the_boards_edge_moves_one_line_inward() {
        let (img, truth) = board_on_a_dark_table(0.8);
        let meter = WorkMeter::unlimited();
        let work = working(&img, &meter);
        let quality = |geometry: &GridGeometry| FitQuality {
            source: GeometrySource::Searched,
            inlier_intersections: 200,
            rms_error_cells: 0.02,
            extent_contrast: 3.0,
            cell_px: refine::median_cell(geometry),
            work_steps: 0,
        };
        for (dc, dr) in [(-1.0, 0.0), (1.0, 0.0), (0.0, -1.0), (0.0, 1.0)] {
            let outward = refine::reindex(&truth, &refine::translation(dc, dr));
            let located = Located { quality: quality(&outward), geometry: outward };
            let moved = with_margin(&work, Ok(located), &meter).expect("moved inward");
            let off = crate::evaluate::corner_errors_cells(&moved.geometry.corners(), &truth.corners())
                .into_iter()
                .fold(0.0, f64::max);
            assert!(off < 0.1, "({dc}, {dr}) outward: {off:.2} cells off after the move");
        }
        // A grid with the board's margin on every side stands as it was.
        let kept = with_margin(&work, Ok(Located { quality: quality(&truth), geometry: truth.clone() }), &meter);
        assert_eq!(kept.map(|l| l.geometry), Ok(truth));
    }

    #[test]
    fn a_lattice_stretched_past_the_board_has_dead_lines_at_both_ends() {
        // A wide frame, so that the stretched lattice's outer lines lie on the table in view.
        let (img, truth) = drawn_board((1100, 580), [330.0, 70.0], 24.0, 0.8, 1.0, [35, 50, 200]);
        let meter = WorkMeter::unlimited();
        let work = working(&img, &meter);
        assert_eq!(refine::dead_lines_at_both_ends(&work, &truth), 0);
        // Twice the spacing along the rows, centred on the board: new column c is old 2c − 18/2.
        let stretched = refine::reindex(&truth, &Matrix3::new(2.0, 0.0, -9.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0));
        let dead = refine::dead_lines_at_both_ends(&work, &stretched);
        assert!(dead >= MIN_DEAD_OUTER_LINES, "{dead} dead lines at both ends");
    }

    #[test]
    fn the_lamps_channel_is_the_brightest_that_does_not_clip() {
        // A pink lamp: red clips on the board, green is nearly dark, blue carries the lines.
        let pink = RgbImage::from_fn(64, 64, |x, _| image::Rgb(if x % 8 == 0 { [255, 2, 40] } else { [255, 3, 120] }));
        let (name, grey) = lamp_channel(&pink);
        assert_eq!(name, "blue");
        assert_eq!((grey.get_pixel(0, 0)[0], grey.get_pixel(1, 0)[0]), (40, 120));
        // White light: nothing clips, the brightest channel (red on wood) is taken.
        let wood = RgbImage::from_fn(64, 64, |_, _| image::Rgb([200, 160, 90]));
        assert_eq!(lamp_channel(&wood).0, "red");
        // Everything clipped: the channel least often at the clip.
        let blown = RgbImage::from_fn(64, 64, |x, _| image::Rgb([255, 255, if x < 32 { 255 } else { 100 }]));
        assert_eq!(lamp_channel(&blown).0, "blue");
    }

    #[test]
    fn a_blanked_board_leaves_a_flat_patch_and_the_rest_as_it_was() {
        let (img, grid) = board_on_a_dark_table(0.8);
        let blanked = blank_board(&img, &grid);
        let quad = grown_outline(&grid, BLANK_BEYOND_CELLS);
        let mut inside = std::collections::BTreeSet::new();
        for (x, y, p) in blanked.enumerate_pixels() {
            if inside_quad(&quad, [f64::from(x), f64::from(y)]) {
                inside.insert(p[0]);
            } else {
                assert_eq!(p, img.get_pixel(x, y), "({x}, {y}) outside the board changed");
            }
        }
        assert_eq!(inside.len(), 1, "the board's area is one flat grey: {inside:?}");
        // The board's centre is covered; a point two cells beyond its outer line is not.
        assert!(covers(&grid, 0.0, grid.project(9.0, 9.0)));
        assert!(!covers(&grid, 0.0, grid.project(20.0, 9.0)));
        assert!(covers(&grid, 3.0, grid.project(20.0, 9.0)));
    }
}
