//! Deterministic randomness: a seeded generator and smooth value noise for textures.
//!
//! Our own small generator (SplitMix64) rather than `rand`, so a seed gives the same frame on
//! every platform and every future version of the crate's dependencies.

/// SplitMix64: tiny, fast, and good enough for scene variation.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed` (any value, including 0).
    pub fn new(seed: u64) -> Self {
        Self(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    /// A generator for an independent stream derived from this seed and a label.
    pub fn derive(seed: u64, label: u64) -> Self {
        Self::new(hash2(seed, label))
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.unit().max(1e-12);
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Hash of two integers to 64 bits.
pub fn hash2(a: u64, b: u64) -> u64 {
    mix(a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ mix(b.wrapping_add(0x632B_E59B_D9B4_E019)))
}

fn lattice(seed: u64, ix: i64, iy: i64) -> f32 {
    let h = hash2(hash2(seed, ix as u64), iy as u64);
    (h >> 40) as f32 / (1u64 << 24) as f32
}

#[inline(always)]
fn smooth(t: f32) -> f32 {
    t * t * (3.0 - 2.0 * t)
}

/// Smooth 2D value noise in [0, 1] with unit lattice spacing.
pub fn value2(seed: u64, x: f32, y: f32) -> f32 {
    let (fx, fy) = (x.floor(), y.floor());
    let (ix, iy) = (fx as i64, fy as i64);
    let (tx, ty) = (smooth(x - fx), smooth(y - fy));
    let a = lattice(seed, ix, iy);
    let b = lattice(seed, ix + 1, iy);
    let c = lattice(seed, ix, iy + 1);
    let d = lattice(seed, ix + 1, iy + 1);
    let top = a + (b - a) * tx;
    let bottom = c + (d - c) * tx;
    top + (bottom - top) * ty
}

/// `len` random lattice values in [0, 1) for `seed`: the table behind [`Noise1`] and [`Noise2`].
fn random_table(seed: u64, len: usize) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    (0..len).map(|_| rng.unit() as f32).collect()
}

/// Smooth 1D value noise in [0, 1] from a precomputed table (cheap enough for every sample).
#[derive(Debug, Clone)]
pub struct Noise1 {
    table: Vec<f32>,
}

impl Noise1 {
    const SIZE: usize = 1024;

    /// A table of random lattice values for `seed`.
    pub fn new(seed: u64) -> Self {
        Self { table: random_table(seed, Self::SIZE) }
    }

    /// Noise at `x` (lattice spacing 1, period 1024).
    #[inline(always)]
    pub fn at(&self, x: f32) -> f32 {
        let fx = x.floor();
        let i = (fx as i64).rem_euclid(Self::SIZE as i64) as usize;
        let j = (i + 1) % Self::SIZE;
        let t = smooth(x - fx);
        self.table[i] + (self.table[j] - self.table[i]) * t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_is_deterministic_and_uniformish() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let xs: Vec<f64> = (0..1000).map(|_| a.unit()).collect();
        let ys: Vec<f64> = (0..1000).map(|_| b.unit()).collect();
        assert_eq!(xs, ys);
        let mean = xs.iter().sum::<f64>() / 1000.0;
        assert!((mean - 0.5).abs() < 0.05, "mean {mean}");
        assert!(xs.iter().all(|x| (0.0..1.0).contains(x)));
    }

    #[test]
    fn value_noise_is_bounded_and_continuous() {
        for i in 0..500 {
            let x = i as f32 * 0.173;
            let v = value2(3, x, x * 0.7);
            assert!((0.0..=1.0).contains(&v));
            let w = value2(3, x + 1e-3, x * 0.7);
            assert!((v - w).abs() < 0.01);
        }
    }
}

/// Smooth 2D value noise in [0, 1] from a precomputed 256×256 table (period 256), much cheaper
/// than hashing per sample.
#[derive(Debug, Clone)]
pub struct Noise2 {
    table: Vec<f32>,
}

impl Noise2 {
    const SIZE: usize = 256;

    /// A table of random lattice values for `seed`.
    pub fn new(seed: u64) -> Self {
        Self { table: random_table(seed, Self::SIZE * Self::SIZE) }
    }

    /// Noise at (x, y), lattice spacing 1.
    #[inline(always)]
    pub fn at(&self, x: f32, y: f32) -> f32 {
        let (fx, fy) = (x.floor(), y.floor());
        let mask = Self::SIZE as i64 - 1;
        let ix = (fx as i64 & mask) as usize;
        let iy = (fy as i64 & mask) as usize;
        let ix1 = (ix + 1) & mask as usize;
        let iy1 = (iy + 1) & mask as usize;
        let (tx, ty) = (smooth(x - fx), smooth(y - fy));
        let t = &self.table;
        let a = t[iy * Self::SIZE + ix];
        let b = t[iy * Self::SIZE + ix1];
        let c = t[iy1 * Self::SIZE + ix];
        let d = t[iy1 * Self::SIZE + ix1];
        let top = a + (b - a) * tx;
        let bottom = c + (d - c) * tx;
        top + (bottom - top) * ty
    }
}
