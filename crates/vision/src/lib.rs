//! Pure board-camera vision: locate the 19×19 grid in a frame, read every point, detect occlusion.
//!
//! Everything here takes image buffers and returns data; no files, clocks or cameras.

pub mod calibration;
pub mod classify;
pub mod evaluate;
pub mod features;
pub mod frame_check;
pub mod frame_reader;
pub mod geometry;
pub mod grey;
pub mod homography;
pub mod image_io;
pub mod locate;
pub mod occlusion;
pub mod occlusion_model;
pub mod reader_model;
pub mod reading;
pub mod rectify;
pub mod tracking;
pub mod work;

pub use frame_reader::{FixedGrid, FrameReadError, FrameReader, FrameReading, Tracking};
pub use geometry::{GridGeometry, LensDistortion};
pub use locate::{locate, FitQuality, LocateError, LocateOptions, Located};
pub use reader_model::ReaderModel;
pub use reading::{read_board, BoardReading, PointReading, ReaderConfig};
