//! Surface colours (albedo) of the board's playing surface and of the table: wood grain, bamboo
//! strips, flat vinyl and printed paper; cloth, wooden and laminate tables. Pure functions of a
//! world point, seeded per scene.

use crate::hand::srgb;
use crate::noise::{hash2, Noise1, Noise2, Rng};
use crate::scene::{BoardMaterial, TableTexture};

/// Wood with straight grain along y: late-wood lines, streaks and blotches.
pub(crate) struct Wood {
    base: [f32; 3],
    grain: f32,
    warp: Noise1,
    rings: Noise1,
    streak: Noise1,
    blotch: Noise2,
}

impl Wood {
    pub(crate) fn new(rgb: [u8; 3], grain: f32, seed: u64) -> Self {
        let mut rng = Rng::derive(seed, 11);
        // Each board a slightly different piece of wood.
        let shade = rng.range(0.94, 1.04) as f32;
        let base = srgb(rgb).map(|c| (c * shade).min(1.0));
        Self {
            base,
            grain,
            warp: Noise1::new(rng.next_u64()),
            rings: Noise1::new(rng.next_u64()),
            streak: Noise1::new(rng.next_u64()),
            blotch: Noise2::new(rng.next_u64()),
        }
    }

    /// Albedo of the board top at world (x, y) mm. Straight grain along y with slow waviness.
    pub(crate) fn albedo(&self, x: f64, y: f64) -> [f32; 3] {
        let (x, y) = (x as f32, y as f32);
        let u = x + 9.0 * self.warp.at(y * 0.004) + 3.0 * self.warp.at(y * 0.013 + 300.0);
        let ring = (u * 0.33 + 4.0 * self.rings.at(u * 0.02)).rem_euclid(1.0);
        // Late-wood lines: thin, darker, sharp on one side.
        let line = (1.0 - (ring * 6.0).min(1.0)).powi(2);
        let streak = self.streak.at(u * 0.05);
        let blotch = self.blotch.at(x * 0.012 + 128.0, y * 0.004 + 128.0);
        let darken = self.grain * (0.10 * line + 0.08 * streak + 0.06 * blotch);
        [self.base[0] * (1.0 - darken), self.base[1] * (1.0 - darken * 1.15), self.base[2] * (1.0 - darken * 1.4)]
    }
}

/// Width of one laminated bamboo strip, and the spacing of the nodes along it (millimetres).
const BAMBOO_STRIP_MM: f64 = 19.0;
const BAMBOO_NODE_MM: f64 = 260.0;

/// Laminated bamboo: strips along y, each a slightly different shade, thin dark glue seams
/// between them, fine fibres along the strip and a darker node every so often.
pub(crate) struct Bamboo {
    base: [f32; 3],
    grain: f32,
    seed: u64,
    fibre: Noise2,
}

impl Bamboo {
    fn albedo(&self, x: f64, y: f64) -> [f32; 3] {
        let s = x / BAMBOO_STRIP_MM;
        let strip = s.floor() as i64;
        let across = (s - s.floor()) as f32;
        let h = hash2(self.seed, strip as u64);
        let shade = 0.93 + 0.1 * ((h & 0xFFFF) as f32 / 65535.0);
        // Nodes sit at a different place along each strip.
        let offset = ((h >> 16) & 0xFFFF) as f64 / 65535.0 * BAMBOO_NODE_MM;
        let along = (y + offset).rem_euclid(BAMBOO_NODE_MM);
        let node = (1.0 - (along - 6.0).abs() / 6.0).max(0.0) as f32;
        let seam = (1.0 - across.min(1.0 - across) / 0.04).max(0.0);
        let fibre = self.fibre.at((x * 1.5) as f32, (y * 0.03) as f32);
        let darken = self.grain * (0.12 * seam + 0.1 * node + 0.06 * fibre);
        [
            self.base[0] * shade * (1.0 - darken),
            self.base[1] * shade * (1.0 - darken * 1.1),
            self.base[2] * shade * (1.0 - darken * 1.3),
        ]
    }
}

/// A flat sheet (vinyl, plastic or printed paper): near-uniform colour with faint mottling and,
/// for paper, the fold lines of a board that is kept folded in four.
pub(crate) struct Sheet {
    base: [f32; 3],
    grain: f32,
    folds: bool,
    mottle: Noise2,
}

impl Sheet {
    fn albedo(&self, x: f64, y: f64) -> [f32; 3] {
        let mottle = self.mottle.at((x * 0.03) as f32, (y * 0.03) as f32) - 0.5;
        let mut k = 1.0 + 0.04 * self.grain * mottle;
        if self.folds {
            // A crease catches light on one side and shades the other.
            for d in [x, y] {
                let t = (d / 2.5) as f32;
                if t.abs() < 1.0 {
                    k *= 1.0 - 0.08 * t;
                }
            }
        }
        self.base.map(|c| (c * k).min(1.0))
    }
}

/// The playing surface's material, ready to sample.
pub(crate) enum BoardSurface {
    /// Solid wood.
    Wood(Wood),
    /// Laminated bamboo strips.
    Bamboo(Bamboo),
    /// Vinyl, plastic or paper.
    Sheet(Sheet),
}

impl BoardSurface {
    pub(crate) fn new(material: BoardMaterial, rgb: [u8; 3], grain: f32, seed: u64) -> Self {
        match material {
            BoardMaterial::Wood => BoardSurface::Wood(Wood::new(rgb, grain, seed)),
            BoardMaterial::Bamboo => BoardSurface::Bamboo(Bamboo {
                base: srgb(rgb),
                grain,
                seed: hash2(seed, 0xBA3B),
                fibre: Noise2::new(hash2(seed, 0xF1B)),
            }),
            BoardMaterial::Vinyl | BoardMaterial::Paper => BoardSurface::Sheet(Sheet {
                base: srgb(rgb),
                grain,
                folds: material == BoardMaterial::Paper,
                mottle: Noise2::new(hash2(seed, 0x5EE7)),
            }),
        }
    }

    /// Albedo of the playing surface at world (x, y) mm, before the grid is drawn.
    #[inline]
    pub(crate) fn albedo(&self, x: f64, y: f64) -> [f32; 3] {
        match self {
            BoardSurface::Wood(w) => w.albedo(x, y),
            BoardSurface::Bamboo(b) => b.albedo(x, y),
            BoardSurface::Sheet(s) => s.albedo(x, y),
        }
    }

    /// Albedo of the board's vertical side: end grain for wood, the same material otherwise.
    pub(crate) fn side_albedo(&self, along: f64, z: f64) -> [f32; 3] {
        match self {
            BoardSurface::Wood(w) => w.albedo(along, z * 3.0).map(|a| a * 0.78),
            BoardSurface::Bamboo(b) => b.albedo(z * 4.0, along).map(|a| a * 0.8),
            BoardSurface::Sheet(s) => s.base.map(|a| a * 0.8),
        }
    }
}

/// The table top's texture, ready to sample.
pub(crate) struct Table {
    rgb: [f32; 3],
    texture: TableTexture,
    wood: Wood,
}

impl Table {
    pub(crate) fn new(rgb: [u8; 3], texture: TableTexture, seed: u64) -> Self {
        Self { rgb: srgb(rgb), texture, wood: Wood::new(rgb, 1.4, hash2(seed, 0x7AB1E)) }
    }

    /// Albedo of the table at world (x, y) mm; `cloth` is the scene's cloth noise.
    #[inline]
    pub(crate) fn albedo(&self, x: f64, y: f64, cloth: &Noise2) -> [f32; 3] {
        match self.texture {
            TableTexture::Cloth => {
                let n1 = cloth.at((x * 0.02) as f32 + 30.0, (y * 0.02) as f32);
                let n2 = cloth.at((x * 0.6) as f32, (y * 0.6) as f32 + 90.0);
                self.rgb.map(|a| a * (0.9 + 0.12 * n1 + 0.06 * n2))
            }
            // Table wood: the grain runs across the board, wider and bolder than a board's.
            TableTexture::Wood => self.wood.albedo(y * 0.7, x * 0.7),
            TableTexture::Laminate => {
                let n = cloth.at((x * 0.05) as f32 + 51.0, (y * 0.05) as f32 + 17.0);
                self.rgb.map(|a| a * (0.97 + 0.05 * n))
            }
        }
    }
}
