//! Everything about a frame except the position: camera, lens, light, board look, hands, sensor.
//!
//! All fields have sane defaults (`Scene::default()` is a clean 1920×1080 overhead-ish shot) and
//! named presets cover the cases tests usually want. Scenes are serde so tests and the CLI can
//! load them from JSON.

use serde::{Deserialize, Serialize};

use tengen_rules::{Stone, BOARD_LINES};

/// A complete description of how to render one frame. Deterministic given `seed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Scene {
    /// Output image width in pixels.
    pub width: u32,
    /// Output image height in pixels.
    pub height: u32,
    /// Where the camera is and where it looks.
    pub camera: CameraPose,
    /// Radial distortion `k1` of the division model (see [`crate::LensDistortion`]); negative is
    /// barrel distortion, typical webcams −0.05 … −0.2. Clamped to −0.4 … 0.1.
    pub lens_k1: f64,
    /// Light colour, strength, gradient and glare.
    pub light: Lighting,
    /// How the stones sit and look.
    pub stones: StoneStyle,
    /// The board and the table under it.
    pub board: BoardStyle,
    /// Hands and arms in the frame (0, 1 or 2 usually).
    pub hands: Vec<Hand>,
    /// Stone bowls standing on the table beside the board (distractors for board location).
    pub bowls: Vec<Bowl>,
    /// Gaussian blur sigma in pixels (focus and motion softness); 0 = sharp.
    pub blur_sigma: f32,
    /// Sensor noise standard deviation in 0–255 grey levels; 0 = none.
    pub noise_sigma: f32,
    /// JPEG quality used by [`crate::Rendered::jpeg`] (1–100).
    pub jpeg_quality: u8,
    /// Edge anti-aliasing: re-render pixels on object edges with 4 samples.
    pub antialias: bool,
    /// Seed for the scene's random choices (wood, stone jitter, stripes); fixed for a camera.
    pub seed: u64,
    /// Seed for what changes from frame to frame of one camera (sensor noise, exposure
    /// jitter), so a sequence keeps its board and stones while each frame gets fresh noise.
    pub frame_seed: u64,
    /// Frame-to-frame auto-exposure wobble: standard deviation of the relative brightness change
    /// drawn from `frame_seed` (0 = steady; webcams 0.01–0.03).
    pub exposure_jitter: f32,
    /// Camera shake during the exposure: the whole frame smeared along this vector, in pixels
    /// (zero = still).
    pub shake_px: [f32; 2],
    /// Things on the table besides the board and the bowls.
    pub props: Vec<Prop>,
    /// Other boards on the same table: neighbouring games partly in view.
    pub neighbours: Vec<NeighbourBoard>,
}

impl Default for Scene {
    fn default() -> Self {
        Self {
            width: 1920,
            height: 1080,
            camera: CameraPose::default(),
            lens_k1: -0.05,
            light: Lighting::default(),
            stones: StoneStyle::default(),
            board: BoardStyle::default(),
            hands: Vec::new(),
            bowls: Vec::new(),
            blur_sigma: 0.6,
            noise_sigma: 2.0,
            jpeg_quality: 88,
            antialias: true,
            seed: 1,
            frame_seed: 0,
            exposure_jitter: 0.0,
            shake_px: [0.0, 0.0],
            props: Vec::new(),
            neighbours: Vec::new(),
        }
    }
}

/// Names accepted by [`Scene::preset`].
pub const PRESETS: &[&str] = &["clean", "overhead", "webcam", "oblique", "phone", "dim", "harsh", "small"];

impl Scene {
    /// A named preset:
    /// - `clean`: overhead, no distortion, no jitter, blur, noise or glare (for geometry tests);
    /// - `overhead`: camera straight above, mild realism;
    /// - `webcam`: 640×480, 25° tilt, barrel distortion, noise, soft focus, JPEG 75;
    /// - `oblique`: 42° tilt from the side with a rotation, strong perspective;
    /// - `phone`: 1920×1080, 30° tilt, sharp, slight warm light;
    /// - `dim`: yellow evening light, darker, noisier;
    /// - `harsh`: strong lamp glare and a light gradient, blue cast;
    /// - `small`: 640×480 version of the default.
    pub fn preset(name: &str) -> Option<Scene> {
        let base = Scene::default();
        let scene = match name {
            "clean" => Scene {
                camera: CameraPose { tilt_deg: 0.0, ..CameraPose::default() },
                lens_k1: 0.0,
                light: Lighting { glare: 0.0, gradient: 0.0, vignette: 0.0, ..Lighting::default() },
                stones: StoneStyle { jitter_mm: 0.0, ..StoneStyle::default() },
                blur_sigma: 0.0,
                noise_sigma: 0.0,
                jpeg_quality: 95,
                ..base
            },
            "overhead" => Scene { camera: CameraPose { tilt_deg: 0.0, ..CameraPose::default() }, ..base },
            "webcam" => Scene {
                width: 640,
                height: 480,
                camera: CameraPose { tilt_deg: 25.0, board_fill: 0.85, ..CameraPose::default() },
                lens_k1: -0.12,
                blur_sigma: 0.8,
                noise_sigma: 4.0,
                jpeg_quality: 75,
                ..base
            },
            "oblique" => Scene {
                camera: CameraPose {
                    tilt_deg: 42.0,
                    azimuth_deg: 20.0,
                    roll_deg: -8.0,
                    board_fill: 0.8,
                    ..CameraPose::default()
                },
                lens_k1: -0.08,
                ..base
            },
            "phone" => Scene {
                camera: CameraPose { tilt_deg: 30.0, fov_deg: 65.0, ..CameraPose::default() },
                lens_k1: -0.02,
                light: Lighting { cast: ColourCast::Yellow, cast_strength: 0.4, ..Lighting::default() },
                blur_sigma: 0.3,
                noise_sigma: 1.5,
                ..base
            },
            "dim" => Scene {
                light: Lighting { cast: ColourCast::Yellow, brightness: 0.6, gradient: 0.25, ..Lighting::default() },
                noise_sigma: 7.0,
                blur_sigma: 0.9,
                jpeg_quality: 70,
                ..base
            },
            "harsh" => Scene {
                camera: CameraPose { tilt_deg: 15.0, ..CameraPose::default() },
                light: Lighting {
                    cast: ColourCast::Blue,
                    glare: 1.0,
                    gradient: 0.35,
                    gradient_angle_deg: 30.0,
                    ..Lighting::default()
                },
                ..base
            },
            "small" => Scene { width: 640, height: 480, ..base },
            _ => return None,
        };
        Some(scene)
    }

    /// A varied, realistic scene drawn from `seed`: camera from overhead to 40° with any
    /// rotation, lens, light colour and strength, glare, jitter, blur, noise, JPEG quality, board
    /// and table colours, and a hand in about a third of the scenes. For benchmarks over many
    /// conditions; the image size is kept at the default (use [`Scene::with_size`]).
    pub fn random(seed: u64) -> Scene {
        let mut rng = crate::noise::Rng::derive(seed, 0x5CE4E);
        let pick = |rng: &mut crate::noise::Rng, n: usize| ((rng.unit() * n as f64) as usize).min(n - 1);
        let casts = [ColourCast::Neutral, ColourCast::Neutral, ColourCast::Blue, ColourCast::Green, ColourCast::Yellow];
        let woods = [[222, 176, 108], [206, 158, 96], [232, 196, 140], [196, 140, 84], [214, 170, 118]];
        let tables = [[96, 88, 80], [60, 58, 56], [150, 140, 128], [110, 72, 46], [40, 62, 48], [190, 188, 182]];
        // Mostly upright cameras with a small roll; sometimes any rotation.
        let roll = if rng.unit() < 0.75 { rng.range(-12.0, 12.0) } else { rng.range(-180.0, 180.0) };
        // Off-centre, but the whole board stays in the frame.
        let fill = rng.range(0.6, 0.93);
        let slack = (1.0 - fill) / 2.0 * 0.85;
        let mut scene = Scene {
            camera: CameraPose {
                tilt_deg: rng.range(0.0, 40.0),
                azimuth_deg: rng.range(-25.0, 25.0),
                roll_deg: roll,
                fov_deg: rng.range(50.0, 75.0),
                board_fill: fill,
                offset: [rng.range(-slack, slack), rng.range(-slack, slack)],
            },
            lens_k1: rng.range(-0.16, 0.0),
            light: Lighting {
                cast: casts[pick(&mut rng, casts.len())],
                cast_strength: rng.range(0.3, 1.0) as f32,
                brightness: rng.range(0.6, 1.2) as f32,
                lamp_mm: [rng.range(-600.0, 600.0), rng.range(-700.0, 300.0), rng.range(1100.0, 2200.0)],
                glare: rng.range(0.0, 1.0) as f32,
                gradient: rng.range(0.0, 0.35) as f32,
                gradient_angle_deg: rng.range(0.0, 360.0) as f32,
                vignette: rng.range(0.0, 0.35) as f32,
                ambient: rng.range(0.3, 0.6) as f32,
                person_shadow: None,
            },
            stones: StoneStyle {
                jitter_mm: rng.range(0.3, 2.8),
                diameter_mm: rng.range(21.5, 22.4),
                thickness_mm: rng.range(7.5, 10.0),
                shell_stripes: rng.range(0.0, 1.0),
                ..StoneStyle::default()
            },
            board: BoardStyle {
                wood_rgb: woods[pick(&mut rng, woods.len())],
                grain: rng.range(0.3, 1.4) as f32,
                line_width_mm: rng.range(0.8, 1.3),
                thickness_mm: rng.range(15.0, 60.0),
                table_rgb: tables[pick(&mut rng, tables.len())],
                ..BoardStyle::default()
            },
            hands: Vec::new(),
            blur_sigma: rng.range(0.0, 1.3) as f32,
            noise_sigma: rng.range(0.5, 6.0) as f32,
            jpeg_quality: rng.range(60.0, 95.0) as u8,
            seed,
            ..Scene::default()
        };
        if rng.unit() < 0.5 {
            let gap = rng.range(20.0, 90.0);
            let radius = rng.range(55.0, 75.0);
            let woods = [[150, 96, 52], [96, 60, 36], [200, 160, 110], [40, 40, 44]];
            let wood = woods[pick(&mut rng, woods.len())];
            for (sign, contents) in [(1.0, Stone::BLACK), (-1.0, Stone::WHITE)] {
                scene.bowls.push(Bowl {
                    centre_mm: [sign * (crate::camera::board_mm::HALF_W + gap + radius), rng.range(-200.0, 200.0)],
                    radius_mm: radius,
                    height_mm: rng.range(60.0, 90.0),
                    contents,
                    rgb: wood,
                });
            }
        }
        if rng.unit() < 0.35 {
            let sides = [Side::South, Side::North, Side::East, Side::West];
            let side = sides[pick(&mut rng, 4)];
            let mut hand = Hand::reaching(side, rng.range(1.0, 17.0), rng.range(0.05, 0.8));
            hand.skin_rgb = SKIN_TONES[pick(&mut rng, SKIN_TONES.len())];
            hand.sleeve_rgb =
                [rng.range(20.0, 200.0) as u8, rng.range(20.0, 200.0) as u8, rng.range(20.0, 200.0) as u8];
            hand.lift_mm = rng.range(14.0, 60.0);
            if rng.unit() < 0.5 {
                hand.holding = Some(if rng.unit() < 0.5 { Stone::BLACK } else { Stone::WHITE });
            }
            scene.hands.push(hand);
        }
        scene
    }

    /// This scene at another image size.
    pub fn with_size(mut self, width: u32, height: u32) -> Self {
        self.width = width;
        self.height = height;
        self
    }

    /// This scene with another seed.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// This scene with one more hand.
    pub fn with_hand(mut self, hand: Hand) -> Self {
        self.hands.push(hand);
        self
    }

    /// This scene with the board moved in the image by these fractions of the image's width
    /// (+ right) and height (+ down): a board bumped on the table.
    pub fn with_board_shifted(mut self, right: f64, down: f64) -> Self {
        self.camera.offset = [self.camera.offset[0] + right, self.camera.offset[1] + down];
        self
    }
}

/// Camera placement relative to the board. The camera aims at the board centre (shifted by
/// `offset`) from `distance` set so the board fills `board_fill` of the frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CameraPose {
    /// Angle between the view axis and the vertical: 0 = straight overhead, 45 = oblique.
    pub tilt_deg: f64,
    /// Which side the camera stands on, clockwise from the bottom edge of the diagram (row 19
    /// side, "south"): 0 = south, 90 = west... only matters when `tilt_deg` > 0.
    pub azimuth_deg: f64,
    /// Rotation of the image about the view axis (any angle).
    pub roll_deg: f64,
    /// Horizontal field of view of the lens.
    pub fov_deg: f64,
    /// Fraction of the image (the tighter of width/height) the whole wooden board spans.
    pub board_fill: f64,
    /// Shift of the board in the image as fractions of image width and height (+x right, +y down).
    pub offset: [f64; 2],
}

impl Default for CameraPose {
    fn default() -> Self {
        Self { tilt_deg: 12.0, azimuth_deg: 0.0, roll_deg: 0.0, fov_deg: 60.0, board_fill: 0.88, offset: [0.0, 0.0] }
    }
}

/// White-balance error of the camera or colour of the room light.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ColourCast {
    /// Correct white balance.
    #[default]
    Neutral,
    /// Cold (daylight through a window, LED).
    Blue,
    /// Fluorescent tubes.
    Green,
    /// Tungsten bulbs.
    Yellow,
    /// White balance set for daylight under warm bulbs: strongly orange-yellow.
    Warm,
    /// White balance set for bulbs under daylight or cold LEDs: strongly blue.
    Cool,
    /// A coloured stage or decorative light flooding the whole scene: every surface lit by one
    /// saturated hue, the camera's auto exposure pushing its channel near clipping.
    Stage(Hue),
}

/// The hue of a coloured light.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Hue {
    /// Red.
    Red,
    /// Orange.
    Orange,
    /// Yellow.
    Yellow,
    /// Green.
    Green,
    /// Cyan.
    Cyan,
    /// Blue.
    Blue,
    /// Violet.
    Violet,
    /// Pink (magenta).
    Pink,
}

impl Hue {
    /// Every hue, around the colour wheel.
    pub const ALL: [Hue; 8] =
        [Hue::Red, Hue::Orange, Hue::Yellow, Hue::Green, Hue::Cyan, Hue::Blue, Hue::Violet, Hue::Pink];

    /// Lower-case name (`red`, `orange`...).
    pub fn name(self) -> &'static str {
        match self {
            Hue::Red => "red",
            Hue::Orange => "orange",
            Hue::Yellow => "yellow",
            Hue::Green => "green",
            Hue::Cyan => "cyan",
            Hue::Blue => "blue",
            Hue::Violet => "violet",
            Hue::Pink => "pink",
        }
    }

    /// Parses a name as [`Hue::name`] gives it.
    pub fn parse(text: &str) -> Option<Hue> {
        Hue::ALL.into_iter().find(|h| h.name().eq_ignore_ascii_case(text))
    }

    /// Per-channel gain of the scene under this light relative to white light, after the
    /// camera's auto exposure. Measured on a real board under coloured LED lights (mean RGB
    /// over the board under each light divided by the mean under white light, the same
    /// position and camera; the goban-watcher development photos), except red, which those
    /// photos lack: it follows pink's red and orange's near-zero blue.
    fn gains(self) -> [f32; 3] {
        match self {
            Hue::Red => [1.3, 0.06, 0.05],
            Hue::Orange => [0.94, 0.56, 0.41],
            Hue::Yellow => [0.89, 0.76, 0.63],
            Hue::Green => [0.58, 0.93, 0.10],
            Hue::Cyan => [0.04, 0.91, 1.17],
            Hue::Blue => [0.09, 0.52, 1.49],
            Hue::Violet => [0.49, 0.21, 1.50],
            Hue::Pink => [1.09, 0.03, 1.06],
        }
    }
}

impl ColourCast {
    /// Per-channel gain at full strength.
    pub fn gains(self) -> [f32; 3] {
        match self {
            ColourCast::Neutral => [1.0, 1.0, 1.0],
            ColourCast::Blue => [0.82, 0.95, 1.22],
            ColourCast::Green => [0.88, 1.12, 0.86],
            ColourCast::Yellow => [1.15, 1.0, 0.68],
            ColourCast::Warm => [1.25, 1.0, 0.6],
            ColourCast::Cool => [0.76, 0.95, 1.35],
            ColourCast::Stage(hue) => hue.gains(),
        }
    }

    /// Parses `neutral`, `blue`, `green`, `yellow`, `warm`, `cool` or `stage-HUE` (a hue of
    /// [`Hue::name`], e.g. `stage-cyan`).
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.to_ascii_lowercase();
        if let Some(hue) = text.strip_prefix("stage-") {
            return Hue::parse(hue).map(ColourCast::Stage);
        }
        match text.as_str() {
            "neutral" | "none" => Some(ColourCast::Neutral),
            "blue" => Some(ColourCast::Blue),
            "green" => Some(ColourCast::Green),
            "yellow" => Some(ColourCast::Yellow),
            "warm" => Some(ColourCast::Warm),
            "cool" => Some(ColourCast::Cool),
            _ => None,
        }
    }
}

/// The room light: one lamp above the board plus ambient light, and camera exposure effects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Lighting {
    /// Colour cast of the whole frame.
    pub cast: ColourCast,
    /// How strongly the cast applies (0–1).
    pub cast_strength: f32,
    /// Exposure multiplier (1 = normal).
    pub brightness: f32,
    /// Lamp position in millimetres relative to the board centre (x right, y toward the bottom
    /// edge of the diagram, z up). Sets shadow direction and where the glare spot appears.
    pub lamp_mm: [f64; 3],
    /// Strength of the lamp's reflection on the varnished board (the glare spot); 0 = matte.
    pub glare: f32,
    /// Linear brightness gradient across the frame: relative change from centre to edge.
    pub gradient: f32,
    /// Direction of the gradient (brighter towards this angle, 0 = right, 90 = down).
    pub gradient_angle_deg: f32,
    /// Darkening of the frame corners (0–1).
    pub vignette: f32,
    /// Share of light that is ambient (no direction, no hard shadows).
    pub ambient: f32,
    /// Someone standing between the lamp and the board: the soft shadow of their head and
    /// shoulders (`None` = nobody).
    pub person_shadow: Option<PersonShadow>,
}

/// The shadow a standing person casts from the lamp onto the board and table: a soft ellipse
/// (shoulders) with a disc (head) beside it, blocking part of the lamp's light.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PersonShadow {
    /// Centre of the shoulders' shadow on the board plane, world millimetres.
    pub centre_mm: [f64; 2],
    /// Direction of the shoulders' long axis, degrees from +x.
    pub angle_deg: f64,
    /// Half the shoulders' width in millimetres (the head is scaled with it).
    pub size_mm: f64,
    /// Half-width of the soft edge in millimetres (a far, broad lamp gives soft shadows).
    pub softness_mm: f64,
    /// Share of the lamp's light blocked inside the shadow (0–1).
    pub strength: f64,
}

impl Default for PersonShadow {
    fn default() -> Self {
        Self { centre_mm: [0.0, 260.0], angle_deg: 0.0, size_mm: 230.0, softness_mm: 30.0, strength: 0.8 }
    }
}

impl Default for Lighting {
    fn default() -> Self {
        Self {
            cast: ColourCast::Neutral,
            cast_strength: 1.0,
            brightness: 1.0,
            lamp_mm: [-600.0, -450.0, 1400.0],
            glare: 0.35,
            gradient: 0.1,
            gradient_angle_deg: 200.0,
            vignette: 0.15,
            ambient: 0.45,
            person_shadow: None,
        }
    }
}

/// How stones sit on the board.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StoneStyle {
    /// Standard deviation of a stone's offset from its intersection, in millimetres (spacing is
    /// 22 mm); offsets are clamped to 40% of the spacing.
    pub jitter_mm: f64,
    /// Stone diameter in millimetres.
    pub diameter_mm: f64,
    /// Stone thickness in millimetres (biconvex stones are 7–10 mm).
    pub thickness_mm: f64,
    /// Chance that a white stone shows the faint stripes of clam shell.
    pub shell_stripes: f64,
    /// Stones that overlap after their jitter are pushed apart until they only touch, as real
    /// stones on a crowded board are (off by default so older scenes render unchanged).
    pub push_apart: bool,
    /// The colours of the two sets.
    pub colours: StoneColours,
    /// Strength of the stones' specular highlights: 1 = polished (default), 0 = matte.
    pub gloss: f64,
}

impl Default for StoneStyle {
    fn default() -> Self {
        Self {
            jitter_mm: 1.8,
            diameter_mm: 22.0,
            thickness_mm: 9.0,
            shell_stripes: 0.6,
            push_apart: false,
            colours: StoneColours::BlackWhite,
            gloss: 1.0,
        }
    }
}

/// The colours of a stone set: the "black" stones are the dark ones, the "white" the light ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum StoneColours {
    /// Slate black and shell white.
    #[default]
    BlackWhite,
    /// Dark and light green glass or plastic.
    Greens,
    /// Navy and sky-blue plastic.
    Blues,
}

impl StoneColours {
    /// Every set.
    pub const ALL: [StoneColours; 3] = [StoneColours::BlackWhite, StoneColours::Greens, StoneColours::Blues];

    /// Parses `blackwhite`, `greens` or `blues`.
    pub fn parse(text: &str) -> Option<StoneColours> {
        match text.to_ascii_lowercase().as_str() {
            "blackwhite" | "black-white" => Some(StoneColours::BlackWhite),
            "greens" | "green" => Some(StoneColours::Greens),
            "blues" | "blue" => Some(StoneColours::Blues),
            _ => None,
        }
    }
}

/// How the board and table look.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BoardStyle {
    /// Base wood colour (sRGB 0–255), e.g. kaya yellow or darker shin-kaya.
    pub wood_rgb: [u8; 3],
    /// Strength of the wood grain (0 = plain).
    pub grain: f32,
    /// Grid line width in millimetres (real boards: about 1 mm).
    pub line_width_mm: f64,
    /// Board thickness in millimetres (table boards 20–40).
    pub thickness_mm: f64,
    /// Table surface colour (sRGB 0–255).
    pub table_rgb: [u8; 3],
    /// What the playing surface is made of (`wood_rgb` is its base colour whatever it is).
    pub material: BoardMaterial,
    /// Colour of the printed lines and star points (sRGB 0–255); `None` = black ink.
    pub line_rgb: Option<[u8; 3]>,
    /// Radius of the star points (hoshi) in millimetres.
    pub star_radius_mm: f64,
    /// Width of the margin beyond the outer lines, left/right and top/bottom, in millimetres
    /// (clamped to 3–60).
    pub margin_mm: [f64; 2],
    /// The table top's texture.
    pub table_texture: TableTexture,
}

impl Default for BoardStyle {
    fn default() -> Self {
        Self {
            wood_rgb: [222, 176, 108],
            grain: 1.0,
            line_width_mm: 1.0,
            thickness_mm: 30.0,
            table_rgb: [96, 88, 80],
            material: BoardMaterial::Wood,
            line_rgb: None,
            star_radius_mm: 2.0,
            margin_mm: [crate::camera::board_mm::MARGIN_X, crate::camera::board_mm::MARGIN_Y],
            table_texture: TableTexture::Cloth,
        }
    }
}

impl BoardStyle {
    /// Half the width and half the length of the board's top, in millimetres.
    pub fn half_extent(&self) -> [f64; 2] {
        use crate::camera::board_mm::{SPACING_X, SPACING_Y};
        [9.0 * SPACING_X + self.margin_mm[0].clamp(3.0, 60.0), 9.0 * SPACING_Y + self.margin_mm[1].clamp(3.0, 60.0)]
    }
}

/// What a board's playing surface is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum BoardMaterial {
    /// Solid wood with grain (kaya, shin-kaya, spruce).
    #[default]
    Wood,
    /// Laminated bamboo strips with nodes.
    Bamboo,
    /// A flat vinyl or plastic sheet.
    Vinyl,
    /// Printed paper or card, with fold lines.
    Paper,
}

/// The table's surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum TableTexture {
    /// A tablecloth (woven, soft folds).
    #[default]
    Cloth,
    /// A wooden table top.
    Wood,
    /// A plain laminate top.
    Laminate,
}

/// A round stone bowl (go-ke) on the table, open, full of stones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Bowl {
    /// Centre on the table in world millimetres (x toward column T, y toward row 1; the board
    /// spans about ±213 × ±228).
    pub centre_mm: [f64; 2],
    /// Outer radius in millimetres.
    pub radius_mm: f64,
    /// Height above the table in millimetres.
    pub height_mm: f64,
    /// Which stones fill it (black or white; empty = an empty bowl).
    pub contents: Stone,
    /// Colour of the bowl's wood or plastic (sRGB 0–255).
    pub rgb: [u8; 3],
}

impl Default for Bowl {
    fn default() -> Self {
        Self { centre_mm: [330.0, 120.0], radius_mm: 65.0, height_mm: 75.0, contents: Stone::BLACK, rgb: [150, 96, 52] }
    }
}

impl Bowl {
    /// The usual pair: black bowl right of the board, white bowl left, level with row `row_mm`.
    pub fn pair(row_mm: f64) -> [Bowl; 2] {
        [
            Bowl { centre_mm: [335.0, row_mm], contents: Stone::BLACK, ..Bowl::default() },
            Bowl { centre_mm: [-335.0, -row_mm], contents: Stone::WHITE, ..Bowl::default() },
        ]
    }
}

/// Something lying or standing on the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Prop {
    /// A score sheet or game record: paper printed with a ruled table.
    Sheet {
        /// Centre on the table, world millimetres.
        centre_mm: [f64; 2],
        /// Width and length in millimetres (A4: 210 × 297).
        size_mm: [f64; 2],
        /// Rotation about the vertical, degrees.
        angle_deg: f64,
    },
    /// A game clock: a box with two displays on its slanted front.
    Clock {
        /// Centre on the table, world millimetres.
        centre_mm: [f64; 2],
        /// Rotation about the vertical, degrees (0 = displays facing +y).
        angle_deg: f64,
        /// Colour of the case (sRGB 0–255).
        rgb: [u8; 3],
    },
    /// A single stone lying on the table (captured, dropped).
    Stone {
        /// Centre on the table, world millimetres.
        centre_mm: [f64; 2],
        /// Its colour (`Empty` draws nothing).
        stone: Stone,
    },
}

/// Another board on the same table, as in a tournament hall's rows of games.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NeighbourBoard {
    /// Centre relative to our board's centre, world millimetres (a board is about 430 × 460).
    pub centre_mm: [f64; 2],
    /// Rotation about the vertical, degrees.
    pub angle_deg: f64,
    /// Stones on it: a game-like position of this many stones.
    pub stones: usize,
    /// Seed of its position and wood.
    pub seed: u64,
}

impl Default for NeighbourBoard {
    fn default() -> Self {
        Self { centre_mm: [520.0, 0.0], angle_deg: 0.0, stones: 120, seed: 1 }
    }
}

/// A side of the board as seen in the diagram: where an arm comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The top edge (row 0, "19").
    North,
    /// The right edge (column 18, "T").
    East,
    /// The bottom edge (row 18, "1").
    South,
    /// The left edge (column 0, "A").
    West,
}

impl Side {
    /// Parses `north`/`n`, `east`/`e`, `south`/`s`, `west`/`w`.
    pub fn parse(text: &str) -> Option<Self> {
        match text.to_ascii_lowercase().as_str() {
            "north" | "n" | "top" => Some(Side::North),
            "east" | "e" | "right" => Some(Side::East),
            "south" | "s" | "bottom" => Some(Side::South),
            "west" | "w" | "left" => Some(Side::West),
            _ => None,
        }
    }
}

/// A hand with its forearm reaching over the board from one side, fingertips at `target`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Hand {
    /// The side the arm comes from (where the player sits).
    pub side: Side,
    /// Fingertip position in board coordinates (column, row; 0..=18 on the grid, may lie outside
    /// it, e.g. −3 for a hand just off the board).
    pub target: [f64; 2],
    /// Where along `side` the arm crosses the edge, as a board coordinate (column for
    /// north/south, row for east/west); `None` = straight in.
    pub along: Option<f64>,
    /// Fingertip height above the board in millimetres.
    pub lift_mm: f64,
    /// Skin colour (sRGB 0–255).
    pub skin_rgb: [u8; 3],
    /// Sleeve colour (sRGB 0–255).
    pub sleeve_rgb: [u8; 3],
    /// A stone held between the fingertips, if any.
    pub holding: Option<Stone>,
    /// How far the hand moves while the shutter is open, in world millimetres (x toward column
    /// T, y toward row 1, z up): motion blur. Zero = still. A hand moving at 0.5 m/s under a
    /// 1/30 s exposure moves about 17 mm.
    pub motion_mm: [f64; 3],
}

impl Default for Hand {
    fn default() -> Self {
        Self {
            side: Side::South,
            target: [9.0, 12.0],
            along: None,
            lift_mm: 20.0,
            skin_rgb: SKIN_TONES[1],
            sleeve_rgb: [40, 52, 90],
            holding: None,
            motion_mm: [0.0; 3],
        }
    }
}

/// A few skin tones (sRGB), light to dark.
pub const SKIN_TONES: [[u8; 3]; 4] = [[236, 194, 164], [214, 160, 124], [170, 118, 82], [102, 68, 48]];

impl Hand {
    /// A hand from `side` placing a stone at (`col`, `row`): `progress` 0 = fingertips at the
    /// board edge, 1 = over the target point.
    pub fn placing(side: Side, col: f64, row: f64, progress: f64, holding: Option<Stone>) -> Hand {
        let last = (BOARD_LINES - 1) as f64;
        let progress = progress.clamp(0.0, 1.0);
        // The fingertips start just outside the grid on the player's side.
        let start = match side {
            Side::North => [col, -1.5],
            Side::South => [col, last + 1.5],
            Side::West => [-1.5, row],
            Side::East => [last + 1.5, row],
        };
        let target = [start[0] + (col - start[0]) * progress, start[1] + (row - start[1]) * progress];
        Hand { side, target, holding, ..Hand::default() }
    }

    /// A hand from `side` reaching `reach` of the way across the board (0 = edge, 1 = far edge)
    /// at `along` (0–18).
    pub fn reaching(side: Side, along: f64, reach: f64) -> Hand {
        let last = (BOARD_LINES - 1) as f64;
        let depth = reach.clamp(-0.3, 1.2) * last;
        let target = match side {
            Side::North => [along, depth],
            Side::South => [along, last - depth],
            Side::West => [depth, along],
            Side::East => [last - depth, along],
        };
        Hand { side, target, ..Hand::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_exists_and_round_trips_through_json() {
        for name in PRESETS {
            let scene = Scene::preset(name).unwrap_or_else(|| panic!("preset {name}"));
            let json = serde_json::to_string(&scene).unwrap_or_default();
            let back: Scene = serde_json::from_str(&json).unwrap_or_default();
            assert_eq!(back, scene, "{name}");
        }
        assert!(Scene::preset("nonsense").is_none());
        // Random scenes are deterministic and varied.
        assert_eq!(Scene::random(5), Scene::random(5));
        assert_ne!(Scene::random(5), Scene::random(6));
        let hands = (0..100).filter(|&s| !Scene::random(s).hands.is_empty()).count();
        assert!((15..60).contains(&hands), "{hands} of 100 random scenes have a hand");
        // Missing fields take defaults.
        let partial: Scene = serde_json::from_str(r#"{"width": 320, "height": 240}"#).unwrap_or_default();
        assert_eq!((partial.width, partial.height, partial.seed), (320, 240, 1));
    }
}
