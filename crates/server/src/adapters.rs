//! Adapters from the project's pure cores to the service's seams: `tengen-vision` behind
//! [`FrameAnalyzer`], `tengen-referee` behind [`TableReferee`].

use tengen_vision::decode_rgb;
use tengen_vision::locate::LocateError;
use tengen_vision::{CancelFlag, WorkLimit, WorkStopped};
use tengen_vision::{FixedGrid, FrameReadError, FrameReader, FrameReading, Tracking};

use std::sync::Arc;

use tengen_referee as referee;
use tengen_sgf::{GameInfo, GameRecord};

use crate::engine::{
    AnalyzeError, AnalyzerFactory, Corners, Engines, FrameAnalyzer, RefereeFactory, SystemClock, TableReferee,
};
use crate::error::Error;
use crate::model::Observation;
use crate::store::GameRow;

/// Reads frames with `tengen-vision`: decode, then the camera's [`FrameReader`] (the grid
/// fixed by the calibration, else located once and tracked, a still board's reading kept; the
/// same reader `tengen replay` uses).
pub struct VisionAnalyzer {
    reader: FrameReader,
}

impl VisionAnalyzer {
    /// An analyzer with an optional fixed calibration.
    pub fn new(calibration: Option<Corners>) -> Self {
        Self { reader: FrameReader::new(calibration.map(FixedGrid::Corners), Tracking::Track) }
    }

    /// What the service logs and the referee is fed of one frame's reading.
    pub fn observation(frame: &FrameReading) -> Observation {
        Observation {
            points: frame.states().collect(),
            corners: Some(frame.geometry.corners()),
            confidence: frame.confidence(),
            occluded: frame.reading.occluded,
            moved_cells: frame.moved_cells,
            point_confidence: frame.confidences().collect(),
        }
    }
}

impl VisionAnalyzer {
    /// Decodes and reads a frame, a board search within `work`.
    fn analyze_within(&mut self, encoded: &[u8], work: &WorkLimit) -> Result<Observation, AnalyzeError> {
        let frame = decode_rgb(encoded).map_err(|e| AnalyzeError::Decode(e.to_string()))?;
        match self.reader.read_within(&frame.rgb, work) {
            Ok(reading) => Ok(Self::observation(&reading)),
            Err(FrameReadError::BoardNotFound(LocateError::Stopped(WorkStopped::Cancelled))) => {
                Err(AnalyzeError::BoardNotFound("the board search ran past its deadline".into()))
            }
            Err(err) => Err(AnalyzeError::BoardNotFound(err.to_string())),
        }
    }
}

impl FrameAnalyzer for VisionAnalyzer {
    fn analyze(&mut self, encoded: &[u8]) -> Result<Observation, AnalyzeError> {
        self.analyze_within(encoded, &WorkLimit::default())
    }

    fn analyze_cancellable(&mut self, encoded: &[u8], cancel: &CancelFlag) -> Result<Observation, AnalyzeError> {
        self.analyze_within(encoded, &WorkLimit { cancel: Some(cancel.clone()), ..WorkLimit::default() })
    }

    fn set_calibration(&mut self, corners: Option<Corners>) {
        self.reader.set_fixed(corners.map(FixedGrid::Corners));
    }

    fn needs_search(&self) -> bool {
        self.reader.needs_search()
    }
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
    /// Everything the referee said, in order: the comments of the record.
    events: Vec<referee::Event>,
    /// A result set by the arbiter by hand (overrides the counted one).
    result_override: Option<String>,
}

/// Seconds since the epoch, the referee's time base.
#[allow(clippy::cast_precision_loss)]
fn seconds(at_ms: i64) -> f64 {
    at_ms as f64 / 1000.0
}

impl RefereeAdapter {
    /// A referee for one game, checking its first stable board against the setup (an even
    /// game, handicap stones, or the board as found).
    pub fn new(table: &str, game: i64, komi: f64, start: referee::StartPosition) -> Self {
        let config = referee::RefereeConfig {
            table: table.to_owned(),
            game: game.to_string(),
            komi_points: komi,
            start,
            ..referee::RefereeConfig::default()
        };
        Self { referee: referee::Referee::new(config), events: Vec::new(), result_override: None }
    }

    /// The referee's observation of a logged one: each point's own confidence where the vision
    /// gave one (so the referee's floor and its events' confidence see the doubtful points,
    /// not a frame mean), in whole tenths as the referee takes them.
    fn to_referee_observation(at_ms: i64, obs: &Observation) -> referee::Observation {
        let confidence = |i: usize| obs.point_confidence.get(i).copied().unwrap_or(obs.confidence);
        let points = obs.points.iter().enumerate().map(|(i, &state)| (state, confidence(i)));
        referee::Observation::from_points(seconds(at_ms), points, obs.occluded, None)
    }
}

impl TableReferee for RefereeAdapter {
    fn observe(&mut self, at_ms: i64, observation: &Observation) -> Vec<referee::Event> {
        let obs = Self::to_referee_observation(at_ms, observation);
        let mut events = match observation.moved_cells {
            Some(shift) => self.referee.board_moved(obs.t, Some(shift)),
            None => Vec::new(),
        };
        events.extend(self.referee.observe(&obs));
        self.events.extend(events.iter().cloned());
        events
    }

    fn arbiter(&mut self, at_ms: i64, action: &referee::ArbiterAction) -> Result<Vec<referee::Event>, Error> {
        let events = self.referee.arbiter(seconds(at_ms), action).map_err(refusal)?;
        self.events.extend(events.iter().cloned());
        Ok(events)
    }

    fn set_result(&mut self, result: &str) {
        self.result_override = Some(result.to_owned());
    }

    fn snapshot(&self) -> referee::Snapshot {
        self.referee.state()
    }

    fn hand_result(&self) -> Option<&str> {
        self.result_override.as_deref()
    }

    fn record(&self, info: &GameInfo) -> GameRecord {
        let info = GameInfo { result: self.result_override.clone().or(info.result.clone()), ..info.clone() };
        self.referee.game_record(&self.events, &info)
    }
}

/// The kind of a refusal by the referee: the one place its errors meet the service's.
fn refusal(err: referee::ArbiterError) -> Error {
    use referee::ArbiterError as E;
    match err {
        E::UnknownInfraction(_) | E::UnknownMove(_) => Error::not_found(err.to_string()),
        E::AlreadyDecided(_) | E::WrongPhase(_) | E::ColoursAlreadyRuled => Error::conflict(err.to_string()),
        E::BadCorrection(_) => Error::invalid_action(err.to_string()),
    }
}

/// Makes [`RefereeAdapter`]s.
#[derive(Debug, Default, Clone, Copy)]
pub struct RefereeAdapters;

impl RefereeFactory for RefereeAdapters {
    fn new_game(&self, game: &GameRow) -> Box<dyn TableReferee> {
        Box::new(RefereeAdapter::new(&game.table, game.id, game.komi, game.setup.start))
    }
}

/// The production engines: `tengen-vision` and `tengen-referee` with the system clock.
pub fn standard_engines() -> Engines {
    Engines { analyzers: Arc::new(VisionAnalyzers), referees: Arc::new(RefereeAdapters), clock: Arc::new(SystemClock) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tengen_rules::Stone;
    use tengen_rules::{PointState, BOARD_POINTS};
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
        let obs = Observation {
            points,
            corners: None,
            confidence: 0.85,
            occluded: false,
            moved_cells: None,
            point_confidence,
        };
        let fed = RefereeAdapter::to_referee_observation(1000, &obs);
        assert_eq!(fed.points[0][0].reading, PointState::Black);
        assert!((fed.points[0][0].confidence - 0.3).abs() < 1e-6, "the doubtful stone keeps its own confidence");
        assert_eq!(fed.points[0][1].confidence, 0.0, "an occluded point has none");
        assert!((fed.points[0][2].confidence - 0.9).abs() < 1e-6);
        // Without per-point confidences every point gets the frame's.
        let plain = Observation { point_confidence: vec![], ..obs };
        let fed = RefereeAdapter::to_referee_observation(1000, &plain);
        assert!((fed.points[0][0].confidence - 0.8).abs() < 1e-6, "in whole tenths");
        assert!((fed.points[5][5].confidence - 0.8).abs() < 1e-6);
    }

    /// The service's deadline reaches the board search through the one frame reader: a frame
    /// analysed with the flag raised stops its search and says so, and the analyzer reads the
    /// next frame as usual (issue 11 item 1).
    #[test]
    fn a_raised_deadline_flag_stops_the_board_search_and_the_next_frame_is_read() {
        let position = Position::empty().with(3, 3, Stone::BLACK);
        let scene = Scene::preset("webcam").expect("preset").with_size(960, 720).with_seed(4);
        let frame = jpeg(&position, &scene);
        let mut analyzer = VisionAnalyzer::new(None);
        let raised = CancelFlag::new();
        raised.cancel();
        match analyzer.analyze_cancellable(&frame, &raised) {
            Err(AnalyzeError::BoardNotFound(message)) => assert!(message.contains("deadline"), "{message}"),
            other => panic!("a raised flag must stop the search, got {other:?}"),
        }
        assert!(analyzer.needs_search(), "nothing tracked after a search cut short");
        let obs = analyzer.analyze_cancellable(&frame, &CancelFlag::new()).expect("located");
        assert_eq!(obs.points.iter().filter(|&&p| p == PointState::Black).count(), 1);
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
        // A clear rendered frame: the classical and the learned reader agree and are sure of
        // every point (that each point's own confidence reaches the referee is
        // `each_point_reaches_the_referee_with_its_own_confidence`).
        assert!(obs.point_confidence.iter().all(|&c| c >= 0.9), "every point of a clear frame is sure");
    }

    #[test]
    fn a_bumped_board_is_relocated_and_the_referee_raises_board_moved() {
        let position = Position::empty().with(3, 3, Stone::BLACK).with(15, 15, Stone::WHITE);
        let scene = Scene::preset("webcam").expect("preset").with_size(960, 720).with_seed(4);
        let bumped = scene.clone().with_board_shifted(0.08, -0.05);
        let with_hand = scene.clone().with_hand(Hand::placing(Side::South, 9.0, 9.0, 1.0, None));
        let mut analyzer = VisionAnalyzer::new(None);
        let mut referee = RefereeAdapter::new("t", 1, 7.5, referee::StartPosition::Even);
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
        let kinds: Vec<referee::EventKind> = [first, still, moved]
            .iter()
            .enumerate()
            .flat_map(|(i, o)| referee.observe(i as i64 * 500, o))
            .map(|e| e.kind)
            .collect();
        let moved_count = kinds.iter().filter(|&&k| k == referee::EventKind::BoardMoved).count();
        assert_eq!(moved_count, 1, "{kinds:?}");
    }
}
