//! Adapters from the project's pure cores to the service's seams: `tengen-vision` behind
//! [`FrameAnalyzer`], `tengen-referee` behind [`TableReferee`].

use tengen_vision::image_io::decode_rgb;
use tengen_vision::locate::{from_corners, locate_gray, refine_gray, LocateOptions};
use tengen_vision::tracking::{line_score, line_score_rgb, max_shift_cells, TrackerConfig};
use tengen_vision::{read_board, GridGeometry, LensDistortion, ReaderConfig};
use tengen_rules::{PointState, BOARD_LINES, BOARD_POINTS};

use std::sync::Arc;

use crate::imaging::grey;

use tengen_referee as referee;

use crate::engine::{
    AnalyzeError, AnalyzerFactory, Corners, Engines, FrameAnalyzer, RefereeError, RefereeFactory,
    SystemClock, TableReferee,
};
use crate::model::{ArbiterAction, GameView, Observation, OpenAlert, RecordMove, RefereeEvent, Severity};

/// Reads frames with `tengen-vision`: decode, place the grid (fixed calibration, else the
/// tracked grid, else a search), read the 361 points with occlusion.
///
/// A still board is not read again: the mean brightness of a small patch at each of the 361
/// intersections is compared with the last clean frame that was read (lines fitting, no hand),
/// and when no patch changed by [`STILL_PATCH_LEVELS`] or more (a stone, a hand, a shadow, a
/// bump all change many) that reading stands, at most [`READ_AT_LEAST_EVERY`] frames in a row.
///
/// Tracking is a cheap check of the previous grid's lines. When they fit less well (a hand over
/// the board, or a bump), the frame is read with the tracked grid first: a reading that sees a
/// hand is taken as it is (the referee waits for hands to leave), and only every
/// [`RECHECK_COVERED_EVERY`]th frame of a covered stretch, or a frame that fits badly with no
/// hand seen, pays for a local re-fit that tells a bump from a hand. Only a board that moved,
/// or a frame that fits neither way without a hand in it, pays for a new search, and a move is
/// reported so the referee raises `board_moved`.
pub struct VisionAnalyzer {
    calibration: Option<Corners>,
    tracked: Option<TrackedGrid>,
    config: ReaderConfig,
    /// Consecutive poorly fitting frames in which the reader saw a hand.
    covered_streak: u32,
    /// Whether the tracked grid's lines fitted the last frame read with it.
    lines_fit: bool,
    /// The last frame read with the tracked grid: its intersection patches and its observation.
    last_read: Option<LastRead>,
}

/// What a still board is compared with.
struct LastRead {
    patches: Vec<f32>,
    observation: Observation,
    /// Frames since it was read that kept its reading.
    kept: u32,
}

/// A patch mean that moves by this many grey levels (0–255) or more, beyond the whole frame's
/// change of exposure, means the board changed there. A stone on an empty point moves its
/// patch by 50–150 levels (black on wood, or white over dark grid lines); camera noise averaged
/// over the patch moves it by one or two.
pub const STILL_PATCH_LEVELS: f32 = 12.0;

/// A still board is still read afresh at least every this many frames (at 2 fps: every 4 s).
pub const READ_AT_LEAST_EVERY: u32 = 8;

/// In a stretch of frames where a hand covers the board, the first and then every this many
/// frames are re-fitted to catch a bump under the hand (at 2 fps: every two seconds); the
/// others are read with the tracked grid. A re-fit costs about two decodes, and hands cover a
/// board for much of a game's frames.
pub const RECHECK_COVERED_EVERY: u32 = 4;

/// The grid found earlier and how well its lines showed then.
struct TrackedGrid {
    geometry: GridGeometry,
    reference_score: f64,
}

impl VisionAnalyzer {
    /// An analyzer with an optional fixed calibration.
    pub fn new(calibration: Option<Corners>) -> Self {
        Self { calibration, tracked: None, config: ReaderConfig::default(), covered_streak: 0, lines_fit: false, last_read: None }
    }

    fn observation(reading: &tengen_vision::BoardReading, geometry: &GridGeometry) -> Observation {
        let mut points = Vec::with_capacity(BOARD_POINTS);
        let mut point_confidence = Vec::with_capacity(BOARD_POINTS);
        for row in reading.points.iter().take(BOARD_LINES) {
            for point in row.iter().take(BOARD_LINES) {
                points.push(point.state);
                point_confidence.push(point.confidence.clamp(0.0, 1.0));
            }
        }
        #[allow(clippy::cast_precision_loss)]
        let confidence = point_confidence.iter().sum::<f32>() / BOARD_POINTS as f32;
        Observation {
            points,
            corners: Some(geometry.corners()),
            confidence,
            occluded: reading.occluded,
            moved_cells: None,
            point_confidence,
        }
    }
}

impl FrameAnalyzer for VisionAnalyzer {
    fn analyze(&mut self, encoded: &[u8]) -> Result<Observation, AnalyzeError> {
        let frame = decode_rgb(encoded).map_err(|e| AnalyzeError::Decode(e.to_string()))?;
        let rgb = &frame.rgb;
        let (w, h) = rgb.dimensions();
        let fixed = match self.calibration {
            Some(corners) => Some(
                from_corners(corners, LensDistortion::none(w, h))
                    .map(|l| l.geometry)
                    .map_err(|e| AnalyzeError::BoardNotFound(e.to_string()))?,
            ),
            None => None,
        };
        if let Some(geometry) = fixed.as_ref().or(self.tracked.as_ref().map(|t| &t.geometry)).cloned() {
            let patches = intersection_patches(rgb, &geometry);
            if let Some(last) = self.last_read.as_mut() {
                if still(&patches, &last.patches) && last.kept + 1 < READ_AT_LEAST_EVERY {
                    last.kept += 1;
                    let mut kept = last.observation.clone();
                    kept.moved_cells = None;
                    return Ok(kept);
                }
            }
            let observation = match &fixed {
                Some(g) => Ok(Self::observation(&read_board(rgb, g, &self.config), g)),
                None => self.read_tracked(rgb),
            };
            // Only a clean reading is kept: the same grid as the patches, lines that fit (no
            // hand, no bump in doubt: those frames are all read, and re-fitted as they need).
            let clean = fixed.is_some()
                || (self.lines_fit && self.tracked.as_ref().is_some_and(|t| t.geometry == geometry));
            self.last_read = match &observation {
                Ok(o) if clean && !o.occluded => Some(LastRead { patches, observation: o.clone(), kept: 0 }),
                _ => None,
            };
            return observation;
        }
        self.search(rgb, None, None)
    }

    fn set_calibration(&mut self, corners: Option<Corners>) {
        self.calibration = corners;
        self.tracked = None;
        self.last_read = None;
    }

    fn needs_search(&self) -> bool {
        self.calibration.is_none() && self.tracked.is_none()
    }
}

impl VisionAnalyzer {
    /// Reads a frame with the tracked grid (checking first that its lines still fit), or
    /// re-locates the board when it moved.
    fn read_tracked(&mut self, rgb: &image::RgbImage) -> Result<Observation, AnalyzeError> {
        let mut previous = None;
        if let Some(tracked) = &self.tracked {
            // The line check reads a few thousand pixels: grey just those, not the frame.
            let fit = line_score_rgb(rgb, &tracked.geometry) / tracked.reference_score;
            let reading = read_board(rgb, &tracked.geometry, &self.config);
            self.lines_fit = fit >= TrackerConfig::default().stable_ratio;
            if self.lines_fit {
                self.covered_streak = 0;
                return Ok(Self::observation(&reading, &tracked.geometry));
            }
            // The lines fit less well: a hand over the board, or a bump. Within a stretch of
            // covered frames, most are taken as read (see RECHECK_COVERED_EVERY).
            if reading.occluded && !self.covered_streak.is_multiple_of(RECHECK_COVERED_EVERY) {
                self.covered_streak += 1;
                return Ok(Self::observation(&reading, &tracked.geometry));
            }
            // A local re-fit from the old grid tells a hand from a bump; a hand that hides too
            // much to re-fit is seen by the reader.
            let gray = grey(rgb);
            let not_moved = match refine_gray(&gray, &tracked.geometry) {
                Ok(refit) => max_shift_cells(&tracked.geometry, &refit.geometry) <= TrackerConfig::default().moved_cells,
                Err(_) => reading.occluded,
            };
            if not_moved {
                self.covered_streak = if reading.occluded { self.covered_streak + 1 } else { 0 };
                return Ok(Self::observation(&reading, &tracked.geometry));
            }
            previous = Some((tracked.geometry.clone(), gray));
        }
        self.covered_streak = 0;
        match previous {
            Some((geometry, gray)) => self.search(rgb, Some(geometry), Some(gray)),
            None => self.search(rgb, None, None),
        }
    }

    /// A full search settles where the board is now (no grid yet, or it moved from `previous`).
    fn search(
        &mut self,
        rgb: &image::RgbImage,
        previous: Option<GridGeometry>,
        gray: Option<image::GrayImage>,
    ) -> Result<Observation, AnalyzeError> {
        self.last_read = None;
        let gray = gray.unwrap_or_else(|| grey(rgb));
        match locate_gray(&gray, &LocateOptions::default()) {
            Ok(located) => {
                let reference_score = line_score(&gray, &located.geometry).max(1e-6);
                let mut observation = Self::observation(&read_board(rgb, &located.geometry, &self.config), &located.geometry);
                let shift = previous.as_ref().map(|old| max_shift_cells(old, &located.geometry));
                observation.moved_cells = shift.filter(|&s| s > TrackerConfig::default().moved_cells);
                self.tracked = Some(TrackedGrid { geometry: located.geometry, reference_score });
                Ok(observation)
            }
            Err(err) => {
                self.tracked = None;
                Err(AnalyzeError::BoardNotFound(err.to_string()))
            }
        }
    }
}

/// Whether no intersection patch changed between two frames. A change of the camera's exposure
/// moves every patch alike, so the patches are compared after taking out the median change (a
/// large one, a light switched on, still counts as a change).
fn still(patches: &[f32], reference: &[f32]) -> bool {
    if patches.len() != reference.len() {
        return false;
    }
    let mut changes: Vec<f32> = patches.iter().zip(reference).map(|(a, b)| a - b).filter(|d| !d.is_nan()).collect();
    if changes.is_empty() {
        return false;
    }
    let middle = changes.len() / 2;
    let (_, &mut exposure, _) = changes.select_nth_unstable_by(middle, f32::total_cmp);
    exposure.abs() < STILL_PATCH_LEVELS
        && patches.iter().zip(reference).all(|(a, b)| {
            ((a - b) - exposure).abs() < STILL_PATCH_LEVELS || (a.is_nan() && b.is_nan())
        })
}

/// The mean grey level (Rec. 709, 0–255) of a small patch, ±0.12 cell, around each of the 361
/// intersections as the grid projects them, row-major. A stone covers ±0.45 cell, a hand
/// many cells, so either changes the patches it lands on. NaN for a patch outside the frame.
fn intersection_patches(rgb: &image::RgbImage, geometry: &GridGeometry) -> Vec<f32> {
    let (w, h) = rgb.dimensions();
    let raw = rgb.as_raw();
    let last = (BOARD_LINES - 1) as f64;
    let cell = {
        let c = geometry.corners();
        let d = |a: [f64; 2], b: [f64; 2]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt();
        (d(c[0], c[1]) + d(c[1], c[2]) + d(c[2], c[3]) + d(c[3], c[0])) / (4.0 * last)
    };
    // Five by five samples spread over the patch (at most every pixel).
    let step = (0.06 * cell).max(1.0);
    let mut patches = Vec::with_capacity(BOARD_POINTS);
    for row in 0..BOARD_LINES {
        for col in 0..BOARD_LINES {
            #[allow(clippy::cast_precision_loss)]
            let p = geometry.project(col as f64, row as f64);
            let mut sum = 0u32;
            let mut n = 0u32;
            for dy in -2i32..=2 {
                for dx in -2i32..=2 {
                    let (x, y) = ((p[0] + f64::from(dx) * step).round(), (p[1] + f64::from(dy) * step).round());
                    if x < 0.0 || y < 0.0 || x >= f64::from(w) || y >= f64::from(h) {
                        continue;
                    }
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                    let i = (y as usize * w as usize + x as usize) * 3;
                    sum += 2126 * u32::from(raw[i]) + 7152 * u32::from(raw[i + 1]) + 722 * u32::from(raw[i + 2]);
                    n += 1;
                }
            }
            #[allow(clippy::cast_precision_loss)]
            patches.push(if n == 25 { sum as f32 / (n as f32 * 10_000.0) } else { f32::NAN });
        }
    }
    patches
}

/// Makes [`VisionAnalyzer`]s.
#[derive(Debug, Default, Clone, Copy)]
pub struct VisionAnalyzers;

impl AnalyzerFactory for VisionAnalyzers {
    fn create(&self, _table: &str, calibration: Option<Corners>) -> Box<dyn FrameAnalyzer> {
        Box::new(VisionAnalyzer::new(calibration))
    }
}


/// Referees games with `tengen-referee` (stabiliser, two boards, infractions, rulings).
pub struct RefereeAdapter {
    referee: referee::Referee,
    /// A result set by the arbiter by hand (overrides the counted one).
    result_override: Option<String>,
}

/// Seconds since the epoch, the referee's time base.
#[allow(clippy::cast_precision_loss)]
fn seconds(at_ms: i64) -> f64 {
    at_ms as f64 / 1000.0
}

/// The referee's rows (`.XO`, top first) as a service board string (`.BW`).
fn board_of(rows: &[String]) -> String {
    rows.iter()
        .flat_map(|r| r.chars())
        .map(|c| match c {
            'X' => 'B',
            'O' => 'W',
            '.' => '.',
            _ => '?',
        })
        .collect()
}

/// Converts a referee event for the log and the dashboard; the event itself is kept in `detail`.
pub fn convert_event(event: &referee::Event) -> RefereeEvent {
    use referee::{EventKind, Status};
    let severity = match (event.status, event.kind) {
        (Status::Suspected, _) => Severity::Alert,
        (
            _,
            EventKind::Occluded | EventKind::BoardMoved | EventKind::UnclearPoint | EventKind::Resync,
        ) => Severity::Notice,
        _ => Severity::Info,
    };
    let kind = match event.status {
        Status::Suspected | Status::Info => event.kind.name().to_owned(),
        Status::Confirmed => format!("{}_confirmed", event.kind.name()),
        Status::Dismissed => format!("{}_dismissed", event.kind.name()),
    };
    RefereeEvent {
        kind,
        article: event.article.as_ref().map(|a| format!("Art. {a}")),
        severity,
        alert_id: event.infraction,
        move_number: event.move_number,
        summary: event.message.en.clone(),
        detail: serde_json::to_value(event).unwrap_or_default(),
    }
}

impl RefereeAdapter {
    /// A referee for one game.
    pub fn new(table: &str, game: i64, komi: f64) -> Self {
        let config = referee::RefereeConfig {
            table: table.to_owned(),
            game: game.to_string(),
            komi_points: komi,
            // Tournament games start on an empty board (Art. 2); the first stable board is
            // then explained as moves, so a camera that starts late still records them.
            start: referee::StartPosition::Empty,
            ..referee::RefereeConfig::default()
        };
        Self { referee: referee::Referee::new(config), result_override: None }
    }

    fn to_referee_observation(at_ms: i64, obs: &Observation) -> referee::Observation {
        let mut points = [[referee::PointObservation::default(); BOARD_LINES]; BOARD_LINES];
        for (i, reading) in obs.points.iter().enumerate().take(BOARD_POINTS) {
            let (row, col) = (i / BOARD_LINES, i % BOARD_LINES);
            points[row][col] = referee::PointObservation {
                reading: *reading,
                // Each point's own confidence where the vision gave one, so the referee's
                // floor and its events' confidence see the doubtful points, not a frame mean.
                confidence: if *reading == PointState::Unknown {
                    0.0
                } else {
                    obs.point_confidence.get(i).copied().unwrap_or(obs.confidence)
                },
            };
        }
        referee::Observation { t: seconds(at_ms), points, occluded: obs.occluded, frame_ref: None }
    }
}

impl TableReferee for RefereeAdapter {
    fn observe(&mut self, at_ms: i64, observation: &Observation) -> Vec<RefereeEvent> {
        let obs = Self::to_referee_observation(at_ms, observation);
        let mut events = match observation.moved_cells {
            Some(shift) => self.referee.board_moved(obs.t, Some(shift)),
            None => Vec::new(),
        };
        events.extend(self.referee.observe(&obs));
        events.iter().map(convert_event).collect()
    }

    fn arbiter(
        &mut self,
        at_ms: i64,
        action: &ArbiterAction,
    ) -> Result<Vec<RefereeEvent>, RefereeError> {
        use referee::ArbiterAction as A;
        let mapped = match action {
            ArbiterAction::Confirm { alert_id } => A::Confirm { infraction: *alert_id },
            ArbiterAction::Dismiss { alert_id } => A::Dismiss { infraction: *alert_id },
            ArbiterAction::Pass { colour } => A::Pass { side: *colour },
            ArbiterAction::EndGame { resigned } => A::EndGame { resigned: *resigned },
            ArbiterAction::MarkDead { points } => A::MarkDead { points: points.clone() },
            ArbiterAction::Count => A::Count,
            ArbiterAction::AdoptPhysical => A::AdoptPhysical,
            ArbiterAction::SetToMove { colour } => A::SetToMove { side: *colour },
            ArbiterAction::SetResult { result } => {
                self.result_override = Some(result.clone());
                return Ok(vec![RefereeEvent {
                    kind: "result".into(),
                    article: Some("Art. 9".into()),
                    severity: Severity::Info,
                    alert_id: None,
                    move_number: None,
                    summary: format!("Result set by the arbiter: {result}"),
                    detail: serde_json::json!({ "result": result, "by": "arbiter" }),
                }]);
            }
            ArbiterAction::SetColours { swapped: false, .. } => return Ok(vec![]),
            ArbiterAction::SetColours { swapped: true, .. } => A::WrongColours,
            ArbiterAction::CorrectRecord { move_number, point } => {
                A::CorrectMove { number: *move_number, point: point.clone() }
            }
            ArbiterAction::NewGame { .. } => {
                return Err(RefereeError::Invalid("new games are started by the service".into()))
            }
        };
        match self.referee.arbiter(seconds(at_ms), &mapped) {
            Ok(events) => Ok(events.iter().map(convert_event).collect()),
            Err(err @ referee::ArbiterError::UnknownInfraction(_)) => {
                Err(RefereeError::NotFound(err.to_string()))
            }
            Err(
                err @ (referee::ArbiterError::AlreadyDecided(_)
                | referee::ArbiterError::WrongPhase(_)
                | referee::ArbiterError::ColoursAlreadyRuled),
            ) => {
                Err(RefereeError::Conflict(err.to_string()))
            }
            Err(err @ referee::ArbiterError::UnknownMove(_)) => Err(RefereeError::NotFound(err.to_string())),
            Err(
                err @ (referee::ArbiterError::BadPoint(_) | referee::ArbiterError::BadCorrection(_)),
            ) => Err(RefereeError::Invalid(err.to_string())),
        }
    }

    fn view(&self) -> GameView {
        let snapshot = self.referee.state();
        let moves = snapshot
            .moves
            .iter()
            .filter(|entry| !entry.struck)
            .filter_map(|entry| {
                let point = match &entry.action {
                    referee::RecordAction::Place { point } => Some(point.to_sgf()),
                    referee::RecordAction::Pass | referee::RecordAction::Void { .. } => None,
                    referee::RecordAction::Setup { .. } | referee::RecordAction::Turn => return None,
                };
                Some(RecordMove { number: entry.number, colour: entry.side, point })
            })
            .collect();
        let open_alerts = snapshot
            .open_infractions
            .iter()
            .map(|i| OpenAlert {
                alert_id: i.id,
                kind: i.event.kind.name().to_owned(),
                article: i.event.article.as_ref().map(|a| format!("Art. {a}")),
                summary: i.event.message.en.clone(),
                points: i.event.points.iter().map(|p| p.sgf.clone()).collect(),
            })
            .collect();
        let phase = serde_json::to_value(snapshot.phase)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "playing".into());
        GameView {
            legal: board_of(&snapshot.legal),
            physical: board_of(&snapshot.physical),
            moves,
            to_move: snapshot.to_move,
            open_alerts,
            warnings: snapshot.warnings,
            captures: snapshot.captures,
            dead: snapshot.dead.iter().map(|p| p.sgf.clone()).collect(),
            phase,
            players_swapped: snapshot.players_swapped,
            result: self
                .result_override
                .clone()
                .or_else(|| snapshot.result.map(|r| format!("{} ({}, {})", r.points, r.exact, r.customary))),
        }
    }
}

/// Makes [`RefereeAdapter`]s.
#[derive(Debug, Default, Clone, Copy)]
pub struct RefereeAdapters;

impl RefereeFactory for RefereeAdapters {
    fn new_game(&self, table: &str, game: i64, komi: f64) -> Box<dyn TableReferee> {
        Box::new(RefereeAdapter::new(table, game, komi))
    }
}

/// The production engines: `tengen-vision` and `tengen-referee` with the system clock.
pub fn standard_engines() -> Engines {
    Engines {
        analyzers: Arc::new(VisionAnalyzers),
        referees: Arc::new(RefereeAdapters),
        clock: Arc::new(SystemClock),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tengen_rules::Stone;
    use tengen_synth::{render, Hand, Position, Scene, Side};

    fn jpeg(position: &Position, scene: &Scene) -> Vec<u8> {
        render(position, scene).expect("render").jpeg()
    }

    #[test]
    fn each_point_reaches_the_referee_with_its_own_confidence() {
        let mut points = vec![PointState::Empty; BOARD_POINTS];
        points[0] = PointState::Black;
        points[1] = PointState::Unknown;
        points[2] = PointState::White;
        let mut point_confidence = vec![0.9; BOARD_POINTS];
        point_confidence[0] = 0.3;
        point_confidence[1] = 0.8;
        let obs = Observation { points, corners: None, confidence: 0.85, occluded: false, moved_cells: None, point_confidence };
        let fed = RefereeAdapter::to_referee_observation(1000, &obs);
        assert_eq!(fed.points[0][0].reading, PointState::Black);
        assert!((fed.points[0][0].confidence - 0.3).abs() < 1e-6, "the doubtful stone keeps its own confidence");
        assert_eq!(fed.points[0][1].confidence, 0.0, "an occluded point has none");
        assert!((fed.points[0][2].confidence - 0.9).abs() < 1e-6);
        // Without per-point confidences every point gets the frame's.
        let plain = Observation { point_confidence: vec![], ..obs };
        let fed = RefereeAdapter::to_referee_observation(1000, &plain);
        assert!((fed.points[0][0].confidence - 0.85).abs() < 1e-6);
        assert!((fed.points[5][5].confidence - 0.85).abs() < 1e-6);
    }

    #[test]
    fn the_vision_reading_gives_every_point_its_confidence() {
        let position = Position::empty().with(3, 3, Stone::BLACK).with(15, 15, Stone::WHITE);
        let scene = Scene::preset("webcam").expect("preset").with_size(960, 720).with_seed(4);
        let obs = VisionAnalyzer::new(None).analyze(&jpeg(&position, &scene)).expect("located");
        assert_eq!(obs.point_confidence.len(), BOARD_POINTS);
        assert!(obs.point_confidence.iter().all(|c| (0.0..=1.0).contains(c)));
        #[allow(clippy::cast_precision_loss)]
        let mean = obs.point_confidence.iter().sum::<f32>() / BOARD_POINTS as f32;
        assert!((mean - obs.confidence).abs() < 1e-4, "the frame's confidence is their mean");
        assert!(obs.point_confidence.iter().any(|&c| (c - obs.confidence).abs() > 1e-3), "they differ from point to point");
    }

    #[test]
    fn a_still_board_keeps_its_reading_and_a_new_stone_or_a_hand_is_read() {
        let before = Position::empty().with(3, 3, Stone::BLACK).with(15, 15, Stone::WHITE);
        for preset in ["webcam", "dim"] {
            let scene = Scene::preset(preset).expect("preset").with_size(960, 720).with_seed(4);
            // Each frame of a camera gets fresh sensor noise and exposure wobble.
            let frame = |position: &Position, n: u64| {
                let mut s = scene.clone();
                s.frame_seed = n;
                jpeg(position, &s)
            };
            let mut analyzer = VisionAnalyzer::new(None);
            let first = analyzer.analyze(&frame(&before, 1)).expect("located");
            analyzer.analyze(&frame(&before, 2)).expect("read with the tracked grid");
            assert!(analyzer.last_read.is_some(), "{preset}: a reading to keep");
            for n in 3..5 {
                let kept = analyzer.analyze(&frame(&before, n)).expect("kept");
                assert_eq!(kept.board_string(), first.board_string(), "{preset}");
            }
            assert_eq!(analyzer.last_read.as_ref().map(|l| l.kept), Some(2), "{preset}: two frames kept the reading");
            // A black stone, then a white one: each is read at once.
            let count = |o: &Observation, c: char| o.board_string().chars().filter(|&x| x == c).count();
            let (blacks, whites) = (count(&first, 'B'), count(&first, 'W'));
            assert_eq!((blacks, whites), (1, 1), "{preset}: {}", first.board_string());
            let one_more = before.clone().with(9, 9, Stone::BLACK);
            let seen = analyzer.analyze(&frame(&one_more, 10)).expect("read");
            assert_eq!(analyzer.last_read.as_ref().map(|l| l.kept), Some(0), "{preset}: read afresh for the black stone");
            assert_eq!((count(&seen, 'B'), count(&seen, 'W')), (2, 1), "{preset}");
            let two_more = one_more.clone().with(10, 4, Stone::WHITE);
            let seen = analyzer.analyze(&frame(&two_more, 11)).expect("read");
            assert_eq!(analyzer.last_read.as_ref().map(|l| l.kept), Some(0), "{preset}: read afresh for the white stone");
            assert_eq!((count(&seen, 'B'), count(&seen, 'W')), (2, 2), "{preset}");
            // A hand over the still board is read too.
            let mut with_hand = scene.clone().with_hand(Hand::placing(Side::South, 9.0, 9.0, 1.0, None));
            with_hand.frame_seed = 20;
            let position = before.clone().with(9, 9, Stone::BLACK).with(10, 4, Stone::WHITE);
            analyzer.analyze(&frame(&position, 21)).expect("read");
            analyzer.analyze(&jpeg(&position, &with_hand)).expect("read");
            assert!(analyzer.last_read.is_none(), "{preset}: the hand frame is read, and its reading not kept");
            // However still, the board is read afresh every READ_AT_LEAST_EVERY frames.
            let reads = (30..30 + 2 * u64::from(READ_AT_LEAST_EVERY))
                .filter(|&n| {
                    analyzer.analyze(&frame(&position, n)).expect("read");
                    analyzer.last_read.as_ref().is_some_and(|l| l.kept == 0)
                })
                .count();
            assert!((2..=4).contains(&reads), "{preset}: {reads} fresh reads in {} still frames", 2 * READ_AT_LEAST_EVERY);
        }
    }

    #[test]
    fn a_board_bumped_under_a_hand_is_relocated_within_a_recheck_period() {
        let position = Position::empty().with(3, 3, Stone::BLACK).with(15, 15, Stone::WHITE);
        let scene = Scene::preset("webcam").expect("preset").with_size(960, 720).with_seed(4);
        let mut bumped = scene.clone();
        bumped.camera.offset = [scene.camera.offset[0] + 0.08, scene.camera.offset[1] - 0.05];
        // Two arms across the board, moving: the lines fit clearly worse.
        let arms = |s: &Scene, reach: f64| {
            let mut h = s.clone().with_hand(Hand::reaching(Side::South, 6.0, reach)).with_hand(Hand::reaching(Side::East, 12.0, reach));
            h.seed = s.seed;
            h
        };
        let mut analyzer = VisionAnalyzer::new(None);
        let first = analyzer.analyze(&jpeg(&position, &scene)).expect("located");
        // Arms over the board for a while: read with the tracked grid, mostly not re-fitted.
        for reach in [0.9, 1.0, 1.1] {
            let covered = analyzer.analyze(&jpeg(&position, &arms(&scene, reach))).expect("read");
            assert!(covered.occluded && covered.moved_cells.is_none());
        }
        assert_eq!(analyzer.covered_streak, 3, "three covered frames in a row");
        // The board is bumped under the arm, then the arm leaves.
        let mut frames = vec![jpeg(&position, &arms(&bumped, 1.0)), jpeg(&position, &arms(&bumped, 0.9))];
        frames.extend((0..=RECHECK_COVERED_EVERY).map(|_| jpeg(&position, &bumped)));
        let observations: Vec<Observation> = frames.iter().map(|f| analyzer.analyze(f).expect("read")).collect();
        let moved = observations.iter().position(|o| o.moved_cells.is_some()).expect("the bump is found");
        // At the latest at the stretch's next re-check: the shifted grid reads as covered
        // after the arms leave, and a re-fit comes every RECHECK_COVERED_EVERY frames.
        assert!(moved <= 1 + RECHECK_COVERED_EVERY as usize, "found at frame {moved}");
        let last = observations.last().expect("frames");
        assert!(!last.occluded && last.moved_cells.is_none());
        assert_eq!(last.board_string(), first.board_string(), "the same stones after the bump");
    }

    #[test]
    fn the_tracking_check_from_colour_equals_the_vision_check_on_grey() {
        let position = Position::empty().with(3, 3, Stone::BLACK).with(15, 15, Stone::WHITE).with(9, 0, Stone::WHITE);
        for (preset, seed) in [("webcam", 4), ("phone", 9), ("oblique", 2)] {
            let scene = Scene::preset(preset).expect("preset").with_size(960, 720).with_seed(seed);
            let frame = tengen_vision::image_io::decode_rgb(&jpeg(&position, &scene)).expect("decodes").rgb;
            let full = image::imageops::grayscale(&frame);
            let geometry = locate_gray(&full, &LocateOptions::default()).expect("located").geometry;
            assert_eq!(line_score_rgb(&frame, &geometry), line_score(&full, &geometry), "{preset}");
            // A grid shifted by half a cell scores differently, and still the same both ways;
            // so does one hanging off the frame.
            for shift in [20.0, 400.0] {
                let mut shifted = geometry.clone();
                shifted.homography[0][2] += shift;
                assert_eq!(line_score_rgb(&frame, &shifted), line_score(&full, &shifted), "{preset}, shifted {shift}");
            }
        }
    }

    #[test]
    fn a_bumped_board_is_relocated_and_the_referee_raises_board_moved() {
        let position = Position::empty().with(3, 3, Stone::BLACK).with(15, 15, Stone::WHITE);
        let scene = Scene::preset("webcam").expect("preset").with_size(960, 720).with_seed(4);
        let mut bumped = scene.clone();
        bumped.camera.offset = [scene.camera.offset[0] + 0.08, scene.camera.offset[1] - 0.05];
        let mut with_hand = scene.clone().with_hand(Hand::placing(Side::South, 9.0, 9.0, 1.0, None));
        with_hand.seed = scene.seed;
        let mut analyzer = VisionAnalyzer::new(None);
        let mut referee = RefereeAdapter::new("t", 1, 7.5);
        let first = analyzer.analyze(&jpeg(&position, &scene)).expect("located");
        assert_eq!(first.moved_cells, None);
        // A hand over the board lowers the line fit but is not a move of the board.
        let covered = analyzer.analyze(&jpeg(&position, &with_hand)).expect("read with the tracked grid");
        assert_eq!(covered.moved_cells, None);
        let still = analyzer.analyze(&jpeg(&position, &scene)).expect("tracked");
        assert_eq!(still.moved_cells, None);
        let moved = analyzer.analyze(&jpeg(&position, &bumped)).expect("relocated");
        let shift = moved.moved_cells.expect("the bump is reported");
        assert!(shift > 0.25, "shift {shift}");
        assert_eq!(moved.board_string(), first.board_string(), "the same stones are read after the bump");
        let kinds: Vec<String> = [first, still, moved].iter().enumerate().flat_map(|(i, o)| referee.observe(i as i64 * 500, o)).map(|e| e.kind).collect();
        assert_eq!(kinds.iter().filter(|k| k.as_str() == "board_moved").count(), 1, "{kinds:?}");
    }
}
