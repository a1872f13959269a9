//! Pure board-camera vision: locate the 19×19 grid in a frame, read every point, detect occlusion.
//!
//! Everything here takes image buffers and returns data; no files, clocks or cameras.
//!
//! The public surface is kept narrow (as kornia-rs does): the frame reader and the one-shot
//! functions at the top level, three modules for the callers that need more — `locate` (the
//! search, given corners, crossings), `evaluate` (scoring against labels, for `tengen eval` and
//! the tests), `fit` (fitting the data-derived models) — and `stages`, the reader's steps one by
//! one for profiling by hand. Everything else is private to the crate.

mod board_field;
mod calibration;
mod classify;
pub mod evaluate;
mod features;
mod frame_check;
mod frame_reader;
mod geometry;
mod grey;
mod homography;
mod image_io;
pub mod locate;
mod occlusion;
mod occlusion_model;
mod over_edge;
mod patch_reader;
mod reader_model;
mod reading;
mod rectify;
mod tracking;
mod work;

/// Fitting the reader's and the occlusion test's models from labelled frames (`tengen fit`,
/// `tengen eval photos --loso`).
pub mod fit {
    pub use crate::occlusion_model::{
        fit as fit_occlusion, OcclusionEvidence, OcclusionFitError, OcclusionModelFile, OcclusionSample,
        COVERED_FEATURE_NAMES, EDGE_FEATURE_NAMES, FEATURE_NAMES,
    };
    pub use crate::patch_reader::{
        class_of, fit as fit_patch_reader, mirrored, misplaced_grids, PatchFitOptions, PatchModelError, PatchModelFile,
        PatchSample, INPUTS as PATCH_INPUTS,
    };
    pub use crate::reader_model::{fit as fit_reader, ClassPrior, FitError, LabelledFrame, ReaderModelFile};
    pub use crate::reading::patch_inputs;
}

/// The reader's steps one by one (rectify, measure, classify, occlusion), for timing and
/// debugging them by hand; `read_board_detailed` runs them all.
pub mod stages {
    pub use crate::classify::classify;
    pub use crate::features::{measure_points, BoardColour};
    pub use crate::occlusion::{cells_under_stones, detect as detect_occlusion, OcclusionConfig};
    pub use crate::reading::debug_features;
    pub use crate::rectify::{CameraFoot, RectifiedBoard};
}

pub use calibration::{Calibration, CalibrationError, ColourReferences, FitRecord, CALIBRATION_SCHEMA};
pub use frame_check::{check_frame, FrameCheckError, FrameFormat, FrameInfo, FrameLimits};
pub use frame_reader::{
    FixedGrid, FrameReadError, FrameReader, FrameReading, Tracking, READ_AT_LEAST_EVERY, RECHECK_COVERED_EVERY,
};
pub use geometry::{GridGeometry, LensDistortion};
pub use grey::{grey, grey_within};
pub use image_io::{decode_gray, decode_rgb, decode_rgb_with, DecodedFrame, ImageIoError};
pub use locate::{locate, FitQuality, LocateError, LocateOptions, Located};
pub use occlusion_model::OcclusionModel;
pub use patch_reader::PatchModel;
pub use reader_model::ReaderModel;
pub use reading::{
    draw_reading, read_board, read_board_detailed, BoardReading, PointReading, ReaderConfig, ReadingDetails,
};
pub use tracking::{line_score, line_score_rgb, TrackStatus, Tracker, TrackerConfig};
pub use work::{CancelFlag, WorkLimit, WorkStopped, DEFAULT_SEARCH_STEPS};
