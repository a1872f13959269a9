//! Adapters from the project's pure cores to the service's seams: `tengen-vision` behind
//! [`FrameAnalyzer`], `tengen-referee` behind [`TableReferee`].



use tengen_vision::image_io::decode_rgb;
use tengen_vision::locate::{from_corners, locate, refine_gray, LocateOptions};
use tengen_vision::{GridGeometry, LensDistortion, PointState, ReaderConfig};

use crate::engine::{AnalyzeError, AnalyzerFactory, Corners, FrameAnalyzer};
use crate::model::{Observation, PointReading, POINTS, SIZE};

/// Reads frames with `tengen-vision`: decode, locate the board (fixed calibration, else track
/// the previous frame's grid, else search), read the 361 points with occlusion.
pub struct VisionAnalyzer {
    calibration: Option<Corners>,
    /// The grid found in the previous frame: refining it is much cheaper than a full search.
    tracked: Option<GridGeometry>,
    config: ReaderConfig,
}

impl VisionAnalyzer {
    /// An analyzer with an optional fixed calibration.
    pub fn new(calibration: Option<Corners>) -> Self {
        Self { calibration, tracked: None, config: ReaderConfig::default() }
    }

    fn geometry(&mut self, rgb: &image::RgbImage) -> Result<GridGeometry, AnalyzeError> {
        let (w, h) = rgb.dimensions();
        if let Some(corners) = self.calibration {
            return from_corners(corners, LensDistortion::none(w, h))
                .map(|l| l.geometry)
                .map_err(|e| AnalyzeError::BoardNotFound(e.to_string()));
        }
        if let Some(previous) = &self.tracked {
            let gray = image::imageops::grayscale(rgb);
            if let Ok(located) = refine_gray(&gray, previous) {
                self.tracked = Some(located.geometry.clone());
                return Ok(located.geometry);
            }
        }
        match locate(rgb, &LocateOptions::default()) {
            Ok(located) => {
                self.tracked = Some(located.geometry.clone());
                Ok(located.geometry)
            }
            Err(err) => {
                self.tracked = None;
                Err(AnalyzeError::BoardNotFound(err.to_string()))
            }
        }
    }
}

impl FrameAnalyzer for VisionAnalyzer {
    fn analyze(&mut self, encoded: &[u8]) -> Result<Observation, AnalyzeError> {
        let frame = decode_rgb(encoded).map_err(|e| AnalyzeError::Decode(e.to_string()))?;
        let geometry = self.geometry(&frame.rgb)?;
        let reading = tengen_vision::read_board(&frame.rgb, &geometry, &self.config);
        let mut points = Vec::with_capacity(POINTS);
        let mut confidence = 0.0f32;
        for row in reading.points.iter().take(SIZE) {
            for point in row.iter().take(SIZE) {
                points.push(match point.state {
                    PointState::Empty => PointReading::Empty,
                    PointState::Black => PointReading::Black,
                    PointState::White => PointReading::White,
                    PointState::Unknown => PointReading::Occluded,
                });
                confidence += point.confidence;
            }
        }
        #[allow(clippy::cast_precision_loss)]
        let confidence = confidence / POINTS as f32;
        Ok(Observation { points, corners: Some(geometry.corners()), confidence })
    }

    fn set_calibration(&mut self, corners: Option<Corners>) {
        self.calibration = corners;
        self.tracked = None;
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

