//! `tengen render`: renders one synthetic camera frame of a position (grid file or SGF move) and
//! writes the JPEG plus its exact ground truth (`OUT.truth.json`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use tengen_rules::{Point, Stone, BOARD_LINES};
use tengen_synth::{ColourCast, Hand, Position, Scene, Side};

/// Arguments of `tengen render`.
#[derive(clap::Args)]
pub struct RenderArgs {
    /// Grid file: 19 lines of `.XO` (top row first; `#` lines are comments).
    #[arg(long, conflicts_with = "sgf")]
    position: Option<PathBuf>,
    /// SGF game record: renders the board after `--move` moves (default: the whole main line).
    #[arg(long)]
    sgf: Option<PathBuf>,
    /// Number of moves of the SGF main line to play (0 = setup only).
    #[arg(long = "move", requires = "sgf")]
    move_number: Option<usize>,
    /// Named scene preset: clean, overhead, webcam, oblique, phone, dim, harsh, small.
    #[arg(long, default_value = "overhead")]
    preset: String,
    /// Scene JSON file (any subset of the Scene fields); replaces the preset.
    #[arg(long, conflicts_with = "preset")]
    scene: Option<PathBuf>,
    /// Camera tilt from vertical in degrees (0 = overhead, 45 = oblique).
    #[arg(long)]
    angle: Option<f64>,
    /// Rotation of the image about the view axis in degrees.
    #[arg(long)]
    rotation: Option<f64>,
    /// Side the camera stands on, degrees clockwise from the bottom edge.
    #[arg(long)]
    azimuth: Option<f64>,
    /// Colour cast of the light: neutral, blue, green or yellow.
    #[arg(long)]
    light: Option<String>,
    /// Lens distortion k1 (division model; negative = barrel, typical −0.05 … −0.2).
    #[arg(long, allow_hyphen_values = true)]
    k1: Option<f64>,
    /// Add a hand reaching over the board (toward --hand-at, default the centre).
    #[arg(long)]
    hand: bool,
    /// Where the fingertips are, e.g. Q16.
    #[arg(long, requires = "hand")]
    hand_at: Option<String>,
    /// Side the arm comes from: north, east, south, west.
    #[arg(long, default_value = "south", requires = "hand")]
    hand_side: String,
    /// Colour of a stone held in the fingers: black or white.
    #[arg(long, requires = "hand")]
    hand_holding: Option<String>,
    /// Motion blur: how far the hand moves (toward the board centre) during the exposure, in mm.
    #[arg(long, requires = "hand")]
    hand_blur: Option<f64>,
    /// Random seed (wood, jitter, noise); the same seed gives the same frame.
    #[arg(long)]
    seed: Option<u64>,
    /// Image size WIDTHxHEIGHT, e.g. 1280x720.
    #[arg(long)]
    size: Option<String>,
    /// JPEG quality 1–100.
    #[arg(long)]
    quality: Option<u8>,
    /// Output JPEG; the ground truth goes next to it as OUT.truth.json.
    #[arg(short = 'o', long)]
    output: PathBuf,
}

/// Runs `tengen render`.
pub fn run(args: RenderArgs) -> anyhow::Result<ExitCode> {
    let position = load_position(&args)?;
    let mut scene = match &args.scene {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            serde_json::from_str::<Scene>(&text).with_context(|| format!("parsing scene {}", path.display()))?
        }
        None => match Scene::preset(&args.preset) {
            Some(scene) => scene,
            None => bail!("unknown preset {:?} (known: {})", args.preset, tengen_synth::PRESETS.join(", ")),
        },
    };
    if let Some(angle) = args.angle {
        if !(0.0..=80.0).contains(&angle) {
            bail!("--angle must be between 0 and 80 degrees, got {angle}");
        }
        scene.camera.tilt_deg = angle;
    }
    if let Some(rotation) = args.rotation {
        scene.camera.roll_deg = rotation;
    }
    if let Some(azimuth) = args.azimuth {
        scene.camera.azimuth_deg = azimuth;
    }
    if let Some(light) = &args.light {
        scene.light.cast = ColourCast::parse(light)
            .with_context(|| format!("unknown --light {light:?} (neutral, blue, green, yellow)"))?;
    }
    if let Some(k1) = args.k1 {
        if !(-0.4..=0.1).contains(&k1) {
            bail!("--k1 must be between -0.4 and 0.1, got {k1}");
        }
        scene.lens_k1 = k1;
    }
    if let Some(seed) = args.seed {
        scene.seed = seed;
    }
    if let Some(size) = &args.size {
        let (w, h) = parse_size(size)?;
        scene.width = w;
        scene.height = h;
    }
    if let Some(quality) = args.quality {
        if !(1..=100).contains(&quality) {
            bail!("--quality must be 1–100, got {quality}");
        }
        scene.jpeg_quality = quality;
    }
    if args.hand {
        let side = Side::parse(&args.hand_side).with_context(|| format!("unknown --hand-side {:?}", args.hand_side))?;
        let (col, row) = match &args.hand_at {
            Some(at) => {
                let p = Point::from_human(at, BOARD_LINES as u8, BOARD_LINES as u8)
                    .with_context(|| format!("bad --hand-at {at:?}"))?;
                (usize::from(p.col), usize::from(p.row))
            }
            None => (9, 9),
        };
        let holding = match args.hand_holding.as_deref().map(str::to_ascii_lowercase).as_deref() {
            None => None,
            Some("black" | "b") => Some(Stone::BLACK),
            Some("white" | "w") => Some(Stone::WHITE),
            Some(other) => bail!("unknown --hand-holding {other:?} (black or white)"),
        };
        let blur = args.hand_blur.unwrap_or(0.0);
        if !(0.0..=200.0).contains(&blur) {
            bail!("--hand-blur must be 0–200 mm, got {blur}");
        }
        // Inward from the player's side.
        let inward = match side {
            Side::North => [0.0, 1.0],
            Side::South => [0.0, -1.0],
            Side::West => [1.0, 0.0],
            Side::East => [-1.0, 0.0],
        };
        scene.hands.push(Hand {
            side,
            target: [col as f64, row as f64],
            holding,
            motion_mm: [inward[0] * blur, inward[1] * blur, 0.0],
            ..Hand::default()
        });
    }
    let started = std::time::Instant::now();
    let frame = tengen_synth::render(&position, &scene)?;
    let took = started.elapsed();
    let jpeg = frame.jpeg();
    std::fs::write(&args.output, &jpeg).with_context(|| format!("writing {}", args.output.display()))?;
    let truth_path = truth_path(&args.output);
    std::fs::write(&truth_path, frame.truth.to_json()).with_context(|| format!("writing {}", truth_path.display()))?;
    println!(
        "wrote {} ({}×{}, {} bytes, {} stones, hand {}) and {} in {:.0} ms",
        args.output.display(),
        scene.width,
        scene.height,
        jpeg.len(),
        position.stone_count(),
        if frame.truth.hand_present { "present" } else { "absent" },
        truth_path.display(),
        took.as_secs_f64() * 1e3
    );
    Ok(ExitCode::SUCCESS)
}

fn load_position(args: &RenderArgs) -> anyhow::Result<Position> {
    if let Some(path) = &args.position {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        return Position::parse_grid(&text).with_context(|| format!("grid file {}", path.display()));
    }
    let Some(path) = &args.sgf else { bail!("give --position GRID_FILE or --sgf FILE") };
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let record = tengen_sgf::read_game(&bytes).with_context(|| format!("reading SGF {}", path.display()))?;
    if record.width != 19 || record.height != 19 {
        bail!("only 19×19 boards can be rendered, {} is {}×{}", path.display(), record.width, record.height);
    }
    let mut game = record.start_game().with_context(|| format!("setting up {}", path.display()))?;
    let count = args.move_number.unwrap_or(record.moves.len());
    if count > record.moves.len() {
        bail!("--move {count} but {} has only {} moves", path.display(), record.moves.len());
    }
    for (i, m) in record.moves.iter().take(count).enumerate() {
        game.play(m.color, m.mv).map_err(|e| anyhow::anyhow!("move {} is illegal: {e}", i + 1))?;
    }
    let rows = game.board().rows();
    Position::from_rows(&rows).context("converting the board")
}

fn parse_size(text: &str) -> anyhow::Result<(u32, u32)> {
    let bad = || anyhow::anyhow!("bad --size {text:?}, expected e.g. 1280x720");
    let (w, h) = text.split_once(['x', 'X', '×']).ok_or_else(bad)?;
    let (w, h): (u32, u32) = (w.trim().parse().map_err(|_| bad())?, h.trim().parse().map_err(|_| bad())?);
    if w < 16 || h < 16 || w > tengen_synth::MAX_SIDE || h > tengen_synth::MAX_SIDE {
        bail!("--size {w}x{h} out of range (16..={} per side)", tengen_synth::MAX_SIDE);
    }
    Ok((w, h))
}

/// `frame.jpg` → `frame.truth.json`.
fn truth_path(output: &Path) -> PathBuf {
    output.with_extension("truth.json")
}
