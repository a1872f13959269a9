//! Reading a board: the state of all 361 points with a calibrated confidence, and which points an
//! occluder hides. `read_board` is the pure top-level function: frame + grid geometry in, reading
//! out; it samples only around the projected grid, never the whole frame.

use std::collections::VecDeque;

use image::{Rgb, RgbImage};
use serde::{Deserialize, Serialize};
use tengen_rules::{PointState, BOARD_LINES};

use crate::classify::{classify, Classified, Posteriors, StoneClass};
use crate::features::{
    disc_colour, measure_points, measure_points_where, median, BoardColour, FrameWhites, PointFeatures, CELLS,
};
use crate::geometry::GridGeometry;
use crate::occlusion::{
    cells_under_any_top, cells_under_stones, detect, edges_crossed_by_skin, is_glare_luma, OcclusionConfig,
    CLIPPED_LUMA,
};
use crate::occlusion_model::{OcclusionEvidence, OcclusionModel};
use crate::over_edge::scan_edges;
use crate::patch_reader::{point_inputs, FrameMeasurements, PatchModel, INPUTS};
use crate::reader_model::ReaderModel;
use crate::rectify::{CameraFoot, RectifiedBoard};

/// The reading of one intersection.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PointReading {
    /// The state read (Unknown when occluded or below the confidence floor).
    pub state: PointState,
    /// Probability that the most likely of empty/black/white is right (0..=1). For an Unknown
    /// point this is still the best guess's probability (0 when occluded).
    pub confidence: f32,
    /// The most likely of empty/black/white, even when `state` is Unknown.
    pub best_guess: PointState,
}

/// The reading of a whole board in one frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoardReading {
    /// Points indexed `[row][col]`: row 0 nearest the top of the image as seen, col 0 leftmost.
    pub points: [[PointReading; BOARD_LINES]; BOARD_LINES],
    /// Whether something (hand, arm, object) covers part of the board.
    pub occluded: bool,
    /// Points hidden by the occluder, as (col, row).
    pub occluded_points: Vec<(u8, u8)>,
}

impl BoardReading {
    /// The board as 19 lines of 19 symbols (`.`, `X`, `O`, `?`).
    pub fn grid_lines(&self) -> Vec<String> {
        self.points.iter().map(|row| row.iter().map(|p| p.state.to_char()).collect()).collect()
    }

    /// The board as text: 19 lines, newline-separated.
    pub fn grid_text(&self) -> String {
        self.grid_lines().join("\n")
    }

    /// Number of points in each state: empty, black, white, unknown.
    pub fn counts(&self) -> [usize; 4] {
        let mut n = [0; 4];
        for p in self.points.iter().flatten() {
            n[match p.state {
                PointState::Empty => 0,
                PointState::Black => 1,
                PointState::White => 2,
                PointState::Unknown => 3,
            }] += 1;
        }
        n
    }
}

/// Settings of the reader.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReaderConfig {
    /// Rectified samples per grid spacing.
    pub samples_per_cell: usize,
    /// Height above the board, in grid spacings, at which a stone's visible disc is centred (a
    /// stone is about 0.4 spacing thick); used to correct parallax on oblique views.
    pub stone_height: f64,
    /// Points whose best class is less probable than this are reported Unknown.
    pub min_confidence: f32,
    /// The fitted class priors and confidence calibration (`models/point-reader.toml` by
    /// default).
    pub model: ReaderModel,
    /// Occlusion detector settings.
    pub occlusion: OcclusionConfig,
    /// What decides whether a hand covers the board: the fitted model (`models/occlusion.toml`
    /// by default), or with `None` the hand-set tests alone (any of them firing).
    pub occlusion_model: Option<OcclusionModel>,
    /// The learned point reader (`patch_reader`, `models/patch-reader.json` by default): where
    /// given, its probabilities are multiplied with the classical posteriors on every point the
    /// occlusion mask leaves (the occlusion tests stay on the classical posteriors). `None`: the
    /// classical reader decides alone.
    pub patch_model: Option<&'static PatchModel>,
    /// With a patch model: whether it also decides the points the classical reader calls
    /// doubtful (colour unlike any class, or board-coloured without lines) on a frame without a
    /// hand; else those stay `?`. On by default: on a steep view or a crowded board the stones
    /// lean over a bare point's lines and whiten its reference, which the classical features
    /// cannot tell from a covering, while the network sees the patch (models/patch-reader.md,
    /// "The learned reader decides the doubtful points").
    pub patch_decides_doubtful: bool,
}

impl Default for ReaderConfig {
    fn default() -> Self {
        Self {
            samples_per_cell: 8,
            stone_height: 0.3,
            min_confidence: 0.5,
            model: ReaderModel::embedded(),
            occlusion: OcclusionConfig::default(),
            occlusion_model: Some(OcclusionModel::embedded()),
            patch_model: Some(PatchModel::embedded()),
            patch_decides_doubtful: true,
        }
    }
}

/// Everything measured on a frame on the way to a reading (for evaluation and debugging).
#[derive(Debug, Clone)]
pub struct ReadingDetails {
    /// The reading itself.
    pub reading: BoardReading,
    /// Per-point features, `[row][col]`.
    pub features: Vec<[PointFeatures; BOARD_LINES]>,
    /// Class posteriors (empty, black, white), `[row][col]`.
    pub posteriors: Vec<[[f64; 3]; BOARD_LINES]>,
    /// Log-odds margin of the best class, `[row][col]` (what the confidence is calibrated from).
    pub margins: Vec<[f32; BOARD_LINES]>,
    /// Cell-centre board colours.
    pub colour: BoardColour,
    /// What the occlusion tests found (the occlusion model's input).
    pub occlusion: OcclusionEvidence,
    /// The frame's classes after re-estimation (empty, black, white): means and spreads per
    /// feature, for inspection.
    pub class_model: Vec<(Vec<f64>, Vec<f64>)>,
}

/// The points whose class posteriors (empty, black, white) satisfy `is`, row by row.
fn points_where(posteriors: &Posteriors, is: impl Fn(&[f64; 3]) -> bool) -> Vec<[bool; BOARD_LINES]> {
    posteriors
        .iter()
        .map(|row| {
            let mut out = [false; BOARD_LINES];
            for (o, p) in out.iter_mut().zip(row) {
                *o = is(p);
            }
            out
        })
        .collect()
}

/// Reads all points of a frame whose grid lies at `geometry`.
pub fn read_board(image: &RgbImage, geometry: &GridGeometry, config: &ReaderConfig) -> BoardReading {
    read_board_detailed(image, geometry, config).reading
}

/// Like [`read_board`], also returning the intermediate measurements.
pub fn read_board_detailed(image: &RgbImage, geometry: &GridGeometry, config: &ReaderConfig) -> ReadingDetails {
    let board = RectifiedBoard::new(image, geometry, config.samples_per_cell);
    let colour = BoardColour::measure(&board);
    let camera = CameraFoot::estimate(geometry);
    let features = measure_points(&board, &colour, camera.as_ref(), config.stone_height);
    let mut classified = classify(&features, &config.model.classes, colour.global, 1.0);
    let posteriors = std::mem::take(&mut classified.posteriors);
    let class_model = std::mem::take(&mut classified.class_model);
    // On a steep view the tops of stones lean over the cell centres behind them; those cells
    // are no evidence by themselves that a hand is there (the patch the model judges leaves
    // them out). But a sleeve's points read as stones too: the whole patch, those cells
    // included, still marks where a hand lies — when the model takes it for one and another
    // test finds a hand, or when the patch without them is one.
    let stones = points_where(&posteriors, |p| p[1].max(p[2]) > p[0]);
    let under_stones = cells_under_stones(camera.as_ref(), &stones);
    let mut mask = detect(&colour, &under_stones, &config.occlusion);
    let foreign_cells = if mask.occluded { mask.cells.iter().filter(|c| **c).count() } else { 0 };
    let covered = board_coloured_without_lines(&features, &posteriors, &colour, &config.occlusion);
    // Fingers or a hand reaching only over the board's edge: something runs across it.
    let edges = scan_edges(image, geometry, camera.as_ref(), &stones);
    let edge = edges.run;
    // Fingers or an arm reaching over the board edge read like white stones on the edge points.
    // Where the board's edge is seen whole beyond such a point, what lies there ends inside it
    // (lit wood read white under a coloured lamp runs on bright to the edge, but no further).
    let white = points_where(&posteriors, |p| p[2] > p[0] && p[2] > p[1]);
    let crossed: Vec<(usize, usize)> = edges_crossed_by_skin(
        image,
        geometry,
        camera.as_ref(),
        &features,
        &white,
        &classified.outlier,
        &config.occlusion,
    )
    .into_iter()
    .filter(|&(col, row)| !edges.edge_whole_beyond(col, row))
    .collect();
    let mut evidence = OcclusionEvidence {
        foreign_cells,
        edge_run: edge.length,
        edge_margin: edge.margin,
        edge_chroma: edge.chroma,
        edge_share: edge.least_share,
        crossed_points: crossed.len(),
        largest_patch: mask.largest_patch,
        patch_distance: mask.patch_distance,
        typical_distance: typical_cell_distance(&colour),
        patch_at_edge: mask.patch_at_edge,
        hidden_lines: hidden_line_share(&colour, &config.occlusion),
        ..OcclusionEvidence::default()
    };
    // The cell-centre test's patch is a hand only if the model says so (or, without a model,
    // by the hand-set test alone); a patch that is not one leaves its points to the reader.
    let cells_fired = mask.occluded;
    let judged = |e: &OcclusionEvidence| config.occlusion_model.as_ref().is_none_or(|model| model.patch_is_hand(e));
    let cells_hand = cells_fired && judged(&evidence);
    let whole = under_stones.iter().any(|u| *u).then(|| detect(&colour, &[], &config.occlusion)).filter(|whole| {
        whole.occluded
            && judged(&OcclusionEvidence {
                foreign_cells: whole.cells.iter().filter(|c| **c).count(),
                largest_patch: whole.largest_patch,
                patch_distance: whole.patch_distance,
                patch_at_edge: whole.patch_at_edge,
                ..evidence
            })
    });
    if !cells_hand {
        mask.occluded = false;
        mask.points = [[false; BOARD_LINES]; BOARD_LINES];
    } else if let Some(whole) = &whole {
        mask = whole.clone();
    }
    let groups = covered_groups(&covered, &config.occlusion);
    let crossing_fired = crossed.len() >= config.occlusion.min_crossed_points;
    evidence.covered_points = groups.joined;
    evidence.largest_covered = groups.largest;
    evidence.covered_at_edge = groups.largest_at_edge;
    (evidence.lineless_share, evidence.bare_lines) =
        lineless_share(&features, &posteriors, &covered, &groups.members, &config.occlusion);
    // Likewise the covered-point test's group: a hand only if the model says so; where the
    // frame's bare board often shows no lines anyway (faint lines under a coloured lamp, a steep
    // view), a lineless group is no evidence (its points stay `?` one by one).
    let covered_hand =
        groups.joined > 0 && config.occlusion_model.as_ref().is_none_or(|model| model.covered_is_hand(&evidence));
    if covered_hand {
        mask.occluded = true;
        for (mask_row, group_row) in mask.points.iter_mut().zip(&groups.members) {
            for (m, &g) in mask_row.iter_mut().zip(group_row) {
                *m |= g;
            }
        }
    }
    evidence.other_tests_fired = covered_hand || crossing_fired;
    let whole_used = !cells_hand && evidence.other_tests_fired && whole.is_some();
    if let Some(whole) = whole.as_ref().filter(|_| whole_used) {
        mask.occluded = true;
        for (mask_row, whole_row) in mask.points.iter_mut().zip(&whole.points) {
            for (m, &w) in mask_row.iter_mut().zip(whole_row) {
                *m |= w;
            }
        }
    }
    evidence.rules_fired = cells_fired || groups.joined > 0 || crossing_fired || evidence.edge_found();
    // A run across the edge flags the frame but hides no point: the hand lies over the margin,
    // and what it covers on the first line the other tests judge.
    if evidence.edge_found() && config.occlusion_model.as_ref().is_none_or(|model| model.edge_is_hand(&evidence)) {
        mask.occluded = true;
    }
    if mask.occluded {
        // A hand the cell-centre test found may spread over the board (its shadow, the sleeve's
        // edge); a group of covered points alone is fingers, which reach as far as a crossing's.
        let reach = if cells_hand || whole_used { usize::MAX } else { config.occlusion.crossing_reach };
        grow_occlusion(&mut mask.points, &posteriors, &classified.misfit, &config.occlusion, reach);
    }
    if !crossed.is_empty() {
        // Fingers reach only a little way in from the edge they cross; a whole hand over the
        // board is found by the cell-centre test above.
        let mut reached = [[false; BOARD_LINES]; BOARD_LINES];
        for &(col, row) in &crossed {
            reached[row][col] = true;
        }
        grow_occlusion(
            &mut reached,
            &posteriors,
            &classified.misfit,
            &config.occlusion,
            config.occlusion.crossing_reach,
        );
        for (row, line) in reached.iter().enumerate() {
            for (col, &r) in line.iter().enumerate() {
                mask.points[row][col] |= r;
            }
        }
        // One edge point alone may be a stone with a faint rim (it is read `?`); fingers or an
        // arm cross the edge over more than one point.
        if crossing_fired {
            mask.occluded = true;
        }
    }
    // The reader's side: where a white top leaning over cell centres has whitened some points'
    // board reference, the points are measured and classified again against the wood the
    // board's light explains (`BoardColour::wood_reference`). The occlusion decision above
    // stays on the first measurement, where a pale hand or a glare spot is its own reference.
    let (colour, features, posteriors, classified, class_model) =
        match against_wood(&board, &colour, camera.as_ref(), config, &features, &posteriors) {
            Some((wood, features, mut classified)) => {
                let posteriors = std::mem::take(&mut classified.posteriors);
                let class_model = std::mem::take(&mut classified.class_model);
                (wood, features, posteriors, classified, class_model)
            }
            None => (colour, features, posteriors, classified, class_model),
        };
    // The learned reader's probabilities, where a model is given: on the same rectified board,
    // disc centres and the frame's re-estimated classes as the classical reader. Points under
    // the occlusion mask are `?` whatever it says, so it is not run there.
    let learned: Option<Vec<Option<[f32; 3]>>> = config.patch_model.map(|model| {
        let measured = FrameMeasurements {
            board: &board,
            colour: &colour,
            camera: camera.as_ref(),
            stone_height: config.stone_height,
            features: &features,
            posteriors: &posteriors,
            class_model: &class_model,
        };
        let mut runner = model.runner();
        let mut x = Vec::with_capacity(INPUTS);
        (0..BOARD_LINES * BOARD_LINES)
            .map(|k| {
                let (col, row) = (k % BOARD_LINES, k / BOARD_LINES);
                let wanted = !mask.points[row][col] && measured.point_input(col, row, &mut x);
                wanted.then(|| runner.probabilities(&x))
            })
            .collect()
    });
    let unknown = PointReading { state: PointState::Unknown, confidence: 0.0, best_guess: PointState::Unknown };
    let mut points = [[unknown; BOARD_LINES]; BOARD_LINES];
    let mut occluded_points = Vec::new();
    for row in 0..BOARD_LINES {
        for col in 0..BOARD_LINES {
            if mask.points[row][col] {
                occluded_points.push((col as u8, row as u8));
                continue;
            }
            if !features[row][col].valid {
                continue;
            }
            let net = learned.as_ref().and_then(|l| l[row * BOARD_LINES + col]);
            // The two readers' probabilities multiplied (a product of experts): the network
            // overturns the classical reading only where it is surer than the classical reader
            // is. Left out, the network alone read 30 bare points black on imago t1, whose
            // classical reading was exact; the product keeps that and most of its gains
            // (models/patch-reader.md).
            let p = net.map_or(posteriors[row][col], |q| product(posteriors[row][col], q));
            let (best, prob) = (0..3).map(|k| (k, p[k])).fold((0, 0.0), |a, b| if b.1 > a.1 { b } else { a });
            let guess = match StoneClass::ALL[best] {
                StoneClass::Empty => PointState::Empty,
                StoneClass::Black => PointState::Black,
                StoneClass::White => PointState::White,
            };
            // With the network, the state needs the product's best class to be more probable
            // than `min_confidence` (a three-way tie reads `?`); the confidence reported is the
            // classical calibration of the product's log-odds margin, on the same scale as the
            // classical reader's (the referee and the dashboard compare them across frames).
            let (best_probability, confidence) = match net {
                Some(_) => (prob as f32, config.model.confidence(log_odds_margin(&p))),
                None => {
                    let c = config.model.confidence(classified.margin[row][col]);
                    (c, c)
                }
            };
            // Beside a hand the doubt stays: its shadow and sleeve make points doubtful that
            // neither reader has seen covered in training.
            let doubtful = (classified.outlier[row][col] || covered[row][col])
                && !(net.is_some() && config.patch_decides_doubtful && !mask.occluded);
            let state =
                if best_probability >= config.min_confidence && !doubtful { guess } else { PointState::Unknown };
            points[row][col] = PointReading { state, confidence, best_guess: guess };
        }
    }
    let reading = BoardReading { points, occluded: mask.occluded, occluded_points };
    ReadingDetails {
        reading,
        features,
        posteriors,
        margins: classified.margin,
        colour,
        occlusion: evidence,
        class_model,
    }
}

/// The points measured and classified again against the wood's reference
/// (`BoardColour::wood_reference`), the frame's own white stones telling which bright cells are
/// their tops; `None` where that changes no point's reference, or the frame has fewer than
/// three sure whites to say what its white stones look like.
fn against_wood(
    board: &RectifiedBoard,
    colour: &BoardColour,
    camera: Option<&CameraFoot>,
    config: &ReaderConfig,
    features: &[[PointFeatures; BOARD_LINES]],
    posteriors: &Posteriors,
) -> Option<(BoardColour, Vec<[PointFeatures; BOARD_LINES]>, Classified)> {
    let reachable = cells_under_any_top(camera);
    if !reachable.iter().any(|r| *r) {
        return None;
    }
    let whites = frame_whites(board, camera, config.stone_height, features, posteriors)?;
    let wood = colour.wood_reference(whites, &reachable)?;
    let mut features = features.to_vec();
    let moved = |col, row| wood.local(col, row) != colour.local(col, row);
    measure_points_where(board, &wood, camera, config.stone_height, &mut features, moved);
    let classified = classify(&features, &config.model.classes, wood.global, 1.0);
    Some((wood, features, classified))
}

/// What the frame's sure white stones look like: read white with a posterior of at least
/// [`SURE_WHITE`], and no redder than the board in either ratio (a grey stone is not, skin is:
/// the sure-white test of `classify::seed_white`); `None` with fewer than three.
fn frame_whites(
    board: &RectifiedBoard,
    camera: Option<&CameraFoot>,
    stone_height: f64,
    features: &[[PointFeatures; BOARD_LINES]],
    posteriors: &Posteriors,
) -> Option<FrameWhites> {
    let mut chans: [Vec<f32>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    let mut lumas = Vec::new();
    for (row, (feature_row, posterior_row)) in features.iter().zip(posteriors).enumerate() {
        for (col, (f, p)) in feature_row.iter().zip(posterior_row).enumerate() {
            if !(f.valid && p[2] >= SURE_WHITE && f.neutral >= 0.0 && f.green_red >= 0.0) {
                continue;
            }
            let base = [col as f64, row as f64];
            let top = camera.map_or(base, |cam| cam.raised(base, stone_height));
            if let Some((c, bright)) = disc_colour(board, top) {
                for ch in 0..3 {
                    chans[ch].push(c[ch]);
                }
                lumas.push(bright);
            }
        }
    }
    if lumas.len() < 3 {
        return None;
    }
    let [r, g, b] = &mut chans;
    Some(FrameWhites { colour: [median(r), median(g), median(b)], brightest: median(&mut lumas) })
}

/// The posterior above which a point read white is one of the frame's sure whites.
const SURE_WHITE: f64 = 0.99;

/// Two probability vectors over (empty, black, white) multiplied and renormalised.
fn product(classical: [f64; 3], learned: [f32; 3]) -> [f64; 3] {
    let joint = [0, 1, 2].map(|k| classical[k] * f64::from(learned[k]));
    let total = joint.iter().sum::<f64>();
    if total > 0.0 && total.is_finite() {
        joint.map(|v| v / total)
    } else {
        classical
    }
}

/// ln(best / second best) of a probability vector, the classical reader's margin; capped where
/// the second is zero.
fn log_odds_margin(p: &[f64; 3]) -> f32 {
    const CAP: f64 = 50.0;
    let mut sorted = *p;
    sorted.sort_by(|a, b| b.total_cmp(a));
    if sorted[1] > 0.0 {
        (sorted[0] / sorted[1]).ln().min(CAP) as f32
    } else {
        CAP as f32
    }
}

/// The learned reader's input vector of every point, `[row * 19 + col]` (`None` where not
/// measurable): the same rectification, features and per-frame classes as
/// [`read_board_detailed`] (for fitting the patch model).
pub fn patch_inputs(image: &RgbImage, geometry: &GridGeometry, config: &ReaderConfig) -> Vec<Option<Vec<f32>>> {
    let board = RectifiedBoard::new(image, geometry, config.samples_per_cell);
    let colour = BoardColour::measure(&board);
    let camera = CameraFoot::estimate(geometry);
    let features = measure_points(&board, &colour, camera.as_ref(), config.stone_height);
    let classified = classify(&features, &config.model.classes, colour.global, 1.0);
    // As the reader measures them (`read_board_detailed`): against the wood's reference.
    let (colour, features, classified) =
        against_wood(&board, &colour, camera.as_ref(), config, &features, &classified.posteriors)
            .unwrap_or((colour, features, classified));
    point_inputs(
        &board,
        &colour,
        camera.as_ref(),
        config.stone_height,
        &features,
        &classified.posteriors,
        &classified.class_model,
    )
}

/// Points that have the board's colour but not its grid lines: no stone looks like that (stones
/// are grey, wood is not), so something wood- or skin-coloured lies over them — a hand, mostly.
/// Blown-out glare also hides lines on a board-coloured patch, hence the glare test (near the
/// sensor's top *and* brighter than the frame's board: a forearm overexposed to the brightness
/// of a brightly lit board is a covering, not a reflection). A hand
/// is a smooth covering: a disc whose luminance spans more than the board's own luminance holds
/// a stone's bright top and its dark shadow (a stone pushed half off its point), and is left to
/// the classifier.
///
/// "Board-coloured" also needs the board's brightness: the colour distance tolerates a wide
/// luminance range (shadow and glare on bare cells), and on a pale, greyish board (many of the
/// roboflow set-ups) stones differ from the wood in luminance only — a black stone at half the
/// board's luminance or a white one at 1.5× has the wood's hue. So a point counts only when the
/// frame's own classes, which weigh brightness as well as colour, find it most like bare board
/// (empty): what hides the lines there yet is as bright as the board is not a stone.
fn board_coloured_without_lines(
    features: &[[PointFeatures; BOARD_LINES]],
    posteriors: &[[[f64; 3]; BOARD_LINES]],
    colour: &BoardColour,
    config: &OcclusionConfig,
) -> Vec<[bool; BOARD_LINES]> {
    // "Without lines" is judged against how visible this frame's lines are: a shaken or
    // defocused photo lowers every line's contrast, and its faintest lines are still lines.
    let mut visible: Vec<f32> =
        features.iter().flatten().filter(|f| f.valid && f.lines >= config.covered_max_lines).map(|f| f.lines).collect();
    let typical = median(&mut visible);
    let max_lines = if typical.is_finite() {
        config.covered_max_lines.min(config.covered_line_fraction * typical)
    } else {
        config.covered_max_lines
    };
    features
        .iter()
        .zip(posteriors)
        .map(|(row, post)| {
            let mut out = [false; BOARD_LINES];
            for ((o, f), p) in out.iter_mut().zip(row).zip(post) {
                let board_like = p[0] >= p[1] && p[0] >= p[2];
                *o = f.valid
                    && board_like
                    && f.colour_distance < config.covered_colour_distance
                    && f.lines < max_lines
                    && f.spread < config.covered_max_spread
                    && f.luma < CLIPPED_LUMA
                    && !is_glare_luma(f.luma, colour);
            }
            out
        })
        .collect()
}

/// Share of the board-coloured points read empty that show no lines (the covered test's
/// "without lines"), leaving out the covered groups big enough to count: the base rate of
/// lineless bare board in this frame, against which such a group is judged.
fn lineless_share(
    features: &[[PointFeatures; BOARD_LINES]],
    posteriors: &[[[f64; 3]; BOARD_LINES]],
    covered: &[[bool; BOARD_LINES]],
    in_groups: &[[bool; BOARD_LINES]; BOARD_LINES],
    config: &OcclusionConfig,
) -> (f32, f32) {
    let (mut lineless, mut total) = (0usize, 0usize);
    let mut lines = Vec::new();
    for row in 0..BOARD_LINES {
        for col in 0..BOARD_LINES {
            let (f, p) = (&features[row][col], posteriors[row][col]);
            let read_empty = p[0] >= p[1] && p[0] >= p[2];
            if !f.valid || in_groups[row][col] || !read_empty || f.colour_distance >= config.covered_colour_distance {
                continue;
            }
            total += 1;
            lineless += usize::from(covered[row][col]);
            lines.push(f.lines);
        }
    }
    let typical = median(&mut lines);
    if total > 0 {
        (lineless as f32 / total as f32, typical)
    } else {
        (0.0, 0.0)
    }
}

/// The connected groups of covered points (see [`board_coloured_without_lines`]) large enough
/// to be a hand rather than a stray smudge.
struct CoveredGroups {
    /// The points of those groups, `[row][col]`.
    members: [[bool; BOARD_LINES]; BOARD_LINES],
    /// How many points they hold.
    joined: usize,
    /// Points in the largest group, whatever its size.
    largest: usize,
    /// Whether that group reaches the outer lines.
    largest_at_edge: bool,
}

/// Finds the covered groups big enough to count (see [`CoveredGroups`]).
fn covered_groups(covered: &[[bool; BOARD_LINES]], config: &OcclusionConfig) -> CoveredGroups {
    let mut members = [[false; BOARD_LINES]; BOARD_LINES];
    let (mut joined, mut largest, mut largest_at_edge) = (0, 0, false);
    let mut seen = [[false; BOARD_LINES]; BOARD_LINES];
    for r0 in 0..BOARD_LINES {
        for c0 in 0..BOARD_LINES {
            if !covered[r0][c0] || seen[r0][c0] {
                continue;
            }
            let mut group = vec![(r0, c0)];
            seen[r0][c0] = true;
            let mut k = 0;
            while k < group.len() {
                let (r, c) = group[k];
                k += 1;
                for (nr, nc) in [(r.wrapping_sub(1), c), (r + 1, c), (r, c.wrapping_sub(1)), (r, c + 1)] {
                    if nr < BOARD_LINES && nc < BOARD_LINES && covered[nr][nc] && !seen[nr][nc] {
                        seen[nr][nc] = true;
                        group.push((nr, nc));
                    }
                }
            }
            // Hands reach in from an edge: a group on the outer line counts from a smaller size,
            // as the cell rule's edge patches do (fingers over the first line, roboflow 100).
            let last = BOARD_LINES - 1;
            let at_edge = group.iter().any(|&(r, c)| r == 0 || c == 0 || r == last || c == last);
            if group.len() > largest {
                largest = group.len();
                largest_at_edge = at_edge;
            }
            let needed =
                if at_edge { config.min_covered_points.min(config.min_edge_cells) } else { config.min_covered_points };
            if group.len() >= needed {
                joined += group.len();
                for (r, c) in group {
                    members[r][c] = true;
                }
            }
        }
    }
    CoveredGroups { members, joined, largest, largest_at_edge }
}

/// Median colour distance of the inner cells from the frame's board colour: how far bare wood,
/// shadows and the stones' edges stray from the board colour under this light and camera.
fn typical_cell_distance(colour: &BoardColour) -> f32 {
    let mut d: Vec<f32> = inner_cells().map(|k| colour.distance[k]).filter(|d| d.is_finite()).collect();
    let m = median(&mut d);
    if m.is_finite() {
        m
    } else {
        0.0
    }
}

/// Share of the inner cells whose grid-line edges are hidden (stones hide them on a crowded
/// board, a hand over a patch).
fn hidden_line_share(colour: &BoardColour, config: &OcclusionConfig) -> f32 {
    let (hidden, total) = inner_cells()
        .filter(|&k| colour.lattice[k].is_finite())
        .fold((0usize, 0usize), |(h, t), k| (h + usize::from(colour.lattice[k] < config.min_lattice), t + 1));
    if total > 0 {
        hidden as f32 / total as f32
    } else {
        0.0
    }
}

/// Indices of the cells inside the outer lines (`j * CELLS + i`, i and j in 1..CELLS − 1).
fn inner_cells() -> impl Iterator<Item = usize> {
    (1..CELLS - 1).flat_map(|j| (1..CELLS - 1).map(move |i| j * CELLS + i))
}

/// Extends the occluded points into neighbours that do not read cleanly: a hand's fingers, its
/// shadow and the sleeve's edge make nearby points doubtful (colour unlike any class, or an
/// uncertain class) without hiding the cell centres that the mask is built from.
fn grow_occlusion(
    points: &mut [[bool; BOARD_LINES]; BOARD_LINES],
    posteriors: &[[[f64; 3]; BOARD_LINES]],
    misfit: &[[f32; BOARD_LINES]],
    config: &OcclusionConfig,
    max_steps: usize,
) {
    // Breadth first, so `max_steps` bounds the distance (in points) from the seeds.
    let mut queue: VecDeque<(usize, usize, usize)> = (0..BOARD_LINES)
        .flat_map(|r| (0..BOARD_LINES).map(move |c| (r, c, 0)))
        .filter(|&(r, c, _)| points[r][c])
        .collect();
    while let Some((r, c, steps)) = queue.pop_front() {
        if steps >= max_steps {
            continue;
        }
        let neighbours = [(r.wrapping_sub(1), c), (r + 1, c), (r, c.wrapping_sub(1)), (r, c + 1)];
        for (nr, nc) in neighbours {
            if nr >= BOARD_LINES || nc >= BOARD_LINES || points[nr][nc] {
                continue;
            }
            let best = posteriors[nr][nc].iter().copied().fold(0.0, f64::max);
            if misfit[nr][nc] > config.grow_misfit || best < config.grow_confidence {
                points[nr][nc] = true;
                queue.push_back((nr, nc, steps + 1));
            }
        }
    }
}

/// Per-point features only (for studying the classifier).
pub fn debug_features(
    image: &RgbImage,
    geometry: &GridGeometry,
    config: &ReaderConfig,
) -> Vec<[PointFeatures; BOARD_LINES]> {
    read_board_detailed(image, geometry, config).features
}

/// Draws the projected grid points and the reading on an image: red ring black stone, green ring
/// white stone, small blue dot empty, magenta cross unknown.
pub fn draw_reading(image: &mut RgbImage, geometry: &GridGeometry, reading: &BoardReading) {
    let cell = {
        let a = geometry.project(9.0, 9.0);
        let b = geometry.project(10.0, 9.0);
        ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
    };
    let radius = (cell * 0.35).max(3.0);
    for (row, line) in reading.points.iter().enumerate() {
        for (col, p) in line.iter().enumerate() {
            let [x, y] = geometry.project(col as f64, row as f64);
            match p.state {
                PointState::Black => ring(image, x, y, radius, [255, 0, 0]),
                PointState::White => ring(image, x, y, radius, [0, 255, 0]),
                PointState::Empty => ring(image, x, y, 1.5, [0, 80, 255]),
                PointState::Unknown => {
                    for t in -4..=4 {
                        let t = f64::from(t) * radius / 4.0;
                        dot(image, x + t, y + t, [255, 0, 255]);
                        dot(image, x + t, y - t, [255, 0, 255]);
                    }
                }
            }
        }
    }
}

fn dot(image: &mut RgbImage, x: f64, y: f64, colour: [u8; 3]) {
    let (w, h) = image.dimensions();
    for dy in 0..2 {
        for dx in 0..2 {
            let (px, py) = (x.round() as i64 + dx, y.round() as i64 + dy);
            if px >= 0 && py >= 0 && px < i64::from(w) && py < i64::from(h) {
                image.put_pixel(px as u32, py as u32, Rgb(colour));
            }
        }
    }
}

fn ring(image: &mut RgbImage, x: f64, y: f64, radius: f64, colour: [u8; 3]) {
    let steps = (radius * 8.0).max(12.0) as usize;
    for k in 0..steps {
        let a = k as f64 / steps as f64 * std::f64::consts::TAU;
        dot(image, x + radius * a.cos(), y + radius * a.sin(), colour);
    }
}

#[cfg(test)]
mod tests {
    use super::product;

    #[test]
    fn an_undecided_network_leaves_the_classical_reading() {
        let classical = [0.7, 0.2, 0.1];
        let joint = product(classical, [1.0 / 3.0; 3]);
        for (j, c) in joint.iter().zip(classical) {
            assert!((j - c).abs() < 1e-6, "{joint:?}");
        }
    }

    #[test]
    fn the_surer_reader_wins() {
        // A sure network overturns an unsure classical reading ...
        let joint = product([0.6, 0.3, 0.1], [0.02, 0.97, 0.01]);
        assert!(joint[1] > 0.9, "{joint:?}");
        // ... but not a sure one.
        let joint = product([0.9999, 0.00005, 0.00005], [0.1, 0.8, 0.1]);
        assert!(joint[0] > 0.99, "{joint:?}");
        assert!((joint.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn the_margin_is_the_log_odds_of_the_two_best_classes() {
        assert!((super::log_odds_margin(&[0.2, 0.6, 0.2]) - 3.0f32.ln()).abs() < 1e-6);
        assert_eq!(super::log_odds_margin(&[1.0, 0.0, 0.0]), 50.0);
    }

    #[test]
    fn a_degenerate_product_falls_back_to_the_classical_reading() {
        let classical = [0.0, 1.0, 0.0];
        assert_eq!(product(classical, [1.0, 0.0, 0.0]), classical);
    }
}
