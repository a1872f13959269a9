//! Occlusion: decide whether a hand, arm, sleeve or object covers part of the board, and which
//! points it makes unreliable. Stones sit on intersections and never cover the centre of a cell
//! (the gap between four intersections), so a connected patch of cell centres that are not board
//! coloured — large, or entering from the edge — is something else lying over the board.

use std::collections::VecDeque;

use crate::features::{BoardColour, CELLS};
use crate::geometry::BOARD_LINES;

/// Tuning of the occlusion detector.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OcclusionConfig {
    /// A cell centre further than this from the board colour (in units of the bare-board
    /// tolerance) is foreign.
    pub foreign_distance: f32,
    /// Smallest patch of foreign cells (inside the board) that counts as an occluder; smaller
    /// patches are stray stones knocked between points, crumbs or glare spots.
    pub min_cells: usize,
    /// A patch touching the board's outer margin counts from this size (arms enter from an edge).
    pub min_edge_cells: usize,
}

impl Default for OcclusionConfig {
    fn default() -> Self {
        Self { foreign_distance: 2.0, min_cells: 4, min_edge_cells: 2 }
    }
}

/// The occluders found in one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct OcclusionMask {
    /// Cells (index `j * CELLS + i`, cell centre at board position (i − 0.5, j − 0.5)) covered.
    pub cells: Vec<bool>,
    /// Points made unreliable, `[row][col]`.
    pub points: [[bool; BOARD_LINES]; BOARD_LINES],
    /// Whether anything covers the board.
    pub occluded: bool,
}

/// Finds occluders from the cell-centre colours of a frame.
pub fn detect(colour: &BoardColour, config: &OcclusionConfig) -> OcclusionMask {
    let foreign: Vec<bool> = colour.distance.iter().map(|d| !(*d <= config.foreign_distance)).collect();
    let mut seen = vec![false; CELLS * CELLS];
    let mut cells = vec![false; CELLS * CELLS];
    let mut queue = VecDeque::new();
    let mut component = Vec::new();
    for start in 0..CELLS * CELLS {
        if !foreign[start] || seen[start] {
            continue;
        }
        component.clear();
        seen[start] = true;
        queue.push_back(start);
        let mut touches_edge = false;
        while let Some(k) = queue.pop_front() {
            component.push(k);
            let (i, j) = (k % CELLS, k / CELLS);
            if i == 0 || j == 0 || i == CELLS - 1 || j == CELLS - 1 {
                touches_edge = true;
            }
            // 8-connected: a forearm crosses cells diagonally.
            for dj in -1i64..=1 {
                for di in -1i64..=1 {
                    let (ni, nj) = (i as i64 + di, j as i64 + dj);
                    if ni < 0 || nj < 0 || ni >= CELLS as i64 || nj >= CELLS as i64 {
                        continue;
                    }
                    let n = nj as usize * CELLS + ni as usize;
                    if foreign[n] && !seen[n] {
                        seen[n] = true;
                        queue.push_back(n);
                    }
                }
            }
        }
        let big = component.len() >= config.min_cells || (touches_edge && component.len() >= config.min_edge_cells);
        if big {
            for &k in &component {
                cells[k] = true;
            }
        }
    }
    let mut points = [[false; BOARD_LINES]; BOARD_LINES];
    for (row, line) in points.iter_mut().enumerate() {
        for (col, p) in line.iter_mut().enumerate() {
            // The four cells around intersection (col,row) are i in col..=col+1, j in row..=row+1.
            *p = (row..=row + 1).any(|j| (col..=col + 1).any(|i| cells[j * CELLS + i]));
        }
    }
    let occluded = cells.iter().any(|c| *c);
    OcclusionMask { cells, points, occluded }
}
