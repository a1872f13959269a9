//! Tengen's renderer of realistic camera frames of a Go board, with exact ground truth.
//!
//! ```
//! use tengen_rules::Stone;
//! use tengen_synth::{render, Position, Scene};
//! let position = Position::empty().with(3, 3, Stone::BLACK).with(15, 15, Stone::WHITE);
//! let scene = Scene::preset("webcam").unwrap_or_default().with_seed(7);
//! let frame = render(&position, &scene).expect("valid size");
//! assert_eq!(frame.truth.intersections.len(), 361);
//! let jpeg: Vec<u8> = frame.jpeg();
//! assert!(jpeg.len() > 1000);
//! ```
//!
//! The renderer maps every output pixel backwards: undistort through the lens, cast a ray from a
//! posed pinhole camera into a 3D scene (table, board box with wood grain, grid lines and hoshi,
//! ellipsoid stones with height, capsule hands and sleeves), shade it under a lamp with shadows,
//! then apply exposure, colour cast, gradient, vignetting, blur and noise. Ground truth comes from
//! the same camera, so it is exact.

mod board;
mod camera;
mod hand;
pub mod noise;
mod playout;
mod position;
mod post;
mod props;
mod render;
mod scene;
pub mod sequence;
mod texture;
mod truth;
mod truthcalc;

pub use camera::{apply_homography, board_mm, Camera};
pub use playout::MAX_GAME_STONES;
pub use position::Position;
pub use render::{render, Rendered, MAX_SIDE};
pub use scene::{
    BoardMaterial, BoardStyle, Bowl, CameraPose, ColourCast, Hand, Hue, Lighting, NeighbourBoard, PersonShadow, Prop,
    Scene, Side, StoneColours, StoneStyle, TableTexture, PRESETS, SKIN_TONES,
};
pub use sequence::{Action, SequenceFrame, Timing};
pub use truth::GroundTruth;

/// Errors of the renderer.
#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    /// The position text is malformed (wrong row count, row length or character).
    #[error("bad position: {0}")]
    BadPosition(String),
    /// The requested image size is zero or larger than [`MAX_SIDE`].
    #[error("bad image size {width}×{height} (each side must be 1..={max})", max = MAX_SIDE)]
    BadSize {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
    },
}

/// Encodes an image as baseline JPEG at `quality` (clamped to 1–100).
pub fn encode_jpeg(image: &image::RgbImage, quality: u8) -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality.clamp(1, 100));
    // Encoding an in-memory RGB buffer into a Vec cannot fail short of running out of memory.
    if encoder.encode_image(image).is_err() {
        out.clear();
    }
    out
}
