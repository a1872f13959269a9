//! Pure board-camera vision: locate the 19×19 grid in a frame, read every point, detect occlusion.
//!
//! Everything here takes image buffers and returns data; no files, clocks or cameras.

pub mod geometry;

pub use geometry::{GridGeometry, LensDistortion, BOARD_LINES};
