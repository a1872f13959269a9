//! Zobrist keys, generated at compile time so hashes are identical in every run and process.

use crate::board::CELLS;

const fn splitmix64(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const fn make_keys(salt: u64) -> [u64; CELLS] {
    let mut keys = [0u64; CELLS];
    let mut i = 0;
    while i < CELLS {
        keys[i] = splitmix64(salt.wrapping_mul(0x1000_0000_01B3).wrapping_add(i as u64));
        i += 1;
    }
    keys
}

/// Key of a black stone on each cell index.
pub(crate) static BLACK_KEYS: [u64; CELLS] = make_keys(0xB1AC);
/// Key of a white stone on each cell index.
pub(crate) static WHITE_KEYS: [u64; CELLS] = make_keys(0x3417E);
/// Mixed into a position key when White is to move (situational keys).
pub(crate) const WHITE_TO_MOVE: u64 = splitmix64(0x70_40_7E);
